"""The helpers of the array and matrix families (srcad/runtime_arrays.py,
srcad/runtime_linalg.py, srcad/runtime_decompositions.py) as rows, so that generated code
calling them can be differentiated again (``srcad.grad(srcad.grad(f))``,
``srcad.jvp(srcad.grad(f), ...)``).

Each helper is linear in its first argument (a cotangent or a tangent): forward mode applies
it to that argument's tangent (``linear``), and its VJP is its transpose -- a numpy call or
its partner helper (``unsort`` / ``sort_like``, ``symmetric_from`` / ``fold_triangle``, ...).
The other arguments are read for shapes, indices and permutations (no derivative), or --
where the helper's value really depends on them (norm's x, einsum's operands, prod's and
cumprod's a, eigh's and svd's gaps) -- have a rule written in rows, or one that raises
`unsupported_derivative`: a derivative srcad does not implement is an error, never zeros. The bilinear helpers
(tensordot, kron) are linear in the other factor too, with exact transposes.
"""

import numpy as np

from .. import runtime_arrays as ra
from .. import runtime_decompositions as rd
from .. import runtime_linalg as rl
from ..runtime import (
    asarray_like,
    unasarray,
    as_columns,
    join_pieces,
    permute_like,
    place_appended,
    select_default_grad,
    select_default_jvp,
    select_pieces,
    unappend,
    unpad,
    undiff,
    rediff,
    unconcatenate,
    unjoin,
    unpermute,
    unstack,
    cumprod_grad,
    cumprod_grad2,
    cumprod_jvp,
    cumprod_jvp2,
    einsum_grad,
    einsum_grad_first,
    einsum_grad_tangent,
    einsum_jvp,
    einsum_jvp_first,
    einsum_jvp_tangent,
    fold_triangle,
    from_columns,
    cross_grad_a,
    cross_grad_b,
    inner_grad_a,
    inner_grad_b,
    kron_grad_a,
    kron_grad_b,
    norm_grad,
    norm_grad_dot,
    norm_jvp,
    norm_reduce,
    norm_svd_unweights,
    norm_svd_weights,
    phi_lower,
    sort_like,
    svd_grad,
    svd_jvp,
    svd_s_grad_usv,
    symmetric_from,
    tensordot_grad_a,
    sparse_matmul,
    tensordot_grad_b,
    transpose_if,
    unbroadcast,
    unselect,
    unsort,
    unsupported_derivative,
)
from .table import Param, defjvp, defnondiff, defvjp

_FAM = "runtime"


def _P(*names, **defaults):
    return tuple(Param(n, defaults[n]) if n in defaults else Param(n) for n in names)


# --- shape-only helpers: linear in ct, transposed by a numpy call ----------------------------
defvjp(ra.undiagonal, lambda g, out, ct, x, offset=0, axis1=0, axis2=1:
       unbroadcast(np.diagonal(g, offset, axis1, axis2), ct), None, None, None, None,
       name="undiagonal", linear=("ct",), family=_FAM,
       derivation="writes ct onto a diagonal; its transpose reads the diagonal")
defvjp(ra.diag_grad, lambda g, out, ct, v, k=0: np.diag(g, k), None, None,
       name="diag_grad", linear=("ct",), family=_FAM,
       derivation="np.diag's transpose; np.diag is its own transpose in the other direction")
defvjp(ra.unpad, lambda g, out, ct, array, pad_width, mode="constant", stat_length=None:
       pad_tangent(g, pad_width, mode, array, stat_length),
       None, None, None, None, name="unpad", linear=("ct",), family=_FAM,
       derivation="a crop (constant mode) or a scatter-add by np.pad's index map (edge, "
       "reflect, symmetric, wrap), or back through a border computed from the array (mean, "
       "maximum, minimum, median, linear_ramp: weights piecewise constant in it); its "
       "transpose is np.pad's tangent in that mode")
defvjp(ra.pad_tangent,
       lambda g, out, t, pad_width, mode="constant", array=None, stat_length=None:
           unpad(g, t if array is None else array, pad_width, mode, stat_length),
       None, None, None, None, name="pad_tangent", linear=("t",), family=_FAM,
       derivation="np.pad of a tangent; its transpose is unpad")
defvjp(ra.pad_value_grad,
       lambda g, out, ct, array, pad_width, mode="constant", constant_values=0:
           np.pad(np.zeros_like(array), pad_width, constant_values=g),
       None, None, None, None, name="pad_value_grad", linear=("ct",), family=_FAM,
       derivation="a sum over the border; its transpose fills the border")
defvjp(ra.unsort, lambda g, out, ct, a, axis=-1: sort_like(g, a, axis), None, None,
       name="unsort", linear=("ct",), family=_FAM,
       derivation="the inverse permutation of a sort; its transpose is the permutation")
defvjp(ra.sort_like, lambda g, out, ct, a, axis=-1: unsort(g, a, axis), None, None,
       name="sort_like", linear=("ct",), family=_FAM,
       derivation="a sort's permutation; its transpose is the inverse permutation")
defvjp(ra.untake_along_axis,
       lambda g, out, ct, arr, indices, axis=-1: np.take_along_axis(g, indices, axis),
       None, None, None, name="untake_along_axis", linear=("ct",), family=_FAM,
       derivation="a scatter-add; its transpose gathers")
defvjp(ra.untake, lambda g, out, ct, a, indices, axis=None, mode="raise":
       np.take(g, indices, axis, mode=mode),
       None, None, None, None, name="untake", linear=("ct",), family=_FAM,
       derivation="a scatter-add; its transpose gathers")
defvjp(ra.unrepeat, lambda g, out, ct, a, repeats, axis=None: np.repeat(g, repeats, axis),
       None, None, None, name="unrepeat", linear=("ct",), family=_FAM,
       derivation="a sum of copies; its transpose copies")
defvjp(ra.unsplit,
       lambda g, out, ct, ary, indices_or_sections, axis=0:
           np.array_split(g, indices_or_sections, axis),
       None, None, None, name="unsplit", linear=("ct",), family=_FAM,
       derivation="a concatenation; its transpose splits")
defvjp(ra.untile, lambda g, out, ct, A, reps: np.tile(g, reps), None, None,
       name="untile", linear=("ct",), family=_FAM,
       derivation="a sum of copies; its transpose copies")
defvjp(rl.as_columns, lambda g, out, v, b: from_columns(g, b), None,
       name="as_columns", linear=("v",), family=_FAM, derivation="a reshape")
defvjp(rl.from_columns, lambda g, out, v, b: as_columns(g, b), None,
       name="from_columns", linear=("v",), family=_FAM, derivation="a reshape")

# --- a scipy.sparse constant times an array: linear in the array -------------------------------
defvjp(rl.sparse_matmul, lambda g, out, a, b: sparse_matmul(g, b.T),
       lambda g, out, a, b: sparse_matmul(a.T, g),
       name="sparse_matmul", linear=("a", "b"), family=_FAM,
       spelling="sparse_matmul(a, b)",
       derivation="`S @ x` or `x @ S` of a scipy.sparse constant S (frontend/expressions.py, "
       "tape_tensor.SparseView): linear in the array; its cotangent is the product with S's "
       "transpose (sparse as S); checked in tests/test_probe15_forms.py")

# --- bilinear helpers: exact transposes in both factors ---------------------------------------
defvjp(rl.tensordot_grad_a,
       lambda g, out, ct, a, b, axes=2: np.tensordot(g, b, axes), None,
       lambda g, out, ct, a, b, axes=2: tensordot_grad_b(ct, g, b, axes), None,
       name="tensordot_grad_a", linear=("ct", "b"), family=_FAM,
       derivation="bilinear in (ct, b); transposes: tensordot and tensordot_grad_b")
defvjp(rl.tensordot_grad_b,
       lambda g, out, ct, a, b, axes=2: np.tensordot(a, g, axes),
       lambda g, out, ct, a, b, axes=2: tensordot_grad_a(ct, a, g, axes), None, None,
       name="tensordot_grad_b", linear=("ct", "a"), family=_FAM,
       derivation="bilinear in (ct, a); transposes: tensordot and tensordot_grad_a")
defvjp(rl.kron_grad_a, lambda g, out, ct, a, b: np.kron(g, b), None,
       lambda g, out, ct, a, b: kron_grad_b(ct, g, b),
       name="kron_grad_a", linear=("ct", "b"), family=_FAM,
       derivation="bilinear in (ct, b); transposes: kron and kron_grad_b")
defvjp(rl.kron_grad_b, lambda g, out, ct, a, b: np.kron(a, g),
       lambda g, out, ct, a, b: kron_grad_a(ct, a, g), None,
       name="kron_grad_b", linear=("ct", "a"), family=_FAM,
       derivation="bilinear in (ct, a); transposes: kron and kron_grad_a")

# (np.cross's VJPs, bilinear in (ct, the other operand): their transposes are np.cross and
# the other VJP; `axis` given sets all three axes, as np.cross reads it)
def _ax(own, axis, x=None):
    """The axis np.cross reads (`axis` sets all three); counted from the right of `x`'s
    dimensions where given (a cotangent in x's place may have more batch axes)."""
    ax = own if axis is None else axis
    return ax if x is None else ax % np.ndim(x) - np.ndim(x)


defvjp(rl.cross_grad_a,
       lambda g, out, ct, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None: unbroadcast(
           np.cross(g, b, axisa=_ax(axisa, axis, a), axisb=_ax(axisb, axis),
                    axisc=_ax(axisc, axis)), ct),
       None,
       lambda g, out, ct, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None: unbroadcast(
           cross_grad_b(ct, g, b, _ax(axisa, axis, a), _ax(axisb, axis), _ax(axisc, axis)),
           b),
       None, None, None, None,
       name="cross_grad_a", linear=("ct", "b"), family=_FAM,
       derivation="bilinear in (ct, b); transposes: cross and cross_grad_b")
defvjp(rl.cross_grad_b,
       lambda g, out, ct, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None: unbroadcast(
           np.cross(a, g, axisa=_ax(axisa, axis), axisb=_ax(axisb, axis, b),
                    axisc=_ax(axisc, axis)), ct),
       lambda g, out, ct, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None: unbroadcast(
           cross_grad_a(ct, a, g, _ax(axisa, axis), _ax(axisb, axis, b), _ax(axisc, axis)),
           a),
       None, None, None, None, None,
       name="cross_grad_b", linear=("ct", "a"), family=_FAM,
       derivation="bilinear in (ct, a); transposes: cross and cross_grad_a")

defvjp(rl.inner_grad_a, lambda g, out, ct, a, b: np.inner(g, b), None,
       lambda g, out, ct, a, b: inner_grad_b(ct, g, b),
       name="inner_grad_a", linear=("ct", "b"), family=_FAM,
       derivation="bilinear in (ct, b); transposes: inner and inner_grad_b")
defvjp(rl.inner_grad_b, lambda g, out, ct, a, b: np.inner(a, g),
       lambda g, out, ct, a, b: inner_grad_a(ct, a, g), None,
       name="inner_grad_b", linear=("ct", "a"), family=_FAM,
       derivation="bilinear in (ct, a); transposes: inner and inner_grad_a")

# --- cumprod: linear in ct / t; in a, the second derivative's bilinear maps (exact with
# zeros: recurrences, no division), whose own derivative in a (a third) is refused ----------
_CP3 = "the third derivative of np.cumprod"
defvjp(ra.cumprod_grad, lambda g, out, ct, a, axis=None: cumprod_jvp(g, a, axis),
       lambda g, out, ct, a, axis=None: cumprod_grad2(ct, a, g, axis), None,
       name="cumprod_grad", linear=("ct",), family=_FAM,
       derivation="cumprod's VJP, linear in ct (its transpose is cumprod's JVP); in a, "
       "cumprod_grad2 (<K, d_a grad(ct)[s]> = <ct, jvp2(K, s)> = <grad2(ct, K), s>)")
defjvp(ra.cumprod_grad, None, lambda g, out, ct, a, axis=None: cumprod_grad2(ct, a, g, axis))
defvjp(ra.cumprod_jvp, lambda g, out, t, a, axis=None: cumprod_grad(g, a, axis),
       lambda g, out, t, a, axis=None: cumprod_grad2(g, a, t, axis), None,
       name="cumprod_jvp", linear=("t",), family=_FAM,
       derivation="cumprod's JVP, linear in t (its transpose is cumprod's VJP); in a, "
       "cumprod_jvp2 forward and cumprod_grad2 back")
defjvp(ra.cumprod_jvp, None, lambda g, out, t, a, axis=None: cumprod_jvp2(t, g, a, axis))
defvjp(ra.cumprod_grad2, lambda g, out, ct, a, t, axis=None: cumprod_jvp2(t, g, a, axis),
       lambda g, out, ct, a, t, axis=None: unsupported_derivative(_CP3),
       lambda g, out, ct, a, t, axis=None: cumprod_grad2(ct, a, g, axis), None,
       name="cumprod_grad2", linear=("ct", "t"), family=_FAM,
       derivation="cumprod's second derivative, bilinear in (ct, t): <K, grad2(G, t)> = "
       "<G, jvp2(t, K)> = <grad2(G, K), t>")
defjvp(ra.cumprod_grad2, None, lambda g, out, ct, a, t, axis=None: unsupported_derivative(_CP3),
       None, None)
defvjp(ra.cumprod_jvp2, lambda g, out, t, s, a, axis=None: cumprod_grad2(g, a, s, axis),
       lambda g, out, t, s, a, axis=None: cumprod_grad2(g, a, t, axis),
       lambda g, out, t, s, a, axis=None: unsupported_derivative(_CP3), None,
       name="cumprod_jvp2", linear=("t", "s"), family=_FAM,
       derivation="cumprod's second tangent, bilinear and symmetric in (t, s); its "
       "transposes are cumprod_grad2")
defjvp(ra.cumprod_jvp2, None, None,
       lambda g, out, t, s, a, axis=None: unsupported_derivative(_CP3), None)
# einsum's maps are linear in every operand but the one they answer for: their derivatives
# in the operands are the `*_tangent` helpers, which are linear in both their tangent
# arguments; a fourth derivative through them is refused
_EIN3 = "a third derivative of np.einsum"
defvjp(rl.einsum_grad,
       lambda g, out, ct, subscripts, operands, optimize=False:
           einsum_jvp(g, subscripts, operands),
       None,
       lambda g, out, ct, subscripts, operands, optimize=False:
           einsum_grad_tangent(ct, subscripts, operands, g),
       name="einsum_grad", linear=("ct",), family=_FAM,
       derivation="einsum's VJP, linear in ct (transpose: einsum's JVP) and in each other "
       "operand (einsum_grad_tangent, its own transpose)")
defjvp(rl.einsum_grad, None, None,
       lambda g, out, ct, subscripts, operands, optimize=False:
           einsum_grad_tangent(ct, subscripts, operands, g))
defvjp(rl.einsum_jvp,
       lambda g, out, tangents, subscripts, operands, optimize=False:
           einsum_grad(g, subscripts, operands),
       None,
       lambda g, out, tangents, subscripts, operands, optimize=False:
           einsum_grad_tangent(g, subscripts, operands, tangents),
       name="einsum_jvp", linear=("tangents",), family=_FAM,
       derivation="einsum's JVP, linear in the tangents (transpose: einsum's VJP) and in each "
       "other operand")
defjvp(rl.einsum_jvp, None, None,
       lambda g, out, tangents, subscripts, operands, optimize=False:
           einsum_jvp_tangent(tangents, subscripts, operands, g))
_EIN_IL = "a second derivative of np.einsum's interleaved form"
defvjp(rl.einsum_grad_first,
       lambda g, out, ct, subscripts, operands, optimize=False:
           einsum_jvp_first(g, subscripts, operands),
       lambda g, out, ct, subscripts, operands, optimize=False: unsupported_derivative(_EIN_IL),
       lambda g, out, ct, subscripts, operands, optimize=False: unsupported_derivative(_EIN_IL),
       name="einsum_grad_first", linear=("ct",), family=_FAM,
       derivation="the interleaved form's first cotangent, linear in ct; its transpose is "
       "einsum_jvp_first")
defjvp(rl.einsum_grad_first, None,
       lambda g, out, ct, subscripts, operands, optimize=False: unsupported_derivative(_EIN_IL),
       lambda g, out, ct, subscripts, operands, optimize=False: unsupported_derivative(_EIN_IL))
defvjp(rl.einsum_jvp_first,
       lambda g, out, t, subscripts, operands, optimize=False:
           einsum_grad_first(g, subscripts, operands),
       lambda g, out, t, subscripts, operands, optimize=False: unsupported_derivative(_EIN_IL),
       lambda g, out, t, subscripts, operands, optimize=False: unsupported_derivative(_EIN_IL),
       name="einsum_jvp_first", linear=("t",), family=_FAM,
       derivation="the interleaved form's JVP along its first array, linear in t; its "
       "transpose is einsum_grad_first")
defjvp(rl.einsum_jvp_first, None,
       lambda g, out, t, subscripts, operands, optimize=False: unsupported_derivative(_EIN_IL),
       lambda g, out, t, subscripts, operands, optimize=False: unsupported_derivative(_EIN_IL))
defvjp(rl.einsum_grad_tangent,
       lambda g, out, ct, subscripts, operands, tangents, optimize=False:
           einsum_jvp_tangent(tangents, subscripts, operands, g),
       None,
       lambda g, out, ct, subscripts, operands, tangents, optimize=False:
           unsupported_derivative(_EIN3),
       lambda g, out, ct, subscripts, operands, tangents, optimize=False:
           einsum_grad_tangent(ct, subscripts, operands, g),
       name="einsum_grad_tangent", linear=("ct", "tangents"), family=_FAM,
       derivation="bilinear in (ct, tangents)")
defjvp(rl.einsum_grad_tangent, None, None,
       lambda g, out, ct, subscripts, operands, tangents, optimize=False:
           unsupported_derivative(_EIN3))
defvjp(rl.einsum_jvp_tangent,
       lambda g, out, tangents, subscripts, operands, more, optimize=False:
           einsum_grad_tangent(g, subscripts, operands, more),
       None,
       lambda g, out, tangents, subscripts, operands, more, optimize=False:
           unsupported_derivative(_EIN3),
       lambda g, out, tangents, subscripts, operands, more, optimize=False:
           einsum_grad_tangent(g, subscripts, operands, tangents),
       name="einsum_jvp_tangent", linear=("tangents", "more"), family=_FAM,
       derivation="bilinear in (tangents, more)")
defjvp(rl.einsum_jvp_tangent, None, None,
       lambda g, out, tangents, subscripts, operands, more, optimize=False:
           unsupported_derivative(_EIN3))
# norm's maps depend on x and y (the norm) too: their derivatives there are norm_grad_dot
# (the curvature of the 2-norms and p-norms, 0 for the piecewise-linear norms, refused for
# the SVD-based matrix norms); a third derivative is refused
_NORM3 = "a third derivative of np.linalg.norm"
defvjp(rd.norm_grad,
       lambda g, out, ct, y, x, ord=None, axis=None, keepdims=False:
           norm_jvp(g, y, x, ord, axis, keepdims),
       lambda g, out, ct, y, x, ord=None, axis=None, keepdims=False:
           norm_reduce(norm_grad_dot(ct, y, x, ord, axis, keepdims, None, np.ones_like(y)) * g,
                       y, x, ord, axis, keepdims),
       lambda g, out, ct, y, x, ord=None, axis=None, keepdims=False:
           norm_grad_dot(ct, y, x, ord, axis, keepdims, g, None),
       name="norm_grad", linear=("ct",), family=_FAM,
       derivation="norm's VJP: linear in ct (transpose: norm's JVP); in x and y, "
       "norm_grad_dot")
defjvp(rd.norm_grad, None,
       lambda g, out, ct, y, x, ord=None, axis=None, keepdims=False:
           norm_grad_dot(ct, y, x, ord, axis, keepdims, None, g),
       lambda g, out, ct, y, x, ord=None, axis=None, keepdims=False:
           norm_grad_dot(ct, y, x, ord, axis, keepdims, g, None))
defvjp(rd.norm_jvp,
       lambda g, out, t, y, x, ord=None, axis=None, keepdims=False:
           norm_grad(g, y, x, ord, axis, keepdims),
       lambda g, out, t, y, x, ord=None, axis=None, keepdims=False:
           norm_reduce(norm_grad_dot(g, y, x, ord, axis, keepdims, None, np.ones_like(y)) * t,
                       y, x, ord, axis, keepdims),
       lambda g, out, t, y, x, ord=None, axis=None, keepdims=False:
           norm_grad_dot(g, y, x, ord, axis, keepdims, t, None),
       name="norm_jvp", linear=("t",), family=_FAM,
       derivation="norm's JVP: linear in t (transpose: norm's VJP); in x and y, "
       "norm_grad_dot")
defjvp(rd.norm_jvp, None,
       lambda g, out, t, y, x, ord=None, axis=None, keepdims=False:
           norm_reduce(norm_grad_dot(np.ones_like(y), y, x, ord, axis, keepdims, None, g) * t,
                       y, x, ord, axis, keepdims),
       lambda g, out, t, y, x, ord=None, axis=None, keepdims=False:
           norm_reduce(norm_grad_dot(np.ones_like(y), y, x, ord, axis, keepdims, g, None) * t,
                       y, x, ord, axis, keepdims))
_third_dot = (lambda g, out, ct, y, x, ord=None, axis=None, keepdims=False, u=None, s=None:
              unsupported_derivative(_NORM3))
defvjp(rd.norm_grad_dot, _third_dot, _third_dot, _third_dot, None, None, None, _third_dot,
       _third_dot, name="norm_grad_dot", family=_FAM,
       derivation="norm's second derivative; a third is refused")
defjvp(rd.norm_grad_dot, _third_dot, _third_dot, _third_dot, None, None, None, _third_dot,
       _third_dot)
_third_reduce = (lambda g, out, v, y, x, ord=None, axis=None, keepdims=False:
                 unsupported_derivative(_NORM3))
defvjp(rd.norm_reduce, _third_reduce, None, None, None, None, None, name="norm_reduce",
       linear=("v",), family=_FAM,
       derivation="a sum over the norm's axes (reached by a second derivative of norm; its "
       "own transpose is needed only by a third, refused)")
# cholesky's and eigh's rules are numpy expressions over these (srcad/ops/matrix.py): linear
# maps with exact transposes, and eigh's gaps, whose derivative in w is F^2 (dw_i - dw_j)
defvjp(rd.transpose_if, lambda g, out, x, flag: transpose_if(g, flag), None,
       name="transpose_if", linear=("x",), family=_FAM,
       derivation="a transpose or nothing: its own transpose")
defvjp(rd.phi_lower, lambda g, out, x: phi_lower(g), name="phi_lower", linear=("x",),
       family=_FAM, derivation="a mask (the lower triangle, the diagonal halved): its own "
       "transpose")
defvjp(rd.symmetric_from, lambda g, out, t, UPLO="L": fold_triangle(g, UPLO), None,
       name="symmetric_from", linear=("t",), family=_FAM,
       derivation="a triangle mirrored; its transpose folds onto the triangle")
defvjp(rd.fold_triangle, lambda g, out, x, UPLO="L": symmetric_from(g, UPLO), None,
       name="fold_triangle", linear=("x",), family=_FAM,
       derivation="pairs folded onto a triangle; its transpose mirrors the triangle")
defvjp(rd.eig_gaps,
       lambda g, out, w, ct=1.0: np.sum(g * out * out, axis=-1) - np.sum(g * out * out, axis=-2),
       None, name="eig_gaps", family=_FAM,
       derivation="F_ij = 1 / (w_j - w_i): dF_ij = F_ij^2 (dw_i - dw_j); the mask by ct is "
       "piecewise constant")
defjvp(rd.eig_gaps,
       lambda g, out, w, ct=1.0: out * out * (np.expand_dims(g, -1) - np.expand_dims(g, -2)),
       None)

defvjp(ra.unasarray, lambda g, out, ct, a: asarray_like(g, a), None,
       name="unasarray", linear=("ct",), family=_FAM,
       derivation="the items' parts of an array's cotangent; its transpose stacks them")
defvjp(ra.asarray_like, lambda g, out, ct, a: unasarray(g, a), None,
       name="asarray_like", linear=("ct",), family=_FAM,
       derivation="the items' cotangents stacked; its transpose takes them apart")
defvjp(ra.concatenate_pieces, lambda g, out, ct, xs, axis=0: unconcatenate(g, xs, axis),
       None, None, name="concatenate_pieces", linear=("ct",), family=_FAM,
       derivation="a concatenation; its transpose splits")
defvjp(ra.stack_pieces, lambda g, out, ct, xs, axis=0: unstack(g, xs, axis), None, None,
       name="stack_pieces", linear=("ct",), family=_FAM,
       derivation="a stack; its transpose takes the slices")
defvjp(ra.undiff,
       lambda g, out, ct, a, n=1, axis=-1, prepend=None, append=None, part="a":
           rediff(g, a, n, axis, prepend, append, part),
       None, None, None, None, None, None,
       name="undiff", linear=("ct",), family=_FAM,
       derivation="diff's transpose (one part of it); its transpose is diff of that part")
defvjp(ra.rediff,
       lambda g, out, t, a, n=1, axis=-1, prepend=None, append=None, part="a":
           undiff(g, a, n, axis, prepend, append, part),
       None, None, None, None, None, None,
       name="rediff", linear=("t",), family=_FAM,
       derivation="diff of one part of the joined array (zeros in the others); its transpose "
       "is undiff")
defvjp(ra.unpermute, lambda g, out, ct, y, a, axis=-1: permute_like(g, y, a, axis),
       None, None, None, name="unpermute", linear=("ct",), family=_FAM,
       derivation="an inverse permutation; its transpose is the permutation")
defvjp(ra.permute_like, lambda g, out, t, y, a, axis=-1: unpermute(g, y, a, axis),
       None, None, None, name="permute_like", linear=("t",), family=_FAM,
       derivation="a permutation; its transpose is the inverse permutation")
defvjp(ra.unjoin, lambda g, out, ct, tup, how: join_pieces(g, tup, how), None, None,
       name="unjoin", linear=("ct",), family=_FAM,
       derivation="a split; its transpose joins")
defvjp(ra.join_pieces, lambda g, out, ct, tup, how: unjoin(g, tup, how), None, None,
       name="join_pieces", linear=("ct",), family=_FAM,
       derivation="a join; its transpose splits")
defvjp(ra.unselect, lambda g, out, ct, condlist, choicelist: select_pieces(g, condlist, choicelist),
       None, None, name="unselect", linear=("ct",), family=_FAM,
       derivation="masks; the transpose selects")
defvjp(ra.select_pieces, lambda g, out, ct, condlist, choicelist: unselect(g, condlist, choicelist),
       None, None, name="select_pieces", linear=("ct",), family=_FAM,
       derivation="a selection; the transpose masks")
defvjp(ra.select_default_grad,
       lambda g, out, ct, condlist, default: select_default_jvp(g, condlist, ct), None, None,
       name="select_default_grad", linear=("ct",), family=_FAM,
       derivation="a mask and a sum; its transpose masks and broadcasts")
defvjp(ra.select_default_jvp,
       lambda g, out, t, condlist, y: select_default_grad(g, condlist, t), None, None,
       name="select_default_jvp", linear=("t",), family=_FAM,
       derivation="a mask and a broadcast; its transpose masks and sums")
defvjp(ra.unappend,
       lambda g, out, ct, arr, values, axis=None, part=0:
           place_appended(g, arr, values, axis, part),
       None, None, None, None, name="unappend", linear=("ct",), family=_FAM,
       derivation="a slice; its transpose places it among zeros")
defvjp(ra.place_appended,
       lambda g, out, u, arr, values, axis=None, part=0: unappend(g, arr, values, axis, part),
       None, None, None, None, name="place_appended", linear=("u",), family=_FAM,
       derivation="a placement among zeros; its transpose slices")
defnondiff(ra.rolled_to, name="rolled_to", params=_P("ndim", "axis", start=0), family=_FAM)
defnondiff(ra.hsplit_axis, name="hsplit_axis", params=_P("ndim"), family=_FAM)
defnondiff(ra.opposite, name="opposite", params=_P("shift"), family=_FAM)
defnondiff(ra.unsupported_derivative, name="unsupported_derivative", params=_P("what"),
           family=_FAM)
# the svd row's rule is a numpy expression over these (srcad/ops/matrix.py)
defvjp(rd.diag_embed, lambda g, out, v: np.diagonal(g, 0, -2, -1), name="diag_embed",
       linear=("v",), family=_FAM, derivation="onto diagonals; its transpose reads them")
defvjp(rd.svd_gaps,
       lambda g, out, s, ct, a, full_matrices=True, hermitian=False:
           2 * s * (np.sum(g * out * out, axis=-1) - np.sum(g * out * out, axis=-2)),
       None, None, None, None, name="svd_gaps", family=_FAM,
       derivation="F_ij = 1 / (s_j^2 - s_i^2): dF_ij = F_ij^2 (2 s_i ds_i - 2 s_j ds_j); the "
       "mask by ct is piecewise constant")
defjvp(rd.svd_gaps,
       lambda g, out, s, ct, a, full_matrices=True, hermitian=False:
           out * out * (np.expand_dims(2 * s * g, -1) - np.expand_dims(2 * s * g, -2)),
       None, None, None, None)
defvjp(rd.norm_svd_weights,
       lambda g, out, ct, x, ord=None, axis=None: norm_svd_unweights(g, ct, x, ord, axis),
       None, None, None, name="norm_svd_weights", linear=("ct",), family=_FAM,
       derivation="ct on the singular values a matrix norm reads; its transpose sums them")
defvjp(rd.norm_svd_unweights,
       lambda g, out, v, ct, x, ord=None, axis=None: norm_svd_weights(g, x, ord, axis),
       None, None, None, None, name="norm_svd_unweights", linear=("v",), family=_FAM,
       derivation="norm_svd_weights' transpose; its transpose is norm_svd_weights")
defnondiff(rd.norm_uses_svd, name="norm_uses_svd", params=_P("x", "ord", "axis", ord=None, axis=None),
           family=_FAM)
defnondiff(rd.norm_matrix_axes, name="norm_matrix_axes", params=_P("x", "ord", "axis", ord=None, axis=None),
           family=_FAM)
_SVD3 = "a third derivative of np.linalg.svd(a, compute_uv=False)"
defvjp(rd.svd_s_grad,
       lambda g, out, ct, usv, hermitian=False:
           np.sum((np.swapaxes(usv[0], -1, -2) @ g) * usv[2], axis=-1),
       lambda g, out, ct, usv, hermitian=False: svd_s_grad_usv(g, ct, usv, hermitian), None,
       name="svd_s_grad", linear=("ct",), family=_FAM,
       derivation="U diag(ct) V^T: in ct, its transpose reads diag(U^T g V); in U and V^T, "
       "(g V diag(ct), 0, diag(ct) U^T g)")
defjvp(rd.svd_s_grad, None,
       lambda g, out, ct, usv, hermitian=False:
           ((g[0] * np.ones_like(usv[0])) * np.expand_dims(ct, -2)) @ usv[2]
           + (usv[0] * np.expand_dims(ct, -2)) @ (g[2] * np.ones_like(usv[2])), None)
defvjp(rd.svd_s_grad_usv,
       lambda g, out, gv, ct, usv, hermitian=False: unsupported_derivative(_SVD3),
       lambda g, out, gv, ct, usv, hermitian=False: unsupported_derivative(_SVD3),
       lambda g, out, gv, ct, usv, hermitian=False: unsupported_derivative(_SVD3), None,
       name="svd_s_grad_usv", family=_FAM,
       derivation="svd_s_grad's VJP in (U, s, V^T); a third derivative is refused")
defjvp(rd.svd_s_grad_usv,
       lambda g, out, gv, ct, usv, hermitian=False: unsupported_derivative(_SVD3),
       lambda g, out, gv, ct, usv, hermitian=False: unsupported_derivative(_SVD3),
       lambda g, out, gv, ct, usv, hermitian=False: unsupported_derivative(_SVD3), None)
_SVD2 = "the second derivative of np.linalg.svd"
defvjp(rd.svd_grad,
       lambda g, out, ct, y, a, full_matrices=True, compute_uv=True, hermitian=False:
           svd_jvp(g, y, a, full_matrices, compute_uv, hermitian),
       lambda g, out, ct, y, a, full_matrices=True, compute_uv=True, hermitian=False:
           unsupported_derivative(_SVD2),
       lambda g, out, ct, y, a, full_matrices=True, compute_uv=True, hermitian=False:
           unsupported_derivative(_SVD2),
       name="svd_grad", linear=("ct",), family=_FAM,
       derivation="svd's VJP, linear in the cotangents; its transpose is svd's JVP")
defjvp(rd.svd_grad, None,
       lambda g, out, ct, y, a, full_matrices=True, compute_uv=True, hermitian=False:
           unsupported_derivative(_SVD2),
       lambda g, out, ct, y, a, full_matrices=True, compute_uv=True, hermitian=False:
           unsupported_derivative(_SVD2))
defvjp(rd.svd_jvp,
       lambda g, out, t, y, a, full_matrices=True, compute_uv=True, hermitian=False:
           svd_grad(g, y, a, full_matrices, compute_uv, hermitian),
       lambda g, out, t, y, a, full_matrices=True, compute_uv=True, hermitian=False:
           unsupported_derivative(_SVD2),
       lambda g, out, t, y, a, full_matrices=True, compute_uv=True, hermitian=False:
           unsupported_derivative(_SVD2),
       name="svd_jvp", linear=("t",), family=_FAM,
       derivation="svd's JVP, linear in t; its transpose is svd's VJP")
defjvp(rd.svd_jvp, None,
       lambda g, out, t, y, a, full_matrices=True, compute_uv=True, hermitian=False:
           unsupported_derivative(_SVD2),
       lambda g, out, t, y, a, full_matrices=True, compute_uv=True, hermitian=False:
           unsupported_derivative(_SVD2))
