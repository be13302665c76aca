"""What `fuse` should default to (issue 25 item 3), and what the tiered default does. For
the README's first example and the zoo's models, three configurations: fuse=False (F),
fuse=True (T) and the default, fuse omitted (A: unfused, fused on a specialisation's third
call; SRCAD_FUSE is cleared for the children):

* calls 1-5 (the first: parse, probe, transform, build, compile, run) in a fresh process with
  a cold kernel cache (a new SRCAD_CACHE_DIR) and with a warm one (the cold run's cache),
  median over --runs processes;
* steady state: the three built and warmed up in one process, called interleaved, medians;
* that every gradient is bit for bit equal: the three configurations, and A's calls 1-5.

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


CONFIGS = ("F", "T", "A")  # fuse=False, fuse=True, fuse omitted (the tiered default)


def transform(kind, fn, wrt, config):
    import srcad
    options = {} if config == "A" else {"fuse": config == "T"}
    return getattr(srcad, kind)(fn, wrt=wrt, **options)


def calls(name: str, config: str, n: int = 5) -> dict:
    """In this (fresh) process: the wall time of calls 1..n (the first includes making the
    transform), and whether their results are bit for bit equal."""
    import hashlib
    sys.path.insert(0, ROOT)
    fn, kind, wrt, args = make(name)
    times, digests = [], set()
    t0 = time.perf_counter()
    g = transform(kind, fn, wrt, config)
    for _ in range(n):
        out = g(*args)
        t1 = time.perf_counter()
        times.append(t1 - t0)
        digests.add(hashlib.sha256(flat(out)).hexdigest())
        t0 = time.perf_counter()
    return {"times": times, "same": len(digests) == 1, "digest": digests.pop()}


def in_fresh_process(name, config, cache) -> dict:
    env = dict(os.environ, SRCAD_CACHE_DIR=cache)
    env.pop("SRCAD_FUSE", None)
    out = subprocess.run([sys.executable, __file__, "--child", name, "--config", config],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def flat(tree):
    import numpy as np
    if isinstance(tree, dict):
        return b"".join(flat(tree[k]) for k in sorted(tree))
    if isinstance(tree, (tuple, list)):
        return b"".join(flat(v) for v in tree)
    return np.asarray(tree).tobytes()


def steady(name: str, repeat: int) -> tuple[list, bool]:
    """([F, T, A] ms per call, all bitwise equal), interleaved in this process; A is past its
    third call (fused) when timed."""
    import numpy as np
    sys.path.insert(0, ROOT)
    os.environ.pop("SRCAD_FUSE", None)
    fn, kind, wrt, args = make(name)
    gs = [transform(kind, fn, wrt, c) for c in CONFIGS]
    outs = set()
    for g in gs:  # warm up: A through its tiers (and pick the number of calls per sample)
        for _ in range(4):
            outs.add(flat(g(*args)))
    t0 = time.perf_counter()
    gs[0](*args)
    inner = max(1, int(0.05 / max(time.perf_counter() - t0, 1e-6)))
    times = [[] for _ in gs]
    for _ in range(repeat):
        for k, g in enumerate(gs):
            t0 = time.perf_counter()
            for _ in range(inner):
                g(*args)
            times[k].append((time.perf_counter() - t0) / inner)
    return [float(np.median(t)) * 1e3 for t in times], len(outs) == 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per first-call cell")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--config", default="A", help=argparse.SUPPRESS)
    opts = ap.parse_args(argv)
    if opts.child:
        print(json.dumps(calls(opts.child, opts.config)))
        return
    with open("/proc/cpuinfo") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                   platform.processor())
    print(f"CPU: {cpu} ({os.cpu_count()} logical cores); OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}")
    print("calls 1-5, ms (median of fresh processes); F fuse=False, T fuse=True, "
          "A default (tiered)")
    for name in opts.only.split(","):
        digests = set()
        for config in CONFIGS:
            cold, warm, same = [], [], True
            for _ in range(opts.runs):
                cache = tempfile.mkdtemp(prefix="srcad-fusedefault-")
                try:
                    for into in (cold, warm):
                        r = in_fresh_process(name, config, cache)
                        into.append(r["times"])
                        same &= r["same"]
                        digests.add(r["digest"])
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
            med = [[statistics.median(c) for c in zip(*x)] for x in (cold, warm)]
            print(f"{name:<12} {config}  cold " + " ".join(f"{t * 1e3:7.1f}" for t in med[0])
                  + "   warm " + " ".join(f"{t * 1e3:7.1f}" for t in med[1])
                  + f"   calls 1-5 bitwise {same}", flush=True)
        (f_ms, t_ms, a_ms), same = steady(name, opts.repeat)
        print(f"{name:<12} steady ms F {f_ms:.3f}  T {t_ms:.3f}  A {a_ms:.3f}   T/F "
              f"{t_ms / f_ms:.3f}  A/T {a_ms / t_ms:.3f}   F, T, A bitwise "
              f"{same and len(digests) == 1}", flush=True)


if __name__ == "__main__":
    main()
