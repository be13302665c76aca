"""The memory plan under fuse=True (issue 14): fused kernels write their results into the
buffers of operands that die at the call (``out=``), bit for bit.

Three layers. The C runtime: an out= array that is exactly one of the kernel's arguments
(same memory, same strides) is overwritten correctly -- one block, many blocks, numpy loop
calls inside the kernel, threads, transposed layouts, the Python fallback -- and any other
overlap is refused. The plan: on the zoo (MLP, Transformer block, tiny GPT; float32 and
float64) gradients fused and planned equal fused unplanned and unfused ones bit for bit, and
the plan did write kernel results into dying buffers. The hazards: a user's argument, a
view, an operand overlapping the buffer through a view, a value saved for the backward or
live around a loop is never a kernel's out= -- checked on the generated code and, while it
runs, by a guard around every kernel call (`guard_kernels`).
"""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest

import srcad
from srcad import build
from srcad.lower.standalone import fuse_functions
from srcad.zoo import gpt, mlp
from srcad.zoo import transformer as T


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return (np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)
            and np.array_equal(a, b, equal_nan=True)
            and (not isinstance(a, np.ndarray) or a.strides == b.strides))


def _leaves(tree):
    if isinstance(tree, dict):
        for v in tree.values():
            yield from _leaves(v)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            yield from _leaves(v)
    elif isinstance(tree, np.ndarray):
        yield tree


# -- the C runtime: out= exactly an argument ---------------------------------------------------

SRC = ("def chain(a, b):\n"
       "    t = np.tanh(a * b) + a\n"          # a numpy loop call (tanh) between inline ops
       "    u = np.exp(t * 0.5) - b\n"
       "    return t, u\n")


# numpy's own loop reading an argument in its own memory (exp(a): the raw pointer path)
SRC_RAW = ("def raw(a, b):\n"
           "    t = np.exp(a) * b\n"
           "    u = np.tanh(b) - a\n"
           "    return t, u\n")


@pytest.fixture(scope="module", params=[(np.float64, SRC), (np.float32, SRC),
                                        (np.float64, SRC_RAW), (np.float32, SRC_RAW)],
                ids=["f64", "f32", "f64-raw", "f32-raw"])
def chain(request):
    dtype, src = request.param
    x = np.ones((3, 4), dtype)
    [f], lowered, text = fuse_functions([src], [(x, x)])
    assert "fused kernel" in text
    [k] = lowered.functions.values()
    return k, dtype


def _inputs(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(shape).astype(dtype) for _ in range(2))


@pytest.mark.parametrize("shape", [(3, 4), (40, 1000), (3, 5000), (1, 70000)],
                         ids=["one-block", "many-rows", "long-rows", "threads-size"])
@pytest.mark.parametrize("which", ["t into a", "u into b", "both", "t into b, u into a"])
def test_out_exactly_an_argument_is_bitwise(chain, shape, which):
    k, dtype = chain
    a, b = _inputs(dtype, shape)
    want = k(a, b)
    a2, b2 = a.copy(), b.copy()
    out = {"t into a": (a2, None), "u into b": (None, b2), "both": (a2, b2),
           "t into b, u into a": (b2, a2)}[which]
    got = k(a2, b2, out=out)
    for g, o, w in zip(got, out, want):
        assert o is None or g is o
        assert _same(g, w)


def test_out_exactly_an_argument_with_threads_and_transposed_layouts(chain):
    k, dtype = chain
    a, b = _inputs(dtype, (300, 400), 1)
    old = build.set_num_threads(2)
    try:
        # the buffer C-contiguous (the plan's case), the other argument in any layout
        for layout in (lambda z: z, lambda z: np.ascontiguousarray(z.T).T,
                       lambda z: z[:, ::-1], lambda z: np.broadcast_to(z[:1], z.shape)):
            for slot in (0, 1):
                x, y = a.copy(), layout(b.copy())
                want = k(x, y)
                got = k(x, y, out=(x, None) if slot == 0 else (None, x))
                assert got[slot] is x
                for g, w in zip(got, want):
                    assert np.array_equal(g, w)
        # exactly an argument but not C-contiguous: refused (numpy's loops inside the kernel
        # may round otherwise on such a layout than the unplanned call does)
        for layout in (lambda z: np.ascontiguousarray(z.T).T, lambda z: z[:, ::-1]):
            x = layout(a.copy())
            with pytest.raises(ValueError, match="C-contiguous"):
                k(x, b, out=(x, None))
    finally:
        build.set_num_threads(old)


def test_out_exactly_an_argument_through_the_python_fallback(chain):
    k, dtype = chain
    a, b = _inputs(dtype, (5, 6), 2)
    other = np.float32 if dtype == np.float64 else np.float64
    want = k(a, b.astype(other))  # (b of another dtype: the fallback runs)
    before = build.stats()["fallbacks"]
    a2 = a.copy()
    got = k(a2, b.astype(other), out=(a2, None))
    assert build.stats()["fallbacks"] == before + 1
    assert got[0] is a2 and got[1] is not None  # (an output without out= is still returned)
    # (the fallback's result, copied into the out= array as numpy's copyto casts it)
    assert _same(got[0], want[0].astype(dtype)) and _same(got[1], want[1])


def test_any_other_overlap_is_refused(chain):
    k, dtype = chain
    a, b = _inputs(dtype, (6, 8), 3)
    with pytest.raises(ValueError, match=r"out\[0\] shares memory with argument `a`"):
        k(a, b, out=(a[::-1], None))  # a reversed view of an argument
    with pytest.raises(ValueError, match=r"out\[0\] shares memory with out\[1\]"):
        k(a, b, out=(a, a))  # one buffer for two results
    big = np.zeros((7, 8), dtype)
    with pytest.raises(ValueError, match="shares memory with argument `a`"):
        k(big[1:], b, out=(big[:-1], None))  # shifted by a row: a partial overlap
    with pytest.raises(ValueError, match="shares memory with argument `a`"):
        k(a[:, ::-1], b, out=(a[:, ::-1], None))  # the very array, but not C-contiguous
    wide = np.zeros((6, 16), dtype)
    with pytest.raises(ValueError, match="shares memory with argument `a`"):
        k(wide[:, ::2], b, out=(wide[:, 1::2], None))  # interleaved: the same extent
    mine = np.empty_like(a)
    got = k(a, b, out=(mine, None))  # memory of its own: fine
    assert got[0] is mine and _same(got[0], k(a, b)[0])


def test_in_place_target_and_out_never_share():
    src = "def upd(x, y):\n    x += y * 2.0\n    z = x * y + 1.0\n    return x, z\n"
    x = np.zeros((4, 3))
    [f], lowered, text = fuse_functions([src], [(x, x)])
    [k] = lowered.functions.values()
    outs = [o for o in lowered.kernels[0].outs]
    if len(outs) != 2 or outs[0].inout < 0:
        pytest.skip("the fuser made another kernel of this")
    a, b = np.ones((4, 3)), np.ones((4, 3))
    with pytest.raises(ValueError, match="shares memory"):
        k(a, b, out=(a, a))


# -- the plan on the zoo ---------------------------------------------------------------------


def _zoo(name, dtype):
    rng = np.random.default_rng(4)
    if name == "mlp":
        return mlp.loss, (0, 1, 2, 3), (*mlp.init(rng, 32, 64, 10, dtype),
                                        *mlp.batch(rng, 16, 32, 10, dtype))
    if name == "transformer_block":
        p = T.randomize(rng, T.init(rng, 32, 4, dtype))
        x = rng.standard_normal((2, 16, 32)).astype(dtype)
        return T.block_loss, (0, 1), (p, x, 4, rng.standard_normal(x.shape).astype(dtype))
    params = gpt.init(rng, 23, 32, 4, 2, 16, dtype)
    tokens = rng.integers(0, 23, size=(2, 16))
    return gpt.loss, 0, (params, tokens, np.roll(tokens, -1, axis=1), 4)


def kernel_outs(source: str) -> list[tuple[str, list[str]]]:
    """(kernel name, out= buffer names) of every kernel call with out= in the source."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id.startswith("fused_"):
            for kw in node.keywords:
                if kw.arg == "out":
                    names = [n.id for n in ast.walk(kw.value) if isinstance(n, ast.Name)]
                    found.append((node.func.id, names))
    return found


def guard_kernels(g, args, user_arrays):
    """Wrap every kernel the compiled function calls: an out= array must be exactly one of
    the call's arguments (or memory of its own), overlap no other argument, and never be a
    user's array. Returns the list of checked (kernel, out) pairs."""
    compiled = g.compiled(g.bind(args, {}))
    seen = []
    for fn in compiled.functions.values():
        ns = fn.__globals__
        for name in list(ns):
            if not name.startswith("fused_") or getattr(ns[name], "_guarded", False):
                continue
            inner = ns[name]

            def guarded(*a, out=None, _inner=inner, _name=name):
                if out is not None:
                    given = out if isinstance(out, tuple) else (out,)
                    for o in given:
                        if o is None:
                            continue
                        for u in user_arrays:
                            assert not np.shares_memory(o, u), f"{_name} writes a user's array"
                        same = [x for x in a if isinstance(x, np.ndarray) and
                                x.__array_interface__["data"][0] ==
                                o.__array_interface__["data"][0] and x.strides == o.strides
                                and x.shape == o.shape]
                        for x in a:
                            if isinstance(x, np.ndarray) and not any(x is s for s in same):
                                assert not np.shares_memory(o, x), \
                                    f"{_name}: out= overlaps another argument"
                        seen.append((_name, len(same)))
                    return _inner(*a, out=out)
                return _inner(*a)

            guarded._guarded = True
            ns[name] = guarded
    return seen


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("model", ["mlp", "transformer_block", "gpt"])
def test_zoo_fused_planned_is_bitwise(model, dtype):
    fn, wrt, args = _zoo(model, dtype)
    before = [x.copy() for x in _leaves(args)]
    unfused = srcad.value_and_grad(fn, wrt=wrt)(*args)
    plain = srcad.value_and_grad(fn, wrt=wrt, fuse=True, memory_plan=False)
    planned = srcad.value_and_grad(fn, wrt=wrt, fuse=True)
    want = plain(*args)
    seen = guard_kernels(planned, args, list(_leaves(args)))
    got = planned(*args)
    again = planned(*args)  # (a second call: nothing a first call left behind changes it)
    assert _same(got, want) and _same(again, want) and _same(got, unfused)
    assert all(_same(x, y) for x, y in zip(before, _leaves(args)))  # the user's arrays intact
    src = srcad.source(planned)
    assert "fused kernel" in src and kernel_outs(src), "the plan wrote no kernel result in place"
    assert seen and all(n == 1 for _, n in seen)  # each out= exactly one argument
    assert "in place: fused_" in src
    c = planned.compiled(planned.bind(args, {}))
    assert c.program.memory is not None and c.program.memory.statements > 0
    assert kernel_outs(srcad.source(plain)) == []
    # the gradients are distinct arrays, none a view of the user's
    grads = list(_leaves(got[1]))
    for i, x in enumerate(grads):
        assert not any(np.shares_memory(x, u) for u in _leaves(args))
        assert not any(np.shares_memory(x, y) for y in grads[i + 1:])


# -- hazards ---------------------------------------------------------------------------------


def _check(f, args, wrt=0, kind="grad"):
    make = getattr(srcad, kind)
    before = [x.copy() for x in _leaves(args)]
    planned = make(f, wrt=wrt, fuse=True)
    seen = guard_kernels(planned, args, list(_leaves(args)))
    got = planned(*args)
    want = make(f, wrt=wrt, fuse=True, memory_plan=False)(*args)
    unfused = make(f, wrt=wrt, memory_plan=False)(*args)
    assert _same(got, want) and _same(got, unfused)
    assert all(_same(x, y) for x, y in zip(before, _leaves(args)))
    return srcad.source(planned), seen


def test_never_a_users_argument():
    def f(x, y):
        return np.sum(np.tanh(x * y + 1.0) * x)

    x, y = _inputs(np.float64, (6, 7), 5)
    src, _ = _check(f, (x, y), wrt=(0, 1))
    for _, names in kernel_outs(src):
        assert "x" not in names and "y" not in names


def test_never_a_view_nor_a_buffer_an_operand_views():
    # v is a reversed view of a: a dies at the call that reads both, but v overlaps it
    def f(x):
        a = np.exp(x * 0.5)
        v = a[::-1]
        return np.sum(np.tanh(a * v + 1.0) * 2.0)

    def g(x):  # and a transposed view as the operand that dies
        a = np.exp(x * 0.5)
        v = a.T
        return np.sum(np.tanh(v * 3.0 + 1.0) * v)

    x = np.random.default_rng(6).standard_normal((5, 5))
    for fn in (f, g):
        src, _ = _check(fn, (x,))
        tree = ast.parse(src)
        views = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                 for t in node.targets if isinstance(t, ast.Name)
                 and isinstance(node.value, (ast.Subscript, ast.Attribute))}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id.startswith("fused_") and node.keywords:
                outs = {n.id for n in ast.walk(node.keywords[0].value)
                        if isinstance(n, ast.Name)}
                args = {a.id for a in node.args if isinstance(a, ast.Name)}
                assert not (outs & views), ast.unparse(node)
                # a buffer whose view is another argument of the same call
                for o in outs:
                    assert not any(re.search(rf"\b{v}\s*=\s*{o}\b", src) for v in args - {o})


def test_never_a_value_saved_for_the_backward_nor_live_around_a_loop():
    def f(x, n):
        h = np.tanh(x * 2.0)
        s = h
        for _ in range(n):
            s = np.exp(s * 0.5) + h  # h is read again on every trip
        return np.sum(s * s)

    x = np.random.default_rng(7).standard_normal((4, 9))
    _check(f, (x, 3))

    def v(x):
        h = np.tanh(x * 2.0)
        return np.exp(h * h + 1.0)

    fwd_out, pullback = srcad.vjp(v, x, fuse=True)
    ref_out, ref_pb = srcad.vjp(v, x, memory_plan=False)
    ct = np.ones_like(fwd_out)
    first = pullback(ct)
    assert _same(pullback(ct), first) and _same(first, ref_pb(ct)) and _same(fwd_out, ref_out)


def test_the_guard_catches_a_bad_out():
    # (the checker the zoo and fuzz runs rely on: it fires on a user's array or an overlap)
    def f(x):
        a = np.exp(x * 0.5)
        return np.sum(np.tanh(a * 2.0 + 1.0) * a)

    x = np.random.default_rng(8).standard_normal((4, 6))
    g = srcad.grad(f, fuse=True)
    guard_kernels(g, (x,), [x])
    ns = next(iter(g.compiled(g.bind((x,), {})).functions.values())).__globals__
    name, k = next((n, v) for n, v in ns.items() if n.startswith("fused_"))
    arity = next(len(c.args) for c in ast.walk(ast.parse(srcad.source(g)))
                 if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                 and c.func.id == name)
    outs = len(next(kk for kk in g.compiled(g.bind((x,), {})).kernels.kernels
                    if kk.name == name).outs)
    given = (x,) + (None,) * (outs - 1) if outs > 1 else x
    with pytest.raises(AssertionError, match="user's array"):
        k(*([x.copy()] * arity), out=given)
