"""A transform called inside a differentiated function: ``srcad.grad(f)(x)`` as one op.

JAX composes its transformations; so does srcad. Inside a function being differentiated, a
call of a transformed function -- ``g = srcad.grad(f)`` at module level then ``g(x)``, or
``srcad.grad(f)(x)`` written in place, a gradient penalty, per-example gradients in a loop --
is an op whose derivative is the transform's own derivative: its VJP is the pullback of the
transform (``srcad.vjp(srcad.grad(f), x)``, reverse over reverse), its JVP the transform's
tangent (``srcad.jvp(srcad.grad(f), ...)``, forward over reverse). The generated code calls
them through the transformed object (`Transformed.vjp_at`, `Transformed.jvp_at`), which builds
and caches the second-order code for the shapes it meets, as `srcad.vjp` does.

    dx = g_sq.vjp_at((x,), dpenalty)[0]          (the backward of  penalty = g_sq(x))
"""

from __future__ import annotations

import ast
import functools

from ..runtime_trees import tree_scale, tree_vdot
from .table import Op, Param, Rule, defjvp, defvjp

_FAM = "composed transforms"


def _rule(params: tuple, body: str) -> Rule:
    fn = eval(f"lambda {', '.join(params)}: {body}", {})  # (our own text)
    return Rule(fn=fn, params=params, expr=ast.parse(body, mode="eval").body, source=body)


def _call(t, *args):
    return t(*args)


@functools.cache
def transformed_call_op(n: int) -> Op:
    """``_t(a0, ..., a<n-1>)`` with `_t` a transformed function (srcad.grad of a function)."""
    names = [f"a{i}" for i in range(n)]
    every = ("g", "out", "_t", *names)
    packed = "(" + ", ".join(names) + ("," if n == 1 else "") + ")"
    vjps = (None, *(_rule(every, f"_t.vjp_at({packed}, g)[{i}]") for i in range(n)))
    jvps = (None, *(_rule(every, f"_t.jvp_at({packed}, {i}, g)") for i in range(n)))
    src = f"_t({', '.join(names)})"
    return Op(name="transformed", fn=_call, params=(Param("_t"), *(Param(p) for p in names)),
              spelling=ast.parse(src, mode="eval").body, spelling_src=src, vjps=vjps,
              jvps=jvps, differentiable=n > 0, family=_FAM,
              derivation="the transform's own pullback (reverse over reverse) and tangent "
              "(forward over reverse)")


# the inner product and scaling of pytrees (srcad/runtime_trees.py): a transform's pullback
# written as a function srcad can differentiate again (srcad/pullbacks.py). Bilinear, each
# the other's transpose.
defvjp(tree_vdot, lambda g, out, o, t: tree_scale(g, t), lambda g, out, o, t: tree_scale(g, o),
       name="tree_vdot", family="runtime",
       derivation="bilinear: each argument's cotangent is the other scaled by g")
defjvp(tree_vdot, lambda g, out, o, t: tree_vdot(g, t), lambda g, out, o, t: tree_vdot(o, g))
defvjp(tree_scale, lambda g, out, s, t: tree_vdot(g, t), lambda g, out, s, t: tree_scale(s, g),
       name="tree_scale", family="runtime",
       derivation="bilinear: tree_vdot's transpose in t")
defjvp(tree_scale, lambda g, out, s, t: tree_scale(g, t), lambda g, out, s, t: tree_scale(s, g))
