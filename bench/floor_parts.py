"""What the GEMM floor of bench/gflops.py assumes, measured: each GEMM repeated (the floor),
the same GEMMs once each in sequence (warm caches), and once each after evicting the caches
(32 MB touched before each: cold), on CPU time; and numpy's batched matmul on the attention
heads as the block has them (transposed views of (B, T, H, D/H)) against contiguous heads.

    OPENBLAS_NUM_THREADS=1 python bench/floor_parts.py [B T D] [--rounds 3]

Issue 25: the fused step's GEMM statements take longer than the floor's GEMMs because the
floor repeats each GEMM on operands already in cache; this prints how much of that is cache.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gflops import gemms  # noqa: E402

clock = time.process_time


def med(f, n=40):
    out = []
    for _ in range(n):
        t = clock()
        f()
        out.append(clock() - t)
    return statistics.median(out)


def main():
    nums = [int(a) for a in sys.argv[1:] if a.isdigit()]
    B, Tn, D = nums[:3] if len(nums) >= 3 else (8, 64, 128)
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    rng = np.random.default_rng(0)
    calls = []
    for m, k, n in gemms(B, Tn, D):
        a, b, dc = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n)))
        calls += [lambda a=a, b=b: a @ b, lambda dc=dc, b=b: dc @ b.T, lambda a=a, dc=dc: a.T @ dc]
    junk = np.ones(8 << 20, np.float32)

    def sequence(cold):
        total = 0.0
        for f in calls:
            if cold:
                junk[::16] += 1  # every cache line of 32 MB
            t = clock()
            f()
            total += clock() - t
        return total

    print(f"B{B} T{Tn} D{D}, {len(calls)} GEMMs, CPU time, ms (rounds of medians):")
    for _ in range(rounds):
        rep = sum(med(f) for f in calls)
        warm = statistics.median(sequence(False) for _ in range(15))
        cold = statistics.median(sequence(True) for _ in range(15))
        print(f"  each repeated (the floor) {rep * 1e3:.2f}   once each in sequence "
              f"{warm * 1e3:.2f}   once each, caches evicted {cold * 1e3:.2f}")
    H = 4
    q, k = (rng.standard_normal((B, Tn, D)).astype(np.float32).reshape(B, Tn, H, D // H)
            .transpose(0, 2, 1, 3) for _ in range(2))
    qc, kc = np.ascontiguousarray(q), np.ascontiguousarray(k)
    att = rng.standard_normal((B, H, Tn, Tn)).astype(np.float32)
    print("  heads as the block has them (strided views) / contiguous copies, ms:")
    print(f"    q @ k^T   {med(lambda: q @ np.swapaxes(k, -1, -2)) * 1e3:.3f} / "
          f"{med(lambda: qc @ np.swapaxes(kc, -1, -2)) * 1e3:.3f}")
    print(f"    att @ v   {med(lambda: att @ k) * 1e3:.3f} / {med(lambda: att @ kc) * 1e3:.3f}")


if __name__ == "__main__":
    main()
