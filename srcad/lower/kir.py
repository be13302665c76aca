"""The kernel IR: one fused chain, as the C generator and the Python rewrite see it.

A `Kernel` is a straight-line list of `Stmt`s in SSA form over one iteration shape. Each
statement applies one op-table row to operands (`Ref`s): a kernel argument, an earlier
statement, or a constant. Arguments are the values the call site passes (Python names);
outputs are the statements whose values Python reads afterwards, or that write into an
argument's array in place (``dx += ...``).

    t = a * b + c          Stmt t_multiply = multiply(arg a, arg b)
    d = np.maximum(t, 0)   Stmt t = add(stmt 0, arg c); Stmt d = maximum(stmt 1, const 0)
                           outputs: d (and t, if Python reads it later)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .match import C_TYPES, VT, Typed

_C_KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
    "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool", "bool", "true",
    "false", "NULL", "main", "i", "n", "p", "loops", "tmp", "fabs", "sqrt", "isnan",
    "floor", "ceil", "fmod", "copysign", "rint", "trunc", "isfinite", "isinf",
}


@dataclass(frozen=True)
class Ref:
    kind: str  # "arg" | "stmt" | "const"
    index: int = -1
    value: object = None


@dataclass
class Arg:
    name: str  # the Python name the call passes
    vt: VT
    cname: str
    number_ok: bool = True  # a 0-d argument: a Python number is fine too (every use agrees)
    row: bool = False  # a row kernel's argument of one value per row (last axis 1)

    @property
    def kind(self) -> str:
        """"array" (an ndarray broadcast into the kernel's shape), "scalar" (0-d, strong),
        "number" (a Python number, weak)."""
        if self.vt.kind == "array":
            return "array" if self.vt.ndim else "scalar"
        return "number"

    @property
    def dtype(self) -> np.dtype:
        return self.vt.dtype if self.vt.kind == "array" else np.dtype(np.float64)


@dataclass
class Stmt:
    target: str  # the Python name it binds, or a made-up name for a nested op
    cname: str
    op: object
    operands: dict  # param -> Ref
    typed: Typed
    dtype: np.dtype  # the value's dtype (an in-place statement: its target's)
    line: int | None
    text: str  # the Python expression, for comments
    inout: int = -1  # an argument whose array this statement writes (``x += ...``)
    row: bool = False  # a row kernel's value of one per row (its shape: last axis 1)

    @property
    def reduce(self) -> str | None:
        """"sum" / "mean" / "max" / "min": the statement reduces a row to its one value."""
        return self.typed.row if self.typed.row in ("sum", "mean", "max", "min") else None

    @property
    def ctype(self) -> str:
        return C_TYPES[self.dtype]

    @property
    def inline(self) -> bool:
        return self.typed.loop is None


@dataclass
class Out:
    stmt: int
    name: str
    inout: int = -1


@dataclass
class Kernel:
    name: str
    args: list[Arg]
    stmts: list[Stmt]
    outs: list[Out]
    shape: tuple  # the shape it was planned for (the C takes any shape of this rank)
    where: str  # "file.py:func L12-L14"
    lines: list[int]
    replaced: list = field(default_factory=list)  # (user line, Python statement text)
    fallback: str = ""  # the Python source of the same computation
    # a row kernel (a chain with a last-axis reduction or a broadcast back: `shape` is its
    # full shape, its row values have last axis 1; the runtime walks it one row at a time)
    rowwise: bool = False
    block_class: type | None = None  # its block function's C generator (None: cgen._Block)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def n_ops(self) -> int:
        return len(self.stmts)

    def uses(self) -> dict[int, list]:
        """Statement index -> [(consumer statement, parameter)] for every statement whose
        value another statement of the kernel reads."""
        out: dict[int, list] = {}
        for q, s in enumerate(self.stmts):
            for p, ref in s.operands.items():
                if ref.kind == "stmt":
                    out.setdefault(ref.index, []).append((q, p))
        return out

    def op_names(self) -> list[str]:
        seen = []
        for s in self.stmts:
            if s.op.name not in seen:
                seen.append(s.op.name)
        return seen


def c_identifier(name: str, used: set) -> str:
    """A C identifier for a Python name: unchanged where C allows it, never a keyword or
    one of the generated code's own names, unique in `used` (a numeric suffix)."""
    base = re.sub(r"[^A-Za-z0-9_]", lambda m: f"u{ord(m.group(0)):x}", name)
    if not base or base[0].isdigit():
        base = "v_" + base
    if base in _C_KEYWORDS or base.startswith(("in_", "out_", "tmp_", "srcad_", "__")):
        base = base + "_"
    cand, k = base, 2
    while cand in used:
        cand = f"{base}_{k}"
        k += 1
    used.add(cand)
    return cand
