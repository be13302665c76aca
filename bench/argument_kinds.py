"""What waiting for the arguments' kinds costs (issue 21, session of 2026-12-05).

A function that takes `x.copy()` of a parameter, or stores into one (`p[i] = v`), means one
thing when the argument is a list or a dict (a shallow copy holding the very same arrays; a
slot taking another object) and another when it is an array (numpy's copy; its memory
written): srcad normalises such a function again once its first call's arguments tell which
(srcad/transformed.py `_ir_with`), and checks the kinds on every call. This times a whole
`srcad.grad` call of three small functions -- one that waits for nothing, one with
`x.copy()`, one with `x[0] = v` -- in the same run; the differences are the per-call cost.

    python bench/argument_kinds.py [--rounds N]

REPORT.md quotes the row with the CPU it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import srcad  # noqa: E402
from timing import cpu_model, measure  # noqa: E402


def plain(x, W):
    y = x * 1.0
    return np.sum(np.tanh(y @ W))


def copies(x, W):
    y = x.copy()
    return np.sum(np.tanh(y @ W))


def writes(x, W):
    x[0] = 0.5
    return np.sum(np.tanh(x @ W))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    rounds = ap.parse_args().rounds
    warnings.simplefilter("ignore")  # (`writes` writes into its argument: srcad warns)
    rng = np.random.default_rng(0)
    x, W = rng.standard_normal((4, 8)), rng.standard_normal((8, 3))
    calls = {}
    for fn in (plain, copies, writes):
        g = srcad.grad(fn)
        calls[fn.__name__] = lambda g=g: g(x, W)
    us = {name: t * 1e6 for name, t in measure(calls, rounds).items()}
    print(f"# {cpu_model()}, python {platform.python_version()}, numpy {np.__version__}; "
          f"median of {rounds} interleaved samples, us per call")
    for name, t in us.items():
        print(f"{name:8} {t:7.2f} us   ({t - us['plain']:+.2f} us over plain)")


if __name__ == "__main__":
    main()
