"""Memory planning: compute in place where an operand's buffer dies (issue 14).

Input: optimised `GFunction`s (copies propagated, dead code gone, ``del`` after last uses)
and the static `Info` (shape, dtype) of their names. Output: the same functions, where an
elementwise statement whose result has the shape, dtype and memory order of an operand that
dies there -- and that the generated code owns -- computes into that operand's buffer:

    dh_add = dh * (1 - h * h)  # L8            # planned: dh_add = dh * (1 - h * h)
    del dh, h  # L8                    ->      h *= h  # L8
                                               np.subtract(1, h, out=h)  # L8
                                               dh_add = np.multiply(dh, h, out=dh)  # L8
                                               del dh, h  # L8

The same ufuncs run on the same operands in the same order, so every value is bit for bit
the unplanned one; numpy's out-of-place result of an elementwise op with a C-contiguous
operand of the result's shape is C-contiguous, and only such (known C-contiguous) buffers are
reused, so the memory order of every result is unchanged too (later sums add in one order).

What "owned" means (the analysis is per function, flow-insensitive where that is safe):
  * every definition of the name is an assignment of an expression that certainly makes a
    new array (an arithmetic operator, a ufunc, a matmul, a reduction, srcad's fresh
    helpers), or an augmented assignment to it; never a parameter, a tuple unpack, a pop;
  * no name that may alias it (made from it by anything else: a view, a subscript, a call)
    escapes: is returned, pushed on a stack, stored into a container or written by `out=`;
  * it dies there: neither it nor any of its possible aliases is live after the statement
    (liveness over loops, branches, break and continue);
  * no other operand of the statement is one of its aliases (an `out=` overlapping an
    input through a view is never planned), and every read of it in the statement is
    inside the subexpression that overwrites it.
A subroutine's parameter (a split pair's backward, a forward) is the caller's, except for
a cotangent every caller passes as an owned value that dies at the call (`donated`).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

import numpy as np

from .gcode import GFunction, Line, names_read, names_written
from .transform.adjoints import is_fresh

_BINOPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
           ast.Div: np.true_divide, ast.FloorDiv: np.floor_divide, ast.Mod: np.remainder,
           ast.Pow: np.power}
_UNARY = {ast.USub: np.negative}
# fresh results that are certainly C-contiguous, whatever their operands' layout
_C_CALLS = {"zeros", "ones", "empty", "full"}
_C_HELPERS = {"matmul_grad_a", "matmul_grad_b"}
_REDUCTIONS = {"sum", "mean", "max", "min", "prod"}
_FRESH_HELPERS = {"matmul_grad_a", "matmul_grad_b", "select_grad", "extremum_grad",
                  "clip_grad", "astype"}


@dataclass
class Stats:
    """What the plan did to one function (for explain and the tests)."""

    statements: int = 0  # statements computed (partly) in place
    reused: list = field(default_factory=list)  # (buffer name, its bytes), one per reuse
    donated: dict = field(default_factory=dict)  # function name -> donated parameter names
    sunk: int = 0  # statements moved down to their first reader

    @property
    def bytes_saved(self) -> int:
        return sum(b for _, b in self.reused)


# -- liveness --------------------------------------------------------------------------------


class _Liveness:
    """live-after sets of every simple line (by id), over structured control flow."""

    def __init__(self, body: list):
        self.after: dict[int, set] = {}
        self.ok = True
        self.lines(body, set(), None)

    def lines(self, lines, out, loop):
        live = set(out)
        for ln in reversed(lines):
            if ln.node is None:
                continue
            live = self.line(ln, live, loop)
        return live

    def line(self, ln: Line, out: set, loop) -> set:
        node = ln.node
        if ln.compound:
            head = names_read(node)
            if isinstance(node, ast.If):
                return head | self.lines(ln.body, out, loop) | self.lines(ln.orelse or [], out,
                                                                          loop)
            if isinstance(node, ast.For) and not ln.orelse:
                target = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
                top = set(out)
                for _ in range(100):
                    body_in = self.lines(ln.body, top, (out, top))
                    new = set(out) | (body_in - target)
                    if new == top:
                        break
                    top = new
                return top | head
            if isinstance(node, ast.While) and not ln.orelse:
                top = set(out) | head
                for _ in range(100):
                    body_in = self.lines(ln.body, top, (out, top))
                    new = set(out) | head | body_in
                    if new == top:
                        break
                    top = new
                return top
            self.ok = False  # (a with / try / for-else: not planned)
            return set(out) | {n for sub in ln.walk() if sub.node is not None
                               for n in names_read(sub.node)}
        self.after[id(ln)] = set(out)
        if isinstance(node, ast.Break):
            return set(loop[0]) if loop else set(out)
        if isinstance(node, ast.Continue):
            return set(loop[1]) if loop else set(out)
        if isinstance(node, (ast.Return, ast.Raise)):
            return names_read(node)
        if isinstance(node, ast.Delete):
            return set(out) - {t.id for t in node.targets if isinstance(t, ast.Name)}
        kill = names_written(node) if isinstance(node, ast.Assign) else set()
        return (set(out) - kill) | names_read(node)


# -- what the function owns ------------------------------------------------------------------


def _simple_target(node) -> str | None:
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            return targets[0].id
    return None


class _Facts:
    """Ownership, aliases, escapes and known C-contiguity of a function's names."""

    def __init__(self, f: GFunction, infos: dict, helpers: dict, donated=frozenset(),
                 c_params=()):
        self.infos = infos
        self.helpers = helpers
        defs: dict[str, list] = {}
        self.alias: dict[str, set] = {}  # name -> names that may alias it (one step)
        self.escaped: set[str] = set()
        self._reads_into: list = []  # (target, names its value reads): fresh or augmented
        for top in f.body:
            for ln in top.walk():
                if ln.node is None:
                    continue
                self._scan(ln, defs)
        array = {n for n, i in infos.items()
                 if i is not None and i.dtype is not None and i.ndim > 0
                 and np.dtype(i.dtype).kind in "biufc"}
        # a value that is not certainly an array (a GradTree, a list, a dict) may hold its
        # inputs themselves, however it was made (`unindex(g, d, "p")`, `dd += ...`)
        for target, reads in self._reads_into:
            if target not in array:
                for r in reads:
                    self.alias.setdefault(r, set()).add(target)
        params = set(f.params) - set(donated)
        self.owned = {n for n, ds in defs.items()
                      if n in array and n not in params
                      and all(d is not None for d in ds)
                      and any(isinstance(d, ast.expr) for d in ds)}
        self.owned |= {p for p in donated if p in array and p not in defs}
        # known C-contiguous: the greatest fixpoint over the definitions
        fixed = (set(c_params) | set(donated)) - set(defs)  # (the caller's word for it)
        c = set(self.owned) | fixed
        for _ in range(len(c) + 1):
            keep = {n for n in c if all(d == "aug" or (isinstance(d, ast.expr) and
                                        self.c_expr(d, c)) for d in defs.get(n, ()))}
            keep |= fixed
            if keep == c:
                break
            c = keep
        self.c = c
        self._closure: dict[str, set] = {}

    def _scan(self, ln: Line, defs) -> None:
        node = ln.node
        if ln.compound:
            reads = names_read(node)
            if isinstance(node, ast.For):
                for t in ast.walk(node.target):
                    if isinstance(t, ast.Name):
                        defs.setdefault(t.id, []).append(None)
                        for r in reads:
                            self.alias.setdefault(r, set()).add(t.id)
            return
        target = _simple_target(node)
        if isinstance(node, ast.Assign) and target is not None:
            if self.fresh(node.value):
                defs.setdefault(target, []).append(node.value)
                self._escapes_in(node.value)
                self._reads_into.append((target, names_read(node.value)))
            else:
                defs.setdefault(target, []).append(None)
                for r in names_read(node.value):
                    self.alias.setdefault(r, set()).add(target)
            return
        if isinstance(node, ast.AugAssign) and target is not None:
            defs.setdefault(target, []).append("aug")
            self._escapes_in(node.value)
            self._reads_into.append((target, names_read(node.value)))
            return
        if isinstance(node, ast.Delete):
            return
        if isinstance(node, ast.Assign):  # a tuple unpack or a store into a subscript
            for t in names_written(node):
                defs.setdefault(t, []).append(None)
                for r in names_read(node.value):
                    self.alias.setdefault(r, set()).add(t)
            if any(not isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in node.targets):
                self.escaped |= names_read(node)
            return
        # a return, a push, an expression statement, a store through a subscript, ...
        self.escaped |= names_read(node)
        for t in names_written(node):
            defs.setdefault(t, []).append(None)

    def _escapes_in(self, expr) -> None:
        """A name written by `out=` inside an expression."""
        for n in ast.walk(expr):
            if isinstance(n, ast.Call):
                for k in n.keywords:
                    if k.arg == "out":
                        self.escaped |= {m.id for m in ast.walk(k.value)
                                         if isinstance(m, ast.Name)}

    def fresh(self, expr) -> bool:
        """Does `expr` certainly make a new array that nothing else refers to?"""
        if isinstance(expr, ast.Call) and any(k.arg == "out" for k in expr.keywords):
            return False
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and \
                isinstance(expr.func.value, ast.Name) and expr.func.value.id == "np":
            fn = getattr(np, expr.func.attr, None)
            if not (isinstance(fn, np.ufunc) or expr.func.attr in _C_CALLS | _REDUCTIONS
                    | {"where", "matmul", "dot", "tanh"}):
                return False  # (np.ascontiguousarray, np.real, ... may hand back the input)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            # srcad's helpers that never hand back (part of) an input: not unindex, whose
            # gradient of a container holds `g` itself
            return expr.func.id in _FRESH_HELPERS and is_fresh(expr, self.helpers)
        return is_fresh(expr, self.helpers)

    def closure(self, n: str) -> set:
        """`n` and every name that may alias it."""
        got = self._closure.get(n)
        if got is None:
            got, todo = {n}, [n]
            while todo:
                for m in self.alias.get(todo.pop(), ()):
                    if m not in got:
                        got.add(m)
                        todo.append(m)
            self._closure[n] = got
        return got

    def reusable(self, n: str) -> bool:
        return n in self.owned and n in self.c and not (self.closure(n) & self.escaped)

    def c_expr(self, e, c: set) -> bool:
        """Is the value of `e` certainly C-contiguous (given the names in `c` are)?"""
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.MatMult):
            return True
        if isinstance(e, ast.Call) and not e.keywords:
            f = e.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                    f.value.id == "np" and f.attr in _C_CALLS:
                return True
            if isinstance(f, ast.Name) and f.id in _C_HELPERS:
                return True
        node = _tree(e, self.infos, c)
        return node is not None and node.c


# -- expression trees --------------------------------------------------------------------------


@dataclass
class _Node:
    expr: ast.expr
    ufunc: object = None  # None: a leaf or an opaque subexpression
    form: str = ""  # "bin" | "unary" | "call"
    children: list = field(default_factory=list)
    shape: tuple | None = None
    dtype: object = None  # np.dtype; a Python type (float, int) for a Python scalar
    c: bool = False  # certainly C-contiguous
    name: str | None = None  # a leaf that is a name
    buffer: str | None = None  # where the planned node writes
    hoisted: bool = False

    def post(self):
        for ch in self.children:
            yield from ch.post()
        yield self

    @property
    def array(self) -> bool:
        return isinstance(self.dtype, np.dtype) and self.shape is not None and len(self.shape) > 0


def _leaf(expr, infos, c) -> _Node:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and \
            not isinstance(expr.value, bool):
        return _Node(expr, shape=(), dtype=type(expr.value))
    if isinstance(expr, ast.Name):
        info = infos.get(expr.id)
        node = _Node(expr, name=expr.id, c=expr.id in c)
        if info is not None:
            node.shape = tuple(info.shape)
            node.dtype = np.dtype(info.dtype) if info.dtype is not None else "scalar"
        return node
    return _Node(expr)


def _tree(expr, infos, c) -> _Node | None:
    """The elementwise tree of `expr` (None: its root is not elementwise)."""
    ufunc, form, args = None, "", []
    if isinstance(expr, ast.BinOp) and type(expr.op) in _BINOPS:
        ufunc, form, args = _BINOPS[type(expr.op)], "bin", [expr.left, expr.right]
    elif isinstance(expr, ast.UnaryOp) and type(expr.op) in _UNARY:
        ufunc, form, args = _UNARY[type(expr.op)], "unary", [expr.operand]
    elif isinstance(expr, ast.Call) and not expr.keywords and \
            isinstance(expr.func, ast.Attribute) and isinstance(expr.func.value, ast.Name) and \
            expr.func.value.id == "np" and isinstance(getattr(np, expr.func.attr, None), np.ufunc):
        fn = getattr(np, expr.func.attr)
        if fn.nout == 1 and fn.nin == len(expr.args) and \
                not any(isinstance(a, ast.Starred) for a in expr.args):
            ufunc, form, args = fn, "call", list(expr.args)
    if ufunc is None:
        return None
    node = _Node(expr, ufunc=ufunc, form=form)
    for a in args:
        node.children.append(_tree(a, infos, c) or _leaf(a, infos, c))
    _infer(node)
    return node


def _infer(node: _Node) -> None:
    kids = node.children
    if any(k.shape is None or k.dtype is None for k in kids):
        return
    arrays = [k.dtype for k in kids if isinstance(k.dtype, np.dtype)]
    if any(isinstance(k.dtype, str) for k in kids) and not all(d.kind in "fc" for d in arrays):
        return  # (a Python int or float: only certain next to inexact arrays)
    dummies = []
    for k in kids:
        if isinstance(k.dtype, str):
            dummies.append(1.0)
        elif isinstance(k.dtype, np.dtype):
            dummies.append(np.ones(1 if k.shape else (), k.dtype) if k.shape
                           else np.ones((), k.dtype)[()])
        else:
            dummies.append(k.dtype(1))
    try:
        with np.errstate(all="ignore"):
            out = node.ufunc(*dummies)
        node.shape = tuple(np.broadcast_shapes(*[k.shape for k in kids]))
    except (TypeError, ValueError):
        return
    node.dtype = np.asarray(out).dtype
    node.c = any(k.c and k.shape == node.shape and k.array for k in kids)


# -- planning one statement --------------------------------------------------------------------


def _reads(node: _Node) -> list[str]:
    return [n.id for n in ast.walk(node.expr) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)]


class _Statement:
    def __init__(self, facts: _Facts, root: _Node, dying: set, is_root_assign: bool):
        self.facts = facts
        self.root = root
        self.dying = dying
        self.assign_root = is_root_assign
        self.order = list(root.post())
        self.pos = {id(n): i for i, n in enumerate(self.order)}
        self.all_reads = _reads(root)
        self.parent = {id(ch): n for n in self.order for ch in n.children}

    def within(self, node: _Node, name: str) -> bool:
        """Is every read of `name` or its aliases in the statement inside `node`?"""
        inside = _reads(node)
        names = self.facts.closure(name)
        return sum(1 for r in self.all_reads if r in names) == \
            sum(1 for r in inside if r in names)

    def plan(self) -> bool:
        used = False
        for node in self.order:
            if node.ufunc is None or not node.array:
                continue
            is_root = node is self.root
            choice = None
            for k, ch in enumerate(node.children):
                if node.form == "bin" and isinstance(node.expr.op, ast.Pow) and k != 0:
                    continue  # (x ** 2 is np.square in numpy's operator: keep the operator)
                if ch.shape != node.shape or ch.dtype != node.dtype or not ch.c:
                    continue
                buf = ch.buffer if ch.hoisted else (
                    ch.name if ch.name in self.dying else None)
                if buf is None or not self.within(node, buf):
                    continue
                if any(o is not ch and self._overlaps(o, buf) for o in node.children):
                    continue
                choice = buf
                break
            if choice is None:
                continue
            if not is_root or not self.assign_root:
                if not self._hoistable(node, choice):
                    continue
                node.hoisted = True
            node.buffer = choice
            used = True
        return used

    def _overlaps(self, other: _Node, buf: str) -> bool:
        """May operand `other` share memory with `buf` (other than being it exactly)?"""
        names = self.facts.closure(buf) - {buf}
        if other.name is not None:
            return other.name in names
        if other.ufunc is None:  # an opaque operand (a view, a call) reading an alias
            return bool(set(_reads(other)) & self.facts.closure(buf))
        return other.hoisted and other.buffer in names

    def _hoistable(self, node: _Node, buf: str) -> bool:
        """May `node` run before the rest of its statement? (it writes `buf`)."""
        inside = {id(n) for n in node.post()}
        for other in self.order[:self.pos[id(node)]]:
            if id(other) in inside:
                continue
            if other.ufunc is None and other.name is None and not _pure(other.expr):
                return False
        return self.within(node, buf)


def _pure(expr) -> bool:
    """An opaque subexpression srcad made: numpy and srcad.runtime calls, attributes."""
    for n in ast.walk(expr):
        if isinstance(n, ast.Call) and any(k.arg == "out" for k in n.keywords):
            return False
        if isinstance(n, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield)):
            return False
    return True


def _np(attr):
    return ast.Attribute(value=ast.Name("np", ast.Load()), attr=attr, ctx=ast.Load())


def _expr(node: _Node) -> ast.expr:
    """`node` as an expression, hoisted children read from their buffers."""
    if node.hoisted:
        return ast.Name(node.buffer, ast.Load())
    if node.ufunc is None:
        return node.expr
    args = [_expr(ch) for ch in node.children]
    if node.form == "bin":
        return ast.BinOp(left=args[0], op=node.expr.op, right=args[1])
    if node.form == "unary":
        return ast.UnaryOp(op=node.expr.op, operand=args[0])
    return ast.Call(func=node.expr.func, args=args, keywords=[])


def _into(node: _Node, augmented: bool = True) -> ast.expr | ast.stmt:
    """The planned node as a statement writing its buffer (`buf op= right` where the buffer
    is the left operand and `augmented`), or an out= call expression."""
    buf = node.buffer
    args = [_expr(ch) for ch in node.children]
    left = node.children[0]
    if augmented and node.form == "bin" and (left.buffer if left.hoisted else left.name) == buf:
        return ast.AugAssign(target=ast.Name(buf, ast.Store()), op=node.expr.op, value=args[1])
    func = _np(node.ufunc.__name__) if node.form != "call" else node.expr.func
    return ast.Call(func=func, args=args,
                    keywords=[ast.keyword(arg="out", value=ast.Name(buf, ast.Load()))])


def _plan_line(ln: Line, facts: _Facts, after: set, stats: Stats) -> list[Line] | None:
    node = ln.node
    target = _simple_target(node)
    if target is None:
        return None
    value = node.value
    root = _tree(value, facts.infos, facts.c)
    if root is None:
        return None
    reads = set(_reads(root))
    dying = {n for n in reads if facts.reusable(n) and not (facts.closure(n) & after)
             and n != target}
    if not dying:
        return None
    if isinstance(node, ast.Assign):
        info = facts.infos.get(target)
        if info is None or info.dtype is None or tuple(info.shape) != root.shape or \
                np.dtype(info.dtype) != root.dtype:
            return None  # (the specialiser and the inference must agree)
    st = _Statement(facts, root, dying, isinstance(node, ast.Assign))
    if not st.plan():
        return None
    out = []
    for n in st.order:
        if n.hoisted:
            stmt = _into(n)
            if isinstance(stmt, ast.expr):
                stmt = ast.Expr(value=stmt)
            out.append(Line(stmt, ln.line))
            stats.reused.append((n.buffer, _nbytes(n)))
    if isinstance(node, ast.Assign) and root.buffer is not None and not root.hoisted:
        stmt = _into(root, augmented=target == root.buffer or isinstance(
            getattr(root.expr, "op", None), ast.Pow))
        if isinstance(stmt, ast.AugAssign) and stmt.target.id != target:
            out.append(Line(stmt, ln.line))  # (x ** 2 keeps numpy's operator: x **= 2)
            stmt = ast.Assign(targets=[ast.Name(target, ast.Store())],
                              value=ast.Name(root.buffer, ast.Load()), lineno=0)
        elif isinstance(stmt, ast.expr):
            stmt = ast.Expr(value=stmt) if target == root.buffer else ast.Assign(
                targets=[ast.Name(target, ast.Store())], value=stmt, lineno=0)
        out.append(Line(stmt, ln.line))
        stats.reused.append((root.buffer, _nbytes(root)))
    else:
        new = copy.copy(node)
        new.value = _expr(root)
        out.append(Line(new, ln.line))
    stats.statements += 1
    buffers = sorted({n.buffer for n in st.order if n.buffer})
    src = ast.unparse(node)
    role = (f"; {target} takes over {root.buffer}'s buffer"
            if root.buffer and root.buffer != target and not root.hoisted else "")
    head = Line(comment=f"in place: {src} (into {', '.join(buffers)}){role}")
    return [head] + out


def _nbytes(node: _Node) -> int:
    return int(np.prod(node.shape, dtype=np.int64)) * node.dtype.itemsize


def _rewrite(lines: list, facts: _Facts, live: _Liveness, stats: Stats) -> list:
    out = []
    for ln in lines:
        if ln.node is None:
            out.append(ln)
            continue
        if ln.compound:
            ln.body = _rewrite(ln.body, facts, live, stats)
            if ln.orelse:
                ln.orelse = _rewrite(ln.orelse, facts, live, stats)
            out.append(ln)
            continue
        planned = _plan_line(ln, facts, live.after.get(id(ln), set()), stats)
        out.extend(planned if planned is not None else [ln])
    return out


# -- sinking: a fresh value is made no earlier than it must be ------------------------------


def sink(f: GFunction, facts: _Facts) -> int:
    """Move each top-level statement that makes a fresh array from values that stay alive
    (no input dies there) down to just before its first reader, past statements that
    neither read what it makes nor change or free what it reads: its buffer then lives
    only while it is needed (the backward's ``dg = dy @ W2.T`` waits until ``dW2`` is made
    and the recomputed GELU output freed). Values are unchanged: each statement computes
    the same thing from the same inputs. Never across a loop, a branch or a return."""
    body = f.body
    counts: dict[str, int] = {}
    for ln in body:
        for sub in ln.walk():
            if sub.node is not None:
                for t in names_written(sub.node):
                    counts[t] = counts.get(t, 0) + 1
    moved = 0
    i = len(body) - 1
    while i >= 0:
        ln = body[i]
        node = ln.node
        target = _simple_target(node) if node is not None and not ln.compound else None
        if target is None or not isinstance(node, ast.Assign) or ln.keep or \
                counts.get(target) != 1 or target not in facts.owned or \
                not facts.fresh(node.value) or not _pure(node.value):
            i -= 1
            continue
        reads = names_read(node)
        j = i + 1
        while j < len(body):
            other = body[j]
            if other.node is None:
                j += 1
                continue
            if other.compound or isinstance(other.node, (ast.Return, ast.Raise)):
                break
            o_reads = names_read(other.node)
            o_writes = names_written(other.node)
            if isinstance(other.node, ast.Delete):
                o_writes = {t.id for t in other.node.targets if isinstance(t, ast.Name)}
            if target in o_reads or target in o_writes or o_writes & reads or other.keep:
                break
            j += 1
        # (skip the comments just above the first reader: they head it)
        k = j
        while k - 1 > i and body[k - 1].node is None:
            k -= 1
        if k - 1 > i:
            body.insert(k - 1, body.pop(i))
            moved += 1
        i -= 1
    return moved


# -- the pass ----------------------------------------------------------------------------------


def plan_function(f: GFunction, infos: dict, helpers: dict | None = None,
                  donated=frozenset(), stats: Stats | None = None, c_params=()) -> Stats:
    """Plan one function in place (see the module docstring)."""
    stats = stats if stats is not None else Stats()
    live = _Liveness(f.body)
    if not live.ok:
        return stats
    facts = _Facts(f, infos, helpers or {}, donated, c_params)
    stats.sunk += sink(f, facts)
    live = _Liveness(f.body)
    f.body = _rewrite(f.body, facts, live, stats)
    return stats


def plan_program(functions: list, infos_of: dict, helpers: dict,
                 c_params: dict | None = None) -> Stats:
    """Plan every function with its own Infos (`infos_of`: id(function) -> infos); a function
    without (a callee whose names the probe did not see) is left as it is. `c_params`:
    id(function) -> its parameters known C-contiguous."""
    stats = Stats()
    c_params = c_params or {}
    donated = donations(functions, infos_of, helpers, c_params)
    for f in functions:
        infos = infos_of.get(id(f))
        if infos is None:
            continue
        if donated.get(f.name):
            stats.donated[f.name] = sorted(donated[f.name])
        plan_function(f, infos, helpers, frozenset(donated.get(f.name, ())), stats,
                      c_params.get(id(f), ()))
    return stats


def donations(functions: list, infos_of: dict, helpers: dict, c_params: dict) -> dict:
    """Parameters every caller hands over: at each call of the function (and it is only ever
    called directly), the argument is a name the caller owns, C-contiguous, that dies at the
    call with all its aliases. The callee may then overwrite it."""
    by_name = {f.name: f for f in functions}
    sites: dict[str, list] = {n: [] for n in by_name}
    bad: set[str] = set()
    for caller in functions:
        infos = infos_of.get(id(caller))
        facts = _Facts(caller, infos or {}, helpers, (), c_params.get(id(caller), ())) \
            if infos is not None else None
        live = _Liveness(caller.body)
        for top in caller.body:
            for ln in top.walk():
                if ln.node is None:
                    continue
                calls = {id(n.func) for n in ast.walk(ln.node) if isinstance(n, ast.Call)}
                for n in ast.walk(ln.node):
                    if isinstance(n, ast.Name) and n.id in by_name and id(n) not in calls:
                        bad.add(n.id)  # (referred to as a value: unknown callers)
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                            n.func.id in by_name:
                        sites[n.func.id].append((n, facts, live.after.get(id(ln)),
                                                 live.ok and not ln.compound))
    out: dict[str, set] = {}
    for fname, calls in sites.items():
        f = by_name[fname]
        if fname in bad or not calls or infos_of.get(id(f)) is None:
            continue
        given = set()
        for k, p in enumerate(f.params):
            ok = True
            for call, facts, after, simple in calls:
                arg = call.args[k] if k < len(call.args) and not call.keywords else None
                if not (simple and facts is not None and isinstance(arg, ast.Name)
                        and after is not None and facts.reusable(arg.id)
                        and not (facts.closure(arg.id) & after)
                        and sum(isinstance(a, ast.Name) and a.id == arg.id
                                for a in call.args) == 1):
                    ok = False
                    break
                mine, theirs = infos_of[id(f)].get(p), facts.infos.get(arg.id)
                if mine is None or theirs is None or tuple(mine.shape) != tuple(theirs.shape) \
                        or mine.dtype != theirs.dtype:
                    ok = False
                    break
            if ok:
                given.add(p)
        if given:
            out[fname] = given
    return out


def plan(program, kind: str = "grad") -> Stats:
    """The pass as the pipeline runs it (`srcad.pipeline.Program`): each split pair with its
    own Infos, the functions the roles name with the program's. The user-facing function's
    arguments are C-contiguous where the probe saw them so (the cache key holds the memory
    order); a callee's, or a pullback's cotangent, are not known."""
    infos_of = {}
    for fwd, bwd, _, _, infos in program.pairs:
        infos_of[id(fwd)] = infos_of[id(bwd)] = infos
    entry = {program.roles.get("fwd")} | (
        {program.roles.get("main")} if kind in ("grad", "value_and_grad") else set())
    c_params = {}
    for f in program.functions:
        if f.name in program.roles.values():
            infos_of.setdefault(id(f), program.infos)
        if f.name in entry:
            infos = infos_of[id(f)]
            c_params[id(f)] = {p for p in f.params if (i := infos.get(p)) is not None
                               and i.ndim > 0 and i.dtype is not None and i.c_order}
    program.memory = plan_program(program.functions, infos_of, program.helpers, c_params)
    return program.memory
