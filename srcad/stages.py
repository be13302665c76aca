"""See each stage: the program after normalisation, activity analysis, the transform,
optimisation, lowering, or the final source (`python -m srcad show FILE:FUNC --stage S`).

The IR (srcad/ir.py) prints as Python-like text: one op per line, spelled as generated code
spells it, with the user's line; the activity stage marks the values that get adjoints.
The later stages print the generated functions (srcad/gcode.py) as codegen renders them.

    $ python -m srcad show examples/mlp.py:loss --wrt W,b --stage activity
    def loss(W, b, x, y):
        h_matmul = x @ W        # L10  active
        ...
"""

from __future__ import annotations

import ast

from . import ir
from .analysis.activity import active_vars
from .binding import _describe, _is_differentiable
from .codegen import render_function
from .errors import SrcadError
from .pipeline import build
from .probe import probe
from .transform.templates import atom_expr, forward_expr, range_expr
from .transformed import Transformed

STAGES = ("normalize", "activity", "reverse", "forward", "optimize", "lower", "final")


def stage_text(t: Transformed, stage: str, values=None) -> str:
    """The program of `t` (a srcad.grad / value_and_grad / vjp / jvp) after `stage`,
    specialised to `values` when given (else generic: shapes unknown)."""
    if stage not in STAGES:
        raise SrcadError(f"unknown stage {stage!r}", hint=f"the stages are {', '.join(STAGES)}")
    env = dict(zip(t.params, values)) if values is not None else None
    wrt = list(t.wrt) if t.kind not in ("vjp", "jvp") else [
        p for p in t.params if env is None or _is_differentiable(env[p])]
    if stage == "normalize":
        return ir_text(t._ir)
    if stage == "activity":
        return ir_text(t._ir, active=active_vars(t._ir, wrt))
    if (stage == "forward") != (t.kind == "jvp"):
        raise SrcadError(f"a {t.kind} has no {stage!r} stage",
                         hint="the transform stage is 'forward' for jvp, 'reverse' otherwise")
    infos, signature = None, "generic (no call yet: shapes unknown)"
    if env is not None:
        infos, _ = probe(t._ir, env, wrt)
        signature = ", ".join(f"{p}: {_describe(env[p])}" for p in t.params)
    seen: dict = {}

    def dump(name, value):  # (printed as it is now: later stages rewrite the functions)
        seen[name] = value if isinstance(value, str) else "\n\n".join(
            "\n".join(render_function(f)) for f in value) + "\n"

    build(t._ir, infos, signature, t.build_options(wrt, infos, signature, values), dump=dump)
    return seen[stage]


# -- the IR as text ---------------------------------------------------------------------------


def ir_text(fn: ir.Function, active: set | None = None) -> str:
    """`fn`'s IR as Python-like text, its callees first; with `active`, each statement
    whose result gets an adjoint says so."""
    out, seen = [], set()

    def function(f: ir.Function, act):
        for s in ir.walk(f.body):
            if isinstance(s, ir.UserCall) and id(s.callee) not in seen:
                seen.add(id(s.callee))
                function(s.callee, None)
        out.append(f"def {f.name}({', '.join(f.params)}):")
        if act is not None:
            out.append(f"    # active (get adjoints): {', '.join(sorted(act)) or 'nothing'}")
        _block(f.body, "    ", out, act)
        out.append("")

    function(fn, active)
    return "\n".join(out)


def _block(body, indent: str, out: list, active) -> None:
    if not body:
        out.append(f"{indent}pass")
    for s in body:
        text, note, inner = _statement(s)
        if active is not None and set(ir.defs(s)) & active and not inner:
            note += "  active"
        out.append(f"{indent}{text}  # L{s.line}{note}")
        for header, block in inner:
            if header:
                out.append(f"{indent}{header}")
            _block(block, indent + "    ", out, active)
        if isinstance(s, ir.While):  # (its condition, then its body)
            out.append(f"{indent}    if not {ast.unparse(atom_expr(s.cond))}: break")
            _block(s.body, indent + "    ", out, active)


def _statement(s) -> tuple[str, str, list]:
    """(the statement's line, a note for its comment, [(header, nested block), ...])."""
    if isinstance(s, ir.Call):
        return f"{s.target} = {ast.unparse(forward_expr(s.op, s.args))}", "", []
    if isinstance(s, ir.Return):
        return f"return {ast.unparse(atom_expr(s.value))}", "", []
    if isinstance(s, ir.UserCall):
        targets = ", ".join(s.targets)
        args = ", ".join(ast.unparse(atom_expr(a)) for a in s.args)
        return f"{targets} = {s.fn_name}({args})", "  checkpointed" if s.checkpoint else "", []
    if isinstance(s, ir.Push):
        return f"{s.stack}.push({ast.unparse(atom_expr(s.value))})", "", []
    if isinstance(s, ir.If):
        return f"if {ast.unparse(atom_expr(s.test))}:", "", [("", s.body)] + (
            [("else:", s.orelse)] if s.orelse else [])
    if isinstance(s, ir.For):
        rng = ast.unparse(range_expr(s))
        rng = f"reversed({rng})" if s.reverse else rng
        exits = f"  leaves when {' or '.join(s.exits)}" if s.exits else ""
        ck = "  checkpointed" if s.checkpoint is not None else ""
        return f"for {s.target} in {rng}:", exits + ck, [("", s.body)]
    if isinstance(s, ir.While):
        exits = f"  leaves when {' or '.join(s.exits)}" if s.exits else ""
        return "while True:", exits, [("", s.cond_body)]
    return f"pass  # {s!r}", "", []  # (a statement kind this printer does not know yet)
