"""scipy.special's real-valued functions that numpy ML code uses (autograd.scipy.special's and
jax.scipy.special's list): expit, log_expit, logit, erf, erfc, gammaln, digamma (psi),
polygamma, ndtr, log_ndtr, entr, xlogy, xlog1py, betaln, logsumexp, softmax, log_softmax,
softplus (scipy 1.15 and later).

scipy is optional. Importing this module registers nothing and does not import scipy: it
hands `table.optional_rows` the function that registers the rows, which runs once scipy is
imported by the user's code, or when the whole table is listed (docs, op tests) with scipy
installed. Without scipy these rows do not exist and everything else works.

A row is registered for the scipy callable itself (``scipy.special.expit``, however the user
reaches it), so tape mode calls scipy's function; generated code spells it
``special_expit(x)`` (srcad/runtime_special.py: the same call), an alias of the row, so that
generated code can be differentiated again. Derivatives are written with numpy and scipy's own
functions (gammaln' = digamma, digamma' = polygamma(1, .), polygamma(n)' = polygamma(n + 1)),
so each order has a row for the next.

The ufuncs are plain rows, not ``elementwise``: the fuser computes a transcendental with
numpy's own inner loop (srcad/lower/match.py), which scipy's ufuncs are not, so they have no C
expression to fuse yet. Each unary or binary ufunc's Jacobian is diagonal: its VJP rules,
with g the argument's tangent, are its JVP rules; a binary one broadcasts (defvjp's default for
a ufunc of two inputs), and its VJPs are unbroadcast by the transform.

Before/after (source mode):
    p = expit(h)               ->  p = special_expit(h)  ...  dh = dp * p * (1 - p)
"""

import math

import numpy as np

from .. import runtime_special as rsp
from ..runtime import unbroadcast, unreduce
from ..runtime_special import (special_digamma, special_expit, special_i0, special_i1,
                               special_polygamma, special_weights)
from .table import Param, defjvp, defvjp, optional_rows

_F = "scipy.special"
ANY = (-2.0, 2.0)
POS = (0.5, 2.0)
OPEN_UNIT = (0.1, 0.9)


def _diagonal(op):
    """An elementwise function: its VJP rules are its JVP rules (see the module docstring)."""
    op.jvps = op.vjps
    return op


def _register_rows() -> None:
    """The rows (run by `table.optional_rows`, once scipy can be imported)."""
    import scipy.special as sps  # (an optional library: imported only here)

    def row(name, *rules, cases=(("OP(a)", [(3, 4)]),), **meta):
        fn = getattr(sps, name)
        params = {"xlogy": "x, y", "xlog1py": "x, y", "betaln": "a, b",
                  "polygamma": "n, x"}.get(name, "x")
        return _diagonal(defvjp(fn, *rules, name=f"special_{name}", family=_F,
                                spelling=f"special_{name}({params})",
                                aliases=(getattr(rsp, f"special_{name}"),),
                                test_cases=cases, **meta))

    # --- sigmoids and their logarithms ------------------------------------------------------
    row("expit", lambda g, out, x: g * out * (1 - out),
        derivation="expit x = 1 / (1 + e^-x): d = expit x (1 - expit x) dx")
    row("log_expit", lambda g, out, x: g * special_expit(-x),
        derivation="log expit x = -log(1 + e^-x): d = (1 - expit x) dx = expit(-x) dx")
    row("logit", lambda g, out, x: g / (x * (1 - x)), domain=OPEN_UNIT,
        derivation="logit x = log(x / (1 - x)): d = dx / (x (1 - x))")
    if hasattr(sps, "softplus"):  # (scipy 1.15 and later)
        row("softplus", lambda g, out, x: g * special_expit(x),
            derivation="softplus x = log(1 + e^x): d = expit x dx")

    # --- the error function and the normal distribution -------------------------------------
    row("erf", lambda g, out, x: g * (2 / math.sqrt(math.pi)) * np.exp(-x * x),
        derivation="d erf x = 2 / sqrt(pi) e^(-x^2) dx")
    row("erfc", lambda g, out, x: -g * (2 / math.sqrt(math.pi)) * np.exp(-x * x),
        derivation="erfc = 1 - erf: d = -2 / sqrt(pi) e^(-x^2) dx")
    row("ndtr", lambda g, out, x: g * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi),
        derivation="the standard normal cdf: d = the normal pdf e^(-x^2/2) / sqrt(2 pi) dx")
    row("log_ndtr",
        lambda g, out, x: g * np.exp(-0.5 * x * x - out) / math.sqrt(2 * math.pi),
        domain=(-6.0, 2.0),
        derivation="d log ndtr x = pdf(x) / ndtr(x) dx, computed as e^(-x^2/2 - log_ndtr x) / "
        "sqrt(2 pi): no underflow of ndtr far in the left tail")

    row("ndtri", lambda g, out, x: g * math.sqrt(2 * math.pi) * np.exp(0.5 * out * out),
        domain=OPEN_UNIT,
        derivation="the normal quantile, ndtr's inverse: d = dx / pdf(ndtri x) = sqrt(2 pi) "
        "e^(out^2 / 2) dx")
    row("erfinv", lambda g, out, x: g * (math.sqrt(math.pi) / 2) * np.exp(out * out),
        domain=(-0.9, 0.9),
        derivation="erf's inverse: d = dx / erf'(out) = sqrt(pi) / 2 e^(out^2) dx")

    # --- numpy's ufuncs under scipy's names (scipy's own values) ---------------------------
    row("log1p", lambda g, out, x: g / (1 + x), domain=(-0.5, 2.0),
        derivation="log(1 + x): d = dx / (1 + x)")
    row("expm1", lambda g, out, x: g * (out + 1),
        derivation="e^x - 1: d = e^x dx = (out + 1) dx")
    row("cbrt", lambda g, out, x: g / (3 * out * out), domain=POS,
        derivation="x^(1/3): d = dx / (3 out^2)")
    row("i0", lambda g, out, x: g * special_i1(x),
        derivation="the modified Bessel function I0: d = I1(x) dx")
    row("i1",
        lambda g, out, x: g * np.where(x == 0, 0.5, special_i0(x)
                                       - special_i1(x) / np.where(x == 0, 1.0, x)),
        derivation="I1: d = (I0(x) - I1(x) / x) dx (1/2 at x = 0, its limit)")

    # --- gamma and its logarithmic derivatives ------------------------------------------------
    row("gammaln", lambda g, out, x: g * special_digamma(x), domain=POS,
        derivation="d log|Gamma(x)| = digamma(x) dx")
    row("digamma",
        lambda g, out, x: g * special_polygamma(1, x).astype(np.result_type(x)), domain=POS,
        derivation="d digamma x = polygamma(1, x) dx (computed by scipy in float64; the "
        "derivative is rounded to x's dtype)")
    row("polygamma", None,
        lambda g, out, n, x: g * special_polygamma(n + 1, x).astype(np.result_type(out)),
        domain=POS, cases=(("OP(1, a)", [(3, 4)]), ("OP(2, a)", [(3,)])),
        derivation="d polygamma(n, x) = polygamma(n + 1, x) dx, in out's dtype (scipy computes "
        "polygamma in float64); the order n has no derivative")
    row("betaln",
        lambda g, out, a, b: g * (special_digamma(a) - special_digamma(a + b)),
        lambda g, out, a, b: g * (special_digamma(b) - special_digamma(a + b)),
        domain=(POS, POS), cases=(("OP(a, b)", [(3, 1), (4,)]),),
        derivation="log B(a, b) = gammaln a + gammaln b - gammaln(a + b): d = (digamma a - "
        "digamma(a + b)) da + (digamma b - digamma(a + b)) db")

    # --- entropies ------------------------------------------------------------------------------
    row("entr", lambda g, out, x: -g * (np.log(x) + 1), domain=POS,
        derivation="entr x = -x log x: d = -(log x + 1) dx")
    row("xlogy", lambda g, out, x, y: g * np.log(y), lambda g, out, x, y: g * x / y,
        domain=(ANY, POS), cases=(("OP(a, b)", [(3, 1), (4,)]),),
        derivation="x log y (0 where x = 0): d = log y dx + x / y dy (the true derivative in x "
        "at x = 0 too: log y, not torch's 0)")
    row("xlog1py", lambda g, out, x, y: g * np.log1p(y), lambda g, out, x, y: g * x / (1 + y),
        domain=(ANY, (-0.5, 2.0)), cases=(("OP(a, b)", [(3, 4), (3, 4)]),),
        derivation="x log(1 + y): d = log(1 + y) dx + x / (1 + y) dy")

    # --- reductions over an axis: logsumexp, softmax, log_softmax --------------------------
    _lse = defvjp(
        sps.logsumexp,
        lambda g, out, a, axis=None, b=None, keepdims=False:
            unreduce(g, a, axis, keepdims) * special_weights(b, a)
            * np.exp(a - unreduce(np.where(out == -np.inf, np.inf, out), a, axis, keepdims)),
        None,
        lambda g, out, a, axis=None, b=None, keepdims=False:
            unbroadcast(unreduce(g, a, axis, keepdims)
                        * np.exp(a - unreduce(np.where(out == -np.inf, np.inf, out), a, axis,
                                              keepdims)), b),
        None,
        name="special_logsumexp", family=_F, aliases=(rsp.special_logsumexp,),
        spelling="special_logsumexp(a, axis, b, keepdims)",
        domain=(ANY, POS),
        derivation="out = log sum(b e^a) over axis: da = g b e^(a - out), db = g e^(a - out) "
        "(b broadcast to a's shape; return_sign= is not taken; 0 where out = -inf: every term "
        "-inf)",
        test_cases=(("OP(a, axis=1)", [(3, 4)]),
                    ("OP(a, axis=0, b=b, keepdims=True)", [(3, 4), (4,)])))
    defjvp(sps.logsumexp,
           lambda g, out, a, axis=None, b=None, keepdims=False:
               np.sum(g * special_weights(b, a)
                      * np.exp(a - unreduce(np.where(out == -np.inf, np.inf, out), a, axis,
                                            keepdims)), axis=axis, keepdims=keepdims),
           None,
           lambda g, out, a, axis=None, b=None, keepdims=False:
               np.sum(g * np.exp(a - unreduce(np.where(out == -np.inf, np.inf, out), a, axis,
                                              keepdims)), axis=axis, keepdims=keepdims),
           None)
    del _lse
    _diagonal(defvjp(
        sps.softmax,
        lambda g, out, x, axis=None: out * (g - np.sum(g * out, axis=axis, keepdims=True)),
        None,
        name="special_softmax", family=_F, aliases=(rsp.special_softmax,),
        spelling="special_softmax(x, axis)",
        derivation="s = e^x / sum e^x over axis: its Jacobian diag(s) - s s^T is symmetric, so "
        "one rule is the VJP and the JVP: s (g - sum(g s))",
        test_cases=(("OP(a, axis=-1)", [(3, 4)]), ("OP(a)", [(2, 3)]))))
    defvjp(sps.log_softmax,
           lambda g, out, x, axis=None: g - np.exp(out) * np.sum(g, axis=axis, keepdims=True),
           None,
           name="special_log_softmax", family=_F, aliases=(rsp.special_log_softmax,),
           spelling="special_log_softmax(x, axis)",
           derivation="out = x - logsumexp x over axis: dx = g - softmax(x) sum g; its JVP "
           "t - sum(softmax(x) t)",
           test_cases=(("OP(a, axis=1)", [(3, 4)]),))
    defjvp(sps.log_softmax,
           lambda g, out, x, axis=None: g - np.sum(np.exp(out) * g, axis=axis, keepdims=True),
           None)

    # --- the rules' helper, as a row (generated code calling it is differentiated again) ---
    defvjp(rsp.special_weights, lambda g, out, b, a: unbroadcast(g, b), None,
           name="special_weights", family="runtime", linear=("b",),
           params=(Param("b"), Param("a")),
           derivation="b broadcast to a's shape: linear in b, transposed by unbroadcast")


optional_rows("scipy.special", _register_rows, helpers=rsp.__name__)
