"""Memory planning's rewrite: one statement computed into a dying buffer; sinking.

Input: a function's lines and its facts (`srcad.memplan.facts`). Output: the lines with
each plannable statement replaced by the ufunc calls that write a dying owned operand's
buffer (a comment heads them), and fresh values moved down to their first reader:

    dh_add = dh * (1 - h * h)  # L8            # in place: dh_add = dh * (1 - h * h) (...)
    del dh, h  # L8                    ->      h *= h  # L8
                                               np.subtract(1, h, out=h)  # L8
                                               dh_add = np.multiply(dh, h, out=dh)  # L8
                                               del dh, h  # L8
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

import numpy as np

from ..gcode import GFunction, Line, names_read, names_written, nodes
from .facts import _Facts, _Liveness, _Node, _simple_target, _tree
from .kernels import kernel_call, plan_call


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
    for n in nodes(expr):
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
    if facts.kernels:
        planned = plan_call(ln, facts, after, stats)  # (a fused kernel's call: out=)
        if planned is not None or kernel_call(ln.node, facts.kernels) is not None:
            return planned
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
            if isinstance(other.node, ast.Expr):  # a call made for its effect (`store_into(p,
                o_writes = o_writes | o_reads   # k, v)` fills the caller's dict): it may change
                                                # what it is given
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
