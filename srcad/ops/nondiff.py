"""Non-differentiable ops: shape queries, constructors, comparisons, integer arithmetic.

Their outputs carry no gradient; activity analysis stops at them. Piecewise-constant
functions (sign, floor, ceil, round) are here too: their derivative is 0 wherever it
exists. The test cases use each op beside differentiable ones, so the gradient check
proves both that the forward runs in generated code and that no gradient leaks through.
"""

import operator

import numpy as np

from ..runtime import unbroadcast
from .table import Param, defnondiff, defvjp

_XY = (Param("x"), Param("y"))
_X = (Param("x"),)
_AB = [(3, 4), (3, 4)]

# --- shape queries ----------------------------------------------------------------------------
def _attribute_form(attr):
    """`a.shape` where a is a numpy value (an array or a numpy scalar); `np.shape(a)` where it
    may be a Python number or a list, which has no such attribute."""
    return lambda info: f"a.{attr}" if info is not None and info.dtype is not None else None


defnondiff(np.shape, name="shape", spelling="np.shape(a)", params=(Param("a"),),
           family="query", forward_form=_attribute_form("shape"),
           test_cases=(("a * a.shape[0]", [(3, 4)]),
                       ("np.reshape(a, (a.shape[1], a.shape[0]))", [(3, 4)]),
                       ("np.sum(a, axis=0) / np.shape(a)[0]", [(3, 4)])))
defnondiff(np.ndim, name="ndim", spelling="np.ndim(a)", params=(Param("a"),), family="query",
           forward_form=_attribute_form("ndim"),
           test_cases=(("a * a.ndim", [(3, 4)]), ("a * (np.ndim(2.0) + 1)", [(3,)])))
defnondiff(np.size, name="size", spelling="np.size(a, axis)",
           params=(Param("a"), Param("axis", None)), family="query",
           # (`a.size` where no axis is given -- tape mode gives the infos of every value,
           # source mode of names: it spells `np.size(a, k)` `np.shape(a)[k]`, pylevel.py)
           forward_form=lambda info, axis: _attribute_form("size")(info) if axis is None
           else None,
           test_cases=(("a / a.size", [(3, 4)]), ("a / (np.size(2.0) + np.size([1, 2]))",
                                                  [(3,)])))
defnondiff(len, name="len", spelling="len(obj)", params=(Param("obj"),), family="query",
           test_cases=(("a * len(a)", [(3, 4)]),))

# --- constructors -----------------------------------------------------------------------------
defnondiff(np.zeros, name="zeros", params=(Param("shape"), Param("dtype", float)),
           family="constructor",
           test_cases=(("a + np.zeros(a.shape)", [(3, 4)]),
                       ("np.concatenate((a, np.zeros((1, 4))))", [(3, 4)])))
defnondiff(np.ones, name="ones", params=(Param("shape"), Param("dtype", float)),
           family="constructor", test_cases=(("a * np.ones((2, 3, 4))", [(3, 4)]),))
defnondiff(np.zeros_like, name="zeros_like", params=(Param("a"), Param("dtype", None)),
           family="constructor", test_cases=(("a + np.zeros_like(a)", [(3, 4)]),))
defnondiff(np.ones_like, name="ones_like", params=(Param("a"), Param("dtype", None)),
           family="constructor", test_cases=(("a * np.ones_like(a)", [(3, 4)]),))
# (their fill value has a gradient: the sum of g over the broadcast, see `unbroadcast`)
defvjp(np.full, None, lambda g, out, shape, fill_value, dtype=None: unbroadcast(g, fill_value),
       None, name="full", linear=("fill_value",), family="constructor",
       derivation="out is fill_value broadcast to shape: g summed back over the broadcast",
       test_cases=(("a * np.full((3, 4), 2.0)", [(3, 4)]), ("np.full((2, 3), a)", [(3,)]),
                   ("np.full(3, a) * b", [(), (3,)]), ("np.full((3, 2), a, dtype=float)", [(3, 1)])))
defvjp(np.full_like, None,
       lambda g, out, a, fill_value, dtype=None: unbroadcast(g, fill_value), None,
       name="full_like", linear=("fill_value",), family="constructor",
       derivation="out is fill_value broadcast to a's shape: g summed back over the broadcast",
       test_cases=(("a * np.full_like(a, 2.0)", [(3, 4)]),
                   ("a + np.full_like(a, 1, dtype=float)", [(3,)]),
                   ("np.full_like(b, a) * b", [(), (3, 4)]),
                   ("np.full_like(b, a)", [(4,), (3, 4)])))
defnondiff(np.empty_like, name="empty_like", params=(Param("prototype"), Param("dtype", None)),
           family="constructor",
           test_cases=(("a + np.zeros_like(np.empty_like(a))", [(3, 4)]),
                       ("a * np.empty_like(a).shape[0]", [(3,)])))
defnondiff(np.empty, name="empty", params=(Param("shape"), Param("dtype", float)),
           family="constructor", test_cases=(("a * np.empty((2, 3)).shape[1]", [(3,)]),))
defnondiff(np.tri, name="tri", params=(Param("N"), Param("M", None), Param("k", 0),
                                       Param("dtype", float)), family="constructor",
           test_cases=(("a * np.tri(3)", [(3, 3)]), ("a * np.tri(3, 4, k=-1)", [(3, 4)])))
defnondiff(np.eye, name="eye", params=(Param("N"), Param("M", None), Param("k", 0),
                                       Param("dtype", float)), family="constructor",
           test_cases=(("a @ np.eye(4)", [(3, 4)]), ("a * np.eye(3, 4, k=1)", [(3, 4)])))
defnondiff(np.arange, name="arange",
           params=(Param("start"), Param("stop", None), Param("step", None),
                   Param("dtype", None)), family="constructor", no_rule_for=("start", "step"),
           test_cases=(("a * np.arange(4)", [(3, 4)]), ("a * np.arange(1, 9, 2)", [(3, 4)]),
                       ("a[np.arange(2)]", [(3, 4)])))

# --- indices and piecewise-constant functions -------------------------------------------------
defnondiff(np.argmax, name="argmax", params=(Param("a"), Param("axis", None)), family="index",
           test_cases=(("a[np.argmax(a)]", [(5,)]), ("a * np.argmax(a, axis=0)", [(3, 4)]),
                       ("a * a.argmax()", [(3,)])))
defnondiff(np.argmin, name="argmin", params=(Param("a"), Param("axis", None)), family="index",
           test_cases=(("a[np.argmin(a)]", [(5,)]), ("a * np.argmin(a, axis=0)", [(4, 3)])))
defnondiff(np.argsort, name="argsort",
           params=(Param("a"), Param("axis", -1), Param("kind", None)), family="index",
           test_cases=(("a[np.argsort(a)]", [(5,)]),
                       ("np.take_along_axis(a, np.argsort(a, axis=0), axis=0)", [(3, 4)])))
defnondiff(np.sign, name="sign", params=_X, family="index", c_kinds="if",
           c="x > 0 ? 1 : (x < 0 ? -1 : (x == 0 ? 0 : x))",
           test_cases=(("a * np.sign(a)", [(3, 4)]),))
defnondiff(np.floor, name="floor", params=_X, family="index", c="floor(x)",
           test_cases=(("a * np.floor(a)", [(3, 4)]),))
defnondiff(np.ceil, name="ceil", params=_X, family="index", c="ceil(x)",
           test_cases=(("a * np.ceil(a)", [(3, 4)]),))
defnondiff(np.round, name="round", params=(Param("a"), Param("decimals", 0)), family="index",
           aliases=tuple(getattr(np, n) for n in ("around", "round_") if hasattr(np, n)),
           test_cases=(("a * np.round(a)", [(3, 4)]), ("a * np.round(a, 1)", [(3,)])))
# (more piecewise-constant functions: their derivative is 0 wherever it exists)
for _f, _c in ((np.rint, "rint(x)"), (np.trunc, "trunc(x)"), (np.fix, None),
               (np.spacing, None)):
    defnondiff(_f, name=_f.__name__, params=_X, family="index", c=_c,
               # (float32's spacing is not float64's: checked where the check computes)
               dtypes=("float64",) if _f is np.spacing else ("float32", "float64"),
               test_cases=((f"a * np.{_f.__name__}(a * 3)", [(3, 4)]),))
for _f in (np.signbit, np.isinf, np.isneginf, np.isposinf):
    defnondiff(_f, name=_f.__name__, params=_X, family="index",
               test_cases=((f"a * np.{_f.__name__}(a - 0.5)", [(3, 4)]),
                           (f"np.sum(a) * np.{_f.__name__}(a[0])", [(3,)])))
defnondiff(np.heaviside, name="heaviside", params=_XY, family="index",
           test_cases=(("a * np.heaviside(a, b)", _AB),))
defnondiff(np.argpartition, name="argpartition",
           params=(Param("a"), Param("kth"), Param("axis", -1)), family="index",
           test_cases=(("a[np.argpartition(a, 2)]", [(5,)]),))
defnondiff(np.angle, name="angle", params=(Param("z"), Param("deg", False)), family="index",
           test_cases=(("a * np.angle(a)", [(3, 4)]),))
defnondiff(np.imag, name="imag", params=(Param("val"),), family="index",
           test_cases=(("a + np.imag(a)", [(3, 4)]),))
defnondiff(np.all, name="all", params=(Param("a"), Param("axis", None), Param("keepdims", False)),
           family="compare", test_cases=(("a * np.all(a > -1.0)", [(3, 4)]),
                                         ("a * np.all(a > 0, axis=0)", [(3, 4)])))
defnondiff(np.any, name="any", params=(Param("a"), Param("axis", None), Param("keepdims", False)),
           family="compare", test_cases=(("a * np.any(a > 1.0, axis=1, keepdims=True)", [(3, 4)]),))
for _t in (np.int32, np.int64):
    defnondiff(_t, name=_t.__name__, params=(Param("x"),), spelling=f"np.{_t.__name__}(x)",
               family="index", test_cases=((f"a[np.{_t.__name__}(a[:, 0] > 0)]", [(3, 4)]),))
defnondiff(np.isnan, name="isnan", params=_X, family="index", c="isnan(x)", c_kinds="bif",
           test_cases=(("np.where(np.isnan(a), 0.0, a)", [(3, 4)]),))
defnondiff(np.isfinite, name="isfinite", params=_X, family="index", c="isfinite(x)",
           c_kinds="bif",
           test_cases=(("np.where(np.isfinite(a), a, 0.0)", [(3, 4)]),))

# --- comparisons and logic (python operators) -------------------------------------------------
defnondiff(np.less, name="less", spelling="x < y", params=_XY, family="compare",
           c="x < y", c_kinds="bif",
           test_cases=(("np.where(a < b, a, b)", _AB),))
defnondiff(np.less_equal, name="less_equal", spelling="x <= y", params=_XY, family="compare",
           c="x <= y", c_kinds="bif",
           test_cases=(("a * (a <= b)", _AB),))
defnondiff(np.greater, name="greater", spelling="x > y", params=_XY, family="compare",
           c="x > y", c_kinds="bif",
           test_cases=(("np.where(a > 0.5, a, b)", _AB),))
defnondiff(np.greater_equal, name="greater_equal", spelling="x >= y", params=_XY,
           family="compare", c="x >= y", c_kinds="bif", test_cases=(("np.where(np.greater_equal(a, b), a, b)", _AB),))
defnondiff(np.equal, name="equal", spelling="x == y", params=_XY, family="compare",
           c="x == y", c_kinds="bif",
           test_cases=(("np.where(a == b, 0.0, a)", _AB),))
defnondiff(np.not_equal, name="not_equal", spelling="x != y", params=_XY, family="compare",
           c="x != y", c_kinds="bif",
           test_cases=(("a * (a != b)", _AB),))
# Python's `not` lowers to np.logical_not, so the generated code spells the numpy call:
# `not x` is an error on an array of more than one element.
defnondiff(np.logical_not, name="logical_not", spelling="np.logical_not(x)", params=_X,
           family="compare", c="!x", c_kinds="bif",
           test_cases=(("np.where(np.logical_not(a > b), a, b)", _AB),
                       ("a * (not a.shape[0] > 3)", [(3, 4)])))
defnondiff(np.logical_and, name="logical_and", params=_XY, family="compare",
           c="x && y", c_kinds="bif",
           test_cases=(("np.where(np.logical_and(a > 0, b > 0), a, b)", _AB),))
defnondiff(np.logical_or, name="logical_or", params=_XY, family="compare",
           c="x || y", c_kinds="bif",
           test_cases=(("np.where(np.logical_or(a > 0, b > 0), a, b)", _AB),))
defnondiff(np.bitwise_and, name="bitwise_and", spelling="x & y", params=_XY, family="compare",
           c="x & y", c_kinds="bi",
           test_cases=(("np.where((a > 0) & (b > 0), a, b)", _AB),))
defnondiff(np.bitwise_or, name="bitwise_or", spelling="x | y", params=_XY, family="compare",
           c="x | y", c_kinds="bi",
           test_cases=(("np.where((a > 0) | (b > 0), a, b)", _AB),))
# `~x` as Python spells it (a bool array's negation, an integer's complement, `~True` is -2):
# no gradient, run as written
defnondiff(np.invert, name="invert", spelling="~x", params=_X, family="compare",
           aliases=(operator.invert,),
           test_cases=(("np.where(~(a > b), a, b)", _AB),))

# --- integer arithmetic -----------------------------------------------------------------------
defnondiff(operator.floordiv, name="floordiv", spelling="x // y", params=_XY, family="integer",
           aliases=(np.floor_divide,),
           test_cases=(("a * (a.shape[0] // 2)", [(3, 4)]),))
# (`x % y` is a row of srcad/ops/elementwise.py: on floats it has a gradient)

# (spelled as the call, not `x.dtype`: a rule's np.result_type(out) re-parsed at second
# order must still work when out is a Python float)
defnondiff(np.result_type, name="result_type", params=(Param("x"),), family="runtime",
           spelling="np.result_type(x)")
