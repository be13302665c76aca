"""Row reductions of the fused kernels' runtime, bit for bit against numpy.

The row kernels (issue 15 item 3) reduce over the last axis inside the kernel; they may do so
only with numpy's own summation order (its pairwise sum: kernels_c/srcad_kernels.h,
`srcad_row_sum_*`). These tests hold the C reductions, exposed as the runtime's
``row_reduce(a, 'sum' | 'mean')``, to ``np.sum`` / ``np.mean(..., axis=-1, keepdims=True)``
byte for byte: every row length from 1 to 1000 (each branch of the pairwise recursion and
each remainder modulo 8), long rows (several recursion levels, past numpy's buffer size),
float32 and float64, values spread over many magnitudes (so that a different order gives
other bits: the tests check that it would), and rows with NaN, +-inf, -0.0 and subnormals.
"""

import numpy as np
import pytest

build = pytest.importorskip("srcad.build")


@pytest.fixture(scope="module")
def rt():
    try:
        return build.runtime()
    except (build.CompilerUnavailable, build.BuildFailed) as e:  # pragma: no cover
        pytest.skip(f"no C runtime: {e}")


def _rows(rng, n_rows, length, dtype):
    # magnitudes from 1e-4 to 1e4 with both signs: an order change shows in the low bits
    mag = 10.0 ** rng.uniform(-4, 4, (n_rows, length))
    return (rng.standard_normal((n_rows, length)) * mag).astype(dtype)


def _same(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_length_to_1000(rt, dtype):
    rng = np.random.default_rng(15)
    bad = []
    for length in range(1, 1001):
        x = _rows(rng, 3, length, dtype)
        for what, ref in (("sum", np.sum), ("mean", np.mean)):
            got = rt.row_reduce(x, what)
            want = ref(x, axis=-1, keepdims=True)
            if not _same(got, want):
                bad.append((what, length))
    assert not bad, f"differs from numpy at {bad[:10]} ({len(bad)} in all)"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("length", [1023, 1024, 1025, 4096, 8191, 8192, 8193, 20000, 65537])
def test_long_rows(rt, dtype, length):
    x = _rows(np.random.default_rng(length), 4, length, dtype)
    assert _same(rt.row_reduce(x, "sum"), np.sum(x, axis=-1, keepdims=True))
    assert _same(rt.row_reduce(x, "mean"), np.mean(x, axis=-1, keepdims=True))


def test_a_plain_running_sum_would_differ(rt):
    """The data is hard enough that summation order matters (the test above can fail)."""
    x = _rows(np.random.default_rng(0), 64, 777, np.float32)
    naive = np.zeros((64, 1), np.float32)
    for j in range(x.shape[1]):
        naive[:, 0] += x[:, j]
    assert not _same(naive, np.sum(x, axis=-1, keepdims=True))
    assert _same(rt.row_reduce(x, "sum"), np.sum(x, axis=-1, keepdims=True))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("length", [1, 5, 8, 9, 64, 129, 300, 1000])
def test_special_values(rt, dtype, length):
    rng = np.random.default_rng(length)
    x = _rows(rng, 9, length, dtype)
    tiny = np.finfo(dtype).smallest_subnormal
    x[0] = -0.0  # numpy: +0.0 (its sum starts from the identity +0)
    x[1, length // 2] = np.nan
    x[2, 0] = np.inf
    x[3, -1] = -np.inf
    x[4, 0], x[4, -1] = np.inf, -np.inf  # NaN when length > 1
    x[5] = tiny * rng.integers(-3, 4, length)
    x[6] = np.finfo(dtype).max / 2  # overflows to inf
    x[7, ::2] = 0.0
    x[8] = 1.0
    with np.errstate(all="ignore"):
        for what, ref in (("sum", np.sum), ("mean", np.mean)):
            got, want = rt.row_reduce(x, what), ref(x, axis=-1, keepdims=True)
            assert _same(got, want), (what, np.flatnonzero(got.tobytes() != want.tobytes()))


def test_shapes_and_refusals(rt):
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    assert _same(rt.row_reduce(x, "sum"), x.sum(-1, keepdims=True))
    assert _same(rt.row_reduce(x[0, 0], "mean"), x[0, 0].mean(-1, keepdims=True))
    with pytest.raises(TypeError):
        rt.row_reduce(x[:, :, ::2], "sum")  # a strided row: the caller must fall back
    with pytest.raises(TypeError):
        rt.row_reduce(x.astype(np.int64), "sum")
    with pytest.raises(TypeError):
        rt.row_reduce(np.zeros((3, 0)), "sum")
    with pytest.raises(ValueError):
        rt.row_reduce(x, "max")
