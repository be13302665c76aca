"""The fused Transformer block's step with one core kept busy, per thread choice (issue 25).

A child process spins on the last CPU this process may use (stopped with SIGSTOP in the quiet
rounds); the fused gradient runs N times per setting: the per-call choice as it measures
("auto"), and forced with the runtime's `threads_assume` to a quiet machine ("2 threads") or to
one busy core ("1 thread"). Prints the median step and what the choice saw. This is how the
team's wait for a helper that never got a core was found (REPORT.md, "Under one busy core").

    python bench/contend_choice.py [B T D H]      # default 8 64 128 4; N=15 (env N)
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time

import numpy as np

import srcad
from srcad import build
from srcad.zoo import transformer as T


def main(argv):
    B, S, W, H = (int(a) for a in argv[:4]) if len(argv) >= 4 else (8, 64, 128, 4)
    n = int(os.environ.get("N", 15))
    rng = np.random.default_rng(0)
    p = T.randomize(rng, T.init(rng, W, H, np.float32), 0.02)
    x = rng.standard_normal((B, S, W)).astype(np.float32)
    probe = rng.standard_normal((B, S, W)).astype(np.float32)
    g = srcad.grad(T.block_loss, wrt="p", fuse=True)
    for _ in range(5):
        g(p, x, H, probe)
    rt = build.runtime()
    cpu = max(os.sched_getaffinity(0))
    spin = subprocess.Popen([sys.executable, "-c",
                             f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass\n"])
    try:
        for busy in (False, True):
            os.kill(spin.pid, signal.SIGCONT if busy else signal.SIGSTOP)
            time.sleep(0.3)
            for name, assume in (("auto", None), ("2 threads", 0.0), ("1 thread", 1.0)):
                old = rt.threads_assume(assume) if assume is not None else None
                ts = []
                for _ in range(n):
                    t0 = time.perf_counter()
                    g(p, x, H, probe)
                    ts.append(time.perf_counter() - t0)
                st = rt.threads_stats()
                if assume is not None:
                    rt.threads_assume(old)
                print(f"{'busy' if busy else 'quiet'} {name:10s} {statistics.median(ts) * 1e3:8.2f} "
                      f"ms  choice={st['last_choice']} foreign={st['foreign_cores']:.2f} "
                      f"pinned={st['blas_pinned']}", flush=True)
    finally:
        spin.kill()
        spin.wait()


if __name__ == "__main__":
    main(sys.argv[1:])
