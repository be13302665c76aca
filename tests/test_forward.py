"""Forward mode (`srcad.jvp`) agrees with `torch.func.jvp`, and with srcad's own reverse mode.

* Every differentiable row of the op table (runtime rows excluded, as in tests/test_ops.py):
  an elementwise row on a grid of shapes (every broadcast pair of rank <= 2 for a binary
  row, every rank for a unary one, a few broadcasting triples for `where`/`clip`), every
  other row on its own ``test_cases``. The case is the expression itself,
  ``def f(a, b): return <expr>``, written to a module (srcad reads source). The oracle runs
  the *same expression text* with ``np`` bound to ``torch._numpy`` (torch's numpy API over
  tensors) under ``torch.func.jvp``, in float64.
* The straight-line corpus (tests/corpus_straight.py) and the control-flow corpus
  (tests/corpus_control.py), against their torch twins (defined in test_torch_agreement.py
  and test_control_flow.py) under ``torch.func.jvp``; random tangents for float arguments.
* Calls to user functions, pytree arguments (dict / list / tuple of arrays) and closures.
* ``srcad.testing.check_consistency`` (``<u, J v>`` by jvp equals ``<J^T u, v>`` by vjp) on
  a sample of both corpora, and ``check_jvp`` (finite differences along the tangent).

Metric: the seed's ``max|a - b| / (max|b| + 1e-12)``, below 1e-10 in float64. A float32
JVP stays float32 (values and tangents) and is compared with the float64 oracle at 1e-4.
Torch is a test-only oracle.
"""

from __future__ import annotations

import importlib.util
import itertools
import zlib
from pathlib import Path
from typing import ClassVar

import corpus_control as CC
import corpus_straight as CS
import numpy as np
import pytest
import special_twins
import test_control_flow as TCF  # the control-flow corpus's torch twins
import test_torch_agreement as TSA  # the straight-line corpus's torch twins
import torch
import torch._numpy as tnp  # torch's numpy API over tensors: the op-table oracle
from test_ops import cases_of, elementwise_expr
from torch.func import jvp as torch_jvp

import srcad
from srcad.ops import all_ops
from srcad.testing import (
    broadcast_pairs,
    broadcast_shapes_for,
    check_consistency,
    check_jvp,
    random_args,
    rel_error,
)

torch.set_num_threads(1)
# torch.func scripts a helper on first use and warns that torch.jit.script is deprecated
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")

TOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-4}
OPS = [op for op in all_ops() if op.differentiable and op.family != "runtime"]
ARG_NAMES = "abcdefgh"

# Known srcad bugs, keyed by test id; strict, so a fix shows. Each has a minimal
# reproduction in the reason.
_FLOAT_LITERAL_TANGENT = (
    "forward mode: the tangent of a Python-float literal carried through a loop is "
    "zeros_grad(0.0) = a float64 0-d array, which (unlike the weak Python float of the "
    "primal) promotes float32 to float64: `acc = 0.0; for i in range(2): acc = acc + "
    "np.sum(x)` with float32 x gives a float32 value but a float64 tangent "
    "(test_float_literal_accumulator_tangent_keeps_float32; straight-line code is fine)")
XFAIL: dict[str, str] = {}  # (all fixed; see git history for the reproductions)


def _marks(key: str) -> list:
    reason = XFAIL.get(key)
    return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []


def _seed(key: str) -> int:
    return zlib.crc32(key.encode())


def _is_float(a) -> bool:
    return isinstance(a, (np.ndarray, np.generic)) and np.issubdtype(a.dtype, np.floating)


def _t(a):
    """numpy -> float64 torch (int and bool arrays keep their dtype; Python ints stay)."""
    if isinstance(a, (np.ndarray, np.generic)):
        a = np.asarray(a)
        return torch.tensor(a.astype(np.float64) if _is_float(a) else a)
    return a


def assert_close(actual, expected, dtype, what, inputs=None):
    """``actual`` (srcad's) has shape ``expected.shape`` and dtype ``dtype`` (numpy's own
    result type), and agrees with the float64 oracle by the seed's metric. The tolerance
    follows the *inputs'* precision (default ``dtype``): float32 inputs promoted to a float64
    result by a float64 constant still carry float32 rounding."""
    dtype = np.dtype(dtype)
    inputs = dtype if inputs is None else np.dtype(inputs)
    assert np.shape(actual) == tuple(expected.shape), (
        f"{what}: shape {np.shape(actual)} != {tuple(expected.shape)}")
    assert np.result_type(actual) == dtype, f"{what}: dtype {np.result_type(actual)} != {dtype}"
    err = rel_error(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64))
    assert err < TOL[inputs], f"{what} ({inputs.name} inputs): rel error {err:.3g}"
    return err


# =============================================================================================
# (a) every differentiable row of the op table
# =============================================================================================

_MODULE = """\
import numpy as np

OP = None  # the row's own callable, set by the test


def f({params}):
    return {expr}
"""
_counter = itertools.count()


@pytest.fixture(scope="module")
def case_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("jvp_cases")


def _module(case_dir: Path, params, expr, op):
    name = f"srcad_jvp_case_{next(_counter)}"
    path = case_dir / f"{name}.py"
    path.write_text(_MODULE.format(params=", ".join(params), expr=expr))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.OP = op.fn
    return mod


def _axes(axis, ndim):
    return sorted((a % ndim for a in (axis if isinstance(axis, tuple) else (axis,))),
                  reverse=True)


class _TorchNumpy:
    """``np`` for the oracle: torch._numpy, plus numpy behaviour it lacks (numpy 2 spellings,
    tuple axes for prod/squeeze, N-d ``dot`` and ``outer`` of non-vectors, nansum and
    nanmean), written with
    torch ops so that torch differentiates them."""

    _ALIASES: ClassVar[dict] = {"permute_dims": "transpose", "concat": "concatenate"}

    def __getattr__(self, name):
        return getattr(tnp, self._ALIASES.get(name, name))

    @staticmethod
    def prod(a, axis=None, keepdims=False):
        if not isinstance(axis, tuple):
            return tnp.prod(a, axis=axis, keepdims=keepdims)
        for ax in _axes(axis, a.ndim):
            a = tnp.prod(a, axis=ax, keepdims=True)
        return a if keepdims else TNP.squeeze(a, axis)

    @staticmethod
    def squeeze(a, axis=None):
        if not isinstance(axis, tuple):
            return tnp.squeeze(a, axis=axis)
        for ax in _axes(axis, a.ndim):
            a = tnp.squeeze(a, axis=ax)
        return a

    @staticmethod
    def nansum(a, axis=None, keepdims=False):
        return tnp.sum(tnp.where(tnp.isnan(a), 0.0, a), axis=axis, keepdims=keepdims)

    @staticmethod
    def nanmean(a, axis=None, keepdims=False):
        kept = tnp.logical_not(tnp.isnan(a))
        return (TNP.nansum(a, axis=axis, keepdims=keepdims)
                / tnp.sum(kept, axis=axis, keepdims=keepdims))

    @staticmethod
    def quantile(a, q, axis=None, method="linear", keepdims=False, nan=False, scale=1.0):
        """torch.quantile / torch.nanquantile (one dim: tuple axes moved last and flattened;
        numpy's output shape, q's axes first)."""
        t = tnp.asarray(a).tensor
        qt = torch.as_tensor(np.asarray(q, dtype=np.float64) / scale, dtype=t.dtype)
        nd = t.ndim
        axes = tuple(range(nd)) if axis is None else tuple(_axes(axis, nd))[::-1]
        kept = [d for d in range(nd) if d not in axes]
        flat = t.permute(*kept, *axes).reshape(*[t.shape[d] for d in kept], -1)
        f = torch.nanquantile if nan else torch.quantile
        r = f(flat, qt, dim=-1, interpolation=method)
        if keepdims:
            shape = list(qt.shape) + [1 if d in axes else t.shape[d] for d in range(nd)]
            r = r.reshape(shape)
        return tnp.asarray(r)

    @staticmethod
    def nanquantile(a, q, axis=None, method="linear", keepdims=False):
        return TNP.quantile(a, q, axis, method, keepdims, nan=True)

    @staticmethod
    def percentile(a, q, axis=None, method="linear", keepdims=False):
        return TNP.quantile(a, q, axis, method, keepdims, scale=100.0)

    @staticmethod
    def nanpercentile(a, q, axis=None, method="linear", keepdims=False):
        return TNP.quantile(a, q, axis, method, keepdims, nan=True, scale=100.0)

    @staticmethod
    def median(a, axis=None, keepdims=False):
        return TNP.quantile(a, 0.5, axis, "linear", keepdims)

    @staticmethod
    def nanmedian(a, axis=None, keepdims=False):
        return TNP.quantile(a, 0.5, axis, "linear", keepdims, nan=True)

    @staticmethod
    def outer(a, b):
        return tnp.asarray(a).ravel()[:, None] * tnp.asarray(b).ravel()[None, :]

    @staticmethod
    def dot(a, b):
        a, b = tnp.asarray(a), tnp.asarray(b)
        if a.ndim == 0 or b.ndim == 0:
            return a * b
        dims = ([a.ndim - 1], [max(b.ndim - 2, 0)])
        return tnp.asarray(torch.tensordot(a.tensor, b.tensor, dims=dims))


class _TorchUfunc:
    """A ufunc of the oracle with numpy's methods, in torch: reduce and accumulate along
    axis 0 by default (sum, prod, amax, amin, cumsum, cumprod), outer as a[..., None] op b."""

    _REDUCE: ClassVar[dict] = {"add": "sum", "multiply": "prod", "maximum": "max",
                               "minimum": "min"}
    _ACCUMULATE: ClassVar[dict] = {"add": "cumsum", "multiply": "cumprod"}

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        return getattr(tnp, self.name)(*args, **kwargs)

    def reduce(self, a, axis=0, keepdims=False):
        return getattr(TNP, self._REDUCE[self.name])(a, axis=axis, keepdims=keepdims)

    def accumulate(self, a, axis=0):
        return getattr(TNP, self._ACCUMULATE[self.name])(a, axis=axis)

    def outer(self, a, b):
        a, b = tnp.asarray(a), tnp.asarray(b)
        return self(tnp.reshape(a, a.shape + (1,) * b.ndim), b)


def _sliding_window_view(x, window_shape, axis=None):
    """numpy's sliding_window_view with torch's unfold (each window axis appended last, in
    `axis` order, as numpy does)."""
    t = tnp.asarray(x).tensor
    shape = (window_shape,) if np.ndim(window_shape) == 0 else tuple(window_shape)
    axes = range(t.ndim) if axis is None else ((axis,) if np.ndim(axis) == 0 else axis)
    for a, n in zip(axes, shape):
        t = t.unfold(a % x.ndim, n, 1)
    return tnp.asarray(t)


class _Namespace:
    def __init__(self, **kw):
        self.__dict__.update(kw)


_TorchNumpy.lib = _Namespace(stride_tricks=_Namespace(sliding_window_view=_sliding_window_view))
for _u in ("add", "subtract", "multiply", "maximum", "minimum"):
    setattr(_TorchNumpy, _u, _TorchUfunc(_u))
TNP = _TorchNumpy()


_MATH_TO_NUMPY = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2",
                  "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "pow": "power"}


def _math_twin(name):
    """math.<name> on torch arrays: torch._numpy's function of the same meaning (its value is a
    0-d array, not a Python float, and keeps the derivative)."""
    if name == "log":
        return lambda x, base=None: TNP.log(x) if base is None else TNP.log(x) / TNP.log(base)
    if name in ("erf", "erfc"):
        fn = getattr(torch.special, name)
        return lambda x: tnp.asarray(fn(tnp.asarray(x).tensor))
    if name in ("lgamma", "gamma"):
        return lambda x: tnp.asarray(torch.special.gammaln(tnp.asarray(x).tensor)) \
            if name == "lgamma" else TNP.exp(tnp.asarray(torch.special.gammaln(
                tnp.asarray(x).tensor)))
    return getattr(TNP, _MATH_TO_NUMPY.get(name, name))


def _torch_op(op):
    """The oracle's ``OP``: torch._numpy's function for a numpy row, else the row's own
    callable (a pure-Python row such as ``copy``'s identity runs on torch arrays as is)."""
    name = getattr(op.fn, "__name__", "")
    if op.family == "python math" and op.name.startswith("math_"):
        return _math_twin(op.name[len("math_"):])
    if op.name == "py_polygamma":  # (the Python digamma and its derivatives: torch's)
        return special_twins.twin("special_polygamma")
    if op.name == "setitem":  # copy on write, in torch
        def setitem(x, index, value):
            out = TNP.array(x, copy=True)
            out[index] = value
            return out

        return setitem
    if op.name == "write_through":  # a write into x when `view` is an array
        def write_through(x, index, value, view):
            if not tnp.asarray(view).ndim:
                return x
            out = TNP.array(x, copy=True)
            out[index] = value
            return out

        return write_through
    if op.name == "view_again":
        return lambda x, index, view: x[index] if tnp.asarray(view).ndim else view
    if op.name == "alias_again":  # the cases alias arrays
        return lambda new, old: new
    # math.fsum / statistics rows: Python's exact sums on a list of floats detach in torch
    if op.name == "py_fsum":
        return lambda a: TNP.sum(a)
    if op.name == "py_mean":
        return lambda a, exact: TNP.mean(a)
    if op.name == "py_variance":
        return lambda a, ddof: TNP.var(a, ddof=ddof)
    if op.name == "py_stdev":
        return lambda a, ddof: TNP.std(a, ddof=ddof)
    if op.name == "py_dist":  # math.dist / statistics rows: Python's floats detach in torch
        return lambda a, b: TNP.sqrt(TNP.sum((a - b) ** 2))
    if op.name == "py_geometric_mean":
        return lambda a: TNP.exp(TNP.mean(TNP.log(a)))
    if op.name == "py_harmonic_mean":
        return lambda a, w: TNP.sum(w) / TNP.sum(w / a)
    if op.name == "py_covariance":
        return lambda a, b: TNP.sum((a - a.mean()) * (b - b.mean())) / (len(a) - 1)
    if op.name == "py_correlation":
        return lambda a, b: TNP.corrcoef(TNP.stack([a, b]))[0, 1]
    if op.name == "spatial_cdist":  # the metric's formula over torch._numpy
        def cdist(a, b, metric="euclidean"):
            d = a[:, None, :] - b[None, :, :]
            if metric == "cityblock":
                return TNP.sum(TNP.abs(d), axis=-1)
            sq = TNP.sum(d * d, axis=-1)
            return sq if metric == "sqeuclidean" else TNP.sqrt(sq)

        return cdist
    if op.family == "scipy.signal":  # (NO_TORCH_TWIN: scipy's own function would run on
        raise NotImplementedError(op.name)  # torch tensors and detach them, silently)
    if op.name == "scipy_expm":  # torch's own matrix exponential
        return lambda a: tnp.asarray(torch.linalg.matrix_exp(tnp.asarray(a).tensor))
    if op.family == "scipy.linalg":  # (scipy's function would run on numpy copies: no twin)
        raise NotImplementedError(f"{op.name}: no torch twin (NO_TORCH_TWIN)")
    if op.family == "scipy.special":  # torch.special's (tests/special_twins.py)
        return special_twins.twin(op.name)
    return getattr(TNP, name) if getattr(np, name, None) is op.fn else op.fn


def torch_expr_jvp(params, expr, op, args, tangents):
    """``torch.func.jvp`` of the same expression text, evaluated over torch._numpy."""
    code = compile(expr, "<oracle>", "eval")

    def fn(*ts):
        env = {"np": TNP, "OP": _torch_op(op)}
        env.update((p, tnp.asarray(t)) for p, t in zip(params, ts))
        return tnp.asarray(eval(code, env)).tensor  # our own test expressions

    primals = tuple(_t(a) for a in args)
    dots = tuple(_t(t) for t in tangents)
    return torch_jvp(fn, primals, dots)


def _domain(op, n, case_domain=None):
    d = case_domain if case_domain is not None else op.domain
    if len(d) == 2 and all(isinstance(v, (int, float)) for v in d):
        return d
    return d if len(d) == n else d[0]


# Rows torch._numpy cannot run (or not in every argument form), and cases where torch's
# derivative is of another function than numpy's. Their JVPs are checked against central
# differences along the tangent in float64 (`check_jvp`) and against srcad's reverse mode
# (`check_consistency`, <u, J v> = <J^T u, v>; test_ops checks the reverse mode against finite
# differences), never skipped. A torch failure on a row not named here fails the test.
NO_TORCH_TWIN = {
    "full": "torch._numpy's full takes a Number fill value, not a tensor",
    "full_like": "torch._numpy's full_like takes a Number fill value, not a tensor",
    "astype_shared": "torch._numpy does not implement astype(..., copy=False)",
    "setitem": "torch has no dicts or lists of tensors to write into (its array cases run)",
    "tril": "torch's tril needs 2-D input (numpy broadcasts a 1-D m over rows)",
    "triu": "torch's triu needs 2-D input (numpy broadcasts a 1-D m over rows)",
    "take_along_axis": "torch._numpy rejects axis=None",
    "linspace": "torch's linspace takes scalar endpoints only",
    "mod": "torch has no forward-mode rule for remainder of a Python-number dividend",
    "partition": "torch._numpy has no partition",
    "rollaxis": "torch._numpy's rollaxis reshapes where it should transpose",
    "select": "torch._numpy has no select",
    "interp": "torch has no interp (piecewise linear: checked against differences and vjp)",
    "logaddexp_reduce": "torch._numpy's logaddexp has no ufunc methods",
    "logaddexp_accumulate": "torch._numpy's logaddexp has no ufunc methods",
    "maximum_accumulate": "torch._numpy's maximum has no ufunc methods",
    "minimum_accumulate": "torch._numpy's minimum has no ufunc methods",
    **{r: "scipy.linalg's (srcad/ops/scipy_linalg.py): torch._numpy runs no scipy"
       for r in ("scipy_cholesky", "scipy_solve_triangular", "scipy_cho_factor",
                 "scipy_cho_solve", "scipy_solve", "scipy_inv", "scipy_det", "triangle",
                 "solve_sees", "solve_sees_t", "scipy_toeplitz", "toeplitz_grad",
                 "toeplitz_grad_t")},
    **{r: "torch._numpy has no such function (numpy 2's array-API spellings, the nan-reductions, "
       "the array conversions)"
       for r in ("asanyarray", "asfortranarray", "asarray_chkfinite", "require", "np_astype",
                 "matrix_transpose", "linalg_matrix_transpose", "linalg_matmul", "linalg_outer",
                 "linalg_tensordot", "linalg_trace", "linalg_diagonal", "linalg_cross", "vecdot",
                 "linalg_vecdot", "matvec", "vecmat", "matrix_norm", "vector_norm", "svdvals",
                 "cumulative_sum",
                 "cumulative_prod", "nanmax", "nanmin", "nanprod", "nanvar", "nanstd",
                 "nancumsum", "nancumprod")},
    "frexp": "torch._numpy has no frexp", "unwrap": "torch._numpy has no unwrap",
    **{r: "torch._numpy has no block, insert or unstack"
       for r in ("block", "insert", "np_unstack")},
    "as_strided": "torch strides count elements, numpy's bytes (checked by differences)",
    "logspace": "torch has no forward-mode rule for logspace",
    "geomspace": "torch's geomspace takes no tensor endpoints",
    **{r: "torch._numpy has no polynomial functions, ediff1d or trapezoid"
       for r in ("polyval", "polyder", "polyint", "polyadd", "polysub", "polymul", "ediff1d",
                 "trapezoid", "trapz")},
    **{r: "torch._numpy has no such function (tests/test_gathers.py checks the gradients "
       "against torch's index_select / index_add of the same indices)"
       for r in ("delete", "compress", "extract", "trim_zeros", "unique_values", "unique_all",
                 "unique_counts", "unique_inverse", "intersect1d", "setdiff1d", "union1d",
                 "setxor1d")},
    "unique": "torch's unique has no forward-mode rule (nor return_index=)",
    "histogram_bin_edges": "torch._numpy's histogram_bin_edges takes no estimator name",
    "bincount": "torch's bincount has no forward-mode rule in the weights (tests/test_gathers.py "
    "checks it against torch's index_add)",
    **{r: "scipy.signal's (srcad/ops/scipy_signal.py): torch._numpy runs no scipy"
       for r in ("scipy_signal_convolve", "scipy_signal_correlate", "scipy_signal_convolve2d",
                 "scipy_signal_correlate2d", "scipy_signal_fftconvolve", "sig_embed",
                 "sig_crop")},
    "modf": "torch has no forward-mode rule for floor_divide (in its modf)",
    "divmod": "torch has no forward-mode rule for floor_divide",
    **{f"{u}_{m}": "torch._numpy has no ufunc.at / ufunc.reduceat (tests/test_numpy_functions.py "
       "checks them against torch's index_add / scatter_reduce / segment_reduce)"
       for u, m in [(u, "at") for u in ("add", "subtract", "multiply", "maximum", "minimum",
                                        "negative")]
       + [(u, "reduceat") for u in ("add", "multiply", "maximum", "minimum")]},
}
_ONE_TRIANGLE = ("numpy reads one triangle of this non-symmetric input; torch differentiates "
                 "another function of it")
FD_ORACLE = {  # cases (by their expression) where torch runs but differentiates another function
    **{c.src: "torch._numpy's reductions take no where=, initial= or correction= (jax.numpy "
       "agrees: tests/test_surface_audit.py)" for op in OPS for c in cases_of(op)
       if "where=" in c.src or "initial=" in c.src or "correction=" in c.src},
    **{c.src: "torch._numpy's take takes no mode=" for op in OPS if op.name == "take"
       for c in cases_of(op) if "mode=" in c.src},
    **{c.src: "torch._numpy's reshape / ravel / flatten take no order= (Fortran order)"
       for op in OPS if op.name in ("reshape", "ravel", "flatten") for c in cases_of(op)
       if "'F'" in c.src},
    **{c.src: "torch._numpy's copy takes no order= (a memory layout only)"
       for op in OPS if op.name == "array_copy" for c in cases_of(op) if "order=" in c.src},
    **{c.src: "torch._numpy's array takes no order= and ignores ndmin= for a list of tensors"
       for op in OPS if op.name == "array" for c in cases_of(op)
       if "order=" in c.src or "ndmin=" in c.src},
    **{c.src: "torch._numpy's pad implements no mode but constant" for op in OPS
       if op.name == "pad" for c in cases_of(op)
       if any(m in c.src for m in ("edge", "reflect", "symmetric", "wrap", "mean", "maximum",
                                    "minimum", "median", "linear_ramp"))},
    **{e: "torch._numpy copies the items of a tuple (np.gradient's, np.average's pair) into "
       "one tensor when a function reads it as an array: no tangent through them" for e in (
           "np.sin(np.gradient(a))", "np.sin(np.gradient(a, 0.5, 2.0, edge_order=2))",
           "np.prod(np.average(a, axis=0, weights=b, returned=True), axis=0)")},
    **{e: "torch detaches float(t): a Python number carries no tangent there"
       for e in ("OP(a[1]) * a", "OP(np.sum(a)) * 2.0", "OP(a) * 2.0")},
    "np.full(3, a) * b": "torch._numpy's full turns a 0-d fill value into a Python number: no "
    "derivative through it",
    "OP([a, b], -1, a * b)[1] * OP([a, b], 0, b)[1]": "torch makes one tensor of the list "
    "[a, b] and writes into it: not a list's item replaced (srcad's value equals numpy's; the "
    "tangent is checked against central differences)",
    "np.pad(a, 1, constant_values=b)": "torch takes constant_values as a Python number: no "
    "derivative through it",
    "np.linalg.cholesky(a + 3 * np.eye(3))": _ONE_TRIANGLE,
    "np.linalg.cholesky(a + 3 * np.eye(3), upper=True)": _ONE_TRIANGLE,
    "np.linalg.cholesky(a @ a.T + 3 * np.eye(3), upper=True)": "torch._numpy's cholesky takes "
    "no upper=",
    "np.linalg.eigh(a)[0]": _ONE_TRIANGLE,
    "np.linalg.eigh(a)[1] ** 2": _ONE_TRIANGLE,
    "np.linalg.eigh(a, UPLO='U')[0]": _ONE_TRIANGLE,
    "np.linalg.eigh(a, 'U')[1] ** 2": _ONE_TRIANGLE,
    "np.linalg.eigh(a)[0] * np.linalg.eigh(a)[1][0] ** 2": _ONE_TRIANGLE,
    "np.linalg.svd(a, full_matrices=False)[0]": "torch's SVD picks other signs for the "
    "singular vectors",
    **{c: "torch._numpy's convolve has no 'same' mode for an even-length kernel"
       for c in ("np.convolve(a, b, 'same')",)},
    **{c: "torch._numpy's correlate swaps its operands when v is the longer one (numpy "
       "reverses the result then; torch does not)"
       for c in ("np.correlate(a, b)", "np.correlate(a, b, 'same')",
                 "np.correlate(a, b, mode='valid')")},
    **{c: "torch's item() is a Python number with no derivative (srcad carries it beside "
       "the number)"
       for c in ("a.item() * a", "a * a.item(2)", "a.item(1, 2) + a", "a.item((0, 1)) * a",
                 "np.tanh(a.item(-1)) * a")},
    "np.ascontiguousarray(a) * 2.0": "torch._numpy's ascontiguousarray keeps a 0-d array 0-d "
    "(numpy makes it 1-d)",
    "np.ascontiguousarray([a, b])": "torch._numpy builds an array from a list of tensors with no "
    "derivative",
    "np.linalg.eigvalsh(a, 'U')": _ONE_TRIANGLE,
    **{c: "torch's forward-mode ldexp is not 2^e dx for a tensor exponent"
       for c in ("np.ldexp(a, np.array([1, -2, 0]))", "np.ldexp(a, np.array([[2], [-1]]))")},
    "np.linalg.lstsq(a, b)[3]": "torch's lstsq returns its singular values without a derivative",
    "np.cov(a, rowvar=False)": "torch._numpy's cov ignores rowvar",
    "np.corrcoef(a, rowvar=False)": "torch._numpy's corrcoef ignores rowvar",
    "np.gradient(a, [0.0, 1.0, 3.0, 3.5], edge_order=2)": "torch._numpy's gradient takes no "
    "list of coordinates",
    **{c: "torch._numpy's choose takes no mode="
       for c in ("np.choose(np.array([0, 3, -1, 1]), [a, b], mode='clip')",
                 "np.choose(np.array([0, 3, -1, 2]), [a, b, a * b], mode='wrap')")},
    **{c.format(f=f): "torch._numpy builds an array from a list of tensors with no derivative"
       for f in ("asarray", "array")
       for c in ("np.{f}([a, b])", "np.{f}((a, 2.0 * b, a))", "np.{f}([[a, b], [b, a]])",
                 "np.{f}([a, b], dtype=np.float64)")},
    "np.linalg.qr(a, mode='r') ** 2": "torch's qr backward needs Q, which mode='r' does not "
    "compute",
}


def fd_oracle(mod, args, tangents, key):
    """The JVP against central differences along the tangent and against reverse mode."""
    err = check_jvp(mod.f, args, tangents, h=1e-5,
                    tol=1e-6 if all(a.dtype == np.float64 for a in args) else 1e-3)
    check_consistency(mod.f, args, rng=_seed(key) + 2)
    return err


def run_op_case(case_dir, op, params, expr, shapes, dtype, domain, key):
    args = random_args(shapes, dtype, rng=_seed(key), domain=domain)
    gen = np.random.default_rng(_seed(key) + 1)
    tangents = tuple(gen.standard_normal(np.shape(a)).astype(a.dtype) for a in args)
    mod = _module(case_dir, params, expr, op)
    out, out_dot = srcad.jvp(mod.f, args, tangents)
    if expr in FD_ORACLE:
        np.testing.assert_array_equal(out, mod.f(*args))
        return fd_oracle(mod, args, tangents, key)
    try:
        t_out, t_dot = torch_expr_jvp(params, expr, op, args, tangents)
    except Exception:
        if op.name not in NO_TORCH_TWIN:
            raise
        np.testing.assert_array_equal(out, mod.f(*args))
        return fd_oracle(mod, args, tangents, key)
    want = np.dtype(np.result_type(mod.f(*args)))
    if np.dtype(dtype) == np.float32:
        # float32 in, float32 out: the tangent is computed in float32, not promoted
        assert want == np.float32
    np.testing.assert_array_equal(out, mod.f(*args))
    assert_close(out, t_out.numpy(), want, f"{key}: value", dtype)
    return assert_close(out_dot, t_dot.numpy(), want, f"{key}: tangent", dtype)


# binary rows: every broadcast pair of rank <= 2 in float64, a few in float32
PAIRS = broadcast_pairs(2)
PAIRS_F32 = [((2, 3), (2, 3)), ((), (2, 3)), ((2, 1), (1, 3)), ((3,), (2, 3))]
TRIPLES = broadcast_shapes_for(3, 2)
SINGLES = broadcast_shapes_for(1)


def _shape_id(shapes) -> str:
    return ",".join("x".join(map(str, s)) or "()" for s in shapes)


def _grid():
    for op in OPS:
        if not op.elementwise:
            continue
        n = len(op.params)
        if n == 1:
            grid = [(s, d) for s in SINGLES for d in ("float64", "float32")]
        elif n == 2:
            grid = [(s, "float64") for s in PAIRS] + [(s, "float32") for s in PAIRS_F32]
        else:
            grid = [(s, "float64") for s in TRIPLES] + [(TRIPLES[0], "float32")]
        for shapes, dtype in grid:
            if dtype not in op.dtypes:  # (float_power: float64 whatever the inputs)
                continue
            key = f"{op.name}-{_shape_id(shapes)}"
            yield pytest.param(op, shapes, dtype, marks=_marks(key), id=f"{key}-{dtype}")


@pytest.mark.parametrize("op, shapes, dtype", list(_grid()))
def test_elementwise_jvp_matches_torch(case_dir, op, shapes, dtype):
    params, expr = elementwise_expr(op)
    run_op_case(case_dir, op, params, expr, shapes, dtype, _domain(op, len(params)),
                f"{op.name}-{shapes}-{dtype}")


def _cases():
    for op in OPS:
        for case in cases_of(op):
            for dtype in ("float64",):
                key = f"{op.name}: {case.src} @ {_shape_id(case.shapes)}"
                marks = _marks(key) + ([pytest.mark.slow] if case.slow else [])
                yield pytest.param(op, case, dtype, marks=marks, id=f"{key}-{dtype}")


@pytest.mark.parametrize("op, case, dtype", list(_cases()))
def test_row_case_jvp_matches_torch(case_dir, op, case, dtype):
    params = list(ARG_NAMES[: len(case.shapes)])
    run_op_case(case_dir, op, params, case.src, case.shapes, dtype,
                _domain(op, len(params), case.domain), f"{op.name}-{case.src}-{dtype}")


def test_every_differentiable_row_has_a_jvp_test():
    tested = {op.name for op in OPS if op.elementwise or cases_of(op)}
    missing = sorted(op.name for op in OPS if op.name not in tested)
    assert not missing, f"differentiable rows with no JVP test: {missing}"
    for op in OPS:  # the forward rule the transform reads
        assert any(op.jvp(p) is not None for p in op.param_names), op.name


# =============================================================================================
# (b) the straight-line and control-flow corpora against torch twins
# =============================================================================================


def corpus_jvp(fn, twin, args, dtype, seed, name):
    """srcad.jvp with random tangents for float args vs torch.func.jvp of the twin."""
    gen = np.random.default_rng(seed)
    tangents = tuple(gen.standard_normal(a.shape).astype(a.dtype) if _is_float(a) else None
                     for a in args)
    out, out_dot = srcad.jvp(fn, args, tangents)
    np.testing.assert_array_equal(out, fn(*args))
    floats = [i for i, a in enumerate(args) if _is_float(a)]
    fixed = [_t(a) for a in args]

    def on_floats(*ts):
        full = list(fixed)
        for i, t in zip(floats, ts):
            full[i] = t
        return twin(*full)

    t_out, t_dot = torch_jvp(on_floats, tuple(fixed[i] for i in floats),
                             tuple(_t(tangents[i]) for i in floats))
    want = np.result_type(fn(*args))
    assert_close(out, t_out.detach().numpy(), want, f"{name}: value", dtype)
    assert_close(out_dot, t_dot.detach().numpy(), want, f"{name}: tangent", dtype)


def _straight():
    for name in sorted(CS.CASES):
        for dtype in (np.float64, np.float32):
            key = f"straight-{name}-{np.dtype(dtype).name}"
            yield pytest.param(name, dtype, id=key, marks=_marks(key))


@pytest.mark.parametrize("name, dtype", list(_straight()))
def test_straight_corpus_jvp_matches_torch(name, dtype):
    fn, make = CS.CASES[name]
    args = make(np.random.default_rng(0), dtype)
    corpus_jvp(fn, TSA.TWINS[name], args, dtype, seed=1, name=name)


def _control():
    for name in sorted(CC.CASES):
        dtypes = [np.float64] + ([np.float32] if name in CC.FLOAT32_CASES else [])
        for dtype in dtypes:
            key = f"control-{name}-{np.dtype(dtype).name}"
            yield pytest.param(name, dtype, id=key, marks=_marks(key))


@pytest.mark.parametrize("name, dtype", list(_control()))
def test_control_corpus_jvp_matches_torch(name, dtype):
    fn, make = CC.CASES[name]
    args = make(np.random.default_rng(0), dtype)
    corpus_jvp(fn, TCF.twin_of(fn), args, dtype, seed=1, name=name)


@pytest.mark.parametrize("name", sorted(CC.VJP_CASES))
def test_array_valued_control_jvp_matches_torch(name):
    fn, make = CC.VJP_CASES[name]
    args = make(np.random.default_rng(3), np.float64)
    corpus_jvp(fn, TCF.twin_of(fn), args, np.float64, seed=4, name=name)


# -- forward against reverse, on a sample of both corpora ------------------------------------

CONSISTENCY_STRAIGHT = ["mlp2_tanh", "xent_gather", "layer_norm", "attention_multihead_causal",
                        "concat_stack", "slicing_steps", "misc_reductions", "int_promotion"]
CONSISTENCY_CONTROL = ["rnn", "while_newton_sqrt", "nested_inner_branch", "for_break_data_hit",
                       "early_return_nested_hit", "power_iteration", "softmax_steps",
                       "while_in_for"]


def _consistency():
    for name in CONSISTENCY_STRAIGHT:
        for dtype in (np.float64, np.float32):
            key = f"consistency-straight-{name}-{np.dtype(dtype).name}"
            yield pytest.param(CS.CASES, name, dtype, id=key, marks=_marks(key))
    for name in CONSISTENCY_CONTROL:
        key = f"consistency-control-{name}-float64"
        yield pytest.param(CC.CASES, name, np.float64, id=key, marks=_marks(key))
    for name in sorted(CC.VJP_CASES):
        key = f"consistency-control-{name}-float64"
        yield pytest.param(CC.VJP_CASES, name, np.float64, id=key, marks=_marks(key))


@pytest.mark.parametrize("cases, name, dtype", list(_consistency()))
def test_forward_agrees_with_reverse(cases, name, dtype):
    fn, make = cases[name]
    args = make(np.random.default_rng(5), dtype)
    err = check_consistency(fn, args, rng=6)
    assert err < (1e-10 if dtype == np.float64 else 1e-4), err


# =============================================================================================
# (c) user-function calls, pytrees, closures, dtypes, finite differences
# =============================================================================================


def dense(x, W, b):
    return np.tanh(x @ W + b)


def two_dense(x, W1, b1, W2, b2):
    h = dense(x, W1, b1)
    return dense(h, W2, b2) * h[:, :1]


def calls_twice_with_loop(x, W, n):
    for i in range(n):
        x = dense(x, W, 0.1) + x
    return np.sum(x ** 2)


def split(x):
    return np.sin(x), np.cos(x)


def uses_tuple_result(x, y):
    s, c = split(x * y)
    return s * c + y


def t_dense(x, W, b):
    return torch.tanh(x @ W + b)


def t_two_dense(x, W1, b1, W2, b2):
    h = t_dense(x, W1, b1)
    return t_dense(h, W2, b2) * h[:, :1]


def t_calls_twice_with_loop(x, W, n):
    for i in range(n):
        x = t_dense(x, W, 0.1) + x
    return torch.sum(x ** 2)


def t_uses_tuple_result(x, y):
    z = x * y
    return torch.sin(z) * torch.cos(z) + y


def _f(rng, *shape):
    return rng.uniform(-1, 1, shape)


CALL_CASES = {
    "two_dense": (two_dense, t_two_dense, lambda r: (
        _f(r, 4, 3), _f(r, 3, 5), _f(r, 5), _f(r, 5, 2), _f(r, 2))),
    "calls_twice_with_loop": (calls_twice_with_loop, t_calls_twice_with_loop, lambda r: (
        _f(r, 2, 3), _f(r, 3, 3) * 0.5, 3)),
    "uses_tuple_result": (uses_tuple_result, t_uses_tuple_result, lambda r: (
        _f(r, 3, 2), _f(r, 2))),
}


@pytest.mark.parametrize("name", sorted(CALL_CASES))
def test_calls_to_user_functions(name):
    fn, twin, make = CALL_CASES[name]
    args = make(np.random.default_rng(11))
    corpus_jvp(fn, twin, args, np.float64, seed=12, name=name)
    check_consistency(fn, args, rng=13)


def dict_mlp(params, x):
    h = dense(x, params["W1"], params["b1"])
    out = h @ params["W2"] + params["b2"]
    return np.sum(out ** 2) * params["scale"]


def list_mlp(Ws, x):
    for W in Ws:
        x = np.tanh(x @ W)
    return x


def tuple_pair(pair, x):
    a, b = pair
    return np.sum(np.exp(a * x) + b)


def _params(rng):
    return {"W1": _f(rng, 3, 4), "b1": _f(rng, 4), "W2": _f(rng, 4, 2), "b2": _f(rng, 2),
            "scale": np.float64(0.7)}


def test_dict_pytree_argument():
    rng = np.random.default_rng(21)
    params, x = _params(rng), _f(rng, 5, 3)
    dp = {k: rng.standard_normal(np.shape(v)) for k, v in params.items()}
    dp["scale"] = np.float64(dp["scale"])
    dx = rng.standard_normal(x.shape)
    out, out_dot = srcad.jvp(dict_mlp, (params, x), (dp, dx))

    def twin(W1, b1, W2, b2, scale, x):
        out = t_dense(x, W1, b1) @ W2 + b2
        return torch.sum(out ** 2) * scale

    keys = list(params)
    t_out, t_dot = torch_jvp(twin, tuple(_t(params[k]) for k in keys) + (_t(x),),
                             tuple(_t(dp[k]) for k in keys) + (_t(dx),))
    assert_close(out, t_out.numpy(), np.float64, "value")
    assert_close(out_dot, t_dot.numpy(), np.float64, "tangent")
    check_jvp(dict_mlp, (params, x))
    check_consistency(dict_mlp, (params, x), rng=22)


def _list_args(rng, ragged):
    Ws = [_f(rng, 3, 4), _f(rng, 4, 4)] if ragged else [_f(rng, 3, 3), _f(rng, 3, 3)]
    return Ws, _f(rng, 5, 3)


@pytest.mark.parametrize("ragged", [
    False,
    True,
], ids=["same-shapes", "ragged"])
def test_list_pytree_argument(ragged):
    rng = np.random.default_rng(31)
    Ws, x = _list_args(rng, ragged)
    dWs = [rng.standard_normal(W.shape) for W in Ws]
    dx = rng.standard_normal(x.shape)
    out, out_dot = srcad.jvp(list_mlp, (Ws, x), (dWs, dx))

    def twin(*ts):
        *Ws, x = ts
        for W in Ws:
            x = torch.tanh(x @ W)
        return x

    t_out, t_dot = torch_jvp(twin, tuple(map(_t, [*Ws, x])), tuple(map(_t, [*dWs, dx])))
    assert_close(out, t_out.numpy(), np.float64, "value")
    assert_close(out_dot, t_dot.numpy(), np.float64, "tangent")
    check_consistency(list_mlp, (Ws, x), rng=32)


def test_tuple_pytree_argument():
    rng = np.random.default_rng(41)
    args = ((_f(rng, 3), _f(rng, 3)), _f(rng, 3))
    check_jvp(tuple_pair, args)
    check_consistency(tuple_pair, args, rng=42)


def _make_closure(W):
    def layer(x):
        return np.tanh(x @ W) * 2.0
    return layer


def test_closure_captured_weights_are_constants():
    rng = np.random.default_rng(51)
    W = _f(rng, 3, 2)
    layer = _make_closure(W)
    x, dx = _f(rng, 4, 3), rng.standard_normal((4, 3))
    _, out_dot = srcad.jvp(layer, (x,), (dx,))
    z = x @ W
    np.testing.assert_allclose(out_dot, 2.0 * (1 - np.tanh(z) ** 2) * (dx @ W), rtol=1e-13)


# -- dtypes, scalars, zero tangents, linearity -------------------------------------------------


def mixed(x, y):
    return np.tanh(x) * y + np.exp(x * 0.5)


@pytest.mark.parametrize("fn, make", [
    (mixed, lambda r: (_f(r, 3, 2), _f(r, 2))),
    (two_dense, CALL_CASES["two_dense"][2]),
    (calls_twice_with_loop, CALL_CASES["calls_twice_with_loop"][2]),
], ids=["elementwise", "calls", "loop"])
def test_float32_stays_float32(fn, make):
    args64 = make(np.random.default_rng(61))
    args32 = tuple(a.astype(np.float32) if _is_float(a) else a for a in args64)
    tangents = tuple(np.ones_like(a) if _is_float(a) else None for a in args32)
    out, out_dot = srcad.jvp(fn, args32, tangents)
    assert np.result_type(out) == np.float32 and np.result_type(out_dot) == np.float32
    _, want = srcad.jvp(fn, args64, tuple(None if t is None else t.astype(np.float64)
                                          for t in tangents))
    assert rel_error(np.asarray(out_dot, dtype=np.float64), want) < 1e-4


def acc_loop(x):
    acc = 0.0
    for i in range(2):
        acc = acc + np.sum(x)
    return acc


def acc_line(x):
    acc = 0.0
    acc = acc + np.sum(x)
    return acc


@pytest.mark.parametrize("fn", [
    acc_line,
    acc_loop,
], ids=["straight-line", "loop"])
def test_float_literal_accumulator_tangent_keeps_float32(fn):
    x = np.ones(3, dtype=np.float32)
    out, out_dot = srcad.jvp(fn, (x,), (x,))
    assert np.result_type(out) == np.float32
    assert np.result_type(out_dot) == np.float32


def test_mixed_float32_float64_promotes_like_numpy():
    x = np.linspace(-1, 1, 4).astype(np.float32)
    y = np.linspace(0.5, 2, 4)
    out, out_dot = srcad.jvp(mixed, (x, y), (np.ones_like(x), np.zeros_like(y)))
    assert out.dtype == out_dot.dtype == np.result_type(mixed(x, y)) == np.float64


def test_python_float_and_numpy_scalar_arguments():
    _, out_dot = srcad.jvp(mixed, (0.3, 2.0), (1.0, 0.0))
    x = 0.3
    assert out_dot == pytest.approx((1 - np.tanh(x) ** 2) * 2.0 + 0.5 * np.exp(0.5 * x),
                                    rel=1e-14)
    out, out_dot = srcad.jvp(mixed, (np.float32(0.3), np.float32(2.0)),
                             (np.float32(1.0), np.float32(0.0)))
    assert np.result_type(out) == np.result_type(out_dot) == np.float32


def test_jvp_is_linear_in_the_tangent_and_zero_at_zero():
    rng = np.random.default_rng(71)
    args = CALL_CASES["two_dense"][2](rng)
    t1 = tuple(rng.standard_normal(a.shape) for a in args)
    t2 = tuple(rng.standard_normal(a.shape) for a in args)
    _, d1 = srcad.jvp(two_dense, args, t1)
    _, d2 = srcad.jvp(two_dense, args, t2)
    _, d12 = srcad.jvp(two_dense, args, tuple(2.0 * a - 3.0 * b for a, b in zip(t1, t2)))
    assert rel_error(d12, 2.0 * d1 - 3.0 * d2) < 1e-12
    _, d0 = srcad.jvp(two_dense, args, tuple(np.zeros_like(a) for a in args))
    assert not np.any(d0)


def with_default(x, eps=1e-5):
    return x * x + eps


def test_defaulted_float_parameter_gets_no_tangent():
    x = np.array([1.0, -2.0])
    _, out_dot = srcad.jvp(with_default, (x,), (np.ones(2),))
    np.testing.assert_array_equal(out_dot, 2 * x)


def test_int_argument_tangent_is_ignored():
    rng = np.random.default_rng(81)
    x, W = _f(rng, 2, 3), _f(rng, 3, 3)
    _, a = srcad.jvp(calls_twice_with_loop, (x, W, 3), (np.ones_like(x), np.ones_like(W), None))
    _, b = srcad.jvp(calls_twice_with_loop, (x, W, 3), (np.ones_like(x), np.ones_like(W), 7))
    assert a == b


def test_jvp_source_names_tangents():
    rng = np.random.default_rng(91)
    srcad.jvp(mixed, (_f(rng, 3), _f(rng, 3)), (_f(rng, 3), _f(rng, 3)))
    src = srcad.source(srcad.api._JVP_CACHE[(mixed, ())])
    assert "def mixed_jvp(x, y, x_dot, y_dot)" in src
    assert "np.tanh(x)" in src


@pytest.mark.parametrize("fn, make", [
    (mixed, lambda r: (_f(r, 3, 2), _f(r, 2))),
    (two_dense, CALL_CASES["two_dense"][2]),
    (CC.rnn, lambda r: CC.CASES["rnn"][1](r, np.float64)),
    (CC.while_newton_sqrt, lambda r: CC.CASES["while_newton_sqrt"][1](r, np.float64)),
], ids=["elementwise", "calls", "rnn", "while"])
def test_check_jvp_finite_differences(fn, make):
    args = make(np.random.default_rng(101))
    assert check_jvp(fn, args, h=1e-5) < 1e-6


def test_check_jvp_catches_a_wrong_jvp():
    x = np.linspace(-1, 1, 5)
    with pytest.raises(AssertionError, match="finite differences"):
        check_jvp(np.sin, (x,), jvp_fn=lambda p, t: (np.sin(p[0]), np.sin(p[0]) * t[0]))
    with pytest.raises(AssertionError, match="dtype"):
        check_jvp(np.sin, (x,), jvp_fn=lambda p, t: (np.sin(p[0]),
                                                     (np.cos(p[0]) * t[0]).astype(np.float32)))


# -- an argument not differentiated, rebound later to a value that is ----------------------------
# (found 2026-12-05 while testing closures: the jvp read `x_dot` before any statement set it --
# UnboundLocalError -- where the callee's `x` was the caller's module array, not a tangent
# argument, and `x = f(x @ W1)` rebinds it)

_GIVEN_X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


def _relu(z):
    return np.maximum(z, 0.0)


def _rebinds_its_argument(W, x):
    acts = [np.tanh, _relu]
    for act in acts:
        x = act(x @ W @ W.T)
    return np.sum(x)


def _calls_with_a_module_array(W):
    return _rebinds_its_argument(W, _GIVEN_X)


def test_jvp_argument_rebound_after_being_read():
    W = np.random.default_rng(3).standard_normal((3, 3))
    dW = np.random.default_rng(4).standard_normal((3, 3))
    for fn, args, dots in [(_calls_with_a_module_array, (W,), (dW,)),
                           (_rebinds_its_argument, (W, _GIVEN_X), (dW, 0.0 * _GIVEN_X))]:
        value, tangent = srcad.jvp(fn, args, dots)
        assert value == fn(*args)
        g = srcad.grad(_calls_with_a_module_array)(W)
        np.testing.assert_allclose(tangent, np.sum(g * dW), rtol=1e-12)
