"""Runtime helpers for the order statistics (np.median, np.percentile, np.quantile and their
nan-forms; srcad/ops/statistics.py).

With the order of the reduced elements fixed, a quantile is a weighted sum of at most two
adjacent order statistics, ``out = (1 - f) v_(k) + f v_(k+1)``, whatever numpy's `method`:
the weights depend on the count n and q alone. So the derivative w.r.t. the input is that
weight at the elements numpy selected, and 0 elsewhere -- piecewise constant in the input.
The helper finds the virtual position ``k + f`` by asking numpy itself for the quantile of
``0, 1, ..., n-1`` (so every `method` numpy has is covered by its own definition).

Ties: which of several equal elements numpy's selection picks is not defined (it partitions),
and the value does not depend on it. The weight at the positions a run of equal values
occupies is spread evenly over that run -- the convention of srcad's max and min (and torch's
amax): for median([1, 3, 3]) each 3 gets 1/2, and the weights still sum to 1, so
d median(x + c)/dc = 1. (torch.median gives all of it to one index; torch.quantile to the
element its sort puts at the position.) NaNs: the nan-forms give them no weight; the plain
forms return NaN where a NaN is reduced, and the NaN's own weight is whatever the sorted
position gives.

    order_grad(g, a, q, axis, keepdims, method, nan, percent)   (the VJP: shaped like a)
    order_jvp(t, a, q, axis, keepdims, method, nan, percent)    (the JVP: shaped like out)

are each other's transposes and both linear in their first argument.

>>> order_grad(1.0, np.array([3.0, 1.0, 2.0, 3.0]), 0.5, None, False, "linear", False, False)
array([0.25, 0. , 0.5 , 0.25])
"""

from __future__ import annotations

import numpy as np

from .errors import SrcadError

__all__ = ["average_identity", "average_pair", "average_part", "average_plus_count",
           "average_weights", "cov_grad", "cov_jvp", "cov_part", "cov_place", "cov_stack",
           "cov_weights", "order_grad", "order_jvp", "unaverage_weights"]


def _axes(ndim: int, axis) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(int(x) % ndim for x in axis))
    return (int(axis) % ndim,)


def _layout(a, axis):
    """a with the reduced axes moved last and flattened: (b, rest, axes)."""
    nd = a.ndim
    axes = _axes(nd, axis)
    k = len(axes)
    b = np.moveaxis(a, axes, tuple(range(nd - k, nd)))
    rest = b.shape[: nd - k]
    return b.reshape(rest + (-1,) if b.size else rest + (int(np.prod(b.shape[nd - k:])),)), \
        rest, axes


def _spread_ties(w, v):
    """Each run of equal values in a sorted row gets the mean of its weights."""
    n = v.shape[-1]
    if n < 2 or v.size == 0:
        return w
    first = np.ones(v.shape[:-1] + (1,), bool)
    new = np.concatenate([first, v[..., 1:] != v[..., :-1]], axis=-1)
    gid = np.cumsum(new, axis=-1) - 1
    rows = v.size // n
    flat = (gid.reshape(rows, n) + np.arange(rows)[:, None] * n).ravel()
    sums = np.bincount(flat, weights=w.ravel(), minlength=rows * n)
    counts = np.bincount(flat, minlength=rows * n)
    return (sums / np.maximum(counts, 1))[flat].reshape(w.shape)


def _weights(a, q, axis, method, nan, percent):
    """(W, rest, axes, qshape): W[j, ..., i] is d out[j, ...] / d b[..., i]."""
    a = np.asarray(a)
    b, rest, axes = _layout(a, axis)
    n = b.shape[-1]
    qs = np.asarray(q, dtype=np.float64)
    qshape = qs.shape
    qs = qs.ravel() / (100.0 if percent else 1.0)
    order = np.argsort(b, axis=-1, kind="stable")
    v = np.take_along_axis(b, order, axis=-1)
    counts = (~np.isnan(v)).sum(-1) if nan else np.full(rest, n)
    pos = np.arange(n)
    W = np.zeros((len(qs),) + rest + (n,))
    for j, qv in enumerate(qs):
        t = np.full(rest, np.nan)
        for m in np.unique(counts):
            if m > 0:
                t[counts == m] = np.quantile(np.arange(m, dtype=np.float64), qv, method=method)
        lo = np.floor(t)[..., None]
        frac = (t[..., None] - lo)
        w = np.where(pos == lo, 1.0 - frac, 0.0) + np.where(pos == lo + 1, frac, 0.0)
        np.put_along_axis(W[j], order, _spread_ties(w, v), axis=-1)
    return W, rest, axes, qshape


def order_grad(g, a, q, axis=None, keepdims=False, method="linear", nan=False, percent=False):
    """The VJP of a quantile w.r.t. its input: g spread onto the selected elements."""
    a = np.asarray(a)
    W, rest, axes, _ = _weights(a, q, axis, method, nan, percent)
    gq = np.asarray(g, dtype=np.float64).reshape((W.shape[0],) + rest)
    gb = np.sum(W * gq[..., None], axis=0)
    nd, k = a.ndim, len(axes)
    gb = gb.reshape(rest + tuple(a.shape[ax] for ax in axes))
    out = np.moveaxis(gb, tuple(range(nd - k, nd)), axes)
    dtype = a.dtype if np.issubdtype(a.dtype, np.floating) else np.float64
    return out.astype(dtype, copy=False)


def order_jvp(t, a, q, axis=None, keepdims=False, method="linear", nan=False, percent=False):
    """The JVP: the same weights applied to the input's tangent t (shaped like the output)."""
    a = np.asarray(a)
    W, rest, axes, qshape = _weights(a, q, axis, method, nan, percent)
    t = np.asarray(t)
    tb, _, _ = _layout(np.broadcast_to(t, a.shape), axis)
    out = np.sum(W * tb[None], axis=-1)
    red = [1 if ax in axes else s for ax, s in enumerate(a.shape)] if keepdims else list(rest)
    dtype = t.dtype if np.issubdtype(t.dtype, np.floating) else np.float64
    return out.reshape(qshape + tuple(red)).astype(dtype, copy=False)


# --- np.average: its weights shaped like a ----------------------------------------------------


def average_weights(weights, a, axis=None, returned=False):
    """np.average's weights as an array shaped like `a` (numpy's rule: the same shape, or 1-D
    along an int `axis`); ones in a's dtype where there are none. Linear in `weights`.
    (`returned` is not read: kept for generated code that passes it.)"""
    shape = np.shape(a)
    if weights is None:
        dtype = np.result_type(a)
        return np.ones(shape, dtype=dtype if np.issubdtype(dtype, np.inexact) else np.float64)
    w = np.asarray(weights)
    if w.shape != shape and w.ndim == 1 and axis is not None and len(shape) > 1:
        w = np.reshape(w, tuple(-1 if d == int(axis) % len(shape) else 1
                                for d in range(len(shape))))
    return np.broadcast_to(w, shape)


# --- np.average(..., returned=True): the pair (average, sum of the weights) -----------------
# With numpy's default returned=False each of these is its first argument, and the specialiser
# drops the call (srcad/transform/specialise.py): the rules read as they did without them.


def average_part(v, returned=False):
    """The average in np.average's output or its cotangent: `v` itself, or the first of the
    pair returned=True gives (a cotangent's missing slot: 0.0)."""
    return v[0] if returned else v


def average_pair(t, t_count=None, returned=False):
    """np.average's tangent from its average's `t`: `t`, or for returned=True the pair (t,
    the tangent of the sum of the weights broadcast to the average's shape, as numpy
    broadcasts that sum; zeros for None), stacked along a new first axis -- the transform
    adds the terms of a and of the weights with `+`, which would concatenate two tuples;
    indexing and unpacking read the stack as the pair."""
    if not returned:
        return t
    t = np.asarray(t)
    count = np.zeros_like(t) if t_count is None else np.broadcast_to(t_count, t.shape)
    return np.stack((t, count.astype(t.dtype, copy=False)))


def average_plus_count(x, ct, a, axis=None, keepdims=False, returned=False):
    """A cotangent for the weights (shaped like `a`): `x`, plus for returned=True the
    cotangent of the sum of the weights (the pair's second) spread back over the reduced
    axes -- each weight adds into it once."""
    if not returned:
        return x
    c = ct[1]
    if c is None or (np.ndim(c) == 0 and not np.any(c)):
        return x
    shape = np.shape(a)
    if axis is not None and not keepdims:
        c = np.expand_dims(c, _axes(len(shape), axis))
    return x + np.broadcast_to(c, shape)


def average_identity(x, returned=False):
    """`x`; for returned=True a second derivative srcad does not implement (an error, never
    zeros): the rows of the helpers above send their cotangents through this."""
    if returned:
        raise SrcadError("srcad has no derivative rule for the second derivative of "
                         "np.average(..., returned=True)",
                         hint="first derivatives of it are supported, in both modes")
    return x


def unaverage_weights(ct, weights, a, axis=None, returned=False):
    """The transpose of `average_weights`: `ct` (shaped like a) summed back to weights."""
    ct = np.asarray(ct)
    w_shape = np.shape(weights)
    if w_shape != ct.shape:
        ax = int(axis) % ct.ndim
        ct = np.sum(ct, axis=tuple(d for d in range(ct.ndim) if d != ax))
    dtype = getattr(weights, "dtype", None)
    if dtype is not None and np.issubdtype(dtype, np.inexact):
        ct = ct.astype(dtype, copy=False)
    return np.reshape(ct, w_shape)


# --- np.cov and np.corrcoef: X, the centering weights and the scale ---------------------------
#
# np.cov(m, y, rowvar, ...) stacks its observations as X (one variable per row), centers them
# with the weights w (Xc = X - (X w / sum w) 1^T) and answers C = (Xc * w) Xc^T / f. So with
# cw = w / sum(w) and sw = w / f, C = cov_jvp's bilinear form, and the helpers below are
# linear maps with exact transposes: cov_stack / cov_part / cov_place move between m's (or
# y's) layout and X's; cov_grad(G, X) = sym(G) X P S P^T with P = I - cw 1^T, S = diag(sw),
# cov_jvp(T, X) = Tc S Xc^T + Xc S Tc^T -- each linear in both arguments and each other's
# transpose in the first.


def _cov_matrix(a, rowvar):
    a = np.atleast_2d(np.asarray(a))
    return a.T if not rowvar and a.shape[0] != 1 else a


def cov_stack(m, y=None, rowvar=True):
    """X: the observations of m (and y) one variable per row, in numpy's float dtype."""
    dtype = np.result_type(m, np.float64) if y is None else np.result_type(m, y, np.float64)
    parts = [_cov_matrix(m, rowvar)] + ([_cov_matrix(y, rowvar)] if y is not None else [])
    return np.concatenate(parts, axis=0).astype(dtype, copy=False)


def cov_part(ct, m, y=None, rowvar=True, part=0):
    """The transpose of `cov_stack` for m (part 0) or y (part 1): the rows of `ct` that came
    from it, in its layout and dtype."""
    ct = np.asarray(ct)
    k = _cov_matrix(m, rowvar).shape[0]
    x = m if part == 0 else y
    rows = ct[:k] if part == 0 else ct[k:]
    mat = np.atleast_2d(np.asarray(x))
    if not rowvar and mat.shape[0] != 1:
        rows = rows.T
    dtype = getattr(x, "dtype", None)
    out = np.reshape(rows, np.shape(x))
    return out.astype(dtype, copy=False) if dtype is not None and np.issubdtype(
        dtype, np.inexact) else out


def cov_place(t, m, y=None, rowvar=True, part=0):
    """The transpose of `cov_part`: `t` (m's or y's layout) placed in X, zeros elsewhere."""
    x = m if part == 0 else y
    mine = _cov_matrix(np.broadcast_to(t, np.shape(x)), rowvar)
    if y is None:
        return mine
    other = np.zeros_like(_cov_matrix(y if part == 0 else m, rowvar), dtype=mine.dtype)
    return np.concatenate((mine, other) if part == 0 else (other, mine), axis=0)


def cov_weights(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
                which="center"):
    """np.cov's weights per observation: ``"center"`` w / sum(w) (the mean's), ``"scale"``
    w / f (numpy's normalisation f, from ddof, bias and the weights). No derivative (a
    differentiated fweights or aweights is refused)."""
    n_obs = cov_stack(m, y, rowvar).shape[1]
    w = np.ones(n_obs)
    if fweights is not None:
        w = w * np.asarray(fweights, dtype=np.float64)
    if aweights is not None:
        w = w * np.asarray(aweights, dtype=np.float64)
    w_sum = np.sum(w)
    if which == "center":
        return w / w_sum
    if ddof is None:
        ddof = 0 if bias else 1
    if ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * np.sum(w * np.asarray(aweights, dtype=np.float64)) / w_sum
    return w / max(fact, 0.0) if fact > 0 else w * np.inf


def _center(x, cw):
    return x - np.reshape(x @ cw, (-1, 1))


def cov_grad(G, X, cw, sw):
    """The VJP of C = cov(X) w.r.t. X: sym(G) Xc S P^T, G reshaped to C's (n, n)."""
    X = np.asarray(X)
    n = X.shape[0]
    G = np.reshape(G, (n, n))
    d = ((G + G.T) @ _center(X, cw)) * sw
    return d - np.sum(d, axis=1, keepdims=True) * cw


def cov_jvp(T, X, cw, sw):
    """The JVP of C = cov(X) along T (X's shape): Tc S Xc^T + Xc S Tc^T, (n, n)."""
    Tc, Xc = _center(np.broadcast_to(T, np.shape(X)), cw), _center(np.asarray(X), cw)
    return (Tc * sw) @ Xc.T + (Xc * sw) @ Tc.T
