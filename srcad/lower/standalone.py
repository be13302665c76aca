"""Lower plain numpy functions (not derivatives): for the tests, the E8 benchmark and people
who want to see what the fuser makes of a few lines.

    >>> import numpy as np
    >>> from srcad.lower.standalone import fuse_functions
    >>> src = "def relu_fma(a, b, c):\\n    return np.maximum(a * b + c, 0.0)\\n"
    >>> a = np.ones(4, np.float32)
    >>> [f], lowered, text = fuse_functions([src], [(a, a, a)])   # doctest: +SKIP
    >>> f(a, a, a)                                                  # doctest: +SKIP
    array([2., 2., 2., 2.], dtype=float32)

Each source is one ``def``; its statements become generated-code lines (the value of a
``return`` is assigned to the function's name first, so that it can be fused), its
parameters get the static types of the example arguments, and all functions' kernels go
into one extension module (one compile for many functions).
"""

from __future__ import annotations

import ast

import numpy as np

from ..build import pooled
from ..codegen import compile_source, render_function
from ..gcode import GFunction, Line
from ..transform.specialise import Info
from . import lower


def _lines(stmts: list) -> list:
    out = []
    for s in stmts:
        if isinstance(s, (ast.For, ast.While, ast.If)):
            head = type(s)(**{f: getattr(s, f) for f in s._fields if f not in ("body",
                                                                                  "orelse")},
                           body=[], orelse=[])
            out.append(Line(head, s.lineno, body=_lines(s.body),
                            orelse=_lines(s.orelse) if s.orelse else None))
        else:
            out.append(Line(s, s.lineno))
    return out


def to_gfunction(source: str) -> GFunction:
    fdef = ast.parse(source).body[0]
    assert isinstance(fdef, ast.FunctionDef), "one def per source"
    body = list(fdef.body)
    if body and isinstance(body[-1], ast.Return) and body[-1].value is not None and \
            not isinstance(body[-1].value, ast.Name):
        ret = body.pop()
        body.append(ast.Assign(targets=[ast.Name(fdef.name, ast.Store())], value=ret.value,
                               lineno=ret.lineno))
        body.append(ast.Return(value=ast.Name(fdef.name, ast.Load()), lineno=ret.lineno))
    return GFunction(fdef.name, [a.arg for a in fdef.args.args], _lines(body))


def fuse_functions(sources: list[str], examples: list[tuple], *, filename: str = "<fused>",
                   namespace: dict | None = None, fuse: bool = True):
    """([callables], LoweredModule or None, the lowered Python source). ``fuse=False``: the
    same functions as srcad writes them, not lowered (the unfused baseline)."""
    functions = [to_gfunction(s) for s in sources]
    infos_of = {f.name: {p: Info.of(v) for p, v in zip(f.params, ex)}
                for f, ex in zip(functions, examples)}
    infos_of = {n: {k: v for k, v in d.items() if v is not None} for n, d in infos_of.items()}
    ns = dict(namespace or {})
    lowered = None
    if fuse:
        functions, lowered = lower(functions, infos_of, ns,
                                   {"filename": filename, "name": functions[0].name})
    text = "import numpy as np\n\n\n" + "\n\n\n".join(
        "\n".join(render_function(f)) for f in functions) + "\n"
    kernels = lowered.functions if lowered is not None else {}
    module = compile_source(text, f"<srcad-fused {filename}>", {"np": np, **ns, **kernels})
    # generated code runs with the buffer pool as numpy's allocator (srcad.build.pooled)
    return [pooled(module[f.name]) for f in functions], lowered, text
