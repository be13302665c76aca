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


# ---- b. recursion whose depth the static arguments fix --------------------------------------
# (was: "`f` calls itself (directly or through other functions): srcad does not differentiate
# recursion")

def _forward(x, layers):
    if not layers:
        return x
    return _forward(np.tanh(x @ layers[0]), layers[1:])


def _mlp_of_a_display(x, W1, W2):
    return np.sum(_forward(x, [W1, W2]) ** 2)


def _mlp_of_a_list_argument(x, layers):
    return np.sum(_forward(x, layers) ** 2)


def _sines(x, n):
    return x if n == 0 else _sines(np.sin(x), n - 1)


def _sines_3(x):
    return np.sum(_sines(x, 3))


def _sines_of_an_int_argument(x, n):
    return np.sum(_sines(x, n) * x)


def _summed_sines(x, n):
    return np.sum(_summed_sines(np.sin(x), n - 1)) if n > 0 else np.sum(x ** 2)


def _even(x, n):
    return x if n <= 0 else _odd(np.tanh(x), n - 1)


def _odd(x, n):
    return _even(x * 1.5, n)


def _mutual(x):
    return np.sum(_even(x, 4) ** 2)


def _tree(x, depth):
    if depth == 0:
        return np.tanh(x)
    return _tree(x * 0.9, depth - 1) * _tree(x + 0.1, depth - 1)


def _binary_tree(x):
    return np.sum(_tree(x, 3))


def _accumulating(x, n):
    if n <= 1:
        return x
    y = _accumulating(x, n - 1)
    return y * np.cos(x) + n


def _accumulating_5(x):
    return np.sum(_accumulating(x, 5))


class _Chain:
    def __init__(self, Ws):
        self.Ws = Ws

    def forward(self, x, i=0):
        if i == len(self.Ws):
            return x
        return self.forward(np.tanh(x @ self.Ws[i]), i + 1)


CHAIN = _Chain([R.standard_normal((3, 3)) * 0.5, R.standard_normal((3, 2)) * 0.5])


def _method_of_a_global_object(x):
    return np.sum(CHAIN.forward(x) ** 2)


X23 = R.standard_normal((4, 3))
W23 = (R.standard_normal((3, 3)) * 0.5, R.standard_normal((3, 2)) * 0.5)
RECURSIONS = {
    "mlp_display": (_mlp_of_a_display, (X23, *W23), (1, 2)),
    "mlp_list_argument": (lambda x, W1, W2: _mlp_of_a_list_argument(x, [W1, W2]),
                          (X23, *W23), (1, 2)),
    "int_constant": (_sines_3, (X23,), 0),
    "int_argument": (_sines_of_an_int_argument, (X23, 3), 0),
    "transformed_itself": (_summed_sines, (X23, 3), 0),
    "mutual": (_mutual, (X23,), 0),
    "binary_tree": (_binary_tree, (X23,), 0),
    "result_used_after": (_accumulating_5, (X23,), 0),
    "method_default_int": (_method_of_a_global_object, (X23,), 0),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(RECURSIONS))
def test_recursion_of_static_depth(name, mode):
    fn, args, wrt = RECURSIONS[name]
    _check(fn, args, wrt=wrt, mode=mode)


def test_recursion_list_argument_at_the_root():
    """The transformed function is handed the list: the first call's length tells."""
    _check(_mlp_of_a_list_argument, (X23, list(W23)), wrt=0)
    g = srcad.grad(_mlp_of_a_list_argument)
    assert g(X23, [W23[0]]).shape == X23.shape  # (another length: another specialisation)
    assert rel_error(g(X23, [W23[0]]), numerical_grad(_mlp_of_a_list_argument,
                                                      (X23, [W23[0]]), wrt=0)) < 1e-6


@pytest.mark.parametrize("name", ["int_constant", "binary_tree", "method_default_int"])
def test_recursion_vjp_jvp_hvp(name):
    fn, args, _ = RECURSIONS[name]
    _check_higher(fn, args[0])


def _deep(x):
    return np.sum(_sines(x, 40))


def test_recursion_forty_levels_and_grad_of_grad():
    x = np.linspace(-1, 1, 5)
    _check(_deep, (x,))
    _check_higher(_deep, x)
    gg = srcad.grad(lambda x: np.sum(srcad.grad(_deep)(x) ** 2))(x)
    assert rel_error(gg, numerical_grad(lambda x: np.sum(srcad.grad(_deep)(x) ** 2),
                                        (x,), wrt=0)) < 1e-5


def _halve(x):
    if np.sum(x ** 2) < 0.01:
        return x
    return _halve(x / 2)


def _depth_on_a_value(x):
    return np.sum(_halve(x))


def _too_deep(x):
    return np.sum(_sines(x, 100))


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn,says", [(_depth_on_a_value, "how deep it goes is not known"),
                                     (_too_deep, "more than 48 levels deep")],
                         ids=["on_a_value", "too_deep"])
def test_recursion_refused_at_its_line(fn, says, mode):
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(fn, mode=mode)(np.linspace(-1, 1, 4))
    assert says in str(e.value) and __file__ in str(e.value)
    assert e.value.lineno is not None


# ---- a. objects built per key of a dict argument --------------------------------------------
# (was: "`Parameter` has no derivative rule ... an object built inside a lazily evaluated
# expression" / "an object stored into a container srcad does not follow")

class _Param:
    def __init__(self, weight, name=None):
        self.weight = weight
        self.name = name


def _read(weights, key):
    return weights["W" + key].weight, weights["b" + key].weight


def _dict_comprehension_over_items(params, x):
    weights = {k: _Param(v, name=k) for k, v in params.items()}
    W, b = _read(weights, "q")
    return np.sum(np.tanh(x @ W + b)) + np.sum(weights["Wk"].weight ** 2)


def _dict_comprehension_over_keys(params, x):
    weights = {k: _Param(params[k] * 2.0, name=k) for k in params}
    return np.sum(np.tanh(x @ weights["Wq"].weight + weights["bq"].weight) ** 2)


def _list_comprehension_over_values(params, x):
    ps = [_Param(v) for v in params.values()]
    return sum(np.sum(p.weight ** 2) for p in ps) + np.sum(x @ ps[0].weight)


def _loop_storing_per_key(params, x):
    weights = {}
    for k in params:
        weights[k] = _Param(params[k], name=k)
    W, b = _read(weights, "q")
    return np.sum(np.sin(x @ W + b))


def _params23(keys=("Wq", "bq", "Wk")):
    shapes = {"W": (3, 3), "b": (3,)}
    return {k: R.standard_normal(shapes[k[0]]) for k in keys}


KEYED = [_dict_comprehension_over_items, _dict_comprehension_over_keys,
         _list_comprehension_over_values, _loop_storing_per_key]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", KEYED, ids=[f.__name__.strip("_") for f in KEYED])
def test_objects_built_per_key_of_a_dict_argument(fn, mode):
    params, x = _params23(), R.standard_normal((4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, got = srcad.value_and_grad(fn, **_options(mode))(params, x)
    assert np.array_equal(out, fn(params, x))
    want = numerical_grad(fn, (params, x), wrt=0)
    assert list(got) == list(params)
    for k in params:
        assert rel_error(got[k], want[k]) < 1e-6, k


def test_objects_built_per_key_other_keys_rebuild():
    """The code is specialised on the keys: a dict with other keys gets code of its own."""
    g = srcad.grad(_list_comprehension_over_values)
    x = R.standard_normal((4, 3))
    for keys in [("Wq", "bq", "Wk"), ("Wq", "bk"), ("Wq", "bq", "Wk", "bk")]:
        params = _params23(keys)
        got = g(params, x)
        want = numerical_grad(_list_comprehension_over_values, (params, x), wrt=0)
        assert list(got) == list(keys)
        for k in keys:
            assert rel_error(got[k], want[k]) < 1e-6, k


def test_objects_built_per_key_vjp_jvp():
    params, x = _params23(), R.standard_normal((4, 3))
    fn = _dict_comprehension_over_items
    want = numerical_grad(fn, (params, x), wrt=0)
    out, pullback = srcad.vjp(fn, params, x)
    got = pullback(1.0)[0]
    for k in params:
        assert rel_error(got[k], want[k]) < 1e-6, k
    tangent = {k: np.full_like(v, 0.1) for k, v in params.items()}
    _, t = srcad.jvp(fn, (params, x), (tangent, np.zeros_like(x)))
    assert abs(t - sum(np.sum(want[k] * tangent[k]) for k in params)) < 1e-6


def _penalty_in_a_helper(params, x):
    weights = {k: _Param(v, name=k) for k, v in params.items()}
    return np.sum(np.tanh(x @ weights["Wq"].weight + weights["bq"].weight))


def _objects_built_in_a_callee(params, x):
    return _penalty_in_a_helper(params, x) * 2.0


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_objects_built_per_key_in_a_callee(mode):
    params, x = _params23(), R.standard_normal((4, 3))
    got = srcad.grad(_objects_built_in_a_callee, mode=mode)(params, x)
    want = numerical_grad(_objects_built_in_a_callee, (params, x), wrt=0)
    for k in params:
        assert rel_error(got[k], want[k]) < 1e-6, k


# ---- a. a generator method of a built object over its attributes ----------------------------
# (was: "`TwoLayer` has no derivative rule ... the object is handed to a function or operator
# srcad does not follow into")

class _Module:
    def parameters(self):
        for name in sorted(vars(self)):
            v = getattr(self, name)
            if isinstance(v, np.ndarray):
                yield v
            elif isinstance(v, _Module):
                yield from v.parameters()


class _Dense(_Module):
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return x @ self.W + self.b


class _Two(_Module):
    def __init__(self, W1, b1, W2, b2):
        self.l1 = _Dense(W1, b1)
        self.l2 = _Dense(W2, b2)

    def __call__(self, x):
        return self.l2(np.tanh(self.l1(x)))


class _Pair:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def params(self):
        yield self.W
        yield self.b * 2.0


def _penalised(W1, b1, W2, b2, x):
    net = _Two(W1, b1, W2, b2)
    return np.mean(net(x) ** 2) + 1e-2 * sum(np.sum(p ** 2) for p in net.parameters())


def _loop_over_parameters(W1, b1, W2, b2, x):
    net = _Two(W1, b1, W2, b2)
    total = np.sum(net(x))
    for p in net.parameters():
        total = total + np.sum(np.sin(p))
    return total


def _listed_parameters(W1, b1, W2, b2, x):
    net = _Two(W1, b1, W2, b2)
    ps = list(net.parameters())
    return np.sum(net(x)) + np.sum(ps[1] ** 2) * len(ps)


def _plain_generator_method(W1, b1, W2, b2, x):
    pair = _Pair(W1, b1)
    return sum(np.sum(np.cos(p)) for p in pair.params()) + np.sum(x @ W1) + np.sum(W2 * b2)


GENERATED = [_penalised, _loop_over_parameters, _listed_parameters, _plain_generator_method]
ARGS_GEN = (R.standard_normal((3, 4)) * 0.5, R.standard_normal(4) * 0.1,
            R.standard_normal((4, 2)) * 0.5, R.standard_normal(2) * 0.1,
            R.standard_normal((5, 3)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", GENERATED, ids=[f.__name__.strip("_") for f in GENERATED])
def test_generator_method_over_the_objects_attributes(fn, mode):
    _check(fn, ARGS_GEN, wrt=(0, 1, 2, 3), mode=mode)


def test_generator_method_vjp_jvp():
    fn = _penalised
    want = numerical_grad(fn, ARGS_GEN, wrt=(0, 1, 2, 3))
    out, pullback = srcad.vjp(fn, *ARGS_GEN)
    for g, w in zip(pullback(1.0)[:4], want):
        assert rel_error(g, w) < 1e-6
    tangents = tuple(np.full_like(a, 0.1) for a in ARGS_GEN[:4]) + (np.zeros_like(ARGS_GEN[4]),)
    _, t = srcad.jvp(fn, ARGS_GEN, tangents)
    assert abs(t - sum(np.sum(w * 0.1) for w in want)) < 1e-6


class _Slope(_Module):
    def __init__(self):
        self.slope = np.array([0.5])

    def __call__(self, z):
        return np.maximum(z, self.slope * z)


SLOPE = _Slope()


class _Activated(_Dense):
    def __init__(self, W, b, act):
        super().__init__(W, b)
        self.act = act


def _existing_object_in_an_attribute(W1, b1, W2, b2, x):
    # (SLOPE is an object srcad does not build: `isinstance(v, _Module)` of it is not folded,
    # and its generator is not followed -- never its parameters silently left out)
    d = _Activated(W1, b1, SLOPE)
    return np.sum(d.act(d(x))) + sum(np.sum(p ** 2) for p in d.parameters())


def test_generator_method_reaching_an_existing_object_is_refused_at_its_line():
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(_existing_object_in_an_attribute)(*ARGS_GEN)
    assert __file__ in str(e.value)


# ---- a. closures a user function returns ------------------------------------------------------
# (was: "`f` has no derivative rule in srcad" at the call of the closure, or "`<ufunc 'tanh'>`
# (ufunc) used as a value" for a list of them)

def _make_act(kind):
    def act(z):
        if kind == "tanh":
            return np.tanh(z)
        return np.maximum(z, 0.1 * z)
    return act


def _make_dense(W, b, act=np.tanh):
    def layer(x):
        return act(x @ W + b)
    return layer


def _make_scaled(W, scale):
    W2 = W * scale
    return lambda x: np.sin(x @ W2)


def _activation_by_name(W1, b1, W2, b2, x):
    act = _make_act("tanh")
    leaky = _make_act("leaky")
    return np.sum(leaky(act(x @ W1 + b1) @ W2 + b2) ** 2)


def _closure_over_arrays(W1, b1, W2, b2, x):
    f = _make_dense(W1, b1)
    g = _make_dense(W2, b2, act=lambda z: z)
    return np.sum(g(f(x)) ** 2) + np.sum(f(x * 0.5))


def _closures_in_a_list(W1, b1, W2, b2, x):
    net = [_make_dense(W1, b1), _make_dense(W2, b2, act=lambda z: z)]
    h = x
    for f in net:
        h = f(h)
    return np.sum(h ** 2)


def _returned_lambda(W1, b1, W2, b2, x):
    f = _make_scaled(W1, 2.0)
    return np.sum(f(x) * b1) + np.sum(W2 * b2)


FACTORIES = [_activation_by_name, _closure_over_arrays, _closures_in_a_list, _returned_lambda]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", FACTORIES, ids=[f.__name__.strip("_") for f in FACTORIES])
def test_closure_returned_by_a_user_function(fn, mode):
    _check(fn, ARGS_GEN, wrt=(0, 1, 2, 3), mode=mode)


def test_closure_returned_by_a_user_function_vjp_jvp():
    fn = _closures_in_a_list
    want = numerical_grad(fn, ARGS_GEN, wrt=(0, 1, 2, 3))
    out, pullback = srcad.vjp(fn, *ARGS_GEN)
    for g, w in zip(pullback(1.0)[:4], want):
        assert rel_error(g, w) < 1e-6
    tangents = tuple(np.full_like(a, 0.1) for a in ARGS_GEN[:4]) + (np.zeros_like(ARGS_GEN[4]),)
    _, t = srcad.jvp(fn, ARGS_GEN, tangents)
    assert abs(t - sum(np.sum(w * 0.1) for w in want)) < 1e-6


def _apply(f, x):
    return f(x)


def _closure_handed_on(W1, b1, W2, b2, x):
    f = _make_dense(W1, b1)
    return np.sum(_apply(f, x))


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_closure_handed_to_another_function_right_or_refused(mode):
    """A closure over a differentiated array passed on as a value: a true gradient or a
    SrcadError at the user's line, never zeros."""
    try:
        _check(_closure_handed_on, ARGS_GEN, wrt=(0, 1), mode=mode)
    except srcad.SrcadError as e:
        assert __file__ in str(e)


def _comprehension_over_closures(W1, b1, W2, b2, x):
    fs = [_make_dense(W1, b1), _make_dense(W1 * 2.0, b1, act=np.sin)]
    return np.sum(np.stack([f(x) for f in fs])) + sum(np.sum(f(x) ** 2) for f in fs)


def _factory_of_another_module(W1, b1, W2, b2, x):
    from tests.corpus_probe.wild_repos4 import make_dense
    net = [make_dense(W1, b1), make_dense(W2, b2, act=np.cos)]
    h = x
    for f in net:
        h = f(h)
    return np.sum(h ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [_comprehension_over_closures, _factory_of_another_module],
                         ids=["comprehension", "another_module"])
def test_closures_consumed_by_comprehensions_or_made_elsewhere(fn, mode):
    _check(fn, ARGS_GEN, wrt=(0, 1, 2, 3), mode=mode)


class _Halver:
    def shrink(self, x):
        if np.sum(x ** 2) < 0.01:
            return x
        return self.shrink(x / 2)


def _method_of_a_built_object(x, W1, W2):
    chain = _Chain([W1, W2])
    return np.sum(chain.forward(x) ** 2)


def _method_of_a_built_object_on_a_value(x, W1, W2):
    return np.sum(_Halver().shrink(x @ W1))


@pytest.mark.parametrize("mode", MODES)
def test_recursion_of_a_built_objects_method(mode):
    _check(_method_of_a_built_object, (X23, *W23), wrt=(1, 2), mode=mode)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_recursion_of_a_built_objects_method_on_a_value_is_refused(mode):
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(_method_of_a_built_object_on_a_value, wrt=1, mode=mode)(X23, *W23)
    assert __file__ in str(e.value)
