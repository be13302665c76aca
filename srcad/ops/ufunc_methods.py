"""The ufunc methods people write as reductions and products: ``np.add.reduce``,
``np.multiply.reduce``, ``np.maximum.reduce``, ``np.minimum.reduce``, ``np.logaddexp.reduce``
(log-sum-exp), ``np.add.accumulate``,
``np.multiply.accumulate``, ``np.maximum.accumulate``, ``np.minimum.accumulate``,
``np.logaddexp.accumulate`` (a running log-sum-exp) and ``np.add.outer``, ``np.subtract.outer``,
``np.multiply.outer``.

Each is the row of the function it equals, with numpy's defaults for the method (a ufunc's
reduce and accumulate run along axis 0, not over every axis): ``np.add.reduce(a)`` is
``np.sum(a, axis=0)``, ``np.multiply.accumulate(a, 1)`` is ``np.cumprod(a, axis=1)``, so the
rules are the reductions' (srcad/ops/reductions.py). ``ufunc.outer(a, b)`` is
``ufunc(a[..., None, ...], b)`` (a's axes first, then b's): the cotangent of a is summed over
b's axes, and b's over a's. A bound method is a new object at every ``np.add.reduce``, so the
table finds these rows by (ufunc, method name) (`table.ufunc_method`), wherever srcad looks a
callable up: the normaliser, the tape, the census. Generated code spells the method itself.
Other ufuncs' methods, ``ufunc.at`` and ``ufunc.reduceat`` have no rule (refused where a
differentiated value reaches them).
"""

import numpy as np

from .. import runtime_signal as sg
from ..runtime import (
    cumprod_grad,
    cumprod_jvp,
    cumsum_grad,
    extremum_grad,
    extremum_jvp,
    logaddexp_accumulate_grad,
    logaddexp_accumulate_jvp,
    outer_axes,
    outer_shape,
    prod_grad,
    running_extremum_grad,
    running_extremum_jvp,
    unreduce,
)
from .table import Param, defjvp, defnondiff, defvjp, ufunc_method

_F = "ufunc methods"
_T = (2, 3, 4)


def add_reduce(a, axis=0, keepdims=False):
    return np.add.reduce(a, axis=axis, keepdims=keepdims)


def multiply_reduce(a, axis=0, keepdims=False):
    return np.multiply.reduce(a, axis=axis, keepdims=keepdims)


def maximum_reduce(a, axis=0, keepdims=False):
    return np.maximum.reduce(a, axis=axis, keepdims=keepdims)


def minimum_reduce(a, axis=0, keepdims=False):
    return np.minimum.reduce(a, axis=axis, keepdims=keepdims)


def logaddexp_reduce(a, axis=0, keepdims=False):
    return np.logaddexp.reduce(a, axis=axis, keepdims=keepdims)


def add_accumulate(array, axis=0):
    return np.add.accumulate(array, axis=axis)


def multiply_accumulate(array, axis=0):
    return np.multiply.accumulate(array, axis=axis)


def maximum_accumulate(array, axis=0):
    return np.maximum.accumulate(array, axis=axis)


def minimum_accumulate(array, axis=0):
    return np.minimum.accumulate(array, axis=axis)


def logaddexp_accumulate(array, axis=0):
    return np.logaddexp.accumulate(array, axis=axis)


def add_outer(a, b):
    return np.add.outer(a, b)


def subtract_outer(a, b):
    return np.subtract.outer(a, b)


def multiply_outer(a, b):
    return np.multiply.outer(a, b)


def _reduce_cases(u):
    return ((f"np.{u}.reduce(a)", [(3, 4)]), (f"np.{u}.reduce(a, 1)", [_T]),
            (f"np.{u}.reduce(a, axis=-1, keepdims=True)", [_T]),
            (f"np.{u}.reduce(a, axis=None)", [(3, 4)]),
            (f"np.{u}.reduce(a, axis=(0, 2))", [_T]), (f"np.{u}.reduce(a)", [(5,)]))


_SUM = ufunc_method(defvjp(
    add_reduce, lambda g, out, a, axis=0, keepdims=False: unreduce(g, a, axis, keepdims),
    name="add_reduce", spelling="np.add.reduce(a, axis, keepdims)", linear=("a",),
    family=_F, derivation="np.sum along axis 0 by default: broadcast g back",
    test_cases=_reduce_cases("add")), np.add, "reduce")
ufunc_method(defvjp(
    multiply_reduce, lambda g, out, a, axis=0, keepdims=False: prod_grad(g, a, axis, keepdims),
    name="multiply_reduce", spelling="np.multiply.reduce(a, axis, keepdims)", family=_F,
    domain=(0.5, 1.5), derivation="np.prod along axis 0 by default",
    test_cases=_reduce_cases("multiply")), np.multiply, "reduce")
defjvp(multiply_reduce,
       lambda g, out, a, axis=0, keepdims=False:
           np.sum(prod_grad(np.ones_like(out), a, axis, keepdims) * g, axis=axis,
                  keepdims=keepdims))
for _u, _fn in (("maximum", maximum_reduce), ("minimum", minimum_reduce)):
    ufunc_method(defvjp(
        _fn, lambda g, out, a, axis=0, keepdims=False: extremum_grad(g, out, a, axis, keepdims),
        name=f"{_u}_reduce", spelling=f"np.{_u}.reduce(a, axis, keepdims)", family=_F,
        derivation=f"np.{_u[:3]} along axis 0 by default: g to the extrema, ties split evenly",
        test_cases=_reduce_cases(_u)), getattr(np, _u), "reduce")
    defjvp(_fn, lambda g, out, a, axis=0, keepdims=False:
           extremum_jvp(g, out, a, axis, keepdims))
ufunc_method(defvjp(
    logaddexp_reduce,
    lambda g, out, a, axis=0, keepdims=False: unreduce(g, a, axis, keepdims)
    * np.exp(a - unreduce(np.where(out == -np.inf, np.inf, out), a, axis, keepdims)),
    name="logaddexp_reduce", spelling="np.logaddexp.reduce(a, axis, keepdims)", family=_F,
    derivation="log sum exp along axis 0 by default (numpy pairs the terms): da = g "
    "exp(a - out), the softmax of a along the axis (0 where out = -inf: every term -inf)",
    test_cases=_reduce_cases("logaddexp")), np.logaddexp, "reduce")
defjvp(logaddexp_reduce,
       lambda g, out, a, axis=0, keepdims=False:
           np.sum(g * np.exp(a - unreduce(np.where(out == -np.inf, np.inf, out), a, axis,
                                          keepdims)), axis=axis, keepdims=keepdims))
_ACC = (("a", (3, 4)), ("a, 1", _T), ("a, axis=-1", _T), ("a", (5,)))
ufunc_method(defvjp(
    add_accumulate, lambda g, out, array, axis=0: cumsum_grad(g, array, axis),
    name="add_accumulate", spelling="np.add.accumulate(array, axis)", linear=("array",),
    family=_F, derivation="np.cumsum along axis 0 by default: a reversed cumsum of g",
    test_cases=tuple((f"np.add.accumulate({a})", [s]) for a, s in _ACC)),
    np.add, "accumulate")
ufunc_method(defvjp(
    multiply_accumulate, lambda g, out, array, axis=0: cumprod_grad(g, array, axis),
    name="multiply_accumulate", spelling="np.multiply.accumulate(array, axis)", family=_F,
    derivation="np.cumprod along axis 0 by default",
    test_cases=tuple((f"np.multiply.accumulate({a})", [s]) for a, s in _ACC)),
    np.multiply, "accumulate")
defjvp(multiply_accumulate, lambda g, out, array, axis=0: cumprod_jvp(g, array, axis))

_RUN = "the running {0}: each step's g to the item that is the {0} there (ties split " \
    "evenly, as np.{1}), a backward recurrence"
ufunc_method(defvjp(
    maximum_accumulate,
    lambda g, out, array, axis=0: running_extremum_grad(g, out, array, axis, True),
    name="maximum_accumulate", spelling="np.maximum.accumulate(array, axis)", family=_F,
    derivation=_RUN.format("maximum", "maximum"),
    test_cases=tuple((f"np.maximum.accumulate({a})", [s]) for a, s in _ACC)),
    np.maximum, "accumulate")
defjvp(maximum_accumulate,
       lambda g, out, array, axis=0: running_extremum_jvp(g, out, array, axis, True))
ufunc_method(defvjp(
    minimum_accumulate,
    lambda g, out, array, axis=0: running_extremum_grad(g, out, array, axis, False),
    name="minimum_accumulate", spelling="np.minimum.accumulate(array, axis)", family=_F,
    derivation=_RUN.format("minimum", "minimum"),
    test_cases=tuple((f"np.minimum.accumulate({a})", [s]) for a, s in _ACC)),
    np.minimum, "accumulate")
defjvp(minimum_accumulate,
       lambda g, out, array, axis=0: running_extremum_jvp(g, out, array, axis, False))

ufunc_method(defvjp(
    logaddexp_accumulate,
    lambda g, out, array, axis=0: logaddexp_accumulate_grad(g, out, array, axis),
    name="logaddexp_accumulate", spelling="np.logaddexp.accumulate(array, axis)", family=_F,
    derivation="the running log-sum-exp: out_i = logaddexp(out_(i-1), a_i), so da_j = "
    "sum_(i>=j) g_i exp(a_j - out_i), a backward recurrence whose weights never exceed 1",
    test_cases=tuple((f"np.logaddexp.accumulate({a})", [s]) for a, s in _ACC)
    + (("np.logaddexp.accumulate(a * 40.0, axis=1)", [(2, 3)]),)),
    np.logaddexp, "accumulate")
defjvp(logaddexp_accumulate,
       lambda g, out, array, axis=0: logaddexp_accumulate_jvp(g, out, array, axis))

_OUTER = ([(3,), (4,)], [(2, 3), (4,)], [(3,), (2, 2)], [(), (3,)], [(2,), ()])


def _outer_cases(u):
    return tuple((f"np.{u}.outer(a, b)", s) for s in _OUTER) + (
        (f"np.{u}.outer(a, a)", [(3,)]),)


ufunc_method(defvjp(
    add_outer,
    lambda g, out, a, b: np.sum(g, axis=outer_axes(a, b, 1)),
    lambda g, out, a, b: np.sum(g, axis=outer_axes(a, b, 0)),
    name="add_outer", spelling="np.add.outer(a, b)", family=_F,
    derivation="a[..., None] + b: da sums g over b's axes, db over a's",
    test_cases=_outer_cases("add")), np.add, "outer")
defjvp(add_outer, lambda g, out, a, b: np.broadcast_to(np.reshape(g, outer_shape(a, b)),
                                                       np.shape(out)),
       lambda g, out, a, b: np.broadcast_to(g, np.shape(out)))
ufunc_method(defvjp(
    subtract_outer,
    lambda g, out, a, b: np.sum(g, axis=outer_axes(a, b, 1)),
    lambda g, out, a, b: -np.sum(g, axis=outer_axes(a, b, 0)),
    name="subtract_outer", spelling="np.subtract.outer(a, b)", family=_F,
    derivation="a[..., None] - b: da sums g over b's axes, db sums -g over a's",
    test_cases=_outer_cases("subtract")), np.subtract, "outer")
defjvp(subtract_outer, lambda g, out, a, b: np.broadcast_to(np.reshape(g, outer_shape(a, b)),
                                                            np.shape(out)),
       lambda g, out, a, b: -np.broadcast_to(g, np.shape(out)))
ufunc_method(defvjp(
    multiply_outer,
    lambda g, out, a, b: np.sum(g * b, axis=outer_axes(a, b, 1)),
    lambda g, out, a, b: np.sum(g * np.reshape(a, outer_shape(a, b)), axis=outer_axes(a, b, 0)),
    name="multiply_outer", spelling="np.multiply.outer(a, b)", linear=("a", "b"), family=_F,
    derivation="a[..., None] * b: da = sum over b's axes of g b, db = sum over a's of g a",
    test_cases=_outer_cases("multiply")), np.multiply, "outer")

# the helpers' rows: shapes and axes, no derivative
defnondiff(sg.outer_shape, name="outer_shape", params=(Param("a"), Param("b")), family="runtime")
defnondiff(sg.outer_axes, name="outer_axes", params=(Param("a"), Param("b"), Param("which", 1)),
           family="runtime")
