"""Everyday spellings that used to be refused or mis-read (issue 22's smaller items, issue 23's
`np.where(cond)`): numpy 2's keywords on methods with a row (`x.clip(min=0)`,
`x.astype(dt, copy=False)`), a numpy function or a method bound to a local name, `np.where`
with one argument (np.nonzero), an object's attribute as a dtype. Each in every mode."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error
from tests import fixtures_forms as m

X = np.array([0.3, -0.5, 0.8, 1.2])
FUNCTIONS = [m.clip_keywords, m.astype_keywords, m.numpy_function_in_a_local,
             m.method_in_a_local, m.where_one_argument, m.dtype_from_an_object, m.cumsum,
             m.loop_over_ndindex, m.unpack_into_a_dict_entry, m.loop_over_reversed_list,
             m.enumerate_of_zip, m.star_args_helpers]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("how", ["source", "tape", "fuse", "jvp"])
def test_everyday_forms(fn, how):
    want = numerical_grad(fn, (X,))
    if how == "jvp":
        v = np.linspace(0.5, 1.5, X.size)
        out, tangent = srcad.jvp(fn, (X,), (v,))
        assert out == fn(X) and rel_error(tangent, np.sum(want * v)) < 1e-6
        return
    options = {"mode": "tape"} if how == "tape" else {"fuse": True} if how == "fuse" else {}
    value, g = srcad.value_and_grad(fn, **options)(X)
    assert value == fn(X)
    assert rel_error(g, want) < 1e-6, (g, want)


def test_a_write_through_astype_without_copy_is_not_guessed():
    """`copy=False` may give x itself: a write through it is handled as through a view whose
    sharing is known only when running -- refused, never a silently different x."""

    def write_through(x):
        y = x * 1.0
        z = y.astype(np.float64, copy=False)
        z[0] = 5.0
        return np.sum(y * x)

    with pytest.raises(srcad.SrcadError):
        srcad.grad(write_through)(X)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_an_array_index_is_a_copy(mode):
    """`c = s[idx]` with idx an integer array or a mask copies: a later `s -= 1` leaves c alone
    (the transform, made before any call, asks the first call's arguments what idx holds)."""
    g = srcad.grad(m.gather_then_write, mode=mode)
    for idx in (np.array([0, 2]), X > 0):
        want = numerical_grad(m.gather_then_write, (X, idx))
        assert rel_error(g(X, idx), want) < 1e-6


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_the_copy_hint_works_in_a_loop(mode):
    g = srcad.grad(m.hint_applied_in_a_loop, mode=mode)(X)
    assert rel_error(g, numerical_grad(m.hint_applied_in_a_loop, (X,))) < 1e-6


@pytest.mark.parametrize("fn", [m.size_one_vector, m.size_one_matrix], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_size_one_output_is_its_one_element(fn, mode):
    """grad of an output of shape (1,) or (1, 1): the gradient of its one element (autograd's
    rule, DESIGN's pinned API); value_and_grad returns the array as it is."""
    value, g = srcad.value_and_grad(fn, mode=mode)(X)
    assert np.array_equal(value, fn(X))
    assert rel_error(g, numerical_grad(lambda x: fn(x).item(), (X,))) < 1e-6
    assert rel_error(srcad.grad(fn, fuse=True)(X), g) == 0


def test_float_of_a_differentiated_value_is_differentiated():
    """float(b[0]) of a size-1 value: the identity derivative (it was refused with a hint to
    keep the value an array; both spellings now give one gradient)."""
    g = srcad.grad(m.float_of_a_size_one_array)(X)
    assert rel_error(g, numerical_grad(m.float_of_a_size_one_array, (X,))) < 1e-6
    np.testing.assert_allclose(g, srcad.grad(m.float_hint_applied)(X), rtol=1e-14)
