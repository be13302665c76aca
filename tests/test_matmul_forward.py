"""Matmul's forward as one 2-D GEMM (issue 15, item 2): ``x @ W`` with x (B..., M, K)
C-contiguous and W (K, N) runs as ``(x.reshape(B*M, K) @ W).reshape((B..., M, N))`` where
`srcad.runtime_linalg.matmul_forward_form` says so: large matrices (measured faster), and only
where this process's BLAS gives that one GEMM numpy's bits (probed once per shape class; the
answer depends on the kernels: OpenBLAS's SkylakeX ones keep the bits, its Haswell ones do
not in float32).

What holds on every machine, and is tested here: every rewritten shape is bitwise numpy's
batched product (a grid, at one BLAS thread and the default count, and in child processes
under each kernel set OpenBLAS offers on this CPU); the gate keeps numpy's product where the
probe differs (a BLAS simulated to differ, and the real Haswell kernels); source mode (the
forward sweep, forward mode's primal and tangents, fused or not) and tape mode run the same
form whatever the verdict, so they agree bit for bit. Gradients against float64 einsum, torch
and central differences.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pytest

import srcad
from srcad import api, build
from srcad import runtime_linalg as rl
from srcad.runtime_linalg import matmul_forward_form
from srcad.testing import check_consistency, check_jvp

torch = pytest.importorskip("torch")


def numpy_value(f, *args):
    """numpy's own value of f, at the BLAS thread count srcad's calls run it: one thread
    where srcad holds it there (a BLAS whose products change with its threads:
    srcad.build.pinned), the user's count elsewhere."""
    return build.pinned(f)(*args)


def _form(a, b):
    return matmul_forward_form(a.shape, b.shape, a.dtype, b.dtype, a.flags.c_contiguous,
                               b.flags.c_contiguous)


def _run(form, a, b):
    return eval(f"lambda a, b: {form}")(a, b)  # (our own expression)


def _fresh_caches(monkeypatch):
    """No verdict, and no specialisation made under another verdict, survives into a test."""
    monkeypatch.setattr(rl, "_VERDICTS", {})
    monkeypatch.setattr(api, "_JVP_CACHE", {})
    monkeypatch.setattr(api, "_VJP_CACHE", {})


@pytest.fixture(params=["probed", "forced one GEMM", "forced batched"])
def verdict(request, monkeypatch):
    """The gate as this BLAS answers it, or forced either way (as on a BLAS that differs):
    the modes must agree with each other under each. Yields the forced answer (None: probed)
    and the real probe, for the checks against numpy's own product."""
    real = rl._probe
    _fresh_caches(monkeypatch)
    forced = {"probed": None, "forced one GEMM": True, "forced batched": False}[request.param]
    if forced is not None:
        monkeypatch.setattr(rl, "_probe", lambda *key: forced)
    yield forced, real


def _numpy_bits_expected(verdict, a, b):
    """Must srcad's value be numpy's own, bit for bit? Yes unless the one GEMM is forced on a
    shape this BLAS sums differently."""
    forced, real = verdict
    if forced is not True:
        return True
    batch = int(np.prod(a.shape[:-2]))
    return real(a.dtype.name, batch, *a.shape[-2:], b.shape[-1])


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

def test_the_block_shapes_are_one_gemm(monkeypatch):
    """Where the BLAS keeps the bits (forced here: the probe is tested below)."""
    _fresh_caches(monkeypatch)
    monkeypatch.setattr(rl, "_probe", lambda *key: True)
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
def test_kept_as_numpy_computes_it(a_shape, b_shape, dtypes, c_order, why, monkeypatch):
    _fresh_caches(monkeypatch)
    monkeypatch.setattr(rl, "_probe", lambda *key: True)  # (kept whatever the BLAS does)
    kinds = {"f": np.float32, "d": np.float64, "i": np.int64}
    assert matmul_forward_form(a_shape, b_shape, kinds[dtypes[0]], kinds[dtypes[1]],
                               c_order) is None, why


def test_kept_for_a_fortran_order_w(monkeypatch):
    """x @ W.T (W.T in Fortran order): measured not bitwise for small products, so kept."""
    _fresh_caches(monkeypatch)
    monkeypatch.setattr(rl, "_probe", lambda *key: True)
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
    """Every grid shape the gate rewrites is numpy's product bit for bit, on fresh operands
    (not the probe's). Answers how many shapes the size rule admits (the probe then decides)
    and how many were rewritten."""
    rng = np.random.default_rng(0)
    admitted = rewritten = 0
    for batch, M, K, N in _grid(cap):
        admitted += rl._one_gemm_pays(int(np.prod(batch)), M, K, N)
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
            f" although the probe found it bitwise: the verdict depends on more than the shape")
    return admitted, rewritten


@pytest.mark.parametrize("threads", [1, None], ids=["1 thread", "default threads"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_rewritten_shapes_are_bitwise_equal_to_numpy(dtype, threads):
    """(The verdicts are cached per process: a verdict probed at one thread count is held
    to the other's results too.)"""
    ctx = _blas_threads(threads) if threads else contextlib.nullcontext(True)
    with ctx as limited:
        if threads and not limited:
            pytest.skip("threadpoolctl is not installed")
        admitted, _ = _check_grid(dtype, 1.6e7)
        assert admitted >= 10


@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, None], ids=["1 thread", "default threads"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_rewritten_shapes_are_bitwise_equal_to_numpy_large(dtype, threads):
    ctx = _blas_threads(threads) if threads else contextlib.nullcontext(True)
    with ctx as limited:
        if threads and not limited:
            pytest.skip("threadpoolctl is not installed")
        _check_grid(dtype, 6e7)


# -- the gate: probed once per shape class, numpy's product kept where the BLAS differs -------

def test_the_verdict_is_probed_once_per_shape_class(monkeypatch):
    _fresh_caches(monkeypatch)
    calls = []
    real = rl._probe
    monkeypatch.setattr(rl, "_probe", lambda *key: calls.append(key) or real(*key))
    f32, f64 = np.float32, np.float64
    first = matmul_forward_form((8, 64, 128), (128, 512), f32, f32)
    assert matmul_forward_form((2, 4, 64, 128), (128, 512), f32, f32, names=("x", "w")) \
        == (None if first is None else "(x.reshape(512, 128) @ w).reshape((2, 4, 64, 512))")
    matmul_forward_form((8, 64, 128), (128, 512), f64, f64)
    matmul_forward_form((8, 64, 128), (128, 512), f32, f32)
    # shapes the size rule keeps never cost a probe
    matmul_forward_form((16, 32, 64), (64, 64), f32, f32)
    matmul_forward_form((8, 64, 128), (128, 512), f32, f32, False)
    assert calls == [("float32", 8, 64, 128, 512), ("float64", 8, 64, 128, 512)]
    assert rl._VERDICTS == {k: real(*k) for k in calls}


def _perturbed_gemm(a, b):
    """A BLAS whose one GEMM rounds one element differently from its batched product."""
    out = (a.reshape(-1, a.shape[-1]) @ b).reshape(a.shape[:-1] + (b.shape[-1],))
    out.flat[out.size // 2] = np.nextafter(out.flat[out.size // 2], np.inf)
    return out


def test_a_blas_whose_one_gemm_differs_keeps_numpy_product(monkeypatch):
    """The gate itself: where the probe's two forms differ, every mode runs numpy's own
    ``a @ b``, and srcad's value is numpy's, bit for bit."""
    from srcad import tape as tape_mod
    from srcad.ops.table import by_name

    _fresh_caches(monkeypatch)
    monkeypatch.setattr(rl, "_one_gemm", _perturbed_gemm)
    a, b, p = _args((8, 64, 128), (128, 128))
    assert _form(a, b) is None
    assert rl._VERDICTS == {("float32", 8, 64, 128, 128): False}
    g = srcad.value_and_grad(mm_loss, wrt=(0, 1))
    value, grads = g(a, b, p)
    src = srcad.source(g)
    assert "(a.reshape(512, 128) @ b)" not in src and "= a @ b" in src, src
    assert tape_mod._forward_form(by_name("matmul"), {"x1": a, "x2": b}) \
        is tape_mod._NO_FORM
    tv, tg = srcad.value_and_grad(mm_loss, wrt=(0, 1), mode="tape")(a, b, p)
    assert value == tv == numpy_value(mm_loss, a, b, p)
    assert all(np.array_equal(s, t) for s, t in zip(grads, tg))
    srcad.jvp(mm_loss, (a, b, p), (a, b, np.zeros_like(p)))
    assert ".reshape(512, 128) @ b" not in srcad.source(api._JVP_CACHE[(mm_loss, ())])


_CHILD = """
import json, sys
import numpy as np
import srcad
from srcad import runtime_linalg as rl

from srcad import build

def numpy_value(f, *args):  # (numpy's value at the BLAS threads srcad's calls run)
    return build.pinned(f)(*args)


def mm_loss(a, b, p):
    return np.sum((a @ b) * p)

rng = np.random.default_rng(7)
out = {"checked": 0, "differs": 0, "rewritten": 0}
for dtype in ("float32", "float64"):
    for batch, M, K, N in [(2, 64, 128, 128), (8, 64, 128, 512), (8, 64, 512, 128),
                           (3, 96, 512, 64), (2, 7 * 16, 384, 256), (4, 33, 256, 512)]:
        a = rng.standard_normal((batch, M, K)).astype(dtype)
        b = rng.standard_normal((K, N)).astype(dtype)
        p = rng.standard_normal((batch, M, N)).astype(dtype)
        one = (a.reshape(batch * M, K) @ b).reshape(batch, M, N)
        same = bool(np.array_equal(one, a @ b))
        form = rl.matmul_forward_form(a.shape, b.shape, a.dtype, b.dtype)
        assert rl._one_gemm_pays(batch, M, K, N)
        # the gate rewrites exactly where this BLAS keeps numpy's bits
        assert (form is not None) == same, (dtype, batch, M, K, N, form, same)
        # another alignment (a C-contiguous view one element into a buffer): the same bits
        shifted = np.empty(a.size + 1, dtype)[1:].reshape(a.shape)
        shifted[...] = a
        if form is not None:
            assert np.array_equal((shifted.reshape(batch * M, K) @ b).reshape(batch, M, N),
                                  shifted @ b), (dtype, batch, M, K, N, "shifted")
        value, grads = srcad.value_and_grad(mm_loss, wrt=(0, 1))(a, b, p)
        tv, tg = srcad.value_and_grad(mm_loss, wrt=(0, 1), mode="tape")(a, b, p)
        assert value == tv == numpy_value(mm_loss, a, b, p), (dtype, batch, M, K, N)
        assert all(np.array_equal(s, t) for s, t in zip(grads, tg))
        out["checked"] += 1
        out["differs"] += not same
        out["rewritten"] += form is not None
print(json.dumps(out))
"""


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), [])
    except OSError:
        return []


_KERNEL_SETS = [("SkylakeX", {"avx512f", "avx512dq", "avx512bw", "avx512vl"}),
                ("Haswell", {"avx2", "fma"}), ("Sandybridge", {"avx"})]


@pytest.mark.parametrize("core,flags", _KERNEL_SETS, ids=[c for c, _ in _KERNEL_SETS])
def test_the_gate_under_each_openblas_kernel_set(core, flags, tmp_path):
    """A child process per kernel set OpenBLAS can run on this CPU (OPENBLAS_CORETYPE, where
    numpy's OpenBLAS is built for several): the gate rewrites exactly the shapes where that
    kernel set keeps numpy's bits, and srcad's value is numpy's there and elsewhere, source
    and tape bit for bit. (OpenBLAS 0.3.31's Haswell kernels differ in float32: the gate is
    seen keeping numpy's product on a real BLAS.)"""
    import json
    import os
    import subprocess
    import sys

    config = np.__config__.CONFIG["Build Dependencies"]["blas"]
    if config.get("name", "").find("openblas") < 0 or \
            "DYNAMIC_ARCH" not in str(config.get("openblas configuration", "")):
        pytest.skip("numpy's BLAS is not an OpenBLAS built for several kernel sets")
    if not flags <= set(_cpu_flags()):
        pytest.skip(f"this CPU cannot run OpenBLAS's {core} kernels")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, OPENBLAS_CORETYPE=core, OPENBLAS_VERBOSE="2", PYTHONPATH=root,
               OPENBLAS_NUM_THREADS="1")
    child = tmp_path / "gate_child.py"  # (a file: srcad reads mm_loss's source)
    child.write_text(_CHILD)
    r = subprocess.run([sys.executable, str(child)], env=env, capture_output=True, text=True,
                       timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"Core: {core}" in r.stderr, r.stderr[-500:]  # (the kernels asked for ran)
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["checked"] == 12 and out["rewritten"] + out["differs"] == 12, out


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


def _rewritten(verdict, form):
    """The form the gate answered, as the forced verdict demands."""
    forced = verdict[0]
    assert forced is None or (form is not None) == forced, (forced, form)
    return form is not None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("a_shape,b_shape", SHAPES)
def test_source_and_tape_run_the_same_form_bitwise(a_shape, b_shape, dtype, verdict):
    a, b, p = _args(a_shape, b_shape, dtype)
    one = _rewritten(verdict, _form(a, b))
    g = srcad.value_and_grad(mm_loss, wrt=(0, 1))
    value, grads = g(a, b, p)
    src = srcad.source(g)
    rows, K = int(np.prod(a_shape[:-1])), a_shape[-1]
    assert (f"(a.reshape({rows}, {K}) @ b).reshape(" in src) == one, src
    assert ("= a @ b" in src) == (not one), src
    tv, tg = srcad.value_and_grad(mm_loss, wrt=(0, 1), mode="tape")(a, b, p)
    assert np.array_equal(value, tv) and all(np.array_equal(s, t) for s, t in zip(grads, tg))
    if _numpy_bits_expected(verdict, a, b):
        assert value == numpy_value(mm_loss, a, b, p)  # (numpy's own value, bit for bit)


def test_tape_mode_runs_the_form(monkeypatch):
    """Tape mode computes the product through the row's form (the same numpy calls as the
    generated code), not numpy's batched loop, where the gate says so."""
    from srcad import tape as tape_mod

    _fresh_caches(monkeypatch)
    monkeypatch.setattr(rl, "_probe", lambda *key: True)
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
    monkeypatch.setattr(rl, "_probe", lambda *key: False)
    monkeypatch.setattr(rl, "_VERDICTS", {})
    srcad.grad(mm_loss, wrt=(0, 1), mode="tape")(a, b, p)
    assert calls == [True, False, False]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_chain_of_products_source_tape_and_numpy(dtype, verdict):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 64, 128)).astype(dtype)
    w1 = rng.standard_normal((128, 256)).astype(dtype)
    w2 = rng.standard_normal((256, 128)).astype(dtype)
    p = rng.standard_normal((4, 64, 128)).astype(dtype)
    g = srcad.value_and_grad(mlp_loss, wrt=(0, 1, 2))
    v, grads = g(x, w1, w2, p)
    src = srcad.source(g)
    one = _rewritten(verdict, _form(x, w1))
    assert ("(x.reshape(256, 128) @ w1)" in src) == one, src
    assert (".reshape(256, 256) @ w2)" in src) == _rewritten(verdict, _form(x @ w1, w2)), src
    tv, tg = srcad.value_and_grad(mlp_loss, wrt=(0, 1, 2), mode="tape")(x, w1, w2, p)
    assert v == tv
    if _numpy_bits_expected(verdict, x, w1) and _numpy_bits_expected(verdict, x @ w1, w2):
        assert v == numpy_value(mlp_loss, x, w1, w2, p)
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
def test_jvp_runs_the_form_for_primal_and_tangents(a_shape, b_shape, verdict):
    a, b, p = _args(a_shape, b_shape, "float64")
    one = _rewritten(verdict, _form(a, b))
    rng = np.random.default_rng(4)
    va, vb = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    out, t = srcad.jvp(mm_loss, (a, b, p), (va, vb, np.zeros_like(p)))
    src = srcad.source(srcad.api._JVP_CACHE[(mm_loss, ())])
    rows, K = int(np.prod(a_shape[:-1])), a_shape[-1]
    # the primal and both tangent terms (a_dot has a's shape, b_dot b's): one GEMM each, or
    # numpy's product each
    for term in ("a.reshape({}, {}) @ b)", "a_dot.reshape({}, {}) @ b)",
                 "a.reshape({}, {}) @ b_dot)"):
        assert src.count("(" + term.format(rows, K)) == one, (term, src)
    if _numpy_bits_expected(verdict, a, b):
        assert out == numpy_value(mm_loss, a, b, p)
    want = np.sum((va @ b + a @ vb) * p)
    assert abs(t - want) <= 1e-12 * max(1.0, abs(want))
    check_jvp(mm_loss, (a, b, p))
    check_consistency(mm_loss, (a, b, p))


def chain(a, b, p):
    return np.sum(np.tanh(a @ b) * p)


def test_second_order_through_the_forward_form(verdict):
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
    assert ("(a.reshape(128, 128) @ b).reshape((2, 64, 128))" in srcad.source(grad)) == \
        _rewritten(verdict, _form(a, b))
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


# -- fused and unfused -------------------------------------------------------------------------

@pytest.mark.parametrize("forced", [None, True], ids=["probed", "forced one GEMM"])
def test_fused_and_unfused_block_agree_bitwise(forced, monkeypatch):
    """The Transformer block at a size whose products the size rule admits ((2, 64, 128) @
    (128, 128) and the MLP's): fuse=True and fuse=False run the same form, bit for bit."""
    from srcad.zoo import transformer as T

    _fresh_caches(monkeypatch)
    if forced is not None:
        monkeypatch.setattr(rl, "_probe", lambda *key: forced)
    rng = np.random.default_rng(8)
    params = T.randomize(rng, T.init(rng, 128, 4, dtype=np.float32))
    x = rng.standard_normal((2, 64, 128)).astype(np.float32)
    probe = rng.standard_normal((2, 64, 128)).astype(np.float32)
    one = _rewritten((forced, None), matmul_forward_form(x.shape, (128, 128), x.dtype, x.dtype))
    plain = srcad.value_and_grad(T.block_loss, wrt="p")
    fused = srcad.value_and_grad(T.block_loss, wrt="p", fuse=True)
    want, got = plain(params, x, 4, probe), fused(params, x, 4, probe)
    for src in (srcad.source(plain), srcad.source(fused)):
        assert any(f in src for f in (".reshape(128, 128) @ w_q).reshape((2, 64, 128))",
                                      "(128, 128)), w_q).reshape((2, 64, 128))")) == one, src
    assert want[0] == got[0]
    assert all(np.array_equal(want[1][k], got[1][k]) for k in want[1]), \
        [k for k in want[1] if not np.array_equal(want[1][k], got[1][k])]
    tape = srcad.value_and_grad(T.block_loss, wrt="p", mode="tape")(params, x, 4, probe)
    assert tape[0] == want[0] and all(np.array_equal(want[1][k], tape[1][k]) for k in want[1])
