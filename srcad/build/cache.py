"""The kernel cache: content-addressed, locked, atomic, verified before load.

Layout of the cache directory (``$SRCAD_CACHE_DIR``, else platformdirs' user cache dir +
``/kernels``; created 0700; one directory per user)::

    compilers.json                  compiler identities by (path, size, mtime); broken ones
    <module>.c                      the C source of a module (for people; not read back)
    <module><EXT_SUFFIX>            the built extension module
    <module>.json                   its key, size, sha256 and HMAC (the entry's seal)
    <module>.lock                   the per-entry file lock

``<module>`` is ``srcad_k_`` + the first 24 hex digits of the entry's key: a sha256 over the
C source, the compiler's identity, the flags, the CPU (``-march=native`` code must never run
on another CPU), srcad's version, the C versions of the op-table rows used, the runtime
header's hash and the Python and numpy ABI. The module name contains the key, so a module
is never imported twice under one name with different code (Python would silently keep the
first).

Trust model (issue 24). Loading a cached ``.so`` runs its code in this process, so an entry
is loaded only when all of these hold, checked on every load, before ``dlopen``:

1. The directory is ours alone: owned by the current user, not writable by group or others,
   and every directory above it owned by us or root and not writable by group or others
   (unless sticky, as ``/tmp``) -- so nobody else can plant, rename or swap a file between
   the checks and the ``dlopen`` (the rule of OpenSSH's StrictModes; ccache and pip's wheel
   cache trust their per-user directory the same way). A directory that fails is never
   read: kernels are built in a private temporary directory for the process, one warning.
   There is no shared team cache: a team shares compiler work with ``CC="ccache gcc"``,
   whose outputs srcad then verifies and seals like its own.
2. The seal and the ``.so`` are regular files (not symlinks: opened ``O_NOFOLLOW``), owned
   by us and not writable by group or others.
3. The seal is authentic: it carries an HMAC-SHA256 of (module, key, size, sha256) under a
   per-user secret of 32 random bytes, ``cache.key`` in the user's config directory
   (platformdirs' ``user_config_dir("srcad")``; made 0600 in a 0700 directory, and used only
   while it is ours and private). The secret never lives in the cache, so whoever could
   write the cache anyway -- a restored CI cache, a copied or network-mounted directory
   where ownership means little, a mistake in a check above -- still cannot forge a seal.
   Without a usable secret (no writable config directory) a per-process one is used: the
   process builds what it needs and trusts nothing from before.
4. The ``.so`` has the size and sha256 the seal names (hashed through the descriptor whose
   owner and mode were checked).

Anything that fails is rebuilt privately and never loaded; a seal from before this scheme
(no HMAC) fails too and is rebuilt once.

Getting an entry (pytensor's ``module_from_key`` shape): look; if absent or its seal does
not match, take the entry's lock, look again, build into a private temporary directory
inside the cache, check the output (not empty, a whole ELF file: every segment and the
section table inside it), hash it, fsync, ``os.replace`` into place (a new inode: a process
that has the old file mapped keeps it), write the seal the same way, and load. Nothing
half-written is sealed: a linker that hit a full disk and still exited 0 leaves a short
file, which fails the check. A lock held past ``SRCAD_LOCK_TIMEOUT`` seconds (default: the
compiler's time limit plus 30 s) -- a hung or stopped builder -- is given up on: this
process builds privately instead. An OSError of the machine (ENOSPC, EACCES, EROFS, EMFILE,
EDQUOT, ...) is `BuildUnavailable`: unfused, one warning naming the cause, nothing
remembered. A first build that takes over ``SRCAD_BUILD_NOTICE`` seconds (default 2; 0
turns it off) prints a one-line notice to stderr.

Leftovers: ``.build-*`` directories, ``.*.tmp`` files and load links older than
`STALE_AFTER` seconds are removed by the next process that uses the cache; a private
directory (``$TMPDIR/srcad-kernels-<pid>-*``) is removed when its process exits, and one of
a process that died (``kill -9``) by the next start.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import hmac
import importlib.machinery
import importlib.util
import json
import os
import shutil
import stat
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import platformdirs

try:
    import fcntl
except ImportError:  # (Windows: the entry lock is filelock's)
    fcntl = None

from . import compiler
from .compiler import (BuildUnavailable, Compiler, CompilerBroken, compile_shared,
                       compile_split, flags, os_cause, parallel_parts)

EXT = importlib.machinery.EXTENSION_SUFFIXES[0]
_LOADED: dict[str, object] = {}  # module name -> module, for this process
BUILT: list[str] = []  # the entries this process compiled (tests read it)
EVENTS: list[str] = []  # notable things this process did with the cache (tests read it)
_DIRS: dict = {}
_PRIVATE: list = []
_CLEANED: set = set()
SEAL_VERSION = 2
STALE_AFTER = 600.0  # seconds after which a .build-* directory or temp file is a leftover
_UID = os.getuid() if hasattr(os, "getuid") else None
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class LockTimeout(RuntimeError):
    """The entry's lock was held past the lock timeout (a hung or stopped builder)."""


def _default_dir() -> Path:
    env = os.environ.get("SRCAD_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_cache_dir("srcad", appauthor=False)) / "kernels"


def _env_seconds(name: str, default: float) -> float:
    try:
        v = os.environ.get(name, "").strip()
        return float(v) if v else default
    except ValueError:
        return default


def lock_timeout() -> float:
    """``SRCAD_LOCK_TIMEOUT``, default the compiler's time limit plus 30 s."""
    return _env_seconds("SRCAD_LOCK_TIMEOUT", compiler.cc_timeout() + 30)


def _ours(st) -> bool:
    return _UID is None or st.st_uid == _UID


def trust_problem(path: Path) -> str | None:
    """None when `path` is a directory we may load code from (the trust model's rule 1),
    else why not."""
    try:
        st = os.stat(path)
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if not _ours(st):
        return "belongs to another user"
    if st.st_mode & 0o022:
        return "is writable by group or others"
    if _UID is None:
        return None
    up = Path(os.path.realpath(path)).parent
    while True:
        try:
            st = os.stat(up)
        except OSError as e:
            return f"has an unreadable parent {up} ({e.strerror})"
        if st.st_uid not in (_UID, 0):
            return f"is inside {up}, which belongs to another user"
        if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            return f"is inside {up}, which is writable by group or others"
        if up.parent == up:
            return None
        up = up.parent


def _usable(path: Path) -> str | None:
    """None when `path` is a directory we trust and can write (created 0700 if absent)."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = path.stat()
    except OSError as e:
        return f"cannot create {path}: {e.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a directory"
    if not st.st_mode & stat.S_IWUSR:
        return f"{path} is read-only"  # (even for root, who could write it anyway)
    problem = trust_problem(path)
    if problem is not None:
        return f"{path} {problem}"
    if not os.access(path, os.W_OK | os.X_OK):
        return f"{path} is not writable"
    return None


def _private_dir(problem: str | None = None) -> Path:
    """This process's private build directory (made on first use; removed at exit)."""
    if not _PRIVATE:
        _clean_private_leftovers()
        d = Path(tempfile.mkdtemp(prefix=f"srcad-kernels-{os.getpid()}-"))  # 0700
        _PRIVATE.append(d)
        atexit.register(shutil.rmtree, d, True)
        if problem is not None:
            warnings.warn(f"srcad: the kernel cache {problem}; building kernels in the private "
                          f"directory {d} for this process", stacklevel=5)
    return _PRIVATE[0]


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
    if not for_writing and want.is_dir() and trust_problem(want) is None:
        return want
    _DIRS[key] = _private_dir(problem)
    return _DIRS[key]


def wanted_dir() -> Path:
    """The configured cache directory, created 0700 if absent (entries are looked up in it
    even when it cannot be written, if we trust it)."""
    d = _default_dir()
    if not d.exists():
        try:
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            pass
    return d


def compiler_dir() -> Path | None:
    """Where compilers.json is read and written: the configured cache if we trust it."""
    d = wanted_dir()
    return d if trust_problem(d) is None else None


def _lookup_dirs() -> list:
    d = wanted_dir()
    trusted = trust_problem(d) is None
    if not trusted and str(d) not in _DIRS and d.exists():
        EVENTS.append(f"untrusted:{d}")
    return ([d] if trusted else []) + _PRIVATE


def entry_key(material: dict) -> str:
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


# --- the per-user secret -------------------------------------------------------------------

_SECRET: list = []


def secret_path() -> Path:
    return Path(platformdirs.user_config_dir("srcad", appauthor=False)) / "cache.key"


def _read_secret(p: Path) -> bytes | None:
    try:
        fd = os.open(p, os.O_RDONLY | _O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _ours(st) or st.st_mode & 0o077:
            return None
        data = os.read(fd, 64)
        return data if len(data) == 32 else None
    finally:
        os.close(fd)


def secret() -> bytes:
    """The per-user HMAC key for seals (the trust model's rule 3)."""
    if _SECRET:
        return _SECRET[0]
    p = secret_path()
    key = _read_secret(p)
    if key is None and not p.exists():
        try:
            p.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = os.stat(p.parent)
            if _ours(st) and not st.st_mode & 0o022:
                tmp = p.with_name(f".{p.name}.{os.getpid()}")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o600)
                try:
                    os.write(fd, os.urandom(32))
                    os.fsync(fd)
                finally:
                    os.close(fd)
                try:
                    os.link(tmp, p)  # (never over one another process made first)
                except FileExistsError:
                    pass
                finally:
                    os.unlink(tmp)
        except OSError:
            pass
        key = _read_secret(p)
    if key is None:
        EVENTS.append(f"no-secret:{p}")
        key = os.urandom(32)  # this process trusts only what it builds itself
    _SECRET.append(key)
    return key


def _mac(module: str, key: str, size: int, sha: str) -> str:
    msg = json.dumps([SEAL_VERSION, module, key, size, sha]).encode()
    return hmac.new(secret(), msg, hashlib.sha256).hexdigest()


# --- verification ----------------------------------------------------------------------------


def _open_private(path: Path) -> int:
    """An fd of `path`, a regular file of ours that group and others cannot write (rule 2);
    raises OSError otherwise."""
    fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or not _ours(st) or st.st_mode & 0o022:
        os.close(fd)
        raise PermissionError(f"{path} is not a private regular file")
    return fd


def _sha256_fd(fd: int) -> tuple[str, int]:
    h = hashlib.sha256()
    n = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return h.hexdigest(), n
        h.update(chunk)
        n += len(chunk)


def _sha256(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY)
    try:
        return _sha256_fd(fd)[0]
    finally:
        os.close(fd)


def _sealed(d: Path, module: str, key: str) -> Path | None:
    """The entry's .so if the trust model's rules 2-4 hold for it, else None."""
    so, seal = d / f"{module}{EXT}", d / f"{module}.json"
    try:
        fd = _open_private(seal)
        try:
            meta = json.loads(os.read(fd, 1 << 22))
        finally:
            os.close(fd)
        size, sha = meta.get("size"), meta.get("sha256")
        if meta.get("key") != key or not isinstance(size, int) or not isinstance(sha, str) \
                or not isinstance(meta.get("hmac"), str):
            return None
        if not hmac.compare_digest(meta["hmac"], _mac(module, key, size, sha)):
            EVENTS.append(f"forged-seal:{module}")
            return None
        fd = _open_private(so)
        try:
            if os.fstat(fd).st_size != size:
                return None
            got, n = _sha256_fd(fd)
        finally:
            os.close(fd)
        if n != size or got != sha:
            return None
    except (OSError, ValueError, AttributeError, TypeError):
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


# --- getting an entry -----------------------------------------------------------------------


def get(module: str, key: str, material: dict, c_source: str, comp: Compiler, *,
        include: list[str], extra: tuple[str, ...] = (), before_build=None):
    """The loaded extension module for this entry: from this process, from the cache, or
    built now (after ``before_build(comp)``, which may raise). Raises `BuildFailed` when the
    compiler rejects the source, `CompilerUnavailable` (`BuildUnavailable` for a reason of
    the machine, `CompilerBroken`, `UnsafeFlags`) when nothing can be built."""
    if module in _LOADED:
        return _LOADED[module]
    bad = False
    dirs = _lookup_dirs()
    if len(dirs) > len(_PRIVATE):  # (the configured cache is trusted)
        _clean_once(dirs[0])  # (the first use of the cache in this process: leftovers go)
    for look in dirs:
        so = _sealed(look, module, key)
        if so is not None:
            try:
                mod = _import(module, so)
            except ImportError:
                bad = True  # sealed but unloadable: rebuilt below
                continue
            _LOADED[module] = mod
            return mod
    d = None
    try:
        d = cache_dir()  # (a directory we may write: the configured one, else a private one)
        _clean_once(d)
        try:
            mod = _get_locked(d, module, key, material, c_source, comp, include, extra,
                              before_build, bad)
        except LockTimeout as e:
            EVENTS.append(f"lock-timeout:{module}")
            _notice(f"srcad: {e}; building privately instead")
            p = _private_dir()
            mod = _build_and_load(p, module, key, material, c_source, comp, include, extra,
                                  before_build)
    except OSError as e:
        where = e.filename or d or "the kernel cache"
        raise BuildUnavailable(os_cause(e), f"{e.strerror or e} ({where})") from None
    _LOADED[module] = mod
    return mod


def _get_locked(d, module, key, material, c_source, comp, include, extra, before_build, bad):
    with _locked(d / f"{module}.lock", lock_timeout()):
        so = None if bad else _sealed(d, module, key)  # another process may have built it
        if so is not None:
            try:
                return _import(module, so)
            except ImportError:
                pass
        return _build_and_load(d, module, key, material, c_source, comp, include, extra,
                               before_build)


def _build_and_load(d, module, key, material, c_source, comp, include, extra, before_build):
    compiler.known_broken(comp, compiler_dir())  # (a builder we waited for found it broken)
    if before_build is not None:
        before_build(comp)
    so = _build(d, module, key, material, c_source, comp, include, extra)
    return _import(module, so)


@contextlib.contextmanager
def _locked(path: Path, timeout: float = 600):
    """Hold the entry's lock: ``flock`` on POSIX -- the lock filelock's UnixFileLock takes,
    so processes using either exclude each other -- else filelock's (importing filelock
    alone took 25-50 ms of every first build). The lock file is never removed; one replaced
    under us (by another tool) is opened again. Raises `LockTimeout` after `timeout` s; after
    `SRCAD_BUILD_NOTICE` s of waiting, says so on stderr once."""
    if fcntl is None:  # (Windows)
        from filelock import FileLock, Timeout
        lock = FileLock(str(path), timeout=timeout)
        try:
            lock.acquire()
        except Timeout:
            raise LockTimeout(f"timed out after {timeout:g} s waiting for the kernel cache "
                              f"lock {path}") from None
        try:
            yield
        finally:
            lock.release()
        return
    start = time.monotonic()
    deadline = start + timeout
    notice_at = _notice_after()
    told = False
    delay = 0.001
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _O_NOFOLLOW, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    now = time.monotonic()
                    if now > deadline:
                        raise LockTimeout(
                            f"timed out after {timeout:g} s waiting for the kernel cache lock "
                            f"{path} (SRCAD_LOCK_TIMEOUT)") from None
                    if not told and notice_at > 0 and now - start > notice_at:
                        told = True
                        _notice(f"srcad: waiting for another process building the same "
                                f"kernels (lock {path.name})...")
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


def _notice_after() -> float:
    return _env_seconds("SRCAD_BUILD_NOTICE", 2.0)


def _notice(line: str) -> None:
    EVENTS.append("notice:" + line)
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


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
    notice_at = _notice_after()
    timer = None
    if notice_at > 0:
        what = "the C runtime" if material.get("kind") == "runtime" else "fused kernels"
        timer = threading.Timer(notice_at, _notice, (
            f"srcad: compiling {what} ({module}; first use of this code on this machine, "
            f"cached in {d})...",))
        timer.daemon = True
        timer.start()
    try:
        src = tmpdir / f"{module}.c"
        src.write_text(c_source)
        out = tmpdir / f"{module}{EXT}"
        kernels = material.get("kind") != "runtime"  # (the runtime is built at -O3)
        parts = parallel_parts(c_source)
        try:
            if parts > 1:  # (the objects go into tmpdir, removed below)
                compile_split(comp, src, out, include=include, extra=extra, parts=parts,
                              kernels=kernels)
            else:
                compile_shared(comp, src, out, include=include, extra=extra, kernels=kernels)
        except CompilerBroken as e:
            compiler.mark_broken(comp, e, compiler_dir())
            raise
        BUILT.append(module)
        # hash what the compiler wrote, then make it durable before anything names it
        fd = os.open(out, os.O_RDONLY)
        try:
            sha, size = _sha256_fd(fd)
            os.fsync(fd)
        finally:
            os.close(fd)
        if size == 0:
            raise BuildUnavailable("truncated output", f"{out.name} is empty")
        so = d / f"{module}{EXT}"
        os.replace(out, so)  # a new inode: never written over a file someone has mapped
        meta = {"v": SEAL_VERSION, "key": key, "size": size, "sha256": sha,
                "hmac": _mac(module, key, size, sha),
                "flags": list(flags(comp, kernels=kernels)) + list(extra), "parts": parts,
                "material": material}
        _atomic_write(d / f"{module}.json", json.dumps(meta, indent=1, sort_keys=True).encode(),
                      tmpdir)
        try:
            _atomic_write(d / f"{module}.c", c_source.encode(), tmpdir)  # (for people)
        except OSError:
            pass
        try:
            _fsync(d)
        except OSError:
            pass
        if _sealed(d, module, key) != so:  # (what is loaded is what was checked)
            raise BuildUnavailable("verification", f"{so} changed after it was written")
        return so
    finally:
        if timer is not None:
            timer.cancel()
        shutil.rmtree(tmpdir, ignore_errors=True)


# --- leftovers -------------------------------------------------------------------------------


def _clean_once(d: Path) -> None:
    if str(d) in _CLEANED:
        return
    _CLEANED.add(str(d))
    clean_stale(d)


def clean_stale(d: Path, older_than: float | None = None) -> list[str]:
    """Remove what dead or hung builders left in the cache directory `d`: ``.build-*``
    directories and dot-files (``.compilers.json.<pid>``, load links, ``*.tmp``) not touched
    for `older_than` seconds (default `STALE_AFTER`, at least three compiler time limits).
    Returns the names removed."""
    if older_than is None:
        older_than = max(STALE_AFTER, 3 * compiler.cc_timeout())
    now = time.time()
    gone = []
    try:
        it = list(os.scandir(d))
    except OSError:
        return gone
    for e in it:
        if not e.name.startswith("."):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if not _ours(st) or now - st.st_mtime < older_than:
                continue
            if e.name.startswith(".build-") and e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path, ignore_errors=True)
            elif stat.S_ISREG(st.st_mode) and (
                    e.name.startswith(".compilers.json.") or e.name.endswith(".tmp")
                    or (e.name.startswith(".srcad_") and e.name.endswith(EXT))):
                os.unlink(e.path)
            else:
                continue
            gone.append(e.name)
        except OSError:
            continue
    return gone


def _clean_private_leftovers() -> list[str]:
    """Remove ``$TMPDIR/srcad-kernels-<pid>-*`` (and ``srcad-cc-*`` probe directories) of
    ours whose process is gone."""
    gone = []
    tmp = tempfile.gettempdir()
    try:
        it = list(os.scandir(tmp))
    except OSError:
        return gone
    now = time.time()
    for e in it:
        if not e.name.startswith(("srcad-kernels-", "srcad-cc-")):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode) or not _ours(st):
                continue
            if e.name.startswith("srcad-cc-"):
                dead = now - st.st_mtime > max(STALE_AFTER, 3 * compiler.cc_timeout())
            else:
                pid = e.name.split("-")[2]
                if not pid.isdigit():  # (an older srcad's name: by age)
                    dead = now - st.st_mtime > 86400
                else:
                    dead = not _alive(int(pid))
            if dead:
                shutil.rmtree(e.path, ignore_errors=True)
                gone.append(e.name)
        except OSError:
            continue
    return gone


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # (someone else's: alive)
    return True


def forget_loaded() -> None:
    """Tests: forget which modules this process loaded (they stay loaded)."""
    _LOADED.clear()
    _DIRS.clear()


__all__ = ["cache_dir", "entry_key", "get", "EXT"]
