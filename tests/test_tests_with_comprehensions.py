"""A comprehension (or `any` / `all` / `sum` of a generator) in an operand after `and` / `or`,
or in a `while` test (session of 2026-12-07, twelfth): `if c and any(v > 1 for v in x):`,
`while n < 5 and any(abs(v) < 3 for v in y):`. srcad writes a comprehension as statements
before the statement that holds it; it refused both places, since Python evaluates such an
operand only where the operands before it let it be, and a `while` test before every trip.
Now an operand after `and` / `or` is written as `if` statements into a name (each operand's
statements under the value so far: Python's short circuit), and a `while` test's statements
run before the loop and again at the end of its body (a body with a `continue` is refused, as
before: it would skip them)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = [{}, {"fuse": True}, {"mode": "tape"}]
CALLS = []


def seen(v):
    CALLS.append(v)
    return v


def and_any(x):
    if 0 < np.sum(x) < 10 and any(v > 1 for v in x) and all(np.abs(x) < 5):
        return np.sum(np.sin(x))
    return np.sum(x)


def or_any(x):
    ok = np.sum(x) > 100 or any(v > 1 for v in x)
    return np.sum(x ** 2) * (2.0 if ok else 1.0)


def and_or_values(x):
    return np.sum(x) > 0 and sum(v ** 2 for v in x) or np.sum(x * 0.5)


def short_circuited(x):  # (the generator after a false operand never runs: nothing seen)
    ok = np.sum(x) > 100 and any(seen(v) > 1 for v in x)
    return np.sum(x ** 2) * (2.0 if ok else 1.0)


def while_and_any(x):
    y, n = x, 0
    while n < 5 and any(abs(v) < 3 for v in y):
        y = y * 1.5
        n += 1
    return np.sum(y ** 2)


def while_any_else(x):
    y = x
    while any(abs(v) < 2 for v in y):
        y = y * 1.25
    else:
        y = y + 1.0
    return np.sum(np.tanh(y))


CASES = [and_any, or_any, and_or_values, short_circuited, while_and_any, while_any_else]


@pytest.mark.parametrize("opts", MODES, ids=str)
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [np.array([0.3, -0.7, 1.1]), np.array([0.2, 0.1, -0.5])],
                         ids=["some-above-1", "none-above-1"])
def test_comprehension_in_a_short_circuit_or_a_while_test(fn, opts, x):
    CALLS.clear()
    want = fn(x.copy())
    want_calls = list(CALLS)
    CALLS.clear()
    value, grad = srcad.value_and_grad(fn, **opts)(x.copy())
    assert CALLS == want_calls  # (the short circuit: what Python's evaluation ran)
    assert value == pytest.approx(want, rel=1e-12)
    np.testing.assert_allclose(grad, numerical_grad(fn, (x.copy(),), h=1e-6),
                               rtol=1e-6, atol=1e-8)


def test_a_while_test_comprehension_with_continue_is_still_refused():
    def continued(x):
        y, n = x, 0
        while any(abs(v) < 3 for v in y):
            n += 1
            if n % 2:
                y = y * 1.1
                continue
            y = y * 1.5
        return np.sum(y)

    with pytest.raises(srcad.SrcadError, match="while"):
        srcad.grad(continued)(np.array([0.3, -0.7, 1.1]))
