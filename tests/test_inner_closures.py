"""Transforms of closures inside a differentiated function, as JAX code writes them:
``out, pb = srcad.vjp(lambda v: np.tanh(v) * w, x)``, ``srcad.jvp`` of a nested def,
``srcad.grad(lambda v: ...)`` in tape mode -- the closure reading values the outer transform
differentiates (``w``), so the outer gradient flows through what the closure reads.

Before: a lambda or nested def given to srcad.vjp / srcad.jvp inside was refused ("this form
of srcad.vjp inside a differentiated function is not supported", both modes), and tape mode
refused a lambda given to srcad.grad ("tape mode cannot lift ... (a lambda ...)") and made a
pullback function named `<lambda>_vjp` (a SyntaxError)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

_R = np.random.default_rng(3)
W = _R.uniform(-0.8, 0.8, 3)
X = _R.uniform(-1.0, 1.0, (4, 3))


def vjp_of_a_lambda(w, x):
    out, pb = srcad.vjp(lambda v: np.tanh(v) * w, x)
    (dx,) = pb(np.ones_like(out))
    return np.sum(dx ** 2) + np.sum(out)


def vjp_of_a_nested_def(w, x):
    def layer(v, b):
        return np.sin(v * w) + b * w

    out, pullback = srcad.vjp(layer, x, w * 0.5)
    dv, db = pullback(out)
    return np.sum(dv * db)


def jvp_of_a_lambda(w, x):
    out, tangent = srcad.jvp(lambda v: np.exp(v * w) * w, (x,), (np.ones_like(x),))
    return np.sum(tangent * out)


def jvp_of_a_nested_def_two_primals(w, x):
    def f(a, b):
        return np.tanh(a * w) * b

    out, tangent = srcad.jvp(f, (x, w), (w, x))
    return np.sum(tangent ** 2) + np.sum(out)


def grad_of_a_lambda(w, x):
    g = srcad.grad(lambda v: np.sum(np.sin(v * w) ** 2))(x)
    return np.sum(g * w)


def per_example_grads_of_a_lambda(w, X):
    total = 0.0
    for i in range(len(X)):
        g = srcad.grad(lambda v: np.sum(np.tanh(v @ X[i]) ** 2))(w)
        total = total + np.sum(g ** 2)
    return total


CASES = [vjp_of_a_lambda, vjp_of_a_nested_def, jvp_of_a_lambda,
         jvp_of_a_nested_def_two_primals, grad_of_a_lambda]


def _args(fn):
    return (W, X if fn is per_example_grads_of_a_lambda else X[0])


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", CASES + [per_example_grads_of_a_lambda],
                         ids=lambda f: f.__name__)
def test_the_outer_gradient_flows_through_the_closure(fn, mode):
    args = _args(fn)
    want = numerical_grad(fn, args, wrt=(0, 1))
    value, got = srcad.value_and_grad(fn, wrt=(0, 1), mode=mode)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    for g, n in zip(got, want):
        assert rel_error(g, n) < 1e-6, (fn.__name__, mode)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_source_and_tape_agree(fn):
    args = _args(fn)
    a = srcad.grad(fn, wrt=(0, 1))(*args)
    b = srcad.grad(fn, wrt=(0, 1), mode="tape")(*args)
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn", [vjp_of_a_lambda, jvp_of_a_lambda], ids=lambda f: f.__name__)
def test_second_order_through_the_closure(fn):
    """A Hessian-vector product of the outer function (forward over reverse over the inner
    transform) against central differences of its gradient."""
    w, x = _args(fn)
    u = np.array([0.3, -0.2, 0.5])
    _, hvp = srcad.jvp(srcad.grad(fn), (w, x), (u, np.zeros_like(x)))
    eps = 1e-5
    g = srcad.grad(fn)
    want = (g(w + eps * u, x) - g(w - eps * u, x)) / (2 * eps)
    assert rel_error(hvp, want) < 1e-5
