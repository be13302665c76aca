"""Python's `math` functions, and `operator`'s abs / pos / matmul, on differentiated numbers.

The value is the function's own: a row's spelling calls the very function object
(``math_sin`` in generated code is ``math.sin``, srcad/runtime_pymath.py), so ``math.sin(x)``
gives the Python float calling it gives, to the last bit. The derivative is the formula in
numpy, computed from x (so a float32 x gets a float32 gradient): ``math.sin``: g cos(x).

``math.lgamma`` / ``math.gamma``: their derivative is the digamma function, which neither
numpy nor the standard library has: `py_polygamma` (runtime_pymath.py) computes it, and its
own derivatives, in Python (a row for each order). Not here: ``math.prod`` / ``math.dist`` /
``math.fsum``-like functions of sequences (srcad/pyfuncs.py's pattern), the integer-valued and
piecewise-constant ones
(floor, ceil, trunc, frexp's exponent: the census lists them).
"""

import math
import operator

import numpy as np

from ..runtime import matmul_grad_a, matmul_grad_b
from ..runtime_pymath import NAMES, math_log, py_polygamma
from .table import defvjp

_F = "python math"
ANY = (-2.0, 2.0)
POS = (0.5, 2.0)
UNIT = (-0.9, 0.9)
_CASES = (("OP(a) * a", [()]), ("OP(a[1]) * a", [(3,)]))
_CASES2 = (("OP(a, b) * a", [(), ()]), ("OP(a[0], b) * b", [(2,), ()]))


def _row(name, *rules, domain=ANY, derivation="", cases=_CASES, params=None):
    fn = getattr(math, name)
    n = len(rules)
    names = params or ("x", "y")[:n] if n <= 2 else params
    meta = {"name": f"math_{name}", "family": _F, "domain": domain, "test_cases": cases,
            "spelling": f"math_{name}({', '.join(names)})", "derivation": derivation}
    return _scalar(defvjp(fn, *rules, **meta))


def _scalar(op):
    """A function of numbers (or, for abs, elementwise): its Jacobian is diagonal, so each VJP
    rule with g the argument's tangent is its JVP rule."""
    op.jvps = op.vjps
    return op


_row("sin", lambda g, out, x: g * np.cos(x), derivation="d sin x = cos x dx")
_row("cos", lambda g, out, x: -g * np.sin(x), derivation="d cos x = -sin x dx")
_row("tan", lambda g, out, x: g * (1 + np.tan(x) ** 2), domain=(-1.2, 1.2),
     derivation="d tan x = (1 + tan^2 x) dx")
_row("asin", lambda g, out, x: g / np.sqrt(1 - x * x), domain=UNIT,
     derivation="d asin x = dx / sqrt(1 - x^2)")
_row("acos", lambda g, out, x: -g / np.sqrt(1 - x * x), domain=UNIT,
     derivation="d acos x = -dx / sqrt(1 - x^2)")
_row("atan", lambda g, out, x: g / (1 + x * x), derivation="d atan x = dx / (1 + x^2)")
_row("atan2", lambda g, out, x, y: g * y / (x * x + y * y),
     lambda g, out, x, y: -g * x / (x * x + y * y), domain=(ANY, POS), cases=_CASES2,
     derivation="atan2(y, x) (here x, y: math's first and second argument): d = (second "
     "d first - first d second) / (first^2 + second^2)")
_row("sinh", lambda g, out, x: g * np.cosh(x), derivation="d sinh x = cosh x dx")
_row("cosh", lambda g, out, x: g * np.sinh(x), derivation="d cosh x = sinh x dx")
_row("tanh", lambda g, out, x: g * (1 - np.tanh(x) ** 2), derivation="d tanh x = (1 - tanh^2 x) dx")
_row("asinh", lambda g, out, x: g / np.sqrt(x * x + 1), derivation="d asinh x = dx / sqrt(x^2 + 1)")
_row("acosh", lambda g, out, x: g / np.sqrt(x * x - 1), domain=(1.1, 3.0),
     derivation="d acosh x = dx / sqrt(x^2 - 1)")
_row("atanh", lambda g, out, x: g / (1 - x * x), domain=UNIT,
     derivation="d atanh x = dx / (1 - x^2)")
_row("exp", lambda g, out, x: g * np.exp(x), derivation="d e^x = e^x dx")
if "exp2" in NAMES:
    _row("exp2", lambda g, out, x: g * np.exp2(x) * math.log(2), derivation="d 2^x = 2^x log 2 dx")
_row("expm1", lambda g, out, x: g * np.exp(x), derivation="d (e^x - 1) = e^x dx")
_row("log1p", lambda g, out, x: g / (1 + x), domain=(-0.5, 2.0), derivation="d log(1+x) = dx / (1+x)")
_row("log2", lambda g, out, x: g / (x * math.log(2)), domain=POS, derivation="d log2 x = dx / (x log 2)")
_row("log10", lambda g, out, x: g / (x * math.log(10)), domain=POS,
     derivation="d log10 x = dx / (x log 10)")
_row("sqrt", lambda g, out, x: g / (2 * np.sqrt(x)), domain=POS, derivation="d sqrt x = dx / (2 sqrt x)")
if "cbrt" in NAMES:
    _row("cbrt", lambda g, out, x: g / (3 * np.cbrt(x) ** 2), domain=POS,
         derivation="d x^(1/3) = dx / (3 x^(2/3))")
_row("fabs", lambda g, out, x: g * np.sign(x), derivation="d|x| = sign(x) dx (0 at 0, as abs)")
_row("erf", lambda g, out, x: g * (2 / math.sqrt(math.pi)) * np.exp(-x * x),
     derivation="d erf x = 2 / sqrt(pi) e^(-x^2) dx")
_row("erfc", lambda g, out, x: -g * (2 / math.sqrt(math.pi)) * np.exp(-x * x),
     derivation="d erfc x = -2 / sqrt(pi) e^(-x^2) dx")
_row("hypot", lambda g, out, x, y: g * x / np.hypot(x, y), lambda g, out, x, y: g * y / np.hypot(x, y),
     domain=(POS, ANY), cases=_CASES2,
     derivation="two coordinates: d sqrt(x^2 + y^2) = (x dx + y dy) / out (more coordinates: "
     "refused, the row takes two)")
_row("pow", lambda g, out, x, y: g * y * np.power(np.where(y == 0, 1, x), y - 1),
     lambda g, out, x, y: g * np.power(x, y) * np.log(x), domain=(POS, ANY), cases=_CASES2,
     derivation="d x^y = y x^(y-1) dx + x^y log(x) dy (x > 0: math.pow of a negative base and "
     "a fractional exponent raises)")
_row("degrees", lambda g, out, x: g * np.ones_like(x) * (180 / math.pi),
     derivation="a scaling by 180 / pi")
_row("radians", lambda g, out, x: g * np.ones_like(x) * (math.pi / 180),
     derivation="a scaling by pi / 180")
_row("copysign", lambda g, out, x, y: g * np.sign(x) * np.sign(np.copysign(np.ones_like(x), y)),
     None, cases=(("OP(a, -1.0) * a", [()]), ("OP(a[0], b) * b", [(2,), ()])),
     derivation="|x| with y's sign: sign(x) sign(out) dx; y only picks a sign")
_row("fmod", lambda g, out, x, y: g * np.ones_like(x), lambda g, out, x, y: -g * np.trunc(x / y),
     domain=(ANY, POS), cases=_CASES2,
     derivation="x - trunc(x / y) y: dx - trunc(x / y) dy (piecewise)")
_scalar(defvjp(math_log,  # (math.log itself takes no keywords: tape mode calls the row's fn so)
       lambda g, out, x, base=None: g / (x * np.log(base)) if base else g / x,
       lambda g, out, x, base=None: -g * np.log(x) / (base * np.log(base) ** 2),
       name="math_log", family=_F, aliases=(math.log,), spelling="math_log(x, base)", domain=(POS, (1.5, 3.0)),
       derivation="log x / log b: dx / (x log b) - log x / (b log(b)^2) db",
       test_cases=(("OP(a) * a", [()]), ("OP(a[1]) * a", [(3,)]),
                   ("OP(a, b) * a", [(), ()]), ("OP(a, 2.0) * a", [()]))))

_row("lgamma", lambda g, out, x: g * py_polygamma(0, x), domain=POS,
     derivation="d log|Gamma(x)| = digamma(x) dx")
_row("gamma", lambda g, out, x: g * out * py_polygamma(0, x), domain=POS,
     derivation="d Gamma(x) = Gamma(x) digamma(x) dx")
_scalar(defvjp(py_polygamma, None, lambda g, out, n, x: g * py_polygamma(n + 1, x),
               name="py_polygamma", family=_F, spelling="py_polygamma(n, x)", domain=POS,
               derivation="d psi^(n)(x) = psi^(n+1)(x) dx; the order n has no derivative",
               test_cases=(("OP(0, a) * a", [()]), ("OP(1, a[1]) * a", [(3,)]))))

# --- operator's functions of numbers and arrays ----------------------------------------------
_scalar(defvjp(operator.abs, lambda g, out, a: g * np.sign(a), name="operator_abs", family=_F,
       spelling="abs(a)", derivation="abs(a): sign(a) da (0 at 0)",
       test_cases=(("OP(a)", [(3, 4)]), ("OP(a[1]) * a", [(3,)]))))
defvjp(operator.pos, lambda g, out, a: g, name="operator_pos", family=_F, spelling="+a",
       linear=("a",), derivation="+a: the identity",
       test_cases=(("OP(a)", [(3, 4)]), ("OP(a[1]) * a", [(3,)])))
defvjp(operator.matmul, lambda g, out, a, b: matmul_grad_a(g, a, b),
       lambda g, out, a, b: matmul_grad_b(g, a, b), name="operator_matmul", family=_F,
       spelling="a @ b", linear=("a", "b"), derivation="a @ b: as matmul",
       test_cases=(("OP(a, b)", [(3, 4), (4, 5)]), ("OP(a, b)", [(2, 3, 4), (4,)])))
