"""A loop's own variable reused by a later loop, where the first loop runs no trip
(``for t in range(n)`` with n = 0, then ``for t in xs``): source mode's forward pushed the
variable's value before each trip of the second loop, and with no trip of the first it had
none -- ``UnboundLocalError`` from the generated code (found by fuzz_python's iterator form,
2026-12-04; present before it). Checked against tape mode and central differences for n in
0, 1, 2."""

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad


def reused_after_a_zero_trip_loop(x, n):
    xs = [x, 2.0 * x]
    acc = x * 0.5
    for t in range(n):
        acc = acc + x * 0.5 * (t + 1)
    for t in xs:
        acc = acc + np.sin(t)
    return np.sum(acc)


def reused_by_an_iterator(x, n):
    it = iter([x, 2.0 * x, x * x])
    acc = x * 0.5
    for t in range(n):
        acc = acc + next(it) * 0.5
    for t in it:
        acc = acc * np.cos(t)
    return np.sum(acc)


@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("fn", [reused_after_a_zero_trip_loop, reused_by_an_iterator],
                         ids=lambda f: f.__name__)
def test_a_loop_variable_reused_after_a_loop_of_no_trip(fn, n):
    x = np.array([0.3, -0.7, 1.1])
    value, g = srcad.value_and_grad(fn)(x, n)
    tv, tg = srcad.value_and_grad(fn, mode="tape")(x, n)
    assert value == fn(x, n) and np.array_equal(g, tg)
    np.testing.assert_allclose(g, numerical_grad(fn, (x, n), h=1e-6), rtol=1e-6, atol=1e-9)
