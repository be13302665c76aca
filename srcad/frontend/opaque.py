"""Methods with no derivative rule: `rng.normal(...)` on a passed Generator.

A method call that the normaliser's method table does not know becomes an op made for that
call site, with no derivative. That is right on a value gradients do not flow through, and
silently wrong on one they do, so `check_opaque_methods` refuses the latter once the
arguments being differentiated are known (on the first call).
"""

from __future__ import annotations

import ast

from .. import ir
from ..errors import NoRuleError
from ..ops import table


def _opaque_method(method: str, nargs: int, keywords: tuple) -> table.Op:
    """An op for `obj.method(...)` with no derivative (not in the table, made per call site)."""
    positional = [f"a{i}" for i in range(nargs)]
    params = (table.Param("obj"), *(table.Param(p) for p in positional),
              *(table.Param(k, None) for k in keywords))
    call = ", ".join(positional + [f"{k}={k}" for k in keywords])

    def fn(obj, *args, **kwargs):
        return getattr(obj, method)(*args, **kwargs)

    return table.Op(name=f".{method}", fn=fn, params=params,
                    spelling=ast.parse(f"obj.{method}({call})", mode="eval").body,
                    spelling_src=f"obj.{method}({call})", differentiable=False,
                    family="opaque method")


def check_opaque_methods(fn: ir.Function, wrt) -> None:
    """A method with no rule must not be called on a value that depends on the function's
    float arguments: its result would silently carry no gradient."""
    from ..transform.forward import varied_vars

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


