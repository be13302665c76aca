"""``ufunc.at`` and ``ufunc.reduceat``: writes by index that accumulate, reductions by segment.

``np.add.at(a, indices, b)`` (also subtract, multiply, maximum, minimum, and the unary
``np.negative.at(a, indices)``) is a statement that changes `a`; the normaliser lowers it to
``a[...] = add_at(a, indices, b)`` (frontend/pylower.py), copy on write with a's views
followed, and tape mode writes the same value (tape.py's `_UfuncView`). The rows here are
the value forms (srcad/runtime_at.py). ``np.add.reduceat(array, indices, axis=0)`` (also
multiply, maximum, minimum) is a row of its own, found by (ufunc, "reduceat") like
``np.add.reduce`` (ufunc_methods.py).

Sums are linear: the cotangent of b is ``g[indices]`` summed back to b's shape, and of a
reduceat's array the segments' cotangents added back (`reduceat_scatter`). Products and
extrema are np.prod's and np.max's rules over the group matrix (one row per written position
or per segment, padded with 1 or -inf): `prod_grad` (the product of the others, exact at
zeros) and `extremum_grad` (ties split evenly, as torch's scatter_reduce amax/amin with
include_self), with the gather/scatter helpers as each other's transposes -- so second order
comes from the same rows; a third derivative of a product is refused by `prod_grad`'s rows.
"""

import numpy as np

from .. import runtime_at as ra
from ..runtime import (
    at_gather,
    at_take_a,
    at_take_b,
    extremum_grad,
    extremum_jvp,
    prod_grad,
    reduceat_gather,
    reduceat_scatter,
    unbroadcast,
)
from ..runtime_at import (
    add_at,
    maximum_at,
    minimum_at,
    multiply_at,
    negative_at,
    subtract_at,
)
from .table import defjvp, defvjp, ufunc_method

_F = "ufunc methods"
_R = "runtime"
_AT = [(3, 4), (5, 4)]  # (a, b): b written at rows [0, 2, 2, 0, 1] of a


def _at_cases(op):
    return (("OP(a, [0, 2, 2, 1], b)", [(3,), (4,)]),
            ("OP(a, [0, 2, 2, 0, 1], b)", _AT),
            ("OP(a, ([0, 1, 1], [2, 0, 0]), b)", [(2, 3), (1,)]),
            ("OP(a, [1, 1], b)", [(3, 2), (2,)]),
            ("OP(a, slice(0, 2), b)", [(3,), ()]))


# --- ufunc.at: the value forms -------------------------------------------------------------
defvjp(add_at, lambda g, out, a, indices, b: g, None,
       lambda g, out, a, indices, b: unbroadcast(g[indices], b),
       name="add_at", spelling="add_at(a, indices, b)", family=_F,
       derivation="np.add.at: a's cotangent is g; b's is g[indices] (a position written "
       "twice gives both writes its g), summed back to b's shape",
       test_cases=_at_cases("add"))
defjvp(add_at, lambda g, out, a, indices, b: g, None,
       lambda g, out, a, indices, b: add_at(np.zeros_like(out), indices, g))
defvjp(subtract_at, lambda g, out, a, indices, b: g, None,
       lambda g, out, a, indices, b: -unbroadcast(g[indices], b),
       name="subtract_at", spelling="subtract_at(a, indices, b)", family=_F,
       derivation="np.subtract.at: a's cotangent is g; b's is -g[indices], summed back",
       test_cases=_at_cases("subtract"))
defjvp(subtract_at, lambda g, out, a, indices, b: g, None,
       lambda g, out, a, indices, b: subtract_at(np.zeros_like(out), indices, g))
defvjp(multiply_at,
       lambda g, out, a, indices, b: at_take_a(
           prod_grad(np.reshape(g, (-1, 1)), at_gather(a, indices, b, 1.0), -1, True),
           indices, a, b),
       None,
       lambda g, out, a, indices, b: at_take_b(
           prod_grad(np.reshape(g, (-1, 1)), at_gather(a, indices, b, 1.0), -1, True),
           indices, a, b),
       name="multiply_at", spelling="multiply_at(a, indices, b)", family=_F,
       domain=(0.5, 1.5),
       derivation="np.multiply.at: each position is the product of a row of the group "
       "matrix (a, then the b written there): np.prod's rule, the product of the others",
       test_cases=_at_cases("multiply"))
defjvp(multiply_at, lambda g, out, a, indices, b: multiply_at(np.broadcast_to(g, np.shape(out)), indices, b), None,
       lambda g, out, a, indices, b: np.reshape(np.sum(
           prod_grad(np.reshape(np.ones_like(out), (-1, 1)), at_gather(a, indices, b, 1.0),
                     -1, True) * at_gather(np.zeros_like(out), indices, g, 0.0), axis=-1),
           np.shape(out)))
defvjp(maximum_at,
       lambda g, out, a, indices, b: at_take_a(extremum_grad(
           np.reshape(g, (-1, 1)), np.reshape(out, (-1, 1)),
           at_gather(a, indices, b, -np.inf), -1, True), indices, a, b),
       None,
       lambda g, out, a, indices, b: at_take_b(extremum_grad(
           np.reshape(g, (-1, 1)), np.reshape(out, (-1, 1)),
           at_gather(a, indices, b, -np.inf), -1, True), indices, a, b),
       name="maximum_at", spelling="maximum_at(a, indices, b)", family=_F,
       derivation="np.maximum.at: the max of a row of the group matrix: g to the extrema "
       "among a and the b written there, ties split evenly",
       test_cases=_at_cases("maximum"))
defjvp(maximum_at,
       lambda g, out, a, indices, b: np.reshape(extremum_jvp(
           at_gather(np.broadcast_to(g, np.shape(out)), indices, 0.0, 0.0), np.reshape(out, (-1, 1)),
           at_gather(a, indices, b, -np.inf), -1, True), np.shape(out)),
       None,
       lambda g, out, a, indices, b: np.reshape(extremum_jvp(
           at_gather(np.zeros_like(out), indices, g, 0.0), np.reshape(out, (-1, 1)),
           at_gather(a, indices, b, -np.inf), -1, True), np.shape(out)))
defvjp(minimum_at,
       lambda g, out, a, indices, b: at_take_a(extremum_grad(
           np.reshape(g, (-1, 1)), np.reshape(out, (-1, 1)),
           at_gather(a, indices, b, np.inf), -1, True), indices, a, b),
       None,
       lambda g, out, a, indices, b: at_take_b(extremum_grad(
           np.reshape(g, (-1, 1)), np.reshape(out, (-1, 1)),
           at_gather(a, indices, b, np.inf), -1, True), indices, a, b),
       name="minimum_at", spelling="minimum_at(a, indices, b)", family=_F,
       derivation="np.minimum.at: as maximum_at, the min of each row",
       test_cases=_at_cases("minimum"))
defjvp(minimum_at,
       lambda g, out, a, indices, b: np.reshape(extremum_jvp(
           at_gather(np.broadcast_to(g, np.shape(out)), indices, 0.0, 0.0), np.reshape(out, (-1, 1)),
           at_gather(a, indices, b, np.inf), -1, True), np.shape(out)),
       None,
       lambda g, out, a, indices, b: np.reshape(extremum_jvp(
           at_gather(np.zeros_like(out), indices, g, 0.0), np.reshape(out, (-1, 1)),
           at_gather(a, indices, b, np.inf), -1, True), np.shape(out)))
defvjp(negative_at, lambda g, out, a, indices: negative_at(g, indices), None,
       name="negative_at", spelling="negative_at(a, indices)", family=_F,
       derivation="np.negative.at: a sign per position (-1 to the number of writes): its own "
       "transpose",
       test_cases=(("OP(a, [0, 2, 2, 1])", [(3,)]), ("OP(a, [1, 1, 1])", [(3, 2)])))

defjvp(negative_at, lambda g, out, a, indices: negative_at(np.broadcast_to(g, np.shape(out)), indices), None)

# --- the group matrices: linear maps, each the other's transpose ----------------------------
defvjp(at_gather,
       lambda g, out, a, indices, b, fill: at_take_a(g, indices, a, b), None,
       lambda g, out, a, indices, b, fill: at_take_b(g, indices, a, b), None,
       name="at_gather", spelling="at_gather(a, indices, b, fill)", family=_R,
       derivation="a gather into the group matrix (fill constant): at_take_a / at_take_b")
defjvp(at_gather,
       lambda g, out, a, indices, b, fill: at_gather(np.broadcast_to(g, np.shape(a)), indices,
                                                    0.0, 0.0), None,
       lambda g, out, a, indices, b, fill: at_gather(np.zeros_like(a), indices, g, 0.0), None)
defvjp(at_take_a,
       lambda g, out, m, indices, a, b: at_gather(g, indices, 0.0, 0.0), None, None, None,
       name="at_take_a", spelling="at_take_a(m, indices, a, b)", family=_R, linear=("m",),
       derivation="column 0 of the group matrix: at_gather's transpose in a")
defjvp(at_take_a, lambda g, out, m, indices, a, b:
       at_take_a(np.broadcast_to(g, np.shape(m)), indices, a, b), None, None, None)
defvjp(at_take_b,
       lambda g, out, m, indices, a, b: at_gather(np.zeros_like(a), indices, g, 0.0), None,
       None, None,
       name="at_take_b", spelling="at_take_b(m, indices, a, b)", family=_R, linear=("m",),
       derivation="the written slots of the group matrix: at_gather's transpose in b")
defjvp(at_take_b, lambda g, out, m, indices, a, b:
       at_take_b(np.broadcast_to(g, np.shape(m)), indices, a, b), None, None, None)

# --- ufunc.reduceat ---------------------------------------------------------------------------
def _reduceat_cases(u):
    return ((f"np.{u}.reduceat(a, [0, 2])", [(5,)]),
            (f"np.{u}.reduceat(a, [0, 3, 1, 4, 4])", [(6,)]),
            (f"np.{u}.reduceat(a, [1, 2], axis=1)", [(2, 4)]),
            (f"np.{u}.reduceat(a, [2, 0], -1)", [(2, 3, 3)]),
            (f"np.{u}.reduceat(a, np.array([0, 1, 1]))", [(3, 2)]))


ufunc_method(defvjp(
    ra.add_reduceat,
    lambda g, out, array, indices, axis=0: reduceat_scatter(
        np.expand_dims(np.moveaxis(g, axis, -1), -1), indices, array, axis),
    name="add_reduceat", spelling="np.add.reduceat(array, indices, axis)", family=_F,
    linear=("array",),
    derivation="a sum per segment (numpy's: indices[i]:indices[i+1], or the one element "
    "indices[i] where indices[i] >= indices[i+1]): g added back over each segment",
    test_cases=_reduceat_cases("add")), np.add, "reduceat")
defjvp(ra.add_reduceat, lambda g, out, array, indices, axis=0:
       np.add.reduceat(np.broadcast_to(g, np.shape(array)), indices, axis))
ufunc_method(defvjp(
    ra.multiply_reduceat,
    lambda g, out, array, indices, axis=0: reduceat_scatter(prod_grad(
        np.expand_dims(np.moveaxis(g, axis, -1), -1), reduceat_gather(array, indices, axis, 1.0),
        -1, True), indices, array, axis),
    name="multiply_reduceat", spelling="np.multiply.reduceat(array, indices, axis)",
    family=_F, domain=(0.5, 1.5),
    derivation="a product per segment: np.prod's rule on each row of the segment matrix",
    test_cases=_reduceat_cases("multiply")), np.multiply, "reduceat")
defjvp(ra.multiply_reduceat,
       lambda g, out, array, indices, axis=0: np.moveaxis(np.sum(prod_grad(
           np.expand_dims(np.moveaxis(np.ones_like(out), axis, -1), -1),
           reduceat_gather(array, indices, axis, 1.0), -1, True)
           * reduceat_gather(np.broadcast_to(g, np.shape(array)), indices, axis, 0.0), axis=-1),
           -1, axis))
ufunc_method(defvjp(
    ra.maximum_reduceat,
    lambda g, out, array, indices, axis=0: reduceat_scatter(extremum_grad(
        np.moveaxis(g, axis, -1), np.moveaxis(out, axis, -1),
        reduceat_gather(array, indices, axis, -np.inf), -1, False), indices, array, axis),
    name="maximum_reduceat", spelling="np.maximum.reduceat(array, indices, axis)",
    family=_F, derivation="a max per segment: g to the extrema, ties split evenly",
    test_cases=_reduceat_cases("maximum")), np.maximum, "reduceat")
defjvp(ra.maximum_reduceat,
       lambda g, out, array, indices, axis=0: np.moveaxis(extremum_jvp(
           reduceat_gather(np.broadcast_to(g, np.shape(array)), indices, axis, 0.0),
           np.moveaxis(out, axis, -1),
           reduceat_gather(array, indices, axis, -np.inf), -1, False), -1, axis))
ufunc_method(defvjp(
    ra.minimum_reduceat,
    lambda g, out, array, indices, axis=0: reduceat_scatter(extremum_grad(
        np.moveaxis(g, axis, -1), np.moveaxis(out, axis, -1),
        reduceat_gather(array, indices, axis, np.inf), -1, False), indices, array, axis),
    name="minimum_reduceat", spelling="np.minimum.reduceat(array, indices, axis)",
    family=_F, derivation="a min per segment: g to the extrema, ties split evenly",
    test_cases=_reduceat_cases("minimum")), np.minimum, "reduceat")
defjvp(ra.minimum_reduceat,
       lambda g, out, array, indices, axis=0: np.moveaxis(extremum_jvp(
           reduceat_gather(np.broadcast_to(g, np.shape(array)), indices, axis, 0.0),
           np.moveaxis(out, axis, -1),
           reduceat_gather(array, indices, axis, np.inf), -1, False), -1, axis))
defvjp(reduceat_gather,
       lambda g, out, array, indices, axis, fill: reduceat_scatter(g, indices, array, axis),
       None, None, None,
       name="reduceat_gather", spelling="reduceat_gather(array, indices, axis, fill)",
       family=_R, derivation="the segments as rows (fill constant): reduceat_scatter")
defjvp(reduceat_gather,
       lambda g, out, array, indices, axis, fill: reduceat_gather(
           np.broadcast_to(g, np.shape(array)), indices, axis, 0.0),
       None, None, None)
defvjp(reduceat_scatter,
       lambda g, out, m, indices, array, axis: unbroadcast(
           reduceat_gather(g, indices, axis, 0.0), m), None, None, None,
       name="reduceat_scatter", spelling="reduceat_scatter(m, indices, array, axis)",
       family=_R, linear=("m",),
       derivation="rows added back at their positions: reduceat_gather's transpose")
