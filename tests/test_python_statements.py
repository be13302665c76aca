"""Python statements inside a differentiated function (issue 23, the front door): dict
displays with ``**`` unpacking (srcad/frontend/pylower.py), ``global`` / ``nonlocal``
assignments, ``try`` statements and classes defined in the body. Each case: the value is
what calling the function gives, source and tape agree, and the gradient matches central
differences; where srcad cannot keep Python's meaning, a SrcadError at the user's line that
says what to write instead."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(23)
X = R.standard_normal(4)
P = {"a": R.standard_normal(4), "b": R.standard_normal(4)}
Q = {"b": R.standard_normal(4), "c": R.standard_normal(4)}
MODES = ("source", "tape")


def _check(fn, *args, wrt=0, value=None):
    """`fn`'s value (or `value()`, for a function whose calls change state) and gradient,
    in both modes, against calling it and central differences."""
    want = fn(*args) if value is None else value()
    num = numerical_grad(fn, args, wrt=wrt)
    for mode in MODES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v, g = srcad.value_and_grad(fn, wrt=wrt, mode=mode)(*args)
        assert np.array_equal(np.asarray(v), np.asarray(want)), (mode, v, want)
        assert rel_error(g, num) < 1e-6, (mode, g, num)


# --- {**p, "k": v} --------------------------------------------------------------------------
def override_entry(x, p):
    q = {**p, "b": x * 2.0}
    return np.sum(q["a"] * q["b"]) + np.sum(np.tanh(q["a"]))


def add_entry(x, p):
    q = {**p, "k": np.sin(x)}
    return sum(np.sum(v * v) for v in q.values())


def merge_two(x, p, q):
    r = {**p, **q}  # q's "b" replaces p's (p's b gets no gradient)
    return np.sum(r["a"] * r["b"] * r["c"]) + np.sum(x)


def merge_local(x, p):
    base = {"w": x, "s": np.cos(x)}
    out = {"s": x * x, **base, **p, "w": 3.0 * x}
    keys = list(out)  # Python's order: the first position of each key
    return np.sum(out["w"] * out["s"] * out["a"]) + len(keys)


def nested_display(x, p):
    q = {**{**p, "a": x}, "b": p["b"] * x}
    return np.sum(q["a"] * q["b"])


@pytest.mark.parametrize("fn", [override_entry, add_entry, nested_display])
@pytest.mark.parametrize("wrt", [0, 1])
def test_dict_unpacking_gradient(fn, wrt):
    _check(fn, X, P, wrt=wrt)


@pytest.mark.parametrize("wrt", [0, 1, 2])
def test_two_dicts_merged(wrt):
    _check(merge_two, X, P, Q, wrt=wrt)


@pytest.mark.parametrize("wrt", [0, 1])
def test_local_dict_merged_keeps_order(wrt):
    _check(merge_local, X, P, wrt=wrt)


def test_merged_away_entry_gets_zero():
    for mode in MODES:
        gp = srcad.grad(merge_two, wrt=1, mode=mode)(X, P, Q)
        np.testing.assert_array_equal(gp["b"], np.zeros(4))


def unpack_unknown(x, obj):
    q = {**obj.params, "k": x}
    return np.sum(q["k"])


def test_unpacking_something_else_refused():
    class Holder:
        params = {"k": X}
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(unpack_unknown)(X, Holder())
    assert "test_python_statements.py" in str(info.value)
    assert "{**obj.params" in str(info.value)
