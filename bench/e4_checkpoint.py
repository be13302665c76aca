"""E4 — gradient checkpointing: the memory/time frontier of an L-layer MLP.

The model (bench/e4_models.py): h_{i+1} = tanh(h_i @ W_i), i = 0..L-1, written as a `for`
loop over a list of weights, loss = sum(h_L ** 2); the gradient w.r.t. the input h_0 and
every W_i, ``srcad.grad(..., wrt=(0, 1))``. Schedules:

* ``plain``: the plain loop, save-everything;
* ``k=K``: the loop cut into ceil(L / K) ``srcad.checkpoint``-ed segments of K layers: the
  forward keeps only every K-th state, the backward re-runs one segment's forward (from its
  saved input) right before that segment's backward. K = round(sqrt(L)) is the sqrt(n)
  schedule; K = 1 checkpoints every layer; K = L would recompute the whole net.

Main sizes: batch B = 1024 rows ("tokens"), width D = 32, float64: one activation is
B*D*8 = 256 KiB, one weight D*D*8 = 8 KiB. Activations dominate (B >> D), the regime
checkpointing is for; a weights-heavy side case (B = 64, D = 64, L = 1000, activation =
weight = 32 KiB) shows what happens when they do not.

Prediction (written before any measurement was taken)
------------------------------------------------------
The seed's calculation stores L activations for the plain loop and ~2*sqrt(L) for sqrt(n)
checkpointing (sqrt(L) segment inputs, plus one segment's sqrt(L) activations while it is
recomputed) for one extra forward pass: 1.7x / 5x / 16x less memory at L = 10 / 100 / 1000
for ~1.33x step time (fwd + bwd = 3 units, +1 fwd).

For this model, counted in activations a = 256 KiB:

* plain: srcad keeps one array per layer (the layer input h_i; tanh's output is the next
  layer's input, so the derivative 1 - h*h reuses it) -> peak ~ L*a + a few temporaries,
  reached at the start of the backward sweep. L = 1000: ~250 MiB.
* checkpoint every K: ceil(L/K) saved inputs + K recomputed inputs + temporaries ->
  ~ (L/K + K)*a, minimised at K = sqrt(L): L = 1000, K = 32: ~64*a = 16 MiB.
* but the backward also builds the parameter gradients, L*D*D*8 bytes = G (7.8 MiB at
  L = 1000), which no schedule can avoid, and `as_grad` copies them on return (so ~2G at the
  very end). Predicted peak for sqrt(n) at L = 1000: max(~(32 + 1)*a + G, 2G) ~ 16-17 MiB ->
  ~15x less than plain (the seed's 16x, minus G and temporaries). L = 100 (K = 10): ~ (10+10+
  temporaries)*a vs 100*a -> ~4-5x. L = 10 (K = 3): (4 + 3 + temps) vs 10 + temps -> ~1.3-1.5x.
* K = 1 keeps one input per layer -- exactly what the plain loop keeps -> no memory saving
  at all, plus the recompute: strictly worse than plain for this model.
* srcad.explain's total_bytes counts what the forward sweep keeps (not the recomputed
  segment, not the gradients): plain L*a, checkpointed ceil(L/K)*a -> ratio ~K (32x at
  L = 1000), an over-estimate of the real saving.
* time: forward ~1 unit (a matmul + tanh per layer), backward ~2 units (two matmuls +
  elementwise), recompute +1 -> ~1.33x for every K (each layer is recomputed once whatever
  K), plus a small per-segment overhead (one more generated-function call per segment,
  largest for K = 1). The weights-heavy side case: G = 31 MiB ~ L*a, so the saving is
  bounded by ~(L*a)/(2G) ~ 1x-ish: checkpointing cannot help when weights dominate.

Measured: peak memory with tracemalloc (numpy reports its data buffers to it; checked at start
up), the peak over one whole grad call minus the traced memory before it (so the inputs are
not counted; the returned gradients are); step time = one grad call, median of interleaved
repeats (tracemalloc off), one thread of BLAS, timed as this process's CPU time
(time.process_time; with one BLAS thread it is the call's own compute, robust to other
processes on a shared 2-core box, which made wall-clock samples bimodal) -- the wall-clock
median and minimum are printed and saved next to it; every schedule's gradients are checked bitwise
against the plain loop's (np.array_equal), and the plain loop's against a hand-written numpy
backward (to 1e-12). Results: a table on stdout, bench/results/e4_results.json and the plot
bench/results/e4_frontier.png.

    python bench/e4_checkpoint.py [--quick]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import gc
import json
import math
import platform
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import srcad  # noqa: E402
from e4_models import loss_ckpt, loss_ckpt_tail, loss_plain  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
MiB = 2.0 ** 20

# (label, L, batch, width, timing repeats)
CONFIGS = [
    ("main", 10, 1024, 32, 31),
    ("main", 100, 1024, 32, 15),
    ("main", 1000, 1024, 32, 7),
    ("weights-heavy", 1000, 64, 64, 9),
]
QUICK = [("main", 10, 256, 32, 3), ("main", 100, 256, 32, 3), ("main", 1000, 64, 16, 2)]


# -- setup and checks ------------------------------------------------------------------------


def verify_tracemalloc() -> dict:
    """numpy reports its data buffers to tracemalloc: a known-size array must show up."""
    n = 1_000_000
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        a = np.ones(n)  # 8,000,000 bytes
        cur, peak = tracemalloc.get_traced_memory()
        b = np.tanh(a)  # a second buffer made inside a ufunc
        cur2 = tracemalloc.get_traced_memory()[0]
        del a, b
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    ok = (8 * n <= cur - base < 8 * n + 4096 and 8 * n <= peak - base < 8 * n + 4096
          and 16 * n <= cur2 - base < 16 * n + 8192 and after - base < 4096)
    out = {"array_bytes": 8 * n, "current_delta": cur - base, "peak_delta": peak - base,
           "two_arrays_delta": cur2 - base, "after_free_delta": after - base, "ok": bool(ok)}
    if not ok:
        raise SystemExit(f"tracemalloc does not see numpy's buffers here: {out}")
    return out


def make_inputs(L: int, B: int, D: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    h = rng.standard_normal((B, D))
    # scaled so tanh stays out of saturation through 1000 layers (nonzero gradients)
    Ws = [rng.standard_normal((D, D)) * (1.2 / np.sqrt(D)) for _ in range(L)]
    return h, Ws


def grad_by_hand(h, Ws):
    """The plain loop's gradient written out in numpy (an independent check)."""
    hs = [h]
    for W in Ws:
        hs.append(np.tanh(hs[-1] @ W))
    dh = 2.0 * hs[-1]
    dWs = [None] * len(Ws)
    for i in reversed(range(len(Ws))):
        dz = dh * (1 - hs[i + 1] * hs[i + 1])
        dWs[i] = hs[i].T @ dz
        dh = dz @ Ws[i].T
    return dh, dWs


def rel(a, b) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def schedules(L: int) -> list:
    """[(name, k or None)]: plain, then k = 1, sqrt/4, sqrt/2, sqrt, 2 sqrt, 4 sqrt (<= L)."""
    s = max(1, round(math.sqrt(L)))
    ks = sorted({1, max(1, round(s / 4)), max(1, round(s / 2)), s, min(L, 2 * s),
                 min(L, 4 * s)})
    return [("plain", None)] + [(f"k={k}", k) for k in ks]


# -- measurements ----------------------------------------------------------------------------


def peak_bytes(call) -> tuple:
    """(peak above the start, held after) of one call, by tracemalloc."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = call()
        cur, peak = tracemalloc.get_traced_memory()
        del out
    finally:
        tracemalloc.stop()
    return peak - base, cur - base


def timed(call) -> tuple:
    """(CPU seconds of this process, wall seconds) of one call."""
    c0, t0 = time.process_time(), time.perf_counter()
    call()
    return time.process_time() - c0, time.perf_counter() - t0


def run_config(label, L, B, D, repeat) -> dict:
    h, Ws = make_inputs(L, B, D)
    g_plain = srcad.grad(loss_plain, wrt=(0, 1))
    sched = schedules(L)
    fns = {name: (loss_plain if k is None else loss_ckpt if L % k == 0 else loss_ckpt_tail)
           for name, k in sched}
    grads = {name: (g_plain if k is None else srcad.grad(fns[name], wrt=(0, 1)))
             for name, k in sched}
    calls = {name: ((lambda: g_plain(h, Ws)) if k is None
                    else (lambda g=grads[name], k=k: g(h, Ws, k))) for name, k in sched}

    # correctness: bitwise against the plain loop, which is checked against a hand backward
    ref = calls["plain"]()
    hand = grad_by_hand(h, Ws)
    hand_err = max([rel(ref[0], hand[0])] + [rel(a, b) for a, b in zip(ref[1], hand[1])])
    grad_norm = float(np.sqrt(sum(float(np.sum(d * d)) for d in ref[1])))
    rows = {}
    for name, k in sched:
        out = calls[name]()  # (also the warm-up: the first call compiles)
        same = (np.array_equal(out[0], ref[0]) and len(out[1]) == len(ref[1])
                and all(np.array_equal(a, b) for a, b in zip(out[1], ref[1])))
        rep = srcad.explain(fns[name], h, Ws, *(() if k is None else (k,)), wrt=(0, 1),
                            print_report=False)
        rows[name] = {"k": k, "bitwise_equal": bool(same), "explain_bytes": rep.total_bytes}
    del ref, hand

    # memory: one traced call per schedule (twice; the two must agree)
    for name, _ in sched:
        p1, held1 = peak_bytes(calls[name])
        p2, _ = peak_bytes(calls[name])
        rows[name].update(peak_bytes=p1, peak_bytes_repeat=p2, held_after_bytes=held1)

    # time: interleaved repeats, tracemalloc off, gc off inside the timed calls
    samples = {name: [] for name, _ in sched}
    for _ in range(repeat):
        for name, _ in sched:
            gc.collect()
            gc.disable()
            try:
                samples[name].append(timed(calls[name]))
            finally:
                gc.enable()
    for name, _ in sched:
        cpu, wall = zip(*samples[name])
        rows[name]["time_s"] = float(np.median(cpu))
        rows[name]["wall_median_s"] = float(np.median(wall))
        rows[name]["wall_min_s"] = float(np.min(wall))
        rows[name]["cpu_samples_s"] = list(cpu)
        rows[name]["wall_samples_s"] = list(wall)

    base = rows["plain"]
    for r in rows.values():
        r["peak_ratio_vs_plain"] = base["peak_bytes"] / r["peak_bytes"]
        r["explain_ratio_vs_plain"] = base["explain_bytes"] / max(r["explain_bytes"], 1)
        r["time_ratio_vs_plain"] = r["time_s"] / base["time_s"]
        r["wall_median_ratio_vs_plain"] = r["wall_median_s"] / base["wall_median_s"]
        r["wall_min_ratio_vs_plain"] = r["wall_min_s"] / base["wall_min_s"]
    act = B * D * 8
    return {"label": label, "L": L, "batch": B, "width": D, "repeat": repeat,
            "sqrt_k": max(1, round(math.sqrt(L))), "activation_bytes": act,
            "param_grad_bytes": L * D * D * 8, "input_bytes": act + L * D * D * 8,
            "plain_vs_hand_rel_err": hand_err, "param_grad_norm": grad_norm,
            "schedules": rows}


# -- report ----------------------------------------------------------------------------------


def print_table(res: dict) -> None:
    L, s = res["L"], res["sqrt_k"]
    print(f"\n[{res['label']}] L={L}  batch={res['batch']} width={res['width']}  "
          f"activation={res['activation_bytes'] / 1024:.0f} KiB  "
          f"param grads G={res['param_grad_bytes'] / MiB:.2f} MiB  "
          f"(plain vs hand backward: rel err {res['plain_vs_hand_rel_err']:.1e})")
    print(f"{'schedule':<12}{'peak MiB':>10}{'(repeat)':>10}{'x less':>8}{'explain MiB':>13}"
          f"{'x less':>8}{'cpu ms':>9}{'x time':>8}{'wall med':>10}{'x':>6}{'wall min':>10}"
          f"{'x':>6}  bitwise")
    for name, r in res["schedules"].items():
        tag = name + (" (sqrt)" if r["k"] == s else "")
        print(f"{tag:<12}{r['peak_bytes'] / MiB:>10.2f}{r['peak_bytes_repeat'] / MiB:>10.2f}"
              f"{r['peak_ratio_vs_plain']:>8.2f}{r['explain_bytes'] / MiB:>13.2f}"
              f"{r['explain_ratio_vs_plain']:>8.2f}{r['time_s'] * 1e3:>9.2f}"
              f"{r['time_ratio_vs_plain']:>8.2f}{r['wall_median_s'] * 1e3:>10.2f}"
              f"{r['wall_median_ratio_vs_plain']:>6.2f}{r['wall_min_s'] * 1e3:>10.2f}"
              f"{r['wall_min_ratio_vs_plain']:>6.2f}  {r['bitwise_equal']}")


def plot(results: list, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    main = [r for r in results if r["label"] == "main"]
    extra = [r for r in results if r["label"] != "main"]
    n = len(main) + len(extra)
    cols = 2 if n > 1 else 1
    rows_ = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows_, cols, figsize=(6.0 * cols, 4.6 * rows_), squeeze=False)
    axes = axes.ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    for ax, res in zip(axes, main + extra):
        rows = res["schedules"]
        ck = [(n, r) for n, r in rows.items() if r["k"] is not None]
        t = [r["time_s"] * 1e3 for _, r in ck]
        m = [r["peak_bytes"] / MiB for _, r in ck]
        e = [r["explain_bytes"] / MiB for _, r in ck]
        ax.plot(t, m, "o-", color="C0", label="checkpoint every k (peak, tracemalloc)")
        ax.plot(t, e, "s:", color="C0", alpha=0.45, label="same, srcad.explain total_bytes")
        for (_, r), ti, mi in zip(ck, t, m):
            if res["label"] != "main" and r["k"] not in (1, res["sqrt_k"]):
                continue  # (the weights-heavy points sit on top of each other)
            star = " = sqrt(L)" if r["k"] == res["sqrt_k"] else ""
            ax.annotate(f"k={r['k']}{star}", (ti, mi), textcoords="offset points",
                        xytext=(5, 4), fontsize=8)
        p = rows["plain"]
        ax.plot([p["time_s"] * 1e3], [p["peak_bytes"] / MiB], "*", color="C3", ms=14,
                label="save everything (peak)")
        ax.plot([p["time_s"] * 1e3], [p["explain_bytes"] / MiB], "*", color="C3", ms=9,
                alpha=0.45, label="save everything (explain)")
        ax.axhline(res["param_grad_bytes"] / MiB, color="gray", lw=0.8, ls="--",
                   label="parameter gradients G")
        ax.set_yscale("log")
        ax.set_xlabel("step time, one grad call (CPU ms, median)")
        ax.set_ylabel("memory (MiB, log)")
        ax.set_title(f"L={res['L']}, batch {res['batch']}, width {res['width']}"
                     + ("" if res["label"] == "main" else f"\n({res['label']})"), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7, loc="best")
    fig.suptitle("E4: gradient checkpointing frontier (srcad.checkpoint over k-layer segments)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    check = verify_tracemalloc()
    print(f"tracemalloc check: an {check['array_bytes']:,}-byte np.ones raised the traced "
          f"current/peak by {check['current_delta']:,}/{check['peak_delta']:,} bytes; "
          f"freed -> {check['after_free_delta']:,} left: numpy buffers are traced")
    results = [run_config(*c) for c in (QUICK if args.quick else CONFIGS)]
    for res in results:
        print_table(res)
    ok = all(r["bitwise_equal"] for res in results for r in res["schedules"].values())
    ok = ok and all(res["plain_vs_hand_rel_err"] < 1e-12 for res in results)
    wall = time.perf_counter() - t0
    print(f"\nall schedules bitwise equal to save-everything: {ok}   ({wall:.0f} s)")
    if not args.quick:
        RESULTS.mkdir(exist_ok=True)
        meta = {"numpy": np.__version__, "python": platform.python_version(),
                "machine": platform.machine(), "blas_threads": os.environ["OPENBLAS_NUM_THREADS"],
                "srcad": getattr(srcad, "__version__", "?"), "wall_s": wall,
                "tracemalloc_check": check}
        out = {"meta": meta, "results": results, "all_bitwise_equal": ok}
        (RESULTS / "e4_results.json").write_text(json.dumps(out, indent=1))
        plot(results, RESULTS / "e4_frontier.png")
        print(f"wrote {RESULTS / 'e4_results.json'} and {RESULTS / 'e4_frontier.png'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
