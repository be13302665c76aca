"""Lower comprehensions, generator expressions and list building to loops (gast -> gast).

Input: a fenced gast `FunctionDef` whose nested functions are already lifted (closures.py).
Output: the same function with
  * ``[e for t in it if c]`` (list, set and dict comprehensions, generator expressions) as a
    loop that builds the value: ``acc = []`` / ``for t in it: if c: acc = list_append(acc, e)``
    (dicts: ``acc = dict_set(acc, k, v)``; sets: a list, then ``set(acc)``);
  * ``sum(...)``, ``min(...)``, ``max(...)`` of one iterable as an accumulator loop (Python's
    own order: ``sum`` starts from 0 and adds left to right, ``max`` keeps the first of ties),
    ``sum([a, b])`` as ``0 + a + b``; ``list(gen)`` / ``tuple(gen)`` as the list;
  * ``lst.append(v)`` / ``lst.extend(vs)`` / ``lst += [...]`` on a list the function makes
    (and never aliases) as ``lst = list_append(lst, v)``: a new list each time, which the
    transforms differentiate like any value (runtime_python.py); ``lst.insert(i, v)`` as
    ``lst[:i] + [v] + lst[i:]``, and ``a + b`` where a list display or such a list is an
    operand as ``list_concat(a, b)``; a list's name given another kind of value at the top
    level (``out = np.array(out)``) is a new name from there on;
  * ``for k, v in d.items()`` as ``for k in dict_keys(d): v = d[k]`` (``.values()``, ``.keys()``
    likewise), and a tuple loop target as one name unpacked in the body.
The loop variables of a comprehension are renamed when the function uses those names
elsewhere (a comprehension has its own scope). A comprehension is computed just before the
statement it is part of; where Python might not evaluate it at all (an ``x if c else y``
branch, after ``and`` / ``or``, an assert message, a while test) srcad refuses it.

Before/after:
    ys = [np.tanh(w * x) for w in ws]       ys = []
                                            for w in ws:
                                                ys = list_append(ys, np.tanh(w * x))
    s = sum(np.sum(y) for y in ys)          s = 0
                                            for y in ys:
                                                s = s + np.sum(y)
"""

from __future__ import annotations

import builtins
import collections
import copy
import inspect
import operator
from collections import Counter

import gast
import numpy as np

from .. import pyfuncs, runtime_at, runtime_python, runtime_signal
from ..checkpoint import checkpoint
from ..errors import DictUnknownError, SharingUnknownError, UnsupportedSyntaxError
from ..naming import fresh
from . import pylevel
from .attrstate import attribute_type
from .closures import PARTIAL
from .opaque import MUTATING
from .parse import EACH, UNRESOLVED, resolve_dotted
from .pyforms import _evaluated_maybe_or_often
from .objcomps import folded_object_comprehension
from .pylevel import Substitute, _assign, _call, _comp, _for, _name, operand_slots, slot_get, \
    slot_put
from .walrus import continues, hoist_in_statement

# internal names the rewritten tree calls; ParsedFunction.resolve finds them in its closure
LIST_APPEND = "__srcad_list_append"
DICT_SET = "__srcad_dict_set"
DICT_KEYS = "__srcad_dict_keys"
DICT_GET = "__srcad_dict_get"
LIST_CONCAT = "__srcad_list_concat"
LIST_REPEAT = "__srcad_list_repeat"
DICT_COPY = "__srcad_dict_copy"
# builtins whose result `dict(...)` takes as (key, value) pairs, never as a mapping
_MAKE_PAIRS = ("zip", "sorted", "reversed", "enumerate", "map", "filter", "list")
DICT_WITHOUT = "__srcad_dict_without"
OBJECT_ATTRIBUTE = "__srcad_object_attribute"
ARRAY_SORT = "__srcad_sort"
ARRAY_PARTITION = "__srcad_partition"
PUT_INDEX = "__srcad_put_index"
PUT_TAKE = "__srcad_put_take"
DIAGONAL_INDEX = "__srcad_diagonal_index"
WHERE = "__srcad_where"
RAVEL = "__srcad_ravel"
ALONG_AXIS_INDEX = "__srcad_along_axis_index"
MASK_INDEX = "__srcad_mask_index"
TAKES = {"place": "__srcad_place_take", "putmask": "__srcad_putmask_take"}
INTERNAL = {LIST_APPEND: runtime_python.list_append, LIST_CONCAT: runtime_python.list_concat,
            LIST_REPEAT: runtime_python.list_repeat,
            OBJECT_ATTRIBUTE: runtime_python.object_attribute, DICT_COPY: runtime_python.dict_copy,
            ARRAY_SORT: np.sort, ARRAY_PARTITION: np.partition, DICT_SET: runtime_python.dict_set,
            DICT_KEYS: runtime_python.dict_keys, DICT_GET: runtime_python.dict_get,
            DICT_WITHOUT: runtime_python.dict_without,
            PUT_INDEX: runtime_signal.put_index, DIAGONAL_INDEX: runtime_signal.diagonal_index,
            WHERE: np.where, RAVEL: np.ravel, pylevel.SORTED_BY: pyfuncs.sorted_by,
            pylevel.SHAPE: np.shape,
            pylevel.TOLIST: pyfuncs.tolist, ALONG_AXIS_INDEX: runtime_signal.along_axis_index,
            MASK_INDEX: runtime_signal.mask_index, TAKES["place"]: runtime_signal.place_take,
            TAKES["putmask"]: runtime_signal.putmask_take, PUT_TAKE: runtime_signal.put_take}
# ufunc.at's value forms (np.add.at -> add_at), by the name the lowering spells
AT_NAMES = {form: f"__srcad_{form.__name__}" for form in runtime_at.AT_FORMS.values()}
INTERNAL.update({name: form for form, name in AT_NAMES.items()})

_COMPS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def _put_method(indices, values, mode="raise"):
    """ndarray.put's parameters."""


_PUT_METHOD = inspect.signature(_put_method)


def _copies_items(comp) -> bool:
    """Is `comp` `[w for w in ws]` (one plain loop, no test, its item the loop's name)?"""
    gens = comp.generators
    return (len(gens) == 1 and not gens[0].ifs and not gens[0].is_async
            and isinstance(gens[0].target, gast.Name) and isinstance(comp.elt, gast.Name)
            and comp.elt.id == gens[0].target.id)


def _copies_entries(comp) -> bool:
    """Is `comp` `{k: v for k, v in d.items()}` (one plain loop over a name's items)?"""
    gens = comp.generators
    if len(gens) != 1 or gens[0].ifs or gens[0].is_async:
        return False
    t, it = gens[0].target, gens[0].iter
    return (isinstance(t, gast.Tuple) and len(t.elts) == 2
            and all(isinstance(x, gast.Name) for x in t.elts)
            and isinstance(comp.key, gast.Name) and comp.key.id == t.elts[0].id
            and isinstance(comp.value, gast.Name) and comp.value.id == t.elts[1].id
            and isinstance(it, gast.Call) and not it.args and not it.keywords
            and isinstance(it.func, gast.Attribute) and it.func.attr == "items"
            and isinstance(it.func.value, gast.Name))


def _computes(e) -> bool:
    """Does evaluating `e` compute something (a call, an operator, an index) -- as opposed
    to reading a name, a constant, a dotted name or making a lambda?"""
    while isinstance(e, (gast.Attribute, gast.Starred)):
        e = e.value
    return not isinstance(e, (gast.Name, gast.Constant, gast.Lambda))


def _located(nodes, at):
    """Give the nodes srcad made the location of the user's statement `at`."""
    for n in nodes:
        for sub in gast.walk(n):
            if isinstance(sub, (gast.stmt, gast.expr)) and not hasattr(sub, "lineno"):
                sub.lineno = getattr(at, "lineno", 1)
                sub.col_offset = getattr(at, "col_offset", 0)
                sub.end_lineno = getattr(at, "end_lineno", sub.lineno)
                sub.end_col_offset = getattr(at, "end_col_offset", 0)
    return nodes


def _plain_store(s):
    """(container, index) of ``C[k] = value`` with k made of names and literals, else None."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
            isinstance(s.targets[0], gast.Subscript) and
            isinstance(s.targets[0].value, gast.Name)):
        return None
    index = s.targets[0].slice
    if not all(isinstance(n, (gast.Name, gast.Constant, gast.Subscript, gast.Tuple,
                              gast.Load, gast.expr_context)) or isinstance(n, gast.Slice)
               for n in gast.walk(index)):
        return None
    return s.targets[0].value.id, index


def _fills_item(s, container: str, index) -> bool:
    """Is `s` ``C[k][...] = v`` (or ``op=``) into the item just stored, reading neither C nor
    anything but what it writes?"""
    target = s.targets[0] if isinstance(s, gast.Assign) and len(s.targets) == 1 else (
        s.target if isinstance(s, gast.AugAssign) else None)
    if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Subscript)
            and isinstance(target.value.value, gast.Name) and
            target.value.value.id == container and
            gast.dump(target.value.slice) == gast.dump(index)):
        return False
    return not any(isinstance(n, gast.Name) and n.id == container
                   for part in (s.value, target.slice) for n in gast.walk(part))


def _surely_advanced(index) -> bool:
    """Is this subscript's index numpy's advanced indexing whatever the names in it hold (a
    list display, a comparison -- a mask --, `~m`, `a & b`), so that it gives a copy?"""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return any(isinstance(p, (gast.List, gast.Compare)) or (
        isinstance(p, gast.UnaryOp) and isinstance(p.op, gast.Invert)) or (
        isinstance(p, gast.BinOp) and isinstance(p.op, (gast.BitAnd, gast.BitOr)) and
        isinstance(p.left, gast.Compare)) for p in parts)


def _displays(e) -> set:
    """The ids of `e` and the displays nested in it through displays only (`(h, (c, x))`)."""
    out, stack = set(), [e]
    while stack:
        n = stack.pop()
        if isinstance(n, (gast.Tuple, gast.List, gast.Set, gast.Dict)):
            out.add(id(n))
            stack.extend(n.values if isinstance(n, gast.Dict) else n.elts)
    return out


def _changed_in_place(stmt) -> set:
    """Names `stmt` may change the object of in place, or rebind: a method called on them
    (`lst.append(v)`), `lst += ...`, `lst[i] = v`, `del lst[i]`, any store of the name."""
    out = set()
    for n in gast.walk(stmt):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                isinstance(n.func.value, gast.Name):
            out.add(n.func.value.id)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            out.add(n.target.id)
        elif isinstance(n, gast.Subscript) and isinstance(n.ctx, (gast.Store, gast.Del)) and \
                isinstance(n.value, gast.Name):
            out.add(n.value.id)
        elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            out.add(n.id)
    return out


def _fresh_list(v) -> bool:
    """A list display, a list comprehension or `list(...)`: a new list."""
    return isinstance(v, (gast.List, gast.ListComp)) or (
        isinstance(v, gast.Call) and isinstance(v.func, gast.Name) and v.func.id == "list")


def _names_in(node) -> set:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}


def _made_afresh(stmt, name: str) -> bool:
    """Does `stmt` bind `name` to a new list and read it nowhere (`lst = []`, `lst, i = [],
    0`)?"""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
        return False
    t, v = stmt.targets[0], stmt.value
    if isinstance(t, gast.Name):
        return t.id == name and _fresh_list(v) and name not in _names_in(v)
    if isinstance(t, gast.Tuple) and isinstance(v, gast.Tuple) and \
            len(t.elts) == len(v.elts) and name not in _names_in(v):
        return any(isinstance(x, gast.Name) and x.id == name and _fresh_list(y)
                   for x, y in zip(t.elts, v.elts))
    return False


def _handed_over(tree, assign, name: str) -> bool:
    """Is `b = name` (the statement `assign`) the list's last use: `name` read by no later
    statement of its block, nor after any block around it, and every loop around it binding
    `name` to a new list before its body reads it (`presents = []; ...; past = presents` in
    a loop, a tokenizer's `new_ids = []; ...; ids = new_ids`)? Then the list has one holder
    at a time: its appends can still be rebuilt as values."""
    parents: dict = {}
    for node in gast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                for i, st in enumerate(block):
                    parents[id(st)] = (node, block, i)
    stmt = assign
    while id(stmt) in parents:
        node, block, i = parents[id(stmt)]
        if any(name in _names_in(later) for later in block[i + 1:]):
            return False
        if isinstance(node, (gast.For, gast.While)):
            first = next((st for st in node.body if name in _names_in(st)), None)
            if first is None or not _made_afresh(first, name) or \
                    any(name in _names_in(st) for st in node.orelse) or \
                    (isinstance(node, gast.While) and name in _names_in(node.test)):
                return False
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
            return node is tree  # (the function's own body: nothing after it)
        elif not isinstance(node, gast.If):
            return False  # (with, try: left as before)
        stmt = node
    return False


# methods of a list that read it (a dict of lists' items read where they stand)
_LIST_READS = ("index", "count", "copy", "__len__")


def _changes_any(stmt) -> bool:
    """May `stmt` change some object in place: a method that does (`.append`, `.update`,
    ...) on any receiver, a subscript store or delete, an augmented assignment?"""
    return any((isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and
                n.func.attr in MUTATING) or isinstance(n, gast.AugAssign) or
               (isinstance(n, gast.Subscript) and isinstance(n.ctx, (gast.Store, gast.Del)))
               for n in gast.walk(stmt))


class _Lowerer:
    def __init__(self, pf, taken: set):
        self.pf = pf
        self.taken = taken
        # names used outside every comprehension's own scope (its loop variables may clash)
        scoped = set()
        for node in gast.walk(pf.tree):
            if isinstance(node, _COMPS):
                first = {id(n) for n in gast.walk(node.generators[0].iter)}
                scoped |= {id(n) for n in gast.walk(node) if id(n) not in first}
        self.counts = Counter(n.id for n in gast.walk(pf.tree)
                              if isinstance(n, gast.Name) and id(n) not in scoped)
        self.params = {a.id for a in pf.tree.args.posonlyargs + pf.tree.args.args}
        self.lists = self._local_lists()
        self.tuples = self._local_tuples()
        self.dicts = self._local_dicts()
        self.list_dicts = self._dicts_of_lists()
        # where the call's arguments hold dicts (parameters never rebound, their items by
        # constant key or index, every item: parse.dict_paths_of): `for k in d` walks the keys
        self.stores = Counter(n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
                              and isinstance(n.ctx, gast.Store))
        self.dict_paths = {f for f in pf.dict_paths if f[0] not in self.stores}
        self.item_paths: dict = {}  # loop variable -> the path of the items it runs over
        self.held_maps = {id(n.value) for n in gast.walk(pf.tree) if isinstance(n, gast.Assign)
                          and isinstance(n.value, gast.Call)}  # (m = map(f, xs): as written)

    def error(self, what, node, hint):
        return self.pf.error(what, node, hint=hint, cls=UnsupportedSyntaxError)

    def fresh(self, base):
        return fresh(base, self.taken)

    def builtin(self, func, name) -> bool:
        return (isinstance(func, gast.Name) and func.id == name and func.id not in self.counts_store
                and self.pf.resolve(name) is getattr(builtins, name))

    # -- lists the function makes --------------------------------------------------------------
    def _local_lists(self) -> set:
        """Names assigned only lists the function makes ([...], a comprehension, list(...)) and
        never aliased (``b = lst``, ``(lst, 1)``): their appends can be rebuilt as values."""
        made, other, not_list = set(), set(), set()
        self.counts_store = set()
        # a display that is returned (`return h, cache`, `return h, (cache, x)`) gives the
        # list away as the function ends: no second name can change it afterwards
        returned = set()
        for n in gast.walk(self.pf.tree):
            if isinstance(n, gast.Return) and n.value is not None:
                returned |= _displays(n.value)
        # a display or a second name made at the top level after the last statement that may
        # change the list (`caches = (caches, x)` as a course's forward ends) holds the final
        # list: its appends before can still be rebuilt as values
        # (and after the last that changes any object in place: `d = {"a": lst}` then
        # `d["a"].append(v)` changes the list through the dict)
        top, last_change, last_any = {}, {}, -1
        for i, st in enumerate(self.pf.tree.body):
            for n in gast.walk(st):
                top[id(n)] = i
            for name in _changed_in_place(st):
                last_change[name] = i
            if _changes_any(st):
                last_any = i

        def late(node, name) -> bool:
            return top.get(id(node), -1) > max(last_any, last_change.get(
                name, len(self.pf.tree.body)))

        def aliased(node, names):
            other.update(x for x in names if not late(node, x))

        for node in gast.walk(self.pf.tree):
            if id(node) in returned:
                continue
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.counts_store.add(node.id)
            if isinstance(node, gast.Assign):
                for t in node.targets:
                    if isinstance(t, gast.Name):
                        if _fresh_list(node.value):
                            made.add(t.id)
                        else:
                            aliased(node, [t.id])
                            not_list.add(t.id)
                    elif isinstance(t, gast.Subscript):  # `lst[i] = v`: a new list (setitem)
                        other.update(n.id for n in gast.walk(t.slice)
                                     if isinstance(n, gast.Name))
                    elif isinstance(t, gast.Tuple) and isinstance(node.value, gast.Tuple) \
                            and len(t.elts) == len(node.value.elts):
                        # `new_ids, i = [], 0`: each name as its own assignment
                        for x, y in zip(t.elts, node.value.elts):
                            if isinstance(x, gast.Name) and _fresh_list(y):
                                made.add(x.id)
                            else:
                                other.update(_names_in(x))
                                not_list.update(_names_in(x))
                    else:
                        other.update(n.id for n in gast.walk(t) if isinstance(n, gast.Name))
                if isinstance(node.value, gast.Name) and not _handed_over(
                        self.pf.tree, node, node.value.id):
                    aliased(node, [node.value.id])  # `b = lst`: two names, one list
            elif isinstance(node, (gast.For, gast.AugAssign)):
                t = node.target
                if not (isinstance(node, gast.AugAssign) and isinstance(t, gast.Name)):
                    other.update(n.id for n in gast.walk(t) if isinstance(n, gast.Name))
                    not_list.update(n.id for n in gast.walk(t) if isinstance(n, gast.Name))
            elif isinstance(node, (gast.Tuple, gast.List, gast.Set, gast.Dict)):
                elts = node.values if isinstance(node, gast.Dict) else node.elts
                aliased(node, [e.id for e in elts if isinstance(e, gast.Name)])
        # (lists the function makes that another name may hold: `lst += [v]` is their
        # extend in place -- the statement above -- which every name holding them sees)
        self.shared_lists = (made & other) - not_list - self.params
        return made - other - self.params

    def _local_tuples(self) -> set:
        """Names every value of which is a tuple the function makes: a display, or `t + (..)`
        of such tuples (`hist = (); for ..: hist = hist + (h,)`, `hist += (h,)`) -- their `+`
        is Python's tuple concatenation (a tuple is never changed in place: a second name
        for one cannot see a change)."""
        values: dict = {}
        other = set(self.params)
        for node in gast.walk(self.pf.tree):
            if isinstance(node, gast.Assign) and all(isinstance(t, gast.Name)
                                                     for t in node.targets):
                for t in node.targets:
                    values.setdefault(t.id, []).append(node.value)
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) and \
                    isinstance(node.op, gast.Add):
                values.setdefault(node.target.id, []).append(node.value)
            else:
                for t in (node.targets if isinstance(node, gast.Assign) else
                          [node.target] if isinstance(node, (gast.AugAssign, gast.AnnAssign,
                                                             gast.For, gast.comprehension))
                          else []):
                    other.update(n.id for n in gast.walk(t) if isinstance(n, gast.Name))
                if isinstance(node, (gast.withitem, gast.NamedExpr)):
                    other.update(n.id for n in gast.walk(node) if isinstance(n, gast.Name)
                                 and isinstance(n.ctx, gast.Store))
        tuples = set(values) - other

        def made(v) -> bool:
            return isinstance(v, gast.Tuple) and not any(
                isinstance(x, gast.Starred) for x in v.elts) or (
                isinstance(v, gast.Name) and v.id in tuples) or (
                isinstance(v, gast.BinOp) and isinstance(v.op, gast.Add) and made(v.left)
                and made(v.right))

        while True:
            keep = {n for n in tuples if all(made(v) for v in values[n])}
            if keep == tuples:
                return tuples
            tuples = keep

    def is_tuple(self, e) -> bool:
        """A tuple display (no `*xs` in it), or a name holding only tuples the function makes
        (`_local_tuples`): with one on each side, `+` is Python's tuple concatenation."""
        return (isinstance(e, gast.Tuple) and not any(isinstance(x, gast.Starred)
                                                      for x in e.elts)) or (
            isinstance(e, gast.Name) and e.id in self.tuples)

    def _local_dicts(self) -> set:
        """Names assigned only dicts the function makes (``{}``, ``{k: v}``, a comprehension,
        ``dict(...)``): their ``setdefault`` / ``update`` / iteration are rewritten as writes
        and reads by key (runtime.setitem makes a new dict each time)."""
        stored = {n.id for n in gast.walk(self.pf.tree) if isinstance(n, gast.Name)
                  and isinstance(n.ctx, gast.Store)}
        # parameters the call gives dicts, never rebound: `r = params.copy()` copies a dict
        given = {p for p in self.params if (p,) in self.pf.dict_paths and p not in stored}

        def copied(v) -> bool:  # (`d.copy()` of a dict argument or of one made here)
            return isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute) and \
                v.func.attr == "copy" and not v.args and not v.keywords and \
                isinstance(v.func.value, gast.Name) and v.func.value.id in given

        # (to a fixed point: `params = new` of a dict `new` made here is one too)
        made: set = set()
        for _ in range(8):
            now = self._made_dicts(copied, made)
            given |= now
            if now == made:
                break
            made = now
        return made

    def _made_dicts(self, copied, known=frozenset()) -> set:
        made, other = set(), set()
        for node in gast.walk(self.pf.tree):
            if isinstance(node, gast.Assign):
                for t in node.targets:
                    for n in gast.walk(t):
                        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                            v = node.value
                            fresh_dict = t is n and (isinstance(v, (gast.Dict, gast.DictComp)) or (
                                isinstance(v, gast.Call) and isinstance(v.func, gast.Name)
                                and ((v.func.id == "dict" and self.builtin(v.func, "dict"))
                                     or v.func.id == DICT_COPY)) or copied(v)
                                or isinstance(v, gast.Name) and v.id in known
                                or isinstance(v, gast.Call) and self._resolve_dotted(
                                    v.func) is collections.OrderedDict)
                            (made if fresh_dict else other).add(n.id)
            elif isinstance(node, (gast.For, gast.AugAssign, gast.AnnAssign)):
                # (a name bound there; `d["k"] += v` stores into the dict d is)
                other.update(n.id for n in gast.walk(node.target) if isinstance(n, gast.Name)
                             and isinstance(n.ctx, gast.Store))
        # (a parameter the call gives a dict, rebound only to dicts made here -- `params =
        # {k: step(params[k]) for k in params}` in an unrolled optimiser's loop -- holds a
        # dict at every read)
        given = {p for p in self.params if (p,) in self.pf.dict_paths}
        return made - other - (set(self.params) - given)

    def _is_defaultdict_list(self, v) -> bool:
        """`defaultdict(list)` (collections' own, `list` the builtin)."""
        return isinstance(v, gast.Call) and len(v.args) == 1 and not v.keywords and \
            isinstance(v.func, (gast.Name, gast.Attribute)) and \
            self._resolve_dotted(v.func) is collections.defaultdict and \
            isinstance(v.args[0], gast.Name) and self.builtin(v.args[0], "list")

    def _resolve_dotted(self, e):
        parts = []
        while isinstance(e, gast.Attribute):
            parts.append(e.attr)
            e = e.value
        if not isinstance(e, gast.Name) or e.id in self.counts_store:
            return None
        obj = self.pf.resolve(e.id)
        for a in reversed(parts):
            obj = getattr(obj, a, None)
        return obj

    def _dicts_of_lists(self) -> dict:
        """Names holding a dict of lists the function makes and appends to by key -- ``acts
        = {"z": [], "h": []}`` or ``acts = defaultdict(list)``, then ``acts["z"].append(z)``
        -- where no second name for the dict or for one of its lists can see a change: every
        store gives a fresh list display, every read of an item is a value used where it
        stands (`np.stack(acts["z"])`, `acts["h"][-1]`), not bound to a name or put in a
        display. name -> True for a defaultdict(list) (a missing key starts an empty list)."""
        fresh = (gast.List, gast.ListComp)
        out = {}
        for node in gast.walk(self.pf.tree):
            if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], gast.Name):
                v, name = node.value, node.targets[0].id
                if isinstance(v, gast.Dict) and all(k is not None for k in v.keys) and \
                        all(isinstance(x, fresh) for x in v.values):
                    out.setdefault(name, False)
                elif self._is_defaultdict_list(v):
                    out[name] = True
        if not out:
            return {}
        parent = {}
        for node in gast.walk(self.pf.tree):
            for c in gast.iter_child_nodes(node):
                parent[id(c)] = node
        bad = set(self.params)
        for node in gast.walk(self.pf.tree):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and \
                    node.id in out:
                up = parent.get(id(node))
                if not (isinstance(up, gast.Assign) and len(up.targets) == 1 and
                        up.targets[0] is node and (
                            (isinstance(up.value, gast.Dict) and all(
                                k is not None for k in up.value.keys) and
                             all(isinstance(x, fresh) for x in up.value.values)) or
                            self._is_defaultdict_list(up.value))):
                    bad.add(node.id)  # (rebound to something else)
                continue
            if not (isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and
                    node.id in out):
                continue
            up = parent.get(id(node))
            if isinstance(up, gast.Attribute) and up.value is node and \
                    up.attr in ("items", "keys", "values", "get"):
                continue  # (d.items(), d.get(k): the dict read)
            if isinstance(up, gast.Compare) or isinstance(up, gast.Return):
                continue  # (`k in d`; the dict given back as the function ends)
            if _grouped_by_key(up, node, parent, fresh):
                continue  # (`d.setdefault(k, []).append(v)`: set_default_then)
            if isinstance(up, gast.Call) and isinstance(up.func, gast.Name) and \
                    up.func.id == "len" and self.builtin(up.func, "len"):
                continue
            if not (isinstance(up, gast.Subscript) and up.value is node):
                bad.add(node.id)
                continue
            if isinstance(up.ctx, (gast.Store, gast.Del)):
                top = parent.get(id(up))
                if not (isinstance(up.ctx, gast.Store) and isinstance(top, gast.Assign) and
                        len(top.targets) == 1 and isinstance(top.value, fresh)):
                    bad.add(node.id)  # (`d[k] = lst`: a list with another name)
                continue
            user = parent.get(id(up))
            if isinstance(user, gast.Attribute) and user.value is up:
                call = parent.get(id(user))
                if user.attr in ("append", "extend") and isinstance(call, gast.Call) and \
                        call.func is user and isinstance(parent.get(id(call)), gast.Expr):
                    continue  # (the change this lowering writes as a value)
                if user.attr in _LIST_READS:
                    continue
                bad.add(node.id)
            elif isinstance(user, (gast.For, gast.comprehension)) and user.iter is up:
                if any(self._appends_to(n, node.id) for n in gast.walk(user)):
                    bad.add(node.id)  # (a loop over a list it appends to)
            elif isinstance(user, (gast.Assign, gast.AnnAssign, gast.Tuple, gast.List,
                                   gast.Set, gast.Dict, gast.Starred, gast.NamedExpr)) or (
                    isinstance(user, gast.AugAssign) and user.target is up):
                bad.add(node.id)  # (a second name, a holder)
        return {k: v for k, v in out.items() if k not in bad}

    @staticmethod
    def _appends_to(n, d: str) -> bool:
        return isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
            isinstance(n.func.value, gast.Subscript) and \
            isinstance(n.func.value.value, gast.Name) and n.func.value.value.id == d

    def dict_list_method(self, s: gast.Expr):
        """``acts["z"].append(z)`` / ``.extend(zs)`` on a dict of lists `_dicts_of_lists`
        found: ``acts["z"] = list_append(acts["z"], z)`` (a missing key of a defaultdict(list)
        an empty list: ``dict_get(acts, "z", [])``)."""
        v = s.value
        if not (isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute) and
                v.func.attr in ("append", "extend") and len(v.args) == 1 and
                not v.keywords and isinstance(v.func.value, gast.Subscript) and
                isinstance(v.func.value.value, gast.Name) and
                v.func.value.value.id in self.list_dicts):
            return None
        d = v.func.value.value.id
        key = v.func.value.slice
        pre = []
        if not isinstance(key, (gast.Constant, gast.Name)):
            tmp = self.fresh(f"{d}_key")
            pre.append(_assign(tmp, key))
            key = _name(tmp)

        def current():
            if self.list_dicts[d]:
                return _call(DICT_GET, [_name(d), copy.deepcopy(key),
                                        gast.List(elts=[], ctx=gast.Load())])
            return gast.Subscript(value=_name(d), slice=copy.deepcopy(key), ctx=gast.Load())

        def put(value):
            return _assign(gast.Subscript(value=_name(d), slice=copy.deepcopy(key),
                                          ctx=gast.Store()), _call(LIST_APPEND, [current(), value]))

        if v.func.attr == "append":
            return pre + [put(v.args[0])]
        item = self.fresh(f"{d}_item")
        return pre + [_for(_name(item, True), v.args[0], [put(_name(item))])]

    def dict_pop(self, s):
        """``v = d.pop(k, default)`` (``kwargs.pop("scale", 1.0)``) on a dict the function
        makes or its ``**kwargs``: ``v = d.get(k, default)`` (``d[k]`` without a default,
        Python's KeyError where it is missing), then ``d = dict_without(d, k)``."""
        v = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
        if not (isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute)
                and v.func.attr == "pop" and isinstance(v.func.value, gast.Name)
                and 1 <= len(v.args) <= 2 and not v.keywords
                and not any(isinstance(a, gast.Starred) for a in v.args)):
            return None
        if isinstance(s, gast.Assign) and not (len(s.targets) == 1 and isinstance(
                s.targets[0], (gast.Name, gast.Attribute))):  # (`self.training = kw.pop(..)`)
            return None
        d = v.func.value.id
        if d not in self.dicts and d != self.pf.varkw and \
                d != getattr(self.pf.tree, "srcad_varkw", None):  # (`**kwargs`: its own dict)
            return None
        out = []
        key = v.args[0]
        if not isinstance(key, (gast.Constant, gast.Name)):
            name = self.fresh(f"{d}_key")
            out.append(_assign(name, key))
            key = _name(name)
        if isinstance(s, gast.Assign):
            value = _call(DICT_GET, [_name(d), copy.deepcopy(key), v.args[1]]) \
                if len(v.args) == 2 else gast.Subscript(value=_name(d), slice=copy.deepcopy(key),
                                                        ctx=gast.Load())
            if isinstance(s.targets[0], gast.Attribute):  # (the key read, then stored)
                name = self.fresh(f"{d}_popped")
                out.append(_assign(name, value))
                value = _name(name)
            out.append(gast.Assign(targets=s.targets, value=value, type_comment=None))
        elif len(v.args) == 1:  # (`d.pop(k)` for its effect: Python's KeyError if missing)
            out.append(gast.Expr(value=gast.Subscript(value=_name(d), slice=copy.deepcopy(key),
                                                      ctx=gast.Load())))
        out.append(_assign(d, _call(DICT_WITHOUT, [_name(d), copy.deepcopy(key)])))
        return out

    def set_default_then(self, s: gast.Expr):
        """``d.setdefault(k, []).append(v)`` (grouping by key) on a dict of lists the function
        makes (`_dicts_of_lists`): ``if k not in d: d[k] = []`` then ``d[k].append(v)`` --
        the key and the default evaluated once, first, as Python does."""
        v = s.value
        inner = v.func.value if isinstance(v, gast.Call) and isinstance(
            v.func, gast.Attribute) else None
        if not (isinstance(inner, gast.Call) and isinstance(inner.func, gast.Attribute) and
                inner.func.attr == "setdefault" and isinstance(inner.func.value, gast.Name) and
                inner.func.value.id in self.list_dicts and len(inner.args) == 2 and
                not inner.keywords and not any(isinstance(a, gast.Starred)
                                               for a in inner.args)):
            return None
        d, (key, default) = inner.func.value.id, inner.args
        pre = []
        if not isinstance(key, (gast.Constant, gast.Name)):
            name = self.fresh(f"{d}_key")
            pre.append(_assign(name, key))
            key = _name(name)
        if not (isinstance(default, gast.List) and not default.elts):
            # (a list with items, a comprehension -- `_grouped_by_key` lets only those
            # through: evaluated whether or not the key is there)
            name = self.fresh(f"{d}_default")
            pre.append(_assign(name, default))
            default = _name(name)
        test = gast.Compare(left=copy.deepcopy(key), ops=[gast.NotIn()], comparators=[_name(d)])
        put = _assign(gast.Subscript(value=_name(d), slice=copy.deepcopy(key),
                                     ctx=gast.Store()), default)
        v.func.value = gast.Subscript(value=_name(d), slice=copy.deepcopy(key), ctx=gast.Load())
        return pre + [gast.If(test=test, body=[put], orelse=[]), s]

    def dict_method(self, s: gast.Expr):
        """``d.setdefault(k, v)`` / ``d.update(...)`` on a dict the function makes, as writes
        by key (each a new dict: runtime.setitem)."""
        v = s.value
        if not (isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute)
                and isinstance(v.func.value, gast.Name) and v.func.value.id in self.dicts):
            return None
        d, method = v.func.value.id, v.func.attr

        def put(key, value):
            return _assign(gast.Subscript(value=_name(d), slice=key, ctx=gast.Store()), value)

        if method == "setdefault" and len(v.args) in (1, 2) and not v.keywords:
            value = v.args[1] if len(v.args) == 2 else gast.Constant(value=None, kind=None)
            test = gast.Compare(left=v.args[0], ops=[gast.NotIn()], comparators=[_name(d)])
            return [gast.If(test=test, body=[put(copy.deepcopy(v.args[0]), value)], orelse=[])]
        if method == "update" and len(v.args) <= 1 and all(k.arg for k in v.keywords):
            out = []
            if v.args:
                src = v.args[0]
                if isinstance(src, gast.Dict) and all(k is not None for k in src.keys):
                    out += [put(k, val) for k, val in zip(src.keys, src.values)]
                else:
                    tmp = self.fresh(f"{d}_update")
                    key = self.fresh("key")
                    out.append(_assign(tmp, src))
                    out.append(_for(_name(key, True), _call(DICT_KEYS, [_name(tmp)]), [
                        put(_name(key), gast.Subscript(value=_name(tmp), slice=_name(key),
                                                       ctx=gast.Load()))]))
            out += [put(gast.Constant(value=k.arg, kind=None), k.value) for k in v.keywords]
            return out
        return None

    # -- statements ------------------------------------------------------------------------------
    def body(self, stmts) -> list:
        out = []
        for s in self.filled_then_stored(stmts):
            out.extend(self.statement(s))
        return out

    def filled_then_stored(self, stmts) -> list:
        """``xs[t] = np.zeros(n); xs[t][i] = 1`` (min-char-rnn's one-hot vectors): the item
        filled under a name of its own, then stored -- ``xs_t = np.zeros(n); xs_t[i] = 1;
        xs[t] = xs_t`` -- the same objects and values, where the key is plain names and
        literals and the writes read neither the container nor change the key; no write into
        the container's item, which a later read of the container would have to follow."""
        out, i = [], 0
        while i < len(stmts):
            s = stmts[i]
            key = _plain_store(s)
            j = i + 1
            while key is not None and j < len(stmts) and _fills_item(stmts[j], *key):
                j += 1
            if j == i + 1:
                out.append(s)
                i += 1
                continue
            container, index = key
            item = self.fresh(f"{container}_item")
            out.append(gast.copy_location(_assign(item, s.value), s))
            for w in stmts[i + 1:j]:
                target = w.targets[0] if isinstance(w, gast.Assign) else w.target
                target.value = _name(item)
                out.append(w)
            out.append(gast.copy_location(gast.Assign(
                targets=[gast.Subscript(value=_name(container), slice=copy.deepcopy(index),
                                        ctx=gast.Store())],
                value=_name(item), type_comment=None), stmts[j - 1]))
            i = j
        return out

    def statement(self, s) -> list:
        pending: list = []
        if isinstance(s, gast.For):
            s, pre = self.lower_for(s)
            pending.extend(pre)
            s.iter = self.expr(s.iter, pending, self.hint_of(s.target))
            unrolled = self.unroll(s)
            if unrolled is not None:
                return self.body(_located(pending, s)) + self.body(_located(unrolled, s))
            s.body = self.body(s.body)
            s.orelse = self.body(s.orelse)
            return self.body(_located(pending, s)) + [s]
        if isinstance(s, gast.While):
            if self.needs_statements(s.test) and not continues(s.body):
                # `while n < 5 and any(abs(v) < 3 for v in y):` -- Python evaluates the test
                # before every trip: its statements before the loop and again at the end of
                # the body (a `continue` would skip them: refused below, as before)
                test = self.expr(s.test, pending, "cond")
                again = copy.deepcopy(pending)
                s.test = test
                s.body = self.body(s.body) + self.body(_located(again, s))
                s.orelse = self.body(s.orelse)
                return self.body(_located(pending, s)) + [s]
            self.refuse_inside(s.test, s, "a `while` test (Python evaluates it at every step)")
            s.body = self.body(s.body)
            s.orelse = self.body(s.orelse)
            return [s]
        if isinstance(s, gast.If):
            s.test = self.expr(s.test, pending, "cond")
            s.body = self.body(s.body)
            s.orelse = self.body(s.orelse)
            return self.body(_located(pending, s)) + [s]
        nested = self.nested_write(s)
        if nested is not None:
            return self.body(_located(nested, s))
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Name) and s.targets[0].id in self.list_dicts \
                and self._is_defaultdict_list(s.value):
            return [s]  # (defaultdict(list): a dict whose appends start a missing key's list)
        in_place = self.in_place_operator(s)
        if in_place is not None:
            return self.body(_located(in_place, s))
        popped = self.dict_pop(s)
        if popped is None:
            popped = self.list_pop(s)
        if popped is None:
            popped = self.pop_hoisted(s)
        if popped is not None:
            return self.body(_located(popped, s))
        if isinstance(s, gast.Expr):
            rewritten = self.set_default_then(s)
            if rewritten is None:
                rewritten = self.list_method(s)
            if rewritten is None:
                rewritten = self.dict_list_method(s)
            if rewritten is None:
                rewritten = self.dict_method(s)
            if rewritten is None:
                rewritten = self.array_method(s)
            if rewritten is not None:
                return self.body(_located(rewritten, s))
        if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name) and \
                s.target.id in self.tuples and isinstance(s.op, gast.Add):
            # `hist += (h,)` rebinds hist to `hist + (h,)` (a tuple has no `+=` of its own)
            return self.body(_located([_assign(s.target.id, gast.BinOp(
                left=_name(s.target.id), op=gast.Add(), right=s.value))], s))
        if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name) and \
                s.target.id in self.lists and isinstance(s.op, gast.Add) and \
                isinstance(s.value, (gast.List, gast.Tuple)):
            appends = [self.append(s.target.id, v) for v in s.value.elts]  # lst += [a, b]
            return self.body(_located(appends, s))
        if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name) and \
                isinstance(s.op, gast.Add) and isinstance(s.value, (gast.List, gast.ListComp)) \
                and s.target.id not in self.lists:
            if s.target.id in self.params and not self._rebound(s.target.id):
                extended = self._argument_extended(s)
                if extended is not None:
                    return self.body(_located(extended, s))
            if self._held_container(s.target.id, (list,), by_name=False):
                # (`log = s.log; log += [v]`: the object's list itself extended, as Python's
                # `+=` does -- before the session of 2026-12-07, fourteenth, `log` alone was
                # rebound, and what read `s.log` after it missed the items)
                call = gast.Call(func=gast.Attribute(value=_name(s.target.id), attr="extend",
                                                     ctx=gast.Load()),
                                 args=[s.value], keywords=[])
                return self.body(_located([gast.Expr(value=call)], s))
            self._argument_extended_by_alias(s)
        if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name) and \
                s.target.id in self.shared_lists and isinstance(s.op, (gast.Add, gast.Mult)):
            # `a = lst; lst += [v]` (or `lst *= 2`): Python's list changes in place, which `a`
            # sees; srcad rebinding `lst` alone left `a` as it was (a wrong value, silently,
            # before the session of 2026-12-06, ninth) -- refused as the extend it is
            raise self.pf.error(
                f"`{s.target.id} {'+' if isinstance(s.op, gast.Add) else '*'}= ...` changes "
                f"the list in place, and another name may hold that list: srcad follows such "
                f"a change only on a list no second name holds", s,
                cls=UnsupportedSyntaxError,
                hint=f"make the new list by its own name (`{s.target.id} = {s.target.id} + "
                f"[...]`), or keep one name for the list")
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) and isinstance(s.value, _COMPS) and not (
                    isinstance(s.value, gast.ListComp) and _copies_items(s.value)) and not (
                    isinstance(s.value, gast.DictComp) and _copies_entries(s.value)):
            target = s.targets[0].id
            inside = {n.id for n in gast.walk(s.value) if isinstance(n, gast.Name)}
            if target not in inside:  # build the value under the user's own name
                stmts = self.comprehension(s.value, target)
                return self.body(_located(stmts, s))
        if isinstance(s, gast.Assert):
            s.test = self.expr(s.test, pending, "assert")
            if s.msg is not None:
                self.refuse_inside(s.msg, s, "an assert message (computed only on failure)")
            return self.body(_located(pending, s)) + [s]
        hint = self.hint_of(s.targets[0]) if isinstance(s, gast.Assign) else (
            self.hint_of(s.target) if isinstance(s, (gast.AugAssign, gast.AnnAssign)) else
            self.pf.name)
        for field in ("value", "exc", "test"):
            v = getattr(s, field, None)
            if isinstance(v, gast.expr):
                setattr(s, field, self.expr(v, pending, hint))
        return self.body(_located(pending, s)) + [s] if pending else [s]

    def hint_of(self, target) -> str:
        if isinstance(target, gast.Name):
            return target.id
        if isinstance(target, (gast.Tuple, gast.List)):
            return "_".join(self.hint_of(t) for t in target.elts)
        if isinstance(target, gast.Subscript):
            return self.hint_of(target.value)
        return "value"

    def needs_statements(self, expr) -> bool:
        """Does lowering `expr` take statements of its own (a comprehension, a pop of a list
        the function makes), which may run only where `expr` itself runs?"""
        return any(isinstance(n, _COMPS) or (
            isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and
            n.func.attr == "pop" and isinstance(n.func.value, gast.Name) and
            n.func.value.id in self.lists) for n in gast.walk(expr))

    def refuse_inside(self, expr, node, where):
        for n in gast.walk(expr):
            if isinstance(n, _COMPS):
                raise self.error(f"srcad does not support a comprehension in {where}", n,
                                 "compute it on its own line first, into a name")

    # -- loops --------------------------------------------------------------------------------
    def unroll(self, s: gast.For):
        """``for t in (a, b, c): body`` (a short display, no jumps) as the body once per item,
        in order, with ``t`` naming the item itself: as Python runs it, with no index, so the
        item's gradient gathers in the order tape mode's does. Items the body reassigns are
        taken first (Python evaluates the display before the loop)."""
        items = self.range_making_closures(s)
        if not (isinstance(items, (gast.Tuple, gast.List)) and items.elts and not s.orelse
                and isinstance(s.target, gast.Name)
                and not any(isinstance(e, gast.Starred) for e in items.elts)):
            return None
        size = sum(1 for st in s.body for _ in gast.walk(st) if isinstance(_, gast.stmt))
        if len(items.elts) > 8 or size * len(items.elts) > 64:
            return None
        for st in s.body:
            for n in gast.walk(st):
                if isinstance(n, (gast.Break, gast.Continue, gast.Return, gast.FunctionDef,
                                  gast.Lambda)):
                    return None
        assigned = {n.id for st in s.body for n in gast.walk(st)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        out, values = [], []
        for e in items.elts:
            if isinstance(e, gast.Constant) or (isinstance(e, gast.Name) and e.id not in assigned):
                values.append(e)
            else:
                tmp = self.fresh(f"{s.target.id}_item")
                out.append(_assign(tmp, e))
                values.append(_name(tmp))
        t = s.target.id
        mine = {id(n) for n in gast.walk(s)}
        read_after = any(isinstance(n, gast.Name) and n.id == t and id(n) not in mine
                         for n in gast.walk(self.pf.tree))
        # (a nested function made in the body that closes over t reads t when it is called,
        # as Python's closure does -- the last item, after the loop: t a name of its own)
        captured = any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
                       n.func.id == PARTIAL and any(isinstance(k.value, gast.Name) and
                                                    k.value.id == t for k in n.keywords)
                       for st in s.body for n in gast.walk(st))
        for v in values:
            if t in assigned or captured:  # (the body rebinds the loop variable: its own name)
                out.append(_assign(t, copy.deepcopy(v)))
                out.extend(copy.deepcopy(s.body))
                continue
            for st in copy.deepcopy(s.body):  # the item itself where the body reads `t`
                out.append(Substitute(t, v).visit(st))
        if read_after and t not in assigned and not captured:
            out.append(_assign(t, copy.deepcopy(values[-1])))  # (Python leaves t bound)
        return out

    def range_making_closures(self, s: gast.For):
        """``for k in range(3):`` (constant bounds, at most 8 steps) whose body makes a
        closure (``fs.append(lambda h, k=k: ...)``, a comprehension of lambdas): the display
        ``(0, 1, 2)``, so that `unroll` writes each closure out and the list holds functions
        known here; any other loop's iterable as it is."""
        it = s.iter
        if not (isinstance(it, gast.Call) and self.builtin(it.func, "range") and
                1 <= len(it.args) <= 3 and not it.keywords and
                all(isinstance(a, gast.Constant) and type(a.value) is int for a in it.args)):
            return it
        steps = range(*[a.value for a in it.args])
        if not 0 < len(steps) <= 8 or not any(
                isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
                n.func.id == PARTIAL for st in s.body for n in gast.walk(st)):
            return it
        return gast.copy_location(gast.Tuple(elts=[gast.Constant(value=k, kind=None)
                                                   for k in steps], ctx=gast.Load()), it)

    def lower_for(self, s):
        """dict iteration and tuple targets (the normaliser walks ranges and sequences)."""
        pre, head = [], []
        it = s.iter
        path = self.dict_path(it)
        if path in self.dict_paths:
            path = None  # (a dict: the loop variable takes its keys)
        method = it.func.attr if (isinstance(it, gast.Call) and isinstance(
            it.func, gast.Attribute) and not it.args and not it.keywords) else None
        if method in ("items", "values", "keys"):
            d = it.func.value
            if not isinstance(d, gast.Name):
                tmp = self.fresh("mapping")
                pre.append(_assign(tmp, d))
                d = _name(tmp)
            if method == "items":
                if not (isinstance(s.target, (gast.Tuple, gast.List)) and len(s.target.elts) == 2
                        and isinstance(s.target.elts[0], gast.Name)):
                    raise self.error("this loop over .items()", s,
                                     "write `for key, value in d.items():`")
                key, value = s.target.elts
                s.target = _name(key.id, True)
                head.append(_assign(value, gast.Subscript(value=_name(d.id), slice=_name(key.id),
                                                          ctx=gast.Load())))
            elif method == "values":
                key = self.fresh("key")
                head.append(_assign(s.target, gast.Subscript(value=_name(d.id), slice=_name(key),
                                                             ctx=gast.Load())))
                s.target = _name(key, True)
            s.iter = _call(DICT_KEYS, [_name(d.id)])
        elif isinstance(it, gast.Name) and it.id in self.dicts:
            s.iter = _call(DICT_KEYS, [_name(it.id)])  # for k in d: its keys
        elif self.dict_path(it) in self.dict_paths:  # for k in params (a dict argument)
            if not isinstance(it, gast.Name):
                tmp = self.fresh("mapping")
                pre.append(_assign(tmp, it))
                it = _name(tmp)
            s.iter = _call(DICT_KEYS, [_name(it.id)])
        elif isinstance(s.target, (gast.Tuple, gast.List)):
            inner = it
            if isinstance(it, gast.Call) and it.args and self.is_checkpoint(it.func):
                inner = it.args[0]  # for i, w in srcad.checkpoint(enumerate(Ws)): ...
            if isinstance(inner, gast.Call) and isinstance(inner.func, gast.Name) and \
                    inner.func.id == "zip" and len(inner.args) == 1 and not inner.keywords and \
                    isinstance(inner.args[0], gast.Starred):
                # for q, k, v in zip(*heads): unpacking n names says heads holds n sequences
                # (Python raises otherwise): zip(heads[0], ..., heads[n-1]); `zip(*np.nonzero(
                # R))` through a name of its own
                seq = inner.args[0].value
                if not isinstance(seq, gast.Name):
                    tmp = self.fresh("zipped")
                    pre.append(gast.copy_location(_assign(tmp, seq), seq))
                    seq = gast.copy_location(_name(tmp), seq)
                inner.args = [gast.copy_location(gast.Subscript(
                    value=_name(seq.id), slice=gast.Constant(i, None), ctx=gast.Load()), seq)
                    for i in range(len(s.target.elts))]
            enum_zip = isinstance(inner, gast.Call) and isinstance(inner.func, gast.Name) and \
                inner.func.id in ("enumerate", "zip")
            if enum_zip and inner.func.id == "enumerate" and len(inner.args) == 1 and \
                    isinstance(inner.args[0], gast.Call) and \
                    isinstance(inner.args[0].func, gast.Name) and \
                    inner.args[0].func.id == "zip" and inner.args[0].args and \
                    len(s.target.elts) == 2 and isinstance(s.target.elts[1], (gast.Tuple,
                                                                               gast.List)) and \
                    len(s.target.elts[1].elts) == len(inner.args[0].args) and inner is it:
                # for i, (a, b) in enumerate(zip(as_, bs)) is
                # for i, a, b in zip(range(len(as_)), as_, bs)
                seqs = inner.args[0].args
                count = _call("range", [_call("len", [seqs[0]])])
                s.iter = _call("zip", [count, *seqs])
                s.target.elts = [s.target.elts[0], *s.target.elts[1].elts]  # (all names)
            if enum_zip:  # for i, (a, b) in enumerate(...): the nested part unpacked inside
                elts = []
                for t in s.target.elts:
                    if isinstance(t, gast.Name):
                        elts.append(t)
                    else:
                        tmp = self.fresh("item")
                        head.append(_assign(t, _name(tmp)))
                        elts.append(_name(tmp, True))
                s.target.elts = elts
            else:
                tmp = self.fresh("item")
                head.append(_assign(s.target, _name(tmp)))
                s.target = _name(tmp, True)
        if path is not None and isinstance(s.target, gast.Name) and \
                self.stores[s.target.id] == 1:  # for layer in layers: layer[...] is layers[i]
            self.item_paths[s.target.id] = path + (EACH,)
            pf = self.pf
            pf.dict_known = pf.dict_known | {(s.target.id,) + f[len(path) + 1:]
                                             for f in self.dict_paths
                                             if f[:len(path) + 1] == path + (EACH,)}
        s.body = _located(head, s) + s.body
        return s, _located(pre, s)

    def dict_path(self, e):
        """`e`'s path in `dict_paths` (`params`, `params["enc"]`, `ps[i]`, a loop variable
        over `ps`), or None where `e` is not read from an argument so."""
        if isinstance(e, gast.Name):
            if e.id in self.item_paths:
                return self.item_paths[e.id]
            return (e.id,) if e.id in self.params and e.id not in self.stores else None
        if isinstance(e, gast.Subscript) and not isinstance(e.slice, (gast.Slice, gast.Tuple)):
            base = self.dict_path(e.value)
            k = e.slice.value if isinstance(e.slice, gast.Constant) else None
            return None if base is None else base + ((k,) if type(k) in (str, int) else (EACH,))
        return None

    def is_checkpoint(self, func) -> bool:
        parts = []
        while isinstance(func, gast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name) or func.id in self.counts_store:
            return False
        obj = self.pf.resolve(func.id)
        for p in reversed(parts):
            obj = getattr(obj, p, None)
        return obj is checkpoint

    # -- expressions -----------------------------------------------------------------------------
    def is_list(self, e) -> bool:
        """A list display, or a list the function makes (an operand that says `+` and `*`
        are Python's list concatenation and repeat): also ``list(xs)`` of Python's builtin
        (``list(Ws) + list(Vs)``) and a list comprehension."""
        return isinstance(e, (gast.List, gast.ListComp)) or (
            isinstance(e, gast.Name) and e.id in self.lists) or (
            isinstance(e, gast.Call) and len(e.args) <= 1 and not e.keywords and
            not any(isinstance(a, gast.Starred) for a in e.args) and
            self.builtin(e.func, "list"))

    def expr(self, e, pending: list, hint: str):
        """`e` with its comprehensions (and sum/min/max/list/tuple of them) computed into
        names by statements appended to `pending`."""
        if isinstance(e, gast.Lambda):
            return e
        if isinstance(e, gast.IfExp):
            e.test = self.expr(e.test, pending, hint)
            if self.needs_statements(e.body) or self.needs_statements(e.orelse):
                # `stack.pop() if len(stack) > 1 else x`, `sum([..]) if c else 0.0`: a
                # branch that runs only when chosen, as an `if` statement into a name
                name = self.fresh(f"{hint}_chosen")
                pending.append(gast.copy_location(gast.If(
                    test=e.test, body=[_assign(name, e.body)],
                    orelse=[_assign(name, e.orelse)]), e))
                return _name(name)
            return e
        if isinstance(e, gast.BoolOp):
            e.values[0] = self.expr(e.values[0], pending, hint)
            if not any(self.needs_statements(v) for v in e.values[1:]):
                return e
            # `c and any(v > 1 for v in x)`: an operand evaluated only where the ones before
            # it let it be (Python's short circuit), as `if` statements into a name -- each
            # operand's statements under the test of the value so far (refused before the
            # session of 2026-12-07, twelfth)
            name = self.fresh(f"{hint}_{'and' if isinstance(e.op, gast.And) else 'or'}")
            pending.append(gast.copy_location(_assign(name, e.values[0]), e))
            into = pending
            for v in e.values[1:]:
                inner: list = []
                value = self.expr(v, inner, hint)
                test = _name(name) if isinstance(e.op, gast.And) else \
                    gast.UnaryOp(op=gast.Not(), operand=_name(name))
                branch = gast.copy_location(gast.If(test=test, body=inner + [
                    gast.copy_location(_assign(name, value), v)], orelse=[]), v)
                into.append(branch)
                into = branch.body
            gast.fix_missing_locations(e)
            return _name(name)
        if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Add) and all(
                self.is_tuple(side) for side in (e.left, e.right)) and any(
                isinstance(side, gast.Name) for side in (e.left, e.right)) and \
                self.builtin(_name("tuple"), "tuple"):
            # `hist + (h,)` of a tuple the function makes: the items of both, as a tuple
            return _call("tuple", [_call(LIST_CONCAT, [self.expr(e.left, pending, hint),
                                                       self.expr(e.right, pending, hint)])])
        if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Add) and any(
                self.is_list(side) for side in (e.left, e.right)):
            # `cache + [c]`: Python's list concatenation (a list display on one side says so)
            return _call(LIST_CONCAT, [self.expr(e.left, pending, hint),
                                       self.expr(e.right, pending, hint)])
        if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Mult) and any(
                self.is_list(side) for side in (e.left, e.right)):
            # `[h0] * T`, `n * [x]`: Python's list repeat, the same items n times over
            xs, n = (e.left, e.right) if self.is_list(e.left) else (e.right, e.left)
            if isinstance(xs, gast.List) and isinstance(n, gast.Constant) and \
                    type(n.value) is int and 0 <= n.value <= 16 and all(
                    isinstance(x, (gast.Name, gast.Constant)) for x in xs.elts):
                # (a few names or constants: the display they make, `[x, x, x]`)
                return gast.copy_location(gast.List(
                    elts=[copy.deepcopy(x) for _ in range(n.value) for x in xs.elts],
                    ctx=gast.Load()), e)
            first = self.expr(e.left, pending, hint)
            second = self.expr(e.right, pending, hint)
            xs, n = (first, second) if xs is e.left else (second, first)
            return _call(LIST_REPEAT, [xs, n])
        if isinstance(e, gast.Call):
            self.hoist_spreads(e, pending, hint)
            done = pylevel.rewrite(self, e, pending, hint, self.held_maps)  # map, reduce, ...
            if done is not None:
                return done
            done = self.builtin_call(e, pending, hint)
            if done is not None:
                return done
            f = e.func
            if isinstance(f, gast.Attribute) and f.attr == "get" and isinstance(
                    f.value, gast.Name) and 1 <= len(e.args) <= 2 and not e.keywords and (
                    f.value.id in self.dicts or (f.value.id in self.params
                                                 and f.value.id not in self.pf.known)):
                # d.get(k, default) on a dict the function makes or is passed: a row
                args = [self.expr(a, pending, hint) for a in e.args]
                if len(args) == 1:
                    args.append(gast.Constant(value=None, kind=None))
                return gast.copy_location(_call(DICT_GET, [_name(f.value.id), *args]), e)
            if isinstance(f, gast.Attribute) and f.attr == "keys" and isinstance(
                    f.value, gast.Name) and not e.args and not e.keywords and (
                    f.value.id in self.dicts or (f.value.id in self.params
                                                 and f.value.id not in self.pf.known)):
                return gast.copy_location(_call(DICT_KEYS, [_name(f.value.id)]), e)
            if isinstance(f, gast.Attribute) and f.attr in ("items", "values") and isinstance(
                    f.value, gast.Name) and not e.args and not e.keywords and (
                    f.value.id in self.dicts or (f.value.id in self.params
                                                 and f.value.id not in self.pf.known)):
                # d.items() / d.values() as a value (sorted(d.items(), key=...)): the list
                # Python's view holds, read by key -- each item a gather of d's
                key = self.fresh("key")
                item = gast.Subscript(value=_name(f.value.id), slice=_name(key),
                                      ctx=gast.Load())
                elt = item if f.attr == "values" else gast.Tuple(
                    elts=[_name(key), item], ctx=gast.Load())
                comp = gast.ListComp(elt=elt, generators=[gast.comprehension(
                    target=_name(key, True), iter=_call(DICT_KEYS, [_name(f.value.id)]),
                    ifs=[], is_async=0)])
                return self.expr(gast.copy_location(comp, e), pending, hint)
            if self._resolve_dotted(f) is collections.OrderedDict and len(e.args) == 1 and \
                    not e.keywords and not isinstance(e.args[0], (gast.Starred, gast.List,
                                                                  gast.Tuple, gast.Dict)):
                # `OrderedDict(sorted(p.items()))`, `OrderedDict(p)`: an OrderedDict of the
                # dict `dict(...)` makes of its argument (calls.py: of a new dict's name)
                e.args = [self.expr(gast.copy_location(_call("dict", e.args), e), pending,
                                    hint)]
                return e
            if self.builtin(f, "dict") and len(e.args) == 1 and not isinstance(
                    e.args[0], gast.Starred):
                pairs = e.args[0]
                if isinstance(pairs, (gast.GeneratorExp, gast.ListComp)) and \
                        isinstance(pairs.elt, gast.Tuple) and len(pairs.elt.elts) == 2 and \
                        not e.keywords and not any(isinstance(x, gast.Starred)
                                                   for x in pairs.elt.elts):
                    # `dict((k, 2 * v) for k, v in p.items())`: the dict comprehension it is
                    comp = gast.DictComp(key=pairs.elt.elts[0], value=pairs.elt.elts[1],
                                         generators=pairs.generators)
                    return self.expr(gast.copy_location(comp, e), pending, hint)
                if not e.keywords and isinstance(pairs, gast.Call) and any(
                        self.builtin(pairs.func, b) for b in _MAKE_PAIRS) and \
                        not any(isinstance(a, gast.Starred) for a in pairs.args):
                    # `dict(zip(names, arrays))`, `dict(sorted(p.items()))`: the comprehension
                    # of the pairs it is given, key by key (on a mapping these builtins give
                    # its keys, which `dict` and the comprehension alike refuse to unpack)
                    k, v = self.fresh("key"), self.fresh("value")
                    comp = gast.DictComp(key=_name(k), value=_name(v), generators=[
                        gast.comprehension(target=gast.Tuple(
                            elts=[_name(k, True), _name(v, True)], ctx=gast.Store()),
                            iter=pairs, ifs=[], is_async=0)])
                    return self.expr(gast.copy_location(comp, e), pending, hint)
                if e.keywords and all(kw.arg is not None for kw in e.keywords) and (
                        self.dict_source(pairs) is not None or self.dict_path(pairs) is None):
                    # `dict(p, scale=2.0)`: p's entries, then the keywords', `{**p, ...}`
                    # (`{**dict(p), ...}` where srcad does not know p to be a dict: p may be
                    # pairs, which `dict` takes and `**` does not)
                    first = pairs if self.dict_source(pairs) is not None else \
                        gast.copy_location(_call(copy.deepcopy(f), [pairs]), pairs)
                    merged = gast.Dict(
                        keys=[None] + [gast.Constant(value=kw.arg, kind=None)
                                       for kw in e.keywords],
                        values=[first] + [kw.value for kw in e.keywords])
                    return self.expr(gast.copy_location(merged, e), pending, hint)
            copied = self.dict_copied(e)
            if copied is not None and not self.deep_copy(e):
                # `q = p.copy()` / `dict(p)` / `copy.copy(p)`: a new dict holding the very
                # same objects (a write in place through q's item shows in p's: the
                # normaliser holds q by its items where it knows p's)
                return self.expr(gast.copy_location(_call(DICT_COPY, [copied]), e),
                                 pending, hint)
            if copied is not None:
                # `q = copy.deepcopy(p)` of a dict the function is given or makes: a new dict
                # of each entry's own deep copy (`copy.deepcopy(p[key])`: a new array, which
                # a write in place through q leaves p's as it was)
                key = self.fresh("key")
                item = gast.Subscript(value=copy.deepcopy(copied), slice=_name(key),
                                      ctx=gast.Load())
                comp = gast.DictComp(key=_name(key), value=gast.Call(
                    func=copy.deepcopy(e.func), args=[item], keywords=[]),
                    generators=[gast.comprehension(target=_name(key, True), iter=_call(
                        DICT_KEYS, [copy.deepcopy(copied)]), ifs=[], is_async=0)])
                return self.expr(gast.copy_location(comp, e), pending, hint)
        if isinstance(e, gast.BinOp) and isinstance(e.op, gast.BitOr) and (
                isinstance(e.left, gast.Dict) or isinstance(e.right, gast.Dict)):
            # `defaults | {"W": W}`: Python's dict union, `{**defaults, "W": W}` (numpy's
            # bitwise or, with no gradient through it, before -- a wrong gradient, silently;
            # two names holding dicts are refused where the code is probed: probe.py)
            merged = gast.Dict(keys=[None, None], values=[e.left, e.right])
            return self.expr(gast.copy_location(merged, e), pending, hint)
        if isinstance(e, gast.Dict) and any(k is None for k in e.keys):
            return self.dict_unpacked(e, pending, hint)
        if isinstance(e, gast.DictComp) and _copies_entries(e) and \
                self.dict_source(e.generators[0].iter.func.value) is not None:
            # `{k: v for k, v in d.items()}`: dict(d), the same objects in a new dict
            return self.expr(gast.copy_location(_call(DICT_COPY, [
                e.generators[0].iter.func.value]), e), pending, hint)
        if isinstance(e, gast.ListComp) and _copies_items(e) and self.builtin(
                _name("list"), "list"):
            # `[w for w in ws]`: list(ws), the same objects in a new list (a write in place
            # through one holder's item shows in the other's, as Python's one array)
            return self.expr(gast.copy_location(_call("list", [e.generators[0].iter]), e),
                             pending, hint)
        if isinstance(e, _COMPS):
            acc = self.fresh(f"{hint}_{'dict' if isinstance(e, gast.DictComp) else 'list'}")
            pending.extend(self.comprehension(e, acc))
            return _name(acc)
        slots = operand_slots(e)
        for at, slot in enumerate(slots):
            before = len(pending)
            slot_put(slot, self.expr(slot_get(slot), pending, hint))
            if len(pending) > before:
                # (statements for this operand -- a comprehension, `sum(xs)` as a loop -- run
                # before the whole expression: the operands before it that compute
                # something are computed into names first, Python's order, in which the tape
                # sees them too: `t * 0.5 + sum(xs)`, the product, then the sum)
                early = []
                for slot_before in slots[:at]:
                    value = slot_get(slot_before)
                    if _computes(value):
                        name = self.fresh(f"{hint}_operand")
                        early.append(_assign(name, value))
                        slot_put(slot_before, _name(name))
                pending[before:before] = early
        return e

    def dict_unpacked(self, e: gast.Dict, pending: list, hint: str):
        """``{**p, "k": v, **q}``: a new dict built entry by entry, in Python's order (left to
        right; a later key replaces an earlier one's value and keeps its first position), as
        `dict(p)` is (dict_copied): ``acc = {}``, then for each ``**p`` a loop
        ``for key in dict_keys(p): acc = dict_set(acc, key, p[key])`` and for each ``k: v``
        ``acc = dict_set(acc, k, v)``. Gradients reach the entries that survive and v."""
        acc = self.fresh(f"{hint}_dict")
        stmts = [_assign(acc, gast.Dict(keys=[], values=[]))]
        for k, v in zip(e.keys, e.values):
            if k is not None:
                stmts.append(_assign(acc, _call(DICT_SET, [_name(acc), k, v])))
                continue
            src = self.dict_source(v)
            path = self.dict_path(v)
            if src is None and path is not None and not self.pf.dict_paths:
                raise self.pf.error(
                    f"`**{path[0]}` unpacks the argument `{path[0]}`: srcad reads its keys "
                    "from a dict passed in, and no call has passed one yet", v,
                    hint=f"call the function with a dict for `{path[0]}`",
                    cls=DictUnknownError)
            if src is None and path is not None:
                raise self.error("`**` unpacking of a value srcad does not know to be a dict", v,
                                 "unpack a dict argument or a dict the function makes, or "
                                 "write its entries out (`{'a': d['a'], ...}`)")
            if src is None:
                # (`{**DEFAULTS, "W": W}`, `{**self.cfg, ...}`: a dict srcad reads where Python
                # does, at the call, key by key -- as `acc.update(DEFAULTS)` is read)
                src = v
            if not isinstance(src, gast.Name):  # (p["enc"]: read once, as Python reads it)
                held = self.fresh(f"{hint}_unpacked")
                stmts.append(_assign(held, src))
                src = _name(held)
            key = self.fresh("key")
            item = gast.Subscript(value=copy.deepcopy(src), slice=_name(key), ctx=gast.Load())
            stmts.append(_for(_name(key, True), _call(DICT_KEYS, [copy.deepcopy(src)]), [
                _assign(acc, _call(DICT_SET, [_name(acc), _name(key), item]))]))
        pending.extend(_located(stmts, e))
        return gast.copy_location(_name(acc), e)

    def dict_source(self, src):
        """`src` when it is a dict the function makes (assigned once) or the call's values
        show it is given (an argument, an item of one), else None."""
        if isinstance(src, gast.Name) and src.id in self.dicts and self.stores[src.id] <= 1:
            return src
        if isinstance(src, gast.Dict):  # a display inside the display
            return src
        return src if self.dict_path(src) in self.dict_paths else None

    def dict_copied(self, e: gast.Call):
        """The dict `e` copies (`d.copy()`, `dict(d)`, `copy.deepcopy(d)`), when `d` is a
        dict the function makes or the call's values show it is given, else None."""
        f, src = e.func, None
        if isinstance(f, gast.Attribute) and f.attr == "copy" and not e.args and not e.keywords:
            src = f.value
        elif len(e.args) == 1 and not e.keywords and (self.builtin(f, "dict") or (
                isinstance(f, gast.Attribute) and f.attr == "deepcopy" and isinstance(
                    f.value, gast.Name) and f.value.id not in self.stores and
                self.pf.resolve(f.value.id) is copy)):
            src = e.args[0]
        elif len(e.args) == 1 and not e.keywords and self.deep_copy(e, "copy"):
            src = e.args[0]
        if src is None or isinstance(src, gast.Starred) or isinstance(src, gast.Dict):
            return None
        return self.dict_source(src)

    def deep_copy(self, e: gast.Call, name: str = "deepcopy") -> bool:
        """Is `e` a call of copy.deepcopy (or of copy.<name>)?"""
        f = e.func
        return isinstance(f, gast.Attribute) and f.attr == name and isinstance(
            f.value, gast.Name) and f.value.id not in self.stores and \
            self.pf.resolve(f.value.id) is copy

    def hoist_spreads(self, e: gast.Call, pending: list, hint: str) -> None:
        """`f(g(x, *a(i)), *a(j))`: two star spreads, or one before another argument, of
        values a call makes -- the positional arguments up to the last such spread computed
        into names first, in Python's order, so that the normaliser spreads each whose items
        it knows (a tuple display a spliced callee returns: calls.spread_known_stars)."""
        stars = [i for i, a in enumerate(e.args) if isinstance(a, gast.Starred)]
        if not stars or (len(stars) == 1 and stars[0] == len(e.args) - 1) or not any(
                isinstance(e.args[i].value, gast.Call) for i in stars):
            return
        for i in range(stars[-1] + 1):
            a = e.args[i]
            value = a.value if isinstance(a, gast.Starred) else a
            if isinstance(value, (gast.Name, gast.Constant)):
                continue
            tmp = self.fresh(f"{hint}_arg")
            pending.append(gast.copy_location(_assign(tmp, self.expr(value, pending, hint)),
                                              value))
            if isinstance(a, gast.Starred):
                a.value = gast.copy_location(_name(tmp), value)
            else:
                e.args[i] = gast.copy_location(_name(tmp), value)

    def builtin_call(self, e: gast.Call, pending: list, hint: str):
        """sum / min / max / list / tuple of one iterable, as Python computes them."""
        func = e.func
        for name in ("sum", "min", "max", "list", "tuple"):
            if self.builtin(func, name):
                break
        else:
            return None
        if name in ("list", "tuple"):
            if not e.args and not e.keywords:  # list() / tuple(): empty
                return (gast.List if name == "list" else gast.Tuple)(elts=[], ctx=gast.Load())
            if len(e.args) == 1 and not e.keywords and isinstance(
                    e.args[0], gast.GeneratorExp) and _copies_items(e.args[0]):
                # `list(w for w in ws)`: list(ws) (the same objects)
                e.args = [e.args[0].generators[0].iter]
                return self.expr(e, pending, hint)
            if len(e.args) == 1 and not e.keywords and isinstance(e.args[0], gast.GeneratorExp):
                acc = self.fresh(f"{hint}_list")
                gen = e.args[0]
                pending.extend(self.comprehension(
                    gast.ListComp(elt=gen.elt, generators=gen.generators), acc))
                return _name(acc)
            pairs = e.args[0] if len(e.args) == 1 and not e.keywords else None
            if name == "list" and isinstance(pairs, gast.Call) and pairs.args and \
                    not any(isinstance(a, gast.Starred) for a in pairs.args) and (
                        (self.builtin(pairs.func, "enumerate") and (
                            (len(pairs.args) <= 2 and not pairs.keywords) or
                            (len(pairs.args) == 1 and [k.arg for k in pairs.keywords] ==
                             ["start"]))) or
                        (self.builtin(pairs.func, "zip") and not pairs.keywords)):
                # list(enumerate(xs)) / list(zip(a, b)): the comprehension of its tuples,
                # [(v0, v1) for v0, v1 in enumerate(xs)] (the same items, in order), which
                # carries each item's derivative (`reversed(list(enumerate(layers)))`)
                arity = 2 if self.builtin(pairs.func, "enumerate") else len(pairs.args)
                vs = [self.fresh(f"{hint}_item") for _ in range(arity)]
                comp = gast.ListComp(
                    elt=gast.Tuple(elts=[_name(v) for v in vs], ctx=gast.Load()),
                    generators=[_comp(gast.Tuple(elts=[_name(v, True) for v in vs],
                                                 ctx=gast.Store()), pairs)])
                acc = self.fresh(f"{hint}_list")
                pending.extend(self.comprehension(gast.copy_location(comp, e), acc))
                return _name(acc)
            if len(e.args) == 1 and not e.keywords and isinstance(
                    e.args[0], (gast.List, gast.Tuple)) and not any(
                    isinstance(x, gast.Starred) for x in e.args[0].elts):
                # list([a, b]) / tuple([a, b]): the display itself (a new list of those
                # items either way; as a copy of a list its items' cotangents were summed in
                # another order than tape mode's where an item is read by a run-time index)
                elts = [self.expr(x, pending, hint) for x in e.args[0].elts]
                return (gast.List if name == "list" else gast.Tuple)(elts=elts,
                                                                      ctx=gast.Load())
            return None
        if name == "sum":
            start = e.args[1] if len(e.args) == 2 else next(
                (k.value for k in e.keywords if k.arg == "start"), None)
            if not 1 <= len(e.args) <= 2 or any(k.arg != "start" for k in e.keywords):
                return None
            start = gast.Constant(value=0, kind=None) if start is None else self.expr(
                start, pending, hint)
            items = e.args[0]
            if isinstance(items, (gast.List, gast.Tuple)) and not any(
                    isinstance(x, gast.Starred) for x in items.elts):
                acc = start
                for x in items.elts:  # sum([a, b]) is (0 + a) + b
                    acc = gast.BinOp(left=acc, op=gast.Add(), right=self.expr(x, pending, hint))
                return acc
            acc = self.fresh(f"{hint}_sum")
            pending.append(_assign(acc, start))
            pending.extend(self.fold(items, acc, pending, hint, "sum"))
            return _name(acc)
        if len(e.args) >= 3 and not e.keywords and not any(
                isinstance(x, gast.Starred) for x in e.args):
            # max(a, b, c) is max([a, b, c]): the first of the largest, as Python compares
            e = gast.copy_location(gast.Call(func=e.func, args=[gast.copy_location(
                gast.List(elts=list(e.args), ctx=gast.Load()), e)], keywords=[]), e)
        if len(e.args) != 1 or e.keywords:
            return None  # max(a, b) (numpy's maximum), key= / default=: as written
        acc = self.fresh(f"{hint}_{name}")
        items = e.args[0]
        if isinstance(items, (gast.List, gast.Tuple)) and items.elts and not any(
                isinstance(x, gast.Starred) for x in items.elts):
            pending.append(_assign(acc, self.expr(items.elts[0], pending, hint)))
            for x in items.elts[1:]:
                item = self.fresh(f"{acc}_item")
                pending.append(_assign(item, self.expr(x, pending, hint)))
                pending.append(self.better(name, item, acc, []))
            return _name(acc)
        first = self.fresh(f"{acc}_first")
        pending.append(_assign(first, gast.Constant(value=True, kind=None)))
        pending.extend(self.fold(items, acc, pending, hint, name, first))
        return _name(acc)

    def better(self, name, item, acc, orelse):
        """``if item > acc: acc = item`` (max; min: <): Python keeps the first of ties."""
        op = gast.Gt() if name == "max" else gast.Lt()
        test = gast.Compare(left=_name(item), ops=[op], comparators=[_name(acc)])
        return gast.If(test=test, body=[_assign(acc, _name(item))], orelse=orelse)

    def fold(self, items, acc, pending, hint, how, first=None) -> list:
        """A loop that folds the items of `items` (an iterable or a comprehension) into acc."""
        if isinstance(items, (gast.GeneratorExp, gast.ListComp)):
            gens, elt = items.generators, items.elt
            self.scope(items)
        else:
            item = self.fresh(f"{acc}_term")
            gens = [gast.comprehension(target=_name(item, True),
                                       iter=self.expr(items, pending, hint), ifs=[],
                                       is_async=0)]
            elt = _name(item)
        if how == "sum":
            inner = [_assign(acc, gast.BinOp(left=_name(acc), op=gast.Add(), right=elt))]
        else:
            item = self.fresh(f"{acc}_item")
            inner = [_assign(item, elt), gast.If(
                test=_name(first), body=[_assign(acc, _name(item)),
                                         _assign(first, gast.Constant(value=False, kind=None))],
                orelse=[self.better(how, item, acc, [])])]
        return [self.loops(gens, inner)]

    def loops(self, generators, inner) -> gast.For:
        body = inner
        for gen in reversed(generators):
            if gen.is_async:
                raise self.error("an async comprehension", gen.iter, "use a plain loop")
            for cond in reversed(gen.ifs):
                test = gast.copy_location(gast.If(test=cond, body=body, orelse=[]), cond)
                # (`if (y := f(w)) > 0` of the comprehension: `y = f(w)` first, in the loop,
                # binding the function's `y` as Python's comprehension does: walrus.py)
                body = hoist_in_statement(test)
                if any(isinstance(n, gast.NamedExpr) for n in gast.walk(test.test)):
                    raise self.error("an assignment expression (`:=`) where it may not run "
                                     "(after `and` / `or`, in an arm of `x if c else y`)",
                                     cond, "assign on its own line")
            body = [_for(gen.target, gen.iter, body)]
        return body[0]

    def scope(self, comp) -> None:
        """Rename a comprehension's loop variables that the function uses elsewhere."""
        first_iter = {n.id for n in gast.walk(comp.generators[0].iter)
                      if isinstance(n, gast.Name)}
        targets = {n.id for g in comp.generators for n in gast.walk(g.target)
                   if isinstance(n, gast.Name)}
        rename = {t: self.fresh(t) for t in sorted(targets)
                  if self.counts[t] or t in first_iter or t in self.params}
        if not rename:
            return
        skip = {id(n) for n in gast.walk(comp.generators[0].iter)}
        for n in gast.walk(comp):
            if isinstance(n, gast.Name) and n.id in rename and id(n) not in skip:
                n.id = rename[n.id]

    def comprehension(self, comp, acc: str) -> list:
        """Statements that build `comp`'s value into `acc`."""
        kept = folded_object_comprehension(self.pf, comp, self.stores)
        if kept is not None:  # (`[l for l in net.layers if isinstance(l, Dense)]` of objects
            display, checks = kept  # known here: the ones it keeps -- objcomps.py)
            return [*checks, _assign(acc, display)]
        self.scope(comp)
        if isinstance(comp, gast.DictComp):
            init = gast.Dict(keys=[], values=[])
            inner = [_assign(acc, _call(DICT_SET, [_name(acc), comp.key, comp.value]))]
        else:
            init = gast.List(elts=[], ctx=gast.Load())
            inner = [_assign(acc, _call(LIST_APPEND, [_name(acc), comp.elt]))]
        out = [_assign(acc, init), self.loops(comp.generators, inner)]
        if isinstance(comp, gast.SetComp):
            out.append(_assign(acc, _call("set", [_name(acc)])))
        return out

    # -- xs[t][i] = v --------------------------------------------------------------------------
    def nested_write(self, s):
        """``xs[t][i] = v`` / ``d['h'][0] += v`` (a write into an item of a dict, a list or an
        array) as ``item = xs[t]; item[i] = v; xs[t] = item``: the item is written (copy on
        write), then put back where it came from, as numpy and Python leave it."""
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
        elif isinstance(s, gast.AugAssign):
            target = s.target
        else:
            return None
        if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Subscript)):
            return None
        outer = target.value
        item = self.fresh(f"{self.hint_of(outer)}_item")
        load = copy.deepcopy(outer)
        for n in gast.walk(load):
            if hasattr(n, "ctx"):
                n.ctx = gast.Load()
        inner = gast.Subscript(value=_name(item, True), slice=target.slice, ctx=gast.Store())
        inner.value.ctx = gast.Load()
        if isinstance(s, gast.AugAssign):
            write = gast.AugAssign(target=inner, op=s.op, value=s.value)
        else:
            write = _assign(inner, s.value)
        if not hasattr(self.pf, "put_back"):
            self.pf.put_back = {}
        # (aliasing.setitem: the put-back reads the old container.) {item: levels}: Python
        # writes in place into the container `outer` holds -- one level down, or more where
        # the value written is itself an item put back (`xs[t][i][j] = v`, lowered twice)
        below = s.value.id if isinstance(s, gast.Assign) and isinstance(s.value, gast.Name) \
            else None
        if _surely_advanced(outer.slice):
            # `H[[0, 1]][0] = 99`, `H[x > 0][0] = 5`: numpy's advanced index makes a copy,
            # and the write goes into that copy -- H is left as it was
            return [_assign(item, load), write]
        self.pf.put_back[item] = 1 + self.pf.put_back.get(below, 0)
        back = copy.deepcopy(outer)
        back.ctx = gast.Store()
        return [_assign(item, load), write, _assign(back, _name(item))]

    # -- x.fill(v), x.sort(): numpy's in-place methods ---------------------------------------------
    def array_method(self, s: gast.Expr):
        """``x.fill(v)`` / ``x.sort(...)`` / ``x.partition(...)`` on a name that is not a list the
        function makes: numpy changes x's memory in place, which is ``x[...] = v`` /
        ``x[...] = np.sort(x, ...)`` -- a write srcad copies on (the backward of an earlier
        ``y = x * w`` still reads the old x). (``x.put(indices, values, mode)`` on the
        function's own array is np.put's write: _InplaceWriters.) Other in-place methods
        (``put`` on another array, ``resize``, ``itemset``, ``byteswap``, ``setfield``) are
        refused: their writes would be lost."""
        v = s.value
        if not (isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute)
                and isinstance(v.func.value, gast.Name)
                and v.func.value.id not in self.lists and v.func.value.id not in self.dicts
                and not any(isinstance(a, gast.Starred) for a in v.args)
                and all(k.arg for k in v.keywords)):
            return None
        x, method = v.func.value.id, v.func.attr
        if self._not_an_array(x):  # (`BOX.put(h)`, `self.fill(v)`: a method of the user's)
            return None
        whole = gast.Subscript(value=_name(x), slice=gast.Constant(value=Ellipsis, kind=None),
                               ctx=gast.Store())
        if method == "fill" and len(v.args) == 1 and not v.keywords:
            return [_assign(whole, v.args[0])]
        if method in ("sort", "partition"):
            fn = ARRAY_SORT if method == "sort" else ARRAY_PARTITION
            return [_assign(whole, _call(fn, [_name(x), *v.args], v.keywords))]
        if method in ("put", "resize", "itemset", "byteswap", "setfield"):
            raise self.error(f"`{x}.{method}(...)` changes `{x}` in place, which srcad does not "
                             f"follow (an earlier use's backward would read the new values)",
                             s, f"write the change as an assignment, e.g. `{x}[idx] = v` for "
                             f"put, or `{x} = np.resize({x}, shape)`")
        return None

    def _rebound(self, name: str) -> bool:
        """Is `name` bound anywhere in the function other than by `name op= ...`?"""
        augmented = {id(n.target) for n in gast.walk(self.pf.tree)
                     if isinstance(n, gast.AugAssign)}
        return any(isinstance(n, gast.Name) and n.id == name and isinstance(
            n.ctx, (gast.Store, gast.Del)) and id(n) not in augmented
            for n in gast.walk(self.pf.tree))

    def _argument_extended(self, s):
        """`c += [v, ...]` of a parameter the call passes a list: Python's `list.__iadd__`
        extends the caller's list in place (every name holding it sees the new items), where
        `c = c + [...]` would leave it as it was -- a wrong value at the next call that reads
        it, silently (before the session of 2026-12-07, twelfth). Written as the
        `c.extend([...])` it is, which srcad follows into the caller's list. A transform made
        before any call waits for the first call's arguments to tell a list from an array
        (numpy adds a list display into an array in place); None for an array argument."""
        name = s.target.id
        if name in self.pf.unknown_kinds:
            if not getattr(self.pf, "deferrable", False):
                return None
            raise self.pf.error(
                f"`{name} += [...]` extends `{name}` in place if the call passes a list, and "
                f"adds into it if an array", s, cls=SharingUnknownError,
                hint="srcad writes it out once the first call's arguments tell which")
        if name not in self.pf.containers:
            return None
        call = gast.Call(func=gast.Attribute(value=_name(name), attr="extend", ctx=gast.Load()),
                         args=[s.value], keywords=[])
        return [gast.Expr(value=call)]

    def _single_binding(self, name: str):
        """The expression `name` is bound to where one assignment binds it (`k = log`, `log,
        cfg = s.log, s.cfg`: its own part) and nothing else does (`+=` aside), else None."""
        def bound_by(t):  # (the names a target binds: not those a subscript store reads)
            if isinstance(t, gast.Name):
                return [t.id]
            if isinstance(t, (gast.Tuple, gast.List)):
                return [n for e in t.elts for n in bound_by(e)]
            return []

        binds = [n for n in gast.walk(self.pf.tree) if isinstance(n, gast.Assign) and any(
            name in bound_by(t) for t in n.targets)]
        augmented = {id(n.target) for n in gast.walk(self.pf.tree)
                     if isinstance(n, gast.AugAssign)}
        bound = [n for n in gast.walk(self.pf.tree) if isinstance(n, gast.Name) and
                 n.id == name and isinstance(n.ctx, (gast.Store, gast.Del)) and
                 id(n) not in augmented]
        if len(binds) != 1 or len(bound) != 1 or len(binds[0].targets) != 1:
            return None
        target, value = binds[0].targets[0], binds[0].value
        if isinstance(target, gast.Tuple) and isinstance(value, gast.Tuple) and \
                len(target.elts) == len(value.elts):
            pairs = list(zip(target.elts, value.elts))
        else:
            pairs = [(target, value)]
        return next((v for t, v in pairs if isinstance(t, gast.Name) and t.id == name), None)

    def _held_container(self, name: str, kinds=(list, dict), depth: int = 0,
                        by_name: bool = True) -> bool:
        """Is `name` bound once (`_single_binding`) to a list or dict (of `kinds`) that an
        object known here holds (`log = s.log`, `log, cfg = s.log, s.cfg`; `B` never
        rebound), or (`by_name`) to a parameter the call passes one (`k = log`, never
        rebound), or to a name that is (`k = log` after `log = s.log`)?"""
        got = self._single_binding(name)
        stored = {n.id for n in gast.walk(self.pf.tree) if isinstance(n, gast.Name) and
                  isinstance(n.ctx, gast.Store)}
        if isinstance(got, gast.Name) and not by_name:
            return False
        if isinstance(got, gast.Name) and got.id not in self.params and depth < 8:
            return self._held_container(got.id, kinds, depth + 1)
        if isinstance(got, gast.Name):
            return got.id not in stored and got.id in self.pf.containers
        return isinstance(got, gast.Attribute) and isinstance(got.value, gast.Name) and \
            got.value.id not in stored and \
            attribute_type(self.pf, got.value.id, got.attr) in kinds

    def _argument_extended_by_alias(self, s) -> None:
        """`d = c; d += [v]` of a list argument `c`: Python extends the caller's list, which
        `c` shows; srcad's `d = d + [v]` would not -- refused, naming the route."""
        name = s.target.id
        sources = {n.value.id for n in gast.walk(self.pf.tree) if isinstance(n, gast.Assign)
                   and isinstance(n.value, gast.Name) and n.value.id in self.params and any(
                       isinstance(t, gast.Name) and t.id == name for t in n.targets)}
        for p in sorted(sources):
            if p in self.pf.unknown_kinds and getattr(self.pf, "deferrable", False):
                raise self.pf.error(
                    f"`{name} += [...]` extends in place what `{name}` holds, the argument "
                    f"`{p}` if it is a list", s, cls=SharingUnknownError,
                    hint="srcad writes it out once the first call's arguments tell")
            if p in self.pf.containers:
                raise self.error(
                    f"`{name} += [...]` extends in place the list argument `{p}` through a "
                    f"second name: Python changes the caller's list, which `{p}` shows; srcad "
                    f"follows such a change only by the argument's own name", s,
                    f"write `{p} += [...]` (or `{p}.extend(...)`), or copy it first "
                    f"(`{name} = list({p})`)")

    def _not_an_array(self, x: str) -> bool:
        """Does name `x` certainly hold something other than an array here: an object the
        call is specialised on (`self`), or a free name the module binds to one?"""
        if x in self.pf.known:
            held = self.pf.known[x]
        elif x in self.stores and self._held_container(x):
            # (`k = log; k.sort()` of a list argument, `log, cfg = s.log, s.cfg` of an
            # object's: the list's own method -- numpy's `k[...] = np.sort(k)` failed on it,
            # a TypeError blamed on the user's code, before the session of 2026-12-07,
            # fourteenth)
            return True
        elif x in self.params or x in self.stores:
            # (a parameter the call passes a list or dict, never rebound: `c.sort()` is the
            # list's own method -- numpy's `c[...] = np.sort(c)` would fail on it)
            # (`c += [v]` is the list's extend: no rebinding -- `_argument_extended`)
            return x in self.pf.containers and not self._rebound(x)
        else:
            try:
                held = self.pf.resolve(x)
            except Exception:  # (a name the module does not hold: the code says so later)
                return False
        return held is not UNRESOLVED and not isinstance(held, (np.ndarray, np.generic))

    # -- lst.append(v) ---------------------------------------------------------------------------
    def append(self, lst, value):
        return _assign(lst, _call(LIST_APPEND, [_name(lst), value]))

    def list_pop(self, s):
        """``v = lst.pop()`` / ``lst.pop(i)`` of a list the function makes and no other name
        shares: ``v = lst[i]`` (``lst[-1]``; Python's IndexError where it is empty), then
        ``lst = lst[:i] + lst[i:][1:]`` (a negative i too) -- values, as `.append` is
        followed. Other lists' pops are left to the stack rows (a list given to the function
        is refused there: runtime.cotangents)."""
        v = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
        if not (isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute)
                and v.func.attr == "pop" and isinstance(v.func.value, gast.Name)
                and v.func.value.id in self.lists and len(v.args) <= 1 and not v.keywords
                and not any(isinstance(a, gast.Starred) for a in v.args)):
            return None
        if isinstance(s, gast.Assign) and not (len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name)):
            return None
        lst, out = v.func.value.id, []
        if v.args and not isinstance(v.args[0], (gast.Constant, gast.Name)):
            name = self.fresh(f"{lst}_at")
            out.append(_assign(name, v.args[0]))
            at = _name(name)
        else:
            at = v.args[0] if v.args else gast.UnaryOp(op=gast.USub(), operand=gast.Constant(
                value=1, kind=None))
        item = gast.Subscript(value=_name(lst), slice=copy.deepcopy(at), ctx=gast.Load())
        if isinstance(s, gast.Assign):
            out.append(gast.Assign(targets=s.targets, value=item, type_comment=None))
        else:  # (`lst.pop()` as a statement: Python's IndexError on an empty list all the same)
            out.append(gast.Expr(value=item))
        head = gast.Subscript(value=_name(lst), slice=gast.Slice(
            lower=None, upper=copy.deepcopy(at), step=None), ctx=gast.Load())
        tail = gast.Subscript(value=gast.Subscript(value=_name(lst), slice=gast.Slice(
            lower=copy.deepcopy(at), upper=None, step=None), ctx=gast.Load()),
            slice=gast.Slice(lower=gast.Constant(value=1, kind=None), upper=None, step=None),
            ctx=gast.Load())
        out.append(_assign(lst, _call(LIST_CONCAT, [head, tail])))
        return out

    _READERS = ("len", "sum", "list", "tuple", "sorted", "max", "min", "enumerate", "zip",
                "reversed", "any", "all")

    def count_pops(self) -> None:
        """Lists the function makes, changes only by ``.pop()`` from the end, and otherwise
        reads (``while stack:``, ``len``, a loop over it, an index, numpy or a builtin that
        reads it): a count of the items left instead of a new list at each pop --
        ``stack_n = len(stack)`` after each binding, a pop ``stack[stack_n - 1:stack_n][0]``
        (Python's IndexError on an empty list) then ``stack_n = stack_n - 1``, every other
        read ``stack[:stack_n]``. The list itself never changes, so each item's cotangent is
        added where it is read, in the order tape mode adds it (a list rebuilt at each pop,
        `list_pop`, summed them where the list was made: the last bits differed). Pops that
        `list_pop` handles otherwise: ``pop(i)``, a list also appended to, a pop in a
        statement that reads the list again."""
        tree = self.pf.tree
        parents = {id(c): n for n in gast.walk(tree) for c in gast.iter_child_nodes(n)}
        stmt_of = {}
        for st in gast.walk(tree):
            if isinstance(st, gast.stmt):
                for n in gast.walk(st):
                    stmt_of.setdefault(id(n), st)
        # (the innermost statement: walk order visits outer statements first, so overwrite)
        for st in gast.walk(tree):
            if isinstance(st, gast.stmt) and not isinstance(
                    st, (gast.For, gast.While, gast.If, gast.With, gast.Try)):
                for n in gast.walk(st):
                    stmt_of[id(n)] = st
        for loop in gast.walk(tree):  # (Python's iterator sees the list change as it walks it)
            if not (isinstance(loop, gast.For) and isinstance(loop.iter, gast.Name) and
                    loop.iter.id in self.lists):
                continue
            lst = loop.iter.id
            changed = [n for n in gast.walk(loop) if isinstance(n, gast.Call) and isinstance(
                n.func, gast.Attribute) and isinstance(n.func.value, gast.Name) and
                n.func.value.id == lst and n.func.attr in MUTATING]
            if changed:
                raise self.error(
                    f"`{lst}.{changed[0].func.attr}(...)` inside a loop over `{lst}` itself",
                    changed[0], f"loop over a copy (`for v in list({lst}):`), or pop in a "
                    f"`while {lst}:` loop")
        nested = {id(n) for d in gast.walk(tree) if d is not tree and isinstance(
            d, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)) for n in gast.walk(d)}
        compound = (gast.For, gast.While, gast.If, gast.With, gast.Try)
        for lst in sorted(self.lists):
            names = [n for n in gast.walk(tree) if isinstance(n, gast.Name) and n.id == lst]
            if any(id(n) in nested for n in names):
                continue  # (a nested function's reads or pops: left to list_pop)
            binds, pops, reads, ok = [], [], [], True
            for n in names:
                parent = parents.get(id(n))
                if isinstance(n.ctx, gast.Store):
                    st = parent
                    if isinstance(st, gast.Assign) and len(st.targets) == 1 and \
                            st.targets[0] is n:
                        binds.append(st)
                        continue
                    ok = False
                    break
                if not isinstance(n.ctx, gast.Load):
                    ok = False
                    break
                if isinstance(parent, gast.Attribute) and parent.value is n:
                    call = parents.get(id(parent))
                    if parent.attr == "pop" and isinstance(call, gast.Call) and \
                            call.func is parent and not call.keywords and (not call.args or (
                                len(call.args) == 1 and isinstance(call.args[0], gast.UnaryOp)
                                and isinstance(call.args[0].op, gast.USub) and
                                isinstance(call.args[0].operand, gast.Constant) and
                                call.args[0].operand.value == 1)):
                        pops.append(call)
                        continue
                    ok = False  # (another method: append, extend, ...)
                    break
                if self._reads_only(n, parent, parents):
                    reads.append(n)
                    continue
                ok = False
                break
            if not ok or not pops or not binds:
                continue
            by_stmt = Counter(id(stmt_of.get(id(c))) for c in pops)
            if any(v > 1 for v in by_stmt.values()) or any(
                    id(stmt_of.get(id(r))) in by_stmt for r in reads) or any(
                    stmt_of.get(id(c)) is None or isinstance(stmt_of[id(c)], compound) or
                    _evaluated_maybe_or_often(stmt_of[id(c)], c) for c in pops):
                continue
            loops = [parents[id(r)] for r in reads if isinstance(parents.get(id(r)), gast.For)
                     and parents[id(r)].iter is r]
            count = self.fresh(f"{lst}_n")
            for r in reads:
                loop = parents.get(id(r))
                if isinstance(loop, gast.For) and loop.iter is r and \
                        "range" not in self.counts_store and \
                        self.pf.resolve("range") is range:
                    # `for v in stack:` -- `for k in range(stack_n): v = stack[k]`: each item
                    # read by its index, as the pops read theirs (a loop over a slice of
                    # the list summed a repeated item's cotangents in another order)
                    k = self.fresh(f"{lst}_k")
                    read = gast.copy_location(_assign(loop.target, gast.Subscript(
                        value=_name(lst), slice=_name(k), ctx=gast.Load())), loop)
                    loop.target = _name(k, True)
                    loop.iter = gast.copy_location(_call("range", [_name(count)]), r)
                    loop.body = [read] + loop.body
                    continue
                self._replace(parents, r, gast.Subscript(value=_name(lst), slice=gast.Slice(
                    lower=None, upper=_name(count), step=None), ctx=gast.Load()))
            after = {}
            for c in pops:
                last = gast.BinOp(left=_name(count), op=gast.Sub(),
                                  right=gast.Constant(value=1, kind=None))
                item = gast.Subscript(value=gast.Subscript(
                    value=_name(lst), slice=gast.Slice(lower=last, upper=_name(count),
                                                       step=None), ctx=gast.Load()),
                    slice=gast.Constant(value=0, kind=None), ctx=gast.Load())
                self._replace(parents, c, item)
                after[id(stmt_of[id(c)])] = gast.copy_location(_assign(count, gast.BinOp(
                    left=_name(count), op=gast.Sub(), right=gast.Constant(value=1, kind=None))),
                    stmt_of[id(c)])
            for st in binds:
                after[id(st)] = gast.copy_location(
                    _assign(count, _call("len", [_name(lst)])), st)
            self._insert_after(tree, after)
            parents = {id(c): n for n in gast.walk(tree) for c in gast.iter_child_nodes(n)}

    def _reads_only(self, n, parent, parents) -> bool:
        """Is this load of a list a read that cannot change it?"""
        if isinstance(parent, gast.Subscript) and parent.value is n and \
                isinstance(parent.ctx, gast.Load):
            return True
        if isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is n:
            return True
        if isinstance(parent, (gast.While, gast.If, gast.IfExp, gast.Assert)) and \
                parent.test is n:
            return True
        if isinstance(parent, gast.UnaryOp) and isinstance(parent.op, gast.Not):
            return True
        if isinstance(parent, gast.Call) and n in parent.args:
            f = parent.func
            if isinstance(f, gast.Name) and f.id in self._READERS and \
                    self.builtin(f, f.id):
                return True
            root = f
            while isinstance(root, gast.Attribute):
                root = root.value
            if not (isinstance(f, gast.Attribute) and isinstance(root, gast.Name) and
                    root.id not in self.counts_store):
                return False
            try:
                return self.pf.resolve(root.id) is np
            except Exception:  # noqa: BLE001  (not resolvable: not numpy)
                return False
        return False

    @staticmethod
    def _replace(parents, old, new) -> None:
        parent = parents[id(old)]
        gast.copy_location(new, old)
        for field, value in gast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
            elif isinstance(value, list):
                setattr(parent, field, [new if v is old else v for v in value])

    @staticmethod
    def _insert_after(tree, after: dict) -> None:
        """Each statement whose id is a key of `after` followed by that statement."""
        for node in gast.walk(tree):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if isinstance(block, list) and any(id(st) in after for st in block):
                    out = []
                    for st in block:
                        out.append(st)
                        if id(st) in after:
                            out.append(after.pop(id(st)))
                    setattr(node, field, out)

    def pop_hoisted(self, s):
        """A statement reading one ``lst.pop(...)`` of such a list inside an expression
        (``h = np.tanh(h @ stack.pop())``): the pop first, under a name of its own, then the
        statement -- where nothing else in it reads the list and the pop runs once each time
        the statement runs, so Python's order of evaluation cannot show."""
        if not isinstance(s, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)) or \
                s.value is None:
            return None
        pops = [n for n in gast.walk(s.value) if isinstance(n, gast.Call) and
                isinstance(n.func, gast.Attribute) and n.func.attr == "pop" and
                isinstance(n.func.value, gast.Name) and n.func.value.id in self.lists]
        if len(pops) != 1 or pops[0] is s.value:
            return None
        pop, lst = pops[0], pops[0].func.value.id
        reads = [n for n in gast.walk(s) if isinstance(n, gast.Name) and n.id == lst]
        if len(reads) != 1 or _evaluated_maybe_or_often(s, pop):
            return None
        name = self.fresh(f"{lst}_popped")
        parents = {id(c): n for n in gast.walk(s) for c in gast.iter_child_nodes(n)}
        parent = parents[id(pop)]
        for field, value in gast.iter_fields(parent):
            if value is pop:
                setattr(parent, field, _name(name))
            elif isinstance(value, list):
                setattr(parent, field, [_name(name) if v is pop else v for v in value])
        return [_assign(name, pop), s]

    def in_place_operator(self, s):
        """`operator.isub(y, t)`, `y.__iadd__(t)` (as a statement, or assigned: `z =
        operator.imul(y, c)`) are Python's `y -= t` without the rebinding of y: `tmp = y; tmp
        -= t` (then `z = tmp`) -- an array is written in place, which y shares; a number is
        not, and y keeps it, as Python does."""
        value = s.value if isinstance(s, (gast.Expr, gast.Assign)) else None
        if not isinstance(value, gast.Call) or value.keywords or \
                (isinstance(s, gast.Assign) and len(s.targets) != 1):
            return None
        f = value.func
        if isinstance(f, gast.Attribute) and f.attr in _IN_PLACE_DUNDERS and \
                len(value.args) == 1:
            op, operands = _IN_PLACE_DUNDERS[f.attr], [f.value, value.args[0]]
        elif len(value.args) == 2 and self.operator_function(f) is not None:
            op, operands = self.operator_function(f), value.args
        else:
            return None
        if any(isinstance(a, gast.Starred) for a in operands):
            return None
        tmp = self.fresh("in_place")
        out = [_assign(tmp, operands[0]),
               gast.AugAssign(target=_name(tmp, True), op=op(), value=operands[1])]
        if isinstance(s, gast.Assign):
            out.append(gast.Assign(targets=s.targets, value=_name(tmp), type_comment=None))
        return out

    def operator_function(self, f):
        """The gast operator of the in-place function `f` names (`operator.isub`, `isub`
        imported from operator), else None."""
        obj = resolve_dotted(self.pf, f, self.counts_store)
        return next((op for fn, op in _IN_PLACE_OPERATORS.items() if fn is obj), None)

    def list_method(self, s: gast.Expr):
        v = s.value
        if not (isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute)
                and isinstance(v.func.value, gast.Name) and v.func.value.id in self.lists
                and not v.keywords and len(v.args) <= 2):
            return None
        lst, method = v.func.value.id, v.func.attr
        if not v.args:
            # (`hs.reverse()` is `hs = hs[::-1]`, `hs.clear()` is `hs = []`: the list has no
            # other name, so rebinding this one is the change)
            if method == "reverse":
                return [_assign(lst, gast.Subscript(value=_name(lst), slice=gast.Slice(
                    lower=None, upper=None, step=gast.Constant(value=-1, kind=None)),
                    ctx=gast.Load()))]
            if method == "clear":
                return [_assign(lst, gast.List(elts=[], ctx=gast.Load()))]
            return None
        if len(v.args) == 2 and method != "insert":
            return None
        if method == "append":
            return [self.append(lst, v.args[0])]
        if method == "insert" and len(v.args) == 2:
            # lst.insert(i, x) is lst[:i] + [x] + lst[i:] (the same clamping of i)
            i, x = v.args
            one = gast.List(elts=[x], ctx=gast.Load())
            if isinstance(i, gast.Constant) and i.value == 0:
                return [_assign(lst, _call(LIST_CONCAT, [one, _name(lst)]))]
            head = gast.Subscript(value=_name(lst), slice=gast.Slice(
                lower=None, upper=i, step=None), ctx=gast.Load())
            tail = gast.Subscript(value=_name(lst), slice=gast.Slice(
                lower=copy.deepcopy(i), upper=None, step=None), ctx=gast.Load())
            return [_assign(lst, _call(LIST_CONCAT, [_call(LIST_CONCAT, [head, one]), tail]))]
        if method == "extend":
            item = self.fresh(f"{lst}_item")
            return [_for(_name(item, True), v.args[0], [self.append(lst, _name(item))])]
        return None


# the in-place operators as functions and methods: `operator.isub(y, t)`, `y.__isub__(t)`
_IN_PLACE = {"add": gast.Add, "sub": gast.Sub, "mul": gast.Mult, "truediv": gast.Div,
             "floordiv": gast.FloorDiv, "mod": gast.Mod, "pow": gast.Pow,
             "matmul": gast.MatMult}
_IN_PLACE_DUNDERS = {f"__i{k}__": v for k, v in _IN_PLACE.items()}
_IN_PLACE_OPERATORS = {getattr(operator, f"i{k}"): v for k, v in _IN_PLACE.items()}


class _SplitParallel(gast.NodeTransformer):
    """``hs, zs = [h0], []`` is ``hs = [h0]; zs = []`` where no name on the left is read on
    the right (Python evaluates the right first; with no overlap the order cannot show): each
    list is then one the function builds, which ``.append`` follows."""

    def visit_Assign(self, node):
        (target,) = node.targets if len(node.targets) == 1 else (None,)
        value = node.value
        if not (isinstance(target, (gast.Tuple, gast.List)) and
                isinstance(value, (gast.Tuple, gast.List)) and
                len(target.elts) == len(value.elts) and
                all(isinstance(t, gast.Name) for t in target.elts)):
            return node
        names = {t.id for t in target.elts}
        if len(names) != len(target.elts) or any(
                isinstance(n, gast.Name) and n.id in names for v in value.elts
                for n in gast.walk(v)):
            return node
        return [gast.copy_location(gast.Assign(targets=[t], value=v, type_comment=None), node)
                for t, v in zip(target.elts, value.elts)]

    def visit_FunctionDef(self, node):  # (a nested function: its own, lowered on its own)
        if node is not self.top:
            return node
        self.generic_visit(node)
        return node

    visit_Lambda = visit_ClassDef = lambda self, node: node


def _fresh_list(v) -> bool:
    """A list made by the expression (a display, a comprehension, `list(...)`, or the lists'
    `a + b` / append srcad writes: attrstate.py's `self.cache.append(z)`)."""
    return isinstance(v, (gast.List, gast.ListComp)) or (
        isinstance(v, gast.Call) and isinstance(v.func, gast.Name) and
        v.func.id in ("list", LIST_CONCAT, LIST_APPEND))


def _split_rebound_lists(tree, taken: set) -> None:
    """``out = []; ...out.append(v)...; out = np.array(out)``: from the top-level statement that
    gives a list's name another kind of value, the name is a new one (``out_2 =
    np.array(out)`` and every later use): the list keeps a name that holds only lists, so its
    appends are followed. Straight-line code at the top level only: there each later
    statement sees the new value, as in Python."""
    body = tree.body
    for i, s in enumerate(body):
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
                isinstance(s.targets[0], gast.Name)) or _fresh_list(s.value):
            continue
        name = s.targets[0].id
        earlier = [n for st in body[:i] for n in gast.walk(st)
                   if isinstance(n, gast.Assign) and any(
                       isinstance(t, gast.Name) and t.id == name for t in n.targets)]
        if not earlier or not all(_fresh_list(n.value) for n in earlier):
            continue
        if any(isinstance(n, (gast.AugAssign, gast.For, gast.comprehension)) and any(
                isinstance(x, gast.Name) and x.id == name for x in gast.walk(n.target))
               for st in body[:i] for n in gast.walk(st)):
            continue
        new = fresh(f"{name}_L{s.lineno}", taken)
        s.targets[0].id = new
        for st in body[i + 1:]:
            for n in gast.walk(st):
                if isinstance(n, gast.Name) and n.id == name:
                    n.id = new
        return _split_rebound_lists(tree, taken)


# numpy's in-place methods _Lowerer.array_method lowers on a name (`x.sort()`)
_VIEW_METHODS = ("sort", "fill", "partition")


class _InplaceWriters(gast.NodeTransformer):
    """``np.put(a, ind, v, mode)``, ``np.copyto(dst, src, where=w)``,
    ``np.fill_diagonal(a, val, wrap)``, ``np.put_along_axis(a, indices, values, axis)``,
    ``np.place(a, mask, vals)``, ``np.putmask(a, mask, values)`` and ``a.put(indices,
    values, mode)`` as statements writing into a local array become the subscript
    assignment numpy performs -- ``a[put_index(a, ind, mode)] = ravel(v)[put_take(v, ind)]``,
    ``dst[...] = src`` (``where(w, src, dst)`` with where=), ``a[diagonal_index(a, wrap)] =
    val``, ``a[along_axis_index(a, indices, axis)] = values``, ``a[mask_index(a, mask)] =
    ravel(vals)[place_take(vals, mask, a)]`` (putmask: ``putmask_take``); the `*_take`
    gathers repeat a short value as numpy does -- which srcad differentiates copy-on-write,
    with the array's views and aliases (aliasing.py). Any other form (into an expression,
    star arguments, copyto's casting=) is left as written: a call with no rule, refused where
    a differentiated value reaches it. (numpy repeats a shorter diagonal value cyclically;
    the assignment broadcasts instead and raises where that differs.) An argument read twice
    (the values, put's indices, the mask) that is not a name or a constant is computed once,
    into a name, before the write, in the call's order."""

    def __init__(self, pf, stored: set, taken: set):
        self.pf, self.stored, self.taken = pf, stored, taken

    def _callee(self, func):
        obj = self._resolve(func)
        try:
            return runtime_signal.INPLACE_WRITERS.get(obj) and obj
        except TypeError:  # (unhashable)
            return None

    def _ufunc_at(self, v):
        """``np.add.at(a, indices, b)`` / ``np.negative.at(a, indices)`` into a local array:
        ``a[...] = add_at(a, indices, b)`` (srcad/runtime_at.py: numpy's call on a copy)."""
        func = v.func
        if not (isinstance(func, gast.Attribute) and func.attr == "at") or v.keywords:
            return None
        ufunc = self._resolve(func.value)
        form = runtime_at.AT_FORMS.get(ufunc) if isinstance(ufunc, np.ufunc) else None
        if form is None or len(v.args) != ufunc.nin + 1:
            return None
        pre = []
        dst = self._view_target(v.args[0], pre, v)
        if dst is None:
            return None
        value = _call(AT_NAMES[form], [_name(dst.id), *v.args[1:]])
        sub = gast.Subscript(value=_name(dst.id, store=False),
                             slice=gast.Constant(value=Ellipsis, kind=None), ctx=gast.Store())
        return pre + [_assign(sub, value)]

    def _view_target(self, dst, pre: list, at):
        """The name the write goes into: `dst` itself when it names the function's own
        array; for a subscript or ``.T`` of one (``np.putmask(y[0], m, v)``: numpy writes
        through the view, or into a copy that is then lost, as a fancy index makes), a fresh
        name holding it (appended to `pre`), which the write goes into and aliasing.py
        follows back to the array; None for another array (the call is left as written).
        Another expression over the function's arrays (``y.reshape(6)``, which may be a
        view) is refused: numpy's write through it would be lost to the gradient."""
        if isinstance(dst, gast.Name):
            return dst if dst.id in self.stored else None
        root = dst
        while isinstance(root, gast.Subscript) or (
                isinstance(root, gast.Attribute) and root.attr in ("T", "mT")):
            root = root.value
        if not (isinstance(root, gast.Name) and root.id in self.stored):
            if any(isinstance(n, gast.Name) and n.id in self.stored for n in gast.walk(dst)):
                raise self.pf.error(
                    f"the write into `{gast.unparse(dst)}` (numpy may write through a view "
                    f"there) is not followed by srcad", at,
                    hint="write into the array itself (`y = ...; np.putmask(y, m, v)`), a "
                    "subscript of it or its `.T`", cls=UnsupportedSyntaxError)
            return None
        name = fresh(f"{root.id}_view", self.taken)
        pre.append(_assign(name, dst))
        return _name(name)

    def _resolve(self, func):
        names = []
        while isinstance(func, gast.Attribute):
            names.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name) or func.id in self.stored:
            return None
        obj = self.pf.resolve(func.id)
        for n in reversed(names):
            obj = getattr(obj, n, None)
        return obj

    def visit_Expr(self, node):
        v = node.value
        if not isinstance(v, gast.Call):
            return node
        if any(isinstance(a, gast.Starred) for a in v.args) or \
                any(k.arg is None for k in v.keywords):
            if self._callee(v.func) or self._put_method(v.func) or (
                    isinstance(v.func, gast.Attribute) and v.func.attr == "at" and
                    isinstance(self._resolve(v.func.value), np.ufunc)):
                raise self.pf.error(
                    f"`{gast.unparse(v.func)}(...)` with star arguments writes into an array "
                    f"srcad cannot see", node, hint="pass the arguments themselves "
                    "(the array written into by its name), which srcad differentiates",
                    cls=UnsupportedSyntaxError)
            return node
        at = self._ufunc_at(v)
        if at is not None:
            return [gast.copy_location(s, node) for s in at]
        if isinstance(v.func, gast.Attribute) and v.func.attr in _VIEW_METHODS and \
                not isinstance(v.func.value, gast.Name):
            # `y[0].sort()`: numpy sorts y's row in place -- the method on a name holding
            # the view (`y_view = y[0]; y_view.sort()`, lowered as x.sort() is), which
            # aliasing.py writes back into y; a copy (`y[[0, 1]]`) is sorted and lost
            pre = []
            dst = self._view_target(v.func.value, pre, node)
            if dst is None:
                return node
            call = gast.Call(func=gast.Attribute(value=_name(dst.id), attr=v.func.attr,
                                                 ctx=gast.Load()),
                             args=v.args, keywords=v.keywords)
            return [gast.copy_location(s, node) for s in pre + [gast.Expr(value=call)]]
        keywords = {k.arg: k.value for k in v.keywords}
        fn = self._callee(v.func)
        if not fn and self._put_method(v.func):  # x.put(indices, values, mode): np.put's
            try:
                bound = _PUT_METHOD.bind(*v.args, **keywords).arguments
            except TypeError:
                return node
            fn, keywords = np.put, {"a": v.func.value, "ind": bound["indices"],
                                    "v": bound["values"]}
            if "mode" in bound:
                keywords["mode"] = bound["mode"]
            v = gast.Call(func=v.func, args=[], keywords=[])
        if not fn:
            return node
        try:
            bound = runtime_signal.bind_inplace(fn, v.args, keywords)
        except TypeError:
            return node  # (numpy's own error, when it runs)
        kind = runtime_signal.INPLACE_WRITERS[fn]
        pre = []
        dst = self._view_target(bound[runtime_signal.TARGETS.get(kind, "a")], pre, node)
        if dst is None or "casting" in bound:
            return node
        target = _name(dst.id)
        if kind == "put_along_axis":
            index = _call(ALONG_AXIS_INDEX, [_name(dst.id), bound["indices"], bound["axis"]])
            value = bound["values"]
        elif kind in ("place", "putmask"):
            mask = self._once(bound["mask"], f"{dst.id}_mask", pre)
            vals = self._once(bound["vals" if kind == "place" else "values"],
                              f"{dst.id}_values", pre)
            index = _call(MASK_INDEX, [_name(dst.id), mask])
            value = gast.Subscript(value=_call(RAVEL, [vals]), slice=_call(
                TAKES[kind], [copy.deepcopy(vals), copy.deepcopy(mask), _name(dst.id)]),
                ctx=gast.Load())
        elif kind == "put":
            ind = self._once(bound["ind"], f"{dst.id}_ind", pre)
            vals = self._once(bound["v"], f"{dst.id}_values", pre)
            extra = [bound["mode"]] if "mode" in bound else []
            index = _call(PUT_INDEX, [_name(dst.id), ind, *extra])
            value = gast.Subscript(value=_call(RAVEL, [vals]), slice=_call(
                PUT_TAKE, [copy.deepcopy(vals), copy.deepcopy(ind)]), ctx=gast.Load())
        elif kind == "fill_diagonal":
            extra = [bound["wrap"]] if "wrap" in bound else []
            index = _call(DIAGONAL_INDEX, [_name(dst.id), *extra])
            value = bound["val"]
        else:
            index = gast.Constant(value=Ellipsis, kind=None)
            value = bound["src"]
            if "where" in bound:
                value = _call(WHERE, [bound["where"], value, _name(dst.id)])
        sub = gast.Subscript(value=target, slice=index, ctx=gast.Store())
        write = gast.Assign(targets=[sub], value=value, type_comment=None)
        return [gast.copy_location(s, node) for s in pre + [write]]

    def _put_method(self, func) -> bool:
        """Is `func` ``x.put`` of the function's own array x (a name it assigns or a
        parameter), or of a subscript or ``.T`` of it?"""
        if not (isinstance(func, gast.Attribute) and func.attr == "put"):
            return False
        root = func.value
        while isinstance(root, gast.Subscript) or (
                isinstance(root, gast.Attribute) and root.attr in ("T", "mT")):
            root = root.value
        return isinstance(root, gast.Name) and root.id in self.stored

    def _once(self, expr, hint, pre: list):
        """`expr` itself when reading it twice is reading it once (a name, a constant), else
        a fresh name it is computed into (appended to `pre`)."""
        if isinstance(expr, (gast.Name, gast.Constant)):
            return expr
        name = fresh(hint, self.taken)
        pre.append(_assign(name, expr))
        return _name(name)


class _DeletedItems(gast.NodeTransformer):
    """``del d[k]`` / ``del xs[i]`` as Python's ``d_deleted = d.pop(k)`` / ``xs.pop(i)``, the
    item dropped -- a key gone from the dict, the later items of a list one place down,
    which the pops below follow (each target in turn, as `del` takes them). Ignored as
    ``del x`` is, before the session of 2026-12-06, ninth: a wrong value and gradient,
    silently. ``del xs[a:b]`` and ``del obj.attr`` are refused; an array's item cannot be
    deleted (its ``.pop`` fails where numpy's ``del`` does)."""

    def __init__(self, pf, taken: set):
        self.pf, self.taken = pf, taken

    def visit_FunctionDef(self, node):  # (a nested function's own: closures.py's)
        return node if node is not self.pf.tree else self.generic_visit(node)

    def visit_Delete(self, node):
        out = []
        for t in node.targets:
            if isinstance(t, gast.Attribute):
                # (`del layer.scale`: a later `getattr(layer, "scale", d)` or `hasattr`
                # reads what is left, which srcad, reading the deleted value, did not --
                # a wrong value, silently, before the session of 2026-12-06, ninth)
                raise self.pf.error(
                    "`del obj.attr`: srcad does not follow an attribute deleted", node,
                    cls=UnsupportedSyntaxError,
                    hint="store the value the attribute should have instead "
                    "(`obj.attr = None`), or delete it outside the differentiated function")
            if not isinstance(t, gast.Subscript):
                out.append(gast.copy_location(gast.Delete(targets=[t]), node))
                continue  # (`del x` only frees memory: no value changes)
            if isinstance(t.slice, gast.Slice):
                raise self.pf.error(
                    "`del xs[a:b]`: srcad deletes the items of a list or dict one at a time",
                    node, cls=UnsupportedSyntaxError,
                    hint="delete one item at a time (`del xs[i]`), or build the list you "
                    "want (`xs = xs[:a] + xs[b:]`)")
            value = copy.deepcopy(t.value)
            value.ctx = gast.Load()
            stem = value.id if isinstance(value, gast.Name) else "item"
            name = fresh(f"{stem}_deleted", self.taken)
            self.taken.add(name)
            out.append(_located([_assign(name, gast.Call(
                func=gast.Attribute(value=value, attr="pop", ctx=gast.Load()),
                args=[copy.deepcopy(t.slice)], keywords=[]))], node)[0])
        return out


def lower_python(pf, taken: set) -> None:
    """Rewrite `pf.tree` in place (see the module docstring)."""
    stored = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
              and isinstance(n.ctx, gast.Store)} | {
        a.id for a in pf.tree.args.posonlyargs + pf.tree.args.args}
    _InplaceWriters(pf, stored, taken).visit(pf.tree)
    _DeletedItems(pf, taken).visit(pf.tree)
    split = _SplitParallel()
    split.top = pf.tree
    split.visit(pf.tree)
    _split_rebound_lists(pf.tree, taken)
    low = _Lowerer(pf, taken)
    # what its callees are told (normalize.user_call): the dicts this function holds
    pf.dict_known = frozenset(low.dict_paths) | {(d,) for d in low.dicts}
    low.count_pops()
    pf.tree.body = low.body(pf.tree.body)
    pf.closure.update({k: v for k, v in INTERNAL.items()})
    gast.fix_missing_locations(pf.tree)


def _grouped_by_key(up, node, parent: dict, fresh) -> bool:
    """Is `up` (the parent of a read of a dict's name `node`) `d.setdefault(k, [])` whose
    result is only appended to, as a statement: `d.setdefault(k, []).append(v)`?"""
    call = parent.get(id(up))
    if not (isinstance(up, gast.Attribute) and up.value is node and up.attr == "setdefault"
            and isinstance(call, gast.Call) and call.func is up and len(call.args) == 2
            and not call.keywords and isinstance(call.args[1], fresh)):
        return False
    user = parent.get(id(call))
    outer = parent.get(id(user))
    return isinstance(user, gast.Attribute) and user.value is call and \
        user.attr in ("append", "extend") and isinstance(outer, gast.Call) and \
        outer.func is user and isinstance(parent.get(id(outer)), gast.Expr)
