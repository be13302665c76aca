"""Fused code's plain ops on srcad's threads (issue 25): sums over leading axes as the runtime's
`lead_sum` (kernels_c/srcad_colsum.h), copying reshapes as `reshaped` (its `c_copy`), and a
one-op chain over a large array as a kernel.

`lead_sum(x, axis)` stands for ``x.sum(axis=axis)`` with `axis` 0 or ``(0, ..., k-1)`` (a bias's
gradient, ``dh.sum(axis=(0, 1))``): each case holds the C runtime's result to numpy's bit for bit
(dtype, shape, the sign of zero, NaN where NaN): float32 and float64; 2-D to 4-D, every k;
kept sizes 2..1030 (numpy keeps C-contiguous columns in its inner loop there; one column it
sums pairwise, which the C refuses); rows of -0.0, +-inf, NaN, subnormals, magnitudes 1e-6 to
1e6; at one thread and at two and three with the size threshold at 0. Layouts and types it
does not handle (Fortran order, a strided view, integers, float16, a masked array, a Python
object with its own `.sum`) must give numpy's own answer. Then the gradients through
srcad.grad: fused code names `lead_sum`, bit for bit `fuse=False`'s, and a user's own name
`lead_sum` is left alone. `c_copy(x)` is numpy's C-order copy byte for byte (views of every
kind, six dtypes, 1-3 threads); `reshaped(x, shape)` is numpy's reshape, a view exactly where
numpy's is one.
"""

import re

import numpy as np
import pytest

import srcad
from srcad import build, runtime
from tests.kernel_threads import on_threads

try:
    build.runtime()
except build.CompilerUnavailable:
    pass
pytestmark = pytest.mark.skipif(build.c_helper("lead_sum") is None,
                                reason="the C runtime is not built (no compiler)")


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return (a.dtype == b.dtype and a.shape == b.shape and
            np.isnan(a).tolist() == np.isnan(b).tolist() and
            np.where(np.isnan(a), 0, a).tobytes() == np.where(np.isnan(b), 0, b).tobytes())


def _values(rng, shape, dtype, special: str):
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 7, shape)
    if special == "zeros":
        x.flat[::3] = -0.0
        x.flat[1::3] = 0.0
    elif special == "inf":
        x.flat[::11] = np.inf
        x.flat[5::13] = -np.inf
    elif special == "nan":
        x.flat[::17] = np.nan
    elif special == "subnormal":
        x *= np.finfo(dtype).smallest_normal
    return x.astype(dtype)


SHAPES = [(2, 2), (3, 5), (7, 2), (1, 9), (513, 3), (64, 300), (40, 1030), (2, 3, 33),
          (4, 1, 7), (3, 2, 2, 5), (8, 16, 130)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("special", ["plain", "zeros", "inf", "nan", "subnormal"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_lead_sum_is_numpys_sum_bit_for_bit(dtype, special, n):
    rng = np.random.default_rng(hash((np.dtype(dtype).name, special, n)) % 2**32)
    fn = build.c_helper("lead_sum")
    with on_threads(n), np.errstate(all="ignore"):
        for shape in SHAPES:
            x = _values(rng, shape, dtype, special)
            for k in range(1, x.ndim):
                axis = 0 if k == 1 else tuple(range(k))
                want = x.sum(axis=axis)
                assert _same(fn(x, k), want), (shape, k)
                assert _same(runtime.lead_sum(x, axis), want), (shape, k)


def test_floating_point_errors_follow_np_errstate_as_numpys_sum():
    fn = build.c_helper("lead_sum")
    x = np.array([[np.inf, 1.0], [-np.inf, 2.0]], np.float32)
    big = np.full((2, 3), 3e38, np.float32)
    for bad, what in [(x, "invalid"), (big, "over")]:
        with np.errstate(all="ignore", **{what: "raise"}):
            with pytest.raises(FloatingPointError):
                bad.sum(axis=0)
            with pytest.raises(FloatingPointError):
                fn(bad, 1)
        with np.errstate(all="ignore"):
            assert _same(fn(bad, 1), bad.sum(axis=0))
        with pytest.warns(RuntimeWarning, match=what):
            fn(bad, 1)


def test_a_column_of_negative_zeros_sums_to_positive_zero_as_numpy_has_it():
    x = np.full((5, 3), -0.0, np.float32)
    got = build.c_helper("lead_sum")(x, 1)
    assert _same(got, x.sum(axis=0)) and not np.signbit(got).any()


@pytest.mark.parametrize("case", ["fortran", "strided", "one_column", "int", "float16",
                                  "masked", "empty_rows"])
def test_cases_the_runtime_does_not_take_are_numpys_own(case):
    rng = np.random.default_rng(3)
    base = rng.standard_normal((6, 5, 4))
    x = {"fortran": np.asfortranarray(base), "strided": base[:, ::2],
         "one_column": base[:, :, :1], "int": (base * 10).astype(np.int64),
         "float16": base.astype(np.float16),
         "masked": np.ma.masked_array(base, mask=base > 1.0),
         "empty_rows": base[:0]}[case]
    fn = build.c_helper("lead_sum")
    if case == "empty_rows":  # (no rows: the identity, +0.0, in every kept column)
        assert _same(fn(x, 1), x.sum(axis=0))
    elif case != "masked":
        with pytest.raises(TypeError):
            fn(x, 1)
    for axis in (0, (0, 1)):
        got, want = runtime.lead_sum(x, axis), x.sum(axis=axis)
        assert type(got) is type(want)
        if case == "masked":
            assert np.ma.allequal(got, want) and (got.mask == want.mask).all()
        else:
            assert _same(got, want)


def test_an_object_with_its_own_sum_is_asked_itself():
    class Summable:
        def sum(self, axis=None):
            return ("summed", axis)

    assert runtime.lead_sum(Summable(), (0, 1)) == ("summed", (0, 1))


def dense_loss(x, W, b, V, c):
    h = np.tanh(x @ W + b)
    return np.sum((h @ V + c) ** 2)


def layer_norm_loss(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    y = xc / np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + 1e-5) * g + b
    return np.sum(y * y * 0.5)


def own_name(x, b):
    lead_sum = x + b
    return np.sum(lead_sum * lead_sum)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bias_and_gain_gradients_fused_are_the_unfused_bits(dtype):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 32, 24)).astype(dtype)
    W, V = (rng.standard_normal((24, 40)).astype(dtype), rng.standard_normal((40, 8)).astype(dtype))
    b, c = rng.standard_normal(40).astype(dtype), rng.standard_normal(8).astype(dtype)
    g, bb = rng.standard_normal(24).astype(dtype), rng.standard_normal(24).astype(dtype)
    for fn, args, wrt in [(dense_loss, (x, W, b, V, c), ("W", "b", "V", "c")),
                          (layer_norm_loss, (x, g, bb), ("g", "b"))]:
        fused = srcad.grad(fn, wrt=wrt, fuse=True)
        plain = srcad.grad(fn, wrt=wrt, fuse=False)
        for n in (1, 2):
            with on_threads(n):
                got = fused(*args)
            want = plain(*args)
            assert all(_same(a, w) for a, w in zip(got, want)), fn.__name__
        assert "lead_sum(" in srcad.source(fused), fn.__name__


def test_a_users_own_name_lead_sum_is_left_alone():
    rng = np.random.default_rng(5)
    x, b = rng.standard_normal((6, 7)), rng.standard_normal(7)
    fused = srcad.grad(own_name, wrt=("b",), fuse=True)
    assert _same(fused(x, b), srcad.grad(own_name, wrt=("b",), fuse=False)(x, b))
    assert "lead_sum(lead_sum" not in srcad.source(fused)


def _tanh_dot(z, w):
    return np.sum(np.tanh(z) * w)


def residual(x, y, w):
    z = x + y  # (one op: its value goes to another function)
    return _tanh_dot(z, w)


def test_a_one_op_chain_over_a_large_array_is_a_kernel_and_a_small_one_is_not():
    rng = np.random.default_rng(9)
    for rows, kernel in [(512, True), (64, False)]:  # (65,536 elements: the threads' line)
        x, y = (rng.standard_normal((rows, 128)).astype(np.float32) for _ in range(2))
        w = rng.standard_normal(128).astype(np.float32)
        fused = srcad.grad(residual, wrt=("x", "w"), fuse=True)
        with on_threads(2):
            got = fused(x, y, w)
        want = srcad.grad(residual, wrt=("x", "w"), fuse=False)(x, y, w)
        assert all(_same(a, b) for a, b in zip(got, want))
        src = srcad.source(fused)
        assert (re.search(r"z = fused_add_\w+\(x, y\)", src) is not None) == kernel, src


def _layouts(rng, cast=lambda a: a):
    """Views of every kind a reshape meets: transposes, reversed axes, steps, offsets."""
    base = cast(rng.standard_normal((6, 5, 4, 7)))
    yield base.transpose(0, 2, 1, 3)
    yield base.transpose(3, 1, 0, 2)
    yield base[:, ::-1, 1:, ::2]
    yield base[1:5, :, ::3].transpose(1, 0, 2, 3)
    yield np.asfortranarray(base)
    yield base.transpose(0, 2, 1, 3)[..., :1]
    yield base
    yield base[:, 2]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int16, np.uint8,
                                   np.bool_])
def test_c_copy_is_numpys_c_order_copy(dtype, n):
    rng = np.random.default_rng(12)
    fn = build.c_helper("c_copy")
    with on_threads(n):
        for x in _layouts(rng, lambda a: (a * 50).astype(dtype) if dtype is not np.bool_
                          else a > 0):
            got = fn(x)
            assert got.flags.c_contiguous and got.dtype == x.dtype and got.shape == x.shape
            assert got.tobytes() == np.ascontiguousarray(x).tobytes()
    with pytest.raises(TypeError):
        fn(np.array([[1, "a"], [None, 2.0]], dtype=object).T)


@pytest.mark.skipif("copy" not in __import__("inspect").signature(np.reshape).parameters,
                    reason="numpy < 2.1: reshaped is numpy's own reshape")
def test_reshaped_is_numpys_reshape_a_view_where_numpys_is_a_view():
    rng = np.random.default_rng(13)
    old = runtime._COPY_MIN
    runtime._COPY_MIN = 0  # (every array, not only the large ones)
    try:
        with on_threads(2):
            for v in _layouts(rng):
                for shape in [(-1,), (v.shape[0], -1), v.shape[:1] + (1,) + v.shape[1:],
                              (-1, v.shape[-1]), v.shape[:-2] + (v.shape[-2] * v.shape[-1],)]:
                    want = np.reshape(v, shape)
                    got = runtime.reshaped(v, shape)
                    assert got.shape == want.shape and got.tobytes() == want.tobytes()
                    assert np.shares_memory(got, v) == np.shares_memory(want, v), \
                        (v.strides, shape)
    finally:
        runtime._COPY_MIN = old


def heads(h):
    B, H, T, D = h.shape
    return np.sum(np.tanh(np.reshape(np.transpose(h, (0, 2, 1, 3)), (B, T, H * D))) ** 2)


def test_heads_merged_back_fused_are_the_unfused_bits():
    rng = np.random.default_rng(14)
    h = rng.standard_normal((4, 4, 64, 64)).astype(np.float32)
    fused = srcad.grad(heads, fuse=True)
    with on_threads(2):
        got = fused(h)
    assert _same(got, srcad.grad(heads, fuse=False)(h))
    assert "reshaped(" in srcad.source(fused)
