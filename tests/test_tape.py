"""mode="tape" (the eager operator-overloading reference) agrees with mode="source" bit for bit.

Both modes run the same op-table rows: the same numpy calls in the same order forward, and
the same VJP expressions backward (source mode inlines them, the tape calls the lambdas).
`np.array_equal`, not allclose. (-0.0 and 0.0 compare equal: source mode may start an
accumulation from zeros where the tape starts from the first contribution.)
"""

import numpy as np
import pytest

import srcad
from srcad.zoo import gpt, transformer
from tests import corpus_control as C
from tests import corpus_straight as S


def _float_positions(args):
    return tuple(i for i, a in enumerate(args) if srcad.api._is_float(a))


def _assert_bitwise(a, b, where):
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _assert_bitwise(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_bitwise(x, y, f"{where}[{i}]")
    elif a is None or b is None:
        assert a is None and b is None, where
    else:
        assert np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b), where
        assert np.array_equal(a, b, equal_nan=True), f"{where}: not bitwise equal"




CORPUS = [(name, fn, make) for cases in (S.CASES, C.CASES) for name, (fn, make) in cases.items()]
# float32 runs: the whole straight-line corpus, and the loop programs that converge in float32
F32 = set(S.CASES) | set(C.FLOAT32_CASES)
RUNS = [pytest.param(name, fn, make, dtype, id=f"{name}-{np.dtype(dtype).name}")
        for name, fn, make in CORPUS for dtype in (np.float64, np.float32)
        if dtype == np.float64 or name in F32]


@pytest.mark.parametrize("name, fn, make, dtype", RUNS)
def test_corpus_bitwise(name, fn, make, dtype):
    args = make(np.random.default_rng(0), dtype)
    wrt = _float_positions(args)
    if not wrt:
        pytest.skip("no float argument")
    src = srcad.value_and_grad(fn, wrt=wrt)(*args)
    tape = srcad.value_and_grad(fn, wrt=wrt, mode="tape")(*args)
    _assert_bitwise(src, tape, name)


@pytest.mark.parametrize("name", sorted(C.VJP_CASES))
def test_vjp_bitwise(name):
    fn, make = C.VJP_CASES[name]
    args = make(np.random.default_rng(1), np.float64)
    out_s, pb_s = srcad.vjp(fn, *args)
    out_t, pb_t = srcad.vjp(fn, *args, mode="tape")
    _assert_bitwise(out_s, out_t, name)
    u = np.random.default_rng(2).standard_normal(np.shape(out_s))
    _assert_bitwise(pb_s(u), pb_t(u), name)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_transformer_block_bitwise(dtype):
    rng = np.random.default_rng(0)
    p = transformer.randomize(rng, transformer.init(rng, 16, 4, dtype=dtype))
    x = rng.standard_normal((2, 5, 16)).astype(dtype)
    probe = rng.standard_normal((2, 5, 16)).astype(dtype)
    src = srcad.value_and_grad(transformer.block_loss, wrt=(0, 1))(p, x, 4, probe)
    tape = srcad.value_and_grad(transformer.block_loss, wrt=(0, 1), mode="tape")(p, x, 4, probe)
    _assert_bitwise(src, tape, "block")


def test_gpt_bitwise():
    rng = np.random.default_rng(0)
    params = gpt.init(rng, 11, 16, 2, 2, 8)
    tokens = rng.integers(0, 11, size=(2, 8))
    targets = rng.integers(0, 11, size=(2, 8))
    src = srcad.value_and_grad(gpt.loss, wrt=0)(params, tokens, targets, 2)
    tape = srcad.value_and_grad(gpt.loss, wrt=0, mode="tape")(params, tokens, targets, 2)
    _assert_bitwise(src, tape, "gpt")


def test_tape_has_no_source():
    g = srcad.grad(S.CASES["mlp2_tanh"][0], mode="tape")
    with pytest.raises(srcad.SrcadError):
        srcad.source(g)


# ---------------------------------------------------------------------------------------------
# every row of the op table: its test cases (tests/test_ops.py) in both modes, bit for bit
# ---------------------------------------------------------------------------------------------


def _row_cases():
    from test_ops import cases_of, elementwise_expr

    for op in srcad.ops.all_ops():
        if not op.differentiable or op.family == "runtime":
            continue
        cases = [(c.src, c.shapes, c.domain) for c in cases_of(op)]
        if op.elementwise:  # the row's own spelling, on one broadcasting shape tuple
            params, expr = elementwise_expr(op)
            shapes = [(2, 3), (3,), (2, 1)][:len(params)]
            cases.append((expr, shapes, None, params))
        for case in cases:
            yield pytest.param(op, case, id=f"{op.name}: {case[0]} @ {case[1]}")


@pytest.mark.parametrize("op, case", list(_row_cases()))
# float32 under -m slow (the default suite's budget): float64 holds every row case's source
# and tape to one another bit for bit; test_ops checks float32 values and gradients per row
@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
def test_row_case_bitwise(tmp_path, op, case, dtype):
    import zlib

    from test_ops import _domain, _module

    src, shapes = case[0], case[1]
    params = list(case[3]) if len(case) > 3 else list("abcdefgh"[:len(shapes)])
    domain = _domain(op, len(params), case[2])
    key = f"{op.name}-{src}"
    args = srcad.testing.random_args(shapes, dtype, rng=zlib.crc32(key.encode()), domain=domain)
    mod = _module(tmp_path, params, src)
    mod.OP = op.fn
    out = mod.value(*args)
    mod.P = np.random.default_rng(1).standard_normal(np.shape(out)).astype(np.result_type(out))
    wrt = tuple(range(len(args)))
    s = srcad.value_and_grad(mod.f, wrt=wrt)(*args)
    t = srcad.value_and_grad(mod.f, wrt=wrt, mode="tape")(*args)
    _assert_bitwise(s, t, key)


# ---------------------------------------------------------------------------------------------
# numpy's scalar types called on differentiated values: rows on the tape too
# ---------------------------------------------------------------------------------------------
_SCALAR_TYPES = '''\
import numpy as np
from numpy import float64


def int_index(x):  # autograd's test_cast_to_int: an integer index carries no gradient
    return x[:, :-1][np.int64(x[:, -1])].sum()


def float_cast(x):
    return np.float64(np.sum(x * x)) * 2.0 + float64(np.sum(x)) * np.sum(x)


def as_types(x):
    s = np.sum(x.astype(np.float64))
    assert isinstance(s, np.float64) and issubclass(np.float64, np.floating)
    y = x.astype(np.float64) + np.zeros(x.shape, dtype=float64)
    return np.sum(y * np.float64(np.finfo(np.float64).eps * 0 + 3.0)) + s * np.int64(2)
'''


@pytest.mark.parametrize("name", ["int_index", "float_cast", "as_types"])
def test_numpy_scalar_types_on_tape(tmp_path, name):
    """np.float64(t) is a differentiable cast and np.int64(t) an index with no gradient in
    tape mode as in source mode (numpy alone turned the Tensor into a plain value: the cast's
    gradient was silently 0, and the integer index refused); as a dtype, in isinstance or
    np.finfo the type is numpy's own."""
    import importlib.util

    path = tmp_path / "scalar_types.py"
    path.write_text(_SCALAR_TYPES)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, name)
    x = np.full((5, 10), 1.5) if name == "int_index" else \
        np.random.default_rng(0).standard_normal((3, 4))
    s = srcad.value_and_grad(fn)(x)
    t = srcad.value_and_grad(fn, mode="tape")(x)
    _assert_bitwise(s, t, name)
    srcad.testing.check_grads(fn, (x,), mode="tape")
    assert np.any(t[1] != 0)


# ---------------------------------------------------------------------------------------------
# a copy `y = a` that is the array `a` on some trips or paths only (frontend/aliases.py
# `split_reads`): bit for bit too (source mode summed y's contributions apart, then added them
# into a's; the tape's one Tensor sums them in the order it reaches them)
# ---------------------------------------------------------------------------------------------
def copy_rebound_in_for(x):
    a = np.tanh(x)
    y = a
    for i in range(3):
        y = y * a + np.sin(y)
    return np.sum(y * a)


def copy_in_one_arm(x):
    a = np.tanh(x)
    y = np.cos(x)
    if np.sum(x) > 0.0:
        y = a
    return np.sum(y * a) + np.sum(np.sin(y) * a)


def copy_in_loop_arm(x):
    a = np.tanh(x)
    y = np.cos(x)
    s = 0.0
    for i in range(3):
        if i == 1:
            y = a
        s = s + np.sum(y * a * x[i])
    return s


def copy_of_loop_result(x):
    a = np.tanh(x)
    for i in range(3):
        a = np.tanh(a) * 1.5
        y = a  # `a` after the loop, until the next loop rebinds y
    r = np.tanh(a[1]) * -0.75
    for i in range(3):
        y = np.tanh(y) * 0.5
    return np.sum(a * a) + np.sum(y) * -2.0 + np.sum(r)


@pytest.mark.parametrize("fn", [copy_rebound_in_for, copy_in_one_arm, copy_in_loop_arm,
                                copy_of_loop_result])
@pytest.mark.parametrize("shift", [0.1, 0.2, 0.3])
def test_copy_on_some_paths_bitwise(fn, shift):
    """(Each function differs in the last bits for at least one shift before split_reads.)"""
    x = np.random.default_rng(0).standard_normal((3, 4))
    x -= x.mean() - shift
    _assert_bitwise(srcad.value_and_grad(fn)(x), srcad.value_and_grad(fn, mode="tape")(x),
                    fn.__name__)
    srcad.testing.check_grads(fn, (x,))
    assert "same_object(" in srcad.source(srcad.grad(fn))  # (decided when it runs: `y is a`)


def copy_of_parameter_in_one_arm(x):
    a = np.tanh(x)
    v = a[1]
    if np.sum(x) > 0.0:
        a = x
    return np.sum(x * x) + np.sum(a) * 0.25 + np.sum(v)


def copy_of_parameter_in_one_arm_with_views(x):
    a = np.tanh(x)
    v = np.swapaxes(a, 1, -1)
    if np.sum(x) > 0.0:
        a = x
    w = np.transpose(v, (1, 0))
    return np.sum(x * x) + np.sum(a) * 0.25 + np.sum(np.sin(v)) + np.sum(w) * -1.25


@pytest.mark.parametrize("fn", [copy_of_parameter_in_one_arm,
                                copy_of_parameter_in_one_arm_with_views])
@pytest.mark.parametrize("shift", [0.1, 0.2, 0.3])  # (the arm runs: a is x)
def test_copy_of_parameter_bitwise(fn, shift):
    """A parameter never assigned holds its array to the end: the name reads go through where
    a copy of it may hold that array (frontend/aliases.py `_Program.kept_until`)."""
    x = np.random.default_rng(0).standard_normal((3, 4))
    x -= x.mean() - shift
    _assert_bitwise(srcad.value_and_grad(fn)(x), srcad.value_and_grad(fn, mode="tape")(x),
                    fn.__name__)
    srcad.testing.check_grads(fn, (x,))


# ---------------------------------------------------------------------------------------------
# attributes source mode lowers to a row are the tape's own too (not the plain value's)
# ---------------------------------------------------------------------------------------------
def test_every_lowered_attribute_is_recorded_on_the_tape():
    """An attribute source mode lowers to a numpy function (frontend/methods.py ATTRIBUTES)
    passes check_opaque, so the tape must record it: one the Tensor lacked fell through to the
    plain value and its gradient was silently zero (`x.mT` before it was a Tensor property)."""
    from srcad.frontend.methods import ATTRIBUTES
    from srcad.tape_tensor import Tensor

    no_gradient = {"shape", "ndim", "size", "dtype", "strides"}  # (queries: ints, a dtype)
    missing = [a for a in ATTRIBUTES if a not in no_gradient and not isinstance(
        getattr(Tensor, a, None), property)]
    assert not missing, f"ATTRIBUTES the tape's Tensor does not record: {missing}"
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    for mode in ("source", "tape"):
        g = srcad.grad(_attr_loss, mode=mode)(x.copy())
        assert np.allclose(g, srcad.testing.numerical_grad(_attr_loss, (x,)), atol=1e-6)


def test_every_lowered_method_is_recorded_on_the_tape():
    """The same for methods (frontend/methods.py METHODS: `x.sum()`, `x.clip(a, b)`, `x @ y`'s
    `__matmul__`, ...): each must be the Tensor's own, recorded as its row, not handed by
    `Tensor.__getattr__` to the plain value (a silently zero gradient in tape mode). `pop` is
    a list's (lowered for lists the function makes; a Tensor has none, as an array has none)."""
    from srcad.frontend.methods import METHODS
    from srcad.tape_tensor import Tensor

    missing = [m for m in METHODS if m != "pop" and not any(
        m in vars(k) for k in Tensor.__mro__ if k is not object)]
    assert not missing, f"METHODS the tape's Tensor does not record: {missing}"
    x = np.random.default_rng(1).standard_normal((3, 4))
    for mode in ("source", "tape"):
        g = srcad.grad(_method_loss, mode=mode)(x.copy())
        assert np.allclose(g, srcad.testing.numerical_grad(_method_loss, (x,)), atol=1e-6)


def _method_loss(x):
    y = x.clip(-0.8, 0.8).reshape(4, 3).T
    return (y.sum(axis=0).max() + x.mean() * x.std() + (x @ x.T).trace()
            + x.cumsum(axis=1).prod() * 1e-3 + abs(-x).min() + x.ravel().dot(x.ravel()))


def _attr_loss(x):
    out = np.sum(np.sin(x.T) * 1.5) + np.sum(np.cos(x.real)) + np.sum(np.tanh(x.flat[:5]))
    if hasattr(x, "mT"):
        out = out + np.sum(np.sin(x.mT @ x) * 0.5)
    return out
