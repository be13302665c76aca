"""Runtime helpers for the matrix ops of the table (srcad/ops/matrix.py): the backward and
tangent maps of tensordot, einsum, kron and inner, and the shape juggling of
np.linalg.solve's right-hand side (norm and the decompositions: runtime_decompositions.py).

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

from .build import pinned
from .errors import SrcadError
from .gradtree import pieces_tree

__all__ = [
    "cross_grad_a",
    "cross_grad_b",
    "as_columns",
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
    "is_sparse",
    "matmul_forward_form",
    "matmul_grad_form",
    "sparse_matmul",
    "tensordot_grad_a",
    "tensordot_grad_b",
]


def _T(x):
    return np.swapaxes(x, -1, -2)


# --- matmul's backward as BLAS calls ---------------------------------------------------------
# One expression per shape class, over the names g (the cotangent of a @ b), a and b, with the
# shapes written in as constants. `matmul_grad_a/b` (srcad/runtime.py) evaluate it in tape mode
# and the specialiser (srcad/transform/specialise.py) writes it into generated code, so the two
# modes run the same numpy calls by construction.
#
#   C = A B:  dA = G B^T,  dB = A^T G.
#
# Where one operand has no batch (or only 1s), the batch and row axes of the other operand and
# of G are one axis of a matrix: a reshape (a view of a C-contiguous array) makes the backward
# ONE 2-D GEMM, whose contraction also sums over the batch (no batched matmul, no unbroadcast
# sum): for (8, 64, 128) @ (128, 512), dW = x.reshape(512, 128).T @ g.reshape(512, 512).
# Summing over the batch inside the GEMM changes the summation order of that gradient (a
# different last bit than a batched product summed afterwards). The others compute the same
# dot product per element, but whether the BLAS sums it in the same order as the batched
# product depends on the kernel it picks for each call's size (see `matmul_forward_form`):
# measured bitwise on the block's shapes, not on every small one. Source and tape run the
# same expression, so they agree bit for bit either way.


def _batch_ones(shape) -> bool:
    return all(n == 1 for n in shape[:-2])


def _out_batch(a_shape, b_shape):
    return tuple(np.broadcast_shapes(a_shape[:-2], b_shape[:-2]))


def matmul_grad_form(a_shape, b_shape, wrt: str) -> str:
    """The backward of ``a @ b`` w.r.t. `wrt` ("a" or "b") for operands of these shapes, as a
    numpy expression over ``g``, ``a`` and ``b`` (``unbroadcast`` only where two batches
    broadcast against each other).

    >>> matmul_grad_form((8, 64, 128), (128, 512), "b")
    'a.reshape(512, 128).T @ g.reshape(512, 512)'
    >>> matmul_grad_form((8, 64, 128), (128, 512), "a")
    '(g.reshape(512, 512) @ b.T).reshape((8, 64, 128))'
    """
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    na, nb = len(a_shape), len(b_shape)
    if na == 0 or nb == 0:
        raise SrcadError("matmul of a 0-d operand: numpy refuses it")
    if na == 1 and nb == 1:  # an inner product: g is a scalar
        return "g * b" if wrt == "a" else "g * a"
    K = a_shape[-1]
    N = b_shape[-1] if nb >= 2 else None
    M = a_shape[-2] if na >= 2 else None
    # the rows of the one GEMM (batch x M): a number, not -1 (numpy refuses -1 beside a 0)
    rows_a = int(np.prod(a_shape[:-1], dtype=np.int64))
    rows_g = int(np.prod(_out_batch(a_shape, b_shape), dtype=np.int64)) * (M or 1)
    if wrt == "a":
        if nb == 1:  # (..., M, K) @ (K,): g is (..., M); da = outer(g, b)
            return "g[..., None] * b"
        b2 = "b" if nb == 2 else f"b.reshape({K}, {N})"
        if na == 1:  # (K,) @ (..., K, N): g is (..., N)
            if _batch_ones(b_shape):
                return f"{b2} @ g" if nb == 2 else f"{b2} @ g.reshape({N})"
            batch = int(np.prod(b_shape[:-2], dtype=np.int64))
            return f"(b @ g[..., None]).reshape({batch}, {K}).sum(axis=0)"
        if _batch_ones(b_shape):
            if na == 2 and nb == 2:
                return "g @ b.T"
            return f"(g.reshape({rows_g}, {N}) @ {b2}.T).reshape({a_shape!r})"
        bt = "np.swapaxes(b, -1, -2)"
        if _batch_ones(a_shape):  # a shared by every matrix of b's batch: sum over the batch
            tail = "" if na == 2 else f".reshape({a_shape!r})"
            batch = int(np.prod(b_shape[:-2], dtype=np.int64))
            return f"(g @ {bt}).reshape({batch}, {M}, {K}).sum(axis=0){tail}"
        if a_shape[:-2] == b_shape[:-2]:
            return f"g @ {bt}"
        return f"unbroadcast(g @ {bt}, a)"
    # wrt == "b"
    if na == 1:  # (K,) @ (..., K, N): db = outer(a, g) for each matrix of the batch
        return "a[:, None] * g" if nb == 2 else "a[:, None] * g[..., None, :]"
    a2 = "a" if na == 2 else f"a.reshape({rows_a}, {K})"
    if nb == 1:  # (..., M, K) @ (K,): g is (..., M); one GEMV over batch and rows
        return "a.T @ g" if na == 2 else f"{a2}.T @ g.reshape({rows_a})"
    if _batch_ones(b_shape):
        if na == 2 and nb == 2:
            return "a.T @ g"
        gemm = f"{a2}.T @ g.reshape({rows_g}, {N})"
        return gemm if nb == 2 else f"({gemm}).reshape({b_shape!r})"
    out_batch = _out_batch(a_shape, b_shape)
    if _batch_ones(a_shape) and b_shape[:-2] == out_batch:
        at = "a.T" if na == 2 else f"a.reshape({M}, {K}).T"
        return f"{at} @ g"
    at = "np.swapaxes(a, -1, -2)"
    if a_shape[:-2] == b_shape[:-2]:
        return f"{at} @ g"
    return f"unbroadcast({at} @ g, b)"


# --- matmul's forward: N-D @ 2-D as one 2-D GEMM ------------------------------------------
# numpy computes (B..., M, K) @ (K, N) as a loop of B GEMMs of (M, K) @ (K, N), each packing
# the same W again; the reshape ``(x.reshape(B*M, K) @ W).reshape((B..., M, N))`` (a view of
# a C-contiguous x) is one GEMM. Each output element is the same K-term dot product, but
# whether the BLAS sums it in the same order depends on the kernels it was built with and
# picks at run time: of the shapes the size rule admits, OpenBLAS 0.3.31's SkylakeX kernels
# (AVX-512) gave numpy's bits on all 116 measured, its Haswell/Zen kernels (AVX2) on none in
# float32 and all in float64 (OPENBLAS_CORETYPE=Haswell on this Zen 5). So no table of
# shapes decides it: the first time a process meets a shape class
# (batch, M, K, N, dtype) that the size rule admits, it runs both forms once on probe
# operands of exactly that shape and keeps the one GEMM only where they are bitwise equal
# (`_probe`; the verdict is cached for the process). Every mode asks the same question of the
# same cache -- source (reverse, forward, recomputation), tape, fused or not -- so they agree
# bit for bit with each other, and srcad's value stays numpy's own on any machine.
# Measured: tests/test_matmul_forward.py (the grid, each kernel set OpenBLAS offers here);
# ``python bench/matmul_forward.py`` maps bits and speed.

_GEMM_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_VERDICTS: dict = {}  # (dtype name, batch, M, K, N) -> one GEMM bitwise numpy's product here
_PROBE_MAX = 2 ** 31  # multiply-adds one probe may cost (about 40 ms per product, float32)


def matmul_forward_form(a_shape, b_shape, a_dtype, b_dtype, a_c_order=True, b_c_order=True,
                        names=("a", "b")) -> str | None:
    """``a @ b`` as one 2-D GEMM for these operands, an expression over `names`, or None
    where numpy's own product is kept: not N-D @ 2-D, another dtype, an `a` that is not
    C-contiguous (its reshape would copy), a `b` that is not C-contiguous, a shape where the
    one GEMM was not measured faster (`_one_gemm_pays`), or one where this process's BLAS
    does not give it numpy's bits (`one_gemm_keeps_bits`).

    >>> matmul_forward_form((64, 128), (128, 512), np.float32, np.float32) is None
    True
    """
    a, b = names
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    if len(a_shape) < 3 or len(b_shape) != 2 or not (a_c_order and b_c_order):
        return None
    if a_dtype is None or b_dtype is None or np.dtype(a_dtype) != np.dtype(b_dtype) \
            or np.dtype(a_dtype) not in _GEMM_DTYPES:
        return None
    batch = int(np.prod(a_shape[:-2], dtype=np.int64))
    (M, K), N = a_shape[-2:], b_shape[-1]
    if not _one_gemm_pays(batch, M, K, N) or not one_gemm_keeps_bits(batch, M, K, N, a_dtype):
        return None
    return f"({a}.reshape({batch * M}, {K}) @ {b}).reshape({a_shape[:-1] + (N,)!r})"


def _one_gemm_pays(batch, M, K, N) -> bool:
    """Is one (batch*M, K) @ (K, N) GEMM measured faster than numpy's `batch` GEMMs?

    Speed (OpenBLAS 0.3.31, float32, bench/matmul_forward.py): the one GEMM is 1.05-1.17x
    faster at 1 thread on the block's products (each matrix's M*K*N >= 2**20), 1.5-2.3x at 2;
    on smaller matrices, where the batch runs the BLAS's kernel for small matrices, it was
    slower (0.75-0.96x; the GPT's (16, 32, 64) @ (64, 64)). M or N of 1 is a GEMV in numpy's
    loop, a batch of 1 is one GEMM already, and an N under 16 or not a multiple of 16 was
    not measured; all keep numpy's product. A product too large to probe cheaply too."""
    if batch < 2 or M < 2 or K < 1 or N < 16 or N % 16:
        return False
    return M * K * N > 1_000_000 and batch * M * K * N <= _PROBE_MAX


def one_gemm_keeps_bits(batch, M, K, N, dtype) -> bool:
    """Is one (batch*M, K) @ (K, N) GEMM bitwise equal to numpy's product of a C-contiguous
    (batch, M, K) and (K, N) of this dtype, with this process's BLAS? Probed once per shape
    class and process (`_probe`), then read from `_VERDICTS`."""
    key = (np.dtype(dtype).name, int(batch), int(M), int(K), int(N))
    verdict = _VERDICTS.get(key)
    if verdict is None:
        verdict = _VERDICTS[key] = bool(_probe(*key))
    return verdict


def _probe(dtype, batch, M, K, N) -> bool:
    """Both forms on probe operands of exactly this shape (the BLAS picks its kernels by
    shape, never by value; random values with full mantissas and both signs differ in some
    element's last bit wherever the two sum in another order). The verdict is taken at the
    BLAS thread count srcad's calls run (one thread where srcad.build.pinned holds it there,
    else that of the moment) and kept for others: tests hold the rewritten shapes to
    numpy's bits at 1 thread and the default count, and at another alignment."""
    rng = np.random.default_rng(20150)
    a = _probe_operand(rng, (batch, M, K), dtype)
    b = _probe_operand(rng, (K, N), dtype)
    # (at the BLAS's thread count in srcad's calls: one thread where srcad holds it there)
    return bool(pinned(_same_products)(a, b))


def _same_products(a, b) -> bool:
    return bool(np.array_equal(a @ b, _one_gemm(a, b)))


def _probe_operand(rng, shape, dtype):
    """Values of random sign in +-[1, 2), every mantissa bit random (a sum of them loses
    bits whichever way it is ordered, so two orders show), made from random bytes: a normal
    sample of the large block's operands took 20-44 ms a shape, more than its two GEMMs."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt == np.float32:
        bits = np.frombuffer(rng.bytes(4 * n), dtype=np.uint32)
        x = (bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F800000)
    elif dt == np.float64:
        bits = np.frombuffer(rng.bytes(8 * n), dtype=np.uint64)
        x = (bits & np.uint64(0x800FFFFFFFFFFFFF)) | np.uint64(0x3FF0000000000000)
    else:
        return rng.standard_normal(shape).astype(dt)
    return x.view(dt).reshape(shape)


def _one_gemm(a, b):
    """`matmul_forward_form`'s expression, as a function (the probe's; tests replace it)."""
    return (a.reshape(-1, a.shape[-1]) @ b).reshape(a.shape[:-1] + (b.shape[-1],))


def _float_dtype(*xs):
    dtype = np.result_type(*xs)
    return dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)


def _tree(pieces):
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


def is_sparse(x) -> bool:
    """A scipy.sparse matrix or array (told by its type's module: srcad never imports scipy
    itself)?"""
    return type(x).__module__.startswith("scipy.sparse") and hasattr(x, "tocsr")


def sparse_operand_check(x1, x2) -> None:
    """`S @ x` where S, a scipy.sparse matrix, came in as an argument or was made in the
    function (srcad follows products with a module's sparse constant only): refused with
    what works, where numpy's matmul would fail with an error about 0-d operands."""
    if is_sparse(x1) or is_sparse(x2):
        raise SrcadError(
            "`@` with a scipy.sparse matrix that is an argument or made in the function: "
            "srcad differentiates products with a module's sparse matrix (a global "
            "constant) only",
            hint="make the sparse matrix a module-level constant (`L = sp.diags(...)` at "
            "the top of the file), or pass `L.toarray()`")


def sparse_matmul(a, b):
    """`a @ b` where one side is a scipy.sparse matrix (a module's constant: a Laplacian, a
    finite-difference stencil) and the other a numpy array of one or two dimensions:
    scipy's product, an ndarray. Linear in the array; its VJPs are products with the
    transpose (`g @ b.T`, `a.T @ g`), so the backward is sparse too.

    >>> import scipy.sparse as sp
    >>> sparse_matmul(sp.eye(2, format="csr") * 2.0, np.array([1.0, 3.0])).tolist()
    [2.0, 6.0]
    """
    return np.asarray(a @ b)


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


_LABELS = string.ascii_uppercase + string.ascii_lowercase


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

    def letters(sublist):  # (numpy's order: 0..25 are A..Z, then a..z, for implicit outputs)
        return "".join("..." if s is Ellipsis else _LABELS[int(s)] for s in sublist)

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


def _cross_vectors3(v, axis):
    """`v`'s vectors along `axis`, moved last and made 3-component (numpy reads a missing
    z as 0)."""
    v = np.moveaxis(np.asarray(v), axis, -1)
    if v.shape[-1] == 2:
        v = np.concatenate([v, np.zeros(v.shape[:-1] + (1,), v.dtype)], axis=-1)
    return v


def _cross_grad(ct, x, y, axisx, axisy, axisc, x_first):
    """The VJP of np.cross w.r.t. `x` (the other operand `y`): y x ct for a, ct x y for b.
    3-vectors: numpy's cross itself; a 2-component operand's vectors padded with z = 0 (a
    pair of 2-vectors gives the z part alone: its cotangent is ct's z) and the z of its
    gradient dropped. The result's vector axis where x has it, counted from the right (the
    batch axes broadcast there)."""
    n = np.ndim(x)
    if np.shape(x)[axisx] == 3 and np.shape(y)[axisy] == 3:
        if x_first:
            return np.cross(y, ct, axisa=axisy, axisb=axisc, axisc=axisx % n - n)
        return np.cross(ct, y, axisa=axisc, axisb=axisy, axisc=axisx % n - n)
    if np.shape(x)[axisx] == 2 and np.shape(y)[axisy] == 2:
        ct = np.asarray(ct)
        ct3 = np.stack([np.zeros_like(ct), np.zeros_like(ct), ct], axis=-1)
    else:
        ct3 = np.moveaxis(np.asarray(ct), axisc, -1)
    y3 = _cross_vectors3(y, axisy)
    d = np.cross(y3, ct3) if x_first else np.cross(ct3, y3)
    return np.moveaxis(d[..., :np.shape(x)[axisx]], -1, axisx % n - n)


def cross_grad_a(ct, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The VJP of ``np.cross(a, b)`` w.r.t. `a`: b x ct (see `_cross_grad`; `axis` sets all
    three axes, as np.cross reads it)."""
    axisa, axisb, axisc = (axisa, axisb, axisc) if axis is None else (axis,) * 3
    return _cross_grad(ct, a, b, axisa, axisb, axisc, True)


def cross_grad_b(ct, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The VJP of ``np.cross(a, b)`` w.r.t. `b`: ct x a (see `_cross_grad`)."""
    axisa, axisb, axisc = (axisa, axisb, axisc) if axis is None else (axis,) * 3
    return _cross_grad(ct, b, a, axisb, axisa, axisc, False)
