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


# -- `out=` of numpy functions that are not ufuncs (refused in both modes until 2026-12-05:
# only ufuncs and np.clip were written as the store numpy makes, `out[...] = f(...)`) --------

def cumsum_into(a, b):
    c = np.zeros_like(a)
    np.cumsum(a * b, out=c)
    return np.sum(c ** 2)


def dot_into(A, B):
    o = np.empty((2, 2))
    np.dot(A, B, out=o)
    return np.sum(np.tanh(o))


def mean_into_and_returned(a, b):
    m = np.zeros(())
    r = np.mean(a * b, out=m)
    return r * 2.0 + np.sum(m)


def einsum_into(A, B):
    o = np.zeros((2, 2))
    np.einsum("ij,jk->ik", A, B, out=o)
    return np.sum(o * o)


def sum_into_a_row(a, b):
    s = np.zeros((2, 3))
    np.sum(np.stack([a, b]), axis=0, out=s[1])
    return np.sum(s ** 3)


_R = np.random.default_rng(23)
OUT_CASES = [(cumsum_into, (_R.standard_normal(3), _R.standard_normal(3))),
             (dot_into, (_R.standard_normal((2, 3)), _R.standard_normal((3, 2)))),
             (mean_into_and_returned, (_R.standard_normal(3), _R.standard_normal(3))),
             (einsum_into, (_R.standard_normal((2, 3)), _R.standard_normal((3, 2)))),
             (sum_into_a_row, (_R.standard_normal(3), _R.standard_normal(3)))]


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn, args", OUT_CASES, ids=[f.__name__ for f, _ in OUT_CASES])
def test_out_keyword_of_numpy_functions(fn, args, mode):
    want = numerical_grad(fn, args, wrt=(0, 1))
    value, got = srcad.value_and_grad(fn, wrt=(0, 1), mode=mode)(*args)
    assert value == pytest.approx(fn(*[a.copy() for a in args]), rel=1e-12)
    for g, w in zip(got, want):
        assert rel_error(g, w) < 1e-6
