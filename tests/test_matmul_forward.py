"""Matmul's forward as one 2-D GEMM (issue 15, item 2): ``x @ W`` with x (B..., M, K)
C-contiguous and W (K, N) runs as ``(x.reshape(B*M, K) @ W).reshape((B..., M, N))`` where
`srcad.runtime_linalg.matmul_forward_form` says so -- only for shapes where that one GEMM is
bitwise equal to numpy's loop of B GEMMs (which depends on the BLAS's kernels: this file holds
every rewritten shape to it, over a grid, at one BLAS thread and at the default count).

Source mode (the forward sweep, forward mode's primal and tangents) and tape mode run the same
form, so they agree bit for bit; values and gradients are checked against numpy's own product,
float64 einsum and torch.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pytest

import srcad
from srcad.runtime_linalg import matmul_forward_form
from srcad.testing import check_consistency, check_grads, check_jvp

torch = pytest.importorskip("torch")


def _form(a, b):
    return matmul_forward_form(a.shape, b.shape, a.dtype, b.dtype, a.flags.c_contiguous,
                               b.flags.c_contiguous)


def _run(form, a, b):
    return eval(f"lambda a, b: {form}")(a, b)  # (our own expression)


@contextlib.contextmanager
def _blas_threads(n):
    """The BLAS limited to n threads (threadpoolctl, a bench extra), or unchanged without it."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield False
        return
    with threadpool_limits(n):
        yield True


# -- which shapes are rewritten ----------------------------------------------------------------

def test_the_block_shapes_are_one_gemm():
    f32 = np.float32
    assert matmul_forward_form((8, 64, 128), (128, 512), f32, f32) == \
        "(a.reshape(512, 128) @ b).reshape((8, 64, 512))"
    assert matmul_forward_form((8, 128, 2048), (2048, 512), f32, f32) == \
        "(a.reshape(1024, 2048) @ b).reshape((8, 128, 512))"
    assert matmul_forward_form((2, 3, 64, 128), (128, 128), f32, f32, names=("x", "w")) == \
        "(x.reshape(384, 128) @ w).reshape((2, 3, 64, 128))"


@pytest.mark.parametrize("a_shape,b_shape,dtypes,c_order,why", [
    ((64, 128), (128, 512), "ff", True, "2-D @ 2-D is one GEMM already"),
    ((8, 64, 128), (8, 128, 512), "ff", True, "a batch on both sides"),
    ((8, 64, 128), (1, 128, 512), "ff", True, "b with a batch of 1s"),
    ((8, 64, 128), (128,), "ff", True, "a vector b"),
    ((128,), (128, 512), "ff", True, "a vector a"),
    ((8, 64, 128), (128, 512), "fd", True, "mixed dtypes"),
    ((8, 64, 128), (128, 512), "ii", True, "integers (no BLAS)"),
    ((8, 64, 128), (128, 512), "ff", False, "a not C-contiguous: the reshape would copy"),
    ((8, 1, 128), (128, 512), "ff", True, "M = 1: numpy runs a GEMV per row"),
    ((8, 64, 128), (128, 1), "ff", True, "N = 1: numpy runs a GEMV per matrix"),
    ((1, 64, 128), (128, 512), "ff", True, "a batch of one"),
    ((8, 64, 128), (128, 8), "ff", True, "N = 8: a small-matrix kernel sums differently"),
    ((8, 64, 128), (128, 100), "ff", True, "N not a multiple of 16"),
    ((8, 64, 128), (128, 0), "ff", True, "N = 0"),
    ((8, 0, 128), (128, 512), "ff", True, "M = 0"),
    ((8, 64, 0), (0, 512), "ff", True, "K = 0"),
    ((8, 8, 512), (512, 64), "ff", True, "K > 256 with small matrices: summed differently"),
    ((16, 32, 64), (64, 64), "ff", True, "small matrices: the batch is faster (and bitwise)"),
    ((2, 8, 16), (16, 16), "ff", True, "tiny matrices: the batch is faster"),
])
def test_kept_as_numpy_computes_it(a_shape, b_shape, dtypes, c_order, why):
    kinds = {"f": np.float32, "d": np.float64, "i": np.int64}
    assert matmul_forward_form(a_shape, b_shape, kinds[dtypes[0]], kinds[dtypes[1]],
                               c_order) is None, why


def test_kept_for_a_fortran_order_w():
    """x @ W.T (W.T in Fortran order): measured not bitwise for small products, so kept."""
    f32 = np.float32
    assert matmul_forward_form((8, 64, 128), (128, 512), f32, f32, True, False) is None
    x, w = np.ones((8, 64, 128), f32), np.ones((512, 128), f32)
    assert _form(x, w.T) is None and _form(x, np.ascontiguousarray(w.T)) is not None


# -- bitwise equal to numpy's batched product, wherever it is rewritten ------------------------

GRID_BATCH = [(2,), (8,), (2, 3)]
GRID_M = [1, 2, 7, 16, 64, 128]
GRID_K = [1, 3, 16, 64, 128, 256, 300, 512, 1024]
GRID_N = [1, 2, 8, 16, 64, 128, 256, 513]


def _grid(cap):
    for batch, M, K, N in itertools.product(GRID_BATCH, GRID_M, GRID_K, GRID_N):
        if int(np.prod(batch)) * M * K * N <= cap:
            yield batch, M, K, N


def _check_grid(dtype, cap):
    rng = np.random.default_rng(0)
    rewritten = 0
    for batch, M, K, N in _grid(cap):
        a = rng.standard_normal(batch + (M, K)).astype(dtype)
        b = rng.standard_normal((K, N)).astype(dtype)
        form = _form(a, b)
        if form is None:
            continue
        rewritten += 1
        got, want = _run(form, a, b), a @ b
        assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
        assert np.array_equal(got, want), (
            f"{batch + (M, K)} @ {(K, N)} {np.dtype(dtype).name}: one GEMM differs from numpy's "
            f"batched product (max rel {np.max(np.abs(got - want)) / np.max(np.abs(want)):.1e})"
            f" -- this BLAS sums it differently: narrow _one_gemm_keeps_bits")
    return rewritten


@pytest.mark.parametrize("threads", [1, None], ids=["1 thread", "default threads"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_rewritten_shapes_are_bitwise_equal_to_numpy(dtype, threads):
    ctx = _blas_threads(threads) if threads else contextlib.nullcontext(True)
    with ctx as limited:
        if threads and not limited:
            pytest.skip("threadpoolctl is not installed")
        assert _check_grid(dtype, 1.6e7) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, None], ids=["1 thread", "default threads"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_rewritten_shapes_are_bitwise_equal_to_numpy_large(dtype, threads):
    ctx = _blas_threads(threads) if threads else contextlib.nullcontext(True)
    with ctx as limited:
        if threads and not limited:
            pytest.skip("threadpoolctl is not installed")
        _check_grid(dtype, 6e7)


# -- the modes run it --------------------------------------------------------------------------

def mm_loss(a, b, p):
    return np.sum((a @ b) * p)


def mlp_loss(x, w1, w2, p):
    h = np.tanh(x @ w1)
    return np.sum((h @ w2) * p)


def _args(a_shape, b_shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(a_shape).astype(dtype)
    b = rng.standard_normal(b_shape).astype(dtype)
    p = rng.standard_normal(np.shape(a @ b)).astype(dtype)
    return a, b, p


SHAPES = [((2, 64, 128), (128, 128)), ((2, 2, 64, 128), (128, 128)), ((2, 32, 256), (256, 128)),
          ((8, 64, 128), (128, 512))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("a_shape,b_shape", SHAPES)
def test_source_runs_one_gemm_and_agrees_with_tape_bitwise(a_shape, b_shape, dtype):
    a, b, p = _args(a_shape, b_shape, dtype)
    form = _form(a, b)
    assert form is not None
    g = srcad.value_and_grad(mm_loss, wrt=(0, 1))
    value, grads = g(a, b, p)
    src = srcad.source(g)
    rows, K = int(np.prod(a_shape[:-1])), a_shape[-1]
    assert f"(a.reshape({rows}, {K}) @ b).reshape(" in src, src
    tv, tg = srcad.value_and_grad(mm_loss, wrt=(0, 1), mode="tape")(a, b, p)
    assert np.array_equal(value, tv) and all(np.array_equal(s, t) for s, t in zip(grads, tg))
    # the value is numpy's own, bit for bit (the rewrite keeps every output element's bits)
    assert value == mm_loss(a, b, p)


def test_tape_mode_runs_the_form(monkeypatch):
    """Tape mode computes the product through the row's form (the same numpy calls as the
    generated code), not numpy's batched loop: seen by counting 2-D products."""
    from srcad import tape as tape_mod

    calls = []
    real = tape_mod._forward_form

    def spy(op, values):
        r = real(op, values)
        if op.name == "matmul":
            calls.append(r is not tape_mod._NO_FORM)
        return r

    monkeypatch.setattr(tape_mod, "_forward_form", spy)
    a, b, p = _args((8, 64, 128), (128, 128))
    srcad.grad(mm_loss, wrt=(0, 1), mode="tape")(a, b, p)
    a2, b2, p2 = _args((64, 128), (128, 128))
    srcad.grad(mm_loss, wrt=(0, 1), mode="tape")(a2, b2, p2)
    assert calls == [True, False]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_chain_of_products_source_tape_and_numpy(dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 64, 128)).astype(dtype)
    w1 = rng.standard_normal((128, 256)).astype(dtype)
    w2 = rng.standard_normal((256, 128)).astype(dtype)
    p = rng.standard_normal((4, 64, 128)).astype(dtype)
    g = srcad.value_and_grad(mlp_loss, wrt=(0, 1, 2))
    v, grads = g(x, w1, w2, p)
    src = srcad.source(g)
    assert "(x.reshape(256, 128) @ w1)" in src and ".reshape(256, 256) @ w2)" in src, src
    tv, tg = srcad.value_and_grad(mlp_loss, wrt=(0, 1, 2), mode="tape")(x, w1, w2, p)
    assert v == tv == mlp_loss(x, w1, w2, p)
    assert all(np.array_equal(s, t) for s, t in zip(grads, tg))
    ts = [torch.tensor(t, requires_grad=True) for t in (x, w1, w2)]
    loss = torch.sum((torch.tanh(ts[0] @ ts[1]) @ ts[2]) * torch.tensor(p))
    loss.backward()
    tol = 1e-5 if dtype == "float32" else 1e-12
    for s, t in zip(grads, ts):
        ref = t.grad.numpy()
        assert np.max(np.abs(s - ref)) / np.max(np.abs(ref)) < tol


def test_not_contiguous_operand_keeps_numpy_product():
    """A transposed view of x: its reshape would copy, so the batched product stays; source
    and tape still agree, and the gradient is right."""
    rng = np.random.default_rng(2)
    base = rng.standard_normal((64, 2, 128))

    def f(a, b, p):
        return np.sum((np.transpose(a, (1, 0, 2)) @ b) * p)

    b = rng.standard_normal((128, 128))
    p = rng.standard_normal((2, 64, 128))
    g = srcad.grad(f, wrt=(0, 1))
    src = g(base, b, p)
    text = srcad.source(g)
    assert ".reshape(128, 128) @ b)" not in text, text
    tape = srcad.grad(f, wrt=(0, 1), mode="tape")(base, b, p)
    assert all(np.array_equal(s, t) for s, t in zip(src, tape))
    at = np.transpose(base, (1, 0, 2))
    da = np.transpose(np.einsum("bmn,kn->bmk", p, b), (1, 0, 2))
    db = np.einsum("bmk,bmn->kn", at, p)
    assert np.allclose(src[0], da, rtol=1e-12, atol=1e-12)
    assert np.allclose(src[1], db, rtol=1e-12, atol=1e-10)


def test_non_contiguous_argument_respecialises():
    """The same shapes, first C-contiguous then a strided view: a new specialisation (the key
    holds the memory order), so the view never meets a reshape written for a contiguous x."""
    a, b, p = _args((2, 64, 128), (128, 128), "float64")
    g = srcad.grad(mm_loss, wrt=(0, 1))
    first = g(a, b, p)
    view = np.asfortranarray(a)
    assert not view.flags.c_contiguous
    second = g(view, b, p)
    tape = srcad.grad(mm_loss, wrt=(0, 1), mode="tape")(view, b, p)
    assert all(np.array_equal(s, t) for s, t in zip(second, tape))
    assert all(np.allclose(s, f) for s, f in zip(second, first))


# -- forward mode, second order ----------------------------------------------------------------

@pytest.mark.parametrize("a_shape,b_shape", SHAPES[:3])
def test_jvp_runs_one_gemm_for_primal_and_tangents(a_shape, b_shape):
    a, b, p = _args(a_shape, b_shape, "float64")
    rng = np.random.default_rng(4)
    va, vb = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    out, t = srcad.jvp(mm_loss, (a, b, p), (va, vb, np.zeros_like(p)))
    src = srcad.source(srcad.api._JVP_CACHE[(mm_loss, ())])
    rows, K = int(np.prod(a_shape[:-1])), a_shape[-1]
    # the primal and both tangent terms (a_dot has a's shape, b_dot b's) are one GEMM each
    for term in ("a.reshape({}, {}) @ b)", "a_dot.reshape({}, {}) @ b)",
                 "a.reshape({}, {}) @ b_dot)"):
        assert src.count("(" + term.format(rows, K)) == 1, (term, src)
    assert out == mm_loss(a, b, p)
    want = np.sum((va @ b + a @ vb) * p)
    assert abs(t - want) <= 1e-12 * max(1.0, abs(want))
    check_jvp(mm_loss, (a, b, p))
    check_consistency(mm_loss, (a, b, p))


def chain(a, b, p):
    return np.sum(np.tanh(a @ b) * p)


def test_second_order_through_the_forward_form():
    """jvp(grad f) and vjp(grad f) differentiate generated code whose forward holds the
    reshapes: a Hessian-vector product against central differences of the gradient, and the
    pullback of grad f along a random direction (<pullback(u), v> = d<grad f, u>/dv)."""
    a, b, p = _args((2, 64, 128), (128, 128), "float64")
    a, b = a * 0.1, b * 0.1  # (tanh away from saturation)
    rng = np.random.default_rng(5)
    va, vb = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    eps = 1e-6
    grad = srcad.grad(chain, wrt=1)
    grad(a, b, p)
    assert "(a.reshape(128, 128) @ b).reshape((2, 64, 128))" in srcad.source(grad)
    _, h = srcad.jvp(grad, (a, b, p), (va, vb, np.zeros_like(p)))
    num = (grad(a + eps * va, b + eps * vb, p) - grad(a - eps * va, b - eps * vb, p)) / (2 * eps)
    assert np.max(np.abs(h - num)) / np.max(np.abs(num)) < 1e-6
    u = rng.standard_normal(b.shape)
    _, pullback = srcad.vjp(grad, a, b, p)
    ga, gb = pullback(u)[:2]
    got = np.sum(ga * va) + np.sum(gb * vb)
    num = (np.sum(grad(a + eps * va, b + eps * vb, p) * u)
           - np.sum(grad(a - eps * va, b - eps * vb, p) * u)) / (2 * eps)
    assert abs(got - num) <= 1e-6 * max(1.0, abs(num))
