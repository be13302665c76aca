"""Elementwise ops: arithmetic, transcendentals, selections.

Rules never mention broadcasting: rows marked ``broadcasting=True`` have every VJP
unbroadcast to its input's shape by the reverse transform (one `unbroadcast`, in
srcad/runtime.py). ``c`` is the op's C expression for the fusion pass, in C99 math.h
spelling over the row's parameter names. The gradient tests build every broadcast shape
tuple from each row's spelling (tests/test_ops.py); ``test_cases`` add spellings the
grid does not reach (Python scalars, ``None`` bounds, method forms).

Constants in rules are Python floats (``math.log(2)``), never numpy scalars: numpy 2 lets a
Python float take a float32 array's precision, while ``np.log(2)`` (a float64 scalar) would
silently promote a float32 gradient to float64.
"""

import math
import operator

import numpy as np

from ..runtime import clip_grad, clip_grad_max, clip_grad_min
from .table import defjvp, defvjp

ANY = (-2.0, 2.0)
POS = (0.5, 2.0)  # a domain away from singularities
UNIT = (-0.9, 0.9)  # inside (-1, 1), for arcsin / arccos

# --- binary arithmetic (python operators) -----------------------------------------------------
defvjp(np.add, lambda g, out, x, y: g, lambda g, out, x, y: g,
       name="add", aliases=(operator.add,),
       spelling="x + y", elementwise=True, broadcasting=True, c="x + y", c_kinds="if",
       family="arithmetic", derivation="d(x+y) = dx + dy",
       test_cases=(("a + 1.0", [(3, 4)]), ("2 + a", [(3,)]), ("np.add(a, b)", [(3, 1), (4,)])))
defvjp(np.subtract, lambda g, out, x, y: g, lambda g, out, x, y: -g,
       name="subtract", aliases=(operator.sub,),
       spelling="x - y", elementwise=True, broadcasting=True, c="x - y",
       c_kinds="if",
       family="arithmetic", derivation="d(x-y) = dx - dy",
       test_cases=(("1.0 - a", [(3, 4)]), ("a - 1", [(3,)])))
defvjp(np.multiply, lambda g, out, x, y: g * y, lambda g, out, x, y: g * x,
       name="multiply", aliases=(operator.mul,),
       spelling="x * y", elementwise=True, broadcasting=True, c="x * y",
       c_kinds="if",
       family="arithmetic", derivation="d(xy) = y dx + x dy (product rule)",
       test_cases=(("2.0 * a", [(3, 4)]), ("a * 3", [()]), ("a * a", [(3, 4)])))
defvjp(np.true_divide, lambda g, out, x, y: g / y, lambda g, out, x, y: -g * out / y,
       name="divide", aliases=(operator.truediv,),
       spelling="x / y", elementwise=True, broadcasting=True, c="x / y",
       family="arithmetic", domain=(ANY, POS),
       derivation="d(x/y) = dx/y - (x/y) dy/y",
       test_cases=(("1.0 / a", [(3, 4)], POS), ("a / 4", [(3,)]), ("a / a", [(3,)], POS)))
defvjp(np.power,
       # (the base is 1 where y = 0, and np.where makes a Python-float base a numpy value:
       # 0.0 ** -0.5 is then inf, as numpy and torch give, not Python's ZeroDivisionError)
       lambda g, out, x, y: g * y * np.where(y == 0, 1, x) ** (y - 1),
       # (where x = 0 the log term is 0 for y >= 0, as torch, and log(0) = -inf for y < 0, as
       # torch: np.where(x == 0, y >= 0, x) reads 1 or 0 there)
       lambda g, out, x, y: g * out * np.log(np.where(x == 0, y >= 0, x)
                                             .astype(np.result_type(out))),
       name="power", aliases=(operator.pow, pow),
       spelling="x ** y", elementwise=True, broadcasting=True, c="pow(x, y)",
       # ndarray.__pow__ computes these exponents with other ufuncs (square, sqrt,
       # reciprocal, a copy), not with the power loop: numpy/_core/src/multiarray/number.c
       c_consts={"y": {2: "x * x", 0.5: "sqrt(x)", -1: "1 / x", 1: "x"}},
       family="arithmetic", domain=(POS, ANY),
       derivation="d(x^y) = y x^(y-1) dx + x^y log(x) dy (the first term is 0 where y = 0, "
       "also at x = 0, and the log term 0 where x = 0 and y >= 0, -inf where x = 0 and y < 0 "
       "(out * log 0), as torch; "
       "computed in out's dtype, so a Python-float base does not promote a float32 gradient; "
       "np.result_type, as out is a Python float when x and y are)",
       test_cases=(("a ** 2", [(3, 4)], ANY), ("a ** 3.0", [(3,)], ANY), ("2.0 ** a", [(3,)]),
                   ("a ** 0.5", [(3,)], POS), ("np.power(a, b)", [(3, 1), (4,)], (POS, ANY))))
defvjp(np.negative, lambda g, out, x: -g,
       name="negative", aliases=(operator.neg,),
       spelling="-x", elementwise=True, c="-x", c_kinds="if",
       family="arithmetic", derivation="d(-x) = -dx",
       test_cases=(("np.negative(a)", [(3,)]),))

# --- unary: powers, exponentials, logarithms --------------------------------------------------
defvjp(np.square, lambda g, out, x: g * 2 * x,
       name="square", elementwise=True, c="x * x", family="unary",
       derivation="d(x^2) = 2x dx")
defvjp(np.sqrt, lambda g, out, x: g / (2 * out),
       name="sqrt", elementwise=True, c="sqrt(x)", family="unary", domain=POS,
       derivation="d sqrt(x) = dx / (2 sqrt(x))")
defvjp(np.cbrt, lambda g, out, x: g / (3 * out * out),
       name="cbrt", elementwise=True, c="cbrt(x)", family="unary", domain=POS,
       derivation="d x^(1/3) = dx / (3 x^(2/3))")
defvjp(np.reciprocal, lambda g, out, x: -g * out * out,
       name="reciprocal", elementwise=True, c="1 / x", family="unary", domain=POS,
       derivation="d(1/x) = -dx / x^2")
defvjp(np.exp, lambda g, out, x: g * out,
       name="exp", elementwise=True, c="exp(x)", family="unary",
       derivation="d e^x = e^x dx")
defvjp(np.exp2, lambda g, out, x: g * out * math.log(2),
       name="exp2", elementwise=True, c="exp2(x)", family="unary",
       derivation="d 2^x = 2^x log(2) dx")
defvjp(np.expm1, lambda g, out, x: g * (out + 1),
       name="expm1", elementwise=True, c="expm1(x)", family="unary",
       derivation="d (e^x - 1) = e^x dx")
defvjp(np.log, lambda g, out, x: g / x,
       name="log", elementwise=True, c="log(x)", family="unary", domain=POS,
       derivation="d log x = dx / x")
defvjp(np.log2, lambda g, out, x: g / (x * math.log(2)),
       name="log2", elementwise=True, c="log2(x)", family="unary", domain=POS,
       derivation="d log2 x = dx / (x log 2)")
defvjp(np.log10, lambda g, out, x: g / (x * math.log(10)),
       name="log10", elementwise=True, c="log10(x)", family="unary", domain=POS,
       derivation="d log10 x = dx / (x log 10)")
defvjp(np.log1p, lambda g, out, x: g / (1 + x),
       name="log1p", elementwise=True, c="log1p(x)", family="unary", domain=(-0.5, 2.0),
       derivation="d log(1+x) = dx / (1+x)")
# (where out is -inf every term is -inf and has no weight: exp(x - out) would be NaN there, and
# a zero cotangent times it NaN, as in the CTC or HMM forward recursions' unreachable states)
defvjp(np.logaddexp, lambda g, out, x, y: g * np.exp(x - np.where(out == -np.inf, np.inf, out)),
       lambda g, out, x, y: g * np.exp(y - np.where(out == -np.inf, np.inf, out)),
       name="logaddexp", elementwise=True, broadcasting=True, family="unary",
       c="x == y ? x + log(2.0) : (x > y ? x + log1p(exp(y - x)) : y + log1p(exp(x - y)))",
       derivation="d log(e^x + e^y) = (e^x dx + e^y dy) / (e^x + e^y) = e^(x-out) dx + ... "
       "(0 where out = -inf: both terms -inf)")

# --- unary: trigonometric and hyperbolic ------------------------------------------------------
defvjp(np.sin, lambda g, out, x: g * np.cos(x),
       name="sin", elementwise=True, c="sin(x)", family="trigonometric",
       derivation="d sin x = cos x dx")
defvjp(np.cos, lambda g, out, x: -g * np.sin(x),
       name="cos", elementwise=True, c="cos(x)", family="trigonometric",
       derivation="d cos x = -sin x dx")
defvjp(np.tan, lambda g, out, x: g * (1 + out * out),
       name="tan", elementwise=True, c="tan(x)", family="trigonometric", domain=(-1.2, 1.2),
       derivation="d tan x = (1 + tan^2 x) dx")
defvjp(np.arcsin, lambda g, out, x: g / np.sqrt(1 - x * x),
       name="arcsin", elementwise=True, c="asin(x)", family="trigonometric", domain=UNIT,
       derivation="d asin x = dx / sqrt(1 - x^2)")
defvjp(np.arccos, lambda g, out, x: -g / np.sqrt(1 - x * x),
       name="arccos", elementwise=True, c="acos(x)", family="trigonometric", domain=UNIT,
       derivation="d acos x = -dx / sqrt(1 - x^2)")
defvjp(np.arctan, lambda g, out, x: g / (1 + x * x),
       name="arctan", elementwise=True, c="atan(x)", family="trigonometric",
       derivation="d atan x = dx / (1 + x^2)")
defvjp(np.sinh, lambda g, out, x: g * np.cosh(x),
       name="sinh", elementwise=True, c="sinh(x)", family="trigonometric",
       derivation="d sinh x = cosh x dx")
defvjp(np.cosh, lambda g, out, x: g * np.sinh(x),
       name="cosh", elementwise=True, c="cosh(x)", family="trigonometric",
       derivation="d cosh x = sinh x dx")
defvjp(np.tanh, lambda g, out, x: g * (1 - out * out),
       name="tanh", elementwise=True, c="tanh(x)", family="trigonometric",
       derivation="d tanh x = (1 - tanh^2 x) dx")

# --- selections -------------------------------------------------------------------------------
defvjp(np.absolute, lambda g, out, x: g * np.sign(x),
       name="abs", spelling="np.abs(x)", elementwise=True, c="fabs(x)", family="selection",
       derivation="d|x| = sign(x) dx (0 at 0, as torch)",
       test_cases=(("abs(a)", [(3, 4)]), ("np.absolute(a)", [(3,)])))
defvjp(np.maximum,
       lambda g, out, x, y: np.where(x > y, g, np.where(x == y, g / 2, 0)),
       lambda g, out, x, y: np.where(y > x, g, np.where(x == y, g / 2, 0)),
       name="maximum", elementwise=True, broadcasting=True,
       c="(x > y || isnan(x)) ? x : y", c_kinds="if", family="selection",
       derivation="g flows to the larger input; ties split evenly (as torch)",
       test_cases=(("np.maximum(a, 0.0)", [(3, 4)]), ("np.maximum(0, a)", [(3,)])))
defvjp(np.minimum,
       lambda g, out, x, y: np.where(x < y, g, np.where(x == y, g / 2, 0)),
       lambda g, out, x, y: np.where(y < x, g, np.where(x == y, g / 2, 0)),
       name="minimum", elementwise=True, broadcasting=True,
       c="(x < y || isnan(x)) ? x : y", c_kinds="if", family="selection",
       derivation="g flows to the smaller input; ties split evenly (as torch)",
       test_cases=(("np.minimum(a, 0.5)", [(3, 4)]),))
defvjp(np.where,
       None,
       lambda g, out, condition, x, y: np.where(condition, g, 0),
       lambda g, out, condition, x, y: np.where(condition, 0, g),
       name="where", elementwise=True, broadcasting=True, c="condition ? x : y",
       c_types={"condition": "bool"}, c_kinds="bif",
       family="selection", derivation="g flows to the selected input",
       test_cases=(("np.where(a > 0, a, 0.0)", [(3, 4)]), ("np.where(a > b, a * b, b)",
                                                            [(3, 4), (4,)]),
                   ("np.where(a < 0, 1.0, a)", [(3,)])))
_CLIP_C = "((a > a_min || isnan(a)) ? a : a_min)"  # maximum(a, a_min), numpy's rule
defvjp(np.clip,  # (one bound alone, x.clip(min=0): the other is None)
       lambda g, out, a, a_min=None, a_max=None: clip_grad(g, a, a_min, a_max),
       lambda g, out, a, a_min=None, a_max=None: clip_grad_min(g, a, a_min, a_max),
       lambda g, out, a, a_min=None, a_max=None: clip_grad_max(g, a, a_min, a_max),
       name="clip", elementwise=True, broadcasting=True, family="selection",
       keywords={"min": "a_min", "max": "a_max"},  # (numpy 2's names for them)
       spell_defaults=True,  # (np.clip(x, 0, None): numpy 2 wants both bounds)
       c=f"({_CLIP_C} < a_max || isnan({_CLIP_C})) ? {_CLIP_C} : a_max", c_kinds="if",
       domain=(ANY, (-1.5, -0.5), (0.5, 1.5)),
       derivation="minimum(maximum(a, a_min), a_max): g flows to a inside [a_min, a_max], "
       "else to the bound that is the output",
       test_cases=(("np.clip(a, -1.0, 1.0)", [(3, 4)]), ("np.clip(a, None, 0.5)", [(3, 4)]),
                   ("np.clip(a, -0.5, None)", [(3,)]), ("a.clip(-1.0, 1.0)", [(3,)]),
                   ("a.clip(min=-0.5)", [(3,)]), ("np.clip(a, max=0.5)", [(3, 4)]),
                   ("np.clip(a, b, c)", [(3, 4), (4,), ()], ((-2, 2), (0.5, 1), (-1, -0.5)))))

# --- more binary functions --------------------------------------------------------------------
# (constants below are Python floats, so float32 stays float32; numpy computes deg2rad's and
# rad2deg's constant in the element type, pi_f / 180f for float32: the C spells it in double
# and leaves the rounding to the element type to the fuser)
_PI = "3.141592653589793"
_LOG2E = "1.4426950408889634"
AWAY = (0.5, 2.0)  # away from the origin, where hypot / arctan2 are not differentiable
defvjp(np.hypot, lambda g, out, x, y: g * x / out, lambda g, out, x, y: g * y / out,
       name="hypot", elementwise=True, broadcasting=True, c="hypot(x, y)", family="unary",
       domain=(AWAY, ANY), derivation="d sqrt(x^2 + y^2) = (x dx + y dy) / out")
defvjp(np.arctan2,
       lambda g, out, y, x: g * x / (x * x + y * y),
       lambda g, out, y, x: -g * y / (x * x + y * y),
       name="arctan2", elementwise=True, broadcasting=True, c="atan2(y, x)",
       family="trigonometric", domain=(ANY, AWAY),
       derivation="atan2(y, x) is the angle of (x, y): d = (x dy - y dx) / (x^2 + y^2) (x kept "
       "positive in tests: the angle jumps by 2 pi across the negative x axis)")
defvjp(np.logaddexp2,
       lambda g, out, x, y: g * np.exp2(x - np.where(out == -np.inf, np.inf, out)),
       lambda g, out, x, y: g * np.exp2(y - np.where(out == -np.inf, np.inf, out)),
       name="logaddexp2", elementwise=True, broadcasting=True, family="unary",
       c=f"x == y ? x + 1 : (x - y > 0 ? x + {_LOG2E} * log1p(exp2(y - x)) : "
         f"(x - y <= 0 ? y + {_LOG2E} * log1p(exp2(x - y)) : x - y))",
       derivation="d log2(2^x + 2^y) = (2^x dx + 2^y dy) / (2^x + 2^y) = 2^(x-out) dx + "
       "2^(y-out) dy (0 where out = -inf: both terms -inf)")
defvjp(np.fmax,
       lambda g, out, x, y: np.where(np.logical_or(x > y, np.isnan(y)), g,
                                     np.where(x == y, g / 2, 0)),
       lambda g, out, x, y: np.where(np.logical_or(y > x, np.logical_and(
           np.isnan(x), np.logical_not(np.isnan(y)))), g, np.where(x == y, g / 2, 0)),
       name="fmax", elementwise=True, broadcasting=True, family="selection",
       # not fused (c_kinds=""): numpy's own answer for fmax(+0, -0) depends on the
       # array's length and alignment (its SIMD loop returns y, its scalar peel x), so no
       # C expression matches it bit for bit
       c="(x >= y || isnan(y)) ? x : y", c_kinds="",
       derivation="the larger input, ignoring a NaN (maximum propagates it): g flows to the "
       "input that is the output -- x where x > y or y is NaN, y where y > x or only x is "
       "NaN -- and ties split evenly (as maximum). (C: for +0 vs -0, numpy's SIMD and scalar "
       "loops return different zeros; the C returns x, as the scalar loop)",
       test_cases=(("np.fmax(a, 0.0)", [(3, 4)]),
                   ("np.fmax(np.where(a > 1.0, np.nan, a), b)", [(3, 4), (4,)]),
                   ("np.fmax(a, np.where(b > 1.0, np.nan, b))", [(3, 4), (3, 4)])))
defvjp(np.fmin,
       lambda g, out, x, y: np.where(np.logical_or(x < y, np.isnan(y)), g,
                                     np.where(x == y, g / 2, 0)),
       lambda g, out, x, y: np.where(np.logical_or(y < x, np.logical_and(
           np.isnan(x), np.logical_not(np.isnan(y)))), g, np.where(x == y, g / 2, 0)),
       name="fmin", elementwise=True, broadcasting=True, family="selection",
       c="(x <= y || isnan(y)) ? x : y", c_kinds="",  # not fused: see fmax
       derivation="the smaller input, ignoring a NaN (minimum propagates it): as fmax",
       test_cases=(("np.fmin(a, 0.5)", [(3, 4)]),
                   ("np.fmin(np.where(a > 1.0, np.nan, a), b)", [(3, 4), (4,)]),
                   ("np.fmin(a, np.where(b > 1.0, np.nan, b))", [(3, 4), (3, 4)])))

# --- more unary functions ---------------------------------------------------------------------
defvjp(np.sinc,
       lambda g, out, x: g * np.where(x == 0, 0, (np.cos(math.pi * x) - out)
                                      / np.where(x == 0, 1, x)),
       name="sinc", elementwise=True, family="trigonometric",
       c=f"sin({_PI} * (x == 0 ? 1.0e-20 : x)) / ({_PI} * (x == 0 ? 1.0e-20 : x))",
       derivation="sinc x = sin(pi x) / (pi x) (numpy: x = 0 read as 1e-20): d sinc = "
       "(cos(pi x) - sinc x) / x dx, 0 at x = 0 (cancellation costs relative accuracy "
       "for |x| << 1 in float32)")
defvjp(np.deg2rad, lambda g, out, x: g * (math.pi / 180),
       name="deg2rad", elementwise=True, family="unary", aliases=(np.radians,),
       c=f"x * ({_PI} / 180.0)", linear=("x",),
       derivation="a scaling by pi / 180", test_cases=(("np.radians(a)", [(3, 4)]),))
defvjp(np.rad2deg, lambda g, out, x: g * (180 / math.pi),
       name="rad2deg", elementwise=True, family="unary", aliases=(np.degrees,),
       c=f"x * (180.0 / {_PI})", linear=("x",),
       derivation="a scaling by 180 / pi", test_cases=(("np.degrees(a)", [(3, 4)]),))

# --- remainder (`x % y` on floats), inverse hyperbolics, identities of real inputs ---------
_REM = ("y == 0 ? fmod(x, y) : (fmod(x, y) != 0 ? ((y < 0) != (fmod(x, y) < 0) ? fmod(x, y) + y "
        ": fmod(x, y)) : copysign(0.0, y))")  # numpy's (and Python's) floored remainder
for _fn, _name, _spelling in ((operator.mod, "mod", "x % y"),
                              (np.remainder, "remainder", "np.remainder(x, y)")):
    defvjp(_fn, lambda g, out, x, y: g, lambda g, out, x, y: -g * np.floor(x / y),
           name=_name, spelling=_spelling, elementwise=True, broadcasting=True, c=_REM,
           family="arithmetic", domain=(ANY, POS),
           derivation="x mod y = x - floor(x / y) y: dx - floor(x / y) dy (piecewise; jumps "
           "where x / y is an integer)",
           test_cases=(("a * (a.shape[1] % 3)", [(3, 4)]), ("a % 0.7", [(3, 4)]),
                       ("2.5 % a", [(3,)], POS)) if _name == "mod" else
           (("np.mod(a, 0.7)", [(3, 4)]),))
defvjp(np.arcsinh, lambda g, out, x: g / np.sqrt(x * x + 1),
       name="arcsinh", elementwise=True, c="asinh(x)", family="trigonometric",
       derivation="d asinh x = dx / sqrt(x^2 + 1)")
defvjp(np.arccosh, lambda g, out, x: g / np.sqrt(x * x - 1),
       name="arccosh", elementwise=True, c="acosh(x)", family="trigonometric", domain=(1.1, 3.0),
       derivation="d acosh x = dx / sqrt(x^2 - 1)")
defvjp(np.arctanh, lambda g, out, x: g / (1 - x * x),
       name="arctanh", elementwise=True, c="atanh(x)", family="trigonometric", domain=UNIT,
       derivation="d atanh x = dx / (1 - x^2)")
defvjp(np.fabs, lambda g, out, x: g * np.sign(x),
       name="fabs", elementwise=True, c="fabs(x)", family="selection",
       derivation="d|x| = sign(x) dx (0 at 0, as abs)")
defvjp(np.conjugate, lambda g, out, x: g, name="conj", elementwise=True, c="x",
       family="unary", linear=("x",), aliases=(np.conj,),
       derivation="srcad differentiates real values: the identity",
       test_cases=(("np.conj(a)", [(3,)]),))
defvjp(np.real, lambda g, out, val: g, name="real", linear=("val",), family="unary", view=True,
       derivation="srcad differentiates real values: the identity",
       test_cases=(("np.real(a)", [(3, 4)]),))
defvjp(np.real_if_close, lambda g, out, a, tol=100: g, name="real_if_close", linear=("a",),
       family="unary", view=True, derivation="srcad differentiates real values: the identity",
       test_cases=(("np.real_if_close(a)", [(3,)]),))
defvjp(np.nan_to_num,
       lambda g, out, x, copy=True, nan=0.0, posinf=None, neginf=None:
           np.where(np.isfinite(x), g, 0),
       name="nan_to_num", family="selection",
       derivation="g passes where x is finite; replaced NaNs and infinities are constants",
       test_cases=(("np.nan_to_num(a + np.where(a > 1.2, np.inf, 0.0), posinf=5.0)", [(3, 4)]),
                   ("np.nan_to_num(np.where(a < -1.2, np.nan, a), nan=2.0)", [(3, 4)]),
                   ("np.nan_to_num(a, posinf=1.0)", [(3,)])))
defjvp(np.nan_to_num,
       lambda g, out, x, copy=True, nan=0.0, posinf=None, neginf=None:
           np.where(np.isfinite(x), g, 0))
