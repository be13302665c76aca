"""Methods with no derivative rule: `rng.normal(...)` on a passed Generator.

A method call that the normaliser's method table does not know becomes an op made for that
call site, with no derivative. That is right on a value gradients do not flow through, and
silently wrong on one they do, so `srcad.analysis.refusals.check_opaque_methods` refuses the
latter once the arguments being differentiated are known (on the first call).
"""

from __future__ import annotations

import ast

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
