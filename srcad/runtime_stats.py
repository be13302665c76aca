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

__all__ = ["order_grad", "order_jvp"]


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
