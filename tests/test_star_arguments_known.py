"""``f(*p, x)``, ``Params(*p)``, ``Params._make(p)``, ``Params(**d)`` and ``np.maximum(*pair)``
where srcad knows how many items the star spreads -- a list or tuple argument (its length is in
the specialisation's key), an array argument (its rows), a display the function built -- each
is the items by position, as Python spreads them (session of 2026-12-07, eleventh). They were
refused ("star-arguments (`*args`) in a call to the user function", "`Params` has no
derivative rule") unless the star came last into a user function. A star whose count srcad
does not know is refused as before, and a count Python refuses is Python's TypeError."""

from __future__ import annotations

import collections
import typing

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(11)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 2))
X = RNG.standard_normal((2, 3))


class Params(typing.NamedTuple):
    W1: np.ndarray
    W2: np.ndarray


Pair = collections.namedtuple("Pair", ["W1", "W2"])
Scaled = collections.namedtuple("Scaled", ["W1", "W2", "scale"], defaults=[2.0])


def _mlp(W1, W2, x):
    return np.sum(np.tanh(x @ W1) @ W2)


def _read(p, x):
    return np.sum(np.tanh(x @ p.W1) @ p.W2)


def star_first_of_a_tuple(p, x):
    return _mlp(*p, x)


def star_first_of_a_list_then_keyword(p, x):
    return _mlp(*p, x=x)


def star_in_the_middle(p, x):
    return _scaled_mlp(0.5, *p, x)


def _scaled_mlp(s, W1, W2, x):
    return s * _mlp(W1, W2, x)


def typing_namedtuple_of_a_star(p, x):
    return _read(Params(*p), x)


def collections_namedtuple_of_a_star(p, x):
    return _read(Pair(*p), x)


def namedtuple_make(p, x):
    return _read(Params._make(p), x)


def namedtuple_with_a_default_of_a_star(p, x):
    s = Scaled(*p)
    return s.scale * _read(s, x)


def namedtuple_of_a_dict_spread(d, x):
    return _read(Pair(**d), x)


def star_of_a_local_tuple(W1, W2, x):
    ws = (W1, W2)
    return _mlp(*ws, x)


def star_into_a_numpy_function(W1, W2, x):
    pair = (x @ W1, np.tanh(x @ W1))
    return np.sum(np.maximum(*pair) @ W2)


def star_of_an_array_argument(rows, W2):
    return np.sum(np.tanh(np.stack([*rows])) @ W2) + _three(*rows)


def _three(a, b, c):
    return np.sum(a * b - c)


def _callee_spreading_its_list(ws, x):
    return _read(Pair(*ws), x) + _mlp(*ws, x)


def callee_spreads_its_argument(p, x):
    return _callee_spreading_its_list(p, x)


def callee_spreads_a_display(p, x):
    return _callee_spreading_its_list([p[0], p[1]], x)


TREE_CASES = [
    (star_first_of_a_tuple, lambda: ((A.copy(), B.copy()), X.copy())),
    (star_first_of_a_tuple, lambda: ([A.copy(), B.copy()], X.copy())),
    (star_first_of_a_list_then_keyword, lambda: ([A.copy(), B.copy()], X.copy())),
    (star_in_the_middle, lambda: ((A.copy(), B.copy()), X.copy())),
    (typing_namedtuple_of_a_star, lambda: ((A.copy(), B.copy()), X.copy())),
    (typing_namedtuple_of_a_star, lambda: ([A.copy(), B.copy()], X.copy())),
    (collections_namedtuple_of_a_star, lambda: ((A.copy(), B.copy()), X.copy())),
    (namedtuple_make, lambda: ((A.copy(), B.copy()), X.copy())),
    (namedtuple_with_a_default_of_a_star, lambda: ((A.copy(), B.copy()), X.copy())),
    (namedtuple_of_a_dict_spread, lambda: ({"W1": A.copy(), "W2": B.copy()}, X.copy())),
    (namedtuple_of_a_dict_spread, lambda: ({"W2": B.copy(), "W1": A.copy()}, X.copy())),
    (callee_spreads_its_argument, lambda: ((A.copy(), B.copy()), X.copy())),
    (callee_spreads_its_argument, lambda: ([A.copy(), B.copy()], X.copy())),
    (callee_spreads_a_display, lambda: ((A.copy(), B.copy()), X.copy())),
]


def _opts(mode):
    return {"fuse": True} if mode == "fuse" else {"mode": mode}


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
@pytest.mark.parametrize("case", range(len(TREE_CASES)),
                         ids=lambda i: f"{TREE_CASES[i][0].__name__}-{i}")
def test_a_spread_of_known_length_is_its_items(case, mode):
    fn, make = TREE_CASES[case]
    value, g = srcad.value_and_grad(fn, wrt=(0, 1), **_opts(mode))(*make())
    assert value == pytest.approx(fn(*make()), rel=1e-12)
    want = numerical_grad(fn, make(), wrt=(0, 1), h=1e-6)
    for got, ref in zip(_leaves(g), _leaves(want), strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-8)
    assert type(g[0]) is type(make()[0])


def _leaves(t):
    if isinstance(t, dict):
        return [x for k in sorted(t) for x in _leaves(t[k])]
    if isinstance(t, (list, tuple)):
        return [x for v in t for x in _leaves(v)]
    return [t]


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
@pytest.mark.parametrize("fn", [star_of_a_local_tuple, star_into_a_numpy_function],
                         ids=lambda f: f.__name__)
def test_a_spread_of_a_display(fn, mode):
    args = (A.copy(), B.copy(), X.copy())
    value, g = srcad.value_and_grad(fn, wrt=(0, 1), **_opts(mode))(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    want = numerical_grad(fn, args, wrt=(0, 1), h=1e-6)
    for got, ref in zip(g, want):
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
def test_a_spread_of_an_array_is_its_rows(mode):
    rows, W2 = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))
    fn = star_of_an_array_argument
    value, g = srcad.value_and_grad(fn, wrt=(0, 1), **_opts(mode))(rows, W2)
    assert value == pytest.approx(fn(rows, W2), rel=1e-12)
    for got, ref in zip(g, numerical_grad(fn, (rows, W2), wrt=(0, 1), h=1e-6)):
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-8)


def test_each_length_is_its_own_specialisation():
    """The count is the argument's length at each call: a longer tuple spreads more items
    (the specialisation's key holds the length)."""

    def total(p):
        return _sum_all(*p)

    g = srcad.grad(total)
    two = (np.array([1.0, 2.0]), np.array([3.0, -1.0]))
    three = two + (np.array([0.5, 0.25]),)
    for p in (two, three, two):
        got = g(p)
        assert len(got) == len(p)
        for gi, pi in zip(got, p):
            np.testing.assert_allclose(gi, 2 * pi)


def _sum_all(*xs):
    return sum(np.sum(x ** 2) for x in xs)


def test_a_count_python_refuses_is_its_type_error():
    """`_mlp(*p, x)` with three items in p: Python's TypeError (too many arguments), never a
    result that drops an item."""
    p = (A.copy(), B.copy(), B.copy())
    with pytest.raises(TypeError):
        star_first_of_a_tuple(p, X.copy())
    with pytest.raises((TypeError, srcad.SrcadError)):
        srcad.grad(star_first_of_a_tuple)(p, X.copy())
    with pytest.raises((TypeError, srcad.SrcadError)):
        srcad.grad(typing_namedtuple_of_a_star)(p, X.copy())


def test_a_spread_of_unknown_length_is_still_refused():
    def unknown(W1, W2, x, n):
        ws = [W1, W2][:n]
        return _mlp(*ws, x)

    with pytest.raises(srcad.SrcadError, match="star-arguments"):
        srcad.grad(unknown)(A.copy(), B.copy(), X.copy(), 2)
