"""The op table: one record per differentiable (or deliberately non-differentiable) op.

Every fact about an op lives in its row: the numpy forward, how the forward is
spelled in generated code, one VJP rule per positional argument, the JVP rules,
whether it is elementwise (and its C expression), a one-line derivation and the
metadata the tests read (input domain, dtypes, tolerance, arity).

Rules are ordinary Python lambdas in autograd's shape, ``lambda g, out, x, y: ...``,
registered through :func:`defvjp` / :func:`defjvp` -- the same two functions users
call for their own ops. The lambda stays callable (tape mode calls it) and its body
is parsed once into an ``ast`` expression that the transforms inline, so both modes
run the same numpy calls. What a rule needs saved is *derived* from the free names of
its expression (`Rule.reads`), never hand-listed.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import SrcadError

_MISSING = object()


@dataclass(frozen=True)
class Param:
    name: str
    default: Any = _MISSING

    @property
    def required(self) -> bool:
        return self.default is _MISSING


@dataclass
class Rule:
    """A derivative rule: a lambda plus its parsed body."""

    fn: Callable
    params: tuple[str, ...]  # all lambda parameter names, e.g. ("g", "out", "x", "y")
    expr: ast.expr  # the lambda body
    source: str  # the body as text, for docs

    @property
    def reads(self) -> frozenset[str]:
        """Parameter names the rule's expression reads: what the backward must keep."""
        used = {n.id for n in ast.walk(self.expr) if isinstance(n, ast.Name)}
        return frozenset(p for p in self.params if p in used)

    @property
    def globals(self) -> dict:
        return self.fn.__globals__


@dataclass
class Op:
    """One row of the op table."""

    name: str
    fn: Callable
    params: tuple[Param, ...]
    spelling: ast.expr  # forward as an expression over the param names
    vjps: tuple[Rule | None, ...] = ()
    jvps: tuple[Rule | None, ...] = ()
    differentiable: bool = True
    elementwise: bool = False
    broadcasting: bool = False  # elementwise n-ary: each VJP is unbroadcast to its input
    view: bool = False  # forward may return a view of an input
    c_expr: str | None = None
    c_version: int = 1
    derivation: str = ""
    family: str = ""
    # test metadata
    domain: tuple[float, float] = (-2.0, 2.0)
    dtypes: tuple[str, ...] = ("float32", "float64")
    tol: dict = field(default_factory=lambda: {"float32": 2e-3, "float64": 1e-6})
    test_cases: tuple = ()  # extra (shapes, kwargs) cases for ops that are not plain elementwise
    spelling_src: str = ""

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def vjp(self, pname: str) -> Rule | None:
        """The VJP rule for the named forward parameter, or None if not differentiable."""
        i = self.param_names.index(pname)
        if i < len(self.vjps):
            return self.vjps[i]
        return None

    @property
    def saved(self) -> frozenset[str]:
        """Forward values the VJP rules read (derived from the rules, not listed)."""
        reads: set[str] = set()
        for r in self.vjps:
            if r is not None:
                reads |= r.reads
        return frozenset(reads - {"g"})


# ---------------------------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------------------------

_BY_FN: dict[int, Op] = {}
_BY_NAME: dict[str, Op] = {}
_KEEPALIVE: list = []


def _key(fn) -> int:
    return id(fn)


def lookup(fn) -> Op | None:
    """The row registered for a callable, or None."""
    try:
        return _BY_FN.get(_key(fn))
    except TypeError:
        return None


def by_name(name: str) -> Op:
    return _BY_NAME[name]


def all_ops() -> list[Op]:
    """Every registered row, in registration order."""
    return list(_BY_NAME.values())


def _register(op: Op) -> Op:
    _KEEPALIVE.append(op.fn)
    _BY_FN[_key(op.fn)] = op
    _BY_NAME[op.name] = op
    return op


# ---------------------------------------------------------------------------------------------
# parsing a rule from its lambda's source
# ---------------------------------------------------------------------------------------------


def _lambda_node(fn: Callable) -> ast.Lambda:
    """Find the ast.Lambda whose code object is `fn` in its source file."""
    code = fn.__code__
    try:
        lines, start = inspect.findsource(fn)
    except (OSError, TypeError) as e:
        raise SrcadError(
            f"cannot read the source of rule {fn!r}",
            hint="define derivative rules as lambdas or functions in a .py file",
        ) from e
    tree = ast.parse("".join(lines))
    want_args = code.co_varnames[: code.co_argcount]
    positions = {(ln, col) for (ln, _, col, _) in code.co_positions() if ln is not None}
    candidates = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            args = tuple(a.arg for a in node.args.args)
            if args == want_args and node.lineno <= code.co_firstlineno <= node.end_lineno:
                candidates.append(node)
    if len(candidates) > 1:
        body_hits = [
            c
            for c in candidates
            if any(
                (n.lineno, n.col_offset) in positions
                for n in ast.walk(c.body)
                if hasattr(n, "lineno")
            )
        ]
        candidates = body_hits or candidates
    if not candidates:
        raise SrcadError(f"cannot find the source of rule {fn!r}")
    return candidates[0]


def _function_node(fn: Callable) -> tuple[ast.expr, tuple[str, ...]]:
    """A `def` rule must be a single `return <expr>`."""
    src = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(src)
    fdef = tree.body[0]
    assert isinstance(fdef, ast.FunctionDef)
    body = [s for s in fdef.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        raise SrcadError(
            f"derivative rule {fn.__qualname__} must be a lambda or a def with a single return",
            hint="write the rule as one expression so that srcad can inline it",
        )
    return body[0].value, tuple(a.arg for a in fdef.args.args)


def parse_rule(fn: Callable) -> Rule:
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise SrcadError(f"a derivative rule must be a Python lambda or function, got {fn!r}")
    if fn.__name__ == "<lambda>":
        node = _lambda_node(fn)
        expr, params = node.body, tuple(a.arg for a in node.args.args)
        defaults = node.args.defaults
    else:
        expr, params = _function_node(fn)
        defaults = []
    del defaults  # defaults are read from the function object itself
    expr = ast.fix_missing_locations(expr)
    return Rule(fn=fn, params=params, expr=expr, source=ast.unparse(expr))


def _params_of(rule_fn: Callable) -> tuple[Param, ...]:
    sig = inspect.signature(rule_fn)
    names = list(sig.parameters.values())
    if len(names) < 3 or names[0].name != "g" or names[1].name != "out":
        raise SrcadError(
            f"a VJP rule's parameters must start with (g, out, ...), got {tuple(sig.parameters)}",
            hint="write rules as `lambda g, out, x, y: ...` (autograd's shape)",
        )
    return tuple(
        Param(p.name, _MISSING if p.default is inspect.Parameter.empty else p.default)
        for p in names[2:]
    )


def _default_spelling(fn: Callable, params: tuple[Param, ...]) -> str:
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", "f")
    import numpy as np

    if isinstance(fn, np.ufunc) or mod.startswith("numpy"):
        if getattr(np, name, None) is fn:
            prefix = "np."
        elif getattr(np.linalg, name, None) is fn:
            prefix = "np.linalg."
        else:
            prefix = "np."
    else:
        prefix = ""
    args = ", ".join(p.name for p in params)
    return f"{prefix}{name}({args})"


def defvjp(fn: Callable, *rules: Callable | None, **meta: Any) -> Op:
    """Register VJP rules for `fn`, one per positional argument (None: no gradient).

    Each rule has autograd's shape, ``lambda g, out, x, y: ...``, where ``g`` is the
    cotangent of the output ``out`` and the rest are `fn`'s arguments (keyword
    parameters with defaults are allowed after the positional ones). The rule must
    return the gradient for its argument *before* broadcasting is undone: for an
    elementwise op, srcad unbroadcasts each result to its input's shape.

    >>> import numpy as np, srcad
    >>> def softplus(x):
    ...     return np.log1p(np.exp(x))
    >>> _ = srcad.defvjp(softplus, lambda g, out, x: g / (1 + np.exp(-x)))

    Registering a user function makes srcad treat it as one op: its body is not traced.
    ``meta`` carries the table's own metadata (name, elementwise, c, derivation, ...).
    """
    if "c" in meta:
        meta["c_expr"] = meta.pop("c")
    parsed = tuple(None if r is None else parse_rule(r) for r in rules)
    first = next((r for r in rules if r is not None), None)
    if "params" in meta:
        params = tuple(meta.pop("params"))
    elif first is not None:
        params = _params_of(first)
    else:
        sig = inspect.signature(fn)
        params = tuple(
            Param(p.name, _MISSING if p.default is inspect.Parameter.empty else p.default)
            for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        )
    if len(parsed) > len(params):
        raise SrcadError(
            f"{len(parsed)} rules given for {getattr(fn, '__name__', fn)} "
            f"which has {len(params)} parameters"
        )
    for r in parsed:
        if r is not None and tuple(r.params[2:]) != tuple(p.name for p in params):
            raise SrcadError(
                f"rule `{r.source}` for {getattr(fn, '__name__', fn)} has parameters "
                f"{r.params}; every rule of one op must take (g, out, "
                f"{', '.join(p.name for p in params)})"
            )
    spelling_src = meta.pop("spelling", None) or _default_spelling(fn, params)
    name = meta.pop("name", None) or getattr(fn, "__name__", repr(fn))
    old = lookup(fn)
    jvps = old.jvps if old is not None else ()
    op = Op(
        name=name,
        fn=fn,
        params=params,
        spelling=ast.parse(spelling_src, mode="eval").body,
        spelling_src=spelling_src,
        vjps=parsed,
        jvps=jvps,
        differentiable=any(r is not None for r in parsed),
        **meta,
    )
    return _register(op)


def defjvp(fn: Callable, *rules: Callable | None) -> Op:
    """Register JVP rules for `fn`: ``lambda x_dot, out, x, y: ...`` per positional argument.

    The tangent of the output is the sum over arguments of each rule's value.
    """
    op = lookup(fn)
    if op is None:
        raise SrcadError(
            f"defjvp({getattr(fn, '__name__', fn)}) needs the op registered first",
            hint="call srcad.defvjp for the same function before srcad.defjvp",
        )
    op.jvps = tuple(None if r is None else parse_rule(r) for r in rules)
    return op


def defnondiff(fn: Callable, *, spelling: str | None = None, name: str | None = None, **meta) -> Op:
    """Register an op with no gradient: shape queries, constructors, comparisons."""
    params = meta.pop("params", None)
    if params is None:
        try:
            sig = inspect.signature(fn)
            params = tuple(
                Param(p.name, _MISSING if p.default is inspect.Parameter.empty else p.default)
                for p in sig.parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            )
        except (TypeError, ValueError):
            params = (Param("x"),)
    spelling_src = spelling or _default_spelling(fn, params)
    op = Op(
        name=name or getattr(fn, "__name__", repr(fn)),
        fn=fn,
        params=tuple(params),
        spelling=ast.parse(spelling_src, mode="eval").body,
        spelling_src=spelling_src,
        vjps=(),
        differentiable=False,
        **meta,
    )
    return _register(op)
