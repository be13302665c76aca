"""Objectives written for scipy.optimize.minimize, differentiated for its `jac=`: parameters
packed in one flat vector and unpacked by slicing, `np.split`, tuple unpacking or a helper
that rebuilds the arrays (`W1, b1, W2 = unpack(theta, shapes)`: a list the helper appends
to -- refused before as 'unpacking the result of a function that does not return a tuple').
Each is checked against central differences in source mode, tape mode and fused, and
`minimize(f, x0, jac=srcad.grad(f))` reaches what it reaches with finite differences.
Unpacking a value of the wrong length raises Python's own error, at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

optimize = pytest.importorskip("scipy.optimize")
special = pytest.importorskip("scipy.special")

MODES = [{}, {"mode": "tape"}, {"fuse": True}]


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def logistic_regression(theta, X, y, lam=0.1):
    w, b = theta[:-1], theta[-1]
    p = special.expit(X @ w + b)
    return -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)) + lam * w.dot(w)


def unpack(theta, shapes):
    out, i = [], 0
    for s in shapes:
        n = int(np.prod(s))
        out.append(theta[i:i + n].reshape(s))
        i += n
    return out


def unpack_dict(theta, shapes):
    params, i = {}, 0
    for name, s in shapes.items():
        n = int(np.prod(s))
        params[name] = theta[i:i + n].reshape(s)
        i += n
    return params


def mlp_flat(theta, X, y):
    W1, b1, W2 = unpack(theta, [(3, 4), (4,), (4,)])
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ W2 - y) ** 2)


def mlp_flat_dict(theta, X, y):
    p = unpack_dict(theta, {"W1": (3, 4), "b1": (4,), "W2": (4,)})
    return np.mean((np.tanh(X @ p["W1"] + p["b1"]) @ p["W2"] - y) ** 2)


def gp_negative_log_likelihood(log_params, X, y):
    ell, sf, sn = np.exp(log_params)
    d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = sf ** 2 * np.exp(-0.5 * d2 / ell ** 2) + (sn ** 2 + 1e-8) * np.eye(len(X))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * len(X) * np.log(2 * np.pi)


def split_parameters(theta, X, y):
    a, b = np.split(theta, [3])
    return np.sum((X @ a - y) ** 2) + np.sum(b ** 2) * np.linalg.norm(a)


def two_numbers(x):
    a, b = x
    return (a - 1) ** 2 + 10 * (b - a ** 2) ** 2


def exponential_fit(params, t, observed):
    A, k, c = params
    return np.sum((A * np.exp(-k * t) + c - observed) ** 2)


_R = np.random.default_rng(0)
X = _R.normal(size=(20, 3))
Y01 = (_R.uniform(size=20) > 0.5).astype(float)
Y = _R.normal(size=20)
T = np.linspace(0, 3, 15)
OBSERVED = 2 * np.exp(-1.3 * T) + 0.5 + 0.01 * _R.normal(size=15)

CASES = [(rosenbrock, (_R.normal(size=5),)),
         (logistic_regression, (_R.normal(size=4), X, Y01)),
         (mlp_flat, (_R.normal(size=20) * 0.5, X, Y)),
         (mlp_flat_dict, (_R.normal(size=20) * 0.5, X, Y)),
         (gp_negative_log_likelihood, (np.array([0.1, 0.2, -1.0]), X, Y)),
         (split_parameters, (_R.normal(size=5), X, Y)),
         (two_numbers, (np.array([0.3, 0.7]),)),
         (exponential_fit, (np.array([1.0, 1.0, 0.0]), T, OBSERVED))]


@pytest.mark.parametrize("opts", MODES, ids=["source", "tape", "fused"])
@pytest.mark.parametrize("fn, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_objective_gradient(fn, args, opts):
    value, g = srcad.value_and_grad(fn, **opts)(*args)
    assert value == fn(*args)
    assert rel_error(g, numerical_grad(fn, args)) < 1e-6


@pytest.mark.parametrize("fn, args", CASES[1:], ids=[f.__name__ for f, _ in CASES[1:]])
def test_minimize_with_the_gradient(fn, args):
    """BFGS with srcad's gradient ends where BFGS with finite differences ends, or lower."""
    mine = optimize.minimize(fn, args[0], args=args[1:], jac=srcad.grad(fn), method="BFGS")
    fd = optimize.minimize(fn, args[0], args=args[1:], method="BFGS")
    assert mine.fun <= fd.fun + 1e-6 * max(1.0, abs(fd.fun))
    assert np.linalg.norm(srcad.grad(fn)(mine.x, *args[1:])) < 1e-4


def _pairs(x):
    out = []
    for i in range(2):
        out.append(x[i] * x)
    return out


def _rows(x):
    return np.stack([x * 2, x ** 2])


def _unpack_three(x):
    a, b, c = _pairs(x)
    return np.sum(a * b + c)


def _unpack_one_too_few(x):
    (a,) = _pairs(x)
    return np.sum(a)


def _unpack_a_number(x):
    a, b = np.sum(_rows(x))
    return a + b


def _unpack_rows(x):
    a, b = _rows(x)
    return np.sum(a * b)


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn, error, message", [
    (_unpack_three, ValueError, "not enough values to unpack"),
    (_unpack_one_too_few, ValueError, "too many values to unpack"),
    (_unpack_a_number, TypeError, "cannot unpack non-iterable|has no len"),
], ids=["too few", "too many", "a number"])
def test_unpacking_the_wrong_length_is_pythons_error(fn, error, message, mode):
    x = np.array([0.5, 1.5, -0.3])
    with pytest.raises(error):
        fn(x)
    with pytest.raises((error, srcad.SrcadError), match=message):
        srcad.grad(fn, mode=mode)(x)


@pytest.mark.parametrize("opts", MODES, ids=["source", "tape", "fused"])
def test_unpacking_an_array_a_helper_returns(opts):
    x = np.array([0.5, 1.5, -0.3])
    assert rel_error(srcad.grad(_unpack_rows, **opts)(x), numerical_grad(_unpack_rows, (x,))) \
        < 1e-7
