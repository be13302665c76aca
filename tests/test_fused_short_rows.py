"""Fused kernels over short rows with a broadcast operand (kernels_c/srcad_driver.c
`work_rows`): rows shorter than half a block are taken several at a time, and an argument
that is not contiguous over the whole iteration is gathered into scratch rows. One that is
the same row for every row -- a bias, a gain: every outer stride 0 -- is gathered for a
thread's first unit only (issue 25: the small Transformer block's bias adds took 22-25 us
for 256 KB, each of its 512 rows gathering the bias again). What must hold: numpy's bits on
one thread and on two, for every way an operand broadcasts -- the same row everywhere, a row
per outer index along one axis only, one value per row -- whatever the row length and the
number of units each thread takes, in place or into new arrays."""

from __future__ import annotations

import numpy as np
import pytest

from srcad import build
from srcad.lower.standalone import fuse_functions
from tests.kernel_threads import on_threads

# (a numpy loop -- tanh -- inside the kernel gives it scratch: the short-rows path)
SRC = "def kern(x, b):\n    t = x * b + 0.5\n    return np.tanh(t) * t\n"
SRC_INPLACE = "def kern(x, b):\n    x += b\n    return x\n"


def _numpy(x, b):
    t = x * b + 0.5
    return np.tanh(t) * t


def _cases():
    for L in (16, 100, 128, 300):
        for lead in ((700,), (6, 90)):
            shape = lead + (L,)
            bs = [(L,), (1, L), shape, shape[:-1] + (1,)]
            if len(lead) == 2:
                bs += [(1, 1, L), (lead[0], 1, L), (1, lead[1], L), (lead[0], 1, 1)]
            for b in bs:
                yield shape, b


CASES = list(_cases())


@pytest.mark.parametrize("shape,bshape", CASES, ids=[f"{s}-{b}" for s, b in CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_short_rows_broadcast_bits_on_one_and_two_threads(shape, bshape, dtype):
    rng = np.random.default_rng(len(shape) * 1000 + shape[-1] + len(bshape))
    x = rng.standard_normal(shape).astype(dtype)
    b = rng.standard_normal(bshape).astype(dtype)
    [f], _, text = fuse_functions([SRC], [(x, b)], filename="test_fused_short_rows.py")
    assert "fused kernel" in text
    want = _numpy(x, b)
    before = build.stats()["fallbacks"]
    for n in (1, 2):
        with on_threads(n):
            got = f(x, b)
        assert got.dtype == want.dtype and np.array_equal(got, want), n
    assert build.stats()["fallbacks"] == before, build.stats()["last_fallback"]


@pytest.mark.parametrize("L", [16, 128, 300])
def test_short_rows_in_place_bias_add(L):
    """``x += b`` (the fused code's bias add after a product, written over its operand): the
    output goes through scratch rows, the bias is gathered once per thread."""
    rng = np.random.default_rng(L)
    x = rng.standard_normal((8, max(64, 8192 // L + 1), L)).astype(np.float32)  # (one op: a
    # kernel of its own from 64K elements)
    b = rng.standard_normal(L).astype(np.float32)
    [f], _, text = fuse_functions([SRC_INPLACE], [(x.copy(), b)],
                                  filename="test_fused_short_rows.py")
    assert "fused kernel" in text
    for n in (1, 2):
        mine = x.copy()
        with on_threads(n):
            got = f(mine, b)
        assert got is mine and np.array_equal(mine, x + b), n
