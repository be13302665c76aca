"""Constants the polynomial and array-builder rows' rules read (srcad/ops/polynomials.py): each
depends only on arguments that have no gradient, so it is a row without one."""

from __future__ import annotations

import numpy as np


def trapezoid_weights(n, x=None, dx=1.0, axis=-1):
    """The weight of each of n samples in np.trapezoid: the spacings averaged over each point's
    two intervals (half at the ends), with the samples' axis last -- x 1-D sample points
    (shape (n,)), x of more dimensions (its spacings along `axis`, as numpy takes them), else
    a spacing dx.

    >>> trapezoid_weights(4, np.array([0.0, 1.0, 3.0, 4.0])).tolist()
    [0.5, 1.5, 1.5, 0.5]
    """
    if x is None:
        d = dx * np.ones(max(n - 1, 0))
    else:
        x = np.asarray(x)
        d = np.diff(x) if x.ndim == 1 else np.moveaxis(np.diff(x, axis=axis), axis, -1)
    # (the spacings with a zero at either end: each point's interval before and after)
    end = np.zeros(d.shape[:-1] + (1,), dtype=d.dtype)
    z = np.concatenate((end, d, end), axis=-1)
    return 0.5 * (z[..., :-1] + z[..., 1:])


def count_of(v):
    """The number of values in v (0 for None): np.ediff1d's to_begin."""
    return 0 if v is None else int(np.size(np.asarray(v)))


def _reduced(ndim, axis):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(sorted(int(a) % ndim for a in axes))


def vn_perm(ndim, axis):
    """np.linalg.vector_norm's reduced axes moved last: the transpose's axes."""
    red = _reduced(ndim, axis)
    return tuple(a for a in range(ndim) if a not in red) + red


def vn_unperm(ndim, axis):
    """The inverse of `vn_perm`."""
    return tuple(int(i) for i in np.argsort(vn_perm(ndim, axis)))


def vn_shapes(shape, axis, which):
    """Shapes for vector_norm over `axis` as a norm over one last axis: "flat" (kept axes, then
    the reduced ones as one), "keep" (kept axes, then 1), "perm" (the transposed shape)."""
    red = _reduced(len(shape), axis)
    kept = tuple(n for a, n in enumerate(shape) if a not in red)
    if which == "perm":
        return kept + tuple(shape[a] for a in red)
    return kept + ((int(np.prod([shape[a] for a in red], dtype=np.int64)),) if which == "flat"
                   else (1,))


def power_sum(ct, m, n):
    """sum over k < n of m^k ct m^(n-1-k) (matrices: the last two axes; 0 for n <= 0): the
    derivative of m^n along ct, and, with m transposed, its transpose."""
    n = int(n)
    ct = np.asarray(ct)
    if n <= 0:
        return np.zeros(np.broadcast_shapes(np.shape(ct), np.shape(m)),
                        dtype=np.result_type(ct, m))
    powers = [np.broadcast_to(np.eye(np.shape(m)[-1], dtype=np.result_type(m)), np.shape(m))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ m)
    return sum(powers[k] @ ct @ powers[n - 1 - k] for k in range(n))


def space_fraction(shape, num, endpoint=True, axis=0):
    """Where each point of np.linspace / logspace / geomspace's output (of this shape) sits
    between its endpoints: 0 at start to 1 at stop (short of 1 without the endpoint), along
    `axis`."""
    t = np.linspace(0.0, 1.0, int(num), endpoint=endpoint)
    along = [1] * len(shape)
    along[int(axis) % max(len(shape), 1)] = int(num)
    return np.broadcast_to(np.reshape(t, along), tuple(shape))


_THETA = (np.arange(256) + 0.5) * (np.pi / 256)  # (the midpoint rule on [0, pi])


def bessel_i1(x):
    """The modified Bessel function I1 (np.i0's derivative), as (1/pi) times the integral over
    [0, pi] of exp(x cos t) cos t: the midpoint rule of a smooth periodic integrand converges
    geometrically (to rounding for |x| up to several hundred with 256 points)."""
    x = np.asarray(x)
    c = np.cos(_THETA).astype(np.result_type(x, np.float32) if x.dtype.kind == "f"
                               else np.float64)
    return np.mean(np.exp(np.multiply.outer(x, c)) * c, axis=-1)


__all__ = ["bessel_i1", "count_of", "power_sum", "space_fraction", "trapezoid_weights", "vn_perm", "vn_shapes", "vn_unperm"]
