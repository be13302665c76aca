"""The demo's training step, piece by piece: batch, fused gradient, Adam (issue 15).

The same model, data and optimiser as `python -m srcad demo` (a 2-layer GPT, width 64, 4
heads, context 32, batch 16, float32, fused gradient, Adam), timed per piece over STEPS
steps after 100 of warm-up; prints ms per step and the tokens/s the step allows.

    python bench/demo_step.py            # 600 steps
    python bench/demo_step.py 1500 --runs 3   # fresh processes, each printed
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from srcad import api  # noqa: E402
from srcad.optim import Adam  # noqa: E402
from srcad.zoo import data, gpt  # noqa: E402


def one(steps: int) -> str:
    width, heads, layers, context, batch, lr = 64, 4, 2, 32, 16, 4e-3
    tok = data.CharTokenizer(data.TEXT)
    ids = tok.encode(data.TEXT)
    rng = np.random.default_rng(0)
    params = gpt.init(rng, tok.vocab_size, width, heads, layers, context, dtype=np.float32)
    grad_fn = api.value_and_grad(gpt.loss, wrt="params", fuse=True)
    opt = Adam(params, lr=lr)
    stream = data.batches(rng, ids, batch, context)
    spent = np.zeros(3)
    for step in range(steps + 100):
        t0 = time.perf_counter()
        tokens, targets = next(stream)
        t1 = time.perf_counter()
        loss, grads = grad_fn(params, tokens, targets, heads)
        t2 = time.perf_counter()
        opt.step(grads)
        float(loss)
        t3 = time.perf_counter()
        if step >= 100:
            spent += (t1 - t0, t2 - t1, t3 - t2)
    per = spent / steps * 1e3
    total = per.sum()
    return (f"batch {per[0]:.3f}  grad {per[1]:.3f}  adam {per[2]:.3f}  total {total:.3f} ms "
            f"-> {batch * context / total * 1e3:,.0f} tokens/s  (load {os.getloadavg()[0]:.2f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("steps", type=int, nargs="?", default=600)
    ap.add_argument("--runs", type=int, default=1, help="fresh processes")
    args = ap.parse_args()
    if args.runs == 1:
        print(one(args.steps))
        return
    for _ in range(args.runs):
        subprocess.run([sys.executable, __file__, str(args.steps)], check=True)


if __name__ == "__main__":
    main()
