"""Gradient tests for every row of the op table, generated from the table itself.

Adding a row adds its tests:
  * a differentiable elementwise row is checked on every broadcast shape tuple of its arity
    (`srcad.testing.broadcast_shapes_for`), built from the row's own spelling
    (``x + y``, ``np.tanh(x)``; a parameter with no VJP, such as `where`'s condition, is fed
    as ``condition > 0``);
  * every row's ``test_cases`` (`srcad.ops.Case`: an expression over ``a, b, ...`` and the
    argument shapes) are checked as written;
  * in float32 and float64, inputs drawn from the row's ``domain``, against central
    differences in float64 (`srcad.testing.check_grads`), tolerance from the row's ``tol``.
srcad reads a function's source, so each case is written as a small module
``def f(a, b): return np.sum((<expr>) * P)`` (``P`` a fixed random projection of the
expression's shape and dtype) into a temporary directory and imported.

Then the cross-cutting properties: a value used k times receives k contributions, dtypes
are kept (float32 stays float32, Python floats do not promote), integer arguments have no
gradient, ties, zeros in prod, the table's own consistency, and docs/ops.md is fresh.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

import srcad
from srcad.ops import Case, all_ops
from srcad.analysis.docs import render_ops_md
from srcad.testing import broadcast_shapes_for, check_grads, random_args

OPS = all_ops()
ARG_NAMES = "abcdefgh"

# Cases that fail because of the transform or the frontend, not the rule, keyed by test id
# without the dtype. Each is reported with a minimal reproduction; strict, so a fix shows.
XFAIL: dict[str, str] = {}


# ---------------------------------------------------------------------------------------------
# writing and running one case
# ---------------------------------------------------------------------------------------------

_MODULE = """\
import numpy as np

P = None  # the fixed random projection, set by the test
OP = None  # the row's own callable, set by the test


def f({params}):
    return np.sum(({expr}) * P)


def value({params}):
    return {expr}
"""
_counter = itertools.count()


@pytest.fixture(scope="module")
def case_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("op_cases")


def _module(case_dir: Path, params: list[str], expr: str):
    name = f"srcad_op_case_{next(_counter)}"
    path = case_dir / f"{name}.py"
    path.write_text(_MODULE.format(params=", ".join(params), expr=expr))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _seed(key: str) -> int:
    return zlib.crc32(key.encode())


def run_case(case_dir, op, params, expr, shapes, dtype, domain, tol, key):
    """Check srcad.grad of sum(expr * P) w.r.t. every argument; return the gradients."""
    args = random_args(shapes, dtype, rng=_seed(key), domain=domain)
    mod = _module(case_dir, params, expr)
    mod.OP = op.fn
    out = mod.value(*args)
    assert np.issubdtype(np.result_type(out), np.floating), f"{expr} is not float-valued"
    proj = np.random.default_rng(_seed(key) + 1).standard_normal(np.shape(out))
    mod.P = proj.astype(np.result_type(out))
    wrt = tuple(range(len(args)))
    grad_fn = srcad.grad(mod.f, wrt=wrt)
    grads = grad_fn(*args)
    for arg, g in zip(args, grads):  # exactly the argument's shape and dtype
        assert isinstance(g, (np.ndarray, np.generic)), type(g)
        assert g.shape == arg.shape and g.dtype == arg.dtype, (g.shape, g.dtype, arg.shape)
    check_grads(mod.f, args, wrt=wrt, tol=tol, grad_fn=grad_fn)
    return grads


def _domain(op, n: int, case_domain=None):
    if case_domain is not None:
        return case_domain
    d = op.domain
    if len(d) == 2 and all(isinstance(v, (int, float)) for v in d):
        return d
    return d if len(d) == n else d[0]


def _xfail(key: str) -> list:
    reason = XFAIL.get(key)
    return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []


def _shape_id(shapes) -> str:
    return ",".join("x".join(map(str, s)) or "()" for s in shapes)


# ---------------------------------------------------------------------------------------------
# elementwise rows on every broadcast shape tuple
# ---------------------------------------------------------------------------------------------


def elementwise_expr(op) -> tuple[list[str], str]:
    """The row's spelling over its own parameter names; no-VJP parameters become masks."""
    masks = {p for p in op.param_names if op.vjp(p) is None}

    class Mask(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in masks:
                return ast.Compare(node, [ast.Gt()], [ast.Constant(0)])
            return node

    tree = Mask().visit(ast.parse(op.spelling_src, mode="eval"))
    return list(op.param_names), ast.unparse(tree)


def _grid():
    for op in OPS:
        if not (op.elementwise and op.differentiable):
            continue
        for shapes in broadcast_shapes_for(len(op.params)):
            for dtype in op.dtypes:
                key = f"{op.name}-{_shape_id(shapes)}"
                yield pytest.param(op, shapes, dtype, marks=_xfail(key), id=f"{key}-{dtype}")


@pytest.mark.parametrize("op, shapes, dtype", list(_grid()))
def test_elementwise_grid(case_dir, op, shapes, dtype):
    params, expr = elementwise_expr(op)
    run_case(case_dir, op, params, expr, shapes, dtype, _domain(op, len(params)), op.tol[dtype],
             f"{op.name}-{shapes}-{dtype}")


# ---------------------------------------------------------------------------------------------
# every row's own cases
# ---------------------------------------------------------------------------------------------


def cases_of(op) -> tuple[Case, ...]:
    """The row's test cases; a row with none and one required argument gets ``OP(a)``."""
    if op.test_cases or (op.elementwise and op.differentiable):
        return op.test_cases
    if op.family == "runtime":
        # what generated code calls: exercised by transforming generated code again
        # (tests/test_higher_order.py), not as user-facing numpy
        return ()
    if sum(p.required for p in op.params) == 1:
        return (Case("OP(a)", ((3, 4),)),)
    return ()


def _cases():
    for op in OPS:
        for case in cases_of(op):
            for dtype in op.dtypes:
                key = f"{op.name}: {case.src} @ {_shape_id(case.shapes)}"
                marks = _xfail(key) + ([pytest.mark.slow] if case.slow else [])
                yield pytest.param(op, case, dtype, marks=marks, id=f"{key}-{dtype}")


@pytest.mark.parametrize("op, case, dtype", list(_cases()))
def test_case(case_dir, op, case, dtype):
    params = list(ARG_NAMES[: len(case.shapes)])
    tol = (case.tol or {}).get(dtype, op.tol[dtype])
    run_case(case_dir, op, params, case.src, case.shapes, dtype,
             _domain(op, len(params), case.domain), tol, f"{op.name}-{case.src}-{dtype}")


# ---------------------------------------------------------------------------------------------
# the table itself
# ---------------------------------------------------------------------------------------------

_C_NAMES = {
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "fabs",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "isnan", "hypot",
    "atan2", "asinh", "acosh", "atanh", "fmod", "copysign", "nextafter",
}


def test_every_row_is_tested():
    untested = [op.name for op in OPS if op.family != "runtime"
                and not (op.elementwise and op.differentiable) and not cases_of(op)]
    assert not untested, f"rows with no test cases: {untested}"


def test_table_size_and_metadata():
    assert len(OPS) >= 35
    for op in OPS:
        assert op.family, op.name
        if op.differentiable:
            assert op.derivation, op.name


@pytest.mark.parametrize("op", [op for op in OPS if op.elementwise], ids=lambda op: op.name)
def test_c_expr_names_the_row_params(op):
    assert op.c_expr, f"{op.name} is elementwise but has no C expression"
    code = re.sub(r"\b\d+(\.\d*)?([eE][+-]?\d+)?", "0", op.c_expr)  # (1.0e-20 names no `e`)
    names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", code))
    unknown = names - set(op.param_names) - _C_NAMES
    assert not unknown, f"{op.name}: c_expr {op.c_expr!r} uses {unknown}"


@pytest.mark.parametrize("op", [op for op in OPS if op.broadcasting], ids=lambda op: op.name)
def test_broadcasting_rules_do_not_unbroadcast(op):
    """The transform unbroadcasts a broadcasting row's VJPs; its rules must not."""
    for rule in op.vjps:
        if rule is not None:
            assert "unbroadcast" not in rule.source and "broadcast" not in rule.source


def test_saved_is_derived_from_the_rules():
    assert by("add").saved == frozenset()
    assert by("multiply").saved == {"x", "y"}
    assert by("tanh").saved == {"out"}
    assert by("exp").saved == {"out"}
    assert by("sum").saved == {"a", "axis", "keepdims", "where"}  # (where=: a mask)


def test_aliases_share_the_row():
    assert np.amax is not np.max and srcad.ops.lookup(np.amax) is by("max")
    assert srcad.ops.lookup(np.amin) is by("min")


def by(name):
    return srcad.ops.by_name(name)


def test_docs_are_fresh():
    path = Path(__file__).resolve().parents[1] / "docs" / "ops.md"
    assert path.exists() and path.read_text() == render_ops_md(), (
        "docs/ops.md is stale: run `python -m srcad regen` "
        "(or python -c 'import srcad.analysis.docs as d; d.write_ops_md()')"
    )


def test_docs_are_deterministic():
    assert render_ops_md() == render_ops_md()


# ---------------------------------------------------------------------------------------------
# accumulation: a value used k times receives k contributions (the failure is a factor of k)
# ---------------------------------------------------------------------------------------------


def cube(x):
    return np.sum(x * x * x)


def tanh_thrice(x):
    return np.sum(np.tanh(x) + np.tanh(x) + np.tanh(x))


def used_by_three_ops(x):
    h = np.sin(x)
    return np.sum(h * x + np.exp(x) * 2.0 + x)


def gathered_thrice(x):
    return np.sum(x[[0, 0, 0]] + np.concatenate((x, x))[1:2] * 0.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_accumulation_counts_every_use(dtype):
    x = np.linspace(-1.5, 1.5, 7).astype(dtype)
    rtol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(srcad.grad(cube)(x), 3 * x * x, rtol=rtol)
    np.testing.assert_allclose(srcad.grad(tanh_thrice)(x), 3 * (1 - np.tanh(x) ** 2), rtol=rtol)
    want = np.cos(x) * x + np.sin(x) + 2 * np.exp(x) + 1
    np.testing.assert_allclose(srcad.grad(used_by_three_ops)(x), want, rtol=rtol)
    want = np.zeros_like(x)
    want[0] = 3
    np.testing.assert_array_equal(srcad.grad(gathered_thrice)(x), want)


# ---------------------------------------------------------------------------------------------
# dtypes: float32 stays float32, Python floats do not promote, ints have no gradient
# ---------------------------------------------------------------------------------------------


def scaled_tanh(x):
    return np.sum(np.tanh(2.0 * x) * 0.5 + 1.0 / (x * x + 1.0) - 3 * x)


def product(x, y):
    return np.sum(x * y + np.exp(x))


def scaled_by_count(n, x):
    return np.sum(x * n)


def test_python_floats_keep_float32():
    x = np.linspace(-1, 1, 5).astype(np.float32)
    g = srcad.grad(scaled_tanh)(x)
    assert g.dtype == np.float32
    t = np.tanh(2 * x.astype(np.float64))
    want = (1 - t * t) - 2 * x / (x * x + 1.0) ** 2 - 3
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_dtype_is_the_arguments(dtype):
    x = np.linspace(-1, 1, 6).reshape(2, 3).astype(dtype)
    assert srcad.grad(cube)(x).dtype == np.dtype(dtype)
    assert srcad.grad(scaled_tanh)(x).dtype == np.dtype(dtype)


def test_mixed_float32_and_float64_arguments():
    x = np.linspace(-1, 1, 4).astype(np.float32)
    y = np.linspace(0.5, 2, 4)  # float64
    gx, gy = srcad.grad(product, wrt=(0, 1))(x, y)
    assert gx.dtype == np.float32 and gy.dtype == np.float64
    np.testing.assert_allclose(gx, y + np.exp(x.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(gy, x, rtol=1e-7)
    check_grads(product, (x, y), wrt=(0, 1))


@pytest.mark.parametrize("n", [np.arange(3), 2, np.int32(2)], ids=["int-array", "int", "np.int32"])
def test_gradient_of_an_int_argument_is_an_error(n):
    x = np.ones(3)
    with pytest.raises(srcad.SrcadError):
        srcad.grad(scaled_by_count, wrt=0)(n, x)
    # the float argument is fine, and the int one is a constant
    np.testing.assert_array_equal(srcad.grad(scaled_by_count, wrt=1)(n, x), n * np.ones(3))


def stack_nested(a, b):
    return np.sum(np.stack([[a, b], [b, a]]) * COLUMN_WEIGHTS[:2])


def test_nested_list_arguments_get_their_gradient():
    ga, gb = srcad.grad(stack_nested, wrt=(0, 1))(np.float64(1.0), np.float64(2.0))
    assert (ga, gb) == (3.0, 3.0)


def half_sum(x):
    return np.sum(np.tanh(x)) * 0.5


def test_zero_d_array_argument_gets_a_zero_d_array():
    g = srcad.grad(half_sum)(np.array(0.5))
    assert isinstance(g, np.ndarray) and g.shape == () and g.dtype == np.float64


def test_numpy_scalar_and_python_float_arguments():
    g = srcad.grad(half_sum)(np.float32(0.5))
    assert isinstance(g, np.float32)
    g = srcad.grad(half_sum)(0.5)
    assert type(g) is float
    assert g == pytest.approx(0.5 * (1 - np.tanh(0.5) ** 2), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# ties, kinks and zeros: values finite differences cannot check
# ---------------------------------------------------------------------------------------------


def max_all(x):
    return np.max(x)


ROW_WEIGHTS = np.array([1.0, 2.0])
COLUMN_WEIGHTS = np.array([[1.0], [2.0], [3.0]])


def max_rows(x):
    return np.sum(np.max(x, axis=1) * ROW_WEIGHTS)


def min_all(x):
    return np.min(x)


def maximum_sum(x, y):
    return np.sum(np.maximum(x, y))


def minimum_sum(x, y):
    return np.sum(np.minimum(x, y))


def abs_sum(x):
    return np.sum(np.abs(x))


def clip_sum(x):
    return np.sum(np.clip(x, -1.0, 1.0))


def prod_all(x):
    return np.prod(x)


def prod_rows(x):
    return np.sum(np.prod(x, axis=1, keepdims=True) * COLUMN_WEIGHTS)


def test_max_min_split_ties_evenly():
    x = np.array([1.0, 3.0, 3.0, -2.0])
    np.testing.assert_array_equal(srcad.grad(max_all)(x), [0, 0.5, 0.5, 0])
    np.testing.assert_array_equal(srcad.grad(min_all)(np.array([1.0, -2.0, 0.0, -2.0])),
                                  [0, 0.5, 0, 0.5])
    x = np.array([[1.0, 1.0, 1.0], [0.0, 4.0, 2.0]])
    third = 1 / 3
    np.testing.assert_allclose(srcad.grad(max_rows)(x), [[third] * 3, [0, 2, 0]], rtol=1e-15)


def test_maximum_minimum_split_ties_evenly():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, -1.0])
    gx, gy = srcad.grad(maximum_sum, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 0, 1])
    np.testing.assert_array_equal(gy, [0.5, 1, 0])
    gx, gy = srcad.grad(minimum_sum, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 1, 0])
    np.testing.assert_array_equal(gy, [0.5, 0, 1])


def test_kinks_follow_torch():
    np.testing.assert_array_equal(srcad.grad(abs_sum)(np.array([-2.0, 0.0, 3.0])), [-1, 0, 1])
    # at a bound the gradient goes to the input (torch.clamp)
    g = srcad.grad(clip_sum)(np.array([-2.0, -1.0, 0.0, 1.0, 2.0], dtype=np.float32))
    np.testing.assert_array_equal(g, [0, 1, 1, 1, 0])
    assert g.dtype == np.float32


def test_prod_is_exact_with_zeros():
    x = np.array([2.0, 0.0, 3.0, 0.5])
    np.testing.assert_array_equal(srcad.grad(prod_all)(x), [0, 3, 0, 0])
    np.testing.assert_array_equal(srcad.grad(prod_all)(np.array([0.0, 2.0, 0.0])), [0, 0, 0])
    x = np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0], [1.0, 2.0, 4.0]])
    want = [[6, 0, 0], [0, 0, 0], [24, 12, 6]]
    np.testing.assert_array_equal(srcad.grad(prod_rows)(x), want)
    check_grads(prod_rows, (x,))
