"""Python forms srcad refused or got wrong (issue 23), one focused test each, against central
differences; each failed before its fix."""

from __future__ import annotations

import collections
import json
import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(23)
MODES = ["source", "tape", "fuse"]


def _options(mode):
    return {"fuse": True} if mode == "fuse" else {"mode": mode}


def _check(fn, args, wrt=0, mode="source", tol=1e-6):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, got = srcad.value_and_grad(fn, wrt=wrt, **_options(mode))(*args)
    assert np.array_equal(np.asarray(out), np.asarray(fn(*args)))
    want = numerical_grad(fn, args, wrt=wrt)
    got, want = (got, want) if isinstance(wrt, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert rel_error(g, w) < tol


def _check_higher(fn, x, tol=1e-5):
    """vjp, jvp and a Hessian-vector product of a scalar function of one array."""
    v = np.linspace(0.2, -0.4, x.size).reshape(x.shape)
    want = numerical_grad(fn, (x,), wrt=0)
    out, pullback = srcad.vjp(fn, x)
    assert rel_error(pullback(1.0)[0], want) < tol
    _, t = srcad.jvp(fn, (x,), (v,))
    assert abs(t - np.sum(want * v)) < tol * (1 + abs(t))
    g = srcad.grad(fn)
    _, hv = srcad.jvp(g, (x,), (v,))
    assert rel_error(hv, (g(x + 1e-5 * v) - g(x - 1e-5 * v)) / 2e-5) < 1e-4


# ---- c. `for k in d` over a dict a call, a global or an attribute holds --------------------
# (was: the loop walked d[0], d[1], ...: a KeyError, or, for int keys, the values as the keys
# -- a silently wrong gradient)

def _named_weights(n):
    return {"a": 1.5, "b": -0.5}


def _int_keyed(n):
    return {1: 3.0, 0: 2.0}


def _scaled(W):
    return {"a": W * 2.0, "b": np.sin(W)}


def _dict_and_list(W):
    return {"u": W}, [W, 2.0 * W]


CONFIG = {"a": 1.5, "b": 0.5}


class _Holder:
    def __init__(self):
        self.cfg = {2: 1.5, 0: 0.5}


HOLDER = _Holder()


def _from_user_function(x):
    d = _named_weights(3)
    s = 0.0
    for k in d:
        s = s + d[k] * np.sin(x)
    return np.sum(s)


def _int_keys_from_user_function(x):
    d = _int_keyed(3)
    s = 0.0
    for k in d:
        s = s + k * d[k] * np.sin(x)
    return np.sum(s)


def _from_library_call(x):
    d = json.loads('{"a": 1.0, "b": 2.0}')
    s = 0.0
    for k in d:
        s = s + d[k] * x ** 2
    return np.sum(s)


def _counter_keys(x):
    d = collections.Counter([1, 1, 0, 2])
    s = 0.0
    for k in d:
        s = s + k * d[k] * np.sin(x)
    return np.sum(s)


def _global_dict(x):
    s = 0.0
    for k in CONFIG:
        s = s + CONFIG[k] * np.cos(x)
    return np.sum(s)


def _attribute_dict(x):
    s = 0.0
    for k in HOLDER.cfg:
        s = s + k * HOLDER.cfg[k] * np.cos(x)
    return np.sum(s)


def _generator_over_keys(x):
    d = collections.Counter([1, 1, 0, 2])
    return np.sum(sum(k * d[k] * x ** 2 for k in d))


def _dict_of_arrays_from_user_function(x):
    p = _scaled(x)
    s = 0.0
    for k in p:
        s = s + np.sum(p[k] ** 2)
    return s


def _dict_made_in_a_loop(x):
    s = 0.0
    for i in range(2):
        p = _scaled(x * (i + 1))
        if i >= 0:
            for k in p:
                s = s + np.sum(p[k] ** 2)
    return s


def _unpacked_dict_and_list(x):
    d, ws = _dict_and_list(x)
    s = 0.0
    for k in d:
        s = s + np.sum(d[k] * 3.0)
    for w in ws:
        s = s + np.sum(w ** 3)
    return s


def _items_of_a_call(x):
    s = 0.0
    for k, v in _int_keyed(2).items():
        s = s + k * v * np.sin(x)
    return np.sum(s)


DICT_LOOPS = [_from_user_function, _int_keys_from_user_function, _from_library_call,
              _counter_keys, _global_dict, _attribute_dict, _generator_over_keys,
              _dict_of_arrays_from_user_function, _dict_made_in_a_loop,
              _unpacked_dict_and_list, _items_of_a_call]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", DICT_LOOPS, ids=[f.__name__.strip("_") for f in DICT_LOOPS])
def test_for_over_a_dict_a_call_or_a_global_holds_walks_its_keys(fn, mode):
    _check(fn, (R.standard_normal((2, 3)),), mode=mode)


@pytest.mark.parametrize("fn", [_int_keys_from_user_function, _dict_of_arrays_from_user_function,
                                _unpacked_dict_and_list], ids=["int_keys", "arrays", "unpacked"])
def test_for_over_a_dict_a_call_holds_vjp_jvp_hvp(fn):
    _check_higher(fn, R.standard_normal((2, 3)))
