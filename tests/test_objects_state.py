"""What layer classes do with themselves besides computing (srcad/frontend/objects.py):
builtins applied to a built object (its class, name, identity, attributes), lists in its
attributes that methods change in place (written as assignments where no second name can see
the list), `hasattr` from the attributes assigned so far, *args of objects, container
dunders handing over to a list of objects, comprehensions over objects. Each case: the value
is Python's, source and tape agree bit for bit, the gradient matches central differences;
and where srcad cannot keep Python's meaning, a SrcadError at the user's line (never a
silently different value)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(7)
W = R.standard_normal((3, 3)) * 0.5
X = R.standard_normal((4, 3))


def _check(fn, *args, wrt=0):
    want = fn(*args)
    num = numerical_grad(fn, args, wrt=wrt)
    grads = []
    for mode in ("source", "tape"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v, g = srcad.value_and_grad(fn, wrt=wrt, mode=mode)(*args)
        assert np.array_equal(np.asarray(v), np.asarray(want)), (mode, v, want)
        assert rel_error(g, num) < 1e-6, mode
        grads.append(g)
    np.testing.assert_array_equal(grads[0], grads[1])


# --- builtins on a built object ---------------------------------------------------------------
class Act:
    def __repr__(self):
        return "Act()"

    def __call__(self, z):
        return np.tanh(z)


class Plain:
    def __call__(self, z):
        return z * z


class Layer:
    def __init__(self, W, act):
        self.W = W
        self.act = act
        self.info = {"act": str(act), "kind": type(act).__name__, "r": repr(act),
                     "callable": callable(act), "same": id(act) == id(self.act)}

    def forward(self, x):
        return getattr(self, "_" + "apply")(x)

    def _apply(self, x):
        y = self.act(x @ self.W)
        if hasattr(self, "W") and not hasattr(self, "bias"):
            y = y + getattr(self, "shift", 0.5)
        return y


def builtins_on_objects(W, X):
    a = Layer(W, Act())
    b = Layer(W.T, Plain())
    y = b.forward(a.forward(X))
    bonus = 1.0 if (a.info["kind"] == "Act" and a.info["r"] == "Act()" and
                    a.info["callable"] and a.info["same"]) else 0.0
    return np.sum(y) * (1.0 + bonus) + len(b.info["act"]) * 0.0


def test_builtins_on_a_built_object():
    _check(builtins_on_objects, W, X)


# --- lists in attributes changed by methods -----------------------------------------------------
class Stack:
    def __init__(self, W):
        self.W = W
        self.items = []
        self.logs = {"sum": [], "n": 0}

    def push(self, x):
        self.items.append(x @ self.W)
        self.items.insert(0, x)
        self.items.insert(-1, 2.0 * x)
        self.logs["sum"].append(np.sum(x))

    def shuffle(self):
        last = self.items.pop()
        first = self.items.pop(0)
        self.items.pop(-2)
        self.items.extend([last, first])
        self.items.pop()
        return last

    def total(self):
        t = 0.0
        for i, z in enumerate(self.items):
            t = t + (i + 1) * np.sum(z ** 2)
        return t + len(self.items) + sum(self.logs["sum"])


def list_changes(W, X):
    s = Stack(W)
    s.push(X)
    s.push(np.tanh(X))
    last = s.shuffle()
    return np.sum(last ** 2) + s.total() + np.sum(np.stack(s.items[:2]))


def test_list_changes_in_methods_keep_pythons_meaning():
    _check(list_changes, W, X)


# --- where a second name sees the list: refused, at the user's line ----------------------------
class Cache:
    def __init__(self, W, cache=None):
        self.W = W
        self.cache = [] if cache is None else cache

    def forward(self, x):
        z = x @ self.W
        self.cache.append(z)
        return np.tanh(z)


def alias_before_change(W, X):
    layer = Cache(W)
    seen = layer.cache
    layer.forward(X)
    return np.sum(seen[0])


def list_from_outside(W, X):
    mine = []
    layer = Cache(W, mine)
    layer.forward(X)
    return np.sum(mine[0])


def _keep(layer):
    return layer.cache


def kept_by_a_function(W, X):
    layer = Cache(W)
    layer.forward(X)
    seen = _keep(layer)
    layer.forward(X)
    return np.sum(seen[-1])


class MaybeBias:
    def __init__(self, W, b):
        self.W = W
        if b is not None:
            self.b = b

    def __call__(self, x):
        return x @ self.W + (self.b if hasattr(self, "b") else 0.0)


def hasattr_not_known(W, X):
    return np.sum(MaybeBias(W, W[0])(X))


LOG = Cache(np.eye(3))


def existing_object_appends(W, X):
    return np.sum(LOG.forward(X @ W))


class CacheThenWrite(Cache):
    def forward(self, x):
        z = x @ self.W
        self.cache.append(z)
        z += 1.0  # (Python's list shows this: it holds z itself)
        return np.tanh(z)


LOG_WRITTEN = CacheThenWrite(np.eye(3))


def existing_object_appends_then_writes(W, X):
    return np.sum(LOG_WRITTEN.forward(X @ W))


def test_an_existing_object_keeps_the_arrays_its_method_appends():
    """`self.cache.append(z)` on an object from outside the call: Python's list gets z itself,
    once per call; srcad's code appends the same array (its value, in both modes)."""
    LOG.cache.clear()
    _check(existing_object_appends, W, X)
    want = (X @ W) @ LOG.W
    LOG.cache.clear()
    for mode in ("source", "tape"):
        srcad.grad(existing_object_appends, mode=mode)(W, X)
    assert len(LOG.cache) == 2
    for kept in LOG.cache:
        assert type(kept) is np.ndarray
        np.testing.assert_array_equal(kept, want)


@pytest.mark.parametrize("fn", [alias_before_change, list_from_outside, kept_by_a_function,
                                hasattr_not_known, existing_object_appends_then_writes])
def test_refused_where_pythons_meaning_cannot_be_kept(fn):
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(fn)(W, X)
    assert "test_objects_state.py" in str(info.value)


# --- *args of objects, container dunders, comprehensions over objects --------------------------
class Dense:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return x @ self.W


class Tanh:
    def __call__(self, x):
        return np.tanh(x)


class Seq:
    def __init__(self, *layers):
        self.layers = list(layers)

    def __iter__(self):
        yield from self.layers

    def __len__(self):
        return len(self.layers)

    def __getitem__(self, i):
        return self.layers[i]

    def __call__(self, x):
        for layer in self:
            x = layer(x)
        return x


def container_dunders(W, X):
    model = Seq(Dense(W), Tanh(), Dense(W.T))
    out = model(X)
    reg = sum(np.sum(layer.W ** 2) for layer in model if hasattr(layer, "W"))
    ws = [model[i].W for i in range(0, len(model), 2)]
    return np.sum(out ** 2) + 1e-2 * reg + np.sum(ws[-1]) + np.sum(model[-1].W)


def test_container_dunders_and_comprehensions_over_objects():
    _check(container_dunders, W, X)


def indexed_by_a_value(W, X, k):
    model = Seq(Dense(W), Dense(W.T))
    return np.sum(model[k](X))


def indexed_by_a_computed_value(W, X):
    model = Seq(Dense(W), Dense(W.T))
    return np.sum(model[int(np.sum(X) > 0)](X))


def test_an_object_indexed_by_an_int_argument():
    """`model[k](X)` with k an int argument: the code is specialised on k (forms24: chosen.py
    writes the index as that int), each k its own code."""
    for k in (1, 0, -1):
        _check(lambda w, x: indexed_by_a_value(w, x, k), W, X)


def test_an_object_indexed_by_a_value_is_refused():
    with pytest.raises(srcad.SrcadError):
        srcad.grad(indexed_by_a_computed_value)(W, X)


# --- a method that changes nothing, called after `and` / in `x if c else y` --------------------
class Scaled:
    def __init__(self, W, cap):
        self.W = W
        self.cap = cap
        self.calls = []

    @property
    def norm(self):
        return np.sqrt(np.sum(self.W ** 2))

    def clipped(self):
        return self.W * (self.cap / self.norm)

    def logged(self):
        self.calls.append(1)
        return self.W


def lazy_pure_methods(W, X):
    layer = Scaled(W, 1.0)
    Wc = layer.clipped() if layer.norm > layer.cap else layer.W
    big = np.sum(X) > 0 and layer.norm > 0.5
    return np.sum(np.tanh(X @ Wc)) + (1.0 if big else 0.0)


def lazy_changing_method(W, X):
    layer = Scaled(W, 1.0)
    Wc = layer.logged() if np.sum(X) > 0 else layer.W
    return np.sum(X @ Wc) + len(layer.calls)


def test_methods_that_change_nothing_run_where_python_runs_them():
    _check(lazy_pure_methods, W, X)
    _check(lazy_pure_methods, W * 0.1, X)
    with pytest.raises(srcad.SrcadError):
        srcad.grad(lazy_changing_method)(W, X)
