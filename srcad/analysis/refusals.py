"""Refusals that need the arguments being differentiated: a call with no derivative rule
(an op the normaliser made for a method it does not know, srcad/frontend/opaque.py) on a
value gradients flow through would silently carry no gradient, so it is an error at the
user's line, made on the first call once `wrt` is known.

    rng.normal(size=3) * x      fine: rng does not depend on x
    x.conjugate()               NoRuleError: x is differentiated, `.conjugate()` has no rule
"""

from __future__ import annotations

from .. import ir
from ..errors import NoRuleError
from .activity import varied_vars


def check_opaque_methods(fn: ir.Function, wrt) -> None:
    """A method with no rule must not be called on a value that depends on the function's
    float arguments: its result would silently carry no gradient."""
    opaque = [s for s in ir.walk(fn.body) if isinstance(s, ir.Call)
              and s.op.family == "opaque method"]
    if not opaque:
        return
    varied = varied_vars(fn, wrt)
    for s in opaque:
        obj = s.args["obj"]
        if isinstance(obj, ir.Var) and obj.name in varied:
            raise NoRuleError(
                f"the method `{s.op.name}()` has no derivative rule in srcad, and it is called "
                f"on a value that depends on the arguments being differentiated",
                filename=fn.filename, lineno=s.line, func=fn.name,
                hint="call the numpy function instead (np.<name>(x, ...)), or register one "
                "with srcad.defvjp")


