"""The ufunc methods that write by index or reduce by segments: ``ufunc.at`` as a value, and
the group matrices their derivatives are written over.

``np.add.at(a, indices, b)`` changes `a` in place; srcad lowers the statement to
``a[...] = add_at(a, indices, b)`` (frontend/pylower.py; tape mode likewise), a new array
written copy on write like ``a[i] += v`` -- but with numpy's accumulation over repeated
indices, which ``a[i] += v`` does not do. ``negative_at(a, indices)`` is the unary form.

The derivatives of the products and extrema read one "group matrix": for ``ufunc.at``, row
p holds ``a.flat[p]`` then every element of ``b`` (broadcast to ``a[indices]``) written at
position p, in order, padded with `fill`; for ``ufunc.reduceat``, row i holds the elements of
segment i along the axis (numpy's rule: ``array[indices[i]:indices[i+1]]``, or just
``array[indices[i]]`` where ``indices[i] >= indices[i+1]``). The product or extremum of a row
is then np.prod's or np.max's (their rules, srcad/runtime.py's `prod_grad` and
`extremum_grad`, serve these ops), and `at_gather` / `at_take_a` / `at_take_b` and
`reduceat_gather` / `reduceat_scatter` move values in and out of the matrix: linear maps,
each the transpose of another, so second derivatives come from the same rows.

    >>> add_at(np.zeros(3), [0, 1, 1], np.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 5.0, 0.0]
    >>> at_gather(np.array([10.0, 20.0]), [1, 1], np.array([2.0, 3.0]), 1.0).tolist()
    [[10.0, 1.0, 1.0], [20.0, 2.0, 3.0]]
"""

from __future__ import annotations

import numpy as np

from .runtime_arrays import unbroadcast



# --- ufunc.at as a value: numpy's own in-place call, on a copy ------------------------------


def _at(ufunc, a, indices, *b):
    out = np.array(a, copy=True)
    ufunc.at(out, indices, *b)
    return out


def add_at(a, indices, b):
    """``np.add.at(a, indices, b)`` on a copy of `a`: the new array (repeated indices add)."""
    return _at(np.add, a, indices, b)


def subtract_at(a, indices, b):
    """``np.subtract.at(a, indices, b)`` on a copy of `a`."""
    return _at(np.subtract, a, indices, b)


def multiply_at(a, indices, b):
    """``np.multiply.at(a, indices, b)`` on a copy of `a`."""
    return _at(np.multiply, a, indices, b)


def maximum_at(a, indices, b):
    """``np.maximum.at(a, indices, b)`` on a copy of `a`."""
    return _at(np.maximum, a, indices, b)


def minimum_at(a, indices, b):
    """``np.minimum.at(a, indices, b)`` on a copy of `a`."""
    return _at(np.minimum, a, indices, b)


def negative_at(a, indices):
    """``np.negative.at(a, indices)`` on a copy of `a` (a position repeated twice keeps its
    sign)."""
    return _at(np.negative, a, indices)


# the ufuncs whose `at` srcad lowers: ufunc -> the value form
AT_FORMS = {np.add: add_at, np.subtract: subtract_at, np.multiply: multiply_at,
            np.maximum: maximum_at, np.minimum: minimum_at, np.negative: negative_at}


# --- the group matrix of ufunc.at -------------------------------------------------------------


def _at_plan(shape, indices):
    """(flat positions of ``a[indices]``, each one's rank among the writes to its position,
    the matrix width (1 + the most writes to one position), the shape of ``a[indices]``)."""
    size = int(np.prod(shape))
    pos = np.arange(size, dtype=np.intp).reshape(shape)[indices]
    flat = np.ravel(pos)
    n = flat.size
    order = np.argsort(flat, kind="stable")
    ranked = flat[order]
    new = np.ones(n, dtype=bool)
    new[1:] = ranked[1:] != ranked[:-1]
    starts = np.flatnonzero(new)
    lengths = np.diff(np.append(starts, n))
    rank = np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n, dtype=np.intp) - np.repeat(starts, lengths)
    width = 1 + (int(lengths.max()) if n else 0)
    return flat, rank, width, np.shape(pos)


def at_gather(a, indices, b, fill):
    """The group matrix of ``ufunc.at(a, indices, b)``: ``(a.size, width)``, row p holding
    ``a.flat[p]``, then the elements of b written at p in order, then `fill`."""
    a = np.asarray(a)
    flat, rank, width, shape = _at_plan(a.shape, indices)
    dtype = np.result_type(a, b)
    m = np.full((a.size, width), fill, dtype=dtype)
    m[:, 0] = np.ravel(a)
    m[flat, rank + 1] = np.ravel(np.broadcast_to(b, shape))
    return m


def at_take_a(m, indices, a, b):
    """The transpose of `at_gather` in `a`: column 0 of the group matrix, shaped like a."""
    out = np.reshape(m[:, 0], np.shape(a))
    return unbroadcast(out, a)


def at_take_b(m, indices, a, b):
    """The transpose of `at_gather` in `b`: each write's slot, summed back to b's shape."""
    flat, rank, _, shape = _at_plan(np.shape(a), indices)
    return unbroadcast(np.reshape(m[flat, rank + 1], shape), b)


# --- the group matrix of ufunc.reduceat --------------------------------------------------------


def _segments(n, indices):
    """(segment count, width, positions matrix with -1 as padding) of reduceat's rows along
    an axis of length n."""
    idx = np.asarray(indices, dtype=np.intp).ravel()
    if np.any((idx < 0) | (idx >= n)):
        raise IndexError(f"reduceat: an index is out of bounds for an axis of length {n}")
    k = idx.size
    ends = np.empty(k, dtype=np.intp)
    if k:
        ends[:-1] = np.where(idx[:-1] < idx[1:], idx[1:], idx[:-1] + 1)
        ends[-1] = n
    lengths = ends - idx
    width = int(lengths.max()) if k else 1
    cols = np.arange(width, dtype=np.intp)
    pos = idx[:, None] + cols
    return np.where(cols < lengths[:, None], pos, -1)


def reduceat_gather(array, indices, axis, fill):
    """The segments of ``ufunc.reduceat(array, indices, axis)`` as rows: shape
    ``array``'s other axes + (segments, width), padded with `fill`."""
    a = np.moveaxis(np.asarray(array), axis, -1)
    pos = _segments(a.shape[-1], indices)
    taken = a[..., np.maximum(pos, 0)]
    return np.where(pos >= 0, taken, np.asarray(fill, dtype=a.dtype))


def reduceat_scatter(m, indices, array, axis):
    """The transpose of `reduceat_gather`: each row's entries added back at their positions
    (an element in two segments gets both), shaped like `array` (m may broadcast)."""
    shape = np.shape(np.moveaxis(np.asarray(array), axis, -1))
    pos = _segments(shape[-1], indices)
    full = np.broadcast_to(m, shape[:-1] + pos.shape)
    used = pos >= 0
    out = np.zeros((shape[-1],) + shape[:-1], dtype=np.result_type(m))
    np.add.at(out, pos[used], np.moveaxis(full[..., used], -1, 0))
    return np.moveaxis(np.moveaxis(out, 0, -1), -1, axis)


# --- reduceat as rows (numpy's defaults: axis 0) -----------------------------------------------


def add_reduceat(array, indices, axis=0):
    return np.add.reduceat(array, indices, axis=axis)


def multiply_reduceat(array, indices, axis=0):
    return np.multiply.reduceat(array, indices, axis=axis)


def maximum_reduceat(array, indices, axis=0):
    return np.maximum.reduceat(array, indices, axis=axis)


def minimum_reduceat(array, indices, axis=0):
    return np.minimum.reduceat(array, indices, axis=axis)
