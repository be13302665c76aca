"""Weights loaded into a torch-like numpy model through its own parameter API (session of
2026-12-07, twelfth): a `Module` whose `__setattr__` files `Parameter`s and sub-modules into
`OrderedDict`s, and generators `parameters()` / `named_parameters(prefix)` walking them --

    for p, w in zip(NET.parameters(), ws): p.data = w
    for name, p in NET.named_parameters(): p.data = params[name]

srcad runs such a generator while it builds the code (staticrun.py) and walks the objects it
hands out. It stopped at an `OrderedDict` (only a plain dict was walked), at `prefix + name`,
and at (name, object) pairs, and a pair's object unpacked by the loop was a copy srcad could
not name: the program was refused. Now all four are followed: the stores reach the methods
that read the parameters, and the model holds the loaded arrays after the call."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 4))


class Parameter:
    def __init__(self, data):
        self.data = data


class Module:
    registry = collections.OrderedDict

    def __init__(self):
        object.__setattr__(self, "_params", self.registry())
        object.__setattr__(self, "_modules", self.registry())

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self._params[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def parameters(self):
        for p in self._params.values():
            yield p
        for m in self._modules.values():
            yield from m.parameters()

    def named_parameters(self, prefix=""):
        for name, p in self._params.items():
            yield prefix + name, p
        for name, m in self._modules.items():
            yield from m.named_parameters(prefix + name + ".")

    def __call__(self, x):
        return self.forward(x)


class Linear(Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.W = Parameter(RNG.standard_normal((n_in, n_out)) * 0.5)
        self.b = Parameter(np.zeros(n_out))

    def forward(self, x):
        return x @ self.W.data + self.b.data


class MLP(Module):
    def __init__(self):
        super().__init__()
        self.fc1 = Linear(4, 3)
        self.fc2 = Linear(3, 2)

    def forward(self, x):
        return self.fc2(np.tanh(self.fc1(x)))


class PlainLinear(Linear):
    registry = dict


NET = MLP()
PLAIN = PlainLinear(4, 2)


def loaded_by_zip(ws, x):
    for p, w in zip(NET.parameters(), ws):
        p.data = w
    return np.sum(NET(x) ** 2)


def loaded_by_name(params, x):
    for name, p in NET.named_parameters():
        p.data = params[name]
    return np.sum(NET(x) ** 2)


def loaded_by_pair(params, x):
    for pair in NET.named_parameters():
        name, p = pair
        p.data = params[name]
    return np.sum(NET(x) ** 2)


def loaded_into_a_plain_dicts_module(params, x):
    for name, p in PLAIN.named_parameters():
        p.data = params[name]
    return np.sum(np.tanh(PLAIN(x)))


def _flat_grad(fn, tree, x):
    """Central differences of fn over every array of a list or dict `tree`."""
    keys = list(range(len(tree))) if isinstance(tree, list) else list(tree)
    flat = np.concatenate([np.ravel(tree[k]) for k in keys])

    def of_flat(v):
        out, i = (list(tree) if isinstance(tree, list) else dict(tree)), 0
        for k in keys:
            out[k] = v[i:i + tree[k].size].reshape(tree[k].shape)
            i += tree[k].size
        return fn(out, x)

    g, out, i = numerical_grad(of_flat, (flat,), h=1e-6), {}, 0
    for k in keys:
        out[k] = g[i:i + tree[k].size].reshape(tree[k].shape)
        i += tree[k].size
    return out


def _arguments(fn, scale):
    if fn is loaded_by_zip:
        return [p.data.copy() * scale for p in NET.parameters()]
    model = PLAIN if fn is loaded_into_a_plain_dicts_module else NET
    return {n: p.data.copy() * scale for n, p in model.named_parameters()}


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
@pytest.mark.parametrize("fn", [loaded_by_zip, loaded_by_name, loaded_by_pair,
                                loaded_into_a_plain_dicts_module], ids=lambda f: f.__name__)
def test_weights_loaded_through_the_models_generators(fn, mode):
    opts = {"fuse": True} if mode == "fuse" else {"mode": mode}
    g = srcad.value_and_grad(fn, **opts)
    for scale in (1.0, 0.5):
        tree = _arguments(fn, scale)
        value, grad = g(tree, X)
        model = PLAIN if fn is loaded_into_a_plain_dicts_module else NET
        loaded = list(tree) if isinstance(tree, list) else [tree[n] for n, _ in
                                                               model.named_parameters()]
        # (the model holds the very arrays loaded, as after Python's call)
        assert all(p.data is w for p, w in zip(model.parameters(), loaded))
        assert value == pytest.approx(fn(tree, X), rel=1e-12)
        want = _flat_grad(fn, tree, X)
        for k in want:
            np.testing.assert_allclose(grad[k], want[k], rtol=1e-6, atol=1e-8)


def test_a_layer_registered_between_calls_is_walked_the_next_call():
    class Chain(Module):
        def forward(self, x):
            for m in self._modules.values():
                x = np.tanh(m(x))
            return x

    net = Chain()
    net.fc1 = Linear(4, 3)

    def loss(params, x):
        for name, p in net.named_parameters():
            p.data = params[name]
        return np.sum(net(x) ** 2)

    g = srcad.grad(loss)
    params = {n: p.data.copy() for n, p in net.named_parameters()}
    assert set(g(params, X)) == {"fc1.W", "fc1.b"}
    net.fc2 = Linear(3, 2)  # (Python's next call walks it, and so does srcad's)
    params = {n: p.data.copy() for n, p in net.named_parameters()}
    grad = g(params, X)
    assert set(grad) == {"fc1.W", "fc1.b", "fc2.W", "fc2.b"}
    want = _flat_grad(loss, params, X)
    for k in want:
        np.testing.assert_allclose(grad[k], want[k], rtol=1e-6, atol=1e-8)
