"""The automatic default (fuse omitted): a specialisation runs unfused on its first two calls
and fused from its third (SRCAD_FUSE overrides the call; fuse=True / fuse=False the whole
thing), with every result bit for bit the same on every call; what `srcad.source` shows;
each transform, higher order, pickling, memory_budget, tape mode, a global rebound between
the tiers, and no compiler (silent, unfused)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import srcad
from srcad import build
from srcad.errors import SrcadError
from srcad.options import FUSE_AFTER, fuse_after
from srcad.zoo import transformer as T


def _compiler_works() -> bool:
    try:
        build.compiler_identity()
        return True
    except build.CompilerUnavailable:
        return False


needs_cc = pytest.mark.skipif(not _compiler_works(), reason="no working C compiler")


def _bits(a):
    """Every leaf's shape, dtype and bytes (a pytree, in order)."""
    if isinstance(a, dict):
        return tuple((k, _bits(a[k])) for k in a)
    if isinstance(a, (list, tuple)):
        return (type(a).__name__,) + tuple(_bits(v) for v in a)
    a = np.asarray(a)
    return (a.shape, a.dtype.str, a.tobytes())


def _fused(transformed) -> bool:
    """Whether the code that runs now calls fused kernels (the header says how it was built)."""
    head = srcad.source(transformed).split("\n\n", 1)[0]
    return "fuse=True" in head


def loss(W, b, x, y):  # the README's first example
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def _args(seed=0, n=8):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((3, 2)), rng.standard_normal(2), rng.standard_normal((n, 3)),
            rng.standard_normal((n, 2)))


@pytest.fixture(autouse=True)
def _default_env(monkeypatch):
    monkeypatch.delenv("SRCAD_FUSE", raising=False)


def test_the_default_is_three():
    assert fuse_after() == FUSE_AFTER == 3


@needs_cc
def test_grad_fuses_on_the_third_call_bit_for_bit():
    g = srcad.grad(loss, wrt=(0, 1))
    args = _args()
    seen, fused = [], []
    for _ in range(5):
        seen.append(_bits(g(*args)))
        fused.append(_fused(g))
    assert fused == [False, False, True, True, True]
    assert len(set(seen)) == 1
    # ... and the same bits as fuse=False and fuse=True
    assert _bits(srcad.grad(loss, wrt=(0, 1), fuse=False)(*args)) == seen[0]
    assert _bits(srcad.grad(loss, wrt=(0, 1), fuse=True)(*args)) == seen[0]


@needs_cc
def test_each_specialisation_counts_its_own_calls():
    g = srcad.grad(loss)
    small, large = _args(n=8), _args(n=5)
    g(*small), g(*small), g(*large)
    assert not _fused(g)  # (the large one's first call: unfused)
    g(*large)
    g(*small)  # (the small one's third)
    assert _fused(g)
    g(*large)
    assert _fused(g)


@needs_cc
def test_fuse_false_never_and_fuse_true_from_the_first_call():
    args = _args()
    never = srcad.grad(loss, fuse=False)
    always = srcad.grad(loss, fuse=True)
    for _ in range(4):
        never(*args)
        assert not _fused(never)
    always(*args)
    assert _fused(always)


@needs_cc
@pytest.mark.parametrize("setting, fused_from", [("0", None), ("off", None), ("1", 1),
                                                  ("on", 1), ("2", 2), ("auto", 3)])
def test_srcad_fuse_sets_the_call(monkeypatch, setting, fused_from):
    monkeypatch.setenv("SRCAD_FUSE", setting)
    g = srcad.grad(loss)
    args = _args()
    first = _bits(g(*args))
    fused = [_fused(g)]
    for _ in range(4):
        assert _bits(g(*args)) == first
        fused.append(_fused(g))
    expect = [fused_from is not None and k + 1 >= fused_from for k in range(5)]
    assert fused == expect


@needs_cc
def test_an_explicit_fuse_overrides_srcad_fuse(monkeypatch):
    monkeypatch.setenv("SRCAD_FUSE", "1")
    g = srcad.grad(loss, fuse=False)
    g(*_args())
    assert not _fused(g)
    monkeypatch.setenv("SRCAD_FUSE", "0")
    h = srcad.grad(loss, fuse=True)
    h(*_args())
    assert _fused(h)


def test_a_bad_srcad_fuse_is_an_error(monkeypatch):
    monkeypatch.setenv("SRCAD_FUSE", "sometimes")
    with pytest.raises(SrcadError, match="SRCAD_FUSE"):
        srcad.grad(loss)(*_args())


def test_fuse_accepts_auto_and_refuses_other_values():
    args = _args()
    assert _bits(srcad.grad(loss, fuse="auto")(*args)) == _bits(srcad.grad(loss)(*args))
    with pytest.raises(SrcadError, match="fuse must be"):
        srcad.grad(loss, fuse=1)
    with pytest.raises(SrcadError, match="fuse must be"):
        srcad.grad(loss, fuse="yes")


@needs_cc
def test_value_and_grad_of_a_block_bit_for_bit():
    rng = np.random.default_rng(0)
    p = T.randomize(rng, T.init(rng, 32, 4, np.float32))
    x = rng.standard_normal((2, 7, 32)).astype(np.float32)
    args = (p, x, 4, rng.standard_normal((2, 7, 32)).astype(np.float32))
    g = srcad.value_and_grad(T.block_loss)
    seen = [_bits(g(*args)) for _ in range(4)]
    assert _fused(g)
    assert len(set(seen)) == 1
    assert _bits(srcad.value_and_grad(T.block_loss, fuse=False)(*args)) == seen[0]


@needs_cc
def test_vjp_pullbacks_of_either_tier():
    def f(x, W):
        return np.tanh(x @ W) * 2.0 + np.exp(-x @ W)

    rng = np.random.default_rng(1)
    x, W = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    ct = rng.standard_normal((4, 5))
    made = [srcad.vjp(f, x, W) for _ in range(4)]  # (the third and fourth: fused)
    assert "fuse=False" in srcad.source(made[1][1]) and "fuse=True" in srcad.source(made[3][1])
    outs = {_bits(out) for out, _ in made}
    grads = {_bits(pb(ct)) for _, pb in made}  # (the unfused pullbacks, called after fusion)
    assert len(outs) == 1 and len(grads) == 1
    out0, pb0 = srcad.vjp(f, x, W, fuse=False)
    assert _bits(out0) in outs and _bits(pb0(ct)) in grads


@needs_cc
def test_jvp_and_hessian():
    def f(x):
        return np.sum(np.sin(x) * x ** 2)

    x, v = np.linspace(-1.0, 1.0, 6), np.linspace(0.5, 2.0, 6)
    seen = {_bits(srcad.jvp(f, (x,), (v,))) for _ in range(4)}
    assert len(seen) == 1
    assert _bits(srcad.jvp(f, (x,), (v,), fuse=False)) in seen
    # (the Hessian makes one jvp of the gradient per column: several tiers in one call)
    H = [_bits(srcad.hessian(f)(x)) for _ in range(2)]
    assert H[0] == H[1] == _bits(srcad.hessian(f, fuse=False)(x))


@needs_cc
def test_grad_of_grad_parses_the_unfused_code():
    def f(x, w):
        return np.sum(np.tanh(x * w) ** 3)

    x, w = np.linspace(-2.0, 2.0, 7), np.array(0.7)
    # the reparsed path: the outer transform parses the inner's generated code (built for
    # that, never lowered), while the inner is called -- and fused -- on its own too
    g = srcad.grad(f, wrt=1)
    gg = srcad.grad(g, wrt=1)
    inner, outer = [], []
    for _ in range(4):
        inner.append(_bits(g(x, w)))
        outer.append(_bits(gg(x, w)))
    assert _fused(g) and _fused(gg)
    assert len(set(inner)) == 1 and len(set(outer)) == 1
    plain = srcad.grad(srcad.grad(f, wrt=1, fuse=False), wrt=1, fuse=False)
    assert outer[0] == _bits(plain(x, w))
    assert inner[0] == _bits(srcad.grad(f, wrt=1, fuse=False)(x, w))


@needs_cc
def test_a_grad_called_inside_a_differentiated_function():
    def f(x):
        return np.sum(np.tanh(x) ** 3)

    g = srcad.grad(f)

    def outer(x):
        return np.sum(g(x) * np.cos(x))

    x = np.linspace(-2.0, 2.0, 7)
    got = {_bits(srcad.grad(outer)(x)) for _ in range(4)}
    hh = srcad.grad(outer)
    got |= {_bits(hh(x)) for _ in range(4)}
    assert got == {_bits(srcad.grad(outer, fuse=False)(x))}


@needs_cc
def test_memory_budget_and_checkpoint_fuse_bit_for_bit():
    def block(h, W):
        return np.tanh(h @ W) * 0.5 + h

    def deep(x, W):
        h = x
        for _ in range(4):
            h = srcad.checkpoint(block)(h, W)
        return np.sum(h ** 2)

    rng = np.random.default_rng(2)
    x, W = rng.standard_normal((6, 5)), rng.standard_normal((5, 5)) * 0.3
    ref = _bits(srcad.grad(deep, wrt=(0, 1), fuse=False)(x, W))
    for g in (srcad.grad(deep, wrt=(0, 1)), srcad.grad(deep, wrt=(0, 1), memory_budget=4096)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (a budget it cannot meet says so, once)
            got = [_bits(g(x, W)) for _ in range(4)]
        assert got == [ref] * 4
        assert _fused(g)


def test_tape_mode_is_never_fused():
    g = srcad.grad(loss, mode="tape")
    args = _args()
    got = {_bits(g(*args)) for _ in range(4)}
    assert got == {_bits(srcad.grad(loss, fuse=False)(*args))}


SCALE = np.array([1.0, 2.0])


def scaled(W, b, x, y):  # (reads the module's SCALE: a rebinding to an equal-shaped array
    h = np.tanh(x @ W + b) * SCALE  # is relinked, not rebuilt -- across the tiers too)
    return np.mean((h - y) ** 2)


@needs_cc
def test_a_global_rebound_before_the_fused_tier_is_read():
    global SCALE
    args = _args()
    g = srcad.grad(scaled)
    old = SCALE
    try:
        g(*args)
        g(*args)
        SCALE = np.array([-3.0, 0.25])
        got = g(*args)  # (the third call: fused, over the new SCALE)
        assert _fused(g)
        want = srcad.grad(scaled, fuse=False)(*args)
        assert _bits(got) == _bits(want)
        SCALE = np.array([5.0, -1.0])
        assert _bits(g(*args)) == _bits(srcad.grad(scaled, fuse=False)(*args))
    finally:
        SCALE = old


def test_no_compiler_stays_unfused_and_silent(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/srcad-test-cc")
    g = srcad.grad(loss)
    args = _args()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (any warning fails the test)
        got = [_bits(g(*args)) for _ in range(4)]
    assert not _fused(g)
    assert got == [_bits(srcad.grad(loss, fuse=False)(*args))] * 4


def test_pickles_with_its_fuse_option():
    from tests import fixtures_api as F

    for options, want in (({}, None), ({"fuse": False}, False), ({"fuse": True}, True)):
        g = srcad.grad(F.loss, **options)
        back = pickle.loads(pickle.dumps(g))
        assert back.options.fuse is want


@needs_cc
def test_a_fused_build_that_fails_warns_and_stays_unfused(monkeypatch):
    from srcad import transformed

    g = srcad.grad(loss)
    args = _args()
    want = _bits(g(*args))
    g(*args)

    def broken(*a, **k):
        raise RuntimeError("the fuser broke")

    monkeypatch.setattr(transformed, "build", broken)
    with pytest.warns(UserWarning, match="fusing loss failed .*the fuser broke"):
        assert _bits(g(*args)) == want
    assert [_bits(g(*args)) for _ in range(2)] == [want] * 2
    assert not _fused(g)
