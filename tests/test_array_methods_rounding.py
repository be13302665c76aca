"""ndarray methods with numpy rows but no method spelling (session of 2026-12-07):
`x.round(1)`, `x.all()`, `x.any(axis=1)`, `x.argsort()` were refused ("the method `.round()`
has no derivative rule in srcad") though `np.round(x, 1)`, `np.all(x)`, `np.any(x, axis=1)`
and `np.argsort(x)` ran: each is now its function's row (frontend/methods.py) -- a zero
derivative for the rounding, none for the tests and the order."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

A = np.array([[0.33, -1.27, 0.81, 2.06], [1.14, -0.42, 0.07, -0.93], [0.52, 1.71, -2.2, 0.3]])


def rounded(x):
    return np.sum(x.round(1) * x) + np.sum(x.round() ** 2)


def any_and_all(x):
    rows = x.any(axis=1)
    return np.sum(x[rows] ** 2) + float((x > -5.0).all()) * np.sum(x) + float(x.all())


def ordered(x):
    idx = x[0].argsort()
    return np.sum(x[:, idx] * np.arange(4.0)) + np.sum(x.argsort(axis=1) * x)


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
@pytest.mark.parametrize("fn", [rounded, any_and_all, ordered], ids=lambda f: f.__name__)
def test_methods_as_their_functions(fn, mode):
    opts = {"fuse": True} if mode == "fuse" else {"mode": mode}
    value, g = srcad.value_and_grad(fn, **opts)(A.copy())
    assert value == pytest.approx(fn(A.copy()), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (A.copy(),), h=1e-7), rtol=1e-6,
                               atol=1e-8)
