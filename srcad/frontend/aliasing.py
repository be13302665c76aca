"""In-place writes in differentiated code: `x[i] = v`, `x[i] += v`, `x += t` on arrays.

srcad differentiates a write as copy-on-write (`runtime.setitem`): the written name gets a new
array, so a value the backward saved is never overwritten. numpy instead writes into the old
array, which every alias and view of it sees. srcad does what numpy does, with values:
`r = y[1:]` (a basic index), `r = y.T`, `np.transpose(y, axes)`, `np.swapaxes(y, a, b)` and
`z = y` are remembered as relations, and a write into one name is carried to the others
(`y = setitem(y, np.s_[1:], r)`, `r = y[1:]`), in straight-line code, loops and branches
(`propagate_write`; a branch keeps the relations both arms agree on, a loop those its body
cannot break). Where numpy's sharing cannot be known before running -- a reshape (a view or
a copy, by memory layout), an index held in an argument, a view made on one arm of an `if`
-- a write is refused when something that may share the old array is read afterwards
(`check_mutations`), so that no program silently computes something numpy would not.

Before/after (a write through a row view in a loop):
    for i in range(n):              for i in range(n):
        r = y[i]                        r = y[i]
        r[0] = r[0] * 3.0               r = setitem(r, 0, r[0] * 3.0)
                                        y = setitem(y, i, r)

`AliasingMixin` holds these methods of the normaliser (srcad/frontend/normalize.py).
"""

from __future__ import annotations

import ast
import inspect
import operator
import re
import warnings
from collections.abc import Iterator

import gast
import numpy as np

from .. import ir, pyfuncs, runtime
from ..ops import control, table
from ..errors import SharingUnknownError
from ..runtime_python import list_concat
from .kept_globals import kept_container
from .opaque import is_user_object
from .parse import LIFTED


def _index_kind(part, ints, arrays=frozenset()) -> bool | None:
    """Is this part of an index basic (True: int, slice, None, ...), advanced (False: a list,
    an array, a mask -- or a name `arrays` says holds an array), or unknown (None: a name that
    may hold either)?"""
    if isinstance(part, ir.Slice):
        return True
    if isinstance(part, ir.Const):
        v = part.value
        # (a string key picks an item of a dict: the object itself, as an int picks a list's)
        return v is None or v is Ellipsis or isinstance(v, (slice, str)) or (
            isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)))
    if isinstance(part, ir.Var):
        return True if part.name in ints else False if part.name in arrays else None
    return False


def makes_view(call: ir.Call, ints=frozenset(), maybe: bool = False,
                arrays=frozenset()) -> bool:
    """Does this call return memory shared with its input?  Indexing does only with basic
    indices (ints, slices, None, ...); an integer array or a mask makes a copy. With `maybe`,
    an index whose kind is unknown counts as a view (for the check that refuses)."""
    if call.op.name != "getitem":
        return True
    index = call.args.get("index")
    parts = index.parts if isinstance(index, ir.Index) else (index,)
    kinds = [_index_kind(p, ints, arrays) for p in parts]
    return all(k is True or (maybe and k is None) for k in kinds)


def _view_source(value):
    """The local name `value` may share memory with, judged by its spelling (or None):
    `y`, `y[...]`, `y.T`, `y.transpose(...)`, `np.transpose(y, ...)`, `y.reshape(...)`."""
    if isinstance(value, gast.Name):
        return value.id
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        return value.value.id
    if isinstance(value, gast.Attribute) and value.attr in ("T", "mT") and isinstance(
            value.value, gast.Name):
        return value.value.id
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
        f = value.func
        if f.attr in _VIEW_METHODS and isinstance(f.value, gast.Name) and not (
                f.value.id == "np" and value.args):
            return f.value.id
        if f.attr in _VIEW_FUNCTIONS and value.args and isinstance(value.args[0], gast.Name):
            return value.args[0].id
    return None


# IR ops whose result may be a view of their first argument's memory (numpy's views; a
# basic index -- getitem -- and a copy srcad makes of one name into another are the callers'
# to add): analysis/refusals.py, normalize.py `_changed_after`
VIEW_OPS = frozenset({"transpose", "swapaxes", "moveaxis", "matrix_transpose", "reshape",
                      "ravel", "squeeze", "expand_dims", "diagonal", "real", "view",
                      "broadcast_to", "atleast_1d", "atleast_2d", "atleast_3d", "asarray",
                      "flip", "fliplr", "flipud", "rot90"})

_VIEW_METHODS = {"transpose", "swapaxes", "reshape", "ravel", "squeeze", "view"}
_VIEW_FUNCTIONS = {"transpose", "swapaxes", "reshape", "ravel", "squeeze", "expand_dims",
                   "asarray", "moveaxis", "permute_dims"}


def returned_views(fn: ir.Function, n: int = 1, unpack: bool = False) -> list[set]:
    """For each of the `n` values a call of `fn` gives (one, or the items of a returned tuple
    the call site unpacks): the parameters it may share memory with -- a view (basic index,
    transpose, reshape, ...), an alias, or what a call inside returns of them."""
    shares: dict = {p: {p} for p in fn.params}
    for _ in range(2):  # (a loop may make a view from a value its previous iteration made)
        for st in ir.walk(fn.body):
            if isinstance(st, ir.Call):
                first = next(iter(st.args.values()), None)
                if isinstance(first, ir.Var) and first.name in shares and (
                        st.op.name == "copy" or (st.op.view and makes_view(st, maybe=True))):
                    shares[st.target] = shares.get(st.target, set()) | shares[first.name]
            elif isinstance(st, ir.UserCall):
                inner = returned_views(st.callee, len(st.targets), st.unpack)
                for t, params in zip(st.targets, inner):
                    for p, a in zip(st.callee.params, st.args):
                        if p in params and isinstance(a, ir.Var) and a.name in shares:
                            shares[t] = shares.get(t, set()) | shares[a.name]

    def of(atom) -> set:
        if isinstance(atom, ir.Var):
            return set(shares.get(atom.name, ()))
        if isinstance(atom, ir.Seq):
            return set().union(*(of(a) for a in atom.items)) if atom.items else set()
        return set()

    ret = fn.ret.value
    if unpack and isinstance(ret, ir.Seq) and len(ret.items) == n:
        return [of(a) for a in ret.items]
    return [of(ret)] * n


# ops whose results are views into their first argument that srcad does not follow as
# views (np.split's pieces, `a, b = B`'s rows, `y.view()`): a write through one, with the
# array read after, is refused (`check_mutations`), never a write numpy's array would miss
_PIECES = frozenset({"split", "array_split", "hsplit", "vsplit", "dsplit", "unpacked",
                     ".view"})

# the ops propagate_write makes a view again with, from its base's new value (remake)
_REMADE_VIEWS = frozenset({"view_again", "getitem", "transpose", "swapaxes"})
# what returns its input's memory, or writes into it, as numpy would (not a value of its own)
_SHARING_FNS = (runtime.setitem, runtime.write_through, runtime.alias_again, runtime.view_again,
                runtime.item_again)


# the endings srcad gives the names it makes from a user's name (not an object's attribute)
_GENERATED_SUFFIXES = frozenset({"arg", "op", "item", "held", "before", "copy", "entry",
                                 "setitem", "getitem", "alias_again", "write_through"})


def _display_item(display: ir.Seq, index):
    """The atom in the slot `index` of a list display where it is a name the display holds
    in another slot too (the one object written in place shows in both), else None."""
    parts = index.parts if isinstance(index, ir.Index) and not index.is_tuple else (index,)
    if len(parts) != 1 or not isinstance(parts[0], ir.Const) or type(parts[0].value) is not int:
        return None
    k = parts[0].value
    if not -len(display.items) <= k < len(display.items):
        return None
    was = display.items[k]
    return was if isinstance(was, ir.Var) and display.items.count(was) > 1 else None


# ops whose result is certainly a list or a dict (surely_container)
_CONTAINER_OPS = frozenset({"list", "list_append", "list_concat", "list_repeat", "dict",
                            "dict_set", "dict_copy", "dict_without"})


# ops whose result is an object made elsewhere: read, copied as a reference, written into
_NOT_MADE_HERE = frozenset({"getitem", "copy", "setitem", "write_through", "alias_again",
                            "view_again", "item_again", "object_attribute", "dict_get"})


def _whole_slice(index) -> bool:
    """Is `index` `[:]` (all of a list, in order)?"""
    parts = index.parts if isinstance(index, ir.Index) and not index.is_tuple else ()
    return len(parts) == 1 and isinstance(parts[0], ir.Slice) and all(
        b is None or (isinstance(b, ir.Const) and b.value is None)
        for b in (parts[0].lower, parts[0].upper, parts[0].step))


def _constant_slice(index):
    """`index` a slice of constant bounds (`[:]`, `[1:]`, `[:-1]`): that slice, else None."""
    parts = index.parts if isinstance(index, ir.Index) and not index.is_tuple else ()
    if len(parts) != 1 or not isinstance(parts[0], ir.Slice):
        return None
    bounds = [b if b is None else b.value if isinstance(b, ir.Const) else ...
              for b in (parts[0].lower, parts[0].upper, parts[0].step)]
    if not all(b is None or type(b) is int for b in bounds) or bounds[2] == 0:
        return None
    return slice(*bounds)


def _copies_deeply(fn: ir.Function) -> bool:
    """Is `fn` srcad's copy.deepcopy (pyfuncs.deepcopy): what it returns holds copies of its
    argument's arrays (the numbers it gives back as they were cannot be written in place)?"""
    return fn.name == "deepcopy" and fn.filename == pyfuncs.__file__


def _user_name(ir_name: str) -> str:
    """The user's name for an IR name (`r_L5`, a later value of `r`, is `r`)."""
    return re.sub(r"_L\d+(_\d+)?$", "", ir_name)


# ops that read a container's keys or length only: a write into one of its arrays, in place,
# changes neither (check_mutations)
_KEYS_ONLY = frozenset({"dict_keys", "len"})


def bound_names(target) -> Iterator[str]:
    """The names an assignment target rebinds (`a`, `a, (b, *c)`; not `a[i]` or `a.b`)."""
    if isinstance(target, gast.Name):
        yield target.id
    elif isinstance(target, (gast.Tuple, gast.List)):
        for t in target.elts:
            yield from bound_names(t.value if isinstance(t, gast.Starred) else t)


def _const(value) -> ir.Const:
    return ir.Const(value, repr(value))


class AliasingMixin:
    """Subscript assignment and numpy's aliasing, for `Normalizer`."""

    def held_array_write(self, spelled: str, node, module: bool = False):
        """The refusal of `W_held[...] = v`, a write in place into an array a module global
        (`module`) or an object holds, spelt by its holder's name."""
        who = "the module global" if module else "an object's attribute"
        hint = (f"pass the array as an argument to the functions that read it, or keep it on "
                f"an object and store a new array whole (`model.{spelled} = v`)") if module \
            else (f"store a new array whole where it is held (`{spelled} = v`; for part of "
                  f"it, `w = {spelled}.copy(); w[i] = v; {spelled} = w`), which srcad follows "
                  f"into the methods that read it, or pass the array as an argument")
        return self.unsupported(
            f"`{spelled}[...] = ...` writes in place into an array, {who} `{spelled}`: Python "
            f"writes that very array, which every holder then shows (its methods, a function "
            f"reading it, the caller after the call); srcad's code would write a copy, so they "
            f"would read the old values", node, hint)

    def setitem(self, target, value, node):
        """x[i] = v: a new array (copy on write) bound to x. numpy would write into the old
        array, so every other name that shares its memory (a view, an alias) must be dead
        from here on -- checked once the whole function is normalised (`check_mutations`)."""
        if isinstance(target.value, gast.Attribute) and \
                isinstance(target.value.value, gast.Name) and \
                self.known_object(target.value.value) is not None:
            spelled = f"{target.value.value.id}.{target.value.attr}"
            put_back = isinstance(value, gast.Name) and \
                value.id in getattr(self.pf, "put_back", ())
            if put_back and value.id in self.held_written:
                return None  # (`self.ps[i][k] = v`: the item's own store was Python's)
            if not self.augmenting and not self.generated and not put_back and \
                    kept_container(getattr(self.known_object(target.value.value),
                                           target.value.attr, None)):
                # `self.dropout_param["mode"] = mode` of a dict the object keeps and the
                # function hands on (`dropout_forward(x, self.dropout_param)`): stored into
                # the object's own dict as Python does, which every later read of it sees
                # (a value depending on the differentiated arguments is refused:
                # refusals.check_writes_into_held_values)
                return self.store_into_held(target, value, spelled, node)
            if isinstance(getattr(self.known_object(target.value.value), target.value.attr,
                                  None), np.ndarray):
                raise self.held_array_write(spelled, node)
            raise self.unsupported(
                f"a store into `{spelled}[...]`: srcad follows an object's list or dict where "
                f"the function only stores into it by key (or appends), reads it by item, "
                f"`.get`, `.items()` or `in`, and keeps no second name for it", node,
                f"store new values whole (`{spelled}[k] = {spelled}[k] + v`, not `+=`), or "
                f"keep the container in a local and assign it: `d = dict({spelled}); "
                f"d[k] = v; {spelled} = d`")
        if isinstance(target.value, gast.Attribute) and not (
                isinstance(target.value.value, gast.Name) and
                target.value.value.id in self.locals):
            # (`net.layers[0].params["W"] = W`: a container an object reached as an item holds)
            holder = ast.unparse(gast.gast_to_ast(target.value.value))
            if isinstance(getattr(self.known_object(target.value.value), target.value.attr,
                                  None), np.ndarray):  # (`net[0].W[...] = W`)
                raise self.held_array_write(f"{holder}.{target.value.attr}", node)
            raise self.unsupported(
                f"a store into `{holder}.{target.value.attr}[...]`, a list or dict an object "
                f"holds: srcad follows such stores into a global object's container by its "
                f"name (`net.params[k] = v`), not through an item or another object", node,
                f"store a new container whole into the object: `layer = {holder}; d = "
                f"dict(layer.{target.value.attr}); d[k] = v; layer.{target.value.attr} = d`")
        if isinstance(target.value, gast.Attribute) and \
                isinstance(target.value.value, gast.Name) and \
                target.value.value.id in self.pf.params and \
                target.value.value.id not in self.pf.known and not self.generated:
            # (`model.params["W1"] = W1` of an argument: followed where the argument holds
            # an object of the program's classes, which the call's arguments tell)
            p, attr = target.value.value.id, target.value.attr
            raise self.pf.error(
                f"a store into `{p}.{attr}[...]`, a list or dict the argument `{p}` holds: "
                f"srcad follows it where `{p}` is an object of one of the program's classes, "
                f"known when the call's arguments come", node, cls=SharingUnknownError,
                hint=f"pass an object of a class your program defines as `{p}`, or store a "
                f"new container whole: `d = dict({p}.{attr}); d[k] = v; {p}.{attr} = d`")
        if isinstance(target.value, gast.Name) and target.value.id not in self.locals and \
                isinstance(self.pf.resolve(target.value.id), np.ndarray):
            raise self.held_array_write(target.value.id, node, module=True)  # (`BUF[:] = v`)
        if not isinstance(target.value, gast.Name) or target.value.id not in self.locals:
            raise self.unsupported("assignment into something other than a local array", node,
                                   "assign into a name: x = x.copy(); x[i] = v")
        name = target.value.id
        base = self.name_atom(target.value)
        # the parameter whose object this is (`q = p; q['b'] = v` stores into p's object)
        param = name if name in self.pf.params else next(
            (p for p in self.pf.params if p not in self.mutable and name not in self.mutable
             and isinstance(base, ir.Var) and self.env.get(p) == base), None)
        if param is None and isinstance(base, ir.Var) and not self.generated:
            # (`k = log` then `k[-1] = v` in a branch: a name bound to the parameter's own
            # object -- one object as far as `one_array` knows -- so the store is the
            # caller's; a wrong state and value, silently, before the session of 2026-12-07,
            # thirteenth. `reaches_argument` asks whether the parameter still holds it)
            kept, since = self.mutable_holds.get(base.name, (None, 0))
            if isinstance(kept, ir.Var) and kept.name in self.pf.params and \
                    self.env.get(kept.name) == kept and kept.name not in self.rebound_params \
                    and kept.name not in self.rebound_maybe and \
                    not any(base.name in ir.defs(st) for st in self.statements_so_far()[since:]):
                param = kept.name
        if param is not None and param in self.pf.unknown_kinds and \
                param not in self.rebound_params and not self.generated:
            # (`p[i] = v` into an argument: a list's slot takes the object, which names and
            # containers holding the old one keep; an array's memory is written, which its
            # views show -- the first call's arguments tell which: transformed.py)
            raise self.pf.error(
                f"a store into the argument `{param}` (`{param}[...] = ...`): a list's or "
                f"dict's slot or an array's memory, as the argument holds; srcad waits for "
                f"the call's arguments to tell", node, cls=SharingUnknownError,
                hint="call the transformed function (its arguments tell)")
        index = self.index(target.slice, name)
        start = len(self.body)
        v = self.expr(value, name, None)
        # (`x[i] op= t`: the item read here is the object written, which a name bound to it
        # sees -- `propagate_write` makes such names again with item_again)
        read = next((st for st in reversed(self.body[start:]) if isinstance(st, ir.Call)
                     and st.op.name == "getitem" and st.args.get("a") == base
                     and st.args.get("index") == index), None) \
            if self.augmenting else None
        snap = None
        if name in self.mutable and isinstance(base, ir.Var) and not self.generated and \
                self.views.get(name, (None, None))[1] == "element":
            # (`p = ps[i]; p[...] = v` in a loop: one IR name for all of p's values, so the
            # item write_through asks about -- the old p -- is kept under a name first)
            snap = self.emit(self.op_call(control.identity, [base], {}, node),
                             self.fresh(f"{name}_before_L{node.lineno}"), node)
        if self.augmenting and read is None and isinstance(base, ir.Seq):
            # (a display srcad holds item by item: the item read is the atom in that slot)
            read = _display_item(base, index)
        if read is not None and isinstance(v, ir.Var) and self.surely_container(base) and \
                self.may_share_slots(base, index):
            # (`hs[0] += v` of a list or dict: numpy writes the item's array, which every
            # slot holding that object shows -- `hs = [h] * T` -- write_through's held_at;
            # and Python stores the result into the slot: a number item's too, `d["n"] += 1`)
            call = self.op_call(runtime.write_through, [base, index, v, read if isinstance(
                read, ir.Var) else ir.Var(read.target), _const(True)], {}, node)
        else:
            call = self.op_call(runtime.setitem, [base, index, v], {}, node)
        start = len(self.body)
        # (the held list or dict stored into, found before the store binds the name again)
        held = self.held_root(base) if param is None and not self.generated else None
        if isinstance(held, ir.Var):  # (kept under a name the store does not bind again)
            held = self.emit(self.op_call(control.identity, [held], {}, node),
                             self.fresh(f"{name}_held"), node)
            self.propagations.add(id(self.body[-1]))  # (the held one, on purpose)
            start = len(self.body)
        self.writing_held = self.held_object(name)
        new = self.result(call, name, (name, node.lineno), node)
        if self.augmenting and (isinstance(base, ir.Seq) or self.surely_container(base)):
            for st in self.body[start:]:
                if isinstance(st, ir.Call) and st.op.name == "setitem":
                    st.augmented = True
        if isinstance(value, gast.Name) and value.id in getattr(self.pf, "put_back", ()):
            # `xs[t] = item` after `item = xs[t]; item[i] = v` (pylower.nested_write): puts
            # the written item back where it came from, reading the old container on purpose
            self.propagations.update(id(st) for st in self.body[start:])
            for st in self.body[start:]:  # (an array index there: numpy wrote a copy, and
                if isinstance(st, ir.Call) and st.op.name == "setitem":  # the put-back is
                    st.put_back = True  # dropped per specialisation: transform/arrays.py)
        if isinstance(base, ir.Seq) and not self.generated:
            # (`q = ps; q[0] = v` of a list srcad holds item by item: one list in Python, so
            # every name bound to that very display sees the store)
            for other, atom in list(self.env.items()):
                if other != name and atom is base and other not in self.mutable:
                    self.env[other] = self.env[name]
        if not isinstance(base, ir.Var):
            self.writing_held = None
        else:
            stmt = self.body[-1]
            if name in self.views:  # (written back into the container it was read from)
                self.put_back_stores.add(id(stmt))
            self.storing_at = index  # (the slot stored into: propagate_write)
            self.item_written = None if read is None or not isinstance(v, ir.Var) else (
                ir.Var(read.target), v)
            try:
                rebuilt = self.propagate_write(name, base, new, node, old_item=snap)
            finally:
                self.storing_at = self.item_written = None
            self.mutations.append((stmt, base.name, node.lineno, True, rebuilt))
            key = index.parts[0] if isinstance(index, ir.Index) and \
                not index.is_tuple and len(index.parts) == 1 else None
            if call[0].name == "write_through" and isinstance(read, ir.Call) and \
                    isinstance(key, ir.Const) and type(key.value) in (int, str) and \
                    name not in self.mutable and not self.generated:
                # (`L[0] += t` of a list argument: the item's array, written in place, is
                # the one a display or a name bound to another read of that slot holds --
                # `kept = [L[0]]` -- which see it too)
                self.refresh_item_holders(name, [(key.value, ir.Var(read.target))], node)
        if held is not None:
            # `for p in self.bn_params: p["mode"] = mode`, `d = CFG; d["k"] = v`: a list or
            # dict a module global or an object holds, stored into by another name. The code
            # above carries the new container as a value; Python stores into the held one,
            # which every holder sees -- in the call (a callee reading `self.bn_params[i]`)
            # and after it: this effect stores v there, once per call. (A value depending on
            # the differentiated arguments is refused: refusals.check_writes_into_held_values;
            # an item srcad read when it built the code, check_folded_items)
            self.held_store(held, index, v, _user_name(name), node)
            self.held_written.add(name)
        if param is not None and self.reaches_argument(param, node):
            # `param[k] = v` on a dict the caller passed: Python writes into the caller's
            # object. The code above carries the new dict as a value (what the gradient
            # follows); this effect stores v into the caller's own dict, once per call (the
            # probe and a checkpoint's recomputation skip it; an array is left as it was)
            args = {"_obj": self.entry_of(param), "index": index, "value": v,
                    "param": ir.Const(param, repr(param))}
            levels = getattr(self.pf, "put_back", {}).get(getattr(value, "id", None)) or \
                getattr(self, "written_in_place", {}).get(getattr(value, "id", None))
            if levels:  # (`p[0][1] = v`: Python writes into the caller's own p[0])
                args["levels"] = _const(levels)
            self.body.append(ir.Effect("setitem", None, args, node.lineno))

    def store_into_held(self, target, value, spelled: str, node):
        """``obj.attr[k] = v`` of a list or dict a known object holds: the effect storing v
        into that very container (a "held" setitem, as `setitem` makes for a second name)."""
        container = self.expr(target.value, spelled.replace(".", "_"), None)
        index = self.index(target.slice, spelled.replace(".", "_"))
        v = self.expr(value, spelled.replace(".", "_"), None)
        self.held_store(container, index, v, spelled, node)

    def held_store(self, container, index, value, spelled: str, node) -> None:
        """The effect storing `value` into the held list or dict `container` (refusals.py
        reads the "held" ones: `_held_stores`, `check_writes_into_held_values`)."""
        effect = ir.Effect("setitem", None, {"_obj": container, "index": index,
                                             "value": value, "held": _const(spelled)},
                           node.lineno)
        self.body.append(effect)
        self.propagations.add(id(effect))  # (it reads the held container on purpose)

    def held_root(self, atom, depth: int = 0):
        """The atom of the list or dict a module global or an object holds that `atom` is
        (a constant srcad read when it built the code, or an item of one, or an object's
        attribute read when the code runs, through the stores made into it here by that
        name), where every definition of the names on the way says so; else None (a
        container the call made, an argument's, or one not known)."""
        if isinstance(atom, ir.Const):
            return atom if kept_container(atom.value) else None
        if not isinstance(atom, ir.Var) or depth > 8 or atom.name in self.pf.params:
            return None
        d = self.reaching_definition(atom.name)
        if not isinstance(d, ir.Call):
            return None
        if d.op.name in ("setitem", "copy"):  # (`p["b"] = v` after `p["a"] = u`: the same
            # container, the name bound again to the code's new value)
            return self.held_root(next(iter(d.args.values()), None), depth + 1)
        if d.op.name == "getitem" and self.held_root(d.args.get("a"), depth + 1) is not None:
            return atom
        obj = d.args.get("_obj")
        if getattr(d.op, "kind", None) == "attribute" and isinstance(obj, ir.Const) and \
                is_user_object(obj.value):
            return atom  # (`self.cfg` read when the code runs)
        return None

    def reaching_definition(self, name: str):
        """The statement whose value `name` holds here: its one definition in the function,
        or the last statement of the block being built that assigns it, where no compound
        statement after that one may assign it again; else None."""
        defs = self.definitions(name)
        if len(defs) == 1:
            return defs[0]
        for st in reversed(self.body):
            if isinstance(st, ir.Call) and st.target == name:
                return st
            if any(name in ir.defs(x) for x in ir.walk([st])):
                return None
        return None

    def surely_container(self, atom, depth: int = 0, asked: frozenset = frozenset()) -> bool:
        """Is `atom` certainly a list or a dict (a display, or made by a list's or a dict's
        op, or written into as one) wherever the function binds it so far? (A loop name
        written into in its loop -- `L = write_through(L, ..)` -- is one if its other
        definitions make one: `asked`.)"""
        if isinstance(atom, ir.Seq):
            return atom.kind == "list"
        if not isinstance(atom, ir.Var) or depth > 8:
            return False
        if atom.name in asked:
            return True
        made = self.definitions(atom.name)
        if atom.name in self.pf.params and \
                atom.name not in getattr(self.pf, "containers", ()):
            return False  # (an argument the call gives no list or dict, written into or
            # not: `x[::-1] = t` in a loop is no container's store because it reads x)
        if not made and atom.name in self.pf.params:  # (a list or dict the call gives)
            return True
        return bool(made) and all(
            isinstance(st, ir.Call) and (st.op.name in _CONTAINER_OPS or (
                st.op.name in ("setitem", "write_through", "copy")
                and self.surely_container(next(iter(st.args.values()), None), depth + 1,
                                          asked | {atom.name})))
            for st in made)

    def may_share_slots(self, container, index) -> bool:
        """Might the slot `index` of `container` hold the very object another slot holds
        (`[h] * T`, `[y, y]`)? Not where srcad knows its items and that one is held once."""
        items = self.list_items_of_atom(container)
        if items is None:
            return True
        parts = index.parts if isinstance(index, ir.Index) and not index.is_tuple else (index,)
        if len(parts) != 1 or not isinstance(parts[0], ir.Const):
            return True
        key = parts[0].value
        if type(key) is int and key < 0:
            key += len(items)
        was = dict(items).get(key)
        return not isinstance(was, ir.Var) or sum(a == was for _, a in items) > 1

    def entry_of(self, param: str) -> ir.Var:
        """The parameter's value on entry (a loop rebinds the parameter's own IR name)."""
        if param not in self.mutable:
            return ir.Var(param)
        if param not in self.entries:
            self.entries[param] = self.fresh(f"{param}_entry")
        return ir.Var(self.entries[param])

    # -- numpy's aliasing ----------------------------------------------------------------------
    # `r = y[0]` (a basic index), `r = y.T` / `np.transpose(y, axes)` / `np.swapaxes(y, a, b)`
    # make r a view of y, and `z = y` makes z the same array: a write into one must show in
    # the others. srcad does what numpy does, with values: the written name gets the new
    # array, its base is rebuilt from it (setitem into the base, or the inverse transpose),
    # and the base's other views and aliases are made again from the new base. `self.views`
    # holds the relations known at the current point of the function: a branch keeps those
    # both arms agree on, a loop those its body cannot break (`views_enter_loop`); a write
    # into an array with a view srcad does not know is refused (`check_mutations`).

    def view_families_in_control_flow(self) -> set:
        """Names that may be written through a view (or alias) inside a loop or a branch,
        with every name they may share memory with: propagating such a write rebinds them
        there, so they keep one name for all their values (like loop-assigned names)."""
        edges: dict = {}

        def edge(a, base):
            edges.setdefault(a, set()).add(base)
            edges.setdefault(base, set()).add(a)

        for node in gast.walk(self.pf.tree):
            if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
                    node.targets[0], gast.Name):
                base = _view_source(node.value)
                if base is not None and base in self.locals:
                    edge(node.targets[0].id, base)
            if isinstance(node, gast.Assign) and len(node.targets) == 1:
                # (`m_W, m_b = m_init(W=W, b=b)`: the objects pass's constructor, a method
                # leaving its state -- a returned item that is a parameter's object)
                for target, arg in self.returned_arguments(node.targets[0], node.value):
                    if arg in self.locals:
                        edge(target, arg)
        written = set()  # names written into inside a loop or a branch
        for node in gast.walk(self.pf.tree):
            if isinstance(node, (gast.If, gast.For, gast.While)):
                for inner in node.body + node.orelse:
                    for n in gast.walk(inner):
                        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
                            written.add(n.target.id)
                        targets = n.targets if isinstance(n, gast.Assign) else (
                            [n.target] if isinstance(n, gast.AugAssign) else [])
                        for t in targets:
                            if isinstance(t, gast.Subscript) and isinstance(t.value,
                                                                            gast.Name):
                                written.add(t.value.id)
        written |= self.dicts_written_in_control_flow()  # (a callee writing into it there)
        family: set = set()
        todo = [w for w in written if w in edges]
        while todo:
            v = todo.pop()
            if v not in family:
                family.add(v)
                todo.extend(edges.get(v, ()))
        return family

    def returned_arguments(self, target, value) -> list:
        """[(a name `target` binds, the caller's name whose object the callee returns there)]
        for `target = f(...)` of a lifted function (srcad's own: a constructor or method the
        objects pass made) returning, as an item, a parameter unchanged or through plain
        copies (`self_W = W; return (self_W, ...)`)."""
        if not isinstance(value, gast.Call) or not isinstance(value.func, gast.Name):
            return []
        try:
            fn = self.pf.resolve(value.func.id)
        except Exception:  # noqa: BLE001  (not a global: nothing to learn here)
            return []
        if fn not in LIFTED:
            return []
        tree = LIFTED[fn].tree
        params = list(LIFTED[fn].params)
        given = {p: a.id for p, a in zip(params, value.args) if isinstance(a, gast.Name)}
        given.update({k.arg: k.value.id for k in value.keywords
                      if k.arg in params and isinstance(k.value, gast.Name)})
        copied = {p: p for p in params}  # (a name of the callee -> the parameter it holds)
        for st in tree.body:
            if isinstance(st, gast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.targets[0], gast.Name):
                src = st.value.id if isinstance(st.value, gast.Name) else None
                copied.pop(st.targets[0].id, None)
                if src in copied:
                    copied[st.targets[0].id] = copied[src]
        ret = tree.body[-1].value if tree.body and isinstance(tree.body[-1], gast.Return) \
            else None
        names = target.elts if isinstance(target, (gast.Tuple, gast.List)) else [target]
        items = ret.elts if isinstance(ret, gast.Tuple) and len(names) > 1 else [ret]
        return [(t.id, given[copied[r.id]]) for t, r in zip(names, items)
                if isinstance(t, gast.Name) and isinstance(r, gast.Name) and r.id in copied
                and copied[r.id] in given]

    _INT_OPS = {"add", "subtract", "multiply", "floordiv", "mod", "negative"}

    def note_int(self, call: ir.Call) -> None:
        """Track names that certainly hold Python ints (indices that make views)."""
        op, args = call.op.name, list(call.args.values())

        def is_int(a):
            return (isinstance(a, ir.Const) and isinstance(a.value, int)
                    and not isinstance(a.value, bool)) or (
                isinstance(a, ir.Var) and a.name in self.ints)

        if op in ("len", "int") or (op == "getitem" and isinstance(args[0], ir.Var)
                           and args[0].name in self.shapes) or (
                op in self._INT_OPS and args and all(is_int(a) for a in args)):
            if call.target not in self.mutable:
                self.ints.add(call.target)
        if op == "shape" and call.target not in self.mutable:
            self.shapes.add(call.target)

    def record_view(self, name: str, value, atom=None) -> None:
        """After `name = value`: remember a view (or alias) of another local name. (`atom`:
        what `value` came to, where it is one object a local name holds -- a spliced call
        returning its argument, `m = M(W1)` keeping `m.W1`: an alias, as a plain name is.)"""
        self.forget_views(name)
        base = _view_source(value)
        last = self.body[-1] if self.body else None
        if isinstance(atom, ir.Var) and isinstance(last, ir.Call) and \
                last.target == atom.name and last.op.fn is control.identity and \
                isinstance(last.args.get("x"), ir.Var) and not isinstance(value, gast.Name):
            atom = last.args["x"]  # (a splice's result copied under the name: what it was)
        if base is None and isinstance(atom, ir.Var) and not isinstance(value, gast.Name):
            self.note_alias(name, atom)
            return
        if base is None or base not in self.locals or base == name:
            return
        self.view_made[name] = len(self.view_made) + 1  # (a new array: the last made)
        atom = self.env.get(name)
        if isinstance(value, gast.Name):
            # an alias: straight-line names share their atom (env); loop names need a link
            if name in self.mutable or base in self.mutable:
                self.views[name] = (base, "alias", None)
            return
        call = self.body[-1] if self.body else None
        if not (isinstance(call, ir.Call) and atom == ir.Var(call.target)
                and call.args and next(iter(call.args.values())) == self.env.get(base)):
            return
        if call.op.name == "getitem" and self.surely_container(self.env.get(base)) and \
                any(isinstance(p, ir.Slice) for p in (call.args["index"].parts if isinstance(
                    call.args["index"], ir.Index) else (call.args["index"],))):
            return  # (`M = L[:]` of a list: a new list of the same objects -- no view of L,
            # which a store into L leaves as it was)
        if call.op.name == "getitem" and makes_view(call, self.ints, arrays=self.arrays):
            index = call.args["index"]
            parts = index.parts if isinstance(index, ir.Index) else (index,)
            # all integers: a view of a row, or one element copied out (by the base's ndim)
            kind = "element" if all(isinstance(p, (ir.Var, ir.Const)) and not (
                isinstance(p, ir.Const) and (p.value is None or p.value is Ellipsis))
                for p in parts) else "index"
            self.views[name] = (base, kind, index)
        elif call.op.name == "getitem" and self.surely_container(self.env.get(base)) and \
                isinstance(call.args["index"], ir.Index) and \
                not call.args["index"].is_tuple and \
                isinstance(call.args["index"].parts[0], ir.Var):
            # (`v = d[k]` of a list or dict, k a key known when the code runs -- `for k in
            # d`: the item itself, which `v op= t` writes, as `p = ps[i]` is)
            self.views[name] = (base, "element", call.args["index"])
        elif call.op.name == "transpose":
            axes = call.args.get("axes", ir.Const(None, "None"))
            if isinstance(axes, ir.Seq) and all(isinstance(a, ir.Const) for a in axes.items):
                axes = ir.Const(tuple(a.value for a in axes.items), repr(tuple(
                    a.value for a in axes.items)))
            if isinstance(axes, ir.Const):
                self.views[name] = (base, "transpose", axes.value)
        elif call.op.name == "swapaxes":
            a, b = call.args.get("axis1"), call.args.get("axis2")
            if isinstance(a, ir.Const) and isinstance(b, ir.Const):
                self.views[name] = (base, "swapaxes", (a.value, b.value))

    def note_alias(self, name: str, atom: ir.Var) -> str | None:
        """`name` (or the name it shares `atom` with) is a loop name now bound to the object
        `atom` is, which a local name holds: an alias of that name, as `name = y` makes
        (a tuple's item, `m = M(W1)` keeping W1 in `m.W1`). Returns that name, or None."""
        if name not in self.mutable and atom.name not in self.mutable:
            return None
        base = next((n for n, a in self.env.items() if a == atom and n != name
                     and n in self.locals), None)
        if base is not None and name in self.mutable:
            # (a name of one value stays out: a write carried into it in a loop or a
            # branch would bind it there only -- check_mutations refuses what is read after)
            self.view_made[name] = len(self.view_made) + 1
            self.views[name] = (base, "alias", None)
        return base

    def forget_views(self, name: str) -> None:
        """`name` gets a value of its own: relations through it (as the view, the base or an
        index) no longer hold."""
        for view, (base, kind, arg) in list(self.views.items()):
            if name in (view, base) or (kind in ("index", "element")
                                        and name in ir.atom_vars(arg)):
                del self.views[view]

    def views_enter_loop(self, node) -> dict:
        """Keep the relations a loop body cannot break (no name in them is assigned in the
        loop, except by writes into elements); returns the set to restore after the loop."""
        in_place = {id(n.target): n.target.id for n in gast.walk(node)
                    if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}
        assigned = set()
        for n in gast.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and \
                    id(n) not in in_place:
                assigned.add(n.id)
        for name in assigned:
            self.forget_views(name)
        for name in set(in_place.values()) - assigned:
            # (`v op= t` only: an array written in place stays its alias's or view's array
            # -- numpy's one memory, carried by propagate_write; a number rebound is
            # alias_again's; an element read out may be either: forgotten)
            for view, (base, kind, arg) in list(self.views.items()):
                if (name in (view, base) and kind == "element") or (
                        kind in ("index", "element") and name in ir.atom_vars(arg)):
                    del self.views[view]
        spelled = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
        for view in [v for v in self.item_views if v in self.views
                     and self.views[v][0] in spelled]:
            # (a name made an item of a container by refresh_item_holders, which the loop
            # may write: the refresh after the loop makes it again, from the container)
            del self.views[view]
        return dict(self.views)

    def views_join(self, arms: list) -> None:
        """After a branch: the relations every arm ends with."""
        first, *rest = arms
        self.views = {k: v for k, v in first.items() if all(r.get(k) == v for r in rest)}

    def rebind(self, user: str, call_parts, node) -> ir.Var:
        """Bind `user` to a propagated value (its own name if it is mutable)."""
        start, before = len(self.body), self.env.get(user)
        var = self._rebind(user, call_parts, node)
        if self.undo_key is not None:
            for st in self.body[start:]:
                st.undo = (self.undo_key, before)
        return var

    def _rebind(self, user: str, call_parts, node) -> ir.Var:
        if user not in self.mutable:
            var = self.emit(call_parts, self.fresh(f"{user}_L{node.lineno}"), node)
            self.propagations.add(id(self.body[-1]))  # reads the old value on purpose
        else:  # (as `h = h + b` in a loop: compute, then copy into the name)
            tmp = self.emit(call_parts, self.fresh(f"{user}_{call_parts[0].name}"), node)
            self.propagations.add(id(self.body[-1]))
            var = self.emit(self.op_call(control.identity, [tmp], {}, node), user, node)
        self.env[user] = var
        return var

    def write_back(self, base: str, kind: str, arg, new: ir.Var, node, old=None, item=None):
        """The new value of `base` after its view (kind, arg) took the value `new` (`old`:
        the view before, when an augmented assignment may have rebound a scalar; `item`: the
        view before the write, which `write_through` asks about -- an array's view or a
        scalar copy, a container's slot stored into since it was read)."""
        if kind == "element" and item is not None:
            return self.op_call(runtime.write_through, [self.env[base], arg, new, item], {},
                                node)
        if kind in ("index", "element"):
            return self.op_call(runtime.setitem, [self.env[base], arg, new], {}, node)
        if kind in ("transpose", "swapaxes"):
            # the base keeps its memory layout (numpy wrote into it): its values, set whole
            if kind == "transpose":
                inv = None if arg is None else runtime.inverse_permutation(arg, len(arg))
                back = self.op_call(np.transpose, [new, _const(inv)], {}, node)
            else:
                back = self.op_call(np.swapaxes, [new, _const(arg[0]), _const(arg[1])], {},
                                    node)
            moved = self.emit(back, self.fresh(f"{base}_{kind}"), node)
            return self.op_call(runtime.setitem, [self.env[base], _const(Ellipsis), moved],
                                {}, node)
        if old is not None:  # `z op= t` with `z = y`: y sees it if it is an array
            return self.op_call(runtime.alias_again, [new, self.env[base]], {}, node)
        return self.op_call(control.identity, [new], {}, node)  # an alias

    def remake(self, base_atom, kind: str, arg, node, old=None):
        """A view (kind, arg) of the array `base_atom` (`old`: the view before)."""
        if kind == "element":
            return self.op_call(runtime.view_again, [base_atom, arg, old], {}, node)
        if kind == "index":
            return self.op_call(operator.getitem, [base_atom, arg], {}, node)
        if kind == "transpose":
            return self.op_call(np.transpose, [base_atom, _const(arg)], {}, node)
        if kind == "swapaxes":
            return self.op_call(np.swapaxes, [base_atom, _const(arg[0]), _const(arg[1])], {},
                                node)
        if old is not None:
            return self.op_call(runtime.alias_again, [base_atom, old], {}, node)
        return self.op_call(control.identity, [base_atom], {}, node)

    def propagate_write(self, name: str, old: ir.Var, new: ir.Var, node,
                        augmented: bool = False, old_item: ir.Var | None = None) -> set:
        """`name` was written in place (now `new`; `augmented`: by `name op= t`): rebuild
        what shares its memory. Returns the names rebuilt. (`old_item`: the old value kept
        under a name of its own, where `old` is the name `new` was copied into.)"""
        done = {name}
        held, self.writing_held = self.writing_held, None  # (the write's: held_object)
        # straight-line names bound to the same array: one of them may know its base
        group = [o for o, atom in self.env.items()
                 if o != name and atom == old and o not in self.mutable]
        env_before = dict(self.env)
        self.carry_to_aliases(name, old, new, node, augmented, done, held)
        carried = done - {name}
        at, value = name, new
        if name not in self.views:
            known = next((o for o in group if o in self.views), None)
            if known is not None:
                self.views[name] = self.views[known]
                self.view_made[name] = self.view_made.get(known, 0)
        # (base, the item written through before and after): a container's item is an object,
        # which every name bound to it shares (`item_again`, below)
        through = {}
        if self.item_written is not None:
            through[name] = self.item_written  # (`x[i] op= t`: that item, written)
        at_old = old if old_item is None else old_item
        while at in self.views:  # up the chain of views: write into each base in turn
            base, kind, arg = self.views[at]
            if base in carried:
                # (another name for this very object, made again by carry_to_aliases --
                # `p = v; q = v; q -= 1; p += 2`, p now an alias of q: the object's own
                # base is written next, from what that name holds now)
                carried.discard(base)
                at, value, at_old = base, self.env[base], env_before.get(base, at_old)
                continue
            if base in done:
                break
            # (`op=` through names for one value: a base that may hold a number keeps it,
            # alias_again -- `n7 = s4; n7 += t; n9 = n7; n9 += u` leaves s4 its number)
            before = old if augmented and (at == name or kind == "alias" and (
                self.may_hold_number(base) or self.may_hold_number(at))) else None
            base_old = self.env[base]
            if kind == "element" and before is not None:  # (write_through: see ir.Call.undo)
                self.undo_key = f"{name}@{len(self.body)}"
            item = self.env[at]
            if kind == "element":
                through.setdefault(base, (at_old, item))
            kept_old = base_old
            if base in self.mutable and isinstance(base_old, ir.Var) and \
                    self.views.get(base, (None, None))[1] == "element":
                # (the base is itself an item, written through next: its old value, which
                # the rebinding below overwrites, kept for write_through to ask about)
                kept_old = self.emit(self.op_call(control.identity, [base_old], {}, node),
                                     self.fresh(f"{base}_before_L{node.lineno}"), node)
            value = self.rebind(base, self.write_back(base, kind, arg, value, node, before,
                                                      item=at_old), node)
            self.shared.append((value.name, item.name))  # numpy: still one memory
            if kind == "alias" and at in self.mutable:  # (the loop names hold one object)
                if base not in self.mutable:
                    self.note_mutable_holds(at, value)
                elif not self.generated:
                    self.note_mutable_holds(base, ir.Var(at))
            if kind == "element" and self.reaches_argument(base):
                # `L = p["layers"]; L[0] = v`: the caller's dict holds the written item, as
                # Python leaves it (`store_into` leaves an array argument as it was)
                self.body.append(ir.Effect("setitem", None, {
                    "_obj": self.entry_of(base), "index": arg, "value": item,
                    "old": at_old, "param": ir.Const(base, repr(base))}, node.lineno))
                self.propagations.add(id(self.body[-1]))  # (reads the old item on purpose)
            done.add(base)
            self.carry_to_aliases(base, base_old, value, node, False, done)
            at, at_old = base, kept_old
        stored_at = self.storing_at
        for view in [v for v in self.item_views if v in self.views and v not in done
                     and self.views[v][0] in done]:
            # (a name refresh_item_holders made a container's item: the container written
            # through another item leaves it that item, unchanged; a store into its slot,
            # or into a slot not known, leaves the name its object and ends the relation --
            # `D[k] op= t` of its own slot makes it again, refresh_item_holders)
            key = self.views[view][2]
            if stored_at is not None and not (
                    isinstance(stored_at, ir.Index) and isinstance(key, ir.Index) and
                    all(isinstance(p, ir.Const) for p in stored_at.parts + key.parts)
                    and stored_at != key):
                del self.views[view]
                self.item_views.discard(view)
        kept = {v for v in self.item_views if v in self.views and self.views[v][0] in done}
        while True:  # and down again: every known view of a rebuilt name is made again,
            # in the order the views were made (the tape's order: an alias is the same array
            # there, so an alias is made again first, as soon as its base is)
            ready = [(view, rel) for view, rel in self.views.items()
                     if rel[0] in done and view not in done and view not in kept]
            if not ready:
                break
            view, (base, kind, arg) = min(ready, key=lambda vr: (
                vr[1][1] != "alias", self.view_made.get(vr[0], 0)))
            before_view = self.env.get(view)
            # (an alias is the base's array, written: `identity`, one array for
            # share_reads -- unless either may hold a number, which no write changes:
            # `d = t` and then an `op=` on either rebinds only that name, in a loop or a
            # branch as well, and a scalar copy's alias keeps its number when the copy's
            # base is written; alias_again keeps each number)
            keep = before_view if kind != "alias" or (augmented and base == name) or \
                self.may_hold_number(base) or self.may_hold_number(view) else None
            if kind == "element" and base in through and before_view is not None:
                # `u = p['a']; n = p['a']; n *= 2`: u is the object written if it is that
                # very object (the same slot, `p[-1]` and `p[1]`; not a slot stored into
                # since u was bound), else what it was -- an array's view follows its base
                old_item, new_item = through[base]
                made = self.rebind(view, self.op_call(runtime.item_again, [
                    self.env[base], arg, before_view, old_item, new_item], {}, node), node)
            else:
                made = self.rebind(view, self.remake(self.env[base], kind, arg, node, keep),
                                   node)
            self.shared.append((self.env[base].name, made.name))
            done.add(view)
            self.carry_to_aliases(view, before_view, made, node, False, done)
        self.undo_key = None
        return done

    def may_hold_number(self, name: str) -> bool:
        """Might `name` hold a number (no array) now: a literal, a name some `op=` of this
        function rebinds (a number is rebound, an array written), or one made again by
        `alias_again`/`view_again`/`item_again`, which keep a number where they find one?
        (True where its value's statement is not found: alias_again is right either way.)"""
        if self.augassigned is None:
            self.augassigned = {n.target.id for n in gast.walk(self.pf.tree)
                                if isinstance(n, gast.AugAssign)
                                and isinstance(n.target, gast.Name)}
        atom = self.env.get(name)
        if name in self.augassigned or not isinstance(atom, ir.Var):
            return True
        for body in (self.body, self.top_body):
            for st in (reversed(body) if body is self.body else ir.walk(body)):
                if isinstance(st, ir.Call) and st.target == atom.name:
                    return st.op.name in ("alias_again", "view_again", "item_again")
        return name not in self.pf.params

    def carry_to_aliases(self, name, old, new, node, augmented, done, held=None) -> None:
        """Straight-line names bound to the same array as `name` see its new contents (an
        augmented assignment: unless it held a scalar, which `op=` rebinds). They stay
        aliases: a later write into one is carried to the others. (`held`: for a loop name,
        the object it held before the write -- `held_object` -- which displays may hold.)"""
        again: dict = {}  # (the name of the value held -> the alias_again made for it)
        for other, atom in list(self.env.items()):
            # (a name bound to that object: the same atom, or -- after `op=` -- one made
            # from it by alias_again before, `m.W` after `ps[0] -= t` refreshed it)
            if other == name or other in done or other in self.mutable or not \
                    self.same_array(atom, old):
                continue
            if (augmented or atom != old) and isinstance(atom, ir.Var) and \
                    atom.name in again:
                # (`n3 = n2; n5 = n2; n6 = n2; n6 -= t`: n2, n3 and n5 are one object again
                # -- the written one or, a number, the old -- so one value, read by one
                # name: its adjoint adds the reads in the order the tape's one Tensor does)
                self.env[other] = again[atom.name]
                self.views.setdefault(other, (name, "alias", None))
            elif augmented or atom != old:
                # (an array written through an index or a view is that object: a holder
                # made from it by alias_again before is too, unless it kept its number)
                made = self.rebind(other, self.op_call(runtime.alias_again, [new, atom], {},
                                                       node), node)
                self.shared.append((new.name, made.name))  # (one array, if it is one)
                self.one_array(made, new)
                self.views.setdefault(other, (name, "alias", None))
                if isinstance(atom, ir.Var):
                    again[atom.name] = made
            else:
                self.env[other] = new
            done.add(other)
        if not isinstance(old, ir.Var) or (name in self.mutable and (
                held is None or self.body is not self.top_body)):
            return
        if name in self.mutable:  # (one IR name: the object it held before the write --
            old = held  # held_object, asked by the write -- in the displays holding it)
        items: dict = {}

        def item(was):
            # (the display's slot is that object: it sees the write -- after `op=`, unless
            # it held a scalar, which `op=` rebinds: alias_again)
            if not augmented and was == old:
                return new
            if was.name not in items:
                items[was.name] = self.emit(
                    self.op_call(runtime.alias_again, [new, was], {}, node),
                    self.fresh(f"{name}_item_L{node.lineno}"), node)
                self.propagations.add(id(self.body[-1]))  # (reads the old value)
                self.shared.append((new.name, items[was.name].name))
                self.one_array(items[was.name], new)
            return items[was.name]

        for other, atom in list(self.env.items()):
            # a list or dict held as a value (a display stored into, a dict display): the
            # slot holding that object is written through (`L = [W1, W2]; L[1] = v; W1 *=
            # 2`: L[0] shows it) -- in straight-line code, where the container's slots are
            # known; in a loop or a branch, check_container_holders refuses what is left
            if other in done or other not in self.locals or not isinstance(atom, ir.Var) \
                    or self.body is not self.top_body or other == name or \
                    name in self.mutable:  # (a loop name's later writes: refused there)
                continue
            slots = [(i, x) for i, x in self.list_items_of_atom(atom) or ()
                     if isinstance(x, ir.Var) and self.same_array(x, old)]
            for i, x in slots:
                value = item(x)
                atom = self.rebind(other, self.op_call(runtime.write_through, [
                    atom, ir.Index((_const(i),), False), value, x], {}, node), node)
            if slots:
                done.add(other)
        for other, atom in list(self.env.items()):
            # a list or tuple display holding the array as an item, at any depth (`ps =
            # [a.copy(), ..]; p = ps[0]; p *= 2`)
            if other in done or other in self.mutable or not isinstance(atom, ir.Seq) or \
                    not self.holds_array(atom, old):
                continue
            self.env[other] = self.put_array(atom, old, item)
            done.add(other)

    def one_array(self, a: ir.Var, b: ir.Var) -> None:
        """`a` was made by `alias_again` from `b` (or the other way): one object where the
        holder held an array (numpy's in-place write), the holder's own number where it held
        one -- `alias_again` decides when the code runs, so a later write may treat them as
        one and carry itself with `alias_again` again."""
        if a.name in self.mutable or b.name in self.mutable:
            return  # (one IR name for all of a loop name's values: no one object)
        ra, rb = self._array_root(a.name), self._array_root(b.name)
        if ra != rb:
            self.array_of[ra] = rb

    def _slot_key(self, base, index):
        """(container's IR name, constant index or key) of a read `base[index]`, or None."""
        if not (isinstance(base, ir.Var) and isinstance(index, ir.Index) and
                not index.is_tuple and all(isinstance(p, ir.Const) and
                                           type(p.value) in (int, str) for p in index.parts)) \
                or base.name in self.mutable:
            return None
        key = (base.name, index.parts[0].value)
        return None if key in getattr(self.pf, "dict_paths", ()) else key

    def read_again(self, base, index):
        """`base[k]` (a constant index or key) read again in the block of an earlier read of
        that slot of the very same container value, nothing since having bound either name
        or used the container but to read it: the earlier read's name -- the very same
        object, as Python has it, so its adjoint gathers every read's cotangent in the order
        the backward reaches them, as the tape's one Tensor does (`p[0] = t; u1, u2 = p[0],
        p[0]`: two adjoints summed apart, one in the other's last bit). Else None."""
        key = self._slot_key(base, index)
        if key is None or self.generated or self.augmenting or key not in self.slot_reads:
            return None  # (`x[i] op= t` finds the item it writes by its own read: setitem)
        first, body, at = self.slot_reads[key]
        if body is not self.body or first.name in self.mutable or \
                not self._array_stored(*key):
            return None
        for st in ir.walk(body[at:]):
            if first.name in ir.defs(st) or base.name in ir.defs(st) or (
                    base.name in ir.uses(st) and not (isinstance(st, ir.Call) and
                                                      st.op.name == "getitem")):
                return None
        return first

    def _array_stored(self, name: str, key) -> bool:
        """Was slot `key` of the container IR name `name` stored into by this function (a
        chain of `setitem`s binds it, one at that key) with an array a numeric op made? An
        argument's item read as given is a fresh array each read in tape mode too (tape.py
        `index_container`), so only a stored slot is one object to both modes; a container
        stored there (`p["enc"] = item` putting a written dict back) is followed by the
        stores' own machinery, each read its own (`read_again`)."""
        made = {st.target: st for st in self.statements_so_far() if isinstance(st, ir.Call)}
        while name in made and made[name].op.name == "setitem":
            args = made[name].args
            at, into, value = args.get("index"), args.get("x"), args.get("value")
            if isinstance(at, ir.Index) and not at.is_tuple and \
                    isinstance(at.parts[0], ir.Const) and at.parts[0].value == key:
                defs = self.definitions(value.name) if isinstance(value, ir.Var) else ()
                return bool(defs) and not self.surely_container(value) and all(
                    isinstance(d, ir.Call) and d.op.name not in _CONTAINER_OPS and
                    d.op.name not in _NOT_MADE_HERE for d in defs)
            if not isinstance(into, ir.Var):
                return False
            name = into.name
        return False

    def same_item(self, base, index, got):
        """`got` read `base[index]` (a constant index or key): an earlier read of that slot
        of the very same container value is the very same object -- `A = D["x"]` and the
        `D["x"]` a display `E = {"x": D["x"]}` holds, of a dict argument -- so a write in
        place through either holder is carried to the other (`one_array`,
        refresh_item_holders). (A store into the slot binds the container again: another
        value, another key.)"""
        key = self._slot_key(base, index)
        if key is None or not isinstance(got, ir.Var):
            return got  # (a dict the argument holds at a key of dict_paths: one object, not
            # an array -- its stores are followed by dict_paths, not as an array's writes)
        self.slot_reads[key] = (got, self.body, len(self.body))  # (read_again)
        first = self.item_reads.setdefault(key, got)
        if first != got:
            self.one_array(got, first)
        if not self.generated and type(key[1]) is int:
            # (a slot whose object srcad knows -- `L = [W1, W1]; L[1] *= c` left both slots
            # W1's new array -- is that object: `v = L[1]; v += t` writes W1 too)
            items = self.list_items_of_atom(base) or ()
            at = key[1] + len(items) if key[1] < 0 else key[1]
            held = dict(items).get(at)
            if isinstance(held, ir.Var) and held != got and held.name not in self.mutable:
                self.one_array(got, held)
        return got

    def _array_root(self, name: str) -> str:
        while name in self.array_of:
            name = self.array_of[name]
        return name

    def note_mutable_holds(self, name: str, var: ir.Var) -> None:
        """The loop name `name` (one IR name for all its values) holds the object `var` is,
        from here until it is bound again (`holds_now`)."""
        self.mutable_holds[name] = (var, len(self.statements_so_far()))

    def note_copy_holds(self, name: str, atom) -> None:
        """`name = identity(atom)` into the loop name `name`: the object it holds now, for
        refresh_item_holders -- that of a name of one value, or what another loop name
        holds (that name itself where nothing is known yet: `_held` asks it later, whatever
        a later pin calls its object, while neither is bound again)."""
        if not isinstance(atom, ir.Var) or self.generated or atom.name == name:
            return
        held = self._held(atom.name) if atom.name in self.mutable else atom
        self.note_mutable_holds(name, atom if held is None else held)

    def held_object(self, name: str):
        """The object the loop name `name` holds now (`_held`), or None."""
        return None if name not in self.mutable or self.generated else self._held(name)

    def _held(self, name: str):
        """The object `note_mutable_holds` says the loop name `name` holds, while it is not
        bound again: a name of one value, found through the loop names it was copied from
        (each not bound again since the copy); None where unknown."""
        var, since = self.mutable_holds.get(name, (None, 0))
        for _ in range(8):
            if var is None:
                return None
            later = self.statements_so_far()[since:]
            if any(name in ir.defs(st) for st in later):
                return None
            if var.name not in self.mutable or var.name == name:
                return var
            if any(var.name in ir.defs(st) for st in later):
                return None  # (the other loop name was bound again after the copy)
            name = var.name
            var, since = self.mutable_holds.get(name, (None, 0))
        return None

    def holds_now(self, name: str, old) -> bool:
        """Does the loop name `name` still hold the object `old` is (`note_mutable_holds`)?"""
        var = self._held(name)
        return var is not None and self.same_array(var, old)

    def same_array(self, a, b) -> bool:
        """Are atoms `a` and `b` one object as far as `one_array` knows?"""
        return a == b or (isinstance(a, ir.Var) and isinstance(b, ir.Var) and
                          self._array_root(a.name) == self._array_root(b.name))

    def holds_array(self, atom, var) -> bool:
        """Does `atom` (a name's value, or a list or tuple display at any depth) hold the
        object `var` is?"""
        if isinstance(atom, ir.Seq):
            return any(self.holds_array(x, var) for x in atom.items)
        return self.same_array(atom, var)

    def put_array(self, atom, var, made):
        """`atom` with each item that is the object `var` is replaced by `made(item)`."""
        if isinstance(atom, ir.Seq):
            return ir.Seq(tuple(self.put_array(x, var, made) for x in atom.items), atom.kind)
        return made(atom) if self.same_array(atom, var) else atom

    def spelled(self, ir_name: str) -> str:
        """The user's spelling of an IR name, for a message: `r` for `r_L5`, and `m.W1`
        for the local srcad keeps a built object's attribute in (`m_W1`, objects.py)."""
        if ir_name in self.held_by:  # (pin_loop_values: the value a holder keeps)
            return self.spelled(self.held_by[ir_name])
        user = _user_name(ir_name)
        if user.endswith("_item") and len(user) > 5:  # (refresh_item_holders' read)
            return f"{self.spelled(user[:-5])}[...]"
        try:
            src = inspect.getsource(self.pf.fn)
        except (OSError, TypeError):
            return user
        if re.search(rf"\b{re.escape(user)}\b", src):
            return user
        base, _, last = user.rpartition("_")
        if base and (last in _GENERATED_SUFFIXES or last in table._TABLE or last.isdigit()):
            return self.spelled(base)  # (`W1_setitem`: a value srcad made from W1)
        for k in [k for k, ch in enumerate(user) if ch == "_" and 0 < k < len(user) - 1]:
            obj, attr = user[:k], user[k + 1:]
            if attr in _GENERATED_SUFFIXES or attr in table._TABLE:  # (`W1_setitem`: srcad's)
                continue
            if re.search(rf"\b{re.escape(obj)}\s*\.\s*{re.escape(attr)}\b", src) or \
                    re.search(rf"\b{re.escape(obj)}\s*=", src):  # (`m = Model(..)`)
                return f"{obj}.{attr}"
        return user

    def statements_so_far(self) -> list:
        """The function's statements made so far: the top level's and the block being made
        (a loop's or branch's body, not yet in it), nested ones included."""
        return [*ir.walk(self.top_body)] + (
            [] if self.body is self.top_body else [*ir.walk(self.body)])

    def list_items_of(self, name: str, env: dict | None = None):
        """[(index or key, atom)] of a list's items or a dict's values where this function
        knows them (a display srcad holds item by item, or the one display a loop-carried
        name was given), else None."""
        return self.list_items_of_atom((self.env if env is None else env).get(name))

    def list_items_of_atom(self, atom, depth: int = 0, upto: int | None = None,
                           chain: set | None = None):
        """`list_items_of` for an atom (as bound before the `upto`-th call made so far,
        when given: `D = setitem(D, k, v)` of a name with one IR name for all its values
        reads the `D` made before it). `chain` collects the ids of the statements that made
        the container (its display, the stores into it)."""
        if depth > 8:  # (a loop-carried name written in its loop names itself)
            return None
        if isinstance(atom, ir.Seq):
            return list(enumerate(atom.items)) if atom.kind == "list" else None
        stmts = [st for st in self.statements_so_far() if isinstance(st, ir.Call)]
        straight = {id(st) for st in [*self.top_body, *self.body]}
        if upto is None:
            upto = len(stmts)
        chain = set() if chain is None else chain
        for _ in range(8):  # (a chain of plain copies: `self.params = ps` spliced in)
            if not isinstance(atom, ir.Var):
                return None
            # (what `refresh_item_holders` read back after a loop wrote the items: the
            # container as it stood then, when not made again since)
            at, known, known_chain = self.items_read_back.get(
                atom.name, (upto + 1, None, ()))
            where = [k for k in range(at if at <= upto else 0, upto)
                     if stmts[k].target == atom.name]
            if not where and at <= upto:
                chain.update(known_chain)
                return list(known)
            made = [stmts[k] for k in where]
            # (its one definition, or the last of those made in straight-line code here:
            # `self.ps = None` then `self.ps = ps` of an object built here)
            if not made or (len(made) > 1 and not all(id(st) in straight for st in made)):
                return None
            chain.add(id(made[-1]))
            if made[-1].op.name in ("setitem", "write_through"):
                # (a store or write into a slot of a known list: the others as they were)
                args = list(made[-1].args.values())
                index = args[1].parts if isinstance(args[1], ir.Index) and \
                    not args[1].is_tuple else (args[1],)
                if len(index) != 1 or not isinstance(index[0], ir.Const):
                    return None
                below = self.list_items_of_atom(args[0], depth + 1, where[-1], chain)
                if below is None:
                    return None
                key = index[0].value
                if type(key) is int and key < 0:
                    key += len(below)
                was = dict(below).get(key)
                if made[-1].op.name == "write_through" and isinstance(was, ir.Var):
                    # (the object written in place: each slot holding it shows the write)
                    return [(k, args[2] if k == key or v == was else v) for k, v in below]
                return [(k, args[2] if k == key else v) for k, v in below]
            if made[-1].op.name == "dict":  # (a dict display: its values by key)
                args = made[-1].args
                keys = [args.get(f"k{i}") for i in range(len(args) // 2)]
                if not all(isinstance(k, ir.Const) and type(k.value) in (str, int)
                           for k in keys):
                    return None
                return [(k.value, args[f"v{i}"]) for i, k in enumerate(keys)]
            if made[-1].op.name == "list_append":  # (`kept.append(x)`: its items, then x)
                below = self.list_items_of_atom(made[-1].args.get("xs"), depth + 1,
                                                where[-1], chain)
                if below is None or [k for k, _ in below] != list(range(len(below))):
                    return None
                return below + [(len(below), made[-1].args.get("x"))]
            span = _constant_slice(made[-1].args.get("index")) \
                if made[-1].op.name == "getitem" else None
            if made[-1].op.fn in (list, tuple) or span is not None:
                # (`M = list(L)`, `M = L[:]`, `M = L[1:]`: a new list of (some of) the same
                # objects, L's items)
                below = self.list_items_of_atom(next(iter(made[-1].args.values()), None),
                                                depth + 1, where[-1], chain)
                if below is None or [k for k, _ in below] != list(range(len(below))):
                    return None  # (a dict's keys, `list(d)`, are not its values)
                return below if span is None else list(enumerate(
                    [x for _, x in below][span]))
            if made[-1].op.fn is list_concat:  # (`L[:i] + L[i + 1:]`: a list.pop's rest)
                parts = [self.list_items_of_atom(a, depth + 1, where[-1], chain)
                         for a in made[-1].args.values()]
                if len(parts) != 2 or any(
                        p is None or [k for k, _ in p] != list(range(len(p))) for p in parts):
                    return None
                return list(enumerate([x for p in parts for _, x in p]))
            if made[-1].op is not table.lookup(control.identity):
                return None
            atom, upto = made[-1].args.get("x"), where[-1]
            if isinstance(atom, ir.Seq):
                return list(enumerate(atom.items)) if atom.kind == "list" else None
        return None

    def refresh_item_holders(self, name: str, items, node) -> None:
        """The items of the list `name` (they were `items`) were written in place (`ps[0]
        -= t`, `for p in ps: p -= t`, a callee's `p -= t` through its list argument): each
        array is the same object in numpy, so the other names and displays holding one of
        them (`W1` after `ps = [W1, W2]`, an object's `self.W` after `self.params = [self.W,
        ..]`) see its new values -- read from the list, as `alias_again` (a number item is
        rebound instead, and the holder keeps it)."""
        now = self.env.get(name)
        olds = {old for _, old in items if isinstance(old, ir.Var)} | {ir.Var(name)}
        own = set()  # (the statements that made the container itself: not another holder)
        known = dict(self.list_items_of_atom(now, chain=own) or [])
        for st in self.statements_so_far():
            if isinstance(st, ir.Call) and st.op.name == "dict" and id(st) not in own \
                    and st.target != name and sorted(
                    st.args.values(), key=repr) != sorted(
                    [ir.Const(k, repr(k)) for k, _ in items] + [o for _, o in items],
                    key=repr) and any(
                    a in olds or seq_holds(a, o) for a in st.args.values()
                    for o in olds):
                # (`d = {"ps": ps}`: the dict holds the list whose arrays were written; the
                # dict's value is not rebuilt here)
                raise self.pf.error(
                    f"line {node.lineno} writes in place into the arrays `{_user_name(name)}` "
                    f"holds, which the dict made at line {st.line} holds too: srcad cannot "
                    f"carry the write into that dict, as numpy's one array would show it",
                    node.lineno, cls=SharingUnknownError,
                    hint=f"read the arrays through one container, or make the dict after "
                    f"the write")
        slots = {}  # index -> the item's atom now, read from the list where unknown
        for i, old in items:
            if not isinstance(old, ir.Var):
                continue
            held = [o for o, a in self.env.items() if o != name and (
                self.holds_array(a, old) if o not in self.mutable else (
                    o in self.locals and self.holds_now(o, old)))]
            # (the array, or a holder made from it; a loop name, while it holds it)
            maybe = self.maybe_slot.get(old.name)  # (read_back_stored: perhaps that object)
            perhaps = [] if maybe is None else [
                o for o, a in self.env.items() if o != name and o not in held and
                o not in self.mutable and self.holds_array(a, maybe)]
            if perhaps and self.body is not self.top_body:
                held.extend(perhaps)  # (refused below, as a name in a loop)
                perhaps = []
            kept_in = [] if self.body is not self.top_body else [
                (other, atom) for other, atom in self.env.items()
                if other != name and other not in held and other in self.locals
                and isinstance(atom, ir.Var) and atom != now]
            if not held and not perhaps and not any(
                    isinstance(x, ir.Var) and self.same_array(x, old)
                    for _, atom in kept_in for _, x in self.list_items_of_atom(atom) or ()):
                continue
            looped = [o for o in held if isinstance(self.env[o], ir.Var)]
            if looped and self.body is not self.top_body:
                # (in a loop or a branch, a name that keeps no one IR name for all its
                # values cannot be given the written array for the code after it)
                raise self.pf.error(
                    f"line {node.lineno} writes in place, inside a loop or a branch, into an "
                    f"array of `{_user_name(name)}` that `{self.spelled(looped[0])}` also "
                    f"holds: srcad cannot carry the write to that name there",
                    node.lineno, cls=SharingUnknownError,
                    hint=f"read the array back from the container after the loop "
                    f"(`{self.spelled(looped[0])} = {_user_name(name)}[...]`), or write "
                    f"through the name")
            new = known.get(i)
            if new is None and isinstance(now, ir.Seq):
                new = now.items[i] if type(i) is int and i < len(now.items) else None
            elif new is None:
                new = self.emit(self.op_call(operator.getitem, [now, ir.Index(
                    (ir.Const(i, repr(i)),), False)], {}, node),
                    self.fresh(f"{name}_item_L{node.lineno}"), node)
                self.propagations.add(id(self.body[-1]))
            slots[i] = new
            if not isinstance(new, ir.Var) or new == old:
                continue
            made: dict = {}

            def again(was):  # the holder's value now: alias_again(new, what it held)
                if was.name not in made:
                    made[was.name] = self.emit(
                        self.op_call(runtime.alias_again, [new, was], {}, node),
                        self.fresh(f"{_user_name(name)}_item_L{node.lineno}"), node)
                    self.propagations.add(id(self.body[-1]))  # (reads the old value)
                    self.shared.append((new.name, made[was.name].name))  # (one array)
                    self.one_array(made[was.name], new)
                return made[was.name]

            asked: dict = {}

            def ask(was):  # (a holder of the object the slot held before a store that may
                # not have run: the written one if the slot still held it -- item_again)
                if was.name not in asked:
                    asked[was.name] = self.emit(self.op_call(runtime.item_again, [
                        now, ir.Index((ir.Const(i, repr(i)),), False), was, old, new], {},
                        node), self.fresh(f"{_user_name(name)}_item_L{node.lineno}"), node)
                    self.propagations.add(id(self.body[-1]))
                return asked[was.name]

            # (another list or dict whose slots srcad knows, holding that object -- `E =
            # dict(D)`, `M = list(L)`: Python's shallow copy holds the very array -- has it
            # written too: a `write_through` into its slot)
            for other, atom in kept_in:
                for j, x in self.list_items_of_atom(atom) or ():
                    if isinstance(x, ir.Var) and self.same_array(x, old):
                        atom = self.rebind(other, self.op_call(runtime.write_through, [
                            atom, ir.Index((_const(j),), False), again(x), x], {}, node), node)
            for other in perhaps:
                self.env[other] = self.put_array(self.env[other], maybe, ask)
            for other in held:  # (a name, or a display holding it at any depth)
                if other in self.mutable:  # (its one IR name, given the written object)
                    self.rebind(other, self.op_call(runtime.alias_again, [
                        new, self.env[other]], {}, node), node)
                    self.alias_stmts.add(id(self.body[-1]))  # (one array with the slot)
                    self.shared.append((new.name, self.body[-2].target))
                    self.note_mutable_holds(other, new)
                    continue
                self.env[other] = self.put_array(self.env[other], old, again)
                if isinstance(self.env[other], ir.Var) and isinstance(now, ir.Var) and \
                        name in self.locals and self.body is self.top_body:
                    # (the name is the container's item: a later `W1 op= t` is a write
                    # through it, carried into the container -- propagate_write)
                    self.forget_views(other)
                    self.views[other] = (name, "element", ir.Index((ir.Const(i, repr(i)),),
                                                                   False))
                    self.view_made[other] = len(self.view_made) + 1
                    self.item_views.add(other)
        if slots and isinstance(now, ir.Var) and not known and name in self.env:
            # (the container held item by item again, so that a later write finds its
            # holders: a display where the name has one value here, else the items read
            # back, kept for `list_items_of_atom` until the name is made again)
            first = {}  # (slots that held one object hold it still, written: one atom)
            for i, old in items:
                if isinstance(old, ir.Var) and i in slots:
                    first.setdefault(old, slots[i])
            for i, old in items:
                if i not in slots and isinstance(old, ir.Var) and old in first:
                    slots[i] = first[old]
                elif i not in slots:
                    slots[i] = self.emit(self.op_call(operator.getitem, [now, ir.Index(
                        (ir.Const(i, repr(i)),), False)], {}, node),
                        self.fresh(f"{name}_item_L{node.lineno}"), node)
            if name not in self.mutable and all(type(i) is int for i, _ in items):
                for other in [o for o, a in self.env.items() if a == now and (
                        o == name or (o in self.locals and o not in self.mutable))]:
                    # (and another name the write left bound to that list -- `M = list(L)`
                    # walked by a callee binds both to what it gives back: a display each)
                    self.env[other] = ir.Seq(tuple(slots[i] for i, _ in items), "list")
            elif self.body is self.top_body:
                self.items_read_back[now.name] = (
                    sum(isinstance(st, ir.Call) for st in self.statements_so_far()),
                    tuple((i, slots[i]) for i, _ in items), frozenset(own))

    def written_params(self) -> set:
        """Parameters whose entry value a write may reach: not in generated code (which adds
        in place only into buffers it owns), nor a parameter the function rebinds by plain
        assignment (a loop name then holds other arrays too; no warning is better than a
        wrong one)."""
        if self.generated:
            return set()
        rebound = {t.id for n in gast.walk(self.pf.tree) if isinstance(n, gast.Assign)
                   for t in n.targets if isinstance(t, gast.Name)}
        return set(self.pf.params) - rebound

    def reaches_argument(self, name: str, node=None) -> bool:
        """Does a write into `name` here go into the object the caller passed? Yes for a
        parameter never rebound by plain assignment (`written_params`), and for one rebound
        later (`cache = {}`) before its first rebinding; not after a rebinding made on every
        path. Where the name holds the caller's object on some paths only -- after a
        rebinding in a branch, or in a loop that rebinds it -- a store (`node`) is refused:
        Python's target depends on the path taken."""
        if name not in self.pf.params or self.generated:
            return False
        if name in self.written_params():
            return True
        if node is not None:
            loops = self.enclosing(node, (gast.For, gast.While))
            rebinds_in_loop = any(name in bound_names(t) for loop in loops
                                  for n in gast.walk(loop) if isinstance(n, gast.Assign)
                                  for t in n.targets)
            if name in self.rebound_maybe or (name not in self.rebound_params
                                              and rebinds_in_loop):
                raise self.unsupported(
                    f"a store into `{name}`, which holds the caller's object on some paths "
                    f"and another one (rebound in a branch or a loop) on others", node,
                    f"give the new object its own name, so that `{name}` always holds the "
                    f"caller's")
        return name not in self.rebound_params

    def warn_parameter_write(self, param: str, line: int) -> None:
        """numpy would write into the caller's array; srcad's copy on write leaves it as it
        was (JAX's semantics, the gradient is the same). Say so, at the user's line."""
        warnings.warn_explicit(
            f"srcad: {self.pf.name} writes into its argument `{param}` in place (if it is an "
            f"array); the differentiated function copies on write, so the caller's array is "
            f"left unchanged (numpy would change it). Copy it first (`{param} = "
            f"{param}.copy()`) to say that this is meant", UserWarning, self.pf.filename, line)

    def check_mutations(self) -> None:
        """Copy-on-write equals numpy's in-place write only if nothing else still reads the
        old array: no alias of it and no view into it (or of which it is a view)."""
        if not self.mutations:
            return
        order, loops = {}, {}

        def number(body, loop_ids):
            for st in body:
                order[id(st)] = len(order)
                loops[id(st)] = loop_ids
                if isinstance(st, ir.If):
                    number(st.body, loop_ids)
                    number(st.orelse, loop_ids)
                elif isinstance(st, (ir.For, ir.While)):
                    inner = loop_ids + (id(st),)
                    if isinstance(st, ir.While):
                        number(st.cond_body, inner)
                    number(st.body, inner)

        number(self.body, ())
        # the blocks around each statement: a statement earlier in one of them runs before it
        around: dict = {}

        def nest(body, blocks):
            for st in body:
                around[id(st)] = blocks
                if isinstance(st, ir.If):
                    nest(st.body, blocks + (id(st.body),))
                    nest(st.orelse, blocks + (id(st.orelse),))
                elif isinstance(st, (ir.For, ir.While)):
                    if isinstance(st, ir.While):
                        nest(st.cond_body, blocks + (id(st.cond_body),))
                    nest(st.body, blocks + (id(st.body),))

        nest(self.body, (id(self.body),))
        block_of = {}

        def owners(body):
            for st in body:
                block_of[id(st)] = id(body)
                for sub in (getattr(st, "body", None), getattr(st, "orelse", None),
                            getattr(st, "cond_body", None)):
                    if isinstance(sub, list):
                        owners(sub)

        owners(self.body)
        defs: dict = {}
        # roots[v]: the arrays v may be a view or alias of (each of its sharing definitions
        # -- a loop name may have several -- adds the roots of what it was made from)
        roots: dict = {}
        made, view_at = {}, {}

        def root_set(name):  # (a loop name's own fresh values are roots too)
            return roots.get(name, set()) | {name}

        shared: dict = {}  # what propagate_write rebuilt from one write: one memory in numpy
        for base, view in self.shared:
            if view != base:
                shared.setdefault(view, set()).add(base)
        for st in ir.walk(self.body):
            for d in ir.defs(st):
                defs.setdefault(d, []).append(st)
            if isinstance(st, ir.Call):
                made.setdefault(st.target, st.line)
                first = next(iter(st.args.values()), None)
                shares = (st.op.view and makes_view(st, self.ints, maybe=True,
                                                     arrays=self.arrays)) or \
                    id(st) in self.alias_stmts or \
                    st.op.name in _PIECES  # (`z = y` into a loop name: the same array)
                if shares and isinstance(first, ir.Var):
                    roots[st.target] = roots.get(st.target, set()) | root_set(first.name)
                    view_at.setdefault(st.target, []).append(st)
                for base in shared.get(st.target, ()):
                    # (a view made again from its base's new value shares what that base
                    # shares: `v3 = v2[-1]` made again after `v2[0:1] = ..`, v2 a view of
                    # a0 -- a later write into a0 is one v3 sees)
                    more = root_set(base) if st.op.name in _REMADE_VIEWS else {base}
                    roots[st.target] = roots.get(st.target, set()) | more
                    view_at.setdefault(st.target, []).append(st)
            elif isinstance(st, ir.UserCall):
                # a function may return a view of an argument (`return u[:2]`): its result
                # shares that argument's memory, as a view made here would
                for t, params in zip(st.targets, returned_views(st.callee, len(st.targets),
                                                                st.unpack)):
                    made.setdefault(t, st.line)
                    if _copies_deeply(st.callee):
                        continue
                    for p, a in zip(st.callee.params, st.args):
                        if p in params and isinstance(a, (ir.Var, ir.Seq)):
                            # (a display given: the result may be one of its items --
                            # `def first(ps): return ps[0]` -- that very array)
                            for v in ir.atom_vars(a):
                                roots[t] = roots.get(t, set()) | root_set(v)
                            view_at.setdefault(t, []).append(st)

        writes = {id(m[0]) for m in self.mutations}

        def exists_at(v, view_stmt, stmt) -> bool:  # can this view exist when stmt runs?
            return (order[id(view_stmt)] < order[id(stmt)] or bool(
                set(loops[id(view_stmt)]) & set(loops[id(stmt)]))) and not any(
                killed(v, view_stmt, d, stmt) for d in defs.get(v, ()))

        def own_value(d) -> bool:
            """Does `d` bind a new array of its own: made by an op that is no view (through
            the copy into a loop name), and not a write (`r[i] = v`, `r += t` on a view of
            another array is still that array's memory in numpy)?"""
            while isinstance(d, ir.Call) and d.op.fn is control.identity and \
                    id(d) not in writes:
                src = next(iter(d.args.values()), None)
                made = defs.get(src.name, ()) if isinstance(src, ir.Var) else ()
                if len(made) != 1:
                    return False
                d = made[0]
            return (isinstance(d, ir.Call) and not d.op.view and id(d) not in writes
                    and id(d) not in self.propagations and d.op.fn not in _SHARING_FNS)

        def killed(v, view_stmt, d, stmt, carried=False) -> bool:
            """Does `d` certainly give `v` a value of its own (`r = r.copy()`) after
            `view_stmt` made it a view and before `stmt` runs? (Only where `d` is in a block
            around `stmt`: it then runs before `stmt` whenever `stmt` runs.)"""
            if d in view_at.get(v, ()) or block_of[id(d)] not in around[id(stmt)] or \
                    not order[id(d)] < order[id(stmt)] or not own_value(d):
                return False
            # (a second name given a dict later in a loop's body than the write -- `params =
            # new` ending the body -- holds the old dict in the loop's next trip, once `d`,
            # which runs on every trip before the write, made `v` a new one: `new = {}`
            # starting the body. An array likewise (`new = u.copy(); new[1:] = ..; u = new`,
            # the double buffer) where the name is `carried`: not made again by
            # propagate_write from the write, which this check must not contradict)
            return order[id(view_stmt)] < order[id(d)] or (
                (d.op.name == "dict" or carried) and order[id(view_stmt)] > order[id(stmt)]
                and bool(set(loops[id(view_stmt)]) & set(loops[id(stmt)]) & set(loops[id(d)])))

        def made_again(v, st, stmt) -> bool:
            """Is `v` certainly given a new value after the write and before `st` reads it?"""
            for d in defs.get(v, ()):
                if d is stmt or order[id(d)] >= order[id(st)]:
                    continue
                if block_of[id(d)] not in around[id(st)]:
                    # a loop body that wrote, then made `v` again, and ended before `st`:
                    # whenever the write ran, `d` ran after it (an early exit is a flag
                    # that guards the rest of the body, so `d` is not in a block around it)
                    if order[id(d)] > order[id(stmt)] and block_of[id(d)] in around[id(stmt)]:
                        return True
                    continue
                if order[id(st)] > order[id(stmt)]:
                    if order[id(d)] > order[id(stmt)]:
                        return True
                else:  # st runs in a later iteration: d must be in that iteration too
                    common = set(loops[id(st)]) & set(loops[id(stmt)]) & set(loops[id(d)])
                    if common:
                        return True
            return False

        warn = []  # (told once the writes are known to be sound: a refusal says enough)

        def setitems_of(st) -> list:
            """The `setitem` calls a write is (`params = params_setitem` in a loop: the
            setitems that made the value, one per branch)."""
            if isinstance(st, ir.Call) and st.op.name == "copy" and isinstance(
                    st.args.get("x"), ir.Var):
                return [d for d in defs.get(st.args["x"].name, ()) if isinstance(d, ir.Call)
                        and d.op.name == "setitem"] or [st]
            return [st]

        def is_keyed(st, base) -> bool:
            """Is this write a store by key into a dict: `p['k'] = v`, or `for k in p:
            p[k] = ...` (indexed by its own items, so a dict -- which the transform made
            before any call cannot know yet)?"""
            key = st.args.get("index") if isinstance(st, ir.Call) and \
                st.op.name == "setitem" else None
            if isinstance(key, ir.Index) and len(key.parts) == 1 and not key.is_tuple:
                key = key.parts[0]  # (`p['k']`: an index of one part)
            if isinstance(key, ir.Const):
                return isinstance(key.value, str)
            return isinstance(key, ir.Var) and any(
                isinstance(d, ir.Call) and d.op.name == "getitem"
                and isinstance(d.args.get("a"), ir.Var)
                and root_of(d.args["a"].name) == root_of(base)
                for d in defs.get(key.name, ()))

        def root_of(v: str) -> str:
            """The user's name at the start of a chain of plain copies (`params_iter =
            params`)."""
            seen = set()
            while v not in seen:
                seen.add(v)
                made = [d for d in defs.get(v, ()) if isinstance(d, ir.Call)]
                if len(made) != 1 or made[0].op.name != "copy" or not isinstance(
                        made[0].args.get("x"), ir.Var):
                    break
                v = made[0].args["x"].name
            return _user_name(v)
        for stmt, base, line, array, rebuilt in self.mutations:
            # only views that can exist when the write happens see it
            live = {v: r for v, r in roots.items()
                    if any(exists_at(v, vs, stmt) for vs in view_at[v])}
            root = live.get(base, set()) | {base}
            sharing = {v for v, r in live.items() if r & root} | root
            keyed = all(is_keyed(w, base) for w in setitems_of(stmt))
            for p in sorted((root | set(rebuilt)) & self.written_params()):
                # (`param['k'] = v`, or any key of a parameter the call's values show to be
                # a dict or a list: the call writes into the caller's object, as Python does)
                if not keyed and (p,) not in getattr(self.pf, "dict_paths", ()) and \
                        p not in self.pf.containers:
                    warn.append((p, line))
            if (_user_name(base) in self.pf.containers
                    and _user_name(base) in self.written_params()) or (
                        keyed and id(stmt) in self.put_back_stores):
                # a store into a list or dict argument, or by key into a dict that is put back
                # into the container it came from (`e = p["enc"]; e["W"] = v`), puts another
                # object in the slot: the names holding other items keep theirs (no memory is
                # shared), as in Python
                continue
            if array:  # x[i] = v: x is an array, so a plain alias shares it too
                sharing.add(base)
            elif base not in live and not any(base in r for r in live.values()):
                continue  # `s += 1` on a name with no views: rebinding is what numpy does
            # a view made from `base` before `base` certainly got an array of its own
            # (`c = s[1:]; s = s.copy(); s -= 1`) views the old array, not the one written
            # -- and no other definition of `base` that can run in between points it back at
            # shared memory (`a = v.T` after `a = np.tanh(a)`)
            def fresh_since(v, vs):
                # (`carried`: a name that holds the written one's old array in the loop's
                # next trip -- `new = u.copy(); new[1:] = ..; u = new`, the double buffer
                # -- and that propagate_write did not make again from the write)
                carried = v not in rebuilt
                if not any(killed(base, vs, d, stmt, carried) for d in defs.get(base, ())):
                    return False
                return all(own_value(d) for d in defs.get(base, ())
                           if d is not stmt and id(d) not in writes and (
                               order[id(d)] > order[id(vs)]
                               or set(loops[id(d)]) & set(loops[id(stmt)])))

            for v in list(sharing - {base}):
                if v in live and all(fresh_since(v, vs) for vs in view_at[v]
                                     if exists_at(v, vs, stmt)):
                    sharing.discard(v)
            sharing.discard(stmt.target)
            sharing -= rebuilt  # made again from the new value (`propagate_write`)
            tainted: set = set()
            for st in ir.walk(self.body):
                if st is not stmt and id(st) in self.propagations and isinstance(
                        st, ir.Call) and st.op.name == "setitem" and order[id(st)] > order[
                        id(stmt)] and isinstance(st.args.get("x"), ir.Seq) and any(
                        v in sharing for v in ir.atom_vars(st.args["x"])):
                    # (a list display rebuilt after the write with a name that still holds
                    # the old array in a slot: its later reads read that array)
                    sharing.add(st.target)
                    tainted.add(st.target)
                    continue
                if st is stmt or id(st) in self.propagations:
                    continue
                if isinstance(st, ir.Call) and st.op.name in _KEYS_ONLY:
                    continue  # (`for k in d`: the keys, which no write into a value changes)
                later = order[id(st)] > order[id(stmt)] or set(loops[id(st)]) & set(
                    loops[id(stmt)])
                used = {v for v in set(ir.uses(st)) & sharing
                        if v in tainted or not made_again(v, st, stmt)}
                if later and used:
                    other = sorted(used)[0]
                    other_user, base_user = self.spelled(other), self.spelled(base)
                    if keyed:  # (a store by key: into a dict that is an item of another)
                        raise self.pf.error(
                            f"line {line} stores into `{base_user}`, an item of "
                            f"`{other_user}` (read at line {st.line}) that srcad cannot put "
                            f"back into it, as Python's one object would be",
                            line, cls=SharingUnknownError,
                            hint=f"store through the container itself "
                            f"(`{other_user}[i][key] = ...`, with `for i in "
                            f"range(len({other_user}))`), or copy the item first "
                            f"(`{base_user} = dict({base_user})`) if the container is to stay "
                            f"as it was")
                    raise self.pf.error(
                        f"line {line} writes into an array in place, but `{other_user}` "
                        f"(made at line {made.get(other, self.pf.first_line)}) shares its "
                        f"memory and is read at line {st.line}: srcad cannot tell here "
                        f"whether `{other_user}` would see the change",
                        line, cls=SharingUnknownError,
                        hint=f"copy explicitly before writing (`{base_user} = "
                        f"{base_user}.copy()`), or build the new array with np.where / "
                        "np.concatenate")
        self.array_writes = {p for p, _ in warn}  # (normalize.py: `written_arrays`)
        for p, line in dict.fromkeys(warn):
            if self.root:  # (a callee's write is its caller's: inline.py carries it there)
                self.warn_parameter_write(p, line)


def seq_holds(atom, var) -> bool:
    """Is `var` an item of the list or tuple display `atom`, at any depth?"""
    return isinstance(atom, ir.Seq) and any(x == var or seq_holds(x, var) for x in atom.items)
