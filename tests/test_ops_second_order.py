"""Second derivatives through every row of the op table, generated from the table.

For each differentiable row and each of its test cases, ``def f(a, b): return
np.sum(np.sin(1.3 * <expr>) * P)`` (the sine makes the cotangent reaching the row depend on the
inputs, so the second derivative goes through the rule's cotangent and through its other
arguments):

* forward over reverse, ``srcad.jvp(srcad.grad(f), args, v)`` -- the Hessian-vector product;
* reverse over reverse, ``srcad.vjp(srcad.grad(f, wrt=0), *args)[1](u)`` -- H u;

both against central differences of srcad's own gradient (which test_ops checks against
central differences of f), float64. The default run takes every row's first case in both
modes and each other case in one of them, alternating; ``pytest -m slow`` or
``SRCAD_SLOW=1`` runs every case in both. Generated gradient code calls the rows' rules and the
runtime helpers, which are rows too (srcad/ops/helper_rows.py): this is what proves their
own rules. A row whose second derivative srcad does not implement must say so with a
`SrcadError` (never zeros): `FIRST_ORDER_ONLY`.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import zlib

import numpy as np
import pytest
from test_ops import _domain, cases_of, elementwise_expr

import srcad
from srcad.testing import random_args, rel_error

# every differentiable row (second derivatives of all of them are checked below)
NOT_YET: set = set()
ROWS = {op.name for op in srcad.ops.all_ops()
        if op.differentiable and op.family != "runtime" and op.name not in NOT_YET}
# first derivatives only: their gradient helpers depend on the input through repeated
# products of it, and say so when differentiated again (cumprod's family and multi_dot have
# second derivatives: srcad/ops/helper_rows.py, srcad/ops/signal.py)
FIRST_ORDER_ONLY = {"matrix_power", "logaddexp_accumulate",
                    # (their rules are helpers of srcad/runtime_scipy_linalg.py)
                    "scipy_cho_factor", "scipy_cho_solve"}


def first_order_only(op, src: str, shapes) -> bool:
    """The rows above, and np.average(..., returned=True) (its pair: first order)."""
    return op.name in FIRST_ORDER_ONLY or (op.name == "average" and "returned=True" in src)


def _cases():
    for op in srcad.ops.all_ops():
        if op.name not in ROWS:
            continue
        # (not the cases that round to float32 on the way: finite differences in float64
        # see their rounding, which is why they carry a tolerance of their own)
        cases = [(c.src, c.shapes, c.domain) for c in cases_of(op)
                 if not (c.tol and "float64" in c.tol and "float32" in c.src)]
        if op.elementwise and op.differentiable:
            params, expr = elementwise_expr(op)
            cases.append((expr, [(2, 3), (3,), (2, 1)][:len(params)], None, params))
        for k, case in enumerate(cases):
            for m, mode in enumerate(MODES):
                # the default run: a row's first case in both modes, and half of its other
                # cases in one mode each (alternating), so every row x mode runs; the rest is
                # slow (until 2026-12-04 every case ran in one mode: the suite's time)
                marks = () if k == 0 or (m == k % 2 and k % 4 in (1, 2)) else \
                    (pytest.mark.slow,)
                yield pytest.param(op, case, mode, marks=marks,
                                   id=f"{op.name}: {case[0]} @ {case[1]}-{mode}")


MODES = ("forward-over-reverse", "reverse-over-reverse")


_MODULE = """\
import numpy as np

P = None
OP = None


def f({params}):
    return np.sum(np.sin(1.3 * {expr}) * P)


def value({params}):
    return {expr}
"""
_count = itertools.count()


def _module(tmp_path, params, expr):
    path = tmp_path / f"second_order_case_{next(_count)}.py"
    path.write_text(_MODULE.format(params=", ".join(params), expr=expr))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _central(g, args, v, h=1e-5):
    plus = g(*[a + h * t for a, t in zip(args, v)])
    minus = g(*[a - h * t for a, t in zip(args, v)])
    plus, minus = (plus, minus) if isinstance(plus, tuple) else ((plus,), (minus,))
    return [(p - m) / (2 * h) for p, m in zip(plus, minus)]


@pytest.mark.parametrize("op, case, mode", list(_cases()))
def test_second_derivative(tmp_path, op, case, mode, request):
    if request.node.get_closest_marker("slow") and \
            "slow" not in (request.config.getoption("markexpr") or "") and \
            not os.environ.get("SRCAD_SLOW"):
        pytest.skip("the other mode of this case: ask with -m slow or SRCAD_SLOW=1")
    src, shapes = case[0], case[1]
    params = list(case[3]) if len(case) > 3 else list("abcdefgh"[:len(shapes)])
    key = f"{op.name}-{src}"
    args = random_args(shapes, np.float64, rng=zlib.crc32(key.encode()),
                       domain=_domain(op, len(params), case[2]))
    mod = _module(tmp_path, params, src)
    mod.OP = op.fn
    mod.P = np.random.default_rng(1).standard_normal(np.shape(mod.value(*args)))
    v = tuple(np.random.default_rng(2).standard_normal(np.shape(a)) for a in args)

    def second():
        if mode == "forward-over-reverse":
            g = srcad.grad(mod.f, wrt=tuple(range(len(args))))
            return srcad.jvp(g, args, v)[1], _central(g, args, v)
        g = srcad.grad(mod.f, wrt=0)
        u = (v[0],) + tuple(np.zeros_like(a) for a in args[1:])
        return srcad.vjp(g, *args)[1](v[0])[:1], _central(g, args, u)

    if first_order_only(op, src, shapes):
        with pytest.raises(srcad.SrcadError, match="second derivative"):
            second()
        return
    got, want = second()
    for x, y in zip(got, want):
        assert np.shape(x) == np.shape(y)
        x = np.asarray(x, dtype=np.float64)
        # (absolutely small where the second derivative is 0: a / a, finite differences 1e-11)
        assert rel_error(x, y) < 1e-5 or np.max(np.abs(x - y), initial=0) < 1e-8, (key, mode)


def _second_both(mod, args):
    """(forward over reverse, reverse over reverse) against central differences of the
    gradient along one random direction; the errors."""
    v = tuple(np.random.default_rng(2).standard_normal(np.shape(a)) for a in args)
    g = srcad.grad(mod.f, wrt=tuple(range(len(args))))
    g = g if len(args) > 1 else srcad.grad(mod.f, wrt=0)
    fd = _central(g, args, v)
    hv = srcad.jvp(g, args, v)[1]
    hv = hv if isinstance(hv, tuple) else (hv,)
    g0 = srcad.grad(mod.f, wrt=0)
    u = (v[0],) + tuple(np.zeros_like(a) for a in args[1:])
    hu = srcad.vjp(g0, *args)[1](v[0])[:1]
    return list(zip(hv, fd)) + list(zip(hu, _central(g0, args, u)))


def _assert_close(pairs, key):
    for x, y in pairs:
        x = np.asarray(x, dtype=np.float64)
        assert np.shape(x) == np.shape(y), key
        assert rel_error(x, y) < 1e-5 or np.max(np.abs(x - y), initial=0) < 1e-8, key


PROD_AXES = ("", ", axis=0", ", axis=1", ", axis=-1", ", axis=(0, 2)", ", axis=(-1, 0)",
             ", axis=1, keepdims=True", ", keepdims=True")


@pytest.mark.parametrize("zeros", [0, 1, 2, 3, 12])
@pytest.mark.parametrize("axis", PROD_AXES)
def test_prod_second_derivative_with_zeros(tmp_path, axis, zeros):
    """np.prod's Hessian where inputs are exactly 0: one zero in a group leaves the pairs
    (zero, other) a product of the rest, two zeros leave only their own pair nonzero, three
    make it all 0 -- the rule divides by nothing, so each holds (central differences of a
    polynomial are exact to rounding)."""
    a = np.random.default_rng(zeros).uniform(0.5, 1.5, (2, 3, 4))
    flat = a.reshape(-1)
    flat[np.random.default_rng(10 + zeros).permutation(flat.size)[:zeros]] = 0.0
    if zeros == 3:
        flat[:3] = 0.0  # three in one group of every axis form that holds a[0, 0, :3]
    mod = _module(tmp_path, ["a"], f"np.prod(a{axis})")
    mod.P = np.random.default_rng(1).standard_normal(np.shape(mod.value(a)))
    _assert_close(_second_both(mod, (a,)), (axis, zeros))


_EINSUM_SUBLISTS = """\
import numpy as np

W = None


def f(a, b):
    sa = [np.ndim(a) * 15, 1]  # [30, 1], computed
    return np.sum(np.sin(np.einsum(a, sa, b, [1, 2])) * W)
"""


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_einsum_interleaved_sublists_known_when_run(tmp_path, mode):
    """A sublist computed in the function cannot be made a subscripts string before running:
    the interleaved rules serve, first order only, and say so at the second; the implicit
    output follows numpy's label order (2 before 30) on square operands."""
    path = tmp_path / "einsum_sublists.py"
    path.write_text(_EINSUM_SUBLISTS)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.W = np.random.default_rng(1).standard_normal((3, 3))
    a, b = np.random.default_rng(0).standard_normal((2, 3, 3))
    srcad.testing.check_grads(mod.f, (a, b), wrt=(0, 1), mode=mode)
    if mode == "source":
        g = srcad.grad(mod.f, wrt=(0, 1))
        with pytest.raises(srcad.SrcadError, match="interleaved"):
            srcad.jvp(g, (a, b), (a, b))
