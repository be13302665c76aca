"""numpy's polynomial functions on coefficient arrays (highest power first) and a few array
builders: polyval, polyder, polyint, polyadd, polysub, polymul, vander, trapezoid, diagflat,
ediff1d, resize.

Every rule is written with rows that exist (powers, sums, slices, pad, correlate), so it
differentiates again. ``np.polyder(np.ones_like(p), m)`` is the vector of falling-factorial
factors polyder multiplies the coefficients by (polyint's likewise divides): polyder and
polyint are linear in p, and their VJPs are g times those factors, placed back.
"""

import numpy as np

from ..runtime import unbroadcast
from ..runtime_poly import count_of, space_fraction, trapezoid_weights
from .table import Param, defjvp, defnondiff, defvjp

_F = "polynomial"
_A = "array"

defvjp(np.polyval,
       lambda g, out, p, x: np.reshape(
           np.ravel(g * np.ones_like(out))
           @ np.reshape(x, (-1, 1)) ** np.arange(np.size(p) - 1, -1, -1), np.shape(p))
       .astype(np.result_type(p)),
       lambda g, out, p, x: (g * np.polyval(np.polyder(p), x)).astype(np.result_type(x)),
       name="polyval", family=_F,
       derivation="out = sum_i p_i x^(N-1-i): dp_i = sum over x of g x^(N-1-i), dx = g p'(x) "
       "(polyder)",
       test_cases=(("np.polyval(a, b)", [(4,), (3,)]), ("np.polyval(a, b)", [(3,), (2, 3)]),
                   ("np.polyval(a, b)", [(3,), ()]), ("np.polyval(a, 0.5)", [(5,)]),
                   ("np.polyval(a, b)", [(1,), (3,)])))
defvjp(np.polyder,
       lambda g, out, p, m=1: np.concatenate(
           (g * np.polyder(np.ones_like(p), m), np.zeros(m))).astype(np.result_type(p)),
       None, name="polyder", linear=("p",), family=_F,
       derivation="out_i = p_i (N-1-i)(N-2-i)...: linear, dp = g times those factors, 0 for the "
       "last m coefficients",
       test_cases=(("np.polyder(a)", [(4,)]), ("np.polyder(a, 2)", [(5,)]),
                   ("np.polyder(a, m=3)", [(5,)])))
defvjp(np.polyint,
       lambda g, out, p, m=1, k=None:
           (g[:np.size(p)] * np.polyint(np.ones_like(p), m)[:np.size(p)])
           .astype(np.result_type(p)),
       None, None, name="polyint", linear=("p",), family=_F, no_rule_for=("k",),
       derivation="out_i = p_i / ((N-i)(N-i+1)...), then m integration constants: dp = g's "
       "first N entries times those factors (a differentiated k is refused)",
       test_cases=(("np.polyint(a)", [(4,)]), ("np.polyint(a, 2)", [(3,)]),
                   ("np.polyint(a, 1, 2.0)", [(3,)])))
defvjp(np.polyadd, lambda g, out, a1, a2: g[np.size(g) - np.size(a1):],
       lambda g, out, a1, a2: g[np.size(g) - np.size(a2):],
       name="polyadd", linear=("a1", "a2"), family=_F,
       derivation="the shorter padded with leading zeros, then added: each gets g's last "
       "entries",
       test_cases=(("np.polyadd(a, b)", [(3,), (5,)]), ("np.polyadd(a, b)", [(4,), (2,)]),
                   ("np.polyadd(a, a)", [(3,)])))
defvjp(np.polysub, lambda g, out, a1, a2: g[np.size(g) - np.size(a1):],
       lambda g, out, a1, a2: -g[np.size(g) - np.size(a2):],
       name="polysub", linear=("a1", "a2"), family=_F,
       derivation="as polyadd, the second negated",
       test_cases=(("np.polysub(a, b)", [(3,), (5,)]), ("np.polysub(a, b)", [(4,), (2,)])))
defvjp(np.polymul, lambda g, out, a1, a2: np.correlate(g, a2, "valid"),
       lambda g, out, a1, a2: np.correlate(g, a1, "valid"),
       name="polymul", linear=("a1", "a2"), family=_F,
       derivation="the full convolution of the coefficients: da1 = correlate(g, a2, 'valid'), "
       "da2 = correlate(g, a1, 'valid')",
       test_cases=(("np.polymul(a, b)", [(3,), (4,)]), ("np.polymul(a, b)", [(4,), (2,)]),
                   ("np.polymul(a, a)", [(3,)])))
defvjp(np.vander,
       lambda g, out, x, N=None, increasing=False: np.sum(
           g * (np.arange(np.shape(out)[1]) if increasing else
                np.arange(np.shape(out)[1] - 1, -1, -1))
           * np.reshape(x, (-1, 1)) ** np.maximum(
               (np.arange(np.shape(out)[1]) if increasing else
                np.arange(np.shape(out)[1] - 1, -1, -1)) - 1, 0), axis=1)
       .astype(np.result_type(x)),
       None, None, name="vander", family=_F,
       derivation="out_ij = x_i^(e_j): dx_i = sum_j g_ij e_j x_i^(e_j - 1)",
       test_cases=(("np.vander(a)", [(3,)]), ("np.vander(a, 4)", [(3,)]),
                   ("np.vander(a, 3, increasing=True)", [(4,)]),
                   ("np.vander(a, N=2)", [(5,)])))
_TRAP = ("sum of (y_i + y_(i+1)) / 2 times the spacing x_(i+1) - x_i (or dx): bilinear in y "
         "and the spacings. dy: g times each point's weight, the spacings averaged over its two "
         "intervals (half at the ends); dx: each spacing gets g times the mean of its interval's "
         "two samples, and diff's transpose takes those to the points (a 1-D x summed over the "
         "other axes); ddx: g times the sum of the interval means")


def _trapezoid_grad_x(g, out, y, x=None, dx=1.0, axis=-1):
    """(x 1-D: the samples along `axis`, the other axes summed; else x's own shape)"""
    return (np.sum(np.reshape(-np.diff(
        np.expand_dims(g, -1) * (np.moveaxis(y, axis, -1)[..., 1:]
                                 + np.moveaxis(y, axis, -1)[..., :-1]) * 0.5,
        axis=-1, prepend=0.0, append=0.0), (-1, np.shape(y)[axis])), axis=0)
        if np.ndim(x) == 1 else unbroadcast(np.moveaxis(-np.diff(
            np.expand_dims(g, -1) * (np.moveaxis(y, axis, -1)[..., 1:]
                                     + np.moveaxis(y, axis, -1)[..., :-1]) * 0.5,
            axis=-1, prepend=0.0, append=0.0), -1, axis), x)).astype(np.result_type(x))


for _fn in (getattr(np, "trapezoid", None), getattr(np, "trapz", None)):
    if _fn is None:
        continue
    _n = _fn.__name__
    defvjp(_fn,
           lambda g, out, y, x=None, dx=1.0, axis=-1: np.moveaxis(
               np.expand_dims(g, -1) * trapezoid_weights(np.shape(y)[axis], x, dx, axis), -1,
               axis),
           _trapezoid_grad_x,
           lambda g, out, y, x=None, dx=1.0, axis=-1: (np.sum(g * np.sum(
               np.moveaxis(y, axis, -1)[..., 1:] + np.moveaxis(y, axis, -1)[..., :-1],
               axis=-1)) * 0.5 if x is None else np.zeros_like(dx)),
           None, name=_n, linear=("y", "x"), family=_A, derivation=_TRAP,
           test_cases=((f"np.{_n}(a)", [(5,)]), (f"np.{_n}(a, dx=0.5)", [(3, 4)]),
                       (f"np.{_n}(a, axis=0)", [(4, 3)]),
                       (f"np.{_n}(a, np.array([0.0, 0.5, 2.0, 2.5]))", [(2, 4)]),
                       (f"np.{_n}(a, [0.0, 1.0, 3.0], axis=1)", [(2, 3, 2)]),
                       (f"np.{_n}(a, b)", [(5,), (5,)]),
                       (f"np.{_n}(a, b)", [(2, 4), (4,)]),
                       (f"np.{_n}(a, b, axis=0)", [(4, 3), (4,)]),
                       (f"np.{_n}(a, b, axis=0)", [(4, 3), (4, 3)]),
                       (f"np.{_n}(a, b, axis=1)", [(2, 3, 2), (2, 3, 1)]),
                       (f"np.{_n}(a, b)", [(1,), (1,)]),
                       (f"np.{_n}(a, dx=b)", [(3, 4), ()]),
                       (f"np.{_n}(a, dx=b, axis=0)", [(3, 4), ()])))
    # (linear in y and in x, not jointly: each tangent through the op itself; a dx given
    # beside x is not read)
    defjvp(_fn, None, None,
           lambda g, out, y, x=None, dx=1.0, axis=-1: (
               g * np.sum(np.moveaxis(y, axis, -1)[..., 1:]
                          + np.moveaxis(y, axis, -1)[..., :-1], axis=-1) * 0.5
               if x is None else np.zeros_like(out)),
           None)
defvjp(np.diagflat, lambda g, out, v, k=0: np.reshape(np.diagonal(g, k), np.shape(v)), None,
       name="diagflat", linear=("v",), family=_A,
       derivation="ravel(v) on the k-th diagonal: g's k-th diagonal, reshaped to v",
       test_cases=(("np.diagflat(a)", [(3,)]), ("np.diagflat(a, 1)", [(2, 2)]),
                   ("np.diagflat(a, k=-2)", [(3,)])))
defvjp(np.ediff1d,
       lambda g, out, ary, to_end=None, to_begin=None: np.reshape(-np.diff(np.pad(
           g[count_of(to_begin):count_of(to_begin) + np.size(ary) - 1], 1)),
           np.shape(ary)),
       None, None, name="ediff1d", linear=("ary",), family=_A,
       no_rule_for=("to_end", "to_begin"),
       derivation="diff of ravel(ary) between to_begin and to_end: the middle of g through "
       "diff's transpose (a differentiated to_begin or to_end is refused)",
       test_cases=(("np.ediff1d(a)", [(5,)]), ("np.ediff1d(a)", [(2, 3)]),
                   ("np.ediff1d(a, to_begin=[1.0, 2.0])", [(4,)]),
                   ("np.ediff1d(a, to_end=0.5, to_begin=-1.0)", [(4,)])))
defvjp(np.resize,
       lambda g, out, a, new_shape: np.reshape(np.sum(np.reshape(
           np.pad(np.ravel(g), (0, -np.size(g) % np.size(a))), (-1, np.size(a))), axis=0),
           np.shape(a)),
       None, name="resize", linear=("a",), family=_A,
       derivation="ravel(a) repeated cyclically to the new size: each element gets the sum of "
       "g over its copies",
       test_cases=(("np.resize(a, (2, 4))", [(3,)]), ("np.resize(a, 7)", [(2, 2)]),
                   ("np.resize(a, (2,))", [(2, 3)])))

# (linear in x -- its transpose: each interval gets the mean of its two points' cotangents,
# and diff's transpose takes those to the points -- and, where there is no x, in dx)
defvjp(trapezoid_weights, None,
       lambda g, out, n, x=None, dx=1.0, axis=-1: (
           -np.diff((g[..., :-1] + g[..., 1:]) * 0.5, axis=-1, prepend=0.0, append=0.0)
           if np.ndim(x) == 1 else np.moveaxis(-np.diff(
               (g[..., :-1] + g[..., 1:]) * 0.5, axis=-1, prepend=0.0, append=0.0), -1, axis)),
       lambda g, out, n, x=None, dx=1.0, axis=-1: (
           np.sum(g * trapezoid_weights(n)) if x is None else np.zeros_like(dx)),
       None, name="trapezoid_weights", family="runtime", linear=("x",),
       derivation="the spacings averaged over each point's two intervals: linear in x "
       "(transpose: the intervals' mean cotangent through diff's transpose) and in dx; "
       "checked through np.trapezoid's second derivatives")
defjvp(trapezoid_weights, None, None,
       lambda g, out, n, x=None, dx=1.0, axis=-1: (
           g * trapezoid_weights(n) if x is None else np.zeros_like(out)), None)
defnondiff(count_of, name="count_of", family="runtime", params=(Param("v"),))
defnondiff(space_fraction, name="space_fraction", family="runtime",
           params=(Param("shape"), Param("num"), Param("endpoint", True), Param("axis", 0)))

# --- forward mode (the rows above that are not linear) -----------------------------------------
defjvp(np.polyval, lambda g, out, p, x: np.polyval(g, x),
       lambda g, out, p, x: (g * np.polyval(np.polyder(p), x)).astype(np.result_type(x)))
defjvp(np.vander,
       lambda g, out, x, N=None, increasing=False: (
           np.reshape(g, (-1, 1)) * (np.arange(np.shape(out)[1]) if increasing else
                                     np.arange(np.shape(out)[1] - 1, -1, -1))
           * np.reshape(x, (-1, 1)) ** np.maximum(
               (np.arange(np.shape(out)[1]) if increasing else
                np.arange(np.shape(out)[1] - 1, -1, -1)) - 1, 0)).astype(np.result_type(x)),
       None, None)
# (affine in each argument, not multilinear: the other argument's part of the output is no part
# of the tangent; to_begin, to_end, k are copied into the output exactly, so T(g) - T(0) is)
defjvp(np.polyadd, lambda g, out, a1, a2: np.polyadd(g, np.zeros_like(a2)),
       lambda g, out, a1, a2: np.polyadd(np.zeros_like(a1), g))
defjvp(np.polysub, lambda g, out, a1, a2: np.polysub(g, np.zeros_like(a2)),
       lambda g, out, a1, a2: np.polysub(np.zeros_like(a1), g))
defjvp(np.polyint, lambda g, out, p, m=1, k=None:
       np.polyint(g, m, k) - np.polyint(np.zeros_like(g), m, k), None, None)
defjvp(np.ediff1d, lambda g, out, ary, to_end=None, to_begin=None:
       np.ediff1d(g, to_end, to_begin) - np.ediff1d(np.zeros_like(g), to_end, to_begin),
       None, None)

# --- logspace, geomspace: the endpoints (and logspace's base) ---------------------------------
# (T: where each output sits between the endpoints, 0 to 1, shaped like the output)
defvjp(np.logspace,
       lambda g, out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0:
           unbroadcast(np.sum(g * out * np.log(base) * (1 - space_fraction(
               np.shape(out), num, endpoint, axis)),
               axis=axis), start),
       lambda g, out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0:
           unbroadcast(np.sum(g * out * np.log(base) * space_fraction(
               np.shape(out), num, endpoint, axis),
               axis=axis), stop),
       None, None,
       lambda g, out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0:
           unbroadcast(np.sum(g * out * (np.log(out) / np.log(base))
                              / base, axis=axis), base),
       None, None, name="logspace", family=_A, domain=((-1.0, 1.0), (-1.0, 1.0), (1.5, 3.0)),
       derivation="base^((1 - t) start + t stop): d = out log(base) ((1 - t) dstart + t dstop) "
       "+ out (exponent / base) dbase, summed over the points",
       test_cases=(("np.logspace(a, b, 5)", [(), ()]), ("np.logspace(a, b, 4, endpoint=False)",
                                                      [(), ()]),
                   ("np.logspace(a, b, 3, base=c)", [(), (), ()]),
                   ("np.logspace(a, b, 3, axis=1)", [(2,), (2,)]),
                   ("np.logspace(a, 1.0, 4)", [(3,)])))
defvjp(np.geomspace,
       lambda g, out, start, stop, num=50, endpoint=True, dtype=None, axis=0:
           unbroadcast(np.sum(g * out * (1 - space_fraction(np.shape(out), num, endpoint, axis)),
               axis=axis) / start, start),
       lambda g, out, start, stop, num=50, endpoint=True, dtype=None, axis=0:
           unbroadcast(np.sum(g * out * space_fraction(np.shape(out), num, endpoint, axis),
               axis=axis) / stop, stop),
       None, None, None, None, name="geomspace", family=_A, domain=(0.5, 2.0),
       derivation="start (stop / start)^t: d = out ((1 - t) dstart / start + t dstop / stop), "
       "summed over the points",
       test_cases=(("np.geomspace(a, b, 5)", [(), ()]),
                   ("np.geomspace(a, b, 4, endpoint=False)", [(), ()]),
                   ("np.geomspace(-a, -b, 3)", [(), ()]),
                   ("np.geomspace(a, b, 3, axis=1)", [(2,), (2,)])))
defjvp(np.logspace,
       lambda g, out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0:
           out * np.log(base) * (1 - space_fraction(np.shape(out), num, endpoint, axis))
           * np.expand_dims(g, axis),
       lambda g, out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0:
           out * np.log(base) * space_fraction(
               np.shape(out), num, endpoint, axis) * np.expand_dims(g, axis),
       None, None,
       lambda g, out, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0:
           out * (np.log(out) / np.log(base)) / base
           * np.expand_dims(g, axis), None, None)
defjvp(np.geomspace,
       lambda g, out, start, stop, num=50, endpoint=True, dtype=None, axis=0:
           out * (1 - space_fraction(
               np.shape(out), num, endpoint, axis)) * np.expand_dims(g / start, axis),
       lambda g, out, start, stop, num=50, endpoint=True, dtype=None, axis=0:
           out * space_fraction(
               np.shape(out), num, endpoint, axis) * np.expand_dims(g / stop, axis),
       None, None, None, None)
