"""A user function the differentiated function calls, writing into its argument in place:
Python's caller sees that array (or those list items) written. srcad used to leave the
caller's array as it was (a warning said so) or, where the call's result was unused, drop the
call -- a wrong value and gradient, silently. Now the call is spliced in and its write is the
caller's (frontend/inline.py `written_arrays`; tape mode: `Tape.scoped`). Each program is
checked against calling it and against central differences, in source mode, tape mode and
fused."""

import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

MODES = [("source", False), ("tape", False), ("source", True)]
_R = np.random.default_rng(7)
_AB = (_R.standard_normal(3), _R.standard_normal(3))
_M = (_R.standard_normal((3, 4)), _R.standard_normal(4))


def _check(fn, args, wrt=(0, 1), tol=1e-6):
    want_v = fn(*[a.copy() for a in args])
    want = numerical_grad(fn, [a.copy() for a in args], wrt=wrt)
    for mode, fuse in MODES:
        given = [a.copy() for a in args]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v, g = srcad.value_and_grad(fn, wrt=wrt, mode=mode, fuse=fuse)(*given)
        assert np.allclose(v, want_v, rtol=1e-12, atol=0), (mode, fuse, v, want_v)
        for a, b in zip(g, want):
            assert rel_error(a, b) < tol, (mode, fuse)


# ---- helpers that write into their argument --------------------------------------------

def _shrink(p, lr):
    p -= lr * p


def _shrink_and_return(p, lr):
    p -= lr * p
    return p


def _clip_in_place(p):
    np.clip(p, -0.5, 0.5, out=p)


def _zero_first(p):
    p[0] = 0.0


def _scale_tail(p):
    tail = p[1:]
    tail *= 3.0


def _step_list(ps, lr):
    for p in ps:
        p -= lr * p


def _step_first(ps, lr):
    p = ps[0]
    p -= lr * p


def _step_pairs(ps, gs, lr):
    for p, g in zip(ps, gs):
        p -= lr * g


def _outer(p):
    _shrink(p, 0.2)
    p += 1.0


def _bump_number(s):
    s -= 1.0
    return s


# ---- the programs ----------------------------------------------------------------------

def _array_name(a, b):
    A = a.copy()
    _shrink(A, 0.1)
    return np.sum(A * b)


def _array_name_result_ignored(a, b):
    A = a.copy()
    _shrink_and_return(A, 0.1)
    return np.sum(A * b)


def _array_name_result_other(a, b):
    A = a.copy()
    A2 = _shrink_and_return(A, 0.1)
    return np.sum(A * b + A2)


def _alias_and_view_see_it(a, b):
    A = a.copy()
    B = A
    V = A[1:]
    _shrink(A, 0.5)
    return np.sum(B * b) + np.sum(V ** 2)


def _out_keyword(a, b):
    A = a * 2.0
    _clip_in_place(A)
    return np.sum(A * b)


def _store_into_item(a, b):
    A = a.copy()
    _zero_first(A)
    return np.sum(A * b)


def _through_a_view(a, b):
    A = a.copy()
    _scale_tail(A)
    return np.sum(A * b)


def _row_of_a_matrix(M, v):
    X = M.copy()
    _shrink(X[1], 0.5)
    return np.sum(X @ v)


def _element_of_a_vector(a, b):
    A = a.copy()
    _shrink(A[0], 0.5)  # (a numpy scalar: `p -= ..` rebinds it, A stays)
    return np.sum(A * b)


def _two_levels(a, b):
    A = a.copy()
    _outer(A)
    return np.sum(A * b)


def _in_a_loop(a, b):
    A = a.copy()
    for i in range(3):
        if i != 1:
            _shrink(A, 0.1 * (i + 1))
        A = A + b * 0.01
    return np.sum(A * b)


def _number_argument(a, b):
    s = float(np.sum(a))
    t = _bump_number(s)
    return s * np.sum(b) + t


def _list_items(a, b):
    ps = [a.copy(), b.copy()]
    _step_list(ps, 0.1)
    return np.sum(ps[0] * ps[1])


def _list_first_item(a, b):
    ps = [a.copy(), b.copy()]
    _step_first(ps, 0.1)
    return np.sum(ps[0] * ps[1])


def _item_of_a_list(a, b):
    ps = [a.copy(), b.copy()]
    _shrink(ps[0], 0.1)
    return np.sum(ps[0] * ps[1])


def _list_in_a_loop(a, b):
    ps = [a.copy(), b.copy()]
    for it in range(3):
        _step_list(ps, 0.1)
    return np.sum(ps[0] * ps[1])


def _list_read_between(a, b):
    ps = [a.copy(), b.copy()]
    _step_list(ps, 0.1)
    q = ps[0] * 2
    _step_list(ps, 0.2)
    return np.sum(q * ps[1] * ps[0])


def _list_and_gradients(a, b):
    ps = [a.copy(), b.copy()]
    for it in range(2):
        gs = [ps[1] * 0.5, ps[0] * 0.5]
        _step_pairs(ps, gs, 0.1)
    return np.sum(ps[0] * ps[1])


class _Net:
    def __init__(self, a, b):
        self.params = [a.copy(), b.copy()]

    def step(self, lr):
        for p in self.params:
            p -= lr * p

    def loss(self):
        return np.sum(self.params[0] * self.params[1])


def _method_walks_its_list(a, b):
    n = _Net(a, b)
    for it in range(2):
        n.step(0.1)
    return n.loss()


PROGRAMS = [_array_name, _array_name_result_ignored, _array_name_result_other,
            _alias_and_view_see_it, _out_keyword, _store_into_item, _through_a_view,
            _element_of_a_vector, _two_levels, _in_a_loop, _number_argument, _list_items,
            _list_first_item, _item_of_a_list, _list_in_a_loop, _list_read_between,
            _list_and_gradients, _method_walks_its_list]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__.strip("_"))
def test_a_callee_writes_into_its_argument(fn):
    _check(fn, _AB)


def test_a_callee_writes_into_a_row_of_the_callers_matrix():
    _check(_row_of_a_matrix, _M)


def test_the_top_level_argument_is_left_to_its_caller_with_a_warning():
    """The differentiated function's own argument keeps JAX's semantics: the caller's array
    is left as it was, and a warning names the line (README). A callee's write reaches the
    differentiated function's name for it (the value below is the written one)."""
    def f(a, b):
        _shrink(a, 0.5)
        return np.sum(a * b)

    a, b = _AB[0].copy(), _AB[1].copy()
    with pytest.warns(UserWarning, match="writes into its argument `a` in place"):
        v, g = srcad.value_and_grad(f, wrt=(0, 1))(a, b)
    assert np.array_equal(a, _AB[0])
    assert np.isclose(v, np.sum(0.5 * _AB[0] * _AB[1]))
    assert rel_error(g[0], 0.5 * _AB[1]) < 1e-12
