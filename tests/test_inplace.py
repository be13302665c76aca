"""In-place writes and views: differentiable where copy-on-write equals numpy, an error where
it would not, and never a silently wrong gradient."""

import numpy as np
import pytest
import torch

import srcad
from srcad.testing import check_grads
from tests import fixtures_inplace as F

rng = np.random.default_rng(0)
X, V4, V3 = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(3)


@pytest.mark.parametrize("fn, args, wrt", [
    (F.setrow, (X, V4), (0, 1)),
    (F.augrow, (X, V3), (0, 1)),
    (F.mask_zero, (X,), 0),
    (F.loop_set, (V3, 4), 0),
    (F.views_read_before_write, (X,), 0),
], ids=lambda v: getattr(v, "__name__", ""))
def test_subscript_assignment_is_differentiable(fn, args, wrt):
    check_grads(fn, args, wrt=wrt)


@pytest.mark.parametrize("fn, args", [(F.setrow, (X, V4)), (F.augrow, (X, V3)),
                                      (F.mask_zero, (X,))], ids=lambda v: getattr(v, "__name__", ""))
def test_tape_agrees_bitwise(fn, args):
    wrt = tuple(range(len(args)))
    a = srcad.grad(fn, wrt=wrt)(*args)
    b = srcad.grad(fn, wrt=wrt, mode="tape")(*args)
    for x, y in zip(a, b):
        assert np.array_equal(x, y)


def test_seed_scenario_in_place_after_save_is_right():
    """An in-place write into a value the backward needs (tanh's output) gets its own copy:
    the gradient is right, where a framework that wrote into the saved array would train
    on a silently wrong one."""
    x, W = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    dW = srcad.grad(F.relu_inplace_scenario, wrt=1)(x, W)
    xt, Wt = torch.tensor(x), torch.tensor(W, requires_grad=True)
    a = torch.tanh(xt @ Wt)
    a = torch.where(a < 0, a * 0.1, a)
    torch.sum(a * a).backward()
    np.testing.assert_allclose(dW, Wt.grad.numpy(), rtol=1e-12)


def test_writing_into_a_parameter_leaves_the_callers_array_alone():
    x = X.copy()
    with pytest.warns(UserWarning, match="writes into its argument `x` in place") as w:
        g = srcad.grad(F.write_param)(x, 7.0)
    assert w[0].filename.endswith("fixtures_inplace.py") and w[0].lineno == 32
    np.testing.assert_array_equal(x, X)  # copy on write (JAX semantics), documented
    expected = 2 * x
    expected[0] = 0.0
    np.testing.assert_allclose(g, expected)


ALIASING = [F.view_then_write, F.alias_then_write, F.write_into_view,
            F.augassign_into_view, F.sibling_views, F.transpose_then_augassign,
            F.view_written_in_loop, F.view_made_in_loop, F.view_written_in_branch,
            F.write_into_transpose, F.write_into_swapaxes_in_loop, F.chained_views,
            F.loop_writes_rows_of_a_buffer, F.advanced_index_is_a_copy]


@pytest.mark.parametrize("fn", ALIASING, ids=lambda f: f.__name__)
def test_numpy_aliasing(fn):
    """A write through a view (basic index, transpose, swapaxes, alias) shows in its base and
    the base's other views, in straight-line code, loops and branches: the value is numpy's,
    and the gradient is the derivative of what numpy computes."""
    x = rng.standard_normal((3, 4)) if fn is not F.transpose_then_augassign else X @ X.T
    value, _ = srcad.value_and_grad(fn)(x.copy())
    assert value == fn(x.copy())
    check_grads(fn, (x,))


@pytest.mark.parametrize("fn", ALIASING, ids=lambda f: f.__name__)
def test_numpy_aliasing_in_tape_mode(fn):
    """Tape mode follows numpy's views too, and agrees with source mode bit for bit."""
    x = rng.standard_normal((3, 4)) if fn is not F.transpose_then_augassign else X @ X.T
    v_src, g_src = srcad.value_and_grad(fn)(x.copy())
    v_tape, g_tape = srcad.value_and_grad(fn, mode="tape")(x.copy())
    assert v_tape == fn(x.copy())
    assert v_src == v_tape and np.array_equal(g_src, g_tape)


@pytest.mark.parametrize("fn, args, name", [
    (F.write_into_reshape, (X,), "r"),
    (F.write_through_unknown_index, (X, 1), "r"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_write_seen_through_an_unknown_view_is_an_error(fn, args, name):
    """A reshape may or may not be a view (by memory layout), an index held in a name may be
    an int or an array: srcad cannot match numpy statically, and says so."""
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(fn)(*args)
    msg = str(e.value)
    assert "shares its memory" in msg and "fixtures_inplace.py" in msg
    assert f"`{name}" in msg or "`y" in msg


def test_vjp_detects_an_argument_changed_before_the_pullback():
    x, W = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    out, pullback = srcad.vjp(F.vector_out, x, W)
    W[0, 0] += 1.0  # the backward reads W (dx = g (1 - out^2) W^T)
    with pytest.raises(srcad.SrcadError, match="argument `W`"):
        pullback(np.ones_like(out))


def test_vjp_detects_the_output_changed_before_the_pullback():
    x, W = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    out, pullback = srcad.vjp(F.vector_out, x, W)
    out *= 2.0
    with pytest.raises(srcad.SrcadError, match="the output"):
        pullback(np.ones_like(out))


def test_vjp_untouched_arguments_pass():
    x, W = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    out, pullback = srcad.vjp(F.vector_out, x, W)
    dx, dW = pullback(np.ones_like(out))
    assert dx.shape == x.shape and dW.shape == W.shape


def test_writing_into_a_parameter_through_a_view_warns_too():
    with pytest.warns(UserWarning, match="argument `x`"):
        srcad.grad(F.write_param_through_view)(X.copy())


def test_writing_into_a_copy_of_a_parameter_does_not_warn():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        srcad.grad(F.setrow, wrt=(0, 1))(X, V4)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_writing_a_key_of_a_dict_argument_does_not_warn(mode):
    """`bn_param["running_mean"] = ...` writes into the caller's dict, as Python does: no
    warning that the caller's array is left unchanged (it warned: the key was an index of one
    part, not read as a string)."""
    import warnings

    for _ in range(2):
        bn_param, expected = {}, {}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            srcad.grad(F.keep_running_mean, mode=mode)(X, bn_param)
        F.keep_running_mean(X, expected)
        assert np.array_equal(bn_param["running_mean"], expected["running_mean"])


def stacked_then_written(u):
    v = u * u
    s = np.stack((v, u))  # reads v's value before the writes below
    v += v
    v *= np.sum(s)
    return np.sum(np.tanh(v)) + np.sum(s * s)


def test_tape_write_after_a_list_argument_read_the_old_value():
    """Found by tests/test_fuzz_pytrees.py: tape mode moved an earlier op's reference to the
    old value only where the op took it directly, not inside a list (np.stack((v, u))), so
    the stack's cotangent went to the written value: silently wrong (2.4 for 9.4)."""
    u = rng.standard_normal(3)
    for mode in ("source", "tape"):
        check_grads(stacked_then_written, (u,), mode=mode)
    assert np.array_equal(srcad.grad(stacked_then_written)(u),
                          srcad.grad(stacked_then_written, mode="tape")(u))


def _head(u):
    return u[:2]


def _layer(h, w):
    return np.tanh(h * w)


def _pair(u):
    return u * 2.0, u.T


def view_from_a_call(x):
    v = x * 2.0
    h = _head(v)
    v *= 3.0
    return np.sum(h * h)


def view_from_a_call_unpacked(x):
    v = x * 2.0
    a, b = _pair(v)
    v += 1.0
    return np.sum(a) + np.sum(b * b)


def fresh_from_a_call(x, w):
    h = x * 2.0
    y = _layer(h, w)
    h += 1.0
    y += h
    return np.sum(y * y) + np.sum(w)


@pytest.mark.parametrize("fn", [view_from_a_call, view_from_a_call_unpacked])
def test_a_view_returned_by_a_call_sees_a_later_write(fn):
    """Found by tests/test_fuzz_pytrees.py: `h = head(v)` with head returning `u[:2]`, then
    `v *= 3`: numpy's h sees the write; srcad's copy-on-write did not (value 20 for 180, and
    its gradient): silently wrong. srcad now knows what a function returns a view of, and
    refuses where numpy's sharing would matter."""
    with pytest.raises(srcad.SrcadError, match="shares its memory"):
        srcad.grad(fn)(np.arange(1.0, 4.0))


def test_a_fresh_result_of_a_call_allows_writes():
    x, w = rng.standard_normal(3), rng.standard_normal(3)
    check_grads(fresh_from_a_call, (x, w), wrt=(0, 1))


def aug_mixed_dtype(x, y):
    a = x * 2.0
    a += y
    return np.sum(a)


def test_augmented_assignment_that_numpy_would_cast_is_refused():
    """numpy's `a += y` writes into a's memory: a float32 a stays float32 with a float64 y,
    where copy-on-write `a = a + y` gave float64 (a silently different value); a result
    broadcast beyond a's shape is numpy's ValueError, where srcad rebound a. Both refused."""
    x32, y64 = np.ones(3, np.float32), np.ones(3)
    for mode in ("source", "tape"):
        with pytest.raises(srcad.SrcadError, match="cast the result back"):
            srcad.grad(aug_mixed_dtype, mode=mode)(x32, y64)
        with pytest.raises((srcad.SrcadError, ValueError), match="non-broadcastable"):
            srcad.grad(aug_mixed_dtype, mode=mode)(np.ones(3), np.ones((2, 3)))
    check_grads(aug_mixed_dtype, (np.ones(3), np.ones(3)), wrt=(0, 1))


def _fill_columns(w, x):
    out = np.zeros((x.shape[0], 3))
    for j in range(3):
        out[:, j] = x @ w[:, j] + j
    return np.sum(out ** 2)


def _fill_repeated(v):
    out = np.zeros(4)
    out[np.array([1, 1, 2])] = v  # position 1 written twice: the last write wins
    return np.sum(out * np.arange(4.0))


def test_basic_index_writes_drop_last_writes_and_keep_the_gradient():
    """`out[:, j] = v` with a slice and a loop counter writes no position twice, so the
    specialised source hands the cotangent through without `last_writes` (issue 25: a
    helper call per iteration); an integer-array index keeps it. Gradients: tape mode's bit
    for bit, and central differences."""
    w, x = rng.standard_normal((4, 3)), rng.standard_normal((5, 4))
    g = srcad.grad(_fill_columns, wrt=0)
    got = g(w, x)
    assert "last_writes" not in srcad.source(g)
    assert np.array_equal(got, srcad.grad(_fill_columns, wrt=0, mode="tape")(w, x))
    check_grads(_fill_columns, (w, x), wrt=0)
    v = rng.standard_normal(3)
    g2 = srcad.grad(_fill_repeated)
    assert "last_writes" in srcad.source(g2)
    np.testing.assert_array_equal(g2(v), [0.0, 1.0, 2.0])  # the first write to 1 is lost
