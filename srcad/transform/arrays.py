"""Aliases of arrays, per specialisation: `alias_again` made a plain copy where the shapes
show its old value was an array, and a write through a scalar copy dropped.

`b = a; a op= t` rebinds `b` to the new value only where `a` held an array (numpy writes
into it); a scalar `a` is rebound and `b` keeps the old value. The normaliser cannot tell
the two apart, so it writes `b = alias_again(a_new, b)` (srcad/frontend/aliasing.py), which
picks at run time -- and is no copy for frontend/aliases.py: the two names are not known to
be one array after it, so each gets an adjoint of its own, and the backward adds their
contributions in another order than the tape's one Tensor (the same sum, other last bits).

The probe knows which: where `b` certainly holds an array (of one dimension or more) when
`alias_again` runs, the statement is `b = identity(a_new)`, and the names certainly one
array again read it through one name (`share_reads`, `split_reads` run again). The IR is
shared between specialisations, so this is done on a copy (`with_array_aliases`), made only
where a statement changes; `origin` maps each copied statement back to the one it copies
(the memory-budget planner names user calls and loops by the original's id).

    a0 = identity(x)                         a0 = identity(x)
    if c:                                    if c:
        a0_op = a0 * 1.1                         a0_op = a0 * 1.1
        a0 = in_layout(a0_op, a0)                a0 = in_layout(a0_op, a0)
        x = alias_again(a0, x)                   x = identity(a0)
    out = sin(x) + a0                        out = sin(a0) + a0      (x: float64[3, 4])

Likewise `e = x[1, -1]; e += 3` writes into x only if e is an array (a row of a 3-d x), not a
scalar copy: the normaliser writes `x_L2 = write_through(x, (1, -1), e, e_L1)` and makes the
views of x again from x_L2 (ir.Call.undo marks that group). Where the probe saw a scalar,
each name of the group keeps its value from before (`identity`), so `t = x.T` read later is
the t made before, and its adjoint reaches x where the tape's does (the tape never sees a
view there).
"""

from __future__ import annotations

import dataclasses

from .. import ir
from ..frontend.aliases import share_reads, split_reads
from ..frontend.opaque import is_opaque
from ..naming import fresh
from ..ops import control, table

# ops that make an array of one dimension or more of one (their first operand)
_PASSES = ("copy", "in_layout", "setitem", "write_through", "transpose", "swapaxes",
           "moveaxis", "rollaxis", "matrix_transpose", "linalg_matrix_transpose", "flip",
           "fliplr", "flipud", "rot90", "ravel", "atleast_1d", "atleast_2d", "atleast_3d",
           "expand_dims", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray",
           "np_astype", "astype_shared")


class _Arrays:
    """For each statement, the names certainly bound to a numpy array of one dimension or
    more before it runs (a forward must flow: intersection where paths join, loops to a
    fixed point)."""

    def __init__(self, infos: dict, numeric: set, arrays0d=frozenset(), sites=None):
        self.infos = infos
        self.numeric_names = numeric
        self.arrays0d = arrays0d  # (names the probe saw hold 0-d arrays, never a number)
        self.sites = sites or {}  # (what each statement made, where every path agrees)
        self.maybe_0d: set = set(arrays0d)  # (note_0d)
        self.before: dict[int, frozenset] = {}

    def known(self, name: str) -> bool:
        info = self.infos.get(name)
        return info is not None and info.dtype is not None and (
            info.ndim > 0 or name in self.arrays0d)

    def numeric(self, atom, state) -> bool:
        if isinstance(atom, ir.Var):
            return atom.name in state or atom.name in self.numeric_names
        return _number(atom)

    def made(self, s: ir.Call, state: frozenset) -> bool:
        """Is the value `s` makes certainly such an array?"""
        if self.known(s.target) or self.sites.get(id(s)) in ("0d", "array"):
            return True
        args = list(s.args.values())
        first = args[0] if args else None
        if s.op.name in _PASSES or s.op.name == "alias_again":
            return isinstance(first, ir.Var) and first.name in state and (
                s.op.name != "alias_again" or _var_in(s.args.get("old"), state))
        if s.op.elementwise and s.op.name != "where":  # (`np.where(c)`: a tuple)
            # (an array operand of one dimension or more: an array out -- a ufunc of 0-d
            # arrays gives a number)
            return any(isinstance(a, ir.Var) and a.name in state and a.name not in
                       self.maybe_0d for a in args) and \
                all(self.numeric(a, state) for a in args)
        return False

    def note_0d(self, body) -> None:
        """`maybe_0d`: the names that may hold a 0-d array -- the probe's, and what an op
        that keeps its operand's array makes from one (flow-insensitive, to a fixed point)."""
        calls = [s for s in ir.walk(body) if isinstance(s, ir.Call)]
        self.maybe_0d = set(self.arrays0d) | {s.target for s in calls
                                              if self.sites.get(id(s)) == "0d"}
        for _ in range(20):
            grown = {s.target for s in calls if s.target not in self.maybe_0d and (
                s.op.name in _PASSES or s.op.name == "alias_again") and any(
                    isinstance(a, ir.Var) and a.name in self.maybe_0d
                    for a in s.args.values())}
            if not grown:
                break
            self.maybe_0d |= grown

    def block(self, body, state: frozenset) -> frozenset:
        for s in body:
            state = self.stmt(s, state)
        return state

    def stmt(self, s, state: frozenset) -> frozenset:
        self.before[id(s)] = state  # (a loop's last pass runs from its fixed point)
        if isinstance(s, ir.Call):
            return state | {s.target} if self.made(s, state) else state - {s.target}
        if isinstance(s, ir.UserCall):
            return (state - set(s.targets)) | {t for t in s.targets if self.known(t)}
        if isinstance(s, ir.If):
            return self.block(s.body, state) & self.block(s.orelse, state)
        if isinstance(s, (ir.For, ir.While)):
            head = state
            for _ in range(50):  # (the sets only shrink)
                if isinstance(s, ir.For):
                    end = self.block(s.body, head - {s.target})
                else:
                    end = self.block(s.body, self.block(s.cond_body, head))
                new = state & end
                if new == head:
                    break
                head = new
            if isinstance(s, ir.For):
                return (head - {s.target}) | ({s.target} if self.known(s.target) else set())
            done = self.block(s.cond_body, head)  # (the test false; or an exit flag set)
            return done & end if s.exits else done
        return state


def _number(atom) -> bool:
    return isinstance(atom, ir.Const) and type(atom.value) in (int, float, bool)


def _numeric(fn: ir.Function, infos: dict, params: set) -> set:
    """Names certainly bound to a number or a numpy value (an array, a scalar; or what a
    numpy function returns of them) whenever they are read: every assignment of them is an
    op-table call on such values and constants (not an opaque call: a user object may come
    out), or a loop's counter, or the probe saw a number in each (an Info). `params`: the
    parameters that start as one."""
    sites: dict = {}
    for s in ir.walk(fn.body):
        for d in ir.defs(s):
            sites.setdefault(d, []).append(s)
    names = {n for n in sites if n in infos or all(
        isinstance(s, ir.For) or isinstance(s, ir.Call) and not is_opaque(s.op)
        for s in sites[n])}
    names |= {p for p in params if p not in sites}
    names -= {p for p in fn.params if p not in params and p not in infos}
    changed = True
    while changed:
        changed = False
        for n in list(names):
            if n not in infos and any(isinstance(s, ir.Call) and not all(
                    v in names for a in s.args.values() for v in ir.atom_vars(a))
                    for s in sites.get(n, ())):
                names.discard(n)
                changed = True
    return names


def _var_in(atom, state) -> bool:
    return isinstance(atom, ir.Var) and atom.name in state


def _copy(stmts: list, origin: dict) -> list:
    out = []
    for s in stmts:
        if isinstance(s, ir.If):
            c = dataclasses.replace(s, body=_copy(s.body, origin),
                                    orelse=_copy(s.orelse, origin))
        elif isinstance(s, ir.For):
            c = dataclasses.replace(s, body=_copy(s.body, origin), exits=list(s.exits))
        elif isinstance(s, ir.While):
            c = dataclasses.replace(s, cond_body=_copy(s.cond_body, origin),
                                    body=_copy(s.body, origin), exits=list(s.exits))
        else:
            c = dataclasses.replace(s)
        origin[id(c)] = s
        out.append(c)
    return out


def _scalar(atom, infos: dict, arrays0d=frozenset()) -> bool:
    """Is `atom` certainly a scalar (a numpy or Python number, no array) whenever it is read?
    (Not a 0-d array, `x[..., 1, -1]`: a view, written through.)"""
    info = infos.get(atom.name) if isinstance(atom, ir.Var) else None
    return info is not None and info.ndim == 0 and atom.name not in arrays0d


def _scalar_copies(fn: ir.Function, infos: dict, arrays0d=frozenset()) -> dict:
    """{id(statement): its new args (an `identity`)} for the writes through a scalar copy
    (`e = x[1, -1]; e += 3`, the normaliser's `write_through` group, ir.Call.undo) the shapes
    show to write nothing: each name the group rebinds keeps its value from before; and for
    `view_again` of such a copy, which is the copy."""
    groups: dict = {}
    out: dict = {}
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Call) and s.undo is not None:
            groups.setdefault(s.undo[0], []).append(s)
        elif isinstance(s, ir.Call) and s.op.name == "view_again" and _scalar(
                s.args.get("view"), infos, arrays0d):
            out[id(s)] = {"x": s.args["view"]}
    for members in groups.values():
        head = members[0]
        if head.op.name == "write_through" and _scalar(head.args.get("view"), infos,
                                                       arrays0d) and all(
                s.undo[1] is not None for s in members):
            out.update((id(s), {"x": s.undo[1]}) for s in members)
    return out


def _copied_put_backs(fn: ir.Function, infos: dict) -> dict:
    """{id(statement): its new args (an `identity` of the container)} for the put-back of a
    write through an item (`H[dst][:, 1] = v`, pylower's `item = H[dst]; item[:, 1] = v; H[dst]
    = item`) where the shapes show `dst` an array: numpy's advanced index gave a copy, the
    write went into it, and H is left as it was."""
    out = {}
    for s in ir.walk(fn.body):
        if not (isinstance(s, ir.Call) and getattr(s, "put_back", False)):
            continue
        index = s.args.get("index")
        parts = index.parts if isinstance(index, ir.Index) else (index,)
        if any(isinstance(p, ir.Var) and (i := infos.get(p.name)) is not None and
               i.dtype is not None and i.ndim > 0 for p in parts):
            out[id(s)] = {"x": s.args["x"]}
    return out


def _drop_self_copies(stmts: list, copy_op, same: dict | None = None) -> None:
    """Remove `v = identity(w)` where `v` is already bound to w's object: it does nothing
    (`v = identity(v)`, a name of a loop or a branch that keeps its value when a write
    through a scalar copy is dropped; `s2 = identity(n4)` where an `alias_again` of a number
    became the old value and s2 was n4 before). Kept, its backward would add dv into dw
    there, a second sum for one object where the tape has one Tensor. `same`: name -> the
    set of names certainly bound to its object before `stmts` (copies seen in this block,
    or before a branch; a loop's body starts without the names the loop assigns)."""
    same = {} if same is None else same

    def forget(name):
        group = same.pop(name, None)
        if group is not None:
            group.discard(name)

    kept = []
    for s in stmts:
        if isinstance(s, ir.Call) and s.op is copy_op and not s.scope and isinstance(
                x := s.args.get("x"), ir.Var):
            if x.name == s.target or s.target in same.get(x.name, ()):
                continue
            forget(s.target)
            group = same.setdefault(x.name, {x.name})
            group.add(s.target)
            same[s.target] = group
            kept.append(s)
            continue
        kept.append(s)
        if isinstance(s, ir.If):
            for block in (s.body, s.orelse):
                _drop_self_copies(block, copy_op, _copy_groups(same))
        elif isinstance(s, (ir.For, ir.While)):
            assigned = {d for t in ir.walk([s]) for d in ir.defs(t)}
            for block in (s.body, getattr(s, "cond_body", None)):
                if isinstance(block, list):
                    _drop_self_copies(block, copy_op, _copy_groups(same, assigned))
        for d in {d for t in ir.walk([s]) for d in ir.defs(t)}:
            forget(d)
    stmts[:] = kept


def _copy_groups(same: dict, without=frozenset()) -> dict:
    """A copy of `_drop_self_copies`' groups, less the names of `without`."""
    out: dict = {}
    for name, group in same.items():
        if name not in without and name not in out:
            new = set(group) - set(without)
            for m in new:
                out[m] = new
    return out


def with_array_aliases(fn: ir.Function, infos: dict, entry: dict, arrays0d=frozenset(),
                       numbers=frozenset(), sites=None) -> tuple[ir.Function, dict]:
    """`fn`, or a copy of it with each `alias_again` whose old value is certainly an array
    made a copy (see the module docstring), and each write through a scalar copy dropped
    (`_scalar_copies`); and {id(copied statement): original}. `infos`: the probe's Info of
    each name (of every value it takes); `entry`: the parameters'; `arrays0d`: the names the
    probe saw hold a 0-d array every time (`x[..., 1, 2]`: written in place, as an array
    of more dimensions is -- an Info of shape () does not tell it from a number);
    `numbers`, those it saw hold a number every time (an `alias_again` of one keeps it:
    `n5 = s1; n6 = s1; n6 += 2.0` leaves s1 and n5 one number, read by one name);
    `sites`, the kind of value each statement made every time it ran, where every path
    agrees on what it reads (`v2 = x[..., 1, 2]` before a branch that rebinds v2: a 0-d
    array there, which v2's Info, unknown after the branch, cannot say)."""
    if not (infos or entry):
        return fn, {}
    hits = _scalar_copies(fn, infos, arrays0d)
    hits.update(_copied_put_backs(fn, infos))
    if any(isinstance(s, ir.Call) and s.op.name == "alias_again" for s in ir.walk(fn.body)):
        arrays = {p for p in fn.params if (i := infos.get(p, entry.get(p))) is not None
                  and i.dtype is not None and (i.ndim > 0 or p in arrays0d)}
        flow = _Arrays(infos, _numeric(fn, infos, {p for p in fn.params
                                                   if p in infos or p in entry}), arrays0d,
                       sites)
        flow.note_0d(fn.body)
        flow.block(fn.body, frozenset(arrays))
        hits.update((id(s), {"x": s.args["new"]}) for s in ir.walk(fn.body)
                    if isinstance(s, ir.Call) and s.op.name == "alias_again"
                    and _var_in(s.args.get("old"), flow.before.get(id(s), frozenset()))
                    and isinstance(s.args.get("new"), ir.Var)
                    and s.args["new"].name != s.target)
        hits.update((id(s), {"x": s.args["old"]}) for s in ir.walk(fn.body)
                    if isinstance(s, ir.Call) and s.op.name == "alias_again"
                    and isinstance(s.args.get("old"), ir.Var)
                    and s.args["old"].name in numbers and s.args["old"].name != s.target)
    if not hits:
        return fn, {}
    origin: dict = {}
    body = _copy(fn.body, origin)
    copy_op = table.lookup(control.identity)
    for s in ir.walk(body):
        args = hits.get(id(origin[id(s)]))
        if args is not None:
            s.op, s.args = copy_op, args
    _drop_self_copies(body, copy_op)
    names = set(fn.names)
    new = dataclasses.replace(fn, body=body, names=names)
    new.body = split_reads(share_reads(new.body, fn.params), fn.params,
                           lambda base: fresh(base.strip("_") or "t", names))
    return new, origin
