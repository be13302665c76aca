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

Only loops whose iterable is a name (or ``zip`` / ``enumerate`` of names) and whose body
writes into a loop variable in place are rewritten; others are left as written. (A scalar
item is no array: ``v += 1`` rebinds v and the container keeps its item, as
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


def _written_in_place(body, names: set) -> bool:
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
    return isinstance(e, gast.Name)


def _split(loop: gast.For, shadowed: set):
    """(index name or None, [(item target name, container name)]) of a loop this pass
    rewrites, else None."""
    it, target = loop.iter, loop.target
    if _plain(it) and isinstance(target, gast.Name):
        return None, [(target.id, it.id)]
    if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
            it.func.id in ("zip", "enumerate") and it.func.id not in shadowed and
            not it.keywords and it.args and all(_plain(a) for a in it.args)):
        return None
    if it.func.id == "enumerate":
        if len(it.args) != 1 or not (isinstance(target, gast.Tuple) and
                                     len(target.elts) == 2 and
                                     all(isinstance(t, gast.Name) for t in target.elts)):
            return None
        return target.elts[0].id, [(target.elts[1].id, it.args[0].id)]
    if not (isinstance(target, gast.Tuple) and len(target.elts) == len(it.args) and
            all(isinstance(t, gast.Name) for t in target.elts)):
        return None
    return None, [(t.id, a.id) for t, a in zip(target.elts, it.args)]


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
        index, pairs = split
        if not _written_in_place(loop.body, {t for t, _ in pairs}):
            continue
        containers = {c for _, c in pairs}
        stored = {n.id for n in _own_nodes(loop.body) if isinstance(n, gast.Name) and
                  isinstance(n.ctx, (gast.Store, gast.Del))}
        if containers & stored or any(t in containers for t, _ in pairs):
            continue  # (the loop rebinds what it walks: left as written)
        k = index or fresh(f"{pairs[0][0]}_k", taken)
        taken.add(k)
        lens = [_call("len", [_name(c)]) for c in dict.fromkeys(c for _, c in pairs)]
        count = lens[0] if len(lens) == 1 else _call("min", lens)
        reads = [gast.Assign(targets=[_name(t, store=True)], value=gast.Subscript(
            value=_name(c), slice=_name(k), ctx=gast.Load()), type_comment=None)
            for t, c in pairs]
        loop.target = _name(k, store=True)
        loop.iter = _call("range", [count])
        loop.body = [copy.deepcopy(r) for r in reads] + loop.body
        for n in [loop.target, loop.iter] + loop.body[:len(reads)]:
            for m in gast.walk(n):
                gast.copy_location(m, loop)
    gast.fix_missing_locations(fdef)
