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
from ..errors import UnsupportedSyntaxError
from ..ops import table
from .opaque import MUTATING, OpaqueOp


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
        if self.known_setattr(s):
            return
        hint = _hint_of(v.func)
        site = self.resolve_call(v, hint)
        if site[0] == "user":
            self.emit_user_call(site, v, hint, None, discard=True)
            return
        self.body.append(ir.Effect("call", site[1], site[2], s.lineno))

    def known_setattr(self, s: gast.Expr) -> bool:
        """`setattr(layer, k, v)` whose name is known here -- a loop over a dict argument's
        items or over names, unrolled, gives `k` each key: the store `layer.<k> = v` itself
        (its descriptors, its state carried into the methods that read it, an object known
        only when it runs checked as `layer.W = v` is), not a call srcad does not follow.
        False otherwise."""
        v = s.value
        if not (isinstance(v.func, gast.Name) and v.func.id not in self.locals and
                len(v.args) == 3 and not v.keywords and
                not any(isinstance(a, gast.Starred) for a in v.args) and
                isinstance(v.args[1], (gast.Name, gast.Constant)) and
                isinstance(v.args[0], (gast.Name, gast.Attribute, gast.Subscript))):
            return False
        try:
            if self.pf.resolve(v.func.id) is not setattr:
                return False
        except Exception:  # noqa: BLE001  (not resolvable: the general path says why)
            return False
        key = v.args[1].value if isinstance(v.args[1], gast.Constant) else \
            self.env.get(v.args[1].id)  # (a name: what the unrolled trip bound it to)
        if isinstance(key, ir.Const):
            key = key.value
        if not (type(key) is str and key.isidentifier()):
            return False
        target = gast.copy_location(gast.Attribute(value=copy.deepcopy(v.args[0]),
                                                   attr=key, ctx=gast.Store()), v)
        self.assign(target, v.args[2], s)
        return True

    def assert_statement(self, s: gast.Assert) -> None:
        test = self.expr(s.test, "assert", None)
        if isinstance(test, ir.Const) and test.value is True:
            return  # (a test known true here, its lookups guarded: `assert hasattr(l, "W")`)
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
        if all(isinstance(a, ir.Const) and type(a.value) in (int, str, bool)
               for a in atoms):
            # (`f"fc{i}"` of an unrolled loop's index: the name itself, known here, so that
            # `getattr(self, f"fc{i}")` picks its layer while srcad builds the code)
            text = fn(*(a.value for a in atoms))
            return ir.Const(text, repr(text))
        bound = {p.name: a for p, a in zip(params, atoms)}
        return self.result((op, bound), hint, into, e)


_VALUES = {"list_append", "dict_set", "dict"}  # ops that make a new list or dict each time


def check_lost_changes(fn: ir.Function) -> dict:
    """A method that changes a list or dict in place (``.append``, ``.sort``, ``.update``) is
    run as written, on the object itself. srcad holds some lists and dicts as values instead
    -- a literal's items (``[x]``), the lists that ``lst.append`` in the function and
    comprehensions build anew each time, dict literals -- and a change made in place to one
    of those, here or in a function it is passed to, would be lost: refused at its line.
    Returns the parameters `fn` itself changes in place (name -> line), for its callers."""
    made = {s.target: s for s in ir.walk(fn.body) if isinstance(s, ir.Call)}

    def held_as_value(atom, seen=()) -> bool:
        if isinstance(atom, ir.Seq):
            return True
        s = made.get(atom.name) if isinstance(atom, ir.Var) else None
        if s is None or atom.name in seen:  # (`d = d.copy()` in a loop: one name, a cycle)
            return False
        if s.op.name in _VALUES:
            return True
        return s.op.name == "copy" and held_as_value(next(iter(s.args.values())),
                                                     (*seen, atom.name))

    def root(atom):
        seen = set()  # (`d = d[::-1]` in a loop names itself: stop at the cycle)
        while isinstance(atom, ir.Var) and atom.name in made and atom.name not in seen and \
                made[atom.name].op.name in ("getitem", "copy"):
            seen.add(atom.name)
            atom = next(iter(made[atom.name].args.values()))
        return atom

    changes = {}
    for s in ir.walk(fn.body):
        site = None
        if isinstance(s, (ir.Call, ir.Effect)) and isinstance(s.op, OpaqueOp) and \
                s.op.kind == "method" and s.op.name[1:] in MUTATING:
            site = (s.args["_obj"], f"`{s.op.label}`")
        if site is not None:
            obj, what = site
            if held_as_value(obj):
                _lost(fn, s.line, f"{what} changes a list or dict in place that srcad holds as "
                      f"a value here (a literal, or one it builds anew), so the change would "
                      f"be lost")
            r = root(obj)
            if isinstance(r, ir.Var) and r.name in fn.params:
                changes.setdefault(r.name, s.line)
        if isinstance(s, ir.UserCall):
            for p, a in zip(s.callee.params, s.args):
                if p in s.callee.changes and held_as_value(a):
                    _lost(fn, s.line, f"`{s.callee.name}` changes its argument `{p}` in place "
                          f"(line {s.callee.changes[p]}), but srcad holds the value passed "
                          f"here as a value (a literal, or a list it builds anew), so the "
                          f"change would be lost")
    return changes


def _lost(fn, line, message):
    raise UnsupportedSyntaxError(
        message, filename=fn.filename, lineno=line, func=fn.name,
        hint="build the list with lst.append in the function that uses it (without a second "
        "name for it), or return the new list from the function that makes it")
