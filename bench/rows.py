"""Row kernels (issue 15 item 3): what LayerNorm costs today, fused and unfused.

LayerNorm over the last axis at (8, 128, 512) float32 -- its forward and the gradient of
``sum(layer_norm(x, g, b) * w)`` w.r.t. x, g and b -- with srcad unfused, srcad fused (the
elementwise kernels of issue 13: the row reductions stay numpy's) and torch eager where
installed; beside them the row reductions alone (numpy's ``np.mean(x, -1, keepdims=True)``
against the runtime's C pairwise mean, which equals it bit for bit) and the bandwidth bound
of a one-pass row kernel (read x, write y: 2 MB each), from a copy measured in the same run.

Prediction (written first, for 8 MB arrays; the input is 2 MB, so it is in L2/L3 and every
figure below is ~4x smaller than predicted): the unfused forward is ~8 passes (mean,
subtract, square, mean, add/sqrt on rows, divide, multiply, add) ~ 70-100 MB moved, ~4-6 ms
with its fresh allocations; issue 13's fusion takes it to ~4 passes (two reductions, two kernels),
~1.5-2x; a row kernel would be one pass, ~16 MB, bounded by the copy (~0.6-1 ms). The C
pairwise mean should be within ~1.5x of numpy's SIMD one (it vectorises the 8 accumulators).

    python bench/rows.py            # ~30 s; prints the table
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srcad  # noqa: E402
from e8_fusion import load, measure  # noqa: E402
from srcad import build  # noqa: E402
from srcad.zoo.transformer import layer_norm  # noqa: E402

SHAPE = (8, 128, 512)


def ln_loss(x, g, b, w):
    return np.sum(layer_norm(x, g, b) * w)


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    g = (1 + 0.1 * rng.standard_normal(SHAPE[-1])).astype(np.float32)
    b = (0.1 * rng.standard_normal(SHAPE[-1])).astype(np.float32)
    w = rng.standard_normal(SHAPE).astype(np.float32)
    rt = build.runtime()
    rt.set_num_threads(1)
    f0 = srcad.jit(layer_norm) if hasattr(srcad, "jit") else None
    g0 = srcad.grad(ln_loss, wrt=(0, 1, 2))
    g1 = srcad.grad(ln_loss, wrt=(0, 1, 2), fuse=True)
    v0 = srcad.value_and_grad(ln_loss, wrt=(0, 1, 2))
    v1 = srcad.value_and_grad(ln_loss, wrt=(0, 1, 2), fuse=True)
    r0, r1 = g0(x, g, b, w), g1(x, g, b, w)
    assert all(np.array_equal(a, c) for a, c in zip(r0, r1)), "fused != unfused"
    assert np.array_equal(rt.row_reduce(x, "mean"), np.mean(x, -1, keepdims=True))
    out = np.empty_like(x)
    calls = {
        "forward numpy": lambda: layer_norm(x, g, b),
        "value_and_grad unfused": lambda: v0(x, g, b, w),
        "value_and_grad fused": lambda: v1(x, g, b, w),
        "grad unfused": lambda: g0(x, g, b, w),
        "grad fused": lambda: g1(x, g, b, w),
        "np.mean rows": lambda: np.mean(x, -1, keepdims=True),
        "C pairwise mean rows": lambda: rt.row_reduce(x, "mean"),
        "copy (one pass bound)": lambda: np.copyto(out, x),
    }
    del f0
    try:
        import torch

        torch.set_num_threads(1)
        tx, tg, tb, tw = (torch.from_numpy(a.copy()) for a in (x, g, b, w))
        F = torch.nn.functional

        def torch_fwd():
            return F.layer_norm(tx, (SHAPE[-1],), tg, tb, 1e-5)

        def torch_grad():
            xx, gg, bb = (t.detach().requires_grad_() for t in (tx, tg, tb))
            (F.layer_norm(xx, (SHAPE[-1],), gg, bb, 1e-5) * tw).sum().backward()
            return xx.grad

        calls["torch eager forward"] = torch_fwd
        calls["torch eager value+grad"] = torch_grad
    except ImportError:
        pass
    l0 = load()
    t = measure(calls, 15, min_sample=20e-3)
    print(f"LayerNorm {SHAPE} float32, one thread, medians of 15 interleaved rounds "
          f"(load {l0} -> {load()}):")
    for name, s in t.items():
        print(f"  {name:28s} {s * 1e3:8.3f} ms")
    mb = x.nbytes * 2 / 1e6
    print(f"  one-pass bound: {mb:.0f} MB at the copy's "
          f"{mb / 1e3 / t['copy (one pass bound)']:.1f} GB/s")


if __name__ == "__main__":
    main()
