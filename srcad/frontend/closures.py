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
  * Refused: a nested function whose name is also assigned or a parameter, decorators,
    ``nonlocal`` (by the fence).
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


class _Lifter:
    def __init__(self, pf, taken: set):
        self.pf = pf
        self.taken = taken
        self.defs: dict = {}  # name -> FunctionDef (lifted)

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
                continue
            if (isinstance(s, gast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Lambda)):
                self.add(s.targets[0].id, self.lambda_def(s.targets[0].id, s.value, s))
                continue
            for field in ("body", "orelse"):
                if isinstance(getattr(s, field, None), list):
                    setattr(s, field, self.collect(getattr(s, field)))
            out.append(s)
        return out

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

    def inline_lambdas(self, node):
        """Every other lambda becomes a nested def named after its line (a lambda inside it
        stays with it: it is lifted when that def is normalised)."""
        for parent in _walk_shallow(node):
            for field, value in gast.iter_fields(parent):
                items = value if isinstance(value, list) else [value]
                for i, v in enumerate(items):
                    if isinstance(v, gast.Lambda):
                        name = fresh(f"lambda_L{v.lineno}", self.taken)
                        self.add(name, self.lambda_def(name, v, v))
                        ref = gast.copy_location(_name(name), v)
                        if isinstance(value, list):
                            value[i] = ref
                        else:
                            setattr(parent, field, ref)

    # -- free variables --------------------------------------------------------------------------
    def free_vars(self, outer_locals: set) -> dict:
        free, calls = {}, {}
        for name, fdef in self.defs.items():
            bound = set(_params(fdef)) | _stores(fdef)
            loads = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)
                     and isinstance(n.ctx, gast.Load)}
            free[name] = {v for v in loads - bound if v in outer_locals and v not in self.defs}
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
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                    n.func.id in self.defs:
                called.add(id(n.func))
                n.keywords = list(n.keywords) + [gast.keyword(arg=v, value=_name(v))
                                                 for v in free[n.func.id]]
        for parent in gast.walk(node):
            for field, value in gast.iter_fields(parent):
                items = value if isinstance(value, list) else [value]
                for i, v in enumerate(items):
                    if (isinstance(v, gast.Name) and v.id in self.defs and id(v) not in called
                            and isinstance(v.ctx, gast.Load) and free[v.id]):
                        ref = gast.Call(func=_name(PARTIAL), args=[_name(v.id)],
                                        keywords=[gast.keyword(arg=f, value=_name(f))
                                                  for f in free[v.id]])
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
        if out.args.defaults:  # (after parameters with defaults, Python wants defaults too)
            out.args.defaults = list(out.args.defaults) + [
                gast.copy_location(gast.Constant(value=None, kind=None), fdef) for _ in free]
        out.args.args = list(out.args.args) + extra
        out.name = name
        return out


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
    outer_locals = set(_params(pf.tree)) | _stores(pf.tree) | set(pf.closure)
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
    free = lf.free_vars(outer_locals - set(lf.defs))
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
            params=_params(tree), closure=closure, bound=pf.bound, imported=pf.imported)
    pf.closure.update(made)
    pf.closure[PARTIAL] = functools.partial
