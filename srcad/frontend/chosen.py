"""Functions chosen by values known when the function is normalised (gast -> gast).

A model often picks its activation by a name or a flag:

    def forward(x, W, kind="relu"):         forward(x, W, "tanh") is normalised as
        if kind == "relu":                      act = np.tanh
            act = relu                          h = act(x @ W)
        elif kind == "tanh":
            act = np.tanh
        else:
            act = lambda z: z
        h = act(x @ W)

The test reads only values srcad specialises the code on: a string argument (each value its
own specialisation: transformed.py `_known_objects`), an int or bool argument (the
specialisation's key holds its value; a transform made before any call waits for the first
call's arguments, CountUnknownError), an item of a dict argument that holds a string, an
int or a bool (`kwargs.get("act", "elu")`: the key holds those values too), a module global
(guarded: rebinding it rebuilds the code) or an attribute of an object known here (guarded
too). Python's branch is then known, and this pass keeps only it -- so the name is bound
once, to the function Python would call, which srcad follows as it follows any function
value. Only the `if`s that bind a name the function calls (or a list of functions a loop
walks and calls) are folded: other branches stay code, as before. A test that reads a
differentiated value (`if x.sum() > 0: act = relu`) is left as written, and the call of the
chosen name is refused at its line, naming it. So is a value the call may change before
the test reads it: an attribute of an object a method is called on or that is given to a
call, a list changed in place, a dict stored into or popped of that key -- each is read as
the code runs, never folded to what it held before the call.

The same values fold reads of a dict argument (`kwargs.get("act", "elu")`, `cfg["act"]`)
to the string they hold, so a registry indexed by them (`ACTS[kwargs.get("act", "elu")]`)
is known; and a dict display of functions made in the function (`acts = {"relu": lambda
z: ..., "tanh": np.tanh}`), indexed by a known key (`acts[name](x)`), reads the item
itself (each lambda bound to a name of its own first, which closures.py lifts).

A loop over strings known here (`for name in spec: h = Layer.registry[name]()(h)`, spec a
tuple argument or default, or a display) whose body calls what the name picks is written out
once per string, so objects.py sees each class made and called; a list comprehension picking
by them (`[getattr(np, k) for k in kinds]`) is the display of what it picks. `FNS[i](x)` with
i an int argument reads the item at that constant index. Displays of functions walked
through zip / enumerate / a dict display's .items() / .values() become one display of the
pairs, which the normaliser unrolls (loops.py).

Input: a `ParsedFunction` before the fence. Output: the same, in place.
"""

from __future__ import annotations

import ast
import copy
import inspect
import operator
import textwrap
import types

import gast

from ..errors import CountUnknownError
from ..naming import fresh
from . import guards
from .objects import mutated_names
from .opaque import MUTATING, folds_as_dict_item, is_library_module, is_user_object
from .parse import UNRESOLVED, rewrite_blocks

_SCALARS = (str, int, bool, float, type(None))
_COMPARE = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
            gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
            gast.Is: operator.is_, gast.IsNot: operator.is_not,
            gast.In: lambda a, b: a in b, gast.NotIn: lambda a, b: a not in b}
_DICT_READERS = frozenset({"get", "keys", "values", "items", "copy", "__getitem__",
                           "__contains__"})


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _const(v, at):
    return gast.copy_location(gast.Constant(value=v, kind=None), at)


class _Known:
    """What an expression of the function holds in every call srcad builds this code for,
    or UNRESOLVED (each lookup guarded as the module docstring says)."""

    def __init__(self, pf, read_only_gets: bool = False, readers: frozenset = frozenset()):
        self.pf = pf
        readers = _DICT_READERS | readers if read_only_gets else frozenset()
        tree = pf.tree
        nodes = list(gast.walk(tree))  # (one walk: every fact below is read off it)
        count: dict = {}
        self.stored_attrs = set()
        self.touched = set()  # objects a call may change: a method called on, given to a call
        self.written_dicts = set()  # dicts stored into, changed, given to a call; (d, key) popped
        globals_ = set()
        for n in nodes:
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, (gast.Store, gast.Del)):
                    count[n.id] = count.get(n.id, 0) + 1
            elif isinstance(n, gast.Attribute):
                if isinstance(n.ctx, (gast.Store, gast.Del)):
                    self.stored_attrs.add(n.attr)
            elif isinstance(n, (gast.Global, gast.Nonlocal)):
                globals_.update(n.names)
            elif isinstance(n, gast.Call):
                given = [a.id for a in [*n.args, *(k.value for k in n.keywords)]
                         if isinstance(a, gast.Name)]
                self.touched.update(given)
                self.written_dicts.update(given)
                f = n.func.value if isinstance(n.func, gast.Attribute) else None
                while isinstance(f, gast.Attribute):
                    f = f.value
                if isinstance(f, gast.Name) and n.func.attr not in readers:
                    self.touched.add(f.id)
                if isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name) \
                        and n.func.attr not in _DICT_READERS:
                    if n.func.attr == "pop" and n.args and isinstance(n.args[0], gast.Constant):
                        self.written_dicts.add((n.func.value.id, n.args[0].value))
                    else:
                        self.written_dicts.add(n.func.value.id)
            targets = n.targets if isinstance(n, (gast.Assign, gast.Delete)) else \
                [n.target] if isinstance(n, gast.AugAssign) else ()
            for t in targets:
                if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                    self.written_dicts.add(t.value.id)
        self.assigned = set(count) | globals_
        mutated = mutated_names(tree.body)
        self.stored = self.assigned | mutated  # (a list changed in place: read as it runs)
        self.waits = None  # a parameter whose int / bool value the test needs (not told yet)
        # dict displays of constant keys bound once at the top and only read: their items
        # (`kwargs = {"act": kwargs_act}` of a callee's **kwargs, parse.star_params_for_call)
        self.displays = {
            s.targets[0].id: s.value for s in tree.body
            if isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Dict)
            and count.get(s.targets[0].id) == 1 and s.targets[0].id not in self.written_dicts
            and s.targets[0].id not in mutated
            and all(isinstance(k, gast.Constant) for k in s.value.keys)}

    def param(self, name):
        pf = self.pf
        if name in pf.known:
            return pf.known[name]
        if name in pf.name_lists:
            return tuple(pf.name_lists[name])
        statics = pf.statics or {}
        if name in statics and statics[name][0] == "int":
            return statics[name][1]
        if pf.deferrable and self.waits is None:
            # (an int, a bool or a string, maybe -- here or in the caller that passes it on:
            # a transform made before any call waits for the first call's arguments)
            self.waits = name
        return UNRESOLVED

    def value(self, e):
        pf = self.pf
        if isinstance(e, gast.Constant):
            return e.value
        if isinstance(e, (gast.Tuple, gast.List, gast.Set)):
            items = [self.value(x) for x in e.elts]
            if any(x is UNRESOLVED or not isinstance(x, _SCALARS) for x in items):
                return UNRESOLVED
            return tuple(items)
        if isinstance(e, gast.Name):
            if e.id in self.stored:
                return UNRESOLVED
            if e.id in pf.params:
                return self.param(e.id)
            if e.id in pf.constants:
                return pf.constants[e.id]
            try:
                return pf.resolve(e.id)
            except Exception:  # noqa: BLE001  (a name the module lacks: Python says so later)
                return UNRESOLVED
        if isinstance(e, gast.Attribute) and isinstance(e.ctx, gast.Load):
            root = e.value
            while isinstance(root, gast.Attribute):
                root = root.value
            base = self.value(e.value)
            if base is UNRESOLVED or not (is_user_object(base) or
                                          isinstance(base, types.ModuleType)):
                return UNRESOLVED
            if not (isinstance(base, types.ModuleType) and is_library_module(base)) and (
                    e.attr in self.stored_attrs or (
                    isinstance(root, gast.Name) and root.id in self.touched)):
                return UNRESOLVED  # (an object's attribute the call may change)
            v = getattr(base, e.attr, guards.MISSING)
            if v is guards.MISSING:
                return UNRESOLVED
            guards.note_attr(base, e.attr, v)
            return v
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Attribute) and \
                e.func.attr == "get" and not e.keywords and 1 <= len(e.args) <= 2:
            return self.item(e.func.value, e.args[0], e.args[1] if len(e.args) == 2 else None)
        if isinstance(e, gast.Subscript) and isinstance(e.ctx, gast.Load):
            return self.item(e.value, e.slice, UNRESOLVED)
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Not):
            v = self.value(e.operand)
            return UNRESOLVED if not isinstance(v, _SCALARS + (tuple,)) else not v
        if isinstance(e, gast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in _COMPARE:
            a, b = self.value(e.left), self.value(e.comparators[0])
            if not (isinstance(a, _SCALARS + (tuple,)) and isinstance(b, _SCALARS + (tuple,))):
                return UNRESOLVED
            try:
                return bool(_COMPARE[type(e.ops[0])](a, b))
            except TypeError:
                return UNRESOLVED
        if isinstance(e, gast.BoolOp):
            stop = isinstance(e.op, gast.Or)
            for i, x in enumerate(e.values):
                v = self.value(x)
                if not isinstance(v, _SCALARS + (tuple,)):
                    return UNRESOLVED
                if bool(v) is stop or i == len(e.values) - 1:
                    return v
        return UNRESOLVED

    def item(self, base, key, default):
        """`d[key]` / `d.get(key, default)` of a dict argument the function only reads,
        whose item the specialisation's key holds (a str, an int, a bool, None)."""
        if isinstance(base, gast.Name) and base.id in self.displays:
            d = self.displays[base.id]
            k = self.value(key)
            keys = [x.value for x in d.keys]
            if not isinstance(k, (str, int)):
                return UNRESOLVED
            if k in keys:
                return self.value(d.values[len(keys) - 1 - keys[::-1].index(k)])
            if default is UNRESOLVED:
                return UNRESOLVED
            return None if default is None else self.value(default)
        if not (isinstance(base, gast.Name) and base.id in self.pf.params and
                base.id not in self.assigned and base.id not in self.written_dicts):
            return UNRESOLVED
        k = self.value(key)
        if not isinstance(k, (str, int)) or (base.id, k) in self.written_dicts:
            return UNRESOLVED
        held = self.pf.dict_scalars.get(base.id)
        if held is None:
            if self.pf.deferrable and self.waits is None:
                self.waits = base.id  # (a dict argument: the first call tells its items)
            return UNRESOLVED
        if k in held:
            return held[k]
        if k in self.pf.dict_keys.get(base.id, ()):
            return UNRESOLVED  # (an item of another kind: an array, a float)
        if default is UNRESOLVED:
            return UNRESOLVED  # (d[k] of a key it lacks: Python's KeyError, when it runs)
        v = None if default is None else self.value(default)
        return v if isinstance(v, _SCALARS) else UNRESOLVED


def _called_names(tree) -> set:
    """Names the function calls (`act(x)`), and the names of the lists a loop walks whose
    variable it calls (`for f in fs: h = f(h)`)."""
    called = {n.func.id for n in gast.walk(tree) if isinstance(n, gast.Call)
              and isinstance(n.func, gast.Name)}
    for n in gast.walk(tree):
        if isinstance(n, gast.For) and isinstance(n.iter, gast.Name):
            targets = [t.id for t in gast.walk(n.target) if isinstance(t, gast.Name)]
            if set(targets) & called:
                called.add(n.iter.id)
    return called


def _binds(stmts, names: set) -> bool:
    return any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id in names
               for s in stmts for n in gast.walk(s))


def _returns_functions(pf) -> bool:
    """Does the function return a function (`def get_activation(name): if name == "relu":
    return relu ...`, a factory its caller calls the result of)? Each `return` of a lambda,
    or of a name or dotted name that is a function here (a module global, np.tanh)."""
    own, todo = [], list(pf.tree.body)  # (not the returns of the defs nested in it)
    while todo:
        n = todo.pop()
        own.append(n)
        if not isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda,
                              gast.ClassDef)):
            todo.extend(gast.iter_child_nodes(n))
    returns = [n.value for n in own if isinstance(n, gast.Return) and n.value is not None]
    if not returns:
        return False
    for v in returns:
        if isinstance(v, gast.Lambda):
            continue
        if isinstance(v, gast.Subscript):  # `return ACTS[name]`: a dict of functions
            v = v.value
            try:
                d = pf.resolve(v.id) if isinstance(v, gast.Name) and v.id not in \
                    pf.params else None
            except Exception:  # noqa: BLE001  (a local: not a registry)
                return False
            if not (isinstance(d, dict) and d and all(
                    callable(f) and not isinstance(f, type) for f in d.values())):
                return False
            continue
        if not isinstance(v, (gast.Name, gast.Attribute)):
            return False
        if isinstance(v, gast.Name) and v.id in _nested_defs(pf.tree):
            continue  # (`if kind == "relu": def act(z): ...` in each branch, `return act`)
        root = v
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name) or root.id in pf.params:
            return False
        try:
            obj = pf.resolve(root.id)
        except Exception:  # noqa: BLE001  (a local, or a name the module lacks)
            return False
        for attr in _dotted_tail(v):
            obj = getattr(obj, attr, None)
        if not callable(obj) or isinstance(obj, type):
            return False
    return True


def argument_length(pf, a, at, what: str):
    """The length of the list or tuple argument `a` (a name the function never rebinds), as
    the call tells it (`ParsedFunction.statics`), at most 64 -- a transform made before any
    call waits for it (CountUnknownError, naming `what`); else None."""
    if not (isinstance(a, gast.Name) and a.id in pf.params) or any(
            isinstance(n, gast.Name) and n.id == a.id and
            isinstance(n.ctx, (gast.Store, gast.Del)) for n in gast.walk(pf.tree)):
        return None
    told = (getattr(pf, "statics", None) or {}).get(a.id)
    if told is None and getattr(pf, "deferrable", False):
        raise pf.error(what, at, cls=CountUnknownError,
                       hint="srcad writes it out once the first call's arguments give the "
                       "count")
    if told is None or told[0] != "len" or told[1] > 64:
        return None
    return told[1]


def _nested_defs(tree) -> set:
    """Names bound in `tree` only by nested `def`s (never assigned otherwise)."""
    defs = {n.name for n in gast.walk(tree) if isinstance(n, gast.FunctionDef) and n is not tree}
    stored = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name) and
              isinstance(n.ctx, (gast.Store, gast.Del))}
    return defs - stored


def _defines(stmts, names: set) -> bool:
    return any(isinstance(n, gast.FunctionDef) and n.name in names
               for s in stmts for n in gast.walk(s))


def _registry_lookup(s, pf, known) -> bool:
    """`try: return ACTS[name] except KeyError: raise ...` with `name` known here and in the
    module dict `ACTS`: Python's `try` body returns, no handler runs."""
    if not (isinstance(s, gast.Try) and len(s.body) == 1 and not s.orelse and
            not s.finalbody and isinstance(s.body[0], gast.Return) and
            isinstance(s.body[0].value, gast.Subscript) and
            isinstance(s.body[0].value.value, gast.Name)):
        return False
    d = known.value(s.body[0].value.value)
    if type(d) is not dict:
        return False
    known.waits = None
    key = known.value(s.body[0].value.slice)
    known.waits = None
    return isinstance(key, (str, int)) and key in d


def _dotted_tail(e) -> list:
    parts = []
    while isinstance(e, gast.Attribute):
        parts.append(e.attr)
        e = e.value
    return parts[::-1]


def fold_chosen_functions(pf) -> None:
    """Keep only Python's branch of each `if` (and conditional expression assigned) that binds
    a function the body calls, where the test is known (module docstring)."""
    tree = pf.tree
    stored, calls, subscript_calls = set(), set(), False
    for n in gast.walk(tree):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stored.add(n.id)
        elif isinstance(n, gast.Call):
            if isinstance(n.func, gast.Name):
                calls.add(n.func.id)
            subscript_calls = subscript_calls or isinstance(n.func, gast.Subscript)
    factory = _returns_functions(pf)  # (then its `if`s that return are folded too)
    if not (calls & stored) and not subscript_calls and not factory and not any(
            isinstance(n, gast.For) and isinstance(n.iter, gast.Name) and n.iter.id in stored
            for n in gast.walk(tree)):
        return  # (no name the function calls is bound here, no `FNS[i](x)`)
    called = _called_names(tree)
    if not factory and not any(isinstance(n, gast.If) and _binds([n], called) or
               isinstance(n, gast.Assign)
               and isinstance(n.value, gast.IfExp) and _binds(n.targets, called) or
               isinstance(n, gast.Call) and isinstance(n.func, gast.Subscript) and
               not isinstance(n.func.slice, (gast.Constant, gast.Slice, gast.Tuple))
               for n in gast.walk(tree)):
        return
    known = _Known(pf)

    def test_of(test):
        known.waits = None
        v = known.value(test)
        if isinstance(v, _SCALARS + (tuple,)):
            return bool(v)
        if known.waits is not None:
            name, known.waits = known.waits, None
            raise pf.error(
                f"which function is called here depends on the argument `{name}`", test,
                cls=CountUnknownError, hint="call it once: the first call's arguments tell")
        return None

    def block(stmts):
        out = []
        for s in stmts:
            if out and isinstance(out[-1], gast.Return):
                break  # (a branch kept ended in `return`: what follows never runs)
            if factory and _registry_lookup(s, pf, known):
                out.append(s.body[0])  # (the key is in the dict: the `try` body returns)
                continue
            if isinstance(s, gast.If) and (_binds([s], called) or (factory and (any(
                    isinstance(n, gast.Return) for n in gast.walk(s)) or
                    _defines([s], _nested_defs(tree))))):
                truth = test_of(s.test)
                if truth is not None:
                    out.extend(block(s.body if truth else s.orelse))
                    continue
            if isinstance(s, gast.Assign) and isinstance(s.value, gast.IfExp) and \
                    _binds(s.targets, called):
                e = s.value
                while isinstance(e, gast.IfExp):
                    truth = test_of(e.test)
                    if truth is None:
                        break
                    e = e.body if truth else e.orelse
                s.value = e
            rewrite_blocks(s, block)
            out.append(s)
        return out

    tree.body = block(tree.body) or [gast.copy_location(gast.Pass(), tree)]
    _fold_called_indices(tree, known, test_of)
    gast.fix_missing_locations(tree)


def _fold_called_indices(tree, known, test_of) -> None:
    """`FNS[i](x)`, `fs[n](x)` with the index an int (or a string) known here: the index
    written as that constant, so the item called is known (waiting for the first call's
    arguments where the index is an argument not told yet)."""
    for n in gast.walk(tree):
        if not (isinstance(n, gast.Call) and isinstance(n.func, gast.Subscript)):
            continue
        index = n.func.slice
        if isinstance(index, gast.Constant) or isinstance(index, (gast.Slice, gast.Tuple)):
            continue
        known.waits = None
        v = known.value(index)
        if type(v) in (int, str):
            n.func.slice = _const(v, index)
        elif known.waits is not None and isinstance(index, gast.Name):
            test_of(index)  # (raises: the first call's arguments tell)


class _TopLevel(gast.NodeTransformer):
    """A rewrite of the function's own expressions: a nested function or lambda reads its own
    names (its turn comes when it is normalised)."""

    def visit_FunctionDef(self, node):
        return node

    visit_Lambda = visit_FunctionDef


def _fold_top_level(pf, rewrite: _TopLevel) -> None:
    for st in pf.tree.body:
        rewrite.visit(st)
    gast.fix_missing_locations(pf.tree)


_GETTER_CALLS = frozenset({"values", "items", "keys", "copy"})
_GETTER_WRAPPERS = {"list": list, "tuple": tuple, "dict": dict}
_GETTERS: dict = {}  # code object -> (the first parameter's name, the returned expression) | None


def _getter_expression(fn):
    """(self's name, the expression) a plain method returns where its body is that return
    alone (a docstring aside), it takes only its object, and the expression reads the object
    once, through attributes, `.values()` / `.items()` / `.keys()` / `.copy()` and `list` /
    `tuple` / `dict` of those -- ``def parameters(self): return self._params`` --; else None."""
    code = fn.__code__
    if code in _GETTERS:
        return _GETTERS[code]
    _GETTERS[code] = None
    if code.co_argcount != 1 or code.co_kwonlyargcount or \
            code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR):
        return None
    try:
        tree = gast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, gast.FunctionDef) or node.decorator_list:
        return None
    body = [s for s in node.body if not (isinstance(s, gast.Expr) and isinstance(
        s.value, gast.Constant) and isinstance(s.value.value, str))]
    if len(body) != 1 or not isinstance(body[0], gast.Return) or body[0].value is None:
        return None
    self_name, expr, selves = node.args.args[0].id, body[0].value, 0
    for n in gast.walk(expr):
        if isinstance(n, gast.Name):
            if n.id == self_name:
                selves += 1
            elif n.id not in _GETTER_WRAPPERS or \
                    fn.__globals__.get(n.id, _GETTER_WRAPPERS[n.id]) is not \
                    _GETTER_WRAPPERS[n.id]:
                return None
        elif isinstance(n, gast.Call):
            if n.keywords or not (
                    isinstance(n.func, gast.Attribute) and n.func.attr in _GETTER_CALLS
                    and not n.args or isinstance(n.func, gast.Name) and len(n.args) == 1):
                return None
        elif isinstance(n, gast.Attribute) and n.attr.startswith("__"):
            return None  # (`return self.__dict__`: the object's own attributes, not a value)
        elif not isinstance(n, (gast.Attribute, gast.Load)):
            return None
    if selves == 1:
        _GETTERS[code] = (self_name, expr)
    return _GETTERS[code]


def _getter_of(obj, method: str):
    """`obj.method()`'s expression where the method is a getter (`_getter_expression`) that
    `obj` resolves as Python would, through its class; guarded to stay that function."""
    if not is_user_object(obj) or isinstance(obj, (type, types.FunctionType,
                                                   types.MethodType)) or \
            type(obj).__getattribute__ is not object.__getattribute__ or \
            method in getattr(obj, "__dict__", {}):
        return None
    raw = inspect.getattr_static(obj, method, None)
    if not isinstance(raw, types.FunctionType):
        return None
    found = _getter_expression(raw)
    if found is not None:
        guards.note_attr(obj, method, getattr(obj, method))
    return found


def fold_getter_calls(pf) -> None:
    """`NET.parameters()` / `self.encoder.get_params()` where the method only returns an
    attribute of its object (``return self._params``; `_getter_expression`) and srcad knows
    the object here: the attribute written in the call's place (``NET._params``), as Python
    reads it at that point. Layer libraries hand their dicts of parameters out this way; a
    loop over the dict's items storing into them (`p.data = params[k]`) is then followed
    into the methods that read them, as it is when written with the attribute."""
    calls = [n for n in gast.walk(pf.tree) if isinstance(n, gast.Call) and
             isinstance(n.func, gast.Attribute) and not n.args and not n.keywords]
    if not calls:
        return
    # (a getter changes nothing: a call of one leaves what srcad knows of its object; known
    # first taking every such call for a getter, then only those that are)
    hopeful = _Known(pf, read_only_gets=True, readers=frozenset(n.func.attr for n in calls))
    names = frozenset(n.func.attr for n in calls
                      if _getter_of(hopeful.value(n.func.value), n.func.attr) is not None)
    if not names:
        return
    known = _Known(pf, read_only_gets=True, readers=names)

    class Fold(_TopLevel):
        def visit_Call(self, node):
            self.generic_visit(node)
            if not (isinstance(node.func, gast.Attribute) and node.func.attr in names
                    and not node.args and not node.keywords):
                return node
            found = _getter_of(known.value(node.func.value), node.func.attr)
            if found is None:
                return node
            self_name, expr = found

            class Put(gast.NodeTransformer):
                def visit_Name(self, n):
                    return copy.deepcopy(node.func.value) if n.id == self_name else n

            out = Put().visit(copy.deepcopy(expr))
            for n in gast.walk(out):
                gast.copy_location(n, node)
            return out

    _fold_top_level(pf, Fold())


def fold_known_dict_gets(pf) -> None:
    """`ACTS.get("relu")`, `ACTS.get("gelu", relu)`, `NET.named.get("l0")` of a dict srcad
    knows now -- a module's, a known object's; not an argument, not one the function changes
    -- with a literal key: ``ACTS["relu"]`` where the dict holds the key and its item folds
    (opaque.folds_as_dict_item: a function, a string, an object or a list of them; the
    normaliser guards it to be the dict's item still), the default (or None) where it does
    not, guarded to stay away. Written as the subscript before the passes that follow
    objects' state read the function, so `NET.named.get("l0").output` is the layer's output
    this call stored, as `NET.named["l0"].output` is."""
    known = _Known(pf, read_only_gets=True)  # (`NET.named.get(..)` itself changes nothing)
    loose = _Known(pf, read_only_gets=True)
    loose.touched = set()
    changed = _changed_containers(pf.tree)
    stores: dict = {}
    for n in gast.walk(pf.tree):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    literals = {  # (`name = "tanh"` at the top, the name's only binding)
        s.targets[0].id: s.value.value for s in pf.tree.body
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
            s.targets[0], gast.Name) and isinstance(s.value, gast.Constant) and
        stores.get(s.targets[0].id) == 1}

    class Fold(_TopLevel):
        def visit_Call(self, node):
            self.generic_visit(node)
            f = node.func
            if not (isinstance(f, gast.Attribute) and f.attr == "get" and not node.keywords
                    and 1 <= len(node.args) <= 2) or \
                    ast.unparse(gast.gast_to_ast(f.value)) in changed:
                return node
            key = literals.get(node.args[0].id, UNRESOLVED) if isinstance(
                node.args[0], gast.Name) and node.args[0].id in literals else \
                known.value(node.args[0])
            if type(key) not in (str, int):
                return node
            d = known.value(f.value)
            if d is UNRESOLVED and len(node.args) == 1:
                # (its object given to a call or a method called on it, `NET.run(x)`: the
                # normaliser follows what the call stores, and a key that comes or goes
                # meanwhile is an error either way, not another value -- no default here)
                d = loose.value(f.value)
            if type(d) is not dict:
                return node
            if key in d:
                if not folds_as_dict_item(d[key]):
                    return node
                return gast.copy_location(gast.Subscript(
                    value=f.value, slice=_const(key, node.args[0]), ctx=gast.Load()), node)
            guards.note("absent", d, key)
            return node.args[1] if len(node.args) == 2 else _const(None, node)

    _fold_top_level(pf, Fold())


def _changed_containers(tree) -> set:
    """The spellings (`ACTS`, `self.named`) of what the function stores into, deletes from
    or calls a changing method of (`.update`, `.pop`, ...)."""
    out = set()
    for n in gast.walk(tree):
        targets = n.targets if isinstance(n, (gast.Assign, gast.Delete)) else \
            [n.target] if isinstance(n, gast.AugAssign) else []
        for t in targets:
            if isinstance(t, gast.Subscript):
                out.add(ast.unparse(gast.gast_to_ast(t.value)))
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                n.func.attr in MUTATING:
            out.add(ast.unparse(gast.gast_to_ast(n.func.value)))
    return out


def fold_dict_reads(pf) -> None:
    """`kwargs.get("act", "elu")`, `cfg["act"]` of a dict argument the function only reads:
    the string, int or bool the argument holds there (module docstring)."""
    if not pf.dict_scalars and not any(isinstance(n, gast.Dict) for n in gast.walk(pf.tree)):
        return
    known = _Known(pf)
    dicts = set(pf.dict_scalars) | set(known.displays)
    if not dicts:
        return

    class Fold(_TopLevel):
        def visit_Call(self, node):
            self.generic_visit(node)
            f = node.func
            if isinstance(f, gast.Attribute) and f.attr == "get" and \
                    isinstance(f.value, gast.Name) and f.value.id in dicts:
                v = known.value(node)
                if isinstance(v, (str, int, bool, type(None))):
                    return _const(v, node)
                picked = _display_get(known, f.value.id, node)
                if picked is not None:
                    return picked
            return node

        def visit_Subscript(self, node):
            self.generic_visit(node)
            if isinstance(node.ctx, gast.Load) and isinstance(node.value, gast.Name) and \
                    node.value.id in dicts:
                v = known.value(node)
                if isinstance(v, (str, int, bool, type(None))):
                    return _const(v, node)
            return node

    _fold_top_level(pf, Fold())


def _display_get(known, name: str, node):
    """`kw.get("act", np.tanh)` of a dict display of constant keys the function only reads
    (a `**kw` a call filled): the expression it gives -- the default where the key is not
    there (any value: a function, an array), the item where it is and is a name or a
    constant; else None."""
    d = known.displays.get(name)
    if d is None or not 1 <= len(node.args) <= 2 or node.keywords:
        return None
    k = known.value(node.args[0])
    if not isinstance(k, (str, int)):
        return None
    keys = [x.value for x in d.keys]
    if k not in keys:
        default = node.args[1] if len(node.args) == 2 else _const(None, node)
        return gast.copy_location(copy.deepcopy(default), node)
    v = d.values[len(keys) - 1 - keys[::-1].index(k)]
    pure_default = len(node.args) == 1 or isinstance(
        node.args[1], (gast.Name, gast.Constant, gast.Attribute, gast.Lambda))
    if isinstance(v, (gast.Name, gast.Constant)) and pure_default:
        return gast.copy_location(copy.deepcopy(v), node)
    return None


def index_function_dicts(pf, taken: set) -> None:
    """`acts = {"relu": lambda z: ..., "tanh": np.tanh}` made once and only indexed by keys
    known here (`acts[name](x)`): each item is bound to a name of its own where the dict is
    made, and each index reads that name (module docstring)."""
    tree = pf.tree
    if not any(isinstance(n, gast.Dict) for n in gast.walk(tree)):
        return
    _index_displays(pf)
    stores: dict = {}
    for n in gast.walk(tree):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    made = {}
    for s in tree.body:
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Dict) and \
                stores.get(s.targets[0].id) == 1 and s.value.keys and all(
                    isinstance(k, gast.Constant) and isinstance(k.value, (str, int))
                    for k in s.value.keys) and any(
                    isinstance(v, gast.Lambda) for v in s.value.values):
            made[s.targets[0].id] = s
    if not made:
        return
    known = _Known(pf)
    loads = {}
    for n in gast.walk(tree):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in made:
            loads.setdefault(n.id, []).append(n)
    parents = {}
    for n in gast.walk(tree):
        for c in gast.iter_child_nodes(n):
            parents[id(c)] = n
    for name, s in list(made.items()):
        uses = loads.get(name, [])
        keys = [k.value for k in s.value.keys]
        picks = []
        for u in uses:
            p = parents.get(id(u))
            if not (isinstance(p, gast.Subscript) and p.value is u and
                    isinstance(p.ctx, gast.Load)):
                break
            k = known.value(p.slice)
            if k not in keys:
                break
            picks.append((p, k))
        else:
            if not picks:
                continue
            names = {}
            at = tree.body.index(s)
            binds = []
            for k, v in zip(keys, s.value.values):
                item = fresh(f"{name}_{k}" if str(k).isidentifier() else f"{name}_item", taken)
                taken.add(item)
                names[k] = item
                binds.append(gast.copy_location(gast.Assign(
                    targets=[_name(item, True)], value=v, type_comment=None), s))
            s.value.values = [_name(names[k]) for k in keys]
            tree.body[at:at] = binds
            for p, k in picks:
                parent = parents[id(p)]
                for field, value in gast.iter_fields(parent):
                    if value is p:
                        setattr(parent, field, gast.copy_location(_name(names[k]), p))
                    elif isinstance(value, list):
                        setattr(parent, field, [gast.copy_location(_name(names[k]), p)
                                                if x is p else x for x in value])
    gast.fix_missing_locations(tree)


def _plain(e) -> bool:
    """A name, an attribute of one, or a constant: reading it has no effect."""
    while isinstance(e, gast.Attribute):
        e = e.value
    return isinstance(e, (gast.Name, gast.Constant))


def _index_displays(pf) -> None:
    """`{"a": np.tanh, "b": relu}[key]` with the key known here: the item itself."""
    if not any(isinstance(n, gast.Subscript) and isinstance(n.value, gast.Dict)
               for n in gast.walk(pf.tree)):
        return
    known = _Known(pf)

    class Pick(gast.NodeTransformer):
        def visit_Subscript(self, node):
            self.generic_visit(node)
            d = node.value
            if isinstance(node.ctx, gast.Load) and isinstance(d, gast.Dict) and d.keys and \
                    all(isinstance(k, gast.Constant) for k in d.keys) and \
                    all(_plain(v) for v in d.values):
                k = known.value(node.slice)
                keys = [x.value for x in d.keys]
                if isinstance(k, (str, int)) and k in keys:
                    at = len(keys) - 1 - keys[::-1].index(k)  # (a repeated key: the last)
                    return gast.copy_location(d.values[at], node)
            return node

        def visit_FunctionDef(self, node):
            return node

        visit_Lambda = visit_FunctionDef

    for st in pf.tree.body:
        Pick().visit(st)
    gast.fix_missing_locations(pf.tree)


def unroll_name_loops(pf) -> None:
    """`for name in spec: h = Layer.registry[name]()(h)` over strings known here (a list or
    tuple argument of strings srcad specialises on, a display of string constants, a tuple a
    module global holds), whose body calls what the name picks: the body once per string,
    the name's reads in it that string -- so objects.py and the normaliser see each callee
    (a class made and called, a registry's function) as if written out. The name is bound
    to the last string after the loop, as Python leaves it. A body with `break` /
    `continue`, that assigns the name, or a nested function that reads it (a closure sees
    the variable, not the value) is left as written."""
    tree = pf.tree
    if not any(isinstance(n, (gast.For, gast.ListComp)) for n in gast.walk(tree)):
        return
    known = None

    def strings(it):
        nonlocal known
        known = known or _Known(pf)
        known.waits = None
        v = known.value(it) if isinstance(it, (gast.Name, gast.Tuple, gast.List,
                                               gast.Attribute)) else UNRESOLVED
        if type(v) in (list, tuple) and 0 < len(v) <= 64 and all(type(x) is str for x in v):
            if type(v) is list:  # (a list changed in place later: the code is rebuilt)
                guards.note("items", v, len(v), v)
            return list(v)
        return None

    called = None

    def picks(body, target):
        nonlocal called
        for n in (x for st in body for x in gast.walk(st)):
            if isinstance(n, gast.Call) and isinstance(n.func, (gast.Call, gast.Subscript)) \
                    and any(isinstance(m, gast.Name) and m.id == target
                            for m in gast.walk(n.func)):
                return True
            if isinstance(n, gast.If) and any(isinstance(m, gast.Name) and m.id == target
                                              for m in gast.walk(n.test)):
                called = _called_names(tree) if called is None else called
                if _binds([n], called):  # (`if name == "tanh": f = np.tanh`, then f(h))
                    return True
        return False

    def fits(s):
        if not (isinstance(s.target, gast.Name) and not s.orelse and picks(s.body, s.target.id)):
            return False
        inner = [n for st in s.body for n in gast.walk(st)]
        if any(isinstance(n, (gast.Break, gast.Continue)) for n in inner):
            return False
        if any(isinstance(n, gast.Name) and n.id == s.target.id and
               not isinstance(n.ctx, gast.Load) for n in inner):
            return False
        for f in inner:
            if isinstance(f, (gast.FunctionDef, gast.Lambda)) and any(
                    isinstance(m, gast.Name) and m.id == s.target.id for m in gast.walk(f)):
                return False
        return True

    class Put(gast.NodeTransformer):
        def __init__(self, name, value):
            self.name, self.value = name, value

        def visit_Name(self, node):
            if node.id == self.name and isinstance(node.ctx, gast.Load):
                return _const(self.value, node)
            return node

    def zipped(s):
        """`for W, name in zip((W1, W2), names)`: zip of displays of names (or constants)
        and of strings known here, one target name each, whose body calls what a string
        picks: [(target, [item per trip])], each item a string or a display's node; None
        where the loop is not one of these (or not safe to write out)."""
        it = s.iter
        table = rows(it, s.target)
        if table is not None:  # (`for n, act in ARCH:` of a module's list of tuples)
            it = gast.Call(func=_name("zip"), args=[
                gast.Tuple(elts=[_const(r[j], it) for r in table], ctx=gast.Load())
                for j in range(len(s.target.elts))], keywords=[])
        if s.orelse or not isinstance(s.target, (gast.Tuple, gast.List)) or \
                not all(isinstance(t, gast.Name) or (
                    isinstance(t, (gast.Tuple, gast.List)) and
                    all(isinstance(x, gast.Name) for x in t.elts))
                    for t in s.target.elts) or \
                not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
                     not it.keywords and len(it.args) == len(s.target.elts) and
                     (table is not None or pf.resolve(it.func.id) is zip)):
            return None
        # (a column's target: a name, or a tuple of names -- `for (W, b), name in zip(layers,
        # acts)`, its items unpacked per trip)
        names = [t.id if isinstance(t, gast.Name) else t for t in s.target.elts]
        flat = {n.id for t in s.target.elts for n in gast.walk(t) if isinstance(n, gast.Name)}
        inner = [n for st in s.body for n in gast.walk(st)]
        stored = {n.id for n in inner if isinstance(n, gast.Name) and
                  not isinstance(n.ctx, gast.Load)}
        if any(isinstance(n, (gast.Break, gast.Continue)) for n in inner) or \
                flat & stored or any(
                    isinstance(f, (gast.FunctionDef, gast.Lambda)) and any(
                        isinstance(m, gast.Name) and m.id in flat for m in gast.walk(f))
                    for f in inner):
            return None
        columns, picked = [], False
        for a, name in zip(it.args, names):
            if not isinstance(name, str):  # (a tuple target: a display or an argument's items)
                if isinstance(a, (gast.Tuple, gast.List)) and not any(
                        isinstance(x, gast.Starred) for x in a.elts):
                    columns.append((name, list(a.elts)))
                else:
                    columns.append((name, a))
                continue
            if isinstance(a, (gast.Tuple, gast.List)) and a.elts and all(
                    isinstance(x, gast.Constant) and type(x.value) is str for x in a.elts) \
                    and picks(s.body, name):  # (`enumerate(["tanh", "relu"])`: strings)
                picked = True
                columns.append((name, [x.value for x in a.elts]))
                continue
            if isinstance(a, (gast.Tuple, gast.List)) and all(
                    isinstance(x, gast.Constant) or (isinstance(x, gast.Name) and
                                                     x.id not in stored) for x in a.elts):
                columns.append((name, list(a.elts)))  # (read as the loop starts: unchanged)
                continue
            items = strings(a)
            if items is None:  # (`zip(Ws, names)`: Ws[0], Ws[1], ... -- once picked)
                columns.append((name, a))
                continue
            picked = picked or picks(s.body, name)
            columns.append((name, items))
        if not picked:
            return None
        for k, (name, col) in enumerate(columns):
            if isinstance(col, gast.AST):
                col = argument_items(col, s)
                if col is None:
                    return None
                columns[k] = (name, col)
        return columns

    def rows(it, target):
        """The rows of a module's list or tuple of tuples of constants a loop unpacks into
        as many names (`ARCH = [(64, "tanh"), (32, "relu")]`), else None."""
        nonlocal known
        if not (isinstance(it, (gast.Name, gast.Attribute)) and
                isinstance(target, (gast.Tuple, gast.List)) and
                all(isinstance(t, gast.Name) for t in target.elts)):
            return None
        known = known or _Known(pf)
        known.waits = None
        v = known.value(it)
        if type(v) not in (list, tuple) or not 0 < len(v) <= 64 or not all(
                type(r) is tuple and len(r) == len(target.elts) and
                all(x is None or type(x) in (str, int, float, bool) for x in r) for r in v):
            return None
        if type(v) is list:  # (a list changed in place later: the code is rebuilt)
            guards.note("items", v, len(v), v)
        return [tuple(r) for r in v]

    def argument_items(a, at):
        """`Ws[0], Ws[1], ...` of a list or tuple argument never rebound, its length told by
        the call (`ParsedFunction.statics`); else None."""
        n = argument_length(pf, a, at, "this loop picks functions by names zipped with an "
                            "argument")
        if n is None:
            return None
        return [gast.Subscript(value=_name(a.id), slice=gast.Constant(value=k, kind=None),
                               ctx=gast.Load()) for k in range(n)]

    def enumerated(s):
        """`for i, name in enumerate(names[, start])`: the zip it is, `for i, name in
        zip((start, start + 1, ...), names)` (as many counts as names can hold); else `s`."""
        it = s.iter
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
                not it.keywords and len(it.args) in (1, 2) and
                isinstance(s.target, (gast.Tuple, gast.List)) and len(s.target.elts) == 2 and
                pf.resolve(it.func.id) is enumerate and pf.resolve("zip") is zip and (
                    len(it.args) == 1 or (isinstance(it.args[1], gast.Constant) and
                                          type(it.args[1].value) is int))):
            return s
        start = it.args[1].value if len(it.args) == 2 else 0
        counts = gast.Tuple(elts=[gast.Constant(value=start + k, kind=None)
                                  for k in range(64)], ctx=gast.Load())
        pairs = gast.Call(func=_name("zip"), args=[counts, it.args[0]], keywords=[])
        return gast.copy_location(gast.For(target=s.target, iter=pairs, body=s.body,
                                           orelse=s.orelse, type_comment=None), s)

    def block(stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.For):
                shaped = enumerated(s)
                s = shaped if shaped is not s and zipped(shaped) is not None else s
            columns = zipped(s) if isinstance(s, gast.For) else None
            if columns is not None:
                n = min(len(col) for _, col in columns)
                for i in range(n):
                    body = []
                    for name, col in columns:
                        if not isinstance(col[i], str):
                            target = _name(name, True) if isinstance(name, str) else \
                                copy.deepcopy(name)
                            body.append(gast.copy_location(gast.Assign(
                                targets=[target], value=copy.deepcopy(col[i]),
                                type_comment=None), s))
                    for st in s.body:
                        st = copy.deepcopy(st)
                        for name, col in columns:
                            if isinstance(col[i], str):
                                st = Put(name, col[i]).visit(st)
                        body.append(st)
                    out.extend(block(body))
                if n:
                    out.extend(gast.copy_location(gast.Assign(
                        targets=[_name(name, True)], value=_const(col[n - 1], s),
                        type_comment=None), s) for name, col in columns
                        if isinstance(col[n - 1], str))
                continue
            if isinstance(s, gast.For) and fits(s):
                items = strings(s.iter)
                if items is not None:
                    for item in items:
                        for st in s.body:
                            out.extend(block([Put(s.target.id, item).visit(copy.deepcopy(st))]))
                    out.append(gast.copy_location(gast.Assign(
                        targets=[_name(s.target.id, True)], value=_const(items[-1], s),
                        type_comment=None), s))
                    continue
            rewrite_blocks(s, block)
            out.append(s)
        return out

    tree.body = block(tree.body) or [gast.copy_location(gast.Pass(), tree)]

    class Picks(gast.NodeTransformer):
        """`[getattr(np, k) for k in kinds]`, `[ACTS[k] for k in kinds]` over strings known
        here: the display of the items Python picks (a loop then walks functions)."""

        def visit_ListComp(self, node):
            self.generic_visit(node)
            if len(node.generators) != 1:
                return node
            g = node.generators[0]
            if not g.ifs and not g.is_async and isinstance(g.target, (gast.Tuple, gast.List)):
                return self.rows_picked(node, g)
            if g.ifs or g.is_async or not isinstance(g.target, gast.Name):
                return node
            k = g.target.id
            e = node.elt
            picked = (isinstance(e, gast.Subscript) and isinstance(e.slice, gast.Name) and
                      e.slice.id == k) or (
                isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and
                e.func.id == "getattr" and len(e.args) == 2 and
                isinstance(e.args[1], gast.Name) and e.args[1].id == k)
            if not picked or any(isinstance(m, gast.Name) and m.id == k
                                 for m in gast.walk(e.args[0] if isinstance(e, gast.Call)
                                                    else e.value)):
                return node
            items = strings(g.iter)
            if items is None and known.waits is not None:
                raise pf.error(f"which items are picked here depends on the argument "
                               f"`{known.waits}`", node, cls=CountUnknownError,
                               hint="call it once: the first call's arguments tell")
            if items is None:
                return node
            return gast.copy_location(gast.List(
                elts=[Put(k, item).visit(copy.deepcopy(e)) for item in items],
                ctx=gast.Load()), node)

        def rows_picked(self, node, g):
            """`[REGISTRY[kind](Ws[i]) for kind, i in SPEC]` over a module's list of tuples
            of constants (`rows`), whose element calls what a row picks: the display of the
            elements, one per row, each row's constants in place of the names -- as the
            `for` loop over it is written out (objects.py then sees each object made)."""
            e = node.elt
            names = {t.id for t in g.target.elts if isinstance(t, gast.Name)}
            calls = [c for c in gast.walk(e) if isinstance(c, gast.Call) and any(
                isinstance(m, gast.Name) and m.id in names for m in gast.walk(c.func))]
            if not calls or any(isinstance(f, (gast.Lambda, gast.FunctionDef, gast.ListComp,
                                               gast.GeneratorExp, gast.DictComp,
                                               gast.SetComp, gast.NamedExpr))
                                for f in gast.walk(e)):
                return node  # (a closure or an inner scope reads the variable, not a value)
            table = rows(g.iter, g.target)
            if table is None:
                return node
            elts = []
            for row in table:
                made = copy.deepcopy(e)
                for t, value in zip(g.target.elts, row):
                    made = Put(t.id, value).visit(made)
                elts.append(made)
            return gast.copy_location(gast.List(elts=elts, ctx=gast.Load()), node)

        def visit_FunctionDef(self, node):
            return node

        visit_Lambda = visit_FunctionDef

    if any(isinstance(n, gast.ListComp) for n in gast.walk(tree)):
        for st in tree.body:
            Picks().visit(st)
    gast.fix_missing_locations(tree)


def zip_displays(pf) -> None:
    """`for f, W in zip([np.tanh, relu], [W1, W2])`, `for i, f in enumerate(acts)`, `for k, f in
    acts.items()` over displays holding functions (written there, or bound once to a name at
    the top and never changed): the loop walks one display of the pairs Python makes, which
    the normaliser unrolls as it unrolls a display of functions (loops.py), each call that
    item's function. A display reached through a name is copied to the loop only when its
    items read there what they read where it was made (names the function never assigns,
    constants, numpy's functions)."""
    tree = pf.tree
    loops = [n for n in gast.walk(tree) if isinstance(n, gast.For) and isinstance(
        n.iter, gast.Call) and (isinstance(n.iter.func, gast.Name) and n.iter.func.id in (
            "zip", "enumerate") or isinstance(n.iter.func, gast.Attribute) and
        n.iter.func.attr in ("items", "values"))]
    if not loops:
        return
    count: dict = {}
    for n in gast.walk(tree):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            count[n.id] = count.get(n.id, 0) + 1
    changed = mutated_names(tree.body)
    held = {s.targets[0].id: s.value for s in tree.body
            if isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name) and isinstance(s.value, (gast.List,
                                                                              gast.Tuple,
                                                                              gast.Dict))
            and count.get(s.targets[0].id) == 1 and s.targets[0].id not in changed
            and s.targets[0].id not in pf.params}

    def stable(x) -> bool:
        """Does `x` read, at the loop, what it read where the display was made? A constant, a
        name the function never assigns, a library module's attribute (np.tanh)."""
        if isinstance(x, gast.Constant):
            return True
        root = x
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name) or root.id in count or root.id in changed:
            return False
        if root is x:
            return True
        try:
            mod = pf.resolve(root.id) if root.id not in pf.params else None
        except Exception:  # noqa: BLE001
            return False
        return isinstance(mod, types.ModuleType) and is_library_module(mod)

    def display(e):
        if isinstance(e, (gast.List, gast.Tuple)) and not any(
                isinstance(x, gast.Starred) for x in e.elts):
            return list(e.elts)
        if isinstance(e, gast.Name) and isinstance(held.get(e.id), (gast.List, gast.Tuple)):
            items = held[e.id].elts
            if all(stable(x) for x in items):
                return [copy.deepcopy(x) for x in items]
        return None

    def dict_of(e):
        d = held.get(e.id) if isinstance(e, gast.Name) else e
        if isinstance(d, gast.Dict) and d.keys and all(
                isinstance(k, gast.Constant) for k in d.keys) and (
                d is e or all(stable(v) for v in d.values)) and \
                len({k.value for k in d.keys}) == len(d.keys):
            return [(copy.deepcopy(k), copy.deepcopy(v)) for k, v in zip(d.keys, d.values)]
        return None

    def builtin(f, obj) -> bool:
        return isinstance(f, gast.Name) and f.id not in count and f.id not in pf.params and \
            pf.resolve(f.id) is obj

    def functions(items) -> bool:
        known = _Known(pf)
        for x in items:
            if isinstance(x, gast.Lambda):
                return True
            if _plain(x) and not isinstance(x, gast.Constant):
                try:
                    v = known.value(x)
                except Exception:  # noqa: BLE001
                    continue
                if isinstance(v, types.FunctionType) or (callable(v) and not isinstance(
                        v, type) and getattr(v, "__module__", None) in (None, "numpy")):
                    return True
        return False

    def pairs(it):
        """The items of the display the loop walks, or None."""
        if not isinstance(it, gast.Call):
            return None
        f = it.func
        if isinstance(f, gast.Attribute) and f.attr in ("items", "values") and \
                not it.args and not it.keywords:
            d = dict_of(f.value)
            if d is None or not functions([v for _, v in d]):
                return None
            if f.attr == "items":
                return [gast.Tuple(elts=[k, v], ctx=gast.Load()) for k, v in d], True
            return [v for _, v in d], True
        if it.keywords and not (builtin(f, enumerate) and len(it.keywords) == 1 and
                                it.keywords[0].arg == "start" and
                                isinstance(it.keywords[0].value, gast.Constant)):
            return None
        if builtin(it.func, zip) and it.args:
            seqs = [display(a) for a in it.args]
            if any(s is None for s in seqs) or not functions([x for s in seqs for x in s]):
                return None
            n = min(len(s) for s in seqs)
            return [gast.Tuple(elts=[s[i] for s in seqs], ctx=gast.Load())
                    for i in range(n)], all(len(s) == n for s in seqs)
        if builtin(it.func, enumerate) and len(it.args) == 1:
            seq = display(it.args[0])
            if seq is None or not functions(seq):
                return None
            start = it.keywords[0].value.value if it.keywords else 0
            if type(start) is not int:
                return None
            return [gast.Tuple(elts=[gast.Constant(value=start + i, kind=None), x],
                               ctx=gast.Load()) for i, x in enumerate(seq)], True
        return None

    changed_any = False
    for n in loops:
        if isinstance(n, gast.For):
            got = pairs(n.iter)
            if got is not None and got[1]:
                n.iter = gast.copy_location(gast.List(elts=got[0], ctx=gast.Load()), n.iter)
                changed_any = True
    if changed_any:
        gast.fix_missing_locations(tree)
