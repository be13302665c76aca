"""Objects built by a comprehension that unpacks each item (`self.layers = [Layer(W, b) for W,
b in params]`, a list of (W, b) pairs given as the argument): each item is unpacked before the
statement, as Python unpacks it (its length checked), and the objects are followed -- refused
before ('`Net` has no derivative rule'), while `for W, b in params: append(...)`, `[Layer(p[0],
p[1]) for p in params]` and `zip(Ws, bs)` were followed. Source mode, tape mode and fused,
against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

MODES = [{}, {"mode": "tape"}, {"fuse": True}]


class Layer:
    def __init__(self, W, b, act=np.tanh):
        self.W, self.b, self.act = W, b, act

    def __call__(self, x):
        return self.act(x @ self.W + self.b)


class Net:
    def __init__(self, params):
        self.layers = [Layer(W, b) for W, b in params]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class LinearHead(Net):
    def __init__(self, params):
        super().__init__(params)
        self.layers[-1].act = lambda z: z


class Scaled:
    def __init__(self, params):
        self.layers = [Layer(W * s, b) for W, b, s in params]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def net_loss(params, x, y):
    return np.mean((Net(params)(x) - y) ** 2)


def head_loss(params, x, y):
    return np.mean((LinearHead(params)(x) - y) ** 2)


def local_loss(params, x, y):
    layers = [Layer(W, b) for W, b in params]
    for layer in layers:
        x = layer(x)
    return np.mean((x - y) ** 2)


def triple_loss(params, x, y):
    return np.mean((Scaled(params)(x) - y) ** 2)


_R = np.random.default_rng(2)
PAIRS = [(_R.normal(size=(3, 4)) * 0.5, _R.normal(size=4) * 0.1),
         (_R.normal(size=(4, 1)) * 0.5, _R.normal(size=1) * 0.1)]
X, Y = _R.normal(size=(5, 3)), _R.normal(size=(5, 1))


@pytest.mark.parametrize("opts", MODES, ids=["source", "tape", "fused"])
@pytest.mark.parametrize("as_lists", [False, True], ids=["tuples", "lists"])
@pytest.mark.parametrize("fn", [net_loss, head_loss, local_loss])
def test_objects_built_from_unpacked_pairs(fn, as_lists, opts):
    params = [list(p) for p in PAIRS] if as_lists else list(PAIRS)
    value, g = srcad.value_and_grad(fn, **opts)(params, X, Y)
    assert value == fn(params, X, Y)
    want = numerical_grad(fn, (params, X, Y))
    for a, b in zip(g, want):
        for u, v in zip(a, b):
            assert rel_error(u, v) < 1e-6


@pytest.mark.parametrize("opts", MODES, ids=["source", "tape", "fused"])
def test_three_names_unpacked(opts):
    params = [PAIRS[0] + (np.float64(0.7),), PAIRS[1] + (np.float64(1.3),)]
    value, g = srcad.value_and_grad(triple_loss, **opts)(params, X, Y)
    assert value == triple_loss(params, X, Y)
    want = numerical_grad(triple_loss, (params, X, Y))
    for a, b in zip(g, want):
        for u, v in zip(a, b):
            assert rel_error(u, v) < 1e-6


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_items_of_another_length_are_pythons_error(mode):
    params = [p + (np.zeros(1),) for p in PAIRS]  # (three items each: W, b = ... fails)
    with pytest.raises(ValueError):
        net_loss(params, X, Y)
    with pytest.raises((ValueError, srcad.SrcadError), match="too many values to unpack"):
        srcad.grad(net_loss, mode=mode)(params, X, Y)
