"""srcad.defvjp: users' derivative rules, in the op table's own language.

A registered function is one op: srcad does not read its body (the bodies below use
try/except and unknown calls, which srcad would reject), and it uses the registered rule
even where that rule is not the true derivative (the rules below are deliberately off, so
the gradient shows which one ran). Rules for numpy functions srcad lacks are registered in
fixtures and removed afterwards (`srcad.ops.unregister`), so no other test sees them.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.ops import all_ops, lookup, unregister
from srcad.testing import check_grads, random_args

# ---------------------------------------------------------------------------------------------
# user functions registered as ops (at import, as a user would)
# ---------------------------------------------------------------------------------------------


def guarded_log(x):
    """A body srcad could not differentiate: try/except and a call srcad knows nothing of."""
    try:
        return np.log(x)
    except FloatingPointError:
        return undefined_fallback(x)  # noqa: F821  (never runs)


# Deliberately not the true derivative (1/x): the gradient shows which rule ran.
srcad.defvjp(guarded_log, lambda g, out, x: g * 5.0)


def scaled(x, k):
    with np.errstate(all="ignore"):
        return x * k


def scaled_vjp(g, out, x, k):
    """A rule written as a def with a single return."""
    return g * (k + 1.0)  # deliberately off by one


srcad.defvjp(scaled, scaled_vjp, None)


def uses_guarded_log(x):
    return np.sum(guarded_log(x) * 2.0)


def uses_scaled(x, k):
    return np.sum(scaled(x, k))


def test_registered_function_is_one_op_in_the_source():
    source = srcad.source(srcad.grad(uses_guarded_log))
    assert "guarded_log(x)" in source  # the forward calls it as one op ...
    assert "5.0" in source  # ... and the backward inlines its rule
    assert "try" not in source and "np.log" not in source and "undefined" not in source


def test_registered_row_is_a_users_not_the_tables():
    op = lookup(guarded_log)
    assert op is not None and op.name == "guarded_log" and op.spelling_src == "guarded_log(x)"
    assert op not in all_ops() and op in all_ops(user=True)
    assert lookup(scaled).vjps[1] is None and lookup(scaled).vjps[0].source == "g * (k + 1.0)"


def test_registered_function_runs_with_its_rule():
    x = np.linspace(0.5, 2.0, 4)
    np.testing.assert_array_equal(srcad.grad(uses_guarded_log)(x), np.full(4, 10.0))


def test_registered_function_with_a_none_rule_and_a_def_rule():
    x, k = np.linspace(-1.0, 1.0, 3), np.array([2.0, 3.0, 4.0])
    gx, gk = srcad.grad(uses_scaled, wrt=(0, 1))(x, k)
    np.testing.assert_array_equal(gx, k + 1.0)
    np.testing.assert_array_equal(gk, np.zeros(3))  # None: no gradient through scaled


# ---------------------------------------------------------------------------------------------
# numpy functions the table lacks, registered for one test each
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def register():
    """Register rules for the duration of one test."""
    done = []

    def reg(fn, *rules, **meta):
        op = srcad.defvjp(fn, *rules, **meta)
        done.append(fn)
        return op

    yield reg
    for fn in done:
        unregister(fn)


def hypot_sum(x, y):
    return np.sum(np.hypot(x, y) * np.tanh(x))


def arctan2_sum(y, x):
    return np.sum(np.arctan2(y, x))


def sinc_sum(x):
    return np.sum(np.sinc(x) ** 2)


def arcsinh_sum(x):
    return np.sum(np.arcsinh(x))


def tanh_sum(x):
    return np.sum(np.tanh(x))


def sinc_vjp(g, out, x):
    """d sinc(x) / dx = (cos(pi x) - sinc(x)) / x."""
    return g * (np.cos(np.pi * x) - out) / x


def inv_sqrt_1p_square(x):
    return 1 / np.sqrt(1 + x * x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_two_rules_for_a_ufunc_are_unbroadcast(register, dtype):
    op = register(np.hypot, lambda g, out, x, y: g * x / out, lambda g, out, x, y: g * y / out)
    assert op.broadcasting  # a two-input ufunc broadcasts: its rules need not say so
    x, y = random_args([(2, 3, 4), (3, 1)], dtype, rng=0, domain=(0.5, 2.0))
    check_grads(hypot_sum, (x, y), wrt=(0, 1))


def test_none_rule_gives_no_gradient(register):
    register(np.arctan2, lambda g, out, y, x: g * x / (x * x + y * y), None)
    y, x = random_args([(3, 4), (4,)], np.float64, rng=1, domain=(0.5, 2.0))
    check_grads(arctan2_sum, (y, x), wrt=0)
    gy, gx = srcad.grad(arctan2_sum, wrt=(0, 1))(y, x)
    np.testing.assert_array_equal(gx, np.zeros(4))
    assert gy.shape == (3, 4)


def test_def_rule_with_a_single_return(register):
    op = register(np.sinc, sinc_vjp)
    assert op.vjps[0].source == "g * (np.cos(np.pi * x) - out) / x"
    assert op.saved == {"x", "out"}
    (x,) = random_args([(5,)], np.float64, rng=2, domain=(0.3, 0.9))
    check_grads(sinc_sum, (x,))


def test_rule_may_call_helpers_of_its_own_module(register):
    register(np.arcsinh, lambda g, out, x: g * inv_sqrt_1p_square(x))
    (x,) = random_args([(2, 3)], np.float64, rng=3)
    check_grads(arcsinh_sum, (x,))
    assert "inv_sqrt_1p_square(x)" in srcad.source(srcad.grad(arcsinh_sum))


def test_a_users_rule_overrides_the_table_and_unregister_restores_it(register):
    row = lookup(np.tanh)
    register(np.tanh, lambda g, out, x: g * 7.0)  # deliberately wrong
    x = np.linspace(-1, 1, 3)
    np.testing.assert_array_equal(srcad.grad(tanh_sum)(x), np.full(3, 7.0))
    unregister(np.tanh)
    assert lookup(np.tanh) is row and row in all_ops()


def arcsinh_mean(x):
    return np.mean(np.arcsinh(x)) * 2.0


def test_the_rule_is_used_not_the_true_derivative(register):
    register(np.arcsinh, lambda g, out, x: g * 3.0)  # deliberately wrong
    np.testing.assert_array_equal(srcad.grad(arcsinh_mean)(np.zeros(2)), [3.0, 3.0])


def arcsinh_twice(x):
    return np.sum(np.arcsinh(x))


def test_a_new_rule_applies_to_later_transforms(register):
    register(np.arcsinh, lambda g, out, x: g * 3.0)
    assert srcad.grad(arcsinh_twice)(np.zeros(1))[0] == 3.0
    register(np.arcsinh, lambda g, out, x: g * 4.0)
    assert srcad.grad(arcsinh_twice)(np.zeros(1))[0] == 4.0


# ---------------------------------------------------------------------------------------------
# malformed rules: a SrcadError at registration, and nothing registered
# ---------------------------------------------------------------------------------------------


def one_arg(x):
    return x


def two_args(x, y):
    return x + y


def two_statement_rule(g, out, x):
    h = g * 2
    return h


def kw_only_rule(g, out, *, x):
    return g


BAD = [
    (one_arg, (lambda g, x: g,), "start with (g, out"),
    (one_arg, (lambda out, g, x: g,), "start with (g, out"),
    (one_arg, (lambda g, out, x, y: g,), "positional argument"),
    (two_args, (lambda g, out, x: g,), "positional argument"),
    (two_args, (lambda g, out, x, y: g, lambda g, out, a, b: g), "same parameter list"),
    (two_args, (lambda g, out, x, y: g, None, None), "3 rules"),
    (one_arg, (lambda g, out, *x: g,), "plain parameters"),
    (one_arg, (kw_only_rule,), "plain parameters"),
    (one_arg, (two_statement_rule,), "single return"),
    (one_arg, ("g * 2",), "lambda or function"),
]


@pytest.mark.parametrize("fn, rules, message", BAD,
                         ids=["missing-out", "out-first", "too-many", "too-few",
                              "different-names", "too-many-rules", "star-args", "kw-only",
                              "two-statements", "not-a-function"])
def test_malformed_rules_are_srcad_errors(fn, rules, message):
    with pytest.raises(srcad.SrcadError) as info:
        srcad.defvjp(fn, *rules)
    assert message in str(info.value)
    assert lookup(fn) is None


def test_unknown_option_is_a_srcad_error():
    with pytest.raises(srcad.SrcadError, match="unknown option"):
        srcad.defvjp(one_arg, lambda g, out, x: g, elementwize=True)
    assert lookup(one_arg) is None
