"""Statements that do nothing to the gradient: print, assert, raise, bare calls (a mixin).

Input: a statement of the user's function that binds no value --
``print(...)``, ``logger.info(...)``, ``check(x)`` (any call made for its effect),
``assert test, msg``, ``raise E(...)`` -- or an f-string inside one. Output: `ir.Effect`
statements (kind "call", "assert" or "raise") in the forward sweep, where the user put them;
the transforms never give them an adjoint (srcad/ir.py).

What they see and do:
  * A bare call to a user function is a discarded `ir.UserCall` (its own prints and checks
    run); any other bare call is an opaque call or a row, its result dropped. A bare call on
    a value the gradient needs is refused where it could hide that value from the gradient
    (opaque.check_opaque): ``out_list.append(x * 2)`` into a list the output reads is refused;
    ``lst.append(v)`` on a list made in the function is followed (pylower.py).
  * ``assert test, msg`` computes its message only when the test fails, as Python does.
  * They run once per call: checkpointing's recomputation skips them (a checkpointed call to
    a function that prints is refused), and the first call's shape probe (api.probe) skips
    function-call effects and runs method effects on a copy of their object, so the caller's
    objects are touched once. With ``memory_budget``, the policy's measuring runs on the
    first call run them too.
  * An f-string is a pure opaque op spelled as the user wrote it.

Before/after:
    assert x.ndim == 2, "a matrix"          assert_ndim = x.ndim
                                             assert_eq = assert_ndim == 2
                                             Effect(assert, test=assert_eq, msg='a matrix')
"""

from __future__ import annotations

import ast
import copy

import gast

from .. import ir
from ..ops import table
from .opaque import OpaqueOp


def _hint_of(func) -> str:
    if isinstance(func, gast.Name):
        return func.id
    if isinstance(func, gast.Attribute):
        return func.attr
    return "effect"


class EffectsMixin:
    """Effect statements and f-strings, for the `Normalizer` (normalize.py)."""

    def expr_statement(self, s: gast.Expr) -> None:
        v = s.value
        if isinstance(v, gast.Constant):
            return  # a docstring, `...`
        if not isinstance(v, gast.Call):
            self.expr(v, "unused", None)  # evaluated for its errors only, as Python does
            return
        hint = _hint_of(v.func)
        site = self.resolve_call(v, hint)
        if site[0] == "user":
            self.emit_user_call(site, v, hint, None, discard=True)
            return
        self.body.append(ir.Effect("call", site[1], site[2], s.lineno))

    def assert_statement(self, s: gast.Assert) -> None:
        test = self.expr(s.test, "assert", None)
        if s.msg is None or isinstance(s.msg, gast.Constant):
            args = {"test": test}
            if s.msg is not None:
                args["msg"] = self.expr(s.msg, "message", None)
            self.body.append(ir.Effect("assert", None, args, s.lineno))
            return
        # the message is computed only when the test fails
        outer, self.body = self.body, []
        try:
            msg = self.expr(s.msg, "message", None)
            self.body.append(ir.Effect("assert", None, {"test": test, "msg": msg}, s.lineno))
            failing = self.body
        finally:
            self.body = outer
        self.body.append(ir.If(test, [], failing, s.lineno))

    def raise_statement(self, s: gast.Raise) -> None:
        if s.exc is None:
            raise self.unsupported("a bare `raise` (re-raising)", s,
                                   "raise an exception: raise ValueError('...')")
        if s.cause is not None:
            raise self.unsupported("`raise ... from ...`", s, "raise the exception alone")
        if isinstance(s.exc, gast.Call):  # raise ValueError(...): the call, in place
            site = self.resolve_call(s.exc, "error")
            if site[0] == "op":
                self.body.append(ir.Effect("raise", site[1], site[2], s.lineno))
                return
            exc = self.emit_user_call(site, s.exc, "error", None)
        else:
            exc = self.expr(s.exc, "error", None)
        self.body.append(ir.Effect("raise", None, {"exc": exc}, s.lineno))

    def fstring(self, e: gast.JoinedStr, hint: str, into):
        """f"loss {x:.3f}": a pure op over the formatted values, spelled as written."""
        atoms = []
        node = copy.deepcopy(e)

        class Holes(gast.NodeTransformer):
            def visit_FormattedValue(inner, fv):
                fv.value = self_expr(fv.value)
                if fv.format_spec is not None:
                    fv.format_spec = inner.visit(fv.format_spec)
                return fv

        def self_expr(value):
            atoms.append(self.expr(value, hint, None))
            return gast.Name(id=f"_a{len(atoms) - 1}", ctx=gast.Load(), annotation=None,
                             type_comment=None)

        node = Holes().visit(node)
        src = ast.unparse(gast.gast_to_ast(node))
        params = tuple(table.Param(f"_a{i}") for i in range(len(atoms)))
        fn = eval(compile(f"lambda {', '.join(p.name for p in params)}: {src}",
                          "<srcad f-string>", "eval"), {})
        op = OpaqueOp(name=".format", fn=fn, params=params,
                      spelling=ast.parse(src, mode="eval").body, spelling_src=src,
                      differentiable=False, family="opaque call", kind="format",
                      label="an f-string", pure=True)
        bound = {p.name: a for p, a in zip(params, atoms)}
        return self.result((op, bound), hint, into, e)
