"""Tests of a layer's class and plain attributes, decided when srcad builds the code.

Layer libraries pick the layers they load weights into by a test of the layer:

    for layer in net.layers:
        if layer.trainable:                  # or type(layer).__name__ == "Dense",
            layer.W = Ws[i]; i += 1          # layer.layer_name() == "Dense", ...

Found by a front-door probe (session of 2026-12-06, eighth; ML-From-Scratch's
`layer.layer_name()`), on main at 2af95e6: `isinstance` and `hasattr` were decided per layer
while the loop was written out, every other test ran when the code ran, so the store under
it went into a layer srcad could not name and the read back in `net.forward` was refused
("`.W` is read through the object here, but ... stores in it a value that depends on the
arguments being differentiated"). The same in a comprehension's filter (`[l for l in
net.layers if l.trainable]`), in a `continue` past the other layers (`if not
hasattr(layer, "W"): continue` too: desugar.py's flag was a value of the code), and `return
[l for l in self.layers if hasattr(l, "W")]` in a method (its checks kept the call from
being read as the list it returns).

Now frontend/knowntests.py `StaticTest` computes such a test as Python would -- attribute
reads of the known objects (guarded: rebuilt when rebound), their classes and class names,
str methods, comparisons, `in` of a tuple, `and` / `or` / `not`, a method that only returns
an expression -- where no function of the test's or the class's file, and no method of the
class but `__init__`, sets the attribute; each plain attribute read is read again where the
test runs (a flag set during the call by code elsewhere stops the call: never the branch
decided before). A name the function binds to a literal at its top level is known there
until anything else may bind it (normalize.py `literal_value`: the `continue` flag of a trip
whose test was decided). calls.py `copied_checks` makes a callee's checks in its caller.
"""

from __future__ import annotations

import abc
import importlib.util
import itertools
import os
import tempfile

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

from tests import fixtures_known_tests as fx

RNG = np.random.default_rng(11)


def _r(*shape):
    return RNG.uniform(-0.8, 0.8, shape)


X = _r(5, 3)


class Layer:
    kind = "layer"

    def layer_name(self):
        return self.__class__.__name__

    def output_shape(self):
        return None


class Dense(Layer):
    kind = "dense"

    def __init__(self, W, name):
        self.W = W
        self.name = name
        self.trainable = True
        self.frozen = False

    def forward(self, x):
        return np.tanh(x @ self.W)


class Act(Layer):
    kind = "act"

    def __init__(self, name):
        self.name = name
        self.trainable = False
        self.frozen = False

    def forward(self, x):
        return np.sin(x) + 0.5 * x


class Net:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def trainable_layers(self):
        return [l for l in self.layers if l.trainable]

    def weighted_layers(self):
        return [l for l in self.layers if hasattr(l, "W")]

    def load(self, Ws):
        for layer, W in zip(self.trainable_layers(), Ws):
            layer.W = W

    def load_weighted(self, Ws):
        for layer, W in zip(self.weighted_layers(), Ws):
            layer.W = W


NET = Net([Dense(_r(3, 4), "dense_1"), Act("act_1"), Dense(_r(4, 2), "dense_2")])

TESTS = [
    "layer.trainable",
    "not layer.frozen and layer.trainable",
    "layer.name == 'dense_1' or layer.name == 'dense_2'",
    "layer.name.startswith('dense')",
    "layer.kind in ('dense', 'conv')",
    "layer.kind == 'dense'",
    "type(layer) is Dense",
    "type(layer) == Dense",
    "layer.__class__ is Dense",
    "layer.__class__.__name__ == 'Dense'",
    "type(layer).__name__ == 'Dense'",
    "layer.layer_name() == 'Dense'",
    "layer.layer_name() != 'Act'",
    "layer.output_shape() is None and layer.kind != 'act'",
    "hasattr(layer, 'W') and layer.trainable",
    "isinstance(layer, Layer) and layer.trainable",
]


def _program_source(k: int, test: str, form: str) -> str:
    """A loss that loads Ws into the layers `test` picks: by a loop and an `if`, a loop and
    a `continue` past the others, or a comprehension."""
    if form == "comprehension":
        body = (f"    picked = [layer for layer in NET.layers if {test}]\n"
                "    for layer, W in zip(picked, Ws):\n"
                "        layer.W = W\n")
    elif form == "continue":
        body = ("    i = 0\n"
                "    for layer in NET.layers:\n"
                f"        if not ({test}):\n"
                "            continue\n"
                "        layer.W = Ws[i]\n"
                "        i += 1\n")
    else:
        body = ("    i = 0\n"
                "    for layer in NET.layers:\n"
                f"        if {test}:\n"
                "            layer.W = Ws[i]\n"
                "            i += 1\n")
    return f"\n\ndef loss_{k}(Ws):\n{body}    return np.sum(NET.forward(X) ** 2)\n"


def _programs():
    """The programs, in a module file of their own (srcad reads a function's source)."""
    path = os.path.join(tempfile.mkdtemp(prefix="srcad_known_tests_"), "known_tests_programs.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write("import numpy as np\n")  # (NET, X and the classes: this module's, given)
        for k, (test, form) in enumerate(itertools.product(TESTS, FORMS)):
            f.write(_program_source(k, test, form))
    spec = importlib.util.spec_from_file_location("known_tests_programs", path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(NET=NET, X=X, Dense=Dense, Layer=Layer)
    spec.loader.exec_module(module)
    return {(test, form): getattr(module, f"loss_{k}")
            for k, (test, form) in enumerate(itertools.product(TESTS, FORMS))}


_PROGRAMS: dict = {}


def _program(test: str, form: str):
    if not _PROGRAMS:
        _PROGRAMS.update(_programs())
    return _PROGRAMS[(test, form)]


def _weights():
    return [_r(3, 4), _r(4, 2)]


def _check(f, Ws, **kw):
    got = srcad.grad(f, **kw)([w.copy() for w in Ws])
    want = numerical_grad(f, ([w.copy() for w in Ws],))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


MODES = pytest.mark.parametrize("kw", [{}, {"fuse": True}, {"mode": "tape"}],
                                ids=["source", "fused", "tape"])


FORMS = ("if", "continue", "comprehension")


@pytest.mark.parametrize("kw", [{}, pytest.param({"fuse": True}, marks=pytest.mark.slow),
                                {"mode": "tape"}], ids=["source", "fused", "tape"])
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("test", TESTS)
def test_weights_loaded_into_the_layers_a_test_picks(test, form, kw):
    """(Fused mode of this grid is in the slow set: the decided tests are the frontend's,
    the same code is lowered; the other cases of this file keep their fused runs.)"""
    f = _program(test, form)
    Ws = _weights()
    _check(f, Ws, **kw)
    srcad.grad(f, **kw)(Ws)  # (the layers keep what the call stored, as Python's)
    assert NET.layers[0].W is Ws[0] and NET.layers[2].W is Ws[1]


def loss_by_method(Ws):
    NET.load(Ws)
    return np.sum(NET.forward(X) ** 2)


def loss_by_hasattr_method(Ws):
    NET.load_weighted(Ws)
    return np.sum(NET.forward(X) ** 2)


@MODES
@pytest.mark.parametrize("f", [loss_by_method, loss_by_hasattr_method],
                         ids=lambda f: f.__name__)
def test_a_method_returning_the_layers_a_comprehension_picks(f, kw):
    _check(f, _weights(), **kw)


def test_the_hasattr_checks_of_a_callees_comprehension_run_in_the_caller():
    g = srcad.grad(loss_by_hasattr_method)
    g(_weights())
    code = "\n".join(line.split("#")[0] for line in srcad.source(g).splitlines())
    assert code.count("hasattr(") == 3 and "weighted_layers(" not in code  # (not called)


def loss_trainable(Ws):
    i = 0
    for layer in NET.layers:
        if layer.trainable:
            layer.W = Ws[i]
            i += 1
    return np.sum(NET.forward(X) ** 2)


def test_a_flag_changed_between_calls_rebuilds_the_code():
    g = srcad.grad(loss_trainable)
    Ws = _weights()
    first = g(Ws)
    assert np.abs(first[1]).max() > 0
    NET.layers[2].__dict__["trainable"] = False  # (no function of this file sets the flag)
    try:
        keep = NET.layers[2].W
        got = g([Ws[0], Ws[1] * 2.0])
        np.testing.assert_array_equal(got[1], np.zeros_like(Ws[1]))  # (not loaded: Python's)
        assert NET.layers[2].W is keep
        want = numerical_grad(loss_trainable, ([Ws[0].copy(), Ws[1].copy()],))
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-8)
    finally:
        NET.layers[2].__dict__["trainable"] = True
    np.testing.assert_allclose(g(Ws)[1], first[1])


def loss_freezing(Ws):
    fx.freeze(NET.layers[2])  # (a function of another file: srcad does not read it)
    i = 0
    for layer in NET.layers:
        if layer.trainable:
            layer.W = Ws[i]
            i += 1
    return np.sum(NET.forward(X) ** 2)


def test_a_flag_set_during_the_call_elsewhere_stops_the_call():
    try:
        with pytest.raises(srcad.SrcadError, match="decided from .trainable") as e:
            srcad.grad(loss_freezing)(_weights())
        assert e.value.filename == __file__ and e.value.lineno is not None  # (the user's line)
    finally:
        fx.thaw(NET.layers[2])


def test_a_flag_a_function_of_the_same_file_sets_is_not_decided():
    with pytest.raises(srcad.SrcadError, match="stores in it a value"):
        srcad.grad(fx.set_by_flag)(_weights()[:1] * 2, np.eye(3))


class Lazy(Layer):
    """A layer whose flag a method sets: not decided (the method may run first)."""

    def __init__(self, W):
        self.W = W
        self.ready = True

    def reset(self):
        self.ready = False

    def forward(self, x):
        return x @ self.W


LAZY = [Lazy(np.eye(3)), Lazy(np.eye(3))]


def loss_method_sets_flag(Ws):
    for layer, W in zip(LAZY, Ws):
        if layer.ready:
            layer.W = W
    h = X
    for layer in LAZY:
        h = layer.forward(h)
    return np.sum(h ** 2)


def test_a_flag_a_method_of_the_class_sets_is_not_decided():
    with pytest.raises(srcad.SrcadError, match="stores in it a value"):
        srcad.grad(loss_method_sets_flag)([_r(3, 3), _r(3, 3)])


# ---- a name bound to a literal, read by a test: decided only where nothing else may bind it
def flag_set_in_a_loop(x):
    seen = False
    total = 0.0
    for v in x:  # (a loop of the code: the test reads the flag each trip, as Python's)
        if seen:
            total = total + v * 2.0
        seen = True
    return total + np.sum(x)


def flag_set_under_a_test_of_values(x):
    big = False
    if np.sum(x) > 0:
        big = True
    if big:
        return np.sum(x ** 3)
    return np.sum(x ** 2)


def flag_then_early_return(x):
    scale = 1
    if scale == 1:
        return np.sum(np.sin(x))
    return np.sum(x)


@MODES
@pytest.mark.parametrize("f", [flag_set_in_a_loop, flag_set_under_a_test_of_values,
                               flag_then_early_return], ids=lambda f: f.__name__)
def test_a_flag_the_code_binds_is_decided_only_where_nothing_else_binds_it(f, kw):
    for x in (np.array([0.5, -0.25, 1.5]), np.array([-0.5, -0.25, 0.1])):
        got = srcad.grad(f, **kw)(x.copy())
        np.testing.assert_allclose(got, numerical_grad(f, (x.copy(),)), rtol=1e-6, atol=1e-8)


# ---- layers of an abc.ABC hierarchy ----------------------------------------------------------
# `class Layer(ABC)` makes every subclass's metaclass ABCMeta, and `register` can make
# `isinstance` true for a class that does not derive from it: srcad tested every such
# `isinstance` when the code ran, so a store under one (`if isinstance(l, Dense): l.W = W`,
# a comprehension's filter) was refused where Python's answer is False (found 2026-12-06,
# eighth). Now a True answer (derived or registered: for good) is decided; a False one is
# guarded on no class being registered with any ABC between calls (rebuilt if one is) and
# checked again where the test stands (opaque.py `decided_class_test`).

class AbstractLayer(abc.ABC):
    @abc.abstractmethod
    def forward(self, x): ...


class AbcDense(AbstractLayer):
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return np.tanh(x @ self.W)


class AbcScale(AbstractLayer):
    def __init__(self, W):
        self.W = W  # (a weight too: a store into it is read back, so it must be decided)

    def forward(self, x):
        return x * self.W[0, 0]


class Outsider:  # (registered with AbcDense by the test below)
    def __init__(self):
        self.W = np.eye(2)

    def forward(self, x):
        return x


ABC_NET = Net([AbcDense(_r(3, 4)), AbcScale(np.full((1, 1), 1.5)), AbcDense(_r(4, 2))])


def abc_loop(Ws):
    i = 0
    for layer in ABC_NET.layers:
        if isinstance(layer, AbcDense):
            layer.W = Ws[i]
            i += 1
    return np.sum(ABC_NET.forward(X) ** 2)


def abc_filter(Ws):
    for layer, W in zip([l for l in ABC_NET.layers if isinstance(l, AbcDense)], Ws):
        layer.W = W
    return np.sum(ABC_NET.forward(X) ** 2)


def abc_combined(Ws):
    i = 0
    for layer in ABC_NET.layers:
        if isinstance(layer, AbstractLayer) and not isinstance(layer, AbcScale):
            layer.W = Ws[i]
            i += 1
    return np.sum(ABC_NET.forward(X) ** 2)


@MODES
@pytest.mark.parametrize("f", [abc_loop, abc_filter, abc_combined], ids=lambda f: f.__name__)
def test_layers_of_an_abc_hierarchy(f, kw):
    _check(f, _weights(), **kw)


def abc_outsider(x):
    if isinstance(OUTSIDER, AbcDense):
        return np.sum(x * 3.0)
    return np.sum(OUTSIDER.forward(x) ** 2)


OUTSIDER = Outsider()


def test_a_class_registered_between_calls_rebuilds_the_code():
    g = srcad.grad(abc_outsider)
    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(g(x), 2 * x)
    AbcDense.register(Outsider)  # (no name rebound: the ABC cache's token guards it)
    np.testing.assert_array_equal(g(x), [3.0, 3.0])


class Stranger:
    pass


STRANGER = Stranger()


def registers_then_tests(x):
    AbcScale.register(Stranger)
    if isinstance(STRANGER, AbcScale):
        return np.sum(x * 3.0)
    return np.sum(x ** 2)


def test_a_class_registered_during_the_call_stops_it_at_the_test():
    with pytest.raises(srcad.SrcadError, match="a class registered since") as e:
        srcad.grad(registers_then_tests)(np.array([1.0, 2.0]))
    assert e.value.filename == __file__ and e.value.lineno is not None  # (the user's line)


class FromAFramework(fx.FrameworkLayer):
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return np.tanh(x @ self.W)


FRAMEWORK_LAYERS = [FromAFramework(_r(3, 3)), FromAFramework(_r(3, 3))]


def flag_a_base_class_file_sets(Ws):
    for layer, W in zip(FRAMEWORK_LAYERS, Ws):
        if layer.trainable:
            layer.W = W
    h = X
    for layer in FRAMEWORK_LAYERS:
        h = layer.forward(h)
    return np.sum(h ** 2)


def test_a_flag_a_function_of_a_base_classs_file_sets_is_not_decided():
    """(`model.train()` of a framework's base class flipping each layer's flag: a test of it
    runs when the code runs; the store under it is refused, never decided early.)"""
    with pytest.raises(srcad.SrcadError, match="stores in it a value"):
        srcad.grad(flag_a_base_class_file_sets)([_r(3, 3), _r(3, 3)])
