"""Activity analysis: which values depend on `wrt` (varied) and reach the output (useful).

Input: an `ir.Function` and the names of the parameters to differentiate (for a callee, also
which items of its returned tuple the caller reads: `live`).
Output: the set of active variable names, varied and useful; only they get adjoints
(`active_vars`), or the varied ones alone (`varied_vars`: what forward mode gives tangents,
and what the refusals of rule-less calls look at). An output the caller discards
(`loss, _ = f(x)`) is not useful: what only feeds it gets no adjoint in `f`.
An op argument carries dependence only through a parameter that has a VJP rule, so
`x.shape`, comparisons and integer arithmetic stop activity. In generated code transformed
again, a stack carries dependence from the values pushed on it to the names popped off it (and
to its stack of cotangents); a stack that another function pops is an output.
"""

from __future__ import annotations

from .. import ir
from ..ops.runtime_ops import POPS


def active_vars(fn: ir.Function, wrt, live: tuple | None = None) -> set[str]:
    """Varied (depends on wrt) and useful (reaches the output) names, to a fixed point.
    `live`: one bool per item of the returned tuple, True where the caller reads it
    (None: every output is read; see `live_output`).

    Loops make both questions circular (a value can feed the next iteration), so each is
    iterated until nothing changes; every pass is linear in the program's size.
    """
    stmts = [s for s in ir.walk(fn.body) if isinstance(s, (ir.Call, ir.UserCall, ir.Push))]
    _, local = stacks_of(fn)

    def flows(s):
        """(inputs that carry a derivative, outputs) of a statement."""
        if isinstance(s, ir.UserCall):
            return [v for a in s.args for v in ir.atom_vars(a)], list(s.targets)
        if isinstance(s, ir.Push):  # generated code, again: a stack holds what is pushed on it
            return list(ir.atom_vars(s.value)), [s.stack]
        if s.op.name in POPS or s.op.name == "cotangents":  # ... and hands it on when popped
            return list(ir.atom_vars(s.args["stack"])), [s.target]
        ins = [v for p, a in s.args.items() if s.op.vjp(p) is not None
               for v in ir.atom_vars(a)]
        return ins, [s.target]

    edges = [flows(s) for s in stmts]
    varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for ins, outs in edges:
            if any(v in varied for v in ins) and not set(outs) <= varied:
                varied.update(outs)
                changed = True
    useful = set(ir.atom_vars(live_output(fn, live)))
    # what is pushed on a stack that another function pops leaves by the stack's identity
    # (srcad/transform/stacks.py): such a stack is an output, and so is a call that pushes
    useful |= {s.stack for s in stmts if isinstance(s, ir.Push) and s.stack not in local}
    for (ins, _), s in zip(edges, stmts):
        if isinstance(s, ir.UserCall) and pushes_on_stacks(s.callee):
            useful.update(ins)
    changed = True
    while changed:
        changed = False
        for ins, outs in reversed(edges):
            if any(o in useful for o in outs) and not set(ins) <= useful:
                useful.update(ins)
                changed = True
    return varied & useful


def live_output(fn: ir.Function, live: tuple | None):
    """What of `fn`'s output gets a cotangent: the returned atom, or with `live` (one bool
    per item of a returned tuple) the one item read, or a tuple of those read.

        return out, cache     live=(True, False)  ->  out
    """
    ret = fn.ret.value
    if live is None:
        return ret
    items = tuple(a for a, keep in zip(ret.items, live) if keep)
    return items[0] if len(items) == 1 else ir.Seq(items)


def varied_vars(fn: ir.Function, wrt) -> set[str]:
    """Names that depend on `wrt` through differentiable arguments (to a fixed point)."""
    stmts = [s for s in ir.walk(fn.body) if isinstance(s, (ir.Call, ir.UserCall, ir.Push))]
    varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if isinstance(s, ir.Push):  # a stack holding a varied value is varied
                ins, outs = list(ir.atom_vars(s.value)), [s.stack]
            elif isinstance(s, ir.Call) and s.op.name in POPS + ("cotangents",):
                # (a stack's cotangents are varied with it: whichever function pushes on
                # them, the one that pops must pop tangents too)
                ins, outs = list(ir.atom_vars(s.args["stack"])), [s.target]
            elif isinstance(s, ir.UserCall):
                ins, outs = [v for a in s.args for v in ir.atom_vars(a)], list(s.targets)
            else:
                ins = [v for p, a in s.args.items()
                       if (s.op.vjp(p) is not None or s.op.jvp(p) is not None)
                       for v in ir.atom_vars(a)]
                outs = [s.target]
            if any(v in varied for v in ins) and not set(outs) <= varied:
                varied.update(outs)
                changed = True
    return varied


# -- stacks (generated code transformed again) -------------------------------------------------
def stack_of(s) -> str | None:
    """The stack a statement pushes to or pops from, if it does."""
    if isinstance(s, ir.Push):
        return s.stack
    if isinstance(s, ir.Call) and s.op.name in POPS and isinstance(s.args.get("stack"), ir.Var):
        return s.args["stack"].name
    return None


def stacks_of(fn: ir.Function) -> tuple[set, set]:
    """(every name `fn` pushes to or pops from, those of them it makes with ``Stack()`` and
    uses for nothing else: its own pushes and pops match)."""
    used: set[str] = set()
    others: set[str] = set()  # names read other than as the stack of a push or pop
    for s in ir.walk(fn.body):
        stack = stack_of(s)
        if stack is not None:
            used.add(stack)
        uses = list(ir.uses(s))
        if stack is not None:
            uses.remove(stack)
        others.update(uses)
    made = {s.target for s in ir.walk(fn.body) if isinstance(s, ir.Call) and s.op.name == "Stack"}
    return used, {v for v in used if v in made and v not in others}


def pushes_on_stacks(fn: ir.Function, seen: set | None = None) -> bool:
    """Does `fn`, or a user function it calls, push on a stack?"""
    seen = set() if seen is None else seen
    seen.add(id(fn))
    for x in ir.walk(fn.body):
        if isinstance(x, ir.Push):
            return True
        if isinstance(x, ir.UserCall) and id(x.callee) not in seen and \
                pushes_on_stacks(x.callee, seen):
            return True
    return False


def certain_defs(body) -> set[str]:
    """Names `body` certainly assigns when it runs to its end: its plain statements' and, of
    a branch, what both arms assign (a loop's body may not run; `break` is an exit flag, so an
    arm always runs to its end)."""
    out: set[str] = set()
    for x in body:
        if isinstance(x, ir.If):
            out |= certain_defs(x.body) & certain_defs(x.orelse)
        elif not isinstance(x, (ir.For, ir.While)):
            out |= set(ir.defs(x))
    return out


def exposed_uses(body, defined: frozenset) -> set[str]:
    """Names `body` may read before it assigns them (`defined`: certainly assigned on entry):
    an assignment in a loop, or on one arm of a branch only, does not count after that
    statement."""
    out: set[str] = set()
    done = set(defined)
    for x in body:
        out |= set(ir.uses(x)) - done
        if isinstance(x, ir.If):
            out |= exposed_uses(x.body, frozenset(done))
            out |= exposed_uses(x.orelse, frozenset(done))
            done |= certain_defs(x.body) & certain_defs(x.orelse)  # (assigned on both arms)
        elif isinstance(x, ir.For):
            out |= exposed_uses(x.body, frozenset(done | {x.target}))
        elif isinstance(x, ir.While):
            out |= exposed_uses(x.cond_body + x.body, frozenset(done))
        else:
            done |= set(ir.defs(x))
    return out
