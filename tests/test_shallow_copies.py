"""Shallow copies of a container hold the very same arrays (issue 21, session of 2026-12-04,
sixth): `M = list(L)`, `L.copy()`, `L[:]`, `copy.copy(L)`, `[w for w in L]`, `tuple(L)`,
`dict(D)`, `D.copy()`, `{k: v for k, v in D.items()}`, and a list holding one array twice
(`[W, W]`). A write in place through one holder's item (`M[0] += t`, `for p in M: p -= t`, a
callee walking M) is seen through every other holder and every name bound to that array, as
Python's one object shows it. srcad kept such a copy as a container of its own and returned
the other holder's old array, silently -- 15 of the 20 programs below (`_FIRST`) were wrong in
source mode on 32a7752 and 3 in tape mode (a callee given `[W, W]` walked two Tensors;
`copy.copy`'s items came back as the callee's own Tensors). Each program here must give
Python's value and the central-difference gradient, in source mode, tape mode and fused, or
(the `REFUSED` ones) a SrcadError -- never a wrong answer. The fuzzer of the class is
tests/fuzz_shared_holders.py's `generate_copies` (tests/test_shared_holders_fuzz.py)."""

import copy
import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error


def _walk(ps, lr):
    for p in ps:
        p -= lr * p


def _bump_first(ps, x):
    ps[0] += x
    return np.sum(ps[1] * x)


def _bump_all(ps, x):
    for p in ps:
        p += x
    return np.sum(ps[0] * x)


def _first(ps):
    return ps[0]


def list_call(a, b):
    ws = [a * 1.0, b * 2.0]
    vs = list(ws)
    vs[0] += b
    return np.sum(ws[0] * ws[0]) + np.sum(vs[1])


def list_comprehension(a, b):
    ws = [a * 1.0, b * 2.0]
    vs = [w for w in ws]
    vs[0] += b
    return np.sum(ws[0] * ws[0]) + np.sum(vs[1])


def list_of_a_generator(a, b):
    ws = [a * 1.0, b * 2.0]
    vs = list(w for w in ws)
    vs[1] *= a
    return np.sum(ws[1] * ws[0]) + np.sum(vs[0])


def list_method_copy(a, b):
    ws = [a * 1.0, b * 2.0]
    vs = ws.copy()
    vs[0] += b
    return np.sum(ws[0] * ws[0]) + np.sum(vs[1])


def copy_module_copy(a, b):
    ws = [a * 1.0, b * 2.0]
    vs = copy.copy(ws)
    vs[0] += b
    return np.sum(ws[0] * ws[0]) + np.sum(vs[1])


def list_slice_copy(a, b):
    ws = [a * 1.0, b * 2.0]
    vs = ws[:]
    vs[0] += b
    return np.sum(ws[0] * ws[0]) + np.sum(vs[1])


def name_of_the_item(a, b):
    ws = [a * 1.0, b * 2.0]
    w = ws[0]
    vs = list(ws)
    vs[0] += b
    return np.sum(w * w) + np.sum(vs[1])


def loop_through_the_copy(a, b):
    ws = [a * 1.0, b * 2.0]
    vs = list(ws)
    for v in vs:
        v -= b
    return np.sum(ws[0] * ws[1])


def loop_through_the_copy_then_write(a, b):
    W1 = a * 1.5
    W2 = b + 0.5
    L = [W1, W2]
    M = L.copy()
    for p in M:
        p += 0.78 * a
    return np.sum(W1 * 1.0) + np.sum(W2 * 0.9) + np.sum(L[0] * L[1])


def zip_through_the_copy(a, b):
    ws = [a * 1.0, b * 2.0]
    gs = [a, b]
    vs = list(ws)
    for p, g in zip(vs, gs):
        p -= 0.1 * g
    return np.sum(ws[0] * ws[1])


def tuple_of_the_list(a, b):
    ws = [a * 1.0, b * 2.0]
    t = tuple(ws)
    ws[0] += b
    return np.sum(t[0] * t[0])


def write_through_the_original(a, b):
    ws = [a * 1.0, b * 2.0]
    vs = list(ws)
    ws[1] *= a
    return np.sum(vs[1] * vs[0])


def dict_call(a, b):
    d = {"x": a * 1.0, "y": b * 2.0}
    e = dict(d)
    e["x"] += b
    return np.sum(d["x"] * d["x"]) + np.sum(e["y"])


def dict_comprehension(a, b):
    d = {"x": a * 1.0, "y": b * 2.0}
    e = {k: v for k, v in d.items()}
    e["x"] += b
    return np.sum(d["x"] * d["x"]) + np.sum(e["y"])


def dict_method_copy(a, b):
    d = {"x": a * 1.0, "y": b * 2.0}
    e = d.copy()
    e["x"] *= b
    return np.sum(d["x"] * d["x"]) + np.sum(e["y"])


def dict_written_then_copy_read(a, b):
    W1 = a * 1.5
    W2 = b + 0.5
    D = {"x": W1, "y": W2}
    E = {k: v for k, v in D.items()}
    D["x"] += 0.39 * b
    return np.sum(W1 * W2) + np.sum(D["x"] * 1.0) + np.sum(E["x"] * 0.8)


def deep_copy_is_a_copy(a, b):
    d = {"x": a * 1.5, "y": b + 0.5}
    e = copy.deepcopy(d)
    e["x"] += 0.78 * b
    return np.sum(d["x"] * 1.0) + np.sum(e["x"])


def one_array_twice_walked(a, b):
    W1 = a * 1.5
    L = [W1, W1, b + 0.5]
    _walk(L, 0.85)
    return np.sum(W1) + np.sum(L[0] * L[1])


def one_array_twice_walked_then_written(a, b):
    W1 = a * 1.5
    W2 = b + 0.5
    L = [W1, W1, W2]
    for p in L:
        p -= 0.7 * a
    L[1] *= 0.64 * b
    return np.sum(W1 * W2) + np.sum(L[0] * 1.0) + np.sum(L[1] * 0.9)


def one_array_twice_given_to_a_callee(a, b):
    V = a * 1.0
    return _bump_all([V, V], b) + np.sum(V)


def copy_walked_by_a_callee_then_written(a, b):
    W1 = a * 1.5
    W2 = b + 0.5
    L = [W1, W2]
    M = list(L)
    _walk(M, 0.57)
    L[1] += 0.58 * b
    return np.sum(L[1] * 0.9) + np.sum(M[1] * 0.7) + np.sum(W2)


def copy_walked_after_the_original(a, b):
    W1 = a * 1.5
    W2 = b + 0.5
    L = [W1, W2]
    M = list(L)
    L[1] -= 0.49 * b
    _walk(L, 0.44)
    return np.sum(W1 * W2) + np.sum(L[1] * 0.9) + np.sum(M[1] * 0.7)


def item_returned_by_a_callee(a, b):
    W1 = a * 1.5
    L = [W1, b]
    w = _first(L)
    w += b
    return np.sum(W1 * L[0])


def one_array_twice_written_by_a_callee(a, b):
    V = a * 1.0
    return _bump_first([V, V], b)


def nested_copies(a, b):
    ws = [[a * 1.0], [b * 2.0]]
    vs = [list(w) for w in ws]
    vs[0][0] += b
    return np.sum(ws[0][0] * ws[0][0])


PROGRAMS = [list_call, list_comprehension, list_of_a_generator, list_method_copy,
            copy_module_copy, list_slice_copy, name_of_the_item, loop_through_the_copy,
            loop_through_the_copy_then_write, zip_through_the_copy, tuple_of_the_list,
            write_through_the_original, dict_call, dict_comprehension, dict_method_copy,
            dict_written_then_copy_read, deep_copy_is_a_copy, one_array_twice_walked,
            one_array_twice_walked_then_written, one_array_twice_given_to_a_callee,
            copy_walked_by_a_callee_then_written, copy_walked_after_the_original,
            item_returned_by_a_callee, one_array_twice_written_by_a_callee, nested_copies]
# a SrcadError is an answer for these (never a wrong one); every other program must be right
# (a callee writing the items of a list that holds one array twice, an item a callee gives
# back written in place, a copy of each item of a nested list: what srcad cannot follow is
# refused where it would have been wrong -- on 32a7752 all five gave a wrong value)
REFUSED = {"item_returned_by_a_callee", "nested_copies", "one_array_twice_walked_then_written",
           "one_array_twice_given_to_a_callee", "one_array_twice_written_by_a_callee"}
_ARGS = (np.array([0.7, -1.1, 0.4]), np.array([-0.3, 0.9, 1.2]))


@pytest.mark.parametrize("mode, fuse", [("source", False), ("tape", False), ("source", True)])
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_shallow_copy_holds_the_same_arrays(fn, mode, fuse):
    want_v = fn(*[a.copy() for a in _ARGS])
    want = numerical_grad(fn, [a.copy() for a in _ARGS], wrt=(0, 1))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v, g = srcad.value_and_grad(fn, wrt=(0, 1), mode=mode, fuse=fuse)(
                *[a.copy() for a in _ARGS])
    except srcad.SrcadError:
        assert fn.__name__ in REFUSED, f"{fn.__name__} refused in {mode} mode"
        return
    np.testing.assert_allclose(v, want_v, rtol=1e-10, atol=1e-12)
    for got, exp in zip(g, want):
        assert rel_error(got, exp) < 1e-6, (got, exp)


def _value_of(fn, *args):
    return srcad.value_and_grad(fn, wrt=(0,))(*args)[0]


def test_a_list_copy_is_a_list_not_an_array():
    """`ws.copy()` of a list display was numpy's copy of it -- a 2-d array (`vs[1]` a row)."""
    def first_row_sum(a, b):
        ws = [a * 1.0, b * 2.0, a + b]
        vs = ws.copy()
        return np.sum(vs[2]) + float(len(vs))
    a, b = _ARGS
    assert _value_of(first_row_sum, a, b) == first_row_sum(a, b)
