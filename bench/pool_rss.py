"""The buffer pool's resident set and step time: blocks as mappings of their own (the
default, kernels_c/srcad_pool.h) against blocks from malloc (``SRCAD_POOL_MAP_MIN=off``,
the pool before), in the same run.

Each case runs in fresh child processes, one per configuration, alternated over `--rounds`
rounds (a child's RSS is its own; the order rotates so that neither configuration always
runs first). A child calls a gradient `n` times and keeps every `keep`-th result (a caller
that keeps some gradients, the case of issue 24), then reports:
  excess  the resident set's growth over the calls, less the bytes of the gradients kept
          (/proc/self/statm): what the allocator holds beyond what the caller does
  ms      median step time over blocks of calls in the second half (the steady state)

Cases:
  mlp-spill     srcad/zoo/mlp.py 256x256 -> 512 -> 10, batch 256, SRCAD_POOL_LIMIT=1 MiB
                (below one call's working set: blocks go back to the system every call)
  block-spill   srcad/zoo/transformer.py block_loss B8 T64 C256, SRCAD_POOL_LIMIT=32 MiB
  mlp-steady    the MLP with the default limit (every block from the pool: no system calls)
  block-steady  block_loss B8 T64 C128, fuse=True, default limit

Measured (AMD EPYC, 2 cores shared with other jobs: load 3-6 throughout, so step times are
noisy by +-40% per round; 3 rounds, 2026-12-02):
  mlp-spill     excess 75.2 MiB malloc, -0.8 mmap; step time mmap/malloc 1.59 (1.36-1.76)
  block-spill   excess 59.2 MiB malloc, -0.5 mmap; step time mmap/malloc 1.61 (0.99-1.64)
  --inprocess   (12 rounds) mlp-steady 0.986, block-steady 0.951: no difference resolvable
So the default (every block from the pool) is unchanged; a limit below a call's working set
now costs the page faults of the blocks that do not fit under it, every call, where malloc
had kept them (and more) resident: raise the limit rather than pay either.

    python bench/pool_rss.py                 # every case, 3 rounds
    python bench/pool_rss.py --case mlp-spill --rounds 5 --n 3000
    python bench/pool_rss.py --inprocess --rounds 10   # steady cases, one process, A/B
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from timing import cpu_model

ROOT = Path(__file__).resolve().parent.parent
MiB = 2.0 ** 20

CASES = {
    # name: (model, fuse, limit bytes or None, keep every, calls)
    "mlp-spill": ("mlp", False, 1 << 20, 25, 1000),
    "block-spill": ("block", False, 32 << 20, 25, 300),
    "mlp-steady": ("mlp", False, None, 25, 1000),
    "block-steady": ("block128", True, None, 25, 300),
}
CONFIGS = {"mmap": "65536", "malloc": "off"}  # SRCAD_POOL_MAP_MIN


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _nbytes(tree) -> int:
    if isinstance(tree, dict):
        return sum(_nbytes(v) for v in tree.values())
    if isinstance(tree, (list, tuple)):
        return sum(_nbytes(v) for v in tree)
    return tree.nbytes


def child(model: str, fuse: bool, n: int, keep: int) -> dict:
    sys.path.insert(0, str(ROOT))
    import numpy as np

    import srcad
    from srcad import build
    from srcad.zoo import mlp, transformer

    rng = np.random.default_rng(0)
    if model == "mlp":
        params = mlp.init(rng, 256, 512, 10)
        g = srcad.grad(mlp.loss, wrt=(0, 1, 2, 3), fuse=fuse)
        args = (*params, *mlp.batch(rng, 256, 256, 10))
    else:
        C = 256 if model == "block" else 128
        p = transformer.randomize(rng, transformer.init(rng, C, 4))
        x, probe = (rng.standard_normal((8, 64, C)) for _ in range(2))
        g = srcad.grad(transformer.block_loss, fuse=fuse)
        args = (p, x, 4, probe)
    for _ in range(3):
        g(*args)
    if not build.pool_stats().get("enabled"):
        raise SystemExit("the buffer pool is not active (srcad._kernels not built from these "
                         "sources? python setup.py build_ext --inplace --force)")
    held, times, start = [], [], _rss()
    chunk = max(1, n // 40)
    t = time.perf_counter()
    for i in range(1, n + 1):
        out = g(*args)
        if i % keep == 0:
            held.append(out)
        del out
        if i % chunk == 0:
            now = time.perf_counter()
            times.append((now - t) / chunk)
            t = now
    excess = _rss() - start - sum(_nbytes(h) for h in held)
    return {"excess": excess, "kept_bytes": sum(_nbytes(h) for h in held),
            "ms": 1e3 * statistics.median(times[len(times) // 2:]), "pool": build.pool_stats()}


def inprocess(model: str, fuse: bool, rounds: int, calls: int, keep: int) -> dict:
    """Steady-state step time of both configurations in one process: per round, each in
    turn (the pool emptied, its blocks then made afresh in that configuration), `calls`
    calls keeping every `keep`-th gradient; medians of the per-round times and their ratio."""
    sys.path.insert(0, str(ROOT))
    import numpy as np

    import srcad
    from srcad import build
    from srcad.zoo import mlp, transformer

    rt = build._pool_runtime()
    rng = np.random.default_rng(0)
    if model == "mlp":
        g = srcad.grad(mlp.loss, wrt=(0, 1, 2, 3), fuse=fuse)
        args = (*mlp.init(rng, 256, 512, 10), *mlp.batch(rng, 256, 256, 10))
    else:
        C = 256 if model == "block" else 128
        p = transformer.randomize(rng, transformer.init(rng, C, 4))
        x, probe = (rng.standard_normal((8, 64, C)) for _ in range(2))
        g = srcad.grad(transformer.block_loss, fuse=fuse)
        args = (p, x, 4, probe)
    g(*args)
    times = {c: [] for c in CONFIGS}
    held = []
    for r in range(rounds):
        order = list(CONFIGS)[r % 2:] + list(CONFIGS)[:r % 2]
        for config in order:
            rt.pool_configure(True, -1, -1 if CONFIGS[config] == "off" else int(CONFIGS[config]))
            held.clear()
            build.release_buffers()
            for _ in range(3):
                g(*args)
            t = time.perf_counter()
            for i in range(calls):
                out = g(*args)
                if i % keep == 0:
                    held.append(out)
                del out
            times[config].append((time.perf_counter() - t) / calls)
    ratios = [a / b for a, b in zip(times["mmap"], times["malloc"])]
    return {"ms": {c: 1e3 * statistics.median(v) for c, v in times.items()},
            "ratios": ratios, "median_ratio": statistics.median(ratios)}


def run_child(case: str, config: str, n: int | None) -> dict:
    model, fuse, limit, keep, calls = CASES[case]
    env = dict(os.environ, SRCAD_POOL_MAP_MIN=CONFIGS[config])
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    if limit is not None:
        env["SRCAD_POOL_LIMIT"] = str(limit)
    else:
        env.pop("SRCAD_POOL_LIMIT", None)
    cmd = [sys.executable, __file__, "--child", model, str(int(fuse)), str(n or calls),
           str(keep)]
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", action="append", choices=sorted(CASES))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=None, help="calls per child (default: the case's)")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--inprocess", action="store_true", help="the steady cases' step time, "
                    "both configurations alternating in this process (--rounds rounds)")
    a = ap.parse_args()
    if a.inprocess:
        print(f"# {cpu_model()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} at start")
        for case in a.case or ["mlp-steady", "block-steady"]:
            model, fuse, _, keep, _ = CASES[case]
            r = inprocess(model, fuse, a.rounds, a.n or (200 if model == "mlp" else 50), keep)
            print(f"{case:13} in one process: ms/step " + ", ".join(
                f"{c} {v:.2f}" for c, v in r["ms"].items()) + "; mmap/malloc per round "
                + " ".join(f"{x:.3f}" for x in r["ratios"])
                + f", median {r['median_ratio']:.3f}", flush=True)
        print(f"# load {os.getloadavg()[0]:.2f} at end")
        return
    if a.child:
        model, fuse, n, keep = a.child
        print(json.dumps(child(model, fuse == "1", int(n), int(keep))))
        return
    print(f"# {cpu_model()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} at start")
    print(f"{'case':13} {'config':7} {'excess MiB (per round)':32} {'ms/step (per round)':28}",
          flush=True)
    for case in a.case or list(CASES):
        rows = {c: [] for c in CONFIGS}
        order = list(CONFIGS)
        for r in range(a.rounds):
            for config in order[r % 2:] + order[:r % 2]:
                rows[config].append(run_child(case, config, a.n))
        for config, rs in rows.items():
            ex = " ".join(f"{x['excess'] / MiB:6.1f}" for x in rs)
            ms = " ".join(f"{x['ms']:6.2f}" for x in rs)
            print(f"{case:13} {config:7} {ex:32} {ms:28}", flush=True)
        ratios = [m["ms"] / b["ms"] for m, b in zip(rows["mmap"], rows["malloc"])]
        print(f"{case:13} mmap/malloc step time, per round: "
              + " ".join(f"{x:.3f}" for x in ratios)
              + f"  median {statistics.median(ratios):.3f}", flush=True)
    print(f"# load {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
