"""A list's or dict's own changing method on the container the function is given, its
result kept (session of 2026-12-07, eleventh): ``del c[0]`` (lowered to ``c.pop(0)``), ``v =
c.pop(0)``, ``del c["a"]``, ``w = c.setdefault("w", ...)``. srcad's first call runs the
function once more to learn shapes (the probe), and the probe ran the method on the caller's
own list too: the real call then popped a second item -- a wrong value, silently (`del c[0];
np.sum(x * c[0])` read c[2]), and a KeyError for ``del c["a"]``. The probe now changes its
own copy. ``c.sort()`` of a list argument was taken for numpy's in-place sort (``c[...] =
np.sort(c)``: a TypeError blamed on the user's code); it is the list's own method."""

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


CASES = [(deleted_then_read, [1.0, 2.0, 3.0, 4.0]), (popped_then_read, [2.0, 0.5, 3.0]),
         (key_deleted_then_read, {"a": 1.0, "b": 2.0}), (default_set_then_read, {"v": 1.0}),
         (default_set_then_read, {"w": 0.5}), (sorted_then_read, [3.0, 1.0, 2.0])]
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
