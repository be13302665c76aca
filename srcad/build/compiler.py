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

Hygiene (issue 24). Flags of the fast-math family (`FORBIDDEN`, never passed: fast-math
itself, -O-fast, the unsafe-math, finite-math and signed-zeros options, ...) anywhere on a
command line -- in ``CC``, in a response file ``@file`` it names, in clang's
``CCC_OVERRIDE_OPTIONS`` -- are refused before anything runs, in every build path (`UnsafeFlags`: one warning, unfused;
never an ``assert``, which ``python -O`` strips). Every compiler run has a bounded time,
``SRCAD_CC_TIMEOUT`` seconds (default 120; ``--version`` gets at most 15), and runs in a
process group of its own, killed whole when the time is up. A compiler that hangs, crashes
(a signal) or exits 0 without writing its output is `CompilerBroken`: reported once,
remembered for this process and, for an hour (or until the compiler's file changes), in the
cache's ``compilers.json``, so later shapes and processes do not pay again. A build that
fails for a reason of the machine, not the compiler -- disk full, quota, read-only file
system, permission, too many open files, a truncated output -- is `BuildUnavailable`: one
warning naming the cause, unfused, and nothing is remembered (fusion comes back when the
cause goes).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import platform
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

COMMON = ("-ffp-contract=off", "-fwrapv", "-fno-math-errno", "-march=native", "-fPIC",
          "-shared", "-fvisibility=hidden", "-std=gnu11")
# optimisation: gcc's for kernel modules (its cheap vectoriser cost model vectorises the
# kernels' loops as -O3's does, without -O3's compile time), and everyone else's
GCC_KERNELS = ("-O2", "-ftree-vectorize", "-fvect-cost-model=cheap")
DEFAULT_OPT = ("-O3",)
FLAGS = GCC_KERNELS + COMMON  # what gcc builds kernel modules with (flags() says for others)
# flags never passed: a command line carrying one (by prefix) is refused. Each changes
# results (not bit-exact with numpy) or, -ffast-math above all, links crtfastmath.o, which
# sets flush-to-zero for the whole process.
FORBIDDEN = (
    "-ffast-math", "-Ofast", "-funsafe-math-optimizations",  # never passed: refused
    "-ffinite-math-only", "-fno-signed-zeros", "-freciprocal-math", "-fassociative-math",
    "-fno-trapping-math", "-fcx-limited-range", "-fcx-fortran-rules", "-fno-honor-nans",
    "-fno-honor-infinities", "-fapprox-func", "-ffp-model=fast", "-ffp-model=aggressive",
    "-fdenormal-fp-math", "-menable-unsafe-fp-math", "-menable-no-nans", "-menable-no-infs",
    "-mdaz-ftz", "-mrecip", "-mfpmath=387", "-ffp-contract=fast", "-ffp-contract=on",
    "-fexcess-precision=fast", "crtfastmath")


class CompilerUnavailable(RuntimeError):
    """No working C compiler: fused code cannot be built (srcad runs unfused)."""

    warning = None  # the whole warning text, where the default one would mislead
    warn_key = "compiler"  # one warning per process per key


class UnsafeFlags(CompilerUnavailable):
    """A flag of the fast-math family would reach the compiler: nothing is built."""

    warn_key = "unsafe-flags"

    def __init__(self, where: str, bad: list):
        super().__init__(f"{where} carries {' '.join(bad)}")
        self.warning = (f"srcad: {where} carries {' '.join(bad)}: fast-math-family flags "
                        "change results (kernels would not be bit-exact with numpy) and can "
                        "set flush-to-zero for the whole process, so srcad never builds with "
                        "them; fused kernels are not built, running unfused")


class CompilerBroken(CompilerUnavailable):
    """The compiler hung, crashed or exited 0 without output (remembered)."""

    warn_key = "compiler-broken"

    def __init__(self, msg: str):
        super().__init__(msg)
        self.warning = (f"srcad: the C compiler is not usable: {msg}; running unfused "
                        f"(remembered for this process and, for an hour or until the compiler "
                        f"changes, in the kernel cache; SRCAD_CC_TIMEOUT sets the time limit)")


class BuildUnavailable(CompilerUnavailable):
    """A build failed for a reason of the machine (disk full, permissions, ...): this one
    build runs unfused; nothing is remembered."""

    def __init__(self, cause: str, msg: str):
        super().__init__(msg)
        self.cause = cause
        self.warn_key = f"environment:{cause}"
        self.warning = (f"srcad: cannot build fused kernels now ({cause}): {msg}; running "
                        f"unfused until the cause is fixed")


class BuildFailed(RuntimeError):
    """The compiler rejected a kernel module (a bug in srcad's C generation)."""


# what the compiler says when the machine, not the source, made it fail
_ENVIRONMENT = (("No space left on device", "ENOSPC"), ("Disk quota exceeded", "EDQUOT"),
                ("Read-only file system", "EROFS"), ("Permission denied", "EACCES"),
                ("Too many open files", "EMFILE"), ("Cannot allocate memory", "ENOMEM"),
                ("virtual memory exhausted", "ENOMEM"), ("out of memory", "ENOMEM"),
                ("Input/output error", "EIO"))


def os_cause(e: OSError) -> str:
    """``ENOSPC`` and the like for an OSError (its errno's name)."""
    return errno.errorcode.get(e.errno, "OSError") if e.errno else type(e).__name__


def cc_timeout() -> float:
    """Seconds one compiler run may take (``SRCAD_CC_TIMEOUT``, default 120)."""
    try:
        t = float(os.environ.get("SRCAD_CC_TIMEOUT", "") or 120)
    except ValueError:
        t = 120.0
    return t if t > 0 else 120.0


def unsafe_flags(args) -> list[str]:
    """The fast-math-family flags among `args` (a response file ``@path`` is read)."""
    bad = []
    for a in args:
        a = str(a)
        if a.startswith("@") and len(a) > 1:
            try:
                with open(a[1:], encoding="utf-8", errors="replace") as f:
                    bad += unsafe_flags(shlex.split(f.read(1 << 20)))
            except (OSError, ValueError):
                pass
            continue
        for part in a.split(","):  # -Wl,..., -Xlinker, -Wp,... spellings
            if any(part == f or part.startswith(f) for f in FORBIDDEN if f.startswith("-")) \
                    or "crtfastmath" in part:
                bad.append(a)
                break
    return bad


def check_command(cmd, where: str | None = None) -> None:
    """Raise `UnsafeFlags` when a fast-math-family flag would reach the compiler through
    `cmd` or clang's ``CCC_OVERRIDE_OPTIONS``."""
    bad = unsafe_flags(cmd)
    if bad:
        raise UnsafeFlags(where or f"the compiler command {shlex.join(map(str, cmd))!r}", bad)
    override = os.environ.get("CCC_OVERRIDE_OPTIONS", "")
    if override:
        bad = unsafe_flags(override.replace("+", " ").replace("#", " ").split())
        if bad:
            raise UnsafeFlags("CCC_OVERRIDE_OPTIONS", bad)


def run(cmd, timeout: float):
    """(returncode, stdout, stderr) of `cmd`, in a process group of its own, killed whole
    after `timeout` seconds (subprocess.TimeoutExpired). A compiler wrapper's children are
    killed too, so no orphan holds our pipes open."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace", start_new_session=hasattr(os, "killpg"))
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        _kill(proc)
        raise
    return proc.returncode, out, err


def _kill(proc) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass
    try:
        proc.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass


def classify(cmd, rc: int, msg: str):
    """The exception for a compiler run that exited with `rc`: a signal is `CompilerBroken`,
    a message of the machine (disk full, ...) `BuildUnavailable`, else `BuildFailed`."""
    line = shlex.join(map(str, cmd))
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return CompilerBroken(f"{cmd[0]} was killed by {name}")
    for text, cause in _ENVIRONMENT:
        if text.lower() in msg.lower():
            return BuildUnavailable(cause, f"{line}: {text}")
    return BuildFailed(f"{line} exited with {rc}:\n{msg[-4000:]}")


def check_output(path: Path, cmd=None) -> None:
    """Raise unless `path` is a whole shared object: present, not empty, the platform's
    magic, and (ELF) every program segment and the section table inside the file. A missing
    or empty output of a command that exited 0 is `CompilerBroken`; a short or damaged one
    (a linker that hit a full disk and still exited 0) is `BuildUnavailable`."""
    who = cmd[0] if cmd else "the compiler"
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise CompilerBroken(f"{who} exited 0 but wrote no {path.name}") from None
    if size == 0:
        raise CompilerBroken(f"{who} exited 0 but wrote an empty {path.name}")
    problem = _elf_problem(path, size)
    if problem is not None:
        raise BuildUnavailable("truncated output",
                               f"{who} exited 0 but its output {path.name} {problem} (a full "
                               f"disk?)")


def _elf_problem(path: Path, size: int) -> str | None:
    with open(path, "rb") as f:
        head = f.read(64)
        if sys.platform == "darwin":
            return None if head[:4] in (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe") else \
                "is not a Mach-O file"
        if os.name == "nt":
            return None if head[:2] == b"MZ" else "is not a DLL"
        if head[:4] != b"\x7fELF" or len(head) < 52:
            return "is not an ELF file"
        wide, order = head[4] == 2, "<" if head[5] == 1 else ">"
        if wide:
            if len(head) < 64:
                return "is truncated"
            phoff, shoff = struct.unpack_from(order + "QQ", head, 32)
            phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", head, 54)
        else:
            phoff, shoff = struct.unpack_from(order + "II", head, 28)
            phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", head, 42)
        if phoff + phentsize * phnum > size or shoff + shentsize * shnum > size:
            return "is truncated"
        f.seek(phoff)
        table = f.read(phentsize * phnum)
        for i in range(phnum):
            e = table[i * phentsize:(i + 1) * phentsize]
            if wide:
                off, filesz = struct.unpack_from(order + "Q", e, 8)[0], \
                    struct.unpack_from(order + "Q", e, 32)[0]
            else:
                off, filesz = struct.unpack_from(order + "I", e, 4)[0], \
                    struct.unpack_from(order + "I", e, 16)[0]
            if off + filesz > size:
                return "is truncated"
    return None


@dataclass(frozen=True)
class Compiler:
    argv: tuple[str, ...]  # the command, e.g. ("gcc",) or ("ccache", "gcc")
    path: str  # the resolved executable
    version: str  # its --version text
    tag: str = ""  # argv, path, size and mtime: what compilers.json remembers it by

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


_FOUND: dict = {}  # tag -> Compiler, or the CompilerBroken it raised
_WORKS: dict = {}  # Compiler -> None (builds) or the CompilerUnavailable it raised
BROKEN_TTL = 3600.0  # seconds compilers.json remembers a broken compiler


def _command() -> tuple[str, ...]:
    cc = os.environ.get("CC", "").strip()
    if cc:
        try:
            return tuple(shlex.split(cc))
        except ValueError as e:
            raise CompilerUnavailable(f"CC={cc!r} cannot be split into words: {e}") from None
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return (name,)
    raise CompilerUnavailable("no C compiler found (set CC, or install gcc or clang)")


def find(cache: Path | None = None) -> Compiler:
    """The compiler to use, identified (``--version``); raises `CompilerUnavailable`
    (`UnsafeFlags` for a fast-math-family flag in ``CC``, `CompilerBroken` for one that
    hangs, crashes or fails to answer, remembered)."""
    argv = _command()
    check_command(argv[1:], f"CC={' '.join(argv)!r}")
    exe = shutil.which(argv[0])
    if exe is None:
        raise CompilerUnavailable(f"CC={' '.join(argv)!r}: {argv[0]!r} is not an executable")
    real = os.path.realpath(exe)
    try:
        st = os.stat(real)
    except OSError as e:
        raise CompilerUnavailable(f"cannot stat the compiler {real}: {e}") from None
    tag = f"{' '.join(argv)}|{real}|{st.st_size}|{st.st_mtime_ns}"
    found = _FOUND.get(tag)
    if isinstance(found, Exception):
        raise found
    if found is not None:
        return found
    known = read_known(cache)
    broken = known_broken_in(known, tag)
    if broken is not None:
        _FOUND[tag] = CompilerBroken(broken)
        raise _FOUND[tag]
    version = known.get(tag)
    if not isinstance(version, str):
        cmd = [*argv, "--version"]
        try:
            rc, out, err = run(cmd, min(15.0, cc_timeout()))
        except subprocess.TimeoutExpired:
            msg = f"{shlex.join(cmd)} did not answer in {min(15.0, cc_timeout()):g} s"
            remember_broken(cache, tag, msg)
            _FOUND[tag] = CompilerBroken(msg)
            raise _FOUND[tag] from None
        except (OSError, subprocess.SubprocessError) as e:
            raise CompilerUnavailable(f"{' '.join(argv)} --version failed: {e}") from None
        if rc < 0:
            exc = classify(cmd, rc, err)
            remember_broken(cache, tag, str(exc))
            _FOUND[tag] = exc
            raise exc
        if rc != 0:
            raise CompilerUnavailable(f"{' '.join(argv)} --version exited with "
                                      f"{rc}: {err.strip()[:200]}")
        version = out.strip()
        known = read_known(cache)
        known[tag] = version
        write_known(cache, known)
    comp = Compiler(argv, real, version, tag)
    _FOUND[tag] = comp
    return comp


def known_broken_in(known: dict, tag: str) -> str | None:
    """Why compilers.json says the compiler `tag` is broken, if it says so within the hour."""
    rec = known.get("broken:" + tag)
    if isinstance(rec, dict) and isinstance(rec.get("at"), (int, float)) and \
            0 <= time.time() - rec["at"] < BROKEN_TTL:
        return str(rec.get("why", "remembered as broken"))
    return None


def remember_broken(cache: Path | None, tag: str, why: str) -> None:
    known = read_known(cache)
    known["broken:" + tag] = {"why": why, "at": time.time()}
    write_known(cache, known)


def _known_path(cache: Path | None) -> Path | None:
    return None if cache is None else cache / "compilers.json"


def read_known(cache) -> dict:
    """compilers.json of the kernel cache `cache` (None: {}): what this user's processes
    found of the compilers (and of numpy's BLAS: srcad.build `_blas_facts`), believed only
    from a file of ours that group and others cannot write."""
    p = _known_path(cache)
    if p is None:
        return {}
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
            return {}  # not ours alone: not believed (it names compilers' versions)
        with os.fdopen(fd, "r", closefd=False) as f:
            data = json.loads(f.read(1 << 22))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}
    finally:
        os.close(fd)


def write_known(cache, known: dict) -> None:
    p = _known_path(cache)
    if p is None:
        return
    try:
        st = os.stat(cache)
        if not st.st_mode & 0o200 or st.st_mode & 0o022 or \
                (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            return  # read-only (even root, who could, does not write it), or not ours
    except OSError:
        return
    tmp = p.with_name(f".{p.name}.{os.getpid()}")
    try:
        tmp.write_text(json.dumps(known, indent=1, sort_keys=True))
        os.replace(tmp, p)
    except OSError:
        try:
            tmp.unlink()  # (a full disk: no .compilers.json.<pid> left behind)
        except OSError:
            pass


def known_broken(comp: Compiler, cache: Path | None = None) -> None:
    """Raise `CompilerUnavailable` if this process (`check_works`, a build that hung or
    crashed) or, with `cache`, compilers.json has found `comp` unable to build."""
    if _WORKS.get(comp) is not None:
        raise _WORKS[comp]
    if cache is not None and comp.tag:
        why = known_broken_in(read_known(cache), comp.tag)
        if why is not None:
            _WORKS[comp] = CompilerBroken(why)
            raise _WORKS[comp]


def mark_broken(comp: Compiler, exc: CompilerBroken, cache: Path | None) -> None:
    """Remember that `comp` hung, crashed or wrote nothing: for this process, and in the
    cache's compilers.json for an hour."""
    _WORKS[comp] = exc
    if comp.tag:
        _FOUND[comp.tag] = exc
        remember_broken(cache, comp.tag, str(exc))


def check_works(comp: Compiler, cache: Path | None = None) -> None:
    """Compile and link a trivial shared object once per process; raises
    `CompilerUnavailable` with the compiler's message when that fails. (Kernel modules run
    it only after their build failed, to tell a compiler that cannot build anything --
    srcad runs unfused -- from a module it rejects: ~40 ms off every first build.) A failure
    of the machine (`BuildUnavailable`: disk full, ...) is not remembered."""
    if comp in _WORKS:
        if _WORKS[comp] is not None:
            raise _WORKS[comp]
        return
    err = None
    with tempfile.TemporaryDirectory(prefix="srcad-cc-") as d:
        src = Path(d) / "probe.c"
        out = Path(d) / "p.so"
        cmd = [*comp.argv, *flags(comp), str(src), "-o", str(out)]
        try:
            src.write_text("int srcad_probe(int x) { return x + 1; }\n")
            check_command(cmd)
            rc, so, se = run(cmd, cc_timeout())
            if rc != 0:
                exc = classify(cmd, rc, se or so)
                err = exc if not isinstance(exc, BuildFailed) else CompilerUnavailable(
                    f"{' '.join(comp.argv)} cannot build a shared object: "
                    f"{(se or so).strip()[:300]}")
            else:
                check_output(out, cmd)
        except subprocess.TimeoutExpired:
            err = CompilerBroken(f"{shlex.join(cmd)} ran past SRCAD_CC_TIMEOUT="
                                 f"{cc_timeout():g} s")
        except CompilerUnavailable as e:
            err = e
        except OSError as e:
            err = BuildUnavailable(os_cause(e), f"{e.strerror}: {e.filename or d}")
        except subprocess.SubprocessError as e:
            err = CompilerUnavailable(f"{' '.join(comp.argv)} failed: {e}")
    if isinstance(err, BuildUnavailable):
        raise err  # the machine's fault: asked again next time
    if isinstance(err, CompilerBroken):
        mark_broken(comp, err, cache)
    _WORKS[comp] = err
    if err is not None:
        raise err


def python_include() -> str:
    return sysconfig.get_paths()["include"]


def compile_shared(comp: Compiler, source: Path, output: Path, *, include: list[str],
                   extra: tuple[str, ...] = (), timeout: float | None = None,
                   kernels: bool = True) -> None:
    """Compile one C file into a Python extension module (with `flags`); raises
    `BuildFailed` (the compiler rejected it), `CompilerBroken` (it hung past `timeout`,
    default `cc_timeout()`, crashed, or wrote nothing), `BuildUnavailable` (the machine)
    or `UnsafeFlags`."""
    cmd = [*comp.argv, *flags(comp, kernels=kernels), *extra, *(f"-I{i}" for i in include),
           str(source), "-o", str(output)]
    (cmd, rc, msg), = _run_all([cmd], timeout)
    if rc != 0:
        raise classify(cmd, rc, msg)
    check_output(output, cmd)


def _run_all(cmds: list[list[str]], timeout: float | None) -> list:
    """Run the commands at once; [(command, returncode, stderr or stdout)] in order. Raises
    `UnsafeFlags` before starting any that carries a fast-math-family flag,
    `CompilerBroken` when one runs past `timeout` (default `cc_timeout()`; all are then
    killed, their process groups whole), `BuildUnavailable` when one cannot start for a
    reason of the machine, `CompilerUnavailable` otherwise."""
    for cmd in cmds:
        check_command(cmd)
    timeout = cc_timeout() if timeout is None else timeout
    procs = []
    try:
        for cmd in cmds:
            try:
                procs.append((cmd, subprocess.Popen(
                    cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                    errors="replace", start_new_session=hasattr(os, "killpg"))))
            except OSError as e:
                if e.errno in (errno.ENOENT, errno.EACCES, errno.ENOEXEC):
                    raise CompilerUnavailable(f"{shlex.join(cmd)}: {e}") from None
                raise BuildUnavailable(os_cause(e), f"cannot start {cmd[0]}: {e.strerror}") \
                    from None
        done = []
        deadline = time.monotonic() + timeout
        for cmd, proc in procs:
            try:
                out, err = proc.communicate(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise CompilerBroken(f"{shlex.join(cmd)} ran past SRCAD_CC_TIMEOUT="
                                     f"{timeout:g} s") from None
            done.append((cmd, proc.returncode, err or out))
        return done
    finally:
        for _, proc in procs:
            if proc.poll() is None or hasattr(os, "killpg"):
                _kill(proc)  # (and any child a wrapper left running)


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
                  extra: tuple[str, ...] = (), parts: int = 2, timeout: float | None = None,
                  kernels: bool = True) -> None:
    """Compile one C file written for a split build (srcad/lower/cgen.py's ``SRCAD_PART``
    guards) as `parts` translation units at once -- ``-c -DSRCAD_PART=p`` each -- then link
    the objects into one extension module; raises `BuildFailed` naming the part that failed
    and the compiler's message. The objects are written beside `output`."""
    every = flags(comp, kernels=kernels)
    compile_flags = [f for f in every if f != "-shared"]
    objs = [output.with_name(f"{output.name}.part{p}.o") for p in range(parts)]
    cmds = [[*comp.argv, *compile_flags, *extra, f"-DSRCAD_PART={p}",
             *(f"-I{i}" for i in include), "-c", str(source), "-o", str(o)]
            for p, o in enumerate(objs)]
    for p, (cmd, rc, msg) in enumerate(_run_all(cmds, timeout)):
        if rc != 0:
            exc = classify(cmd, rc, msg)
            if isinstance(exc, BuildFailed):
                exc = BuildFailed(f"{shlex.join(cmd)} (part {p} of {parts}) exited with "
                                  f"{rc}:\n{msg[-4000:]}")
            raise exc
    for o, cmd in zip(objs, cmds):
        if not o.exists() or o.stat().st_size == 0:
            raise CompilerBroken(f"{cmd[0]} exited 0 but wrote no {o.name}")
    link = [*comp.argv, *every, *map(str, objs), "-o", str(output)]
    (cmd, rc, msg), = _run_all([link], timeout)
    if rc != 0:
        exc = classify(cmd, rc, msg)
        if isinstance(exc, BuildFailed):
            exc = BuildFailed(f"{shlex.join(cmd)} (linking {parts} parts) exited with {rc}:"
                              f"\n{msg[-4000:]}")
        raise exc
    check_output(output, link)


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
