"""scipy.linalg's solvers and factorisations under names generated code can import (``from
srcad.runtime import scipy_cholesky``), for the rows of srcad/ops/scipy_linalg.py, and the
helpers of their rules.

scipy is optional: this module does not import it until the first call. Each wrapper calls
the scipy function itself with the same arguments, so source mode (which calls the wrapper)
and tape mode (which calls the scipy function the row is registered for) compute the same
values bit for bit. ``cho_solve((c, lower), b)`` takes its factor as a pair; generated code
spells it ``scipy_cho_solve(c_and_lower, b)``, the same call.
"""

from __future__ import annotations

import importlib

import numpy as np

from .gradtree import GradTree, _slot


def _sl():
    return importlib.import_module("scipy.linalg")


def scipy_cholesky(a, lower=False):
    return _sl().cholesky(a, lower=lower)


def scipy_solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False):
    return _sl().solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def scipy_cho_factor(a, lower=False):
    return _sl().cho_factor(a, lower=lower)


def scipy_cho_solve(c_and_lower, b):
    return _sl().cho_solve(c_and_lower, b)


def scipy_solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
                assume_a=None, transposed=False):
    return _sl().solve(a, b, lower=lower, check_finite=check_finite, assume_a=assume_a,
                       transposed=transposed)


_SYMMETRIC = frozenset({"sym", "symmetric", "her", "hermitian", "pos", "positive definite"})
_GENERAL = frozenset({None, "gen", "general"})


def solve_sees(a, lower=False, assume_a=None, transposed=False):
    """The matrix M that ``scipy.linalg.solve(a, b, lower=, assume_a=, transposed=)`` solves
    M x = b with: `a` itself where it assumes nothing (None: scipy looks at the values, and a
    change of any entry is seen), the triangle its symmetric solvers read (upper unless
    `lower`) mirrored, the triangle or the diagonal or the tridiagonal band it is told to
    read; transposed where asked. Linear in `a`: `solve_sees_t` is its transpose."""
    if assume_a in _GENERAL:
        m = a
    elif assume_a in _SYMMETRIC:
        m = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2) if lower else \
            np.triu(a) + np.swapaxes(np.triu(a, 1), -1, -2)
    else:
        m = _band(a, assume_a)
    return np.swapaxes(m, -1, -2) if transposed else m


def solve_sees_t(d, lower=False, assume_a=None, transposed=False):
    """The transpose of `solve_sees`: a cotangent of M as one of `a` (each mirrored pair
    added into the triangle read)."""
    d = np.swapaxes(d, -1, -2) if transposed else d
    if assume_a in _GENERAL:
        return d
    if assume_a in _SYMMETRIC:
        t = np.swapaxes(d, -1, -2)
        return np.tril(d) + np.tril(t, -1) if lower else np.triu(d) + np.triu(t, 1)
    return _band(d, assume_a)


def _band(m, assume_a):
    """The part of `m` a structured solver reads (a projection: its own transpose)."""
    if assume_a == "upper triangular":
        return np.triu(m)
    if assume_a == "lower triangular":
        return np.tril(m)
    if assume_a == "diagonal":
        return np.tril(np.triu(m))
    if assume_a == "tridiagonal":
        return np.tril(np.triu(m, -1), 1)
    raise NotImplementedError(f"srcad: no derivative of scipy.linalg.solve with assume_a="
                              f"{assume_a!r}")


def scipy_toeplitz(c, r=None):
    return _sl().toeplitz(c, r)


def toeplitz_grad(d, c, r, wrt):
    """The cotangent of `c` (wrt "c") or `r` ("r") of ``T = scipy.linalg.toeplitz(c, r)``
    given T's, `d` (1-d c and r; T[i, j] = c[i - j] on and below the diagonal, r[j - i]
    above it, r[0] unread; r None is c): d summed along each diagonal -- a `np.bincount`
    over the diagonals' indices."""
    if np.ndim(c) != 1 or (r is not None and np.ndim(r) != 1):
        raise NotImplementedError("srcad: the derivative of scipy.linalg.toeplitz is for 1-d "
                                  "c and r")
    m, n = np.shape(d)
    diag = (np.arange(m)[:, None] - np.arange(n)[None, :] + (n - 1)).ravel()
    sums = np.bincount(diag, np.ravel(d), m + n - 1).astype(np.result_type(d), copy=False)
    dc = sums[n - 1:]
    dr = np.concatenate([np.zeros(1, sums.dtype), sums[:n - 1][::-1]])
    if r is None:  # (r = c: each diagonal above the main one reads c too)
        return dc + dr
    return dc if wrt == "c" else dr


def toeplitz_grad_t(h, c, r, wrt):
    """The transpose of `toeplitz_grad` (linear in its cotangent): h laid along the
    diagonals it was summed from."""
    if r is None:
        return scipy_toeplitz(h)
    return scipy_toeplitz(h, np.zeros_like(r)) if wrt == "c" else \
        scipy_toeplitz(np.zeros_like(c), h)


def scipy_inv(a):
    return _sl().inv(a)


def scipy_det(a):
    return _sl().det(a)


def scipy_expm(a):
    return _sl().expm(a)


# --- the rules' helpers (no derivative of their own: a second derivative through them is
# refused by the missing row, never zeros) ---------------------------------------------------


def trans_is(trans) -> bool:
    """solve_triangular's `trans` asks for A^T x = b (1, 2, 'T', 'C': real values)."""
    return trans in (1, 2, "T", "C")


def trans_flip(trans) -> int:
    """The other of A x = b and A^T x = b."""
    return 0 if trans_is(trans) else 1


def triangle(m, lower, unit_diagonal=False):
    """The triangle of `m` a triangular solve or a Cholesky factor reads (lower or upper;
    without the diagonal when it is taken as ones)."""
    if lower:
        return np.tril(m, -1 if unit_diagonal else 0)
    return np.triu(m, 1 if unit_diagonal else 0)


def _cols(v, b):
    return v[:, None] if np.ndim(b) == 1 else v


def _part(g, i, like):
    """Item `i` of a pair's cotangent (zeros where none came)."""
    v = _slot(g, i) if isinstance(g, GradTree) else g[i]
    if v is None or np.ndim(v) == 0 and np.ndim(like) != 0:
        return np.zeros(np.shape(like), dtype=np.result_type(like, 0.0))
    return v


def _chol_grad(gL, L):
    """Murray (2016): the gradient of a lower Cholesky factor's input (read: its lower
    triangle), given the factor's cotangent `gL`."""
    n = L.shape[-1]
    phi = np.tril(L.T @ gL) * (1 - 0.5 * np.eye(n))
    S = np.linalg.solve(L.T, np.linalg.solve(L.T, phi.T).T)
    return np.tril(S + S.T) / (1 + np.eye(n))


def _chol_tangent(aL_dot, L):
    """The tangent of a lower Cholesky factor, given the symmetric tangent of its input."""
    n = L.shape[-1]
    X = np.linalg.solve(L, np.linalg.solve(L, aL_dot).T).T
    return L @ (np.tril(X) * (1 - 0.5 * np.eye(n)))


def cho_factor_grad(ct, c_out, a, lower):
    """``(c, lower) = cho_factor(a, lower)``: c holds the factor in one triangle and a's own
    entries in the other (LAPACK leaves them), so a's gradient is the factor's (through the
    triangle read) plus c's cotangent on the other triangle."""
    c = c_out[0]
    g0 = _part(ct, 0, c)
    if lower:
        return _chol_grad(np.tril(g0), np.tril(c)) + np.triu(g0, 1)
    return _chol_grad(np.tril(g0.T), np.triu(c).T).T + np.tril(g0, -1)


def cho_factor_tangent(t, c_out, a, lower):
    c = c_out[0]
    if lower:
        sym = np.tril(t) + np.tril(t, -1).T
        return (_chol_tangent(sym, np.tril(c)) + np.triu(t, 1), np.zeros((), dtype=bool))
    sym = np.triu(t) + np.triu(t, 1).T
    return (_chol_tangent(sym, np.triu(c).T).T + np.tril(t, -1), np.zeros((), dtype=bool))


def cho_solve_grad_c(ct, x_out, c_and_lower, b):
    """x = (L L^T)^-1 b with L the triangle of c read (U^T U for upper): dA = -gb x^T with
    gb = A^-1 g, then dL = (dA + dA^T) L (dU = U (dA + dA^T)), on that triangle."""
    c, lower = c_and_lower
    gb = _cols(_sl().cho_solve(c_and_lower, ct), b)
    dA = -gb @ _cols(x_out, b).T
    sym = dA + dA.T
    gc = np.tril(sym @ np.tril(c)) if lower else np.triu(np.triu(c) @ sym)
    return GradTree({0: gc}, 2)


def cho_solve_tangent_c(t, x_out, c_and_lower, b):
    c, lower = c_and_lower
    t0 = _part(t, 0, c)
    F = np.tril(c) if lower else np.triu(c).T
    F_dot = np.tril(t0) if lower else np.triu(t0).T
    A_dot = F_dot @ F.T + F @ F_dot.T
    x = _cols(x_out, b)
    r = _sl().cho_solve(c_and_lower, A_dot @ x)
    return -(r[:, 0] if np.ndim(b) == 1 else r)
