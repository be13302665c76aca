"""Memory planning's facts: liveness, ownership, aliases, C-contiguity, expression trees.

Input: one optimised `GFunction` and the static `Info` (shape, dtype, memory order) of its
names. Output: no rewrite -- the facts the rewrite (`srcad.memplan.rewrite`) asks about:

    h = np.tanh(x)         # _Liveness.after[h = ...]  = {h}       (x dies here)
    t = h * 2.0            # _Facts.owned              = {h, t}    (fresh, never escapes)
    return t               # _Facts.escaped            = {t}       (the caller sees it)
                           # _tree("h * 2.0")          = multiply(h: (4,) float64, 2.0)

`_Liveness` gives the names live after every simple line (loops to a fixpoint, branches
joined, break/continue to the loop's exit/head); `_Facts` the names the function owns (every
definition makes a fresh array), the names that may alias each name, the names that escape
(returned, pushed, stored, written by `out=`) and those certainly C-contiguous; `_tree` an
elementwise expression as ufunc nodes with the shape and dtype of each.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import numpy as np

from .. import runtime
from ..gcode import GFunction, Line, names_mentioned, names_read, names_written, nodes
from ..transform.adjoints import is_fresh
from .kernels import KernelResult, c_result, kernel_call

_BINOPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
           ast.Div: np.true_divide, ast.FloorDiv: np.floor_divide, ast.Mod: np.remainder,
           ast.Pow: np.power}
_UNARY = {ast.USub: np.negative}
# fresh results that are certainly C-contiguous, whatever their operands' layout
_C_CALLS = {"zeros", "ones", "empty", "full"}
# new arrays in their prototype's memory order (not certainly C)
_LIKE = {"zeros_like", "ones_like", "empty_like", "full_like"}
_C_HELPERS = {"matmul_grad_a", "matmul_grad_b"}
_REDUCTIONS = {"sum", "mean", "max", "min", "prod"}
# copy on write: an array argument copied, then a slot of the copy written (`setitem`, and
# its cotangent's `setitem_grad_x`); a dict's or list's new container holds the old items
_COPIES = {"setitem", "setitem_grad_x"}
_FRESH_HELPERS = {"matmul_grad_a", "matmul_grad_b", "select_grad", "extremum_grad",
                  "extremum_grad_add", "clip_grad", "astype"}



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
                target = names_mentioned(node.target)
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


class CallResult(ast.expr):
    """A result of a call of a generated subroutine whose results are all new arrays: a
    fresh definition of unknown memory order."""

    _fields = ()


@dataclass(frozen=True)
class Move:
    """A definition `a = b` of one name by another, `a = np.f(..., out=b)` or `a =
    in_layout(b, like)`: an alias (no new array). Whether b's buffer passes to a whole -- b
    and all its aliases dead after the line -- is the slot writes' question
    (`srcad.memplan.slots`); ownership here counts it as an alias."""

    source: str
    line: int  # id() of the Line


def results_fresh(f: GFunction, facts) -> bool:
    """Does every `return` of `f` hand back distinct names it owns, none of which (nor any
    alias of it) it also pushes, stores or writes, and none aliasing another? Then a call's
    results are new arrays that share memory with nothing the caller holds."""
    rets = [ln.node for top in f.body for ln in top.walk() if isinstance(ln.node, ast.Return)]
    if not rets:
        return False
    for r in rets:
        elts = r.value.elts if isinstance(r.value, ast.Tuple) else [r.value]
        names = [e.id if isinstance(e, ast.Name) else None for e in elts]
        if None in names or len(set(names)) != len(names):
            return False
        for n in names:
            around = facts.closure(n)
            if n not in facts.owned or around & facts.kept or around & (set(names) - {n}):
                return False
    return True


class _Facts:
    """Ownership, aliases, escapes and known C-contiguity of a function's names."""

    def __init__(self, f: GFunction, infos: dict, helpers: dict, donated=frozenset(),
                 c_params=(), kernels=None, fresh_calls=frozenset(), foreign=frozenset()):
        self.infos = infos
        # the user's functions and objects the code calls (`layer_forward(layer, h)` run as
        # written): what they are given may be kept (`self.inputs = h`), so it escapes
        self.foreign = foreign
        self.helpers = helpers
        self.kernels = kernels or {}  # fuse=True: kernel name -> kir.Kernel
        self.fresh_calls = fresh_calls  # generated functions whose results are all new arrays
        defs: dict[str, list] = {}
        self.alias: dict[str, set] = {}  # name -> names that may alias it (one step)
        self.edge_lines: dict[tuple, set] = {}  # (r, t) -> ids of the lines making t alias r
        self.escaped: set[str] = set()
        self.kept: set[str] = set()  # escaped other than by a return (pushed, stored, out=)
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
                    self._edge(r, target)
        params = set(f.params) - set(donated)
        self.owned = {n for n, ds in defs.items()
                      if n in array and n not in params
                      and all(d is not None and not isinstance(d, Move) for d in ds)
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
        self.body = f.body
        self.defs = defs  # name -> its definitions (an expression, a Move, "aug", None, ...)
        self.params = set(f.params)
        self.donated = set(donated)
        self.array = array

    def _scan(self, ln: Line, defs) -> None:
        node = ln.node
        for n in nodes(node):
            f = n.func if isinstance(n, ast.Call) else None
            while isinstance(f, (ast.Attribute, ast.Subscript)):
                f = f.value
            if isinstance(f, ast.Name) and f.id in self.foreign:
                given = {m for a in [*n.args, *(k.value for k in n.keywords)]
                         for m in names_read(a)}
                self.escaped |= given
                self.kept |= given
        if ln.compound:
            reads = names_read(node)
            if isinstance(node, ast.For):
                for t in ast.walk(node.target):
                    if isinstance(t, ast.Name):
                        defs.setdefault(t.id, []).append(None)
                        for r in reads:
                            self._edge(r, t.id)
            return
        found = kernel_call(node, self.kernels)
        if found is not None:  # (a fused kernel: each result new, or an argument updated)
            k, call, targets = found
            self._escapes_in(call)
            for i, (o, t) in enumerate(zip(k.outs, targets)):
                # (a new ndarray, whatever Info says: never one of the arguments)
                defs.setdefault(t, []).append("aug" if o.inout >= 0 else
                                              KernelResult(call=call, index=i))
            return
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Name) and \
                node.value.func.id in self.fresh_calls and len(node.targets) == 1 and \
                all(isinstance(t, ast.Name) for t in nodes(node.targets[0])
                    if not isinstance(t, (ast.Tuple, ast.Store))):
            # a generated subroutine that returns only new arrays (`results_fresh`)
            self._escapes_in(node.value)
            for t in names_written(node):
                defs.setdefault(t, []).append(CallResult())
            return
        target = _simple_target(node)
        if isinstance(node, ast.Assign) and target is not None:
            if self.fresh(node.value):
                defs.setdefault(target, []).append(node.value)
                self._escapes_in(node.value)
                self._reads_into.append((target, names_read(node.value)))
            else:
                moved = self._moved(node.value)
                defs.setdefault(target, []).append(Move(moved, id(ln)) if moved else None)
                for r in names_read(node.value):
                    self._edge(r, target, id(ln) if isinstance(node.value, ast.Name) else None)
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
                    self._edge(r, t)
            if any(not isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in node.targets):
                self.escaped |= names_read(node)
                self.kept |= names_read(node)
            return
        # a return, a push, an expression statement, a store through a subscript, ...
        self.escaped |= names_read(node)
        if not isinstance(node, ast.Return):
            self.kept |= names_read(node)
        for t in names_written(node):
            defs.setdefault(t, []).append(None)

    def _edge(self, r: str, t: str, line: int | None = None) -> None:
        """t may alias r; `line`: the id of the `t = r` line that alone makes it so (None:
        another kind of statement)."""
        self.alias.setdefault(r, set()).add(t)
        self.edge_lines.setdefault((r, t), set()).add(line)

    def _ours(self, expr, names) -> str | None:
        """The name, where `expr` calls one of srcad's runtime helpers named in `names` (not
        a function of the user's of that name)."""
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and \
                expr.func.id in names and expr.func.id not in self.foreign and \
                self.helpers.get(expr.func.id) in (None, getattr(runtime, expr.func.id)):
            return expr.func.id
        return None

    def _moved(self, value) -> str | None:
        """b, where `a = value` hands b's buffer to a: `a = b`, `a = np.f(..., out=b)`, or
        `a = in_layout(b, like)` (b itself, or a copy of it)."""
        if isinstance(value, ast.Name):
            return value.id
        if self._ours(value, ("in_layout",)) and len(value.args) == 2 and \
                isinstance(value.args[0], ast.Name) and not value.keywords:
            return value.args[0].id
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                isinstance(value.func.value, ast.Name) and value.func.value.id == "np":
            outs = [k.value for k in value.keywords if k.arg == "out"]
            if len(outs) == 1 and isinstance(outs[0], ast.Name):
                return outs[0].id
        return None

    def _escapes_in(self, expr) -> None:
        """A name written by `out=` inside an expression."""
        for n in nodes(expr):
            if isinstance(n, ast.Call):
                for k in n.keywords:
                    if k.arg == "out":
                        written = names_mentioned(k.value)
                        self.escaped |= written
                        self.kept |= written

    def fresh(self, expr) -> bool:
        """Does `expr` certainly make a new array that nothing else refers to?"""
        if isinstance(expr, ast.Call) and any(k.arg == "out" for k in expr.keywords):
            return False
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and \
                isinstance(expr.func.value, ast.Name) and expr.func.value.id == "np":
            fn = getattr(np, expr.func.attr, None)
            if not (isinstance(fn, np.ufunc) or expr.func.attr in _C_CALLS | _REDUCTIONS
                    | {"where", "matmul", "dot", "tanh"} | _LIKE):
                return False  # (np.ascontiguousarray, np.real, ... may hand back the input)
        if self._ours(expr, _COPIES):
            return True  # (an array's copy with a slot written; a container's: `_reads_into`)
        if self._ours(expr, ("in_layout",)) and len(expr.args) == 2 and not expr.keywords:
            return self.fresh(expr.args[0])  # (its first argument, or a copy of it)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            # srcad's helpers that never hand back (part of) an input: not unindex, whose
            # gradient of a container holds `g` itself
            # (unbroadcast hands back its first argument, or a sum of it: new when that is)
            return expr.func.id in _FRESH_HELPERS | {"unbroadcast"} and \
                is_fresh(expr, self.helpers)
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
        if isinstance(e, KernelResult):
            return not e.call.keywords and c_result(e.call, self.kernels[e.call.func.id], c,
                                                    self.infos, e.index)
        if isinstance(e, ast.Name):
            return e.id in c
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and \
                e.func.attr == "reshape" and not (isinstance(e.func.value, ast.Name)
                                                  and e.func.value.id == "np"):
            return self.c_expr(e.func.value, c)  # (a C array's reshape is a C view of it)
        if isinstance(e, ast.Call) and not e.keywords:
            f = e.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                    f.value.id == "np" and f.attr in _C_CALLS:
                return True
            if isinstance(f, ast.Name) and f.id in _C_HELPERS:
                return True
            if isinstance(f, ast.Name) and f.id == "unbroadcast" and len(e.args) == 2:
                return self.c_expr(e.args[0], c)  # (it, or its sum, or its cast: C if it is)
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
