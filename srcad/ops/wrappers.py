"""Thin wrappers of rows that already exist: numpy's array-conversion functions, numpy 2's
array-API spellings (``np.linalg.matmul``, ``np.vecdot``, ``np.matrix_transpose``, ...), and
numpy's other products and reductions written through existing rules.

Each is a row of its own, spelled as the user wrote it (so the value is numpy's own, checks
and errors included: ``np.linalg.outer`` of a 2-D array raises as numpy does), whose rules are
the wrapped row's formula. Names only some numpy versions have are registered where they
exist (numpy 1.26 has neither ``np.vecdot`` nor ``np.linalg.matmul``).
"""

from math import isqrt

import numpy as np

from ..runtime import (
    Items,
    cumprod_grad,
    cumprod_jvp,
    cumsum_grad,
    extremum_grad,
    extremum_jvp,
    filled,
    fold_triangle,
    matmul_grad_a,
    matmul_grad_b,
    norm_grad,
    norm_jvp,
    norm_matrix_axes,
    norm_svd_weights,
    norm_uses_svd,
    prod_grad,
    svd_jvp,
    svd_s_grad,
    symmetric_from,
    tensordot_grad_a,
    tensordot_grad_b,
    unasarray,
    unbroadcast,
    undiagonal,
    unreduce,
    unsupported_derivative,
)
from ..runtime_poly import power_sum, vn_perm, vn_shapes, vn_unperm
from .table import Param, defjvp, defnondiff, defvjp

_F = "array"
_L = "linalg"
_R = "reduction"
_LA = np.linalg


def _has(mod, name):
    return getattr(mod, name, None) is not None


# --- conversions: the identity on values (a copy or a view in another layout) -----------------
defvjp(np.positive, lambda g, out, x: g,
       name="positive", elementwise=True, c="x", c_kinds="if", linear=("x",), family="arithmetic",
       derivation="+x: the identity", test_cases=(("np.positive(a)", [(3, 4)]),))
_CONV = ("the same values as an array (numpy's asarray, in another layout or with a check): "
         "g itself, or item i's cotangent g[i] for a list")
defvjp(np.asanyarray, lambda g, out, a, dtype=None: unasarray(g, a),
       name="asanyarray", sequences=("a",), linear=("a",), family=_F, view=True,
       derivation=_CONV,
       test_cases=(("np.asanyarray(a)", [(3, 4)]), ("np.asanyarray([a, b])", [(3,), (3,)])))
for _fn, _name in ((np.ascontiguousarray, "ascontiguousarray"),
                   (np.asfortranarray, "asfortranarray")):
    defvjp(_fn, lambda g, out, a, dtype=None: unasarray(g, a) if isinstance(a, (list, tuple)) else
           unasarray(np.reshape(g, np.shape(a)), a),
           name=_name, sequences=("a",), linear=("a",), family=_F, view=True,
           derivation=_CONV + " (a 0-d input comes out 1-d: g reshaped back)",
           test_cases=((f"np.{_name}(a)", [(3, 4)]), (f"np.{_name}(a.T)", [(3, 4)]),
                       (f"np.{_name}(a) * 2.0", [()]), (f"np.{_name}([a, b])", [(2,), (2,)])))
defvjp(np.asarray_chkfinite, lambda g, out, a, dtype=None, order=None: unasarray(g, a),
       name="asarray_chkfinite", sequences=("a",), linear=("a",), family=_F, view=True,
       derivation=_CONV + " (numpy raises on inf and NaN)",
       test_cases=(("np.asarray_chkfinite(a)", [(3, 4)]),
                   ("np.asarray_chkfinite([a, b])", [(3,), (3,)])))
defvjp(np.require, lambda g, out, a, dtype=None, requirements=None: unasarray(g, a),
       name="require", sequences=("a",), linear=("a",), family=_F, view=True,
       derivation=_CONV,
       test_cases=(("np.require(a)", [(3, 4)]), ("np.require(a.T, requirements='C')", [(3, 4)]),
                   ("np.require(a, np.float64, ['F'])", [(3, 4)])))
if _has(np, "astype"):
    defvjp(np.astype, lambda g, out, x, dtype, copy=True: g.astype(x.dtype), None, None,
           name="np_astype", linear=("x",), family=_F, view=True,
           derivation="a cast: g cast back to x's dtype",
           test_cases=(("np.astype(a, np.float64)", [(3, 4)]),
                       ("np.astype(a, a.dtype, copy=False)", [(3,)])))

# --- array-API spellings of linear algebra ----------------------------------------------------
_T = "the last two axes swapped: g swapped back"
for _mod in (np, _LA):
    if _has(_mod, "matrix_transpose"):
        defvjp(_mod.matrix_transpose, lambda g, out, x: np.swapaxes(g, -1, -2),
               name=("" if _mod is np else "linalg_") + "matrix_transpose", linear=("x",),
               family=_L, view=True, derivation=_T,
               test_cases=((f"np.{'' if _mod is np else 'linalg.'}matrix_transpose(a)",
                            [(3, 4)]),
                           (f"np.{'' if _mod is np else 'linalg.'}matrix_transpose(a)",
                            [(2, 3, 4)])))
if _has(_LA, "matmul"):
    defvjp(_LA.matmul, lambda g, out, x1, x2: matmul_grad_a(g, x1, x2),
           lambda g, out, x1, x2: matmul_grad_b(g, x1, x2),
           name="linalg_matmul", linear=("x1", "x2"), family=_L,
           derivation="as matmul: dA = G B^T, dB = A^T G",
           test_cases=(("np.linalg.matmul(a, b)", [(3, 4), (4, 5)]),
                       ("np.linalg.matmul(a, b)", [(2, 3, 4), (4,)]),
                       ("np.linalg.matmul(a, b)", [(4,), (2, 4, 5)])))
if _has(_LA, "outer"):
    defvjp(_LA.outer, lambda g, out, x1, x2: g @ x2, lambda g, out, x1, x2: x1 @ g,
           name="linalg_outer", linear=("x1", "x2"), family=_L,
           derivation="out_ij = a_i b_j (1-D only): da = G b, db = a G",
           test_cases=(("np.linalg.outer(a, b)", [(3,), (4,)]),))
if _has(_LA, "tensordot"):
    defvjp(_LA.tensordot, lambda g, out, x1, x2, axes=2: tensordot_grad_a(g, x1, x2, axes),
           lambda g, out, x1, x2, axes=2: tensordot_grad_b(g, x1, x2, axes),
           name="linalg_tensordot", linear=("x1", "x2"), family=_L,
           derivation="as tensordot",
           test_cases=(("np.linalg.tensordot(a, b)", [(2, 3, 4), (3, 4, 5)]),
                       ("np.linalg.tensordot(a, b, axes=1)", [(3, 4), (4, 5)]),
                       ("np.linalg.tensordot(a, b, axes=([1, 0], [0, 2]))",
                        [(3, 2, 4), (2, 5, 3)])))
if _has(_LA, "trace"):
    defvjp(_LA.trace, lambda g, out, x, offset=0, dtype=None:
           undiagonal(np.expand_dims(g, -1), x, offset, -2, -1), None, None,
           name="linalg_trace", linear=("x",), family=_L,
           derivation="a sum along the diagonal of the last two axes: g goes back onto it",
           test_cases=(("np.linalg.trace(a)", [(3, 3)]), ("np.linalg.trace(a)", [(2, 3, 4)]),
                       ("np.linalg.trace(a, offset=1)", [(2, 4, 3)]),
                       ("np.linalg.trace(a, offset=-1)", [(3, 3)])))
if _has(_LA, "diagonal"):
    defvjp(_LA.diagonal, lambda g, out, x, offset=0: undiagonal(g, x, offset, -2, -1), None,
           name="linalg_diagonal", linear=("x",), family=_L, view=True,
           derivation="a gather of the diagonal of the last two axes: g goes back onto it",
           test_cases=(("np.linalg.diagonal(a)", [(3, 4)]),
                       ("np.linalg.diagonal(a, offset=1)", [(2, 3, 4)]),
                       ("np.linalg.diagonal(a, offset=-1)", [(4, 3)])))
if _has(_LA, "cross"):
    defvjp(_LA.cross, lambda g, out, x1, x2, axis=-1: unbroadcast(np.cross(x2, g, axis=axis), x1),
           lambda g, out, x1, x2, axis=-1: unbroadcast(np.cross(g, x1, axis=axis), x2),
           name="linalg_cross", linear=("x1", "x2"), family=_L,
           derivation="g . (a x b) = a . (b x g) = b . (g x a): da = b x g, db = g x a",
           test_cases=(("np.linalg.cross(a, b)", [(3,), (3,)]),
                       ("np.linalg.cross(a, b)", [(4, 3), (3,)]),
                       ("np.linalg.cross(a, b, axis=0)", [(3, 4), (3, 4)])))
_VECDOT = ("out = sum(x1 x2) over `axis` (broadcast): dx1 = g x2, dx2 = g x1 (g put back along "
           "the axis; broadcast axes summed back)")
for _mod in (np, _LA):
    if _has(_mod, "vecdot"):
        _p = "np." + ("" if _mod is np else "linalg.")
        defvjp(_mod.vecdot,
               lambda g, out, x1, x2, axis=-1: unbroadcast(np.expand_dims(g, axis) * x2, x1),
               lambda g, out, x1, x2, axis=-1: unbroadcast(np.expand_dims(g, axis) * x1, x2),
               name=("" if _mod is np else "linalg_") + "vecdot", linear=("x1", "x2"),
               family=_L, derivation=_VECDOT,
               test_cases=((f"{_p}vecdot(a, b)", [(4,), (4,)]),
                           (f"{_p}vecdot(a, b)", [(3, 4), (4,)]),
                           (f"{_p}vecdot(a, b, axis=-2)", [(2, 4, 3), (4, 3)]),
                           (f"{_p}vecdot(a, a)", [(2, 3)])))
if _has(np, "matvec"):
    defvjp(np.matvec,
           lambda g, out, x1, x2: unbroadcast(np.expand_dims(g, -1) * np.expand_dims(x2, -2), x1),
           lambda g, out, x1, x2: unbroadcast(np.sum(x1 * np.expand_dims(g, -1), axis=-2), x2),
           name="matvec", linear=("x1", "x2"), family=_L,
           derivation="out_i = sum_j A_ij v_j: dA = g v^T, dv = A^T g (batch axes summed back)",
           test_cases=(("np.matvec(a, b)", [(3, 4), (4,)]),
                       ("np.matvec(a, b)", [(2, 3, 4), (4,)]),
                       ("np.matvec(a, b)", [(3, 4), (2, 4)])))
if _has(np, "vecmat"):
    defvjp(np.vecmat,
           lambda g, out, x1, x2: unbroadcast(np.sum(x2 * np.expand_dims(g, -2), axis=-1), x1),
           lambda g, out, x1, x2: unbroadcast(np.expand_dims(x1, -1) * np.expand_dims(g, -2), x2),
           name="vecmat", linear=("x1", "x2"), family=_L,
           derivation="out_j = sum_i v_i A_ij: dv = A g, dA = v g^T (batch axes summed back)",
           test_cases=(("np.vecmat(a, b)", [(3,), (3, 4)]),
                       ("np.vecmat(a, b)", [(2, 3), (3, 4)]),
                       ("np.vecmat(a, b)", [(3,), (2, 3, 4)])))
defvjp(np.vdot, lambda g, out, a, b: np.reshape(g * np.ravel(b), np.shape(a)),
       lambda g, out, a, b: np.reshape(g * np.ravel(a), np.shape(b)),
       name="vdot", linear=("a", "b"), family=_L,
       derivation="sum(ravel(a) ravel(b)) (real values): da = g b, db = g a (reshaped)",
       test_cases=(("np.vdot(a, b)", [(4,), (4,)]), ("np.vdot(a, b)", [(2, 3), (3, 2)]),
                   ("np.vdot(a, a)", [(3,)])))
if _has(_LA, "matrix_norm"):
    defvjp(_LA.matrix_norm,
           lambda g, out, x, keepdims=False, ord="fro":
               np.moveaxis(svd_s_grad(
                   norm_svd_weights(g, x, ord, (-2, -1)),
                   np.linalg.svd(np.moveaxis(x, norm_matrix_axes(x, ord, (-2, -1)), (-2, -1)),
                                 full_matrices=False)), (-2, -1),
                   norm_matrix_axes(x, ord, (-2, -1)))
               if norm_uses_svd(x, ord, (-2, -1)) else norm_grad(g, out, x, ord, (-2, -1),
                                                                 keepdims),
           name="matrix_norm", family=_L,
           derivation="np.linalg.norm over the last two axes: 'fro' x / out; 1, inf: sign(x) "
           "on the extreme column or row; 'nuc': U V^T (the SVD's)",
           test_cases=(("np.linalg.matrix_norm(a)", [(3, 4)]),
                       ("np.linalg.matrix_norm(a, keepdims=True)", [(2, 3, 4)]),
                       ("np.linalg.matrix_norm(a, ord=1)", [(3, 4)]),
                       ("np.linalg.matrix_norm(a, ord=np.inf)", [(2, 3, 4)]),
                       ("np.linalg.matrix_norm(a, ord='nuc')", [(3, 4)])))
    defjvp(_LA.matrix_norm, lambda g, out, x, keepdims=False, ord="fro":
           norm_jvp(g, out, x, ord, (-2, -1), keepdims))
if _has(_LA, "vector_norm"):
    # (the reduced axes moved last and flattened into one: np.linalg.norm's vector rule over
    # axis -1, whatever ord, for any number of reduced axes)
    defvjp(_LA.vector_norm,
           lambda g, out, x, axis=None, keepdims=False, ord=2: np.transpose(np.reshape(
               norm_grad(np.reshape(g, vn_shapes(np.shape(x), axis, "keep")),
                         np.reshape(out, vn_shapes(np.shape(x), axis, "keep")),
                         np.reshape(np.transpose(x, vn_perm(np.ndim(x), axis)),
                                    vn_shapes(np.shape(x), axis, "flat")), ord, -1, True),
               vn_shapes(np.shape(x), axis, "perm")), vn_unperm(np.ndim(x), axis)),
           name="vector_norm", family=_L,
           derivation="the p-norm over the reduced axes (all by default): x / out for p = 2, "
           "sign(x) |x|^(p-1) / out^(p-1), inf / -inf: sign(x) on the extreme entries",
           test_cases=(("np.linalg.vector_norm(a)", [(3, 4)]),
                       ("np.linalg.vector_norm(a, axis=1)", [(3, 4)]),
                       ("np.linalg.vector_norm(a, axis=(0, 2), keepdims=True)", [(2, 3, 4)]),
                       ("np.linalg.vector_norm(a, ord=1)", [(2, 3)]),
                       ("np.linalg.vector_norm(a, axis=(-1, 0), ord=3)", [(3, 2, 4)]),
                       ("np.linalg.vector_norm(a, ord=np.inf, axis=0)", [(4, 3)])))
    defjvp(_LA.vector_norm,
           lambda g, out, x, axis=None, keepdims=False, ord=2: np.reshape(norm_jvp(
               np.reshape(np.transpose(g, vn_perm(np.ndim(x), axis)),
                          vn_shapes(np.shape(x), axis, "flat")),
               np.reshape(out, vn_shapes(np.shape(x), axis, "keep")),
               np.reshape(np.transpose(x, vn_perm(np.ndim(x), axis)),
                          vn_shapes(np.shape(x), axis, "flat")), ord, -1, True), np.shape(out)))
    for _h in (vn_perm, vn_unperm):
        defnondiff(_h, name=_h.__name__, family="runtime", params=(Param("ndim"), Param("axis")))
    defnondiff(vn_shapes, name="vn_shapes", family="runtime",
               params=(Param("shape"), Param("axis"), Param("which")))
if _has(_LA, "svdvals"):
    defvjp(_LA.svdvals, lambda g, out, x: svd_s_grad(g, np.linalg.svd(x, full_matrices=False)),
           name="svdvals", family=_L,
           derivation="the singular values: U diag(g) V^T (the reduced SVD; distinct values)",
           test_cases=(("np.linalg.svdvals(a)", [(3, 4)]),
                       ("np.linalg.svdvals(a)", [(2, 4, 3)])))
    defjvp(_LA.svdvals, lambda g, out, x: svd_jvp(g, out, x, False, False, False))
defvjp(_LA.eigvalsh,
       lambda g, out, a, UPLO="L": fold_triangle(
           (np.linalg.eigh(a, UPLO)[1] * np.expand_dims(g, -2))
           @ np.swapaxes(np.linalg.eigh(a, UPLO)[1], -1, -2), UPLO),
       name="eigvalsh", family=_L,
       derivation="the eigenvalues of eigh: dA = V diag(g) V^T, folded onto the triangle read",
       test_cases=(("np.linalg.eigvalsh(a + a.T)", [(3, 3)]),
                   ("np.linalg.eigvalsh(a, 'U')", [(3, 3)]),
                   ("np.linalg.eigvalsh(a + np.swapaxes(a, -1, -2))", [(2, 3, 3)])))
defjvp(_LA.eigvalsh, lambda g, out, a, UPLO="L": np.diagonal(
    np.swapaxes(np.linalg.eigh(a, UPLO)[1], -1, -2) @ symmetric_from(g, UPLO)
    @ np.linalg.eigh(a, UPLO)[1], axis1=-2, axis2=-1))

# --- cumulative_sum / cumulative_prod (numpy 2): cumsum / cumprod with an initial value ------
if _has(np, "cumulative_sum"):
    defvjp(np.cumulative_sum,
           lambda g, out, x, axis=None, dtype=None, include_initial=False: cumsum_grad(
               np.take(g, np.arange(1, np.shape(g)[axis or 0]), axis=axis or 0)
               if include_initial else g, x, axis), None, None,
           name="cumulative_sum", linear=("x",), family=_R,
           derivation="cumsum (with include_initial, a leading 0 that has no gradient): a "
           "reversed cumsum of g",
           test_cases=(("np.cumulative_sum(a)", [(4,)]),
                       ("np.cumulative_sum(a, axis=1)", [(3, 4)]),
                       ("np.cumulative_sum(a, axis=0, include_initial=True)", [(3, 4)]),
                       ("np.cumulative_sum(a, include_initial=True)", [(5,)])))
if _has(np, "cumulative_prod"):
    defvjp(np.cumulative_prod,
           lambda g, out, x, axis=None, dtype=None, include_initial=False: cumprod_grad(
               np.take(g, np.arange(1, np.shape(g)[axis or 0]), axis=axis or 0)
               if include_initial else g, x, axis), None, None,
           name="cumulative_prod", family=_R, domain=(0.5, 1.5),
           derivation="cumprod (with include_initial, a leading 1 that has no gradient)",
           test_cases=(("np.cumulative_prod(a)", [(4,)]),
                       ("np.cumulative_prod(a, axis=1)", [(3, 4)]),
                       ("np.cumulative_prod(a, axis=0, include_initial=True)", [(3, 4)])))
    defjvp(np.cumulative_prod,
           lambda g, out, x, axis=None, dtype=None, include_initial=False:
               np.concatenate(
                   [np.zeros_like(np.take(out, [0], axis=axis or 0)), cumprod_jvp(g, x, axis)],
                   axis=axis or 0)
               if include_initial else cumprod_jvp(g, x, axis), None, None)

# --- nan-reductions: NaNs get no gradient -----------------------------------------------------
_NAN = "np.where(a > 1.5, np.nan, a)"


def _nan_cases(fn, *extra):
    return ((f"np.{fn}({_NAN})", [(3, 4)]), (f"np.{fn}({_NAN}, axis=1)", [(3, 5)]),
            (f"np.{fn}({_NAN}, axis=0, keepdims=True)", [(4, 3)]),
            (f"np.{fn}({_NAN}, axis=(0, 2))", [(2, 3, 4)]), (f"np.{fn}(a, axis=-1)", [(3, 4)]),
            *extra)


# (where=: the elements it leaves out are read as NaNs -- `filled(a, where)`, which is `a` for
# numpy's default where=True, so the generated code is what it was without it)
def _nan_where_cases(fn):
    mask = "np.arange(12).reshape(3, 4) % 3 != 1"
    init = ", initial=-5.0" if fn == "nanmax" else ", initial=5.0" if fn == "nanmin" else ""
    return ((f"np.{fn}({_NAN}, where={mask}{init})", [(3, 4)]),
            (f"np.{fn}({_NAN}, axis=1, where={mask}{init})", [(3, 4)]),
            (f"np.{fn}(a, axis=0, keepdims=True, where={mask}{init})", [(3, 4)]))


for _fn, _name in ((np.nanmax, "nanmax"), (np.nanmin, "nanmin")):
    defvjp(_fn, lambda g, out, a, axis=None, keepdims=False, initial=None, where=True:
           extremum_grad(g, out, filled(a, where), axis, keepdims),
           None, None, None, None, name=_name, family=_R, no_rule_for=("initial",),
           test_cases=_nan_cases(_name) + _nan_where_cases(_name),
           derivation="g flows to the extrema among the non-NaN elements (that where= "
           "selects), split evenly among ties; NaNs (never equal to the output) get none")
    defjvp(_fn, lambda g, out, a, axis=None, keepdims=False, initial=None, where=True:
           extremum_jvp(g, out, filled(a, where), axis, keepdims))
defvjp(np.nanprod,
       lambda g, out, a, axis=None, dtype=None, keepdims=False, where=True:
           np.where(np.isnan(filled(a, where)), 0,
                    prod_grad(g, np.where(np.isnan(filled(a, where)), 1, a), axis, keepdims)),
       name="nanprod", family=_R, domain=(0.5, 1.7),
       test_cases=_nan_cases("nanprod") + _nan_where_cases("nanprod"),
       derivation="prod with NaNs read as 1: the product of the other elements, 0 at NaNs")
defjvp(np.nanprod,
       lambda g, out, a, axis=None, dtype=None, keepdims=False, where=True:
           np.sum(prod_grad(np.ones_like(out), np.where(np.isnan(filled(a, where)), 1, a), axis,
                            keepdims)
                  * np.where(np.isnan(filled(a, where)), 0, g), axis=axis, keepdims=keepdims))
defvjp(np.nanvar,
       lambda g, out, a, axis=None, dtype=None, ddof=0, keepdims=False, where=True:
           np.where(np.isnan(filled(a, where)), 0, unreduce(g, a, axis, keepdims) * (
               2 * (np.where(np.isnan(filled(a, where)), 0, a)
                    - np.nanmean(a, axis=axis, keepdims=True, where=where))
               / (np.sum(np.logical_not(np.isnan(filled(a, where))), axis=axis, keepdims=True)
                  .astype(np.result_type(a)) - ddof))),
       name="nanvar", family=_R, keywords={"correction": "ddof"},
       test_cases=_nan_cases("nanvar", (f"np.nanvar({_NAN}, axis=1, ddof=1)", [(3, 5)]))
       + _nan_where_cases("nanvar"),
       derivation="var over the non-NaN elements (n of them): 2 (a - mean) / (n - ddof), 0 at "
       "NaNs")
defvjp(np.nanstd,
       lambda g, out, a, axis=None, dtype=None, ddof=0, keepdims=False, where=True:
           np.where(np.isnan(filled(a, where)), 0,
                    unreduce(g / np.where(out == 0, 1, out), a, axis, keepdims)
                    * ((np.where(np.isnan(filled(a, where)), 0, a)
                        - np.nanmean(a, axis=axis, keepdims=True, where=where))
                       / (np.sum(np.logical_not(np.isnan(filled(a, where))), axis=axis,
                                 keepdims=True).astype(np.result_type(a)) - ddof))),
       name="nanstd", family=_R, keywords={"correction": "ddof"},
       test_cases=_nan_cases("nanstd", (f"np.nanstd({_NAN}, axis=0, ddof=1)", [(5, 3)]))
       + _nan_where_cases("nanstd"),
       derivation="sqrt(nanvar): (a - mean) / ((n - ddof) out), 0 at NaNs (and where out = 0)")
defjvp(np.nanvar,
       lambda g, out, a, axis=None, dtype=None, ddof=0, keepdims=False, where=True: np.sum(
           np.where(np.isnan(filled(a, where)), 0, g)
           * 2 * (np.where(np.isnan(filled(a, where)), 0, a)
                  - np.nanmean(a, axis=axis, keepdims=True, where=where)),
           axis=axis, keepdims=keepdims)
       / (np.sum(np.logical_not(np.isnan(filled(a, where))), axis=axis, keepdims=keepdims)
          .astype(np.result_type(a)) - ddof))
defjvp(np.nanstd,
       lambda g, out, a, axis=None, dtype=None, ddof=0, keepdims=False, where=True: np.sum(
           np.where(np.isnan(filled(a, where)), 0, g)
           * (np.where(np.isnan(filled(a, where)), 0, a)
              - np.nanmean(a, axis=axis, keepdims=True, where=where)),
           axis=axis, keepdims=keepdims)
       / ((np.sum(np.logical_not(np.isnan(filled(a, where))), axis=axis, keepdims=keepdims)
           .astype(np.result_type(a)) - ddof) * np.where(out == 0, 1, out)))
defvjp(np.nancumsum,
       lambda g, out, a, axis=None: np.where(np.isnan(a), 0, cumsum_grad(g, a, axis)),
       name="nancumsum", family=_R,
       test_cases=((f"np.nancumsum({_NAN})", [(3, 4)]), (f"np.nancumsum({_NAN}, axis=1)", [(3, 4)]),
                   (f"np.nancumsum({_NAN}, 0)", [(4, 2)])),
       derivation="cumsum with NaNs read as 0: a reversed cumsum of g, 0 at NaNs")
defjvp(np.nancumsum,
       lambda g, out, a, axis=None: np.cumsum(np.where(np.isnan(a), 0, g), axis=axis))
defvjp(np.nancumprod,
       lambda g, out, a, axis=None:
           np.where(np.isnan(a), 0, cumprod_grad(g, np.where(np.isnan(a), 1, a), axis)),
       name="nancumprod", family=_R, domain=(0.5, 1.7),
       test_cases=((f"np.nancumprod({_NAN})", [(3, 4)]),
                   (f"np.nancumprod({_NAN}, axis=1)", [(3, 4)])),
       derivation="cumprod with NaNs read as 1, 0 at NaNs")
defjvp(np.nancumprod,
       lambda g, out, a, axis=None:
           cumprod_jvp(np.where(np.isnan(a), 0, g), np.where(np.isnan(a), 1, a), axis))

# --- least squares ----------------------------------------------------------------------------
# (x, residuals, rank, s) = lstsq(a, b): x = P b with P = pinv(a) (a of full rank); B, X, G the
# right-hand sides, solutions and their cotangent as columns, R = B - a X the residual vectors.
# residuals_j = |R_j|^2 (a tall a): d = 2 R_j^T (dB_j - dA X_j), as a^T R = 0.
_LSTSQ = ("x = pinv(a) b (full rank): dA through pinv's VJP with G = g_x B^T, db = P^T g_x; "
          "the residuals |b - a x|^2 (tall a): dA = -2 R X^T, db = 2 R (per column); s: the "
          "singular values' U diag(g) V^T; rank: none")
defvjp(_LA.lstsq,
       lambda g, out, a, b, rcond=None: (
           -np.linalg.pinv(a).T @ (np.reshape(g[0] * np.ones_like(out[0]), (np.shape(a)[1], -1))
                                   @ np.reshape(b, (np.shape(a)[0], -1)).T)
           @ np.linalg.pinv(a).T
           + (np.eye(np.shape(a)[0], dtype=np.result_type(out[0])) - a @ np.linalg.pinv(a))
           @ (np.reshape(g[0] * np.ones_like(out[0]), (np.shape(a)[1], -1))
              @ np.reshape(b, (np.shape(a)[0], -1)).T).T
           @ np.linalg.pinv(a) @ np.linalg.pinv(a).T
           + np.linalg.pinv(a).T @ np.linalg.pinv(a)
           @ (np.reshape(g[0] * np.ones_like(out[0]), (np.shape(a)[1], -1))
              @ np.reshape(b, (np.shape(a)[0], -1)).T).T
           @ (np.eye(np.shape(a)[1], dtype=np.result_type(out[0])) - np.linalg.pinv(a) @ a)
           - 2 * ((np.reshape(b, (np.shape(a)[0], -1)) - a @ np.reshape(out[0], (np.shape(a)[1],
                                                                                  -1)))
                  * (g[1] * np.ones_like(out[1]) if np.size(out[1]) else 0.0))
           @ np.reshape(out[0], (np.shape(a)[1], -1)).T
           + (svd_s_grad(g[3] * np.ones_like(out[3]), np.linalg.svd(a, full_matrices=False))
              if np.any(g[3]) else 0.0)),
       lambda g, out, a, b, rcond=None: np.reshape(
           np.linalg.pinv(a).T @ np.reshape(g[0] * np.ones_like(out[0]), (np.shape(a)[1], -1))
           + 2 * (np.reshape(b, (np.shape(a)[0], -1)) - a @ np.reshape(out[0], (np.shape(a)[1],
                                                                                -1)))
           * (g[1] * np.ones_like(out[1]) if np.size(out[1]) else 0.0), np.shape(b)),
       None, name="lstsq", family=_L, domain=(-1.0, 1.0), derivation=_LSTSQ,
       test_cases=(("np.linalg.lstsq(a, b)[0]", [(5, 3), (5,)]),
                   ("np.linalg.lstsq(a, b, rcond=None)[0]", [(4, 2), (4, 3)]),
                   ("np.linalg.lstsq(a + 2 * np.eye(3), b)[0]", [(3, 3), (3,)]),
                   ("np.linalg.lstsq(a, b)[0]", [(2, 4), (2,)]),
                   ("np.linalg.lstsq(a, b)[1]", [(5, 2), (5, 3)]),
                   ("np.linalg.lstsq(a, b)[1] * np.linalg.lstsq(a, b)[0][0]", [(4, 2), (4,)]),
                   ("np.linalg.lstsq(a, b)[3]", [(4, 3), (4,)])))
# (the tangent as `Items`, which add item by item: a's and b's terms are summed by `+`)
defjvp(_LA.lstsq,
       lambda g, out, a, b, rcond=None: Items([
           np.reshape((-np.linalg.pinv(a) @ g @ np.linalg.pinv(a)
                       + np.linalg.pinv(a) @ np.linalg.pinv(a).T @ g.T
                       @ (np.eye(np.shape(a)[0], dtype=g.dtype) - a @ np.linalg.pinv(a))
                       + (np.eye(np.shape(a)[1], dtype=g.dtype) - np.linalg.pinv(a) @ a) @ g.T
                       @ np.linalg.pinv(a).T @ np.linalg.pinv(a))
                      @ np.reshape(b, (np.shape(a)[0], -1)), np.shape(out[0])),
           -2 * np.sum((np.reshape(b, (np.shape(a)[0], -1))
                        - a @ np.reshape(out[0], (np.shape(a)[1], -1)))
                       * (g @ np.reshape(out[0], (np.shape(a)[1], -1))), axis=0)
           if np.size(out[1]) else np.zeros_like(out[1]),
           np.zeros_like(out[2]), svd_jvp(g, out[3], a, False, False, False)]),
       lambda g, out, a, b, rcond=None: Items([
           np.reshape(np.linalg.pinv(a) @ np.reshape(g, (np.shape(a)[0], -1)),
                      np.shape(out[0])),
           2 * np.sum((np.reshape(b, (np.shape(a)[0], -1))
                       - a @ np.reshape(out[0], (np.shape(a)[1], -1)))
                      * np.reshape(g, (np.shape(a)[0], -1)), axis=0)
           if np.size(out[1]) else np.zeros_like(out[1]),
           np.zeros_like(out[2]), np.zeros_like(out[3])]), None)

# --- matrix_power -------------------------------------------------------------------------------
_MP = ("A^n = A A ... A: dA = sum_k (A^T)^k G (A^T)^(n-1-k); n < 0: the same for B = inv(A) "
       "and |n|, then dA = -B^T dB B^T; n = 0: none. First order only: the sum's derivative in "
       "A is refused")
defvjp(_LA.matrix_power,
       lambda g, out, a, n: power_sum(g, np.swapaxes(a, -1, -2), n) if n >= 0 else
       -np.swapaxes(np.linalg.inv(a), -1, -2) @ power_sum(
           g, np.swapaxes(np.linalg.inv(a), -1, -2), -n) @ np.swapaxes(np.linalg.inv(a), -1, -2),
       None, name="matrix_power", family=_L, domain=(-1.0, 1.0), derivation=_MP,
       test_cases=(("np.linalg.matrix_power(a, 3)", [(3, 3)]),
                   ("np.linalg.matrix_power(a, 1)", [(2, 2)]),
                   ("np.linalg.matrix_power(a, 0) * a", [(3, 3)]),
                   ("np.linalg.matrix_power(a, 2)", [(2, 3, 3)]),
                   ("np.linalg.matrix_power(a + 3 * np.eye(3), -2)", [(3, 3)])))
defjvp(_LA.matrix_power,
       lambda g, out, a, n: power_sum(g, a, n) if n >= 0 else power_sum(
           -np.linalg.inv(a) @ g @ np.linalg.inv(a), np.linalg.inv(a), -n), None)
defvjp(power_sum, lambda g, out, ct, m, n: power_sum(g, np.swapaxes(m, -1, -2), n),
       lambda g, out, ct, m, n: unsupported_derivative("the second derivative of "
                                                       "np.linalg.matrix_power"), None,
       name="power_sum", linear=("ct",), family="runtime",
       derivation="linear in ct; its transpose is the sum with m transposed (no rule in m)")
defjvp(power_sum, None, lambda g, out, ct, m, n: unsupported_derivative(
    "the second derivative of np.linalg.matrix_power"), None)

# --- cond (2-norm), tensorinv -----------------------------------------------------------------
_COND = ("p None / 2: s_max / s_min, -2: s_min / s_max, of the singular values (distinct): "
         "U diag(w) V^T with w the ratio's derivative in s; other p ('fro', 'nuc', 1, -1, inf, "
         "-inf): |x|_p |B|_p with B = inv(x), through the norm's rule and inv's "
         "(dB = -B dx B)")
defvjp(_LA.cond,
       lambda g, out, x, p=None: svd_s_grad(
           np.expand_dims(g, -1) * (
               (np.arange(np.shape(x)[-1]) == 0)
               / np.linalg.svd(x, compute_uv=False)[..., -1:]
               - (np.arange(np.shape(x)[-1]) == np.shape(x)[-1] - 1)
               * np.linalg.svd(x, compute_uv=False)[..., :1]
               / np.linalg.svd(x, compute_uv=False)[..., -1:] ** 2
               if p in (None, 2) else
               (np.arange(np.shape(x)[-1]) == np.shape(x)[-1] - 1)
               / np.linalg.svd(x, compute_uv=False)[..., :1]
               - (np.arange(np.shape(x)[-1]) == 0)
               * np.linalg.svd(x, compute_uv=False)[..., -1:]
               / np.linalg.svd(x, compute_uv=False)[..., :1] ** 2),
           np.linalg.svd(x, full_matrices=False))
       # other p: cond = |x|_p |B|_p with B = inv(x), so dx = |B| d|x| - B^T (|x| d|B|) B^T
       if p in (None, 2, -2) else
       (svd_s_grad(norm_svd_weights(g * np.linalg.norm(np.linalg.inv(x), p, (-2, -1)), x, p,
                                    (-2, -1)), np.linalg.svd(x, full_matrices=False))
        if p == "nuc" else norm_grad(g * np.linalg.norm(np.linalg.inv(x), p, (-2, -1)),
                                     np.linalg.norm(x, p, (-2, -1)), x, p, (-2, -1), False))
       - np.swapaxes(np.linalg.inv(x), -1, -2) @ (
           svd_s_grad(norm_svd_weights(g * np.linalg.norm(x, p, (-2, -1)), np.linalg.inv(x), p,
                                       (-2, -1)), np.linalg.svd(np.linalg.inv(x),
                                                                full_matrices=False))
           if p == "nuc" else norm_grad(g * np.linalg.norm(x, p, (-2, -1)),
                                        np.linalg.norm(np.linalg.inv(x), p, (-2, -1)),
                                        np.linalg.inv(x), p, (-2, -1), False))
       @ np.swapaxes(np.linalg.inv(x), -1, -2),
       None, name="cond", family=_L, domain=(-1.0, 1.0), derivation=_COND,
       test_cases=(("np.linalg.cond(a + 3 * np.eye(3))", [(3, 3)]),
                   ("np.linalg.cond(a + 2 * np.eye(3), 2)", [(3, 3)]),
                   ("np.linalg.cond(a - 2 * np.eye(3), -2)", [(3, 3)]),
                   ("np.linalg.cond(a + 3 * np.eye(3))", [(2, 3, 3)]),
                   ("np.linalg.cond(a + 3 * np.eye(3), 'fro')", [(3, 3)]),
                   ("np.linalg.cond(a + 3 * np.eye(3), 'nuc')", [(2, 3, 3)]),
                   ("np.linalg.cond(a + 3 * np.eye(3), 1)", [(3, 3)]),
                   ("np.linalg.cond(a + 3 * np.eye(3), -np.inf)", [(3, 3)])))
defjvp(_LA.cond,
       lambda g, out, x, p=None: (
           svd_jvp(g, np.linalg.svd(x, compute_uv=False), x, False, False, False)[..., 0]
           / np.linalg.svd(x, compute_uv=False)[..., -1]
           - np.linalg.svd(x, compute_uv=False)[..., 0]
           * svd_jvp(g, np.linalg.svd(x, compute_uv=False), x, False, False, False)[..., -1]
           / np.linalg.svd(x, compute_uv=False)[..., -1] ** 2
           if p in (None, 2) else
           svd_jvp(g, np.linalg.svd(x, compute_uv=False), x, False, False, False)[..., -1]
           / np.linalg.svd(x, compute_uv=False)[..., 0]
           - np.linalg.svd(x, compute_uv=False)[..., -1]
           * svd_jvp(g, np.linalg.svd(x, compute_uv=False), x, False, False, False)[..., 0]
           / np.linalg.svd(x, compute_uv=False)[..., 0] ** 2)
       if p in (None, 2, -2) else
       np.linalg.norm(np.linalg.inv(x), p, (-2, -1)) * (
           np.sum(svd_jvp(g, np.linalg.svd(x, compute_uv=False), x, False, False, False), -1)
           if p == "nuc" else norm_jvp(g, np.linalg.norm(x, p, (-2, -1)), x, p, (-2, -1)))
       + np.linalg.norm(x, p, (-2, -1)) * (
           np.sum(svd_jvp(-np.linalg.inv(x) @ g @ np.linalg.inv(x),
                          np.linalg.svd(np.linalg.inv(x), compute_uv=False), np.linalg.inv(x),
                          False, False, False), -1)
           if p == "nuc" else norm_jvp(-np.linalg.inv(x) @ g @ np.linalg.inv(x),
                                       np.linalg.norm(np.linalg.inv(x), p, (-2, -1)),
                                       np.linalg.inv(x), p, (-2, -1))), None)
defvjp(_LA.tensorinv,
       lambda g, out, a, ind=2: np.reshape(
           -np.reshape(out, (isqrt(np.size(a)), -1)).T
           @ np.reshape(g, (isqrt(np.size(a)), -1))
           @ np.reshape(out, (isqrt(np.size(a)), -1)).T, np.shape(a)),
       None, name="tensorinv", family=_L, domain=(-1.0, 1.0),
       derivation="inv of a as an N x N matrix (its first `ind` axes the rows): dA = -B^T G B^T "
       "with B the result as a matrix, reshaped back",
       test_cases=(("np.linalg.tensorinv(a + 3 * np.eye(4).reshape(4, 2, 2), 1)", [(4, 2, 2)]),
                   ("np.linalg.tensorinv(a + 3 * np.eye(6).reshape(2, 3, 6))", [(2, 3, 6)])))
defjvp(_LA.tensorinv,
       lambda g, out, a, ind=2: np.reshape(
           -np.reshape(out, (isqrt(np.size(a)), -1))
           @ np.reshape(g, (-1, isqrt(np.size(a))))
           @ np.reshape(out, (isqrt(np.size(a)), -1)), np.shape(out)), None)
