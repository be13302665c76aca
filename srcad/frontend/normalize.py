"""Normalize: desugar the user's function into A-normal form (srcad/ir.py).

Input: a fenced `ParsedFunction`. Output: an `ir.Function` whose body is a list of
`Call` statements, each one op of the op table applied to atoms, ending in one `Return`.

Grammar of the output:
    stmt   := Call(target, op, {param: atom}) | UserCall | Effect(kind, op, {param: atom})
            | If | For | While | Return(atom)
    atom   := Var | Const | Seq(atom*) | Index(part*)
Before this pass, closures.py lifts nested defs and lambdas and pylower.py lowers
comprehensions, sum/min/max and lst.append to loops; calls are bound by calls.py (a call
with no row is an opaque op, opaque.py), print/assert/raise become `Effect`s (effects.py),
and calls to lifted functions are spliced in (inline.py).
Desugaring: nested expressions are hoisted into temporaries named after the assignment
they came from (``h = np.tanh(x @ W + b)`` gives ``h_matmul``, ``h_add``, ``h``); method
calls and attributes (``x.sum(axis=1)``, ``x.T``, ``x.reshape(n, -1)``) become op calls;
``x += y`` becomes ``x = x + y``; tuple unpacking becomes indexing; plain copies
(``y = x``) are propagated away. Every name is assigned once: a name the user reassigns
keeps its name at its last definition, and earlier values are renamed after the line
that made them (``h_L12``). Calls are bound to the op's parameters, so ``np.sum(x, 1)``
and ``x.sum(axis=1)`` both become ``sum(a=x, axis=1)``.

Before/after:
    h = np.tanh(x @ W + b)          h_matmul = x @ W
                                     h_add = h_matmul + b
                                     h = np.tanh(h_add)
"""

from __future__ import annotations

import inspect
import operator
import types
from collections import Counter

import gast
import numpy as np

from .. import ir, runtime
from ..checkpoint import check_schedule, checkpoint
from ..errors import NoRuleError, UnsupportedSyntaxError
from ..naming import fresh
from ..ops import control, runtime_ops, table
from .aliasing import AliasingMixin
from .calls import _RETURN, CallsMixin
from .closures import lift_closures
from .desugar import desugar
from .effects import EffectsMixin, check_lost_changes
from .fence import fence
from .inline import InlineMixin
from .methods import _BUILTIN_OPS, ATTRIBUTES, METHODS, RESERVED  # noqa: F401  (re-exported)
from .opaque import library_file, opaque_attribute
from .parse import LIFTED, UNRESOLVED, ParsedFunction, parse_function
from .pylower import lower_python

_BINOPS = {
    gast.Add: np.add,
    gast.Sub: np.subtract,
    gast.Mult: np.multiply,
    gast.Div: np.true_divide,
    gast.Pow: np.power,
    gast.MatMult: np.matmul,
    gast.FloorDiv: operator.floordiv,
    gast.Mod: operator.mod,
    gast.BitAnd: np.bitwise_and,
    gast.BitOr: np.bitwise_or,
}
_CMPOPS = {
    gast.Lt: np.less,
    gast.LtE: np.less_equal,
    gast.Gt: np.greater,
    gast.GtE: np.greater_equal,
    gast.Eq: np.equal,
    gast.NotEq: np.not_equal,
}
PY_BINARY = {"add", "subtract", "multiply", "divide", "power", "matmul", "floordiv", "mod",
             "bitwise_and", "bitwise_or"}  # the rows of _BINOPS
def _const_src(value, fallback_name: str | None) -> str | None:
    """How generated code spells a constant, or None to inject it under a name."""
    if isinstance(value, float) and value != value:
        return "np.nan"  # (repr gives `nan` and `inf`, which generated code cannot read)
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "np.inf" if value > 0 else "-np.inf"
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if value is Ellipsis:
        return "..."
    if isinstance(value, type) and getattr(np, value.__name__, None) is value:
        return f"np.{value.__name__}"
    if isinstance(value, tuple) and all(isinstance(v, (int, float, bool)) for v in value):
        return repr(value)
    return None


class Normalizer(CallsMixin, EffectsMixin, InlineMixin, AliasingMixin):
    def __init__(self, pf: ParsedFunction):
        self.pf = pf
        self.body: list = []
        self.inject: dict = {}
        self.locals = set(pf.params)
        for node in gast.walk(pf.tree):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.locals.add(node.id)
        # free names the body reads (globals, closure cells) are taken too, so a temporary
        # never shadows a global the generated code refers to by the same name
        free = {node.id for node in gast.walk(pf.tree)
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load)}
        self.taken = set(self.locals) | free | RESERVED
        # which user names are assigned more than once, and where
        self.defs = Counter()
        for node in gast.walk(pf.tree):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.defs[node.id] += 1
            # x[i] = v and x[i] += v give x a new value too (copy on write)
            targets = node.targets if isinstance(node, gast.Assign) else (
                [node.target] if isinstance(node, gast.AugAssign) else [])
            for t in targets:
                if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                    self.defs[t.value.id] += 1
        self.seen_defs = Counter()
        self.mutations: list = []  # (statement, IR name written into, line): see setitem
        self.views: dict = {}  # straight-line name -> (base name, index) of a basic view
        self.propagations: set = set()  # ids of the statements that carry a write to a base
        self.shared: list = []  # (base, view) IR names a carried write left sharing memory
        self.alias_stmts: set = set()  # ids of `z = y` copies into loop names (one array)
        # code srcad generated, transformed again (higher order): it adds in place only into
        # buffers it owns, so its `d += g` is not numpy's write into a shared array
        self.generated = str(pf.filename).startswith("<srcad-generated")
        # names assigned inside a loop or a branch keep one name for all their values
        self.mutable: set[str] = set()
        for node in gast.walk(pf.tree):
            if isinstance(node, (gast.If, gast.For, gast.While)):
                if isinstance(node, gast.For) and isinstance(node.target, gast.Name):
                    self.mutable.add(node.target.id)
                for inner in node.body + node.orelse:
                    for n in gast.walk(inner):
                        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                            self.mutable.add(n.id)
                        if isinstance(n, (gast.Assign, gast.AugAssign)):
                            for t in (n.targets if isinstance(n, gast.Assign) else [n.target]):
                                if isinstance(t, gast.Subscript) and isinstance(t.value,
                                                                                gast.Name):
                                    self.mutable.add(t.value.id)
        self.mutable |= self.view_families_in_control_flow()
        self.ints: set = set()  # names that certainly hold Python ints (see note_int)
        self.shapes: set = set()  # names that hold an array's shape
        self.env: dict[str, ir.Var | ir.Const] = {p: ir.Var(p) for p in pf.params}
        for name, obj in pf.constants.items():  # `self` of a bound method: an object
            self.locals.add(name)
            self.taken.add(name)
            self.env[name] = ir.Const(obj, name)
            self.inject[name] = obj
        self.line = pf.first_line

    # -- names -------------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        return fresh(base.strip("_") or "t", self.taken)

    def def_name(self, user: str, line: int) -> str:
        """The IR name for this definition of the user's variable `user`."""
        self.seen_defs[user] += 1
        if user in self.mutable:
            return user
        last = self.seen_defs[user] == self.defs[user]
        if user not in self.pf.params and (last or self.defs[user] == 1):
            return user
        return self.fresh(f"{user}_L{line}")

    # -- errors ------------------------------------------------------------------------------
    def unsupported(self, what: str, node, hint: str | None = None):
        return self.pf.error(what, node, hint=hint, cls=UnsupportedSyntaxError)

    # -- statements --------------------------------------------------------------------------
    def run(self) -> ir.Function:
        for stmt in self.pf.tree.body:
            self.line = stmt.lineno
            self.statement(stmt)
        if not self.body or not isinstance(self.body[-1], ir.Return):
            raise self.pf.error(
                f"{self.pf.name} does not end with a `return` of its result",
                self.pf.tree,
                hint="return the value to differentiate",
                cls=UnsupportedSyntaxError,
            )
        self.check_mutations()
        self.snapshot_tests(self.body)
        lines = {n: self.pf.line(n) for n in range(self.pf.first_line, self.pf.last_line + 1)}
        fn = ir.Function(
            name=self.pf.name,
            params=list(self.pf.params),
            body=self.body,
            filename=self.pf.filename,
            first_line=self.pf.first_line,
            last_line=self.pf.last_line,
            inject=self.inject,
            names=self.taken,
            source_lines=lines,
            mutable=set(self.mutable),
        )
        fn.changes = check_lost_changes(fn)
        return fn

    def statement(self, s):
        if isinstance(s, gast.Return):
            if s.value is None:
                raise self.unsupported("`return` without a value", s, "return the result")
            atom = self.expr(s.value, self.pf.name, into=_RETURN)
            self.body.append(ir.Return(atom, s.lineno))
        elif isinstance(s, (gast.Assign, gast.AnnAssign)):
            targets = s.targets if isinstance(s, gast.Assign) else [s.target]
            if s.value is None:
                return
            if len(targets) != 1:
                raise self.unsupported("chained assignment (a = b = ...)", s,
                                       "assign one name per statement")
            self.assign(targets[0], s.value, s)
        elif isinstance(s, gast.AugAssign):
            if isinstance(s.target, gast.Subscript):
                # x[i] += v  is  x[i] = x[i] + v
                load = gast.Subscript(value=s.target.value, slice=s.target.slice,
                                      ctx=gast.Load())
                value = gast.copy_location(gast.BinOp(left=gast.copy_location(load, s),
                                                      op=s.op, right=s.value), s)
                self.assign(s.target, value, s)
                return
            if not isinstance(s.target, gast.Name):
                raise self.unsupported("augmented assignment to an attribute", s,
                                       "assign the new value to a name")
            value = gast.BinOp(left=gast.Name(s.target.id, gast.Load(), None, None), op=s.op,
                               right=s.value)
            gast.copy_location(value, s)
            before = self.env.get(s.target.id)
            kept = {k: v for k, v in self.views.items() if s.target.id in (k, v[0])}
            start = len(self.body)
            self.assign(s.target, value, s)
            self.mark_inplace(self.body[start:], self.env.get(s.target.id))
            self.views.update(kept)  # `r += 1` on a view writes into its base in numpy
            # numpy would write into that array in place (srcad's own code, transformed again,
            # adds in place only into buffers it owns: not a write anything else can see)
            if isinstance(before, ir.Var) and not self.generated:
                stmt = self.body[-1]
                after = self.env.get(s.target.id)
                rebuilt = {s.target.id}
                aliased = any(n != s.target.id and a == before for n, a in self.env.items())
                if isinstance(after, ir.Var) and (kept or aliased):
                    rebuilt = self.propagate_write(s.target.id, before, after, s,
                                                   augmented=True)
                self.mutations.append((stmt, before.name, s.lineno, False, rebuilt))
        elif isinstance(s, gast.Expr):
            if isinstance(s.value, gast.Constant) and isinstance(s.value.value, str):
                return  # docstring
            v = s.value
            if (isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute)
                    and v.func.attr == "push" and isinstance(v.func.value, gast.Name)
                    and v.func.value.id in self.locals and len(v.args) == 1):
                # stack_h.push(h): generated code, being transformed again
                value = self.expr(v.args[0], v.func.value.id, None)
                self.body.append(ir.Push(v.func.value.id, value, s.lineno))
                return
            self.expr_statement(s)  # print(...), a call made for its effect (effects.py)
        elif isinstance(s, gast.Assert):
            self.assert_statement(s)
        elif isinstance(s, gast.Raise):
            self.raise_statement(s)
        elif isinstance(s, (gast.Pass, gast.Delete)):
            return  # `del x` only frees memory: no value changes
        elif isinstance(s, gast.If):
            test = self.expr(s.test, "cond", None)
            before = dict(self.views)
            body = self.sub_block(s.body)
            after_body, self.views = self.views, dict(before)
            orelse = self.sub_block(s.orelse)
            self.views_join([after_body, self.views])
            self.body.append(ir.If(test, body, orelse, s.lineno))
        elif isinstance(s, (gast.For, gast.While)):
            after = self.views_enter_loop(s)
            if isinstance(s, gast.For):
                self.for_loop(s)
            else:
                self.while_loop(s)
            self.views = after  # (what the body made may not exist: it may not have run)
        else:
            raise self.unsupported(f"`{type(s).__name__}` statements are not supported", s)

    def snapshot_tests(self, body) -> None:
        """A branch's test that the branch itself assigns (`if first: ...; first = False`, or
        `a and b`'s flag) is copied before the branch: the backward replays the branch under
        the test's value from when the branch ran, not the value it left behind."""
        for i in range(len(body) - 1, -1, -1):
            s = body[i]
            for inner in (getattr(s, "body", None), getattr(s, "orelse", None),
                          getattr(s, "cond_body", None)):
                if isinstance(inner, list):
                    self.snapshot_tests(inner)
            if isinstance(s, ir.If) and isinstance(s.test, ir.Var) and s.test.name in {
                    d for x in ir.walk(s.body + s.orelse) for d in ir.defs(x)}:
                snap = self.fresh(f"{s.test.name}_before")
                op, args = self.op_call(control.identity, [s.test], {}, s.line)
                body.insert(i, ir.Call(snap, op, args, s.line))
                s.test = ir.Var(snap)

    def mark_inplace(self, made: list, result) -> None:
        """Mark the op of `x op= y` (numpy runs it into x's memory: see interpret.py's
        check_inplace): the call that made x's new value `result`, through the copy a loop
        name takes (`h_add = h + b; h = h_add`)."""
        calls = {st.target: st for st in made if isinstance(st, ir.Call)}
        st = calls.get(result.name) if isinstance(result, ir.Var) else None
        if st is not None and st.op is table.lookup(control.identity):
            src = st.args.get("x")
            st = calls.get(src.name) if isinstance(src, ir.Var) else None
        if st is not None and st.op.name in PY_BINARY:
            st.inplace = True

    def sub_block(self, stmts) -> list:
        outer, self.body = self.body, []
        try:
            for st in stmts:
                self.line = st.lineno
                self.statement(st)
            return self.body
        finally:
            self.body = outer

    def loop_exits(self, s) -> tuple[list, list[str]]:
        """Split a desugared loop body into its statements and its trailing exit flags."""
        body = list(s.body)
        exits = []
        while (body and isinstance(body[-1], gast.If) and not body[-1].orelse
               and len(body[-1].body) == 1 and isinstance(body[-1].body[0], gast.Break)
               and isinstance(body[-1].test, gast.Name)):
            exits.insert(0, body.pop().test.id)
        return body, exits

    def for_loop(self, s: gast.For):
        if s.orelse:
            raise self.unsupported("`for ... else`", s, "use a flag instead of `else`")
        it = s.iter
        if isinstance(it, gast.Call) and self.is_checkpoint(it.func):
            return self.checkpointed_loop(s, it)
        body, exits = self.loop_exits(s)
        builtin = None
        if (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
                and it.func.id not in self.locals and not it.keywords):
            builtin = self.pf.resolve(it.func.id)
        if builtin in (enumerate, zip) and isinstance(s.target, (gast.Tuple, gast.List)):
            return self.enumerate_or_zip(s, builtin, body, exits)
        if builtin is reversed and isinstance(s.target, gast.Name) and len(it.args) == 1:
            return self.reversed_range(s, it.args[0], body, exits)
        if (isinstance(it, gast.Subscript) and isinstance(it.value, gast.Call)
                and isinstance(it.value.func, gast.Name) and isinstance(s.target, gast.Name)
                and self.pf.resolve(it.value.func.id) is range):
            return self.reversed_range(s, it, body, exits, reverse=False)
        if not isinstance(s.target, gast.Name):
            raise self.unsupported("a `for` loop with a tuple target", s,
                                   "loop over range(len(...)), enumerate(...) or zip(...)")
        target = s.target.id
        prefix = []
        if (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
                and it.func.id not in self.locals and self.pf.resolve(it.func.id) is range):
            if it.keywords or not 1 <= len(it.args) <= 3:
                raise self.unsupported("this call to range()", s)
            args = [self.snapshot(self.expr(a, target, None), s) for a in it.args]
            one = ir.Const(1, "1")
            start, stop, step = ((ir.Const(0, "0"), args[0], one) if len(args) == 1 else
                                 (args[0], args[1], args[2] if len(args) == 3 else one))
            loop_var = target
            if self.defs[target] == 1:  # only the loop assigns it: always an int
                self.ints.add(target)
        else:
            # for x in xs: -> for x_index in range(len(xs)): x = xs[x_index]
            seq = self.snapshot(self.expr(it, target, None), s)
            length = self.op_call(len, [seq], {}, s)
            n = self.emit(length, self.fresh(f"{target}_count"), s)
            start, stop, step = ir.Const(0, "0"), n, ir.Const(1, "1")
            loop_var = self.fresh(f"{target}_index")
            self.ints.add(loop_var)
            self.mutable.add(loop_var)
            prefix = [(seq, loop_var)]
        outer, self.body = self.body, []
        try:
            for seq, idx in prefix:
                call = self.op_call(operator.getitem, [seq, ir.Index((ir.Var(idx),), False)],
                                    {}, s)
                self.emit(call, target, s)
                self.env[target] = ir.Var(target)
            self.env[loop_var] = ir.Var(loop_var)
            for st in body:
                self.line = st.lineno
                self.statement(st)
            loop_body = self.body
        finally:
            self.body = outer
        self.body.append(ir.For(loop_var, start, stop, step, loop_body, s.lineno, exits))

    def is_checkpoint(self, func) -> bool:
        root = func
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name) or root.id in self.locals:
            return False
        return self.dotted(func)[0] is checkpoint

    def checkpointed_loop(self, s: gast.For, it: gast.Call):
        """for l in srcad.checkpoint(range(L), every=k | snapshots=c): the loop it wraps, marked
        for checkpointing (the reverse transform keeps the loop state at the schedule's
        steps only, see srcad/checkpoint.py)."""
        if len(it.args) != 1 or any(k.arg not in ("every", "snapshots") for k in it.keywords):
            raise self.unsupported("this call to srcad.checkpoint in a `for` header", s,
                                   "write `for i in srcad.checkpoint(range(n))`, optionally "
                                   "with every=k or snapshots=c")
        _, exits = self.loop_exits(s)
        if exits:
            raise self.unsupported("`break` or `return` inside a checkpointed loop", s,
                                   "a checkpointed loop must run all its steps; move the exit "
                                   "out of the loop or drop srcad.checkpoint")
        opts = {}
        for k in it.keywords:
            atom = self.expr(k.value, k.arg, None)
            if isinstance(atom, ir.Const):
                try:
                    check_schedule(**{k.arg: atom.value})
                except ValueError as e:
                    raise self.pf.error(str(e), k.value) from None
            opts[k.arg] = atom
        if len(opts) == 2:
            raise self.pf.error("give srcad.checkpoint every= or snapshots=, not both", it)
        inner = gast.For(target=s.target, iter=it.args[0], body=s.body, orelse=[],
                         type_comment=None)
        gast.copy_location(inner, s)
        self.for_loop(inner)
        loop = self.body[-1]
        loop.checkpoint = (opts.get("every"), opts.get("snapshots"))

    def reversed_range(self, s, rng, body, exits, reverse=True):
        """for i in reversed(range(a, b, c)[:n]): a backward loop of generated code (and
        ``range(a, b, c)[:n]``, its backward at the next order)."""
        limit = None
        if (isinstance(rng, gast.Subscript) and isinstance(rng.slice, gast.Slice)
                and rng.slice.lower is None and rng.slice.step is None):
            limit = self.snapshot(self.expr(rng.slice.upper, s.target.id, None), s)
            rng = rng.value
        if not (isinstance(rng, gast.Call) and isinstance(rng.func, gast.Name)
                and self.pf.resolve(rng.func.id) is range and 1 <= len(rng.args) <= 3):
            raise self.unsupported("reversed() over anything but range()", s,
                                   "loop over range(...) and index")
        args = [self.snapshot(self.expr(a, s.target.id, None), s) for a in rng.args]
        one = ir.Const(1, "1")
        start, stop, step = ((ir.Const(0, "0"), args[0], one) if len(args) == 1 else
                             (args[0], args[1], args[2] if len(args) == 3 else one))
        if self.defs[s.target.id] == 1:
            self.ints.add(s.target.id)
        self.env[s.target.id] = ir.Var(s.target.id)
        loop = ir.For(s.target.id, start, stop, step, self.sub_block(body), s.lineno, exits)
        loop.reverse, loop.limit = reverse, limit
        self.body.append(loop)

    def snapshot(self, seq, node):
        """The sequence a loop iterates over is evaluated once: if its name is reassigned
        (in the loop, say), iterate over a copy of the reference taken before the loop."""
        if isinstance(seq, ir.Var) and seq.name in self.mutable:
            op, args = self.op_call(control.identity, [seq], {}, node)
            return self.emit((op, args), self.fresh(f"{seq.name}_iter"), node)
        return seq

    def enumerate_or_zip(self, s, builtin, body, exits):
        """for i, x in enumerate(xs) / for a, b in zip(as_, bs): an index loop that indexes."""
        names = [t.id if isinstance(t, gast.Name) else None for t in s.target.elts]
        if None in names:
            raise self.unsupported("nested unpacking in a `for` target", s)
        seqs = [self.snapshot(self.expr(a, names[-1], None), s) for a in s.iter.args]
        if builtin is enumerate:
            if len(seqs) != 1 or len(names) != 2:
                raise self.unsupported("this use of enumerate()", s, "use enumerate(xs)")
            index, items = names[0], [(names[1], seqs[0])]
            if self.defs[index] == 1:
                self.ints.add(index)
        else:
            if len(seqs) != len(names) or not seqs:
                raise self.unsupported("this use of zip()", s, "unpack one name per sequence")
            index, items = self.fresh(f"{names[0]}_index"), list(zip(names, seqs))
            self.ints.add(index)
            self.mutable.add(index)
        count = None
        for _, seq in items:
            n = self.emit(self.op_call(len, [seq], {}, s), self.fresh(f"{items[0][0]}_count"), s)
            count = n if count is None else self.emit(
                self.op_call(np.minimum, [count, n], {}, s), self.fresh("count"), s)
        outer, self.body = self.body, []
        try:
            self.env[index] = ir.Var(index)
            for n, seq in items:
                call = self.op_call(operator.getitem, [seq, ir.Index((ir.Var(index),), False)],
                                    {}, s)
                self.emit(call, n, s)
                self.env[n] = ir.Var(n)
            for st in body:
                self.line = st.lineno
                self.statement(st)
            loop_body = self.body
        finally:
            self.body = outer
        self.body.append(ir.For(index, ir.Const(0, "0"), count, ir.Const(1, "1"), loop_body,
                                s.lineno, exits))

    def while_loop(self, s: gast.While):
        if s.orelse:
            raise self.unsupported("`while ... else`", s, "use a flag instead of `else`")
        body, exits = self.loop_exits(s)
        outer, self.body = self.body, []
        try:
            cond = self.expr(s.test, "cond", None)
            cond_body = self.body
        finally:
            self.body = outer
        self.body.append(ir.While(cond_body, cond, self.sub_block(body), s.lineno, exits))

    def assign(self, target, value, node):
        if isinstance(target, gast.Name):
            self.bind(target.id, value, node)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if any(isinstance(t, (gast.Tuple, gast.List)) for t in target.elts):
                # (a, b), saved = g_fwd(x): unpack level by level
                whole = self.expr(value, "unpacked", into=None)
                self.unpack_atom(target, whole, node)
                return
            names = []
            for t in target.elts:
                if not isinstance(t, gast.Name):
                    raise self.unsupported("starred unpacking", node, "unpack into plain names")
                names.append(t.id)
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(names):
                atoms = [self.expr(v, n, into=None) for v, n in zip(value.elts, names)]
                # all right-hand sides first (`x, y = y, x` swaps), then the names
                if any(n in self.mutable for n in names):
                    snap = []
                    for n, a in zip(names, atoms):
                        if n in self.mutable and isinstance(a, ir.Var) and a.name in names:
                            op, args = self.op_call(control.identity, [a], {}, node)
                            a = self.emit((op, args), self.fresh(f"{a.name}_old"), node)
                        snap.append(a)
                    atoms = snap
                for n, a in zip(names, atoms):
                    if n in self.mutable:
                        if a != ir.Var(n):
                            op, args = self.op_call(control.identity, [a], {}, node)
                            self.body.append(ir.Call(n, op, args, node.lineno))
                        self.env[n] = ir.Var(n)
                    else:
                        self.env[n] = a
                return
            if isinstance(value, gast.Call) and self.is_user_function(value.func):
                # a, b = helper(x): the call's own targets
                atom = self.expr(value, "_".join(names), into=None)
                call = self.body[-1]
                assert isinstance(call, ir.UserCall) and ir.Var(call.targets[0]) == atom
                if not call.multi:
                    raise self.pf.error("unpacking the result of a function that does not "
                                        "return a tuple", node)
                call.targets = [self.def_name(n, node.lineno) for n in names]
                call.unpack = True
                self.taken.update(call.targets)
                for n, t in zip(names, call.targets):
                    self.env[n] = ir.Var(t)
                    if n in self.mutable and t != n:  # pragma: no cover - def_name keeps it
                        pass
                return
            whole = self.expr(value, "_".join(names), into=None)
            for i, n in enumerate(names):
                call = self.op_call(operator.getitem, [whole, ir.Index((ir.Const(i, repr(i)),),
                                                                       False)], {}, node)
                self.env[n] = self.emit(call, self.def_name(n, node.lineno), node)
        elif isinstance(target, gast.Subscript):
            self.setitem(target, value, node)
        elif isinstance(target, gast.Attribute):
            raise self.unsupported("assignment to an attribute", node,
                                   "assign the new value to a name")
        else:
            raise self.unsupported(f"assignment to {type(target).__name__}", node)

    def unpack_atom(self, target, atom, node):
        for i, t in enumerate(target.elts):
            call = self.op_call(operator.getitem, [atom, ir.Index((ir.Const(i, repr(i)),),
                                                                  False)], {}, node)
            if isinstance(t, gast.Name):
                self.env[t.id] = self.emit(call, self.def_name(t.id, node.lineno), node)
            elif isinstance(t, (gast.Tuple, gast.List)):
                self.unpack_atom(t, self.emit(call, self.fresh("unpacked"), node), node)
            else:
                raise self.unsupported("starred unpacking", node, "unpack into plain names")

    def bind(self, name: str, value, node):
        atom = self.expr(value, name, into=(name, node.lineno))
        self.record_view(name, value)
        if name in self.mutable:
            if atom != ir.Var(name):
                op, args = self.op_call(control.identity, [atom], {}, node)
                self.body.append(ir.Call(name, op, args, node.lineno))
                if isinstance(value, gast.Name) and value.id in self.locals and \
                        not self.generated:
                    self.alias_stmts.add(id(self.body[-1]))  # `z = y`: one array, two names
            self.env[name] = ir.Var(name)
        elif isinstance(atom, ir.Var) and atom.name in self.mutable and atom.name != name:
            # `a = v` with v a loop name: a keeps this value when v is given another
            op, args = self.op_call(control.identity, [atom], {}, node)
            self.env[name] = self.emit((op, args), self.def_name(name, node.lineno), node)
            if not self.generated:  # (srcad's own code += only into buffers it owns)
                self.alias_stmts.add(id(self.body[-1]))
        else:
            self.env[name] = atom

    # -- expressions -------------------------------------------------------------------------
    def emit(self, call_parts, target: str, node) -> ir.Var:
        op, args = call_parts
        self.body.append(ir.Call(target, op, args, node.lineno))
        self.note_int(self.body[-1])
        return ir.Var(target)

    def result(self, call_parts, hint: str, into, node) -> ir.Var:
        """Emit an op; into=(user name, line) names it as that user variable."""
        if into is _RETURN:
            return self.emit(call_parts, self.fresh(self.pf.name), node)
        if into is not None:
            user, line = into
            target = self.def_name(user, line)
            reads = {n for a in call_parts[1].values() for n in ir.atom_vars(a)}
            if target in reads:  # `h = h + b` in a loop: compute, then copy into h
                tmp = self.emit(call_parts,
                                self.fresh(f"{user}_{call_parts[0].name.lstrip('.')}"), node)
                op, args = self.op_call(control.identity, [tmp], {}, node)
                self.body.append(ir.Call(target, op, args, node.lineno))
            else:
                self.emit(call_parts, target, node)
            var = ir.Var(target)
            self.env[user] = var
            return var
        opname = call_parts[0].name.lstrip(".")  # (a method with no rule: ".random")
        return self.emit(call_parts, self.fresh(f"{hint}_{opname}"), node)

    def expr(self, e, hint: str, into):
        """Lower `e` to an atom; with `into`, the top-level op writes the user's variable."""
        if isinstance(e, gast.Constant):
            return ir.Const(e.value, _const_src(e.value, None) or repr(e.value))
        if isinstance(e, gast.Name):
            return self.name_atom(e)
        if isinstance(e, (gast.Tuple, gast.List)):
            items = tuple(self.expr(x, hint, None) for x in e.elts)
            return ir.Seq(items, "tuple" if isinstance(e, gast.Tuple) else "list")
        if isinstance(e, gast.BinOp):
            fn = _BINOPS.get(type(e.op))
            if fn is None:
                raise self.unsupported(f"the operator {type(e.op).__name__}", e)
            left = self.expr(e.left, hint, None)
            right = self.expr(e.right, hint, None)
            # Python's list and tuple `+` concatenates: known items make one sequence. Other
            # operators on sequences run as Python runs them (`x.shape + (1,)`); where a
            # gradient would flow through the sequence, the first call refuses
            # (probe.refuse_sequence_arithmetic)
            if isinstance(e.op, gast.Add) and isinstance(left, ir.Seq) and isinstance(
                    right, ir.Seq) and left.kind == right.kind:
                return ir.Seq(left.items + right.items, left.kind)
            return self.result(self.op_call(fn, [left, right], {}, e), hint, into, e)
        if isinstance(e, gast.UnaryOp):
            operand = self.expr(e.operand, hint, None)
            if isinstance(e.op, gast.UAdd):
                return operand
            if isinstance(e.op, gast.USub):
                if isinstance(operand, ir.Const) and isinstance(operand.value, (int, float)):
                    return ir.Const(-operand.value, _const_src(-operand.value, None))
                return self.result(self.op_call(np.negative, [operand], {}, e), hint, into, e)
            if isinstance(e.op, gast.Not):
                return self.result(self.op_call(np.logical_not, [operand], {}, e), hint, into, e)
            raise self.unsupported(f"the operator {type(e.op).__name__}", e)
        if isinstance(e, gast.Compare):
            if any(type(o) not in _CMPOPS for o in e.ops):
                raise self.unsupported("this comparison (`is` or `in`)", e,
                                       "compare values with <, <=, >, >=, == or !=")
            # a < b < c is (a < b) and (b < c), each operand evaluated once
            operands = [self.expr(x, hint, None) for x in [e.left, *e.comparators]]
            tests = []
            for op, lhs, rhs in zip(e.ops, operands, operands[1:]):
                last = len(tests) == len(e.ops) - 1
                call = self.op_call(_CMPOPS[type(op)], [lhs, rhs], {}, e)
                tests.append(self.result(call, hint, into, e) if last and len(e.ops) == 1
                             else self.result(call, hint, None, e))
            return self.combine(np.logical_and, tests, hint, into, e) if len(tests) > 1 \
                else tests[0]
        if isinstance(e, gast.BoolOp):
            # `a and b` short-circuits: t = a; if t: t = b  (`or`: if not t)
            var = self.fresh(f"{hint}_{'and' if isinstance(e.op, gast.And) else 'or'}")
            self.mutable.add(var)
            first = self.expr(e.values[0], hint, None)
            op, args = self.op_call(control.identity, [first], {}, e)
            self.body.append(ir.Call(var, op, args, e.lineno))
            for v in e.values[1:]:
                outer, self.body = self.body, []
                try:
                    a = self.expr(v, hint, None)
                    op, args = self.op_call(control.identity, [a], {}, e)
                    self.body.append(ir.Call(var, op, args, e.lineno))
                    branch = self.body
                finally:
                    self.body = outer
                if isinstance(e.op, gast.And):
                    self.body.append(ir.If(ir.Var(var), branch, [], e.lineno))
                else:
                    self.body.append(ir.If(ir.Var(var), [], branch, e.lineno))
            return ir.Var(var)
        if isinstance(e, gast.Call):
            return self.call(e, hint, into)
        if isinstance(e, gast.Dict):
            return self.dict_display(e, hint, into)
        if isinstance(e, gast.JoinedStr):
            return self.fstring(e, hint, into)
        if isinstance(e, gast.IfExp):
            test = self.expr(e.test, hint, None)
            var = self.fresh(f"{hint}_if")
            self.mutable.add(var)
            branches = []
            for branch in (e.body, e.orelse):
                outer, self.body = self.body, []
                try:
                    a = self.expr(branch, hint, None)
                    op, args = self.op_call(control.identity, [a], {}, e)
                    self.body.append(ir.Call(var, op, args, e.lineno))
                    branches.append(self.body)
                finally:
                    self.body = outer
            self.body.append(ir.If(test, branches[0], branches[1], e.lineno))
            return ir.Var(var)
        if isinstance(e, gast.Attribute):
            base = self.local_base(e.value, hint)
            if base is None:
                return self.global_value(e)
            fn = ATTRIBUTES.get(e.attr)
            if fn is None:  # (x.itemsize, rng.bit_generator: run as written, see opaque.py)
                return self.result((opaque_attribute(e.attr), {"_obj": base}), hint, into, e)
            return self.result(self.op_call(fn, [base], {}, e), hint, into, e)
        if isinstance(e, gast.Subscript):
            base = self.expr(e.value, hint, None)
            index = self.index(e.slice, hint)
            item = _static_item(base, index)
            if item is not None:  # `[a, b][-1]` is `b`: the item itself, as Python has it
                return item
            part = index.parts[0] if not index.is_tuple else None
            if (into is None and isinstance(part, ir.Const) and isinstance(part.value, str)
                    and part.value.isidentifier()):
                # params["W1"] is named W1 (a pytree leaf says what it holds)
                call = self.op_call(operator.getitem, [base, index], {}, e)
                return self.emit(call, self.fresh(part.value), e)
            return self.result(self.op_call(operator.getitem, [base, index], {}, e), hint, into, e)
        if isinstance(e, gast.Starred):
            raise self.unsupported("star-unpacking (`*xs`) here", e,
                                   "write the items out, or join arrays with np.concatenate")
        raise self.unsupported(f"the expression `{type(e).__name__}`", e)

    def combine(self, fn, atoms, hint, into, node):
        acc = atoms[0]
        for i, a in enumerate(atoms[1:], start=2):
            call = self.op_call(fn, [acc, a], {}, node)
            acc = self.result(call, hint, into if i == len(atoms) else None, node)
        return acc

    def index(self, s, hint):
        def part(p):
            if isinstance(p, gast.Slice):
                return ir.Slice(*(None if v is None else self.expr(v, hint, None)
                                  for v in (p.lower, p.upper, p.step)))
            return self.expr(p, hint, None)

        if isinstance(s, gast.Tuple):
            return ir.Index(tuple(part(p) for p in s.elts), True)
        return ir.Index((part(s),), False)

    def name_atom(self, e: gast.Name):
        if e.id in self.env:
            return self.env[e.id]
        if e.id in self.locals:
            raise self.pf.error(f"`{e.id}` is used before it is assigned", e)
        obj = self.pf.resolve(e.id)
        if obj is UNRESOLVED:
            raise self.pf.error(f"name `{e.id}` is not defined", e)
        return self.constant(obj, e.id, e)

    def constant(self, obj, spelled: str, node):
        if isinstance(obj, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                            np.ufunc)) and not isinstance(obj, type) and obj not in LIFTED:
            raise self.unsupported(f"`{spelled}` ({type(obj).__name__}) used as a value", node,
                                   "call it, or pass values in as arguments")
        src = _const_src(obj, spelled)
        if src is None:
            name = spelled if spelled.isidentifier() else self.fresh(spelled.replace(".", "_"))
            if name in self.locals or name in RESERVED:
                name = self.fresh(name)
            self.taken.add(name)
            self.inject[name] = obj
            src = name
        return ir.Const(obj, src)

    def local_base(self, e, hint):
        """The atom for `e` if it is (rooted at) a local value, else None (a global)."""
        root = e
        while isinstance(root, gast.Attribute):
            root = root.value
        if isinstance(root, gast.Name) and root.id not in self.locals:
            return None
        return self.expr(e, hint, None)

    def dotted(self, e) -> tuple[object, str]:
        """Resolve a global `a.b.c` to its object."""
        if isinstance(e, gast.Name):
            obj = self.pf.resolve(e.id)
            if obj is UNRESOLVED:
                raise self.pf.error(f"name `{e.id}` is not defined", e)
            return obj, e.id
        if isinstance(e, gast.Attribute):
            base, spelled = self.dotted(e.value)
            try:
                return getattr(base, e.attr), f"{spelled}.{e.attr}"
            except AttributeError:
                raise self.pf.error(f"`{spelled}` has no attribute `{e.attr}`", e) from None
        raise self.unsupported(f"calling the result of a `{type(e).__name__}` expression", e)

    def global_value(self, e):
        obj, spelled = self.dotted(e)
        return self.constant(obj, spelled, e)

    def user_call(self, fn, spelled, args, kwargs, node) -> ir.UserCall:
        """A call to another user function: normalise it too (a subroutine of its own)."""
        if fn in _IN_PROGRESS:
            raise self.pf.error(
                f"`{spelled}` calls itself (directly or through other functions): srcad does "
                f"not differentiate recursion", node, cls=UnsupportedSyntaxError,
                hint="write the recursion as a loop")
        _IN_PROGRESS.add(fn)
        try:
            callee = normalize(parse_function(fn))
        finally:
            _IN_PROGRESS.discard(fn)
        params = callee.params
        if len(args) > len(params):
            raise self.pf.error(f"`{spelled}` takes {len(params)} arguments, got {len(args)}",
                                node)
        bound = dict(zip(params, args))
        for k, v in kwargs.items():
            if k not in params or k in bound:
                raise self.pf.error(f"`{spelled}` got an unexpected or repeated argument `{k}`",
                                    node)
            bound[k] = v
        sig = inspect.signature(fn)
        for p in params:
            if p not in bound:
                default = sig.parameters[p].default
                if default is inspect.Parameter.empty:
                    raise self.pf.error(f"`{spelled}` is missing its argument `{p}`", node)
                bound[p] = self.constant(default, repr(default), node)
        name = spelled if spelled.isidentifier() else self.fresh(spelled.replace(".", "_"))
        if self.inject.get(name, fn) is not fn or name in self.locals:
            name = self.fresh(name)
        self.inject[name] = fn
        self.taken.add(name)
        return ir.UserCall([], callee, fn, name, [bound[p] for p in params], node.lineno,
                           multi=isinstance(callee.ret.value, ir.Seq))

    def is_user_function(self, func) -> bool:
        if isinstance(func, gast.Name) and func.id in self.locals:
            return False
        if isinstance(func, gast.Attribute) and self.local_base_is_local(func.value):
            return False
        try:
            obj, _ = self.dotted(func)
        except Exception:
            return False
        return isinstance(obj, types.FunctionType) and table.lookup(obj) is None and \
            library_file(obj) is None and obj not in LIFTED  # (lifted ones are inlined)

    def local_base_is_local(self, e) -> bool:
        root = e
        while isinstance(root, gast.Attribute):
            root = root.value
        return not (isinstance(root, gast.Name) and root.id not in self.locals)

    def op_call(self, fn, args, kwargs, node, spelled: str | None = None):
        """Bind a call to its op row's parameters: (op, {param: atom})."""
        op = table.lookup(fn)
        if op is None:
            name = spelled or getattr(fn, "__name__", repr(fn))
            if isinstance(fn, types.FunctionType):
                hint = (f"calls to user functions are not differentiated yet; register a rule "
                        f"with srcad.defvjp({name}, lambda g, out, ...: ...) or inline it")
            else:
                hint = (f"register one with srcad.defvjp({name}, lambda g, out, x: ...) "
                        f"(one rule per positional argument)")
            raise self.pf.error(f"`{name}` has no derivative rule in srcad", node,
                                hint=hint, cls=NoRuleError)
        params = op.params
        args = op.canonical_args(args, _static_value, lambda v: ir.Const(v, repr(v)))
        try:
            bound = op.bind(args, kwargs)
        except TypeError as e:
            raise self.pf.error(str(e), node, cls=UnsupportedSyntaxError) from None
        if op.star is not None:  # np.einsum(s, a, b): the operands as one tuple atom
            bound[op.star.name] = ir.Seq(tuple(bound[op.star.name]), "tuple")
        for p in params:
            if p.required and p.name not in bound:
                raise self.pf.error(f"`{op.name}` is missing its argument `{p.name}`", node)
        ordered = {p.name: bound[p.name] for p in params if p.name in bound}
        return op, ordered


def _static_value(atom):
    """The value of an atom written as a literal (a constant, or a sequence of them), for an
    op's `canonical` form; LookupError where it is known only when the code runs."""
    if isinstance(atom, ir.Const):
        return atom.value
    if isinstance(atom, ir.Seq):
        items = [_static_value(x) for x in atom.items]
        return items if atom.kind == "list" else tuple(items)
    raise LookupError(atom)


def _static_item(base, index):
    """The item (or, for a slice, the items) of a literal sequence picked by a constant index,
    or None when it is not known before running."""
    if not isinstance(base, ir.Seq) or index.is_tuple:
        return None
    part = index.parts[0]
    if isinstance(part, ir.Const) and type(part.value) is int:
        if -len(base.items) <= part.value < len(base.items):
            return base.items[part.value]
        return None
    if isinstance(part, ir.Slice):
        bounds = [None if b is None else b for b in (part.lower, part.upper, part.step)]
        if all(b is None or (isinstance(b, ir.Const) and type(b.value) is int) for b in bounds):
            sl = slice(*(None if b is None else b.value for b in bounds))
            return ir.Seq(tuple(base.items[sl]), base.kind)
    return None


_IN_PROGRESS: set = set()  # user functions being normalised (to catch recursion)


def _hashable(obj) -> bool:
    try:
        hash(obj)
        return True
    except TypeError:
        return False


def normalize(pf: ParsedFunction) -> ir.Function:
    """Fence and normalise a parsed function into the IR (see the module docstring)."""
    fence(pf)
    n = Normalizer(pf)
    lift_closures(pf, n.taken)  # nested defs and lambdas (closures.py)
    lower_python(pf, n.taken)  # comprehensions, sum(...), lst.append (pylower.py)
    body = pf.tree.body
    if body and not isinstance(body[-1], gast.Return):  # (falling off the end returns None)
        none = gast.Return(value=gast.Constant(value=None, kind=None))
        body.append(gast.copy_location(none, body[-1]))
        gast.fix_missing_locations(pf.tree)
    desugar(pf.tree, n.taken)
    n.__init__(pf)  # names and definitions again, now that flags exist
    return n.run()
