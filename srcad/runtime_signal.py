"""Runtime helpers for convolutions, interpolation, finite differences and selection
(np.convolve, np.correlate, np.interp, np.gradient, np.choose, np.linalg.multi_dot;
srcad/ops/signal.py).

Each VJP or JVP here is linear in its first argument, and each has its transpose beside it,
so that generated code calling them differentiates again (their rows:
srcad/ops/signal.py):

* convolutions: ``conv_embed`` puts the cotangent of a 'same' or 'valid' output where it
  sits in the 'full' one (zeros elsewhere); ``conv_crop`` is its transpose (a slice);
* np.interp: ``interp_basis`` answers, per query point, the two knots it lies between, the
  inverse of their spacing and the offset that makes ``t = (x - offset) * inv_h`` the
  weight of the right knot -- piecewise constant in x (no derivative), so the rules written
  over it (np.take, srcad's untake) differentiate in x and fp again;
* np.gradient: linear in f; ``ungradient`` is its transpose, one small matrix per axis
  (numpy's own stencil, read off np.gradient of the identity);
* np.choose: ``unchoose`` sends each element's cotangent to the choice it came from,
  ``choose_tree`` is its transpose;
* multi_dot: ``multi_dot_grad`` / ``multi_dot_jvp`` (each product taken again with one
  factor replaced) and, for second derivatives, ``multi_dot_grad2`` / ``multi_dot_jvp2``
  (two factors replaced; a third derivative is refused).

>>> conv_embed(np.array([1.0, 2.0]), 3, 2, "valid", False).tolist()
[0.0, 1.0, 2.0, 0.0]
"""

from __future__ import annotations

import inspect

import numpy as np

from .errors import SrcadError
from .gradtree import GradTree, pieces_tree

__all__ = [
    "array_item",
    "choose_tree",
    "conv_crop",
    "conv_embed",
    "diagonal_index",
    "gradient_tree",
    "interp_basis",
    "item_grad",
    "last_writes",
    "multi_dot_grad",
    "multi_dot_grad2",
    "multi_dot_jvp",
    "multi_dot_jvp2",
    "outer_axes",
    "outer_shape",
    "put_index",
    "put_take",
    "along_axis_index",
    "mask_index",
    "place_take",
    "putmask_take",
    "unchoose",
    "ungradient",
    "unwindow",
]


def _absent(t) -> bool:
    """A tangent or cotangent that is not there: None, or the 0.0 of a missing slot."""
    return t is None or (np.ndim(t) == 0 and not np.any(t))


# --- convolve / correlate ---------------------------------------------------------------------


def _conv_slice(n_a: int, n_v: int, mode: str, corr: bool) -> slice:
    """Where numpy's `mode` output sits in the 'full' one (numpy's offsets: measured against
    its own convolve and correlate for every pair of lengths up to 7)."""
    lo, hi = min(n_a, n_v), max(n_a, n_v)
    if mode == "full":
        return slice(0, n_a + n_v - 1)
    if mode == "valid":
        return slice(lo - 1, lo - 1 + hi - lo + 1)
    if mode == "same":
        start = n_a // 2 if corr and n_v > n_a else (lo - 1) // 2
        return slice(start, start + hi)
    raise ValueError(f"mode must be 'full', 'same' or 'valid', got {mode!r}")


def _mode(mode) -> str:
    return {0: "valid", 1: "same", 2: "full"}.get(mode, mode) if not isinstance(mode, str) \
        else mode


def conv_embed(ct, n_a, n_v, mode="full", corr=False):
    """The 'full'-length array with `ct` (a `mode` output's cotangent) at its place."""
    ct = np.ravel(ct)
    out = np.zeros(int(n_a) + int(n_v) - 1, dtype=ct.dtype)
    out[_conv_slice(int(n_a), int(n_v), _mode(mode), corr)] = ct
    return out


def conv_crop(t, n_a, n_v, mode="full", corr=False):
    """The transpose of `conv_embed`: the `mode` part of a 'full'-length array."""
    return np.asarray(t)[_conv_slice(int(n_a), int(n_v), _mode(mode), corr)]


# --- interp ---------------------------------------------------------------------------------


def interp_basis(x, xp, left=None, right=None, period=None, which="i0"):
    """One piece of np.interp's local form at each query point x (an array shaped like x):
    ``"i0"``, ``"i1"``: the indices into fp of the knots x lies between; ``"inv_h"``:
    1 / (their spacing), 0 outside [xp[0], xp[-1]] (the value is constant there); ``"offset"``:
    with ``t = (x - offset) * inv_h``, ``out = (1 - t) fp[i0] + t fp[i1]`` inside;
    ``"mask"``: 0 where x is outside and numpy returns `left` / `right` rather than an end of
    fp, else 1.

    The kink convention: at a knot xp[k] itself, the interval to its right (numpy's value is
    fp[k] either way); at the last knot, the last interval. So d out / dx at a knot is the
    right-hand slope, and the left-hand one at xp[-1]."""
    x = np.asarray(x, dtype=np.float64)
    xp = np.asarray(xp, dtype=np.float64)
    n = xp.shape[0]
    if period is not None:
        period = abs(float(period))
        xe = x % period
        xs = xp % period
        order = np.argsort(xs, kind="stable")
        xs = np.concatenate((xs[order][-1:] - period, xs[order], xs[order][:1] + period))
        back = order[(np.arange(n + 2) - 1) % n]  # extended index -> fp's index
        j = np.clip(np.searchsorted(xs, xe, side="right") - 1, 0, n)
        h = xs[j + 1] - xs[j]
        parts = {"i0": back[j], "i1": back[j + 1],
                 "inv_h": np.where(h > 0, 1.0 / np.where(h > 0, h, 1.0), 0.0),
                 "offset": x - xe + xs[j], "mask": np.ones(x.shape)}
        return parts[which]
    if n == 1:
        zero = np.zeros(x.shape, dtype=np.intp)
        below = (x < xp[0]) & (left is not None)
        above = (x > xp[0]) & (right is not None)
        parts = {"i0": zero, "i1": zero, "inv_h": np.zeros(x.shape), "offset": x,
                 "mask": np.where(below | above, 0.0, 1.0)}
        return parts[which]
    j = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, n - 2)
    inside = (x >= xp[0]) & (x <= xp[-1])
    below, above = x < xp[0], x > xp[-1]
    h = xp[j + 1] - xp[j]
    if which == "i0":
        return np.where(above, n - 1, j)
    if which == "i1":
        return np.where(below, 0, j + 1)
    if which == "inv_h":
        return np.where(inside & (h > 0), 1.0 / np.where(h > 0, h, 1.0), 0.0)
    if which == "offset":
        return np.where(inside, xp[j], x)
    if which == "mask":
        fill = (below & (left is not None)) | (above & (right is not None))
        return np.where(fill, 0.0, 1.0)
    raise ValueError(which)


# --- gradient -------------------------------------------------------------------------------


def _gradient_axes(f, axis) -> tuple:
    nd = np.ndim(f)
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) % nd for a in axis)
    return (int(axis) % nd,)


def _spacings(varargs, n_axes: int) -> list:
    if len(varargs) == 0:
        return [1.0] * n_axes
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * n_axes
    if len(varargs) == 1 and n_axes == 1:
        return [varargs[0]]
    return list(varargs)


def _stencil(n: int, spacing, edge_order: int, dtype) -> np.ndarray:
    """D with np.gradient(f, spacing, axis=0, edge_order) == D @ f for a length-n f:
    np.gradient of the identity's columns (numpy's own coefficients)."""
    eye = np.eye(n, dtype=dtype)
    return np.gradient(eye, spacing, axis=0, edge_order=edge_order)


def ungradient(ct, f, varargs=(), axis=None, edge_order=1):
    """The VJP of ``np.gradient(f, *varargs, axis=axis, edge_order=edge_order)`` (linear in
    f): each axis's cotangent sent back through the transpose of its stencil, summed. `ct` is
    one array for one axis, else one item per axis (a scalar zero where nothing flowed)."""
    axes = _gradient_axes(f, axis)
    spacings = _spacings(tuple(varargs), len(axes))
    dtype = np.result_type(f)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    # several axes: numpy's tuple, or one stacked array where a ufunc read the tuple as one
    # (np.sin(np.gradient(f)) with f 2-D: its cotangent is (len(axes), *f.shape))
    several = isinstance(ct, (list, tuple, GradTree)) or (
        len(axes) > 1 and np.ndim(ct) == np.ndim(f) + 1)
    pieces = [ct[i] for i in range(len(axes))] if several else [ct]
    out = np.zeros(np.shape(f), dtype=dtype)
    for ax, sp, piece in zip(axes, spacings, pieces):
        if _absent(piece):
            continue
        piece = np.broadcast_to(piece, np.shape(f))
        d = _stencil(np.shape(f)[ax], sp, edge_order, dtype)
        moved = np.moveaxis(piece, ax, 0)
        back = np.tensordot(d.T, moved, axes=(1, 0))
        out = out + np.moveaxis(back, 0, ax).astype(dtype, copy=False)
    return out


def gradient_tree(t, f, varargs=(), axis=None, edge_order=1, tree=True):
    """np.gradient of `t` with f's spacing, axis and edge order: the transpose of
    `ungradient`. Several axes: a GradTree of pieces with ``tree`` True, numpy's tuple with
    False; ``tree`` an array (the cotangent `ungradient` got, one stacked array where a ufunc
    read numpy's tuple as one) stacks them likewise."""
    out = np.gradient(np.broadcast_to(t, np.shape(f)), *varargs, axis=axis,
                      edge_order=edge_order)
    if isinstance(out, (list, tuple)):
        if isinstance(tree, np.ndarray) and tree.ndim == np.ndim(f) + 1:
            return np.stack(out)
        return pieces_tree(list(out)) if tree is not False else tuple(out)
    return out


# --- choose ---------------------------------------------------------------------------------


def _choice_index(a, n: int, mode: str):
    a = np.asarray(a)
    if mode == "wrap":
        return a % n
    if mode == "clip":
        return np.clip(a, 0, n - 1)
    return a


def _unbroadcast_to(g, shape, dtype):
    g = np.asarray(g)
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.astype(dtype, copy=False) if dtype is not None else g


def unchoose(ct, a, choices, mode="raise"):
    """The VJP of ``np.choose(a, choices, mode)``: each element's cotangent to the choice it
    was read from (summed back over the axes that choice was broadcast along)."""
    n = len(choices)
    idx = _choice_index(a, n, mode)
    full = np.broadcast_shapes(np.shape(idx), np.shape(ct), *(np.shape(c) for c in choices))
    ct = np.broadcast_to(ct, full)
    idx = np.broadcast_to(idx, full)
    pieces = []
    for k in range(n):
        c = choices[k]
        dtype = getattr(c, "dtype", None)
        if dtype is not None and not np.issubdtype(dtype, np.inexact):
            dtype = None
        pieces.append(_unbroadcast_to(np.where(idx == k, ct, 0), np.shape(c), dtype))
    return pieces_tree(pieces, choices if isinstance(choices, np.ndarray) else None)


def choose_tree(t, a, choices, mode="raise"):
    """The transpose of `unchoose`: np.choose of the items of `t` (a zero where nothing
    flowed), shaped like the choices."""
    items = [t[k] for k in range(len(choices))]
    items = [np.zeros(np.shape(c)) if v is None else
             np.broadcast_to(v, np.shape(c)) if np.ndim(v) == 0 else v
             for v, c in zip(items, choices)]
    return np.choose(a, items, mode=mode)


# --- multi_dot ------------------------------------------------------------------------------


def _as_matrices(arrays):
    """The factors as matrices (a 1-D first one a row, a 1-D last one a column)."""
    mats = [np.asarray(x) for x in arrays]
    if mats[0].ndim == 1:
        mats[0] = mats[0][None, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, None]
    return mats


def _chain(mats, lo, hi, size):
    out = None
    for m in mats[lo:hi]:
        out = m if out is None else out @ m
    return np.eye(size, dtype=np.result_type(*mats)) if out is None else out


def multi_dot_grad(ct, arrays):
    """The VJP of np.linalg.multi_dot: factor i's gradient is L^T G R^T, L and R the
    products of the factors before and after it."""
    mats = _as_matrices(arrays)
    g = np.reshape(ct, (mats[0].shape[0], mats[-1].shape[1]))
    pieces = []
    for i, m in enumerate(mats):
        left = _chain(mats, 0, i, m.shape[0])
        right = _chain(mats, i + 1, len(mats), m.shape[1])
        d = left.T @ g @ right.T
        x = arrays[i]
        dtype = getattr(x, "dtype", None)
        d = np.reshape(d, np.shape(x))
        pieces.append(d.astype(dtype, copy=False) if dtype is not None
                      and np.issubdtype(dtype, np.inexact) else d)
    return pieces_tree(pieces)


def multi_dot_jvp(ts, arrays):
    """The JVP of np.linalg.multi_dot: the sum over factors of the product with that factor
    replaced by its tangent (a factor with none skipped)."""
    out = None
    for i in range(len(arrays)):
        t = ts[i]
        if _absent(t):
            continue
        term = np.linalg.multi_dot([*arrays[:i], np.broadcast_to(t, np.shape(arrays[i])),
                                    *arrays[i + 1:]])
        out = term if out is None else out + term
    if out is None:
        return np.zeros_like(np.linalg.multi_dot(list(arrays)))
    return out


def _replaced(arrays, i, t):
    """The factors with factor i replaced by `t` (broadcast to its shape)."""
    return [*arrays[:i], np.broadcast_to(t, np.shape(arrays[i])), *arrays[i + 1:]]


def _zeros_like_factor(x):
    dtype = getattr(x, "dtype", None)
    if dtype is None or not np.issubdtype(dtype, np.inexact):
        dtype = np.float64
    return np.zeros(np.shape(x), dtype=dtype)


def multi_dot_grad2(ct, arrays, hs):
    """multi_dot's second derivative, one bilinear map serving three rules: piece j is the
    sum over the factors i != j (with an ``hs[i]``) of factor j's gradient at `ct` with
    factor i replaced by ``hs[i]``. It is the derivative of ``multi_dot_grad(ct, arrays)``
    along ``hs`` (the JVP), the VJP of ``multi_dot_grad(ct, arrays)`` w.r.t. the factors at
    the cotangent ``hs``, and the VJP of ``multi_dot_jvp(hs, arrays)`` w.r.t. the factors at
    ``ct`` (multilinearity: factor j's gradient does not read factor j)."""
    n = len(arrays)
    total = [None] * n
    for i in range(n):
        h = hs[i]
        if _absent(h):
            continue
        pieces = multi_dot_grad(ct, _replaced(arrays, i, h))
        for j in range(n):
            if j != i:
                total[j] = pieces[j] if total[j] is None else total[j] + pieces[j]
    return pieces_tree([_zeros_like_factor(x) if t is None else t
                        for x, t in zip(arrays, total)])


def multi_dot_jvp2(ts, arrays, ss):
    """The derivative of ``multi_dot_jvp(ts, arrays)`` along the factors' tangents `ss`:
    the sum over pairs of factors i != j of the product with factor i replaced by ``ts[i]``
    and factor j by ``ss[j]`` (symmetric in ts and ss)."""
    out = None
    for i in range(len(arrays)):
        if _absent(ts[i]):
            continue
        with_t = _replaced(arrays, i, ts[i])
        for j in range(len(arrays)):
            if j == i or _absent(ss[j]):
                continue
            term = np.linalg.multi_dot(_replaced(with_t, j, ss[j]))
            out = term if out is None else out + term
    if out is None:
        return np.zeros_like(np.linalg.multi_dot(list(arrays)))
    return out


# --- ufunc.outer ----------------------------------------------------------------------------


def outer_shape(a, b):
    """a's shape followed by one 1 per axis of b: where ``ufunc.outer(a, b)`` puts a."""
    return np.shape(a) + (1,) * np.ndim(b)


def outer_axes(a, b, which=1):
    """The axes of ``ufunc.outer(a, b)`` that came from b (``which=1``) or from a (0): what
    a's (b's) cotangent is summed over."""
    na, nb = np.ndim(a), np.ndim(b)
    return tuple(range(na, na + nb)) if which == 1 else tuple(range(na))


# --- x.item() -------------------------------------------------------------------------------


def array_item(x, index=()):
    """``x.item(*index)`` as a function, so that the table can hold it: one element as a
    Python number (numpy's own value; the derivative travels in the generated code's adjoint,
    not in the number)."""
    return np.asarray(x).item(*index)


def item_grad(ct, x, index=()):
    """The VJP of `array_item`: zeros shaped like x with `ct` at the element (a flat index,
    a tuple of indices, or none for a size-1 x)."""
    out = np.zeros(np.shape(x), dtype=np.result_type(x) if np.issubdtype(
        np.result_type(x), np.inexact) else np.float64)
    flat = out.reshape(-1)
    if len(index) == 0:
        pos = 0
    elif len(index) == 1 and np.ndim(index[0]) == 0:
        pos = int(index[0]) % max(flat.size, 1)
    else:
        idx = index[0] if len(index) == 1 else index
        pos = int(np.ravel_multi_index(tuple(int(i) % n for i, n in zip(idx, out.shape)),
                                       out.shape))
    flat[pos] = ct
    return out


# --- sliding_window_view --------------------------------------------------------------------


def _window_axes(ndim: int, window_shape, axis) -> tuple:
    shape = (window_shape,) if np.ndim(window_shape) == 0 else tuple(window_shape)
    if axis is None:
        axes = tuple(range(ndim))
    elif np.ndim(axis) == 0:
        axes = (int(axis),)
    else:
        axes = tuple(axis)
    return tuple(int(n) for n in shape), tuple(a % ndim for a in axes)


def unwindow(ct, x, window_shape, axis=None):
    """The VJP of ``sliding_window_view(x, window_shape, axis)`` (a view: every window reads
    x): each window's cotangent added back where the window sits -- a scatter-add, one
    shifted slice per position inside the window."""
    ct = np.asarray(ct)
    shape, axes = _window_axes(np.ndim(x), window_shape, axis)
    dtype = np.result_type(x) if np.issubdtype(np.result_type(x), np.inexact) else ct.dtype
    out = np.zeros(np.shape(x), dtype=dtype)
    nd = np.ndim(x)
    lead = ct.shape[:nd]  # the positions of the windows (x's axes, shortened)
    for k in np.ndindex(*shape):
        piece = ct[(Ellipsis, *k)]  # (the window axes come last, in `axis` order)
        where = [slice(None)] * nd
        for a, off in zip(axes, k):
            prev = where[a]
            start = (prev.start or 0) + off
            where[a] = slice(start, start + lead[a])
        out[tuple(where)] += piece
    return out


# --- as_strided -------------------------------------------------------------------------------


def array_strides(x) -> tuple:
    """``x.strides``: bytes between neighbours along each axis (a layout, no derivative)."""
    return np.asarray(x).strides


def _item_offsets(shape, strides, itemsize: int) -> np.ndarray:
    """The memory offset, in items, of every element of an array of this shape and these
    byte strides (C order), relative to its first element."""
    off = np.zeros(tuple(shape), dtype=np.intp)
    for axis, (n, s) in enumerate(zip(shape, strides)):
        step = [1] * len(shape)
        step[axis] = n
        off = off + (np.arange(n, dtype=np.intp) * (s // itemsize)).reshape(step)
    return off


def strided_index(x, shape=None, strides=None) -> np.ndarray:
    """For ``as_strided(x, shape, strides)``: the flat (C order) index into x of the element
    each output element reads. The output's byte offsets are mapped back to x's elements
    through x's own strides, so any layout of x works; an output element that reads memory
    no element of x owns, or an x whose elements share memory, is an error (numpy would read
    garbage or an ambiguous element: no derivative)."""
    x = np.asarray(x)
    shape = x.shape if shape is None else tuple(int(n) for n in shape)
    strides = x.strides if strides is None else tuple(int(s) for s in strides)
    if len(strides) != len(shape):
        raise SrcadError("as_strided: shape and strides have different lengths")
    isz = x.itemsize
    if any(s % isz for s in x.strides + strides):
        raise SrcadError("as_strided: strides that are not whole items have no derivative")
    if x.size == 0 or int(np.prod(shape)) == 0:
        return np.zeros(shape, dtype=np.intp)
    xoff = _item_offsets(x.shape, x.strides, isz).ravel()
    ooff = _item_offsets(shape, strides, isz)
    lo = min(int(xoff.min()), int(ooff.min()))
    hi = max(int(xoff.max()), int(ooff.max()))
    table = np.full(hi - lo + 1, -1, dtype=np.intp)
    table[xoff - lo] = np.arange(x.size, dtype=np.intp)
    if np.count_nonzero(table >= 0) != x.size:
        raise SrcadError("as_strided of an array whose elements share memory (a broadcast "
                         "or a strided view of one) has no derivative: copy it first")
    ids = table[ooff - lo]
    if (ids < 0).any():
        raise SrcadError("as_strided reads memory outside its input (shape and strides "
                         "run past the array): no derivative")
    return ids


def unstride(ct, x, shape=None, strides=None):
    """The VJP of ``as_strided(x, shape, strides)``: every output element's cotangent added
    to the element of x it reads (a scatter-add; windows that overlap add up)."""
    ids = strided_index(x, shape, strides)
    dtype = np.result_type(x) if np.issubdtype(np.result_type(x), np.inexact) else \
        np.result_type(ct)
    out = np.zeros(np.size(x), dtype=dtype)
    np.add.at(out, ids.ravel(), np.ravel(np.broadcast_to(ct, ids.shape)))
    return out.reshape(np.shape(x))


def restride(t, x, shape=None, strides=None):
    """The JVP of ``as_strided(x, shape, strides)`` (and unstride's transpose): x's tangent
    read at the elements each output element reads."""
    ids = strided_index(x, shape, strides)
    return np.ravel(np.broadcast_to(t, np.shape(x)))[ids]


# --- in-place writers: np.put, np.copyto, np.fill_diagonal, np.put_along_axis, np.place,
# np.putmask as `x[index] = value` (the value gathered from a flat v where numpy cycles it) ----


def put_index(a, ind, mode="raise"):
    """Where ``np.put(a, ind, v, mode)`` writes: a tuple of index arrays into `a` (numpy's
    flat indices, negative ones from the end; 'wrap' and 'clip' as numpy folds them)."""
    size = int(np.prod(np.shape(a)))
    flat = np.asarray(ind, dtype=np.intp).ravel()
    if mode == "wrap":
        flat = flat % size
    elif mode == "clip":
        flat = np.clip(flat, 0, size - 1)
    else:
        if np.any((flat >= size) | (flat < -size)):
            raise IndexError(f"index out of range for array of size {size}")
        flat = flat % size
    return np.unravel_index(flat, np.shape(a))


def diagonal_index(a, wrap=False):
    """Where ``np.fill_diagonal(a, val, wrap)`` writes (numpy's flat stride: 2-D a's
    diagonal, past the square part only with ``wrap``; N-d a of equal sides)."""
    shape = np.shape(a)
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) == 2:
        step = shape[1] + 1
        end = None if wrap else shape[1] * shape[1]
    else:
        if len(set(shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(shape[:-1]).sum())
        end = None
    size = int(np.prod(shape))
    flat = np.arange(0, size if end is None else min(end, size), step)
    return np.unravel_index(flat, shape)


def along_axis_index(a, indices, axis):
    """Where ``np.put_along_axis(a, indices, values, axis)`` writes: `indices` on `axis` and,
    on every other axis, an arange shaped to broadcast against it (numpy's fancy index: the
    values broadcast to its shape). With axis None, `indices` (1-d) are flat positions."""
    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        return put_index(a, indices)
    shape = np.shape(a)
    ndim = len(shape)
    if indices.ndim != ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    axis %= ndim
    index = []
    for d, n in enumerate(shape):
        index.append(indices if d == axis else
                     np.arange(n).reshape((1,) * d + (n,) + (1,) * (ndim - d - 1)))
    return tuple(index)


def mask_index(a, mask):
    """Where ``np.place(a, mask, vals)`` and ``np.putmask(a, mask, values)`` write: the
    positions of a whose flat counterpart in `mask` is true (a tuple of index arrays, in
    flat order; mask must have a's size, as numpy requires)."""
    mask = np.asarray(mask)
    size = int(np.prod(np.shape(a)))
    if mask.size != size:
        raise ValueError("putmask: mask and data must be the same size")
    return np.unravel_index(np.flatnonzero(mask), np.shape(a))


def _safe_cast(values, a) -> None:
    """numpy's check in np.place / np.putmask: an array of values must cast safely to a's
    dtype (a Python number or list is read in a's dtype)."""
    if isinstance(values, np.ndarray) and not np.can_cast(values.dtype, np.result_type(a),
                                                          "safe"):
        what = "scalar" if values.ndim == 0 else "array data"
        raise TypeError(f"Cannot cast {what} from {values.dtype!r} to "
                        f"{np.result_type(a)!r} according to the rule 'safe'")


def put_take(v, ind):
    """Which items of ``np.ravel(v)`` ``np.put(a, ind, v)`` stores, in order: one per index,
    `v` repeated when it is shorter. (An empty `v`, with which numpy writes nothing, is an
    error here.)"""
    count, size = int(np.size(ind)), int(np.size(v))
    if size == 0 and count:
        raise ValueError("np.put with an empty v: srcad does not lower it")
    return np.arange(count, dtype=np.intp) % max(size, 1)


def place_take(vals, mask, a):
    """Which items of ``np.ravel(vals)`` ``np.place(a, mask, vals)`` stores, in order: the
    first N, N the number of true entries, `vals` repeated when it is shorter."""
    _safe_cast(vals, a)
    count = int(np.count_nonzero(mask))
    size = int(np.size(vals))
    if size == 0 and count:
        raise ValueError("Cannot insert from an empty array!")
    return np.arange(count, dtype=np.intp) % max(size, 1)


def putmask_take(values, mask, a):
    """Which items of ``np.ravel(values)`` ``np.putmask(a, mask, values)`` stores, in order:
    at flat position n, ``values.flat[n % values.size]`` (values repeated). (An empty
    `values`, with which numpy writes nothing, is an error here.)"""
    _safe_cast(values, a)
    flat = np.flatnonzero(np.asarray(mask))
    if np.size(values) == 0 and flat.size:
        raise ValueError("np.putmask with empty values: srcad does not lower it")
    return flat % max(int(np.size(values)), 1)


# the in-place writers srcad lowers to `x[index] = value` (copy on write): function -> kind
INPLACE_WRITERS = {np.put: "put", np.copyto: "copyto", np.fill_diagonal: "fill_diagonal",
                   np.put_along_axis: "put_along_axis", np.place: "place",
                   np.putmask: "putmask"}


def _put(a, ind, v, mode="raise"):
    """np.put's parameters (spelled here: numpy 1.26's C copyto has no signature to read)."""


def _copyto(dst, src, casting="same_kind", where=True):
    """np.copyto's parameters."""


def _fill_diagonal(a, val, wrap=False):
    """np.fill_diagonal's parameters."""


def _put_along_axis(arr, indices, values, axis):
    """np.put_along_axis's parameters."""


def _place(arr, mask, vals):
    """np.place's parameters."""


def _putmask(a, mask, values):
    """np.putmask's parameters."""


_SIGNATURES = {kind: inspect.signature(f) for kind, f in (
    ("put", _put), ("copyto", _copyto), ("fill_diagonal", _fill_diagonal),
    ("put_along_axis", _put_along_axis), ("place", _place), ("putmask", _putmask))}
# (the argument each writes into)
TARGETS = {"copyto": "dst", "put_along_axis": "arr", "place": "arr"}


def bind_inplace(func, args, kwargs) -> dict:
    """{parameter: argument} of a call of one of `INPLACE_WRITERS` (TypeError if it does not
    bind)."""
    return _SIGNATURES[INPLACE_WRITERS[func]].bind(*args, **kwargs).arguments


def inplace_parts(func, args, kwargs):
    """(target, index, value, take) of ``np.put(a, ind, v)`` / ``np.copyto(dst, src, where=)``
    / ``np.fill_diagonal(a, val, wrap)`` / ``np.put_along_axis(arr, indices, values, axis)``
    / ``np.place(arr, mask, vals)`` / ``np.putmask(a, mask, values)`` called with these
    arguments: the write is ``target[index] = value``, or, where `take` is not None,
    ``target[index] = np.ravel(value)[take]`` (numpy's repetition of a short value). (Tape
    mode's Tensor answers these calls with it.)"""
    bound = bind_inplace(func, args, kwargs)
    kind = INPLACE_WRITERS[func]
    if kind == "put_along_axis":
        return bound["arr"], along_axis_index(bound["arr"], bound["indices"], bound["axis"]), \
            bound["values"], None
    if kind in ("place", "putmask"):
        a, mask = bound["arr" if kind == "place" else "a"], bound["mask"]
        value = bound["vals" if kind == "place" else "values"]
        take = (place_take if kind == "place" else putmask_take)(value, mask, a)
        return a, mask_index(a, mask), value, take
    if kind == "put":
        return bound["a"], put_index(bound["a"], bound["ind"], bound.get("mode", "raise")), \
            bound["v"], put_take(bound["v"], bound["ind"])
    if kind == "fill_diagonal":
        return bound["a"], diagonal_index(bound["a"], bound.get("wrap", False)), bound["val"], \
            None
    where = bound.get("where", True)
    value = bound["src"] if where is True else np.where(where, bound["src"], bound["dst"])
    return bound["dst"], Ellipsis, value, None


# --- x[index] = value with a repeated index: the last write wins ------------------------------


def _has_int_array(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, (list, np.ndarray)) and np.asarray(i).dtype.kind in "iu"
               for i in items)


def _last_writes(shape, index):
    """A mask over ``x[index]`` (x of `shape`): True where that element is the last of the
    elements written to its position -- numpy's ``x[index] = value`` keeps the last write to
    a position an integer index repeats."""
    pos = np.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape)[index]
    flat = np.ravel(pos)
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    keep = np.zeros(flat.size, dtype=bool)
    keep[flat.size - 1 - first_from_end] = True
    return keep.reshape(np.shape(pos))


def last_writes(ct, x, index):
    """`ct` (shaped like ``x[index]``) with the elements a later write to the same position
    overwrote set to 0: applied to ``g[index]``, the cotangent of the value of
    ``y[index] = value``. Linear in ct, and its own transpose (a mask)."""
    if not isinstance(x, np.ndarray) or not _has_int_array(index):
        return ct  # (no position is written twice; a dict or list item is one slot)
    return np.where(_last_writes(np.shape(x), index), ct, 0)
