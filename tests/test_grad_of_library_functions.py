"""`srcad.grad(np.sum)`, `srcad.grad(np.linalg.norm)`, `srcad.grad(logsumexp)`: a library
function with a row, transformed itself (session of 2026-12-07).

srcad wraps such a function in a small Python function of its parameters (srcad/wrappers.py)
and that wrapper passed every parameter on, given or not: `np.sum`'s `out=None` and the
"not given" sentinels of `keepdims`, `initial` and `where`, `logsumexp`'s `return_sign` --
refused ("`sum` takes at most 6 positional arguments", naming srcad's wrapper), where
autograd's and JAX's `grad(np.sum)` work. Now the wrapper takes the parameters the row
takes, passing those with defaults by keyword; one the row does not take is not the
wrapper's (a clear "unexpected keyword argument")."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.special import logsumexp

import srcad
from srcad.testing import numerical_grad

X = np.array([0.3, -1.2, 2.0, 0.7])

CASES = [
    ("sum", np.sum, (X,), {}),
    ("mean", np.mean, (X,), {}),
    ("prod", np.prod, (X,), {}),
    ("max", np.max, (X,), {}),
    ("norm", np.linalg.norm, (X,), {}),
    ("norm_ord_1", np.linalg.norm, (X, 1), {}),
    ("norm_axis", np.linalg.norm, (X,), {"axis": 0}),
    ("logsumexp", logsumexp, (X,), {}),
    ("logsumexp_b", logsumexp, (X,), {"b": np.array([1.0, 2.0, 0.5, 1.0])}),
    ("sum_axis", np.sum, (X,), {"axis": 0}),
    ("partial_sum", functools.partial(np.sum, axis=0), (X,), {}),
    ("dot", np.dot, (X, X * 2.0), {}),
    ("tanh_scalar", np.tanh, (0.4,), {}),
]


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("name,fn,args,kwargs", CASES, ids=[c[0] for c in CASES])
def test_grad_of_a_library_function(name, fn, args, kwargs, mode):
    g = srcad.value_and_grad(fn, mode=mode)
    value, grad = g(*args, **kwargs)
    assert value == pytest.approx(fn(*args, **kwargs), rel=1e-12)
    expected = numerical_grad(lambda *a: fn(*a, **kwargs), args, h=1e-6)
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-9)


def test_a_parameter_the_row_does_not_take_is_a_clear_error():
    with pytest.raises(srcad.SrcadError, match="unexpected keyword argument 'return_sign'"):
        srcad.grad(logsumexp)(X, return_sign=True)
