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
from ..runtime_python import (
    py_correlation,
    py_covariance,
    py_dist,
    py_fsum,
    py_geometric_mean,
    py_harmonic_mean,
    py_mean,
    py_stdev,
    py_variance,
)
from ..runtime import (
    average_identity,
    average_pair,
    average_part,
    average_plus_count,
    average_weights,
    cov_grad,
    cov_jvp,
    cov_part,
    cov_place,
    cov_stack,
    cov_weights,
    extremum_grad,
    extremum_jvp,
    order_grad,
    order_jvp,
    unaverage_weights,
    unbroadcast,
    unreduce,
)
from .table import Param, defjvp, defnondiff, defvjp

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

# --- average, cov, corrcoef -------------------------------------------------------------------
defvjp(np.average,
       lambda g, out, a, axis=None, weights=None, returned=False, keepdims=False:
           unbroadcast(unreduce(average_part(g, returned), a, axis, keepdims)
                       * (average_weights(weights, a, axis)
                          / np.sum(average_weights(weights, a, axis), axis=axis,
                                   keepdims=True)), a),
       None,
       lambda g, out, a, axis=None, weights=None, returned=False, keepdims=False:
           unaverage_weights(average_plus_count(
               unreduce(average_part(g, returned), a, axis, keepdims)
               * (a - unreduce(average_part(out, returned), a, axis, keepdims))
               / np.sum(average_weights(weights, a, axis), axis=axis, keepdims=True),
               g, a, axis, keepdims, returned), weights, a, axis),
       None, None, name="average", linear=("a",), family=_F,
       spelling="np.average(a, axis, weights, returned, keepdims)",
       derivation="out = sum(w a) / sum(w) (w: weights broadcast along axis): da = g w / "
       "sum(w), dw = g (a - out) / sum(w); returned=True adds the pair's sum(w), whose "
       "cotangent each weight gets once",
       test_cases=(("np.average(a)", [(3, 4)]), ("np.average(a, axis=1)", [(3, 4)]),
                   ("np.average(a, 0, b)", [(3, 4), (3, 4)]),
                   ("np.average(a, axis=1, weights=b)", [(3, 4), (4,)]),
                   ("np.average(a, axis=0, weights=b, keepdims=True)", [(3, 4), (3,)]),
                   ("np.average(a, weights=b)", [_T, _T]),
                   ("np.average(a, axis=(0, 2), weights=b)", [_T, _T]),
                   ("np.average(a, axis=-1, weights=[1.0, 2.0, 0.5, 3.0])", [_T]),
                   ("np.average(a, axis=1, weights=b, returned=True)[0]", [(3, 4), (4,)]),
                   ("np.prod(np.average(a, axis=0, weights=b, returned=True), axis=0)",
                    [(3, 4), (3, 4)]),
                   ("np.average(a, weights=b, returned=True)[1] * a", [(2, 3), (2, 3)]),
                   ("np.average(a, axis=1, returned=True)[1] * np.average(a, axis=1)",
                    [(3, 4)])),
       domain=((-2.0, 2.0), (0.5, 2.0)))
_COV = ("the cov of X (the observations, one variable per row): C = (Xc w) Xc^T / f, "
        "Xc = X - X w 1^T / sum(w); dX = (G + G^T) Xc w / f (its row sums are 0)")
defvjp(np.cov,
       lambda g, out, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
       aweights=None:
           cov_part(cov_grad(g, cov_stack(m, y, rowvar),
                             cov_weights(m, y, rowvar, bias, ddof, fweights, aweights,
                                         "center"),
                             cov_weights(m, y, rowvar, bias, ddof, fweights, aweights,
                                         "scale")), m, y, rowvar, 0),
       lambda g, out, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
       aweights=None:
           cov_part(cov_grad(g, cov_stack(m, y, rowvar),
                             cov_weights(m, y, rowvar, bias, ddof, fweights, aweights,
                                         "center"),
                             cov_weights(m, y, rowvar, bias, ddof, fweights, aweights,
                                         "scale")), m, y, rowvar, 1),
       None, None, None, None, None, name="cov", family=_F,
       no_rule_for=("fweights", "aweights"), derivation=_COV,
       test_cases=(("np.cov(a)", [(3, 5)]), ("np.cov(a, rowvar=False)", [(5, 3)]),
                   ("np.cov(a)", [(6,)]), ("np.cov(a, b)", [(5,), (5,)]),
                   ("np.cov(a, b, rowvar=False)", [(4, 2), (4, 3)]),
                   ("np.cov(a, bias=True)", [(2, 4)]), ("np.cov(a, ddof=0)", [(2, 4)]),
                   ("np.cov(a, ddof=2)", [(3, 6)]),
                   ("np.cov(a, fweights=np.array([1, 2, 1, 3]))", [(2, 4)]),
                   ("np.cov(a, aweights=np.array([0.5, 2.0, 1.0, 1.5]))", [(2, 4)]),
                   ("np.cov(a, b, False, aweights=[0.5, 2.0, 1.0], fweights=[1, 2, 2])",
                    [(3,), (3, 2)])))
_CORR = ("R = C / (s s^T), s = sqrt(diag C): dC = G / (s s^T) - diag(rowsum(G R) + "
         "colsum(G R)) / (2 diag C), then cov's VJP")
defvjp(np.corrcoef,
       lambda g, out, x, y=None, rowvar=True:
           cov_part(cov_grad(
               np.atleast_2d(g)
               / np.sqrt(np.outer(np.diagonal(np.atleast_2d(np.cov(x, y, rowvar))),
                                  np.diagonal(np.atleast_2d(np.cov(x, y, rowvar)))))
               - np.diag((np.sum(np.atleast_2d(g * out), axis=1)
                          + np.sum(np.atleast_2d(g * out), axis=0))
                         / (2 * np.diagonal(np.atleast_2d(np.cov(x, y, rowvar))))),
               cov_stack(x, y, rowvar), cov_weights(x, y, rowvar, which="center"),
               cov_weights(x, y, rowvar, which="scale")), x, y, rowvar, 0),
       lambda g, out, x, y=None, rowvar=True:
           cov_part(cov_grad(
               np.atleast_2d(g)
               / np.sqrt(np.outer(np.diagonal(np.atleast_2d(np.cov(x, y, rowvar))),
                                  np.diagonal(np.atleast_2d(np.cov(x, y, rowvar)))))
               - np.diag((np.sum(np.atleast_2d(g * out), axis=1)
                          + np.sum(np.atleast_2d(g * out), axis=0))
                         / (2 * np.diagonal(np.atleast_2d(np.cov(x, y, rowvar))))),
               cov_stack(x, y, rowvar), cov_weights(x, y, rowvar, which="center"),
               cov_weights(x, y, rowvar, which="scale")), x, y, rowvar, 1),
       None, name="corrcoef", family=_F, derivation=_CORR,
       test_cases=(("np.corrcoef(a)", [(3, 5)]), ("np.corrcoef(a, rowvar=False)", [(6, 2)]),
                   ("np.corrcoef(a, b)", [(5,), (5,)]),
                   ("np.corrcoef(a, b, rowvar=False)", [(4, 2), (4,)])))

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

defjvp(np.average,
       lambda g, out, a, axis=None, weights=None, returned=False, keepdims=False:
           average_pair(np.average(g, axis, weights, keepdims=keepdims), None, returned),
       None,
       lambda g, out, a, axis=None, weights=None, returned=False, keepdims=False:
           average_pair(
               np.sum(average_weights(g, a, axis)
                      * (a - unreduce(average_part(out, returned), a, axis, keepdims)),
                      axis=axis, keepdims=keepdims)
               / np.sum(average_weights(weights, a, axis), axis=axis, keepdims=keepdims),
               np.sum(average_weights(g, a, axis), axis=axis, keepdims=keepdims), returned),
       None, None)
defjvp(np.cov,
       lambda g, out, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
       aweights=None:
           np.reshape(cov_jvp(cov_place(g, m, y, rowvar, 0), cov_stack(m, y, rowvar),
                              cov_weights(m, y, rowvar, bias, ddof, fweights, aweights,
                                          "center"),
                              cov_weights(m, y, rowvar, bias, ddof, fweights, aweights,
                                          "scale")), np.shape(out)),
       lambda g, out, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
       aweights=None:
           np.reshape(cov_jvp(cov_place(g, m, y, rowvar, 1), cov_stack(m, y, rowvar),
                              cov_weights(m, y, rowvar, bias, ddof, fweights, aweights,
                                          "center"),
                              cov_weights(m, y, rowvar, bias, ddof, fweights, aweights,
                                          "scale")), np.shape(out)),
       None, None, None, None, None)
defjvp(np.corrcoef,
       lambda g, out, x, y=None, rowvar=True:
           np.reshape(
               cov_jvp(cov_place(g, x, y, rowvar, 0), cov_stack(x, y, rowvar),
                       cov_weights(x, y, rowvar, which="center"),
                       cov_weights(x, y, rowvar, which="scale"))
               / np.sqrt(np.outer(np.diagonal(np.atleast_2d(np.cov(x, y, rowvar))),
                                  np.diagonal(np.atleast_2d(np.cov(x, y, rowvar)))))
               - np.atleast_2d(out)
               * (np.reshape(np.diagonal(cov_jvp(
                   cov_place(g, x, y, rowvar, 0), cov_stack(x, y, rowvar),
                       cov_weights(x, y, rowvar, which="center"),
                       cov_weights(x, y, rowvar, which="scale")))
                             / (2 * np.diagonal(np.atleast_2d(np.cov(x, y, rowvar)))),
                             (-1, 1))
                  + np.diagonal(cov_jvp(cov_place(g, x, y, rowvar, 0), cov_stack(x, y, rowvar),
                       cov_weights(x, y, rowvar, which="center"),
                       cov_weights(x, y, rowvar, which="scale")))
                  / (2 * np.diagonal(np.atleast_2d(np.cov(x, y, rowvar))))),
               np.shape(out)),
       lambda g, out, x, y=None, rowvar=True:
           np.reshape(
               cov_jvp(cov_place(g, x, y, rowvar, 1), cov_stack(x, y, rowvar),
                       cov_weights(x, y, rowvar, which="center"),
                       cov_weights(x, y, rowvar, which="scale"))
               / np.sqrt(np.outer(np.diagonal(np.atleast_2d(np.cov(x, y, rowvar))),
                                  np.diagonal(np.atleast_2d(np.cov(x, y, rowvar)))))
               - np.atleast_2d(out)
               * (np.reshape(np.diagonal(cov_jvp(
                   cov_place(g, x, y, rowvar, 1), cov_stack(x, y, rowvar),
                       cov_weights(x, y, rowvar, which="center"),
                       cov_weights(x, y, rowvar, which="scale")))
                             / (2 * np.diagonal(np.atleast_2d(np.cov(x, y, rowvar)))),
                             (-1, 1))
                  + np.diagonal(cov_jvp(cov_place(g, x, y, rowvar, 1), cov_stack(x, y, rowvar),
                       cov_weights(x, y, rowvar, which="center"),
                       cov_weights(x, y, rowvar, which="scale")))
                  / (2 * np.diagonal(np.atleast_2d(np.cov(x, y, rowvar))))),
               np.shape(out)),
       None)

# --- the helpers of average and cov as rows (second order): linear maps with exact transposes
_R = "runtime"
# (np.average's returned=True: first order; a second derivative through it is refused in
# both modes by average_identity -- with returned=False each helper is the identity)
defvjp(rs.average_part, lambda g, out, v, returned=False:
       average_identity(average_pair(g, None, returned), returned), None,
       name="average_part", family=_R,
       derivation="the average of np.average's pair (returned=True; else the identity): its "
       "transpose puts g in the pair's first slot")
defjvp(rs.average_part, lambda g, out, v, returned=False:
       average_identity(average_part(g, returned), returned), None)
defvjp(rs.average_pair, lambda g, out, t, t_count=None, returned=False:
       average_identity(average_part(g, returned), returned),
       lambda g, out, t, t_count=None, returned=False:
           average_identity(np.zeros_like(t_count), returned), None,
       name="average_pair", family=_R,
       derivation="np.average's tangent pair, stacked (returned=True; else t): the "
       "transpose takes the first slot")
defjvp(rs.average_pair, lambda g, out, t, t_count=None, returned=False:
       average_identity(g, returned),
       lambda g, out, t, t_count=None, returned=False:
           average_identity(np.zeros_like(t), returned), None)
defvjp(rs.average_plus_count,
       lambda g, out, x, ct, a, axis=None, keepdims=False, returned=False:
           average_identity(g, returned),
       lambda g, out, x, ct, a, axis=None, keepdims=False, returned=False:
           average_identity(np.zeros_like(ct), returned), None, None, None, None,
       name="average_plus_count", family=_R,
       derivation="x plus the pair's count cotangent spread back (returned=True; else x)")
defjvp(rs.average_plus_count,
       lambda g, out, x, ct, a, axis=None, keepdims=False, returned=False:
           average_identity(g, returned),
       lambda g, out, x, ct, a, axis=None, keepdims=False, returned=False:
           average_identity(np.zeros_like(x), returned), None, None, None, None)
defvjp(rs.average_identity, lambda g, out, x, returned=False: average_identity(g, returned),
       None, name="average_identity", linear=("x",), family=_R,
       derivation="the identity (returned=False); refused for returned=True")
defvjp(rs.average_weights, lambda g, out, weights, a, axis=None, returned=False:
       unaverage_weights(g, weights, a, axis, returned), None, None, None,
       name="average_weights", linear=("weights",), family=_R,
       derivation="a broadcast; its transpose sums back")
defvjp(rs.unaverage_weights, lambda g, out, ct, weights, a, axis=None, returned=False:
       average_weights(g, a, axis, returned), None, None, None, None,
       name="unaverage_weights", linear=("ct",), family=_R,
       derivation="a sum; its transpose broadcasts")
defvjp(rs.cov_stack, lambda g, out, m, y=None, rowvar=True: cov_part(g, m, y, rowvar, 0),
       lambda g, out, m, y=None, rowvar=True: cov_part(g, m, y, rowvar, 1), None,
       name="cov_stack", family=_R,
       derivation="a relayout and a concatenation; its transpose takes each part back")
defjvp(rs.cov_stack, lambda g, out, m, y=None, rowvar=True: cov_place(g, m, y, rowvar, 0),
       lambda g, out, m, y=None, rowvar=True: cov_place(g, m, y, rowvar, 1), None)
defvjp(rs.cov_part, lambda g, out, ct, m, y=None, rowvar=True, part=0:
       cov_place(g, m, y, rowvar, part), None, None, None, None,
       name="cov_part", linear=("ct",), family=_R,
       derivation="a slice and a relayout; its transpose places it among zeros")
defvjp(rs.cov_place, lambda g, out, t, m, y=None, rowvar=True, part=0:
       cov_part(g, m, y, rowvar, part), None, None, None, None,
       name="cov_place", linear=("t",), family=_R,
       derivation="a placement among zeros; its transpose slices")
defnondiff(rs.cov_weights, name="cov_weights", family=_R,
           params=(Param("m"), Param("y", None), Param("rowvar", True), Param("bias", False),
                   Param("ddof", None), Param("fweights", None), Param("aweights", None),
                   Param("which", "center")))
defvjp(rs.cov_grad, lambda g, out, G, X, cw, sw: np.reshape(cov_jvp(g, X, cw, sw), np.shape(G)),
       lambda g, out, G, X, cw, sw: cov_grad(G, g, cw, sw), None, None,
       name="cov_grad", linear=("G", "X"), family=_R,
       derivation="sym(G) X P S P^T: bilinear; its transposes are cov_jvp (in G) and itself "
       "(in X)")
defvjp(rs.cov_jvp, lambda g, out, T, X, cw, sw: cov_grad(g, X, cw, sw),
       lambda g, out, T, X, cw, sw: cov_grad(g, T, cw, sw), None, None,
       name="cov_jvp", linear=("T", "X"), family=_R,
       derivation="T Q X^T + X Q T^T (Q = P S P^T): bilinear and symmetric; its transpose "
       "is cov_grad")

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


# --- math.fsum and statistics (srcad/pyfuncs.py calls these on np.array(data, dtype=float)) ---
# The value is Python's (exact sums, correctly rounded); the derivative is the plain formula's.
defvjp(py_fsum, lambda g, out, a: g * np.ones_like(a), name="py_fsum",
       params=(Param("a"),), family="python", linear=("a",),
       derivation="the exactly rounded sum: g for every item",
       test_cases=(("OP(np.asarray(a * a, dtype=float))", [(5,)]),))
defjvp(py_fsum, lambda g, out, a: np.sum(g))
defvjp(py_mean, lambda g, out, a, exact: g * np.ones_like(a) / a.shape[0], None,
       name="py_mean", params=(Param("a"), Param("exact")), family="python", linear=("a",),
       derivation="the correctly rounded mean: g / n for every item",
       test_cases=(("OP(np.asarray(a * a, dtype=float), True)", [(5,)]),
                   ("OP(np.asarray(np.sin(a), dtype=float), False)", [(4,)])))
defjvp(py_mean, lambda g, out, a, exact: np.sum(g) / a.shape[0], None)
defvjp(py_variance, lambda g, out, a, ddof: g * 2.0 * (a - np.mean(a)) / (a.shape[0] - ddof),
       None, name="py_variance", params=(Param("a"), Param("ddof")), family="python",
       derivation="sum((a - mean)**2) / (n - ddof), exactly rounded: 2 (a - mean) / (n - ddof)",
       test_cases=(("OP(np.asarray(a * a, dtype=float), 1)", [(5,)]),
                   ("OP(np.asarray(np.sin(a), dtype=float), 0)", [(4,)])))
defjvp(py_variance,
       lambda g, out, a, ddof: np.sum(g * 2.0 * (a - np.mean(a))) / (a.shape[0] - ddof), None)
defvjp(py_stdev, lambda g, out, a, ddof: g * (a - np.mean(a)) / ((a.shape[0] - ddof) * out),
       None, name="py_stdev", params=(Param("a"), Param("ddof")), family="python",
       derivation="sqrt of the variance: (a - mean) / ((n - ddof) out)",
       test_cases=(("OP(np.asarray(a * a, dtype=float), 1)", [(5,)]),
                   ("OP(np.asarray(np.sin(a), dtype=float), 0)", [(4,)])))
defjvp(py_stdev,
       lambda g, out, a, ddof: np.sum(g * (a - np.mean(a))) / ((a.shape[0] - ddof) * out), None)

# (math.dist, geometric_mean, harmonic_mean, covariance, correlation: srcad/pyfuncs.py calls
# these on np.array(data, dtype=float); the value is Python's, the derivative the formula's)
defvjp(py_dist, lambda g, out, a, b: g * (a - b) / np.where(out == 0, 1.0, out),
       lambda g, out, a, b: g * (b - a) / np.where(out == 0, 1.0, out),
       name="py_dist", params=(Param("a"), Param("b")), family="python",
       derivation="sqrt(sum((a - b)^2)): (a - b) / out (0 where the points coincide)",
       test_cases=(("OP(np.asarray(a, dtype=float), np.asarray(b, dtype=float))",
                    [(3,), (3,)]),))
defjvp(py_dist, lambda g, out, a, b: np.sum(g * (a - b)) / np.where(out == 0, 1.0, out),
       lambda g, out, a, b: np.sum(g * (b - a)) / np.where(out == 0, 1.0, out))
defvjp(py_geometric_mean, lambda g, out, a: g * out / (a.shape[0] * a),
       name="py_geometric_mean", params=(Param("a"),), family="python", domain=(0.5, 2.0),
       derivation="exp(mean(log a)): out / (n a)",
       test_cases=(("OP(np.asarray(a, dtype=float))", [(4,)]),))
defjvp(py_geometric_mean, lambda g, out, a: out * np.sum(g / a) / a.shape[0])
defvjp(py_harmonic_mean, lambda g, out, a, w: g * out ** 2 * w / (np.sum(w) * a ** 2),
       lambda g, out, a, w: g * (out - out ** 2 / a) / np.sum(w),
       name="py_harmonic_mean", params=(Param("a"), Param("w")), family="python",
       domain=(0.5, 2.0),
       derivation="sum(w) / sum(w / a): da = out^2 w / (sum(w) a^2), dw = (out - out^2 / a) / "
       "sum(w)",
       test_cases=(("OP(np.asarray(a, dtype=float), np.asarray(b, dtype=float))",
                    [(4,), (4,)]),))
defjvp(py_harmonic_mean, lambda g, out, a, w: out ** 2 * np.sum(g * w / a ** 2) / np.sum(w),
       lambda g, out, a, w: np.sum(g * (out - out ** 2 / a)) / np.sum(w))
defvjp(py_covariance, lambda g, out, a, b: g * (b - np.mean(b)) / (a.shape[0] - 1),
       lambda g, out, a, b: g * (a - np.mean(a)) / (a.shape[0] - 1),
       name="py_covariance", params=(Param("a"), Param("b")), family="python",
       derivation="sum((a - mean a)(b - mean b)) / (n - 1): da = (b - mean b) / (n - 1)",
       test_cases=(("OP(np.asarray(a, dtype=float), np.asarray(b, dtype=float))",
                    [(4,), (4,)]),))
defjvp(py_covariance, lambda g, out, a, b: np.sum(g * (b - np.mean(b))) / (a.shape[0] - 1),
       lambda g, out, a, b: np.sum(g * (a - np.mean(a))) / (a.shape[0] - 1))
# (Pearson's r = Sab / sqrt(Saa Sbb) of the deviations da, db: dr/da = db / sqrt(Saa Sbb)
# - r da / Saa; 'ranked' is a correlation of ranks, piecewise constant: 0)
defvjp(py_correlation,
       lambda g, out, a, b, method="linear": g * (
           (b - np.mean(b)) / np.sqrt(np.sum((a - np.mean(a)) ** 2) * np.sum((b - np.mean(b)) ** 2))
           - out * (a - np.mean(a)) / np.sum((a - np.mean(a)) ** 2))
       if method == "linear" else np.zeros_like(a),
       lambda g, out, a, b, method="linear": g * (
           (a - np.mean(a)) / np.sqrt(np.sum((a - np.mean(a)) ** 2) * np.sum((b - np.mean(b)) ** 2))
           - out * (b - np.mean(b)) / np.sum((b - np.mean(b)) ** 2))
       if method == "linear" else np.zeros_like(b), None,
       name="py_correlation", params=(Param("a"), Param("b"), Param("method", "linear")),
       family="python",
       derivation="Pearson's r = Sab / sqrt(Saa Sbb) over the deviations: dr/da = (b - mean b) "
       "/ sqrt(Saa Sbb) - r (a - mean a) / Saa; method='ranked': ranks, piecewise constant (0)",
       test_cases=(("OP(np.asarray(a, dtype=float), np.asarray(b, dtype=float))",
                    [(5,), (5,)]),))
defjvp(py_correlation,
       lambda g, out, a, b, method="linear": np.sum(g * (
           (b - np.mean(b)) / np.sqrt(np.sum((a - np.mean(a)) ** 2) * np.sum((b - np.mean(b)) ** 2))
           - out * (a - np.mean(a)) / np.sum((a - np.mean(a)) ** 2)))
       if method == "linear" else 0.0 * np.sum(g),
       lambda g, out, a, b, method="linear": np.sum(g * (
           (a - np.mean(a)) / np.sqrt(np.sum((a - np.mean(a)) ** 2) * np.sum((b - np.mean(b)) ** 2))
           - out * (b - np.mean(b)) / np.sum((b - np.mean(b)) ** 2)))
       if method == "linear" else 0.0 * np.sum(g), None)
