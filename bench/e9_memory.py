"""E9: memory planning -- the backward's peak with and without it, against a careful
hand-written numpy backward; step time and minor page faults per call.

Models (float64 unless said):
  mlp6        6-layer tanh MLP, batch 512, width 512 (bench/e9_models.py)
  gelu_block  GELU MLP block, 2048 x 256 -> 1024 -> 256 (bench/e9_models.py)
  transformer srcad/zoo/transformer.py block_loss, B=8 T=64 C=128, 4 heads
  gpt         srcad/zoo/gpt.py loss, vocab 64, C=64, 4 heads, 2 layers, B=8 T=32

For each: `srcad.grad` with ``memory_plan=True`` (the default: in place where an owned buffer
dies, cheap elementwise values recomputed instead of kept, fresh values made no earlier than
needed) and ``memory_plan=False``; peak = tracemalloc's peak above the start of one call
(srcad.checkpoint.measure_peak), which sees numpy's data buffers exactly. Gradients are
asserted bit for bit equal between the two. Step time: median of `repeat` calls; minor page
faults: resource.getrusage(RUSAGE_SELF).ru_minflt per call, averaged.

The prediction (made before measuring, by counting live buffers; see /work/notes/e9_report.md):
  mlp6: every activation, weight and gradient is a 512 x 512 float64 buffer (2 MiB). Planned:
    at layer k's backward, the k-1 activations still needed, the cotangent computed in place
    in dh's buffer, the next cotangent (a matmul), dW_k and the 6-k gradients already made:
    8 buffers = 16 MiB at every layer. Unplanned: `dh * (1 - h * h)` allocates h*h and 1-(.)
    beside dh and h, and dh_add is fresh: 9-10 buffers = 18-20 MiB.
  gelu_block: a 2048 x 1024 buffer is 16 MiB. Unplanned keeps six of them from the forward
    (a, 0.5a, 0.044715a, 0.044715a^2, tanh, 1+tanh) and peaks with g and dg beside them:
    8 x 16 = 128 MiB. Planned keeps a and tanh; the backward recomputes 0.5a, 1+tanh and g
    (g dies after dW2) and then holds a, tanh, 0.5a, 1+tanh and dg: 5 x 16 = 80 MiB (plus the
    2 MiB of 2048 x 256 values), the hand-written one's count.

    python bench/e9_memory.py            # the table; --quick: smaller sizes
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import e9_models as M  # noqa: E402

import srcad  # noqa: E402
from srcad.checkpoint import measure_peak  # noqa: E402
from srcad.zoo import gpt, transformer  # noqa: E402

MiB = 2.0 ** 20


def mlp6(rng, n=512, w=512):
    args = [rng.standard_normal((n, w))]
    for _ in range(6):
        args += [rng.standard_normal((w, w)) / np.sqrt(w), rng.standard_normal(w) * 0.1]
    return M.mlp6_loss, tuple(range(1, 13)), tuple(args), \
        lambda *a: M.mlp6_grad_by_hand(*a)


def gelu_block(rng, n=2048, d=256, h=1024):
    args = (rng.standard_normal((n, d)), rng.standard_normal((d, h)) / np.sqrt(d),
            rng.standard_normal(h) * 0.1, rng.standard_normal((h, d)) / np.sqrt(h),
            rng.standard_normal(d) * 0.1, rng.standard_normal((n, d)))
    return M.gelu_block_loss, (0, 1, 2, 3, 4), args, M.gelu_block_grad_by_hand


def transformer_block(rng, B=8, T=64, C=128, H=4):
    p = transformer.randomize(rng, transformer.init(rng, C, H))
    args = (p, rng.standard_normal((B, T, C)), H, rng.standard_normal((B, T, C)))
    return transformer.block_loss, (0, 1), args, None


def tiny_gpt(rng, vocab=64, C=64, H=4, L=2, B=8, T=32):
    params = gpt.init(rng, vocab, C, H, L, T)
    tokens = rng.integers(0, vocab, size=(B, T))
    return gpt.loss, 0, (params, tokens, np.roll(tokens, -1, axis=1), H), None


MODELS = {"mlp6": mlp6, "gelu_block": gelu_block, "transformer": transformer_block,
          "gpt": tiny_gpt}


def _leaves(t):
    if isinstance(t, dict):
        return [x for v in t.values() for x in _leaves(v)]
    if isinstance(t, (list, tuple)):
        return [x for v in t for x in _leaves(v)]
    return [t]


def measure(fns: dict, args, repeat) -> dict:
    """Per variant: its peak (min of 3), then step time and minor faults per call, the
    variants interleaved round by round (rotating order), so that the load other sessions
    put on the machine falls on all of them alike."""
    out = {}
    for name, fn in fns.items():
        fn(*args)  # warm (and compile)
        out[name] = {"peak_mib": min(measure_peak(lambda: fn(*args)) for _ in range(3)) / MiB,
                     "times": [], "faults": []}
    names = list(fns)
    for r in range(repeat):
        for name in names[r % len(names):] + names[:r % len(names)]:
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t0 = time.perf_counter()
            fns[name](*args)
            out[name]["times"].append(time.perf_counter() - t0)
            out[name]["faults"].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    return {name: {"peak_mib": m["peak_mib"], "ms": 1e3 * statistics.median(m["times"]),
                   "faults": statistics.mean(m["faults"])} for name, m in out.items()}


def run(name, repeat, quick=False):
    rng = np.random.default_rng(0)
    make = MODELS[name]
    kw = {"mlp6": dict(n=128, w=128), "gelu_block": dict(n=256, d=64, h=256),
          "transformer": dict(B=2, T=16, C=32), "gpt": dict(B=2, T=8)}[name] if quick else {}
    fn, wrt, args, hand = make(rng, **kw)
    on = srcad.grad(fn, wrt=wrt)
    off = srcad.grad(fn, wrt=wrt, memory_plan=False)
    g_on, g_off = _leaves(on(*args)), _leaves(off(*args))
    assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(g_on, g_off)), name
    fns = {"planned": on, "unplanned": off}
    if hand is not None:
        g_hand = _leaves(hand(*args))
        rel = max(float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))
                  for a, b in zip(g_on, g_hand))
        assert rel < 1e-10, (name, rel)
        fns["hand"] = hand
    row = {"model": name, **measure(fns, args, repeat)}
    row["saved"] = saved_arrays(fn, wrt, args)
    return row


def saved_arrays(fn, wrt, args):
    """How many arrays the split forward hands its backward (arguments excluded), with and
    without the plan: srcad.explain's count."""
    out = {}
    for plan in (True, False):
        rep = srcad.explain(fn, *args, wrt=wrt, memory_plan=plan, print_report=False) \
            if _explain_takes_options() else None
        out["planned" if plan else "unplanned"] = None if rep is None else sum(
            1 for i in rep.items if i.kind != "argument" and i.status == "saved")
    return out


def _explain_takes_options():
    import inspect
    params = inspect.signature(srcad.explain).parameters
    return any(p.kind == p.VAR_KEYWORD for p in params.values())


def table(rows) -> str:
    head = ("| model | peak planned (MiB) | peak unplanned (MiB) | hand-written (MiB) | "
            "planned / hand | planned / unplanned | step ms planned / unplanned / hand | "
            "minor faults per call planned / unplanned / hand |")
    lines = [head, "|" + "---|" * 8]
    for r in rows:
        p, u, h = r["planned"], r["unplanned"], r.get("hand")
        hand_peak = f"{h['peak_mib']:.1f}" if h else "-"
        vs_hand = f"{p['peak_mib'] / h['peak_mib']:.2f}x" if h else "-"
        ms = f"{p['ms']:.1f} / {u['ms']:.1f}" + (f" / {h['ms']:.1f}" if h else "")
        faults = f"{p['faults']:.0f} / {u['faults']:.0f}" + (f" / {h['faults']:.0f}" if h else "")
        lines.append(f"| {r['model']} | {p['peak_mib']:.1f} | {u['peak_mib']:.1f} | "
                     f"{hand_peak} | {vs_hand} | {p['peak_mib'] / u['peak_mib']:.2f}x | "
                     f"{ms} | {faults} |")
    return "\n".join(lines)


def main(argv):
    quick = "--quick" in argv
    names = [a for a in argv if a in MODELS] or list(MODELS)
    repeat = 3 if quick else 20
    rows = [run(n, repeat, quick) for n in names]
    print(table(rows))
    for r in rows:
        print(f"{r['model']}: arrays the backward keeps (explain): {r['saved']}")
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    if not quick:
        (out / "e9_results.json").write_text(json.dumps(rows, indent=1))
        plot(rows, out / "e9_memory.png")
    return rows


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib missing: no plot)")
        return
    names = [r["model"] for r in rows]
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(x - 0.27, [r["unplanned"]["peak_mib"] for r in rows], 0.27, label="unplanned")
    ax.bar(x, [r["planned"]["peak_mib"] for r in rows], 0.27, label="planned")
    ax.bar(x + 0.27, [r["hand"]["peak_mib"] if "hand" in r else 0 for r in rows], 0.27,
           label="hand-written numpy")
    ax.set_xticks(x, names)
    ax.set_ylabel("backward peak (MiB, tracemalloc)")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title("E9: peak memory of one gradient call")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
