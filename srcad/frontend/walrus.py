"""Assignment expressions (`:=`) as the assignments they are.

``if (n := np.sum(x * x)) > 1.0: ...`` binds ``n`` and tests it; srcad differentiates
statements, so the binding becomes one, placed just before the statement that held it:

    n = np.sum(x * x)
    if n > 1.0: ...

and a ``while`` test's binding is made before the loop and again at the end of its body
(``while (r := step(r)) > tol: body`` -> ``r = step(r); while r > tol: body; r = step(r)``).

Only where that is exactly Python's meaning: the statement evaluates the walrus
unconditionally (not in the second operand of ``and``/``or``, an arm of ``x if c else y``, a
lambda or a comprehension), no part of the statement evaluated before the walrus reads the
bound name (it would see the new value; a read after it, ``np.sum((h := np.tanh(z)) * h)``,
already does), and a ``while`` body has no ``continue`` (which would skip the re-binding).
Anywhere else the walrus stays, and the fence refuses it at its line -- but in a
comprehension's condition (``[y for w in ws if (y := f(w)) > 0]``), which pylower.py
writes as an ``if`` in the comprehension's loop and hoists there (`hoist_in_statement`),
binding the function's ``y`` at each step as Python's comprehension does.
"""

from __future__ import annotations

import copy

import gast

# where a walrus may not run at all, or run more than once: it stays there (fenced)
_CONDITIONAL = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)

# the statement fields that hold one expression evaluated once, before the statement acts
_EXPR_FIELDS = {
    gast.Expr: ("value",), gast.Assign: ("value",), gast.AugAssign: ("value",),
    gast.AnnAssign: ("value",), gast.Return: ("value",), gast.If: ("test",),
    gast.For: ("iter",), gast.Assert: ("test",),  # (an assert's message: only on failure)
}


def hoist_named_exprs(fdef: gast.FunctionDef) -> None:
    """Rewrite every assignment expression of `fdef` that can be a statement (see above)."""
    fdef.body = _block(fdef.body)


def _block(stmts: list) -> list:
    out = []
    for s in stmts:
        out.extend(_stmt(s))
    return out


def _stmt(s) -> list:
    for field in ("body", "orelse"):
        if isinstance(getattr(s, field, None), list):
            setattr(s, field, _block(getattr(s, field)))
    if isinstance(s, gast.While):
        if not _has_walrus(s.test) or continues(s.body):
            return [s]
        pre = _hoisted(s.test)
        if pre is None:
            return [s]
        bound, s.test = pre
        s.body = s.body + [copy.deepcopy(a) for a in bound]
        return bound + [s]
    before = []
    for field in _EXPR_FIELDS.get(type(s), ()):
        e = getattr(s, field, None)
        if e is None or not _has_walrus(e):
            continue
        pre = _hoisted(e)
        if pre is None:
            return [s]
        bound, new = pre
        if isinstance(s, gast.AugAssign) and any(
                isinstance(n, gast.Name) and n.id in {a.targets[0].id for a in bound}
                for n in gast.walk(s.target)):  # (`t += (t := ...)`: t is read first)
            return [s]
        setattr(s, field, new)
        before.extend(bound)
    return before + [s]


def hoist_in_statement(s) -> list:
    """`s` with its assignment expressions made statements before it, where that is
    Python's meaning (`_stmt`): a comprehension's condition, lowered to an `if` in its loop
    (pylower.py), as a statement's is."""
    return _stmt(s)


def _has_walrus(e) -> bool:
    return any(isinstance(n, gast.NamedExpr) for n in gast.walk(e))


def continues(body: list) -> bool:
    """A `continue` of this loop (not of a loop nested in it)."""
    todo = list(body)
    while todo:
        s = todo.pop()
        if isinstance(s, gast.Continue):
            return True
        if isinstance(s, (gast.For, gast.While)):
            todo.extend(s.orelse)  # (its body's continue is its own)
        elif not isinstance(s, (gast.FunctionDef, gast.Lambda)):
            todo.extend(c for c in gast.iter_child_nodes(s) if isinstance(c, gast.stmt))
    return False


def _hoisted(e):
    """(assignments in evaluation order, `e` with each walrus replaced by its name), or None
    where one walrus cannot be a statement of its own."""
    if not _unconditional(e):
        return None
    bound: list = []
    names: set = set()

    class Hoist(gast.NodeTransformer):
        def visit_NamedExpr(self, node):
            self.generic_visit(node)  # (a walrus inside the value is bound first)
            target = node.target.id
            names.add(target)
            assign = gast.Assign(targets=[gast.Name(id=target, ctx=gast.Store(), annotation=None,
                                                    type_comment=None)],
                                 value=node.value, type_comment=None)
            bound.append(gast.copy_location(assign, node))
            return gast.copy_location(
                gast.Name(id=target, ctx=gast.Load(), annotation=None, type_comment=None), node)

    new = Hoist().visit(copy.deepcopy(e))  # (e itself stays as written if this gives up)
    if _read_before_bound(e, names):  # (`x + (x := 2 * x)`: the old x is read first)
        return None
    gast.fix_missing_locations(new)
    for a in bound:
        gast.fix_missing_locations(a)
    return bound, new


def _read_before_bound(e, names: set) -> bool:
    """Does `e` read one of `names` before the walrus binding it starts, in Python's order of
    evaluation (after hoisting, that read would see the new value), or inside a lambda or a
    comprehension, or bind one name twice (the walrus's place reads its last value)?
    ``np.sum((h := np.tanh(z)) * h)`` and ``(r := step(r))`` keep their meaning hoisted."""
    started: set = set()

    def reads(node) -> bool:
        if isinstance(node, gast.Name):
            return isinstance(node.ctx, gast.Load) and node.id in names and \
                node.id not in started
        if isinstance(node, _CONDITIONAL):
            return any(isinstance(n, gast.Name) and n.id in names for n in gast.walk(node))
        if isinstance(node, gast.NamedExpr):
            if node.target.id in started:
                return True
            started.add(node.target.id)
            return reads(node.value)
        if isinstance(node, gast.Dict):  # (key, value, key, value, ... in that order)
            order = [x for kv in zip(node.keys, node.values) for x in kv if x is not None]
            return any(reads(x) for x in order)
        return any(reads(c) for c in gast.iter_child_nodes(node))

    return reads(e)


def _unconditional(e) -> bool:
    """Is every walrus in `e` evaluated exactly once whenever `e` is?"""
    def ok(node, conditional: bool) -> bool:
        if isinstance(node, gast.NamedExpr) and conditional:
            return False
        if isinstance(node, _CONDITIONAL):
            return not _has_walrus(node)
        if isinstance(node, gast.BoolOp):
            return ok(node.values[0], conditional) and all(
                ok(v, True) for v in node.values[1:])
        if isinstance(node, gast.IfExp):
            return ok(node.test, conditional) and ok(node.body, True) and ok(node.orelse, True)
        return all(ok(c, conditional) for c in gast.iter_child_nodes(node))
    return ok(e, False)
