"""`srcad.checkpoint` on methods (session of 2026-12-07): `@srcad.checkpoint` on a method, and
`srcad.checkpoint(self.block)(h)` -- torch's `checkpoint(self.layer, x)` -- in class-based
models.

Before, `@srcad.checkpoint` broke the plain method itself: the wrapper had no `__get__`, so
`self.block(h)` called the function without `self` (Python's TypeError, with or without
srcad), and srcad refused the call ("the method `.block()` has no derivative rule");
`srcad.checkpoint(self.block)(h)` failed with "name `self` is not defined". Now the wrapper
binds as a function does, and srcad differentiates both as checkpointed calls of the method
(frontend/calls.py): the same gradients, bit for bit, as the method not checkpointed, and
the generated code recomputes the block's forward instead of keeping its insides."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(5)
W0 = RNG.standard_normal((4, 4)) * 0.5
X = RNG.standard_normal((3, 4))


class Decorated:
    def __init__(self, W):
        self.W = W

    @srcad.checkpoint
    def block(self, h):
        z = h @ self.W
        return np.tanh(z) * np.exp(-z * z * 0.1)

    def loss(self, x):
        h = x
        for _ in range(3):
            h = self.block(h)
        return np.sum(h ** 2)


class Wrapped:
    def __init__(self, W):
        self.W = W

    def block(self, h):
        z = h @ self.W
        return np.tanh(z) * np.exp(-z * z * 0.1)

    def loss(self, x):
        h = x
        for _ in range(3):
            h = srcad.checkpoint(self.block)(h)
        return np.sum(h ** 2)

    def loss_plain(self, x):
        h = x
        for _ in range(3):
            h = self.block(h)
        return np.sum(h ** 2)


DECORATED = Decorated(W0.copy())
WRAPPED = Wrapped(W0.copy())


def decorated_method(W, x):
    DECORATED.W = W
    return DECORATED.loss(x)


def wrapped_bound_method(W, x):
    WRAPPED.W = W
    return WRAPPED.loss(x)


def not_checkpointed(W, x):
    WRAPPED.W = W
    return WRAPPED.loss_plain(x)


def test_the_decorated_method_runs_as_python():
    DECORATED.W = W0.copy()
    WRAPPED.W = W0.copy()
    np.testing.assert_array_equal(DECORATED.loss(X), WRAPPED.loss_plain(X))
    assert DECORATED.block.__name__ == "block"


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
@pytest.mark.parametrize("fn", [decorated_method, wrapped_bound_method],
                         ids=lambda f: f.__name__)
def test_checkpointed_methods_match_finite_differences(fn, mode):
    opts = {"fuse": True} if mode == "fuse" else {"mode": mode}
    value, g = srcad.value_and_grad(fn, **opts)(W0.copy(), X)
    assert value == pytest.approx(not_checkpointed(W0.copy(), X), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (W0.copy(), X), h=1e-6), rtol=1e-6,
                               atol=1e-9)


@pytest.mark.parametrize("fn", [decorated_method, wrapped_bound_method],
                         ids=lambda f: f.__name__)
def test_bit_for_bit_the_plain_gradient_and_recomputed(fn):
    g = srcad.grad(fn)
    np.testing.assert_array_equal(g(W0.copy(), X), srcad.grad(not_checkpointed)(W0.copy(), X))
    assert "# checkpointed: recompute" in srcad.source(g)
