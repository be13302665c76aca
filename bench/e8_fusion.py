"""E8 — fusion saves bytes, not FLOPs: how much of the predicted saving is real?

Workloads, float32, one BLAS and one torch thread (the fused kernels' own threads are the
variable studied):

* ``d = relu(a * b + c)`` for N = 1e3 .. 3e7 elements, the forward only;
* its gradient, of ``sum(relu(a * b + c) * w)`` with respect to a, b and c;
* a long elementwise chain: the gradient of ``sum(gelu(x) * w)`` (tanh GELU: ~13 ops
  forward, ~20 backward);
* the Transformer block of srcad.zoo (B8 T64 D128): its kernels' cold build and warm load,
  and its gradient fused against unfused.

Variants of the forward, in one process, interleaved (rotating order, medians):
numpy unfused (three ufuncs, each allocating), numpy with ``out=`` (three ufuncs into one
buffer), srcad unfused (srcad's generated code, not lowered), srcad fused (the lowered code:
one kernel, a new output; 1 thread, and 2 threads with no size threshold), the fused kernel
writing into a given buffer (``out=``), torch eager and ``torch.compile`` (inductor's C++
kernel), and two bandwidth references measured in the same run: a STREAM-like triad
``b + s * c`` (a fused kernel writing into a given buffer: 12N bytes) and numpy's
``np.add(b, c, out=o)`` (12N bytes).

Prediction (written before the measurement)
-------------------------------------------
Bytes (4 per float32): unfused, ``a*b`` reads 8N and writes 4N, ``+ c`` the same, the maximum
reads 4N and writes 4N: 32N bytes in all; fused: read a, b, c, write d = 16N. So when memory-bound (N >> cache, ~1e7), fused = 2.0x numpy
unfused and ~1.33x slower than a 12N-byte triad, i.e. the same bandwidth as the triad
(>= 90% of it). In cache (1e4-1e5 floats: 160 KB-1.6 MB, L2 is 1 MB per core) the ufuncs
run from L1/L2 and the saving is call overhead: numpy ~1.2 us per ufunc call x 3 and an
allocation each, against one ~0.2 us kernel call, so 3-5x at 1e4-1e5 (DESIGN: 4-5x at 1e5,
2.5-3.5x at 1e6). Allocation: a new 40 MB output is fresh pages from the OS each time
(glibc returns big blocks to it), ~10k page faults (4 KB) or a few hundred with huge pages:
expected 1-4 ms at 1e7, so the fused kernel that allocates its output stays below the
triad's bandwidth; the one that writes into a given buffer should match it. Two threads:
lose below ~1e4 elements (DESIGN: start-up ~5-20 us), gain up to 1.5-2x on cache-resident
sizes, little at 1e7 (one core nearly saturates memory bandwidth). torch eager: three ops
like numpy (~5 us each); torch.compile: one fused kernel but ~20-50 us of Python guards per
call, so srcad fused >= 2x faster up to ~1e6. The gradient of the GELU chain: ~33 ufunc calls
unfused (~130N bytes: each op ~12N, some 8N) against two kernels reading x and w and writing
the saved values and dx (~30N): 2-4x at 1e6. Transformer block: its elementwise statements
are ~half of the gradient's time (the issue: each ~0.3 ms at (8, 64, 512)); fusing them
should give 1.2-1.5x on the whole gradient, and the kernels build once in ~0.3-0.8 s (one
gcc run for ~15 kernels) and load from the cache in ~1 ms.

Outputs: a table on stdout, ``bench/results/e8_results.json`` and
``bench/results/e8_fusion.png``. ``--quick`` runs a small smoke version that writes nothing.

    python bench/e8_fusion.py [--quick]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import srcad  # noqa: E402
from srcad import build  # noqa: E402
from srcad.lower.standalone import fuse_functions  # noqa: E402
from timing import load, measure  # noqa: E402

GELU_C = 0.7978845608028654


def relu_fma(a, b, c):
    return np.maximum(a * b + c, 0.0)


def relu_loss(a, b, c, w):
    return np.sum(np.maximum(a * b + c, 0.0) * w)


def gelu_loss(x, w):
    return np.sum(0.5 * x * (1.0 + np.tanh(GELU_C * (x + 0.044715 * x * x * x))) * w)


RELU_SRC = "def relu_fma(a, b, c):\n    return np.maximum(a * b + c, 0.0)\n"
TRIAD_SRC = "def triad(b, c):\n    return b + 3.0 * c\n"


# -- timing: bench/timing.py ---------------------------------------------------------------

# -- the forward sweep ------------------------------------------------------------------------

def forward_calls(n, torch, compiled):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    (fused,), low, _ = fuse_functions([RELU_SRC], [(a, b, c)], filename="e8_fusion.py")
    (unfused,), _, _ = fuse_functions([RELU_SRC], [(a, b, c)], fuse=False)
    _, tlow, _ = fuse_functions([TRIAD_SRC], [(b, c)], filename="e8_fusion.py")
    kernel = next(iter(low.functions.values()))
    triad_k = next(iter(tlow.functions.values()))
    o1, o2, o3 = (np.empty_like(a) for _ in range(3))
    assert np.array_equal(fused(a, b, c), relu_fma(a, b, c))
    rt = build.runtime()

    def numpy_out():
        np.multiply(a, b, out=o1)
        np.add(o1, c, out=o1)
        np.maximum(o1, 0.0, out=o1)

    def threads(k, fn):
        def run():  # (k threads every call: the runtime's own back-off is off here)
            old, adaptive = rt.set_num_threads(k), rt.set_adaptive(False)
            try:
                fn()
            finally:
                rt.set_num_threads(old)
                rt.set_adaptive(adaptive)
        return run

    rt.set_parallel_threshold(0)  # this sweep chooses the threads itself
    calls = {
        "numpy": lambda: relu_fma(a, b, c),
        "numpy out=": numpy_out,
        "srcad unfused": lambda: unfused(a, b, c),
        "srcad fused": threads(1, lambda: fused(a, b, c)),
        "srcad fused 2 threads": threads(2, lambda: fused(a, b, c)),
        "srcad fused out=": threads(1, lambda: kernel(a, b, c, out=o2)),
        "triad (fused, out=)": threads(1, lambda: triad_k(b, c, out=o3)),
        "np.add out=": lambda: np.add(b, c, out=o3),
    }
    if torch is not None:
        ta, tb, tc = (torch.from_numpy(v) for v in (a, b, c))
        calls["torch eager"] = lambda: torch.relu(ta * tb + tc)
        if compiled is not None:
            torch._dynamo.reset()  # a kernel for this size (no recompile limit reached)
            fn = compiled()
            fn(ta, tb, tc)  # compile outside the timing
            calls["torch.compile"] = lambda: fn(ta, tb, tc)
    return calls


BYTES = {"triad (fused, out=)": 12, "np.add out=": 12}  # bytes per element; the rest: 16


def run_forward(sizes, rounds, torch, compiled):
    rows = []
    for n in sizes:
        l0 = load()
        calls = forward_calls(n, torch, compiled)
        t = measure(calls, rounds if n < 1_000_000 else 3 * rounds)  # (noisier when memory-bound)
        rows.append({"n": n, "seconds": t, "load": [l0, load()],
                     "gbps": {k: BYTES.get(k, 16) * n / v / 1e9 for k, v in t.items()}})
        print(f"  N={n:>9,}  " + "  ".join(f"{k} {v * 1e6:9.1f}us" for k, v in t.items()),
              flush=True)
    build.runtime().set_parallel_threshold(65536)
    return rows


def run_default_threads(sizes, rounds, torch):
    """srcad's fused kernel as the runtime runs it by default (every CPU above its 65,536-
    element threshold, its per-kernel back-off on) against torch.compile as torch runs it by
    default (torch.get_num_threads() = every CPU; inductor's kernel is compiled for that
    count), one process, interleaved. The table above holds both to one thread."""
    cpus = len(os.sched_getaffinity(0))
    rt = build.runtime()
    old_threads, old_min = rt.set_num_threads(cpus), rt.set_parallel_threshold(65536)
    old_adaptive = rt.set_adaptive(True)
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(cpus)
    rows = []
    try:
        for n in sizes:
            rng = np.random.default_rng(0)
            a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
            (fused,), _, _ = fuse_functions([RELU_SRC], [(a, b, c)], filename="e8_fusion.py")
            ta, tb, tc = (torch.from_numpy(v) for v in (a, b, c))
            torch._dynamo.reset()
            fn = torch.compile(lambda a, b, c: torch.relu(a * b + c), dynamic=False)
            assert np.array_equal(fn(ta, tb, tc).numpy(), fused(a, b, c))
            l0 = load()
            t = measure({"srcad fused, default threads": lambda: fused(a, b, c),
                         "torch.compile, default threads": lambda: fn(ta, tb, tc)},
                        rounds if n < 1_000_000 else 3 * rounds)
            ratio = t["torch.compile, default threads"] / t["srcad fused, default threads"]
            rows.append({"n": n, "threads": cpus, "seconds": t, "load": [l0, load()],
                         "torch.compile / srcad": ratio})
            print(f"  N={n:>9,}  " + "  ".join(f"{k} {v * 1e6:8.1f}us" for k, v in t.items())
                  + f"  ({ratio:.2f}x)", flush=True)
    finally:
        rt.set_num_threads(old_threads)
        rt.set_parallel_threshold(old_min)
        rt.set_adaptive(old_adaptive)
        torch.set_num_threads(torch_threads)
    return rows


# -- gradients ------------------------------------------------------------------------------------

def run_gradients(sizes, rounds):
    rows = []
    for n in sizes:
        rng = np.random.default_rng(1)
        a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
        ct = rng.standard_normal(n).astype(np.float32)
        x, w = (rng.standard_normal(n).astype(np.float32) for _ in range(2))

        r_plain = srcad.grad(relu_loss, wrt=(0, 1, 2), fuse=False)
        r_fused = srcad.grad(relu_loss, wrt=(0, 1, 2), fuse=True)
        g_plain = srcad.grad(gelu_loss, fuse=False)
        g_fused = srcad.grad(gelu_loss, fuse=True)
        assert np.array_equal(g_plain(x, w), g_fused(x, w))
        assert all(np.array_equal(p, q) for p, q in zip(r_plain(a, b, c, ct),
                                                        r_fused(a, b, c, ct)))
        l0 = load()
        t = measure({"relu grad unfused": lambda: r_plain(a, b, c, ct),
                     "relu grad fused": lambda: r_fused(a, b, c, ct),
                     "gelu grad unfused": lambda: g_plain(x, w),
                     "gelu grad fused": lambda: g_fused(x, w)}, rounds)
        rows.append({"n": n, "seconds": t, "load": [l0, load()]})
        print(f"  N={n:>9,}  " + "  ".join(f"{k} {v * 1e3:8.3f}ms" for k, v in t.items()),
              flush=True)
    return rows


# -- the Transformer block ----------------------------------------------------------------------

BLOCK_SCRIPT = textwrap.dedent("""
    import json, sys, time
    t_import = time.perf_counter()
    import numpy as np
    import srcad
    from srcad import build
    from srcad.build import cache
    from srcad.zoo import transformer as T
    times = {"compile": [], "load": []}
    orig_build, orig_load = cache._build, build.load_module
    def timed_build(*a, **k):
        t = time.perf_counter(); r = orig_build(*a, **k)
        times["compile"].append(time.perf_counter() - t); return r
    def timed_load(*a, **k):
        t = time.perf_counter(); r = orig_load(*a, **k)
        times["load"].append(time.perf_counter() - t); return r
    t = time.perf_counter(); build.runtime(); t_rt = time.perf_counter() - t
    cache._build, build.load_module = timed_build, timed_load  # (the block's kernels only)
    rng = np.random.default_rng(0)
    p = T.randomize(rng, T.init(rng, 128, 4, np.float32))
    x = rng.standard_normal((8, 64, 128)).astype(np.float32)
    probe = rng.standard_normal((8, 64, 128)).astype(np.float32)
    g = srcad.grad(T.block_loss, wrt="p", fuse=True)
    t = time.perf_counter(); g(p, x, 4, probe); t_first = time.perf_counter() - t
    print(json.dumps({"compile_s": sum(times["compile"]), "load_s": sum(times["load"]),
                      "runtime_s": t_rt, "first_call_s": t_first,
                      "kernels": len(g._last.kernels.kernels)}))
""")


def block_build_times():
    with tempfile.TemporaryDirectory(prefix="srcad-e8-") as d:
        env = {**os.environ, "PYTHONPATH": ROOT, "SRCAD_CACHE_DIR": d}
        runs = []
        for _ in range(4):  # cold (an empty cache), then warm (new processes, same cache)
            out = subprocess.run([sys.executable, "-c", BLOCK_SCRIPT], env=env, check=True,
                                 capture_output=True, text=True).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
    warm = sorted(runs[1:], key=lambda r: r["load_s"])[1]  # the median of three
    return {"cold": runs[0], "warm": warm, "warm_all": runs[1:]}


def block_gradient(rounds):
    from srcad.zoo import transformer as T

    rng = np.random.default_rng(0)
    p = T.randomize(rng, T.init(rng, 128, 4, np.float32))
    x = rng.standard_normal((8, 64, 128)).astype(np.float32)
    probe = rng.standard_normal((8, 64, 128)).astype(np.float32)
    g0 = srcad.grad(T.block_loss, wrt="p")
    g1 = srcad.grad(T.block_loss, wrt="p", fuse=True)
    r0, r1 = g0(p, x, 4, probe), g1(p, x, 4, probe)
    assert all(np.array_equal(r0[k], r1[k]) for k in r0)
    l0 = load()
    t = measure({"block grad unfused": lambda: g0(p, x, 4, probe),
                 "block grad fused": lambda: g1(p, x, 4, probe)}, rounds, min_sample=20e-3)
    return {"seconds": t, "load": [l0, load()], "kernels": len(g1._last.kernels.kernels)}


# -- plot ---------------------------------------------------------------------------------------

def plot(fwd, grads, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5))
    ns = [r["n"] for r in fwd]
    styles = {"triad (fused, out=)": "k--", "np.add out=": "k:"}
    for name in fwd[0]["gbps"]:
        ax1.plot(ns, [r["gbps"][name] for r in fwd], styles.get(name, "o-"), label=name,
                 markersize=3)
    ax1.set_xscale("log")
    ax1.set_xlabel("N (float32 elements)")
    ax1.set_ylabel("GB/s, counting 16N bytes (triad, np.add: 12N)")
    ax1.set_title("d = relu(a*b + c): bandwidth")
    ax1.legend(fontsize=7)
    ax1.grid(alpha=0.3)
    ax2.plot(ns, [r["seconds"]["numpy"] / r["seconds"]["srcad fused"] for r in fwd], "o-",
             label="forward: numpy / srcad fused")
    if "torch.compile" in fwd[0]["seconds"]:
        ax2.plot(ns, [r["seconds"]["torch.compile"] / r["seconds"]["srcad fused"] for r in fwd],
                 "o-", label="forward: torch.compile / srcad fused")
    gn = [r["n"] for r in grads]
    ax2.plot(gn, [r["seconds"]["relu grad unfused"] / r["seconds"]["relu grad fused"]
                  for r in grads], "s-", label="gradient of sum(relu(a*b+c) * w): unfused / fused")
    ax2.plot(gn, [r["seconds"]["gelu grad unfused"] / r["seconds"]["gelu grad fused"]
                  for r in grads], "s-", label="GELU gradient: unfused / fused")
    ax2.axhline(1, color="gray", lw=0.8)
    ax2.axhline(2, color="gray", lw=0.8, ls="--")
    ax2.set_xscale("log")
    ax2.set_xlabel("N")
    ax2.set_ylabel("speed-up")
    ax2.set_title("speed-ups")
    ax2.legend(fontsize=7)
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--default-threads", action="store_true",
                        help="only srcad fused against torch.compile, each on its default "
                        "threads, at 1e5-1e6")
    args = parser.parse_args()
    try:
        import torch

        torch.set_num_threads(1)
        def compiled():
            return torch.compile(lambda a, b, c: torch.relu(a * b + c), dynamic=False)
    except Exception:  # torch is optional here
        torch, compiled = None, None
    if args.default_threads:  # only the comparison at the runtimes' default threads
        run_default_threads([100_000, 300_000, 1_000_000], 15, torch)
        return
    if args.quick:
        sizes, gsizes, rounds = [1000, 100_000], [100_000], 3
    else:
        sizes = [1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000,
                 10_000_000, 30_000_000]
        gsizes = [10_000, 100_000, 1_000_000, 10_000_000]
        rounds = 9
    info = {"python": platform.python_version(), "numpy": np.__version__,
            "runtime_installed": getattr(build.runtime(), "__name__", "") == "srcad._kernels",
            "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "torch": getattr(torch, "__version__", None), "load_start": load(),
            "runtime": build.stats()}
    print(f"E8 fusion: numpy {np.__version__}, torch {info['torch']}, load {info['load_start']}")
    print("forward d = relu(a*b+c), float32:")
    fwd = run_forward(sizes, rounds, torch, compiled)
    dflt = []
    if torch is not None and compiled is not None:
        print(f"forward, every library on its default threads ({len(os.sched_getaffinity(0))}):")
        dflt = run_default_threads([s for s in sizes if 100_000 <= s <= 1_000_000] or
                                   [100_000], rounds, torch)
    print("gradients:")
    grads = run_gradients(gsizes, rounds)
    print("Transformer block (B8 T64 D128, float32):")
    times = block_build_times()
    blk = block_gradient(rounds * 3)
    print(f"  kernels: {times['cold']['kernels']}; cold build {times['cold']['compile_s']:.3f} s"
          f" (first call {times['cold']['first_call_s']:.2f} s); warm load "
          f"{times['warm']['load_s'] * 1e3:.2f} ms (runtime import "
          f"{times['warm']['runtime_s'] * 1e3:.2f} ms)")
    print(f"  gradient: unfused {blk['seconds']['block grad unfused'] * 1e3:.2f} ms, fused "
          f"{blk['seconds']['block grad fused'] * 1e3:.2f} ms (load {blk['load']})")
    info["load_end"] = load()
    out = {"info": info, "forward": fwd, "default_threads": dflt, "gradients": grads,
           "block_build": times,
           "block_gradient": blk}
    if not args.quick:
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        with open(os.path.join(HERE, "results", "e8_results.json"), "w") as f:
            json.dump(out, f, indent=1)
        plot(fwd, grads, os.path.join(HERE, "results", "e8_fusion.png"))
        print("wrote bench/results/e8_results.json and bench/results/e8_fusion.png")


if __name__ == "__main__":
    main()
