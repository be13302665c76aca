"""E6 — the dispatch/arithmetic crossover: from what size does per-op overhead stop mattering?

Two workloads, each run as forward + backward (value and gradients), float64:

* elementwise, N elements:  ``h = np.tanh(x * w + b); loss = np.sum(h * h)``, gradients
  w.r.t. x and w. By hand that is 5 numpy calls forward (multiply, add, tanh, multiply,
  sum) and 6 backward (``gh = h + h``, ``h * h``, ``1 - .``, ``gz = gh * .``, ``gz * w``,
  ``gz * x``): 11 calls moving ~11 x 3 x 8 bytes per element.
* matmul, n x n (N = n^2 elements per matrix):  ``loss = np.sum((A @ B) * C)``, gradients
  w.r.t. A and B: ``A @ B`` forward, ``C @ B.T`` and ``A.T @ C`` backward, 6 n^3 flops in
  three BLAS calls plus 2 elementwise calls.

Five ways to run each, in one process, interleaved: raw numpy (forward + hand-written
backward), srcad's generated code (``srcad.value_and_grad``: the value is returned too, so
the forward is not dead code; ``srcad.grad`` would drop the unused ``h * h`` and ``sum``),
srcad's tape (``mode="tape"``), PyTorch eager forward + ``torch.autograd.grad``, and
PyTorch's forward alone under ``torch.no_grad()`` (no recording: the bare dispatch floor
of torch). One BLAS / intra-op thread everywhere (``OPENBLAS_NUM_THREADS=1``,
``torch.set_num_threads(1)``), so per-element arithmetic is comparable across libraries and
the crossover is not blurred by thread start-up.

Prediction (written before any measurement was taken)
------------------------------------------------------
Model each call as T(N) = a + b N: a fixed dispatch cost per op times the op count, plus
arithmetic. Dispatch: ~1 us per numpy ufunc call (DESIGN: 1.2 us measured), so raw numpy
fwd+bwd ~ 11-15 us at N = 1; srcad's generated code is the same calls plus its wrapper
(~1.4 us, REPORT "Overhead") ~ 15 us; torch eager ~ 3-5 us per op without recording
(~15-25 us for the 5-op forward) and ~ 8-10 us per op with autograd plus the backward
engine's fixed start-up ~ 20 us, ~ 80-120 us; srcad's tape is pure Python per op (Tensor
wrapping, ``__array_ufunc__``, a table lookup, recording, then a Python loop calling the
rule lambdas) ~ 15-30 us per op, ~ 150-300 us. Arithmetic: each elementwise op streams 2-3
arrays of 8-byte values, at ~5-10 GB/s from cache, ~2-4 ns per element per op, so
b ~ 20-40 ns per element for the 11-call chain (more once the arrays leave the 2 MiB L2,
near N ~ 10^4-10^5 with ~8 live arrays). Crossover N* = a / b where dispatch equals
arithmetic, T(N*) = 2 a: numpy ~ 300-700 elements, srcad source about the same, torch
autograd ~ 2,000-5,000, srcad tape ~ 5,000-10,000, so 10^3-10^4 for elementwise. For
matmul, a ~ 5 BLAS/ufunc calls ~ 10 us (numpy) and b ~ 6 n^3 flops at ~20-40 GFLOP/s on
one core; n^3 grows so fast that 6 n^3 / 3e10 = 10 us already at n ~ 35 (numpy), ~ 60
(torch), ~ 80 (tape): the crossover comes much earlier in elements, N* = n^2 ~ 10^3-10^4
only because BLAS is slow for small n, and in n it is 30-100. Past the crossover every
method should converge to the same time (the same numpy kernels run in source, tape and raw
numpy; torch runs its own kernels, MKL with AVX-512 against OpenBLAS pinned to Haswell/AVX2
here, so torch matmul may be faster at large n).

Measurement: for each size the methods are timed in rotating order, R rounds (R = 9 for
small sizes down to 3 for the largest); each sample times k back-to-back calls with k chosen
so that a sample lasts >= 2 ms; the reported time is the median over rounds. The crossover
is read off the measured curve: the size where T(N) = 2 T(smallest), interpolated in
log-log; the table also gives a = T(smallest) and the large-N per-element cost b. Outputs:
a table on stdout, ``bench/results/e6_results.json`` and ``bench/results/e6_dispatch.png``
(``--quick``: a 5-second smoke run over fewer sizes that writes nothing).

    python bench/e6_dispatch.py [--quick]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import gc
import itertools
import json
import math
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import srcad

# -- the workloads (module-level functions: srcad reads their source) ---------------------


def elementwise(x, w, b):
    h = np.tanh(x * w + b)
    return np.sum(h * h)


def elementwise_by_hand(x, w, b):
    h = np.tanh(x * w + b)
    loss = np.sum(h * h)
    gh = h + h
    gz = gh * (1 - h * h)
    return loss, (gz * w, gz * x)


def matmul(A, B, C):
    return np.sum((A @ B) * C)


def matmul_by_hand(A, B, C):
    loss = np.sum((A @ B) * C)
    return loss, (C @ B.T, A.T @ C)


def torch_elementwise(torch):
    def fwd_bwd(x, w, b):
        x = x.detach().requires_grad_()
        w = w.detach().requires_grad_()
        h = torch.tanh(x * w + b)
        loss = torch.sum(h * h)
        return loss, torch.autograd.grad(loss, (x, w))

    def fwd(x, w, b):
        with torch.no_grad():
            h = torch.tanh(x * w + b)
            return torch.sum(h * h)

    return fwd_bwd, fwd


def torch_matmul(torch):
    def fwd_bwd(A, B, C):
        A = A.detach().requires_grad_()
        B = B.detach().requires_grad_()
        loss = torch.sum((A @ B) * C)
        return loss, torch.autograd.grad(loss, (A, B))

    def fwd(A, B, C):
        with torch.no_grad():
            return torch.sum((A @ B) * C)

    return fwd_bwd, fwd


METHODS = ("numpy", "srcad", "tape", "torch", "torch_nograd")
LABELS = {
    "numpy": "numpy fwd + hand-written bwd",
    "srcad": "srcad generated (value_and_grad)",
    "tape": "srcad tape mode",
    "torch": "torch eager fwd + autograd bwd",
    "torch_nograd": "torch fwd only, no_grad",
}

# -- timing --------------------------------------------------------------------------------


def _sample(fn, k):
    t0 = time.perf_counter()
    for _ in range(k):
        fn()
    return (time.perf_counter() - t0) / k


def measure(calls: dict, rounds: int, min_sample=2e-3):
    """Median seconds per call for each of `calls` (name -> zero-argument callable), timed in
    rotating order over `rounds` rounds, k calls per sample so a sample lasts >= min_sample."""
    ks = {}
    for name, fn in calls.items():
        fn()  # warm: srcad specialises and compiles on the first call at a new shape
        t = _sample(fn, 1)
        ks[name] = max(1, min(100_000, math.ceil(min_sample / max(t, 1e-9))))
    names = list(calls)
    times = {n: [] for n in names}
    gc.collect()
    gc.disable()
    try:
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                times[n].append(_sample(calls[n], ks[n]))
    finally:
        gc.enable()
    return {n: statistics.median(v) for n, v in times.items()}


def rounds_for(seconds_per_call_estimate):
    if seconds_per_call_estimate > 0.2:
        return 3
    if seconds_per_call_estimate > 0.02:
        return 5
    return 9


def check(results, where):
    """Every method computes the same value and gradients (tape == source bit for bit)."""
    ref_loss, ref_g = results["numpy"]
    for name in ("srcad", "tape", "torch"):
        loss, g = results[name]
        loss = float(loss.detach()) if hasattr(loss, "detach") else float(loss)
        g = [np.asarray(t.detach().numpy() if hasattr(t, "detach") else t) for t in g]
        assert math.isclose(loss, float(ref_loss), rel_tol=1e-9), (where, name)
        for a, e in zip(g, ref_g):
            np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-12, err_msg=f"{where} {name}")
    s, t = results["srcad"], results["tape"]
    assert np.array_equal(s[0], t[0]) and all(np.array_equal(a, b) for a, b in zip(s[1], t[1])), \
        f"{where}: tape and source modes differ"


def make_calls(fn, by_hand, t_fwd_bwd, t_fwd, args, torch):
    """The five methods as zero-argument callables on the same inputs."""
    targs = [torch.from_numpy(a) for a in args]
    src = srcad.value_and_grad(fn, wrt=(0, 1))
    tape = srcad.value_and_grad(fn, wrt=(0, 1), mode="tape")
    return {
        "numpy": lambda: by_hand(*args),
        "srcad": lambda: src(*args),
        "tape": lambda: tape(*args),
        "torch": lambda: t_fwd_bwd(*targs),
        "torch_nograd": lambda: t_fwd(*targs),
    }


def run_workload(kind, sizes, torch):
    rng = np.random.default_rng(0)
    rows = []
    for size in sizes:
        if kind == "elementwise":
            shape = (size,)
            args = [rng.uniform(-1, 1, shape) for _ in range(3)]
            fn, by_hand = elementwise, elementwise_by_hand
            t_fwd_bwd, t_fwd = torch_elementwise(torch)
            elements, est = size, 60e-9 * size
        else:
            shape = (size, size)
            args = [rng.uniform(-1, 1, shape) for _ in range(3)]
            fn, by_hand = matmul, matmul_by_hand
            t_fwd_bwd, t_fwd = torch_matmul(torch)
            elements, est = size * size, 6 * size**3 / 2e10
        calls = make_calls(fn, by_hand, t_fwd_bwd, t_fwd, args, torch)
        check({n: calls[n]() for n in ("numpy", "srcad", "tape", "torch")}, f"{kind} {size}")
        t = measure(calls, rounds_for(est))
        row = {"size": size, "elements": elements,
               "n3": size**3 if kind == "matmul" else size, **t}
        rows.append(row)
        print(f"{kind:11s} {size:>9d} " + " ".join(f"{t[m] * 1e6:12.1f}" for m in METHODS),
              flush=True)
        del args, calls
        gc.collect()
    return rows


# -- the per-op dispatch floor -------------------------------------------------------------


def per_op(torch):
    """Seconds per op on 1-element operands: one numpy ufunc, one torch op (no_grad / with a
    graph being recorded)."""
    a, b = np.ones(1), np.ones(1)
    ta, tb = torch.ones(1, dtype=torch.float64), torch.ones(1, dtype=torch.float64)
    tg = torch.ones(1, dtype=torch.float64, requires_grad=True)

    def np_add():
        for _ in range(100):
            np.add(a, b)

    def torch_add():
        with torch.no_grad():
            for _ in range(100):
                torch.add(ta, tb)

    def torch_add_graph():
        for _ in range(100):
            torch.add(tg, tb)

    t = measure({"numpy ufunc": np_add, "torch op, no_grad": torch_add,
                 "torch op, recorded": torch_add_graph}, 9)
    return {k: v / 100 for k, v in t.items()}


# -- analysis ------------------------------------------------------------------------------


def crossover(rows, method, x="elements"):
    """Where T(N) = 2 T(smallest N): dispatch == arithmetic. Log-log interpolation."""
    a = rows[0][method]
    for lo, hi in itertools.pairwise(rows):
        if lo[method] < 2 * a <= hi[method]:
            f = (math.log(2 * a) - math.log(lo[method])) / (
                math.log(hi[method]) - math.log(lo[method]))
            return math.exp(math.log(lo[x]) + f * (math.log(hi[x]) - math.log(lo[x])))
    return None


def large_slope(rows, method, x="elements"):
    """Per-unit cost b from the two largest sizes."""
    lo, hi = rows[-2], rows[-1]
    return (hi[method] - lo[method]) / (hi[x] - lo[x])


def blas_summary():
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')} ({blas.get('openblas configuration', '')})"
    except Exception as e:  # noqa: BLE001
        return f"unknown ({e})"


def fmt_us(s):
    us = s * 1e6
    if us >= 1e5:
        return f"{us / 1e6:.3g} s"
    if us >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} us"


def plot(ew, mm, path, cross):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"numpy": "k", "srcad": "tab:blue", "tape": "tab:orange", "torch": "tab:red",
              "torch_nograd": "tab:pink"}
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    for col, (rows, title, xlab) in enumerate([
            (ew, "elementwise: sum(tanh(x*w + b)^2), fwd + bwd", "N (elements per array)"),
            (mm, "matmul: sum((A @ B) * C), fwd + bwd", "N = n^2 (elements per matrix)")]):
        x = np.array([r["elements"] for r in rows], dtype=float)
        ax, axn = axes[0, col], axes[1, col]
        for m in METHODS:
            y = np.array([r[m] for r in rows])
            ax.loglog(x, y * 1e6, "o-", ms=3, color=colors[m], label=LABELS[m])
            unit = x if col == 0 else x ** 1.5
            axn.loglog(x, y * 1e9 / unit, "o-", ms=3, color=colors[m], label=LABELS[m])
            c = cross[col].get(m)
            if c:
                ax.axvline(c, color=colors[m], ls=":", lw=1)
                axn.axvline(c, color=colors[m], ls=":", lw=1)
        ax.set_title(title)
        ax.set_xlabel(xlab)
        ax.set_ylabel("time per fwd+bwd call (us)")
        axn.set_xlabel(xlab)
        axn.set_ylabel("ns per element" if col == 0 else "ns per n^3")
        ax.grid(True, which="both", alpha=0.3)
        axn.grid(True, which="both", alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("E6: dispatch vs arithmetic (dotted: crossover T(N) = 2 T(1), one thread)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="fewer, smaller sizes; prints the tables, writes nothing")
    opts = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    t_start = time.perf_counter()
    if opts.quick:
        ew_sizes = [1, 10, 100, 1000, 10_000, 100_000]
        mm_sizes = [1, 4, 16, 64, 128]
    else:
        ew_sizes = [1, 3, 10, 30, 100, 300, 1000, 3000, 10_000, 30_000, 100_000, 300_000,
                    1_000_000, 3_000_000, 10_000_000]
        mm_sizes = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 2048]

    env = {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                          "OPENBLAS_NUM_THREADS")}
    print(f"python {platform.python_version()}, numpy {np.__version__}, torch "
          f"{torch.__version__} (threads {torch.get_num_threads()}), srcad {srcad.__version__}")
    print(f"numpy BLAS: {blas_summary()}")
    print(f"env: {env}")
    print(f"{'':11s} {'size':>9s} " + " ".join(f"{m:>12s}" for m in METHODS) + "   (us per call)")
    ew = run_workload("elementwise", ew_sizes, torch)
    mm = run_workload("matmul", mm_sizes, torch)
    ops = per_op(torch)

    cross = [{m: crossover(rows, m) for m in METHODS} for rows in (ew, mm)]
    summary = {}
    print("\nper-op dispatch floor (1-element operands): "
          + ", ".join(f"{k} {v * 1e6:.2f} us" for k, v in ops.items()))
    # elementwise: a = T(1); b in cache (N ~ 1e4, where the crossover is) and at the largest N
    mid = min(ew, key=lambda r: abs(math.log(r["elements"] / 1e4)))
    print(f"\nelementwise: a = T(N=1); b = ns per element at N = {mid['elements']:,} "
          f"(in cache) and from the two largest N; N* = where T(N) = 2a (measured, log-log "
          f"interpolation) and a / b_cache (the linear model)")
    print(f"{'method':14s} {'a':>9s} {'T(max N)':>10s} {'b cache':>9s} {'b large':>9s} "
          f"{'N* meas.':>10s} {'a/b_cache':>10s}")
    for m in METHODS:
        a = ew[0][m]
        b_cache = (mid[m] - a) / mid["elements"]
        b_large = large_slope(ew, m)
        n_star = cross[0][m]
        summary[f"elementwise/{m}"] = {"a": a, "b_cache": b_cache, "b_large": b_large,
                                       "crossover_elements": n_star, "t_max": ew[-1][m],
                                       "model_a_over_b_cache": a / b_cache}
        star = "-" if n_star is None else f"{n_star:,.0f}"
        print(f"{m:14s} {fmt_us(a):>9s} {fmt_us(ew[-1][m]):>10s} {b_cache * 1e9:7.2f}ns "
              f"{b_large * 1e9:7.2f}ns {star:>10s} {a / b_cache:10,.0f}")
    # matmul: a = T(n=1); c = seconds per n^3 at the largest n; n* = (a / c)^(1/3)
    big = mm[-1]
    print(f"\nmatmul: a = T(n=1); GFLOP/s at n = {big['size']} (6 n^3 flops fwd+bwd, 2 n^3 "
          f"forward only); N* = n^2 where T = 2a (measured) and from (a / c)^(1/3), c = "
          f"T(max n) / n^3")
    print(f"{'method':14s} {'a':>9s} {'T(max n)':>10s} {'GFLOP/s':>8s} {'n* meas.':>9s} "
          f"{'N* meas.':>9s} {'n* model':>9s}")
    for m in METHODS:
        a = mm[0][m]
        flops = (2 if m == "torch_nograd" else 6) * big["size"] ** 3
        c = big[m] / big["size"] ** 3
        n_model = (a / c) ** (1 / 3)
        n_star = cross[1][m]
        summary[f"matmul/{m}"] = {"a": a, "gflops": flops / big[m] / 1e9,
                                  "crossover_elements": n_star, "t_max": big[m],
                                  "model_n": n_model}
        star = "-" if n_star is None else f"{n_star ** 0.5:.0f}"
        star_el = "-" if n_star is None else f"{n_star:,.0f}"
        print(f"{m:14s} {fmt_us(a):>9s} {fmt_us(big[m]):>10s} {flops / big[m] / 1e9:8.1f} "
              f"{star:>9s} {star_el:>9s} {n_model:9.0f}")

    if opts.quick:  # a smoke run: leave the full run's results alone
        print(f"\n--quick: nothing written ({time.perf_counter() - t_start:.0f} s)")
        return
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    png = os.path.join(HERE, "results", "e6_dispatch.png")
    plot(ew, mm, png, cross)
    out = {"elementwise": ew, "matmul": mm, "per_op": ops, "summary": summary, "env": env,
           "blas": blas_summary(), "numpy": np.__version__, "torch": torch.__version__,
           "seconds": time.perf_counter() - t_start}
    with open(os.path.join(HERE, "results", "e6_results.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(f"\nwrote {png} and bench/results/e6_results.json in "
          f"{time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()
