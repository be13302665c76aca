"""The runtime helpers that generated code calls, as rows of the table.

Generated code is ordinary Python that srcad can transform again (higher order:
``srcad.jvp(srcad.grad(f), ...)``, ``srcad.grad(srcad.grad(f))``), so every helper it calls is
an op here. Each is linear in its first argument (a gradient), so its JVP is the helper
applied to the tangent; its VJP is the transposed map (a broadcast is the transpose of a sum,
a mask is its own transpose).
"""

import numpy as np

from .. import runtime as rt
from ..runtime import (
    clip_grad,
    clip_grad_max,
    clip_grad_min,
    concatenate_pieces,
    dot_grad_a,
    dot_grad_b,
    extremum_jvp,
    logaddexp_accumulate_grad,
    logaddexp_accumulate_jvp,
    running_extremum_grad,
    running_extremum_jvp,
    unsupported_derivative,
    masked,
    matmul_grad_a,
    matmul_grad_b,
    prod_grad,
    prod_others_jvp,
    rebroadcast,
    select_grad,
    stack_pieces,
    unbroadcast,
    unreduce,
    unsupported_derivative,
)
from .table import Param, defjvp, defnondiff, defvjp

_FAM = "runtime"

# --- reductions and broadcasts ----------------------------------------------------------------
defvjp(rt.unbroadcast,
       lambda g, out, ct, x: rebroadcast(g, ct),
       None,
       name="unbroadcast", linear=("ct",), family=_FAM,
       derivation="a sum over the broadcast axes; its transpose broadcasts back (a "
       "container's cotangent passes through whole, both ways)")
defvjp(rt.rebroadcast,
       lambda g, out, h, ct: unbroadcast(g, h),
       None,
       name="rebroadcast", linear=("h",), family=_FAM,
       derivation="unbroadcast's transpose: a broadcast; its own transpose sums back")
defvjp(rt.unreduce,
       lambda g, out, ct, x, axis=None, keepdims=False:
           np.reshape(np.sum(g, axis=axis, keepdims=keepdims), np.shape(ct)),
       None,
       name="unreduce", linear=("ct",), family=_FAM,
       derivation="a broadcast back over reduced axes; its transpose sums them")
# (a reduction's where=: srcad/ops/reductions.py)
defvjp(rt.masked, lambda g, out, x, where=True: masked(g, where), None,
       name="masked", linear=("x",), family=_FAM,
       derivation="a mask (0 where `where` is False): its own transpose")
defvjp(rt.filled, lambda g, out, x, where=True, value=np.nan: masked(g, where), None, None,
       name="filled", family=_FAM,
       derivation="x where `where` holds, a constant elsewhere: g through the same mask")
defjvp(rt.filled, lambda g, out, x, where=True, value=np.nan: masked(g, where), None, None)
defnondiff(rt.masked_count, name="masked_count", family=_FAM,
           params=(Param("n"), Param("x"), Param("axis", None), Param("keepdims", False),
                   Param("where", True)))
defvjp(rt.as_grad, lambda g, out, d, x: unbroadcast(g, d), None,
       name="as_grad", linear=("d",), family=_FAM,
       derivation="a copy, cast to the argument's dtype")

# --- masks (their own transposes) -------------------------------------------------------------
defvjp(rt.select_grad, lambda g, out, ct, mask: select_grad(g, mask), None,
       name="select_grad", linear=("ct",), family=_FAM, derivation="a mask")
defvjp(rt.extremum_grad,
       lambda g, out, ct, y, x, axis=None, keepdims=False: extremum_jvp(g, y, x, axis, keepdims),
       None, None,
       name="extremum_grad", linear=("ct",), family=_FAM,
       derivation="spread over the tied extrema; its transpose averages over them")
defvjp(rt.running_extremum_grad,
       lambda g, out, ct, y, array, axis=0, largest=True:
           running_extremum_jvp(g, y, array, axis, largest), None, None,
       name="running_extremum_grad", linear=("ct",), family=_FAM,
       derivation="each step's cotangent to its winner: its transpose takes the winner's "
       "tangent")
defvjp(rt.running_extremum_jvp,
       lambda g, out, t, y, array, axis=0, largest=True:
           running_extremum_grad(g, y, array, axis, largest), None, None,
       name="running_extremum_jvp", linear=("t",), family=_FAM,
       derivation="the winner's tangent at each step: its transpose sends each cotangent "
       "to the winner")
_LAE2 = "the second derivative of np.logaddexp.accumulate"
defvjp(rt.logaddexp_accumulate_grad,
       lambda g, out, ct, y, array, axis=0: logaddexp_accumulate_jvp(g, y, array, axis),
       lambda g, out, ct, y, array, axis=0: unsupported_derivative(_LAE2),
       lambda g, out, ct, y, array, axis=0: unsupported_derivative(_LAE2),
       name="logaddexp_accumulate_grad", linear=("ct",), family=_FAM,
       derivation="the backward recurrence of the running log-sum-exp: its transpose is the "
       "forward one (its weights' own derivatives: not implemented, refused)")
defjvp(rt.logaddexp_accumulate_grad, None,
       lambda g, out, ct, y, array, axis=0: unsupported_derivative(_LAE2),
       lambda g, out, ct, y, array, axis=0: unsupported_derivative(_LAE2))
defvjp(rt.logaddexp_accumulate_jvp,
       lambda g, out, t, y, array, axis=0: logaddexp_accumulate_grad(g, y, array, axis),
       lambda g, out, t, y, array, axis=0: unsupported_derivative(_LAE2),
       lambda g, out, t, y, array, axis=0: unsupported_derivative(_LAE2),
       name="logaddexp_accumulate_jvp", linear=("t",), family=_FAM,
       derivation="the forward recurrence of the running log-sum-exp: its transpose is the "
       "backward one (its weights' own derivatives: not implemented, refused)")
defjvp(rt.logaddexp_accumulate_jvp, None,
       lambda g, out, t, y, array, axis=0: unsupported_derivative(_LAE2),
       lambda g, out, t, y, array, axis=0: unsupported_derivative(_LAE2))
defvjp(rt.clip_grad, lambda g, out, ct, a, a_min, a_max: clip_grad(g, a, a_min, a_max),
       None, None, None, name="clip_grad", linear=("ct",), family=_FAM, derivation="a mask")
defvjp(rt.clip_grad_min, lambda g, out, ct, a, a_min, a_max: clip_grad_min(g, a, a_min, a_max),
       None, None, None, name="clip_grad_min", linear=("ct",), family=_FAM,
       derivation="a mask")
defvjp(rt.clip_grad_max, lambda g, out, ct, a, a_min, a_max: clip_grad_max(g, a, a_min, a_max),
       None, None, None, name="clip_grad_max", linear=("ct",), family=_FAM,
       derivation="a mask")
defvjp(rt.unindex, lambda g, out, ct, x, index: g[index], None, None,
       name="unindex", linear=("ct",), family=_FAM,
       derivation="a scatter-add; its transpose gathers")

defvjp(rt.setitem_grad_x, lambda g, out, ct, index: rt.setitem_grad_x(g, index), None,
       name="setitem_grad_x", linear=("ct",), family=_FAM,
       derivation="zeroes the written positions: a projection, its own transpose")
defvjp(rt.set_tangent_x, lambda g, out, ct, index, out_: rt.setitem_grad_x(g, index), None,
       None, name="set_tangent_x", linear=("ct",), family=_FAM,
       derivation="zeroes the written positions (a dict's or list's slot): its transpose too")
defvjp(rt.set_tangent_value, lambda g, out, ct, index, out_: rt.set_tangent_value_grad(
       ct, index, g), None, None, name="set_tangent_value", linear=("ct",), family=_FAM,
       derivation="ct at the written positions, zeros elsewhere; its transpose reads them")

# --- linear maps of the matmul, dot, prod, cumsum, concatenate and stack rows ------------------
# (their VJPs are their transposes, so generated code calling them can be differentiated in
# reverse mode again: without them, a second derivative through a batched matmul was zero)
defvjp(rt.matmul_grad_a, lambda g, out, ct, a, b: np.matmul(g, b), None,
       lambda g, out, ct, a, b: matmul_grad_b(ct, g, b),
       name="matmul_grad_a", linear=("ct", "b"), family=_FAM,
       derivation="bilinear in (ct, b); transposes: matmul and matmul_grad_b")
defvjp(rt.matmul_grad_b, lambda g, out, ct, a, b: np.matmul(a, g),
       lambda g, out, ct, a, b: matmul_grad_a(ct, a, g), None,
       name="matmul_grad_b", linear=("ct", "a"), family=_FAM,
       derivation="bilinear in (ct, a); transposes: matmul and matmul_grad_a")
defvjp(rt.dot_grad_a, lambda g, out, ct, a, b: np.dot(g, b), None,
       lambda g, out, ct, a, b: dot_grad_b(ct, g, b),
       name="dot_grad_a", linear=("ct", "b"), family=_FAM,
       derivation="bilinear in (ct, b); transposes: dot and dot_grad_b")
defvjp(rt.dot_grad_b, lambda g, out, ct, a, b: np.dot(a, g),
       lambda g, out, ct, a, b: dot_grad_a(ct, a, g), None,
       name="dot_grad_b", linear=("ct", "a"), family=_FAM,
       derivation="bilinear in (ct, a); transposes: dot and dot_grad_a")
defvjp(rt.prod_grad,
       lambda g, out, ct, a, axis=None, keepdims=False:
           np.sum(g * prod_grad(np.ones_like(ct), a, axis, keepdims), axis=axis,
                  keepdims=keepdims),
       lambda g, out, ct, a, axis=None, keepdims=False:
           prod_others_jvp(g * unreduce(ct, a, axis, keepdims), a, axis),
       None, None, name="prod_grad", linear=("ct",), family=_FAM,
       derivation="linear in ct (transpose: a sum against the products of the others); in a, "
       "the products of the others differentiated (prod_others_jvp, a Hessian: symmetric)")
defjvp(rt.prod_grad, None,
       lambda g, out, ct, a, axis=None, keepdims=False:
           unreduce(ct, a, axis, keepdims) * prod_others_jvp(g, a, axis))
_PROD3 = "a third derivative of np.prod"
defvjp(rt.prod_others_jvp, lambda g, out, t, a, axis=None: prod_others_jvp(g, a, axis),
       lambda g, out, t, a, axis=None: unsupported_derivative(_PROD3), None,
       name="prod_others_jvp", linear=("t",), family=_FAM,
       derivation="np.prod's second derivative along t: linear in t and its own transpose; "
       "a third derivative is refused")
defjvp(rt.prod_others_jvp, None,
       lambda g, out, t, a, axis=None: unsupported_derivative(_PROD3))
defvjp(rt.cumsum_grad, lambda g, out, ct, a, axis=None: np.cumsum(g, axis), None, None,
       name="cumsum_grad", linear=("ct",), family=_FAM,
       derivation="a reversed cumulative sum; its transpose is the cumulative sum")
defvjp(rt.unconcatenate, lambda g, out, ct, xs, axis=0: concatenate_pieces(g, xs, axis),
       None, None, name="unconcatenate", linear=("ct",), family=_FAM,
       derivation="a split; its transpose concatenates (zeros for a piece with no cotangent)")
defvjp(rt.unstack, lambda g, out, ct, xs, axis=0: stack_pieces(g, xs, axis), None, None,
       name="unstack", linear=("ct",), family=_FAM,
       derivation="slices along an axis; its transpose stacks them")

# --- numpy scalar constructors used as casts ---------------------------------------------------
for _t in (np.float16, np.float32, np.float64):
    defvjp(_t, lambda g, out, x: g, name=_t.__name__, spelling=f"np.{_t.__name__}(x)",
           linear=("x",), family=_FAM, derivation="a cast")

# --- bookkeeping with no derivative -------------------------------------------------------------
defnondiff(rt.zeros_grad, name="zeros_grad", params=(Param("x"),), family=_FAM)
defnondiff(rt.inverse_permutation, name="inverse_permutation",
           params=(Param("axes"), Param("ndim", None)), family=_FAM)
defnondiff(rt.Stack, name="Stack", spelling="Stack()", params=(), family=_FAM)


def stack_pop(stack):
    """`stack.pop()` as a function, so that the table can hold it (see ir.Push for push)."""
    return stack.pop()


defnondiff(stack_pop, name="pop", spelling="stack.pop()", params=(Param("stack"),), family=_FAM)
# reverse over reverse (srcad/transform/stacks.py): a stack's stack of cotangents, and the pop
# that gives zeros when nothing was pushed on it. Values flow through pops (to the popped
# value, from the stack): the reverse transform writes their backward itself
defnondiff(rt.cotangents, name="cotangents", params=(Param("stack"),), family=_FAM)
defnondiff(rt.pop_or_zeros, name="pop_or_zeros", params=(Param("stack"), Param("like")),
           family=_FAM)

#: ops that take a value off a stack (their `stack` argument): reverse mode turns each into a
#: push of the popped value's cotangent
POPS = ("pop", "pop_or_zeros")

# --- a rule's division where both operands may be Python numbers ------------------------------
# (not marked elementwise: generated code calls it on Python numbers only, never on the
# arrays the fuser or the op grid tests take; it is exercised by transforming generated code
# again, tests/test_python_scalars.py)
defvjp(rt.ieee_divide, lambda g, out, x, y: g / y, lambda g, out, x, y: -g * out / y,
       name="ieee_divide", spelling="ieee_divide(x, y)", broadcasting=True, family=_FAM,
       derivation="x / y (numpy's inf / nan where Python's numbers would raise): as divide")
defjvp(rt.ieee_divide, lambda g, out, x, y: g / y, lambda g, out, x, y: -g * out / y)

# the probe of a try statement (srcad/frontend/trylower.py): runs the try body as Python and
# returns (completed, the exception); which branch runs carries no gradient
defnondiff(rt.attempt, name="attempt", params=(Param("key"), Param("args")), family=_FAM)
