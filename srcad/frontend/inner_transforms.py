"""``srcad.vjp`` and ``srcad.jvp`` written inside a differentiated function, lowered to calls
of ``srcad.grad`` transforms -- which the outer transform differentiates through as it does
any transform called inside (srcad/ops/composed.py), at every order (gast -> gast).

Input: a fenced gast `FunctionDef`. Output: the same function where

  * ``out, pb = srcad.vjp(f, a, b)`` (pb only ever called, ``pb(ct)``) becomes
    ``out = f(a, b)`` and each ``pb(ct)`` becomes ``T(a, b, ct)``, T the gradient w.r.t.
    (a, b) of ``tree_vdot(f(a, b), g)`` (the pullback applied to ct: a tuple, one per primal);
  * ``out, tan = srcad.jvp(f, (a, b), (u, v))`` becomes ``out = f(a, b)`` and
    ``tan = J(a, b, u, v, out)``, J the gradient w.r.t. c of ``tree_vdot(T(a, b, c), (u,
    v))`` -- linear in c, so its gradient (J's tangent, c's structure) holds at any c.

The primals and tangents are bound to fresh names where the call was, so a later call of
the pullback sees the values the call saw. `f` may be a nested def or a lambda (lifted by
closures.py, which runs first, into ``partial(lifted, w=w)``): its free variables are bound
there too and passed after the primals (``T(a, b, w, ct)``), so the outer transform
differentiates through what the closure reads. A form that does not fit (the pullback used as a
value, primals not a tuple display, a function held in a local) is left as written and
refused where a differentiated value reaches it.

Before/after:
    out, pb = srcad.vjp(f, x)             vjp_p0 = x
    (dx,) = pb(np.ones(3))                out = f(vjp_p0)
                                          (dx,) = vjp_grad_f(vjp_p0, np.ones(3))
"""

from __future__ import annotations

import ast

import gast

from ..errors import UnsupportedSyntaxError
from ..naming import fresh
from .callbacks import _SCOPES, _name
from .closures import PARTIAL

_BLOCKS = ("body", "orelse", "finalbody")


class _Lowerer:
    def __init__(self, pf, taken: set):
        self.pf, self.taken = pf, taken
        self.stores: dict = {}
        for n in gast.walk(pf.tree):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                self.stores[n.id] = self.stores.get(n.id, 0) + 1
        self.calls = {id(n.func): n for n in gast.walk(pf.tree) if isinstance(n, gast.Call)}
        self.pullbacks: dict = {}  # pullback name -> (transform name, primal names)

    def resolve(self, e):
        names = []
        while isinstance(e, gast.Attribute):
            names.append(e.attr)
            e = e.value
        if not isinstance(e, gast.Name) or e.id in self.stores:
            return None
        try:
            obj = self.pf.resolve(e.id)
            for n in reversed(names):
                obj = getattr(obj, n)
        except (AttributeError, NameError, KeyError):
            return None
        return obj

    def block(self, stmts: list) -> list:
        out = []
        for s in stmts:
            for field in _BLOCKS:
                if isinstance(getattr(s, field, None), list) and not isinstance(s, _SCOPES):
                    setattr(s, field, self.block(getattr(s, field)))
            lowered = self.statement(s)
            if lowered is None:
                out.append(s)
                continue
            for new in lowered:  # (at the user's line: errors and comments name it)
                for node in gast.walk(new):
                    if hasattr(node, "lineno") or isinstance(node, (gast.stmt, gast.expr)):
                        gast.copy_location(node, s)
            out.extend(lowered)
        return out

    def statement(self, s):
        """The statements replacing ``out, r = srcad.vjp/jvp(...)``, else None."""
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Tuple) and len(s.targets[0].elts) == 2 and all(
                isinstance(t, gast.Name) for t in s.targets[0].elts) and isinstance(
                s.value, gast.Call) and s.value.args and not any(
                isinstance(a, gast.Starred) for a in s.value.args)):
            return None
        kind = getattr(self.resolve(s.value.func), "_srcad_inner", None)
        if kind not in ("vjp", "jvp"):
            return None
        call = s.value
        fn, free = self.resolve(call.args[0]), []
        if fn is None and _lifted_partial(call.args[0]):
            # `srcad.vjp(lambda v: np.tanh(v) * w, x)` (or a nested def): closures.py made it
            # `partial(lifted, w=w)`; the free variables go after the primals, as values at
            # this point, and the outer transform differentiates through them
            fn = self.resolve(call.args[0].args[0])
            free = [k.value for k in call.args[0].keywords]
        options = self.options(call)
        if fn is None or not callable(fn) or options is None:
            return None
        out, second = (t.id for t in s.targets[0].elts)
        if kind == "vjp":
            return self.vjp(s, call, fn, options, out, second, free)
        return self.jvp(s, call, fn, options, out, second, free)

    def options(self, call):
        options = {}
        for k in call.keywords:
            if k.arg is None or not isinstance(k.value, gast.Constant):
                return None
            options[k.arg] = ast.literal_eval(gast.gast_to_ast(k.value))
        return options

    def bind(self, s, base, nodes) -> tuple[list, list]:
        names = [fresh(f"{base}{i}", self.taken) for i in range(len(nodes))]
        stmts = [gast.Assign(targets=[_name(n, True)], value=v, type_comment=None)
                 for n, v in zip(names, nodes)]
        return names, stmts

    def forward(self, call, out, names):
        f = call.args[0].args[0] if _lifted_partial(call.args[0]) else call.args[0]
        return gast.Assign(targets=[_name(out, True)], value=gast.Call(
            func=f, args=[_name(n) for n in names], keywords=[]), type_comment=None)

    def transform(self, call, fn, n, options, base: str, extra: int = 0) -> str:
        """A name the code calls the transform `srcad.vjp`/`jvp` lowers to by (api.py)."""
        name = fresh(f"{base}_{getattr(fn, '__name__', 'f')}", self.taken)
        self.pf.closure[name] = self.resolve(call.func)._srcad_transform_of(fn, n, options,
                                                                           extra)
        return name

    def vjp(self, s, call, fn, options, out, pb, free=()):
        uses = [n for n in gast.walk(self.pf.tree) if isinstance(n, gast.Name) and n.id == pb
                and isinstance(n.ctx, gast.Load)]
        if self.stores.get(pb) != 1 or not all(
                id(u) in self.calls and len(self.calls[id(u)].args) == 1
                and not self.calls[id(u)].keywords for u in uses):
            return None
        names, stmts = self.bind(s, "vjp_p", call.args[1:])
        cells, more = self.bind(s, "vjp_c", free)
        t = self.transform(call, fn, len(names), options, "vjp_grad", len(cells))
        self.pullbacks[pb] = (t, names + cells)
        return [*stmts, *more, self.forward(call, out, names + cells)]

    def jvp(self, s, call, fn, options, out, tan, free=()):
        if len(call.args) != 3 or not all(isinstance(a, gast.Tuple) for a in call.args[1:]) \
                or len(call.args[1].elts) != len(call.args[2].elts) or not call.args[1].elts:
            return None
        names, stmts = self.bind(s, "jvp_p", call.args[1].elts)
        cells, held = self.bind(s, "jvp_c", free)
        tangents, more = self.bind(s, "jvp_t", call.args[2].elts)
        t = self.transform(call, fn, len(names), options, "jvp_grad", len(cells))
        value = gast.Call(func=_name(t), args=[_name(v) for v in names + cells + tangents] + [
            _name(out)], keywords=[])
        return [*stmts, *held, *more, self.forward(call, out, names + cells),
                gast.Assign(targets=[_name(tan, True)], value=value, type_comment=None)]

    def pullback_calls(self, tree) -> None:
        """Each ``pb(ct)`` as ``T(p0, ..., ct)``."""
        lowerer = self

        class _Calls(gast.NodeTransformer):
            def visit_Call(self, node):
                self.generic_visit(node)
                if isinstance(node.func, gast.Name) and node.func.id in lowerer.pullbacks:
                    t, names = lowerer.pullbacks[node.func.id]
                    return gast.copy_location(gast.Call(
                        func=_name(t), args=[*(_name(v) for v in names), *node.args],
                        keywords=[]), node)
                return node

        _Calls().visit(tree)


    def refuse_the_rest(self, tree) -> None:
        """A call of srcad.vjp / srcad.jvp in a form not lowered: refused here, with the form
        that works (the function's own refusal would blame `f` used as a value)."""
        for node in gast.walk(tree):
            if not isinstance(node, gast.Call):
                continue
            kind = getattr(self.resolve(node.func), "_srcad_inner", None)
            if kind is None:
                continue
            hint = ("write `out, pullback = srcad.vjp(f, x)` (f a function, a nested def or a "
                    "lambda) and call the pullback in this function: `(dx,) = pullback(ct)`"
                    if kind == "vjp" else
                    "write `out, tangent = srcad.jvp(f, (x, ...), (v, ...))` (f a function, a "
                    "nested def or a lambda) with the primals and tangents as tuple displays")
            raise self.pf.error(f"this form of srcad.{kind} inside a differentiated function "
                                f"is not supported", node, hint=hint,
                                cls=UnsupportedSyntaxError)


def _lifted_partial(e) -> bool:
    """`partial(lifted, w=w)`: a nested def or lambda used as a value (closures.py)."""
    return isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and \
        e.func.id == PARTIAL and len(e.args) == 1 and isinstance(e.args[0], gast.Name) and \
        all(k.arg is not None for k in e.keywords)


def lower_inner_transforms(pf, taken: set) -> None:
    """Rewrite `pf.tree` in place (see the module docstring)."""
    if not any(isinstance(n, gast.Call) and getattr(n.func, "attr", getattr(
            n.func, "id", None)) in ("vjp", "jvp") for n in gast.walk(pf.tree)):
        return
    low = _Lowerer(pf, taken)
    body = low.block(pf.tree.body)
    if body is not pf.tree.body:
        pf.tree.body = body
    low.pullback_calls(pf.tree)
    low.refuse_the_rest(pf.tree)
    gast.fix_missing_locations(pf.tree)
