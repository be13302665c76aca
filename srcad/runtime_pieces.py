"""Helpers of the rows whose output is a tuple of arrays made by copying or broadcasting their
inputs (np.broadcast_arrays, np.meshgrid, np.unstack), of np.block and of np.insert
(srcad/ops/pieces.py).

Each op is linear in its arrays, so its VJP is a linear map of the output's cotangent (a
tuple, a `GradTree`, or 0.0 where nothing flowed) and each helper comes with its transpose,
also a row, so that generated code calling one differentiates again. A missing item of a
cotangent is zeros shaped like the output it stands for.

    np.broadcast_arrays(a, b)  VJP: unbroadcast_each(g, (a, b)) -> (sum of g[0] over a's
                               broadcast axes, the same for b)
"""

from __future__ import annotations

import numpy as np

from .gradtree import GradTree, pieces_tree
from .runtime_python import _item


def _float_type(*xs):
    return np.result_type(*(np.asarray(x).dtype for x in xs), np.float32) if xs else np.float64


def _part(ct, i, shape, dtype):
    """Item i of a cotangent or tangent of a tuple, zeros of `shape` where none came."""
    v = _item(ct, i)
    if v is None or (np.ndim(v) == 0 and shape != () and not np.any(v)):
        return np.zeros(shape, dtype)
    return v


# --- np.broadcast_arrays ----------------------------------------------------------------------
def broadcast_shape(xs):
    """The shape every input of np.broadcast_arrays is broadcast to."""
    return np.broadcast_shapes(*(np.shape(x) for x in xs))


def unbroadcast_each(ct, xs):
    """The VJP of ``np.broadcast_arrays(*xs)``: each output's cotangent summed over the axes
    its input was broadcast along, in the input's shape."""
    shape = broadcast_shape(xs)
    out = []
    for i, x in enumerate(xs):
        g = np.asarray(_part(ct, i, shape, _float_type(x)))
        lead = g.ndim - np.ndim(x)
        axes = tuple(range(lead)) + tuple(lead + k for k, n in enumerate(np.shape(x))
                                          if n == 1 and g.shape[lead + k] != 1)
        out.append(np.reshape(np.sum(g, axis=axes), np.shape(x)) if axes else g)
    return pieces_tree(out)


def broadcast_each(ct, xs):
    """`unbroadcast_each`'s transpose (and np.broadcast_arrays' JVP): each input's
    cotangent broadcast to the common shape."""
    shape = broadcast_shape(xs)
    return tuple(np.broadcast_to(_part(ct, i, np.shape(x), _float_type(x)), shape)
                 for i, x in enumerate(xs))


# --- np.meshgrid --------------------------------------------------------------------------------
def _mesh_axis(i, n, indexing):
    """The output axis the i-th of n inputs runs along ('xy' swaps the first two)."""
    if indexing == "xy" and n > 1 and i < 2:
        return 1 - i
    return i


def unmeshgrid(ct, xs, sparse=False, indexing="xy"):
    """The VJP of ``np.meshgrid(*xs, sparse=sparse, indexing=indexing)``: output i holds
    ravel(xs[i]) along one axis (broadcast along the others unless sparse), so its
    cotangent summed over the others, in xs[i]'s shape."""
    n = len(xs)
    sizes = [np.size(x) for x in xs]
    shape = [0] * n
    for i in range(n):
        shape[_mesh_axis(i, n, indexing)] = sizes[i]
    out = []
    for i, x in enumerate(xs):
        ax = _mesh_axis(i, n, indexing)
        own = tuple(sizes[i] if k == ax else 1 for k in range(n))
        g = np.asarray(_part(ct, i, own if sparse else tuple(shape), _float_type(x)))
        others = tuple(k for k in range(n) if k != ax)
        out.append(np.reshape(np.sum(g, axis=others), np.shape(x)))
    return pieces_tree(out)


def meshgrid_each(ct, xs, sparse=False, indexing="xy"):
    """`unmeshgrid`'s transpose (and np.meshgrid's JVP): np.meshgrid of the inputs'
    cotangents."""
    return tuple(np.meshgrid(*(_part(ct, i, np.shape(x), _float_type(x))
                               for i, x in enumerate(xs)), sparse=sparse, indexing=indexing))


# --- np.unstack ------------------------------------------------------------------------------
def restack(ct, x, axis=0):
    """The VJP of ``np.unstack(x, axis=axis)``: the slices' cotangents stacked back."""
    x = np.asarray(x)
    shape = np.shape(np.take(x, 0, axis=axis)) if x.shape[axis] else ()
    dtype = _float_type(x)
    return np.stack([_part(ct, i, shape, dtype) for i in range(x.shape[axis])], axis=axis)


def unstack_each(ct, x, axis=0):
    """`restack`'s transpose (and np.unstack's JVP): the slices of ct along axis."""
    ct = np.asarray(ct)
    return tuple(np.take(ct, i, axis=axis) for i in range(ct.shape[axis]))


# --- np.block ----------------------------------------------------------------------------------
def _depth(arrays):
    d = 0
    while isinstance(arrays, list):
        if not arrays:
            raise ValueError("np.block: an empty list")
        arrays, d = arrays[0], d + 1
    return d


def _leaves(arrays):
    todo, out = [arrays], []
    while todo:
        a = todo.pop()
        if isinstance(a, list):
            todo.extend(reversed(a))
        else:
            out.append(a)
    return out


def _first_leaf(node):
    while isinstance(node, list):
        node = node[0]
    return node


def unblock(ct, arrays):
    """The VJP of ``np.block(arrays)``: ct split back along the axis each nesting level
    concatenates (the outermost the -depth-th axis, the innermost the last), each leaf's
    piece reshaped to the leaf (numpy prepends ones to lower-dimensional leaves), as nested
    `GradTree`s."""
    depth = _depth(arrays)
    ndim = max([depth] + [np.ndim(a) for a in _leaves(arrays)])

    def promoted(a):
        return (1,) * (ndim - np.ndim(a)) + np.shape(a)

    def split(g, node, level):
        if not isinstance(node, list):
            return np.reshape(g, np.shape(node)).astype(_float_type(node), copy=False)
        axis = level - depth
        sizes = [_extent(child, axis) for child in node]
        pieces = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
        return GradTree({i: split(p, c, level + 1) for i, (p, c) in enumerate(zip(pieces, node))},
                        len(node))

    def _extent(node, axis):
        # a sub-block's size along `axis` is its first leaf's: the levels below concatenate
        # along later axes only
        return promoted(_first_leaf(node))[axis]

    return split(np.asarray(ct), arrays, 0)


def block_pieces(ct, arrays):
    """`unblock`'s transpose (and np.block's JVP): np.block of the leaves' cotangents, in the
    same nesting (tuples made lists, as np.block wants)."""

    def build(d, node):
        if not isinstance(node, list):
            v = None if d is None else d
            if v is None or (np.ndim(v) == 0 and np.shape(node) != () and not np.any(v)):
                return np.zeros(np.shape(node), _float_type(node))
            return v
        return [build(_item(d, i), c) for i, c in enumerate(node)]

    return np.block(build(ct, arrays))


# --- np.insert ---------------------------------------------------------------------------------
def _insert_marks(arr, obj, values, axis):
    """Where np.insert(arr, obj, values, axis) puts what: an array shaped like the output
    whose entries are 1 + the flat index of the arr element there (0 at inserted places),
    and one whose entries are 1 + the flat index of the values element there (0 elsewhere)."""
    arr_idx = np.arange(1, np.size(arr) + 1, dtype=np.float64).reshape(np.shape(arr))
    val_idx = np.arange(1, np.size(values) + 1, dtype=np.float64).reshape(np.shape(values))
    from_arr = np.insert(arr_idx, obj, np.zeros(np.shape(values)), axis=axis)
    from_val = np.insert(np.zeros(np.shape(arr)), obj, val_idx, axis=axis)
    return from_arr.astype(np.int64), from_val.astype(np.int64)


def uninsert_arr(ct, arr, obj, values, axis=None):
    """The VJP of np.insert in `arr`: ct at the places arr's elements went."""
    marks, _ = _insert_marks(arr, obj, values, axis)
    ct = np.asarray(ct)
    out = np.zeros(np.size(arr), _float_type(arr))
    keep = marks > 0
    out[marks[keep] - 1] = ct[keep]
    return np.reshape(out, np.shape(arr))


def uninsert_values(ct, arr, obj, values, axis=None):
    """The VJP of np.insert in `values`: ct at the inserted places, summed into the values
    element each came from (values broadcast to the inserted block)."""
    _, marks = _insert_marks(arr, obj, values, axis)
    ct = np.asarray(ct)
    keep = marks > 0
    out = np.bincount(marks[keep] - 1, weights=ct[keep], minlength=np.size(values))
    return np.reshape(out.astype(_float_type(values), copy=False), np.shape(values))


def reinsert_arr(ct, arr, obj, values, axis=None):
    """`uninsert_arr`'s transpose: ct where arr's elements go, zeros at the inserted places."""
    return np.insert(ct, obj, np.zeros(np.shape(values), np.asarray(ct).dtype), axis=axis)


def reinsert_values(ct, arr, obj, values, axis=None):
    """`uninsert_values`' transpose: zeros where arr's elements go, ct at the inserted places."""
    return np.insert(np.zeros(np.shape(arr), np.asarray(ct).dtype), obj, ct, axis=axis)


__all__ = ["block_pieces", "broadcast_each", "broadcast_shape", "meshgrid_each", "reinsert_arr",
           "reinsert_values", "restack", "unblock", "unbroadcast_each", "uninsert_arr",
           "uninsert_values", "unmeshgrid", "unstack_each"]
