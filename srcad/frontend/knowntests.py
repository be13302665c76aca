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
guarded (guards.py): set `layer.act = np.tanh` later and the code is rebuilt. An attribute
that a method of the object's class other than `__init__` assigns (or changes in place), or
that this function assigns, is not folded: the call may change it before the test runs
(`self.mark()` setting `self.flag`).

Input: a `ParsedFunction` (its tree, before desugar). Output: the same tree, in place, where
each `if` / `elif` whose test is `<known object>.<attr chain> is None` / `is not None` (or
`not` of one) is replaced by the statements of the branch Python takes.

Before/after (with `self.act` None):
    if self.act is None:                 return z
        return z
    return self.act(z)                   return self.act(z)   (after a return: dead)
"""

from __future__ import annotations

import copy

import gast

from . import guards
from .objects import _changed_attrs
from .opaque import is_user_object
from .parse import UNRESOLVED, rewrite_blocks


def fold_known_tests(pf) -> None:
    """Rewrite `pf.tree` as the module docstring says."""
    assigned = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
                and isinstance(n.ctx, (gast.Store, gast.Del))}
    held = {**pf.known, **pf.constants}
    stored = stored_attributes(pf.tree)

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
        if not (isinstance(right, gast.Constant) and right.value is None):
            return None
        if isinstance(left, gast.Name) and left.id in pf.params and left.id in held \
                and left.id not in assigned:  # (a parameter every call here passes None or
            is_none = held[left.id] is None  # an object: `def dense(x, W, act=None)`)
            return is_none if isinstance(test.ops[0], gast.Is) else not is_none
        if not isinstance(left, gast.Attribute):
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
            if may_change(obj, attr, stored):
                return None
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
                    out.append(_still(s.test, truth))
                    out.extend(block(s.body if truth else s.orelse))
                    continue
            rewrite_blocks(s, block)
            if isinstance(s, gast.Try):
                for h in s.handlers:
                    h.body = block(h.body) or [_pass(h)]
            out.append(s)
        return out

    pf.tree.body = block(pf.tree.body) or [_pass(pf.tree)]
    gast.fix_missing_locations(pf.tree)


_JUMPS = (gast.Return, gast.Raise, gast.Break, gast.Continue)


def stored_attributes(tree) -> set:
    """The attribute names `tree` assigns or deletes (`x.flag = 1` of any x)."""
    return {n.attr for n in gast.walk(tree) if isinstance(n, gast.Attribute)
            and isinstance(n.ctx, (gast.Store, gast.Del))}


def may_change(obj, attr: str, stored: set) -> bool:
    """May `obj.attr` hold another value when a test of it runs than it holds now? Yes where
    the function assigns that name (`stored`), or a method of obj's class other than
    `__init__` assigns it or changes it in place (`self.mark()` setting `self.flag` before
    the test): such a test runs as written, not folded."""
    return attr in stored or attr in _changed_attrs(type(obj))


def _still(test, truth: bool):
    """`assert <test>` (or `not`), checked when the code runs: the branch was chosen from the
    attribute's value when srcad built the code, and something the call does that srcad does
    not see (a caller rebinding it between two calls of the method) may change it -- then the
    call fails at this line rather than take the other branch silently."""
    test = copy.deepcopy(test)
    for n in gast.walk(test):
        if isinstance(n, gast.Compare):
            n.srcad_at_run_time = True  # (expressions.py: not folded again)
    if not truth:
        test = gast.UnaryOp(op=gast.Not(), operand=test)
    msg = gast.Constant(value=(
        "srcad: this `if` was decided from the attribute's value when the code was built, "
        "and the attribute changed during the call (the function rebinds it between calls "
        "of the method, which srcad does not follow): set it before calling the transformed "
        "function"), kind=None)
    out = gast.copy_location(gast.Assert(test=test, msg=msg), test)
    gast.fix_missing_locations(out)
    return out


def _pass(at):
    return gast.copy_location(gast.Pass(), at)
