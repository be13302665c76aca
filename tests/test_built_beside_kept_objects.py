"""An object built in the function beside an object the program keeps whose methods srcad
cannot turn into locals (session of 2026-12-07, twelfth). ML-From-Scratch's RNN layer calls
`self.activation(...)` -- an attribute holding an activation object -- in `forward_pass`; a
loss that loads its weights, runs it, and applies `Softmax()(out)` was refused: srcad turns
objects built in a function into locals together with the kept objects whose state the
function changes, and the kept layer's `self.activation(...)` made the whole attempt fail, the
`Softmax` built here included ("`softmax` has no derivative rule"). Now the objects built here
are followed alone when the kept ones cannot be, and the kept layer is run as it is without
them (objects.py `scalarise_objects`)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(5)
X = RNG.standard_normal((4, 3))


class TanH:
    def __call__(self, x):
        return 2 / (1 + np.exp(-2 * x)) - 1


class Softmax:
    def __call__(self, x):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)


class Scaled:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k


class Cell:
    def __init__(self):
        self.activation = TanH()
        self.W = RNG.standard_normal((3, 3))

    def forward(self, x):
        self.layer_input = x
        return self.activation(x @ self.W)


CELL = Cell()
WEIGHTS = np.arange(3.0)


def softmax_built_at_once(W, x):
    CELL.W = W
    out = CELL.forward(x)
    return np.sum(Softmax()(out) * WEIGHTS)


def two_objects_built_by_name(W, x):
    CELL.W = W
    scale, head = Scaled(0.5), Softmax()
    return np.sum(head(scale(CELL.forward(x))) * WEIGHTS)


def made_and_called_at_once(W, x):  # (no kept object: the call of the call's result alone)
    return np.sum(Softmax()(Scaled(0.5)(np.tanh(x @ W))) * WEIGHTS)


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
@pytest.mark.parametrize("fn", [softmax_built_at_once, two_objects_built_by_name,
                                made_and_called_at_once],
                         ids=lambda f: f.__name__)
def test_built_objects_followed_beside_a_kept_layer(fn, mode):
    opts = {"fuse": True} if mode == "fuse" else {"mode": mode}
    W = RNG.standard_normal((3, 3))
    value, (dW, dx) = srcad.value_and_grad(fn, wrt=(0, 1), **opts)(W, X)
    if fn is not made_and_called_at_once:  # (the layer's state, as Python's)
        assert CELL.W is W and CELL.layer_input is not None
    assert value == pytest.approx(fn(W, X), rel=1e-12)
    np.testing.assert_allclose(dW, numerical_grad(lambda w: fn(w, X), (W.copy(),), h=1e-6),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dx, numerical_grad(lambda x: fn(W, x), (X.copy(),), h=1e-6),
                               rtol=1e-6, atol=1e-8)
