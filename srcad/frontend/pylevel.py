"""Python-level calls on arrays, as constructs srcad already differentiates (gast -> gast).

Called by pylower.py's `_Lowerer.expr` for each call it meets; a call it rewrites becomes
  * ``map(f, xs)`` / ``map(f, xs, ys)`` -> the list ``[f(v) for v in xs]`` /
    ``[f(v, w) for v, w in zip(xs, ys)]`` (``f`` a ufunc, a user function, a lambda, an
    `operator` function: called as written). A map is lazy; the list has the same items in
    the same order, which is the same thing where the map is consumed once -- an argument of
    a call (``list(map(...))``, ``sum(map(...))``, ``np.array(map(...))``), or a loop's
    iterable. A map held in a name (``m = map(f, xs)``) is left as written (no rule: fine
    where no gradient flows through it, refused where one does);
  * ``functools.reduce(f, xs)`` / ``reduce(f, xs, init)`` -> the fold ``f(f(x0, x1), x2)``
    (unrolled for a list display, else a loop), Python's own order; ``itertools.accumulate(xs,
    f, initial=a)`` consumed once -> the list of the fold's running values;
  * ``sorted(xs, key=k, reverse=r)`` -> ``sorted_by(xs, [k(v) for v in xs], r)``
    (srcad/pyfuncs.py: a stable argsort of the keys, the items gathered in that order, a
    list), ``key=None`` -> the items themselves;
    (``sorted(zip(a, b), key=...)``: the zip as the list of its tuples first);
  * ``max(xs, key=k)`` / ``min(xs, key=k)`` -> the first item of ``sorted(xs, key=k,
    reverse=True / False)`` (the first of the items with the extreme key, as Python's);
  * ``x.tolist()`` -> ``tolist(x)`` (srcad/pyfuncs.py: nested lists of Python floats);
  * ``np.size(x, axis)`` -> ``np.shape(x)[axis]``;
  * ``itertools.combinations(xs, r)`` (``combinations_with_replacement``, ``permutations``,
    ``product``) consumed once -> the list of its tuples, the combinatorics run on the
    positions and each tuple gathering the items there;
  * ``zip(*pairs)`` with a list or tuple display -> ``zip(p0, p1, ...)``; of any other list ->
    ``[tuple(p[j] for p in pairs) for j in range(min(len(p) for p in pairs))]`` (a list of
    tuples, as ``list(zip(*pairs))``).

Before/after:
    ys = list(map(np.tanh, xs))         ys = list([np.tanh(v) for v in xs])
    p = reduce(np.multiply, [x, y, z])  p = np.multiply(np.multiply(x, y), z)
"""

from __future__ import annotations

import builtins
import copy
import functools
import itertools
import operator

import gast
import numpy as np

SORTED_BY = "__srcad_sorted_by"
SHAPE = "__srcad_shape"  # (np.shape, however the module names numpy)
TOLIST = "__srcad_tolist"


class Substitute(gast.NodeTransformer):
    """Every read of the name `old` replaced by a copy of the expression `new`."""

    def __init__(self, old: str, new):
        self.old, self.new = old, new

    def visit_Name(self, node):
        if node.id == self.old and isinstance(node.ctx, gast.Load):
            return gast.copy_location(copy.deepcopy(self.new), node)
        return node


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _call(func, args, keywords=()):
    return gast.Call(func=_name(func) if isinstance(func, str) else func, args=list(args),
                     keywords=list(keywords))


def operand_slots(e) -> list:
    """Where `e`'s operands sit, as (holder, key) in the order Python evaluates them (its
    fields' order: `a * b` left then right, `f(x, k=y)` f, x, then y)."""
    slots = []
    for field, value in gast.iter_fields(e):
        if isinstance(value, gast.expr):
            slots.append((e, field))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, gast.expr):
                    slots.append((value, i))
                elif isinstance(v, gast.keyword):
                    slots.append((v, "value"))
    return slots


def slot_get(slot):
    holder, key = slot
    return holder[key] if isinstance(holder, list) else getattr(holder, key)


def slot_put(slot, value) -> None:
    holder, key = slot
    if isinstance(holder, list):
        holder[key] = value
    else:
        setattr(holder, key, value)


def _assign(target, value):
    return gast.Assign(targets=[_name(target, True) if isinstance(target, str) else target],
                       value=value, type_comment=None)


def _for(target, iter_, body):
    return gast.For(target=target, iter=iter_, body=body, orelse=[], type_comment=None)


def _comp(target, iter_):
    return gast.comprehension(target=target, iter=iter_, ifs=[], is_async=0)


def callee_object(low, func):
    """The object a callee spelled ``name`` or ``mod.attr`` refers to (not a local), or None."""
    parts = []
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name) or func.id in low.counts_store or \
            func.id in low.params:
        return None
    obj = low.pf.resolve(func.id)
    for p in reversed(parts):
        obj = getattr(obj, p, None)
    return obj


def apply(f, args):
    """``f(*args)`` as gast, for a callee given as a value: a lifted lambda with its free
    variables (``functools.partial(lifted, w=w)``) is called as ``lifted(*args, w=w)``."""
    if isinstance(f, gast.Call) and isinstance(f.func, gast.Name) and \
            f.func.id == "__srcad_partial" and len(f.args) == 1:
        return _call(copy.deepcopy(f.args[0]), args, copy.deepcopy(f.keywords))
    return _call(copy.deepcopy(f), args)


def _is(obj, target) -> bool:
    try:
        return obj is target
    except Exception:  # noqa: BLE001
        return False


def rewrite(low, e: gast.Call, pending: list, hint: str, held: set):
    """The rewritten expression for the call `e`, or None (see the module docstring). `held`:
    ids of map calls assigned straight to a name (left as written)."""
    if isinstance(e.func, gast.Attribute) and e.func.attr == "tolist" and not e.args and \
            not e.keywords:  # x.tolist(): srcad/pyfuncs.py's (any other object's: its own)
        return _call(TOLIST, [low.expr(e.func.value, pending, hint)])
    obj = callee_object(low, e.func)
    if obj is None:
        return None
    starred = any(isinstance(a, gast.Starred) for a in e.args)
    axis = e.args[1:] + [k.value for k in e.keywords if k.arg == "axis"]
    if _is(obj, np.size) and len(e.args) in (1, 2) and len(axis) == 1 and not starred and \
            all(k.arg == "axis" for k in e.keywords) and not (
                isinstance(axis[0], gast.Constant) and axis[0].value is None):
        # `np.size(X, 1)`: the length of that axis, `np.shape(X)[1]` (PRML's spelling)
        shape = _call(SHAPE, [e.args[0]])
        return low.expr(gast.copy_location(gast.Subscript(value=shape, slice=axis[0],
                                                          ctx=gast.Load()), e), pending, hint)
    if any(_is(obj, f) for f in _COMBINATORICS) and e.args and not starred and \
            id(e) not in held and all(k.arg in ("r", "repeat") for k in e.keywords):
        return _combinatorics(low, obj, e, pending, hint, held)
    if _is(obj, builtins.map) and len(e.args) >= 2 and not e.keywords and not starred \
            and id(e) not in held:
        f, its = e.args[0], e.args[1:]
        if len(its) == 1:
            v = low.fresh(f"{hint}_item")
            comp = gast.ListComp(elt=apply(f, [_name(v)]),
                                 generators=[_comp(_name(v, True), its[0])])
        else:
            vs = [low.fresh(f"{hint}_item") for _ in its]
            target = gast.Tuple(elts=[_name(v, True) for v in vs], ctx=gast.Store())
            comp = gast.ListComp(elt=apply(f, [_name(v) for v in vs]),
                                 generators=[_comp(target, _call("zip", its))])
        return low.expr(gast.copy_location(comp, e), pending, hint)
    if _is(obj, functools.reduce) and len(e.args) in (2, 3) and not e.keywords \
            and not starred:
        return _fold(low, e, pending, hint)
    if _is(obj, itertools.accumulate) and len(e.args) in (1, 2) and not starred and \
            id(e) not in held and all(k.arg in ("func", "initial") for k in e.keywords):
        return _accumulate(low, e, pending, hint)
    if _is(obj, builtins.sorted) and len(e.args) == 1 and not starred and \
            all(k.arg in ("key", "reverse") for k in e.keywords):
        return _sorted(low, e, pending, hint)
    if (_is(obj, builtins.max) or _is(obj, builtins.min)) and e.args and not starred and \
            [k.arg for k in e.keywords] == ["key"]:
        return _extreme(low, e, _is(obj, builtins.max), pending, hint)
    if _is(obj, builtins.zip) and len(e.args) == 1 and starred and not e.keywords:
        return _transpose(low, e, pending, hint)
    return None


_COMBINATORICS = (itertools.combinations, itertools.combinations_with_replacement,
                  itertools.permutations, itertools.product)


def _combinatorics(low, obj, e, pending, hint, held):
    """``itertools.combinations(xs, r)`` (and ``combinations_with_replacement``,
    ``permutations``, ``product(a, b, repeat=k)``) of arrays' rows or a list's items: the
    list of the tuples it yields, ``[(xs[i], xs[j]) for i, j in combinations(range(len(xs)),
    r)]`` -- the same combinatorics run on the positions (plain ints, as written), each tuple
    gathering the items there, so the gradient flows to the items picked (PRML's polynomial
    features: ``for items in combinations_with_replacement(x.T, degree)``)."""
    pools = obj is itertools.product
    seqs = e.args if pools else e.args[:1]
    names = [low.fresh(f"{hint}_pool") for _ in seqs]
    for n, sq in zip(names, seqs):  # (each iterable read once, where the call is)
        pending.append(gast.copy_location(_assign(n, low.expr(sq, pending, hint)), e))
    ranges = [_call("range", [_call("len", [_name(n)])]) for n in names]
    index = gast.copy_location(_call(copy.deepcopy(e.func), ranges + list(e.args[len(seqs):]),
                                     copy.deepcopy(e.keywords)), e)
    held.add(id(index))  # (run as written: ints)
    c, i = low.fresh(f"{hint}_picked"), low.fresh(f"{hint}_at")
    if pools:  # (product: position k of each tuple is from pool k mod the pools' number)
        at = low.fresh(f"{hint}_slot")
        item = gast.Subscript(value=gast.Subscript(value=gast.Tuple(
            elts=[_name(n) for n in names], ctx=gast.Load()), slice=gast.BinOp(
            left=_name(at), op=gast.Mod(), right=gast.Constant(value=len(names), kind=None)),
            ctx=gast.Load()), slice=_name(i), ctx=gast.Load())
        inner = _comp(gast.Tuple(elts=[_name(at, True), _name(i, True)], ctx=gast.Store()),
                      _call("enumerate", [_name(c)]))
    else:
        item = gast.Subscript(value=_name(names[0]), slice=_name(i), ctx=gast.Load())
        inner = _comp(_name(i, True), _name(c))
    elt = _call("tuple", [gast.GeneratorExp(elt=item, generators=[inner])])
    comp = gast.ListComp(elt=elt, generators=[_comp(_name(c, True), index)])
    return low.expr(gast.copy_location(comp, e), pending, hint)


def _fold(low, e, pending, hint):

    f, items = e.args[0], e.args[1]
    init = e.args[2] if len(e.args) == 3 else None
    if isinstance(items, (gast.List, gast.Tuple)) and not any(
            isinstance(x, gast.Starred) for x in items.elts) and (items.elts or init):
        elts = list(items.elts)
        acc = init if init is not None else elts.pop(0)
        for x in elts:
            acc = apply(f, [acc, x])
        return low.expr(gast.copy_location(acc, e), pending, hint)
    acc = low.fresh(f"{hint}_reduce")
    _fold_loop(low, e, lambda a, x: apply(f, [a, x]), items, init, pending, hint, acc)
    return _name(acc)


def _fold_loop(low, e, step, items, init, pending, hint, acc, keep=list):
    """The loop of `_fold` and `_accumulate`: `acc` starts as `init` (or the first item) and
    is `step(acc, item)` after each item, in Python's order; `keep()`'s statements follow
    each value `acc` takes."""
    item = low.fresh(f"{acc}_item")
    if init is not None:
        pending.append(_assign(acc, low.expr(init, pending, hint)))
        pending.extend(keep())
        body = [_assign(acc, step(_name(acc), _name(item))), *keep()]
    else:
        first = low.fresh(f"{acc}_first")
        pending.append(_assign(first, gast.Constant(value=True, kind=None)))
        body = [gast.If(test=_name(first),
                        body=[_assign(acc, _name(item)),
                              _assign(first, gast.Constant(value=False, kind=None))],
                        orelse=[_assign(acc, step(_name(acc), _name(item)))]), *keep()]
    pending.append(gast.copy_location(_for(_name(item, True), items, body), e))


def _accumulate(low, e, pending, hint):
    """``itertools.accumulate(xs, f, initial=a)`` consumed once: the list of its running
    values, ``[a, f(a, x0), f(f(a, x0), x1), ...]`` (without `initial`: from ``x0``; without
    `f`: running sums), built by a loop in Python's order -- as `_fold`, keeping each."""
    kw = {k.arg: k.value for k in e.keywords}
    items = e.args[0]
    f = e.args[1] if len(e.args) == 2 else kw.get("func")
    init = kw.get("initial")

    def step(acc, x):
        if f is None or isinstance(f, gast.Constant) and f.value is None:
            return gast.BinOp(left=acc, op=gast.Add(), right=x)
        return apply(f, [acc, x])

    acc, out = low.fresh(f"{hint}_running"), low.fresh(f"{hint}_accumulated")
    pending.append(_assign(out, gast.List(elts=[], ctx=gast.Load())))

    def keep():  # (`out = out + [acc]`: a new list each trip, as pylower concatenates)
        return [_assign(out, gast.BinOp(left=_name(out), op=gast.Add(), right=gast.List(
            elts=[_name(acc)], ctx=gast.Load())))]

    if isinstance(init, gast.Constant) and init.value is None:
        init = None  # (`initial=None`: none, as itertools reads it)
    _fold_loop(low, e, step, items, init, pending, hint, acc, keep)
    return _name(out)


def _zipped(low, items):
    """``zip(a, b)`` handed to sorted / max / min: the list of its tuples,
    ``[(v0, v1) for v0, v1 in zip(a, b)]`` (the same items, in order: the zip is consumed
    once, there), so that each tuple's arrays carry their derivatives through the sort."""
    if not (isinstance(items, gast.Call) and items.args and not items.keywords and
            not any(isinstance(a, gast.Starred) for a in items.args) and
            _is(callee_object(low, items.func), builtins.zip)):
        return items
    vs = [low.fresh("zipped") for _ in items.args]
    target = gast.Tuple(elts=[_name(v, True) for v in vs], ctx=gast.Store())
    comp = gast.ListComp(elt=gast.Tuple(elts=[_name(v) for v in vs], ctx=gast.Load()),
                         generators=[_comp(target, items)])
    return gast.copy_location(comp, items)


def _extreme(low, e, largest: bool, pending, hint):
    """``max(items, key=k)`` / ``min(items, key=k)`` (also ``max(a, b, key=k)``): the first
    item of ``sorted(items, key=k, reverse=largest)`` -- Python's max and min return the
    first of the items with the extreme key, as the stable sort puts it first -- so the
    gradient flows to the item chosen."""
    items = e.args[0] if len(e.args) == 1 else gast.copy_location(
        gast.List(elts=list(e.args), ctx=gast.Load()), e)
    srt = gast.copy_location(_call("sorted", [items], [
        gast.keyword(arg="key", value=e.keywords[0].value),
        gast.keyword(arg="reverse", value=gast.Constant(value=largest, kind=None))]), e)
    ordered = _sorted(low, srt, pending, hint)
    return gast.copy_location(gast.Subscript(value=ordered, slice=gast.Constant(
        value=0, kind=None), ctx=gast.Load()), e)


def _sorted(low, e, pending, hint):

    kw = {k.arg: k.value for k in e.keywords}
    data = low.fresh(f"{hint}_items")
    pending.append(_assign(data, low.expr(_zipped(low, e.args[0]), pending, hint)))
    key = kw.get("key")
    if key is None or (isinstance(key, gast.Constant) and key.value is None):
        keys = gast.Constant(value=None, kind=None)
    else:
        v = low.fresh(f"{hint}_item")
        keys = low.expr(gast.ListComp(elt=_key_of(low, key, _name(v)),
                                      generators=[_comp(_name(v, True), _name(data))]),
                        pending, f"{hint}_keys")
    reverse = kw.get("reverse", gast.Constant(value=False, kind=None))
    return _call(SORTED_BY, [_name(data), keys, low.expr(reverse, pending, hint)])


def _key_of(low, key, v):
    """``key(v)``; for ``key=operator.itemgetter(i, ...)`` the item(s) themselves, ``v[i]``
    (what it returns), so that no opaque call stands between the items and the sort."""
    if isinstance(key, gast.Call) and key.args and not key.keywords and not any(
            isinstance(a, gast.Starred) for a in key.args) and _is(
            callee_object(low, key.func), operator.itemgetter):
        items = [gast.Subscript(value=copy.deepcopy(v), slice=copy.deepcopy(a), ctx=gast.Load())
                 for a in key.args]
        return items[0] if len(items) == 1 else gast.Tuple(elts=items, ctx=gast.Load())
    return apply(key, [v])


def _transpose(low, e, pending, hint):
    rows = e.args[0].value
    if isinstance(rows, (gast.List, gast.Tuple)) and not any(
            isinstance(x, gast.Starred) for x in rows.elts):
        return low.expr(gast.copy_location(_call("zip", rows.elts), e), pending, hint)

    held = low.fresh(f"{hint}_rows")
    pending.append(_assign(held, low.expr(rows, pending, hint)))
    p, j, q = (low.fresh(f"{hint}_{s}") for s in ("row", "col", "len"))
    width = _call("min", [gast.GeneratorExp(elt=_call("len", [_name(q)]),
                                            generators=[_comp(_name(q, True), _name(held))])])
    column = _call("tuple", [gast.GeneratorExp(
        elt=gast.Subscript(value=_name(p), slice=_name(j), ctx=gast.Load()),
        generators=[_comp(_name(p, True), _name(held))])])
    comp = gast.ListComp(elt=column, generators=[_comp(_name(j, True), _call("range", [width]))])
    return low.expr(gast.copy_location(comp, e), pending, hint)
