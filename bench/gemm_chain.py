"""Issue 25: can srcad compute numpy's float32 products itself, bit for bit?

If the BLAS kernel numpy loaded sums every element of `A @ B` as one chain of fused
multiply-adds over k in order, starting from zero, and splits a long k into blocks whose chains
are added into C one after another, then any code that keeps that order (its own register
tiles, its own epilogue -- a bias, a GELU -- applied while the tile is in registers, a whole
attention head in L2) gets numpy's bits. This script tests that model against numpy at one BLAS
thread, for float32 operands as numpy hands them to cblas (plain and transposed), and looks for
the k-block rule among OpenBLAS's (blocks of Q while 2Q or more is left, then two halves rounded
up to an unroll, then the rest). It then times a plain AVX-512 register-tile kernel that keeps
the order against numpy's loop of one cblas call per matrix, on a stack of 32 products of
128 x 128 x 128 (the shape of the Transformer block's attention products), operands in cache.

    python bench/gemm_chain.py            # the model, per shape; then the stack's timing
    OPENBLAS_CORETYPE=Haswell python bench/gemm_chain.py

Needs a C compiler (`cc`); the timing needs AVX-512F. Measured on an Intel Xeon (family 6 model
167, SkylakeX kernel): REPORT.md, "numpy's float32 products as chains of FMAs".
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import threadpoolctl

SOURCE = r"""
#include <math.h>
#include <stdint.h>
/* C = A @ B, A (m, k) with strides (sa0, sa1), B (k, n) with (sb0, sb1), C (m, n) contiguous:
 * every element one fmaf chain over k in order, from zero */
void chain(int m, int n, int k, const float *a, int64_t sa0, int64_t sa1, const float *b,
           int64_t sb0, int64_t sb1, float *c)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0.0f;
            for (int p = 0; p < k; p++) s = fmaf(a[i * sa0 + p * sa1], b[p * sb0 + j * sb1], s);
            c[i * n + j] = s;
        }
}
#ifdef __AVX512F__
#include <immintrin.h>
#define TILE(R)                                                                             \
static void tile##R(int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc) \
{                                                                                           \
    __m512 s[R][2];                                                                         \
    for (int r = 0; r < R; r++) s[r][0] = s[r][1] = _mm512_setzero_ps();                    \
    for (int p = 0; p < k; p++) {                                                           \
        __m512 b0 = _mm512_loadu_ps(b + (int64_t)p * ldb);                                  \
        __m512 b1 = _mm512_loadu_ps(b + (int64_t)p * ldb + 16);                             \
        for (int r = 0; r < R; r++) {                                                       \
            __m512 x = _mm512_set1_ps(a[(int64_t)r * lda + p]);                             \
            s[r][0] = _mm512_fmadd_ps(x, b0, s[r][0]);                                      \
            s[r][1] = _mm512_fmadd_ps(x, b1, s[r][1]);                                      \
        }                                                                                   \
    }                                                                                       \
    for (int r = 0; r < R; r++) {                                                           \
        _mm512_storeu_ps(c + (int64_t)r * ldc, s[r][0]);                                    \
        _mm512_storeu_ps(c + (int64_t)r * ldc + 16, s[r][1]);                               \
    }                                                                                       \
}
TILE(12)
TILE(4)
/* a stack of C-contiguous products, n a multiple of 32, m a multiple of 4 */
int stack(int batch, int m, int n, int k, const float *a, const float *b, float *c)
{
    if (n % 32 || m % 4) return 0;
    for (int q = 0; q < batch; q++) {
        const float *aq = a + (int64_t)q * m * k, *bq = b + (int64_t)q * k * n;
        float *cq = c + (int64_t)q * m * n;
        for (int j = 0; j < n; j += 32) {
            int i = 0;
            for (; i + 12 <= m; i += 12) tile12(k, aq + (int64_t)i * k, k, bq + j, n, cq + (int64_t)i * n + j, n);
            for (; i < m; i += 4) tile4(k, aq + (int64_t)i * k, k, bq + j, n, cq + (int64_t)i * n + j, n);
        }
    }
    return 1;
}
#endif
"""


def build() -> ctypes.CDLL:
    d = tempfile.mkdtemp(prefix="gemm_chain_")
    src, lib = os.path.join(d, "chain.c"), os.path.join(d, "chain.so")
    with open(src, "w") as f:
        f.write(SOURCE)
    subprocess.run(["cc", "-O3", "-march=native", "-ffp-contract=off", "-shared", "-fPIC", src,
                    "-o", lib, "-lm"], check=True)
    return ctypes.CDLL(lib)


def chained(lib, a, b):
    """the model's product of one k block"""
    m, k = a.shape
    n = b.shape[1]
    c = np.empty((m, n), np.float32)
    s = [x // 4 for x in a.strides + b.strides]
    lib.chain(m, n, k, ctypes.c_void_p(a.ctypes.data), ctypes.c_int64(s[0]),
              ctypes.c_int64(s[1]), ctypes.c_void_p(b.ctypes.data), ctypes.c_int64(s[2]),
              ctypes.c_int64(s[3]), ctypes.c_void_p(c.ctypes.data))
    return c


def blocks(k: int, q: int, unroll: int) -> tuple[int, ...]:
    out, rest = [], k
    while rest > 0:
        step = q if rest >= 2 * q else \
            -(-(rest // 2) // unroll) * unroll if rest > q else rest
        out.append(step)
        rest -= step
    return tuple(out)


def model(lib, a, b, split) -> np.ndarray:
    c, p = None, 0
    for step in split:
        part = chained(lib, a[:, p:p + step], b[p:p + step])
        c = part if c is None else c + part
        p += step
    return c


def main() -> None:
    blas = next((i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"), {})
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')} "
          f"{blas.get('internal_api')} {blas.get('version')} kernel {blas.get('architecture')}, "
          "one BLAS thread, float32")
    lib = build()
    rng = np.random.default_rng(0)
    rules = [(q, u) for q in (128, 192, 256, 320, 384, 448, 512, 640, 768) for u in (1, 2, 4, 8, 16, 32)]
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        for m, n, k in ((128, 128, 64), (128, 128, 128), (128, 128, 448), (1024, 512, 512),
                        (256, 512, 1024), (256, 256, 2048), (256, 256, 1000), (300, 200, 1500)):
            for spelling in ("a @ b", "a.T @ b", "a @ b.T"):
                a = rng.standard_normal((k, m) if "a.T" in spelling else (m, k), np.float32)
                b = rng.standard_normal((n, k) if "b.T" in spelling else (k, n), np.float32)
                a = a.T if "a.T" in spelling else a
                b = b.T if "b.T" in spelling else b
                numpy_bits = a @ b
                found = next((s for s in dict.fromkeys(blocks(k, q, u) for q, u in rules)
                              if np.array_equal(model(lib, a, b, s), numpy_bits)), None)
                share = np.mean(model(lib, a, b, (k,)) == numpy_bits)
                print(f"  {m:5d} x {n:5d} x {k:5d}  {spelling:8s}  "
                      + (f"chains over k blocks {found}" if found else
                         f"no chain model fits (one chain: {share:.1%} of elements equal)"))
        if not hasattr(lib, "stack"):
            print("no AVX-512F: no timing")
            return
        batch, m, n, k = 32, 128, 128, 128
        a = rng.standard_normal((batch, m, k), np.float32)
        b = rng.standard_normal((batch, k, n), np.float32)
        c = np.empty((batch, m, n), np.float32)

        def tiles():
            lib.stack(batch, m, n, k, ctypes.c_void_p(a.ctypes.data),
                      ctypes.c_void_p(b.ctypes.data), ctypes.c_void_p(c.ctypes.data))
            return c

        print(f"  stack {batch} x ({m} x {n} x {k}): register tiles bitwise numpy's: "
              f"{np.array_equal(tiles(), a @ b)}")
        for _ in range(3):
            row = []
            for name, f in (("numpy (a cblas call a matrix)", lambda: a @ b),
                            ("12x32 / 4x32 register tiles", tiles)):
                times = []
                for _ in range(40):
                    t = time.perf_counter()
                    f()
                    times.append(time.perf_counter() - t)
                row.append(f"{name} {2 * batch * m * n * k / np.median(times) / 1e9:.0f} GFLOP/s")
            print("   ", "; ".join(row))


if __name__ == "__main__":
    sys.exit(main())
