"""The buffer pool (kernels_c/srcad_pool.h): generated code runs with a caching allocator as
numpy's, so a repeated call reuses its buffers instead of faulting in fresh pages.

What must hold: the values are the same bits with the pool on and off; a gradient the user
keeps never changes when later calls reuse memory; zeroed allocations are zero even from a
dirty block; an exception inside a pooled function restores the caller's allocator; what
tracemalloc sees (the memory plan's peaks) does not change; and in steady state a call takes
every block from the pool (no misses), which is what makes its page faults go away.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from numpy._core.multiarray import get_handler_name

import srcad
from srcad import build
from srcad.checkpoint import measure_peak
from srcad.zoo import gpt, transformer

ROOT = Path(__file__).resolve().parent.parent

try:  # the runtime the pool lives in (built into the kernel cache if not installed)
    build.runtime()
except Exception:  # noqa: BLE001  (no compiler: nothing to test)
    pass
pytestmark = pytest.mark.skipif(build._pool_runtime() is None,
                                reason="the C runtime (srcad._kernels) is not here")


class _Runtime:
    """`rt.x` is the pool's runtime's `x`, looked up at use (never a stale copy)."""

    def __getattr__(self, name):
        return getattr(build._pool_runtime(), name)


rt = _Runtime()


def block_inputs(dtype=np.float32, seed=0, B=2, T=8, C=16):
    """(p, x, n_heads, probe) for srcad.zoo.transformer.block_loss."""
    rng = np.random.default_rng(seed)
    p = transformer.randomize(rng, transformer.init(rng, C, 4, dtype=dtype))
    x = rng.standard_normal((B, T, C)).astype(dtype)
    return p, x, 4, rng.standard_normal((B, T, C)).astype(dtype)


def leaves(tree):
    if isinstance(tree, dict):
        return [a for k in sorted(tree) for a in leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [a for t in tree for a in leaves(t)]
    return [np.asarray(tree)]


def test_generated_entry_points_run_pooled_and_restore_the_allocator():
    seen = []

    def f(x):
        return np.sum(np.tanh(x) * x)

    g = srcad.grad(f)
    x = np.linspace(-1, 1, 5000)
    g(x)
    c = g.compiled([x])
    main = c.functions["main"]
    assert main.__wrapped__ is not main and main.__name__ == main.__wrapped__.__name__
    inner = main.__wrapped__
    c.functions["main"] = main  # (unchanged)

    def spy(*a):
        seen.append(get_handler_name())
        return inner(*a)

    spied = rt.pooled(spy)
    spied(x)
    assert seen == ["srcad_pool"]
    assert get_handler_name() == "default_allocator"
    dx = g(x)
    assert get_handler_name(dx) == "srcad_pool"


def test_exception_inside_restores_the_callers_allocator():
    def boom():
        np.ones(10_000)
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        rt.pooled(boom)()
    assert get_handler_name() == "default_allocator"
    # nested: the inner call restores the outer's (the pool), the outer restores the default
    inner = rt.pooled(lambda: get_handler_name())
    assert rt.pooled(lambda: (inner(), get_handler_name()))() == ("srcad_pool", "srcad_pool")
    assert get_handler_name() == "default_allocator"


def test_zeroed_and_resized_blocks():
    size = 300_000
    dirty = rt.pooled(lambda: np.full(size, 7.0))
    zeros = rt.pooled(lambda: np.zeros(size))
    for _ in range(3):
        a = dirty()
        del a  # its block goes back to the pool, full of 7s
        z = zeros()  # the same class: must come back zeroed
        assert not z.any()
        del z

    def grow():
        a = np.arange(1000.0)
        a.resize(200_000, refcheck=False)  # numpy's realloc through the handler
        return a

    a = rt.pooled(grow)()
    assert np.array_equal(a[:1000], np.arange(1000.0)) and not a[1000:].any()


def test_kept_gradients_never_change_and_do_not_share_memory():
    args = block_inputs(np.float64)
    g = srcad.grad(transformer.block_loss)
    first = g(*args)
    snapshot = {k: v.copy() for k, v in first.items()}
    for seed in range(1, 4):  # other inputs: the pool hands freed blocks to new arrays
        g(*block_inputs(np.float64, seed))
    for k, v in first.items():
        assert np.array_equal(v, snapshot[k]), k
    arrays = list(first.values())
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:]:
            assert not np.shares_memory(a, b)


@pytest.mark.parametrize("fuse", [False, True])
def test_steady_state_takes_every_block_from_the_pool(fuse):
    args = block_inputs()
    g = srcad.grad(transformer.block_loss, fuse=fuse)
    for _ in range(3):
        out = g(*args)
        del out
    before = build.pool_stats()
    for _ in range(5):
        out = g(*args)
        del out
    after = build.pool_stats()
    assert after["hits"] > before["hits"]
    assert after["misses"] == before["misses"], (before, after)


def test_values_are_the_same_bits_with_the_pool_off():
    """A process with SRCAD_BUFFER_POOL=0 computes the zoo's gradients bit for bit."""
    code = ("import sys, numpy as np, srcad\n"
            "sys.path.insert(0, sys.argv[2])\n"
            "from test_buffer_pool import block_inputs, leaves\n"
            "from srcad.zoo import transformer, gpt\n"
            "args = block_inputs(B=2, T=32, C=64)\n"
            "out = {}\n"
            "for fuse in (False, True):\n"
            "    g = srcad.grad(transformer.block_loss, fuse=fuse)\n"
            "    for i in range(3): d = g(*args)\n"
            "    out.update({f'{k}_{fuse}': v for k, v in d.items()})\n"
            "gargs = gpt.EXAMPLES['loss']()\n"
            "d = srcad.grad(gpt.loss, wrt='params')(*gargs)\n"
            "out.update({f'gpt_{i}': v for i, v in enumerate(leaves(d))})\n"
            "np.savez(sys.argv[1], **out)\n")
    results = []
    for flag in ("1", "0"):
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"srcad_pool_{os.getpid()}_{flag}.npz"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "SRCAD_BUFFER_POOL": flag,
               "SRCAD_NUM_THREADS": "1"}
        subprocess.run([sys.executable, "-c", code, str(path), str(ROOT / "tests")], env=env,
                       check=True,
                       timeout=300)
        with np.load(path) as z:
            results.append({k: z[k] for k in z.files})
        path.unlink()
    on, off = results
    assert on.keys() == off.keys() and len(on) > 20
    for k in on:
        assert on[k].tobytes() == off[k].tobytes(), k


def test_tracemalloc_sees_the_same_peak():
    args = block_inputs(np.float64)
    g = srcad.grad(transformer.block_loss, fuse=False)  # (the default fuses on call 3)
    g(*args)
    pooled_peak = measure_peak(lambda: g(*args))
    before = rt.pool_configure(False, -1)
    try:
        plain_peak = measure_peak(lambda: g(*args))
    finally:
        rt.pool_configure(*before)
    # the same array bytes; the pool's context switch makes a few small Python objects
    assert abs(pooled_peak - plain_peak) < 1024, (pooled_peak, plain_peak)


def test_frees_from_other_threads():
    """Arrays made in a pooled call and dropped by other threads go back safely."""
    made = rt.pooled(lambda n: [np.ones(50_000) * i for i in range(n)])(64)
    chunks = [made[i::4] for i in range(4)]
    del made
    threads = [threading.Thread(target=chunks[i].clear) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = build.pool_stats()
    assert s["in_use"] >= 0 and s["kept"] <= s["limit"]
    again = rt.pooled(lambda: np.ones(50_000))()
    assert again.sum() == 50_000


def test_limit_and_release():
    before = rt.pool_configure(True, 1 << 20)  # 1 MiB kept at most
    try:
        a = rt.pooled(lambda: [np.ones(100_000) for _ in range(4)])()  # 4 x 800 KB
        spills = build.pool_stats()["spills"]
        del a
        s = build.pool_stats()
        assert s["kept"] <= 1 << 20 and s["spills"] >= spills + 3
        build.release_buffers()
        assert build.pool_stats()["kept"] == 0
    finally:
        rt.pool_configure(*before)


def test_gpt_example_runs_pooled():
    args = gpt.EXAMPLES["loss"]()
    g = srcad.value_and_grad(gpt.loss, wrt="params")
    v1, d1 = g(*args)
    v2, d2 = g(*args)
    assert v1 == v2
    for a, b in zip(leaves(d1), leaves(d2)):
        assert a.tobytes() == b.tobytes()


# -- returned gradients are the buffers themselves (runtime.as_grad) ----------------------

from srcad import runtime  # noqa: E402
from srcad.gradtree import GradTree  # noqa: E402


def test_as_grad_hands_out_only_what_nothing_else_holds():
    x = np.zeros(8)

    made = []

    def make():
        a = np.ones(8)
        made.append(id(a))
        return a

    out = runtime.as_grad(make(), x)  # (not inside `assert`: pytest would keep a reference)
    assert id(out) == made[-1]  # a temporary nothing else holds: handed out

    def named():  # a name in the caller's frame: as_grad cannot tell it from a holder that
        dx = np.ones(8)  # replaced it (`as_grad(saved[0], x)`), so it copies
        return runtime.as_grad(dx, x) is dx

    assert not named()
    saved = (np.ones(8),)
    assert runtime.as_grad(saved[0], x) is not saved[0]
    def generated(dx):  # as a generated function returning its parameter's value
        return runtime.as_grad(dx, x)

    user = np.ones(8)
    assert generated(user) is not user  # the caller holds it
    kept = [np.ones(8)]
    assert runtime.as_grad(kept[0], x) is not kept[0]  # a value someone keeps

    def twice():
        dz = np.ones(8)
        return runtime.as_grad(dz, x), runtime.as_grad(dz, x)

    a, b = twice()
    assert not np.shares_memory(a, b)

    def read_only():
        dx = np.ones(8)
        dx.flags.writeable = False
        return runtime.as_grad(dx, x)

    assert read_only().flags.writeable
    cast = runtime.as_grad(np.ones(8, np.float32), x)
    assert cast.dtype == np.float64

    out = runtime.as_grad((np.ones((2, 4)) @ np.eye(4)).reshape(8), x)
    assert out.base is not None  # the reshaped product itself (a copy would own its data)
    base = np.ones((2, 4))
    assert not np.shares_memory(runtime.as_grad(base.reshape(8), x), base)
    part = np.ones(16)
    assert not np.shares_memory(runtime.as_grad(part[:8], x), part)

    def tree():
        same = np.ones(8)
        dp = GradTree({"a": np.ones(8), "b": same, "c": same})
        return runtime.as_grad(dp, {"a": x, "b": x, "c": x})

    g = tree()
    assert not np.shares_memory(g["b"], g["c"])


def test_container_gradients_are_not_copied():
    """The block's 15 parameter gradients come back as the buffers the backward made: a call
    allocates 15 arrays fewer than when as_grad copies every leaf (the old behaviour)."""
    args = block_inputs(np.float64, B=4, T=16, C=32)
    g = srcad.grad(transformer.block_loss, fuse=False)  # (the default fuses on call 3)
    g(*args)

    def allocations():
        before = build.pool_stats()
        out = g(*args)
        after = build.pool_stats()
        return after["hits"] + after["misses"] - before["hits"] - before["misses"], out

    now, fresh = allocations()
    saved = runtime._LONE[:]
    runtime._LONE[:] = [0, 0, 0]  # nothing is ever alone: every leaf copied
    try:
        copying, copied = allocations()
    finally:
        runtime._LONE[:] = saved
    assert copying - now == len(args[0]) == 15
    for k in fresh:
        assert fresh[k].tobytes() == copied[k].tobytes()
        assert not any(np.shares_memory(fresh[k], v) for v in args[0].values())
