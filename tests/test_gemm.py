"""The runtime's `gemm` (kernels_c/srcad_gemm.h) and the BLAS held at one thread in srcad's
calls where its products change with its thread count (issue 25 item 2).

What must hold (never timed here: bench/peers.py --contend measures the speed): `gemm(a, b)`
is numpy's `a @ b` bit for bit -- values, dtype, shape and strides -- at the BLAS thread count
srcad's calls run (one thread where srcad.build pins it, else the user's), for every operand
it handles (row blocks shared between srcad's threads) and for every one it hands back to
numpy; fused code spells its matmuls with it and still agrees with unfused code and tape
mode bit for bit, loaded or not; without the C runtime it is numpy's own product. The BLAS
probes' answer (srcad.build `_blas_facts`) is kept for later processes, and believed only
from a file of ours.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

import srcad
from srcad import build, runtime
from srcad.build import blas
from srcad.lower import matmuls_as_gemm
from srcad.zoo import transformer

with contextlib.suppress(Exception):  # (no compiler: the skips below say so)
    build.runtime()

RT = build._pool_runtime()
needs_gemm = pytest.mark.skipif(RT is None or not hasattr(RT, "gemm"),
                                reason="the C runtime (srcad._kernels) with gemm is not here")


def _same(got, want):
    return (type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
            and got.strides == want.strides and got.tobytes() == want.tobytes())


def _operand(rng, shape, dtype, layout):
    """An array of `shape` whose last two axes are C-ordered, transposed (F-ordered matrices)
    or a strided view (every other column of a wider array)."""
    if layout == "T":
        return np.ascontiguousarray(rng.standard_normal(shape).astype(dtype).swapaxes(-1, -2)
                                    ).swapaxes(-1, -2)
    if layout == "strided":
        wide = rng.standard_normal(shape[:-1] + (2 * shape[-1],)).astype(dtype)
        return wide[..., ::2]
    return rng.standard_normal(shape).astype(dtype)


SHAPES = [((1024, 512), (512, 96)), ((300, 200), (200, 130)), ((97, 64), (64, 301)),
          ((25, 300), (300, 400)), ((13, 700), (700, 250)), ((200, 2), (2, 200)),
          ((2, 500), (500, 500)), ((4, 128, 64), (64, 128)), ((2, 3, 50, 40), (2, 3, 40, 70)),
          ((8, 128, 96), (8, 96, 128)), ((7, 5), (5, 3)), ((1, 300), (300, 300)),
          ((300, 300), (300, 1)), ((300, 1), (1, 300)), ((0, 30), (30, 40)),
          ((30, 0), (0, 40)), ((3, 0, 4), (4, 5)), ((5, 30), (30,)), ((30,), (30, 5)),
          # (around the SkylakeX kernel's lines: a block under m*n*k = 1e6 would take its
          # small-matrix kernel; float64's 12-row unroll shows at these widths)
          ((642, 604), (604, 4)), ((725, 566), (566, 6)), ((435, 20), (20, 443)),
          ((262, 531), (531, 21)), ((576, 146), (146, 215)), ((256, 400), (400, 353)),
          ((3, 97, 300), (300, 41))]


@needs_gemm
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}@{s[1]}")
def test_gemm_is_numpys_product_bit_for_bit(shapes, dtype):
    rng = np.random.default_rng(abs(hash(shapes)) % 2**32)
    old = build.set_num_threads(2)  # (row blocks shared out even on one CPU)
    try:
        for la in ("C", "T", "strided"):
            for lb in ("C", "T", "strided"):
                if (la != "C" and len(shapes[0]) < 2) or (lb != "C" and len(shapes[1]) < 2):
                    continue
                a = _operand(rng, shapes[0], dtype, la)
                b = _operand(rng, shapes[1], dtype, lb)
                got, want = build.pinned(lambda: (runtime.gemm(a, b), a @ b))()
                assert _same(got, want), (la, lb)
    finally:
        build.set_num_threads(old)


@needs_gemm
@pytest.mark.parametrize("seed", range(4))
def test_gemm_random_shapes_bit_for_bit(seed):
    """The measured granule and block floor (srcad/build/blas.py `row_split`) hold beyond the
    shapes they were measured on: 120 random float32/float64 products up to 1,200 rows and 700
    wide (a third of them narrow in k or n), plain or transposed operands, split as srcad's
    threads split them, against numpy. (With the block floor taken out on the SkylakeX kernel,
    or a granule of 2 given to its DGEMM, each seed fails.)"""
    rng = np.random.default_rng(100 + seed)
    old = build.set_num_threads(4)  # (blocks of a quarter: nearer a small-product line)
    try:
        for i in range(120):
            dtype = (np.float32, np.float64)[i % 2]
            # (k or n narrow a third of the time each: blocks near a small-product line)
            m = int(rng.integers(2, 1200))
            k, n = (int(rng.integers(2, 40 if rng.random() < 1 / 3 else 700)) for _ in "kn")
            a = _operand(rng, (m, k), dtype, ("C", "T")[int(rng.integers(0, 2))])
            b = _operand(rng, (k, n), dtype, ("C", "T")[int(rng.integers(0, 2))])
            got, want = build.pinned(lambda a=a, b=b: (runtime.gemm(a, b), a @ b))()
            assert _same(got, want), (dtype, m, k, n, a.flags.c_contiguous,
                                      b.flags.c_contiguous)
    finally:
        build.set_num_threads(old)


@needs_gemm
def test_gemm_hands_other_cases_to_numpy():
    """Mixed and integer dtypes, a matrix times its own transpose (numpy's SYRK), broadcast
    stacks, scalars' errors: numpy's own result, or numpy's own exception."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((300, 200)).astype(np.float32)
    cases = [(a, a.T), (a.T, a), (a, a.astype(np.float64).T), (a.astype(np.int64), a.T.astype(
        np.int64)), (a[None].repeat(2, 0), a.T[None]), (a.astype(np.complex64), a.T),
        (np.asfortranarray(rng.standard_normal((3, 40, 50))), rng.standard_normal((50, 60)))]
    for x, y in cases:
        got, want = build.pinned(lambda x=x, y=y: (runtime.gemm(x, y), x @ y))()
        assert _same(got, want), (x.dtype, x.shape, y.dtype, y.shape)
    for x, y in ((a, a), (2.0, a), (a[0], a[:, 0])):
        try:
            want = x @ y
        except (ValueError, TypeError) as e:
            with pytest.raises(type(e)):
                runtime.gemm(x, y)
        else:
            assert np.array_equal(runtime.gemm(x, y), want)


def test_without_the_c_runtime_gemm_is_numpys(monkeypatch):
    monkeypatch.setattr(runtime, "c_helper", lambda name: None)
    monkeypatch.setattr(runtime, "_GEMM", [None])
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((50, 40)), rng.standard_normal((40, 30))
    assert _same(runtime.gemm(a, b), a @ b)


def test_fused_code_spells_matmul_as_gemm_unless_the_name_is_taken():
    def uses_name(x, w):
        gemm = x @ w
        return np.sum(np.tanh(gemm) * 2.0 + 1.0)

    def plain(x, w):
        return np.sum(np.tanh(x @ w) * 2.0 + 1.0)

    x, w = np.ones((4, 3)), np.ones((3, 5))
    taken = srcad.grad(uses_name, wrt=1, fuse=True)
    free = srcad.grad(plain, wrt=1, fuse=True)
    assert np.array_equal(taken(x, w), free(x, w))
    assert "gemm(" not in srcad.source(taken) and " @ " in srcad.source(taken)
    assert "gemm(x, w)" in srcad.source(free)
    assert matmuls_as_gemm([]) == []


@pytest.mark.skipif(RT is None or not hasattr(RT, "threads_assume"),
                    reason="the C runtime with the thread choice is not here")
@pytest.mark.parametrize("width,heads", [(128, 4), (96, 2)])
def test_fused_unfused_and_tape_agree_whatever_the_load(width, heads):
    """The block's gradients: fuse=True (gemm), fuse=False, memory_plan=False and tape mode,
    quiet and with every core but one assumed busy: one set of bits (where the BLAS is
    pinned, numpy's at one thread)."""
    rng = np.random.default_rng(11)
    p = transformer.randomize(rng, transformer.init(rng, width, heads, dtype=np.float32))
    x, probe = (rng.standard_normal((4, 36, width)).astype(np.float32) for _ in range(2))
    forms = {"fused": dict(fuse=True), "unfused": dict(fuse=False),
             "no plan": dict(fuse=False, memory_plan=False), "tape": dict(mode="tape")}
    ncpu = len(os.sched_getaffinity(0))
    seen = {}
    for load in (0.0, ncpu - 1.0):
        before = RT.threads_assume(load)
        try:
            for name, kw in forms.items():
                seen[(name, load)] = srcad.value_and_grad(
                    transformer.block_loss, wrt="p", **kw)(p, x, heads, probe)
        finally:
            RT.threads_assume(before)
    ref_value, ref = seen[("fused", 0.0)]
    for key, (value, grads) in seen.items():
        assert value == ref_value, key
        assert all(np.array_equal(grads[k], ref[k]) for k in ref), (key, [
            k for k in ref if not np.array_equal(grads[k], ref[k])])
    if build.threads_stats().get("blas_pinned"):
        assert build.threads_stats()["split"] > 0


@pytest.mark.skipif(RT is None or not hasattr(RT, "threads_assume"),
                    reason="the C runtime with the thread choice is not here")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_odd_shapes_give_one_set_of_bits_whatever_the_load(dtype):
    """A float64 (numpy's default) MLP of odd widths: the gradient quiet and with every core but
    one assumed busy, one set of bits, in every mode. OpenBLAS 0.3.31's SkylakeX DGEMM (an
    AVX-512 CPU's default kernel) changes half of such products' bits with its thread count,
    which the per-call thread choice lowers under load: srcad must then hold the BLAS at one
    thread (and split rows itself only where that keeps the bits)."""
    rng = np.random.default_rng(3)
    widths = [(61, 234), (234, 147), (147, 21), (21, 443), (443, 6)]
    ws = [(rng.standard_normal(s) / np.sqrt(s[0])).astype(dtype) for s in widths]
    x = rng.standard_normal((312, 61)).astype(dtype)

    def loss(ws, x):
        h = x
        for w in ws[:-1]:
            h = np.tanh(h @ w)
        return np.sum((h @ ws[-1]) ** 2)

    ncpu = len(os.sched_getaffinity(0))
    seen = {}
    for load in (0.0, ncpu - 1.0):
        before = RT.threads_assume(load)
        try:
            for name, kw in {"fused": dict(fuse=True), "unfused": dict(fuse=False),
                             "tape": dict(mode="tape")}.items():
                seen[(name, load)] = srcad.value_and_grad(loss, **kw)(ws, x)
        finally:
            RT.threads_assume(before)
    ref_value, ref = seen[("fused", 0.0)]
    for key, (value, grads) in seen.items():
        assert value == ref_value, key
        assert all(np.array_equal(g, r) for g, r in zip(grads, ref)), (key, [
            i for i, (g, r) in enumerate(zip(grads, ref)) if not np.array_equal(g, r)])


_FACTS_RUN = """
import json, sys
from srcad import build
from srcad.build import blas
if sys.argv[1] == "no-probe":  # (a probe now would fail the run: the kept answer must do)
    def boom(*a):
        raise AssertionError("probed again")
    blas.threads_change_values = blas.row_split = boom
found = blas.thread_functions()
print(json.dumps(build._blas_facts(found)))
"""


@pytest.mark.skipif(blas.thread_functions() is None,
                    reason="numpy's BLAS is not an OpenBLAS with set/get_num_threads")
def test_the_blas_probes_answer_is_kept_for_later_processes(tmp_path):
    """srcad.build `_blas_facts`: the first process probes and keeps the answer in the kernel
    cache's compilers.json; the next reads it without probing; a file others may write, or a
    kept answer that is not well formed, is not believed (probed again)."""
    env = dict(os.environ, SRCAD_CACHE_DIR=str(tmp_path / "cache"))

    def run(mode):
        out = subprocess.run([sys.executable, "-c", _FACTS_RUN, mode], env=env,
                             capture_output=True, text=True, timeout=300, check=False)
        return out.returncode, (out.stdout.strip().splitlines() or [""])[-1], out.stderr

    rc, first, err = run("probe")
    assert rc == 0, err[-2000:]
    kept = tmp_path / "cache" / "compilers.json"
    entries = {k: v for k, v in json.loads(kept.read_text()).items() if k.startswith("blas:")}
    assert list(entries.values()) == [json.loads(first)]
    rc, second, err = run("no-probe")
    assert rc == 0 and second == first, err[-2000:]
    kept.chmod(kept.stat().st_mode | stat.S_IWOTH)  # others may write it: not believed
    rc, _, err = run("no-probe")
    assert rc != 0 and "probed again" in err
    kept.chmod(0o600)
    (tag,) = entries
    kept.write_text(json.dumps({tag: {"changes": True, "split": [[0, 1], [12, 0]]}}))
    rc, _, err = run("no-probe")  # (a granule of 0: not well formed)
    assert rc != 0 and "probed again" in err
    rc, third, err = run("probe")
    assert rc == 0 and third == first, err[-2000:]
