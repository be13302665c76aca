"""What the table-driven op tests cannot see from one expression: tuple outputs unpacked by
name (eigh, slogdet, split), the seed 1.0 reaching a rule (a scalar output), NaN semantics
of fmax/fmin, refusals that must be errors rather than wrong numbers, and the C expressions
of the elementwise rows compiled and run against numpy.

Each program runs in source and tape mode (bit for bit the same), against central
differences (`check_grads`), and in forward mode (`check_jvp`).
"""

from __future__ import annotations

import ctypes
import importlib.util
import itertools
import shutil
import subprocess
import zlib

import numpy as np
import pytest
from test_ops import cases_of

import srcad
from srcad.testing import check_grads, check_jvp, random_args

# ---------------------------------------------------------------------------------------------
# tuple outputs, unpacked
# ---------------------------------------------------------------------------------------------


def eigh_both(a):
    w, v = np.linalg.eigh(a @ a.T + np.eye(3))
    return np.sum(w * w) + np.sum(v[:, 0] ** 2 * w)


def eigh_values_only(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w ** 2)


def eigh_vectors_only(a):
    w, v = np.linalg.eigh(a + a.T)
    return np.sum(v[0] ** 2 * np.arange(3.0))


def slogdet_both(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign * logdet + logdet ** 2


def slogdet_logdet_only(a):
    _, logdet = np.linalg.slogdet(a @ a.T + np.eye(3))
    return logdet


def split_unpacked(x):
    first, middle, last = np.split(x, 3)
    return np.sum(first * last) + np.sum(np.tanh(first))  # `middle` gets no cotangent


def array_split_loop(x):
    total = 0.0
    for piece in np.array_split(x, 3, axis=1):
        total = total + np.sum(np.sin(piece) * piece)
    return total


def cholesky_logdet(a):
    L = np.linalg.cholesky(a @ a.T + 2 * np.eye(3))
    return 2 * np.sum(np.log(np.diagonal(L)))


def _square(rng, dtype):
    return (rng.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)).astype(dtype)


TUPLE_PROGRAMS = {
    "eigh_both": (eigh_both, lambda r, d: (r.uniform(-1, 1, (3, 3)).astype(d),)),
    "eigh_values_only": (eigh_values_only, lambda r, d: (r.uniform(-1, 1, (3, 3)).astype(d),)),
    "eigh_vectors_only": (eigh_vectors_only, lambda r, d: (r.uniform(-1, 1, (3, 3)).astype(d),)),
    "slogdet_both": (slogdet_both, lambda r, d: (_square(r, d),)),
    "slogdet_logdet_only": (slogdet_logdet_only,
                            lambda r, d: (r.uniform(-1, 1, (3, 3)).astype(d),)),
    "split_unpacked": (split_unpacked, lambda r, d: (r.uniform(-1, 1, 6).astype(d),)),
    "array_split_loop": (array_split_loop, lambda r, d: (r.uniform(-1, 1, (2, 7)).astype(d),)),
    "cholesky_logdet": (cholesky_logdet, lambda r, d: (r.uniform(-1, 1, (3, 3)).astype(d),)),
}


@pytest.mark.parametrize("name", sorted(TUPLE_PROGRAMS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tuple_outputs(name, dtype):
    fn, make = TUPLE_PROGRAMS[name]
    args = make(np.random.default_rng(zlib.crc32(name.encode())), dtype)
    source = srcad.value_and_grad(fn)(*args)
    tape = srcad.value_and_grad(fn, mode="tape")(*args)
    assert np.array_equal(source[0], tape[0]) and np.array_equal(source[1], tape[1]), name
    assert source[1].dtype == np.dtype(dtype)
    check_grads(fn, args)
    check_jvp(fn, args, rng=1)


def test_eigenvalue_loss_is_finite_with_repeated_eigenvalues():
    """Only the eigenvalues reach the loss: the eigenvector term (1 / gaps) is left out, so a
    repeated eigenvalue gives the true gradient, d sum(w^2) / dA = 2 A (folded on a triangle)."""
    a = np.diag([2.0, 2.0, 5.0])
    a[1, 0] = a[0, 1] = 0.0
    g = srcad.grad(eigh_values_only)(a)
    assert np.all(np.isfinite(g))
    want = np.tril(2 * a + 2 * a.T) / (1 + np.eye(3))  # numpy reads the lower triangle
    np.testing.assert_allclose(g, want, atol=1e-12)
    np.testing.assert_array_equal(g, srcad.grad(eigh_values_only, mode="tape")(a))


# ---------------------------------------------------------------------------------------------
# cotangents of a list's items add item by item (a tuple + a tuple would concatenate)
# ---------------------------------------------------------------------------------------------


def two_uses_of_parts(x):
    parts = np.split(x, 2)
    return np.sum(np.concatenate(parts) * 2.0) + np.sum(np.stack(parts) * 3.0)


def list_argument_joined(p, x):
    return np.sum(np.concatenate(p) ** 2 * x) + np.sum(np.stack(p) * 3.0)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_cotangents_of_a_list_add_item_by_item(mode):
    """Was 3.0 everywhere in both modes: the cotangent of `parts` from np.concatenate (a
    tuple) was appended to the one from np.stack instead of added."""
    x = np.arange(4.0)
    np.testing.assert_array_equal(srcad.grad(two_uses_of_parts, mode=mode)(x), np.full(4, 5.0))
    p, w = [np.array([1.0, 2.0]), np.array([3.0, 4.0])], np.arange(4.0)
    gp = srcad.grad(list_argument_joined, mode=mode)(p, w)
    np.testing.assert_allclose(gp[0], 2 * p[0] * w[:2] + 3.0)
    np.testing.assert_allclose(gp[1], 2 * p[1] * w[2:] + 3.0)
    check_grads(two_uses_of_parts, (x,), mode=mode)
    check_grads(list_argument_joined, (p, w), wrt=(0, 1), mode=mode)


def test_tangents_of_tuple_helpers_add_item_by_item():
    """A second derivative through einsum adds two tuple-valued terms (the gradient's
    dependence on its cotangent and on the other operand)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    check_jvp(two_uses_of_parts, (np.arange(4.0),))
    g = srcad.grad(einsum_sin, wrt=(0, 1))
    va, vb = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    _, hv = srcad.jvp(g, (a, b), (va, vb))
    h = 1e-5
    fd = [(p - m) / (2 * h) for p, m in zip(g(a + h * va, b + h * vb), g(a - h * va, b - h * vb))]
    for x, y in zip(hv, fd):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-8)


def einsum_sin(a, b):
    return np.sum(np.sin(np.einsum("ij,jk->ik", a, b)))


def transposed_product(a, b):
    return np.sum(np.sin(a @ b))


def test_finite_differences_of_a_transposed_argument():
    """srcad.testing perturbed a copy of a Fortran-ordered argument (w.reshape(-1) copies),
    so its central differences were zeros."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)).T
    assert not b.flags.c_contiguous
    fd = srcad.testing.numerical_grad(transposed_product, (a, b), wrt=1)
    want = a.T @ np.cos(a @ b)
    np.testing.assert_allclose(fd, want, rtol=1e-6)
    check_grads(transposed_product, (a, b), wrt=(0, 1))


# ---------------------------------------------------------------------------------------------
# the seed 1.0 reaching a rule: every case whose value is a scalar, returned as it is
# ---------------------------------------------------------------------------------------------

_BARE = """\
import numpy as np

OP = None


def f({params}):
    return {expr}
"""
_count = itertools.count()


def _scalar_cases():
    from test_ops import _domain

    for op in srcad.ops.all_ops():
        if not op.differentiable or op.family == "runtime":
            continue
        for case in cases_of(op):
            params = list("abcdefgh"[:len(case.shapes)])
            args = random_args(case.shapes, np.float64, rng=0,
                               domain=_domain(op, len(params), case.domain))
            env = {"np": np, "OP": op.fn, **dict(zip(params, args))}
            try:
                value = eval(case.src, env)  # our own table's expressions
            except Exception:
                continue
            if np.ndim(value) == 0 and not isinstance(value, tuple):
                yield pytest.param(op, case, id=f"{op.name}: {case.src} @ {case.shapes}")


@pytest.mark.parametrize("op, case", list(_scalar_cases()))
def test_scalar_output_keeps_float32(tmp_path, op, case):
    from test_ops import _domain

    params = list("abcdefgh"[:len(case.shapes)])
    path = tmp_path / f"bare_case_{next(_count)}.py"
    path.write_text(_BARE.format(params=", ".join(params), expr=case.src))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.OP = op.fn
    key = f"{op.name}-{case.src}"
    args = random_args(case.shapes, np.float32, rng=zlib.crc32(key.encode()),
                       domain=_domain(op, len(params), case.domain))
    wrt = tuple(range(len(args)))
    for mode in ("source", "tape"):
        grads = srcad.grad(mod.f, wrt=wrt, mode=mode)(*args)
        assert all(g.dtype == np.float32 for g in grads), (mode, [g.dtype for g in grads])
    check_grads(mod.f, args, wrt=wrt, tol=(case.tol or {}).get("float32", op.tol["float32"]))


# ---------------------------------------------------------------------------------------------
# fmax / fmin: a NaN loses, and the gradient goes to the input that is the output
# ---------------------------------------------------------------------------------------------


WEIGHTS = np.array([1.0, 2.0, 3.0, 4.0])


def fmax_sum(x, y):
    return np.sum(np.fmax(x, y) * WEIGHTS)


def fmin_sum(x, y):
    return np.sum(np.fmin(x, y) * WEIGHTS)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_fmax_fmin_nan_and_ties(mode):
    nan = np.nan
    x = np.array([nan, 1.0, 2.0, nan])
    y = np.array([0.0, nan, 2.0, nan])
    w = WEIGHTS
    for fn in (fmax_sum, fmin_sum):
        dx, dy = srcad.grad(fn, wrt=(0, 1), mode=mode)(x, y)
        # x NaN: y is the output; y NaN: x is; a tie splits; both NaN: x is the output (NaN)
        np.testing.assert_array_equal(dx, w * [0.0, 1.0, 0.5, 1.0])
        np.testing.assert_array_equal(dy, w * [1.0, 0.0, 0.5, 0.0])
    _, tangent = srcad.jvp(fmax_sum, (x, y), (np.ones(4), np.zeros(4)))
    assert tangent == 1.0 * 2 + 0.5 * 3 + 1.0 * 4


# ---------------------------------------------------------------------------------------------
# refusals: an error that names the problem, never a wrong gradient
# ---------------------------------------------------------------------------------------------


def pad_reflect(x):
    return np.sum(np.pad(x, 1, mode="reflect") ** 2)


def pad_value_pairs(x, v):
    return np.sum(np.pad(x, 1, constant_values=(v, 2.0 * v)))


def einsum_bad_keyword(a):
    return np.sum(np.einsum("ij->", a, out=None))


def norm_twice(x):
    return np.linalg.norm(x) ** 2


def nuclear_norm(x):
    return np.linalg.norm(x, "nuc")


def test_second_derivative_of_norm():
    """The 2-norm is twice differentiable (its HVP is 2 v for ||x||^2); so is the nuclear norm,
    through the SVD (against central differences of its gradient)."""
    x = np.array([1.0, 2.0, 3.0])
    v = np.array([0.5, -1.0, 2.0])
    _, hv = srcad.jvp(srcad.grad(norm_twice), (x,), (v,))
    np.testing.assert_allclose(hv, 2 * v, rtol=1e-12)
    a = np.random.default_rng(2).standard_normal((3, 4))
    t = np.random.default_rng(3).standard_normal((3, 4))
    g = srcad.grad(nuclear_norm)
    _, hv = srcad.jvp(g, (a,), (t,))
    fd = (g(a + 1e-5 * t) - g(a - 1e-5 * t)) / 2e-5
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-8)
    assert np.max(np.abs(hv)) > 1e-3


# ---------------------------------------------------------------------------------------------
# the C expressions of the new elementwise rows, compiled, against numpy (float64)
# ---------------------------------------------------------------------------------------------

# exact: selections and scalings; the transcendental rows may differ from numpy's own loops
# by a few ulp (numpy's SIMD code vs libm), the bound the fuser documents
C_ROWS = {"fmax": 0, "fmin": 0, "deg2rad": 0, "rad2deg": 0, "hypot": 0, "arctan2": 2,
          "logaddexp2": 2, "sinc": 4, "mod": 0, "remainder": 0, "fabs": 0, "conj": 0,
          "arcsinh": 4, "arccosh": 4, "arctanh": 4}


def _special_values(n, rng):
    special = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.0, 1e-300, -3.5])
    pairs = np.array(list(itertools.product(special, special))).T
    random = rng.standard_normal((2, n)) * 10
    ties = np.stack([random[0], random[0]])
    return np.concatenate([pairs, random, ties], axis=1)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")
@pytest.mark.parametrize("name", sorted(C_ROWS))
def test_c_expression_matches_numpy(tmp_path, name):
    op = srcad.ops.by_name(name)
    params = op.param_names
    args = ", ".join(f"double {p}" for p in params)
    call = "f(x[i], y[i])" if len(params) > 1 else "f(x[i])"
    code = (f"#include <math.h>\ndouble f({args}) {{ return {op.c_expr}; }}\n"
            "void run(long n, const double *x, const double *y, double *out) {\n"
            f"  for (long i = 0; i < n; i++) out[i] = {call};\n"
            "}\n")
    (tmp_path / "k.c").write_text(code)
    lib = tmp_path / "k.so"
    subprocess.run(["gcc", "-O1", "-ffp-contract=off", "-shared", "-fPIC", str(tmp_path / "k.c"),
                    "-o", str(lib), "-lm"], check=True)
    run = ctypes.CDLL(str(lib)).run
    x, y = _special_values(2000, np.random.default_rng(0))
    out = np.empty_like(x)
    ptr = ctypes.POINTER(ctypes.c_double)
    run.argtypes = [ctypes.c_long, ptr, ptr, ptr]
    run(x.size, x.ctypes.data_as(ptr), y.ctypes.data_as(ptr), out.ctypes.data_as(ptr))
    with np.errstate(all="ignore"):
        want = op.fn(x, y) if len(params) > 1 else op.fn(x)
    assert np.array_equal(np.isnan(out), np.isnan(want)), name
    ok = ~np.isnan(want)
    if name in ("fmax", "fmin"):
        # fmax(0.0, -0.0): numpy's SIMD blocks return y, its scalar loop x, so the sign of
        # the zero depends on where the element sits in the array; the C returns x (the
        # scalar loop's answer). The values are equal either way.
        tie = (x == 0) & (y == 0) & (np.signbit(x) != np.signbit(y))
        assert np.array_equal(out[tie], want[tie])
        ok &= ~tie
    if C_ROWS[name] == 0:
        assert np.array_equal(out[ok], want[ok]), name
        assert np.array_equal(np.signbit(out[ok]), np.signbit(want[ok])), f"{name}: signed zeros"
    else:
        finite = ok & np.isfinite(want)
        assert np.array_equal(out[ok & ~finite], want[ok & ~finite]), name
        ulp = np.abs(out[finite] - want[finite]) / np.spacing(np.abs(want[finite]))
        assert ulp.max() <= C_ROWS[name], (name, ulp.max())


def sine_of_power(x, y):
    return np.sum(np.sin(x ** y))


def test_power_of_python_floats_twice():
    """The power rule on Python floats (out is a Python float): first order crashed on
    `out.dtype`, second order on the `.dtype` spelling of np.result_type."""
    g = srcad.grad(sine_of_power, wrt=(0, 1))
    check_grads(sine_of_power, (0.6, 0.7), wrt=(0, 1))
    _, hv = srcad.jvp(g, (0.6, 0.7), (1.0, 1.0))
    h = 1e-6
    fd = [(p - m) / (2 * h) for p, m in zip(g(0.6 + h, 0.7 + h), g(0.6 - h, 0.7 - h))]
    np.testing.assert_allclose(hv, fd, rtol=1e-6)
