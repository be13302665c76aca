"""Activity analysis: which values depend on `wrt` (varied) and reach the output (useful).

Input: an `ir.Function` and the names of the parameters to differentiate.
Output: the set of active variable names, varied and useful; only they get adjoints.
An op argument carries dependence only through a parameter that has a VJP rule, so
`x.shape`, comparisons and integer arithmetic stop activity.
"""

from __future__ import annotations

from .. import ir


def active_vars(fn: ir.Function, wrt) -> set[str]:
    varied = set(wrt)
    calls = [s for s in fn.body if isinstance(s, ir.Call)]
    for s in calls:
        for p, a in s.args.items():
            if s.op.vjp(p) is not None and any(v in varied for v in ir.atom_vars(a)):
                varied.add(s.target)
                break
    useful = set(ir.atom_vars(fn.ret.value))
    for s in reversed(calls):
        if s.target in useful:
            for p, a in s.args.items():
                if s.op.vjp(p) is not None:
                    useful.update(ir.atom_vars(a))
    return varied & useful
