"""Inline a call to a nested function or lambda into its caller's IR (a mixin).

Input: an `ir.UserCall` of a function lifted out of the one being normalised (closures.py),
with its normalised body. Output: that body, its names renamed apart from the caller's,
spliced into the caller where the call was, and the call's result copied into its target.

Why inline: a closure is part of the function it is written in. Tape mode runs it as part of
that function (no subroutine boundary), and the gradients of the two modes are held equal bit
for bit, so source mode must sum the closure's contributions to a value in the same order --
which is what differentiating the spliced body does. Generated code then reads the closure's
lines in place, each commented with its own source line. (A ``srcad.checkpoint`` of a nested
function stays a call: it is recomputed as a unit.)

Before/after:
    act = lambda v: np.maximum(v, 0.0)        h_act_v = ...            (act's body, renamed)
    h = act(h @ w)                            h = h_act                 (the result)
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import textwrap
import types

import gast
import numpy as np

from .. import ir, runtime
from ..errors import SharingUnknownError
from ..naming import fresh
from ..ops import control, table
from .opaque import is_user_object
from .parse import LIFTED


class InlineMixin:
    """`inline_call`, for the `Normalizer` (normalize.py)."""

    def inline_call(self, call: ir.UserCall, into, hint: str, node, scoped: bool = False
                    ) -> ir.Var:
        """`scoped`: a module-level function spliced in (closure_values.py), whose arrays
        it is given are names of its own, as a subroutine's parameters are: a value's
        adjoint from inside the call is summed there, then added to the caller's, as tape
        mode's fresh Tensors for a user function's arguments sum it."""
        callee = call.callee
        assigned = {d for s in ir.walk(callee.body) for d in ir.defs(s)}
        names, atoms = {}, {}
        copied: dict = {}  # (one array given twice is one name in the callee, as on the tape)
        unscoped = set(getattr(call, "closure_free", ()))  # (what closures close over)
        for p, a in zip(callee.params, call.args):
            if scoped and isinstance(a, ir.Var) and p not in unscoped and \
                    self.closure_of(a) is None:  # (a function is no Tensor on the tape)
                if a.name not in copied:
                    copied[a.name] = ir.Var(self.fresh(p))
                    op, args = self.op_call(control.identity, [a], {}, node)
                    self.body.append(ir.Call(copied[a.name].name, op, args, call.line,
                                             scope=True))
                a = copied[a.name]
            if p in assigned:  # the body assigns its parameter: a name of its own
                names[p] = self.fresh(p)
                op, args = self.op_call(control.identity, [a], {}, node)
                self.body.append(ir.Call(names[p], op, args, call.line))
            else:
                atoms[p] = a
        for n in sorted(assigned - set(callee.params)):
            names[n] = self.fresh(n)
        consts = {}
        for k, obj in callee.inject.items():
            if self.inject.get(k, obj) is not obj or k in self.locals:
                consts[k] = self.fresh(k)
            self.inject[consts.get(k, k)] = obj
            self.taken.add(consts.get(k, k))
        r = _Renamer(names, atoms, consts)
        holders = self.written_holders(call, node)
        self.body.extend(self.caller_effects(r.block(callee.body[:-1]), holders, node))
        self.mutable |= {names[n] for n in callee.mutable if n in names}
        # every name the body assigns in a loop or branch keeps one name for all its values
        for s in ir.walk(callee.body):
            if isinstance(s, (ir.If, ir.For, ir.While)):
                inner = s.body + getattr(s, "orelse", []) + getattr(s, "cond_body", [])
                self.mutable |= {names[d] for x in ir.walk(inner) for d in ir.defs(x)
                                 if d in names}
                if isinstance(s, ir.For) and s.target in names:
                    self.mutable.add(names[s.target])
        value, carried = callee.ret.value, []
        if call.carried:  # (its value, then what it left on objects: user_call)
            value, *atoms = value.items
            carried = [(obj, attr, atom) for (obj, attr), atom in zip(call.carried, atoms)]
        ret = r.atom(value)
        for obj, attr, atom in carried:
            # (what it left on objects -- `Model.calls += 1`, `self.total += v` of an object
            # known here: the caller's reads after the call read it, as after a callee's)
            held = r.atom(atom)
            self.attr_carry[(id(obj), attr)] = (obj, held)
            self.carry_into_local(obj, attr, held, node)
        self.take_closures(getattr(callee, "closures_out", {}), r.atom)
        given = dict(zip(callee.params, call.args))
        for p, final in callee.written.items():  # the caller's names see the written dict
            held = holders.get(p, [])
            if isinstance(held, tuple):  # (an item of a container the caller's name holds)
                slot = dict(self.list_items_of(held[1]) or ()).get(held[2].value) if \
                    isinstance(held[2], ir.Const) else None  # (a computed index: no slot)
                # (`f(model["ps"])` of a list `ps` names too: one object, written)
                sharers = [n for n, atom in self.env.items() if slot is not None and
                           atom == slot and n != held[1] and n in self.locals and
                           n not in self.mutable]
                # (and names bound to another read of the same item -- `a = acts[1]` then
                # `fill(acts[1])`: one array, which `a` shows written -- a read of it put in
                # a container or given on is refused: its holder would keep the old values)
                sharers += [n for n in self.item_readers(
                    held[3], node, arrays=_writes_whole(callee, p)) if n not in sharers and
                    n != held[1]]
                self.store_written_item(held[1], held[2], r.atom(final), node)
                for n in sharers:
                    self.rebind_written(n, r.atom(final), node)
                continue
            items = self.list_items_of_atom(given[p])
            before = self.env.get(held[0]) if held else None
            for n in held:
                self.rebind_written(n, r.atom(final), node)
            after = self.env.get(held[0]) if held else None
            if isinstance(before, ir.Var) and isinstance(after, ir.Var) and \
                    not self.generated:
                # (the object written is one object: a display, a list or a name that holds
                # it -- an object's `self.params` after `self.W[0] += t` in a method, `W`
                # after `m = M(W)` -- sees it too, as after the caller's own `x[i] = v`)
                stmt = next((st for st in reversed(self.body) if isinstance(st, ir.Call)
                             and st.target == after.name), None)
                rebuilt = self.propagate_write(held[0], before, after, node) | set(held)
                # (what else shares the object and is read after: check_mutations refuses)
                if stmt is not None:
                    self.mutations.append((stmt, before.name, node.lineno, False, rebuilt))
            stores = [e for e in ir.walk(callee.body) if isinstance(e, ir.Effect)
                      and e.kind == "setitem" and e.args.get("param") == ir.Const(p, repr(p))]
            through = {s.args.get("value") for s in ir.walk(callee.body)
                       if isinstance(s, ir.Call) and s.op.name == "write_through"}
            in_place = [e for e in stores if "old" in e.args or e.args.get("value") in through]
            if held and items and stores and len(in_place) == len(stores):
                # (`for q in ps: q -= t` or `ps[1] += t` in the callee: the list's arrays
                # written in place, which other names of the caller may hold -- `[W, W]`
                # given, W itself)
                self.refresh_item_holders(held[0], items, node)
            elif held and items and in_place and _writes_a_given_item(callee, p):
                # (and stores besides -- `ps[2] -= t; ps[2] = ps[2] * c`: the name holding
                # the array has the write, the list the stored one)
                olds = [a for _, a in items if isinstance(a, ir.Var)]
                other = next((n for n, atom in self.env.items() if n not in held and
                              n in self.locals and any(self.holds_array(atom, o)
                                                       for o in olds)), None)
                if other is not None:
                    raise self.pf.error(
                        f"`{call.callee.name}` writes in place into an array of the list or "
                        f"dict it is given and stores into it too; `{self.spelled(other)}` "
                        f"holds that array here, and srcad does not carry the write to it",
                        node, cls=SharingUnknownError,
                        hint="read the array back from the container after the call, or "
                        "write through the name")
        for p, final in callee.written_arrays.items():  # the caller's array, written
            held = holders.get(p, [])
            if not held:
                continue
            # (numpy writes an array in place; `p -= t` rebinds a number: the caller's
            # name or item keeps it -- `alias_again` decides when the code runs)
            op, args = self.op_call(runtime.alias_again, [r.atom(final), given[p]], {}, node)
            if isinstance(held, tuple):  # (`fill(p[0])`: p's item -- a row of an array,
                # an array in a list -- written as the user's `p[0] = ...` would; the names
                # bound to another read of that item see it too: `X *= 1.5` in the callee)
                readers = self.item_readers(held[3], node)
                value = self.emit((op, args), self.fresh(f"{held[1]}_item"), node)
                self.store_written_item(held[1], held[2], value, node)
                for n in readers:
                    if n != held[1]:
                        self.rebind_written(n, value, node)
                continue
            n = held[0]  # (its aliases and views follow: write_name_in_place)
            self.write_name_in_place(n, lambda: self.result((op, args), n, (n, node.lineno),
                                                            node), node)
            if isinstance(r.atom(final), ir.Var) and isinstance(self.env.get(n), ir.Var):
                # (the callee's final value of the parameter -- returned, or an object's
                # state a method leaves -- is the caller's array where that holds one)
                self.one_array(r.atom(final), self.env[n])
        if into is None:  # (a tuple stays a tuple of atoms: `a, b = g(x)` binds each)
            return ret
        if isinstance(ret, ir.Var) and into[0] not in self.mutable and \
                ret.name not in self.mutable and any(
                atom == ret and n != into[0] and n in self.locals
                for n, atom in self.env.items()):
            return ret  # (the object a caller's name holds -- `m = M(W1)` keeps W1 in `m.W1`,
            # `y = g(x)` returning x: one array, two names, as `y = x` makes)
        op, args = self.op_call(control.identity, [ret], {}, node)
        out = self.result((op, args), hint, into, node)
        last = self.body[-1] if self.body else None
        if isinstance(ret, ir.Var) and (ret.name in self.mutable or out.name in self.mutable) \
                and isinstance(last, ir.Call) and last.target == out.name and \
                not self.generated:
            # (an array copied under the target's name -- a loop name's, or one copied into a
            # loop name: still that array -- `m = M(W1)` keeps W1 in `m.W1`: check_mutations)
            self.alias_stmts.add(id(last))
            if out.name in self.mutable:
                self.note_copy_holds(out.name, ret)
        return out

    def written_holders(self, call: ir.UserCall, splicing=None) -> dict:
        """{callee parameter it writes into: the caller's names holding the dict passed}
        (`splicing`: the node of the call whose body is being spliced in here)"""
        out = {}
        writes = set(call.callee.written) | set(call.callee.written_arrays)
        for p, a in zip(call.callee.params, call.args):
            if p in writes and isinstance(a, (ir.Var, ir.Seq)):
                names = [n for n, v in self.env.items() if v == a and n in self.locals]
                stuck = [n for n in names if n not in self.mutable and self.body is not
                         getattr(self, "top_body", self.body)]
                if stuck and splicing is not None:
                    # (spliced in a loop or a branch -- `step(w, x, s)` of a layer whose
                    # helper writes `out[:] = w @ x` into `s.logits`: the name holding what
                    # it writes keeps one value there, so the write would be lost, silently;
                    # tape mode runs it on Python's objects)
                    held, fn = self.spelled(stuck[0]), _called_name(call)
                    self.source_refusals.append(self.pf.error(
                        f"`{fn}` writes in place into `{held}`, which it is given in a loop "
                        f"or a branch; srcad would not carry that write to `{held}` there",
                        splicing, cls=SharingUnknownError,
                        hint=f"return the new value from `{fn}` and assign it (`{held} = "
                        f"...`), write it in the loop's own function, or use mode=\"tape\""))
                if stuck:
                    # (in a loop or a branch, a name that does not keep one name for all
                    # its values could not carry the new dict out: left a call, which
                    # check_argument_writes refuses where the caller reads the name after)
                    return {}
                if names:
                    out[p] = names
                elif isinstance(a, ir.Var):
                    # (`fill(p[0], x)`: p's item, written; in a loop, `fill(acts[i + 1])` of
                    # a list the loop carries -- sklearn's in-place activations)
                    item = self.item_of_a_name(a, in_loop=self.body is not getattr(
                        self, "top_body", self.body))
                    if item is not None:
                        out[p] = item
                    elif p in call.callee.written_arrays or _writes_whole(call.callee, p):
                        self.refuse_unheld_item_write(a, call)
        return out

    def item_of_a_name(self, a: ir.Var, in_loop: bool = False):
        """(name, index) where `a` was just read as `name[index]` (a constant index, or a
        name's) from a container a local name holds; else None. In a loop or a branch
        (`in_loop`): only from a list the loop carries under one name (its values all the
        name's), by a constant or a computed index (a list's item: the object itself)."""
        held = [(n, v.items.index(a)) for n, v in self.env.items() if n in self.locals
                and isinstance(v, ir.Seq) and v.kind == "list" and a in v.items
                and n not in self.mutable]
        if len(held) == 1 and not in_loop:  # (`fill(ps[0])` of a list held item by item)
            return ("item", held[0][0], ir.Const(held[0][1], repr(held[0][1])), None)
        made = next((s for s in reversed(self.body) if isinstance(s, ir.Call)
                     and s.target == a.name), None)
        if made is None or made.op.name != "getitem" or not isinstance(made.args.get("a"),
                                                                          ir.Var):
            return None
        index = made.args.get("index")
        parts = index.parts if isinstance(index, ir.Index) else (index,)
        if len(parts) != 1 or isinstance(index, ir.Index) and index.is_tuple:
            return None
        constant = isinstance(parts[0], ir.Const) and type(parts[0].value) in (int, str)
        holders = [n for n, v in self.env.items() if v == made.args["a"] and n in self.locals]
        if constant and not in_loop:
            names = [n for n in holders if n not in self.mutable]
            if names:
                return ("item", names[0], parts[0], made)
        if not (constant or isinstance(parts[0], ir.Var)) or \
                not self.surely_container(made.args["a"]):
            return None
        # (a computed index -- `acts[i + 1]`, in a loop or after it -- of a list or dict: the
        # item is the object itself; in a loop, only a name the loop carries is rebound)
        names = [n for n in holders if n in self.mutable or not in_loop]
        return ("item", names[0], parts[0], made) if len(names) == 1 else None

    def held_beyond_names(self, name: str) -> bool:
        """May the object the caller's name holds be held by more than its names -- put in
        a container or on an object, bound to another name, given to a call that may keep
        it? The function's own uses of the name tell: an item read or stored (`n[k]`),
        `len(n)`, a loop over it, `return n`, or an argument of a user function (followed
        by srcad: a write into it is carried back here) keep it in names only."""
        safe = set()
        for node in gast.walk(self.pf.tree):
            if isinstance(node, gast.Subscript):
                safe.add(id(node.value))
            elif isinstance(node, (gast.For, gast.comprehension)):
                safe.add(id(node.iter))
            elif isinstance(node, gast.Return):
                safe.add(id(node.value))
            elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                    node.func.attr == "copy" and not node.keywords and (
                        not node.args or self._copy_module(node.func.value)):
                # (`n.copy()`, `copy.copy(n)`: a new container of n's items, not n)
                safe.update(id(a) for a in [node.func.value, *node.args])
            elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
                if node.func.id in ("len", "zip", "enumerate", "reversed", "iter", "list",
                                    "tuple", "dict", "sorted", "sum", "min", "max"):
                    safe.update(id(a) for a in node.args)
                    continue
                try:
                    fn = self.pf.resolve(node.func.id)
                except Exception:  # noqa: BLE001  (not a global: any call may keep it)
                    continue
                if fn in LIFTED or (isinstance(fn, types.FunctionType)
                                    and is_user_object(fn)):
                    safe.update(id(a) for a in node.args)
                    safe.update(id(k.value) for k in node.keywords)
        return any(isinstance(node, gast.Name) and node.id == name and
                   isinstance(node.ctx, gast.Load) and id(node) not in safe
                   for node in gast.walk(self.pf.tree))

    def _copy_module(self, e) -> bool:
        """Is `e` a name for the module `copy`?"""
        try:
            return isinstance(e, gast.Name) and self.pf.resolve(e.id) is copy
        except Exception:  # noqa: BLE001  (not a global)
            return False

    def refuse_module_array_writes(self, call: ir.UserCall, node) -> None:
        """A callee writing in place into an array a module global holds (`shrink(W0)`):
        numpy changes the module's array, which srcad's code -- reading globals as they are
        when it runs, never writing them -- would not: refused at the call."""
        for p, a in zip(call.callee.params, call.args):
            if p in call.callee.written_arrays and isinstance(a, ir.Const) and \
                    isinstance(a.value, np.ndarray):
                raise self.unsupported(
                    f"{call.callee.name} writes into its argument `{p}` in place, and this "
                    f"call gives it `{a.src}`, an array the module holds: srcad does not "
                    f"change a module's arrays", node,
                    f"copy it first (`{p}_local = {a.src}.copy()`) and pass the copy, or "
                    f"return the new array from {call.callee.name} and assign it")

    def passes_written_dict(self, call: ir.UserCall) -> bool:
        """Does the callee write into a dict that the caller holds by a name?"""
        return bool(self.written_holders(call))

    def caller_effects(self, body: list, holders: dict, node) -> list:
        """The spliced body's writes into the caller's dict (`Effect` "setitem") go into the
        object the caller's name holds as Python sees it: its parameter's own object (then
        an effect of the caller's, which its own caller sees), else the object the name was
        given by its last plain assignment (srcad's copy-on-write made new dicts since)."""
        objects, params = {}, {}
        for p, names in holders.items():
            if isinstance(names, tuple):  # (an item: the caller's own store, made after)
                objects[p] = None
                continue
            n = names[0]
            if self.reaches_argument(n):
                objects[p], params[p] = self.entry_of(n), n
                continue
            if not any(self.held_beyond_names(m) for m in names):
                # (a list or dict made here that only names hold -- `ps = [..]; step(ps);
                # ps[0]`: the names are given the written one below, and nothing else could
                # see a write into the object itself, which the code may still read as it was)
                objects[p] = None
                continue
            seen = getattr(self, "dict_objects", None)
            if seen is None:
                seen = self.dict_objects = {}
            made = seen.get(n)
            if made is None or made[0] != self.seen_defs[n]:
                atom = self.env[n]
                if n in self.mutable:  # (the name is given the new dict after the call)
                    op, args = self.op_call(control.identity, [atom], {}, node)
                    atom = self.emit((op, args), self.fresh(f"{n}_object"), node)
                made = seen[n] = (self.seen_defs[n], atom)
            objects[p] = made[1]

        def redirect(block: list) -> list:
            out = []
            for s in block:
                if isinstance(s, ir.Effect) and s.kind == "setitem" and "param" in s.args \
                        and s.args["param"].value in objects:
                    p = s.args["param"].value
                    if objects[p] is None:
                        continue
                    args = {k: v for k, v in s.args.items() if k != "param"}
                    args["_obj"] = objects[p]
                    if p in params:
                        args["param"] = ir.Const(params[p], repr(params[p]))
                    s = dataclasses.replace(s, args=args)
                for part in ("body", "orelse", "cond_body"):  # (a store in a loop or branch)
                    if isinstance(getattr(s, part, None), list):
                        s = dataclasses.replace(s, **{part: redirect(getattr(s, part))})
                out.append(s)
            return out

        return redirect(body)

    def refuse_unheld_item_write(self, a: ir.Var, call: ir.UserCall) -> None:
        """A callee writing in place into an array, an item of a list or dict
        (`fill(acts[i + 1])`), that `item_of_a_name` cannot store back -- a display srcad holds
        item by item, read by an index computed in a loop; a list the loop does not carry:
        refused here, where the gradient through the item read after would miss the write
        (a wrong gradient, silently, before 2026-12-07). A dict the callee stores into is
        refused where it is read after (analysis/refusals.py check_argument_writes)."""
        made = next((s for s in reversed(self.body) if isinstance(s, ir.Call)
                     and s.target == a.name), None)
        if made is None or made.op.name != "getitem":
            return
        box = made.args.get("a")
        if not (isinstance(box, ir.Seq) and box.kind == "list") and not (
                isinstance(box, ir.Var) and self.surely_container(box)):
            return
        raise self.pf.error(
            f"`{call.callee.name}` writes in place into an item of a list or dict it is given "
            f"(an index computed here, of a container srcad cannot store the written value "
            f"back into at this point): Python's list holds the very array, written, and "
            f"srcad's copy would not reach it", call.line, cls=SharingUnknownError,
            hint=f"store the item back yourself (`v = acts[i]; {call.callee.name}(v); "
            f"acts[i] = v`), or return the value from `{call.callee.name}`")

    def item_readers(self, made, node, arrays: bool = True) -> list:
        """The local names bound to an earlier read of the item `made` (a getitem) reads --
        the same container atom, the same index -- before a call writes that item in place;
        refused where such a read went into a container, a call or an object instead (for an
        array written in place: `arrays`; a list or dict item stored into by key is not
        seen through a copy `list(read)` makes, and a display holding it is aliasing.py's)."""
        if made is None:
            return []
        order = list(ir.walk(self.top_body))
        if self.body is not self.top_body:
            order += list(ir.walk(self.body))
        defs = {st.target: st for st in order if isinstance(st, ir.Call)}
        # (only what was read since the container last took a value -- in a loop its name
        # is one for all its values: `old = acts[i + 1]; acts[i + 1] = ...` read the old one)
        at = next((k for k, st in enumerate(order) if st is made), len(order))
        box = made.args.get("a")
        start = max((k + 1 for k, st in enumerate(order[:at]) if isinstance(box, ir.Var) and
                     box.name in ir.defs(st)), default=0)
        stmts = order[start:at]

        def same(a, b, depth=0):  # (`i + 1` computed twice is one index)
            if a == b:
                return True
            if isinstance(a, ir.Index) and isinstance(b, ir.Index):
                return a.is_tuple == b.is_tuple and len(a.parts) == len(b.parts) and all(
                    same(x, y, depth) for x, y in zip(a.parts, b.parts))
            da = defs.get(a.name) if isinstance(a, ir.Var) else None
            db = defs.get(b.name) if isinstance(b, ir.Var) else None
            return depth < 4 and da is not None and db is not None and \
                da.op.name == db.op.name and da.op.name in _INDEX_OPS and \
                da.args.keys() == db.args.keys() and all(
                    same(da.args[k], db.args[k], depth + 1) for k in da.args)

        def offset(index):  # (`i + 2` as (i, 2), `3` as (None, 3); else None)
            parts = index.parts if isinstance(index, ir.Index) else (index,)
            if len(parts) != 1:
                return None
            x = parts[0]
            if isinstance(x, ir.Const) and type(x.value) in (int, str):
                return (None, x.value)
            d = defs.get(x.name) if isinstance(x, ir.Var) else None
            if d is not None and d.op.name in ("add", "subtract"):
                a, b = d.args.get("x"), d.args.get("y")
                if isinstance(a, ir.Var) and isinstance(b, ir.Const) and type(b.value) is int:
                    return (a.name, b.value if d.op.name == "add" else -b.value)
            return (x.name, 0) if isinstance(x, ir.Var) else None

        reads = set()
        for st in stmts:
            if not (isinstance(st, ir.Call) and st is not made and st.op.name == "getitem" and
                    st.args.get("a") == made.args.get("a")):
                continue
            if same(st.args.get("index"), made.args.get("index")):
                reads.add(st.target)
                continue
            mine, theirs = offset(made.args.get("index")), offset(st.args.get("index"))
            if mine is not None and theirs is not None and mine[0] == theirs[0] and \
                    mine[1] != theirs[1]:
                continue  # (`acts[i]` beside `acts[i + 1]`: another item)
            if mine is not None and theirs is not None and mine[0] is None and \
                    theirs[0] is None:
                continue  # (two constants, different)
            raise self.unsupported(
                "a call writes in place into an item of a list or dict, and the function "
                "read an item of it by another index that may be the same one: Python's one "
                "array would show the write there, which srcad cannot tell here", node,
                "read that item again after the call, or pick both by the same index")
        if not reads:
            return []
        grew = True
        while grew:  # (a read copied under a loop's name: `a = acts[i + 1]` in the loop)
            grew = False
            for st in stmts:
                if isinstance(st, ir.Call) and st.op.name == "identity" and \
                        st.target not in reads and any(
                            isinstance(a, ir.Var) and a.name in reads
                            for a in st.args.values()):
                    reads.add(st.target)
                    grew = True
        for st in stmts:
            if isinstance(st, ir.Call) and st.op.name in ("getitem", "identity"):
                continue  # (another read of it, or a copy of the read under a name)
            if isinstance(st, ir.Call) and st.op.name in _STORED_ARG:
                held = [st.args.get(_STORED_ARG[st.op.name])]  # (`x[k] = a`: a is kept;
                # `a[...] = v`, numpy's `out=a`, writes into it: not another holder)
            elif isinstance(st, ir.Call) and (table.lookup(st.op.fn) is None or
                                              st.op.name in _HOLDING_OPS):
                held = list(st.args.values())  # (code run as written, a display of it)
            elif isinstance(st, ir.Effect):
                held = list(st.args.values())  # (`obj.W = a`: the object keeps it)
            else:
                continue  # (a row makes a new value; a user function is followed)
            flat = [x for a in held for x in (a.items if isinstance(a, ir.Seq) else (a,))]
            if arrays and any(isinstance(x, ir.Var) and x.name in reads for x in flat):
                raise self.unsupported(
                    "a call writes in place into an item of a list or dict that was read "
                    "before and put in a container (or kept by code srcad runs as written): "
                    "Python's one array shows the write there too, srcad's copy would not",
                    node,
                    "read the item again after the call (`a = acts[i]` after it), or make "
                    "the call before the other read")
        return [n for n, v in self.env.items() if isinstance(v, ir.Var) and v.name in reads
                and n in self.locals]

    def store_written_item(self, name: str, index, final, node) -> None:
        """`fill(p[0], x)` writing into its argument: Python's `p[0]` is that very object,
        written; here `p[0] = <the written value>`, as the user would write it (so that the
        views of p, p's own write-back and a store into the caller's object follow). A
        computed index (`acts[i + 1]` in a loop) is held by a name of its own."""
        held = self.fresh(f"{name}_item")
        self.locals.add(held)
        self.env[held] = final
        if isinstance(index, ir.Const):
            if not hasattr(self, "written_in_place"):
                self.written_in_place = {}
            self.written_in_place[held] = 1  # (aliasing.setitem: the caller's p[0] written)
            key = gast.Constant(index.value, None)
        else:  # (a computed index: a store into the slot -- the names that read that very
            # object since it was stored there are rebound by the caller: item_readers)
            at = self.fresh(f"{name}_at")
            self.locals.add(at)
            self.env[at] = index
            key = gast.Name(at, gast.Load(), None, None)
        target = gast.Subscript(value=gast.Name(name, gast.Load(), None, None),
                                slice=key, ctx=gast.Store())
        value = gast.Name(held, gast.Load(), None, None)
        stmt = gast.copy_location(gast.Assign(targets=[target], value=value), node)
        gast.copy_location(target, node)
        gast.copy_location(target.value, node)
        gast.copy_location(target.slice, node)
        gast.copy_location(value, node)
        self.setitem(target, value, stmt)

    def rebind_written(self, n: str, final, node) -> None:
        """The caller's name `n` holds the dict the callee wrote into: its new value."""
        if n in self.mutable:
            if final != ir.Var(n):
                op, args = self.op_call(control.identity, [final], {}, node)
                self.body.append(ir.Call(n, op, args, node.lineno))
            self.env[n] = ir.Var(n)
        else:
            self.env[n] = final


def _writes_a_given_item(callee: ir.Function, p: str) -> bool:
    """Does `callee` write in place (`write_through`) into an array its parameter `p` held
    when it was called -- read from a slot no store replaced before (`ps[2] -= t`), not one
    it stored (`ps[0] = ps[0] * c; ps[0] += t`)?"""
    defs = {s.target: s for s in ir.walk(callee.body) if isinstance(s, ir.Call)}
    for w in ir.walk(callee.body):
        if not (isinstance(w, ir.Call) and w.op.name == "write_through"):
            continue
        read = defs.get(getattr(w.args.get("view"), "name", None))
        if read is None or read.op.name != "getitem":
            return True  # (not known: as if so)
        at, index = read.args.get("a"), read.args.get("index")
        for _ in range(64):
            if not isinstance(at, ir.Var):
                return True
            if at.name == p:
                return True
            d = defs.get(at.name)
            if d is None or d.op.name not in ("setitem", "write_through"):
                return True
            if d.op.name == "setitem" and d.args.get("index") == index:
                break  # (that slot holds an array the callee stored)
            at = d.args.get("x")
    return False


class _Renamer:
    def __init__(self, names: dict, atoms: dict, consts: dict):
        self.names, self.atoms, self.consts = names, atoms, consts

    def name(self, n: str) -> str:
        return self.names.get(n, n)

    def atom(self, a):
        if isinstance(a, ir.Var):
            if a.name in self.atoms:
                return self.atoms[a.name]
            return ir.Var(self.name(a.name))
        if isinstance(a, ir.Const):
            root, dot, rest = a.src.partition(".")
            if root in self.consts:
                return ir.Const(a.value, self.consts[root] + dot + rest)
            given = self.atoms.get(root)
            if isinstance(given, ir.Const) and (not dot and given.value is a.value or dot):
                # (the callee's `self`, a constant spelt by the parameter's name -- spliced
                # into its caller, spelt as the caller's constant: `self.n` read where the
                # caller has no `self`, a NameError in the generated code before)
                return ir.Const(a.value, given.src + dot + rest)
            return a
        if isinstance(a, ir.Seq):
            return ir.Seq(tuple(self.atom(x) for x in a.items), a.kind)
        if isinstance(a, ir.Index):
            return ir.Index(tuple(self.atom(x) for x in a.parts), a.is_tuple)
        if isinstance(a, ir.Slice):
            return ir.Slice(*(None if x is None else self.atom(x)
                              for x in (a.lower, a.upper, a.step)))
        return a

    def args(self, d: dict) -> dict:
        return {k: self.atom(v) for k, v in d.items()}

    def block(self, body) -> list:
        # (a callee's own copy of an argument it stores into, and the name its stores go to,
        # are the callee's: spliced into its caller, the stores go where caller_effects says)
        return [self.stmt(s) for s in body if not (isinstance(s, ir.Effect) and s.kind == "own")]

    def stmt(self, s):
        rep = dataclasses.replace
        if isinstance(s, ir.Call):
            return rep(s, target=self.name(s.target), args=self.args(s.args))
        if isinstance(s, ir.Effect) and s.kind == "sync" and "held" in s.args:
            # (into the object's own list or dict, read under a name of the callee's)
            caller = self.name(s.args["caller"].value)
            return rep(s, args={**self.args({k: v for k, v in s.args.items()
                                             if k != "caller"}),
                                "caller": ir.Const(caller, repr(caller))})
        if isinstance(s, ir.Effect):
            return rep(s, args=self.args({k: v for k, v in s.args.items() if k != "caller"}))
        if isinstance(s, ir.UserCall):
            return rep(s, targets=[self.name(t) for t in s.targets],
                       args=[self.atom(a) for a in s.args])
        if isinstance(s, ir.Push):
            return rep(s, stack=self.name(s.stack), value=self.atom(s.value))
        if isinstance(s, ir.If):
            return rep(s, test=self.atom(s.test), body=self.block(s.body),
                       orelse=self.block(s.orelse))
        if isinstance(s, ir.For):
            ck = None if s.checkpoint is None else tuple(
                None if a is None else self.atom(a) for a in s.checkpoint)
            return rep(s, target=self.name(s.target), start=self.atom(s.start),
                       stop=self.atom(s.stop), step=self.atom(s.step),
                       limit=None if s.limit is None else self.atom(s.limit),
                       checkpoint=ck, body=self.block(s.body),
                       exits=[self.name(f) for f in s.exits])
        if isinstance(s, ir.While):
            return rep(s, cond_body=self.block(s.cond_body), cond=self.atom(s.cond),
                       body=self.block(s.body), exits=[self.name(f) for f in s.exits])
        raise TypeError(f"internal: cannot inline {type(s).__name__}")


def _writes_whole(callee: ir.Function, p: str) -> bool:
    """Does `callee` write its parameter `p` as an array is written -- `p[...] = v`, `p[:]
    = v`, numpy's `out=p` -- not a dict's or list's store by key?"""
    for e in ir.walk(callee.body):
        if isinstance(e, ir.Effect) and e.kind == "setitem" and \
                e.args.get("param") == ir.Const(p, repr(p)):
            index = e.args.get("index")
            parts = index.parts if isinstance(index, ir.Index) else (index,)
            if any(isinstance(x, ir.Slice) or (isinstance(x, ir.Const) and x.value is Ellipsis)
                   for x in parts):
                return True
    return False


_WRITTEN: dict = {}
# ops that hold what they are given (a read of an item stored or displayed there is a second
# holder of the array): item_readers
_INDEX_OPS = frozenset({"add", "subtract", "multiply", "floor_divide", "mod", "negative"})
_HOLDING_OPS = frozenset({"list", "list_concat", "dict", "tuple"})
_STORED_ARG = {"setitem": "value", "dict_set": "value", "list_append": "x"}


def written_params(fn) -> set:
    """The parameters of a plain Python function whose items its source assigns
    (`p[k] = v`, `p[k] += v`): what a call may write into (cached per code object; a
    function lifted out of its own (a method of an object the function builds, objects.py):
    read from its lifted tree)."""
    if fn in LIFTED:
        return _written_in(LIFTED[fn].tree, set(LIFTED[fn].params))
    if not isinstance(fn, types.FunctionType):
        return set()
    code = fn.__code__
    if code not in _WRITTEN:
        try:
            tree = gast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError):
            tree = None
        params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        _WRITTEN[code] = _written_in(tree, params) if tree is not None else set()
    return _WRITTEN[code]


def _written_in(tree, params: set) -> set:
    """The parameters whose object the function may write into: by a store into an item
    (`p[k] = v`), in place (`p -= t`, `out=p`), or through a name bound to a part of it
    (`W = p[0]; W -= t`, `for q in p: q *= 2`, `for q, g in zip(p, gs): q -= g`). An
    overestimate is harmless (the caller's name then keeps one name for all its values)."""
    roots = {p: p for p in params}  # local name -> the parameter it may hold part of

    def root(e):
        while isinstance(e, (gast.Subscript, gast.Attribute, gast.Starred)):
            e = e.value
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and \
                e.func.id in ("reversed", "enumerate", "iter") and e.args:
            return root(e.args[0])
        return roots.get(e.id) if isinstance(e, gast.Name) else None

    def bind(target, value):
        if isinstance(target, gast.Name):
            r = root(value)
            if r is not None:
                roots.setdefault(target.id, r)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
                    value.func.id == "zip":
                for t, v in zip(target.elts, value.args):
                    bind(t, gast.Subscript(value=v, slice=None, ctx=gast.Load()))
            elif isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
                    value.func.id == "enumerate" and len(target.elts) == 2 and value.args:
                bind(target.elts[1], gast.Subscript(value=value.args[0], slice=None,
                                                    ctx=gast.Load()))
            else:
                for t in target.elts:
                    bind(t, value)

    out = set()
    for _ in range(2):  # (a name bound before its root is known: once more)
        for n in gast.walk(tree):
            if isinstance(n, gast.Assign) and len(n.targets) == 1:
                bind(n.targets[0], n.value)
            elif isinstance(n, (gast.For, gast.comprehension)):
                it = n.iter
                bind(n.target, gast.Subscript(value=it, slice=None, ctx=gast.Load())
                     if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
                             and it.func.id in ("zip", "enumerate")) else it)
    for n in gast.walk(tree):
        targets = n.targets if isinstance(n, gast.Assign) else \
            [n.target] if isinstance(n, gast.AugAssign) else []
        for t in targets:
            if isinstance(t, gast.Subscript) or (isinstance(n, gast.AugAssign)
                                                 and isinstance(t, gast.Name)):
                r = root(t)
                if r is not None:
                    out.add(r)
        if isinstance(n, gast.Call):
            for k in n.keywords:
                if k.arg == "out":
                    r = root(k.value)
                    if r is not None:
                        out.add(r)
    return out


def hoist_written_arguments(pf, taken: set) -> None:
    """`shrink(A[1:], lr)` or `shrink(A.T, lr)`, where the user function writes into that
    parameter in place: numpy writes A through the view. The view is given a name first
    (`A_arg = A[1:]; shrink(A_arg, lr)`), so that the write the call carries back to its
    caller's name (`InlineMixin.inline_call`) reaches A as a write through the user's own
    view would (frontend/aliasing.py). Only slices and transposes are named: an item
    (`ps[i]`, `p[0]`) is carried as the item (`item_of_a_name`) or refused where it is read
    after (analysis/refusals.py), and an attribute is objects.py's local."""
    def wants_name(e) -> bool:
        if isinstance(e, gast.Subscript):  # (a slice: an array's view, never a list item)
            parts = e.slice.elts if isinstance(e.slice, gast.Tuple) else [e.slice]
            return any(isinstance(x, gast.Slice) for x in parts)
        if isinstance(e, gast.Attribute):
            return e.attr == "T"
        return isinstance(e, gast.Call) and isinstance(e.func, gast.Attribute) and \
            e.func.attr in ("transpose", "swapaxes")

    def written_args(call):
        if not isinstance(call.func, gast.Name):
            return []
        try:
            fn = pf.resolve(call.func.id)
        except Exception:  # noqa: BLE001  (not a global: nothing to learn here)
            return []
        written = written_params(fn)
        if not written:
            return []
        try:
            params = list(LIFTED[fn].params) if fn in LIFTED else \
                list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            return []
        out = [(call.args, i) for i, (a, p) in enumerate(zip(call.args, params))
               if p in written and wants_name(a)]
        return out + [(k, None) for k in call.keywords
                      if k.arg in written and wants_name(k.value)]

    def calls_in(stmt):
        todo = [stmt]
        while todo:
            n = todo.pop()
            if isinstance(n, (gast.Lambda, gast.FunctionDef, gast.ListComp, gast.SetComp,
                              gast.DictComp, gast.GeneratorExp, gast.IfExp, gast.BoolOp)):
                continue
            if isinstance(n, gast.Call):
                yield n
            todo.extend(gast.iter_child_nodes(n))

    def block(body: list) -> None:
        i = 0
        while i < len(body):
            s = body[i]
            for part in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, part, None), list) and \
                        not isinstance(s, gast.FunctionDef):
                    block(getattr(s, part))
            for h in getattr(s, "handlers", ()):
                block(h.body)
            if not isinstance(s, (gast.Expr, gast.Assign, gast.AugAssign, gast.Return)):
                i += 1
                continue
            new = []
            for call in list(calls_in(s)):
                for holder, at in written_args(call):
                    value = holder[at] if at is not None else holder.value
                    name = fresh(f"{_root_name(value)}_arg", taken)
                    taken.add(name)
                    new.append(gast.copy_location(gast.Assign(
                        targets=[gast.Name(name, gast.Store(), None, None)], value=value), s))
                    load = gast.copy_location(gast.Name(name, gast.Load(), None, None), value)
                    if at is not None:
                        holder[at] = load
                    else:
                        holder.value = load
            body[i:i] = new
            i += len(new) + 1

    block(pf.tree.body)
    gast.fix_missing_locations(pf.tree)


def _root_name(e) -> str:
    while isinstance(e, (gast.Subscript, gast.Attribute, gast.Call)):
        e = e.func.value if isinstance(e, gast.Call) and isinstance(e.func, gast.Attribute) \
            else e.func if isinstance(e, gast.Call) else e.value
    return e.id if isinstance(e, gast.Name) else "view"


def _called_name(call: ir.UserCall) -> str:
    """The callee's name as its `def` line spells it (its IR name may be a specialisation's:
    `step_2`)."""
    fn = call.callee
    for k in range(fn.first_line, fn.last_line + 1):
        words = fn.source_lines.get(k, "").split()
        if words[:1] == ["def"] and len(words) > 1:
            return words[1].split("(")[0]
    return fn.name
