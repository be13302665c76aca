"""A called function changing a list or dict it is given -- `c.append(v)`, `c += [v]`,
`c.pop()`, `c.insert(0, v)`, `c.clear()`, `del d[k]`, `d.pop(k)` -- where the caller passed its
own argument (session of 2026-12-07, twelfth). Python changes the caller's very container, so
the caller, and the next call, read the change. Tape mode gives a callee its own copy of a
container argument (for the callee's gradients) and carried back only items replaced in
place and keys stored: an append, a pop, a deletion were lost -- the caller read the old
length (a wrong value and gradient, silently) and its container was left as it was. Source
mode (`c += [v]` in a callee: the fix of the same session) is checked beside it. And a nested
function appending to the list argument it reads from its enclosing function (`def rec(v):
c.append(v)`): source mode carried the list back as a value, as it does for a list the
function makes, so the caller's list was left as it was (closures.py `_appended_lists`).
A nested function appending a value that depends on the differentiated arguments to the
caller's list is refused, as the same append written in the function itself is."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

X = np.array([0.3, -0.7, 1.1])
MODES = [{}, {"fuse": True}, {"mode": "tape"}]


def appended(c):
    c.append(1.0)


def extended(c):
    c += [2.0, 3.0]


def popped(c):
    return c.pop()


def inserted(c):
    c.insert(0, 4.0)


def cleared(c):
    c.clear()
    c.append(5.0)


def key_deleted(d):
    del d["b"]


def key_popped(d):
    return d.pop("a")


def through_a_list(x, c, change=appended):
    out = change(c)
    extra = out if isinstance(out, float) else 0.0
    return np.sum(np.sin(x) * len(c)) + np.sum(x) * extra + np.sum(x * c[0])


def through_a_dict(x, d, change=key_deleted):
    out = change(d)
    extra = out if isinstance(out, float) else 0.0
    return np.sum(np.sin(x) * len(d)) + np.sum(x) * extra + np.sum(x * sum(d.values()))


def _case(change):
    if change in (key_deleted, key_popped):
        return through_a_dict, (lambda: {"a": 1.5, "b": 2.0, "c": 0.5}), 1
    return through_a_list, (lambda: [0.5, 2.5, 1.5]), 2


@pytest.mark.parametrize("opts", MODES, ids=str)
@pytest.mark.parametrize("change", [appended, extended, popped, inserted, cleared, key_deleted,
                                    key_popped], ids=lambda f: f.__name__)
def test_a_callees_change_reaches_the_callers_container(change, opts):
    fn, make, calls = _case(change)
    g = srcad.value_and_grad(lambda x, c: fn(x, c, change), **opts)
    ours, theirs = make(), make()
    for _ in range(calls):  # (a deleted key: a second call raises, in Python too)
        before = copy.copy(theirs)
        value, grad = g(X.copy(), ours)
        want = fn(X.copy(), theirs, change)
        assert ours == theirs
        assert value == pytest.approx(want, rel=1e-12)
        np.testing.assert_allclose(
            grad, numerical_grad(lambda x: fn(x, copy.copy(before), change), (X.copy(),),
                                 h=1e-6), rtol=1e-6, atol=1e-8)


def appended_by_a_nested_function(x, c):
    def rec(v):
        c.append(v)

    rec(2.0)
    rec(len(c) * 0.5)
    return np.sum(np.sin(x) * len(c)) + np.sum(x * c[-1])


@pytest.mark.parametrize("opts", MODES, ids=str)
def test_a_nested_functions_append_reaches_the_callers_list(opts):
    g = srcad.value_and_grad(appended_by_a_nested_function, **opts)
    ours, theirs = [0.5], [0.5]
    for _ in range(2):
        before = list(theirs)
        value, grad = g(X.copy(), ours)
        want = appended_by_a_nested_function(X.copy(), theirs)
        assert ours == theirs
        assert value == pytest.approx(want, rel=1e-12)
        np.testing.assert_allclose(
            grad, numerical_grad(lambda x: appended_by_a_nested_function(x, list(before)),
                                 (X.copy(),), h=1e-6), rtol=1e-6, atol=1e-8)


def test_a_nested_function_appending_a_differentiated_value_is_refused():
    def kept(x, caches):
        def rec(h):
            caches.append(h)

        rec(np.tanh(x))
        return np.sum(caches[-1] ** 2)

    with pytest.raises(srcad.SrcadError, match="append"):
        srcad.grad(kept)(X.copy(), [])


def _record(x, caches):
    def rec(h):
        caches.append(h)

    rec(np.tanh(x))
    rec(x * 2.0)


def caches_filled_by_a_callees_nested_function(x):
    caches = []
    _record(x, caches)
    return 0.0 + sum(np.sum(c ** 2) for c in caches)


@pytest.mark.parametrize("opts", MODES, ids=str)
def test_a_callees_nested_append_into_the_callers_list_is_refused_not_zero(opts):
    # (the callee's nested function carried `caches` back as its own value: the caller's
    # list stayed empty -- a value of 0.0 and a zero gradient, silently, in source and fused
    # mode on efe9a5c; the same append written in the callee itself was refused already, in
    # every mode)
    with pytest.raises(srcad.SrcadError, match="in place"):
        srcad.grad(caches_filled_by_a_callees_nested_function, **opts)(X.copy())
