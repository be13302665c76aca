"""The few helpers generated code calls, besides numpy.

Exported generated source needs only numpy and this module. Every helper here is
also registered in the op table (ops/runtime_ops.py) so that generated code can be
differentiated again (higher order).

Some helpers carry a ``simplify`` hook: given the static shapes of their arguments
(known once a transformed function is specialised to its inputs), it returns a simpler
expression or None. This is how identity unbroadcasts disappear from generated code and
how a 2-D matmul backward reads ``dh @ W.T`` instead of a generic helper call.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "unbroadcast",
    "unreduce",
    "unindex",
    "unconcatenate",
    "unstack",
    "matmul_grad_a",
    "matmul_grad_b",
    "as_grad",
    "clip_grad",
    "inverse_permutation",
    "astype",
    "select_grad",
    "extremum_grad",
]


def _shape(x):
    return np.shape(x)


def _dtype(x):
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    return None


def unbroadcast(g, x):
    """Sum `g` over the axes along which `x` was broadcast; cast to `x`'s dtype.

    The backward of broadcasting, written once (HIPS autograd's `unbroadcast`).

    >>> unbroadcast(np.ones((2, 3)), np.zeros((1, 3))).tolist()
    [[2.0, 2.0, 2.0]]
    """
    shape = _shape(x)
    gshape = np.shape(g)
    if gshape != shape:
        lead = len(gshape) - len(shape)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1
        )
        if axes:
            g = np.sum(g, axis=axes)
        g = np.reshape(g, shape)
    dtype = _dtype(x)
    if dtype is not None and np.result_type(g) != dtype:
        g = np.asarray(g).astype(dtype)
    return g


def _unbroadcast_simplify(g, x):
    if g.shape == x.shape and (x.dtype is None or g.dtype == x.dtype):
        return "g"
    if g.shape == x.shape:
        return "g.astype(x.dtype)"
    return None


unbroadcast.simplify = _unbroadcast_simplify


def _norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the cotangent of a reduction of `x` back to `x`'s shape.

    The result is a read-only broadcast view (no memory is spent on the repeated values);
    the ops that consume it make fresh arrays.
    """
    shape = _shape(x)
    if not keepdims and axis is not None:
        g = np.expand_dims(g, _norm_axes(axis, len(shape)))
    dtype = _dtype(x)
    g = np.asarray(g)
    if dtype is not None and g.dtype != dtype:
        g = g.astype(dtype)
    return np.broadcast_to(g, shape)


def unindex(g, x, index):
    """Scatter-add `g` into zeros shaped like `x` at `index` (basic or advanced)."""
    dtype = _dtype(x) or np.result_type(g)
    out = np.zeros(_shape(x), dtype=dtype)
    parts = index if isinstance(index, tuple) else (index,)
    basic = all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice)) for p in parts)
    if basic:
        out[index] = g
    else:
        np.add.at(out, index, g)
    return out


def unconcatenate(g, xs, axis=0):
    """Split the cotangent of `np.concatenate(xs, axis)` into one piece per input."""
    axis = axis if axis is not None else 0
    if axis is None:
        g = np.ravel(g)
    sizes = [np.shape(x)[axis] for x in xs]
    bounds = np.cumsum(sizes)[:-1]
    return tuple(np.split(g, bounds, axis=axis))


def unstack(g, xs, axis=0):
    """Split the cotangent of `np.stack(xs, axis)` into one piece per input."""
    return tuple(np.take(g, i, axis=axis) for i in range(len(xs)))


def _promote(a, b):
    """View 1-D matmul operands as matrices, as numpy does."""
    a2 = a[None, :] if np.ndim(a) == 1 else a
    b2 = b[:, None] if np.ndim(b) == 1 else b
    return a2, b2


def _expand_g(g, a, b):
    g = np.asarray(g)
    if np.ndim(a) == 1:
        g = np.expand_dims(g, -2)
    if np.ndim(b) == 1:
        g = np.expand_dims(g, -1)
    return g


def matmul_grad_a(g, a, b):
    """d(a @ b)/da applied to g, for 1-D, 2-D and batched (broadcast) operands."""
    a2, b2 = _promote(a, b)
    g2 = _expand_g(g, a, b)
    da = g2 @ np.swapaxes(b2, -1, -2)
    da = unbroadcast(da, a2)
    return np.reshape(da, np.shape(a)) if np.ndim(a) == 1 else da


def matmul_grad_b(g, a, b):
    """d(a @ b)/db applied to g, for 1-D, 2-D and batched (broadcast) operands."""
    a2, b2 = _promote(a, b)
    g2 = _expand_g(g, a, b)
    db = np.swapaxes(a2, -1, -2) @ g2
    db = unbroadcast(db, b2)
    return np.reshape(db, np.shape(b)) if np.ndim(b) == 1 else db


def _matmul_a_simplify(g, a, b):
    if a.ndim == 2 and b.ndim == 2 and a.dtype == b.dtype:
        return "g @ b.T"
    if a.ndim == 1 and b.ndim == 1 and a.dtype == b.dtype:
        return "g * b"
    return None


def _matmul_b_simplify(g, a, b):
    if a.ndim == 2 and b.ndim == 2 and a.dtype == b.dtype:
        return "a.T @ g"
    if a.ndim == 1 and b.ndim == 1 and a.dtype == b.dtype:
        return "g * a"
    return None


matmul_grad_a.simplify = _matmul_a_simplify
matmul_grad_b.simplify = _matmul_b_simplify


def select_grad(g, mask):
    """`g` where `mask` holds, else 0: the VJP of a selection (where, maximum, abs, clip)."""
    return np.where(mask, g, np.zeros_like(g))


def extremum_grad(g, out, x, axis=None, keepdims=False):
    """VJP of max/min reductions: split `g` evenly among the tied extrema (as torch.amax)."""
    full_out = unreduce(out, x, axis, keepdims)
    mask = x == full_out
    count = np.sum(mask, axis=axis, keepdims=True)
    gg = unreduce(g, x, axis, keepdims)
    return np.where(mask, gg / count.astype(gg.dtype), np.zeros_like(gg))


def clip_grad(g, a, a_min, a_max):
    """VJP of np.clip w.r.t. `a`: g where a lies inside [a_min, a_max] (bounds may be None)."""
    inside = np.ones(np.shape(a), dtype=bool)
    if a_min is not None:
        inside &= a >= a_min
    if a_max is not None:
        inside &= a <= a_max
    return np.where(inside, g, 0)


def inverse_permutation(axes):
    """The axes that undo `np.transpose(x, axes)` (None stays None)."""
    if axes is None:
        return None
    return tuple(int(i) for i in np.argsort(axes))


inverse_permutation.static = True


def astype(x, dtype):
    """`x.astype(dtype)` as a function, so that the op table can hold it."""
    return np.asarray(x).astype(dtype)


def as_grad(d, x):
    """Make `d` a gradient for `x`: same shape and dtype, an array the caller owns.

    A Python float argument gets a Python float gradient.
    """
    if isinstance(x, float) and not isinstance(x, np.floating):
        return float(np.sum(d))
    dtype = _dtype(x) or np.float64
    out = unbroadcast(np.asarray(d), x) if np.shape(d) != np.shape(x) else d
    out = np.array(out, dtype=dtype, copy=True)
    if isinstance(x, np.generic):
        return out[()]
    return out
