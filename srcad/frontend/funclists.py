"""A list of functions the function makes, walked by a loop that calls each one.

Functional-style layer code keeps its layers as functions in a list and folds the input
through them:

    fs = [lambda h: np.tanh(h @ W1), lambda h: np.sin(h @ W2)]
    fs = [lambda h, W=W: np.tanh(h @ W) for W in Ws]       (`W=W`: the late-binding fix)
    for fn in fs:
        x = fn(x)

A function value in a list is no value srcad differentiates through (closures.py lifts a
lambda it can see called, not one fetched from a list), so such code was refused. Here the
loop is written out, one copy of its body per function, after ``fn = <that function>``;
closures.py then lifts each as a lambda called where it is bound. A lambda's default read
from the loop variable of the comprehension that made it (``W=W``) is the item itself,
``Ws[k]``, substituted into the lambda's body: Python evaluated the default once, where the
function was made, and ``Ws`` (never stored in the function) still holds that item.

Only where it is plain: the list is bound once, at the function's top level, to a display of
lambdas and names or to a comprehension of one lambda over a sequence whose length the call
tells (a list argument: `ParsedFunction.statics`), is read only by such loops, and each loop
has no ``break`` / ``continue`` / ``else``, never rebinds its variable, and only calls it
(positionally, with no more arguments than the lambda's parameters without defaults).
Otherwise the function is left as it is.
"""

from __future__ import annotations

import copy

import gast

from ..naming import fresh
from .chosen import argument_length

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


def unroll_function_lists(pf) -> None:
    """Write out the loops of `pf` over a list of functions it makes (see above)."""
    body = pf.tree.body = _appends_as_comprehensions(pf.tree)
    dead = []
    for s in body:
        name = _bound_list(s)
        if name is None or _stored_elsewhere(pf.tree, name, s):
            continue
        loops = [n for n in gast.walk(pf.tree) if isinstance(n, gast.For) and
                 isinstance(n.iter, gast.Name) and n.iter.id == name]
        reads = [n for n in gast.walk(pf.tree) if isinstance(n, gast.Name) and
                 n.id == name and isinstance(n.ctx, gast.Load)]
        if not loops or len(reads) != len(loops) or not all(_plain_loop(lp) for lp in loops):
            continue
        fns = {lp.target.id for lp in loops}
        inside = {id(n) for lp in loops for st in [lp.target, *lp.body] for n in gast.walk(st)}
        if any(isinstance(n, gast.Name) and n.id in fns and id(n) not in inside
               for n in gast.walk(pf.tree)):
            continue  # (the loop variable read after the loop: left as written)
        items = _items(pf, s.value, s)
        if items is None:
            continue
        _replace_loops(pf.tree, loops, items)
        dead.append(s)  # (read only by the loops, now written out)
    if dead:
        pf.tree.body = [s for s in pf.tree.body if not any(s is d for d in dead)]


def _appends_as_comprehensions(tree) -> list:
    """``fs = []`` then ``for W in Ws: fs.append(lambda h, W=W: ...)`` (the loop's one
    statement) at the top level: the comprehension it makes, ``fs = [lambda ... for W in
    Ws]`` -- where the loop variable is read nowhere else (Python leaves it bound)."""
    body, out, i = tree.body, [], 0
    while i < len(body):
        s, nxt = body[i], body[i + 1] if i + 1 < len(body) else None
        name = s.targets[0].id if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
            isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.List) and \
            not s.value.elts else None
        if name is not None and isinstance(nxt, gast.For) and not nxt.orelse and \
                isinstance(nxt.target, gast.Name) and len(nxt.body) == 1 and \
                isinstance(nxt.body[0], gast.Expr) and isinstance(nxt.body[0].value, gast.Call):
            call = nxt.body[0].value
            var = nxt.target.id
            if isinstance(call.func, gast.Attribute) and call.func.attr == "append" and \
                    isinstance(call.func.value, gast.Name) and call.func.value.id == name and \
                    len(call.args) == 1 and not call.keywords and \
                    isinstance(call.args[0], gast.Lambda) and sum(
                        isinstance(n, gast.Name) and n.id == var
                        for n in gast.walk(tree)) == sum(
                        isinstance(n, gast.Name) and n.id == var for n in gast.walk(nxt)):
                comp = gast.ListComp(elt=call.args[0], generators=[gast.comprehension(
                    target=nxt.target, iter=nxt.iter, ifs=[], is_async=0)])
                made = gast.Assign(targets=s.targets, value=gast.copy_location(comp, nxt),
                                   type_comment=None)
                out.append(gast.copy_location(made, s))
                i += 2
                continue
        out.append(s)
        i += 1
    return out


def _bound_list(s):
    """`name` where `s` is ``name = [lambda ...]`` / ``name = [lambda ... for t in seq]``."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
            isinstance(s.targets[0], gast.Name)):
        return None
    v = s.value
    if isinstance(v, gast.List) and v.elts and all(
            isinstance(x, (gast.Lambda, gast.Name)) for x in v.elts) and any(
            isinstance(x, gast.Lambda) for x in v.elts):
        return s.targets[0].id
    if isinstance(v, gast.ListComp) and isinstance(v.elt, gast.Lambda) and \
            len(v.generators) == 1 and not v.generators[0].ifs and \
            isinstance(v.generators[0].target, gast.Name):
        return s.targets[0].id
    return None


def _stored_elsewhere(tree, name: str, at) -> bool:
    """Is `name` stored, deleted or changed in place anywhere but by `at`, or read in a scope
    of its own (a closure reads it when called)?"""
    for n in gast.walk(tree):
        if n is at or n is tree:
            continue
        if isinstance(n, (gast.Global, gast.Nonlocal)) and name in n.names:
            return True
        if isinstance(n, gast.Name) and n.id == name and \
                isinstance(n.ctx, (gast.Store, gast.Del)) and n is not at.targets[0]:
            return True
        if isinstance(n, _SCOPES) and n is not at.value and not _within(at.value, n) and any(
                isinstance(m, gast.Name) and m.id == name for m in gast.walk(n)):
            return True
    return False


def _within(root, node) -> bool:
    return any(n is node for n in gast.walk(root))


def _plain_loop(loop) -> bool:
    if loop.orelse or not isinstance(loop.target, gast.Name):
        return False
    fn = loop.target.id
    for n in (x for st in loop.body for x in gast.walk(st)):
        if isinstance(n, (gast.Break, gast.Continue)):
            return False
        if isinstance(n, gast.Name) and n.id == fn and not isinstance(n.ctx, gast.Load):
            return False
        if isinstance(n, _SCOPES) and any(isinstance(m, gast.Name) and m.id == fn
                                          for m in gast.walk(n)):
            return False
    calls = {id(n.func) for st in loop.body for n in gast.walk(st)
             if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
             n.func.id == fn and not n.keywords and
             not any(isinstance(a, gast.Starred) for a in n.args)}
    return all(id(n) in calls for st in loop.body for n in gast.walk(st)
               if isinstance(n, gast.Name) and n.id == fn)


def _items(pf, v, at):
    """The functions the list holds, as expressions to bind per copy; None where unknown."""
    if isinstance(v, gast.List):
        return [copy.deepcopy(x) for x in v.elts]
    g = v.generators[0]
    seq = g.iter
    n = None
    if isinstance(seq, (gast.List, gast.Tuple)) and \
            not any(isinstance(x, gast.Starred) for x in seq.elts):
        n = len(seq.elts)
    else:
        n = argument_length(pf, seq, at, "a list of functions made over an argument, called "
                            "in a loop")
    if n is None or n > 64:
        return None
    var = g.target.id

    def item(k):
        return copy.deepcopy(seq.elts[k]) if isinstance(seq, (gast.List, gast.Tuple)) else \
            gast.Subscript(value=gast.Name(id=seq.id, ctx=gast.Load(), annotation=None,
                                           type_comment=None),
                           slice=gast.Constant(value=k, kind=None), ctx=gast.Load())

    out = []
    for k in range(n):
        lam = _bind_defaults(copy.deepcopy(v.elt), var, item(k))
        if lam is None:
            return None
        # (a read of the variable itself in the body is late-bound, as Python's closures
        # are: every function sees its last value, the last item -- unlike `W=W`)
        out.append(_put(lam, var, item(n - 1)) if n else lam)
    return out


def _bind_defaults(lam, var: str, item):
    """`lambda h, W=W: body` made in a comprehension over `var`: the defaults that read only
    `var` (or constants) become their values in the body; other defaults -- None."""
    a = lam.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
        return None
    n_def = len(a.defaults)
    if not n_def:
        return lam
    kept, subst = a.args[:len(a.args) - n_def], {}
    for p, d in zip(a.args[len(a.args) - n_def:], a.defaults):
        names = {m.id for m in gast.walk(d) if isinstance(m, gast.Name)}
        if not names <= {var} or any(isinstance(m, (gast.Call, gast.Lambda))
                                     for m in gast.walk(d)):
            return None
        subst[p.id] = _put(copy.deepcopy(d), var, item)
    if any(isinstance(m, gast.Name) and m.id in subst and not isinstance(m.ctx, gast.Load)
           for m in gast.walk(lam.body)):
        return None
    lam.body = _Put(subst).visit(lam.body)
    lam.args = gast.arguments(args=kept, posonlyargs=[], vararg=None, kwonlyargs=[],
                              kw_defaults=[], kwarg=None, defaults=[])
    return lam


class _Put(gast.NodeTransformer):
    def __init__(self, values: dict):
        self.values = values

    def visit_Lambda(self, node):  # (an inner lambda's own parameter shadows)
        own = {p.id for p in node.args.args}
        inner = _Put({k: v for k, v in self.values.items() if k not in own})
        node.body = inner.visit(node.body)
        return node

    def visit_Name(self, node):
        if node.id in self.values and isinstance(node.ctx, gast.Load):
            return gast.copy_location(copy.deepcopy(self.values[node.id]), node)
        return node


def _put(node, var: str, item):
    """`node` with the comprehension variable `var` read as `item` (not where a lambda's
    parameter of that name shadows it)."""
    if isinstance(node, gast.Lambda):
        if var in {p.id for p in node.args.args}:
            return node
        node.body = _Put({var: item}).visit(node.body)
        return node
    return _Put({var: item}).visit(node)


def _replace_loops(tree, loops, items) -> None:
    ids = {id(lp) for lp in loops}
    taken = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}

    class _Unroll(gast.NodeTransformer):
        def generic_visit(self, node):
            for field, old in gast.iter_fields(node):
                if isinstance(old, list) and old and isinstance(old[0], gast.stmt):
                    new = []
                    for st in old:
                        if id(st) in ids:
                            new.extend(_copies(st, items, taken))
                        else:
                            new.append(self.visit(st))
                    setattr(node, field, new)
                elif isinstance(old, gast.AST):
                    setattr(node, field, self.visit(old))
            return node

    _Unroll().visit(tree)
    gast.fix_missing_locations(tree)


def _copies(loop, items, taken: set) -> list:
    """One copy of `loop`'s body per item, its variable a name of its own in each (`fn`,
    `fn_2`, ...: closures.py lifts each as a function bound once)."""
    out = []
    for item in items:
        name = fresh(loop.target.id, taken)
        bind = gast.Assign(targets=[gast.Name(id=name, ctx=gast.Store(),
                                              annotation=None, type_comment=None)],
                           value=copy.deepcopy(item), type_comment=None)
        # (at the line the function is written on: a lifted lambda's lines are its own)
        out.append(gast.copy_location(bind, item if getattr(item, "lineno", None) else loop))
        rename = _Put({loop.target.id: gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                                 type_comment=None)})
        for st in loop.body:
            out.append(rename.visit(copy.deepcopy(st)))
    for st in out:
        for n in gast.walk(st):
            if not isinstance(n, (gast.expr, gast.stmt)):
                continue
            if getattr(n, "lineno", None) is None:
                gast.copy_location(n, loop)
            if getattr(n, "end_lineno", None) is not None and n.end_lineno < n.lineno:
                n.end_lineno = n.lineno  # (a binding at the loop's line of a lambda above)
    return out
