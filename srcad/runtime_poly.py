"""Constants the polynomial and array-builder rows' rules read (srcad/ops/polynomials.py): each
depends only on arguments that have no gradient, so it is a row without one."""

from __future__ import annotations

import numpy as np


def trapezoid_weights(n, x=None, dx=1.0):
    """The weight of each of n samples in np.trapezoid: the spacings averaged over each point's
    two intervals (half at the ends); x 1-D sample points, else a spacing dx."""
    d = np.diff(np.asarray(x)) if x is not None else dx * np.ones(max(n - 1, 0))
    return np.convolve(d, [0.5, 0.5]) if n > 1 else np.zeros(n)


def count_of(v):
    """The number of values in v (0 for None): np.ediff1d's to_begin."""
    return 0 if v is None else int(np.size(np.asarray(v)))


__all__ = ["count_of", "trapezoid_weights"]
