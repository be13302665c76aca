"""Normalize: desugar the user's function into A-normal form (srcad/ir.py).

Input: a fenced `ParsedFunction`. Output: an `ir.Function` whose body is a list of
`Call` statements, each one op of the op table applied to atoms, ending in one `Return`.

Grammar of the output:
    stmt   := Call(target, op, {param: atom}) | UserCall | Effect(kind, op, {param: atom})
            | If | For | While | Return(atom)
    atom   := Var | Const | Seq(atom*) | Index(part*)
Before this pass, closures.py lifts nested defs and lambdas and pylower.py lowers
comprehensions, sum/min/max and lst.append to loops. This module walks the statements
and assignments; the rest is in mixins along its seams: expressions become atoms and
`Call`s (expressions.py), loops become `For`/`While` (loops.py), calls are bound by calls.py
(a call with no row is an opaque op, opaque.py), print/assert/raise become `Effect`s
(effects.py), calls to lifted functions are spliced in (inline.py), and in-place writes
through views and aliases are carried or refused (aliasing.py).
Desugaring: nested expressions are hoisted into temporaries named after the assignment
they came from (``h = np.tanh(x @ W + b)`` gives ``h_matmul``, ``h_add``, ``h``); method
calls and attributes (``x.sum(axis=1)``, ``x.T``, ``x.reshape(n, -1)``) become op calls;
``x += y`` becomes ``x = x + y``; tuple unpacking becomes indexing; plain copies
(``y = x``) are propagated away. Every name is assigned once: a name the user reassigns
keeps its name at its last definition, and earlier values are renamed after the line
that made them (``h_L12``). Calls are bound to the op's parameters, so ``np.sum(x, 1)``
and ``x.sum(axis=1)`` both become ``sum(a=x, axis=1)``.

Before/after:
    h = np.tanh(x @ W + b)          h_matmul = x @ W
                                     h_add = h_matmul + b
                                     h = np.tanh(h_add)
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import inspect
import operator
import textwrap
import types
from collections import Counter

import gast
import numpy as np

from .. import ir, runtime, runtime_python
from ..errors import CalleeUnknownError, CountUnknownError, SrcadError, \
    UnsupportedSyntaxError, at_call_site, in_substitute
from ..naming import fresh
from ..ops import control, table
from ..pyfuncs import label_of
from . import guards
from .aliases import propagate_aliases
from .aliasing import VIEW_OPS, AliasingMixin, bound_names, seq_holds
from .calls import _RETURN, CallsMixin, changes_param
from .attrdicts import scalarise_attrdicts
from .attrstate import attribute_type, carry_attribute_state, container_aliases, \
    declared_names, named_object
from .chosen import fold_chosen_functions, fold_dict_reads, fold_getter_calls, \
    fold_known_dict_gets, \
    index_function_dicts, unroll_name_loops, zip_displays
from .ndenumerate import lower_ndenumerate
from .closures import lift_closures
from .desugar import desugar
from .effects import EffectsMixin, check_lost_changes
from .expressions import PY_BINARY, ExpressionsMixin, known_truth as _known_truth, \
    rowed_callable
from .itemloops import index_item_loops, written_in_place
from .fence import fence
from .closure_values import Closure, ClosureValuesMixin, walked_alone
from .inline import InlineMixin, hoist_written_arguments, written_params
from .kept_globals import kept_globals
from .partials import lower_partials
from .knowntests import UNKNOWN, Known, fold_known_tests, set_once
from .objcomps import held_dict_updates
from .loops import LoopsMixin
from .objects import mutated_names, scalarise_objects
from .methods import _BUILTIN_OPS, ATTRIBUTES, METHODS, RESERVED  # noqa: F401  (re-exported)
from .opaque import class_attribute, is_opaque, is_user_object, library_file, \
    opaque_attribute, writes_out
from .parse import LIFTED, ParsedFunction, parse_function, star_params_for_call, static_getattr
from .state import carried_state, state_given, with_state
from .pylower import lower_python
from .trylower import lower_try
from .walrus import hoist_named_exprs
from .factories import splice_factories
from .funclists import unroll_function_lists
from .rebinds import rename_rebound_params
from .recursion import MAX_DEPTH, RECURSIVE, Recursion, calls_itself, fold_static_arguments, \
    signature, static_arguments
from .pyforms import consumed_whole, lower_forms, mark_context_edges
from .callbacks import lower_callbacks
from .inner_transforms import lower_inner_transforms


def _block_locals(tree) -> set:
    """Names bound once, by `name = value` in a branch of an `if` or in a loop's body, and
    read only after it in that same block: one value, never joined with another -- the
    block, each trip of a loop, is straight-line code for them, as the function's top level
    is (`if c: lst = [x, x]; ... lst[k]` keeps the display, so a run-time index into it
    reads a known item; in a loop, `it = iter([x, v, x])` then `next(it)` gives x's
    cotangent at each read, in the tape's order, not where the display was made)."""
    stores: dict = {}
    for n in gast.walk(tree):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            for name in n.names:
                stores[name] = 2
    for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs:
        stores[a.id] = 2  # (a parameter: bound on entry too)
    found: set = set()

    def visit(body: list, nested: bool) -> None:
        for i, st in enumerate(body):
            if nested and isinstance(st, gast.Assign) and \
                    len(st.targets) == 1 and isinstance(st.targets[0], gast.Name) and \
                    stores.get(st.targets[0].id) == 1:
                name = st.targets[0].id
                after = {id(n) for later in body[i + 1:] for n in gast.walk(later)}
                if all(id(n) in after for n in gast.walk(tree)
                       if isinstance(n, gast.Name) and n.id == name
                       and isinstance(n.ctx, gast.Load)) and \
                        name not in _written_in_nested_blocks(body[i + 1:]) and not any(
                        isinstance(f, (gast.FunctionDef, gast.Lambda)) and any(
                            isinstance(m, gast.Name) and m.id == name for m in gast.walk(f))
                        for later in body[i + 1:] for f in gast.walk(later)):
                    found.add(name)
            if isinstance(st, (gast.If, gast.For, gast.While)):
                visit(st.body, True)
                visit(st.orelse, True)
            elif isinstance(st, (gast.With, gast.Try)):
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(st, field, []), nested)
                for h in getattr(st, "handlers", []):
                    visit(h.body, nested)

    visit(tree.body, False)
    return found


def _written_in_nested_blocks(stmts: list) -> set:
    """Names written into by index (`f[n] += v`) inside a loop or a branch among `stmts`:
    such a write joins the name's values there (a loop carries it), so it is not one value
    of its block (`f = np.zeros_like(p)` in a loop's body, then `for n in ...: f[n] += ...`)."""
    out: set = set()
    for st in stmts:
        for block in (n for n in gast.walk(st) if isinstance(n, (gast.If, gast.For, gast.While))):
            for n in (m for inner in block.body + block.orelse for m in gast.walk(inner)):
                targets = n.targets if isinstance(n, gast.Assign) else (
                    [n.target] if isinstance(n, gast.AugAssign) else [])
                out |= {t.value.id for t in targets
                        if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name)}
    return out


class Normalizer(CallsMixin, EffectsMixin, InlineMixin, AliasingMixin, ExpressionsMixin,
                 LoopsMixin, ClosureValuesMixin):
    def __init__(self, pf: ParsedFunction):
        self.pf = pf
        self.body: list = []
        self.inject: dict = {}
        self.locals = set(pf.params)
        for node in gast.walk(pf.tree):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.locals.add(node.id)
        # free names the body reads (globals, closure cells) are taken too, so a temporary
        # never shadows a global the generated code refers to by the same name
        free = {node.id for node in gast.walk(pf.tree)
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load)}
        self.taken = set(self.locals) | free | RESERVED
        # which user names are assigned more than once, and where
        self.defs = Counter()
        for node in gast.walk(pf.tree):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.defs[node.id] += 1
            # x[i] = v and x[i] += v give x a new value too (copy on write)
            targets = node.targets if isinstance(node, gast.Assign) else (
                [node.target] if isinstance(node, gast.AugAssign) else [])
            for t in targets:
                if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                    self.defs[t.value.id] += 1
        self.seen_defs = Counter()
        self.mutations: list = []  # (statement, IR name written into, line): see setitem
        self.array_writes: set = set()  # parameters written in place (check_mutations)
        self.augmented_stores: set = set()  # id(setitem) of `x[i] op= t` (refresh_after_loop)
        self.root = False  # the function transformed, not a callee (warns for its arguments)
        # (id(obj), attr) -> (obj, Var): the value a callee stored in `obj.attr` (`self.output
        # = ...` in a layer's forward), which later reads of `obj.attr` here read (state.py)
        self.attr_carry: dict = {}
        # (key, atom) of each `attr_carry` value read or given to a callee (`carried_around`)
        self.carry_log: list = []
        self.source_refusals: list = []  # (errors source mode raises, tape mode not: calls.py)
        self.attr_unknown: set = set()  # (id(obj), attr) a callee set in a branch or loop
        # (obj, attr, local): the attributes of objects known here this function carries by a
        # local (attrstate.py), whose values at the end its caller reads (state.py)
        self.state_locals: list = []
        self.state_names: dict = {}  # local -> (obj, attr), of state_locals
        self.carry_out = False  # (a callee called, not spliced in: its state_out is read)
        self.views: dict = {}  # straight-line name -> (base name, index) of a basic view
        self.view_made: dict = {}  # view name -> when its view was made (its tape order)
        self.propagations: set = set()  # ids of the statements that carry a write to a base
        self.undo_key: str | None = None  # a write through a scalar copy, maybe (ir.Call.undo)
        self.shared: list = []  # (base, view) IR names a carried write left sharing memory
        self.array_of: dict = {}  # IR name -> one made from it by alias_again (one_array)
        self.item_reads: dict = {}  # (container's IR name, index) -> its first read (same_item)
        self.slot_reads: dict = {}  # the same key -> (its last read, in which block, where)
        self.inlined: list = []  # the callees' IR normalised here: ir.Function.inlined
        self.augassigned: set | None = None  # names some `x op= t` rebinds (may_hold_number)
        self.held_by: dict = {}  # a pinned copy's IR name -> the name holding it
        self.mutable_holds: dict = {}  # loop name -> (the object it holds, since when)
        self.item_views: set = set()  # names made a container's item (refresh_item_holders)
        # IR name of a container -> (when, its items, the statements that made it): read back
        # after a loop or a branch wrote them (refresh_item_holders, list_items_of_atom)
        self.items_read_back: dict = {}
        # IR name of a list -> (when, writes in place so far, {slot: atom}): the slots that
        # hold the same object whichever way a top-level branch that rebuilt it went
        # (`slot_after_branch`)
        self.slots_after_branch: dict = {}
        # IR name -> the closure it holds (a nested def or lambda used as a value), and the
        # values it closed over when made (closure_values.py)
        self.closures: dict = {}
        self.closure_made: dict = {}
        self.maybe_slot: dict = {}  # a slot read back -> the object it held, maybe still
        self.augmenting = False  # (`x[i] op= t` being normalised: setitem)
        self.storing_at = None  # (the index a store writes: propagate_write)
        self.writing_held = None  # (what the loop name written held: propagate_write)
        self.held_written: set = set()  # (names a "held" store wrote: aliasing.py setitem)
        self.item_written = None  # (`x[i] op= t`: (the item read, the value stored))
        self.alias_stmts: set = set()  # ids of `z = y` copies into loop names (one array)
        self.folded: list = []  # module dict items read as constants (ir.Function.folded)
        self.entries: dict = {}  # parameter -> the IR name of its value on entry (entry_of)
        # a parameter stored into (`cache[k] = v`) and then given another object by plain
        # assignment (`cache = {}`): its value when it was rebound -- what the caller's
        # object holds at the return (reaches_argument)
        self.rebound_params: dict = {}
        self.rebound_maybe: set = set()  # ... rebound in a branch or a loop
        self.put_back_stores: set = set()  # id(setitem) into an item put back (aliasing.py)
        self.stored_attrs = None  # attribute names the function stores (expressions.py)
        self._parents: dict | None = None  # id(gast node) -> its parent (enclosing)
        # code srcad generated, transformed again (higher order): it adds in place only into
        # buffers it owns, so its `d += g` is not numpy's write into a shared array
        self.generated = str(pf.filename).startswith("<srcad-generated")
        # names assigned inside a loop or a branch keep one name for all their values
        self.mutable: set[str] = set()
        for node in gast.walk(pf.tree):
            if isinstance(node, (gast.If, gast.For, gast.While)):
                if isinstance(node, gast.For) and isinstance(node.target, gast.Name):
                    self.mutable.add(node.target.id)
                for inner in node.body + node.orelse:
                    for n in gast.walk(inner):
                        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                            self.mutable.add(n.id)
                        if isinstance(n, (gast.Assign, gast.AugAssign)):
                            for t in (n.targets if isinstance(n, gast.Assign) else [n.target]):
                                if isinstance(t, gast.Subscript) and isinstance(t.value,
                                                                                gast.Name):
                                    self.mutable.add(t.value.id)
        self.mutable -= _block_locals(pf.tree)
        self.mutable |= self.view_families_in_control_flow()
        self.mutable |= self.dicts_written_in_control_flow()
        self.ints: set = set()  # names that certainly hold Python ints (see note_int)
        self.made: dict = {}  # name -> the statements emit() made it by (loops.py)
        self.arrays = pf.arrays  # parameters that hold arrays (the call's arguments said)
        self.shapes: set = set()  # names that hold an array's shape
        self.nt_vars: dict = {}  # loop variable -> the namedtuple type of the items it runs over
        self.unpacking = None  # (the call node unpacked here, how many names): user_call
        self.env: dict[str, ir.Var | ir.Const] = {p: ir.Var(p) for p in pf.params}
        for name, obj in pf.constants.items():  # `self` of a bound method: an object
            self.locals.add(name)
            self.taken.add(name)
            self.env[name] = ir.Const(obj, name)
            self.inject[name] = obj
        for name, obj in pf.known.items():  # a parameter its caller always passes this object
            self.env[name] = ir.Const(obj, name)  # (spelled as the parameter: no injection)
            if type(obj) is str or obj is None:  # (a string, None: spelled as itself, so
                self.env[name] = ir.Const(obj, repr(obj))  # a callee spliced into its caller
                # reads it too)
        self.line = pf.first_line

    # -- names -------------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        return fresh(base.strip("_") or "t", self.taken)

    def object_spelled(self, obj, name: str) -> str:
        """The name generated code reads `obj` by: the one it is injected under already (a
        global of the user's module: `S`), else `name`, claimed for it."""
        known = next((k for k, v in self.inject.items() if v is obj), None)
        return known if known is not None else self.claim(name, obj)

    def claim(self, name: str, obj) -> str:
        """A name under which generated code reads `obj` (injected into its module): `name`
        itself unless this function or another function of the same program (a caller, a
        callee: one generated module) already uses it for another object."""
        program = _PROGRAM[-1] if _PROGRAM else {}
        while (program.get(name, obj) is not obj or self.inject.get(name, obj) is not obj
               or name in self.locals or name in RESERVED):
            self.taken.add(name)
            name = self.fresh(name)
        program[name] = obj
        self.inject[name] = obj
        self.taken.add(name)
        return name

    def def_name(self, user: str, line: int) -> str:
        """The IR name for this definition of the user's variable `user`."""
        self.seen_defs[user] += 1
        if user in self.mutable:
            return user
        last = self.seen_defs[user] == self.defs[user]
        # (a definition the count of assignments did not see -- a callee's write into the
        # array the name holds rebinds it -- gets a name of its own: one IR name, one value)
        if user not in self.pf.params and self.seen_defs[user] <= self.defs[user] and (
                last or self.defs[user] == 1):
            return user
        return self.fresh(f"{user}_L{line}")

    # -- errors ------------------------------------------------------------------------------
    def unsupported(self, what: str, node, hint: str | None = None):
        return self.pf.error(what, node, hint=hint, cls=UnsupportedSyntaxError)

    # -- statements --------------------------------------------------------------------------
    def run(self) -> ir.Function:
        self.top_body = self.body
        self.literal_binds: dict = {}  # name -> its `name = <literal>` at the top level
        for stmt in self.pf.tree.body:
            self.line = stmt.lineno
            self.statement(stmt)
        if not self.body or not isinstance(self.body[-1], ir.Return):
            raise self.pf.error(
                f"{self.pf.name} does not end with a `return` of its result",
                self.pf.tree,
                hint="return the value to differentiate",
                cls=UnsupportedSyntaxError,
            )
        for param, entry in self.entries.items():  # (see AliasingMixin.entry_of)
            op, args = self.op_call(control.identity, [ir.Var(param)], {}, self.pf.first_line)
            self.body.insert(0, ir.Call(entry, op, args, self.pf.first_line))
        self.check_mutations()
        self.snapshot_tests(self.body)
        # a dict parameter the body writes into: its value at the return rides along with
        # the returned atom while names are propagated below, then is kept apart (`written`)
        written = [p for p in self.pf.params if any(
            isinstance(s, ir.Effect) and s.kind == "setitem" and "param" in s.args
            and s.args["param"].value == p for s in ir.walk(self.body))]
        # (so does what the function leaves in each attribute it carries by a local, for its
        # caller: state.py)
        ret = self.body[-1]
        state = [(obj, attr, self.env[local]) for obj, attr, local in self.state_locals
                 if local in self.env] if self.carry_out else []
        if self.carry_out:  # (and what it stored on other objects it knows: state.py)
            state += _stored_on_known_objects(self.body, state)
        # (an array parameter written in place, by `p -= t` or through a view of it: its
        # value at the return, for a caller that passes its own array -- inline.py)
        arrays = [p for p in self.pf.params if p in self.array_writes and p not in written]
        riding = [self.rebound_params.get(p, self.env[p]) for p in written + arrays] + \
            [atom for _, _, atom in state]
        # (the closures it returns, and what they close over: closure_values.py)
        closing = self.closures_reached([ret.value])
        riding += [a for name, c in closing.items() for a in (ir.Var(name), *c.free.values())]
        if riding:
            self.body[-1] = ir.Return(ir.Seq((ret.value, *riding)), ret.line)
        if not self.generated:  # (srcad's own code, transformed again: no tape to agree with)
            self.body = propagate_aliases(self.body, self.pf.params, self.fresh)
        finals, array_finals = {}, {}
        if riding:
            items = self.body[-1].value.items
            self.body[-1] = ir.Return(items[0], ret.line)
            finals = dict(zip(written, items[1:1 + len(written)]))
            k = 1 + len(written) + len(arrays)
            array_finals = dict(zip(arrays, items[1 + len(written):k]))
            state = [(obj, attr, atom) for (obj, attr, _), atom in zip(state, items[k:])]
            rest = iter(items[k + len(state):])
            closing = {next(rest).name: Closure(c.fn, c.names, {k: next(rest) for k in c.free})
                       for c in closing.values()}
        for p in reversed(written):
            self.own_on_entry(p)
        self.body = _drop_unowned_syncs(self.body)
        lines = {n: self.pf.line(n) for n in range(self.pf.first_line, self.pf.last_line + 1)}
        fn = ir.Function(
            name=self.pf.name,
            params=list(self.pf.params),
            body=self.body,
            filename=self.pf.filename,
            first_line=self.pf.first_line,
            last_line=self.pf.last_line,
            inject=self.inject,
            names=self.taken,
            source_lines=lines,
            mutable=set(self.mutable),
            written=finals,
            written_arrays=array_finals,
            state_out=state,
            inlined=list(self.inlined),
        )
        fn.changes = check_lost_changes(fn)
        fn.closures_out = closing
        return fn

    def enclosing(self, node, kinds) -> list:
        """The statements of `kinds` (loops, branches) around `node` in the function."""
        if self._parents is None:
            self._parents = {id(c): n for n in gast.walk(self.pf.tree)
                             for c in gast.iter_child_nodes(n)}
        out, at = [], self._parents.get(id(node))
        while at is not None and at is not self.pf.tree:
            if isinstance(at, kinds):
                out.append(at)
            at = self._parents.get(id(at))
        return out

    def own_on_entry(self, param: str) -> None:
        """A parameter the function stores into (`p[k] = v` on the caller's list or dict): the
        generated code reads its own shallow copy of it under the parameter's name (as the
        argument came in: the backward, a pullback or a recomputation reads it long after the
        stores), and the stores go into the caller's object, kept under a name of its own."""
        held = self.fresh(f"{param}_caller")
        caller = ir.Const(held, repr(held))
        for s in ir.walk(self.body):
            if isinstance(s, ir.Effect) and s.kind in ("setitem", "sync") and \
                    "param" in s.args and s.args["param"].value == param and \
                    "held" not in s.args:  # (an object's own: sync_changed_arguments)
                s.args["caller"] = caller
        self.body.insert(0, ir.Effect("own", None, {"param": ir.Var(param), "caller": caller},
                                      self.pf.first_line))

    def statement(self, s):
        body, start = self.body, len(self.body)
        self.statement_kind(s)
        if not self.generated:
            self.pin_loop_values(s, body, start)
            self.sync_changed_arguments(body, start)

    def sync_changed_arguments(self, body: list, start: int) -> None:
        """After a statement that may change a list or dict a parameter holds in place -- a
        changing method of it (`c.pop()`, `c.append(v)`, `c.setdefault(k, [])`) or of a
        list or dict it holds (`c["hist"].append(v)`), or a function given either
        (`log_step(c)`, `log_step(c["hist"])`), in a callee's body spliced in too: an effect
        that makes the caller's object hold what the function's container holds at the end
        of the statement (its latest value, every store included), a level down where it
        holds the caller's own lists and dicts (`runtime.sync_into`). Where the function
        works on its own copy of the argument (`own_on_entry`, after a store into it) the
        change was made to the copy only -- before the session of 2026-12-07, thirteenth,
        a callee's append or a method of an inner list was lost there, silently; elsewhere
        the effect is dropped (`_drop_unowned_syncs`), the change having been made to the
        caller's object itself."""
        touched: list = []
        touched_held: list = []  # (obj, attr, atom) of lists and dicts carried for objects
        given_attrs = {pname for obj, attr, pname, _ in self.pf.attr_in
                       if type(getattr(obj, attr, None)) in (list, dict)}
        top = {id(st) for st in body[start:]}  # (a statement of a nested block has its own)
        for st in ir.walk(body[start:]):
            if given_attrs and isinstance(st, ir.Effect) and st.kind == "setitem" and \
                    "param" in st.args and st.args["param"].value in given_attrs:
                # (`e = s.cfg; e["n"] = v` of the list or dict an object holds, given as the
                # caller's value: its store goes into the caller's, and the object's is
                # synced below -- a wrong dict, silently, before the session of 2026-12-07,
                # fourteenth)
                given = [ir.Var(st.args["param"].value)]
            elif given_attrs and isinstance(st, ir.Call) and st.op.name == "in_layout":
                given = [st.args.get("like")]  # (`log = s.log; log += [v]`: likewise)
            elif isinstance(st, ir.UserCall):  # (what the callee may change: calls.py)
                given = [a for q, a in zip(st.callee.params, st.args)
                         if changes_param(st.callee, q)]
            elif isinstance(st, (ir.Call, ir.Effect)) and st.op is not None and \
                    st.op.family in ("opaque call", "opaque method"):
                given = list(st.args.values())
                if st.op.family == "opaque method" and \
                        st.op.name.lstrip(".") not in runtime_python.MUTATING:
                    given = [a for k, a in st.args.items() if k != "_obj"]
            else:
                continue
            for a in given:
                for v in ir.atom_vars(a):
                    p = self.param_reached(v)
                    if p is not None and p not in touched:
                        touched.append(p)
                    held = self.carried_reached(v) if p not in given_attrs and \
                        id(st) in top else None
                    if held is not None and held not in touched_held:
                        touched_held.append(held)
        at = len(body) - 1 if body and isinstance(body[-1], ir.Return) else len(body)
        for obj, attr, value in touched_held:
            # (`S.log.pop()` where this function carries `S.log` -- a callee left it, a
            # copy of the object's list: Python changes the object's own list, which this
            # makes hold the same items. Before the session of 2026-12-07, fourteenth, the
            # change was made to the copy alone, silently)
            at = self.sync_object(body, at, obj, attr, attr, value)
        given = {pname: (obj, attr) for obj, attr, pname, _ in self.pf.attr_in
                 if type(getattr(obj, attr, None)) in (list, dict)}  # (an array: copy on write)
        for p in touched:  # (before a `return` the statement ends with)
            if not isinstance(self.env.get(p), ir.Var):
                continue
            if p in given:
                # (`s.log` given to this function as the value its caller carries for the
                # object's list -- a copy of it -- changed in place here: `s.log.reverse()`
                # after the caller's `s.log.append(v)`. Python changes the object's own list,
                # which this makes hold the same items; before the session of 2026-12-07,
                # thirteenth, the object's list was left as it was, silently)
                obj, attr = given[p]
                at = self.sync_object(body, at, obj, attr, p, self.env[p])
                if (id(obj), attr) in self.attr_carry:
                    # (and what this function gives its callees for `s.cfg` from here on:
                    # `cfg["hist"] = ...` then `helper(s)` reading `s.cfg["hist"]` -- the old
                    # dict, silently, before the session of 2026-12-07, fourteenth)
                    self.attr_carry[(id(obj), attr)] = (obj, self.env[p])
                continue
            args = {"param": ir.Const(p, repr(p)), "value": self.env[p]}
            body.insert(at, ir.Effect("sync", None, args, body[-1].line))
            at += 1

    def sync_object(self, body: list, at: int, obj, attr: str, param: str, value) -> int:
        """Statements at `at` of `body` making the list or dict `obj.attr` holds hold what
        `value` holds (the object's own read as the code runs, then `sync_into` it; the
        effect's "held" keeps it where the function is spliced into its caller: inline.py);
        returns the index after them."""
        line = body[-1].line
        src = self.object_spelled(obj, f"{attr}_owner")
        own = self.fresh(f"{attr}_held")
        body.insert(at, ir.Call(own, opaque_attribute(attr), {"_obj": ir.Const(obj, src)}, line))
        body.insert(at + 1, ir.Effect("sync", None, {
            "param": ir.Const(param, repr(param)), "value": value,
            "caller": ir.Const(own, repr(own)), "held": ir.Const(attr, repr(attr))}, line))
        return at + 2

    def param_reached(self, name: str, depth: int = 0):
        """The parameter whose list or dict `name` is -- as it came in, or made again by
        stores into it -- or one it holds by items (a chain of reads, copies and stores),
        else None."""
        if name in self.pf.params and name not in self.rebound_params and \
                name not in self.rebound_maybe:
            return name
        p = next((p for p in self.pf.params if self.env.get(p) == ir.Var(name)), None)
        if p is not None:
            return p
        made = self.definitions(name)
        if depth > 8 or len(made) != 1 or not isinstance(made[0], ir.Call) or \
                made[0].op.name not in ("getitem", "copy", "setitem", "write_through"):
            return None
        first = next(iter(made[0].args.values()), None)
        return self.param_reached(first.name, depth + 1) if isinstance(first, ir.Var) \
            else None

    def carried_reached(self, name: str):
        """(obj, attr, atom): the list or dict a known object holds that `name` is -- as
        this function carries it (`attr_carry`: a callee left it), or read from the object
        (`s.cfg`) and made again by stores since (`cfg["a"] = v`, in a branch too: the
        function's own copy; the object's own container read, changed in place, needs
        nothing) -- or that `name` is read from by items (a chain of reads, copies and
        stores), with the atom holding the whole container's latest value; else None."""
        found = self._container_root(name, 0, name, frozenset())
        return found[:3] if found not in (None, _CYCLE) and found[3] else None

    def _container_root(self, name: str, depth: int, whole: str, seen: frozenset):
        """`carried_reached`'s walk: (obj, attr, atom, whether the function's own copy is
        on the way), None, or `_CYCLE` (back at a name on the way: a loop's or a branch's
        store made it again)."""
        if name in seen:
            return _CYCLE
        seen = seen | {name}
        for obj, atom in self.attr_carry.values():
            if atom == ir.Var(name):
                key = next(k for k, (o, a) in self.attr_carry.items() if a == atom)
                return (obj, key[1], atom, True) \
                    if type(getattr(obj, key[1], None)) in (list, dict) else None
        made = self.definitions(name)
        if depth > 8 or not made or not all(isinstance(d, ir.Call) for d in made):
            return None
        pairs = [(d, self._root_of(d, depth, whole, seen)) for d in made]
        roots = [r for _, r in pairs if r is not _CYCLE]
        if not roots:
            return _CYCLE
        if None in roots or len({(id(r[0]), r[1]) for r in roots}) != 1:
            return None  # (a store in a branch: each way the same object's container)
        obj, attr, atom, _ = roots[0]
        # (a way back to a name on the walk through a store: `log = setitem(log, ...)` in a
        # branch -- the function's own copy)
        again = any(r is _CYCLE and d.op.name != "getitem" for d, r in pairs)
        return obj, attr, atom, again or any(r[3] for r in roots)

    def _root_of(self, d: ir.Call, depth: int, whole: str, seen: frozenset):
        first = next(iter(d.args.values()), None)
        if d.op.family == "opaque attribute" and isinstance(first, ir.Const) and \
                is_user_object(first.value):
            attr = d.op.name[1:]
            held = getattr(first.value, attr, None)
            return (first.value, attr, ir.Var(whole), False) \
                if type(held) in (list, dict) else None
        if d.op.name not in ("getitem", "copy", "setitem", "write_through") or \
                not isinstance(first, ir.Var):
            return None
        getitem = d.op.name == "getitem"
        found = self._container_root(first.name, depth + 1, first.name if getitem else whole,
                                     seen)
        return found if found in (None, _CYCLE) or getitem else (*found[:3], True)

    def pin_loop_values(self, node, body: list, start: int) -> None:
        """A name of one value (not assigned in a loop or a branch) bound to the value of a
        name that is (`m = Model(W1)` gives `m.W1` the array `W1` holds, then `W1 = W1 * 2`
        in a branch), or a dict or list made of it here: it keeps the object it was given,
        under a name of its own -- one array with the other (alias_stmts) until the other is
        bound to another (`note_mutable_holds`)."""
        pinned: dict = {}
        holder = [None]

        def pin(atom, at=None):
            if isinstance(atom, ir.Seq):
                return ir.Seq(tuple(pin(x, at) for x in atom.items), atom.kind)
            if not isinstance(atom, ir.Var) or atom.name not in self.mutable:
                return atom
            kept = self.mutable_holds.get(atom.name, (None,))[0]
            if atom.name not in pinned and kept is not None and kept.name not in \
                    self.mutable and self.holds_now(atom.name, kept) and \
                    self.body is self.top_body and not self.made_by_alias_again(kept):
                pinned[atom.name] = kept  # (pinned before, and not bound again since)
            if atom.name not in pinned:
                op, args = self.op_call(control.identity, [atom], {}, node)
                made = ir.Call(self.fresh(f"{atom.name}_held_L{node.lineno}"), op, args,
                               node.lineno)
                if at is None:
                    body.append(made)
                else:  # (before the statement that puts it in a container)
                    body.insert(at, made)
                pinned[atom.name] = ir.Var(made.target)
                self.alias_stmts.add(id(made))
                self.held_by[made.target] = holder[0]  # (messages: `spelled`)
                self.note_mutable_holds(atom.name, pinned[atom.name])
            return pinned[atom.name]

        k = start
        while k < len(body):  # (a dict display or a store of a loop name's value)
            st = body[k]
            if isinstance(st, ir.Call) and st.op.name in ("dict", "setitem") and \
                    st.target not in self.mutable:
                holder[0] = st.target
                before = len(body)
                st.args = {a: pin(v, k) if a == "value" or (st.op.name == "dict" and
                                                      a.startswith("v")) else v
                           for a, v in st.args.items()}  # (the values put there)
                k += len(body) - before
            k += 1
        for n, atom in list(self.env.items()):
            if n in self.mutable or n not in self.locals or not isinstance(
                    atom, (ir.Var, ir.Seq)) or atom == ir.Var(n):
                continue
            holder[0] = n
            held = pin(atom)
            if held != atom:
                self.env[n] = held

    def reshaped_in_place(self, name: str) -> bool:
        """May `name.shape = s` be `name = name.reshape(s)`: a local that holds an array an
        op of this function made (not a view of another, not an argument), at the top level,
        no other name or container holding that object?"""
        atom = self.env.get(name)
        if name in self.pf.params or name not in self.locals or not isinstance(atom, ir.Var) \
                or self.body is not self.top_body or self.generated:
            return False
        defs = self.definitions(atom.name)
        if len(defs) != 1 or not isinstance(defs[0], ir.Call) or defs[0].op.view or \
                defs[0].op.name in ("copy", "alias_again", "in_layout") or \
                is_opaque(defs[0].op):
            return False
        return not any(n != name and (v == atom or isinstance(v, ir.Seq) and atom in v.items)
                       for n, v in self.env.items())

    def made_by_alias_again(self, var: ir.Var) -> bool:
        """Is `var` an `alias_again` of another holder (`y op= t` with `z = y` before): the
        object y holds when y held an array, z's old number when it held a number -- which
        the name written need not hold (it holds the new number then)."""
        return any(isinstance(st, ir.Call) and st.op.name == "alias_again"
                   for st in self.definitions(var.name))

    def statement_kind(self, s):
        if isinstance(s, gast.Return):
            if s.value is None:
                raise self.unsupported("`return` without a value", s, "return the result")
            atom = self.expr(s.value, self.pf.name, into=_RETURN)
            self.body.append(ir.Return(atom, s.lineno))
        elif isinstance(s, (gast.Assign, gast.AnnAssign)):
            targets = s.targets if isinstance(s, gast.Assign) else [s.target]
            if s.value is None:
                return
            if len(targets) != 1:
                raise self.unsupported("chained assignment (a = b = ...)", s,
                                       "assign one name per statement")
            for t in bound_names(targets[0]):
                if t in self.pf.params and t not in self.rebound_params and not self.generated:
                    held = self.env[t]
                    if t in self.mutable:  # (one IR name for all its values: keep this one)
                        op, args = self.op_call(control.identity, [held], {}, s)
                        held = self.emit((op, args), self.fresh(f"{t}_before_L{s.lineno}"), s)
                    self.rebound_params[t] = held
                    if self.enclosing(s, (gast.If, gast.For, gast.While)):
                        self.rebound_maybe.add(t)  # (on some paths only: reaches_argument)
            self.assign(targets[0], s.value, s)
        elif isinstance(s, gast.AugAssign):
            if isinstance(s.target, gast.Subscript):
                # x[i] += v  is  x[i] = x[i] + v
                load = gast.Subscript(value=s.target.value, slice=s.target.slice,
                                      ctx=gast.Load())
                value = gast.copy_location(gast.BinOp(left=gast.copy_location(load, s),
                                                      op=s.op, right=s.value), s)
                held = s.target.value.id if isinstance(s.target.value, gast.Name) else None
                items = self.list_items_of(held) if held and not self.generated else None
                start = len(self.body)
                self.augmenting = True  # (setitem: its item is written in place)
                try:
                    self.assign(s.target, value, s)
                finally:
                    self.augmenting = False
                self.augmented_stores.update(id(st) for st in self.body[start:])
                if items and self.body is self.top_body:
                    # (`ps[0] -= t` of an array item: numpy's one object, written; in a
                    # loop, refresh_after_loop carries it once the loop is done)
                    self.refresh_item_holders(held, items, s)
                return
            if not isinstance(s.target, gast.Name):
                raise self.unsupported("augmented assignment to an attribute", s,
                                       "assign the new value to a name")
            value = gast.BinOp(left=gast.Name(s.target.id, gast.Load(), None, None), op=s.op,
                               right=s.value)
            gast.copy_location(value, s)
            start = len(self.body)

            def write():
                self.assign(s.target, value, s)
                self.mark_inplace(self.body[start:], self.env.get(s.target.id), s)

            self.write_name_in_place(s.target.id, write, s)
        elif isinstance(s, gast.Expr):
            if isinstance(s.value, gast.Constant) and isinstance(s.value.value, str):
                return  # docstring
            v = s.value
            if (isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute)
                    and v.func.attr == "push" and isinstance(v.func.value, gast.Name)
                    and v.func.value.id in self.locals and len(v.args) == 1):
                # stack_h.push(h): generated code, being transformed again
                value = self.expr(v.args[0], v.func.value.id, None)
                self.body.append(ir.Push(v.func.value.id, value, s.lineno))
                return
            self.expr_statement(s)  # print(...), a call made for its effect (effects.py)
        elif isinstance(s, gast.Assert):
            self.assert_statement(s)
        elif isinstance(s, gast.Raise):
            self.raise_statement(s)
        elif isinstance(s, (gast.Pass, gast.Delete)):
            return  # `del x` only frees memory: no value changes
        elif isinstance(s, gast.If):
            # (`if layer.trainable:` of a known layer; `if not self.built: ...; self.built =
            # True`, the branch setting what it tests)
            truth = self.static_truth(s.test, set_once(s.test, s.body))
            test = self.expr(s.test, "cond", None) if truth is None else \
                ir.Const(truth, repr(truth))
            if _known_truth(test) is not None:
                # `if self.act is not None:` of an attribute known (and guarded) here: only
                # the branch Python takes is code (the other may call None, or a method
                # with other parameters)
                taken, dead = (s.body, s.orelse) if _known_truth(test) else (s.orelse, s.body)
                self.forget_defs(dead)
                for st in taken:
                    self.line = st.lineno
                    self.statement(st)
                return
            before = dict(self.views)
            lists = self.lists_spelled(s)
            ends: list = []
            body = self.sub_block(s.body, lists, ends)
            after_body, self.views = self.views, dict(before)
            orelse = self.sub_block(s.orelse, lists, ends)
            self.views_join([after_body, self.views])
            self.body.append(ir.If(test, body, orelse, s.lineno))
            self.refresh_after_loop(lists, s)
            self.note_slots_after_branch(ends)
        elif isinstance(s, (gast.For, gast.While)):
            after = self.views_enter_loop(s)
            lists = self.lists_spelled(s)
            if isinstance(s, gast.For):
                self.for_loop(s)
            else:
                self.while_loop(s)
            self.views = after  # (what the body made may not exist: it may not have run)
            self.refresh_after_loop(lists, s)
        else:
            raise self.unsupported(f"`{type(s).__name__}` statements are not supported", s)

    def snapshot_tests(self, body) -> None:
        """A branch's test that the branch itself assigns (`if first: ...; first = False`, or
        `a and b`'s flag) is copied before the branch: the backward replays the branch under
        the test's value from when the branch ran, not the value it left behind."""
        for i in range(len(body) - 1, -1, -1):
            s = body[i]
            for inner in (getattr(s, "body", None), getattr(s, "orelse", None),
                          getattr(s, "cond_body", None)):
                if isinstance(inner, list):
                    self.snapshot_tests(inner)
            if isinstance(s, ir.If) and isinstance(s.test, ir.Var) and s.test.name in {
                    d for x in ir.walk(s.body + s.orelse) for d in ir.defs(x)}:
                snap = self.fresh(f"{s.test.name}_before")
                op, args = self.op_call(control.identity, [s.test], {}, s.line)
                body.insert(i, ir.Call(snap, op, args, s.line))
                s.test = ir.Var(snap)

    def lists_spelled(self, node) -> dict:
        """{name: its items} of the lists and dicts a loop or a branch spells whose items
        are known before it (`refresh_after_loop`)."""
        spelled = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
        return {} if self.generated else {
            n: items for n in spelled & set(self.env)
            if (items := self.list_items_of(n)) is not None}

    def refresh_after_loop(self, lists: dict, node) -> None:
        """A loop or a branch that wrote the items of a list in place (`for p in ps: p -=
        t`, `if c: ps[1] *= 2`: a `write_through` into it, or `op=` into an item, no store
        of another object): the names and displays holding those arrays see them written
        (`refresh_item_holders`) -- read back from the list, as they are whichever way it
        went."""
        loop = self.body[-1] if self.body else None
        if not lists or not isinstance(loop, (ir.For, ir.While, ir.If)):
            return
        through, stored = set(), set()
        for st in ir.walk([loop]):
            if isinstance(st, ir.Call) and st.op.name in ("write_through", "setitem"):
                x = next(iter(st.args.values()), None)
                if isinstance(x, ir.Var):
                    # (`ps[k] -= t` is a store of the item numpy wrote in place)
                    (through if st.op.name == "write_through" or id(st) in
                     self.augmented_stores else stored).add(x.name)
        for n, items in lists.items():
            if n in through and n not in stored:
                self.refresh_item_holders(n, items, node)
            elif n in stored and n not in through:
                self.read_back_stored(n, items, loop, node)

    def read_back_stored(self, name: str, items, block, node) -> None:
        """A loop or a branch stored other objects into some slots of the list or dict `name`
        (`if c: D["y"] = D["y"] * 2`), by constant keys: the other slots hold what they held,
        and each stored slot is read back -- it holds the new object or, where the stores did
        not run, the old one, which the names holding the old one may hold (`maybe_slot`: a
        later write into it is carried to them by asking `item_again` when the code runs)."""
        now = self.env.get(name)
        if self.body is not self.top_body or not isinstance(now, ir.Var):
            return
        keys = set()
        for st in ir.walk([block]):
            if isinstance(st, ir.Call) and st.op.name == "setitem" and \
                    next(iter(st.args.values()), None) == now:
                index = st.args.get("index")
                parts = index.parts if isinstance(index, ir.Index) and not index.is_tuple \
                    else (index,)
                if len(parts) != 1 or not isinstance(parts[0], ir.Const):
                    return  # (a slot known only when it runs)
                keys.add(parts[0].value)
        after = []
        for k, old in items:
            if k not in keys:
                after.append((k, old))
                continue
            back = self.emit(self.op_call(operator.getitem, [now, ir.Index(
                (ir.Const(k, repr(k)),), False)], {}, node),
                self.fresh(f"{name}_item_L{node.lineno}"), node)
            if isinstance(old, ir.Var):
                self.maybe_slot[back.name] = old
            after.append((k, back))
        self.items_read_back[now.name] = (
            sum(isinstance(st, ir.Call) for st in self.statements_so_far()), tuple(after),
            frozenset())

    def write_name_in_place(self, name: str, write, node) -> None:
        """`name op= t` (or a callee's write into the array `name` passed it: inline.py):
        `write()` binds `name` to its new value, then what shares its memory is rebuilt, as
        numpy's one array would show it."""
        before = self.env.get(name)
        kept = {k: v for k, v in self.views.items() if name in (k, v[0])}
        self.writing_held = self.held_object(name)
        snap = None
        if name in self.mutable and isinstance(before, ir.Var) and \
                not self.generated and kept.get(name, (None, None))[1] == "element":
            # (`p = ps[i]; p += 1` in a loop: one IR name for all of p's values, so the
            # item write_through asks about -- the old p -- is kept under a name first)
            op, args = self.op_call(control.identity, [before], {}, node)
            snap = self.emit((op, args), self.fresh(f"{name}_before_L{node.lineno}"), node)
        write()
        self.views.update(kept)  # `r += 1` on a view writes into its base in numpy
        # numpy would write into that array in place (srcad's own code, transformed again,
        # adds in place only into buffers it owns: not a write anything else can see)
        if isinstance(before, ir.Var) and not self.generated:
            stmt = self.body[-1]
            after = self.env.get(name)
            rebuilt = {name}
            aliased = any(n != name and (a == before or seq_holds(a, before) or (
                self.display_written(a) and any(
                    x == before for _, x in self.list_items_of_atom(a) or ())))
                          for n, a in self.env.items())
            if isinstance(after, ir.Var) and (kept or aliased or self.writing_held):
                rebuilt = self.propagate_write(name, before, after, node,
                                               augmented=True, old_item=snap)
            self.mutations.append((stmt, before.name, node.lineno, False, rebuilt))
        self.writing_held = None

    def display_written(self, atom) -> bool:
        """Is `atom` a list display srcad held item by item, written in place through a slot
        holding one array twice (`L = [W, W, V]; L[1] *= 2`: the `write_through` it became,
        whose items srcad still knows -- a later `V *= 2` is carried into its slot)?"""
        if not isinstance(atom, ir.Var):
            return False
        made = self.definitions(atom.name)
        return len(made) == 1 and isinstance(made[0], ir.Call) and \
            made[0].op.name == "write_through" and isinstance(
                next(iter(made[0].args.values()), None), ir.Seq)

    def mark_inplace(self, made: list, result, node) -> None:
        """Mark the op of `x op= y` (numpy runs it into x's memory: see interpret.py's
        check_inplace): the call that made x's new value `result`, through the copy a loop
        name takes (`h_add = h + b; h = h_add`)."""
        calls = {st.target: st for st in made if isinstance(st, ir.Call)}
        st = calls.get(result.name) if isinstance(result, ir.Var) else None
        if st is not None and st.op is table.lookup(control.identity):
            src = st.args.get("x")
            st = calls.get(src.name) if isinstance(src, ir.Var) else None
        if st is not None and st.op.name in PY_BINARY:
            st.inplace = True
            self.keep_layout(st, node)

    def keep_layout(self, st: ir.Call, node) -> None:
        """`v op= t` keeps v's memory layout in numpy (the result goes into v's memory), so
        the new value is made in it too: `v_op = v + t; v_new = in_layout(v_op, v)` (the same
        values; a later reduction then adds in numpy's order). The tape does the same
        (tape_tensor.py `_inplace`)."""
        like = next(iter(st.args.values()))
        at = next((i for i in range(len(self.body) - 1, -1, -1) if self.body[i] is st), None)
        if isinstance(like, ir.Const) and type(like.value) is list and \
                getattr(like, "src", None):
            # (`h = NET.hist; h += [v]`: a list a module global or an object holds, read as a
            # constant; Python's `+=` extends that very list, srcad's `h + [v]` made a new
            # one -- the holder's readers saw the old list, zeros, silently, before the
            # session of 2026-12-07, twelfth)
            raise self.unsupported(
                f"`{ast.unparse(gast.gast_to_ast(node))}` extends in place a list that a "
                f"module global or an object holds (`{like.src}`): Python changes that very "
                f"list, which every holder then shows; srcad would make a new one", node,
                hint=f"extend it through what holds it (`obj.attr += [...]`, "
                f"`obj.attr.extend(...)`), which srcad follows, or copy it first "
                f"(`h = list(...)`)")
        if not isinstance(like, ir.Var) or at is None:
            return
        target, st.target = st.target, self.fresh(f"{st.target}_op")
        op, args = self.op_call(runtime.in_layout, [ir.Var(st.target), like], {}, node)
        self.body.insert(at + 1, ir.Call(target, op, args, st.line))

    @contextlib.contextmanager
    def carried_around(self, node):
        """Around the normalising of a loop's body (one pass for every trip): a value carried
        for an object's attribute (`attr_carry`: stored here or left by a callee, the object
        reached as `self.p`) that the body reads -- or gives to a callee -- and then sets
        again by a call is the value from before the loop in every trip, where Python's
        later trips read the one the trip before left: refused (a wrong gradient, silently,
        before). An attribute named through a global or a parameter (`P.pos`) lives in a
        local of the loop (attrstate.py) and is followed."""
        start = {k: a for k, (_, a) in self.attr_carry.items()}
        mark = len(self.carry_log)
        yield
        for key, atom in self.carry_log[mark:]:
            if key in start and atom == start[key] and \
                    self.attr_carry.get(key, (None, None))[1] != atom:
                obj = self.attr_carry.get(key, (None, None))[0]
                kind = type(obj).__name__ if obj is not None else "an object"
                raise self.unsupported(
                    f"`.{key[1]}` of a {kind} is read in this loop and set again by a call "
                    f"in it, the object reached through another one (`self.p.{key[1]}`): "
                    f"srcad would read the value from before the loop in every trip", node,
                    "name the object by a global or a parameter in the loop's function "
                    "(`P.step(...)`), or carry the value in a local (`pos = self.p.pos; "
                    "for ...: pos = ...`) and store it after the loop")

    def state_now(self) -> list:
        """[(obj, attr, atom)]: the values this function holds for attributes of objects known
        here at this point -- stored by it or carried out of a callee (`attr_carry`), or the
        local an attribute lives in (attrstate.py's, or an existing object's scalarised by
        objects.py) where it is bound: what a callee reading them is given (state.py)."""
        now = {k: (o, k[1], a) for k, (o, a) in self.attr_carry.items()}
        self.carry_log.extend((k, a) for k, (_, a) in self.attr_carry.items())
        for obj, attr, local in self.state_locals:
            if local in self.env and (id(obj), attr) not in now:
                now[(id(obj), attr)] = (obj, attr, self.env[local])
        return list(now.values())

    def makes_list(self, atom) -> bool:
        """Is `atom` a list this function made (a display, `lst.append(v)`'s list, a copy
        of one), as the statements so far in this block show?"""
        for _ in range(len(self.body)):
            if isinstance(atom, ir.Seq):
                return atom.kind == "list"
            st = next((st for st in reversed(self.body) if isinstance(st, ir.Call) and
                       isinstance(atom, ir.Var) and st.target == atom.name), None)
            if st is None:
                return False
            if st.op.name in ("list_concat", "list_repeat", "list_append", "list"):
                return True
            if st.op.name != "copy":
                return False
            atom = st.args.get("x")
        return False

    def held_value(self, value, attr: str, node):
        """The value an object is given (`l.W1 = A`), under a name of its own where the name
        it is read from is one IR name for several values (`A, B = p` in a loop over the
        layers, written out once per layer): what the object holds -- and a method called
        later reads -- is the value stored, not the name's last one (every layer got the last
        layer's weights, and the others a zero gradient, before)."""
        if isinstance(value, ir.Var) and value.name in self.mutable:
            return self.emit(self.op_call(control.identity, [value], {}, node),
                             self.fresh(f"{value.name}_{attr}"), node)
        if isinstance(value, ir.Seq):  # (`l.cache = [A, B]`: each item so)
            return ir.Seq(tuple(self.held_value(v, attr, node) for v in value.items),
                          value.kind)
        return value

    def note_state(self, obj, attr: str, value, node) -> None:
        """`obj.attr = v` here: a callee called after it that reads `obj.attr` is given v
        (state.py), and the other locals this function keeps `obj.attr` in hold it too; set
        in a branch or a loop, the value there is not one atom: forgotten."""
        if not (isinstance(obj, ir.Const) and is_user_object(obj.value)):
            return
        if not (isinstance(value, ir.Var) and value.name in self.state_names):  # (bind did)
            self.carry_into_local(obj.value, attr, value, node)
        key = (id(obj.value), attr)
        if self.body is self.top_body:
            self.attr_carry[key] = (obj.value, value)
            self.attr_unknown.discard(key)
        else:
            self.attr_carry.pop(key, None)
            self.attr_unknown.add(key)

    def forget_defs(self, stmts) -> None:
        """Statements dropped as dead (a branch a known test never takes): the definitions
        they held no longer count (`def_name` names a variable's last definition after the
        user's name)."""
        for st in stmts:
            for node in gast.walk(st):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    self.defs[node.id] -= 1
                targets = node.targets if isinstance(node, gast.Assign) else (
                    [node.target] if isinstance(node, gast.AugAssign) else [])
                for t in targets:
                    if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                        self.defs[t.value.id] -= 1

    def sub_block(self, stmts, lists=(), ends=None) -> list:
        """`stmts` made into a block of their own; `ends` (given) gets the items of the
        lists `lists` known at its end."""
        outer, self.body = self.body, []
        try:
            for st in stmts:
                self.line = st.lineno
                self.statement(st)
            if ends is not None:
                ends.append({n: self.list_items_of(n) for n in lists})
            return self.body
        finally:
            self.body = outer

    def note_slots_after_branch(self, ends: list) -> None:
        """A top-level branch that rebuilt a list whose items were known (`t = lst.pop(0)
        if c else ...`): the slots that hold one object at the end of both arms hold it
        after the branch, whichever way it went (`slot_after_branch`). A name of one value
        only (one that a loop or a branch gives other values may be another by then)."""
        if self.body is not self.top_body or self.generated or len(ends) != 2:
            return
        for n in ends[0]:
            now = self.env.get(n)
            first, second = (dict(e.get(n) or ()) for e in ends)
            same = {k: x for k, x in first.items() if type(k) is int and k >= 0
                    and second.get(k) == x and isinstance(x, ir.Var)
                    and self.one_value_so_far(x)}
            if isinstance(now, ir.Var) and same:
                # (every slot, both ways, one object: `[u]` or `[u, u]` -- any index reads it)
                held = {*first.values(), *second.values()}
                whole = next(iter(held)) if len(held) == 1 and set(same.values()) == held and \
                    all(type(k) is int for k in (*first, *second)) else None
                if whole is not None:  # (and a constant index in range both ways: -1, say)
                    n = min(len(first), len(second))
                    same = {k: whole for k in range(-n, n)}
                self.slots_after_branch[now.name] = (
                    sum(isinstance(st, ir.Call) for st in self.statements_so_far()),
                    len(self.mutations), same, whole)

    def slot_after_branch(self, base, index):
        """`lst[k]` read at the top level after a branch that rebuilt `lst`, with no
        statement binding `lst` since: the object slot k holds on both paths, if one
        (`note_slots_after_branch`) -- read as that object's name, as from a display, so
        its adjoint gathers every read of the array in the order the backward reaches
        them, as the tape's one Tensor does. Else None."""
        part = None if index.is_tuple else index.parts[0]
        if not (isinstance(part, ir.Const) and type(part.value) is int):
            return None
        same = self.slots_still(base)
        return None if same is None else same[0].get(part.value)

    def every_slot_after_branch(self, base, it, body):
        """`for x in lst:` at the top level after a branch that rebuilt `lst` so that every
        slot holds one object whichever way it went (`[u, u]`, one popped or not), the
        loop's body not naming `lst`: that object, which each item the loop takes is (read
        as that name, as `slot_after_branch` reads a constant index, so a run-time index --
        `sum(lst)` -- adds its cotangent where the tape's one Tensor does). Else None."""
        if not walked_alone(it, body):
            return None
        same = self.slots_still(base)
        return None if same is None else same[1]

    def slots_still(self, base):
        """(slot -> object, the one object of every slot or None) of `base`, a list a
        top-level branch rebuilt (`note_slots_after_branch`), read at the top level with no
        statement binding it or writing in place since; else None."""
        if not isinstance(base, ir.Var) or base.name not in self.slots_after_branch or \
                self.body is not self.top_body:
            return None
        at, writes, same, whole = self.slots_after_branch[base.name]
        if len(self.mutations) != writes:
            return None  # (a write in place since: the list's slot, numpy's array, shows
            # it where srcad's holders of the object may not -- read as written)
        stmts = [st for st in self.statements_so_far() if isinstance(st, ir.Call)]
        if any(base.name in ir.defs(st) or st.op.name in ("write_through", "setitem")
               for st in stmts[at:]) or self.env.get(base.name) != base or \
                not all(self.one_value_so_far(x) for x in same.values()):
            return None
        return same, whole

    def one_value_so_far(self, x: ir.Var) -> bool:
        """Has the IR name `x` held one value up to here: a name of one value, or one that a
        loop or branch later gives others (one IR name for all) not bound by any statement
        yet -- a parameter that `if c: x = x / 2` rebinds further down."""
        return x.name not in self.mutable or not any(
            x.name in ir.defs(st) for st in self.statements_so_far())

    def unpack_by_index(self, names, whole, node):
        """`a, b = whole`: each name the item at its position (getitem's rule), once
        `runtime.unpacked` has checked the length as Python does."""
        if isinstance(whole, ir.Const):  # (a constant: checked now, as Python would)
            try:
                runtime.unpacked(whole.value, len(names))
            except (TypeError, ValueError) as e:
                raise self.pf.error(f"{type(e).__name__}: {e}", node) from None
        else:
            check = self.op_call(runtime.unpacked, [whole, ir.Const(len(names),
                                                                    repr(len(names)))], {}, node)
            whole = self.emit(check, self.fresh(_hint(names)), node)
        for i, n in enumerate(names):
            call = self.op_call(operator.getitem, [whole, ir.Index((ir.Const(i, repr(i)),),
                                                                   False)], {}, node)
            self.env[n] = self.emit(call, self.def_name(n, node.lineno), node)

    def assign(self, target, value, node):
        if isinstance(target, gast.Name):
            self.bind(target.id, value, node)
        elif isinstance(target, (gast.Tuple, gast.List)) and any(
                isinstance(t, (gast.Subscript, gast.Attribute)) for t in target.elts) and \
                not any(isinstance(t, gast.Starred) for t in target.elts):
            # `dh, grads["W2"] = f(...)`: the value once, then each item into its target
            whole = self.expr(value, "unpacked", into=None)
            held = self.fresh("unpacked")
            self.locals.add(held)
            self.env[held] = whole
            for i, t in enumerate(target.elts):
                item = gast.copy_location(gast.Subscript(
                    value=gast.Name(held, gast.Load(), None, None),
                    slice=gast.Constant(i, None), ctx=gast.Load()), node)
                self.assign(t, item, node)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if any(isinstance(t, (gast.Tuple, gast.List)) for t in target.elts):
                # (a, b), saved = g_fwd(x): unpack level by level
                whole = self.expr(value, "unpacked", into=None)
                self.unpack_atom(target, whole, node)
                return
            names = []
            for t in target.elts:
                if not isinstance(t, gast.Name):
                    raise self.unsupported("starred unpacking", node, "unpack into plain names")
                names.append(t.id)
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(names):
                atoms = [self.expr(v, n, into=None) for v, n in zip(value.elts, names)]
                self.bind_items(names, atoms, node)
                return
            if isinstance(value, gast.Call) and self.is_user_function(value.func):
                # a, b = helper(x): the call's own targets
                outer, self.unpacking = self.unpacking, (value, len(names))
                try:
                    atom = self.expr(value, _hint(names), into=None)
                finally:
                    self.unpacking = outer
                call = self.body[-1] if self.body else None
                if not (isinstance(call, ir.UserCall) and ir.Var(call.targets[0]) == atom):
                    # (spliced in: frontend/inline.py) the callee's tuple, or an atom holding one
                    self.unpack_spliced(names, atom, node)
                    return
                if not call.multi:  # (a list it built, `out.append(...)`: item by item)
                    self.unpack_by_index(names, atom, node)
                    return
                call.targets = [self.def_name(n, node.lineno) for n in names]
                call.unpack = True
                self.taken.update(call.targets)
                for n, t in zip(names, call.targets):
                    self.env[n] = ir.Var(t)
                    if n in self.mutable and t != n:  # pragma: no cover - def_name keeps it
                        pass
                return
            if isinstance(value, gast.Name) and value.id in self.locals and \
                    self.surely_container(self.env.get(value.id)) and \
                    written_in_place(self.pf.tree.body, set(names) | {value.id}):
                # `W, b = ps` of a list, then `W -= t` or `ps[0] += t`: Python's names are
                # the list's items, whose writes the list shows -- each bound as `W = ps[0]`
                # binds it
                self.emit(self.op_call(runtime.unpacked, [self.name_atom(value), ir.Const(
                    len(names), repr(len(names)))], {}, node), self.fresh(_hint(names)), node)
                for i, n in enumerate(names):
                    self.assign(gast.copy_location(gast.Name(n, gast.Store(), None, None),
                                                   node),
                                gast.copy_location(gast.Subscript(
                                    value=gast.Name(value.id, gast.Load(), None, None),
                                    slice=gast.Constant(i, None), ctx=gast.Load()), node),
                                node)
                return
            whole = self.expr(value, _hint(names), into=None)
            if isinstance(whole, ir.Seq) and len(whole.items) == len(names):
                self.bind_items(names, list(whole.items), node)  # (an inlined call's tuple)
                return
            self.unpack_by_index(names, whole, node)
        elif isinstance(target, gast.Subscript):
            self.setitem(target, value, node)
        elif isinstance(target, gast.Attribute) and self.stored_by_descriptor(target, value,
                                                                             node):
            return  # (`layer.weights = W` of a property: its setter, called)
        elif isinstance(target, gast.Attribute) and isinstance(target.value, gast.Name):
            # `self.out = self_out` (attrstate.py); `layer.n_in = 4` on an object srcad runs
            # as written (the store, where Python makes it: a differentiated value stored
            # there makes the object depend on it -- analysis/refusals.py)
            if target.attr == "shape" and self.reshaped_in_place(target.value.id):
                # `y.shape = (2, 8)` of an array the function made, held by this name only:
                # numpy reshapes that object, which is `y = np.reshape(y, (2, 8))` here
                call = gast.copy_location(gast.Call(
                    func=gast.Attribute(value=gast.Name(target.value.id, gast.Load(), None,
                                                        None), attr="reshape",
                                        ctx=gast.Load()), args=[value], keywords=[]), node)
                self.bind(target.value.id, call, node)
                return
            held = named_object(self.pf, target.value.id)
            atom = self.expr(target.value, "obj", None)
            if isinstance(atom, ir.Const):
                held = atom.value  # (an unrolled loop's object, a constant name)
            if held is None:
                # `p.data = v` of `p = layer.W`, `for p in model.parameters()`: what `p`
                # holds is known where the store runs -- a user object's plain attribute is
                # stored as written; an array's `.data`/`.shape`/..., and an attribute its
                # class makes a property or another descriptor, refused there
                # (runtime_python.attribute_stored)
                check = runtime_python.attribute_stored
                self.emit(self.opaque_parts(
                    self.callee_atom(check, "attribute_stored", node), "attribute_stored",
                    [atom, ir.Const(target.attr, repr(target.attr)),
                     ir.Const(target.value.id, repr(target.value.id))],
                    {}, (), node, check), self.fresh("checked"), node)
            elif target.attr in ("shape", "dtype", "strides", "data") and \
                    not is_user_object(held):
                raise self.unsupported(
                    f"`{target.value.id}.{target.attr} = ...` changes an array in place (numpy "
                    f"reshapes or reinterprets it)", node,
                    f"make a new array: `{target.value.id} = {target.value.id}.reshape(...)`")
            if target.value.id in self.namespace_names():
                raise self.unsupported(
                    f"`{target.value.id}.{target.attr} = ...` stores into a "
                    f"types.SimpleNamespace the function makes, which srcad reads as a "
                    f"namedtuple of the keywords it is made with", node,
                    "give it every field when it is made (`SimpleNamespace(W=W, scale=3.0)`), "
                    "or use a dict")
            args = {"_obj": self.expr(target.value, "obj", None),
                    "attr": ir.Const(target.attr, repr(target.attr)),
                    "value": self.held_value(self.expr(value, target.attr, None),
                                             target.attr, node)}
            if self.makes_list(args["value"]):  # (the object holds its own copy: a later
                args["list"] = ir.Const(True, "True")  # in-place append there, by Python
                # code or a kept change (attrstate.py), leaves the values srcad keeps alone)
            self.body.append(ir.Effect("setattr", None, args, node.lineno))
            self.note_state(args["_obj"], target.attr, args["value"], node)
        elif isinstance(target, gast.Attribute) and \
                self.known_object(target.value) is not None:
            # `net.layers[0].W = W`: an attribute of an object known here (state.py: later
            # reads here, and the methods called after, read this value)
            args = {"_obj": self.expr(target.value, "obj", None),
                    "attr": ir.Const(target.attr, repr(target.attr)),
                    "value": self.held_value(self.expr(value, target.attr, None),
                                             target.attr, node)}
            self.body.append(ir.Effect("setattr", None, args, node.lineno))
            self.note_state(args["_obj"], target.attr, args["value"], node)
        elif isinstance(target, gast.Attribute):
            raise self.unsupported(
                "assignment to an attribute of an expression (`a.b.c = v`, `f().x = v`)", node,
                "keep the object in a name first (`layer = self.layer`), then assign "
                "`layer.c = v`")
        else:
            raise self.unsupported(f"assignment to {type(target).__name__}", node)

    def stored_by_descriptor(self, target: gast.Attribute, value, node) -> bool:
        """``layer.weights = W`` where the object is known here and its class makes
        `weights` a data descriptor: a property's setter, a user function, is called as Python
        calls it -- ``setter(layer, W)`` -- so that what it stores (``self._W = v``) is
        followed into the methods that read it; any other (a property without a setter, a
        user's descriptor class) is refused. Stored as a plain attribute, the value never
        reached those reads: the gradient was zeros, silently. False: not such a store (a
        plain attribute, ``__slots__``' own, an object not known here)."""
        obj = self.known_object(target.value)
        if obj is None or isinstance(obj, type):
            return False
        owner, raw = class_attribute(type(obj), target.attr)
        if not runtime_python.stores_elsewhere(raw):
            return False
        guards.note_attr(owner, target.attr, raw)
        what = f"`{type(obj).__name__}.{target.attr}`"
        if isinstance(raw, property) and isinstance(raw.fset, types.FunctionType) and \
                is_user_object(raw.fset):
            name = self.fresh(f"{target.attr}_setter")
            self.taken.add(name)
            self.pf.bound[name] = raw.fset
            call = gast.Call(func=gast.Name(name, gast.Load(), None, None),
                             args=[target.value, value], keywords=[])
            self.statement(gast.copy_location(gast.Expr(value=gast.copy_location(call, node)),
                                              node))
            return True
        if isinstance(raw, property):
            how = "without a setter" if raw.fset is None else "whose setter srcad cannot read"
            raise self.unsupported(
                f"{what} is a property {how}: Python's store there raises or runs code srcad "
                f"does not follow", node, "store into the attribute the property reads")
        raise self.unsupported(
            f"{what} is a descriptor ({type(raw).__name__}) whose `__set__` srcad does not "
            f"follow: what it stores would not reach the reads of it", node,
            "store into a plain attribute, or use a @property with a setter")

    def bind_items(self, names: list, atoms: list, node) -> None:
        """`a, b = ...` of as many values: all right-hand sides first (`x, y = y, x` swaps),
        then the names."""
        if any(n in self.mutable for n in names):
            snap = []
            for n, a in zip(names, atoms):
                if n in self.mutable and isinstance(a, ir.Var) and a.name in names:
                    op, args = self.op_call(control.identity, [a], {}, node)
                    a = self.emit((op, args), self.fresh(f"{a.name}_old"), node)
                snap.append(a)
            atoms = snap
        for n, a in zip(names, atoms):
            if n in self.mutable and getattr(self, "unrolling", False) and \
                    isinstance(a, ir.Const) and rowed_or_user(a.value):
                # `for W, act in [(W1, np.tanh), (W2, relu)]`, unrolled (loops.py): in each
                # copy of the body, calls through `act` are that function's
                self.env[n] = a
            elif n in self.mutable:
                self.forget_views(n)
                if a != ir.Var(n):
                    op, args = self.op_call(control.identity, [a], {}, node)
                    self.body.append(ir.Call(n, op, args, node.lineno))
                    self.note_copy_holds(n, a)
                    if isinstance(a, ir.Var) and self.note_alias(n, a) is not None and \
                            not self.generated:
                        self.alias_stmts.add(id(self.body[-1]))  # (one array, two names)
                self.env[n] = ir.Var(n)
            else:
                self.env[n] = a

    def unpack_atom(self, target, atom, node):
        """`(a, b), c = x`: level by level, each level's length checked as Python does
        (runtime.unpacked: an iterable that cannot be read by index, `P.items()`, as its
        items)."""
        pairs = _seq_binding(target, atom)
        if pairs is not None:  # `(a, b), c = (W, W * 2), X`: names bound to the items
            self.bind_items([n for n, _ in pairs], [a for _, a in pairs], node)
            return
        if isinstance(atom, ir.Const):
            try:
                runtime.unpacked(atom.value, len(target.elts))
            except (TypeError, ValueError) as e:
                raise self.pf.error(f"{type(e).__name__}: {e}", node) from None
        else:
            n = len(target.elts)
            check = self.op_call(runtime.unpacked, [atom, ir.Const(n, repr(n))], {}, node)
            atom = self.emit(check, self.fresh("unpacked"), node)
        for i, t in enumerate(target.elts):
            call = self.op_call(operator.getitem, [atom, ir.Index((ir.Const(i, repr(i)),),
                                                                  False)], {}, node)
            if isinstance(t, gast.Name):
                self.env[t.id] = self.emit(call, self.def_name(t.id, node.lineno), node)
            elif isinstance(t, (gast.Tuple, gast.List)):
                self.unpack_atom(t, self.emit(call, self.fresh("unpacked"), node), node)
            else:
                raise self.unsupported("starred unpacking", node, "unpack into plain names")

    def dicts_written_in_control_flow(self) -> set:
        """Names passed, in a loop or a branch, to a function that writes into that
        parameter (`store[k] = v`): the call is spliced in and the name given the written dict
        (inline.py), so it keeps one name for all its values."""
        out = set()
        for node in gast.walk(self.pf.tree):
            if not isinstance(node, (gast.If, gast.For, gast.While)):
                continue
            for n in (x for inner in node.body + node.orelse for x in gast.walk(inner)):
                if not (isinstance(n, gast.Call) and isinstance(n.func, gast.Name)):
                    continue
                names = [a.id if isinstance(a, gast.Name) else None for a in n.args]
                named = [k.value.id for k in n.keywords if isinstance(k.value, gast.Name)]
                if not any(names + named) or n.func.id in names + named:
                    continue
                try:
                    fn = self.pf.resolve(n.func.id)
                except Exception:  # noqa: BLE001  (not a global: nothing to learn here)
                    continue
                written = written_params(fn)
                params = [] if not written else list(LIFTED[fn].params) if fn in LIFTED \
                    else list(inspect.signature(fn).parameters)
                out.update(a for a, p in zip(names, params) if a and p in written)
                out.update(k.value.id for k in n.keywords
                           if k.arg in written and isinstance(k.value, gast.Name))
        return out

    def unpack_spliced(self, names: list, atom, node) -> None:
        """`a, b = helper(x)` where the call was spliced into this function: its returned
        tuple's items, or the items of the atom it returned."""
        if isinstance(atom, ir.Seq) and len(atom.items) == len(names):
            self.bind_items(names, list(atom.items), node)
            return
        for i, n in enumerate(names):
            call = self.op_call(operator.getitem, [atom, ir.Index((ir.Const(i, repr(i)),),
                                                                  False)], {}, node)
            self.env[n] = self.emit(call, self.def_name(n, node.lineno), node)

    def bind(self, name: str, value, node):
        fn = self.function_alias(value)
        if fn is not None and name not in self.mutable and self.defs[name] == 1:
            self.env[name] = fn  # `tanh = np.tanh`: calls through `tanh` are np.tanh's
            return
        atom = self.expr(value, name, into=(name, node.lineno))
        if getattr(self, "unrolling", False) and isinstance(atom, ir.Const) and (callable(
                atom.value) or is_user_object(atom.value)) and not isinstance(atom.value, type):
            # (`fn = HEADS[name]` in a loop unrolled over a module dict's keys: that
            # function, so that calls through `fn` are its own -- each trip binds its own;
            # `layer = mapping[key]` of `for layer in net.named.values()`: that layer)
            self.env[name] = atom
            return
        self.record_view(name, value, atom)
        if name in self.mutable:
            if atom != ir.Var(name):
                op, args = self.op_call(control.identity, [atom], {}, node)
                self.body.append(ir.Call(name, op, args, node.lineno))
                self.note_copy_holds(name, atom)
                if self.body is self.top_body and isinstance(atom, ir.Const) and \
                        type(atom.value) in (bool, int, str, type(None)):
                    # (`skip = True` of a `continue` a test known here took: literal_value)
                    self.literal_binds[name] = self.body[-1]
                if isinstance(value, gast.Name) and value.id in self.locals and \
                        not self.generated:
                    self.alias_stmts.add(id(self.body[-1]))  # `z = y`: one array, two names
            self.env[name] = ir.Var(name)
        elif isinstance(atom, ir.Var) and atom.name in self.mutable and atom.name != name:
            # `a = v` with v a loop name: a keeps this value when v is given another
            op, args = self.op_call(control.identity, [atom], {}, node)
            self.env[name] = self.emit((op, args), self.def_name(name, node.lineno), node)
            if not self.generated:  # (srcad's own code += only into buffers it owns)
                self.alias_stmts.add(id(self.body[-1]))
                held = self.held_object(atom.name)
                if held is not None:  # (the object the loop name holds: refresh_item_holders)
                    self.one_array(self.env[name], held)
        else:
            self.env[name] = atom
        if name in self.state_names:  # (a local an attribute lives in: state.py)
            obj, attr = self.state_names[name]
            self.carry_into_local(obj, attr, self.env[name], node, via=name)

    def function_alias(self, value) -> ir.Const | None:
        """`np.tanh`, `helper`, `act.fn` on the right of `f = ...`: the function (a row, or a
        user function) as a constant, or None for any other value."""
        if not isinstance(value, (gast.Name, gast.Attribute)) or self.local_base_is_local(value):
            return None
        try:
            obj, spelled = self.dotted(value)
        except Exception:  # noqa: BLE001  (not a global: the plain path reports it)
            return None
        if not callable(obj) or isinstance(obj, type):
            return None
        if table.lookup(obj) is None and not (isinstance(obj, (types.FunctionType,
                                                               types.MethodType))):
            return None
        if table.lookup(obj) is None:  # (a user function: passed on as a value, generated
            spelled = self.claim(spelled if spelled.isidentifier() else  # code reads it)
                                 self.fresh(spelled.replace(".", "_")), obj)
            return ir.Const(obj, spelled)
        # (a function with a rule, spelled as the user did where generated code can read
        # that: `act = scipy.special.expit` given on to a helper reads `scipy`, injected)
        return self.callee_atom(obj, spelled, value)

    # -- calls to other user functions -------------------------------------------------------
    def user_call(self, fn, spelled, args, kwargs, node) -> ir.UserCall:
        """A call to another user function: normalise it too (a subroutine of its own)."""
        kwargs_given = dict(kwargs)
        # (one function on other objects is no recursion: `Module.__call__` of a model
        # calling its layers' `__call__`; the same function on the same objects is)
        key = (fn, tuple(id(a.value) for a in args if isinstance(a, ir.Const)
                         and is_user_object(a.value)))
        if key in _IN_PROGRESS and fn not in RECURSIVE:
            raise Recursion(key)  # (the call normalising fn starts again: recursion.py)
        kwargs = dict(kwargs)  # (a call started again must see the caller's own)
        pf = parse_function(fn)
        if fn not in RECURSIVE and calls_itself(fn, pf.tree):
            RECURSIVE.add(fn)  # (specialised per level from the first: recursion.py)
        if self.unpacking is not None and self.unpacking[0] is node:
            pf.unpacked = self.unpacking[1]
        if pf.vararg is not None or pf.tree.args.vararg is not None or \
                pf.tree.args.kwarg is not None:  # `def __call__(self, *args, **kwargs)`
            args, kwargs = star_params_for_call(pf, list(args), dict(kwargs))
        # a user object the call always passes (a global, `self` or an attribute of it: each
        # guarded) is known in the callee too, so its methods resolve there as well
        pf.known = {p: a.value for p, a in zip(pf.params, args)
                    if isinstance(a, ir.Const) and (is_user_object(a.value) or
                                                    rowed_callable(a.value))}
        pf.known.update({p: a.value for p, a in kwargs.items()  # (`apply(x, f=np.tanh)`)
                         if isinstance(a, ir.Const) and (rowed_callable(a.value) or (
                             isinstance(a.value, types.FunctionType) and
                             is_user_object(a.value)))})
        # (and a string it passes: a name the callee picks a function by, chosen.py)
        pf.known.update({p: a.value for p, a in [*zip(pf.params, args), *kwargs.items()]
                         if isinstance(a, ir.Const) and type(a.value) is str
                         and len(a.value) <= 64})
        # a parameter the call leaves to its default, a function (cs224n's
        # `skipgram(.., word2vecLossAndGradient=naiveSoftmaxLossAndGradient)`): known there
        # as if passed (the default is fixed when the def runs)
        pf.known.update({p: d for p, d in _function_defaults(fn).items()
                         if p in pf.params and p not in kwargs and
                         pf.params.index(p) >= len(args)})
        # a namedtuple argument passed on as it is: `p.W1` is its field there too
        pf.namedtuples = {p: self.pf.namedtuples[a.name] for p, a in zip(pf.params, args)
                          if isinstance(a, ir.Var) and a.name in self.pf.namedtuples
                          and not self.defs[a.name]}
        # (and an EasyDict argument: `p.W` is its item there too)
        pf.attrdicts = {p: self.pf.attrdicts[a.name] for p, a in zip(pf.params, args)
                        if isinstance(a, ir.Var) and a.name in self.pf.attrdicts
                        and not self.defs[a.name]}
        # a dict argument (or one holding dicts) passed on as it is: `for k in d` walks its
        # keys there too (pylower.py; `opt.step(params, grads)` of an optimizer object)
        # (by the names holding it: after a callee stored into the dict, the caller's name
        # holds the dict written back, `params_L12`, a dict still)
        passed = [(p, a) for p, a in zip(pf.params, args)] + list(kwargs.items())
        holders = {}
        for n, v in self.env.items():
            if isinstance(v, ir.Var):
                holders.setdefault(v.name, {v.name}).add(n)
        pf.dict_paths = frozenset((p,) + f[1:] for p, a in passed if isinstance(a, ir.Var)
                                  for f in self.pf.dict_known
                                  if f[0] in holders.get(a.name, {a.name})) | frozenset(
            (p,) + f[1:] for p, a in passed if isinstance(a, ir.Var)
            and a.name in self.pf.params and not self.seen_defs[a.name]
            for f in self.pf.dict_paths if f[0] == a.name) | frozenset(  # (a parameter not
            (p,) for p, a in passed if isinstance(a, ir.Var)  # yet rebound; a name rebound to
            and self.holds_made_dict(a.name))  # dicts only: `params = opt.step(params, ..)`)
        # a list / int argument passed on as it is: its count is known there too (objects.py:
        # a loop building layers), and the callee may wait for it as its caller does
        caller = self.pf.statics or {}
        changed = mutated_names(self.pf.tree.body)
        pf.statics = {p: caller[a.name] for p, a in zip(pf.params, args)
                      if isinstance(a, ir.Var) and a.name in caller and not self.defs[a.name]
                      and a.name not in changed}
        pf.statics.update({p: ("int", a.value) for p, a in [*zip(pf.params, args),
                                                             *kwargs.items()]
                           if isinstance(a, ir.Const) and type(a.value) in (int, bool)})
        pf.statics.update({p: ("len", len(a.items)) for p, a in zip(pf.params, args)
                           if isinstance(a, ir.Seq) and p not in changed_there(pf)})
        # a list the call passes (a display, or a name certainly bound to one): `ps.copy()`
        # there is the list's shallow copy, and a store into it replaces an item, as in Python
        pf.containers = frozenset(p for p, a in passed if self.surely_container(a))
        # (and a parameter of the caller's whose kind its call has not told, passed on as it
        # is: not told there either)
        pf.unknown_kinds = frozenset(p for p, a in passed if isinstance(a, ir.Var)
                                     and a.name in self.pf.unknown_kinds
                                     and not self.defs[a.name])
        # (one the caller changes in place -- `log.pop()` after the call -- is still not
        # told: a list stays a list; `log.sort()` there was numpy's sort of an array,
        # failing on the list, before the session of 2026-12-07, thirteenth)
        pf.name_lists = {p: [x.value for x in a.items] for p, a in zip(pf.params, args)
                         if isinstance(a, ir.Seq) and a.items and all(
                             isinstance(x, ir.Const) and type(x.value) is str for x in a.items)
                         and p not in changed_there(pf)}
        _known_defaults(fn, pf, len(args), kwargs)  # (`def act(z, kind="tanh")`: chosen.py)
        # a parameter the call passes None, or leaves to a None default (`def dense(x, W,
        # act=None)`): known there, so `if act is not None:` keeps Python's branch
        # (knowntests.py) and `act(y)` under it is not code srcad would refuse
        pf.known.update({p: None for p in _literal_nones(node, pf.params)
                         if p in pf.params})
        pf.known.update({p: None for p in _none_defaults(fn)
                         if p in pf.params and p not in kwargs and
                         pf.params.index(p) >= len(args)})
        # a dict argument passed on as it is: its keys are known there too (objects.py builds
        # objects per key)
        pf.dict_keys = {p: self.pf.dict_keys[a.name] for p, a in passed
                        if isinstance(a, ir.Var) and a.name in self.pf.dict_keys
                        and not self.defs[a.name] and a.name not in changed}
        # (and a dict display this function made, by its constant str keys, bound once and
        # not changed: `model.load({"W": W, "b": b})` walking `for k, v in d.items():
        # setattr(layer, k, v)` -- once per key there, so each store names its attribute)
        pf.dict_keys.update({p: keys for p, a in passed if isinstance(a, ir.Var) and
                             p not in pf.dict_keys and a.name not in changed and
                             (keys := self.display_keys(a)) is not None})
        if fn in RECURSIVE:  # one subroutine per level, on the ints and lengths it knows
            pf.statics.update(static_arguments(fn, pf, list(args), kwargs, caller,
                                               self.definitions))
            self.check_recursion(key, pf, spelled, node)
        pf.deferrable = self.pf.deferrable
        if inspect.isgeneratorfunction(fn):
            # (normalised as a function returning the list of its values, pyforms.generator:
            # where no gradient flows through the call, it runs as that too -- the state
            # wrapper below, if any, around that)
            fn = consumed_whole(fn)
        logged = len(self.carry_log)
        given = self.state_now()
        if given:  # what this function stored on objects, read there (state.py)
            taken = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)} | \
                set(pf.params)
            pf.attr_in = [(obj, attr, fresh(f"{attr}_given", taken), atom)
                          for obj, attr, atom in given]
            for _, _, pname, atom in pf.attr_in:
                kwargs[pname] = atom
            fn = state_given(fn, [(obj, attr) for obj, attr, _, _ in pf.attr_in])
        closing = self.closure_arguments(pf, args, kwargs)  # (closure_values.py)
        _IN_PROGRESS.setdefault(key, []).append(signature(pf.statics))
        names = dict(_PROGRAM[-1]) if _PROGRAM else None
        again = False
        try:
            callee = normalize(pf)
        except SrcadError as e:  # (inside srcad's stand-in for a library function: the call)
            if in_substitute(pf.filename):
                at_call_site(e, self.pf.filename, node.lineno, self.pf.name,
                             label_of(fn.__qualname__) or spelled)
            raise
        except Recursion as r:  # fn calls itself: this call again, specialised per level
            if r.key != key or key[0] in RECURSIVE:
                raise
            again = True
        finally:
            _IN_PROGRESS[key].pop()
            if not _IN_PROGRESS[key]:
                del _IN_PROGRESS[key]
        if not again:
            self.inlined.append(callee)  # (checked as written: ir.Function.inlined)
        if again:  # (the function itself: `fn` may be wrapped by now -- state_given)
            RECURSIVE.add(key[0])
            if names is not None:  # (the names the first try claimed: free again)
                _PROGRAM[-1].clear()
                _PROGRAM[-1].update(names)
            return self.user_call(key[0], spelled, args, kwargs_given, node)
        if pf.attr_in:  # (only the values it reads: the others are no parameters of it)
            used = {n for st in ir.walk(callee.body) for n in ir.uses(st)} | {
                n for _, _, a in callee.state_out for n in ir.atom_vars(a)}
            unused = {pname for _, _, pname, _ in pf.attr_in if pname not in used}
            callee.params = [p for p in callee.params if p not in unused]
            for pname in unused:
                kwargs.pop(pname)
            pf.attr_in = [g for g in pf.attr_in if g[2] not in unused]
            fn = state_given(fn.__wrapped__, [(obj, attr) for obj, attr, _, _ in pf.attr_in]) \
                if pf.attr_in else fn.__wrapped__
        # (what it was given and does not read is no read of this function's: a loop calling
        # `self.activation(z)` and storing `self.states` again is not refused for it --
        # `carried_around`)
        read = {(id(obj), attr) for obj, attr, _, _ in pf.attr_in}
        self.carry_log[logged:] = [(k, a) for k, a in self.carry_log[logged:] if k in read]
        carried, blocked = carried_state(callee)
        blocked = blocked | callee.attr_unknown
        for k in blocked:  # (set in a branch or a loop there: this function's value is old)
            self.attr_carry.pop(k, None)
        self.attr_unknown |= blocked
        self.attr_unknown -= {(id(o), attr) for o, attr, _ in carried}
        if carried:  # the attributes the callee leaves on objects, returned with its value
            callee.body[-1] = ir.Return(ir.Seq((callee.ret.value, *[a for _, _, a in carried]),
                                               "tuple"), callee.ret.line)
            fn = with_state(fn, [(o, attr) for o, attr, _ in carried])
        params = callee.params
        if len(args) > len(params):
            raise self.pf.error(f"`{spelled}` takes {len(params)} arguments, got {len(args)}",
                                node)
        bound = dict(zip(params, args))
        for k, v in kwargs.items():
            if k not in params or k in bound:
                raise self.pf.error(f"`{spelled}` got an unexpected or repeated argument `{k}`",
                                    node)
            bound[k] = v
        sig = inspect.signature(fn)
        for p in params:
            if p not in bound:
                default = sig.parameters[p].default
                if default is inspect.Parameter.empty:
                    raise self.pf.error(f"`{spelled}` is missing its argument `{p}`", node)
                bound[p] = self.constant(default, _default_spelling(default), node)
        name = self.claim(spelled if spelled.isidentifier() else
                          self.fresh(spelled.replace(".", "_")), fn)
        call = ir.UserCall([], callee, fn, name, [bound[p] for p in params], node.lineno,
                           multi=isinstance(callee.ret.value, ir.Seq))
        call.returns_dict = _returns_dict(callee, pf)
        call.closures_in = closing  # (spliced in: emit_user_call)
        call.closure_free = list(pf.closure_free)
        call.carried = [(o, attr) for o, attr, _ in carried]
        # (a list or dict of an object given to it as the value this function carries, and
        # changed there in place: `log = s.log; log.pop(0)` -- read again after the call)
        out = {(id(o), a) for o, a, _ in carried}
        call.changed_given = [(obj, attr, atom) for obj, attr, pname, atom in pf.attr_in
                              if (id(obj), attr) not in out and
                              type(getattr(obj, attr, None)) in (list, dict) and
                              changes_param(callee, pname)]
        return call

    def display_keys(self, atom: ir.Var):
        """The keys of the dict display `atom` names -- assigned once here from ``{"W": W,
        "b": b}`` (every key a str constant) -- in order, else None."""
        found = self.definitions(atom.name)
        if len(found) != 1 or not isinstance(found[0], ir.Call) or \
                getattr(found[0].op, "name", "") != "dict":
            return None
        args = found[0].args
        keys = [args[f"k{i}"] for i in range(len(args) // 2) if f"k{i}" in args]
        if len(keys) * 2 != len(args) or not all(
                isinstance(k, ir.Const) and type(k.value) is str for k in keys):
            return None
        return [k.value for k in keys]

    def holds_made_dict(self, name: str) -> bool:
        """Is every assignment of `name` so far a dict this function makes (a display, or
        `dict_set` / `dict_copy` of one) or the result of a callee that gives one back --
        ``params = {"w": w}; params = opt.step(params, grads)``, where the name is rebound so
        pylower.py does not count it a dict of its own?"""
        found = self.definitions(name)
        return bool(found) and all(
            getattr(st, "returns_dict", False) if isinstance(st, ir.UserCall) else
            isinstance(st, ir.Call) and getattr(st.op, "name", "") in ("dict", "dict_set",
                                                                         "dict_copy")
            for st in found)

    def literal_value(self, name: str):
        """The literal a name holds here, where the code is at the function's top level and
        the name's last assignment before it was `name = <literal>` there (desugar.py's
        `skip = True` of a `continue` in a loop written out per layer, under a test decided
        here: the rest of that trip is no code), else knowntests.UNKNOWN."""
        held = self.literal_binds.get(name) if self.body is self.top_body else None
        if held is None or self.made.get(name):
            return UNKNOWN
        after = False
        for x in ir.walk(self.top_body):
            if x is held:
                after = True
            elif after and name in ir.defs(x):
                return UNKNOWN
        return Known(held.args[next(iter(held.args))].value) if after else UNKNOWN

    def definitions(self, name: str) -> list:
        """The statements of this function so far that assign `name`."""
        made = self.made.get(name, [])
        seen = {id(x) for x in made}
        found = [x for x in ir.walk(self.top_body) if name in ir.defs(x)] + \
            ([x for x in ir.walk(self.body) if name in ir.defs(x)]
             if self.body is not self.top_body else [])
        return made + [x for x in found if id(x) not in seen]

    def check_recursion(self, key, pf, spelled: str, node) -> None:
        """A call of a recursive function: refused where its static arguments are those of a
        call of it in progress (the depth is not known while srcad builds the code) or where
        it goes deeper than recursion.MAX_DEPTH."""
        stack = _IN_PROGRESS.get(key, [])
        if signature(pf.statics) in stack and self.pf.deferrable:
            raise self.pf.error(  # (the transformed function's ints and lengths may tell)
                f"`{spelled}` calls itself: srcad follows it one level per call, on its int "
                f"arguments and list lengths", node, cls=CountUnknownError,
                hint="call it once: the first call's arguments tell")
        if signature(pf.statics) in stack:
            raise self.pf.error(
                f"`{spelled}` calls itself, and how deep it goes is not known while srcad "
                f"builds the code: srcad follows recursion one level per call, and this call's "
                f"int arguments and list lengths are those of a call of it in progress",
                node, cls=UnsupportedSyntaxError,
                hint="end the recursion on an int argument or a list's length (`f(x, n - 1)` "
                "with `if n == 0: return x`; `f(x, layers[1:])` with `if not layers: "
                "return x`), not on a computed value; or write the recursion as a loop")
        if len(stack) >= MAX_DEPTH:
            raise self.pf.error(
                f"`{spelled}` calls itself more than {MAX_DEPTH} levels deep: srcad follows "
                f"recursion one level per call (a subroutine each)", node,
                cls=UnsupportedSyntaxError, hint="write the recursion as a loop")

    def is_user_function(self, func) -> bool:
        if isinstance(func, gast.Name) and func.id in self.locals:
            return False
        if isinstance(func, gast.Attribute) and self.local_base_is_local(func.value):
            return False
        try:
            obj, _ = self.dotted(func)
        except Exception:
            return False
        return isinstance(obj, types.FunctionType) and table.lookup(obj) is None and \
            library_file(obj) is None and obj not in LIFTED  # (lifted ones are inlined)

    def local_base_is_local(self, e) -> bool:
        root = e
        while isinstance(root, gast.Attribute):
            root = root.value
        return not (isinstance(root, gast.Name) and root.id not in self.locals)


def rowed_or_user(obj) -> bool:
    """A function calls through a name may be resolved to: a user's, or one with a row."""
    return isinstance(obj, types.FunctionType) and is_user_object(obj) or rowed_callable(obj)


def _known_defaults(fn, pf, given: int, kwargs: dict) -> None:
    """A callee's parameters the call leaves to their defaults: a string default is known
    there (as a string argument is), an int or bool one is a static int (chosen.py folds a
    test of them that binds a function), a tuple of strings one the names a loop walks."""
    try:
        sig = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return
    changed = None
    for p in pf.params[given:]:
        if p in kwargs or p not in sig or p in pf.known:
            continue
        d = sig[p].default
        names = type(d) is tuple and 0 < len(d) <= 64 and all(type(x) is str for x in d)
        if not names and (type(d) not in (str, int, bool) or (type(d) is str and len(d) > 64)):
            continue
        changed = changed_there(pf) if changed is None else changed
        if p in changed:
            continue
        if names:  # (`spec=("tanh", "square")`: a loop over them picks callees)
            pf.name_lists[p] = list(d)
        elif type(d) is str:
            pf.known[p] = d
        elif pf.statics is not None and p not in pf.statics:
            pf.statics[p] = ("int", d)


def changed_there(pf) -> set:
    """The names a function's own code may change (a list parameter appended to has no
    length fixed by its caller's display)."""
    return mutated_names(pf.tree.body) | {n.id for n in gast.walk(pf.tree)
                                          if isinstance(n, gast.Name)
                                          and isinstance(n.ctx, (gast.Store, gast.Del))}


def _returns_dict(fn: ir.Function, pf) -> bool:
    """Does `fn` (normalised) give back a dict it makes or writes (`out = {}; out[k] = v;
    return out`) or a dict argument: its caller's name for the result holds a dict
    (`for k in params` in the next callee walks its keys)."""
    ret = fn.ret.value if fn.ret is not None else None
    defs = {s.target: s for s in fn.body if isinstance(s, ir.Call)}
    seen = set()
    while isinstance(ret, ir.Var) and ret.name not in seen:
        seen.add(ret.name)
        if (ret.name,) in pf.dict_paths:
            return True
        s = defs.get(ret.name)
        if s is None:
            return False
        if s.op.name == "dict":
            return True
        if s.op.name not in ("setitem", "dict_set", "identity", "copy"):
            return False
        ret = next(iter(s.args.values()), None)
    return False


def _seq_binding(target, atom):
    """(name, item) for each name of a nested target unpacking a tuple or list written out to
    the same shape, in order -- or None when some level is not such a tuple."""
    if not (isinstance(atom, ir.Seq) and len(atom.items) == len(target.elts)):
        return None
    pairs = []
    for t, item in zip(target.elts, atom.items):
        if isinstance(t, gast.Name):
            pairs.append((t.id, item))
        elif isinstance(t, (gast.Tuple, gast.List)):
            inner = _seq_binding(t, item)
            if inner is None:
                return None
            pairs += inner
        else:
            return None
    return pairs


def _hint(names) -> str:
    """Temporaries' names for `a, b = ...`: the names joined, `_` left out."""
    return "_".join(n for n in names if n.strip("_")) or "unpacked"


# (user function, objects) being normalised -> the static arguments of each such call in
# progress (to catch recursion, and to follow it where they change: recursion.py)
_IN_PROGRESS: dict = {}
_PROGRAM: list = []  # the names injected so far by the functions of the program in progress
_CYCLE = "cycle"  # (Normalizer._container_root: a walk back at a name it passed)


def _drop_unowned_syncs(body: list) -> list:
    """`body` without the `sync` effects of parameters the function does not copy (their
    methods ran on the caller's own objects), in every block."""
    out = []
    for s in body:
        if isinstance(s, ir.Effect) and s.kind == "sync" and "caller" not in s.args:
            continue
        for field in ("body", "orelse", "cond_body"):
            inner = getattr(s, field, None)
            if isinstance(inner, list):
                setattr(s, field, _drop_unowned_syncs(inner))
        out.append(s)
    return out


def normalize(pf: ParsedFunction) -> ir.Function:
    """Fence and normalise a parsed function into the IR (see the module docstring)."""
    if _PROGRAM:  # (a callee: one generated module with its caller, one set of names)
        return _normalize(pf)
    _PROGRAM.append({})
    objects = [*pf.constants.values(), *(pf.known[p] for p in pf.params if p in pf.known)]
    key = (pf.fn, tuple(id(v) for v in objects if is_user_object(v)))
    _IN_PROGRESS.setdefault(key, []).append(signature(pf.statics))
    try:
        return _normalize(pf, root=True)
    except Recursion as r:  # the function calls itself (recursion.py): specialised per level
        if r.key != key or pf.fn in RECURSIVE:
            raise
        RECURSIVE.add(pf.fn)
        if pf.statics is None and pf.deferrable:
            raise pf.error(f"`{pf.name}` calls itself: srcad follows it one level per call, "
                           f"on its int arguments and list lengths", cls=CountUnknownError,
                           hint="call it once: the first call's arguments tell") from None
        raise  # (transformed._ir_of normalises it again, now known recursive)
    finally:
        _PROGRAM.pop()
        _IN_PROGRESS[key].pop()
        if not _IN_PROGRESS[key]:
            del _IN_PROGRESS[key]


# ndarray methods that write into `out=` and have a row (`p.clip(lo, hi, out=p)`)
_OUT_METHODS = frozenset({"clip", "cumsum", "cumprod", "dot", "max", "mean", "min", "prod",
                          "round", "std", "sum", "take", "trace", "var"})


def _out_keyword_as_write(pf: ParsedFunction) -> None:
    """``np.exp(s, out=s)``, ``np.maximum(z, 0, out=a)``, ``np.clip(a, lo, hi, out=a)`` as a
    statement (or assigned: ``y = np.exp(s, out=s)``) is numpy's write of the result into
    `out`: rewritten as ``s[...] = np.exp(s)`` (then ``y = s``), which copy on write and
    the views' aliasing follow like any other write. Only for numpy ufuncs, np.clip and the
    numpy functions of opaque.py's `OUT_FUNCTIONS` (``np.cumsum(a, out=c)``, ``np.dot(a, b,
    out=o)``). An `out` that is not a name, an attribute or a subscript of them (``out=np.zeros_like(p)``)
    is evaluated first into a name of its own. With ``where=m`` (numpy's safe forms,
    ``np.log(p, out=np.zeros_like(p), where=p > 0)``, ``np.divide(a, b, out=o, where=b !=
    0)``) the write is ``o[...] = np.where(m, f(where_input(a, m), ...), o)``: the ufunc's
    value where the mask holds, `out`'s elsewhere; `where_input` (ops/control.py) masks each
    input's gradient, which the ufunc's own rule may make NaN where the mask is False."""

    def simple(e):
        return isinstance(e, gast.Name) or (
            isinstance(e, (gast.Attribute, gast.Subscript)) and simple(e.value))

    def numpy_object(f):
        parts = []
        while isinstance(f, gast.Attribute):
            parts.append(f.attr)
            f = f.value
        if not isinstance(f, gast.Name) or f.id in locals_:
            return None
        obj = pf.resolve(f.id)
        for a in reversed(parts):
            obj = getattr(obj, a, None)
        return obj

    def ufunc_like(f):
        """A ufunc or np.clip: `where=` is a mask of the elements written."""
        obj = numpy_object(f)
        return isinstance(obj, np.ufunc) or obj is np.clip

    def numpy_callable(f):
        # (or a numpy function writing its result into `out=`: np.sum's `where=` is a
        # reduction's mask, left as written -- `split`)
        return ufunc_like(f) or writes_out(numpy_object(f)) or array_method(f)

    def array_method(f):
        """`p.clip(lo, hi, out=p)`, `a.cumsum(axis=0, out=c)`: an ndarray method that writes
        into `out=`, on a local name or a module's array (not `self`: a method of yours)."""
        if not (isinstance(f, gast.Attribute) and f.attr in _OUT_METHODS
                and isinstance(f.value, gast.Name) and f.value.id != "self"):
            return False
        if f.value.id in locals_:
            return True
        try:
            return isinstance(pf.resolve(f.value.id), np.ndarray)
        except Exception:  # noqa: BLE001  (not a global either)
            return False

    def load(e):
        e = copy.deepcopy(e)
        for n in gast.walk(e):
            if hasattr(n, "ctx"):
                n.ctx = gast.Load()
        return e

    def hoist(e, base, before):
        """`e` evaluated once, first, into a fresh name (unless it is a name already)."""
        if isinstance(e, gast.Name):
            return e
        name = fresh(base, taken)
        before.append(gast.Assign(targets=[gast.Name(id=name, ctx=gast.Store(),
                                                     annotation=None, type_comment=None)],
                                  value=e, type_comment=None))
        return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)

    def split(call):
        out = [k for k in call.keywords if k.arg == "out"]
        where = [k for k in call.keywords if k.arg == "where"]
        if len(out) == 1 and isinstance(out[0].value, gast.Constant) and \
                out[0].value.value is None and numpy_callable(call.func):
            # (`out=None`: numpy's default, a new array -- the call without it)
            call.keywords = [k for k in call.keywords if k is not out[0]]
            return None
        if len(out) != 1 or not numpy_callable(call.func) or len(where) > 1 or \
                any(isinstance(a, gast.Starred) for a in call.args):
            return None
        if where and not ufunc_like(call.func):
            return None  # (`np.sum(x, out=o, where=m)`: a reduction's mask, as written)
        if array_method(call.func) and any(k.arg is None for k in call.keywords):
            return None  # (`p.clip(**kw, out=p)`: left as written)
        before = []
        if where and not isinstance(where[0].value, gast.Constant):
            # (numpy evaluates the arguments, then `out`, then `where`; none of them here
            # writes what another reads)
            call.args = [hoist(a, "operand", before) if not isinstance(a, gast.Constant)
                         else a for a in call.args]
        target = load(out[0].value) if simple(out[0].value) else \
            hoist(out[0].value, "out", before)
        call.keywords = [k for k in call.keywords if k.arg not in ("out", "where")]
        value = call
        if where and isinstance(where[0].value, gast.Constant) and where[0].value.value is True:
            where = []
        if where:
            mask = hoist(where[0].value, "mask", before)
            for key, obj in (("where_input", runtime.where_input), ("numpy", np)):
                if key not in helper:
                    helper[key] = fresh(key, taken)
                    pf.bound[helper[key]] = obj
            wrap, numpy_name = helper["where_input"], helper["numpy"]
            call.args = [a if isinstance(a, gast.Constant) else gast.Call(
                func=gast.Name(id=wrap, ctx=gast.Load(), annotation=None, type_comment=None),
                args=[a, load(mask)], keywords=[]) for a in call.args]
            value = gast.Call(func=gast.Attribute(value=gast.Name(
                id=numpy_name, ctx=gast.Load(), annotation=None, type_comment=None),
                attr="where", ctx=gast.Load()), args=[load(mask), call, load(target)],
                keywords=[])
        store = gast.Subscript(value=load(target), slice=gast.Constant(value=Ellipsis,
                                                                         kind=None),
                               ctx=gast.Store())
        return before + [gast.Assign(targets=[store], value=value, type_comment=None)], target

    def nested(st):
        """`return np.sum(np.log(p, out=np.zeros_like(p), where=p > 0))`: a ufunc call with
        a fresh `out` buffer inside an expression, assigned to a name first (nothing else
        can see the buffer, so evaluating it first changes nothing else)."""
        if not isinstance(st, (gast.Return, gast.Assign, gast.Expr, gast.AugAssign)) or \
                st.value is None:
            return []
        found = []

        def visit(e, top):
            if isinstance(e, (gast.Lambda, gast.IfExp, gast.BoolOp, gast.ListComp,
                              gast.SetComp, gast.DictComp, gast.GeneratorExp)):
                return
            if isinstance(e, gast.Call) and not top and numpy_callable(e.func) and any(
                    k.arg == "out" and not simple(k.value) for k in e.keywords):
                found.append(e)
                return
            for c in gast.iter_child_nodes(e):
                visit(c, False)

        visit(st.value, isinstance(st, (gast.Assign, gast.Expr)))
        before = []
        for call in found:
            name = fresh("out_value", taken)
            holder = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
            for parent in gast.walk(st.value):
                for field, val in gast.iter_fields(parent):
                    if val is call:
                        setattr(parent, field, holder)
                    elif isinstance(val, list):
                        val[:] = [holder if v is call else v for v in val]
            before.extend(block([gast.copy_location(gast.Assign(
                targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None,
                                   type_comment=None)], value=call, type_comment=None), st)]))
        return before

    def block(stmts):
        res = []
        for st in stmts:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(st, field, None), list) and \
                        not isinstance(st, gast.FunctionDef):
                    setattr(st, field, block(getattr(st, field)))
            res.extend(nested(st))
            made = None
            if isinstance(st, gast.Expr) and isinstance(st.value, gast.Call):
                made = split(st.value)
                if made is not None:
                    res.extend(gast.copy_location(m, st) for m in made[0])
                    continue
            elif isinstance(st, gast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.value, gast.Call):
                made = split(st.value)
                if made is not None:
                    res.extend(gast.copy_location(m, st) for m in made[0])
                    res.append(gast.copy_location(gast.Assign(
                        targets=st.targets, value=made[1], type_comment=None), st))
                    continue
            res.append(st)
        return res

    locals_ = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
               and isinstance(n.ctx, gast.Store)} | set(pf.params)
    taken = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)} | set(pf.params)
    helper: dict = {}
    if any(isinstance(n, gast.keyword) and n.arg == "out" for n in gast.walk(pf.tree)):
        pf.tree.body = block(pf.tree.body)
        gast.fix_missing_locations(pf.tree)


def _writes_through_views(pf: ParsedFunction) -> None:
    """Stores through an array's attribute view, as Gaussian-process and kernel code writes
    them: ``K.flat[::n + 1] += jitter`` (the diagonal in C order) becomes ``K[np.unravel_index(
    np.arange(K.size)[::n + 1], K.shape)] += jitter``, a store into `K` itself by index;
    ``D.T[:] -= x`` becomes ``D_T = D.T; D_T[:] -= x``, a store into a view of `D`, which
    the views' aliasing follows as any other. Only where the array is a plain name."""
    taken = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)} | set(pf.params)
    numpy_name = []

    def nm(id_, ctx=None):
        return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)

    def attr(value, a):
        return gast.Attribute(value=value, attr=a, ctx=gast.Load())

    def rewrite(st, target):
        """The statements replacing `st`, whose target is `target`; None to keep it."""
        if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Attribute)
                and isinstance(target.value.value, gast.Name)
                and target.value.attr in ("flat", "T")):
            return None
        base = target.value.value.id
        if target.value.attr == "T":
            view = fresh(f"{base}_T", taken)
            first = gast.copy_location(gast.Assign(
                targets=[nm(view, gast.Store())], value=attr(nm(base), "T"),
                type_comment=None), st)
            target.value = nm(view)
            return [first, st]
        if not numpy_name:
            numpy_name.append(fresh("numpy", taken))
            pf.bound[numpy_name[0]] = np
        flat = gast.Subscript(value=gast.Call(func=attr(nm(numpy_name[0]), "arange"),
                                              args=[attr(nm(base), "size")], keywords=[]),
                              slice=target.slice, ctx=gast.Load())
        index = gast.Call(func=attr(nm(numpy_name[0]), "unravel_index"),
                          args=[flat, attr(nm(base), "shape")], keywords=[])
        target.value = nm(base)
        target.slice = index
        return [st]

    def block(stmts):
        res = []
        for st in stmts:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(st, field, None), list) and \
                        not isinstance(st, (gast.FunctionDef, gast.ClassDef)):
                    setattr(st, field, block(getattr(st, field)))
            target = st.target if isinstance(st, gast.AugAssign) else \
                st.targets[0] if isinstance(st, gast.Assign) and len(st.targets) == 1 else None
            made = rewrite(st, target) if target is not None else None
            res.extend(made if made is not None else [st])
        return res

    if any(isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
           and isinstance(n.value, gast.Attribute) and n.value.attr in ("flat", "T")
           for n in gast.walk(pf.tree)):
        pf.tree.body = block(pf.tree.body)
        gast.fix_missing_locations(pf.tree)


def _getattr_waits_for_arguments(pf: ParsedFunction) -> None:
    """`getattr(A, name)` left by static_getattr with `name` a parameter: which attribute it
    is depends on the string the argument holds, so a transform made before any call waits
    for the first call's arguments (CalleeUnknownError), as `ACTIVATIONS[name]()` does."""
    stored = {x.id for x in gast.walk(pf.tree) if isinstance(x, gast.Name)
              and isinstance(x.ctx, gast.Store)}
    if "getattr" in stored or "getattr" in pf.fn.__globals__:
        return
    for n in gast.walk(pf.tree):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                n.func.id == "getattr" and len(n.args) == 2:
            key, base = n.args[1], n.args[0]
            if not (isinstance(base, gast.Name) and base.id not in pf.params and
                    base.id not in stored and
                    isinstance(pf.resolve(base.id), (types.ModuleType, type))):
                continue  # (getattr(cfg, key) of an object: runs as written, as before)
            names = {x.id for x in gast.walk(key) if isinstance(x, gast.Name)}
            waiting = sorted(p for p in names & set(pf.params) if p not in pf.known)
            if waiting:
                raise pf.error(
                    f"`getattr(..., {waiting[0]})` depends on the value of the argument "
                    f"`{waiting[0]}`", n, cls=CalleeUnknownError,
                    hint=f"srcad follows the attribute when `{waiting[0]}` is a string (each "
                    f"value its own specialisation); pass the function itself otherwise")


def _stored_on_known_objects(body: list, state: list) -> list:
    """[(obj, attr, atom)] for each attribute that the function's own top-level statements
    store on an object known when normalising -- a layer of the list `self` holds
    (`self.layers[0].W = W`; `for l, W in zip(self.layers, Ws): l.W = W`, a loop run once
    per layer) -- with the last value stored, which the function leaves there for its caller
    (state.py); not one it carries by a local already (`state`), nor one stored in a branch
    or a loop, or by a call of its own, whose value at the end srcad does not know (those the
    caller reads from the object, or is refused)."""
    def key(s):
        if isinstance(s, ir.Effect) and s.kind == "setattr" and \
                isinstance(s.args.get("_obj"), ir.Const) and \
                is_user_object(s.args["_obj"].value) and \
                isinstance(s.args.get("attr"), ir.Const) and \
                isinstance(s.args["attr"].value, str):
            return id(s.args["_obj"].value), s.args["attr"].value
        return None

    top = {id(s) for s in body}
    unknown = {(id(o), a) for o, a, _ in state}
    for s in ir.walk(body):
        k = key(s)
        if k is not None and id(s) not in top:
            unknown.add(k)
        if isinstance(s, ir.UserCall):
            unknown |= {(id(o), a) for o, a, _ in s.carried_atoms} | set(s.callee.attr_unknown)
            unknown |= {(id(o), a) for o, a, _ in s.callee.state_out}
    last: dict = {}
    for s in body:
        k = key(s)
        if k is not None and k not in unknown:
            last[k] = (s.args["_obj"].value, k[1], s.args["value"], s)
    order = list(ir.walk(body))
    return [(obj, attr, atom) for obj, attr, atom, s in last.values()
            if not _changed_after(order, s, atom)]


def _changed_after(order: list, store, atom) -> bool:
    """Might the array `store` put on an object change after it, in place -- `W2 *= 2`,
    `W2[0] = v`, through a view of it or what it is a view of, or by a call given it?
    (Python's object shows the change; the value carried out would not: such a store is
    left to the object, and a read of it is refused.)"""
    if not isinstance(atom, ir.Var):
        return False
    family = {atom.name}
    at = next(i for i, t in enumerate(order) if t is store)
    for t in reversed(order[:at]):  # (what it is a view of, made before it)
        if isinstance(t, ir.Call) and t.target in family and t.op.name in _VIEWS:
            family |= {a.name for a in list(t.args.values())[:1] if isinstance(a, ir.Var)}
    for t in order[at + 1:]:
        if not set(ir.uses(t)) & family:
            continue
        if isinstance(t, ir.Effect) and t.kind == "setattr":
            continue  # (stored on another object too: the same array, unchanged)
        if isinstance(t, ir.Call) and not (t.inplace or t.augmented or t.undo is not None or
                                           t.op.name in ("setitem", "write_through")):
            if t.op.name in _VIEWS:
                family.add(t.target)  # (a view of it: a write through it shows)
            continue
        if isinstance(t, ir.Return):
            continue
        return True  # (a write in place, a call of the user's or an effect given it)
    return False


# ops whose result may be a view of their first argument's memory, and the names srcad
# gives one array again (an alias carried past a write)
_VIEWS = VIEW_OPS | {"alias_again", "in_layout"}


def _known_state_locals(pf: ParsedFunction, n: Normalizer, carried: dict) -> list:
    """[(obj, attr, local)] for the attributes `carry_attribute_state` carries by a local on
    an object known here (`self` its caller passes, a global object): what the function
    leaves in them, its caller reads (state.py)."""
    out = []
    for (base, attr), local in carried.items():
        held = n.env.get(base)
        if isinstance(held, ir.Const):
            obj = held.value
        elif base in n.locals or base in pf.params:
            continue
        else:
            try:
                obj = pf.resolve(base)
            except Exception:  # (a name the module does not hold: the code says so later)
                continue
        if is_user_object(obj):
            out.append((obj, attr, local))
    return out


def _normalize(pf: ParsedFunction, root: bool = False) -> ir.Function:
    hoist_named_exprs(pf.tree)  # `if (n := f(x)) > 0:` -> `n = f(x)` first (walrus.py)
    lower_forms(pf, set())  # with, loop else, starred targets, reversed(xs) (pyforms.py)
    rename_rebound_params(pf)  # params = {k: params[k] ... for k in params}: params_2 (rebinds.py)
    fold_known_tests(pf)  # `if self.act is None: return z` of a known object (knowntests.py)
    held_dict_updates(pf)  # net.params.update(params): stores by key (objcomps.py)
    fold_static_arguments(pf)  # a recursive function's ints and lengths (recursion.py)
    fold_getter_calls(pf)  # NET.parameters() that returns self._params: NET._params (chosen.py)
    fold_known_dict_gets(pf)  # ACTS.get("relu"), NET.named.get("l0"): ACTS["relu"] (chosen.py)
    fold_dict_reads(pf)  # kwargs.get("act", "elu") of a dict argument: its str (chosen.py)
    unroll_name_loops(pf)  # for name in spec: h = REG[name]()(h) -- once per name (chosen.py)
    zip_displays(pf)  # for f, W in zip([np.tanh, relu], [W1, W2]): one display (chosen.py)
    unroll_function_lists(pf)  # fs = [lambda h: ..]; for fn in fs: x = fn(x) (funclists.py)
    fold_chosen_functions(pf)  # if kind == "relu": act = relu -- Python's branch (chosen.py)
    splice_factories(pf)  # f = make_layer(W): the closure it returns, made here (factories.py)
    fence(pf)
    scalarise_attrdicts(pf, set(pf.params))  # net = AttrDict(W=W); net.act = f: locals
    static_getattr(pf.tree, pf.fn.__globals__,  # getattr(A, name), getattr(np, cfg.act)
                   {k: v for k, v in pf.known.items() if type(v) is str},
                   {k: v for k, v in pf.known.items() if is_user_object(v)})
    _getattr_waits_for_arguments(pf)
    _writes_through_views(pf)  # K.flat[::n + 1] += v, D.T[:] -= x: stores into K, D
    _out_keyword_as_write(pf)  # np.exp(s, out=s) -> s[...] = np.exp(s)
    index_item_loops(pf.tree, _names_of(pf))  # for p, g in zip(ps, gs): p -= g (itemloops.py)
    hoist_written_arguments(pf, _names_of(pf))  # shrink(A[1:]): the view named (inline.py)
    kept_globals(pf)  # CACHE["h"] = h of a module's dict: CACHE.__setitem__("h", h)
    n = Normalizer(pf)
    lower_ndenumerate(pf, n.taken)  # for i, v in np.ndenumerate(a): np.ndindex (ndenumerate.py)
    index_function_dicts(pf, n.taken)  # {"relu": lambda z: ...}[name]: the item (chosen.py)
    lower_partials(pf, n.taken)  # act = partial(np.clip, a_max=1); act(x): np.clip(x, ...)
    lower_try(pf, n.taken)  # try/except/else/finally: a probe and branches (trylower.py)
    container_aliases(pf.tree, lambda name: is_user_object(named_object(pf, name)))  # c = self.cache
    scalarised = scalarise_objects(pf, n.taken)  # objects built here: attributes are locals
    declared_names(pf, n.taken)  # global step; step += 1: state, as self.out is
    # self.out = v: a local, and a setattr effect
    # (a callee's state is read by its caller -- a nested function's too, spliced in:
    # inline.py carries what it leaves into the caller's locals, `Model.calls += 1` in a
    # method of an object built here)
    carry_out = not root
    state_locals = carry_attribute_state(pf.tree, n.taken, carry_out=carry_out,
                                         holds=functools.partial(attribute_type, pf))
    lower_callbacks(pf, n.taken)  # np.piecewise, np.vectorize, ... as loops (callbacks.py)
    lift_closures(pf, n.taken)  # nested defs and lambdas (closures.py)
    lower_inner_transforms(pf, n.taken)  # srcad.vjp / srcad.jvp inside: srcad.grad calls
    lower_python(pf, n.taken)  # comprehensions, sum(...), lst.append (pylower.py)
    body = pf.tree.body
    if body and not isinstance(body[-1], gast.Return):  # (falling off the end returns None)
        none = gast.Return(value=gast.Constant(value=None, kind=None))
        body.append(gast.copy_location(none, body[-1]))
        gast.fix_missing_locations(pf.tree)
    desugar(pf.tree, n.taken, unpacked=pf.unpacked)
    for _, _, pname, _ in pf.attr_in:  # (the caller's stores on objects, given: state.py)
        pf.params.append(pname)
        pf.tree.args.args.append(gast.Name(pname, gast.Param(), None, None))
    for pname in pf.closure_extra:  # (closure values' free variables: closure_values.py)
        pf.params.append(pname)
        pf.tree.args.args.append(gast.Name(pname, gast.Param(), None, None))
    n.__init__(pf)  # names and definitions again, now that flags exist
    n.state_locals = scalarised + _known_state_locals(pf, n, state_locals)
    n.state_names = {local: (obj, attr) for obj, attr, local in n.state_locals}
    n.carry_out = carry_out
    n.root = root
    for obj, attr, pname, _ in pf.attr_in:
        n.attr_carry[(id(obj), attr)] = (obj, ir.Var(pname))
    n.closures.update(pf.closure_params)
    n.env.update(pf.function_displays)
    fn = n.run()
    fn.attr_unknown = n.attr_unknown  # (what its caller must read when the code runs)
    fn.source_refusals = n.source_refusals  # (analysis/refusals.py raises them: source mode)
    fn.kept_uses = pf.kept_uses  # (reads after stores: refusals.check_kept_globals)
    # (module containers' items read as constants: refusals.check_folded_items)
    fn.folded = n.folded + getattr(pf, "folded_items", [])
    mark_context_edges(fn, n.claim)  # a `with` block's entry and exit (pyforms.py)
    return fn


def _literal_nones(node, params: list) -> list:
    """The parameters a call spells `None` for (`dense(h, W, None, act=None)`): not a name
    that holds None when normalising (an attribute's state before a method sets it, passed
    by objects.py, is a value the callee may see set)."""
    if not isinstance(node, gast.Call) or any(isinstance(a, gast.Starred) for a in node.args):
        return []
    out = [p for p, a in zip(params, node.args)
           if isinstance(a, gast.Constant) and a.value is None]
    return out + [k.arg for k in node.keywords if k.arg is not None and
                  isinstance(k.value, gast.Constant) and k.value.value is None]


def _none_defaults(fn) -> list:
    """The parameters of `fn` whose default is None."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.default is None]


def _default_spelling(default) -> str:
    """How a call spells a parameter's default it leaves out: a function by its name (a
    user's, a ufunc's, a builtin's: `def dense(x, W, *, act=np.tanh)`), else its repr
    (`repr(np.tanh)` is `<ufunc 'tanh'>`, no name code can hold)."""
    spelled = getattr(default, "__name__", None) if callable(default) else None
    return spelled if isinstance(spelled, str) and spelled.isidentifier() else repr(default)


def _function_defaults(fn) -> dict:
    """The parameters of `fn` whose default is a function a call can resolve (a user
    function or one with a row: `rowed_callable`)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in params if p.default is not inspect.Parameter.empty
            and not isinstance(p.default, type) and (rowed_callable(p.default) or (
                isinstance(p.default, types.FunctionType) and is_user_object(p.default)))}


def _names_of(pf: ParsedFunction) -> set:
    """Every name the function's code spells (a new name must be none of them)."""
    return {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)} | set(pf.params)
