"""E9 under fuse=True: the memory plan with fused kernels (kernel results written into dying
buffers with out=), on the Transformer block's gradient, B=8 T=64 C=128, 4 heads, float32.

Two measurements:
  * one process, fused with the plan on and off interleaved (`repeat` rounds of one call
    each way): tracemalloc's peak above the start of one call (min of 3,
    srcad.checkpoint.measure_peak) and the median wall time of one call;
  * minor page faults per call (resource.getrusage(RUSAGE_SELF).ru_minflt), each of the four
    builds (unfused/fused x plan off/on) in a process of its own that runs only it: warm-up
    calls, then the mean over `calls` calls.
Gradients are asserted bit for bit equal across the four builds.

    OPENBLAS_NUM_THREADS=1 python bench/e9_fused_plan.py [--repeat 30] [--calls 50]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import srcad  # noqa: E402
from srcad.checkpoint import measure_peak  # noqa: E402
from srcad.zoo import transformer  # noqa: E402

CONFIGS = {"unfused/no-plan": dict(fuse=False, memory_plan=False),
           "unfused/plan": dict(fuse=False, memory_plan=True),
           "fused/no-plan": dict(fuse=True, memory_plan=False),
           "fused/plan": dict(fuse=True, memory_plan=True)}


def block(dtype=np.float32, B=8, T=64, C=128, H=4):
    rng = np.random.default_rng(1)
    p = transformer.randomize(rng, transformer.init(rng, C, H, dtype))
    x = rng.standard_normal((B, T, C)).astype(dtype)
    return transformer.block_loss, (0, 1), (p, x, H, rng.standard_normal(x.shape).astype(dtype))


def _leaves(t):
    if isinstance(t, dict):
        return [x for v in t.values() for x in _leaves(v)]
    if isinstance(t, (list, tuple)):
        return [x for v in t for x in _leaves(v)]
    return [t]


def faults(config: str, calls: int) -> float:
    fn, wrt, args = block()
    g = srcad.grad(fn, wrt=wrt, **CONFIGS[config])
    for _ in range(5):
        g(*args)
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        g(*args)
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / calls


def interleaved(repeat: int) -> dict:
    fn, wrt, args = block()
    gs = {c: srcad.grad(fn, wrt=wrt, **CONFIGS[c]) for c in CONFIGS}
    ref = _leaves(gs["unfused/no-plan"](*args))
    for c, g in gs.items():
        got = _leaves(g(*args))
        assert all(np.array_equal(a, b) and a.dtype == b.dtype and a.strides == b.strides
                   for a, b in zip(ref, got)), c
    on, off = gs["fused/plan"], gs["fused/no-plan"]
    peaks = {"fused/plan": min(measure_peak(lambda: on(*args)) for _ in range(3)),
             "fused/no-plan": min(measure_peak(lambda: off(*args)) for _ in range(3))}
    times = {"fused/plan": [], "fused/no-plan": []}
    for _ in range(repeat):
        for name, g in (("fused/plan", on), ("fused/no-plan", off)):
            t0 = time.perf_counter()
            g(*args)
            times[name].append(time.perf_counter() - t0)
    c = on.compiled(on.bind(args, {}))
    return {"peak_bytes": peaks,
            "ms_median": {k: 1e3 * statistics.median(v) for k, v in times.items()},
            "ms_min": {k: 1e3 * min(v) for k, v in times.items()},
            "planned_statements": c.program.memory.statements,
            "kernel_calls_with_out": len(re.findall(r"= fused_\w+\(.*\bout=", srcad.source(on))),
            "kernel_calls": len(re.findall(r"= fused_\w+\(", srcad.source(on)))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--faults-of", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.faults_of:
        print(json.dumps(faults(a.faults_of, a.calls)))
        return
    res = interleaved(a.repeat)
    res["faults_per_call"] = {}
    for config in CONFIGS:
        out = subprocess.run([sys.executable, __file__, "--faults-of", config,
                              "--calls", str(a.calls)], capture_output=True, text=True,
                             check=True, env=dict(os.environ))
        res["faults_per_call"][config] = json.loads(out.stdout.strip().splitlines()[-1])
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
