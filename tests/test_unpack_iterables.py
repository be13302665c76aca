"""`w, = net.params.values()` -- unpacking an iterable that cannot be read by index (a dict's
values, a set, a generator): Python unpacks any iterable; srcad's code read the items by index
and failed with "TypeError: 'dict_values' object is not subscriptable", blamed on the user's
code (session of 2026-12-06, fifth). runtime.unpacked now takes such a value's items as a
tuple. A nested target, `(name, w), = P.items()`, failed that way until the session of
2026-12-06 (sixth): each level is now checked and read as the flat one is
(normalize.py `unpack_atom`), and a tuple written out to the target's shape binds its items to
the names directly, evaluated before any is bound, as Python does."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(0)
P = {"W1": RNG.standard_normal((4, 5))}
X = RNG.standard_normal((6, 4))


def by_its_values(W, X):
    w, = P.values()
    return np.sum(np.tanh(X @ (w + W)))


def by_a_generator(W, X):
    a, b = (W * k for k in (1.0, 2.0))
    return np.sum(np.tanh(X @ a)) + np.sum(b ** 2)




def by_its_items(W, X):
    (name, w), = P.items()
    return np.sum(np.tanh(X @ (w * W))) * len(name)


def by_enumerated_zip(W, X):
    total = 0.0
    for i, (w, s) in enumerate(zip([W, W * 2.0], [1.0, 2.0])):
        total = total + s * np.sum(np.tanh(X @ w)) * (i + 1)
    return total


def written_out(W, X):
    (a, b), c = (W, W * 2.0), X
    return np.sum(np.tanh(c @ (a + b)))


def swapped_across_levels(W, X):
    a, b, c = W, W * 2.0, W * 3.0
    (a, b), c = (c, a), b  # right side first: a=3W, b=W, c=2W
    return np.sum(np.tanh(X @ (a * b - c)))


def rebound_then_read(W, X):
    a = W * 0.5

    def pair(W):
        return W + 1.0, W * W

    (a, b), c = pair(W), a  # c is the old a, read before (a, b) are bound
    return np.sum(np.tanh(X @ (a * b + c)))


def rows_of_an_array(W, X):
    (r0, r1), rest = W[:2], W[2:]
    return np.sum(np.tanh(X @ W)) + np.sum(r0 * r1) + np.sum(rest ** 2)


def nested_from_a_callee(W, X):
    def parts(W):
        return [W, [W * 3.0, W + 1.0]]

    a, (b, c) = parts(W)
    return np.sum(np.tanh(X @ (a * b + c)))


NESTED = [by_its_items, by_enumerated_zip, written_out, swapped_across_levels, rebound_then_read,
          rows_of_an_array, nested_from_a_callee]


@pytest.mark.parametrize("f", [by_its_values, by_a_generator] + NESTED,
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_unpacking(f, mode):
    W = RNG.standard_normal((4, 5))
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    value, g = srcad.value_and_grad(f, **options)(W, X)
    assert value == pytest.approx(f(W, X), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(f, (W, X)), rtol=1e-5, atol=1e-7)


def too_few_inside(W, X):
    (a, b), c = (W,), X
    return np.sum(a * b * c)


def too_many_items(W, X):
    d = {"a": W, "b": W}
    (name, w), = d.items()
    return np.sum(w)


@pytest.mark.parametrize("f, message", [
    (too_few_inside, "not enough values to unpack (expected 2, got 1)"),
    (too_many_items, "too many values to unpack (expected 1)"),
], ids=["too_few_inside", "too_many_items"])
def test_nested_targets_fail_as_python_does(f, message):
    W = RNG.standard_normal((4, 5))
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        f(W, X)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        srcad.grad(f)(W, X)
