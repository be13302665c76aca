"""A user's context manager that records into state it shares -- a class-level log, a module's
list -- in `__exit__` (a training script's timer or profiler), in a differentiated function
(session of 2026-12-07, twelfth). The first call's shape probe entered and exited a copy of the
manager (so that an instance's own log is untouched), but a copy's `__exit__` writes where the
manager's does: every first call recorded twice. The probe now never exits the copy; the real
call enters and exits the manager once, as Python does."""

from __future__ import annotations

import time

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

X = np.array([0.3, -0.7, 1.1])
MODES = [{}, {"fuse": True}, {"mode": "tape"}]
RECORDS = []


class Timed:
    """Times a block; the times of every block go to the class's log."""
    log = []

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        Timed.log.append((self.name, time.perf_counter() - self.start))
        return False


class Profiled:
    """Records into a module's list as it leaves the block."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        RECORDS.append("block")
        return False


PROFILE = Profiled()


class Scaled:
    """`__enter__` hands out an array the block computes with."""

    def __init__(self, s):
        self.s = s

    def __enter__(self):
        return np.full(3, self.s)

    def __exit__(self, *exc):
        RECORDS.append("scaled")
        return False


def timed_twice(x):
    with Timed("forward") as t:
        h = np.tanh(x)
    with Timed("loss"):
        out = np.sum(h ** 2) + 0.0 * t.start
    return out


def profiled_in_a_loop(x):
    s = 0.0
    for k in range(3):
        with PROFILE:
            s = s + np.sum(np.sin(x * (k + 1.0)))
    return s


def scaled_by_the_managers_value(x):
    with Scaled(2.0) as w:
        y = np.sum(np.tanh(x) * w)
    return y


@pytest.mark.parametrize("opts", MODES, ids=str)
@pytest.mark.parametrize("fn, want", [
    (timed_twice, lambda: [n for n, _ in Timed.log] == ["forward", "loss"]),
    (profiled_in_a_loop, lambda: RECORDS == ["block"] * 3),
    (scaled_by_the_managers_value, lambda: RECORDS == ["scaled"]),
], ids=["class-log", "module-list", "enter-value"])
def test_a_managers_shared_records_are_made_once_per_call(fn, want, opts):
    g = srcad.value_and_grad(fn, **opts)
    for _ in range(3):  # (the first call, with its shape probe, and two more)
        Timed.log.clear()
        RECORDS.clear()
        value, grad = g(X.copy())
        assert want(), (Timed.log, RECORDS)
    Timed.log.clear()
    RECORDS.clear()
    assert value == pytest.approx(fn(X.copy()), rel=1e-12)
    np.testing.assert_allclose(grad, numerical_grad(fn, (X.copy(),), h=1e-6),
                               rtol=1e-6, atol=1e-8)
