"""One value for how a transform is built: `Options`.

Made once, in the public API, from the user's keywords (`Options.of`, which validates them),
then passed explicitly to every stage that needs it (`srcad.pipeline.build` and the
transforms through their `Module`); no stage configures another by setting attributes. The
memory-budget planner (srcad/plan.py) and higher order vary it with `dataclasses.replace`.

    >>> Options.of("grad", ("W", "b"), single=False, mode="tape")
    Options(kind='grad', wrt=('W', 'b'), single=False, mode='tape', fuse=None, ...)

`fuse`: True (fuse from a specialisation's first call), False (never), or omitted (None,
also spelled "auto"): tiered -- a specialisation runs unfused, and on its `fuse_after()`-th
call (3 unless the environment's SRCAD_FUSE says otherwise) it is lowered to C kernels and
built, where a C compiler works (srcad/transformed.py `Transformed.compiled`). Each build
gets a plain bool (`Transformed.build_options`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields

from .errors import SrcadError

# the user's keywords on grad / value_and_grad / vjp / jvp, with their defaults (DESIGN.md);
# fuse=None is the automatic default (see the module docstring)
USER_OPTIONS = {"fuse": None, "mode": "source", "memory_budget": None, "memory_plan": True}
KINDS = ("grad", "value_and_grad", "vjp", "jvp")
FUSE_AFTER = 3  # the default: a specialisation is fused on its third call (REPORT.md)


def fuse_after() -> int:
    """On which call of a specialisation an omitted `fuse` fuses it: SRCAD_FUSE = "auto"
    (or unset: `FUSE_AFTER`), "0" / "off" (never), "1" / "on" (from the first call, as
    fuse=True), or a number N (on the Nth call). An explicit fuse= keyword overrides it."""
    raw = os.environ.get("SRCAD_FUSE", "").strip().lower()
    if raw in ("", "auto"):
        return FUSE_AFTER
    if raw in ("off", "false", "no", "never"):
        return 0
    if raw in ("on", "true", "yes", "always"):
        return 1
    if raw.isdigit():
        return int(raw)
    raise SrcadError(f"SRCAD_FUSE={raw!r} is not understood",
                     hint="set SRCAD_FUSE to auto (fuse a specialisation on its third call), "
                     "0 (never fuse), 1 (fuse from the first call) or a number N (on the Nth "
                     "call); fuse=True / fuse=False on the transform override it")


@dataclass(frozen=True)
class Options:
    """How one transform of one function is built."""

    # what is built
    kind: str = "grad"  # "grad" | "value_and_grad" | "vjp" (a _fwd/_bwd pair) | "jvp"
    wrt: tuple = ()  # names of the parameters differentiated (vjp/jvp: the float primals)
    single: bool = True  # grad returns one gradient (wrt was not a tuple)
    # the user's keywords
    mode: str = "source"  # "source" (generated code) or "tape" (the eager reference)
    fuse: bool | None = None  # lower elementwise chains to C kernels (the pipeline's lower
    #                     stage; a fused build also recomputes elementwise values in the
    #                     backward). None: automatic, tiered (the module docstring); a build's
    #                     own options always hold a bool
    memory_budget: float | None = None  # bytes: the planner chooses what to recompute
    memory_plan: bool = True  # compute in place where an owned buffer dies (srcad/memplan/)
    # the memory-budget planner's choices (srcad/plan.py); none by default
    checkpoint_ids: frozenset = frozenset()  # id(ir.UserCall)s recomputed in the backward
    loop_schedules: dict = field(default_factory=dict)  # id(ir.For) -> (every, snapshots)
    remat: bool = False  # elementwise values recomputed in the backward from kept ones
    #                      (the planner's choice, or fuse=True's: inside a kernel it costs
    #                      arithmetic, not memory traffic)
    plan: object = None  # the srcad.plan.BudgetPlan these came from (for the header)
    # higher order: the generated code will be parsed and transformed again, so it keeps
    # no srcad.checkpoint(range(...)) loops and writes no in-place statements
    reparsed: bool = False
    # a memory-budget candidate measured on the caller's arguments (srcad/plan.py): it makes
    # no effects (a print, `self.attr = v`, a store into the caller's dict) -- the real call
    # makes them, once
    measuring: bool = False

    @classmethod
    def of(cls, kind: str, wrt=(), *, single: bool = True, **user) -> "Options":
        """Validate the user's keywords (`USER_OPTIONS`) and make the value."""
        unknown = set(user) - set(USER_OPTIONS)
        if unknown:
            raise SrcadError(
                f"unknown option(s) {', '.join(sorted(unknown))}",
                hint=f"srcad's options are {', '.join(sorted(USER_OPTIONS))}",
            )
        opts = {**USER_OPTIONS, **user}
        if kind not in KINDS:
            raise SrcadError(f"internal: unknown transform kind {kind!r}")
        if opts["mode"] not in ("source", "tape"):
            raise SrcadError(f"mode must be 'source' or 'tape', got {opts['mode']!r}")
        if isinstance(opts["fuse"], str) and opts["fuse"] == "auto":
            opts["fuse"] = None
        if opts["fuse"] is not None and not isinstance(opts["fuse"], bool):
            raise SrcadError(f"fuse must be True, False or omitted (automatic), got "
                             f"{opts['fuse']!r}")
        budget = opts["memory_budget"]
        if budget is not None and (isinstance(budget, bool)
                                   or not isinstance(budget, (int, float)) or budget < 0):
            raise SrcadError(f"memory_budget must be a number of bytes, got {budget!r}")
        if not isinstance(opts["memory_plan"], bool):
            raise SrcadError(f"memory_plan must be True or False, got {opts['memory_plan']!r}")
        return cls(kind=kind, wrt=tuple(wrt), single=single, fuse=opts["fuse"],
                   mode=opts["mode"], memory_budget=budget, memory_plan=opts["memory_plan"])

    def user(self) -> dict:
        """The user's keywords that differ from their defaults (to make another transform
        of the same function with the same options)."""
        return {k: getattr(self, k) for k in USER_OPTIONS if getattr(self, k) != USER_OPTIONS[k]}

    @property
    def checkpoint_loops(self) -> bool:
        """Honour `for l in srcad.checkpoint(range(n))` markers (not in code parsed again)."""
        return not self.reparsed

    def describe(self) -> str:
        """The options line of a generated file's header."""
        budget = ("none" if self.memory_budget is None
                  else f"memory_budget={self.memory_budget}")
        policy = f" (the policy: {self.plan.describe()})" if self.plan is not None else ""
        return (f"{self.kind} wrt=({', '.join(self.wrt)}) mode={self.mode} "
                f"fuse={bool(self.fuse)} checkpoint={budget}{policy}"
                + ("" if self.memory_plan else " memory_plan=off"))


FIELDS = tuple(f.name for f in fields(Options))
