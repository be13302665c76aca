"""Reverse mode: from the normalised IR to adjoint code (a `GFunction`, or two for a split).

Input: an `ir.Function`, the parameters to differentiate, and optionally the static
shapes and dtypes of every value (from the first call). Output: generated functions

    joint  <f>_grad(params) -> grads            (value_and_grad: (value, grads))
    split  <f>_fwd(params)  -> (out, saved)     <f>_bwd(saved, dout) -> grads

The forward sweep is the IR itself; the backward sweep walks the active statements in
reverse and, for each active argument, inlines the op row's VJP rule with ``g`` bound to
the adjoint of the statement's result. Rows marked `broadcasting` get each contribution
unbroadcast to its input (dropped when shapes show it is the identity). A value used k
times receives k contributions: the first is assigned, later ones are added with an
explicit ``+=`` into a buffer the backward owns (never into a saved or user array).

Before/after (one statement):
    h = np.tanh(h_add)            # --- backward ---
                                   # grad of L6: h = np.tanh(x @ W + b)
                                   dh_add = dh * (1 - h * h)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from .. import ir, runtime
from ..analysis.activity import active_vars
from ..gcode import GFunction, Line, assign, name, store
from .specialise import Info, simplify
from .templates import atom_expr, default_atom, forward_expr, subst

_FRESH_HELPERS = {
    runtime.unindex, runtime.matmul_grad_a, runtime.matmul_grad_b,
    runtime.select_grad, runtime.extremum_grad, runtime.clip_grad, runtime.as_grad,
    runtime.astype,
}
_VIEW_NP = {np.reshape, np.transpose, np.swapaxes, np.expand_dims, np.squeeze,
            np.broadcast_to, np.ravel, np.asarray}


def is_fresh(expr: ast.expr, globals_: dict, specialised: bool = False) -> bool:
    """Does `expr` certainly evaluate to a new array that nothing else refers to?

    A specialised `unbroadcast` call is fresh: it is only emitted where shapes differ, so
    it always sums.
    """
    if isinstance(expr, (ast.BinOp, ast.UnaryOp)):
        return True
    if isinstance(expr, ast.Call):
        f = expr.func
        if isinstance(f, ast.Attribute):
            if isinstance(f.value, ast.Name) and f.value.id == "np":
                fn = getattr(np, f.attr, None)
                return fn is not None and fn not in _VIEW_NP
            return f.attr in ("astype", "copy", "sum")
        if isinstance(f, ast.Name):
            fn = globals_.get(f.id, getattr(runtime, f.id, None))
            return fn in _FRESH_HELPERS or (specialised and fn is runtime.unbroadcast)
    return False


@dataclass
class Generated:
    functions: list  # list[GFunction]
    saved: list  # names the split backward reads from the forward
    inject: dict


class Reverse:
    def __init__(self, fn: ir.Function, wrt: list[str], infos: dict | None):
        self.fn = fn
        self.wrt = list(wrt)
        self.infos = infos or {}
        self.active = active_vars(fn, wrt)
        self.taken = set(fn.names) | set(fn.params)
        self.adj: dict[str, str] = {}  # primal name -> adjoint name
        self.owned: dict[str, bool] = {}
        self.pending: dict[str, ast.expr] = {}  # adjoints that are so far another name
        # adjoints that are one scalar broadcast over the value's shape (a mean's input):
        # elementwise rules take the scalar itself, and no broadcast array is made
        self.uniform: dict[str, ast.expr] = {}
        self.globals: dict = {}

    # -- names -------------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        n, k = base, 2
        while n in self.taken:
            n = f"{base}_{k}"
            k += 1
        self.taken.add(n)
        return n

    def adj_name(self, var: str) -> str:
        if var not in self.adj:
            self.adj[var] = self.fresh(f"d{var}")
        return self.adj[var]

    def info_of(self, node: ast.expr) -> Info | None:
        if isinstance(node, ast.Name):
            if node.id in self.infos:
                return self.infos[node.id]
            for primal, a in self.adj.items():
                if a == node.id:
                    return self.infos.get(primal)
            return None
        if isinstance(node, ast.Constant):
            return Info((), None, node.value)
        if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) for e in node.elts):
            return Info((), None, tuple(e.value for e in node.elts))
        if isinstance(node, (ast.BinOp, ast.UnaryOp)) and not any(
                isinstance(n, (ast.Name, ast.Call, ast.Attribute)) for n in ast.walk(node)):
            return Info((), None)  # arithmetic on Python number literals
        return None

    def all_infos(self) -> dict:
        """Static Info of every primal and adjoint name (an adjoint has its primal's)."""
        out = dict(self.infos)
        for primal, d in self.adj.items():
            if primal in self.infos:
                out[d] = self.infos[primal]
        return out

    def atom_info(self, atom) -> Info | None:
        if isinstance(atom, ir.Var):
            return self.infos.get(atom.name)
        if isinstance(atom, ir.Const):
            return Info.of(atom.value)
        return None

    # -- forward -----------------------------------------------------------------------------
    def forward_lines(self) -> list[Line]:
        lines = [Line(comment="--- forward ---")]
        for s in self.fn.body:
            if isinstance(s, ir.Call):
                lines.append(Line(assign(s.target, forward_expr(s.op, s.args)), s.line))
        return lines

    # -- backward ----------------------------------------------------------------------------
    def contribution(self, s: ir.Call, pname: str, g: ast.expr) -> ast.expr:
        rule = s.op.vjp(pname)
        self.globals.update({k: v for k, v in rule.globals.items() if k in _free(rule.expr)})
        mapping = {"g": g, "out": ir.Var(s.target)}
        for p in s.op.params:
            mapping[p.name] = s.args.get(p.name) or default_atom(s.op, p.name)
        expr = subst(rule.expr, mapping)
        return simplify(expr, rule.globals, self.info_of)

    def fit(self, expr: ast.expr, s: ir.Call, atom: ir.Var) -> ast.expr:
        """Make a contribution match its input: unbroadcast and/or cast, when needed."""
        target, want = self.infos.get(s.target), self.infos.get(atom.name)
        if target is not None and want is not None:
            if s.op.broadcasting and target.shape != want.shape:
                call = _call("unbroadcast", expr, name(atom.name))
                return simplify(call, {}, lambda n: target if n is expr else self.info_of(n))
            if want.dtype is not None and target.dtype is not None and target.dtype != want.dtype:
                if s.op.broadcasting or want.shape == target.shape:
                    dtype = ast.Attribute(value=name("np"), attr=str(want.dtype), ctx=ast.Load())
                    if want.ndim == 0:  # the contribution may be a Python or numpy scalar
                        return ast.Call(func=dtype, args=[expr], keywords=[])
                    return ast.Call(func=ast.Attribute(value=expr, attr="astype",
                                                       ctx=ast.Load()), args=[dtype], keywords=[])
            return expr
        if s.op.broadcasting:
            return _call("unbroadcast", expr, name(atom.name))
        return expr

    def accumulate(self, var: str, expr: ast.expr, line: int, out: list) -> None:
        fresh = is_fresh(expr, {**runtime.__dict__, **self.globals}, bool(self.infos))
        if var not in self.owned and self.uniform_scalar(expr) is not None:
            self.pending[var] = expr
            self.uniform[var] = self.uniform_scalar(expr)
            self.owned[var] = False
            return
        if var not in self.owned and isinstance(expr, (ast.Name, ast.Constant)):
            # the first contribution is another name: alias it without a statement
            self.pending[var] = expr
            self.owned[var] = False
            return
        if var in self.pending:  # the second contribution: sum into a new buffer
            self.uniform.pop(var, None)
            d = self.adj_name(var)
            out.append(Line(assign(d, ast.BinOp(left=self.pending.pop(var), op=ast.Add(),
                                                right=expr)), line))
            self.owned[var] = True
            return
        if var not in self.owned:  # the first contribution
            d = self.adj_name(var)
            out.append(Line(assign(d, expr), line))
            self.owned[var] = fresh
            return
        d = self.adj[var]
        if self.owned[var]:
            out.append(Line(ast.AugAssign(target=store(d), op=ast.Add(), value=expr), line))
        else:
            out.append(Line(assign(d, ast.BinOp(left=name(d), op=ast.Add(), right=expr)), line))
            self.owned[var] = True

    def uniform_scalar(self, expr: ast.expr) -> ast.expr | None:
        """S if `expr` is ``np.broadcast_to(S, shape)`` with S a scalar, else None."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
                and expr.func.attr == "broadcast_to" and isinstance(expr.func.value, ast.Name)
                and expr.func.value.id == "np" and expr.args):
            return None
        s = expr.args[0]
        names = [n.id for n in ast.walk(s) if isinstance(n, ast.Name)]
        for n in names:
            info = self.info_of(ast.Name(id=n)) if n != "np" else None
            if n != "np" and (info is None or info.ndim != 0):
                return None
        return s

    def takes_scalar_g(self, s: ir.Call, pname: str) -> bool:
        """Can this rule take a scalar `g` and still yield a full-shaped result?"""
        target = self.infos.get(s.target)
        if not s.op.elementwise or target is None:
            return False
        reads = s.op.vjp(pname).reads - {"g"}
        if "out" in reads:
            return True
        for p in reads:
            a = s.args.get(p)
            if isinstance(a, ir.Var) and (i := self.infos.get(a.name)) is not None \
                    and i.shape == target.shape:
                return True
        return False

    def backward_lines(self, seed: ast.expr) -> list[Line]:
        lines = [Line(comment="--- backward ---")]
        ret = self.fn.ret.value
        calls = [s for s in self.fn.body if isinstance(s, ir.Call)]
        seeded = {}
        last_line = None
        if isinstance(ret, ir.Var) and ret.name in self.active:
            seeded[ret.name] = seed
            if ret.name in self.wrt:  # the function returns an argument unchanged
                self.accumulate(ret.name, seed, self.fn.ret.line, lines)
        for s in reversed(calls):
            if s.target not in self.active:
                continue
            if s.target in seeded:
                g = seeded[s.target]
            elif s.target in self.owned:
                g = self.adj_ref(s.target)
            else:
                continue  # no contribution reached this value
            block: list[Line] = []
            for pname, atom in s.args.items():
                if s.op.vjp(pname) is None:
                    continue
                if isinstance(atom, ir.Var):
                    if atom.name not in self.active:
                        continue
                    g_use = g
                    if s.target in self.uniform and self.takes_scalar_g(s, pname):
                        g_use = self.uniform[s.target]
                    expr = self.fit(self.contribution(s, pname, g_use), s, atom)
                    self.accumulate(atom.name, expr, s.line, block)
                elif isinstance(atom, ir.Seq):
                    items = [a for a in atom.items if isinstance(a, ir.Var) and
                             a.name in self.active]
                    if not items:
                        continue
                    expr = self.contribution(s, pname, g)
                    parts = []
                    for a in atom.items:
                        if isinstance(a, ir.Var) and a.name in self.active:
                            parts.append(self.fresh(f"d{a.name}_part"))
                        else:
                            parts.append("_")
                    block.append(Line(ast.Assign(
                        targets=[ast.Tuple(elts=[store(p) for p in parts], ctx=ast.Store())],
                        value=expr, lineno=0), s.line))
                    for a, p in zip(atom.items, parts):
                        if p != "_":
                            self.accumulate(a.name, name(p), s.line, block)
            if block:
                if s.line != last_line:
                    text = self.fn.source_lines.get(s.line, "")
                    lines.append(Line(comment=f"grad of L{s.line}: {text}"))
                    last_line = s.line
                lines.extend(block)
        return lines

    def adj_ref(self, var: str) -> ast.expr:
        """The expression holding var's (complete) adjoint."""
        if var in self.pending:
            return self.pending[var]
        return name(self.adj[var])

    def grads_expr(self) -> list[ast.expr]:
        out = []
        for p in self.wrt:
            if p in self.owned:
                d = self.adj_ref(p)
                info = self.infos.get(p)
                if not self.owned.get(p) or info is None or info.dtype is None:
                    d = _call("as_grad", d, name(p))
                out.append(d)
            else:
                out.append(ast.Call(func=ast.Attribute(value=name("np"), attr="zeros_like",
                                                       ctx=ast.Load()),
                                    args=[name(p)], keywords=[]))
        return out

    # -- drivers -----------------------------------------------------------------------------
    def joint(self, *, with_value: bool, single: bool) -> Generated:
        f = GFunction(name=self.fresh(f"{self.fn.name}_grad"), params=list(self.fn.params))
        f.body.extend(self.forward_lines())
        f.body.extend(self.backward_lines(ast.Constant(value=1.0)))
        grads = self.grads_expr()
        gexpr = grads[0] if single else ast.Tuple(elts=grads, ctx=ast.Load())
        if with_value:
            gexpr = ast.Tuple(elts=[atom_expr(self.fn.ret.value), gexpr], ctx=ast.Load())
        f.body.append(Line(ast.Return(value=gexpr), self.fn.ret.line))
        return Generated([f], [], self.globals)

    def split(self) -> Generated:
        fwd = GFunction(name=self.fresh(f"{self.fn.name}_fwd"), params=list(self.fn.params))
        fwd.body.extend(self.forward_lines())
        ret = self.fn.ret.value
        gname = self.fresh(f"d{ret.name}" if isinstance(ret, ir.Var) else "dout")
        if isinstance(ret, ir.Var):
            self.adj[ret.name] = gname
        saved_name = self.fresh("saved")
        bwd = GFunction(name=self.fresh(f"{self.fn.name}_bwd"), params=[saved_name, gname])
        bwd.body.extend(self.backward_lines(name(gname)))
        grads = self.grads_expr()
        bwd.body.append(Line(ast.Return(value=ast.Tuple(elts=grads, ctx=ast.Load())),
                             self.fn.ret.line))
        return Generated([fwd, bwd], [], self.globals)


def _call(fname: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=name(fname), args=list(args), keywords=[])


def _free(expr: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
