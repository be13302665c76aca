"""Forward mode: from the normalised IR to tangent code (`<f>_jvp`).

Input: an `ir.Function`, the parameters that carry tangents, and optionally the static
shapes and dtypes of every value. Output: a `GFunction`

    <f>_jvp(params, <p>_dot for each tangent parameter) -> (out, out_dot)

Each statement is followed by the tangent of its result, ``h_dot``, the sum over its varied
arguments of the op row's JVP contribution (`Op.jvp`): an explicit rule, an elementwise op's
VJP rule with ``g`` bound to the tangent (its Jacobian is diagonal), or -- for a linear
argument -- the op itself applied to the tangent. Tangents flow alongside the primal values
through the same control flow, so forward mode needs no stacks. A call to another user
function calls its own `<g>_jvp` subroutine.

Before/after:
    h = np.tanh(h_add)               h = np.tanh(h_add)
                                     h_dot = h_add_dot * (1 - h * h)
"""

from __future__ import annotations

import ast

from .. import ir
from ..analysis.activity import varied_vars
from ..errors import SrcadError
from ..frontend.opaque import has_effects, may_change_state
from ..naming import fresh
from ..gcode import GFunction, Line, assign, clone, name, store
from ..gcode import call as _call
from ..gcode import compound as _compound
from ..gcode import free_names as _free
from .adjoints import _np, zeros_expr
from .calls import plain_call
from .module import Module
from .specialise import Info, ieee_divisions, simplify
from .templates import (as_array_operand, atom_expr, default_atom, effect_stmt, forward_expr,
                        loop_iter, subst)
from ..analysis.activity import stacks_of
from ..ops.runtime_ops import POPS


class Forward:
    def __init__(self, fn: ir.Function, wrt: list[str], infos_by_fn: dict | None,
                 module: Module | None = None):
        self.fn = fn
        self.wrt = list(wrt)
        self.module = module or Module(infos_by_fn)
        self.infos = self.module.infos_by_fn.get(id(fn), {})
        self.containers = self.module.containers_by_fn.get(id(fn), set())
        self.varied = varied_vars(fn, wrt)
        self.taken = set(fn.names) | set(fn.params)
        self.tangent: dict[str, str] = {}
        # names set to None (a generated `x_saved = None` before its loop): tangent None
        self.none_vars = {c.target for c in ir.walk(fn.body) if isinstance(c, ir.Call)
                          and any(isinstance(a, ir.Const) and a.value is None
                                  for a in c.args.values()) and c.op.name == "copy"}
        # stacks, and those this function fills and empties itself (srcad/transform/stacks.py)
        self.stacks, self.local_stacks = stacks_of(fn)
        self.globals: dict = {}
        self.jvp_pairs = self.module.jvp_functions

    def fresh(self, base: str) -> str:
        return fresh(base, self.taken)

    def dot(self, var: str) -> str:
        if var not in self.tangent:
            self.tangent[var] = self.fresh(f"{var}_dot")
        return self.tangent[var]

    def zeros(self, var: str) -> ast.expr:
        if var in self.none_vars:  # (None before its loop, then maybe a constant array)
            return ast.IfExp(test=ast.Compare(left=name(var), ops=[ast.Is()],
                                              comparators=[ast.Constant(None)]),
                             body=ast.Constant(None),
                             orelse=zeros_expr(name(var), self.infos.get(var)))
        return zeros_expr(name(var), self.infos.get(var))

    def tangent_atom(self, atom) -> ast.expr:
        """The tangent of an argument atom: its `_dot` name, zeros, or a list of them."""
        if isinstance(atom, ir.Var):
            return name(self.dot(atom.name)) if atom.name in self.varied else \
                self.zeros(atom.name)
        if isinstance(atom, ir.Seq):
            elts = [self.tangent_atom(a) for a in atom.items]
            return (ast.List if atom.kind == "list" else ast.Tuple)(elts=elts, ctx=ast.Load())
        if isinstance(atom, ir.Const):  # a constant item of a list argument: zeros like it
            return ast.Call(func=_np("zeros_like"), args=[atom_expr(atom)], keywords=[])
        raise SrcadError("internal: no tangent for a constant argument")

    def info_of(self, node):
        if isinstance(node, ast.Name):
            if node.id in self.infos:
                return self.infos[node.id]
            for primal, t in self.tangent.items():
                if t == node.id:
                    return self.infos.get(primal)
            return None
        if isinstance(node, ast.Constant):
            return Info((), None, node.value)
        return None

    def may_be_python(self, var: str) -> bool:
        """Can the name hold a Python number when the code runs?  (As `Reverse`'s: a primal
        where the first call saw one, a tangent where its primal is not an array; generic
        code, with no call yet, is not asked.)"""
        if not self.infos:
            return False
        if var in self.infos:
            return self.infos[var].dtype is None
        primal = next((p for p, t in self.tangent.items() if t == var), None)
        info = self.infos.get(primal) if primal is not None else None
        return info is None or info.dtype is None or info.ndim == 0

    # -- statements --------------------------------------------------------------------------
    def call(self, s: ir.Call, out: list) -> None:
        out.append(Line(assign(s.target, forward_expr(s.op, s.args, self.info_of)), s.line,
                        keep=may_change_state(s.op)))
        if s.target not in self.varied:
            return
        if s.op.name == "Stack":  # a stack of varied values gets a stack of their tangents
            out.append(Line(assign(self.dot(s.target), _call("Stack")), s.line))
            return
        if s.op.name in POPS:
            stack = s.args["stack"].name
            if stack in self.local_stacks:
                tangent = ast.Call(func=ast.Attribute(value=name(self.dot(stack)), attr="pop",
                                                      ctx=ast.Load()), args=[], keywords=[])
            else:  # the function that filled it may have had no tangents to push
                tangent = _call("pop_or_zeros", name(self.dot(stack)), name(s.target))
            out.append(Line(assign(self.dot(s.target), tangent), s.line))
            return
        if s.op.name == "cotangents":  # found through the stack: so is its tangent
            stack = s.args["stack"].name
            tangent = _call("cotangents", name(self.dot(stack))) if stack in self.varied \
                else _call("Stack")
            out.append(Line(assign(self.dot(s.target), tangent), s.line))
            return
        terms = []
        for pname, atom in s.args.items():
            if not (set(ir.atom_vars(atom)) & self.varied):
                continue
            how = s.op.jvp(pname)
            if how is None and s.op.vjp(pname) is None:
                continue  # no derivative through this argument (a shape, a constructor)
            if how is None:
                raise SrcadError(
                    f"`{s.op.name}` has no forward-mode (JVP) rule for its argument "
                    f"`{pname}`", filename=self.fn.filename, lineno=s.line, func=self.fn.name,
                    hint=f"register one with srcad.defjvp({s.op.name}, lambda g, out, ...: ...)")
            kind, rule = how
            if kind == "rule":
                used = _free(rule.expr)  # (once, not once per global)
                self.globals.update({k: v for k, v in rule.globals.items() if k in used})
                g = self.tangent_atom(atom)
                if s.op.takes_array(pname) and (isinstance(atom, ir.Seq) or (
                        isinstance(atom, ir.Var) and atom.name in self.containers)):
                    g = ast.Call(func=_np("asarray"), args=[g], keywords=[])  # (as numpy does)
                mapping = {"g": g, "out": ir.Var(s.target)}
                for p in s.op.params:
                    mapping[p.name] = as_array_operand(s.op, p.name, s.args.get(p.name),
                                                       self.containers) or default_atom(
                                                           s.op, p.name)
                expr = ieee_divisions(simplify(subst(rule.expr, mapping), rule.globals,
                                               self.info_of), self.may_be_python)
            else:  # linear: the op applied to the tangent
                args = dict(s.args)
                args[pname] = _Raw(self.tangent_atom(atom))
                expr = _forward_with_raw(s.op, args, self.info_of)
            terms.append(expr)
        d = self.dot(s.target)
        if not terms:
            out.append(Line(assign(d, self.zeros(s.target)), s.line))
            return
        total = terms[0]
        for t in terms[1:]:
            total = ast.BinOp(left=total, op=ast.Add(), right=t)
        out.append(Line(assign(d, total), s.line))

    def user_call(self, s: ir.UserCall, out: list) -> None:
        args = [atom_expr(a) for a in s.args]
        outs = [store(t) for t in s.targets]
        target = ast.Tuple(elts=outs, ctx=ast.Store()) if s.unpack else outs[0]
        if not any(t in self.varied for t in s.targets):
            out.append(Line(ast.Assign(targets=[target], value=plain_call(s), lineno=0),
                            s.line, keep=has_effects(s.callee.body)))
            return
        wrt = [p for p, a in zip(s.callee.params, s.args)  # (a tuple argument: any item)
               if set(ir.atom_vars(a)) & self.varied]
        key = (id(s.callee), tuple(wrt))
        if key not in self.jvp_pairs:
            sub = Forward(s.callee, wrt, None, self.module)
            f = sub.jvp(self.module.function_name(f"{s.callee.name}_jvp"))
            self.jvp_pairs[key] = (f, sub)
            self.globals.update(sub.globals)
        f, _ = self.jvp_pairs[key]
        dots = [self.tangent_atom(a) for p, a in zip(s.callee.params, s.args) if p in wrt]
        douts = [store(self.dot(t)) for t in s.targets]
        dtarget = ast.Tuple(elts=douts, ctx=ast.Store()) if s.unpack else douts[0]
        both = ast.Tuple(elts=[target, dtarget], ctx=ast.Store())
        out.append(Line(ast.Assign(targets=[both], value=ast.Call(
            func=name(f.name), args=args + dots, keywords=[]), lineno=0), s.line,
            keep=has_effects(s.callee.body)))

    def block(self, body) -> list[Line]:
        out: list[Line] = []
        for s in body:
            if isinstance(s, ir.Call):
                self.call(s, out)
            elif isinstance(s, ir.UserCall):
                self.user_call(s, out)
            elif isinstance(s, ir.Effect):
                out.append(Line(effect_stmt(s), s.line))
            elif isinstance(s, ir.Push):
                out.append(Line(ast.Expr(ast.Call(func=ast.Attribute(
                    value=name(s.stack), attr="push", ctx=ast.Load()),
                    args=[atom_expr(s.value)], keywords=[])), s.line))
                if s.stack in self.varied:
                    v = s.value
                    if isinstance(v, ir.Var):
                        t = self.tangent_atom(v)
                    else:
                        t = ast.Constant(None)
                    out.append(Line(ast.Expr(ast.Call(func=ast.Attribute(
                        value=name(self.dot(s.stack)), attr="push", ctx=ast.Load()),
                        args=[t], keywords=[])), s.line))
            elif isinstance(s, ir.If):
                self.init_branch_tangents(s, out)
                header = ast.If(test=atom_expr(s.test), body=[], orelse=[])
                out.append(_compound(header, s.line, self.block(s.body) or [Line(ast.Pass())],
                                     self.block(s.orelse) or None))
            elif isinstance(s, ir.For):
                self.init_loop_tangents(s.body, out, s.line)
                body = self.block(s.body)
                for flag in s.exits:
                    body.append(_compound(ast.If(test=name(flag), body=[], orelse=[]), s.line,
                                          [Line(ast.Break(), s.line)]))
                header = ast.For(target=store(s.target), iter=loop_iter(s), body=[], orelse=[],
                                 lineno=0)
                out.append(_compound(header, s.line, body))
            elif isinstance(s, ir.While):
                self.init_loop_tangents(s.body, out, s.line)
                cond = self.block(s.cond_body)
                stop = _compound(ast.If(test=ast.UnaryOp(op=ast.Not(), operand=atom_expr(s.cond)),
                                        body=[], orelse=[]), s.line, [Line(ast.Break(), s.line)])
                body = cond + [stop] + self.block(s.body)
                for flag in s.exits:
                    body.append(_compound(ast.If(test=name(flag), body=[], orelse=[]), s.line,
                                          [Line(ast.Break(), s.line)]))
                header = ast.While(test=ast.Constant(True), body=[], orelse=[])
                out.append(_compound(header, s.line, body))
        return out

    def init_loop_tangents(self, body, out, line) -> None:
        """A value that becomes varied inside a loop (``s = 0.0; for ...: s = s + f(x)``)
        needs a zero tangent before the loop, so that the first iteration can read it."""
        self._init_tangents(body, out, line)

    def init_branch_tangents(self, s: ir.If, out) -> None:
        self._init_tangents(s.body + s.orelse, out, s.line)

    def _init_tangents(self, body, out, line) -> None:
        defined_inside = {d for x in ir.walk(body) for d in ir.defs(x)}
        for v in sorted(defined_inside & self.varied):
            if v not in self.tangent and self._defined_before(v, body):
                out.append(Line(assign(self.dot(v), self.zeros(v)), line))

    def _defined_before(self, var: str, body) -> bool:
        inside = {id(x) for x in ir.walk(body)}
        if var in self.fn.params:
            return True
        for x in ir.walk(self.fn.body):
            if id(x) in inside:
                return False
            if var in ir.defs(x):
                return True
        return False

    def _read_before_bound(self, var: str) -> bool:
        for x in ir.walk(self.fn.body):
            if var in ir.uses(x):
                return True
            if var in ir.defs(x):
                return False
        return False

    # -- the whole function ------------------------------------------------------------------
    def jvp(self, fname: str | None = None) -> GFunction:
        fname = fname or self.module.function_name(f"{self.fn.name}_jvp")
        dots = [self.dot(p) for p in self.wrt]
        f = GFunction(name=fname, params=list(self.fn.params) + dots)
        f.body.append(Line(comment="--- forward, with tangents ---"))
        for p in self.fn.params:  # (an argument not differentiated, read before the body
            # rebinds it to a value that is -- `x = f(x @ W)`: its tangent is zeros there)
            if p not in self.wrt and p in self.varied and self._read_before_bound(p):
                f.body.append(Line(assign(self.dot(p), self.zeros(p)), self.fn.first_line))
        f.body.extend(self.block(self.fn.body[:-1]))
        ret = self.fn.ret.value
        value = atom_expr(ret)
        tan = self.ret_tangent(ret)
        f.body.append(Line(ast.Return(value=ast.Tuple(elts=[value, tan], ctx=ast.Load())),
                           self.fn.ret.line))
        return f

    def ret_tangent(self, atom) -> ast.expr:
        if isinstance(atom, ir.Seq):  # a list's tangent is a list, a tuple's a tuple (as JAX)
            elts = [self.ret_tangent(a) for a in atom.items]
            return (ast.List if atom.kind == "list" else ast.Tuple)(elts=elts, ctx=ast.Load())
        if isinstance(atom, ir.Const) and atom.value is None:
            return ast.Constant(None)
        if isinstance(atom, ir.Var) and atom.name in self.varied:
            return name(self.dot(atom.name))
        if isinstance(atom, ir.Var) and atom.name in self.stacks:
            return _call("Stack")  # (no tangents: pop_or_zeros gives zeros where it is popped)
        if isinstance(atom, ir.Var) and atom.name in self.none_vars:
            return _call("zeros_grad", name(atom.name))  # (0.0 while it still holds None)
        if isinstance(atom, ir.Var):
            return self.zeros(atom.name)
        return ast.Call(func=_np("zeros_like"), args=[atom_expr(atom)], keywords=[])


class _Raw:
    """An already-built expression standing where an atom would (a tangent in a linear op)."""

    def __init__(self, expr: ast.expr):
        self.expr = expr


def _forward_with_raw(op, args, info_of=None) -> ast.expr:
    """`forward_expr` where some arguments are `_Raw` expressions (each with the Info of the
    expression it stands for: a tangent has its primal's shape and dtype)."""
    placeholders = {}
    plain = {}
    for k, v in args.items():
        if isinstance(v, _Raw):
            ph = f"__tangent_{k}__"
            placeholders[ph] = v.expr
            plain[k] = ir.Var(ph)
        else:
            plain[k] = v

    def info(node):
        if isinstance(node, ast.Name) and node.id in placeholders:
            return info_of(placeholders[node.id])
        return info_of(node)

    expr = forward_expr(op, plain, None if info_of is None else info)
    return subst(expr, {k: clone(v) for k, v in placeholders.items()})


__all__ = ["Forward", "varied_vars", "_call"]
