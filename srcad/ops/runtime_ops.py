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
    extremum_jvp,
    select_grad,
    unbroadcast,
)
from .table import Param, defnondiff, defvjp

_FAM = "runtime"

# --- reductions and broadcasts ----------------------------------------------------------------
defvjp(rt.unbroadcast,
       lambda g, out, ct, x: np.broadcast_to(g, np.shape(ct)),
       None,
       name="unbroadcast", linear=("ct",), family=_FAM,
       derivation="a sum over the broadcast axes; its transpose broadcasts back")
defvjp(rt.unreduce,
       lambda g, out, ct, x, axis=None, keepdims=False:
           np.reshape(np.sum(g, axis=axis, keepdims=keepdims), np.shape(ct)),
       None,
       name="unreduce", linear=("ct",), family=_FAM,
       derivation="a broadcast back over reduced axes; its transpose sums them")
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

# --- linear maps without a reverse rule yet (forward mode only) -------------------------------
for _fn, _params in [
    (rt.matmul_grad_a, ("ct", "a", "b")), (rt.matmul_grad_b, ("ct", "a", "b")),
    (rt.dot_grad_a, ("ct", "a", "b")), (rt.dot_grad_b, ("ct", "a", "b")),
    (rt.prod_grad, ("ct", "a", "axis", "keepdims")), (rt.cumsum_grad, ("ct", "a", "axis")),
    (rt.unconcatenate, ("ct", "xs", "axis")), (rt.unstack, ("ct", "xs", "axis")),
]:
    _linear = {"matmul_grad_a": ("ct", "b"), "matmul_grad_b": ("ct", "a"),
               "dot_grad_a": ("ct", "b"), "dot_grad_b": ("ct", "a")}.get(_fn.__name__, ("ct",))
    _defaults = {"axis": None, "keepdims": False}
    defvjp(_fn, params=tuple(Param(p, _defaults[p]) if p in _defaults and p != "axis"
                             or (p == "axis" and _fn is not rt.unconcatenate
                                 and _fn is not rt.unstack)
                             else Param(p) for p in _params),
           name=_fn.__name__, linear=_linear, family=_FAM,
           derivation="linear in the gradient: forward mode applies it to the tangent")

# --- numpy scalar constructors used as casts ---------------------------------------------------
for _t in (np.float16, np.float32, np.float64):
    defvjp(_t, lambda g, out, x: g, name=_t.__name__, spelling=f"np.{_t.__name__}(x)",
           linear=("x",), family=_FAM, derivation="a cast")

# --- bookkeeping with no derivative -------------------------------------------------------------
defnondiff(rt.zeros_grad, name="zeros_grad", params=(Param("x"),), family=_FAM)
defnondiff(rt.Stack, name="Stack", spelling="Stack()", params=(), family=_FAM)


def stack_pop(stack):
    """`stack.pop()` as a function, so that the table can hold it (see ir.Push for push)."""
    return stack.pop()


defnondiff(stack_pop, name="pop", spelling="stack.pop()", params=(Param("stack"),), family=_FAM)
