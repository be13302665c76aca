"""Issue 15, item 2 (the forward): where ``x @ W`` with x (B, M, K) and W (K, N) computed as one
2-D GEMM, ``(x.reshape(B*M, K) @ W).reshape((B, M, N))``, is bitwise equal to numpy's batched
product (a loop of B GEMMs), and where it is faster.

1. Bitwise map, at each BLAS thread count: a grid of (B, M, K, N) x {float32, float64} x
   layouts (x and W C-contiguous; W in Fortran order, as ``x @ W.T``; x a transposed view,
   whose reshape copies). For each shape: is the one GEMM bit for bit numpy's product, and
   does srcad's rule (`srcad.runtime_linalg.matmul_forward_form`) rewrite it? The rule must
   rewrite no shape that is not bitwise; the counts outside it say what it leaves on the
   table. (The rule probes each shape class once per process, so its answer is this BLAS's:
   ``OPENBLAS_CORETYPE=Haswell`` maps OpenBLAS's AVX2 kernels on an AVX-512 machine.)
2. Speed, interleaved medians (µs) at each thread count: the Transformer block's and the GPT's
   products, small ones, and a transposed view of x (copy + one GEMM against the batched
   product on strided matrices).

    python bench/matmul_forward.py [--threads 1 2] [--cap 3e7] [--rounds 21]

Needs threadpoolctl (``pip install '.[bench]'``). Writes bench/results/matmul_forward.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from srcad.runtime_linalg import matmul_forward_form

GRID = {"B": [2, 3, 8, 16, 64], "M": [1, 2, 3, 4, 7, 8, 16, 17, 32, 64, 128],
        "K": [1, 2, 3, 8, 16, 32, 64, 100, 128, 256, 257, 300, 512, 1024, 2048],
        "N": [1, 2, 3, 8, 16, 17, 32, 48, 64, 100, 128, 256, 512, 513, 1024, 2048]}
LAYOUTS = {"C": "x, W C-contiguous", "W.T": "W in Fortran order", "x view": "x a transposed view"}

SPEED = [  # (label, B, M, K, N)
    ("block B8 T64 D128: x @ w_q", 8, 64, 128, 128),
    ("block B8 T64 D128: x @ w_fc", 8, 64, 128, 512),
    ("block B8 T64 D128: h @ w_proj", 8, 64, 512, 128),
    ("block B8 T128 D512: x @ w_q", 8, 128, 512, 512),
    ("block B8 T128 D512: x @ w_fc", 8, 128, 512, 2048),
    ("block B8 T128 D512: h @ w_proj", 8, 128, 2048, 512),
    ("gpt B16 T32 D64: x @ w_q", 16, 32, 64, 64),
    ("gpt B16 T32 D64: x @ w_fc", 16, 32, 64, 256),
    ("gpt B16 T32 D64: h @ w_proj", 16, 32, 256, 64),
    ("zoo test size (2, 8, 16) @ (16, 16)", 2, 8, 16, 16),
    ("small (2, 16, 32) @ (32, 32)", 2, 16, 32, 32),
    ("small (4, 16, 64) @ (64, 64)", 4, 16, 64, 64),
    ("many rows (64, 16, 64) @ (64, 64)", 64, 16, 64, 64),
]


def _operands(rng, dtype, layout, B, M, K, N):
    a = rng.standard_normal((B, M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    if layout == "W.T":
        b = np.asfortranarray(b)
    if layout == "x view":
        a = np.transpose(rng.standard_normal((M, B, K)).astype(dtype), (1, 0, 2))
    return a, b


def _rule(a, b):
    return matmul_forward_form(a.shape, b.shape, a.dtype, b.dtype, a.flags.c_contiguous,
                               b.flags.c_contiguous) is not None


def bitwise_map(cap):
    rng = np.random.default_rng(0)
    rows = []
    for dtype in ("float32", "float64"):
        for B, M, K, N in itertools.product(*GRID.values()):
            if B * M * K * N > cap:
                continue
            for layout in LAYOUTS:
                a, b = _operands(rng, dtype, layout, B, M, K, N)
                one = (a.reshape(B * M, K) @ b).reshape(B, M, N)
                rows.append((dtype, layout, B, M, K, N, bool(np.array_equal(a @ b, one)),
                             _rule(a, b)))
    summary = {}
    for dtype, layout in itertools.product(("float32", "float64"), LAYOUTS):
        sel = [r for r in rows if r[0] == dtype and r[1] == layout]
        summary[f"{dtype} {layout}"] = {
            "shapes": len(sel), "bitwise": sum(r[6] for r in sel),
            "rewritten": sum(r[7] for r in sel),
            "rewritten_not_bitwise": [r[2:6] for r in sel if r[7] and not r[6]],
            "bitwise_not_rewritten": sum(r[6] and not r[7] for r in sel)}
    return rows, summary


def _median_us(f, rounds):
    f()
    ts = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6


def speed(rounds):
    rng = np.random.default_rng(1)
    out = []
    for label, B, M, K, N in SPEED:
        for layout in ("C", "x view"):
            a, b = _operands(rng, np.float32, layout, B, M, K, N)
            fns = {"batched": lambda a=a, b=b: a @ b,
                   "one GEMM": lambda a=a, b=b, s=(B, M, K, N):
                   (a.reshape(s[0] * s[1], s[2]) @ b).reshape(s[0], s[1], s[3])}
            r = max(5, min(rounds * 4, int(4e8 / (2 * B * M * K * N) * rounds / 21)))
            t = {k: [] for k in fns}
            for _ in range(3):  # interleaved: three passes of each, the best median
                for k, f in fns.items():
                    t[k].append(_median_us(f, r))
            t = {k: min(v) for k, v in t.items()}
            eq = bool(np.array_equal(a @ b, fns["one GEMM"]()))
            out.append({"product": label, "layout": layout, "shape": (B, M, K, N), "us": t,
                        "bitwise": eq, "srcad rewrites": _rule(a, b)})
            print(f"  {label:<38} {layout:<7} batched {t['batched']:9.1f} µs  one GEMM "
                  f"{t['one GEMM']:9.1f} µs  ({t['batched'] / t['one GEMM']:.2f}x, "
                  f"{'=' if eq else '≠'}; srcad: "
                  f"{'one GEMM' if out[-1]['srcad rewrites'] else 'batched'})", flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--cap", type=float, default=3e7, help="largest B*M*K*N of the map")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--skip-map", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_info, threadpool_limits
    blas = [(i.get("internal_api"), i.get("version"), i.get("architecture"))
            for i in threadpool_info() if i.get("user_api") == "blas"]
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[:3]
    result = {"command": "python bench/matmul_forward.py" + ("" if argv is None else " "
              + " ".join(argv)), "numpy": np.__version__, "blas": blas, "by_threads": {}}
    for n in args.threads:
        with threadpool_limits(n):
            print(f"-- {n} BLAS thread(s), {blas}", flush=True)
            entry = {}
            if not args.skip_map:
                _, summary = bitwise_map(args.cap)
                entry["bitwise_map"] = summary
                for k, s in summary.items():
                    print(f"  map {k:<18} {s['shapes']:5d} shapes, {s['bitwise']:5d} bitwise, "
                          f"srcad rewrites {s['rewritten']:5d}, of which NOT bitwise "
                          f"{len(s['rewritten_not_bitwise'])}; bitwise but kept "
                          f"{s['bitwise_not_rewritten']}", flush=True)
            if not args.skip_speed:
                entry["speed"] = speed(args.rounds)
            result["by_threads"][str(n)] = entry
    with open("/proc/loadavg") as f:
        load1 = f.read().split()[:3]
    result["loadavg"] = [load0, load1]
    print(f"loadavg {' '.join(load0)} -> {' '.join(load1)} ({os.cpu_count()} cores)")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "matmul_forward.json"), "w") as f:
        json.dump(result, f, indent=1)
    bad = [k for e in result["by_threads"].values() for k, s in e.get("bitwise_map", {}).items()
           if s["rewritten_not_bitwise"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
