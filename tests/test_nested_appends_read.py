"""A list a nested function grows (``hist.append(h)`` in ``def step``), read by the enclosing
function in a comprehension or a test (session of 2026-12-07, eleventh): ``sum(np.sum(h) for h
in hist)``, ``if hist:``, ``while len(hist) < 3``, ``assert hist`` were refused as "a second
name" for the list; none makes one. A real second name (``other = hist if c else []``) is
still refused: srcad carries the list as a value, which that name would not follow."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

X = np.array([0.3, -0.7, 1.1, 0.45])


def read_in_a_generator(x):
    hist = []

    def step(v):
        hist.append(np.tanh(v))
        return hist[-1]

    step(x)
    step(x * 2)
    return sum(np.sum(h) for h in hist)


def read_in_tests(x):
    hist = []

    def step(v):
        hist.append(np.tanh(v))

    step(x)
    if hist:
        step(x * 2)
    while len(hist) < 3:
        step(np.sin(x) * 3)
    assert hist, "empty"
    return sum(np.sum(h ** 2) for h in hist if h is not None) + \
        (np.sum(hist[0]) if hist else 0.0)


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
@pytest.mark.parametrize("fn", [read_in_a_generator, read_in_tests], ids=lambda f: f.__name__)
def test_a_grown_list_read_without_a_second_name(fn, mode):
    opts = {"fuse": True} if mode == "fuse" else {"mode": mode}
    value, g = srcad.value_and_grad(fn, **opts)(X.copy())
    assert value == pytest.approx(fn(X.copy()), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (X.copy(),), h=1e-6), rtol=1e-6,
                               atol=1e-8)


def second_name(x):
    hist = []

    def step(v):
        hist.append(np.tanh(v))

    other = hist if x[0] > -100 else []
    step(x)
    return np.sum(other[0])


def test_a_second_name_is_still_refused():
    with pytest.raises(srcad.SrcadError, match="has a second name for it"):
        srcad.grad(second_name)(X.copy())
