"""`@srcad.grad` / `@srcad.value_and_grad` on a method (session of 2026-12-07).

`class Model: @srcad.grad(wrt="W") def dloss(self, W, x): ...` then `model.dloss(W, x)`
failed with "dloss(): missing a required argument: 'x'": the transformed function did not
bind to the object as a function does (jax.grad's result, a function, does). Now it binds --
the object first, as Python passes `self` -- and a differentiated function may call such a
method (a gradient of a gradient), reading the object's attributes at each call."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

W0 = np.array([[0.5, -0.2], [0.1, 0.4]])
X = np.array([[1.0, 2.0], [-0.5, 0.3], [0.2, 0.2]])


def _loss(W, x, s):
    return np.sum(np.tanh(x @ W) * s)


class Model:
    def __init__(self, s):
        self.s = s

    @srcad.grad(wrt="W")
    def dloss(self, W, x):
        return np.sum(np.tanh(x @ W) * self.s)

    @srcad.value_and_grad(wrt=1)
    def value_and_dloss(self, W, x):
        return np.sum(np.tanh(x @ W) * self.s)

    def squared_gradient(self, W, x):
        return np.sum(self.dloss(W, x) ** 2)


def test_a_decorated_method_binds_its_object():
    m = Model(2.0)
    np.testing.assert_allclose(m.dloss(W0, X), numerical_grad(_loss, (W0, X, 2.0)), rtol=1e-6)
    value, g = m.value_and_dloss(W0, X)
    assert value == pytest.approx(_loss(W0, X, 2.0), rel=1e-12)
    np.testing.assert_array_equal(g, m.dloss(W0, X))
    np.testing.assert_array_equal(Model.dloss(m, W0, X), m.dloss(W0, X))  # (by the class)
    m.s = 3.0  # (the object's attribute read at each call)
    np.testing.assert_allclose(m.dloss(W0, X), numerical_grad(_loss, (W0, X, 3.0)), rtol=1e-6)
    assert "def " in srcad.source(m.dloss)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_gradient_through_a_decorated_method(mode):
    m = Model(1.5)
    g = srcad.grad(m.squared_gradient, mode=mode)(W0, X)
    np.testing.assert_allclose(g, numerical_grad(m.squared_gradient, (W0, X), h=1e-6),
                               rtol=1e-5, atol=1e-8)


def test_an_instances_own_transform_is_not_bound():
    m = Model(1.0)
    m.plain = srcad.grad(_loss)  # (an instance attribute: called as it is, no object first)
    np.testing.assert_allclose(m.plain(W0, X, 1.0), m.dloss(W0, X))
