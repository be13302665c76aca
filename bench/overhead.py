"""Overhead of srcad's generated gradient against a hand-written numpy backward.

A two-layer tanh MLP with an MSE loss (bench/models.py), at a small size (batch 4, width 16)
where dispatch dominates and a large one (batch 512, width 1024) where BLAS does. Both
sides run in the same process, interleaved, and the ratio of medians is reported; at the large
size each side's calls start after `--settle` seconds idle (default 0.25: numpy's BLAS threads
spin after its GEMMs, which slowed srcad's calls timed right after the hand-written ones).

    python bench/overhead.py [--repeat N] [--settle S]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

import srcad  # noqa: E402

SIZES = {"small": (4, 16), "large": (512, 1024)}


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    pools = [f"{p['internal_api']} {p.get('version')} ({p.get('architecture')}, "
             f"{p['num_threads']} threads)" for p in threadpool_info() if p["user_api"] == "blas"]
    return "; ".join(pools) or "unknown"


def setup(batch, width, dtype=np.float64):
    rng = np.random.default_rng(0)
    W1 = rng.standard_normal((width, width)) / np.sqrt(width)
    W2 = rng.standard_normal((width, width)) / np.sqrt(width)
    b1, b2 = rng.standard_normal(width), rng.standard_normal(width)
    x, y = rng.standard_normal((batch, width)), rng.standard_normal((batch, width))
    return tuple(a.astype(dtype) for a in (W1, b1, W2, b2, x, y))


def time_pair(f, g, args, repeat, inner, settle=0.0):
    """Interleaved timings of f and g (seconds per call): the medians. `settle`: seconds idle
    before each side's calls (OpenBLAS's workers spin about a tenth of a second after numpy's
    GEMMs, and the other side timed inside that window shares the cores with them)."""
    tf, tg = [], []
    for _ in range(repeat):
        for fn, out in ((f, tf), (g, tg)):
            time.sleep(settle)
            t0 = time.perf_counter()
            for _ in range(inner):
                fn(*args)
            out.append((time.perf_counter() - t0) / inner)
    return float(np.median(tf)), float(np.median(tg))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=31)
    ap.add_argument("--settle", type=float, default=0.25,
                    help="seconds idle before each side's timed calls of the large size")
    args = ap.parse_args(argv)
    grad = srcad.grad(models.mlp2_loss, wrt=(0, 1, 2, 3))
    print(f"BLAS: {blas_info()}")
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')} "
          f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE')}")
    print(f"{'size':<6} {'batch':>5} {'width':>5} {'srcad':>12} {'by hand':>12} {'ratio':>6}")
    for label, (batch, width) in SIZES.items():
        data = setup(batch, width)
        ours, ref = grad(*data), models.mlp2_grad_by_hand(*data)
        for a, b in zip(ours, ref):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
        inner = 2000 if label == "small" else 3
        t_src, t_hand = time_pair(grad, models.mlp2_grad_by_hand, data, args.repeat, inner,
                                  args.settle if label == "large" else 0.0)
        print(f"{label:<6} {batch:>5} {width:>5} {t_src * 1e6:>10.1f}us {t_hand * 1e6:>10.1f}us "
              f"{t_src / t_hand:>6.3f}")


if __name__ == "__main__":
    main()
