"""Should `fuse` default to on? (issue 25 item 3.) For the README's first example and the
zoo's models, fuse=False against fuse=True:

* first call (parse, probe, transform, build, compile, first run) in a fresh process with a
  cold kernel cache (a new SRCAD_CACHE_DIR) and with a warm one (the cold run's cache);
* steady state: both built in one process, called interleaved, ratio of medians;
* that the two gradients are bit for bit equal.

    python bench/fuse_default.py [--runs 3] [--repeat 15] [--only readme,mlp,block,gpt]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKLOADS = ("readme", "mlp", "block", "block-large", "gpt")


def make(name: str):
    """(function to transform, transform kind, wrt, arguments) for a workload."""
    import numpy as np

    from srcad.zoo import gpt, mlp, transformer

    rng = np.random.default_rng(0)
    if name == "readme":
        def loss(W, b, x, y):
            h = np.tanh(x @ W + b)
            return np.mean((h - y) ** 2)
        return loss, "grad", ("W", "b"), (rng.standard_normal((3, 2)), np.zeros(2),
                                          rng.standard_normal((8, 3)),
                                          rng.standard_normal((8, 2)))
    if name == "mlp":
        W1, b1, W2, b2 = mlp.init(rng, 256, 256, 10, np.float32)
        x, y = mlp.batch(rng, 64, 256, 10, np.float32)
        return mlp.loss, "grad", (0, 1, 2, 3), (W1, b1, W2, b2, x, y)
    if name in ("block", "block-large"):
        b, t, d = (8, 64, 128) if name == "block" else (8, 128, 512)
        p = transformer.randomize(rng, transformer.init(rng, d, 4, np.float32))
        x = rng.standard_normal((b, t, d)).astype(np.float32)
        probe = rng.standard_normal((b, t, d)).astype(np.float32)
        return transformer.block_loss, "grad", 0, (p, x, 4, probe)
    if name == "gpt":
        params = gpt.init(rng, 65, 64, 4, 2, 32, np.float32)
        tok = rng.integers(0, 65, (16, 32))
        return gpt.loss, "value_and_grad", "params", (params, tok, np.roll(tok, -1, 1), 4)
    raise SystemExit(f"unknown workload {name}")


def transform(kind, fn, wrt, fuse):
    import srcad
    return getattr(srcad, kind)(fn, wrt=wrt, fuse=fuse)


def first_call(name: str, fuse: bool) -> dict:
    """In this (fresh) process: the first call's wall time, and the second's."""
    sys.path.insert(0, ROOT)
    fn, kind, wrt, args = make(name)
    t0 = time.perf_counter()
    g = transform(kind, fn, wrt, fuse)
    g(*args)
    t1 = time.perf_counter()
    g(*args)
    t2 = time.perf_counter()
    return {"first": t1 - t0, "second": t2 - t1}


def in_fresh_process(name, fuse, cache) -> dict:
    env = dict(os.environ, SRCAD_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, __file__, "--child", name] + (["--fuse"] if fuse
                                                                        else []),
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def flat(tree):
    import numpy as np
    if isinstance(tree, dict):
        return b"".join(flat(tree[k]) for k in sorted(tree))
    if isinstance(tree, (tuple, list)):
        return b"".join(flat(v) for v in tree)
    return np.asarray(tree).tobytes()


def steady(name: str, repeat: int) -> tuple[float, float, bool]:
    """(unfused ms, fused ms, bitwise equal) per call, interleaved in this process."""
    import numpy as np
    sys.path.insert(0, ROOT)
    fn, kind, wrt, args = make(name)
    gs = [transform(kind, fn, wrt, fuse) for fuse in (False, True)]
    same = flat(gs[0](*args)) == flat(gs[1](*args))
    for g in gs:  # warm up (and pick the number of calls per sample)
        g(*args)
    t0 = time.perf_counter()
    gs[0](*args)
    inner = max(1, int(0.05 / max(time.perf_counter() - t0, 1e-6)))
    times = [[], []]
    for _ in range(repeat):
        for k, g in enumerate(gs):
            t0 = time.perf_counter()
            for _ in range(inner):
                g(*args)
            times[k].append((time.perf_counter() - t0) / inner)
    return (float(np.median(times[0])) * 1e3, float(np.median(times[1])) * 1e3, same)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per first-call cell")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--fuse", action="store_true", help=argparse.SUPPRESS)
    opts = ap.parse_args(argv)
    if opts.child:
        print(json.dumps(first_call(opts.child, opts.fuse)))
        return
    with open("/proc/cpuinfo") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                   platform.processor())
    print(f"CPU: {cpu} ({os.cpu_count()} logical cores); OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}")
    print(f"{'workload':<12} {'first call, s: cold F / cold T / warm F / warm T':>48} "
          f"{'steady ms: F':>13} {'T':>8} {'T/F':>6} {'bitwise':>7}")
    for name in opts.only.split(","):
        cells = {}
        for fuse in (False, True):
            cold, warm = [], []
            for _ in range(opts.runs):
                cache = tempfile.mkdtemp(prefix="srcad-fusedefault-")
                try:
                    cold.append(in_fresh_process(name, fuse, cache)["first"])
                    warm.append(in_fresh_process(name, fuse, cache)["first"])
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
            cells[fuse] = (statistics.median(cold), statistics.median(warm))
        f_ms, t_ms, same = steady(name, opts.repeat)
        print(f"{name:<12} {cells[False][0]:>18.3f} {cells[True][0]:>7.3f} "
              f"{cells[False][1]:>10.3f} {cells[True][1]:>10.3f} {f_ms:>13.3f} {t_ms:>8.3f} "
              f"{t_ms / f_ms:>6.3f} {same!s:>7}", flush=True)


if __name__ == "__main__":
    main()
