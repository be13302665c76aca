"""Layers picked by the names their classes give themselves, where a name is built from strings
(session of 2026-12-07, twelfth): ML-From-Scratch's `Activation.layer_name()` returns
`"Activation (%s)" % (self.activation_func.__class__.__name__)`, and a loss loads weights into
`[l for l in net.layers if l.layer_name() == "Dense"]`. srcad decides such a filter while it
builds the code (knowntests.StaticTest, which already ran a method that only returns a value),
but not a string built by `%` or `+`: the whole comprehension was left to run, and the stores
into the layers it picks were refused. Now `%` and `+` of known strings are computed too."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(11)
X = RNG.standard_normal((5, 4))


class Sigmoid:
    def __call__(self, x):
        return 1 / (1 + np.exp(-x))


class Layer:
    prefix = "layer:"

    def layer_name(self):
        return self.__class__.__name__


class Dense(Layer):
    def __init__(self, n_in, n_out):
        self.W = RNG.standard_normal((n_in, n_out)) * 0.5

    def forward(self, x):
        return x @ self.W


class Activation(Layer):
    def __init__(self, func):
        self.func = func

    def layer_name(self):
        return "Activation (%s)" % (self.func.__class__.__name__)

    def forward(self, x):
        return self.func(x)


class Tagged(Layer):
    def layer_name(self):
        return self.prefix + "tagged"

    def forward(self, x):
        return x * 0.5


LAYERS = [Dense(4, 3), Activation(Sigmoid()), Tagged(), Dense(3, 2), Activation(Sigmoid())]


def _run(x):
    for layer in LAYERS:
        x = layer.forward(x)
    return x


def loaded_by_class_name(ws, x):
    for layer, w in zip([l for l in LAYERS if l.layer_name() == "Dense"], ws):
        layer.W = w
    return np.sum(_run(x) ** 2)


def scaled_where_the_name_says(ws, x):
    dense = [l for l in LAYERS if not l.layer_name().startswith("Activation (")
             and l.layer_name() != "layer:tagged"]
    for layer, w in zip(dense, ws):
        layer.W = w
    return np.sum(np.tanh(_run(x)))


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
@pytest.mark.parametrize("fn", [loaded_by_class_name, scaled_where_the_name_says],
                         ids=lambda f: f.__name__)
def test_layers_picked_by_a_built_name(fn, mode):
    opts = {"fuse": True} if mode == "fuse" else {"mode": mode}
    ws = [RNG.standard_normal((4, 3)), RNG.standard_normal((3, 2))]
    value, (g0, g1) = srcad.value_and_grad(fn, **opts)(ws, X)
    assert LAYERS[0].W is ws[0] and LAYERS[3].W is ws[1]  # (Python's stores, made)
    assert value == pytest.approx(fn(ws, X), rel=1e-12)
    for k, g in enumerate((g0, g1)):

        def of(w, k=k):
            return fn([w if j == k else ws[j] for j in range(2)], X)

        np.testing.assert_allclose(g, numerical_grad(of, (ws[k].copy(),), h=1e-6),
                                   rtol=1e-6, atol=1e-8)
