"""Classify a probe corpus module's programs, each in source mode, tape mode and fuse=True:
pass (value equal to calling the function, gradient within the program's tolerance of central
differences), refused (a SrcadError), wrong (a value or gradient off), crash (any other
exception). Prints one line per program, the reason for each non-pass, and the counts.

    PYTHONPATH=. python -m tests.corpus_probe.classify wild_repos5 [program ...]
"""

from __future__ import annotations

import collections
import importlib
import sys
import traceback
import warnings

import numpy as np

import srcad
from srcad.testing import numerical_grad, rel_error


def classify(p):
    value = p.fn(*p.make_args())
    want = numerical_grad(p.fn, p.make_args(), wrt=p.wrt)
    names = p.wrt if isinstance(p.wrt, tuple) else (p.wrt,)
    want = want if isinstance(p.wrt, tuple) else (want,)
    for mode in ("source", "tape", "fuse"):
        opts = {"fuse": True} if mode == "fuse" else {"mode": mode, "fuse": False}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out, got = srcad.value_and_grad(p.fn, wrt=p.wrt, **opts)(*p.make_args())
            got = got if isinstance(p.wrt, tuple) else (got,)
            bad = [] if np.array_equal(np.asarray(out), np.asarray(value)) else ["value"]
            for g, w, n in zip(got, want, names):
                try:
                    err = rel_error(g, w)
                except Exception:  # noqa: BLE001  (a gradient of another structure)
                    err = float("inf")
                if not err < p.tol:
                    bad.append(f"{n}: rel {err:.2e}")
            yield mode, ("wrong" if bad else "pass"), "; ".join(bad)
        except srcad.SrcadError as e:
            yield mode, "refused", str(e).splitlines()[0][:200]
        except Exception as e:  # noqa: BLE001
            at = traceback.extract_tb(e.__traceback__)[-1]
            yield mode, "crash", f"{type(e).__name__}: {str(e)[:160]} @ {at.filename}:{at.lineno}"


def main(argv):
    module = importlib.import_module(f"tests.corpus_probe.{argv[0]}")
    only = set(argv[1:])
    counts = {m: collections.Counter() for m in ("source", "tape", "fuse")}
    for p in module.PROGRAMS:
        short = p.name.split(".", 1)[1]
        if only and short not in only:
            continue
        results = list(classify(p))
        print(f"{short:28s} " + " ".join(f"{m}={c}" for m, c, _ in results), flush=True)
        for m, c, why in results:
            if c != "pass":
                print(f"    [{m}] {why}")
        for m, c, _ in results:
            counts[m][c] += 1
    for m, c in counts.items():
        print(m, {k: c[k] for k in ("pass", "refused", "wrong", "crash")})


if __name__ == "__main__":
    main(sys.argv[1:])
