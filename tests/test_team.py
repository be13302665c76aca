"""The runtime's own thread team (kernels_c/srcad_gemm.h `team_run`): gemm's row blocks and
the fused kernels' parallel shares run on srcad's helpers, which spin between products only
inside a call that pinned the BLAS (issue 25, "Small block: where the step goes beyond its
GEMMs" in REPORT.md).

What must hold (never timed here): the same bits as one thread and as unfused code, whoever
runs which share; a kernel's floating-point flags reach numpy's error handling from any
share; two Python threads at once (one gets the team, the other OpenMP) and a forked child
(no helpers of its own yet) give the same bits and do not hang.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
import warnings

import numpy as np
import pytest

import srcad
from srcad import build
from srcad.zoo import transformer

with contextlib.suppress(Exception):  # (no compiler: the skips below say so)
    build.runtime()

RT = build._pool_runtime()
pytestmark = pytest.mark.skipif(RT is None or "team_runs" not in RT.gemm_stats(),
                                reason="the C runtime with srcad's thread team is not here")


@contextlib.contextmanager
def two_threads():
    """srcad's kernels and gemm on two threads, every call, whatever the load."""
    old = RT.set_num_threads(2), RT.set_parallel_threshold(0), RT.set_adaptive(False)
    try:
        yield
    finally:
        RT.set_num_threads(old[0])
        RT.set_parallel_threshold(old[1])
        RT.set_adaptive(old[2])


def _block(seed=3, width=64, heads=4):
    rng = np.random.default_rng(seed)
    p = transformer.randomize(rng, transformer.init(rng, width, heads, dtype=np.float32))
    x, probe = (rng.standard_normal((4, 40, width)).astype(np.float32) for _ in range(2))
    return p, x, heads, probe


def _same(a, b):
    (va, ga), (vb, gb) = a, b
    return va == vb and all(np.array_equal(ga[k], gb[k]) for k in ga)


def test_the_team_gives_the_same_bits_as_one_thread_and_unfused():
    args = _block()
    want = srcad.value_and_grad(transformer.block_loss, wrt="p")(*args)
    f = srcad.value_and_grad(transformer.block_loss, wrt="p", fuse=True)
    before = RT.gemm_stats()["team_runs"]
    with two_threads():
        got = [f(*args) for _ in range(4)]
    assert RT.gemm_stats()["team_runs"] > before  # (the team ran the shares)
    assert all(_same(g, want) for g in got)


def test_flags_from_the_team_reach_numpy():
    def f(x, y):
        return np.sum(np.sqrt(x) * y)

    x = np.linspace(1.0, -0.01, 1 << 17)  # (negatives only at the end: one share's)
    y = np.ones(1 << 17)
    g = srcad.grad(f, fuse=True)
    with np.errstate(all="ignore"):
        want = srcad.grad(f)(x, y)
    with two_threads():
        for _ in range(6):  # (which thread takes the last share varies)
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                got = g(x, y)
            assert any(issubclass(w.category, RuntimeWarning) for w in seen), seen
            assert np.array_equal(got, want, equal_nan=True)


def test_two_python_threads_at_once():
    args = _block(seed=5)
    want = srcad.value_and_grad(transformer.block_loss, wrt="p")(*args)
    f = srcad.value_and_grad(transformer.block_loss, wrt="p", fuse=True)
    results, errors = [], []

    def run():
        try:
            for _ in range(5):
                results.append(f(*args))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    with two_threads():
        f(*args)
        threads = [threading.Thread(target=run) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    assert not errors and len(results) == 15
    assert all(_same(r, want) for r in results)


def _child(queue):
    args = _block(seed=7)
    f = srcad.value_and_grad(transformer.block_loss, wrt="p", fuse=True)
    with two_threads():
        value, grads = f(*args)
    queue.put((value, {k: v.tobytes() for k, v in grads.items()}))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="no fork here")
def test_a_forked_child_makes_its_own_helpers():
    args = _block(seed=7)
    f = srcad.value_and_grad(transformer.block_loss, wrt="p", fuse=True)
    with two_threads():
        want = f(*args)  # (the parent's helpers exist before the fork)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(queue,))
    child.start()
    value, grads = queue.get(timeout=120)
    child.join(60)
    assert child.exitcode == 0
    assert value == want[0]
    assert all(grads[k] == want[1][k].tobytes() for k in grads)
