"""A kernel module compiled as two translation units at once (srcad.build.compiler.
compile_split, cgen's SRCAD_PART guards), and the flags it is compiled with.

One kernel: one unit, no guards. Two or more (and two or more CPUs): two units, linked into
the one module the cache stores, its kernels bit for bit the unfused code's and the one-unit
build's. A part the compiler rejects is a BuildFailed naming that part and the compiler's
message, with nothing left behind. A compiler that answers --version but builds nothing is
found out after the failed build (the probe no longer runs before every first build): one
warning, unfused. The cache key changes with RECIPE.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from srcad import build
from srcad.build import cache, compiler
from srcad.lower import cgen, text_only
from srcad.lower.standalone import fuse_functions

ROOT = Path(__file__).resolve().parent.parent


def _sources(n: int) -> list[str]:
    """n functions, each one fused chain (a kernel of its own: the constants differ)."""
    return [f"def chain_{i}(a, b):\n    return np.maximum(a * b + {i + 1}.5, 0.25) * np.tanh(a)"
            f" - {i} * b\n" for i in range(n)]


def _examples(n: int):
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal((3, 33)).astype(np.float32) for _ in range(2))
    return [(a, b)] * n


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    d = tmp_path / "kernels"
    monkeypatch.setenv("SRCAD_CACHE_DIR", str(d))
    cache.forget_loaded()
    yield d
    cache.forget_loaded()


def _seal(d: Path) -> dict:
    (meta,) = [json.loads(p.read_text()) for p in d.glob("srcad_k_*.json")]
    return meta


def _cpus(monkeypatch, n: int, load: float = 0.0) -> None:
    """This process may run on n CPUs, and the last minute's load average is `load`."""
    monkeypatch.delenv("SRCAD_BUILD_PARTS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(n)), raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))


def _no_leftovers(d: Path) -> None:
    assert not list(d.glob(".build-*")), "a build's temporary directory was left behind"
    assert not list(d.rglob("*.o")), "an object file was left behind"


def test_one_kernel_is_one_unit(fresh_cache):
    src = _sources(1)
    [f], lowered, _ = fuse_functions(src, _examples(1))
    assert len(lowered.kernels) == 1
    assert "SRCAD_PART" not in lowered.c_source and compiler.SPLIT_MARK not in lowered.c_source
    assert compiler.parallel_parts(lowered.c_source) == 1
    assert _seal(fresh_cache)["parts"] == 1
    [g], _, _ = fuse_functions(src, _examples(1), fuse=False)
    a, b = _examples(1)[0]
    assert np.array_equal(f(a, b), g(a, b))


@pytest.mark.parametrize("n", [2, 9])
def test_kernels_split_into_two_balanced_guarded_parts(fresh_cache, monkeypatch, n):
    _cpus(monkeypatch, 2)
    src, ex = _sources(n), _examples(n)
    fused, lowered, _ = fuse_functions(src, ex)
    text = lowered.c_source
    assert len(lowered.kernels) == n
    parts = cgen.parts_of(lowered.kernels)
    assert sorted(set(parts)) == [0, 1]
    cost = [sum(cgen._build_cost(k) for k, p in zip(lowered.kernels, parts) if p == q)
            for q in (0, 1)]
    assert abs(cost[0] - cost[1]) <= max(cgen._build_cost(k) for k in lowered.kernels)
    for k, p in zip(lowered.kernels, parts):  # each kernel guarded for its part, once
        assert text.count(f"#if SRCAD_IN_PART({p})  /* {k.name}: part {p} */") == 1
        assert text.count(f"#if SRCAD_IN_PART({1 - p})  /* {k.name}:") == 0
    assert compiler.parallel_parts(text) == 2
    meta = _seal(fresh_cache)
    assert meta["parts"] == 2 and meta["material"]["recipe"] == build.RECIPE
    _no_leftovers(fresh_cache)
    unfused, _, _ = fuse_functions(src, ex, fuse=False)
    for f, g, (a, b) in zip(fused, unfused, ex):
        assert np.array_equal(f(a, b), g(a, b))
    # the same text as one unit (one CPU): the same module, bit for bit the same results
    cache.forget_loaded()
    _cpus(monkeypatch, 1)
    one = fresh_cache.parent / "one"
    monkeypatch.setenv("SRCAD_CACHE_DIR", str(one))
    fused1, lowered1, _ = fuse_functions(src, ex)
    assert lowered1.c_source == text and _seal(one)["parts"] == 1
    for f, g, (a, b) in zip(fused1, fused, ex):
        assert np.array_equal(f(a, b), g(a, b))


def test_one_cpu_a_busy_machine_or_the_variable_means_one_unit(monkeypatch):
    with text_only():
        _, lowered, _ = fuse_functions(_sources(3), _examples(3))
    text = lowered.c_source
    _cpus(monkeypatch, 1)
    assert compiler.parallel_parts(text) == 1
    _cpus(monkeypatch, 2, load=0.3)
    assert compiler.parallel_parts(text) == 2
    _cpus(monkeypatch, 2, load=1.2)  # no CPU idle: two parts would take longer than one
    assert compiler.parallel_parts(text) == 1
    _cpus(monkeypatch, 16, load=9.0)
    assert compiler.parallel_parts(text) == 2
    monkeypatch.setenv("SRCAD_BUILD_PARTS", "1")
    assert compiler.parallel_parts(text) == 1
    _cpus(monkeypatch, 2, load=5.0)
    monkeypatch.setenv("SRCAD_BUILD_PARTS", "2")
    assert compiler.parallel_parts(text) == 2
    assert compiler.parallel_parts(_one_kernel_text()) == 1  # nothing to split


def _one_kernel_text() -> str:
    with text_only():
        _, lowered, _ = fuse_functions(_sources(1), _examples(1))
    return lowered.c_source


@pytest.mark.parametrize("part", [0, 1])
def test_a_part_that_does_not_compile_is_build_failed(fresh_cache, monkeypatch, part):
    _cpus(monkeypatch, 2)
    with text_only():
        _, lowered, _ = fuse_functions(_sources(4), _examples(4))
    text = lowered.c_source
    k = next(k for k, p in zip(lowered.kernels, cgen.parts_of(lowered.kernels)) if p == part)
    guard = f"#if SRCAD_IN_PART({part})  /* {k.name}: part {part} */\n"
    broken = text.replace(guard, guard + "#error srcad_test_broken_part\n")
    assert broken != text
    name, key, material, comp = build.module_key(broken, {}, "test")
    with pytest.raises(build.BuildFailed) as e:
        build.load_module(broken, name, key, material, comp, ())
    msg = str(e.value)
    assert f"part {part} of 2" in msg and "srcad_test_broken_part" in msg, msg
    assert f"-DSRCAD_PART={part}" in msg
    _no_leftovers(fresh_cache)
    assert not list(fresh_cache.glob(f"{name}*{cache.EXT}"))


def test_a_link_failure_is_build_failed(fresh_cache, monkeypatch):
    # both parts compile, but the module table refers to a kernel no part defines
    _cpus(monkeypatch, 2)
    with text_only():
        _, lowered, _ = fuse_functions(_sources(2), _examples(2))
    text = lowered.c_source
    k = next(k for k, p in zip(lowered.kernels, cgen.parts_of(lowered.kernels)) if p == 1)
    guard = f"#if SRCAD_IN_PART(1)  /* {k.name}: part 1 */"
    broken = text.replace(guard, "#if SRCAD_IN_PART(1) && 0  /* (this test: in no part) */")
    assert broken != text and compiler.parallel_parts(broken) == 2
    name, key, material, comp = build.module_key(broken, {}, "test")
    with pytest.raises(build.BuildFailed) as e:
        build.load_module(broken, name, key, material, comp, ())
    assert "linking 2 parts" in str(e.value) and k.name in str(e.value), str(e.value)
    _no_leftovers(fresh_cache)


def test_a_compiler_that_builds_nothing_runs_unfused_with_one_warning(tmp_path):
    # it answers --version (so it is found), then fails every build: the probe, run after
    # the failed build, says the compiler is unusable, not that srcad's C is wrong
    fake = tmp_path / "brokencc"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'fakecc 1.0'; exit 0; fi\n"
                    "echo 'fakecc: cannot build anything' >&2\nexit 1\n")
    fake.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SRCAD_CACHE_DIR": str(tmp_path / "k"),
           "SRCAD_NUM_THREADS": "1", "CC": str(fake), "SRCAD_TEST_TWICE": "1"}
    p = subprocess.run([sys.executable, str(ROOT / "tests" / "kernel_cache_worker.py")],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["equal"] and not r["fused"] and not r["built"]
    assert len([w for w in r["warnings"] if "needs a C compiler" in w]) == 1, r["warnings"]
    assert not [w for w in r["warnings"] if "bug in srcad" in w], r["warnings"]
    assert any("cannot build anything" in w for w in r["warnings"]), r["warnings"]


def test_recipe_is_in_the_key(monkeypatch):
    text = "/* a kernel module */"
    base = build.module_key(text, {"add": 1}, "v")
    monkeypatch.setattr(build, "RECIPE", build.RECIPE + 1)
    bumped = build.module_key(text, {"add": 1}, "v")
    assert bumped[1] != base[1] and bumped[0] != base[0]
    assert bumped[2]["recipe"] == base[2]["recipe"] + 1


def test_flags_per_compiler():
    gcc = compiler.Compiler(("gcc",), "/usr/bin/gcc", "gcc (Debian 12.2.0-14) 12.2.0\n"
                            "Copyright (C) 2022 Free Software Foundation, Inc.")
    clang = compiler.Compiler(("cc",), "/usr/bin/clang", "Apple clang version 15.0.0")
    for comp in (gcc, clang):
        for kernels in (True, False):
            f = compiler.flags(comp, kernels=kernels)
            assert f[-len(compiler.COMMON):] == compiler.COMMON
            assert not set(f) & set(compiler.FORBIDDEN)
            assert "-ffp-contract=off" in f and "-march=native" in f
    assert compiler.flags(gcc) == compiler.FLAGS
    assert compiler.flags(gcc)[:3] == ("-O2", "-ftree-vectorize", "-fvect-cost-model=cheap")
    assert compiler.flags(gcc, kernels=False)[0] == "-O3"  # the runtime
    assert compiler.flags(clang)[0] == "-O3" and "-fvect-cost-model=cheap" not in \
        compiler.flags(clang)
    assert build.module_key("x", {}, "v")[2]["flags"] == list(
        compiler.flags(build.compiler_identity()))
