"""Issue 25 item 2, step 1: are row blocks of a one-thread OpenBLAS GEMM bitwise the rows of
the whole product? (ctypes on numpy's own OpenBLAS: scipy_cblas_?gemm64_.)

    python bench/gemm_bits.py blocks    # blocks of 2..1000 rows, any start: 440/720 f32 differ
    python bench/gemm_bits.py granule   # which block sizes / starts keep the bits (12 f32, 2 f64)
    python bench/gemm_bits.py aligned   # starts at multiples of 12, tail merged: 0/390 differ

Also prints where numpy's 1- and 2-thread products differ. Results and the machine they were
measured on: the gemmsplit report (REPORT.md / the lead's notes).
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402

from srcad.build import blas  # noqa: E402

path = blas.loaded_libraries()[0]
lib = ctypes.CDLL(path)
setn = lib.scipy_openblas_set_num_threads64_; setn.argtypes = [ctypes.c_int]
getn = lib.scipy_openblas_get_num_threads64_; getn.restype = ctypes.c_int
I = ctypes.c_int64
fns = {}
for dt, name, ct in ((np.float32, "scipy_cblas_sgemm64_", ctypes.c_float),
                     (np.float64, "scipy_cblas_dgemm64_", ctypes.c_double)):
    f = getattr(lib, name)
    P = ctypes.c_void_p
    f.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, I, I, I, ct, P, I, P, I, ct, P, I]
    f.restype = None
    fns[np.dtype(dt)] = f

def op(a):
    """(trans, ld) for a 2-D operand as cblas row-major sees it, or None."""
    s0, s1 = (s // a.itemsize for s in a.strides)
    if s1 == 1 and s0 >= max(1, a.shape[1]):
        return 111, s0
    if s0 == 1 and s1 >= max(1, a.shape[0]):
        return 112, s1
    return None

def gemm(a, b, out):
    m, k = a.shape; n = b.shape[1]
    ta, lda = op(a); tb, ldb = op(b)
    fns[a.dtype](101, ta, tb, m, n, k, 1.0, a.ctypes.data, lda, b.ctypes.data, ldb, 0.0,
                 out.ctypes.data, out.strides[0] // out.itemsize)

def rows_split(a, b, chunk):
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    for r in range(0, a.shape[0], chunk):
        gemm(a[r:r + chunk], b, out[r:r + chunk])
    return out


def blocks():
    rng = np.random.default_rng(1)
    T = getn()
    def make(shape, dt, transposed):
        if transposed:
            return rng.standard_normal(shape[::-1]).astype(dt).T
        return rng.standard_normal(shape).astype(dt)

    cases = []
    for (m, k, n) in [(1024, 512, 512), (1024, 512, 2048), (1024, 2048, 512), (512, 1024, 512),
                      (128, 64, 128), (64, 128, 64), (128, 128, 64), (333, 517, 129), (1000, 385, 77),
                      (17, 999, 31), (2048, 384, 384), (1024, 768, 100), (256, 400, 256),
                      (1024, 1024, 1024), (512, 5000, 64), (7, 3, 5)]:
        for ta in (False, True):
            for tb in (False, True):
                cases.append((m, k, n, ta, tb))
    bad = {"block!=whole": [], "np1!=whole": [], "np2!=np1": []}
    tot = 0
    for dt in (np.float32, np.float64):
        for m, k, n, ta, tb in cases:
            a = make((m, k), dt, ta); b = make((k, n), dt, tb)
            setn(T); np2 = a @ b
            setn(1); np1 = a @ b
            whole = np.empty((m, n), dt); gemm(a, b, whole)
            for chunk in (2, 3, 16, 17, 64, 100, 128, 1000):
                if chunk >= m: continue
                if m % chunk == 1: continue  # a 1-row last block: gemv forwarding, tested apart
                blk = rows_split(a, b, chunk)
                tot += 1
                if not np.array_equal(blk, whole):
                    bad["block!=whole"].append((dt.__name__, m, k, n, ta, tb, chunk))
            if not np.array_equal(np1, whole):
                bad["np1!=whole"].append((dt.__name__, m, k, n, ta, tb))
            if not np.array_equal(np1, np2):
                bad["np2!=np1"].append((dt.__name__, m, k, n, ta, tb))
            setn(T)
    # batched attention: (64,128,64)@(64,128) per batch item, numpy's stacked matmul
    for dt in (np.float32, np.float64):
        q = rng.standard_normal((8, 8, 128, 64)).astype(dt); kk = rng.standard_normal((8, 8, 128, 64)).astype(dt)
        kt = kk.swapaxes(-1, -2)
        setn(1); np1 = q @ kt
        split = np.empty_like(np1)
        for i in range(8):
            for j in range(8):
                split[i, j] = rows_split(q[i, j], kt[i, j], 32)
        setn(T); np2 = q @ kt
        print("batched", dt.__name__, "split==np1", np.array_equal(split, np1), "np2==np1", np.array_equal(np1, np2))
    # M=1 blocks (gemv forwarding?)
    setn(1)
    for dt in (np.float32, np.float64):
        a = make((33, 512), dt, False); b = make((512, 300), dt, False)
        whole = np.empty((33, 300), dt); gemm(a, b, whole)
        blk = rows_split(a, b, 1)
        print("1-row blocks", dt.__name__, "==whole", np.array_equal(blk, whole),
              "max diff", float(np.abs(blk - whole).max()))
    setn(T)
    print("row-block tests", tot)
    for key, v in bad.items():
        print(key, len(v))
        for x in v:
            print("   ", x)


def granule():
    rng = np.random.default_rng(2)
    setn(1)
    for dt in (np.float32, np.float64):
      for (m, k, n) in [(480, 64, 64), (480, 512, 96)]:
        a = rng.standard_normal((m, k)).astype(dt); b = rng.standard_normal((k, n)).astype(dt)
        whole = np.empty((m, n), dt); gemm(a, b, whole)
        ok = [c for c in range(2, 130) if np.array_equal(rows_split(a, b, c), whole)]
        print(dt.__name__, (m,k,n), "chunks equal:", ok)
        # single block at offset r0 of rows r0:r0+c
        c = 24
        offs = [r0 for r0 in range(0, 64) if np.array_equal(rows_split(a[r0:r0+c], b, c), whole[r0:r0+c])]
        print("   block of 24 at offsets equal:", offs)
        # columns that differ for chunk 2
        d = rows_split(a, b, 2) != whole
        print("   chunk2: rows differing mod 24:", sorted(set((np.nonzero(d.any(1))[0] % 24).tolist())), "cols differing:", np.nonzero(d.any(0))[0][:20])


def aligned():
    rng = np.random.default_rng(3)
    setn(1)
    def split_at(a, b, starts):
        out = np.empty((a.shape[0], b.shape[1]), a.dtype)
        bounds = list(starts) + [a.shape[0]]
        for r0, r1 in zip(bounds[:-1], bounds[1:]):
            gemm(a[r0:r1], b, out[r0:r1])
        return out
    bad = []; tot = 0
    shapes = [(1024, 512, 512), (1024, 512, 2048), (1024, 2048, 512), (128, 64, 128), (128, 128, 64),
              (333, 517, 129), (1000, 385, 77), (37, 999, 31), (25, 64, 64), (13, 8, 5), (1024, 1024, 1024), (2, 3, 4)]
    for dt in (np.float32, np.float64):
        g = 12
        for m, k, n in shapes:
            for ta in (False, True):
                for tb in (False, True):
                    a = (rng.standard_normal((k, m)).astype(dt).T if ta else rng.standard_normal((m, k)).astype(dt))
                    b = (rng.standard_normal((n, k)).astype(dt).T if tb else rng.standard_normal((k, n)).astype(dt))
                    np1 = a @ b
                    for trial in range(4):
                        # random aligned starts, last block >= 2 rows
                        cuts = sorted(set(rng.choice(np.arange(g, max(g + 1, m - 1), g), size=min(6, max(0, (m - 2) // g)), replace=False).tolist())) if m > g + 1 else []
                        cuts = [c for c in cuts if m - c >= 2]
                        blk = split_at(a, b, [0] + cuts)
                        tot += 1
                        if not np.array_equal(blk, np1):
                            bad.append((dt.__name__, m, k, n, ta, tb, cuts))
    for dt in (np.float32, np.float64):
        q = rng.standard_normal((8, 8, 128, 64)).astype(dt); kk = rng.standard_normal((8, 8, 128, 64)).astype(dt)
        v = rng.standard_normal((8, 8, 128, 64)).astype(dt)
        for x, y in ((q, kk.swapaxes(-1, -2)), (q @ kk.swapaxes(-1, -2), v), (q.swapaxes(-1, -2), v)):
            np1 = x @ y
            split = np.empty_like(np1)
            for i in range(8):
                for j in range(8):
                    split[i, j] = split_at(x[i, j], y[i, j], [0, 48, 96])
            tot += 1
            if not np.array_equal(split, np1): bad.append(("batched", dt.__name__, x.shape, y.shape))
    print("tests", tot, "bad", len(bad))
    for b_ in bad: print("  ", b_)
    # where do 1 and 2 threads differ?
    setn(2)
    a = rng.standard_normal((480, 64)).astype(np.float32); b = rng.standard_normal((64, 96)).astype(np.float32)
    np2 = a @ b; setn(1); np1 = a @ b
    d = np2 != np1
    print("2 vs 1 thread (480,64)@(64,96): rows differing", np.nonzero(d.any(1))[0][:30], "cols", np.nonzero(d.any(0))[0])


if __name__ == "__main__":
    {"blocks": blocks, "granule": granule, "aligned": aligned}[sys.argv[1] if len(sys.argv) > 1 else "aligned"]()
