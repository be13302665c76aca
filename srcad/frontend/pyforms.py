"""Python statement forms lowered to ones srcad differentiates (gast -> gast, before the fence).

Input: a parsed function's gast tree (`ParsedFunction`), walrus already hoisted. Output: the
same tree in which

  * ``with cm as t: body`` is ``h = enter_context(cm); t = context_value(h); body;
    h_exit = exit_context(h)`` (several items: nested, the first outermost). The context
    manager expression must not depend on the differentiated arguments (refused at the `with`
    line: srcad/analysis/refusals.py). When `__exit__` runs:
      - at the end of the block, also after a `return`, `break` or `continue` inside it:
        desugar.py guards the rest of the block by the jump's flag but never its exit
        (`is_exit`), so the exit runs once, before the statements after the block;
      - when the body raises: generated code's entry points exit every context the call
        entered and did not leave, innermost first, with the exception (runtime_context's
        `unwinding`), so numpy's error state and the warning filters never leak out of a call
        that raised. A manager whose `__exit__` returns true (suppresses) cannot resume the
        function: the exception still propagates (write try/except for that).
    The backward of the block: numpy's `np.errstate` and `warnings.catch_warnings` are state,
    and the adjoint of the block runs under the error state and warning filters the forward
    block had at its end (entered again around it: no divide warning from the backward of a
    `np.log(x)` the user silenced; `all="raise"` raises there too; tape mode runs each op's
    rule under the state its op ran under). Any other manager (a user's `Timer`,
    `contextlib.nullcontext`) is entered once per call, by the forward sweep; the shape probe
    of the first call enters a copy of a user's manager (runtime_context.py). A block of
    numpy's error state, the warning filters or a null context may be recomputed (a
    checkpointed loop: `enter_state`); one of any other manager may not (refused there).
    ``contextlib.suppress(...)`` is a try/except and is refused with that hint.
  * ``for``/``while ... else``: the else block after the loop, under ``if not <flag>:`` where
    the loop has a `break` of its own (the flag set just before each such `break`), and
    unconditionally where it has none.
  * Starred assignment targets ``a, *rest, b = value`` (also nested: ``(a, b), *c = ...``): the
    value once, as Python unpacks it -- ``items = list(value)`` (a differentiated array's rows
    along axis 0, a list, a tuple a call returned) -- then ``a = items[0]``, ``rest =
    items[1:len(items) - 1]`` (a list, as in Python), ``b = items[-1]``; a starred name `_`
    binds nothing. Too few items raise Python's ValueError.
  * ``reversed(xs)`` of a list, tuple or array consumed as an iterable (a `for`, a
    comprehension, ``list(...)``, ``tuple(...)``, ``zip(...)``, ``enumerate(...)``, ``sum``,
    ``min``, ``max``) is ``xs[::-1]`` (the same items in the same order: rows in reverse for
    an array); ``reversed(range(...))`` stays (loops.py walks it backward).
  * ``f(*[a, b], c)`` where the starred value is a list or tuple display: its items spliced
    into the positional arguments (``np.add(*[a, b])`` is ``np.add(a, b)``).
  * A set display of constants (``mode in {"train", "eval"}``) is a frozenset constant; a set
    display holding any other value stays refused (fence.py).
  * A generator function called from the function -- ``def batches(x): for i in range(3):
    yield x[i] * i`` -- is lowered, when srcad normalises it as a callee, to a function that
    builds and returns the list of the values it yields (``yield v`` is ``acc.append(v)``, a
    bare ``return`` returns the list). The caller must consume the generator whole where it
    calls it: a `for` over it, a comprehension, ``list(...)``, ``tuple(...)``, ``sum(...)``,
    ``min``/``max``, ``zip``/``enumerate`` in a `for` header. Where the generator has effects
    (print, a write to an argument or an object) the consumer may neither break out early
    nor have effects of its own (their order would change). Anything else -- ``yield``
    as a value, ``r = yield from g``, ``next(gen)``, ``gen.send`` -- is refused with a
    hint; ``yield from it`` as a statement yields each item of it, as its loop would.
    A generator function defined inside the function is lowered the same way where every
    call of it is consumed whole, and refused where its consumer's loop changes a name the
    generator reads (Python steps it between the loop's iterations; `nested_generators`).
  * ``it = iter(fs)`` read by ``next(it)`` in the statements that follow (one a statement)
    and perhaps a last ``for f in it:``, over a list or tuple: the items Python's iterator
    gives there, ``fs[k]`` and ``fs[k:]`` (`iterators`); anything else about the iterator is
    left as written.
  * ``for v in (f(k) for k in ks if c): body`` is the loop Python runs, ``for k in ks: if c:
    v = f(k); body`` (`loop_over_generator`): the generator steps between the body's runs.
    A generator expression elsewhere in a loop's header (``zip(xs, (g(x) for x in xs))``) is
    refused where the body changes what it reads.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import dataclasses
import functools
import inspect
import itertools
import operator
import textwrap
import types

import gast
import numpy as np

from .. import ir, runtime_context, runtime_python
from ..errors import UnsupportedSyntaxError
from ..naming import fresh
from .opaque import is_opaque, is_user_object
from .parse import Members, parse_function

# the runtime helpers the rewritten tree calls, and the names it calls them by (in the
# function's closure, as pylower.py's internal names; fresh where the function uses the name)
_HELPERS = {"enter_context": runtime_context.enter_context,
            "context_value": runtime_context.context_value,
            "exit_context": runtime_context.exit_context,
            "enter_state": runtime_context.enter_state,
            "exit_state": runtime_context.exit_state,
            "context_setting": runtime_context.context_setting,
            "nditer_indices": runtime_python.nditer_indices,
            "zip_lengths": runtime_python.zip_lengths,
            "numpy": np,
            # (itertools.pairwise, enumerate(xs, start) in a comprehension: the builtins,
            # whatever these names are in the function)
            "zip": zip, "range": range, "len": len, "list": list}

_STATE = Members({np.errstate, runtime_context.warnings.catch_warnings})
_SETTINGS = Members(runtime_context.SETTINGS_BY_FN)

_CONSUMERS = Members({list, tuple, zip, enumerate, sum, min, max, sorted, set, frozenset,
                     dict, any, all})


def _name(id_, ctx=None):
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def _call(func, *args):
    return gast.Call(func=func if isinstance(func, gast.AST) else _name(func), args=list(args),
                     keywords=[])


def _assign(target, value, node):
    if isinstance(target, str):
        target = _name(target, gast.Store())
    return gast.copy_location(gast.Assign(targets=[target], value=value, type_comment=None),
                              node)


def entry_of(stmt) -> str | None:
    """The handle a `with` block's entry statement makes (desugar.py: see `exit_of`)."""
    return getattr(stmt, "srcad_enter", None)


def exit_of(stmt) -> str | None:
    """The handle a `with` block's exit statement leaves: desugar.py never guards the exit of
    a block entered before a jump."""
    return getattr(stmt, "srcad_exit", None)


class _Forms:
    def __init__(self, pf, taken: set):
        self.pf = pf
        self.taken = taken
        self.helpers: dict = {}  # helper key -> the name the tree calls it by

    def error(self, what, node, hint):
        return self.pf.error(what, node, hint=hint, cls=UnsupportedSyntaxError)

    def not_consumed_whole(self, label: str, call):
        return self.error(
            f"a call of the generator function `{label}` that is not consumed whole where "
            f"it is made (srcad runs a generator as a function that returns the list of its "
            f"values)", call,
            f"loop over it (`for v in {label}(...)`), or take `list({label}(...))` and index "
            f"the list")

    def fresh(self, base):
        return fresh(base, self.taken)

    def helper(self, key) -> str:
        if key not in self.helpers:
            given = [k for k, v in self.pf.bound.items() if v is _HELPERS[key]]
            if given:  # (the function's names: a nested def's `with` shares them)
                self.helpers[key] = given[0]
                return given[0]
            self.helpers[key] = self.fresh(key)
            self.pf.bound[self.helpers[key]] = _HELPERS[key]
        return self.helpers[key]

    def resolve(self, e):
        """The object a dotted name (`np.errstate`, `contextlib.suppress`) refers to, or None
        for a local or anything else."""
        parts = []
        while isinstance(e, gast.Attribute):
            parts.append(e.attr)
            e = e.value
        if not isinstance(e, gast.Name) or e.id in self.locals:
            return None
        try:
            obj = self.pf.resolve(e.id)
            for a in reversed(parts):
                obj = getattr(obj, a)
        except Exception:  # noqa: BLE001  (not resolvable here: not one of ours)
            return None
        return obj

    def resolve_on_object(self, e):
        """`self.iterate_regions` where `self` holds an object known here (the method's own
        object: a bound method transformed, or a callee given a known object): the attribute
        found on it now, or None."""
        parts = []
        while isinstance(e, gast.Attribute):
            parts.append(e.attr)
            e = e.value
        if not parts or not isinstance(e, gast.Name):
            return None
        held = {**self.pf.known, **self.pf.constants}
        if e.id not in held:
            return None
        obj = held[e.id]
        try:
            for a in reversed(parts):
                obj = getattr(obj, a)
        except AttributeError:
            return None
        return obj

    # -- the walk ------------------------------------------------------------------------------
    def run(self, fdef):
        self.fdef = fdef
        self.locals = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)
                       and isinstance(n.ctx, gast.Store)} | set(self.pf.params)
        for n in gast.walk(fdef):
            if isinstance(n, gast.Name):
                self.taken.add(n.id)
        self.displays = _fixed_displays(fdef)
        self.defs = {n.name for n in gast.walk(fdef) if isinstance(n, gast.FunctionDef)}
        self.fold_module_hasattr(fdef)
        self.dataclass_replace(fdef)
        self.nested_generators(fdef)
        self.generator_calls(fdef)
        fdef.body = self.block(fdef.body)
        gast.fix_missing_locations(fdef)

    def items_first(self, s) -> list:
        """``y[i], y[j] = y[j], y[i]``: Python evaluates every item before it stores any, so
        each gets a name of its own first -- ``item0 = y[j]; item1 = y[i]; y[i] = item0;
        y[j] = item1`` -- and the stores are ordinary ones (a scalar copy keeps its number;
        a row is a view the first store writes into, numpy's own swap gotcha, which the
        aliasing passes follow)."""
        names = [self.fresh(f"item{i}") for i in range(len(s.targets[0].elts))]
        if isinstance(s.value, (gast.Tuple, gast.List)):
            first = [_assign(_name(n, gast.Store()), v, s)
                     for n, v in zip(names, s.value.elts)]
        else:  # (`y[i], s = step(y[i + 1], s)`: unpacked into names, as Python checks it)
            first = [_assign(gast.Tuple(elts=[_name(n, gast.Store()) for n in names],
                                        ctx=gast.Store()), s.value, s)]
        return first + [_assign(t, _name(n), s) for t, n in zip(s.targets[0].elts, names)]

    def dataclass_replace(self, fdef) -> None:
        """`s = dataclasses.replace(s, h=v)` where every assignment of `s` in the function
        makes an object of one dataclass `C` (`s = C(...)`, or such a replace): the object
        replace makes, `C(h=v, f=s.f, ...)` -- each init field from `s` unless given, as
        replace builds it -- which srcad follows as it follows `C(...)` itself."""
        made: dict = {}  # name -> the dataclass every assignment of it makes (or None)
        calls = []
        for n in gast.walk(fdef):
            if isinstance(n, gast.Assign) and len(n.targets) == 1 and \
                    isinstance(n.targets[0], gast.Name):
                name, cls = n.targets[0].id, None
                if isinstance(n.value, gast.Call):
                    fn = self.resolve(n.value.func)
                    if fn is dataclasses.replace and n.value.args and isinstance(
                            n.value.args[0], gast.Name) and len(n.value.args) == 1:
                        cls = "replace"
                        calls.append((n.value, n.value.args[0].id))
                    elif isinstance(fn, type) and dataclasses.is_dataclass(fn):
                        cls = fn
                made.setdefault(name, []).append(cls)
        for call, name in calls:
            kinds = {c for c in made.get(name, []) if c != "replace"}
            if len(kinds) != 1 or None in kinds or any(k.arg is None for k in call.keywords):
                continue
            cls = kinds.pop()
            given = {k.arg: k.value for k in call.keywords}
            fields = [f.name for f in dataclasses.fields(cls) if f.init]
            if set(given) - set(fields) or not cls.__name__.isidentifier():
                continue
            obj = call.args[0]
            spelled = self.fresh(cls.__name__)  # (the class, held under a name of srcad's)
            self.pf.bound[spelled] = cls
            call.func = gast.copy_location(_name(spelled), call)
            call.args = []
            call.keywords = [gast.keyword(arg=f, value=given[f] if f in given else
                                          gast.copy_location(gast.Attribute(
                                              value=_name(obj.id), attr=f, ctx=gast.Load()),
                                              call)) for f in fields]

    def fold_module_hasattr(self, fdef) -> None:
        """`hasattr(np, "trapz")` of a module (version-compatible code: `np.trapz if
        hasattr(np, "trapz") else np.trapezoid`): the answer, a constant -- a module is no
        value srcad follows, and the installed one answers now as it does when called;
        `getattr(np, "tanh")` / `getattr(np, NAME)` (a module global string, guarded): the
        module's attribute, `np.tanh`."""
        for parent in gast.walk(fdef):
            for field, value in gast.iter_fields(parent):
                items = value if isinstance(value, list) else [value]
                for i, e in enumerate(items):
                    if not (isinstance(e, gast.Call) and isinstance(e.func, gast.Name)
                            and e.func.id in ("hasattr", "getattr") and len(e.args) == 2
                            and not e.keywords and e.func.id not in self.locals):
                        continue
                    attr = e.args[1].value if isinstance(e.args[1], gast.Constant) else \
                        self.resolve(e.args[1])  # (`getattr(np, NAME)`: NAME guarded)
                    if not isinstance(attr, str) or self.resolve(e.func) not in (
                            hasattr, getattr):
                        continue
                    module = self.resolve(e.args[0])
                    if not isinstance(module, types.ModuleType):
                        continue
                    if e.func.id == "getattr":
                        # `getattr(np, NAME)(w)`: the module's function, as `np.tanh` reads
                        if not (attr.isidentifier() and hasattr(module, attr)):
                            continue
                        folded = gast.copy_location(gast.Attribute(
                            value=e.args[0], attr=attr, ctx=gast.Load()), e)
                    else:
                        folded = gast.copy_location(gast.Constant(
                            value=hasattr(module, attr), kind=None), e)
                    if isinstance(value, list):
                        value[i] = folded
                    else:
                        setattr(parent, field, folded)

    def block(self, stmts) -> list:
        out = []
        for s in self.iterators(stmts):
            out.extend(self.stmt(s))
        return out

    def chained(self, s) -> list:
        """``h = c = np.zeros(n)``, ``X = layer.fc["X"] = A``: the value once, then each target
        in Python's order (left to right) given that same object -- ``h_c = np.zeros(n); h =
        h_c; c = h_c`` (a write through one name is seen through the other, as in Python: the
        aliasing passes follow it, as they follow ``b = a`` written out; a number is
        rebound by ``+=``, an array written). ``loss = reg = 0.0``: each target its own
        literal."""
        if isinstance(s.value, gast.Constant) or (
                isinstance(s.value, gast.UnaryOp) and isinstance(s.value.operand, gast.Constant)):
            # (`loss = reg = 0.0`: an immutable value -- each target its own copy of the
            # literal; `+=` on one rebinds it, as Python's float does)
            out = [gast.copy_location(gast.Assign(targets=[t], value=copy.deepcopy(s.value),
                                                  type_comment=None), s) for t in s.targets]
            for st in out:
                gast.fix_missing_locations(st)
            return out
        held = _chained_name(s.targets, self.taken)
        first = gast.Assign(targets=[gast.Name(id=held, ctx=gast.Store(), annotation=None,
                                               type_comment=None)],
                            value=s.value, type_comment=None)
        out = [gast.copy_location(first, s)]
        for t in s.targets:
            one = gast.Assign(targets=[t], value=gast.Name(id=held, ctx=gast.Load(),
                                                           annotation=None, type_comment=None),
                              type_comment=None)
            out.append(gast.copy_location(one, s))
        for st in out:
            gast.fix_missing_locations(st)
        return out

    def mapped_unpacking(self, s):
        """``q, k, v = map(split_heads, (q, k, v))`` -- a map over a display, unpacked into as
        many names: the calls it makes, in order, as a tuple display (``(split_heads(q),
        split_heads(k), split_heads(v))``); else None."""
        t, v = s.targets[0], s.value
        if not (isinstance(t, (gast.Tuple, gast.List)) and isinstance(v, gast.Call) and
                not v.keywords and len(v.args) == 2 and isinstance(v.func, gast.Name) and
                self.resolve(v.func) is map and
                isinstance(v.args[1], (gast.Tuple, gast.List)) and
                isinstance(v.args[0], (gast.Name, gast.Attribute, gast.Lambda)) and
                len(v.args[1].elts) == len(t.elts) and
                not any(isinstance(x, gast.Starred) for x in [*t.elts, *v.args[1].elts])):
            return None
        calls = [gast.Call(func=copy.deepcopy(v.args[0]), args=[x], keywords=[])
                 for x in v.args[1].elts]
        out = gast.Assign(targets=[t], value=gast.Tuple(elts=calls, ctx=gast.Load()),
                          type_comment=None)
        out = gast.copy_location(out, s)
        gast.fix_missing_locations(out)
        return out

    # -- iter / next ---------------------------------------------------------------------------
    def iterators(self, stmts) -> list:
        """``it = iter(fs)`` over a list or tuple whose items are read in order, by
        ``next(it)`` in the statements that follow in the same block (one a statement, none
        inside a nested statement) and perhaps one last ``for f in it:`` -- each read is
        the item Python's iterator gives at that point, ``fs[k]`` (``fs[k:]`` for the loop);
        a list display is held under a name of its own. Only where `fs` is a list or tuple
        (a display, a name the function binds only to displays, a module's list or tuple),
        neither rebound nor changed in place while the iterator is read, and `it` is used no
        other way; else left as written (an iterator object: refused where a gradient needs
        it)."""
        out = list(stmts)
        i = 0
        while i < len(out):
            new = self.one_iterator(out, i)
            if new is not None:
                out = new
            i += 1
        return out

    def one_iterator(self, stmts, i):
        st = stmts[i]
        if not (isinstance(st, gast.Assign) and len(st.targets) == 1 and
                isinstance(st.targets[0], gast.Name) and isinstance(st.value, gast.Call) and
                len(st.value.args) == 1 and not st.value.keywords and
                self.resolve(st.value.func) is builtins.iter):
            return None
        it, seq = st.targets[0].id, st.value.args[0]
        if isinstance(seq, (gast.List, gast.Tuple)):
            if any(isinstance(x, gast.Starred) for x in seq.elts):
                return None
            held = self.fresh(f"{it}_items")
            first = [_assign(held, seq, st)]
            seq_name = held
        elif isinstance(seq, gast.Name) and self.sequence_name(seq.id):
            first, seq_name = [], seq.id
        elif self.dict_or_view(seq) is not None and self.resolve(_name("list")) is list and \
                self.touched(stmts[i + 1:], {self.dict_or_view(seq)}) is None:
            # (a dict the function builds, or a view of it or of an argument -- `iter(d)`,
            # `iter(params.values())`: its keys, values or pairs in Python's order, held
            # under a name of their own; the dict is not changed while they are read)
            held = self.fresh(f"{it}_items")
            first = [_assign(held, _call("list", copy.deepcopy(seq)), st)]
            seq_name = held
        elif isinstance(seq, gast.Name) and seq.id in self.pf.params and \
                self.resolve(_name("list")) is list and \
                self.touched(stmts[i + 1:], {seq.id}) is None:
            # (an argument: its items, as Python's iterator gives them -- a list's or tuple's
            # items, a dict's keys, an array's rows -- held under a name of their own; the
            # argument is not changed while they are read, so the copy is what it would read)
            held = self.fresh(f"{it}_items")
            first = [_assign(held, _call("list", copy.deepcopy(seq)), st)]
            seq_name = held
        else:
            return None
        done = self.straight_reads(stmts, i, it, seq_name, first)
        return done if done is not None else self.counted_reads(stmts, i, it, seq_name, first)

    def counted_reads(self, stmts, i, it, seq_name, first):
        """`it = iter(fs)` whose ``next(it)`` reads sit in loops or branches (``for _ in
        range(n): h = f(h @ next(it))``): a counter of the items read, ``it_next = 0``, each
        read ``fs[it_next]`` followed by ``it_next = it_next + 1``, a last ``for v in it`` ``for
        v in fs[it_next:]``. Only where every use of `it` is such a read, one per simple
        statement and evaluated once each time the statement runs (none in a test, a loop's
        header, a comprehension, `and`/`or`, a nested def or a `with`/`try`), and `fs` is
        neither rebound nor changed after; else None. (A read past the end raises IndexError
        where Python raises StopIteration.)"""
        later = stmts[i + 1:]
        if self.touched(later, {seq_name}) is not None:
            return None
        count = self.fresh(f"{it}_next")

        def uses(node) -> bool:
            return any(isinstance(n, gast.Name) and n.id in (it, count)
                       for n in gast.walk(node))

        def item(call, upper=False):
            index = _name(count)
            if upper:
                index = gast.Slice(lower=index, upper=None, step=None)
            return gast.copy_location(gast.Subscript(value=_name(seq_name), slice=index,
                                                     ctx=gast.Load()), call)

        def read_of(s2):
            """The statement's one `next(it)`, or None where it reads `it` otherwise."""
            if isinstance(s2, (gast.With, gast.Try, gast.FunctionDef, gast.ClassDef,
                               gast.AsyncFunctionDef, gast.AsyncFor, gast.AsyncWith,
                               gast.Match, gast.Global, gast.Nonlocal)):
                return None
            names = [n for n in gast.walk(s2) if isinstance(n, gast.Name) and
                     n.id in (it, count)]
            calls = [n for n in gast.walk(s2) if isinstance(n, gast.Call) and
                     len(n.args) == 1 and not n.keywords and
                     isinstance(n.args[0], gast.Name) and n.args[0].id == it and
                     self.resolve(n.func) is builtins.next]
            if len(calls) != 1 or len(names) != 1 or _evaluated_maybe_or_often(s2, calls[0]):
                return None
            return calls[0]

        def countable(body) -> bool:
            """Every use of `it` in `body` one this can count (nothing is changed)."""
            for s2 in body:
                if isinstance(s2, gast.For) and isinstance(s2.iter, gast.Name) and \
                        s2.iter.id == it:
                    if uses(s2.target) or any(uses(b) for b in s2.body + s2.orelse):
                        return False
                elif isinstance(s2, (gast.For, gast.While, gast.If)):
                    head = [s2.target, s2.iter] if isinstance(s2, gast.For) else [s2.test]
                    if any(uses(h) for h in head) or not countable(s2.body) or \
                            not countable(s2.orelse):
                        return False
                elif uses(s2) and read_of(s2) is None:
                    return False
            return True

        def rewrite(body) -> list:
            out = []
            for s2 in body:
                if isinstance(s2, gast.For) and isinstance(s2.iter, gast.Name) and \
                        s2.iter.id == it:
                    s2.iter = item(s2.iter, upper=True)
                    out += [s2, gast.copy_location(_assign(count, _call(
                        "len", _name(seq_name)), s2), s2)]
                elif isinstance(s2, (gast.For, gast.While, gast.If)):
                    s2.body, s2.orelse = rewrite(s2.body), rewrite(s2.orelse)
                    out.append(s2)
                elif not uses(s2):
                    out.append(s2)
                else:
                    call = read_of(s2)
                    parents = {id(c): n for n in gast.walk(s2)
                               for c in gast.iter_child_nodes(n)}
                    parent = parents.get(id(call))
                    if parent is None:  # (the statement is the call itself: `next(it)`)
                        s2 = gast.copy_location(gast.Expr(value=item(call)), s2)
                    else:
                        for field, value in gast.iter_fields(parent):
                            if value is call:
                                setattr(parent, field, item(call))
                            elif isinstance(value, list):
                                setattr(parent, field, [item(call) if v is call else v
                                                        for v in value])
                    out += [s2, _assign(count, gast.BinOp(
                        left=_name(count), op=gast.Add(),
                        right=gast.Constant(value=1, kind=None)), s2)]
            return out

        if not any(uses(s2) for s2 in later) or not countable(later):
            return None
        new = rewrite(later)
        for s2 in new:
            gast.fix_missing_locations(s2)
        start = _assign(count, gast.Constant(value=0, kind=None), stmts[i])
        return stmts[:i] + first + [start] + new

    def straight_reads(self, stmts, i, it, seq_name, first):
        """`one_iterator`'s reads by position: every ``next(it)`` a statement of the block
        itself, the k-th read ``fs[k]``; None where a read sits in a loop or branch."""
        later = stmts[i + 1:]
        reads, loop = [], None  # (index in later, the next(it) call)
        for j, s2 in enumerate(later):
            if loop is not None:
                if any(isinstance(n, gast.Name) and n.id == it for n in gast.walk(s2)):
                    return None
                continue
            if isinstance(s2, gast.For) and isinstance(s2.iter, gast.Name) and \
                    s2.iter.id == it:
                if any(isinstance(n, gast.Name) and n.id in (it, seq_name)
                       for b in s2.body + s2.orelse for n in gast.walk(b)) or \
                        any(isinstance(n, gast.Name) and n.id == it for n in gast.walk(s2.target)):
                    return None
                loop = j
                continue
            uses = [n for n in gast.walk(s2) if isinstance(n, gast.Name) and n.id == it]
            if not uses:
                continue
            calls = [n for n in gast.walk(s2) if isinstance(n, gast.Call) and
                     len(n.args) == 1 and not n.keywords and
                     isinstance(n.args[0], gast.Name) and n.args[0].id == it and
                     self.resolve(n.func) is builtins.next]
            if isinstance(s2, (gast.For, gast.While, gast.If, gast.With, gast.Try,
                               gast.FunctionDef)) or len(calls) != 1 or len(uses) != 1 or \
                    _evaluated_maybe_or_often(s2, calls[0]):
                return None  # (a read whose count or order is not settled here)
            reads.append((j, calls[0]))
        last = loop if loop is not None else (reads[-1][0] if reads else -1)
        if last < 0 or self.touched(later[:last + 1], {seq_name}) is not None:
            return None  # (no read, or the list rebound or changed while it is read)
        for k, (j, call) in enumerate(reads):
            parents = {id(c): n for n in gast.walk(later[j]) for c in gast.iter_child_nodes(n)}
            item = gast.copy_location(gast.Subscript(
                value=_name(seq_name), slice=gast.Constant(value=k, kind=None),
                ctx=gast.Load()), call)
            parent = parents.get(id(call))
            if parent is None:  # (the statement is the call itself: `next(it)`)
                later[j] = gast.copy_location(gast.Expr(value=item), later[j])
                continue
            for field, value in gast.iter_fields(parent):
                if value is call:
                    setattr(parent, field, item)
                elif isinstance(value, list):
                    setattr(parent, field, [item if v is call else v for v in value])
        if loop is not None:
            s2 = later[loop]
            s2.iter = gast.copy_location(gast.Subscript(
                value=_name(seq_name), slice=gast.Slice(
                    lower=gast.Constant(value=len(reads), kind=None), upper=None, step=None),
                ctx=gast.Load()), s2.iter)
        for s2 in later:
            gast.fix_missing_locations(s2)
        return stmts[:i] + first + later

    def dict_or_view(self, seq) -> str | None:
        """The name of the dict `seq` walks -- a name the function binds only to dict
        displays or comprehensions, or `.keys()` / `.values()` / `.items()` of one or of an
        argument -- else None."""
        if isinstance(seq, gast.Call) and isinstance(seq.func, gast.Attribute) and \
                seq.func.attr in ("keys", "values", "items") and not seq.args and \
                not seq.keywords and isinstance(seq.func.value, gast.Name):
            name = seq.func.value.id
            return name if name in self.pf.params or self.dict_name(name) else None
        if isinstance(seq, gast.Name) and self.dict_name(seq.id):
            return seq.id
        return None

    def bindings(self, name: str) -> tuple:
        """(the assignments of the function naming `name` among their targets, every node
        that binds or deletes `name`)."""
        stores = [n for n in gast.walk(self.fdef) if isinstance(n, gast.Assign) and
                  any(isinstance(t, gast.Name) and t.id == name for t in n.targets)]
        bound = [n for n in gast.walk(self.fdef) if isinstance(n, gast.Name) and
                 n.id == name and not isinstance(n.ctx, gast.Load)]
        return stores, bound

    def dict_name(self, name: str) -> bool:
        """Is `name` bound by the function only to dict displays or comprehensions (not a
        parameter)?"""
        stores, bound = self.bindings(name)
        return bool(stores) and len(bound) == len(stores) and name not in self.pf.params and \
            all(len(n.targets) == 1 and isinstance(n.value, (gast.Dict, gast.DictComp))
                for n in stores)

    def sequence_name(self, name: str) -> bool:
        """Does `name` hold a list or tuple here: bound by the function only to list or tuple
        displays or list comprehensions, or a module's list or tuple it never binds?"""
        stores, bound = self.bindings(name)
        if stores:
            return all(len(n.targets) == 1 and isinstance(n.value, (gast.List, gast.Tuple,
                                                                    gast.ListComp))
                       for n in stores) and name not in self.pf.params
        if bound or name in self.pf.params:
            return False
        try:
            held = self.pf.resolve(name)
        except Exception:  # noqa: BLE001  (not resolvable here)
            return False
        return type(held) in (list, tuple)

    def stmt(self, s) -> list:
        if not isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            self.getters_applied(s)
            checks = self.zip_strict(s)
            if checks:
                return self.block(checks + [s])
        if isinstance(s, gast.Assign) and len(s.targets) > 1:
            return self.block(self.chained(s))
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            mapped = self.mapped_unpacking(s)
            if mapped is not None:
                s = mapped
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and _items_stored(s):
            return self.block(self.items_first(s))
        split = _lambdas_unpacked(s)
        if split is not None:  # `net, loss = lambda X: linreg(X, w, b), sq` (d2l)
            return self.block(split)
        if isinstance(s, gast.FunctionDef):  # (a nested def: closures.py splices it in)
            s.body = self.block(s.body)
            return [s]
        if isinstance(s, (gast.ClassDef, gast.AsyncFunctionDef)):
            return [s]
        if isinstance(s, gast.Match):
            return self.block(self.match_block(s))
        if isinstance(s, gast.For) and isinstance(s.iter, gast.GeneratorExp):
            return self.block(self.loop_over_generator(s))
        if isinstance(s, gast.For) and isinstance(s.iter, gast.Call) and \
                self.resolve(s.iter.func) is np.nditer:
            loop = self.nditer_loop(s)
            if loop is not None:
                return self.block(loop)
        if isinstance(s, gast.For):
            self.lazy_values_kept(s)
        self.expressions(s)
        for field in ("body", "orelse"):
            if isinstance(getattr(s, field, None), list):
                setattr(s, field, self.block(getattr(s, field)))
        if isinstance(s, gast.With):
            return self.with_block(s)
        if isinstance(s, (gast.For, gast.While)) and s.orelse:
            return self.loop_else(s)
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and _starred(s.targets[0]):
            return self.starred(s.targets[0], s.value, s)
        if isinstance(s, gast.For) and self.enumerate_from(s.iter) is not None:
            return self.enumerate_start(s)
        if isinstance(s, gast.For) and _starred(s.target):
            item = self.fresh("item")
            s.body = self.starred(s.target, _name(item), s) + s.body
            s.target = _name(item, gast.Store())
        return [s]

    # -- zip(..., strict=True), operator.itemgetter(...)(x) -----------------------------------
    def zip_strict(self, s) -> list:
        """``zip(a, b, strict=True)`` in statement `s`'s expressions: the zip without the
        keyword, after a statement making Python's check of the lengths
        (runtime_python.zip_lengths, its ValueError and message) -- its arguments read
        once, as Python reads them: a name, an attribute or an item as written, anything
        else first into a fresh name (not where a comprehension's own names are in it:
        those stay as written, and refused). ``strict=False`` is dropped."""
        calls = []  # (each with the names the comprehensions and lambdas around it bind)
        stack = [(c, frozenset()) for c in gast.iter_child_nodes(s)
                 if not isinstance(c, gast.stmt)]
        while stack:
            n, own = stack.pop()
            if isinstance(n, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
                own = own | {x.id for g in n.generators for x in gast.walk(g.target)
                             if isinstance(x, gast.Name)}
            if isinstance(n, gast.Lambda):
                own = own | {a.id for a in n.args.args + n.args.kwonlyargs}
            if isinstance(n, gast.Call) and self.resolve(n.func) is zip and \
                    [k.arg for k in n.keywords] == ["strict"] and \
                    not any(isinstance(a, gast.Starred) for a in n.args):
                calls.append((n, own))
            stack.extend((c, own) for c in gast.iter_child_nodes(n)
                         if not isinstance(c, gast.stmt))
        out = []
        for call, own in calls:
            if any(isinstance(x, gast.Name) and x.id in own for a in call.args
                   for x in gast.walk(a)):
                continue
            strict = call.keywords[0].value
            call.keywords = []
            if isinstance(strict, gast.Constant) and not strict.value:
                continue
            args = []
            for i, a in enumerate(call.args):
                if not _plain_place(a):
                    name = self.fresh("zip_arg")
                    out.append(_assign(name, a, s))
                    call.args[i] = gast.copy_location(_name(name), a)
                args.append(copy.deepcopy(call.args[i]))
            out.append(gast.copy_location(gast.Expr(value=_call(
                _name(self.helper("zip_lengths")), strict, *args)), s))
        for st in out:
            gast.fix_missing_locations(gast.copy_location(st, s))
        return out

    def getters_applied(self, s) -> None:
        """``operator.itemgetter("W", "b")(params)`` / ``operator.attrgetter("W")(layer)``
        called where they are made, with constant keys: the items or attributes as written
        (``(params["W"], params["b"])``, ``layer.W``; a dotted name an attribute chain)."""
        forms = self

        class Getters(gast.NodeTransformer):
            def visit_Call(self, n):
                self.generic_visit(n)
                first = forms.first_item(n)
                if first is not None:
                    return first
                f = n.func
                if not (isinstance(f, gast.Call) and len(n.args) == 1 and not n.keywords and
                        not isinstance(n.args[0], gast.Starred) and not f.keywords and
                        f.args and all(isinstance(a, gast.Constant) for a in f.args)):
                    return n
                how = forms.resolve(f.func)
                if how is operator.itemgetter:
                    parts = [gast.Subscript(value=copy.deepcopy(n.args[0]), slice=a,
                                            ctx=gast.Load()) for a in f.args]
                elif how is operator.attrgetter and all(
                        isinstance(a.value, str) and all(p.isidentifier() for p in
                                                         a.value.split("."))
                        for a in f.args):
                    parts = []
                    for a in f.args:
                        e = copy.deepcopy(n.args[0])
                        for p in a.value.split("."):
                            e = gast.Attribute(value=e, attr=p, ctx=gast.Load())
                        parts.append(e)
                else:
                    return n
                out = parts[0] if len(parts) == 1 else gast.Tuple(elts=parts, ctx=gast.Load())
                return gast.fix_missing_locations(gast.copy_location(out, n))

        for field, value in gast.iter_fields(s):
            if isinstance(value, gast.expr):
                setattr(s, field, Getters().visit(value))
            elif isinstance(value, list):
                setattr(s, field, [Getters().visit(v) if isinstance(v, gast.expr) else v
                                   for v in value])

    def first_item(self, n):
        """``next(iter(xs))`` -- the first item of a list, a tuple, an array's first row, a
        dict's first key, ``d.values()``'s first value -- as ``list(xs)[0]`` (Python's
        builtins), where xs is a name, an attribute, an item or a dict view of one (not a
        call: a generator would run to its end); else None."""
        if not (isinstance(n, gast.Call) and len(n.args) == 1 and not n.keywords and
                self.resolve(n.func) is next):
            return None
        inner = n.args[0]
        if not (isinstance(inner, gast.Call) and len(inner.args) == 1 and not inner.keywords
                and self.resolve(inner.func) is iter):
            return None
        xs = inner.args[0]
        view = xs.func.value if isinstance(xs, gast.Call) and isinstance(
            xs.func, gast.Attribute) and xs.func.attr in ("keys", "values", "items") and \
            not xs.args and not xs.keywords else None
        if not _plain_place(view if view is not None else xs):
            return None
        items = _call(_name(self.helper("list")), xs)
        return gast.fix_missing_locations(gast.copy_location(gast.Subscript(
            value=items, slice=gast.Constant(value=0, kind=None), ctx=gast.Load()), n))

    # -- enumerate(xs, start) ------------------------------------------------------------------
    def enumerate_from(self, it):
        """The start of `enumerate(xs, start)` / `enumerate(xs, start=k)` (Python's builtin),
        else None."""
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
                self.resolve(it.func) is enumerate):
            return None
        if len(it.args) == 2 and not it.keywords:
            return it.args[1]
        if len(it.args) == 1 and len(it.keywords) == 1 and it.keywords[0].arg == "start":
            return it.keywords[0].value
        return None

    def enumerate_as_zip(self, it):
        """`enumerate(xs, start)` a comprehension walks (no statement can go before its
        body), xs a name, an attribute, an item or a display of names and constants, and
        start an int or a name: `zip(range(start, start + len(xs)), xs)`, the same pairs."""
        start = self.enumerate_from(it)
        simple = (gast.Name, gast.Attribute, gast.Subscript)
        if start is None or not (isinstance(it.args[0], simple) or (
                isinstance(it.args[0], (gast.List, gast.Tuple)) and all(
                    isinstance(x, (gast.Name, gast.Constant)) for x in it.args[0].elts))) or not (
                (isinstance(start, gast.Constant) and type(start.value) is int) or
                isinstance(start, gast.Name)):
            return it
        xs = it.args[0]
        stop = gast.BinOp(left=copy.deepcopy(start), op=gast.Add(),
                          right=_call(_name(self.helper("len")), copy.deepcopy(xs)))
        counts = _call(_name(self.helper("range")), copy.deepcopy(start), stop)
        return gast.copy_location(_call(_name(self.helper("zip")), counts, xs), it)

    def enumerate_start(self, s) -> list:
        """``for i, x in enumerate(xs, start=k)``: ``for i_from0, x in enumerate(xs)`` whose
        body begins ``i = i_from0 + k`` (k evaluated once, before the loop, as Python does)."""
        start = self.enumerate_from(s.iter)
        out = []
        if not (isinstance(start, gast.Constant) and type(start.value) is int):
            first = self.fresh("start")
            out.append(_assign(first, start, s))
            start = _name(first)
        s.iter = gast.copy_location(_call(s.iter.func, s.iter.args[0]), s.iter)
        index = self.fresh("index_from0")
        target = s.target
        if isinstance(target, (gast.Tuple, gast.List)) and len(target.elts) == 2:
            s.target = gast.copy_location(gast.Tuple(elts=[_name(index, gast.Store()),
                                                           target.elts[1]], ctx=gast.Store()),
                                          target)
            count = target.elts[0]
        else:  # (`for pair in enumerate(xs, 1)`: the pair as Python builds it)
            item = self.fresh("item")
            s.target = gast.copy_location(gast.Tuple(elts=[_name(index, gast.Store()),
                                                           _name(item, gast.Store())],
                                                     ctx=gast.Store()), target)
            count = None
        plus = gast.BinOp(left=_name(index), op=gast.Add(), right=start)
        if count is not None:
            head = [_assign(count, plus, s)]
        else:
            head = [_assign(target, gast.Tuple(elts=[plus, _name(item)], ctx=gast.Load()), s)]
        s.body = head + s.body
        gast.fix_missing_locations(s)
        return out + self.stmt(s)

    # -- match ---------------------------------------------------------------------------------
    def match_block(self, s) -> list:
        """``match kind: case "relu": ... case "gelu" | "swish": ... case None: ... case _:``
        -- value, singleton, or-patterns, a wildcard or a capture (``case other:``), with
        guards -- as an if/elif chain over the subject, evaluated once, as Python tests the
        cases in order (``==`` for a value, ``is`` for None/True/False). Other patterns
        (sequences, mappings, classes) are refused at their line."""
        subject = s.subject
        pre = []
        if not isinstance(subject, gast.Name):
            name = self.fresh("subject")
            pre.append(_assign(name, subject, s))
            subject = _name(name)

        def test_of(p):
            """(test, names bound): the test None where the pattern always matches."""
            if isinstance(p, gast.MatchValue):
                return gast.Compare(left=_name(subject.id), ops=[gast.Eq()],
                                    comparators=[p.value]), []
            if isinstance(p, gast.MatchSingleton):
                return gast.Compare(left=_name(subject.id), ops=[gast.Is()],
                                    comparators=[gast.Constant(value=p.value, kind=None)]), []
            if isinstance(p, gast.MatchOr):
                parts = [test_of(q) for q in p.patterns]
                if any(b for _, b in parts):
                    raise self.error("a `case` or-pattern that binds names", p,
                                     "bind the subject to a name before the match")
                if any(t is None for t, _ in parts):
                    return None, []
                return gast.BoolOp(op=gast.Or(), values=[t for t, _ in parts]), []
            if isinstance(p, gast.MatchAs):
                test, binds = (None, []) if p.pattern is None else test_of(p.pattern)
                return test, binds + ([p.name] if p.name else [])
            raise self.error(f"a `case` {type(p).__name__[5:].lower()} pattern", p,
                             "use if/elif (srcad lowers value, None/True/False, `|`, `_` and "
                             "capture patterns)")

        chain: list = []
        for case in reversed(s.cases):
            test, binds = test_of(case.pattern)
            if case.guard is not None and binds:
                raise self.error("a `case` guard after a capture pattern", case.guard,
                                 "test the subject itself in the guard")
            if case.guard is not None:
                test = case.guard if test is None else gast.BoolOp(
                    op=gast.And(), values=[test, case.guard])
            body = [_assign(b, _name(subject.id), case.pattern) for b in binds] + case.body
            if test is None:
                chain = body
            else:
                chain = [gast.copy_location(gast.If(test=test, body=body, orelse=chain),
                                            case.pattern)]
        return pre + (chain or [gast.copy_location(gast.Pass(), s)])

    # -- expressions -----------------------------------------------------------------------------
    def expressions(self, s) -> None:
        """reversed(xs) as xs[::-1], star displays spliced, constant sets: in the expressions
        of statement `s` (not in its nested statements: those come in their turn)."""
        stack = [c for c in gast.iter_child_nodes(s) if not isinstance(c, gast.stmt)]
        while stack:
            n = stack.pop()
            if isinstance(n, gast.Call):
                self.splice_star_displays(n)
                self.positional_out(n)
                for i, a in enumerate(n.args):
                    consumed = self.resolve(n.func) in _CONSUMERS
                    n.args[i] = self.consumed_item(a, consumed)
            if isinstance(n, gast.comprehension):
                n.iter = self.consumed_item(n.iter, True)
                n.iter = self.enumerate_as_zip(n.iter)
            if isinstance(n, gast.Compare):
                n.comparators = [self.constant_set(c) for c in n.comparators]
            stack.extend(c for c in gast.iter_child_nodes(n) if not isinstance(c, gast.stmt))
        if isinstance(s, gast.For):
            s.iter = self.chain_item(self.pairwise_item(self.reversed_item(s.iter, False),
                                                        True), True)
            if isinstance(s.iter, gast.Call) and self.resolve(s.iter.func) in (zip, enumerate):
                s.iter.args = [self.consumed_item(a, True) for a in s.iter.args]

    def reversed_item(self, e, consumed: bool):
        """`reversed(xs)` -> `xs[::-1]` where it is consumed as an iterable (not of a range:
        loops.py walks that backward)."""
        if not (consumed and isinstance(e, gast.Call) and len(e.args) == 1 and not e.keywords
                and self.resolve(e.func) is reversed):
            return e
        inner = e.args[0]
        if isinstance(inner, gast.Call) and self.resolve(inner.func) is range:
            return e
        return gast.copy_location(gast.Subscript(
            value=inner, slice=gast.Slice(None, None, gast.Constant(-1, None)),
            ctx=gast.Load()), e)

    def pairwise_item(self, e, consumed: bool):
        """`itertools.pairwise(xs)` -> `zip(xs, xs[1:])` where it is consumed as an
        iterable and xs is a name, an attribute or an item (a list, tuple or array held
        there: the same pairs in the same order; a call's value is left as written)."""
        if not (consumed and isinstance(e, gast.Call) and len(e.args) == 1 and not e.keywords
                and isinstance(e.args[0], (gast.Name, gast.Attribute, gast.Subscript))
                and self.resolve(e.func) is itertools.pairwise):
            return e
        inner = e.args[0]
        rest = gast.Subscript(value=copy.deepcopy(inner),
                              slice=gast.Slice(gast.Constant(1, None), None, None),
                              ctx=gast.Load())
        return gast.copy_location(_call(_name(self.helper("zip")), inner, rest), e)

    def chain_item(self, e, consumed: bool):
        """`itertools.chain(a, b)` -> `[*a, *b]` and `itertools.chain.from_iterable(xss)`
        -> `[x for xs in xss for x in xs]` where it is consumed as an iterable: the same
        items in the same order, each argument walked once, as the chain walks it."""
        if not (consumed and isinstance(e, gast.Call) and not e.keywords and
                not any(isinstance(a, gast.Starred) for a in e.args)):
            return e
        how = self.resolve(e.func)
        if how is itertools.chain:
            return gast.copy_location(gast.List(elts=[
                gast.Starred(value=a, ctx=gast.Load()) for a in e.args], ctx=gast.Load()), e)
        if how == itertools.chain.from_iterable and len(e.args) == 1:
            xs, x = self.fresh("chained"), self.fresh("item")
            comp = gast.ListComp(elt=_name(x), generators=[
                gast.comprehension(target=_name(xs, gast.Store()), iter=e.args[0], ifs=[],
                                   is_async=0),
                gast.comprehension(target=_name(x, gast.Store()), iter=_name(xs), ifs=[],
                                   is_async=0)])
            return gast.fix_missing_locations(gast.copy_location(comp, e))
        return e

    def consumed_item(self, e, consumed: bool):
        """reversed / itertools.pairwise / itertools.chain of an iterable Python consumes."""
        return self.chain_item(self.pairwise_item(self.reversed_item(e, consumed), consumed),
                               consumed)

    def splice_star_displays(self, call) -> None:
        if self.resolve(call.func) is zip:
            return  # (`a, b = zip(*pairs)`: pylevel.py transposes it as a whole)
        args = []
        for a in call.args:
            if isinstance(a, gast.Starred) and isinstance(a.value, (gast.List, gast.Tuple)) \
                    and not any(isinstance(x, gast.Starred) for x in a.value.elts):
                args.extend(a.value.elts)
            elif isinstance(a, gast.Starred) and isinstance(a.value, gast.Name) and \
                    a.value.id in self.displays:  # (a local list of known length)
                args.extend(gast.copy_location(gast.Subscript(
                    value=_name(a.value.id), slice=gast.Constant(i, None), ctx=gast.Load()), a)
                    for i in range(self.displays[a.value.id]))
            else:
                args.append(a)
        call.args = args

    def positional_out(self, call) -> None:
        """`np.clip(p, eps, 1 - eps, p)`, `np.exp(s, s)`: numpy's `out` given by position (after
        a ufunc's inputs, np.clip's bounds) is the keyword `out=` (normalize.py's write)."""
        if call.keywords or any(isinstance(a, gast.Starred) for a in call.args):
            return
        fn = self.resolve(call.func)
        n_in = fn.nin if isinstance(fn, np.ufunc) and fn.nout == 1 else \
            3 if fn is np.clip else None
        if n_in is not None and len(call.args) == n_in + 1:
            out = call.args.pop()
            call.keywords = [gast.keyword(arg="out", value=out)]

    def constant_set(self, e):
        """`{"train", "eval"}`: a frozenset constant (a set of hashable constants)."""
        if isinstance(e, gast.Set) and all(isinstance(x, gast.Constant) for x in e.elts):
            try:
                value = frozenset(x.value for x in e.elts)
            except TypeError:
                return e
            return gast.copy_location(gast.Constant(value, None), e)
        return e

    # -- generators ------------------------------------------------------------------------------
    def generator_calls(self, fdef) -> None:
        """Each call of a generator function in `fdef`: consumed whole where it is made (see the
        module docstring), else refused; the generator is then normalised as a function that
        returns the list of its values (`generator`)."""
        parents = {id(c): n for n in gast.walk(fdef) for c in gast.iter_child_nodes(n)}
        for call in gast.walk(fdef):
            if not isinstance(call, gast.Call):
                continue
            fn = self.resolve(call.func) or self.resolve_on_object(call.func)
            if not inspect.isgeneratorfunction(fn):
                continue
            fn = getattr(fn, "__func__", fn)  # (`self.iterate_regions(image)`: the function)
            label = getattr(fn, "__name__", "the generator")
            parent = parents.get(id(call))
            consumer, early = None, False
            if isinstance(parent, gast.For) and parent.iter is call:
                consumer, early = parent, _leaves_early(parent.body)
            elif isinstance(parent, gast.comprehension) and parent.iter is call:
                consumer = parent
            elif isinstance(parent, gast.Call) and call in parent.args and \
                    self.resolve(parent.func) in _CONSUMERS:
                consumer, early = parent, self.resolve(parent.func) in _EARLY
                outer = parents.get(id(parent))
                if self.resolve(parent.func) in (zip, enumerate) and isinstance(outer, gast.For):
                    early = early or _leaves_early(outer.body)
            if consumer is None:
                raise self.not_consumed_whole(label, call)
            effects = _has_effects(_source_tree(fn))
            if effects and (early or (isinstance(consumer, gast.For) and
                                      _has_effects(consumer.body))):
                raise self.error(
                    f"the generator `{label}` has effects (a call made for its effect, a "
                    f"write to an object) and its consumer "
                    + ("may stop before its end" if early else "has effects of its own")
                    + ": running the generator whole first would change their order", call,
                    f"take `list({label}(...))` first if that order is what you mean, or "
                    f"move the effects out of the generator")
            if early and _may_not_end(_source_tree(fn)):
                raise self.error(
                    f"the consumer of the generator `{label}` may stop before its end, and "
                    f"the generator has a `while` loop (it may never end)", call,
                    f"give the generator a bound (`for i in range(n)`) or consume it whole")
            given = {_root(a.value if isinstance(a, gast.Starred) else a)
                     for a in [*call.args, *(k.value for k in call.keywords)]} - {None}
            loop = consumer if isinstance(consumer, gast.For) else parents.get(id(consumer))
            region = loop.body + loop.orelse if isinstance(loop, gast.For) and (
                loop is consumer or loop.iter is consumer) else []
            touched = self.touched(region, given, rebound=False)
            if touched:
                raise self.error(
                    f"the loop over the generator `{label}` writes into `{touched}`, which "
                    f"the generator is given: Python runs the generator a step at a time "
                    f"between the loop's iterations, srcad runs it whole before the loop",
                    call, f"take `values = list({label}(...))` before the loop if the "
                    f"generator should see `{touched}` as it is there, or compute the "
                    f"values in the loop")
            _CONSUMED.add(fn)

    def generator(self, fdef) -> None:
        """`yield v` -> `yielded.append(v)`, `return` -> `return yielded` (this function is a
        generator that a caller consumes whole: `generator_calls`)."""
        if self.pf.fn not in _CONSUMED:
            return  # (the fence refuses its `yield`)
        self.list_of_yields(fdef)

    def list_of_yields(self, fdef) -> None:
        """Rewrite the generator `fdef` as a function returning the list of its values."""
        acc = self.fresh("yielded")
        count = [0]

        def block(stmts):
            out = []
            for st in stmts:
                if isinstance(st, (gast.FunctionDef, gast.ClassDef)):
                    out.append(st)
                    continue
                if isinstance(st, gast.Expr) and isinstance(st.value, gast.Yield):
                    value = st.value.value or gast.Constant(None, None)
                    append = gast.Call(func=gast.Attribute(value=_name(acc), attr="append",
                                                           ctx=gast.Load()),
                                       args=[value], keywords=[])
                    out.append(gast.copy_location(gast.Expr(value=append), st))
                    count[0] += 1
                    continue
                if isinstance(st, gast.Expr) and isinstance(st.value, gast.YieldFrom):
                    # `yield from it` (a statement): each item of it, as `for v in it:
                    # yield v` yields them (its value, what a generator returns, unused)
                    item = self.fresh("item")
                    append = gast.Call(func=gast.Attribute(value=_name(acc), attr="append",
                                                           ctx=gast.Load()),
                                       args=[_name(item)], keywords=[])
                    loop = gast.For(target=_name(item, gast.Store()), iter=st.value.value,
                                    body=[gast.Expr(value=append)], orelse=[],
                                    type_comment=None)
                    out.append(gast.fix_missing_locations(gast.copy_location(loop, st)))
                    count[0] += 1
                    continue
                if isinstance(st, gast.Return):
                    out.append(gast.copy_location(gast.Return(value=_name(acc)), st))
                    continue
                for field in ("body", "orelse"):
                    if isinstance(getattr(st, field, None), list):
                        setattr(st, field, block(getattr(st, field)))
                out.append(st)
            return out

        body = block(fdef.body)
        for n in gast.walk(gast.Module(body=body, type_ignores=[])):
            if isinstance(n, gast.Yield):
                raise self.error("`yield` used as a value (`x = yield v`, `send`)", n,
                                 "yield as a statement: `yield v`")
            if isinstance(n, gast.YieldFrom):
                raise self.error("`yield from` used as a value (`r = yield from inner()`)",
                                 n, "write the loop: `for v in inner(...): yield v`")
        init = _assign(acc, gast.List(elts=[], ctx=gast.Load()), fdef.body[0])
        ret = gast.copy_location(gast.Return(value=_name(acc)), fdef.body[-1])
        fdef.body = [init] + body + [ret]

    def nested_generators(self, fdef) -> None:
        """A generator function defined in the function (``def pairs(v): for i in range(3):
        yield v * i``), every call of it consumed whole where it is made (as
        `generator_calls` asks of a module's): rewritten as a function returning the list of
        its values. Python runs a generator a step at a time, between its consumer's; srcad
        runs it whole first, which gives the same values where nothing the consumer does
        between two steps reaches what the generator reads -- refused otherwise: a loop over it
        that rebinds, writes into or calls a method of a name of the function the generator
        reads, or hands one to a function of the user's; a generator with effects of its own
        whose consumer has some too or may stop early."""
        defs = [n for n in gast.walk(fdef) if isinstance(n, gast.FunctionDef) and
                n is not fdef and _own_yields(n)]
        if not defs:
            return
        parents = {id(c): n for n in gast.walk(fdef) for c in gast.iter_child_nodes(n)}
        for g in defs:
            free = _free_names(g) & self.locals
            for n in gast.walk(fdef):
                if not (isinstance(n, gast.Name) and n.id == g.name):
                    continue
                call = parents.get(id(n))
                if not isinstance(n.ctx, gast.Load) or not (
                        isinstance(call, gast.Call) and call.func is n):
                    raise self.error(
                        f"the generator function `{g.name}` used other than by calling it",
                        n, f"call it where its values are consumed: `for v in "
                        f"{g.name}(...)`, `list({g.name}(...))`")
                self.consumed_nested(g, call, parents, free)
            self.list_of_yields(g)

    def consumed_nested(self, g, call, parents, free) -> None:
        """Check one call of the nested generator `g` (`nested_generators`)."""
        label = g.name
        parent = parents.get(id(call))
        region, early = [], False
        if isinstance(parent, gast.For) and parent.iter is call:
            region, early = parent.body + parent.orelse, _leaves_early(parent.body)
        elif isinstance(parent, gast.comprehension) and parent.iter is call:
            comp = parents.get(id(parent))
            region = [comp] if comp is not None else []
        elif isinstance(parent, gast.Call) and call in parent.args and \
                self.resolve(parent.func) in _CONSUMERS:
            early = self.resolve(parent.func) in _EARLY
            outer = parents.get(id(parent))
            if self.resolve(parent.func) in (zip, enumerate) and isinstance(outer, gast.For) \
                    and outer.iter is parent:
                region = outer.body + outer.orelse
                early = early or _leaves_early(outer.body)
        else:
            raise self.not_consumed_whole(label, call)
        if _has_effects(g.body) and (early or _has_effects(region)):
            raise self.error(
                f"the generator `{label}` has effects (a call made for its effect, a write "
                f"to an object) and its consumer "
                + ("may stop before its end" if early else "has effects of its own")
                + ": running the generator whole first would change their order", call,
                f"take `list({label}(...))` first if that order is what you mean, or "
                f"move the effects out of the generator")
        if early and _may_not_end(g):
            raise self.error(
                f"the consumer of the generator `{label}` may stop before its end, and "
                f"the generator has a `while` loop (it may never end)", call,
                f"give the generator a bound (`for i in range(n)`) or consume it whole")
        touched = self.touched(region, free)
        if touched:
            raise self.error(
                f"the loop over the generator `{label}` changes `{touched}`, which the "
                f"generator reads: Python runs the generator a step at a time between the "
                f"loop's iterations, srcad runs it whole before the loop", call,
                f"take `values = list({label}(...))` before the loop if the generator "
                f"should see `{touched}` as it is there, or compute the values in the loop")

    def touched(self, region, names: set, rebound: bool = True) -> str | None:
        """A name of `names` that the statements or expressions `region` may change: stored
        or deleted (`rebound`: a closure's name), written into (an item, an attribute, an
        `out=`, a method that changes it in place), or handed to a function of the user's
        (which may write into it); else None."""
        if not names:
            return None
        for n in (x for r in region for x in gast.walk(r)):
            if isinstance(n, gast.Name) and n.id in names and rebound and \
                    isinstance(n.ctx, (gast.Store, gast.Del)):
                return n.id
            if isinstance(n, (gast.Subscript, gast.Attribute)) and \
                    isinstance(n.ctx, (gast.Store, gast.Del)) and _root(n) in names:
                return _root(n)
            if isinstance(n, gast.AugAssign) and _root(n.target) in names:
                return _root(n.target)
            if isinstance(n, gast.Call):
                if isinstance(n.func, gast.Attribute) and _root(n.func.value) in names and \
                        n.func.attr in _IN_PLACE:
                    return _root(n.func.value)
                for k in n.keywords:
                    if k.arg == "out" and any(_root(x) in names for x in gast.walk(k.value)
                                              if isinstance(x, gast.Name)):
                        return next(_root(x) for x in gast.walk(k.value)
                                    if isinstance(x, gast.Name) and _root(x) in names)
                if not rebound:
                    continue
                held = self.resolve(n.func)
                if (callable(held) and is_user_object(held)) or (  # (it may write into it)
                        isinstance(n.func, gast.Name) and (n.func.id in self.locals or
                                                           n.func.id in self.defs)):
                    for a in [*n.args, *(k.value for k in n.keywords)]:
                        root = _root(a.value if isinstance(a, gast.Starred) else a)
                        if root in names:
                            return root
        return None

    def nditer_loop(self, s):
        """``for v in np.nditer(x)`` (read-only; ``order=``, the flags that change no item)
        as the loop over the items it gives: ``x_array = np.asarray(x); for i in
        nditer_indices(x_array.shape, x_array.strides, x_array.dtype.itemsize, order): v =
        x_array[i]; body`` -- the same items in the same order (its memory order for 'K',
        runtime_python.nditer_indices), each read by an index, so its derivative flows. A
        write through the iterator (``op_flags=["readwrite"]``) is refused; several operands,
        other flags, or an iterator held in a name are left as written (refused where a
        gradient needs them)."""
        call = s.iter
        if len(call.args) != 1 or isinstance(call.args[0], (gast.List, gast.Tuple,
                                                             gast.Starred)):
            return None
        order, zerosize_ok = "K", False
        for k in call.keywords:
            value = k.value
            if k.arg == "order" and isinstance(value, gast.Constant) and \
                    value.value in ("K", "C", "F", "A"):
                order = value.value
                continue
            words = [x.value for x in value.elts] if isinstance(
                value, (gast.List, gast.Tuple)) and all(
                isinstance(x, gast.Constant) and type(x.value) is str
                for x in value.elts) else None
            if k.arg == "op_flags" and words is not None and \
                    any(w in ("readwrite", "writeonly") for w in words):
                raise self.error(
                    "`np.nditer` writing through the iterator (op_flags=['readwrite'])", s,
                    "write into the array by index: `for i in np.ndindex(x.shape): x[i] = "
                    "...` (srcad follows the writes there)")
            if k.arg == "op_flags" and words is not None and \
                    set(words) <= {"readonly", "copy", "updateifcopy", "no_broadcast",
                                   "contig", "aligned", "nbo"}:
                continue
            if k.arg == "flags" and words is not None and \
                    set(words) <= {"refs_ok", "zerosize_ok", "buffered", "delay_bufalloc",
                                   "copy_if_overlap", "reduce_ok"}:
                zerosize_ok = zerosize_ok or "zerosize_ok" in words
                continue
            return None
        if _starred(s.target):
            return None
        arr = self.fresh(f"{s.target.id}_array" if isinstance(s.target, gast.Name)
                         else "nditer_array")
        index = self.fresh(f"{s.target.id}_index" if isinstance(s.target, gast.Name)
                           else "nditer_index")
        asarray = gast.Attribute(value=_name(self.helper("numpy")), attr="asarray",
                                 ctx=gast.Load())  # (numpy as each mode shows it)
        first = _assign(arr, _call(asarray, call.args[0]), s)

        def attr(name):
            return gast.Attribute(value=_name(arr), attr=name, ctx=gast.Load())

        itemsize = gast.Attribute(value=attr("dtype"), attr="itemsize", ctx=gast.Load())
        indices = _call(_name(self.helper("nditer_indices")), attr("shape"), attr("strides"),
                        itemsize, gast.Constant(value=order, kind=None),
                        gast.Constant(value=zerosize_ok, kind=None))
        item = gast.Subscript(value=_name(arr), slice=_name(index), ctx=gast.Load())
        body = [gast.copy_location(gast.Assign(targets=[s.target], value=item,
                                               type_comment=None), s)] + s.body
        loop = gast.copy_location(gast.For(target=_name(index, gast.Store()), iter=indices,
                                           body=body, orelse=s.orelse, type_comment=None), s)
        gast.fix_missing_locations(loop)
        return [first, loop]

    def loop_over_generator(self, s) -> list:
        """``for v in (f(k) for k in ks if c): body`` is the loop Python runs: ``for k in ks:
        if c: v = f(k); body`` -- the generator steps between the body's runs, so a body
        that changes what it reads is seen, as in Python (the generator's names made
        fresh: they do not leak). Several ``for`` clauses nest; a `break` (or an `else`) of
        the body then belongs to the outer loop, refused."""
        g = s.iter
        if len(g.generators) > 1 and (_own_breaks(s.body) or s.orelse):
            raise self.error(
                "`break` or `else` in a loop over a generator expression of several `for` "
                "clauses", s, "write the nested loops, or take `list(...)` of the generator "
                "first")
        renames: dict = {}
        for comp in g.generators:
            for n in gast.walk(comp.target):
                if isinstance(n, gast.Name) and n.id not in renames:
                    renames[n.id] = self.fresh(n.id)
        parts = [g.elt] + [x for comp in g.generators for x in [comp.target] + comp.ifs] + \
            [comp.iter for comp in g.generators[1:]]
        for part in parts:
            for n in gast.walk(part):
                if isinstance(n, gast.Name) and n.id in renames:
                    n.id = renames[n.id]
        body = [gast.copy_location(gast.Assign(targets=[s.target], value=g.elt,
                                               type_comment=None), s)] + s.body
        for comp in reversed(g.generators):
            for cond in reversed(comp.ifs):
                body = [gast.copy_location(gast.If(test=cond, body=body, orelse=[]), s)]
            body = [gast.copy_location(gast.For(target=comp.target, iter=comp.iter,
                                                body=body, orelse=[], type_comment=None), s)]
        body[0].orelse = s.orelse
        gast.fix_missing_locations(body[0])
        return body

    def lazy_values_kept(self, s) -> None:
        """A generator expression inside a loop's header (``zip(xs, (x * a for x in xs))``,
        ``enumerate(...)``) runs whole before the loop: refused where the loop's body changes
        a name it reads (Python would step it between the body's runs)."""
        for g in (n for n in gast.walk(s.iter) if isinstance(n, gast.GeneratorExp)):
            touched = self.touched(s.body + s.orelse, _free_names(g) & self.locals)
            if touched:
                raise self.error(
                    f"the loop changes `{touched}`, which the generator expression in its "
                    f"header reads: Python runs the generator a step at a time between the "
                    f"loop's iterations, srcad runs it whole before the loop", s,
                    f"take `list(...)` of the generator before the loop if it should see "
                    f"`{touched}` as it is there, or compute the values in the loop")

    # -- with ------------------------------------------------------------------------------------
    def with_block(self, s) -> list:
        if not s.items:  # pragma: no cover - (Python's grammar needs one)
            return s.body
        item, rest = s.items[0], s.items[1:]
        body = s.body
        if rest:
            inner = gast.copy_location(gast.With(items=rest, body=body, type_comment=None), s)
            body = self.with_block(inner)
        cm = item.context_expr
        made = self.resolve(cm.func) if isinstance(cm, gast.Call) else self.resolve(cm)
        spliced = self.spliced_context(cm, made, item.optional_vars, body, s)
        if spliced is not None:
            return spliced
        if made is contextlib.suppress:
            raise self.error("`with contextlib.suppress(...)` in a differentiated function "
                             "(it is a try/except)", s,
                             "write the try/except it stands for, or call the code that may "
                             "raise outside the differentiated function")
        changed = _shared_state_changed(made)
        if changed is not None:
            raise self.error(
                f"this `with` block's context manager changes `{changed}` as it enters or "
                f"leaves (`{type(made).__name__ if not isinstance(made, type) else made.__name__}"
                f".__enter__` / `__exit__`), code srcad runs as written: srcad reads such a "
                f"global or class attribute as it stood when the call began, so the block "
                f"would not see the change", s,
                "set it in the function itself (`CFG.training = False` ... then back), which "
                "srcad follows, or outside the differentiated function")
        handle = self.fresh(f"context_L{s.lineno}")
        state = made in _STATE or made is contextlib.nullcontext
        out = [_assign(handle, _call(self.helper("enter_state" if state else "enter_context"),
                                     cm), s)]
        out[0].srcad_enter = handle
        if item.optional_vars is not None:
            target = item.optional_vars
            out.append(_assign(target, _call(self.helper("context_value"), _name(handle)), s))
            if _starred(target):
                out[-1:] = self.starred(target, out[-1].value, s)
        out.extend(self.settings_as_values(body) if made in _STATE else body)
        exit_ = _assign(self.fresh(f"{handle}_exit"),
                        _call(self.helper("exit_state" if state else "exit_context"),
                              _name(handle)), s)
        exit_.srcad_exit = handle
        out.append(exit_)
        return out

    def spliced_context(self, cm, made, target, body, s) -> list | None:
        """``with evaluating(model) as m: body`` of a user's ``@contextlib.contextmanager``
        generator of this module with one ``yield`` (at its top level, or in the body of a
        top-level ``try: ... finally: ...``): the generator's code written where the block is
        -- its parameters bound to the call's arguments under names of their own, the code
        before the yield, ``m = <the value yielded>``, the block, the code after it (the
        ``finally`` block's too) -- so that what it changes on objects (``model.training =
        False``, then back) is followed like the block's own code. Where the block raises,
        the call stops there (generated code has no `finally`: the code after the yield does
        not run, which only an object outliving the call could show). A generator of another
        form is left to `enter_context` (run as written). None there."""
        gen = getattr(made, "__wrapped__", None)
        if not (isinstance(cm, gast.Call) and isinstance(made, types.FunctionType) and
                inspect.isgeneratorfunction(gen) and
                made.__code__.co_filename == contextlib.__file__ and
                gen.__globals__ is self.pf.fn.__globals__ and not gen.__code__.co_freevars
                and not any(isinstance(a, gast.Starred) for a in cm.args) and
                all(k.arg is not None for k in cm.keywords)):
            return None
        jumps = [n for st in body for n in _own_jumps(st)]
        try:
            tree = parse_function(gen).tree
            bound = inspect.signature(gen).bind(*cm.args, **{k.arg: k.value
                                                              for k in cm.keywords})
        except Exception:  # noqa: BLE001  (no source, a call Python refuses: as written)
            return None
        gbody = [st for st in tree.body if not (isinstance(st, gast.Expr) and isinstance(
            st.value, gast.Constant) and isinstance(st.value.value, str))]
        if jumps or any(isinstance(n, (gast.Return, gast.YieldFrom, gast.FunctionDef,
                                       gast.Lambda, gast.ClassDef, gast.Global, gast.Nonlocal,
                                       gast.Await))
                        for st in gbody for n in gast.walk(st)) or \
                sum(isinstance(n, gast.Yield) for st in gbody for n in gast.walk(st)) != 1:
            return None
        at = next(i for i, st in enumerate(gbody) if any(isinstance(n, gast.Yield)
                                                          for n in gast.walk(st)))
        held = gbody[at]
        if isinstance(held, gast.Try) and not held.handlers and not held.orelse:
            inner = next((i for i, st in enumerate(held.body) if isinstance(st, gast.Expr)
                          and isinstance(st.value, gast.Yield)), None)
            if inner is None:
                return None
            before, yielded, after = held.body[:inner], held.body[inner].value, \
                held.body[inner + 1:]
        elif isinstance(held, gast.Expr) and isinstance(held.value, gast.Yield):
            before, yielded, after = [], held.value, []
        else:
            return None
        params = [p.id for p in tree.args.args]
        own = set(params) | {n.id for st in gbody for n in gast.walk(st)
                             if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        names = {n: self.fresh(f"{n}_{gen.__name__}") for n in sorted(own)}
        self.locals |= set(names.values())
        out = []
        for p in params:  # (the call's arguments, in order, then literal defaults)
            if p in bound.arguments:
                value = copy.deepcopy(bound.arguments[p])
            else:
                d = inspect.signature(gen).parameters[p].default
                if d is inspect.Parameter.empty or not (d is None or
                                                        type(d) in (bool, int, float, str)):
                    return None
                value = gast.Constant(d, None)
            out.append(_assign(names[p], value, s))

        def mine(stmts):
            return self.block([_RenameNames(names).visit(copy.deepcopy(x)) for x in stmts])

        got = gast.Constant(None, None) if yielded.value is None else \
            _RenameNames(names).visit(copy.deepcopy(yielded.value))
        middle = mine(before) + ([_assign(target, got, s)] if target is not None else []) + \
            body + mine(after)
        out += mine(gbody[:at]) + middle
        if isinstance(held, gast.Try):  # (the block ends normally: then the finally block.
            out += mine(held.finalbody)  # A raise inside stops the differentiated call, as
            # it does in generated code -- the one difference from Python's `finally`)
        return out + mine(gbody[at + 1:])

    def settings_as_values(self, body) -> list:
        """``warnings.simplefilter("ignore")`` (and `filterwarnings`, `np.seterr`) in a block
        of a state context: a value (``setting_L5 = context_setting(warnings.simplefilter,
        "ignore")``), not a call made for its effect, so that the shape probe runs it too,
        inside the block as the real call does (the probe skips effects: interpret.py)."""
        out = []
        for st in body:
            if isinstance(st, gast.Expr) and isinstance(st.value, gast.Call) and \
                    self.resolve(st.value.func) in _SETTINGS:
                call = st.value
                key = runtime_context.SETTINGS_BY_FN[self.resolve(call.func)]
                call.args = [gast.Constant(key, None)] + call.args
                call.func = _name(self.helper("context_setting"))
                st = _assign(self.fresh(f"setting_L{st.lineno}"), call, st)
            for field in ("body", "orelse"):
                if isinstance(getattr(st, field, None), list):
                    setattr(st, field, self.settings_as_values(getattr(st, field)))
            out.append(st)
        return out

    # -- for/while ... else ----------------------------------------------------------------------
    def loop_else(self, s) -> list:
        orelse, s.orelse = s.orelse, []
        breaks = _own_breaks(s.body)
        if not breaks:
            return [s] + orelse
        flag = self.fresh(f"no_break_L{s.lineno}")
        for parent, field, index in reversed(breaks):
            stmts = getattr(parent, field) if parent is not None else s.body
            brk = stmts[index]
            stmts.insert(index, _assign(flag, gast.Constant(False, None), brk))
        init = _assign(flag, gast.Constant(True, None), s)
        guard = gast.copy_location(gast.If(test=_name(flag), body=orelse, orelse=[]), s)
        return [init, s, guard]

    # -- starred targets -------------------------------------------------------------------------
    def starred(self, target, value, node) -> list:
        """`a, *rest, b = value` (see the module docstring)."""
        elts = target.elts
        star = next(i for i, t in enumerate(elts) if isinstance(t, gast.Starred))
        if sum(isinstance(t, gast.Starred) for t in elts) > 1:
            raise self.error("two starred names in one assignment", node,
                             "Python refuses it too: keep one `*name`")
        items = self.fresh("items")
        out = [_assign(items, _call("list", value), node)]
        after = len(elts) - star - 1
        need = len(elts) - 1
        length = _call("len", _name(items))
        check = gast.If(test=gast.Compare(left=copy.deepcopy(length), ops=[gast.Lt()],
                                          comparators=[gast.Constant(need, None)]),
                        body=[gast.Raise(exc=_call("ValueError", gast.Constant(
                            f"not enough values to unpack (expected at least {need})", None)),
                            cause=None)], orelse=[])
        known = isinstance(value, (gast.List, gast.Tuple)) and not any(
            isinstance(v, gast.Starred) for v in value.elts)
        if not known or len(value.elts) < need:  # (a display's length is known: no test)
            out.append(gast.copy_location(check, node))
        for i, t in enumerate(elts):
            if i < star:
                index = gast.Constant(i, None)
            elif i > star:
                index = gast.Constant(i - len(elts), None)
            else:
                t = t.value
                if isinstance(t, gast.Name) and t.id == "_":
                    continue
                upper = None if after == 0 else gast.BinOp(
                    left=copy.deepcopy(length), op=gast.Sub(), right=gast.Constant(after, None))
                index = gast.Slice(gast.Constant(star, None) if star else None, upper, None)
            item = gast.Subscript(value=_name(items), slice=index, ctx=gast.Load())
            if isinstance(t, (gast.Tuple, gast.List)) and _starred(t):
                out.extend(self.starred(t, item, node))
            else:
                out.append(_assign(t, item, node))
        for st in out:
            gast.copy_location(st, node)
        return out


def _plain_place(e) -> bool:
    """A name, an attribute of one or an item by a constant or a name: read twice, the
    same value (nothing runs between the reads)."""
    while isinstance(e, (gast.Attribute, gast.Subscript)):
        if isinstance(e, gast.Subscript) and not isinstance(e.slice, (gast.Constant,
                                                                      gast.Name)):
            return False
        e = e.value
    return isinstance(e, (gast.Name, gast.Constant))


def _fixed_displays(fdef) -> dict:
    """Local names bound once, to a list or tuple display, and read only by index or as a
    star-argument (nothing can change how many items they hold) -> that number."""
    stores: dict = {}
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
    found = {}
    for n in gast.walk(fdef):
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and \
                isinstance(n.targets[0], gast.Name) and stores.get(n.targets[0].id) == 1 and \
                isinstance(n.value, (gast.List, gast.Tuple)) and \
                not any(isinstance(x, gast.Starred) for x in n.value.elts):
            found[n.targets[0].id] = len(n.value.elts)
    if not found:
        return found
    for parent in gast.walk(fdef):
        for child in gast.iter_child_nodes(parent):
            if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load) and \
                    child.id in found and not isinstance(parent, gast.Starred) and not (
                        isinstance(parent, gast.Subscript) and parent.value is child):
                del found[child.id]
    return found


def consumed_whole(fn):
    """A user generator function as srcad normalises it (`generator`): a function returning
    the list of its values. Generated code calls this where no gradient flows through the
    call (it runs the user's function as written there), so a loop over it indexes a list."""

    @functools.wraps(fn)
    def values(*args, **kwargs):
        return list(fn(*args, **kwargs))

    return values


def _source_tree(fn):
    try:
        return gast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return gast.Module(body=[], type_ignores=[])


def _has_effects(node) -> bool:
    """A call made for its effect (print, a method on an object) or a write to an attribute:
    what another piece of code could see the order of."""
    if isinstance(node, list):
        return any(_has_effects(n) for n in node)
    for n in gast.walk(node):
        if isinstance(n, gast.Expr) and isinstance(n.value, gast.Call):
            return True
        if isinstance(n, (gast.Global, gast.Nonlocal)):
            return True
        if isinstance(n, (gast.Assign, gast.AugAssign)):
            targets = n.targets if isinstance(n, gast.Assign) else [n.target]
            if any(isinstance(t, gast.Attribute) for t in targets):
                return True
    return False


def _evaluated_maybe_or_often(stmt, node) -> bool:
    """Is `node` (inside the simple statement `stmt`) evaluated only on some paths or more
    than once per run of the statement: under `and` / `or` / `x if c else y`, in a
    comprehension, a generator expression or a lambda?"""
    parents = {id(c): n for n in gast.walk(stmt) for c in gast.iter_child_nodes(n)}
    n = parents.get(id(node))
    while n is not None:
        if isinstance(n, (gast.BoolOp, gast.IfExp, gast.ListComp, gast.SetComp,
                          gast.DictComp, gast.GeneratorExp, gast.Lambda)):
            return True
        n = parents.get(id(n))
    return False


def _own_yields(fdef) -> list:
    """The `yield` / `yield from` expressions of `fdef` itself (not of functions or lambdas
    nested in it)."""
    found, stack = [], list(fdef.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda,
                          gast.ClassDef)):
            continue
        if isinstance(n, (gast.Yield, gast.YieldFrom)):
            found.append(n)
        stack.extend(gast.iter_child_nodes(n))
    return found


def _free_names(node) -> set:
    """The names `node` (a function, a lambda, a generator expression) reads that it does not
    bind itself: its enclosing function's (or the module's)."""
    loads, bound = set(), set()
    for n in gast.walk(node):
        if isinstance(n, gast.Name):
            (bound if isinstance(n.ctx, (gast.Store, gast.Param, gast.Del)) else loads).add(n.id)
    return loads - bound


def _root(e) -> str | None:
    """The name an attribute / item chain starts at (`a` of `a.b[0].c`), else None."""
    while isinstance(e, (gast.Attribute, gast.Subscript)):
        e = e.value
    return e.id if isinstance(e, gast.Name) else None


def _leaves_early(body) -> bool:
    """Does a `for` body leave its loop (break, return) before the iterator ends?"""
    for n in gast.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(n, (gast.Break, gast.Return)):
            return True
    return False


def _may_not_end(node) -> bool:
    return any(isinstance(n, gast.While) for n in gast.walk(node))


def _lambdas_unpacked(s):
    """`net, loss = lambda X: f(X, w), sq`: a display holding a lambda unpacked into names,
    as one assignment per name (`net = lambda ...; loss = sq`) -- the same where no item reads
    a name the statement binds -- so that each lambda is lifted as one bound to a name is. Else
    None."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
            isinstance(s.targets[0], (gast.Tuple, gast.List)) and
            isinstance(s.value, (gast.Tuple, gast.List)) and
            len(s.targets[0].elts) == len(s.value.elts) and
            all(isinstance(t, gast.Name) for t in s.targets[0].elts) and
            any(isinstance(v, gast.Lambda) for v in s.value.elts)):
        return None
    names = {t.id for t in s.targets[0].elts}
    if len(names) < len(s.targets[0].elts) or any(
            isinstance(n, gast.Name) and n.id in names
            for v in s.value.elts for n in gast.walk(v)):
        return None
    return [gast.copy_location(gast.Assign(targets=[t], value=v, type_comment=None), s)
            for t, v in zip(s.targets[0].elts, s.value.elts)]


def _items_stored(s) -> bool:
    """Is `s` an unpacking into targets some of which are subscripts or attributes (`y[i],
    y[j] = y[j], y[i]`, `y[i], s = step(y[i + 1], s)`)?"""
    t, v = s.targets[0], s.value
    if not isinstance(t, (gast.Tuple, gast.List)) or any(
            isinstance(x, gast.Starred) for x in t.elts) or not any(
            isinstance(x, (gast.Subscript, gast.Attribute)) for x in t.elts):
        return False
    return not isinstance(v, (gast.Tuple, gast.List)) or (
        len(t.elts) == len(v.elts) and not any(isinstance(x, gast.Starred) for x in v.elts))


def _starred(target) -> bool:
    return isinstance(target, (gast.Tuple, gast.List)) and any(
        isinstance(t, gast.Starred) or _starred(t) for t in target.elts)


def _own_breaks(body) -> list:
    """(parent statement or None for the loop body, field, index) of each `break` of this loop
    (not of a nested loop), in order."""
    found = []

    def walk(stmts, parent, field):
        for i, st in enumerate(stmts):
            if isinstance(st, gast.Break):
                found.append((parent, field, i))
            elif isinstance(st, (gast.For, gast.While, gast.FunctionDef, gast.ClassDef)):
                continue
            else:
                for f in ("body", "orelse", "finalbody"):
                    if isinstance(getattr(st, f, None), list):
                        walk(getattr(st, f), st, f)
                for h in getattr(st, "handlers", None) or []:
                    walk(h.body, h, "body")

    walk(body, None, "body")
    return found


def mark_context_edges(fn, claim) -> None:
    """The normalised calls of `enter_context` / `exit_context` (this function's `with`
    blocks, or generated code's, transformed again): each op names the helper the backward
    calls at that edge -- `leave_context` where the forward entered, `reenter_context` where it
    left (srcad/transform/reverse.py), injected under `claim`'s name."""
    rc = runtime_context
    leave, reenter = ("leave_context", rc.leave_context), ("reenter_context", rc.reenter_context)
    back = {rc.enter_context: leave, rc.enter_state: leave, rc.exit_context: reenter,
            rc.exit_state: reenter}
    for s in ir.walk(fn.body):
        callee = s.args.get("_fn") if isinstance(s, ir.Call) and is_opaque(s.op) else None
        fn_ = _hashable(callee.value) if isinstance(callee, ir.Const) else None
        if fn_ in back:
            spelled, helper = back[fn_]
            s.op.context_back = claim(spelled, helper)
            s.op.context_entry = fn_ in (rc.enter_context, rc.enter_state)
        # (a recomputation -- a checkpointed region -- may enter numpy's error state or the
        # warning filters again: srcad/transform/checkpointing.py)
        s_op = s.op if fn_ in (rc.enter_state, rc.exit_state, rc.context_setting) else None
        if s_op is not None:
            s_op.recomputable = True


def _hashable(v):
    try:
        hash(v)
    except TypeError:
        return None
    return v


def _chained_name(targets, taken: set) -> str:
    names = [t.id for t in targets if isinstance(t, gast.Name)]
    return fresh("_".join(names[:3]) if names else "value", taken)


def lower_forms(pf, taken: set) -> None:
    """Rewrite `pf.tree` in place (see the module docstring)."""
    forms = _Forms(pf, taken)
    if inspect.isgeneratorfunction(getattr(pf, "fn", None)):
        forms.generator(pf.tree)
    forms.run(pf.tree)


# methods that change their object in place (what a generator reading it would see)
_IN_PLACE = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort",
                       "reverse", "update", "setdefault", "popitem", "add", "discard", "fill",
                       "resize", "put", "itemset", "__setitem__", "__delitem__", "__iadd__",
                       "__isub__", "__imul__", "__itruediv__", "partition", "byteswap"})
# generator functions whose every call a caller consumes whole (`_Forms.generator_calls`)
_CONSUMED: set = set()
# consumers that may stop before a generator's end
_EARLY = Members({zip, any, all})


class _RenameNames(gast.NodeTransformer):
    """Each name of `names` (the generator's own: parameters and what it assigns) renamed."""

    def __init__(self, names: dict):
        self.names = names

    def visit_Name(self, node):
        node.id = self.names.get(node.id, node.id)
        return node


def _shared_state_changed(made) -> str | None:
    """What a user's context manager class (or instance) changes beyond its own object as it
    enters or leaves -- an attribute of a module, a class or another object (`CFG.training =
    False`, `self.model.training = False`) or a global (`global MODE`) -- spelt as its
    `__enter__` / `__exit__` write it; None for a manager that keeps to its own attributes
    (a timer, a profiler logging through methods). srcad runs those methods as written and
    reads globals and attributes as they stood when the call began: a block reading the
    changed value would see the old one (a wrong value and gradient, silently, before the
    session of 2026-12-07, twelfth)."""
    cls = made if isinstance(made, type) else type(made)
    if not is_user_object(cls) or made in _STATE:
        return None
    for name in ("__enter__", "__exit__"):
        fn = inspect.getattr_static(cls, name, None)
        if not isinstance(fn, types.FunctionType):
            continue
        tree = next(iter(_source_tree(fn).body), None)
        if not isinstance(tree, gast.FunctionDef):
            continue
        me = tree.args.args[0].id if tree.args.args else None
        for n in gast.walk(tree):
            if isinstance(n, gast.Global):
                return n.names[0]
            if isinstance(n, gast.Attribute) and isinstance(n.ctx, (gast.Store, gast.Del)) \
                    and not (isinstance(n.value, gast.Name) and n.value.id == me):
                base = n.value
                spelled = [n.attr]
                while isinstance(base, gast.Attribute):
                    spelled.append(base.attr)
                    base = base.value
                if isinstance(base, gast.Name):
                    spelled.append(base.id)
                return ".".join(reversed(spelled))
    return None


def _own_jumps(st) -> list:
    """`return`, and `break` / `continue` not of a loop inside `st`: jumps out of a block."""
    if isinstance(st, (gast.Return,)):
        return [st]
    if isinstance(st, (gast.Break, gast.Continue)):
        return [st]
    if isinstance(st, (gast.For, gast.While)):
        return [n for x in st.body + st.orelse for n in gast.walk(x) if isinstance(n, gast.Return)]
    if isinstance(st, (gast.FunctionDef, gast.ClassDef)):
        return []
    return [n for f in ("body", "orelse", "finalbody", "handlers") for x in getattr(st, f, [])
            for n in _own_jumps(x)]
