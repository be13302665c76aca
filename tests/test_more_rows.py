"""What the op table's rows of srcad/ops/wrappers.py, numeric.py and polynomials.py refuse or
choose, beyond what their generated tests (test_ops, test_forward, test_ops_second_order)
check."""

from __future__ import annotations

import numpy as np
import pytest

import srcad

A = np.array([[2.0, 0.3, 0.1], [0.2, 1.5, -0.4], [0.0, 0.5, 3.0]])


def cond_fro(a):
    return np.linalg.cond(a, "fro")


def test_cond_other_p_has_its_gradient():  # (once refused: tests/test_rows3.py has every p)
    from srcad.testing import check_grads
    check_grads(cond_fro, (A,))


def next_up(x):
    return np.sum(np.nextafter(x, np.inf) * x)


def test_nextafter_slope_one_in_x():
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(srcad.grad(next_up)(x), 2 * x, rtol=1e-12)


def power3(a):
    return np.sum(np.linalg.matrix_power(a, 3))


def test_matrix_power_second_derivative_is_refused():
    with pytest.raises(srcad.SrcadError, match="second derivative"):
        srcad.jvp(srcad.grad(power3), (A,), (np.ones_like(A),))


def divmod_both(a, b):
    q, r = np.divmod(a, b)
    return np.sum(r * r + q)


def test_divmod_forward_sums_both_arguments_terms():
    a, b = np.array([2.3, -1.7]), np.array([0.7, 0.9])
    ta, tb = np.array([1.0, 0.5]), np.array([-0.3, 0.2])
    _, dot = srcad.jvp(divmod_both, (a, b), (ta, tb))
    r = np.mod(a, b)
    want = np.sum(2 * r * (ta - np.floor(a / b) * tb))
    assert dot == pytest.approx(want, rel=1e-12)
