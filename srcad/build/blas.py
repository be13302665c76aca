"""numpy's BLAS, as far as the C runtime's per-call thread choice needs it: the addresses of
OpenBLAS's thread-count functions (kernels_c/srcad_threads.h calls them around a generated
function's call when other processes keep cores busy, and restores the user's setting after).

Found in the OpenBLAS that numpy itself loaded (its path read from /proc/self/maps, the
library opened again by that path, so it is the same copy, not another one on the system),
under the names the builds numpy ships or links use: scipy-openblas's (numpy >= 2 wheels, with
and without the 64-bit-integer suffix), the older wheels' ``openblas64_`` and a system
OpenBLAS's plain names. Anything else (MKL, Accelerate, a BLAS without the functions, a
system without /proc) gives None: the runtime then chooses srcad's own kernel threads only.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys

import numpy as np  # (numpy's BLAS is loaded with numpy: it must be mapped to be found)

# (set, get) pairs, most specific first
NAMES = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
         ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
         ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
         ("openblas_set_num_threads", "openblas_get_num_threads"))


def loaded_libraries(word: str = "openblas") -> list[str]:
    """Paths of the shared libraries mapped into this process whose file name contains
    `word` (case-insensitive), in the order first mapped; [] where /proc is not there."""
    paths: list[str] = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                name = path.rsplit("/", 1)[-1].lower()
                if word in name and ".so" in name and path not in paths:
                    paths.append(path)
    except OSError:
        return []
    return paths


def thread_functions() -> tuple[int, int, str] | None:
    """(set address, get address, library path) of the loaded OpenBLAS's
    ``set_num_threads(int)`` / ``get_num_threads()``, or None."""
    for path in loaded_libraries():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in NAMES:
            try:
                set_fn, get_fn = getattr(lib, set_name), getattr(lib, get_name)
            except AttributeError:
                continue
            get_fn.restype = ctypes.c_int
            get_fn.argtypes = []
            if get_fn() < 1:  # not a working thread count: leave this BLAS alone
                continue
            return (ctypes.cast(set_fn, ctypes.c_void_p).value,
                    ctypes.cast(get_fn, ctypes.c_void_p).value, path)
    return None


def threads_change_values(set_addr: int, get_addr: int) -> bool:
    """Do the BLAS's products depend on its thread count? A few float32 and float64 GEMMs
    (plain and batched, the sizes of a small Transformer's, and odd sizes, plain and
    transposed, and a sweep of the summed length) at the process's thread count and at one
    thread, compared bit for bit; the count is restored. OpenBLAS splits a GEMM's rows and
    columns between threads, and on some kernels the bits stay; OpenBLAS 0.3.31's Haswell
    SGEMM on a Zen 3 changes them, its SkylakeX DGEMM (an AVX-512 CPU's default kernel)
    changes half of the odd sizes' (101 of 200 random float64 products up to 400 a side) and
    none of the multiples of 64, and every kernel tried cuts sums of some lengths elsewhere
    at two threads (`THREAD_SHAPES`). Where they change, srcad holds the BLAS at one thread in
    its calls (srcad/build/__init__.py `_pin_blas`)."""
    set_fn = ctypes.CFUNCTYPE(None, ctypes.c_int)(set_addr)
    get_fn = ctypes.CFUNCTYPE(ctypes.c_int)(get_addr)
    threads = get_fn()
    # (at the process's count, or at two where the user holds it at one just now -- a
    # threadpoolctl block: the answer is kept for the process, whose count may rise again)
    many = threads if threads > 1 else min(2, os.cpu_count() or 1)
    if many <= 1:
        return False  # (one CPU: nothing to lower)
    rng = np.random.default_rng(0)
    pairs = [(rng.standard_normal(a).astype(dt), rng.standard_normal(b).astype(dt))
             for dt in (np.float32, np.float64) for a, b in THREAD_SHAPES]
    # (the odd sizes again with transposed operands)
    pairs += [(np.asfortranarray(a), np.asfortranarray(b)) for i, (a, b) in enumerate(pairs)
              if 4 <= i % len(THREAD_SHAPES) < 8]
    try:
        set_fn(many)
        at_many = [a @ b for a, b in pairs]
        set_fn(1)
        one = [a @ b for a, b in pairs]
    finally:
        set_fn(threads)
    return not all(np.array_equal(x, y) for x, y in zip(at_many, one))


# the products `threads_change_values` compares: a small Transformer's, odd sizes (each of
# these four changed its float64 bits with the thread count on the SkylakeX kernel), then a
# sweep of the summed length k: where k lies between the kernel's K block and its double
# (OpenBLAS's one-thread driver then halves it, its threaded one does not), the sums are cut
# in other places (k in 400-1600 off multiples of 160 changed the SkylakeX SGEMM's bits, k
# above 384 the Sandybridge SGEMM's, above 256 its DGEMM's -- where the fixed sizes saw none)
THREAD_SHAPES = (((128, 128), (128, 128)), ((64, 512), (512, 256)), ((4, 64, 96), (96, 80)),
                 ((256, 64), (64, 256)), ((147, 61), (61, 234)), ((70, 239), (239, 114)),
                 ((143, 60), (60, 391)), ((312, 8), (8, 387)), ((61, 300), (300, 47)),
                 ((61, 420), (420, 47)), ((61, 540), (540, 47)), ((61, 700), (700, 47)),
                 ((12, 1100), (1100, 207)))


# 64-bit-integer cblas GEMMs (sgemm, dgemm), most specific first: srcad_gemm.h calls them with
# int64 dimensions, so a 32-bit-integer BLAS is not used
GEMM_NAMES = (("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_"),
              ("cblas_sgemm64_", "cblas_dgemm64_"))


def gemm_functions(path: str) -> tuple[int, int] | None:
    """(cblas_sgemm address, cblas_dgemm address) of the OpenBLAS at `path` (the one numpy
    loaded, `thread_functions`), under its 64-bit-integer names, or None."""
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    for s_name, d_name in GEMM_NAMES:
        try:
            s, d = getattr(lib, s_name), getattr(lib, d_name)
        except AttributeError:
            continue
        return (ctypes.cast(s, ctypes.c_void_p).value, ctypes.cast(d, ctypes.c_void_p).value)
    return None


def _cblas(addr: int, dtype):
    real = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    i64, p = ctypes.c_int64, ctypes.c_void_p
    return ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_int, ctypes.c_int, i64, i64, i64, real,
                            p, i64, p, i64, real, p, i64)(addr)


def _rows_call(fn, a, b, out, r0, r1) -> None:
    """One row-major cblas call for rows [r0, r1) of out = a @ b (a C- or F-ordered)."""
    size = a.itemsize
    trans_a, lda, step = ((111, a.strides[0] // size, a.strides[0]) if a.flags.c_contiguous
                          else (112, a.strides[1] // size, size))
    trans_b, ldb = ((111, b.strides[0] // size) if b.flags.c_contiguous
                    else (112, b.strides[1] // size))
    fn(101, trans_a, trans_b, r1 - r0, b.shape[1], a.shape[1], 1.0, a.ctypes.data + r0 * step,
       lda, b.ctypes.data, ldb, 0.0, out.ctypes.data + r0 * out.strides[0], out.shape[1])


# what the probes below measure, as kept (srcad.build `_blas_facts`): a new number when they
# change, so that no answer of an older probe is read back
PROBE_VERSION = 3  # (3: the shortest tail probed too, 2026-12-07)

GRANULES = (1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64)
# least rows*k*n of a block, tried in this order: OpenBLAS's SkylakeX kernels hand products of
# m*n*k <= 1e6 to small-matrix kernels that sum in another order (and its SGEMM has a direct
# path below 28*512*512 at one thread), so a block under such a line is not bitwise those rows
# of the whole; the Haswell kernels have none (0)
FLOORS = (0, 1 << 18, 1 << 20, 1 << 23)
# (k, n) of the probes, each in all four transpositions: small sizes on either side, one of
# them tiny (cases whose small-matrix bits differ from the large kernel's on the SkylakeX
# kernel: first, so that a floor under its line fails at once), then the widths where its
# DGEMM's 12-row unroll shows
PROBE_KN = ((604, 4), (20, 443), (531, 21), (496, 38), (146, 215), (400, 353), (64, 40), (300, 97),
            (17, 33))


def row_split(addr: int, dtype) -> tuple[int, int] | None:
    """(granule g, floor f) for srcad_gemm.h's row blocks: one single-threaded cblas GEMM on
    a block of rows that starts at a multiple of g (the last block ending at the last row)
    and has at least f = rows*k*n gives bitwise those rows of the call on the whole product.
    g is the column unroll of the kernel's column-major product (rows of an edge tile are
    summed in another order); f keeps every block on the kernel the whole product takes
    (`FLOORS`). The least f, then the least g, that hold on the probes (`PROBE_KN`, each
    in all four transpositions, blocks as `_blocks_agree` makes them); the caller holds the
    BLAS at one thread. None: no candidate holds."""
    rng = np.random.default_rng(0)
    fn = _cblas(addr, dtype)
    cases = []
    for k, n in PROBE_KN:
        for t_a in (False, True):
            for t_b in (False, True):
                b = rng.random((n, k) if t_b else (k, n), dtype) - 0.5
                cases.append((k, n, t_a, b.T if t_b else b))
    kept: list = []  # (one pool of values for every left operand, grown as asked)
    for floor in FLOORS:
        for g in GRANULES:
            if all(_blocks_agree(fn, rng, dtype, g, floor, *case, kept) for case in cases):
                return g, floor
    return None


def _blocks_agree(fn, rng, dtype, g, floor, k, n, t_a, b, kept) -> bool:
    """Three blocks -- of rows + g, of rows (the least multiple of g with rows*k*n >= floor)
    and the tail -- against the call on the whole: one of the two inner starts is an odd
    multiple of g, so a granule that is not a multiple of the kernel's unroll is caught.
    `kept`: values the left operand is a view of, made once for all cases and grown as asked
    (drawing them took most of the probe's time)."""
    least = max(2, -(-floor // (k * n)))
    rows = -(-max(g, least) // g) * g
    m = 3 * rows + g + rows // 2 + 3
    if not kept or kept[0].size < m * k:
        kept[:] = [rng.random(2 * m * k, dtype) - 0.5]
    a = kept[0][:m * k].reshape((k, m)).T if t_a else kept[0][:m * k].reshape((m, k))
    whole = np.empty((m, n), dtype)
    _rows_call(fn, a, b, whole, 0, m)
    blocks = np.empty((m, n), dtype)
    starts = [0, rows + g, 2 * rows + g]
    for r0, r1 in zip(starts, starts[1:] + [m]):
        _rows_call(fn, a, b, blocks, r0, r1)
    if not np.array_equal(whole, blocks):
        return False
    # (and the shortest tail srcad_gemm.h makes, GEMM_MIN_TAIL rows or the floor's: MKL's
    # products of 1-3 rows on a Zen 3 are summed in another order)
    m = 2 * rows + max(MIN_TAIL, least)
    whole = np.empty((m, n), dtype)
    _rows_call(fn, a[:m], b, whole, 0, m)
    for r0, r1 in ((0, 2 * rows), (2 * rows, m)):
        _rows_call(fn, a[:m], b, blocks[:m], r0, r1)
    return bool(np.array_equal(whole, blocks[:m]))


MIN_TAIL = 4  # kernels_c/srcad_gemm.h's GEMM_MIN_TAIL: the rows of the shortest last block


def core_name(path: str) -> str | None:
    """The kernel OpenBLAS at `path` chose for this CPU ("Haswell", "SkylakeX", ...), or None."""
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                 "openblas_get_corename64_", "openblas_get_corename"):
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype, fn.argtypes = ctypes.c_char_p, []
            got = fn()
            return got.decode(errors="replace") if got else None
    return None


def gemm_agrees(gemm, reference=None) -> bool:
    """Does the runtime's `gemm` give `reference(a, b)` bit for bit -- numpy's `a @ b` (the
    BLAS at one thread, as the caller holds it) unless another is given (`whole_product` of
    the MKL srcad was told to use)? Plain, transposed and stacked float32/float64 operands of
    a few sizes (the last three large enough to be split above a block floor); the caller
    holds `gemm`'s threads above one, so that the row blocks are shared out."""
    rng = np.random.default_rng(1)
    cases = (((100, 64), (64, 50)), ((64, 100), (100, 64)), ((3, 40, 30), (30, 20)),
             ((2, 3, 26, 16), (2, 3, 16, 26)), ((37, 5), (5, 41)), ((700, 300), (300, 97)),
             ((437, 604), (604, 4)), ((301, 146), (146, 215)))
    for dt in (np.float32, np.float64):
        for sa, sb in cases:
            a = rng.standard_normal(sa).astype(dt)
            b = rng.standard_normal(sb).astype(dt)
            for x, y in ((a, b), (np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2),
                                  np.ascontiguousarray(b.swapaxes(-1, -2)).swapaxes(-1, -2))):
                want = x @ y if reference is None else reference(x, y)
                got = gemm(x, y)
                if got.shape != want.shape or got.strides != want.strides or \
                        not np.array_equal(got, want):
                    return False
    return True


def whole_product(fns, a, b) -> np.ndarray:
    """`a @ b` as one cblas call per matrix (`fns`: the sgemm and dgemm addresses), a C-ordered
    result: what srcad_gemm.h's blocks of rows must give bit for bit. `a`, `b` float32 or
    float64 of one dtype, each matrix C- or F-ordered; a stack times a matrix or two stacks of
    one leading shape."""
    fn = _cblas(fns[0] if a.dtype == np.float32 else fns[1], a.dtype)
    lead = a.shape[:-2]
    out = np.empty(lead + (a.shape[-2], b.shape[-1]), a.dtype)
    for i in np.ndindex(*lead):
        _rows_call(fn, a[i], b[i] if b.ndim > 2 else b, out[i], 0, a.shape[-2])
    return out


# MKL, where the user asks for it (SRCAD_GEMM=mkl; srcad.build `_hand_gemm_to_mkl`): its
# single-threaded SGEMM ran 8-15% faster than OpenBLAS 0.3.31's SkylakeX one on every shape of
# the Transformer block on a Sapphire Rapids (REPORT.md, issue 25). MKL's constants:
MKL_CBWR_AUTO = 2
MKL_CBWR_STRICT = 0x10000
MKL_CBWR_SUCCESS = 0
# the layered libraries srcad links (its sequential layer: MKL runs on srcad's threads, one
# block of rows each, never its own; srcad calls their 64-bit-integer cblas_?gemm_64)
MKL_LAYERS = ("libmkl_intel_ilp64", "libmkl_sequential", "libmkl_core")


def mkl_layers(asked: str) -> tuple[list[str] | None, str]:
    """([paths of `MKL_LAYERS`], "") of the MKL that ``SRCAD_GEMM`` names: ``mkl``, this Python
    environment's (the `mkl` wheel installs into ``<sys.prefix>/lib``), or a directory or a
    file of an MKL installation (its directory is used); else (None, why not). The three of
    one version (one suffix, ``.so.3``)."""
    if asked.lower() == "mkl":
        where = os.path.join(sys.prefix, "lib")
    elif not os.path.exists(asked):
        return None, f"{asked}: no such file or directory"
    else:
        where = asked if os.path.isdir(asked) else os.path.dirname(os.path.abspath(asked))
    for core in sorted(glob.glob(os.path.join(where, MKL_LAYERS[-1] + ".so*")), key=len):
        suffix = core[len(os.path.join(where, MKL_LAYERS[-1])):]
        paths = [os.path.join(where, name + suffix) for name in MKL_LAYERS]
        if all(os.path.isfile(p) for p in paths):
            return paths, ""
    return None, (f"no MKL in {where} ({', '.join(n + '.so*' for n in MKL_LAYERS)}; "
                  "pip install 'srcad[mkl]')")
