"""Non-differentiable ops: shape queries, constructors, comparisons, integer arithmetic.

Their outputs carry no gradient; activity analysis stops at them.
"""

import operator

import numpy as np

from .table import Param, defnondiff

_XY = (Param("x"), Param("y"))
_X = (Param("x"),)

# --- shape queries ----------------------------------------------------------------------------
defnondiff(np.shape, name="shape", spelling="a.shape", params=(Param("a"),), family="query")
defnondiff(np.ndim, name="ndim", spelling="a.ndim", params=(Param("a"),), family="query")
defnondiff(np.size, name="size", spelling="a.size", params=(Param("a"),), family="query")
defnondiff(len, name="len", spelling="len(obj)", params=(Param("obj"),), family="query")

# --- constructors -----------------------------------------------------------------------------
defnondiff(np.zeros, name="zeros", params=(Param("shape"), Param("dtype", float)),
           family="constructor")
defnondiff(np.ones, name="ones", params=(Param("shape"), Param("dtype", float)),
           family="constructor")
defnondiff(np.zeros_like, name="zeros_like", params=(Param("a"), Param("dtype", None)),
           family="constructor")
defnondiff(np.ones_like, name="ones_like", params=(Param("a"), Param("dtype", None)),
           family="constructor")
defnondiff(np.full, name="full",
           params=(Param("shape"), Param("fill_value"), Param("dtype", None)),
           family="constructor")
defnondiff(np.eye, name="eye", params=(Param("N"), Param("M", None), Param("k", 0),
                                       Param("dtype", float)), family="constructor")
defnondiff(np.arange, name="arange",
           params=(Param("start"), Param("stop", None), Param("step", None),
                   Param("dtype", None)), family="constructor")
defnondiff(np.argmax, name="argmax", params=(Param("a"), Param("axis", None)), family="index")
defnondiff(np.argmin, name="argmin", params=(Param("a"), Param("axis", None)), family="index")
defnondiff(np.sign, name="sign", params=_X, family="index")
defnondiff(np.floor, name="floor", params=_X, family="index")
defnondiff(np.ceil, name="ceil", params=_X, family="index")

# --- comparisons and logic (python operators) -------------------------------------------------
defnondiff(np.less, name="less", spelling="x < y", params=_XY, family="compare")
defnondiff(np.less_equal, name="less_equal", spelling="x <= y", params=_XY, family="compare")
defnondiff(np.greater, name="greater", spelling="x > y", params=_XY, family="compare")
defnondiff(np.greater_equal, name="greater_equal", spelling="x >= y", params=_XY,
           family="compare")
defnondiff(np.equal, name="equal", spelling="x == y", params=_XY, family="compare")
defnondiff(np.not_equal, name="not_equal", spelling="x != y", params=_XY, family="compare")
defnondiff(np.logical_not, name="logical_not", spelling="not x", params=_X, family="compare")
defnondiff(np.bitwise_and, name="bitwise_and", spelling="x & y", params=_XY, family="compare")
defnondiff(np.bitwise_or, name="bitwise_or", spelling="x | y", params=_XY, family="compare")

# --- integer arithmetic -----------------------------------------------------------------------
defnondiff(operator.floordiv, name="floordiv", spelling="x // y", params=_XY, family="integer")
defnondiff(operator.mod, name="mod", spelling="x % y", params=_XY, family="integer")
