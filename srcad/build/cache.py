"""The kernel cache: content-addressed, locked, atomic, verified before load.

Layout of the cache directory (``$SRCAD_CACHE_DIR``, else platformdirs' user cache dir +
``/kernels``; created 0700; one directory per user)::

    compilers.json                  compiler identities by (path, size, mtime)
    <module>.c                      the C source of a module (for people; not read back)
    <module><EXT_SUFFIX>            the built extension module
    <module>.json                   its key material, size and sha256 (the entry's seal)
    <module>.lock                   the per-entry file lock

``<module>`` is ``srcad_k_`` + the first 24 hex digits of the entry's key: a sha256 over the
C source, the compiler's identity, the flags, the CPU (``-march=native`` code must never run
on another CPU), srcad's version, the C versions of the op-table rows used, the runtime
header's hash and the Python and numpy ABI. The module name contains the key, so a module
is never imported twice under one name with different code (Python would silently keep the
first).

Getting an entry (pytensor's ``module_from_key`` shape): look; if absent or its seal does
not match, take the entry's lock, look again, build into a private temporary directory
inside the cache, fsync, ``os.replace`` into place (a new inode: a process that has the old
file mapped keeps it), write the seal the same way, and load. A truncated or corrupt entry
fails the seal and is rebuilt, never loaded (loading a truncated .so kills the process with
SIGBUS). A cache directory that cannot be written (or is not safely ours: another owner, or
writable by group or others) is replaced by a private temporary directory for this process,
with one warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import stat
import tempfile
import time
import warnings
from pathlib import Path

import platformdirs

try:
    import fcntl
except ImportError:  # (Windows: the entry lock is filelock's)
    fcntl = None

from .compiler import Compiler, compile_shared, compile_split, flags, parallel_parts

EXT = importlib.machinery.EXTENSION_SUFFIXES[0]
_LOADED: dict[str, object] = {}  # module name -> module, for this process
BUILT: list[str] = []  # the entries this process compiled (tests read it)
_DIRS: dict = {}
_PRIVATE: list = []


def _default_dir() -> Path:
    env = os.environ.get("SRCAD_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_cache_dir("srcad", appauthor=False)) / "kernels"


def _usable(path: Path) -> str | None:
    """None when `path` is a directory we own, others cannot write, and we can write."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = path.stat()
    except OSError as e:
        return f"cannot create {path}: {e.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a directory"
    if not st.st_mode & stat.S_IWUSR:
        return f"{path} is read-only"  # (even for root, who could write it anyway)
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"{path} belongs to another user"
    if st.st_mode & 0o022:
        return f"{path} is writable by group or others"
    if not os.access(path, os.W_OK | os.X_OK):
        return f"{path} is not writable"
    return None


def cache_dir(*, for_writing: bool = True) -> Path:
    """The directory entries are built into (and looked up in first)."""
    want = _default_dir()
    key = str(want)
    if key in _DIRS:
        return _DIRS[key]
    problem = _usable(want)
    if problem is None:
        _DIRS[key] = want
        return want
    if not for_writing and want.is_dir():
        return want
    if not _PRIVATE:
        _PRIVATE.append(Path(tempfile.mkdtemp(prefix="srcad-kernels-")))  # 0700
        warnings.warn(f"srcad: the kernel cache {problem}; building kernels in the private "
                      f"directory {_PRIVATE[0]} for this process", stacklevel=4)
    _DIRS[key] = _PRIVATE[0]
    return _PRIVATE[0]


def wanted_dir() -> Path:
    """The configured cache directory, created 0700 if absent (entries are looked up in it
    even when it cannot be written)."""
    d = _default_dir()
    if not d.exists():
        try:
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            pass
    return d


def entry_key(material: dict) -> str:
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _sealed(d: Path, module: str, key: str) -> Path | None:
    """The entry's .so if its seal matches its bytes, else None."""
    so, seal = d / f"{module}{EXT}", d / f"{module}.json"
    try:
        meta = json.loads(seal.read_text())
        if meta.get("key") != key or so.stat().st_size != meta.get("size"):
            return None
        if _sha256(so) != meta.get("sha256"):
            return None
    except (OSError, ValueError, AttributeError):
        return None
    return so


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _atomic_write(path: Path, data: bytes, tmpdir: Path) -> None:
    tmp = tmpdir / (path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def get(module: str, key: str, material: dict, c_source: str, comp: Compiler, *,
        include: list[str], extra: tuple[str, ...] = (), before_build=None):
    """The loaded extension module for this entry: from this process, from the cache, or
    built now (after ``before_build(comp)``, which may raise). Raises `BuildFailed` when the
    compiler rejects the source."""
    if module in _LOADED:
        return _LOADED[module]
    bad = False
    for look in [wanted_dir()] + _PRIVATE:
        so = _sealed(look, module, key)
        if so is not None:
            try:
                mod = _import(module, so)
            except ImportError:
                bad = True  # sealed but unloadable: rebuilt below
                continue
            _LOADED[module] = mod
            return mod
    d = cache_dir()  # (a directory we may write: the configured one, else a private one)
    with _locked(d / f"{module}.lock"):
        so = None if bad else _sealed(d, module, key)  # another process may have built it
        mod = None
        if so is not None:
            try:
                mod = _import(module, so)
            except ImportError:
                so = None
        if mod is None:
            if before_build is not None:
                before_build(comp)
            so = _build(d, module, key, material, c_source, comp, include, extra)
            mod = _import(module, so)
    _LOADED[module] = mod
    return mod


@contextlib.contextmanager
def _locked(path: Path, timeout: float = 600):
    """Hold the entry's lock: ``flock`` on POSIX -- the lock filelock's UnixFileLock takes,
    so processes using either exclude each other -- else filelock's (importing filelock
    alone took 25-50 ms of every first build). The lock file is never removed; one replaced
    under us (by another tool) is opened again."""
    if fcntl is None:  # (Windows)
        from filelock import FileLock, Timeout
        lock = FileLock(str(path), timeout=timeout)
        try:
            lock.acquire()
        except Timeout:
            raise RuntimeError(f"srcad: timed out waiting for the kernel cache lock {path}")
        try:
            yield
        finally:
            lock.release()
        return
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise RuntimeError("srcad: timed out waiting for the kernel cache "
                                           f"lock {path}") from None
                    time.sleep(delay)
                    delay = min(2 * delay, 0.05)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                try:
                    yield
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                return
        finally:
            os.close(fd)


def _import(module: str, so: Path):
    """Import an extension module from `so`. A path this process has dlopen'ed before is
    loaded through a fresh hard link: the dynamic loader matches by path and would hand back
    the old mapping (the stale-code hazard)."""
    path = so
    if str(so) in _OPENED:
        path = so.with_name(f".{so.stem}.{os.getpid()}.{len(_OPENED)}{EXT}")
        try:
            os.link(so, path)
        except OSError:
            shutil.copyfile(so, path)
    _OPENED.add(str(so))
    try:
        spec = importlib.util.spec_from_file_location(module, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        if path != so:
            try:
                os.unlink(path)  # the mapping stays valid
            except OSError:
                pass


_OPENED: set = set()


def _build(d: Path, module: str, key: str, material: dict, c_source: str, comp: Compiler,
           include, extra) -> Path:
    tmpdir = Path(tempfile.mkdtemp(prefix=f".build-{module}-", dir=d))
    try:
        src = tmpdir / f"{module}.c"
        src.write_text(c_source)
        out = tmpdir / f"{module}{EXT}"
        kernels = material.get("kind") != "runtime"  # (the runtime is built at -O3)
        parts = parallel_parts(c_source)
        if parts > 1:  # (the objects go into tmpdir, removed below)
            compile_split(comp, src, out, include=include, extra=extra, parts=parts,
                          kernels=kernels)
        else:
            compile_shared(comp, src, out, include=include, extra=extra, kernels=kernels)
        BUILT.append(module)
        _fsync(out)
        so = d / f"{module}{EXT}"
        os.replace(out, so)  # a new inode: never written over a file someone has mapped
        meta = {"key": key, "size": so.stat().st_size, "sha256": _sha256(so),
                "flags": list(flags(comp, kernels=kernels)) + list(extra), "parts": parts,
                "material": material}
        _atomic_write(d / f"{module}.json", json.dumps(meta, indent=1, sort_keys=True).encode(),
                      tmpdir)
        _atomic_write(d / f"{module}.c", c_source.encode(), tmpdir)
        try:
            _fsync(d)
        except OSError:
            pass
        return so
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def forget_loaded() -> None:
    """Tests: forget which modules this process loaded (they stay loaded)."""
    _LOADED.clear()
    _DIRS.clear()


__all__ = ["cache_dir", "entry_key", "get", "EXT"]
