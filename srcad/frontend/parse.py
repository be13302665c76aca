"""Parse a user function and resolve the names its body uses.

Input: a Python function object. Output: a `ParsedFunction` holding its gast
`FunctionDef` (line numbers are the user's file lines, decorators removed), the file
name and source lines for error messages, and `resolve(name)`, which looks a free name
up in the function's closure, then its globals, then builtins -- so ``import numpy as
xp``, ``from numpy import tanh`` and a module-level alias all reach the same op row.
"""

from __future__ import annotations

import builtins
import inspect
import linecache
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from ..errors import SrcadError

_UNRESOLVED = object()


@dataclass
class ParsedFunction:
    fn: Callable
    name: str
    filename: str
    tree: gast.FunctionDef
    first_line: int
    last_line: int
    params: list[str]
    closure: dict[str, Any] = field(default_factory=dict)

    def resolve(self, name: str) -> Any:
        """The object a free name refers to, or raise SrcadError."""
        if name in self.closure:
            return self.closure[name]
        g = self.fn.__globals__
        if name in g:
            return g[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        return _UNRESOLVED

    def line(self, lineno: int | None) -> str:
        if lineno is None:
            return ""
        return linecache.getline(self.filename, lineno).strip()

    def error(self, message: str, node=None, *, hint: str | None = None, cls=SrcadError):
        lineno = getattr(node, "lineno", None) if node is not None else None
        if isinstance(node, int):
            lineno = node
        return cls(message, filename=self.filename, lineno=lineno, hint=hint, func=self.name)


def parse_function(fn: Callable) -> ParsedFunction:
    """Parse `fn`'s source into gast with the user's line numbers."""
    fn = inspect.unwrap(fn)
    if not inspect.isfunction(fn):
        raise SrcadError(
            f"srcad can only transform Python functions, got {type(fn).__name__} {fn!r}",
            hint="pass a function defined with `def` in a .py file",
        )
    if fn.__name__ == "<lambda>":
        raise SrcadError(
            "srcad cannot transform a lambda",
            filename=fn.__code__.co_filename,
            lineno=fn.__code__.co_firstlineno,
            hint="define the function with `def`",
        )
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise SrcadError(
            f"cannot read the source of {fn.__qualname__}",
            hint="srcad transforms source code: define the function in a .py file "
            "(not in an interactive session or via exec)",
        ) from e
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    source = textwrap.dedent("".join(lines))
    try:
        module = gast.parse(source)
    except SyntaxError as e:  # pragma: no cover - the function compiled, so it parses
        raise SrcadError(f"cannot parse {fn.__qualname__}: {e}") from e
    fdef = module.body[0]
    if not isinstance(fdef, gast.FunctionDef):
        raise SrcadError(
            f"{fn.__qualname__} is not a plain `def` function",
            filename=filename,
            lineno=first,
        )
    gast.increment_lineno(module, first - 1)
    fdef.decorator_list = []
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: defined later in the enclosing scope
                pass
    # make sure linecache has the file, for error messages
    linecache.checkcache(filename)
    linecache.getlines(filename, fn.__globals__)
    args = fdef.args
    params = [a.id for a in args.posonlyargs + args.args]
    return ParsedFunction(
        fn=fn,
        name=fn.__name__,
        filename=filename,
        tree=fdef,
        first_line=first,
        last_line=first + len(lines) - 1,
        params=params,
        closure=closure,
    )


UNRESOLVED = _UNRESOLVED
