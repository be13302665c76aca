"""The seed's 1.0, cast to an adjoint's numpy dtype, folds away (srcad/transform/specialise.py
`_times_one_is`): ``np.float32(1.0) * probe`` -- and ``np.broadcast_to(np.float32(1.0), S) *
y`` with y of shape S -- is ``probe``, not a pass over it into a new array (issue 25: 0.17 ms
of the large Transformer block's step, on the loss ``np.sum(y * probe)``).

x * 1 is x for every float (-0.0, inf, NaN included), so the fold holds only where the product
keeps the array's dtype: np.float32(1.0) times a float16 array is float32 (numpy 2's
promotion), times an integer array float64 -- those stay. The gradients must be the unfused
code's bits, the caller's arrays never written (an adjoint that is now the caller's own array
is accumulated into with `+=` later in some programs) and never handed back as a gradient.
"""

import numpy as np
import pytest

import srcad

pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # (inf, NaN)


def dot(x, p):
    return np.sum(x * p)


def twice(x, p, q):
    return np.sum(x * p) + np.sum(x * q) + np.sum(x * p)


def chained(x, p, q):
    y = x * p
    return np.sum(y) + np.sum(np.tanh(y) * q)


def _special(rng, shape, dtype):
    a = rng.standard_normal(shape)
    a.flat[::5] = -0.0
    a.flat[1::7] = np.inf
    a.flat[2::11] = np.nan
    return a.astype(dtype)


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("fuse", [False, True])
def test_the_gradient_of_a_dot_with_a_probe_is_the_probe_without_a_pass(dtype, fuse):
    rng = np.random.default_rng(1)
    x, p = _special(rng, (16, 8), dtype), _special(rng, (16, 8), dtype)
    keep = p.copy()
    g = srcad.grad(dot, wrt="x", fuse=fuse)
    dx = g(x, p)
    assert _same(dx, p) and not np.shares_memory(dx, p) and _same(p, keep)
    src = srcad.source(g)
    assert "(1.0)" not in src, src  # (no np.float32(1.0) * p: the gradient is p itself)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("fn", [twice, chained])
def test_folded_adjoints_accumulate_without_writing_the_callers_arrays(fn, fuse, dtype):
    rng = np.random.default_rng(2)
    x, p, q = (_special(rng, (32, 24), dtype) for _ in range(3))
    keep = [a.copy() for a in (x, p, q)]
    got = srcad.grad(fn, wrt=("x", "p", "q"), fuse=fuse)(x, p, q)
    want = srcad.grad(fn, wrt=("x", "p", "q"), fuse=False, mode="tape")(x, p, q)
    assert all(_same(a, b) for a, b in zip(got, want))
    assert all(_same(a, b) for a, b in zip((x, p, q), keep))
    assert not any(np.shares_memory(a, b) for a in got for b in (x, p, q))


def test_a_product_that_changes_the_dtype_is_kept():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    for p in (rng.integers(-3, 3, (6, 5)).astype(np.int32),
              rng.standard_normal((6, 5)).astype(np.float16)):
        g = srcad.grad(dot, wrt="x")
        got = g(x, p)
        want = srcad.grad(dot, wrt="x", mode="tape")(x, p)
        assert _same(got, want) and got.dtype == np.float32


def scalar_dot(x, p):
    return np.sum(x * p) * 2.0


def test_a_zero_d_value_keeps_its_type():
    """np.float32(1.0) times a 0-d array is a numpy scalar: the product stays, and the value
    and gradient are the unfused tape's, types included."""
    x, p = np.array(1.5, np.float32), np.array(-2.0, np.float32)
    got = srcad.value_and_grad(scalar_dot, wrt=("x", "p"))(x, p)
    want = srcad.value_and_grad(scalar_dot, wrt=("x", "p"), mode="tape")(x, p)
    assert type(got[0]) is type(want[0]) and got[0] == want[0]
    assert all(type(a) is type(b) and _same(a, b) for a, b in zip(got[1], want[1]))
