"""Normalising loops: `for` over a range, a sequence, enumerate or zip; `while` (a mixin).

Input: a desugared `for` or `while` statement (desugar.py has turned `break`, `continue` and
a `return` inside the loop into flags: the body ends with ``if flag: break`` tests). Output:
an `ir.For` (a counted loop: target, start, stop, step, body, exit flags) or an `ir.While`
(its condition's statements, the condition, the body, exit flags), appended to the body.
  * ``for x in xs`` counts over ``range(len(xs))`` and indexes (``x = xs[x_index]``);
    ``enumerate`` and ``zip`` index each sequence, ``zip`` up to the shortest.
  * The sequence, or range's arguments, is evaluated once, before the loop: a name the loop
    reassigns is iterated through a copy of the reference (`snapshot`).
  * ``for i in srcad.checkpoint(range(n), every=k)`` is the loop it wraps, marked with its
    checkpoint schedule (srcad/checkpoint.py); ``reversed(range(...))`` and
    ``range(...)[:n]`` (generated backward loops, transformed again) keep their direction.

Before/after:
    for w in ws:                    w_count = len(ws)
        h = np.tanh(h @ w)          for w_index in range(w_count):
                                        w = ws[w_index]
                                        h_matmul = h @ w
                                        h = np.tanh(h_matmul)

`LoopsMixin` holds these methods of the normaliser (srcad/frontend/normalize.py).
"""

from __future__ import annotations

import itertools
import operator
import sys
import types

import gast
import numpy as np

from .. import ir, runtime_python
from ..checkpoint import check_schedule, checkpoint
from ..ops import control
from . import guards
from .chosen import argument_length
from .closures import PARTIAL
from .itemloops import written_in_place
from .objcomps import known_value
from .objects import delegated_sequence
from .opaque import is_object_mapping, is_object_sequence, is_opaque, is_user_object, \
    rowed_callable
from .parse import UNRESOLVED
from .pylevel import _assign, _name

DICT_KEYS = "__srcad_dict_keys"  # (pylower's name for runtime_python.dict_keys)


class LoopsMixin:
    """`for_loop`, `while_loop` and their helpers, for the `Normalizer` (normalize.py)."""

    def loop_exits(self, s) -> tuple[list, list[str]]:
        """Split a desugared loop body into its statements and its trailing exit flags."""
        body = list(s.body)
        exits = []
        while (body and isinstance(body[-1], gast.If) and not body[-1].orelse
               and len(body[-1].body) == 1 and isinstance(body[-1].body[0], gast.Break)
               and isinstance(body[-1].test, gast.Name)):
            exits.insert(0, body.pop().test.id)
        return body, exits

    def for_loop(self, s: gast.For):
        if s.orelse:
            raise self.unsupported("`for ... else`", s, "use a flag instead of `else`")
        it = s.iter
        if isinstance(it, gast.Call) and self.is_checkpoint(it.func):
            return self.checkpointed_loop(s, it)
        counted = self.enumerate_from(s)
        if counted is not None:
            return self.for_loop(counted)
        body, exits = self.loop_exits(s)
        self.refuse_item_writes(s)
        builtin = None
        if (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
                and it.func.id not in self.locals and not it.keywords):
            builtin = self.pf.resolve(it.func.id)
        if builtin is enumerate and not exits and self.enumerated_objects(s, body):
            return None
        if builtin in (enumerate, zip) and isinstance(s.target, (gast.Tuple, gast.List)):
            return self.enumerate_or_zip(s, builtin, body, exits)
        if builtin is reversed and isinstance(s.target, gast.Name) and len(it.args) == 1 and \
                not self.is_range(it.args[0]):
            # reversed(xs) of a list or an array: xs[::-1], walked by index like xs
            it = gast.copy_location(gast.Subscript(value=it.args[0], slice=gast.Slice(
                None, None, gast.Constant(-1, None)), ctx=gast.Load()), it)
            builtin = None
        if builtin is reversed and isinstance(s.target, gast.Name) and len(it.args) == 1:
            return self.reversed_range(s, it.args[0], body, exits)
        if (isinstance(it, gast.Subscript) and isinstance(it.value, gast.Call)
                and isinstance(it.value.func, gast.Name) and isinstance(s.target, gast.Name)
                and self.pf.resolve(it.value.func.id) is range):
            return self.reversed_range(s, it, body, exits, reverse=False)
        if not isinstance(s.target, gast.Name):
            raise self.unsupported("a `for` loop with a tuple target", s,
                                   "loop over range(len(...)), enumerate(...) or zip(...)")
        target = s.target.id
        if isinstance(it, gast.Name) and it.id in self.pf.namedtuple_items and \
                not self.defs[it.id] and self.defs[target] == 1:
            self.nt_vars[target] = self.pf.namedtuple_items[it.id]  # (`layer.W`: layer[0])
        prefix = []
        if (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
                and it.func.id not in self.locals and self.pf.resolve(it.func.id) is range):
            if it.keywords or not 1 <= len(it.args) <= 3:
                raise self.unsupported("this call to range()", s)
            bounds = [self.known_length(a) or self.known_int(a) for a in it.args]
            if not exits and any(b is None for b in bounds) and self.trips_over_known_objects(
                    [ir.Const(0, "0"), ir.Const(1, "1")], target, body) is not None:
                # (`for i in range(len(Ws)): net.layers[i].W = Ws[i]` of a list argument:
                # its length as the call tells it)
                bounds = [b if b is not None else self.argument_count(a, s)
                          for a, b in zip(it.args, bounds)]
            trips = None if exits else self.trips_over_known_objects(bounds, target, body)
            if trips is None and not exits and _names_attributes_by(target, body):
                trips = _known_trips(bounds)
            if trips is not None:
                # `for i in range(len(net.dense)): net.dense[i].W = Ws[i]`, `h =
                # self.layers[i].forward(h)`: once per index, so each store is into the object
                # that index picks and each method resolves (as `for l in net.dense`)
                for a in it.args:
                    self.known_length(a, guard=True)
                return self.once_per_item(target, [ir.Const(k, str(k)) for k in trips], body)
            args = [self.snapshot(self.expr(a, target, None), s) for a in it.args]
            one = ir.Const(1, "1")
            start, stop, step = ((ir.Const(0, "0"), args[0], one) if len(args) == 1 else
                                 (args[0], args[1], args[2] if len(args) == 3 else one))
            loop_var = target
            if self.defs[target] == 1:  # only the loop assigns it: always an int
                self.ints.add(target)
        else:
            keys = None if exits else self.keys_naming_attributes(it, target, body)
            if keys is not None:
                # `for k, v in params.items(): setattr(model, k, v)` of a dict argument: once
                # per key (the call's keys, in its order: the specialisation's), so each
                # store names its attribute (effects.py `known_setattr`)
                return self.once_per_item(target, [ir.Const(k, repr(k)) for k in keys], body)
            table = self.module_dict_of_functions(it)
            if table is not None and not exits:
                # `for name, fn in HEADS.items()` of a module's dict of functions or objects
                # (pylower: `for name in dict_keys(HEADS): fn = HEADS[name]`): once per key,
                # each a constant, so `HEADS[name]` is that function now (its item guarded,
                # the keys too: a key added or removed is other code)
                guards.note("items", table, len(table), tuple(table))
                return self.once_per_item(target, [ir.Const(k, repr(k)) for k in table], body)
            backward = None if exits else self.closures_reversed(it, target, body)
            if backward is not None:  # (`for f in reversed(fs)` of a list of closures)
                return self.once_per_item(target, backward, body)
            names = self.known_chain(it) if isinstance(it, (gast.Name, gast.Attribute)) \
                and not exits else UNRESOLVED
            if type(names) in (list, tuple) and 0 < len(names) <= 64 and \
                    all(type(v) in (str, int) for v in names) and \
                    self.picks_objects_by(target, body):
                # `for name in self.order: x = self.modules[name](x)`: once per name (the
                # list's items guarded), so each picks its module while srcad builds the code
                if type(names) is list:
                    guards.note("items", names, len(names), tuple(names))
                return self.once_per_item(target, [ir.Const(v, repr(v)) for v in names], body)
            sliced = self.module_slice(it)
            seq = self.handed_over(self.expr(it, target, None), "__iter__", it) \
                if sliced is None else sliced
            held = None if exits else self.closure_items(seq, it, body)
            if held is not None:  # (a list of closures: closure_values.py)
                return self.once_per_item(target, held, body)
            if isinstance(seq, ir.Seq) and seq.items and not exits and (
                    all(self.function_value(a) for a in seq.items) or
                    _objects_of(seq) is not None or _named_objects(seq) or
                    _makes_closures(body) or (
                        len(seq.items) <= 64 and _names_attributes_by(target, body) and
                        all(isinstance(a, ir.Const) for a in seq.items))):
                # `fns = [relu, np.tanh]; for f in fns: h = f(h)`, `for W, act in [(W1,
                # np.tanh), (W2, relu)]`, `for layer in [net.l1, net.l2]`: the body once per
                # item
                names = _unpacked_first(target, body, seq) if _named_objects(seq) else None
                if names is not None:
                    # (`for name, p in model.named_parameters()`: each name bound to its
                    # constant itself, as a loop over objects binds its variable -- a store
                    # `p.data = v` then names the object it goes into)
                    return self.once_per_binding(names, [list(a.items) for a in seq.items],
                                                 body[1:])
                return self.once_per_item(target, seq.items, body)
            if isinstance(seq, ir.Const) and is_object_mapping(seq.value) and not exits:
                # `for name in self.layers:` of an object's dict of objects: once per key
                # (its keys guarded, in order: expressions.py)
                return self.once_per_item(target, [ir.Const(k, repr(k)) for k in seq.value],
                                          body)
            if isinstance(seq, ir.Const) and (is_object_sequence(seq.value) or
                                              _function_sequence(seq.value)) and not exits:
                # (unrolled over these very objects: a list changed in place -- `layers[:] =
                # ...`, `layers.append(...)` -- is other code, so the items are guarded)
                if isinstance(seq.value, list):
                    guards.note("items", seq.value, len(seq.value), seq.value)
                return self.unrolled(s, target, seq, body)
            if self.may_hold_mapping(seq):
                # an iterator a library made (np.ndindex(3), map(...), a generator), a dict
                # a call or a global holds (its keys), a set: its items, once, as Python's
                # `for` takes them (indexing by position would read d[0], d[1], ...)
                seq = self.emit(self.op_call(list, [seq], {}, s), self.fresh(f"{target}_items"),
                                s)
            # for x in xs: -> for x_index in range(len(xs)): x = xs[x_index]
            whole = self.every_slot_after_branch(seq, it, body)
            seq = self.snapshot(seq, s)
            n = self.loop_count(seq, f"{target}_count", s)
            start, stop, step = ir.Const(0, "0"), n, ir.Const(1, "1")
            loop_var = self.fresh(f"{target}_index")
            self.ints.add(loop_var)
            self.mutable.add(loop_var)
            prefix = [(seq, loop_var, whole)]
        outer, self.body = self.body, []
        try:
            for seq, idx, whole in prefix:
                # (`x = u` where every item is u: `every_slot_after_branch`)
                call = self.op_call(operator.getitem, [seq, ir.Index((ir.Var(idx),), False)],
                                    {}, s) if whole is None else \
                    self.op_call(control.identity, [whole], {}, s)
                self.emit(call, target, s)
                self.env[target] = ir.Var(target)
            self.env[loop_var] = ir.Var(loop_var)
            with self.carried_around(s):
                for st in body:
                    self.line = st.lineno
                    self.statement(st)
            loop_body = self.body
        finally:
            self.body = outer
        self.body.append(ir.For(loop_var, start, stop, step, loop_body, s.lineno, exits))

    def is_range_atom(self, seq) -> bool:
        """Does `seq` hold a `range` (a constant one, or one the function makes -- zip's
        `itertools.count`, count_as_range): indexed by position as Python walks it?"""
        if isinstance(seq, ir.Const):
            return isinstance(seq.value, range)
        found = self.definitions(seq.name) if isinstance(seq, ir.Var) else []
        return len(found) == 1 and isinstance(found[0], ir.Call) and (
            getattr(found[0].op, "fn", None) is range or
            getattr(found[0].args.get("_fn"), "value", None) is range)

    def may_hold_mapping(self, seq) -> bool:
        """Might `seq` hold something a `for` walks other than by position -- a dict (its
        keys), a set, an iterator -- so that ``seq[i]`` for i in range(len(seq)) is not what
        Python's `for` takes? Yes for what a library call or a user function may return, an
        item of a container, a constant of such a type; no for a list or tuple display, a
        numpy op's array, an argument (a dict argument's keys are walked by pylower.py)."""
        return maybe_mapping(seq, self.definitions, self.arrays)

    def module_slice(self, it):
        """``for f in ACTS[1:]`` of a module's list or tuple of functions or user objects
        (constant bounds): the slice, a constant like the whole list (`_function_sequence`;
        a list's items guarded), else None."""
        if not (isinstance(it, gast.Subscript) and isinstance(it.slice, gast.Slice) and
                isinstance(it.value, gast.Name) and it.value.id not in self.locals):
            return None
        bounds = []
        for b in (it.slice.lower, it.slice.upper, it.slice.step):
            if b is None:
                bounds.append(None)
            elif isinstance(b, gast.Constant) and type(b.value) is int:
                bounds.append(b.value)
            elif isinstance(b, gast.UnaryOp) and isinstance(b.op, gast.USub) and \
                    isinstance(b.operand, gast.Constant) and type(b.operand.value) is int:
                bounds.append(-b.operand.value)
            else:
                return None
        if bounds[2] == 0:
            return None
        try:
            held = self.pf.resolve(it.value.id)
        except Exception:  # noqa: BLE001  (not resolvable: the general path says why)
            return None
        if type(held) not in (list, tuple):
            return None
        part = held[slice(*bounds)]
        if not (is_object_sequence(part) or _function_sequence(part)):
            return None
        if type(held) is list:
            guards.note("items", held, len(held), held)
        return ir.Const(part, gast.unparse(it) if hasattr(gast, "unparse") else it.value.id)

    def once_per_item(self, target: str, items, body) -> None:
        """The loop's body once per item, `target` bound to it (a constant or a display
        known here: a function the body calls through the name resolves now)."""
        self.once_per_binding([target], [[item] for item in items], body)

    def once_per_binding(self, names: list, rows, body) -> None:
        """The loop's body once per row of atoms, each of `names` bound to its atom of the
        row (`once_per_item`'s, and `enumerated_objects`' index, key and object)."""
        outer, self.unrolling = getattr(self, "unrolling", False), True
        try:
            for row in rows:
                for name, atom in zip(names, row):
                    self.env[name] = atom
                for st in body:
                    self.line = st.lineno
                    self.statement(st)
        finally:
            self.unrolling = outer

    def known_length(self, e, guard: bool = False) -> ir.Const | None:
        """`len(net.dense)` of a list or tuple of objects known here (known_value; with
        `guard`, a list's items guarded), or of a display of them the function made: its
        length, a constant; else None."""
        if not (isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and
                e.func.id == "len" and e.func.id not in self.locals and len(e.args) == 1 and
                not e.keywords and isinstance(e.args[0], (gast.Name, gast.Attribute))):
            return None
        if isinstance(e.args[0], gast.Name) and e.args[0].id in self.locals:
            shown = self.env.get(e.args[0].id)
            return ir.Const(len(shown.items), str(len(shown.items))) if isinstance(
                shown, ir.Seq) and _objects_of(shown) is not None else None
        held = self.known_chain(e.args[0])  # (`len(self.layers)` in a method too)
        found = delegated_sequence(held, "__len__")
        if found is not None:  # (`len(net)`: the list its __len__ measures)
            held = found[1]
        if type(held) not in (list, tuple) or not is_object_sequence(held):
            return None
        if guard and type(held) is list:
            guards.note("items", held, len(held), held)
        return ir.Const(len(held), str(len(held)))

    def picks_objects_by(self, target: str, body) -> bool:
        """Does the loop's body index a dict or list of user objects known here by its
        variable (`self.modules[name]`, `LAYERS[i]`) or name an attribute by it
        (`getattr(self, name)`)?"""
        if _names_attributes_by(target, body):
            return True
        for st in body:
            for n in gast.walk(st):
                if isinstance(n, gast.Subscript) and isinstance(n.slice, gast.Name) and \
                        n.slice.id == target and \
                        isinstance(n.value, (gast.Name, gast.Attribute)):
                    held = self.known_chain(n.value)
                    if is_object_mapping(held) or is_object_sequence(held):
                        return True
        return False

    def known_int(self, e) -> ir.Const | None:
        """An int literal, or `self.n_layers` / a module's `DEPTH` known here (guarded): that
        int, a constant; else None."""
        if isinstance(e, gast.Constant):
            return ir.Const(e.value, repr(e.value)) if type(e.value) is int else None
        if isinstance(e, gast.BinOp) and isinstance(e.op, (gast.Add, gast.Sub)):
            a, b = self.known_int(e.left), self.known_int(e.right)  # (`self.n + 1`)
            if a is None or b is None:
                return None
            v = a.value + b.value if isinstance(e.op, gast.Add) else a.value - b.value
            return ir.Const(v, repr(v))
        if not isinstance(e, (gast.Name, gast.Attribute)) or (
                isinstance(e, gast.Name) and e.id in self.locals):
            return None
        held = self.known_chain(e)
        return ir.Const(held, repr(held)) if type(held) is int else None

    def trips_over_known_objects(self, args, target: str, body):
        """The indexes `range(*args)` runs (at most 64), where they are known here and the body
        reads a list of objects known here by the loop's index (`net.dense[i]`, a module's or
        an object's list: known_value, guarded; `net[i]` of an object whose `__getitem__`
        hands over to one) -- to store an attribute or to call a method of the object the
        index picks; else None."""
        if not all(isinstance(a, ir.Const) and type(a.value) is int for a in args) or \
                (len(args) == 3 and args[2].value == 0):
            return None
        trips = range(*(a.value for a in args))
        if not 0 < len(trips) <= 64:
            return None
        nodes = [n for st in body for n in gast.walk(st)]
        for n in nodes:
            if not (isinstance(n, gast.Subscript) and any(
                    isinstance(m, gast.Name) and m.id == target for m in gast.walk(n.slice))
                    and isinstance(n.value, (gast.Name, gast.Attribute))):
                continue
            if isinstance(n.value, gast.Name) and n.value.id in self.locals:
                # (a display of known objects the function made: `dense = [l for l in
                # net.layers if hasattr(l, "W")]`, folded by objcomps.py)
                if _objects_of(self.env.get(n.value.id)) is not None:
                    return list(trips)
            held = self.known_chain(n.value)  # (`self[i]`, `net.layers[i]`, `LAYERS[i]`)
            found = delegated_sequence(held, "__getitem__")
            if found is not None:  # (`net[i]`: the list its __getitem__ reads)
                held = found[1]
            if type(held) in (list, tuple) and is_object_sequence(held):
                if type(held) is list:  # (the objects each index picks: these ones)
                    guards.note("items", held, len(held), held)
                return list(trips)
        return None

    def keys_naming_attributes(self, it, target: str, body):
        """The keys of the dict argument `it` walks (`dict_keys(params)`, pylower's spelling
        of `params.items()`), where the body names attributes by the loop's key --
        `setattr(obj, k, v)`, `getattr(obj, k)` -- and the keys are identifiers; else None."""
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
                it.func.id == DICT_KEYS and len(it.args) == 1 and
                isinstance(it.args[0], gast.Name) and it.args[0].id in self.pf.params and
                it.args[0].id not in self.rebound_params):
            return None
        keys = self.pf.dict_keys.get(it.args[0].id)
        if not keys or not all(type(k) is str and k.isidentifier() for k in keys):
            return None
        named = any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
                    n.func.id in ("setattr", "getattr") and n.func.id not in self.locals and
                    len(n.args) >= 2 and isinstance(n.args[1], gast.Name) and
                    n.args[1].id == target for st in body for n in gast.walk(st))
        return list(keys) if named else None

    def module_dict_of_functions(self, it):
        """The module's dict `it` walks by its keys (`dict_keys(HEADS)`, pylower's spelling
        of `.items()` / `.values()` / a dict itself), where its keys are strings and its values
        functions or user objects known when normalising; else None."""
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
                it.func.id == DICT_KEYS and len(it.args) == 1 and
                isinstance(it.args[0], gast.Name)):
            return None
        if it.args[0].id in self.locals:
            # (`for layer in self.layers.values()`: pylower's `mapping = self.layers`, an
            # object's dict of objects known here -- expressions.py, guarded)
            held = self.env.get(it.args[0].id)
            if self.defs[it.args[0].id] == 1 and isinstance(held, ir.Const) and \
                    is_object_mapping(held.value):
                return held.value
            return None
        d = self.pf.resolve(it.args[0].id)
        if type(d) is not dict or not 0 < len(d) <= 256 or not all(
                type(k) is str for k in d):
            return None
        ok = all(isinstance(v, types.FunctionType) or rowed_callable(v) or is_user_object(v)
                 for v in d.values())
        return d if ok else None

    def unrolled(self, s: gast.For, target: str, seq: ir.Const, body) -> None:
        """``for layer in self.layers:`` over user objects known when normalising (each
        guarded): the body once per object, `layer` that object, so its methods resolve."""
        for i, obj in enumerate(seq.value):
            self.env[target] = self.constant(obj, f"{target}_{i}", s)
            for st in body:
                self.line = st.lineno
                self.statement(st)

    def objects_walked(self, s, index: str, items: list, body) -> bool:
        """``for layer, W in zip(model.layers, Ws)``, ``for i, layer in enumerate(self.
        layers)``: a loop walking a list of user objects known when normalising (a module's,
        an object's; guarded) beside other sequences is written out once per object, as ``for
        layer in self.layers`` is (`unrolled`): `layer` is that object in its copy -- a store
        ``layer.W = W`` is into it, its methods resolve -- and `i` that step's number. It
        runs zip's steps, as many as the shortest sequence has: where another sequence's
        length is not known here, it is checked where the loop starts (one shorter than the
        objects is refused there, runtime_python.zip_covers). False: not such a loop."""
        objects = [seq for _, seq in items if _objects_of(seq) is not None]
        if not objects:
            return False
        steps = min(len(_objects_of(seq)) for seq in objects)
        for _, seq in items:
            if isinstance(seq, ir.Seq):
                steps = min(steps, len(seq.items))
            elif isinstance(seq, ir.Const) and isinstance(seq.value, (list, tuple, range)):
                steps = min(steps, len(seq.value))
        for name, seq in items:
            if isinstance(seq, ir.Const) and isinstance(seq.value, list):
                guards.note("items", seq.value, len(seq.value), seq.value)
            elif not isinstance(seq, (ir.Const, ir.Seq)):
                check = runtime_python.zip_covers
                self.emit(self.opaque_parts(
                    self.callee_atom(check, "zip_covers", s), "zip_covers",
                    [seq, ir.Const(steps, str(steps)), ir.Const(name, repr(name))], {}, (), s,
                    check), self.fresh("checked"), s)
        for i in range(steps):
            self.env[index] = ir.Const(i, str(i))
            for name, seq in items:
                if isinstance(seq, ir.Seq) and _objects_of(seq) is not None:
                    self.env[name] = seq.items[i]  # (`[net.l1, net.l2]`: those objects)
                elif isinstance(seq, ir.Const) and is_object_sequence(seq.value):
                    self.env[name] = self.constant(seq.value[i], f"{name}_{i}", s)
                else:
                    call = self.op_call(operator.getitem, [seq, ir.Index(
                        (ir.Const(i, str(i)),), False)], {}, s)
                    self.env[name] = self.emit(call, self.fresh(name), s)
            for st in body:
                self.line = st.lineno
                self.statement(st)
        return True

    def is_range(self, e) -> bool:
        return (isinstance(e, gast.Call) and isinstance(e.func, gast.Name)
                and e.func.id not in self.locals and self.pf.resolve(e.func.id) is range)

    def is_checkpoint(self, func) -> bool:
        root = func
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name) or root.id in self.locals:
            return False
        return self.dotted(func)[0] is checkpoint

    def checkpointed_loop(self, s: gast.For, it: gast.Call):
        """for l in srcad.checkpoint(range(L), every=k | snapshots=c): the loop it wraps, marked
        for checkpointing (the reverse transform keeps the loop state at the schedule's
        steps only, see srcad/checkpoint.py)."""
        if len(it.args) != 1 or any(k.arg not in ("every", "snapshots") for k in it.keywords):
            raise self.unsupported("this call to srcad.checkpoint in a `for` header", s,
                                   "write `for i in srcad.checkpoint(range(n))`, optionally "
                                   "with every=k or snapshots=c")
        _, exits = self.loop_exits(s)
        if exits:
            raise self.unsupported("`break` or `return` inside a checkpointed loop", s,
                                   "a checkpointed loop must run all its steps; move the exit "
                                   "out of the loop or drop srcad.checkpoint")
        opts = {}
        for k in it.keywords:
            atom = self.expr(k.value, k.arg, None)
            if isinstance(atom, ir.Const):
                try:
                    check_schedule(**{k.arg: atom.value})
                except ValueError as e:
                    raise self.pf.error(str(e), k.value) from None
            opts[k.arg] = atom
        if len(opts) == 2:
            raise self.pf.error("give srcad.checkpoint every= or snapshots=, not both", it)
        inner = gast.For(target=s.target, iter=it.args[0], body=s.body, orelse=[],
                         type_comment=None)
        gast.copy_location(inner, s)
        self.for_loop(inner)
        loop = self.body[-1]
        loop.checkpoint = (opts.get("every"), opts.get("snapshots"))

    def reversed_range(self, s, rng, body, exits, reverse=True):
        """for i in reversed(range(a, b, c)[:n]): a backward loop of generated code (and
        ``range(a, b, c)[:n]``, its backward at the next order)."""
        limit = None
        if (isinstance(rng, gast.Subscript) and isinstance(rng.slice, gast.Slice)
                and rng.slice.lower is None and rng.slice.step is None):
            limit = self.snapshot(self.expr(rng.slice.upper, s.target.id, None), s)
            rng = rng.value
        if not (isinstance(rng, gast.Call) and isinstance(rng.func, gast.Name)
                and self.pf.resolve(rng.func.id) is range and 1 <= len(rng.args) <= 3):
            raise self.unsupported("reversed() over anything but range()", s,
                                   "loop over range(...) and index")
        args = [self.snapshot(self.expr(a, s.target.id, None), s) for a in rng.args]
        one = ir.Const(1, "1")
        start, stop, step = ((ir.Const(0, "0"), args[0], one) if len(args) == 1 else
                             (args[0], args[1], args[2] if len(args) == 3 else one))
        if self.defs[s.target.id] == 1:
            self.ints.add(s.target.id)
        self.env[s.target.id] = ir.Var(s.target.id)
        with self.carried_around(s):
            loop_body = self.sub_block(body)
        loop = ir.For(s.target.id, start, stop, step, loop_body, s.lineno, exits)
        loop.reverse, loop.limit = reverse, limit
        self.body.append(loop)

    def loop_count(self, seq, hint: str, node):
        """The number of items of `seq`, which a loop runs over: a constant for a list or
        tuple display (`enumerate([2.0, 0.5])`; the loop then certainly runs its trips),
        else `len(seq)` when the loop starts."""
        if isinstance(seq, ir.Seq):
            return ir.Const(len(seq.items), str(len(seq.items)))
        return self.emit(self.op_call(len, [seq], {}, node), self.fresh(hint), node)

    def snapshot(self, seq, node):
        """The sequence a loop iterates over is evaluated once: if its name is reassigned
        (in the loop, say), iterate over a copy of the reference taken before the loop."""
        if isinstance(seq, ir.Var) and seq.name in self.mutable:
            op, args = self.op_call(control.identity, [seq], {}, node)
            return self.emit((op, args), self.fresh(f"{seq.name}_iter"), node)
        return seq

    def refuse_item_writes(self, s: gast.For) -> None:
        """`for p in <items>: p -= lr * g` left as written (itemloops.py rewrites the loops over
        a named container it can: `for k in range(len(ps)): p = ps[k]; ...`): Python writes the
        walked container's own array, which this loop would not carry back -- a value or
        gradient lost silently -- so it is refused, unless the items are numbers (`v += 1`
        rebinds v; the container keeps its item)."""
        it = s.iter
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
                it.func.id not in self.locals and self.pf.resolve(it.func.id) is range:
            return
        names = {n.id for n in gast.walk(s.target) if isinstance(n, gast.Name)}
        if not written_in_place(s.body, names):
            return
        displays = [x for x in gast.walk(it) if isinstance(x, (gast.List, gast.Tuple))]
        if displays and all(isinstance(v, gast.Constant) and type(v.value) in (int, float)
                            for d in displays for v in d.elts):
            return
        raise self.unsupported(
            "an in-place write into a loop variable that is the walked container's item "
            "itself (`for p in ...: p -= ...`): Python changes the container's array, which "
            "srcad does not carry back from this loop", s,
            "walk it by index: `for i in range(len(ps)): ps[i] = ps[i] - lr * gs[i]` (or "
            "name the list first: `ps = [A, B]; for p in ps: p -= ...`)")

    def enumerate_from(self, s: gast.For):
        """``for i, v in enumerate(xs, start)`` (or ``start=k``; a comprehension's loop
        too): the loop of ``enumerate(xs)`` counting from 0, whose body first binds ``i`` to
        the count plus ``start`` (evaluated once, before the loop, as Python does) -- or
        None for any other loop."""
        it = s.iter
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
                it.func.id not in self.locals and self.pf.resolve(it.func.id) is enumerate and
                isinstance(s.target, (gast.Tuple, gast.List)) and len(s.target.elts) == 2 and
                isinstance(s.target.elts[0], gast.Name) and
                not any(isinstance(a, gast.Starred) for a in it.args)):
            return None
        if len(it.args) == 2 and not it.keywords:
            start = it.args[1]
        elif len(it.args) == 1 and len(it.keywords) == 1 and it.keywords[0].arg == "start":
            start = it.keywords[0].value
        else:
            return None
        if not (isinstance(start, gast.Constant) and type(start.value) is int):
            name = self.fresh("start")
            self.statement(gast.copy_location(_assign(name, start), s))
            start = _name(name)
        index = s.target.elts[0].id
        count = self.fresh(f"{index}_from_0")
        self.locals.add(count)
        self.mutable.add(index)
        bind = _assign(index, gast.BinOp(left=_name(count), op=gast.Add(), right=start))
        target = gast.Tuple(elts=[_name(count, True), s.target.elts[1]], ctx=gast.Store())
        loop = gast.For(target=target, iter=gast.Call(func=it.func, args=it.args[:1],
                                                      keywords=[]),
                        body=[bind] + s.body, orelse=s.orelse, type_comment=None)
        return gast.fix_missing_locations(gast.copy_location(loop, s))

    def enumerated_objects(self, s, body) -> bool:
        """``for i, (name, layer) in enumerate(self.layers.items())`` (or ``.values()`` /
        ``.keys()``) of an object's dict of objects known here (guarded): the body once per
        key, `i` its position, `name` the key and `layer` its object -- as ``for name, layer
        in self.layers.items()`` is. False: not such a loop."""
        it = s.iter
        if len(it.args) != 1 or it.keywords or not isinstance(s.target, gast.Tuple) or \
                len(s.target.elts) != 2 or not isinstance(s.target.elts[0], gast.Name):
            return False
        view = it.args[0]
        if not (isinstance(view, gast.Call) and isinstance(view.func, gast.Attribute) and
                view.func.attr in ("items", "values", "keys") and not view.args and
                not view.keywords):
            return False
        mapping = self.known_chain(view.func.value)
        if not is_object_mapping(mapping):
            return False
        index, item = s.target.elts
        first = body[0] if body else None
        if isinstance(item, gast.Name) and isinstance(first, gast.Assign) and \
                len(first.targets) == 1 and isinstance(first.targets[0], gast.Tuple) and \
                all(isinstance(t, gast.Name) for t in first.targets[0].elts) and \
                isinstance(first.value, gast.Name) and first.value.id == item.id and \
                view.func.attr == "items" and len(first.targets[0].elts) == 2:
            # (pylower.py's `item`, unpacked first thing in the body: the names themselves,
            # so `layer` is the object, whose methods resolve)
            names, body = [t.id for t in first.targets[0].elts], body[1:]
        elif isinstance(item, gast.Name):
            names = [item.id]
        elif view.func.attr == "items" and isinstance(item, gast.Tuple) and \
                len(item.elts) == 2 and all(isinstance(t, gast.Name) for t in item.elts):
            names = [t.id for t in item.elts]
        else:
            return False
        guards.note("items", mapping, len(mapping), tuple(mapping))
        rows = []
        for k, (key, obj) in enumerate(mapping.items()):
            guards.note("global", mapping, key, obj)
            key_atom = ir.Const(key, repr(key))
            obj_atom = self.constant(obj, f"{names[-1]}_{k}", s)
            values = {"items": [key_atom, obj_atom], "values": [obj_atom],
                      "keys": [key_atom]}[view.func.attr]
            if len(values) != len(names):  # (one name for an item: the pair)
                values = [ir.Seq(tuple(values), "tuple")]
            rows.append([ir.Const(k, str(k)), *values])
        self.once_per_binding([index.id, *names], rows, body)
        return True

    def enumerate_or_zip(self, s, builtin, body, exits):
        """for i, x in enumerate(xs) / for a, b in zip(as_, bs): an index loop that indexes."""
        inner = s.iter.args[0] if len(s.iter.args) == 1 else None
        if builtin is enumerate and isinstance(inner, gast.Call) and \
                isinstance(inner.func, gast.Name) and inner.func.id not in self.locals and \
                self.pf.resolve(inner.func.id) is zip and not inner.keywords and \
                len(s.target.elts) == 2 and isinstance(s.target.elts[0], gast.Name) and \
                isinstance(s.target.elts[1], (gast.Tuple, gast.List)) and \
                all(isinstance(t, gast.Name) for t in s.target.elts[1].elts) and \
                len(s.target.elts[1].elts) == len(inner.args):
            # for i, (x, y) in enumerate(zip(xs, ys)): zip's loop, counted by i
            index = s.target.elts[0].id
            names = [t.id for t in s.target.elts[1].elts]
            seqs = [self.snapshot(self.handed_over(self.expr(a, names[-1], None),
                                                   "__iter__", a), s) for a in inner.args]
            if self.defs[index] == 1:
                self.ints.add(index)
            return self.indexed_loop(s, index, list(zip(names, seqs)), body, exits)
        names = [t.id if isinstance(t, gast.Name) else None for t in s.target.elts]
        if None in names:
            raise self.unsupported("nested unpacking in a `for` target", s)
        args = s.iter.args
        if builtin is zip and len(args) > 1:  # (`zip(ws, itertools.count(1))`)
            args = [self.count_as_range(a) for a in args]
        seqs = [self.snapshot(self.handed_over(self.expr(a, names[-1], None), "__iter__", a),
                              s) for a in args]
        if builtin is enumerate:
            if len(seqs) != 1 or len(names) != 2:
                raise self.unsupported("this use of enumerate()", s, "use enumerate(xs)")
            index, items = names[0], [(names[1], seqs[0])]
            if self.defs[index] == 1:
                self.ints.add(index)
        else:
            if len(seqs) != len(names) or not seqs:
                raise self.unsupported("this use of zip()", s, "unpack one name per sequence")
            index, items = self.fresh(f"{names[0]}_index"), list(zip(names, seqs))
            self.ints.add(index)
            self.mutable.add(index)
        return self.indexed_loop(s, index, items, body, exits)

    def count_as_range(self, a):
        """`itertools.count(start, step)` of integer literals, zipped with sequences: the
        range it walks there (`range(start, sys.maxsize, step)`; zip stops at the shortest),
        which is indexed like any sequence. Anything else: `a` as it is."""
        values = [_int_literal(v) for v in getattr(a, "args", ())]
        if not (isinstance(a, gast.Call) and not a.keywords and len(a.args) <= 2 and
                None not in values):
            return a
        root = a.func
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name):
            return a
        held = self.env.get(root.id) if root.id in self.locals else None
        try:
            if isinstance(held, ir.Const):  # (`import itertools` in the function's body)
                parts, e = [], a.func
                while isinstance(e, gast.Attribute):
                    parts.append(e.attr)
                    e = e.value
                obj = held.value
                for part in reversed(parts):
                    obj = getattr(obj, part)
            else:
                obj = self.dotted(a.func)[0]
        except Exception:  # noqa: BLE001  (not a global's attribute: as written)
            return a
        if obj is not itertools.count:
            return a
        start, step = (values + [0, 1][len(values):])[:2]
        if step == 0:
            return a
        stop = sys.maxsize if step > 0 else -sys.maxsize
        return gast.copy_location(gast.Call(
            func=gast.Name("range", gast.Load(), None, None),
            args=[gast.Constant(v, None) for v in (start, stop, step)], keywords=[]), a)

    def indexed_loop(self, s, index: str, items: list, body, exits) -> None:
        """`for index in range(min of the lengths)`, each name its sequence's item."""
        if not exits and self.objects_walked(s, index, items, body):
            return
        if not exits and self.walked_by_index(s, index, items, body):
            return
        items = [(n, self.emit(self.op_call(list, [seq], {}, s), self.fresh(f"{n}_items"), s)
                  if self.may_hold_mapping(seq) and not self.is_range_atom(seq) else seq)
                 for n, seq in items]
        # (`enumerate(d.items())`, `zip(keys, gen)`: what Python's `for` takes from an
        # iterator, a dict or a set, once, in its order -- as the plain `for` does)
        count = None
        for _, seq in items:
            n = self.loop_count(seq, f"{items[0][0]}_count", s)
            if isinstance(count, ir.Const) and isinstance(n, ir.Const):
                count = n if n.value < count.value else count
            else:
                count = n if count is None else self.emit(
                    self.op_call(np.minimum, [count, n], {}, s), self.fresh("count"), s)
        outer, self.body = self.body, []
        try:
            self.env[index] = ir.Var(index)
            for n, seq in items:
                call = self.op_call(operator.getitem, [seq, ir.Index((ir.Var(index),), False)],
                                    {}, s)
                self.emit(call, n, s)
                self.env[n] = ir.Var(n)
            with self.carried_around(s):
                for st in body:
                    self.line = st.lineno
                    self.statement(st)
            loop_body = self.body
        finally:
            self.body = outer
        self.body.append(ir.For(index, ir.Const(0, "0"), count, ir.Const(1, "1"), loop_body,
                                s.lineno, exits))

    def argument_count(self, a, s) -> ir.Const | None:
        """`len(P)` of a list or tuple argument: its length as the call tells it (a transform
        made before any call waits for it), a constant; else None."""
        if not (isinstance(a, gast.Call) and isinstance(a.func, gast.Name) and
                a.func.id not in self.locals and self.pf.resolve(a.func.id) is len and
                len(a.args) == 1 and not a.keywords):
            return None
        n = argument_length(self.pf, a.args[0], s, "this loop picks objects by the index "
                            "of an argument's items: srcad writes it out once per item")
        return None if n is None else ir.Const(n, str(n))

    def walked_by_index(self, s, index: str, items: list, body) -> bool:
        """``for i, W in enumerate(Ws): net.layers[i].W = W`` (or ``layer = net.layers[i]``)
        over a list or tuple argument whose length the call tells: written out once per
        index, as ``for i in range(len(net.layers))`` is, where the body picks objects known
        here by the loop's index -- each store is into the object its index picks and its
        methods resolve. False: not such a loop (a transform made before any call waits for
        the arguments: chosen.argument_length)."""
        it = s.iter
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
                self.pf.resolve(it.func.id) in (enumerate, zip) and it.args):
            return False
        args = it.args
        if self.pf.resolve(it.func.id) is enumerate and len(args) == 1 and \
                isinstance(args[0], gast.Call) and isinstance(args[0].func, gast.Name) and \
                self.pf.resolve(args[0].func.id) is zip:
            args = args[0].args
        if len(items) >= 2 and self.is_range_atom(items[0][1]):
            # (`for i, (W, s) in enumerate(zip(Ws, ss))`, written as a zip with the count)
            index, items = items[0][0], items[1:]
            args = args[len(args) - len(items):]
        elif self.pf.resolve(it.func.id) is zip:
            return False  # (zip's own index is no name of the body's)
        if len(args) != len(items) or self.trips_over_known_objects(
                [ir.Const(0, "0"), ir.Const(1, "1")], index, body) is None:
            return False
        lengths = []
        for a, (_, seq) in zip(args, items):
            if isinstance(seq, ir.Seq):
                lengths.append(len(seq.items))
            elif isinstance(seq, ir.Const) and isinstance(seq.value, (list, tuple, range)):
                lengths.append(len(seq.value))
            else:
                n = argument_length(self.pf, a, s, "this loop picks objects by the index "
                                    "of an argument's items: srcad writes it out once per item")
                if n is None:
                    return False
                lengths.append(n)
        trips = self.trips_over_known_objects([ir.Const(0, "0"), ir.Const(min(lengths), "n")],
                                              index, body)
        if not trips:
            return False
        rows = [[ir.Const(k, str(k))] + [self.emit(self.op_call(
            operator.getitem, [seq, ir.Index((ir.Const(k, str(k)),), False)], {}, s),
            self.fresh(n), s) for n, seq in items] for k in trips]
        self.once_per_binding([index] + [n for n, _ in items], rows, body)
        return True

    def while_loop(self, s: gast.While):
        if s.orelse:
            raise self.unsupported("`while ... else`", s, "use a flag instead of `else`")
        body, exits = self.loop_exits(s)
        outer, self.body = self.body, []
        with self.carried_around(s):
            try:
                cond = self.expr(s.test, "cond", None)
                cond_body = self.body
            finally:
                self.body = outer
            loop_body = self.sub_block(body)
        self.body.append(ir.While(cond_body, cond, loop_body, s.lineno, exits))


def _int_literal(e) -> int | None:
    """The value of an integer literal (`3`, `-3`), else None."""
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        inner = _int_literal(e.operand)
        return None if inner is None else -inner
    return e.value if isinstance(e, gast.Constant) and type(e.value) is int else None


def _function_item(a) -> bool:
    """A function known when normalising (a user's, or one with a row), or a tuple or list
    display holding one: what a loop walks once per item, so that each call is that
    function's."""
    if isinstance(a, ir.Const):
        return isinstance(a.value, types.FunctionType) or rowed_callable(a.value)
    return isinstance(a, ir.Seq) and any(
        isinstance(b, ir.Const) and callable(b.value) and _function_item(b) for b in a.items)


def _function_sequence(value) -> bool:
    """A module's list or tuple of functions known when normalising (``ACTS = [np.tanh,
    relu]``: a user's, or one with a row): walked once per function, as a display of them
    is (`_function_item`), so that each call is that function's."""
    return type(value) in (list, tuple) and 0 < len(value) <= 256 and all(
        isinstance(v, types.FunctionType) or rowed_callable(v) for v in value)


# what a `for` walks by position (`xs[i]`): the other iterables are walked through list(xs)
_SEQUENCES = (list, tuple, np.ndarray, str, bytes, range)
# ops whose result is a list, a tuple or an array, whatever their arguments hold
_MAKE_SEQUENCES = frozenset({"list", "tuple", "list_append", "list_concat", "list_repeat",
                             "dict_keys", "sort_order"})
_MAPPINGS = frozenset({"dict", "dict_set", "dict_copy", "dict_get", "object_attribute"})


def maybe_mapping(atom, definitions, arrays=frozenset(), depth: int = 0,
                  item: bool = False) -> bool:
    """`LoopsMixin.may_hold_mapping` of an atom, given `definitions(name)`: the statements
    that assign a name (a user function called: its return, looked into the same way).
    item: might an item of the atom be one (`for k in caches[0]`)?"""
    if depth > 8:
        return True
    if isinstance(atom, ir.Const):
        v = atom.value
        if item:
            return isinstance(v, (list, tuple, dict)) or not isinstance(v, _SEQUENCES)
        return not isinstance(v, _SEQUENCES)
    if isinstance(atom, ir.Seq):
        return item and any(maybe_mapping(a, definitions, arrays, depth + 1)
                            for a in atom.items)
    if not isinstance(atom, ir.Var):
        return False
    for st in definitions(atom.name):
        if isinstance(st, ir.UserCall):
            ret = st.callee.ret.value if st.callee.ret is not None else None
            if st.unpack and isinstance(ret, ir.Seq) and atom.name in st.targets and \
                    len(ret.items) == len(st.targets):
                ret = ret.items[st.targets.index(atom.name)]
            elif st.unpack:
                return True
            inner = {}
            for x in ir.walk(st.callee.body):
                for d in ir.defs(x):
                    inner.setdefault(d, []).append(x)
            if maybe_mapping(ret, lambda n: inner.get(n, []), frozenset(), depth + 1, item):
                return True
        elif isinstance(st, ir.Call):
            name = getattr(st.op, "name", "")
            if is_opaque(st.op) or name in _MAPPINGS:
                return True
            args = list(st.args.values())
            if name in _MAKE_SEQUENCES:
                if item:
                    return True  # (the items of a list: anything)
            elif name == "copy" and args:
                if maybe_mapping(args[0], definitions, arrays, depth + 1, item):
                    return True
            elif name == "getitem":
                base, index = st.args.get("a"), st.args.get("index")
                if isinstance(base, ir.Var) and base.name in arrays:
                    continue
                sliced = isinstance(index, ir.Index) and any(
                    isinstance(p, ir.Slice) for p in index.parts)
                if maybe_mapping(base, definitions, arrays, depth + 1,
                                 item=item or not sliced):
                    return True
    return False


def _objects_of(seq) -> list | None:
    """The user objects a sequence srcad knows here holds, every item one: a module's or an
    object's list (a constant, guarded), or a display of such objects (`[net.l1, net.l2]`,
    `[l for l in net.layers if isinstance(l, Dense)]` unrolled); else None."""
    if isinstance(seq, ir.Const):
        return list(seq.value) if is_object_sequence(seq.value) else None
    if isinstance(seq, ir.Seq) and seq.items and all(isinstance(a, ir.Const) for a in seq.items):
        values = [a.value for a in seq.items]
        return values if is_object_sequence(values) else None
    return None


def _unpacked_first(target: str, body, seq: ir.Seq) -> list | None:
    """The names a loop's body unpacks its variable into first, `name, p = item` (a loop
    `for name, p in ...` desugared), where every item is a tuple display of that many atoms
    and the body reads the variable nowhere else; else None."""
    first = body[0] if body else None
    if not (isinstance(first, gast.Assign) and len(first.targets) == 1 and
            isinstance(first.targets[0], gast.Tuple) and isinstance(first.value, gast.Name)
            and first.value.id == target and
            all(isinstance(t, gast.Name) for t in first.targets[0].elts)):
        return None
    names = [t.id for t in first.targets[0].elts]
    if not all(isinstance(a, ir.Seq) and len(a.items) == len(names) for a in seq.items):
        return None
    if any(isinstance(n, gast.Name) and n.id == target for st in body[1:]
           for n in gast.walk(st)):
        return None
    return names


def _named_objects(seq: ir.Seq) -> bool:
    """A display of (name, object) pairs srcad knows here -- `model.named_parameters()` run
    while building the code (staticrun.py): each pair a tuple of constants, str / int names
    and user objects, at least one object. Walked once per pair, so a store into the object
    (`p.data = params[name]`) is followed, as for a display of the objects themselves."""
    return all(isinstance(a, ir.Seq) and a.kind == "tuple" and a.items and all(
        isinstance(b, ir.Const) for b in a.items) and
        is_object_sequence([b.value for b in a.items if type(b.value) not in (str, int)])
        for a in seq.items)


def _names_attributes_by(target: str, body) -> bool:
    """Does a loop's body name an attribute by its variable -- ``getattr(self,
    f"fc{i}")``, ``setattr(net, name, W)``, ``hasattr(...)``? Over constants, it is written
    out once per item, so each name is known and the object it picks resolves."""
    return any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
               n.func.id in ("getattr", "setattr", "hasattr") and len(n.args) >= 2 and
               any(isinstance(m, gast.Name) and m.id == target for m in gast.walk(n.args[1]))
               for st in body for n in gast.walk(st))


def _known_trips(bounds) -> list | None:
    """The ints `range(*bounds)` runs, where each bound is an int constant and they are 64
    at most; else None."""
    if not bounds or not all(isinstance(a, ir.Const) and type(a.value) is int
                             for a in bounds) or (len(bounds) == 3 and bounds[2].value == 0):
        return None
    trips = range(*(a.value for a in bounds))
    return list(trips) if 0 < len(trips) <= 64 else None


def _makes_closures(body) -> bool:
    """Does a loop's body make a function value (a lambda or nested def closures.py lifted:
    `fs.append(lambda x, w=w: x @ w)`)? Over a display, it is walked once per item, so each
    closure is known with what it closes over (closure_values.py)."""
    return any(isinstance(n, gast.Name) and n.id == PARTIAL
               for st in body for n in gast.walk(st))
