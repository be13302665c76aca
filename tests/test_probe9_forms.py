"""Classes of failure the fourth wild-repositories probe found (tests/corpus_probe/
wild_repos3.py's last xfails and wild_repos4.py), one focused test each, against central
differences; each failed before its fix."""

from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(9)


def _check(fn, args, wrt=0, mode="source", tol=1e-6):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, got = srcad.value_and_grad(fn, wrt=wrt, mode=mode)(*args)
    assert np.array_equal(np.asarray(out), np.asarray(fn(*args)))
    want = numerical_grad(fn, args, wrt=wrt)
    got, want = (got, want) if isinstance(wrt, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert rel_error(g, w) < tol


MODES = ["source", "tape"]


# ---- a helper returning tuples from an if/elif chain whose end Python may reach -----------

def _padding(k, mode="same"):
    if mode == "valid":
        return 0, 0
    elif mode == "same":
        return (k - 1) // 2, k // 2


def _pad_then_conv(x, w, mode="same"):
    lo, hi = _padding(w.size, mode)
    xp = np.pad(x, (lo, hi))
    return np.sum(np.convolve(xp, w, mode="valid") ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["same", "valid"])
def test_tuple_returns_from_an_elif_chain_that_may_fall_off(how, mode):
    """`lo, hi = _padding(...)` where `_padding`'s end may be reached (Python returns None
    there): was 'unpacking the result of a function that does not return a tuple'."""
    _check(lambda x, w: _pad_then_conv(x, w, how), (R.standard_normal(6),
                                                    R.standard_normal(3)), wrt=(0, 1),
           mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_the_none_path_taken_is_pythons_type_error(mode):
    x, w = R.standard_normal(6), R.standard_normal(3)
    with pytest.raises(TypeError, match="cannot unpack non-iterable NoneType"):
        _pad_then_conv(x, w, "full")
    with pytest.raises(TypeError, match="cannot unpack non-iterable NoneType"):
        srcad.grad(_pad_then_conv, mode=mode)(x, w, "full")
