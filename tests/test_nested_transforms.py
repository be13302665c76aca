"""Transforms inside transforms, as a JAX user writes them (issue 23, "transforms inside
transforms"): a differentiated function calls ``srcad.grad`` / ``value_and_grad`` / ``vjp`` /
``jvp`` -- of a tuple, list, dict or nested argument, per example in a loop, a transform held
in a global or a dict -- and an outer ``grad`` (source and tape mode), ``jvp`` or
``grad(grad(...))`` differentiates through it. Each is checked against central differences
and against the same function with the inner derivative written out by hand
(tests/fixtures_nested.py)."""

from __future__ import annotations

import collections

import fixtures_nested as F
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp, rel_error

MODES = ("source", "tape")
XS = [F.B, F.A * F.B, F.B - F.A]

# (name, the nested function, its twin by hand or None, arguments, wrt)
CASES = [
    ("grad_tuple", F.grad_of_tuple, F.grad_of_tuple_by_hand, (F.A, F.B), (0, 1)),
    ("grad_list", F.grad_of_list, F.grad_of_list_by_hand, (F.A, F.B), (0, 1)),
    ("grad_dict", F.grad_of_dict, F.grad_of_dict_by_hand, (F.W0, F.A), (0, 1)),
    ("grad_nested", F.grad_of_nested, F.grad_of_nested_by_hand, (F.A, F.B), (0, 1)),
    ("value_and_grad_dict", F.value_and_grad_of_dict, F.value_and_grad_of_dict_by_hand,
     (F.W0, F.A), (0, 1)),
    ("vjp_tuple", F.vjp_of_tuple, F.vjp_of_tuple_by_hand, (F.A, F.B), (0, 1)),
    ("vjp_two_primals", F.vjp_of_two, F.vjp_of_two_by_hand, (F.A, F.B), (0, 1)),
    ("jvp", F.jvp_inside, F.jvp_inside_by_hand, (F.A, F.B), (0, 1)),
    ("jvp_tuple_output", F.jvp_of_tuple_output, F.jvp_of_tuple_output_by_hand, (F.A, F.B),
     (0, 1)),
    ("vjp_dict", F.vjp_of_dict, F.vjp_of_dict_by_hand, (F.A, F.B), (0, 1)),
    ("jvp_numpy_loop", F.jvp_of_numpy_in_a_loop, F.jvp_of_numpy_in_a_loop_by_hand,
     (F.A, XS), 0),
    ("per_example", F.per_example_norms, F.per_example_norms_by_hand, (F.A, XS), 0),
    ("per_example_loop", F.per_example_loop, None, (F.A, XS), (0, 1)),
    ("held_in_global", F.held_in_global, None, (F.A, F.B), (0, 1)),
    ("held_in_dict", F.held_in_dict, F.held_in_dict_by_hand, (F.A, F.B), (0, 1)),
    ("grad_wrt_the_tuple", F.grad_of_tuple_arg, None, ((F.A, F.B),), 0),
]


# (the quick suite keeps one case of each kind; the rest run under -m slow)
SLOW = {"grad_list", "grad_dict", "value_and_grad_dict", "per_example_loop", "jvp_tuple_output",
        "vjp_dict", "jvp_numpy_loop"}


@pytest.mark.parametrize("name,fn,by_hand,args,wrt", [
    pytest.param(*c, id=c[0], marks=pytest.mark.slow if c[0] in SLOW else ()) for c in CASES])
def test_outer_grad_and_jvp(name, fn, by_hand, args, wrt):
    if by_hand is not None:
        assert rel_error(fn(*args), by_hand(*args)) < 1e-12
    for m in MODES:
        got = check_grads(fn, args, wrt=wrt, mode=m)
        assert got  # (one error per wrt)
        if by_hand is not None:
            assert rel_error(srcad.grad(fn, wrt=wrt, mode=m)(*args),
                             srcad.grad(by_hand, wrt=wrt)(*args)) < 1e-10
    check_jvp(fn, args, tol=1e-5)


def test_tape_agrees_with_source_through_an_inner_grad_of_a_dict():
    s = srcad.value_and_grad(F.grad_of_dict, wrt=(0, 1))(F.W0, F.A)
    t = srcad.value_and_grad(F.grad_of_dict, wrt=(0, 1), mode="tape")(F.W0, F.A)
    assert s[0] == t[0] and rel_error(s[1], t[1]) < 1e-13


# -- grad(grad(.)) of scalar programs over an inner grad / vjp / jvp of containers --------------

SCALARS = [("tuple", F.scalar_tuple), ("dict", F.scalar_dict), ("nested", F.scalar_nested),
           ("vjp_jvp", F.scalar_vjp)]


@pytest.mark.slow  # (the quick suite: test_autograd_classes.py::test_tuple_nested_higher_order)
@pytest.mark.parametrize("name,fn", SCALARS, ids=[c[0] for c in SCALARS])
def test_grad_of_grad(name, fn):
    for m in MODES:  # (the outer transform in tape mode records the inner grad as one op)
        check_grads(srcad.grad(fn, mode=m), (0.7,), mode=m, tol=1e-5)
    check_jvp(srcad.grad(fn), (0.7,), tol=1e-5)  # forward over reverse agrees


@pytest.mark.slow
@pytest.mark.parametrize("name,fn", SCALARS[:3], ids=[c[0] for c in SCALARS[:3]])
def test_grad_of_grad_of_grad(name, fn):
    # a fourth derivative of the inner function: a pullback of a pullback of its gradient
    check_grads(srcad.grad(srcad.grad(fn)), (0.7,), tol=1e-4)


def test_a_form_not_lowered_is_refused_at_its_line_with_the_form_that_works():
    with pytest.raises(srcad.SrcadError) as err:
        srcad.grad(F.pullback_returned)(F.A, F.B)
    e = err.value
    assert e.lineno == F.pullback_returned.__code__.co_firstlineno + 1
    assert "srcad.vjp" in str(e) and "pullback(ct)" in e.hint
    # (the form the hint gives is vjp_tuple's, checked above)


# ---- a transform of a transform, every container an argument can be, every mode pair --------
_Pair = collections.namedtuple("_Pair", "W b")


def _by_fields(s, p, x):
    return np.sum(np.tanh(s * (x @ p.W) + p.b) ** 2)


def _by_index(s, p, x):
    return np.sum(np.tanh(s * (x @ p[0]) + p[1]) ** 2)


def _by_key(s, p, x):
    return np.sum(np.tanh(s * (x @ p["W"]) + p["b"]) ** 2)


def _containers():
    r = np.random.default_rng(31)
    W, b = r.standard_normal((3, 2)) * 0.6, r.standard_normal(2) * 0.3
    return [("namedtuple", _by_fields, _Pair(W, b)), ("namedtuple-index", _by_index, _Pair(W, b)),
            ("list", _by_index, [W, b]), ("tuple", _by_index, (W, b)),
            ("dict", _by_key, {"W": W, "b": b}),
            ("ordereddict", _by_key, collections.OrderedDict(W=W, b=b))]


def _leaves(tree):
    return list(tree.values()) if isinstance(tree, dict) else list(tree)


@pytest.mark.parametrize("inner", ["source", "tape"])
@pytest.mark.parametrize("outer", ["source", "tape"])
@pytest.mark.parametrize("kind,fn,p", _containers(), ids=[c[0] for c in _containers()])
def test_a_mixed_partial_through_every_container_in_every_mode_pair(kind, fn, p, inner, outer):
    """d2f / ds dp with p a container: tape over tape gave zeros for a namedtuple (the tape's
    unwrapping made it a plain tuple and the inner transform did not see its Tensors), and
    tape over source raised; every pair against central differences of the inner gradient,
    the gradient in the argument's own container type."""
    x = np.random.default_rng(32).standard_normal((4, 3))
    g = srcad.grad(srcad.grad(fn, wrt=0, mode=inner), wrt=1, mode=outer)(0.7, p, x)
    assert type(g) is type(p) or (isinstance(p, dict) and isinstance(g, dict))
    inner_grad = srcad.grad(fn, wrt=0)
    eps = 1e-6
    leaves = _leaves(p)
    for i, (got, leaf) in enumerate(zip(_leaves(g), leaves)):
        want = np.zeros_like(leaf)
        for j in np.ndindex(leaf.shape):
            moved = []
            for sign in (1, -1):
                copies = [v.copy() for v in leaves]
                copies[i][j] += sign * eps
                q = type(p)(*copies) if hasattr(p, "_fields") else (
                    type(p)(zip(p.keys(), copies)) if isinstance(p, dict) else type(p)(copies))
                moved.append(inner_grad(0.7, q, x))
            want[j] = (moved[0] - moved[1]) / (2 * eps)
        assert rel_error(got, want) < 1e-6, (kind, i)
