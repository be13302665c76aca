"""Loops over a container's items that write into the item in place (gast -> gast).

``for param, grad in zip(params, grads): param -= lr * grad`` (an SGD step in from-scratch
code), ``for w in Ws: np.clip(w, -5, 5, out=w)`` (min-char-rnn's clipping): Python binds the
loop variable to the container's item itself, so an in-place write into it (``op=`` on an
array, a store into ``w[...]``, an ``out=`` -- made a store by `_out_keyword_as_write`) writes
the container's array. srcad follows such writes through a name read from the container by
an index (``p = ps[i]``: aliasing.py's element relation, `write_through`), so the loop is
written as the indexed loop Python runs:

    for p, g in zip(ps, gs):            for p_k in range(min(len(ps), len(gs))):
        p -= lr * g                         p = ps[p_k]
                                            g = gs[p_k]
                                            p -= lr * g

Only loops whose iterable is a name or an attribute of one (``self.params``), ``xs[::-1]``
or ``reversed(xs)``, or ``zip`` / ``enumerate`` of names (and ``enumerate(zip(...))``), whose
targets are names or tuples of names (``for W, b in layers``, ``for i, (p, g) in ...``), and
whose body writes into a loop variable in place are rewritten; others are left as written.
(A scalar item is no array: ``v += 1`` rebinds v and the container keeps its item, as
`runtime.write_through` decides when the code runs.)
"""

from __future__ import annotations

import copy

import gast

from ..naming import fresh


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _call(fn: str, args):
    return gast.Call(func=_name(fn), args=args, keywords=[])


def _own_nodes(body):
    """The nodes of `body`, not those of functions or classes defined in it."""
    stack = list(body)
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef,
                          gast.Lambda)):
            continue
        stack.extend(gast.iter_child_nodes(n))


def written_in_place(body, names: set) -> bool:
    for n in _own_nodes(body):
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) and \
                n.target.id in names:
            return True
        targets = n.targets if isinstance(n, gast.Assign) else \
            [n.target] if isinstance(n, gast.AugAssign) else []
        for t in targets:
            while isinstance(t, gast.Subscript):
                t = t.value
                if isinstance(t, gast.Name) and t.id in names:
                    return True
    return False


def _plain(e) -> bool:
    """A name, or an attribute of one (`self.params`)."""
    while isinstance(e, gast.Attribute):
        e = e.value
    return isinstance(e, gast.Name)


def _dotted(e) -> str:
    parts = []
    while isinstance(e, gast.Attribute):
        parts.append(e.attr)
        e = e.value
    return ".".join([e.id] + parts[::-1])


def _ref(dotted: str):
    root, *attrs = dotted.split(".")
    e = _name(root)
    for a in attrs:
        e = gast.Attribute(value=e, attr=a, ctx=gast.Load())
    return e


def _names_target(t) -> bool:
    """A name, or a tuple / list of names (`for W, b in layers`)."""
    return isinstance(t, gast.Name) or (isinstance(t, (gast.Tuple, gast.List)) and
                                        t.elts and all(isinstance(x, gast.Name)
                                                       for x in t.elts))


def _reversed_name(e):
    """`xs` of `xs[::-1]` (pyforms.py's spelling of `reversed(xs)`), else None."""
    if not (isinstance(e, gast.Subscript) and _plain(e.value) and
            isinstance(e.slice, gast.Slice) and e.slice.lower is None and
            e.slice.upper is None):
        return None
    step = e.slice.step
    if isinstance(step, gast.UnaryOp) and isinstance(step.op, gast.USub) and \
            isinstance(step.operand, gast.Constant) and step.operand.value == 1:
        return _dotted(e.value)
    if isinstance(step, gast.Constant) and type(step.value) is int and step.value == -1:
        return _dotted(e.value)
    return None


def _split(loop: gast.For, shadowed: set):
    """(index name or None, [(item target, container name)], walks backward: True, or
    "items" where an enumerate's count runs forward over the items last first) of a loop
    this pass rewrites, else None."""
    it, target = loop.iter, loop.target
    if _plain(it) and _names_target(target):
        return None, [(target, _dotted(it))], False
    if _reversed_name(it) is not None and _names_target(target):
        return None, [(target, _reversed_name(it))], True
    if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
            it.func.id == "reversed" and "reversed" not in shadowed and len(it.args) == 1 \
            and _plain(it.args[0]) and not it.keywords and _names_target(target):
        return None, [(target, _dotted(it.args[0]))], True
    if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
            it.func.id == "enumerate" and "enumerate" not in shadowed and \
            len(it.args) == 1 and not it.keywords and isinstance(target, gast.Tuple) and \
            len(target.elts) == 2 and isinstance(target.elts[0], gast.Name) and \
            _names_target(target.elts[1]):
        walked = it.args[0]
        if _plain(walked):
            return target.elts[0].id, [(target.elts[1], _dotted(walked))], False
        zipped = _zipped(walked, target.elts[1], shadowed)
        if zipped is not None:  # (`for i, (p, g) in enumerate(zip(ps, gs))`)
            return target.elts[0].id, zipped, False
        if _reversed_name(walked) is not None:  # (`enumerate(reversed(ps))`: i counts up)
            return target.elts[0].id, [(target.elts[1], _reversed_name(walked))], "items"
        return None
    zipped = _zipped(it, target, shadowed)
    return None if zipped is None else (None, zipped, False)


def _zipped(it, target, shadowed: set):
    """[(item target, container name)] of `zip(xs, ys)` of names walked by a tuple of
    targets (`p, g`), else None."""
    if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
            it.func.id == "zip" and "zip" not in shadowed and
            not it.keywords and it.args and all(_plain(a) for a in it.args)):
        return None
    if not (isinstance(target, gast.Tuple) and len(target.elts) == len(it.args) and
            all(_names_target(t) for t in target.elts)):
        return None
    return [(t, _dotted(a)) for t, a in zip(target.elts, it.args)]


def _bound(target) -> set:
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}


def index_item_loops(fdef: gast.FunctionDef, taken: set) -> None:
    """Rewrite `fdef` in place (see the module docstring)."""
    shadowed = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name) and
                isinstance(n.ctx, gast.Store)}
    if shadowed & {"len", "range", "min"}:
        return
    for loop in [n for n in _own_nodes(fdef.body) if isinstance(n, gast.For)]:
        if loop.orelse:
            continue
        split = _split(loop, shadowed)
        if split is None:
            continue
        index, pairs, backward = split
        names = set().union(*(_bound(t) for t, _ in pairs))
        if not written_in_place(loop.body, names):
            continue
        containers = {c for _, c in pairs}
        stored = {_dotted(n) for n in _own_nodes(loop.body) if
                  isinstance(n, (gast.Name, gast.Attribute)) and _plain(n) and
                  isinstance(n.ctx, (gast.Store, gast.Del))}
        roots = {c.split(".")[0] for c in containers}
        if (containers | roots) & (stored | names):
            continue  # (the loop rebinds what it walks: left as written)
        k = index or fresh(f"{sorted(names)[0]}_k", taken)
        taken.add(k)
        lens = [_call("len", [_ref(c)]) for c in dict.fromkeys(c for _, c in pairs)]
        count = lens[0] if len(lens) == 1 else _call("min", lens)
        reads = []
        for t, c in pairs:
            at = _name(k)
            if backward == "items":  # (the count runs forward, the items backward)
                at = gast.BinOp(left=gast.BinOp(left=_call("len", [_ref(c)]), op=gast.Sub(),
                                                right=gast.Constant(1, None)),
                                op=gast.Sub(), right=_name(k))
            item = gast.Subscript(value=_ref(c), slice=at, ctx=gast.Load())
            if isinstance(t, gast.Name):
                reads.append(gast.Assign(targets=[_name(t.id, store=True)], value=item,
                                         type_comment=None))
                continue
            # `W, b = layers[k]` as `item = layers[k]; W = item[0]; b = item[1]`: each
            # name read from the item by its index (an item of the item, written through)
            held = fresh(f"{c.replace('.', '_')}_item", taken)
            taken.add(held)
            reads.append(gast.Assign(targets=[_name(held, store=True)], value=item,
                                     type_comment=None))
            reads.extend(gast.Assign(targets=[_name(x.id, store=True)], value=gast.Subscript(
                value=_name(held), slice=gast.Constant(j, None), ctx=gast.Load()),
                type_comment=None) for j, x in enumerate(t.elts))
        loop.target = _name(k, store=True)
        if backward is True:  # (`for p in xs[::-1]`: the same items, last first)
            last = gast.BinOp(left=count, op=gast.Sub(), right=gast.Constant(1, None))
            minus_one = gast.UnaryOp(op=gast.USub(), operand=gast.Constant(1, None))
            loop.iter = _call("range", [last, minus_one, copy.deepcopy(minus_one)])
        else:
            loop.iter = _call("range", [count])
        loop.body = [copy.deepcopy(r) for r in reads] + loop.body
        for n in [loop.target, loop.iter] + loop.body[:len(reads)]:
            for m in gast.walk(n):
                gast.copy_location(m, loop)
    gast.fix_missing_locations(fdef)
