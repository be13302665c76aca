"""A model's own method installs the parameters into its layers, then the model runs:
``net.set_params(p); return net.loss(X, y)`` (session of 2026-12-06, fourth).

Course libraries load weights through a method of the model (``self.layers[0].W =
p["W1"]``, or a loop ``for layer, W in zip(self.layers, Ws): layer.W = W``) and read them
back in the layers' own ``forward``. srcad carried a callee's stores out to its caller only
for the callee's own ``self.attr``; a store into another object it knows (a layer of the
list ``self`` holds) was left on the object, and the layers' reads were refused ("read
through the object here, but set_params stores in it a value that depends on the arguments").
Now the last value a callee's top-level statements store on an object known when
normalising is carried out with its value (frontend/normalize.py `_stored_on_known_objects`;
state.py), so the caller's later calls read it. A store in a branch or a loop srcad does not
run once per object stays refused."""

from __future__ import annotations

import numpy as np
import pytest

import srcad


class Lin:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def set(self, W, b):
        self.W = W
        self.b = b

    def forward(self, x):
        return np.tanh(x @ self.W + self.b)


class Net:
    def __init__(self, layers):
        self.layers = layers

    def set_params(self, p):
        self.layers[0].W = p["W1"]
        self.layers[0].b = p["b1"]
        self.layers[1].W = p["W2"]
        self.layers[1].b = p["b2"]

    def set_in_a_loop(self, p):
        for i, layer in enumerate(self.layers):
            layer.W = p[f"W{i + 1}"]
            layer.b = p[f"b{i + 1}"]

    def set_through_layers(self, p):
        for i, layer in enumerate(self.layers):
            layer.set(p[f"W{i + 1}"], p[f"b{i + 1}"])

    def set_then_scaled(self, p):  # (the stored array written in place after: Python's
        W = p["W1"] * 1.0              # layer shows the write)
        self.layers[0].W = W
        W *= 2.0

    def set_then_rebound(self, p):  # (a new array after: the layer keeps the stored one)
        W = p["W1"] * 1.0
        self.layers[0].W = W
        W = W * 2.0
        return W

    def set_if(self, p, flag):
        if flag:
            self.layers[0].W = p["W1"]

    def params(self):
        return {"W1": self.layers[0].W, "b1": self.layers[0].b,
                "W2": self.layers[1].W, "b2": self.layers[1].b}

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def loss(self, x, y):
        return np.mean((self.forward(x) - y) ** 2)


RNG = np.random.default_rng(0)
NET = Net([Lin(RNG.standard_normal((3, 4)), np.zeros(4)),
           Lin(RNG.standard_normal((4, 2)), np.zeros(2))])
X = RNG.standard_normal((5, 3))
Y = RNG.standard_normal((5, 2))


def by_method(p, X, Y):
    NET.set_params(p)
    return NET.loss(X, Y)


def by_method_loop(p, X, Y):
    NET.set_in_a_loop(p)
    return NET.loss(X, Y)


def through_layers(p, X, Y):
    NET.set_through_layers(p)
    return NET.loss(X, Y)


def twice_then_read(p, X, Y):
    NET.set_params(p)
    a = NET.loss(X, Y)
    NET.set_params({k: v * 0.5 for k, v in p.items()})
    return a + NET.loss(X, Y) + np.sum(NET.layers[0].W ** 2)


def set_then_restored(p, X, Y):
    old = NET.params()
    NET.set_params(p)
    out = NET.loss(X, Y)
    NET.set_params(old)
    return out


def rebound_in_the_method(p, X, Y):
    NET.set_then_rebound(p)
    return NET.loss(X, Y)


def written_in_the_method(p, X, Y):
    NET.set_then_scaled(p)
    return NET.loss(X, Y)


def written_after_a_store(p, X, Y):
    W = p["W1"] * 1.0
    NET.layers[0].W = W
    W *= 2.0
    return NET.loss(X, Y)


def in_a_branch(p, X, Y):
    NET.set_if(p, True)
    return NET.loss(X, Y)


def _params(seed):
    rng = np.random.default_rng(seed)
    return {"W1": rng.standard_normal((3, 4)), "b1": rng.standard_normal(4),
            "W2": rng.standard_normal((4, 2)), "b2": rng.standard_normal(2)}


def _fd(f, p, k, idx, eps=1e-6):
    def at(d):
        q = {kk: v.copy() for kk, v in p.items()}
        q[k][idx] += d
        return f(q, X, Y)
    return (at(eps) - at(-eps)) / (2 * eps)


FOLLOWED = [by_method, by_method_loop, through_layers, twice_then_read, set_then_restored,
            rebound_in_the_method]


@pytest.mark.parametrize("f", FOLLOWED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode,fuse", [("source", False), ("source", True), ("tape", False)])
def test_parameters_installed_by_a_method_reach_the_layers_reads(f, mode, fuse):
    g = srcad.value_and_grad(f, mode=mode, fuse=fuse)
    for seed in (1, 2):  # (the second call: the specialisation built by the first)
        p = _params(seed)
        value, grads = g(p, X, Y)
        assert value == pytest.approx(f(p, X, Y), rel=1e-12)
        for k, idx in (("W1", (0, 1)), ("b1", (2,)), ("W2", (3, 1)), ("b2", (0,))):
            assert grads[k][idx] == pytest.approx(_fd(f, p, k, idx), rel=1e-5, abs=1e-8), k


@pytest.mark.parametrize("f", FOLLOWED, ids=lambda f: f.__name__)
def test_fused_and_tape_give_the_unfused_bits(f):
    p = _params(3)
    want = srcad.value_and_grad(f)(p, X, Y)
    for kw in ({"fuse": True}, {"mode": "tape"}):
        got = srcad.value_and_grad(f, **kw)(p, X, Y)
        assert got[0] == want[0] and all(np.array_equal(got[1][k], want[1][k]) for k in p)


@pytest.mark.parametrize("f", [written_in_the_method, written_after_a_store],
                         ids=lambda f: f.__name__)
def test_an_array_written_in_place_after_it_was_stored_on_a_layer(f):
    """Python's layer holds the array and shows the write: refused in source mode (the
    top-level one gave a wrong value and gradient, silently, on dab29fe), right in tape
    mode (which refuses the method's, as it did every store into a layer by a method)."""
    p = _params(5)
    with pytest.raises(srcad.SrcadError):
        srcad.grad(f)(p, X, Y)
    if f is written_in_the_method:
        with pytest.raises(srcad.SrcadError):
            srcad.grad(f, mode="tape")(p, X, Y)
        return
    value, g = srcad.value_and_grad(f, mode="tape")(p, X, Y)
    assert value == pytest.approx(f(p, X, Y), rel=1e-12)
    assert g["W1"][0, 1] == pytest.approx(_fd(f, p, "W1", (0, 1)), rel=1e-5, abs=1e-8)


def test_a_store_in_a_branch_of_the_method_is_still_refused():
    with pytest.raises(srcad.SrcadError, match="set_if"):
        srcad.grad(in_a_branch)(_params(4), X, Y)
