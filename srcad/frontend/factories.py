"""Closures a user function makes and returns ("factories"): spliced into the caller (gast ->
gast).

A factory is a function of the same module whose body binds a few names, defines one
nested function (or lambda) and returns it:

    def make_dense(W, b, act=np.tanh):
        def layer(x):
            return act(x @ W + b)
        return layer

Its call, assigned to a name in the function srcad normalises (``f = make_dense(W1, b1)``,
or an item of a list display of such calls: ``net = [make_dense(W1, b1), ...]``), becomes
the factory's body written in the caller -- each parameter bound to its argument (or its
default) under a fresh name, the nested function defined under the caller's name -- so the
closure is a nested function of the caller, which closures.py lifts like any other:
gradients flow through the values it closes over. A list display of such closures that the
caller only loops over (``for f in net: h = f(h)``) is looped over as the display itself,
which pylower.py unrolls (each closure called where the item is).

Input: a `ParsedFunction` before the fence. Output: the same, in place. A call that does
not fit (another module's function, `*args`, a closure writing `nonlocal`, a body with
other statements, a name assigned twice) is left as written (and refused where a gradient
needs it).

Before/after:
    f = make_scaled(W, b)               W_1 = W
                                        b_1 = b
                                        def f(x):
                                            return np.tanh(x @ W_1 + b_1)
"""

from __future__ import annotations

import builtins
import copy
import inspect
import types
from collections import Counter

import gast

from ..naming import fresh
from . import guards
from .opaque import library_file
from .parse import LIFTED, parse_function


ARGUMENT = "__srcad_argument"


def scoped_argument(value):
    """`W_f = __srcad_argument(W)`: a factory's parameter bound to its argument where the
    call is spliced in -- the same object, under a name whose adjoint is summed on its own
    before it reaches the argument's (normalize: a copy kept, `ir.Call.scope`), as tape mode
    sums the fresh Tensor it gives a user function for each argument."""
    return value


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _factory_tree(fn):
    """fn's parsed `FunctionDef` when fn is a factory this pass splices in, else None."""
    if not isinstance(fn, types.FunctionType) or fn in LIFTED or library_file(fn) is not None \
            or fn.__code__.co_freevars or inspect.isgeneratorfunction(fn):
        return None
    try:
        pf = parse_function(fn)
    except Exception:  # noqa: BLE001  (no source: not spliced)
        return None
    fdef = pf.tree
    a = fdef.args
    # (`*ws` is a parameter of parse_function's tree, the tuple: pf.vararg -- spliced, one
    # argument would bind it, not the tuple of it; such a call is followed by user_call)
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or fdef.decorator_list or \
            pf.vararg is not None:
        return None
    body = [s for s in fdef.body if not (isinstance(s, gast.Expr) and isinstance(
        s.value, gast.Constant) and isinstance(s.value.value, str))]
    if not body or not isinstance(body[-1], gast.Return) or body[-1].value is None:
        return None
    ret = body[-1].value
    if isinstance(ret, gast.Name) and len(body) == 2 and isinstance(body[0], gast.If) and \
            _defs_on_each_arm(body[0], ret.id):
        # (`if kind == "relu": def act(z): ...  else: def act(z): ...` then `return act`:
        # the arm is chosen where the call gives `kind` as a constant -- `splice`)
        fdef.body = body
        return fdef
    inner = [s for s in body[:-1] if isinstance(s, gast.FunctionDef)]
    if isinstance(ret, gast.Lambda):
        if inner:
            return None
    elif not (isinstance(ret, gast.Name) and len(inner) == 1 and inner[0].name == ret.id
              and body[-2] is inner[0] and not inner[0].decorator_list):
        return None
    for s in body[:-1]:
        if s in inner:
            continue
        if not (isinstance(s, gast.Assign) and all(isinstance(t, gast.Name)
                                                   for t in s.targets)):
            return None
    for n in gast.walk(fdef):
        if isinstance(n, (gast.Nonlocal, gast.Global, gast.Yield, gast.YieldFrom)):
            return None
    fdef.body = body
    return fdef


def _defs_on_each_arm(s, name: str) -> bool:
    """An `if` (its `elif`s too) whose every arm is one `def name(...)` -- or a `raise`."""
    for arm in (s.body, s.orelse):
        if len(arm) != 1:
            return False
        one = arm[0]
        if isinstance(one, gast.If):
            if not _defs_on_each_arm(one, name):
                return False
        elif not (isinstance(one, gast.Raise) or (
                isinstance(one, gast.FunctionDef) and one.name == name and
                not one.decorator_list)):
            return False
    return True


def _chosen_arm(s, given: dict):
    """The statements of the arm Python runs, where each test compares a parameter the call
    gives a constant (`kind == "relu"`, `kind in ("relu", "elu")`) -- else None."""
    while True:
        t = s.test
        if not (isinstance(t, gast.Compare) and len(t.ops) == 1 and
                isinstance(t.left, gast.Name) and
                isinstance(given.get(t.left.id), gast.Constant)):
            return None
        v = given[t.left.id].value
        right = t.comparators[0]
        op = t.ops[0]
        if isinstance(right, gast.Constant) and isinstance(op, (gast.Eq, gast.NotEq)):
            truth = (v == right.value) == isinstance(op, gast.Eq)
        elif isinstance(right, (gast.Tuple, gast.List, gast.Set)) and all(
                isinstance(x, gast.Constant) for x in right.elts) and \
                isinstance(op, (gast.In, gast.NotIn)):
            truth = (v in [x.value for x in right.elts]) == isinstance(op, gast.In)
        else:
            return None
        arm = s.body if truth else s.orelse
        if len(arm) == 1 and isinstance(arm[0], gast.If):
            s = arm[0]
            continue
        return arm


class _Rename(gast.NodeTransformer):
    """Rename the factory's own names; a nested function's own names shadow them."""

    def __init__(self, names: dict):
        self.names = names

    def visit_Name(self, node):
        if node.id in self.names:
            node.id = self.names[node.id]
        return node

    def _scoped(self, node, params):
        own = {p.id for p in params if isinstance(p, gast.Name)} | {
            n.id for n in gast.walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store)}
        inner = _Rename({k: v for k, v in self.names.items() if k not in own})
        a = node.args
        a.defaults = [self.visit(d) for d in a.defaults]  # (evaluated in the factory)
        if isinstance(node, gast.Lambda):
            node.body = inner.visit(node.body)
        else:
            node.body = [inner.visit(s) for s in node.body]
        return node

    def visit_FunctionDef(self, node):
        node.name = self.names.get(node.name, node.name)
        return self._scoped(node, node.args.args)

    def visit_Lambda(self, node):
        return self._scoped(node, node.args.args)


def splice_factories(pf) -> None:
    """Rewrite `pf.tree` as the module docstring says."""
    tree = pf.tree
    taken = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)} | set(pf.params) | \
        set(pf.bound) | set(pf.closure)
    stores = Counter(n.id for n in gast.walk(tree) if isinstance(n, gast.Name)
                     and isinstance(n.ctx, (gast.Store, gast.Del)))
    changed = False

    def factory_of(call):
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name)
                and stores[call.func.id] == 0 and call.func.id not in pf.params
                and not any(isinstance(a, gast.Starred) for a in call.args)
                and all(k.arg is not None for k in call.keywords)):
            return None, None
        fn = pf.resolve(call.func.id)
        fdef = _factory_tree(fn)
        return (fn, fdef) if fdef is not None else (None, None)

    def splice(target: str, call, fn, fdef, at) -> list | None:
        params = [p.id for p in fdef.args.args]
        if len(call.args) > len(params) or any(k.arg not in params for k in call.keywords):
            return None
        sig = inspect.signature(fn).parameters
        given = dict(zip(params, call.args))
        for k in call.keywords:
            if k.arg in given:
                return None
            given[k.arg] = k.value
        own = {n.id for s in fdef.body for n in gast.walk(s) if isinstance(n, gast.Name)
               and isinstance(n.ctx, gast.Store)} | set(params)
        names = {n: fresh(f"{n}_{target}", taken) for n in sorted(own)}
        # the names the factory reads from its module: the same objects here (a factory of
        # another module: each under a name of its own, guarded as the factory's global)
        home = fn.__globals__
        for free in sorted(_free_names(fdef)):
            if free in home:
                obj = home[free]
                guards.note("global", home, free, obj)
            elif hasattr(builtins, free):
                obj = getattr(builtins, free)
            else:
                return None  # (a name the module lacks: Python's NameError, as written)
            if free not in stores and pf.resolve(free) is obj:
                continue
            names[free] = fresh(f"{free}_{target}" if free in stores else free, taken)
            while pf.bound.get(names[free], obj) is not obj:  # (a name another copy reads:
                names[free] = fresh(free, taken)  # objects.py `bind`)
            pf.bound[names[free]] = obj
        out = []
        for p in params:  # each argument once, in order, as the call evaluates them
            if p in given:
                value = given[p]
            elif sig[p].default is not inspect.Parameter.empty:
                held = fresh(f"{p}_default", taken)
                while pf.bound.get(held, sig[p].default) is not sig[p].default:
                    held = fresh(f"{p}_default", taken)  # (objects.py `bind`)
                pf.bound[held] = sig[p].default
                value = _name(held)
            else:
                return None
            pf.bound[ARGUMENT] = scoped_argument
            value = gast.Call(func=_name(ARGUMENT), args=[value], keywords=[])
            out.append(gast.fix_missing_locations(gast.copy_location(gast.Assign(
                targets=[_name(names[p], True)], value=value, type_comment=None), at)))
        body = copy.deepcopy(fdef.body)
        if isinstance(body[0], gast.If):  # (the arm the call's constant chooses)
            arm = _chosen_arm(body[0], given)
            if arm is None or not isinstance(arm[0], gast.FunctionDef):
                return None
            body = [arm[0], body[-1]]
        ret = body.pop()
        if isinstance(ret.value, gast.Lambda):
            body.append(gast.copy_location(gast.Assign(
                targets=[_name(target, True)], value=ret.value, type_comment=None), ret))
        else:
            names[ret.value.id] = target
        renamer = _Rename(names)
        out.extend(renamer.visit(s) for s in body)
        return out

    def block(stmts: list) -> list:
        nonlocal changed
        res = []
        for s in stmts:
            for f in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, f, None), list) and not isinstance(
                        s, (gast.FunctionDef, gast.ClassDef)):
                    setattr(s, f, block(getattr(s, f)))
            done = None
            hoisted = called_at_once(s)
            if hoisted:
                res.extend(hoisted)
                changed = True
            if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                    isinstance(s.targets[0], gast.Name) and stores[s.targets[0].id] == 1:
                target = s.targets[0].id
                fn, fdef = factory_of(s.value)
                if fdef is not None:
                    done = splice(target, s.value, fn, fdef, s)
                elif isinstance(s.value, (gast.List, gast.Tuple)) and s.value.elts:
                    done = items(target, s, s.value)
            if done is None:
                res.append(s)
            else:
                res.extend(done)
                changed = True
        return res

    def called_at_once(s) -> list:
        """`linear(W)(x)` in a simple statement -- a factory's closure called where it is
        made: the factory spliced in before the statement under a name of its own, the call
        made through that name (the factory binds names and defines a function: nothing it
        does can see what the statement computes first). Only for arguments that are names,
        constants or attributes. The statements to put before `s`."""
        if not isinstance(s, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)):
            return []
        out = []
        lazy = (gast.Lambda, gast.IfExp, gast.BoolOp, gast.ListComp, gast.SetComp,
                gast.DictComp, gast.GeneratorExp)
        todo = [s]
        while todo:
            n = todo.pop()
            if isinstance(n, lazy):
                continue
            todo.extend(gast.iter_child_nodes(n))
            if not (isinstance(n, gast.Call) and isinstance(n.func, gast.Call)):
                continue
            inner = n.func
            if not all(isinstance(a, (gast.Name, gast.Constant, gast.Attribute))
                       for a in [*inner.args, *(k.value for k in inner.keywords)]):
                continue
            fn, fdef = factory_of(inner)
            if fdef is None:
                continue
            name = fresh(f"{inner.func.id}_fn", taken)
            made = splice(name, inner, fn, fdef, s)
            if made is None:
                continue
            out.extend(made)
            n.func = gast.copy_location(_name(name), inner)
        return out

    def items(target, s, display) -> list | None:
        """`net = [factory(...), ...]`: each item a closure of its own name."""
        found = [factory_of(e) for e in display.elts]
        if not all(fdef is not None for _, fdef in found):
            return None
        out, elts = [], []
        for i, (e, (fn, fdef)) in enumerate(zip(display.elts, found)):
            name = fresh(f"{target}_{i}", taken)
            made = splice(name, e, fn, fdef, s)
            if made is None:
                return None
            out.extend(made)
            elts.append(_name(name))
        looped_over[target] = (elts, s)
        display.elts = [_name(n.id) for n in elts]
        out.append(s)
        return out

    looped_over: dict = {}
    tree.body = block(tree.body)
    if looped_over:  # `for f in net:` of a display of closures: over the display itself
        reads = Counter(n.id for n in gast.walk(tree) if isinstance(n, gast.Name)
                        and isinstance(n.ctx, gast.Load))
        loops = [n for n in gast.walk(tree) if isinstance(n, gast.For)
                 and isinstance(n.iter, gast.Name) and n.iter.id in looped_over]
        comps = _comprehensions_over(tree, set(looped_over), pf)
        dead, unrolled, displays = set(), {}, {}
        for name, (elts, made) in looped_over.items():
            mine = [x for x in loops if x.iter.id == name]
            theirs = [c for c in comps if c.generators[0].iter.id == name]
            if reads[name] != len(mine) + len(theirs) or \
                    not all(_unrollable(x, tree) for x in mine):
                continue
            dead.add(id(made))  # (read by these loops only: the list is never made)
            for loop in mine:
                unrolled[id(loop)] = [st for e in elts for st in _body_for(loop, e.id)]
            for c in theirs:  # `[f(x) for f in net]`: the display of the calls
                displays[id(c)] = gast.copy_location(gast.List(
                    elts=[_put(c.elt, c.generators[0].target.id, e.id) for e in elts],
                    ctx=gast.Load()), c)

        class _Displays(gast.NodeTransformer):
            def visit(self, node):
                if id(node) in displays:
                    return displays[id(node)]
                return super().visit(node)

        if displays:
            tree.body = [_Displays().visit(st) for st in tree.body]

        def drop(stmts):
            out = []
            for s in stmts:
                if id(s) in unrolled:
                    out.extend(unrolled[id(s)])
                elif id(s) not in dead:
                    out.append(s)
            for s in out:
                for f in ("body", "orelse", "finalbody"):
                    if isinstance(getattr(s, f, None), list) and not isinstance(
                            s, (gast.FunctionDef, gast.ClassDef)):
                        setattr(s, f, drop(getattr(s, f)) or [gast.copy_location(
                            gast.Pass(), s)] if f == "body" else drop(getattr(s, f)))
            return out

        tree.body = drop(tree.body)
    if changed:
        gast.fix_missing_locations(tree)


def _unrollable(loop, tree) -> bool:
    """A `for f in net:` over closures whose body can be written once per closure: a plain
    name target the body does not assign nor anything reads after, no jumps, no else."""
    if loop.orelse or not isinstance(loop.target, gast.Name):
        return False
    t = loop.target.id
    inside = {id(n) for n in gast.walk(loop)}
    for n in gast.walk(loop):
        if isinstance(n, (gast.Break, gast.Continue, gast.Return, gast.FunctionDef,
                          gast.Lambda, gast.Yield)):
            return False
        if isinstance(n, gast.Name) and n.id == t and isinstance(n.ctx, gast.Store) and \
                n is not loop.target:
            return False
    return not any(isinstance(n, gast.Name) and n.id == t and id(n) not in inside
                   for n in gast.walk(tree))


def _put(node, name: str, item: str):
    """A copy of `node` with `name` read as `item`."""

    class _Put(gast.NodeTransformer):
        def visit_Name(self, n):
            if n.id == name and isinstance(n.ctx, gast.Load):
                return gast.copy_location(_name(item), n)
            return n

    return _Put().visit(copy.deepcopy(node))


def _body_for(loop, item: str) -> list:
    """The loop's body with its target read as `item`."""
    return [_put(st, loop.target.id, item) for st in loop.body]


_CONSUMERS = ("sum", "list", "tuple")


def _comprehensions_over(tree, names: set, pf) -> list:
    """`[f(x) for f in net]` (and `sum(f(x) for f in net)`, `list(...)`, `tuple(...)`) over
    one of `names`: one plain generator, no condition, no nested function."""
    parents = {id(c): n for n in gast.walk(tree) for c in gast.iter_child_nodes(n)}
    out = []
    for n in gast.walk(tree):
        if not isinstance(n, (gast.ListComp, gast.GeneratorExp)) or len(n.generators) != 1:
            continue
        g = n.generators[0]
        if g.ifs or g.is_async or not isinstance(g.target, gast.Name) or \
                not isinstance(g.iter, gast.Name) or g.iter.id not in names or any(
                    isinstance(x, (gast.Lambda, gast.ListComp, gast.GeneratorExp,
                                   gast.SetComp, gast.DictComp)) for x in gast.walk(n.elt)):
            continue
        if isinstance(n, gast.GeneratorExp):
            p = parents.get(id(n))
            if not (isinstance(p, gast.Call) and isinstance(p.func, gast.Name) and
                    p.func.id in _CONSUMERS and p.args == [n] and not p.keywords and
                    pf.resolve(p.func.id) is getattr(builtins, p.func.id)):
                continue
        out.append(n)
    return out


def _free_names(fdef) -> set:
    """The names the factory's code reads from its module (or builtins): read in a scope --
    the factory's, a nested function's, a lambda's -- that binds none of them."""
    out = set()

    def scope(node, bound: set):
        args = node.args
        params = {a.id for a in args.args + args.kwonlyargs + args.posonlyargs
                  if isinstance(a, gast.Name)}
        for extra in (args.vararg, args.kwarg):
            if isinstance(extra, gast.Name):
                params.add(extra.id)
        body = node.body if isinstance(node.body, list) else [node.body]
        for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
            visit(d, bound)  # (evaluated in the enclosing scope)
        own = set(params)
        todo = list(body)
        while todo:  # this scope's own bindings (not a nested scope's)
            n = todo.pop()
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
                own.add(n.id)
            if isinstance(n, gast.FunctionDef):
                own.add(n.name)
                continue
            if isinstance(n, gast.Lambda):
                continue
            todo.extend(gast.iter_child_nodes(n))
        for st in body:
            visit(st, bound | own)

    def visit(node, bound: set):
        todo = [node]
        while todo:
            n = todo.pop()
            if isinstance(n, (gast.FunctionDef, gast.Lambda)):
                scope(n, bound)
                continue
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in bound:
                out.add(n.id)
            todo.extend(gast.iter_child_nodes(n))

    scope(fdef, set())
    return out
