"""Functions as values chosen by values srcad specialises on (issue 23's open classes), and
np.ndenumerate / a namedtuple class made in the function: each form refused at the user's line
before srcad/frontend/chosen.py (and parse.py's namedtuple classes). Values equal to calling
the function, gradients against central differences (and torch where it has the function),
in source mode, tape mode and fuse=True."""

from __future__ import annotations

import collections
import inspect
import typing
import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(24)
X = R.standard_normal((4, 3))
W = R.standard_normal((3, 3)) * 0.8
B = R.standard_normal(3)
MODES = ["source", "tape", "fuse"]


def _options(how):
    return {"fuse": True} if how == "fuse" else {"mode": how}


def _check(fn, args, wrt=(0, 1), how="source", tol=1e-6, kwargs=None):
    kwargs = kwargs or {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, got = srcad.value_and_grad(fn, wrt=wrt, **_options(how))(*args, **kwargs)
    assert np.array_equal(np.asarray(out), np.asarray(fn(*args, **kwargs)))
    want = numerical_grad(lambda *a: fn(*a, **kwargs), args, wrt=wrt)
    got, want = (got, want) if isinstance(wrt, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert rel_error(g, w) < tol


def relu(z):
    return np.maximum(z, 0)


# ---- 1. a function bound in a branch on a known value ----------------------------------------

def branch_on_string(x, W, kind="relu"):
    if kind == "relu":
        act = relu
    elif kind == "tanh":
        act = np.tanh
    else:
        act = lambda z: z * 0.5  # noqa: E731
    return np.sum(act(x @ W) ** 2)


def branch_on_int(x, W, n=1):
    if n == 0:
        act = np.sin
    else:
        act = np.tanh
    return np.sum(act(x @ W) ** 2)


def branch_on_bool(x, W, deep=True):
    if deep:
        fs = [np.tanh, relu]  # (a list of functions a loop walks, bound in a branch)
    else:
        fs = [np.sin]
    h = x
    for f in fs:
        h = f(h @ W)
    return np.sum(h ** 2)


KIND = "tanh"


def branch_on_global(x, W):
    act = relu if KIND == "relu" else np.tanh
    return np.sum(act(x @ W) ** 2)


class Config:
    def __init__(self, act):
        self.act = act


CFG = Config("relu")


def branch_on_config_attribute(x, W, cfg=CFG):
    if cfg.act in ("relu", "leaky"):
        act = relu
    elif cfg.act == "tanh":
        act = np.tanh
    return np.sum(act(x @ W) ** 2)


class Net:
    def f_relu(self, z):
        return np.maximum(z, 0)

    def f_tanh(self, z):
        return np.tanh(z)

    def forward(self, x, W, kind):
        act = getattr(self, "f_" + kind)
        return np.sum(act(x @ W) ** 2)


NET = Net()


def method_by_name(x, W, kind="tanh"):
    return NET.forward(x, W, kind)


def conditional_expression(x, W, kind="sin"):
    act = np.tanh if kind == "tanh" else (relu if kind == "relu" else np.sin)
    return np.sum(act(x @ W) ** 2)


def _pick(z, kind="tanh", n=2):
    if kind == "relu":
        f = relu
    elif n == 2:
        f = np.tanh
    return np.sum(f(z) ** 2)


def callee_defaults(x, W):
    return _pick(x @ W) + _pick(x @ W.T, "relu") + _pick(x, "sin", n=2)


ACT_LIST = [np.tanh, relu, np.sin]


def list_indexed_by_int(x, W, i=2):
    fs = (np.cos, relu)
    return np.sum(ACT_LIST[i](x @ W) ** 2) + np.sum(fs[i - 1](x @ W.T))


def branch_in_a_loop_over_names(x, W, kinds=("tanh", "relu", "sin")):
    h = x
    for k in kinds:
        if k == "tanh":
            f = np.tanh
        elif k == "relu":
            f = relu
        else:
            f = np.sin
        h = f(h @ W)
    return np.sum(h)


FORMS_1 = [branch_on_string, branch_on_int, branch_on_bool, branch_on_global,
           branch_on_config_attribute, method_by_name, conditional_expression, callee_defaults,
           list_indexed_by_int, branch_in_a_loop_over_names]


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn", FORMS_1, ids=lambda f: f.__name__)
def test_function_chosen_by_a_known_value(fn, how):
    _check(fn, (X, W), how=how)


@pytest.mark.parametrize("how", MODES)
def test_each_call_gets_its_own_function(how):
    """One transformed function called with another `kind` (a string, an int, a bool)
    differentiates that call's function, as calling the function does."""
    cases = [(branch_on_string, ["relu", "tanh", "id", "relu"]), (branch_on_int, [0, 1, 0]),
             (list_indexed_by_int, [1, 2, 1]), (branch_in_a_loop_over_names, [("sin",),
                                                                           ("relu", "tanh")]),
             (branch_on_bool, [True, False, True]), (method_by_name, ["tanh", "relu"])]
    for fn, kinds in cases:
        g = srcad.value_and_grad(fn, wrt=(0, 1), **_options(how))
        for kind in kinds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out, (dx, dW) = g(X, W, kind)
            assert out == fn(X, W, kind), (fn.__name__, kind)
            nx, nW = numerical_grad(lambda x, w: fn(x, w, kind), (X, W), wrt=(0, 1))
            assert rel_error(dx, nx) < 1e-6 and rel_error(dW, nW) < 1e-6, (fn.__name__, kind)


@pytest.mark.parametrize("how", ["source", "tape"])
def test_rebinding_the_global_or_the_attribute_rebuilds(how):
    global KIND
    g = srcad.grad(branch_on_global, wrt=1, **_options(how))
    h = srcad.grad(branch_on_config_attribute, wrt=1, **_options(how))
    before = g(X, W), h(X, W)
    old = KIND
    try:
        KIND = "relu"
        CFG.act = "tanh"
        after = g(X, W), h(X, W)
        assert rel_error(after[0], numerical_grad(branch_on_global, (X, W), wrt=1)) < 1e-6
        assert rel_error(after[1], numerical_grad(branch_on_config_attribute, (X, W),
                                                  wrt=1)) < 1e-6
        assert not np.allclose(before[0], after[0]) and not np.allclose(before[1], after[1])
    finally:
        KIND = old
        CFG.act = "relu"


def test_against_torch():
    torch = pytest.importorskip("torch")
    for kind, tact in (("relu", torch.relu), ("tanh", torch.tanh)):
        dW = srcad.grad(branch_on_string, wrt=1)(X, W, kind)
        Wt = torch.tensor(W, requires_grad=True)
        torch.sum(tact(torch.tensor(X) @ Wt) ** 2).backward()
        assert rel_error(dW, Wt.grad.numpy()) < 1e-12


def test_vjp_and_grad_of_value_and_grad():
    out, pullback = srcad.vjp(lambda x, w: branch_on_string(x, w, "tanh"), X, W)
    dx, dW = pullback(1.0)
    assert out == branch_on_string(X, W, "tanh")
    assert rel_error(dW, numerical_grad(lambda x, w: branch_on_string(x, w, "tanh"),
                                        (X, W), wrt=1)) < 1e-6
    # higher order: d/dW of the sum of dL/dx
    inner = srcad.grad(branch_on_bool, wrt=0)

    def outer(x, w, deep):
        return np.sum(inner(x, w, deep))

    for deep in (True, False):
        got = srcad.grad(outer, wrt=1)(X[0], W, deep)
        want = numerical_grad(lambda w: np.sum(srcad.grad(branch_on_bool, wrt=0)(X[0], w, deep)),
                              (W,), wrt=0)
        assert rel_error(got, want) < 1e-5


def chosen_by_a_differentiated_value(x, W):
    if np.sum(x @ W) > 0:
        act = relu
    else:
        act = np.tanh
    return np.sum(act(x @ W))


def chosen_by_a_differentiated_key(x, W):
    acts = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh}
    return np.sum(acts["relu" if np.sum(x) > 0 else "tanh"](x @ W))


@pytest.mark.parametrize("how", ["source", "tape"])
def test_a_function_chosen_by_a_differentiated_value(how):
    """Refused until 2026-12-05 (fourth session); now an `if` over the choices at the call
    (frontend/closure_values.py `dispatched_call`), on both sides of the test."""
    for sign in (1.0, -1.0):
        v, g = srcad.value_and_grad(chosen_by_a_differentiated_value, wrt=(0, 1),
                                    **_options(how))(X * sign, W)
        assert v == chosen_by_a_differentiated_value(X * sign, W)
        for a, b in zip(g, numerical_grad(chosen_by_a_differentiated_value, (X * sign, W),
                                          wrt=(0, 1))):
            assert rel_error(a, b) < 1e-6


@pytest.mark.parametrize("how", ["source", "tape"])
def test_a_function_chosen_by_a_differentiated_key_is_refused(how):
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(chosen_by_a_differentiated_key, wrt=(0, 1), **_options(how))(X, W)
    assert e.value.filename == __file__
    lines, first = inspect.getsourcelines(chosen_by_a_differentiated_key)
    calls = [first + i for i, line in enumerate(lines) if "(x @ W)" in line]
    assert e.value.lineno in calls  # (the call of the chosen function)


# ---- 2. a registry chosen by **kwargs, a class chosen by a loop variable --------------------

ACTS = {"elu": lambda z, a=1.0: np.where(z > 0, z, a * (np.exp(z) - 1)),
        "swish": lambda z: z / (1 + np.exp(-z)), "tanh": np.tanh}


def registry_by_kwargs(x, W, **kwargs):
    act = ACTS[kwargs.get("act", "elu")]
    scale = kwargs.get("scale", 2)
    if kwargs.get("square", False):
        return scale * np.sum(act(x @ W) ** 2)
    return scale * np.sum(act(x @ W))


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("kw", [{}, {"act": "swish"}, {"act": "tanh", "square": True},
                                {"scale": 3, "act": "elu"}], ids=str)
def test_registry_chosen_by_kwargs(kw, how):
    _check(registry_by_kwargs, (X, W), how=how, kwargs=kw)


class Block:
    registry: dict = {}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        Block.registry[cls.__name__.lower()] = cls


class Sine(Block):
    def __call__(self, h):
        return np.sin(h)


class Cube(Block):
    def __call__(self, h):
        return h * h * h


def classes_by_loop_variable(x, W, spec=("sine", "cube", "sine")):
    h = x @ W
    for name in spec:
        h = Block.registry[name]()(h)
    return np.sum(h)


def functions_by_loop_variable(x, W):
    h = x
    for name in ["tanh", "swish"]:
        h = ACTS[name](h @ W)
    return np.sum(h) + len(name)


def functions_picked_by_a_comprehension(x, W, kinds=("tanh", "sin", "cos")):
    fs = [getattr(np, k) for k in kinds]
    h = x
    for f in fs:
        h = f(h @ W)
    return np.sum(h)


@pytest.mark.parametrize("how", MODES)
def test_functions_picked_by_a_comprehension_over_names(how):
    _check(functions_picked_by_a_comprehension, (X, W), how=how)
    _check(lambda x, w: functions_picked_by_a_comprehension(x, w, ["cos"]), (X, W), how=how)


@pytest.mark.parametrize("how", MODES)
def test_class_chosen_by_loop_variable(how):
    _check(classes_by_loop_variable, (X, W), how=how)
    _check(lambda x, w: classes_by_loop_variable(x, w, ["cube"]), (X, W), how=how)
    _check(functions_by_loop_variable, (X, W), how=how)


def test_a_new_spec_gets_its_own_code():
    g = srcad.grad(classes_by_loop_variable, wrt=1)
    for spec in (("sine", "cube"), ["cube", "sine", "sine"], ("cube",)):
        assert rel_error(g(X, W, spec), numerical_grad(
            lambda w: classes_by_loop_variable(X, w, spec), (W,), wrt=0)) < 1e-5


# ---- 3. a dict of lambdas made in the function ----------------------------------------------

def dict_of_lambdas(x, W, name="relu"):
    acts = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh, "sq": lambda z: z * z}
    h = acts[name](x @ W)
    return np.sum(acts["sq"](h))


def dict_display_by_kwargs(x, W, **kw):
    act = {"a": np.tanh, "b": np.sin, "c": relu}[kw.get("k", "a")]
    return np.sum(act(x @ W))


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("kw", [{}, {"k": "b"}, {"k": "c"}], ids=str)
def test_dict_display_indexed_by_kwargs(kw, how):
    _check(dict_display_by_kwargs, (X, W), how=how, kwargs=kw)


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("name", ["relu", "tanh", "sq"])
def test_dict_of_lambdas(name, how):
    _check(lambda x, w: dict_of_lambdas(x, w, name), (X, W), how=how)
    _check(dict_of_lambdas, (X, W, name), how=how)


# ---- 3b. displays of functions walked through zip / enumerate / dict views -------------------

def zip_functions_and_weights(x, W):
    h = x
    for f, w in zip([np.tanh, relu, np.sin], [W, W.T, W * 0.5]):
        h = f(h @ w)
    return np.sum(h)


def enumerate_functions(x, W):
    acts = (np.tanh, np.sin, relu)
    h = x
    for i, f in enumerate(acts, start=1):
        h = f(h @ W) * i
    return np.sum(h)


def dict_views_of_functions(x, W):
    acts = {"a": np.tanh, "b": relu, "c": np.cos}
    t = 0.0
    for k, f in acts.items():
        t = t + np.sum(f(x @ W)) * len(k)
    h = x
    for f in acts.values():
        h = f(h @ W)
    return t + np.sum(h)


def display_items_rebound(x, W):
    ws = [W, W.T]
    W = W * 2  # (the display holds the old W: a copy of it at the loop would read this one)
    h = x
    for f, w in zip([np.tanh, np.sin], ws):
        h = f(h @ w)
    return np.sum(h) + np.sum(W)


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn", [zip_functions_and_weights, enumerate_functions,
                                dict_views_of_functions], ids=lambda f: f.__name__)
def test_functions_walked_through_zip_enumerate_and_dict_views(fn, how):
    _check(fn, (X, W), how=how)


@pytest.mark.parametrize("how", MODES)
def test_a_display_whose_items_were_rebound_is_not_copied(how):
    """The right gradient or a refusal, never the loop reading the rebound W."""
    try:
        _check(display_items_rebound, (X, W), how=how)
    except srcad.SrcadError as e:
        assert "`f` has no derivative rule" in str(e)


# ---- 4. np.ndenumerate -----------------------------------------------------------------------

def ndenumerate_weighted(w, x):
    total = 0.0
    for idx, v in np.ndenumerate(x):
        total += w[idx] * v
    return total


def ndenumerate_into(x, W):
    out = np.zeros_like(x)
    for idx, v in np.ndenumerate(x @ W):
        out[idx] = np.sin(v) * (idx[0] + 1)
    return np.sum(out ** 2)


def ndenumerate_pairs(A, x):
    t = 0.0
    for (i, j), v in np.ndenumerate(A * 2):
        t = t + v * x[j] * (i + 1)
    return t


def ndenumerate_list(x, W):
    t = 0.0
    for idx, v in np.ndenumerate([x[0] @ W, x[1] * 3]):
        t = t + v ** 2 * (idx[1] + 1)
    return t


@pytest.mark.parametrize("how", MODES)
def test_ndenumerate(how):
    _check(ndenumerate_weighted, (W, X[:3]), how=how)
    _check(ndenumerate_into, (X, W), how=how)
    _check(ndenumerate_pairs, (W, X[0]), how=how)
    _check(ndenumerate_list, (X, W), how=how)


def test_ndenumerate_in_the_census():
    from srcad.analysis.census import census

    entry = {e.name: e for e in census()}["np.ndenumerate"]
    assert entry.kind == "differentiated" and "ndindex" in entry.reason


# ---- 5. a namedtuple class made in the function ----------------------------------------------

def namedtuple_made_here(W, b, x):
    Params = collections.namedtuple("Params", "W b")
    p = Params(W, b)
    return np.sum(np.tanh(x @ p.W + p.b) ** 2)


def typed_namedtuple_made_here(W, b, x):
    Layer = typing.NamedTuple("Layer", [("W", np.ndarray), ("b", np.ndarray)])
    layers = [Layer(W, b), Layer(W.T, b * 2)]
    h = x
    for layer in layers:
        h = np.tanh(h @ layer.W + layer.b)
    return np.sum(h)


def namedtuple_class_statement_here(W, b, x):
    class Pair(typing.NamedTuple):
        W: np.ndarray
        b: np.ndarray

    p = Pair(W, b)
    return np.sum(np.tanh(x @ p.W + p.b))


def namedtuple_replace_and_defaults(W, b, x):
    from collections import namedtuple

    P = namedtuple("P", ["W", "b", "scale"], defaults=(0.5,))
    p = P(W=W, b=b)
    q = p._replace(b=p.b * 2)
    Wq, bq, s = q
    return np.sum(np.tanh(x @ Wq + bq) * s) + np.sum(q[0]) * p.scale


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn", [namedtuple_made_here, typed_namedtuple_made_here,
                                namedtuple_class_statement_here,
                                namedtuple_replace_and_defaults],
                         ids=lambda f: f.__name__)
def test_namedtuple_class_made_in_the_function(fn, how):
    _check(fn, (W, B, X), how=how)


# ---- soundness: a value that changes during the call is not folded ---------------------------

class Switch:
    def __init__(self):
        self.kind = "relu"

    def flip(self):
        self.kind = "tanh" if self.kind == "relu" else "relu"


def mode_changed_by_a_method(x, W, sw):
    sw.flip()  # (the attribute the test reads changes here, in the call)
    if sw.kind == "relu":
        act = relu
    else:
        act = np.tanh
    return np.sum(act(x @ W) ** 2)


def names_appended_to(x, W, spec=("sine",)):
    spec = list(spec)
    spec.append("cube")
    h = x @ W
    for name in spec:
        h = Block.registry[name]()(h)
    return np.sum(h)


@pytest.mark.parametrize("how", ["source", "tape"])
def test_values_changed_in_the_call_are_not_folded(how):
    """Never the branch the value had before the call: the right gradient or a refusal."""
    for fn, make in ((mode_changed_by_a_method, lambda: (X, W, Switch())),
                     (names_appended_to, lambda: (X, W))):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = srcad.grad(fn, wrt=1, **_options(how))(*make())
        except srcad.SrcadError:
            continue
        want = numerical_grad(lambda w: fn(make()[0], w, *make()[2:]), (W,), wrt=0)
        assert rel_error(got, want) < 1e-5, fn.__name__


def _jvp_kind(x, kind):
    return branch_on_string(x, W, kind)


def _jvp_kwargs(x):
    return registry_by_kwargs(x, W, act="swish", square=True)


def _jvp_forms(x):
    return ndenumerate_into(x, W) + namedtuple_made_here(W, B, x) + \
        classes_by_loop_variable(x, W) + dict_of_lambdas(x, W, "tanh")


def test_jvp_of_the_forms():
    v = R.standard_normal(X.shape)
    for f, extra in ((_jvp_kind, ("relu",)), (_jvp_kind, ("tanh",)), (_jvp_kind, ("id",)),
                     (_jvp_kwargs, ()), (_jvp_forms, ())):
        out, t = srcad.jvp(lambda x: f(x, *extra), (X,), (v,)) if False else \
            srcad.jvp(f, (X, *extra), (v, *(None for _ in extra)))
        assert out == f(X, *extra)
        want = np.sum(numerical_grad(f, (X, *extra), wrt=0) * v)
        assert abs(t - want) < 1e-6 * max(1.0, abs(want)), (f.__name__, extra)


def lambda_branch_on_kwargs(x, W, **kw):
    if kw.get("act", "lin") == "tanh":
        act = np.tanh
    else:
        act = lambda z: 0.5 * z  # noqa: E731
    return np.sum(act(x @ W) ** 2)


@pytest.mark.parametrize("how", MODES)
def test_lambda_in_a_branch_on_kwargs(how):
    """The transform is made before any call (the test reads **kwargs): it waits for the
    first call's arguments instead of refusing the lambda bound in a branch."""
    g = srcad.value_and_grad(lambda_branch_on_kwargs, wrt=(0, 1), **_options(how))
    for kw in ({}, {"act": "tanh"}, {}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out, got = g(X, W, **kw)
        assert out == lambda_branch_on_kwargs(X, W, **kw)
        want = numerical_grad(lambda x, w: lambda_branch_on_kwargs(x, w, **kw), (X, W),
                              wrt=(0, 1))
        assert all(rel_error(a, b) < 1e-6 for a, b in zip(got, want))
