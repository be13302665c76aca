"""What `runtime.own` costs: the copy a function makes of a list or dict argument it stores
into (issue 21).

A function that stores into its argument (`cache["h"] = h`, `params[k] = ...`) reads, in the
generated code, its own copy of the argument as it came in, while the stores go into the
caller's object (frontend/normalize.py `own_on_entry`). `own` copies the lists, dicts and
tuples at every depth -- never the arrays -- on every call. This times `own` alone on
containers of the shapes such programs pass, and one whole gradient call that owns its
argument, against the same function given a fresh dict (no store into the caller's).

    python bench/own_cost.py [--repeat N]

Prints one row per container; REPORT.md quotes it with the CPU it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import srcad  # noqa: E402
from srcad.runtime import own  # noqa: E402


def containers():
    r = np.random.default_rng(0)
    yield "dict of 4 arrays (a layer's params)", {k: r.normal(size=(64, 64)) for k in "WbVc"}
    yield "dict of 24 arrays (a 6-layer net's params)", {
        f"{k}{i}": r.normal(size=(64, 64)) for i in range(6) for k in "WbVc"}
    yield "list of 100 dicts of 3 arrays (a per-step cache)", [
        {"h": r.normal(size=8), "x": r.normal(size=8), "a": r.normal(size=8)}
        for _ in range(100)]
    yield "list of 1000 tuples of 2 arrays", [(r.normal(size=4), r.normal(size=4))
                                             for _ in range(1000)]


def step_into(params, x):
    """A layer that records its activation in the dict it is given (stores into it)."""
    h = np.tanh(params["W"] @ x + params["b"])
    params["h"] = h
    return np.sum(h ** 2)


def step_plain(params, x):
    h = np.tanh(params["W"] @ x + params["b"])
    return np.sum(h ** 2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print(f"# {platform.processor() or platform.machine()}, numpy {np.__version__}")
    print("| container | own() us (median of runs) |")
    print("|---|---|")
    for name, c in containers():
        n = 2000
        t = sorted(timeit.repeat(lambda: own(c), number=n, repeat=args.repeat))
        print(f"| {name} | {t[len(t) // 2] / n * 1e6:.2f} |")
    r = np.random.default_rng(1)
    params = {"W": r.normal(size=(64, 64)), "b": r.normal(size=64)}
    x = r.normal(size=64)
    g_into, g_plain = srcad.grad(step_into), srcad.grad(step_plain)
    g_into(params, x)
    g_plain(params, x)
    n = 2000
    t_into = sorted(timeit.repeat(lambda: g_into(params, x), number=n, repeat=args.repeat))
    t_plain = sorted(timeit.repeat(lambda: g_plain(params, x), number=n, repeat=args.repeat))
    mid = args.repeat // 2
    print(f"\ngrad of a 64-wide layer storing into its dict argument: "
          f"{t_into[mid] / n * 1e6:.1f} us a call; the same layer not storing: "
          f"{t_plain[mid] / n * 1e6:.1f} us ({t_into[mid] / t_plain[mid]:.2f}x)")


if __name__ == "__main__":
    main()
