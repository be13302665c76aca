"""The buffer pool is bounded in resident memory, not only in the bytes it keeps (issue 24).

A caller that keeps every 25th gradient, with a pool limit below one call's working set (so
that blocks go back to the system on every call): the process's resident set must grow by
the bytes of the gradients kept and a bounded amount more, not without end. From malloc,
the blocks the pool gave back fragmented glibc's heap around the kept arrays: on the MLP
below, 3,000 calls left the resident set ~100 MiB above the kept bytes and rising.

Each measurement runs in a child process of its own (a fresh resident set; the limit is read
from the environment at import). Linux only: the resident set is read from /proc.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from srcad import build

ROOT = Path(__file__).resolve().parent.parent

# the runtime the pool lives in (built into the kernel cache if not installed; without a
# compiler there is nothing to test)
with contextlib.suppress(Exception):
    build.runtime()

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux") or not Path("/proc/self/statm").exists(),
                       reason="the resident set is read from /proc/self/statm (Linux only)"),
    pytest.mark.skipif(build._pool_runtime() is None,
                       reason="the C runtime (srcad._kernels), where the pool lives, is not here"),
]

MiB = 1 << 20

CHILD = r"""
import json, os, sys
import numpy as np
import srcad
from srcad import build
from srcad.zoo import mlp

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

calls, keep = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
args = (*mlp.init(rng, 128, 512, 10), *mlp.batch(rng, 128, 128, 10))
g = srcad.grad(mlp.loss, wrt=(0, 1, 2, 3))
snapshot = [a.copy() for a in g(*args)]
for _ in range(3):
    g(*args)
held, excess, start = [], [], rss()
for i in range(1, calls + 1):
    out = g(*args)
    if i % keep == 0:
        held.append(out)
    del out
    if i % (calls // 4) == 0:
        excess.append(rss() - start - sum(a.nbytes for h in held for a in h))
stats = build.pool_stats()
same = all(np.array_equal(a, b) for h in held for a, b in zip(h, snapshot))
print(json.dumps({"excess": excess, "kept": sum(a.nbytes for h in held for a in h),
                  "spills": stats["spills"], "hits": stats["hits"], "same": same}))
"""


def run_child(calls: int, keep: int, **env) -> dict:
    e = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", **env)
    e.pop("SRCAD_BUFFER_POOL", None)
    out = subprocess.run([sys.executable, "-c", CHILD, str(calls), str(keep)], env=e, cwd=ROOT,
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_resident_set_bounded_with_kept_gradients_and_a_small_limit():
    r = run_child(3000, 25, SRCAD_POOL_LIMIT=str(1 * MiB))
    # the case this is about: the limit is below the working set, so blocks do go back
    assert r["spills"] > 1000 and r["hits"] > 0, r
    # 120 gradients kept (~62 MiB): they are the growth, give or take a generous margin
    # (numpy's and Python's own small objects, the kernel cache's modules); the pool's own
    # kept bytes are under 1 MiB
    assert r["kept"] > 50 * MiB
    assert max(r["excess"]) < 24 * MiB, [x / MiB for x in r["excess"]]
    # and not rising: the last quarter of the calls adds at most a few MiB beyond what is kept
    assert r["excess"][-1] - r["excess"][1] < 8 * MiB, [x / MiB for x in r["excess"]]
    # the kept gradients are the first one's, bit for bit (no block of theirs was reused)
    assert r["same"]


def test_resident_set_bounded_with_the_default_limit():
    r = run_child(1000, 25)
    assert r["spills"] == 0  # everything a call frees fits under the default limit
    assert max(r["excess"]) < 24 * MiB, [x / MiB for x in r["excess"]]
    assert r["same"]
