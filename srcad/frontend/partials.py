"""``functools.partial`` made in the function and called there (gast -> gast).

Input: a parsed function in which a local is bound, once, to ``partial(f, a, k=v)`` (f a
function or a numpy callable the module names: ``np.clip``, a user's ``leaky``) and is only
ever called: ``act(x)``. Output: the same function where the partial's arguments are bound
to fresh names where it was made (Python evaluates them there) and each call is the call of
f itself -- ``f(a, x, k=v)``, a call's own keywords replacing the partial's, as
``functools.partial`` does -- so a row or a user function is differentiated, with gradients
flowing through the bound arguments too. A partial used any other way (passed on, stored,
rebound) is left as written (and refused where a differentiated value reaches it). A
partial called where it is made, ``partial(dense, act=np.tanh)(x, W)``, is the call of f
itself too (its keywords free of calls, so that reading them at the call keeps Python's
order).
(A partial made at module level is unwrapped where it is called: calls.py `call_of`.)

Before/after:
    act = partial(np.clip, a_min=lo, a_max=0.5)     act_a_min = lo
    y = act(x)                                      act_a_max = 0.5
                                                    y = np.clip(x, a_min=act_a_min,
                                                                a_max=act_a_max)
"""

from __future__ import annotations

import copy
import functools

import gast

from ..naming import fresh
from .parse import resolve_dotted


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def lower_partials(pf, taken: set) -> None:
    """Rewrite `pf.tree` in place (see the module docstring)."""
    tree = pf.tree
    if not any(isinstance(n, gast.Call) for n in gast.walk(tree)):
        return
    stores: dict = {}
    for n in gast.walk(tree):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    calls = {id(n.func) for n in gast.walk(tree) if isinstance(n, gast.Call)}
    loads: dict = {}
    for n in gast.walk(tree):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            loads.setdefault(n.id, []).append(n)

    def is_partial(e) -> bool:
        return resolve_dotted(pf, e, stores) is functools.partial

    def global_callable(e) -> bool:  # (`np.clip`, `leaky`: read where the call is, as made)
        while isinstance(e, gast.Attribute):
            e = e.value
        return isinstance(e, gast.Name) and e.id not in stores and e.id not in pf.params

    made: dict = {}  # local name -> (function expression, [arg names], {keyword: name})
    scopes = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)

    def block(stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list) and not isinstance(s, scopes):
                    setattr(s, field, block(getattr(s, field)))
            if isinstance(s, gast.Try):
                for h in s.handlers:
                    h.body = block(h.body)
            if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
                    isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Call)):
                out.append(s)
                continue
            name, call = s.targets[0].id, s.value
            if not (is_partial(call.func) and call.args and stores.get(name) == 1 and
                    not any(isinstance(a, gast.Starred) for a in call.args) and
                    all(k.arg is not None for k in call.keywords) and
                    global_callable(call.args[0]) and
                    all(id(u) in calls for u in loads.get(name, ()))):
                out.append(s)
                continue
            args, kws, binds = [], {}, []
            for i, a in enumerate(call.args[1:]):
                v = fresh(f"{name}_arg{i}", taken)
                binds.append(gast.Assign(targets=[_name(v, True)], value=a, type_comment=None))
                args.append(v)
            for k in call.keywords:
                v = fresh(f"{name}_{k.arg}", taken)
                binds.append(gast.Assign(targets=[_name(v, True)], value=k.value,
                                         type_comment=None))
                kws[k.arg] = v
            made[name] = (call.args[0], args, kws)
            for b in binds:
                out.append(gast.copy_location(b, s))
        return out

    def plain(e) -> bool:  # (read where the call is: no call, so no order to keep)
        return not any(isinstance(n, (gast.Call, gast.NamedExpr, gast.Await, gast.Yield))
                       for n in gast.walk(e))

    tree.body = block(tree.body)

    class Calls(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            inner = node.func
            if isinstance(inner, gast.Call) and is_partial(inner.func) and inner.args and \
                    global_callable(inner.args[0]) and \
                    all(k.arg is not None and plain(k.value) for k in inner.keywords) and \
                    not any(isinstance(a, gast.Starred) for a in inner.args):
                # `partial(dense, act=np.tanh)(x, W)`, called where it is made: the call of
                # dense itself, `dense(x, W, act=np.tanh)` (the call's keywords win)
                given = {k.arg for k in node.keywords if k.arg is not None}
                new = gast.Call(func=inner.args[0], args=[*inner.args[1:], *node.args],
                                keywords=[k for k in inner.keywords if k.arg not in given] +
                                list(node.keywords))
                return gast.copy_location(new, node)
            if isinstance(node.func, gast.Name) and node.func.id in made:
                fn, args, kws = made[node.func.id]
                given = {k.arg for k in node.keywords if k.arg is not None}
                new = gast.Call(
                    func=copy.deepcopy(fn), args=[*(_name(a) for a in args), *node.args],
                    keywords=[gast.keyword(arg=k, value=_name(v)) for k, v in kws.items()
                              if k not in given] + list(node.keywords))
                return gast.copy_location(new, node)
            return node

    Calls().visit(tree)
    gast.fix_missing_locations(tree)
