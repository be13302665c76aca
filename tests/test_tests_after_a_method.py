"""A test of an attribute that a method called earlier in the same call assigns (`self.mark()`
then `if self.flag is None:`): srcad folded the test from the value the attribute held when
it built the code -- the other branch, a wrong value and gradient, silently, in source mode
(found by the forms24 helper; tape mode was right). Such a test now runs as written; one of
an attribute only __init__ sets still keeps only Python's branch (knowntests.py)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error


class Marker:
    def __init__(self):
        self.flag = None

    def mark(self):
        self.flag = 1

    def __call__(self, W):
        self.mark()
        if self.flag is None:
            return np.sum(W)
        return np.sum(W ** 2)


class Toggle:
    def __init__(self):
        self.cache = None

    def step(self, W):
        if self.cache is not None:
            out = np.sum(W * self.cache)
            self.cache = None
        else:
            out = np.sum(np.tanh(W))
            self.cache = 2.0
        return out


class Optional:
    def __init__(self, act=None):
        self.act = act

    def __call__(self, W):
        z = W * 3.0
        if self.act is None:
            return np.sum(z)
        return np.sum(self.act(z))


MARKER, TOGGLE, PLAIN, TANH = Marker(), Toggle(), Optional(), Optional(np.tanh)


def marked(W):
    return MARKER(W)


def toggled(W):
    return TOGGLE.step(W)


def set_here(W):
    PLAIN.act = None
    out = PLAIN(W)
    PLAIN.act = np.sin
    return out + PLAIN(W)


def optional_plain(W):
    return PLAIN(W)


def optional_tanh(W):
    return TANH(W)


W = np.array([0.3, -0.7, 1.1])


def _reset():
    MARKER.flag, TOGGLE.cache, PLAIN.act = None, None, None


@pytest.mark.parametrize("opts", [{}, {"mode": "tape"}, {"fuse": True}],
                         ids=["source", "tape", "fused"])
@pytest.mark.parametrize("fn", [marked, toggled, optional_plain, optional_tanh])
def test_each_call_takes_the_branch_python_takes(fn, opts):
    _reset()
    g = srcad.value_and_grad(fn, **opts)
    for _ in range(3):  # (the toggle alternates: each call its own branch)
        state = (MARKER.flag, TOGGLE.cache, PLAIN.act)

        def at_state(w):  # (fn from this call's state: central differences call it often)
            MARKER.flag, TOGGLE.cache, PLAIN.act = state
            return fn(w)

        want_value, want = at_state(W), numerical_grad(at_state, (W,))
        MARKER.flag, TOGGLE.cache, PLAIN.act = state
        value, grad = g(W)
        assert value == pytest.approx(want_value, rel=1e-12)
        assert rel_error(grad, want) < 1e-7


@pytest.mark.parametrize("opts", [{}, {"mode": "tape"}, {"fuse": True}],
                         ids=["source", "tape", "fused"])
def test_an_attribute_the_caller_rebinds_between_calls_fails_not_silently(opts):
    """`PLAIN.act = None; PLAIN(W); PLAIN.act = np.sin; PLAIN(W)` in one call: the method's
    test was folded for the first value (source mode returned 2 * sum(3W), silently); now the
    call fails at the test (an assertion srcad leaves there); tape mode runs it right."""
    _reset()
    if opts.get("mode") == "tape":  # (Python itself runs: each call reads the attribute)
        value, grad = srcad.value_and_grad(set_here, **opts)(W)
        _reset()
        assert value == pytest.approx(set_here(W), rel=1e-12)

        def fresh(w):
            _reset()
            return set_here(w)
        assert rel_error(grad, numerical_grad(fresh, (W,))) < 1e-7
        return
    with pytest.raises((AssertionError, srcad.SrcadError), match="decided from the "
                       "attribute's value"):
        srcad.value_and_grad(set_here, **opts)(W)
