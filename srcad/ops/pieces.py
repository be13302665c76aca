"""Ops that copy or broadcast their arrays into a tuple of arrays (np.broadcast_arrays,
np.meshgrid, np.unstack), assemble nested lists of them (np.block), or insert values
(np.insert). Family "shape".

Each is linear in its arrays: the VJP is a helper of srcad/runtime_pieces.py (the cotangent
of output i summed back into input i) and the JVP the op applied to the tangents; each helper
is a row whose VJP is its transpose, so these differentiate again. A tuple output's
cotangent comes as ``g[i]`` per output (0.0 where nothing flowed: zeros of that output).
"""

import numpy as np

from .. import runtime_pieces as rp
from ..runtime_pieces import (
    block_pieces,
    broadcast_each,
    meshgrid_each,
    reinsert_arr,
    reinsert_values,
    restack,
    unblock,
    unbroadcast_each,
    uninsert_arr,
    uninsert_values,
    unmeshgrid,
    unstack_each,
)
from .table import Param, defjvp, defvjp

_F = "shape"
_RT = "runtime"

defvjp(np.broadcast_arrays, lambda g, out, args, subok=False: unbroadcast_each(g, args), None,
       params=(Param("args", star=True), Param("subok", False)),
       spelling="np.broadcast_arrays(*args, subok)", name="broadcast_arrays", family=_F,
       derivation="output i is input i broadcast to the common shape: its cotangent summed over "
       "the broadcast axes (broadcast_to's rule, per input)",
       test_cases=(("np.stack(np.broadcast_arrays(a, b))", [(3, 1), (4,)]),
                   ("np.broadcast_arrays(a, b, c)[1] * np.broadcast_arrays(a, b, c)[2]",
                    [(2, 1, 3), (4, 1), ()]),
                   ("np.broadcast_arrays(a)[0]", [(2, 3)])))
defjvp(np.broadcast_arrays, lambda g, out, args, subok=False: broadcast_each(g, args), None)

defvjp(np.meshgrid,
       lambda g, out, xi, copy=True, sparse=False, indexing="xy":
           unmeshgrid(g, xi, sparse, indexing), None, None, None,
       params=(Param("xi", star=True), Param("copy", True), Param("sparse", False),
               Param("indexing", "xy")),
       spelling="np.meshgrid(*xi, copy, sparse, indexing)", name="meshgrid", family=_F,
       derivation="output i holds ravel(x_i) along its axis ('xy': the first two swapped), "
       "broadcast along the others unless sparse: its cotangent summed over the others",
       test_cases=(("np.stack(np.meshgrid(a, b))", [(3,), (4,)]),
                   ("np.meshgrid(a, b, indexing='ij')[0] * np.meshgrid(a, b, indexing='ij')[1]",
                    [(3,), (2,)]),
                   ("np.meshgrid(a, b, c)[2] ** 2", [(2,), (3,), (2,)]),
                   ("np.meshgrid(a, b, sparse=True)[0] * np.meshgrid(a, b, sparse=True)[1]",
                    [(3,), (2, 2)]),
                   ("np.meshgrid(a)[0]", [(4,)])))
defjvp(np.meshgrid,
       lambda g, out, xi, copy=True, sparse=False, indexing="xy":
           meshgrid_each(g, xi, sparse, indexing), None, None, None)

defvjp(np.block, lambda g, out, arrays: unblock(g, arrays),
       name="block", family=_F, sequences=("arrays",),
       derivation="nested concatenations (the innermost list along the last axis, each level "
       "out one axis further left; leaves given leading ones): g split back the same way",
       test_cases=(("np.block([a, b])", [(2,), (3,)]),
                   ("np.block([[a, b], [c, np.zeros((1, 2))]])", [(2, 3), (2, 2), (1, 3)]),
                   ("np.block([[a], [b]])", [(3,), (3,)]),
                   ("np.block([[a, 1.0], [b, c]])", [(1, 2), (2, 2), (2, 1)]),
                   ("np.block([[[a, b]], [[b, a]]])", [(2, 1), (2, 2)])))
defjvp(np.block, lambda g, out, arrays: block_pieces(g, arrays))

defvjp(np.insert, lambda g, out, arr, obj, values, axis=None:
       uninsert_arr(g, arr, obj, values, axis), None,
       lambda g, out, arr, obj, values, axis=None: uninsert_values(g, arr, obj, values, axis),
       None, name="insert", family=_F,
       derivation="arr's elements and the values (broadcast to the inserted block) copied into "
       "place: each gets g where it went, summed over its copies",
       test_cases=(("np.insert(a, 1, b)", [(4,), ()]),
                   ("np.insert(a, [0, 2, 2], b)", [(3,), (3,)]),
                   ("np.insert(a, 1, b, axis=0)", [(2, 3), (3,)]),
                   ("np.insert(a, [1, 0], b, axis=1)", [(2, 3), (2, 1)]),
                   ("np.insert(a, slice(0, 2), 2.0, axis=1)", [(2, 3)]),
                   ("np.insert(a, 2, b)", [(2, 2), (2,)])))
defjvp(np.insert, lambda g, out, arr, obj, values, axis=None:
       reinsert_arr(g, arr, obj, values, axis), None,
       lambda g, out, arr, obj, values, axis=None: reinsert_values(g, arr, obj, values, axis),
       None)

if getattr(np, "unstack", None) is not None:  # (numpy 2.1)
    defvjp(np.unstack, lambda g, out, x, axis=0: restack(g, x, axis), None,
           name="np_unstack", linear=("x",), family=_F,
           derivation="the slices along axis: their cotangents stacked back (np.stack)",
           test_cases=(("np.stack(np.unstack(a))", [(3, 2)]),
                       ("np.unstack(a, axis=1)[0] * np.unstack(a, axis=1)[2]", [(2, 3)]),
                       ("np.unstack(a, axis=-1)[1]", [(2, 2, 3)])))

# --- the helpers as rows: each linear in its first argument, the other's transpose ----------
defvjp(rp.unbroadcast_each, lambda g, out, ct, xs: broadcast_each(g, xs), None,
       name="unbroadcast_each", linear=("ct",), family=_RT,
       derivation="broadcast_arrays' VJP; its transpose broadcasts each piece")
defvjp(rp.broadcast_each, lambda g, out, ct, xs: unbroadcast_each(g, xs), None,
       name="broadcast_each", linear=("ct",), family=_RT,
       derivation="broadcast_arrays' JVP; its transpose sums over the broadcast axes")
defvjp(rp.unmeshgrid, lambda g, out, ct, xs, sparse=False, indexing="xy":
       meshgrid_each(g, xs, sparse, indexing), None, None, None,
       name="unmeshgrid", linear=("ct",), family=_RT,
       derivation="meshgrid's VJP; its transpose is meshgrid of the pieces")
defvjp(rp.meshgrid_each, lambda g, out, ct, xs, sparse=False, indexing="xy":
       unmeshgrid(g, xs, sparse, indexing), None, None, None,
       name="meshgrid_each", linear=("ct",), family=_RT,
       derivation="meshgrid of the pieces; its transpose sums each over the other axes")
defvjp(rp.restack, lambda g, out, ct, x, axis=0: unstack_each(g, x, axis), None, None,
       name="restack", linear=("ct",), family=_RT,
       derivation="unstack's VJP (a stack); its transpose takes the slices")
defvjp(rp.unstack_each, lambda g, out, ct, x, axis=0: restack(g, x, axis), None, None,
       name="unstack_each", linear=("ct",), family=_RT,
       derivation="the slices of ct; its transpose stacks them")
defvjp(rp.unblock, lambda g, out, ct, arrays: block_pieces(g, arrays), None,
       name="unblock", linear=("ct",), family=_RT,
       derivation="block's VJP (a split per level); its transpose is np.block of the pieces")
defvjp(rp.block_pieces, lambda g, out, ct, arrays: unblock(g, arrays), None,
       name="block_pieces", linear=("ct",), family=_RT,
       derivation="np.block of the pieces; its transpose splits")
defvjp(rp.uninsert_arr, lambda g, out, ct, arr, obj, values, axis=None:
       reinsert_arr(g, arr, obj, values, axis), None, None, None, None,
       name="uninsert_arr", linear=("ct",), family=_RT,
       derivation="insert's VJP in arr (a gather); its transpose puts g back in place")
defvjp(rp.reinsert_arr, lambda g, out, ct, arr, obj, values, axis=None:
       uninsert_arr(g, arr, obj, values, axis), None, None, None, None,
       name="reinsert_arr", linear=("ct",), family=_RT,
       derivation="ct where arr's elements go; its transpose gathers them")
defvjp(rp.uninsert_values, lambda g, out, ct, arr, obj, values, axis=None:
       reinsert_values(g, arr, obj, values, axis), None, None, None, None,
       name="uninsert_values", linear=("ct",), family=_RT,
       derivation="insert's VJP in values (a scatter-add); its transpose inserts g")
defvjp(rp.reinsert_values, lambda g, out, ct, arr, obj, values, axis=None:
       uninsert_values(g, arr, obj, values, axis), None, None, None, None,
       name="reinsert_values", linear=("ct",), family=_RT,
       derivation="ct at the inserted places; its transpose sums it back into values")
