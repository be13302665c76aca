"""Tests known when normalising: `if self.act is None:` of an object srcad already knows.

Layer classes keep optional parts as attributes that are None or not (`act=None`,
`bias=None`, `dropout=None`) and branch on them, often with an early return:

    def __call__(self, x):
        z = x @ self.W
        if self.act is None:
            return z
        return self.act(z)

The object is known when srcad normalises the method (a global layer, a layer of a list,
`self` of a bound method), so Python's branch is known too: this pass keeps only that
branch, before desugar.py turns the early return into flags -- otherwise the other branch
(`self.act(z)` with `act` None) would be code srcad refuses. Each attribute looked up is
guarded (guards.py): set `layer.act = np.tanh` later and the code is rebuilt.

Input: a `ParsedFunction` (its tree, before desugar). Output: the same tree, in place, where
each `if` / `elif` whose test is `<known object>.<attr chain> is None` / `is not None` (or
`not` of one) is replaced by the statements of the branch Python takes.

Before/after (with `self.act` None):
    if self.act is None:                 return z
        return z
    return self.act(z)                   return self.act(z)   (after a return: dead)
"""

from __future__ import annotations

import gast

from . import guards
from .opaque import is_user_object
from .parse import UNRESOLVED


def fold_known_tests(pf) -> None:
    """Rewrite `pf.tree` as the module docstring says."""
    assigned = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
                and isinstance(n.ctx, (gast.Store, gast.Del))}
    held = {**pf.known, **pf.constants}

    def root_object(name: str):
        if name in held and name not in assigned:
            return held[name]
        if name in assigned or name in pf.params:
            return UNRESOLVED
        return pf.resolve(name)

    def known(test):
        """True / False where the test's value is known here, else None."""
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            inner = known(test.operand)
            return None if inner is None else not inner
        if not (isinstance(test, gast.Compare) and len(test.ops) == 1 and
                isinstance(test.ops[0], (gast.Is, gast.IsNot))):
            return None
        left, right = test.left, test.comparators[0]
        if isinstance(left, gast.Constant) and left.value is None:
            left, right = right, left
        if not (isinstance(right, gast.Constant) and right.value is None) or \
                not isinstance(left, gast.Attribute):
            return None
        chain, root = [], left
        while isinstance(root, gast.Attribute):
            chain.append(root.attr)
            root = root.value
        if not isinstance(root, gast.Name):
            return None
        obj = root_object(root.id)
        if obj is UNRESOLVED or not is_user_object(obj):
            return None
        for attr in reversed(chain):
            if not is_user_object(obj):
                return None  # (an array's or a container's attribute: read when it runs)
            value = getattr(obj, attr, guards.MISSING)
            if value is guards.MISSING:
                return None
            guards.note_attr(obj, attr, value)
            obj = value
        is_none = obj is None
        return is_none if isinstance(test.ops[0], gast.Is) else not is_none

    def block(stmts):
        out = []
        for s in stmts:
            if out and isinstance(out[-1], _JUMPS):
                break  # (after a return the branch brought up: dead, as Python never runs it)
            if isinstance(s, gast.If):
                truth = known(s.test)
                if truth is not None:
                    out.extend(block(s.body if truth else s.orelse))
                    continue
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list) and not isinstance(
                        s, (gast.FunctionDef, gast.ClassDef)):
                    new = block(getattr(s, field))
                    setattr(s, field, new if new or field != "body" else [_pass(s)])
            if isinstance(s, gast.Try):
                for h in s.handlers:
                    h.body = block(h.body) or [_pass(h)]
            out.append(s)
        return out

    pf.tree.body = block(pf.tree.body) or [_pass(pf.tree)]
    gast.fix_missing_locations(pf.tree)


_JUMPS = (gast.Return, gast.Raise, gast.Break, gast.Continue)


def _pass(at):
    return gast.copy_location(gast.Pass(), at)
