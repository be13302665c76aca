"""``functools.partial`` in differentiated code: made in the function and called there
(frontend/partials.py), or made at module level over a numpy callable (calls.py). Each was
refused before ("`act` has no derivative rule", "`np.power` (ufunc) used as a value"); a
module-level partial of a user function already worked and is kept here as a neighbour."""

from __future__ import annotations

import functools
from functools import partial

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

CLIP = partial(np.clip, a_min=-0.5, a_max=0.5)
POW = functools.partial(np.power, 2.0)


def leaky(z, alpha=0.1, scale=1.0):
    return np.where(z > 0, z, alpha * z) * scale


LEAKY = partial(leaky, alpha=0.3)


def a_local_partial_of_a_row(x, a):
    act = partial(np.clip, a_min=-0.5, a_max=0.5)
    return np.sum(act(x) ** 2) + np.sum(a)


def a_partial_binding_a_differentiated_value(x, a):
    scaled = partial(np.multiply, a)
    return np.sum(np.tanh(scaled(x)))


def a_partial_of_a_ufunc_over_the_base(x, a):
    act = functools.partial(np.power, np.abs(x) + 0.5)
    return np.sum(act(a))


def a_partial_of_a_user_function(x, a):
    act = partial(leaky, alpha=0.2)
    return np.sum(act(x * a) ** 2)


def the_call_keyword_wins(x, a):
    act = partial(leaky, alpha=0.2, scale=2.0)
    return np.sum(act(x, scale=a[0]) ** 2)


def arguments_read_where_the_partial_is_made(x, a):
    s = a * 2.0
    act = partial(leaky, alpha=0.2, scale=s)
    s = s * 100.0  # (the partial keeps the value it was made with)
    return np.sum(act(x) ** 2) + np.sum(s) * 0.0


def called_in_a_loop(x, a):
    step = partial(np.add, a)
    h = x
    for _ in range(3):
        h = np.tanh(step(h))
    return np.sum(h)


def module_level_partials(x, a):
    return np.sum(CLIP(x) ** 2) + np.sum(POW(a)) + np.sum(LEAKY(x * a))


CASES = [a_local_partial_of_a_row, a_partial_binding_a_differentiated_value,
         a_partial_of_a_ufunc_over_the_base, a_partial_of_a_user_function,
         the_call_keyword_wins, arguments_read_where_the_partial_is_made, called_in_a_loop,
         module_level_partials]

_R = np.random.default_rng(7)
X = _R.uniform(-1.0, 1.0, 5)
A = _R.uniform(0.5, 1.5, 5)


@pytest.mark.parametrize("opts", [{}, {"fuse": True}, {"mode": "tape"}],
                         ids=["source", "fused", "tape"])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_partials(fn, opts):
    value, (gx, ga) = srcad.value_and_grad(fn, wrt=(0, 1), **opts)(X, A)
    assert value == pytest.approx(fn(X, A), rel=1e-13)
    nx, na = numerical_grad(fn, (X, A), wrt=(0, 1))
    assert rel_error(gx, nx) < 1e-6
    assert rel_error(ga, na) < 1e-6


def test_a_partial_passed_on_is_left_as_written():
    """Used as a value (not only called), the partial is Python's: refused where a
    differentiated value reaches it, at the user's line."""
    def f(x):
        act = partial(np.clip, a_min=-0.5, a_max=0.5)
        return np.sum(np.stack(list(map(act, [x, x * 2]))))

    for mode in ("source", "tape"):
        with pytest.raises(srcad.SrcadError, match="`act`") as e:
            srcad.grad(f, mode=mode)(X)
        assert e.value.filename == __file__
