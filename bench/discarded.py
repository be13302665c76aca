"""Outputs nobody reads (issue 25 item 4, issue 22 item 3): a dozen programs whose user
functions return more than the caller reads (`loss, _ = svm_loss(...)`, `out, cache =
layer(...)` with the cache never used; bench/discarded_programs.py). For each, srcad's
gradient of the program as written ("with extra") against the same program returning only
what is read ("alone": each `# alone:` line) and against the backward written by hand. Same
process, interleaved, ratio of medians. The two srcad gradients are checked bit for bit
equal, and both against the hand-written one.

    python bench/discarded.py [--repeat N] [--fuse] [--only NAME]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import re
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import srcad

ALONE = re.compile(r"^(\s*)(.*?)\s*# alone: (.*)$")


def variants(directory: str):
    """The programs as written, and with every `# alone:` line put in its place."""
    with open(os.path.join(HERE, "discarded_programs.py")) as f:
        text = f.read()
    alone = "\n".join(ALONE.sub(lambda m: m.group(1) + m.group(3), ln)
                      for ln in text.splitlines()) + "\n"
    out = []
    for label, src in (("with_extra", text), ("alone", alone)):
        path = os.path.join(directory, f"discarded_{label}.py")
        with open(path, "w") as f:
            f.write(src)
        spec = importlib.util.spec_from_file_location(f"discarded_{label}", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        out.append(mod)
    return out


def cases(rng):
    """name -> (function name, args, wrt): sizes where one step takes ~0.1-5 ms."""
    f = rng.standard_normal
    y10 = rng.integers(0, 10, 64)
    return {
        "svm_naive": ("svm_naive", (f((200, 10)) * 1e-2, f((64, 200)), y10), 0),
        "softmax_naive": ("softmax_naive", (f((200, 10)) * 1e-2, f((32, 200)), y10[:32]), 0),
        "softmax_vec": ("softmax_vec", (f((200, 10)) * 1e-2, f((256, 200)),
                                        rng.integers(0, 10, 256)), 0),
        "two_layer": ("two_layer", (f((100, 64)) * 0.1, f(64) * 0.1, f((64, 10)) * 0.1,
                                    f(10) * 0.1, f((128, 100)), rng.integers(0, 10, 128)),
                      (0, 1, 2, 3)),
        "bn_net": ("bn_net", (f((50, 32)) * 0.1, 1 + f(32) * 0.1, f(32) * 0.1, f((64, 50)),
                              f((64, 32))), (0, 1, 2)),
        "ln_mlp": ("ln_mlp", (f((32, 48)) * 0.2, f((48, 8)) * 0.2, 1 + f(48) * 0.1,
                              f(48) * 0.1, f((64, 32)), f((64, 8))), (0, 1, 2, 3)),
        "dropout_mlp": ("dropout_mlp", (f((32, 64)) * 0.2, f((64, 8)) * 0.2, f((64, 32)),
                                        (rng.random((64, 64)) > 0.5) / 0.5, f((64, 8))),
                        (0, 1)),
        "rnn": ("rnn_loss", (f((16, 32)) * 0.2, f((32, 32)) * 0.2, f(32) * 0.1,
                             f((8, 20, 16)), f((8, 32)), f((8, 32))), (0, 1, 2)),
        "lstm": ("lstm_loss", (f((16, 128)) * 0.2, f((32, 128)) * 0.2, f(128) * 0.1,
                               f((8, 12, 16)), f((8, 32)), f((8, 32))), (0, 1, 2)),
        "attention": ("attn_loss", (f((32, 16)) * 0.2, f((32, 16)) * 0.2, f((32, 16)) * 0.2,
                                    f((48, 32)), f((48, 16))), (0, 1, 2)),
        "mlp3": ("mlp3_loss", (f((32, 64)) * 0.2, f((64, 64)) * 0.2, f((64, 8)) * 0.2,
                               f((64, 32)), f((64, 8))), (0, 1, 2)),
        "conv_naive": ("conv_loss", (f((4, 3, 3, 3)) * 0.2, f((2, 3, 10, 10)),
                                     f((2, 4, 8, 8))), 0),
    }


def timed(fns, args, repeat, inner):
    """Interleaved timings (seconds per call) of each of `fns`: their medians."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(inner):
                fn(*args)
            times[k].append((time.perf_counter() - t0) / inner)
    return [float(np.median(t)) for t in times]


def as_tuple(g):
    return g if isinstance(g, tuple) else (g,)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--fuse", action="store_true")
    ap.add_argument("--only", default=None)
    opts = ap.parse_args(argv)
    with open("/proc/cpuinfo") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                   platform.processor())
    print(f"CPU: {cpu} ({os.cpu_count()} logical cores); numpy {np.__version__}; "
          f"fuse={opts.fuse}")
    print(f"{'program':<14} {'with extra':>11} {'alone':>11} {'by hand':>11} "
          f"{'extra/alone':>11} {'extra/hand':>10} {'alone/hand':>10}")
    with tempfile.TemporaryDirectory() as d:
        with_extra, alone = variants(d)
        rows = []
        for name, (fn, args, wrt) in cases(np.random.default_rng(0)).items():
            if opts.only and name != opts.only:
                continue
            g_extra = srcad.grad(getattr(with_extra, fn), wrt=wrt, fuse=opts.fuse)
            g_alone = srcad.grad(getattr(alone, fn), wrt=wrt, fuse=opts.fuse)
            hand = getattr(with_extra, f"{fn}_by_hand")
            a, b, h = as_tuple(g_extra(*args)), as_tuple(g_alone(*args)), as_tuple(hand(*args))
            for x, y, z in zip(a, b, h):
                assert x.tobytes() == y.tobytes(), (name, "with extra != alone")
                np.testing.assert_allclose(x, z, rtol=1e-7, atol=1e-10, err_msg=name)
            t = timed([g_extra, g_alone, hand], args, 3, 1)  # (warm up: pick `inner`)
            inner = max(1, int(0.02 / max(t)))
            te, ta, th = timed([g_extra, g_alone, hand], args, opts.repeat, inner)
            rows.append((te / ta, te / th, ta / th))
            print(f"{name:<14} {te * 1e3:>9.3f}ms {ta * 1e3:>9.3f}ms {th * 1e3:>9.3f}ms "
                  f"{te / ta:>11.3f} {te / th:>10.3f} {ta / th:>10.3f}", flush=True)
    if rows:
        r = np.array(rows)
        print(f"{'median':<14} {'':>11} {'':>11} {'':>11} {np.median(r[:, 0]):>11.3f} "
              f"{np.median(r[:, 1]):>10.3f} {np.median(r[:, 2]):>10.3f}")
        print(f"{'worst':<14} {'':>11} {'':>11} {'':>11} {r[:, 0].max():>11.3f} "
              f"{r[:, 1].max():>10.3f} {r[:, 2].max():>10.3f}")


if __name__ == "__main__":
    main()
