"""`srcad.explain`: every value the backward keeps, its size and where it was made.

This is jax's `print_saved_residuals` for srcad (jax/_src/ad_checkpoint.py): the split
forward (`<f>_fwd`) is run on the given arguments and each value it hands to the backward is
reported -- name, shape, dtype, bytes, the user's line that made it -- including what sits on
loop stacks and in the residuals of called user functions. Arguments are listed too but
cost nothing extra: the backward holds a reference, not a copy.

Below the table, the planned peak of one `srcad.grad` call (forward, backward and the
returned gradients, above the arguments), walked over the planned generated code from the
static shapes (srcad/memplan/peak.py), and how many statements the memory plan computed in
place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import ir
from .runtime import LoopCheckpoints, Stack


@dataclass
class Saved:
    name: str
    shape: tuple | None
    dtype: str | None
    nbytes: int
    origin: str  # "file:line" or "argument"
    kind: str  # "saved", "stack (n items)", "argument", "residuals of g"
    status: str = "saved"  # or "recomputed" (checkpointing)

    def row(self) -> str:
        shape = "" if self.shape is None else str(self.shape)
        return (f"{self.name:<24} {shape:<16} {self.dtype or '':<8} {self.nbytes:>12,} "
                f"{self.status:<10} {self.kind:<18} {self.origin}")


@dataclass
class Report:
    function: str
    items: list = field(default_factory=list)
    planned_peak: int | None = None  # bytes of one grad call above its arguments (None: unknown)
    in_place: int | None = None  # statements the memory plan computed in place (None: plan off)
    in_place_bytes: int = 0  # bytes those statements did not allocate

    @property
    def total_bytes(self) -> int:
        """Bytes the backward keeps beyond the arguments, each buffer counted once."""
        return sum(i.nbytes for i in self.items if i.kind != "argument")

    def __str__(self) -> str:
        head = (f"{'name':<24} {'shape':<16} {'dtype':<8} {'bytes':>12} {'status':<10} "
                f"{'kind':<18} made at")
        lines = [f"values the backward of {self.function} keeps:", head]
        lines += [i.row() for i in self.items]
        lines.append(f"total (excluding arguments): {self.total_bytes:,} bytes")
        if self.planned_peak is not None:
            lines.append(f"planned peak of one grad call (forward, backward, gradients; "
                         f"excluding arguments): {self.planned_peak:,} bytes")
        lines.append("memory plan: off" if self.in_place is None else
                     f"memory plan: {self.in_place} statements in place "
                     f"({self.in_place_bytes:,} bytes not allocated)")
        return "\n".join(lines)


def _leaves(value, seen: set):
    """(nbytes, shape, dtype, count) of the array buffers inside a value, each counted once."""
    if isinstance(value, Stack):
        value = list(value._items)
    if isinstance(value, LoopCheckpoints):
        value = value.kept_states()
    if isinstance(value, (list, tuple)):
        total = 0
        for v in value:
            total += _leaves(v, seen)[0]
        return total, None, None, len(value)
    if isinstance(value, dict):
        return _leaves(list(value.values()), seen)
    if isinstance(value, np.ndarray):
        base = value if value.base is None else value.base
        if id(base) in seen:
            return 0, value.shape, str(value.dtype), 1
        seen.add(id(base))
        return int(base.nbytes if isinstance(base, np.ndarray) else value.nbytes), \
            value.shape, str(value.dtype), 1
    if isinstance(value, np.generic):
        return value.nbytes, (), str(value.dtype), 1
    return 0, None, type(value).__name__, 1


def _origins(fn_ir: ir.Function) -> dict[str, int]:
    lines = {}
    for s in ir.walk(fn_ir.body):
        for d in ir.defs(s):
            lines.setdefault(d, s.line)
    return lines


def report(fn_ir: ir.Function, saved_names: list[str], saved_values, args: dict) -> Report:
    rep = Report(fn_ir.name)
    lines = _origins(fn_ir)
    seen: set = set()
    # arguments first, so that saved values that are arguments are not counted twice
    for p, v in args.items():
        _leaves(v, seen)
    for name, value in zip(saved_names, saved_values):
        is_arg = any(value is v for v in args.values())
        where = "argument" if is_arg else f"{fn_ir.filename}:{lines.get(name, '?')}"
        if is_arg:
            nbytes, shape, dtype, _ = _leaves(value, set())
            rep.items.append(Saved(name, shape, dtype, nbytes, where, "argument"))
            continue
        nbytes, shape, dtype, count = _leaves(value, seen)
        if isinstance(value, Stack):
            first = value._items[-1] if len(value) else None
            shape = getattr(first, "shape", None)
            dtype = str(getattr(first, "dtype", "")) or None
            kind = f"stack ({count} items)"
            target = name[len("stack_"):] if name.startswith("stack_") else name
            where = f"{fn_ir.filename}:{lines.get(target, '?')}"
        elif isinstance(value, LoopCheckpoints):
            first = value.kept_states()[0] if count else None
            first = first[0] if isinstance(first, tuple) and first else first
            shape = getattr(first, "shape", None)
            dtype = str(getattr(first, "dtype", "")) or None
            sched = value.schedule
            most = f", at most {sched.snapshots}" if sched is not None else ""
            kind = f"loop states ({count} kept{most})"
            where = f"{fn_ir.filename}:{name.rsplit('_L', 1)[-1].split('_')[0]}"
        elif name.endswith("_saved") and isinstance(value, tuple):
            kind = "residuals of a call"
        else:
            kind = "saved"
        rep.items.append(Saved(name, shape, dtype, nbytes, where, kind))
    return rep
