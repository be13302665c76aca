"""Is a GEMM split into blocks of rows, or of columns, bitwise the GEMM in one call, on the
BLAS kernel numpy loaded here? (issue 25: where it is, srcad's own threads can share a product
out dynamically under load -- kernels_c/srcad_gemm.h does so by rows where the BLAS is pinned
-- without changing a bit of it.)

Random shapes (m, k, n up to 400, plain and transposed operands, float32 and float64), the
BLAS at one thread; each product computed whole (one cblas call) and as blocks of g rows (the
last block taking the tail) or of g columns, for several g; prints the share of products whose
blocks agree bit for bit with the whole call, and the smallest disagreeing case. The kernel is
the one OpenBLAS chose (OPENBLAS_CORETYPE where set). Then numpy's own `a @ b` of the same
kind of products at one thread and at two (does the BLAS's thread count change their bits?
where it does, srcad pins the BLAS), and the granule and block floor srcad measures
(srcad/build/blas.py `row_split`):

    python bench/split_bits.py
    env -u OPENBLAS_CORETYPE python bench/split_bits.py
"""

from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from srcad.build import blas  # noqa: E402


def _call(fn, a, b, out, rows=(0, None), cols=(0, None)) -> None:
    """out[r0:r1, c0:c1] = (a @ b)[r0:r1, c0:c1] in one row-major cblas call."""
    size = a.itemsize
    r0, r1 = rows[0], rows[1] if rows[1] is not None else a.shape[0]
    c0, c1 = cols[0], cols[1] if cols[1] is not None else b.shape[1]
    trans_a, lda, a_row = ((111, a.strides[0] // size, a.strides[0]) if a.flags.c_contiguous
                           else (112, a.strides[1] // size, size))
    trans_b, ldb, b_col = ((111, b.strides[0] // size, size) if b.flags.c_contiguous
                           else (112, b.strides[1] // size, b.strides[1]))
    fn(101, trans_a, trans_b, r1 - r0, c1 - c0, a.shape[1], 1.0, a.ctypes.data + r0 * a_row,
       lda, b.ctypes.data + c0 * b_col, ldb, 0.0,
       out.ctypes.data + r0 * out.strides[0] + c0 * size, out.shape[1])


def _blocks(total: int, g: int) -> list:
    starts = list(range(0, total, g))
    if len(starts) > 1 and total - starts[-1] < 2:
        starts.pop()  # (no 1-wide tail: it joins the last block)
    return list(zip(starts, starts[1:] + [total]))


def _product(rng, dt):
    """Operands of a random product (m, k, n up to 400, each operand plain or transposed) and
    its case (m, k, n, "N"/"T", "N"/"T")."""
    m, k, n = (int(v) for v in rng.integers(2, 400, 3))
    t_a, t_b = (bool(v) for v in rng.integers(0, 2, 2))
    a = rng.standard_normal((k, m) if t_a else (m, k)).astype(dt)
    b = rng.standard_normal((n, k) if t_b else (k, n)).astype(dt)
    return (a.T if t_a else a), (b.T if t_b else b), (m, k, n, "T" if t_a else "N",
                                                       "T" if t_b else "N")


def main() -> None:
    found = blas.thread_functions()
    if found is None:
        print("no OpenBLAS found in this process")
        return
    set_threads = ctypes.CFUNCTYPE(None, ctypes.c_int)(found[0])
    fns = blas.gemm_functions(found[2])
    try:
        from threadpoolctl import threadpool_info
        kernel = [i.get("architecture") for i in threadpool_info() if i.get("architecture")]
    except ImportError:
        kernel = ["? (threadpoolctl not installed)"]
    print(f"OpenBLAS {found[2].rsplit('/', 1)[-1]}, kernel {kernel}, OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE')}, one thread")
    set_threads(1)
    rng = np.random.default_rng(0)
    trials = int(os.environ.get("N", "300"))
    for dt, addr in ((np.float32, fns[0]), (np.float64, fns[1])):
        fn = blas._cblas(addr, dt)
        for axis in ("rows", "columns"):
            for g in (8, 12, 16, 24, 64):
                same, worst = 0, None
                for _ in range(trials):
                    a, b, case = _product(rng, dt)
                    m, k, n = case[:3]
                    whole, parts = np.empty((m, n), dt), np.empty((m, n), dt)
                    _call(fn, a, b, whole)
                    for lo, hi in _blocks(m if axis == "rows" else n, g):
                        if axis == "rows":
                            _call(fn, a, b, parts, rows=(lo, hi))
                        else:
                            _call(fn, a, b, parts, cols=(lo, hi))
                    if np.array_equal(whole, parts):
                        same += 1
                    elif worst is None or m * k * n < worst[0]:
                        worst = (m * k * n, case)
                print(f"  {np.dtype(dt).name:8s} blocks of {g:2d} {axis:7s}: "
                      f"{same}/{trials} bit for bit the whole call"
                      + (f"; smallest that differs (m, k, n, a, b) {worst[1]}" if worst else ""),
                      flush=True)
    for dt in (np.float32, np.float64):
        same, worst = 0, None
        for _ in range(trials):
            a, b, case = _product(rng, dt)
            set_threads(2)
            at_two = a @ b
            set_threads(1)
            if np.array_equal(at_two, a @ b):
                same += 1
            elif worst is None or np.prod(case[:3]) < worst[0]:
                worst = (np.prod(case[:3]), case)
        print(f"  {np.dtype(dt).name:8s} numpy's a @ b at 2 threads and at 1: {same}/{trials} "
              "the same bits" + (f"; smallest that differs {worst[1]}" if worst else ""))
    for dt, addr in ((np.float32, fns[0]), (np.float64, fns[1])):
        print(f"  {np.dtype(dt).name:8s} srcad's row split (granule, block floor m*k*n): "
              f"{blas.row_split(addr, dt)}")


if __name__ == "__main__":
    main()
