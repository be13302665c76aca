"""E4 — gradient checkpointing: the memory/time frontier of an L-layer MLP.

The model (bench/e4_models.py): h_{i+1} = tanh(h_i @ W_i), i = 0..L-1, written as a `for`
loop over a list of weights, loss = sum(h_L ** 2); the gradient w.r.t. the input h_0 and
every W_i, ``srcad.grad(..., wrt=(0, 1))``. Strategies, all on the same loop:

* ``plain``: save everything;
* ``sqrt``: ``for i in srcad.checkpoint(range(L))``: keep every k-th loop state,
  k = isqrt(L - 1) + 1 (the sqrt(n) schedule); ``iter``: the same written
  ``for W in srcad.checkpoint(Ws)``;
* ``every=k``: ``srcad.checkpoint(range(L), every=k)`` for k around sqrt(L) (and k = 1);
* ``revolve c``: ``srcad.checkpoint(range(L), snapshots=c)``, c = 2, 4, 8, sqrt, 2 sqrt;
* ``segments k``: the older hand-written form (k-layer segment functions, each call
  ``srcad.checkpoint(segment)``-ed) at the sqrt k, to compare with the transform's loops;
* ``budget f``: ``srcad.grad(loss_plain, wrt=(0, 1), memory_budget=f * plain peak)`` for
  f = 10%, 25%, 50%, 75%, and one budget below anything reachable (half the least peak any
  other row reached), which must warn. The first call runs the policy; it is timed apart.

Main sizes: batch 1024 rows, width 32, float64: one activation a = 256 KiB, one weight
8 KiB (activations dominate: the regime checkpointing is for). Side case (weights-heavy):
L = 1000, batch 64, width 64 (activation = weight = 32 KiB).

Prediction: REPORT.md, E4 (the seed's sqrt(n) prediction, and revolve and the budget policy,
all written before measuring).

Measured: peak memory with tracemalloc (numpy reports its data buffers to it; checked at
start up): the peak over one whole grad call minus the traced memory before it (inputs not
counted, returned gradients counted), twice per row (the two must agree). Step time = one
grad call, median of interleaved repeats (tracemalloc off, gc off inside), one BLAS thread,
as this process's CPU time (time.process_time; robust to other jobs on a shared 2-core box;
the wall-clock median is saved too), reported as ratios to the plain loop in the same run.
Predicted time from the schedule: a checkpointed loop re-runs every step once to record it
(as the backward needs it) plus `Schedule.recomputed` plain steps, so
T ~ T_plain + (L + recomputed) / L * F with F the measured numpy forward alone. Every row's
gradients are asserted bitwise equal to the plain loop's (np.array_equal), and the plain
loop's equal to a hand-written numpy backward (to 1e-12). Results: tables on stdout,
bench/results/e4_results.json and the plot bench/results/e4_frontier.png.

    python bench/e4_checkpoint.py [--quick] [--slow] [--plot-only]

--quick: tiny sizes, nothing written. --slow: also the below-feasible budget at L = 1000
(the policy falls back to one kept state: ~500,000 recomputed steps, ~35 s per call and
~5 minutes in all). --plot-only: redraw the PNG from the saved JSON.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import gc
import io
import json
import math
import platform
import sys
import time
import tracemalloc
import warnings
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import e4_models as M

import srcad
from srcad.checkpoint import schedule_for

RESULTS = Path(__file__).resolve().parent / "results"
MiB = 2.0 ** 20

# (label, L, batch, width, timing repeats)
CONFIGS = [
    ("main", 10, 1024, 32, 31),
    ("main", 100, 1024, 32, 15),
    ("main", 1000, 1024, 32, 7),
    ("weights-heavy", 1000, 64, 64, 7),
]
QUICK = [("main", 10, 256, 32, 3), ("main", 100, 256, 32, 3), ("main", 300, 64, 16, 2)]
BUDGET_FRACS = (0.10, 0.25, 0.50, 0.75)
SLOW_INFEASIBLE_L = 100  # above this L the below-feasible budget row runs only with --slow


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


def blas_info() -> dict:
    """Which BLAS numpy runs (threadpoolctl if present, else numpy.show_config)."""
    info = {k: v for k, v in os.environ.items() if k.startswith("OPENBLAS_")}
    try:
        from threadpoolctl import threadpool_info

        info["threadpoolctl"] = threadpool_info()
    except ImportError:
        buf = io.StringIO()
        with redirect_stdout(buf):
            np.show_config()
        lines = buf.getvalue().splitlines()
        keep = [ln.strip() for ln in lines if any(w in ln.lower() for w in
                ("openblas", "mkl", "blis", "accelerate", "version", "config", "name:"))]
        info["show_config"] = keep[:40]
    return info


def srcad_git() -> dict:
    """The commit srcad was imported from, and whether srcad/ differs from it (best effort)."""
    import subprocess

    root = Path(srcad.__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                              text=True, timeout=10, check=False).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "srcad"], cwd=root,
                               capture_output=True, text=True, timeout=10,
                               check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):  # no git here
        return {}
    return {"head": head or None, "srcad_dirty": bool(dirty) if head else None}


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


def same_grads(out, ref) -> bool:
    return bool(np.array_equal(out[0], ref[0]) and len(out[1]) == len(ref[1])
                and all(np.array_equal(a, b) for a, b in zip(out[1], ref[1])))


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


def strategies(label: str, L: int) -> list:
    """[(name, kind, fn, extra args, param)] of the non-budget rows for this config."""
    s = math.isqrt(max(L - 1, 0)) + 1  # srcad.checkpoint(range(L))'s default k
    rows = [("plain", "plain", M.loss_plain, (), None),
            (f"sqrt (k={s})", "sqrt", M.loss_sqrt, (), s)]
    if label != "main":  # the side case: a few rows are enough to see the weights' floor
        return rows + [(f"revolve c={c}", "revolve", M.loss_revolve, (c,), c)
                       for c in sorted({8, min(L, s)})]
    rows.append((f"iter (k={s})", "iter", M.loss_iter, (), s))
    for k in sorted({1, max(1, s // 4), max(1, s // 2), min(L, 2 * s), min(L, 4 * s)} - {s}):
        rows.append((f"every={k}", "every", M.loss_every, (k,), k))
    for c in sorted({min(L, c) for c in (2, 4, 8, s, 2 * s)}):
        rows.append((f"revolve c={c}", "revolve", M.loss_revolve, (c,), c))
    seg = M.loss_ckpt if L % s == 0 else M.loss_ckpt_tail
    rows.append((f"segments k={s}", "segments", seg, (s,), s))
    return rows


def predicted_recomputed(kind: str, L: int, param) -> int | None:
    """Steps the schedule runs plain again in the backward (besides recording every step)."""
    if kind == "plain":
        return 0
    if kind in ("sqrt", "iter", "every", "segments"):
        return schedule_for(L, every=param).recomputed
    if kind in ("revolve", "budget"):
        return schedule_for(L, snapshots=param).recomputed if param else None
    return None


def run_config(label, L, B, D, repeat, slow=False) -> dict:
    t_cfg = time.perf_counter()
    h, Ws = make_inputs(L, B, D)
    rows: dict = {}
    calls: dict = {}
    for name, kind, fn, extra, param in strategies(label, L):
        g = srcad.grad(fn, wrt=(0, 1))
        calls[name] = lambda g=g, extra=extra: g(h, Ws, *extra)
        rows[name] = {"kind": kind, "param": param, "fn": fn.__name__, "extra": list(extra),
                      "_fn": fn, "_extra": extra}

    # correctness: bitwise against the plain loop, which is checked against a hand backward
    ref = calls["plain"]()
    hand = grad_by_hand(h, Ws)
    hand_err = max([rel(ref[0], hand[0])] + [rel(a, b) for a, b in zip(ref[1], hand[1])])
    del hand
    for name, r in rows.items():
        r["bitwise_equal"] = same_grads(calls[name](), ref)  # (also the warm-up: compiles)
        rep = srcad.explain(r["_fn"], h, Ws, *r["_extra"], wrt=(0, 1), print_report=False)
        r["explain_bytes"] = rep.total_bytes

    # memory: one traced call per row, twice (the two must agree)
    def measure(name):
        p1, held = peak_bytes(calls[name])
        p2, _ = peak_bytes(calls[name])
        rows[name].update(peak_bytes=p1, peak_bytes_repeat=p2, held_after_bytes=held)

    for name in list(rows):
        measure(name)
    plain_peak = rows["plain"]["peak_bytes"]
    least = min(r["peak_bytes"] for r in rows.values())

    # the memory_budget policy on the plain loop
    budgets = [(f"budget {round(f * 100)}%", f, int(f * plain_peak)) for f in BUDGET_FRACS]
    if label == "main" and (L <= SLOW_INFEASIBLE_L or slow):
        budgets.append(("budget < feasible", None, int(0.5 * least)))
    for name, frac, budget in budgets:
        g = srcad.grad(M.loss_plain, wrt=(0, 1), memory_budget=budget)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c0, t0 = time.process_time(), time.perf_counter()
            out = g(h, Ws)  # the first call runs the policy
            first_cpu, first_wall = time.process_time() - c0, time.perf_counter() - t0
        msgs = [str(w.message) for w in caught if "memory_budget" in str(w.message)]
        plan = g._last.plan
        cs = sorted({c for _, c in (plan.loop_schedules or {}).values() if c})
        c = cs[0] if len(cs) == 1 else None
        calls[name] = lambda g=g: g(h, Ws)
        rows[name] = {"kind": "budget", "param": c, "budget_bytes": budget,
                      "budget_frac_of_plain": frac, "warned": bool(msgs), "warning": msgs,
                      "plan": plan.describe(), "plan_peak_bytes": plan.peak,
                      "plan_fits": bool(plan.fits), "kept_states": cs,
                      "policy_first_call_cpu_s": first_cpu, "policy_first_call_wall_s": first_wall,
                      "bitwise_equal": same_grads(out, ref)}
        del out
        rows[name]["bitwise_equal"] &= same_grads(calls[name](), ref)
        measure(name)
        r = rows[name]
        r["peak_over_budget"] = r["peak_bytes"] / budget
        r["feasible_by_other_rows"] = bool(budget >= least)
    del ref

    # time: interleaved repeats, tracemalloc off, gc off inside the timed calls; the numpy
    # forward alone (the unit of recomputation) in the same rounds
    calls["numpy forward"] = lambda: M.forward_only(h, Ws)
    pre = {n: predicted_recomputed(r["kind"], L, r["param"]) for n, r in rows.items()}
    reps = {}
    for n in calls:
        rec = pre.get(n) or 0
        reps[n] = repeat if rec <= 3 * L else max(3, repeat // 3)
        if rec > 100 * L:
            reps[n] = 1
    samples: dict = {n: [] for n in calls}
    for i in range(max(reps.values())):
        for n, call in calls.items():
            if i < reps[n]:
                gc.collect()
                gc.disable()
                try:
                    samples[n].append(timed(call))
                finally:
                    gc.enable()
    fwd_cpu = float(np.median([c for c, _ in samples.pop("numpy forward")]))
    for n, r in rows.items():
        cpu, wall = zip(*samples[n])
        r.update(time_s=float(np.median(cpu)), wall_median_s=float(np.median(wall)),
                 cpu_samples_s=list(cpu), wall_samples_s=list(wall), repeats=len(cpu),
                 recomputed_steps=pre[n])
        r.pop("_fn", None)
        r.pop("_extra", None)
    base = rows["plain"]
    for r in rows.values():
        r["peak_ratio_vs_plain"] = base["peak_bytes"] / r["peak_bytes"]
        r["time_ratio_vs_plain"] = r["time_s"] / base["time_s"]
        r["wall_median_ratio_vs_plain"] = r["wall_median_s"] / base["wall_median_s"]
        rec = r["recomputed_steps"]
        if r["kind"] == "plain":
            r["predicted_time_ratio"] = 1.0
        elif rec is not None:  # every step recorded again, plus the plain recomputation
            r["predicted_time_ratio"] = 1.0 + (L + rec) / L * fwd_cpu / base["time_s"]
        if "explain_bytes" in r:
            r["explain_ratio_vs_plain"] = base["explain_bytes"] / max(r["explain_bytes"], 1)
    act = B * D * 8
    return {"label": label, "L": L, "batch": B, "width": D, "repeat": repeat,
            "sqrt_k": math.isqrt(max(L - 1, 0)) + 1, "activation_bytes": act,
            "param_grad_bytes": L * D * D * 8, "input_bytes": act + L * D * D * 8,
            "numpy_forward_s": fwd_cpu, "least_peak_bytes": least,
            "plain_vs_hand_rel_err": hand_err, "config_wall_s": time.perf_counter() - t_cfg,
            "schedules": rows}


# -- report ----------------------------------------------------------------------------------


def print_table(res: dict) -> None:
    L = res["L"]
    base = res["schedules"]["plain"]
    print(f"\n[{res['label']}] L={L}  batch={res['batch']} width={res['width']}  "
          f"activation={res['activation_bytes'] / 1024:.0f} KiB  "
          f"param grads G={res['param_grad_bytes'] / MiB:.2f} MiB  "
          f"numpy forward F={res['numpy_forward_s'] * 1e3:.2f} ms "
          f"({res['numpy_forward_s'] / base['time_s']:.2f} of plain)  "
          f"(plain vs hand backward: rel err {res['plain_vs_hand_rel_err']:.1e})  "
          f"[{res['config_wall_s']:.0f} s]")
    print(f"{'strategy':<19}{'peak MiB':>9}{'(rep)':>8}{'x less':>8}{'expl MiB':>9}"
          f"{'recomp':>8}{'cpu ms':>9}{'x time':>7}{'pred':>6}{'wall x':>7}{'n':>3}  bitwise"
          f"  budget: MiB  peak/budget  warned  plan")
    for name, r in res["schedules"].items():
        ex = f"{r['explain_bytes'] / MiB:>9.2f}" if "explain_bytes" in r else f"{'':>9}"
        rec = "" if r["recomputed_steps"] is None else str(r["recomputed_steps"])
        pred = f"{r['predicted_time_ratio']:>6.2f}" if "predicted_time_ratio" in r else " " * 6
        line = (f"{name:<19}{r['peak_bytes'] / MiB:>9.2f}{r['peak_bytes_repeat'] / MiB:>8.2f}"
                f"{r['peak_ratio_vs_plain']:>8.2f}{ex}{rec:>8}{r['time_s'] * 1e3:>9.2f}"
                f"{r['time_ratio_vs_plain']:>7.2f}{pred}{r['wall_median_ratio_vs_plain']:>7.2f}"
                f"{r['repeats']:>3}  {r['bitwise_equal']!s:<7}")
        if r["kind"] == "budget":
            line += (f"  {r['budget_bytes'] / MiB:>10.2f}  {r['peak_over_budget']:>11.3f}  "
                     f"{r['warned']!s:<6}  {r['plan']} (policy measured "
                     f"{r['plan_peak_bytes'] / MiB:.2f} MiB; first call "
                     f"{r['policy_first_call_wall_s']:.1f} s)")
        print(line)


MARKERS = {"plain": ("*", "C3", 15), "sqrt": ("D", "C0", 9), "iter": ("d", "C0", 6),
           "every": ("o", "C2", 7), "revolve": ("s", "C1", 7), "segments": ("x", "C7", 8),
           "budget": ("^", "C4", 9)}
OFFSETS = {"sqrt": (7, -12), "budget": (7, -12), "revolve": (3, 6), "segments": (6, 5)}
LABELS = {"plain": "save everything", "sqrt": "sqrt(n): checkpoint(range(L))",
          "iter": "sqrt(n): for W in checkpoint(Ws)", "every": "every=k",
          "revolve": "revolve: snapshots=c", "segments": "hand-written segments (old)",
          "budget": "memory_budget= policy"}


def plot(results: list, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.gridspec import GridSpec
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    big = max((r for r in results if r["label"] == "main"), key=lambda r: r["L"])
    small = [r for r in results if r is not big]
    fig = plt.figure(figsize=(15, 9.5))
    gs = GridSpec(max(len(small), 1), 3, figure=fig)
    axes = [fig.add_subplot(gs[:, :2])] + [fig.add_subplot(gs[i, 2]) for i in range(len(small))]
    for ax, res in zip(axes, [big] + small):
        main_panel = res is big
        rows = res["schedules"]
        t0, m0 = rows["plain"]["time_s"], rows["plain"]["peak_bytes"]
        seen = set()
        for kind, (mk, col, ms) in MARKERS.items():
            pts = [(n, r) for n, r in rows.items() if r["kind"] == kind]
            if not pts:
                continue
            for n, r in pts:
                x, y = r["time_s"] / t0, r["peak_bytes"] / MiB
                infeasible = kind == "budget" and r["warned"]
                ax.plot([x], [y], mk, color="red" if infeasible else col,
                        ms=ms if main_panel else ms * 0.7, mfc="none" if kind == "iter" else None,
                        label=None if kind in seen else LABELS[kind], ls="none")
                seen.add(kind)
                if kind == "budget":
                    ax.plot([x, x], [r["budget_bytes"] / MiB, y], "-", color=col, lw=0.8,
                            alpha=0.6)
                    ax.plot([x], [r["budget_bytes"] / MiB], "_", color=col, ms=10)
                if (main_panel and kind != "iter") or kind in ("plain", "sqrt"):
                    txt = n.replace("revolve ", "").replace("budget ", "B=")
                    if kind == "budget" and r["warned"]:
                        txt += " (warned)"
                    ax.annotate(txt, (x, y), textcoords="offset points",
                                xytext=OFFSETS.get(kind, (5, 3)) if main_panel else (5, 3),
                                fontsize=8 if main_panel else 6)
        ax.axhline(res["param_grad_bytes"] / MiB, color="gray", lw=0.8, ls="--",
                   label="parameter gradients G")
        ax.axhline(2 * res["param_grad_bytes"] / MiB, color="gray", lw=0.8, ls=":",
                   label="2G (returned copies)")
        ax.set_yscale("log")
        ax.set_xscale("log")
        xs = [r["time_s"] / t0 for r in rows.values()]
        ticks = (1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500) if main_panel else \
            (1, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500)
        ax.set_xticks([v for v in ticks
                       if min(xs) / 1.3 <= v <= max(xs) * 1.3])
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(ScalarFormatter() if main_panel else NullFormatter())
        ax.set_xlabel("step time / save-everything's (CPU, median; log)", fontsize=9)
        ax.set_ylabel("peak backward memory, MiB (tracemalloc; log)" if main_panel
                      else "peak MiB (log)", fontsize=9)
        ax.set_title(f"L={res['L']}, batch {res['batch']}, width {res['width']}"
                     + ("" if res["label"] == "main" else f" ({res['label']})")
                     + f" — plain {m0 / MiB:.0f} MiB, {t0 * 1e3:.0f} ms",
                     fontsize=11 if main_panel else 8)
        ax.grid(True, which="both", alpha=0.3)
        ax.tick_params(labelsize=8)
    axes[0].legend(fontsize=8, loc="upper right")
    fig.suptitle("E4: gradient checkpointing frontier in srcad (budget rows: tick = budget, "
                 "red = warned infeasible)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    ap.add_argument("--plot-only", action="store_true",
                    help="redraw the plot from bench/results/e4_results.json")
    ap.add_argument("--slow", action="store_true",
                    help="also the below-feasible budget at L = 1000 (minutes)")
    args = ap.parse_args(argv)
    if args.plot_only:
        results = json.loads((RESULTS / "e4_results.json").read_text())["results"]
        plot(results, RESULTS / "e4_frontier.png")
        print(f"wrote {RESULTS / 'e4_frontier.png'}")
        return 0
    t0 = time.perf_counter()
    check = verify_tracemalloc()
    print(f"tracemalloc check: an {check['array_bytes']:,}-byte np.ones raised the traced "
          f"current/peak by {check['current_delta']:,}/{check['peak_delta']:,} bytes; "
          f"freed -> {check['after_free_delta']:,} left: numpy buffers are traced")
    results = []
    for cfg in (QUICK if args.quick else CONFIGS):
        res = run_config(*cfg, slow=args.slow)
        print_table(res)
        results.append(res)
    rows = [r for res in results for r in res["schedules"].values()]
    bitwise = all(r["bitwise_equal"] for r in rows)
    hand = all(res["plain_vs_hand_rel_err"] < 1e-12 for res in results)
    repeat_ok = all(abs(r["peak_bytes"] - r["peak_bytes_repeat"]) <= 0.01 * r["peak_bytes"]
                    for r in rows)
    within = [r["peak_over_budget"] for r in rows if r["kind"] == "budget" and not r["warned"]]
    budget_ok = all(x <= 1.10 for x in within)
    infeasible_warned = all(r["warned"] for r in rows
                            if r["kind"] == "budget" and r["budget_frac_of_plain"] is None)
    feasible_not_warned = all(not r["warned"] for r in rows
                              if r["kind"] == "budget" and r["feasible_by_other_rows"])
    wall = time.perf_counter() - t0
    print(f"\nall rows bitwise equal to save-everything: {bitwise}; plain = hand backward: "
          f"{hand}; traced peaks repeat (1%): {repeat_ok}")
    print(f"budget rows without a warning: peak/budget max "
          f"{max(within) if within else float('nan'):.3f} (<= 1.10: {budget_ok}); "
          f"below-feasible budgets warned: {infeasible_warned}; budgets some other row meets "
          f"did not warn: {feasible_not_warned}   ({wall:.0f} s)")
    for res in results:
        if res["L"] == 1000 and res["label"] == "main":
            r = next(r for r in res["schedules"].values() if r["kind"] == "sqrt")
            print(f"L=1000 sqrt(n): {r['peak_ratio_vs_plain']:.1f}x less memory for "
                  f"{r['time_ratio_vs_plain']:.2f}x step time (bar: >= 10x for <= 1.5x: "
                  f"{r['peak_ratio_vs_plain'] >= 10 and r['time_ratio_vs_plain'] <= 1.5})")
    if not args.quick:
        RESULTS.mkdir(exist_ok=True)
        meta = {"srcad_path": str(Path(srcad.__file__).parent), "srcad_git": srcad_git(),
                "numpy": np.__version__, "python": platform.python_version(),
                "machine": platform.machine(), "processor": platform.processor(),
                "cpus": os.cpu_count(), "blas_threads": os.environ["OPENBLAS_NUM_THREADS"],
                "blas": blas_info(), "srcad": getattr(srcad, "__version__", "?"),
                "argv": sys.argv[1:], "wall_s": wall, "tracemalloc_check": check,
                "budget_fracs": BUDGET_FRACS}
        out = {"meta": meta, "results": results, "all_bitwise_equal": bitwise,
               "budget_within_10pct": budget_ok, "infeasible_warned": infeasible_warned}
        (RESULTS / "e4_results.json").write_text(json.dumps(out, indent=1))
        plot(results, RESULTS / "e4_frontier.png")
        print(f"wrote {RESULTS / 'e4_results.json'} and {RESULTS / 'e4_frontier.png'}")
    assert bitwise, "a schedule's gradients differ from save-everything's"
    assert hand, "the plain loop's gradient differs from the hand-written backward"
    return 0 if (budget_ok and infeasible_warned) else 1


if __name__ == "__main__":
    raise SystemExit(main())
