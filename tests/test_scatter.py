"""runtime.unindex's C scatter (kernels_c/srcad_scatter.h): the gradient of `table[index]`
equals np.add.at's bit for bit -- repeated indices added in the same order -- and every case
it does not handle still goes to np.add.at."""

from __future__ import annotations

import numpy as np
import pytest

from srcad import build, runtime

pytestmark = pytest.mark.skipif(build.scatter_add_rows() is None,
                                reason="the C runtime (srcad._kernels) is not here")


def reference(g, shape, dtype, index):
    out = np.zeros(shape, dtype)
    np.add.at(out, index, g)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_bitwise_against_add_at(seed):
    rng = np.random.default_rng(seed)
    for t in range(400):
        dt = (np.float32, np.float64)[t % 2]
        shape = tuple(int(s) for s in rng.integers(1, 7, rng.integers(1, 4)))
        ishape = tuple(int(s) for s in rng.integers(0, 30, rng.integers(1, 3)))
        idx = rng.integers(-shape[0], shape[0], ishape)
        idx = idx.astype(np.int32) if t % 3 == 1 else (idx % shape[0]).astype(np.uint8) \
            if t % 3 == 2 else idx
        scale = 10.0 ** rng.integers(-8, 9, ishape + shape[1:])
        g = np.asarray((rng.standard_normal(ishape + shape[1:]) * scale).astype(dt))
        if t % 7 == 0:
            g[...] = -0.0
        if t % 11 == 0 and g.size:
            g.flat[0] = (np.nan, np.inf, -np.inf)[t % 3]
        got = runtime.unindex(g, np.zeros(shape, dt), idx)
        assert got.tobytes() == reference(g, shape, dt, idx).tobytes(), (shape, ishape)


def test_the_order_is_add_ats():
    """The data are order-sensitive (a pairwise or sorted sum gives 0): both give 1."""
    g = np.array([1e8, 1.0, -1e8, 1.0] * 50, np.float32)
    idx = np.zeros(200, np.int64)
    got = runtime.unindex(g, np.zeros(1, np.float32), idx)
    assert got[0] == reference(g, (1,), np.float32, idx)[0] == 1.0 != np.sum(g)
    rows = np.stack([g, -g], axis=1)
    got = runtime.unindex(rows, np.zeros((1, 2), np.float32), idx)
    assert got.tobytes() == reference(rows, (1, 2), np.float32, idx).tobytes()


def test_out_of_range_raises_before_adding():
    with pytest.raises(IndexError, match="out of bounds"):
        runtime.unindex(np.ones((3, 2)), np.zeros((2, 2)), np.array([0, 2, 1]))
    with pytest.raises(IndexError):
        runtime.unindex(np.ones(2), np.zeros(2), np.array([0, -3]))


@pytest.mark.parametrize("case", ["tuple", "bool", "broadcast", "strided", "int", "mixed"])
def test_other_cases_go_to_add_at(case):
    rng = np.random.default_rng(1)
    x = np.zeros((5, 4))
    if case == "tuple":
        index, g = (np.array([0, 1, 1]), np.array([2, 3, 2])), rng.standard_normal(3)
    elif case == "bool":
        index, g = np.array([True, False, True, False, True]), rng.standard_normal((3, 4))
    elif case == "broadcast":
        index, g = np.array([0, 0, 3]), rng.standard_normal(4)  # one row for every index
    elif case == "strided":
        index, g = np.array([4, 0, 4]), rng.standard_normal((4, 3)).T
    elif case == "int":
        x = np.zeros((5, 4), np.int64)
        index, g = np.array([1, 1]), rng.integers(0, 9, (2, 4))
    else:
        index, g = np.array([2, 2]), rng.standard_normal((2, 4)).astype(np.float32)
    got = runtime.unindex(g, x, index)
    want = np.zeros(x.shape, np.result_type(x))
    np.add.at(want, index, g.astype(want.dtype) if case == "mixed" else g)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_embedding_gradient_through_grad():
    import srcad

    rng = np.random.default_rng(0)
    table = rng.standard_normal((11, 4)).astype(np.float32)
    tokens = rng.integers(0, 11, (3, 7))
    w = rng.standard_normal((3, 7, 4)).astype(np.float32)

    def f(table, tokens, w):
        return np.sum(table[tokens] * w)

    got = srcad.grad(f)(table, tokens, w)
    want = reference(w, table.shape, np.float32, tokens)
    assert got.tobytes() == want.tobytes()
    tape = srcad.grad(f, mode="tape")(table, tokens, w)
    assert tape.tobytes() == want.tobytes()
