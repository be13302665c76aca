"""``{**DEFAULTS, "W": W}``, ``{**self.cfg, ...}`` and ``dict(DEFAULTS, W=W)`` of a dict a
module global or an object holds (session of 2026-12-07).

An autograd-style mixture of Gaussians builds its parameters as ``{**PARAMS, "log
proportions": lp}`` from a module's dict; srcad refused any ``**`` of a dict it did not know
from the call's arguments or its own making ("`**` unpacking of a value srcad does not know to
be a dict"), though ``p = dict(PARAMS); p.update(...)`` ran. Now the dict is read where Python
reads it, at the call, key by key (frontend/pylower.py ``dict_unpacked``), as ``.update`` of it
was: a key the module adds or removes between calls shows at the next call, a later entry
replaces an earlier one in Python's order, and ``{**xs}`` of a list raises Python's TypeError.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from scipy.special import logsumexp

import srcad
from srcad.testing import numerical_grad

MODES = {"source": {}, "fuse": {"fuse": True}, "tape": {"mode": "tape"}}
X = np.array([0.3, -0.7, 1.1])
CFG = {"a": np.array([1.0, 2.0, 3.0]), "b": 2.0}


class Model:
    def __init__(self):
        self.cfg = {"scale": 1.5, "a": np.ones(3)}


MODEL = Model()
PAIRS = [("a", 0.5)]


def display_after_the_global(x):
    p = {**CFG, "a": x}
    return np.sum(p["a"] * p["b"] * np.sin(x))


def global_after_the_display(x):
    p = {"a": x, **CFG}  # (CFG's "a" replaces x: x reaches the output only through `* x`)
    return np.sum(p["a"] * p["b"] * x)


def objects_dict_unpacked(x):
    p = {**MODEL.cfg, "a": x}
    return np.sum(np.tanh(p["a"] * p["scale"]))


def dict_of_a_global_with_keywords(x):
    p = dict(CFG, a=x, c=x * 2.0)
    return np.sum(p["a"] * p["c"]) * p["b"]


def dict_of_pairs_with_keywords(x):
    p = dict(PAIRS, b=x)
    return np.sum(p["a"] * p["b"] ** 2)


def unpacked_twice(x):
    inner = {**CFG, "a": x}
    outer = {**inner, **MODEL.cfg, "b": 3.0}
    return np.sum(outer["a"] * inner["a"] * outer["b"])


FNS = [display_after_the_global, global_after_the_display, objects_dict_unpacked,
       dict_of_a_global_with_keywords, dict_of_pairs_with_keywords, unpacked_twice]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", FNS, ids=lambda f: f.__name__)
def test_held_dict_unpacked(fn, mode):
    value, g = srcad.value_and_grad(fn, **MODES[mode])(X.copy())
    np.testing.assert_allclose(value, fn(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (X.copy(),), h=1e-6), rtol=1e-6,
                               atol=1e-9)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [display_after_the_global, global_after_the_display],
                         ids=lambda f: f.__name__)
def test_keys_and_values_read_at_each_call(fn, mode):
    """The module's dict changes between calls -- a value, a key removed, a key added that
    replaces the differentiated entry: each call computes with the dict as it is then."""
    start = dict(CFG)
    g = srcad.value_and_grad(fn, **MODES[mode])
    try:
        for change in (lambda: None, lambda: CFG.update(b=5.0), lambda: CFG.pop("a"),
                       lambda: CFG.update(a=-np.ones(3), c=1.0)):
            change()
            value, grad = g(X.copy())
            np.testing.assert_allclose(value, fn(X.copy()), rtol=1e-12)
            np.testing.assert_allclose(grad, numerical_grad(fn, (X.copy(),), h=1e-6),
                                       rtol=1e-6, atol=1e-9)
    finally:
        CFG.clear()
        CFG.update(start)


XS = [1.0, 2.0]


def unpacks_a_list(x):
    p = {**XS, "a": x}
    return np.sum(p["a"])


@pytest.mark.parametrize("mode", MODES)
def test_unpacking_a_list_is_pythons_type_error(mode):
    with pytest.raises(TypeError, match="'list' object is not a mapping"):
        srcad.grad(unpacks_a_list, **MODES[mode])(X.copy())


# an autograd-style mixture of Gaussians: its parameters a module's dict, one entry replaced
RS = np.random.RandomState(0)
MOG = {"log proportions": RS.randn(3) * 0.1, "means": RS.randn(3, 2),
       "lower triangles": np.tile(np.eye(2), (3, 1, 1)) + 0.1 * RS.randn(3, 2, 2)}
DATA = RS.randn(7, 2)


def mog_log_likelihood(params, data):
    lls = []
    log_props = params["log proportions"] - logsumexp(params["log proportions"])
    for log_p, mean, cov_sqrt in zip(log_props, params["means"], params["lower triangles"]):
        cov = cov_sqrt.T @ cov_sqrt
        lls.append(log_p + scipy.stats.multivariate_normal.logpdf(data, mean, cov))
    return np.sum(logsumexp(np.vstack(lls), axis=0))


def mog_objective(log_proportions, data):
    return -mog_log_likelihood({**MOG, "log proportions": log_proportions}, data)


@pytest.mark.parametrize("mode", MODES)
def test_mixture_of_gaussians_parameters_unpacked(mode):
    lp = MOG["log proportions"].copy()
    value, g = srcad.value_and_grad(mog_objective, **MODES[mode])(lp, DATA)
    np.testing.assert_allclose(value, mog_objective(lp, DATA), rtol=1e-12)
    np.testing.assert_allclose(g, numerical_grad(mog_objective, (lp, DATA), h=1e-6),
                               rtol=1e-6, atol=1e-9)


def a_calls_result_unpacked(x):
    e = {**dict(a=x * 2.0), "b": x}
    return np.sum(e["b"] * e["a"])


class _Built:
    def __init__(self, W):
        self.params = {"W": W, "s": 2.0}


def an_object_built_here_unpacked(x):
    # (an object built in the function: its dict display with `**` crashed the pass that
    # turns its attributes into locals -- "'NoneType' object has no attribute 'target'")
    h = _Built(x * 1.5)
    q = {**h.params, "x": x}
    return np.sum(q["W"] * q["x"] * q["s"])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [a_calls_result_unpacked, an_object_built_here_unpacked],
                         ids=lambda f: f.__name__)
def test_other_dicts_unpacked(fn, mode):
    value, g = srcad.value_and_grad(fn, **MODES[mode])(X.copy())
    np.testing.assert_allclose(value, fn(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (X.copy(),), h=1e-6), rtol=1e-6,
                               atol=1e-9)


# Karpathy's policy-gradient style: the parameters in a module's dict, a helper reading them.
# Storing a differentiated value into the dict and then calling the helper is refused (srcad
# stores the value, not its gradient); the hint now gives routes that run for a dict read by
# another function -- a dict made in the function and passed on (`{**MODEL_PARAMS, ...}`,
# followed since this session), or the dict itself differentiated -- where it spoke of
# `.extend` (2026-12-07).
MODEL_PARAMS = {"W1": np.eye(3) * 0.5, "W2": np.ones(3)}


def _policy(x):
    return np.dot(MODEL_PARAMS["W2"], np.tanh(np.dot(MODEL_PARAMS["W1"], x)))


def _policy_of(x, params):
    return np.dot(params["W2"], np.tanh(np.dot(params["W1"], x)))


def stored_then_read_by_a_helper(W1, x):
    MODEL_PARAMS["W1"] = W1
    return _policy(x)


def passed_on_as_the_hint_says(W1, x):
    params = {**MODEL_PARAMS, "W1": W1}
    return _policy_of(x, params)


def test_a_module_dict_read_by_a_helper_after_a_store_gives_routes_that_run():
    start = dict(MODEL_PARAMS)
    try:
        with pytest.raises(srcad.SrcadError, match="kept across calls") as e:
            srcad.grad(stored_then_read_by_a_helper)(np.eye(3), X)
        assert "{**MODEL_PARAMS" in e.value.hint and "srcad.grad(loss)(MODEL_PARAMS" in \
            e.value.hint
    finally:
        MODEL_PARAMS.clear()
        MODEL_PARAMS.update(start)
    for mode in MODES:
        W1 = np.eye(3) * 0.7
        g = srcad.grad(passed_on_as_the_hint_says, **MODES[mode])(W1, X)
        np.testing.assert_allclose(g, numerical_grad(passed_on_as_the_hint_says, (W1, X),
                                                     h=1e-6), rtol=1e-6, atol=1e-9)
        gd = srcad.grad(_policy_of, wrt=1, **MODES[mode])(X, dict(MODEL_PARAMS))
        np.testing.assert_allclose(gd["W1"], numerical_grad(
            lambda W: _policy_of(X, {**MODEL_PARAMS, "W1": W}), (MODEL_PARAMS["W1"],),
            h=1e-6), rtol=1e-6, atol=1e-9)
