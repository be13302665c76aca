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
   functions known here.
"""

from __future__ import annotations

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
