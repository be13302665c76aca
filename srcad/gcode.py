"""The generated-code model that reverse/forward build, optimize rewrites and codegen prints.

A `GFunction` is a list of `Line`s: an `ast` statement tagged with the user's line it
serves, or a standalone comment. Keeping comments beside (not inside) the AST lets every
pass stay a plain AST rewrite while codegen still prints `# grad of L12: ...` headers.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Line:
    """One generated statement, or a comment; a compound statement (for/if/while) keeps its
    header in `node` (with an empty body) and its bodies as lists of Lines."""

    node: ast.stmt | None = None
    line: int | None = None  # the user's line this statement serves
    comment: str | None = None  # a standalone comment line (node is None)
    body: list | None = None  # for a compound statement: its body, as Lines
    orelse: list | None = None  # for an if: its else branch, as Lines
    keep: bool = False  # has an effect (a print, a random draw): never dead code

    @property
    def compound(self) -> bool:
        return self.body is not None

    def __deepcopy__(self, memo):
        # what deepcopy would make, with the ast trees copied by `clone` (~4x faster)
        return clone_object(self, memo)

    def walk(self):
        """This line and every line nested in it."""
        yield self
        for ln in (self.body or []) + (self.orelse or []):
            yield from ln.walk()


def line_reads(ln: Line) -> set[str]:
    """Names a line loads (a compound line: its header and everything nested)."""
    out = set()
    for sub in ln.walk():
        if sub.node is not None:
            out |= names_read(sub.node)
    return out


def line_writes(ln: Line) -> set[str]:
    """Names a line may assign (a compound line: anything nested; a for: its target)."""
    out = set()
    for sub in ln.walk():
        if sub.node is not None:
            out |= names_written(sub.node)
            if isinstance(sub.node, ast.For):
                out |= names_mentioned(sub.node.target)
    return out


@dataclass
class GFunction:
    name: str
    params: list[str]
    body: list[Line] = field(default_factory=list)
    doc: str | None = None

    def statements(self):
        return [ln for ln in self.body if ln.node is not None]


def names_read(node: ast.AST) -> set[str]:
    """Names a statement or expression loads (a compound header: without its empty body)."""
    out = names_loaded(node)
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        out.add(node.target.id)
    return out


def exposed_reads(lines: list, written: frozenset = frozenset()) -> set[str]:
    """Names `lines` may read before assigning them: what must be bound on entry. Inside a
    compound statement, assignments count for what follows them in the same body (one
    iteration reads its own values); they do not count after it (it may not run)."""
    out: set[str] = set()
    done = set(written)
    for ln in lines:
        if ln.node is None:
            continue
        out |= names_read(ln.node) - done
        if ln.compound:
            inner = set(done)
            if isinstance(ln.node, ast.For):
                inner |= names_mentioned(ln.node.target)
            out |= exposed_reads(ln.body, frozenset(inner))
            if ln.orelse:
                out |= exposed_reads(ln.orelse, frozenset(done))
        else:
            done |= names_written(ln.node)
    return out


def names_written(node: ast.stmt) -> set[str]:
    out = set()
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AugAssign):
        targets = [node.target]
    for t in targets:
        out |= names_stored(t)
    return out


def name(id_: str) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Load())


def store(id_: str) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Store())


# a placeholder statement `__srcad_restore__(x)` the reverse transform turns into
# `x = stack_x.pop()` once it knows the stack's name
RESTORE = "__srcad_restore__"


def call(fname: str, *args: ast.expr) -> ast.Call:
    """`fname(*args)` (a runtime helper or a builtin)."""
    return ast.Call(func=name(fname), args=list(args), keywords=[])


def method(obj: ast.expr, meth: str, *args: ast.expr) -> ast.Call:
    """`obj.meth(*args)`."""
    return ast.Call(func=ast.Attribute(value=obj, attr=meth, ctx=ast.Load()), args=list(args),
                    keywords=[])


def compound(node: ast.stmt, line: int, body: list, orelse: list | None = None) -> Line:
    """A compound statement's Line: `node` is its header, `body`/`orelse` its Lines."""
    return Line(node, line, body=body, orelse=orelse)


def free_names(expr: ast.expr) -> set[str]:
    """Every name an expression mentions."""
    return names_mentioned(expr)


def assign(target: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[store(target)], value=value, lineno=0)


def parse_expr(src: str) -> ast.expr:
    return ast.parse(src, mode="eval").body


def dtype_src(dtype) -> str:
    """How generated code spells a dtype: ``np.float32`` where numpy's scalar type of that
    name is exactly this dtype (native byte order), else the dtype itself,
    ``np.dtype('>f8')`` or ``np.dtype('O')`` (a big-endian array's dtype is named float64,
    and ``np.object`` is gone)."""
    dt = np.dtype(dtype)
    scalar = getattr(np, dt.name, None) if dt.isnative and dt.kind in "biufc" else None
    if isinstance(scalar, type) and issubclass(scalar, np.generic) and np.dtype(scalar) == dt:
        return f"np.{dt.name}"
    return f"np.{dt!r}"


def dtype_is_type(dtype) -> bool:
    """Is `dtype_src` a scalar type, callable on a value (``np.float32(g)``)?"""
    return not dtype_src(dtype).startswith("np.dtype(")


# -- fast ast copies and name sets ------------------------------------------------------------

_AST = ast.AST
_NAME = ast.Name
_LOAD = ast.Load
_STORE = ast.Store
# values deepcopy returns as they are (immutable atoms)
_ATOMIC = frozenset({type(None), bool, int, float, complex, str, bytes, type(Ellipsis),
                     type(NotImplemented), type, range})


def clone(node, memo: dict | None = None):
    """`copy.deepcopy(node)` for an ast tree (or a list of them), ~4x faster."""
    if memo is None:
        memo = {}
    if type(node) is list:
        return _list(node, memo)
    if not isinstance(node, _AST):
        return node if type(node) in _ATOMIC else copy.deepcopy(node, memo)
    return _clone(node, memo)


def clone_object(obj, memo: dict):
    """deepcopy's copy of a plain object (its state is its `__dict__`, like an ast node's):
    what a class's `__deepcopy__` can return to copy the ast trees it holds fast."""
    return _clone(obj, memo)


def _clone(node, memo: dict):
    done = memo.get(id(node))
    if done is not None:
        return done
    cls = node.__class__
    new = cls.__new__(cls)
    memo[id(node)] = new
    d = new.__dict__
    for k, v in node.__dict__.items():
        if isinstance(v, _AST):
            v = _clone(v, memo)
        elif type(v) is list:
            v = _list(v, memo)
        elif type(v) not in _ATOMIC:
            v = copy.deepcopy(v, memo)
        d[k] = v
    return new


def _list(items: list, memo: dict) -> list:
    done = memo.get(id(items))
    if done is not None:
        return done
    out: list = []
    memo[id(items)] = out
    for x in items:
        if isinstance(x, _AST):
            x = _clone(x, memo)
        elif type(x) is list:
            x = _list(x, memo)
        elif type(x) not in _ATOMIC:
            x = copy.deepcopy(x, memo)
        out.append(x)
    return out


def nodes(node: ast.AST):
    """The nodes of `node`'s tree, itself included: `ast.walk`'s, depth first."""
    todo = [node]
    pop, push = todo.pop, todo.append
    while todo:
        n = pop()
        yield n
        for f in n._fields:
            v = getattr(n, f, None)
            if isinstance(v, _AST):
                push(v)
            elif type(v) is list:
                for x in v:
                    if isinstance(x, _AST):
                        push(x)


def _names(node: ast.AST, ctx) -> set[str]:
    out: set[str] = set()
    todo = [node]
    pop, push = todo.pop, todo.append
    while todo:
        n = pop()
        if isinstance(n, _NAME):
            if ctx is None or isinstance(n.ctx, ctx):
                out.add(n.id)
            continue  # (its only child is its ctx)
        for f in n._fields:
            v = getattr(n, f, None)
            if isinstance(v, _AST):
                push(v)
            elif type(v) is list:
                for x in v:
                    if isinstance(x, _AST):
                        push(x)
    return out


def names_loaded(node: ast.AST) -> set[str]:
    """{n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, Load)}"""
    return _names(node, _LOAD)


def names_stored(node: ast.AST) -> set[str]:
    """{n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, Store)}"""
    return _names(node, _STORE)


def names_mentioned(node: ast.AST) -> set[str]:
    """{n.id for n in ast.walk(node) if isinstance(n, ast.Name)}"""
    return _names(node, None)
