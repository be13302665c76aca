"""A call srcad runs as written that changes what it is given -- `rng.shuffle(X)` of an
argument, `random.Random(0).shuffle(order)` of a list argument, a user object's method
appending to a list it is handed -- in a differentiated function (session of 2026-12-07,
twelfth). The first call's shape probe ran the call on the caller's own array or list, and
then the real call ran it again: an argument shuffled twice (the gradient of `np.sum(x * X)`
read the twice-shuffled X -- a wrong value and gradient, silently; a shuffle that is its own
inverse left the caller's list unshuffled), a list appended to twice. The probe now puts what
such a call was given back as it was when it ends (interpret.py `_probe_snapshots_given`)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

X0 = np.array([0.3, -0.7, 1.1, 2.0, -0.4])
MODES = [{}, {"fuse": True}, {"mode": "tape"}]


def shuffled_array(x, v):
    np.random.default_rng(0).shuffle(v)
    return np.sum(np.tanh(x) * v)


def shuffled_list(x, order):
    random.Random(0).shuffle(order)
    return np.sum(np.tanh(x) * np.array(order))


class Buffer:
    def push(self, items, value):
        items.append(value)


BUFFER = Buffer()


def appended_by_a_method(x, items):
    BUFFER.push(items, 1.0)
    return np.sum(x ** 2) * len(items)


def _fresh(fn):
    return np.array([1.0, 2.0, 3.0, 4.0, 5.0]) if fn is shuffled_array else \
        [1.0, 2.0, 3.0, 4.0, 5.0] if fn is shuffled_list else [0.5]


@pytest.mark.parametrize("opts", MODES, ids=str)
@pytest.mark.parametrize("fn", [shuffled_array, shuffled_list, appended_by_a_method],
                         ids=lambda f: f.__name__)
def test_the_caller_sees_one_call_s_change(fn, opts):
    g = srcad.value_and_grad(fn, **opts)
    ours, theirs = _fresh(fn), _fresh(fn)
    for _ in range(2):
        before = theirs.copy()
        value, grad = g(X0.copy(), ours)
        want = fn(X0.copy(), theirs)
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
        assert value == pytest.approx(want, rel=1e-12)
        np.testing.assert_allclose(
            grad, numerical_grad(lambda x: fn(x, before.copy()), (X0.copy(),), h=1e-6),
            rtol=1e-6, atol=1e-8)
