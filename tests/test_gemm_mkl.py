"""SRCAD_GEMM=mkl (issue 25): fused code's products on MKL's single-threaded GEMM, on srcad's
threads in blocks of rows (kernels_c/srcad_gemm.h), MKL linked through srcad's own extension
(srcad.build `_mkl_shim`) in its strict reproducible mode.

The contract, tested here: a product's bits are MKL's and the same in every call, at every
thread count, with the per-call choice on and off; the gradient agrees with ``fuse=False``
and ``mode="tape"`` (numpy's BLAS, bit for bit with each other) to the products' float32
rounding -- within 1e-5 of each array's largest value, as close as
float32 torch is to float64 torch here -- not bit for bit; a torch imported afterwards does
not bind its own MKL's calls to srcad's; and a SRCAD_GEMM naming no MKL warns once and
leaves the products numpy's. Each case is a fresh process (the variable is read once).
The test extra installs MKL on x86-64 Linux; elsewhere (no wheel) the MKL cases skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from srcad import build
from srcad.build import blas

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HAVE_MKL = blas.mkl_layers("mkl")[0] is not None
needs_mkl = pytest.mark.skipif(not HAVE_MKL, reason="no MKL in this environment "
                                                    "(pip install 'srcad[mkl]')")

def _run(code: str, **env) -> subprocess.CompletedProcess:
    """`code` run by a fresh Python (this checkout's root its argument), with `env` added to
    the environment; it must exit 0."""
    out = subprocess.run([sys.executable, "-c", code, ROOT], capture_output=True, text=True,
                         timeout=600, env=dict(os.environ, **env))
    assert out.returncode == 0, out.stderr[-2000:]
    return out


_PRELUDE = r"""
import sys, warnings
import numpy as np
sys.path.insert(0, sys.argv[1])
import srcad
from srcad import build
from srcad.build import blas
from srcad.zoo import transformer as T

def block(seed, width=64, heads=4, dtype=np.float32):
    rng = np.random.default_rng(seed)
    p = T.randomize(rng, T.init(rng, width, heads, dtype=dtype))
    x, probe = (rng.standard_normal((4, 40, width)).astype(dtype) for _ in range(2))
    return p, x, heads, probe
"""

_BITS = _PRELUDE + r"""
rt = build._pool_runtime()
args = block(1, width=96)
fused = srcad.value_and_grad(T.block_loss, wrt="p", fuse=True)
first = fused(*args)
lib = build.threads_stats().get("gemm_library")
got = []
for threads in (1, 2, 3, 4, 2):
    rt.set_num_threads(threads)
    rt.set_parallel_threshold(0)
    got.append(fused(*args))
rt.set_adaptive(False)
got.append(fused(*args))
tape = srcad.value_and_grad(T.block_loss, wrt="p", fuse=True, mode="tape")(*args)
same = all(g[0] == first[0] and all(np.array_equal(g[1][k], first[1][k]) for k in first[1])
           for g in got)
unfused = srcad.value_and_grad(T.block_loss, wrt="p", fuse=False)(*args)
worst = max(float(np.abs(unfused[1][k] - first[1][k]).max() / np.abs(unfused[1][k]).max())
            for k in first[1])
bitwise = all(np.array_equal(unfused[1][k], first[1][k]) for k in first[1])
tape_is_numpy = all(np.array_equal(unfused[1][k], tape[1][k]) for k in first[1])
# the split against one MKL call on the whole, on random shapes (kernel threads at 4)
rt.set_num_threads(4)
rng = np.random.default_rng(5)
exact = True
gemm = build.c_helper("gemm")
for _ in range(40):
    m, k, n = (int(v) for v in rng.integers(2, 600, 3))
    dt = np.float32 if rng.random() < 0.7 else np.float64
    a = rng.standard_normal((m, k)).astype(dt)
    b = rng.standard_normal((k, n)).astype(dt)
    if rng.random() < 0.5:
        a = np.asfortranarray(a)
    want = blas.whole_product(build._GEMM_FUNCTIONS[rt], a, b)
    exact = exact and np.array_equal(gemm(a, b), want)
print(lib is not None, same, worst, bitwise, exact, tape_is_numpy)
"""


@needs_mkl
def test_mkl_products_keep_one_set_of_bits_and_stay_near_numpys():
    out = _run(_BITS, SRCAD_GEMM="mkl")
    used, same, worst, bitwise, exact, tape_is_numpy = out.stdout.split()
    assert used == "True", out.stdout + out.stderr
    assert same == "True"  # (every thread count, the choice on and off)
    assert tape_is_numpy == "True"  # (tape mode keeps numpy's products, as fuse=False)
    assert exact == "True"  # (srcad's blocks of rows are MKL's whole products, bit for bit)
    assert float(worst) < 1e-5, worst  # (float32 rounding of the products, not more)
    # (`bitwise`, fused equal to unfused, is either: MKL's sums may or may not be OpenBLAS's)


_TORCH_AFTER = _PRELUDE + r"""
srcad.grad(T.block_loss, wrt="p", fuse=True)(*block(2))
assert build.threads_stats().get("gemm_library")
import torch
a = torch.randn(300, 300)
print(float((a @ a).sum()))
"""


@needs_mkl
def test_a_torch_imported_after_does_not_bind_to_srcads_mkl(tmp_path):
    """libmkl_rt would have brought MKL's libraries in global, and a torch imported after
    bound its own statically linked MKL's internal calls to them (LD_DEBUG=bindings:
    libtorch_cpu.so to libmkl_core.so.3): srcad links them into its own extension instead."""
    pytest.importorskip("torch")
    log = tmp_path / "ld"
    _run(_TORCH_AFTER, SRCAD_GEMM="mkl", LD_DEBUG="bindings", LD_DEBUG_OUTPUT=str(log))
    text = "".join(p.read_text(errors="replace") for p in tmp_path.iterdir())
    assert "libmkl_core" in text  # (srcad's MKL was loaded and bound, to itself)
    crossed = [line for line in text.splitlines()
               if "binding file" in line and "libtorch" in line.split(" to ")[0]
               and "libmkl" in line.split(" to ")[-1]]
    assert not crossed, crossed[:3]


_NO_MKL = _PRELUDE + r"""
args = block(3)
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    fused = srcad.value_and_grad(T.block_loss, wrt="p", fuse=True)(*args)
    again = srcad.value_and_grad(T.block_loss, wrt="p", fuse=True)(*args)
unfused = srcad.value_and_grad(T.block_loss, wrt="p", fuse=False)(*args)
said = [str(w.message) for w in seen if "SRCAD_GEMM" in str(w.message)]
print(len(said), all(np.array_equal(unfused[1][k], fused[1][k]) for k in fused[1]),
      build.threads_stats().get("gemm_library"))
print(said[0] if said else "")
"""


def test_a_srcad_gemm_naming_no_mkl_warns_once_and_keeps_numpys_products(tmp_path):
    for asked in (str(tmp_path), str(tmp_path / "missing" / "libmkl_rt.so")):
        out = _run(_NO_MKL, SRCAD_GEMM=asked).stdout
        counts, message = out.splitlines()
        n, bitwise, lib = counts.split()
        if _has_compiler():
            assert (n, bitwise, lib) == ("1", "True", "None"), out
            assert asked in message and "numpy's" in message, message


def _has_compiler() -> bool:
    try:
        build.runtime()
    except Exception:
        return False
    return True


def test_srcad_gemm_unset_or_numpy_asks_for_nothing(monkeypatch):
    for value in (None, "", "numpy", " NumPy "):
        if value is None:
            monkeypatch.delenv("SRCAD_GEMM", raising=False)
        else:
            monkeypatch.setenv("SRCAD_GEMM", value)
        assert build._gemm_asked() is None
    monkeypatch.setenv("SRCAD_GEMM", "mkl")
    assert build._gemm_asked() == "mkl"


_KEPT_SPLIT = _PRELUDE + r"""
if sys.argv[2] == "no-probe":  # (a probe now would fail the run: the kept answer must do)
    def boom(*a):
        raise AssertionError("probed again")
    blas.row_split = boom
srcad.grad(T.block_loss, wrt="p", fuse=True)(*block(4))
print(build.threads_stats().get("gemm_library") is not None)
"""


@needs_mkl
def test_mkls_split_is_kept_for_later_processes(tmp_path):
    """srcad.build `_mkl_split`: the first process probes MKL's row split and keeps it in the
    kernel cache's compilers.json; the next uses it without probing (its check against MKL's
    whole products still runs); a file others may write is not believed."""
    env = dict(os.environ, SRCAD_GEMM="mkl", SRCAD_CACHE_DIR=str(tmp_path / "cache"))

    def run(mode):
        return subprocess.run([sys.executable, "-c", _KEPT_SPLIT, ROOT, mode], env=env,
                              capture_output=True, text=True, timeout=600, check=False)

    first = run("probe")
    assert first.returncode == 0 and first.stdout.split()[-1] == "True", first.stderr[-2000:]
    kept = tmp_path / "cache" / "compilers.json"
    assert any(k.startswith("mkl-split:") for k in json.loads(kept.read_text()))
    second = run("no-probe")
    assert second.returncode == 0 and second.stdout.split()[-1] == "True", \
        second.stderr[-2000:]
    kept.chmod(kept.stat().st_mode | 0o002)  # others may write it: not believed
    third = run("no-probe")
    assert third.returncode != 0 and "probed again" in third.stderr
