"""Python's `math` functions under names generated code can import (``from srcad.runtime import
math_sin``): the same function objects, so a row's value is exactly what calling ``math.sin``
gives (a Python float). Their derivative rules live in srcad/ops/pymath.py.

``math_log`` takes its base as a keyword too (``math.log`` takes none), so that the row's
spelling can pass it as one.
"""

from __future__ import annotations

import math

NAMES = ("sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 expm1 "
         "log1p log2 log10 sqrt cbrt fabs erf erfc hypot pow degrees radians copysign "
         "fmod").split()
NAMES = tuple(n for n in NAMES if hasattr(math, n))  # (exp2, cbrt: Python 3.11)

for _n in NAMES:
    globals()[f"math_{_n}"] = getattr(math, _n)


def math_log(x, base=None):
    """math.log(x) or math.log(x, base)."""
    return math.log(x) if base is None else math.log(x, base)


math_lgamma = math.lgamma
math_gamma = math.gamma

# Bernoulli numbers B_2, B_4, ..., B_14 (the asymptotic series of `py_polygamma`)
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def py_polygamma(n, x):
    """The polygamma function psi^(n)(x) of a Python number (digamma for n = 0): the
    derivatives of math.lgamma, which numpy and the standard library lack. The recurrence
    psi^(n)(x) = psi^(n)(x + 1) + (-1)^(n+1) n! / x^(n+1) moves x to 10 or more, then the
    asymptotic series with Bernoulli numbers (error below 1e-15 relative there)."""
    n, x = int(n), float(x)
    if x <= 0 and x == math.floor(x):
        return math.nan  # (a pole)
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    acc = 0.0
    while x < 10.0:
        acc += sign * math.factorial(n) / x ** (n + 1)
        x += 1.0
    if n == 0:
        series = math.log(x) - 0.5 / x - sum(b / (2 * k * x ** (2 * k))
                                               for k, b in enumerate(_BERNOULLI, 1))
    else:
        series = sign * (math.factorial(n - 1) / x ** n + math.factorial(n) / (2 * x ** (n + 1))
                         + sum(b * math.factorial(2 * k + n - 1)
                               / (math.factorial(2 * k) * x ** (2 * k + n))
                               for k, b in enumerate(_BERNOULLI, 1)))
    return acc + series


__all__ = [f"math_{n}" for n in NAMES] + ["math_log", "math_lgamma", "math_gamma",
                                          "py_polygamma"]
