"""A list's or dict's own changing method on the container the function is given, its
result kept (session of 2026-12-07, eleventh): ``del c[0]`` (lowered to ``c.pop(0)``), ``v =
c.pop(0)``, ``del c["a"]``, ``w = c.setdefault("w", ...)``. srcad's first call runs the
function once more to learn shapes (the probe), and the probe ran the method on the caller's
own list too: the real call then popped a second item -- a wrong value, silently (`del c[0];
np.sum(x * c[0])` read c[2]), and a KeyError for ``del c["a"]``. The probe now changes its
own copy. ``c.sort()`` of a list argument was taken for numpy's in-place sort (``c[...] =
np.sort(c)``: a TypeError blamed on the user's code); it is the list's own method. And where
the function works on its own copy of the argument (a store into it came first), such a
method changed only that copy: the caller's dict or list was left without the new entry
(`sync_into` now makes it hold what the copy holds, once per call)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

X = np.array([0.3, -0.7, 1.1])


def deleted_then_read(x, c):
    del c[0]
    return np.sum(x * c[0]) + len(c)


def popped_then_read(x, c):
    v = c.pop(0)
    return np.sum(np.sin(x * v) * c[0])


def key_deleted_then_read(x, c):
    del c["a"]
    return np.sum(x * c["b"]) + len(c)


def default_set_then_read(x, c):
    w = c.setdefault("w", 2.0)
    return np.sum(np.tanh(x * w)) + len(c)


def sorted_then_read(x, c):
    c.sort()
    return np.sum(x * c[0]) + c[-1]


def stored_then_defaulted(x, c):
    # (a store first: the function works on its own copy of c, which the method changed --
    # the caller's dict did not get "vals" until the same session's sync effect)
    c["n"] = c.get("n", 0) + 1
    c.setdefault("vals", []).append(float(np.sum(x)))
    return np.sum(x ** 2) * len(c["vals"])


def stored_then_appended(x, c):
    c[0] = c[0] + 1.0
    c.append(2.5)
    return np.sum(x ** 2) * c[0] * c[-1] + len(c)


def stored_then_popped_in_a_loop(x, c):
    c[0] = c[0] * 2.0
    total = 0.0
    for _ in range(2):
        total = total + np.sum(np.sin(x * c.pop()))
    return total + c[0] * np.sum(x)


CASES = [(deleted_then_read, [1.0, 2.0, 3.0, 4.0]), (popped_then_read, [2.0, 0.5, 3.0]),
         (key_deleted_then_read, {"a": 1.0, "b": 2.0}), (default_set_then_read, {"v": 1.0}),
         (default_set_then_read, {"w": 0.5}), (sorted_then_read, [3.0, 1.0, 2.0]),
         (stored_then_defaulted, {}), (stored_then_defaulted, {"n": 3, "vals": [0.5]}),
         (stored_then_appended, [1.0]), (stored_then_popped_in_a_loop, [1.0, 5.0, 7.0, 0.5])]
MODES = {"source": {}, "fuse": {"fuse": True}, "tape": {"mode": "tape"}}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", range(len(CASES)),
                         ids=lambda i: f"{CASES[i][0].__name__}-{i}")
def test_the_method_runs_once_per_call(case, mode):
    fn, init = CASES[case]
    g = srcad.value_and_grad(fn, **MODES[mode])
    for _ in range(2):  # (the first call probes; the second runs the code as built)
        c, want_c = copy.deepcopy(init), copy.deepcopy(init)
        want = fn(X.copy(), want_c)
        value, grad = g(X.copy(), c)
        assert value == pytest.approx(want, rel=1e-12)
        assert c == want_c
        np.testing.assert_allclose(
            grad, numerical_grad(lambda x: fn(x, copy.deepcopy(init)), (X.copy(),), h=1e-6),
            rtol=1e-6, atol=1e-8)


def _counted_loss(x, c):
    c["n"] = c.get("n", 0) + 1
    c.setdefault("vals", []).append(2.0)
    return np.sum(np.sin(x) ** 2) * len(c["vals"])


def _sum_of_inner_gradient(x, c):
    return np.sum(srcad.grad(_counted_loss)(x, c))


def test_a_transform_inside_changes_the_callers_dict_once():
    """`srcad.grad(f)(x, c)` inside a differentiated function: the shape probe ran the inner
    transform's code on the caller's dict too, so the call stored twice (`c["n"]` 2) -- and
    once the method reached the caller, the second run read two entries and the gradient
    doubled. The probe gives the inner transform its own copies now."""
    c = {}
    got = srcad.grad(_sum_of_inner_gradient)(X.copy(), c)
    np.testing.assert_allclose(got, 2 * np.cos(2 * X), rtol=1e-10)  # (d/dx sum(sin 2x))
    assert c == {"n": 1, "vals": [2.0]}
    c = {}
    out, tangent = srcad.jvp(srcad.grad(_counted_loss), (X.copy(), c), (np.ones(3), {}))
    np.testing.assert_allclose(out, np.sin(2 * X), rtol=1e-12)
    np.testing.assert_allclose(tangent, 2 * np.cos(2 * X), rtol=1e-10)
    assert c == {"n": 1, "vals": [2.0]}
