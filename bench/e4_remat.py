"""E4, straight-line part: the memory_budget policy's first trade, recomputing elementwise values.

A 4-layer MLP with GELU (tanh form) written as calls to a user function per layer; the policy,
given a budget below the program's peak, first has each layer's backward compute GELU's
`0.5 * a` and `1 + tanh(...)` (and their product) again from values it keeps anyway (the layer's
pre-activation and the tanh output), instead of keeping them from the forward. Reported: peak
memory (tracemalloc, as srcad.checkpoint.measure_peak counts it) and step CPU time of the plain
gradient and of the budgeted one, as ratios in the same run; gradients asserted bitwise equal.

    python bench/e4_remat.py
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import srcad  # noqa: E402
from srcad.checkpoint import measure_peak  # noqa: E402
from tests.fixtures_budget import gelu_net  # noqa: E402


def main(batch=1024, width=256, repeat=15):
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((batch, width)),
            *[rng.standard_normal((width, width)) / np.sqrt(width) for _ in range(4)])
    wrt = (0, 1, 2, 3, 4)
    plain = srcad.grad(gelu_net, wrt=wrt)
    ref = plain(*args)
    p_plain = measure_peak(lambda: plain(*args))
    budgeted = srcad.grad(gelu_net, wrt=wrt, memory_budget=int(0.8 * p_plain))
    out = budgeted(*args)  # the policy runs here
    assert all(np.array_equal(a, b) for a, b in zip(out, ref))
    p_budget = measure_peak(lambda: budgeted(*args))
    times = {"plain": [], "budget": []}
    for _ in range(repeat):  # interleaved
        for name, g in (("plain", plain), ("budget", budgeted)):
            t = time.process_time()
            g(*args)
            times[name].append(time.process_time() - t)
    t_plain, t_budget = (statistics.median(times[k]) for k in ("plain", "budget"))
    print(f"batch {batch}, width {width}, 4 GELU layers, float64, 1 BLAS thread")
    print(f"plan: {budgeted._last.plan.describe()}")
    print(f"plain   peak {p_plain / 2**20:7.2f} MiB   {t_plain * 1e3:7.2f} ms")
    print(f"budget  peak {p_budget / 2**20:7.2f} MiB   {t_budget * 1e3:7.2f} ms")
    print(f"memory {p_plain / p_budget:.2f}x less for {t_budget / t_plain:.2f}x the step time; "
          f"gradients bitwise equal")


if __name__ == "__main__":
    main()
