"""`if a and b:` in a loop, where `b` reads a differentiated value only to compare it
(`if i % 2 == 0 and np.min(v) > -5.0:`). The flag `a and b` becomes is set in a branch of its
own (`if a: flag = b`), and the test of that branch is snapshotted before it (normalize.py
`snapshot_tests`); the backward replays that branch only to pop the flag back, so its test
must be pushed at every trip. The reverse sweep's trial left the branch out (its backward
had no code yet, and it reads an active name, so it was not taken for a branch of restores
only) and never pushed the test: the backward popped the flag's stack by the last trip's
test -- an IndexError on an empty stack, or, where the stack did not run dry, every trip's
branch replayed under the wrong flag: a wrong gradient (0.55 relative error in
`every_other_trip`). Found by the nesting fuzzer (tests/fuzz_programs.py generate(nesting=
True)) in the session of 2026-12-06 (sixth); reverse.py `restores_in_blocks` now counts a
branch the trial left out (`left_out`)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad


def every_other_trip(x):
    v = x * 1.0
    i = 0
    while i < 4:
        if i % 2 == 0 and np.min(v) > -5.0:
            v = v * x
        v = np.tanh(v)
        i += 1
    return np.sum(v)


def data_then_compare(x):
    v = x * 1.0
    for _ in range(4):
        if np.sum(v) > 0 and np.max(x) < 5.0:
            v = v * 0.5
        v = np.tanh(v + 0.3)
    return np.sum(v)


def negated_mean(x):
    v = x * 1.0
    for _ in range(3):
        s = np.mean(x, axis=0)
        if np.sum(v) > 0 and np.max(x) < 2.0:
            s = -s
        v = np.tanh(v * s)
    return np.sum(v)


def either(x):
    v = x * 1.0
    for i in range(4):
        if i == 3 or np.max(v) > 0.5:
            v = np.sin(v) * x
        v = v + 0.1
    return np.sum(v ** 2)


def three_terms(x):
    v = x * 1.0
    for i in range(5):
        if i != 2 and np.sum(x) > -100 and np.min(v) < 100:
            v = np.sin(v) * x
        v = v + 0.1
    return np.sum(v ** 2)


def nested_loop_inside(x):
    v = x * 1.0
    i = 0
    while i < 3:
        s = np.mean(x, axis=0)
        if np.sum(v) > 0 and np.max(x) < 2.0:
            w = np.exp(x)
            k = 0
            while np.max(np.abs(w)) > 0.3 and k < 3:
                w = w * 0.5
                k += 1
            s = -s + np.sum(w)
        v = np.tanh(v * s)
        i = i + 1
    return np.sum(v)


CASES = [every_other_trip, data_then_compare, negated_mean, either, three_terms,
         nested_loop_inside]
INPUTS = [np.array([[0.9, 0.49, -0.3]]), np.array([[-0.9, 0.49, 0.2]]),
          np.array([[0.1, -0.35, -0.7]]), np.array([[0.6, 0.8, 0.7]])]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("k", range(len(INPUTS)))
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_short_circuit_test_in_a_loop(f, k, mode):
    x = INPUTS[k].copy()
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    value, g = srcad.value_and_grad(f, **options)(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(f, (x,)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_source_is_tape_bit_for_bit(f):
    for x in INPUTS:
        assert np.array_equal(srcad.grad(f)(x), srcad.grad(f, mode="tape")(x))
