"""Memory planning's slot writes: a copy-on-write subscript assignment made in place.

The generated code spells `x[i] = v` as a value: `x_setitem = setitem(x, i, v)` copies all
of x to write one slot, and its backward, `dx = setitem_grad_x(dx_setitem, i)`, copies all of
the cotangent to zero that slot. In a loop that fills an array slot by slot (a naive
convolution's `out[:, :, i, j] = ...`, an RNN's `hs[:, t] = h`) that is the array's size
times the iterations, forward and backward: quadratic where the user's loop is linear.
Where the buffer is the function's own and nothing reads the old value again, the copy is
not needed:

    out_setitem = setitem(out, np.s_[:, t], h)  # L9        out[:, t] = h  # L9
    out = out_setitem  # L9                         ->
    del out_setitem  # L9

    dhs = setitem_grad_x(dhs_setitem, np.s_[:, t])  # L9    dhs = dhs_setitem  # L9
    dh = dh + dhs_setitem[:, t]  # L9                ->     dh = dh + dhs_setitem[:, t]  # L9
    del dhs_setitem  # L9                                   del dhs_setitem  # L9
                                                            dhs[:, t] = 0  # L9

(the cotangent's slot is zeroed once nothing that read it is left). Values are bit for bit
those of the copies: the same assignment of the same values, into a buffer of the same
layout (a fresh array's copy keeps its strides).

Whose buffer: `owners` -- every definition of the name makes a new array (as
`srcad.memplan.facts` judges), updates it in place, or hands it over from another such name
(`a = b` with b and all its aliases dead after the line: a *move*), or is overwritten by the
next line before anything reads it; a parameter only where every caller donates it. A name
none of whose aliases is pushed, stored or handed to the user's code (`_Facts.kept`); a
return is no obstacle, since nothing runs after it.
"""

from __future__ import annotations

import ast

import numpy as np

from ..gcode import GFunction, Line, assign, clone, name, names_read, names_written
from ..transform.adjoints import basic_index
from .facts import Move, _Facts, _Liveness
from .kernels import kernel_call


class Aliases:
    """The names that may alias a name (`_Facts.alias`, followed), leaving out what only an
    `a = b` line makes that the next line overwrites with a new array (`shadowed`: `dh = h`
    then `dh = dh + h` -- dh never holds h's buffer past that line)."""

    def __init__(self, facts: _Facts):
        self.facts = facts
        self.shadowed = _shadowed(facts.body, facts, set())
        self._memo: dict = {}

    def _edge(self, a: str, b: str) -> bool:
        lines = self.facts.edge_lines.get((a, b), {None})
        return None in lines or not lines <= self.shadowed

    def of(self, n: str, but=frozenset()) -> set:
        """n and the names that may alias it, not counting those reached through `but` (a
        move's new name; a call's results)."""
        key = (n, frozenset(but))
        got = self._memo.get(key)
        if got is None:
            got, todo = {n}, [n]
            while todo:
                a = todo.pop()
                for m in self.facts.alias.get(a, ()):
                    if m not in got and m not in but and self._edge(a, m):
                        got.add(m)
                        todo.append(m)
            self._memo[key] = got
        return got


def owners(facts: _Facts, live: _Liveness, around: Aliases, handed=frozenset()) -> set:
    """Array names whose buffer only the function's own code refers to (see the module
    docstring); `around`: the function's aliases (`Aliases`); `handed`: the parameters
    every caller gives up."""
    given = facts.donated | set(handed)
    cand = {n for n in facts.array if n not in facts.params or n in given}
    while True:
        keep = set()
        for n in cand:
            defs = [d for d in facts.defs.get(n, ())  # (`a = a` keeps what a holds)
                    if not (isinstance(d, Move) and (d.line in around.shadowed
                                                     or d.source == n))]
            if not defs and n not in given:
                continue
            if all(_handed(d, n, cand, around, live) for d in defs):
                keep.add(n)
        if keep == cand:
            return cand
        cand = keep


def _handed(d, n: str, cand: set, around: Aliases, live: _Liveness) -> bool:
    if isinstance(d, Move):
        after = live.after.get(d.line)
        return after is not None and d.source in cand and \
            not (around.of(d.source, {n}) & after)
    return d == "aug" or isinstance(d, ast.expr)


def _shadowed(lines: list, facts: _Facts, out: set) -> set:
    """Ids of `a = b` lines directly followed (same block) by `a = <a new array>`."""
    simple = [ln for ln in lines if ln.node is not None]
    for ln, nxt in zip(simple, simple[1:]):
        node, nx = ln.node, nxt.node
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and \
                len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                not nxt.compound and _makes_new(nx, node.targets[0].id, facts):
            out.add(id(ln))
    for ln in lines:
        if ln.compound:
            _shadowed(ln.body, facts, out)
            _shadowed(ln.orelse or [], facts, out)
    return out


def _makes_new(node, a: str, facts: _Facts) -> bool:
    """Is `node` ``a = <a new array>`` (an expression the facts call fresh, or a fused
    kernel's result that is not one of its arguments updated)?"""
    found = kernel_call(node, facts.kernels)
    if found is not None:
        k, _, targets = found
        return a in targets and k.outs[targets.index(a)].inout < 0
    return isinstance(node, ast.Assign) and len(node.targets) == 1 and \
        isinstance(node.targets[0], ast.Name) and node.targets[0].id == a and \
        facts.fresh(node.value)


def _call_of(node, helper: str | None, nargs: int, foreign=frozenset()):
    """(target, args) of `target = helper(*args)`, srcad's runtime helper (not a function
    of the user's of that name: `foreign`), else None; with no helper, (target, source)
    of `target = source`."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and
            isinstance(node.targets[0], ast.Name)):
        return None
    value = node.value
    if helper is None:
        return (node.targets[0].id, value.id) if isinstance(value, ast.Name) else None
    if helper not in foreign and isinstance(value, ast.Call) and \
            isinstance(value.func, ast.Name) and value.func.id == helper and \
            not value.keywords and len(value.args) == nargs and \
            isinstance(value.args[0], ast.Name):
        return node.targets[0].id, value.args
    return None


def _slot(x: str, index: ast.expr) -> ast.Subscript:
    """`x[index]` as an assignment target (`np.s_[a, b]` is `x[a, b]`)."""
    if isinstance(index, ast.Subscript) and isinstance(index.value, ast.Attribute) and \
            index.value.attr == "s_":
        index = index.slice
    return ast.Subscript(value=name(x), slice=clone(index), ctx=ast.Store())


def _writes_into(node, names: set) -> bool:
    """Does the statement write into the memory of one of `names` in place (or may it: a
    call made for its effect, an `out=`)?"""
    if isinstance(node, ast.Expr):
        return bool(names_read(node) & names)
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, ast.AugAssign) else []
    for t in targets:
        for sub in ast.walk(t):
            if isinstance(sub, ast.Subscript) and names_read(sub.value) & names:
                return True
        if isinstance(node, ast.AugAssign) and isinstance(t, ast.Name) and t.id in names:
            return True
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            for k in sub.keywords:
                if k.arg == "out" and names_read(k.value) & names:
                    return True
    return False


class _Slots:
    def __init__(self, f: GFunction, facts: _Facts, live: _Liveness, stats, handed):
        self.facts, self.live, self.stats = facts, live, stats
        self.around = Aliases(facts)
        self.owned = owners(facts, live, self.around, handed)
        self.reads: dict[str, int] = {}
        for top in f.body:
            for ln in top.walk():
                if ln.node is not None:
                    for n in names_read(ln.node):
                        self.reads[n] = self.reads.get(n, 0) + 1

    def mine(self, x: str, like: str) -> bool:
        """Is x's buffer the function's own, none of its aliases kept, and is `like` (the
        copy's name) an array of x's shape and dtype?"""
        a, b = self.facts.infos.get(x), self.facts.infos.get(like)
        return x in self.owned and not (self.around.of(x) & self.facts.kept) and \
            a is not None and b is not None and a.dtype is not None and \
            a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)

    def block(self, lines: list) -> list:
        out = []
        i = 0
        while i < len(lines):
            ln = lines[i]
            if ln.compound:
                ln.body = self.block(ln.body)
                if ln.orelse:
                    ln.orelse = self.block(ln.orelse)
            elif ln.node is not None:
                done = self.write(lines, i, out) or self.zero(lines, i, out)
                if done:
                    i = done
                    continue
            out.append(ln)
            i += 1
        return out

    def write(self, lines: list, i: int, out: list) -> int:
        """`t = setitem(x, index, v)` -> `x[index] = v` where x dies there (see the module
        docstring); the next index to look at, or 0."""
        ln = lines[i]
        got = _call_of(ln.node, "setitem", 3, self.facts.foreign)
        if got is None:
            return 0
        t, (x, index, value) = got
        x = x.id
        around = self.around.of(x)
        if not self.mine(x, t) or around & self.live.after.get(id(ln), {x}) or \
                (names_read(index) | names_read(value)) & around:
            return 0
        src = ast.unparse(ln.node)
        out.append(Line(comment=f"in place: {src} (into {x})"))
        out.append(Line(ast.Assign(targets=[_slot(x, index)], value=clone(value), lineno=0),
                        ln.line))
        self._count(x)
        j = i + 1
        nxt = lines[j] if j < len(lines) else None
        if nxt is not None and not nxt.compound and _call_of(nxt.node, None, 0) == (x, t) \
                and self.reads.get(t) == 1:
            j += 1  # (`x = t` then `del t`: t was x's next value's name only)
            dl = lines[j] if j < len(lines) else None
            if dl is not None and isinstance(dl.node, ast.Delete) and any(
                    isinstance(e, ast.Name) and e.id == t for e in dl.node.targets):
                rest = [e for e in dl.node.targets if not (isinstance(e, ast.Name)
                                                           and e.id == t)]
                if rest:
                    out.append(Line(ast.Delete(targets=rest), dl.line))
                j += 1
            return j
        out.append(Line(assign(t, name(x)), ln.line))
        return j

    def zero(self, lines: list, i: int, out: list) -> int:
        """`g = setitem_grad_x(g2, index)` -> `g = g2`, and `g[index] = 0` after the last
        read of g2's slot (see the module docstring); the next index, or 0."""
        ln = lines[i]
        got = _call_of(ln.node, "setitem_grad_x", 2, self.facts.foreign)
        if got is None:
            return 0
        g, (g2, index) = got
        g2 = g2.id
        around = self.around.of(g2)
        if not self.mine(g2, g) or not basic_index(index, self.facts.infos) or \
                names_read(index) & around or g in around:
            return 0
        held = names_read(index)
        last = i if g == g2 and not ((around - {g2}) & self.live.after.get(id(ln), around)) \
            else None
        j = i + 1
        while last is None and j < len(lines):
            other = lines[j]
            node = other.node
            if node is None:
                j += 1
                continue
            if other.compound or not isinstance(node, (ast.Assign, ast.AugAssign,
                                                       ast.Delete)):
                return 0
            written = names_written(node)
            if g in names_read(node) or g in written or written & (held | {g2}) or \
                    _writes_into(node, around):
                return 0
            if not (around & self.live.after.get(id(other), around)):
                last = j
            j += 1
        if last is None:
            return 0
        out.append(Line(comment=f"in place: {ast.unparse(ln.node)} (into {g2}; its slot "
                                "zeroed once read)"))
        if g != g2:
            out.append(Line(assign(g, name(g2)), ln.line))
        out.extend(lines[i + 1:last + 1])
        zero = ast.Assign(targets=[_slot(g, index)], value=ast.Constant(0), lineno=0)
        out.append(Line(zero, ln.line))
        self._count(g2)
        return last + 1

    def _count(self, x: str) -> None:
        info = self.facts.infos[x]
        self.stats.statements += 1
        self.stats.reused.append((x, int(np.prod(info.shape, dtype=np.int64))
                                  * np.dtype(info.dtype).itemsize))


def plan_slots(f: GFunction, facts: _Facts, live: _Liveness, stats,
               handed=frozenset()) -> None:
    """Make `f`'s copy-on-write slot writes in place where its own buffer dies there
    (`handed`: parameters every caller gives up)."""
    if not live.ok or not any(_call_of(ln.node, h, k, facts.foreign)
                              for top in f.body for ln in top.walk()
                              for h, k in (("setitem", 3), ("setitem_grad_x", 2))):
        return
    f.body = _Slots(f, facts, live, stats, handed).block(f.body)

