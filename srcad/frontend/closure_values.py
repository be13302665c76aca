"""Functions as values that close over the function's values (a mixin for the Normalizer).

closures.py lifts a nested def or lambda out of the function it is written in; where it is
used as a value (put in a list, passed, returned) it becomes ``__srcad_partial(g, w=w)``, its
free variables bound. That call is an op with no rule: a gradient through ``w`` would stop
there. Here the normaliser keeps, for the name holding such a value, which lifted function it
is and what it closes over, so that a call of it -- through the name, an item of a display a
loop walks once per item, a callee's parameter, a factory's result -- is a call of the lifted
function with its free variables given, spliced in (inline.py) and differentiated like the
rest: the partial itself is left unread.

What a call reads is what Python reads. A closure made in this function reads the enclosing
function's variables when it is called (late binding: a name rebound after the closure was
made is read as rebound), so its free variables are this function's names at the call. One
that came from elsewhere -- a factory's result, a callee's parameter -- reads the values its
maker's names held when that returned (they cannot change after).

Before/after:
    fns = (lambda h: h @ W1, np.tanh)         x_lambda_L5 = x @ W1        (the lambda's body)
    for f in fns:                             x = np.tanh(x_lambda_L5)
        x = f(x)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import gast
import numpy as np

from .. import ir
from ..naming import fresh
from ..ops import control
from .loops import _function_item


CLOSURE_ADVICE = (
    "a nested function or lambda that closes over a differentiated value is followed where "
    "srcad knows which one each call calls -- through its name, a tuple or list display a "
    "loop walks, an item at a constant index or key, a callee's parameter, a factory's "
    "result; here it is kept or chosen where srcad cannot tell which (`f0 if c else f1`, a "
    "list built over a run-time count, a library call given it). Call each one where the "
    "choice is made (`h = f0(h) if c else f1(h)`)")


@dataclass(frozen=True)
class Closure:
    """A lifted function and what it closes over: `free` maps each free variable (a keyword
    of the lifted function) to its atom, or is None for a closure made in this function,
    whose free variables are read from the function's names when it is called."""

    fn: object
    names: tuple
    free: dict | None


class ClosureValuesMixin:
    """`note_closure`, `closure_of`, `closure_site`, `function_value` for the Normalizer."""

    def closure_made_op(self, site: tuple, e: gast.Call) -> tuple:
        """`__srcad_partial(g, w=w)`'s op, named for the user (the def's name, or `lambda`)
        and with what to do where it stays a value srcad cannot follow."""
        fn, _ = self.dotted(e.args[0])
        name = getattr(fn, "__name__", "lambda")
        label = "lambda" if name.startswith("lambda_L") else name
        return (site[0], dataclasses.replace(site[1], label=label, advice=CLOSURE_ADVICE),
                site[2])

    def note_closure(self, var, e: gast.Call, bound: dict) -> None:
        """`var = __srcad_partial(g, w=w)` just made: var holds the lifted g, closing over
        this function's names (`bound`: the op's arguments, the free values now)."""
        if not isinstance(var, ir.Var):
            return
        fn, _ = self.dotted(e.args[0])
        names = tuple(k.arg for k in e.keywords)
        self.closures[var.name] = Closure(fn, names, None)
        # (each free variable's name here -- a loop's variable may have been renamed -- and
        # its value now, for a name no longer bound at the call)
        self.closure_made[var.name] = {  # (a default's snapshot: its value when made)
            k.arg: (k.value.id if isinstance(k.value, gast.Name) and
                    not getattr(k, "srcad_early", False) else None, bound.get(k.arg))
            for k in e.keywords}

    def closure_of(self, atom) -> Closure | None:
        """The closure `atom` holds, its free variables as atoms now; else None."""
        atom = self.followed(atom)
        c = self.closures.get(atom.name) if isinstance(atom, ir.Var) else None
        if c is None or c.free is not None:
            return c
        made = self.closure_made.get(atom.name, {})
        return Closure(c.fn, c.names, {k: self.env.get(name, now)
                                       for k, (name, now) in made.items()})

    def followed(self, atom):
        """What `atom` holds, through copies (`g = f`, a loop name given the value) and
        items a constant index reads from a container whose items are known (`fs[0]`,
        `acts["relu"]`), one definition each: a closure's name, a constant, or `atom`."""
        for _ in range(64):
            if not isinstance(atom, ir.Var) or atom.name in self.closures:
                return atom
            defs = self.definitions(atom.name)
            if len(defs) != 1 or not isinstance(defs[0], ir.Call):
                return atom
            if defs[0].op.fn is control.identity:
                nxt = next(iter(defs[0].args.values()))
            elif defs[0].op.name == "getitem":
                nxt = self.known_item(defs[0].args.get("a"), defs[0].args.get("index"))
            else:
                return atom
            if nxt is None:
                return atom
            atom = nxt
        return atom

    def known_item(self, base, index):
        """The item `base[index]` holds, a constant index into a list (or key into a dict)
        whose items this function knows; else None."""
        parts = index.parts if isinstance(index, ir.Index) and not index.is_tuple else (index,)
        if len(parts) != 1 or not (isinstance(parts[0], ir.Const) and
                                   type(parts[0].value) in (int, str)):
            return None
        items = self.list_items_of_atom(base)
        k = parts[0].value
        if not items:
            return None
        if type(k) is str:  # (a dict display's value: `acts["relu"]`)
            return dict(items).get(k)
        if [i for i, _ in items] != list(range(len(items))):
            return None
        return items[k][1] if -len(items) <= k < len(items) else None

    def closure_items(self, seq, it, body):
        """`for f in fs:` of a list this function knows the items of, holding closure values
        (`fs = [lambda h: h @ W1, np.tanh]`, appended to), the loop's body not naming it:
        its items, which the loop walks once each (loops.py); else None."""
        if not isinstance(seq, ir.Var) or not walked_alone(it, body):
            return None
        items = self.list_items_of_atom(seq)
        if not items or [k for k, _ in items] != list(range(len(items))):
            return None
        atoms = [a for _, a in items]
        if not all(self.function_value(a) for a in atoms) or \
                not any(self.closure_of(a) is not None for a in atoms):
            return None
        return atoms

    def closures_reversed(self, it, target, body):
        """`for f in reversed(fs):` (pyforms.py: `fs[::-1]`) of such a list
        (`closure_items`): its items, last first; else None."""
        if isinstance(it, gast.Subscript) and isinstance(it.slice, gast.Slice) and \
                it.slice.lower is None and it.slice.upper is None and \
                isinstance(it.slice.step, gast.Constant) and it.slice.step.value == -1:
            name = it.value
        elif isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
                it.func.id not in self.locals and self.pf.resolve(it.func.id) is reversed \
                and len(it.args) == 1 and not it.keywords:
            name = it.args[0]
        else:
            return None
        if not isinstance(name, gast.Name):
            return None
        items = self.closure_items(self.expr(name, target, None), name, body)
        return None if items is None else items[::-1]

    def closure_site(self, held, e: gast.Call, hint: str):
        """A call of a closure value: ("user", the lifted function, ..., its free variables
        given as keywords, as closures.py passes them to a direct call); else None."""
        c = self.closure_of(held)
        if c is None or any(v is None for v in c.free.values()):
            return None
        e = self.spread_for(c.fn, e)
        args, kwargs, starred = self.call_args(e, hint)
        if starred:
            self.refuse_starred(e, f"the nested function `{c.fn.__name__}`")
        return ("user", c.fn, c.fn.__name__, args, {**kwargs, **c.free}, False)

    def closures_reached(self, atoms) -> dict:
        """{IR name: its closure, free variables as atoms now} of every closure value in
        `atoms` (a name, or an item of a display), and of those they close over, in turn:
        what a function returning them hands its caller (`Function.closures_out`)."""
        out, todo = {}, list(atoms)
        while todo:
            a = todo.pop()
            if isinstance(a, ir.Seq):
                todo.extend(a.items)
                continue
            c = self.closure_of(a)
            if c is None or a.name in out:
                continue
            out[a.name] = c
            todo.extend(c.free.values())
        return out

    def take_closures(self, closures: dict, atom) -> None:
        """A callee's closures (`closures_out`), spliced in: `atom` maps its names to this
        function's atoms (inline.py's renamer)."""
        for name, c in closures.items():
            mine = atom(ir.Var(name))
            # (one this function gave the callee is its own still: read as it reads it)
            if isinstance(mine, ir.Var) and self.closure_of(mine) is None:
                self.closures[mine.name] = Closure(c.fn, c.names,
                                                   {k: atom(v) for k, v in c.free.items()})

    def closure_arguments(self, pf, args: list, kwargs: dict) -> bool:
        """A call passing closure values (`layer(h, W, act=lambda z: z * s)`, a display of
        functions holding one, `compose(*fns)`'s items): the callee `pf` sees each as the
        closure it is, what it closes over given as extra parameters (added to `kwargs`), so
        its calls of them are calls of the lifted functions there too. True if any; the call
        is then spliced in (its Python function takes no such parameters)."""
        taken = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)} | set(pf.params)

        def extra(base: str, a, free: bool) -> ir.Var:
            name = fresh(base, taken)
            taken.add(name)
            pf.closure_extra.append(name)
            if free:  # (a value a closure closes over: the caller's own, not an argument)
                pf.closure_free.append(name)
            kwargs[name] = a
            return ir.Var(name)

        def closure(c: Closure, base: str) -> Closure:
            return Closure(c.fn, c.names, {k: passed(v, f"{base}_{k}", True)
                                           for k, v in c.free.items()})

        def passed(a, base: str, free: bool = False):  # (the atom the callee reads for `a`)
            c = self.closure_of(a)
            if c is not None:
                var = extra(base, a, True)
                pf.closure_params[var.name] = closure(c, var.name)
                return var
            if self.function_display(a):
                return ir.Seq(tuple(passed(x, f"{base}_{i}", free)
                                    for i, x in enumerate(a.items)), a.kind)
            return a if isinstance(a, ir.Const) else extra(base, a, free)

        for p, a in [*zip(pf.params, args), *list(kwargs.items())]:
            c = self.closure_of(a)
            if c is not None:
                pf.closure_params[p] = closure(c, p)
            elif self.function_display(a):
                pf.function_displays[p] = passed(a, p)
        return bool(pf.closure_params or pf.function_displays)

    def function_display(self, a) -> bool:
        """A tuple or list display holding a closure value or a function known when
        normalising (at any depth: `[(W1, np.tanh), (W2, relu)]`)."""
        return isinstance(a, ir.Seq) and any(
            self.closure_of(x) is not None or self.function_display(x) or
            isinstance(x, ir.Const) and _function_item(x) for x in a.items)

    def dispatched_call(self, e: gast.Call, hint: str, into):
        """`act(x)` -- or `layer(h, W, act)` -- where `act` holds one of a few functions known
        here, chosen at run time (`act = f0 if c else np.tanh`: a copy of each on its arm):
        the call made with each, under an `if` chain on a tag set beside each copy -- Python's
        one call, whichever the name holds -- the other arguments evaluated once, before.
        None where no name of the call (one at most) is such a choice."""
        if any(isinstance(a, gast.Starred) for a in e.args) or any(
                k.arg is None for k in e.keywords) or self.generated:
            return None
        spots = [("func", None, e.func)] + [("arg", i, a) for i, a in enumerate(e.args)] + \
            [("kw", k.arg, k.value) for k in e.keywords]
        found = [(kind, at, node, c) for kind, at, node in spots if isinstance(node, gast.Name)
                 and node.id in self.locals and (c := self.run_time_choice(node, e))]
        if len(found) != 1:
            return None
        kind, at, node, (tag, choices) = found[0]
        args, kwargs, _ = self.call_args(gast.Call(
            func=e.func, args=[a for i, a in enumerate(e.args) if (kind, i) != ("arg", at)],
            keywords=[k for k in e.keywords if (kind, k.arg) != ("kw", at)]), hint)
        names = []
        for a in [*args, *kwargs.values()]:  # (evaluated once, held under names)
            names.append(self.fresh(f"{hint}_arg"))
            self.env[names[-1]] = a
        fname, out = self.fresh(f"{node.id}_chosen"), self.fresh(f"{hint}_{node.id}")
        # (names of this call's own: never pinned -- pin_loop_values skips a loop name's --
        # where an arm would pin them, the other arm would read a copy it never made)
        self.locals |= {*names, fname, out}
        self.mutable |= {*names, fname, out}

        def name(n):
            return gast.Name(n, gast.Load(), None, None)

        rest = iter(names)
        call = gast.copy_location(gast.Call(
            func=name(fname) if kind == "func" else e.func,
            args=[name(fname) if (kind, i) == ("arg", at) else name(next(rest))
                  for i in range(len(e.args))],
            keywords=[gast.keyword(arg=k.arg, value=name(fname) if (kind, k.arg) == ("kw", at)
                                   else name(next(rest))) for k in e.keywords]), e)
        stmt = gast.copy_location(gast.Assign(
            targets=[gast.Name(out, gast.Store(), None, None)], value=call,
            type_comment=None), e)
        tests = [self.emit(self.op_call(np.equal, [ir.Var(tag), ir.Const(k, repr(k))],
                                        {}, e), self.fresh(f"{node.id}_is"), e)
                 for k in range(len(choices) - 1)]
        arms = []
        for a in choices:
            self.env[fname] = a
            arms.append(self.sub_block([stmt]))
        chain = arms[-1]
        for test, arm in zip(reversed(tests), reversed(arms[:-1])):
            chain = [ir.If(test, arm, chain, e.lineno)]
        self.body.extend(chain)
        result = ir.Var(out)
        if into is None:
            return result
        return self.result(self.op_call(control.identity, [result], {}, e), hint, into, e)

    def run_time_choice(self, node: gast.Name, e):
        """(the tag telling which, the functions) where the name `node` holds one of a few
        functions known here, chosen at run time (a copy of each into it); else None. The tag
        is set beside each copy (a choice made on one arm only is bound there only, so no
        `is` test could read it on the other), once per name and definitions."""
        held = self.followed(self.env.get(node.id))
        if not isinstance(held, ir.Var) or self.closure_of(held) is not None:
            return None
        defs = self.definitions(held.name)
        if len(defs) < 2 or not all(isinstance(d, ir.Call) and d.op.fn is control.identity
                                    for d in defs):
            return None
        choices = []
        for d in defs:
            a = self.followed(next(iter(d.args.values())))
            if not (isinstance(a, ir.Const) and callable(a.value) and
                    not isinstance(a.value, type)) and self.closure_of(a) is None:
                return None
            if a not in choices:
                choices.append(a)
        if len(choices) < 2:
            return None
        tags = self.__dict__.setdefault("choice_tags", {})
        key = (held.name, tuple(id(d) for d in defs))
        if key not in tags:
            tag = self.fresh(f"{node.id}_which")
            self.mutable.add(tag)
            for d in defs:
                k = choices.index(self.followed(next(iter(d.args.values()))))
                op, args = self.op_call(control.identity, [ir.Const(k, repr(k))], {}, e)
                if not _insert_after(self.top_body, d, ir.Call(tag, op, args, d.line)):
                    return None
            tags[key] = tag
        return tags[key], choices

    def function_value(self, a) -> bool:
        """A function known when normalising -- a constant, a closure value -- or a display
        holding one: what a loop walks once per item (loops.py)."""
        if isinstance(a, ir.Var):
            return self.closure_of(a) is not None
        if isinstance(a, ir.Seq) and any(isinstance(b, ir.Var) and self.closure_of(b)
                                         for b in a.items):
            return True
        return _function_item(a)


def _insert_after(body: list, stmt, new) -> bool:
    """Put `new` right after `stmt` in the block of `body` (at any depth) holding it."""
    for i, s in enumerate(body):
        if s is stmt:
            body.insert(i + 1, new)
            return True
        for inner in (getattr(s, "body", None), getattr(s, "orelse", None),
                      getattr(s, "cond_body", None)):
            if isinstance(inner, list) and _insert_after(inner, stmt, new):
                return True
    return False


def walked_alone(it, body) -> bool:
    """Is the loop's iterable `it` a name its body never names (so the body cannot change the
    list the loop walks, nor rebind it)?"""
    return isinstance(it, gast.Name) and not any(
        isinstance(n, gast.Name) and n.id == it.id for st in body for n in gast.walk(st))
