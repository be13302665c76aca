"""Inline a call to a nested function or lambda into its caller's IR (a mixin).

Input: an `ir.UserCall` of a function lifted out of the one being normalised (closures.py),
with its normalised body. Output: that body, its names renamed apart from the caller's,
spliced into the caller where the call was, and the call's result copied into its target.

Why inline: a closure is part of the function it is written in. Tape mode runs it as part of
that function (no subroutine boundary), and the gradients of the two modes are held equal bit
for bit, so source mode must sum the closure's contributions to a value in the same order --
which is what differentiating the spliced body does. Generated code then reads the closure's
lines in place, each commented with its own source line. (A ``srcad.checkpoint`` of a nested
function stays a call: it is recomputed as a unit.)

Before/after:
    act = lambda v: np.maximum(v, 0.0)        h_act_v = ...            (act's body, renamed)
    h = act(h @ w)                            h = h_act                 (the result)
"""

from __future__ import annotations

import dataclasses

import gast

from .. import ir
from ..ops import control


class InlineMixin:
    """`inline_call`, for the `Normalizer` (normalize.py)."""

    def inline_call(self, call: ir.UserCall, into, hint: str, node) -> ir.Var:
        callee = call.callee
        assigned = {d for s in ir.walk(callee.body) for d in ir.defs(s)}
        names, atoms = {}, {}
        for p, a in zip(callee.params, call.args):
            if p in assigned:  # the body assigns its parameter: a name of its own
                names[p] = self.fresh(p)
                op, args = self.op_call(control.identity, [a], {}, node)
                self.body.append(ir.Call(names[p], op, args, call.line))
            else:
                atoms[p] = a
        for n in sorted(assigned - set(callee.params)):
            names[n] = self.fresh(n)
        consts = {}
        for k, obj in callee.inject.items():
            if self.inject.get(k, obj) is not obj or k in self.locals:
                consts[k] = self.fresh(k)
            self.inject[consts.get(k, k)] = obj
            self.taken.add(consts.get(k, k))
        r = _Renamer(names, atoms, consts)
        holders = self.written_holders(call)
        self.body.extend(self.caller_effects(r.block(callee.body[:-1]), holders, node))
        self.mutable |= {names[n] for n in callee.mutable if n in names}
        # every name the body assigns in a loop or branch keeps one name for all its values
        for s in ir.walk(callee.body):
            if isinstance(s, (ir.If, ir.For, ir.While)):
                inner = s.body + getattr(s, "orelse", []) + getattr(s, "cond_body", [])
                self.mutable |= {names[d] for x in ir.walk(inner) for d in ir.defs(x)
                                 if d in names}
                if isinstance(s, ir.For) and s.target in names:
                    self.mutable.add(names[s.target])
        ret = r.atom(callee.ret.value)
        for p, final in callee.written.items():  # the caller's names see the written dict
            held = holders.get(p, [])
            if isinstance(held, tuple):  # (an item of a container the caller's name holds)
                self.store_written_item(held[1], held[2], r.atom(final), node)
                continue
            for n in held:
                self.rebind_written(n, r.atom(final), node)
        if into is None:  # (a tuple stays a tuple of atoms: `a, b = g(x)` binds each)
            return ret
        op, args = self.op_call(control.identity, [ret], {}, node)
        return self.result((op, args), hint, into, node)

    def written_holders(self, call: ir.UserCall) -> dict:
        """{callee parameter it writes into: the caller's names holding the dict passed}"""
        out = {}
        for p, a in zip(call.callee.params, call.args):
            if p in call.callee.written and isinstance(a, ir.Var):
                names = [n for n, v in self.env.items() if v == a and n in self.locals]
                if any(n not in self.mutable and self.body is not getattr(
                        self, "top_body", self.body) for n in names):
                    # (in a loop or a branch, a name that does not keep one name for all
                    # its values could not carry the new dict out: left a call, which
                    # check_argument_writes refuses where the caller reads the name after)
                    return {}
                if names:
                    out[p] = names
                elif self.body is getattr(self, "top_body", self.body):
                    item = self.item_of_a_name(a)
                    if item is not None:  # (`fill(p[0], x)`: p's item, written)
                        out[p] = item
        return out

    def item_of_a_name(self, a: ir.Var):
        """(name, index) where `a` was just read as `name[index]` (a constant index, or a
        name's) from a container a local name holds; else None."""
        made = next((s for s in reversed(self.body) if isinstance(s, ir.Call)
                     and s.target == a.name), None)
        if made is None or made.op.name != "getitem" or not isinstance(made.args.get("a"),
                                                                          ir.Var):
            return None
        index = made.args.get("index")
        parts = index.parts if isinstance(index, ir.Index) else (index,)
        if len(parts) != 1 or isinstance(index, ir.Index) and index.is_tuple or not (
                isinstance(parts[0], ir.Const) and type(parts[0].value) in (int, str)):
            return None
        names = [n for n, v in self.env.items() if v == made.args["a"] and n in self.locals
                 and n not in self.mutable]
        return ("item", names[0], parts[0]) if names else None

    def passes_written_dict(self, call: ir.UserCall) -> bool:
        """Does the callee write into a dict that the caller holds by a name?"""
        return bool(self.written_holders(call))

    def caller_effects(self, body: list, holders: dict, node) -> list:
        """The spliced body's writes into the caller's dict (`Effect` "setitem") go into the
        object the caller's name holds as Python sees it: its parameter's own object (then
        an effect of the caller's, which its own caller sees), else the object the name was
        given by its last plain assignment (srcad's copy-on-write made new dicts since)."""
        objects, params = {}, {}
        for p, names in holders.items():
            if isinstance(names, tuple):  # (an item: the caller's own store, made after)
                objects[p] = None
                continue
            n = names[0]
            if self.reaches_argument(n):
                objects[p], params[p] = self.entry_of(n), n
                continue
            seen = getattr(self, "dict_objects", None)
            if seen is None:
                seen = self.dict_objects = {}
            made = seen.get(n)
            if made is None or made[0] != self.seen_defs[n]:
                atom = self.env[n]
                if n in self.mutable:  # (the name is given the new dict after the call)
                    op, args = self.op_call(control.identity, [atom], {}, node)
                    atom = self.emit((op, args), self.fresh(f"{n}_object"), node)
                made = seen[n] = (self.seen_defs[n], atom)
            objects[p] = made[1]
        out = []
        for s in body:
            if isinstance(s, ir.Effect) and s.kind == "setitem" and "param" in s.args and \
                    s.args["param"].value in objects:
                p = s.args["param"].value
                if objects[p] is None:
                    continue
                args = {k: v for k, v in s.args.items() if k != "param"}
                args["_obj"] = objects[p]
                if p in params:
                    args["param"] = ir.Const(params[p], repr(params[p]))
                s = dataclasses.replace(s, args=args)
            out.append(s)
        return out

    def store_written_item(self, name: str, index: ir.Const, final, node) -> None:
        """`fill(p[0], x)` writing into its argument: Python's `p[0]` is that very object,
        written; here `p[0] = <the written value>`, as the user would write it (so that the
        views of p, p's own write-back and a store into the caller's object follow)."""
        held = self.fresh(f"{name}_item")
        self.locals.add(held)
        self.env[held] = final
        if not hasattr(self, "written_in_place"):
            self.written_in_place = {}
        self.written_in_place[held] = 1  # (aliasing.setitem: the caller's p[0] is written)
        target = gast.Subscript(value=gast.Name(name, gast.Load(), None, None),
                                slice=gast.Constant(index.value, None), ctx=gast.Store())
        value = gast.Name(held, gast.Load(), None, None)
        stmt = gast.copy_location(gast.Assign(targets=[target], value=value), node)
        gast.copy_location(target, node)
        gast.copy_location(target.value, node)
        gast.copy_location(target.slice, node)
        gast.copy_location(value, node)
        self.setitem(target, value, stmt)

    def rebind_written(self, n: str, final, node) -> None:
        """The caller's name `n` holds the dict the callee wrote into: its new value."""
        if n in self.mutable:
            if final != ir.Var(n):
                op, args = self.op_call(control.identity, [final], {}, node)
                self.body.append(ir.Call(n, op, args, node.lineno))
            self.env[n] = ir.Var(n)
        else:
            self.env[n] = final


class _Renamer:
    def __init__(self, names: dict, atoms: dict, consts: dict):
        self.names, self.atoms, self.consts = names, atoms, consts

    def name(self, n: str) -> str:
        return self.names.get(n, n)

    def atom(self, a):
        if isinstance(a, ir.Var):
            if a.name in self.atoms:
                return self.atoms[a.name]
            return ir.Var(self.name(a.name))
        if isinstance(a, ir.Const):
            root, dot, rest = a.src.partition(".")
            if root in self.consts:
                return ir.Const(a.value, self.consts[root] + dot + rest)
            return a
        if isinstance(a, ir.Seq):
            return ir.Seq(tuple(self.atom(x) for x in a.items), a.kind)
        if isinstance(a, ir.Index):
            return ir.Index(tuple(self.atom(x) for x in a.parts), a.is_tuple)
        if isinstance(a, ir.Slice):
            return ir.Slice(*(None if x is None else self.atom(x)
                              for x in (a.lower, a.upper, a.step)))
        return a

    def args(self, d: dict) -> dict:
        return {k: self.atom(v) for k, v in d.items()}

    def block(self, body) -> list:
        # (a callee's own copy of an argument it stores into, and the name its stores go to,
        # are the callee's: spliced into its caller, the stores go where caller_effects says)
        return [self.stmt(s) for s in body if not (isinstance(s, ir.Effect) and s.kind == "own")]

    def stmt(self, s):
        rep = dataclasses.replace
        if isinstance(s, ir.Call):
            return rep(s, target=self.name(s.target), args=self.args(s.args))
        if isinstance(s, ir.Effect):
            return rep(s, args=self.args({k: v for k, v in s.args.items() if k != "caller"}))
        if isinstance(s, ir.UserCall):
            return rep(s, targets=[self.name(t) for t in s.targets],
                       args=[self.atom(a) for a in s.args])
        if isinstance(s, ir.Push):
            return rep(s, stack=self.name(s.stack), value=self.atom(s.value))
        if isinstance(s, ir.If):
            return rep(s, test=self.atom(s.test), body=self.block(s.body),
                       orelse=self.block(s.orelse))
        if isinstance(s, ir.For):
            ck = None if s.checkpoint is None else tuple(
                None if a is None else self.atom(a) for a in s.checkpoint)
            return rep(s, target=self.name(s.target), start=self.atom(s.start),
                       stop=self.atom(s.stop), step=self.atom(s.step),
                       limit=None if s.limit is None else self.atom(s.limit),
                       checkpoint=ck, body=self.block(s.body),
                       exits=[self.name(f) for f in s.exits])
        if isinstance(s, ir.While):
            return rep(s, cond_body=self.block(s.cond_body), cond=self.atom(s.cond),
                       body=self.block(s.body), exits=[self.name(f) for f in s.exits])
        raise TypeError(f"internal: cannot inline {type(s).__name__}")
