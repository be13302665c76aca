"""runtime.extremum_grad over the last axis in C (kernels_c/srcad_rowgrad.h): the gradient of
a max or min, bit for bit the numpy statements it replaces.

Each case computes extremum_grad twice, through the C runtime's extremum_grad_rows and with
the helper hidden (the numpy statements), and compares dtype, shape and bits (the sign of
zero included). Cases: float32 and float64; max and min; keepdims and not; axis -1 and
ndim-1; 1-D to 4-D, last axes 1..67 long; ties (two, many, a whole row); rows of -0.0/+0.0,
+-inf, NaN (a NaN row's max is NaN: nothing is equal to it, its gradient is zeros); g of
another dtype (cast first, as numpy's path does); and the cases the C refuses (a strided x, a
broadcast g, integer x, another axis), which must still give numpy's values. Then the
gradient of the softmax people write, through srcad.grad, fused and unfused, against torch.
"""

import contextlib
import itertools

import numpy as np
import pytest

import srcad
from srcad import build, runtime
from tests.kernel_threads import on_threads

try:
    build.runtime()
except build.CompilerUnavailable:
    pass
pytestmark = pytest.mark.skipif(build.c_helper("extremum_grad_rows") is None,
                                reason="the C runtime is not built (no compiler)")


@contextlib.contextmanager
def numpy_path():
    real = runtime.c_helper
    runtime.c_helper = lambda name: None
    try:
        yield
    finally:
        runtime.c_helper = real


def _same(a, b):
    return (a.dtype == b.dtype and a.shape == b.shape and
            np.isnan(a).tolist() == np.isnan(b).tolist() and
            np.where(np.isnan(a), 0, a).tobytes() == np.where(np.isnan(b), 0, b).tobytes())


def _both(g, out, x, axis, keepdims):
    calls = []
    real = runtime.c_helper

    def spy(name):
        fn = real(name)

        def counted(*a):
            calls.append(name)
            return fn(*a)
        return counted if fn is not None else None
    runtime.c_helper = spy
    try:
        got = runtime.extremum_grad(g, out, x, axis, keepdims)
    finally:
        runtime.c_helper = real
    with numpy_path(), np.errstate(all="ignore"):
        want = runtime.extremum_grad(g, out, x, axis, keepdims)
    return got, want, calls


def _rows(rng, L, dtype):
    """Rows with ties and special values, then random ones."""
    rows = [np.full(L, 2.0), np.zeros(L), -np.zeros(L), np.full(L, np.inf), np.full(L, -np.inf)]
    if L >= 2:
        r = rng.standard_normal(L)
        r[rng.integers(L)] = r[rng.integers(L)] = 9.0  # a tie (or one 9.0)
        rows.append(r)
        r = -np.abs(rng.standard_normal(L))
        r[0], r[-1] = -0.0, 0.0  # the max is a tie of -0.0 and +0.0
        rows.append(r)
        r = rng.standard_normal(L)
        r[L // 2] = np.nan
        rows.append(r)
        rows.append(np.where(np.arange(L) % 2, -0.0, 0.0))
    rows += [rng.standard_normal(L) * 10.0 ** rng.integers(-30, 30) for _ in range(4)]
    return np.array(rows).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduce", [np.max, np.min])
def test_bitwise_equal_to_numpy_statements(dtype, reduce):
    rng = np.random.default_rng(0)
    for L in list(range(1, 18)) + [31, 32, 33, 64, 67]:
        base = _rows(rng, L, dtype)
        for lead in [(), (base.shape[0],), (2, base.shape[0]), (1, 2, base.shape[0])]:
            x = np.broadcast_to(base, lead[:-1] + base.shape).copy() if lead else base[0].copy()
            x = x.reshape(lead + (L,)) if lead else x
            for keepdims, axis in itertools.product([True, False], [-1, x.ndim - 1]):
                with np.errstate(invalid="ignore"):
                    out = reduce(x, axis=axis, keepdims=keepdims)
                g = rng.standard_normal(out.shape).astype(dtype)
                got, want, calls = _both(g, out, x, axis, keepdims)
                assert calls == ["extremum_grad_rows"]
                assert _same(got, want), (L, lead, keepdims, axis)


def test_gradient_of_another_dtype_is_cast_first():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 9)).astype(np.float32)
    out = x.max(axis=-1)
    g = rng.standard_normal(5)  # float64: numpy's path casts it to float32 before dividing
    got, want, calls = _both(g, out, x, -1, False)
    assert calls and got.dtype == np.float32 and _same(got, want)


def test_cases_the_c_refuses_still_give_numpy_values():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 10)).astype(np.float32)
    strided = x[:, ::2]
    cases = [
        (np.ones((6, 1), np.float32), strided.max(-1, keepdims=True), strided, -1, True),
        (np.broadcast_to(np.float32(2), (6, 1)), x.max(-1, keepdims=True), x, -1, True),
        (np.ones(6), np.arange(60).reshape(6, 10).max(-1), np.arange(60).reshape(6, 10), -1,
         False),
        (np.ones((1, 10), np.float32), x.max(0, keepdims=True), x, 0, True),
        (np.float32(1.5), x.max(), x, None, False),
    ]
    for g, out, xx, axis, keepdims in cases:
        got, want, _ = _both(g, out, xx, axis, keepdims)
        assert np.array_equal(got, want) and got.dtype == want.dtype


def test_the_helper_refuses_what_it_does_not_handle():
    rows = build.c_helper("extremum_grad_rows")
    x = np.ones((3, 4), np.float32)
    one = np.ones(3, np.float32)
    assert rows(one, one, x).shape == (3, 4)
    for args in [(one, one, x[:, ::2]), (one[:2], one, x), (one, one.astype(np.float64), x),
                 (one, one, np.ones((3, 0), np.float32)), (one, one, np.float32(1)),
                 (one, one, x.astype(">f4"))]:
        with pytest.raises(TypeError):
            rows(*args)


@pytest.mark.parametrize("fuse", [False, True])
def test_softmax_gradient_through_srcad(fuse):
    torch = pytest.importorskip("torch")
    from srcad.zoo.transformer import softmax

    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3, 8, 8)).astype(np.float32)
    x[0, 0, 0, :2] = 5.0  # a tie at the max
    w = rng.standard_normal(x.shape).astype(np.float32)

    def f(x, w):
        return np.sum(softmax(x) * w)
    got = srcad.grad(f, fuse=fuse)(x, w)
    with numpy_path():
        want = srcad.grad(f, fuse=fuse)(x, w)
    assert _same(got, want)
    xt = torch.tensor(x, requires_grad=True)
    (torch.softmax(xt, -1) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(got, xt.grad.numpy(), rtol=1e-5, atol=1e-6)


def _add_both(acc, g, out, x, axis, keepdims):
    """extremum_grad_add through the C helper (asserted taken) and through numpy."""
    calls = []
    real = runtime.c_helper

    def spy(name):
        fn = real(name)

        def counted(*a):
            calls.append(len(a))
            return fn(*a)
        return counted if fn is not None else None
    runtime.c_helper = spy
    try:
        got = runtime.extremum_grad_add(acc, g, out, x, axis, keepdims)
    finally:
        runtime.c_helper = real
    with np.errstate(all="ignore"):
        want = acc + runtime.extremum_grad(g, out, x, axis, keepdims)
    return got, want, calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_added_form_is_the_sum_bit_for_bit(dtype):
    """acc + extremum_grad(...) in one pass: ties, signed zeros, infinities, NaN rows; acc
    with -0.0 (where numpy's sum with +0.0 gives +0.0), infinities and NaN."""
    rng = np.random.default_rng(4)
    for L in [1, 2, 7, 8, 9, 16, 33, 64, 67]:
        x = _rows(rng, L, dtype)
        x = np.stack([x, x[::-1]])  # (2, rows, L)
        acc = rng.standard_normal(x.shape).astype(dtype)
        acc[0, :, 0] = -0.0
        acc[1, :, -1] = np.inf
        acc[1, 0, :] = np.nan
        for keepdims in (True, False):
            with np.errstate(invalid="ignore"):
                out = x.max(axis=-1, keepdims=keepdims)
            g = rng.standard_normal(out.shape).astype(dtype)
            got, want, calls = _add_both(acc, g, out, x, -1, keepdims)
            assert calls == [4], calls
            assert got is not acc and _same(got, want), (L, keepdims)


def test_added_form_refusals_fall_back_to_numpy():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 10)).astype(np.float32)
    out = x.max(-1, keepdims=True)
    g = rng.standard_normal((6, 1)).astype(np.float32)
    for acc in (rng.standard_normal((6, 10)),  # float64: numpy promotes
                rng.standard_normal((1, 10)).astype(np.float32),  # broadcast
                rng.standard_normal((10, 6)).astype(np.float32).T,  # F order
                np.float32(2.0)):
        got = runtime.extremum_grad_add(acc, g, out, x, -1, True)
        want = acc + runtime.extremum_grad(g, out, x, -1, True)
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_fused_softmax_backward_uses_the_added_form():
    """fuse=True writes the softmax backward's `dz + extremum_grad(...)` as one call, and
    its gradient is fuse=False's bit for bit (a tie at the max, a -inf row entry)."""
    from srcad.zoo.transformer import softmax

    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 5, 9)).astype(np.float32)
    x[0, 0, 0, :3] = 4.0
    x[1, 2, 1, 4] = -np.inf
    w = rng.standard_normal(x.shape).astype(np.float32)

    def f(x, w):
        return np.sum(softmax(x) * w)
    g1, g0 = srcad.grad(f, fuse=True), srcad.grad(f, fuse=False)
    got, want = g1(x, w), g0(x, w)
    src = srcad.source(g1)
    if "fused_" in src:  # (a compiler built the kernels)
        assert "extremum_grad_add(" in src
    assert "extremum_grad_add" not in srcad.source(g0)
    assert _same(got, want)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_shared_by_srcads_threads_give_the_same_bits(dtype, n):
    """Above the kernels' size threshold the rows are shared by srcad's threads: the same bits
    as one thread and as numpy's statements, in both forms (threshold at 0, the choice off)."""
    rng = np.random.default_rng(6)
    x = np.concatenate([_rows(rng, 33, dtype)] * 9)  # (rows with ties, zeros, inf, NaN)
    acc = rng.standard_normal(x.shape).astype(dtype)
    with np.errstate(invalid="ignore"):
        out = x.max(axis=-1, keepdims=True)
    g = rng.standard_normal(out.shape).astype(dtype)
    fn = build.c_helper("extremum_grad_rows")
    one, one_add = fn(g, out, x), fn(g, out, x, acc)
    with on_threads(n):
        many, many_add = fn(g, out, x), fn(g, out, x, acc)
    got, want, _ = _both(g, out, x, -1, True)
    assert _same(many, one) and _same(many_add, one_add) and _same(one, want)
