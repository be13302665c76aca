"""The pipeline after the first call: from a function's normalised IR and what the probe
learned to compiled generated code, one stage at a time.

    IR --transform (reverse | forward: op-table templates)--> generated functions
       --optimize (dead code, copies, `del` after last use; split pairs get their saved
                   values)--> --lower (fuse=True: elementwise chains to C kernels)-->
       --codegen (commented Python source)--> --compile--> callables

The stages before it run once per function (parse, fence, normalise: srcad/frontend) and once
per input signature (the probe, srcad/probe.py); `build` is what runs per signature after
them. `dump(stage, value)` sees the program after each stage (`python -m srcad show --stage`).

    c = build(fn_ir, infos, "W: float64[3, 2], ...", Options.of("grad", ("W",)))
    c.functions["main"](W, x)     # -> dW
    print(c.source)               # the generated module
"""

from __future__ import annotations

import ast
import hashlib
import types
from dataclasses import dataclass, field, replace

from . import ir, memplan, runtime_context
from .build import pinned, pooled
from .codegen import compile_source, render
from .lower import lower as lower_chains
from .lower import matmuls_as_gemm, threaded_forms
from .errors import SrcadError
from .gcode import GFunction, Line, exposed_reads, line_writes
from .optimize import optimize
from .options import Options
from .transform.forward import Forward
from .transform.module import Module
from .transform.reverse import Reverse
from .transform.templates import atom_expr

@dataclass
class Program:
    """Generated functions on their way through the stages, with what they refer to."""

    functions: list  # GFunctions, callees' subroutines first
    roles: dict  # "main" | "fwd" | "bwd" -> the name of that function
    inject: dict  # names generated code reads from the user's module -> objects
    helpers: dict  # names the op table's rules read (runtime helpers, numpy) -> objects
    infos: dict  # static Info of every name the optimiser may ask about
    pairs: list = field(default_factory=list)  # (fwd, bwd, ret expr, line, infos) to finish
    saved: list = field(default_factory=list)  # what the split forward hands its backward
    residuals: dict = field(default_factory=dict)  # id(user call) -> its residuals' name
    rematerialised: list = field(default_factory=list)  # (name, line) recomputed values
    memory: object = None  # what the memory plan did (srcad.memplan.Stats)
    infos_of: dict = field(default_factory=dict)  # function name -> its names' Info (lower)
    kernels: object = None  # after lower: the srcad.lower.LoweredModule, or None


@dataclass
class Compiled:
    source: str
    functions: dict
    saved: list
    residuals: dict = None  # id(user call) -> the name its residuals are saved under
    plan: object = None  # the memory_budget policy's choices (srcad.plan.BudgetPlan)
    rematerialised: list = None  # (name, line) of elementwise values the backward recomputes
    kernels: object = None  # fuse=True: the srcad.lower.LoweredModule (its C source, module)
    program: object = None  # the Program it was made from (srcad.memplan.peak walks it)
    namespace: dict = None  # the generated module's globals (see `relink`)
    roles: dict = None  # "main" | "fwd" | "bwd" -> the generated function's name
    pooled: bool = False  # the entry points run with the buffer pool (memory_plan)


def build(fn_ir: ir.Function, infos, signature: str, opts: Options, dump=None) -> Compiled:
    """Transform, optimise, lower, render and compile one specialisation of `fn_ir`."""
    say = dump or (lambda stage, value: None)
    program = transform(fn_ir, infos, opts)
    say("forward" if opts.kind == "jvp" else "reverse", program.functions)
    finish(program)
    # compute in place where a buffer dies (fuse=True: after lowering, where the kernels'
    # calls write into the planned buffers with out=)
    if opts.memory_plan and not opts.reparsed and not opts.fuse:
        memplan.plan(program, opts.kind)
    say("optimize", program.functions)
    origin = header(fn_ir, signature, opts)
    program = lower(program, opts, origin)
    if opts.memory_plan and not opts.reparsed and opts.fuse:
        memplan.plan(program, opts.kind)
    say("lower", program.functions)
    k = program.kernels
    # (fused code: its matmuls, sums over leading axes and copying reshapes on srcad's
    # threads: srcad.runtime.gemm, lead_sum, reshaped)
    shown = (threaded_forms(matmuls_as_gemm(program.functions))
             if opts.fuse and not opts.reparsed else program.functions)
    source = render(shown, origin=origin, inject=program.inject,
                    kernels=(k.name, sorted(x.name for x in k.kernels)) if k else None)
    say("final", source)
    return load(source, program, fn_ir, opts)


# -- the stages ------------------------------------------------------------------------------


def transform(fn_ir: ir.Function, infos, opts: Options) -> Program:
    """Reverse mode (grad, value_and_grad, vjp) or forward mode (jvp): generated functions,
    not yet optimised."""
    module = Module(infos, opts)
    module.reserve_helpers(fn_ir)
    if opts.kind == "jvp":
        fwd_t = Forward(fn_ir, list(opts.wrt), None, module)
        main = fwd_t.jvp()
        subs = [f for f, _ in module.jvp_functions.values()]
        inject = dict(fn_ir.inject)
        helpers = dict(fwd_t.globals)
        for _, sub in module.jvp_functions.values():
            inject.update(sub.fn.inject)
            helpers.update(sub.globals)
        infos_of = {main.name: _with_tangents(fwd_t)}
        infos_of.update({f.name: _with_tangents(sub) for f, sub in module.jvp_functions.values()})
        return Program(subs + [main], {"main": main.name}, inject, helpers, fwd_t.infos,
                       infos_of=infos_of)
    rev = Reverse(fn_ir, list(opts.wrt), None, module)
    if opts.kind == "vjp":
        fwd, bwd = rev.split()
        main, roles = [fwd, bwd], {"fwd": fwd.name, "bwd": bwd.name}
        pairs = [(fwd, bwd, atom_expr(rev.fn.ret.value), rev.fn.ret.line, rev.all_infos())]
    else:
        main = rev.joint(with_value=(opts.kind == "value_and_grad"),
                         single=opts.single).functions
        roles, pairs = {"main": main[0].name}, []
    functions, inject, helpers = [], dict(fn_ir.inject), dict(rev.globals)
    for pair in module.pairs.values():
        pairs.append((pair.fwd, pair.bwd, pair.ret, pair.rev.fn.ret.line,
                      pair.rev.all_infos()))
        functions += [pair.fwd, pair.bwd]
        helpers.update(pair.rev.globals)
        for k, v in pair.rev.fn.inject.items():
            if inject.get(k, v) is not v:
                raise SrcadError(
                    f"{fn_ir.name} and {pair.rev.fn.name} both use the name `{k}` for "
                    f"different objects, which srcad cannot yet put in one generated module",
                    filename=pair.rev.fn.filename, lineno=pair.rev.fn.first_line,
                    hint=f"rename `{k}` in one of the two modules")
            inject[k] = v
    program = Program(functions + main, roles, inject, helpers, rev.all_infos(), pairs)
    program.infos_of = {f.name: program.infos for f in main}
    for pair in module.pairs.values():
        program.infos_of[pair.fwd.name] = program.infos_of[pair.bwd.name] = \
            pair.rev.all_infos()
    program.residuals = {rev.original_id(k): n for k, n in rev.saved_of.items()}
    program.rematerialised = list(rev.rematerialised) + [
        (f"{pair.rev.fn.name}: {n}", line) for pair in module.pairs.values()
        for n, line in pair.rev.rematerialised]
    return program


def finish(program: Program) -> None:
    """Optimise every function; a split pair's backward first, then what it reads from the
    forward becomes the forward's saved values (`finish_pair`)."""
    paired = set()
    for fwd, bwd, ret, line, infos in program.pairs:
        saved = finish_pair(fwd, bwd, ret, line, infos)
        paired |= {id(fwd), id(bwd)}
        if fwd.name == program.roles.get("fwd"):
            program.saved = saved
    for f in program.functions:
        if id(f) not in paired:
            optimize(f, program.infos)


def lower(program: Program, opts: Options, origin: dict) -> Program:
    """[lower] fuse=True: each elementwise chain of the optimised functions becomes one call
    of a C kernel, the kernels of one specialisation one extension module (srcad/lower,
    srcad/build). Code that will be transformed again (higher order) is never lowered; with
    nothing to fuse, or no working compiler (one warning), the program runs unfused."""
    if not opts.fuse or opts.reparsed:
        return program
    functions, kernels = lower_chains(program.functions, program.infos_of,
                                      {**program.inject, **program.helpers}, origin)
    return replace(program, functions=functions, kernels=kernels)


def header(fn_ir: ir.Function, signature: str, opts: Options) -> dict:
    """What the generated file's header says: where it came from and how it was built."""
    return {
        "filename": fn_ir.filename,
        "name": fn_ir.name,
        "first_line": fn_ir.first_line,
        "last_line": fn_ir.last_line,
        "source": "\n".join(fn_ir.source_lines[k] for k in sorted(fn_ir.source_lines)),
        "options": opts.describe(),
        "signature": signature,
    }


def load(source: str, program: Program, fn_ir: ir.Function, opts: Options) -> Compiled:
    """Compile the source under a stable file name and pick out the functions by role."""
    tag = hashlib.sha256(source.encode()).hexdigest()[:8]
    filename = f"<srcad-generated {fn_ir.name}_{opts.kind} {tag}>"
    kernels = program.kernels.functions if program.kernels is not None else {}
    ns = compile_source(source, filename, {**program.inject, **{
        k: v for k, v in program.helpers.items() if k != "np"}, **kernels})
    # memory_plan: the entry points run with the buffer pool as numpy's allocator, so that a
    # repeated call reuses its buffers across calls too (no fresh pages in steady state);
    # without it, still with the BLAS's threads as every srcad call has them (`pinned`)
    fns = {role: _unwinding(pooled(ns[n]) if opts.memory_plan else pinned(ns[n]), ns)
           for role, n in program.roles.items()}
    return Compiled(source=source, functions=fns, saved=program.saved,
                    residuals=program.residuals, plan=opts.plan,
                    rematerialised=program.rematerialised, kernels=program.kernels,
                    program=program, namespace=ns, roles=dict(program.roles),
                    pooled=opts.memory_plan)


def _unwinding(fn, ns: dict):
    """An entry point of code with a `with` block exits the contexts a raising call entered
    (srcad/runtime_context.py); any other is `fn` itself."""
    entries = (runtime_context.enter_context, runtime_context.enter_state,
               runtime_context.reenter_context)
    if any(v is e for v in ns.values() for e in entries):
        return runtime_context.unwinding(fn)
    return fn


def relink(c: Compiled, replace_objects: dict) -> Compiled:
    """The same generated code reading other objects under its injected names
    (`replace_objects`: id(old) -> new), as a new module: its functions are made again over
    a copy of the namespace, so code already handed out (a vjp's pullback) keeps reading the
    objects its forward read. Used when a global array is rebound to one of the same shape
    and dtype (srcad/frontend/guards.py): nothing to rebuild."""
    old_ns = c.namespace
    ns = {k: replace_objects.get(id(v), v) for k, v in old_ns.items()}
    for k, v in ns.items():
        if isinstance(v, types.FunctionType) and v.__globals__ is old_ns:
            ns[k] = types.FunctionType(v.__code__, ns, v.__name__, v.__defaults__,
                                       v.__closure__)
    fns = {role: _unwinding(pooled(ns[n]) if c.pooled else pinned(ns[n]), ns)
           for role, n in c.roles.items()}
    return replace(c, functions=fns, namespace=ns)


# -- split pairs ---------------------------------------------------------------------------


def finish_pair(fwd: GFunction, bwd: GFunction, ret_expr, line, infos) -> list[str]:
    """Complete a split pair: the backward unpacks what the forward returns beside its output."""
    optimize(bwd, infos)
    saved = _saved_names(fwd, bwd)
    head = [Line(comment=f"saved by the forward: {', '.join(saved) or 'nothing'}")]
    if saved:
        head.append(Line(ast.Assign(
            targets=[ast.Tuple(elts=[ast.Name(n, ast.Store()) for n in saved], ctx=ast.Store())],
            value=ast.Name(bwd.params[0], ast.Load()), lineno=0)))
    bwd.body = head + bwd.body
    # a saved value made only inside a branch that did not run, or a loop that ran no trips,
    # is unbound at return: start it as None (the backward never reads it then)
    bound = set(fwd.params)
    for ln in fwd.body:
        if ln.node is not None and not ln.compound:
            bound |= line_writes(ln)
    unbound = [n for n in saved if n not in bound]
    if unbound:
        init = [Line(ast.Assign(targets=[ast.Name(n, ast.Store())], value=ast.Constant(None),
                                lineno=0)) for n in unbound]
        at = next((i for i, ln in enumerate(fwd.body) if ln.node is not None), len(fwd.body))
        fwd.body[at:at] = init
    fwd.body.append(Line(ast.Return(value=ast.Tuple(elts=[
        ret_expr, ast.Tuple(elts=[ast.Name(n, ast.Load()) for n in saved], ctx=ast.Load())],
        ctx=ast.Load())), line))
    optimize(fwd, infos)
    return saved


def _saved_names(fwd, bwd) -> list[str]:
    """Names the backward reads (before assigning them) that the forward (or the arguments)
    defined, in order."""
    reads = exposed_reads(bwd.body)
    order = list(fwd.params)
    for ln in fwd.body:
        if ln.node is not None:
            order.extend(sorted(line_writes(ln) - set(order)))
    return [n for n in order if n in reads]


def _with_tangents(fwd) -> dict:
    """A forward transform's Info by name, its tangents' (a primal's) included."""
    infos = dict(fwd.infos)
    infos.update({t: infos[p] for p, t in fwd.tangent.items() if p in infos})
    return infos
