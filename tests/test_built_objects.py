"""Objects built inside the differentiated function (issue 22, item 2; srcad/frontend/objects.py).

``fc = Dense(W, b); h = fc.forward(x)``: the object never exists at run time; its attributes
are locals and its methods are specialised per call site. Each class of use the pass follows
has a program here, checked in source mode, tape mode and fuse=True against central
differences and against calling the function itself (the value, and what the caller's
arrays hold after); the uses it does not follow are refused at the user's line with a hint
that names the use, and a class changed between calls is seen at the next call.
"""

from __future__ import annotations

import dataclasses
import operator
import sys

import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError
from srcad.testing import check_grads, check_jvp, check_vjp, numerical_grad, rel_error

MODES = [dict(), dict(mode="tape"), dict(fuse=True)]
MODE_IDS = ["source", "tape", "fuse"]


# ---- a small layer library ------------------------------------------------------------------
class Affine:
    scale = 1.0  # a class attribute read through self

    def __init__(self, W, b=None):
        self.W = W
        self.b = b
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        out = x @ self.W * self.scale
        if self.b is not None:
            out = out + self.b
        return out


class Tanh:
    def forward(self, x):
        self.out = np.tanh(x)
        return self.out


class LeakyReLU:
    alpha = 0.1

    @staticmethod
    def leak(z, a):
        return np.where(z > 0, z, a * z)

    @classmethod
    def make(cls):
        return cls.alpha

    def forward(self, x):
        return self.leak(x, self.make())


class Base:
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return x @ self.W


class Scaled(Base):
    def __init__(self, W, s):
        super().__init__(W)
        self.s = s

    def forward(self, x):
        return super().forward(x) * self.s

    @property
    def weight(self):
        return self.W * self.s


class Block:
    """Objects held in attributes, and a helper method."""

    def __init__(self, W1, W2):
        self.fc1 = Affine(W1)
        self.act = Tanh()
        self.fc2 = Affine(W2)

    def hidden(self, x):
        return self.act.forward(self.fc1(x))

    def forward(self, x):
        return self.fc2(self.hidden(x))


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x) if isinstance(layer, Tanh) else layer(x)
        return x


class Norm:
    def __init__(self, gamma, eps=1e-5):
        self.gamma = gamma
        self.eps = eps
        self.running = np.zeros(gamma.shape)

    def forward(self, x, train=True):
        if not train:
            return (x - self.running) * self.gamma
        mu = x.mean(axis=0)
        self.running = 0.9 * self.running + 0.1 * mu
        xc = x - mu
        return xc / np.sqrt(np.mean(xc ** 2, axis=0) + self.eps) * self.gamma


# ---- programs -------------------------------------------------------------------------------
def call_dunder(W, b, x):
    layer = Affine(W, b)
    return np.sum(np.tanh(layer(x)) ** 2)


def super_and_property(W, x):
    layer = Scaled(W, 0.5)
    return np.sum(layer.forward(x) ** 2) + np.sum(layer.weight)


def static_and_class_methods(W, x):
    act = LeakyReLU()
    return np.sum(act.forward(x @ W) ** 2)


def nested_objects(W1, W2, x):
    block = Block(W1, W2)
    return np.sum(block.forward(x) ** 2) + np.sum(block.act.out)


def list_of_objects(W1, W2, x):
    layers = [Affine(W1), Tanh(), Affine(W2)]
    out = x
    for i, layer in enumerate(layers):
        out = layer.forward(out) if i == 1 else layer(out)
    return np.sum(out ** 2) + len(layers) * np.sum(layers[-1].W)


def reversed_list(W1, W2, x):
    layers = [Affine(W1.T), Affine(W2.T)]
    out = x @ W1 @ W2
    for layer in reversed(layers):
        out = np.tanh(layer(out))
    return np.sum(out)


def sequential_with_isinstance(W1, W2, x):
    model = Sequential([Affine(W1), Tanh(), Affine(W2)])
    return np.sum(model.forward(x) ** 2)


def built_in_a_loop(W1, W2, x):
    out = x
    for W in (W1, W2):
        layer = Affine(W)
        out = np.tanh(layer(out))
    return np.sum(out)


def run_layer(layer, x):
    return layer(x) * 2.0


def passed_to_a_user_function(W, x):
    layer = Affine(W)
    return np.sum(np.sin(run_layer(layer, x)))


def defaults_keywords_and_state(W, gamma, x):
    fc = Affine(W)
    norm = Norm(gamma)
    h = norm.forward(fc(x), train=True)
    h2 = norm.forward(h, False)  # reads the running mean the first call set
    return np.sum(h ** 2) + np.sum(h2) + np.sum(norm.running) + fc.calls


def temporary_object(W, x):
    return np.sum(Affine(W)(x) ** 2)


def same_object_twice(W, x1, x2):
    fc, act = Affine(W), Tanh()
    a = act.forward(fc(x1))
    b = act.forward(fc(x2))
    return np.sum(a * b) + fc.calls


def _rng():
    return np.random.default_rng(0)


def _args(name):
    r = _rng()
    W = r.standard_normal((4, 3)) * 0.5
    W2 = r.standard_normal((3, 2)) * 0.5
    x = r.standard_normal((5, 4))
    return {
        "call_dunder": ((W, r.standard_normal(3) * 0.1, x), (0, 1, 2)),
        "super_and_property": ((W, x), (0, 1)),
        "static_and_class_methods": ((W, x), (0, 1)),
        "nested_objects": ((W, W2, x), (0, 1, 2)),
        "list_of_objects": ((W, W2, x), (0, 1, 2)),
        "reversed_list": ((W, W2, x), (0, 1, 2)),
        "sequential_with_isinstance": ((W, W2, x), (0, 1, 2)),
        "built_in_a_loop": ((W, r.standard_normal((3, 3)) * 0.5, x), (0, 1, 2)),
        "passed_to_a_user_function": ((W, x), (0, 1)),
        "defaults_keywords_and_state": ((W, r.uniform(0.5, 1.5, 3), x), (0, 1, 2)),
        "temporary_object": ((W, x), (0, 1)),
        "same_object_twice": ((W, x, r.standard_normal((5, 4))), (0, 1, 2)),
    }[name]


PROGRAMS = [call_dunder, super_and_property, static_and_class_methods, nested_objects,
            list_of_objects, reversed_list, sequential_with_isinstance, built_in_a_loop,
            passed_to_a_user_function, defaults_keywords_and_state, temporary_object,
            same_object_twice]


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_built_objects_differentiated(fn, opts):
    args, wrt = _args(fn.__name__)
    check_grads(fn, args, wrt=wrt, **opts)
    value, _ = srcad.value_and_grad(fn, wrt=wrt, **opts)(*args)
    assert value == fn(*args)


@pytest.mark.parametrize("fn", [nested_objects, sequential_with_isinstance,
                                defaults_keywords_and_state], ids=lambda f: f.__name__)
def test_built_objects_forward_and_vjp(fn):
    args, _ = _args(fn.__name__)
    check_jvp(fn, args)
    check_vjp(fn, args)


def test_the_object_is_gone_from_the_generated_code():
    args, wrt = _args("nested_objects")
    g = srcad.grad(nested_objects, wrt=wrt)
    g(*args)
    src = g.source
    assert "Block(" not in src and "Affine(" not in src
    assert "block_act_out" in src or "block_fc1" in src or "np.tanh" in src


def test_the_callers_arrays_are_left_as_numpy_leaves_them():
    args, wrt = _args("defaults_keywords_and_state")
    before = [a.copy() for a in args]
    srcad.grad(defaults_keywords_and_state, wrt=wrt)(*args)
    for a, b in zip(args, before):
        assert np.array_equal(a, b)


# ---- a class changed between calls is seen at the next call ---------------------------------
class Mutable:
    gain = 2.0

    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return x @ self.W * self.gain


def uses_mutable(W, x):
    return np.sum(Mutable(W).forward(x) ** 2)


def _forward_cubed(self, x):
    return (x @ self.W) ** 3


def test_a_changed_class_attribute_or_method_is_seen(monkeypatch):
    args, wrt = _args("temporary_object")
    g = srcad.value_and_grad(uses_mutable, wrt=wrt)
    v1, _ = g(*args)
    assert v1 == uses_mutable(*args)
    monkeypatch.setattr(Mutable, "gain", 3.0)
    v2, _ = g(*args)
    assert v2 == uses_mutable(*args) and v2 != v1
    check_grads(uses_mutable, args, wrt=wrt)
    monkeypatch.setattr(Mutable, "forward", _forward_cubed)
    v3, _ = g(*args)
    assert np.isclose(v3, uses_mutable(*args)) and not np.isclose(v3, v2)
    check_grads(uses_mutable, args, wrt=wrt)


# ---- uses not followed: refused at the user's line, naming the use --------------------------
class Leaky:
    def __init__(self, W):
        self.W = W

    def me(self, other=None):  # (`other is None` known when specialising: `return self`,
        if other is None:          # followed as a method's one `return self` is)
            return self
        return other

    def pick(self, v):  # (one of two objects returned, by the data: not followed)
        if np.sum(v) > 0:
            return self
        return Leaky(self.W * 2.0)

    def forward(self, x):
        return x @ self.W


def returns_self(W, x):
    layer = Leaky(W).pick(x)
    return np.sum(layer.forward(x))


def returns_self_folded(W, x):
    layer = Leaky(W).me()
    return np.sum(layer.forward(x))


def test_a_return_picked_by_a_known_argument_is_followed():
    """`me(other=None)`'s `if other is None: return self` folds by the default (2026-12-04,
    third session: a factory's branches picked by what the call gives): followed."""
    W, x = _args("temporary_object")[0]
    g = srcad.grad(returns_self_folded)(W, x)
    np.testing.assert_allclose(g, numerical_grad(returns_self_folded, (W, x)), rtol=1e-6,
                               atol=1e-9)


def built_on_one_arm(W, x):
    if x.shape[0] > 2:
        layer = Leaky(W)
    else:
        layer = None
    return np.sum(layer.forward(x))


def handed_to_a_library(W, x):
    layer = Leaky(W)
    return np.sum(operator.methodcaller("forward", x)(layer))  # (`layer.forward(x)`)


@pytest.mark.parametrize("fn, why", [
    (returns_self, "returned"),
    (built_on_one_arm, "different object on each path"),
    (handed_to_a_library, "does not follow into"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_uses_not_followed_are_refused_with_the_reason(fn, why):
    args, wrt = _args("temporary_object")
    with pytest.raises(SrcadError) as e:
        srcad.grad(fn, wrt=wrt)(*args)
    msg = str(e.value)
    assert "test_built_objects.py" in msg and why in msg, msg
    assert "Leaky" in msg


def test_objects_whose_arrays_are_not_differentiated_run_as_written():
    def only_x(W, x):
        layer = Leaky(W).me()  # (not followed: runs as Python runs it, W is not differentiated)
        return np.sum(x ** 2) * np.sum(layer.forward(W.T))

    args, _ = _args("temporary_object")
    check_grads(only_x, args, wrt=1)


# ---- a registry of classes or functions picked by a string argument -------------------------
class Sine:
    def __call__(self, z):
        return np.sin(z)


def _cube(z):
    return z ** 3


CLASSES = {"tanh": Tanh, "sine": Sine}
FUNCS = {"cube": _cube, "exp": np.exp}


def by_name(W, x, name="sine", fname="cube"):
    act = CLASSES[name]()
    h = act(x @ W) if isinstance(act, Sine) else act.forward(x @ W)
    return np.sum(FUNCS[fname](h))


@pytest.mark.parametrize("name, fname", [("sine", "cube"), ("tanh", "exp"), ("tanh", "cube")])
def test_a_registry_entry_picked_by_a_string_argument(name, fname):
    args, wrt = _args("temporary_object")
    for opts in MODES:
        g = srcad.value_and_grad(by_name, wrt=wrt, **opts)
        v, _ = g(*args, name=name, fname=fname)
        assert np.isclose(v, by_name(*args, name=name, fname=fname))
        check_grads(by_name, args + (name, fname), wrt=wrt, **opts)


def test_a_registry_entry_changed_between_calls_is_seen(monkeypatch):
    args, wrt = _args("temporary_object")
    g = srcad.value_and_grad(by_name, wrt=wrt)
    v1, _ = g(*args)
    monkeypatch.setitem(FUNCS, "cube", np.sin)
    v2, _ = g(*args)
    assert np.isclose(v2, by_name(*args)) and not np.isclose(v1, v2)


ACTS = {"leaky": lambda z: np.maximum(z, 0.1 * z), "cube": _cube, "tanh": np.tanh}


def held_entry(W, x, name="leaky"):
    act = ACTS[name]  # a registry entry held in a name, then called (a lambda, a function, a ufunc)
    out = ACTS["tanh"]
    return np.sum(out(act(x @ W)))


@pytest.mark.parametrize("name", ["leaky", "cube", "tanh"])
def test_a_registry_entry_held_in_a_name_then_called(name, monkeypatch):
    """`act = ACTS[name]; act(z)`: refused before ("`act` has no derivative rule"); the name
    holds the entry the key picks, read again at each call like a direct `ACTS[name](z)`."""
    args, wrt = _args("temporary_object")
    for opts in MODES:
        g = srcad.value_and_grad(held_entry, wrt=wrt, **opts)
        assert g(*args, name)[0] == held_entry(*args, name)
        check_grads(held_entry, args + (name,), wrt=wrt, **opts)
        with monkeypatch.context() as m:
            m.setitem(ACTS, name, np.sin)
            assert g(*args, name)[0] == held_entry(*args, name)
            check_grads(held_entry, args + (name,), wrt=wrt, **opts)


class Chooses:
    def __init__(self, W, act="cube"):
        self.W = W
        self.act = act
        self.activations = {"cube": _cube, "tanh": np.tanh, "leaky": _leaky}

    def forward(self, x):
        return self.activations[self.act](x @ self.W)


def _leaky(z):
    return np.maximum(z, 0.1 * z)


def registry_in_init(W, x, act="cube"):
    return np.sum(Chooses(W, act).forward(x))


def registry_local(W, x, name="leaky"):
    acts = {"cube": _cube, "tanh": np.tanh, "leaky": _leaky}
    h = acts[name](x @ W)
    return np.sum(acts["tanh"](h)) + len(acts)


@pytest.mark.parametrize("fn", [registry_in_init, registry_local])
def test_a_dict_of_functions_made_in_the_function(fn, monkeypatch):
    """`self.activations = {"relu": relu, ...}` in __init__ and `acts = {...}` in the
    function, then `acts[name](z)`: refused before ("`_cube` (function) used as a value"); the
    display's functions are the module's (guarded), so rebinding one is seen."""
    args, wrt = _args("temporary_object")
    for opts in MODES:
        g = srcad.value_and_grad(fn, wrt=wrt, **opts)
        for key in ("cube", "tanh", "leaky"):
            assert g(*args, key)[0] == fn(*args, key)
            check_grads(fn, args + (key,), wrt=wrt, **opts)
        with monkeypatch.context() as m:
            m.setattr(sys.modules[__name__], "_leaky", np.sin)
            assert g(*args, "leaky")[0] == fn(*args, "leaky")
            check_grads(fn, args + ("leaky",), wrt=wrt, **opts)


class ParamStore:
    def __init__(self, **arrays):
        self.arrays = arrays

    def __getitem__(self, key):
        return self.arrays[key] * self.scale(key)

    def scale(self, key):
        return 0.5 if key.startswith("b") else 1.0


def indexed_store(W, x):
    p = ParamStore(W=W, b=W[0])
    return np.sum(np.tanh(x @ p["W"] + p["b"]))


class Options:
    def __init__(self, W, b, **opts):
        self.W, self.b = W, b
        self.scale = opts.get("scale", 1.0)
        self.act = opts.get("act", "tanh")

    def forward(self, x):
        z = (x @ self.W + self.b) * self.scale
        return np.tanh(z) if self.act == "tanh" else np.maximum(z, 0.1 * z)


def options_given(W, x):
    return np.sum(Options(W, W[1], scale=0.5, act="leaky").forward(x)) + \
        np.sum(Options(W, W[0]).forward(x))


@pytest.mark.parametrize("fn", [indexed_store, options_given])
def test_a_constructor_taking_keyword_arguments(fn):
    """`def __init__(self, **arrays)` / `(self, W, b, **opts)`: was refused ("a signature
    srcad cannot specialise"); the extra keywords are a dict display given to the method."""
    args, wrt = _args("temporary_object")
    for opts in MODES:
        assert srcad.value_and_grad(fn, wrt=wrt, **opts)(*args)[0] == fn(*args)
        check_grads(fn, args, wrt=wrt, **opts)


def test_an_object_with_getitem_is_indexed_through_it():
    """`p["W"]` of a built object whose class defines __getitem__: the method is called (was
    refused: "indexing a built object", the object handed on as written)."""
    args, wrt = _args("temporary_object")
    for opts in MODES:
        assert srcad.value_and_grad(indexed_store, wrt=wrt, **opts)(*args)[0] == \
            indexed_store(*args)
        check_grads(indexed_store, args, wrt=wrt, **opts)


def act_given(W, x, act):
    return np.sum(act(x @ W)) + np.sum(act(W))


def test_a_numpy_function_given_as_an_argument():
    """`f(W, x, np.tanh)`: a numpy function passed like a user function is (refused before:
    "`act` has no derivative rule"); each function given its own specialisation, so another
    one on a later call is called, not the first."""
    args, wrt = _args("temporary_object")
    W, x = args[0], args[1]
    for opts in MODES:
        g = srcad.value_and_grad(act_given, wrt=(0, 1), **opts)
        for act in (np.tanh, np.sin, _cube, np.exp, np.tanh):
            assert g(W, x, act)[0] == act_given(W, x, act)
            check_grads(act_given, (W, x, act), wrt=(0, 1), **opts)


# ---- an existing object whose methods keep state a later method reads ------------------------
class Cell:
    def __init__(self, W, U):
        self.W, self.U = W, U
        self.h = np.zeros(W.shape[0])
        self.steps = 0

    def step(self, x):
        self.h = np.tanh(self.W @ self.h + self.U @ x)
        self.steps += 1
        return self.readout()

    def readout(self):
        return np.sum(self.h ** 2)


_r = np.random.default_rng(5)
CELL = Cell(_r.standard_normal((3, 3)) * 0.5, _r.standard_normal((3, 2)) * 0.5)


def run_global_cell(xs):
    CELL.h = np.zeros(3)
    total = 0.0
    for x in xs:
        total = total + CELL.step(x)
    return total + np.sum(CELL.h)


def run_cell_argument(xs, cell):
    cell.h = np.zeros(3)
    total = 0.0
    for x in xs:
        total = total + cell.step(x) * cell.h[0]
    return total


def test_state_an_existing_object_carries_through_the_call():
    xs = _r.standard_normal((4, 2))
    for opts in MODES:
        check_grads(run_global_cell, (xs,), **opts)
        v, _ = srcad.value_and_grad(run_global_cell, **opts)(xs)
        h_after, steps_after = CELL.h.copy(), CELL.steps
        assert v == run_global_cell(xs)  # (the plain call: the object as Python leaves it)
        assert np.array_equal(h_after, CELL.h) and steps_after == CELL.steps - 4
    cell = Cell(CELL.W, CELL.U)
    for opts in MODES:
        check_grads(run_cell_argument, (xs, cell), wrt=0, **opts)
        srcad.grad(run_cell_argument, **opts)(xs, cell)
        h = cell.h.copy()
        run_cell_argument(xs, cell)
        assert np.array_equal(h, cell.h)


def run_cell_from_last_call(xs):
    total = 0.0
    for x in xs:  # (no reset: the first step reads the h an earlier call left)
        total = total + CELL.step(x)
    return total


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_state_from_an_earlier_call_is_a_constant_of_this_one(opts):
    """The first step reads the h an earlier call left on the object (a constant of this
    call, as in Python; it was refused); the later steps read the h this call stored, carried
    with its gradient. The object keeps the last h, once per call."""
    xs = _r.standard_normal((3, 2))
    start = np.tanh(_r.standard_normal(3))

    def from_start(xs):
        CELL.h = start.copy()
        return run_cell_from_last_call(xs)

    CELL.h = start.copy()
    value, g = srcad.value_and_grad(run_cell_from_last_call, **opts)(xs)
    after = CELL.h.copy()
    assert value == from_start(xs) and np.array_equal(after, CELL.h)
    CELL.h = start.copy()
    want = numerical_grad(from_start, (xs,))
    assert rel_error(g, want) < 1e-7


# ---- @dataclass layers built in the function (their __init__ has no source: the fields say) --
@dataclasses.dataclass
class DenseDC:
    W: np.ndarray
    b: np.ndarray
    gain: float = 1.0

    def __post_init__(self):
        self.Wg = self.W * self.gain

    def __call__(self, x):
        return x @ self.Wg + self.b


def dataclass_layers(W1, b1, W2, x):
    l1 = DenseDC(W1, b1, gain=0.5)
    l2 = DenseDC(W=W2, b=np.zeros(W2.shape[1]))
    return np.sum(np.tanh(l2(np.tanh(l1(x)))) ** 2)


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_dataclass_layers_built_in_the_function(opts):
    r = _rng()
    args = (r.standard_normal((4, 3)), r.standard_normal(3), r.standard_normal((3, 2)),
            r.standard_normal((5, 4)))
    check_grads(dataclass_layers, args, wrt=(0, 1, 2, 3), **opts)
    v, _ = srcad.value_and_grad(dataclass_layers, **opts)(*args)
    assert v == dataclass_layers(*args)


# ---- layers from a module of the user's own (`from layers import Dense`) -----------------------
from tests import fixtures_layers_module as layers  # noqa: E402


def act(z):  # (this module's `act` is not the layers module's: the methods read theirs)
    return z * 0.0


def net_from_another_module(W1, b1, W2, b2, x, y):
    net = layers.Net(W1, b1, W2, b2)
    return net(x, y)


def dense_from_another_module(W, b, x):
    d = layers.Dense(W, b)
    return np.sum(d.forward(x) ** 2)


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_layers_from_another_module(opts, monkeypatch):
    r = _rng()
    args = (r.standard_normal((4, 3)) * 0.5, r.standard_normal(3) * 0.1,
            r.standard_normal((3, 2)) * 0.5, r.standard_normal(2) * 0.1,
            r.standard_normal((5, 4)), r.integers(0, 2, 5))
    check_grads(net_from_another_module, args, wrt=(0, 1, 2, 3, 4), **opts)
    v, _ = srcad.value_and_grad(net_from_another_module, **opts)(*args)
    assert v == net_from_another_module(*args)
    g = srcad.value_and_grad(dense_from_another_module, wrt=(0, 1, 2), **opts)
    v1, _ = g(*args[:2], args[4])
    monkeypatch.setattr(layers, "act", np.sin)  # (their module's name, rebound: seen)
    v2, _ = g(*args[:2], args[4])
    assert v2 == dense_from_another_module(*args[:2], args[4]) and v1 != v2


# ---- a PyTorch-like Module: __call__(*args) forwarding to forward, super().__init__() -----------
class Module:
    def __call__(self, *args):
        return self.forward(*args)


class TLinear(Module):
    def __init__(self, W, b=None, scale=1.0):
        super().__init__()
        self.W, self.b, self.scale = W, b, scale

    def forward(self, x):
        y = x @ self.W * self.scale
        return y if self.b is None else y + self.b


class TReLU(Module):
    def forward(self, x):
        return np.maximum(x, 0.0)


class TMSE(Module):
    def forward(self, pred, target, *weights):
        err = (pred - target) ** 2
        for w in weights:
            err = err * w
        return np.mean(err) * len(weights) if weights else np.mean(err)


class TMLP(Module):
    def __init__(self, params):
        super().__init__()
        self.l1 = TLinear(params["W1"], params["b1"])
        self.act = TReLU()
        self.l2 = TLinear(params["W2"], scale=0.5)

    def forward(self, x):
        return self.l2(self.act(self.l1(x)))


def module_style(params, x, y, w):
    model = TMLP(params)
    return TMSE()(model(x), y) + TMSE()(model(x), y, w, w)


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_module_style_with_star_args_and_super_init(opts):
    r = _rng()
    params = {"W1": r.standard_normal((3, 4)), "b1": r.standard_normal(4),
              "W2": r.standard_normal((4, 2))}
    args = (params, r.standard_normal((5, 3)), r.standard_normal((5, 2)),
            r.uniform(0.5, 1.5, (5, 2)))
    check_grads(module_style, args, wrt=(0, 1), **opts)
    v, _ = srcad.value_and_grad(module_style, wrt=(0, 1), **opts)(*args)
    assert v == module_style(*args)
