"""A gradient's step when the calls come with gaps between them (issue 25).

A training loop rarely calls the gradient back to back: it loads the next batch, logs, calls
other libraries. This runs the zoo's small Transformer block gradient (B8 T64 D128, float32,
fuse=True: the step whose second core matters most) after idle gaps of 1, 5, 20 and 100 ms,
15 calls each, and prints the median step, its ratio to the 1 ms gap's, and how often a
helper of srcad's thread team found itself on its product owner's CPU and moved off
(kernels_c/srcad_gemm.h `team_move_off`). Before that change, the step took 7.0 ms after gaps
of 20 ms or more against 3.4 ms after 1-5 ms, and 5.9 ms on one thread (REPORT.md, "A helper
on its owner's core").

    python bench/call_gaps.py
    env -u OPENBLAS_CORETYPE python bench/call_gaps.py      # the BLAS's own kernel choice
    SRCAD_NUM_THREADS=1 python bench/call_gaps.py           # one thread, for comparison
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import srcad  # noqa: E402
from srcad import build  # noqa: E402
from srcad.zoo import transformer  # noqa: E402


def main() -> None:
    rng = np.random.default_rng(0)
    p = transformer.randomize(rng, transformer.init(rng, 128, 4, dtype=np.float32))
    x = rng.standard_normal((8, 64, 128)).astype(np.float32)
    probe = rng.standard_normal((8, 64, 128)).astype(np.float32)
    g = srcad.grad(transformer.block_loss, wrt=(0, 1), fuse=True)
    for _ in range(5):
        g(p, x, 4, probe)
    rt = build._pool_runtime()
    stats = rt.gemm_stats if rt is not None and hasattr(rt, "gemm_stats") else dict
    threads = build.threads_stats()
    print(f"{len(os.sched_getaffinity(0))} CPUs, OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE')}, BLAS pinned {threads.get('blas_pinned')}, "
          f"SRCAD_NUM_THREADS={os.environ.get('SRCAD_NUM_THREADS')}, load "
          f"{os.getloadavg()[0]:.2f}")
    calls, base = int(os.environ.get("N", "15")), None
    for gap in (0.001, 0.005, 0.02, 0.1):
        before, times = stats().get("team_moves", 0), []
        for _ in range(calls):
            time.sleep(gap)
            t0 = time.perf_counter()
            g(p, x, 4, probe)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times) * 1e3
        base = base or med
        moved = (stats().get("team_moves", 0) - before) / calls
        print(f"  gap {gap * 1e3:5.0f} ms: step {med:6.2f} ms (x{med / base:.2f} the 1 ms "
              f"gap's); a helper moved off its owner's CPU {moved:.1f} times a call",
              flush=True)


if __name__ == "__main__":
    main()
