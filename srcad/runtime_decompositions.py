"""Runtime helpers for np.linalg.norm and the decompositions of the table
(srcad/ops/matrix.py): cholesky, eigh and svd. Their rules are numpy expressions (solves,
matmuls) over the small helpers here -- linear maps with exact transposes (`transpose_if`,
`phi_lower`, `symmetric_from` / `fold_triangle`, `diag_embed`, the norm's singular-value
weights) and the gaps between eigenvalues or squared singular values (`eig_gaps`,
`svd_gaps`), whose own derivatives their rows (srcad/ops/helper_rows.py) say -- so generated
code calling them differentiates again. `svd_jvp` / `svd_grad` and the norm's maps are
backward/tangent pairs, linear in their first argument and each other's transposes.

numpy's cholesky and eigh read one triangle of their input, so their gradients are folded
onto that triangle; eigenvector and singular-vector gradients divide by gaps between
eigenvalues (squared singular values) and are infinite or NaN where those repeat. Formulas:
M. Giles (2008); I. Murray, "Differentiation of the Cholesky decomposition" (2016);
J. Townsend, "Differentiating the singular value decomposition" (2016).

>>> fold_triangle(np.array([[1.0, 2.0], [3.0, 4.0]])).tolist()  # numpy reads the lower one
[[1.0, 0.0], [5.0, 4.0]]
"""

from __future__ import annotations

import numpy as np

from .errors import SrcadError
from .runtime_linalg import _T, _float_dtype, _like, _tree

__all__ = [
    "moved_axes", "qr_kind",
    "eig_gaps",
    "fold_triangle",
    "phi_lower",
    "symmetric_from",
    "transpose_if",
    "norm_grad",
    "norm_grad_dot",
    "norm_jvp",
    "norm_reduce",
    "norm_matrix_axes",
    "norm_svd_unweights",
    "norm_svd_weights",
    "norm_uses_svd",
    "diag_embed",
    "svd_gaps",
    "svd_grad",
    "svd_jvp",
    "svd_s_grad",
    "svd_s_grad_usv",
]


# --- norm -----------------------------------------------------------------------------------


def _norm_kind(x, ord, axis):
    """("flat" | "vector" | "matrix", the reduced axes), as np.linalg.norm decides."""
    nd = np.ndim(x)
    if axis is None:
        if ord is None:
            return "flat", tuple(range(nd))
        return ("vector", (0,)) if nd == 1 else ("matrix", (0, 1))
    if np.ndim(axis) == 0:
        return "vector", (int(axis) % nd,)
    axes = tuple(int(a) % nd for a in axis)
    return ("vector", axes) if len(axes) == 1 else ("matrix", axes)


def _expand(v, nd, axes, keepdims):
    """A norm's output (or cotangent) with the reduced axes back as size 1."""
    v = np.asarray(v)
    if keepdims:
        return v
    return np.reshape(v, tuple(1 if i in axes else n for i, n in enumerate(
        _shape_with(v, nd, axes))))


def _shape_with(v, nd, axes):
    it = iter(np.shape(v))
    return tuple(1 if i in axes else next(it) for i in range(nd))


def _ties(mask, axes):
    count = np.sum(mask, axis=axes, keepdims=True)
    return mask / count


def _svd_direction(x, axes, which):
    """U V^T (``which=None``: the nuclear norm's gradient) or u_k v_k^T for one singular
    value (0: the largest, -1: the smallest), with the matrix axes where x has them."""
    xm = np.moveaxis(x, axes, (-2, -1))
    u, _, vt = np.linalg.svd(xm, full_matrices=False)
    if which is None:
        d = u @ vt
    else:
        k = which % u.shape[-1]
        d = u[..., :, k:k + 1] @ vt[..., k:k + 1, :]
    return np.moveaxis(d, (-2, -1), axes)


def _norm_direction(y, x, ord, axis, keepdims):
    """d norm / dx, shaped like x (the cotangent 1 on every norm)."""
    x = np.asarray(x)
    nd = x.ndim
    kind, axes = _norm_kind(x, ord, axis)
    yb = _expand(y, nd, axes, keepdims)
    ax = np.abs(x)
    if kind == "flat" or (kind == "vector" and ord in (None, 2)) or (
            kind == "matrix" and ord in (None, "fro", "f")):
        return x / np.where(yb == 0, 1, yb)  # 0 at 0 (x is 0 there), as torch
    if kind == "vector":
        if ord == np.inf or ord == -np.inf:
            return np.sign(x) * _ties(ax == yb, axes)
        if ord == 0:
            return np.zeros_like(x)
        if ord == 1:
            return np.sign(x)
        return np.sign(x) * ax ** (ord - 1) / yb ** (ord - 1)
    r, c = axes
    if ord == "nuc":
        return _svd_direction(x, axes, None)
    if ord in (2, -2):
        return _svd_direction(x, axes, 0 if ord == 2 else -1)
    if ord in (1, -1):  # the largest (smallest) column sum of |x|
        sums = np.sum(ax, axis=r, keepdims=True)
        return np.sign(x) * _ties(sums == yb, (c,))
    if ord == np.inf or ord == -np.inf:  # rows
        sums = np.sum(ax, axis=c, keepdims=True)
        return np.sign(x) * _ties(sums == yb, (r,))
    raise SrcadError(f"np.linalg.norm with ord={ord!r} on matrices has no gradient rule")


def _norm_curvature(y, x, ord, axis, keepdims):
    """(c, e) with dD = c * dx + e * dy (dy broadcast over the reduced axes), D =
    `_norm_direction`: the second derivative of the 2-norms and vector p-norms; zeros where D
    is piecewise constant (1, inf and the matrix 1/inf norms). The SVD-based matrix norms
    ('nuc', 2, -2) are refused."""
    x = np.asarray(x)
    kind, axes = _norm_kind(x, ord, axis)
    yb = _expand(y, x.ndim, axes, keepdims)
    if kind == "flat" or (kind == "vector" and ord in (None, 2)) or (
            kind == "matrix" and ord in (None, "fro", "f")):
        safe = np.where(yb == 0, 1, yb)
        return 1 / safe, -x / (safe * safe)
    if kind == "vector" and ord not in (np.inf, -np.inf, 0, 1):
        d = np.sign(x) * np.abs(x) ** (ord - 1) / yb ** (ord - 1)
        return (ord - 1) * np.abs(x) ** (ord - 2) / yb ** (ord - 1), -(ord - 1) * d / yb
    if kind == "matrix" and ord in ("nuc", 2, -2):
        raise SrcadError(f"srcad has no derivative rule for the second derivative of "
                         f"np.linalg.norm with ord={ord!r} on matrices (an SVD)",
                         hint="first derivatives are supported; for a second one, register "
                         "your own rule with srcad.defvjp / srcad.defjvp")
    return np.zeros_like(x), np.zeros_like(x)


def norm_grad_dot(ct, y, x, ord=None, axis=None, keepdims=False, u=None, s=None):
    """`norm_grad` differentiated along x's tangent `u` and y's tangent `s` (either may be
    None): the cotangent spread over the reduced axes times c * u + e * s (see
    `_norm_curvature`). Along `u` alone it is its own transpose (c is diagonal)."""
    x = np.asarray(x)
    _, axes = _norm_kind(x, ord, axis)
    c, e = _norm_curvature(y, x, ord, axis, keepdims)
    d = np.zeros_like(x)
    if u is not None and not (np.ndim(u) == 0 and not np.any(u)):
        d = d + c * u
    if s is not None and not (np.ndim(s) == 0 and not np.any(s)):
        d = d + e * _expand(s, x.ndim, axes, keepdims)
    out = _expand(ct, x.ndim, axes, keepdims) * d
    return np.asarray(out).astype(_float_dtype(x), copy=False)


def norm_reduce(v, y, x, ord=None, axis=None, keepdims=False):
    """`v` (shaped like x) summed over the norm's reduced axes: shaped like y."""
    _, axes = _norm_kind(x, ord, axis)
    return np.sum(v, axis=axes, keepdims=keepdims)


def norm_uses_svd(x, ord=None, axis=None):
    """Is this np.linalg.norm a sum or an extreme of singular values ('nuc', 2, -2 on
    matrices)? Its rule then differentiates through np.linalg.svd."""
    kind, _ = _norm_kind(x, ord, axis)
    return kind == "matrix" and isinstance(ord, (int, str)) and ord in ("nuc", 2, -2)


def norm_matrix_axes(x, ord=None, axis=None):
    """The two axes a matrix norm reduces (rows, columns)."""
    return _norm_kind(x, ord, axis)[1]


def _singular_weights(x, ord, axis):
    kind, axes = _norm_kind(x, ord, axis)
    shape = np.shape(x)
    k = min(shape[axes[0]], shape[axes[1]])
    w = np.zeros(k, dtype=_float_dtype(x))
    if ord == "nuc":
        w[:] = 1
    else:
        w[0 if ord == 2 else -1] = 1
    batch = tuple(n for i, n in enumerate(shape) if i not in axes)
    return w, batch


def norm_svd_weights(ct, x, ord=None, axis=None):
    """The singular values' cotangent of an SVD-based matrix norm of cotangent `ct`: ct on
    every one ('nuc'), on the largest (2) or the smallest (-2); batch axes as np.linalg.svd
    of x with the matrix axes moved last has them. Linear in ct."""
    w, batch = _singular_weights(x, ord, axis)
    return np.reshape(ct, batch)[..., None] * w


def norm_svd_unweights(g, ct, x, ord=None, axis=None):
    """`norm_svd_weights`'s transpose: shaped like `ct`."""
    w, _ = _singular_weights(x, ord, axis)
    return np.reshape(np.sum(g * w, axis=-1), np.shape(ct))


def norm_grad(ct, y, x, ord=None, axis=None, keepdims=False):
    """The VJP of ``y = np.linalg.norm(x, ord, axis, keepdims)``, vectors and matrices:
    ord None/2/'fro' give x / y; a vector p-norm sign(x)|x|^(p-1) / y^(p-1); inf/-inf and the
    matrix 1/inf norms send g to the extreme entries (ties split evenly); 'nuc' is U V^T and
    the matrix 2-norm u1 v1^T (distinct singular values assumed)."""
    nd = np.ndim(x)
    _, axes = _norm_kind(x, ord, axis)
    d = _norm_direction(y, x, ord, axis, keepdims)
    out = _expand(ct, nd, axes, keepdims) * d
    return out.astype(_float_dtype(x), copy=False)


def norm_jvp(t, y, x, ord=None, axis=None, keepdims=False):
    """The JVP of np.linalg.norm: the derivative direction summed against the tangent."""
    _, axes = _norm_kind(x, ord, axis)
    d = _norm_direction(y, x, ord, axis, keepdims)
    out = np.sum(d * t, axis=axes, keepdims=keepdims)
    return out.astype(_float_dtype(x, t), copy=False)


# --- cholesky and eigh: their rules' building blocks --------------------------------------
# The rules themselves (srcad/ops/matrix.py) are numpy expressions over these and rows that
# exist (solve, matmul, swapaxes): generated code calling them differentiates again.


def transpose_if(x, flag):
    """x with its last two axes swapped where `flag` is true (cholesky's upper=True reads the
    mirror image): linear, and its own transpose."""
    return np.swapaxes(x, -1, -2) if flag else x


def phi_lower(x):
    """The lower triangle with its diagonal halved (Murray's Phi): linear, its own transpose."""
    n = np.shape(x)[-1]
    return np.tril(x) * (1 - 0.5 * np.eye(n, dtype=_float_dtype(x)))


def symmetric_from(t, UPLO="L"):
    """The symmetric matrix numpy's cholesky and eigh see when given `t`: the triangle they read
    (lower for "L"), mirrored. Linear; its transpose is `fold_triangle`."""
    if UPLO == "L":
        return np.tril(t) + _T(np.tril(t, -1))
    return np.triu(t) + _T(np.triu(t, 1))


def fold_triangle(x, UPLO="L"):
    """A gradient for symmetric inputs as that of a function reading only one triangle of its
    input: off-diagonal pairs added into that triangle (the diagonal once). Linear; its
    transpose is `symmetric_from`."""
    n = np.shape(x)[-1]
    both = x + _T(x)
    tri = np.tril(both) if UPLO == "L" else np.triu(both)
    return tri / (1 + np.eye(n, dtype=_float_dtype(both)))


def eig_gaps(w, ct=1.0):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it (infinite for repeated eigenvalues:
    eigenvectors are then not differentiable); all 0 where `ct` (an eigenvector cotangent) is
    0, so that a loss of the eigenvalues alone never meets the infinities. dF = F^2 (dw_i -
    dw_j), which the row's rules say."""
    w = np.asarray(w)
    n = w.shape[-1]
    if not np.any(ct):
        return np.zeros(w.shape + (n,), dtype=_float_dtype(w))
    diff = w[..., None, :] - w[..., :, None]
    eye = np.eye(n, dtype=bool)
    with np.errstate(divide="ignore"):
        return np.where(eye, 0, 1 / np.where(eye, 1, diff))


# --- svd ------------------------------------------------------------------------------------


def _svd_parts(out, a, full_matrices, compute_uv, hermitian):
    """(U, s, Vh) of the reduced SVD, from the op's output when it has them."""
    _svd_check(a, full_matrices, compute_uv, hermitian)
    if compute_uv:
        return out[0], out[1], out[2]
    return np.linalg.svd(a, full_matrices=False)


def _svd_check(a, full_matrices, compute_uv, hermitian):
    """Refuse the svd calls whose gradient srcad does not define."""
    if hermitian:
        raise SrcadError("the gradient of np.linalg.svd(..., hermitian=True) is not "
                         "implemented (numpy then reads one triangle through eigh)",
                         hint="call np.linalg.svd(a) on the full matrix")
    m, n = np.shape(a)[-2:]
    if compute_uv and full_matrices and m != n:
        raise SrcadError(
            "the gradient of np.linalg.svd with full_matrices=True (numpy's default) is not "
            "defined for a non-square matrix: the extra singular vectors are not unique",
            hint="pass full_matrices=False")


def _svd_gaps(s):
    """F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it."""
    k = s.shape[-1]
    eye = np.eye(k, dtype=bool)
    diff = s[..., None, :] ** 2 - s[..., :, None] ** 2
    with np.errstate(divide="ignore"):
        return np.where(eye, 0, 1 / np.where(eye, 1, diff))


def svd_gaps(s, ct, a, full_matrices=True, hermitian=False):
    """`_svd_gaps` for the svd row's rule: all 0 where `ct` (a singular-vector cotangent) is 0,
    so that a loss of the singular values alone never meets the infinities of repeated ones;
    refuses the calls whose gradient is not defined (see `_svd_parts`). dF = F^2 (2 s_i ds_i -
    2 s_j ds_j), which the row's rules say."""
    _svd_check(a, full_matrices, True, hermitian)
    s = np.asarray(s)
    if not np.any(ct):
        return np.zeros(s.shape + s.shape[-1:], dtype=_float_dtype(s))
    return _svd_gaps(s)


def diag_embed(v):
    """Diagonal matrices with `v` (over its last axis) on their diagonals; linear, its
    transpose reads the diagonals."""
    v = np.asarray(v)
    return v[..., :, None] * np.eye(v.shape[-1], dtype=_float_dtype(v))


def svd_s_grad(ct, usv, hermitian=False):
    """U diag(ct) V^T with (U, s, V^T) = `usv` the reduced SVD: the VJP of the singular values
    (np.linalg.svd(a, compute_uv=False)). Linear in ct and in U and V^T jointly."""
    _svd_check(usv[2], False, False, hermitian)
    return (usv[0] * np.asarray(ct)[..., None, :]) @ usv[2]


def svd_s_grad_usv(g, ct, usv, hermitian=False):
    """`svd_s_grad`'s VJP in `usv`: the cotangents (g V diag(ct), 0, diag(ct) U^T g)."""
    ct = np.asarray(ct)
    return _tree((g @ _T(usv[2]) * ct[..., None, :], np.zeros_like(usv[1]),
                  ct[..., :, None] * (_T(usv[0]) @ g)))


def svd_grad(ct, out, a, full_matrices=True, compute_uv=True, hermitian=False):
    """The VJP of np.linalg.svd (Townsend 2016, real case): with F from `_svd_gaps`,
    J = F * (U^T gU - gU^T U), K = F * (V^T gV - gV^T V),
    dA = U (J S + diag(gS) + S K) V^T + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T).
    With compute_uv=False, `ct` is gS alone. Distinct nonzero singular values assumed."""
    u, s, vh = _svd_parts(out, a, full_matrices, compute_uv, hermitian)
    if not compute_uv:
        return _like((u * np.asarray(ct)[..., None, :]) @ vh, a)
    gu, gs, gvh = ct[0], ct[1], ct[2]
    v = _T(vh)
    m, n = np.shape(a)[-2:]
    inner = np.zeros(np.shape(s) + (np.shape(s)[-1],), dtype=u.dtype)
    if np.any(gs):
        inner = inner + np.eye(s.shape[-1], dtype=u.dtype) * np.asarray(gs)[..., :, None]
    f = None
    if np.any(gu):
        f = _svd_gaps(s)
        utgu = _T(u) @ gu
        inner = inner + (f * (utgu - _T(utgu))) * s[..., None, :]
    if np.any(gvh):
        f = _svd_gaps(s) if f is None else f
        gv = _T(gvh)
        vtgv = _T(v) @ gv
        inner = inner + s[..., :, None] * (f * (vtgv - _T(vtgv)))
    da = u @ inner @ vh
    if m > n and np.any(gu):
        da = da + (gu - u @ (_T(u) @ gu)) @ (vh / s[..., :, None])
    if n > m and np.any(gvh):
        gv = _T(gvh)
        da = da + (u / s[..., None, :]) @ _T(gv - v @ (_T(v) @ gv))
    return _like(da, a)


def svd_jvp(t, out, a, full_matrices=True, compute_uv=True, hermitian=False):
    """The JVP of np.linalg.svd: P = U^T dA V, dS = diag(P),
    dU = U (F * (P S + S P^T)) + (I - U U^T) dA V S^-1,
    dV = V (F * (S P + P^T S)) + (I - V V^T) dA^T U S^-1 (returned as dVh = dV^T)."""
    u, s, vh = _svd_parts(out, a, full_matrices, compute_uv, hermitian)
    v = _T(vh)
    p = _T(u) @ t @ v
    ds = np.diagonal(p, axis1=-2, axis2=-1).copy()
    if not compute_uv:
        return ds
    f = _svd_gaps(s)
    ps = p * s[..., None, :]
    du = u @ (f * (ps + _T(ps)))
    sp = s[..., :, None] * p
    dv = v @ (f * (sp + _T(sp)))
    m, n = np.shape(a)[-2:]
    if m > n:
        tv = t @ v
        du = du + (tv - u @ (_T(u) @ tv)) / s[..., None, :]
    if n > m:
        ttu = _T(t) @ u
        dv = dv + (ttu - v @ (_T(v) @ ttu)) / s[..., None, :]
    return _tree((du, ds, _T(dv)))


# --- qr, tensorsolve -----------------------------------------------------------------------


def qr_kind(a, mode="reduced"):
    """Which QR np.linalg.qr(a, mode) computes, for its rules: "qr" (Q and R, the reduced
    factorisation of a matrix with at least as many rows as columns; 'complete' of a square
    one is the same) or "r" (R alone). Every other case is a SrcadError: a wide matrix's R is
    not a function of its first columns alone (no rule yet), 'complete' Q of a tall matrix
    is not unique, 'raw' is LAPACK's packed form."""
    m, n = np.shape(a)[-2:]
    if mode in ("reduced", "complete", "r") and m >= n and (mode != "complete" or m == n):
        return "r" if mode == "r" else "qr"
    raise SrcadError(
        f"srcad has no derivative rule for np.linalg.qr(a, mode={mode!r}) of a {m} x {n} "
        f"matrix",
        hint="differentiate the reduced QR of a matrix with at least as many rows as columns "
        "(mode='reduced' or 'r'); for a wide matrix, take the QR of its transpose")


def moved_axes(ndim, axes=None):
    """np.linalg.tensorsolve's `axes` as np.moveaxis arguments (source, destination): numpy
    moves them, in order, to the end of a's axes."""
    src = () if axes is None else tuple(int(k) % ndim for k in axes)
    return src, tuple(range(ndim - len(src), ndim))
