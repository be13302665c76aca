"""Calls to other user functions in the reverse transform: each active call becomes a call
of the callee's `_fwd` subroutine (keeping its residuals) in the forward sweep and of its
`_bwd` in the backward sweep; a checkpointed call (srcad.checkpoint, or a memory_budget
plan) keeps only its inputs and runs `_fwd` again right before `_bwd`. `CallsMixin` holds
these methods of `srcad.transform.reverse.Reverse`.

    h = block(h, W)          forward:   h, h_saved = block_fwd(h, W)
                             backward:  dh_part, dW_part = block_bwd(h_saved, dh)

Outputs the caller does not differentiate are dead: the pair is specialised to the outputs
that get a cotangent (`live_outputs`: no adjoint, zeros or stack for the others) and to
those read at all (`read_outputs`: the forward returns None for the rest, and the optimiser
drops what only they needed):

    out, cache = layer(x, W)     forward:   (out, cache), out_saved = layer_fwd(x, W)
    (cache never read)                      ... layer_fwd returns ((out, None), saved)
                                 backward:  dx_part, dW_part = layer_bwd(out_saved, dout)
"""

from __future__ import annotations

import ast
import inspect

from .. import ir
from ..analysis.activity import pushes_on_stacks
from ..frontend.opaque import has_effects, may_change_state
from ..gcode import RESTORE as _RESTORE
from ..gcode import Line, clone, line_reads, name, store
from ..gcode import call as _call
from ..ops.runtime_ops import POPS
from .module import Pair
from .templates import atom_expr


def _leaves(atom, expr: ast.expr):
    """(name, its part of `expr`) for each name in a (nested) tuple atom: `d[0][1]`."""
    if isinstance(atom, ir.Var):
        yield atom.name, expr
    elif isinstance(atom, ir.Seq):
        for i, item in enumerate(atom.items):
            yield from _leaves(item, ast.Subscript(value=clone(expr),
                                                   slice=ast.Constant(i), ctx=ast.Load()))


def read_vars(fn: ir.Function, returned) -> set[str]:
    """Names whose values `fn` reads for something that stays: its output (`returned`, the
    atom its forward returns), an effect, control flow, any statement inside a branch or a
    loop (the optimiser drops dead statements at the top level only: srcad/optimize.py), or
    a top-level statement computing such a name (to a fixed point; flow-insensitive, so a
    name read anywhere for these counts)."""
    top = [x for x in fn.body[:-1] if isinstance(x, (ir.Call, ir.UserCall)) and not (
        isinstance(x, ir.Call) and (may_change_state(x.op) or x.op.name in POPS)) and not (
        isinstance(x, ir.UserCall) and has_effects(x.callee.body))]
    droppable = {id(x) for x in top}
    read = set(ir.atom_vars(returned))
    for x in ir.walk(fn.body[:-1]):
        if id(x) not in droppable:
            read.update(ir.uses(x))
    edges = [(set(ir.defs(x)), ir.uses(x)) for x in top]
    changed = True
    while changed:
        changed = False
        for outs, ins in edges:
            if outs & read and not set(ins) <= read:
                read.update(ins)
                changed = True
    return read


def plain_call(s: ir.UserCall) -> ast.Call:
    """The user's function called as it is (no gradient flows through it here): one argument
    per parameter, a keyword-only parameter by its name (`def kw(y, *, scale=1.0)`: `kw(x,
    scale=1.0)`, not `kw(x, 1.0)`); the values of the state a wrapper gives the function
    (frontend/state.py) stay the last positional arguments."""
    try:
        kinds = {p.name: p.kind for p in inspect.signature(s.fn).parameters.values()}
    except (TypeError, ValueError):
        kinds = {}
    args, keywords = [], []
    for p, a in zip(s.callee.params, s.args):
        if kinds.get(p) is inspect.Parameter.KEYWORD_ONLY:
            keywords.append(ast.keyword(arg=p, value=atom_expr(a)))
        else:
            args.append(atom_expr(a))
    return ast.Call(func=name(s.fn_name), args=args, keywords=keywords)


class CallsMixin:
    """The call-site methods of `Reverse` (see the module docstring)."""

    def recompute(self, s: ir.UserCall) -> bool:
        """Is this call checkpointed (by srcad.checkpoint, or by a memory_budget policy)?"""
        return s.checkpoint or self.ir_id(s) in self.module.options.checkpoint_ids

    def call_is_active(self, s: ir.UserCall) -> bool:
        # (a callee that pushes on stacks has outputs besides its result: stacks.py)
        return (any(t in self.active for t in s.targets) or pushes_on_stacks(s.callee)) and \
            any(v in self.active for a in s.args for v in ir.atom_vars(a))

    def callee_wrt(self, s: ir.UserCall) -> list[str]:
        # (an argument written as a tuple, `g((a, b))`, is differentiated if an item is)
        return [p for p, a in zip(s.callee.params, s.args)
                if set(ir.atom_vars(a)) & self.active]

    def live_outputs(self, s: ir.UserCall) -> tuple | None:
        """Which of the unpacked outputs of a call get a cotangent: one bool per target,
        True where the target is active here (None: all of them). A target bound to `_`,
        or read by nothing that reaches this function's output, is dead: the callee is
        specialised without its adjoint, and the call passes no zeros for it."""
        if not self._unpacks_items(s):
            return None
        live = tuple(t in self.active for t in s.targets)
        return live if any(live) and not all(live) else None

    def read_outputs(self, s: ir.UserCall) -> tuple | None:
        """Which of the unpacked outputs of a call this function reads at all (None: all).
        The callee's forward returns None for the others (`loss, _ = svm_loss(W, X, y)`),
        so that what only they need is not computed: the optimiser drops it as it drops
        any value nobody reads (a line kept for its effect stays)."""
        if not self._unpacks_items(s):
            return None
        if self._read_here is None:
            self._read_here = read_vars(self.fn, self.returned)
        read = tuple(t in self._read_here for t in s.targets)
        return None if all(read) else read

    def _unpacks_items(self, s: ir.UserCall) -> bool:
        """Does the call unpack the items of a tuple the callee returns, one name each?"""
        ret = s.callee.ret.value
        # (a callee that pushes on stacks has them as outputs too: stacks.py)
        return (s.unpack and isinstance(ret, ir.Seq) and len(ret.items) == len(s.targets)
                and not pushes_on_stacks(s.callee))

    def pair(self, s: ir.UserCall) -> Pair:
        """The callee's `_fwd`/`_bwd` subroutines for this call's active arguments and the
        outputs it reads."""
        wrt = self.callee_wrt(s)
        live, read = self.live_outputs(s), self.read_outputs(s)
        key = (id(s.callee), tuple(wrt), live, read)
        if key not in self.module.pairs:
            sub = type(self)(s.callee, wrt, None, self.module, live=live, read=read)
            sub.subroutine = True
            fwd, bwd = sub.split(names=(
                self.module.function_name(f"{s.callee.name}_fwd"),
                self.module.function_name(f"{s.callee.name}_bwd")))
            self.module.pairs[key] = Pair(fwd, bwd, atom_expr(sub.returned), sub)
            self.globals.update(sub.globals)
        return self.module.pairs[key]

    def user_call_forward(self, s: ir.UserCall) -> ast.stmt:
        args = [atom_expr(a) for a in s.args]
        if s.unpack:
            outs = ast.Tuple(elts=[store(t) for t in s.targets], ctx=ast.Store())
        else:
            outs = store(s.targets[0])
        if id(s) not in self.saved_of or self.recompute(s) or self._plain:
            # no residuals: a checkpointed call saves only its inputs (read again below)
            return ast.Assign(targets=[outs], value=plain_call(s), lineno=0)
        p = self.pair(s)
        target = ast.Tuple(elts=[outs, store(self.saved_of[id(s)])], ctx=ast.Store())
        return ast.Assign(targets=[target], value=ast.Call(func=name(p.fwd.name), args=args,
                                                           keywords=[]), lineno=0)

    def user_call_backward(self, s: ir.UserCall, out: list) -> None:
        # a callee that pushes on stacks runs its backward even with no cotangent coming in:
        # it pops what another function's backward left on its stacks (stacks.py)
        if id(s) not in self.saved_of or not (any(t in self.state for t in s.targets)
                                              or pushes_on_stacks(s.callee)):
            for t in s.targets:
                self.state.pop(t, None)
            return
        p = self.pair(s)
        block: list[Line] = []
        cots = []
        live = self.live_outputs(s)
        for k, t in enumerate(s.targets):
            st = self.state.pop(t, None)
            if live is not None and not live[k]:
                continue  # (a dead output: the callee's backward takes no cotangent for it)
            if st is None:
                cots.append(self.zeros(t))
            else:
                cots.append(clone(st.alias) if st.alias is not None
                            else name(self.adj[t]))
        # (one output read of several: its cotangent alone, as `live_output` seeds it)
        bare = not s.unpack or (live is not None and len(cots) == 1)
        g = cots[0] if bare else ast.Tuple(elts=cots, ctx=ast.Load())
        wrt = self.callee_wrt(s)
        parts = []
        elts = []
        for pname, a in zip(s.callee.params, s.args):
            if pname in wrt:
                part = self.fresh(f"d{a.name if isinstance(a, ir.Var) else pname}_part")
                if isinstance(a, ir.Var):
                    self.part_of[part] = a.name
                parts.extend((v, e) for v, e in _leaves(a, name(part)) if v in self.active)
                elts.append(store(part))
        if self.recompute(s):
            # recompute the call's forward from its saved inputs, keeping its residuals
            # only until its backward has run. An input the call overwrites (h = f(h, W))
            # is restored first: the recomputation needs its value from before the call.
            if set(s.targets) & {v for a in s.args for v in ir.atom_vars(a)}:
                for v in reversed(self.pushes.get(id(s), [])):
                    block.append(Line(ast.Expr(_call(_RESTORE, name(v))), s.line))
                self.restored_early.add(id(s))
            block.append(Line(comment=f"checkpointed: recompute {s.callee.name}'s forward "
                                      f"from its inputs"))
            recompute = ast.Call(func=name(p.fwd.name), args=[atom_expr(a) for a in s.args],
                                 keywords=[])
            block.append(Line(ast.Assign(targets=[ast.Tuple(elts=[
                store("_"), store(self.saved_of[id(s)])], ctx=ast.Store())], value=recompute,
                lineno=0), s.line))
        call = ast.Call(func=name(p.bwd.name), args=[name(self.saved_of[id(s)]), g],
                        keywords=[])
        block.append(Line(ast.Assign(targets=[ast.Tuple(elts=elts, ctx=ast.Store())],
                                     value=call, lineno=0), s.line))
        for var, part in parts:
            self.accumulate(var, part, s.line, block)
        self.bwd_reads[id(s)] = set().union(*(line_reads(ln) for ln in block))
        self.comment(out, s.line)
        out.extend(block)
