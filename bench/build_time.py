"""Issue 15: what a fused first call's kernel build costs, per flag set and split, and whether
the flags cost kernel speed; and a cold first call.

``compile``: the kernel module of each workload (its C text, as srcad writes it), compiled
by srcad.build.compiler with each flag set as one translation unit and split in two
(compile_split), interleaved, `--reps` times: wall (median, min) and the compilers' CPU
time. ``speed``: one fused gradient per flag set in one process, called in turn (`--rounds`
rounds): the step and the time inside its fused kernels, median and min over the rounds (on
a shared machine the min is the steadier figure).

    python bench/build_time.py compile --reps 7
    python bench/build_time.py first gpt        # a cold first call (a fresh cache directory)
    OPENBLAS_NUM_THREADS=1 SRCAD_NUM_THREADS=1 python bench/build_time.py speed gpt
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
os.environ.setdefault("SRCAD_CACHE_DIR", tempfile.mkdtemp(prefix="srcad-build-time-"))

from profile_statements import workload

import srcad.build as sb
from srcad.build import cache, compiler

OPT = {"O3": ("-O3",), "O2cheap": compiler.GCC_KERNELS, "O2": ("-O2",),
       "O2dyn": ("-O2", "-ftree-vectorize", "-fvect-cost-model=dynamic")}
WORKLOADS = ("block-small", "block-large", "gpt")


def _use(opt: str) -> None:
    flags = OPT[opt] + compiler.COMMON
    compiler.flags = lambda comp, *, kernels=True: flags


def module_texts() -> dict:
    """Each workload's kernel module: (C text, include, extra), as its first call builds it."""
    got, real = {}, cache.get

    def record(module, key, material, c_source, comp, *, include, extra=(), before_build=None):
        if material.get("kind") == "kernels":
            got[current] = (c_source, include, tuple(extra))
        return real(module, key, material, c_source, comp, include=include, extra=extra,
                    before_build=before_build)

    cache.get = record
    try:
        for current in WORKLOADS:
            g, a = workload(current, True)
            g(*a)
    finally:
        cache.get = real
    return got


def compile_times(args) -> None:
    comp = compiler.find()
    texts = module_texts()
    d = Path(tempfile.mkdtemp(prefix="srcad-build-time-"))
    runs = [(w, o, m) for w in WORKLOADS for o in args.opt for m in ("one", "split")]
    crit = {(w, o): [] for w in WORKLOADS for o in args.opt}
    wall = {r: [] for r in runs}
    cpu = {r: [] for r in runs}
    for _ in range(args.reps):
        for w, o, m in runs:
            src, include, extra = texts[w]
            path = d / f"{w}.c"
            path.write_text(src)
            _use(o)
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            if m == "one":
                compiler.compile_shared(comp, path, d / "x.so", include=include, extra=extra)
            else:
                compiler.compile_split(comp, path, d / "x.so", include=include, extra=extra)
            wall[(w, o, m)].append(time.perf_counter() - t)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[(w, o, m)].append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
            if m == "split":  # each part alone, one after the other: its CPU time
                crit[(w, o)].append(_critical_path(comp, path, d, include, extra))
    print(f"{'workload':12s} {'flags':8s} {'units':5s} {'wall med':>9s} {'wall min':>9s} "
          f"{'cpu med':>8s} {'part 0':>7s} {'part 1':>7s} {'link':>6s} {'path':>6s}   "
          f"(seconds, {args.reps} runs, load {os.getloadavg()[0]:.1f})")
    for r in runs:
        line = (f"{r[0]:12s} {r[1]:8s} {r[2]:5s} {statistics.median(wall[r]):9.3f} "
                f"{min(wall[r]):9.3f} {statistics.median(cpu[r]):8.3f}")
        if r[2] == "split":
            p0, p1, ln = (statistics.median(c[i] for c in crit[r[:2]]) for i in range(3))
            line += f" {p0:7.3f} {p1:7.3f} {ln:6.3f} {max(p0, p1) + ln:6.3f}"
        print(line)


def _critical_path(comp, path: Path, d: Path, include, extra) -> tuple:
    """CPU seconds of part 0, part 1 and the link, each run alone: with two idle CPUs the
    split build takes max(part 0, part 1) + link."""
    every = compiler.flags(comp)
    base = [*comp.argv, *(f for f in every if f != "-shared"), *extra,
            *(f"-I{i}" for i in include), "-c", str(path)]
    out = []
    for cmd in ([*base, "-DSRCAD_PART=0", "-o", str(d / "p0.o")],
                [*base, "-DSRCAD_PART=1", "-o", str(d / "p1.o")],
                [*comp.argv, *every, str(d / "p0.o"), str(d / "p1.o"), "-o", str(d / "y.so")]):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, check=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    return tuple(out)


def speed(args) -> None:
    inside = [0.0]
    real_load = sb.load_module

    def load(*a, **k):  # the kernels, timed
        mod = real_load(*a, **k)
        ns = types.SimpleNamespace()
        for name in dir(mod):
            if name.startswith("fused_"):
                kernel = getattr(mod, name)

                def timed(*x, _f=kernel, **kw):
                    t = time.perf_counter()
                    try:
                        return _f(*x, **kw)
                    finally:
                        inside[0] += time.perf_counter() - t
                setattr(ns, name, timed)
        return ns

    sb.load_module = load
    fns = {}
    for o in args.opt:
        _use(o)
        fns[o] = workload(args.workload, True)
        fns[o][0](*fns[o][1])
    inner = {"block-large": 2}.get(args.workload, 20)
    step = {o: [] for o in args.opt}
    kern = {o: [] for o in args.opt}
    for _ in range(args.rounds):
        for o in args.opt:
            g, a = fns[o]
            inside[0] = 0.0
            t = time.perf_counter()
            for _ in range(inner):
                g(*a)
            step[o].append((time.perf_counter() - t) / inner)
            kern[o].append(inside[0] / inner)
    for how, pick in (("median", statistics.median), ("min", min)):
        s0, k0 = pick(step[args.opt[0]]), pick(kern[args.opt[0]])
        for o in args.opt:
            s, k = pick(step[o]), pick(kern[o])
            print(f"{args.workload:12s} {o:8s} {how:6s} step {1e3 * s:9.3f} ms ({s / s0:.3f})"
                  f"   in its kernels {1e3 * k:8.3f} ms ({k / k0:.3f})")


def first(args) -> None:
    """One cold first call (this process's cache directory is new unless SRCAD_CACHE_DIR is
    set): its time, and the time in cache.get."""
    real, spent = cache.get, [0.0]

    def timed(*a, **k):
        t = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            spent[0] += time.perf_counter() - t

    cache.get = timed
    g, a = workload(args.workload, True)
    t = time.perf_counter()
    g(*a)
    print(f"{args.workload:12s} first call {time.perf_counter() - t:.3f} s, in cache.get "
          f"{spent[0]:.3f} s (load {os.getloadavg()[0]:.1f})")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--reps", type=int, default=5)
    c.add_argument("--opt", nargs="+", default=["O3", "O2cheap"], choices=list(OPT))
    s = sub.add_parser("speed")
    s.add_argument("workload", choices=WORKLOADS)
    s.add_argument("--rounds", type=int, default=15)
    s.add_argument("--opt", nargs="+", default=["O3", "O2cheap"], choices=list(OPT))
    f = sub.add_parser("first")
    f.add_argument("workload", choices=WORKLOADS)
    args = ap.parse_args()
    {"compile": compile_times, "speed": speed, "first": first}[args.what](args)


if __name__ == "__main__":
    main()
