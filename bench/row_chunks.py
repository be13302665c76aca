"""The block's softmax row kernels alone, CPU time on one thread (issue 25): the forward
(max, exp, sum, divide over the masked attention scores of B8 T64 D128 H4: 2,048 rows of 64,
about half of each row exp(-1e9 - max) = 0, so numpy's exp raises the underflow flag) and the
backward (written in place into its cotangent's buffer, as the generated code calls it).

Run it in two checkouts alternately to compare runtimes (each builds or loads its own kernels):

    python bench/row_chunks.py [--calls 200]
"""

from __future__ import annotations

import os
import statistics
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "SRCAD_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import srcad  # noqa: E402
from srcad.zoo import transformer as T  # noqa: E402


def main():
    calls = int(sys.argv[sys.argv.index("--calls") + 1]) if "--calls" in sys.argv else 200
    B, Tn, D, H = 8, 64, 128, 4
    rng = np.random.default_rng(0)
    p = T.randomize(rng, T.init(rng, D, H, np.float32))
    x, probe = (rng.standard_normal((B, Tn, D)).astype(np.float32) for _ in range(2))
    g = srcad.grad(T.block_loss, wrt="p", fuse=True)
    g(p, x, H, probe)
    ks = g._last.kernels.functions
    fwd = next(f for n, f in ks.items() if n.startswith("fused_max_subtract_exp"))
    bwd = next(f for n, f in ks.items() if n.startswith("fused_divide_negative_multiply"))
    causal = np.arange(Tn)[:, None] >= np.arange(Tn)[None, :]
    scores = np.where(causal, rng.standard_normal((B, H, Tn, Tn)).astype(np.float32),
                      np.float32(-1e9)).astype(np.float32)
    _, e, ssum, soft = fwd(scores)
    ds = rng.standard_normal(scores.shape).astype(np.float32)
    buf = ds.copy()

    def med(f):
        out = []
        for _ in range(calls):
            t = time.process_time()
            f()
            out.append(time.process_time() - t)
        return statistics.median(out)

    def backward():
        buf[...] = ds
        return bwd(buf, ssum, soft, e, out=(buf, None))

    t_fwd = med(lambda: fwd(scores))
    t_bwd = med(backward) - med(lambda: buf.__setitem__(Ellipsis, ds))
    print(f"{os.path.basename(os.getcwd())}: softmax forward kernel {t_fwd * 1e3:.3f} ms, "
          f"backward kernel {t_bwd * 1e3:.3f} ms (CPU time, median of {calls})")


if __name__ == "__main__":
    main()
