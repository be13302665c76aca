"""What srcad transforms for a callable that is not a plain function: a `functools.partial`
of one, a numpy function with a row (``srcad.grad(np.sin)``, ``srcad.grad(np.tril)``), or a
user decorator's `*args, **kwargs` wrapper (`user_star_wrapper`).

Each becomes a small Python function, written here as source (registered in linecache, so
that srcad reads it like the user's), with the callable's own signature, whose body calls
the callable: ``def f(x, *, y=<bound>): return <partial>(x, y=y)``. The frontend resolves the
call as it resolves one in the user's code: a partial of a user function is that function
with its bound arguments (srcad/frontend/calls.py), a numpy function its row. Calling the
transform means what calling the callable means; wrt positions and names count the
parameters the callable still takes.

    srcad.grad(functools.partial(loss, W=W0))(x)   # d loss(x, W=W0) / dx
"""

from __future__ import annotations

import functools
import inspect
import itertools
import linecache
import types

import numpy as np

from .errors import SrcadError
from .frontend.opaque import library_file
from .ops import table

_COUNTER = itertools.count()
_NO_VALUE = getattr(np, "_NoValue", object())  # (numpy's "not given" default)


def _rowed(fn) -> bool:
    try:
        return table.lookup(fn) is not None
    except TypeError:  # (unhashable)
        return False


def needs_wrapper(fn) -> bool:
    """A partial of a Python function (or of another such partial), or a numpy callable
    srcad has a row for."""
    if isinstance(fn, functools.partial):
        inner = fn.func
        while isinstance(inner, functools.partial):
            inner = inner.func
        return isinstance(inner, (types.FunctionType, types.MethodType)) or _rowed(inner)
    if isinstance(fn, types.FunctionType) and user_star_wrapper(fn):
        return True
    if isinstance(fn, (types.FunctionType, types.MethodType)):
        # (np.tril: a library's function with a row -- numpy's source is not what we read)
        return _rowed(fn) and library_file(fn) is not None
    return isinstance(fn, np.ufunc) or _rowed(fn)


def user_star_wrapper(fn) -> bool:
    """A decorator's wrapper in the user's code that passes `*args, **kwargs` through
    (`@functools.wraps(f) def wrapped(*a, **k): return 2.0 * f(*a, **k)`): its own code is
    what runs, so srcad transforms it, called with the wrapped function's parameters (its
    signature, as functools.wraps gives it), not the wrapped function alone."""
    if getattr(fn, "__wrapped__", None) is None or library_file(fn) is not None or \
            (fn.__module__ or "").startswith("srcad"):
        return False
    own = inspect.signature(fn, follow_wrapped=False).parameters.values()
    return any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in own) and not any(
        p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in _parameters(fn))


def _parameters(fn) -> list:
    if isinstance(fn, np.ufunc):
        return [inspect.Parameter(f"x{i}" if fn.nin > 1 else "x",
                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)
                for i in range(fn.nin)]
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        raise SrcadError(f"srcad cannot read the parameters of {fn!r}",
                         hint="wrap it in a function: srcad.grad(lambda x: f(x))") from None


def takes_star(fn) -> bool:
    """Does `fn` (a plain Python function) take `*rest`?"""
    if not isinstance(fn, (types.FunctionType, types.MethodType)):
        return False
    return any(p.kind is p.VAR_POSITIONAL for p in inspect.signature(fn).parameters.values())


@functools.lru_cache(maxsize=256)
def fixed_arity(fn, n: int):
    """`fn(x, *rest)` called with n positional arguments, as a function of exactly those:
    ``def f(x, rest_0, rest_1): return fn(x, rest_0, rest_1)`` -- what srcad.vjp / srcad.jvp
    transform, so that primals, tangents and cotangents are one per positional argument (as
    JAX's), whatever fn packs into its tuple. (One per fn and n: the transforms cache on it.)"""
    named = [p.name for p in inspect.signature(fn).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next(p.name for p in inspect.signature(fn).parameters.values()
                if p.kind is p.VAR_POSITIONAL)
    taken = set(named)
    extra = []
    for i in range(max(0, n - len(named))):
        name = f"{star}_{i}"
        while name in taken:
            name += "_"
        taken.add(name)
        extra.append(name)
    params = ", ".join(named[:n] + extra)
    name = fn.__name__ if fn.__name__.isidentifier() else "fn"
    filename = f"<srcad-wrapper {name} {next(_COUNTER)}>"
    src = f"def {name}({params}):\n    return _fn({params})\n"
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    namespace = {"_fn": fn}
    exec(compile(src, filename, "exec"), namespace)  # noqa: S102 (our own text)
    made = namespace[name]
    made.__srcad_wraps__ = fn
    return made


def wrapper(fn):
    """The plain function that calls `fn` with its own parameters (see the module)."""
    params = _parameters(fn)
    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "func", None), "__name__",
                                                     "partial")
    name = name if name.isidentifier() else "fn"
    namespace = {"_fn": fn}
    spelled, passed, star = [], [], False
    inner = fn
    while isinstance(inner, functools.partial):
        inner = inner.func
    row = table.lookup(inner) if _rowed(inner) else None
    library = row is not None and not isinstance(inner, np.ufunc) and (
        not isinstance(inner, (types.FunctionType, types.MethodType)) or
        library_file(inner) is not None)
    for p in params:
        if library and (p.default is _NO_VALUE or (p.default is not p.empty and
                                                   p.name not in row.param_names)):
            # (a library function's parameters its row does not take -- numpy's `out=`,
            # logsumexp's `return_sign` -- or that default to numpy's "not given", np.sum's
            # keepdims, initial, where: not the wrapper's, so that the call passes what its
            # caller gives; `srcad.grad(np.sum)(x)` passed all seven before, refused)
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise SrcadError(
                f"srcad.grad of {fn!r}: it takes *{p.name}, which srcad cannot differentiate "
                f"with respect to", hint="wrap it in a function with named parameters")
        text = p.name
        if p.default is not p.empty:
            namespace[f"_default_{p.name}"] = p.default
            text += f"=_default_{p.name}"
        if p.kind == p.KEYWORD_ONLY and not star:
            spelled.append("*")
            star = True
        spelled.append(text)
        passed.append(p.name if p.kind == p.POSITIONAL_ONLY or (
            p.kind == p.POSITIONAL_OR_KEYWORD and not (library and p.default is not p.empty))
            else f"{p.name}={p.name}")
    filename = f"<srcad-wrapper {name} {next(_COUNTER)}>"
    src = f"def {name}({', '.join(spelled)}):\n    return _fn({', '.join(passed)})\n"
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    exec(compile(src, filename, "exec"), namespace)  # noqa: S102 (our own text)
    made = namespace[name]
    made.__srcad_wraps__ = fn
    return made
