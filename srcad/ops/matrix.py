"""Matrix functions: tensordot, einsum, kron, cross, inner, norm, and np.linalg's inv, solve,
det, slogdet, cholesky, eigh, svd. Family "linalg", beside matmul, dot and outer (linalg.py).

Matrices are the last two axes (numpy's batching). Where the rule is a short numpy
expression it is written inline (inv, solve, det, slogdet), so that generated code reads as
the formula and can be differentiated again through rows that already exist; the longer
ones call helpers in srcad/runtime_linalg.py and srcad/runtime_decompositions.py. Facts
about numpy worth knowing here:

* ``np.linalg.cholesky`` and ``np.linalg.eigh`` read only one triangle of their input (the
  lower one by default), so their gradients are the derivatives of *that* function: the
  symmetric gradient folded onto the triangle read. For a symmetric input built by the user
  (``a @ a.T + eps * I``), contracting with it gives the familiar symmetric result.
* ``eigh``'s eigenvector gradient divides by eigenvalue gaps: with repeated eigenvalues the
  eigenvectors are not differentiable and the gradient is infinite or NaN. A loss of the
  eigenvalues alone is fine (the eigenvector term is skipped when no cotangent reached it).
* ``slogdet``'s sign and ``eigh``'s outputs are tuples: ``sign, logdet = np.linalg.slogdet(a)``
  indexes the result, so the rule reads the cotangent pair as ``g[0]``, ``g[1]`` (a part
  nothing flowed into is 0.0). The sign has no gradient.
* ``np.linalg.solve(a, b)`` treats a 1-D ``b`` as one vector and anything else as a stack of
  matrices (numpy 2); `as_columns` / `from_columns` view both as matrices.
"""

import string

import numpy as np

from ..runtime import (
    as_columns,
    cross_grad_a,
    cross_grad_b,
    eig_gaps,
    einsum_grad,
    einsum_grad_first,
    einsum_jvp,
    einsum_jvp_first,
    fold_triangle,
    from_columns,
    moved_axes,
    qr_kind,
    inner_grad_a,
    inner_grad_b,
    kron_grad_a,
    kron_grad_b,
    norm_grad,
    norm_jvp,
    norm_matrix_axes,
    norm_svd_weights,
    norm_uses_svd,
    phi_lower,
    svd_grad,
    svd_jvp,
    symmetric_from,
    tensordot_grad_a,
    tensordot_grad_b,
    transpose_if,
    unbroadcast,
    diag_embed,
    svd_gaps,
    svd_s_grad,
)
from .table import Case, Param, defjvp, defnondiff, defvjp

_F = "linalg"
SMALL = (-1.0, 1.0)  # entries of the matrices made well conditioned below (+ 3 I)
_I3 = "3 * np.eye(3)"

# --- contractions -----------------------------------------------------------------------------
_LABELS = string.ascii_uppercase + string.ascii_lowercase  # numpy's order for labels 0..51


def _subscript_form(args, static):
    """``np.einsum(a, [0, 1], b, [1, 2], [0, 2])`` as ``np.einsum('AB,BC->AC', a, b)``: the
    interleaved form's sublists (known before running) made a subscripts string, with the
    output numpy infers made explicit (the broadcast axes, then the labels used once in
    increasing order), so that both forms share one rule; None where the call is already in
    that form or a sublist is only known when it runs (the interleaved rules then serve)."""
    try:
        if not args or isinstance(static(args[0]), str):
            return None
    except LookupError:
        pass
    n = len(args)
    try:
        subs = [list(static(args[i])) for i in range(1, n, 2)]
        out = list(static(args[-1])) if n % 2 else None
        ints = [s for sub in subs + [out or []] for s in sub if s is not Ellipsis]
        if not all(isinstance(s, (int, np.integer)) and 0 <= s < len(_LABELS) for s in ints):
            return None
    except (LookupError, TypeError):
        return None
    if out is None:
        used = [s for sub in subs for s in sub if s is not Ellipsis]
        out = ([Ellipsis] if any(Ellipsis in sub for sub in subs) else []) + sorted(
            s for s in set(used) if used.count(s) == 1)

    def letters(sub):
        return "".join("..." if s is Ellipsis else _LABELS[int(s)] for s in sub)

    spec = ",".join(letters(sub) for sub in subs) + "->" + letters(out)
    return [("const", spec)] + [("arg", i) for i in range(0, n - n % 2, 2)]


defvjp(np.tensordot,
       lambda g, out, a, b, axes=2: tensordot_grad_a(g, a, b, axes),
       lambda g, out, a, b, axes=2: tensordot_grad_b(g, a, b, axes),
       name="tensordot", linear=("a", "b"), family=_F,
       derivation="out = sum over the contracted axes of a b: da = g contracted with b over "
       "b's free axes (a's axes put back in order), db likewise",
       test_cases=(("np.tensordot(a, b)", [(2, 3, 4), (3, 4, 5)]),
                   ("np.tensordot(a, b, 1)", [(3, 4), (4, 5)]),
                   ("np.tensordot(a, b, axes=0)", [(2,), (3,)]),
                   ("np.tensordot(a, b, axes=([1, 0], [0, 2]))", [(3, 2, 4), (2, 5, 3)]),
                   ("np.tensordot(a, b, axes=(1, 0))", [(2, 3), (3, 4)]),
                   ("np.tensordot(a, b, axes=([-1], [0]))", [(2, 3), (3, 2)]),
                   ("np.tensordot(a, b, axes=((0, 1), (1, 2)))", [(2, 3), (1, 2, 3)]),
                   ("np.tensordot(a, a, 2)", [(3, 3)])))
defvjp(np.einsum,
       lambda g, out, subscripts, operands, optimize=False:
           einsum_grad_first(g, subscripts, operands),
       lambda g, out, subscripts, operands, optimize=False: einsum_grad(g, subscripts, operands),
       params=(Param("subscripts"), Param("operands", star=True), Param("optimize", False)),
       spelling="np.einsum(subscripts, *operands, optimize)",
       name="einsum", family=_F, canonical=_subscript_form,
       derivation="linear in each operand: operand i's gradient is an einsum of g with the "
       "others onto i's labels, broadcast over labels only i has and placed on its diagonals "
       "where i repeats a label (ellipsis, implicit output and the interleaved (operand, "
       "sublist, ...) form made explicit first; there, `subscripts` is the first operand)",
       test_cases=(("np.einsum('ij,jk->ik', a, b)", [(2, 3), (3, 4)]),
                   ("np.einsum('ij->ji', a)", [(3, 4)]),
                   ("np.einsum('ii->', a)", [(3, 3)]), ("np.einsum('ii->i', a)", [(3, 3)]),
                   ("np.einsum('i,i', a, b)", [(3,), (3,)]),
                   ("np.einsum('ij,jk', a, b)", [(2, 3), (3, 4)]),
                   ("np.einsum('...ij,...jk->...ik', a, b)", [(2, 2, 3), (2, 3, 4)]),
                   ("np.einsum('...ij,jk', a, b)", [(2, 2, 3), (3, 4)]),
                   ("np.einsum('ijk,lji,lli->lki', a, b, c)", [(3, 4, 4), (4, 4, 3), (4, 4, 3)]),
                   ("np.einsum('i,j->ij', a, b)", [(3,), (2,)]),
                   ("np.einsum('ij->', a)", [(3, 4)]), ("np.einsum('ij->j', a)", [(3, 4)]),
                   ("np.einsum('bij,bjk->bik', a, b)", [(2, 2, 3), (2, 3, 2)]),
                   ("np.einsum('...,...->...', a, b)", [(3, 4, 4), (3, 4, 4)]),
                   ("np.einsum('...i,...i->...', a, b)", [(2, 3), (1, 3)]),
                   ("np.einsum('ij,ij->ij', a, a)", [(2, 3)]),
                   ("np.einsum('Ab,bC->AC', a, b)", [(2, 3), (3, 2)]),
                   ("np.einsum('iij->j', a)", [(3, 3, 2)]),
                   ("np.einsum('ij,k->i', a, b)", [(2, 3), (4,)]),
                   ("np.einsum('ij,jk->ik', a, b, optimize=True)", [(2, 3), (3, 4)]),
                   ("np.einsum('ij,jk->ik', a, np.eye(3))", [(2, 3)]),
                   ("np.einsum(a, [0, 1], b, [1, 2], [0, 2])", [(2, 3), (3, 4)]),
                   ("np.einsum(a, [0, 1], [1, 0])", [(3, 4)]),
                   ("np.einsum(a, [Ellipsis, 0, 1], b, [Ellipsis, 1, 2])", [(2, 2, 3), (3, 4)]),
                   ("np.einsum(a, [0, 1, 2], b, [3, 1, 0], c, [3, 3, 0], [3, 2, 0])",
                    [(3, 4, 4), (4, 4, 3), (4, 4, 3)]),
                   # implicit output in numpy's label order (30 after 2; on square operands
                   # the letters a..zA..Z once gave the transposed gradient, silently)
                   ("np.einsum(a, [30, 1], b, [1, 2])", [(3, 3), (3, 3)]),
                   ("np.einsum(a, [Ellipsis, 1], b, [1])", [(2, 3), (3,)])))
defjvp(np.einsum,
       lambda g, out, subscripts, operands, optimize=False:
           einsum_jvp_first(g, subscripts, operands),
       lambda g, out, subscripts, operands, optimize=False: einsum_jvp(g, subscripts, operands))
defvjp(np.kron,
       lambda g, out, a, b: kron_grad_a(g, a, b), lambda g, out, a, b: kron_grad_b(g, a, b),
       name="kron", linear=("a", "b"), family=_F,
       derivation="out[i q + k] = a[i] b[k] along each axis: da[i] = sum_k g[i q + k] b[k], "
       "db[k] = sum_i g[i q + k] a[i]",
       test_cases=(("np.kron(a, b)", [(2, 3), (3, 2)]), ("np.kron(a, b)", [(3,), (2,)]),
                   ("np.kron(a, b)", [(2,), (2, 3)]), ("np.kron(a, b)", [(), (3,)]),
                   ("np.kron(a, b)", [(2, 2, 2), (1, 2, 3)])))
defvjp(np.cross,
       lambda g, out, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None:
           unbroadcast(cross_grad_a(g, a, b, axisa, axisb, axisc, axis), a),
       lambda g, out, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None:
           unbroadcast(cross_grad_b(g, a, b, axisa, axisb, axisc, axis), b),
       name="cross", linear=("a", "b"), family=_F,
       derivation="g . (a x b) = a . (b x g) = b . (g x a): da = b x g, db = g x a (3-vectors; "
       "a 2-component vector read with z = 0, as numpy reads it; batch axes summed back "
       "where they broadcast)",
       test_cases=(("np.cross(a, b)", [(3,), (3,)]), ("np.cross(a, b)", [(4, 3), (4, 3)]),
                   ("np.cross(a, b)", [(4, 3), (3,)]), ("np.cross(a, b)", [(2, 4, 3), (4, 3)]),
                   ("np.cross(a, b, axis=0)", [(3, 4), (3, 4)]),
                   ("np.cross(a, b, axisa=0, axisb=1)", [(3, 2), (2, 3)]),
                   ("np.cross(a, b, axisa=0, axisc=0)", [(3, 2), (2, 3)]),
                   ("np.cross(a, a * b)", [(3,), (3,)]),
                   ("np.cross(a, b)", [(2, 2), (2, 2)]), ("np.cross(a, b)", [(4, 2), (3,)]),
                   ("np.cross(a, b)", [(3,), (4, 2)]),
                   ("np.cross(a, b, axis=1)", [(2, 2, 3), (2, 2, 3)]),
                   ("np.cross(a, b, axisa=0, axisb=1)", [(3, 2), (4, 3, 2)])))

# --- norms ------------------------------------------------------------------------------------
_NORM_CASES = (
    ("np.linalg.norm(a)", [(3, 4)]), ("np.linalg.norm(a)", [(5,)]),
    ("np.linalg.norm(a)", [(2, 3, 4)]), ("np.linalg.norm(a, 2)", [(5,)]),
    ("np.linalg.norm(a, 1)", [(5,)]), ("np.linalg.norm(a, np.inf)", [(5,)]),
    ("np.linalg.norm(a, -np.inf)", [(5,)]), ("np.linalg.norm(a, 3)", [(4,)]),
    ("np.linalg.norm(a, ord=1.5)", [(4,)]), ("np.linalg.norm(a, 'fro')", [(3, 4)]),
    ("np.linalg.norm(a, 'nuc')", [(3, 4)]), ("np.linalg.norm(a, 2)", [(3, 4)]),
    ("np.linalg.norm(a, -2)", [(4, 3)]), ("np.linalg.norm(a, 1)", [(3, 4)]),
    ("np.linalg.norm(a, -1)", [(3, 4)]), ("np.linalg.norm(a, np.inf)", [(3, 4)]),
    ("np.linalg.norm(a, -np.inf)", [(3, 4)]), ("np.linalg.norm(a, axis=1)", [(3, 4)]),
    ("np.linalg.norm(a, axis=0, keepdims=True)", [(3, 4)]),
    ("np.linalg.norm(a, axis=(1, 2))", [(2, 3, 4)]),
    ("np.linalg.norm(a, 'fro', axis=(0, 2))", [(2, 3, 4)]),
    ("np.linalg.norm(a, 'nuc', axis=(2, 0))", [(3, 2, 4)]),
    ("np.linalg.norm(a, 2, axis=(-2, -1), keepdims=True)", [(2, 3, 4)]),
    ("np.linalg.norm(a, np.inf, axis=-1)", [(3, 4)]),
    ("np.linalg.norm(a, 1, axis=(1, 0))", [(3, 4)]),
    ("np.linalg.norm(a, keepdims=True)", [(3, 4)]),
    ("np.linalg.norm(a, axis=(0,))", [(3, 4)]),
    ("np.linalg.norm(a - a)", [(3,)]),  # 0 at 0 (a subgradient), not NaN
)
defvjp(np.linalg.norm,
       lambda g, out, x, ord=None, axis=None, keepdims=False:
           # ('nuc', 2, -2 on matrices: through the SVD, so that it differentiates again)
           np.moveaxis(svd_s_grad(
               norm_svd_weights(g, x, ord, axis),
               np.linalg.svd(np.moveaxis(x, norm_matrix_axes(x, ord, axis), (-2, -1)),
                             full_matrices=False)), (-2, -1), norm_matrix_axes(x, ord, axis))
           if norm_uses_svd(x, ord, axis) else norm_grad(g, out, x, ord, axis, keepdims),
       name="norm", family=_F, test_cases=_NORM_CASES,
       derivation="2-norm and 'fro': x / out (0 where out = 0); vector p-norm: sign(x) |x|^(p-1) "
       "/ out^(p-1); inf/-inf and the matrix 1/-1/inf/-inf norms: sign(x) on the extreme "
       "entries, rows or columns (ties split); 'nuc': U V^T; matrix 2/-2: u v^T of the "
       "largest/smallest singular value (assumed distinct)")
defjvp(np.linalg.norm,
       lambda g, out, x, ord=None, axis=None, keepdims=False:
           norm_jvp(g, out, x, ord, axis, keepdims))

# --- inverses, determinants, solves -----------------------------------------------------------
defvjp(np.linalg.inv,
       lambda g, out, a: -np.swapaxes(out, -1, -2) @ g @ np.swapaxes(out, -1, -2),
       name="inv", family=_F, domain=SMALL,
       derivation="d(A^-1) = -A^-1 dA A^-1, so dA = -A^-T G A^-T (batched)",
       test_cases=((f"np.linalg.inv(a + {_I3})", [(3, 3)]),
                   (f"np.linalg.inv(a + {_I3})", [(2, 3, 3)]),
                   ("np.linalg.inv(a @ a.T + np.eye(4))", [(4, 2)])))
defjvp(np.linalg.inv, lambda g, out, a: -out @ g @ out)
defvjp(np.linalg.solve,
       lambda g, out, a, b: -unbroadcast(
           np.linalg.solve(np.swapaxes(a, -1, -2), as_columns(g, b))
           @ np.swapaxes(as_columns(out, b), -1, -2), a),
       lambda g, out, a, b: unbroadcast(
           from_columns(np.linalg.solve(np.swapaxes(a, -1, -2), as_columns(g, b)), b), b),
       name="solve", linear=("b",), family=_F, domain=SMALL,
       derivation="x = A^-1 b: db = A^-T g, dA = -db x^T (b 1-D is one vector, else columns)",
       test_cases=((f"np.linalg.solve(a + {_I3}, b)", [(3, 3), (3,)]),
                   (f"np.linalg.solve(a + {_I3}, b)", [(3, 3), (3, 2)]),
                   (f"np.linalg.solve(a + {_I3}, b)", [(2, 3, 3), (2, 3, 1)]),
                   (f"np.linalg.solve(a + {_I3}, b)", [(2, 3, 3), (3,)]),
                   (f"np.linalg.solve(a + {_I3}, b)", [(3, 3), (2, 3, 2)])))
defjvp(np.linalg.solve,
       lambda g, out, a, b: -from_columns(np.linalg.solve(a, g @ as_columns(out, b)), b))
defvjp(np.linalg.det,
       lambda g, out, a: np.expand_dims(g * out, (-2, -1))
       * np.swapaxes(np.linalg.inv(a), -1, -2),
       name="det", family=_F, domain=SMALL,
       derivation="d det A = det A tr(A^-1 dA), so dA = g det A A^-T (A invertible)",
       test_cases=((f"np.linalg.det(a + {_I3})", [(3, 3)]),
                   (f"np.linalg.det(a + {_I3})", [(2, 3, 3)]),
                   ("np.linalg.det(a + 2 * np.eye(2))", [(2, 2)]),
                   ("np.linalg.det(a + 1.5)", [(1, 1)])))
defjvp(np.linalg.det,
       lambda g, out, a: out * np.trace(np.linalg.solve(a, g), axis1=-2, axis2=-1))
defvjp(np.linalg.slogdet,
       lambda g, out, a: np.expand_dims(g[1], (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2),
       name="slogdet", family=_F, domain=SMALL,
       derivation="(sign, log|det A|): d log|det A| = tr(A^-1 dA), so dA = g[1] A^-T; the sign "
       "is piecewise constant (no gradient)",
       test_cases=((f"np.linalg.slogdet(a + {_I3})[1]", [(3, 3)]),
                   (f"np.linalg.slogdet(a - {_I3})[1]", [(3, 3)]),
                   (f"np.linalg.slogdet(a + {_I3})[1]", [(2, 3, 3)]),
                   (f"np.linalg.slogdet(a - {_I3})[0] * np.linalg.slogdet(a - {_I3})[1]",
                    [(3, 3)])))
defjvp(np.linalg.slogdet,
       lambda g, out, a: (np.zeros_like(out[0]),
                          np.trace(np.linalg.solve(a, g), axis1=-2, axis2=-1)))

# --- decompositions ---------------------------------------------------------------------------
defvjp(np.linalg.cholesky,
       lambda g, out, a, upper=False: transpose_if(fold_triangle(np.swapaxes(np.linalg.solve(
           np.swapaxes(transpose_if(out, upper), -1, -2),
           np.swapaxes(np.linalg.solve(
               np.swapaxes(transpose_if(out, upper), -1, -2),
               phi_lower(np.swapaxes(transpose_if(out, upper), -1, -2) @ transpose_if(g, upper))),
               -1, -2)), -1, -2)), upper),
       name="cholesky", family=_F, domain=SMALL,
       derivation="Murray (2016): S = L^-T phi(L^T G) L^-1 (phi: lower triangle, half "
       "diagonal); numpy reads a's lower triangle only, so dA = S + S^T below the diagonal, S on "
       "it, 0 above (upper=True: the mirror image); written with solves, so it differentiates "
       "again",
       test_cases=((f"np.linalg.cholesky(a @ a.T + {_I3})", [(3, 3)]),
                   (f"np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + {_I3})", [(2, 3, 3)]),
                   (f"np.linalg.cholesky(a + {_I3})", [(3, 3)]),
                   (f"np.linalg.cholesky(a + {_I3}, upper=True)", [(3, 3)]),
                   (f"np.linalg.cholesky(a @ a.T + {_I3}, upper=True)", [(3, 3)])))
defjvp(np.linalg.cholesky,
       lambda g, out, a, upper=False: transpose_if(transpose_if(out, upper) @ phi_lower(
           np.swapaxes(np.linalg.solve(transpose_if(out, upper), np.swapaxes(np.linalg.solve(
               transpose_if(out, upper), symmetric_from(transpose_if(g, upper))), -1, -2)),
               -1, -2)), upper))
defvjp(np.linalg.eigh,
       lambda g, out, a, UPLO="L": fold_triangle(
           (out[1] * np.expand_dims(g[0] * np.ones_like(out[0]), -2))
           @ np.swapaxes(out[1], -1, -2)
           + out[1] @ (eig_gaps(out[0], g[1]) * (np.swapaxes(out[1], -1, -2)
                                                 @ (g[1] * np.ones_like(out[1]))))
           @ np.swapaxes(out[1], -1, -2), UPLO),
       name="eigh", family=_F,
       derivation="A = V diag(w) V^T: dA = V (diag(g_w) + F * (V^T g_V)) V^T with F_ij = "
       "1 / (w_j - w_i) off the diagonal (repeated eigenvalues: the eigenvectors are not "
       "differentiable, the gradient is inf/NaN; F is 0 where no eigenvector cotangent "
       "came), folded onto the triangle numpy reads",
       test_cases=(("np.linalg.eigh(a + a.T)[0]", [(3, 3)]),
                   ("np.linalg.eigh(a + a.T)[1] ** 2", [(3, 3)]),
                   ("np.linalg.eigh(a)[0]", [(3, 3)]), ("np.linalg.eigh(a)[1] ** 2", [(3, 3)]),
                   ("np.linalg.eigh(a, UPLO='U')[0]", [(4, 4)]),
                   ("np.linalg.eigh(a, 'U')[1] ** 2", [(3, 3)]),
                   ("np.linalg.eigh(a + np.swapaxes(a, -1, -2))[0]", [(2, 3, 3)]),
                   ("np.linalg.eigh(a)[0] * np.linalg.eigh(a)[1][0] ** 2", [(3, 3)])))
defjvp(np.linalg.eigh,
       lambda g, out, a, UPLO="L": (
           np.diagonal(np.swapaxes(out[1], -1, -2) @ symmetric_from(g, UPLO) @ out[1],
                       axis1=-2, axis2=-1),
           out[1] @ (eig_gaps(out[0]) * (np.swapaxes(out[1], -1, -2) @ symmetric_from(g, UPLO)
                                         @ out[1]))))

# --- inner, svd -------------------------------------------------------------------------------
defvjp(np.inner, lambda g, out, a, b: inner_grad_a(g, a, b),
       lambda g, out, a, b: inner_grad_b(g, a, b),
       name="inner", linear=("a", "b"), family=_F,
       derivation="a tensordot over the last axes (a product when either is 0-d)",
       test_cases=(("np.inner(a, b)", [(3,), (3,)]), ("np.inner(a, b)", [(2, 3), (4, 3)]),
                   ("np.inner(a, b)", [(), (3,)]), ("np.inner(a, b)", [(2, 3), ()]),
                   ("np.inner(a, b)", [(2, 2, 3), (3,)])))
_SVD = "np.linalg.svd(a, full_matrices=False)"
defvjp(np.linalg.svd,
       lambda g, out, a, full_matrices=True, compute_uv=True, hermitian=False: (
           # (U, s, V^T) = out: U (diag(g_s) + J S + S K) V^T, J and K from the gaps
           out[0] @ (diag_embed(g[1] * np.ones_like(out[1]))
                     + svd_gaps(out[1], g[0], a, full_matrices, hermitian)
                     * (np.swapaxes(out[0], -1, -2) @ (g[0] * np.ones_like(out[0]))
                        - np.swapaxes(np.swapaxes(out[0], -1, -2)
                                      @ (g[0] * np.ones_like(out[0])), -1, -2))
                     * np.expand_dims(out[1], -2)
                     + np.expand_dims(out[1], -1)
                     * svd_gaps(out[1], g[2], a, full_matrices, hermitian)
                     * (out[2] @ np.swapaxes(g[2] * np.ones_like(out[2]), -1, -2)
                        - np.swapaxes(out[2] @ np.swapaxes(g[2] * np.ones_like(out[2]), -1, -2),
                                      -1, -2))) @ out[2]
           # a tall matrix: g_U outside U's span; a wide one: g_V outside V's
           + ((g[0] - out[0] @ (np.swapaxes(out[0], -1, -2) @ g[0]))
              @ (out[2] / np.expand_dims(out[1], -1))
              if np.shape(a)[-2] > np.shape(a)[-1] and np.any(g[0]) else 0.0)
           + ((out[0] / np.expand_dims(out[1], -2))
              @ (g[2] - (g[2] @ np.swapaxes(out[2], -1, -2)) @ out[2])
              if np.shape(a)[-2] < np.shape(a)[-1] and np.any(g[2]) else 0.0))
       if compute_uv else svd_s_grad(g, np.linalg.svd(a, full_matrices=False), hermitian),
       name="svd", family=_F,
       derivation="Townsend (2016): dA = U (J S + diag(g_S) + S K) V^T plus the parts of g_U, g_V "
       "outside the spans of U, V, with J, K the antisymmetric parts of U^T g_U, V^T g_V over "
       "F_ij = 1 / (s_j^2 - s_i^2) (distinct nonzero singular values; full_matrices=True only "
       "for square matrices, where the vectors are unique up to sign); compute_uv=False: "
       "U diag(g) V^T from the reduced SVD; written in matmuls, so it differentiates again",
       test_cases=(("np.linalg.svd(a, compute_uv=False)", [(3, 4)]),
                   ("np.linalg.svd(a, compute_uv=False)", [(4, 3)]),
                   ("np.linalg.svd(a, compute_uv=False)", [(2, 3, 4)]),
                   ("np.linalg.svd(a)[1]", [(3, 3)]),
                   ("np.linalg.svd(a)[0] @ np.linalg.svd(a)[2]", [(3, 3)]),
                   (f"{_SVD}[0] ** 2", [(4, 3)]), (f"{_SVD}[2] ** 2", [(3, 4)]),
                   # two singular values 1% apart: central differences carry 1e-5 of
                   # truncation error at h = 1e-4 (1e-7 at 1e-5); the rule is exact
                   Case(f"{_SVD}[0] ** 2", ((3, 4),), None, False, {"float64": 1e-4}),
                   (f"{_SVD}[2] ** 2", [(4, 3)]),
                   (f"{_SVD}[1]", [(2, 4, 3)]), (f"{_SVD}[0]", [(4, 3)]),
                   (f"{_SVD}[2] * {_SVD}[1][:, None]", [(3, 4)])))
defjvp(np.linalg.svd,
       lambda g, out, a, full_matrices=True, compute_uv=True, hermitian=False:
           svd_jvp(g, out, a, full_matrices, compute_uv, hermitian))

# --- qr, tensorsolve --------------------------------------------------------------------------
# (Q, R) = out, the reduced QR of a tall or square matrix; g[0], g[1] their cotangents
_QR = ("A = Q R (m >= n): M = R gR^T - gQ^T Q, dA = (gQ + Q copyltu(M)) R^-T with copyltu "
       "the lower triangle mirrored (the standard QR VJP; Walter and Lehmann 2018); mode 'r': "
       "gQ = 0; a wide matrix and 'complete' Q of a tall one are refused. JVP: X = dA R^-1, "
       "C = Q^T X, W = tril(C, -1) - tril(C, -1)^T: dQ = Q (W - C) + X, dR = (C - W) R")
defvjp(np.linalg.qr,
       lambda g, out, a, mode="reduced": np.swapaxes(np.linalg.solve(out[1], np.swapaxes(
           g[0] * np.ones_like(out[0]) + out[0] @ symmetric_from(
               out[1] @ np.swapaxes(g[1] * np.ones_like(out[1]), -1, -2)
               - np.swapaxes(g[0] * np.ones_like(out[0]), -1, -2) @ out[0]), -1, -2)), -1, -2)
       if qr_kind(a, mode) == "qr" else
       np.swapaxes(np.linalg.solve(out, np.swapaxes(np.linalg.qr(a)[0] @ symmetric_from(
           out @ np.swapaxes(g, -1, -2)), -1, -2)), -1, -2),
       None, name="qr", family=_F, derivation=_QR,
       test_cases=(("np.linalg.qr(a)[0]", [(4, 3)]), ("np.linalg.qr(a)[1]", [(4, 3)]),
                   ("np.linalg.qr(a)[0] * np.linalg.qr(a)[1][0]", [(3, 3)]),
                   ("np.linalg.qr(a)[1] ** 2", [(2, 4, 2)]),
                   ("np.linalg.qr(a, mode='r') ** 2", [(4, 3)]),
                   ("np.linalg.qr(a, 'complete')[0]", [(3, 3)])))
defjvp(np.linalg.qr,
       lambda g, out, a, mode="reduced": (
           out[0] @ (np.tril(np.swapaxes(out[0], -1, -2) @ np.swapaxes(np.linalg.solve(
               np.swapaxes(out[1], -1, -2), np.swapaxes(g, -1, -2)), -1, -2), -1)
                     - np.swapaxes(np.tril(np.swapaxes(out[0], -1, -2) @ np.swapaxes(
                         np.linalg.solve(np.swapaxes(out[1], -1, -2), np.swapaxes(g, -1, -2)),
                         -1, -2), -1), -1, -2)
                     - np.swapaxes(out[0], -1, -2) @ np.swapaxes(np.linalg.solve(
                         np.swapaxes(out[1], -1, -2), np.swapaxes(g, -1, -2)), -1, -2))
           + np.swapaxes(np.linalg.solve(np.swapaxes(out[1], -1, -2), np.swapaxes(g, -1, -2)),
                         -1, -2),
           (np.swapaxes(out[0], -1, -2) @ np.swapaxes(np.linalg.solve(
               np.swapaxes(out[1], -1, -2), np.swapaxes(g, -1, -2)), -1, -2)
            - np.tril(np.swapaxes(out[0], -1, -2) @ np.swapaxes(np.linalg.solve(
                np.swapaxes(out[1], -1, -2), np.swapaxes(g, -1, -2)), -1, -2), -1)
            + np.swapaxes(np.tril(np.swapaxes(out[0], -1, -2) @ np.swapaxes(np.linalg.solve(
                np.swapaxes(out[1], -1, -2), np.swapaxes(g, -1, -2)), -1, -2), -1), -1, -2))
           @ out[1])
       if qr_kind(a, mode) == "qr" else
       (np.swapaxes(np.linalg.qr(a)[0], -1, -2) @ np.swapaxes(np.linalg.solve(
           np.swapaxes(out, -1, -2), np.swapaxes(g, -1, -2)), -1, -2)
        - np.tril(np.swapaxes(np.linalg.qr(a)[0], -1, -2) @ np.swapaxes(np.linalg.solve(
            np.swapaxes(out, -1, -2), np.swapaxes(g, -1, -2)), -1, -2), -1)
        + np.swapaxes(np.tril(np.swapaxes(np.linalg.qr(a)[0], -1, -2) @ np.swapaxes(
            np.linalg.solve(np.swapaxes(out, -1, -2), np.swapaxes(g, -1, -2)), -1, -2), -1),
            -1, -2)) @ out,
       None)

# (A: a with the `axes` moved last, as an N x N matrix; x = out flattened)
_TSOLVE = ("x = A^-1 b with A = a (axes moved last) as an N x N matrix: db = A^-T g, "
           "da = -db x^T, each reshaped back (solve's rule)")
defvjp(np.linalg.tensorsolve,
       lambda g, out, a, b, axes=None: np.moveaxis(np.reshape(-np.outer(np.linalg.solve(
           np.reshape(np.moveaxis(a, moved_axes(np.ndim(a), axes)[0],
                                  moved_axes(np.ndim(a), axes)[1]), (np.size(b), -1)).T,
           np.ravel(g)), np.ravel(out)), np.shape(np.moveaxis(
               a, moved_axes(np.ndim(a), axes)[0], moved_axes(np.ndim(a), axes)[1]))),
           moved_axes(np.ndim(a), axes)[1], moved_axes(np.ndim(a), axes)[0]),
       lambda g, out, a, b, axes=None: np.reshape(np.linalg.solve(
           np.reshape(np.moveaxis(a, moved_axes(np.ndim(a), axes)[0],
                                  moved_axes(np.ndim(a), axes)[1]), (np.size(b), -1)).T,
           np.ravel(g)), np.shape(b)),
       None, name="tensorsolve", family=_F, domain=SMALL, derivation=_TSOLVE,
       test_cases=(("np.linalg.tensorsolve(a + 3 * np.eye(6).reshape(2, 3, 6), b)",
                    [(2, 3, 6), (2, 3)]),
                   ("np.linalg.tensorsolve(a + 3 * np.eye(4).reshape(4, 2, 2), b)",
                    [(4, 2, 2), (4,)]),
                   ("np.linalg.tensorsolve(a + 3 * np.eye(6).reshape(6, 2, 3)"
                    ".transpose(1, 0, 2), b, axes=(1,))", [(2, 6, 3), (2, 3)])))
defjvp(np.linalg.tensorsolve,
       lambda g, out, a, b, axes=None: np.reshape(-np.linalg.solve(
           np.reshape(np.moveaxis(a, moved_axes(np.ndim(a), axes)[0],
                                  moved_axes(np.ndim(a), axes)[1]), (np.size(b), -1)),
           np.reshape(np.moveaxis(g, moved_axes(np.ndim(a), axes)[0],
                                  moved_axes(np.ndim(a), axes)[1]), (np.size(b), -1))
           @ np.ravel(out)), np.shape(out)),
       lambda g, out, a, b, axes=None: np.reshape(np.linalg.solve(
           np.reshape(np.moveaxis(a, moved_axes(np.ndim(a), axes)[0],
                                  moved_axes(np.ndim(a), axes)[1]), (np.size(b), -1)),
           np.ravel(g)), np.shape(out)), None)
defnondiff(qr_kind, name="qr_kind", family="runtime",
           params=(Param("a"), Param("mode", "reduced")))
defnondiff(moved_axes, name="moved_axes", family="runtime",
           params=(Param("ndim"), Param("axes", None)))
