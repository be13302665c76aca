"""fuse=True end to end: the zoo and the examples bit for bit, every transform, loops and
branches, what the lowered source says, and what the C runtime does with arguments it was
not built for (the Python fallback), with numpy's floating-point error state, with threads,
and with the process's floating-point mode (never flush-to-zero)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import srcad
from srcad import build
from srcad.lower import batch
from srcad.lower.standalone import fuse_functions
from srcad.zoo import gpt, mlp
from srcad.zoo import transformer as T


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return (np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)
            and np.array_equal(a, b, equal_nan=True))


def _block(dtype):
    rng = np.random.default_rng(0)
    p = T.randomize(rng, T.init(rng, 32, 4, dtype))
    x = rng.standard_normal((2, 7, 32)).astype(dtype)
    return (p, x, 4, rng.standard_normal((2, 7, 32)).astype(dtype)), "p"


def _gpt(dtype):
    rng = np.random.default_rng(1)
    params = gpt.init(rng, 11, 16, 4, 2, 10, dtype)
    return (params, rng.integers(0, 11, (2, 8)), rng.integers(0, 11, (2, 8)), 4), "params"


def _mlp(dtype):
    rng = np.random.default_rng(2)
    W1, b1 = rng.standard_normal((6, 16)).astype(dtype), rng.standard_normal(16).astype(dtype)
    W2, b2 = rng.standard_normal((16, 3)).astype(dtype), rng.standard_normal(3).astype(dtype)
    x, y = rng.standard_normal((5, 6)).astype(dtype), rng.standard_normal((5, 3)).astype(dtype)
    return (W1, b1, W2, b2, x, y), ("W1", "b1", "W2", "b2")


def _examples():
    from srcad import cli

    out = []
    for path, func in (("examples/mlp.py", "loss"), ("examples/rnn.py", "rnn_loss"),
                       ("examples/rnn.py", "grow"), ("examples/deep.py", "loss")):
        module = cli.load_module(cli.ROOT / path)
        args = module.EXAMPLES[func]()
        entry = next(e for e in cli.GENERATED if e[0] == path and e[1] == func)
        out.append((f"{path}:{func}", getattr(module, func), args, entry[2]))
    return out


def _cases():
    cases = []
    for dtype in (np.float32, np.float64):
        for name, fn, make in (("transformer", T.block_loss, _block), ("gpt", gpt.loss, _gpt),
                               ("mlp", mlp.loss, _mlp)):
            args, wrt = make(dtype)
            cases.append((f"zoo {name} {np.dtype(dtype).name}", fn, args, wrt))
    return cases + _examples()


CASES = _cases()


def fused_batch(cases) -> dict:
    """Each (name, fn, args, wrt) case's fused value_and_grad, compiled for its arguments in
    one batch (one kernel module, one compiler run)."""
    out = {}
    with batch():
        for name, fn, args, wrt in cases:
            g = srcad.value_and_grad(fn, wrt=wrt, fuse=True)
            g.compiled(g.bind(args, {}))
            out[name] = g
    return out


@pytest.fixture(scope="module")
def fused_models():
    """Every case's fused gradient, lowered in one batch (one kernel module)."""
    return fused_batch(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_models_fused_bitwise(fused_models, case):
    name, fn, args, wrt = case
    before = build.stats()["fallbacks"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = srcad.value_and_grad(fn, wrt=wrt)(*args)
        got = fused_models[name](*args)
    assert _same(got, want), name
    assert build.stats()["fallbacks"] == before, build.stats()["last_fallback"]
    assert "fused kernel" in srcad.source(fused_models[name])


def chain(x, w, b):
    h = x
    for _ in range(3):
        h = np.tanh(h * w + b)
    if np.sum(h) > 0:
        h = h * h + 0.5 * h
    else:
        h = np.maximum(h, 0.1) - h
    return np.sum(h * x)


def test_loops_branches_vjp_jvp_fused():
    rng = np.random.default_rng(3)
    x, w, b = (rng.standard_normal((4, 5)) for _ in range(3))
    for xs in (x, -np.abs(x)):  # both branches
        with batch():
            g = srcad.grad(chain, wrt=(0, 1, 2), fuse=True)
            g.compiled(g.bind((xs, w, b), {}))
        assert _same(g(xs, w, b), srcad.grad(chain, wrt=(0, 1, 2))(xs, w, b))
        src = srcad.source(g)
        body = src.split("for _ in range(3):", 1)[1].split("\n    cond_", 1)[0]
        assert "# fused kernel" in body, src  # inside the loop body
        branch = src.split("if cond_greater:", 1)[1].split("\n    chain_multiply", 1)[0]
        assert "# fused kernel" in branch, src  # inside a branch
    out, pb = srcad.vjp(chain, x, w, b, fuse=True)
    out0, pb0 = srcad.vjp(chain, x, w, b)
    assert _same(out, out0) and _same(pb(1.0), pb0(1.0))
    assert "fused kernel" in pb.source
    t = tuple(rng.standard_normal((4, 5)) for _ in range(3))
    assert _same(srcad.jvp(chain, (x, w, b), t, fuse=True), srcad.jvp(chain, (x, w, b), t))
    # forward over reverse: the inner gradient's code is transformed again, never lowered
    hv = srcad.jvp(srcad.grad(chain, fuse=True), (x, w, b), t, fuse=True)
    assert _same(hv, srcad.jvp(srcad.grad(chain), (x, w, b), t))


def test_lowered_source_says_what_each_kernel_replaces():
    args, wrt = _mlp(np.float32)
    g = srcad.grad(mlp.loss, wrt=wrt, fuse=True)
    g(*args)
    src = srcad.source(g)
    assert "fuse=True" in src.splitlines()[1]
    header = next(ln for ln in src.splitlines() if ln.startswith("# fused C kernels"))
    names = re.findall(r"fused_\w+_[0-9a-f]{6}", header)
    assert names and all(f"= {n}(" in src for n in names)
    for n in names:  # each call is preceded by the statements it replaces, with their lines
        block = src.split(f"# fused kernel {n}", 1)[1].split(f"= {n}(", 1)[0]
        assert re.search(r"#   \w+ = .+  # L\d+", block), block
    c = g._last.kernels.c_source
    for n in names:
        assert f"{n}_body(" in c and "/* L" in c
    assert "-ffast-math" not in c.split("never", 1)[0]


def test_comments_on_what_a_kernel_absorbed_come_before_its_call():
    """A "recomputed, not kept from the forward" comment whose statements all went into a
    kernel describes that kernel: it stands above the call, never left behind below it."""
    g = srcad.grad(T.block_loss, wrt="p", fuse=True)
    g(*T.EXAMPLES["block_loss"]())
    lines = srcad.source(g).splitlines()
    notes = [i for i, ln in enumerate(lines) if "recomputed, not kept" in ln]
    assert notes
    for i in notes:
        nxt = next(ln.strip() for ln in lines[i + 1:] if not ln.strip().startswith("#"))
        assert not nxt.startswith(("return", "del ")), (lines[i], nxt)


# -- the runtime on arguments it was not built for ------------------------------------------

SRC = "def kern(x, y):\n    t = x * y + 1.0\n    return np.tanh(t) * t\n"


@pytest.fixture(scope="module")
def kern():
    x = np.ones((3, 4), np.float32)
    [f], lowered, text = fuse_functions([SRC], [(x, x)], filename="test_fuse.py")
    (name, k), = lowered.functions.items()
    return f, k


def test_fallback_on_other_dtypes_shapes_and_non_arrays(kern):
    f, k = kern
    rng = np.random.default_rng(5)
    x32, y32 = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    ref = lambda x, y: np.tanh(x * y + 1.0) * (x * y + 1.0)  # noqa: E731
    before = build.stats()["fallbacks"]
    assert _same(f(x32, y32), ref(x32, y32))
    assert build.stats()["fallbacks"] == before
    for args in ((x32.astype(np.float64), y32),  # another dtype
                 (x32.tolist(), y32),  # not an array
                 (x32, np.float32(2.0)),  # a numpy scalar where an array was planned
                 (x32[None], y32),  # more dimensions than planned
                 (x32.astype(">f4"), y32)):  # byte-swapped
        assert _same(f(*args), ref(*args)), args
    assert build.stats()["fallbacks"] == before + 5
    old = build.runtime().set_strict(True)
    try:
        with pytest.raises(TypeError, match=r"argument `x` is a float64 array; the kernel was "
                                              r"built for float32"):
            f(x32.astype(np.float64), y32)
        with pytest.raises(TypeError, match="is a list, not a numpy.ndarray"):
            f(x32.tolist(), y32)
    finally:
        build.runtime().set_strict(old)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        k(x32)
    with pytest.raises(TypeError, match="keyword argument, out="):
        k(x32, y32, where=True)


def test_out_arrays(kern):
    f, k = kern
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    got = k(x, x)
    outs = tuple(np.empty_like(o) for o in (got if isinstance(got, tuple) else (got,)))
    res = k(x, x, out=outs if len(outs) > 1 else outs[0])
    assert all(r is o for r, o in zip(res if isinstance(res, tuple) else (res,), outs))
    assert _same(res, got)
    # exactly an argument (the memory plan's reuse): overwritten in place, bit for bit; any
    # other overlap (here a reversed view) is refused (tests/test_memplan_fused.py has more)
    x2 = x.copy()
    res = k(x2, x2, out=(x2,) + (None,) * (len(outs) - 1) if len(outs) > 1 else x2)
    assert _same(res, got)
    with pytest.raises(ValueError, match="shares memory with argument"):
        k(x, x, out=(x[::-1],) + (None,) * (len(outs) - 1) if len(outs) > 1 else x[::-1])


def test_in_place_update_and_aliasing():
    src = ("def upd(x, y, z):\n    x += y * 2.0\n    x += z\n    return x\n")
    x = np.zeros((4, 3))
    [f], lowered, text = fuse_functions([src], [(x, x, x)])
    assert "fused kernel" in text
    rng = np.random.default_rng(6)
    a, b, c = (rng.standard_normal((4, 3)) for _ in range(3))
    ref = a + b * 2.0 + c
    got = f(a, b, c)
    assert got is a and _same(a, ref)
    # y is a view of x: numpy's order of updates decides what it reads (the fallback runs)
    a2 = rng.standard_normal((4, 3))
    ref2 = a2.copy()
    ref2 += ref2[::-1] * 2.0
    ref2 += c
    before = build.stats()["fallbacks"]
    f(a2, a2[::-1], c)
    assert _same(a2, ref2) and build.stats()["fallbacks"] == before + 1


def test_floating_point_errors_follow_np_errstate():
    src = "def recip(x):\n    return 1.0 / x + x\n"
    x = np.array([0.0, 1.0, 2.0])
    [f], _, text = fuse_functions([src], [(x,)])
    assert "fused kernel" in text
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero"):
            f(x)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x)
    with np.errstate(divide="warn"), pytest.warns(RuntimeWarning, match="divide by zero"):
        f(x)


def test_no_flush_to_zero_after_loading_kernels(kern):
    # -ffast-math would have linked crtfastmath.o, which sets FTZ/DAZ for the whole process
    assert np.float64(1e-310) * 1.0 != 0.0
    assert np.float32(1e-40) * np.float32(1.0) != 0.0
    f, _ = kern
    tiny = np.full((3, 4), 1e-40, np.float32)
    got = f(tiny, np.ones((3, 4), np.float32))
    assert got.dtype == np.float32 and np.all(np.isfinite(got))


def test_threads_give_the_same_bits():
    src = "def big(x, y):\n    t = np.exp(x * 0.5) - y\n    return np.maximum(t, 0.0) * y\n"
    rng = np.random.default_rng(7)
    x, y = (rng.standard_normal((300, 257)).astype(np.float32) for _ in range(2))
    [f], _, _ = fuse_functions([src], [(x, y)])
    rt = build.runtime()
    old_threads, old_min = rt.set_num_threads(1), rt.set_parallel_threshold(0)
    old_adaptive = rt.set_adaptive(False)  # two threads every time, whether they pay or not
    try:
        one = f(x, y)
        rt.set_num_threads(2)
        two = f(x, y)
        two_t = f(x.T.copy().T, y)  # a strided layout, split between threads too
    finally:
        rt.set_num_threads(old_threads)
        rt.set_parallel_threshold(old_min)
        rt.set_adaptive(old_adaptive)
    assert _same(one, two) and _same(one, two_t)
    assert _same(one, np.maximum(np.exp(x * 0.5) - y, 0.0) * y)
