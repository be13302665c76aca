"""One process of tests/test_cache_faults.py: run fused gradients step by step and print a
JSON report on its last line.

    SRCAD_TEST_STEPS="f,g,unlink:/path,h"   (default "f")

Each step ``f``, ``g`` or ``h`` fuses the gradient of a function no other step uses (so a
module of its own) and checks it against the unfused one; ``unlink:PATH`` removes a file
(frees a full disk). ``SRCAD_TEST_KILL_AT`` kills this process with SIGKILL at a step of
the first build: ``before-replace`` (the .so is written and hashed, not in place),
``after-replace`` (in place, not sealed), ``after-seal`` (sealed, its .c not written).
"""

import json
import os
import signal
import sys
import time
import warnings

import numpy as np


def f(a, b, c):
    return np.sum(np.maximum(a * b + c, 0.0) * np.tanh(a))


def g(a, b, c):
    return np.sum(np.minimum(a * b - c, 0.5) * np.exp(a))


def h(a, b, c):
    return np.sum(np.abs(a - b * c) * np.sin(b))


def _kill_at(step: str) -> None:
    from srcad.build import cache

    real = os.replace

    def replace(src, dst, *a, **k):
        dst = str(dst)
        name = os.path.basename(dst)
        if name.startswith("srcad_k_"):
            if step == "before-replace" and dst.endswith(cache.EXT):
                os.kill(os.getpid(), signal.SIGKILL)
            real(src, dst, *a, **k)
            if step == "after-replace" and dst.endswith(cache.EXT):
                os.kill(os.getpid(), signal.SIGKILL)
            if step == "after-seal" and dst.endswith(".json"):
                os.kill(os.getpid(), signal.SIGKILL)
            return
        real(src, dst, *a, **k)

    os.replace = replace


def main():
    import srcad
    from srcad.build import cache

    if os.environ.get("SRCAD_TEST_KILL_AT"):
        _kill_at(os.environ["SRCAD_TEST_KILL_AT"])
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    steps = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step in os.environ.get("SRCAD_TEST_STEPS", "f").split(","):
            if step.startswith("unlink:"):
                os.unlink(step[len("unlink:"):])
                continue
            fn = {"f": f, "g": g, "h": h}[step]
            t0 = time.monotonic()
            gf = srcad.grad(fn, wrt=(0, 1, 2), fuse=True)
            got = gf(a, b, c)
            elapsed = time.monotonic() - t0
            want = srcad.grad(fn, wrt=(0, 1, 2))(a, b, c)
            steps.append({
                "step": step, "elapsed": elapsed,
                "equal": all(np.array_equal(x, y) for x, y in zip(got, want)),
                "fused": "fused kernel" in srcad.source(gf),
            })
    print(json.dumps({
        "steps": steps,
        "built": [m for m in cache.BUILT if m.startswith("srcad_k_")],
        "warnings": [str(w.message) for w in caught if "srcad" in str(w.message)],
        "events": list(cache.EVENTS),
        "private": [str(p) for p in cache._PRIVATE],
        "ftz": bool(np.float32(1e-39) * np.float32(1.0) == 0),
    }))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
