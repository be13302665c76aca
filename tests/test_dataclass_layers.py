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


@dataclass(frozen=True)
class State:
    """An LSTM-like state as a frozen dataclass (refused until 2026-12-04: "`State` has no
    derivative rule" -- the `__setattr__` @dataclass(frozen=True) writes kept srcad from
    following it)."""
    h: np.ndarray
    c: np.ndarray

    def step(self, z):
        return State(h=np.tanh(z + self.c) * self.h, c=self.c + z)


def built_here(W, b, x):
    return np.sum(Dense(W, b)(x) ** 2)


def a_stack_built_here(W, b, x):
    net = Stack([Dense(W, b), Dense(W.T, -b, act="relu")])
    return np.sum(net(x) ** 2)


LAYER = Dense(np.eye(3) * 0.5, np.zeros(3))


def module_layer(W, b, x):
    return np.sum(LAYER(Dense(W, b)(x)))


def frozen_state(W, b, x):
    s = State(h=x @ W, c=np.tanh(x @ W + b))
    s2 = s.step(x @ W * 0.5)
    s3 = State(s2.h * s.c, c=s2.c)
    return np.sum(s3.h + s3.c ** 2)


def stores_into_a_frozen_state(W, b, x):
    s = State(h=x @ W, c=b + 0.0)
    s.h = s.h * 2.0  # ERR
    return np.sum(s.h)


RNG = np.random.default_rng(5)
W0, B0, X0 = RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal(3) * 0.1, \
    RNG.standard_normal((4, 3))


@pytest.mark.parametrize("fn", [built_here, a_stack_built_here, module_layer, frozen_state],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_dataclass_layers(fn, mode):
    value, (gW, gb, gx) = srcad.value_and_grad(fn, wrt=(0, 1, 2), mode=mode)(W0, B0, X0)
    assert np.isclose(value, fn(W0, B0, X0), rtol=1e-13)
    want = numerical_grad(fn, (W0, B0, X0), wrt=(0, 1, 2), h=1e-6)
    for got, w in zip((gW, gb, gx), want):
        np.testing.assert_allclose(got, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_store_into_a_frozen_dataclass_is_refused_as_python_refuses_it(mode):
    """Python raises FrozenInstanceError at the store; srcad refuses it at that line (source
    mode would otherwise carry the new value as if the class allowed it)."""
    import dataclasses
    with pytest.raises(dataclasses.FrozenInstanceError):
        stores_into_a_frozen_state(W0, B0, X0)
    with pytest.raises(srcad.SrcadError, match="frozen dataclass") as err:
        srcad.grad(stores_into_a_frozen_state, mode=mode)(W0, B0, X0)
    assert "# ERR" in open(__file__).read().splitlines()[err.value.lineno - 1]
