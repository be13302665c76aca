"""numpy functions held as values in differentiated code: a list of activations a loop walks
(``for act in [np.tanh, relu, np.sin]``, also in a generator expression), pairs of weights
and activations (``for W, act in [(W1, np.tanh), (W2, np.exp)]``), a tuple of them indexed
by a constant (``fs[0](x)``). They were refused at the list ("`np.tanh` (ufunc) used
as a value"; a user's function there already worked). A function chosen at run time
(``np.tanh if x.sum() > 0 else np.sin``) is refused at its call, naming it."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error


def relu(z):
    return np.maximum(z, 0)


def a_list_of_activations(x, W):
    acts = [np.tanh, relu, np.sin]
    h = x
    for act in acts:
        h = act(h @ W)
    return np.sum(h)


def a_generator_over_them(x, W):
    acts = [np.tanh, np.cos, relu]
    return sum(np.sum(f(x @ W)) for f in acts)


def a_tuple_indexed(x, W):
    fs = (np.tanh, np.cos)
    return np.sum(fs[0](x @ W) * fs[1](W))


def per_layer_activations(x, W):
    layers = [(W, np.tanh), (W.T, np.exp)]
    h = x
    for weights, act in layers:
        h = act(h @ weights * 0.5)
    return np.sum(h)


CASES = [a_list_of_activations, a_generator_over_them, a_tuple_indexed, per_layer_activations]

_R = np.random.default_rng(4)
X = _R.uniform(-1, 1, 3)
W = _R.uniform(-0.8, 0.8, (3, 3))


@pytest.mark.parametrize("opts", [{}, {"fuse": True}, {"mode": "tape"}],
                         ids=["source", "fused", "tape"])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_function_values(fn, opts):
    value, grads = srcad.value_and_grad(fn, wrt=(0, 1), **opts)(X, W)
    assert value == pytest.approx(fn(X, W), rel=1e-13)
    for g, n in zip(grads, numerical_grad(fn, (X, W), wrt=(0, 1))):
        assert rel_error(g, n) < 1e-6


def chosen_at_run_time(x, W):
    act = np.tanh if x.sum() > 0 else np.sin
    return np.sum(act(x @ W))


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_function_chosen_at_run_time(mode):
    """Refused at its call until 2026-12-05 (fourth session): now an `if` over the choices."""
    for sign in (1.0, -1.0):
        value, g = srcad.value_and_grad(chosen_at_run_time, mode=mode)(X * sign, W)
        assert value == chosen_at_run_time(X * sign, W)
        assert rel_error(g, numerical_grad(chosen_at_run_time, (X * sign, W))) < 1e-6


SCALES = {np.tanh: 2.0, np.sin: 0.5}


def compares_functions(x, W):
    """Python's identity of numpy's functions: `act is np.tanh`, `==`, a dict keyed by them
    (tape mode showed each access of `np.tanh` as a new wrapper: the `is` was False and the
    other branch ran, a wrong value and gradient, silently)."""
    act = np.tanh
    h = np.tanh(x @ W) if act is np.tanh else relu(x @ W)
    k = SCALES[act] if act == np.tanh else 1.0
    same = np.tanh is np.tanh and SCALES.get(np.sin) == 0.5
    return np.sum(h) * k * (1.0 if same else -1.0)


@pytest.mark.parametrize("opts", [{}, {"mode": "tape"}], ids=["source", "tape"])
def test_functions_keep_their_identity(opts):
    value, grads = srcad.value_and_grad(compares_functions, wrt=(0, 1), **opts)(X, W)
    assert value == compares_functions(X, W)
    for g, n in zip(grads, numerical_grad(compares_functions, (X, W), wrt=(0, 1))):
        assert rel_error(g, n) < 1e-6
