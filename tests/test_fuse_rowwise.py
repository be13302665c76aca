"""Row kernels (srcad/lower/cgen_rows.py): chains through a last-axis sum or mean and back,
fused into one kernel that works row by row, bit for bit equal to fuse=False.

LayerNorm, softmax and log-softmax as srcad/zoo/transformer.py writes them, alone and under
grad / value_and_grad / vjp / jvp, float32 and float64, odd row lengths (numpy's pairwise
sum changes its blocking at 8 and 128 values), gains and biases of several broadcast
shapes, rows of NaN, infinities and -0.0, the zoo block and the GPT loss. Each case checks
the fused result's shape, dtype and bytes against the unfused one, that no kernel call took
the Python fallback, and that the last-axis reductions went into kernels (no
``keepdims=True`` sum or mean is left to numpy). A transposed input must take the
fallback (numpy sums a row of another layout in another order) and still agree.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import srcad
from srcad import build
from srcad.zoo import gpt
from srcad.zoo import transformer as T
from tests.test_fuse import fused_batch

ROW_REDUCE = re.compile(r"(np\.(sum|mean)\(|\.(sum|mean)\().*keepdims=True")


def ln_loss(x, g, b, probe):
    return np.sum(T.layer_norm(x, g, b) * probe)


def sm_loss(x, probe):
    return np.sum(T.softmax(x) * probe)


def lsm_loss(x, probe):
    return np.sum(T.log_softmax(x) * probe)


def ce_loss(z, targets):
    return gpt.cross_entropy(z, targets)


def own_norm(x, w):
    """A user's own normalisation (RMSNorm), written in numpy: fused as well."""
    ms = np.mean(x * x, axis=-1, keepdims=True)
    return np.sum(x / np.sqrt(ms + 1e-6) * w)


def _bits(a, b, nan_sign=True) -> bool:
    """Same shape, dtype and bytes. nan_sign=False: a NaN's sign and payload aside (where
    two NaNs of opposite signs meet in one addition, which one survives is the C compiler's
    choice of operand order, as it is numpy's SIMD code's: rows of NaNs only)."""
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and \
            all(_bits(u, v, nan_sign) for u, v in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_bits(a[k], b[k], nan_sign) for k in a)
    a, b = np.asarray(a), np.asarray(b)
    if not nan_sign and a.dtype.kind == "f" and a.shape == b.shape:
        if not np.array_equal(np.isnan(a), np.isnan(b)):
            return False
        a, b = np.where(np.isnan(a), 0, a).astype(a.dtype), np.where(np.isnan(b), 0, b).astype(b.dtype)
    return a.shape == b.shape and a.dtype == b.dtype and \
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _left_to_numpy(src: str) -> list[str]:
    """Lines that still run a last-axis keepdims sum or mean through numpy."""
    return [ln for ln in src.splitlines()
            if not ln.lstrip().startswith("#") and ROW_REDUCE.search(ln.split("#")[0])]


def _rng_data(shape, dtype, seed=0, special=False):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if special:
        flat = x.reshape(-1, shape[-1])
        flat[0, 1] = np.nan
        flat[1 % len(flat), 0] = np.inf
        flat[2 % len(flat), -1] = -np.inf
        flat[3 % len(flat)] = -0.0
        flat[4 % len(flat)] = np.finfo(dtype).max / 2
    return x


def _ln_args(shape, dtype, gshape=None, special=False):
    D = shape[-1]
    rng = np.random.default_rng(1)
    gshape = gshape or (D,)
    x = _rng_data(shape, dtype, special=special)
    return (x, rng.standard_normal(gshape).astype(dtype), rng.standard_normal(gshape).astype(dtype),
            rng.standard_normal(shape).astype(dtype))


def _cases():
    out = []
    for dt in (np.float32, np.float64):
        name = np.dtype(dt).name
        for L in (1, 7, 9, 16, 129, 1000):
            shape = (3, 5, L) if L < 200 else (4, L)
            out.append((f"layer_norm L{L} {name}", ln_loss, _ln_args(shape, dt), (0, 1, 2)))
            out.append((f"softmax L{L} {name}", sm_loss,
                        (_rng_data(shape, dt), _rng_data(shape, dt, 2)), (0,)))
            out.append((f"log_softmax L{L} {name}", lsm_loss,
                        (_rng_data(shape, dt), _rng_data(shape, dt, 2)), (0,)))
        for gshape in ((1, 12), (5, 12), (3, 5, 12)):
            out.append((f"layer_norm gain{gshape} {name}", ln_loss,
                        _ln_args((3, 5, 12), dt, gshape), (0, 1, 2)))
        out.append((f"layer_norm special {name}", ln_loss,
                    _ln_args((2, 5, 12), dt, special=True), (0, 1, 2)))
        out.append((f"softmax special {name}", sm_loss,
                    (_rng_data((2, 5, 12), dt, special=True), _rng_data((2, 5, 12), dt, 2)), (0,)))
        out.append((f"log_softmax special {name}", lsm_loss,
                    (_rng_data((2, 5, 12), dt, special=True), _rng_data((2, 5, 12), dt, 2)),
                    (0,)))
        out.append((f"cross_entropy {name}", ce_loss,
                    (_rng_data((6, 11), dt), np.arange(6) % 11), (0,)))
        out.append((f"own rmsnorm {name}", own_norm,
                    (_rng_data((4, 33), dt), _rng_data((33,), dt, 3)), (0, 1)))
        rng = np.random.default_rng(5)
        p = T.randomize(rng, T.init(rng, 32, 4, dt))
        x = rng.standard_normal((2, 7, 32)).astype(dt)
        out.append((f"zoo block {name}", T.block_loss,
                    (p, x, 4, rng.standard_normal((2, 7, 32)).astype(dt)), "p"))
        params = gpt.init(np.random.default_rng(6), 11, 16, 4, 2, 10, dt)
        out.append((f"gpt loss {name}", gpt.loss,
                    (params, rng.integers(0, 11, (2, 8)), rng.integers(0, 11, (2, 8)), 4),
                    "params"))
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def fused():
    return fused_batch(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_row_chains_fused_bitwise(fused, case):
    name, fn, args, wrt = case
    before = build.stats()["fallbacks"]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        want = srcad.value_and_grad(fn, wrt=wrt)(*args)
        got = fused[name](*args)
    assert _bits(got, want, nan_sign="special" not in name), name
    assert build.stats()["fallbacks"] == before, build.stats()["last_fallback"]
    src = srcad.source(fused[name])
    if " L1 " not in f" {name} ":  # (a row of one value: nothing to reduce, numpy's)
        assert not _left_to_numpy(src), _left_to_numpy(src)


def test_row_kernels_are_one_kernel_per_layer_norm_direction(fused):
    src = srcad.source(fused["layer_norm L16 float32"])
    fwd = src.split("def layer_norm_fwd", 1)[1].split("\ndef ", 1)[0]
    bwd = src.split("def layer_norm_bwd", 1)[1].split("\ndef ", 1)[0]
    assert fwd.count("= fused_") == 1, fwd
    assert bwd.count("= fused_") == 1, bwd


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vjp_jvp_grad_fused_bitwise(dtype):
    x, g, b, probe = _ln_args((3, 4, 24), dtype)
    tx, tg, tb = (_rng_data(a.shape, dtype, 9 + i) for i, a in enumerate((x, g, b)))
    for fn, primals, tangents in ((T.layer_norm, (x, g, b), (tx, tg, tb)),
                                  (T.softmax, (x,), (tx,)), (T.log_softmax, (x,), (tx,))):
        before = build.stats()["fallbacks"]
        out, pb = srcad.vjp(fn, *primals, fuse=True)
        out0, pb0 = srcad.vjp(fn, *primals)
        assert _bits(out, out0) and _bits(pb(probe), pb0(probe)), fn.__name__
        assert not _left_to_numpy(pb.source), pb.source
        jf = srcad.jvp(fn, primals, tangents, fuse=True)
        assert _bits(jf, srcad.jvp(fn, primals, tangents)), fn.__name__
        assert build.stats()["fallbacks"] == before, build.stats()["last_fallback"]
    gr = srcad.grad(ln_loss, wrt=(0, 1, 2), fuse=True)
    assert _bits(gr(x, g, b, probe), srcad.grad(ln_loss, wrt=(0, 1, 2))(x, g, b, probe))


def test_transposed_input_falls_back_and_agrees():
    rng = np.random.default_rng(7)
    base = rng.standard_normal((3, 12, 5)).astype(np.float32)
    x = base.transpose(0, 2, 1)  # (3, 5, 12), last axis strided
    probe = rng.standard_normal((3, 5, 12)).astype(np.float32)
    g = srcad.value_and_grad(sm_loss, fuse=True)
    want = srcad.value_and_grad(sm_loss)(x, probe)
    before = build.stats()["fallbacks"]
    got = g(x, probe)
    assert build.stats()["fallbacks"] > before
    assert "C order" in build.stats()["last_fallback"], build.stats()["last_fallback"]
    assert _bits(got, want)
    # the same function on C-contiguous data: no fallback
    xc = np.ascontiguousarray(x)
    before = build.stats()["fallbacks"]
    assert _bits(g(xc, probe), srcad.value_and_grad(sm_loss)(xc, probe))
    assert build.stats()["fallbacks"] == before


def test_the_bitwise_check_can_fail():
    """A running sum (not numpy's pairwise order) gives other bits on these rows: the
    comparisons above would see a kernel that summed in another order."""
    x = _rng_data((3, 5, 129), np.float32)
    running = np.zeros((3, 5, 1), np.float32)
    for i in range(129):
        running[..., 0] += x[..., i]
    assert running.tobytes() != np.sum(x, axis=-1, keepdims=True).tobytes()


def test_row_kernel_out_arrays_and_in_place():
    """``d += ...`` inside a row kernel, and out= exactly an argument (what the memory plan
    hands a dying operand): the kernel reads each row whole before it writes it."""
    from srcad.lower.standalone import fuse_functions

    src = ("def f(x, d):\n"
           "    m = np.mean(x, axis=-1, keepdims=True)\n"
           "    y = x - m\n"
           "    s = np.sum(y * y, axis=-1, keepdims=True)\n"
           "    d += y / (s + 1.0)\n"
           "    return y * 2.0 - d\n")
    rng = np.random.default_rng(8)
    x, d = rng.standard_normal((4, 9)), rng.standard_normal((4, 9))
    [f], lowered, text = fuse_functions([src], [(x, d)])
    [f0], _, _ = fuse_functions([src], [(x, d)], fuse=False)
    assert text.count("= fused_") == 1 and "np.mean(x" not in text.split("= fused_")[1], text
    d1, d0 = d.copy(), d.copy()
    assert _bits(f(x, d1), f0(x, d0)) and _bits(d1, d0)
    targets, name, names = re.search(r"\n\s*([\w, ]+) = (fused_\w+)\(([^)]*)\)", text).groups()
    names = [n.strip() for n in names.split(",")]
    targets = [t.strip() for t in targets.split(",")]
    k = lowered.functions[name]
    env = {"x": x, "d": d}
    want = k(*[env[n].copy() for n in names])
    o = next(i for i, t in enumerate(targets) if t != "d")  # a new result (not d's update)
    args = [env[n].copy() for n in names]
    own = args[names.index("x")]

    def outs(a):
        return tuple(a if i == o else None for i in range(len(targets))) \
            if len(targets) > 1 else a

    got = k(*args, out=outs(own))
    assert _bits(got, want)
    with pytest.raises(ValueError):
        buf = np.zeros(45)  # x and an out= one row further on: a partial overlap
        buf[:36] = x.ravel()
        args = [buf[:36].reshape(4, 9) if n == "x" else env[n].copy() for n in names]
        k(*args, out=outs(buf[9:].reshape(4, 9)))


def test_every_row_length_lowered_forward():
    """LayerNorm's forward and a softmax-like chain lowered as plain functions, one per row
    length (2..140: each of numpy's pairwise blockings; and 255-257, 1023-1025), in one
    kernel module: each one row kernel, bit for bit."""
    from srcad.lower.standalone import fuse_functions

    lengths = [*range(2, 141), 255, 256, 257, 1023, 1024, 1025]
    srcs, examples = [], []
    rng = np.random.default_rng(11)
    for L in lengths:
        dt = np.float32 if L % 2 else np.float64
        x = (rng.standard_normal((3, L)) * 4).astype(dt)
        srcs.append(f"def ln_{L}(x, g):\n"
                    f"    mu = np.mean(x, axis=-1, keepdims=True)\n"
                    f"    xc = x - mu\n"
                    f"    var = np.mean(xc * xc, axis=-1, keepdims=True)\n"
                    f"    return xc / np.sqrt(var + 1e-5) * g\n")
        srcs.append(f"def sm_{L}(x):\n"
                    f"    e = np.exp(x)\n"
                    f"    s = e.sum(axis=1, keepdims=True)\n"
                    f"    return e / s - np.log(s)\n")
        g = rng.standard_normal(L).astype(dt)
        examples += [(x, g), (x,)]
    fs, _, text = fuse_functions(srcs, examples)
    f0s, _, _ = fuse_functions(srcs, examples, fuse=False)
    assert text.count("= fused_") == len(srcs), text
    before = build.stats()["fallbacks"]
    for f, f0, ex in zip(fs, f0s, examples):
        assert _bits(f(*ex), f0(*ex)), f.__name__
    assert build.stats()["fallbacks"] == before, build.stats()["last_fallback"]


def test_threads_give_the_same_bits():
    rt = build.runtime()
    x, g, b, probe = _ln_args((64, 33, 40), np.float32)
    want = srcad.value_and_grad(ln_loss, wrt=(0, 1, 2))(x, g, b, probe)
    f = srcad.value_and_grad(ln_loss, wrt=(0, 1, 2), fuse=True)
    old = rt.set_num_threads(2), rt.set_parallel_threshold(0), rt.set_adaptive(False)
    try:
        for _ in range(3):
            assert _bits(f(x, g, b, probe), want)
    finally:
        rt.set_num_threads(old[0])
        rt.set_parallel_threshold(old[1])
        rt.set_adaptive(old[2])


def test_strided_rows_fall_back_where_numpy_reads_them_and_agree():
    """A row read by numpy's own loop (exp) or reduced directly must be of adjacent
    elements (numpy's SIMD loops and its pairwise sum treat a strided row otherwise): a
    slice with step 2 runs the fallback; read only by inline arithmetic, it is gathered."""
    from srcad.lower.standalone import fuse_functions

    srcs = ["def direct(x):\n    e = np.exp(x)\n    return e / np.sum(e, axis=-1, keepdims=True)\n",
            "def inline(x, y):\n    e = np.exp(y * 1.5)\n"
            "    return (e + x) / np.sum(e, axis=-1, keepdims=True)\n"]
    rng = np.random.default_rng(12)
    base = rng.standard_normal((6, 22)).astype(np.float32)
    x, y = base[:, ::2], rng.standard_normal((6, 11)).astype(np.float32)
    ex = [(np.ascontiguousarray(x),), (np.ascontiguousarray(x), y)]
    (f, g), _, text = fuse_functions(srcs, ex)
    (f0, g0), _, _ = fuse_functions(srcs, ex, fuse=False)
    assert text.count("= fused_") == 2, text
    before = build.stats()["fallbacks"]
    assert _bits(f(x), f0(x))
    assert build.stats()["fallbacks"] == before + 1
    assert "strided" in build.stats()["last_fallback"], build.stats()["last_fallback"]
    assert _bits(g(x, y), g0(x, y))
    assert build.stats()["fallbacks"] == before + 1  # (x gathered, no fallback)


def test_row_chunks_call_numpy_once_per_chunk_bitwise():
    """The runtime runs a row kernel a chunk of rows at a time (`block_rows`) where every
    operand's rows are evenly spaced: numpy's exp once over the chunk's rows, a row value
    (the max) kept across that call for each row, a one-value-per-row argument, a broadcast
    gain, chunks with a shorter last one (15, 37 rows; 7 or 16 rows to a chunk) and rows of
    more than a chunk's scratch (one row to a chunk); every other row of a matrix (evenly
    spaced: chunked, numpy's loop on them then called row by row) and a row argument
    broadcast over a middle axis (not evenly spaced: row by row). Bit for bit against
    fuse=False."""
    from srcad.lower.standalone import fuse_functions

    src = ("def f(x, m, g):\n"
           "    mx = np.max(x, axis=-1, keepdims=True)\n"
           "    e = np.exp(x - mx)\n"
           "    s = np.sum(e * g, axis=-1, keepdims=True)\n"
           "    return np.log(e / s + 0.5) * mx + m\n",
           "def direct(x):\n"
           "    e = np.exp(x)\n"
           "    return e / np.sum(e, axis=-1, keepdims=True)\n")
    rng = np.random.default_rng(13)
    cases = []
    for shape, dt in (((3, 5, 64), np.float32), ((37, 129), np.float64),
                      ((3, 1500), np.float32)):
        x = (rng.standard_normal(shape) * 4).astype(dt)
        x[..., ::3] = -1e9  # exp underflows to 0 (numpy raises the flag)
        m = rng.standard_normal(shape[:-1] + (1,)).astype(dt)
        g = rng.standard_normal(shape[-1]).astype(dt)
        cases.append(((x, m, g), True))
    rows = rng.standard_normal((10, 40)).astype(np.float32)
    cases.append(((rows[::2], rng.standard_normal((5, 1)).astype(np.float32),
                   rng.standard_normal(40).astype(np.float32)), True))
    base = rng.standard_normal((3, 5, 40)).astype(np.float32)
    cases.append(((base, rng.standard_normal((3, 1, 1)).astype(np.float32),
                   rng.standard_normal(40).astype(np.float32)), False))
    rt = build.runtime()
    for (x, m, g), chunked in cases:
        ex = [(np.ascontiguousarray(x), m, g), (np.ascontiguousarray(x),)]
        (f, d), _, text = fuse_functions(list(src), ex)
        (f0, d0), _, _ = fuse_functions(list(src), ex, fuse=False)
        assert text.count("= fused_") == 2, text
        before = rt.stats()
        with np.errstate(all="ignore"):
            assert _bits(f(x, m, g), f0(x, m, g)), x.shape
            assert _bits(d(x), d0(x)), x.shape
        after = rt.stats()
        assert after["fallbacks"] == before["fallbacks"], after["last_fallback"]
        assert after["row_chunked"] - before["row_chunked"] == (2 if chunked else 1), x.shape
