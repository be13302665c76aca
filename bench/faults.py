"""Minor page faults per call of the Transformer block's gradient, in a process running srcad
alone (no torch or jax loaded to move glibc's mmap threshold): unfused and fused, memory
plan on and off.

    OPENBLAS_NUM_THREADS=1 python bench/faults.py [B T D]     # default 8 64 128

Each configuration runs in a fresh subprocess: 5 warm-up calls, then the faults of 20 calls
(resource.getrusage's ru_minflt) divided by 20.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def one(B, T, D, fuse, plan):
    sys.path.insert(0, ROOT)
    import numpy as np

    import srcad
    from srcad.zoo import transformer as Z

    rng = np.random.default_rng(0)
    p = Z.randomize(rng, Z.init(rng, D, 4, np.float32))
    x = rng.standard_normal((B, T, D)).astype(np.float32)
    probe = rng.standard_normal((B, T, D)).astype(np.float32)
    g = srcad.grad(Z.block_loss, wrt="p", fuse=fuse, memory_plan=plan)
    for _ in range(5):
        g(p, x, 4, probe)
    r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        g(p, x, 4, probe)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0) / 20
    print(f"B{B} T{T} D{D} fuse={fuse} memory_plan={plan}: {faults:.0f} minor faults per call")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        B, T, D, fuse, plan = sys.argv[2:7]
        one(int(B), int(T), int(D), fuse == "1", plan == "1")
        return
    shape = sys.argv[1:4] or ["8", "64", "128"]
    for fuse in ("0", "1"):
        for plan in ("0", "1"):
            subprocess.run([sys.executable, __file__, "--one", *shape, fuse, plan], check=True)


if __name__ == "__main__":
    main()
