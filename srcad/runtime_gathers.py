"""Helpers of the data-dependent gathers (srcad/ops/gathers.py): np.delete, np.compress,
np.extract, np.trim_zeros, np.unique and its array-API forms, the set operations
(intersect1d, setdiff1d, union1d, setxor1d) and np.bincount's weights.

Each of those ops picks elements of its input: which ones is decided from the data (the
positions of the nonzeros, the first occurrence of each distinct value), and that decision is
piecewise constant, so the value is a gather ``x.ravel()[idx]`` (or along an axis) with `idx`
carrying no gradient. The helpers here compute the index (``*_index``, rows without a
gradient) or, where the op's output may be a tuple (np.unique with return_index=, the set
operations' two inputs), the gather's cotangent and tangent as a pair of linear maps, each the
other's transpose (`unique_grad` / `unique_tangent`, `set_grad` / `set_tangent`,
`bincount_grad` / np.bincount), so generated code calling them differentiates again.

The first occurrence is JAX's choice (its unique gathers at ``return_index``): of tied values,
the one earliest in the (flattened, concatenated) input gets the cotangent.

    >>> first_index(np.array([3.0, 1.0, 3.0, 2.0]), np.array([1.0, 2.0, 3.0])).tolist()
    [1, 3, 0]
"""

from __future__ import annotations

import numpy as np

from .gradtree import GradTree, _Zero

__all__ = [
    "bincount_grad",
    "compress_index",
    "delete_index",
    "first_index",
    "hist_counts",
    "hist_counts_grad",
    "histdd_counts",
    "histdd_counts_grad",
    "hist_edges_grad",
    "hist_edges_tangent",
    "set_grad",
    "set_tangent",
    "trim_index",
    "unique_grad",
    "unique_tangent",
]


# --- indices ----------------------------------------------------------------------------------
def delete_index(arr, obj, axis=None):
    """The positions ``np.delete(arr, obj, axis)`` keeps (flat for ``axis=None``)."""
    n = np.size(arr) if axis is None else np.shape(arr)[axis]
    return np.delete(np.arange(n), obj)


def compress_index(condition):
    """The positions ``np.compress(condition, a)`` / ``np.extract(condition, arr)`` keep: the
    nonzeros of the (flattened) condition."""
    return np.flatnonzero(condition)


def trim_index(filt, trim="fb", axis=None):
    """The basic index (a slice, or a tuple of them) ``np.trim_zeros(filt, trim, axis)``
    takes: the bounding box of the nonzeros along the trimmed axes, as numpy computes it."""
    f = np.asarray(filt)
    trim = trim.lower()
    axes = range(f.ndim) if axis is None else (axis,) if np.ndim(axis) == 0 else axis
    axes = {int(a) % max(f.ndim, 1) for a in axes}
    nonzero = np.argwhere(f)
    if nonzero.size == 0:
        start, stop = [0] * f.ndim, [0] * f.ndim
    else:
        start = nonzero.min(axis=0) if "f" in trim else [None] * f.ndim
        stop = nonzero.max(axis=0) + 1 if "b" in trim else [None] * f.ndim
    sl = tuple(slice(None if start[d] is None else int(start[d]),
                     None if stop[d] is None else int(stop[d])) if d in axes else slice(None)
               for d in range(f.ndim))
    return sl[0] if len(sl) == 1 else sl


def first_index(x, values):
    """For each of `values` (flattened), the flat index of its first occurrence in `x`; the
    k-th NaN of `values` is the k-th NaN of `x` (np.unique keeps one NaN, or each of them)."""
    flat = np.ravel(x)
    values = np.ravel(values)
    if values.size == 0 or flat.size == 0:
        return np.zeros(0, dtype=np.intp)
    order = np.argsort(flat, kind="stable")
    pos = np.searchsorted(flat[order], values, side="left")
    if values.dtype.kind in "fc":
        nan = np.isnan(values)
        pos = pos + np.where(nan, np.cumsum(nan) - 1, 0)
    return order[np.minimum(pos, flat.size - 1)]


def _values(out):
    """The values part of an op's output (a unique op's namedtuple, np.unique's tuple)."""
    return out[0] if isinstance(out, tuple) else out


def _values_ct(ct, out):
    """The values part of a cotangent of `out` (zeros where nothing flowed to it)."""
    values = _values(out)
    if isinstance(out, tuple):
        if isinstance(ct, GradTree):
            ct = ct.slots.get(0)
        elif isinstance(ct, (tuple, list)):
            ct = ct[0]
        elif isinstance(ct, _Zero):
            ct = None
    if ct is None or (np.ndim(ct) == 0 and np.shape(values) != () and not np.any(ct)):
        return np.zeros(np.shape(values), _float(values))
    return ct


def _float(x):
    dtype = np.asarray(x).dtype
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def _like_out(t, out):
    """A tangent of `out` whose values part is `t` (the integer parts of a tuple: none)."""
    if not isinstance(out, tuple):
        return t
    return GradTree({0: t}, len(out), out)


def _zeros_like_float(x):
    return np.zeros(np.shape(x), _float(x))


# --- np.unique and its array-API forms -----------------------------------------------------------
def _unique_index(ar, value, axis, equal_nan):
    if axis is None or np.ndim(ar) <= 1:
        return first_index(ar, _values(value)), None
    idx = np.unique(ar, return_index=True, axis=axis, equal_nan=equal_nan)[1]
    return idx, axis


def unique_grad(ct, ar, value, axis=None, equal_nan=True):
    """The VJP of np.unique (unique_values, _all, _counts, _inverse) in `ar`: the values'
    cotangent added at the first occurrence of each value (of each subarray along `axis`)."""
    idx, ax = _unique_index(ar, value, axis, equal_nan)
    g = np.asarray(_values_ct(ct, value))
    res = _zeros_like_float(ar)
    if ax is None:
        np.add.at(res.reshape(-1), idx, g.reshape(-1))
    else:
        ax = ax % res.ndim
        np.add.at(res, (slice(None),) * ax + (idx,), g)
    return res


def unique_tangent(t, ar, value, axis=None, equal_nan=True):
    """The JVP of np.unique (and its forms) in `ar` (`unique_grad`'s transpose): `t` gathered
    at the first occurrences, the values part of the output's tangent."""
    idx, ax = _unique_index(ar, value, axis, equal_nan)
    t = np.asarray(t)
    values = np.take(t, idx) if ax is None else np.take(t, idx, axis=ax)
    return _like_out(values.reshape(np.shape(_values(value))), value)


# --- the set operations ---------------------------------------------------------------------------
def _set_parts(value, ar1, ar2, which):
    """(positions in the output's values, flat indices in input `which`) of the values that
    come from that input: each value's first occurrence in ravel(ar1) then ravel(ar2)."""
    n1 = np.size(ar1)
    both = np.concatenate([np.ravel(ar1), np.ravel(ar2)])
    idx = first_index(both, _values(value))
    mine = idx < n1 if which == 0 else idx >= n1
    return np.flatnonzero(mine), idx[mine] - (0 if which == 0 else n1)


def set_grad(ct, value, ar1, ar2, which=0):
    """The VJP of a set operation (intersect1d, setdiff1d, union1d, setxor1d) in input
    `which`: each value's cotangent added at its first occurrence, if that is in this input."""
    pos, src = _set_parts(value, ar1, ar2, which)
    x = ar1 if which == 0 else ar2
    g = np.ravel(_values_ct(ct, value))
    res = _zeros_like_float(x)
    np.add.at(res.reshape(-1), src, g[pos])
    return res


def set_tangent(t, value, ar1, ar2, which=0):
    """The JVP of a set operation from input `which`'s tangent (`set_grad`'s transpose): the
    values that come from that input take its tangent, the others zero."""
    pos, src = _set_parts(value, ar1, ar2, which)
    t = np.asarray(t)
    res = np.zeros(np.shape(_values(value)), _float(t))
    res.reshape(-1)[pos] = np.ravel(t)[src]
    return _like_out(res, value)


# --- np.bincount -------------------------------------------------------------------------------
def bincount_grad(ct, x, weights):
    """The VJP of ``np.bincount(x, weights)`` in the weights: the cotangent of each bin read at
    each element's bin (np.bincount computes in float64: cast back to the weights' dtype)."""
    g = np.take(np.asarray(ct), np.asarray(x))
    dtype = np.asarray(weights).dtype
    if np.issubdtype(dtype, np.floating):
        g = g.astype(dtype, copy=False)
    return np.reshape(g, np.shape(weights))


# --- np.histogram: its counts (srcad/pyfuncs.py's histogram) and its edges ---------------------
def hist_counts(a, bins=10, range=None, weights=None):
    """np.histogram's first output without density: numpy's own counts (or sums of the
    weights), so the values are numpy's bit for bit; linear in the weights."""
    return np.histogram(a, bins, range, weights=weights)[0]


def _hist_bins(a, bins, range):
    """(each element's bin, clipped into range; whether it falls in one), as np.histogram
    bins it: edges[k] <= a < edges[k + 1], the last bin closed, values outside dropped."""
    edges = np.histogram_bin_edges(a, bins, range)
    flat = np.ravel(a)
    idx = np.searchsorted(edges, flat, side="right") - 1
    idx = np.where(flat == edges[-1], edges.size - 2, idx)
    inside = (idx >= 0) & (idx < edges.size - 1)
    return np.clip(idx, 0, edges.size - 2), inside


def hist_counts_grad(ct, a, bins=10, range=None, weights=None):
    """The VJP of `hist_counts` in the weights: each element reads its bin's cotangent (zero
    outside the range), in the weights' dtype."""
    idx, inside = _hist_bins(a, bins, range)
    g = np.where(inside, np.take(np.asarray(ct), idx), 0)
    dtype = np.asarray(weights).dtype if weights is not None else np.dtype(np.float64)
    if np.issubdtype(dtype, np.floating):
        g = g.astype(dtype, copy=False)
    return np.reshape(g, np.shape(weights) if weights is not None else np.shape(a))


def histdd_counts(sample, bins=10, range=None, weights=None):
    """np.histogramdd's first output without density (np.histogram2d's through it): numpy's
    own counts (or sums of the weights) as floats; linear in the weights. `sample` is the
    (N, D) array of points."""
    return np.histogramdd(sample, bins, range, weights=weights)[0]


def histdd_counts_grad(ct, sample, bins=10, range=None, weights=None):
    """The VJP of `histdd_counts` in the weights: each point reads its cell's cotangent (zero
    where a coordinate falls outside its edges), binned as np.histogramdd bins: edges[k] <= x
    < edges[k + 1] per dimension, the last bin closed."""
    sample = np.asarray(sample)
    edges = np.histogramdd(sample, bins, range)[1]
    ct = np.asarray(ct)
    n = sample.shape[0]
    inside = np.ones(n, dtype=bool)
    cell = []
    for i, e in enumerate(edges):
        col = sample[:, i]
        idx = np.searchsorted(e, col, side="right") - 1
        idx = np.where(col == e[-1], e.size - 2, idx)
        inside &= (idx >= 0) & (idx < e.size - 1)
        cell.append(np.clip(idx, 0, e.size - 2))
    g = np.where(inside, ct[tuple(cell)] if n else np.zeros(0), 0)
    dtype = np.asarray(weights).dtype if weights is not None else np.dtype(np.float64)
    if np.issubdtype(dtype, np.floating):
        g = g.astype(dtype, copy=False)
    return np.reshape(g, np.shape(weights) if weights is not None else (n,))


def _edges_weights(a, edges, bins, range):
    """(the weights of min(a) and of max(a) in each edge -- linspace's 1 - k/n and k/n --,
    min(a)'s and max(a)'s share of each element: ties split evenly), or None where the edges
    do not depend on a (range= given, or bins an array of edges)."""
    if range is not None or np.ndim(bins) != 0 or isinstance(bins, bytes) or np.size(a) == 0:
        return None
    n = np.size(edges) - 1
    k = np.arange(n + 1) / n
    flat = np.asarray(a)
    lo = (flat == np.min(flat))
    hi = (flat == np.max(flat))
    return 1 - k, k, lo / np.sum(lo), hi / np.sum(hi)


def hist_edges_grad(ct, a, edges, bins=10, range=None):
    """The VJP of np.histogram_bin_edges in `a`: where the edges are
    ``linspace(min(a), max(a), n + 1)`` (numpy's when no range= and bins an int or an
    estimator's name), their cotangent goes to the min and max elements (as JAX's)."""
    res = np.zeros(np.shape(a), _float(a))
    w = _edges_weights(a, edges, bins, range)
    if w is None:
        return res
    w_lo, w_hi, lo, hi = w
    ct = np.asarray(ct)
    return (res + np.sum(ct * w_lo) * lo + np.sum(ct * w_hi) * hi).astype(res.dtype)


def hist_edges_tangent(t, a, edges, bins=10, range=None):
    """The JVP of np.histogram_bin_edges (`hist_edges_grad`'s transpose): the tangent of
    min(a) and max(a) spread along the edges."""
    w = _edges_weights(a, edges, bins, range)
    dtype = _float(t)
    if w is None:
        return np.zeros(np.shape(edges), dtype)
    w_lo, w_hi, lo, hi = w
    t = np.asarray(t)
    return (np.sum(t * lo) * w_lo + np.sum(t * hi) * w_hi).astype(dtype)
