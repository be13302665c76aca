"""The Python people write around numpy (issue 11): calls that need no rule, statements that
do nothing to the gradient, comprehensions, closures, lambdas, dicts, bound methods.

The corpus (tests/corpus_python.py) is differentiated in source and tape mode (bit for bit
equal), against central differences, forward against reverse, and forward over reverse. The
rest pins what the generated code says, that effects run once per call, and that a call
with no rule on a value the gradient needs is refused at the user's line -- never zeros.
"""

from __future__ import annotations

import inspect
import math
import os

import corpus_python as C
import numpy as np
import pytest
import torch

import srcad
from srcad.errors import NoRuleError, UnsupportedSyntaxError
from srcad.testing import check_consistency, check_grads, check_jvp

HERE = os.path.abspath(__file__)
try:
    from scipy.special import spherical_jn as SPHERICAL_JN  # (a library function, no row)
except ImportError:  # pragma: no cover
    SPHERICAL_JN = None
IDS = [f.__name__ for f, _, _ in C.CASES]


def _args(make, seed=1):
    return make(np.random.default_rng(seed))


def _leaves(t):
    if isinstance(t, dict):
        return [x for v in t.values() for x in _leaves(v)]
    if isinstance(t, (list, tuple)):
        return [x for v in t for x in _leaves(v)]
    return [np.asarray(t)]


def _bitwise(a, b) -> bool:
    la, lb = _leaves(a), _leaves(b)
    return len(la) == len(lb) and all(
        x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y)
        for x, y in zip(la, lb))


# -- the corpus -------------------------------------------------------------------------------


@pytest.mark.parametrize("fn, make, wrt", C.CASES, ids=IDS)
def test_gradient_matches_finite_differences(fn, make, wrt, capsys):
    args = _args(make)
    check_grads(fn, args, wrt=wrt)
    check_grads(fn, args, wrt=wrt, mode="tape")


@pytest.mark.parametrize("fn, make, wrt", C.CASES, ids=IDS)
def test_source_and_tape_agree_bit_for_bit(fn, make, wrt, capsys):
    for dtype in (np.float64, np.float32):
        args = _cast(_args(make, seed=2), dtype)
        vs, gs = srcad.value_and_grad(fn, wrt=wrt)(*args)
        vt, gt = srcad.value_and_grad(fn, wrt=wrt, mode="tape")(*args)
        assert _bitwise(vs, vt) and _bitwise(gs, gt), fn.__name__
        assert _bitwise(vs, fn(*args))


def _cast(tree, dtype):
    if isinstance(tree, dict):
        return {k: _cast(v, dtype) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_cast(v, dtype) for v in tree)
    if isinstance(tree, np.ndarray):
        return tree.astype(dtype)
    return tree


@pytest.mark.parametrize("fn, make, wrt", C.CASES, ids=IDS)
def test_forward_mode_and_consistency(fn, make, wrt, capsys):
    args = _args(make, seed=3)
    check_jvp(fn, args)
    check_consistency(fn, args)


@pytest.mark.parametrize("fn, make, wrt", C.CASES, ids=IDS)
def test_vjp_equals_grad(fn, make, wrt, capsys):
    args = _args(make, seed=4)
    g = srcad.grad(fn, wrt=tuple(range(len(args))))(*args)
    out, pullback = srcad.vjp(fn, *args)
    assert _bitwise(out, fn(*args))
    for a, b in zip(pullback(np.ones_like(np.asarray(out)))[: len(g)], g):
        if b is not None and a is not None:
            for x, y in zip(_leaves(a), _leaves(b)):
                np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


HVP = ["attention_scale", "stack_of_comprehension", "sum_of_generator", "dict_comprehension",
       "closure_over_locals", "lambda_activation_in_loop", "append_in_loop",
       "prints_and_asserts", "inactive_in_loop", "builtin_sum_of_list"]


@pytest.mark.parametrize("name", HVP)
def test_forward_over_reverse(name, capsys):
    """Hessian-vector products through generated code that is itself parsed again."""
    fn, make, _ = next(c for c in C.CASES if c[0].__name__ == name)
    args = _args(make, seed=5)
    x = args[0]
    v = np.random.default_rng(6).standard_normal(np.shape(x)) if not isinstance(x, dict) \
        else {k: np.full_like(a, 0.5) for k, a in x.items()}
    g = srcad.grad(fn, wrt=0)
    tangents = (v,) + tuple(srcad.runtime.zeros_grad_leaf(a) for a in args[1:])
    _, hv = srcad.jvp(g, args, tangents)
    eps = 1e-6

    def shifted(s):
        if isinstance(x, dict):
            return g({k: x[k] + s * v[k] for k in x}, *args[1:])
        return g(x + s * v, *args[1:])

    plus, minus = shifted(eps), shifted(-eps)
    for a, p, m in zip(_leaves(hv), _leaves(plus), _leaves(minus)):
        np.testing.assert_allclose(a, (p - m) / (2 * eps), rtol=1e-5, atol=1e-7)


# -- against torch ------------------------------------------------------------------------------


def mlp_comprehension(x, Ws):
    hs = [np.tanh(x @ W) for W in Ws]
    return sum(np.mean(h * h) for h in hs) + math.log(2.0)


def test_comprehension_mlp_matches_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3))
    Ws = [rng.standard_normal((3, 3)) for _ in range(3)]
    dx, dWs = srcad.grad(mlp_comprehension, wrt=(0, 1))(x, Ws)
    tx = torch.tensor(x, requires_grad=True)
    tWs = [torch.tensor(W, requires_grad=True) for W in Ws]
    hs = [torch.tanh(tx @ W) for W in tWs]
    loss = sum(torch.mean(h * h) for h in hs)
    loss.backward()
    np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-12)
    for a, b in zip(dWs, tWs):
        np.testing.assert_allclose(a, b.grad.numpy(), rtol=1e-12)


# -- what generated code says ---------------------------------------------------------------------


def _source_of(fn, *args, **kw):
    g = srcad.grad(fn, **kw)
    g(*args)
    return srcad.source(g)


def test_inactive_calls_read_like_the_users_line():
    rng = np.random.default_rng(0)
    src = _source_of(C.attention_scale, rng.standard_normal((3, 4)),
                     rng.standard_normal((5, 4)))
    assert "math.sqrt(d)" in src
    src = _source_of(C.rng_noise_made_inside, rng.standard_normal(4))
    assert "np.random.default_rng(0)" in src and ".standard_normal(" in src


def test_effects_are_in_the_forward_sweep_only(capsys):
    x, w = np.ones(3), np.ones(3)
    src = _source_of(C.prints_and_asserts, x, w, wrt=(0, 1))
    forward, backward = src.split("# --- backward ---")
    assert "print('h is'" in forward and "assert " in forward and "raise ValueError" in forward
    assert "print(" not in backward and "assert " not in backward


def counts_calls(x, log):
    log.append(float(np.sum(x)))  # a bare call on a value no gradient needs: runs once
    print("called")
    return np.sum(x * x)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_effects_run_once_per_call(mode, capsys):
    log = []
    g = srcad.grad(counts_calls, mode=mode)
    for _ in range(3):
        g(np.ones(3), log)
    assert capsys.readouterr().out == "called\n" * 3
    assert log == [3.0, 3.0, 3.0]  # (the first call's shape probe does not append)


def prints_in_checkpointed_loop(x, n):
    h = x
    for i in srcad.checkpoint(range(n), every=2):
        print("step", i)
        h = np.sin(h) * 1.5
    return np.sum(h)


def test_checkpoint_recomputation_does_not_print_again(capsys):
    g = srcad.grad(prints_in_checkpointed_loop)
    plain = srcad.grad(prints_in_checkpointed_loop, mode="tape")
    x = np.linspace(0.1, 0.9, 4)
    np.testing.assert_array_equal(g(x, 6), plain(x, 6))
    out = capsys.readouterr().out
    assert out == "".join(f"step {i}\n" for i in range(6)) * 2, out


def prints_then_checkpointed(h):
    print("inside")
    return np.tanh(h)


def checkpoints_a_printing_call(x):
    return np.sum(srcad.checkpoint(prints_then_checkpointed)(x))


def test_checkpointed_call_that_prints_is_refused(capsys):
    with pytest.raises(srcad.SrcadError, match="print"):
        srcad.grad(checkpoints_a_printing_call)(np.ones(3))


def failing_assert(x):
    assert x.shape[0] > 5, f"too short: {x.shape[0]}"
    return np.sum(x)


def raising_branch(x):
    if x.ndim != 1:
        raise ValueError("want a vector")
    return np.sum(x)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_the_users_own_assert_and_raise_reach_the_user(mode):
    with pytest.raises(AssertionError, match="too short: 3"):
        srcad.grad(failing_assert, mode=mode)(np.ones(3))
    with pytest.raises(ValueError, match="want a vector"):
        srcad.grad(raising_branch, mode=mode)(np.ones((2, 2)))


def global_rng(x):
    return np.sum(x * np.random.normal(size=x.shape))


def test_the_probe_leaves_the_global_generator_alone():
    x = np.ones(3)
    np.random.seed(7)
    g = srcad.grad(global_rng)(x)
    np.random.seed(7)
    assert np.array_equal(g, np.random.normal(size=3))


# -- refusals, at the user's line ------------------------------------------------------------------


def err_line(fn) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(lines) if "# ERR" in ln)


def _refused(fn, args, match, cls=NoRuleError, at=None, **kw):
    for mode in ("source", "tape"):
        with pytest.raises(cls, match=match) as info:
            srcad.grad(fn, mode=mode, **kw)(*args)
        err = info.value
        assert err.lineno == err_line(at or fn) and os.path.basename(HERE) in str(err), str(err)
    return err


def remainder_of_active(x):
    s = math.remainder(np.sum(x * x), 0.7)  # ERR
    return np.sum(x) / s


def float_of_active(x):
    return np.sum(x) * float(np.sum(x))  # ERR


def chained_no_rule(x):
    s = math.remainder(np.sum(x * x), 0.7)  # ERR
    t = math.nextafter(s, 1.0)  # (no rule either: the gradient through s would be lost here)
    return np.sum(x) * t


def zero_derivative_after_no_rule(x):
    n = int(float(np.sum(x)))  # int has no derivative: nothing is lost through float
    return np.sum(x) * n


def test_a_call_with_no_rule_before_one_with_no_derivative_runs():
    x = np.array([0.6, 0.7, 0.8])
    check_grads(zero_derivative_after_no_rule, (x,))
    assert np.array_equal(srcad.grad(zero_derivative_after_no_rule, mode="tape")(x),
                          srcad.grad(zero_derivative_after_no_rule)(x))


def method_on_active(x):
    return np.sum(x.getfield(np.float64))  # ERR


def attribute_of_active(x):
    return np.sum(x[:, None].base)  # ERR (a view's base: numpy's memory, no rule)


def stores_into_an_argument(x, out):
    out.append(x * 2.0)  # ERR
    return np.sum(np.stack(out))


def helper_that_stores(x, out):
    out.append(x * 2.0)  # ERR
    return np.sum(x)


def calls_a_helper_that_stores(x, out):
    s = helper_that_stores(x, out)
    return s + np.sum(np.stack(out))


@pytest.mark.parametrize("fn, args, match", [
    (remainder_of_active, (np.ones(3),), "`math.remainder` has no derivative rule"),
    (chained_no_rule, (np.ones(3),), "`math.remainder` has no derivative rule"),
    (method_on_active, (np.ones(3),), r"the method `.getfield\(\)`"),
    (attribute_of_active, (np.ones(3),), "the attribute `.base`"),
    (stores_into_an_argument, (np.ones(3), [np.zeros(3)]), "may store it in or change `out`"),
    (calls_a_helper_that_stores, (np.ones(3), [np.zeros(3)]),
     "may store it in or change `out`"),
], ids=["math.remainder", "chained", "method", "attribute", "store", "store-in-helper"])
def test_no_rule_on_a_value_the_gradient_needs_is_refused(fn, args, match):
    at = helper_that_stores if fn is calls_a_helper_that_stores else None
    err = _refused(fn, args, match, at=at)
    # (a conversion to a Python number: keep it an array, which carries the gradient)
    assert "srcad.defvjp" in str(err) or "build the value" in str(err)


def test_float_of_a_differentiated_value_carries_its_gradient():
    """float(s) is the same number as a Python float: its derivative is the identity (row
    `float`), in source and tape mode -- it was refused before."""
    x = np.array([0.3, -0.5, 0.8])
    for mode in ("source", "tape"):
        g = srcad.grad(float_of_active, mode=mode)(x)
        np.testing.assert_allclose(g, 2 * np.sum(x) * np.ones(3), rtol=1e-14)


def bessel_on_active(x):
    return np.sum(SPHERICAL_JN(0, x))  # ERR


def bessel_on_shape(x):
    return np.sum(x) * np.sum(SPHERICAL_JN(0, np.ones(x.shape)))


# (scipy.special.softplus was this test's function until it got a row, 2026-12-06)
@pytest.mark.skipif(SPHERICAL_JN is None, reason="scipy is not installed")
def test_library_function_on_active_names_it_and_defvjp():
    err = _refused(bessel_on_active, (np.ones(3),), "SPHERICAL_JN")
    msg = str(err)
    assert "site-packages" in msg and "does not trace into installed libraries" in msg
    assert "srcad.defvjp(SPHERICAL_JN" in msg
    # on a value no gradient needs it just runs
    x = np.linspace(0, 1, 3)
    np.testing.assert_allclose(srcad.grad(bessel_on_shape)(x),
                               np.full(3, 3 * SPHERICAL_JN(0, 1.0)))


def closure_appends_to_enclosing_list(x):
    out = [x]

    def add(v):
        out.append(v * 2.0)  # (followed: closures.py returns the grown list from `add`)

    add(x)
    return np.sum(np.stack(out))


def aliased_literal_list(x):
    out = [x]
    alias = out
    out.append(x * 2.0)  # ERR
    return np.sum(np.stack(alias))


def appends_to_its_argument(out, v):
    out.append(v)
    return v


def passes_a_literal_to_be_changed(x):
    out = [x]
    appends_to_its_argument(out, x * 2.0)  # ERR
    return np.sum(np.stack(out))


def test_a_closure_appending_to_the_enclosing_list_is_followed():
    for mode in ("source", "tape"):
        g = srcad.grad(closure_appends_to_enclosing_list, mode=mode)(np.ones(3))
        np.testing.assert_allclose(g, np.full(3, 3.0))


@pytest.mark.parametrize("fn", [aliased_literal_list, passes_a_literal_to_be_changed])
def test_a_change_in_place_srcad_would_lose_is_refused(fn):
    """srcad holds a literal list as its items: an append to it elsewhere would be lost
    (it was, silently, before this refusal: the gradient of the appended item was missing)."""
    _refused(fn, (np.ones(3),), "in place", cls=UnsupportedSyntaxError)


def comprehension_in_branch(x):
    return np.sum(x ** 2) if x.ndim > 1 else sum([v * v for v in x])


def comprehension_after_or(x):
    return bool(x.ndim > 1 or sum([v for v in x]) > 0) * np.sum(x)


def test_comprehension_in_a_branch_of_a_conditional_expression_runs_when_chosen():
    """Refused until 2026-12-04 ("a comprehension in a branch"): the branch chosen runs as an
    `if` statement (pylower.py), so the comprehension runs only where Python runs it."""
    for x in (np.array([0.5, -1.5, 2.0]), np.array([[0.5, -1.5], [2.0, 0.25]])):
        for mode in ("source", "tape"):
            np.testing.assert_allclose(srcad.grad(comprehension_in_branch, mode=mode)(x),
                                       2 * x, rtol=1e-14)


def test_comprehension_python_might_not_evaluate_runs_where_python_runs_it():
    """Refused until the session of 2026-12-07, twelfth ("a comprehension in an operand
    after `and` / `or`"): the operand runs as an `if` statement into a name, only where the
    operands before it let Python run it (pylower.py; tests/test_tests_with_comprehensions.py
    checks the short circuit)."""
    for x, on in ((np.ones(3), 1.0), (-np.ones(3), 0.0), (np.ones((2, 2)), 1.0)):
        for mode in ("source", "tape"):
            np.testing.assert_allclose(srcad.grad(comprehension_after_or, mode=mode)(x),
                                       np.full(x.shape, on))


def recursive_closure(x):
    def down(v, n):
        return v if n == 0 else down(np.sin(v) * 0.5, n - 1)
    return np.sum(down(x, 2))


def recursive_closure_on_a_value(x):
    def down(v):
        return v if np.sum(v * v) < 0.1 else down(v * 0.5)  # ERR
    return np.sum(down(x))


def test_recursive_closure_of_static_depth_runs():
    """(one level per call, the depth fixed by the int argument: tests/test_forms23.py)"""
    check_grads(recursive_closure, (np.linspace(-1.0, 1.0, 3),), wrt=0)


def test_recursive_closure_on_a_value_is_refused():
    with pytest.raises(UnsupportedSyntaxError, match="recursion"):
        srcad.grad(recursive_closure_on_a_value)(np.ones(3))


# -- lambdas and bound methods ---------------------------------------------------------------------


square_sum = lambda x: np.sum(x ** 2)
pair = (lambda x: np.sum(np.sin(x)), lambda x: np.sum(np.sin(x) * 2.0))


def test_grad_of_a_lambda():
    x = np.linspace(-1, 1, 4)
    for mode in ("source", "tape"):
        np.testing.assert_allclose(srcad.grad(square_sum, mode=mode)(x), 2 * x)
        np.testing.assert_allclose(srcad.grad(pair[0], mode=mode)(x), np.cos(x))
        np.testing.assert_allclose(srcad.grad(pair[1], mode=mode)(x), 2 * np.cos(x))
    k = 3.0
    np.testing.assert_allclose(srcad.grad(lambda v: np.sum(v * k))(x), np.full(4, 3.0))
    assert "lambda_L" in srcad.source(srcad.grad(square_sum))


class Layer:
    def __init__(self, W):
        self.W = W

    def act(self, h):
        return np.tanh(h @ self.W)

    def loss(self, x):
        return np.sum(self.act(x) ** 2)


def test_grad_of_a_bound_method_reads_self_at_call_time():
    rng = np.random.default_rng(0)
    layer = Layer(rng.standard_normal((3, 3)))
    x = rng.standard_normal((2, 3))
    g = srcad.grad(layer.loss)
    for _ in range(2):
        expected = srcad.grad(lambda x, W: np.sum(np.tanh(x @ W) ** 2))(x, layer.W)
        np.testing.assert_allclose(g(x), expected, rtol=1e-12)
        assert np.array_equal(g(x), srcad.grad(layer.loss, mode="tape")(x))
        layer.W = layer.W * 0.5  # a new array: the next call sees it
    check_grads(layer.loss, (x,))


def test_wrt_self_is_refused_clearly():
    layer = Layer(np.eye(2))
    with pytest.raises(srcad.SrcadError, match="self"):
        srcad.grad(layer.loss, wrt="self")


# -- silently wrong on main: a branch that reassigns its own test ---------------------------------


def branch_resets_its_test(x):
    c = np.sum(x) > 0
    y = x * 1.0
    if c:
        y = x * 3.0
        c = False
    return np.sum(y) + c * 0.0


def first_flag_loop(x):
    first = True
    acc = x
    for k in (1.0, -2.0, 0.5):
        v = np.sum(x * k)
        if first:
            acc = v
            first = False
        elif v > acc:
            acc = v
    return acc


@pytest.mark.parametrize("fn", [branch_resets_its_test, first_flag_loop])
def test_branch_that_reassigns_its_test(fn):
    """The backward replays a branch under its test's value from when it ran (main read the
    value the branch left behind: dx was 1 instead of 3)."""
    x = np.linspace(0.2, 0.9, 3)
    check_grads(fn, (x,))
    assert np.array_equal(srcad.grad(fn)(x), srcad.grad(fn, mode="tape")(x))


# -- the generated helpers are rows of the table -------------------------------------------------------


def test_python_helpers_are_rows():
    for name in ("list_append", "head_grad", "last_grad", "grow_grad", "slot_tree",
                 "append_tangents", "appended_tangent", "dict_set", "key_grad", "key_tree",
                 "without_key", "keyed_tangent", "keys_tangent", "dict_keys"):
        op = srcad.ops.by_name(name)
        assert getattr(srcad.runtime, name) is op.fn


def test_items_and_slots_add_item_by_item():
    from srcad.runtime import GradTree, Items, Slots

    a = Items([np.ones(2), np.zeros(2)], zero={1})
    b = Items([np.ones(2), np.full(2, 3.0)])
    s = a + b
    assert isinstance(s, list) and len(s) == 2 and np.array_equal(s[0], [2.0, 2.0])
    assert s[1] is b[1]  # (a zero item costs nothing)
    assert np.array_equal((a + GradTree({1: np.ones(2)}, 2))[1], np.ones(2))
    d = Slots({"p": np.ones(2)}) + Slots({"p": np.ones(2), "q": np.ones(2)}, zero={"q"})
    assert np.array_equal(d["p"], [2.0, 2.0]) and "q" in d


# -- reverse over reverse -----------------------------------------------------------------------


def second_order(x):
    d = {"a": x, "b": np.sin(x)}
    assert d["a"].ndim == 0, "a scalar"
    g = lambda v: v * math.log(2.0) + float(d["a"].ndim)
    print("once per call")
    return g(d["a"] * d["b"]) + sum([x, x * x])


def test_grad_of_grad_through_dicts_lambdas_and_effects(capsys):
    x = np.float64(0.7)
    expected = math.log(2.0) * (2 * math.cos(0.7) - 0.7 * math.sin(0.7)) + 2.0
    np.testing.assert_allclose(srcad.grad(srcad.grad(second_order))(x), expected, rtol=1e-12)
    _, hv = srcad.jvp(srcad.grad(second_order), (x,), (np.float64(1.0),))
    np.testing.assert_allclose(hv, expected, rtol=1e-12)


def genexp_scalar(x):
    return sum(np.sin(x * k) for k in range(1, 4))


def appends_scalar(x):
    out = []
    for i in range(3):
        out.append(np.sin(x * (i + 1)))
    return np.sum(np.stack(out)) * math.log(2.0)


def pairs_scalar(x):
    ps = [(x, 2.0), (x * x, 3.0)]
    t = 0.0
    for a, c in ps:
        t = t + np.sum(a) * c
    return t


@pytest.mark.parametrize("fn", [genexp_scalar, appends_scalar, pairs_scalar])
def test_grad_of_grad_through_comprehensions_and_appends(fn):
    x, eps = np.float64(0.7), 1e-5
    g = srcad.grad(fn)
    fd = (g(x + eps) - g(x - eps)) / (2 * eps)
    np.testing.assert_allclose(srcad.grad(g)(x), fd, rtol=1e-7)
