"""Memory planning: compute in place where an operand's buffer dies (issue 14).

The pass after optimisation (under fuse=True: after lowering). Its parts: `facts` (liveness
over structured control flow, what a function owns, aliases, escapes, C-contiguity,
elementwise expression trees), `rewrite` (planning one statement, sinking fresh values to
their first reader), `kernels` (a fused kernel's result into a dying operand, with out=)
and `peak` (the planned peak memory of one call, for `srcad.explain`); this module runs them
over a program.

Input: optimised `GFunction`s (copies propagated, dead code gone, ``del`` after last uses)
and the static `Info` (shape, dtype) of their names. Output: the same functions, where an
elementwise statement whose result has the shape, dtype and memory order of an operand that
dies there -- and that the generated code owns -- computes into that operand's buffer:

    dh_add = dh * (1 - h * h)  # L8            # planned: dh_add = dh * (1 - h * h)
    del dh, h  # L8                    ->      h *= h  # L8
                                               np.subtract(1, h, out=h)  # L8
                                               dh_add = np.multiply(dh, h, out=dh)  # L8
                                               del dh, h  # L8

The same ufuncs run on the same operands in the same order, so every value is bit for bit
the unplanned one; numpy's out-of-place result of an elementwise op with a C-contiguous
operand of the result's shape is C-contiguous, and only such (known C-contiguous) buffers are
reused, so the memory order of every result is unchanged too (later sums add in one order).

What "owned" means (the analysis is per function, flow-insensitive where that is safe):
  * every definition of the name is an assignment of an expression that certainly makes a
    new array (an arithmetic operator, a ufunc, a matmul, a reduction, srcad's fresh
    helpers), or an augmented assignment to it; never a parameter, a tuple unpack, a pop;
  * no name that may alias it (made from it by anything else: a view, a subscript, a call)
    escapes: is returned, pushed on a stack, stored into a container or written by `out=`;
  * it dies there: neither it nor any of its possible aliases is live after the statement
    (liveness over loops, branches, break and continue);
  * no other operand of the statement is one of its aliases (an `out=` overlapping an
    input through a view is never planned), and every read of it in the statement is
    inside the subexpression that overwrites it.
A subroutine's parameter (a split pair's backward, a forward) is the caller's, except for
a cotangent every caller passes as an owned value that dies at the call (`donated`). A call
of a subroutine whose every return hands back distinct names it owns and keeps nowhere else
(`facts.results_fresh`: a split pair's backward, typically) defines new arrays, not aliases
of its arguments.
"""

from __future__ import annotations

import ast

from ..gcode import GFunction, names_written, nodes
from .facts import _Facts, _Liveness, results_fresh
from .rewrite import Stats, _rewrite, sink
from .slots import Aliases, owners, plan_slots

__all__ = ["Stats", "_Liveness", "donations", "plan", "plan_function", "plan_program", "sink"]

# -- the pass ----------------------------------------------------------------------------------


def plan_function(f: GFunction, infos: dict, helpers: dict | None = None,
                  donated=frozenset(), stats: Stats | None = None, c_params=(),
                  kernels=None, fresh_calls=frozenset(), foreign=frozenset(),
                  handed=frozenset()) -> Stats:
    """Plan one function in place (see the module docstring); `kernels`: the fused
    kernels its calls name (kernel name -> srcad.lower.kir.Kernel, `memplan.kernels`);
    `foreign`: the names of the user's objects and functions the code calls (`_Facts`);
    `handed`: parameters every caller gives up (`donations(slots=True)`), for slot writes."""
    stats = stats if stats is not None else Stats()
    live = _Liveness(f.body)
    if not live.ok:
        return stats
    facts = _Facts(f, infos, helpers or {}, donated, c_params, kernels, fresh_calls, foreign)
    stats.sunk += sink(f, facts)
    live = _Liveness(f.body)
    f.body = _rewrite(f.body, facts, live, stats)
    # (slot writes on the planned lines: their own facts, `out=` buffers among the kept)
    plan_slots(f, _Facts(f, infos, helpers or {}, donated, c_params, kernels, fresh_calls,
                         foreign), _Liveness(f.body), stats, handed)
    return stats


def plan_program(functions: list, infos_of: dict, helpers: dict,
                 c_params: dict | None = None, kernels=None, foreign=frozenset()) -> Stats:
    """Plan every function with its own Infos (`infos_of`: id(function) -> infos); a function
    without (a callee whose names the probe did not see) is left as it is. `c_params`:
    id(function) -> its parameters known C-contiguous."""
    stats = Stats()
    c_params = c_params or {}
    # subroutines whose results are all new arrays (callees come first in `functions`)
    fresh_calls: set = set()
    for f in functions:
        infos = infos_of.get(id(f))
        if infos is not None and results_fresh(
                f, _Facts(f, infos, helpers, (), (), kernels, frozenset(fresh_calls),
                          foreign)):
            fresh_calls.add(f.name)
    fresh_calls = frozenset(fresh_calls)
    donated = donations(functions, infos_of, helpers, c_params, kernels, fresh_calls,
                        foreign)
    # (a slot write needs no C order: a caller's own buffer of any layout may be given)
    handed = donations(functions, infos_of, helpers, c_params, kernels, fresh_calls, foreign,
                       slots=True)
    for f in functions:
        infos = infos_of.get(id(f))
        if infos is None:
            continue
        if donated.get(f.name):
            stats.donated[f.name] = sorted(donated[f.name])
        plan_function(f, infos, helpers, frozenset(donated.get(f.name, ())), stats,
                      c_params.get(id(f), ()), kernels, fresh_calls, foreign,
                      frozenset(handed.get(f.name, ())))
    return stats


def donations(functions: list, infos_of: dict, helpers: dict, c_params: dict,
              kernels=None, fresh_calls=frozenset(), foreign=frozenset(),
              slots: bool = False) -> dict:
    """Parameters every caller hands over: at each call of the function (and it is only ever
    called directly), the argument is a name the caller owns, C-contiguous, that dies at the
    call with all its aliases. The callee may then overwrite it. With `slots`: a name whose
    buffer the caller's own code alone refers to (`slots.owners`: handed over by moves and
    `out=` too), of any memory order -- what a slot write in place needs."""
    by_name = {f.name: f for f in functions}
    sites: dict[str, list] = {n: [] for n in by_name}
    bad: set[str] = set()
    for caller in functions:
        infos = infos_of.get(id(caller))
        facts = _Facts(caller, infos or {}, helpers, (), c_params.get(id(caller), ()),
                       kernels, fresh_calls, foreign) if infos is not None else None
        live = _Liveness(caller.body)
        around = Aliases(facts) if slots and facts is not None else None
        own = _own_test(facts, live, around) if around is not None else \
            facts.reusable if facts is not None else None
        for top in caller.body:
            for ln in top.walk():
                if ln.node is None:
                    continue
                calls = {id(n.func) for n in nodes(ln.node) if isinstance(n, ast.Call)}
                for n in nodes(ln.node):  # (order-free: sets, and an all-calls test)
                    if isinstance(n, ast.Name) and n.id in by_name and id(n) not in calls:
                        bad.add(n.id)  # (referred to as a value: unknown callers)
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                            n.func.id in by_name:
                        sites[n.func.id].append((n, facts, live.after.get(id(ln)),
                                                 live.ok and not ln.compound,
                                                 names_written(ln.node) if slots else (),
                                                 around, own))
    out: dict[str, set] = {}
    for fname, calls in sites.items():
        f = by_name[fname]
        if fname in bad or not calls or infos_of.get(id(f)) is None:
            continue
        given = set()
        for k, p in enumerate(f.params):
            ok = True
            for call, facts, after, simple, results, around, own in calls:
                arg = call.args[k] if k < len(call.args) and not call.keywords else None
                if not (simple and facts is not None and isinstance(arg, ast.Name)
                        and after is not None and own(arg.id)
                        and not ((around.of(arg.id, results) if around is not None
                                  else facts.closure(arg.id)) & after)
                        and sum(isinstance(a, ast.Name) and a.id == arg.id
                                for a in call.args) == 1):
                    ok = False
                    break
                mine, theirs = infos_of[id(f)].get(p), facts.infos.get(arg.id)
                if mine is None or theirs is None or tuple(mine.shape) != tuple(theirs.shape) \
                        or mine.dtype != theirs.dtype:
                    ok = False
                    break
            if ok:
                given.add(p)
        if given:
            out[fname] = given
    return out


def plan(program, kind: str = "grad") -> Stats:
    """The pass as the pipeline runs it (`srcad.pipeline.Program`): each split pair with its
    own Infos, the functions the roles name with the program's. The user-facing function's
    arguments are C-contiguous where the probe saw them so (the cache key holds the memory
    order); a callee's, or a pullback's cotangent, are not known. Under fuse=True it runs
    after lowering (the functions are the lowered copies: Infos go by name) and plans the
    kernels' calls too (`memplan.kernels`)."""
    by_name = {}
    for fwd, bwd, _, _, infos in program.pairs:
        by_name[fwd.name] = by_name[bwd.name] = infos
    infos_of = {id(f): by_name[f.name] for f in program.functions if f.name in by_name}
    entry = {program.roles.get("fwd")} | (
        {program.roles.get("main")} if kind in ("grad", "value_and_grad") else set())
    c_params = {}
    for f in program.functions:
        if f.name in program.roles.values():
            infos_of.setdefault(id(f), program.infos)
        if f.name in entry:
            infos = infos_of[id(f)]
            c_params[id(f)] = {p for p in f.params if (i := infos.get(p)) is not None
                               and i.ndim > 0 and i.dtype is not None and i.c_order}
    lowered = getattr(program, "kernels", None)
    kernels = {k.name: k for k in lowered.kernels} if lowered is not None else None
    # (the user's functions and objects the code calls: what they are given may be kept)
    foreign = frozenset(program.inject) - set(program.helpers)
    program.memory = plan_program(program.functions, infos_of, program.helpers, c_params,
                                  kernels, foreign)
    return program.memory


def _own_test(facts: _Facts, live: _Liveness, around: Aliases):
    """`reusable` for slot writes: the function's own buffer, none of its aliases kept."""
    mine = owners(facts, live, around) if live.ok else set()
    return lambda n: n in mine and not (around.of(n) & facts.kept)
