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


__all__ = [f"math_{n}" for n in NAMES] + ["math_log"]
