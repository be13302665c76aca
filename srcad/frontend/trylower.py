"""try / except / else / finally in a differentiated function, lowered to a probe and branches
(gast -> gast).

Input: a fenced gast `FunctionDef`. Output: the same function with no `gast.Try`: each is

    try:                                  tried_L3, raised_L3 = attempt('f_try_L3:..', (K, n))
        L = np.linalg.cholesky(K)         if tried_L3:
    except np.linalg.LinAlgError as e:        L = np.linalg.cholesky(K)
        L = np.linalg.cholesky(K + J)         <else block>
    else:                                 else:
        <else block>                          if isinstance(raised_L3, np.linalg.LinAlgError):
    finally:                                      e = raised_L3
        <finally block>                           L = np.linalg.cholesky(K + J)
                                              else:
                                                  raise raised_L3
                                          <finally block>

The design. Generated code is straight-line numpy with `if`/loops: it has no way to stop a
block part way and reverse only what ran. So the try body is *probed*: `attempt` (srcad/
runtime_try.py) runs the body as the user's own Python -- a function compiled from the body's
source in the user's module, taking the names the body reads before it certainly assigns them
(`_Flow`) -- inside a real `try`, and returns (completed, the exception). Which branch runs is
then an ordinary `if` on a value that carries no gradient (`attempt` is a runtime row with
none), which every mode already differentiates: source and tape, fuse, vjp, jvp, and the
generated code again (grad of grad). When the probe completed, the body runs again,
differentiated, and the else block after it; when it raised, the handlers are tried in order
with `isinstance` (a bare `except`: BaseException; `as e` binds the exception; a bare `raise`
in a handler raises it again), and an exception no handler takes is raised again, after the
finally block.

Since the probe runs the user's Python, which exceptions happen is exactly Python's (a
`FloatingPointError` under np.seterr, a `LinAlgError`, a `KeyError`, the user's own `raise`,
one from a callee) -- also where the differentiated code would not raise (a fused kernel
raises no FloatingPointError). The price: the body runs twice when it completes (three times
on a first call, whose shape probe runs the IR: srcad/probe.py) -- measured, the gradient of a
GP log-likelihood with the cholesky fallback, n=50: 146 -> 182 us, n=400: 15.6 -> 21.3 ms (one
more cholesky); a dict lookup with a KeyError fallback: 19.6 -> 20.1 us -- and the refusals
below, each at the user's line with what to write instead:

  (a) Python keeps the assignments the body made before it raised; srcad's handlers see the
      values from before the try. A name the body assigns (other than in its last
      statement, a plain assignment: nothing is assigned if that one raises) that a handler
      reads before assigning it, or that is read after the try (in the finally block, on a
      later line, or anywhere in a loop around the try) when a handler that can complete did
      not assign it, is refused;
  (b) the probed body must have no effects, which would happen twice: print, a list's or
      array's in-place method, a store into an item or attribute of a name the body did not
      bind to a new object (`v = x[:2]; v[0] = 1` writes into x), `x += ...` likewise, a
      random draw, `global`/`nonlocal` -- also in the user's functions the body calls
      (followed three calls deep; a library's function is taken to be pure, as elsewhere in
      srcad). An object the function builds (`layer = Dense(W)`, which objects.py takes apart
      into its attributes) does not exist for the probe: using one in a try body is refused;
  (c) `return`/`break`/`continue` work in the body, the handlers and the else block (the
      probe stops at them, completed; the branches are ordinary code for desugar.py). With a
      finally block, a `return` that ends the body, the else block or a handler is kept for
      after the finally block (`returns_after_finally`); other jumps there, and any inside
      the finally block, are refused (the finally block would be skipped);
  (d) the body may read and assign one name (`h = h + 1`): the probe takes the value before.

A finally block that only computes values runs after the branches, without a probe of its
own: when an exception leaves the try, it leaves the differentiated function too (an
enclosing try's probe runs this one as Python), so skipping it is not visible. A finally
block with effects (`counter["calls"] += 1`, print, a raise) runs exactly once, also when the
exception propagates: the try/except part is then probed as a whole (Python's own
`try: (try/except/else) finally:`), its handlers included.

Why not the other designs. The body outlined as a transform whose derivative is its own
(`Transformed.vjp_at` / `jvp_at`, as a transform called inside: srcad/ops/composed.py) also
runs the body again (`vjp_at` runs its forward in the backward, `jvp_at` once per argument),
needs a transform that returns the body's values (srcad composes `srcad.grad` transforms),
and the exceptions it sees would be the generated code's, not Python's. A real `try` in the
generated code needs a new IR node through every pass (the transforms, the optimiser, the
memory plan, the fuser, the IR interpreter, checkpointing) and a backward that reverses only
the statements that ran. The probe leaves all of that as it is.

Tape mode runs the user's function as written: a try there is Python's, and what the tape
recorded before a raise is dead (nothing reads it), so it contributes nothing; the refusals
are the same as source mode's (the IR is normalised for its checks).
"""

from __future__ import annotations

import ast
import builtins
import copy
import hashlib
import inspect
import textwrap
import types

import gast

from .. import runtime_try
from ..errors import UnsupportedSyntaxError
from ..naming import fresh
from .opaque import MUTATING, is_user_object
from .parse import _UNRESOLVED

_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp,
           gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)
_LOOPS = (gast.For, gast.While)
_EXITS = (gast.Return, gast.Break, gast.Continue, gast.Raise)
# methods of numpy's random generators (np.random.default_rng(), RandomState): a draw
_DRAWS = {"normal", "uniform", "standard_normal", "random", "integers", "choice",
          "permutation", "shuffle", "rand", "randn", "randint", "binomial", "poisson",
          "exponential", "beta", "gamma", "multivariate_normal", "random_sample", "laplace",
          "logistic", "lognormal", "dirichlet", "multinomial", "standard_t", "bytes",
          "random_integers", "standard_exponential", "standard_gamma", "geometric",
          "chisquare", "triangular", "vonmises", "weibull", "pareto", "rayleigh", "gumbel",
          "hypergeometric", "zipf", "seed", "bit_generator", "spawn"}


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _stmts(src: str, subs: dict) -> list:
    """Statements of `src`, each Name in `subs` replaced by a copy of its node."""
    tree = gast.parse(textwrap.dedent(src))

    class _Sub(gast.NodeTransformer):
        def visit_Name(self, node):
            v = subs.get(node.id)
            return copy.deepcopy(v) if v is not None else node

    return _Sub().visit(tree).body


def _walk_scope(node):
    """The nodes of `node` outside nested scopes (lambdas, comprehensions, defs)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for c in gast.iter_child_nodes(n) if not isinstance(c, _SCOPES))


def _walk_all(stmts):
    for s in stmts:
        yield from gast.walk(s)


def _stores(stmts) -> set:
    """Names the statements assign, outside nested scopes."""
    return {n.id for s in stmts for n in _walk_scope(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _loads(stmts) -> list:
    return [n for n in _walk_all(stmts) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)]


def _ordered(node, scoped=frozenset()):
    """(name node, is_store) in the order Python evaluates them (an assignment's value before
    its targets; `x += v` reads x first). A comprehension's or lambda's own names are left
    out: they are not the enclosing block's."""
    if isinstance(node, gast.Name):
        if node.id not in scoped:
            yield node, isinstance(node.ctx, gast.Store)
        return
    if isinstance(node, gast.Assign):
        yield from _ordered(node.value, scoped)
        for t in node.targets:
            yield from _ordered(t, scoped)
        return
    if isinstance(node, gast.AugAssign):
        if isinstance(node.target, gast.Name):
            yield _name(node.target.id), False
        yield from _ordered(node.value, scoped)
        yield from _ordered(node.target, scoped)
        return
    if isinstance(node, (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)):
        inner = set(scoped)
        for k, g in enumerate(node.generators):
            yield from _ordered(g.iter, scoped if k == 0 else inner)
            inner |= {n.id for n in gast.walk(g.target) if isinstance(n, gast.Name)}
            for c in g.ifs:
                yield from _ordered(c, inner)
        for part in ((node.key, node.value) if isinstance(node, gast.DictComp) else (node.elt,)):
            yield from _ordered(part, inner)
        return
    if isinstance(node, gast.Lambda):
        own = {a.id for a in node.args.args + node.args.kwonlyargs}
        yield from _ordered(node.body, scoped | own)
        return
    for c in gast.iter_child_nodes(node):
        yield from _ordered(c, scoped)


class _Flow:
    """Which names a block reads that it has not certainly assigned before (its inputs: the
    probe's arguments), and which it certainly assigns by its end -- following branches (a
    name assigned in both arms of an `if`), loops (their target inside them) and handlers."""

    def __init__(self):
        self.reads: list = []  # the first read node of each input name, in order
        self._seen: set = set()

    def expr(self, node, defined: set) -> None:
        for n, store in _ordered(node):
            if store:
                defined.add(n.id)
            elif n.id not in defined and n.id not in self._seen:
                self._seen.add(n.id)
                self.reads.append(n)

    def block(self, stmts, defined) -> set:
        defined = set(defined)
        for s in stmts:
            if isinstance(s, gast.If):
                self.expr(s.test, defined)
                defined |= self.block(s.body, defined) & self.block(s.orelse, defined)
            elif isinstance(s, gast.For):
                self.expr(s.iter, defined)
                inner = set(defined)
                self.expr(s.target, inner)
                self.block(s.body, inner)
                self.block(s.orelse, defined)
            elif isinstance(s, gast.While):
                self.expr(s.test, defined)
                self.block(s.body, defined)
                self.block(s.orelse, defined)
            elif isinstance(s, gast.Try):
                after = self.block(s.body, defined)
                for h in s.handlers:
                    if h.type is not None:
                        self.expr(h.type, defined)
                    self.block(h.body, defined | ({h.name.id} if h.name is not None else set()))
                self.block(s.orelse, after)
                defined |= self.block(s.finalbody, defined)
            elif isinstance(s, gast.With):
                inner = set(defined)
                for item in s.items:
                    self.expr(item.context_expr, inner)
                    if item.optional_vars is not None:
                        self.expr(item.optional_vars, inner)
                defined |= self.block(s.body, inner)
            elif isinstance(s, (gast.FunctionDef, gast.ClassDef)):
                for d in s.decorator_list:
                    self.expr(d, defined)
                args = s.args.args + s.args.kwonlyargs if isinstance(s, gast.FunctionDef) \
                    else []
                self.block(s.body, defined | {a.id for a in args} | _stores(s.body))
                defined.add(s.name)
            else:
                self.expr(s, defined)
        return defined


def _inputs(stmts) -> list:
    """The first read of each name the block reads before it certainly assigns it."""
    flow = _Flow()
    flow.block(stmts, set())
    return flow.reads


def _first_stored(stmts) -> set:
    """Names the block certainly assigns before it reads them: the block's own."""
    flow = _Flow()
    done = flow.block(stmts, set())
    return done - {n.id for n in flow.reads}


# what a call may hand back without copying: a view of, or the very object it is given
_VIEWS = {"reshape", "ravel", "transpose", "view", "squeeze", "swapaxes", "moveaxis",
          "rollaxis", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray",
          "diagonal", "expand_dims", "broadcast_to", "broadcast_arrays", "atleast_1d",
          "atleast_2d", "atleast_3d", "real", "imag", "get", "pop", "setdefault", "values",
          "items", "keys", "split", "array_split", "hsplit", "vsplit", "dsplit", "flip",
          "fliplr", "flipud", "rot90", "unstack", "require", "nan_to_num", "matrix_transpose",
          "permute_dims", "lib", "as_strided", "sliding_window_view", "reversed", "iter",
          "next"}
# methods of an array that make a new one
_NEW_METHODS = {"copy", "astype", "sum", "mean", "prod", "max", "min", "dot", "std", "var",
                "cumsum", "cumprod", "round", "clip", "flatten", "tolist", "argmax", "argmin"}
_DISPLAYS = (gast.List, gast.Dict, gast.Set, gast.ListComp, gast.DictComp, gast.SetComp,
             gast.BinOp, gast.UnaryOp, gast.Constant, gast.JoinedStr, gast.Compare)


class _Fresh:
    """Is an expression certainly a new object (not a view of, or a name for, one the block
    did not make)? A display or an arithmetic result, a library function's result (a
    module's, as `np.zeros`, `np.tanh`), an array's `.copy()`; not a name, an item, an
    attribute, a view-making call, or a call of the user's (which may return its argument)."""

    def __init__(self, resolve):
        self.resolve = resolve

    def __call__(self, v) -> bool:
        if isinstance(v, _DISPLAYS):
            return True
        if not isinstance(v, gast.Call):
            return False
        chain = _chain(v.func)
        if chain is None or chain[-1] in _VIEWS:
            return False
        if len(chain) == 1:
            return chain[0] in ("list", "dict", "set", "float", "int", "str", "len", "sum",
                                "abs", "round", "tuple", "sorted")
        root = self.resolve(chain[0])
        if isinstance(root, types.ModuleType):
            return True
        return chain[-1] in _NEW_METHODS


def _made_fresh(stmts, fresh_value) -> set:
    """The block's own names (`_first_stored`) first bound to a new object (`_Fresh`):
    writing into them changes nothing outside the block (`v = x[:2]; v[0] = 1` would)."""
    own = _first_stored(stmts)
    made, seen = set(), set()
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                    n.targets[0], gast.Name) and n.targets[0].id in own and \
                    n.targets[0].id not in seen:
                seen.add(n.targets[0].id)
                if fresh_value(n.value):
                    made.add(n.targets[0].id)
    return made


def _jumps(stmts, in_loop=False):
    """return anywhere; break/continue outside loops nested in the statements."""
    for s in stmts:
        stack = [(s, in_loop)]
        while stack:
            n, loop = stack.pop()
            if isinstance(n, gast.Return) or (isinstance(n, (gast.Break, gast.Continue))
                                              and not loop):
                yield n
            if isinstance(n, _SCOPES):
                continue
            inner = loop or isinstance(n, _LOOPS)
            stack.extend((c, inner) for c in gast.iter_child_nodes(n))


def _root(e):
    while isinstance(e, (gast.Subscript, gast.Attribute, gast.Starred)):
        e = e.value
    return e


def _chain(e) -> list | None:
    names = []
    while isinstance(e, gast.Attribute):
        names.append(e.attr)
        e = e.value
    if not isinstance(e, gast.Name):
        return None
    return [e.id, *reversed(names)]


class _Effects:
    """The first thing a probed block does besides computing values (see (b) above)."""

    def __init__(self, resolve):
        self.resolve = resolve  # name -> object, or None

    def obj(self, e, resolve=None):
        chain = _chain(e)
        if chain is None:
            return None
        obj = (resolve or self.resolve)(chain[0])
        for a in chain[1:]:
            obj = getattr(obj, a, None)
        return obj

    def first(self, stmts, own: set, resolve=None, depth=0, seen=None):
        """(node, what) of the first effect in `stmts`, names in `own` being the block's own
        (made in it: writing into them changes nothing outside), or None."""
        seen = set() if seen is None else seen
        for s in stmts:
            for n in gast.walk(s):
                found = self.effect(n, own, resolve, depth, seen)
                if found is not None:
                    return found
        return None

    def effect(self, n, own, resolve, depth, seen):
        if isinstance(n, (gast.Global, gast.Nonlocal)):
            return n, f"`{'global' if isinstance(n, gast.Global) else 'nonlocal'}`"
        targets = n.targets if isinstance(n, gast.Assign) else \
            [n.target] if isinstance(n, (gast.AugAssign, gast.AnnAssign)) else \
            n.targets if isinstance(n, gast.Delete) else []
        for t in targets:
            for part in (t.elts if isinstance(t, (gast.Tuple, gast.List)) else [t]):
                if isinstance(part, (gast.Subscript, gast.Attribute)):
                    r = _root(part)
                    if not (isinstance(r, gast.Name) and r.id in own):
                        return part, "a store into an object from outside the try body"
                elif isinstance(n, gast.AugAssign) and isinstance(part, gast.Name) and \
                        part.id not in own:
                    return n, (f"`{part.id} {_OPS.get(type(n.op), '?=')} ...` (an update in "
                               f"place of an array from outside the try body)")
        if not isinstance(n, gast.Call):
            return None
        f = n.func
        if isinstance(f, gast.Name) and f.id in ("print", "input", "open", "exec", "setattr",
                                                 "delattr", "next"):
            return n, f"`{f.id}(...)`" + (" (it advances the iterator)" if f.id == "next" else "")
        chain = _chain(f)
        if chain is not None and ("random" in chain[1:-1] or (
                len(chain) > 1 and chain[-1] in _DRAWS)):
            return n, f"`{'.'.join(chain)}(...)` (a random draw)"
        if isinstance(f, gast.Attribute) and f.attr in MUTATING:
            r = _root(f.value)
            if not (isinstance(r, gast.Name) and r.id in own):
                return n, f"`.{f.attr}(...)` (a change in place)"
        if depth < 3:
            fn = self.obj(f, resolve)
            fn = getattr(fn, "__func__", fn)
            if isinstance(fn, types.FunctionType) and is_user_object(fn) and \
                    fn.__code__ not in seen:
                seen.add(fn.__code__)
                inner = self.callee(fn, depth, seen)
                if inner is not None:
                    return n, f"a call of `{fn.__name__}`, which does {inner[1]} (line " \
                              f"{inner[0].lineno + fn.__code__.co_firstlineno - 1})"
        return None

    def callee(self, fn, depth, seen):
        try:
            tree = gast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError):
            return None
        fdef = tree.body[0]
        if not isinstance(fdef, gast.FunctionDef):
            return None
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))

        def resolve(name):
            if name in cells:
                try:
                    return cells[name].cell_contents
                except ValueError:
                    return None
            if name in fn.__globals__:
                return fn.__globals__[name]
            return getattr(builtins, name, None)

        own = _made_fresh(fdef.body, _Fresh(resolve))  # (its parameters: the caller's)
        return self.first(fdef.body, own, resolve, depth + 1, seen)


_OPS = {gast.Add: "+=", gast.Sub: "-=", gast.Mult: "*=", gast.Div: "/=", gast.Pow: "**=",
        gast.MatMult: "@=", gast.FloorDiv: "//=", gast.Mod: "%="}


class _Lowerer:
    def __init__(self, pf, taken: set):
        self.pf, self.taken = pf, taken
        tree = pf.tree
        self.locals = set(pf.params) | {n.id for n in gast.walk(tree) if isinstance(
            n, gast.Name) and isinstance(n.ctx, gast.Store)}
        self.helpers: dict = {}  # runtime_try's helpers -> the names the code calls them by
        self.synthetic: set = set()  # names this pass makes, assigned where they are safe
        self.effects = _Effects(self._resolve)
        self.fresh = _Fresh(self._resolve)

    def _resolve(self, name):
        if name in self.locals:
            return self.pf.constants.get(name, self.pf.known.get(name))
        obj = self.pf.resolve(name)
        return None if obj is _UNRESOLVED else obj

    def error(self, message, node, hint):
        return self.pf.error(message, node, hint=hint, cls=UnsupportedSyntaxError)

    # -- the walk -------------------------------------------------------------------------
    def block(self, stmts: list, loops: tuple) -> list:
        out = []
        for s in stmts:
            if isinstance(s, (gast.FunctionDef, gast.ClassDef, gast.AsyncFunctionDef)):
                out.append(s)  # (a nested def is lowered when it is normalised itself)
                continue
            if isinstance(s, gast.Try):
                out.extend(self.lower(s, loops))
                continue
            inner = loops + (s,) if isinstance(s, _LOOPS) else loops
            for field in ("body", "orelse"):
                if isinstance(getattr(s, field, None), list):
                    setattr(s, field, self.block(getattr(s, field), inner))
            out.append(s)
        return out

    # -- one try statement ----------------------------------------------------------------
    def lower(self, t: gast.Try, loops: tuple) -> list:
        for s in t.finalbody:
            for j in _jumps([s]):
                raise self.error(f"`{type(j).__name__.lower()}` in a finally block", j,
                                 "move it after the try statement")
        pre, post = self.returns_after_finally(t) if t.finalbody else ([], [])
        if t.finalbody:
            for j in _jumps(t.body + t.orelse + [s for h in t.handlers for s in h.body]):
                raise self.error(
                    f"`{type(j).__name__.lower()}` in a try statement with a finally block "
                    f"(srcad would skip the finally block)", j,
                    "return as the last statement of the try body or of an except block "
                    "(srcad returns after the finally block), or assign the result and jump "
                    "after the try statement")
        # (a finally block that raises would replace the exception leaving the body)
        effectful = next((s for s in t.finalbody for n in gast.walk(s) if isinstance(
            n, (gast.Raise, gast.Assert))), None) or self.effects.first(
            t.finalbody, _made_fresh(t.finalbody, self.fresh))
        if t.handlers and effectful is not None:
            # (try/except/else/finally is Python's try: (try/except/else) finally: ...)
            inner = gast.copy_location(gast.Try(body=t.body, handlers=t.handlers,
                                                orelse=t.orelse, finalbody=[]), t)
            inner.end_lineno = max(getattr(n, "end_lineno", None) or 0 for part in (
                t.body, t.orelse, *(h.body for h in t.handlers)) for n in part)
            inner._srcad_split = True
            t = gast.copy_location(gast.Try(body=[inner], handlers=[], orelse=[],
                                            finalbody=t.finalbody), t)
        original = copy.deepcopy(t.body)
        t.body = self.block(t.body, loops)
        t.orelse = self.block(t.orelse, loops)
        for h in t.handlers:
            h.body = self.block(h.body, loops)
        t.finalbody = self.block(t.finalbody, loops)
        if not t.handlers and effectful is None:
            return pre + t.body + t.finalbody + post  # (see the docstring: nothing to see)
        self.check_effects(t, original)
        self.check_partial(t, loops)
        ok = fresh(f"tried_L{t.lineno}", self.taken)
        exc = fresh(f"raised_L{t.lineno}", self.taken)
        probe = self.probe(t, original, ok, exc)
        for s in probe:
            for n in gast.walk(s):
                gast.copy_location(n, t)
        dispatch = self.dispatch(t, ok, exc)
        out = pre + probe + dispatch + t.finalbody
        if not t.handlers:  # (try/finally: the exception leaves after the finally block)
            reraise = _stmts(f"if not {ok}:\n    raise {exc}\n", {})
            for n in gast.walk(reraise[0]):
                gast.copy_location(n, t)
            out += reraise
        return out + post

    def returns_after_finally(self, t) -> tuple[list, list]:
        """`return v` as the last statement of the try body, the else block or a handler, in
        a try with a finally block: `result = v; returned = True` there, and `if returned:
        return result` after the finally block, which runs first (as in Python). Returns
        (statements before the try, statements after it)."""
        blocks = [t.body, t.orelse, *(h.body for h in t.handlers)]
        if not any(b and isinstance(b[-1], gast.Return) for b in blocks):
            return [], []
        flag = fresh(f"returned_L{t.lineno}", self.taken)
        result = fresh(f"result_L{t.lineno}", self.taken)
        self.synthetic |= {flag, result}
        for b in blocks:
            if b and isinstance(b[-1], gast.Return):
                r = b.pop()
                value = r.value if r.value is not None else gast.Constant(value=None, kind=None)
                new = _stmts(f"{result} = V\n{flag} = True\n", {"V": value})
                for st in new:
                    for n in gast.walk(st):
                        if not hasattr(n, "lineno") or n.lineno is None or n is st or \
                                isinstance(n, gast.Name) and n.id in (flag, result):
                            gast.copy_location(n, r)
                b.extend(new)
        if t.body and isinstance(t.body[-1], gast.Assign) and t.body[-1].targets[0].id == flag:
            t.orelse = []  # (the body returned: the else block never runs)
        pre = _stmts(f"{flag} = False\n{result} = None\n", {})
        post = _stmts(f"if {flag}:\n    return {result}\n", {})
        for st in pre + post:
            for n in gast.walk(st):
                gast.copy_location(n, t)
        return pre, post


    def probe(self, t, original, ok, exc) -> list:
        """`ok, exc = attempt(key, (reads...))` and the body registered under key."""
        # the function's locals the body reads before it certainly assigns them, and the
        # names srcad binds for this function (a closure's cells, `self` of a bound method, a
        # class or an import of the body), which are not in the module's globals
        pf = self.pf
        bound = set(pf.closure) | set(pf.constants) | set(pf.bound) | set(pf.classes) | \
            set(pf.imported)
        reads = []
        for n in _inputs(original):
            if (n.id in self.locals or n.id in bound) and n.id not in reads:
                reads.append(n.id)
        self.check_built_objects(original, reads)
        key = self.register(t, original, reads)
        attempt = self.helper("attempt")
        args = ", ".join(reads) + ("," if len(reads) == 1 else "")
        return _stmts(f"{ok}, {exc} = {attempt}({key!r}, ({args}))\n", {})

    def helper(self, name: str) -> str:
        """The name the code calls runtime_try's `name` by (bound for this function)."""
        if name not in self.helpers:
            self.helpers[name] = fresh(name, self.taken)
            self.pf.closure[self.helpers[name]] = getattr(runtime_try, name)
        return self.helpers[name]

    def register(self, t, original, reads) -> str:
        """Compile the body as `def <name>(reads...)` in the user's module: the probe."""
        body = copy.deepcopy(original)

        class _Exit(gast.NodeTransformer):  # break/continue of the loop around: leave
            def __init__(self):
                self.depth = 0

            def visit_For(self, node):
                self.depth += 1
                self.generic_visit(node)
                self.depth -= 1
                return node

            visit_While = visit_For

            def visit_FunctionDef(self, node):
                return node

            visit_Lambda = visit_ClassDef = visit_FunctionDef

            def visit_Break(self, node):
                if self.depth:
                    return node
                return gast.copy_location(gast.Return(value=None), node)

            visit_Continue = visit_Break

        body = [_Exit().visit(s) for s in body]
        name = f"{self.pf.name}_try_L{t.lineno}"
        args = gast.arguments(args=[_name(r, False) for r in reads], posonlyargs=[],
                              vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                              defaults=[])
        for a in args.args:
            a.ctx = gast.Param()
        fdef = gast.FunctionDef(name=name, args=args, body=body + [gast.Return(value=None)],
                                decorator_list=[], returns=None, type_comment=None,
                                type_params=[])
        module = gast.Module(body=[fdef], type_ignores=[])
        gast.fix_missing_locations(module)
        tree = gast.gast_to_ast(module)
        ast.fix_missing_locations(tree)
        text = ast.unparse(tree)
        key = f"{name}:{hashlib.sha256((self.pf.filename + text).encode()).hexdigest()[:12]}"
        if key not in runtime_try.BODIES:
            g = self.pf.fn.__globals__
            g = getattr(g, "_base", g)
            space: dict = {}
            exec(compile(tree, self.pf.filename, "exec"), g, space)  # noqa: S102  (the user's)
            runtime_try.BODIES[key] = space[name]
        return key

    def dispatch(self, t, ok, exc) -> list:
        """`if ok: body; else-block` then the handlers in order on the exception."""
        # (no handler: the exception is raised again after the finally block, by `lower`)
        fallback = _stmts(f"raise {exc}\n", {}) if t.handlers else []
        chain = fallback
        for h in reversed(t.handlers):
            body = self.reraise(h.body, exc)
            if h.name is not None:
                body = [gast.copy_location(gast.Assign(
                    targets=[_name(h.name.id, True)], value=_name(exc), type_comment=None),
                    h)] + body
            test = _stmts(f"isinstance({exc}, T)\n", {"T": h.type})[0].value \
                if h.type is not None else _stmts(f"isinstance({exc}, BaseException)\n",
                                                  {})[0].value
            branch = gast.If(test=test, body=body or [gast.Pass()], orelse=chain)
            for n in gast.walk(test):
                gast.copy_location(n, h)
            gast.copy_location(branch, h)
            chain = [branch]
        for s in fallback:
            for n in gast.walk(s):
                gast.copy_location(n, t)
        top = gast.If(test=_name(ok), body=(t.body + t.orelse) or [gast.Pass()], orelse=chain)
        gast.copy_location(top, t)
        gast.copy_location(top.test, t)
        return [top]

    def reraise(self, body, exc) -> list:
        """A bare `raise` in a handler re-raises the exception it caught; `raise E(...) from
        e` raises `with_cause(E(...), e)` (runtime_try.py: Python's `__cause__`)."""
        lowerer = self

        class _Bare(gast.NodeTransformer):
            def visit_Raise(self, node):
                if node.exc is None:
                    node.exc = gast.copy_location(_name(exc), node)
                elif node.cause is not None:
                    node.exc = gast.copy_location(gast.Call(
                        func=_name(lowerer.helper("with_cause")),
                        args=[node.exc, node.cause], keywords=[]), node)
                    node.cause = None
                return node

            def visit_FunctionDef(self, node):
                return node

            visit_Lambda = visit_ClassDef = visit_FunctionDef

        return [_Bare().visit(s) for s in body]

    # -- refusals -------------------------------------------------------------------------
    def check_effects(self, t, original) -> None:
        found = self.effects.first(original, _made_fresh(original, self.fresh))
        if found is not None:
            node, what = found
            split = original and isinstance(original[0], gast.Try) and getattr(
                original[0], "_srcad_split", False)
            if split and not any(n is node for s in original[0].body for n in gast.walk(s)):
                raise self.error(
                    f"{what} in the except or else block of a try statement whose finally "
                    f"block has effects: srcad runs the try/except part as Python first, to see "
                    f"whether an exception leaves it for the finally block, then again "
                    f"differentiated, so it would happen twice", node,
                    "move the finally block's effect after the try statement (and out of "
                    "`finally:`), or this one out of the except/else block")
            raise self.error(
                f"{what} in a try body: srcad runs the try body twice (once as Python, to see "
                f"whether it raises, then differentiated), so it would happen twice", node,
                "move it out of the try body: into the else block (`else:` runs once, when "
                "the body did not raise) or after the try statement")

    def check_built_objects(self, original, reads) -> None:
        """An object this function builds (`layer = Dense(W)`) is taken apart into its
        attributes (objects.py): it does not exist for the probe to run the body on."""
        built = {}
        for n in gast.walk(self.pf.tree):
            if isinstance(n, gast.Assign) and isinstance(n.value, gast.Call):
                cls = self.effects.obj(n.value.func)
                if isinstance(cls, type) and is_user_object(cls):
                    for t in n.targets:
                        if isinstance(t, gast.Name):
                            built[t.id] = cls
        for n in _loads(original):
            if n.id in reads and n.id in built:
                raise self.error(
                    f"`{n.id}` is a `{built[n.id].__name__}` built in this function, which "
                    f"srcad takes apart into its attributes; a try body is also run as "
                    f"Python (to see whether it raises), which needs the object itself", n,
                    f"build the object outside the differentiated function and pass it in "
                    f"as an argument, or use `{n.id}` before the try statement")

    def check_partial(self, t, loops) -> None:
        """(a) in the module docstring."""
        body = t.body
        last = body[-1] if body else None
        atomic = _stores([last]) if isinstance(last, gast.Assign) and all(
            isinstance(n, (gast.Name, gast.Tuple, gast.List)) for tgt in last.targets
            for n in [tgt]) and not any(
            isinstance(x, (gast.Subscript, gast.Attribute, gast.Starred))
            for tgt in last.targets for x in gast.walk(tgt)) else set()
        risky = _stores(body[:-1]) | (_stores([last]) - atomic if last is not None else set())
        risky -= self.synthetic  # (`result = v; returned = True`: read only after both ran)
        if not risky:
            return
        hint = ("assign {n} in the except block before reading it, or compute it before the "
                "try statement")
        for h in t.handlers:
            assigned = {h.name.id} if h.name is not None else set()
            for s in h.body:
                for n in _inputs([s]):
                    if n.id in risky and n.id not in assigned:
                        raise self.error(
                            f"`{n.id}` is read in an except block, but the try body (line "
                            f"{t.lineno}) assigns it and may have raised after that: Python "
                            f"would see that assignment, srcad the value from before the try",
                            n, hint.format(n=f"`{n.id}`"))
                if isinstance(s, gast.Assign):
                    assigned |= _stores([s])
            if h.body and isinstance(h.body[-1], _EXITS):
                continue  # (it leaves: nothing after the try sees its names)
            for name in sorted(risky - assigned):
                later = self.read_later(name, t, loops)
                if later is not None:
                    raise self.error(
                        f"`{name}` is read here after a try statement (line {t.lineno}) whose "
                        f"body assigns it and may raise after that, and the except block at "
                        f"line {h.lineno} does not assign it: Python would see the body's "
                        f"assignment, srcad the value from before the try", later,
                        f"assign `{name}` in every except block, or compute it before the "
                        f"try statement")
        if not t.handlers:
            for n in _inputs(t.finalbody):
                if n.id in risky:
                    raise self.error(
                        f"`{n.id}` is read in a finally block, but the try body (line "
                        f"{t.lineno}) assigns it and may have raised after that", n,
                        f"compute `{n.id}` before the try statement, or read it after the "
                        f"try statement")

    def read_later(self, name, t, loops):
        """A read of `name` after the try statement: in its finally block, on a later line,
        or anywhere in a loop around it (the next iteration)."""
        for n in _loads(t.finalbody):
            if n.id == name:
                return n
        end = getattr(t, "end_lineno", None) or max(
            (getattr(n, "lineno", 0) or 0 for n in gast.walk(t)), default=t.lineno)
        inside = {id(n) for n in gast.walk(t)}
        for n in _loads(self.pf.tree.body):
            if n.id == name and id(n) not in inside and (n.lineno or 0) > end:
                return n
        for loop in loops:
            for n in _loads([loop]):
                if n.id == name and id(n) not in inside:
                    return n
        return None


def lower_try(pf, taken: set) -> None:
    """Rewrite `pf.tree` in place (see the module docstring)."""
    if not any(isinstance(n, gast.Try) for n in gast.walk(pf.tree)):
        return
    low = _Lowerer(pf, taken)
    pf.tree.body = low.block(pf.tree.body, ())
    gast.fix_missing_locations(pf.tree)
