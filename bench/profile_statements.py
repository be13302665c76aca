"""Where a generated gradient spends its time, statement by statement.

Runs one srcad gradient (the zoo's Transformer block or tiny GPT, float32) a few times under
a line tracer confined to the generated code (sys.settrace: the time from one generated line
to the next is charged to the first), and prints the statements that take the most, grouped
by kind (GEMM, fused kernel, reduction, other numpy, Python). The tracer adds ~1 us per line,
so the totals run above an untraced call by (lines x 1 us); the shares are what to read.

    OPENBLAS_NUM_THREADS=1 SRCAD_NUM_THREADS=1 python bench/profile_statements.py block-large --fuse
    python bench/profile_statements.py gpt --fuse --top 25
"""

from __future__ import annotations

import argparse
import collections
import linecache
import os
import re
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import srcad  # noqa: E402
from srcad.zoo import data, gpt, transformer  # noqa: E402


def workload(name: str, fuse: bool, params_only: bool = False):
    rng = np.random.default_rng(0)
    if name.startswith("block"):
        B, T, C = (8, 64, 128) if name == "block-small" else (8, 128, 512)
        p = transformer.randomize(rng, transformer.init(rng, C, 4, dtype=np.float32))
        x = rng.standard_normal((B, T, C)).astype(np.float32)
        probe = rng.standard_normal((B, T, C)).astype(np.float32)
        g = srcad.grad(transformer.block_loss, wrt="p" if params_only else (0, 1), fuse=fuse)
        return g, (p, x, 4, probe)
    tok = data.CharTokenizer(data.TEXT)
    params = gpt.init(rng, tok.vocab_size, 64, 4, 2, 32, dtype=np.float32)
    tokens, targets = next(data.batches(rng, tok.encode(data.TEXT), 16, 32))
    g = srcad.value_and_grad(gpt.loss, wrt="params", fuse=fuse)
    return g, (params, tokens, targets, 4)


def kind_of(text: str) -> str:
    if re.search(r"\bfused_\w+\(", text):
        return "fused kernel"
    # (fused code spells a product `gemm(a, b)`: a line that names no `matmul` is still one)
    if re.search(r"\bgemm\(", text) or " @ " in text or "matmul" in text or \
            "np.dot" in text or "einsum" in text:
        return "GEMM"
    if re.search(r"\.sum\(|np\.(sum|mean|max|min)\(|extremum_grad|unbroadcast|lead_sum\(", text):
        return "reduction"
    if "np." in text or re.search(r"[-+*/] |\breshaped\(", text):
        return "other numpy"
    return "Python"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", choices=["block-small", "block-large", "gpt"])
    ap.add_argument("--fuse", action="store_true")
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--params-only", action="store_true",
                    help="the blocks' gradient w.r.t. the parameters alone (wrt='p', as "
                         "bench/peers.py takes it), not the parameters and the input")
    ap.add_argument("--cpu-time", action="store_true",
                    help="charge CPU time (time.process_time), not wall time: steadier on a "
                         "shared machine with one thread everywhere")
    args = ap.parse_args()
    clock = time.process_time if args.cpu_time else time.perf_counter
    g, a = workload(args.workload, args.fuse, args.params_only)
    g(*a)
    t = clock()
    for _ in range(args.calls):
        g(*a)
    plain = (clock() - t) / args.calls
    spent = collections.Counter()
    last = [None, 0.0]

    def tracer(frame, event, arg):
        if not frame.f_code.co_filename.startswith("<srcad-generated"):
            return None
        if event in ("line", "return"):
            now = clock()
            if last[0] is not None:
                spent[last[0]] += now - last[1]
            last[0] = (frame.f_code.co_filename, frame.f_code.co_name, frame.f_lineno) \
                if event == "line" else None
            last[1] = clock()
        return tracer

    sys.settrace(tracer)
    try:
        for _ in range(args.calls):
            g(*a)
    finally:
        sys.settrace(None)
    src = srcad.source(g).splitlines()
    total = sum(spent.values()) / args.calls
    by_kind = collections.Counter()
    rows = []
    for (fname, func, line), s in spent.items():
        text = src[line - 1].strip() if line - 1 < len(src) else linecache.getline(fname, line)
        by_kind[kind_of(text)] += s / args.calls
        rows.append((s / args.calls, func, text))
    print(f"{args.workload} fuse={args.fuse}: {plain * 1e3:.2f} ms per call untraced, "
          f"{total * 1e3:.2f} ms traced ({len(spent)} lines)")
    for k, s in by_kind.most_common():
        print(f"  {k:14s} {s * 1e3:8.2f} ms  {100 * s / total:5.1f}%")
    print(f"top {args.top} statements:")
    for s, func, text in sorted(rows, reverse=True)[:args.top]:
        print(f"  {s * 1e3:7.3f} ms  {func:22s} {text[:110]}")


if __name__ == "__main__":
    main()
