"""Per-call overhead of a warm `srcad.grad` call, one srcad tree against another.

Each tree (a checkout of srcad at some commit) is imported in a worker subprocess of its
own; the driver asks the workers in turn, round after round (the order alternating), to
time `inner` warm calls of each case, and reports each tree's median and 10th percentile
time per call, the median of the rounds' paired ratios and the ratio of 10th percentiles.
Each worker also counts the function calls (Python and C) one warm call makes: a figure no
load can move, and the same count means the same path. Interleaving in one run keeps the
trees under the same load and clock, so drift on a busy machine falls on all alike. The
workers first check that their trees give the same gradients (bit for bit) and print where
they imported srcad from.

Cases: `tiny3`, a 3-op function of a (4,) array (dispatch only), called positionally (the
fast path: straight to the generated function) and by keyword (`tiny3_kw`: binding, the
specialisation key, the cache); `dict`, a dict argument (its key built leaf by leaf);
the two-layer MLP of bench/models.py at batch 4 / width 16 (`mlp_small`) and batch 64 /
width 256 (`mlp_mid`). BLAS runs on one thread.

    git archive 68c9525 | tar -x -C /tmp/old;  git archive main | tar -x -C /tmp/new
    python bench/overhead_versions.py old=/tmp/old new=/tmp/new [--rounds 41]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np


def tiny3(x):
    return np.sum(np.tanh(x) * x)


def dict_loss(params, x):
    return np.sum(np.tanh(x @ params["W"] + params["b"]))


def mlp2_loss(W1, b1, W2, b2, x, y):
    h = np.tanh(x @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def _mlp_data(batch, width):
    rng = np.random.default_rng(0)
    W1 = rng.standard_normal((width, width)) / np.sqrt(width)
    W2 = rng.standard_normal((width, width)) / np.sqrt(width)
    b1, b2 = rng.standard_normal(width), rng.standard_normal(width)
    x, y = rng.standard_normal((batch, width)), rng.standard_normal((batch, width))
    return (W1, b1, W2, b2, x, y)


_X4 = np.linspace(-1.0, 1.0, 4)
_P = {"W": np.full((4, 3), 0.1), "b": np.zeros(3)}

# case -> (function, wrt, positional arguments, keyword arguments, calls per timing)
CASES = {
    "tiny3": (tiny3, 0, (_X4,), {}, 2000),
    "tiny3_kw": (tiny3, 0, (), {"x": _X4}, 2000),  # (a keyword: binding, then the cache)
    "dict": (dict_loss, 0, (_P, _X4[None]), {}, 2000),  # (a pytree argument: the same)
    "mlp_small": (mlp2_loss, (0, 1, 2, 3), _mlp_data(4, 16), {}, 1000),
    "mlp_mid": (mlp2_loss, (0, 1, 2, 3), _mlp_data(64, 256), {}, 50),
}


def _leaves(x):
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _leaves(x[k])]
    if isinstance(x, (tuple, list)):
        return [leaf for v in x for leaf in _leaves(v)]
    return [x]


def _calls_per_call(g, args, kwargs) -> tuple[int, int]:
    """(Python-level calls, calls into C) that one warm call makes: a count load cannot move."""
    counts = {"call": 0, "c_call": 0}

    def prof(frame, event, arg):
        if event in counts:
            counts[event] += 1

    sys.setprofile(prof)
    try:
        g(*args, **kwargs)
    finally:
        sys.setprofile(None)
    return counts["call"] - 1, counts["c_call"] - 1  # (less setprofile's own return path)


def worker() -> None:
    """Serve timing requests on stdin: one JSON line in, one out."""
    import srcad  # (the tree on PYTHONPATH: each worker imports its own)

    grads = {k: srcad.grad(fn, wrt=wrt) for k, (fn, wrt, _, _, _) in CASES.items()}
    first, sources = {}, {}
    for k, g in grads.items():
        out = g(*CASES[k][2], **CASES[k][3])  # the first call specialises; later are warm
        leaves = [np.asarray(o) for o in _leaves(out)]
        first[k] = hashlib.sha256(b"".join(o.tobytes() for o in leaves)).hexdigest()[:16]
        sources[k] = hashlib.sha256(srcad.source(g).encode()).hexdigest()[:16]
    calls = {k: _calls_per_call(g, *CASES[k][2:4]) for k, g in grads.items()}
    print(json.dumps({"srcad": srcad.__file__, "grads": first, "sources": sources,
                      "calls": calls}), flush=True)
    for line in sys.stdin:
        _, _, args, kwargs, inner = CASES[json.loads(line)["case"]]
        g = grads[json.loads(line)["case"]]
        t0 = time.perf_counter()
        for _ in range(inner):
            g(*args, **kwargs)
        print(json.dumps((time.perf_counter() - t0) / inner), flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="+", help="NAME=PATH of a srcad checkout")
    ap.add_argument("--rounds", type=int, default=41)
    args = ap.parse_args(argv)
    workers = {}
    for spec in args.trees:
        label, path = spec.split("=", 1)
        env = dict(os.environ, PYTHONPATH=os.path.abspath(path), OMP_NUM_THREADS="1",
                   OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                             cwd="/")
        workers[label] = p
    hello = {k: json.loads(p.stdout.readline()) for k, p in workers.items()}
    for k, h in hello.items():
        print(f"{k}: srcad from {h['srcad']}")
    print("function calls per warm call (Python, C): " + "; ".join(
        f"{c} " + " ".join(f"{k} {tuple(h['calls'][c])}" for k, h in hello.items())
        for c in CASES))
    ref = next(iter(hello.values()))["grads"]
    assert all(h["grads"] == ref for h in hello.values()), "the trees' gradients differ"
    same = all(h["sources"] == next(iter(hello.values()))["sources"] for h in hello.values())
    print("gradients bit for bit equal; generated sources "
          + ("identical" if same else "DIFFER: " + json.dumps({k: h["sources"]
                                                             for k, h in hello.items()})))
    labels = list(workers)
    times = {k: {c: [] for c in CASES} for k in labels}
    for r in range(args.rounds):
        for c in CASES:
            order = labels if r % 2 == 0 else labels[::-1]
            for k in order:
                p = workers[k]
                p.stdin.write(json.dumps({"case": c}) + "\n")
                p.stdin.flush()
                times[k][c].append(json.loads(p.stdout.readline()))
    for p in workers.values():
        p.stdin.close()
        p.wait()
    base = labels[0]
    print(f"{args.rounds} rounds, interleaved. Microseconds per warm call: the median, and the "
          f"10th percentile (load only adds time: the low tail is the cost itself); then, for "
          f"each tree against {base}, the median of the rounds' paired ratios and the ratio of "
          f"10th percentiles")
    print(f"{'case':<10}" + "".join(f"{k:>20}" for k in labels)
          + "".join(f"{k + '/' + base:>18}" for k in labels[1:]))
    for c in CASES:
        row = f"{c:<10}"
        p10 = {}
        for k in labels:
            p10[k], m = np.percentile(times[k][c], [10, 50]) * 1e6
            row += f"{m:>10.2f} ({p10[k]:>7.2f})"
        for k in labels[1:]:
            paired = np.median(np.array(times[k][c]) / np.array(times[base][c]))
            row += f"{paired:>11.3f} {p10[k] / p10[base]:>6.3f}"
        print(row)

if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        worker()
    else:
        main()
