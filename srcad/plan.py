"""The memory_budget planner: what the backward keeps and what it recomputes, chosen by
measuring candidate plans.

A layer above the pipeline: it builds each candidate with `srcad.pipeline.build` under other
choices (calls to recompute, loop schedules, elementwise recomputation) and measures its peak
(`srcad.checkpoint.measure_peak`, tracemalloc); nothing below it imports it. `srcad.api` asks
it for a plan when `memory_budget=` is given, then builds the plan it returns.

    plan = budget_plan(fn_ir, infos, signature, values, opts)   # opts: srcad.options.Options
    plan.loop_schedules   # {id(loop): (every, snapshots)}, e.g. {id(L6 loop): (None, 8)}
    plan.call_ids         # user calls recomputed in the backward
    plan.remat            # elementwise values recomputed from values the backward keeps
    build(fn_ir, infos, signature, plan.applied(opts))   # the program under the plan
"""

from __future__ import annotations

import copy
import math
import random
from dataclasses import dataclass, replace

import numpy as np

from . import ir
from .checkpoint import LoopCheckpoints, measure_peak, schedule_for
from .options import Options
from .pipeline import build
from .report import report
from .transform.checkpointing import stateful_call


@dataclass
class BudgetPlan:
    """What a memory_budget policy chose: calls to recompute and loops to checkpoint."""

    budget: int
    call_ids: frozenset = frozenset()
    loop_schedules: dict = None  # id(loop) -> (every, snapshots)
    choices: list = None  # [(what, line, note)] for explain and the generated header
    peak: int | None = None  # the measured peak of the chosen plan (bytes)
    fits: bool = True
    remat: bool = False  # elementwise values recomputed in the backward

    def applied(self, opts: Options) -> Options:
        """`opts` with this plan's choices: what the final build is made with."""
        return replace(opts, checkpoint_ids=frozenset(self.call_ids),
                       loop_schedules=dict(self.loop_schedules or {}), remat=self.remat,
                       plan=self)

    def describe(self) -> str:
        parts = [f"{what} (L{line}): {note}" for what, line, note in self.choices or []
                 if not note.startswith("elementwise")]
        again = [what for what, _, note in self.choices or [] if note.startswith("elementwise")]
        if again:
            parts.insert(0, f"recompute {', '.join(again)} in the backward")
        return "; ".join(parts) or "save everything"


def budget_plan(fn_ir, infos, signature, values, opts: Options) -> BudgetPlan:
    """Choose what the backward keeps so that one call's peak memory (forward, backward and
    the gradients it returns, as `measure_peak` counts it) stays within
    `opts.memory_budget` bytes, recomputing as little as possible. `opts.kind` says how the
    plan runs: a vjp's split pair, or the joint gradient (value_and_grad is measured as
    grad).

    Knowing the sizes only by running, the policy measures plans, cheapest first, and takes
    the first that fits:
    1. the program as written;
    2. elementwise values the backward reads computed again from values it keeps anyway
       (kept only if that lowers the peak; matmuls and reductions are never recomputed);
    3. every top-level `for` loop in sqrt(n) segments: nothing recomputed beyond the pass
       that records each segment again, which any loop schedule pays;
    4. binomial schedules with fewer states: peak memory is close to linear in the states
       kept, so plans keeping all n states and half of them fit a line that gives the
       largest fraction that fits; that plan is measured and moved down the line while it
       is over (never more than 4x fewer states a step, stopping where fewer states no
       longer lower the peak);
    5. calls to user functions recomputed as well, largest residuals first.
    When nothing fits, the caller warns with the least peak reached, and the plan is the one
    that recomputes least among those within 2% of that least peak -- or the program as
    written, if no plan beats it.
    """
    # every measuring run gets its own copy of a random generator the caller passed in, and
    # of the lists and dicts holding the arguments (the function may store into them: the
    # caller's own are written once, by the call itself)
    given = values

    def fresh(v):
        if isinstance(v, (np.random.Generator, np.random.RandomState)):
            return copy.deepcopy(v)
        if type(v) is list:
            return [fresh(item) for item in v]
        if type(v) is dict:
            return {k: fresh(item) for k, item in v.items()}
        return v

    def fresh_values():
        return [fresh(v) for v in given]

    budget = int(opts.memory_budget)
    kind = "vjp" if opts.kind == "vjp" else "grad"
    # candidates are measured as built here, without a plan of their own, and unfused: no
    # kernel build per candidate, and a fused program keeps no more temporaries than the
    # unfused one, so a plan that fits still fits
    base = replace(opts, kind=kind, single=opts.single if kind == "grad" else False, plan=None,
                   fuse=False, measuring=True)

    def variant(**choices) -> Options:
        return replace(base, **choices)

    remat = False  # recompute elementwise values in the backward (decided first)
    last: dict = {}
    trips: dict = {}  # id(loop) -> (loop, trip count), for the loops the policy may segment

    def run_plan(call_ids, scheds) -> int:
        """The measured peak of one call under this plan, as `kind` runs it."""
        for k, (every, snaps) in scheds.items():  # (made before measuring: they are cached)
            if k in trips:
                schedule_for(trips[k][1], every, snaps)
        c = build(fn_ir, infos, signature, variant(checkpoint_ids=frozenset(call_ids),
                                                  loop_schedules=dict(scheds), remat=remat))
        if kind == "vjp":
            def run():
                out, saved = c.functions["fwd"](*fresh_values())
                ct = np.ones_like(out) if np.ndim(out) else np.ones((), np.result_type(out))
                c.functions["bwd"](saved, ct)
        else:
            def run():
                c.functions["main"](*fresh_values())
        last["compiled"] = c
        # (numpy's and Python's global generators as they were: the real call draws from them)
        np_state, py_state = np.random.get_state(), random.getstate()
        try:
            return measure_peak(run)
        finally:
            np.random.set_state(np_state)
            random.setstate(py_state)

    plan = BudgetPlan(budget, frozenset(), {}, [])
    peak = run_plan(frozenset(), {})
    plan.peak = peak
    if peak <= budget:
        return plan
    remat = True
    p_remat = run_plan(frozenset(), {})
    again = list(dict.fromkeys(last["compiled"].rematerialised or []))  # (one per callee)
    if again and p_remat < 0.99 * peak:
        peak = plan.peak = p_remat
        plan.remat = True
        plan.choices = [(f"{name}", line, "elementwise, recomputed in the backward")
                        for name, line in again]
        if peak <= budget:
            return plan
    else:
        remat = False
    remat_choices = list(plan.choices)

    # loops that draw random numbers are not candidates: recomputing them would draw again
    loops = [s for s in fn_ir.body if isinstance(s, ir.For) and not s.exits
             and stateful_call(s.body) is None]
    if loops:
        # learn each loop's trip count from a run that keeps every state
        full = {id(s): (None, 1 << 40) for s in loops}
        c = build(fn_ir, infos, signature, variant(kind="vjp", single=False,
                                                  loop_schedules=full, remat=remat))
        _, saved = c.functions["fwd"](*fresh_values())
        named = dict(zip(c.saved, saved))
        for s in loops:
            obj = next((v for k, v in named.items()
                        if k.startswith(f"ckpt_L{s.line}") and isinstance(v, LoopCheckpoints)),
                       None)
            if obj is not None and obj.schedule is not None and obj.schedule.n >= 2:
                trips[id(s)] = (s, obj.schedule.n)
        del saved, named

    def at(frac):
        return {k: (None, max(1, min(n, math.ceil(frac * n)))) for k, (_, n) in trips.items()}

    def note(scheds):
        out = []
        for k, (_, c) in scheds.items():
            s, n = trips[k]
            if c is None:
                every = schedule_for(n).episodes[-1][3]  # (the first segment's length)
                out.append(("loop", s.line, f"keeps 1 in {every} of {n} loop states "
                            f"(sqrt(n) segments)"))
            else:
                out.append(("loop", s.line, f"keeps {c} of {n} loop states (binomial "
                            f"schedule, {schedule_for(n, snapshots=c).recomputed} steps "
                            f"recomputed)"))
        return out

    def recomputed(frac) -> int:  # steps run again: what a plan costs in time
        return sum(schedule_for(n, snapshots=c).recomputed
                   for (_, n), (_, c) in zip(trips.values(), at(frac).values()))

    best = None  # (peak, scheds) of the plan to fall back on when nothing fits
    if trips:
        # sqrt(n) segments first: they recompute nothing beyond the pass that records each
        # segment again (every loop schedule pays that), so when they fit nothing is cheaper
        sqrt_plan = {k: (None, None) for k in trips}
        p_sqrt = run_plan(frozenset(), sqrt_plan)
        if p_sqrt <= budget:
            plan.loop_schedules, plan.peak = sqrt_plan, p_sqrt
            plan.choices = remat_choices + note(sqrt_plan)
            return plan
        p1 = run_plan(frozenset(), at(1.0))
        p_half = run_plan(frozenset(), at(0.5))
        slope = max((p1 - p_half) / 0.5, 1.0)  # bytes per unit of fraction
        floor_frac = 1.0 / max(n for _, n in trips.values())
        frac = (budget - (p1 - slope)) / slope
        tried = {1.0: p1, 0.5: p_half}
        last_frac = 0.5
        for _ in range(8):
            # never more than 4x fewer states at a step: the line breaks down near the floor
            # (what no schedule saves: gradients, one step's values), where few states cost
            # much recomputation for little memory
            frac = min(1.0, max(floor_frac, frac, last_frac / 4))
            if frac not in tried:
                tried[frac] = run_plan(frozenset(), at(frac))
            p = tried[frac]
            if p <= budget or frac <= floor_frac:
                break
            if frac < last_frac and tried[last_frac] - p < 0.01 * tried[last_frac]:
                break  # the floor: fewer states no longer lower the peak
            last_frac = frac
            # down along the line, and by at least one state of the longest loop
            frac -= max((p - budget) / slope * 1.05, floor_frac)
        total = sum(n for _, n in trips.values())
        if not any(p <= budget for p in tried.values()) and floor_frac not in tried and \
                recomputed(floor_frac) <= 10 * total:
            # (the peak need not fall steadily with the states kept on short loops: where
            # it costs at most ten extra sweeps, measure the plan that keeps the fewest)
            tried[floor_frac] = run_plan(frozenset(), at(floor_frac))
        fitting = [f for f, p in tried.items() if p <= budget]
        if fitting:
            f = max(fitting)
            room = (budget - tried[f]) / slope
            if room > floor_frac and f < 1.0:  # space for more states: one step up
                up = min(1.0, f + room * 0.95)
                if up not in tried:
                    tried[up] = run_plan(frozenset(), at(up))
                if tried[up] <= budget:
                    f = up
            plan.loop_schedules, plan.peak = at(f), tried[f]
            plan.choices = remat_choices + note(plan.loop_schedules)
            return plan
        # nothing fits: of the plans within 2% of the least peak seen, the one that
        # recomputes least -- and none at all unless it beats the program as it is
        candidates = [(p_sqrt, 0, sqrt_plan)] + [(p, recomputed(f), at(f))
                                                  for f, p in tried.items()]
        least = min(p for p, _, _ in candidates)
        p, _, scheds = min((o for o in candidates if o[0] <= least * 1.02), key=lambda o: o[1])
        if p < 0.98 * peak:
            best = (p, scheds)

    # loops alone do not reach the budget: recompute calls to user functions as well
    scheds = best[1] if best else {}
    calls = [s for s in ir.walk(fn_ir.body) if isinstance(s, ir.UserCall)
             and stateful_call(s.callee.body, effects=True) is None]
    chosen: set = set()
    peak = best[0] if best else peak
    if calls:
        sizes = _residual_sizes(fn_ir, infos, signature, fresh_values(),
                                variant(kind="vjp", single=False, loop_schedules=dict(scheds)))
        for cid in sorted(sizes, key=sizes.get, reverse=True):
            if peak <= budget or sizes[cid] == 0:
                break
            chosen.add(cid)
            peak = run_plan(frozenset(chosen), scheds)
    plan.call_ids, plan.loop_schedules, plan.peak = frozenset(chosen), scheds, peak
    plan.choices = remat_choices + note(scheds) + [
        (s.callee.name + "(...)", s.line, "recomputed") for s in calls if id(s) in chosen]
    plan.fits = peak <= budget
    return plan


def _residual_sizes(fn_ir, infos, signature, values, opts: Options) -> dict:
    """Bytes each active call's residuals hold in the split forward (id(call) -> bytes)."""
    c = build(fn_ir, infos, signature, opts)
    _, saved = c.functions["fwd"](*values)
    env = dict(zip(fn_ir.params, values))
    rep = report(fn_ir, c.saved, saved, env)
    sizes: dict = {}
    for item in rep.items:
        for cid, name in (c.residuals or {}).items():
            if item.name in (name, f"stack_{name}"):
                sizes[cid] = sizes.get(cid, 0) + item.nbytes
    return sizes
