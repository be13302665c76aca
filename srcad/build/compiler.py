"""The C compiler srcad builds kernels with: which one, what it is, and how it is called.

`CC` (split like a shell word list, so ``CC="ccache gcc"`` works) wins; otherwise the first of
``cc``, ``gcc``, ``clang`` on PATH. Its identity -- resolved path and ``--version`` text -- goes
into every cache key, and is remembered in the cache directory per (path, size, mtime), so a
warm load never starts a process.

Flags (DESIGN.md, "Facts measured"): ``-O3`` (gcc 12 does not vectorise at -O2),
``-ffp-contract=off`` (no FMA contraction of ``a*b+c``: numpy rounds twice), ``-fwrapv``
(integer overflow wraps, as numpy's), ``-fno-math-errno`` (lets ``sqrt`` vectorise; values
and floating-point flags are unchanged) and ``-march=native`` (the key holds the CPU).
srcad never uses ``-ffast-math`` (it links ``crtfastmath.o``, which flushes subnormals process-wide).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

FLAGS = ("-O3", "-ffp-contract=off", "-fwrapv", "-fno-math-errno", "-march=native", "-fPIC",
         "-shared", "-fvisibility=hidden", "-std=gnu11")
# flags never passed (a CC or CFLAGS carrying one is refused)
FORBIDDEN = ("-ffast-math", "-Ofast", "-funsafe-math-optimizations",  # never: not exact
             "-ffinite-math-only")


class CompilerUnavailable(RuntimeError):
    """No working C compiler: fused code cannot be built (srcad runs unfused)."""


class BuildFailed(RuntimeError):
    """The compiler rejected a kernel module (a bug in srcad's C generation)."""


@dataclass(frozen=True)
class Compiler:
    argv: tuple[str, ...]  # the command, e.g. ("gcc",) or ("ccache", "gcc")
    path: str  # the resolved executable
    version: str  # its --version text

    @property
    def identity(self) -> str:
        return f"{self.path}\n{' '.join(self.argv)}\n{self.version}"


_FOUND: dict = {}
_WORKS: dict = {}


def _command() -> tuple[str, ...]:
    cc = os.environ.get("CC", "").strip()
    if cc:
        return tuple(shlex.split(cc))
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return (name,)
    raise CompilerUnavailable("no C compiler found (set CC, or install gcc or clang)")


def find(cache: Path | None = None) -> Compiler:
    """The compiler to use, identified (``--version``); raises `CompilerUnavailable`."""
    argv = _command()
    exe = shutil.which(argv[0])
    if exe is None:
        raise CompilerUnavailable(f"CC={' '.join(argv)!r}: {argv[0]!r} is not an executable")
    real = os.path.realpath(exe)
    try:
        st = os.stat(real)
    except OSError as e:
        raise CompilerUnavailable(f"cannot stat the compiler {real}: {e}") from None
    tag = f"{' '.join(argv)}|{real}|{st.st_size}|{st.st_mtime_ns}"
    if tag in _FOUND:
        return _FOUND[tag]
    known = _read_known(cache)
    version = known.get(tag)
    if version is None:
        try:
            res = subprocess.run([*argv, "--version"], capture_output=True, text=True,
                                 timeout=30)
        except (OSError, subprocess.SubprocessError) as e:
            raise CompilerUnavailable(f"{' '.join(argv)} --version failed: {e}") from None
        if res.returncode != 0:
            raise CompilerUnavailable(f"{' '.join(argv)} --version exited with "
                                      f"{res.returncode}: {res.stderr.strip()[:200]}")
        version = res.stdout.strip()
        known[tag] = version
        _write_known(cache, known)
    comp = Compiler(argv, real, version)
    _FOUND[tag] = comp
    return comp


def _known_path(cache: Path | None) -> Path | None:
    return None if cache is None else cache / "compilers.json"


def _read_known(cache) -> dict:
    p = _known_path(cache)
    try:
        return json.loads(p.read_text()) if p is not None and p.exists() else {}
    except (OSError, ValueError):
        return {}


def _write_known(cache, known: dict) -> None:
    p = _known_path(cache)
    if p is None:
        return
    try:
        if not os.stat(cache).st_mode & 0o200:
            return  # a read-only cache (even root, who could, does not write it)
    except OSError:
        return
    try:
        tmp = p.with_name(f".{p.name}.{os.getpid()}")
        tmp.write_text(json.dumps(known, indent=1, sort_keys=True))
        os.replace(tmp, p)
    except OSError:
        pass  # a read-only cache: the version is asked again next time


def check_works(comp: Compiler) -> None:
    """Compile and link a trivial shared object once per process; raises
    `CompilerUnavailable` with the compiler's message when that fails."""
    if comp in _WORKS:
        if _WORKS[comp] is not None:
            raise CompilerUnavailable(_WORKS[comp])
        return
    with tempfile.TemporaryDirectory(prefix="srcad-cc-") as d:
        src = Path(d) / "probe.c"
        src.write_text("int srcad_probe(int x) { return x + 1; }\n")
        try:
            res = subprocess.run([*comp.argv, *FLAGS, str(src), "-o", str(Path(d) / "p.so")],
                                 capture_output=True, text=True, timeout=60)
            err = None if res.returncode == 0 else (
                f"{' '.join(comp.argv)} cannot build a shared object: "
                f"{(res.stderr or res.stdout).strip()[:300]}")
        except (OSError, subprocess.SubprocessError) as e:
            err = f"{' '.join(comp.argv)} failed: {e}"
    _WORKS[comp] = err
    if err is not None:
        raise CompilerUnavailable(err)


def python_include() -> str:
    return sysconfig.get_paths()["include"]


def compile_shared(comp: Compiler, source: Path, output: Path, *, include: list[str],
                   extra: tuple[str, ...] = (), timeout: float = 300) -> None:
    """Compile one C file into a Python extension module; raises `BuildFailed`."""
    cmd = [*comp.argv, *FLAGS, *extra, *(f"-I{i}" for i in include), str(source), "-o",
           str(output)]
    assert not any(f in cmd for f in FORBIDDEN)
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as e:
        raise BuildFailed(f"{shlex.join(cmd)}: {e}") from None
    if res.returncode != 0:
        raise BuildFailed(f"{shlex.join(cmd)} exited with {res.returncode}:\n"
                          f"{(res.stderr or res.stdout)[-4000:]}")


def cpu_identity() -> str:
    """What -march=native depends on: the CPU's vendor, family, model and feature flags."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return f"{platform.machine()}|{platform.processor()}"
    first = text.split("\n\n", 1)[0]
    keep = {}
    for line in first.splitlines():
        k, _, v = line.partition(":")
        k = k.strip()
        if k in ("vendor_id", "cpu family", "model", "flags", "Features", "CPU implementer",
                 "CPU part"):
            keep[k] = " ".join(sorted(v.split())) if k in ("flags", "Features") else v.strip()
    return platform.machine() + "|" + hashlib.sha256(
        json.dumps(keep, sort_keys=True).encode()).hexdigest()
