"""One value for how a transform is built: `Options`.

Made once, in the public API, from the user's keywords (`Options.of`, which validates them),
then passed explicitly to every stage that needs it (`srcad.pipeline.build` and the
transforms through their `Module`); no stage configures another by setting attributes. The
memory-budget planner (srcad/plan.py) and higher order vary it with `dataclasses.replace`.

    >>> Options.of("grad", ("W", "b"), single=False, mode="tape")
    Options(kind='grad', wrt=('W', 'b'), single=False, mode='tape', fuse=False, ...)
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from .errors import SrcadError

# the user's keywords on grad / value_and_grad / vjp / jvp, with their defaults (DESIGN.md)
USER_OPTIONS = {"fuse": False, "mode": "source", "memory_budget": None, "memory_plan": True}
KINDS = ("grad", "value_and_grad", "vjp", "jvp")


@dataclass(frozen=True)
class Options:
    """How one transform of one function is built."""

    # what is built
    kind: str = "grad"  # "grad" | "value_and_grad" | "vjp" (a _fwd/_bwd pair) | "jvp"
    wrt: tuple = ()  # names of the parameters differentiated (vjp/jvp: the float primals)
    single: bool = True  # grad returns one gradient (wrt was not a tuple)
    # the user's keywords
    mode: str = "source"  # "source" (generated code) or "tape" (the eager reference)
    fuse: bool = False  # lower elementwise chains to C kernels (the pipeline's lower stage;
    #                     a fused build also recomputes elementwise values in the backward)
    memory_budget: float | None = None  # bytes: the planner chooses what to recompute
    memory_plan: bool = True  # compute in place where an owned buffer dies (srcad/memplan.py)
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
        if not isinstance(opts["fuse"], bool):
            raise SrcadError(f"fuse must be True or False, got {opts['fuse']!r}")
        budget = opts["memory_budget"]
        if budget is not None and (isinstance(budget, bool)
                                   or not isinstance(budget, (int, float)) or budget < 0):
            raise SrcadError(f"memory_budget must be a number of bytes, got {budget!r}")
        if not isinstance(opts["memory_plan"], bool):
            raise SrcadError(f"memory_plan must be True or False, got {opts['memory_plan']!r}")
        return cls(kind=kind, wrt=tuple(wrt), single=single, fuse=bool(opts["fuse"]),
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
        return (f"{self.kind} wrt=({', '.join(self.wrt)}) mode={self.mode} fuse={self.fuse} "
                f"checkpoint={budget}{policy}" + ("" if self.memory_plan else " memory_plan=off"))


FIELDS = tuple(f.name for f in fields(Options))
