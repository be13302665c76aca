"""Array ops: triangles, traces and diagonals, padding, flips and rolls, sorting, gathers
(take, take_along_axis), splits, atleast_nd, tiles and repeats, moveaxis, linspace.

Every op here but sort is linear in its array argument (forward mode applies the op to the
tangent); sort is linear once its permutation is fixed, which is how its rules read. Their
backward moves or sums ``g`` back to the input's layout, through the helpers in
srcad/runtime_arrays.py where numpy has no one-call inverse (``undiagonal``, ``unsort``,
``untake``, ``unsplit``, ``untile``, ``unrepeat``).
"""

import numpy as np

from ..runtime import (
    unasarray,
    flatten,
    hsplit_axis,
    permute_like,
    rolled_to,
    select_default_grad,
    select_default_jvp,
    unappend,
    undiff,
    rediff,
    unjoin,
    unpermute,
    unselect,
    diag_grad,
    opposite,
    pad_tangent,
    pad_value_grad,
    sort_like,
    unbroadcast,
    undiagonal,
    unpad,
    unrepeat,
    unsort,
    unsplit,
    untake,
    untake_along_axis,
    untile,
)
from .table import Param, defjvp, defvjp

_F = "array"
_T = (2, 3, 4)

# --- triangles, traces, diagonals -------------------------------------------------------------
def _triangle_cases(name):
    return ((f"np.{name}(a)", [(3, 4)]), (f"np.{name}(a, -1)", [(4, 3)]),
            (f"np.{name}(a, k=1)", [(3, 3)]), (f"np.{name}(a)", [(2, 3, 3)]),
            (f"np.{name}(a, 1)", [(4,)]), (f"a * np.{name}(np.ones((3, 3)))", [(3, 3)]))


_TRIANGLE = ("a mask: g keeps the same triangle (a 1-D m is broadcast over rows first, so g "
             "is summed back over them)")
defvjp(np.tril, lambda g, out, m, k=0: unbroadcast(np.tril(g, k), m),
       name="tril", linear=("m",), family=_F, derivation=_TRIANGLE,
       test_cases=_triangle_cases("tril"))
defvjp(np.triu, lambda g, out, m, k=0: unbroadcast(np.triu(g, k), m),
       name="triu", linear=("m",), family=_F, derivation=_TRIANGLE,
       test_cases=_triangle_cases("triu"))
defvjp(np.trace,
       lambda g, out, a, offset=0, axis1=0, axis2=1:
           undiagonal(np.expand_dims(g, -1), a, offset, axis1, axis2),
       name="trace", linear=("a",), family=_F,
       derivation="a sum along a diagonal: g goes back onto that diagonal",
       test_cases=(("np.trace(a)", [(3, 3)]), ("np.trace(a)", [(3, 4)]),
                   ("np.trace(a, 1)", [(4, 3)]), ("np.trace(a, offset=-1)", [(3, 3)]),
                   ("np.trace(a, axis1=1, axis2=2)", [(2, 3, 3)]),
                   ("np.trace(a, 0, 2, 0)", [(3, 2, 3)]), ("a.trace()", [(3, 3)]),
                   ("a.trace(1)", [(3, 4)])))
defvjp(np.diagonal,
       lambda g, out, a, offset=0, axis1=0, axis2=1: undiagonal(g, a, offset, axis1, axis2),
       name="diagonal", linear=("a",), family=_F, view=True,
       derivation="a gather of one diagonal: g goes back onto it",
       test_cases=(("np.diagonal(a)", [(3, 4)]), ("np.diagonal(a, 1)", [(3, 4)]),
                   ("np.diagonal(a, offset=-2)", [(4, 3)]),
                   ("np.diagonal(a, axis1=-1, axis2=-2)", [(2, 3, 3)]),
                   ("np.diagonal(a, 0, 2, 1)", [(2, 3, 4)]), ("a.diagonal()", [(3, 3)])))
defvjp(np.diag, lambda g, out, v, k=0: diag_grad(g, v, k),
       name="diag", linear=("v",), family=_F, view=True,
       derivation="1-D v: placed on the k-th diagonal, so g's k-th diagonal comes back; "
       "2-D v: its k-th diagonal taken, so g goes back onto it",
       test_cases=(("np.diag(a)", [(3,)]), ("np.diag(a, 1)", [(3,)]),
                   ("np.diag(a, k=-2)", [(2,)]), ("np.diag(a)", [(3, 4)]),
                   ("np.diag(a, -1)", [(4, 3)]), ("np.diag(a, 2)", [(3, 3)])))

# --- padding, flips, rolls --------------------------------------------------------------------
defvjp(np.pad,
       lambda g, out, array, pad_width, mode="constant", constant_values=0, stat_length=None,
       end_values=0: unpad(g, array, pad_width, mode, stat_length),
       None, None,
       lambda g, out, array, pad_width, mode="constant", constant_values=0, stat_length=None,
       end_values=0: pad_value_grad(g, array, pad_width, mode, constant_values),
       name="pad", family=_F, no_rule_for=("end_values",),
       derivation="constant mode: g's middle goes back to the array, its border to a scalar "
       "constant_values; edge, reflect, symmetric and wrap copy elements into the border: "
       "each cell's g added to the element it copies; mean, maximum, minimum and median "
       "make the border from a window (stat_length) along each axis in turn: g to the "
       "window's cells by the statistic's derivative (ties split evenly), axis by axis "
       "backward; linear_ramp: to the edge cell by the ramp's weights (empty: refused)",
       test_cases=(("np.pad(a, 1)", [(3, 4)]), ("np.pad(a, (1, 2))", [(3,)]),
                   ("np.pad(a, ((1, 0), (2, 1)))", [(2, 3)]), ("np.pad(a, ((0, 2),))", [(2, 3)]),
                   ("np.pad(a, [[1, 1], [0, 2]])", [(2, 3)]),
                   ("np.pad(a, 2, mode='constant', constant_values=1.5)", [(2,)]),
                   ("np.pad(a, 1, constant_values=b)", [(2, 3), ()]),
                   ("np.pad(a, (0, 1), 'constant')", [(3,)]),
                   ("np.pad(a, 1, mode='edge')", [(3, 4)]),
                   ("np.pad(a, ((1, 2), (2, 1)), mode='reflect')", [(3, 4)]),
                   ("np.pad(a, (2, 3), 'symmetric')", [(3,)]),
                   ("np.pad(a, ((4, 1), (0, 2)), mode='wrap')", [(2, 3)]),
                   ("np.pad(a, (3, 1), 'symmetric')", [(2,)]),
                   ("np.pad(a, ((0, 0), (5, 2)), mode='wrap')", [(2, 3)]),
                   ("np.pad(a, ((1, 0), (2, 1), (0, 2)), mode='reflect')", [(2, 3, 4)]),
                   ("np.pad(a, 2, mode='mean')", [(3, 4)]),
                   ("np.pad(a, ((1, 2), (2, 1)), mode='maximum', stat_length=2)", [(3, 4)]),
                   ("np.pad(a, (2, 1), 'minimum')", [(5,)]),
                   ("np.pad(a, ((1, 0), (2, 1), (0, 2)), mode='median')", [(2, 3, 4)]),
                   ("np.pad(a, ((2, 1), (1, 3)), mode='mean', stat_length=((1, 2), (3, 2)))",
                    [(4, 5)]),
                   ("np.pad(a, 2, mode='linear_ramp', end_values=0.5)", [(3, 4)]),
                   ("np.pad(a, (3, 2), mode='linear_ramp')", [(4,)])))
defjvp(np.pad,
       lambda g, out, array, pad_width, mode="constant", constant_values=0, stat_length=None,
       end_values=0: pad_tangent(g, pad_width, mode, array, stat_length),
       None, None,
       lambda g, out, array, pad_width, mode="constant", constant_values=0, stat_length=None,
       end_values=0: np.pad(np.zeros_like(array), pad_width, mode, constant_values=g))
defvjp(np.flip, lambda g, out, m, axis=None: np.flip(g, axis),
       name="flip", linear=("m",), family=_F, view=True,
       derivation="flipping twice is the identity",
       test_cases=(("np.flip(a)", [(3, 4)]), ("np.flip(a, 0)", [(3, 4)]),
                   ("np.flip(a, axis=-1)", [_T]), ("np.flip(a, (0, 2))", [_T])))
defvjp(np.fliplr, lambda g, out, m: np.fliplr(g), name="fliplr", linear=("m",), family=_F,
       view=True, derivation="flipping twice is the identity",
       test_cases=(("np.fliplr(a)", [(3, 4)]),))
defvjp(np.flipud, lambda g, out, m: np.flipud(g), name="flipud", linear=("m",), family=_F,
       view=True, derivation="flipping twice is the identity",
       test_cases=(("np.flipud(a)", [(3, 4)]),))
defvjp(np.roll, lambda g, out, a, shift, axis=None: np.roll(g, opposite(shift), axis),
       name="roll", linear=("a",), family=_F,
       derivation="roll back by the opposite shift",
       test_cases=(("np.roll(a, 1)", [(5,)]), ("np.roll(a, -2, axis=1)", [(3, 4)]),
                   ("np.roll(a, 5)", [(3, 4)]), ("np.roll(a, (1, 2), axis=(0, 1))", [(3, 4)]),
                   ("np.roll(a, 2, 0)", [(3, 4)])))

# --- sorting and gathers ----------------------------------------------------------------------
defvjp(np.sort, lambda g, out, a, axis=-1, kind=None: unsort(g, a, axis),
       name="sort", family=_F,
       derivation="a permutation of a (stable argsort): g goes back through its inverse (with "
       "ties, to one of the tied inputs: a subgradient)",
       test_cases=(("np.sort(a)", [(5,)]), ("np.sort(a, axis=0)", [(3, 4)]),
                   ("np.sort(a, axis=None)", [(3, 4)]), ("np.sort(a, -1)", [_T]),
                   ("np.sort(a, kind='stable')", [(4,)])))
defjvp(np.sort, lambda g, out, a, axis=-1, kind=None: sort_like(g, a, axis))
defvjp(np.take_along_axis,
       lambda g, out, arr, indices, axis=-1: untake_along_axis(g, arr, indices, axis),
       name="take_along_axis", linear=("arr",), family=_F,
       derivation="a gather: scatter-add g back at the indices",
       test_cases=(("np.take_along_axis(a, np.argsort(a, axis=1), axis=1)", [(3, 4)]),
                   ("np.take_along_axis(a, np.reshape(np.arange(3)[::-1], (3, 1)), 1)", [(3, 4)]),
                   ("np.take_along_axis(a, np.arange(3)[None, :] // 2, axis=1)", [(3, 4)]),
                   ("np.take_along_axis(a, np.arange(2)[None, ::-1] * 2, axis=0)", [(3, 2)]),
                   ("np.take_along_axis(a, np.arange(4) // 2 * 5, None)", [(3, 4)]),
                   ("np.take_along_axis(a, np.arange(2)[::-1, None], -1)", [(2, 3)])))
# --- arrays from lists ------------------------------------------------------------------------
_ASARRAY = ("numpy stacks a (nested) list's items along new leading axes: item i's cotangent "
            "is g[i], in its own dtype; an array passes through")
_LIST_CASES = (("np.{f}([a, b])", [(3,), (3,)]), ("np.{f}((a, 2.0 * b, a))", [(2, 3), (2, 3)]),
               ("np.{f}([[a, b], [b, a]])", [(), ()]), ("np.{f}(a)", [(3, 4)]),
               ("np.{f}([a, b], dtype=np.float64)", [(2,), (2,)]))
defvjp(np.asarray, lambda g, out, a, dtype=None: unasarray(g, a),
       name="asarray", sequences=("a",), linear=("a",), family=_F, view=True, derivation=_ASARRAY,
       test_cases=tuple((s.format(f="asarray"), sh) for s, sh in _LIST_CASES))
defvjp(np.array, lambda g, out, object, dtype=None, copy=True, order="K", ndmin=0:
           unasarray(np.reshape(g, np.shape(object)) if ndmin else g, object),
       name="array", sequences=("object",), linear=("object",), family=_F,
       derivation=_ASARRAY + " (a copy; `ndmin=`'s leading axes of length 1 dropped again, "
       "`order=` lays out the memory only)",
       test_cases=tuple((s.format(f="array"), sh) for s, sh in _LIST_CASES)
       + (("np.array(a, copy=True)", [(3,)]), ("np.array(a, ndmin=3)", [(2, 3)]),
          ("np.array([a, b], ndmin=3)", [(2,), (2,)]), ("np.array(a.T, order='F')", [(2, 3)]),
          ("np.array(a, dtype=np.float64, copy=True, order='C', ndmin=2)", [(3,)])))

defvjp(np.take, lambda g, out, a, indices, axis=None, mode="raise":
       untake(g, a, indices, axis, mode),
       name="take", linear=("a",), family=_F,
       derivation="a gather: scatter-add g back at the indices (flat for axis=None; mode= "
       "'wrap' / 'clip' as numpy reads them)",
       test_cases=(("np.take(a, [0, 2, 2])", [(5,)]),
                   ("np.take(a, [[0, 1], [3, 3]], axis=1)", [(3, 4)]),
                   ("np.take(a, 1, axis=0)", [(3, 4)]), ("np.take(a, [-1, 0], axis=-1)", [(2, 3)]),
                   ("np.take(a, 7)", [(3, 4)]), ("a.take([0, 0], axis=1)", [(3, 4)]),
                   ("np.take(a, [0, 5, -7, 2], mode='wrap')", [(4,)]),
                   ("np.take(a, [[0, 9], [-3, 1]], axis=1, mode='clip')", [(2, 3)])))

# --- splits -----------------------------------------------------------------------------------
for _fn, _name in ((np.split, "split"), (np.array_split, "array_split")):
    defvjp(_fn,
           lambda g, out, ary, indices_or_sections, axis=0:
               unsplit(g, ary, indices_or_sections, axis),
           name=_name, linear=("ary",), family=_F,
           derivation="a list of pieces: their cotangents concatenated back (zeros for a "
           "piece nothing flowed into)",
           test_cases=((f"np.{_name}(a, 2)[1]", [(4, 3)]),
                       (f"np.stack(np.{_name}(a, 3, axis=1))", [(2, 6)]),
                       (f"np.{_name}(a, [1, 3])[0] * np.{_name}(a, [1, 3])[2]", [(5,)]),
                       (f"np.concatenate(np.{_name}(a, 2, axis=-1), axis=0)", [(3, 4)]),
                       (f"np.{_name}(a, [2], axis=1)[1]", [(2, 3)]))
           + (((f"np.{_name}(a, 3)[2]", [(7,)]), (f"np.{_name}(a, [1, 5])[1]", [(3,)]))
              if _name == "array_split" else ()))

# --- shapes: atleast_nd, tile, repeat, moveaxis -----------------------------------------------
_ATLEAST = {1: [(), (3,), (2, 3)], 2: [(), (3,), (2, 3)], 3: [(), (3,), (2, 3), _T]}
for _n, _fn in ((1, np.atleast_1d), (2, np.atleast_2d), (3, np.atleast_3d)):
    defvjp(_fn, lambda g, out, a: np.reshape(g, np.shape(a)), params=(Param("a"),),
           name=f"atleast_{_n}d", linear=("a",), family=_F, view=True,
           spelling=f"np.atleast_{_n}d(a)",
           derivation="a reshape (axes of length 1 added): reshape back",
           test_cases=tuple((f"np.atleast_{_n}d(a)", [s]) for s in _ATLEAST[_n]))
defvjp(np.tile, lambda g, out, A, reps: untile(g, A, reps),
       name="tile", linear=("A",), family=_F,
       derivation="copies of A: each element's copies summed back into it",
       test_cases=(("np.tile(a, 2)", [(3,)]), ("np.tile(a, (2, 1))", [(3,)]),
                   ("np.tile(a, (2, 3))", [(2, 2)]), ("np.tile(a, (2, 1, 1))", [(2, 3)]),
                   ("np.tile(a, 3)", [()]), ("np.tile(a, 2)", [(2, 3)])))
defvjp(np.repeat, lambda g, out, a, repeats, axis=None: unrepeat(g, a, repeats, axis),
       name="repeat", linear=("a",), family=_F,
       derivation="copies of each element: summed back into it",
       test_cases=(("np.repeat(a, 2)", [(2, 3)]), ("np.repeat(a, 3, axis=1)", [(2, 3)]),
                   ("np.repeat(a, [1, 0, 2], axis=0)", [(3, 2)]),
                   ("np.repeat(a, np.arange(2) + 1, axis=-1)", [(3, 2)]),
                   ("a.repeat(2, axis=0)", [(2, 3)]), ("np.repeat(a, 3)", [()])))
defvjp(np.moveaxis, lambda g, out, a, source, destination: np.moveaxis(g, destination, source),
       name="moveaxis", linear=("a",), family=_F, view=True,
       derivation="move the axes back",
       test_cases=(("np.moveaxis(a, 0, -1)", [_T]), ("np.moveaxis(a, [0, 1], [-1, -2])", [_T]),
                   ("np.moveaxis(a, -1, 0)", [_T])))

# --- linspace of differentiated endpoints -----------------------------------------------------
defvjp(np.linspace,
       lambda g, out, start, stop, num=50, endpoint=True:
           unbroadcast(np.tensordot(np.linspace(1.0, 0.0, num, endpoint=endpoint), g, 1), start),
       lambda g, out, start, stop, num=50, endpoint=True:
           unbroadcast(np.tensordot(np.linspace(0.0, 1.0, num, endpoint=endpoint), g, 1), stop),
       name="linspace", family=_F,
       derivation="out_i = start + (stop - start) t_i, t_i = i / (num - 1) (i / num without "
       "the endpoint): d start = sum_i (1 - t_i) g_i, d stop = sum_i t_i g_i",
       test_cases=(("np.linspace(a, b, 5)", [(), ()]),
                   ("np.linspace(a, b, 4, endpoint=False)", [(3,), (3,)]),
                   ("np.linspace(0.0, a, 3)", [(2,)]), ("np.linspace(a, 2.0, num=6)", [()]),
                   ("np.linspace(a, b, 1)", [(2,), (2,)]),
                   ("np.linspace(a, b, 3)", [(2, 1), (3,)])))
defjvp(np.linspace,
       lambda g, out, start, stop, num=50, endpoint=True:
           np.linspace(g, 0 * stop, num, endpoint=endpoint),
       lambda g, out, start, stop, num=50, endpoint=True:
           np.linspace(0 * start, g, num, endpoint=endpoint))

# --- more of autograd's surface: diff, partition, rollaxis, rot90, splits and stacks, select,
# append, flatten -----------------------------------------------------------------------------
defvjp(np.diff,
       lambda g, out, a, n=1, axis=-1, prepend=None, append=None:
           undiff(g, a, n, axis, prepend, append),
       None, None,
       lambda g, out, a, n=1, axis=-1, prepend=None, append=None:
           undiff(g, a, n, axis, prepend, append, "prepend"),
       lambda g, out, a, n=1, axis=-1, prepend=None, append=None:
           undiff(g, a, n, axis, prepend, append, "append"),
       name="diff", family=_F,
       derivation="differences of a joined to prepend= and append= (linear in the three): "
       "the transpose of one difference is minus the difference of g padded with zeros at "
       "both ends (n times), each part its slice (a 0-d prepend / append, broadcast by "
       "numpy, the sum of its)",
       test_cases=(("np.diff(a)", [(5,)]), ("np.diff(a, 2)", [(5, 5)]),
                   ("np.diff(a, axis=0)", [(5, 5)]), ("np.diff(a, n=2, axis=1)", [(2, 5, 5)]),
                   ("np.diff(a, axis=0)", [(1,)]),
                   ("np.diff(a, prepend=0.5)", [(5,)]),
                   ("np.diff(a, append=b, axis=0)", [(3, 4), (1, 4)]),
                   ("np.diff(a, 2, prepend=b, append=c)", [(2, 5), (2, 1), (2, 2)]),
                   ("np.diff(a, prepend=b[0], append=b[1], axis=1)", [(3, 4), (2,)])))
defjvp(np.diff,
       lambda g, out, a, n=1, axis=-1, prepend=None, append=None:
           rediff(g, a, n, axis, prepend, append),
       None, None,
       lambda g, out, a, n=1, axis=-1, prepend=None, append=None:
           rediff(g, a, n, axis, prepend, append, "prepend"),
       lambda g, out, a, n=1, axis=-1, prepend=None, append=None:
           rediff(g, a, n, axis, prepend, append, "append"))
defvjp(np.partition, lambda g, out, a, kth, axis=-1: unpermute(g, out, a, axis),
       name="partition", family=_F,
       derivation="a permutation of a: each g goes to the element whose value it holds "
       "(matched by rank, whatever order the op left the other elements in)",
       test_cases=(("np.partition(a, 3)", [(7,)]), ("np.partition(a, (0, 6))", [(7,)]),
                   ("np.partition(a, 1, axis=0)", [(4, 3)]),
                   ("np.partition(a, 2, axis=None)", [(2, 3)])))
defjvp(np.partition, lambda g, out, a, kth, axis=-1: permute_like(g, out, a, axis))
defvjp(np.rollaxis,
       lambda g, out, a, axis, start=0: np.moveaxis(g, rolled_to(np.ndim(a), axis, start), axis),
       name="rollaxis", linear=("a",), family=_F, view=True,
       derivation="an axis moved: move it back",
       test_cases=(("np.rollaxis(a, 2)", [_T]), ("np.rollaxis(a, 0, 3)", [_T]),
                   ("np.rollaxis(a, 1, 0)", [_T]), ("np.rollaxis(a, -1, 1)", [_T])))
defvjp(np.rot90, lambda g, out, m, k=1, axes=(0, 1): np.rot90(g, -k, axes),
       name="rot90", linear=("m",), family=_F, view=True,
       derivation="a rotation: rotate back",
       test_cases=(("np.rot90(a)", [(3, 4)]), ("np.rot90(a, 2)", [(3, 4)]),
                   ("np.rot90(a, -1, axes=(1, 2))", [_T])))
for _fn, _name, _axis in ((np.vsplit, "vsplit", "0"), (np.dsplit, "dsplit", "2")):
    defvjp(_fn, (lambda g, out, ary, indices_or_sections: unsplit(g, ary, indices_or_sections, 0))
           if _name == "vsplit" else
           (lambda g, out, ary, indices_or_sections: unsplit(g, ary, indices_or_sections, 2)),
           name=_name, linear=("ary",), family=_F,
           derivation=f"np.split along axis {_axis}: the pieces' cotangents concatenated back",
           test_cases=((f"np.{_name}(a, 2)[1]", [(4, 4, 4)]),
                       (f"np.{_name}(a, [1, 2])[2]", [(4, 4, 4)] if _name == "dsplit"
                        else [(4, 8)])))
defvjp(np.hsplit,
       lambda g, out, ary, indices_or_sections:
           unsplit(g, ary, indices_or_sections, hsplit_axis(np.ndim(ary))),
       name="hsplit", linear=("ary",), family=_F,
       derivation="np.split along axis 1 (axis 0 for 1-D): the pieces' cotangents concatenated",
       test_cases=(("np.hsplit(a, 4)[1]", [(4, 8)]), ("np.hsplit(a, [1, 2])[0]", [(4, 4, 4)]),
                   ("np.hsplit(a, 2)[1]", [(6,)])))
_STACKS = {
    "vstack": (("np.vstack([a, b])", [(3,), (3,)]), ("np.vstack((a, b))", [(2, 3), (1, 3)]),
               ("np.vstack([a, 2.0 * a])", [(2, 3, 4)]), ("np.vstack(a)", [(2, 3)])),
    "hstack": (("np.hstack([a, b])", [(2,), (3,)]), ("np.hstack((a, b))", [(3, 2), (3, 4)]),
               ("np.hstack([a, b])", [(2, 1, 4), (2, 5, 4)]), ("np.hstack(a)", [(3, 2, 2)])),
    "dstack": (("np.dstack([a, b])", [(3,), (3,)]), ("np.dstack((a, b))", [(2, 3), (2, 3)])),
    "column_stack": (("np.column_stack([a, b])", [(3,), (3,)]),
                     ("np.column_stack((a, b))", [(3, 2), (3,)])),
}
_JOIN = ("the items (as at least 1-, 2- or 3-D) concatenated: g split back at their "
         "boundaries and reshaped to each item")
defvjp(np.vstack, lambda g, out, tup, dtype=None, casting="same_kind": unjoin(g, tup, "vstack"),
       name="vstack", linear=("tup",), sequences=("tup",),
       family=_F, derivation=_JOIN, test_cases=_STACKS["vstack"],
       aliases=(np.row_stack,) if hasattr(np, "row_stack") else ())
defvjp(np.hstack, lambda g, out, tup, dtype=None, casting="same_kind": unjoin(g, tup, "hstack"),
       name="hstack", linear=("tup",), sequences=("tup",),
       family=_F, derivation=_JOIN, test_cases=_STACKS["hstack"])
defvjp(np.dstack, lambda g, out, tup: unjoin(g, tup, "dstack"), name="dstack", linear=("tup",), sequences=("tup",),
       family=_F, derivation=_JOIN, test_cases=_STACKS["dstack"])
defvjp(np.column_stack, lambda g, out, tup: unjoin(g, tup, "column_stack"),
       name="column_stack", linear=("tup",), sequences=("tup",), family=_F, derivation=_JOIN,
       test_cases=_STACKS["column_stack"])
defvjp(np.select, None,
       lambda g, out, condlist, choicelist, default=0: unselect(g, condlist, choicelist),
       lambda g, out, condlist, choicelist, default=0:
           select_default_grad(g, condlist, default),
       name="select", family=_F, sequences=("condlist", "choicelist"),
       derivation="g flows to the choice whose condition is the first to hold, else to default",
       test_cases=(("np.select([a > 0.5, a < -0.5], [a * b, b])", [(3, 4), (3, 4)]),
                   ("np.select([a > 0], [b], default=c)", [(3, 4), (4,), ()]),
                   ("np.select((a > 1.0, a > 0.0), (a, 2.0 * a), 0.5)", [(5,)])))
defjvp(np.select, None,  # (jointly linear in the choices and the default: one term each)
       lambda g, out, condlist, choicelist, default=0: np.select(condlist, g),
       lambda g, out, condlist, choicelist, default=0: select_default_jvp(g, condlist, out))
defvjp(np.append,
       lambda g, out, arr, values, axis=None: unappend(g, arr, values, axis, 0),
       lambda g, out, arr, values, axis=None: unappend(g, arr, values, axis, 1),
       name="append", family=_F,
       derivation="a concatenation (of the flattened inputs for axis=None): each gets its "
       "slice of g back",
       test_cases=(("np.append(a, b)", [(3,), ()]), ("np.append(a, b)", [(2, 2), (3,)]),
                   ("np.append(a, b, axis=0)", [(2, 3), (1, 3)]),
                   ("np.append(a, b, axis=1)", [(2, 3), (2, 2)])))
defjvp(np.append,  # (jointly linear: each argument's tangent beside zeros for the other)
       lambda g, out, arr, values, axis=None: np.append(g, np.zeros_like(values), axis),
       lambda g, out, arr, values, axis=None: np.append(np.zeros_like(arr), g, axis))
defvjp(flatten, lambda g, out, a, order="C": np.reshape(g, np.shape(a), order=order),
       name="flatten", spelling="a.flatten(order)", linear=("a",), family=_F,
       derivation="a flattened copy: reshape back, in the same index order",
       test_cases=(("a.flatten()", [_T]), ("a.flatten('F')", [_T]),
                   ("a.flatten(order='F')", [(3, 4)])))
