"""Attribute dictionaries built in the function: ``net = AttrDict(W1=W1); net.act = np.tanh``
(and ``types.SimpleNamespace(h=x)``, whose attributes are written and read the same way).

A dict subclass whose attributes are its items -- ``__getattr__ = dict.__getitem__`` with
``__setattr__ = dict.__setitem__``, ``def __getattr__(self, k): return self[k]``, or an
``__init__`` that sets ``self.__dict__ = self`` (tape_containers.py says which) -- is a
namespace of arrays and functions written and read by name. Built in the function and used
only through constant keys, it is scalarised (as objects.py does for objects of user
classes): each key is a local variable of the function, named after it.

Input: a parsed function's gast tree. Output: the same function without the dictionary:
  * ``net = AttrDict(W1=W1, W2=W2)`` (keywords, or one dict display of str keys, then
    keywords) is ``net_W1 = W1; net_W2 = W2``, in Python's order;
  * ``net.act = v`` / ``net["act"] = v`` (also ``+=``) is ``net_act = v``, where the class
    writes items by attribute (an attribute store of a class that does not is left alone);
  * ``net.W1`` / ``net["W1"]`` reads ``net_W1``, also in a nested function or lambda (which
    closures.py then gives the local);
  * an item that is built as one itself (``cfg = AttrDict(model=AttrDict(W=W))``) is
    scalarised in turn: ``cfg.model.W`` reads ``cfg_model_W``.
Only where the name is bound once, to the constructor, and every use of it is such a read or
store of a key it holds by then (no method of dict, no ``del``, no second name, no store from
a nested function): else the function is left as written, and what srcad cannot follow of it
is refused where a gradient needs it.

Before/after:
    net = AttrDict(W1=W1, W2=W2)          net_W1 = W1
    net.act = np.tanh                     net_W2 = W2
    h = net.act(X @ net.W1)               net_act = np.tanh
                                          h = net_act(X @ net_W1)
"""

from __future__ import annotations

import types

import gast

from ..errors import UnsupportedSyntaxError
from ..naming import fresh
from ..tape_containers import dict_init_of, reads_items_by_attribute, writes_items_by_attribute
from .parse import UNRESOLVED


def _name(id_, ctx=None):
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def _resolve(pf, node, locals_: set):
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name) or node.id in locals_:
        return UNRESOLVED
    obj = pf.resolve(node.id)
    for a in reversed(parts):  # (`mylib.AttrDict`: through modules only, no object's code)
        if not isinstance(obj, types.ModuleType):
            return UNRESOLVED
        obj = getattr(obj, a, UNRESOLVED)
    return obj


def _key(node):
    """The constant str key a use `parent` of the name reads or writes, or None."""
    if isinstance(node, gast.Attribute):
        return node.attr
    if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Constant) and \
            type(node.slice.value) is str:
        return node.slice.value
    return None


def _constructor_items(call):
    """[(key, value node)] of ``C(k=v, ...)`` / ``C({"k": v, ...}, k2=v2)``, or None."""
    items = []
    if len(call.args) > 1 or any(k.arg is None for k in call.keywords):
        return None
    if call.args:
        d = call.args[0]
        if not isinstance(d, gast.Dict) or not all(
                isinstance(k, gast.Constant) and type(k.value) is str for k in d.keys):
            return None
        items += [(k.value, v) for k, v in zip(d.keys, d.values)]
    return items + [(k.arg, k.value) for k in call.keywords]


def _parents(tree):
    out = {}
    for n in gast.walk(tree):
        for c in gast.iter_child_nodes(n):
            out[id(c)] = n
    return out


def _own_nodes(tree) -> set:
    """ids of the function's own nodes (not inside a nested def, lambda or class)."""
    own, todo = set(), list(tree.body)
    while todo:
        n = todo.pop()
        own.add(id(n))
        if isinstance(n, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            continue
        todo.extend(gast.iter_child_nodes(n))
    return own


def scalarise_attrdicts(pf, taken: set) -> None:
    """The module docstring's rewrite, in place, for each attribute dictionary it fits."""
    tree = pf.tree
    taken |= {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
    seen: set = set()
    for _ in range(16):  # (an item that is one itself -- `cfg.model.W` -- is found next)
        if not _scalarise_found(pf, tree, taken, seen):
            return


def _scalarise_found(pf, tree, taken: set, seen: set) -> bool:
    """One round over the constructors not seen yet: whether it rewrote any."""
    stored = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)
              and not isinstance(n.ctx, gast.Load)} | set(pf.params)
    found = []  # (name, class, the constructor's Assign)
    for s in gast.walk(tree):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and id(s) not in seen and \
                isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Call):
            seen.add(id(s))
            cls = _resolve(pf, s.value.func, stored - {s.targets[0].id})
            if cls is types.SimpleNamespace or (isinstance(cls, type) and
                                                reads_items_by_attribute(cls) and
                                                dict_init_of(cls)):
                found.append((s.targets[0].id, cls, s))
    rewrote = False
    for name, cls, made in found:
        parents, own = _parents(tree), _own_nodes(tree)
        plan, blocked = _plan(tree, name, cls, made, parents, own, pf)
        if plan is not None:
            _rewrite(tree, name, made, plan, taken)
            rewrote = True
        elif blocked is not None and writes_items_by_attribute(cls) and _stores_attribute(
                tree, name, own, parents):
            # (else its attribute store is refused as one of an expression: say why here)
            node, what = blocked
            raise pf.error(
                f"`{name}` is an attribute dictionary ({cls.__name__}: its attributes are its "
                f"items), and "
                f"{what}: srcad follows such a dict built in the function only through "
                f"constant keys (`{name}.W`, `{name}['W']`), as local variables", node,
                hint=f"read the items it holds here and pass them on (`{name}.W`), or build "
                "a plain dict and use `d['W']`", cls=UnsupportedSyntaxError)
    return rewrote


def _stores_attribute(tree, name, own, parents) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name and id(n) in own and isinstance(
        parents.get(id(n)), gast.Attribute) and isinstance(parents[id(n)].ctx, gast.Store)
        for n in gast.walk(tree))


def _plan(tree, name, cls, made, parents, own, pf):
    """({id(use): key} for every use of `name`, None), or (None, (the use that stops it,
    what it does)) where the dictionary does not fit (None there: nothing to say)."""
    items = _constructor_items(made.value)
    namespace = cls is types.SimpleNamespace  # (attributes only: no items, no dict given)
    if items is None or id(made) not in own or name in pf.params or \
            (namespace and made.value.args):
        return None, None
    writes_attr = namespace or writes_items_by_attribute(cls)
    keys = {k for k, _ in items}
    uses = {}
    for n in gast.walk(tree):
        if not (isinstance(n, gast.Name) and n.id == name):
            continue
        if n is made.targets[0]:
            continue
        if not isinstance(n.ctx, gast.Load):
            return None, None  # (bound again, deleted, a parameter of a nested function)
        parent = parents.get(id(n))
        key = _key(parent) if getattr(parent, "value", None) is n else None
        if key is None:
            return None, (n, "it is used here as a whole (passed on, returned, kept)")
        if namespace and not isinstance(parent, gast.Attribute):
            return None, None  # (`ns["k"]`: Python's TypeError, as written)
        if key.startswith("__") or hasattr(cls, key):
            return None, (n, f"`.{key}` here is a method or attribute of the class")
        if isinstance(parent.ctx, gast.Del):
            return None, None
        if isinstance(parent.ctx, gast.Store):
            if isinstance(parent, gast.Attribute) and not writes_attr:
                return None, None
            if id(parent) not in own:
                return None, None  # (a store from a nested function: its own local)
            keys.add(key)
        uses[id(parent)] = key
    if not all(k in keys for k in uses.values()):
        return None, None  # (a key never set: Python raises there; left as written)
    return uses, None


def _rewrite(tree, name, made, uses, taken) -> None:
    local = {}

    def var(key):
        if key not in local:
            local[key] = fresh(f"{name}_{key}" if key.isidentifier() else f"{name}_item",
                               taken)
            taken.add(local[key])
        return local[key]

    for parent in gast.walk(tree):
        for field, value in gast.iter_fields(parent):
            items = value if isinstance(value, list) else [value]
            for i, v in enumerate(items):
                if id(v) in uses:
                    ref = gast.copy_location(_name(var(uses[id(v)]), v.ctx), v)
                    if isinstance(value, list):
                        value[i] = ref
                    else:
                        setattr(parent, field, ref)
    assigns = [gast.copy_location(gast.Assign(targets=[_name(var(k), gast.Store())], value=v,
                                              type_comment=None), made)
               for k, v in _constructor_items(made.value)]
    assigns = [gast.fix_missing_locations(a) for a in assigns] or \
        [gast.copy_location(gast.Pass(), made)]
    for parent in gast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if isinstance(stmts, list) and any(s is made for s in stmts):
                i = next(j for j, s in enumerate(stmts) if s is made)
                stmts[i:i + 1] = assigns
                return
