"""The kernel cache survives what real processes do to it (DESIGN.md, "Safety").

Each test starts fresh Python processes (tests/kernel_cache_worker.py) on a cache directory
of its own: several building the same entry at once (one compiles, the others wait on the
entry's lock and load its result); an entry truncated or corrupted after it was built
(rebuilt, never loaded -- loading a truncated shared object kills the process with SIGBUS);
a read-only cache directory (its entries still load; new ones are built in a private
temporary directory, with one warning); and the compiler: ``CC`` is the one used, and with
no working compiler there is one warning and the unfused code runs.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from srcad.build import cache

ROOT = Path(__file__).resolve().parent.parent
WORKER = ROOT / "tests" / "kernel_cache_worker.py"


def run_worker(cache_dir, *args, env=None, check=True):
    e = {**os.environ, "PYTHONPATH": str(ROOT), "SRCAD_CACHE_DIR": str(cache_dir),
         "SRCAD_NUM_THREADS": "1", **(env or {})}
    p = subprocess.Popen([sys.executable, str(WORKER), *map(str, args)], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p


def report(p, timeout=180):
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, f"worker exited with {p.returncode}\n{err[-3000:]}"
    return json.loads(out.strip().splitlines()[-1])


def entries(d: Path):
    return sorted(p for p in d.glob(f"srcad_k_*{cache.EXT}"))


def test_cache_directory_is_created_private(tmp_path):
    d = tmp_path / "new" / "kernels"
    r = report(run_worker(d))
    assert r["equal"] and r["fused"]
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert len(entries(d)) == 1
    module = entries(d)[0].name[:-len(cache.EXT)]
    seal = json.loads((d / f"{module}.json").read_text())
    assert seal["key"].startswith(module[len("srcad_k_"):])
    assert "-ffast-math" not in seal["flags"] and "-ffp-contract=off" in seal["flags"]
    assert (d / f"{module}.c").exists()


def test_concurrent_builds_of_one_entry(tmp_path):
    d = tmp_path / "kernels"
    start = tmp_path / "go"
    workers = [run_worker(d, start) for _ in range(3)]
    deadline = time.time() + 120
    while len(list(tmp_path.glob("go.ready.*"))) < 3 and time.time() < deadline:
        time.sleep(0.02)  # until all three have imported srcad and wait
    start.touch()
    reports = [report(w) for w in workers]
    assert all(r["equal"] and r["fused"] for r in reports), reports
    built = [m for r in reports for m in r["built"]]
    assert len(built) == 1, reports  # one process compiled, the others loaded its result
    assert len(entries(d)) == 1
    assert not list(d.glob(".build-*")), "a temporary build directory was left behind"


@pytest.fixture(scope="module")
def built_entry(tmp_path_factory):
    """A cache directory holding one entry, built by a worker (copied by each test)."""
    d = tmp_path_factory.mktemp("template") / "kernels"
    r = report(run_worker(d))
    assert len(r["built"]) == 1
    return d, r["built"][0]


@pytest.mark.parametrize("damage", ["truncate", pytest.param("corrupt", marks=pytest.mark.slow),
                                    pytest.param("empty", marks=pytest.mark.slow)])
def test_damaged_entry_is_rebuilt_not_loaded(request, tmp_path, built_entry, damage):
    import shutil

    if damage != "truncate" and "slow" not in (request.config.getoption("markexpr") or "") \
            and not os.environ.get("SRCAD_FUZZ_SLOW"):
        pytest.skip("the other damages: ask with -m slow or SRCAD_FUZZ_SLOW=1")

    template, module = built_entry
    d = tmp_path / "kernels"
    shutil.copytree(template, d)
    so = d / f"{module}{cache.EXT}"
    data = so.read_bytes()
    if damage == "truncate":
        so.write_bytes(data[:len(data) // 2])
    elif damage == "corrupt":  # same size, other bytes
        so.write_bytes(data[:4096] + bytes(b ^ 0xFF for b in data[4096:8192]) + data[8192:])
    else:
        so.write_bytes(b"")
    r = report(run_worker(d))  # a SIGBUS would fail here with a negative return code
    assert r["equal"] and r["fused"]
    assert r["built"] == [module], "the damaged entry was not rebuilt"
    key = json.loads((d / f"{module}.json").read_text())["key"]
    assert cache._sealed(d, module, key) == so, "the rebuilt entry is not sealed"


def test_read_only_cache_directory(tmp_path):
    d = tmp_path / "kernels"
    report(run_worker(d))  # one entry in it
    before = sorted(p.name for p in d.iterdir())
    d.chmod(0o500)
    try:
        # its entry still loads, without a warning and without building
        r = report(run_worker(d))
        assert r["equal"] and r["fused"] and not r["built"] and not r["warnings"], r
        # a function it has no entry for is built in a private directory, with one warning
        r2 = report(run_worker(d, env={"SRCAD_TEST_VARIANT": "1"}))
        assert r2["equal"] and r2["fused"]
    finally:
        d.chmod(0o700)
    assert sorted(p.name for p in d.iterdir()) == before, "the read-only cache was written"
    assert r2["built"] and [w for w in r2["warnings"] if "kernel cache" in w] == [
        next(w for w in r2["warnings"] if "kernel cache" in w and "read-only" in w)], r2


def test_cc_is_honoured(tmp_path):
    log = tmp_path / "cc.log"
    wrapper = tmp_path / "mycc"
    wrapper.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nexec gcc \"$@\"\n")
    wrapper.chmod(0o755)
    r = report(run_worker(tmp_path / "kernels", env={"CC": str(wrapper)}))
    assert r["equal"] and r["fused"] and r["built"]
    assert "-ffp-contract=off" in log.read_text()


@pytest.mark.parametrize("cc", ["/bin/false", "/nonexistent/cc"])
def test_no_working_compiler_runs_unfused_with_one_warning(tmp_path, cc):
    # (a runtime built at install time needs no compiler; kernels do)
    r = report(run_worker(tmp_path / "kernels", env={"CC": cc, "SRCAD_TEST_TWICE": "1"}))
    assert r["equal"] and not r["fused"]
    assert len([w for w in r["warnings"] if "needs a C compiler" in w]) == 1, r["warnings"]


def test_key_covers_what_the_code_depends_on(monkeypatch):
    from srcad import build

    text = "/* a kernel module */"
    base = build.module_key(text, {"add": 1}, "v")
    assert build.module_key(text, {"add": 2}, "v")[1] != base[1]  # a row's C version
    assert build.module_key(text + " ", {"add": 1}, "v")[1] != base[1]  # the source
    monkeypatch.setattr(build, "_cpu", lambda: "another CPU")
    assert build.module_key(text, {"add": 1}, "v")[1] != base[1]  # the CPU (-march=native)
    assert base[0] == "srcad_k_" + base[1][:24]
