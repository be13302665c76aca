"""Layers reached through what holds them: a model's `__getitem__` / `__iter__` / `__len__`,
an object's dict of layers (``self.layers = OrderedDict()``), a copy of its list, an index
loop over it -- and the ways srcad cannot follow, refused.

Found by front-door probes (session of 2026-12-06, seventh; /tmp/probe/s15 in its note), on
main at 986323c:
* **silent zeros**: a weight stored on a layer (``net.layers[0].W = W``, ``l = net[0]; l.W =
  W``) and read by a method that reached the layer another way -- ``for layer in
  self.layers.values()`` of an object's dict of layers (the layout of "Deep Learning from
  Scratch"'s TwoLayerNet), ``for l in list(self.layers)`` / ``tuple(...)`` /
  ``.copy()``, ``for l in self`` with an ``__iter__`` handing over to the list, ``filter``,
  ``map``, ``itertools.chain``, a dict display of the layers: srcad ran the method as written
  on an object it did not know while it built the code, after a store it carried only into
  the methods it traced, and the gradient was zeros (relative error 1.0);
* **refusals** of the common spellings: ``net[0].W = W`` ("assignment to an attribute of
  an expression"), ``net[i].forward(h)`` / ``net.layers[i].forward(h)`` in ``for i in
  range(len(net))`` ("`.forward()` has no derivative rule"), the TwoLayerNet's
  ``net.layers['Affine1'].W = W1`` and its input gradient;
* **crashes blamed on the user's code**: ``enumerate(self.layers.items())`` ("'odict_items'
  object is not subscriptable"), ``enumerate(d)`` of a dict (KeyError), ``zip(xs,
  iter(ys))`` (no len()).

Now a class's dunder that only hands the operation to a list (or dict) it holds is read
through (frontend/objects.py `delegated_sequence`), an object's dict of user objects is a
constant whose loops are written out per key (expressions.py, loops.py), ``list(...)`` /
``tuple(...)`` / ``.copy()`` of a known list of objects is the display of those objects
(calls.py `listed_objects`), an index loop over a known list of objects is written out per
index (loops.py `trips_over_known_objects`), ``enumerate`` / ``zip`` take what Python's
``for`` takes from an iterator, dict or set; and what is left -- a method run as written on
an object a differentiated value was stored into -- is refused (analysis/refusals.py
`_state_name`, `_objects_held`). The object-state fuzzer (tests/fuzz_object_state.py) draws
these forms: seeds 0-59, 34 of 360 programs differed on 986323c, none now.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(7)


def _r(*shape):
    return RNG.uniform(-0.8, 0.8, shape)


X = _r(5, 3)


class Dense:
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return np.tanh(x @ self.W)


class Net:
    def __init__(self, layers):
        self.layers = layers
        self.named = OrderedDict((f"fc{i}", layer) for i, layer in enumerate(layers))
        self.plain = dict(self.named)
        self.n_layers = len(layers)

    def __getitem__(self, i):
        return self.layers[i]

    def __iter__(self):
        return iter(self.layers)

    def __len__(self):
        return len(self.layers)

    def loss_iter(self, x):
        for layer in self:
            x = layer.forward(x)
        return np.sum(x ** 2)

    def loss_items(self, x):
        for name, layer in self.named.items():
            x = layer.forward(x)
        return np.sum(x ** 2)

    def loss_values(self, x):
        for layer in self.plain.values():
            x = layer.forward(x)
        return np.sum(x ** 2)

    def loss_keys(self, x):
        for k in self.plain:
            x = self.plain[k].forward(x)
        return np.sum(x ** 2)

    def loss_enumerate_items(self, x):
        for i, (name, layer) in enumerate(self.named.items()):
            x = layer.forward(x) * (i + 1.0)
        return np.sum(x ** 2)

    def loss_list(self, x):
        for layer in list(self.layers):
            x = layer.forward(x)
        return np.sum(x ** 2)

    def loss_tuple(self, x):
        for layer in tuple(self.layers):
            x = layer.forward(x)
        return np.sum(x ** 2)

    def loss_copy(self, x):
        layers = self.layers.copy()
        for layer in layers:
            x = layer.forward(x)
        return np.sum(x ** 2)

    def loss_index(self, x):
        for i in range(self.n_layers):
            x = self.layers[i].forward(x)
        return np.sum(x ** 2)

    # (ways srcad cannot follow: the layers handed out by a call it runs as written)
    def loss_filter(self, x):
        for layer in filter(lambda l: hasattr(l, "W"), self.layers):
            x = layer.forward(x)
        return np.sum(x ** 2)

    def loss_chain(self, x):
        for layer in itertools.chain(self.layers[:1], self.layers[1:]):
            x = layer.forward(x)
        return np.sum(x ** 2)

    def loss_map(self, x):
        for f in map(lambda l: l.forward, self.layers):
            x = f(x)
        return np.sum(x ** 2)

    def loss_sorted(self, x):
        for layer in sorted(self.layers, key=lambda l: -l.W.shape[1]):
            x = layer.forward(x)
        return np.sum(x ** 2)

    def loss_display_dict(self, x):
        d = {"a": self.layers[0], "b": self.layers[1]}
        for k in d:
            x = d[k].forward(x)
        return np.sum(x ** 2)


NET = Net([Dense(_r(3, 4)), Dense(_r(4, 2))])


# ---- programs that run: each a weight stored on a layer, then read through a container ----
def stored_through_getitem(W):
    NET[0].W = W
    return NET.loss_iter(X)


def stored_through_a_local_of_getitem(W):
    layer = NET[0]
    layer.W = W
    return NET.loss_iter(X)


def stored_by_a_zip_over_the_model(W, V):
    for layer, w in zip(NET, [W, V]):
        layer.W = w
    return NET.loss_iter(X)


def a_method_of_getitem(W):
    return np.sum(NET[-1].forward(np.tanh(X @ W)))


def an_index_loop_over_len_of_the_model(W):
    h = np.tanh(X @ W)
    for i in range(1, len(NET)):
        h = NET[i].forward(h)
    return np.sum(h)


def an_index_loop_over_the_models_list(W):
    h = np.tanh(X @ W)
    for i in range(1, len(NET.layers)):
        h = NET.layers[i].forward(h)
    return np.sum(h)


def stored_then_items(W):
    NET.layers[0].W = W
    return NET.loss_items(X)


def stored_then_values(W):
    NET.layers[0].W = W
    return NET.loss_values(X)


def stored_then_keys(W):
    NET.layers[0].W = W
    return NET.loss_keys(X)


def stored_then_enumerate_items(W):
    NET.layers[0].W = W
    return NET.loss_enumerate_items(X)


def stored_then_list(W):
    NET.layers[0].W = W
    return NET.loss_list(X)


def stored_then_tuple(W):
    NET.layers[0].W = W
    return NET.loss_tuple(X)


def stored_then_copy(W):
    NET.layers[0].W = W
    return NET.loss_copy(X)


def stored_then_index(W):
    NET.layers[0].W = W
    return NET.loss_index(X)


def stored_by_key_of_the_dict(W):
    NET.named["fc0"].W = W
    return NET.loss_values(X)


RUNS = [stored_through_getitem, stored_through_a_local_of_getitem, a_method_of_getitem,
        an_index_loop_over_len_of_the_model, an_index_loop_over_the_models_list,
        stored_then_items, stored_then_values, stored_then_keys, stored_then_enumerate_items,
        stored_then_list, stored_then_tuple, stored_then_copy, stored_then_index,
        stored_by_key_of_the_dict]


def _check(f, args, **kw):
    g = srcad.grad(f, wrt=tuple(range(len(args))), **kw)(*[a.copy() for a in args])
    want = numerical_grad(f, tuple(a.copy() for a in args), wrt=tuple(range(len(args))))
    for gi, wi in zip(g, want):
        np.testing.assert_allclose(gi, wi, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kw", [{}, {"fuse": True}, {"mode": "tape"}],
                         ids=["source", "fused", "tape"])
@pytest.mark.parametrize("f", RUNS, ids=lambda f: f.__name__)
def test_a_layer_reached_through_a_container_runs(f, kw):
    W = _r(3, 4)
    _check(f, (W,), **kw)
    if f.__name__.startswith("stored"):  # (the layer keeps what the call stored, as Python's)
        srcad.grad(f, **kw)(W)
        assert NET.layers[0].W is W or np.array_equal(NET.layers[0].W, W)


@pytest.mark.parametrize("kw", [{}, {"mode": "tape"}], ids=["source", "tape"])
def test_weights_stored_by_a_zip_over_the_models_iter(kw):
    _check(stored_by_a_zip_over_the_model, (_r(3, 4), _r(4, 2)), **kw)


# ---- "Deep Learning from Scratch": an OrderedDict of layers, state kept on them ------------
class Relu:
    def __init__(self):
        self.mask = None

    def forward(self, x):
        self.mask = (x <= 0)
        out = x.copy()
        out[self.mask] = 0
        return out


class Affine:
    def __init__(self, W, b):
        self.W = W
        self.b = b
        self.x = None

    def forward(self, x):
        self.x = x
        return np.dot(self.x, self.W) + self.b


class SoftmaxWithLoss:
    def forward(self, x, t):
        self.t = t
        x = x - np.max(x, axis=1, keepdims=True)
        self.y = np.exp(x) / np.sum(np.exp(x), axis=1, keepdims=True)
        return -np.sum(np.log(self.y[np.arange(x.shape[0]), t.argmax(axis=1)] + 1e-7)) / \
            x.shape[0]


class TwoLayerNet:
    def __init__(self, n_in, n_hidden, n_out):
        self.params = {"W1": _r(n_in, n_hidden), "b1": np.zeros(n_hidden),
                       "W2": _r(n_hidden, n_out), "b2": np.zeros(n_out)}
        self.layers = OrderedDict()
        self.layers["Affine1"] = Affine(self.params["W1"], self.params["b1"])
        self.layers["Relu1"] = Relu()
        self.layers["Affine2"] = Affine(self.params["W2"], self.params["b2"])
        self.last_layer = SoftmaxWithLoss()

    def predict(self, x):
        for layer in self.layers.values():
            x = layer.forward(x)
        return x

    def loss(self, x, t):
        return self.last_layer.forward(self.predict(x), t)


TWO = TwoLayerNet(4, 5, 3)
XT = _r(6, 4)
T = np.eye(3)[[0, 2, 1, 1, 0, 2]]


def two_layer_net_by_layer(W1):
    TWO.layers["Affine1"].W = W1
    return TWO.loss(XT, T)


def two_layer_net_both(W1, W2):
    for name, W in (("Affine1", W1), ("Affine2", W2)):
        TWO.layers[name].W = W
    return TWO.loss(XT, T)


def two_layer_net_input(x):
    return TWO.loss(x, T)


@pytest.mark.parametrize("kw", [{}, {"fuse": True}, {"mode": "tape"}],
                         ids=["source", "fused", "tape"])
def test_deep_learning_from_scratch_two_layer_net(kw):
    _check(two_layer_net_by_layer, (TWO.params["W1"].copy(),), **kw)
    _check(two_layer_net_both, (TWO.params["W1"].copy(), TWO.params["W2"].copy()), **kw)
    _check(two_layer_net_input, (XT.copy(),), **kw)


# ---- iterators, dicts and sets given to enumerate / zip: Python's `for` takes them ---------
def enumerate_a_dicts_items(params):
    h = X
    for i, (k, W) in enumerate(params.items()):
        h = np.tanh(h @ W) * (i + 1.0)
    return np.sum(h)


def enumerate_a_dict_and_a_set(W):
    d = {"x": W, "y": W * 2.0}
    s = 0.0
    for i, (k, v) in enumerate(d.items()):
        s = s + np.sum(v) * (i + 1)
    for j, k in enumerate(d):
        s = s + np.sum(d[k] ** 2) * j
    for j, v in enumerate(set(range(1, 3))):
        s = s + v * np.sum(W)
    return s


def zip_with_an_iterator(W):
    s = 0.0
    for i, (a, b) in enumerate(zip((W, W * 2.0), iter([1.0, 2.0]))):
        s = s + np.sum(a) * b * i
    return s


def test_enumerate_and_zip_take_what_a_for_takes():
    P = {"W1": _r(3, 4), "W2": _r(4, 2)}
    g = srcad.grad(enumerate_a_dicts_items)(P)
    want = numerical_grad(enumerate_a_dicts_items, (P,))
    for k in P:
        np.testing.assert_allclose(g[k], want[k], rtol=1e-6, atol=1e-8)
    _check(enumerate_a_dict_and_a_set, (_r(3),))
    _check(zip_with_an_iterator, (_r(3),))


# ---- what srcad cannot follow: refused in source mode, never zeros; tape mode follows ------
def stored_then_filter(W):
    NET.layers[0].W = W
    return NET.loss_filter(X)


def stored_then_chain(W):
    NET.layers[0].W = W
    return NET.loss_chain(X)


def stored_then_map(W):
    NET.layers[0].W = W
    return NET.loss_map(X)


def stored_then_sorted(W):
    NET.layers[0].W = W
    return NET.loss_sorted(X)


def stored_then_a_dict_display(W):
    NET.layers[0].W = W
    return NET.loss_display_dict(X)


def stored_on_a_local_then_filter(W):
    layer = NET.layers[0]
    layer.W = W
    return NET.loss_filter(X)


REFUSED = [stored_then_filter, stored_then_chain, stored_then_map, stored_then_sorted,
           stored_then_a_dict_display, stored_on_a_local_then_filter]


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__)
def test_a_layer_handed_out_by_a_call_run_as_written_is_refused(f, fuse):
    with pytest.raises(srcad.SrcadError, match="no derivative rule") as e:
        srcad.grad(f, fuse=fuse)(_r(3, 4))
    assert "test_layers_in_containers.py" in str(e.value)


@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__)
def test_tape_mode_follows_a_layer_handed_out_by_a_call(f):
    _check(f, (_r(3, 4),), mode="tape")


# ---- left open: a method srcad runs as written on a user object runs twice on a first call --
class Counter:
    def __init__(self):
        self.n = 0

    def bump(self):
        self.n += 1
        return self.n


COUNTER = Counter()


def bumps_a_counter_it_picks(x):
    counter = sorted([COUNTER], key=id)[0]
    counter.bump()
    return np.sum(x ** 2)


def test_a_method_run_as_written_runs_once_per_call():
    # (the shape probe, srcad/probe.py, ran it on the object itself -- it took the object
    # a getitem handed out for one it made -- and the real call ran it again: on a first
    # call its effect happened twice, a layer's cache appended twice, found by the
    # object-state fuzzer; now the probe runs it on its own copy, interpret._probe_owns)
    for mode in ("source", "tape"):
        before = COUNTER.n
        g = srcad.grad(bumps_a_counter_it_picks, mode=mode)
        g(np.ones(3))
        assert COUNTER.n == before + 1
        g(np.ones(3))
        assert COUNTER.n == before + 2


# ---- layers named by a string built in a loop; parameter objects a method hands out --------
class Param:
    def __init__(self, value):
        self.value = value
        self.grad = np.zeros_like(value)


class Linear:
    def __init__(self, n_in, n_out):
        self.W = Param(_r(n_in, n_out))
        self.b = Param(np.zeros(n_out))

    def __call__(self, x):
        return np.tanh(x @ self.W.value + self.b.value)

    def params(self):
        return [self.W, self.b]


class Named:
    def __init__(self):
        self.fc1, self.fc2 = Linear(3, 4), Linear(4, 2)
        self.n = 2

    def forward_fstring(self, x):
        for i in (1, 2):
            x = getattr(self, f"fc{i}")(x)
        return x

    def forward_range(self, x):
        for i in range(1, self.n + 1):
            x = getattr(self, "fc" + str(i))(x)
        return x

    def forward_vars(self, x):  # (layers found by their type among the attributes)
        for v in vars(self).values():
            if isinstance(v, Linear):
                x = v(x)
        return x


NAMED = Named()


def named_by_fstring(W):
    NAMED.fc1.W.value = W
    return np.sum(NAMED.forward_fstring(X) ** 2)


def named_by_range(W):
    NAMED.fc1.W.value = W
    return np.sum(NAMED.forward_range(X) ** 2)


def stored_by_getattr_of_a_loops_name(W, V):
    for name, w in (("fc1", W), ("fc2", V)):
        getattr(NAMED, name).W.value = w
    return np.sum(NAMED.forward_fstring(X) ** 2)


def stored_into_the_params_a_method_hands_out(W, b):
    for p, v in zip(NAMED.fc1.params(), [W, b]):
        p.value = v
    return np.sum(NAMED.forward_range(X) ** 2)


def stored_then_vars(W):
    NAMED.fc1.W.value = W
    return np.sum(NAMED.forward_vars(X) ** 2)


@pytest.mark.parametrize("kw", [{}, {"fuse": True}, {"mode": "tape"}],
                         ids=["source", "fused", "tape"])
def test_layers_named_by_a_string_a_loop_builds(kw):
    _check(named_by_fstring, (_r(3, 4),), **kw)
    _check(named_by_range, (_r(3, 4),), **kw)
    _check(stored_by_getattr_of_a_loops_name, (_r(3, 4), _r(4, 2)), **kw)
    _check(stored_into_the_params_a_method_hands_out, (_r(3, 4), _r(4)), **kw)


def test_a_parameter_object_reached_through_vars_is_refused_not_zeros():
    # (the store is into `NAMED.fc1.W`, a Param two objects down: `vars(self)` hands the
    # layers out to code srcad runs as written -- zeros before, refused now)
    with pytest.raises(srcad.SrcadError, match="no derivative rule"):
        srcad.grad(stored_then_vars)(_r(3, 4))
    _check(stored_then_vars, (_r(3, 4),), mode="tape")


# ---- a model's dict of modules run in a listed order; weights loaded by setattr ------------
class Modules:
    def __init__(self):
        self.modules = {"fc1": Dense(_r(3, 4)), "fc2": Dense(_r(4, 2))}
        self.order = ["fc1", "fc2"]

    def forward(self, x):
        for name in self.order:
            x = self.modules[name].forward(x)
        return x

    def load(self, state):
        for k, v in state.items():
            setattr(self.modules["fc1"], k, v)


MODULES = Modules()


def loaded_by_setattr_from_a_display(W):
    MODULES.load({"W": W})
    return np.sum(MODULES.forward(X) ** 2)


def loaded_by_setattr_from_an_argument(state):
    MODULES.load(state)
    return np.sum(MODULES.forward(X) ** 2)


@pytest.mark.parametrize("kw", [{}, {"mode": "tape"}], ids=["source", "tape"])
def test_weights_loaded_by_setattr_over_a_dicts_keys(kw):
    # (refused before: "`setattr` has no derivative rule" -- the dict a display the caller
    # made, its keys known there; the layer an item of the model's dict of modules)
    _check(loaded_by_setattr_from_a_display, (_r(3, 4),), **kw)
    state = {"W": _r(3, 4)}
    g = srcad.grad(loaded_by_setattr_from_an_argument, **kw)(state)
    want = numerical_grad(loaded_by_setattr_from_an_argument, (state,))
    np.testing.assert_allclose(g["W"], want["W"], rtol=1e-6, atol=1e-8)
