"""E2 — forward vs reverse mode: the cost of a full Jacobian, and where the two cross.

The map: f: R^n -> R^m, a 3-layer tanh MLP with hidden width 64,

    y = tanh(tanh(x @ W1 + b1) @ W2 + b2) @ W3 + b3,    W1: (n, 64), W2: (64, 64), W3: (64, m)

with the weights fixed (closure constants, so neither transform differentiates them) and x a
vector of length n. The full m x n Jacobian is built two ways:

* forward: n calls of ``srcad.jvp(f, (x,), (e_k,))``, one column each;
* reverse: one ``srcad.vjp(f, x)``, then its pullback called m times on unit cotangents,
  one row each (the saved values are reused by every call).

Prediction (written before any measurement was taken)
------------------------------------------------------
With T = T_primal, one forward-mode call costing c_F * T, the ``vjp`` forward sweep c_V * T,
and one pullback c_R * T:

    cost_forward(n, m) ~ n * c_F * T
    cost_reverse(n, m) ~ c_V * T + m * c_R * T

so forward mode is cheaper when n * c_F < c_V + m * c_R, i.e. (for m >> 1) when
**n / m < c_R / c_F**: the crossover is at n/m = c_R/c_F, not at n = m.

A priori constants. At these sizes (the largest product is a 256 x 64 matrix-vector product,
~33 kFLOP, a few microseconds) the cost is mostly numpy dispatch, ~1-2 us a call, so count
calls. The primal is 8 (3 matmuls, 3 adds, 2 tanh). A JVP reruns the primal and adds the
tangent chain: 3 matrix-vector products and 3 ops per tanh (``t * (1 - h * h)``), ~17 calls,
c_F ~ 2.1. A pullback only runs the backward: 3 products with W^T and 3 ops per tanh, ~9
calls, c_R ~ 1.1; the vjp forward sweep is the primal plus bookkeeping, c_V ~ 1-1.5. Hence a
predicted crossover at n/m ~ 1.1 / 2.1 ~ 0.5: forward mode wins only where the Jacobian is
at least twice as tall as it is wide (n <= 64 at m = 256; never for m = 1 except a near tie at
n = 1), and at n = m reverse mode wins by about c_F / c_R ~ 2x. The per-call Python wrapper
(srcad.jvp binds arguments, keys its cache and checks tangent shapes on every call; a
pullback checks the cotangent and makes fresh stacks) is expected to add a few microseconds
to each call, the same order as the ~10 us primal, which raises both c_F and c_R measured
from one call. The script measures c_F, c_V and c_R from single calls at each grid point and
prints the model's predicted times next to the measured ones.

Measured: medians of interleaved repeats (forward and reverse alternate), one thread of
BLAS. Both Jacobians are checked against each other and against ``torch.func.jacrev`` once
(torch is optional here; it is only an oracle). Results: a table on stdout,
``bench/results/e2_results.json`` and the plot ``bench/results/e2_crossover.png``.

    python bench/e2_forward_vs_reverse.py [--repeat 7] [--quick]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import gc
import itertools
import json
import platform
import time
from pathlib import Path

import numpy as np

import srcad
from srcad.testing import rel_error

HIDDEN = 64
GRID = (1, 4, 16, 64, 256)
SWEEP_M = 64  # the fine sweep over n at fixed m, to locate the crossover
SWEEP_N = (8, 12, 16, 24, 32, 40, 48, 64, 96, 128)
RESULTS = Path(__file__).resolve().parent / "results"
A_PRIORI = (1.1, 2.1)  # (c_R, c_F) predicted by counting numpy calls (see the docstring)


# -- the map ---------------------------------------------------------------------------------


def make_mlp(n: int, m: int, seed: int = 0):
    """f: R^n -> R^m with fixed weights, and the weights (for the torch check)."""
    rng = np.random.default_rng(seed)
    W1 = rng.standard_normal((n, HIDDEN)) / np.sqrt(n)
    b1 = rng.standard_normal(HIDDEN) * 0.1
    W2 = rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)
    b2 = rng.standard_normal(HIDDEN) * 0.1
    W3 = rng.standard_normal((HIDDEN, m)) / np.sqrt(HIDDEN)
    b3 = rng.standard_normal(m) * 0.1

    def mlp(x):
        h1 = np.tanh(x @ W1 + b1)
        h2 = np.tanh(h1 @ W2 + b2)
        return h2 @ W3 + b3

    return mlp, (W1, b1, W2, b2, W3, b3)


# -- the two Jacobians -----------------------------------------------------------------------


def jacobian_forward(f, x, eye_n):
    """n JVPs with unit tangents: column k is J e_k."""
    cols = [srcad.jvp(f, (x,), (eye_n[k],))[1] for k in range(x.shape[0])]
    return np.stack(cols, axis=1)


def jacobian_reverse(f, x, eye_m):
    """One vjp, then m pullbacks with unit cotangents: row i is e_i^T J."""
    _, pullback = srcad.vjp(f, x)
    rows = [pullback(eye_m[i])[0] for i in range(eye_m.shape[0])]
    return np.stack(rows, axis=0)


# -- timing ----------------------------------------------------------------------------------


def _per_call(fn, inner: int) -> float:
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner


def _inner_for(fn, budget: float = 2e-3) -> int:
    """Enough calls that one timed batch takes ~budget seconds."""
    t = _per_call(fn, 1)
    return max(1, min(2000, int(budget / max(t, 1e-7))))


def interleaved(fns: dict, repeat: int) -> dict:
    """Median seconds per call of each function, timed in alternation."""
    inner = {k: _inner_for(f) for k, f in fns.items()}
    samples = {k: [] for k in fns}
    gc.disable()
    try:
        for _ in range(repeat):
            for k, f in fns.items():
                samples[k].append(_per_call(f, inner[k]))
    finally:
        gc.enable()
    return {k: float(np.median(v)) for k, v in samples.items()}


def measure(n: int, m: int, repeat: int) -> dict:
    f, _ = make_mlp(n, m)
    x = np.random.default_rng(1).standard_normal(n)
    eye_n, eye_m = np.eye(n), np.eye(m)
    _, pullback = srcad.vjp(f, x)  # compile both transforms before timing
    srcad.jvp(f, (x,), (eye_n[0],))
    single = interleaved({
        "primal": lambda: f(x),
        "jvp": lambda: srcad.jvp(f, (x,), (eye_n[0],)),
        "vjp": lambda: srcad.vjp(f, x),
        "pullback": lambda: pullback(eye_m[0]),
    }, repeat)
    full = interleaved({
        "forward": lambda: jacobian_forward(f, x, eye_n),
        "reverse": lambda: jacobian_reverse(f, x, eye_m),
    }, repeat)
    T = single["primal"]
    row = {
        "n": n, "m": m,
        "T_primal_us": T * 1e6,
        "c_F": single["jvp"] / T, "c_V": single["vjp"] / T, "c_R": single["pullback"] / T,
        "forward_us": full["forward"] * 1e6, "reverse_us": full["reverse"] * 1e6,
        "pred_forward_us": n * single["jvp"] * 1e6,
        "pred_reverse_us": (single["vjp"] + m * single["pullback"]) * 1e6,
    }
    row["ratio"] = row["forward_us"] / row["reverse_us"]
    row["pred_ratio"] = row["pred_forward_us"] / row["pred_reverse_us"]
    return row


# -- where the constants come from -----------------------------------------------------------


def decomposition(n: int, m: int, repeat: int) -> dict:
    """One call of each piece at (n, m), in microseconds: srcad's public calls, the generated
    functions alone (no wrapper), hand-written numpy JVP and pullback of the same math, and
    the runtime helper the generated pullback calls for ``vector @ matrix``."""
    from srcad import runtime

    f, (W1, b1, W2, b2, W3, b3) = make_mlp(n, m)
    x = np.random.default_rng(1).standard_normal(n)
    t, g = np.eye(n)[0], np.eye(m)[0]
    _, pullback = srcad.vjp(f, x)
    srcad.jvp(f, (x,), (t,))
    fns = {
        "primal": lambda: f(x),
        "srcad.jvp": lambda: srcad.jvp(f, (x,), (t,)),
        "srcad.vjp": lambda: srcad.vjp(f, x),
        "pullback": lambda: pullback(g),
    }
    try:  # srcad internals: the generated functions without the public wrappers
        jvp_main = srcad.api._JVP_CACHE[(f, ())]._last.functions["main"]
        bwd, fwd, saved = pullback._c.functions["bwd"], pullback._c.functions["fwd"], \
            pullback._saved
        fns["generated jvp"] = lambda: jvp_main(x, t)
        fns["generated vjp fwd"] = lambda: fwd(x)
        fns["generated bwd"] = lambda: bwd(runtime.fresh_stacks(saved), g)
    except (AttributeError, KeyError):
        pass
    h1 = np.tanh(x @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)

    def hand_jvp():
        a1 = np.tanh(x @ W1 + b1)
        t1 = (t @ W1) * (1 - a1 * a1)
        a2 = np.tanh(a1 @ W2 + b2)
        t2 = (t1 @ W2) * (1 - a2 * a2)
        return a2 @ W3 + b3, t2 @ W3

    def hand_pullback():
        d2 = (g @ W3.T) * (1 - h2 * h2)
        d1 = (d2 @ W2.T) * (1 - h1 * h1)
        return d1 @ W1.T

    fns["hand-written jvp"] = hand_jvp
    fns["hand-written pullback"] = hand_pullback
    fns["runtime.matmul_grad_a(g, h2, W3)"] = lambda: runtime.matmul_grad_a(g, h2, W3)
    fns["g @ W3.T"] = lambda: g @ W3.T
    return {k: v * 1e6 for k, v in interleaved(fns, repeat).items()}


# -- checks ----------------------------------------------------------------------------------


def verify(n: int, m: int) -> dict:
    f, weights = make_mlp(n, m)
    x = np.random.default_rng(1).standard_normal(n)
    jf = jacobian_forward(f, x, np.eye(n))
    jr = jacobian_reverse(f, x, np.eye(m))
    assert jf.shape == jr.shape == (m, n)
    out = {"n": n, "m": m, "forward_vs_reverse": rel_error(jf, jr)}
    try:
        import torch
        from torch.func import jacrev
    except ImportError:
        out["vs_torch_jacrev"] = None
        return out
    W1, b1, W2, b2, W3, b3 = (torch.tensor(w) for w in weights)

    def t_mlp(x):
        h1 = torch.tanh(x @ W1 + b1)
        h2 = torch.tanh(h1 @ W2 + b2)
        return h2 @ W3 + b3

    jt = jacrev(t_mlp)(torch.tensor(x)).numpy()
    out["vs_torch_jacrev"] = max(rel_error(jf, jt), rel_error(jr, jt))
    return out


# -- crossover and report --------------------------------------------------------------------


def crossover_n(rows: list, key: str = "ratio"):
    """The n where forward/reverse = 1 at fixed m, interpolated in log-log; None if the
    ratio never crosses 1 within the measured n."""
    pts = sorted((r["n"], r[key]) for r in rows)
    for (n0, r0), (n1, r1) in itertools.pairwise(pts):
        if (r0 - 1) * (r1 - 1) <= 0 and r0 != r1:
            t = (np.log(1) - np.log(r0)) / (np.log(r1) - np.log(r0))
            return float(np.exp(np.log(n0) + t * (np.log(n1) - np.log(n0))))
    return None


def print_table(rows: list) -> None:
    head = (f"{'n':>5} {'m':>5} {'T_primal':>9} {'c_F':>5} {'c_V':>5} {'c_R':>5} "
            f"{'forward':>10} {'reverse':>10} {'F/R':>7} {'pred F/R':>9}  faster")
    print(head)
    print("-" * len(head))
    for r in rows:
        win = "forward" if r["ratio"] < 1 else "reverse"
        print(f"{r['n']:>5} {r['m']:>5} {r['T_primal_us']:>7.1f}us {r['c_F']:>5.2f} "
              f"{r['c_V']:>5.2f} {r['c_R']:>5.2f} {r['forward_us']:>8.0f}us "
              f"{r['reverse_us']:>8.0f}us {r['ratio']:>7.3f} {r['pred_ratio']:>9.3f}  {win}")


def plot(grid_rows: list, sweep_rows: list, c_ratio: float, path: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib not installed: no plot (pip install matplotlib)"
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(GRID)))
    for m, c in zip(GRID, colors):
        rs = sorted((r for r in grid_rows if r["m"] == m), key=lambda r: r["n"])
        q = [r["n"] / r["m"] for r in rs]
        ax1.plot(q, [r["ratio"] for r in rs], "o-", color=c, label=f"m = {m} measured")
        ax1.plot(q, [r["pred_ratio"] for r in rs], "x:", color=c, alpha=0.7)
    ax1.axhline(1.0, color="k", lw=0.8)
    ax1.axvline(A_PRIORI[0] / A_PRIORI[1], color="grey", ls=":", lw=1.2,
                label=f"a priori n/m = {A_PRIORI[0]}/{A_PRIORI[1]} = "
                      f"{A_PRIORI[0] / A_PRIORI[1]:.2f} (op count)")
    ax1.axvline(c_ratio, color="r", ls="--", lw=1,
                label=f"model n/m = c_R/c_F = {c_ratio:.2f} (measured constants)")
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("n / m  (inputs / outputs)")
    ax1.set_ylabel("time(forward Jacobian) / time(reverse Jacobian)")
    ax1.set_title("E2: forward/reverse cost ratio (x: model from one call each)")
    ax1.legend(fontsize=7)
    rs = sorted(sweep_rows, key=lambda r: r["n"])
    ns = [r["n"] for r in rs]
    ax2.plot(ns, [r["forward_us"] / 1e3 for r in rs], "o-", label="forward: n JVPs")
    ax2.plot(ns, [r["reverse_us"] / 1e3 for r in rs], "s-", label="reverse: vjp + m pullbacks")
    ax2.plot(ns, [r["pred_forward_us"] / 1e3 for r in rs], ":", color="C0", label="n c_F T")
    ax2.plot(ns, [r["pred_reverse_us"] / 1e3 for r in rs], ":", color="C1",
             label="(c_V + m c_R) T")
    cross = crossover_n(rs)
    if cross:
        ax2.axvline(cross, color="k", ls="--", lw=0.8, label=f"measured crossover n = {cross:.0f}")
    ax2.set_xlabel(f"n (m = {SWEEP_M} fixed)")
    ax2.set_ylabel("time for the full Jacobian (ms)")
    ax2.set_title(f"Fine sweep at m = {SWEEP_M}")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return str(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--quick", action="store_true",
                    help="grid {1, 16, 256}, 3 repeats; writes e2_*_quick.* files")
    args = ap.parse_args()
    grid = (1, 16, 256) if args.quick else GRID
    repeat = 3 if args.quick else args.repeat
    t_start = time.perf_counter()
    print(f"E2 forward vs reverse: 3-layer tanh MLP R^n -> R^m, hidden {HIDDEN}; "
          f"numpy {np.__version__}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")

    checks = [verify(16, 4), verify(64, 256), verify(256, 16)]
    for c in checks:
        print(f"check n={c['n']:>3} m={c['m']:>3}: forward vs reverse Jacobian rel error "
              f"{c['forward_vs_reverse']:.1e}; vs torch.func.jacrev "
              + ("n/a" if c["vs_torch_jacrev"] is None else f"{c['vs_torch_jacrev']:.1e}"))
        assert c["forward_vs_reverse"] < 1e-12
        assert c["vs_torch_jacrev"] is None or c["vs_torch_jacrev"] < 1e-12

    grid_rows = [measure(n, m, repeat) for m in grid for n in grid]
    print("\nfull grid (times are per full m x n Jacobian; c_* = one call / one primal):")
    print_table(grid_rows)
    sweep_rows = [measure(n, SWEEP_M, repeat) for n in SWEEP_N]
    print(f"\nfine sweep at m = {SWEEP_M}:")
    print_table(sweep_rows)

    big = [r for r in grid_rows if r["n"] >= 64 and r["m"] >= 64]
    c_F = float(np.median([r["c_F"] for r in big]))
    c_R = float(np.median([r["c_R"] for r in big]))
    c_V = float(np.median([r["c_V"] for r in big]))
    print(f"\nmedian constants over n, m >= 64: c_F = {c_F:.2f}, c_V = {c_V:.2f}, "
          f"c_R = {c_R:.2f}  ->  predicted crossover n/m = c_R/c_F = {c_R / c_F:.2f}")
    cross = {}
    for m in grid:
        rows_m = [r for r in grid_rows if r["m"] == m]
        cross[m] = (crossover_n(rows_m), crossover_n(rows_m, "pred_ratio"))
        meas, pred = cross[m]
        print(f"m = {m:>3}: crossover n measured "
              + (f"{meas:6.1f} (n/m = {meas / m:.2f})" if meas else "  none in grid")
              + ", model " + (f"{pred:6.1f} (n/m = {pred / m:.2f})" if pred else "none in grid"))
    sweep_cross = crossover_n(sweep_rows)
    sweep_pred = crossover_n(sweep_rows, "pred_ratio")
    print(f"fine sweep m = {SWEEP_M}: crossover n measured "
          + (f"{sweep_cross:.1f} (n/m = {sweep_cross / SWEEP_M:.2f})" if sweep_cross else "none")
          + ", model " + (f"{sweep_pred:.1f} (n/m = {sweep_pred / SWEEP_M:.2f})"
                          if sweep_pred else "none"))

    dec = decomposition(64, 64, repeat)
    T = dec["primal"]
    print("\nwhere the constants come from (n = m = 64; us per call, and / T_primal):")
    for k, v in dec.items():
        print(f"  {k:<34} {v:7.2f} us  {v / T:5.2f}")
    if "hand-written jvp" in dec:
        hc = dec["hand-written pullback"] / dec["hand-written jvp"]
        print(f"  hand-written constants: c_F = {dec['hand-written jvp'] / T:.2f}, "
              f"c_R = {dec['hand-written pullback'] / T:.2f} -> crossover n/m = {hc:.2f}")

    tag = "_quick" if args.quick else ""  # a quick run does not overwrite the report's files
    where = plot(grid_rows, sweep_rows, c_R / c_F, RESULTS / f"e2_crossover{tag}.png")
    print(f"plot: {where}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"e2_results{tag}.json").write_text(json.dumps({
        "grid": grid_rows, "sweep": sweep_rows, "checks": checks,
        "constants": {"c_F": c_F, "c_V": c_V, "c_R": c_R},
        "crossover": {str(m): v for m, v in cross.items()},
        "sweep_crossover": [sweep_cross, sweep_pred],
        "decomposition_us_n64_m64": dec,
    }, indent=1))
    print(f"total {time.perf_counter() - t_start:.1f} s")


if __name__ == "__main__":
    main()
