"""Row kernels through a last-axis max or min (the softmax's `np.max(x, axis=-1,
keepdims=True)`): bit for bit np.max / np.min, ties of -0.0 and +0.0 included.

The kernel takes a row's first value and hands the rest to numpy's own maximum / minimum
loop in reduce mode, as np.max does (numpy's SIMD lanes decide which zero a tie of -0.0 and
+0.0 gives, so no other order is right). Each case runs one fused chain -- the extremum,
its use along the row, the extremum written out -- on rows of every length from 2 to 140
and some longer ones, with ties of zeros of both signs at every pair of positions, NaNs,
infinities, and random values, float32 and float64, and compares with numpy: the row value
bit for bit (the sign of zero included), NaN positions exactly. No call may take the Python
fallback. A strided input must take the fallback and still agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from srcad import build
from srcad.lower import batch
from srcad.lower.standalone import fuse_functions

try:
    build.runtime()
    HAVE_CC = True
except build.CompilerUnavailable:
    HAVE_CC = False
pytestmark = pytest.mark.skipif(not HAVE_CC, reason="no C compiler")

SRC = '''
def f(x):
    m = np.{fn}(x, axis=-1, keepdims=True)
    y = x - m
    return m, y * 2.0
'''


def _bits_equal(a, b) -> bool:
    na, nb = np.isnan(a), np.isnan(b)
    return (a.shape == b.shape and a.dtype == b.dtype and np.array_equal(na, nb) and
            np.where(na, 0, a).tobytes() == np.where(nb, 0, b).tobytes())


def _rows(L, dtype, rng):
    rows = []
    for i in range(0, L, max(1, L // 9)):  # a tie of -0.0 and +0.0 at (i, j), the rest < 0
        for j in range(0, L, max(1, L // 7)):
            if i != j:
                r = -np.abs(rng.standard_normal(L)) - 1
                r[i], r[j] = -0.0, 0.0
                rows.append(r)
                rows.append(-r)  # the same for min (and its mirror for max)
    rows.append(np.where(np.arange(L) % 3 == 0, 0.0, -0.0))
    rows.append(np.where(np.arange(L) % 2 == 0, -0.0, 0.0))
    r = rng.standard_normal(L)
    r[L // 2] = np.nan
    rows.append(r)
    rows.append(np.full(L, np.inf))
    r = rng.standard_normal(L)
    r[0], r[-1] = np.inf, -np.inf
    rows.append(r)
    rows += [rng.standard_normal(L) for _ in range(3)]
    return np.array(rows).astype(dtype)


LENGTHS = list(range(2, 41)) + [63, 64, 65, 127, 128, 129, 257, 1000]
SLOW_LENGTHS = list(range(41, 141)) + [255, 256, 4099]


def _check(fn, dtype, lengths):
    rng = np.random.default_rng(0)
    cases = []
    with batch():  # one compiler run for every length
        for L in lengths:
            x = _rows(L, dtype, rng)
            (fused,), lowered, text = fuse_functions([SRC.format(fn=fn)], [(x,)])
            code = [ln for ln in text.split("def f")[1].splitlines()
                    if not ln.lstrip().startswith("#")]
            assert lowered is not None and not any(f"np.{fn}(" in ln for ln in code), text
            cases.append((L, x, fused))
    before = build.stats()["fallbacks"]
    for L, x, fused in cases:
        with np.errstate(invalid="ignore"):
            m, y = fused(x)
            m0 = getattr(np, fn)(x, axis=-1, keepdims=True)
            y0 = (x - m0) * 2.0
        assert _bits_equal(m, m0), (L, fn)
        assert _bits_equal(y, y0), (L, fn)
    assert build.stats()["fallbacks"] == before, build.stats()


@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bitwise_np_max_min_on_rows(fn, dtype):
    _check(fn, dtype, LENGTHS)


@pytest.mark.slow
@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bitwise_np_max_min_on_more_row_lengths(fn, dtype):
    _check(fn, dtype, SLOW_LENGTHS)


def test_strided_rows_take_the_fallback_and_agree():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 40)).astype(np.float32)
    (fused,), _, _ = fuse_functions([SRC.format(fn="max")], [(x[:, ::2],)])
    before = build.stats()["fallbacks"]
    m, y = fused(x[:, ::2])
    assert build.stats()["fallbacks"] == before + 1
    assert _bits_equal(m, np.max(x[:, ::2], axis=-1, keepdims=True))
