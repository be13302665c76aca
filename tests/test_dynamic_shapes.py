"""Shapes the specialisation key does not fix (issue 21: a transformed function means, at every
call, what calling the function then means).

Source mode specialises its code on what the first call's probe saw, keyed by the arguments'
shapes and dtypes: an intermediate's shape folded into the backward as a constant
(`np.reshape(g, (2, 2))`). Where that shape comes from something else -- an integer read from
an object's attribute at run time (`x.reshape(self.n, -1)` in a method, the attribute changed
between calls), from the array's values (`n = int(np.sum(mask))`), a mask index (`x[x > 0]`),
`np.nonzero` -- the second call ran code built for the first: a crash ("cannot reshape array
of size 6 into shape (2,2)") or, where the sizes agreed, a silently wrong gradient (the
probe's heads example: `[0, 4, 2, 6]` for `[0, 2, 4, 6]`). The probe now finds those names
(probe._dynamic_shapes) and the code reads their shapes when it runs.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error


class Heads:
    n = 2

    def merge(self, x):
        q = x.reshape(self.n, -1).T
        return (2.0 * q).reshape(x.shape)


H = Heads()


def heads_loss(x):
    return np.sum(H.merge(x) * np.arange(4.0))


def count_from_values(x):
    n = int(np.sum(x > 0)) // 2
    q = (2.0 * x[:n * 2]).reshape(n, 2)
    return np.sum(q.T.reshape(-1) * np.arange(2.0 * n))


def masked_then_reshaped(x):
    p = x[x > 0]
    q = np.concatenate([p, p * 2]).reshape(2, -1)
    return np.sum(q.T.reshape(-1) * np.arange(q.size))


def nonzero_then_outer(x):
    idx = np.nonzero(x > 0)[0]
    p = x[idx]
    return np.sum(np.outer(p, p).reshape(-1) * np.arange(p.size ** 2))


def while_count_then_zeros(x):
    k = 0
    s = np.sum(x * x)
    while s > 0.5 and k < 5:
        s = s * 0.5
        k += 1
    pad = np.zeros(k + 1)
    return np.sum(np.concatenate([x, pad]) ** 2 * np.arange(x.size + k + 1.0))


def _check(fn, x):
    for mode in ("source", "tape"):
        g = srcad.value_and_grad(fn, mode=mode)
        v, d = g(x.copy())
        assert np.isclose(v, fn(x.copy()))
        assert rel_error(d, numerical_grad(fn, (x.copy(),))) < 1e-6, mode


@pytest.mark.parametrize("fn, xs", [
    (count_from_values, [[1.0, 2.0, -3.0, 4.0, 0.5, 0.5], [1.0, 2.0, 3.0, 4.0, 0.5, 0.5],
                         [1.0, -2.0, -3.0, 4.0, 0.5, -0.5]]),
    (masked_then_reshaped, [[1.0, 2.0, -3.0, 4.0], [1.0, -2.0, -3.0, 4.0],
                            [1.0, 2.0, 3.0, 4.0]]),
    (nonzero_then_outer, [[1.0, 2.0, -3.0, 4.0], [1.0, -2.0, -3.0, 4.0],
                          [1.0, 2.0, 3.0, 4.0]]),
    (while_count_then_zeros, [[0.1, 0.2, 0.1], [1.0, 2.0, 0.5], [0.6, 0.1, 0.2]]),
])
def test_a_shape_from_values_is_read_at_each_call(fn, xs):
    for mode in ("source", "tape"):
        g = srcad.value_and_grad(fn, mode=mode)
        for x in xs:  # (one transformed function, called on each in turn)
            x = np.array(x)
            v, d = g(x.copy())
            assert np.isclose(v, fn(x.copy())), (mode, x)
            assert rel_error(d, numerical_grad(fn, (x.copy(),))) < 1e-6, (mode, x)


def test_a_shape_from_an_attribute_read_in_a_method():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    for mode in ("source", "tape"):
        g = srcad.value_and_grad(heads_loss, mode=mode)
        try:
            Heads.n = 2
            assert np.allclose(g(x)[1], [0.0, 4.0, 2.0, 6.0])
            Heads.n = 1  # (the class attribute: the method reads it when it runs)
            v, d = g(x)
            assert v == heads_loss(x) and np.allclose(d, [0.0, 2.0, 4.0, 6.0]), (mode, d)
            H.n = 4  # (an attribute of the instance now)
            v, d = g(x)
            assert v == heads_loss(x) and np.allclose(d, [0.0, 2.0, 4.0, 6.0]), (mode, d)
        finally:
            Heads.n = 2
            H.__dict__.pop("n", None)


def test_shapes_the_key_fixes_stay_constants():
    # (the probe's Infos are dropped for dynamic shapes only: a plain function keeps its
    # constants -- no `np.shape(..)` read back where the arguments say the shape)
    def f(x):
        q = (2.0 * x).reshape(2, 2).T
        return np.sum(q.reshape(-1) * np.arange(4.0))

    g = srcad.grad(f)
    g(np.arange(4.0))
    assert "(2, 2)" in srcad.source(g)
