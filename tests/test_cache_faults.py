"""Fault injection for the kernel cache and the build (issue 24; the trust model is in
srcad/build/cache.py's docstring).

Each test starts fresh processes (tests/cache_fault_worker.py) on a cache directory of its
own, with its own config directory (the per-user HMAC secret), and breaks one thing: a
hostile cache owner or a forged seal (a planted .so with a constructor must never run), a
fast-math CC (refused in every path, also under ``python -O``), a compiler that exits 0
without output, hangs in --version or in the build, crashes, or leaves a truncated output,
a full disk (a small tmpfs, as root), a lock held by a hung builder, a process killed at
each step of a build, and the leftovers of dead processes. Tests that need root (chown to
``nobody``, mount) skip with a reason otherwise; long ones are marked slow.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from srcad.build import cache, compiler

ROOT = Path(__file__).resolve().parent.parent
WORKER = ROOT / "tests" / "cache_fault_worker.py"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture(autouse=True)
def _slow_only_when_asked(request):
    """Cases marked slow run with ``-m slow`` or SRCAD_FUZZ_SLOW=1 (as test_kernel_cache's)."""
    if request.node.get_closest_marker("slow") and not os.environ.get("SRCAD_FUZZ_SLOW") \
            and "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("slow: ask with -m slow or SRCAD_FUZZ_SLOW=1")


def start(cache_dir, tmp_path, *, steps="f", env=None, optimize=False):
    base = {k: v for k, v in os.environ.items()
            if k not in ("CC", "CCC_OVERRIDE_OPTIONS", "SRCAD_CC_TIMEOUT", "SRCAD_LOCK_TIMEOUT",
                         "SRCAD_BUILD_PARTS", "SRCAD_BUILD_NOTICE")}
    e = {**base, "PYTHONPATH": str(ROOT), "SRCAD_CACHE_DIR": str(cache_dir),
         "SRCAD_NUM_THREADS": "1", "SRCAD_TEST_STEPS": steps,
         "XDG_CONFIG_HOME": str(tmp_path / "config"), **(env or {})}
    cmd = [sys.executable, *(["-O"] if optimize else []), str(WORKER)]
    return subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(p, timeout=240, rc=0):
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == rc, f"worker exited with {p.returncode}\n{err[-3000:]}"
    if rc != 0:
        return None
    r = json.loads(out.strip().splitlines()[-1])
    r["stderr"] = err
    return r


def run(cache_dir, tmp_path, **kw):
    rc = kw.pop("rc", 0)
    return finish(start(cache_dir, tmp_path, **kw), rc=rc)


def no_internal_error(r):
    assert not [w for w in r["warnings"] if "bug in srcad" in w or "internal error" in w], r
    assert "Traceback" not in r["stderr"], r["stderr"][-2000:]


def script(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    p.chmod(0o755)
    return str(p)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """(cache directory holding the entry of step f, its module name, config dir)."""
    base = tmp_path_factory.mktemp("template")
    d = base / "kernels"
    r = run(d, base)
    assert r["built"] and r["steps"][0]["fused"], r
    return d, r["built"][0], base / "config"


def copy_template(template, tmp_path):
    d, module, config = template
    shutil.copytree(d, tmp_path / "kernels")
    shutil.copytree(config, tmp_path / "config")
    return tmp_path / "kernels", module


@pytest.fixture(scope="module")
def evil_so(template, tmp_path_factory):
    """The entry's own .c plus a constructor that creates the file $SRCAD_PWNED, built
    under the entry's name (what an attacker would plant)."""
    from srcad import build

    d, module, _ = template
    work = tmp_path_factory.mktemp("evil")
    src = work / f"{module}.c"
    src.write_text((d / f"{module}.c").read_text() + """
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void srcad_test_pwn(void) {
    const char *p = getenv("SRCAD_PWNED");
    if (p) { int fd = open(p, O_CREAT | O_WRONLY, 0644); if (fd >= 0) close(fd); }
}
""")
    out = work / f"{module}{cache.EXT}"
    comp = compiler.find(None)
    compiler.compile_shared(comp, src, out, include=[compiler.python_include(),
                                                     str(build.kernels_c_dir())],
                            extra=(f"-DSRCAD_MODULE={module}",))
    return out


def plant(d: Path, module: str, evil: Path, *, keep_hmac=True):
    """Put the evil .so in place with a seal naming its size and sha256 (the attacker can
    compute those; not the HMAC, so the old one is kept or dropped)."""
    so = d / f"{module}{cache.EXT}"
    seal = d / f"{module}.json"
    meta = json.loads(seal.read_text())
    shutil.copyfile(evil, so)
    meta["size"] = so.stat().st_size
    meta["sha256"] = cache._sha256(so)
    if not keep_hmac:
        meta.pop("hmac")
    seal.write_text(json.dumps(meta))


# --- the trust model ------------------------------------------------------------------------


@pytest.mark.parametrize("keep_hmac", [True, False])
def test_forged_seal_in_own_directory_is_not_loaded(tmp_path, template, evil_so, keep_hmac):
    d, module = copy_template(template, tmp_path)
    plant(d, module, evil_so, keep_hmac=keep_hmac)
    marker = tmp_path / "PWNED"
    r = run(d, tmp_path, env={"SRCAD_PWNED": str(marker)})
    assert not marker.exists(), "a planted .so was loaded and its constructor ran"
    assert r["steps"][0]["equal"] and r["steps"][0]["fused"]
    assert r["built"] == [module], "the forged entry was not rebuilt"
    assert cache._sha256(d / f"{module}{cache.EXT}") != cache._sha256(evil_so)
    no_internal_error(r)


def test_seal_from_another_users_secret_is_not_trusted(tmp_path, template):
    d, module = copy_template(template, tmp_path)
    shutil.rmtree(tmp_path / "config")  # (another secret: a copied or restored cache)
    r = run(d, tmp_path)
    assert r["built"] == [module] and r["steps"][0]["fused"]


@pytest.mark.skipif(not IS_ROOT, reason="needs root to chown a cache to nobody")
@pytest.mark.parametrize("how", ["dir-0777-nobody", "so-owned-by-nobody", "parent-0777"])
def test_hostile_cache_owner(tmp_path, template, evil_so, how):
    import pwd

    nobody = pwd.getpwnam("nobody")
    d, module = copy_template(template, tmp_path)
    plant(d, module, evil_so)
    # seal it with our own secret, as if the attacker had it: what must refuse it here is
    # the ownership and mode check alone
    meta = json.loads((d / f"{module}.json").read_text())
    meta["hmac"] = _mac_with(tmp_path / "config", module, meta)
    (d / f"{module}.json").write_text(json.dumps(meta))
    if how == "dir-0777-nobody":
        for p in [d, *d.iterdir()]:
            os.chown(p, nobody.pw_uid, nobody.pw_gid)
        d.chmod(0o777)
    elif how == "so-owned-by-nobody":
        os.chown(d / f"{module}{cache.EXT}", nobody.pw_uid, nobody.pw_gid)
    else:
        parent = tmp_path / "shared"
        parent.mkdir()
        parent.chmod(0o777)  # (not sticky: anyone can rename our directory away)
        d = Path(shutil.move(str(d), str(parent / "kernels")))
    marker = tmp_path / "PWNED"
    r = run(d, tmp_path, env={"SRCAD_PWNED": str(marker)})
    assert not marker.exists(), f"{how}: a planted .so was loaded and its constructor ran"
    assert r["steps"][0]["equal"] and r["steps"][0]["fused"]
    assert r["built"] == [module]
    if how != "so-owned-by-nobody":  # the directory is refused: private build, one warning
        assert len([w for w in r["warnings"] if "kernel cache" in w]) == 1, r["warnings"]
        assert r["private"]
    no_internal_error(r)


def _mac_with(config: Path, module: str, meta: dict) -> str:
    import hashlib
    import hmac

    key = (config / "srcad" / "cache.key").read_bytes()
    msg = json.dumps([cache.SEAL_VERSION, module, meta["key"], meta["size"],
                      meta["sha256"]]).encode()
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def test_trust_problem_rules(tmp_path):
    d = tmp_path / "c"
    d.mkdir(mode=0o700)
    assert cache.trust_problem(d) is None
    d.chmod(0o770)
    assert "group or others" in cache.trust_problem(d)
    d.chmod(0o700)
    open_parent = tmp_path / "open"
    open_parent.mkdir()
    open_parent.chmod(0o777)
    (open_parent / "c").mkdir(mode=0o700)
    assert "writable by group or others" in cache.trust_problem(open_parent / "c")
    open_parent.chmod(0o1777)  # sticky, as /tmp: fine
    assert cache.trust_problem(open_parent / "c") is None


# --- compiler hygiene -----------------------------------------------------------------------


def test_unsafe_flags_are_found(tmp_path):
    rsp = tmp_path / "flags.rsp"
    rsp.write_text("-O2 -ffast-math\n")
    for bad in ["-ffast-math", "-Ofast", "-funsafe-math-optimizations", "-ffinite-math-only",
                "-fno-signed-zeros", "-freciprocal-math", "-fassociative-math",
                "-ffp-contract=fast", "-ffp-model=fast", "-Wl,crtfastmath.o", f"@{rsp}"]:
        assert compiler.unsafe_flags(["-O2", bad]), bad
    comp = compiler.find(None)
    for kernels in (True, False):
        assert compiler.unsafe_flags(compiler.flags(comp, kernels=kernels)) == []
    with pytest.raises(compiler.UnsafeFlags):
        compiler.check_command(["gcc", "-O2", "-fassociative-math"])


@pytest.mark.parametrize("case", [
    "cc-fast-math",
    pytest.param("two-units-Ofast", marks=pytest.mark.slow),
    "python-O",
    pytest.param("ccc-override", marks=pytest.mark.slow),
])
def test_fast_math_is_refused(tmp_path, case):
    env, optimize = {"CC": "gcc -ffast-math"}, False
    if case == "two-units-Ofast":
        env = {"CC": "gcc -Ofast", "SRCAD_BUILD_PARTS": "2"}
    elif case == "python-O":
        env, optimize = {"CC": "gcc -funsafe-math-optimizations"}, True
    elif case == "ccc-override":
        env = {"CCC_OVERRIDE_OPTIONS": "+-ffast-math"}
    r = run(tmp_path / "kernels", tmp_path, env=env, optimize=optimize, steps="f,g")
    assert all(s["equal"] and not s["fused"] for s in r["steps"]), r
    fm = [w for w in r["warnings"] if "fast-math" in w]
    assert len(fm) == 1 and "bit-exact" in fm[0], r["warnings"]
    assert not r["built"] and not r["ftz"], "built with fast-math, or flush-to-zero is on"
    no_internal_error(r)


def calls(log) -> list:
    """The command lines a logging fake compiler was run with (one a line)."""
    return log.read_text().splitlines() if log.exists() else []


def logging_compiler(tmp_path, name, then: str) -> tuple:
    """A fake compiler that writes each of its command lines to a log, then runs `then`."""
    log = tmp_path / f"{name}.log"
    cc = script(tmp_path, name, f'#!/bin/sh\necho "$@" >> {log}\n{then}\n')
    return cc, log


def test_compiler_exiting_0_without_output(tmp_path):
    cc, log = logging_compiler(tmp_path, "truecc", "exit 0")
    r = run(tmp_path / "kernels", tmp_path, env={"CC": cc}, steps="f")
    once = len(calls(log))
    assert once and all(s["equal"] and not s["fused"] for s in r["steps"]), r
    (w,) = [w for w in r["warnings"] if "srcad" in w]
    assert "wrote no" in w and "not usable" in w, w
    no_internal_error(r)
    log.unlink()
    r = run(tmp_path / "kernels2", tmp_path / "b", env={"CC": cc}, steps="f,g")
    assert all(s["equal"] and not s["fused"] for s in r["steps"]), r
    # (the second shape did not run the broken compiler again)
    assert len(calls(log)) == once, calls(log)
    no_internal_error(r)


def test_compiler_hanging_in_version_is_remembered(tmp_path):
    cc, log = logging_compiler(tmp_path, "hangcc", 'for a in "$@"; do [ "$a" = --version ] '
                               '&& exec sleep 60; done\nexec gcc "$@"')
    env = {"CC": cc, "SRCAD_CC_TIMEOUT": "1"}
    r = run(tmp_path / "kernels", tmp_path, env=env, steps="f,g")  # (bounded by `finish`)
    assert all(s["equal"] and not s["fused"] for s in r["steps"]), r
    # one --version, not one per shape
    assert [c for c in calls(log) if "--version" in c] == ["--version"], calls(log)
    assert len([w for w in r["warnings"] if "did not answer" in w]) == 1, r["warnings"]
    before = len(calls(log))
    r2 = run(tmp_path / "kernels", tmp_path, env=env)  # another process: remembered
    assert not r2["steps"][0]["fused"] and len(calls(log)) == before, calls(log)
    no_internal_error(r2)


def test_compiler_hanging_in_build_is_bounded_and_remembered(tmp_path):
    cc, log = logging_compiler(tmp_path, "hangcc", 'for a in "$@"; do [ "$a" = --version ] '
                               '&& exec gcc "$@"; done\nsleep 60 &\nwait')
    env = {"CC": cc, "SRCAD_CC_TIMEOUT": "2", "SRCAD_BUILD_NOTICE": "0.5"}
    run(tmp_path / "alone", tmp_path / "a", env=env, steps="f")  # (bounded by `finish`)
    alone = len([c for c in calls(log) if "--version" not in c])
    log.unlink()
    r = run(tmp_path / "kernels", tmp_path, env=env, steps="f,g")
    assert all(s["equal"] and not s["fused"] for s in r["steps"]), r
    builds = [c for c in calls(log) if "--version" not in c]
    assert alone and len(builds) == alone, calls(log)  # (the second shape did not try again)
    (w,) = [w for w in r["warnings"] if "srcad" in w]
    assert "SRCAD_CC_TIMEOUT" in w, w
    assert "srcad: compiling fused kernels" in r["stderr"], "no notice of the long build"
    assert not list((tmp_path / "kernels").glob(".build-*"))
    no_internal_error(r)
    before = len(calls(log))
    r2 = run(tmp_path / "kernels", tmp_path, env=env)  # another process: remembered
    assert not r2["steps"][0]["fused"] and len(calls(log)) == before, calls(log)


def test_crashing_compiler(tmp_path):
    cc = script(tmp_path, "crashcc", '#!/bin/sh\nfor a in "$@"; do [ "$a" = --version ] && '
                'exec gcc "$@"; done\nkill -SEGV $$\n')
    r = run(tmp_path / "kernels", tmp_path, env={"CC": cc}, steps="f,g")
    assert all(s["equal"] and not s["fused"] for s in r["steps"]), r
    (w,) = [w for w in r["warnings"] if "srcad" in w]
    assert "SIGSEGV" in w, w
    no_internal_error(r)


TRUNCATING_LD = '''#!{python}
import os, subprocess, sys
args = sys.argv[1:]
rc = subprocess.call(["gcc", *args])
if rc == 0 and "--version" not in args and "-c" not in args:
    out = args[args.index("-o") + 1]
    data = open(out, "rb").read()
    open(out, "wb").write(data[: len(data) // 2])   # a short write, and exit 0
sys.exit(rc)
'''


def test_truncated_output_is_never_sealed(tmp_path):
    cc = script(tmp_path, "shortld", TRUNCATING_LD.format(python=sys.executable))
    d = tmp_path / "kernels"
    r = run(d, tmp_path, env={"CC": cc}, steps="f,g")
    assert all(s["equal"] and not s["fused"] for s in r["steps"]), r
    assert not list(d.glob("srcad_k_*.json")), "a truncated .so was sealed"
    assert [w for w in r["warnings"] if "truncated" in w], r["warnings"]
    no_internal_error(r)
    # fusion comes back with a good linker (nothing was remembered against the machine)
    r2 = run(d, tmp_path, steps="f")
    assert r2["steps"][0]["fused"] and r2["built"]


# --- the machine -----------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    if not IS_ROOT:
        pytest.skip("needs root to mount a small tmpfs")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs",
                          str(mnt)], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_disk_full_runs_unfused_then_fusion_comes_back(tmp_path, small_disk):
    d = small_disk / "kernels"
    d.mkdir(mode=0o700)
    filler = small_disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:  # fill it up, then leave ~4 KiB
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    os.ftruncate(fd, max(0, os.fstat(fd).st_size - 4096))
    os.close(fd)
    r = run(d, tmp_path, steps=f"f,unlink:{filler},g")
    f_step, g_step = r["steps"]
    assert f_step["equal"] and not f_step["fused"], r
    assert g_step["equal"] and g_step["fused"], "fusion did not come back with free space"
    full = [w for w in r["warnings"] if "ENOSPC" in w or "No space" in w]
    assert len(full) == 1 and "bug in srcad" not in full[0], r["warnings"]
    assert not [w for w in r["warnings"] if "needs a C compiler" in w], r["warnings"]
    assert not list(d.glob(".build-*")) and not list(d.glob(".compilers.json.*"))
    no_internal_error(r)


def test_lock_held_by_hung_builder_builds_privately(tmp_path, template):
    import fcntl

    _, module, _ = template
    d = tmp_path / "kernels"
    d.mkdir(mode=0o700)
    fd = os.open(d / f"{module}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a builder that never finishes
    try:
        r = run(d, tmp_path, env={"SRCAD_LOCK_TIMEOUT": "1", "SRCAD_BUILD_NOTICE": "0.3"})
    finally:
        os.close(fd)
    s = r["steps"][0]
    assert s["equal"] and s["fused"], r
    assert f"lock-timeout:{module}" in r["events"] and r["private"]
    assert "building privately" in r["stderr"] and "waiting for another process" in r["stderr"]
    no_internal_error(r)


@pytest.mark.parametrize("step", [
    "compile", "before-replace", "after-replace",
    pytest.param("after-seal", marks=pytest.mark.slow)])
def test_process_killed_at_each_step_of_a_build(tmp_path, template, step):
    _, module, _ = template
    d = tmp_path / "kernels"
    env = {"SRCAD_TEST_KILL_AT": step}
    if step == "compile":  # the compiler kills the process that started it
        env = {"CC": script(tmp_path, "killcc", '#!/bin/sh\nfor a in "$@"; do [ "$a" = '
                            '--version ] && exec gcc "$@"; done\nkill -9 $PPID\nexit 1\n')}
    run(d, tmp_path, env=env, rc=-signal.SIGKILL)
    if step in ("compile", "before-replace"):
        assert list(d.glob(".build-*")), "expected the killed build's directory"
    for p in d.iterdir():  # an hour later...
        os.utime(p, (time.time() - 3600, time.time() - 3600))
    r = run(d, tmp_path)
    s = r["steps"][0]
    assert s["equal"] and s["fused"], r
    assert r["built"] == ([] if step == "after-seal" else [module])
    assert not list(d.glob(".build-*")), "a dead build's directory was not cleaned"
    no_internal_error(r)


def test_leftovers_of_dead_processes_are_cleaned(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp / f"srcad-kernels-{dead.pid}-abc").mkdir(mode=0o700)
    (tmp / f"srcad-kernels-{os.getpid()}-live").mkdir(mode=0o700)
    d = tmp_path / "kernels"
    d.mkdir(mode=0o700)
    old = time.time() - 3600
    for name in (".build-srcad_k_x-1", ".build-srcad_k_fresh-2"):
        (d / name).mkdir()
    (d / ".compilers.json.12345").write_text("{}")
    for name in (".build-srcad_k_x-1", ".compilers.json.12345"):
        os.utime(d / name, (old, old))
    r = run(d, tmp_path, env={"TMPDIR": str(tmp)})
    assert r["steps"][0]["fused"]
    names = {p.name for p in d.iterdir()}
    assert ".build-srcad_k_x-1" not in names and ".compilers.json.12345" not in names
    assert ".build-srcad_k_fresh-2" in names  # (maybe a live build: too young to remove)
    # an unusable cache: a private directory in $TMPDIR, removed when the process exits;
    # the dead process's one removed at this start, the live one kept
    d.chmod(0o777)
    r = run(d, tmp_path, env={"TMPDIR": str(tmp)}, steps="g")
    assert r["private"] and r["steps"][0]["fused"]
    left = sorted(p.name for p in tmp.iterdir())
    assert left == [f"srcad-kernels-{os.getpid()}-live"], left


@pytest.mark.slow
def test_concurrent_builders_and_loaders(tmp_path):
    d = tmp_path / "kernels"
    ps = [start(d, tmp_path, steps=s) for s in ("f,g", "g,f", "f,h", "h,g")]
    rs = [finish(p) for p in ps]
    assert all(s["equal"] and s["fused"] for r in rs for s in r["steps"]), rs
    built = [m for r in rs for m in r["built"]]
    assert len(built) == len(set(built)) == 3, built  # each module compiled exactly once
    assert not list(d.glob(".build-*"))


def test_broken_compiler_memory_expires():
    known = {"broken:x": {"why": "hung", "at": time.time()},
             "broken:y": {"why": "hung", "at": time.time() - 2 * compiler.BROKEN_TTL}}
    assert compiler.known_broken_in(known, "x") == "hung"
    assert compiler.known_broken_in(known, "y") is None


def test_check_output_finds_truncated_elf(tmp_path):
    comp = compiler.find(None)
    src = tmp_path / "p.c"
    src.write_text("int f(int x) { return x + 1; }\n")
    out = tmp_path / "p.so"
    subprocess.run([*comp.argv, "-shared", "-fPIC", str(src), "-o", str(out)], check=True)
    compiler.check_output(out)
    data = out.read_bytes()
    for n in (len(data) - 1, len(data) // 2, 100, 4):
        out.write_bytes(data[:n])
        with pytest.raises(compiler.CompilerUnavailable):
            compiler.check_output(out)
    out.write_bytes(b"")
    with pytest.raises(compiler.CompilerBroken):
        compiler.check_output(out)
    assert stat.S_ISREG(out.stat().st_mode)
