"""Runtime helpers for the matrix ops of the table (srcad/ops/matrix.py): the backward and
tangent maps of tensordot, einsum, kron, norm, cholesky and eigh, and the shape juggling
of np.linalg.solve's right-hand side.

Generated code calls them by name (re-exported from srcad/runtime.py), and each is a row of
the table (srcad/ops/helper_rows.py). Each ``*_grad`` helper is linear in its first argument
(the cotangent) and the matching ``*_jvp`` (or the op itself) is its transpose, which is how
their rows give them a VJP and a JVP in that argument; where a helper's value depends on an
input's *value* (cholesky's L, eigh's w and v) its row refuses a second derivative through
that input instead of answering zeros.

Batched operands follow numpy: matrices are the last two axes. Formulas: M. Giles, "An
extended collection of matrix derivative results" (2008); I. Murray, "Differentiation of
the Cholesky decomposition" (2016).

>>> a, b = np.ones((2, 3)), np.ones((3, 4))
>>> [g.shape for g in einsum_grad(np.ones((2, 4)), "ij,jk->ik", (a, b))]
[(2, 3), (3, 4)]
"""

from __future__ import annotations

import string

import numpy as np

from .errors import SrcadError

__all__ = [
    "as_columns",
    "cholesky_grad",
    "cholesky_jvp",
    "eigh_grad",
    "eigh_jvp",
    "einsum_grad",
    "einsum_grad_first",
    "einsum_grad_tangent",
    "einsum_jvp",
    "einsum_jvp_first",
    "einsum_jvp_tangent",
    "from_columns",
    "inner_grad_a",
    "inner_grad_b",
    "kron_grad_a",
    "kron_grad_b",
    "norm_grad",
    "norm_jvp",
    "svd_grad",
    "svd_jvp",
    "tensordot_grad_a",
    "tensordot_grad_b",
]


def _T(x):
    return np.swapaxes(x, -1, -2)


def _float_dtype(*xs):
    dtype = np.result_type(*xs)
    return dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)


def _tree(pieces):
    from .runtime import pieces_tree  # (runtime imports this module)

    return pieces_tree(list(pieces))


def _like(r, x):
    """`r` in `x`'s float dtype: a cotangent that reached a float32 value as a Python float
    (the seed 1.0) must not make its gradient float64."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None and np.issubdtype(dtype, np.floating) and r.dtype != dtype:
        return r.astype(dtype)
    return r


# --- solve's right-hand side ------------------------------------------------------------------


def as_columns(v, b):
    """`v` shaped like np.linalg.solve's right-hand side `b` (or its solution), as a stack
    of column matrices: numpy treats a 1-D `b` as one vector, anything else as (..., M, K)."""
    return np.expand_dims(v, -1) if np.ndim(b) == 1 else v


def from_columns(v, b):
    """The inverse of `as_columns`."""
    return v[..., 0] if np.ndim(b) == 1 else v


# --- tensordot ------------------------------------------------------------------------------


def _tensordot_axes(axes, nda, ndb):
    if np.ndim(axes) == 0:
        n = int(axes)
        return list(range(nda - n, nda)), list(range(n))
    a_axes, b_axes = axes
    a_axes = [a_axes] if np.ndim(a_axes) == 0 else list(a_axes)
    b_axes = [b_axes] if np.ndim(b_axes) == 0 else list(b_axes)
    return [int(i) % nda for i in a_axes], [int(i) % ndb for i in b_axes]


def tensordot_grad_a(ct, a, b, axes=2):
    """The VJP of ``np.tensordot(a, b, axes)`` w.r.t. `a`: `ct` contracted with `b` over
    b's free axes, then a's axes put back in order."""
    nda, ndb = np.ndim(a), np.ndim(b)
    a_axes, b_axes = _tensordot_axes(axes, nda, ndb)
    free_a = [i for i in range(nda) if i not in a_axes]
    free_b = [i for i in range(ndb) if i not in b_axes]
    da = np.tensordot(ct, b, axes=(list(range(len(free_a), np.ndim(ct))), free_b))
    have = free_a + [a_axes[b_axes.index(j)] for j in sorted(b_axes)]
    return _like(np.transpose(da, np.argsort(have)), a)


def tensordot_grad_b(ct, a, b, axes=2):
    """The VJP of ``np.tensordot(a, b, axes)`` w.r.t. `b` (see `tensordot_grad_a`)."""
    nda, ndb = np.ndim(a), np.ndim(b)
    a_axes, b_axes = _tensordot_axes(axes, nda, ndb)
    free_a = [i for i in range(nda) if i not in a_axes]
    free_b = [i for i in range(ndb) if i not in b_axes]
    db = np.tensordot(a, ct, axes=(free_a, list(range(len(free_a)))))
    have = [b_axes[a_axes.index(i)] for i in sorted(a_axes)] + free_b
    return _like(np.transpose(db, np.argsort(have)), b)


# --- einsum ---------------------------------------------------------------------------------


def _einsum_form(subscripts, operands):
    """np.einsum's call as (subscripts string, arrays, where each array sits in `operands`
    -- None for the first array of the interleaved form, which is `subscripts` itself).

    The interleaved form ``np.einsum(a, [0, 1], b, [1, 2], [0, 2])`` reaches the row as
    subscripts=a, operands=([0, 1], b, [1, 2], [0, 2]); its integer labels become letters."""
    if isinstance(subscripts, str):
        return subscripts, tuple(operands), tuple(range(len(operands)))
    args = (subscripts, *operands)
    out = args[-1] if len(args) % 2 else None
    pairs = args[:len(args) - (len(args) % 2)]

    def letters(sublist):
        return "".join("..." if s is Ellipsis else string.ascii_letters[int(s)]
                       for s in sublist)

    spec = ",".join(letters(sub) for sub in pairs[1::2])
    if out is not None:
        spec += "->" + letters(out)
    arrays = tuple(pairs[0::2])
    positions = (None,) + tuple(range(1, len(pairs) - 1, 2))  # (index in operands) - 1
    return spec, arrays, positions


def _einsum_parts(subscripts, operands):
    """Explicit subscripts: (one letter string per operand, the output's), with `...`
    replaced by letters of their own and an implicit output made explicit (numpy's rule:
    the broadcast axes, then the labels used once, in sorted order)."""
    s = subscripts.replace(" ", "")
    ins, out = s.split("->") if "->" in s else (s, None)
    subs = ins.split(",")
    if len(subs) != len(operands):
        raise SrcadError(f"np.einsum subscripts {subscripts!r} name {len(subs)} operand(s), "
                         f"got {len(operands)}")
    free = [c for c in string.ascii_letters if c not in s]
    n_ell = max((np.ndim(op) - len(sub.replace("...", "")) for sub, op in zip(subs, operands)
                 if "..." in sub), default=0)
    ell = "".join(free[:n_ell])
    subs = [sub.replace("...", ell[n_ell - (np.ndim(op) - len(sub.replace("...", ""))):])
            if "..." in sub else sub for sub, op in zip(subs, operands)]
    if out is None:
        counts = {c: "".join(subs).count(c) for c in "".join(subs) if c not in ell}
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1))
    else:
        out = out.replace("...", ell)
    return subs, out


def _einsum_operand_grad(ct, subs, out, operands, i):
    """d(einsum)/d(operand i) applied to `ct`: an einsum of `ct` with the other operands,
    then broadcast over the labels only operand i has, and spread onto its diagonals where
    it repeats a label."""
    x = operands[i]
    shape = np.shape(x)
    mine = subs[i]
    others = [j for j in range(len(operands)) if j != i]
    have = set(out).union(*(subs[j] for j in others))
    unique = "".join(dict.fromkeys(mine))
    kept = "".join(c for c in unique if c in have)
    spec = ",".join([out] + [subs[j] for j in others]) + "->" + kept
    r = np.einsum(spec, ct, *(operands[j] for j in others))
    # a label broadcast from size 1 in operand i: sum the cotangent back to size 1
    size = {c: n for c, n in zip(mine, shape)}
    sum_axes = tuple(k for k, c in enumerate(kept) if size[c] == 1 and r.shape[k] != 1)
    if sum_axes:
        r = np.sum(r, axis=sum_axes, keepdims=True)
    dtype = _float_dtype(r)
    extra, extra_subs = [], []
    target = ""
    fresh = iter(c for c in string.ascii_letters
                 if c not in "".join(subs) + out)
    seen = set()
    for c in mine:
        if c in seen:  # a repeated label: its own letter, tied to the first by an identity
            d = next(fresh)
            extra.append(np.eye(size[c], dtype=dtype))
            extra_subs.append(c + d)
            target += d
            continue
        seen.add(c)
        target += c
        if c not in kept:  # summed inside operand i alone: the cotangent is constant along it
            extra.append(np.ones(size[c], dtype=dtype))
            extra_subs.append(c)
    if not extra and target == kept:
        return _like(r, x)
    return _like(np.einsum(",".join([kept] + extra_subs) + "->" + target, r, *extra), x)


def _einsum_all_grads(ct, subscripts, operands):
    spec, arrays, positions = _einsum_form(subscripts, operands)
    subs, out = _einsum_parts(spec, arrays)
    ct = np.asarray(ct)
    return [_einsum_operand_grad(ct, subs, out, arrays, i) for i in range(len(arrays))], positions


def einsum_grad(ct, subscripts, operands, optimize=False):
    """The VJP of ``np.einsum(subscripts, *operands)``: one cotangent per operand (any
    subscripts: ellipsis, implicit output, labels repeated inside an operand). In the
    interleaved form the sublists' places hold the sublists themselves (no gradient), and
    the first array's cotangent is `einsum_grad_first`'s."""
    grads, positions = _einsum_all_grads(ct, subscripts, operands)
    out = list(operands)
    for g, k in zip(grads, positions):
        if k is not None:
            out[k] = g
    return _tree(out)


def einsum_grad_first(ct, subscripts, operands, optimize=False):
    """The cotangent of the first array of the interleaved form ``np.einsum(a, [0, 1], ...)``
    (which reaches the row as `subscripts`)."""
    if isinstance(subscripts, str):
        raise SrcadError("internal: a subscripts string has no gradient")
    return _einsum_all_grads(ct, subscripts, operands)[0][0]


def _interleaved_only_first_order(subscripts):
    if not isinstance(subscripts, str):
        raise SrcadError(
            "srcad has no derivative rule for a second derivative of np.einsum's interleaved "
            "(operand, sublist, ...) form",
            hint="write the subscripts as a string, np.einsum('ij,jk->ik', a, b)")


def einsum_jvp(tangents, subscripts, operands, optimize=False):
    """The JVP of ``np.einsum(subscripts, *operands)``: it is linear in each operand, so the
    sum over operands of the einsum with that operand replaced by its tangent (in the
    interleaved form, the sublists' tangents are ignored, and the first array's is
    `einsum_jvp_first`'s)."""
    spec, arrays, positions = _einsum_form(subscripts, operands)
    total = None
    for i, k in enumerate(positions):
        t = None if k is None else tangents[k]
        if _absent(t):
            continue
        term = np.einsum(spec, *_replaced(arrays, i, t))
        total = term if total is None else total + term
    return np.zeros_like(np.einsum(spec, *arrays)) if total is None else total


def einsum_jvp_first(t, subscripts, operands, optimize=False):
    """The JVP of the interleaved form along its first array's tangent `t`."""
    spec, arrays, _ = _einsum_form(subscripts, operands)
    return np.einsum(spec, t, *arrays[1:])


def _absent(t):
    """A tangent or cotangent that is not there: None, or the 0.0 of a missing slot."""
    return t is None or (np.ndim(t) == 0 and not np.any(t))


def _replaced(operands, i, t):
    return tuple(operands[:i]) + (t,) + tuple(operands[i + 1:])


def einsum_grad_tangent(ct, subscripts, operands, tangents, optimize=False):
    """`einsum_grad` differentiated along the operands' tangents (it is linear in each
    operand but its own): for operand i, the sum over j != i of its gradient with operand j
    replaced by tangent j. The same map is that gradient's transpose in the operands, so it
    serves as both its JVP and its VJP there (second derivatives of einsum)."""
    _interleaved_only_first_order(subscripts)
    n = len(operands)
    total = [None] * n
    for j, t in enumerate(tangents):
        if _absent(t):
            continue
        grads = einsum_grad(ct, subscripts, _replaced(operands, j, t))
        for i in range(n):
            if i != j:
                total[i] = grads[i] if total[i] is None else total[i] + grads[i]
    return _tree(np.zeros_like(x) if d is None else _like(d, x)
                 for d, x in zip(total, operands))


def einsum_jvp_tangent(tangents, subscripts, operands, more, optimize=False):
    """`einsum_jvp` differentiated along the operands' tangents `more`: the sum over pairs
    i != j of the einsum with operand i replaced by tangents[i] and operand j by more[j]."""
    _interleaved_only_first_order(subscripts)
    total = None
    for i, t in enumerate(tangents):
        for j, u in enumerate(more):
            if i == j or _absent(t) or _absent(u):
                continue
            term = np.einsum(subscripts, *_replaced(_replaced(operands, i, t), j, u))
            total = term if total is None else total + term
    return np.zeros_like(np.einsum(subscripts, *operands)) if total is None else total


# --- kron -----------------------------------------------------------------------------------


def _kron_shapes(a, b):
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    return nd, sa, sb


def kron_grad_a(ct, a, b):
    """The VJP of ``np.kron(a, b)`` w.r.t. `a`: out[i*q + k] = a[i] b[k] along each axis, so
    da[i] = sum_k ct[i*q + k] b[k]."""
    nd, sa, sb = _kron_shapes(a, b)
    blocks = np.reshape(ct, tuple(n for pair in zip(sa, sb) for n in pair))
    bb = np.reshape(b, tuple(n for s in sb for n in (1, s)))
    return np.reshape(np.sum(blocks * bb, axis=tuple(range(1, 2 * nd, 2))), np.shape(a))


def kron_grad_b(ct, a, b):
    """The VJP of ``np.kron(a, b)`` w.r.t. `b` (see `kron_grad_a`)."""
    nd, sa, sb = _kron_shapes(a, b)
    blocks = np.reshape(ct, tuple(n for pair in zip(sa, sb) for n in pair))
    aa = np.reshape(a, tuple(n for s in sa for n in (s, 1)))
    return np.reshape(np.sum(blocks * aa, axis=tuple(range(0, 2 * nd, 2))), np.shape(b))


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


# --- cholesky -------------------------------------------------------------------------------


def _phi(x):
    """The lower triangle with its diagonal halved."""
    n = x.shape[-1]
    return np.tril(x) * (1 - 0.5 * np.eye(n, dtype=x.dtype))


def cholesky_grad(ct, L, upper=False):
    """The VJP of ``L = np.linalg.cholesky(a)`` (Murray 2016): S = L^-T phi(L^T ct) L^-1.

    numpy reads only a's lower triangle (the upper one with ``upper=True``), so the gradient
    is the derivative of that function: (S + S^T) on the strictly lower triangle, S on the
    diagonal, 0 above. Contracted with a symmetric direction it is the usual symmetric one."""
    if upper:  # U = cholesky(a^T)^T, as numpy reads a's upper triangle
        return _T(cholesky_grad(_T(ct), _T(L), False))
    L = np.asarray(L)
    n = L.shape[-1]
    p = _phi(_T(L) @ ct)
    x = np.linalg.solve(_T(L), p)  # L^-T phi
    s = _T(np.linalg.solve(_T(L), _T(x)))  # L^-T phi L^-1
    return np.tril(s + _T(s)) / (1 + np.eye(n, dtype=s.dtype))


def cholesky_jvp(t, L, upper=False):
    """The JVP of np.linalg.cholesky: dL = L phi(L^-1 dA L^-T), with dA the symmetric
    matrix numpy sees (built from the triangle it reads)."""
    if upper:
        return _T(cholesky_jvp(_T(t), _T(L), False))
    L = np.asarray(L)
    da = np.tril(t) + _T(np.tril(t, -1))
    x = np.linalg.solve(L, da)  # L^-1 dA
    y = _T(np.linalg.solve(L, _T(x)))  # L^-1 dA L^-T
    return L @ _phi(y)


# --- eigh -----------------------------------------------------------------------------------


def _eig_gaps(w):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it (infinite for repeated eigenvalues:
    eigenvectors are then not differentiable)."""
    n = w.shape[-1]
    diff = w[..., None, :] - w[..., :, None]
    eye = np.eye(n, dtype=bool)
    with np.errstate(divide="ignore"):
        return np.where(eye, 0, 1 / np.where(eye, 1, diff))


def _from_triangle(sym_grad, UPLO):
    """A gradient for symmetric inputs, as the gradient of a function that reads only one
    triangle of its input: off-diagonal pairs added into that triangle."""
    n = sym_grad.shape[-1]
    both = sym_grad + _T(sym_grad)
    tri = np.tril(both) if UPLO == "L" else np.triu(both)
    return tri / (1 + np.eye(n, dtype=both.dtype))


def eigh_grad(ct, w, v, UPLO="L"):
    """The VJP of ``w, v = np.linalg.eigh(a)``: a_bar = V (diag(w_bar) + F * (V^T v_bar)) V^T
    (F from `_eig_gaps`), then folded onto the triangle numpy reads. `ct` is the pair of
    cotangents; one nothing flowed into is 0.0, and with no eigenvector cotangent the F
    term (infinite for repeated eigenvalues) is left out."""
    wbar, vbar = ct[0], ct[1]
    v = np.asarray(v)
    vt = _T(v)
    inner = (v * _like(np.broadcast_to(wbar, np.shape(w)), v)[..., None, :]) @ vt
    if np.any(vbar):
        inner = inner + v @ (_eig_gaps(w) * (vt @ vbar)) @ vt
    return _from_triangle(inner, UPLO)


def eigh_jvp(t, w, v, UPLO="L"):
    """The JVP of np.linalg.eigh: with M = V^T dA V (dA the symmetric matrix numpy sees),
    dw = diag(M) and dV = V (F * M)."""
    if UPLO == "L":
        da = np.tril(t) + _T(np.tril(t, -1))
    else:
        da = np.triu(t) + _T(np.triu(t, 1))
    v = np.asarray(v)
    m = _T(v) @ da @ v
    return _tree((np.diagonal(m, axis1=-2, axis2=-1).copy(), v @ (_eig_gaps(w) * m)))


# --- inner ----------------------------------------------------------------------------------


def inner_grad_a(ct, a, b):
    """The VJP of ``np.inner(a, b)`` w.r.t. `a`: a tensordot over the last axes (a product
    when either is 0-d)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        r = np.asarray(ct) * b
        return _like(np.asarray(np.sum(r)) if np.ndim(a) == 0 else r, a)
    return tensordot_grad_a(ct, a, b, ([np.ndim(a) - 1], [np.ndim(b) - 1]))


def inner_grad_b(ct, a, b):
    """The VJP of ``np.inner(a, b)`` w.r.t. `b` (see `inner_grad_a`)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        r = np.asarray(ct) * a
        return _like(np.asarray(np.sum(r)) if np.ndim(b) == 0 else r, b)
    return tensordot_grad_b(ct, a, b, ([np.ndim(a) - 1], [np.ndim(b) - 1]))


# --- svd ------------------------------------------------------------------------------------


def _svd_parts(out, a, full_matrices, compute_uv, hermitian):
    """(U, s, Vh) of the reduced SVD, from the op's output when it has them."""
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
    if compute_uv:
        return out[0], out[1], out[2]
    return np.linalg.svd(a, full_matrices=False)


def _svd_gaps(s):
    """F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it."""
    k = s.shape[-1]
    eye = np.eye(k, dtype=bool)
    diff = s[..., None, :] ** 2 - s[..., :, None] ** 2
    with np.errstate(divide="ignore"):
        return np.where(eye, 0, 1 / np.where(eye, 1, diff))


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
