"""Tape mode's ``srcad.grad(inner)(y)`` where `inner` is a nested function reading a value the
tape is differentiating (``def inner(y): return x * y`` inside the function tape mode runs).

Source mode lifts nested functions when it normalises the enclosing one (srcad/frontend/
closures.py): the free variables become parameters, passed at the call, so the inner
transform's derivative w.r.t. them flows. Tape mode runs the enclosing function as written,
so the closure arrives here already made, its cells holding the tape's Tensors. `lifted`
makes the same lifted function from the nested function's source: its parameters, then its
free variables; the tape then records one composed op over (arguments, cell values).

    def inner(y): return x * y       ->    def inner(y, x): return x * y
"""

from __future__ import annotations

import ast
import inspect
import itertools
import linecache
import textwrap
import types

from .errors import SrcadError

_COUNTER = itertools.count()


def lifted(fn: types.FunctionType) -> types.FunctionType:
    """`fn` with its free variables as extra parameters, after its own (see the module)."""
    try:
        lines, start = inspect.getsourcelines(fn)
        src = textwrap.dedent("".join(lines))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError) as e:
        raise SrcadError(f"cannot read the source of {fn.__qualname__}") from e
    fdef = tree.body[0]
    if fn.__name__ == "<lambda>":
        fdef = _lambda_def(fn, tree, start)
    if not isinstance(fdef, ast.FunctionDef) or fdef.args.vararg or fdef.args.kwarg:
        raise SrcadError(
            f"tape mode cannot lift {fn.__qualname__} (*args / **kwargs, or a lambda whose "
            f"line holds another with its parameters)",
            filename=fn.__code__.co_filename, lineno=fn.__code__.co_firstlineno,
            hint="differentiate the enclosing function with mode='source' (the default)")
    free = list(fn.__code__.co_freevars)
    fdef.decorator_list = []
    extra = [ast.arg(arg=v) for v in free]
    if fdef.args.defaults:
        fdef.args.defaults = [*fdef.args.defaults, *(ast.Constant(None) for _ in free)]
    fdef.args.args = [*fdef.args.args, *extra]
    ast.fix_missing_locations(tree)
    text = ast.unparse(tree) + "\n"
    filename = f"<srcad-lifted {fn.__name__} {next(_COUNTER)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    code = compile(text, filename, "exec")
    body = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    defaults = (*fn.__defaults__, *(None for _ in free)) if fn.__defaults__ else None
    made = types.FunctionType(body, fn.__globals__, fdef.name, defaults)
    made.__kwdefaults__ = fn.__kwdefaults__
    return made


def _lambda_def(fn, tree, start: int):
    """The lambda `fn` is, in the source lines it was read from, as ``def <lambda>(args):
    return body`` (None where the lines hold no one lambda of its line and parameters)."""
    code = fn.__code__
    params = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
             and start + n.lineno - 1 == code.co_firstlineno
             and [a.arg for a in (*n.args.args, *n.args.kwonlyargs)] == params]
    if len(found) != 1:
        return None
    lam = found[0]
    fdef = ast.FunctionDef(name="lambda_", args=lam.args, body=[ast.Return(value=lam.body)],
                           decorator_list=[], returns=None, type_comment=None)
    if "type_params" in ast.FunctionDef._fields:
        fdef.type_params = []
    tree.body = [fdef]
    return fdef


def cell_values(fn: types.FunctionType) -> list:
    return [c.cell_contents for c in fn.__closure__]
