"""Odd inputs (issue 21, item 4): the right answer, or a `SrcadError` naming the user's line.

Each class was a crash or a wrong answer: a list output's tangent came back a tuple, x ** 0
at x = 0 raised ZeroDivisionError (nan for a numpy scalar), np.mean of an empty array
divided by zero, an object-array argument reached `np.object`, a big-endian argument made
generated code spell `np.>f8`. Gradients are checked against central differences and, where
torch has the op, against torch autograd (a test-only oracle).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import srcad
from srcad.testing import check_grads, numerical_grad

torch.set_num_threads(1)


def _quiet(fn, *args, **kwargs):
    """fn(*args) with numpy's floating-point warnings silenced (inf / nan are the point)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)


def _same(a, b):
    """Equal values (NaN equal to NaN), shapes and dtypes."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_array_equal(a, b)


# -- 1. jvp keeps the output's containers ----------------------------------------------------

def out_list(x):
    return [x, x]


def out_tuple(x):
    return x, 2.0 * x


def out_nested(x):
    return (x, [x * 2.0, (x, np.sin(x))])


def out_dict(x):
    return {"a": x, "b": [x, x * 3.0], "c": 2.0}


def out_list_var(x):
    y = [x, np.tanh(x)]
    return y


def out_list_loop(x):
    out = []
    for i in range(3):
        out.append(x * i)
    return out


def _structure(v):
    """The container skeleton of a value: types and keys, leaves as '.'."""
    if isinstance(v, dict):
        return (type(v), tuple((k, _structure(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return (type(v), tuple(_structure(x) for x in v))
    return "."


@pytest.mark.parametrize("fn", [out_list, out_tuple, out_nested, out_dict, out_list_var,
                                out_list_loop])
@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("x", [1.5, np.array([0.5, -1.0])])
def test_jvp_keeps_output_containers(fn, mode, x):
    out, tan = srcad.jvp(fn, (x,), (np.ones_like(x),), mode=mode)
    assert _structure(out) == _structure(fn(x))
    assert _structure(tan) == _structure(out)  # list stays list, dict a plain dict


def test_jvp_list_tangent_values():
    out, tan = srcad.jvp(out_list_var, (0.3,), (2.0,))
    assert type(tan) is list
    np.testing.assert_allclose(tan, [2.0, 2.0 * (1 - np.tanh(0.3) ** 2)])


# -- 2. x ** p at x = 0 ---------------------------------------------------------------------

def pow_0(x):
    return np.sum(np.power(x, 0.0))


def pow_0_int(x):
    return np.sum(x ** 0)


def pow_1(x):
    return np.sum(x ** 1.0)


def pow_2(x):
    return np.sum(x ** 2.0)


def pow_2_int(x):
    return np.sum(x ** 2)


def pow_3_int(x):
    return np.sum(x ** 3)


def pow_half(x):
    return np.sum(x ** 0.5)


def pow_neg(x):
    return np.sum(x ** -1)


POWERS = {pow_0: 0.0, pow_0_int: 0, pow_1: 1.0, pow_2: 2.0, pow_2_int: 2, pow_3_int: 3,
          pow_half: 0.5, pow_neg: -1}


def _torch_pow_grads(x, p):
    """torch's first and second derivative of sum(x ** p) at x (float64)."""
    t = torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
    (g,) = torch.autograd.grad(torch.sum(t ** p), t, create_graph=True)
    if g.requires_grad:
        (h,) = torch.autograd.grad(torch.sum(g), t, allow_unused=True)
    else:  # (x ** 0: torch's gradient is a constant zero, with no graph)
        h = None
    h = torch.zeros_like(t) if h is None else h
    return g.detach().numpy(), h.detach().numpy()


POW_XS = [0.0, np.float64(0.0), np.array(0.0), np.array([0.0, 1.5, 2.0, 0.0])]


@pytest.mark.parametrize("fn", list(POWERS), ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", POW_XS, ids=["float", "np.float64", "0-d", "array"])
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_power_at_zero_matches_torch(fn, x, mode):
    p = POWERS[fn]
    if type(x) is float and p < 0:  # the user's own 0.0 ** -1 raises in Python: said so
        # (tape mode runs the user's code as it is, and lets its exceptions through; source
        # mode says where, in a SrcadError that is also the ZeroDivisionError: user_error)
        with pytest.raises(ZeroDivisionError,
                           match="ZeroDivisionError in pow_neg" if mode == "source" else None):
            srcad.grad(fn, mode=mode)(x)
        return
    want, want2 = _torch_pow_grads(x, p)
    got = _quiet(srcad.grad(fn, mode=mode), x)
    _close(got, want)
    assert np.shape(got) == np.shape(x)
    # forward mode: the directional derivative along ones is the sum of the gradient
    _, tan = _quiet(srcad.jvp, fn, (x,), (np.ones_like(x),), mode=mode)
    _close(tan, np.sum(want))
    # second order: forward over reverse (the Hessian is diagonal: H @ ones is torch's h),
    # and reverse over reverse for a scalar
    _, hv = _quiet(srcad.jvp, srcad.grad(fn, mode=mode), (x,), (np.ones_like(x),))
    _close(hv, want2)
    if np.ndim(x) == 0 and mode == "source":
        _close(_quiet(srcad.grad(srcad.grad(fn)), x), want2)


def _close(got, want):
    """Equal to torch up to the last bits (numpy and torch round x ** -0.5 differently);
    infinities and NaNs where torch has them."""
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=1e-15, atol=0)


@pytest.mark.parametrize("fn", list(POWERS), ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_power_fused_bitwise_unfused(fn, dtype):
    x = np.linspace(0.0, 3.0, 300).astype(dtype)
    x[::7] = 0.0
    unfused = _quiet(srcad.grad(fn), x)
    fused = _quiet(srcad.grad(fn, fuse=True), x)
    tape = _quiet(srcad.grad(fn, mode="tape"), x)
    assert unfused.dtype == dtype and fused.dtype == dtype
    assert unfused.tobytes() == fused.tobytes()
    np.testing.assert_array_equal(tape, unfused)
    want, _ = _torch_pow_grads(x, POWERS[fn])
    np.testing.assert_allclose(unfused, want.astype(dtype), rtol=1e-6)


def pow_xy(x, y):
    return np.sum(x ** y)


def test_power_array_exponent_with_zeros():
    x = np.array([0.0, 0.0, 0.0, 0.0, 1.5, 2.0, 0.0])
    y = np.array([0.0, 1.0, 2.0, 0.5, 0.0, 3.0, 3.0])
    gx, gy = _quiet(srcad.grad(pow_xy, wrt=(0, 1)), x, y)
    tx, ty = (torch.tensor(v, requires_grad=True) for v in (x, y))
    wx, wy = torch.autograd.grad(torch.sum(tx ** ty), (tx, ty))
    np.testing.assert_array_equal(gx, wx.numpy())
    np.testing.assert_allclose(gy, wy.numpy(), rtol=1e-12)
    fx, fy = _quiet(srcad.grad(pow_xy, wrt=(0, 1), fuse=True), np.tile(x, 50), np.tile(y, 50))
    ux, uy = _quiet(srcad.grad(pow_xy, wrt=(0, 1)), np.tile(x, 50), np.tile(y, 50))
    assert fx.tobytes() == ux.tobytes() and fy.tobytes() == uy.tobytes()
    tgx, tgy = _quiet(srcad.grad(pow_xy, wrt=(0, 1), mode="tape"), x, y)
    np.testing.assert_array_equal(tgx, gx)
    np.testing.assert_array_equal(tgy, gy)


def test_power_away_from_zero_central_differences():
    x = np.array([0.3, 1.2, 2.0])
    y = np.array([0.0, 1.0, 2.5])
    check_grads(pow_xy, (x, y), wrt=(0, 1))
    check_grads(pow_xy, (x, y), wrt=(0, 1), mode="tape")
    for fn in POWERS:
        check_grads(fn, (x,))
        check_grads(fn, (1.7,))


def test_power_no_spurious_warning_for_zeroth_power():
    x = np.array([0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        np.testing.assert_array_equal(srcad.grad(pow_0)(x), [0.0, 0.0])
        assert srcad.grad(pow_0)(0.0) == 0.0


# -- 3. reductions of empty arrays ----------------------------------------------------------

def mean_all(x):
    return np.mean(x)


def mean_axis1_sum(x):
    return np.sum(np.mean(x, axis=1))


def mean_axis0_sum(x):
    return np.sum(np.mean(x, axis=0) * 0.0)  # nan * 0 is nan: the value, not the gradient


def var_all(x):
    return np.var(x)


def std_axis1_sum(x):
    return np.sum(np.std(x, axis=1))


EMPTY_CASES = [(mean_all, (0,)), (mean_all, (2, 0)), (mean_axis1_sum, (3, 0)),
               (mean_axis0_sum, (0, 3)), (var_all, (0,)), (std_axis1_sum, (3, 0))]


@pytest.mark.parametrize("fn,shape", EMPTY_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("opts", [{}, {"mode": "tape"}, {"fuse": True}], ids=str)
def test_empty_reductions(fn, shape, opts):
    x = np.zeros(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value, g = srcad.value_and_grad(fn, **opts)(x)
        want = fn(x)
    _same(value, want)
    _same(g, np.zeros_like(x))
    t = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    tfn = {mean_all: torch.mean, var_all: lambda t: torch.var(t, correction=0)}.get(fn)
    if tfn is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            (tg,) = torch.autograd.grad(tfn(t), t)
        assert tuple(tg.shape) == g.shape


def test_empty_mean_jvp():
    x = np.zeros((2, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out, tan = srcad.jvp(mean_axis1_sum, (x,), (x,))
    assert np.isnan(tan) or tan == 0.0  # numpy's mean of an empty tangent: nan, as the value


# -- 4. object arrays -----------------------------------------------------------------------

def obj_mul(x, y):
    return np.sum(x * y)


def obj_scaled(x, y):
    return np.sum(x * 2.0) + np.sum(np.tanh(y))


OBJ = np.array([1.0, 2.0], dtype=object)
Y = np.array([0.5, -1.5])


@pytest.mark.parametrize("opts", [{}, {"mode": "tape"}, {"fuse": True}], ids=str)
def test_object_array_wrt_is_a_clear_error(opts):
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(obj_mul, **opts)(OBJ, Y)
    msg = str(e.value)
    assert "object array" in msg and "obj_mul" in msg and "test_odd_inputs.py" in msg
    assert "AttributeError" not in msg


@pytest.mark.parametrize("opts", [{}, {"mode": "tape"}, {"fuse": True}], ids=str)
def test_object_array_not_differentiated_runs_as_written(opts):
    for fn in (obj_mul, obj_scaled):
        want = srcad.grad(fn, wrt=1, **opts)(OBJ.astype(float), Y)
        got = srcad.grad(fn, wrt=1, **opts)(OBJ, Y)
        np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-15)
        value, got = srcad.value_and_grad(fn, wrt=1, **opts)(OBJ, Y)
        np.testing.assert_allclose(float(value), fn(OBJ, Y))
        np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-15)
    out, pullback = srcad.vjp(obj_mul, OBJ, Y, **opts)
    gx, gy = pullback(1.0)
    assert gx is None
    np.testing.assert_allclose(np.asarray(gy, dtype=float), OBJ.astype(float))
    out, tan = srcad.jvp(obj_mul, (OBJ, Y), (OBJ, np.ones(2)), **opts)
    assert float(tan) == 3.0


# -- 5. non-native byte order ---------------------------------------------------------------

def be_loss(x, w):
    return np.sum(np.tanh(x * w) ** 2) + np.sum(x * x)


def be_vec(x):
    return np.tanh(x) * 3.0


@pytest.mark.parametrize("order", [">f8", ">f4", "<f8"])
@pytest.mark.parametrize("opts", [{}, {"mode": "tape"}, {"fuse": True}], ids=str)
def test_big_endian_arguments(order, opts):
    rng = np.random.default_rng(0)
    native = rng.standard_normal((4, 70)).astype(np.dtype(order).newbyteorder("="))
    wn = rng.standard_normal(70).astype(native.dtype)
    x, w = native.astype(order), wn.astype(order)
    assert x.dtype.str.endswith(order[1:]) and (x == native).all()
    want = srcad.grad(be_loss, wrt=(0, 1), **opts)(native, wn)
    got = srcad.grad(be_loss, wrt=(0, 1), **opts)(x, w)
    for g, a, ref in zip(got, (x, w), want):
        assert g.dtype == a.dtype  # the argument's dtype, byte order too (as np.zeros_like)
        assert g.shape == a.shape
        np.testing.assert_array_equal(g, ref)
    value, got = srcad.value_and_grad(be_loss, wrt=(0, 1), **opts)(x, w)
    assert float(value) == float(be_loss(native, wn))
    assert all(g.dtype == a.dtype for g, a in zip(got, (x, w)))
    out, pullback = srcad.vjp(be_vec, x, **opts)
    (gv,) = pullback(np.ones(x.shape, dtype=x.dtype))
    assert gv.dtype == x.dtype
    np.testing.assert_array_equal(gv, 3.0 * (1 - np.tanh(native) ** 2))
    out, tan = srcad.jvp(be_vec, (x,), (np.ones_like(x),), **opts)
    np.testing.assert_array_equal(tan, 3.0 * (1 - np.tanh(native) ** 2))


def test_big_endian_central_differences():
    x = np.linspace(-1.0, 1.0, 5).astype(">f8")
    w = np.linspace(0.5, 1.5, 5).astype(">f8")
    check_grads(be_loss, (x, w), wrt=(0, 1))
    check_grads(be_loss, (x, w), wrt=(0, 1), fuse=True)
    check_grads(be_loss, (x, w), wrt=(0, 1), mode="tape")
    g = numerical_grad(be_loss, (x, w), wrt=0)
    np.testing.assert_allclose(srcad.grad(be_loss)(x, w), g, rtol=1e-6)


# -- 6. neighbours: float16, scalars of each kind, int arguments, empty and strided arrays --

def smooth(x):
    return np.sum(np.tanh(x) * x ** 2 + np.sqrt(x * x + 1.0))


def int_power(x, n):
    return np.sum(x ** n) * n


def first_k(x, k):
    return np.sum(x[:k] * 2.0)


def empty_ops(x, W):
    return np.sum(np.tanh(x @ W)) + np.sum(x * x) + np.sum(np.exp(x), axis=0).sum()


def strided_loss(x, W):
    return np.sum(np.tanh(x @ W) * x[:, :1])


OPTS = [{}, {"mode": "tape"}, {"fuse": True}]


@pytest.mark.parametrize("opts", OPTS, ids=str)
def test_float16_arguments(opts):
    x = np.linspace(-1.0, 1.0, 300).astype(np.float16)
    g = srcad.grad(smooth, **opts)(x)
    assert g.dtype == np.float16 and g.shape == x.shape
    want = numerical_grad(smooth, (x.astype(np.float64),))
    np.testing.assert_allclose(g.astype(np.float64), want, rtol=1e-2, atol=1e-2)
    gs = srcad.grad(smooth, **opts)(np.float16(0.5))
    assert isinstance(gs, np.float16)


@pytest.mark.parametrize("opts", OPTS, ids=str)
def test_scalar_kinds_agree(opts):
    """A Python float, a numpy scalar and a 0-d array: one value, each gradient its own kind."""
    want = numerical_grad(smooth, (0.5,))
    for x, kind in ((0.5, float), (np.float64(0.5), np.float64), (np.array(0.5), np.ndarray),
                    (np.float32(0.5), np.float32), (np.array(0.5, np.float32), np.ndarray)):
        g = srcad.grad(smooth, **opts)(x)
        assert isinstance(g, kind), (type(x), type(g))
        assert np.result_type(g) == np.result_type(x)
        np.testing.assert_allclose(float(g), want, rtol=1e-6 if np.result_type(x) == np.float64
                                   else 1e-5)


@pytest.mark.parametrize("opts", OPTS, ids=str)
def test_int_arguments_not_differentiated(opts):
    x = np.array([0.5, 2.0, -1.0])
    for n in (3, np.int64(3)):
        check_grads(int_power, (x, n), **opts)
    check_grads(first_k, (x, 2), **opts)
    with pytest.raises(srcad.SrcadError, match="with respect to `n`, an int"):
        srcad.grad(int_power, wrt=1, **opts)(x, 3)


@pytest.mark.parametrize("opts", OPTS, ids=str)
@pytest.mark.parametrize("xs,ws", [((0, 3), (3, 2)), ((4, 0), (0, 2)), ((4, 3), (3, 0))])
def test_empty_arrays_through_ops(opts, xs, ws):
    x, W = np.zeros(xs), np.ones(ws)
    gx, gW = srcad.grad(empty_ops, wrt=(0, 1), **opts)(x, W)
    tx = torch.zeros(xs, dtype=torch.float64, requires_grad=True)
    tW = torch.ones(ws, dtype=torch.float64, requires_grad=True)
    loss = (torch.sum(torch.tanh(tx @ tW)) + torch.sum(tx * tx)
            + torch.sum(torch.exp(tx), dim=0).sum())
    wx, wW = torch.autograd.grad(loss, (tx, tW))
    _same(gx, wx.numpy())
    _same(gW, wW.numpy())


@pytest.mark.parametrize("opts", OPTS, ids=str)
def test_non_contiguous_arguments(opts):
    rng = np.random.default_rng(3)
    W = rng.standard_normal((6, 4))
    for x in (rng.standard_normal((6, 5)).T, rng.standard_normal((10, 12))[::2, ::2]):
        assert not x.flags.c_contiguous
        got = srcad.grad(strided_loss, wrt=(0, 1), **opts)(x, W)
        want = srcad.grad(strided_loss, wrt=(0, 1), **opts)(np.ascontiguousarray(x), W)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        check_grads(strided_loss, (x, W), wrt=(0, 1), **opts)
