"""Shape ops: transpose, swapaxes, reshape, ravel, expand_dims, squeeze, broadcast_to,
concatenate, stack, indexing (basic and integer-array gathers) and astype.

Each backward moves ``g`` back to the input's layout; none of them does arithmetic except
the two that sum (`broadcast_to` over its broadcast axes, gathers over repeated indices).
"""

import operator

import numpy as np

from ..runtime import (
    astype,
    astype_shared,
    set_tangent_value,
    set_tangent_x,
    setitem,
    setitem_grad_x,
    write_through,
    view_again,
    is_view_of,
    follows_base,
    item_again,
    takes_written,
    writes_through,
    held_at,
    zeros_grad,
    alias_again,
    in_layout,
    inverse_permutation,
    unbroadcast,
    unconcatenate,
    unindex,
    unstack,
    last_writes,
)
from .table import Param, defjvp, defnondiff, defvjp

_T = (2, 3, 4)

defvjp(np.transpose,
       lambda g, out, a, axes=None: np.transpose(g, inverse_permutation(axes, np.ndim(a))),
       name="transpose", linear=('a',), family="shape", view=True,
       derivation="transpose back with the inverse permutation",
       test_cases=(("np.transpose(a)", [_T]), ("np.transpose(a, (1, 0, 2))", [_T]),
                   ("np.transpose(a, axes=(2, 0, 1))", [_T]), ("np.transpose(a, (0, -1, 1))", [_T]),
                   ("a.T", [(3, 4)]), ("a.T", [_T]), ("a.transpose(1, 2, 0)", [_T]),
                   ("a.transpose((2, 1, 0))", [_T]), ("a.transpose()", [(3, 4)]),
                   ("np.transpose(a)", [(4,)]), ("np.permute_dims(a, (1, 0))", [(3, 4)])))
defvjp(np.swapaxes, lambda g, out, a, axis1, axis2: np.swapaxes(g, axis1, axis2),
       name="swapaxes", linear=('a',), family="shape", view=True,
       derivation="swapping twice is the identity",
       test_cases=(("np.swapaxes(a, 0, 2)", [_T]), ("np.swapaxes(a, -1, 0)", [_T]),
                   ("a.swapaxes(1, 2)", [_T]), ("np.swapaxes(a, 1, 1)", [(3, 4)])))
defvjp(np.reshape,
       lambda g, out, a, shape, order="C": np.reshape(g, np.shape(a), order=order),
       name="reshape", linear=('a',), family="shape", view=True,
       derivation="reshape back to the input's shape, in the same index order",
       test_cases=(("np.reshape(a, (4, 6))", [_T]), ("np.reshape(a, (-1,))", [_T]),
                   ("np.reshape(a, (2, 1, 3, 4))", [_T]), ("a.reshape(6, 4)", [_T]),
                   ("a.reshape((3, -1))", [(3, 4)]), ("np.reshape(a, (1, 1))", [()]),
                   ("np.reshape(a, ())", [(1,)]),
                   ("np.reshape(a, (4, 6), order='F')", [_T]),
                   ("a.reshape((3, 4), order='F')", [(4, 3)]),
                   ("a.reshape(2, 6, order='C')", [(3, 4)])))
defvjp(np.ravel, lambda g, out, a, order="C": np.reshape(g, np.shape(a), order=order),
       name="ravel", linear=('a',), family="shape", view=True,
       derivation="reshape back to the input's shape, in the same index order",
       test_cases=(("np.ravel(a)", [_T]), ("np.ravel(a.T)", [(3, 4)]),
                   ("np.ravel(a, order='F')", [_T]), ("a.ravel('F')", [(3, 4)])))
defvjp(np.copy, lambda g, out, a, order="K": g,
       name="array_copy", linear=('a',), family="shape",
       derivation="a copy: the adjoint passes through (`order` only lays out the memory: "
       "np.copy keeps the input's, `x.copy()` makes C order, as numpy's)",
       test_cases=(("np.copy(a)", [_T]), ("a.copy()", [(3, 4)]), ("a.T.copy()", [(3, 4)]),
                   ("np.copy(a.T, order='C')", [(3, 4)])))
defvjp(np.expand_dims, lambda g, out, a, axis: np.reshape(g, np.shape(a)),
       name="expand_dims", linear=('a',), family="shape", view=True,
       derivation="reshape back to the input's shape",
       test_cases=(("np.expand_dims(a, 0)", [(3, 4)]), ("np.expand_dims(a, axis=-1)", [(3, 4)]),
                   ("np.expand_dims(a, (0, 2))", [(3, 4)]), ("np.expand_dims(a, -1)", [()])))
defvjp(np.squeeze, lambda g, out, a, axis=None: np.reshape(g, np.shape(a)),
       name="squeeze", linear=('a',), family="shape", view=True,
       derivation="reshape back to the input's shape",
       test_cases=(("np.squeeze(a)", [(1, 3, 1)]), ("np.squeeze(a, axis=0)", [(1, 3, 4)]),
                   ("np.squeeze(a, -1)", [(3, 1)]), ("np.squeeze(a, (0, 2))", [(1, 3, 1)]),
                   ("a.squeeze()", [(3, 1)]), ("np.squeeze(a)", [(1,)])))
defvjp(np.broadcast_to, lambda g, out, array, shape: unbroadcast(g, array),
       name="broadcast_to", linear=('array',), family="shape", view=True, c_row="broadcast",
       derivation="the backward of a broadcast is a sum over the broadcast axes",
       test_cases=(("np.broadcast_to(a, (2, 3, 4))", [(3, 1)]),
                   ("np.broadcast_to(a, (3, 4))", [()]),
                   ("np.broadcast_to(a, (2, 3, 4))", [_T]),
                   ("np.broadcast_to(a, (2, 3, 4))", [(2, 1, 4)]),
                   ("np.broadcast_to(a, shape=(5, 4))", [(4,)])))
defvjp(np.concatenate, lambda g, out, arrays, axis=0, dtype=None:
           unconcatenate(g, arrays, axis),
       name="concatenate", sequences=("arrays",), linear=('arrays',), family="shape",
       derivation="split g at the input boundaries",
       test_cases=(("np.concatenate((a, b))", [(2, 3), (4, 3)]),
                   ("np.concatenate([a, b, c], axis=1)", [(2, 1), (2, 3), (2, 2)]),
                   ("np.concatenate((a, b), axis=-1)", [(2, 3, 1), (2, 3, 4)]),
                   ("np.concatenate((a, b, c), 2)", [(2, 3, 1), (2, 3, 2), (2, 3, 3)]),
                   ("np.concatenate((a, b), axis=None)", [(2, 3), (4,)]),
                   ("np.concatenate((a, a, b))", [(2, 3), (1, 3)]),
                   ("np.concatenate((a, 2.0 * b, np.tanh(a)), 0)", [(2,), (3,)]),
                   ("np.concatenate((a, np.zeros((2, 3))), axis=0)", [(1, 3)]),
                   ("np.concat((a, b), axis=1)", [(2, 3), (2, 2)]),
                   ("np.concatenate((a, b), dtype=np.float64)", [(2,), (3,)]),
                   ("np.concatenate([a, b], axis=1, dtype=np.float64)", [(2, 1), (2, 3)])))
defvjp(np.stack, lambda g, out, arrays, axis=0, dtype=None: unstack(g, arrays, axis),
       name="stack", sequences=("arrays",), linear=('arrays',), family="shape",
       derivation="take each input's slice of g along the new axis",
       test_cases=(("np.stack((a, b))", [(3,), (3,)]),
                   ("np.stack([a, b, c], axis=1)", [(2, 3)] * 3),
                   ("np.stack((a, b), axis=-1)", [(2, 3)] * 2),
                   ("np.stack((a, b, a), 2)", [(2, 3)] * 2),
                   ("np.stack((a, b))", [(), ()]),
                   ("np.stack((a, a * b), axis=-2)", [(2, 3, 4)] * 2),
                   ("np.stack([a, b], axis=1, dtype=np.float64)", [(2, 3)] * 2)))
defvjp(operator.getitem, lambda g, out, a, index: unindex(g, a, index),
       name="getitem", linear=('a',), spelling="a[index]", family="shape", view=True,
       derivation="scatter-add g into zeros at the index (repeated gathers accumulate)",
       test_cases=(("a[1]", [(3, 4)]), ("a[-1]", [(3, 4)]), ("a[1, 2]", [(3, 4)]),
                   ("a[-1, -2]", [_T]), ("a[1:]", [(3, 4)]), ("a[1:, ::2]", [(3, 4)]),
                   ("a[::-1]", [(3, 4)]), ("a[-2:, 1:-1]", [(3, 4)]), ("a[::-2, 3:0:-2]", [(3, 4)]),
                   ("a[None]", [(3, 4)]), ("a[:, None, 1]", [(3, 4)]), ("a[..., 1]", [_T]),
                   ("a[0, ...]", [_T]), ("a[..., None, 1:3]", [_T]), ("a[1][2]", [(3, 4)]),
                   ("a[[0, 0, 2]]", [(3, 4)]), ("a[[2, 0, 2], 1:]", [(3, 4)]),
                   ("a[:, [1, 1, 3, 0]]", [(3, 4)]), ("a[[0, 1, 1], [3, 3, 0]]", [(3, 4)]),
                   ("a[[-1, -1]]", [(3,)]), ("a[[[0, 1], [1, 1]]]", [(3, 2)]),
                   ("a[np.arange(3)]", [(4, 2)]), ("a[a > 0]", [(3, 4)]),
                   ("a[1:, [0, 0]] * b[0]", [(3, 4), (2, 2)])))
defvjp(astype, lambda g, out, x, dtype: np.asarray(g).astype(np.result_type(x)),
       name="astype", linear=('x',), spelling="x.astype(dtype)", family="shape",
       c="x", c_kinds="bifu",
       derivation="cast the gradient back to the input's dtype",
       test_cases=(("a.astype(np.float64)", [(3, 4)]), ("a.astype(float)", [(3,)]),
                   # rounds to float32 on the way, so float64 finite differences see 1e-7
                   ("a.astype(np.float32)", [(3, 4)], None, False, {"float64": 2e-3})))


defvjp(astype_shared, lambda g, out, x, dtype: np.asarray(g).astype(np.result_type(x)),
       name="astype_shared", linear=('x',), spelling="x.astype(dtype, copy=False)",
       family="shape", view=True,
       derivation="cast the gradient back to the input's dtype",
       test_cases=(("a.astype(np.float64, copy=False)", [(3, 4)]),))


# --- subscript assignment: x[index] = value as a value (copy on write) -----------------------
defvjp(setitem,
       lambda g, out, x, index, value: setitem_grad_x(g, index),
       None,
       lambda g, out, x, index, value: unbroadcast(last_writes(g[index], g, index), value),
       name="setitem", spelling="setitem(x, index, value)", family="shape",
       test_cases=(("OP(a, 1, b)", [(3, 4), (4,)]),
                   ("OP(a, np.s_[:, 1:3], b)", [(3, 4), (3, 2)]),
                   ("OP(a, np.s_[0], b)", [(3, 4), ()]),
                   ("OP(a, a > 0, 0.0)", [(3, 4)]),
                   ("OP(a, np.array([1, 0, 1, 3]), b)", [(5,), (4,)]),
                   ("OP(a, (np.array([0, 2, 0]), np.array([1, 1, 1])), b)", [(3, 2), (3,)]),
                   # a dict or a list: a new one with that item (runtime_python.container_set)
                   ("OP({'u': a, 'v': b}, 'v', a * b)['v'] * OP({'u': a}, 'w', b)['u']",
                    [(3,), (3,)]),
                   ("OP({-1: a}, 0, b * a)[0] + OP({-1: a}, -1, b)[-1]", [(3,), (3,)]),
                   ("OP([a, b], -1, a * b)[1] * OP([a, b], 0, b)[1]", [(3,), (3,)])),
       derivation="out = x except at index, where it is value: g flows to x outside the "
       "index and to value (summed over broadcasting) inside it; where an integer index "
       "repeats a position, only the last write there (numpy's) gets g")
defjvp(setitem,
       lambda g, out, x, index, value: set_tangent_x(g, index, out),
       None,
       lambda g, out, x, index, value: set_tangent_value(g, index, out))
defvjp(write_through,
       lambda g, out, x, index, value, view, stored=False:
           setitem_grad_x(g, held_at(x, index, view))
           if writes_through(x, index, view, stored) else g,
       None,
       lambda g, out, x, index, value, view, stored=False: (
           unbroadcast(g[held_at(x, index, view)], value)
           if writes_through(x, index, view, stored) else zeros_grad(value)),
       None,
       None,
       name="write_through", spelling="write_through(x, index, value, view, stored)",
       family="shape",
       test_cases=(("OP(a, 1, b, a[1])", [(3, 4), (4,)]),
                   ("OP(a, (1, 2), b, a[1, 2])", [(3, 4), ()]),
                   ("OP(a, 0, b, a[0])", [(3,), ()])),
       derivation="a write into x[index] when that index gave a view (an array), none when "
       "it gave a scalar copy: as setitem, or the identity (a list or dict holding the "
       "written object in several slots: each of them, `held_at`; `stored`, the item's own "
       "`x[index] op= t`: a number item's slot is stored into too)")
defvjp(view_again,
       lambda g, out, x, index, view:
           unindex(g, x, index) if follows_base(x, index, view) else zeros_grad(x),
       None,
       lambda g, out, x, index, view:
           np.zeros_like(view) if follows_base(x, index, view) else g,
       name="view_again", spelling="view_again(x, index, view)", family="shape",
       test_cases=(("OP(a, 1, b)", [(3, 4), (4,)]),
                   ("OP(a, (1, 2), b)", [(3, 4), ()])),
       derivation="the view made again from its base, or the container's item written in "
       "place since (g flows to x at index), or the scalar copy or container item kept (g "
       "flows to it)")
defnondiff(follows_base, name="follows_base",
           params=(Param("x"), Param("index"), Param("view")), family="shape",
           spelling="follows_base(x, index, view)",
           test_cases=(("a * OP(b, 1, b[1])", [(3,), (2, 3)]),))  # (a bool: view_again's)
defnondiff(is_view_of, name="is_view_of", params=(Param("x"), Param("view")), family="shape",
           spelling="is_view_of(x, view)",
           test_cases=(("a * OP(b, b[1])", [(3,), (2, 3)]),))  # (a bool: view_again's choice)
defvjp(item_again,
       lambda g, out, x, index, view, old, new:
           unindex(g, x, index) if not takes_written(x, view, old) and
           follows_base(x, index, view) else zeros_grad(x),
       None,
       lambda g, out, x, index, view, old, new:
           zeros_grad(view) if takes_written(x, view, old) or follows_base(x, index, view)
           else g,
       None,
       lambda g, out, x, index, view, old, new:
           g if takes_written(x, view, old) else zeros_grad(new),
       name="item_again", spelling="item_again(x, index, view, old, new)", family="shape",
       test_cases=(("OP(a, 1, b, b, c)", [(3, 4), (4,), (4,)]),
                   ("OP(a, (1, 2), b, b, c)", [(3, 4), (), ()])),
       derivation="view_again, except that a container's item that is the object written "
       "through another name becomes the written one (g flows to it)")
defnondiff(writes_through, name="writes_through",
           params=(Param("x"), Param("index"), Param("view")), family="shape",
           spelling="writes_through(x, index, view)",
           test_cases=(("a * OP(b, 1, b[1])", [(3,), (2, 3)]),))  # (a bool)
defnondiff(held_at, name="held_at", params=(Param("x"), Param("index"), Param("view")),
           family="shape", spelling="held_at(x, index, view)",
           test_cases=(("a * OP(b, 1, b[1])", [(3,), (2, 3)]),))  # (write_through's slots)
defnondiff(takes_written, name="takes_written",
           params=(Param("x"), Param("view"), Param("old")), family="shape",
           spelling="takes_written(x, view, old)",
           test_cases=(("a * OP(b, b[1], b[1])", [(3,), (2, 3)]),))  # (a bool)
defvjp(alias_again,
       lambda g, out, new, old: g if isinstance(old, np.ndarray) else np.zeros_like(new),
       lambda g, out, new, old: np.zeros_like(old) if isinstance(old, np.ndarray) else g,
       name="alias_again", spelling="alias_again(new, old)", family="shape",
       test_cases=(("OP(a, b)", [(3, 4), (3, 4)]),),
       derivation="an alias of an array written in place is the new array (g flows to "
       "it); of a scalar, its old value")
defvjp(in_layout,
       lambda g, out, new, like: g,
       None,
       name="in_layout", spelling="in_layout(new, like)", family="shape",
       test_cases=(("OP(a, b)", [(3, 4), (3, 4)]), ("OP(a, b.T)", [(4, 3), (3, 4)])),
       derivation="the same values in another memory layout (`v op= t` keeps v's): g "
       "flows to them; `like` only gives the layout")
defjvp(in_layout,
       lambda g, out, new, like: g,
       None)
defjvp(alias_again,
       lambda g, out, new, old: g if isinstance(old, np.ndarray) else np.zeros_like(out),
       lambda g, out, new, old: np.zeros_like(out) if isinstance(old, np.ndarray) else g)
defjvp(item_again,
       lambda g, out, x, index, view, old, new:
           g[index] if not takes_written(x, view, old) and follows_base(x, index, view)
           else zeros_grad(out),
       None,
       lambda g, out, x, index, view, old, new:
           zeros_grad(out) if takes_written(x, view, old) or follows_base(x, index, view)
           else g,
       None,
       lambda g, out, x, index, view, old, new:
           g if takes_written(x, view, old) else zeros_grad(out))
defjvp(view_again,
       lambda g, out, x, index, view:
           g[index] if follows_base(x, index, view) else np.zeros_like(out),
       None,
       lambda g, out, x, index, view:
           np.zeros_like(out) if follows_base(x, index, view) else g)
defjvp(write_through,  # (setitem's where it writes, into an array or a list or dict; a
       # scalar copy's value reaches nothing: zeros, of x's kind, to add to g)
       lambda g, out, x, index, value, view, stored=False: (
           set_tangent_x(g, held_at(x, index, view), out)
           if writes_through(x, index, view, stored) else g),
       None,
       lambda g, out, x, index, value, view, stored=False: set_tangent_value(
           g if writes_through(x, index, view, stored) else zeros_grad(value),
           held_at(x, index, view), out),
       None,
       None)
