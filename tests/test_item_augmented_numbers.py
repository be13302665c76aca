"""``d["n"] += 1`` / ``acc[0] += loss`` of a list's or dict's number item (session of 2026-12-07,
eleventh). Python ends an augmented assignment to a subscript by storing the result into the
slot; source mode's `write_through` (since 2aa7515, which let one array held in several
slots be written in place) stored only array, list and dict items, so a number item kept its
old value -- a wrong value and gradient, silently (`d = {"n": 1.0}; d["n"] += 2.0` read 1.0
back; a mutable default's counter ran one call behind). The item's own ``x[i] op= t`` now
always stores (`write_through(..., stored=True)`); a number read by another name first keeps
its old value (``n = d["n"]; n += 1`` leaves d as it is, as before)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

X = np.array([0.3, -0.7, 1.1, 0.45])


def local_dict_float(x):
    d = {"n": 1.0}
    d["n"] += 2.0
    return np.sum(x * d["n"])


def local_list_each_operator(x):
    l = [1.0, 2.0, 3.0, 8.0, 2.0]
    l[0] += 1
    l[1] -= 0.5
    l[2] *= np.sum(x)
    l[3] /= 4.0
    l[4] **= 3
    return np.sum(x) * l[0] + l[1] * l[2] + l[3] * np.sum(x ** 2) + l[4] * x[0]


def loss_accumulated_in_a_dict(x):
    stats = {"loss": 0.0, "steps": 0}
    h = x
    for _ in range(3):
        h = np.tanh(h * 1.3)
        stats["loss"] += np.sum(h ** 2)
        stats["steps"] += 1
    return stats["loss"] / stats["steps"]


def loss_accumulated_in_a_list(x):
    acc = [0.0]
    for i in range(3):
        acc[0] += np.sum(np.sin(x * (i + 1)))
    acc[-1] *= 0.5
    return acc[0]


def nested_item(x):
    d = {"inner": {"n": 0.5}, "rows": [1.0, 2.0]}
    d["inner"]["n"] += np.sum(x)
    d["rows"][1] += d["inner"]["n"]
    return d["rows"][1] * d["inner"]["n"]


def counts_by_computed_key(x):
    counts = {"pos": 0, "neg": 0}
    for v in x:
        counts["pos" if v > 0 else "neg"] += 1
    return np.sum(x ** 2) * counts["pos"] - counts["neg"] * np.sum(x)


def setdefault_then_increment(x):
    d = {}
    d.setdefault("n", 0)
    d["n"] += 1
    d.setdefault("n", 10)
    return np.sum(x ** 2) * d["n"]


def read_by_another_name_first(x):
    d = {"n": 2.0}
    n = d["n"]
    d["n"] += 1.0
    n += 5.0  # (a number: rebinds n, d keeps 3.0)
    return np.sum(x) * n + np.sum(x ** 2) * d["n"]


def array_item_in_two_slots(x):
    h = np.zeros(4)
    hs = [h, h]
    hs[0] += x  # (numpy writes the one array: both slots, and h, show it)
    return np.sum(hs[1] ** 2) + np.sum(h * x)


class _Stats:
    def __init__(self):
        self.counts = [0, 0]
        self.sums = {"a": 0.0}

    def update(self, v):
        self.counts[0] += 1
        self.sums["a"] += np.sum(v)
        return self.sums["a"] * self.counts[0]


STATS = _Stats()


def items_of_a_module_objects_attributes(x):
    # (the backward asked the dict whether its slot still held the number read: a later
    # `+=` had replaced it -- no gradient through the first update, silently)
    STATS.counts = [0, 0]
    STATS.sums = {"a": 0.0}
    STATS.update(x)
    r = STATS.update(x * 2)
    return r + STATS.counts[0] * np.sum(x)


def items_of_a_built_objects_attributes(x):
    s = _Stats()
    s.update(x)
    r = s.update(np.sin(x))
    return r + s.counts[0] * np.sum(x)


CASES = [local_dict_float, local_list_each_operator, loss_accumulated_in_a_dict,
         loss_accumulated_in_a_list, nested_item, counts_by_computed_key,
         setdefault_then_increment, read_by_another_name_first, array_item_in_two_slots,
         items_of_a_module_objects_attributes, items_of_a_built_objects_attributes]


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_a_number_item_written_by_its_own_augmented_assignment(fn, mode):
    opts = {"fuse": True} if mode == "fuse" else {"mode": mode}
    value, g = srcad.value_and_grad(fn, **opts)(X.copy())
    assert value == pytest.approx(fn(X.copy()), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (X.copy(),), h=1e-6), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_forward_mode(fn):
    v = np.array([0.2, 1.0, -0.5, 0.3])
    out, tangent = srcad.jvp(fn, (X.copy(),), (v,))
    assert out == pytest.approx(fn(X.copy()), rel=1e-12)
    assert tangent == pytest.approx(numerical_grad(fn, (X.copy(),), h=1e-6) @ v, rel=1e-6)


def counter_argument(x, d):
    d["n"] += 1
    return np.sum(x ** 2) * d["n"]


def counter_in_a_default(x, cache={}):  # noqa: B006  (the idiom under test)
    cache.setdefault("n", 0)
    cache["n"] += 1
    return np.sum(x ** 2) * cache["n"]


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_the_callers_dict_holds_the_new_count(mode):
    d = {"n": 0}
    g = srcad.value_and_grad(counter_argument, mode=mode)
    for k in (1, 2, 3):
        value, grad = g(X.copy(), d)
        assert d["n"] == k
        assert value == pytest.approx(k * np.sum(X ** 2), rel=1e-12)
        np.testing.assert_allclose(grad, 2 * k * X, rtol=1e-12)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_mutable_default_counts_each_call(mode):
    fn = counter_in_a_default
    fn.__defaults__[0].clear()
    g = srcad.value_and_grad(fn, mode=mode)
    got = [g(X.copy())[0] for _ in range(3)]
    fn.__defaults__[0].clear()
    want = [fn(X.copy()) for _ in range(3)]
    fn.__defaults__[0].clear()
    np.testing.assert_allclose(got, want, rtol=1e-12)
