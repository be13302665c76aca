"""Nested functions and lambdas: lifted out of the function they are written in (gast -> gast).

Input: a fenced gast `FunctionDef` (its `ParsedFunction`). Output: the same function without
nested ``def``s or lambdas: each becomes a function of its own ("lambda lifting") whose
extra parameters are the enclosing function's locals it reads (its free variables), and
each call ``g(x)`` passes them: ``g(x, w=w)``. A lifted function is a user function like any
other, differentiated as a subroutine (`ir.UserCall`), so gradients flow through its
arguments and through the locals it closes over.

  * ``name = lambda args: expr`` is ``def name(args): return expr``; any other lambda gets
    the name ``lambda_L<line>``.
  * Python reads a closure's free variables when it is called (late binding); the lifted call
    passes their values at the call, which is the same thing for a function called where it
    is defined. A nested function used as a value (``sorted(xs, key=lambda t: t[1])``) is
    ``functools.partial(lifted, w=w)``: the values at that point.
  * Calls between nested functions pass the free variables along (a function's free
    variables include those of the nested functions it calls). Recursion is refused by the
    normaliser, as for module-level functions.
  * ``nonlocal total`` in a nested function (an accumulator: ``total = total + term``) of a
    local of the enclosing function: the lifted function takes ``total`` as a parameter and
    returns its new value with its result (``return (result, total)``), and each call, a
    statement of the enclosing function (``add(t)``, ``y = add(t)``, ``return add(t)``),
    assigns it back: ``_, total = add(t, total=total)`` -- Python's cell, as a value, so the
    gradient flows through the accumulated value. A nested function that calls such a
    function writes the names too, and is treated the same. A call where Python's order of
    the writes would not be kept (twice in a statement, under `and`/`or` or a conditional
    expression, in a comprehension, beside a read of the names) or the function used as a
    value is refused at its line.
  * Refused: a nested function whose name is also assigned or a parameter, decorators.
The lifted functions are also compiled as ordinary Python functions (one factory, so that
they see each other), which generated code calls where no gradient flows through them;
`parse_function` finds their source tree in `LIFTED`.

Before/after:
    def f(x, w):                         def g(y, w):        (lifted: a subroutine)
        def g(y):                            return np.tanh(y * w)
            return np.tanh(y * w)        def f(x, w):
        return np.sum(g(x))                  return np.sum(g(x, w=w))
"""

from __future__ import annotations

import ast
import copy
import functools
import types

import gast

from ..errors import UnsupportedSyntaxError
from ..naming import fresh
from .parse import LIFTED, ParsedFunction
from .pylevel import operand_slots, slot_get, slot_put

PARTIAL = "__srcad_partial"


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _stores(node, skip_nested=True) -> set:
    """Names a function body binds (assignments, loop targets, nested def names)."""
    out = set()
    todo = list(node.body) if isinstance(node, gast.FunctionDef) else [node]
    while todo:
        n = todo.pop()
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            out.add(n.id)
        if isinstance(n, (gast.FunctionDef, gast.Lambda)) and skip_nested:
            if isinstance(n, gast.FunctionDef):
                out.add(n.name)
            continue
        todo.extend(gast.iter_child_nodes(n))
    return out


def _walk_shallow(node):
    """Every node under `node`, not descending into lambdas or nested defs."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo.extend(c for c in gast.iter_child_nodes(n)
                    if not isinstance(c, (gast.Lambda, gast.FunctionDef)))


def _params(fdef) -> list:
    a = fdef.args
    return [p.id for p in a.posonlyargs + a.args]


def _signature_names(fdef) -> set:
    """Every name the def's signature binds: `*args`, keyword-only ones and `**kw` too (no
    free names of it)."""
    a = fdef.args
    return set(_params(fdef)) | {p.id for p in a.kwonlyargs} | {
        v.id for v in (a.vararg, a.kwarg) if v is not None}


class _Lifter:
    def __init__(self, pf, taken: set):
        self.pf = pf
        self.taken = taken
        self.defs: dict = {}  # name -> FunctionDef (lifted)
        # the enclosing function's own names, and {function: {parameter: the snapshot of
        # its default}} for a named nested function whose default reads them (`snapshots`)
        self.outer = _signature_names(pf.tree) | _stores(pf.tree)
        self.snaps: dict = {}
        self.grown: set = set()  # lists of the enclosing function a nested one appends to

    def error(self, what, node, hint):
        return self.pf.error(what, node, hint=hint, cls=UnsupportedSyntaxError)

    # -- finding them --------------------------------------------------------------------------
    def collect(self, body) -> list:
        """`body` without its nested defs and `name = lambda` statements (collected)."""
        out = []
        for s in body:
            if isinstance(s, gast.FunctionDef):
                if s.decorator_list:
                    raise self.error("srcad does not support a decorated nested function",
                                     s.decorator_list[0],
                                     "define it at module level, or call the decorator "
                                     "outside the differentiated function")
                self.add(s.name, s)
                out += self.snapshots(s.name, s, s)
                continue
            if (isinstance(s, gast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Lambda)):
                self.add(s.targets[0].id, self.lambda_def(s.targets[0].id, s.value, s))
                out += self.snapshots(s.targets[0].id, self.defs[s.targets[0].id], s)
                continue
            for field in ("body", "orelse"):
                if isinstance(getattr(s, field, None), list):
                    setattr(s, field, self.collect(getattr(s, field)))
            out.append(s)
        return out

    def snapshots(self, name, fdef, at) -> list:
        """`f = lambda h, k=s: h * k` / `def act(z, scale=np.sum(W)):` whose default reads the
        enclosing function's names: Python evaluates it once, where the function is made --
        `f_k = s` there (a statement of the enclosing function), the default None in the
        lifted def, and every call that leaves `k` to it passes `k=f_k` (`rewrite`)."""
        a = fdef.args
        params = [p.id for p in a.posonlyargs + a.args]
        pairs = list(zip(params[len(params) - len(a.defaults):], a.defaults)) + [
            (p.id, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
        out = []
        for p, d in pairs:
            if not ({n.id for n in gast.walk(d) if isinstance(n, gast.Name)} & self.outer):
                continue
            snap = fresh(f"{name}_{p}_default", self.taken)
            self.taken.add(snap)
            out.append(gast.copy_location(gast.Assign(targets=[_name(snap, store=True)],
                                                      value=d, type_comment=None), at))
            self.snaps.setdefault(name, {})[p] = snap
            none = gast.copy_location(gast.Constant(value=None, kind=None), d)
            if d in a.defaults:
                a.defaults[a.defaults.index(d)] = none
            else:
                a.kw_defaults[a.kw_defaults.index(d)] = none
        return [gast.fix_missing_locations(x) for x in out]

    def add(self, name, fdef):
        if name in self.defs:
            raise self.error(f"the nested function `{name}` is defined twice", fdef,
                             "give each nested function its own name")
        self.defs[name] = fdef

    def lambda_def(self, name, lam: gast.Lambda, at) -> gast.FunctionDef:
        ret = gast.Return(value=lam.body)
        fdef = gast.FunctionDef(name=name, args=lam.args, body=[ret], decorator_list=[],
                                returns=None, type_comment=None, type_params=[])
        for n in (fdef, ret):
            gast.copy_location(n, at)
        fdef.end_lineno = getattr(lam, "end_lineno", at.lineno)
        return fdef

    def inline_lambdas(self, node) -> None:
        """Every other lambda becomes a nested def named after its line (a lambda inside it
        stays with it: it is lifted when that def is normalised); one whose defaults read the
        function's names is the partial made where it is (`made_with_defaults`)."""
        for parent in _walk_shallow(node):
            for field, value in gast.iter_fields(parent):
                items = value if isinstance(value, list) else [value]
                for i, v in enumerate(items):
                    if isinstance(v, gast.Lambda):
                        name = fresh(f"lambda_L{v.lineno}", self.taken)
                        self.add(name, self.lambda_def(name, v, v))
                        ref = self.made_with_defaults(name, v) or \
                            gast.copy_location(_name(name), v)
                        if isinstance(value, list):
                            value[i] = ref
                        else:
                            setattr(parent, field, ref)

    def made_with_defaults(self, name, lam):
        """`lambda h, k=k: h * k` whose defaults read the function's names (also in a
        comprehension, `[lambda h, W=W: h @ W for W in Ws]`): the partial of the lifted
        function with those defaults, evaluated where the lambda is (Python's once, there:
        closure_values reads them as made, `srcad_early`); its free variables join it in
        `rewrite`. None for a lambda without such defaults."""
        made = {st.targets[0].id: st.value for st in self.snapshots(name, self.defs[name], lam)}
        if not made:
            return None
        keywords = []
        for p, snap in self.snaps.pop(name).items():  # (no direct call: no statement needed)
            k = gast.keyword(arg=p, value=made[snap])
            k.srcad_early = True
            keywords.append(k)
        call = gast.Call(func=_name(PARTIAL), args=[_name(name)], keywords=keywords)
        call.srcad_defaults = True
        return gast.fix_missing_locations(gast.copy_location(call, lam))

    # -- free variables --------------------------------------------------------------------------
    def free_vars(self, outer_locals: set, writes: dict) -> dict:
        free, calls = {}, {}
        for name, fdef in self.defs.items():
            bound = (_signature_names(fdef) | _stores(fdef)) - set(writes.get(name, ()))
            loads = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)
                     and isinstance(n.ctx, gast.Load)}
            free[name] = {v for v in loads - bound if v in outer_locals and v not in self.defs}
            free[name] |= set(writes.get(name, ()))
            calls[name] = {v for v in loads - bound if v in self.defs}
        changed = True
        while changed:  # a function passes on what the nested functions it calls read
            changed = False
            for name in self.defs:
                for callee in calls[name]:
                    extra = free[callee] - free[name]
                    if extra:
                        free[name] |= extra
                        changed = True
        return {k: sorted(v) for k, v in free.items()}

    # -- rewriting -------------------------------------------------------------------------------
    def rewrite(self, node, free: dict) -> None:
        """Calls to lifted functions pass their free variables; other uses get a partial."""
        called = set()
        for n in gast.walk(node):
            if getattr(n, "srcad_defaults", False):  # (`made_with_defaults`: a partial made
                called.add(id(n.args[0]))  # here, given its free variables too)
                n.keywords = list(n.keywords) + [gast.keyword(arg=v, value=_name(v))
                                                 for v in free[n.args[0].id]]
                continue
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                    n.func.id in self.defs:
                called.add(id(n.func))
                n.keywords = list(n.keywords) + [gast.keyword(arg=v, value=_name(v))
                                                 for v in free[n.func.id]]
                fdef = self.defs[n.func.id]
                params = [p.id for p in fdef.args.posonlyargs + fdef.args.args]
                given = set(params[:len(n.args)]) | {k.arg for k in n.keywords}
                if not any(isinstance(x, gast.Starred) for x in n.args):
                    n.keywords += [gast.keyword(arg=p, value=_name(snap)) for p, snap in
                                   self.snaps.get(n.func.id, {}).items() if p not in given]
        for parent in gast.walk(node):
            for field, value in gast.iter_fields(parent):
                items = value if isinstance(value, list) else [value]
                for i, v in enumerate(items):
                    if (isinstance(v, gast.Name) and v.id in self.defs and id(v) not in called
                            and isinstance(v.ctx, gast.Load) and (free[v.id] or
                                                                  self.snaps.get(v.id))):
                        early = [gast.keyword(arg=p, value=_name(snap)) for p, snap in
                                 self.snaps.get(v.id, {}).items()]
                        for k in early:  # (its value when made: closure_values.note_closure)
                            k.srcad_early = True
                        ref = gast.Call(func=_name(PARTIAL), args=[_name(v.id)],
                                        keywords=[gast.keyword(arg=f, value=_name(f))
                                                  for f in free[v.id]] + early)
                        gast.copy_location(ref, v)
                        if isinstance(value, list):
                            value[i] = ref
                        else:
                            setattr(parent, field, ref)

    def lifted_def(self, name, fdef, free) -> gast.FunctionDef:
        out = copy.deepcopy(fdef)
        extra = [_name(v, False) for v in free]
        for p in extra:
            p.ctx = gast.Param()
            gast.copy_location(p, fdef)
        if out.args.vararg is not None:  # (after `*args`: keyword-only, as calls pass them)
            out.args.kwonlyargs = list(out.args.kwonlyargs) + extra
            out.args.kw_defaults = list(out.args.kw_defaults) + [None for _ in free]
            out.name = name
            return out
        if out.args.defaults:  # (after parameters with defaults, Python wants defaults too)
            out.args.defaults = list(out.args.defaults) + [
                gast.copy_location(gast.Constant(value=None, kind=None), fdef) for _ in free]
        out.args.args = list(out.args.args) + extra
        out.name = name
        return out


def _nonlocal_writes(lf, outer_locals: set) -> dict:
    """{nested function: [names it declares `nonlocal` and assigns]} for names that are locals
    of the enclosing function; the `nonlocal` statements of those names are dropped, and each
    return of the function returns the names' values with its result."""
    out = {}
    for name, fdef in lf.defs.items():
        decl = {}
        for n in _walk_shallow(fdef):
            if isinstance(n, gast.Nonlocal) and n is not fdef:
                for v in n.names:
                    decl.setdefault(v, n)
        assigned = {n.id for n in _walk_shallow_body(fdef) if isinstance(n, gast.Name)
                    and isinstance(n.ctx, gast.Store)}
        names = sorted(v for v in decl if v in assigned and v in outer_locals)
        names = sorted(set(names) | _appended_lists(lf, fdef, outer_locals))
        if not names:
            continue
        out[name] = names
        _drop_nonlocals(fdef, set(names))
        _augmented_as_assignments(lf, fdef, set(names))
    changed = bool(out)
    while changed:  # (a nested function calling one that writes them writes them too)
        changed = False
        for name, fdef in lf.defs.items():
            called = {n.func.id for n in _walk_shallow_body(fdef) if isinstance(n, gast.Call)
                      and isinstance(n.func, gast.Name) and n.func.id in out}
            extra = set().union(*(out[c] for c in called)) - set(out.get(name, ()))
            if extra:
                out[name] = sorted(set(out.get(name, ())) | extra)
                changed = True
    return out


def _return_written(fdef, names: list) -> None:
    """Each return of a function that writes `names` returns their values after its
    result (falling off the end returns None and them)."""
    extra = [_name(v) for v in names]
    for n in list(_walk_shallow_body(fdef)):
        if isinstance(n, gast.Return):
            value = n.value or gast.copy_location(gast.Constant(value=None, kind=None), n)
            n.value = gast.copy_location(
                gast.Tuple(elts=[value] + [gast.copy_location(_name(v), n) for v in names],
                           ctx=gast.Load()), n)
    if not fdef.body or not isinstance(fdef.body[-1], gast.Return):
        last = fdef.body[-1] if fdef.body else fdef
        ret = gast.Return(value=gast.Tuple(
            elts=[gast.Constant(value=None, kind=None)] + extra, ctx=gast.Load()))
        fdef.body.append(gast.fix_missing_locations(gast.copy_location(ret, last)))


_GROW = {"append": gast.List, "extend": None}


def _appended_lists(lf, fdef, outer_locals: set) -> set:
    """A list of the enclosing function that the nested function grows in place
    (``terms.append(v)``, ``terms.extend(vs)``, statements) is a `nonlocal` it writes: the
    statement becomes ``terms = terms + [v]`` (``terms + list(vs)``). Python's list is one
    object that both functions see; as a value, it is the same only where the enclosing
    function keeps no second name for it, which is checked (`_one_name`)."""
    own = _signature_names(fdef) | _stores(fdef)
    out = set()
    for parent in [fdef] + list(_walk_shallow_body(fdef)):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if not isinstance(stmts, list):
                continue
            for i, st in enumerate(stmts):
                call = st.value if isinstance(st, gast.Expr) else None
                if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                        and isinstance(call.func.value, gast.Name)
                        and call.func.attr in _GROW and len(call.args) == 1
                        and not call.keywords):
                    continue
                name = call.func.value.id
                if name in own or name not in outer_locals or name in lf.kept_arguments:
                    continue  # (the caller's own list: changed in place, as Python does)
                arg = call.args[0]
                if call.func.attr == "append":
                    arg = gast.List(elts=[arg], ctx=gast.Load())
                else:
                    arg = gast.Call(func=_name("list"), args=[arg], keywords=[])
                new = gast.Assign(targets=[_name(name, store=True)], type_comment=None,
                                  value=gast.BinOp(left=_name(name), op=gast.Add(), right=arg))
                stmts[i] = gast.fix_missing_locations(gast.copy_location(new, st))
                out.add(name)
    lf.grown |= out
    return out


def _augmented_as_assignments(lf, fdef, names: set) -> None:
    """``total += t`` of a `nonlocal` name: ``total = total + t``. On an array Python's
    ``+=`` changes the array the enclosing function holds too; as a value carried back
    (`_WriteBack`), it is the same where the enclosing function keeps no second name for it,
    which is checked (`_one_name`)."""
    for parent in [fdef] + list(_walk_shallow_body(fdef)):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if not isinstance(stmts, list):
                continue
            for i, st in enumerate(stmts):
                if isinstance(st, gast.AugAssign) and isinstance(st.target, gast.Name) and \
                        st.target.id in names:
                    new = gast.Assign(targets=[_name(st.target.id, store=True)],
                                      type_comment=None,
                                      value=gast.BinOp(left=_name(st.target.id), op=st.op,
                                                       right=st.value))
                    stmts[i] = gast.fix_missing_locations(gast.copy_location(new, st))
                    lf.grown.add(st.target.id)


def _one_name(lf, tree_body: list, writes: dict) -> None:
    """The enclosing function keeps no second name for a list a nested function grows
    (`_appended_lists`) or a value it changes by ``+=`` (`_augmented_as_assignments`): it is
    read only as a call's argument, subscripted, looped over (a comprehension's too),
    returned, tested, in arithmetic or by its methods -- never assigned to another name or
    put in a container."""
    grown = {v: fn for fn, names in writes.items() for v in names}
    for s in tree_body:
        for parent in _walk_shallow(s):
            for field, v in gast.iter_fields(parent):
                for x in (v if isinstance(v, list) else [v]):
                    if not (isinstance(x, gast.Name) and x.id in grown
                            and isinstance(x.ctx, gast.Load)):
                        continue
                    if isinstance(parent, (gast.Call, gast.Subscript, gast.Attribute,
                                           gast.For, gast.Return, gast.keyword,
                                           gast.BinOp, gast.Compare, gast.UnaryOp)):
                        continue
                    if (field == "test" and isinstance(parent, (
                            gast.If, gast.While, gast.IfExp, gast.Assert))) or (
                            isinstance(parent, gast.comprehension) and field in ("iter", "ifs")):
                        continue  # (`if hist:`, `sum(np.sum(h) for h in hist)`: no name)
                    raise lf.error(
                        f"`{grown[x.id]}` changes `{x.id}` of the enclosing function in place "
                        f"(`.append`, `+=`), which has a second name for it here: srcad "
                        "carries it as a value and the second name would miss the change", x,
                        f"use `{x.id}` itself where it is needed (for a number: write `{x.id} "
                        f"= {x.id} + v` in `{grown[x.id]}`, which changes no array in place)")


def _walk_shallow_body(fdef):
    for s in fdef.body:
        yield from _walk_shallow(s)


def _drop_nonlocals(fdef, names: set) -> None:
    for parent in _walk_shallow_body(fdef):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if isinstance(stmts, list):
                _drop_in(stmts, names)
    _drop_in(fdef.body, names)


def _drop_in(stmts: list, names: set) -> None:
    for s in stmts:
        if isinstance(s, gast.Nonlocal):
            s.names = [v for v in s.names if v not in names]
    stmts[:] = [s for s in stmts if not (isinstance(s, gast.Nonlocal) and not s.names)] or \
        ([gast.copy_location(gast.Pass(), stmts[0])] if stmts else [])


class _WriteBack:
    """Calls of functions that write `nonlocal` names (`_nonlocal_writes`), statements of the
    enclosing function, assign the names back (see the module docstring)."""

    def __init__(self, lf, writes: dict, free: dict):
        self.lf, self.writes, self.free = lf, writes, free

    def calls_in(self, node):
        return [n for n in _walk_shallow(node) if isinstance(n, gast.Call)
                and isinstance(n.func, gast.Name) and n.func.id in self.writes]

    def refuse(self, call, where):
        fn = call.func.id
        return self.lf.error(
            f"`{fn}` sets `nonlocal {', '.join(self.writes[fn])}`, and it is called {where}: "
            "srcad follows such a function only where a statement calls it (`"
            f"{fn}(...)`, `y = {fn}(...)`, `return {fn}(...)`)", call,
            f"call `{fn}` as a statement of its own, or return the new value from `{fn}` and "
            "assign it where it is called")

    def values(self, node):
        """A use of a writer's name that is not a call (the function as a value)."""
        called = {id(c.func) for c in self.calls_in(node)}
        for n in _walk_shallow(node):
            if isinstance(n, gast.Name) and n.id in self.writes and id(n) not in called \
                    and isinstance(n.ctx, gast.Load):
                raise self.lf.error(
                    f"`{n.id}` sets `nonlocal {', '.join(self.writes[n.id])}`, and it is used "
                    "as a value here: srcad follows such a function only where a statement "
                    "calls it", n, f"call `{n.id}` as a statement of its own")

    def sequence(self, e, pre: list):
        """`e` with each call of a writer in it (`add(a) + add(b)`, `total + add(x)`) made a
        statement of its own, `t = add(a)`, appended to `pre` in Python's order of
        evaluation: what is evaluated before such a call and computes something or reads a
        name a writer sets is taken into a name first. Operands Python may not evaluate
        (`and` / `or`, `x if c else y`, a comprehension) and dict displays (keys and values
        interleave) are left as written: `hoist` refuses a call there."""
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and \
                e.func.id in self.writes:
            self.sequence_fields(e, pre)
            return self.take(e, pre, "_nonlocal_result")
        if isinstance(e, (gast.BoolOp, gast.IfExp, gast.Dict, gast.Lambda, gast.ListComp,
                          gast.SetComp, gast.DictComp, gast.GeneratorExp)) or \
                not self.calls_in(e):
            return e
        self.sequence_fields(e, pre)
        return e

    def sequence_fields(self, e, pre: list) -> None:
        written = {n for names in self.writes.values() for n in names}
        slots = operand_slots(e)
        for at, slot in enumerate(slots):
            if not self.calls_in(slot_get(slot)):
                continue
            for early in slots[:at]:  # (evaluated before this call: taken first)
                v = slot_get(early)
                if not isinstance(v, gast.Constant) and not (
                        isinstance(v, gast.Name) and v.id not in written):
                    slot_put(early, self.take(v, pre, "_before_call"))
            slot_put(slot, self.sequence(slot_get(slot), pre))

    def take(self, v, pre: list, base: str):
        tmp = fresh(base, self.lf.taken)
        self.lf.taken.add(tmp)
        pre.append(gast.copy_location(gast.Assign(targets=[_name(tmp, store=True)], value=v,
                                                  type_comment=None), v))
        return gast.copy_location(_name(tmp), v)

    def hoist(self, s, call, names) -> list:
        """``acc = acc + step(x)``: ``r, total = step(x, total=total); acc = acc + r``,
        where Python calls it whenever the statement runs (not under `and`/`or`, a
        conditional expression or a comprehension) and the rest of the statement does not
        read the names it sets (it would read them before the call)."""
        lazy = (gast.BoolOp, gast.IfExp, gast.ListComp, gast.SetComp, gast.DictComp,
                gast.GeneratorExp)
        if not isinstance(s, (gast.Expr, gast.Assign, gast.AugAssign, gast.AnnAssign,
                              gast.Return)):
            raise self.refuse(call, "inside an expression")
        for n in _walk_shallow(s):
            if isinstance(n, lazy) and any(c is call for c in gast.walk(n)):
                raise self.refuse(call, "inside a comprehension (write it as a for loop)"
                                  if not isinstance(n, (gast.BoolOp, gast.IfExp)) else
                                  "inside an expression Python may not evaluate")
        inside = {id(n) for n in gast.walk(call)}
        for n in _walk_shallow(s):
            if isinstance(n, gast.Name) and n.id in names and id(n) not in inside:
                raise self.refuse(call, f"in a statement that also uses `{n.id}`")
            if isinstance(n, gast.Call) and n is not call and isinstance(n.func, gast.Name) \
                    and set(self.free.get(n.func.id, ())) & set(names):
                read = sorted(set(self.free[n.func.id]) & set(names))[0]
                raise self.refuse(call, f"in a statement that also calls `{n.func.id}`, "
                                  f"which reads `{read}`")
        tmp = fresh("_nonlocal_result", self.lf.taken)
        self.lf.taken.add(tmp)
        for parent in _walk_shallow(s):
            for field, v in gast.iter_fields(parent):
                if v is call:
                    setattr(parent, field, gast.copy_location(_name(tmp), call))
                elif isinstance(v, list) and any(x is call for x in v):
                    v[[i for i, x in enumerate(v) if x is call][0]] = \
                        gast.copy_location(_name(tmp), call)
        first = gast.copy_location(_name(tmp, store=True), s)
        back = [gast.copy_location(_name(v, store=True), s) for v in names]
        target = gast.copy_location(gast.Tuple(elts=[first] + back, ctx=gast.Store()), s)
        pre = gast.copy_location(gast.Assign(targets=[target], value=call, type_comment=None), s)
        return [gast.fix_missing_locations(pre), s]

    def stmts(self, body: list) -> list:
        out = []
        for s in body:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s) -> list:
        heads = [v for f, v in gast.iter_fields(s) if f not in ("body", "orelse", "finalbody",
                                                               "handlers")]
        nested = [f for f in ("body", "orelse", "finalbody") if
                  isinstance(getattr(s, f, None), list)]
        if nested or isinstance(s, gast.Try):
            for h in heads:
                for v in (h if isinstance(h, list) else [h]):
                    if isinstance(v, gast.AST):
                        self.values(v)
                        calls = self.calls_in(v)
                        if calls:
                            raise self.refuse(calls[0], "in the header of a compound "
                                              "statement")
            for f in nested:
                setattr(s, f, self.stmts(getattr(s, f)))
            for h in getattr(s, "handlers", []) or []:
                h.body = self.stmts(h.body)
            return [s]
        self.values(s)
        calls = self.calls_in(s)
        if not calls:
            return [s]
        call = calls[0]
        value = getattr(s, "value", None)
        if (value is not call or len(calls) > 1) and value is not None and \
                isinstance(s, (gast.Expr, gast.Assign, gast.Return)):
            # (`layer(layer(x))`: the inner call first, a statement of its own)
            pre: list = []
            s.value = self.sequence(value, pre)
            if pre:  # (each call a statement of its own now, in Python's order)
                return self.stmts([gast.fix_missing_locations(gast.copy_location(p, s))
                                   for p in pre] + [s])
        names = self.writes[call.func.id]
        if len(calls) > 1:
            raise self.refuse(calls[1], "twice in one statement")
        if value is not call or not isinstance(s, (gast.Expr, gast.Assign, gast.Return)):
            return self.hoist(s, call, names)
        back = [gast.copy_location(_name(v, store=True), s) for v in names]
        first = _name(fresh("_nonlocal_result", self.lf.taken), store=True)
        self.lf.taken.add(first.id)
        gast.copy_location(first, s)
        target = gast.copy_location(gast.Tuple(elts=[first] + back, ctx=gast.Store()), s)
        out = [gast.copy_location(gast.Assign(targets=[target], value=call, type_comment=None),
                                  s)]
        if isinstance(s, gast.Return):
            out.append(gast.copy_location(gast.Return(value=_name(first.id)), s))
        elif isinstance(s, gast.Assign):  # (the targets after the call, as Python assigns)
            s.value = gast.copy_location(_name(first.id), call)
            out.append(s)
        return [gast.fix_missing_locations(n) for n in out]


def _compile(lifted: dict, pf) -> dict:
    """The lifted functions as Python functions over the user's module globals (one factory,
    so that they call each other)."""
    names = list(lifted)
    ret = gast.Return(value=gast.Tuple(elts=[_name(n) for n in names], ctx=gast.Load()))
    partial = gast.copy_location(_name(PARTIAL), lifted[names[0]])
    partial.ctx = gast.Param()
    factory = gast.FunctionDef(
        name="__srcad_lifted__", args=gast.arguments(args=[partial], posonlyargs=[], vararg=None,
                                                     kwonlyargs=[], kw_defaults=[], kwarg=None,
                                                     defaults=[]),
        body=[copy.deepcopy(lifted[n]) for n in names] + [ret], decorator_list=[],
        returns=None, type_comment=None, type_params=[])
    gast.copy_location(factory, lifted[names[0]])
    gast.copy_location(ret, lifted[names[0]])
    module = gast.gast_to_ast(gast.Module(body=[factory], type_ignores=[]))
    ast.fix_missing_locations(module)
    code = compile(module, pf.filename, "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    made = types.FunctionType(fcode, pf.fn.__globals__, "__srcad_lifted__")(functools.partial)
    return dict(zip(names, made))


def lift_closures(pf, taken: set) -> None:
    """Lift `pf.tree`'s nested functions and lambdas (see the module docstring), in place."""
    has = any(isinstance(n, (gast.FunctionDef, gast.Lambda)) for s in pf.tree.body
              for n in gast.walk(s))
    if not has:
        return
    lf = _Lifter(pf, taken)
    pf.tree.body = lf.collect(pf.tree.body)
    for s in pf.tree.body:
        lf.inline_lambdas(s)
    outer_locals = _signature_names(pf.tree) | _stores(pf.tree) | set(pf.closure)
    # (a parameter the function never rebinds holds the caller's object: a nested function's
    # `c.append(v)` changes it in place, which the caller sees -- not a value carried back,
    # which left the caller's list as it was before the session of 2026-12-07, twelfth)
    lf.kept_arguments = _signature_names(pf.tree) - _stores(pf.tree)
    clash = sorted(set(lf.defs) & (set(_params(pf.tree)) | _stores(pf.tree)))
    if clash:
        raise lf.error(f"the nested function `{clash[0]}` has the name of a variable of "
                       f"{pf.name}", lf.defs[clash[0]], "give the function another name")
    for name, fdef in lf.defs.items():  # `lambda v, k=k: ...`: a default read at the def
        a = fdef.args
        for d in list(a.defaults) + [d for d in a.kw_defaults if d is not None]:
            read = sorted({n.id for n in gast.walk(d) if isinstance(n, gast.Name)} &
                          (outer_locals - set(lf.defs)))
            if read:
                raise lf.error(
                    f"the default value of a parameter of `{name}` reads `{read[0]}`, a local "
                    f"of {pf.name} (Python reads it once, where the function is made)", d,
                    f"pass `{read[0]}` as an argument where the function is called, or use "
                    f"functools.partial at module level")
    writes = _nonlocal_writes(lf, outer_locals - set(lf.defs))
    free = lf.free_vars(outer_locals - set(lf.defs), writes)
    if writes:  # (before the calls get their keywords: `values` sees only the user's names)
        back = _WriteBack(lf, writes, free)
        for name, fdef in lf.defs.items():
            fdef.body = back.stmts(fdef.body)  # (its calls of writers: it is one then)
            if name in writes:
                _return_written(fdef, writes[name])
        pf.tree.body = back.stmts(pf.tree.body)
        _one_name(lf, pf.tree.body, {k: [v for v in vs if v in lf.grown] for k, vs in
                                     writes.items()})
    lifted = {n: lf.lifted_def(n, d, free[n]) for n, d in lf.defs.items()}
    for fdef in lifted.values():
        lf.rewrite(fdef, free)
    for s in pf.tree.body:
        lf.rewrite(s, free)
    made = _compile(lifted, pf)
    closure = {**pf.closure, **made, PARTIAL: functools.partial}
    for name, fn in made.items():
        tree = lifted[name]
        LIFTED[fn] = ParsedFunction(
            fn=fn, name=name, filename=pf.filename, tree=tree, first_line=tree.lineno,
            last_line=getattr(tree, "end_lineno", tree.lineno) or tree.lineno,
            params=_params(tree) + [p.id for p in tree.args.kwonlyargs], closure=closure,
            bound=pf.bound, imported=pf.imported)
    pf.closure.update(made)
    pf.closure[PARTIAL] = functools.partial
