"""Desugar jumps: `break`, `continue` and early `return` become flags and guards.

Input: a fenced gast `FunctionDef`. Output: the same function in which
  * no `continue` remains, and `break` appears only as a loop's trailing exit test
    ``if <flag>: break`` (one per flag), so every executed iteration runs its whole body;
  * `return` appears once, as the last statement of the function (a tuple of result names
    where every return gives a tuple of one size and the end is never reached: callers
    unpack it as they unpack `return a, b`; also where the end may be reached, for a call
    site that unpacks the result, the end then raising Python's TypeError);
  * statements after a jump are guarded by ``if not <flag>:``.
The backward sweep then only needs each loop's trip count and each branch's test, which it
records like any other value. Flags are named after the loop's line (``broke_L7``).

Before/after:
    for i in range(n):                   broke_L2 = False
        h = f(h)                         for i in range(n):
        if done(h):                          h = f(h)
            break                            c = done(h)
        h = g(h)                             if c:
                                                 broke_L2 = True
                                             if not broke_L2:
                                                 h = g(h)
                                             if broke_L2:
                                                 break
"""

from __future__ import annotations

import gast

from ..naming import fresh
from .pyforms import entry_of, exit_of


def _name(id_, ctx=None):
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def _assign(name, value, node):
    a = gast.Assign(targets=[_name(name, gast.Store())], value=gast.Constant(value, None))
    return gast.copy_location(a, node)


def _not(flags, node):
    test = _name(flags[0])
    for f in flags[1:]:
        test = gast.BinOp(left=test, op=gast.BitOr(), right=_name(f))
    return gast.copy_location(gast.UnaryOp(op=gast.Not(), operand=test), node)


def _jumps(node) -> set[str]:
    """Jumps a statement may perform: returns anywhere, break/continue outside nested loops.

    A loop's own break/continue belong to it: for a loop, ask `_jumps_body(loop.body)`.
    """
    found = set()
    stack = [(node, False)]
    while stack:
        n, in_loop = stack.pop()
        if isinstance(n, gast.Return):
            found.add("return")
        elif isinstance(n, gast.Break) and not in_loop:
            found.add("break")
        elif isinstance(n, gast.Continue) and not in_loop:
            found.add("continue")
        nested = in_loop or isinstance(n, (gast.For, gast.While))
        stack.extend((c, nested) for c in gast.iter_child_nodes(n))
    return found


def _jumps_body(body) -> set[str]:
    out = set()
    for s in body:
        out |= _jumps(s)
    return out


def _own_returns(fdef) -> list:
    """The `return` statements of `fdef` itself (not of functions or lambdas nested in it)."""
    out, stack = [], list(fdef.body)
    while stack:
        n = stack.pop()
        if isinstance(n, gast.Return):
            out.append(n)
        if not isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda,
                              gast.ClassDef)):
            stack.extend(gast.iter_child_nodes(n))
    return out


def _falls_off(stmts) -> bool:
    """May running `stmts` reach their end (no return or raise stops it on every path)?"""
    if not stmts:
        return True
    last = stmts[-1]
    if isinstance(last, (gast.Return, gast.Raise)):
        return False
    if isinstance(last, gast.If):
        return _falls_off(last.body) or _falls_off(last.orelse)
    return True


def _unreachable_tail(body) -> bool:
    """Is `body`'s last statement a return no path reaches (the `return None` the normaliser
    appends after an `if ...: return a / else: return b`)?"""
    return len(body) > 1 and isinstance(body[-1], gast.Return) and not _falls_off(body[:-1])


def _none_tail(body) -> bool:
    """Is `body`'s last statement a `return None` some path reaches (the one the normaliser
    appends where the end may be reached, or the user's own)?"""
    last = body[-1] if body else None
    return isinstance(last, gast.Return) and isinstance(last.value, gast.Constant) and \
        last.value.value is None and len(body) > 1 and _falls_off(body[:-1])


def _tuple_arity(fdef) -> int:
    """n where every return of `fdef` that may run gives a tuple display of n items (no
    starred item), save perhaps a `return None` at its end (`_none_tail`: the caller that
    unpacks it gets a TypeError there, `desugar` raises it): `if mode == "valid": return
    (0, 0), (0, 0) / elif mode == "same": return ...`; else 0."""
    tailing = _unreachable_tail(fdef.body) or _none_tail(fdef.body)
    body = fdef.body[:-1] if tailing else fdef.body
    if _falls_off(body) and not _none_tail(fdef.body):
        return 0
    tail = fdef.body[-1] if body is not fdef.body else None
    sizes = {len(r.value.elts) if isinstance(r.value, gast.Tuple) and not any(
        isinstance(e, gast.Starred) for e in r.value.elts) else 0
        for r in _own_returns(fdef) if r is not tail}
    n = sizes.pop() if len(sizes) == 1 else 0
    return n if n >= 2 else 0


def _none_reached(name, returned, node):
    """``if not returned: raise TypeError(...)``: the end of a function whose other returns
    give tuples, reached. Python returns None there, which the caller unpacking it refuses
    with this TypeError; srcad gives the function one tuple form, so it stops here."""
    msg = (f"cannot unpack non-iterable NoneType object: `{name}` reached its end (line "
           f"{node.lineno}), where Python returns None; its other returns give tuples")
    exc = gast.Call(func=_name("TypeError"), args=[gast.Constant(msg, None)], keywords=[])
    test = gast.UnaryOp(op=gast.Not(), operand=_name(returned))
    guard = gast.If(test=test, body=[gast.Raise(exc=exc, cause=None)], orelse=[])
    return gast.fix_missing_locations(gast.copy_location(guard, node))


class Desugarer:
    def __init__(self, taken: set[str]):
        self.taken = taken
        self.returned: str | None = None
        self.result: str | None = None
        # a function whose every return gives an n-tuple: its items' names (the single
        # return at the end then gives a tuple too, which a caller may unpack)
        self.results: list | None = None

    def fresh(self, base):
        return fresh(base, self.taken)

    def block(self, stmts, ctx) -> list:
        """ctx: {'break': flag, 'continue': flag, 'return': flag} for the enclosing loop."""
        out = []
        for i, s in enumerate(stmts):
            new, flags = self.stmt(s, ctx)
            out.extend(new)
            if flags:
                self.guarded(stmts, i + 1, flags, ctx, out)
                return out
        return out

    def guarded(self, stmts, start, flags, ctx, out) -> None:
        """The statements from `start` on, after a jump that set one of `flags`: under
        ``if not <flags>:``, except the exit of a `with` block the jump leaves (pyforms.py),
        which runs in any case (the statements after it are guarded again)."""
        entered = set()
        for s in stmts[:start]:
            entered = (entered | {entry_of(s)}) - {exit_of(s)}
        end = next((k for k in range(start, len(stmts)) if exit_of(stmts[k]) in entered - {None}),
                   len(stmts))
        part = stmts[start:end]
        rest = self.block(part, ctx)
        if rest:
            guard = gast.If(test=_not(sorted(flags), stmts[start]), body=rest, orelse=[])
            out.append(gast.copy_location(guard, stmts[start]))
        if end < len(stmts):
            for s in part:
                flags = flags | self.stmt_flags_probe(s, ctx)
            out.append(stmts[end])
            self.guarded(stmts, end + 1, flags, ctx, out)

    def stmt(self, s, ctx):
        """The desugared statements and the flags they may have set."""
        if isinstance(s, gast.Return):
            if self.returned is None:
                self.returned = self.fresh("returned")
                self.result = self.fresh("result")
            value = s.value if s.value is not None else gast.Constant(None, None)
            target = _name(self.result, gast.Store()) if self.results is None else gast.Tuple(
                elts=[_name(r, gast.Store()) for r in self.results], ctx=gast.Store())
            a = gast.copy_location(gast.Assign(targets=[target], value=value), s)
            return [a, _assign(self.returned, True, s)], {self.returned}
        if isinstance(s, gast.Break):
            return [_assign(ctx["break"], True, s)], {ctx["break"]}
        if isinstance(s, gast.Continue):
            return [_assign(ctx["continue"], True, s)], {ctx["continue"]}
        if isinstance(s, gast.If):
            # always descend: a loop nested in a branch may hold jumps of its own
            body, f1 = self.block_flags(s.body, ctx)
            orelse, f2 = self.block_flags(s.orelse, ctx)
            s.body = body or [gast.Pass()]
            s.orelse = orelse
            return [s], f1 | f2
        if isinstance(s, (gast.For, gast.While)):
            inner = _jumps_body(s.body)
            pre = []
            loop_ctx = dict(ctx)
            exits = []
            if "break" in inner:
                loop_ctx["break"] = self.fresh(f"broke_L{s.lineno}")
                pre.append(_assign(loop_ctx["break"], False, s))
                exits.append(loop_ctx["break"])
            head = []
            if "continue" in inner:
                loop_ctx["continue"] = self.fresh(f"skip_L{s.lineno}")
                head.append(_assign(loop_ctx["continue"], False, s))
            body = self.block(s.body, loop_ctx)
            flags = set()
            if "return" in inner:
                exits.append(self.returned)
                flags.add(self.returned)
            tail = [gast.copy_location(gast.If(test=_name(f), body=[gast.Break()], orelse=[]), s)
                    for f in exits]
            s.body = head + body + tail
            return pre + [s], flags
        return [s], set()

    def block_flags(self, stmts, ctx):
        flags = set()
        for s in stmts:
            flags |= self.stmt_flags_probe(s, ctx)
        return self.block(stmts, ctx), flags

    def stmt_flags_probe(self, s, ctx):
        jumps = _jumps(s)
        out = set()
        if "return" in jumps:
            if self.returned is None:
                self.returned = self.fresh("returned")
                self.result = self.fresh("result")
            out.add(self.returned)
        if "break" in jumps and ctx.get("break"):
            out.add(ctx["break"])
        if "continue" in jumps and ctx.get("continue"):
            out.add(ctx["continue"])
        return out


def desugar(fdef: gast.FunctionDef, taken: set[str], unpacked: int = 0) -> None:
    """Rewrite `fdef.body` in place (see the module docstring). `unpacked`: n where the
    caller unpacks the result into n names (a `return None` reached at the end is then
    Python's TypeError, raised there; elsewhere the function keeps its None)."""
    body = fdef.body
    # a single trailing return needs no flag
    early = [n for s in body[:-1] for n in gast.walk(s) if isinstance(n, gast.Return)]
    early += [n for n in gast.walk(body[-1]) if isinstance(n, gast.Return)] if body and not \
        isinstance(body[-1], gast.Return) else []
    loops = any(isinstance(n, (gast.Break, gast.Continue)) for s in body for n in gast.walk(s))
    if not early and not loops:
        return
    d = Desugarer(taken)
    if early:
        d.returned = d.fresh("returned")
        d.result = d.fresh("result")
    last = body[-1] if body and isinstance(body[-1], gast.Return) else None
    if not early:  # only loop jumps: the final return stays as it is
        fdef.body = d.block(body[:-1] if last is not None else body, {}) + (
            [last] if last is not None else [])
        return
    n = _tuple_arity(fdef)
    if n and _none_tail(body) and n != unpacked:
        n = 0  # (`r = helper(x); if r is None:` reads Python's None)
    none_end = None
    if n:
        d.results = [d.fresh(f"result{i}") for i in range(n)]
        if _none_tail(body):  # (Python returns None there: raised where it is reached)
            none_end = body[-1]
            body = body[:-1]
        elif _unreachable_tail(body):  # (no path reaches it: it would assign None to n names)
            body = body[:-1]
    new = d.block(body, {})
    if none_end is not None:
        new.append(_none_reached(fdef.name, d.returned, none_end))
    if early:
        init = [_assign(d.returned, False, body[0])]
        results = [d.result] if d.results is None else d.results
        init_result = [_assign(r, None, body[0]) for r in results]
        ret = gast.Return(value=_name(d.result) if d.results is None else gast.Tuple(
            elts=[_name(r) for r in d.results], ctx=gast.Load()))
        gast.copy_location(ret, last if last is not None else body[-1])
        fdef.body = init + init_result + new + [ret]
    else:
        fdef.body = new
