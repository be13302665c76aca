"""The census: every public callable of numpy that people apply to arrays, classified.

Scope: the public callables of `numpy`, `numpy.linalg` and `numpy.fft`, the methods and
attributes of `numpy.ndarray`, the ufunc methods (``np.add.reduce``), and the functions of
Python's `builtins` (the ones applied to arrays and numbers), `operator`, `math` and
`statistics`. Each name is in one of three classes:

* **differentiated** -- it has a row in the op table (`srcad.ops.lookup`), or it is an
  ndarray method / attribute or a builtin the normaliser lowers to such a row
  (srcad/frontend/methods.py). Read off the table, never listed here.
* **no gradient** -- its result carries no derivative: a bool or integer result, a
  constructor from shapes, a type, printing or configuration. A row without a rule (argmax,
  comparisons) is read off the table; the others are listed here with their reason.
* **refused** -- it has a real-valued derivative srcad has no rule for (or none exists in
  srcad's scope: complex numbers, Python callbacks); given a differentiated value, the call is
  a `SrcadError` at the user's line (srcad/analysis/refusals.py), never a silent zero. Listed
  here with the reason and, where there is one, what to write instead.

`census()` answers the whole table; docs/ops.md shows it with counts per class
(srcad/analysis/docs.py), and tests/test_census.py fails when the installed numpy has a public
name this module does not classify. Names only some numpy versions have (numpy 1.26's
``np.product``, numpy 2's ``np.unstack``) are listed once; a listed name missing in the
installed numpy is skipped.
"""

from __future__ import annotations

import builtins
import math
import operator
import statistics
import types
from typing import NamedTuple

import numpy as np

from ..frontend.methods import ATTRIBUTES, METHODS  # (the normaliser's tables)
from ..ops.table import lookup

DIFFERENTIATED = "differentiated"
NO_GRADIENT = "no gradient"
REFUSED = "refused"
CLASSES = (DIFFERENTIATED, NO_GRADIENT, REFUSED)

# --- no gradient: reason -> names (qualified as the census prints them) ----------------------
_BOOL = "a bool result (a test or comparison): piecewise constant"
_INT = "an integer result (indices, counts, bits): piecewise constant"
_PIECEWISE = "piecewise constant: its derivative is 0 wherever it exists"
_CONSTRUCTOR = "a constructor from shapes, files or sizes: no array argument to differentiate"
_META = "printing, configuration, I/O or type introspection: no numeric result"
_TYPE = "a type or class (an integer, bool, string or datetime cast carries no gradient)"
_ARRAY_META = "array metadata (memory, flags, strides): no numeric result"

NO_GRADIENT_NAMES: dict[str, str] = {
    _BOOL: """np.allclose np.array_equal np.array_equiv np.isclose np.iscomplex np.iscomplexobj
        np.isfortran np.isin np.isinf np.isnat np.isneginf np.isposinf np.isreal np.isrealobj
        np.isscalar np.issubdtype np.isdtype np.iterable np.may_share_memory np.shares_memory
        np.signbit np.logical_xor np.can_cast np.is_busday np.in1d np.issctype np.issubclass_
        np.issubsctype np.alltrue np.sometrue ndarray.all ndarray.any
        builtins.all builtins.any builtins.bool builtins.isinstance builtins.callable
        operator.eq operator.ne operator.lt operator.le operator.gt operator.ge operator.not_
        operator.truth operator.is_ operator.is_not operator.contains
        math.isclose math.isfinite math.isinf math.isnan""",
    _INT: """np.argwhere np.count_nonzero np.digitize np.flatnonzero np.nonzero
        np.nanargmax np.nanargmin np.searchsorted np.lexsort np.ravel_multi_index
        np.unravel_index np.diag_indices np.diag_indices_from np.tril_indices
        np.tril_indices_from np.triu_indices np.triu_indices_from np.mask_indices np.indices
        np.ix_ np.ndindex np.gcd np.lcm np.bitwise_count np.bitwise_invert np.bitwise_not
        np.bitwise_xor np.bitwise_left_shift np.bitwise_right_shift np.left_shift
        np.right_shift np.invert np.packbits np.unpackbits np.busday_count np.busday_offset
        np.linalg.matrix_rank ndarray.argpartition ndarray.argsort ndarray.nonzero
        ndarray.searchsorted builtins.len builtins.int builtins.hash builtins.range
        builtins.id operator.index operator.indexOf operator.countOf operator.length_hint
        operator.and_ operator.or_ operator.xor operator.inv operator.invert operator.lshift
        operator.rshift math.comb math.factorial math.gcd math.isqrt math.lcm math.perm""",
    _PIECEWISE: """np.rint np.trunc np.fix np.around np.round_ np.spacing np.heaviside
        np.floor_divide ndarray.round builtins.round math.ceil math.floor math.trunc
        math.ulp operator.floordiv operator.mod""",
    _CONSTRUCTOR: """np.identity np.fromfunction np.fromiter np.frombuffer np.fromfile
        np.fromstring np.fromregex np.genfromtxt np.loadtxt np.load np.memmap np.bartlett
        np.blackman np.hamming np.hanning np.kaiser np.from_dlpack np.recfromcsv
        np.recfromtxt np.fft.fftfreq np.fft.rfftfreq np.DataSource""",
    _META: """np.array2string np.array_repr np.array_str np.base_repr np.binary_repr
        np.format_float_positional np.format_float_scientific np.datetime_as_string
        np.typename np.info np.get_include np.get_printoptions np.set_printoptions
        np.printoptions np.getbufsize np.setbufsize np.geterr np.seterr np.geterrcall
        np.seterrcall np.errstate np.show_config np.show_runtime np.test np.save np.savetxt
        np.savez np.savez_compressed np.einsum_path np.broadcast_shapes np.min_scalar_type
        np.mintypecode np.promote_types np.common_type np.finfo np.iinfo np.datetime_data
        np.busdaycalendar np.broadcast np.flatiter np.nested_iters np.add_docstring
        np.add_newdoc np.add_newdoc_ufunc np.byte_bounds np.deprecate np.deprecate_with_doc
        np.disp np.find_common_type np.format_parser np.get_array_wrap np.geterrobj
        np.seterrobj np.lookfor np.maximum_sctype np.obj2sctype np.safe_eval np.sctype2char
        np.set_numeric_ops np.set_string_function np.source np.who np.RankWarning
        np.compare_chararrays np.linalg.LinAlgError np.linalg.test np.fft.test
        builtins.print builtins.repr builtins.str builtins.format builtins.type
        ndarray.dump ndarray.dumps ndarray.tobytes ndarray.tofile ndarray.tostring
        ndarray.to_device ndarray.setflags operator.attrgetter operator.itemgetter
        operator.methodcaller statistics.StatisticsError""",
    _TYPE: """np.bool np.bool_ np.byte np.bytes_ np.character np.datetime64 np.dtype
        np.flexible np.floating np.generic np.inexact np.int8 np.int16 np.integer np.longlong
        np.ndarray np.number np.object_ np.recarray np.record np.short np.signedinteger
        np.str_ np.timedelta64 np.ubyte np.ufunc np.uint np.uint8 np.uint16 np.uint32
        np.uint64 np.uintc np.uintp np.ulong np.ulonglong np.unsignedinteger np.ushort
        np.void np.chararray np.string_ np.unicode_ np.int_ np.intc np.intp np.long
        np.int32 np.int64""",
    _ARRAY_META: """ndarray.base ndarray.ctypes ndarray.data ndarray.device ndarray.flags
        ndarray.itemsize ndarray.nbytes ndarray.strides ndarray.byteswap
        ndarray.newbyteorder""",
}

# --- refused: reason -> names ----------------------------------------------------------------
_COMPLEX = "complex-valued: complex numbers are out of srcad's scope"
_CALLBACK = ("takes a Python function numpy calls as a black box: write the loop or the "
             "vectorised expression itself (srcad differentiates that)")
_INPLACE = ("writes into its argument in place: write `y = x.copy(); y[i] = v` (copy-on-write "
            "indexing has a rule) or the out-of-place function")
_NO_RULE = "a real derivative exists; no rule yet (register one with srcad.defvjp)"
_REMOVED = ("removed in numpy 2 (deprecated before): write np.asarray(a, dtype=float), "
            "a.T.copy() or np.sort(a, axis=0), which have rows")
_PY_SCALAR = ("a Python-level function on Python numbers: no rule; use the numpy function on "
              "arrays (np.sqrt, np.sum, np.mean, np.multiply, ...), which has one")
_MATRIX = "np.matrix semantics (`*` is a matrix product): use arrays and `@`"
_EXTENDED = "extended precision (long double): no rule; use float64"
_METHOD_FORM = ("the method form is not lowered to the row; call the numpy function "
                "(np.conj(x), np.real(x), np.sort(x), np.partition(x, k), x[...] = v)")
_BITS = ("reads the array's bytes as another dtype (x.view(np.int64), x.getfield): no derivative "
         "of a reinterpretation; x.view() of the same dtype is x itself: use x")
_TOLIST = ("nested lists of Python numbers: a gradient would have to follow each one; use "
           "x.item(i) (a row) for an element, or keep the array")

REFUSED_NAMES: dict[str, str] = {
    _COMPLEX: """np.cdouble np.clongdouble np.complex128 np.complex256 np.complex64
        np.complexfloating np.csingle np.sort_complex np.roots np.cfloat np.clongfloat
        np.complex_ np.longcomplex np.singlecomplex np.linalg.eig np.linalg.eigvals
        np.fft.fft np.fft.fft2 np.fft.fftn np.fft.hfft np.fft.ifft np.fft.ifft2 np.fft.ifftn
        np.fft.ihfft np.fft.irfft np.fft.irfft2 np.fft.irfftn np.fft.rfft np.fft.rfft2
        np.fft.rfftn builtins.complex""",
    _CALLBACK: """np.frompyfunc builtins.filter operator.call""",
    _INPLACE: """ndarray.resize ndarray.setfield
        ndarray.itemset operator.setitem operator.delitem operator.iadd
        operator.iand operator.iconcat operator.ifloordiv operator.ilshift operator.imatmul
        operator.imod operator.imul operator.ior operator.ipow operator.irshift
        operator.isub operator.itruediv operator.ixor""",
    _MATRIX: "np.matrix np.asmatrix np.bmat np.mat",
    _EXTENDED: "np.float128 np.longdouble np.longfloat",
    _BITS: "ndarray.getfield ndarray.view",
    _PY_SCALAR: """builtins.divmod operator.concat
        math.fma math.frexp math.ldexp math.modf math.nextafter math.remainder math.sumprod
        statistics.linear_regression
        statistics.LinearRegression statistics.NormalDist statistics.kde
        statistics.kde_random statistics.median_grouped
        statistics.mode statistics.multimode
        statistics.quantiles""",
    _REMOVED: "np.asfarray np.fastCopyAndTranspose np.msort",
}

# builtins people apply to arrays and numbers (the rest of `builtins` is not about arrays)
BUILTINS = ("abs all any bool callable complex divmod enumerate filter float format hash id "
            "int isinstance iter len list map max min next pow print range repr reversed round "
            "sorted str sum tuple type zip").split()
# lowered by the normaliser to rows or to loops over subscripts (srcad/frontend)
_LOWERED_BUILTINS = {
    "abs": "np.absolute", "max": "np.maximum (two arguments) or a reduction over a sequence",
    "min": "np.minimum (two arguments) or a reduction over a sequence",
    "sum": "a sum over a sequence (loops lowered to subscripts)",
    "enumerate": "lowered to subscripts", "zip": "lowered to subscripts",
    "reversed": "lowered to subscripts", "list": "row `list`", "tuple": "row `tuple`",
}

# numpy's in-place writers, lowered by the normaliser to the subscript assignment they
# perform (frontend/pylower.py), differentiated copy-on-write like `x[i] = v`
_LOWERED_NUMPY = {
    "np.put": "lowered to a[put_index(a, ind, mode)] = ravel(v)[put_take(v, ind)] (copy on "
              "write; a short v repeated)",
    "ndarray.put": "x.put(indices, values, mode) lowered as np.put (copy on write)",
    "np.put_along_axis": "lowered to a[along_axis_index(a, indices, axis)] = values (copy on "
                         "write; values broadcast, a repeated index keeps the last write)",
    "np.place": "lowered to a[mask_index(a, mask)] = ravel(vals)[place_take(vals, mask, a)] "
                "(copy on write; vals repeated)",
    "np.putmask": "lowered to a[mask_index(a, mask)] = ravel(values)[putmask_take(values, "
                  "mask, a)] (copy on write; values repeated by flat position)",
    "np.copyto": "lowered to dst[...] = src (np.where(where, src, dst) with where=)",
    "np.fill_diagonal": "lowered to a[diagonal_index(a, wrap)] = val (copy on write)",
    "ndarray.fill": "x.fill(v) lowered to x[...] = v (copy on write)",
    "ndarray.sort": "x.sort() lowered to x[...] = np.sort(x) (copy on write)",
    "ndarray.partition": "x.partition(k) lowered to x[...] = np.partition(x, k)",
    "np.piecewise": "lowered to numpy's loop: y = zeros_like(x); y[c] = f(x[c]) per condition "
                    "(later ones win, then the default); condlist a list display, one "
                    "condition, or a value read as numpy reads it",
    "np.vectorize": "np.vectorize(f)(x, ...) and global / decorated vectorize objects lowered to "
                    "a loop calling f per broadcast element (f may branch on it), also "
                    "held in a local; signature= loops over the non-core "
                    "dimensions, excluded= arguments pass whole; several outputs (the "
                    "signature's, or f returning a tuple display) a tuple of arrays; otypes "
                    "other than float types are refused",
    "np.apply_along_axis": "lowered to a loop over the 1-d slices, results stacked, their axes "
                           "where the axis was (numpy's layout)",
    "np.apply_over_axes": "lowered to numpy's loop: a = f(a, axis) per axis, a result that "
                          "dropped the axis given it back (np.expand_dims)",
    "np.nditer": "`for v in np.nditer(x)` (read only, order=) lowered to `for i in "
                 "nditer_indices(...): v = x[i]`, the items in nditer's order (memory order "
                 "for 'K'; frontend/pyforms.py, the tape reads the same indices); a write "
                 "through it (op_flags=['readwrite']), several operands or other flags are "
                 "refused",
    "np.ndenumerate": "`for idx, v in np.ndenumerate(a)` lowered to `for idx in "
                      "np.ndindex(np.shape(a)): v = a[idx]` (frontend/ndenumerate.py; the "
                      "tape walks the same indices): each item an index of the array",
    "ufunc.at": "np.add.at / subtract / multiply / maximum / minimum / negative.at lowered to "
                "a[...] = add_at(a, indices, b) (copy on write; repeated indices accumulate); "
                "other ufuncs' are refused (no rule yet)",
}

# Python-level functions srcad calls in their place a function of srcad/pyfuncs.py (traced as
# user code in both modes) or rewrites into constructs it differentiates (frontend/pylevel.py)
_PYFUNCS = ("srcad/pyfuncs.py's {}: np.array of the items, then a row whose value is Python's "
            "own (exact sums, correctly rounded)")
_LOWERED_PYTHON = {
    "builtins.iter": "it = iter(xs) of a list, a tuple or an argument read by next(it) (one "
                     "read a statement, in straight-line code, loops or branches) and a last "
                     "`for v in it`: lowered to xs[k] (a counter of the reads where they sit "
                     "in loops or branches) and xs[k:] (frontend/pyforms.py); an iterator "
                     "held otherwise is refused",
    "builtins.next": "next(it) of an iterator over a list, a tuple or an argument: xs[k] "
                     "(see builtins.iter)",
    "builtins.map": "map(f, xs) lowered to [f(v) for v in xs] where consumed once (an argument "
                    "or a loop's iterable; a map held in a name runs as written)",
    "builtins.sorted": "lowered to a stable argsort of the keys (key=, reverse=) and a gather: "
                       "a list of the items",
    "builtins.float": "row `float` (to_float): the identity derivative",
    "ndarray.tolist": "srcad/pyfuncs.py's tolist: nested lists of x.item() of each element",
    "ndarray.flat": "np.ravel(x) when read, iterated or indexed (a write through it is refused)",
    "math.fsum": _PYFUNCS.format("fsum"),
    **{f"statistics.{n}": (_PYFUNCS if n != "median" else
                                 "srcad/pyfuncs.py's median: np.sort, the middle item (or the "
                                 "mean of the two middle ones)").format(n)
       for n in ("mean", "fmean", "median", "variance", "pvariance", "stdev", "pstdev",
                 "geometric_mean", "harmonic_mean", "covariance", "correlation")},
    **{f"statistics.{n}": f"srcad/pyfuncs.py's {n}: np.sort, the {w} middle item"
       for n, w in (("median_low", "lower"), ("median_high", "higher"))},
    "math.prod": "srcad/pyfuncs.py's prod: the items multiplied from the left, as Python does",
    "math.dist": _PYFUNCS.format("dist"),
    "np.poly": "srcad/pyfuncs.py's poly: numpy's loop of np.convolve per root (a square "
               "matrix's characteristic polynomial needs complex eigenvalues: refused)",
    "np.polydiv": "srcad/pyfuncs.py's polydiv: numpy's long division, written with rows "
                  "(copy-on-write subscripts)",
    "np.poly1d": "srcad/pyfuncs.py's poly1d, built as a user class (frontend/objects.py): "
                 "calling it is np.polyval of its coefficients (np.poly of the roots for "
                 "r=True); deriv, integ, + - * ** and scalar / return a new poly1d through "
                 "np.polyder / polyint / polyadd / polysub / polymul (leading zero "
                 "coefficients kept; p / q, p(q) and roots refused)",
    "np.histogram": "srcad/pyfuncs.py's histogram: np.histogram_bin_edges' row (through min(a) "
                    "and max(a) where they set the edges, as JAX) and the counts' (linear in "
                    "weights=), then density= as numpy divides",
    "np.histogramdd": "srcad/pyfuncs.py's histogramdd: each dimension's edges through "
                      "np.histogram_bin_edges' row (min and max of its coordinates, as JAX), "
                      "the counts' (linear in weights=), then density= as numpy divides",
    "np.histogram2d": "srcad/pyfuncs.py's histogram2d: np.histogramdd of the points (x, y) "
                      "(srcad/pyfuncs.py's), its two edge arrays apart",
    "np.polyfit": "srcad/pyfuncs.py's polyfit: numpy's scaled Vandermonde system through "
                  "np.linalg.lstsq's row (full= and cov= refused)",
}

UFUNC_METHODS = ("reduce", "accumulate", "outer", "at", "reduceat")


class Entry(NamedTuple):
    name: str  # as the user spells it: np.median, np.linalg.pinv, ndarray.sum, math.sqrt
    kind: str  # one of CLASSES
    reason: str  # the row's name, or why not


def _listed() -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for kind, groups in ((NO_GRADIENT, NO_GRADIENT_NAMES), (REFUSED, REFUSED_NAMES)):
        for reason, names in groups.items():
            for name in names.split():
                if name in out:
                    raise ValueError(f"the census lists {name} twice")
                out[name] = (kind, reason)
    return out


def public_callables(mod) -> list[str]:
    """The public callables of a module (classes included, submodules not)."""
    names = []
    for n in dir(mod):
        if n.startswith("_"):
            continue
        try:
            v = getattr(mod, n)
        except AttributeError:  # (a deprecated name that raises on access)
            continue
        if callable(v) and not isinstance(v, types.ModuleType):
            names.append(n)
    return sorted(names)


def surface() -> dict[str, object]:
    """Every name the census must classify, qualified, mapped to its object (None for a
    method or attribute of ndarray or ufunc, whose rows are reached through the normaliser)."""
    out: dict[str, object] = {}
    for prefix, mod in (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft),
                        ("operator", operator), ("math", math), ("statistics", statistics)):
        for n in public_callables(mod):
            v = getattr(mod, n)
            if prefix == "statistics" and getattr(v, "__module__", None) != "statistics":
                continue  # (what statistics imports from math, collections, ...)
            out[f"{prefix}.{n}"] = v
    for n in dir(np.ndarray):
        if not n.startswith("_"):
            out[f"ndarray.{n}"] = None
    for n in BUILTINS:
        out[f"builtins.{n}"] = getattr(builtins, n)
    for m in UFUNC_METHODS:
        out[f"ufunc.{m}"] = None
    return out


def _row_entry(name: str, obj) -> Entry | None:
    op = lookup(obj) if obj is not None else None
    if op is None:
        return None
    kind = DIFFERENTIATED if op.differentiable else NO_GRADIENT
    return Entry(name, kind, f"row `{op.name}`")


def _method_entry(name: str) -> Entry | None:

    attr = name.split(".", 1)[1]
    if attr in ATTRIBUTES:
        fn = ATTRIBUTES[attr]
    elif attr in METHODS:
        try:
            fn = METHODS[attr](object(), [], {})[0]
        except (TypeError, AttributeError, KeyError):
            return None
    else:
        return None
    op = lookup(fn)
    if op is None:
        return None
    kind = DIFFERENTIATED if op.differentiable else NO_GRADIENT
    return Entry(name, kind, f"row `{op.name}`")


def _ufunc_method_entry(name: str) -> Entry:
    """``ufunc.reduce``: differentiated for the ufuncs whose methods have rows."""
    method = name.split(".", 1)[1]
    rowed = sorted(f"np.{u}.{method}" for u in dir(np) if isinstance(getattr(np, u, None),
                                                                    np.ufunc)
                   and _ufunc_row(getattr(np, u), method) is not None)
    if rowed:
        return Entry(name, DIFFERENTIATED, "rows for " + ", ".join(rowed)
                     + "; other ufuncs' are refused (no rule yet)")
    return Entry(name, REFUSED, _NO_RULE)


def _ufunc_row(ufunc, method):
    try:
        return lookup(getattr(ufunc, method))
    except (AttributeError, ValueError):
        return None


def census() -> list[Entry]:
    """Every name of `surface()`, classified, sorted by name.

    >>> e = {x.name: x for x in census()}
    >>> e["np.tanh"].kind, e["np.argmax"].kind, e["np.fft.fft"].kind
    ('differentiated', 'no gradient', 'refused')
    """
    listed = _listed()
    out = []
    for name, obj in surface().items():
        if name.startswith("ufunc.") and name not in _LOWERED_NUMPY:
            entry = _ufunc_method_entry(name)
        elif name in _LOWERED_NUMPY:
            entry = Entry(name, DIFFERENTIATED, _LOWERED_NUMPY[name])
        elif name in _LOWERED_PYTHON:
            entry = Entry(name, DIFFERENTIATED, _LOWERED_PYTHON[name])
        elif name.startswith("ndarray."):
            entry = _method_entry(name)
        elif name.startswith("builtins.") and name.split(".")[1] in _LOWERED_BUILTINS:
            entry = Entry(name, DIFFERENTIATED, _LOWERED_BUILTINS[name.split(".")[1]])
        elif name in _LOWERED_NUMPY:
            entry = Entry(name, DIFFERENTIATED, _LOWERED_NUMPY[name])
        else:
            entry = _row_entry(name, obj)
        if entry is None and name in listed:
            entry = Entry(name, *listed[name])
        if entry is not None:
            out.append(entry)
    return sorted(out, key=lambda e: e.name)


def unclassified() -> list[str]:
    """Names of `surface()` the census has no class for (tests/test_census.py wants none)."""
    known = {e.name for e in census()}
    return sorted(n for n in surface() if n not in known)


def stale() -> list[str]:
    """Listed names that a row now covers: the list should drop them."""
    listed = _listed()
    return sorted(e.name for e in census() if e.name in listed
                  and e.reason.startswith("row ") and listed[e.name][0] == REFUSED)


def refused_reason(label: str) -> str | None:
    """The census's reason for refusing a callable as a message names it (`np.nditer`,
    `numpy.fft.fft`, `.view()`, `divmod`), or None where the census does not list it as
    refused (srcad/analysis/refusals.py quotes it in the refusal's hint)."""
    name = label
    if name.startswith(".") and name.endswith("()"):
        name = "ndarray." + name[1:-2]
    elif name.startswith("numpy."):
        name = "np." + name[len("numpy."):]
    elif "." not in name:
        name = "builtins." + name
    kind, reason = _listed().get(name, (None, None))
    return reason if kind == REFUSED else None


def counts() -> dict[str, int]:
    entries = census()
    return {k: sum(e.kind == k for e in entries) for k in CLASSES}
