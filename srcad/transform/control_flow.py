"""Branches and loops in the reverse transform: their forward and backward code (a mixin).

Input: an `ir.If`, `ir.For` or `ir.While` of the function being differentiated, the adjoint
states on entry (adjoints.py: absent, an alias, or a named variable) and the plan `Reverse`
made (trip counters for loops that may exit early and for while loops, the names pushed on
stacks, checkpointed loops). Output: `Line`s of generated code.
  * Forward: the loop as written, counting its trips where a counter is planned
    (``trips_L7 += 1``) and pushing the counter of an inner loop after it ends.
  * Backward of a branch: both arms start from the same named adjoints (materialised where
    either arm touches one), and leave them named; the arms run under the recorded test.
  * Backward of a loop: the adjoints it carries across iterations are named before the loop
    and stay named at the end of each iteration; names local to one iteration never leave
    it (`loop_locals`). It runs over ``reversed(range(...))``, or ``range(trips_L7)``; a
    checkpointed loop hands its backward to checkpointing.py.

Before/after (a loop's backward; dh is carried, so it is named before the loop):
    for i in range(n):                dh = unreduce(1.0, h)
        h = np.tanh(h * w[i])         for i in reversed(range(n)):
                                          dh_multiply = dh * (1 - h * h)
                                          h = stack_h.pop()
                                          dh = unbroadcast(dh_multiply * h_getitem, h)
                                          h_getitem = stack_h_getitem.pop()

`ControlFlowMixin` holds these methods of `Reverse` (srcad/transform/reverse.py).
"""

from __future__ import annotations

import ast
import copy

from .. import ir
from ..analysis.activity import exposed_uses
from ..errors import SrcadError
from ..gcode import RESTORE as _RESTORE
from ..gcode import Line, assign, line_reads, name, store
from ..gcode import free_names as _free
from ..gcode import call as _call
from ..gcode import compound as _compound
from ..gcode import method as _method
from .adjoints import Adj
from .templates import atom_expr, loop_iter, range_expr


class ControlFlowMixin:
    """The code of branches and loops, both sweeps, for `Reverse` (reverse.py)."""

    def touched(self, body) -> set[str]:
        """Active names (and stacks) that statements in `body` define or read."""
        names = set()
        for s in ir.walk(body):
            names.update(ir.defs(s))
            names.update(ir.uses(s))
        names = {self.same.get(n, n) for n in names}  # (an alias shares its array's adjoint)
        return names & (self.active | self.stacks)

    def defined_before(self, var: str, stmt) -> bool:
        """Can `var` hold a value when `stmt` runs: assigned earlier, or anywhere in a loop
        around `stmt` (an earlier iteration)?"""
        if self.first_def.get(var, 1 << 60) < self.order[id(stmt)]:
            return True
        around = set(self.loops[id(stmt)])
        return any(set(self.loops[id(d)]) & around for d in self.def_sites.get(var, ()))

    def if_backward(self, s: ir.If, out: list) -> None:
        touched = self.touched(s.body + s.orelse)
        restores = any(id(c) in self.pushes for c in ir.walk(s.body + s.orelse))
        if not touched and not restores:
            self.left_out.add(id(s))
            return
        joined = {v for v in touched - self.stacks if self.defined_before(v, s)}
        self.name_aliases_of(touched, s.line, out)
        for v in sorted(joined):  # both branches start from the same named adjoints
            if v in self.state:
                self.materialise(v, s.line, out, zeros=False)
        before = {k: copy.copy(v) for k, v in self.state.items()}
        branches = []
        states = []
        for stmts in (s.body, s.orelse):
            self.state = {k: copy.copy(v) for k, v in before.items()}
            lines = self.bwd_block(stmts)
            branches.append(lines)
            states.append(self.state)
        need = {v for v in joined if any(v in st for st in states)}
        for k, (lines, st) in enumerate(zip(branches, states)):
            self.state = st
            within = (*self.arms[id(s)], (id(s), k))  # (the arms around this branch's code)
            # (a name this arm binds holds the arm's value here, not the one before the
            # branch that the adjoint belongs to -- `b = a; if a.ndim == 1: b = a[:, None]`)
            made = {d for x in ir.walk((s.body, s.orelse)[k]) for d in ir.defs(x)}
            for v in sorted(need):
                self.materialise(v, s.line, lines, zeros=True, within=within,
                                 stale=v in made and v not in self.fn.params)
        self.state = {k: v for k, v in before.items() if k not in touched}
        for v in need:
            self.state[v] = Adj(owned=False)
        if not any(ln.node is not None for ln in branches[0] + branches[1]):
            self.left_out.add(id(s))  # (its restores may come: reverse.py `backward`)
            return
        header = ast.If(test=atom_expr(s.test), body=[], orelse=[])
        self.bwd_reads[id(s)] = set(ir.atom_vars(s.test))
        self.comment(out, s.line)
        out.append(_compound(header, s.line, branches[0] or [Line(ast.Pass(), s.line)],
                             branches[1] or None))

    def loop_backward(self, s, out: list) -> None:
        body = s.body if isinstance(s, ir.For) else s.cond_body + s.body
        touched = self.touched(body)
        restores = any(id(c) in self.pushes for c in ir.walk(body))
        if not touched and not restores and id(s) not in self.counters:
            return
        local = self.loop_locals(s, body)
        carried = touched - local - self.stacks
        made = {d for x in ir.walk(body) for d in ir.defs(x)}
        # a name the loop rebinds (`W = params["W%d" % i]`) holds, in the backward sweep,
        # some other iteration's value (or one assigned after the loop) unless the backward
        # pops back its values: see `zeros` (adjoints.py)
        stale = {v for v in carried if v in made and v not in self.fn.params}
        self.name_aliases_of(touched, s.line, out)
        for v in sorted(carried):
            self.materialise(v, s.line, out, zeros=True, stale=v in stale)
        # the adjoint of a value the loop does not assign is only added to in the loop: a
        # buffer it owns on entry stays its own (contributions go in place)
        owned = {v for v in carried if v not in made and v in self.state
                 and self.state[v].named and self.state[v].owned}
        before = {k: v for k, v in self.state.items() if k not in carried}
        self.state = {k: v for k, v in self.state.items() if k not in local}
        for v in carried:
            self.state[v] = Adj(owned=v in owned)
        outer = getattr(self, "stale_now", frozenset())
        self.stale_now = outer | {v for v in made if v not in self.fn.params}
        try:
            lines = self.bwd_block(s.body)
        finally:
            self.stale_now = outer
        for v in sorted(carried):
            self.materialise(v, s.line, lines, zeros=True, stale=v in stale)
        ends_owned = {v for v in owned if v in self.state and self.state[v].named
                      and self.state[v].owned}
        self.state = before
        for v in carried:
            self.state[v] = Adj(owned=v in ends_owned)
        header = self.backward_loop_header(s)
        self.bwd_reads[id(s)] = line_reads(Line(header))
        if self.loop_depth[id(s)] > 0 and id(s) in self.counters:
            c = self.counters[id(s)]
            out.append(Line(ast.Expr(_call(_RESTORE, name(c))), s.line))
            self.restore_stacks[c] = self.stack_name(c)
        if id(s) in self.ckpts:
            self.checkpointed_loop_backward(s, lines, out)
            return
        self.comment(out, s.line)
        out.append(_compound(header, s.line, lines or [Line(ast.Pass(), s.line)]))
        if isinstance(s, ir.For):  # (its target as before the loop: `target_read_before`)
            for v in reversed(self.pushes.get(id(s), [])):
                out.append(Line(ast.Expr(_call(_RESTORE, name(v))), s.line))

    def name_aliases_of(self, touched: set[str], line, out: list) -> None:
        """Name each adjoint outside `touched` that is an alias reading the adjoint of a
        name in `touched`, before the code of a branch or a loop that may rebind those: the
        state after it keeps the alias as it was, and the alias would read the new binding
        (`p, u = u, n` in a loop whose `n = f(u) - p` is branched on: du was the alias `dp`,
        and the branch rebound dp)."""
        reads = {self.adj[v] for v in touched if v in self.adj}
        for var, st in sorted(self.state.items()):
            if var not in touched and st.alias is not None and _free(st.alias) & reads:
                self.bind(var, st.alias, line, out, owned=False)

    def restored(self, var: str) -> bool:
        """Does the backward sweep pop back every value the forward overwrites in `var` (each
        assignment that may overwrite it pushes the old value)? Then at each point of the
        backward `var` holds the value the forward held there, and zeros like it are shaped
        like its adjoint."""
        sites = self.def_sites.get(var, ())
        return bool(sites) and all(var in self.pushes.get(id(d), ()) or (
            isinstance(d, (ir.Call, ir.UserCall)) and not self.may_overwrite(d, var))
            for d in sites)

    def loop_locals(self, s, body) -> set[str]:
        """Names that live and die within one iteration: their adjoints never cross it. A
        name is local only if every read of it in the body follows an assignment that
        certainly ran earlier in the same iteration (not one under a branch or in an inner
        loop that may not run), and nothing outside the loop touches it."""
        inside = {id(x) for x in ir.walk(body)}
        made = {d for x in ir.walk(body) for d in ir.defs(x)}
        outside = set(self.fn.params)
        for x in ir.walk(self.fn.body):
            if id(x) not in inside and x is not s:
                outside.update(ir.uses(x))
                outside.update(ir.defs(x))
        return made - exposed_uses(body, frozenset()) - outside

    def backward_loop_header(self, s) -> ast.stmt:
        if isinstance(s, ir.For):
            rng = range_expr(s)
            if s.exits:
                if s.reverse:
                    raise SrcadError("internal: an early exit from a reversed loop")
                rng = ast.Subscript(value=rng, slice=ast.Slice(upper=name(self.counters[id(s)])),
                                    ctx=ast.Load())
            it = rng if s.reverse else _call("reversed", rng)
            return ast.For(target=store(s.target), iter=it, body=[], orelse=[], lineno=0)
        it = _call("range", name(self.counters[id(s)]))
        return ast.For(target=store("_"), iter=it, body=[], orelse=[], lineno=0)

    # -- forward -------------------------------------------------------------------------
    def fwd_loop(self, s) -> list[Line]:
        if id(s) in self.ckpts and not self._plain:
            return self.fwd_checkpointed_loop(s)
        out = []
        if isinstance(s, ir.For) and not self._plain:  # (reverse.py `target_read_before`)
            for v in self.pushes.get(id(s), []):
                out.append(Line(ast.Expr(_method(name(self.stack_name(v)), "push", name(v))),
                                s.line))
        counter = None if self._plain else self.counters.get(id(s))
        if counter is not None:
            out.append(Line(assign(counter, ast.Constant(0)), s.line))
        body = self.fwd_block(s.body)
        if counter is not None:
            body.append(Line(ast.AugAssign(target=store(counter), op=ast.Add(),
                                           value=ast.Constant(1)), s.line))
        for flag in s.exits:
            body.append(_compound(ast.If(test=name(flag), body=[], orelse=[]), s.line,
                                  [Line(ast.Break(), s.line)]))
        if isinstance(s, ir.For):
            header = ast.For(target=store(s.target), iter=loop_iter(s), body=[], orelse=[],
                             lineno=0)
        else:
            cond = self.fwd_block(s.cond_body)
            stop = _compound(ast.If(test=ast.UnaryOp(op=ast.Not(), operand=atom_expr(s.cond)),
                                    body=[], orelse=[]), s.line, [Line(ast.Break(), s.line)])
            body = cond + [stop] + body
            header = ast.While(test=ast.Constant(True), body=[], orelse=[])
        out.append(_compound(header, s.line, body))
        if counter is not None and self.loop_depth[id(s)] > 0:
            out.append(Line(ast.Expr(_method(name(self.stack_name(counter)), "push",
                                             name(counter))), s.line))
        return out
