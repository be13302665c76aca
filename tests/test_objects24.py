"""Issue 23's open classes around objects, recursion and closures: `nonlocal` accumulators in
nested helpers, attribute-dict classes, tensor-wrapper classes with operator dunders,
recursion over a tree of nested tuples, and `sorted(..., key=)` over arrays. One focused test
each, against central differences (and torch where it has the form); each failed before its
fix. Forms srcad cannot follow soundly stay a `SrcadError` at the user's line."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(24)
MODES = ["source", "tape", "fuse"]


def _options(mode):
    return {"fuse": True} if mode == "fuse" else {"mode": mode, "fuse": False}


def _check(fn, args, wrt=0, mode="source", tol=1e-6):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, got = srcad.value_and_grad(fn, wrt=wrt, **_options(mode))(*args)
    assert np.allclose(np.asarray(out), np.asarray(fn(*args)), rtol=1e-12, atol=1e-12)
    want = numerical_grad(fn, args, wrt=wrt)
    got, want = (got, want) if isinstance(wrt, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert np.any(np.asarray(w) != 0)
        assert rel_error(g, w) < tol
    return got


def _refused(fn, args, words, mode="source"):
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(fn, **_options(mode))(*args)
    msg = str(e.value)
    assert __file__.rstrip("c") in msg, msg
    for w in words:
        assert w in msg, msg
    return msg


X43 = R.standard_normal((4, 3))
W3 = R.standard_normal(3)


# ---- 1. `nonlocal` accumulators in a nested helper ------------------------------------------

def _nl_assign(w, X):
    total = 0.0

    def add(term):
        nonlocal total
        total = total + term

    for x in X:
        add(np.tanh(x @ w) ** 2)
    return total / len(X)


def _nl_augassign_counter(w, X):
    total = 0.0
    count = 0

    def add(x):
        nonlocal total, count
        total += np.sin(x @ w) * (count + 1)
        count += 1

    for x in X:
        add(x)
    add(X[0] * 2.0)
    return total / count


def _nl_returns(w, X):
    total = np.zeros(3)

    def step(x):
        nonlocal total
        total = total + x * w
        if x[0] > 0:
            return np.sum(total ** 2)
        return np.sum(np.cos(total))

    acc = 0.0
    for x in X:
        acc = acc + step(x)
    r = step(X[1])
    return acc + r * np.sum(total)


def _nl_list_append(w, X):
    terms = []

    def record(x):
        terms.append(np.tanh(x @ w))

    for x in X:
        record(x)
    return np.sum(np.stack(terms) ** 2)


def _nl_list_nonlocal(w, X):
    terms = []

    def record(x):
        nonlocal terms
        terms = terms + [np.tanh(x @ w)]

    for x in X:
        record(x)
    return np.sum(np.stack(terms) ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [_nl_assign, _nl_augassign_counter, _nl_returns, _nl_list_append,
                                _nl_list_nonlocal],
                         ids=["assign", "augassign+counter", "returns", "list.append",
                              "list-nonlocal"])
def test_nonlocal_accumulator(fn, mode):
    _check(fn, (W3, X43), wrt=0, mode=mode)
    _check(fn, (W3, X43), wrt=(0, 1), mode=mode)


def _nl_in_expression(w, X):
    total = 0.0

    def add(term):
        nonlocal total
        total = total + term
        return total

    return np.sum(add(X[0] @ w) * add(X[1] @ w))


def _nl_as_value(w, X):
    total = 0.0

    def add(term):
        nonlocal total
        total = total + term

    list(map(add, X @ w))
    return total


@pytest.mark.parametrize("fn,line", [(_nl_in_expression, "return np.sum(add(X[0] @ w)"),
                                     (_nl_as_value, "list(map(add, X @ w))")],
                         ids=["in-expression", "as-value"])
def test_nonlocal_writer_refused_where_not_a_statement(fn, line):
    msg = _refused(fn, (W3, X43), ["nonlocal", line])
    assert "total" in msg


def _nl_list_second_name(w, X):
    terms = []
    kept = terms

    def record(x):
        terms.append(np.tanh(x @ w))

    for x in X:
        record(x)
    return np.sum(np.stack(kept) ** 2)


def test_appended_list_with_a_second_name_refused():
    _refused(_nl_list_second_name, (W3, X43), ["second name", "kept = terms"])
