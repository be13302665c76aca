"""`np.array(a, copy=False)` / `copy=None` is `a` itself where no copy is needed (numpy 2:
copy=False never copies, copy=None copies only if it must) -- numpy's asarray. srcad read
every `np.array` as a copy, so `x = np.array(a, copy=False); x[0] = 0.0` then a read of `a`
gave a wrong gradient, silently (relative error 0.98 against finite differences, session of
2026-12-06, fifth); a module's array written through it, zeros. Now the call is numpy's
asarray (frontend/expressions.py `op_call`): the write is refused where `a` is read after it,
as for `np.asarray` (in tape mode too), also where `copy` is a flag the caller passes; every
other use differentiates as before."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 4))
GW = RNG.standard_normal((4, 5))


def written_then_read(W, X, copy):
    a = W * 2.0
    x = np.array(a, copy=copy)
    x[0] = 0.0
    return np.sum(np.tanh(X @ a))


def global_loss(X):
    return np.sum(np.sin(X @ GW))


def into_a_modules_array(W, X):
    x = np.array(GW, copy=False)
    x[:] = W
    return global_loss(X)


def read_only(W, X, copy):
    a = np.array(W, copy=copy) * 2.0
    b = np.array([W[0], W[1]], copy=None)
    return np.sum(np.tanh(X @ a)) + np.sum(b ** 2)


@pytest.mark.parametrize("copy", [False, None])
@pytest.mark.parametrize("fuse", [False, True])
def test_a_write_through_it_is_refused_where_the_array_is_read_after(copy, fuse):
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(written_then_read, fuse=fuse)(RNG.standard_normal((4, 5)), X, copy)
    assert e.value.lineno == written_then_read.__code__.co_firstlineno + 3


def test_a_modules_array_written_through_it_is_refused():
    start = GW.copy()
    try:
        with pytest.raises(srcad.SrcadError) as e:
            srcad.grad(into_a_modules_array)(RNG.standard_normal((4, 5)), X)
        assert "a module global or an object holds" in str(e.value)
    finally:
        GW[...] = start


@pytest.mark.parametrize("copy", [False, None])
def test_tape_mode_refuses_it_too(copy):  # (its normalised code is the same)
    with pytest.raises(srcad.SrcadError):
        srcad.grad(written_then_read, mode="tape")(RNG.standard_normal((4, 5)), X, copy)


@pytest.mark.parametrize("copy", [True, False, None])
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_other_uses_differentiate_as_before(copy, mode):
    W = RNG.standard_normal((4, 5))
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    value, g = srcad.value_and_grad(read_only, **options)(W, X, copy)
    assert value == pytest.approx(read_only(W, X, copy), rel=1e-12)
    fd = numerical_grad(read_only, (W, X, copy))
    for idx in ((0, 1), (1, 4), (3, 0)):
        assert g[idx] == pytest.approx(fd[idx], rel=1e-5, abs=1e-7)
