"""Activity analysis: which values depend on `wrt` (varied) and reach the output (useful).

Input: an `ir.Function` and the names of the parameters to differentiate.
Output: the set of active variable names, varied and useful; only they get adjoints
(`active_vars`), or the varied ones alone (`varied_vars`: what forward mode gives tangents,
and what the refusals of rule-less calls look at).
An op argument carries dependence only through a parameter that has a VJP rule, so
`x.shape`, comparisons and integer arithmetic stop activity.
"""

from __future__ import annotations

from .. import ir


def active_vars(fn: ir.Function, wrt) -> set[str]:
    """Varied (depends on wrt) and useful (reaches the output) names, to a fixed point.

    Loops make both questions circular (a value can feed the next iteration), so each is
    iterated until nothing changes; every pass is linear in the program's size.
    """
    stmts = [s for s in ir.walk(fn.body) if isinstance(s, (ir.Call, ir.UserCall))]

    def flows(s):
        """(inputs that carry a derivative, outputs) of a statement."""
        if isinstance(s, ir.UserCall):
            return [v for a in s.args for v in ir.atom_vars(a)], list(s.targets)
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
    useful = set(ir.atom_vars(fn.ret.value))
    changed = True
    while changed:
        changed = False
        for ins, outs in reversed(edges):
            if any(o in useful for o in outs) and not set(ins) <= useful:
                useful.update(ins)
                changed = True
    return varied & useful


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
            elif isinstance(s, ir.Call) and s.op.name == "pop":
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
