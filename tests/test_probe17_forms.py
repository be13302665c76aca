"""Refusals found by a seventeenth probe of the front door (session of 2026-12-05, fifth), each
checked in every mode against central differences and the plain call:

1. ``zip(a, b, strict=True)`` -- in a `for` header, a comprehension, with arguments that are
   calls: refused before ("a `for` loop with a tuple target": the keyword hid the zip), now
   the zip without the keyword after Python's own check of the lengths (the same ValueError
   and message, runtime_python.zip_lengths); ``strict=False`` is dropped;
2. ``itertools.chain(a, b)`` and ``itertools.chain.from_iterable(xss)`` walked by a `for`, a
   generator, ``sum`` or ``list``: refused before ("`itertools.chain` has no derivative
   rule"), now ``[*a, *b]`` and ``[x for xs in xss for x in xs]``, the same items in order;
3. ``list(Ws) + list(Vs)`` of lists the function is given: refused before ("applies a Python
   operator to ... a list or tuple that gradients flow through"), now list concatenation as
   ``[h0] + hs`` is;
4. ``operator.itemgetter("W", "b")(params)`` and ``operator.attrgetter("W", "inner.v")(obj)``
   called where they are made: refused before ("`the result of a call` has no derivative
   rule"), now the items or attributes as written;
5. a ``@dataclass`` whose list field (``field(default_factory=list)``, or a list display
   given) is appended to -- by a builder method (``MLP().add(W1).add(W2)``) or by the
   function (``m.Ws.append(W)``): refused before ("`.append()` changes a list ... that srcad
   holds as a value"; the dataclass's own `__init__` has no source, so the list's uses were
   not followed), now the appends are new lists as for a class whose `__init__` says
   ``self.Ws = []``. A list the caller still holds given to the field stays refused (its
   own name would not see the appends);
6. closures made in a ``for k in range(3)`` loop and kept in a list (``fs.append(lambda h,
   k=k: ...)``, ``def layer(h, k=k)`` then ``fs.append(layer)``, a comprehension of such
   lambdas), then walked: refused before ("`lambda` has no derivative rule": the list's
   items were unknown), now a loop of constant bounds (at most 8 steps) that makes closures
   is written out step by step, as a loop over a short display is, and the list holds
   functions known here;
7. a small framework's ``Module.parameters()``: a generator walking ``self.__dict__.values()``
   with ``yield from`` into child modules and ``isinstance(v, (list, tuple))`` into a
   ``Sequential(*layers)``'s tuple of them: refused before ("isinstance of a list of built
   objects": the container of built objects had no type), now answered from what Python
   holds there (a display's list or tuple, ``*layers``' tuple, a dict);
8. ``class ModuleList(list): pass`` given built layers: refused before ("handed to a
   function ... srcad does not follow into"), now the same list of objects, an instance of
   the class for ``isinstance``;
9. two silent wrong values, both present before this session (the widened differential
   fuzzer, tests/fuzz_python.py `_typed_container`, finds them): tape mode answered
   ``isinstance(d, OrderedDict)`` -- any container the tape holds, a user's list subclass --
   on a plain list or dict rebuilt from it (False), and source mode built
   ``OrderedDict(p=x)`` as a plain dict (False too). Now tape mode's isinstance sees the
   object itself and source mode makes the OrderedDict of the entries (the `ordered_dict`
   row);
10. ``next(iter(xs))`` -- a list's first item, a dict's first key, ``next(iter(params.
    values()))`` -- refused before ("`iter` has no derivative rule"), now ``list(xs)[0]``
    (of a name, an attribute or an item, or a dict view of one: not of a call, which could
    be a generator run past its first item);
11. a function setting a ``nonlocal`` called on its own result in one statement
    (``h = layer(layer(x))``): refused before ("called twice in one statement"), now the
    inner call first, a statement of its own, as Python evaluates it;
12. a class keeping the list it is given, or a new one, and appended to (``self.Ws = Ws or
    []``, ``[] if Ws is None else Ws``, ``if Ws is None: Ws = []``): refused before
    ("`.append()` changes a list ... that srcad holds as a value"), now written as new
    lists where each construction gives a new list (a display, ``list(...)``, None or the
    default None); a list the caller holds under its own name, or a mutable default shared
    by every call, stays refused. A list of built layers given so is the caller's own list,
    changed where the caller sees it, as in Python;
13. ``yield from it`` (a statement) in a generator function of the module: refused before
    ("`yield from` in a generator srcad differentiates"), now each item of it, as ``for v
    in it: yield v``; ``r = yield from g`` stays refused;
14. an assignment expression in a comprehension's condition (``sum(y for W in Ws if (y :=
    np.sum(...)) > c)``): refused before (the fence), now ``y = ...`` before the test in the
    loop the comprehension is written as, binding the function's ``y`` (read after it, as
    Python's comprehension leaves it); one after ``and`` / ``or`` stays refused;
15. ``it = iter(d)`` of a dict the function builds, ``iter(params.values())`` /
    ``iter(d.items())``, read by ``next(it)``: refused before ("`iter` has no derivative
    rule ... may store it in or change `d`"), now the keys, values or pairs held as a list
    first (the dict not changed while they are read), as for a list.
"""

from __future__ import annotations

import collections
import itertools
import operator
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
import pytest

import srcad

from tests.test_probe14_forms import MODES, _check

RNG = np.random.default_rng(17)


def _r(*shape):
    return RNG.standard_normal(shape) * 0.5


# ---- 1. zip(..., strict=True) -----------------------------------------------------------------
def zip_strict_loop(Ws, bs, x):
    h = x
    for W, b in zip(Ws, bs, strict=True):
        h = np.maximum(h @ W + b, 0)
    return np.sum(h ** 2)


def zip_strict_comprehension(Ws, x):
    scales = [0.5, 2.0]
    return sum(np.sum(np.tanh(x @ W) * s) for W, s in zip(Ws, scales, strict=True))


def zip_strict_call_args(params, x):
    total = 0.0
    for k, W in zip(sorted(params), [params[k] for k in sorted(params)], strict=True):
        total = total + np.sum(np.tanh(x @ W)) * len(k)
    return total


def zip_not_strict(Ws, bs, x):
    h = x
    for W, b in zip(Ws, bs, strict=False):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def test_zip_strict_in_a_loop():
    _check(zip_strict_loop, ([_r(3, 4), _r(4, 2)], [_r(4), _r(2)], _r(2, 3)), wrt=(0, 1, 2))


def test_zip_strict_in_a_comprehension():
    _check(zip_strict_comprehension, ([_r(3, 4), _r(3, 2)], _r(2, 3)), wrt=(0, 1))


def test_zip_strict_of_calls():
    _check(zip_strict_call_args, ({"wide": _r(3, 4), "w": _r(3, 2)}, _r(2, 3)), wrt=(0, 1))


def test_zip_strict_false_walks_the_shortest():
    _check(zip_not_strict, ([_r(3, 3), _r(3, 3)], [_r(3)], _r(2, 3)), wrt=(0, 1, 2))


@pytest.mark.parametrize("mode,fuse", MODES)
@pytest.mark.parametrize("bs_len", [1, 3])
def test_zip_strict_raises_pythons_error(mode, fuse, bs_len):
    Ws, bs, x = [_r(3, 3), _r(3, 3)], [_r(3)] * bs_len, _r(2, 3)
    with pytest.raises(ValueError) as want:
        zip_strict_loop(Ws, bs, x)
    f = srcad.grad(zip_strict_loop, mode=mode, fuse=fuse)
    f([_r(3, 3), _r(3, 3)], [_r(3), _r(3)], x)  # (specialised on a good call first)
    with pytest.raises(ValueError) as got:
        f(Ws, bs, x)
    assert str(got.value) == str(want.value)


# ---- 2. itertools.chain -----------------------------------------------------------------------
def chain_loop(Ws, Vs):
    tot = 0.0
    for w in itertools.chain(Ws, Vs):
        tot = tot + np.sum(w ** 2)
    return tot


def chain_sum(Ws, Vs, c):
    return sum(np.sum(w * c) for w in chain(Ws, Vs)) + sum(chain([c], [c * c]))


def chain_from_iterable(groups):
    return sum(np.sum(np.sin(w)) * (i + 1)
               for i, w in enumerate(itertools.chain.from_iterable(groups)))


def chain_list(Ws, Vs):
    allw = list(itertools.chain(Ws, Vs))
    return np.sum(np.concatenate([w.ravel() for w in allw]) ** 3)


def test_chain_walked_by_a_loop():
    _check(chain_loop, ([_r(3), _r(2, 2)], (_r(4),)), wrt=(0, 1))


def test_chain_in_sums():
    _check(chain_sum, ([_r(3)], [_r(3), _r(3)], np.float64(0.7)), wrt=(0, 1, 2))


def test_chain_from_iterable():
    _check(chain_from_iterable, ([[_r(2), _r(3)], [_r(4)]],))


def test_chain_made_a_list():
    _check(chain_list, ([_r(3)], [_r(2, 2)]), wrt=(0, 1))


# ---- 3. list(a) + list(b) ---------------------------------------------------------------------
def lists_added(Ws, Vs):
    return sum(np.sum(w ** 2) for w in list(Ws) + list(Vs))


def lists_added_in_a_loop(Ws, Vs, x):
    for W in list(Ws) + list(Vs) + [Ws[0].T]:
        x = np.tanh(x @ W)
    return np.sum(x)


def test_list_of_arguments_added():
    _check(lists_added, ([_r(3), _r(2)], (_r(4),)), wrt=(0, 1))
    _check(lists_added_in_a_loop, ([_r(3, 3)], (_r(3, 3), _r(3, 3)), _r(2, 3)), wrt=(0, 1, 2))


# ---- 4. operator.itemgetter / attrgetter ------------------------------------------------------
def getters(params, x):
    W, b = operator.itemgetter("W", "b")(params)
    s = operator.itemgetter("s")(params)
    return np.sum(np.tanh(x @ W + b) * s)


class Layer:
    def __init__(self, W, inner):
        self.W = W
        self.inner = inner


class Inner:
    def __init__(self, v):
        self.v = v


def attr_getters(W, v, x):
    layer = Layer(W, Inner(v))
    A, u = operator.attrgetter("W", "inner.v")(layer)
    return np.sum(np.tanh(x @ A) * u)


def test_itemgetter_called_where_made():
    _check(getters, ({"W": _r(3, 2), "b": _r(2), "s": _r(2)}, _r(4, 3)), wrt=(0, 1))


def test_attrgetter_called_where_made():
    _check(attr_getters, (_r(3, 2), _r(2), _r(4, 3)), wrt=(0, 1, 2))


# ---- 5. a dataclass's list field, appended to -------------------------------------------------
@dataclass
class MLP:
    Ws: list = field(default_factory=list)
    scale: float = 1.0

    def add(self, W):
        self.Ws.append(W)
        return self

    def __call__(self, x):
        for W in self.Ws:
            x = np.tanh(x @ W) * self.scale
        return x


def dataclass_builder(W1, W2, x):
    m = MLP().add(W1).add(W2)
    return np.sum(m(x) ** 2)


def dataclass_appended_outside(W1, W2, x):
    m = MLP(scale=0.5)
    m.Ws.append(W1)
    m.Ws.append(W2)
    return np.sum(m(x) ** 2)


def dataclass_display_given(W1, W2, x):
    m = MLP([W1, W2], 2.0)
    m.Ws.pop()
    m.add(W2.T @ W1)
    return np.sum(m(x) ** 2)


def dataclass_callers_list(W1, W2, x):
    lst = [W1]
    m = MLP(lst)
    m.Ws.append(W2)
    return np.sum(m(x)) + sum(np.sum(w) for w in lst)


def test_dataclass_list_field_appended_by_a_builder():
    _check(dataclass_builder, (_r(3, 4), _r(4, 2), _r(2, 3)), wrt=(0, 1, 2))


def test_dataclass_list_field_appended_by_the_function():
    _check(dataclass_appended_outside, (_r(3, 4), _r(4, 2), _r(2, 3)), wrt=(0, 1))


def test_dataclass_list_field_given_a_display():
    _check(dataclass_display_given, (_r(3, 3), _r(3, 3), _r(2, 3)), wrt=(0, 1))


def test_dataclass_list_field_given_the_callers_list_is_refused():
    args = (_r(3, 3), _r(3, 3), _r(2, 3))
    with pytest.raises(srcad.SrcadError, match="changed in place, and may have another name"):
        srcad.grad(dataclass_callers_list, wrt=(0, 1))(*args)


# ---- 6. closures made in a range loop, kept in a list -----------------------------------------
def lambdas_appended_in_a_range_loop(W, x):
    fs = []
    for k in range(3):
        fs.append(lambda h, k=k: np.tanh(h @ W) * (k + 1))
    h = x
    for f in fs:
        h = f(h)
    return np.sum(h)


def defs_appended_in_a_range_loop(W, b, x):
    fs = []
    for k in range(1, 6, 2):
        def layer(h, k=k):
            return np.tanh(h @ W + b * k)
        fs.append(layer)
    for f in reversed(fs):
        x = f(x)
    return np.sum(x ** 2)


def comprehension_of_lambdas(W, x):
    fs = [lambda h, k=k: np.sin(h @ W) + k for k in range(2)]
    return sum(np.sum(f(x)) for f in fs) + np.sum(fs[-1](x) ** 2)


def test_lambdas_appended_in_a_range_loop():
    _check(lambdas_appended_in_a_range_loop, (_r(3, 3), _r(2, 3)), wrt=(0, 1))


def test_defs_appended_in_a_range_loop():
    _check(defs_appended_in_a_range_loop, (_r(3, 3), _r(3), _r(2, 3)), wrt=(0, 1, 2))


def test_comprehension_of_lambdas():
    _check(comprehension_of_lambdas, (_r(3, 3), _r(2, 3)), wrt=(0, 1))


# ---- 7. a framework's Module.parameters() ---------------------------------------------------
class Module:
    def __call__(self, *args):
        return self.forward(*args)

    def parameters(self):
        for v in self.__dict__.values():
            if isinstance(v, Module):
                yield from v.parameters()
            elif isinstance(v, np.ndarray):
                yield v
            elif isinstance(v, (list, tuple)):
                for m in v:
                    if isinstance(m, Module):
                        yield from m.parameters()


class Linear(Module):
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward(self, x):
        return x @ self.W + self.b


class Tanh(Module):
    def forward(self, x):
        return np.tanh(x)


class Sequential(Module):
    def __init__(self, *layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Stack(Module):
    def __init__(self, layers, head):
        self.blocks = layers
        self.head = head

    def forward(self, x):
        for b in self.blocks:
            x = np.tanh(b(x))
        return self.head(x)


def weight_decayed(W1, b1, W2, b2, x):
    model = Sequential(Linear(W1, b1), Tanh(), Linear(W2, b2))
    return np.mean(model(x) ** 2) + 1e-2 * sum(np.sum(p ** 2) for p in model.parameters())


def nested_modules(W1, b1, W2, b2, x):
    model = Stack([Linear(W1, b1)], Linear(W2, b2))
    return np.mean(model(x) ** 2) + 0.1 * sum(np.sum(p * p) for p in model.parameters())


def container_types(W1, b1, W2, b2, x):
    pair, listed = (Linear(W1, b1), Linear(W2, b2)), [Linear(W1, b1)]
    scale = (1.0 if isinstance(pair, tuple) else 2.0) + (3.0 if isinstance(listed, tuple)
                                                          else 5.0)
    return np.sum(pair[1](np.tanh(listed[0](x)))) * scale


def test_parameters_generator_of_a_small_framework():
    args = (_r(3, 4), _r(4), _r(4, 2), _r(2), _r(5, 3))
    _check(weight_decayed, args, wrt=(0, 1, 2, 3, 4))
    _check(nested_modules, args, wrt=(0, 1, 2, 3))


def test_isinstance_of_lists_of_built_objects():
    _check(container_types, (_r(3, 4), _r(4), _r(4, 2), _r(2), _r(5, 3)), wrt=(0, 2))


# ---- 8. a user's subclass of list holding layers ------------------------------------------
class ModuleList(list):
    pass


def module_list(W1, W2, x):
    ms = ModuleList([Linear(W1, 0.0), Linear(W2, 0.0)])
    s = (1.0 if isinstance(ms, ModuleList) else 0.0) + (2.0 if isinstance(ms, tuple) else 0.0)
    for m in ms:
        x = np.tanh(m(x))
    return np.sum(x) * (s + len(ms))


def module_list_appended(W1, W2, x):
    ms = ModuleList()
    for W in (W1, W2):
        ms.append(Linear(W, 0.0))
    return np.sum(ms[1](np.tanh(ms[0](x))))


def module_list_sliced_and_added(W1, W2, x):
    ms = ModuleList([Linear(W1, 0.0), Linear(W2, 0.0)])
    rest, both = ms[1:], ms + [Linear(W1.T, 0.0)]  # (plain lists, as Python's list gives)
    s = (1.0 if isinstance(rest, ModuleList) else 2.0) + \
        (4.0 if isinstance(both, ModuleList) else 8.0)
    for m in both:
        x = np.tanh(m(x))
    return np.sum(rest[0](x)) * s


def test_a_list_subclass_of_layers():
    _check(module_list, (_r(3, 3), _r(3, 2), _r(4, 3)), wrt=(0, 1, 2))
    _check(module_list_appended, (_r(3, 3), _r(3, 2), _r(4, 3)), wrt=(0, 1))
    _check(module_list_sliced_and_added, (_r(3, 3), _r(3, 3), _r(4, 3)), wrt=(0, 1, 2))


# ---- 9. isinstance of an OrderedDict, in both modes --------------------------------------------
def ordered_isinstance(W, x):
    od = collections.OrderedDict(fc=W)
    od["out"] = W.T
    s = 1.5 if isinstance(od, collections.OrderedDict) else 0.5
    return np.sum(np.tanh(x @ od["fc"]) @ od["out"]) * s


def ordered_from_pairs(W, x):
    od = collections.OrderedDict([("a", W), ("b", 2.0 * W)])
    first = list(od)[-1]
    return np.sum(np.tanh(x @ od[first])) * (2.0 if type(od) is dict else 3.0)


def test_ordered_dict_made_in_the_function_is_one():
    for f in (ordered_isinstance, ordered_from_pairs):
        _check(f, (_r(3, 3), _r(4, 3)), wrt=(0, 1))


# ---- 10. next(iter(xs)) ----------------------------------------------------------------------
def first_key(W, x):
    d = {"a": W, "b": 2 * W}
    k = next(iter(d))
    return np.sum(np.tanh(x @ d[k]))


def first_item(Ws, x):
    return np.sum(np.tanh(x @ next(iter(Ws)))) + np.sum(next(iter(x)))


def first_value(params, x):
    W = next(iter(params.values()))
    name, b = next(iter(params.items()))
    return np.sum(np.tanh(x @ W)) * len(name) + np.sum(b)


def test_next_of_iter():
    W, x = _r(3, 3), _r(2, 3)
    _check(first_key, (W, x), wrt=(0, 1))
    _check(first_item, ([W, _r(3, 3)], x), wrt=(0, 1))
    _check(first_value, ({"fc": W, "out": _r(3)}, x), wrt=(0, 1))


# ---- 11. a nonlocal writer called on its own result -------------------------------------------
def nested_writer_calls(W, x):
    calls = 0

    def layer(h):
        nonlocal calls
        calls += 1
        return np.tanh(h @ W) * calls

    h = layer(layer(x))
    return np.sum(h) * calls


def test_nonlocal_writer_called_on_its_own_result():
    _check(nested_writer_calls, (_r(3, 3), _r(2, 3)), wrt=(0, 1))


# ---- 12. a list given to a constructor, or a new one, appended to -----------------------------
class Chain:
    def __init__(self, Ws=None, scale=1.0):
        self.Ws = Ws or []
        self.scale = scale

    def add(self, W):
        self.Ws.append(W)
        return self

    def __call__(self, x):
        for W in self.Ws:
            x = np.tanh(x @ W) * self.scale
        return x


class Branchy:
    def __init__(self, Ws=None):
        if Ws is None:
            Ws = []
        self.Ws = Ws


class Shared:
    def __init__(self, Ws=[]):  # noqa: B006  (the mutable default this test is about)
        self.Ws = Ws


class Layers:
    def __init__(self, layers=None):
        self.layers = [] if layers is None else layers

    def add(self, layer):
        self.layers.append(layer)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def chain_default(W1, W2, x):
    return np.sum(Chain(scale=0.5).add(W1).add(W2)(x) ** 2)


def chain_given(W1, W2, x):
    m = Chain([W1], 2.0)
    m.add(W2)
    return np.sum(m(x) ** 2) + np.sum(Chain(None).add(W2)(x))


def branchy(W1, W2, x):
    m = Branchy()
    m.Ws.append(W1)
    m.Ws.append(W2)
    for W in m.Ws:
        x = np.tanh(x @ W)
    return np.sum(x)


def callers_list(W1, W2, x):
    lst = [W1]
    m = Chain(lst)
    m.add(W2)
    return np.sum(m(x)) + len(lst)


def shared_default(W1, W2, x):
    m = Shared()
    m.Ws.append(W1)
    return np.sum(x @ m.Ws[0])


def callers_layers(W1, W2, x):
    given = [Linear(W1, 0.0)]
    m = Layers(given)
    m.add(Linear(W2, 0.0))
    return np.sum(m.forward(x)) * len(given)


def test_lists_given_or_made_by_a_constructor_appended_to():
    args = (_r(3, 3), _r(3, 3), _r(2, 3))
    for f in (chain_default, chain_given, branchy, callers_layers):
        _check(f, args, wrt=(0, 1, 2))


@pytest.mark.parametrize("fn", [callers_list, shared_default])
def test_a_list_the_caller_or_every_call_holds_is_refused(fn):
    with pytest.raises(srcad.SrcadError):
        srcad.grad(fn, wrt=(0, 1))(_r(3, 3), _r(3, 3), _r(2, 3))


# ---- 13. yield from in a generator the function calls ----------------------------------------
def rows_then_double(x, extra):
    yield from x
    yield from (np.sin(e) for e in extra)
    yield x[0] * 2


def delegating(x, W):
    return sum(np.sum(np.tanh(r @ W)) for r in rows_then_double(x, [W[0], W[1]]))


def returns_delegate(x):
    r = yield from rows_then_double(x, [])
    yield r


def delegate_value_used(x):
    return sum(np.sum(v) for v in returns_delegate(x))


def test_yield_from_in_a_generator():
    _check(delegating, (_r(2, 3), _r(3, 3)), wrt=(0, 1))
    with pytest.raises(srcad.SrcadError, match="yield from` used as a value"):
        srcad.grad(delegate_value_used)(_r(2, 3))


# ---- 14. a walrus in a comprehension's condition ----------------------------------------------
def walrus_filter(Ws, x):
    total = sum(y for W in Ws if (y := np.sum(np.tanh(x @ W))) > -100.0)
    kept = [z * 2.0 for W in Ws if (z := np.sum(W * W)) < 100.0]
    return total + y + sum(kept) + z


def walrus_after_or(Ws, x):
    return sum(y for W in Ws if np.sum(W) > 1e9 or (y := np.sum(W)) > 0)


def test_walrus_in_a_comprehension_condition():
    _check(walrus_filter, ([_r(3, 2), _r(3, 2)], _r(4, 3)), wrt=(0, 1))
    with pytest.raises(srcad.SrcadError, match="may not run"):
        srcad.grad(walrus_after_or)([_r(3, 2)], _r(4, 3))


# ---- 15. an iterator over a dict or a dict's view ---------------------------------------------
def first_keys_of_a_dict(W, x):
    d = {"a": W, "b": 2.0 * W}
    it = iter(d)
    k = next(it)
    k2 = next(it)
    return np.sum(np.tanh(x @ d[k])) + np.sum(d[k2] ** 2)


def values_in_order(params, x):
    it = iter(params.values())
    W = next(it)
    b = next(it)
    return np.sum(np.tanh(x @ W + b))


def pairs_in_order(W, x):
    d = {"a": W, "bb": 2 * W}
    it = iter(d.items())
    k, V = next(it)
    k2, V2 = next(it)
    return np.sum(np.tanh(x @ V)) * len(k) + np.sum(V2) * len(k2)


def test_iterators_over_dicts():
    W, x = _r(3, 3), _r(2, 3)
    _check(first_keys_of_a_dict, (W, x), wrt=(0, 1))
    _check(values_in_order, ({"W": W, "b": _r(3)}, x), wrt=(0, 1))
    _check(pairs_in_order, (W, x), wrt=(0, 1))
