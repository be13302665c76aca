"""The classes of failure the ninth probe of the front door found (tests/corpus_probe/
wild_repos8.py), one focused test each: the value equals calling the function, the gradient
matches central differences, in source and tape mode (and fuse=True where it lowers)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

MODES = [{"mode": "source"}, {"mode": "tape"}, {"fuse": True}]
MODE_IDS = ["source", "tape", "fuse"]


def _check(fn, args, wrt=0, options=None, tol=1e-6):
    value = fn(*args)
    out, got = srcad.value_and_grad(fn, wrt=wrt, **(options or {}))(*args)
    assert np.array_equal(np.asarray(out), np.asarray(value)), (out, value)
    want = numerical_grad(fn, args, wrt=wrt)
    assert rel_error(got, want) < tol


# ---- an adjoint alias across a branch that rebinds what it reads --------------------------

def _shift_with_branch(u0):
    p = u0 * 1.0
    u = u0 * 1.5
    for i in range(3):
        s = np.sin(u)
        if i % 2 == 0:
            n = s - p
        else:
            n = s * 2.0
        p = u
        u = n
    return np.sum(u)


def _wave_levels(u0, c):
    u_prev = u0                      # (an argument: the branch on `u_prev is u0` is srcad's)
    u = u0.copy()
    for _ in range(4):
        lap = np.roll(u, 1) + np.roll(u, -1) - 2 * u
        u_next = 2 * u - u_prev + (c[0] ** 2) * lap
        u_prev, u = u, u_next
    return np.sum(u ** 2) - np.sum(u * u_prev)


_X = np.linspace(-1.0, 1.0, 5)


@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("fn,args,wrt", [
    (_shift_with_branch, (_X,), 0),
    (_wave_levels, (np.exp(-_X ** 2), np.array([0.6])), (0, 1))], ids=["branch", "wave"])
def test_shifted_levels_through_a_branch(fn, args, wrt, options):
    """`p = u; u = n` in a loop whose body branches on something reading p (a user `if`, or
    the `u_prev is u0` branch srcad makes for a name that may be an argument): the adjoint of
    u was left an alias of `dp` across the branch, whose arms rebind dp, so the backward read
    p's new adjoint for u's (silently wrong gradients in source mode; tape mode was right)."""
    _check(fn, args, wrt, options)
