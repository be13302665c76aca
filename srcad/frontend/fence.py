"""Fence: reject the Python constructs srcad does not differentiate, at the right line.

Input: a `ParsedFunction`. Output: nothing; raises `UnsupportedSyntaxError` naming the
construct, the user's file and line, and what to write instead.

What is no longer fenced is lowered by a pass: `with` blocks, `for`/`while ... else`, starred
targets, `reversed(xs)`, star-arguments of a display, sets of constants and the `yield` of a
generator function a caller consumes whole (pyforms.py, before the fence), nested defs and
lambdas (closures.py),
comprehensions, generator expressions and `**` in dict displays (pylower.py), print / assert /
raise and f-strings (effects.py), `global` / `nonlocal` (attrstate.py), try/except/else/
finally (trylower.py), dict displays and
star-arguments to calls with no rule (calls.py). Those passes
refuse, each with a hint, the few forms they cannot lower.
"""

from __future__ import annotations

import gast

from ..errors import UnsupportedSyntaxError
from .parse import ParsedFunction

_REJECT = {
    gast.AsyncWith: ("`async with`", "differentiate a synchronous function"),
    gast.AsyncFor: ("`async for`", "differentiate a synchronous function"),
    gast.AsyncFunctionDef: ("an async function", "differentiate a synchronous function"),
    gast.Await: ("`await`", "differentiate a synchronous function"),
    gast.ClassDef: ("a class definition in a loop, a branch or a nested function",
                    "define classes at module level (or at the function's top level)"),
    gast.Yield: ("`yield` (a generator)", "return arrays instead of yielding them (a "
                 "generator function the differentiated function calls and consumes whole is "
                 "supported)"),
    gast.YieldFrom: ("`yield from` (a generator)", "return arrays instead of yielding them"),
    gast.Import: ("an import inside the function", "import at module level"),
    gast.ImportFrom: ("an import inside the function", "import at module level"),
    gast.Set: ("a set display (a set of constants is read only in a test: `mode in {...}`)",
               "use a tuple"),
    gast.NamedExpr: ("an assignment expression (`:=`)", "assign on its own line"),
    gast.Match: ("a `match` statement", "use if/elif"),
}


def fence(pf: ParsedFunction) -> None:
    """Raise UnsupportedSyntaxError at the first construct srcad does not support."""
    fdef = pf.tree
    args = fdef.args
    if (args.vararg is not None and pf.vararg is None) or args.kwarg is not None:
        raise pf.error(
            f"{pf.name} takes *args or **kwargs, which srcad cannot differentiate",
            fdef,
            hint="give the function a fixed list of named parameters",
            cls=UnsupportedSyntaxError,
        )
    for stmt in fdef.body:
        _excluded_as_tuple(stmt)
        # (a walrus in a comprehension's condition: pylower.py hoists it in the loop it
        # writes, or refuses it there)
        conditions = {id(n) for c in gast.walk(stmt) if isinstance(c, gast.comprehension)
                      for cond in c.ifs for n in gast.walk(cond)}
        for node in gast.walk(stmt):
            kind = type(node)
            if kind is gast.NamedExpr and id(node) in conditions:
                continue
            if kind in _REJECT:
                what, instead = _REJECT[kind]
                raise pf.error(
                    f"srcad does not support {what} in a differentiated function",
                    node,
                    hint=instead,
                    cls=UnsupportedSyntaxError,
                )


def _excluded_as_tuple(stmt) -> None:
    """``np.vectorize(f, excluded={1, "p"})``: the set of constants numpy makes a set of
    anyway, read as the tuple (frontend/callbacks.py lowers the call)."""
    for node in gast.walk(stmt):
        if isinstance(node, gast.Call) and getattr(node.func, "attr", getattr(
                node.func, "id", None)) == "vectorize":
            for k in node.keywords:
                if k.arg == "excluded" and isinstance(k.value, gast.Set) and all(
                        isinstance(v, gast.Constant) for v in k.value.elts):
                    k.value = gast.copy_location(
                        gast.Tuple(elts=k.value.elts, ctx=gast.Load()), k.value)
