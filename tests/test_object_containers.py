"""Dicts and lists that objects keep across calls, changed in place by the differentiated
code: a module-level layer's cache of its forward values (``self.cache["z"] = z``, CS231n-
and numpy-ml-style layers), an RNN's dict of hidden states by step, a recorder's dict, a
local second name for the container (``c = self.cache; c["x"] = x``), ``.update({...})``,
reads by ``.get`` / ``.items()`` / ``in``. Each was refused ("assignment into something other
than a local array") or, for the second name, a KeyError blamed on the user's code.

Every case, in source mode (fused and not) and tape mode, on two calls: the value is the
function's, the gradient matches central differences, and the object ends up holding the
same dict object (Python changes it in place) with the items Python's call leaves."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error


class Layer:
    def __init__(self, W):
        self.W = W
        self.cache = {}
        self.params = {"W": W}
        self.seen = []

    def forward(self, x):
        self.cache["x"] = x
        z = x @ self.params["W"]
        self.cache["z"] = z
        return np.tanh(z)

    def forward_second_name(self, x):
        c = self.cache
        c["x"] = x
        c["z"] = x @ self.W
        return np.tanh(c["z"])

    def forward_update(self, x):
        self.cache.update({"z": x @ self.W, "x": x})
        return np.tanh(self.cache["z"])

    def forward_reads(self, x):
        self.cache["z"] = x @ self.W
        total = sum(np.sum(v) for k, v in self.cache.items() if k == "z")
        return np.tanh(self.cache.get("z")) * (total if "z" in self.cache else 0.0)

    def forward_whole(self, x):
        self.cache["z"] = x @ self.W
        self.cache["z"] = self.cache["z"] + x
        return np.tanh(self.cache["z"])

    def forward_list_second_name(self, x):
        seen = self.seen
        seen.append(x * 2.0)
        return np.tanh(seen[-1] @ self.W)

    def forward_augmented(self, x):
        self.cache["z"] = x @ self.W
        self.cache["z"] += x
        return np.tanh(self.cache["z"])


class RNN:
    def __init__(self, W):
        self.W = W
        self.hs = {}

    def forward(self, xs):
        self.hs[-1] = np.zeros(3)
        for t in range(len(xs)):
            self.hs[t] = np.tanh(xs[t] + self.hs[t - 1] @ self.W)
        return self.hs[len(xs) - 1]

    def forward_named(self, xs):
        h = np.zeros(3)
        for t in range(len(xs)):
            h = np.tanh(xs[t] + h @ self.W)
            self.hs[f"h{t}"] = h
        return h


class Recorder:
    def __init__(self):
        self.items = {}

    def record(self, key, value):
        self.items[key] = value


_R = np.random.RandomState(11)
LAYER = Layer(_R.uniform(-0.6, 0.6, (3, 3)))
RNN_ = RNN(_R.uniform(-0.5, 0.5, (3, 3)))
REC = Recorder()
_OBJECTS = (LAYER, RNN_, REC)


def a_layer_caches_its_forward(x):
    h = LAYER.forward(x)
    return np.sum(h * LAYER.cache["z"])


def weights_set_in_a_kept_dict(x, W):
    LAYER.params["W"] = W
    return np.sum(LAYER.forward(x) ** 2)


def a_second_name_for_the_cache(x):
    return np.sum(LAYER.forward_second_name(x) * LAYER.cache["z"])


def an_update_of_the_cache(x):
    return np.sum(LAYER.forward_update(x) * LAYER.cache["x"])


def reads_by_get_items_and_in(x):
    return np.sum(LAYER.forward_reads(x))


def a_whole_store_of_an_item(x):
    return np.sum(LAYER.forward_whole(x) * LAYER.cache["z"])


def a_second_name_for_a_kept_list(x):
    return np.sum(LAYER.forward_list_second_name(x) * LAYER.seen[-1])


def hidden_states_by_step(xs):
    h = RNN_.forward(xs)
    return np.sum(h * RNN_.hs[0])


def hidden_states_by_name(xs):
    h = RNN_.forward_named(xs)
    return np.sum(h * RNN_.hs["h0"])


def a_layer_given_as_an_argument(xs, net):
    h = net.forward(xs)
    return np.sum(h * net.hs[1])


def a_recorder_keeps_what_it_is_given(x):
    h = np.exp(x) + 1.0
    REC.record("h", h)
    z = np.tanh(h)
    z *= 2.0
    return np.sum(z * x)


_X = np.array([0.31, -0.52, 0.77])
_XS = _R.uniform(-0.7, 0.7, (4, 3))
_W = _R.uniform(-0.6, 0.6, (3, 3))
CASES = {
    a_layer_caches_its_forward: (_X,),
    weights_set_in_a_kept_dict: (_X, _W),
    a_second_name_for_the_cache: (_X,),
    an_update_of_the_cache: (_X,),
    reads_by_get_items_and_in: (_X,),
    a_whole_store_of_an_item: (_X,),
    a_second_name_for_a_kept_list: (_X,),
    hidden_states_by_step: (_XS,),
    hidden_states_by_name: (_XS,),
    a_layer_given_as_an_argument: (_XS, RNN_),
    a_recorder_keeps_what_it_is_given: (_X,),
}


def _state():
    return [copy.copy(vars(o)) for o in _OBJECTS]


def _put(state):
    for o, s in zip(_OBJECTS, state):
        vars(o).clear()
        vars(o).update(s)


def _fresh_containers():
    for o in _OBJECTS:
        for k, v in list(vars(o).items()):
            if type(v) in (dict, list) and k != "params":
                setattr(o, k, type(v)())


def _same_items(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_items(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_items(u, v) for u, v in zip(a, b))
    return np.array_equal(a, b)


def _containers():
    """[(object, name, the container it holds)] for the lists and dicts the objects hold."""
    return [(o, k, v) for o in _OBJECTS for k, v in vars(o).items() if type(v) in (dict, list)]


def _refill(held, contents) -> None:
    """Each container as it was (the same object, its items put back)."""
    for (_, _, c), items in zip(held, contents):
        c.clear()
        if isinstance(c, list):
            c.extend(items)
        else:
            c.update(items)


@pytest.mark.parametrize("options", [{"mode": "source", "fuse": False},
                                     {"mode": "source", "fuse": True}, {"mode": "tape"}],
                         ids=["source", "fuse", "tape"])
@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_a_container_an_object_keeps(fn, options):
    args = CASES[fn]
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    wrt = wrt[0] if len(wrt) == 1 else wrt
    _fresh_containers()
    start = _state()
    try:
        g = srcad.value_and_grad(fn, wrt=wrt, **options)
        for call in range(2):  # (the second starts from what the first left)
            held = _containers()
            contents = [copy.copy(c) for _, _, c in held]
            want = fn(*args)
            python_after = [copy.deepcopy(c) for _, _, c in held]
            _refill(held, contents)
            value, grads = g(*args)
            assert value == want
            for (o, name, c), after in zip(held, python_after):
                assert getattr(o, name) is c, (o, name)  # (the same container, changed)
                assert _same_items(c, after), (name, c, after)
            _refill(held, contents)
            num = numerical_grad(fn, args, wrt=wrt)
            pairs = zip(grads, num) if isinstance(wrt, tuple) else [(grads, num)]
            for a, b in pairs:
                assert rel_error(a, b) < 1e-6
            _refill(held, contents)
            fn(*args)
    finally:
        _put(start)


def a_store_by_augmented_assignment(x):
    return np.sum(LAYER.forward_augmented(x))


def test_an_augmented_store_into_a_kept_dict_is_refused_with_the_rewrite():
    with pytest.raises(srcad.SrcadError, match=r"self\.cache\[\.\.\.\]") as e:
        srcad.grad(a_store_by_augmented_assignment)(_X)
    assert "not `+=`" in str(e.value) and "line" in str(e.value)


# ---- a user's methods named like numpy's in-place ones (put, fill, sort) ---------------------
class Shelf:
    def __init__(self):
        self.v = None
        self.items = []

    def put(self, v):
        self.v = v

    def fill(self, v):
        self.v = v * 2.0

    def sort(self):
        self.v = np.sort(self.v)


SHELF = Shelf()


def a_users_put_fill_and_sort(x):
    h = x * 2.0 + 1.0
    SHELF.put(h)
    a = np.sum(np.tanh(SHELF.v) * x)
    SHELF.fill(h)
    SHELF.sort()
    return a + np.sum(SHELF.v * x)


def a_users_put_alone(x):
    h = x * 2.0 + 1.0
    SHELF.put(h)
    return np.sum(np.tanh(h) * x)


@pytest.mark.parametrize("fn", [a_users_put_fill_and_sort, a_users_put_alone],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_users_methods_named_like_numpys_in_place_ones(mode, fn):
    """`SHELF.put(h)` was refused as numpy's `a.put(indices, values)` ("write the change as
    an assignment, `SHELF[idx] = v`"); `.fill` / `.sort` would have been rewritten as writes
    into an array. A user object's methods are followed."""
    x = np.array([0.31, -0.52, 0.77])
    want = fn(x)
    after = SHELF.v.copy()
    SHELF.v = None
    value, g = srcad.value_and_grad(fn, mode=mode)(x)
    assert value == want
    np.testing.assert_array_equal(SHELF.v, after)
    assert rel_error(g, numerical_grad(fn, (x,))) < 1e-6
