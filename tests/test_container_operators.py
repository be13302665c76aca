"""Python's operators on dicts and lists: ``d | {...}``, ``lst += [...]`` with a second name
(session of 2026-12-06, ninth).

``defaults | {"W": W}`` (Python 3.9's dict union) was numpy's bitwise or to srcad, a row with
no gradient: the value right, the gradient through the merged dict missing, silently (8x - 1
-> 4x + 1 below). With a dict display on either side it is ``{**defaults, "W": W}`` now
(frontend/pylower.py); ``a | b`` of two names holding dicts is refused where the code is probed
(probe.py). ``a = lst; lst += [v]`` (or ``lst *= 2``) changes the list in place, which ``a``
sees: srcad rebound ``lst`` alone (a wrong value, silently; an IndexError blamed on the user's
code for ``*=``) -- refused now, as ``lst.extend(...)`` with a second name already was.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = {"source": {}, "fuse": {"fuse": True}, "tape": {"mode": "tape"}}
X = np.array([0.3, -0.7, 1.1])


def union_with_a_display(x):
    d = {"a": x}
    merged = d | {"a": x * 4.0, "b": np.sin(x)}
    return np.sum(merged["a"] * x) + np.sum(d["a"]) + np.sum(merged["b"])


def display_union_with_a_name(x):
    d = {"b": x * 3.0}
    merged = {"a": x, "b": x} | d
    return np.sum(merged["a"] * merged["b"])


def list_extended_by_plus_equals(x):
    outs = []
    h = x
    for _ in range(3):
        h = np.tanh(h)
        outs += [h, h * 2.0]
    return np.sum(outs[-1]) + np.sum(outs[0] * outs[3])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [union_with_a_display, display_union_with_a_name,
                                list_extended_by_plus_equals], ids=lambda f: f.__name__)
def test_pythons_operators_on_containers(fn, mode):
    value, g = srcad.value_and_grad(fn, **MODES[mode])(X.copy())
    np.testing.assert_allclose(value, fn(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (X.copy(),), h=1e-6), rtol=1e-6,
                               atol=1e-9)


DEFAULTS = {"scale": 2.0}


def union_of_two_names(x):
    d = {"a": x}
    merged = DEFAULTS | d
    return np.sum(merged["a"] * x) * merged["scale"]


def list_aliased_then_extended(x):
    lst = [x]
    a = lst
    lst += [x * 2.0]
    return np.sum(a[-1] * x) + len(a)


def list_aliased_then_repeated(x):
    lst = [x, x * 2.0]
    a = lst
    lst *= 2
    return np.sum(a[3] * x) + len(a)


@pytest.mark.parametrize("fn,phrase", [
    (union_of_two_names, r"`\|` of a dict or set"),
    (list_aliased_then_extended, r"`lst \+= \.\.\.` changes the list in place"),
    (list_aliased_then_repeated, r"`lst \*= \.\.\.` changes the list in place")],
    ids=lambda v: getattr(v, "__name__", "phrase"))
def test_what_srcad_does_not_follow_is_refused(fn, phrase):
    with pytest.raises(srcad.SrcadError, match=phrase):
        srcad.grad(fn)(X.copy())


PS = [{"mode": "test"}, {"mode": "test"}]


def copied_by_the_dicts_method(x):
    total = 0.0
    for p in PS:
        q = p.copy()
        q["mode"] = "train"
        total = total + np.sum(x ** 2) * (2.0 if q["mode"] == "train" else 1.0)
    return total


def copied_by_dict(x):
    total = 0.0
    for p in PS:
        q = dict(p)
        q["mode"] = "train"
        total = total + np.sum(x ** 2) * (2.0 if q["mode"] == "train" else 1.0)
    return total


def test_a_dicts_copy_method_srcad_read_as_an_arrays_is_refused():
    """`p.copy()` of a dict picked from a module's list when the code runs was numpy's copy
    (a 0-d object array, then an IndexError blamed on the user's code at `q["mode"]`): refused
    where the code is probed now, with the route; the route runs and leaves PS as it was."""
    with pytest.raises(srcad.SrcadError, match="is given a dict here"):
        srcad.grad(copied_by_the_dicts_method)(X.copy())
    for mode in MODES:
        np.testing.assert_allclose(srcad.grad(copied_by_dict, **MODES[mode])(X.copy()),
                                   8 * X, rtol=1e-12)
    assert PS == [{"mode": "test"}, {"mode": "test"}]
