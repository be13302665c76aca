"""The pinned public API: call forms, wrt, value_and_grad, vjp, source, caching, determinism."""

import linecache
import traceback

import numpy as np
import pytest

import srcad
from srcad import api, transformed
from srcad.testing import check_grads, numerical_grad
from tests import fixtures_api as F


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((5, 3)), rng.standard_normal(3), rng.standard_normal((4, 5)),
            rng.standard_normal((4, 3)))


def reference(W, b, x, y):
    """Hand-written backward of F.loss."""
    h = np.tanh(x @ W + b)
    dh = 2 * (h - y) / h.size
    dz = dh * (1 - h * h)
    return x.T @ dz, dz.sum(0)


def test_call_forms_agree(data):
    dW_ref, db_ref = reference(*data)
    g1 = srcad.grad(F.loss)(*data)
    g2 = srcad.grad(wrt=(0, 1))(F.loss)(*data)
    g3 = srcad.grad(F.loss, wrt=("W", "b"))(*data)
    g4 = srcad.grad(F.loss, wrt=(-4, "b"))(*data)
    np.testing.assert_allclose(g1, dW_ref, rtol=1e-12)
    for g in (g2, g3, g4):
        np.testing.assert_allclose(g[0], dW_ref, rtol=1e-12)
        np.testing.assert_allclose(g[1], db_ref, rtol=1e-12)
    assert isinstance(g2, tuple) and len(g2) == 2


def test_decorator_forms(data):
    @srcad.grad
    def f(W, b, x, y):
        return np.mean((np.tanh(x @ W + b) - y) ** 2)

    np.testing.assert_allclose(f(*data), reference(*data)[0], rtol=1e-12)
    assert f.__name__ == "f" and list(__import__("inspect").signature(f).parameters) == [
        "W", "b", "x", "y"]

    g = srcad.grad(wrt="b")(F.loss)
    np.testing.assert_allclose(g(*data), reference(*data)[1], rtol=1e-12)


def test_single_wrt_by_name_and_keyword_call(data):
    W, b, x, y = data
    g = srcad.grad(F.loss, wrt="b")
    np.testing.assert_allclose(g(W, b, x=x, y=y), reference(*data)[1], rtol=1e-12)


def test_value_and_grad(data):
    value, (dW, db) = srcad.value_and_grad(F.loss, wrt=(0, 1))(*data)
    assert value == F.loss(*data)
    np.testing.assert_allclose(dW, reference(*data)[0], rtol=1e-12)


def test_default_arguments_are_used():
    x = np.linspace(-1, 1, 7)
    np.testing.assert_allclose(srcad.grad(F.scaled)(x), 2.0 * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(srcad.grad(F.scaled)(x, 3.0), 3.0 * np.cos(x), rtol=1e-12)
    assert srcad.grad(F.scaled, wrt="scale")(x, 3.0) == pytest.approx(np.sum(np.sin(x)))


def test_vjp_split(data):
    W, b, x, y = data
    out, pullback = srcad.vjp(F.vector_out, x, W)
    np.testing.assert_array_equal(out, np.tanh(x @ W))
    ct = np.random.default_rng(1).standard_normal(out.shape)
    dx, dW = pullback(ct)
    dz = ct * (1 - out * out)
    np.testing.assert_allclose(dx, dz @ W.T, rtol=1e-12)
    np.testing.assert_allclose(dW, x.T @ dz, rtol=1e-12)
    # the pullback can be called again with another cotangent
    dx2, _ = pullback(2 * ct)
    np.testing.assert_allclose(dx2, 2 * dx, rtol=1e-12)
    with pytest.raises(srcad.SrcadError, match="cotangent has shape"):
        pullback(np.ones(3))
    assert "def vector_out_bwd" in srcad.source(pullback)


def test_vjp_non_float_primal_gets_none():
    x = np.arange(6.0)
    out, pullback = srcad.vjp(F.uses_int, x, 3)
    dx, dn = pullback(1.0)
    assert dn is None
    np.testing.assert_array_equal(dx, np.r_[2 * x[:3], np.zeros(3)])


def test_dtypes_and_ownership(data):
    W, b, x, y = (a.astype(np.float32) for a in data)
    dW, db = srcad.grad(F.loss, wrt=(0, 1))(W, b, x, y)
    assert dW.dtype == np.float32 and db.dtype == np.float32
    assert dW.shape == W.shape and db.shape == b.shape
    for g in (dW, db):
        assert g.flags.writeable and g.flags.owndata or g.base is not None
        assert not np.shares_memory(g, W) and not np.shares_memory(g, b)


def test_python_float_and_identity():
    assert srcad.grad(F.identity_scalar)(3.0) == 1.0
    g = srcad.grad(F.identity_scalar)(np.float32(3.0))
    assert np.asarray(g).dtype == np.float32


def test_integer_wrt_is_an_error():
    with pytest.raises(srcad.SrcadError, match="floating-point"):
        srcad.grad(F.uses_int, wrt="n")(np.ones(4), 2)
    with pytest.raises(srcad.SrcadError, match="floating-point"):
        srcad.grad(F.uses_int)(np.arange(4), 2)


def test_wrt_errors():
    with pytest.raises(srcad.SrcadError, match="not a parameter"):
        srcad.grad(F.loss, wrt="w")
    with pytest.raises(srcad.SrcadError, match="out of range"):
        srcad.grad(F.loss, wrt=4)
    with pytest.raises(srcad.SrcadError, match="unknown option"):
        srcad.grad(F.loss, fusion=True)


def test_non_scalar_output_points_to_vjp():
    with pytest.raises(srcad.SrcadError, match="vjp") as e:
        srcad.grad(F.vector_out)(np.ones((2, 3)), np.ones((3, 4)))
    assert "fixtures_api.py" in str(e.value)
    assert "return np.tanh(x @ W)" in str(e.value)


def test_shape_error_names_user_line():
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(F.shape_error)(np.ones((2, 3)), np.ones((2, 3)))
    msg = str(e.value)
    assert "fixtures_api.py" in msg and "z = x @ y" in msg


def test_second_call_does_no_parsing_or_codegen(data, monkeypatch):
    # (fuse=False: the default builds again, fused, on the third call -- test_fuse_tiers.py)
    g = srcad.grad(F.loss, wrt=(0, 1), fuse=False)
    g(*data)
    calls = []
    # (the pipeline's entry points, where a transformed function reaches them)
    monkeypatch.setattr(transformed, "build", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(transformed, "normalize", lambda *a, **k: calls.append(a))
    g(*data)
    g(*(2 * a for a in data))
    assert calls == []


def test_new_shapes_specialise_again(data):
    g = srcad.grad(F.loss, wrt=(0, 1))
    g(*data)
    rng = np.random.default_rng(3)
    W, b, x, y = (rng.standard_normal(s) for s in [(5, 3), (1, 3), (2, 5), (2, 3)])
    dW, db = g(W, b, x, y)
    assert db.shape == (1, 3)
    ref_W, ref_b = reference(W, b[0], x, y)
    np.testing.assert_allclose(db[0], ref_b, rtol=1e-12)
    np.testing.assert_allclose(dW, ref_W, rtol=1e-12)


def test_generation_is_deterministic(data):
    texts = set()
    for _ in range(2):
        api._IR_CACHE.clear()
        g = srcad.grad(F.loss, wrt=(0, 1))
        g(*data)
        texts.add(srcad.source(g))
    assert len(texts) == 1


def test_source_before_any_call_is_generic():
    text = srcad.source(srcad.grad(F.loss, wrt=(0, 1)))
    assert "shapes unknown" in text and "unbroadcast" in text and "def loss_grad" in text


def test_generated_source_reads_like_a_backward(data):
    g = srcad.grad(F.loss, wrt=(0, 1))
    g(*data)
    text = srcad.source(g)
    assert "# --- forward ---" in text and "# --- backward ---" in text
    assert "# grad of L7: h = np.tanh(x @ W + b)" in text
    assert "dW = x.T @ dh_add  # L7" in text
    assert "db = dh_add.sum(axis=0)" in text
    assert "tmp" not in text


def test_traceback_shows_generated_line(data):
    W, b, x, y = data
    g = srcad.grad(F.loss, wrt=(0, 1))
    g(W, b, x, y)
    main = g._last.functions["main"]
    filename = main.__code__.co_filename
    assert linecache.getline(filename, main.__code__.co_firstlineno).startswith("def loss_grad")
    with pytest.raises(ValueError) as e:
        main(W, b, x, y[:, :2])  # bypass the probe: the error happens in generated code
    text = "".join(traceback.format_exception(e.value))
    assert "loss_subtract = h - y  # L8" in text


def test_random_generator_argument_passes_through_untouched():
    """rng.standard_normal(...) on a passed Generator is not differentiated, and the first
    call's shape probe does not consume the generator's state."""
    x = np.ones(3)
    g = srcad.grad(F.noisy)(x, np.random.default_rng(0))
    np.testing.assert_array_equal(g, np.random.default_rng(0).standard_normal(3))
    assert "push" not in srcad.source(srcad.grad(F.noisy))


def test_method_without_rule_on_a_differentiated_value_is_an_error():
    with pytest.raises(srcad.SrcadError, match="getfield"):
        srcad.grad(F.conjugate_method)(np.ones(3))


# ---- keyword-only parameters: one more parameter, bound by name as the signature says ----------
def _kw_loss(x, w, *, scale=2.0, reg=0.1):
    return np.sum(np.tanh(x @ w) * scale) + reg * np.sum(w * w)


def _kw_caller(x, w):
    return _kw_loss(x, w, reg=0.5) + _kw_loss(x * 2.0, w, scale=-1.0)


def _kw_required(x, *, w):
    return np.sum(np.sin(x * w))


@pytest.mark.parametrize("opts", [{}, {"mode": "tape"}, {"fuse": True}],
                         ids=["source", "tape", "fuse"])
def test_keyword_only_parameters(opts):
    r = np.random.default_rng(4)
    x, w = r.standard_normal((2, 3)), r.standard_normal((3, 2))
    check_grads(_kw_caller, (x, w), wrt=(0, 1), **opts)
    g = srcad.grad(_kw_loss, wrt="w", **opts)(x, w, reg=1.0, scale=3.0)
    want = numerical_grad(lambda a, b: _kw_loss(a, b, reg=1.0, scale=3.0),
                          (x, w), wrt=1)
    assert np.allclose(g, want, atol=1e-6)
    gw = srcad.grad(_kw_required, wrt="w", **opts)(x, w=x * 0.5)
    assert np.allclose(gw, x * np.cos(x * x * 0.5))
    with pytest.raises(srcad.SrcadError, match="positional"):
        srcad.grad(_kw_loss, **opts)(x, w, 3.0)


# ---- *rest and **kw of the differentiated function: a tuple and a dict parameter --------------
def _star_loss(x, *rest, scale=2.0, **kw):
    t = scale * np.sum(np.tanh(x) ** 2)
    for r in rest:
        t = t + np.sum(np.sin(r) * x)
    if "w" in kw:
        t = t + np.sum(kw["w"] * x * x)
    return t + kw.get("bias", 0.0)


def _star_only(x, *rest):
    return np.sum(x * x) + sum(np.sum(r * x) for r in rest)


@pytest.mark.parametrize("opts", [{}, {"mode": "tape"}], ids=["source", "tape"])
def test_star_and_double_star_parameters(opts):
    r = np.random.default_rng(5)
    x, r1, r2, w = (r.standard_normal(3) for _ in range(4))
    # grad of x with extra arguments (and without any): Python binds them, srcad does too
    for extra, kw in [((), {}), ((r1,), {}), ((r1, r2), {"w": w, "bias": 1.5, "scale": -1.0})]:
        g = srcad.grad(_star_loss, **opts)(x, *extra, **kw)
        want = numerical_grad(lambda a, e=extra, k=kw: _star_loss(a, *e, **k), (x,))
        assert np.allclose(g, want, atol=1e-6), (extra, kw)
    # every extra argument: a tuple of gradients; every extra keyword: a dict of them
    value, (gx, grest, gkw) = srcad.value_and_grad(_star_loss, wrt=(0, "rest", "kw"), **opts)(
        x, r1, r2, w=w, bias=1.5)
    assert value == _star_loss(x, r1, r2, w=w, bias=1.5)
    assert isinstance(grest, tuple) and len(grest) == 2 and isinstance(gkw, dict)
    want = numerical_grad(lambda a, b, c: _star_loss(a, b, c, w=w, bias=1.5), (x, r1, r2),
                          wrt=(0, 1, 2))
    for got, expected in zip((gx, *grest), want):
        assert np.allclose(got, expected, atol=1e-6)
    assert np.allclose(gkw["w"], x * x) and np.isclose(gkw["bias"], 1.0)
    # a positional call whose length equals the parameter count is still bound as Python does
    assert np.allclose(srcad.grad(_star_only, **opts)(x, r1), 2 * x + r1)
    assert np.allclose(srcad.grad(_star_only, **opts)(x), 2 * x)


def test_star_parameters_forward_and_reverse():
    r = np.random.default_rng(6)
    x, r1, tx, t1 = (r.standard_normal(3) for _ in range(4))
    out, tan = srcad.jvp(_star_only, (x, r1), (tx, t1))
    assert np.isclose(out, _star_only(x, r1))
    assert np.isclose(tan, np.sum(2 * x * tx) + np.sum(t1 * x) + np.sum(r1 * tx))
    for opts in ({}, {"mode": "tape"}):  # (one cotangent per positional argument, as JAX)
        out, pullback = srcad.vjp(_star_only, x, r1, **opts)
        gx, g1 = pullback(1.0)
        assert np.allclose(gx, 2 * x + r1) and np.allclose(g1, x)
        assert np.isclose(srcad.jvp(_star_only, (x,), (tx,), **opts)[1], np.sum(2 * x * tx))


def test_position_among_the_extra_arguments_is_refused_with_a_hint():
    with pytest.raises(srcad.SrcadError, match="extra positional") as e:
        srcad.grad(_star_only, wrt=1)
    assert "wrt='rest'" in str(e.value)
