"""Python-level functions applied to arrays (issue 23's probe list): map, functools.reduce,
sorted, math.fsum, statistics.*, copy.copy/deepcopy, the operators' dunder methods,
x.tolist(), x.flat, float(x), zip(*pairs). Each is checked, reverse (grad) and forward (jvp),
in source mode (plain and fuse=True) and tape mode, against central differences; torch where
it has the op; second order for a few (source). The value is checked against plain Python.
"""

import copy
import functools
import math
import operator
import statistics

import numpy as np
import pytest
import torch

import srcad
from srcad.testing import numerical_grad

X = np.array([0.3, -0.5, 0.8, 1.1, -0.2])
T = np.array([0.7, -0.1, 0.4, 0.2, -0.9])  # (a tangent)


def f_map_ufunc(x):
    return np.sum(np.array(list(map(np.tanh, x))))


def f_map_lambda(x):
    w = x[0]
    return sum(map(lambda v: v * w + np.sin(v), x))


def f_map_two(x):
    return sum(map(operator.mul, x, x[::-1]))


def square(v):
    return v * v


def f_map_user(x):
    return np.sum(np.stack(list(map(square, [x, 2.0 * x]))))


def f_reduce_ufunc(x):
    return functools.reduce(np.multiply, [x, x + 1.0, x]).sum()


def f_reduce_loop(x):
    return functools.reduce(lambda a, b: a * b + 1.0, x)


def f_reduce_init(x):
    return functools.reduce(operator.add, x * x, 2.0)


def f_sorted(x):
    return sum(sorted(x)[1:]) + sorted(x)[0] * 3.0


def f_sorted_key(x):
    s = sorted(x, key=lambda v: v * v, reverse=True)
    return s[0] * 3.0 + s[1] * s[4]


def f_sorted_list(x):
    return sorted([x[0] * 2, x[1], x[2] * x[3]])[1]


def f_fsum(x):
    return math.fsum(x * x)


def f_mean(x):
    return statistics.mean(x * x) + statistics.fmean([x[0], x[1] * x[2]])


def f_median_odd(x):
    return statistics.median(x * x)


def f_median_even(x):
    return statistics.median(x[:4] * x[1:])


def f_variance(x):
    return statistics.variance(x) + statistics.pvariance(np.sin(x))


def f_stdev(x):
    return statistics.stdev(x) * statistics.pstdev([x[0], x[1], x[2] * 2.0])


def f_deepcopy(x):
    y = copy.deepcopy(x)
    return np.sum(y * x)


def f_copy_list(x):
    ys = copy.copy([x, x * 2.0])
    return np.sum(ys[0] * ys[1])


def f_deepcopy_list(x):
    ys = copy.deepcopy([x, x * 2.0])
    ys[0][1] = 5.0
    return np.sum(ys[0] * ys[1] * x)


def f_dunder(x):
    y = x.__mul__(x).__add__(x).__rsub__(2.0).__truediv__(x[0]).__neg__().__pow__(2.0)
    return np.sum(y) + x.__getitem__(1) + x.__radd__(1.0).__rmul__(3.0)[2] + x.__matmul__(x)


def f_tolist(x):
    return sum(v * v for v in x.tolist())


def f_tolist_2d(x):
    rows = x[:4].reshape(2, 2).tolist()
    return rows[0][1] * rows[1][0] + x[0:1].tolist()[0]


def f_tolist_5d(x):
    deep = (x[:4] * x[1:]).reshape(1, 2, 1, 2, 1).tolist()
    return deep[0][1][0][0][0] * deep[0][0][0][1][0] + len(deep[0])


def f_flat(x):
    return sum(v for v in (x * x).flat) + x[:4].reshape(2, 2).flat[3] * x[0]


def f_float(x):
    return float(np.sum(x)) * 2.0 + np.sum(x) * float(x[1])


def f_zip_star(x):
    pairs = [(x[0], x[1]), (x[2], x[3])]
    a, b = zip(*pairs)
    return a[0] * b[1] + a[1]


def f_zip_star_list(x):
    pairs = [(x[i], x[i] * 2.0) for i in range(4)]
    a, b = zip(*pairs)
    return a[0] * b[1] + a[3]


CASES = [f_map_ufunc, f_map_lambda, f_map_two, f_map_user, f_reduce_ufunc, f_reduce_loop,
         f_reduce_init, f_sorted, f_sorted_key, f_sorted_list, f_fsum, f_mean, f_median_odd,
         f_median_even, f_variance, f_stdev, f_deepcopy, f_copy_list, f_deepcopy_list,
         f_dunder, f_tolist, f_tolist_2d, f_tolist_5d, f_flat, f_float, f_zip_star, f_zip_star_list]
MODES = [{"mode": "source"}, pytest.param({"mode": "source", "fuse": True},
                                          marks=pytest.mark.slow), {"mode": "tape"}]
MODE_IDS = ["source", "fused", "tape"]


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_grad(f, opts):
    value, g = srcad.value_and_grad(f, **opts)(X.copy())
    assert value == f(X.copy())  # the value calling f gives, to the last bit
    num = numerical_grad(f, (X.copy(),), wrt=0)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-7)
    assert np.any(g != 0)


@pytest.mark.parametrize("opts", MODES[:2], ids=MODE_IDS[:2])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jvp(f, opts):
    out, tangent = srcad.jvp(f, (X.copy(),), (T.copy(),), **opts)
    assert out == f(X.copy())
    eps = 1e-6
    num = (f(X + eps * T) - f(X - eps * T)) / (2 * eps)
    np.testing.assert_allclose(tangent, num, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_tape_agrees_with_source_bit_for_bit(f):
    gs = srcad.grad(f, mode="source")(X.copy())
    gt = srcad.grad(f, mode="tape")(X.copy())
    np.testing.assert_array_equal(gs, gt)


@pytest.mark.parametrize("f", [f_map_lambda, f_reduce_loop, f_sorted_key, f_median_even,
                               f_stdev, f_dunder, pytest.param(f_tolist_2d,
                                                               marks=pytest.mark.slow), f_float],
                         ids=lambda f: f.__name__)
def test_second_order(f):
    h = srcad.hessian(f)(X.copy())
    g = srcad.grad(f)
    eps = 1e-5
    cols = [(g(X + eps * e) - g(X - eps * e)) / (2 * eps) for e in np.eye(X.size)]
    np.testing.assert_allclose(h, np.stack(cols, axis=1), rtol=1e-5, atol=1e-6)


# --- torch, where it has the op -------------------------------------------------------------
TORCH = {
    f_map_ufunc: lambda t: torch.tanh(t).sum(),
    f_reduce_ufunc: lambda t: (t * (t + 1.0) * t).sum(),
    f_sorted: lambda t: torch.sort(t).values[1:].sum() + torch.sort(t).values[0] * 3.0,
    f_fsum: lambda t: (t * t).sum(),
    f_median_odd: lambda t: torch.quantile(t * t, 0.5),
    f_median_even: lambda t: torch.quantile(t[:4] * t[1:], 0.5),
    f_variance: lambda t: torch.var(t) + torch.var(torch.sin(t), unbiased=False),
    f_dunder: lambda t: (-((2.0 - (t * t + t)) / t[0])).pow(2.0).sum() + t[1]
    + ((t + 1.0) * 3.0)[2] + t @ t,
}


@pytest.mark.parametrize("f", list(TORCH), ids=lambda f: f.__name__)
def test_torch_agrees(f):
    t = torch.tensor(X, requires_grad=True)
    TORCH[f](t).backward()
    np.testing.assert_allclose(srcad.grad(f)(X.copy()), t.grad.numpy(), rtol=1e-10,
                               atol=1e-12)


# --- what is refused, and what is kept as written ----------------------------------------------
def held_map(x):
    m = map(np.tanh, x)
    return sum(m)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_refusals(mode):
    with pytest.raises(srcad.SrcadError):
        srcad.grad(held_map, mode=mode)(X.copy())
    # (`y.flat[1] = 3.0`, refused here before, is a store into y: tests/test_probe10_forms.py)


def undifferentiated_uses(x, n):
    shapes = list(map(int, [n, n + 1.0]))
    return np.sum(x) * shapes[1] * float(n) + statistics.mean([n, 2.0 * n])


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_nothing_differentiated_runs_as_written(mode):
    g = srcad.grad(undifferentiated_uses, mode=mode)(X.copy(), 2.0)
    np.testing.assert_allclose(g, np.full(5, 3 * 2.0))


# --- method forms of rows (frontend/methods.py; tape_tensor.py) ------------------------------
def m_conj(x):
    return np.sum(x.conj() * x.conjugate() * x.real) + np.sum(x.imag)


def m_choose(x):
    idx = np.array([0, 1, 0, 1, 1])
    return np.sum(idx.choose([x * x, np.sin(x)]))


def m_ptp_as_function(x):  # (ndarray.ptp is gone in numpy 2; np.ptp is its row)
    return np.ptp(x * x) * 2.0


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("f", [m_conj, m_choose, m_ptp_as_function], ids=lambda f: f.__name__)
def test_method_forms(f, mode):
    value, g = srcad.value_and_grad(f, mode=mode)(X.copy())
    assert value == f(X.copy())
    np.testing.assert_allclose(g, numerical_grad(f, (X.copy(),), wrt=0), rtol=1e-6, atol=1e-7)
    assert np.any(g != 0)
