"""Forward state on objects: ``self.cache = x`` in a differentiated function.

Layer classes written for a hand-written backward keep what the forward computed on the
object (``self.x = x; self.out = np.tanh(x @ self.W); return self.out``). Python runs that
assignment when the line runs and later reads of ``self.out`` in the call see the new value.

Input: a parsed function's gast tree. Output: the same function in which each attribute the
function assigns on a plain name (``B.attr`` with B a parameter, `self` or a global object
that the function never rebinds) is carried by a local variable named after it
(``self_out``):
  * ``B.attr = v`` becomes ``self_out = v`` and then ``B.attr = self_out``, which the
    normaliser emits as an `ir.Effect` of kind "setattr": the object ends up holding the
    forward value, once per call (a checkpoint's recomputation does not set it again, the
    first call's shape probe does not set it at all);
  * ``B.attr += v`` becomes ``self_out = self_out + v`` and the same store;
  * every read of ``B.attr`` in the function reads ``self_out``, so the value flows through
    the gradient like any local; if the function may read it before assigning it, the
    local starts as the object's value at entry (``getattr(B, "attr", None)``: a constant).
Reads of such an attribute from another function (a callee or the caller reading
``layer.out`` after the call) read the object and would carry no gradient:
srcad/analysis/refusals.py refuses them where the stored value depends on the arguments.

Before/after:
    self.out = np.tanh(h)            self_out = np.tanh(h)
    return self.out * 2              self.out = self_out           (Effect: setattr)
                                     return self_out * 2

``global NAME`` / ``nonlocal NAME`` (`declared_names`, before the above) make a name the
function assigns the same kind of state: the module's globals and the function's closure
cells are given as objects (`GlobalNames`, `ClosureNames`) whose attributes are those names,
so ``global step; step = step + 1`` is ``globals.step = globals.step + 1`` and is carried as
above: the start value is read when the call runs (no guard, no rebuild when the counter
moves), later reads in the call see the new value, and the module global (or the cell) is set
once per call, as Python sets it. A value that depends on the arguments being differentiated
is stored as a plain value, as ``self.out`` is: it carries no gradient out of the call.

    step = 0                         globals_step = getattr(globals, "step", None)
    def f(x):                        globals_step = globals_step + 1
        global step                  globals.step = globals_step   (Effect: setattr)
        step = step + 1              return x * globals_step
        return x * step
"""

from __future__ import annotations

import copy
import dis
import types

import gast

from ..errors import UnsupportedSyntaxError
from ..naming import fresh
from .opaque import is_user_object
from .parse import UNRESOLVED, resolve_dotted


def _stores(tree) -> dict:
    """(base name, attribute) -> True for each `B.attr = ...` / `B.attr += ...` on a name."""
    found = {}
    for node in _walk(tree):
        targets = node.targets if isinstance(node, gast.Assign) else (
            [node.target] if isinstance(node, (gast.AugAssign, gast.AnnAssign)) else [])
        for t in targets:
            if isinstance(t, gast.Attribute) and isinstance(t.value, gast.Name):
                found[(t.value.id, t.attr)] = True
    return found


_LIST_CHANGES = ("append", "extend")
# (pylower.py puts runtime_python's list_concat and object_attribute under these names)
LIST_CONCAT = "__srcad_list_concat"
DICT_COPY = "__srcad_dict_copy"
OBJECT_ATTRIBUTE = "__srcad_object_attribute"


def _list_change(stmt):
    """(base, attr, how, items) for ``B.attr.append(v)`` / ``B.attr.extend([u, v])`` as a
    statement (items: the new items as a list display), else None."""
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return None
    call = stmt.value
    f = call.func
    if not (isinstance(f, gast.Attribute) and f.attr in _LIST_CHANGES and
            isinstance(f.value, gast.Attribute) and isinstance(f.value.value, gast.Name) and
            len(call.args) == 1 and not call.keywords):
        return None
    arg = call.args[0]
    if f.attr == "append":
        items = gast.List(elts=[arg], ctx=gast.Load())
    elif isinstance(arg, (gast.List, gast.Tuple)):
        items = gast.List(elts=list(arg.elts), ctx=gast.Load())
    else:
        return None
    return f.value.value.id, f.value.attr, f.attr, items


def kept_store(local: str, obj, attr: str, key, value, taken: set) -> list:
    """``B.attr[k] = v`` into a dict an object keeps across calls, as statements: the key
    (where computed) and the item bound to names, the call's own copy `local` stored into
    (srcad differentiates that store), and the object's own dict stored into as the code
    runs (`own_change`)."""
    out = []
    if not isinstance(key, (gast.Constant, gast.Name)):  # (the key computed once)
        k = fresh(f"{attr}_key", taken)
        out.append(gast.Assign(targets=[_name(k, gast.Store())], value=key, type_comment=None))
        key = _name(k, gast.Load())
    held = fresh(f"{attr}_item", taken)
    out.append(gast.Assign(targets=[_name(held, gast.Store())], value=value, type_comment=None))
    out.append(gast.Assign(targets=[gast.Subscript(
        value=_name(local, gast.Load()), slice=copy.deepcopy(key), ctx=gast.Store())],
        value=_name(held, gast.Load()), type_comment=None))
    return out + own_change(obj, attr, "__setitem__",
                            [[copy.deepcopy(key), _name(held, gast.Load())]], taken)


def own_change(obj, attr: str, method: str, calls: list, taken: set) -> list:
    """Statements changing the object's own list or dict in place as the code runs:
    ``self_cache_own = object_attribute(self, "cache")`` then
    ``self_cache_own.<method>(*args)`` for each args of `calls` (the call's values flow
    through its own copy, by a local; this is Python's change to the object)."""
    spelled = obj.id if isinstance(obj, gast.Name) else "object"
    own = fresh(f"{spelled}_{attr}_own", taken)
    get = gast.Call(func=_name(OBJECT_ATTRIBUTE, gast.Load()), args=[
        copy.deepcopy(obj), gast.Constant(attr, None)], keywords=[])
    out = [gast.Assign(targets=[_name(own, gast.Store())], value=get, type_comment=None)]
    for args in calls:
        out.append(gast.Expr(value=gast.Call(func=gast.Attribute(
            value=_name(own, gast.Load()), attr=method, ctx=gast.Load()), args=list(args),
            keywords=[])))
    return out


def dict_update(stmt):
    """(base, attr, [(key, value)]) for ``B.attr.update({k: v, ...})`` /
    ``B.attr.update(k=v)`` as a statement (constant keys), else None."""
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return None
    call, f = stmt.value, stmt.value.func
    if not (isinstance(f, gast.Attribute) and f.attr == "update" and
            isinstance(f.value, gast.Attribute) and isinstance(f.value.value, gast.Name)):
        return None
    if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], gast.Dict) \
            and all(isinstance(k, gast.Constant) for k in call.args[0].keys):
        pairs = list(zip(call.args[0].keys, call.args[0].values))
    elif not call.args and call.keywords and all(k.arg for k in call.keywords):
        pairs = [(gast.Constant(k.arg, None), k.value) for k in call.keywords]
    else:
        return None
    return f.value.value.id, f.value.attr, pairs


def _dict_store(stmt):
    """(base, attr, key, value) for ``B.attr[k] = v`` as a statement, else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
        return None
    t = stmt.targets[0]
    if not (isinstance(t, gast.Subscript) and isinstance(t.value, gast.Attribute) and
            isinstance(t.value.value, gast.Name) and not isinstance(t.slice, gast.Slice)):
        return None
    return t.value.value.id, t.value.attr, t.slice, stmt.value


def _list_changes(tree, holds) -> dict:
    """(base, attr) -> "fresh" | "kept" | "kept_dict": the lists held in attributes that
    the function appends to (`self.cache.append(z)`), and the dicts it stores into by key
    (`self.cache["z"] = z`), and otherwise only reads by item, by length or by iterating --
    no second name for the container, no other write into it. "fresh": the function
    assigns the attribute at its top level before the first change (a list made in this
    call: the changes may make new lists); "kept": it never assigns it and the object holds
    a list now (`holds(base, attr)` is list; a list kept across calls: Python's list itself
    is changed, and the function reads the changed one by a local); "kept_dict": the same
    for a dict the object keeps across calls (a layer's cache of its forward values)."""
    changes: dict = {}
    stores: dict = {}
    for node in _walk(tree):
        found = _list_change(node)
        if found is not None:
            changes.setdefault(found[:2], []).append(node.value.func.value)
        found = _dict_store(node)
        if found is not None:
            stores.setdefault(found[:2], []).append(node.targets[0])
        found = dict_update(node)
        if found is not None:
            stores.setdefault(found[:2], []).append(node.value.func)
    if not changes and not stores:
        return {}
    stored_by_key = {id(t) for ts in stores.values() for t in ts}
    allowed = {id(a) for uses in changes.values() for a in uses} | {
        id(t.value) for ts in stores.values() for t in ts}
    for node in _walk(tree):  # a dict's reads: `d.get(k)`, `d.items()`, `k in d`
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr in ("get", "keys", "values", "items"):
            allowed.add(id(node.func.value))
        elif isinstance(node, gast.Compare) and all(isinstance(o, (gast.In, gast.NotIn))
                                                     for o in node.ops):
            allowed.update(id(c) for c in node.comparators)
    for node in _walk(tree):  # the reads that keep no second name for the list
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load):
            allowed.add(id(node.value))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id == "len" and len(node.args) == 1:
            allowed.add(id(node.args[0]))
        elif isinstance(node, gast.Call) and _reads_only(node.func):
            # (`sum(self.log)`, `np.array(self.hist)`: read item by item, no second name)
            allowed.update(id(a) for a in node.args)
        elif isinstance(node, (gast.For, gast.comprehension)):
            allowed.add(id(node.iter))
    stored = _stores(tree)
    out = {}
    for key in [*changes, *(k for k in stores if k not in changes)]:
        uses = [n for n in _walk(tree) if isinstance(n, gast.Attribute) and
                isinstance(n.value, gast.Name) and (n.value.id, n.attr) == key]
        if any(isinstance(n.ctx, gast.Load) and id(n) not in allowed for n in uses) or any(
                isinstance(n, gast.Subscript) and not isinstance(n.ctx, gast.Load) and
                isinstance(n.value, gast.Attribute) and isinstance(n.value.value, gast.Name)
                and (n.value.value.id, n.value.attr) == key and id(n) not in stored_by_key
                for n in _walk(tree)):
            continue
        if key in stores:  # (stores by key: into a dict the object keeps)
            if key not in changes and key not in stored and holds(*key) is dict:
                out[key] = "kept_dict"
        elif key in stored:
            if _assigned_before_change(tree, key):
                out[key] = "fresh"
        elif holds(*key) is list:
            out[key] = "kept"
    return out


_READING_BUILTINS = frozenset({"sum", "max", "min", "list", "tuple", "sorted", "any", "all",
                               "enumerate", "zip", "reversed"})
_READING_NUMPY = frozenset({"sum", "mean", "array", "stack", "concatenate", "vstack",
                            "hstack", "max", "min", "prod"})


def _reads_only(func) -> bool:
    """Is `func` a builtin or a numpy function (spelt `np.` / `numpy.`) that reads its
    list arguments item by item and keeps no name for them (its result a new value)?"""
    if isinstance(func, gast.Name):
        return func.id in _READING_BUILTINS
    return isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
        func.value.id in ("np", "numpy") and func.attr in _READING_NUMPY


def _assigned_before_change(tree, key) -> bool:
    """Does a top-level statement assign ``B.attr`` before any statement changes it?"""
    for stmt in tree.body:
        if isinstance(stmt, gast.Assign) and any(
                isinstance(t, gast.Attribute) and isinstance(t.value, gast.Name) and
                (t.value.id, t.attr) == key for t in stmt.targets):
            return True
        if any((_list_change(n) or (None, None))[:2] == key for n in _walk_stmt(stmt)):
            return False
    return False


def _walk(tree):
    """The function's own nodes: not nested functions, lambdas or classes (a nested def's
    `B.attr += 1` is its own state, carried out of it as a callee's: state.py)."""
    todo = [n for n in tree.body if not isinstance(n, (gast.FunctionDef, gast.ClassDef))]
    while todo:
        node = todo.pop()
        yield node
        for child in gast.iter_child_nodes(node):
            if not isinstance(child, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
                todo.append(child)


def container_aliases(tree, is_object) -> None:
    """``c = self.cache`` at the top level, then ``c["x"] = x`` / ``c.append(x)``: `c` is
    another spelling of ``self.cache`` (the same object; the function never rebinds either):
    each use of `c` reads ``self.cache`` instead, so the changes made through it are the
    object's (`_list_changes`) -- where Python's `c` and the object share one container.
    Only where `is_object(name)` says `self` names a user's object (``r = x.T`` of an array
    is a view, aliasing.py's)."""
    params = {a.id for a in tree.args.args if isinstance(a, gast.Name)}
    binds = {}
    for n in _walk(tree):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            binds[n.id] = binds.get(n.id, 0) + 1
    attrs, rebound = _stores(tree), _rebound(tree)
    inner = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)} - \
        {n.id for n in _walk(tree) if isinstance(n, gast.Name)}
    for stmt in list(tree.body):
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name) and
                isinstance(stmt.value, gast.Attribute) and
                isinstance(stmt.value.value, gast.Name)):
            continue
        c, key = stmt.targets[0].id, (stmt.value.value.id, stmt.value.attr)
        if binds.get(c) != 1 or c in params or c in inner or key in attrs or \
                not is_object(key[0]) or \
                key[0] in rebound or any(isinstance(n, gast.Name) and n.id == c for x in (
                    stmt.value,) for n in gast.walk(x)):
            continue
        changed = [n for n in _walk(tree) if (
            isinstance(n, gast.Subscript) and not isinstance(n.ctx, gast.Load) and
            isinstance(n.value, gast.Name) and n.value.id == c) or (
            isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and
            n.func.attr in _LIST_CHANGES and isinstance(n.func.value, gast.Name) and
            n.func.value.id == c)]
        if not changed:
            continue
        tree.body.remove(stmt)
        _Spell(c, key).visit(tree)


class _Spell(gast.NodeTransformer):
    """Each read of name `c` as the attribute `key` (``self.cache``)."""

    def __init__(self, c: str, key):
        self.c, self.key = c, key

    def visit_FunctionDef(self, node):
        node.body = [self.visit(x) for x in node.body]
        return node

    def visit_Name(self, node):
        if node.id == self.c and isinstance(node.ctx, gast.Load):
            return gast.copy_location(gast.Attribute(
                value=_name(self.key[0], gast.Load()), attr=self.key[1], ctx=gast.Load()), node)
        return node


def _rebound(tree) -> set:
    return {n.id for n in _walk(tree) if isinstance(n, gast.Name) and
            isinstance(n.ctx, gast.Store)}


def _name(id_, ctx):
    return gast.Name(id=id_, ctx=ctx, annotation=None, type_comment=None)


class _Carry(gast.NodeTransformer):
    def __init__(self, carried: dict, changes: dict | None = None, taken: set | None = None):
        self.carried = carried  # (base, attr) -> local name
        self.changes = changes or {}  # (base, attr) -> "fresh" | "kept" (`_list_changes`)
        self.taken = taken if taken is not None else set()

    def _visit_list_change(self, node):
        """`B.attr.append(v)` on a list the function carries by a local: the local is the
        list with v added (`list_concat`); a list made in this call ("fresh") is stored as
        the new list, a list kept across calls ("kept") is changed as Python changes it, the
        item bound to a name first so that both hold the same object."""
        found = _list_change(node)
        if found is None or (found[0], found[1]) not in self.changes:
            return self.generic_visit(node)
        base, attr, how, items = found
        local = self.carried[(base, attr)]
        items = self.visit(items)
        if self.changes[(base, attr)] == "fresh":
            target = gast.Attribute(value=_name(base, gast.Load()), attr=attr,
                                    ctx=gast.Store())
            grown = gast.Call(func=_name(LIST_CONCAT, gast.Load()),
                              args=[_name(local, gast.Load()), items], keywords=[])
            return self.visit_Assign(gast.copy_location(gast.Assign(
                targets=[target], value=grown, type_comment=None), node))
        out, names = [], []
        for item in items.elts:
            held = fresh(f"{attr}_item", self.taken)
            self.taken.add(held)
            out.append(gast.Assign(targets=[_name(held, gast.Store())], value=item,
                                   type_comment=None))
            names.append(held)
        grown = gast.Call(func=_name(LIST_CONCAT, gast.Load()), args=[
            _name(local, gast.Load()),
            gast.List(elts=[_name(n, gast.Load()) for n in names], ctx=gast.Load())],
            keywords=[])
        out.append(gast.Assign(targets=[_name(local, gast.Store())], value=grown,
                               type_comment=None))
        # (the object's own list, changed in place: read from the object as the code runs,
        # not the local)
        out += own_change(_name(base, gast.Load()), attr, "append",
                          [[_name(held, gast.Load())] for held in names], self.taken)
        for x in out:
            gast.copy_location(x, node)
        return out

    def _local(self, node):
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name):
            return self.carried.get((node.value.id, node.attr))
        return None

    def visit_FunctionDef(self, node):  # (nested: its own function, not ours)
        return node

    visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Attribute(self, node):
        local = self._local(node)
        if local is not None and isinstance(node.ctx, gast.Load):
            return gast.copy_location(_name(local, gast.Load()), node)
        return self.generic_visit(node)

    def visit_Expr(self, node):
        found = dict_update(node)
        if found is not None and self.changes.get(found[:2]) == "kept_dict":
            return [x for k, v in found[2]
                    for x in self._kept_store(node, found[0], found[1], k, v)]
        return self._visit_list_change(node)

    def visit_Assign(self, node):
        found = _dict_store(node)
        if found is not None and self.changes.get(found[:2]) == "kept_dict":
            return self._kept_store(node, *found)
        if len(node.targets) == 1 and self._local(node.targets[0]) is not None:
            target = node.targets[0]
            local = self._local(target)
            node.value = self.visit(node.value)
            keep = gast.copy_location(gast.Assign(targets=[_name(local, gast.Store())],
                                                  value=node.value, type_comment=None), node)
            store = gast.copy_location(gast.Assign(
                targets=[target], value=_name(local, gast.Load()), type_comment=None), node)
            return [keep, store]
        if len(node.targets) == 1:
            return self._written_through(node)
        return self.generic_visit(node)

    def _written_through(self, node):
        """`B.attr[i] = v` / `B.attr[i] += v` of an attribute carried by a local: the write
        goes to the local (which srcad's code may copy first), and the object is given the
        written value again after it -- Python's object holds the array written.
        (analysis/refusals.check_stored_then_written refuses where another holder of that
        array would miss the write.)"""
        target = node.targets[0] if isinstance(node, gast.Assign) else node.target
        root = target
        while isinstance(root, gast.Subscript):
            root = root.value
        local = self._local(root) if root is not target else None
        node = self.generic_visit(node)
        if local is None or self.changes.get((root.value.id, root.attr)) is not None:
            return node
        store = gast.Assign(targets=[gast.Attribute(value=_name(root.value.id, gast.Load()),
                                                    attr=root.attr, ctx=gast.Store())],
                            value=_name(local, gast.Load()), type_comment=None)
        return [node, gast.copy_location(store, node)]

    def _kept_store(self, node, base, attr, key, value):
        """`B.attr[k] = v` into a dict the object keeps across calls (`kept_store`)."""
        out = kept_store(self.carried[(base, attr)], _name(base, gast.Load()), attr,
                         self.visit(key), self.visit(value), self.taken)
        for x in out:
            gast.copy_location(x, node)
        return out

    def visit_AnnAssign(self, node):
        if node.value is not None and self._local(node.target) is not None:
            return self.visit_Assign(gast.copy_location(gast.Assign(
                targets=[node.target], value=node.value, type_comment=None), node))
        return self.generic_visit(node)

    def visit_AugAssign(self, node):
        local = self._local(node.target)
        if local is None:
            return self._written_through(node)
        value = gast.copy_location(gast.BinOp(left=_name(local, gast.Load()), op=node.op,
                                              right=self.visit(node.value)), node)
        return self.visit_Assign(gast.copy_location(gast.Assign(
            targets=[node.target], value=value, type_comment=None), node))


class GlobalNames:
    """A module's globals as attributes: ``ns.step`` reads and ``ns.step = v`` sets the
    global `step` in the dict (`declared_names`)."""

    def __init__(self, namespace: dict):
        object.__setattr__(self, "_namespace", namespace)

    def __getattr__(self, name):
        try:
            return self._namespace[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self._namespace[name] = value

    def __repr__(self):
        return f"<globals of {self._namespace.get('__name__', '?')}>"


class ClosureNames:
    """A function's closure cells as attributes: ``ns.count`` reads and ``ns.count = v`` sets
    what the cell holds, as ``nonlocal count; count = v`` does (`declared_names`)."""

    def __init__(self, cells: dict):
        object.__setattr__(self, "_cells", cells)

    def __getattr__(self, name):
        try:
            return self._cells[name].cell_contents
        except (KeyError, ValueError):  # (no such cell, or an empty one)
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self._cells[name].cell_contents = value

    def __repr__(self):
        return f"<closure cells {sorted(self._cells)}>"


class _Declared(gast.NodeTransformer):
    """Drop `global` / `nonlocal` statements; each use of a declared name in the function's
    own scope becomes an attribute of its namespace object's name."""

    def __init__(self, bases: dict):
        self.bases = bases  # declared name -> the name bound to its namespace object

    def visit_FunctionDef(self, node):  # (nested: its own scope)
        return node

    visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Global(self, node):
        return None

    visit_Nonlocal = visit_Global

    def visit_Name(self, node):
        base = self.bases.get(node.id)
        if base is None:
            return node
        return gast.copy_location(gast.Attribute(value=_name(base, gast.Load()), attr=node.id,
                                                 ctx=node.ctx), node)


def declared_names(pf, taken: set) -> None:
    """``global NAME`` / ``nonlocal NAME`` in `pf`'s function, as the module docstring says
    (then `carry_attribute_state` carries the names it assigns). A declared name that the
    function only reads is read as any global or closure name is. Refused at their line: a
    `nonlocal` of a variable of a function srcad lifted this one out of (it has no cell), a
    `del` of a declared name, and a nested function reading a name this one assigns (it
    would read the value from before the call)."""
    tree = pf.tree
    declared = {}  # name -> (kind, statement)
    for node in _walk(gast.Module(body=[s for s in tree.body if not isinstance(
            s, (gast.FunctionDef, gast.ClassDef))], type_ignores=[])):
        # (a nested def in the body: its own `nonlocal`s are closures.py's)
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            for n in node.names:
                declared[n] = (type(node), node)
    if not declared:
        return
    assigned = {n.id for n in _walk(tree) if isinstance(n, gast.Name) and
                not isinstance(n.ctx, gast.Load) and n.id in declared}
    bases = {}
    namespaces = {}
    for name in sorted(assigned):
        kind, stmt = declared[name]
        if kind is gast.Nonlocal and name not in pf.cells:
            raise pf.error(
                f"`nonlocal {name}` names a variable of the function around {pf.name}, which "
                f"srcad differentiates as one function with it: there is no cell to set", stmt,
                hint=f"return the new value from {pf.name} and assign `{name}` where it is "
                "called", cls=UnsupportedSyntaxError)
        what = "globals" if kind is gast.Global else "closure"
        if what not in namespaces:
            base = fresh(what, taken)
            taken.add(base)
            g = pf.fn.__globals__
            g = getattr(g, "_base", g)  # (a function made while the tape runs: its module's)
            pf.bound[base] = GlobalNames(g) if kind is gast.Global else ClosureNames(pf.cells)
            namespaces[what] = base
        bases[name] = namespaces[what]
    own = {id(n) for n in _walk(tree)}
    for node in gast.walk(tree):
        if not (isinstance(node, gast.Name) and node.id in bases):
            continue
        word = "global" if declared[node.id][0] is gast.Global else "nonlocal"
        if isinstance(node.ctx, gast.Del):
            raise pf.error(f"`del {node.id}` of a {word} name", node,
                           hint=f"assign `{node.id} = None` instead", cls=UnsupportedSyntaxError)
        if id(node) not in own:
            raise pf.error(
                f"a nested function or class uses `{node.id}`, which {pf.name} assigns as a "
                f"{word} name: srcad would give it the value from before the call", node,
                hint=f"pass `{node.id}` to it as an argument", cls=UnsupportedSyntaxError)
    _callees_leave_alone(pf, bases, declared)
    tree.body = [n for stmt in tree.body for n in _as_list(_Declared(bases).visit(stmt) or [])]
    gast.fix_missing_locations(tree)


def _callees_leave_alone(pf, bases: dict, declared: dict) -> None:
    """The function carries a declared name by a local from its start value on (read at
    entry): refused where a function it calls by name (or a method of an object the module
    holds) assigns that global too (the local would miss the change, silently) -- or reads
    it, itself or through functions of the module it calls: srcad reads a global a callee
    names as the module held it when the call began, so the callee would compute with the
    value from before the store, and no gradient would reach what was stored (zeros, before
    2026-12-05)."""
    assigned = {n for n in bases if declared[n][0] is gast.Global}
    if not assigned:
        return
    g = pf.fn.__globals__
    g = getattr(g, "_base", g)
    for node in _walk(pf.tree):
        if not isinstance(node, gast.Call):
            continue
        callee, spelled = _called(pf, node.func)
        code = getattr(callee, "__code__", None)
        if code is None or getattr(callee, "__globals__", None) is not g:
            continue  # (a function of another module reads its own module's names)
        stored = {i.argval for i in dis.get_instructions(code)
                  if i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL")}
        for name in sorted(stored & assigned):
            raise pf.error(
                f"{spelled} assigns the global `{name}` too, which {pf.name} assigns: "
                f"srcad carries `{name}` in {pf.name} by a local, which would miss the "
                "change", node, hint=f"return the new value from {spelled} and "
                f"assign `{name}` in {pf.name} only", cls=UnsupportedSyntaxError)
        read = _globals_read(callee, g, assigned)
        if read is not None:
            name, where = read
            raise pf.error(
                f"{where} reads the global `{name}`, which {pf.name} assigns: srcad would "
                f"give {where} the value `{name}` had before the call, and no gradient would "
                f"reach what {pf.name} stores there", node,
                hint=f"pass `{name}` to {spelled} as an argument", cls=UnsupportedSyntaxError)


def _called(pf, func):
    """(the callable a call's `func` names, as it is spelled): a module function by its
    name, a method of an object the module holds (`model.forward`), a callable object's
    `__call__`; else (None, ...)."""
    obj = resolve_dotted(pf, func, _local_names(pf))
    obj = getattr(obj, "__func__", obj)  # (a bound method: its function)
    if not isinstance(obj, types.FunctionType) and is_user_object(obj):
        obj = getattr(type(obj), "__call__", None)  # (a callable object: its __call__)
    return (None if obj is UNRESOLVED else obj), _spelled(func)


def _local_names(pf) -> set:
    """The names `pf`'s function binds itself (a call through one is not the module's)."""
    return {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name) and
            not isinstance(n.ctx, gast.Load)} | set(pf.params)


def _spelled(func) -> str:
    """`a.b.c` as written."""
    parts = []
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    return ".".join([getattr(func, "id", "?")] + list(reversed(parts)))


def _globals_read(fn, g, names: set, depth: int = 4, seen=None):
    """(a name of `names` that `fn` -- or a function of module `g` it calls by name, to
    `depth` -- reads as a global, the function's name), or None."""
    seen = set() if seen is None else seen
    code = getattr(fn, "__code__", None)
    if code is None or id(code) in seen or depth < 0:
        return None
    seen.add(id(code))
    loads = set()
    for c in [code, *_inner_codes(code)]:
        loads |= {i.argval for i in dis.get_instructions(c) if i.opname == "LOAD_GLOBAL"}
    hit = sorted(loads & names)
    if hit:
        return hit[0], fn.__name__
    for name in sorted(loads):
        inner = g.get(name)
        if isinstance(inner, types.FunctionType) and inner.__globals__ is g:
            found = _globals_read(inner, g, names, depth - 1, seen)
            if found is not None:
                return found
    return None


def _inner_codes(code):
    """The code objects nested in `code` (its comprehensions, lambdas, nested defs)."""
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield c
            yield from _inner_codes(c)


def carry_attribute_state(tree: gast.FunctionDef, taken: set, carry_out: bool = False,
                          holds=lambda base, attr: None) -> dict:
    """Rewrite `tree` as the module docstring says; returns (base, attr) -> local name.
    `carry_out` (a callee, whose caller reads what it leaves on objects: state.py): every
    local holds the attribute's value at the end, on every path -- so one stored only in a
    branch or a loop starts from the object's value at entry too."""
    rebound = _rebound(tree)
    _lists_extended(tree, holds, rebound)
    changes = {k: how for k, how in _list_changes(tree, holds).items()
               if k[0] not in rebound}
    stores = [k for k in _stores(tree) if k[0] not in rebound]
    stores += [k for k in changes if k not in stores]
    if not stores:
        return {}
    carried = {}
    for base, attr in sorted(stores):
        local = fresh(f"{base}_{attr}", taken)
        taken.add(local)
        carried[(base, attr)] = local
    tree.body = [n for stmt in tree.body for n in _as_list(
        _Carry(carried, changes, taken).visit(stmt))]
    # a read that may come first starts from the object's value at entry (a constant)
    inits = []
    for (base, attr), local in carried.items():
        read_first = _may_read_before_store(tree, local)
        if read_first or (carry_out and not _stored_at_top(tree, local)):
            get = gast.Call(func=_name("getattr", gast.Load()), args=[
                _name(base, gast.Load()), gast.Constant(attr, None),
                gast.Constant(None, None)], keywords=[])
            if changes.get((base, attr)) in ("kept", "kept_dict"):  # (its own copy: the
                # object's list or dict itself is changed as the code runs)
                kind = "list" if changes[(base, attr)] == "kept" else DICT_COPY
                get = gast.Call(func=_name(kind, gast.Load()), args=[get], keywords=[])
            inits.append(gast.Assign(targets=[_name(local, gast.Store())], value=get,
                                     type_comment=None))
    for stmt in inits:
        gast.copy_location(stmt, tree.body[0])
    tree.body = inits + tree.body
    gast.fix_missing_locations(tree)
    return carried


def _as_list(x):
    return x if isinstance(x, list) else [x]


def _lists_extended(tree, holds, rebound: set) -> None:
    """``B.attr += v`` where the object holds a list and the function never assigns
    ``B.attr`` otherwise: ``B.attr.extend(v)`` -- what Python's `+=` of a list does (the very
    list extended in place, then stored back), so that another holder of the object's list
    sees the items (the object's list kept across calls, changed in place: `_list_changes`).
    Before the session of 2026-12-07, fourteenth, the attribute was given a new list, and a
    name or a container holding the old one missed the items -- silently."""
    assigned = {(t.value.id, t.attr) for n in _walk(tree) if isinstance(n, gast.Assign)
                for t in n.targets if isinstance(t, gast.Attribute) and
                isinstance(t.value, gast.Name)}
    for node in [tree, *_walk(tree)]:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                t = getattr(stmt, "target", None)
                if not (isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add)
                        and isinstance(t, gast.Attribute) and isinstance(t.value, gast.Name)):
                    continue
                key = (t.value.id, t.attr)
                if key in assigned or key[0] in rebound or holds(*key) is not list:
                    continue
                call = gast.Call(func=gast.Attribute(value=gast.Attribute(
                    value=_name(key[0], gast.Load()), attr=key[1], ctx=gast.Load()),
                    attr="extend", ctx=gast.Load()), args=[stmt.value], keywords=[])
                block[i] = gast.copy_location(gast.Expr(value=call), stmt)


def _stored_at_top(tree, local: str) -> bool:
    """Does a top-level statement of the function (not one in a branch or a loop) store
    `local` before any early `return`? (Then it holds a value at every return.)"""
    for stmt in tree.body:
        if isinstance(stmt, gast.Assign) and any(
                isinstance(t, gast.Name) and t.id == local for t in stmt.targets):
            return True
        if any(isinstance(n, gast.Return) for n in _walk_stmt(stmt)):
            return False
    return False


def _walk_stmt(stmt):
    yield from _walk(gast.Module(body=[stmt], type_ignores=[]))


def _may_read_before_store(tree, local: str) -> bool:
    """Is there a read of `local` not preceded, in straight-line top-level order, by a store
    to it? (Conservative: a store inside a loop or branch does not count as before.)"""
    for stmt in tree.body:
        reads = any(isinstance(n, gast.Name) and n.id == local and isinstance(n.ctx, gast.Load)
                    for n in gast.walk(stmt))
        store_here = isinstance(stmt, gast.Assign) and any(
            isinstance(t, gast.Name) and t.id == local for t in stmt.targets)
        if store_here:
            return reads  # (`local = local + v` reads first)
        if reads:
            return True
    return False


def named_object(pf, base: str):
    """The object name `base` holds in every call of the function (one its caller always
    passes, a free name the module binds), None where that is not known."""
    stored = {x.id for x in gast.walk(pf.tree) if isinstance(x, gast.Name)
              and isinstance(x.ctx, gast.Store)}
    if base in pf.known:
        return pf.known[base]
    if base in pf.constants:
        return pf.constants[base]
    if base in pf.params or base in stored:
        return None
    try:
        return pf.resolve(base)
    except Exception:  # (a name the module does not hold: the code says so later)
        return None


def attribute_type(pf, base: str, attr: str):
    """The type of what `base.attr` holds now (base: a parameter its caller always passes one
    object, or a free name), None where that is not known (attrstate.py carries the changes
    of a list or a dict an object keeps across calls by a local)."""
    obj = named_object(pf, base)
    own = getattr(obj, "__dict__", None)
    if own is not None and attr not in own and attr != "__dict__":  # (a class's attribute,
        # which every instance shares and methods may read by the class's name: not the
        # object's own -- its `__dict__` is)
        return None
    return type(getattr(obj, attr, None)) if is_user_object(obj) else None
