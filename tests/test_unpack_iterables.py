"""`w, = net.params.values()` -- unpacking an iterable that cannot be read by index (a dict's
values, a set, a generator): Python unpacks any iterable; srcad's code read the items by index
and failed with "TypeError: 'dict_values' object is not subscriptable", blamed on the user's
code (session of 2026-12-06, fifth). runtime.unpacked now takes such a value's items as a
tuple. (Left: a nested target, `(name, w), = P.items()`, still fails that way.)"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(0)
P = {"W1": RNG.standard_normal((4, 5))}
X = RNG.standard_normal((6, 4))


def by_its_values(W, X):
    w, = P.values()
    return np.sum(np.tanh(X @ (w + W)))


def by_a_generator(W, X):
    a, b = (W * k for k in (1.0, 2.0))
    return np.sum(np.tanh(X @ a)) + np.sum(b ** 2)


@pytest.mark.parametrize("f", [by_its_values, by_a_generator], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_unpacking_a_dicts_view(f, mode):
    W = RNG.standard_normal((4, 5))
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    value, g = srcad.value_and_grad(f, **options)(W, X)
    assert value == pytest.approx(f(W, X), rel=1e-12)
    fd = numerical_grad(f, (W, X))
    for idx in ((0, 1), (3, 4)):
        assert g[idx] == pytest.approx(fd[idx], rel=1e-5, abs=1e-7)
