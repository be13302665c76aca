"""A dict holding an array a name holds too (`A = cache["X"] = X * 2`), and an item under
another key written in place (`cache["z"][t] = ...`): the array the name holds is not the one
written when every store under the written key made a new array for it (`np.zeros`, ...),
so srcad runs it. This was refused ("writes in place into an item of the list or dict
... an array `A` also holds") until the session of 2026-12-06 (sixth), which stopped layer
code in the style of libraries keeping a forward cache dict (EpyNN's `layer.fc`). Where the
array written may be the one the name holds -- the same key, the array stored under the
written key too (`cache["z"] = cache["X"]`, through another name or another dict), a key
known only at run time -- srcad still refuses or follows the write: never a stale value
(refusals.py `_other_key`; a first version that looked only for the arrays themselves under
the written key gave 52.09 for Python's 4.91 on `moved_under_the_key`)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(21)


def other_key(U, X):
    cache = {}
    A = cache["X"] = X * 2.0
    cache["z"] = np.zeros((X.shape[0], U.shape[1]))
    for t in range(X.shape[0]):
        cache["z"][t] = A[t] @ U
    return np.sum(np.tanh(cache["z"])) + np.sum(A ** 2)


def other_key_stored_first(U, X):
    cache = {}
    cache["z"] = np.zeros((X.shape[0], U.shape[1]))
    A = cache["X"] = X * 2.0
    for t in range(X.shape[0]):
        cache["z"][t] = A[t] @ U
    return np.sum(np.tanh(cache["z"])) + np.sum(A ** 2)


class Layer:
    def __init__(self, U):
        self.U = U
        self.fc = {}


def start(layer, X):
    A = layer.fc["X"] = X
    layer.fc["h"] = np.zeros((X.shape[0], layer.U.shape[1]))
    h = np.zeros(layer.U.shape[1])
    return A, h


def object_cache(U, X):
    layer = Layer(U)
    A, h = start(layer, X)
    for t in range(X.shape[0]):
        h = layer.fc["h"][t] = np.tanh(A[t] @ layer.U + 0.5 * h)
    out = layer.fc["A"] = layer.fc["h"]
    return np.sum(out ** 2) + np.sum(A * 0.1)


@pytest.mark.parametrize("f", [other_key, other_key_stored_first, object_cache],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_other_key_written(f, mode):
    U, X = 0.5 * RNG.standard_normal((3, 4)), RNG.standard_normal((5, 3))
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    value, (gU, gX) = srcad.value_and_grad(f, wrt=(0, 1), **options)(U, X)
    assert value == pytest.approx(f(U, X), rel=1e-12)
    wU, wX = numerical_grad(f, (U, X), wrt=(0, 1))
    np.testing.assert_allclose(gU, wU, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gX, wX, rtol=1e-6, atol=1e-6)


def same_key(U, X):
    cache = {}
    A = cache["X"] = X * 2.0
    for t in range(X.shape[0]):
        cache["X"][t] = np.tanh(A[t] @ U) @ U.T
    return np.sum(A ** 2)


def stored_under_both(U, X):
    cache = {}
    A = cache["X"] = X * 2.0
    cache["z"] = A
    for t in range(X.shape[0]):
        cache["z"][t] = np.tanh(A[t] @ U) @ U.T
    return np.sum(A ** 2)


def in_a_list_under_the_key(U, X):
    cache = {}
    A = cache["X"] = X * 2.0
    cache["z"] = [A]
    cache["z"][0][0] = np.tanh(A[0] @ U) @ U.T
    return np.sum(A ** 2)


def moved_under_the_key(U, X):
    cache = {}
    A = cache["X"] = X * 2.0
    cache["z"] = cache["X"]
    for t in range(X.shape[0]):
        cache["z"][t] = np.tanh(A[t] @ U) @ U.T
    return np.sum(A ** 2)


def read_out_then_stored(U, X):
    cache = {}
    A = cache["X"] = X * 2.0
    B = cache["X"]
    cache["z"] = B
    cache["z"][0] = np.tanh(A[0] @ U) @ U.T
    return np.sum(A ** 2)


def from_another_dict(U, X):
    cache = {}
    A = cache["X"] = X * 2.0
    other = {"z": A}
    cache["z"] = other["z"]
    cache["z"][0] = np.tanh(A[0] @ U) @ U.T
    return np.sum(A ** 2)


def key_at_run_time(U, X):
    cache = {}
    A = cache["X"] = X * 2.0
    cache["z"] = np.zeros_like(A)
    key = "X" if np.sum(U) > -1e9 else "z"
    cache[key][0] = np.tanh(A[0] @ U) @ U.T
    return np.sum(A ** 2)


@pytest.mark.parametrize("f", [same_key, stored_under_both, in_a_list_under_the_key,
                               moved_under_the_key, read_out_then_stored, from_another_dict,
                               key_at_run_time], ids=lambda f: f.__name__)
def test_the_array_the_name_holds_written(f):
    """Python's `A` sees the write: srcad follows it or refuses, never the stale value."""
    U, X = 0.5 * RNG.standard_normal((3, 4)), RNG.standard_normal((5, 3))
    try:
        value, (gU, gX) = srcad.value_and_grad(f, wrt=(0, 1))(U, X)
    except srcad.SrcadError:
        return
    assert value == pytest.approx(f(U, X), rel=1e-12)
    wU, wX = numerical_grad(f, (U, X), wrt=(0, 1))
    np.testing.assert_allclose(gU, wU, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gX, wX, rtol=1e-6, atol=1e-6)
