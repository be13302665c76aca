"""Statistics: order statistics (median, percentile, quantile and their nan-forms), the range
(ptp); the FFT's real shifts (fftshift, ifftshift); the pseudo-inverse.

Order statistics: with the order of the reduced elements fixed, a quantile is
``(1 - f) v_(k) + f v_(k+1)`` (any of numpy's methods), so g goes to the selected elements
with those weights; tied elements share their weight evenly (srcad/runtime_stats.py, the
convention of max and min). A differentiated `q` is refused (``no_rule_for``).

pinv: for a matrix of constant rank (the full-rank case every random test meets), with
P = pinv(A), dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P (Golub and Pereyra
1973), whose transpose gives
dA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A) (matrices: the last two axes).
Where the rank changes (a singular value crossing rcond) pinv is not continuous.
"""

import numpy as np

from .. import runtime_stats as rs
from ..runtime import extremum_grad, extremum_jvp, order_grad, order_jvp
from .table import Param, defjvp, defvjp

_F = "statistics"
_T = (2, 3, 4)


def _axis_cases(call: str, shape=_T) -> tuple:
    return ((f"{call}(a)", [shape]), (f"{call}(a, axis=0)", [(5,)]),
            (f"{call}(a, axis=1)", [shape]), (f"{call}(a, axis=-1, keepdims=True)", [shape]),
            (f"{call}(a, axis=(0, 2))", [shape]), (f"{call}(a, keepdims=True)", [(3, 4)]))


_ORDER = ("g goes to the selected order statistics with the interpolation's weights "
          "((1 - f), f); ties share their weight evenly (as max); q has no rule")
defvjp(np.median,
       lambda g, out, a, axis=None, keepdims=False:
           order_grad(g, a, 0.5, axis, keepdims, "linear", False, False),
       name="median", family=_F, derivation=_ORDER,
       test_cases=_axis_cases("np.median") + (("np.median(a)", [(4,)]),
                                              ("np.median(a, 1)", [(3, 5)])))
defvjp(np.nanmedian,
       lambda g, out, a, axis=None, keepdims=False:
           order_grad(g, a, 0.5, axis, keepdims, "linear", True, False),
       name="nanmedian", family=_F, derivation=_ORDER + "; NaNs get none",
       test_cases=(("np.nanmedian(np.where(a > 1.5, np.nan, a))", [(3, 4)]),
                   ("np.nanmedian(np.where(a > 1.5, np.nan, a), axis=1)", [(3, 5)])))
def _q_cases(call, src, q):
    return ((f"{call}({src}, {q})", [(3, 4)]), (f"{call}({src}, {q}, axis=1)", [(3, 5)]),
            (f"{call}({src}, [{q}, {q} * 2], axis=0)", [(5, 3)]),
            (f"{call}({src}, {q}, axis=(0, 2), keepdims=True)", [_T]),
            (f"{call}({src}, {q}, method='nearest')", [(7,)]),
            (f"{call}({src}, {q}, 0, method='midpoint')", [(6, 2)]),
            (f"{call}({src}, {q}, 1, method='lower', keepdims=True)", [(2, 5)]))


defvjp(np.quantile,
       lambda g, out, a, q, axis=None, method="linear", keepdims=False:
           order_grad(g, a, q, axis, keepdims, method, False, False),
       None, name="quantile", family=_F, no_rule_for=("q",),
       derivation=_ORDER,
       test_cases=_q_cases("np.quantile", "a", "0.3"))
defvjp(np.nanquantile,
       lambda g, out, a, q, axis=None, method="linear", keepdims=False:
           order_grad(g, a, q, axis, keepdims, method, True, False),
       None, name="nanquantile", family=_F, no_rule_for=("q",),
       derivation=_ORDER + "; NaNs get none",
       test_cases=_q_cases("np.nanquantile", "np.where(a > 1.5, np.nan, a)", "0.3"))
defvjp(np.percentile,
       lambda g, out, a, q, axis=None, method="linear", keepdims=False:
           order_grad(g, a, q, axis, keepdims, method, False, True),
       None, name="percentile", family=_F, no_rule_for=("q",),
       derivation=_ORDER,
       test_cases=_q_cases("np.percentile", "a", "30"))
defvjp(np.nanpercentile,
       lambda g, out, a, q, axis=None, method="linear", keepdims=False:
           order_grad(g, a, q, axis, keepdims, method, True, True),
       None, name="nanpercentile", family=_F, no_rule_for=("q",),
       derivation=_ORDER + "; NaNs get none",
       test_cases=_q_cases("np.nanpercentile", "np.where(a > 1.5, np.nan, a)", "30"))
defvjp(np.ptp,
       lambda g, out, a, axis=None, keepdims=False:
           extremum_grad(g, np.max(a, axis=axis, keepdims=keepdims), a, axis, keepdims)
           - extremum_grad(g, np.min(a, axis=axis, keepdims=keepdims), a, axis, keepdims),
       name="ptp", family=_F, test_cases=_axis_cases("np.ptp"),
       derivation="max - min: g to the maxima, -g to the minima (ties split evenly)")
defvjp(np.fft.fftshift, lambda g, out, x, axes=None: np.fft.ifftshift(g, axes),
       name="fftshift", linear=("x",), family=_F,
       derivation="a roll by n // 2 along each axis: g rolled back (ifftshift)",
       test_cases=(("np.fft.fftshift(a)", [(5,)]), ("np.fft.fftshift(a)", [(3, 4)]),
                   ("np.fft.fftshift(a, axes=1)", [(3, 5)]),
                   ("np.fft.fftshift(a, axes=(0,))", [(3, 4)])))
defvjp(np.fft.ifftshift, lambda g, out, x, axes=None: np.fft.fftshift(g, axes),
       name="ifftshift", linear=("x",), family=_F,
       derivation="a roll by -(n // 2) along each axis: g rolled back (fftshift)",
       test_cases=(("np.fft.ifftshift(a)", [(5,)]), ("np.fft.ifftshift(a, axes=-1)", [(3, 5)])))

defvjp(np.linalg.pinv,
       lambda g, out, a, rcond=None, hermitian=False:
           -np.swapaxes(out, -1, -2) @ g @ np.swapaxes(out, -1, -2)
           + (np.eye(np.shape(a)[-2], dtype=out.dtype) - a @ out) @ np.swapaxes(g, -1, -2) @ out
           @ np.swapaxes(out, -1, -2)
           + np.swapaxes(out, -1, -2) @ out @ np.swapaxes(g, -1, -2)
           @ (np.eye(np.shape(a)[-1], dtype=out.dtype) - out @ a),
       None, None, name="pinv", family=_F,
       params=(Param("a"), Param("rcond", None), Param("hermitian", False)),
       derivation="constant rank: dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P "
       "(Golub & Pereyra); its transpose",
       test_cases=(("np.linalg.pinv(a)", [(3, 3)]), ("np.linalg.pinv(a)", [(3, 5)]),
                   ("np.linalg.pinv(a)", [(5, 3)]), ("np.linalg.pinv(a)", [(2, 4, 3)])))

# --- forward mode ---------------------------------------------------------------------------
defjvp(np.median,
       lambda g, out, a, axis=None, keepdims=False:
           order_jvp(g, a, 0.5, axis, keepdims, "linear", False, False))
defjvp(np.nanmedian,
       lambda g, out, a, axis=None, keepdims=False:
           order_jvp(g, a, 0.5, axis, keepdims, "linear", True, False))
defjvp(np.quantile,
       lambda g, out, a, q, axis=None, method="linear", keepdims=False:
           order_jvp(g, a, q, axis, keepdims, method, False, False), None)
defjvp(np.nanquantile,
       lambda g, out, a, q, axis=None, method="linear", keepdims=False:
           order_jvp(g, a, q, axis, keepdims, method, True, False), None)
defjvp(np.percentile,
       lambda g, out, a, q, axis=None, method="linear", keepdims=False:
           order_jvp(g, a, q, axis, keepdims, method, False, True), None)
defjvp(np.nanpercentile,
       lambda g, out, a, q, axis=None, method="linear", keepdims=False:
           order_jvp(g, a, q, axis, keepdims, method, True, True), None)
defjvp(np.ptp,
       lambda g, out, a, axis=None, keepdims=False:
           extremum_jvp(g, np.max(a, axis=axis, keepdims=keepdims), a, axis, keepdims)
           - extremum_jvp(g, np.min(a, axis=axis, keepdims=keepdims), a, axis, keepdims))
defjvp(np.linalg.pinv,
       lambda g, out, a, rcond=None, hermitian=False:
           -out @ g @ out
           + out @ np.swapaxes(out, -1, -2) @ np.swapaxes(g, -1, -2)
           @ (np.eye(np.shape(a)[-2], dtype=out.dtype) - a @ out)
           + (np.eye(np.shape(a)[-1], dtype=out.dtype) - out @ a) @ np.swapaxes(g, -1, -2)
           @ np.swapaxes(out, -1, -2) @ out, None, None)

# --- the helpers as rows (second order): linear in their first argument, each the other's
# transpose; the weights are piecewise constant in a (no rule: 0 where defined)
defvjp(rs.order_grad,
       lambda g, out, ct, a, q, axis=None, keepdims=False, method="linear", nan=False,
       percent=False: order_jvp(g, a, q, axis, keepdims, method, nan, percent),
       name="order_grad", linear=("ct",), family="runtime",
       derivation="the quantile's VJP, linear in ct; its transpose is the quantile's JVP")
defvjp(rs.order_jvp,
       lambda g, out, t, a, q, axis=None, keepdims=False, method="linear", nan=False,
       percent=False: order_grad(g, a, q, axis, keepdims, method, nan, percent),
       name="order_jvp", linear=("t",), family="runtime",
       derivation="the quantile's JVP, linear in t; its transpose is the quantile's VJP")
