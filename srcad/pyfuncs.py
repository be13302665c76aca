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

numpy's polynomial fits and divisions (np.polyfit, np.poly, np.polydiv) are here too, written
as numpy writes them (the same calls in the same order, so the same values) with rows that
exist (np.vander, np.linalg.lstsq, np.convolve, copy-on-write subscripts); and np.poly1d
built inside differentiated code is this module's `poly1d` class (`CLASS_SUBSTITUTES`:
frontend/objects.py builds it as a user class, tape mode calls it).

Before/after:
    statistics.median(x)        ->  pyfuncs.median(x):  s = np.sort(np.array(x)); middle of s
    np.polyfit(x, y, 2)         ->  pyfuncs.polyfit(x, y, 2):  lstsq of the scaled vander(x, 3)
"""

from __future__ import annotations

import builtins
import copy as copy_module
import dataclasses
import functools
import importlib
import math
import operator
import statistics
import sys
import types

import numpy as np

from .runtime_arrays import unsupported_derivative
from .runtime_gathers import hist_counts, histdd_counts
from .runtime_python import (
    copied_as_itself,
    py_correlation,
    py_covariance,
    py_dist,
    py_fsum,
    py_geometric_mean,
    py_harmonic_mean,
    py_mean,
    py_stdev,
    py_variance,
    sort_order,
)


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


def median_low(data):
    """statistics.median_low: the lower middle item in sorted order."""
    s = np.sort(np.array(data))
    return s[(s.shape[0] - 1) // 2]


def median_high(data):
    """statistics.median_high: the higher middle item in sorted order."""
    s = np.sort(np.array(data))
    return s[s.shape[0] // 2]


def geometric_mean(data):
    """statistics.geometric_mean: exp of the mean log."""
    return py_geometric_mean(np.array(data, dtype=float))


def harmonic_mean(data, weights=None):
    """statistics.harmonic_mean: sum(w) / sum(w / x) (w ones without weights)."""
    a = np.array(data, dtype=float)
    if weights is None:
        return py_harmonic_mean(a, np.ones_like(a))
    return py_harmonic_mean(a, np.array(weights, dtype=float))


def covariance(x, y):
    """statistics.covariance: the sample covariance (n - 1)."""
    return py_covariance(np.array(x, dtype=float), np.array(y, dtype=float))


def correlation(x, y, method="linear"):
    """statistics.correlation: Pearson's r ('linear') or Spearman's ('ranked')."""
    return py_correlation(np.array(x, dtype=float), np.array(y, dtype=float), method)


def prod(data, start=1):
    """math.prod: start times the items, one multiplication at a time from the left, as
    Python's (so the value is math.prod's)."""
    out = start
    for v in data:
        out = out * v
    return out


def dist(p, q):
    """math.dist: the Euclidean distance between two points given as sequences."""
    return py_dist(np.array(p, dtype=float), np.array(q, dtype=float))


# --- numpy's polynomial fits and divisions: numpy's own steps, so the values are numpy's ------
def poly(seq_of_zeros):
    """np.poly of a 1-D sequence of roots: the product of (x - r), one convolution per root
    (numpy's loop). A square matrix's characteristic polynomial goes through its eigenvalues,
    which are complex: refused."""
    seq = np.atleast_1d(seq_of_zeros)
    if seq.ndim != 1:
        unsupported_derivative("np.poly of a matrix (its eigenvalues are complex)")
    seq = seq.astype(np.mintypecode(seq.dtype.char))
    a = np.ones((1,), dtype=seq.dtype)
    for i in range(seq.shape[0]):
        a = np.convolve(a, np.concatenate((np.ones((1,), dtype=seq.dtype), -seq[i:i + 1])))
    return a


def polydiv(u, v):
    """np.polydiv: numpy's long division (the quotient's coefficients one at a time, the
    remainder's leading zeros dropped)."""
    u = np.atleast_1d(u) + 0.0
    v = np.atleast_1d(v) + 0.0
    w = u[0] + v[0]
    m = u.shape[0] - 1
    n = v.shape[0] - 1
    scale = 1. / v[0]
    q = np.zeros((m - n + 1 if m - n + 1 > 1 else 1,), w.dtype)  # noqa: FURB136 (ints)
    r = u.astype(w.dtype)
    for k in range(m - n + 1):
        d = scale * r[k]
        q[k] = d
        r[k:k + n + 1] = r[k:k + n + 1] - d * v
    while np.allclose(r[0], 0, rtol=1e-14) and r.shape[-1] > 1:
        r = r[1:]
    return q, r


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """np.polyfit: the least-squares solve of the column-scaled Vandermonde system (numpy's
    steps, through np.linalg.lstsq's row); full= and cov= are refused."""
    if full or cov:
        unsupported_derivative("np.polyfit with full=True or cov=True")
    order = int(deg) + 1
    x = np.asarray(x) + 0.0
    y = np.asarray(y) + 0.0
    if rcond is None:
        rcond = x.shape[0] * np.finfo(x.dtype).eps
    lhs = np.vander(x, order)
    rhs = y
    if w is not None:
        w = np.asarray(w) + 0.0
        lhs = lhs * w[:, None]
        if rhs.ndim == 2:
            rhs = rhs * w[:, None]
        else:
            rhs = rhs * w
    scale = np.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale
    c = np.linalg.lstsq(lhs, rhs, rcond)[0]
    return (c.T / scale).T


class poly1d:
    """np.poly1d built inside differentiated code: the coefficient array (highest power first)
    and numpy's polynomial functions on it, so that calling it, its derivative, integral and
    arithmetic differentiate through np.polyval / polyder / polyint / polyadd / polysub /
    polymul. Source mode scalarises it (frontend/objects.py: each method a function of the
    coefficients; a method's new poly1d is the caller's object; ``p + q`` is ``p.__add__(q)``);
    tape mode calls it. Each method builds its result once, after branches that compute the
    coefficients (a branch on ``isinstance(other, poly1d)`` is decided statically there).
    Leading zero coefficients are kept (numpy drops them; their derivative is not zero), so
    ``coeffs`` and ``order`` can be longer than numpy's where a leading coefficient is 0;
    ``roots`` (complex in general), ``p / q`` of two polynomials (a quotient and a remainder:
    np.polydiv on the coefficients has a rule) and composition ``p(q)`` are not here."""

    def __init__(self, c_or_r, r=False, variable=None):
        self.coeffs = np.atleast_1d(c_or_r) if not r else poly(c_or_r)
        self.variable = "x" if variable is None else variable

    def __call__(self, val):
        return np.polyval(self.coeffs, val)

    @property
    def order(self):
        return self.coeffs.shape[0] - 1

    @property
    def o(self):
        return self.coeffs.shape[0] - 1

    @property
    def c(self):
        return self.coeffs

    @property
    def coef(self):
        return self.coeffs

    @property
    def coefficients(self):
        return self.coeffs

    def __len__(self):
        return self.order

    def deriv(self, m=1):
        return poly1d(np.polyder(self.coeffs, m))

    def integ(self, m=1, k=0):
        return poly1d(np.polyint(self.coeffs, m, k))

    def __neg__(self):
        return poly1d(-self.coeffs)

    def __pos__(self):
        return poly1d(self.coeffs)

    def __add__(self, other):
        if isinstance(other, poly1d):
            c = np.polyadd(self.coeffs, other.coeffs)
        else:
            c = np.polyadd(self.coeffs, np.atleast_1d(other))
        return poly1d(c)

    def __radd__(self, other):
        return poly1d(np.polyadd(np.atleast_1d(other), self.coeffs))

    def __sub__(self, other):
        if isinstance(other, poly1d):
            c = np.polysub(self.coeffs, other.coeffs)
        else:
            c = np.polysub(self.coeffs, np.atleast_1d(other))
        return poly1d(c)

    def __rsub__(self, other):
        return poly1d(np.polysub(np.atleast_1d(other), self.coeffs))

    def __mul__(self, other):
        # numpy: a scalar scales the coefficients; an array holds a polynomial's coefficients
        if isinstance(other, poly1d):
            c = np.polymul(self.coeffs, other.coeffs)
        elif np.isscalar(other):
            c = self.coeffs * other
        else:
            c = np.polymul(self.coeffs, np.atleast_1d(other))
        return poly1d(c)

    def __rmul__(self, other):
        if np.isscalar(other):
            c = other * self.coeffs
        else:
            c = np.polymul(np.atleast_1d(other), self.coeffs)
        return poly1d(c)

    def __truediv__(self, other):
        if isinstance(other, poly1d) or not np.isscalar(other):
            raise TypeError("srcad: p / q of two polynomials (numpy's quotient and remainder) "
                            "is not followed; use np.polydiv(p.coeffs, q.coeffs)")
        return poly1d(self.coeffs / other)

    def __pow__(self, val):
        if not np.isscalar(val) or int(val) != val or val < 0:
            raise ValueError("Power to non-negative integers only.")
        c = np.ones(1)
        for _ in range(int(val)):
            c = np.polymul(self.coeffs, c)
        return poly1d(c)


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
    copied_as_itself(x)  # (a number, a tuple: given back, as Python does; else refused)
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
    copied_as_itself(x)
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


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002  (numpy's)
    """np.histogram: numpy's counts (`hist_counts`, linear in the weights) and its bin edges
    (np.histogram_bin_edges' row: through min(a) and max(a) where they set them, as JAX's);
    density= divides by the bins' widths and the total, as numpy does."""
    edges = np.histogram_bin_edges(a, bins, range, weights)
    counts = hist_counts(a, bins, range, weights)
    if density:
        db = np.diff(edges).astype(float)
        return counts / db / np.sum(counts), edges
    return counts, edges


def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """np.histogramdd: numpy's counts (`histdd_counts`, linear in the weights) and each
    dimension's edges through np.histogram_bin_edges' row (numpy's linspace between the
    coordinate's min and max, or range=, or the edges given); density= divides by each
    dimension's bin widths, then the total, as numpy does. `sample`: an (N, D) array, or D
    arrays of N coordinates (a 1-D array: one dimension)."""
    return _histogramdd(sample, bins, range, density, weights)


def _histogramdd(sample, bins, ranges, density, weights):
    # (`range` is not a local here: the loops below are lowered to range())
    if isinstance(sample, (list, tuple)) or np.ndim(sample) < 2:
        sample = np.atleast_2d(sample).T
    dims = np.shape(sample)[1]
    if np.ndim(bins) != 0 or isinstance(bins, (list, tuple)):
        per_bins = list(bins)
    else:
        per_bins = [bins for _ in range(dims)]
    if len(per_bins) != dims:
        raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
    per_range = [None] * dims if ranges is None else list(ranges)
    edges = [np.histogram_bin_edges(sample[:, i], per_bins[i], per_range[i])
             for i in range(dims)]
    counts = histdd_counts(sample, bins, ranges, weights)
    if density:
        total = np.sum(counts)
        for i in range(dims):
            shape = [1] * dims
            shape[i] = -1
            counts = counts / np.reshape(np.diff(edges[i]), shape)
        counts = counts / total
    return counts, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """np.histogram2d: np.histogramdd of the points (x, y) (srcad/pyfuncs.py's), its two edge
    arrays apart; one array of edges given for both dimensions as numpy reads it."""
    if np.ndim(bins) == 1 and len(bins) not in (1, 2):
        bins = [bins, bins]
    counts, edges = np.histogramdd([x, y], bins, range, density, weights)
    return counts, edges[0], edges[1]


def generator_normal(rng, loc=0.0, scale=1.0, size=None):
    """`rng.normal(loc, scale, size)` of a numpy Generator or RandomState: its own draw is
    `loc + scale * z` of its standard normal -- the same numbers, differentiable in loc and
    scale (frontend/calls.py calls this for the method)."""
    if np.any(np.less(scale, 0)):
        raise ValueError("scale < 0")
    return loc + scale * rng.standard_normal(
        size if size is not None else np.broadcast_shapes(np.shape(loc), np.shape(scale)))


def generator_uniform(rng, low=0.0, high=1.0, size=None):
    """`rng.uniform(low, high, size)`: `low + (high - low) * u` of its uniform draw."""
    return low + (high - low) * rng.random(
        size if size is not None else np.broadcast_shapes(np.shape(low), np.shape(high)))


def generator_exponential(rng, scale=1.0, size=None):
    """`rng.exponential(scale, size)`: `scale * e` of its standard exponential draw."""
    if np.any(np.less(scale, 0)):
        raise ValueError("scale < 0")
    return scale * rng.standard_exponential(size if size is not None else np.shape(scale))


# numpy's global generator, the one `np.random.normal` and its siblings draw from (the
# module functions are its bound methods; np.random.seed reseeds this very object)
_GLOBAL_STATE = np.random.normal.__self__


def random_normal(loc=0.0, scale=1.0, size=None):
    """np.random.normal(loc, scale, size): the global generator's `normal` (above)."""
    return generator_normal(_GLOBAL_STATE, loc, scale, size)


def random_uniform(low=0.0, high=1.0, size=None):
    """np.random.uniform(low, high, size): the global generator's `uniform` (above)."""
    return generator_uniform(_GLOBAL_STATE, low, high, size)


def random_exponential(scale=1.0, size=None):
    """np.random.exponential(scale, size): the global generator's `exponential` (above)."""
    return generator_exponential(_GLOBAL_STATE, scale, size)


# a random generator's methods whose draw srcad writes as numpy computes it (above)
GENERATOR_DRAWS = {"normal": generator_normal, "uniform": generator_uniform,
                   "exponential": generator_exponential}


def _substitutes() -> dict:

    return {math.fsum: fsum, statistics.mean: mean, statistics.fmean: fmean,
            statistics.median: median, statistics.variance: variance,
            statistics.pvariance: pvariance, statistics.stdev: stdev,
            statistics.pstdev: pstdev, copy_module.copy: copy,
            statistics.median_low: median_low, statistics.median_high: median_high,
            statistics.geometric_mean: geometric_mean,
            statistics.harmonic_mean: harmonic_mean, statistics.covariance: covariance,
            statistics.correlation: correlation, math.prod: prod, math.dist: dist,
            np.poly: poly, np.polydiv: polydiv, np.polyfit: polyfit, np.histogram: histogram,
            np.histogramdd: histogramdd, np.histogram2d: histogram2d,
            copy_module.deepcopy: deepcopy, np.random.normal: random_normal,
            np.random.uniform: random_uniform, np.random.exponential: random_exponential}


class _Substitutes(dict):
    """The library function -> the function srcad differentiates in its place; the entries
    of an optional library (scipy.stats: srcad/pystats.py) join the first time the table is
    asked after the user's code imported it (srcad never imports it itself)."""

    def _due(self) -> None:
        for module, helper in list(_OPTIONAL.items()):
            if module in sys.modules:
                del _OPTIONAL[module]
                try:
                    mod = importlib.import_module(helper)
                except ImportError:  # (not installed after all: no entries)
                    continue
                self.update(mod.substitutes())
                SUBSTITUTED_OWNERS.update((id(o), o) for o in mod.owners())
                CLASS_SUBSTITUTES.update(getattr(mod, "class_substitutes", dict)())
                if hasattr(mod, "frozen_method"):
                    METHOD_SUBSTITUTES.append((mod.frozen_distribution, mod.frozen_method))

    def _method(self, key):
        """The substitute of a method of a library object made outside the differentiated
        function (a module's ``PRIOR = scipy.stats.norm(0, 1)``: ``PRIOR.logpdf``), made from
        the object as it is now; None for anything else."""
        if type(key) is not types.MethodType:
            return None
        for _, fn in METHOD_SUBSTITUTES:
            sub = fn(key)
            if sub is not None:
                return sub
        return None

    def __contains__(self, key) -> bool:
        if _OPTIONAL:
            self._due()
        return dict.__contains__(self, key) or (
            bool(METHOD_SUBSTITUTES) and self._method(key) is not None)

    def __getitem__(self, key):
        if _OPTIONAL:
            self._due()
        if METHOD_SUBSTITUTES and not dict.__contains__(self, key):
            sub = self._method(key)
            if sub is not None:
                return sub
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        if _OPTIONAL:
            self._due()
        if METHOD_SUBSTITUTES and not dict.__contains__(self, key):
            sub = self._method(key)
            if sub is not None:
                return sub
        return dict.get(self, key, default)


# module an optional library's functions are imported from -> srcad's module of their
# substitutes (`optional_substitutes`); `_Substitutes._due` empties it
_OPTIONAL: dict = {}
# id -> a library object some of whose methods are substituted (scipy.stats.norm: its
# `logpdf`); tape mode shows it through a view that calls the substitutes
SUBSTITUTED_OWNERS: dict = {}
# (is this a library object whose methods are substituted, the method -> its substitute or
# None): objects made outside srcad's sight (srcad/pystats.py's `frozen_method`)
METHOD_SUBSTITUTES: list = []


def substituted_owner(obj) -> bool:
    """Is `obj` a library object with substituted methods (scipy.stats.norm)?"""
    if _OPTIONAL:
        SUBSTITUTES._due()
    return id(obj) in SUBSTITUTED_OWNERS and SUBSTITUTED_OWNERS[id(obj)] is obj or any(
        test(obj) for test, _ in METHOD_SUBSTITUTES)


def class_substitute(obj):
    """The class srcad builds where `obj` is called (srcad/pyfuncs.py's poly1d for np.poly1d;
    srcad/pystats.py's frozen distributions for scipy.stats.norm, ... called with their
    parameters), or obj itself."""
    if _OPTIONAL:
        SUBSTITUTES._due()
    try:
        return CLASS_SUBSTITUTES.get(obj, obj)
    except TypeError:  # (unhashable)
        return obj


def optional_substitutes(module: str, helper: str) -> None:
    """Substitutes for an optional library's functions, in srcad's module `helper` (which
    imports the library; it defines `substitutes()` and `owners()`), loaded once `module`
    is imported by the user's code."""
    _OPTIONAL[module] = helper


SUBSTITUTES = _Substitutes(_substitutes())
optional_substitutes("scipy.stats", "srcad.pystats")
# library classes srcad builds as user classes in their place (frontend/objects.py; tape mode)
CLASS_SUBSTITUTES = {np.poly1d: poly1d}


def _tape_only() -> dict:

    # (source mode rewrites these calls: frontend/pylevel.py; None: the callable as it is,
    # given the Tensors themselves -- not a library function seeing plain values)
    # (dataclasses.replace: the user's class made again from the fields, Tensors and all;
    # source mode writes it as that class's call, frontend/pyforms.py)
    # (`operator.isub(y, t)`: the Tensor's own `__isub__`, numpy's write in place --
    # source mode writes `tmp = y; tmp -= t`, frontend/pylower.py in_place_operator)
    in_place = {getattr(operator, f"i{k}"): None for k in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul")}
    return {functools.reduce: None, builtins.map: None, builtins.sorted: sorted_,
            dataclasses.replace: None, **in_place}


# what tape mode calls in place of a callable (on top of SUBSTITUTES)
TAPE_ONLY = _tape_only()


def _labels() -> dict:

    def spelled(obj):
        module = {"numpy": "np", "builtins": ""}.get(obj.__module__, obj.__module__)
        return f"{module}.{obj.__name__}" if module else obj.__name__

    out = {fn: spelled(obj) for table in (SUBSTITUTES, CLASS_SUBSTITUTES, TAPE_ONLY)
           for obj, fn in table.items() if fn is not None}
    out.update({sorted_by: "sorted", tolist: "x.tolist"})
    return {getattr(fn, "__name__", fn): name for fn, name in out.items()}


# a function or class of this module's name -> the call it stands in for, as users write it
# ("histogram" -> "np.histogram"): what a refusal inside it names (srcad.errors.at_call_site)
LABELS = _labels()


def label_of(name: str) -> str | None:
    """The call a function of this module named `name` stands in for ("histogram" ->
    "np.histogram", "poly1d.deriv" -> "np.poly1d.deriv"); None for another name."""
    head, dot, rest = name.partition(".")
    if rest in ("__init__", "__call__"):  # (np.poly1d(c), p(x): the class's own call)
        dot, rest = "", ""
    return LABELS[head] + dot + rest if head in LABELS else None
