"""Python's tests that carry no gradient: `is`, `is not`, `in`, `not in`, `==` on strings
(issue 22). Each runs as Python runs it, in every transform and mode; its bool is piecewise
constant like `x > 0`'s, so no gradient flows through it whatever its operands. Only `a is b`
of two differentiated values is refused (srcad's copy on write may not keep their identity)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error
from tests import fixtures_pytests as m

RNG = np.random.default_rng(3)
X = RNG.standard_normal(4)
W = RNG.standard_normal((4, 3))
B = RNG.standard_normal(3)

CASES = {
    "y is None": (m.loss, (X,), 0),
    "y is None, given y": (m.loss, (X, X[::-1].copy()), 0),
    "b is not None, b differentiated": (m.dense, (X[None], W, B), (1, 2)),
    "b is not None, b left out": (m.dense, (X[None], W), 1),
    "key in a dict argument": (m.with_options, (X, {"w": X * 2, "scale": 0.5}), 0),
    "key not in a dict argument": (m.with_options, (X, {"w": X * 2, "dropout": 0.1}), 0),
    "string == and not in": (m.mode_switch, (X,), 0),
    "string, other branch": (m.mode_switch, (X, "eval"), 0),
    "a test's bool used as a number": (m.bool_as_number, (X,), 0),
    "int in a tuple, in a loop": (m.membership_of_int, (X, 1), 0),
}
FUSED = {"y is None", "b is not None, b differentiated", "key in a dict argument"}


def _zeros_like(a):
    if isinstance(a, dict):
        return {k: _zeros_like(v) for k, v in a.items()}
    return np.zeros_like(a) if isinstance(a, (np.ndarray, float)) else a


def _fd(fn, args, wrt):
    return numerical_grad(fn, args, wrt=wrt)


@pytest.mark.parametrize("case, how", [
    (case, how) for case in sorted(CASES) for how in ("source", "tape", "fuse", "vjp", "jvp")
    if how != "fuse" or case in FUSED])  # (fused: three cases; each builds kernels, seconds)
def test_python_tests_run_as_python_runs_them(case, how):
    fn, args, wrt = CASES[case]
    want = _fd(fn, args, wrt)
    value = fn(*args)
    if how == "vjp":
        out, pullback = srcad.vjp(fn, *args)
        got = pullback(1.0)
        got = tuple(got[i] for i in wrt) if isinstance(wrt, tuple) else got[wrt]
    elif how == "jvp":
        pos = wrt[0] if isinstance(wrt, tuple) else wrt
        v = np.linspace(0.5, 1.5, np.size(args[pos])).reshape(np.shape(args[pos]))
        tangents = tuple(v if i == pos else _zeros_like(a) for i, a in enumerate(args))
        out, tangent = srcad.jvp(fn, args, tangents)
        want_pos = want[0] if isinstance(wrt, tuple) else want
        assert rel_error(tangent, np.sum(want_pos * v)) < 1e-6
        assert out == value
        return
    else:
        options = {"mode": "tape"} if how == "tape" else {"fuse": True} if how == "fuse" else {}
        out, got = srcad.value_and_grad(fn, wrt=wrt, **options)(*args)
    assert out == value
    assert rel_error(got, want) < 1e-6, (got, want)


def test_identity_of_two_differentiated_values_is_refused():
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(m.identity_of_two)(X)
    assert "fixtures_pytests.py" in str(e.value) and "x is y" in str(e.value)
    assert "None" in (e.value.hint or "")
