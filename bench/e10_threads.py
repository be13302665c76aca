"""E10 — CPU scaling: how much do more threads buy, and where does the curve flatten?

Workloads, float32, over 1..P threads (P = the CPUs this process may run on):

* fused kernels, the runtime's threads forced (no size threshold, no back-off):
  E8's ``d = relu(a*b + c)`` at N = 1e5, 1e6 and 1e7, and the GELU gradient (one fused
  kernel reading x and w, writing dx) at N = 1e6 and 1e7;
* the bandwidth they are bounded by, measured in the same run at each thread count: a
  STREAM-like triad ``b + 3*c`` written by a fused kernel into a given buffer (12N bytes);
* whole gradients: the Transformer block of srcad.zoo (B8 T128 D512) and the demo GPT's
  loss gradient (srcad.zoo.gpt), fused, with numpy's BLAS and the kernels both limited to
  k threads (threadpoolctl for the BLAS).

Prediction (written before the measurement)
-------------------------------------------
A kernel that streams memory is bounded by bandwidth, not cores: ``relu`` at 1e7 moves 16N
bytes, and one core of this machine already draws most of what the memory system gives a
process (E8: 29.8 GB/s for one thread, against ~30 GB/s for np.add), so 2 threads gain
<= 1.2x at 1e7 and the curve is flat from the first thread on. In cache (1e5-1e6: 1.2-12
MB for four arrays, L2 is 1 MB per core, L3 shared) each core brings its own L2 and its own
load/store ports: near 2x on two threads at 1e6, less at 1e5 where waking the team
(~5-20 us) is a fair part of an 18 us call. The GELU gradient does ~40 flops per element
plus two numpy SIMD tanh calls per block: compute-bound, so it should scale best (~1.8x
on 2 threads at 1e6 and 1e7). The block's gradient at B8 T128 D512 is ~70% GEMM (OpenBLAS
scales well on large GEMMs): ~1.6-1.8x on 2 threads; the tiny GPT's matmuls are small
(64-wide), so it gains little (<1.3x): its time is Python dispatch and small kernels.

Outputs: a table on stdout, ``bench/results/e10_results.json`` and
``bench/results/e10_threads.png``. ``--quick`` runs a smoke version that writes nothing.

    python bench/e10_threads.py [--quick]
    python bench/e10_threads.py --wait-policy   # OMP_WAIT_POLICY active vs passive, ~3 min

(Since issue 25's session of 2026-12-05 (eighth) srcad runs no OpenMP -- its own thread team
does its parallel work, kernels_c/srcad_gemm.h -- so ``--wait-policy`` now measures only
numpy's and the BLAS's side of it; kept as the record of E10.)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import srcad  # noqa: E402
from srcad import build  # noqa: E402
from srcad.lower.standalone import fuse_functions  # noqa: E402
from srcad.zoo import gpt  # noqa: E402
from srcad.zoo import transformer as T  # noqa: E402
from timing import load  # noqa: E402
from timing import measure as _measure  # noqa: E402

GELU_C = 0.7978845608028654
RELU_SRC = "def relu_fma(a, b, c):\n    return np.maximum(a * b + c, 0.0)\n"
TRIAD_SRC = "def triad(b, c):\n    return b + 3.0 * c\n"


def gelu_loss(x, w):
    return np.sum(0.5 * x * (1.0 + np.tanh(GELU_C * (x + 0.044715 * x * x * x))) * w)


def blas_info() -> list:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return ["threadpoolctl not installed: the BLAS thread count is not controlled"]
    return [{k: p.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
            for p in threadpool_info()]


class threads:
    """k threads for the fused kernels (forced: no size threshold, no back-off) and, with
    threadpoolctl, for numpy's BLAS."""

    def __init__(self, k):
        self.k = k

    def __enter__(self):
        rt = build.runtime()
        self.old = (rt.set_num_threads(self.k), rt.set_adaptive(False),
                    rt.set_parallel_threshold(0))
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            self.blas = None
        else:
            self.blas = threadpool_limits(limits=self.k, user_api="blas")
        return self

    def __exit__(self, *exc):
        rt = build.runtime()
        rt.set_num_threads(self.old[0])
        rt.set_adaptive(self.old[1])
        rt.set_parallel_threshold(self.old[2])
        if self.blas is not None:
            self.blas.restore_original_limits()


def kernels_at(n):
    """{name: (callable, bytes moved)} of the fused kernels at size n."""
    rng = np.random.default_rng(0)
    a, b, c, x, w = (rng.standard_normal(n).astype(np.float32) for _ in range(5))
    (relu,), _, _ = fuse_functions([RELU_SRC], [(a, b, c)], filename="e10_threads.py")
    _, tlow, _ = fuse_functions([TRIAD_SRC], [(b, c)], filename="e10_threads.py")
    triad = next(iter(tlow.functions.values()))
    out = np.empty_like(a)
    g_plain, g_fused = srcad.grad(gelu_loss), srcad.grad(gelu_loss, fuse=True)
    assert np.array_equal(g_plain(x, w), g_fused(x, w))
    assert np.array_equal(relu(a, b, c), np.maximum(a * b + c, 0.0))
    return {"triad": (lambda: triad(b, c, out=out), 12 * n),
            "relu": (lambda: relu(a, b, c), 16 * n),
            "gelu grad": (lambda: g_fused(x, w), 12 * n)}


def models():
    """{name: callable} of whole fused gradients (checked bit for bit against unfused)."""
    rng = np.random.default_rng(0)
    p = T.randomize(rng, T.init(rng, 512, 4, np.float32))
    x = rng.standard_normal((8, 128, 512)).astype(np.float32)
    probe = rng.standard_normal((8, 128, 512)).astype(np.float32)
    gb = srcad.grad(T.block_loss, wrt="p", fuse=True)
    r0, r1 = srcad.grad(T.block_loss, wrt="p")(p, x, 4, probe), gb(p, x, 4, probe)
    assert all(np.array_equal(r0[k], r1[k]) for k in r0)
    args = gpt.EXAMPLES["loss"]()
    gg = srcad.grad(gpt.loss, wrt="params", fuse=True)
    gg(*args)
    return {"block grad B8 T128 D512": lambda: gb(p, x, 4, probe),
            "gpt grad": lambda: gg(*args)}


def run(counts, sizes, rounds, with_models=True):
    rows = []
    work = {n: kernels_at(n) for n in sizes}
    whole = models() if with_models else {}
    for k in counts:
        with threads(k):
            l0 = load()
            calls = {f"{name} N={n:.0e}": fn for n in sizes for name, (fn, _) in work[n].items()}
            calls.update(whole)
            t = _measure(calls, rounds, min_sample=5e-3)
            row = {"threads": k, "seconds": t, "load": [l0, load()], "blas": blas_info()}
            row["GB/s"] = {f"{name} N={n:.0e}": nbytes / t[f"{name} N={n:.0e}"] / 1e9
                           for n in sizes for name, (_, nbytes) in work[n].items()}
        rows.append(row)
        print(f"threads={k} (load {row['load']})", flush=True)
        for name, s in t.items():
            gbs = row["GB/s"].get(name)
            print(f"  {name:28s} {s * 1e3:9.3f} ms" + (f"  {gbs:6.1f} GB/s" if gbs else ""),
                  flush=True)
    return rows


def plot(rows, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return
    counts = [r["threads"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name in rows[0]["seconds"]:
        base = rows[0]["seconds"][name]
        ax1.plot(counts, [base / r["seconds"][name] for r in rows], marker="o", label=name)
    ax1.plot(counts, counts, "k:", label="linear")
    ax1.set_xlabel("threads")
    ax1.set_ylabel("speed-up over 1 thread")
    ax1.set_xticks(counts)
    ax1.legend(fontsize=7)
    for name in rows[0]["GB/s"]:
        ax2.plot(counts, [r["GB/s"][name] for r in rows], marker="o", label=name)
    ax2.set_xlabel("threads")
    ax2.set_ylabel("GB/s (bytes a kernel must move / time)")
    ax2.set_xticks(counts)
    ax2.legend(fontsize=7)
    fig.suptitle("E10: fused kernels and whole gradients over threads (float32)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# -- the wait policy: is the second pool's spin what costs the whole gradients? ----------

_POLICY_WORKER = r"""
import sys, time, statistics, numpy as np, srcad
from srcad.zoo import gpt, data, transformer as T
which, calls = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
if which == "gpt":
    tok = data.CharTokenizer(data.TEXT)
    params = gpt.init(rng, tok.vocab_size, 64, 4, 2, 32, dtype=np.float32)
    tokens, targets = next(data.batches(rng, tok.encode(data.TEXT), 16, 32))
    g = srcad.value_and_grad(gpt.loss, wrt="params", fuse=True)
    args = (params, tokens, targets, 4)
else:
    B, Tn, C = (8, 64, 128) if which == "block-small" else (8, 128, 512)
    p = T.randomize(rng, T.init(rng, C, 4, dtype=np.float32))
    x = rng.standard_normal((B, Tn, C)).astype(np.float32)
    g = srcad.grad(T.block_loss, wrt=(0, 1), fuse=True)
    args = (p, x, 4, rng.standard_normal((B, Tn, C)).astype(np.float32))
for _ in range(3):
    g(*args)
ts = []
for _ in range(calls):
    t = time.perf_counter(); g(*args); ts.append(time.perf_counter() - t)
print(statistics.median(ts))
"""


def run_wait_policy(rounds=5):
    """The fused gradients at the runtime's defaults (every CPU for BLAS and kernels), in
    fresh processes with OMP_WAIT_POLICY=ACTIVE (libgomp's workers spin after each kernel)
    and PASSIVE (they sleep; srcad's default since this experiment), alternated round by
    round. libgomp reads the variable once, at load, hence a process per measurement."""
    import subprocess

    work = {"gpt": 30, "block-small": 30, "block-large": 5}
    res = {w: {"ACTIVE": [], "PASSIVE": []} for w in work}
    for r in range(rounds):
        for w, calls in work.items():
            for pol in (("ACTIVE", "PASSIVE") if r % 2 == 0 else ("PASSIVE", "ACTIVE")):
                env = {**os.environ, "OMP_WAIT_POLICY": pol, "PYTHONPATH": ROOT}
                out = subprocess.run([sys.executable, "-c", _POLICY_WORKER, w, str(calls)],
                                     env=env, capture_output=True, text=True, check=True)
                res[w][pol].append(float(out.stdout.strip().splitlines()[-1]))
    rows = []
    for w, d in res.items():
        a, p = (sorted(d[k])[len(d[k]) // 2] for k in ("ACTIVE", "PASSIVE"))
        rows.append({"workload": w, "active_s": a, "passive_s": p, "runs": d})
        print(f"  {w:12s} spin (ACTIVE) {a * 1e3:8.2f} ms   sleep (PASSIVE) {p * 1e3:8.2f} ms"
              f"   {a / p:5.2f}x", flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--wait-policy", action="store_true",
                        help="only the OMP_WAIT_POLICY experiment (fresh processes)")
    args = parser.parse_args()
    if args.wait_policy:
        print(f"E10 wait policy: load {load()}")
        rows = run_wait_policy()
        path = os.path.join(HERE, "results", "e10_wait_policy.json")
        with open(path, "w") as f:
            json.dump({"load_end": load(), "rows": rows}, f, indent=1)
        print(f"wrote {os.path.relpath(path, ROOT)} (load {load()})")
        return
    cpus = len(os.sched_getaffinity(0))
    counts = list(range(1, cpus + 1))
    print(f"E10 threads: {platform.processor() or platform.machine()}, {cpus} CPUs, numpy "
          f"{np.__version__}, BLAS {blas_info()}, OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE')}, load {load()}")
    if args.quick:
        run(counts, [10_000], 3, with_models=False)
        return
    rows = run(counts, [100_000, 1_000_000, 10_000_000], 15)
    out = {"machine": {"cpus": cpus, "processor": platform.processor(),
                       "numpy": np.__version__, "blas": blas_info(),
                       "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
                       "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE")},
           "rows": rows}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "e10_results.json"), "w") as f:
        json.dump(out, f, indent=1)
    plot(rows, os.path.join(HERE, "results", "e10_threads.png"))
    print("wrote bench/results/e10_results.json and bench/results/e10_threads.png")


if __name__ == "__main__":
    main()
