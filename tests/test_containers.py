"""Dicts and lists as Python has them (issue 22, item 3).

Small programs in the styles people write: a min-char-rnn loop that keeps everything in
dicts keyed by time step (``hs[-1]`` the initial state), a batchnorm layer writing its running
statistics into a dict argument, a layer library whose forward returns ``(out, cache)``, a
callee that appends to a list and returns it. Each is checked against central differences
and against the program's own result, in source mode, tape mode, fuse=True, and with vjp /
jvp where they apply; the one place where a gradient would be lost is refused with a hint
that works.
"""

from __future__ import annotations

import collections
import copy
import functools
import typing

import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError
from srcad.testing import check_grads, check_jvp, check_vjp, numerical_grad, rel_error
from srcad.testing.trees import _flatten, _unflatten

MODES = [dict(), dict(mode="tape"), dict(fuse=True)]
MODE_IDS = ["source", "tape", "fuse"]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _close(a, b, tol=1e-6):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k], tol)
        return
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, tol)
        return
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _all_ways(fn, args, wrt=0, jvp=True):
    """Gradient in every mode against central differences, the value against fn's own."""
    for opts in MODES:
        check_grads(fn, args, wrt=wrt, **opts)
        v, _ = srcad.value_and_grad(fn, wrt=wrt, **opts)(*args)
        _close(v, fn(*copy.deepcopy(args)))
    if jvp:
        check_jvp(fn, args)
        check_vjp(fn, args)


# -- 1. local dicts built by key ---------------------------------------------------------------


def dict_by_key(x):
    d = {}
    d["k"] = x * 2
    return np.sum(d["k"] ** 2)


def dict_keys_of_kinds(x):
    d = {}
    d[-1] = x
    d[0] = np.sin(d[-1])
    d["s"] = d[0] * x
    d[(1, 2)] = d["s"] + 1.0
    d[-1] = d[(1, 2)] * 3.0  # overwritten: the old value's gradient flows through the others
    return np.sum(d[-1]) + np.sum(d[0])


def test_local_dict_by_key():
    _all_ways(dict_by_key, (_rng().normal(size=3),))


def test_local_dict_keys_of_every_kind():
    _all_ways(dict_keys_of_kinds, (_rng().normal(size=(2, 3)),))


def min_char_rnn_loss(inputs, targets, hprev, Wxh, Whh, Why, bh, by):
    """Karpathy's min-char-rnn lossFun, forward pass (dicts keyed by time step)."""
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    vocab = Wxh.shape[1]
    for t in range(len(inputs)):
        xs[t] = np.zeros((vocab, 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
        ys[t] = np.dot(Why, hs[t]) + by
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    return loss


def _rnn_args(seed=0):
    r = _rng(seed)
    vocab, hidden = 5, 4
    inputs = [0, 3, 1, 4, 2, 2]
    targets = [3, 1, 4, 2, 2, 0]
    return (inputs, targets, r.normal(size=(hidden, 1)) * 0.5,
            r.normal(size=(hidden, vocab)) * 0.5, r.normal(size=(hidden, hidden)) * 0.5,
            r.normal(size=(vocab, hidden)) * 0.5, r.normal(size=(hidden, 1)) * 0.1,
            r.normal(size=(vocab, 1)) * 0.1)


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_min_char_rnn(opts):
    args = _rnn_args()
    wrt = ("hprev", "Wxh", "Whh", "Why", "bh", "by")
    check_grads(min_char_rnn_loss, args, wrt=wrt, **opts)
    v, _ = srcad.value_and_grad(min_char_rnn_loss, wrt=wrt, **opts)(*args)
    _close(v, min_char_rnn_loss(*args))


def rnn_states(W, U, xs, h0):
    hs = {}
    hs[-1] = h0
    for t in range(xs.shape[0]):
        hs[t] = np.tanh(W @ hs[t - 1] + U @ xs[t])
    return np.sum(hs[xs.shape[0] - 1] ** 2) + np.sum(hs[0])


def test_rnn_states_forward_and_backward_through_every_step():
    r = _rng(1)
    args = (r.normal(size=(3, 3)), r.normal(size=(3, 2)), r.normal(size=(4, 2)), r.normal(size=3))
    for opts in MODES:
        check_grads(rnn_states, args, wrt=(0, 1, 2, 3), **opts)
    check_jvp(rnn_states, args)


def dict_methods(x):
    d = {"a": x}
    d.setdefault("b", x * 2)
    d.setdefault("a", x * 100)  # there already: no change
    got = d.get("c", x * 3) + d.get("a")
    d.update({"e": x * 4})
    d.update(f=np.sin(x))
    tot = 0.0
    for k, v in d.items():
        tot = tot + np.sum(v) * len(k)
    for v in d.values():
        tot = tot + np.sum(v ** 2)
    for k in d.keys():
        tot = tot + np.sum(d[k])
    for k in d:
        tot = tot + np.sum(d[k] * 0.5)
    return tot + len(d) + ("a" in d) + ("z" not in d) + np.sum(got)


def test_dict_methods():
    _all_ways(dict_methods, (_rng().normal(size=3),))


# -- 2. writes into dict arguments -------------------------------------------------------------


def batchnorm_forward(x, gamma, beta, bn_param):
    """cs231n-style batchnorm (train): running statistics into the dict argument."""
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    running_mean = bn_param.get("running_mean", np.zeros(x.shape[1]))
    running_var = bn_param.get("running_var", np.zeros(x.shape[1]))
    mu = np.mean(x, axis=0)
    var = np.var(x, axis=0)
    xhat = (x - mu) / np.sqrt(var + eps)
    out = gamma * xhat + beta
    running_mean = momentum * running_mean + (1 - momentum) * mu
    running_var = momentum * running_var + (1 - momentum) * var
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out


def bn_loss(x, gamma, beta, bn_param):
    out = batchnorm_forward(x, gamma, beta, bn_param)
    return np.sum(np.tanh(out) * np.arange(out.size).reshape(out.shape))


def _bn_args(seed=0):
    r = _rng(seed)
    return (r.normal(size=(5, 3)), r.normal(size=3), r.normal(size=3),
            {"momentum": 0.8, "running_mean": r.normal(size=3), "running_var": np.ones(3)})


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_batchnorm_writes_running_statistics_into_its_dict_argument(opts):
    x, gamma, beta, param = _bn_args()
    expected = copy.deepcopy(param)
    want = bn_loss(x, gamma, beta, expected)  # numpy: once
    numeric = numerical_grad(bn_loss, (x, gamma, beta, copy.deepcopy(param)), wrt=(0, 1, 2))
    f = srcad.value_and_grad(bn_loss, wrt=(0, 1, 2), **opts)
    for call in range(2):  # the first call's probe must not write twice nor leave its values
        v, g = f(x, gamma, beta, param)
        _close(v, want)
        _close(g, numeric, 1e-5)
        _close(param, expected)
        for k in ("running_mean", "running_var"):
            assert type(param[k]) is np.ndarray
        want = bn_loss(x, gamma, beta, expected)  # numpy's second call


def test_checkpointed_call_writing_into_a_dict_argument_is_refused():
    """Recomputing it would read the caller's dict changed and write into it again."""
    x, gamma, beta, param = _bn_args(1)
    before = copy.deepcopy(param)
    with pytest.raises(SrcadError) as e:
        srcad.grad(_ckpt_loss, wrt=(0, 1))(x, gamma, beta, param)
    assert "checkpoint" in str(e.value) and e.value.lineno is not None
    _close(param, before)  # (refused before anything ran)


def _ckpt_loss(x, gamma, beta, bn_param):
    out = srcad.checkpoint(batchnorm_forward)(x, gamma, beta, bn_param)
    return np.sum(out ** 2)


def write_read_argument_dict(x, cache):
    cache["h"] = np.tanh(x)
    cache["n"] = cache.get("n", 0) + 1
    return np.sum(cache["h"] ** 2)


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_value_written_into_argument_dict_and_read_back_gets_its_gradient(opts):
    x = _rng().normal(size=4)
    cache = {}
    g = srcad.grad(write_read_argument_dict, **opts)(x, cache)
    _close(g, numerical_grad(write_read_argument_dict, (x, {})))
    assert set(cache) == {"h", "n"} and cache["n"] == 1
    _close(cache["h"], np.tanh(x))


def affine_cache_into(x, w, cache):
    out = np.tanh(x @ w)
    cache["out"] = out
    return out


def loss_reads_callee_cache(x, w):
    cache = {}
    out = affine_cache_into(x, w, cache)
    return np.sum(out) + np.sum(cache["out"] ** 2)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_callee_write_into_dict_read_by_caller_is_followed(mode):
    """Refused at the user's line once; the call is now spliced into its caller (the caller's
    name holds the written dict: frontend/calls.py), so the read gets the entry's gradient."""
    args = _rng().normal(size=(2, 3)), _rng(1).normal(size=(3, 3))
    value, (gx, gw) = srcad.value_and_grad(loss_reads_callee_cache, wrt=(0, 1), mode=mode)(*args)
    assert value == loss_reads_callee_cache(*args)
    _close(gx, numerical_grad(lambda x: loss_reads_callee_cache(x, args[1]), (args[0],)))
    _close(gw, numerical_grad(lambda w: loss_reads_callee_cache(args[0], w), (args[1],)))


def affine_cache_returned(x, w, cache):  # the hint applied: the dict is returned too
    out = np.tanh(x @ w)
    cache["out"] = out
    return out, cache


def loss_uses_returned_cache(x, w):
    cache = {}
    out, cache = affine_cache_returned(x, w, cache)
    return np.sum(out) + np.sum(cache["out"] ** 2)


def test_the_refusals_hint_works():
    args = (_rng().normal(size=(2, 3)), _rng(1).normal(size=(3, 3)))
    for opts in MODES:
        check_grads(loss_uses_returned_cache, args, wrt=(0, 1), **opts)


# -- 3. lists and dicts from callees -----------------------------------------------------------


def affine_forward(x, w, b):
    out = x @ w + b
    cache = (x, w, b)
    return out, cache


def relu_forward(x):
    out = np.maximum(0, x)
    cache = [x]
    return out, cache


def tanh_forward(x):
    out = np.tanh(x)
    return out, {"x": x, "out": out}


def two_layer_loss(x, w1, b1, w2, b2):
    h, cache1 = affine_forward(x, w1, b1)
    a, cache2 = relu_forward(h)
    t, cache3 = tanh_forward(a)
    out, _ = affine_forward(t, w2, b2)
    xin, _, _ = cache1
    return np.sum(out ** 2) + np.sum(cache2[0]) + np.sum(cache3["out"]) + np.sum(xin)


def test_layer_library_returning_out_and_cache():
    r = _rng(2)
    args = (r.normal(size=(4, 3)), r.normal(size=(3, 5)), r.normal(size=5),
            r.normal(size=(5, 2)), r.normal(size=2))
    _all_ways(two_layer_loss, args, wrt=(0, 1, 2, 3, 4), jvp=False)
    check_jvp(two_layer_loss, args)


def layer_appends(x, w):
    cache = []
    h = np.tanh(x @ w)
    cache.append(h)
    cache.append(x)
    return h, cache


def keeps_h_only(x, w):
    h, _ = layer_appends(x, w)
    return np.sum(h ** 2)


def uses_the_list(x, w):
    h, cache = layer_appends(x, w)
    a, b = cache
    again = list(cache)
    frozen = tuple(again)
    return np.sum(h * a) + np.sum(b) + np.sum(again[1]) + np.sum(frozen[0] ** 2) + len(again)


def returns_list_alone(x, w):
    out = []
    for i in range(2):
        out.append(np.sin(x * w[i, 0]))
    return out


def list_alone_loss(x, w):
    hs = returns_list_alone(x, w)
    return np.sum(hs[0] * hs[1])


def returns_dict_of_list(x, w):
    steps = []
    h = x
    for i in range(2):
        h = np.tanh(h @ w)
        steps.append(h)
    return {"last": h, "steps": steps}


def dict_of_list_loss(x, w):
    d = returns_dict_of_list(x, w)
    return np.sum(d["last"]) + np.sum(d["steps"][0] ** 2)


@pytest.mark.parametrize("fn", [keeps_h_only, uses_the_list, list_alone_loss,
                                dict_of_list_loss])
def test_list_appended_in_callee_and_returned(fn):
    r = _rng(3)
    args = (r.normal(size=(2, 3)), r.normal(size=(3, 3)))
    _all_ways(fn, args, wrt=(0, 1), jvp=False)
    check_jvp(fn, args)
    check_vjp(fn, args)


# -- 4. arrays inside dicts and lists, written in place --------------------------------------


def write_into_array_in_dict(x, v):
    d = {"h": np.zeros_like(x), "k": x * 1.0}  # (zeros_like: a buffer tape mode follows)
    d["h"][0] += v[0] * 2
    d["h"][1:] = x[:2] * v[1:]
    d["k"][2] = 0.0
    return np.sum(d["h"] ** 2) + np.sum(d["k"])


def write_into_array_in_list(x):
    xs = [np.zeros(3), x * 2.0]
    xs[0][1] = 1
    xs[1][0] *= 3.0
    return np.sum(xs[0] * x) + np.sum(xs[1] ** 2)


def nested_write_into_array(a, b):
    m = a * 1.0
    m[0][1] = b[0]  # a row of a 2-d array: numpy writes into m itself
    return np.sum(m ** 2)


def test_array_in_dict_written_in_place():
    r = _rng(4)
    _all_ways(write_into_array_in_dict, (r.normal(size=3), r.normal(size=3)), wrt=(0, 1))


def test_array_in_list_written_in_place():
    _all_ways(write_into_array_in_list, (_rng(5).normal(size=3),))


def test_nested_write_into_an_array_as_numpy():
    r = _rng(6)
    _all_ways(nested_write_into_array, (r.normal(size=(2, 3)), r.normal(size=2)), wrt=(0, 1))


# -- lists rebuilt, inserted into, concatenated, converted (issue 22, item 3) -------------------


def insert_anywhere(x):
    xs = [x, 2.0 * x, 3.0 * x]
    xs.insert(1, np.sin(x))
    xs.insert(-1, x * x)
    xs.insert(10, np.cos(x))  # (past the end: appended, as Python clamps)
    xs.insert(-10, np.exp(x))  # (before the start: first)
    return np.sum(np.stack(xs) * np.arange(1.0, 8.0)[:, None])


def returns_backwards(rewards, scale):
    G, out = 0.0, []
    for r in rewards[::-1]:
        G = r * scale + 0.9 * G
        out.insert(0, G)
    return np.sum(np.stack(out) * np.arange(1.0, len(out) + 1.0))


def cache_layer(x, w, cache):
    h = np.tanh(x @ w)
    return h, cache + [h]


def concatenated_caches(x, w):
    cache = []
    h, cache = cache_layer(x, w, cache)
    h2, cache = cache_layer(h, w, cache)
    both = [x] + cache
    pair = tuple(cache)
    return np.sum(h2) + np.sum(both[1] * both[2]) * len(both) + np.sum(list(pair)[0])


def list_rebound_to_an_array(x, k):
    out = []
    for i in range(x.shape[0] - 1):
        out.append(np.dot(x[i:i + 2], k))
    out = np.array(out)
    out = out * out
    return np.sum(out)


@pytest.mark.parametrize("fn, make", [
    (insert_anywhere, lambda r: (r.standard_normal(3),)),
    (returns_backwards, lambda r: (r.standard_normal(4), np.array(0.5))),
    (concatenated_caches, lambda r: (r.standard_normal((2, 3)), r.standard_normal((3, 3)))),
    (list_rebound_to_an_array, lambda r: (r.standard_normal(5), r.standard_normal(2))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_lists_inserted_concatenated_converted_rebound(fn, make):
    args = make(_rng(3))
    _all_ways(fn, args, wrt=tuple(range(len(args))), jvp=False)
    check_jvp(fn, args, tol=1e-5)  # (a small output: central differences' own error ~1e-6)
    check_vjp(fn, args, tol=1e-5)


# -- namedtuple parameters (a pytree whose fields are read by name) and functools.partial ------
Params = collections.namedtuple("Params", ["W1", "b1", "W2", "b2"])


class Layer(typing.NamedTuple):
    W: np.ndarray
    b: np.ndarray


def nt_forward(p, X):
    h = np.tanh(X @ p.W1 + p.b1)
    return h @ p.W2 + p.b2


def nt_loss(p, X):
    return np.sum(nt_forward(p, X) ** 2) + 0.1 * np.sum(p.W1 ** 2)


def typed_nt_loss(layer, X):
    return np.sum(np.sin(X @ layer.W + layer.b))


def _scaled_loss(W, X, scale, reg=0.0):
    return np.sum(np.tanh(X @ W) * scale) + reg * np.sum(W * W)


HALF = functools.partial(_scaled_loss, scale=0.5)
WITH_REG = functools.partial(_scaled_loss, reg=0.25)


def uses_partials(W, X):
    return HALF(W, X) + WITH_REG(W, X, 2.0)


def partial_argument(W, X, loss_fn):
    return loss_fn(W, X) * 2.0


def test_namedtuple_parameters_fields_by_name():
    r = _rng(7)
    p = Params(r.standard_normal((3, 4)) * 0.5, r.standard_normal(4) * 0.1,
               r.standard_normal((4, 2)) * 0.5, r.standard_normal(2) * 0.1)
    X = r.standard_normal((5, 3))
    _all_ways(nt_loss, (p, X), wrt=0)
    g = srcad.grad(nt_loss)(p, X)
    assert type(g) is Params and g.W1.shape == p.W1.shape
    layer = Layer(r.standard_normal((3, 2)), r.standard_normal(2))
    _all_ways(typed_nt_loss, (layer, X), wrt=(0, 1))
    assert type(srcad.grad(typed_nt_loss)(layer, X)) is Layer


def test_functools_partial_of_a_user_function():
    r = _rng(8)
    W, X = r.standard_normal((3, 2)), r.standard_normal((4, 3))
    _all_ways(uses_partials, (W, X), wrt=(0, 1))
    for opts in MODES:
        check_grads(partial_argument, (W, X, HALF), wrt=(0, 1), **opts)


def layers_of_namedtuples(layers, X):
    h = X
    for layer in layers:
        h = np.tanh(h @ layer.W + layer.b)
    return np.sum(h ** 2)


def test_a_list_of_namedtuple_layers():
    r = _rng(9)
    layers = [Layer(r.standard_normal((3, 4)) * 0.5, r.standard_normal(4) * 0.1),
              Layer(r.standard_normal((4, 2)) * 0.5, r.standard_normal(2) * 0.1)]
    X = r.standard_normal((5, 3))
    _all_ways(layers_of_namedtuples, (layers, X), wrt=(0, 1))
    g = srcad.grad(layers_of_namedtuples)(layers, X)
    assert type(g) is list and all(type(x) is Layer for x in g)


# -- `for k in d` over a dict the function is given (issue 23) ------------------------------


def _loss_over_dict_keys(params, x):
    s = 0.0
    for k in params:  # a dict argument: its keys, in insertion order, as Python walks them
        s = s + np.sum(params[k] ** 2) * np.sum(x)
    for name in reversed(list(params)):
        s = s * 0.5 + np.sum(np.tanh(params[name]))
    names = list(params)
    s = s + len(params) * np.sum(params[names[-1]])
    if "b" in params and "nope" not in params:
        s = s + np.sum(params["b"] * x[:2])
    for k in sorted(params):
        s = s * 0.9 + np.sum(np.sin(params[k]))
    return s + sum(np.sum(params[k] * params[k]) for k in params)


def _dict_in_a_list(ps, x):
    s = np.sum(x)
    for k in ps[0]:
        s = s + np.sum(np.tanh(ps[0][k] * x[0]))
    for layer in ps:
        for k in layer:
            s = s * 0.75 + np.sum(layer[k] ** 2)
    return s


def _dict_in_a_dict(cfg, x):
    s = np.sum(x)
    for k in cfg["enc"]:
        s = s + np.sum(np.cos(cfg["enc"][k]) * x[0])
    return s * np.sum(cfg["scale"])


class _Norms:
    def __init__(self, weight):
        self.weight = weight

    def total(self, params):
        out = 0.0
        for k in params:
            out = out + self.weight * np.sum(params[k] ** 2)
        return out


class _Momentum:
    def __init__(self, lr=0.1, mu=0.8):
        self.lr, self.mu, self.vel = lr, mu, {}

    def step(self, params, grads):
        for name in params:
            if name not in self.vel:
                self.vel[name] = np.zeros_like(grads[name])
            self.vel[name] = self.mu * self.vel[name] - self.lr * grads[name]
            params[name] = params[name] + self.vel[name]


def _method_given_the_dict(params, x):
    return _Norms(0.5).total(params) + np.sum(x)


def _optimizer_steps_the_dict(W, b, x):
    params = {"W": W, "b": b}
    opt = _Momentum()
    for _ in range(3):
        err = params["W"] @ x + params["b"]
        opt.step(params, {"W": np.outer(err, x), "b": err})
    return np.sum((params["W"] @ x + params["b"]) ** 2)


def _sgd_into(params, grads, lr=0.1):
    for k in params:
        params[k] = params[k] - lr * grads[k]


def _function_steps_a_local_dict(W, v):
    params = {"W": W, "v": v}
    for _ in range(2):
        _sgd_into(params=params, grads={"W": params["W"] * v, "v": params["v"] * W})
    return np.sum(params["W"] ** 2 * params["v"])


def _pdict():
    r = _rng(23)
    return {"W": r.normal(size=(2, 3)), "b": r.normal(size=2), "a": r.normal(size=(3,))}


def _dict_cases():
    r = _rng(24)
    x = r.normal(size=3)
    return [
        (_loss_over_dict_keys, (_pdict(), x), 0),
        (_dict_in_a_list, ([_pdict(), {"u": r.normal(size=3)}], x), 0),
        (_dict_in_a_dict, ({"enc": _pdict(), "scale": r.normal(size=2)}, x), 0),
        (_method_given_the_dict, (_pdict(), x), 0),
        (_optimizer_steps_the_dict, (r.normal(size=(2, 3)) * 0.5, r.normal(size=2), x),
         (0, 1)),
        (_function_steps_a_local_dict, (r.normal(size=3), r.normal(size=3)), (0, 1)),
    ]


def _numerical_tree(fn, args, i):
    """Central differences of fn w.r.t. argument i, a dict / list of dicts / array."""
    def leaves(v, path=()):
        if isinstance(v, dict):
            return [q for k in v for q in leaves(v[k], path + (k,))]
        if isinstance(v, list):
            return [q for j, x in enumerate(v) for q in leaves(x, path + (j,))]
        return [path]

    def put(v, path, leaf):
        if not path:
            return leaf
        v = copy.copy(v)
        v[path[0]] = put(v[path[0]], path[1:], leaf)
        return v

    def get(v, path):
        for k in path:
            v = v[k]
        return v

    out = {}
    for path in leaves(args[i]):
        def one(leaf, path=path):
            a = list(copy.deepcopy(args))
            a[i] = put(a[i], path, leaf)
            return fn(*a)
        out[path] = numerical_grad(one, (np.asarray(get(args[i], path), dtype=float),))
    return out, get


@pytest.mark.parametrize("case", range(6), ids=[c[0].__name__ for c in _dict_cases()])
def test_for_k_in_a_dict_it_is_given(case):
    """`for k in d` over a dict argument, a dict in a list / dict argument, a dict handed to
    a method or a function (an optimizer stepping a dict of parameters): source mode walked
    it as a sequence (`d[0]`: KeyError) and lost a callee's write passed by keyword. Value
    as calling fn, gradient (a dict for a dict) as central differences, source = tape = fuse
    bit for bit."""
    fn, args, wrt = _dict_cases()[case]
    value = fn(*copy.deepcopy(args))
    got = {}
    for name, opts in zip(MODE_IDS, MODES):
        v, g = srcad.value_and_grad(fn, wrt=wrt, **opts)(*copy.deepcopy(args))
        assert v == value, name
        got[name] = g if isinstance(wrt, tuple) else (g,)
    _bitwise(got["source"], got["fuse"])
    if fn is _function_steps_a_local_dict:  # (a spliced callee's writes in a loop: the sums
        _close(got["source"], got["tape"], 1e-12)  # differ in the last bit, as on main)
    else:
        _bitwise(got["source"], got["tape"])
    for g, i in zip(got["source"], wrt if isinstance(wrt, tuple) else (wrt,)):
        want, get = _numerical_tree(fn, args, i)
        assert type(g) is type(args[i])
        for path, w in want.items():
            np.testing.assert_allclose(get(g, path), w, rtol=1e-6, atol=1e-8)


def _bitwise(a, b):
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _bitwise(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _bitwise(x, y)
    else:
        assert np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("case", [0, 1, 2])
def test_for_k_in_a_dict_forward_mode(case):
    fn, args, wrt = _dict_cases()[case]
    check_jvp(fn, args)
    check_vjp(fn, args)


def test_grad_of_grad_through_a_dict_walked_by_key():
    """The inner transform's code is what the outer one parses: normalising the user's
    function again there (to learn the dict argument) gave the wrong mixed partial."""
    p, s = _pdict(), 0.7
    got = srcad.grad(srcad.grad(_scaled_keys, wrt=0), wrt=1)(s, p)
    eps = 1e-5
    for k in p:
        for j in np.ndindex(p[k].shape):
            hi, lo = copy.deepcopy(p), copy.deepcopy(p)
            hi[k][j] += eps
            lo[k][j] -= eps
            want = (srcad.grad(_scaled_keys, wrt=0)(s, hi)
                    - srcad.grad(_scaled_keys, wrt=0)(s, lo)) / (2 * eps)
            np.testing.assert_allclose(got[k][j], want, rtol=1e-6, atol=1e-8)


def _scaled_keys(s, p):
    out = 0.0
    for k in p:
        out = out + np.sum(np.tanh(s * p[k]) ** 2)
    return out


_Pair = collections.namedtuple("_Pair", "W b")


def _namedtuple_layer(s, p, x):
    return np.sum(np.tanh(s * (x @ p.W) + p.b) ** 2)


def test_grad_of_grad_through_a_namedtuple_argument():
    """Also when the inner transform is told of a namedtuple argument (was: the outer one
    differentiated the loss itself, d/dW instead of d2/ds dW)."""
    r = _rng(25)
    p, x = _Pair(r.normal(size=(3, 3)) * 0.5, r.normal(size=3)), r.normal(size=(2, 3))
    got = srcad.grad(srcad.grad(_namedtuple_layer, wrt=0), wrt=1)(0.7, p, x)
    eps = 1e-5
    for i, field in enumerate(p):
        for j in np.ndindex(field.shape):
            hi, lo = [f.copy() for f in p], [f.copy() for f in p]
            hi[i][j] += eps
            lo[i][j] -= eps
            want = (srcad.grad(_namedtuple_layer, wrt=0)(0.7, _Pair(*hi), x)
                    - srcad.grad(_namedtuple_layer, wrt=0)(0.7, _Pair(*lo), x)) / (2 * eps)
            np.testing.assert_allclose(got[i][j], want, rtol=1e-6, atol=1e-8)


def _steps_its_dict_argument(p, x):
    for _ in range(2):
        _sgd_into(p, {"W": p["W"] * x, "v": p["v"] * x})
    return np.sum(p["W"] ** 2 * p["v"])


def _steps_its_dict_argument_twice(p, x):
    _sgd_into(p, {"W": p["W"] * x, "v": p["v"] * x})
    _sgd_into(p, {"W": p["W"] * x, "v": p["v"] * x})
    return np.sum(p["W"] ** 2 * p["v"])


@pytest.mark.parametrize("fn", [_steps_its_dict_argument, _steps_its_dict_argument_twice])
def test_a_dict_argument_stepped_twice_by_a_callee(fn):
    """A callee writing into the caller's dict argument, called twice (in a loop or not):
    tape mode's second call read the entries the first one stored through the container's
    gather, so their cotangents went to the argument's original entries (the gradient off by
    ~25%, silently); source mode was right. Both against central differences, bit for bit."""
    r = _rng(26)
    W, x = r.normal(size=2), r.normal(size=2)
    src = srcad.grad(fn)({"W": W.copy(), "v": x.copy()}, x)
    tape = srcad.grad(fn, mode="tape")({"W": W.copy(), "v": x.copy()}, x)
    want = numerical_grad(lambda W, v: fn({"W": W, "v": v}, x), (W, x), wrt=(0, 1))
    for k, w in zip(("W", "v"), want):
        assert rel_error(src[k], w) < 1e-7 and np.array_equal(src[k], tape[k]), k


def _fill_then_rebind(cache, x):
    cache["a"] = np.sin(x)  # into the caller's dict
    cache = {}  # then a new dict under the same name: the caller's is not written again
    cache["b"] = x * 2
    return np.sum(cache["b"])


def _reads_what_the_callee_filled(x):
    cache = {"a": x}
    s = _fill_then_rebind(cache, x)
    return s + np.sum(cache["a"] ** 2)


def test_a_callee_writes_into_a_dict_then_rebinds_the_name():
    # (source mode's caller read its dict's old entry: a wrong value, silently -- a parameter
    # rebound by plain assignment anywhere got no store into the caller's object)
    x = np.array([0.3, 0.7])
    want = _reads_what_the_callee_filled(x)
    assert srcad.value_and_grad(_reads_what_the_callee_filled, mode="tape")(x)[0] == want
    assert srcad.value_and_grad(_reads_what_the_callee_filled)(x)[0] == want


# ---- writes into a list the function is given ----------------------------------------------
def _write_item(Ws, x):
    Ws[0] = Ws[0] * 2.0
    return np.sum(Ws[0] @ x) + np.sum(Ws[-1])


def _write_negative_through_an_alias(Ws, x):
    V = Ws
    V[-1] = np.tanh(V[-1]) + V[0]
    return np.sum(V[-1] @ x) + np.sum(Ws[1] ** 2)


def _write_then_iterate(Ws, x):
    for i in range(len(Ws)):
        Ws[i] = Ws[i] * (i + 1.0)
    return sum(np.sum(W @ x) for W in Ws)


def _written_then_sliced(Ws, x):
    Ws[1] = Ws[1] * 3.0
    tail = Ws[1:]
    return np.sum(tail[0] @ x) + np.sum(Ws[0] * Ws[1])


@pytest.mark.parametrize("fn", [_write_item, _write_negative_through_an_alias,
                                _write_then_iterate, _written_then_sliced])
def test_a_list_argument_written_then_read(fn):
    """`Ws[0] = Ws[0] * 2` on a list argument: tape mode read the stored item back through
    the container's gather, so its cotangent skipped the write and went to the original item
    (a silently wrong gradient); now the stored item is read as stored, as a dict's is. Both
    modes against central differences, bit for bit."""
    r = _rng(41)
    Ws, x = [r.normal(size=(2, 2)) for _ in range(2)], r.normal(size=2)
    want = numerical_grad(fn, (copy.deepcopy(Ws), x))
    got = {m: srcad.grad(fn, mode=m)(copy.deepcopy(Ws), x) for m in ("source", "tape")}
    for a, b, w in zip(got["source"], got["tape"], want):
        assert rel_error(a, w) < 1e-7 and np.array_equal(a, b)


def _slice_copy_written(Ws, x):
    V = Ws[:]
    V[0] = V[0] * 2.0
    return np.sum(V[0] @ x) + np.sum(Ws[0])


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_slice_of_a_list_argument_written(mode):
    """`V = Ws[:]` is a copy of a list: tape mode's gradient is right (it was wrong, as
    above); source mode follows the slice as numpy's view and refuses the write at its line
    with the rewrite that works (it raised a TypeError from inside its runtime)."""
    r = _rng(42)
    Ws, x = [r.normal(size=(2, 2))], r.normal(size=2)
    if mode == "source":
        with pytest.raises(SrcadError, match="slice of a Python list is a copy") as e:
            srcad.grad(_slice_copy_written)(Ws, x)
        assert "test_containers.py" in str(e.value)
        return
    got = srcad.grad(_slice_copy_written, mode="tape")(copy.deepcopy(Ws), x)
    assert rel_error(got, numerical_grad(_slice_copy_written, (copy.deepcopy(Ws), x))) < 1e-7


def _appends_to_its_argument(Ws, x):
    Ws.append(Ws[0] * 3.0)
    return np.sum(Ws[-1] @ x)


def _reverses_its_argument(Ws, x):
    Ws.reverse()
    return np.sum(Ws[0] @ x)


@pytest.mark.parametrize("fn", [_appends_to_its_argument, _reverses_its_argument])
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_list_argument_resized_or_reordered_is_refused(fn, mode):
    """Items are followed by position: `.append()` / `.reverse()` on a list argument is a
    SrcadError at the user's line in both modes, never gradients matched to the wrong item."""
    r = _rng(43)
    Ws, x = [r.normal(size=(2, 2)), r.normal(size=(2, 2))], r.normal(size=2)
    try:
        got = srcad.grad(fn, mode=mode)(copy.deepcopy(Ws), x)
    except SrcadError as e:
        assert "test_containers.py" in str(e)
        return
    want = numerical_grad(fn, (copy.deepcopy(Ws), x))
    assert rel_error(got, want) < 1e-7  # (where a mode follows it, it must be right)


def _item_read_before_its_slot_is_written(Ws, x):
    u = Ws[-1]  # (the item itself: a later write into its slot leaves u as it was)
    Ws[1] = np.tanh(Ws[-1]) * x
    return np.sum(u * u) + np.sum(Ws[1])


def _sum_read_before_a_write(Ws, x):
    total = np.sum(Ws, axis=0)  # (read before the write: the memory planner kept it there)
    Ws[0] = Ws[1] * 1.5
    return np.sum(total * x) + np.sum(np.asarray(Ws) ** 2)


@pytest.mark.parametrize("fn", [_item_read_before_its_slot_is_written,
                                _sum_read_before_a_write])
def test_reads_of_a_list_argument_around_a_write(fn):
    """Source mode made `u = Ws[-1]` again from the written list as numpy makes a view
    again (a wrong value and gradient: a list's item is no view), and the memory planner moved
    `np.sum(Ws, axis=0)` below the effect storing into the caller's list (a wrong value);
    tape mode sent the cotangent of `np.asarray(Ws)` after a write to the original items.
    Found by the pytree fuzzer once it stored into its containers. Both modes against the
    function and central differences, bit for bit."""
    r = _rng(44)
    Ws, x = [r.normal(size=3) for _ in range(2)], r.normal(size=3)
    want = numerical_grad(fn, (copy.deepcopy(Ws), x))
    for mode in ("source", "tape"):
        value, got = srcad.value_and_grad(fn, mode=mode)(copy.deepcopy(Ws), x)
        assert value == fn(copy.deepcopy(Ws), x)
        assert rel_error(got, want) < 1e-7
    src = srcad.grad(fn)(copy.deepcopy(Ws), x)
    tape = srcad.grad(fn, mode="tape")(copy.deepcopy(Ws), x)
    assert all(np.array_equal(a, b) for a, b in zip(src, tape))


def _max_before_a_write(Ws):
    u = np.max(Ws, axis=0)  # (the container taken whole, then an item stored into it)
    Ws[1] = np.tanh(Ws[-1]) * 1.5
    return np.sum(u * u)


def test_a_list_argument_taken_whole_before_a_write():
    # (found by the pytree fuzzer's writes: the backward read the argument after the store
    # into the caller's list -- `extremum_grad(.., np.asarray(p), ..)` -- in both modes)
    r = _rng(45)
    Ws = [r.normal(size=(2, 3)) for _ in range(4)]
    want = numerical_grad(_max_before_a_write, (copy.deepcopy(Ws),))
    for mode in ("source", "tape"):
        got = srcad.grad(_max_before_a_write, mode=mode)(copy.deepcopy(Ws))
        assert rel_error(got, want) < 1e-7, mode


def _stack_read_after_stores(Ws, x):
    u = np.stack(Ws) * x  # the whole list, read again by the backward
    Ws[0] = Ws[0] * x
    Ws[2] = np.sin(Ws[1]) + Ws[0]
    return np.sum(u ** 2) + np.sum(Ws[2] * Ws[0])


def _sum_read_after_stores(Ws, x):
    t = np.tanh(sum(Ws) * x)  # (builtin sum of the list)
    for i in range(len(Ws)):
        Ws[i] = Ws[i] * t
    return np.sum(np.concatenate(Ws) ** 2) + np.sum(t)


def _dict_read_after_stores(p, x):
    h = np.tanh(p["W"] @ x + p["b"])
    p["W"] = p["W"] - 0.1 * np.outer(h, x)
    p["b"] = p["b"] * h
    return np.sum(h * p["b"]) + np.sum(p["W"] ** 2)


def _nested_read_after_stores(p, x):
    h = np.tanh(p["layers"][0] @ x)
    p["layers"][0] = p["layers"][0] * 0.5
    return np.sum(h ** 2) + np.sum(p["layers"][0] @ x) + np.sum(p["layers"][1] * h)


_STORE_PROGRAMS = {
    "stack": (_stack_read_after_stores, lambda r: [r.normal(size=3) for _ in range(3)]),
    "sum": (_sum_read_after_stores, lambda r: [r.normal(size=3) for _ in range(3)]),
    "dict": (_dict_read_after_stores, lambda r: {"W": r.normal(size=(3, 3)),
                                                 "b": r.normal(size=3)}),
    "nested": (_nested_read_after_stores, lambda r: {"layers": [r.normal(size=(3, 3)),
                                                                r.normal(size=3)]}),
}


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("kind", ["grad", "vjp", "jvp", "checkpoint"])
@pytest.mark.parametrize("prog", sorted(_STORE_PROGRAMS))
def test_a_container_argument_read_after_stores_into_it(prog, kind, mode):
    """A list or dict argument the function stores into, read whole or by item before and
    after the stores -- by the forward, by the backward (grad, and a pullback called after the
    function returned), by forward mode and by a checkpoint's recomputation: the gradient of
    the argument as it came in, and the caller's object left as Python leaves it."""
    fn, make = _STORE_PROGRAMS[prog]
    if mode == "tape" and kind == "checkpoint":
        pytest.skip("tape mode has no checkpoints")
    r = _rng(47)
    p, x = make(r), r.normal(size=3)
    leaves, tree = _leaves_of(p)
    want = numerical_grad(lambda *ls: fn(tree(list(ls)), x), tuple(leaves),
                          wrt=tuple(range(len(leaves))))
    want = [want] if len(leaves) == 1 else list(want)
    python_after = copy.deepcopy(p)
    fn(python_after, x.copy())
    mine = copy.deepcopy(p)
    if kind in ("grad", "checkpoint"):
        opts = {"memory_budget": 1} if kind == "checkpoint" else {}
        if mode == "tape":
            opts["mode"] = "tape"
        got = srcad.grad(fn, **opts)(mine, x)
        got_leaves = _leaves_of(got)[0]
    elif kind == "vjp":
        out, pullback = srcad.vjp(fn, mine, x, mode=mode)
        fn(copy.deepcopy(p), x)  # (the pullback runs after more Python: it reads its own copy)
        got_leaves = _leaves_of(pullback(1.0)[0])[0]
    else:
        got_leaves = []
        for i, leaf in enumerate(leaves):
            for j in np.ndindex(leaf.shape):
                dots = [np.zeros_like(v) for v in leaves]
                dots[i][j] = 1.0
                tangent = srcad.jvp(fn, (copy.deepcopy(p), x), (tree(dots), np.zeros(3)),
                                    mode=mode)[1]
                got_leaves.append((i, j, tangent))
        for i, j, t in got_leaves:
            assert abs(t - want[i][j]) < 1e-6 * max(1.0, abs(want[i][j])), (i, j)
        got_leaves = None
    if got_leaves is not None:
        for g, w in zip(got_leaves, want):
            assert rel_error(g, w) < 1e-7
    if kind != "jvp":
        after = _leaves_of(mine)[0]
        for a, b in zip(after, _leaves_of(python_after)[0]):
            np.testing.assert_array_equal(a, b)


def _leaves_of(tree):
    """The arrays of a list/dict tree in order, and a function rebuilding the tree."""
    _, leaves, treedef = _flatten(tree)
    return leaves, lambda ls: _unflatten(treedef, ls)


def _item_list_written_by_name(p, x):
    h = np.tanh(p["layers"][0] @ x)
    L = p["layers"]
    L[0] = L[0] * 0.5
    return np.sum(h ** 2) + np.sum(p["layers"][0] @ x)


def _item_array_written_by_name(p, x):
    W = p["W"]
    W[0, 0] = 5.0 * x[0]
    return np.sum(p["W"] @ x)


def _item_array_stepped_by_name(p, x):
    W = p["W"]  # (an optimiser's step, `p -= lr * g` on the dict's own array)
    W -= 0.1 * np.outer(x, x)
    return np.sum(p["W"] @ x)


def _item_dict_written_by_name(p, x):
    e = p["enc"]
    e["W"] = e["W"] * 2.0
    return np.sum(p["enc"]["W"] @ x)


def _list_in_list_written_by_name(Ws, x):
    inner = Ws[0]
    inner[0] = inner[0] * x
    return np.sum(Ws[0][0])


_ITEM_ALIASES = {
    "list": (_item_list_written_by_name,
             lambda r: {"layers": [r.normal(size=(3, 3)), r.normal(size=3)]}),
    "array": (_item_array_written_by_name, lambda r: {"W": r.normal(size=(3, 3))}),
    "stepped": (_item_array_stepped_by_name, lambda r: {"W": r.normal(size=(3, 3))}),
    "dict": (_item_dict_written_by_name, lambda r: {"enc": {"W": r.normal(size=(3, 3))}}),
    "nested_list": (_list_in_list_written_by_name,
                    lambda r: [[r.normal(size=3), r.normal(size=3)]]),
}


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("prog", sorted(_ITEM_ALIASES))
def test_a_container_item_written_through_a_name(prog, mode):
    """`W = p["W"]` is the dict's own item (a string key picks the object itself, as an int
    picks a list's): a write through `W` shows in `p["W"]` (source mode read the old item --
    a wrong value and gradient, silently), and the caller's container holds the written
    item as Python leaves it. Tape mode refuses an in-place write into an array it did not
    make."""
    fn, make = _ITEM_ALIASES[prog]
    r = _rng(48)
    p, x = make(r), r.normal(size=3)
    want = numerical_grad(lambda x: fn(copy.deepcopy(p), x), (x,))
    python_after = copy.deepcopy(p)
    want_value = fn(python_after, x.copy())
    mine = copy.deepcopy(p)
    try:
        value, got = srcad.value_and_grad(fn, wrt=1, mode=mode)(mine, x)
    except SrcadError:
        if mode == "tape" and prog in ("array", "stepped"):
            return
        raise
    assert value == pytest.approx(want_value, rel=1e-12) and rel_error(got, want) < 1e-7
    for a, b in zip(_leaves_of(mine)[0], _leaves_of(python_after)[0]):
        np.testing.assert_array_equal(a, b)


def _unpacked_before_a_write(p, x):
    u1, u2 = p
    p[1] = np.tanh(p[1]) * 1.5
    return np.sum(u2 * x) + np.sum(p[-1] * u1)


def test_items_unpacked_before_a_write_into_a_list_argument():
    # (refused in source mode as numpy views: a list's items are no views, which the first
    # call's arguments tell -- pf.containers)
    r = _rng(46)
    p, x = [r.normal(size=3), r.normal(size=3)], r.normal(size=3)
    want = numerical_grad(_unpacked_before_a_write, (copy.deepcopy(p), x))
    got = srcad.grad(_unpacked_before_a_write)(copy.deepcopy(p), x)
    assert rel_error(got, want) < 1e-7


def _copy_method(p, x):
    q = p.copy()
    q["W"] = q["W"] * x[0]
    return np.sum(q["W"] ** 2) + np.sum(p["W"] * p["b"])


def _dict_of(p, x):
    q = dict(p)
    q["b"] = np.tanh(q["b"]) + x[1]
    return np.sum(q["W"] @ q["b"]) + np.sum(p["b"])


def _deepcopied(p, x):
    q = copy.deepcopy(p)
    q["W"] = q["W"] - 0.1 * np.outer(x[:2], q["b"])
    return np.sum(q["W"] ** 2) + np.sum(p["W"])


def _local_copied(W, b, x):
    p = {"W": W, "b": b}
    q = p.copy()
    q["W"] = q["W"] * x[0]
    return np.sum(q["W"]) + np.sum(p["W"] ** 2)


@pytest.mark.parametrize("fn", [_copy_method, _dict_of, _deepcopied])
def test_a_copied_dict_argument_written(fn):
    """`q = p.copy()` / `dict(p)` / `copy.deepcopy(p)` of a dict argument, then `q[k] = ...`:
    source mode read the copy as an array's (IndexError at the user's line, or refused as a
    view); now a new dict of the same entries. The caller's dict is left as Python leaves it."""
    r = _rng(47)
    p, x = {"W": r.normal(size=(2, 3)), "b": r.normal(size=3)}, r.normal(size=3)
    want = numerical_grad(fn, (copy.deepcopy(p), x), wrt=(0, 1))
    for mode in ("source", "tape"):
        mine = copy.deepcopy(p)
        value, got = srcad.value_and_grad(fn, wrt=(0, 1), mode=mode)(mine, x)
        assert value == fn(copy.deepcopy(p), x)
        assert all(np.array_equal(mine[k], p[k]) for k in p)
        assert rel_error(got[0]["W"], want[0]["W"]) < 1e-7
        assert rel_error(got[0]["b"], want[0]["b"]) < 1e-7
        assert rel_error(got[1], want[1]) < 1e-7
    r2 = _rng(48)
    check_grads(_local_copied, (r2.normal(size=(2, 3)), r2.normal(size=3), x), wrt=(0, 1, 2))


def _scale_first(Ws, c):
    Ws[0] = Ws[0] * c


def _a_callee_scales_twice(Ws, x):
    _scale_first(Ws, 2.0)
    _scale_first(Ws, 3.0)
    return np.sum(Ws[0] @ x) + np.sum(Ws[1])


def _written_then_a_callee_writes(Ws, x):
    Ws[1] = np.tanh(Ws[1])
    _scale_first(Ws, 2.0)
    return np.sum(Ws[0] @ x) + np.sum(Ws[1] ** 2)


@pytest.mark.parametrize("fn", [_write_item, _a_callee_scales_twice,
                                _written_then_a_callee_writes])
def test_a_list_argument_written_is_left_as_python_leaves_it(fn):
    """Items stored into a list argument, by the function or a callee (twice, or after the
    function's own store): value and gradient right in both modes, bit for bit, and the
    caller's list holds what Python leaves in it (tape mode left it unchanged)."""
    r = _rng(49)
    Ws, x = [r.normal(size=(2, 2)) for _ in range(2)], r.normal(size=2)
    want = numerical_grad(fn, (copy.deepcopy(Ws), x))
    after = copy.deepcopy(Ws)
    fn(after, x)
    got = {}
    for mode in ("source", "tape"):
        mine = copy.deepcopy(Ws)
        value, got[mode] = srcad.value_and_grad(fn, mode=mode)(mine, x)
        assert value == fn(copy.deepcopy(Ws), x)
        assert rel_error(got[mode], want) < 1e-7
        assert all(np.array_equal(a, b) for a, b in zip(mine, after)), mode
    assert all(np.array_equal(a, b) for a, b in zip(got["source"], got["tape"]))


# ---- items across slot stores (found by the tape helper's and the store fuzzer's programs) --
from tests.test_tape_item_writes import (  # noqa: E402  (the tape file's programs, in source mode)
    _store_through_a_name_after_its_slot_is_rebound, _stored_then_written,
    _two_names_for_one_inner_dict)


@pytest.mark.parametrize("fn, p", [
    (_stored_then_written, {"W": np.array([0.3, -0.5, 0.7])}),
    (_store_through_a_name_after_its_slot_is_rebound,
     {"enc": {"W": np.array([0.3, -0.2, 0.9])}}),
    (_two_names_for_one_inner_dict, {"enc": {"W": np.array([0.3, -0.2, 0.9]),
                                             "b": np.array([0.1, 0.2, 0.3])}}),
], ids=["stored then written", "old inner dict", "two names"])
def test_source_mode_items_across_slot_stores(fn, p):
    """A write through a name whose slot was stored into since (`W = p['W']; p['W'] = ...;
    W -= x`: the write was put back into p -- a wrong value, silently), and two names for one
    inner dict, a store through each (one store was lost: 1.42 for 2.576). The generated code
    asks whether the slot still holds that very object (runtime.writes_through,
    store_through, item_again)."""
    x = np.array([0.4, 0.5, 0.6])
    python_after = copy.deepcopy(p)
    want_value = fn(python_after, x.copy())
    want = numerical_grad(lambda p, x: fn(copy.deepcopy(p), x), (p, x), wrt=(0, 1))
    mine = copy.deepcopy(p)
    value, got = srcad.value_and_grad(fn, wrt=(0, 1))(mine, x)
    assert value == pytest.approx(want_value, rel=1e-14)
    for a, b in zip(_leaves_of(got)[0], _leaves_of(want)[0]):
        assert rel_error(a, b) < 1e-7
    for a, b in zip(_leaves_of(mine)[0], _leaves_of(python_after)[0]):
        np.testing.assert_array_equal(a, b)


def _adds_a_key(p, x):
    p["c"] = p["a"] * x
    return np.sum(p["c"] ** 2) + np.sum(p["b"])


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_key_the_function_adds_is_not_in_the_gradient(mode):
    """The caller's dict holds the added key after the call, as Python leaves it; the
    gradient has the keys the argument was given (tape mode added a zero "c")."""
    p, x = {"a": np.array([0.3, 0.5]), "b": np.array([1.0, 2.0])}, np.array([0.4, 0.5])
    mine = copy.deepcopy(p)
    g = srcad.grad(_adds_a_key, mode=mode)(mine, x)
    assert list(g) == ["a", "b"] and list(mine) == ["a", "b", "c"]
    np.testing.assert_allclose(g["a"], 2 * p["a"] * x * x)
    np.testing.assert_array_equal(mine["c"], p["a"] * x)


def _stores_into_loop_items(layers, x):
    for layer in layers:
        layer["W"] = layer["W"] * 0.9  # (Python: the caller's dict itself)
        x = np.tanh(x @ layer["W"] + layer["b"])
    return np.sum(x ** 2)


def _stores_into_items_by_index(layers, x):
    for i in range(len(layers)):
        layers[i]["W"] = layers[i]["W"] * 0.9
        x = np.tanh(x @ layers[i]["W"] + layers[i]["b"])
    return np.sum(x ** 2)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_stores_into_dicts_held_in_a_list_argument(mode):
    """By index and through the loop variable (the loop written as the indexed one Python
    runs: frontend/itemloops.py; refused before), the stores reach the caller's list -- its
    very dicts hold the new "W", as Python leaves them -- and the gradient is exact."""
    r = _rng(50)
    layers = [{"W": r.normal(size=(3, 3)), "b": r.normal(size=3)} for _ in range(2)]
    x = r.normal(size=(2, 3))
    for fn in (_stores_into_items_by_index, _stores_into_loop_items):
        python_after = copy.deepcopy(layers)
        want_value = fn(python_after, x)
        mine = copy.deepcopy(layers)
        held = list(mine)
        value, g = srcad.value_and_grad(fn, mode=mode)(mine, x)
        assert value == want_value
        want = numerical_grad(lambda p: fn(copy.deepcopy(p), x), (layers,))
        for a, b in zip(_leaves_of(g)[0], _leaves_of(want)[0]):
            assert rel_error(a, b) < 1e-7
        for a, b in zip(_leaves_of(mine)[0], _leaves_of(python_after)[0]):
            np.testing.assert_array_equal(a, b)
        assert all(d is h for d, h in zip(mine, held))  # (the caller's own dicts)


def _slot_read_twice_after_a_store(p):
    p[0] = np.tanh(p[0]) * 1.5
    u1, u2 = p[0], p[0]
    v2 = 1.0 / (u1 * u1 + 1.0)
    v3 = np.sqrt(u1 * u1 + 1.0)
    return np.sum(v3 * v3) + np.sum(v2 * v2) + np.sum(u2 * u2)


def _slot_read_twice(p):
    u1 = p[0]
    v = np.sqrt(u1 * u1 + 1.0) * p[1]
    u2 = p[0]
    return np.sum(v * v) + np.sum(1.0 / (u1 * u1 + 1.0)) + np.sum(u2 * u2)


def _display_slot_read_twice(p):
    q = [np.tanh(p[0]) * 1.5, p[1]]
    u1, u2 = q[0], q[0]
    return np.sum(np.sqrt(u1 * u1 + 1.0) ** 2) + np.sum(1.0 / (u1 * u1 + 1.0)) + \
        np.sum(u2 * u2 * q[1])


def _dict_slot_read_twice_after_a_store(p):
    d = {"W": p[0], "b": p[1]}
    d["W"] = np.tanh(d["W"]) * 1.5
    u1 = d["W"]
    v = np.sqrt(u1 * u1 + 1.0)
    u2 = d["W"]
    return np.sum(v * v) + np.sum(1.0 / (u1 * u1 + 1.0)) + np.sum(u2 * u2 * d["b"])


def _slot_read_again_after_a_write_in_place(p):
    p[0] = p[0] * 0.5
    u1 = p[0]
    u1 *= 2.0            # (the slot's very object: the second read sees it)
    u2 = p[0]
    return np.sum(np.sin(u1) * u2) + np.sum(u2 * u2)


def _slot_read_again_after_a_pop(p):
    q = [np.tanh(p[0]), p[1], p[0] * 2.0]
    q[1] = q[1] * 3.0
    u1 = q[1]
    q.pop(0)             # (another object in the slot now)
    u2 = q[1]
    return np.sum(np.sin(u1) * u2) + np.sum(u2 * u2 * u1)


def _slot_read_again_after_a_store_beside(p):
    p[0] = np.cos(p[0])
    u1 = p[0]
    p[1] = u1 * 2.0 + p[1]
    u2 = p[0]
    return np.sum(np.sin(u1) * u2) + np.sum(u2 * u2 * p[1])


_BESIDE = pytest.param(_slot_read_again_after_a_store_beside, marks=pytest.mark.xfail(
    strict=True, reason="open: a store into another slot between the two reads binds the list "
    "again, so the second read is of another container value (read_again does not look through "
    "it): source sums the two reads' cotangents apart, tape in one -- the last bit; the value "
    "and the gradient are right (checked before the bitwise assert)"))


@pytest.mark.parametrize("fn", [_slot_read_twice_after_a_store, _slot_read_twice,
                                _display_slot_read_twice, _dict_slot_read_twice_after_a_store,
                                _slot_read_again_after_a_write_in_place,
                                _slot_read_again_after_a_pop, _BESIDE])
def test_a_slot_read_twice_source_is_tape_bit_for_bit(fn):
    """A list's or dict's slot read twice (a constant index or key), nothing between but
    what leaves the slot its object: the two reads are one object, as Python has it, so
    source mode gathers both reads' cotangents in one adjoint in the order the backward
    reaches them, as the tape's one Tensor does (it summed each read's apart and added the
    sums: the last bit differed -- the pytree writes fuzzer's seeds 1009, 1010 and 1012).
    Where the slot's object may have changed between (a pop, a store, a write in place),
    each read is still right: the value is Python's and the gradient finite differences'."""
    gs = srcad.value_and_grad(fn)
    gt = srcad.value_and_grad(fn, mode="tape")
    for seed in range(20):
        rng = np.random.default_rng(seed)
        p = [rng.standard_normal(3) for _ in range(2)]
        want = fn([q.copy() for q in p])
        (vs, a), (vt, b) = gs([q.copy() for q in p]), gt([q.copy() for q in p])
        assert vs == want and vt == want, seed
        if seed < 3:
            num = numerical_grad(lambda q: fn([x.copy() for x in q]), (p,))
            assert rel_error(a, num) < 1e-7 and rel_error(b, num) < 1e-7
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), seed
