"""Closures made in a loop over a list of arrays written out (`for w in [W1, W2]:
fs.append(lambda x, w=w: np.tanh(x @ w))`, or the comprehension `[lambda x, w=w: ... for w in
ws]`), then called: the default captures each array when the lambda is made; without the
default every closure reads the loop's last `w` (Python's late binding). Refused ("`lambda`
has no derivative rule ...") until the session of 2026-12-06 (sixth) where the closed-over
value was differentiated -- a constant default (`k=k` of a `range`) worked. A loop over a
display whose body makes a function value is now walked once per item (loops.py
`_makes_closures`), so each closure is known with what it closes over."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(31)


def default_in_a_loop(W, X):
    fs = []
    for w in [W, W * 2.0, W * 3.0]:
        fs.append(lambda x, w=w: np.tanh(x @ w))
    return sum(np.sum(f(X)) for f in fs)


def default_in_a_comprehension(W, X):
    ws = [W, W * 2.0, W * 3.0]
    fs = [lambda x, w=w: np.tanh(x @ w) for w in ws]
    return sum(np.sum(f(X) ** 2) for f in fs)


def late_binding(W, X):
    ws = [W, W * 2.0, W * 3.0]
    fs = [lambda x: np.tanh(x @ w) for w in ws]  # every one reads the last w
    return sum(np.sum(f(X)) for f in fs)


def chained_layers(W, X):
    fs = []
    for w, s in [(W, 1.0), (W.T @ W, 0.5)]:
        fs.append(lambda h, w=w, s=s: np.tanh(h @ w) * s)
    h = X
    for f in fs:
        h = f(h)
    return np.sum(h ** 2)


def nested_def(W, X):
    fs = []
    for w in [W, W + 1.0]:
        def layer(x, w=w):
            return np.maximum(x @ w, 0.0) + 0.1 * (x @ w)
        fs.append(layer)
    return sum(np.sum(f(X)) for f in reversed(fs))


CASES = [default_in_a_loop, default_in_a_comprehension, late_binding, chained_layers,
         nested_def]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_closures_made_in_a_loop(f, mode):
    W, X = RNG.standard_normal((4, 4)) * 0.5, RNG.standard_normal((3, 4))
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    value, g = srcad.value_and_grad(f, **options)(W, X)
    assert value == pytest.approx(f(W, X), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(f, (W, X)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_source_is_tape_bit_for_bit(f):
    W, X = RNG.standard_normal((4, 4)) * 0.5, RNG.standard_normal((3, 4))
    assert np.array_equal(srcad.grad(f)(W, X), srcad.grad(f, mode="tape")(W, X))
