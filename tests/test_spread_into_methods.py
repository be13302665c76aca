"""``layer(x, **cfg)`` and ``layer.forward(x, **cfg)`` of an object the function builds
(issue 23): refused as "`**kwargs` in a call" until 2026-12-04, although the same spread into
a module function or a constructor was written out. Now written out as Python binds it (each
parameter the call leaves to the dict ``cfg["p"]``, or ``cfg.get("p", default)``), after
Python's TypeError check of the keys, read when the call runs. Each case is checked against
central differences and the function itself, in source and tape modes; a dict Python refuses
is refused the same way.
"""

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad


class Dense:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x, scale=1.0, shift=0.0):
        return np.tanh(x @ self.W + self.b) * scale + shift

    def forward(self, x, gain, act="tanh"):
        z = x @ self.W + self.b
        return gain * (np.tanh(z) if act == "tanh" else np.maximum(z, 0.0))


class Net:
    def __init__(self, Ws, bs):
        self.layers = [Dense(W, b) for W, b in zip(Ws, bs)]

    def __call__(self, x, **cfg):
        for layer in self.layers:
            x = layer(x, **cfg)
        return x


CFG = {"scale": 1.5, "shift": 0.25}


def call_with_a_local_dict(W, b, x):
    cfg = {"scale": 2.0, "shift": 0.5}
    layer = Dense(W, b)
    return np.sum(layer(x, **cfg) ** 2)


def method_with_a_local_dict(W, b, x):
    cfg = {"gain": 0.7}
    layer = Dense(W, b)
    return np.sum(layer.forward(x, **cfg) ** 2)


def method_with_a_key_picking_a_branch(W, b, x):
    cfg = {"gain": 1.3, "act": "relu"}
    return np.sum(Dense(W, b).forward(x, **cfg) ** 2)


def call_with_a_module_dict(W, b, x):
    return np.sum(Dense(W, b)(x, **CFG) ** 2)


def call_with_an_argument_dict(W, b, x, cfg):
    return np.sum(Dense(W, b)(x, **cfg) ** 2)


def call_with_a_keyword_and_a_dict(W, b, x):
    cfg = {"shift": -0.5}
    return np.sum(Dense(W, b)(x, scale=3.0, **cfg) ** 2)


def layers_in_a_loop(W, b, x):
    cfg = {"scale": 0.5}
    h = x
    for layer in [Dense(W, b), Dense(W.T, b)]:
        h = layer(h, **cfg)
    return np.sum(h ** 2)


RNG = np.random.default_rng(7)
W0 = RNG.standard_normal((3, 3)) * 0.5
B0 = RNG.standard_normal(3) * 0.1
X0 = RNG.standard_normal((4, 3))


CASES = [call_with_a_local_dict, method_with_a_local_dict, method_with_a_key_picking_a_branch,
         call_with_a_module_dict, call_with_a_keyword_and_a_dict, layers_in_a_loop]


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_a_spread_into_a_built_objects_method(fn, mode):
    args = (W0, B0, X0)
    value, grads = srcad.value_and_grad(fn, wrt=(0, 1, 2), mode=mode)(*args)
    assert np.isclose(value, fn(*args), rtol=1e-13)
    for g, want in zip(grads, numerical_grad(fn, args, wrt=(0, 1, 2), h=1e-6)):
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_an_argument_dict_is_read_at_each_call_and_differentiated(mode):
    g = srcad.grad(call_with_an_argument_dict, wrt=(0, 3), mode=mode)
    for cfg in ({"scale": 2.0, "shift": 0.1}, {"scale": -0.5, "shift": 1.0}, {"scale": 3.0}):
        gW, gcfg = g(W0, B0, X0, dict(cfg))
        wW, wcfg = numerical_grad(call_with_an_argument_dict, (W0, B0, X0, dict(cfg)),
                                  wrt=(0, 3), h=1e-6)
        np.testing.assert_allclose(gW, wW, rtol=1e-6, atol=1e-8)
        assert set(gcfg) == set(cfg)
        for k in cfg:
            assert np.isclose(gcfg[k], wcfg[k], rtol=1e-6), (k, gcfg[k], wcfg[k])


def test_a_changed_module_dict_is_followed():
    g = srcad.grad(call_with_a_module_dict)
    before = g(W0, B0, X0)
    saved = dict(CFG)
    try:
        CFG["scale"] = -2.0
        after = g(W0, B0, X0)
        np.testing.assert_allclose(after, numerical_grad(call_with_a_module_dict,
                                                         (W0, B0, X0), h=1e-6),
                                   rtol=1e-6, atol=1e-8)
        assert not np.allclose(before, after)
    finally:
        CFG.clear()
        CFG.update(saved)


def test_a_method_taking_kwargs_forwarding_them_to_its_layers():
    """`Net.__call__(self, x, **cfg)` hands its `**cfg` on to each layer's call."""
    Ws, bs = [W0, W0.T * 0.5], [B0, -B0]

    def f(Ws, bs, x):
        return np.sum(Net(Ws, bs)(x, scale=1.5, shift=0.2) ** 2)

    gWs = srcad.grad(f)(Ws, bs, X0)
    want = numerical_grad(f, (Ws, bs, X0), h=1e-6)
    for i in range(2):
        np.testing.assert_allclose(gWs[i], want[i], rtol=1e-6, atol=1e-8)


def with_an_extra_key(W, b, x):
    cfg = {"scale": 2.0, "bias": 1.0}
    return np.sum(Dense(W, b)(x, **cfg))


def with_a_key_given_twice(W, b, x):
    cfg = {"gain": 2.0}
    return np.sum(Dense(W, b).forward(x, gain=1.0, **cfg))


@pytest.mark.parametrize("fn, message", [
    (with_an_extra_key, "unexpected keyword argument 'bias'"),
    (with_a_key_given_twice, "multiple values for (keyword )?argument 'gain'")],
    ids=lambda v: getattr(v, "__name__", ""))
def test_a_dict_python_refuses_is_refused(fn, message):
    with pytest.raises(TypeError):
        fn(W0, B0, X0)
    for mode in ("source", "tape"):
        with pytest.raises((TypeError, srcad.SrcadError), match=message):
            srcad.grad(fn, mode=mode)(W0, B0, X0)
