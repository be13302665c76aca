"""Reverse over reverse: the backward of code that records values on stacks.

``srcad.grad(srcad.grad(f))`` transforms the generated code of ``grad(f)``, and where f has a
loop that code keeps values on stacks: its forward sweep pushes (``stack_h.push(h)``), its
backward sweep pops (``h = stack_h.pop()``), and a called function's ``g_fwd`` returns its
stacks inside its saved values for ``g_bwd`` to pop. This mixin of `Reverse`
(srcad/transform/reverse.py) gives those statements their backward, as Tangent did: the
stacks are values like any other, and a push followed by a pop moves a value.

Input: an `ir.Function` holding `ir.Push` statements and calls of the pop rows
(``stack.pop()``, ``pop_or_zeros(stack, like)``, srcad/ops/runtime_ops.py), and the active
names of activity analysis (which lets dependence flow through a stack, from what is pushed
to what is popped). Output: for each active stack, the backward lines of its pushes and pops:

    w = stack_h.pop()        ->    dstack_h.push(dw)          (zeros if w has no adjoint)
    stack_h.push(v)          ->    dv_pop = dstack_h.pop()    then dv += dv_pop

``dstack_h = cotangents(stack_h)`` is the stack of cotangents of ``stack_h``'s values
(srcad/runtime.py). The outer forward sweep runs the inner forward *and* the inner backward,
so each inner stack is filled and emptied again before the outer backward starts; the outer
backward meets the pops first, in reverse, and pushes one cotangent for each; it then meets
the pushes, in reverse, and each pops the cotangent of its own value (last in, first out in
both directions).

Why a stack's cotangents are found through the stack, not carried as its adjoint: a stack is
mutable state, and its contents when the outer backward runs are not those it had when it was
pushed to (it is empty by then). The outer backward never reads a stack's contents: what it
needs of a popped value, the outer forward saves like any value the inner code overwrites
(``x = stack_x.pop()`` rebinds ``x``; the outer pushes the old value on a stack of its own and
restores it after the adjoint). It needs only the stack's identity, to find the cotangents:
so saving a reference to a stack that is mutated later is exactly right, and a stack that
reaches ``g_bwd`` inside ``g_fwd``'s saved tuple shares its cotangents with ``g_fwd``'s
backward without any adjoint flowing through the tuple (whose adjoint stays zero there).

Alignment. Every pop of an active stack pushes a cotangent (zeros when its value had no
adjoint) and every push pops one, so the two sequences match. Within one function a stack's
activity is one fact; across functions (``g_fwd`` pushes, ``g_bwd`` pops) the popping one
may not be differentiated at all, so a push onto a stack that another function pops uses
``pop_or_zeros(dstack_h, v)``, which gives zeros when nothing was pushed, and a call whose
callee pushes onto stacks always runs its backward (with zero cotangents if it must): the
cotangents another function left on its stacks are part of its derivative.

Higher orders. At the next order the cotangent stacks are stacks like any other (their own
cotangents are ``cotangents(dstack_h)``), pushed in one function (``g_bwd``'s backward) and
popped in another (``g_fwd``'s): activity analysis (srcad/analysis/activity.py) lets dependence
flow from a stack to its cotangents, counts a stack that another function pops (one not made
here by ``Stack()``) as an output, and a call that pushes on stacks as useful; the forward
transform gives ``cotangents(s)`` the tangent ``cotangents(s_dot)``.

Recomputation would pop a stack twice: checkpointed calls and loops refuse such code
(srcad/transform/checkpointing.py), a memory_budget policy does not choose it, and loop
checkpointing is off for code that will be transformed again
(``Transformed.compiled(..., to_transform=True)``).

Before/after: the gradient of ``for i in range(n): x = np.sin(x)`` (left, abridged), and the
backward sweep of its own gradient (right; ``stack_x_2`` is the outer transform's stack for
the values of ``x`` that the inner code overwrites, its pushes are in the outer forward):

    stack_x = Stack()                     dstack_x = cotangents(stack_x)
    for i in range(n):                    for i in range(n):             # inner bwd, reversed
        x_sin = np.sin(x)                     ddx_sin = ddx * dx_cos
        stack_x.push(x)                       ddx_cos = ddx * dx_sin
        x = x_sin                             dx_2 = dx_2 + -ddx_cos * np.sin(x)
    dx = 1.0                                  ...
    for i in reversed(range(n)):              dstack_x.push(dx_2)        # was x = stack_x.pop()
        x = stack_x.pop()                     x = stack_x_2.pop()
        dx_sin = dx                           dx_2 = np.zeros_like(x)
        dx = dx_sin * np.cos(x)           for i in reversed(range(n)):   # inner fwd, reversed
                                              x = stack_x_2.pop()
                                              dx_pop = dstack_x.pop()    # was stack_x.push(x)
                                              dx_sin_2 = dx_2
                                              dx_2 = dx_pop + dx_sin_2 * np.cos(x)
"""

from __future__ import annotations

import ast

from .. import ir
from ..analysis.activity import stack_of, stacks_of
from ..gcode import Line, assign, clone, line_reads, name
from ..gcode import call as _call
from ..gcode import method as _method
from .templates import atom_expr


class StacksMixin:
    """The backward of pushes and pops, for `Reverse`."""

    def plan_stacks(self) -> None:
        """Which active names are stacks (they get cotangent stacks, not adjoints), and which
        of those this function makes and empties itself."""
        used, local = stacks_of(self.fn)
        self.stacks = used & self.active
        self.active -= self.stacks  # no adjoint state: see the module docstring
        self.local_stacks = self.stacks & local
        self.channels: dict[str, str] = {}  # stack -> its cotangents' name, bound up front

    def _hoistable(self, stack: str) -> bool:
        """Does `stack` hold one stack for the whole backward (bound once, unconditionally)?"""
        if stack in self.fn.params:
            return stack not in self.mutable
        sites = self.def_sites.get(stack, [])
        return stack not in self.mutable and len(sites) == 1 and \
            self.loop_depth[id(sites[0])] == 0 and not self.arms[id(sites[0])]

    def cotangents_of(self, stack: str, line: int, out: list) -> ast.expr:
        """The name of `stack`'s cotangent stack: bound at the top of the backward, or here
        when the name `stack` may hold different stacks."""
        d = self.adj_name(stack)
        if self._hoistable(stack):
            self.channels[stack] = d
        else:
            out.append(Line(assign(d, _call("cotangents", name(stack))), line))
        return name(d)

    def cotangent_bindings(self) -> list[Line]:
        return [Line(assign(d, _call("cotangents", name(stack))), None)
                for stack, d in sorted(self.channels.items())]

    def pop_backward(self, s: ir.Call, out: list) -> None:
        """``w = stack.pop()``: push w's cotangent (zeros if it has none) on the stack's
        cotangent stack."""
        stack = stack_of(s)
        st = self.state.pop(s.target, None)
        if stack not in self.stacks:
            return
        if st is None:
            value = self.zeros(s.target)
        elif st.alias is not None:
            value = clone(st.alias)
        else:
            value = name(self.adj[s.target])
        block: list[Line] = []
        cots = self.cotangents_of(stack, s.line, block)
        block.append(Line(ast.Expr(_method(cots, "push", value)), s.line))
        self.bwd_reads[id(s)] = set().union(*(line_reads(ln) for ln in block))
        self.comment(out, s.line)
        out.extend(block)

    def push_backward(self, s: ir.Push, out: list) -> None:
        """``stack.push(v)``: pop v's cotangent off the stack's cotangent stack and add it to
        v's adjoint."""
        if s.stack not in self.stacks:
            return
        block: list[Line] = []
        cots = self.cotangents_of(s.stack, s.line, block)
        v = s.value
        base = v.name if isinstance(v, ir.Var) else "value"
        part = self.fresh(f"d{base}_pop")
        if s.stack in self.local_stacks:
            expr = _method(cots, "pop")
        else:  # another function pops this stack: it may have pushed no cotangents
            expr = _call("pop_or_zeros", cots, atom_expr(v))
        block.append(Line(assign(part, expr), s.line))
        if isinstance(v, ir.Var) and v.name in self.active:
            self.accumulate(v.name, name(part), s.line, block)
        self.bwd_reads[id(s)] = set().union(*(line_reads(ln) for ln in block))
        self.comment(out, s.line)
        out.extend(block)
