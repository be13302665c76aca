"""Data-dependent gathers: np.delete, np.compress (and x.compress), np.extract, np.trim_zeros,
np.unique and numpy 2's unique_values / unique_all / unique_counts / unique_inverse, the set
operations intersect1d, setdiff1d, union1d, setxor1d; and np.bincount's weights. Family
"gathers".

Which elements each keeps is decided from the data -- the nonzeros of a condition, the first
occurrence of each distinct value -- and that decision is piecewise constant: the value is a
gather ``x.ravel()[idx]`` (or along an axis) of its input, with ``idx`` an index computed in
srcad/runtime_gathers.py (no gradient). So the VJP is a scatter-add of g at idx (np.take's,
`untake`) and the JVP the same gather of the tangent (np.take; for np.delete, np.compress and
np.extract, whose index does not read the values, the op applied to the tangent). Of tied
values the first occurrence gets the cotangent (JAX's choice: its unique gathers at
``return_index``); the integer outputs (return_index=, return_inverse=, return_counts=,
return_indices=) carry none. np.bincount is linear in its weights: a scatter-add whose
transpose reads g at each element's bin.
"""

import inspect

import numpy as np

from .. import runtime_gathers as rg
from ..runtime import unindex, untake
from ..runtime_gathers import (
    bincount_grad,
    compress_index,
    delete_index,
    hist_counts,
    hist_counts_grad,
    histdd_counts,
    histdd_counts_grad,
    hist_edges_grad,
    hist_edges_tangent,
    set_grad,
    set_tangent,
    trim_index,
    unique_grad,
    unique_tangent,
)
from .table import defjvp, defnondiff, defvjp

_F = "gathers"
_RT = "runtime"
_FIRST = ("a gather of the first occurrence of each distinct value (JAX's choice; its "
          "integer outputs carry no gradient): g scatter-added there")

# --- index-driven: the index does not read the values, so each is linear in its array --------
defvjp(np.delete, lambda g, out, arr, obj, axis=None:
       untake(g, arr, delete_index(arr, obj, axis), axis), None, None,
       name="delete", linear=("arr",), family=_F,
       derivation="a gather of the positions kept (flat for axis=None): g scatter-added back "
       "there, zeros at the deleted ones",
       test_cases=(("np.delete(a, 1)", [(4,)]), ("np.delete(a, [0, 2], axis=1)", [(3, 4)]),
                   ("np.delete(a, [0, 0, 5])", [(2, 3)]),
                   ("np.delete(a, slice(1, 3), 0)", [(4, 2)]),
                   ("np.delete(a, np.array([True, False, True]), axis=-1)", [(2, 3)])))
defvjp(np.compress, None, lambda g, out, condition, a, axis=None:
       untake(g, a, compress_index(condition), axis), None,
       name="compress", linear=("a",), family=_F,
       derivation="a gather of the positions where condition is true (flat for axis=None): g "
       "scatter-added back there",
       test_cases=(("np.compress(a > 0, a)", [(6,)]),
                   ("np.compress([True, False, True], a, axis=1)", [(2, 3)]),
                   ("np.compress(np.array([0, 1]), a, axis=0)", [(3, 2)]),
                   ("np.compress(a[0] > 0, a * b, axis=1)", [(2, 5), (5,)]),
                   ("a.compress(a[:, 0] > -5, axis=0)", [(3, 2)])))
defvjp(np.extract, None, lambda g, out, condition, arr: untake(g, arr, compress_index(condition)),
       name="extract", linear=("arr",), family=_F,
       derivation="ravel(arr) gathered where ravel(condition) is nonzero: g scatter-added back",
       test_cases=(("np.extract(a > 0.5, a)", [(3, 4)]),
                   ("np.extract(np.array([[1, 0], [0, 2]]), a)", [(2, 2)])))

# --- value-driven: trim_zeros, unique, the set operations ----------------------------------------
_TRIM_CASES = (("np.trim_zeros(np.concatenate([np.zeros(2), a, np.zeros(1)]))", [(3,)]),
               ("np.trim_zeros(np.concatenate([np.zeros(2), a]), 'b')", [(3,)]),
               ("np.trim_zeros(np.concatenate([a, np.zeros(2)]), trim='f')", [(3,)]))
if "axis" in inspect.signature(np.trim_zeros).parameters:  # (numpy 2.2)
    _TRIM_CASES += (("np.trim_zeros(np.pad(a, 1), axis=0)", [(2, 3)]),
                    ("np.trim_zeros(np.pad(a, ((0, 1), (2, 0))))", [(2, 3)]))
defvjp(np.trim_zeros, lambda g, out, filt, trim="fb", axis=None:
       unindex(g, filt, trim_index(filt, trim, axis)), None, None,
       name="trim_zeros", family=_F,
       derivation="a slice whose bounds are the first and last nonzeros (piecewise constant): g "
       "placed back there; the trimmed zeros get none",
       test_cases=_TRIM_CASES)
defjvp(np.trim_zeros, lambda g, out, filt, trim="fb", axis=None: g[trim_index(filt, trim, axis)])

defvjp(np.unique, lambda g, out, ar, return_index=False, return_inverse=False,
       return_counts=False, axis=None, equal_nan=True, sorted=True:
       unique_grad(g, ar, out, axis, equal_nan), None, None, None, None, None, None,
       name="unique", family=_F, derivation=_FIRST + " (of each distinct subarray along axis=)",
       test_cases=(("np.unique(a)", [(5,)]), ("np.unique(np.concatenate([a, a[::-1]]))", [(4,)]),
                   ("np.unique(a, return_index=True)[0]", [(2, 3)]),
                   ("np.unique(a, return_inverse=True)[0] * np.unique(a, return_counts=True)[1]",
                    [(4,)]),
                   ("np.unique(a)[np.unique(a, return_inverse=True)[1]]", [(2, 3)]),
                   ("np.unique(np.concatenate([a, a]), axis=0)", [(2, 3)]),
                   ("np.unique(np.concatenate([a, a[:, :1]], 1), axis=1)", [(2, 3)]),
                   ("np.unique(a, axis=-1)", [(4,)])))
defjvp(np.unique, lambda g, out, ar, return_index=False, return_inverse=False,
       return_counts=False, axis=None, equal_nan=True, sorted=True:
       unique_tangent(g, ar, out, axis, equal_nan), None, None, None, None, None, None)

for _name, _cases in (("unique_values", (("np.sort(np.unique_values(a))", [(5,)]),
                                         ("np.sort(np.unique_values(np.stack([a, a])))",
                                          [(3,)]))),
                      ("unique_all", (("np.unique_all(np.concatenate([a, a]))[0]", [(4,)]),)),
                      ("unique_counts", (("np.unique_counts(a)[0] * 2.0", [(2, 3)]),
                                         ("np.unique_counts(np.concatenate([a, a]))[0] * "
                                          "np.unique_counts(np.concatenate([a, a]))[1]",
                                          [(3,)]))),
                      ("unique_inverse", (("np.unique_inverse(a)[0]", [(5,)]),
                                          ("np.unique_inverse(a)[0][np.unique_inverse(a)[1]]",
                                           [(2, 3)])))):
    _fn = getattr(np, _name, None)
    if _fn is None:  # (numpy 2.0)
        continue
    defvjp(_fn, lambda g, out, x: unique_grad(g, x, out), name=_name, family=_F,
           derivation=_FIRST, test_cases=_cases)
    defjvp(_fn, lambda g, out, x: unique_tangent(g, x, out))

_SET = ("the values are gathered from ravel(ar1) then ravel(ar2) at the first occurrence of "
        "each (JAX's choice): g scatter-added there; {}")
defvjp(np.intersect1d, lambda g, out, ar1, ar2, assume_unique=False, return_indices=False:
       set_grad(g, out, ar1, ar2, 0), None, None, None,
       name="intersect1d", family=_F,
       derivation=_SET.format("a common value is read from ar1 (ar2 gets no gradient)"),
       test_cases=(("np.intersect1d(a, np.concatenate([a[1:3], b]))", [(4,), (3,)]),
                   ("np.intersect1d(np.concatenate([a, b]), b[::-1], return_indices=True)[0]",
                    [(3,), (2,)])))
defjvp(np.intersect1d, lambda g, out, ar1, ar2, assume_unique=False, return_indices=False:
       set_tangent(g, out, ar1, ar2, 0), None, None, None)
defvjp(np.setdiff1d, lambda g, out, ar1, ar2, assume_unique=False:
       set_grad(g, out, ar1, ar2, 0), None, None,
       name="setdiff1d", family=_F,
       derivation=_SET.format("ar2 only removes values (no gradient)"),
       test_cases=(("np.setdiff1d(np.concatenate([a, b, a]), b)", [(3,), (2,)]),
                   ("np.setdiff1d(a, a[1:])", [(2, 2)])))
defjvp(np.setdiff1d, lambda g, out, ar1, ar2, assume_unique=False:
       set_tangent(g, out, ar1, ar2, 0), None, None)
defvjp(np.union1d, lambda g, out, ar1, ar2: set_grad(g, out, ar1, ar2, 0),
       lambda g, out, ar1, ar2: set_grad(g, out, ar1, ar2, 1),
       name="union1d", family=_F, derivation=_SET.format("both inputs"),
       test_cases=(("np.union1d(a, b)", [(3,), (2, 2)]),
                   ("np.union1d(a, np.concatenate([b, a[:1]]))", [(3,), (2,)])))
defjvp(np.union1d, lambda g, out, ar1, ar2: set_tangent(g, out, ar1, ar2, 0),
       lambda g, out, ar1, ar2: set_tangent(g, out, ar1, ar2, 1))
defvjp(np.setxor1d, lambda g, out, ar1, ar2, assume_unique=False: set_grad(g, out, ar1, ar2, 0),
       lambda g, out, ar1, ar2, assume_unique=False: set_grad(g, out, ar1, ar2, 1), None,
       name="setxor1d", family=_F, derivation=_SET.format("both inputs"),
       test_cases=(("np.setxor1d(np.concatenate([a, b[:1]]), b)", [(3,), (2,)]),
                   ("np.setxor1d(a, b, assume_unique=True)", [(3,), (2,)])))
defjvp(np.setxor1d, lambda g, out, ar1, ar2, assume_unique=False: set_tangent(g, out, ar1, ar2, 0),
       lambda g, out, ar1, ar2, assume_unique=False: set_tangent(g, out, ar1, ar2, 1), None)

# --- np.bincount ------------------------------------------------------------------------------------
defvjp(np.bincount, None, lambda g, out, x, weights=None, minlength=0:
       bincount_grad(g, x, weights), None,
       name="bincount", linear=("weights",), family=_F,
       derivation="out[k] = sum of the weights of the elements equal to k (a scatter-add, in "
       "float64): g read at each element's bin, in the weights' dtype; x (integers) and the "
       "counts without weights carry none",
       test_cases=(("np.bincount(np.array([0, 2, 2, 4]), a)", [(4,)]),
                   ("np.bincount(np.array([1, 1, 0]), weights=a, minlength=5)", [(3,)]),
                   ("np.bincount(np.array([0, 3]), a * b)", [(2,), (2,)]),
                   ("np.bincount(np.array([2, 2, 2]), a)[2] * a", [(3,)])))

# --- np.histogram (srcad/pyfuncs.py's histogram: these two rows, then density as numpy) -------
defvjp(np.histogram_bin_edges, lambda g, out, a, bins=10, range=None, weights=None:
       hist_edges_grad(g, a, out, bins, range),
       lambda g, out, a, bins=10, range=None, weights=None: g, None, None,
       name="histogram_bin_edges", no_rule_for=("range",), family=_F,
       derivation="linspace(min(a), max(a), n + 1) when no range= is given and bins is a "
       "number or an estimator's name (n piecewise constant): edge k moves with min(a) by "
       "1 - k/n and with max(a) by k/n (ties split evenly, as min and max; JAX's); constant "
       "edges otherwise; a bins= array is the edges (its cotangent is g); a differentiated "
       "range= is refused",
       test_cases=(("np.histogram_bin_edges(a, 4)", [(5,)]),
                   ("np.histogram_bin_edges(a, 'sturges') * 2.0", [(2, 3)]),
                   ("np.histogram_bin_edges(np.concatenate([a, a]), 3)", [(4,)]),
                   ("np.histogram_bin_edges(a, 3, range=(-1.0, 1.0)) + a[0]", [(4,)]),
                   ("np.histogram_bin_edges(a, np.sort(b)) * 2.0", [(3,), (4,)])))
defjvp(np.histogram_bin_edges, lambda g, out, a, bins=10, range=None, weights=None:
       hist_edges_tangent(g, a, out, bins, range),
       lambda g, out, a, bins=10, range=None, weights=None: g, None, None)
defvjp(rg.hist_counts, None, None, None, lambda g, out, a, bins=10, range=None, weights=None:
       hist_counts_grad(g, a, bins, range, weights),
       name="hist_counts", linear=("weights",), family=_RT,
       derivation="np.histogram's counts: a scatter-add of the weights by bin (piecewise "
       "constant in a); g read at each element's bin, zero outside the range")
defvjp(rg.histdd_counts, None, None, None,
       lambda g, out, sample, bins=10, range=None, weights=None:
       histdd_counts_grad(g, sample, bins, range, weights),
       name="histdd_counts", linear=("weights",), family=_RT,
       derivation="np.histogramdd's (np.histogram2d's) counts: a scatter-add of the weights by "
       "cell (piecewise constant in the points); g read at each point's cell, zero outside "
       "the edges")

# --- the helpers as rows --------------------------------------------------------------------------
for _fn in (rg.delete_index, rg.compress_index, rg.trim_index, rg.first_index):
    defnondiff(_fn, name=_fn.__name__, family=_RT)
defvjp(rg.unique_grad, lambda g, out, ct, ar, value, axis=None, equal_nan=True:
       unique_tangent(g, ar, value, axis, equal_nan), None, None, None, None,
       name="unique_grad", linear=("ct",), family=_RT,
       derivation="unique's VJP (a scatter-add at the first occurrences); its transpose gathers")
defvjp(rg.unique_tangent, lambda g, out, t, ar, value, axis=None, equal_nan=True:
       unique_grad(g, ar, value, axis, equal_nan), None, None, None, None,
       name="unique_tangent", linear=("t",), family=_RT,
       derivation="unique's JVP (a gather at the first occurrences); its transpose scatters")
defvjp(rg.set_grad, lambda g, out, ct, value, ar1, ar2, which=0:
       set_tangent(g, value, ar1, ar2, which), None, None, None, None,
       name="set_grad", linear=("ct",), family=_RT,
       derivation="a set operation's VJP in one input (a scatter-add); its transpose gathers")
defvjp(rg.set_tangent, lambda g, out, t, value, ar1, ar2, which=0:
       set_grad(g, value, ar1, ar2, which), None, None, None, None,
       name="set_tangent", linear=("t",), family=_RT,
       derivation="a set operation's JVP from one input (a gather); its transpose scatters")
defvjp(rg.hist_counts_grad, lambda g, out, ct, a, bins=10, range=None, weights=None:
       hist_counts(a, bins, range, g), None, None, None, None,
       name="hist_counts_grad", linear=("ct",), family=_RT,
       derivation="hist_counts' VJP (a gather at the bins); its transpose is hist_counts")
defvjp(rg.histdd_counts_grad, lambda g, out, ct, sample, bins=10, range=None, weights=None:
       histdd_counts(sample, bins, range, g), None, None, None, None,
       name="histdd_counts_grad", linear=("ct",), family=_RT,
       derivation="histdd_counts' VJP (a gather at the cells); its transpose is histdd_counts")
defvjp(rg.hist_edges_grad, lambda g, out, ct, a, edges, bins=10, range=None:
       hist_edges_tangent(g, a, edges, bins, range), None, None, None, None,
       name="hist_edges_grad", linear=("ct",), family=_RT,
       derivation="histogram_bin_edges' VJP (to min(a), max(a)); its transpose spreads them")
defvjp(rg.hist_edges_tangent, lambda g, out, t, a, edges, bins=10, range=None:
       hist_edges_grad(g, a, edges, bins, range), None, None, None, None,
       name="hist_edges_tangent", linear=("t",), family=_RT,
       derivation="histogram_bin_edges' JVP; its transpose gathers at min(a), max(a)")
defvjp(rg.bincount_grad, lambda g, out, ct, x, weights: np.bincount(x, g, np.size(ct)),
       None, None,
       name="bincount_grad", linear=("ct",), family=_RT,
       derivation="bincount's VJP (a gather at the bins); its transpose is bincount")
