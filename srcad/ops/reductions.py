"""Reductions: sum, mean, max, min, prod, var, std, nansum, nanmean (axis: None, int,
negative, tuple; keepdims), cumsum and cumprod. sum, mean, max, min, prod, var and std take
numpy's where= (a mask of the elements read, as jax.numpy differentiates it: the others get
no gradient) and, but for max and min, dtype= (the accumulator; the gradient keeps a's
dtype); max and min take initial= (a constant: no rule).

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
    filled,
    masked,
    masked_count,
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


# where= (a mask: only the selected elements are read, as numpy and jax.numpy; an element
# it leaves out gets no gradient) and dtype= (the accumulator's dtype; the gradient keeps a's)
# on the reductions below. ``masked``, ``filled`` and ``masked_count`` are their argument for
# numpy's default where=True, so the generated code is what it was without them. initial= of
# max / min is a constant (no rule: refused where differentiated).
def _mask(*shape, k=3) -> str:
    """A fixed mask of `shape` for the test cases: every k-th element left out (each row and
    column of the cases keeps at least two)."""
    n = int(np.prod(shape))
    return f"np.arange({n}).reshape({shape}) % {k} != 1"


def _where_cases(fn: str, extremum: bool = False, method: bool = True) -> tuple:
    init = ", initial=-5.0" if extremum and fn == "max" else ", initial=5.0" if extremum \
        else ""
    return ((f"np.{fn}(a, where={_mask(3, 4)}{init})", [(3, 4)]),
            (f"np.{fn}(a, axis=1, where={_mask(3, 4)}{init})", [(3, 4)]),
            (f"np.{fn}(a, axis=0, keepdims=True, where={_mask(3, 4)}{init})", [(3, 4)]),
            (f"{'a.' + fn + '(' if method else 'np.' + fn + '(a, '}axis=-1, "
             f"where=np.arange(4) % 3 != 1{init})", [(2, 3, 4)]),
            (f"np.{fn}(a, axis=(0, 2), where={_mask(2, 3, 4)}{init})", [(2, 3, 4)]))


defvjp(np.sum,
       lambda g, out, a, axis=None, dtype=None, keepdims=False, initial=0, where=True:
           masked(unreduce(g, a, axis, keepdims), where),
       name="sum", linear=('a',), family="reduction", c_row="sum", no_rule_for=("initial",),
       test_cases=_cases("sum") + _where_cases("sum")
       + (("np.sum(a, axis=1, dtype=np.float64)", [(3, 4)]),
          ("a.sum(0, dtype=np.float64, keepdims=True)", [(3, 4)]),
          ("np.sum(a, initial=1.5)", [(3, 4)]), ("np.sum(a, axis=0, initial=-2.0)", [(3, 4)]),
          ("a.sum(axis=1, keepdims=True, initial=0.5, where=a > 0)", [(3, 4)])),
       derivation="each input element contributes once: broadcast g back (0 where where= "
       "leaves an element out; initial= is a constant added)")
defjvp(np.sum,  # (linear in a, but the tangent has no initial= of its own)
       lambda g, out, a, axis=None, dtype=None, keepdims=False, initial=0, where=True:
           np.sum(g, axis=axis, dtype=dtype, keepdims=keepdims, where=where))
defvjp(np.mean,
       lambda g, out, a, axis=None, dtype=None, keepdims=False, where=True:
           masked(unreduce(g / masked_count(max(np.size(a) // max(np.size(g), 1), 1), a, axis,
                                            keepdims, where), a, axis, keepdims), where),
       name="mean", linear=('a',), family="reduction", c_row="mean",
       test_cases=_cases("mean") + _where_cases("mean")
       + (("np.mean(a, axis=-1, dtype=np.float64)", [(3, 4)]),),
       derivation="sum / n: broadcast g / n back (n = elements reduced into each output; "
       "with where=, the selected ones, and 0 for the others)")
defvjp(np.max,
       lambda g, out, a, axis=None, keepdims=False, initial=None, where=True:
           extremum_grad(g, out, filled(a, where), axis, keepdims),
       None, None, None, None,
       name="max", family="reduction", aliases=(np.amax,), c_row="max", no_rule_for=("initial",),
       test_cases=_cases("max") + (("np.amax(a, axis=1)", [(3, 4)]),) + _where_cases("max", True)
       + (("np.max(a, axis=0, initial=0.5)", [(3, 4)]),),
       derivation="g flows to the maxima, split evenly among ties (as torch.amax); with "
       "where=, among the selected elements (the others filled with NaN, equal to nothing); "
       "none where initial= is the maximum")
defvjp(np.min,
       lambda g, out, a, axis=None, keepdims=False, initial=None, where=True:
           extremum_grad(g, out, filled(a, where), axis, keepdims),
       None, None, None, None,
       name="min", family="reduction", aliases=(np.amin,), c_row="min", no_rule_for=("initial",),
       test_cases=_cases("min") + (("np.amin(a, axis=0)", [(3, 4)]),) + _where_cases("min", True)
       + (("np.min(a, axis=1, initial=-0.5)", [(3, 4)]),),
       derivation="g flows to the minima, split evenly among ties (as torch.amin); with "
       "where=, among the selected elements; none where initial= is the minimum")
defvjp(np.prod,
       lambda g, out, a, axis=None, dtype=None, keepdims=False, initial=1, where=True:
           masked(prod_grad(g * initial, filled(a, where, 1.0), axis, keepdims), where),
       name="prod", family="reduction", domain=(0.5, 1.5), no_rule_for=("initial",),
       aliases=(np.product,) if hasattr(np, "product") else (),  # (numpy < 2)
       test_cases=_cases("prod") + _where_cases("prod")
       + (("np.prod(a, initial=2.5)", [(2, 3)]), ("np.prod(a, axis=1, initial=-0.5)", [(2, 3)]),
          ("a.prod(0, keepdims=True, initial=3.0, where=a > 0.8)", [(3, 2)])),
       derivation="d prod = (product of the other elements) dx_i: exclusive cumulative "
       "products from both sides, exact where inputs are 0 (as torch); with where=, the "
       "others read as 1 and get no gradient")
defvjp(np.var,
       lambda g, out, a, axis=None, dtype=None, ddof=0, keepdims=False, where=True:
           masked(unreduce(g, a, axis, keepdims), where)
           * (2 * (a - np.mean(a, axis=axis, keepdims=True, where=where))
              / (masked_count(np.size(a) // max(np.size(g), 1), a, axis, True, where) - ddof)),
       name="var", family="reduction", keywords={"correction": "ddof"},
       test_cases=_cases("var") + (("np.var(a, axis=1, ddof=1)", [(3, 4)]),
                                   ("np.var(a, ddof=1)", [(3, 4)]),
                                   ("a.var(axis=0, ddof=1, keepdims=True)", [(3, 4)]),
                                   ("a.var(1)", [(3, 4)]),
                                   ("np.var(a, axis=0, correction=1)", [(3, 4)]))
       + _where_cases("var")
       + ((f"np.var(a, axis=0, ddof=1, where={_mask(4, 3, k=4)}, keepdims=True)", [(4, 3)]),),
       derivation="var = sum((a - mean)^2) / (n - ddof); the mean's own term sums to 0, so "
       "d var = 2 (a - mean) / (n - ddof) da (with where=: n, the mean and the gradient over "
       "the selected elements)")
defvjp(np.std,
       lambda g, out, a, axis=None, dtype=None, ddof=0, keepdims=False, where=True:
           masked(unreduce(g / np.where(out == 0, 1, out), a, axis, keepdims), where)
           * ((a - np.mean(a, axis=axis, keepdims=True, where=where))
              / (masked_count(np.size(a) // max(np.size(g), 1), a, axis, True, where) - ddof)),
       name="std", family="reduction", keywords={"correction": "ddof"},
       test_cases=tuple(c for c in _cases("std") if c[1] != [()])
       + (("np.std(a, axis=0, ddof=1)", [(3, 4)]), ("a.std(axis=-1, ddof=1)", [(2, 3, 4)]),
          ("a.std(0, keepdims=True)", [(3, 4)]), ("np.std(a)", [()]),
          ("np.std(a, axis=0)", [(1, 3)]))
       + _where_cases("std")
       + ((f"np.std(a, axis=1, ddof=1, where={_mask(3, 5)})", [(3, 5)]),),
       derivation="std = sqrt(var): d std = d var / (2 std) = (a - mean) / ((n - ddof) std) da; "
       "where std = 0 (a - mean = 0 there) the subgradient 0, which central differences see "
       "(torch gives NaN)")
defvjp(np.cumsum, lambda g, out, a, axis=None, dtype=None: cumsum_grad(g, a, axis),
       name="cumsum", linear=('a',), family="reduction",
       test_cases=(("np.cumsum(a)", [(3, 4)]), ("np.cumsum(a, axis=0)", [(3, 4)]),
                   ("np.cumsum(a, axis=-1)", [(2, 3, 4)]), ("np.cumsum(a, 1)", [(2, 3, 4)]),
                   ("np.cumsum(a, axis=0, dtype=np.float64)", [(3, 4)])),
       derivation="out_i = sum_{j<=i} a_j, so da_j = sum_{i>=j} g_i: a reversed cumsum of g")

defvjp(np.cumprod, lambda g, out, a, axis=None, dtype=None: cumprod_grad(g, a, axis),
       name="cumprod", family="reduction",
       aliases=(np.cumproduct,) if hasattr(np, "cumproduct") else (),  # (numpy < 2)
       test_cases=(("np.cumprod(a)", [(3, 4)]), ("np.cumprod(a, axis=0)", [(3, 4)]),
                   ("np.cumprod(a, axis=-1)", [(2, 3, 4)]), ("np.cumprod(a, 1)", [(2, 3, 4)]),
                   ("np.cumprod(a)", [()]),
                   # exact with zeros: one zero, two zeros, a zero first
                   ("np.cumprod(a * (np.arange(4) != 1), axis=1)", [(2, 4)]),
                   ("np.cumprod(a * (np.arange(4) % 2))", [(4,)]),
                   ("np.cumprod(a * (np.arange(2)[:, None] == 1), axis=-1)", [(2, 3)]),
                   ("a.cumprod(axis=0)", [(3, 2)]),
                   ("np.cumprod(a, 1, dtype=np.float64)", [(2, 3)])),
       derivation="out_i = prod_{k<=i} a_k: da_j = (prod_{k<j} a_k) h_j with h_j = g_j + "
       "a_{j+1} h_{j+1}, a backward recurrence that never divides (exact with zeros)")
_NAN = "np.where(a > 1.5, np.nan, a)"  # NaNs where a > 1.5: they get no gradient
defvjp(np.nansum,
       lambda g, out, a, axis=None, dtype=None, keepdims=False, where=True:
           np.where(np.isnan(filled(a, where)), 0, unreduce(g, a, axis, keepdims)),
       name="nansum", family="reduction",
       test_cases=tuple((c.replace("(a", f"({_NAN}", 1), s) for c, s in _cases("nansum",
                                                                             method=False))
       + (("np.nansum(a, axis=1)", [(3, 4)]),) + _where_cases("nansum", method=False)
       + ((f"np.nansum({_NAN}, axis=1, where={_mask(3, 4)})", [(3, 4)]),),
       derivation="a sum that skips NaNs (and what where= leaves out): broadcast g back, 0 "
       "where a is NaN")
defvjp(np.nanmean,
       lambda g, out, a, axis=None, dtype=None, keepdims=False, where=True:
           np.where(np.isnan(filled(a, where)), 0,
                    unreduce(g / np.sum(np.logical_not(np.isnan(filled(a, where))), axis=axis,
                                        keepdims=keepdims), a, axis, keepdims)),
       name="nanmean", family="reduction",
       test_cases=tuple((c.replace("(a", f"({_NAN}", 1), s) for c, s in _cases("nanmean",
                                                                              method=False)
                        if s != [()] and s != [(5,)])
       + (("np.nanmean(a, axis=0)", [(3, 4)]),) + _where_cases("nanmean", method=False)
       + ((f"np.nanmean({_NAN}, axis=1, where={_mask(3, 4)})", [(3, 4)]),),
       derivation="nansum / n with n the number of non-NaN elements reduced into each output: "
       "broadcast g / n back, 0 where a is NaN")


# --- forward mode (the rows above that are neither elementwise nor linear) --------------------
defjvp(np.max, lambda g, out, a, axis=None, keepdims=False, initial=None, where=True:
       extremum_jvp(g, out, filled(a, where), axis, keepdims))
defjvp(np.min, lambda g, out, a, axis=None, keepdims=False, initial=None, where=True:
       extremum_jvp(g, out, filled(a, where), axis, keepdims))
defjvp(np.prod,
       lambda g, out, a, axis=None, dtype=None, keepdims=False, initial=1, where=True:
           np.sum(masked(prod_grad(np.ones_like(out) * initial, filled(a, where, 1.0), axis,
                                   keepdims), where) * g, axis=axis, keepdims=keepdims))
defjvp(np.var,
       lambda g, out, a, axis=None, dtype=None, ddof=0, keepdims=False, where=True:
           np.sum(2 * (a - np.mean(a, axis=axis, keepdims=True, where=where)) * g, axis=axis,
                  keepdims=keepdims, where=where)
           / (masked_count(np.size(a) // max(np.size(out), 1), a, axis, keepdims, where) - ddof))
defjvp(np.std,
       lambda g, out, a, axis=None, dtype=None, ddof=0, keepdims=False, where=True:
           np.sum((a - np.mean(a, axis=axis, keepdims=True, where=where)) * g, axis=axis,
                  keepdims=keepdims, where=where)
           / ((masked_count(np.size(a) // max(np.size(out), 1), a, axis, keepdims, where) - ddof)
              * np.where(out == 0, 1, out)))
defjvp(np.cumprod, lambda g, out, a, axis=None, dtype=None: cumprod_jvp(g, a, axis))
defjvp(np.nansum,
       lambda g, out, a, axis=None, dtype=None, keepdims=False, where=True:
           np.sum(np.where(np.isnan(filled(a, where)), 0, g), axis=axis, keepdims=keepdims))
defjvp(np.nanmean,
       lambda g, out, a, axis=None, dtype=None, keepdims=False, where=True:
           np.sum(np.where(np.isnan(filled(a, where)), 0, g), axis=axis, keepdims=keepdims)
           / np.sum(np.logical_not(np.isnan(filled(a, where))), axis=axis,
                    keepdims=keepdims).astype(out.dtype))
