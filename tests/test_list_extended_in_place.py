"""`c += [v]` where `c` holds a list the function did not make (session of 2026-12-07, twelfth).
Python's `list.__iadd__` extends that very list; srcad wrote `c = c + [v]`, a new list:
- a list argument: the caller's list stayed as it was, so the next call read one item fewer
  than Python's (a wrong value and gradient at the second call, silently);
- a second name for a list a module object or dict holds (`h = NET.hist; h += [v]`): the
  holder's readers saw the old list -- a gradient of zeros, silently;
- a second name for a list argument (`d = c; d += [v]`): `c` read the old list in the same
  call -- a wrong value and gradient, silently.
Now the argument's own `+=` is the `c.extend(...)` it is (pylower.py `_argument_extended`),
followed into the caller's list; the other two are refused with the route. An array argument
`y += [1.0, 2.0]` is numpy's in-place add, as before."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

X = np.array([0.3, -0.7, 1.1])
MODES = ["source", "fuse", "tape"]


def _opts(mode):
    return {"fuse": True} if mode == "fuse" else {"mode": mode}


def extended_by_a_display(x, c):
    c += [1.0]
    return np.sum(np.sin(x) ** 2) * len(c)


def extended_by_a_comprehension(x, c):
    c += [float(i) for i in range(2)]
    return np.sum(np.tanh(x)) * len(c) + c[-1]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [extended_by_a_display, extended_by_a_comprehension],
                         ids=lambda f: f.__name__)
def test_a_list_arguments_own_extend_reaches_the_caller(fn, mode):
    g = srcad.value_and_grad(fn, **_opts(mode))
    ours, theirs = [0.5], [0.5]
    for _ in range(3):
        before = list(theirs)
        value, grad = g(X.copy(), ours)
        want = fn(X.copy(), theirs)
        assert ours == theirs  # (the caller's list, extended as Python extends it)
        assert value == pytest.approx(want, rel=1e-12)
        np.testing.assert_allclose(
            grad, numerical_grad(lambda x: fn(x, list(before)), (X.copy(),), h=1e-6),
            rtol=1e-6, atol=1e-8)


def an_array_argument_added_into(x, y):
    y += [1.0, 2.0, 3.0]
    return np.sum(x * y)


@pytest.mark.parametrize("mode", MODES)
def test_an_array_argument_plus_a_list_display_is_numpys_add(mode):
    y = np.array([0.5, 0.1, -0.2])
    g = srcad.grad(an_array_argument_added_into, wrt=(0, 1), **_opts(mode))
    dx, dy = g(X.copy(), y.copy())
    np.testing.assert_allclose(dx, y + [1.0, 2.0, 3.0])
    np.testing.assert_allclose(dy, X)


class History:
    def __init__(self):
        self.hist = []


HIST = History()
LOGS = {"k": []}


def a_second_name_for_an_objects_list(x):
    h = HIST.hist
    h += [1.0]
    return np.sum(x ** 2) * len(HIST.hist)


def a_second_name_for_a_dicts_list(x):
    h = LOGS["k"]
    h += [1.0]
    return np.sum(x ** 2) * len(LOGS["k"])


def a_second_name_for_a_list_argument(x, c):
    d = c
    d += [1.0]
    return np.sum(x ** 2) * len(c)


@pytest.mark.parametrize("mode", ["source", "fuse"])
@pytest.mark.parametrize("fn, args", [
    (a_second_name_for_a_dicts_list, ()),
    (a_second_name_for_a_list_argument, ([1.0],)),
], ids=["dict-item", "argument"])
def test_a_held_list_extended_by_a_second_name_is_refused(fn, args, mode):
    HIST.hist.clear()
    LOGS["k"].clear()
    with pytest.raises(srcad.SrcadError, match="extend|writes into a list"):
        srcad.grad(fn, **_opts(mode))(X.copy(), *args)
    # (nothing half-done: the holders keep what they held)
    assert HIST.hist == [] and LOGS["k"] == []


@pytest.mark.parametrize("mode", MODES)
def test_a_second_name_for_an_objects_list_extended_is_followed(mode):
    """`h = HIST.hist; h += [1.0]`: the object's list itself extended, as Python's `+=` does
    (refused before the session of 2026-12-07, fourteenth: pylower writes it as the
    `h.extend(...)` it is)."""
    HIST.hist.clear()
    g = srcad.grad(a_second_name_for_an_objects_list, **_opts(mode))
    for n in (1, 2):
        np.testing.assert_allclose(g(X.copy()), 2 * X * n)
    assert HIST.hist == [1.0, 1.0]


def test_extending_through_the_holder_is_followed():
    def through_the_holder(x):
        HIST.hist += [1.0]
        return np.sum(x ** 2) * len(HIST.hist)

    HIST.hist.clear()
    g = srcad.grad(through_the_holder)
    for n in (1, 2):
        np.testing.assert_allclose(g(X.copy()), 2 * X * n)
    assert HIST.hist == [1.0, 1.0]


# `c *= n` of a list argument (session of 2026-12-07, thirteenth): Python repeats the
# caller's list in place; source mode's `c = c * n` left it as it was (one item where Python
# has two, silently). Refused in source mode at the probe, which sees the list; tape mode runs
# Python's operator and is right; a tuple (`*=` rebinds it) and an array (numpy scales it in
# place) are followed as before.


def repeated(x, c):
    c *= 2
    return np.sum(x) * len(c)


def _grow(c):
    c *= 3


def repeated_by_a_callee(x):
    c = [1.0, 2.0]
    _grow(c)
    return np.sum(x * len(c))


@pytest.mark.parametrize("mode", ["source", "fuse"])
def test_a_list_argument_repeated_in_place_is_refused(mode):
    c = [1.0]
    with pytest.raises(srcad.SrcadError, match="changes the list argument `c` in place"):
        srcad.grad(repeated, **_opts(mode))(X, c)
    assert c == [1.0]
    with pytest.raises(srcad.SrcadError, match="changes the list argument `c` in place"):
        srcad.grad(repeated_by_a_callee, **_opts(mode))(X)


def test_tape_repeats_the_callers_list():
    c, want_c = [1.0], [1.0]
    value, grad = srcad.value_and_grad(repeated, mode="tape")(X, c)
    assert value == repeated(X, want_c) and c == want_c == [1.0, 1.0]
    np.testing.assert_allclose(grad, np.full(3, 2.0))
    value, grad = srcad.value_and_grad(repeated_by_a_callee, mode="tape")(X)
    assert np.isclose(value, repeated_by_a_callee(X))
    np.testing.assert_allclose(grad, np.full(3, 6.0))


@pytest.mark.parametrize("mode", MODES)
def test_a_tuple_argument_times_equals_is_followed(mode):
    value, grad = srcad.value_and_grad(repeated, **_opts(mode))(X, (1.0,))
    assert value == repeated(X, (1.0,))
    np.testing.assert_allclose(grad, np.full(3, 2.0))
