"""Find the maximal elementwise chains of generated functions; replace each by a kernel call.

Input: optimised `GFunction`s and the static `Info` of their names (shape and dtype, from the
first call). Output: the same functions with each chain of two or more fusable ops replaced
by one call of a kernel (a `kir.Kernel`, listed for the C generator), preceded by a comment
that quotes the statements it replaces:

    # fused kernel fused_multiply_add_maximum_1c2e3a: L5-L6, 3 ops in one pass over
    # float32[1000] (the statements it replaces):
    #   t = a * b + c  # L5
    #   d = np.maximum(t, 0.0)  # L6
    d = fused_multiply_add_maximum_1c2e3a(a, b, c)  # L5

How a chain grows, in each body of a function (sweeps, loop bodies, branches) separately:
  * an assignment whose value is a tree of fusable ops (`match`) over names of known type
    and literals joins the chain when its shape is the chain's; an operand of another shape
    is computed first, as a statement of its own;
  * a fusable sub-expression of any other statement is hoisted into the chain under a
    name of its own (``(g * y).sum(axis=0)``: ``dy_multiply = g * y`` joins the chain);
  * a pure statement that is not fusable (a matmul, a sum, a ``del``) is deferred to after
    the kernel, so that the chain can go on past it, as long as no later chain statement
    reads what it writes or writes what it reads; anything with side effects (a stack push,
    a subscript store, a loop, a return) ends the chain;
  * ``x += e`` on an array from before the chain updates that array in place, as numpy
    would (an argument that overlaps it is copied by the runtime first).
A value the chain computes is written out (an output of the kernel) when anything outside
the chain reads it -- a later statement, the backward sweep, the next loop iteration, the
return; the others stay in registers. A chain of one op is left to numpy.

Row kernels: a sum, mean, max or min over the last axis with keepdims=True, and a per-row
value broadcast back along it (the op table's ``c_row``: ``np.mean(x, axis=-1, keepdims=True)``,
``g.sum(axis=2, keepdims=True)``, ``np.broadcast_to(dmu / 16, (2, 8, 16))``), are ops of the
chain too. A chain holding one may mix values of its full shape S and of S's row shape
(last axis 1); it becomes one kernel that works row by row (srcad/lower/cgen_rows.py), so
LayerNorm's forward is one kernel and its backward another:

    mu = np.mean(x, axis=-1, keepdims=True)   # L23     # fused kernel fused_mean_...:
    xc = x - mu                               # L24     #   mu = np.mean(x, ...), ...
    var = np.mean(xc * xc, axis=-1, keepdims=True)  ->  xc, layer_norm_sqrt, layer_norm = \
    layer_norm_sqrt = np.sqrt(var + eps)                    fused_mean_...(x, eps, gain, bias)
    layer_norm = xc / layer_norm_sqrt * gain + bias
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import numpy as np

from ..gcode import (
    GFunction,
    Line,
    clone,
    exposed_reads,
    names_mentioned,
    names_read,
    names_written,
    nodes,
)
from ..ops import table
from . import match
from .assemble import build_kernel, part_statement
from .match import VT
from .rows import has_row_op, joint, shapes_of

# row kernels (a chain through a last-axis sum or mean with keepdims, and its broadcast back,
# as one kernel working row by row: srcad/lower/cgen_rows.py); False lowers as before them,
# the row reductions left to numpy (bench/rows.py's "before")
ROW_KERNELS = True

# a chain of one op over this many elements or more is a kernel too: numpy's ufunc runs on one
# thread, the kernel on the team above the runtime's parallel threshold (srcad_driver.c
# `parallel_min`, the same number). Not the machine's thread count: the lowered code is the
# same on every machine (generated/, the kernel cache)
ONE_OP_MIN = 65536

_ARRAY_METHODS = {"sum", "mean", "max", "min", "prod", "any", "all", "reshape", "transpose",
                  "astype", "copy", "ravel", "flatten", "swapaxes", "squeeze", "dot", "clip",
                  "cumsum", "var", "std", "argmax", "argmin", "take", "repeat", "round",
                  "conj", "item", "tolist", "nonzero", "diagonal", "trace", "cumprod"}
_NO_DESCENT = (ast.Lambda, ast.IfExp, ast.BoolOp, ast.ListComp, ast.SetComp, ast.DictComp,
               ast.GeneratorExp, ast.JoinedStr, ast.NamedExpr)


# -- typed expression trees ---------------------------------------------------------------------

@dataclass
class TNode:
    kind: str  # "op" | "leaf" | "const"
    vt: VT
    node: ast.expr
    app: object = None
    typed: object = None
    children: dict = field(default_factory=dict)
    name: str | None = None
    weak_ok: bool = False  # a 0-d leaf that may also be a Python number (see `tree`)

    def ops(self) -> int:
        return (1 if self.kind == "op" else 0) + sum(c.ops() for c in self.children.values())

    def leaves(self) -> set[str]:
        out = {self.name} if self.kind == "leaf" else set()
        for c in self.children.values():
            out |= c.leaves()
        return out


@dataclass
class Part:
    """One statement of a chain: `target = tree` (or `target op= ...`, aug)."""

    target: str
    tree: TNode
    aug: bool
    line: int | None
    stmt: ast.stmt  # the statement as Python would run it (for the fallback and comments)
    source: int  # index of the line it came from
    must_bind: bool = False  # a hoisted name that a later statement reads

    @property
    def shape(self):
        return self.tree.vt.shape

    @property
    def reads(self) -> set[str]:
        return self.tree.leaves()


@dataclass
class Region:
    parts: list = field(default_factory=list)
    pending: list = field(default_factory=list)  # (index, Line) deferred past the kernel
    written: set = field(default_factory=set)
    pend_reads: set = field(default_factory=set)
    pend_writes: set = field(default_factory=set)
    pend_dels: set = field(default_factory=set)  # names a deferred `del` unbinds
    drop_dels: set = field(default_factory=set)  # ... that a later part binds again
    inout: set = field(default_factory=set)
    originals: dict = field(default_factory=dict)  # index -> the original Line
    rests: dict = field(default_factory=dict)  # index -> the rewritten line, if any
    tail: tuple | None = None  # (index, Line): a statement with side effects that ends it
    before: list = field(default_factory=list)  # (index, Line) moved ahead of the kernel

    full: tuple | None = None  # the chain's shape (its row values: last axis 1)
    rowwise: bool = False  # it holds a row op (a last-axis reduction, a broadcast back)

    @property
    def shape(self):
        return self.full

    def n_ops(self) -> int:
        return sum(p.tree.ops() for p in self.parts)


class FunctionLowering:
    """Lowers one generated function; appends its kernels to `kernels`."""

    def __init__(self, f: GFunction, infos: dict, namespace: dict, where: str, kernels: list,
                 taken: set):
        self.f = f
        self.infos = infos or {}
        self.ns = namespace
        self.where = where
        self.kernels = kernels
        self.taken = taken  # names in use in the whole module (for new ones)
        self.refs: dict[str, int] = {}
        self.hoist_reads: dict[str, int] = {}  # a made-up name -> the statements reading it
        for top in f.body:
            for ln in top.walk():
                if ln.node is not None:
                    for n in nodes(_header(ln)):  # (one walk: the counts are order-free)
                        if isinstance(n, ast.Name):
                            self.taken.add(n.id)
                            if isinstance(n.ctx, (ast.Load, ast.Del)):
                                self.refs[n.id] = self.refs.get(n.id, 0) + 1
                        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                            self.refs[n.target.id] = self.refs.get(n.target.id, 0) + 1
        self.taken.update(f.params)
        # srcad's own rows, by identity (`_pure_call` asks per call; `op in rows` compares
        # dataclasses field by field until it meets the op)
        self._rows = table.all_ops(optional=False)  # (no scipy import for this)
        self._row_ids = {id(op) for op in self._rows}

    # -- static types ------------------------------------------------------------------------
    def vt_of(self, name: str, env: dict) -> VT | None:
        if name in env:
            return env[name]
        if name in self.ns and name not in self.infos:
            v = self.ns[name]
            if type(v) in (int, float, bool):
                return VT("number")
            if isinstance(v, np.generic):
                return VT("array", np.dtype(v.dtype), ())
        return None

    def tree(self, e: ast.expr, env: dict) -> TNode | None:
        ok, v = match.static_value(e, self.ns)
        if ok and (type(v) in (int, float, bool) or isinstance(v, np.generic)):
            dt = np.dtype(v.dtype) if isinstance(v, np.generic) else None
            return TNode("const", VT("const", dt, value=v), e)
        if isinstance(e, ast.Name):
            vt = self.vt_of(e.id, env)
            return None if vt is None or vt.kind == "const" else TNode("leaf", vt, e, name=e.id)
        app = match.match(e, self.ns)
        if app is None:
            return self._row_tree(e, env)
        children = {}
        for p, sub in app.args.items():
            c = self.tree(sub, env)
            if c is None:
                return None
            children[p] = c
        vts = {p: c.vt for p, c in children.items()}
        typed = match.type_op(app, vts, self.ns)
        if isinstance(typed, str):
            return None
        # a 0-d float operand that a Python number would leave computing the same (the
        # adjoint seed is one or the other): the kernel then takes either
        for p, c in children.items():
            if c.kind == "leaf" and c.vt.kind == "array" and not c.vt.ndim and \
                    c.vt.dtype.kind == "f":
                alt = match.type_op(app, {**vts, p: VT("number")}, self.ns)
                c.weak_ok = not isinstance(alt, str) and alt.out == typed.out and \
                    alt.loop_in == typed.loop_in
        return TNode("op", VT("array", typed.out, typed.shape), e, app, typed, children)

    def _row_tree(self, e: ast.expr, env: dict) -> TNode | None:
        """A row op (a last-axis reduction, a per-row value broadcast back): see
        `match.type_row`."""
        app = match.match_row(e, self.ns) if ROW_KERNELS else None
        if app is None:
            return None
        (p, sub), = app.args.items()
        c = self.tree(sub, env)
        if c is None or c.kind == "const":
            return None
        typed = match.type_row(app, {p: c.vt}, self.ns)
        if isinstance(typed, str):
            return None
        return TNode("op", VT("array", typed.out, typed.shape), e, app, typed, {p: c})

    # -- splitting a statement into parts ----------------------------------------------------
    def fresh(self, base: str) -> str:
        cand, k = base, 2
        while cand in self.taken:
            cand = f"{base}_{k}"
            k += 1
        self.taken.add(cand)
        return cand

    def split(self, t: TNode, target: str, line, index, out: list) -> TNode:
        """Give each op operand whose shape differs from its parent's a part of its own
        (listed in `out` before the parent's); returns `t` with those operands as leaves."""
        for p, c in list(t.children.items()):
            if c.kind != "op":
                continue
            if c.vt.shape != t.vt.shape:
                name = self.fresh(f"{target}_{c.app.op.name}")
                inner = self.split(c, name, line, index, out)
                if inner.vt.ndim:
                    out.append(Part(name, inner, False, line,
                                    ast.Assign(targets=[ast.Name(name, ast.Store())],
                                               value=clone(c.node), lineno=0),
                                    index, must_bind=True))
                    t.children[p] = TNode("leaf", c.vt, ast.Name(name, ast.Load()), name=name)
                    self.hoist_reads[name] = self.hoist_reads.get(name, 0) + 1
                else:  # a 0-d operand is computed by numpy, inside the statement
                    return None
            else:
                if self.split(c, target, line, index, out) is None:
                    return None
        return t

    def parts_of(self, ln: Line, index: int, env: dict):
        """(parts, rest): the fusable parts of a statement, and what is left of it (None:
        nothing; the statement is all parts). A part whose row ops read rows of two lengths
        leaves the statement to numpy."""
        parts, rest = self._parts_of(ln, index, env)
        if any(joint(None, *shapes_of(p)) is None for p in parts):
            return [], ln
        return parts, rest

    def _parts_of(self, ln: Line, index: int, env: dict):
        node = ln.node
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            t = self.tree(node.value, env)
            if t is not None and t.kind == "op" and t.vt.ndim:
                parts = []
                t = self.split(t, target, ln.line, index, parts)
                if t is not None:
                    parts.append(Part(target, t, False, ln.line, node, index))
                    return parts, None
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            target = node.target.id
            vt = self.vt_of(target, env)
            if vt is not None and vt.kind == "array" and vt.ndim:
                binop = ast.BinOp(left=ast.Name(target, ast.Load()), op=node.op,
                                  right=node.value)
                t = self.tree(binop, env)
                if t is not None and t.kind == "op" and t.vt.shape == vt.shape and \
                        np.can_cast(t.vt.dtype, vt.dtype, "same_kind") and \
                        match.cast_ok(t.vt.dtype, vt.dtype):
                    parts = []
                    t = self.split(t, target, ln.line, index, parts)
                    if t is not None:
                        t.vt = VT("array", vt.dtype, vt.shape)
                        parts.append(Part(target, t, True, ln.line, node, index))
                        return parts, None
        # hoist fusable sub-expressions of any other statement
        if not self._hoistable(node):
            return [], ln
        new = clone(node)
        parts: list = []
        self._hoist(new, env, ln.line, index, parts, _base_name(node))
        if not parts:
            return [], ln
        return parts, Line(new, ln.line)

    def _hoistable(self, node) -> bool:
        calls = [n for n in nodes(node) if isinstance(n, ast.Call)]
        top = node.value if isinstance(node, ast.Expr) else None
        return all(n is top or self._pure_call(n) for n in calls)

    def _hoist(self, node, env, line, index, parts, base):
        for fname, value in ast.iter_fields(node):
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if isinstance(item, ast.expr):
                        repl = self._hoist_expr(item, env, line, index, parts, base)
                        if repl is not None:
                            value[k] = repl
            elif isinstance(value, ast.expr) and not (isinstance(node, ast.Assign) and
                                                      fname == "targets"):
                repl = self._hoist_expr(value, env, line, index, parts, base)
                if repl is not None:
                    setattr(node, fname, repl)

    def _hoist_expr(self, e, env, line, index, parts, base):
        if isinstance(e, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call)):
            t = self.tree(e, env)
            if t is not None and t.kind == "op" and t.vt.ndim:
                name = self.fresh(f"{base}_{t.app.op.name}")
                sub: list = []
                t = self.split(t, name, line, index, sub)
                if t is not None:
                    parts.extend(sub)
                    parts.append(Part(name, t, False, line,
                                      ast.Assign(targets=[ast.Name(name, ast.Store())],
                                                 value=clone(e), lineno=0),
                                      index, must_bind=True))
                    self.hoist_reads[name] = self.hoist_reads.get(name, 0) + 1
                    return ast.Name(name, ast.Load())
        if isinstance(e, _NO_DESCENT) or isinstance(e, ast.Name):
            return None
        self._hoist(e, env, line, index, parts, base)
        return None

    # -- purity ---------------------------------------------------------------------------------
    def _pure_call(self, call: ast.Call) -> bool:
        fn = match.resolve_callable(call.func, self.ns)
        if fn is not None:
            op = table.lookup(fn)
            if op is not None and (id(op) in self._row_ids or op in self._rows):
                return True
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr in _ARRAY_METHODS:
            return True
        return False

    def pure(self, node: ast.stmt) -> bool:
        if isinstance(node, ast.Delete):
            return all(isinstance(t, ast.Name) for t in node.targets)
        if not isinstance(node, ast.Assign):
            return False
        for t in node.targets:
            if not all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Store))
                       for n in nodes(t)):
                return False
        for n in nodes(node.value):
            if isinstance(n, ast.Call) and not self._pure_call(n):
                return False
            if isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
                return False
        return True

    # -- the body walk --------------------------------------------------------------------------
    def body(self, lines: list, env: dict) -> list:
        saved, self.n_parts = getattr(self, "n_parts", None), {}
        try:
            return self._body(lines, env)
        finally:
            self.n_parts = saved

    def _body(self, lines: list, env: dict) -> list:
        out: list = []
        region = Region()
        for index, ln in enumerate(lines):
            if ln.node is None:
                (region.pending.append((index, ln)) if region.parts else out.append(ln))
                if region.parts:
                    region.originals[index] = ln
                continue
            if ln.compound:
                self.close(region, out)
                region = Region()
                inner = self.compound_env(ln, env)  # (env becomes the env after it)
                new = Line(ln.node, ln.line, ln.comment, self.body(ln.body, dict(inner)),
                           self.body(ln.orelse, dict(inner)) if ln.orelse else ln.orelse)
                out.append(new)
                continue
            parts, rest = self.parts_of(ln, index, env)
            self.n_parts[index] = len(parts)
            if rest is None and len(parts) == 1 and region.parts and \
                    not self.fits(region, parts[0]) and self.hoist(region, index, ln):
                env[parts[0].target] = parts[0].tree.vt
                continue
            for p in parts:
                if not self.fits(region, p):
                    self.close(region, out)
                    region = Region()
                self.add(region, p, ln, index)
                env[p.target] = p.tree.vt
            if rest is None:
                continue
            node = rest.node
            if parts:
                region.rests[index] = rest
                region.originals[index] = ln
            if self.pure(node) and (region.parts or parts):
                self.defer(region, index, rest, ln)
            elif parts:
                region.tail = (index, rest)
                self.close(region, out)
                region = Region()
            else:
                self.close(region, out)
                region = Region()
                out.append(rest)
            self.step_env(node, env)
        self.close(region, out)
        return out

    # -- static types through copies, branches and loops -------------------------------------
    # (`Info` has nothing for a name one path of the program did not assign; the chain finder
    # follows the types itself where the paths agree)
    @staticmethod
    def _written(ln: Line) -> set:
        out = set()
        for sub in ln.walk():
            if sub.node is not None:
                out |= names_written(sub.node)
                if isinstance(sub.node, ast.For):
                    out |= names_mentioned(sub.node.target)
        return out

    def step_env(self, node: ast.stmt, env: dict) -> None:
        """`env` after one simple statement."""
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            t = self.tree(node.value, env)
            target = node.targets[0].id
            if t is not None and t.kind in ("op", "leaf") and t.vt.kind != "const":
                env[target] = t.vt
            else:
                self._reset(env, target)
            return
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            vt = env.get(node.target.id)
            if vt is None or vt.kind != "array":
                self._reset(env, node.target.id)
                return
            t = self.tree(ast.BinOp(left=ast.Name(node.target.id, ast.Load()), op=node.op,
                                    right=node.value), env)
            if t is None or t.kind != "op" or t.vt.shape != vt.shape or \
                    not np.can_cast(t.vt.dtype, vt.dtype, "same_kind"):
                self._reset(env, node.target.id)
            return
        if isinstance(node, ast.Delete):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    env.pop(t.id, None)
            return
        for n in names_written(node):
            self._reset(env, n)

    def propagate(self, lines: list, env: dict) -> None:
        for ln in lines:
            if ln.node is None:
                continue
            if ln.compound:
                self.compound_env(ln, env)
            else:
                self.step_env(ln.node, env)

    def compound_env(self, ln: Line, env: dict) -> dict:
        """The env its bodies start from; updates `env` to the env after it. A branch keeps
        a name's type where both ways agree; a loop keeps the type of a value it carries
        from one iteration to the next when one iteration leaves it unchanged."""
        written = self._written(ln)
        before = dict(env)
        if isinstance(ln.node, ast.If):
            a, b = dict(before), dict(before)
            self.propagate(ln.body, a)
            self.propagate(ln.orelse or [], b)
            for n in written:
                if a.get(n) is not None and a.get(n) == b.get(n):
                    env[n] = a[n]
                else:
                    self._reset(env, n)
            return before
        entry = dict(before)
        if isinstance(ln.node, ast.For):
            for n in ast.walk(ln.node.target):
                if isinstance(n, ast.Name):
                    self._reset(entry, n.id)
        trial = dict(entry)
        self.propagate(ln.body, trial)
        carried = written & exposed_reads(ln.body)
        inner = dict(entry)
        for n in carried:  # read before it is assigned: its type must not change
            if trial.get(n) is None or trial.get(n) != entry.get(n):
                self._reset(inner, n)
        for n in written:  # after it: the same type whether it ran or not, else Info's
            if inner.get(n) is not None and trial.get(n) == before.get(n) == inner.get(n):
                env[n] = inner[n]
            else:
                self._reset(env, n)
        if ln.orelse:
            self.propagate(ln.orelse, env)
        return inner

    def _reset(self, env: dict, name: str) -> None:
        vt = VT.of_info(self.infos.get(name))
        if vt is None:
            env.pop(name, None)
        else:
            env[name] = vt

    def fits(self, r: Region, p: Part) -> bool:
        if not r.parts:
            return True
        shapes = shapes_of(p)
        if joint(r.full, *shapes) is None:
            return False
        if any(s != r.full for s in shapes) and not (r.rowwise or has_row_op(p.tree)):
            return False  # (values of two shapes make a row kernel: only for a row op)
        if p.reads & (r.pend_writes | r.pend_dels) or \
                {p.target} & (r.pend_reads | r.pend_writes):
            return False
        # (a part may bind a name a deferred `del` unbinds: the kernel's binding replaces
        # the old value the `del` would have freed, and the `del` is dropped)
        if p.target in r.inout:
            return False
        if p.aug and p.target not in r.written and r.pending:
            return False  # an in-place update is not moved before deferred statements
        return True

    def add(self, r: Region, p: Part, ln: Line, index: int) -> None:
        if p.aug and p.target not in r.written:
            r.inout.add(p.target)
        if p.target in r.pend_dels:
            r.drop_dels.add(p.target)
            r.pend_dels.discard(p.target)
        r.full = joint(r.full, *shapes_of(p))
        r.rowwise = r.rowwise or has_row_op(p.tree)
        r.parts.append(p)
        r.written.add(p.target)
        r.originals.setdefault(index, ln)

    def defer(self, r: Region, index: int, rest: Line, original: Line) -> None:
        r.pending.append((index, rest))
        r.originals.setdefault(index, original)
        r.pend_reads |= names_read(rest.node)
        if isinstance(rest.node, ast.Delete):
            r.pend_dels |= {t.id for t in rest.node.targets}
        else:
            r.pend_writes |= names_written(rest.node)

    def hoist(self, r: Region, index: int, ln: Line) -> bool:
        """Move a whole statement that cannot join the chain (a value of another shape,
        ``causal = rows >= cols`` between ``s = q @ k * scale`` and ``np.where(causal, s,
        -1e9)``) ahead of the kernel, with the deferred statements it needs, so that the
        chain can go on past it: when none of them reads what the chain computes, and none
        rebinds or unbinds a name the chain reads or writes."""
        chain_reads = set().union(*(p.reads for p in r.parts)) | r.written
        moved, kept = [], []
        earlier: set = set()  # names the statements that stay behind read or write
        for i, d in r.pending:
            node = d.node
            if node is None:
                kept.append((i, d))
                continue
            touched = (names_written(node) | {t.id for t in node.targets
                                              if isinstance(t, ast.Name)}
                       if isinstance(node, ast.Delete) else names_written(node))
            if names_read(node) & r.written or touched & chain_reads or \
                    (names_read(node) | touched) & earlier:
                kept.append((i, d))
                earlier |= names_read(node) | names_written(node)
            else:
                moved.append((i, d))
        stuck = set().union(*(names_written(k.node) for _, k in kept if k.node is not None))
        stuck |= {t.id for _, k in kept if isinstance(k.node, ast.Delete)
                  for t in k.node.targets if isinstance(t, ast.Name)}
        reads, writes = names_read(ln.node), names_written(ln.node)
        if reads & (r.written | stuck) or writes & (chain_reads | r.pend_reads | stuck):
            return False
        r.before.extend(moved + [(index, ln)])
        r.originals.setdefault(index, ln)
        r.pending = kept
        r.pend_reads, r.pend_writes, r.pend_dels = set(), set(), set()
        for _, d in kept:
            if d.node is not None:
                r.pend_reads |= names_read(d.node)
                if isinstance(d.node, ast.Delete):
                    r.pend_dels |= {t.id for t in d.node.targets}
                else:
                    r.pend_writes |= names_written(d.node)
        return True

    # -- closing a region: a kernel call, or the original lines ---------------------------------
    def close(self, r: Region, out: list) -> None:
        out.extend(ln for _, ln in r.before if r.parts and self._worth_a_kernel(r))
        if not r.parts:
            out.extend(ln for _, ln in r.pending)
            if r.tail is not None:
                out.append(r.tail[1])
            return
        if not self._worth_a_kernel(r):
            out.extend(self._dissolve(r))
            return
        built = build_kernel(self, r)
        if built is None:
            out[len(out) - len(r.before):] = []  # (the statements in their own order)
            out.extend(self._dissolve(r))
            return
        k, call, comments, unbound = built
        self.kernels.append(k)
        lead, pending = self._comments_of_kernel(r)
        out.extend(lead)
        out.extend(comments)
        out.append(call)
        hoisted = {p.target for p in r.parts if p.must_bind}
        for _, ln in pending:
            node = ln.node
            if isinstance(node, ast.Delete):
                keep = [t for t in node.targets
                        if t.id not in unbound and t.id not in r.drop_dels]
                if not keep:
                    continue
                ln = Line(ast.Delete(targets=keep), ln.line)
            out.append(ln)
            gone = sorted(hoisted & names_read(ln.node)) if ln.node is not None else []
            if gone and not isinstance(ln.node, ast.Return):
                out.append(Line(ast.Delete(targets=[ast.Name(n, ast.Del()) for n in gone]),
                                ln.line))
                hoisted -= set(gone)
        if r.tail is not None:
            out.append(r.tail[1])

    @staticmethod
    def _worth_a_kernel(r: Region) -> bool:
        """Two ops or more; or one, over arrays the runtime's threads share (`ONE_OP_MIN`)."""
        n = r.n_ops()
        if n >= 2:
            return True
        return n == 1 and r.full is not None and int(np.prod(r.full)) >= ONE_OP_MIN

    @staticmethod
    def _comments_of_kernel(r: Region) -> tuple[list, list]:
        """(comments to put before the kernel's call, the other deferred lines): a comment
        inside the chain whose statements (up to the next comment) all went into the kernel
        describes the kernel ("recomputed, not kept from the forward: ..."); the others keep
        their place after the call, before the statements they describe."""
        kept = {i for i, ln in r.pending  # (a `del` describes nothing)
                if ln.node is not None and not isinstance(ln.node, ast.Delete)}
        if r.tail is not None:
            kept.add(r.tail[0])
        statements = sorted({p.source for p in r.parts} | kept)
        at = [i for i, ln in r.pending if ln.node is None]
        lead = set()
        for k, c in enumerate(at):
            end = at[k + 1] if k + 1 < len(at) else float("inf")
            covered = [i for i in statements if c < i < end]
            if covered and not kept.intersection(covered):
                lead.add(c)
        return ([ln for i, ln in r.pending if i in lead],
                [(i, ln) for i, ln in r.pending if i not in lead])

    def _dissolve(self, r: Region) -> list:
        """A chain too short to fuse: the lines as they were (a statement split between this
        chain and an earlier one keeps its split form)."""
        lines_of: dict = {}
        for p in r.parts:
            lines_of.setdefault(p.source, []).append(p)
        pend: dict = {}
        for i, ln in r.pending + r.before:
            pend.setdefault(i, []).append(ln)
        if r.tail is not None:
            pend.setdefault(r.tail[0], []).append(r.tail[1])
        out = []
        for index in sorted(set(lines_of) | set(pend)):
            ps = lines_of.get(index, [])
            whole = index in r.originals and len(ps) == self.n_parts.get(index, 0) and \
                (index not in r.rests or index in pend)
            if whole:
                out.append(r.originals[index])
                continue
            for p in ps:
                out.append(Line(part_statement(p), p.line))
            out.extend(pend.get(index, []))
        return out


def _header(ln: Line) -> ast.AST:
    return ln.node


def _base_name(node: ast.stmt) -> str:
    if isinstance(node, ast.Assign) and node.targets and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AugAssign):
        t = node.target
        while isinstance(t, (ast.Subscript, ast.Attribute)):
            t = t.value
        if isinstance(t, ast.Name):
            return t.id
    if isinstance(node, ast.Assign):
        for n in ast.walk(node.targets[0]):
            if isinstance(n, ast.Name):
                return n.id
    return "value"
