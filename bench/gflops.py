"""Achieved GFLOP/s of the Transformer block's gradient against this machine's ceilings.

The block (srcad.zoo.transformer, float32, gradient w.r.t. all 12 parameters) at B8 T64 D128
and B8 T128 D512, fused and unfused, against two ceilings measured in the same run:

* the matmul peak: numpy's BLAS on large square float32 GEMMs (n = 2048, 4096), on 1 thread
  and on every CPU this process may use;
* the bandwidth: a STREAM-like triad (a fused kernel writing into a given buffer, 12N bytes
  at N = 1e7) on the same threads.

FLOPs are counted from the block's shapes (B batch, T sequence, D width; H heads does not
change the count): the forward's GEMMs are q, k, v and the output projection (4 x 2BTD^2),
the MLP (2 x 8BTD^2) and the two attention products (2 x 2BT^2D), F = 24BTD^2 + 4BT^2D;
each GEMM has two gradient GEMMs of the same size, so a gradient is 3F (the elementwise
work, a few dozen flops per activation, is ~1% of it and not counted). The GEMM floor is
the same GEMMs (each forward product and its two gradient products, contiguous operands)
timed alone in the same run; the elementwise floor is the bytes the fused kernels read and
write in one gradient (counted by wrapping each kernel of the fused build) over the triad's
bandwidth.

    python bench/gflops.py          # ~2 minutes; writes bench/results/gflops.json, gflops.png
    python bench/gflops.py --plot   # only redraw the plot from gflops.json

On a machine shared with other processes the sequential medians above drift between the
step and its floor; ``--floor`` measures only the ratios, interleaved:

    python bench/gflops.py --floor [--threads 1] [--rounds 9] [--sizes small,large] [--peers]
                                   [--settle 0.25]

Each round times the GEMM floor (every GEMM once per sample), then the fused step (srcad's
default options, fuse=True), then torch.compile and jax.jit of the same block (``--peers``),
each a median of a few calls, each after ``--settle`` seconds idle: OpenBLAS's worker threads
spin for about a tenth of a second after numpy's last GEMM, and a step timed inside that
window shares the cores with them (the small block's fused step 4.4-4.7 ms there, 3.4-3.5 ms
after half a second: Zen 5, 2026-12-05; ``--settle 0`` measures it so). The table gives
the median over rounds of each and of the per-round ratio step / floor, with the ratio's min
and max over rounds (the spread).
``--cpu-time`` times by the process's CPU time instead of the wall clock: with one thread
everywhere (``--threads 1``) that is the work done, whatever share of a core other processes
leave this one (torch and XLA may still run helper threads: their rows count those too).
``--threads N`` fixes numpy's BLAS, srcad's kernels, torch and XLA to N threads before they
start.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time


def _threads_from_argv(argv):
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return None


_THREADS = _threads_from_argv(sys.argv[1:])
if _THREADS is not None:  # before numpy (and torch, jax) start their pools
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                 "SRCAD_NUM_THREADS"):
        os.environ[_var] = _THREADS
    if _THREADS == "1":
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                                   + " --xla_cpu_multi_thread_eigen=false").strip()

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import srcad  # noqa: E402
from srcad import build  # noqa: E402
from srcad.lower.standalone import fuse_functions  # noqa: E402
from srcad.zoo import transformer as T  # noqa: E402

TRIAD_SRC = "def triad(b, c):\n    return b + 3.0 * c\n"


def median_time(fn, rounds=9, min_sample=20e-3):
    fn()
    t = time.perf_counter()
    fn()
    k = max(1, int(min_sample / max(time.perf_counter() - t, 1e-7)))
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(k):
            fn()
        out.append((time.perf_counter() - t) / k)
    return statistics.median(out)


def blas_info():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    return [{k: p.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
            for p in threadpool_info() if p.get("user_api") == "blas"]


def limit(k):
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits(limits=k, user_api="blas")


def ceilings(threads):
    rng = np.random.default_rng(0)
    out = {}
    for n in (2048, 4096):
        a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        out[f"sgemm {n}"] = 2 * n ** 3 / median_time(lambda: a @ b, rounds=5) / 1e9
    n = 10_000_000
    b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    _, low, _ = fuse_functions([TRIAD_SRC], [(b, c)], filename="gflops.py")
    triad = next(iter(low.functions.values()))
    o = np.empty_like(b)
    rt = build.runtime()
    old = rt.set_num_threads(threads), rt.set_adaptive(False)
    try:
        out["triad GB/s"] = 12 * n / median_time(lambda: triad(b, c, out=o)) / 1e9
    finally:
        rt.set_num_threads(old[0])
        rt.set_adaptive(old[1])
    return out


def gemms(B, Tn, D):
    """(M, K, N) of every GEMM of the block's forward (batched ones flattened to their
    total: B*H products of (T, D/H) x (D/H, T) have the flops of one (B*T, D) x (D, T))."""
    bt = B * Tn
    return [(bt, D, D)] * 4 + [(bt, D, 4 * D), (bt, 4 * D, D)] + [(bt, D, Tn), (bt, Tn, D)]


def gemm_floor(B, Tn, D):
    """Seconds of the block gradient's GEMMs (forward and both gradient products each),
    timed alone on contiguous operands."""
    rng = np.random.default_rng(0)
    total = 0.0
    for m, k, n in gemms(B, Tn, D):
        a, b, dc = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n)))
        at, bt = np.ascontiguousarray(a.T), np.ascontiguousarray(b.T)
        total += median_time(lambda: a @ b) + median_time(lambda: dc @ bt) + \
            median_time(lambda: at @ dc)
    return total


def kernel_bytes(g, args) -> int:
    """Bytes the fused kernels of `g`'s last build read and write in one call."""
    c = g._last
    ns = c.functions["main"].__globals__
    count = [0]
    originals = {name: ns[name] for name in c.kernels.functions}

    def wrap(fn):
        def counted(*a, **k):
            r = fn(*a, **k)
            outs = r if isinstance(r, tuple) else (r,)
            count[0] += sum(x.nbytes for x in a if isinstance(x, np.ndarray))
            count[0] += sum(x.nbytes for x in outs if isinstance(x, np.ndarray))
            return r
        return counted

    for name, fn in originals.items():
        ns[name] = wrap(fn)
    try:
        g(*args)
    finally:
        ns.update(originals)
    return count[0]


def block(B, Tn, D, H, ceil):
    rng = np.random.default_rng(0)
    p = T.randomize(rng, T.init(rng, D, H, np.float32))
    x = rng.standard_normal((B, Tn, D)).astype(np.float32)
    probe = rng.standard_normal((B, Tn, D)).astype(np.float32)
    args = (p, x, H, probe)
    g0, g1 = srcad.grad(T.block_loss, wrt="p"), srcad.grad(T.block_loss, wrt="p", fuse=True)
    r0, r1 = g0(*args), g1(*args)
    assert all(np.array_equal(r0[k], r1[k]) for k in r0)
    flops = 3 * (24 * B * Tn * D * D + 4 * B * Tn * Tn * D)
    t0, t1 = median_time(lambda: g0(*args)), median_time(lambda: g1(*args))
    floor = gemm_floor(B, Tn, D)
    nbytes = kernel_bytes(g1, args)
    ew_floor = nbytes / (ceil["triad GB/s"] * 1e9)
    row = {"shape": f"B{B} T{Tn} D{D}", "GFLOP": flops / 1e9,
           "unfused s": t0, "fused s": t1,
           "unfused GFLOP/s": flops / t0 / 1e9, "fused GFLOP/s": flops / t1 / 1e9,
           "GEMM floor s": floor, "GEMM GFLOP/s alone": flops / floor / 1e9,
           "kernel bytes": nbytes, "elementwise floor s": ew_floor,
           "rest of fused s": t1 - floor}
    print(f"  {row['shape']}: {flops / 1e9:.2f} GFLOP; unfused {t0 * 1e3:.2f} ms "
          f"({row['unfused GFLOP/s']:.0f} GFLOP/s), fused {t1 * 1e3:.2f} ms "
          f"({row['fused GFLOP/s']:.0f} GFLOP/s); its GEMMs alone {floor * 1e3:.2f} ms "
          f"({row['GEMM GFLOP/s alone']:.0f} GFLOP/s); fused kernels move {nbytes / 1e6:.1f} MB "
          f"= {ew_floor * 1e3:.2f} ms at the triad's bandwidth; the rest of the fused step "
          f"{(t1 - floor) * 1e3:.2f} ms", flush=True)
    return row


_CLOCK = time.process_time if "--cpu-time" in sys.argv[1:] else time.perf_counter


def _median_of(fn, calls):
    out = []
    for _ in range(calls):
        t = _CLOCK()
        fn()
        out.append(_CLOCK() - t)
    return statistics.median(out)


def block_peers(B, Tn, D, H, with_peers):
    """{name: step} of the fused srcad gradient and (with_peers) torch.compile and jax.jit of
    the same block, plus the GEMM floor's closures; every step already called once."""
    rng = np.random.default_rng(0)
    p = T.randomize(rng, T.init(rng, D, H, np.float32))
    x = rng.standard_normal((B, Tn, D)).astype(np.float32)
    probe = rng.standard_normal((B, Tn, D)).astype(np.float32)
    g0, g1 = srcad.grad(T.block_loss, wrt="p", fuse=False), srcad.grad(T.block_loss, wrt="p",
                                                                       fuse=True)
    r0, r1 = g0(p, x, H, probe), g1(p, x, H, probe)
    if build.threads_stats().get("gemm_library"):  # (SRCAD_GEMM: products not numpy's bits)
        assert all(np.abs(r0[k] - r1[k]).max() <= 1e-4 * np.abs(r0[k]).max() for k in r0), \
            "fused !~ unfused"
    else:
        assert all(np.array_equal(r0[k], r1[k]) for k in r0), "fused != unfused"
    steps = {"srcad fused": lambda: g1(p, x, H, probe)}
    if with_peers:
        try:
            import torch
            sys.path[:0] = [os.path.join(ROOT, "tests")]
            import torch_twins as TT
            if _THREADS is not None:
                torch.set_num_threads(int(_THREADS))
            torch._dynamo.reset()
            tp = TT.to_torch(p)
            leaves = list(tp.values())
            tx, tprobe = torch.tensor(x), torch.tensor(probe)
            cf = torch.compile(TT.block_loss, dynamic=False)
            steps["torch.compile"] = lambda: torch.autograd.grad(cf(tp, tx, H, tprobe), leaves)
        except ImportError as e:
            print(f"  (no torch.compile: {e})")
        try:
            import jax
            import jax.numpy as jnp
            sys.path[:0] = [HERE]
            import jax_twins
            jT, _ = jax_twins.load()
            jp = {k: jnp.asarray(v) for k, v in p.items()}
            jx, jprobe = jnp.asarray(x), jnp.asarray(probe)
            jg = jax.jit(jax.grad(lambda p_, x_, pr_: jT.block_loss(p_, x_, H, pr_)))
            steps["jax.jit"] = lambda: jax.block_until_ready(jg(jp, jx, jprobe))
        except ImportError as e:
            print(f"  (no jax.jit: {e})")
    for f in steps.values():
        f()
        f()
    gemm_calls = []
    for m, k, n in gemms(B, Tn, D):
        a, b, dc = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n)))
        at, bt = np.ascontiguousarray(a.T), np.ascontiguousarray(b.T)
        gemm_calls += [lambda a=a, b=b: a @ b, lambda dc=dc, bt=bt: dc @ bt,
                       lambda at=at, dc=dc: at @ dc]
    return steps, gemm_calls


def floor_mode(argv):
    """Interleaved rounds: the fused step, its GEMM floor, the peers; ratios per round."""
    opt = dict(rounds=9, sizes="small,large", calls=5, settle=0.25)
    for key in opt:
        for i, a in enumerate(argv):
            if a == f"--{key}" and i + 1 < len(argv):
                opt[key] = type(opt[key])(argv[i + 1])
    with_peers = "--peers" in argv
    sizes = {"small": (8, 64, 128, 4), "large": (8, 128, 512, 4)}
    print(f"GEMM floor, interleaved: {len(os.sched_getaffinity(0))} CPUs "
          f"({cpu_name()}), numpy {np.__version__}, BLAS {blas_info()}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}, threads "
          f"{_THREADS or 'default'}, SRCAD_NUM_THREADS={os.environ.get('SRCAD_NUM_THREADS')}, "
          f"load {os.getloadavg()[0]:.2f}, clock {_CLOCK.__name__}", flush=True)
    for size in opt["sizes"].split(","):
        B, Tn, D, H = sizes[size]
        steps, gemm_calls = block_peers(B, Tn, D, H, with_peers)
        times = {name: [] for name in list(steps) + ["GEMM floor"]}
        ratios = {name: [] for name in steps}
        calls = opt["calls"] if size == "large" else 4 * opt["calls"]
        for _ in range(opt["rounds"]):
            time.sleep(opt["settle"])  # (and srcad's, or a peer's, after theirs)
            floor = sum(_median_of(f, calls) for f in gemm_calls)
            times["GEMM floor"].append(floor)
            for name, f in steps.items():
                time.sleep(opt["settle"])  # (numpy's BLAS threads spin after its GEMMs)
                t = _median_of(f, calls)
                times[name].append(t)
                ratios[name].append(t / floor)
        print(f"  B{B} T{Tn} D{D} H{H} ({opt['rounds']} rounds x {calls} calls, load "
              f"{os.getloadavg()[0]:.2f}):")
        for name, ts in times.items():
            line = f"    {name:14s} {statistics.median(ts) * 1e3:8.2f} ms"
            if name in ratios:
                r = ratios[name]
                line += (f"  / floor {statistics.median(r):.3f} "
                         f"(rounds {min(r):.3f}-{max(r):.3f})")
            print(line, flush=True)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def plot(out, path):
    """Per thread count and block size: achieved GFLOP/s of the whole gradient (unfused,
    fused) and of its GEMMs alone, against the SGEMM peak measured in the same run."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return
    runs = out["runs"]
    fig, axes = plt.subplots(1, len(runs), figsize=(5.2 * len(runs), 4.2), squeeze=False)
    bars = (("unfused GFLOP/s", "gradient, unfused"), ("fused GFLOP/s", "gradient, fused"),
            ("GEMM GFLOP/s alone", "its GEMMs alone"))
    for ax, run in zip(axes[0], runs):
        shapes = [b["shape"] for b in run["blocks"]]
        width = 0.8 / len(bars)
        for i, (key, label) in enumerate(bars):
            xs = [j + (i - 1) * width for j in range(len(shapes))]
            ax.bar(xs, [b[key] for b in run["blocks"]], width, label=label)
        peak = max(v for k, v in run["ceilings"].items() if k.startswith("sgemm"))
        ax.axhline(peak, color="k", linestyle=":", label=f"SGEMM peak {peak:.0f}")
        ax.set_xticks(range(len(shapes)))
        ax.set_xticklabels(shapes)
        ax.set_ylabel("GFLOP/s (3F of the block's GEMMs / time)")
        ax.set_title(f"{run['threads']} thread(s); triad {run['ceilings']['triad GB/s']:.0f} GB/s")
        ax.legend(fontsize=7)
    blas = (out["machine"].get("blas") or [{}])[0]
    fig.suptitle("Transformer block gradient, float32, against the machine's ceilings "
                 f"(OpenBLAS {blas.get('version', '?')}, {blas.get('architecture', '?')} kernel)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    results = os.path.join(HERE, "results")
    if "--floor" in sys.argv[1:]:
        floor_mode(sys.argv[1:])
        return
    if "--plot" in sys.argv[1:]:
        with open(os.path.join(results, "gflops.json")) as f:
            plot(json.load(f), os.path.join(results, "gflops.png"))
        print("wrote bench/results/gflops.png")
        return
    cpus = len(os.sched_getaffinity(0))
    out = {"machine": {"cpus": cpus, "processor": platform.processor(),
                       "numpy": np.__version__, "blas": blas_info(),
                       "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
                       "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE"),
                       "load": os.getloadavg()[0]}, "runs": []}
    print(f"GFLOP/s: {cpus} CPUs, numpy {np.__version__}, BLAS {blas_info()}, load "
          f"{os.getloadavg()[0]:.2f}")
    for k in sorted({1, cpus}):
        lim = limit(k)
        rt = build.runtime()
        old = rt.set_num_threads(k)
        try:
            ceil = ceilings(k)
            print(f"threads={k}: " + ", ".join(f"{n} {v:.1f}" for n, v in ceil.items())
                  + " (GFLOP/s; GB/s)", flush=True)
            rows = [block(8, 64, 128, 4, ceil), block(8, 128, 512, 4, ceil)]
        finally:
            rt.set_num_threads(old)
            if lim is not None:
                lim.restore_original_limits()
        out["runs"].append({"threads": k, "ceilings": ceil, "blocks": rows,
                            "load after": os.getloadavg()[0]})
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "gflops.json"), "w") as f:
        json.dump(out, f, indent=1)
    plot(out, os.path.join(results, "gflops.png"))
    print("wrote bench/results/gflops.json and gflops.png")


if __name__ == "__main__":
    main()
