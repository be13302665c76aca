"""Weights loaded into layers in pairs: ``for layer, (W, b) in zip(model.layers, params)``.

A loop over a model's layers is written out once per layer (frontend/loops.py
`objects_walked`), and a name the body binds -- ``W, b = p`` or the loop's own nested target
-- is one IR name for every layer's value. srcad recorded what ``layer.W = W`` stored as that
name, so a method called after the loop read the *last* layer's weights on every layer: the
first layers' weights got a zero gradient (relative error 1.0 against central differences) and
the value was wrong, silently, in source and fused mode, up to 2bc1c92 (session of
2026-12-06, ninth). What an object is given is now kept under a name of its own
(normalize.py `held_value`), list displays (``layer.cache = [W, b]``) item by item.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = {"source": {}, "fuse": {"fuse": True}, "tape": {"mode": "tape"}}


class Layer:
    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.W = rng.standard_normal((3, 3)) * 0.5
        self.b = rng.standard_normal(3) * 0.1
        self.scale = 1.0 + seed

    def forward(self, x):
        return np.tanh(x @ self.W + self.b) * self.scale


LAYERS = [Layer(1), Layer(2), Layer(3)]
X = np.random.default_rng(0).standard_normal((2, 3))


def _run(x):
    for layer in LAYERS:
        x = layer.forward(x)
    return np.sum(x ** 2)


def nested_target(params):
    for layer, (W, b) in zip(LAYERS, params):
        layer.W = W
        layer.b = b
    return _run(X)


def unpacked_in_the_body(params):
    for layer, p in zip(LAYERS, params):
        W, b = p
        layer.W = W
        layer.b = b
    return _run(X)


def stored_by_a_tuple_assignment(params):
    for layer, p in zip(LAYERS, params):
        W, b = p
        layer.W, layer.b = W, b
    return _run(X)


def enumerated_pairs(params):
    for i, (layer, p) in enumerate(zip(LAYERS, params)):
        W = p[0] * 1.0
        layer.W = W
        layer.b = p[1]
    return _run(X)


def a_list_display_stored(params):
    for layer, (W, b) in zip(LAYERS, params):
        layer.pair = [W, b]
    total = 0.0
    for k, layer in enumerate(LAYERS):
        W, b = layer.pair
        total = total + (k + 1) * np.sum(np.tanh(X @ W + b))
    return total


FUNCTIONS = [nested_target, unpacked_in_the_body, stored_by_a_tuple_assignment,
             enumerated_pairs, a_list_display_stored]


def _params():
    rng = np.random.default_rng(7)
    return [(rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3) * 0.1)
            for _ in LAYERS]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_each_layer_gets_its_own_pair(fn, mode):
    params = _params()
    want_value = fn(params)
    want = numerical_grad(fn, (params,), h=1e-6)
    value, got = srcad.value_and_grad(fn, **MODES[mode])(params)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    for (gW, gb), (wW, wb) in zip(got, want):
        np.testing.assert_allclose(gW, wW, rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(gb, wb, rtol=1e-5, atol=1e-8)
    for layer, (W, b) in zip(LAYERS, params):  # (each layer holds its own pair after)
        if fn is not a_list_display_stored:
            np.testing.assert_array_equal(layer.W, W)


# -- layers picked by the index of an argument's items -------------------------------------------
#
# `for i, W in enumerate(Ws): net.layers[i].W.data = W` (and `for i in range(len(Ws))`, a local
# `layer = net.layers[i]` first) over a list argument: refused on 2bc1c92 ("assignment to an
# attribute of an expression"), as srcad did not know which layer an index picks. The loop is
# written out once per item now, its count the call's (loops.py `walked_by_index`,
# `argument_count`), as `for i in range(len(net.layers))` was.

class Param:
    def __init__(self, v):
        self.data = v


class Lin:
    def __init__(self, seed):
        self.W = Param(np.random.default_rng(seed).standard_normal((3, 3)) * 0.5)

    def __call__(self, x):
        return np.tanh(x @ self.W.data)


class Model:
    def __init__(self):
        self.layers = [Lin(4), Lin(5), Lin(6)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


MODEL = Model()


def enumerate_picks_by_index(Ws):
    for i, W in enumerate(Ws):
        MODEL.layers[i].W.data = W
    return np.sum(MODEL(X) ** 2)


def range_len_picks_by_index(Ws):
    for i in range(len(Ws)):
        layer = MODEL.layers[i]
        layer.W.data = Ws[i] * 1.0
    return np.sum(MODEL(X) ** 2)


def enumerate_zip_picks_by_index(Ws, scales):
    for i, (W, s) in enumerate(zip(Ws, scales)):
        MODEL.layers[i].W.data = W * s
    return np.sum(MODEL(X) ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [enumerate_picks_by_index, range_len_picks_by_index],
                         ids=lambda f: f.__name__)
def test_layers_picked_by_an_arguments_index(fn, mode):
    Ws = [lin.W.data.copy() for lin in MODEL.layers]
    want = numerical_grad(fn, (Ws,), h=1e-6)
    got = srcad.grad(fn, **MODES[mode])(Ws)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-8)
    short = Ws[:2]  # (another count: written out again, the third layer keeps its W)
    want = numerical_grad(fn, (short,), h=1e-6)
    got = srcad.grad(fn, **MODES[mode])(short)
    assert len(got) == 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("mode", MODES)
def test_layers_picked_by_the_index_of_zipped_arguments(mode):
    Ws = [lin.W.data.copy() for lin in MODEL.layers]
    scales = (1.0, 0.5, 2.0)
    want = numerical_grad(enumerate_zip_picks_by_index, (Ws, scales), wrt=0, h=1e-6)
    got = srcad.grad(enumerate_zip_picks_by_index, **MODES[mode])(Ws, scales)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-8)
