"""Threads chosen per call from the cores free (kernels_c/srcad_threads.h, issue 25 item 2).

Around a generated function's call the runtime lowers numpy's OpenBLAS threads and its own
kernel threads to the cores other processes leave free, and restores the user's settings
after. What must hold (never timed here: bench/peers.py --contend measures the speed):
the threads inside a call are the free cores' count when that is below the user's setting,
and the user's setting otherwise; after the call (also one that raises, also nested calls)
the user's settings are back; gradients are the same bits whatever the choice; a process
really keeping a core busy is seen; SRCAD_ADAPTIVE_THREADS=0 turns the choice off.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import srcad
from srcad import build
from srcad.build import blas
from srcad.zoo import transformer

ROOT = Path(__file__).resolve().parent.parent

with contextlib.suppress(Exception):  # (no compiler: the skips below say so)
    build.runtime()

RT = build._pool_runtime()
pytestmark = [
    pytest.mark.skipif(RT is None or not hasattr(RT, "threads_assume"),
                       reason="the C runtime (srcad._kernels) with the thread choice is not here"),
    pytest.mark.skipif(not sys.platform.startswith("linux"),
                       reason="the free cores are read from /proc/stat (Linux only)"),
]

FOUND = blas.thread_functions()
# (a BLAS whose products change with its thread count is left alone: bits first)
CHANGES = FOUND is not None and blas.threads_change_values(FOUND[0], FOUND[1])
needs_blas = pytest.mark.skipif(FOUND is None, reason="numpy's BLAS is not an OpenBLAS with "
                                "set/get_num_threads")
needs_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                                reason="one CPU: there is no thread to take away")


def rt():
    """The runtime generated code uses now (the one `build.pooled` wraps calls with)."""
    return build._pool_runtime()


def blas_threads() -> int:
    get = ctypes.CFUNCTYPE(ctypes.c_int)(FOUND[1])
    return get()


def set_blas_threads(n: int) -> None:
    ctypes.CFUNCTYPE(None, ctypes.c_int)(FOUND[0])(n)


@contextlib.contextmanager
def assume(foreign_cores: float):
    before = rt().threads_assume(float(foreign_cores))
    try:
        yield
    finally:
        rt().threads_assume(before)


@contextlib.contextmanager
def user_threads(n: int):
    """The user's settings: BLAS and srcad's kernels at `n` threads."""
    b, k = blas_threads(), build.set_num_threads(n)
    set_blas_threads(n)
    try:
        yield
    finally:
        set_blas_threads(b)
        build.set_num_threads(k)


def seen_inside():
    """(BLAS threads, kernel threads) as a pooled call sees them."""
    return Seen(build.pooled(lambda: (blas_threads(), rt().stats()["num_threads"]))())


class Seen(tuple):
    """A pair that says, when a comparison fails, what the runtime's thread choice saw."""

    def __repr__(self):
        return f"{tuple(self)!r} (threads_stats: {build.threads_stats()})"


def in_a_fresh_process(test):
    """Run `test` in an interpreter of its own. In the full suite (CI: ~13,000 tests in one
    process) these BLAS checks saw numpy's BLAS threads not lowered inside a call although the
    runtime had the BLAS and lowered its own kernel threads -- some earlier test leaves the
    process's OpenBLAS in a state not yet understood (the session's issue note says what was
    tried); the behaviour this file pins down is checked where nothing else ran before."""

    @functools.wraps(test)
    def run():
        if os.environ.get("SRCAD_THREADS_TEST") == test.__name__:
            return test()
        env = dict(os.environ, SRCAD_THREADS_TEST=test.__name__)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             f"{Path(__file__).resolve()}::{test.__name__}"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
        return None

    return run


def prime():
    """Give the runtime its BLAS functions and one sample of /proc/stat."""
    build.pooled(lambda: None)()


def prime_unpinned():
    """`prime`, as for a BLAS whose products keep their bits at any thread count: the BLAS
    whose threads the choice lowers to the free cores. Every kernel lent so far changes some
    (OpenBLAS 0.3.31's Haswell SGEMM, its SkylakeX DGEMM), and srcad pins those, so this
    path would go untested; only for tests that run in a process of their own."""
    assert os.environ.get("SRCAD_THREADS_TEST"), "in a fresh process only"
    build._blas_facts = lambda found: {"changes": False, "split": None}
    prime()


@needs_blas
@needs_cpus
@in_a_fresh_process
def test_threads_lowered_to_the_free_cores_and_restored_after():
    prime_unpinned()
    ncpu = len(os.sched_getaffinity(0))
    with user_threads(ncpu):
        with assume(ncpu - 1):  # every core but one busy elsewhere
            assert seen_inside() == (1, 1)
            assert (blas_threads(), rt().stats()["num_threads"]) == (ncpu, ncpu)
        with assume(0.0):  # a quiet machine: the user's settings as they are
            assert seen_inside() == (ncpu, ncpu)
        with assume(ncpu + 5.0):  # more load than cores: still one thread
            assert seen_inside() == (1, 1)
    with user_threads(1), assume(0.0):  # never more than the user asked for
        assert seen_inside() == (1, 1)


@needs_blas
@needs_cpus
@in_a_fresh_process
def test_restored_after_an_exception_and_after_nested_calls():
    prime_unpinned()
    ncpu = len(os.sched_getaffinity(0))

    def boom():
        raise KeyError("inside")

    with user_threads(ncpu), assume(ncpu - 1):
        with pytest.raises(KeyError, match="inside"):
            build.pooled(boom)()
        assert blas_threads() == ncpu and rt().stats()["num_threads"] == ncpu
        inner = build.pooled(lambda: blas_threads())
        assert build.pooled(lambda: (inner(), blas_threads()))() == (1, 1)
        assert blas_threads() == ncpu and rt().stats()["num_threads"] == ncpu


@needs_cpus
def test_gradients_are_the_same_bits_whatever_the_choice():
    rng = np.random.default_rng(3)
    p = transformer.randomize(rng, transformer.init(rng, 128, 4, dtype=np.float32))
    x, probe = (rng.standard_normal((8, 64, 128)).astype(np.float32) for _ in range(2))
    ncpu = len(os.sched_getaffinity(0))
    for fuse in (False, True):
        g = srcad.grad(transformer.block_loss, fuse=fuse)
        with assume(0.0):
            quiet = g(p, x, 4, probe)
        with assume(ncpu - 1):
            busy = g(p, x, 4, probe)
        for k in quiet:
            assert np.array_equal(quiet[k], busy[k]), (fuse, k)


@pytest.mark.skipif(FOUND is None, reason="numpy's BLAS is not an OpenBLAS")
@in_a_fresh_process  # (in the full suite, CHANGES once read False here while the runtime's own
# check had read True: the unexplained BLAS state `in_a_fresh_process` describes)
def test_a_blas_whose_bits_change_with_its_threads_runs_at_one_thread():
    """On a BLAS whose products differ with the thread count (OpenBLAS 0.3.31's Haswell SGEMM
    on a Zen 3: float32 GEMMs in other last bits at 1 and 2 threads), every srcad call runs it
    at one thread, loaded or not (its parallelism comes back in the runtime's `gemm`,
    kernels_c/srcad_gemm.h), and the user's count is restored after; elsewhere the runtime
    lowers it to the free cores only."""
    prime()
    stats = build.threads_stats()
    assert bool(stats.get("blas_pinned")) == CHANGES, stats
    if not CHANGES:
        return
    assert stats["blas_library"] is not None, stats
    before = blas_threads()
    for load in (0.0, len(os.sched_getaffinity(0)) - 1):
        with assume(load):
            assert build.pooled(lambda: blas_threads())() == 1
            assert build.pinned(lambda: blas_threads())() == 1
            assert blas_threads() == before


def test_a_busy_core_is_seen():
    prime()
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        foreign = []
        for _ in range(5):  # samples at most every 0.1 s: a call each 0.15 s
            time.sleep(0.15)
            build.pooled(lambda: None)()
            foreign.append(build.threads_stats()["foreign_cores"])
    finally:
        spin.kill()
        spin.wait()
    # other processes on the machine only add to it
    assert max(foreign) >= 0.5, foreign


def test_the_load_of_the_last_period_is_seen_when_calls_are_far_apart():
    """A sampler thread samples /proc/stat between calls while they keep coming, so a load
    that began 0.4 s into a 0.7 s gap is seen whole by the next call (sampled only at the
    calls, the gap's average was ~0.4 core and counted as none: bench/peers.py --contend);
    once calls stop it sleeps, and a call wakes it. Run where the test itself can see a quiet
    stretch or not: the load only adds to what it sees."""
    prime()
    if build.threads_stats().get("sampler") != 1:
        pytest.skip("the runtime could not make its sampler thread")
    n0 = build.threads_stats()["samples"]
    time.sleep(0.4)  # no call: the sampler samples anyway
    assert build.threads_stats()["samples"] - n0 >= 3
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        build.pooled(lambda: None)()
        seen = build.threads_stats()["foreign_cores"]
    finally:
        spin.kill()
        spin.wait()
    assert seen >= 0.5, seen
    time.sleep(2.5)  # two seconds without a call: asleep
    n1 = build.threads_stats()["samples"]
    time.sleep(0.3)
    assert build.threads_stats()["samples"] == n1
    build.pooled(lambda: None)()
    time.sleep(0.3)
    assert build.threads_stats()["samples"] > n1


def test_off_by_environment():
    code = ("import srcad; from srcad import build; build.runtime(); "
            "build.pooled(lambda: None)(); print(build.threads_stats()['adaptive'])")
    env = dict(os.environ, SRCAD_ADAPTIVE_THREADS="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "0"


@needs_blas
@needs_cpus
@in_a_fresh_process
def test_not_with_set_adaptive_false():
    """Whoever turns the runtime's adaptivity off (the thread tests) gets the threads set."""
    prime_unpinned()
    ncpu = len(os.sched_getaffinity(0))
    old = rt().set_adaptive(False)
    try:
        with user_threads(ncpu), assume(ncpu - 1):
            assert seen_inside() == (ncpu, ncpu)
    finally:
        rt().set_adaptive(old)
    with user_threads(ncpu), assume(ncpu - 1):
        assert seen_inside() == (1, 1)
