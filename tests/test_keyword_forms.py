"""Keywords of everyday numpy calls that srcad refused (issue 23, session of 2026-12-04,
sixth): `np.sum(..., initial=)`, `np.prod(..., initial=)`, `np.concatenate(..., dtype=)`,
`np.stack(..., dtype=)`, `np.array(..., copy=, order=, ndmin=)`, the ufunc method
`np.logaddexp.accumulate` (a running log-sum-exp), and np.pad's modes that compute the border
(`mean`, `maximum`, `minimum`, `median` with `stat_length=`, `linear_ramp` with
`end_values=`). Each program's gradient is checked
against central differences in source mode, tape mode and forward mode (jvp along a random
tangent); the op table's own grids (tests/test_ops.py, tests/test_forward.py) check every
row's cases against finite differences and torch."""

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error


def sum_with_initial(x):
    return np.sum(np.tanh(x), initial=1.5) ** 2


def prod_with_initial(x):
    return np.prod(x * 0.5 + 1.0, axis=0, initial=-2.0).sum()


def concatenate_with_dtype(x):
    return np.sum(np.concatenate([x, np.sin(x)], axis=1, dtype=np.float64) ** 2)


def stack_with_dtype(x):
    return np.sum(np.stack([x, x * x], axis=-1, dtype=np.float64) ** 3)


def array_with_copy_order_ndmin(x):
    y = np.array(x.T, copy=True, order="F", ndmin=3)
    return np.sum(np.cos(y) * np.arange(y.size).reshape(y.shape))


def running_logsumexp(x):
    return np.sum(np.logaddexp.accumulate(x * 3.0, axis=1) * np.arange(1.0, 5.0))


def pad_computed_borders(x):
    y = np.pad(x, ((1, 2), (2, 1)), mode="mean", stat_length=2)
    z = np.pad(x, 2, mode="linear_ramp", end_values=0.5)
    w = np.pad(x, 1, mode="median") + np.pad(x, (1, 1), mode="minimum")
    return np.sum(np.sin(y)) + np.sum(z ** 2) + np.sum(np.cos(w))


PROGRAMS = [pad_computed_borders, sum_with_initial, prod_with_initial, concatenate_with_dtype,
            stack_with_dtype,
            array_with_copy_order_ndmin, running_logsumexp]


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_keyword_forms_grad(fn, mode):
    x = np.random.default_rng(3).standard_normal((3, 4))
    g = srcad.grad(fn, mode=mode)(x.copy())
    assert rel_error(g, numerical_grad(fn, [x.copy()])) < 1e-6


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_keyword_forms_jvp(fn):
    rng = np.random.default_rng(4)
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    value, tangent = srcad.jvp(fn, (x.copy(),), (t,))
    h = 1e-6
    want = (fn(x + h * t) - fn(x - h * t)) / (2 * h)
    assert value == fn(x.copy())
    assert abs(tangent - want) <= 1e-6 * max(1.0, abs(want))
