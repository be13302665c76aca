"""Activity analysis: which values depend on `wrt` (varied) and reach the output (useful).

Input: an `ir.Function` and the names of the parameters to differentiate.
Output: the set of active variable names, varied and useful; only they get adjoints.
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
