"""What the functions of one generated module share (`Module`), and the subroutine pair a
call to a user function gets (`Pair`).

    module = Module(infos, options)       # one per build (srcad/pipeline.py)
    Reverse(fn_ir, wrt, None, module)     # every transform of that build reads it
    module.pairs[(id(callee), wrt, live, read)]  # -> Pair(fwd=block_fwd, bwd=block_bwd, ...)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .. import ir
from ..gcode import GFunction
from ..naming import fresh
from ..options import Options


@dataclass
class Generated:
    functions: list  # list[GFunction]
    saved: list  # names the split backward reads from the forward
    inject: dict


@dataclass
class Pair:
    """A user function's generated subroutines, made once per (function, wrt, outputs the
    caller differentiates, outputs it reads) in a module (see calls.py)."""

    fwd: GFunction
    bwd: GFunction
    ret: ast.expr  # what the forward returns besides its saved values
    rev: object  # the callee's Reverse transform (srcad/transform/reverse.py)


class Module:
    """What the functions of one generated module share: the probe's findings, the options
    they are built with, names, and the subroutines made for calls (`_fwd`/`_bwd` pairs for
    reverse mode, `_jvp` functions for forward mode)."""

    def __init__(self, infos_by_fn: dict | None, options=None):
        self.infos_by_fn = infos_by_fn or {}
        # names that held a list or tuple on the first call (see specialise.Infos)
        self.containers_by_fn = getattr(infos_by_fn, "containers", {})
        self.entry_by_fn = getattr(infos_by_fn, "entry", {})  # parameters' Info at entry
        self.arrays0d_by_fn = getattr(infos_by_fn, "arrays0d", {})  # (0-d arrays, not numbers)
        self.numbers_by_fn = getattr(infos_by_fn, "numbers", {})  # (numbers every time)
        self.sites_by_fn = getattr(infos_by_fn, "sites", {})  # (kinds made, per statement)
        self.options = options if options is not None else Options()
        self.names: set[str] = set()
        self.pairs: dict[tuple, Pair] = {}
        self.jvp_functions: dict = {}  # (id(callee), wrt) -> (GFunction, Forward)

    def reserve_helpers(self, fn_ir: ir.Function) -> None:
        """A generated function never takes the name of a helper its rules call: `cumsum_grad`
        of a user function called `cumsum` is not runtime.cumsum_grad, which np.cumsum's rule
        reads in the same module."""
        for s in ir.walk_program(fn_ir):
            if isinstance(s, ir.Call):
                for rule in (*s.op.vjps, *s.op.jvps):
                    if rule is not None:
                        self.names.update(n.id for n in ast.walk(rule.expr)
                                          if isinstance(n, ast.Name))

    def function_name(self, base: str) -> str:
        return fresh(base, self.names)
