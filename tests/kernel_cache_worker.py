"""One process of tests/test_kernel_cache.py: fuse a small gradient, check it against the
unfused one, print a JSON report. Usage: python tests/kernel_cache_worker.py [START_FILE]
(with a START_FILE, wait until it exists: several workers then start their builds at once)."""

import json
import os
import sys
import time
import warnings

import numpy as np


def f(a, b, c):
    return np.sum(np.maximum(a * b + c, 0.0) * np.tanh(a))


def f_variant(a, b, c):  # SRCAD_TEST_VARIANT: kernels no cache entry has yet
    return np.sum(np.minimum(a * b - c, 0.5) * np.exp(a))


def main():
    if len(sys.argv) > 1:
        import srcad  # noqa: F401  (imported before the start: the builds then race)

        open(f"{sys.argv[1]}.ready.{os.getpid()}", "w").close()
        while not os.path.exists(sys.argv[1]):
            time.sleep(0.005)
    import srcad
    from srcad.build import cache

    fn = f_variant if os.environ.get("SRCAD_TEST_VARIANT") else f
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g2 = srcad.grad(fn, wrt=(0, 1, 2), fuse=True)
        got = g2(a, b, c)
        if os.environ.get("SRCAD_TEST_TWICE"):  # a second module: still one warning
            g2 = srcad.grad(fn, wrt=(0, 1), fuse=True)
            g2(a, b, c)
    want = srcad.grad(fn, wrt=(0, 1, 2))(a, b, c)
    print(json.dumps({
        "equal": all(np.array_equal(x, y) for x, y in zip(got, want)),
        "fused": "fused kernel" in srcad.source(g2),
        "built": [m for m in cache.BUILT if m.startswith("srcad_k_")],
        "warnings": [str(w.message) for w in caught if "srcad" in str(w.message)],
        "dirs": [str(d) for d in cache._DIRS.values()],
    }))


if __name__ == "__main__":
    main()
