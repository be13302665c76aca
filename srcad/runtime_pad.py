"""np.pad's derivatives in the modes that compute the border from the array rather than copy
it: ``mean``, ``maximum``, ``minimum``, ``median`` (a statistic of the first / last
``stat_length`` cells along the axis) and ``linear_ramp`` (a line from ``end_values`` to the
edge cell). numpy fills the border one axis after the other, each axis from what the axes
before it left (the corners come from the earlier axes' borders), so the VJP walks the axes
backward and the JVP forward; the statistic's cells are read from np.pad's own output (`out`:
the values each axis's statistic saw, computed again from the array: the constant modes,
the common ones, keep nothing more for their backward). `maximum` / `minimum` send a border
cell's cotangent to the extreme cells of its window, split evenly among ties (as srcad's max
rule); `median` to the middle cell (the two middle cells, half each, for an even window)."""

from __future__ import annotations

import numpy as np

from .errors import SrcadError

# np.pad's modes whose border is a statistic of a window of the array, or a ramp to its edge
STAT_PAD_MODES = ("mean", "maximum", "minimum", "median", "linear_ramp")


def _pairs(value, ndim, default):
    """np.pad's per-axis (before, after) pairs of an int, a pair or per-axis pairs."""
    if value is None:
        return [(default[k], default[k]) for k in range(ndim)]
    return [tuple(int(v) for v in p)
            for p in np.broadcast_to(np.asarray(value, dtype=np.intp), (ndim, 2))]


def _roi(pairs, shape, k):
    """numpy's region for axis k: every axis up to k whole, the later ones their middle."""
    return tuple(slice(None) if j <= k else slice(b, b + n)
                 for j, ((b, _), n) in enumerate(zip(pairs, shape)))


def _ramp(width, left):
    """The weight of the edge cell in each border cell of a ramp (the rest is end_values')."""
    w = np.arange(width) / width
    return w if left else w[::-1]


def _weights(vals, mode):
    """How each cell of a window makes its statistic: weights along the last axis, summing
    to 1 (the statistic's derivative in each cell)."""
    n = vals.shape[-1]
    if mode == "mean":
        return np.full(vals.shape, 1.0 / n)
    if mode in ("maximum", "minimum"):
        ext = (np.max if mode == "maximum" else np.min)(vals, axis=-1, keepdims=True)
        hit = (vals == ext).astype(float)
        return hit / np.sum(hit, axis=-1, keepdims=True)
    order = np.argsort(vals, axis=-1, kind="stable")  # median: the middle cell(s)
    out = np.zeros(vals.shape)
    mids = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    for m in mids:
        np.put_along_axis(out, order[..., m:m + 1], 1.0 / len(mids), axis=-1)
    return out


def _sides(mode, pairs, lengths, shape, k):
    """For axis k: (border slice, window slice or the edge index, left?) of each side with
    a border."""
    (b, a), n = pairs[k], shape[k]
    for width, left in ((b, True), (a, False)):
        if width == 0:
            continue
        border = slice(0, b) if left else slice(b + n, b + n + a)
        if mode == "linear_ramp":
            yield border, (b if left else b + n - 1), left, width
            continue
        length = lengths[k][0 if left else 1]
        length = n if length is None or length <= 0 else min(length, n)
        yield border, (slice(b, b + length) if left else slice(b + n - length, b + n)), left, \
            width


def _check(mode):
    if mode not in STAT_PAD_MODES:
        raise SrcadError(f"no derivative of np.pad with mode={mode!r}",
                         hint="pad with another mode, or register a rule for your padding")


def _lengths(stat_length, ndim):
    if stat_length is None:
        return [(None, None)] * ndim
    return [tuple(p) for p in _pairs(stat_length, ndim, None)]


def _padded(array, pad_width, mode, stat_length):
    return np.pad(array, pad_width, mode) if stat_length is None or mode == "linear_ramp" \
        else np.pad(array, pad_width, mode, stat_length=stat_length)


def stat_unpad(ct, array, pad_width, mode, stat_length=None):
    """The VJP of ``np.pad(array, pad_width, mode, stat_length=...)`` w.r.t. the array in a
    mode of `STAT_PAD_MODES`."""
    _check(mode)
    out = _padded(array, pad_width, mode, stat_length)
    shape = np.shape(array)
    pairs = _pairs(pad_width, len(shape), None)
    lengths = _lengths(stat_length, len(shape))
    g = np.array(ct, dtype=np.result_type(ct, array, 1.0), copy=True)
    for k in reversed(range(len(shape))):
        roi = _roi(pairs, shape, k)
        gk = np.moveaxis(g[roi], k, -1)  # (views: the adds land in g)
        ok = np.moveaxis(np.asarray(out)[roi], k, -1)
        for border, source, left, width in list(_sides(mode, pairs, lengths, shape, k)):
            pad = gk[..., border]
            if mode == "linear_ramp":
                gk[..., source] += np.sum(pad * _ramp(width, left), axis=-1)
            else:
                gk[..., source] += np.sum(pad, axis=-1, keepdims=True) * _weights(
                    ok[..., source], mode)
    middle = tuple(slice(b, b + n) for (b, _), n in zip(pairs, shape))
    return g[middle]


def stat_pad_tangent(t, array, pad_width, mode, stat_length=None):
    """The JVP of ``np.pad`` w.r.t. the array in a mode of `STAT_PAD_MODES`: the tangent
    padded with zeros, then each axis's border made from it as numpy makes the values'
    (the ramp's end_values are constants)."""
    _check(mode)
    out = _padded(array, pad_width, mode, stat_length)
    shape = np.shape(array)
    pairs = _pairs(pad_width, len(shape), None)
    lengths = _lengths(stat_length, len(shape))
    res = np.pad(np.asarray(t, dtype=np.result_type(t, array, 1.0)), pairs)
    for k in range(len(shape)):
        roi = _roi(pairs, shape, k)
        rk = np.moveaxis(res[roi], k, -1)
        ok = np.moveaxis(np.asarray(out)[roi], k, -1)
        for border, source, left, width in list(_sides(mode, pairs, lengths, shape, k)):
            if mode == "linear_ramp":
                rk[..., border] = rk[..., source][..., None] * _ramp(width, left)
            else:
                rk[..., border] = np.sum(rk[..., source] * _weights(ok[..., source], mode),
                                         axis=-1, keepdims=True)
    return res
