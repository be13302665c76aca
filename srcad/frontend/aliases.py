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
generated code cannot know statically; `split_reads` (below) asks `y is a` when it runs.

Before/after:
    a = identity(a_add)              a = identity(a_add)        (a: assigned in a branch)
    v = identity(a)                  w = a[2]
    w = v[2]                         out = a * a
    out = v * v
"""

from __future__ import annotations

import dataclasses

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


def propagate_aliases(body: list, params, fresh=None) -> list:
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
                and not s.scope
                and count.get(s.target) == 1
                and not any(src.name in ir.defs(t) for t in ir.walk(rest))
                and _renamable(rest, s.target)):
            _rename_in(rest, s.target, src)
            del out[i]
            continue
        i += 1
    out = share_reads(out, params)
    return out if fresh is None else split_reads(out, params, fresh)


# -- one array, one name to read it by, across branches and loops ------------------------------
#
# A copy `v = identity(a)` that `propagate_aliases` must keep (made in a loop or an arm, or
# a name given other values elsewhere) still makes two names of one array for a while. Where
# both are certainly that array -- on every path, on every trip -- reading either is the
# same computation, so each such read is made through one of them, the class's
# representative: the backward then adds every contribution to the array into one adjoint
# in the order it reaches them, as the tape's one Tensor does. The representative is chosen
# where the class is made (or a copy joins it): the name expected to keep the array
# longest, so that reads after the others move on go through it too; it stays the same while
# it holds the array (a read through another name would start a second sum).
#
#     a = x * 0.5                      a = x * 0.5
#     v = identity(a)                  v = identity(a)
#     for i in range(3):               for i in range(3):
#         v = setitem(v, 0, t)             v = setitem(v, 0, t)
#         a = identity(v)                  a = identity(v)
#     w = np.tanh(a)                   w = np.tanh(v)        (a is assigned again below)
#     a = w * 2.0                      a = w * 2.0
#     out = v * a                      out = v * a

_INF = 1 << 60
# assignments that keep numpy's array under the name (srcad writes copy on write): what a
# write carries to the names that share its memory (frontend/aliasing.py), and copies
_SAME_ARRAY = {"copy", "setitem", "write_through", "view_again", "item_again", "alias_again",
               "in_layout"}


def _common(p: tuple, q: tuple) -> int:
    k = 0
    while k < min(len(p), len(q)) and p[k] == q[k]:
        k += 1
    return k


class _Program:
    """Program order, the loops and blocks around each statement and each name's
    assignments: enough to guess, at a statement, how long a name keeps its value."""

    def __init__(self, body, params):
        self.order: dict[int, int] = {}
        self.loops: dict[int, tuple] = {}
        self.path: dict[int, tuple] = {}  # id(stmt) -> the blocks around it, outermost first
        self.span: dict[tuple, int] = {}  # a block -> the order of its last statement
        self.ends: dict[int, int] = {}  # id(if/for/while) -> the order of its last statement
        self.assigned: dict[str, list] = {p: [(-1, ())] for p in params}  # (order, path)
        self.scope: dict[str, tuple] = {p: () for p in params}  # blocks around all its defs
        self.last_read: dict[str, int] = {}  # name -> the order of its last read
        self.same_array: set = set()  # orders of assignments of numpy's same array (a write)
        # names `best` takes on a tie: the representatives before a loop's last pass or a
        # branch's arms (_MustAlias)
        self.prefer: frozenset = frozenset()
        # (a name every assignment of which is an op that makes a new array: `a =
        # identity(a_tanh)` in an arm gives `a` another array, as `a = np.tanh(a)` does, not
        # a write -- also where split_reads made `a_tanh = np.tanh(...)` in both arms of its
        # `y is a` test)
        made: dict[str, list] = {}
        for s in ir.walk(body):
            for d in ir.defs(s):
                made.setdefault(d, []).append(s)
        self.new_array = {n for n, ss in made.items() if n not in params and all(
            isinstance(t, ir.Call) and t.op.name not in _SAME_ARRAY for t in ss)}
        self.number(body, (), ())
        for s in ir.walk(body):  # (a read in a loop is made again up to the loop's end)
            if isinstance(s, ir.Effect) or (isinstance(s, ir.Call)
                                            and s.op.name == "same_object"):
                continue  # (no gradient flows through it: no contribution to the adjoint;
                # nor through split_reads' own `y is a` tests)
            at = self.span[(id(self.loops[id(s)][0]), 0, True)] if self.loops[id(s)] \
                else self.order[id(s)]
            for n in ir.uses(s):
                self.last_read[n] = max(self.last_read.get(n, -1), at)

    def number(self, stmts, around, inside):
        for s in stmts:
            self.order[id(s)] = len(self.order)
            self.loops[id(s)] = around
            self.path[id(s)] = inside
            for d in ir.defs(s):
                self.assigned.setdefault(d, []).append((self.order[id(s)], inside))
                if isinstance(s, ir.Call) and s.op.name in _SAME_ARRAY and not (
                        s.op.name == "copy" and isinstance(x := s.args.get("x"), ir.Var)
                        and x.name in self.new_array):
                    self.same_array.add(self.order[id(s)])
                common = self.scope.get(d, inside)
                self.scope[d] = inside[:_common(common, inside)]
            # a block: (id(stmt), part, runs), `runs` false where it may well not run
            if isinstance(s, ir.If):
                for arm, sub in ((0, s.body), (1, s.orelse)):
                    key = (id(s), arm, False)
                    self.number(sub, around, inside + (key,))
                    self.span[key] = len(self.order) - 1
            elif isinstance(s, ir.For):
                key = (id(s), 0, True)
                self.number(s.body, around + (s,), inside + (key,))
                self.span[key] = len(self.order) - 1
            elif isinstance(s, ir.While):
                key, body = (id(s), 0, True), (id(s), 1, False)
                self.number(s.cond_body, around + (s,), inside + (key,))
                self.number(s.body, around + (s,), inside + (key, body))
                self.span[key] = self.span[body] = len(self.order) - 1
            if isinstance(s, (ir.If, ir.For, ir.While)):
                self.ends[id(s)] = len(self.order) - 1

    def kept_until(self, m: str, s, surely: bool = False) -> int:
        """Where `m` stops holding the value it holds at `s`, as far as can be told: its last
        read (a temporary's is near), where it is next assigned by a statement that runs
        whenever the code after `s` does (not one in a branch arm or a while body: on the
        other path the value is still read through `m`), at the end of a loop around `s`
        that assigns it (the next trip), or where the block that makes it ends (a name made
        in one arm or one loop body is not that value on every path after it). `surely`:
        where it may stop, on some path (an assignment in an arm counts too, unless it is of
        the same array in numpy: a write, copy on write, or an alias carried along).

        In a block, a name given no other value after `s` and read after the block (the
        outermost one around `s`) holds the value to the end: its last read would only rank
        it against the other names that carry the array out of the block, which all hold
        it as long (`x = a0` in an arm, both read after the branch). `best` then takes the
        name the class was read by before the branch (`prefer`), as the reads after the
        branch do (split_reads asks `y is a` for that name `a`)."""
        here, mine = self.order[id(s)], self.path[id(s)]
        if self.assigned.get(m) == [(-1, ())]:
            return _INF  # (a parameter never assigned: the caller holds it to the end)
        later = [o for o, where in self.assigned.get(m, ())
                 if o > here and (surely and o not in self.same_array or all(
                     runs for _, _, runs in where[_common(where, mine):]))]
        # (a block's end is after its last statement: a name the next trip or the block's
        # end takes the value from outlives one the body's last statement assigns)
        for loop in self.loops[id(s)]:
            if any(self.order[id(loop)] <= o <= here for o, _ in self.assigned.get(m, ())):
                later.append(self.span[(id(loop), 0, True)] + 0.5)
        if self.scope.get(m) and self.span[self.scope[m][-1]] >= here:
            # (only from inside that block: after it, the value read is the one it left)
            later.append(self.span[self.scope[m][-1]] + 0.5)
        if not later and mine and self.last_read.get(m, -1) > self.ends[mine[0][0]]:
            return _INF  # (read after the block, never given another value: see above)
        later.append(self.last_read.get(m, -1))  # (read no more after that)
        return min(later)

    def unbound(self, n: str, s) -> bool:
        """Is `n` certainly unbound when `s` starts: assigned only later in program order,
        and not in a loop around `s` (an earlier trip)?"""
        here = self.order[id(s)]
        inside = [(self.order[id(loop)], self.span[(id(loop), 0, True)])
                  for loop in self.loops[id(s)]]
        return all(o > here and not any(lo <= o <= hi for lo, hi in inside)
                   for o, _ in self.assigned.get(n, [(-1, ())]))

    def best(self, names, s) -> str:
        """The name of `names` expected to keep its value longest from `s`: on every path
        first (`b = a; ...; if c: b = t`: a, through which the array is read after the branch
        on every path), then on some path; on a tie, one of `prefer`, the oldest, the first
        by spelling."""
        return max(sorted(names), key=lambda m: (self.kept_until(m, s, True),
                                                 self.kept_until(m, s), m in self.prefer,
                                                 -min(self.assigned.get(m, [(_INF,)]))[0]))


# A state: name -> (the names certainly bound to the same object, the one to read it by,
# the weak ones); only names in classes of two or more. A weak name may be unbound where
# the others are bound (it joined where a path that never binds it joins one that binds it
# to the class: `_meet_unbound`), so it is never the one to read the others by; the others
# are bound together, and whenever a weak one is.

_NONE: frozenset = frozenset()


def _set(out: dict, members: frozenset, rep: str, weak: frozenset = _NONE) -> None:
    for m in members:
        out[m] = (members, rep, weak & members)


def _drop(out: dict, members) -> None:
    for m in members:
        out.pop(m, None)


def _without(state: dict, v: str, prog: _Program, s) -> dict:
    """`state` after `v` is given a value of its own at `s`."""
    if v not in state:
        return state
    members, rep, weak = state[v]
    out = dict(state)
    del out[v]
    rest = members - {v}
    strong = rest - weak
    if len(rest) > 1 and strong:
        _set(out, rest, rep if rep != v else prog.best(strong, s), weak)
    else:
        _drop(out, rest)
    return out


def _with_copy(state: dict, v: str, a: str, prog: _Program, s) -> dict:
    """`state` after `v = identity(a)` (`s`): both are bound from here."""
    out = _without(state, v, prog, s)
    members, rep, weak = out.get(a, (frozenset((a,)), a, _NONE))
    out = dict(out)
    _set(out, members | {v}, prog.best((rep, v), s), weak - {a, v})
    return out


def _meet(s1: dict, s2: dict, prog: _Program, s) -> dict:
    """Names that are one object in both states (where they join, after `s`)."""
    out = {}
    for n, (c1, r1, w1) in s1.items():
        if n in out or n not in s2:
            continue
        c2, r2, w2 = s2[n]
        both = c1 & c2
        weak = (w1 | w2) & both
        strong = both - weak
        if len(both) > 1 and strong:
            _set(out, both, r1 if r1 == r2 and r1 in strong else prog.best(strong, s), weak)
    return out


def _meet_unbound(s1: dict, s2: dict, w1: set, w2: set, prog: _Program, s) -> dict:
    """`_meet`, where the names of `w1` are certainly unbound on the first path (those of
    `w2` on the second): a read of one after the join runs only where it was bound, on the
    other path, so it may join the class it has there (`for ...: v11 = v4` in a loop that
    may run no trip, `if c: w = a`), as a weak member -- or, a class of such names alone,
    as one of their own."""
    out = _meet(s1, s2, prog, s)
    for other, wild in ((s2, w1), (s1, w2)):
        seen = set()
        for c, r, weak in other.values():
            if c in seen or not c & wild:
                continue
            seen.add(c)
            w, bound = (c & wild) - weak, c - wild
            if not bound:
                if len(w) > 1 and not any(m in out for m in w):
                    _set(out, w, r if r in w else prog.best(w, s))
                continue
            strong = bound - weak  # (bound together with w, on the other path)
            if not strong or any(m in out for m in w):
                continue
            anchor = r if r in strong else prog.best(strong, s)
            members, rep, was = out.get(anchor, (frozenset((anchor,)), anchor, _NONE))
            _set(out, members | w, rep, was | w)
    return out


def _keep_reps(state: dict, before: dict) -> dict:
    """`state`, each class read by the name `before` reads it by where that is one of its
    strong members."""
    out = dict(state)
    for n, (c, r, weak) in state.items():
        old = before.get(n, (None, None))[1]
        if old is not None and old != r and old in c - weak:
            _set(out, c, old, weak)
    return out


def _assigned_in(stmts) -> set:
    return {d for t in ir.walk(stmts) for d in ir.defs(t)}


def _members(state: dict) -> dict:
    return {n: c for n, (c, _, _) in state.items()}


class _MustAlias:
    """For each statement, the classes of names certainly bound to one object before it
    runs (a forward must-alias analysis over identity copies; loops to a fixed point of
    the classes), each with its representative."""

    def __init__(self, copy_op, prog: _Program):
        self.copy = copy_op
        self.prog = prog
        self.before: dict[int, dict] = {}  # id(stmt) -> state before it
        self.after: dict[int, dict] = {}  # id(copy) -> state after it (the last pass's)

    def block(self, body, state: dict) -> dict:
        for s in body:
            state = self.stmt(s, state)
        return state

    def stmt(self, s, state: dict) -> dict:
        self.before[id(s)] = state
        prog = self.prog
        if isinstance(s, ir.Call):
            src = s.args.get("x") if s.op is self.copy and not s.scope else None
            if isinstance(src, ir.Var) and src.name != s.target:
                self.after[id(s)] = _with_copy(state, s.target, src.name, prog, s)
                return self.after[id(s)]
            return _without(state, s.target, prog, s)
        if isinstance(s, ir.UserCall):
            for t in s.targets:
                state = _without(state, t, prog, s)
            return state
        if isinstance(s, ir.If):
            # (a class an arm makes again is read by the name it was read by before the
            # branch, where that name holds the array as long as the others: kept_until)
            outer = prog.prefer
            prog.prefer = outer | {r for _, r, _ in state.values()}
            try:
                first, second = self.block(s.body, state), self.block(s.orelse, state)
            finally:
                prog.prefer = outer
            new = {n for n in _assigned_in(s.body) ^ _assigned_in(s.orelse)
                   if prog.unbound(n, s)}
            return _meet_unbound(first, second, new - _assigned_in(s.body),
                                 new - _assigned_in(s.orelse), prog, s)
        if isinstance(s, (ir.For, ir.While)):
            head = state
            # (a loop of one trip, `for i in range(1)`: that trip starts from the classes
            # before it -- `a0 = x` before it, `np.tanh(a0)` in it reads x)
            once = isinstance(s, ir.For) and _runs(s) == 1 and not s.exits
            for _ in range(20):  # (the classes only shrink: a few rounds)
                if once:
                    break
                if isinstance(s, ir.For):
                    end = self.block(s.body, _without(head, s.target, prog, s))
                else:
                    cond = self.block(s.cond_body, head)
                    end = self.block(s.body, cond)
                new = _meet(state, end, prog, s)
                if _members(new) == _members(head):
                    break
                head = new
            else:
                raise AssertionError("internal: alias classes of a loop did not settle")
            # once more, a class made again in the body read by the name the trips start
            # with where both keep the array as long (`v = a` at the end of a trip)
            outer = prog.prefer
            prog.prefer = outer | {r for _, r, _ in head.values()}
            try:
                return self.leave(s, state, head)
            finally:
                prog.prefer = outer
        return state

    def leave(self, s, state: dict, head: dict) -> dict:
        """The last pass over loop `s` from its classes at the start of a trip `head`
        (`state`: before the loop): the classes after it."""
        prog = self.prog
        if isinstance(s, ir.While):
            new = {n for n in _assigned_in(s.body) if prog.unbound(n, s)}
            out = None
            if new and not s.exits:
                # (a name first bound in the body -- `a7 = x` -- is read after the loop only
                # where a trip bound it: it leaves with the class a trip's end gave it, as a
                # weak member. This pass goes first: the last records every trip's states)
                end = self.block(s.body, self.block(s.cond_body, head))
                out = self.block(s.cond_body, _meet_unbound(state, end, new, set(), prog, s))
            cond = self.block(s.cond_body, head)
            end = self.block(s.body, cond)
            if out is not None:
                return out
            return _meet(cond, end, prog, s) if s.exits else cond
        last, trips = None, _runs(s)
        if trips and not s.exits:
            # (a constant number of trips: the last starts where the one before it ended,
            # not at any trip's start -- `v4 = v1; v1 = x` leaves v4 and v1 both x after
            # the second, `v3 = a0; a0 = f(a0)` leaves v3 the array a0 held before a
            # loop of one trip. A few trips are followed from the state before the loop,
            # more from `head`, which every trip's start has. The passes below record the
            # states every trip has, so these go first)
            last = state if trips <= 4 else head
            for _ in range(trips if trips <= 4 else 2):
                last = self.block(s.body, _without(last, s.target, prog, s))
        end = self.block(s.body, _without(head, s.target, prog, s))
        # (a loop certainly run, over a constant range: it ends where its last trip does,
        # read by the name the trips read it by where it can)
        if _runs(s):
            return _keep_reps(end if last is None else last, head)
        new = {n for n in _assigned_in(s.body) if prog.unbound(n, s)}
        return _meet_unbound(state, end, new, set(), prog, s) if new else head


def _runs(loop: ir.For) -> int:
    """How many trips the loop certainly runs: its length over a constant range with no
    limit, else 0."""
    bounds = [loop.start, loop.stop, loop.step]
    if loop.limit is not None or not all(
            isinstance(b, ir.Const) and type(b.value) is int for b in bounds if b is not None):
        return 0
    start, stop, step = (None if b is None else b.value for b in bounds)
    return len(range(start or 0, stop, step or 1)) if stop is not None else 0


def _rewritten(atom, names: dict):
    if isinstance(atom, ir.Var):
        return ir.Var(names[atom.name]) if atom.name in names else atom
    if isinstance(atom, ir.Seq):
        return ir.Seq(tuple(_rewritten(a, names) for a in atom.items), atom.kind)
    if isinstance(atom, ir.Index):
        return ir.Index(tuple(_rewritten(p, names) for p in atom.parts), atom.is_tuple)
    if isinstance(atom, ir.Slice):
        return ir.Slice(*(None if a is None else _rewritten(a, names)
                          for a in (atom.lower, atom.upper, atom.step)))
    return atom


def share_reads(body: list, params) -> list:
    """Make each read of an object that several names certainly hold through its class's
    representative (see the comment above). Only the names statements read change; no
    statement is added or removed, and every read gets the very object it got before."""
    copy = table.lookup(control.identity)
    if not any(isinstance(s, ir.Call) and s.op is copy for s in ir.walk(body)):
        return body
    flow = _MustAlias(copy, _Program(body, params))
    flow.block(body, {})
    for s in ir.walk(body):
        # (not a branch's test nor a loop's bounds: the backward reads them again, where the
        # name the normaliser snapshotted them under still holds them and another may not)
        state = flow.before.get(id(s))
        if not state or not isinstance(s, (ir.Call, ir.Effect, ir.UserCall, ir.Return)):
            continue
        names = {n: state[n][1] for n in ir.uses(s) if n in state and state[n][1] != n}
        if isinstance(s, ir.Call):  # (never `v = identity(v)`)
            names = {k: v for k, v in names.items() if v != s.target}
        if not names:
            continue
        if isinstance(s, (ir.Call, ir.Effect)):
            s.args = {k: _rewritten(a, names) for k, a in s.args.items()}
        elif isinstance(s, ir.UserCall):
            s.args = [_rewritten(a, names) for a in s.args]
        elif isinstance(s, ir.Return):
            s.value = _rewritten(s.value, names)
    return body


# -- one array, one name to read it by, where the names are one array on some runs only ---------
#
# `y = a` copied where `y` is given other values later (`y = a` before `while ...: y = f(y)`,
# a copy in one arm or in a loop) makes `y` the array `a` on some paths or trips only, which
# the code cannot know statically: source mode would sum the contributions read through `y`
# in y's adjoint and add that into a's where the copy was made, while the tape's one Tensor
# sums every contribution in the order the backward reaches it -- the same sum in another
# association order. Where `a` is certainly bound (a parameter, or a name assigned at the
# top level before) and `y` may hold a's array but need not, a statement reading `y` asks at
# run time (the names certainly one array are share_reads'); where `a` is given another
# value later, reading it adds to the adjoint of the value it has there, the same array:
#
#     y = identity(a)                    y = identity(a)
#     while ...:                         while ...:
#         d = a / y                          y_is_a = y is a
#         s = y + d                          if y_is_a:
#         y = 0.5 * s                            d = a / a
#                                                s = a + d
#                                            else:
#                                                d = a / y
#                                                s = y + d
#                                            y = 0.5 * s
#
# On the trip where `y` is `a` every read is one of `a`: one adjoint, the tape's order. The
# two arms compute the same values (an `is` test never changes a value).


class _MayHold:
    """For each statement, the names that may hold the object of a stable name `a` before
    it runs (a forward may-alias flow over identity copies: union where paths join)."""

    def __init__(self, copy_op, a: str, must: "_MustAlias"):
        self.copy, self.a = copy_op, a
        self.must = must  # (the names certainly one object, after each copy)
        self.before: dict[int, frozenset] = {}

    def block(self, body, state: frozenset) -> frozenset:
        for s in body:
            state = self.stmt(s, state)
        return state

    def stmt(self, s, state: frozenset) -> frozenset:
        self.before[id(s)] = self.before.get(id(s), frozenset()) | state
        if isinstance(s, ir.Call):
            src = s.args.get("x") if s.op is self.copy and not s.scope else None
            if s.target == self.a and isinstance(src, ir.Var) and src.name != self.a:
                # (`a = y`: y holds a's array from here, and so does every name certainly
                # y's object there: `v2 = v2_setitem; x = v2; v3 = x` -- v2 and x too)
                same = _after(self.must, s).get(self.a, (frozenset(),))[0]
                return frozenset((src.name,)) | (same - {self.a})
            if isinstance(src, ir.Var) and (src.name == self.a or src.name in state):
                return state | {s.target}
            return state - {s.target}
        if isinstance(s, ir.UserCall):
            return state - set(s.targets)
        if isinstance(s, ir.If):
            return self.block(s.body, state) | self.block(s.orelse, state)
        if isinstance(s, (ir.For, ir.While)):
            head = state
            for _ in range(50):  # (the sets only grow)
                if isinstance(s, ir.For):
                    end = self.block(s.body, head - {s.target})
                else:
                    cond = self.block(s.cond_body, head)
                    end = self.block(s.body, cond)
                new = state | end
                if new == head:
                    break
                head = new
            else:
                raise AssertionError("internal: may-alias sets of a loop did not settle")
            if isinstance(s, ir.For):
                return head
            return self.block(s.cond_body, head) | (end if s.exits else frozenset())
        return state


def split_reads(body: list, params, fresh) -> list:
    """Reads of a name that may (not must) hold a stable name's array made through that
    name when it does, asked at run time (see the comment above)."""
    copy = table.lookup(control.identity)
    same = table.lookup(control.same_object)
    top = set(params) | {d for s in body for d in ir.defs(s)
                         if not isinstance(s, (ir.If, ir.For, ir.While))}
    copies = [s for s in ir.walk(body) if isinstance(s, ir.Call) and s.op is copy
              and not s.scope and isinstance(s.args.get("x"), ir.Var)
              and s.args["x"].name != s.target]
    # (either side of a copy: `y = a` and `a = y` both leave y holding a's array)
    # (a name bound at the top level to a value, not a placeholder -- `result = None`,
    # which the desugared early return fills in an arm -- and copied into in an arm later:
    # `a0 = v1` on one arm, `a0` read in a later loop)
    valued = {s.target for s in body if isinstance(s, ir.Call) and not (
        s.op is copy and isinstance(s.args.get("x"), ir.Const))}
    level = {id(t) for t in body}
    sources = {s.args["x"].name for s in copies if s.args["x"].name in top} | {
        s.target for s in copies if (id(s) in level or s.target in valued)
        and s.target not in params}
    # ids of the branches made here, or by an earlier split_reads (transform/arrays.py runs
    # it again per specialisation): not split again -- one test a read
    made: set = {id(s) for s in ir.walk(body) if isinstance(s, ir.If) and isinstance(
        s.test, ir.Var) and s.test.name in {t.target for t in ir.walk(body) if isinstance(
            t, ir.Call) and t.op is same}}
    for a in sorted(sources):
        prog = _Program(body, params)
        must = _MustAlias(copy, prog)
        must.block(body, {})
        flow = _MayHold(copy, a, must)
        flow.block(body, frozenset())
        if not all(_after(must, c).get(a, (None, None, None))[1] in (a, None)
                   for c in ir.walk(body) if isinstance(c, ir.Call) and c.op is copy
                   and not c.scope and isinstance(c.args.get("x"), ir.Var)
                   and id(c) in must.before
                   and (c.args["x"].name == a or c.args["x"].name in flow.before[id(c)]
                        or c.target == a)
                   and not _class_ends_straight(body, c, must)):
            continue  # (where the copy is certainly `a`, its reads go through another name)
        for s in ir.walk(body):  # (names certainly `a` there: share_reads' business)
            state = must.before.get(id(s), {})
            if id(s) in flow.before and a in state:
                flow.before[id(s)] = flow.before[id(s)] - state[a][0]
        for s in ir.walk(body):  # (only where `a` is bound)
            if id(s) in flow.before and not _bound(prog, a, s):
                flow.before[id(s)] = frozenset()
        _split_block(body, a, flow, same, fresh, made)
    return body


def _after(must: "_MustAlias", c) -> dict:
    """The classes after the copy `c` as the flow's last pass found them (`v = identity(v)`
    copies nothing: as if a copy of another name)."""
    found = must.after.get(id(c))
    if found is None:
        found = _with_copy(must.before[id(c)], c.target, c.args["x"].name, must.prog, c)
    return found


def _class_ends_straight(body: list, c, must: "_MustAlias") -> bool:
    """Is `c` a top-level copy whose names are all given other values before the next
    branch or loop? (Its representative then matters to the straight-line reads between,
    which are certain and never split, and to nothing after.)"""
    i = next((k for k, t in enumerate(body) if t is c), None)
    if i is None:
        return False
    members = _after(must, c).get(c.target, (frozenset(), None, None))[0]
    rebound: set = set()
    for t in body[i + 1:]:
        if isinstance(t, (ir.If, ir.For, ir.While)):
            break
        rebound.update(ir.defs(t))
    return bool(members) and members <= rebound


def _bound(prog: _Program, a: str, s) -> bool:
    """Is `a` certainly bound when `s` runs: assigned at the top level before it (or a
    parameter)? (Its value there need not be its last: where `y` is `a`, reading `a` adds to
    the adjoint of the value `a` has there, as the tape's Tensor for that array does.)"""
    here = prog.order[id(s)]
    return any(where == () and o < here for o, where in prog.assigned.get(a, ()))


def _split_block(stmts: list, a: str, flow: _MayHold, same, fresh, made: set) -> None:
    i = 0
    while i < len(stmts):
        s = stmts[i]
        for sub in (getattr(s, "body", None), getattr(s, "orelse", None),
                    getattr(s, "cond_body", None)):
            if isinstance(sub, list) and id(s) not in made:
                _split_block(sub, a, flow, same, fresh, made)
        y = _aliased_read(s, a, flow)
        if y is None:
            i += 1
            continue
        # the statements after it, up to one that assigns y or a: the last one that reads
        # y, or a value made in the group (so that no temporary crosses the branch)
        group, end = [s], 1
        defined = set(ir.defs(s))
        while y not in ir.defs(group[-1]) and a not in ir.defs(group[-1]) \
                and i + len(group) < len(stmts) \
                and isinstance(stmts[i + len(group)], (ir.Call, ir.UserCall, ir.Effect)):
            t = stmts[i + len(group)]
            if t.__class__ is ir.Call and t.op is same:
                break
            group.append(t)
            if y in ir.uses(t) or defined & set(ir.uses(t)):
                end = len(group)
            defined |= set(ir.defs(t))
        group = group[:end]
        test = fresh(f"{y}_is_{a}")
        line = s.line
        first = [_renamed_copy(t, y, a) for t in group]
        branch = ir.If(ir.Var(test), first, group, line)
        made.add(id(branch))
        stmts[i:i + len(group)] = [ir.Call(test, same, {"a": ir.Var(y), "b": ir.Var(a)}, line),
                                   branch]
        i += 2


def _aliased_read(s, a: str, flow: _MayHold):
    """The one name other than `a` that `s` reads and that may hold a's array, or None (an
    Effect: no adjoint, nothing to split)."""
    if not isinstance(s, (ir.Call, ir.UserCall)):
        return None
    if isinstance(s, ir.Call) and s.op.name == "same_object":
        return None
    may = flow.before.get(id(s), frozenset())
    names = {n for n in ir.uses(s) if n in may and n != a}
    return names.pop() if len(names) == 1 else None


def _renamed_copy(s, old: str, a: str):
    """`s` again, reading `a` where it reads `old`."""
    new = ir.Var(a)
    if isinstance(s, ir.UserCall):
        return dataclasses.replace(s, args=[_rename(v, old, new) for v in s.args])
    return dataclasses.replace(s, args={k: _rename(v, old, new) for k, v in s.args.items()})
