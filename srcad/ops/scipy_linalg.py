"""scipy.linalg's solvers and factorisations that Gaussian-process, kernel and Kalman-filter
code calls: cholesky, solve_triangular, cho_factor, cho_solve, solve, inv, det; expm
(rotations by the exponential map, linear ODEs); toeplitz (convolutions as matrices).

Like srcad/ops/special.py and spatial.py, scipy is optional: the rows are registered
(`table.optional_rows`) once the user's code imports scipy.linalg, for scipy's callables
themselves (tape mode calls them); generated code spells each through a wrapper of
srcad/runtime_scipy_linalg.py (the same call, so both modes compute the same values). Facts
worth knowing:

* ``cholesky(a, lower=False)`` returns the *upper* factor by default (A = U^T U) and reads
  only that triangle of `a`: numpy's cholesky rule (srcad/ops/matrix.py) with
  ``upper = not lower``.
* ``solve_triangular(a, b, trans, lower, unit_diagonal)`` reads one triangle of `a` (not
  its diagonal when ``unit_diagonal``): x = A^-1 b gives db = A^-T g and dA = -db x^T on
  that triangle; ``trans`` (1, 2, 'T', 'C') solves A^T x = b: db = A^-1 g, dA = -x db^T.
* ``cho_factor(a, lower)`` returns ``(c, lower)`` with the factor in one triangle of `c`
  and `a`'s own entries in the other (LAPACK does not touch them); ``cho_solve((c, lower),
  b)`` reads only the factor's triangle. Their rules are helpers (first order; a second
  derivative through them is refused by the missing row, never zeros).
* ``solve``, ``inv``, ``det`` are numpy's rules.

Before/after (source mode):
    L = scipy.linalg.cholesky(K, lower=True)  ->  L = scipy_cholesky(K, True) ...
"""

import numpy as np

from .. import runtime_scipy_linalg as rsl
from ..runtime import as_columns, unsupported_derivative, fold_triangle, from_columns, phi_lower, symmetric_from, \
    transpose_if
from ..runtime_scipy_linalg import scipy_cho_solve, scipy_expm, scipy_solve_triangular, \
    scipy_toeplitz, solve_sees, solve_sees_t, toeplitz_grad, toeplitz_grad_t, trans_flip, \
    trans_is, triangle
from .table import Param, defjvp, defvjp, optional_rows

_F = "scipy.linalg"
SMALL = (-1.0, 1.0)
_I3 = "3 * np.eye(3)"


def _register_rows() -> None:
    """The rows (run by `table.optional_rows`, once scipy.linalg is imported)."""
    import scipy.linalg as sl  # (an optional library: imported only here)

    # the triangle a solve or a factor reads: linear, its own transpose (second order)
    defvjp(rsl.triangle,
           lambda g, out, m, lower, unit_diagonal=False: triangle(g, lower, unit_diagonal),
           name="triangle", family=_F, linear=("m",),
           spelling="triangle(m, lower, unit_diagonal)",
           derivation="np.tril or np.triu of m (without the diagonal when it is taken as ones)",
           test_cases=(("OP(a, True) * a", [(3, 3)]), ("OP(a, False, True) * a", [(3, 3)])))

    # the matrix scipy's solve solves with, and its transpose (linear: second order)
    defvjp(rsl.solve_sees,
           lambda g, out, a, lower=False, assume_a=None, transposed=False: solve_sees_t(
               g, lower, assume_a, transposed),
           name="solve_sees", family=_F, linear=("a",),
           spelling="solve_sees(a, lower, assume_a, transposed)",
           derivation="a, or the part of a scipy.linalg.solve reads (a triangle mirrored, a "
           "band), transposed where asked: linear, its transpose solve_sees_t",
           test_cases=(("OP(a, False, 'pos') * a", [(3, 3)]),
                       ("OP(a, True, 'tridiagonal', True) * a", [(3, 3)])))
    defvjp(rsl.solve_sees_t,
           lambda g, out, d, lower=False, assume_a=None, transposed=False: solve_sees(
               g, lower, assume_a, transposed),
           name="solve_sees_t", family=_F, linear=("d",),
           spelling="solve_sees_t(d, lower, assume_a, transposed)",
           derivation="the transpose of solve_sees (pairs added into the triangle read)",
           test_cases=(("OP(a, False, 'sym') * a", [(3, 3)]),
                       ("OP(a, True, 'upper triangular', True) * a", [(3, 3)])))

    defvjp(sl.cholesky,
           lambda g, out, a, lower=False: transpose_if(fold_triangle(np.swapaxes(
               np.linalg.solve(np.swapaxes(transpose_if(out, not lower), -1, -2),
                               np.swapaxes(np.linalg.solve(
                                   np.swapaxes(transpose_if(out, not lower), -1, -2),
                                   phi_lower(np.swapaxes(transpose_if(out, not lower), -1, -2)
                                             @ transpose_if(g, not lower))), -1, -2)),
               -1, -2)), not lower),
           name="scipy_cholesky", family=_F, aliases=(rsl.scipy_cholesky,),
           params=(Param("a"), Param("lower", False)), spelling="scipy_cholesky(a, lower)",
           dtypes=("float64",), domain=SMALL,
           derivation="numpy's cholesky rule with upper = not lower (scipy returns the upper "
           "factor by default and reads that triangle only)",
           test_cases=((f"OP(a @ a.T + {_I3})", [(3, 3)]),
                       (f"OP(a + {_I3}, lower=True)", [(3, 3)]),
                       (f"OP(a + {_I3})", [(3, 3)])))
    defjvp(sl.cholesky,
           lambda g, out, a, lower=False: transpose_if(
               transpose_if(out, not lower) @ phi_lower(np.swapaxes(np.linalg.solve(
                   transpose_if(out, not lower), np.swapaxes(np.linalg.solve(
                       transpose_if(out, not lower),
                       symmetric_from(transpose_if(g, not lower))), -1, -2)), -1, -2)),
               not lower))

    defvjp(sl.solve_triangular,
           lambda g, out, a, b, trans=0, lower=False, unit_diagonal=False: -triangle(
               as_columns(out, b) @ np.swapaxes(as_columns(scipy_solve_triangular(
                   a, g, trans_flip(trans), lower, unit_diagonal), b), -1, -2)
               if trans_is(trans) else
               as_columns(scipy_solve_triangular(a, g, trans_flip(trans), lower,
                                                 unit_diagonal), b)
               @ np.swapaxes(as_columns(out, b), -1, -2), lower, unit_diagonal),
           lambda g, out, a, b, trans=0, lower=False, unit_diagonal=False:
               scipy_solve_triangular(a, g, trans_flip(trans), lower, unit_diagonal),
           name="scipy_solve_triangular", family=_F, aliases=(rsl.scipy_solve_triangular,),
           params=(Param("a"), Param("b"), Param("trans", 0), Param("lower", False),
                   Param("unit_diagonal", False)),
           spelling="scipy_solve_triangular(a, b, trans, lower, unit_diagonal)",
           linear=("b",), dtypes=("float64",), domain=SMALL,
           derivation="x = A^-1 b with A the triangle read: db = A^-T g, dA = -db x^T on "
           "that triangle (trans: A^T x = b, db = A^-1 g, dA = -x db^T)",
           test_cases=((f"OP(a + {_I3}, b, lower=True)", [(3, 3), (3,)]),
                       (f"OP(a + {_I3}, b)", [(3, 3), (3, 2)]),
                       (f"OP(a + {_I3}, b, trans='T', lower=True)", [(3, 3), (3, 2)]),
                       (f"OP(a + {_I3}, b, 1, False, True)", [(3, 3), (3,)])))
    defjvp(sl.solve_triangular,
           lambda g, out, a, b, trans=0, lower=False, unit_diagonal=False:
               -scipy_solve_triangular(a, from_columns(transpose_if(
                   triangle(g, lower, unit_diagonal), trans_is(trans))
                   @ as_columns(out, b), b), trans, lower, unit_diagonal),
           None)

    defvjp(sl.cho_factor,
           lambda g, out, a, lower=False: rsl.cho_factor_grad(g, out, a, lower),
           name="scipy_cho_factor", family=_F, aliases=(rsl.scipy_cho_factor,),
           params=(Param("a"), Param("lower", False)), spelling="scipy_cho_factor(a, lower)",
           dtypes=("float64",), domain=SMALL,
           derivation="(c, lower): c is the factor on one triangle (numpy's cholesky rule) "
           "and a's own entries on the other (g passes there)",
           test_cases=((f"OP(a @ a.T + {_I3}, True)[0]", [(3, 3)]),
                       (f"OP(a + {_I3})[0]", [(3, 3)])))
    defjvp(sl.cho_factor,
           lambda g, out, a, lower=False: rsl.cho_factor_tangent(g, out, a, lower))

    defvjp(sl.cho_solve,
           lambda g, out, c_and_lower, b: rsl.cho_solve_grad_c(g, out, c_and_lower, b),
           lambda g, out, c_and_lower, b: scipy_cho_solve(c_and_lower, g),
           name="scipy_cho_solve", family=_F, aliases=(rsl.scipy_cho_solve,),
           params=(Param("c_and_lower"), Param("b")),
           spelling="scipy_cho_solve(c_and_lower, b)", sequences=("c_and_lower",),
           linear=("b",), dtypes=("float64",), domain=SMALL,
           derivation="x = A^-1 b, A = L L^T from the triangle of c read (U^T U for upper): "
           "db = A^-1 g, dA = -db x^T, dL = (dA + dA^T) L (dU = U (dA + dA^T)) on it",
           test_cases=((f"OP((np.linalg.cholesky(a @ a.T + {_I3}), True), b)",
                        [(3, 3), (3,)]),
                       (f"OP((np.linalg.cholesky(a @ a.T + {_I3}).T, False), b)",
                        [(3, 3), (3, 2)])))
    defjvp(sl.cho_solve,
           lambda g, out, c_and_lower, b: rsl.cho_solve_tangent_c(g, out, c_and_lower, b),
           None)

    defvjp(sl.solve,
           lambda g, out, a, b, lower=False, overwrite_a=False, overwrite_b=False,
           check_finite=True, assume_a=None, transposed=False: solve_sees_t(-(np.linalg.solve(
               np.swapaxes(solve_sees(a, lower, assume_a, transposed), -1, -2),
               as_columns(g, b)) @ np.swapaxes(as_columns(out, b), -1, -2)),
               lower, assume_a, transposed),
           lambda g, out, a, b, lower=False, overwrite_a=False, overwrite_b=False,
           check_finite=True, assume_a=None, transposed=False: from_columns(np.linalg.solve(
               np.swapaxes(solve_sees(a, lower, assume_a, transposed), -1, -2),
               as_columns(g, b)), b),
           name="scipy_solve", family=_F, aliases=(rsl.scipy_solve,),
           params=(Param("a"), Param("b"), Param("lower", False), Param("overwrite_a", False),
                   Param("overwrite_b", False), Param("check_finite", True),
                   Param("assume_a", None), Param("transposed", False)),
           spelling="scipy_solve(a, b, lower, overwrite_a, overwrite_b, check_finite, "
           "assume_a, transposed)", linear=("b",),
           dtypes=("float64",), domain=SMALL,
           derivation="as np.linalg.solve with the matrix M scipy solves with (`solve_sees`: "
           "a; for assume_a 'sym'/'her'/'pos' the triangle read, mirrored; a triangle, the "
           "diagonal or the tridiagonal band where told; transposed where asked): db = M^-T "
           "g, dM = -db x^T, taken back to a by solve_sees' transpose",
           test_cases=((f"OP(a + {_I3}, b)", [(3, 3), (3,)]),
                       (f"OP(a + {_I3}, b)", [(3, 3), (3, 2)]),
                       (f"OP(a + {_I3}, b, assume_a='pos')", [(3, 3), (3, 2)]),
                       (f"OP(a + {_I3}, b, lower=True, assume_a='sym')", [(3, 3), (3,)]),
                       (f"OP(a + {_I3}, b, assume_a='lower triangular')", [(3, 3), (3,)]),
                       (f"OP(a + {_I3}, b, assume_a='tridiagonal')", [(3, 3), (3,)]),
                       (f"OP(a + {_I3}, b, transposed=True)", [(3, 3), (3,)])))
    defjvp(sl.solve,
           lambda g, out, a, b, lower=False, overwrite_a=False, overwrite_b=False,
           check_finite=True, assume_a=None, transposed=False: -from_columns(np.linalg.solve(
               solve_sees(a, lower, assume_a, transposed),
               solve_sees(g, lower, assume_a, transposed) @ as_columns(out, b)), b),
           None)
    defvjp(sl.inv, lambda g, out, a: -np.swapaxes(out, -1, -2) @ g @ np.swapaxes(out, -1, -2),
           name="scipy_inv", family=_F, aliases=(rsl.scipy_inv,), params=(Param("a"),),
           spelling="scipy_inv(a)", dtypes=("float64",), domain=SMALL,
           derivation="as np.linalg.inv: dA = -A^-T G A^-T",
           test_cases=((f"OP(a + {_I3})", [(3, 3)]),))
    defjvp(sl.inv, lambda g, out, a: -out @ g @ out)
    defvjp(sl.toeplitz,
           lambda g, out, c, r=None: toeplitz_grad(g, c, r, "c"),
           lambda g, out, c, r=None: toeplitz_grad(g, c, r, "r"),
           name="scipy_toeplitz", family=_F, aliases=(rsl.scipy_toeplitz,),
           params=(Param("c"), Param("r", None)), spelling="scipy_toeplitz(c, r)",
           dtypes=("float64",),
           derivation="T[i, j] = c[i - j] (i >= j), r[j - i] (i < j; r[0] unread; r None "
           "is c): each argument's cotangent is g summed along its diagonals",
           test_cases=(("OP(a, b)", [(4,), (3,)]), ("OP(a)", [(3,)]),
                       ("OP(a, b) @ a", [(4,), (4,)])))
    defjvp(sl.toeplitz,
           lambda g, out, c, r=None: toeplitz_grad_t(g, c, r, "c"),
           lambda g, out, c, r=None: toeplitz_grad_t(g, c, r, "r"))
    defvjp(rsl.toeplitz_grad,
           lambda g, out, d, c, r, wrt: toeplitz_grad_t(g, c, r, wrt),
           name="toeplitz_grad", family=_F, linear=("d",),
           spelling="toeplitz_grad(d, c, r, wrt)",
           derivation="linear in d (sums along diagonals): its transpose lays a vector along "
           "them (toeplitz_grad_t)",
           test_cases=(("OP(a, np.ones(4), np.ones(3), 'c') * 1.0", [(4, 3)]),))
    defvjp(rsl.toeplitz_grad_t,
           lambda g, out, h, c, r, wrt: toeplitz_grad(g, c, r, wrt),
           name="toeplitz_grad_t", family=_F, linear=("h",),
           spelling="toeplitz_grad_t(h, c, r, wrt)",
           derivation="the transpose of toeplitz_grad",
           test_cases=(("OP(a, np.ones(4), np.ones(3), 'r') * 1.0", [(3,)]),))
    defvjp(sl.det, lambda g, out, a: g * out * np.swapaxes(np.linalg.inv(a), -1, -2),
           name="scipy_det", family=_F, aliases=(rsl.scipy_det,), params=(Param("a"),),
           spelling="scipy_det(a)", dtypes=("float64",), domain=SMALL,
           derivation="as np.linalg.det: dA = g det A A^-T",
           test_cases=((f"OP(a + {_I3})", [(3, 3)]),))
    defjvp(sl.det, lambda g, out, a: out * np.trace(np.linalg.solve(a, g)))
    defvjp(sl.expm,
           lambda g, out, a: scipy_expm(np.concatenate([
               np.concatenate([np.swapaxes(a, -1, -2), g], axis=-1),
               np.concatenate([np.zeros_like(a), np.swapaxes(a, -1, -2)], axis=-1)],
               axis=-2))[..., :a.shape[-1], a.shape[-1]:],
           name="scipy_expm", family=_F, aliases=(rsl.scipy_expm,), params=(Param("a"),),
           spelling="scipy_expm(a)", dtypes=("float64",), domain=SMALL,
           derivation="the matrix exponential: its Frechet derivative L(A, E) is the top-right "
           "block of expm([[A, E], [0, A]]); the VJP is L(A^T, G) (expm(A)^T = expm(A^T)), "
           "itself made of rows, so it is differentiated again",
           test_cases=(("OP(a * 0.5)", [(3, 3)]), ("OP(a * 0.3)", [(2, 2, 2)])))
    defjvp(sl.expm,
           lambda g, out, a: scipy_expm(np.concatenate([
               np.concatenate([a, g], axis=-1),
               np.concatenate([np.zeros_like(a), a], axis=-1)],
               axis=-2))[..., :a.shape[-1], a.shape[-1]:])


    # cho_factor's and cho_solve's rule helpers: first order only, and say so when
    # differentiated again (never zeros)
    defvjp(rsl.cho_factor_grad,
           lambda g, out, ct, c_out, a, lower: unsupported_derivative(_CHO_FACTOR2),
           None, lambda g, out, ct, c_out, a, lower: unsupported_derivative(_CHO_FACTOR2),
           None, name="cho_factor_grad", family="runtime",
           derivation="cho_factor's rule: first order only")
    defvjp(rsl.cho_factor_tangent,
           lambda g, out, t, c_out, a, lower: unsupported_derivative(_CHO_FACTOR2),
           None, lambda g, out, t, c_out, a, lower: unsupported_derivative(_CHO_FACTOR2),
           None, name="cho_factor_tangent", family="runtime",
           derivation="cho_factor's tangent: first order only")
    defvjp(rsl.cho_solve_grad_c,
           lambda g, out, ct, x_out, c_and_lower, b: unsupported_derivative(_CHO_SOLVE2),
           lambda g, out, ct, x_out, c_and_lower, b: unsupported_derivative(_CHO_SOLVE2),
           lambda g, out, ct, x_out, c_and_lower, b: unsupported_derivative(_CHO_SOLVE2),
           lambda g, out, ct, x_out, c_and_lower, b: unsupported_derivative(_CHO_SOLVE2),
           name="cho_solve_grad_c", family="runtime",
           derivation="cho_solve's rule for the factor: first order only")
    defvjp(rsl.cho_solve_tangent_c,
           lambda g, out, t, x_out, c_and_lower, b: unsupported_derivative(_CHO_SOLVE2),
           lambda g, out, t, x_out, c_and_lower, b: unsupported_derivative(_CHO_SOLVE2),
           lambda g, out, t, x_out, c_and_lower, b: unsupported_derivative(_CHO_SOLVE2),
           lambda g, out, t, x_out, c_and_lower, b: unsupported_derivative(_CHO_SOLVE2),
           name="cho_solve_tangent_c", family="runtime",
           derivation="cho_solve's tangent for the factor: first order only")

    for helper, what in ((rsl.cho_factor_grad, "f"), (rsl.cho_factor_tangent, "f"),
                         (rsl.cho_solve_grad_c, "s"), (rsl.cho_solve_tangent_c, "s")):
        if what == "f":
            defjvp(helper, *[lambda g, out, ct, c_out, a, lower:
                             unsupported_derivative(_CHO_FACTOR2)] * 4)
        else:
            defjvp(helper, *[lambda g, out, ct, x_out, c_and_lower, b:
                             unsupported_derivative(_CHO_SOLVE2)] * 4)


_CHO_FACTOR2 = "the second derivative of scipy.linalg.cho_factor"
_CHO_SOLVE2 = "the second derivative of scipy.linalg.cho_solve"


optional_rows("scipy.linalg", _register_rows, helpers=rsl.__name__)
