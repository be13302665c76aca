"""The Transformer block's GEMMs inside its fused gradient step against the same products
alone (issue 25: how far is the step's GEMM time from what its GEMMs cost by themselves?).

Records every `gemm(a, b)` of one call of the zoo block's fused gradient (operands copied
with their layouts: transposed views stay transposed), then times (medians):
  - in step: each product as it ran inside the step (15 calls);
  - alone, hot: each product again and again inside one srcad call, its operands in cache;
  - alone, cold: the same after 256 MB were written (operands out of every cache);
  - numpy at the user's BLAS threads: `a @ b` outside srcad, hot (what gflops.py's floor
    is made of, though it times contiguous copies of the operands).
Where srcad pins the BLAS (srcad.build.threads_stats()["blas_pinned"]), srcad's products are
its own row blocks at one BLAS thread; elsewhere they are numpy's.

    python bench/gemm_in_step.py [small|large]      # TOP=24 lists 24 products, not 8
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import srcad  # noqa: E402
from srcad import build, runtime  # noqa: E402
from srcad.zoo import transformer as T  # noqa: E402

SIZES = {"small": (8, 64, 128, 4), "large": (8, 128, 512, 4)}


def _median(fn, before=None, n=9) -> float:
    times = []
    for _ in range(n):
        if before is not None:
            before()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    size = sys.argv[1] if len(sys.argv) > 1 else "large"
    B, Tn, D, H = SIZES[size]
    rng = np.random.default_rng(0)
    p = T.randomize(rng, T.init(rng, D, H, np.float32))
    x = rng.standard_normal((B, Tn, D)).astype(np.float32)
    probe = rng.standard_normal((B, Tn, D)).astype(np.float32)
    g = srcad.grad(T.block_loss, wrt="p", fuse=True)
    g(p, x, H, probe)
    g(p, x, H, probe)
    real = runtime._GEMM[0]
    if real is None:
        print("no C runtime gemm here: nothing to time")
        return
    kept, times = [], []

    def recorder(a, b):
        t = time.perf_counter()
        out = real(a, b)
        times[-1].append(time.perf_counter() - t)
        if recording:  # (copies in the same layout: np.copy keeps C or F order)
            kept.append((np.copy(a, order="K"), np.copy(b, order="K")))
        return out

    runtime._GEMM[0] = recorder
    try:
        recording = True
        times.append([])
        g(p, x, H, probe)
        recording = False
        for _ in range(15):
            times.append([])
            g(p, x, H, probe)
    finally:
        runtime._GEMM[0] = real
    in_step = np.median(np.array(times[1:]), axis=0)
    junk = np.ones(64 << 20, np.float32)
    hot = build.pooled(lambda: [_median(lambda a=a, b=b: real(a, b)) for a, b in kept])()
    cold = build.pooled(lambda: [_median(lambda a=a, b=b: real(a, b),
                                         lambda: junk.__iadd__(1.0)) for a, b in kept])()
    numpy_hot = [_median(lambda a=a, b=b: a @ b) for a, b in kept]
    st = build.threads_stats()
    print(f"block {size} (B{B} T{Tn} D{D}): {len(kept)} products, BLAS pinned "
          f"{st.get('blas_pinned')}, blocks a thread {st.get('blocks_per_thread')}")
    print(f"  in step {in_step.sum() * 1e3:.2f} ms; alone, hot {sum(hot) * 1e3:.2f}; alone, "
          f"cold {sum(cold) * 1e3:.2f}; numpy at the user's BLAS threads, hot "
          f"{sum(numpy_hot) * 1e3:.2f}")
    order = sorted(range(len(kept)), key=lambda i: -in_step[i])
    for i in order[:int(os.environ.get("TOP", "8"))]:
        a, b = kept[i]
        print(f"  {str(a.shape):13} {'T' if not a.flags.c_contiguous else 'N'} @ "
              f"{str(b.shape):13} {'T' if not b.flags.c_contiguous else 'N'}: step "
              f"{in_step[i] * 1e3:6.3f}  hot {hot[i] * 1e3:6.3f}  cold {cold[i] * 1e3:6.3f}  "
              f"numpy {numpy_hot[i] * 1e3:6.3f} ms")


if __name__ == "__main__":
    main()
