"""Template substitution: inline an op's spelling or a rule's expression over atoms.

A template is an `ast.expr` over parameter names (`x`, `y`, `g`, `out`, ...). `subst`
replaces each parameter name by an expression; atoms become expressions with `atom_expr`.
A subscript index stays subscript syntax inside `a[...]` and becomes `np.s_[...]`
elsewhere, so a rule can pass it to a helper.
"""

from __future__ import annotations

import ast

import numpy as np

from .. import ir
from ..gcode import clone, dtype_src, name, parse_expr
from ..ops.table import Op


def atom_expr(atom, *, in_subscript: bool = False) -> ast.expr:
    if isinstance(atom, ir.Var):
        return name(atom.name)
    if isinstance(atom, ir.Const):
        return parse_expr(atom.src)
    if isinstance(atom, ir.Seq):
        elts = [atom_expr(a) for a in atom.items]
        if atom.kind == "list":
            return ast.List(elts=elts, ctx=ast.Load())
        return ast.Tuple(elts=elts, ctx=ast.Load())
    if isinstance(atom, ir.Slice):
        def part(a):
            return None if a is None else atom_expr(a)

        return ast.Slice(lower=part(atom.lower), upper=part(atom.upper), step=part(atom.step))
    if isinstance(atom, ir.Index):
        parts = [atom_expr(p) for p in atom.parts]
        inner = ast.Tuple(elts=parts, ctx=ast.Load()) if atom.is_tuple else parts[0]
        if in_subscript:
            return inner
        needs_s = any(isinstance(p, ir.Slice) for p in atom.parts) or any(
            isinstance(p, ir.Const) and (p.value is None or p.value is Ellipsis)
            for p in atom.parts
        )
        if needs_s:
            return ast.Subscript(
                value=ast.Attribute(value=name("np"), attr="s_", ctx=ast.Load()),
                slice=inner,
                ctx=ast.Load(),
            )
        return inner
    raise TypeError(f"not an atom: {atom!r}")


def subst(template: ast.expr, mapping: dict) -> ast.expr:
    """Replace names in `template`; values are ast exprs or atoms (subscript-aware).

    A copy of `template` (`gcode.clone`, as deepcopy) in which each loaded name of
    `mapping` is a fresh copy of its value -- a name that is a subscript's whole index as
    its `in_subscript` spelling -- made in one walk (the template itself is not touched)."""

    def maker(v):
        if isinstance(v, ast.AST):
            return lambda in_sub: clone(v)
        return lambda in_sub: atom_expr(v, in_subscript=in_sub)

    return _subst({k: maker(v) for k, v in mapping.items()}, template, {})


def _subst(makers: dict, node, memo: dict):
    if isinstance(node, ast.Name):
        if node.id in makers and isinstance(node.ctx, ast.Load):
            return makers[node.id](False)
        return clone(node, memo)
    cls = node.__class__
    new = cls.__new__(cls)
    fields = node._fields
    d = new.__dict__
    for k, v in node.__dict__.items():
        if k not in fields:  # (line numbers, anything else: copied, not substituted into)
            d[k] = clone(v, memo)
        elif isinstance(v, ast.AST):
            if k == "slice" and cls is ast.Subscript and isinstance(v, ast.Name) and \
                    v.id in makers:
                d[k] = makers[v.id](True)
            else:
                d[k] = _subst(makers, v, memo)
                if k == "value" and cls is ast.Subscript and isinstance(d[k], ast.Constant) \
                        and type(d[k].value) in (int, float):
                    # (`g[index]` of a cotangent known to be a number -- a 0-d array's, `m[...]
                    # = v`: indexed as numpy indexes a 0-d array)
                    d[k] = ast.Call(func=ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()),
                                                       attr="asarray", ctx=ast.Load()),
                                    args=[d[k]], keywords=[])
        elif type(v) is list:
            d[k] = [_subst(makers, x, memo) if isinstance(x, ast.AST) else clone(x, memo)
                    for x in v]
        else:
            d[k] = clone(v, memo)
    return new


def const_atom(value) -> ir.Const:
    if isinstance(value, np.dtype):
        return ir.Const(value, dtype_src(value))
    return ir.Const(value, repr(value) if not isinstance(value, type) else f"np.{value.__name__}")


def forward_expr(op: Op, args: dict, info_of=None) -> ast.expr:
    """How generated code spells `op(**args)`: the row's spelling with atoms filled in.

    A call-shaped spelling (``np.sum(a, axis, keepdims)``) passes required parameters by
    position and the others by keyword, only when given: ``np.sum(x, axis=1)``; a variadic
    parameter (``np.einsum(subscripts, *operands)``) spreads its items by position.
    With `info_of` (an expression's static Info, or None), a row's `forward_form` may answer
    a faster spelling of the same values for the operands' shapes (tape mode runs the same):
    ``x @ W`` with x (8, 64, 128) and W (128, 512) is ``(x.reshape(512, 128) @ W).reshape((8,
    64, 512))``, one 2-D GEMM.
    """
    if info_of is not None and op.forward_form is not None and op.star is None:
        infos = {p.name: info_of(atom_expr(args[p.name])) for p in op.params
                 if isinstance(args.get(p.name), ir.Var)}
        template = op.forward_template(infos)
        if template is not None:
            return subst(parse_expr(template), {p.name: args[p.name] if p.name in args
                                                else const_atom(p.default) for p in op.params})
    sp = op.spelling
    if (
        isinstance(sp, ast.Call)
        and [_arg_name(a) for a in sp.args] == list(op.param_names)
    ):
        call = clone(sp)
        call.args = []
        for p in op.params:
            if p.star and p.name in args:  # np.einsum(s, *operands): the items spread
                items = args[p.name]
                if isinstance(items, ir.Seq):
                    call.args.extend(atom_expr(a) for a in items.items)
                else:
                    call.args.append(ast.Starred(value=atom_expr(items), ctx=ast.Load()))
            elif p.required:
                call.args.append(atom_expr(args[p.name]))
        call.keywords = [
            ast.keyword(arg=p.name, value=atom_expr(args[p.name]))
            for p in op.params
            if not p.required and not p.star and p.name in args
        ]
        return call
    mapping = {}
    for p in op.params:
        if p.name in args:
            mapping[p.name] = args[p.name]
        else:
            mapping[p.name] = const_atom(p.default)
    return subst(sp, mapping)


def _arg_name(node) -> str | None:
    """A spelling's argument as a parameter name (``*operands`` is ``operands``)."""
    if isinstance(node, ast.Starred):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def as_array_operand(op: Op, pname: str, atom, containers=frozenset()):
    """`atom` as a rule reads it for parameter `pname`: numpy turns a list or tuple given
    where it takes one array into an array, and so must the rule (``x > y`` on a list is
    Python's comparison, not numpy's): ``np.asarray(atom)`` for a literal sequence or a name
    that held one on the first call (`containers`), else `atom` itself (None stays None)."""
    if atom is None or not op.takes_array(pname):
        return atom
    if isinstance(atom, ir.Seq) or (isinstance(atom, ir.Var) and atom.name in containers):
        return ast.Call(func=ast.Attribute(value=name("np"), attr="asarray", ctx=ast.Load()),
                        args=[atom_expr(atom)], keywords=[])
    return atom


def default_atom(op: Op, pname: str):
    for p in op.params:
        if p.name == pname:
            return const_atom(p.default)
    raise KeyError(pname)


def is_default(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, str, tuple, type, np.dtype))


def range_expr(loop) -> ast.expr:
    """``range(a, b, c)`` (shortest spelling) for an `ir.For`, sliced ``[:limit]`` if it has one;
    not reversed: the caller decides the direction."""
    args = [loop.start, loop.stop, loop.step]
    if isinstance(loop.step, ir.Const) and loop.step.value == 1:
        args = args[:2]
        if isinstance(loop.start, ir.Const) and loop.start.value == 0:
            args = args[1:]
    rng = ast.Call(func=name("range"), args=[atom_expr(a) for a in args], keywords=[])
    if loop.limit is not None:
        rng = ast.Subscript(value=rng, slice=ast.Slice(upper=atom_expr(loop.limit)),
                            ctx=ast.Load())
    return rng


def loop_iter(loop) -> ast.expr:
    """What a forward loop iterates over: its range, reversed if the loop walks it backward."""
    rng = range_expr(loop)
    if loop.reverse:
        return ast.Call(func=name("reversed"), args=[rng], keywords=[])
    return rng


def effect_stmt(s: ir.Effect) -> ast.stmt:
    """How generated code spells an effect statement: the user's call, assert or raise."""
    if s.kind == "call":
        return ast.Expr(value=forward_expr(s.op, s.args))
    if s.kind == "setattr":  # self.out = self_out (frontend/attrstate.py)
        target = ast.Attribute(value=atom_expr(s.args["_obj"]), attr=s.args["attr"].value,
                               ctx=ast.Store())
        value = atom_expr(s.args["value"])
        if "list" in s.args:  # (a list the function made: the object holds its own copy)
            value = ast.Call(func=name("list"), args=[value], keywords=[])
        return ast.Assign(targets=[target], value=value, lineno=0)
    if s.kind == "setitem":  # param[k] = v into the caller's dict (frontend/aliasing.py)
        obj = name(s.args["caller"].value) if "caller" in s.args else atom_expr(s.args["_obj"])
        args = [obj, atom_expr(s.args["index"]), atom_expr(s.args["value"])]
        if "old" in s.args:  # (a write through a name bound to the item: `store_through`)
            return ast.Expr(value=ast.Call(func=name("store_through"),
                                           args=args + [atom_expr(s.args["old"])], keywords=[]))
        if "levels" in s.args:  # (`p[0][1] = v`: into the caller's own p[0], `store_into`)
            args.append(atom_expr(s.args["levels"]))
        return ast.Expr(value=ast.Call(func=name("store_into"), args=args, keywords=[]))
    if s.kind == "sync":  # the caller's container after a method changed the function's copy
        return ast.Expr(value=ast.Call(func=name("sync_into"), args=[
            name(s.args["caller"].value), atom_expr(s.args["value"])], keywords=[]))
    if s.kind == "own":  # p_caller, p = p, own(p) (frontend/normalize.py: own_on_entry)
        p, caller = atom_expr(s.args["param"]), s.args["caller"].value
        return ast.Assign(targets=[ast.Tuple(elts=[ast.Name(id=caller, ctx=ast.Store()),
                                                   ast.Name(id=p.id, ctx=ast.Store())],
                                             ctx=ast.Store())],
                          value=ast.Tuple(elts=[p, ast.Call(func=name("own"), args=[
                              atom_expr(s.args["param"])], keywords=[])], ctx=ast.Load()),
                          lineno=0)
    if s.kind == "assert":
        msg = s.args.get("msg")
        return ast.Assert(test=atom_expr(s.args["test"]),
                          msg=None if msg is None else atom_expr(msg))
    if s.op is not None:  # raise ValueError(...)
        return ast.Raise(exc=forward_expr(s.op, s.args), cause=None)
    return ast.Raise(exc=atom_expr(s.args["exc"]), cause=None)
