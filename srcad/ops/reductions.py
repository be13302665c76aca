"""Reductions: sum, mean, max, min, prod, var, std, nansum, nanmean (axis: None, int,
negative, tuple; keepdims), cumsum and cumprod.

A reduction's backward broadcasts ``g`` back over the reduced axes (`unreduce`, which
re-inserts them when ``keepdims=False``). ``np.size(a) // np.size(g)`` is the number of
elements reduced into each output (``g`` has the output's shape); once shapes are known it
folds to a constant, so nothing but ``a`` is saved for it. For an empty ``a`` (its gradient
is empty whatever the count) the count is guarded with ``max``, as ``0 // 0`` and
``1.0 / 0`` raise in Python: the mean's divisor is then 1, not 0 (numpy's mean of an empty
array is NaN, with a RuntimeWarning; torch's and autograd's gradient is empty).
"""

import numpy as np

from ..runtime import (
    cumprod_grad,
    cumprod_jvp,
    cumsum_grad,
    extremum_grad,
    extremum_jvp,
    prod_grad,
    unreduce,
)
from .table import defjvp, defvjp

_SHAPE = (2, 3, 4)


def _cases(fn: str, **extra) -> tuple:
    """Every axis form a reduction takes, on a (2, 3, 4) input unless said otherwise."""
    cases = [
        (f"np.{fn}(a)", [_SHAPE]),
        (f"np.{fn}(a)", [()]),
        (f"np.{fn}(a, axis=0)", [(5,)]),
        (f"np.{fn}(a, axis=1)", [_SHAPE]),
        (f"np.{fn}(a, 0)", [(3, 4)]),
        (f"np.{fn}(a, axis=-1)", [_SHAPE]),
        (f"np.{fn}(a, axis=(0, 2))", [_SHAPE]),
        (f"np.{fn}(a, axis=(-1, 0))", [_SHAPE]),
        (f"np.{fn}(a, axis=1, keepdims=True)", [_SHAPE]),
        (f"np.{fn}(a, axis=(0, -1), keepdims=True)", [_SHAPE]),
        (f"np.{fn}(a, keepdims=True)", [_SHAPE]),
        (f"np.{fn}(a, axis=-2, keepdims=False)", [_SHAPE]),
    ]
    if extra.get("method", True):
        cases += [(f"a.{fn}(axis=1)", [(3, 4)]), (f"a.{fn}()", [(3, 4)])]
    return tuple(cases)


defvjp(np.sum, lambda g, out, a, axis=None, keepdims=False: unreduce(g, a, axis, keepdims),
       name="sum", linear=('a',), family="reduction", test_cases=_cases("sum"), c_row="sum",
       derivation="each input element contributes once: broadcast g back")
defvjp(np.mean,
       lambda g, out, a, axis=None, keepdims=False:
           unreduce(g / max(np.size(a) // max(np.size(g), 1), 1), a, axis, keepdims),
       name="mean", linear=('a',), family="reduction", test_cases=_cases("mean"), c_row="mean",
       derivation="sum / n: broadcast g / n back (n = elements reduced into each output)")
defvjp(np.max,
       lambda g, out, a, axis=None, keepdims=False: extremum_grad(g, out, a, axis, keepdims),
       name="max", family="reduction", aliases=(np.amax,), c_row="max",
       test_cases=_cases("max") + (("np.amax(a, axis=1)", [(3, 4)]),),
       derivation="g flows to the maxima, split evenly among ties (as torch.amax)")
defvjp(np.min,
       lambda g, out, a, axis=None, keepdims=False: extremum_grad(g, out, a, axis, keepdims),
       name="min", family="reduction", aliases=(np.amin,), c_row="min",
       test_cases=_cases("min") + (("np.amin(a, axis=0)", [(3, 4)]),),
       derivation="g flows to the minima, split evenly among ties (as torch.amin)")
defvjp(np.prod,
       lambda g, out, a, axis=None, keepdims=False: prod_grad(g, a, axis, keepdims),
       name="prod", family="reduction", domain=(0.5, 1.5),
       aliases=(np.product,) if hasattr(np, "product") else (),  # (numpy < 2)
       test_cases=_cases("prod"),
       derivation="d prod = (product of the other elements) dx_i: exclusive cumulative "
       "products from both sides, exact where inputs are 0 (as torch)")
defvjp(np.var,
       lambda g, out, a, axis=None, ddof=0, keepdims=False:
           unreduce(g, a, axis, keepdims)
           * (2 * (a - np.mean(a, axis=axis, keepdims=True)) / (np.size(a) // max(np.size(g), 1) - ddof)),
       name="var", family="reduction",
       test_cases=_cases("var") + (("np.var(a, axis=1, ddof=1)", [(3, 4)]),
                                   ("np.var(a, ddof=1)", [(3, 4)]),
                                   ("a.var(axis=0, ddof=1, keepdims=True)", [(3, 4)]),
                                   ("a.var(1)", [(3, 4)])),
       derivation="var = sum((a - mean)^2) / (n - ddof); the mean's own term sums to 0, so "
       "d var = 2 (a - mean) / (n - ddof) da")
defvjp(np.std,
       lambda g, out, a, axis=None, ddof=0, keepdims=False:
           unreduce(g / np.where(out == 0, 1, out), a, axis, keepdims)
           * ((a - np.mean(a, axis=axis, keepdims=True)) / (np.size(a) // max(np.size(g), 1) - ddof)),
       name="std", family="reduction",
       test_cases=tuple(c for c in _cases("std") if c[1] != [()])
       + (("np.std(a, axis=0, ddof=1)", [(3, 4)]), ("a.std(axis=-1, ddof=1)", [(2, 3, 4)]),
          ("a.std(0, keepdims=True)", [(3, 4)]), ("np.std(a)", [()]),
          ("np.std(a, axis=0)", [(1, 3)])),
       derivation="std = sqrt(var): d std = d var / (2 std) = (a - mean) / ((n - ddof) std) da; "
       "where std = 0 (a - mean = 0 there) the subgradient 0, which central differences see "
       "(torch gives NaN)")
defvjp(np.cumsum, lambda g, out, a, axis=None: cumsum_grad(g, a, axis),
       name="cumsum", linear=('a',), family="reduction",
       test_cases=(("np.cumsum(a)", [(3, 4)]), ("np.cumsum(a, axis=0)", [(3, 4)]),
                   ("np.cumsum(a, axis=-1)", [(2, 3, 4)]), ("np.cumsum(a, 1)", [(2, 3, 4)])),
       derivation="out_i = sum_{j<=i} a_j, so da_j = sum_{i>=j} g_i: a reversed cumsum of g")

defvjp(np.cumprod, lambda g, out, a, axis=None: cumprod_grad(g, a, axis),
       name="cumprod", family="reduction",
       aliases=(np.cumproduct,) if hasattr(np, "cumproduct") else (),  # (numpy < 2)
       test_cases=(("np.cumprod(a)", [(3, 4)]), ("np.cumprod(a, axis=0)", [(3, 4)]),
                   ("np.cumprod(a, axis=-1)", [(2, 3, 4)]), ("np.cumprod(a, 1)", [(2, 3, 4)]),
                   ("np.cumprod(a)", [()]),
                   # exact with zeros: one zero, two zeros, a zero first
                   ("np.cumprod(a * (np.arange(4) != 1), axis=1)", [(2, 4)]),
                   ("np.cumprod(a * (np.arange(4) % 2))", [(4,)]),
                   ("np.cumprod(a * (np.arange(2)[:, None] == 1), axis=-1)", [(2, 3)]),
                   ("a.cumprod(axis=0)", [(3, 2)])),
       derivation="out_i = prod_{k<=i} a_k: da_j = (prod_{k<j} a_k) h_j with h_j = g_j + "
       "a_{j+1} h_{j+1}, a backward recurrence that never divides (exact with zeros)")
_NAN = "np.where(a > 1.5, np.nan, a)"  # NaNs where a > 1.5: they get no gradient
defvjp(np.nansum,
       lambda g, out, a, axis=None, keepdims=False:
           np.where(np.isnan(a), 0, unreduce(g, a, axis, keepdims)),
       name="nansum", family="reduction",
       test_cases=tuple((c.replace("(a", f"({_NAN}", 1), s) for c, s in _cases("nansum",
                                                                             method=False))
       + (("np.nansum(a, axis=1)", [(3, 4)]),),
       derivation="a sum that skips NaNs: broadcast g back, 0 where a is NaN")
defvjp(np.nanmean,
       lambda g, out, a, axis=None, keepdims=False:
           np.where(np.isnan(a), 0, unreduce(g / np.sum(np.logical_not(np.isnan(a)), axis=axis,
                                                       keepdims=keepdims), a, axis, keepdims)),
       name="nanmean", family="reduction",
       test_cases=tuple((c.replace("(a", f"({_NAN}", 1), s) for c, s in _cases("nanmean",
                                                                              method=False)
                        if s != [()] and s != [(5,)])
       + (("np.nanmean(a, axis=0)", [(3, 4)]),),
       derivation="nansum / n with n the number of non-NaN elements reduced into each output: "
       "broadcast g / n back, 0 where a is NaN")


# --- forward mode (the rows above that are neither elementwise nor linear) --------------------
defjvp(np.max, lambda g, out, a, axis=None, keepdims=False: extremum_jvp(g, out, a, axis, keepdims))
defjvp(np.min, lambda g, out, a, axis=None, keepdims=False: extremum_jvp(g, out, a, axis, keepdims))
defjvp(np.prod,
       lambda g, out, a, axis=None, keepdims=False:
           np.sum(prod_grad(np.ones_like(out), a, axis, keepdims) * g, axis=axis,
                  keepdims=keepdims))
defjvp(np.var,
       lambda g, out, a, axis=None, ddof=0, keepdims=False:
           np.sum(2 * (a - np.mean(a, axis=axis, keepdims=True)) * g, axis=axis,
                  keepdims=keepdims) / (np.size(a) // max(np.size(out), 1) - ddof))
defjvp(np.std,
       lambda g, out, a, axis=None, ddof=0, keepdims=False:
           np.sum((a - np.mean(a, axis=axis, keepdims=True)) * g, axis=axis, keepdims=keepdims)
           / ((np.size(a) // max(np.size(out), 1) - ddof) * np.where(out == 0, 1, out)))
defjvp(np.cumprod, lambda g, out, a, axis=None: cumprod_jvp(g, a, axis))
defjvp(np.nansum,
       lambda g, out, a, axis=None, keepdims=False:
           np.sum(np.where(np.isnan(a), 0, g), axis=axis, keepdims=keepdims))
defjvp(np.nanmean,
       lambda g, out, a, axis=None, keepdims=False:
           np.sum(np.where(np.isnan(a), 0, g), axis=axis, keepdims=keepdims)
           / np.sum(np.logical_not(np.isnan(a)), axis=axis, keepdims=keepdims).astype(out.dtype))
