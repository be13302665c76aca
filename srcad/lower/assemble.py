"""From a closed chain (a `fuse.Region`) to a `kir.Kernel`, its call line and its comment.

The chain's statements become SSA statements in order; a name the chain reads before
writing it is an argument (passed by the call, in order of first use). A value is an output
when something outside the chain reads it (`FunctionLowering.refs` counts every load and
``del`` of a name in the function) or when it updates an argument in place. The kernel's
fallback -- the same statements as Python, run when the arguments are not what the kernel
was built for -- is written from the same trees, so it computes exactly what the comment
above the call says.
"""

from __future__ import annotations

import ast

from ..gcode import Line, clone
from . import cgen, kir
from .cgen_rows import RowBlock
from .kir import Ref


def rebuild(t) -> ast.expr:
    """The Python expression a typed tree computes (its split-off operands as names)."""
    if t.kind == "leaf":
        return ast.Name(t.name, ast.Load())
    if t.kind == "const":
        return clone(t.node)
    memo = {id(sub): rebuild(t.children[p]) for p, sub in t.app.args.items()}
    return clone(t.node, memo)


def part_statement(p) -> ast.stmt:
    if p.aug:
        value = rebuild(p.tree.children[list(p.tree.app.args)[1]])
        return ast.AugAssign(target=ast.Name(p.target, ast.Store()), op=p.tree.node.op,
                             value=value)
    return ast.Assign(targets=[ast.Name(p.target, ast.Store())], value=rebuild(p.tree),
                      lineno=0)


def build_kernel(fl, r):
    """(Kernel, call Line, comment Lines, names the chain no longer binds)."""
    args: list[kir.Arg] = []
    arg_of: dict[str, int] = {}
    used: set = set()
    stmts: list[kir.Stmt] = []
    ssa: dict[str, Ref] = {}
    leaf_reads: dict[str, int] = {}

    def operand(t, target: str, root: bool) -> Ref:
        if t.kind == "const":
            return Ref("const", value=t.vt.value)
        if t.kind == "leaf":
            leaf_reads[t.name] = leaf_reads.get(t.name, 0) + 1
            if t.name in ssa:
                return ssa[t.name]
            if t.name not in arg_of:
                arg_of[t.name] = len(args)
                args.append(kir.Arg(t.name, t.vt, kir.c_identifier(t.name, used),
                                    row=r.rowwise and t.vt.kind == "array" and
                                    bool(t.vt.ndim) and t.vt.shape[-1] == 1))
            args[arg_of[t.name]].number_ok &= t.weak_ok
            return Ref("arg", arg_of[t.name])
        refs = {p: operand(c, target, False) for p, c in t.children.items()}
        cname = kir.c_identifier(target if root else f"{target}_{t.app.op.name}", used)
        text = ast.unparse(rebuild(t))
        stmts.append(kir.Stmt(target if root else cname, cname, t.app.op, refs, t.typed,
                              t.vt.dtype, None, text,
                              row=r.rowwise and tuple(t.vt.shape) != tuple(r.shape)))
        return Ref("stmt", len(stmts) - 1)

    inout_arg: dict[str, int] = {}
    for p in r.parts:
        external = p.aug and p.target not in ssa
        ref = operand(p.tree, p.target, True)
        s = stmts[ref.index]
        s.line = p.line
        for q in range(len(stmts)):
            if stmts[q].line is None:
                stmts[q].line = p.line
        if external:
            inout_arg[p.target] = arg_of[p.target]
        if p.target in inout_arg:
            s.inout = inout_arg[p.target]
        ssa[p.target] = ref
    # outputs
    must = {p.target for p in r.parts if p.must_bind}
    pend_dels: dict[str, int] = {}
    for _, ln in r.pending:
        if isinstance(ln.node, ast.Delete):
            for t in ln.node.targets:
                pend_dels[t.id] = pend_dels.get(t.id, 0) + 1
    outs, unbound = [], set()
    for name, ref in ssa.items():
        outside = fl.refs.get(name, 0) - leaf_reads.get(name, 0) - pend_dels.get(name, 0)
        # (a made-up name is read where it was hoisted from: by this chain, or later)
        outside += fl.hoist_reads.get(name, 0) if name in must else 0
        if name in inout_arg or outside > 0:
            outs.append(kir.Out(ref.index, name, inout_arg.get(name, -1)))
        else:
            unbound.add(name)
    outs.sort(key=lambda o: o.stmt)
    lines = sorted({p.line for p in r.parts if p.line is not None})
    where = f"{fl.where} " + (f"L{lines[0]}" + (f"-L{lines[-1]}" if len(lines) > 1 else "")
                              if lines else "")
    statements = [part_statement(p) for p in r.parts]
    replaced = [(p.line, ast.unparse(s)) for p, s in zip(r.parts, statements)]
    k = kir.Kernel("", args, stmts, outs, tuple(r.shape), where.strip(), lines, replaced,
                   rowwise=r.rowwise, block_class=RowBlock if r.rowwise else None)
    if len(args) > 64 or len(outs) > 64 or not outs:
        return None
    k.name = cgen.kernel_name(k)
    k.fallback = _fallback_source(k, statements)
    targets = [ast.Name(o.name, ast.Store()) for o in outs]
    call = ast.Call(func=ast.Name(k.name, ast.Load()),
                    args=[ast.Name(a.name, ast.Load()) for a in args], keywords=[])
    node = ast.Assign(targets=[targets[0] if len(targets) == 1 else
                               ast.Tuple(elts=targets, ctx=ast.Store())], value=call, lineno=0)
    span = (f"L{lines[0]}" + (f"-L{lines[-1]}" if len(lines) > 1 else "")) if lines else ""
    shape = ", ".join(map(str, k.shape))
    comments = [Line(comment=f"fused kernel {k.name} ({span}): {k.n_ops} ops in one pass "
                             f"over [{shape}], in place of:")]
    for line, text in replaced:
        for i, piece in enumerate(text.splitlines()):
            tail = f"  # L{line}" if (line is not None and i == 0) else ""
            comments.append(Line(comment=f"  {piece}{tail}"))
    return k, Line(node, r.parts[0].line), comments, unbound


def _fallback_source(k, statements) -> str:
    body = [f"    {ast.unparse(s)}" for s in statements]
    names = [o.name for o in k.outs]
    ret = names[0] if len(names) == 1 else "(" + ", ".join(names) + ",)"
    return (f"def {k.name}({', '.join(a.name for a in k.args)}):\n"
            f'    """{k.name} as numpy code: what the kernel computes ({k.where})."""\n'
            + "\n".join(body) + f"\n    return {ret}\n")
