"""Hand-written checks of the rows added for issue 23's names that were refused: tuple outputs
(np.broadcast_arrays, np.meshgrid, np.unstack), np.block, np.insert, np.linalg.qr,
np.linalg.tensorsolve, np.linalg.cond with every p, the polynomial fits and divisions, and
Python's math.prod / math.dist and statistics functions.

Each function is checked whole (the rows inside a small loss), against central differences:
the gradient in source and tape mode, the JVP, and a second derivative (forward over
reverse: the JVP of the gradient). Where torch has the op, its gradient is compared too. The
op table's own grids (tests/test_ops.py, test_tape.py, test_forward.py,
test_ops_second_order.py) run each row's cases; these are the few end-to-end ones.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(23)


def _check(fn, args, wrt=None, second=True, tol=None):
    """First order in both modes and forward; second order as the JVP of the gradient."""
    wrt = tuple(range(len(args))) if wrt is None else wrt
    for mode in ("source", "tape"):
        check_grads(fn, args, wrt=wrt, mode=mode, tol=tol)
    tangents = tuple(RNG.standard_normal(np.shape(a)) if i in wrt else None
                     for i, a in enumerate(args))
    check_jvp(fn, args, tangents, tol=tol)
    if second:
        g = srcad.grad(fn, wrt=wrt[0])
        check_jvp(g, args, tangents, tol=tol or 1e-5)


def _torch_grads(fn, args):
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in args]
    fn(*ts).backward()
    return [t.grad.numpy() for t in ts]


# --- tuple outputs, block, insert --------------------------------------------------------------
def f_broadcast_arrays(a, b):
    x, y = np.broadcast_arrays(a, b)
    return np.sum(x * y ** 2)


def f_meshgrid(a, b):
    X, Y = np.meshgrid(a, b)
    return np.sum(np.sin(X) * Y ** 2)


def f_meshgrid_sparse_ij(a, b, c):
    X, Y, Z = np.meshgrid(a, b, c, indexing="ij", sparse=True)
    return np.sum(np.cos(X * Y) * Z)


def f_block(a, b, c):
    return np.sum(np.block([[a, b], [c, np.ones((1, 2))]]) ** 3)


def f_insert(a, b):
    return np.sum(np.insert(a, [0, 2, 2], b) ** 3)


def f_insert_axis(a, b):
    return np.sum(np.tanh(np.insert(a, 1, b, axis=1)) * a[0, 0])


@pytest.mark.parametrize("fn, shapes", [
    (f_broadcast_arrays, [(3, 1), (4,)]), (f_meshgrid, [(3,), (2,)]),
    (f_meshgrid_sparse_ij, [(2,), (3,), (2,)]), (f_block, [(2, 3), (2, 2), (1, 3)]),
    (f_insert, [(3,), (3,)]), (f_insert_axis, [(2, 3), (2,)])], ids=lambda v: getattr(
        v, "__name__", ""))
def test_pieces_rows(fn, shapes):
    _check(fn, [RNG.uniform(-1, 1, s) for s in shapes])


@pytest.mark.skipif(not hasattr(np, "unstack"), reason="np.unstack is numpy >= 2.1")
def test_unstack():
    def_args = (RNG.standard_normal((2, 3)),)
    _check(f_unstack, def_args)
    want = _torch_grads(lambda t: torch.prod(torch.stack(torch.unbind(t, 1)), 0).sum(),
                        def_args)[0]
    np.testing.assert_allclose(srcad.grad(f_unstack)(*def_args), want, rtol=1e-12)


def f_unstack(a):
    u, v, w = np.unstack(a, axis=1)
    return np.sum(u * v * w)


def test_meshgrid_and_broadcast_arrays_match_torch():
    a, b = RNG.standard_normal(3), RNG.standard_normal(2)
    want = _torch_grads(lambda x, y: (torch.sin(torch.meshgrid(x, y, indexing="xy")[0])
                                      * torch.meshgrid(x, y, indexing="xy")[1] ** 2).sum(),
                        (a, b))
    got = srcad.grad(f_meshgrid, wrt=(0, 1))(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    a2, b2 = RNG.standard_normal((3, 1)), RNG.standard_normal(4)
    want = _torch_grads(lambda x, y: (torch.broadcast_tensors(x, y)[0]
                                      * torch.broadcast_tensors(x, y)[1] ** 2).sum(), (a2, b2))
    got = srcad.grad(f_broadcast_arrays, wrt=(0, 1))(a2, b2)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


# --- qr, tensorsolve, cond ---------------------------------------------------------------------
def f_qr(a):
    q, r = np.linalg.qr(a)
    return np.sum(q * np.sin(q)) + np.sum(r[0] * r[-1])


def f_qr_r(a):
    return np.sum(np.linalg.qr(a, mode="r") ** 3)


def test_qr():
    a = RNG.standard_normal((4, 3))
    _check(f_qr, (a,))
    _check(f_qr_r, (RNG.standard_normal((2, 3, 3)),))

    def torch_f(t):
        q, r = torch.linalg.qr(t)
        return (q * torch.sin(q)).sum() + (r[0] * r[-1]).sum()

    np.testing.assert_allclose(srcad.grad(f_qr)(a), _torch_grads(torch_f, (a,))[0], rtol=1e-10)


def f_qr_wide(a):
    return np.sum(np.linalg.qr(a)[1])


def test_qr_of_a_wide_matrix_is_refused_not_zero():
    with pytest.raises(srcad.SrcadError, match="qr"):
        srcad.grad(f_qr_wide)(RNG.standard_normal((2, 4)))


def f_tensorsolve(a, b):
    return np.sum(np.linalg.tensorsolve(a, b, axes=(1,)) ** 2)


def test_tensorsolve():
    a = RNG.uniform(-0.3, 0.3, (2, 6, 3)) + 3 * np.eye(6).reshape(6, 2, 3).transpose(1, 0, 2)
    b = RNG.standard_normal((2, 3))
    _check(f_tensorsolve, (a, b))
    want = _torch_grads(lambda x, y: (torch.linalg.tensorsolve(x, y, dims=(1,)) ** 2).sum(),
                        (a, b))
    for g, w in zip(srcad.grad(f_tensorsolve, wrt=(0, 1))(a, b), want):
        np.testing.assert_allclose(g, w, rtol=1e-10)


COND_P = {"fro": "fro", "nuc": "nuc", "1": 1, "-1": -1, "inf": np.inf, "-inf": -np.inf}


def f_cond(a, key):
    return np.linalg.cond(a, COND_P[key]) * np.sum(a)


@pytest.mark.parametrize("key", list(COND_P))
def test_cond_every_p(key):
    a = RNG.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
    p = COND_P[key]
    _check(f_cond, (a, key), wrt=(0,))
    # (torch's cond writes into inv's output for these p: its norms and inv, as numpy's cond)
    want = _torch_grads(lambda t: torch.linalg.matrix_norm(t, p) * torch.linalg.matrix_norm(
        torch.linalg.inv(t), p) * t.sum(), (a,))[0]
    np.testing.assert_allclose(srcad.grad(f_cond)(a, key), want, rtol=1e-9)


# --- polynomials -------------------------------------------------------------------------------
def f_poly(r):
    return np.sum(np.poly(r) * np.arange(1.0, np.size(r) + 2.0))


def f_polydiv(u, v):
    q, r = np.polydiv(u, v)
    return np.sum(q ** 2) + np.sum(r * np.arange(1.0, np.size(r) + 1.0))


def f_polyfit(x, y):
    return np.sum(np.polyfit(x, y, 2) * np.array([1.0, -2.0, 0.5]))


def f_polyfit_w(x, y, w):
    return np.sum(np.polyfit(x, y, 1, w=w) ** 2)


def test_poly_values_are_numpys_and_gradients():
    r = RNG.uniform(-1, 1, 4)
    out, _ = srcad.vjp(lambda_poly, r)
    assert np.array_equal(out, np.poly(r))
    _check(f_poly, (r,))
    want = _torch_grads(lambda t: (torch_poly(t) * torch.arange(1.0, 6.0,
                                                              dtype=torch.float64)).sum(), (r,))
    np.testing.assert_allclose(srcad.grad(f_poly)(r), want[0], rtol=1e-12)


def lambda_poly(r):
    return np.poly(r)


def torch_poly(t):
    c = torch.ones(1, dtype=t.dtype)
    for z in t:
        c = torch.cat([c, torch.zeros(1, dtype=t.dtype)]) - z * torch.cat(
            [torch.zeros(1, dtype=t.dtype), c])
    return c


def test_polydiv():
    u, v = RNG.uniform(-1, 1, 5), RNG.uniform(0.5, 1.5, 3)
    _check(f_polydiv, (u, v))


def test_polyfit_value_is_numpys_and_gradients():
    x, y = np.linspace(-1, 1, 6), RNG.standard_normal(6)
    (q, _), _ = srcad.vjp(polyfit_pair, x, y)
    assert np.array_equal(q, np.polyfit(x, y, 2))
    _check(f_polyfit, (x, y))
    _check(f_polyfit_w, (x, y, RNG.uniform(0.5, 1.5, 6)))
    # torch: the same least-squares fit through lstsq's gradient
    def torch_f(a, b):
        lhs = torch.stack([a * a, a, torch.ones_like(a)], 1)
        c = torch.linalg.lstsq(lhs, b[:, None]).solution[:, 0]
        return (c * torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)).sum()

    want = _torch_grads(torch_f, (x, y))
    for g, w in zip(srcad.grad(f_polyfit, wrt=(0, 1))(x, y), want):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)


def polyfit_pair(x, y):
    return np.polyfit(x, y, 2), np.sum(x)


# --- Python's math.prod, math.dist and statistics ----------------------------------------------
def f_prod(x):
    return math.prod([x[0], x[1] * 2.0, x[2]]) + math.prod(x, start=0.5)


def f_dist(x, y):
    return math.dist(x, y) * math.dist([x[0], y[1]], [0.5, x[2]])


def f_median_low_high(x):
    return statistics.median_low(x) * statistics.median_high([x[0], x[1], x[2], x[3]])


def f_means(x, w):
    return statistics.geometric_mean(x) + statistics.harmonic_mean(x, weights=w) \
        * statistics.harmonic_mean([x[0], x[1]])


def f_cov_corr(x, y):
    return statistics.covariance(x, y) + statistics.correlation(x, y) * x[0]


@pytest.mark.parametrize("fn, shapes", [
    (f_prod, [(3,)]), (f_dist, [(3,), (3,)]), (f_median_low_high, [(4,)]),
    (f_means, [(4,), (4,)]), (f_cov_corr, [(5,), (5,)])],
    ids=lambda v: getattr(v, "__name__", ""))
def test_python_level(fn, shapes):
    args = [RNG.uniform(0.5, 2.0, s) for s in shapes]
    _check(fn, args)


def py_values(x, y):
    return (math.prod(x), math.dist(x, y), statistics.median_low(x), statistics.median_high(x),
            statistics.geometric_mean(x), statistics.harmonic_mean(x),
            statistics.covariance(x, y), statistics.correlation(x, y))


def test_python_level_values_are_pythons():
    x, y = [0.3, 1.7, 0.9, 2.2], [1.1, 0.4, 0.8, 1.9]
    want = py_values(x, y)
    out, _ = srcad.vjp(py_values, np.array(x), np.array(y))
    assert [float(v) for v in out] == [float(v) for v in want]


def test_python_level_match_torch():
    x, y = RNG.uniform(0.5, 2.0, 5), RNG.uniform(0.5, 2.0, 5)
    got = srcad.grad(f_cov_corr, wrt=(0, 1))(x, y)

    def torch_f(a, b):
        c = torch.cov(torch.stack([a, b]))[0, 1]
        return c + torch.corrcoef(torch.stack([a, b]))[0, 1] * a[0]

    for g, w in zip(got, _torch_grads(torch_f, (x, y))):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    got = srcad.grad(f_dist, wrt=(0, 1))(x[:3], y[:3])
    want = _torch_grads(lambda a, b: torch.dist(a, b) * torch.dist(
        torch.stack([a[0], b[1]]), torch.stack([torch.tensor(0.5, dtype=a.dtype), a[2]])),
        (x[:3], y[:3]))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)


def f_lgamma(x):
    return math.lgamma(x[0])


def test_lgamma_is_differentiated():
    # (refused until 2026-12-04: its derivative, digamma, is now computed in Python --
    # runtime_pymath.py_polygamma; 0.03649... is digamma(1.5))
    g = srcad.grad(f_lgamma)(np.array([1.5]))
    assert np.allclose(g, [0.03648997397857652], rtol=1e-13)


def f_poly1d(c, x):
    p = np.poly1d(c)
    return np.sum(p(x) * p.c[0]) + p.order


def f_poly1d_roots(r, x):
    return np.sum(np.poly1d(r, r=True)(x) ** 2)


def test_poly1d_called():
    c, x = RNG.standard_normal(3), RNG.standard_normal(2)
    _check(f_poly1d, (c, x))
    _check(f_poly1d_roots, (c, x))
    assert f_poly1d(c, x) == srcad.vjp(f_poly1d, c, x)[0]


def f_poly1d_deriv(c, x):
    return np.sum(np.poly1d(c).deriv()(x))


def test_poly1d_methods_returning_a_poly1d():
    # (refused until the objects pass followed a method returning the poly1d it builds;
    # tests/test_writers2.py checks deriv / integ / arithmetic in full)
    _check(f_poly1d_deriv, (RNG.standard_normal(3), RNG.standard_normal(2)))
