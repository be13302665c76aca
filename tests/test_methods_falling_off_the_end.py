"""A method of a kept object that ends without a `return` and changes the object through a
method of its own -- `def forward_prev(self): self.forward(self.prev.output)` -- called by a
function srcad does not turn into locals as a whole (a store in a branch of it, say). srcad
turns such a method's object into locals and writes them back before each `return`; a
method falling off its end had none, so the object kept the attributes of the call before
(the slow object-state fuzzer's seed 106, found in the session of 2026-12-07, twelfth:
value and gradient right, `L3.output` and `L3.inputs` stale after the call -- a program
reading them after the call reads the old arrays). Fixed in the session of 2026-12-07,
thirteenth: the write-back is put at the end as well. Each case checks, in every mode, the
value, the gradient against central differences, and every attribute the call leaves
against plain Python's, over two calls with different inputs."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = [{}, {"fuse": True}, {"mode": "tape"}]


class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b
        self.prev = None
        self.output = None
        self.inputs = None
        self.cfg = {"mode": "test"}
        self.calls = 0

    def forward(self, x):
        self.inputs = x
        self.output = x @ self.W
        self.output = np.tanh(self.output + self.b)

    def forward_prev(self):  # (falls off its end)
        self.forward(self.prev.output)

    def forward_if_linked(self):  # (ends in a branch)
        if self.prev is not None:
            self.forward(self.prev.output)

    def forward_counted(self):  # (a store of its own, then a method; no return)
        self.calls = self.calls + 1
        self.forward(self.prev.output * 0.5)

    def forward_early(self, skip):  # (a bare `return` in a branch, then falls off)
        if skip:
            return
        self.forward(self.prev.output)

    def forward_returning(self):  # (the control: a `return` at its end)
        self.forward(self.prev.output)
        return self.output


RNG = np.random.default_rng(3)
L1 = Dense(RNG.standard_normal((3, 3)), RNG.standard_normal(3))
L3 = Dense(RNG.standard_normal((3, 3)), RNG.standard_normal(3))
L3.prev = L1
LAYERS = (L1, L3)


def _train(flag):
    if flag:  # (a store in a branch: the function is not turned into locals as a whole)
        for layer in (L1, L3):
            layer.cfg["mode"] = "train"


def prev_read(x, flag=True):
    _train(flag)
    L3.forward(x)
    L1.forward(L3.output)
    L3.forward_prev()
    return np.sum(L3.output * L3.output) + np.sum(L3.prev.output * x)


def prev_inline_branch(x, flag=True):
    if flag:
        for layer in (L1, L3):
            layer.cfg["mode"] = "train"
    L3.forward(x)
    h1 = L3.output
    L1.forward(h1)
    L3.forward_prev()
    h2 = L3.prev.output * 0.5 + L3.output
    return np.sum(np.tanh(h1) * x) + np.sum(h2 * h2)


def linked(x, flag=True):
    if flag:
        for layer in (L1, L3):
            layer.cfg["mode"] = "train"
    L1.forward(x)
    L3.forward_if_linked()
    return np.sum(L3.output ** 2)


def counted(x, flag=True):
    if flag:
        for layer in (L1, L3):
            layer.cfg["mode"] = "train"
    L1.forward(x * 2.0)
    L3.forward_counted()
    return np.sum(L3.output * x)


def early(x, flag=True):
    if flag:
        for layer in (L1, L3):
            layer.cfg["mode"] = "train"
    L1.forward(x)
    L3.forward_early(False)
    return np.sum(L3.output ** 2) + np.sum(L3.inputs)


def returning(x, flag=True):
    if flag:
        for layer in (L1, L3):
            layer.cfg["mode"] = "train"
    L1.forward(x)
    out = L3.forward_returning()
    return np.sum(out * L3.output)


PROGRAMS = [prev_read, prev_inline_branch, linked, counted, early, returning]
ATTRS = ("output", "inputs", "calls")


def _reset():
    for layer in LAYERS:
        layer.output = layer.inputs = None
        layer.calls = 0
        layer.cfg["mode"] = "test"


def _state():
    return [(i, a, getattr(layer, a)) for i, layer in enumerate(LAYERS) for a in ATTRS]


def _same(a, b):
    if a is None or b is None:
        return a is b
    return np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("opts", MODES, ids=["source", "fused", "tape"])
@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_object_left_as_python_leaves_it(fn, opts):
    g = srcad.value_and_grad(fn, **opts)
    xs = [np.array([0.3, -0.7, 1.1]), np.array([-0.4, 0.9, 0.2])]
    _reset()
    for x in xs:
        before = _state()
        want = fn(x)
        want_state = _state()
        for layer, (_, a, v) in zip([L for L in LAYERS for _ in ATTRS], before):
            setattr(layer, a, v)  # (back as before Python's call, for srcad's)
        value, grad = g(x)
        got_state = _state()
        assert np.isclose(value, want, rtol=1e-12), (value, want)
        for (i, a, w), (_, _, v) in zip(want_state, got_state):
            assert _same(w, v), f"L{(1, 3)[i]}.{a} after the call: {v!r}, Python's {w!r}"
        state = _state()
        numeric = numerical_grad(fn, (x.copy(),))
        for layer, (_, a, v) in zip([L for L in LAYERS for _ in ATTRS], state):
            setattr(layer, a, v)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
