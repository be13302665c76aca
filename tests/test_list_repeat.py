"""Python's list repeat (`[h0] * T`, `n * [x]`), and one array held in several slots of a list
or dict, written in place through one of them (issues 21, 23; session of 2026-12-04, fifth).

`[x] * n` was refused in source mode ("applies a Python operator to `x`, a list or tuple
that gradients flow through"); it is now a row (`list_repeat`: the same objects n times
over, its VJP gathering the copies' cotangents, last copy first), or -- a few names repeated
a constant number of times -- the display it makes (`[x, x, x]`).

Found while adding it, silent wrong values and gradients in source mode (tape mode right):
a list holding one array in several slots (`hs = [y] * 3`, `hs = [y, y, y]`) written in
place through one of them (`hs[0] += 1.0`, `hs[0] *= x`, `for p in hs: p -= x`) changed that
slot only, where numpy's one array shows the write in every slot. A write through an item
now lands in each slot holding the object (runtime.held_at, write_through's rules).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

MODES = [("source", False), ("tape", False), ("source", True)]


def _check(fn, x, tol=1e-6, bitwise=False):
    want_v = fn(x.copy())
    want = numerical_grad(fn, (x.copy(),))
    got = {}
    for mode, fuse in MODES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v, g = srcad.value_and_grad(fn, mode=mode, fuse=fuse)(x.copy())
        assert np.allclose(v, want_v, rtol=1e-12, atol=1e-12), (mode, fuse, v, want_v)
        assert rel_error(g, want) < tol, (mode, fuse, g, want)
        got[mode, fuse] = g
    if bitwise:
        assert np.array_equal(got["source", False], got["tape", False])
    # forward mode: the directional derivative along ones
    t = np.ones_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, tan = srcad.jvp(fn, (x.copy(),), (t,))
    assert np.isclose(tan, np.sum(want * t), rtol=1e-6, atol=1e-9)


# ---- 1. list repeat -------------------------------------------------------------------------

def repeat_then_sum(x):
    hs = [x] * 3
    return sum(np.sum(h * h) for h in hs)


def repeat_by_a_parameter(x, T=4):
    hs = [np.tanh(x)] * T
    hs[1] = hs[1] * 2.0  # (a store: rebinds slot 1 only)
    return np.sum(np.stack(hs) ** 2)


def repeat_on_the_left(x):
    ws = 2 * [x[0], x[1] * 3.0]
    acc = [0.0] * x.shape[0]
    for t in range(x.shape[0]):
        acc[t] = ws[t % 4] * t
    return np.sum(np.array(acc) ** 2) + len([1] * 3)


def repeat_of_two(x):
    hs = [x, x * 2] * 2
    return np.sum(np.concatenate(hs) ** 3)


def repeat_of_a_call(x):
    hs = [np.sin(x) * x] * (x.shape[0] - 1)
    return np.sum(hs[0] * hs[-1]) + len(hs)


def repeat_none_then_fill(x):
    out = [None] * 3
    for i in range(3):
        out[i] = x * (i + 1.0)
    return np.sum(np.stack(out) ** 2)


def repeat_zero_times(x):
    hs = [x] * 0 + [x * 2.0]
    return np.sum(hs[0] ** 2) + len(hs)


@pytest.mark.parametrize("fn", [repeat_then_sum, repeat_by_a_parameter, repeat_on_the_left,
                                repeat_of_two, repeat_of_a_call, repeat_none_then_fill,
                                repeat_zero_times])
def test_list_repeat(fn):
    _check(fn, np.array([0.3, -0.7, 1.1, 0.5]))


def test_list_repeat_second_order():
    def f(s):
        hs = [s * s] * 3
        return hs[0] * hs[2] + hs[1]

    g2 = srcad.grad(srcad.grad(f))(0.7)
    assert np.isclose(g2, 12 * 0.7 ** 2 + 2.0)


# ---- 2. one array in several slots, written in place through one -----------------------------

def repeat_item_written_in_place(x, T=3):
    y = x * 1.0
    hs = [y] * T
    hs[0] += 1.0
    return np.sum(hs[2] * x)


def repeat_item_element_written(x, T=3):
    y = x * 1.0
    hs = [y] * T
    hs[0][1] = 5.0 * x[0]
    return np.sum(hs[2] * x)


def constant_repeat_item_written(x):
    y = x * 1.0
    hs = [y] * 3
    hs[0] += 1.0
    return np.sum(hs[2] * x) + np.sum(y)


def display_item_written(x):
    y = x * 1.0
    hs = [y, y, y]
    hs[0] += 1.0
    return np.sum(hs[2] * x)


def display_item_multiplied(x):
    y = x * 1.0
    hs = [y, y]
    hs[0] *= x
    return np.sum(hs[1] * x)


def display_items_written_in_a_loop(x):
    y = x * 1.0
    hs = [y, y]
    for p in hs:
        p -= x
    return np.sum(y * x)


def repeat_items_written_in_a_loop(x):
    hs = [x * 1.0] * 2
    for p in hs:
        p -= x * x
    return np.sum(hs[0] * x)


def two_arrays_one_written(x):
    # (the control: distinct arrays, only the slot written changes)
    y = x * 1.0
    hs = [y, x * 2.0, y]
    hs[1] += 1.0
    return np.sum(hs[0] * hs[1]) + np.sum(hs[2])


def loop_over_a_repeat_written_by_index(x, T=3):
    hs = [x * 0.5] * T
    for t in range(T):
        hs[t] += x * t
    return np.sum(hs[0] * x)


@pytest.mark.parametrize("fn", [repeat_item_written_in_place, repeat_item_element_written,
                                constant_repeat_item_written, display_item_written,
                                display_item_multiplied, display_items_written_in_a_loop,
                                repeat_items_written_in_a_loop, two_arrays_one_written,
                                loop_over_a_repeat_written_by_index])
def test_one_array_in_several_slots(fn):
    _check(fn, np.array([0.3, -0.7, 1.1, 0.5]))
