"""State a nested function or a built object's method leaves on an object the program keeps --
a class attribute counting calls or naming layers (``Dense.count += 1; self.name =
f"dense_{Dense.count}"``), a module object's running total -- read after the call (session of
2026-12-07, eleventh). Those calls are spliced into their caller (inline.py), which did not
carry what they left: the caller read the value from before every call, and each call
started from it too -- a wrong value and gradient, silently (`Model.calls` read 0 after two
calls; two layers both named "dense_1"). Now a spliced call carries its state out as a
called one does (state.py): the caller's reads, and the next call, see the new value."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

X = np.array([0.3, -0.7, 1.1, 0.45])


class Model:
    calls = 0

    def __init__(self, scale=1.0):
        self.scale = scale

    def forward(self, x):
        Model.calls += 1
        return x * self.scale


class Dense:
    count = 0

    def __init__(self, W):
        Dense.count += 1
        self.name = "dense_%d" % Dense.count
        self.W = W


WEIGHTS = {"dense_1": 1.0, "dense_2": 10.0, "dense_3": 100.0}


class Tally:
    def __init__(self):
        self.total = 0.0


TALLY = Tally()


def counted_by_a_built_objects_method(x):
    m = Model(2.0)
    y = m.forward(x) + m.forward(np.sin(x))
    return np.sum(y ** 2) * Model.calls


def counted_by_a_nested_def(x):
    def step(v):
        Model.calls += 1
        return np.tanh(v) * Model.calls

    return np.sum(step(x) + step(x * 2))


def layers_named_by_a_class_counter(x):
    Dense.count = 0
    layers = [Dense(x), Dense(np.cos(x))]
    return sum(np.sum(layer.W ** 2) * WEIGHTS[layer.name] for layer in layers)


def total_kept_on_a_module_object(x):
    TALLY.total = 0.0

    def add(v):
        TALLY.total += np.sum(v ** 2)

    add(x)
    add(np.sin(x))
    return TALLY.total * 0.5


def _reset():
    Model.calls = 0
    Dense.count = 0
    TALLY.total = 0.0


CASES = [counted_by_a_built_objects_method, counted_by_a_nested_def,
         layers_named_by_a_class_counter, total_kept_on_a_module_object]


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_state_left_by_a_spliced_call_is_read_after_it(fn, mode):
    opts = {"fuse": True} if mode == "fuse" else {"mode": mode}
    g = srcad.value_and_grad(fn, **opts)
    _reset()
    got = [g(X.copy()) for _ in range(2)]
    after = (Model.calls, Dense.count, TALLY.total)
    _reset()
    want = [fn(X.copy()) for _ in range(2)]
    assert (Model.calls, Dense.count, TALLY.total) == pytest.approx(after, rel=1e-12)
    for (value, _), ref in zip(got, want):
        assert value == pytest.approx(ref, rel=1e-12)
    # (the gradient at the second call: the counters as that call finds them)
    for k, (_, grad) in enumerate(got):

        def at_call(x, k=k):
            _reset()
            for _ in range(k):
                fn(X.copy())
            return fn(x)

        np.testing.assert_allclose(grad, numerical_grad(at_call, (X.copy(),), h=1e-6),
                                   rtol=1e-6, atol=1e-8)
