"""Building and loading fused kernels: the compiler, the kernel cache, the C runtime.

Input: the C text of one kernel module (srcad/lower/cgen.py) and the Python fallbacks of
its kernels. Output: the loaded extension module, initialised (its kernels bound to the C
runtime and their fallbacks), or an exception saying why not:

    >>> mod = load_module(c_text, "srcad_k_1f2e...", rows, fallbacks)   # doctest: +SKIP
    >>> mod.fused_multiply_add_maximum_3ac2f1(a, b, c)                  # doctest: +SKIP

The C runtime (``kernels_c/srcad_driver.c``) is the extension ``srcad._kernels`` that
``pip install`` builds; when that is missing or older than the sources next to this
package, the same file is compiled into the kernel cache instead. See `cache` for the
cache's layout and its trust model (what is loaded, and why that is safe) and `compiler` for
the flags and the compiler's hygiene (fast-math refused, time limits, broken compilers
remembered).
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib
import os
import sys
import sysconfig
import warnings
from pathlib import Path

import numpy as np

from . import blas, cache, compiler
from .compiler import BuildFailed, CompilerUnavailable


try:  # the C runtime `pip install` builds (setup.py); without it, built into the cache
    # (by name: the extension is compiled C that imports no Python module, and an import
    # statement of it reads to graph tools as an import of the package srcad itself)
    _INSTALLED = importlib.import_module(f"{__name__.rpartition('.')[0]}._kernels")
except ImportError:
    _INSTALLED = None

__all__ = ["load_module", "runtime", "kernels_c_dir", "header_sha", "BuildFailed",
           "CompilerUnavailable", "compiler_identity", "set_num_threads", "stats", "pooled",
           "pool_stats", "release_buffers", "c_helper", "threads_stats", "pinned"]

_RUNTIME: list = []
RECIPE = 3  # how modules are compiled (flags, defines, split into parts): bump when that changes


def kernels_c_dir() -> Path:
    """Where the hand-written C lives: a copy installed beside the package, else the
    repository's ``kernels_c/``."""
    here = Path(__file__).resolve().parent.parent
    for d in (here / "_kernels_c", here.parent / "kernels_c"):
        if (d / "srcad_kernels.h").exists():
            return d
    raise CompilerUnavailable("srcad's C sources (kernels_c/) are not installed")


# the runtime's C files, in the order they are hashed (setup.py lists the same ones)
RUNTIME_SOURCES = ("srcad_kernels.h", "srcad_pool.h", "srcad_scatter.h", "srcad_optim.h",
                   "srcad_rowgrad.h", "srcad_guards.h", "srcad_threads.h", "srcad_gemm.h",
                   "srcad_colsum.h",
                   "srcad_driver.c")


def _sources_sha() -> str:
    d = kernels_c_dir()
    h = hashlib.sha256()
    for name in RUNTIME_SOURCES:
        h.update((d / name).read_bytes())
    return h.hexdigest()


def header_sha() -> str:
    return hashlib.sha256((kernels_c_dir() / "srcad_kernels.h").read_bytes()).hexdigest()


def _abi_material() -> dict:
    return {"python": sys.version, "soabi": sysconfig.get_config_var("SOABI"),
            "numpy": np.__version__, "header": header_sha()}


def runtime():
    """The C runtime module (its capsule ``api`` is what kernel modules call)."""
    if _RUNTIME:
        return _RUNTIME[0]
    want = _sources_sha()
    rt = _INSTALLED
    if getattr(rt, "SOURCE_SHA", None) != want:
        rt = None  # none installed, or an install older than these sources
    if rt is None:
        rt = _build_runtime(want)
    _RUNTIME.append(rt)
    return rt


def _build_runtime(sha: str):
    comp = compiler.find(cache.compiler_dir())
    name = f"srcad_rt_{sha[:20]}"
    src = (kernels_c_dir() / "srcad_driver.c").read_text()
    material = {"kind": "runtime", "recipe": RECIPE, "sources": sha, "compiler": comp.identity,
                "flags": list(compiler.flags(comp, kernels=False)), "cpu": compiler.cpu_identity(),
                **_abi_material()}
    key = cache.entry_key(material)
    module = f"{name}_{key[:8]}"
    extra = (f"-DSRCAD_DRIVER_NAME={module}", f'-DSRCAD_SOURCE_SHA="{sha}"')
    include = [compiler.python_include(), np.get_include(), str(kernels_c_dir())]
    return cache.get(module, key, material, src, comp, include=include,
                     extra=extra + ("-pthread",),  # (its own threads: srcad_gemm.h's team)
                     before_build=lambda c: compiler.check_works(c, cache.compiler_dir()))


def compiler_identity():
    """The compiler kernels are built with (raises `CompilerUnavailable`)."""
    return compiler.find(cache.compiler_dir())


def module_key(c_source: str, rows: dict, version: str) -> tuple[str, str, dict,
                                                                  compiler.Compiler]:
    """(module name, key, key material, compiler) for a kernel module's C text; `rows`: the
    C version of each op row it uses, `version`: srcad's (generated code's) version."""
    comp = compiler.find(cache.compiler_dir())
    material = {"kind": "kernels", "recipe": RECIPE,
                "source": hashlib.sha256(c_source.encode()).hexdigest(),
                "compiler": comp.identity, "flags": list(compiler.flags(comp)),
                "cpu": _cpu(), "srcad": version, "rows": dict(sorted(rows.items())),
                **_abi_material()}
    key = cache.entry_key(material)
    return f"srcad_k_{key[:24]}", key, material, comp


_CPU: list = []


def _cpu() -> str:
    if not _CPU:
        _CPU.append(compiler.cpu_identity())
    return _CPU[0]


def load_module(c_source: str, module: str, key: str, material: dict, comp, fallbacks):
    """Get (build or load) a kernel module and bind it to the runtime and its fallbacks.
    `c_source` must define the module `module` (its name is part of the text)."""
    rt = runtime()
    mod = cache._LOADED.get(module)
    if mod is None:
        try:
            mod = cache.get(module, key, material, c_source, comp,
                            include=[compiler.python_include(), str(kernels_c_dir())],
                            extra=(f"-DSRCAD_MODULE={module}",),
                            before_build=compiler.known_broken)
        except BuildFailed:
            # a compiler that builds nothing: CompilerUnavailable
            compiler.check_works(comp, cache.compiler_dir())
            raise
    mod._init(rt.api, tuple(fallbacks))
    return mod


def set_num_threads(n: int) -> int:
    """Threads a kernel uses above the size threshold; returns the previous setting
    (``SRCAD_NUM_THREADS`` sets the initial value)."""
    return runtime().set_num_threads(n)


def _pool_runtime():
    """The runtime whose buffer pool (and row scatter) generated code uses: the loaded one,
    else the installed one if it is built from these sources -- the one `runtime()` will
    return, so that a process has one pool -- and never a build just for the pool; None
    without either."""
    if _RUNTIME:
        rt = _RUNTIME[0]
    else:
        if not _CURRENT:
            _CURRENT.append(getattr(_INSTALLED, "SOURCE_SHA", None) == _sources_sha())
        rt = _INSTALLED if _CURRENT[0] else None
    return rt if hasattr(rt, "pooled") else None


_CURRENT: list = []  # is the installed runtime built from the sources beside this package?


def pooled(fn):
    """`fn`, run with srcad's buffer pool as numpy's allocator (kernels_c/srcad_pool.h): a
    repeated call reuses the blocks the last one freed instead of faulting in fresh pages.
    `fn` itself where the C runtime is not there (the pool is an optimisation, not a
    requirement) or ``SRCAD_BUFFER_POOL=0`` turned it off."""
    rt = _pool_runtime()
    if rt is None:
        return fn
    _find_blas(rt)
    return rt.pooled(fn)


def pinned(fn):
    """`fn`, run with the BLAS at one thread (the user's count restored after), where srcad
    holds it there (`_pin_blas`: a BLAS whose products change with its thread count); `fn`
    itself elsewhere. For the calls of srcad that do not run through `pooled` (tape mode,
    ``memory_plan=False``, the matmul probes), so that every mode gets the same bits."""
    rt = _pool_runtime()
    if rt is None:
        return fn
    _find_blas(rt)
    return rt.pooled(fn, False) if _PINNED.get(rt) else fn


def _find_blas(rt) -> None:
    if _BLAS.get(rt) is None and _BLAS_TRIES.get(rt, 0) < 3:
        # (per runtime: a process may load another one, a cache build; and again if the
        # BLAS was not found yet)
        _BLAS_TRIES[rt] = _BLAS_TRIES.get(rt, 0) + 1
        _BLAS[rt] = _hand_blas_to(rt)
    if rt not in _GEMM_BACKEND:
        asked = _gemm_asked()
        _GEMM_BACKEND[rt] = _hand_gemm_to_mkl(rt, asked) if asked else None


_BLAS: dict = {}  # runtime -> the BLAS library handed to its per-call thread choice (or None)
_BLAS_TRIES: dict = {}  # runtime -> how often the BLAS was looked for
_PINNED: dict = {}  # runtime -> True where it runs the BLAS at one thread in every call
_GEMM_BACKEND: dict = {}  # runtime -> the MKL directory its `gemm` calls (None: numpy's BLAS)
_GEMM_FUNCTIONS: dict = {}  # runtime -> (sgemm, dgemm) addresses of that MKL


def _gemm_asked() -> str | None:
    """What ``SRCAD_GEMM`` asks the fused code's products to run on: None for numpy's BLAS
    (unset, empty or ``numpy``), else ``mkl`` (this environment's MKL) or an MKL's directory
    (or one of its files): `blas.mkl_layers`."""
    asked = os.environ.get("SRCAD_GEMM", "").strip()
    return None if asked.lower() in ("", "numpy") else asked


# srcad's handle on MKL: a Python extension linked against MKL's layered libraries, so that
# they come into the process with it, local to it. Through its single library (libmkl_rt)
# they would come in global -- libmkl_rt opens them so -- and a torch imported afterwards
# bound its own MKL's internal calls to them (LD_DEBUG=bindings: libtorch_cpu.so to
# libmkl_core.so.3), so it would have run another MKL's code in srcad's modes
MKL_SHIM = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

extern void cblas_sgemm_64(void);
extern void cblas_dgemm_64(void);
extern int MKL_CBWR_Set(int);

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

/* the addresses of MKL's 64-bit-integer cblas_sgemm and cblas_dgemm */
static PyObject *
addresses(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return Py_BuildValue("(KK)", (unsigned long long)(uintptr_t)&cblas_sgemm_64,
                         (unsigned long long)(uintptr_t)&cblas_dgemm_64);
}

/* MKL_CBWR_Set(mode): its reproducibility mode, before its first GEMM */
static PyObject *
cbwr_set(PyObject *self, PyObject *arg)
{
    (void)self;
    long mode = PyLong_AsLong(arg);
    if (mode == -1 && PyErr_Occurred()) return NULL;
    return PyLong_FromLong(MKL_CBWR_Set((int)mode));
}

static PyMethodDef methods[] = {
    {"addresses", addresses, METH_NOARGS, "(cblas_sgemm_64, cblas_dgemm_64) addresses"},
    {"cbwr_set", cbwr_set, METH_O, "MKL_CBWR_Set(mode)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, SRCAD_MKL_STR, NULL, -1, methods};

PyMODINIT_FUNC CAT(PyInit_, SRCAD_MKL_NAME)(void) { return PyModule_Create(&module); }
"""


def _mkl_shim(layers: list[str]):
    """The loaded `MKL_SHIM` linked against `layers` (built into the kernel cache once, keyed
    by the libraries' paths, sizes and times); raises what `cache.get` raises."""
    comp = compiler.find(cache.compiler_dir())
    libs = []
    for path in layers:
        st = os.stat(path)
        libs.append([path, st.st_size, st.st_mtime_ns])
    material = {"kind": "mkl", "recipe": RECIPE, "compiler": comp.identity,
                "flags": list(compiler.flags(comp)), "libraries": libs,
                **_abi_material()}
    key = cache.entry_key(material)
    module = f"srcad_mkl_{key[:12]}"
    where = os.path.dirname(layers[0])
    extra = (f"-DSRCAD_MKL_NAME={module}", f'-DSRCAD_MKL_STR="{module}"', "-Wl,--no-as-needed",
             *(f"-l:{os.path.basename(p)}" for p in layers), f"-L{where}",
             f"-Wl,-rpath,{where}", "-lpthread", "-lm", "-ldl")
    return cache.get(module, key, material, MKL_SHIM, comp, include=[compiler.python_include()],
                     extra=extra)


def _hand_gemm_to_mkl(rt, asked: str):
    """Where ``SRCAD_GEMM=mkl`` (or an MKL's directory) asks for it: the runtime's `gemm` --
    the products of fused code -- runs MKL's single-threaded GEMM on srcad's threads, in
    blocks of rows as over a pinned OpenBLAS (kernels_c/srcad_gemm.h), MKL sequential (its
    layered libraries, `_mkl_shim`) and in its strict reproducible mode (CNR STRICT: bits
    that do not depend on the operands' alignment; `blas.row_split` then finds its blocks of
    rows exact from any row). The contract then: a product's bits are MKL's, the same in every
    call, at every thread count and load (the split is checked against one MKL call on the
    whole, `blas.gemm_agrees`); they are not numpy's, so fused code agrees with ``fuse=False``
    and ``mode="tape"`` (numpy's ``a @ b``) to the products' rounding, not bit for bit. The
    MKL's directory, or None with one warning saying why (none found, no compiler to link it,
    its mode not set, a split that is not exact): the products stay numpy's. `asked`:
    `_gemm_asked`'s answer."""
    fns = None
    layers, why = blas.mkl_layers(asked)
    if layers is not None and not hasattr(rt, "gemm_configure"):
        layers, why = None, "this C runtime has no gemm"
    if layers is not None:
        try:
            shim = _mkl_shim(layers)
        except (CompilerUnavailable, BuildFailed, OSError) as e:
            why = f"MKL could not be linked ({type(e).__name__}: {e})"
        else:
            if shim.cbwr_set(blas.MKL_CBWR_AUTO | blas.MKL_CBWR_STRICT) != blas.MKL_CBWR_SUCCESS:
                why = f"{layers[-1]}: its strict reproducible mode (CNR) could not be set"
            else:
                fns = shim.addresses()
    if fns is not None:
        split = _mkl_split(layers, fns)
        if None in split:
            fns, why = None, f"{layers[-1]}: no exact split of its products into blocks of rows"
    if fns is not None:
        (s32, s64) = split
        # (min_work 0: split even the probes; one block a thread: each block packs the whole
        # right operand again, as in OpenBLAS)
        rt.gemm_configure(fns[0], fns[1], s32[0], s64[0], 0, s32[1], s64[1], 1)
        ok = _gemm_checked(rt, lambda a, b: blas.whole_product(fns, a, b))
        rt.gemm_configure(fns[0], fns[1], s32[0], s64[0], 1 << 21)
        if not ok:
            fns, why = None, f"{layers[-1]}: srcad's blocks of rows did not give its products"
            rt.gemm_configure(0, 0, 0, 0)
            found = blas.thread_functions()
            if _PINNED.get(rt) and found is not None:  # (the pinned OpenBLAS's gemm again)
                _PINNED[rt] = _pin_blas(rt, found, _blas_facts(found)["split"])
    if fns is None:
        warnings.warn(f"srcad: SRCAD_GEMM={asked}: {why}; fused code's products stay numpy's",
                      stacklevel=2)
        return None
    _GEMM_FUNCTIONS[rt] = fns
    return os.path.dirname(layers[0])


def _mkl_split(layers: list, fns) -> tuple:
    """`blas.row_split` of MKL's SGEMM and DGEMM in its strict mode (0.04 s of a process's
    first gradient call), kept as `_blas_facts` keeps OpenBLAS's: in the kernel cache's
    compilers.json, under the MKL libraries (paths, sizes, mtimes), the CPU and the probe's
    version, read back only from a file of ours; `_hand_gemm_to_mkl` still checks the split
    against MKL's whole products before using it. (granule, floor) for float32 and float64,
    None for a dtype with no exact split."""
    try:
        material = {"mkl": [[p, os.stat(p).st_size, os.stat(p).st_mtime_ns] for p in layers],
                    "cpu": compiler.cpu_identity(), "probe": blas.PROBE_VERSION,
                    "mode": "cnr-strict"}
    except OSError:
        material = None
    where = cache.compiler_dir() if material is not None else None
    tag = "mkl-split:" + cache.entry_key(material) if material is not None else ""
    kept = compiler.read_known(where).get(tag) if where is not None else None
    if _facts_ok({"changes": True, "split": kept}) and kept is not None:
        return tuple(tuple(s) for s in kept)
    split = blas.row_split(fns[0], np.float32), blas.row_split(fns[1], np.float64)
    if where is not None and None not in split:
        known = compiler.read_known(where)
        known[tag] = [list(split[0]), list(split[1])]
        compiler.write_known(where, known)
    return split


def _gemm_checked(rt, reference=None) -> bool:
    """`blas.gemm_agrees` on the runtime's `gemm` with its kernel threads at 2 (restored
    after), so that its products are split into blocks whatever this machine's CPU count."""
    threads = rt.set_num_threads(2)
    try:
        return blas.gemm_agrees(rt.gemm, reference)
    finally:
        rt.set_num_threads(threads)


def _hand_blas_to(rt):
    """Give the runtime numpy's OpenBLAS thread-count functions (srcad_threads.h), once:
    around each pooled call it lowers the BLAS's and its own threads to the cores other
    processes leave free, and restores them after. The library's path, or None (not
    OpenBLAS, a runtime without the choice, or a BLAS whose products change with its thread
    count, which would break bit-for-bit equal results between calls): then only srcad's
    kernel threads are chosen."""
    if not hasattr(rt, "threads_configure"):
        return None
    found = blas.thread_functions()
    if found is None:
        return None
    facts = _blas_facts(found)
    if not facts["changes"]:
        rt.threads_configure(found[0], found[1])
        return found[2]
    if _pin_blas(rt, found, facts["split"]):
        return found[2]
    return None


def _pin_blas(rt, found, split) -> bool:
    """Where the BLAS's products change with its thread count: run it at one thread in every
    srcad call (so every call and mode has the one-thread bits, whatever the load) and get
    the parallelism back in the runtime's `gemm` (kernels_c/srcad_gemm.h: blocks of rows,
    each a one-thread cblas call, pulled by srcad's threads as they come free). Only where
    a row granule and a block floor are found (blas.row_split) and `gemm` then gives
    numpy's one-thread `a @ b` bit for bit on a few shapes; else False and nothing is
    changed. `split`: `_blas_facts`'s, the granules and floors (None: none holds)."""
    if not hasattr(rt, "gemm_configure") or split is None:
        return False
    fns = blas.gemm_functions(found[2])
    if fns is None:
        return False
    (s32, s64), per_thread = split, _blocks_per_thread(blas.core_name(found[2]))
    set_fn = ctypes.CFUNCTYPE(None, ctypes.c_int)(found[0])
    get_fn = ctypes.CFUNCTYPE(ctypes.c_int)(found[1])
    threads = get_fn()
    set_fn(1)
    try:
        # (min_work 0: split even the probes)
        rt.gemm_configure(fns[0], fns[1], s32[0], s64[0], 0, s32[1], s64[1], per_thread)
        try:
            ok = _gemm_checked(rt)
        finally:
            rt.gemm_configure(fns[0], fns[1], s32[0], s64[0], 1 << 21)
    finally:
        set_fn(threads)
    if not ok:
        rt.gemm_configure(0, 0, 0, 0)
        return False
    rt.threads_configure(found[0], found[1], True)
    _PINNED[rt] = True
    return True


def _blas_facts(found) -> dict:
    """What the probes of srcad/build/blas.py find of the BLAS at found[2]: ``changes`` (do
    its products' bits change with its thread count?) and, where they do, ``split`` (the row
    granule and block floor of float32 and float64, or None where none holds). The probes
    take 0.03-0.15 s (the SkylakeX kernel's floors the most) -- a tenth of a small model's
    first call -- so their answer is kept in the kernel cache's compilers.json, under the
    library (path, size, mtime), the kernel OpenBLAS chose, the CPU and the thread count the
    first probe compares, and read back only from a file of ours that no one else can write
    (the compiler facts' rule); `_pin_blas` still checks `gemm` against numpy before using it."""
    set_fn = ctypes.CFUNCTYPE(None, ctypes.c_int)(found[0])
    get_fn = ctypes.CFUNCTYPE(ctypes.c_int)(found[1])
    try:
        st = os.stat(found[2])
        material = {"library": found[2], "size": st.st_size, "mtime": st.st_mtime_ns,
                    "core": blas.core_name(found[2]), "cpu": compiler.cpu_identity(),
                    "threads": get_fn(), "cpus": os.cpu_count(), "numpy": np.__version__,
                    "probe": blas.PROBE_VERSION}
    except OSError:
        material = None
    where = cache.compiler_dir() if material is not None else None
    tag = "blas:" + cache.entry_key(material) if material is not None else ""
    facts = compiler.read_known(where).get(tag) if where is not None else None
    if _facts_ok(facts):
        return facts
    facts = {"changes": blas.threads_change_values(found[0], found[1]), "split": None}
    fns = blas.gemm_functions(found[2]) if facts["changes"] else None
    if fns is not None:
        threads = get_fn()
        set_fn(1)
        try:
            s32, s64 = blas.row_split(fns[0], np.float32), blas.row_split(fns[1], np.float64)
        finally:
            set_fn(threads)
        if s32 is not None and s64 is not None:
            facts["split"] = [list(s32), list(s64)]
    if where is not None:
        known = compiler.read_known(where)
        known[tag] = facts
        compiler.write_known(where, known)
    return facts


def _facts_ok(facts) -> bool:
    """A kept answer of `_blas_facts`, well formed (anything else is probed again)."""
    if not isinstance(facts, dict) or not isinstance(facts.get("changes"), bool):
        return False
    split = facts.get("split")
    return split is None or (isinstance(split, list) and len(split) == 2 and all(
        isinstance(s, list) and len(s) == 2 and all(type(v) is int and v >= 0 for v in s)
        and s[0] >= 1 for s in split))


def _blocks_per_thread(core: str | None) -> int:
    """Row blocks a thread pulls, about, in a split product: 2 (dynamic sharing when a core is
    partly taken; measured on the Haswell kernel, Zen 3 and Zen 5), 1 on OpenBLAS's AVX-512
    kernels, where each block's own packing of the right operand cost more than the sharing
    gained (Sapphire Rapids, SkylakeX kernel: the large block's step 83.2 ms at 1 against
    87.2 at 2, the small block's 4.47 against 4.63; REPORT.md, issue 25, Intel)."""
    return 1 if core in ("SkylakeX", "Cooperlake", "SapphireRapids") else 2


def threads_stats() -> dict:
    """The per-call thread choice (kernels_c/srcad_threads.h): whether it is on, the CPUs this
    process may use, the cores other processes kept busy at the last sample, the threads the
    last call was given, samples taken, calls run with fewer threads, the BLAS found, and
    whether the sampler thread runs (1; -1: it could not be made, calls sample themselves)."""
    rt = _pool_runtime()
    if rt is None or not hasattr(rt, "threads_stats"):
        return {"adaptive": 0}
    return dict(rt.threads_stats(), blas_library=_BLAS.get(rt),
                gemm_library=_GEMM_BACKEND.get(rt),
                **(rt.gemm_stats() if _PINNED.get(rt) or _GEMM_BACKEND.get(rt) else {}))


def c_helper(name: str):
    """One of the runtime's plain C helpers, or None where the C runtime is not there (the
    caller then runs the numpy it stands in for): ``scatter_add_rows(out, index, g)``
    (np.add.at for row scatters, kernels_c/srcad_scatter.h), ``adam_step``/``adam_steps``
    (Adam's update, kernels_c/srcad_optim.h), ``extremum_grad_rows(g, out, x)`` (the VJP of a
    max/min over the last axis, kernels_c/srcad_rowgrad.h), ``gemm(a, b)`` (``a @ b`` on
    srcad's threads, kernels_c/srcad_gemm.h: numpy's own ``a @ b`` for what it does not
    handle). Each is bit for bit the numpy it replaces and raises TypeError for a case it
    does not handle (gemm: never)."""
    rt = _pool_runtime()
    return getattr(rt, name, None) if rt is not None else None


def scatter_add_rows():
    """The runtime's `scatter_add_rows(out, index, g)`, or None (see `c_helper`)."""
    return c_helper("scatter_add_rows")


def pool_stats() -> dict:
    """The buffer pool's counters: bytes kept free, in use and their peak, hits, misses."""
    rt = _pool_runtime()
    return rt.pool_stats() if rt is not None else {"enabled": 0}


def release_buffers() -> None:
    """Give the buffer pool's free blocks back to the system (arrays in use are not touched)."""
    rt = _pool_runtime()
    if rt is not None:
        rt.pool_release()


def stats() -> dict:
    """The runtime's counters and settings: calls, fallbacks and the last one's reason,
    ``row_chunked``: row kernel calls that ran their rows a chunk at a time."""
    return runtime().stats()
