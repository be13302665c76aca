"""Layers that build their weights on their first call, as Keras-like numpy frameworks do.

    class Layer:
        def __call__(self, x):
            if not self.built:
                self.build(x.shape)
                self.built = True
            return self.call(x)

Found by a front-door probe (session of 2026-12-06, eighth): every loss through such a model
was refused on 2af95e6 ("`.built` of this object is set here, inside a branch or a loop, and
__call__ also keeps it under another name"): the method sets the flag it tests, so the test
was left to run and the state the branch sets could not be carried. Now a test of an
attribute that the branch itself assigns a literal (the lazy-initialisation idiom:
knowntests.py `set_once`) is decided when the code is built -- the attribute guarded (the
first call, which builds, rebuilds the code for the next) and the test read again where it
stands, so a reset during the call stops the call there.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad
from tests import fixtures_known_tests as fx

RNG = np.random.default_rng(31)
X = RNG.standard_normal((6, 3))
Y = RNG.standard_normal((6, 2))
INIT = np.random.default_rng(5)


class Layer:
    def __init__(self):
        self.built = False

    def __call__(self, x):
        if not self.built:
            self.build(x.shape)
            self.built = True
        return self.call(x)

    def get_weights(self):
        return []

    def set_weights(self, ws):
        pass


class Dense(Layer):
    def __init__(self, units, activation=None):
        super().__init__()
        self.units = units
        self.activation = activation

    def build(self, shape):
        self.kernel = INIT.standard_normal((shape[-1], self.units)) * 0.3
        self.bias = np.zeros(self.units)

    def call(self, x):
        z = x @ self.kernel + self.bias
        if self.activation == "tanh":
            return np.tanh(z)
        return z

    def get_weights(self):
        return [self.kernel, self.bias]

    def set_weights(self, ws):
        self.kernel, self.bias = ws


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def get_weights(self):
        return [w for layer in self.layers for w in layer.get_weights()]

    def set_weights(self, ws):
        i = 0
        for layer in self.layers:
            n = len(layer.get_weights())
            layer.set_weights(ws[i:i + n])
            i += n


MODEL = Sequential([Dense(4, "tanh"), Dense(2)])
MODEL(X)  # (built before the tests' calls)
START = [w.copy() for w in MODEL.get_weights()]


def by_set_weights(ws):
    MODEL.set_weights(ws)
    return np.mean((MODEL(X) - Y) ** 2)


def by_each_layers_set_weights(ws):
    for layer, (k, b) in zip(MODEL.layers, [(ws[0], ws[1]), (ws[2], ws[3])]):
        layer.set_weights([k, b])
    return np.mean((MODEL(X) - Y) ** 2)


def by_the_kernels(ws):
    for layer, k in zip(MODEL.layers, [ws[0], ws[2]]):
        layer.kernel = k
    return np.mean((MODEL(X) - Y) ** 2)


@pytest.mark.parametrize("kw", [{}, {"fuse": True}, {"mode": "tape"}],
                         ids=["source", "fused", "tape"])
@pytest.mark.parametrize("f", [by_set_weights, by_each_layers_set_weights, by_the_kernels],
                         ids=lambda f: f.__name__)
def test_weights_of_a_built_model(f, kw):
    try:
        ws = [w + 0.05 for w in START]
        got = srcad.grad(f, **kw)([w.copy() for w in ws])
        want = numerical_grad(f, ([w.copy() for w in ws],))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)
    finally:
        MODEL.set_weights([w.copy() for w in START])


def test_a_model_built_by_the_first_call():
    fresh = Sequential([Dense(3, "tanh"), Dense(1)])

    def loss(x):
        return np.sum(fresh(x) ** 2)

    g = srcad.grad(loss)
    first = g(X.copy())  # (builds the layers, as Python's call does)
    assert all(layer.built for layer in fresh.layers)
    want = numerical_grad(loss, (X.copy(),))
    np.testing.assert_allclose(first, want, rtol=1e-6, atol=1e-8)
    kernels = [layer.kernel for layer in fresh.layers]
    np.testing.assert_allclose(g(X.copy()), want, rtol=1e-6, atol=1e-8)  # (rebuilt: built)
    assert all(layer.kernel is k for layer, k in zip(fresh.layers, kernels))  # (not again)


def resets_then_calls(x):
    fx.unbuild(MODEL.layers[0])  # (a function of another file: srcad does not read it)
    return np.sum(MODEL(x) ** 2)


def test_a_flag_reset_during_the_call_stops_it_at_the_test():
    try:
        with pytest.raises(srcad.SrcadError, match="`if not self.built:`") as e:
            srcad.grad(resets_then_calls)(X.copy())
        assert e.value.filename == __file__  # (the layer's test, in its method here)
    finally:
        MODEL.layers[0].built = True
        MODEL.set_weights([w.copy() for w in START])
