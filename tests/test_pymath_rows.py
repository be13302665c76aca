"""Python's math functions as rows (srcad/ops/pymath.py): the value is the function's own, a
Python float equal to calling it, to the last bit, in reverse and forward mode;
the derivative is the formula's (tests/test_ops.py checks it against central differences,
tests/test_forward.py against torch)."""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest

import srcad
from srcad.ops import all_ops

ROWS = [op for op in all_ops() if op.family == "python math" and op.name.startswith("math_")]


def _args(op):
    lo, hi = op.domain if len(op.domain) == 2 and not isinstance(op.domain[0], tuple) \
        else op.domain[0]
    x = lo + 0.37 * (hi - lo)
    return (x,) if op.name != "math_log" and len(op.params) == 1 else (x, 2.5)


@pytest.mark.parametrize("op", ROWS, ids=lambda op: op.name)
def test_value_is_math_own(op):
    fn = getattr(math, op.name[len("math_"):])
    args = _args(op)

    if len(args) == 1:
        def f(x):
            return fn(x)
    else:
        def f(x, y):
            return fn(x, y)

    want = fn(*args)
    out, pullback = srcad.vjp(f, *args)
    assert type(out) is float and out == want and math.copysign(1, out) == math.copysign(1, want)
    grads = pullback(1.0)
    assert all(np.isfinite(g) for g in grads if g is not None)
    out_f, _ = srcad.jvp(f, args, tuple(1.0 for _ in args))
    assert type(out_f) is float and out_f == want


def test_math_sin_gradient_is_cos():
    def f(x):
        return math.sin(x) * x

    x = 0.7
    assert srcad.grad(f)(x) == pytest.approx(math.cos(x) * x + math.sin(x), rel=1e-15)
    assert srcad.grad(srcad.grad(f))(x) == pytest.approx(
        2 * math.cos(x) - x * math.sin(x), rel=1e-14)


def test_math_log_base_and_operator_abs():
    def f(x, b):
        return math.log(x, b) + operator.abs(x - 2.0)

    g = srcad.grad(f, wrt=(0, 1))(1.5, 3.0)
    assert g[0] == pytest.approx(1 / (1.5 * math.log(3.0)) - 1.0, rel=1e-14)
    assert g[1] == pytest.approx(-math.log(1.5) / (3.0 * math.log(3.0) ** 2), rel=1e-14)


def test_hypot_of_three_coordinates_is_refused():
    def f(x):
        return math.hypot(x, 1.0, 2.0)

    with pytest.raises(srcad.SrcadError):
        srcad.grad(f)(0.5)
