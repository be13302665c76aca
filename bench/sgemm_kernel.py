"""numpy's float32 GEMM throughput with the BLAS kernel this process loaded, at 1 and 2 threads.

OpenBLAS picks its kernel when it loads (threadpoolctl's `architecture`), and
`OPENBLAS_CORETYPE` overrides the pick: on a Zen 5 with `OPENBLAS_CORETYPE=Haswell` (set on
some of the machines here) numpy runs AVX2 kernels at half the AVX-512 kernel's rate. Compare

    python bench/sgemm_kernel.py
    env -u OPENBLAS_CORETYPE python bench/sgemm_kernel.py

Square n x n products, median of 7 (n = 2048) or 50 (n = 512) after one warm-up call.
"""

from __future__ import annotations

import os
import time

import numpy as np
import threadpoolctl


def main() -> None:
    blas = next((i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"), {})
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')} "
          f"{blas.get('internal_api')} {blas.get('version')} kernel {blas.get('architecture')}")
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(threads, user_api="blas"):
            for n in (512, 2048):
                a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
                b = a.copy()
                a @ b
                times = []
                for _ in range(7 if n == 2048 else 50):
                    t = time.perf_counter()
                    a @ b
                    times.append(time.perf_counter() - t)
                print(f"  threads={threads} n={n}: {2 * n ** 3 / np.median(times) / 1e9:.0f} "
                      f"GFLOP/s")


if __name__ == "__main__":
    main()
