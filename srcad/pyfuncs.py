"""Python-level functions people apply to arrays, written in the numpy srcad differentiates.

``statistics.mean(x)``, ``math.fsum(x)``, ``sorted(x)``, ... have no derivative rule of their
own: srcad calls the function of the same meaning here in their place (frontend/calls.py's
`SUBSTITUTES` in source mode, tape.py's `wrap` in tape mode), and these functions are traced
as the user's own code (frontend/opaque.py: this module is not a library), so both modes
differentiate the same numpy calls, first and second order, reverse and forward.

Each takes what its original takes: a list (or tuple) of scalars or a 1-D array. The values
are Python's: ``fsum`` and the ``statistics`` functions are rows (srcad/ops/python_rows.py)
whose value is the original's (exact sums, correctly rounded) and whose derivative is the plain
formula's.

Before/after:
    statistics.median(x)        ->  pyfuncs.median(x):  s = np.sort(np.array(x)); middle of s
"""

from __future__ import annotations

import builtins
import copy as copy_module
import functools
import math
import statistics

import numpy as np

from .runtime_python import py_fsum, py_mean, py_stdev, py_variance, sort_order


def fsum(data):
    """math.fsum: the exactly rounded sum of the items."""
    return py_fsum(np.array(data, dtype=float))


def mean(data):
    """statistics.mean: the correctly rounded mean."""
    return py_mean(np.array(data, dtype=float), True)


def fmean(data):
    """statistics.fmean: math.fsum of the items over their number."""
    return py_mean(np.array(data, dtype=float), False)


def median(data):
    """statistics.median: the middle item in sorted order (the mean of the two middle ones
    for an even number of items)."""
    s = np.sort(np.array(data))
    n = s.shape[0]
    if n % 2 == 1:
        return s[n // 2]
    return (s[n // 2 - 1] + s[n // 2]) / 2


def pvariance(data):
    """statistics.pvariance: the mean squared deviation from the mean."""
    return py_variance(np.array(data, dtype=float), 0)


def variance(data):
    """statistics.variance: the squared deviations from the mean over n - 1."""
    return py_variance(np.array(data, dtype=float), 1)


def pstdev(data):
    """statistics.pstdev: the square root of pvariance."""
    return py_stdev(np.array(data, dtype=float), 0)


def stdev(data):
    """statistics.stdev: the square root of variance."""
    return py_stdev(np.array(data, dtype=float), 1)


def sorted_by(data, keys, reverse):
    """sorted(data, key=..., reverse=...) with the keys already computed (a list, or None for
    the items themselves): a stable sort, as Python's, reversed in the same stable way; the
    result is a list of the items, each carrying its own derivative."""
    items = list(data)  # (a dict's keys, a list's items, an array's elements)
    order = sort_order(items if keys is None else keys, reverse)
    return [items[i] for i in order]


def sorted_(data, key=None, reverse=False):
    """sorted(data, key=..., reverse=...) as tape mode runs it (source mode computes the keys
    in the user's function: frontend/pylevel.py)."""
    if not isinstance(data, (list, tuple, np.ndarray)):  # (a dict's keys, a generator)
        data = list(data)
    keys = None if key is None else [key(v) for v in data]
    return sorted_by(data, keys, reverse)


def copy(x):
    """copy.copy: a new array (np.copy) or a new list / tuple / dict of the same items."""
    if isinstance(x, np.ndarray):
        return np.copy(x)
    if isinstance(x, list):
        return [v for v in x]
    if isinstance(x, dict):
        return {k: v for k, v in x.items()}
    return x


def deepcopy(x):
    """copy.deepcopy of an array, a number, or a list / tuple / dict of arrays and numbers
    (one level: deeper containers are refused by srcad as recursion)."""
    if isinstance(x, np.ndarray):
        return np.copy(x)
    if isinstance(x, list):
        return [np.copy(v) if isinstance(v, np.ndarray) else v for v in x]
    if isinstance(x, tuple):
        return tuple(np.copy(v) if isinstance(v, np.ndarray) else v for v in x)
    if isinstance(x, dict):
        return {k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in x.items()}
    return x


def tolist(x):
    """x.tolist() of an array: nested lists of Python numbers (`x.item()` of each element),
    each float carrying its element's derivative. Built flat and then grouped from the last
    axis outwards (a loop, not recursion, so any number of dimensions)."""
    if x.ndim == 0:
        return x.item()
    if x.ndim == 1:
        return [v.item() for v in x]
    items = [v.item() for v in x.reshape(-1)]
    shape = x.shape
    for axis in range(x.ndim - 1, 0, -1):
        n = shape[axis]
        groups = len(items) // n if n else int(np.prod(shape[:axis]))
        items = [items[i * n:(i + 1) * n] for i in range(groups)]
    return items


def _substitutes() -> dict:

    return {math.fsum: fsum, statistics.mean: mean, statistics.fmean: fmean,
            statistics.median: median, statistics.variance: variance,
            statistics.pvariance: pvariance, statistics.stdev: stdev,
            statistics.pstdev: pstdev, copy_module.copy: copy,
            copy_module.deepcopy: deepcopy}


# the library function -> the function srcad differentiates in its place
SUBSTITUTES = _substitutes()


def _tape_only() -> dict:

    # (source mode rewrites these calls: frontend/pylevel.py; None: the callable as it is,
    # given the Tensors themselves -- not a library function seeing plain values)
    return {functools.reduce: None, builtins.map: None, builtins.sorted: sorted_}


# what tape mode calls in place of a callable (on top of SUBSTITUTES)
TAPE_ONLY = _tape_only()
