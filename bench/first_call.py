"""Where a transformed function's first call spends its time, stage by stage.

One first call (probe, transform, optimise, memory plan, lower, render, compile; then the
call itself) of the zoo's Transformer block or tiny GPT, float32, in this fresh process with
a cold kernel cache (a new SRCAD_CACHE_DIR), and a second call for scale. Each stage is
timed where srcad.pipeline and srcad.transformed call it; "gcc" is the kernel build inside
lower (srcad.build.cache.get); "call" is what is left: the generated code's first run.
`--cpu` times process CPU (the gcc subprocess's is not counted, so "first" is the Python
side alone, and a busy machine disturbs it less); run with OPENBLAS_NUM_THREADS=1 then.

    python bench/first_call.py block-large --fuse
    OPENBLAS_NUM_THREADS=1 python bench/first_call.py gpt --cpu --runs 5   # 5 processes

`--dump FILE` writes the generated source, the kernels' C and a hash of the gradient, to
check that a change to the stages leaves their output byte for byte as it was.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

STAGES = ["probe", "transform", "optimize", "memplan", "lower", "gcc", "render", "load"]


def one(args) -> dict:
    os.environ["SRCAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="srcad-cold-")
    sys.path.insert(0, os.path.dirname(HERE))
    import numpy as np

    import srcad
    from srcad import memplan, pipeline, transformed
    from srcad.build import cache
    from srcad.zoo import data, gpt, transformer

    clock = time.process_time if args.cpu else time.perf_counter
    spent = dict.fromkeys(STAGES, 0.0)

    def timed(module, name, stage):
        inner = getattr(module, name)

        def wrapper(*a, **k):
            t = clock()
            try:
                return inner(*a, **k)
            finally:
                spent[stage] += clock() - t
        setattr(module, name, wrapper)

    timed(transformed, "probe", "probe")
    timed(pipeline, "transform", "transform")
    timed(pipeline, "finish", "optimize")
    timed(memplan, "plan", "memplan")
    timed(pipeline, "lower", "lower")
    timed(cache, "get", "gcc")
    timed(pipeline, "render", "render")
    timed(pipeline, "load", "load")
    rng = np.random.default_rng(0)
    if args.workload.startswith("block"):
        B, T, C = (8, 64, 128) if args.workload == "block-small" else (8, 128, 512)
        p = transformer.randomize(rng, transformer.init(rng, C, 4, dtype=np.float32))
        x = rng.standard_normal((B, T, C)).astype(np.float32)
        probe = rng.standard_normal((B, T, C)).astype(np.float32)
        g = srcad.grad(transformer.block_loss, wrt=(0, 1), fuse=args.fuse)
        call = (p, x, 4, probe)
    else:
        tok = data.CharTokenizer(data.TEXT)
        params = gpt.init(rng, tok.vocab_size, 64, 4, 2, 32, dtype=np.float32)
        tokens, targets = next(data.batches(rng, tok.encode(data.TEXT), 16, 32))
        g = srcad.value_and_grad(gpt.loss, wrt="params", fuse=args.fuse)
        call = (params, tokens, targets, 4)
    t0 = clock()
    out = g(*call)
    t1 = clock()
    g(*call)
    t2 = clock()
    row = {"first": t1 - t0, **spent, "second": t2 - t1}
    row["lower"] -= row["gcc"]  # (lower's own Python; gcc apart)
    row["call"] = row["first"] - sum(v for k, v in row.items() if k in STAGES)
    if args.dump:
        leaves = []

        def flat(o):
            if isinstance(o, dict):
                for k in sorted(o):
                    flat(o[k])
            elif isinstance(o, (list, tuple)):
                for v in o:
                    flat(v)
            else:
                leaves.append(np.asarray(o))
        flat(out)
        h = hashlib.sha256()
        for a in leaves:
            h.update(a.tobytes() + str(a.dtype).encode() + str(a.shape).encode())
        c = g._last
        with open(args.dump, "w") as f:
            f.write(c.source + "\n#### kernels\n")
            f.write(c.kernels.c_source if c.kernels is not None else "")
            f.write(f"\n#### gradient sha256 {h.hexdigest()}\n")
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", choices=["block-small", "block-large", "gpt"])
    ap.add_argument("--fuse", action="store_true")
    ap.add_argument("--cpu", action="store_true", help="process CPU time, not wall-clock")
    ap.add_argument("--runs", type=int, default=1, help="fresh processes; medians printed")
    ap.add_argument("--dump", help="write generated source, C and a gradient hash here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child or args.runs == 1:
        row = one(args)
        print(" ".join(f"{k}={v:.4f}" for k, v in row.items()))
        return
    rows = []
    for _ in range(args.runs):
        cmd = [sys.executable, __file__, args.workload, "--child"] + \
            (["--fuse"] if args.fuse else []) + (["--cpu"] if args.cpu else [])
        text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        rows.append({k: float(v) for k, v in (kv.split("=") for kv in text.split()[-11:])})
    keys = ["first"] + STAGES + ["call", "second"]
    kind = "cpu" if args.cpu else "wall"
    print(f"{args.workload} fuse={args.fuse} ({kind}, median of {args.runs} processes, s):")
    print("  " + "  ".join(f"{k} {statistics.median(r[k] for r in rows):.3f}" for k in keys))


if __name__ == "__main__":
    main()
