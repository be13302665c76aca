"""The call's fast path (srcad/transformed.py `__call__`): a call whose arguments have the
shapes, dtypes and layouts of an earlier call goes straight to that call's generated code,
looked up by a key the C runtime reads from the arrays (`array_key`, kernels_c/srcad_guards.h)
or, for other arguments, by the Python key. Each case below would get another call's
specialisation -- a wrong gradient or a crash -- if the key confused them."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.build import c_helper


def loss(W, x):
    return np.sum(np.tanh(x @ W) ** 2)


def by_hand(W, x):
    h = np.tanh(x @ W)
    return x.T @ (2 * h * (1 - h * h))


def check(g, W, x):
    got = g(W, x)
    want = by_hand(np.asarray(W), np.asarray(x))
    assert got.shape == np.shape(W) and got.dtype == np.asarray(W).dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if got.dtype == np.float32 else 1e-12)
    return got


@pytest.fixture
def arrays():
    rng = np.random.default_rng(0)
    return rng.standard_normal((4, 3)), rng.standard_normal((5, 4))


def test_calls_that_differ_in_one_fact_each_get_their_own_code(arrays):
    W, x = arrays
    g = srcad.grad(loss)
    variants = [
        (W, x),
        (W.astype(np.float32), x.astype(np.float32)),            # dtype
        (W, x[:3]),                                               # shape
        (np.asfortranarray(W), x),                                # layout
        (W[::-1], x),                                             # a strided view
        (W.astype(W.dtype.newbyteorder()), x),                    # byte order
        (W, x),                                                   # back to the first
    ]
    for _ in range(2):  # (the second round: every key seen before, all from the fast path)
        for Wv, xv in variants:
            check(g, Wv, xv)


def test_a_repeated_call_is_bitwise_the_first(arrays):
    W, x = arrays
    g = srcad.grad(loss)
    first = g(W, x)
    for _ in range(3):
        assert g(W, x).tobytes() == first.tobytes()
        assert g(W.copy(), x.copy()).tobytes() == first.tobytes()


def scale(x, a, n):
    for _ in range(n):
        x = x * a
    return np.sum(x)


def test_scalars_and_ints_beside_arrays_keep_their_own_keys():
    x = np.arange(3.0)
    g = srcad.grad(scale)
    for n in (1, 2, 3, 2, 1):
        assert g(x, 2.0, n).tolist() == [2.0 ** n] * 3
    # a 0-d array and a numpy scalar in the same place
    assert g(x, np.array(3.0), 2).tolist() == [9.0] * 3
    assert g(x, np.float64(3.0), 2).tolist() == [9.0] * 3
    assert g(x, np.array(3.0), 2).tolist() == [9.0] * 3


class Tagged(np.ndarray):
    pass


def test_a_subclass_is_not_taken_for_a_plain_array(arrays):
    W, x = arrays
    g = srcad.grad(loss)
    check(g, W, x)
    check(g, W.view(Tagged), x)
    check(g, W, x)


@pytest.mark.skipif(c_helper("array_key") is None, reason="needs the C runtime")
def test_array_key_reads_every_fact_of_the_python_key():
    key = c_helper("array_key")
    a = np.ones((4, 3))
    assert key((a, a)) == key((np.zeros((4, 3)), np.empty((4, 3))))
    distinct = [(a,), (a.T,), (a[:2],), (np.ones(12),), (a.astype(np.float32),),
                (a.astype(a.dtype.newbyteorder()),), (np.asfortranarray(a),), (a, a), ()]
    keys = [key(v) for v in distinct]
    assert len(set(keys)) == len(keys)
    assert key((np.ones((3, 4)).T,)) == key((np.asfortranarray(a),))  # (same facts)
    for other in (1.0, np.float64(1.0), a.view(Tagged), np.zeros(2, "i4,f8"),
                  np.zeros(2, "M8[s]"), [1.0], None):
        assert key((a, other)) is None
