"""Timing helpers the benches share: interleaved medians, the load average, the CPU."""

from __future__ import annotations

import contextlib
import os
import platform
import statistics
import time


def sample(fn, k: int) -> float:
    """Seconds per call of `fn` over `k` back-to-back calls."""
    t = time.perf_counter()
    for _ in range(k):
        fn()
    return (time.perf_counter() - t) / k


def measure(calls: dict, rounds: int, min_sample=2e-3) -> dict:
    """Median seconds per call of each callable, sampled in rotating order (each sample at
    least `min_sample` seconds of back-to-back calls)."""
    ks = {}
    for name, fn in calls.items():
        fn()
        ks[name] = max(1, int(min_sample / max(sample(fn, 1), 1e-7)))
    samples = {name: [] for name in calls}
    names = list(calls)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            samples[name].append(sample(calls[name], ks[name]))
    return {name: statistics.median(v) for name, v in samples.items()}


def load() -> float:
    """The 1-minute load average."""
    return round(os.getloadavg()[0], 2)


def cpu_model() -> str:
    """The CPU's model name (a figure is of the CPU it ran on)."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()
