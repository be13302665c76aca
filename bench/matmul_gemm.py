"""Issue 15, item 2: matmul's backward as plain GEMMs, measured before and after in one run.

Two parts, float32, interleaved medians:

1. Per product, in this process, for the Transformer block's ``x @ W`` shapes (B8 T64 D128 and
   B8 T128 D512): the forward batched ``a @ b`` against one 2-D GEMM on the reshaped operand;
   ``dA`` and ``dB`` through the previous generic helpers (``before``: a verbatim copy of
   them below, batched product + swapaxes + unbroadcast) against the expressions generated
   now (``matmul_grad_form``: one 2-D GEMM on reshaped operands); whether the two results
   are bitwise equal, and their max relative difference.
2. The whole block gradient (``srcad.grad(block_loss, wrt="p")``) of the tree at ``--before``
   (a git revision, default ``main``: extracted with ``git archive`` into a temporary
   folder) against this tree, each in its own worker process, alternating ``--rounds``
   times between the two; each round times ``--calls`` calls; medians over all calls.
   The gradients of both are compared (max relative difference per array, worst array).

    python bench/matmul_gemm.py [--before REV] [--rounds 6] [--calls 10] [--threads N]
        [--fuse off|on|both]

Writes bench/results/matmul_gemm.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from srcad import runtime  # noqa: E402
from srcad.runtime_linalg import matmul_forward_form, matmul_grad_form  # noqa: E402

# -- before: the generic helpers as they were (srcad/runtime.py before issue 15) ------------


def _promote(a, b):
    a2 = a[None, :] if np.ndim(a) == 1 else a
    b2 = b[:, None] if np.ndim(b) == 1 else b
    return a2, b2


def _expand_g(g, a, b):
    g = np.asarray(g)
    if np.ndim(a) == 1:
        g = np.expand_dims(g, -2)
    if np.ndim(b) == 1:
        g = np.expand_dims(g, -1)
    return g


def before_grad_a(g, a, b):
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return g * b
    a2, b2 = _promote(a, b)
    g2 = _expand_g(g, a, b)
    da = runtime.unbroadcast(g2 @ np.swapaxes(b2, -1, -2), a2)
    return np.reshape(da, np.shape(a)) if np.ndim(a) == 1 else da


def before_grad_b(g, a, b):
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return g * a
    a2, b2 = _promote(a, b)
    g2 = _expand_g(g, a, b)
    db = runtime.unbroadcast(np.swapaxes(a2, -1, -2) @ g2, b2)
    return np.reshape(db, np.shape(b)) if np.ndim(b) == 1 else db


def after(form):
    return eval(f"lambda g, a, b: {form}", {"np": np, "unbroadcast": runtime.unbroadcast})


def timeit(fns, rounds=25):
    """Interleaved medians (µs) of each function in `fns` (a dict)."""
    times = {k: [] for k in fns}
    for f in fns.values():
        f()
    for r in range(rounds):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1e6 for k, v in times.items()}


def rel(x, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return float(np.max(np.abs(x - y))) / max(float(np.max(np.abs(y))), 1e-30)


PRODUCTS = [  # (label, a shape, b shape): the block's x @ W products
    ("B8 T64 D128: x @ w_q", (8, 64, 128), (128, 128)),
    ("B8 T64 D128: x @ w_fc", (8, 64, 128), (128, 512)),
    ("B8 T64 D128: h @ w_proj", (8, 64, 512), (512, 128)),
    ("B8 T128 D512: x @ w_q", (8, 128, 512), (512, 512)),
    ("B8 T128 D512: x @ w_fc", (8, 128, 512), (512, 2048)),
    ("B8 T128 D512: h @ w_proj", (8, 128, 2048), (2048, 512)),
]


def per_product(rounds):
    rng = np.random.default_rng(0)
    rows = []
    for label, sa, sb in PRODUCTS:
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        g = rng.standard_normal(sa[:-1] + sb[-1:]).astype(np.float32)
        K, N = sa[-1], sb[-1]
        rows_ = int(np.prod(sa[:-1]))
        fa, fb = after(matmul_grad_form(sa, sb, "a")), after(matmul_grad_form(sa, sb, "b"))
        # what srcad's forward runs now: one 2-D GEMM where matmul_forward_form says so
        fwd = matmul_forward_form(sa, sb, a.dtype, b.dtype)
        t = timeit({
            "fwd batched": lambda: a @ b,
            "fwd 2-D": lambda: (a.reshape(rows_, K) @ b).reshape(sa[:-1] + (N,)),
            "dA before": lambda: before_grad_a(g, a, b), "dA after": lambda: fa(g, a, b),
            "dB before": lambda: before_grad_b(g, a, b), "dB after": lambda: fb(g, a, b),
        }, rounds if np.prod(sa) * N < 1e8 else max(5, rounds // 3))
        fwd2 = (a.reshape(rows_, K) @ b).reshape(sa[:-1] + (N,))
        row = {"product": label, "a": sa, "b": sb, "us": t, "srcad_forward": fwd,
               "fwd_bitwise": bool(np.array_equal(a @ b, fwd2)),
               "dA_bitwise": bool(np.array_equal(before_grad_a(g, a, b), fa(g, a, b))),
               "dB_bitwise": bool(np.array_equal(before_grad_b(g, a, b), fb(g, a, b))),
               "dB_rel_diff": rel(fb(g, a, b), before_grad_b(g, a, b))}
        rows.append(row)
        print(f"{label:<26} fwd {t['fwd batched']:7.0f} -> {t['fwd 2-D']:7.0f} µs "
              f"({'=' if row['fwd_bitwise'] else '≠'}{'' if fwd else ', srcad keeps a @ b'})"
              f"  dA {t['dA before']:7.0f} -> "
              f"{t['dA after']:7.0f} ({'=' if row['dA_bitwise'] else '≠'})  dB "
              f"{t['dB before']:7.0f} -> {t['dB after']:7.0f} "
              f"({'=' if row['dB_bitwise'] else '≠'}, {row['dB_rel_diff']:.1e})", flush=True)
    return rows


# -- part 2: the block gradient of two trees, in two worker processes --------------------------

WORKER = r'''
import sys, time, json
import numpy as np
sys.path.insert(0, sys.argv[1])
import srcad
from srcad.zoo import transformer as T
assert srcad.__file__.startswith(sys.argv[1]), srcad.__file__
b, t, d, h = (int(v) for v in sys.argv[2:6])
rng = np.random.default_rng(0)
p = T.randomize(rng, T.init(rng, d, h, np.float32), 0.02)
x = rng.standard_normal((b, t, d)).astype(np.float32)
probe = rng.standard_normal((b, t, d)).astype(np.float32)
g = srcad.grad(T.block_loss, wrt="p", fuse=sys.argv[7] == "fused")
t0 = time.perf_counter(); grads = g(p, x, h, probe); first = time.perf_counter() - t0
np.savez(sys.argv[6], **grads)
print(json.dumps({"first": first}), flush=True)
for line in sys.stdin:
    n = int(line)
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); g(p, x, h, probe); ts.append(time.perf_counter() - t0)
    print(json.dumps(ts), flush=True)
'''


def extract(rev):
    d = tempfile.mkdtemp(prefix="srcad_before_")
    # (kernels_c/: the C runtime fuse=True builds)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "srcad", "kernels_c"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", d], input=archive, check=True)
    return d


def block_before_after(before_rev, rounds, calls, threads=None, fuse=("unfused",)):
    trees = {f"before ({before_rev})": extract(before_rev), "after (this tree)": ROOT}
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if threads:
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(threads)
        env["SRCAD_NUM_THREADS"] = str(threads)
    out = []
    for size, mode in itertools.product([(8, 64, 128, 4), (8, 128, 512, 8)], fuse):
        procs, first, grads = {}, {}, {}
        tmp = tempfile.mkdtemp(prefix="srcad_grads_")
        for k, root in trees.items():
            path = os.path.join(tmp, f"{len(procs)}.npz")
            procs[k] = (subprocess.Popen([sys.executable, "-c", WORKER, root, *map(str, size),
                                          path, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True, env=env), path)
        for k, (pr, path) in procs.items():
            first[k] = json.loads(pr.stdout.readline())["first"]
            grads[k] = dict(np.load(path))
        times = {k: [] for k in procs}
        n = calls if size[2] < 512 else max(2, calls // 4)
        for r in range(rounds):
            order = list(procs) if r % 2 == 0 else list(procs)[::-1]
            for k in order:
                pr = procs[k][0]
                pr.stdin.write(f"{n}\n")
                pr.stdin.flush()
                times[k] += json.loads(pr.stdout.readline())
        for pr, _ in procs.values():
            pr.stdin.close()
            pr.wait()
        kb, ka = list(procs)
        worst = max((rel(grads[ka][name], grads[kb][name]), name) for name in grads[kb])
        bitwise = [name for name in grads[kb] if np.array_equal(grads[ka][name], grads[kb][name])]
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        row = {"size": "B{} T{} D{}".format(*size[:3]), "fuse": mode == "fused", "median_ms": med, "first_call_s": first,
               "calls": len(times[ka]), "worst_rel_diff": worst[0], "worst_array": worst[1],
               "bitwise_equal_arrays": bitwise}
        out.append(row)
        print(f"block {row['size']} {mode}: before {med[kb]:.2f} ms, after {med[ka]:.2f} ms "
              f"({med[ka] / med[kb]:.2f}x; {row['calls']} calls each, alternating); gradients: "
              f"{len(bitwise)}/{len(grads[kb])} arrays bitwise equal, worst rel diff "
              f"{worst[0]:.1e} ({worst[1]})", flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--skip-products", action="store_true")
    ap.add_argument("--threads", type=int, default=None,
                    help="BLAS threads of the workers and the per-product timings")
    ap.add_argument("--fuse", choices=("off", "on", "both"), default="off",
                    help="the block gradient with fuse=False, fuse=True, or each")
    args = ap.parse_args(argv)
    fuse = {"off": ("unfused",), "on": ("fused",), "both": ("unfused", "fused")}[args.fuse]
    if args.threads:
        from threadpoolctl import threadpool_limits
        threadpool_limits(args.threads)
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[:3]
    products = [] if args.skip_products else per_product(25)
    block = block_before_after(args.before, args.rounds, args.calls, args.threads, fuse)
    with open("/proc/loadavg") as f:
        load1 = f.read().split()[:3]
    print(f"loadavg {' '.join(load0)} -> {' '.join(load1)} ({os.cpu_count()} cores)")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "matmul_gemm.json"), "w") as f:
        argv = sys.argv[1:] if argv is None else argv
        json.dump({"command": " ".join(["python bench/matmul_gemm.py", *argv]), "threads": args.threads, "loadavg": [load0, load1],
                   "products": products,
                   "block": block}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
