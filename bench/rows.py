"""Row kernels (issue 15 item 3): fused before and after, in one interleaved run.

"before" is fuse=True with `srcad.lower.fuse.ROW_KERNELS` off (the elementwise kernels of
issue 13; every last-axis sum and mean, and its broadcast back, left to numpy), "after" the
same with row kernels (one kernel per chain through those reductions, working row by row,
numpy's pairwise sum bit for bit). Every pair is checked bit for bit against fuse=False
before it is timed. Cases, float32, one thread (SRCAD_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1
are set here unless given):

  * the zoo Transformer block's gradient (value_and_grad of `block_loss` w.r.t. every
    parameter) at B8 T64 D128 and B8 T128 D512;
  * LayerNorm alone at (8, 128, 512): the forward of its vjp (which also keeps what the
    backward reads) and the gradient of ``sum(layer_norm(x, g, b) * w)`` w.r.t. x, g, b;
  * softmax alone at (8, 4, 128, 128) (the attention scores of the large block): the same,
    the gradient of ``sum(softmax(x) * w)``;
  * beside them numpy's forward, and torch eager where it is installed.

    python bench/rows.py            # ~2-3 minutes; prints the table
    python bench/rows.py --quick    # the small block and LayerNorm only
"""

from __future__ import annotations

import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "SRCAD_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import srcad  # noqa: E402
from srcad import build  # noqa: E402
from srcad.lower import fuse as fuser  # noqa: E402
from srcad.zoo import transformer as T  # noqa: E402
from timing import load, measure  # noqa: E402

LN_SHAPE = (8, 128, 512)
SM_SHAPE = (8, 4, 128, 128)


def ln_loss(x, g, b, w):
    return np.sum(T.layer_norm(x, g, b) * w)


def sm_loss(x, w):
    return np.sum(T.softmax(x) * w)


def _same(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _pair(make, args):
    """(before, after) callables from make(), built with row kernels off and on, both
    checked bit for bit against fuse=False's result."""
    out = []
    for rows in (False, True):
        fuser.ROW_KERNELS = rows
        try:
            f = make(True)
            f(*args)  # (lowered and built now, under this setting)
        finally:
            fuser.ROW_KERNELS = True
        out.append(f)
    want = make(False)(*args)
    for f in out:
        assert _same(f(*args), want), "fused != unfused"
    return out


def _forward(fn, args):
    """The forward of fn's vjp (what a training step runs before the backward: it also
    keeps what the backward reads), a Transformed of its own for each make()."""
    from srcad.transformed import Transformed

    def make(fuse):
        t = Transformed(fn, "vjp", (), {"fuse": fuse})
        c = t.compiled(t.bind(args, {}), given=len(args))
        fwd = c.functions["fwd"]
        return lambda *a: fwd(*t.bind(a, {}))[0]

    return make


def cases(quick: bool):
    rng = np.random.default_rng(0)
    out = []
    for B, Tn, D in ((8, 64, 128),) + (() if quick else ((8, 128, 512),)):
        p = T.randomize(rng, T.init(rng, D, 4, np.float32))
        x = rng.standard_normal((B, Tn, D)).astype(np.float32)
        probe = rng.standard_normal((B, Tn, D)).astype(np.float32)
        args = (p, x, 4, probe)
        out.append((f"block grad B{B} T{Tn} D{D}", args,
                    lambda fuse: srcad.value_and_grad(T.block_loss, wrt="p", fuse=fuse)))
    x = rng.standard_normal(LN_SHAPE).astype(np.float32)
    g = (1 + 0.1 * rng.standard_normal(LN_SHAPE[-1])).astype(np.float32)
    b = (0.1 * rng.standard_normal(LN_SHAPE[-1])).astype(np.float32)
    w = rng.standard_normal(LN_SHAPE).astype(np.float32)
    out.append((f"layer_norm vjp forward {LN_SHAPE}", (x, g, b), _forward(T.layer_norm,
                                                                            (x, g, b))))
    out.append((f"layer_norm grad {LN_SHAPE}", (x, g, b, w),
                lambda fuse: srcad.grad(ln_loss, wrt=(0, 1, 2), fuse=fuse)))
    if not quick:
        s = (rng.standard_normal(SM_SHAPE) * 2).astype(np.float32)
        ws = rng.standard_normal(SM_SHAPE).astype(np.float32)
        out.append((f"softmax vjp forward {SM_SHAPE}", (s,), _forward(T.softmax, (s,))))
        out.append((f"softmax grad {SM_SHAPE}", (s, ws),
                    lambda fuse: srcad.grad(sm_loss, fuse=fuse)))
    return out, (x, g, b, w)


def main():
    quick = "--quick" in sys.argv
    build.runtime().set_num_threads(int(os.environ["SRCAD_NUM_THREADS"]))
    calls, rows = {}, []
    all_cases, (x, g, b, w) = cases(quick)
    for name, args, make in all_cases:
        unfused = make(False)
        before, after = _pair(make, args)
        calls[f"{name} | unfused"] = (lambda f=unfused, a=args: f(*a))
        calls[f"{name} | before"] = (lambda f=before, a=args: f(*a))
        calls[f"{name} | after"] = (lambda f=after, a=args: f(*a))
        rows.append(name)
    calls["layer_norm numpy forward | numpy"] = lambda: T.layer_norm(x, g, b)
    try:
        import torch

        torch.set_num_threads(1)
        tx, tg, tb, tw = (torch.from_numpy(a.copy()) for a in (x, g, b, w))
        F = torch.nn.functional

        def torch_grad():
            xx, gg, bb = (t.detach().requires_grad_() for t in (tx, tg, tb))
            (F.layer_norm(xx, (LN_SHAPE[-1],), gg, bb, 1e-5) * tw).sum().backward()
            return xx.grad

        calls["layer_norm torch eager forward | torch"] = \
            lambda: F.layer_norm(tx, (LN_SHAPE[-1],), tg, tb, 1e-5)
        calls["layer_norm torch eager grad | torch"] = torch_grad
    except ImportError:
        pass
    l0 = load()
    t = measure(calls, 9 if quick else 11, min_sample=30e-3)
    print(f"float32, SRCAD_NUM_THREADS={os.environ['SRCAD_NUM_THREADS']} "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, medians of interleaved "
          f"rounds (load {l0} -> {load()}); before = fuse=True without row kernels, after = "
          f"with them:")
    print(f"  {'case':40s} {'unfused':>9s} {'before':>9s} {'after':>9s} {'after/before':>12s}")
    for name in rows:
        u, bf, af = (t[f"{name} | {k}"] * 1e3 for k in ("unfused", "before", "after"))
        print(f"  {name:40s} {u:9.3f} {bf:9.3f} {af:9.3f} {af / bf:12.2f}")
    for key, s in t.items():
        if key.endswith(("| numpy", "| torch")):
            print(f"  {key.split(' |')[0]:40s} {s * 1e3:9.3f}")


if __name__ == "__main__":
    main()
