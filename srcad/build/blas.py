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
    (plain and batched, the sizes of a small Transformer's) at the process's thread count
    and at one thread, compared bit for bit; the count is restored. OpenBLAS splits a GEMM's
    rows and columns between threads, and on most kernels the bits stay; OpenBLAS 0.3.31's
    Haswell SGEMM on a Zen 3 changes them (float64 does not). Where they change, srcad
    leaves the BLAS's threads alone (srcad/build/__init__.py `_hand_blas_to`)."""
    set_fn = ctypes.CFUNCTYPE(None, ctypes.c_int)(set_addr)
    get_fn = ctypes.CFUNCTYPE(ctypes.c_int)(get_addr)
    threads = get_fn()
    if threads <= 1:
        return False  # (nothing to lower)
    rng = np.random.default_rng(0)
    shapes = (((128, 128), (128, 128)), ((64, 512), (512, 256)), ((4, 64, 96), (96, 80)),
              ((256, 64), (64, 256)))
    pairs = [(rng.standard_normal(a).astype(dt), rng.standard_normal(b).astype(dt))
             for dt in (np.float32, np.float64) for a, b in shapes]
    try:
        many = [a @ b for a, b in pairs]
        set_fn(1)
        one = [a @ b for a, b in pairs]
    finally:
        set_fn(threads)
    return not all(np.array_equal(x, y) for x, y in zip(many, one))
