"""A ``@dataclass`` layer (``eq=True``: its instances are unhashable) called as ``layer(x)``:
srcad crashed inside the compiler (``TypeError: unhashable type`` from a lookup of the callee
among lifted functions, frontend/inline.py) until 2026-12-04. Built in the function or at
module level, checked against central differences in both modes."""

from dataclasses import dataclass, field

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad


@dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray
    act: str = "tanh"

    def __call__(self, x):
        z = x @ self.W + self.b
        return np.tanh(z) if self.act == "tanh" else np.maximum(z, 0.0)


@dataclass
class Stack:
    layers: list = field(default_factory=list)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def built_here(W, b, x):
    return np.sum(Dense(W, b)(x) ** 2)


def a_stack_built_here(W, b, x):
    net = Stack([Dense(W, b), Dense(W.T, -b, act="relu")])
    return np.sum(net(x) ** 2)


LAYER = Dense(np.eye(3) * 0.5, np.zeros(3))


def module_layer(W, b, x):
    return np.sum(LAYER(Dense(W, b)(x)))


RNG = np.random.default_rng(5)
W0, B0, X0 = RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal(3) * 0.1, \
    RNG.standard_normal((4, 3))


@pytest.mark.parametrize("fn", [built_here, a_stack_built_here, module_layer],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_dataclass_layers(fn, mode):
    value, (gW, gb, gx) = srcad.value_and_grad(fn, wrt=(0, 1, 2), mode=mode)(W0, B0, X0)
    assert np.isclose(value, fn(W0, B0, X0), rtol=1e-13)
    want = numerical_grad(fn, (W0, B0, X0), wrt=(0, 1, 2), h=1e-6)
    for got, w in zip((gW, gb, gx), want):
        np.testing.assert_allclose(got, w, rtol=1e-6, atol=1e-8)
