"""Checkpointing in the reverse transform: what the backward computes again instead of keeping.

Three mechanisms, one mixin of `Reverse` (srcad/transform/reverse.py):

* checkpointed loops (`for l in srcad.checkpoint(range(n))`, or a memory_budget policy's
  choice): the forward sweep runs the loop plain and offers its loop state to a
  `LoopCheckpoints` (srcad/checkpoint.py), the backward runs the schedule's episodes --
  restore a kept state, advance plain, run the steps to reverse again saving what their
  backward reads, run their backward;
* rematerialisation (a memory_budget policy's choice): elementwise values the backward reads
  are computed again right before it first reads them, from values it keeps anyway;
* the refusal of both (and of `srcad.checkpoint(fn)`) around code that draws random numbers,
  which a recomputation would not reproduce.

Before/after (a checkpointed loop, the backward):
    for l in srcad.checkpoint(range(L)):     for advance_L4, record_L4 in ckpt_L4.episodes():
        h = np.tanh(h @ W[l])                    h = ckpt_L4.restore()
                                                 for l in advance_L4: ...  (plain)
                                                 for l in record_L4: ...   (saving)
                                                 for l in reversed(record_L4): ...  (adjoint)
"""

from __future__ import annotations

import ast

from .. import ir
from ..errors import SrcadError
from ..frontend.opaque import may_change_state
from ..ops.runtime_ops import POPS
from ..gcode import RESTORE as _RESTORE
from ..gcode import Line, assign, line_reads, name, store
from ..gcode import call as _call
from ..gcode import compound as _compound
from ..gcode import free_names as _free
from ..gcode import method as _method
from .templates import atom_expr, forward_expr, loop_iter, range_expr

# ops whose rules ask whether two values are one object (runtime.writes_through, is_view_of)
_IDENTITY_OPS = frozenset({"write_through", "item_again", "view_again", "same_object"})


def stateful_call(body, seen=None, effects=False):
    """The first statement in `body` (or in a user function it calls) that a recomputation
    would not repeat invisibly: a call that may change state (a random draw: a method with no
    rule, a function srcad does not know to be pure, frontend/opaque.py), the first push or
    pop of a stack (generated code transformed again: a recomputation would pop twice) and,
    with `effects`, a print or other call made for its effect. A checkpointed loop's own
    effects are skipped when it is recomputed; those of a function it calls, or of a
    checkpointed call, are not. Else None."""
    seen = set() if seen is None else seen
    for x in ir.walk(body):
        if isinstance(x, ir.Push) or (isinstance(x, ir.Call) and x.op.name in POPS):
            return x
        if isinstance(x, ir.Call) and may_change_state(x.op) and \
                not getattr(x.op, "recomputable", False):  # (np.errstate: frontend/pyforms.py)
            return x
        if effects and isinstance(x, ir.Effect) and x.kind in ("call", "setitem", "sync"):
            # (setitem: `param[k] = v` into the caller's dict, which a recomputation would
            # both read changed and write again)
            return x
        if isinstance(x, ir.UserCall) and id(x.callee) not in seen:
            seen.add(id(x.callee))
            inner = stateful_call(x.callee.body, seen, effects=True)
            if inner is not None:
                return inner
    return None


# the default policy (memory_plan=True) recomputes a value in the backward only where that
# costs less than keeping it: one arithmetic or selection op (a multiply, an add, a where)
# reads its inputs once and writes its output once, about the memory traffic that keeping
# the value costs (written by the forward, read back by the backward), and frees its bytes
# from the end of its forward use to the backward; a transcendental (tanh, exp) costs ~10x
# that in arithmetic and is kept, as are matmuls and reductions (never elementwise)
CHEAP_FAMILIES = ("arithmetic", "selection")


def cheap_to_recompute(op) -> bool:
    """Is recomputing one value of `op` cheaper than keeping it (the default policy)?"""
    return op.elementwise and op.family in CHEAP_FAMILIES


class CheckpointingMixin:
    """Checkpointed loops and rematerialisation, for `Reverse`."""

    def loop_schedule(self, s):
        """(every, snapshots) atoms if loop `s` is checkpointed, else None."""
        if not isinstance(s, ir.For) or not self.module.options.checkpoint_loops:
            return None
        if self.ir_id(s) in self.module.options.loop_schedules:
            every, snaps = self.module.options.loop_schedules[self.ir_id(s)]
            return (None if every is None else ir.Const(every, str(every)),
                    None if snaps is None else ir.Const(snaps, str(snaps)))
        return s.checkpoint

    def refuse_stateful(self, body, line: int, what: str) -> None:
        """Recomputing code that draws random numbers (a method with no rule, such as a
        Generator's) would draw different ones: a checkpointed region must not."""
        draw = stateful_call(body, effects=what == "call")
        if draw is not None:
            if isinstance(draw, ir.Effect) and draw.kind == "setitem":  # param[k] = v
                spelled = (f"{ast.unparse(atom_expr(draw.args['_obj']))}"
                           f"[{ast.unparse(atom_expr(draw.args['index']))}] = ...")
            else:
                spelled = f"{draw.stack}.push" if isinstance(draw, ir.Push) else \
                    ast.unparse(forward_expr(draw.op, draw.args))  # (as the user wrote it)
            raise SrcadError(
                f"the checkpointed {what} at line {line} calls `{spelled}` (line {draw.line}), "
                f"which may change state (a random draw, a stack) or have an effect (print); "
                f"recomputing it in the backward would do it again",
                filename=self.fn.filename, lineno=line, func=self.fn.name,
                hint="draw or print outside the checkpointed region and pass the numbers in, "
                "or do not checkpoint it")

    def loop_state(self, s) -> list[str]:
        """The names a loop carries from one step to the next (or hands on past its end):
        what a kept loop state holds. Everything else a step makes, it makes again."""
        assigned = {d for x in ir.walk(s.body) for d in ir.defs(x)}
        return sorted(assigned - self.loop_locals(s, s.body) - {s.target})

    def _state_expr(self, s, ctx) -> ast.expr:
        names = self.loop_state(s)
        if len(names) == 1:
            return ast.Name(id=names[0], ctx=ctx())
        return ast.Tuple(elts=[ast.Name(id=n, ctx=ctx()) for n in names], ctx=ctx())

    def _offer(self, s) -> Line:
        return Line(ast.Expr(_method(name(self.ckpts[id(s)]), "offer",
                                     self._state_expr(s, ast.Load))), s.line)

    def _plain_steps(self, s) -> list[Line]:
        """One step of the loop that saves nothing, after offering its state to the schedule."""
        self._plain += 1
        try:
            return [self._offer(s)] + self.fwd_block(s.body)
        finally:
            self._plain -= 1

    def fwd_checkpointed_loop(self, s) -> list[Line]:
        ck = self.ckpts[id(s)]
        every, snaps = self.loop_schedule(s)
        out = [Line(comment=f"checkpointed loop: keeps its state "
                            f"({', '.join(self.loop_state(s)) or 'nothing'}) at the "
                            f"schedule's steps only")]
        for v in self.loop_state(s):
            if not self.defined_before(v, s):
                out.append(Line(assign(v, ast.Constant(None)), s.line))
        steps = range_expr(s)
        if s.reverse:
            steps = ast.Subscript(value=steps, slice=ast.Slice(step=ast.Constant(-1)),
                                  ctx=ast.Load())
        kw = [ast.keyword(arg=k, value=atom_expr(a))
              for k, a in (("every", every), ("snapshots", snaps)) if a is not None]
        out.append(Line(assign(ck, ast.Call(func=name("LoopCheckpoints"), args=[steps],
                                            keywords=kw)), s.line))
        header = ast.For(target=store(s.target), iter=loop_iter(s), body=[], orelse=[],
                         lineno=0)
        out.append(_compound(header, s.line, self._plain_steps(s)))
        if self.loop_depth[id(s)] > 0:
            out.append(Line(ast.Expr(_method(name(self.stack_name(ck)), "push", name(ck))),
                            s.line))
        return out

    def checkpointed_loop_backward(self, s, bwd_lines: list, out: list) -> None:
        """The backward of a checkpointed loop, one episode of its schedule at a time:
        restore a kept state, advance plain to the steps to reverse, run those steps again
        saving what their backward reads, and run their backward (srcad/checkpoint.py)."""
        ck = self.ckpts[id(s)]
        advance = self.fresh(f"advance_L{s.line}")
        record = self.fresh(f"record_L{s.line}")
        if self.loop_depth[id(s)] > 0:
            out.append(Line(ast.Expr(_call(_RESTORE, name(ck))), s.line))
        episode: list[Line] = []
        if self.loop_state(s):
            episode.append(Line(ast.Assign(targets=[self._state_expr(s, ast.Store)],
                                           value=_method(name(ck), "restore"), lineno=0),
                                s.line))
        self._recompute += 1  # (effects -- print, assert -- ran once, in the forward sweep)
        try:
            plain = self._plain_steps(s)
            saving = self.fwd_block(s.body) or [Line(ast.Pass(), s.line)]
        finally:
            self._recompute -= 1

        def loop(it, body):
            return _compound(ast.For(target=store(s.target), iter=it, body=[], orelse=[],
                                     lineno=0), s.line, body)

        episode.append(Line(comment="recompute from the kept state, saving nothing"))
        episode.append(loop(name(advance), plain))
        episode.append(Line(comment="recompute the steps to reverse, saving for the backward"))
        episode.append(loop(name(record), saving))
        episode.append(loop(_call("reversed", name(record)),
                            bwd_lines or [Line(ast.Pass(), s.line)]))
        header = ast.For(target=ast.Tuple(elts=[store(advance), store(record)],
                                          ctx=ast.Store()),
                         iter=_method(name(ck), "episodes"), body=[], orelse=[], lineno=0)
        # the recomputation reads what the loop's steps read from outside the loop; the
        # values the loop itself makes come from the kept state
        made = {d for x in ir.walk(s.body) for d in ir.defs(x)} | {s.target}
        reads = set().union(*(line_reads(ln) for ln in plain + saving)) - made
        self.bwd_reads[id(s)] = self.bwd_reads.get(id(s), set()) | reads | {ck}
        self.comment(out, s.line)
        episode.insert(0, Line(comment="checkpointed: each episode restores a kept loop state "
                                       "and recomputes from it"))
        out.append(_compound(header, s.line, episode))

    def remat_candidates(self, needed: set) -> list:
        """Elementwise values the backward reads that it can compute again from values it
        keeps anyway (arguments, values its own rules read, values kept or recomputed
        before them): top-level, single-assignment names only. One whose inputs would be
        kept only for it (tanh's input, to recompute tanh) is kept itself: no gain."""
        opts = self.module.options
        policy = "budget" if opts.remat else (
            "default" if opts.memory_plan and not opts.reparsed else None)
        if policy is None:
            return []
        ret = set(ir.atom_vars(self.returned))
        # (a value whose identity a rule asks about -- `x[index] is view` -- must be the
        # forward's object: one computed again is another object)
        identity = {v for s in ir.walk(self.fn.body) if isinstance(s, ir.Call)
                    and s.op.name in _IDENTITY_OPS
                    for a in s.args.values() for v in ir.atom_vars(a)}

        def eligible(s):
            return (isinstance(s, ir.Call) and s.op.elementwise and s.target in needed
                    and (policy == "budget" or cheap_to_recompute(s.op))
                    and s.target not in self.mutable and s.target not in ret
                    and s.target not in identity
                    and s.target not in self.fn.params and all(
                        isinstance(a, ir.Const) or (isinstance(a, ir.Var) and a.name not in
                                                    self.mutable)
                        for a in s.args.values()))

        top = [s for s in self.fn.body if eligible(s)]
        names = {s.target for s in top}
        available = set(self.fn.params) | (needed - names)
        out = []
        for s in top:  # in program order: inputs are decided before what reads them
            if all(v in available for a in s.args.values() for v in ir.atom_vars(a)):
                out.append(s)
            available.add(s.target)  # recomputed or kept: there in the backward either way
        return out

    def rematerialise(self, lines: list, needed: set) -> list:
        """memory_budget: recompute the chosen elementwise values right before the backward
        first reads them, so that the forward's copy dies at its last forward use (cheap
        arithmetic traded for memory; matmuls and reductions are always kept)."""
        chosen = self.remat_candidates(needed)
        at_index: dict[int, list] = {}
        for s in reversed(chosen):  # later values first: a chain is recomputed in order
            inserted = [x for group in at_index.values() for x in group]
            at = next((k for k, ln in enumerate(lines) if ln.node is not None
                       and s.target in line_reads(ln)), None)
            reader = next((x for x in inserted if s.target in _free(x[1].value)), None)
            if reader is not None:  # read first by a recomputation: just before it
                at = reader[0]
            if at is None:
                continue
            at_index.setdefault(at, []).insert(0, (at, assign(s.target, forward_expr(
                s.op, s.args, self.info_of)), s.line))
            self.rematerialised.insert(0, (s.target, s.line))
        for at in sorted(at_index, reverse=True):
            group = at_index[at]
            names = ", ".join(node.targets[0].id for _, node, _ in group)
            plan = self.module.options.plan
            why = ("memory_budget" if plan is not None and plan.remat else
                   "fuse=True" if self.module.options.remat else "cheaper than keeping")
            lines[at:at] = [Line(comment=f"recomputed, not kept from the forward "
                                         f"({why}): {names}")] + [
                Line(node, line) for _, node, line in group]
        return lines
