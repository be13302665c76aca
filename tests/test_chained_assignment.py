"""`a = b = value` of any value, as Python means it: the value once, then each target, left to
right, given that same object -- `X = layer.fc["X"] = A` and `z = cache["z"][s] = x @ U + b`
in the style of layer libraries that keep a forward cache (EpyNN's), `a = b = np.sum(w)`.
Refused ("chained assignment ... of a value other than a literal or a new array") until the
session of 2026-12-06 (sixth): the refusal guarded two names for one Python number, each
changed by `+=`, which srcad's aliasing has handled since 2026-12-04 (`alias_again`,
tests/test_probe11_forms.py `two_names_for_one_float`). pyforms.py `chained` now lowers every
such statement to `held = value; a = held; b = held`, as it did for `np.zeros`."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(12)


def number_twice(w):
    a = b = np.sum(w) * 0.5
    a += 1.0
    b *= 3.0
    return a * b


def array_twice_written(w):
    a = b = w * 2.0
    a += 1.0  # numpy writes the one array both names hold
    return np.sum(a * b)


def array_twice_in_a_loop(w):
    a = b = np.tanh(w)
    for _ in range(3):
        a *= 0.5
        b += w
    return np.sum(a * b) + np.sum(a)


def rebound_not_written(w):
    a = b = w * 2.0
    a = a + 1.0  # a new array: b keeps the old one
    return np.sum(a * b)


def three_targets_and_a_view(w):
    a = b = c = w[1:] * 1.5
    c[0] = 0.0
    return np.sum(a) + np.sum(b ** 2)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def cached_rnn(U, V, X):
    cache = {"z": np.zeros((X.shape[0], V.shape[0]))}
    h = np.zeros(V.shape[0])
    A = cache["X"] = X
    for s in range(X.shape[0]):
        z = cache["z"][s] = A[s] @ U + h @ V
        h = np.tanh(z)
    out = cache["A"] = sigmoid(cache["z"])
    return np.sum(out ** 2) + np.sum(cache["X"] * 0.1)


class Layer:
    def __init__(self, U):
        self.U = U
        self.fc = {}

    def forward(self, A):
        X = self.fc["X"] = A
        Z = self.fc["Z"] = X @ self.U
        A = self.fc["A"] = np.tanh(Z)
        return A


def layer_cache(U, X):
    layer = Layer(U)
    A = layer.forward(X)
    return np.sum(A ** 2) + np.sum(layer.fc["Z"])


def tuple_target(w):
    (a, b) = c = (w * 2.0, w + 1.0)
    return np.sum(a * b) + np.sum(c[0])


CASES = [
    (number_twice, lambda: (RNG.standard_normal(3),)),
    (array_twice_written, lambda: (RNG.standard_normal(3),)),
    (array_twice_in_a_loop, lambda: (RNG.standard_normal(3),)),
    (rebound_not_written, lambda: (RNG.standard_normal(3),)),
    (three_targets_and_a_view, lambda: (RNG.standard_normal(4),)),
    (cached_rnn, lambda: (0.5 * RNG.standard_normal((3, 4)), 0.5 * RNG.standard_normal((4, 4)),
                          RNG.standard_normal((5, 3)))),
    (layer_cache, lambda: (RNG.standard_normal((3, 4)), RNG.standard_normal((5, 3)))),
    (tuple_target, lambda: (RNG.standard_normal(3),)),
]


@pytest.mark.parametrize("f, make", CASES, ids=[f.__name__ for f, _ in CASES])
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_chained_assignment(f, make, mode):
    args = make()
    wrt = tuple(range(len(args) - 1)) if len(args) > 2 else 0
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    value, grads = srcad.value_and_grad(f, wrt=wrt, **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    want = numerical_grad(f, args, wrt=wrt)
    for got, w in zip(grads if isinstance(wrt, tuple) else (grads,),
                      want if isinstance(wrt, tuple) else (want,)):
        np.testing.assert_allclose(got, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, make", CASES, ids=[f.__name__ for f, _ in CASES])
def test_source_is_tape_bit_for_bit(f, make):
    args = make()
    wrt = tuple(range(len(args) - 1)) if len(args) > 2 else 0
    a = srcad.grad(f, wrt=wrt)(*args)
    b = srcad.grad(f, wrt=wrt, mode="tape")(*args)
    for x, y in zip(a if isinstance(wrt, tuple) else (a,), b if isinstance(wrt, tuple) else (b,)):
        assert np.array_equal(x, y)
