"""Soundness as a rule (issue 21): a value the gradient needs reaches a library object only
through an op with a derivative rule, or srcad refuses, at the user's line.

Before this issue, ``np.r_[x, 2 * x]`` and ``np.c_[x, x]`` gave ZERO gradients in grad, vjp
and jvp: the subscript of a library object ran as an inactive expression although it read
a differentiated value; ``np.full(3, x[0])`` / ``np.full_like(x, s)`` dropped the fill
value's gradient in both modes; ``np.arange(x[0], ...)`` and ``np.s_[x]`` dropped theirs in
source mode. Each case here is checked against central differences (and torch where torch
has the op) in every transform: grad, value_and_grad, vjp, jvp, mode="tape", fuse=True and
a second derivative; the refusals are checked to name the user's file and line.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch

import srcad
from srcad.testing import numerical_grad

X = np.array([0.3, -0.7, 1.1])
A = np.array([[0.5, -1.2], [0.8, 0.1], [-0.4, 0.9]])
W3 = np.array([0.7, -0.2, 1.3, 0.4, -0.9, 0.25])  # weights for a 6-element output
W32 = np.array([[0.7, -0.2], [1.3, 0.4], [-0.9, 0.25]])


# -- differentiable: np.r_ / np.c_ / np.full / np.full_like ------------------------------


def r_two(x):
    return np.sum(np.r_[x, 2 * x] * W3)


def r_slice(x):
    return np.sum(np.r_[0:3, x] * W3) * x[0]


def r_scalar(x):
    return np.sum(np.r_[x[0], x, 1.5] ** 2)


def r_single(x):
    return np.sum(np.r_[x] ** 3)


def r_matrix(x):
    a = np.reshape(x, (3, 1))
    return np.sum(np.r_[a, np.tanh(a)] * 1.5)


def r_axis(x):
    a = np.reshape(x, (1, 3))
    return np.sum(np.r_["1", a, a * a] ** 2)


def r_list(x):
    return np.sum(np.r_[[1.0, 2.0], x, 3] * np.arange(6.0))


def c_two(x):
    return np.sum(np.c_[x, x * 2] * W32)


def c_matrix(x):
    m = np.reshape(np.r_[x, x], (3, 2))
    return np.sum(np.c_[m, np.sin(x)] ** 2)


def full_scalar(x):
    return np.sum(np.full(3, x[0]) * x)


def full_like_scalar(x):
    return np.sum(np.full_like(x, x[1]) * x)


def full_row(x):
    return np.sum(np.full((2, 3), x) * W32.T)


DIFFERENTIABLE = [r_two, r_slice, r_scalar, r_single, r_matrix, r_axis, r_list, c_two,
                  c_matrix, full_scalar, full_like_scalar, full_row]


def _fd(fn, x=X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return numerical_grad(fn, (x,), h=1e-6)


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", DIFFERENTIABLE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_grad_matches_differences(fn, mode):
    want = _fd(fn)
    assert np.max(np.abs(want)) > 0.1  # (the gradient is not zero: a zero would be a bug)
    _close(srcad.grad(fn, mode=mode)(X), want)
    value, g = srcad.value_and_grad(fn, mode=mode)(X)
    _close(value, fn(X))
    _close(g, want)


@pytest.mark.parametrize("fn", DIFFERENTIABLE, ids=lambda f: f.__name__)
def test_fused_matches_differences(fn):
    _close(srcad.grad(fn, fuse=True)(X), _fd(fn))


@pytest.mark.parametrize("fn", DIFFERENTIABLE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_vjp(fn, mode):
    out, pullback = srcad.vjp(fn, X, mode=mode)
    _close(out, fn(X))
    (g,) = pullback(1.0)
    _close(g, _fd(fn))


@pytest.mark.parametrize("fn", DIFFERENTIABLE, ids=lambda f: f.__name__)
def test_jvp(fn):
    v = np.array([0.4, 1.0, -0.6])
    out, dot = srcad.jvp(fn, (X,), (v,))
    _close(out, fn(X))
    _close(dot, np.dot(_fd(fn), v))


@pytest.mark.parametrize("fn", [r_two, r_scalar, r_matrix, c_two, c_matrix, full_like_scalar],
                         ids=lambda f: f.__name__)
def test_second_order(fn):
    """The Hessian (reverse over reverse) against differences of the gradient."""
    H = srcad.hessian(fn)(X)
    g = srcad.grad(fn)
    h = 1e-5
    want = np.stack([(g(X + h * e) - g(X - h * e)) / (2 * h) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(H, want, rtol=1e-5, atol=1e-6)


def test_vector_outputs_vjp_jvp():
    """np.r_ of a vector output: the pullback of a cotangent, and forward mode."""
    def f(x):  # (defined in this file: srcad reads its source)
        return np.r_[x, np.sin(x)]

    ct = np.arange(6.0) - 2.5
    out, pullback = srcad.vjp(f, X)
    _close(out, f(X))
    _close(pullback(ct)[0], ct[:3] + ct[3:] * np.cos(X))
    v = np.array([1.0, 0.5, -2.0])
    _, dot = srcad.jvp(f, (X,), (v,))
    _close(dot, np.r_[v, np.cos(X) * v])


# -- torch where torch has the op ------------------------------------------------------


def _torch_grad(fn_torch):
    t = torch.tensor(X, requires_grad=True)
    fn_torch(t).backward()
    return t.grad.numpy()


TORCH = [
    (r_two, lambda t: torch.sum(torch.cat([t, 2 * t]) * torch.tensor(W3))),
    (c_two, lambda t: torch.sum(torch.column_stack([t, t * 2]) * torch.tensor(W32))),
    (full_scalar, lambda t: torch.sum(torch.full((3,), 1.0, dtype=t.dtype) * t[0] * t)),
    (full_row, lambda t: torch.sum(t.expand(2, 3) * torch.tensor(W32.T))),
]


@pytest.mark.parametrize("fn,twin", TORCH, ids=lambda f: getattr(f, "__name__", ""))
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_torch_agrees(fn, twin, mode):
    _close(srcad.grad(fn, mode=mode)(X), _torch_grad(twin))


# -- dtype: np.r_'s own result ---------------------------------------------------------


def test_values_and_dtypes_are_numpys():
    for fn in DIFFERENTIABLE:
        for mode in ("source", "tape"):
            value, _ = srcad.value_and_grad(fn, mode=mode)(X)
            assert np.asarray(value).dtype == np.asarray(fn(X)).dtype
            _close(value, fn(X))


# -- refused: the gradient would be wrong ----------------------------------------------


class Table:
    """A user object with a subscript: srcad cannot see what `__getitem__` does."""

    def __getitem__(self, key):
        return key * 2.0


LUT = Table()


def r_directive(x):
    return np.sum(np.r_["0,2", x, x] ** 2)


def s_value(x):
    return np.sum(np.s_[x] * 2.0)


def index_exp_value(x):
    return np.sum(np.index_exp[x][0] * 2.0)


def user_subscript(x):
    return np.sum(LUT[x])


def arange_start(x):
    return np.sum(np.arange(x[0], x[0] + 3.0) * x)


def library_operator(x):
    return np.sum(np.r_ * x)


REFUSED = [(r_directive, "np.r_"), (s_value, "np.s_"), (index_exp_value, "np.index_exp"),
           (user_subscript, "LUT"), (arange_start, "np.arange")]


@pytest.mark.parametrize("fn,what", REFUSED, ids=lambda f: getattr(f, "__name__", ""))
@pytest.mark.parametrize("how", ["grad", "vjp", "jvp", "tape"])
def test_refused_at_the_users_line(fn, what, how):
    line = inspect.getsourcelines(fn)[1] + 1
    with pytest.raises(srcad.SrcadError) as info:
        if how == "grad":
            srcad.grad(fn)(X)
        elif how == "vjp":
            srcad.vjp(fn, X)[1](1.0)
        elif how == "jvp":
            srcad.jvp(fn, (X,), (np.ones(3),))
        else:
            srcad.grad(fn, mode="tape")(X)
    err = info.value
    if how != "tape" or "tape mode" not in str(err):
        assert err.lineno == line, str(err)
        assert err.filename == __file__
        assert what in str(err)
        assert err.hint


def test_library_operator_refused():
    with pytest.raises(srcad.SrcadError):
        srcad.grad(library_operator)(X)


# -- inactive: runs as written, as before ------------------------------------------------


def r_index(x):
    return np.sum(x[np.r_[0, 2]] ** 2)


def s_index(x):
    return np.sum(x[np.s_[0:2]] ** 2)


def r_constant(x):
    return np.sum(np.r_[0:3] * x) + np.sum(np.c_[np.ones(3), np.arange(3.0)] @ x[:2])


def r_of_int(x):
    n = x.shape[0]
    return np.sum(np.r_[0:n] * x)


def lut_of_int(x):
    return np.sum(LUT[3] * x)


@pytest.mark.parametrize("fn", [r_index, s_index, r_constant, r_of_int, lut_of_int],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_inactive_runs_as_written(fn, mode):
    _close(srcad.grad(fn, mode=mode)(X), _fd(fn))


def local_object_subscript(x):
    t = Table()
    return np.sum(np.sin(t[x]))


def test_local_object_subscript_follows_its_getitem():
    """A local holding a user object built in the function: its subscript calls
    Table.__getitem__, followed like any method (it was refused in source mode); tape mode
    runs it on the Tensor. Both get the true gradient."""
    for mode in ("source", "tape"):
        _close(srcad.grad(local_object_subscript, mode=mode)(X), _fd(local_object_subscript))
