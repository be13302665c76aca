"""The C compiler srcad builds kernels with: which one, what it is, and how it is called.

`CC` (split like a shell word list, so ``CC="ccache gcc"`` works) wins; otherwise the first of
``cc``, ``gcc``, ``clang`` on PATH. Its identity -- resolved path and ``--version`` text -- goes
into every cache key, and is remembered in the cache directory per (path, size, mtime), so a
warm load never starts a process.

Flags (DESIGN.md, "Facts measured"): kernels get ``-O2 -ftree-vectorize
-fvect-cost-model=cheap`` from gcc (about 40% less compile time than ``-O3``, and kernels
as fast: REPORT.md, issue 15's section) and ``-O3`` from other compilers and for the
runtime (gcc 12 does not vectorise at a plain -O2), ``-ffp-contract=off`` (no FMA
contraction of ``a*b+c``: numpy rounds twice), ``-fwrapv``
(integer overflow wraps, as numpy's), ``-fno-math-errno`` (lets ``sqrt`` vectorise; values
and floating-point flags are unchanged) and ``-march=native`` (the key holds the CPU).
srcad never uses ``-ffast-math`` (it links ``crtfastmath.o``, which flushes subnormals
process-wide). A module of two or more kernels is compiled as two translation units at once
where a CPU is idle (`compile_split`, `parallel_parts`).
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

COMMON = ("-ffp-contract=off", "-fwrapv", "-fno-math-errno", "-march=native", "-fPIC",
          "-shared", "-fvisibility=hidden", "-std=gnu11")
# optimisation: gcc's for kernel modules (its cheap vectoriser cost model vectorises the
# kernels' loops as -O3's does, without -O3's compile time), and everyone else's
GCC_KERNELS = ("-O2", "-ftree-vectorize", "-fvect-cost-model=cheap")
DEFAULT_OPT = ("-O3",)
FLAGS = GCC_KERNELS + COMMON  # what gcc builds kernel modules with (flags() says for others)
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

    @property
    def is_gcc(self) -> bool:
        """GNU's gcc (its --version names the FSF; clang's, even installed as gcc, does not)."""
        return "Free Software Foundation" in self.version and "clang" not in self.version


def flags(comp: Compiler, *, kernels: bool = True) -> tuple[str, ...]:
    """The flags `comp` builds with: kernel modules (`kernels`) or the runtime."""
    return (GCC_KERNELS if kernels and comp.is_gcc else DEFAULT_OPT) + COMMON


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


def known_broken(comp: Compiler) -> None:
    """Raise `CompilerUnavailable` if `check_works` has found `comp` unable to build."""
    if _WORKS.get(comp) is not None:
        raise CompilerUnavailable(_WORKS[comp])


def check_works(comp: Compiler) -> None:
    """Compile and link a trivial shared object once per process; raises
    `CompilerUnavailable` with the compiler's message when that fails. (Kernel modules run
    it only after their build failed, to tell a compiler that cannot build anything --
    srcad runs unfused -- from a module it rejects: ~40 ms off every first build.)"""
    if comp in _WORKS:
        if _WORKS[comp] is not None:
            raise CompilerUnavailable(_WORKS[comp])
        return
    with tempfile.TemporaryDirectory(prefix="srcad-cc-") as d:
        src = Path(d) / "probe.c"
        src.write_text("int srcad_probe(int x) { return x + 1; }\n")
        try:
            res = subprocess.run([*comp.argv, *flags(comp), str(src), "-o",
                                  str(Path(d) / "p.so")], capture_output=True, text=True,
                                 timeout=60)
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
                   extra: tuple[str, ...] = (), timeout: float = 300,
                   kernels: bool = True) -> None:
    """Compile one C file into a Python extension module (with `flags`); raises
    `BuildFailed`."""
    cmd = [*comp.argv, *flags(comp, kernels=kernels), *extra, *(f"-I{i}" for i in include),
           str(source), "-o", str(output)]
    assert not any(f in cmd for f in FORBIDDEN)
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as e:
        raise BuildFailed(f"{shlex.join(cmd)}: {e}") from None
    if res.returncode != 0:
        raise BuildFailed(f"{shlex.join(cmd)} exited with {res.returncode}:\n"
                          f"{(res.stderr or res.stdout)[-4000:]}")


def _run_all(cmds: list[list[str]], timeout: float) -> list:
    """Run the commands at once; [(command, returncode, stderr or stdout)] in order, or raise
    `BuildFailed` when one cannot start or runs past `timeout` (the others are stopped)."""
    procs = []
    try:
        for cmd in cmds:
            try:
                procs.append((cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                                    stderr=subprocess.PIPE, text=True)))
            except OSError as e:
                raise BuildFailed(f"{shlex.join(cmd)}: {e}") from None
        done = []
        for cmd, proc in procs:
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise BuildFailed(f"{shlex.join(cmd)}: timed out after {timeout} s") from None
            done.append((cmd, proc.returncode, err or out))
        return done
    finally:
        for _, proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


SPLIT_MARK = "#if SRCAD_IN_PART(1)"  # in a C text that cgen guarded for a split build


def parallel_parts(c_source: str) -> int:
    """How many translation units to compile `c_source` as: 2 when its kernels are guarded
    for a split build (two or more kernels: cgen.module_c), this process may run on two or
    more CPUs and one of them is idle (the last minute's load average below the CPUs less
    one), else 1. Each part costs ~75% of the whole (the headers, Python.h above all, are
    compiled in both), so on a machine with no idle CPU the two parts take longer than one
    unit (REPORT.md, issue 15). ``SRCAD_BUILD_PARTS=1`` or ``=2`` decides instead."""
    if SPLIT_MARK not in c_source:
        return 1
    forced = os.environ.get("SRCAD_BUILD_PARTS", "").strip()
    if forced in ("1", "2"):
        return int(forced)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return 2 if cpus >= 2 and load < cpus - 1 else 1


def compile_split(comp: Compiler, source: Path, output: Path, *, include: list[str],
                  extra: tuple[str, ...] = (), parts: int = 2, timeout: float = 300,
                  kernels: bool = True) -> None:
    """Compile one C file written for a split build (srcad/lower/cgen.py's ``SRCAD_PART``
    guards) as `parts` translation units at once -- ``-c -DSRCAD_PART=p`` each -- then link
    the objects into one extension module; raises `BuildFailed` naming the part that failed
    and the compiler's message. The objects are written beside `output`."""
    every = flags(comp, kernels=kernels)
    assert not any(f in FORBIDDEN for f in (*every, *extra))
    compile_flags = [f for f in every if f != "-shared"]
    objs = [output.with_name(f"{output.name}.part{p}.o") for p in range(parts)]
    cmds = [[*comp.argv, *compile_flags, *extra, f"-DSRCAD_PART={p}",
             *(f"-I{i}" for i in include), "-c", str(source), "-o", str(o)]
            for p, o in enumerate(objs)]
    for p, (cmd, rc, msg) in enumerate(_run_all(cmds, timeout)):
        if rc != 0:
            raise BuildFailed(f"{shlex.join(cmd)} (part {p} of {parts}) exited with {rc}:\n"
                              f"{msg[-4000:]}")
    link = [*comp.argv, *every, *map(str, objs), "-o", str(output)]
    (cmd, rc, msg), = _run_all([link], timeout)
    if rc != 0:
        raise BuildFailed(f"{shlex.join(cmd)} (linking {parts} parts) exited with {rc}:\n"
                          f"{msg[-4000:]}")


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
