"""Stores into lists and dicts a module or an object holds, by another name; attributes of
user objects spelt like an array's; objects a method hands back (session of 2026-12-06, ninth).

cs231n's `FullyConnectedNet.loss` sets the mode of every batch-norm layer's dict before its
forward pass (``for bn_param in self.bn_params: bn_param["mode"] = mode``) and of its dropout
dict (``self.dropout_param["mode"] = mode``), and its layer functions read the mode back from
the dict they are handed. Before this session srcad's source mode carried the store as a new
dict nobody read: the layers read the mode the dict held *before* the call -- after a solver's
test-mode call (``model.loss(X)``), the test-mode forward, a wrong gradient, silently (relative
error 1.8 against central differences), and the dicts left "test" after the call; the dropout
spelling was refused. Now such a store is also made into the held container itself, as Python
makes it (frontend/aliasing.py `held_root`, `store_into_held`: a "held" setitem effect); an
item srcad read when it built the code and the call stores into first is refused
(refusals.check_folded_items, `_held_stores`); a value depending on the differentiated
arguments stored so is refused as before (check_writes_into_held_values).

Found by the same probe: a module dict's string read (``bn_param["mode"]``) beside a store of
another key (``bn_param["running_mean"] = ...``) was refused as if the function called the item;
``X.astype(self.dtype)`` (and ``self.size``, ``self.T``, ``self.ndim``, ``self.shape`` of a
layer) read the array attribute of the object itself (``np.result_type(self)``: a crash blamed
on the user, or ``np.size(self) == 1`` silently); ``model.params["W1"] = W1`` with ``model`` an
argument was refused as "assignment into something other than a local array"; and a method of
a global object handing back a new object (``t.scaled(2.0).sum()``) had the new object's
``sum`` read as numpy's (a TypeError blamed on the user's code).
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = {"source": {}, "fuse": {"fuse": True}, "tape": {"mode": "tape"}}


def _close(got, want, tol=1e-6):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = max(np.max(np.abs(want), initial=0.0), 1e-3)
    assert np.max(np.abs(got - want), initial=0.0) <= tol * scale, (got, want)


# -- cs231n's fully connected net ----------------------------------------------------------------

def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    return out, (x, w, b)


def relu_forward(x):
    return np.maximum(0, x), x


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    if mode == "train":
        mu = np.mean(x, axis=0)
        var = np.var(x, axis=0)
        out = gamma * (x - mu) / np.sqrt(var + eps) + beta
        running_mean = momentum * running_mean + (1 - momentum) * mu
        running_var = momentum * running_var + (1 - momentum) * var
    elif mode == "test":
        out = gamma * (x - running_mean) / np.sqrt(running_var + eps) + beta
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out, None


def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    if "seed" in dropout_param:
        np.random.seed(dropout_param["seed"])
    if mode == "train":
        mask = (np.random.rand(*x.shape) < p) / p
        out = x * mask
    else:
        mask = None
        out = x
    return out.astype(x.dtype, copy=False), (dropout_param, mask)


def softmax_loss(x, y):
    shifted = x - np.max(x, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(log_probs[np.arange(x.shape[0]), y]) / x.shape[0], None


class FullyConnectedNet:
    def __init__(self, hidden_dims, normalization=None, dropout_keep_ratio=1, reg=0.1,
                 input_dim=6, num_classes=3):
        self.normalization = normalization
        self.use_dropout = dropout_keep_ratio != 1
        self.reg = reg
        self.num_layers = 1 + len(hidden_dims)
        self.dtype = np.float64
        self.params = {}
        dims = [input_dim] + hidden_dims + [num_classes]
        rng = np.random.default_rng(1)
        for i in range(self.num_layers):
            self.params["W%d" % (i + 1)] = 0.3 * rng.standard_normal((dims[i], dims[i + 1]))
            self.params["b%d" % (i + 1)] = 0.1 * rng.standard_normal(dims[i + 1])
            if normalization and i < self.num_layers - 1:
                self.params["gamma%d" % (i + 1)] = 1 + 0.1 * rng.standard_normal(dims[i + 1])
                self.params["beta%d" % (i + 1)] = 0.1 * rng.standard_normal(dims[i + 1])
        self.dropout_param = {}
        if self.use_dropout:
            self.dropout_param = {"mode": "train", "p": dropout_keep_ratio, "seed": 123}
        self.bn_params = []
        if normalization == "batchnorm":
            self.bn_params = [{"mode": "train"} for _ in range(self.num_layers - 1)]

    def loss(self, X, y=None):
        X = X.astype(self.dtype)
        mode = "test" if y is None else "train"
        if self.use_dropout:
            self.dropout_param["mode"] = mode
        if self.normalization == "batchnorm":
            for bn_param in self.bn_params:
                bn_param["mode"] = mode
        out = X
        for i in range(self.num_layers - 1):
            W, b = self.params["W%d" % (i + 1)], self.params["b%d" % (i + 1)]
            out, _ = affine_forward(out, W, b)
            if self.normalization == "batchnorm":
                gamma, beta = self.params["gamma%d" % (i + 1)], self.params["beta%d" % (i + 1)]
                out, _ = batchnorm_forward(out, gamma, beta, self.bn_params[i])
            out, _ = relu_forward(out)
            if self.use_dropout:
                out, _ = dropout_forward(out, self.dropout_param)
        W, b = self.params["W%d" % self.num_layers], self.params["b%d" % self.num_layers]
        scores, _ = affine_forward(out, W, b)
        if mode == "test":
            return scores
        loss, _ = softmax_loss(scores, y)
        for i in range(self.num_layers):
            W = self.params["W%d" % (i + 1)]
            loss += 0.5 * self.reg * np.sum(W * W)
        return loss


_X = np.random.default_rng(5).standard_normal((5, 6))
_Y = np.array([0, 2, 1, 1, 0])
_NETS = {}


def _net(norm, keep):
    if (norm, keep) not in _NETS:
        _NETS[(norm, keep)] = FullyConnectedNet([4, 5], normalization=norm,
                                                dropout_keep_ratio=keep)
    return _NETS[(norm, keep)]


def _state(net):
    """The net's dicts as plain values (modes, running statistics)."""
    return ([dict(d) for d in net.bn_params], dict(net.dropout_param))


def _restore(net, state):
    for d, was in zip(net.bn_params, state[0]):
        d.clear()
        d.update(was)
    net.dropout_param.clear()
    net.dropout_param.update(state[1])


def _same_state(got, want):
    for g, w in zip(got[0] + [got[1]], want[0] + [want[1]]):
        assert g.keys() == w.keys(), (g, w)
        for k in w:
            if isinstance(w[k], np.ndarray):
                np.testing.assert_allclose(g[k], w[k], rtol=1e-12, atol=1e-14)
            else:
                assert g[k] == w[k], (k, g[k], w[k])


def _loss_of_x(X):
    return _CURRENT.loss(X, _Y)


_CURRENT = None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("norm,keep", [(None, 1), ("batchnorm", 1), (None, 0.75),
                                       ("batchnorm", 0.75)])
def test_cs231n_net_after_a_test_mode_call(norm, keep, mode):
    """The solver's check_accuracy runs `model.loss(X)` (test mode) between training steps:
    the next gradient must be the training mode's, and leave the dicts as Python does."""
    global _CURRENT
    net = _CURRENT = _net(norm, keep)
    net.loss(_X)  # (test mode: every dict says "test")
    start = _state(net)
    want_value = net.loss(_X, _Y)
    want_state = _state(net)
    _restore(net, start)
    value, g = srcad.value_and_grad(_loss_of_x, **MODES[mode])(_X.copy())
    _same_state(_state(net), want_state)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)

    def from_start(X):
        _restore(net, start)
        return _loss_of_x(X)

    _close(g, numerical_grad(from_start, (_X.copy(),), h=1e-6))


def _loss_of_params(params):
    _CURRENT.params = params
    return _CURRENT.loss(_X, _Y)


def _store_w1(W1, model):
    model.params["W1"] = W1
    return model.loss(_X, _Y)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("norm,keep", [(None, 1), ("batchnorm", 0.75)])
def test_cs231n_gradient_check_routes(norm, keep, mode):
    """The two ways a gradient check hands the weights over: the params dict set whole, and
    one entry stored into the model an argument holds."""
    global _CURRENT
    net = _CURRENT = _net(norm, keep)
    params = {k: v.copy() for k, v in net.params.items()}
    g = srcad.grad(_loss_of_params, **MODES[mode])(params)
    want = numerical_grad(_loss_of_params, (params,), h=1e-6)
    for k in params:
        _close(g[k], want[k])
    net.params = params
    W1 = params["W1"].copy()
    g = srcad.grad(_store_w1, **MODES[mode])(W1, net)
    _close(g, numerical_grad(lambda W: _store_w1(W, net), (W1,), h=1e-6))
    assert net.params["W1"] is not None


# -- a module's list or dict, stored into by another name -----------------------------------------

PS = [{"mode": "test"}, {"mode": "test"}]
CFG = {"mode": "test", "act": np.tanh}


def _reset():
    for d in PS:
        d["mode"] = "test"
    CFG["mode"], CFG["act"] = "test", np.tanh


def _scaled(x, p):
    return x * (2.0 if p["mode"] == "train" else 3.0)


def loop_variable_store_then_callee(x):
    for p in PS:
        p["mode"] = "train"
    for p in PS:
        x = _scaled(x, p)
    return np.sum(x ** 2)


def loop_variable_store_then_item(x):
    for p in PS:
        p["mode"] = "train"
    return np.sum(_scaled(x, PS[1]) ** 2)


def second_name_store_then_callee(x):
    p = PS[0]
    p["mode"] = "train"
    p["seen"] = 1
    return np.sum(_scaled(x, PS[0]) ** 2)


def alias_store_then_alias_read(x):
    d = CFG
    d["mode"] = "train"
    return np.sum(x ** 2) if d["mode"] == "train" else np.sum(x)


class Holder:
    def __init__(self):
        self.ps = [{"mode": "test"}, {"mode": "test"}]
        self.cfg = {"mode": "test"}

    def loss(self, x, mode):
        for p in self.ps:
            p["mode"] = mode
        for p in self.ps:
            x = _scaled(x, p)
        return np.sum(x ** 2)

    def loss_attr(self, x, mode):
        self.cfg["mode"] = mode
        return np.sum(_scaled(x, self.cfg) ** 2)

    def loss_indexed(self, x, mode):
        for i in range(len(self.ps)):
            self.ps[i]["mode"] = mode
        return np.sum(_scaled(x, self.ps[1]) ** 2)


HOLDER = Holder()


def _reset_holder():
    for d in HOLDER.ps + [HOLDER.cfg]:
        d["mode"] = "test"


def object_list_store(x):
    return HOLDER.loss(x, "train")


def object_dict_store_handed_on(x):
    return HOLDER.loss_attr(x, "train")


def object_item_store_by_index(x):
    return HOLDER.loss_indexed(x, "train")


RUNS = [(loop_variable_store_then_callee, _reset, 2.0 ** 4),
        (loop_variable_store_then_item, _reset, 2.0 ** 2),
        (second_name_store_then_callee, _reset, 2.0 ** 2),
        (alias_store_then_alias_read, _reset, 1.0),
        (object_list_store, _reset_holder, 2.0 ** 4),
        (object_dict_store_handed_on, _reset_holder, 2.0 ** 2),
        (object_item_store_by_index, _reset_holder, 2.0 ** 2)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,reset,factor", RUNS, ids=[r[0].__name__ for r in RUNS])
def test_a_store_into_a_held_container_is_pythons(fn, reset, factor, mode):
    """The gradient of the mode the store set (not the one the container held before the
    call), and the container holding what Python's call leaves (each mode computes from the
    state "test" every time)."""
    x = np.array([0.3, -0.7, 1.1])
    reset()
    fn(x.copy())
    want = [dict(d) for d in PS + [CFG] + HOLDER.ps + [HOLDER.cfg]]
    reset()
    g = srcad.grad(fn, **MODES[mode])(x.copy())
    assert [dict(d) for d in PS + [CFG] + HOLDER.ps + [HOLDER.cfg]] == want
    np.testing.assert_allclose(g, 2 * factor * x, rtol=1e-12)
    reset()
    g = srcad.grad(fn, **MODES[mode])(x.copy())  # (again from "test": no stale code)
    np.testing.assert_allclose(g, 2 * factor * x, rtol=1e-12)


def second_name_store_then_global_read(x):
    d = CFG
    d["mode"] = "train"
    if CFG["mode"] == "train":
        return np.sum(x ** 2)
    return np.sum(x)


def second_name_store_then_global_call(x):
    d = CFG
    d["act"] = np.sin
    return np.sum(CFG["act"](x))


def store_then_read_the_same_key(x):
    CFG["mode"] = "eval"
    return np.sum(x ** 2) if CFG["mode"] == "train" else np.sum(x)


def held_store_of_a_differentiated_value(x):
    for p in PS:
        p["scale"] = np.sum(x)
    return np.sum(x ** 2)


REFUSED = [(second_name_store_then_global_read, "is read here, and this call also stores"),
           (second_name_store_then_global_call, "is called here, and this call also stores"),
           (store_then_read_the_same_key, "is read here, and this call also stores"),
           (held_store_of_a_differentiated_value,
            "writes into a list or dict a module global or an object holds")]


@pytest.mark.parametrize("mode", ["source", "fuse"])
@pytest.mark.parametrize("fn,phrase", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_what_srcad_read_when_it_built_the_code_is_refused_not_stale(fn, phrase, mode):
    """An item srcad read when it built the code (a string, a function), which the call
    stores into first by another name (or by the same), would be the old one: refused, as a
    differentiated value stored into a held container is; all of these ran with the old
    item or a wrong gradient on 2bc1c92 but the last one."""
    _reset()
    _reset_holder()
    try:
        with pytest.raises(srcad.SrcadError, match=phrase):
            srcad.grad(fn, **MODES[mode])(np.array([0.3, -0.7, 1.1]))
    finally:
        _reset()
        _reset_holder()


# -- a module dict's string read beside stores of other keys --------------------------------------

BN = {"mode": "train", "eps": 1e-5, "momentum": 0.9}


def global_bn_param(gamma, x):
    mode = BN["mode"]
    eps = BN.get("eps", 1e-5)
    D = x.shape[1]
    running_mean = BN.get("running_mean", np.zeros(D))
    if mode == "train":
        mu = x.mean(axis=0)
        out = gamma * (x - mu) / np.sqrt(x.var(axis=0) + eps)
        running_mean = 0.9 * running_mean + 0.1 * mu
    else:
        out = gamma * (x - running_mean)
    BN["running_mean"] = running_mean
    BN.update({"calls": BN.get("calls", 0) + 1})
    return np.sum(out ** 3)


@pytest.mark.parametrize("mode", MODES)
def test_a_config_dicts_mode_read_beside_stores_of_other_keys(mode):
    x = np.random.default_rng(2).standard_normal((5, 3))
    gamma = np.array([1.0, 0.5, -0.7])
    BN.pop("running_mean", None)
    want = numerical_grad(global_bn_param, (gamma, x), wrt=(0, 1), h=1e-6)
    BN.pop("running_mean", None)
    g = srcad.grad(global_bn_param, wrt=(0, 1), **MODES[mode])(gamma, x)
    for a, b in zip(g, want):
        _close(a, b)
    np.testing.assert_allclose(BN["running_mean"], 0.1 * x.mean(axis=0), rtol=1e-12)
    BN["mode"] = "test"  # (the user switches: the code is built again, not stale)
    try:
        g = srcad.grad(global_bn_param, wrt=(0, 1), **MODES[mode])(gamma, x)
        _close(g[0], np.sum(3 * (gamma * (x - BN["running_mean"])) ** 2 *
                            (x - BN["running_mean"]), axis=0))
    finally:
        BN["mode"] = "train"


# -- a user object's attributes spelt like an array's ---------------------------------------------

class Scaled:
    def __init__(self):
        self.size, self.T, self.ndim, self.shape, self.real = 4, 2.5, 3, (2, 2), 0.5
        self.dtype = np.float64

    def loss(self, x):
        x = x.astype(self.dtype)
        return (np.sum(x ** 2) * self.size + self.T * np.sum(x) + self.ndim * x[0] +
                np.sum(x[:self.shape[0]]) * self.real)


SCALED = Scaled()


def own_attributes(x):
    return SCALED.loss(x)


def own_attributes_of_an_argument(x, obj):
    return np.sum(x.astype(obj.dtype) ** 2) * obj.size + obj.T * x[1]


@pytest.mark.parametrize("mode", MODES)
def test_attributes_named_like_an_arrays_are_the_objects_own(mode):
    x = np.array([0.3, -0.7, 1.1])
    want = 8 * x + 2.5 + np.array([3.0, 0.0, 0.0]) + np.array([0.5, 0.5, 0.0])
    np.testing.assert_allclose(srcad.grad(own_attributes, **MODES[mode])(x), want, rtol=1e-12)
    np.testing.assert_allclose(srcad.value_and_grad(own_attributes, **MODES[mode])(x)[0],
                               own_attributes(x), rtol=1e-12)
    g = srcad.grad(own_attributes_of_an_argument, **MODES[mode])(x, SCALED)
    np.testing.assert_allclose(g, 8 * x + np.array([0.0, 2.5, 0.0]), rtol=1e-12)


# -- an object a method hands back ----------------------------------------------------------------

class Tensor:
    def __init__(self, w):
        self.w = w

    def sum(self):
        return np.sum(self.w) * 2.0

    def copy(self):
        return Tensor(self.w * 1.5)

    def scaled(self, a):
        return Tensor(self.w * a)

    def total(self, v):
        return np.sum(self.w * v)


T0 = Tensor(np.array([0.5, -1.0, 2.0]))


def method_hands_back_an_object(v):
    return T0.scaled(2.0).sum() * np.sum(v ** 2) + T0.copy().total(v) + T0.scaled(v[0]).sum()


class Model:
    def __init__(self):
        self.t = Tensor(np.array([0.5, -1.0, 2.0]))

    def loss(self, v):
        return self.t.scaled(3.0).sum() * np.sum(v ** 2)


MODEL = Model()


def sub_object_hands_back_an_object(v):
    return MODEL.loss(v)


@pytest.mark.parametrize("mode", MODES)
def test_an_object_a_method_hands_back_calls_its_own_methods(mode):
    v = np.array([0.3, -0.7, 1.1])
    s = np.sum(T0.w)
    want = 2 * (2 * s * 2.0) * v + 1.5 * T0.w + np.array([2.0 * s, 0.0, 0.0])
    np.testing.assert_allclose(srcad.grad(method_hands_back_an_object, **MODES[mode])(v),
                               want, rtol=1e-12)


@pytest.mark.parametrize("mode", ["source", "fuse"])
def test_an_object_srcad_did_not_follow_is_refused_not_read_as_an_array(mode):
    """A method of a sub-object, run as written, hands back a Tensor: its `.sum()` would be
    numpy's (a TypeError blamed on the user's code, or a silent `np.ndim(obj) == 0` for an
    attribute): refused, naming the class, where the code is probed."""
    with pytest.raises(srcad.SrcadError, match="numpy's `sum` is given a Tensor object"):
        srcad.grad(sub_object_hands_back_an_object, **MODES[mode])(np.ones(3))
    g = srcad.grad(sub_object_hands_back_an_object, mode="tape")(np.ones(3))
    np.testing.assert_allclose(g, 2 * 3.0 * 2.0 * np.sum(MODEL.t.w) * np.ones(3), rtol=1e-12)


def _shaped(x, p):
    if p["mode"] == "train":
        y = np.outer(x, x)
    else:
        y = x * p["running"]  # (no such key yet: a KeyError in a probe of the old state)
    return y


def a_branch_of_another_shape(x):
    for p in PS:
        p["mode"] = "train"
    total = 0.0
    for p in PS:
        y = _shaped(x, p)
        total = total + np.sum(y ** 2) + y.shape[0] * y.ndim
    return total


@pytest.mark.parametrize("mode", MODES)
def test_the_shape_probe_sees_the_store(mode):
    """srcad's first call probes the code for shapes on the real arguments: it makes the
    held store too (undone after it), so the branch it probes is the one the call takes (it
    probed the other before, which raised a KeyError blamed on the user's code)."""
    x = np.array([0.3, -0.7, 1.1])
    _reset()
    want_value = a_branch_of_another_shape(x)
    _reset()
    value, g = srcad.value_and_grad(a_branch_of_another_shape, **MODES[mode])(x)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(g, 2 * 4 * np.sum(x ** 2) * x, rtol=1e-12)
    assert [p["mode"] for p in PS] == ["train", "train"]


# -- tape mode: a module's list a layer's method appends to ---------------------------------------

def test_a_modules_list_a_method_appends_to_holds_arrays():
    """Found by the object-state fuzzer once it drew the modes (seed 55, its third program:
    the layers' modes set through a module's list of their dicts, the layers walked through
    `[*NET.layers]`, DenseB's forward appending to the module's LOG): tape mode left the
    tape's Tensor in LOG, where Python's call leaves the array (the modules of the classes
    the tape followed are swept when the run ends now: tape.settle_kept)."""
    from collections import Counter

    from tests import fixtures_seed55_program as P
    from tests import fuzz_object_state as FS
    from tests import test_fuzz_object_state as T

    prog = FS.Prog(P.NAME, P.SOURCE, P.N_WEIGHTS, features=P.FEATURES,
                   objects=("L1", "A1", "L2", "L3", "NET") + FS.KEPT)  # (frozen before TALLY)
    assert "for layer in [*p2_NET.layers]:" in prog.source
    mod = FS.import_programs([prog], "held_stores_seed55")
    tally = {"refused": 0, "passed": 0, "reasons": Counter()}
    T.check(getattr(mod, prog.name), T.objects(prog, mod), prog.make_args(55), None, ["tape"],
            tally)  # (source mode refuses it: a read back from an object)
    assert tally["passed"] == 1
