"""What reading names at call time costs: the guards' check on every call (issue 21).

A transformed function checks, before each call, that the names its code was built on
(globals, closure cells, class and object attributes: srcad/frontend/guards.py) still hold
the same objects. This measures, for the zoo's models and a tiny function, how many guards
that is, the check alone (ns: the C runtime's, and the Python fallback used where the C
runtime is not installed), and a whole call with and without it (the "frozen" column replaces
the check by a constant True: srcad before issue 21, which froze the names).

    python bench/guards.py [--repeat N]

Prints one row per function; REPORT.md quotes it with the CPU it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import srcad  # noqa: E402
from srcad.build import c_helper  # noqa: E402
from srcad.frontend.guards import Guards  # noqa: E402
from srcad.zoo import gpt, mlp  # noqa: E402
from timing import cpu_model  # noqa: E402

SCALE = 2.0


def tiny(x):
    return np.sum(SCALE * x * x)


def cases():
    x = np.array([1.0, 2.0, 3.0])
    yield "tiny: np.sum(SCALE * x * x)", srcad.grad(tiny), (x,)
    yield "zoo mlp (batch 4, 16-32-10)", srcad.grad(mlp.loss, wrt=(0, 1, 2, 3)), \
        mlp._example_loss()
    yield "zoo gpt (2 layers, d 16)", srcad.grad(gpt.loss), gpt._example_loss()


def measure(g, args, repeat):
    g(*args)  # (build)
    n_guards = len(g._guards)
    check = g._guards.holds
    t_check = min(timeit.repeat(check, number=20000, repeat=repeat)) / 20000
    python_check = g._guards.python_check()
    t_python = min(timeit.repeat(python_check, number=20000, repeat=repeat)) / 20000
    inner = 200
    with_guards = min(timeit.repeat(lambda: g(*args), number=inner, repeat=repeat)) / inner
    Guards.holds = lambda self: True  # (the check switched off: the frozen behaviour)
    try:
        without = min(timeit.repeat(lambda: g(*args), number=inner, repeat=repeat)) / inner
    finally:
        del Guards.holds  # (back to the class's own method)
        Guards.holds = _HOLDS
    return n_guards, t_check, t_python, with_guards, without


_HOLDS = Guards.holds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}")
    print(f"# {cpu_model()}; the C check: "
          f"{'kernels_c/srcad_guards.h' if c_helper('guards_hold') else 'not installed'}")
    print(f"{'function':30} {'guards':>6} {'C ns':>6} {'Python ns':>9} {'call us':>9} "
          f"{'frozen us':>10} {'cost':>7}")
    for name, g, a in cases():
        n, tc, tp, tw, to = measure(g, a, args.repeat)
        print(f"{name:30} {n:6d} {tc * 1e9:6.0f} {tp * 1e9:9.0f} {tw * 1e6:9.2f} "
              f"{to * 1e6:10.2f} {(tw - to) / to * 100:6.1f}%")


if __name__ == "__main__":
    main()
