"""Parameters handed out by a generator, as numpy frameworks written like PyTorch do.

    class Module:
        def __setattr__(self, name, value):       # files Parameters and sub-modules away
            ...
        def parameters(self):
            for p in self._params.values():
                yield p
            for m in self._modules.values():
                yield from m.parameters()

    def loss(ws):
        for p, w in zip(model.parameters(), ws):
            p.data = w
        return np.mean((model(X) - Y) ** 2)

Found by a front-door probe (session of 2026-12-06, eighth): refused on 2af95e6 ("`.data`
is read through the object here, but loss stores in it a value that depends on the
arguments being differentiated"): the generator's list was one srcad knew only when the
code ran, so the stores went into objects it could not name. Now a user function whose code
only walks objects srcad knows (their attributes, dicts and lists, more such calls) is run
while srcad builds the code (frontend/staticrun.py), and its list of objects is their
display: the loop is written out per parameter and each store followed into the methods that
read `.data`. Each attribute, dict and list it read is guarded (a parameter added between
calls rebuilds the code); where the function itself may change them before the call (an
attribute assigned, a container changed in place, a method that changes them called first,
any assignment where a class files values away in `__setattr__`), the call runs as written
and the stores are refused, as before.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(23)
X = RNG.standard_normal((5, 3))
Y = RNG.standard_normal((5, 2))


class Parameter:
    def __init__(self, data):
        self.data = data


class Module:
    def __init__(self):
        self._params = {}
        self._modules = {}

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self.__dict__.setdefault("_params", {})[name] = value
        elif isinstance(value, Module):
            self.__dict__.setdefault("_modules", {})[name] = value
        object.__setattr__(self, name, value)

    def parameters(self):
        for p in self._params.values():
            yield p
        for m in self._modules.values():
            yield from m.parameters()

    def __call__(self, *args):
        return self.forward(*args)


class Linear(Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = Parameter(RNG.standard_normal((n_in, n_out)) * 0.5)
        self.bias = Parameter(np.zeros(n_out))

    def forward(self, x):
        return x @ self.weight.data + self.bias.data


class MLP(Module):
    def __init__(self):
        super().__init__()
        self.fc1 = Linear(3, 4)
        self.fc2 = Linear(4, 2)

    def forward(self, x):
        return self.fc2(np.tanh(self.fc1(x)))


class Registering(Module):
    """`register_parameter` / `add_module`, and a list of parameters built by a method."""

    def register_parameter(self, name, p):
        self._params[name] = p

    def add_module(self, name, m):
        self._modules[name] = m

    def parameter_list(self):
        out = []
        for m in self._modules.values():
            out.extend(m.parameter_list())
        for p in self._params.values():
            out.append(p)
        return out


class Dense(Registering):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.register_parameter("w", Parameter(RNG.standard_normal((n_in, n_out)) * 0.5))

    def forward(self, x):
        return np.tanh(x @ self._params["w"].data)


class Sequential(Registering):
    def __init__(self, *mods):
        super().__init__()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


MODEL = MLP()
SEQ = Sequential(Dense(3, 4), Dense(4, 2))


def _start(model):
    return [p.data.copy() for p in model.parameters()]


def load_by_zip(ws):
    for p, w in zip(MODEL.parameters(), ws):
        p.data = w
    return np.mean((MODEL(X) - Y) ** 2)


def load_by_enumerate_of_a_list(ws):
    params = list(MODEL.parameters())
    for i, p in enumerate(params):
        p.data = ws[i]
    return np.mean((MODEL(X) - Y) ** 2)


def load_registered(ws):
    for p, w in zip(SEQ.parameters(), ws):
        p.data = w
    return np.mean((SEQ(X) - Y) ** 2)


def load_by_a_list_method(ws):
    for p, w in zip(SEQ.parameter_list(), ws):
        p.data = w
    return np.mean((SEQ(X) - Y) ** 2)


CASES = [(load_by_zip, MODEL), (load_by_enumerate_of_a_list, MODEL), (load_registered, SEQ),
         (load_by_a_list_method, SEQ)]


@pytest.mark.parametrize("kw", [{}, {"fuse": True}, {"mode": "tape"}],
                         ids=["source", "fused", "tape"])
@pytest.mark.parametrize("f, model", CASES, ids=[c[0].__name__ for c in CASES])
def test_parameters_a_generator_hands_out(f, model, kw):
    start = _start(model)
    try:
        ws = [w + 0.1 for w in start]
        value, got = srcad.value_and_grad(f, **kw)([w.copy() for w in ws])
        assert value == f([w.copy() for w in ws])
        want = numerical_grad(f, ([w.copy() for w in ws],))
        assert len(got) == len(want) == len(start)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)
        srcad.grad(f, **kw)(ws)  # (the parameters keep what the call stored, as Python's)
        assert all(p.data is w for p, w in zip(model.parameters(), ws))
    finally:
        for p, w in zip(model.parameters(), start):
            p.data = w


def test_a_parameter_added_between_calls_rebuilds_the_code():
    start = _start(MODEL)
    g = srcad.grad(load_by_zip)
    try:
        assert len(g([w.copy() for w in start])) == 4
        MODEL.fc2.scale = Parameter(np.ones(2))  # (filed into fc2._params by __setattr__)
        ws = [w.copy() for w in start] + [np.full(2, 2.0)]
        got = g(ws)
        assert len(got) == 5
        np.testing.assert_array_equal(got[4], np.zeros(2))  # (loaded, never read)
        assert MODEL.fc2.scale.data is ws[4]
    finally:
        del MODEL.fc2._params["scale"]
        object.__delattr__(MODEL.fc2, "scale")
        for p, w in zip(MODEL.parameters(), start):
            p.data = w


def adds_a_parameter_first(ws):
    MODEL.fc1.extra = Parameter(np.zeros(4))  # (__setattr__ files it: the list changes)
    for p, w in zip(MODEL.parameters(), ws):
        p.data = w
    return np.mean((MODEL(X) - Y) ** 2)


def registers_first(ws):
    SEQ.add_module("2", Dense(2, 2))
    for p, w in zip(SEQ.parameters(), ws):
        p.data = w
    return np.mean((SEQ(X) - Y) ** 2)


def _weights_with_the_addition(f):
    if f is adds_a_parameter_first:  # (fc1's weight, bias, the new one; then fc2's)
        s = _start(MODEL)
        return [s[0] + 0.1, s[1] + 0.1, np.full(4, 0.5), s[2] + 0.1, s[3] + 0.1]
    return [w + 0.1 for w in _start(SEQ)] + [np.eye(2) * 0.7]


def _undo_the_addition():
    MODEL.fc1._params.pop("extra", None)
    MODEL.fc1.__dict__.pop("extra", None)
    SEQ._modules.pop("2", None)


@pytest.mark.parametrize("f, model", [(adds_a_parameter_first, MODEL),
                                      (registers_first, SEQ)],
                         ids=["setattr_files_it", "add_module"])
def test_a_structure_changed_before_the_call_is_not_read_early(f, model):
    """The generator run early would miss what the call adds first: not run early -- the
    call runs as written (a generator consumed whole), and the stores into what it hands
    out are refused or followed, never a list short of one."""
    start = _start(model)
    try:
        ws = _weights_with_the_addition(f)
        want_value = f([w.copy() for w in ws])
        _undo_the_addition()
        want = numerical_grad(lambda ws: (f(ws), _undo_the_addition())[0],
                              ([w.copy() for w in ws],))
        try:
            value, got = srcad.value_and_grad(f)([w.copy() for w in ws])
        except srcad.SrcadError:
            return
        assert value == pytest.approx(want_value, rel=1e-12)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)
    finally:
        _undo_the_addition()
        for p, w in zip(model.parameters(), start):
            p.data = w
