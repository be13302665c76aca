"""The runtime's own thread team (kernels_c/srcad_gemm.h `team_run`): gemm's row blocks and
the fused kernels' parallel shares run on srcad's helpers, which spin between products only
inside a call that pinned the BLAS (issue 25, "Small block: where the step goes beyond its
GEMMs" in REPORT.md).

What must hold (never timed here): the same bits as one thread and as unfused code, whoever
runs which share; a kernel's floating-point flags reach numpy's error handling from any
share; two Python threads at once (one gets the team, the other runs on its own thread) and a
forked child (no helpers of its own yet) give the same bits and do not hang; a product that
wants fewer threads than the team has is run by that many; and srcad loads no OpenMP, whose
one copy per process (libgomp.so.1, shared by soname) would take srcad's wait policy into
every other library that uses it (torch's threaded ops ran 1.6-2.3x slower after `import
srcad`: REPORT.md, issue 25).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import srcad
from srcad import build
from srcad.zoo import transformer
from tests.kernel_threads import on_threads

with contextlib.suppress(Exception):  # (no compiler: the skips below say so)
    build.runtime()

RT = build._pool_runtime()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.skipif(RT is None or "team_runs" not in RT.gemm_stats(),
                                reason="the C runtime with srcad's thread team is not here")


def two_threads():
    """srcad's kernels and gemm on two threads, every call, whatever the load."""
    return on_threads(2)


def _block(seed=3, width=64, heads=4):
    rng = np.random.default_rng(seed)
    p = transformer.randomize(rng, transformer.init(rng, width, heads, dtype=np.float32))
    x, probe = (rng.standard_normal((4, 40, width)).astype(np.float32) for _ in range(2))
    return p, x, heads, probe


def _script(code: str, env=None) -> str:
    """`code` run by a fresh Python with this checkout's root as its argument: its stdout
    (stderr in the message where it fails)."""
    out = subprocess.run([sys.executable, "-c", code, ROOT], capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


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


_TEAM_OF_THREE = r"""
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import srcad
from srcad import build
from srcad.zoo import transformer
from tests.kernel_threads import on_threads
rt = build._pool_runtime()
rt.set_parallel_threshold(0), rt.set_adaptive(False)
rng = np.random.default_rng(11)
p = transformer.randomize(rng, transformer.init(rng, 64, 4, dtype=np.float32))
x, probe = (rng.standard_normal((4, 40, 64)).astype(np.float32) for _ in range(2))
f = srcad.value_and_grad(transformer.block_loss, wrt="p", fuse=True)
rt.set_num_threads(1)
want = f(p, x, 4, probe)
rt.set_num_threads(4)  # (three helpers made)
f(p, x, 4, probe)
helpers = rt.gemm_stats()["team_helpers"]
rt.set_num_threads(2)  # (each product now takes one of them)
runs = rt.gemm_stats()["team_runs"]
got = [f(p, x, 4, probe) for _ in range(3)]
same = all(g[0] == want[0] and all(np.array_equal(g[1][k], want[1][k]) for k in want[1])
           for g in got)
print(helpers, rt.gemm_stats()["team_runs"] - runs, same)
"""


def test_a_product_wanting_fewer_threads_than_the_team_has_still_runs_on_it():
    """The per-call choice lowers the threads a call gets (another process took a core): the
    team, made for more, runs its products with that many (the other helpers leave them at
    once) instead of handing them to one thread -- with the same bits as one thread. A fresh
    process: the team's helpers are made once per process."""
    out = _script(_TEAM_OF_THREE)
    helpers, runs, same = out.split()
    assert int(helpers) == 3 and int(runs) > 0 and same == "True", out


_NO_OPENMP = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
import srcad
from srcad import build
from srcad.zoo import transformer
from tests.kernel_threads import on_threads
import numpy as np
rng = np.random.default_rng(0)
p = transformer.randomize(rng, transformer.init(rng, 64, 4, dtype=np.float32))
x, probe = (rng.standard_normal((4, 40, 64)).astype(np.float32) for _ in range(2))
srcad.grad(transformer.block_loss, wrt="p", fuse=True)(p, x, 4, probe)
maps = open("/proc/self/maps").read()
print(build._pool_runtime() is not None,
      any(name in maps for name in ("libgomp", "libomp", "libiomp")),
      os.environ.get("OMP_WAIT_POLICY"))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps")
def test_srcad_loads_no_openmp_so_other_libraries_keep_their_threads_policy():
    """After a fused gradient no OpenMP runtime is mapped: whoever loads libgomp first sets its
    wait policy for every library in the process, and srcad's (workers asleep between
    regions) made torch's threaded ops 1.6-2.3x slower wherever srcad was imported first."""
    out = _script(_NO_OPENMP, {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"})
    assert out.split() == ["True", "False", "None"], out


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


_PLACEMENT = r"""
import os, sys, threading, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import srcad
from srcad import build
from srcad.zoo import transformer
from tests.kernel_threads import on_threads
sys.path.insert(0, os.path.join(sys.argv[1], "tests"))
rt = build._pool_runtime()
rt.set_num_threads(2), rt.set_parallel_threshold(0), rt.set_adaptive(False)
rng = np.random.default_rng(3)
p = transformer.randomize(rng, transformer.init(rng, 64, 4, dtype=np.float32))
x, probe = (rng.standard_normal((4, 40, 64)).astype(np.float32) for _ in range(2))
f = srcad.value_and_grad(transformer.block_loss, wrt="p", fuse=True)
want = f(p, x, 4, probe)
cpus = os.sched_getaffinity(0)
for _ in range(100):  # (a helper names itself when it starts, perhaps after the call)
    team = [int(t) for t in os.listdir("/proc/self/task")
            if open(f"/proc/self/task/{t}/comm").read().strip() == "srcad-team"]
    if team:
        break
    time.sleep(0.01)
owner = min(cpus)
os.sched_setaffinity(threading.get_native_id(), {owner})
moves, tries = rt.gemm_stats()["team_moves"], 0
while rt.gemm_stats()["team_moves"] == moves and tries < 40:
    for t in team:  # (each helper put on the owner's CPU, then given every CPU again)
        os.sched_setaffinity(t, {owner})
        os.sched_setaffinity(t, cpus)
    time.sleep(0.03)
    got = f(p, x, 4, probe)
    assert got[0] == want[0] and all(np.array_equal(got[1][k], want[1][k]) for k in got[1])
    tries += 1
time.sleep(0.05)  # (the call has returned: the helpers stop spinning and sleep)
print(len(team), rt.gemm_stats()["team_moves"] - moves,
      all(os.sched_getaffinity(t) == cpus for t in team))
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux's CPU affinity and two CPUs")
def test_a_helper_moved_off_its_owners_cpu_gets_every_cpu_back():
    """A helper that finds itself on its product's owner's CPU moves to another and keeps off
    it while awake (team_move_off), with the same bits; once asleep it has the process's
    whole mask again: a helper left off a CPU for good would be a thread the user's own
    affinity settings no longer reach. Run in a child (the affinity changes stay there)."""
    helpers, moved, restored = _script(_PLACEMENT).split()
    assert int(helpers) >= 1  # (named srcad-team)
    if int(moved) == 0:
        pytest.skip("the scheduler never woke a helper on its owner's CPU here")
    assert restored == "True"


_AFTER = r"""
import os, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import srcad
from srcad import build
from srcad.zoo import transformer
rt = build._pool_runtime()
rt.set_num_threads(2), rt.set_parallel_threshold(0), rt.set_adaptive(True)
rt.threads_assume(0.0)  # (a quiet machine, whatever else runs: the team is hot in the call)
rng = np.random.default_rng(3)
p = transformer.randomize(rng, transformer.init(rng, 64, 4, dtype=np.float32))
x, probe = (rng.standard_normal((4, 40, 64)).astype(np.float32) for _ in range(2))
f = srcad.value_and_grad(transformer.block_loss, wrt="p", fuse=True)
runs = rt.gemm_stats()["team_runs"]
for _ in range(5):
    f(p, x, 4, probe)
if not build.threads_stats()["blas_pinned"]:  # (known after the first call)
    print("unpinned")
    sys.exit(0)
team = [int(t) for t in os.listdir("/proc/self/task")
        if open(f"/proc/self/task/{t}/comm").read().strip() == "srcad-team"]

def ticks(t):  # (utime + stime of the thread, in clock ticks)
    fields = open(f"/proc/self/task/{t}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])

time.sleep(0.2)
before = {t: ticks(t) for t in team}
time.sleep(0.5)
print(len(team), rt.gemm_stats()["team_runs"] - runs,
      max(ticks(t) - before[t] for t in team), os.sysconf("SC_CLK_TCK"))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/task") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux's /proc and two CPUs")
def test_a_hot_team_stops_spinning_soon_after_the_call_returns():
    """Helpers stay awake a moment after a call that found the cores free (TEAM_AFTER_NS in
    srcad_threads.h: calls back to back no longer wake them each time), then sleep: half a
    second after the last call returned, with the process idle, they burn no CPU."""
    out = _script(_AFTER).split()
    if out == ["unpinned"]:
        pytest.skip("the BLAS is not pinned here: the team never spins")
    helpers, runs, spent, hz = map(int, out)
    assert helpers >= 1 and runs > 0
    assert spent <= max(2, hz // 50), (spent, hz)  # (0.5 s spinning: ~hz / 2 ticks)
