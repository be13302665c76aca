"""One name for one array: `v = a` copies that stay the same array are propagated away.

The normaliser propagates a plain copy `v = a` (env[v] = a's atom), except where a loop or a
branch assigns `a` or `v` (a name in `Function.mutable` keeps one IR name for all its
values): there `v = a` becomes `v = identity(a)`, a statement of its own, so that `v` keeps
the value when `a` is given another. Its backward gives `v` an adjoint of its own, added into
`da` where the copy was made. That is the same sum as a single adjoint for the array, but
not in the same order: the tape (mode="tape") has one Tensor for the array and adds every
contribution to it in the order the backward reaches them, so `da` would be
`c_sin + ((c1 + c2) + u)` in source mode and `((c1 + c2) + c_sin) + u` on the tape.

Where the copy is certainly the same array as long as either name is read -- made at the top
level (not in a loop or a branch), `v` assigned nowhere else, `a` assigned nowhere after it
(a write into either is an assignment of the IR name: copy on write) -- `v` is renamed `a`
from there on and the copy is dropped: one name, one adjoint, the tape's order. A copy in
a loop, or one whose name is given another value later (`y = a` before `while ...: y = ...`),
keeps its own name: there the two names are one array for only part of the run, which the
generated code cannot know statically (tests/test_tape.py, NOT_BITWISE).

Before/after:
    a = identity(a_add)              a = identity(a_add)        (a: assigned in a branch)
    v = identity(a)                  w = a[2]
    w = v[2]                         out = a * a
    out = v * v
"""

from __future__ import annotations

from .. import ir
from ..ops import control, table


def _rename(atom, old: str, new: ir.Var):
    if isinstance(atom, ir.Var):
        return new if atom.name == old else atom
    if isinstance(atom, ir.Seq):
        return ir.Seq(tuple(_rename(a, old, new) for a in atom.items), atom.kind)
    if isinstance(atom, ir.Index):
        return ir.Index(tuple(_rename(p, old, new) for p in atom.parts), atom.is_tuple)
    if isinstance(atom, ir.Slice):
        return ir.Slice(*(None if a is None else _rename(a, old, new)
                          for a in (atom.lower, atom.upper, atom.step)))
    return atom


def _renamable(stmts, old: str) -> bool:
    """Is every read of `old` in `stmts` in a place `_rename_in` rewrites?"""
    for s in ir.walk(stmts):
        if isinstance(s, ir.Push) and old in ir.uses(s):
            return False
        if isinstance(s, (ir.For, ir.While)) and old in s.exits:
            return False
        if isinstance(s, ir.For) and old in {n for a in s.checkpoint or () if a is not None
                                             for n in ir.atom_vars(a)}:
            return False
    return True


def _rename_in(stmts, old: str, new: ir.Var) -> None:
    for s in ir.walk(stmts):
        if isinstance(s, (ir.Call, ir.Effect)):
            s.args = {k: _rename(a, old, new) for k, a in s.args.items()}
        elif isinstance(s, ir.UserCall):
            s.args = [_rename(a, old, new) for a in s.args]
        elif isinstance(s, ir.Return):
            s.value = _rename(s.value, old, new)
        elif isinstance(s, ir.If):
            s.test = _rename(s.test, old, new)
        elif isinstance(s, ir.For):
            s.start, s.stop, s.step = (_rename(a, old, new) for a in (s.start, s.stop, s.step))
            if s.limit is not None:
                s.limit = _rename(s.limit, old, new)
        elif isinstance(s, ir.While):
            s.cond = _rename(s.cond, old, new)


def propagate_aliases(body: list, params) -> list:
    """`body` with each top-level `v = identity(a)` that stays one array renamed away (see
    the module docstring)."""
    copy = table.lookup(control.identity)
    count: dict[str, int] = {}
    for s in ir.walk(body):
        for d in ir.defs(s):
            count[d] = count.get(d, 0) + 1
    out = list(body)
    i = 0
    while i < len(out):
        s = out[i]
        src = s.args.get("x") if isinstance(s, ir.Call) and s.op is copy else None
        rest = out[i + 1:]
        if (isinstance(src, ir.Var) and src.name != s.target and s.target not in params
                and count.get(s.target) == 1
                and not any(src.name in ir.defs(t) for t in ir.walk(rest))
                and _renamable(rest, s.target)):
            _rename_in(rest, s.target, src)
            del out[i]
            continue
        i += 1
    return out
