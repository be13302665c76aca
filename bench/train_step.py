"""One training step of the zoo's Transformer block: srcad + srcad.optim.Adam vs torch eager.

A step is forward, backward and an Adam update of every block parameter, for the loss
<block(x), probe> (`srcad.zoo.transformer.block_loss`; its twin in tests/torch_twins.py).
Both sides start from the same float32 weights, run in the same process, interleaved
(srcad step, torch step, ...), and the median of the repeats is reported with the ratio
srcad / torch. Sizes: (batch 8, seq 64, width 128, 4 heads) and (8, 128, 512, 8 heads).

    python bench/train_step.py [--repeat N] [--dtype float32|float64]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import torch_twins as TT

import srcad
from srcad.optim import Adam
from srcad.zoo import transformer as T

SIZES = [(8, 64, 128, 4), (8, 128, 512, 8)]


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return (f"{blas.get('name')} {blas.get('version')} (from numpy's build config; "
                "threadpoolctl is not installed, so the thread count is not known)")
    pools = [f"{p['internal_api']} {p.get('version')} ({p.get('architecture')}, "
             f"{p['num_threads']} threads)" for p in threadpool_info() if p["user_api"] == "blas"]
    return "; ".join(pools) or "unknown"


def make_steps(batch, seq, width, heads, dtype):
    rng = np.random.default_rng(0)
    p = T.init(rng, width, heads, dtype)
    x = rng.standard_normal((batch, seq, width)).astype(dtype)
    probe = rng.standard_normal((batch, seq, width)).astype(dtype)

    params = {k: v.copy() for k, v in p.items()}
    opt = Adam(params, lr=1e-3)
    grad_fn = srcad.grad(T.block_loss, wrt="p")

    def srcad_step():
        opt.step(grad_fn(params, x, heads, probe))

    tp = TT.to_torch(p)
    tx, tprobe = torch.tensor(x), torch.tensor(probe)
    topt = torch.optim.Adam(list(tp.values()), lr=1e-3)

    def torch_step():
        topt.zero_grad(set_to_none=True)
        TT.block_loss(tp, tx, heads, tprobe).backward()
        topt.step()

    return srcad_step, torch_step, params, tp


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = ap.parse_args(argv)
    dtype = np.dtype(args.dtype).type

    print(f"numpy {np.__version__}, BLAS: {blas_info()}")
    print(f"torch {torch.__version__}, torch.get_num_threads() = {torch.get_num_threads()}, "
          f"os.cpu_count() = {os.cpu_count()}, dtype {args.dtype}, median of {args.repeat}\n")
    header = (f"{'batch':>5} {'seq':>4} {'width':>5} {'heads':>5} | {'srcad ms':>9} "
              f"{'torch ms':>9} {'srcad/torch':>11}")
    print(header)
    print("-" * len(header))
    for batch, seq, width, heads in SIZES:
        srcad_step, torch_step, params, tp = make_steps(batch, seq, width, heads, dtype)
        for _ in range(2):  # warm up: generate the gradient, first BLAS calls, allocator
            srcad_step()
            torch_step()
        ts, tt = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            srcad_step()
            t1 = time.perf_counter()
            torch_step()
            t2 = time.perf_counter()
            ts.append(t1 - t0)
            tt.append(t2 - t1)
        # Same updates on both sides: the parameters still agree after all the steps.
        drift = max(float(np.max(np.abs(params[k] - tp[k].detach().numpy()))) for k in params)
        s, t = np.median(ts) * 1e3, np.median(tt) * 1e3
        print(f"{batch:>5} {seq:>4} {width:>5} {heads:>5} | {s:9.2f} {t:9.2f} {s / t:11.2f}"
              f"   (max |param srcad - param torch| after {args.repeat + 2} steps: {drift:.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
