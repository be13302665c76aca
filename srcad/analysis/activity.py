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
    calls = [s for s in ir.walk(fn.body) if isinstance(s, ir.Call)]
    varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for s in calls:
            if s.target in varied:
                continue
            for p, a in s.args.items():
                if s.op.vjp(p) is not None and any(v in varied for v in ir.atom_vars(a)):
                    varied.add(s.target)
                    changed = True
                    break
    useful = set(ir.atom_vars(fn.ret.value))
    changed = True
    while changed:
        changed = False
        for s in reversed(calls):
            if s.target in useful:
                for p, a in s.args.items():
                    if s.op.vjp(p) is not None:
                        for v in ir.atom_vars(a):
                            if v not in useful:
                                useful.add(v)
                                changed = True
    return varied & useful
