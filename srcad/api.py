"""The pipeline and the public transforms (grad, value_and_grad, vjp, source).

    fn --parse--> gast --fence/normalize--> IR --(first call: interpret for shapes)-->
       --reverse (op-table templates)--> generated functions --optimize--> --codegen-->
       source --compile--> callables

Parsing and normalising happen once per function; transforming, optimising and compiling
happen once per input signature (shapes, dtypes, integer values), then calls go straight
to the compiled code.
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import inspect
import warnings
from dataclasses import dataclass

import numpy as np

from . import ir, runtime
from .codegen import compile_source, render
from .errors import NonScalarOutputError, SrcadError
from .frontend import normalize, parse_function
from .frontend.opaque import check_opaque_methods
from .gcode import Line
from .interpret import evaluate
from .optimize import optimize
from .transform.reverse import Reverse
from .transform.specialise import Info

_OPTIONS = {"fuse": False, "mode": "source", "memory_budget": None}
_IR_CACHE: dict = {}


def _ir_of(fn) -> ir.Function:
    """The normalised IR of `fn`, cached until the op table changes (a new defvjp rule)."""
    from .ops import generation

    key = (fn, generation())
    if key not in _IR_CACHE:
        _IR_CACHE[key] = normalize(parse_function(fn))
    return _IR_CACHE[key]


def _check_options(options: dict) -> dict:
    unknown = set(options) - set(_OPTIONS)
    if unknown:
        raise SrcadError(
            f"unknown option(s) {', '.join(sorted(unknown))}",
            hint=f"srcad's options are {', '.join(sorted(_OPTIONS))}",
        )
    opts = {**_OPTIONS, **options}
    if opts["mode"] not in ("source", "tape"):
        raise SrcadError(f"mode must be 'source' or 'tape', got {opts['mode']!r}")
    if not isinstance(opts["fuse"], bool):
        raise SrcadError(f"fuse must be True or False, got {opts['fuse']!r}")
    budget = opts["memory_budget"]
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float))
                               or budget < 0):
        raise SrcadError(f"memory_budget must be a number of bytes, got {budget!r}")
    return opts


def _is_float(value) -> bool:
    if isinstance(value, dict):
        return bool(value) and all(_is_float(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_is_float(v) for v in value)
    if isinstance(value, (np.ndarray, np.generic)):
        return np.issubdtype(value.dtype, np.floating)
    return isinstance(value, float)


def _key_of(value):
    if type(value) is np.ndarray:
        return (value.shape, value.dtype)
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str)
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str)
    if isinstance(value, bool) or isinstance(value, int):
        return ("int", type(value).__name__, value)
    if isinstance(value, float):
        return ("float",)
    if isinstance(value, dict):
        return ("dict", tuple((k, _key_of(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key_of(v) for v in value))
    if value is None or isinstance(value, str):
        return ("value", repr(value))
    return ("object", type(value).__qualname__)


def _describe(value) -> str:
    if isinstance(value, (np.ndarray, np.generic)):
        return f"{value.dtype}[{', '.join(map(str, np.shape(value)))}]"
    return type(value).__name__


def probe(fn_ir: ir.Function, args: dict) -> tuple[dict, object]:
    """Run the IR once on the actual arguments: the static Info of every value.

    Returns ({id(function): {name: Info}}, output) for the function and every user function
    it calls. A name that takes values of different shapes or dtypes (in a loop, or across
    calls) gets no Info, so nothing is specialised on it.
    """
    infos: dict = {id(fn_ir): {k: Info.of(v) for k, v in args.items()}}
    varying: set = set()
    executed: set = set()
    functions: dict = {id(fn_ir): fn_ir}

    def record(fn, name, value, site):
        functions[id(fn)] = fn
        executed.add(site)
        table = infos.setdefault(id(fn), {})
        info = Info.of(value)
        key = (id(fn), name)
        if key in varying:
            return
        if name in table and table[name] != info:
            varying.add(key)
            table[name] = None
        else:
            table[name] = info

    try:
        env = evaluate(fn_ir, args, record)
    except SrcadError:
        raise
    except Exception as e:
        line = _failing_line(e, fn_ir)
        raise SrcadError(
            f"{type(e).__name__} in {fn_ir.name}: {e}",
            filename=fn_ir.filename, lineno=line, func=fn_ir.name,
            hint="the error comes from the user's code on these inputs",
        ) from e
    out = env["<return>"]
    for fid, fn in functions.items():
        for name in _path_dependent(fn, executed):
            infos.setdefault(fid, {})[name] = None
    clean = {k: {n: i for n, i in t.items() if i is not None} for k, t in infos.items()}
    return clean, out


def _path_dependent(fn: ir.Function, executed: set) -> set:
    """Names whose shape this call cannot vouch for: assigned by a statement that did not run
    (another branch, a loop that ran no trips), and everything computed from them. Code is
    specialised only on the rest, so that every path shares one correct transform."""
    unknown = set()
    stmts = [s for s in ir.walk(fn.body) if isinstance(s, (ir.Call, ir.UserCall))]
    for s in stmts:
        if id(s) not in executed:
            unknown.update(ir.defs(s))
    changed = bool(unknown)
    while changed:
        changed = False
        for s in stmts:
            if set(ir.uses(s)) & unknown and not set(ir.defs(s)) <= unknown:
                unknown.update(ir.defs(s))
                changed = True
    return unknown


def _failing_line(exc, fn_ir) -> int | None:
    return getattr(exc, "_srcad_line", None)


@dataclass
class Compiled:
    source: str
    functions: dict
    saved: list
    residuals: dict = None  # id(user call) -> the name its residuals are saved under
    plan: object = None  # the memory_budget policy's choices (srcad.checkpoint.BudgetPlan)
    rematerialised: list = None  # (name, line) of elementwise values the backward recomputes
    kernels: object = None  # fuse=True: the srcad.lower.LoweredModule (its C source, module)


class Transformed:
    """A transformed function: calling it runs the generated code for its inputs."""

    def __init__(self, fn, kind: str, wrt, options: dict):
        self.fn = fn
        self.kind = kind  # "grad" | "value_and_grad" | "vjp" | "jvp"
        self.options = _check_options(options)
        self.inner = None
        if isinstance(fn, Transformed):
            # higher order: the generated code of `fn` (for each input signature) is ordinary
            # Python, and it is what this transform parses
            if fn.kind != "grad":
                raise SrcadError(
                    f"srcad can transform a srcad.grad again, not a srcad.{fn.kind}",
                    hint="write the derivative you want as srcad.grad(...) of a function")
            self.inner = fn
            self._ir = fn._ir
            self.params = list(fn.params)
        else:
            self._ir = _ir_of(fn)
            self.params = list(self._ir.params)
        self.single = not isinstance(wrt, (tuple, list))
        self.wrt = self._resolve_wrt(wrt)
        self._cache: dict = {}
        self._last: Compiled | None = None
        self._mains: dict = {}  # specialisation key -> generated function, for __call__
        self._nparams = len(self.params)
        self._fast = self.options["mode"] == "source" and kind in ("grad", "value_and_grad")
        self.__signature__ = inspect.signature(fn)
        functools.update_wrapper(self, fn, updated=())  # (not fn.__dict__: our own state)

    def _resolve_wrt(self, wrt) -> list[str]:
        items = list(wrt) if isinstance(wrt, (tuple, list)) else [wrt]
        if not items and self.kind not in ("vjp", "jvp"):
            raise SrcadError("wrt=() asks for no gradient", hint="name at least one argument")
        names = []
        for w in items:
            if isinstance(w, bool) or not isinstance(w, (int, str)):
                raise SrcadError(f"wrt must hold argument positions or names, got {w!r}")
            if isinstance(w, int):
                if not -len(self.params) <= w < len(self.params):
                    raise SrcadError(
                        f"wrt={w} is out of range: {self._ir.name} has {len(self.params)} "
                        f"parameters ({', '.join(self.params)})")
                names.append(self.params[w])
            else:
                if w not in self.params:
                    raise SrcadError(
                        f"wrt={w!r} is not a parameter of {self._ir.name} "
                        f"(parameters: {', '.join(self.params)})")
                names.append(w)
        if len(set(names)) != len(names):
            raise SrcadError(f"wrt names an argument twice: {items}")
        return names

    # -- arguments ---------------------------------------------------------------------------
    def bind(self, args, kwargs) -> list:
        if not kwargs and len(args) == len(self.params):
            return list(args)
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as e:
            raise SrcadError(f"{self._ir.name}(): {e}") from None
        bound.apply_defaults()
        return [bound.arguments[p] for p in self.params]

    def _check_wrt_values(self, values: dict, wrt) -> None:
        for w in wrt:
            v = values[w]
            if not _is_float(v):
                what = _describe(v) if isinstance(v, (np.ndarray, np.generic)) else \
                    type(v).__name__
                raise SrcadError(
                    f"cannot differentiate {self._ir.name} with respect to `{w}`, a {what}: "
                    f"gradients are defined for floating-point arguments only",
                    filename=self._ir.filename, lineno=self._ir.first_line, func=self._ir.name,
                    hint=f"pass `{w}` as a float array (e.g. np.asarray({w}, dtype=float)) or "
                    f"leave it out of wrt")

    # -- compilation -------------------------------------------------------------------------
    def compiled(self, values: list, given: int | None = None, *,
                 to_transform: bool = False) -> Compiled:
        """The generated code for these argument values (built on first sight of their
        shapes). `given`: for vjp/jvp, how many leading arguments are primals; parameters
        left to their defaults get no derivative. `to_transform`: the code will be parsed
        and transformed again (higher order), so loops are not checkpointed (the gradient
        is the same, bit for bit)."""
        key = tuple([(v.shape, v.dtype) if type(v) is np.ndarray else _key_of(v)
                     for v in values]) + (given,) + ((True,) if to_transform else ())
        hit = self._cache.get(key)
        if hit is not None:
            if not to_transform:
                self._last = hit
            return hit
        if self.inner is not None:
            main = self.inner.compiled(values, to_transform=True).functions["main"]
            self._ir = _ir_of(main)
        env = dict(zip(self.params, values))
        n = len(self.params) if given is None else given
        wrt = self.wrt if self.kind not in ("vjp", "jvp") else [p for p in self.params[:n]
                                                               if _is_float(env[p])]
        self._check_wrt_values(env, wrt)
        check_opaque_methods(self._ir, wrt)
        # the probe must not consume a random generator's state: it runs on a copy
        probe_env = {k: copy.deepcopy(v) if isinstance(v, (np.random.Generator,
                                                          np.random.RandomState)) else v
                     for k, v in env.items()}
        infos, out = probe(self._ir, probe_env)
        if self.kind not in ("vjp", "jvp") and not _is_float(out) and not (
                isinstance(out, (np.ndarray, np.generic)) and np.ndim(out) != 0):
            raise SrcadError(
                f"{self._ir.name} returns {_describe(out) if out is not None else 'None'}; "
                f"grad needs a floating-point scalar output",
                filename=self._ir.filename, lineno=self._ir.ret.line, func=self._ir.name,
                hint="return the scalar loss to differentiate (a float, not an int, bool or "
                "None)")
        if self.kind not in ("vjp", "jvp") and np.ndim(out) != 0:
            raise NonScalarOutputError(
                f"{self._ir.name} returns an array of shape {np.shape(out)}; grad needs a "
                f"scalar output",
                filename=self._ir.filename, lineno=self._ir.ret.line, func=self._ir.name,
                hint="reduce it to a scalar (e.g. np.sum), or use srcad.vjp(f, *args) to "
                "pull back a cotangent of that shape")
        if self.kind == "vjp" and not isinstance(out, (np.ndarray, np.generic, float, int)):
            raise SrcadError(f"{self._ir.name} must return one array for srcad.vjp, got "
                             f"{type(out).__name__}", filename=self._ir.filename,
                             lineno=self._ir.ret.line)
        signature = ", ".join(f"{p}: {_describe(env[p])}" for p in self.params)
        c = self._build(wrt, infos, signature, values, to_transform=to_transform)
        self._cache[key] = c
        if not to_transform:
            self._last = c
        return c

    def _build(self, wrt, infos, signature, values=None, to_transform=False) -> Compiled:
        try:
            plan = None
            if self.options["memory_budget"] is not None and values is not None and \
                    self.kind != "jvp" and not to_transform:
                plan = self._budget_policy(wrt, infos, signature, values)
            # fused code recomputes elementwise values in the backward rather than saving
            # them: inside a kernel that costs arithmetic, not memory traffic (same bits)
            fused = self.options["fuse"] and not to_transform and self.kind != "jvp"
            c = build(self._ir, self.kind, wrt, infos, signature, self.single, self.options,
                      checkpoint_ids=plan.call_ids if plan else frozenset(),
                      loop_schedules=plan.loop_schedules if plan else None,
                      checkpoint_loops=not to_transform, plan=plan,
                      remat="memory_budget" if plan and plan.remat else
                      ("fuse=True" if fused else False))
            c.plan = plan
            return c
        except SrcadError:
            raise
        except Exception as e:  # an internal error must not reach the user bare
            raise SrcadError(
                f"internal error while transforming {self._ir.name}: "
                f"{type(e).__name__}: {e}",
                filename=self._ir.filename, lineno=self._ir.first_line, func=self._ir.name,
                hint="this is a bug in srcad; please report it with the function") from e

    def _budget_policy(self, wrt, infos, signature, values):
        """memory_budget: what to save and what to recompute, measured on these arguments
        (srcad.checkpoint.budget_plan); warns when the budget cannot be met."""
        from .checkpoint import budget_plan

        kind = "vjp" if self.kind == "vjp" else "grad"
        plan = budget_plan(self._ir, kind, wrt, infos, signature, self.single, values,
                           self.options)
        if not plan.fits:
            warnings.warn(
                f"srcad: memory_budget={plan.budget:,} bytes cannot be met for "
                f"{self._ir.name}: the least this policy reaches is a peak of "
                f"{plan.peak:,} bytes ({plan.describe()})", stacklevel=5)
        return plan

    @property
    def source(self) -> str:
        if self.options["mode"] == "tape":
            raise SrcadError("mode='tape' runs the function eagerly and generates no source",
                             hint="use mode='source' (the default) to see generated code")
        if self._last is None and self.inner is not None:
            raise SrcadError("a transform of a transform has no source until it is called: "
                             "its input is the inner transform's code for those arguments")
        if self._last is None:
            wrt = self.wrt if self.kind not in ("vjp", "jvp") else list(self.params)
            self._last = self._build(wrt, None, "generic (no call yet: shapes unknown)")
        return self._last.source

    def tape_call(self, values, given=None):
        """mode="tape": run `fn` eagerly on the tape and replay the same VJP rules."""
        from . import tape

        if self.inner is not None:
            raise SrcadError("mode='tape' cannot transform a transformed function",
                             hint="use mode='source' for higher-order derivatives")
        env = dict(zip(self.params, values))
        n = len(self.params) if given is None else given
        wrt = self.wrt if self.kind not in ("vjp", "jvp") else [p for p in self.params[:n]
                                                               if _is_float(env[p])]
        self._check_wrt_values(env, wrt)
        mask = [p in wrt for p in self.params]
        t, wrapped, out = tape.run(self.fn, values, mask)
        value = tape.value_of(out)
        if self.kind in ("grad", "value_and_grad"):
            if not _is_float(value) or np.ndim(value) != 0:
                raise NonScalarOutputError(
                    f"{self._ir.name} returns {_describe(value)}; grad needs a floating-point "
                    f"scalar output", filename=self._ir.filename, lineno=self._ir.ret.line,
                    func=self._ir.name, hint="use srcad.vjp for other outputs")
        return t, wrapped, out, value, mask

    def __call__(self, *args, **kwargs):
        # the common path: positional arrays whose shapes were seen before -> straight to the
        # generated function (the key is built as `compiled` builds it)
        if not kwargs and len(args) == self._nparams and self._fast:
            key = tuple([(v.shape, v.dtype) if type(v) is np.ndarray else _key_of(v)
                         for v in args]) + (None,)
            main = self._mains.get(key)
            if main is not None:
                return main(*args)
        values = self.bind(args, kwargs)
        if self.options["mode"] == "tape":
            from . import tape

            t, wrapped, out, value, mask = self.tape_call(values)
            gs = tape.grads(t, wrapped, values, out, 1.0, mask)
            picked = [gs[self.params.index(p)] for p in self.wrt]
            result = picked[0] if self.single else tuple(picked)
            return (value, result) if self.kind == "value_and_grad" else result
        c = self.compiled(values)
        if self._fast and not kwargs and len(args) == self._nparams:
            key = tuple([(v.shape, v.dtype) if type(v) is np.ndarray else _key_of(v)
                         for v in values]) + (None,)
            self._mains[key] = c.functions["main"]
        return c.functions["main"](*values)

    def __repr__(self):
        return f"<srcad.{self.kind} of {self._ir.name} wrt {', '.join(self.wrt)}>"


def finish_pair(fwd, bwd, ret_expr, line, infos) -> list[str]:
    """Complete a split pair: the backward unpacks what the forward returns beside its output."""
    from .gcode import line_writes

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


def build(fn_ir: ir.Function, kind: str, wrt, infos, signature, single, options,
          checkpoint_ids=frozenset(), loop_schedules=None, checkpoint_loops=True,
          plan=None, remat=False) -> Compiled:
    """Reverse-transform, optimise, render and compile one specialisation.

    checkpoint_ids: user calls to recompute; loop_schedules: {id(loop): (every, snapshots)}
    for loops to checkpoint (both chosen by a memory_budget policy); checkpoint_loops=False
    ignores srcad.checkpoint(range(...)) markers (for code that will be transformed again)."""
    from .transform.reverse import Module
    from .transform.templates import atom_expr

    module = Module(infos)
    module.checkpoint_ids = frozenset(checkpoint_ids)
    module.loop_schedules = dict(loop_schedules or {})
    module.checkpoint_loops = checkpoint_loops
    module.reparsed = not checkpoint_loops  # (higher order: code the frontend reads again)
    module.remat = remat
    saved: list[str] = []
    if kind == "jvp":
        from .transform.forward import Forward

        fwd_t = Forward(fn_ir, wrt, None, module)
        main = [fwd_t.jvp()]
        subs = [f for f, _ in module.jvp_functions.values()]
        infos_all = fwd_t.infos
        for f in subs + main:
            optimize(f, infos_all)
        roles = {"main": main[0].name}
        infos_of = None
        if checkpoint_loops:  # (code to be transformed again is never lowered)
            infos_of = {main[0].name: _with_tangents(fwd_t)}
            infos_of.update({f.name: _with_tangents(sub)
                             for f, sub in module.jvp_functions.values()})
        return _finish(fn_ir, kind, wrt, signature, options, subs + main, roles, [],
                       {**fn_ir.inject, **_callee_injects(module, fn_ir)},
                       {**fwd_t.globals, **{k: v for _, sub in module.jvp_functions.values()
                                            for k, v in sub.globals.items()}},
                       infos_of=infos_of)
    rev = Reverse(fn_ir, wrt, None, module)
    residuals = rev.saved_of  # filled by the transform: id(call) -> name of its residuals
    if kind == "vjp":
        fwd, bwd = rev.split()
        saved = finish_pair(fwd, bwd, atom_expr(fn_ir.ret.value), fn_ir.ret.line,
                            rev.all_infos())
        main = [fwd, bwd]
        roles = {"fwd": fwd.name, "bwd": bwd.name}
    else:
        main = rev.joint(with_value=(kind == "value_and_grad"), single=single).functions
        for f in main:
            optimize(f, rev.all_infos())
        roles = {"main": main[0].name}
    functions = []
    inject = dict(fn_ir.inject)
    helpers = dict(rev.globals)
    for pair in module.pairs.values():
        finish_pair(pair.fwd, pair.bwd, pair.ret, pair.rev.fn.ret.line, pair.rev.all_infos())
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
    functions += main
    infos_of = None
    if checkpoint_loops:  # (code to be transformed again is never lowered)
        infos_of = {f.name: rev.all_infos() for f in main}
        for pair in module.pairs.values():
            infos_of[pair.fwd.name] = infos_of[pair.bwd.name] = pair.rev.all_infos()
    c = _finish(fn_ir, kind, wrt, signature, options, functions, roles, saved, inject, helpers,
                plan, infos_of=infos_of)
    c.residuals = dict(residuals)
    c.rematerialised = list(rev.rematerialised) + [
        (f"{pair.rev.fn.name}: {n}", line) for pair in module.pairs.values()
        for n, line in pair.rev.rematerialised]
    return c


def _callee_injects(module, fn_ir) -> dict:
    out = {}
    for _, sub in getattr(module, "jvp_functions", {}).values():
        out.update(sub.fn.inject)
    return out


def _with_tangents(fwd) -> dict:
    """A forward transform's Info by name, its tangents' (a primal's) included."""
    infos = dict(fwd.infos)
    infos.update({t: infos[p] for p, t in fwd.tangent.items() if p in infos})
    return infos


def _finish(fn_ir, kind, wrt, signature, options, functions, roles, saved, inject,
            helpers, plan=None, infos_of=None) -> Compiled:
    """Render, compile and wrap the generated functions of one specialisation."""
    origin = {
        "filename": fn_ir.filename,
        "name": fn_ir.name,
        "first_line": fn_ir.first_line,
        "last_line": fn_ir.last_line,
        "source": "\n".join(fn_ir.source_lines[k] for k in sorted(fn_ir.source_lines)),
        "options": f"{kind} wrt=({', '.join(wrt)}) mode={options['mode']} "
        f"fuse={options['fuse']} checkpoint="
        f"{'none' if options['memory_budget'] is None else 'memory_budget=' + str(options['memory_budget'])}"
        + (f" (the policy: {plan.describe()})" if plan is not None else ""),
        "signature": signature,
    }
    # -- lowering (fuse=True): elementwise chains become C kernels, one extension module
    #    per specialisation (srcad/lower, srcad/build); None when nothing fuses or there is
    #    no working compiler, and then the unfused code runs
    lowered = None
    if options["fuse"] and infos_of is not None:
        from .lower import lower

        functions, lowered = lower(functions, infos_of, {**inject, **helpers}, origin)
    kernels = lowered.functions if lowered is not None else {}
    source = render(functions, origin=origin, inject=inject,
                    kernels=(lowered.name, sorted(k.name for k in lowered.kernels))
                    if lowered is not None else None)
    tag = hashlib.sha256(source.encode()).hexdigest()[:8]
    filename = f"<srcad-generated {fn_ir.name}_{kind} {tag}>"
    ns = compile_source(source, filename, {**inject, **{k: v for k, v in helpers.items()
                                                       if k != "np"}, **kernels})
    fns = {role: ns[n] for role, n in roles.items()}
    return Compiled(source=source, functions=fns, saved=saved, kernels=lowered)


def _ret_expr(fn_ir):
    from .transform.templates import atom_expr

    return atom_expr(fn_ir.ret.value)


def _saved_names(fwd, bwd) -> list[str]:
    """Names the backward reads (before assigning them) that the forward (or the arguments)
    defined, in order."""
    from .gcode import exposed_reads, line_writes

    reads = exposed_reads(bwd.body)
    order = list(fwd.params)
    for ln in fwd.body:
        if ln.node is not None:
            order.extend(sorted(line_writes(ln) - set(order)))
    return [n for n in order if n in reads]


# -- public API ----------------------------------------------------------------------------


def _decorator(kind):
    def transform(fn=None, wrt=0, **options):
        if fn is None:
            return lambda f: Transformed(f, kind, wrt, options)
        if isinstance(fn, (int, str, tuple)) and not callable(fn):
            raise SrcadError(f"srcad.{kind}'s first argument must be a function; pass wrt= "
                             f"by keyword")
        return Transformed(fn, kind, wrt, options)

    return transform


grad = _decorator("grad")
grad.__doc__ = """Gradient of `fn`'s scalar output with respect to argument(s) `wrt`.

    `wrt` is a position or name (one gradient) or a tuple of them (a tuple of gradients).
    Usable as `srcad.grad(f)`, `@srcad.grad` and `@srcad.grad(wrt=(0, 1))`.
    """
value_and_grad = _decorator("value_and_grad")
value_and_grad.__doc__ = """Like `grad`, but returns `(value, grad)`."""


def _checksum(a: np.ndarray) -> int:
    """crc32 of an array's bytes (contiguous arrays are read in place, without a copy)."""
    import zlib

    data = memoryview(a).cast("B") if a.flags.c_contiguous and a.size else a.tobytes()
    return zlib.crc32(data)


def _leaves_of(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves_of(v)
    elif isinstance(value, runtime.Stack):
        yield from _leaves_of(list(value._items))
    elif isinstance(value, runtime.LoopCheckpoints):
        yield from _leaves_of(value.kept_states())
    else:
        yield value


class Pullback:
    """The backward half of `vjp`: holds the saved values between the two calls."""

    def __init__(self, t: Transformed, c: Compiled, saved, values, out):
        self._t = t
        self._c = c
        self._saved = saved
        self._values = values
        self._out_shape = np.shape(out)
        self._out_dtype = np.result_type(out)
        # the caller owns the arguments and the output: if the backward keeps a reference to
        # one of them, remember a checksum, so that a change made before the pullback runs is
        # reported instead of silently corrupting the gradient
        held = {id(v) for v in _leaves_of(saved)}
        named = [(p, v) for p, v in zip(t.params, values) if isinstance(v, np.ndarray)]
        named.append(("the output", out))
        self._guards = [(label, v, _checksum(v)) for label, v in named
                        if isinstance(v, np.ndarray) and id(v) in held]

    @property
    def source(self) -> str:
        return self._c.source

    def __call__(self, cotangent):
        for label, v, crc in self._guards:
            if _checksum(v) != crc:
                what = f"argument `{label}`" if label != "the output" else "the output"
                raise SrcadError(
                    f"{what} of {self._t._ir.name} was changed in place after srcad.vjp and "
                    f"before its pullback; the backward needs its original values",
                    filename=self._t._ir.filename, lineno=self._t._ir.first_line,
                    hint="copy the array before changing it, or call vjp again")
        if np.shape(cotangent) != self._out_shape:
            raise SrcadError(
                f"the cotangent has shape {np.shape(cotangent)} but "
                f"{self._t._ir.name}'s output has shape {self._out_shape}")
        if np.result_type(cotangent) != self._out_dtype:
            cotangent = np.asarray(cotangent, dtype=self._out_dtype)
        grads = self._c.functions["bwd"](runtime.fresh_stacks(self._saved), cotangent)
        it = iter(grads)
        return tuple(next(it) if _is_float(v) else None for v in self._values)


def vjp(fn, *primals, **options):
    """`(out, pullback)`: `pullback(cotangent)` returns one gradient per primal (JAX semantics).

    The saved values live in the pullback between the two calls. A non-float primal gets
    None.
    """
    t = _vjp_transformed(fn, options)
    values = t.bind(primals, {})
    n_given = len(primals)
    if t.options["mode"] == "tape":
        from . import tape

        tp, wrapped, out, value, mask = t.tape_call(values, given=n_given)

        def pullback(cotangent):
            if np.shape(cotangent) != np.shape(value):
                raise SrcadError(f"the cotangent has shape {np.shape(cotangent)} but the "
                                 f"output has shape {np.shape(value)}")
            if np.result_type(cotangent) != np.result_type(value):
                cotangent = np.asarray(cotangent, dtype=np.result_type(value))
            return tuple(tape.grads(tp, wrapped, values, out, cotangent, mask))[:n_given]

        return value, pullback
    c = t.compiled(values, given=n_given)
    out, saved = c.functions["fwd"](*values)
    return out, Pullback(t, c, saved, values[:n_given], out)


_VJP_CACHE: dict = {}
_JVP_CACHE: dict = {}


def jvp(fn, primals, tangents, **options):
    """`(out, tangent_out)`: the directional derivative of `fn` at `primals` along `tangents`,
    by a forward-mode source transformation (JAX semantics: tuples in). A non-float primal's
    tangent is ignored.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise SrcadError("srcad.jvp(fn, primals, tangents) takes tuples of primals and tangents",
                         hint="write srcad.jvp(f, (x,), (v,)) for one argument")
    if len(primals) != len(tangents):
        raise SrcadError(f"srcad.jvp got {len(primals)} primals but {len(tangents)} tangents")
    key = (fn, tuple(sorted(options.items())))
    t = _JVP_CACHE.get(key)
    if t is None:
        t = Transformed(fn, "jvp", (), options)
        _JVP_CACHE[key] = t
    values = t.bind(tuple(primals), {})
    for p, v, d in zip(t.params, values, tangents):
        if not isinstance(v, (dict, list, tuple)) and _is_float(v) and np.shape(d) != np.shape(v):
            raise SrcadError(f"the tangent for `{p}` has shape {np.shape(d)} but the primal has "
                             f"shape {np.shape(v)}")
    c = t.compiled(values, given=len(primals))
    dots = [d for v, d in zip(values, tangents) if _is_float(v)]
    return c.functions["main"](*values, *dots)


def _vjp_transformed(fn, options) -> Transformed:
    key = (fn, tuple(sorted(options.items(), key=lambda kv: kv[0])))
    try:
        t = _VJP_CACHE.get(key)
    except TypeError:
        t = None
        key = None
    if t is None:
        t = Transformed(fn, "vjp", (), options)
        if key is not None:
            _VJP_CACHE[key] = t
    return t


def hessian(fn, wrt=0, **options):
    """The Hessian of `fn`'s scalar output w.r.t. one argument, column by column from
    Hessian-vector products (forward over reverse: ``jvp(grad(f), (x,), (e_k,))``).
    For x of shape s the result has shape s + s.
    """
    if isinstance(wrt, (tuple, list)):
        raise SrcadError("srcad.hessian takes one argument (wrt=position or name)")
    g = grad(fn, wrt=wrt, **options)

    def hess(*args):
        values = g.bind(args, {})
        pos = g.params.index(g.wrt[0])
        x = np.asarray(values[pos])
        cols = []
        for k in range(x.size):
            e = np.zeros(x.size, dtype=x.dtype)
            e[k] = 1
            tangents = [np.zeros_like(v) if _is_float(v) else None for v in values]
            tangents[pos] = e.reshape(x.shape)
            _, hv = jvp(g, tuple(values), tuple(tangents))
            cols.append(np.ravel(hv))
        h = np.stack(cols, axis=1) if cols else np.zeros((0, 0), dtype=x.dtype)
        return h.reshape(x.shape + x.shape)

    functools.update_wrapper(hess, g)
    return hess


def explain(fn, *args, wrt=None, print_report: bool = True, **options):
    """Every value the backward of `fn` keeps for these arguments: name, shape, dtype,
    bytes, where it was made, saved or recomputed, and the total. Prints the table (unless
    ``print_report=False``) and returns it as a `srcad.report.Report`.

    `fn` may be a plain function (gradients w.r.t. every float argument, or `wrt`) or a
    function made by `srcad.grad` / `value_and_grad` (its own `wrt`).
    """
    from .report import report

    if isinstance(fn, Transformed):
        wrt = fn.wrt if wrt is None else wrt
        options = {**{k: v for k, v in fn.options.items() if v != _OPTIONS.get(k)}, **options}
        fn = fn.fn
    t = Transformed(fn, "vjp", (), options)
    values = t.bind(args, {})
    env = dict(zip(t.params, values))
    names = t._resolve_wrt(wrt) if wrt is not None else [p for p in t.params
                                                          if _is_float(env[p])]
    t._check_wrt_values(env, names)
    infos, _ = probe(t._ir, env)
    signature = ", ".join(f"{p}: {_describe(env[p])}" for p in t.params)
    plan = None
    if t.options["memory_budget"] is not None:
        plan = t._budget_policy(names, infos, signature, values)
    c = build(t._ir, "vjp", names, infos, signature, False, t.options,
              checkpoint_ids=plan.call_ids if plan else frozenset(),
              loop_schedules=plan.loop_schedules if plan else None,
              remat=bool(plan and plan.remat))
    _, saved = c.functions["fwd"](*values)
    rep = report(t._ir, c.saved, saved, env)
    from .report import Saved

    for what, line, note in (plan.choices if plan else []):
        rep.items.append(Saved(what, None, None, 0, f"{t._ir.filename}:{line}",
                               note, status="recomputed"))
    if print_report:
        print(rep)
    return rep


def source(transformed) -> str:
    """The generated Python source of a transformed function (or of a vjp's pullback)."""
    if isinstance(transformed, (Transformed, Pullback)):
        return transformed.source
    raise SrcadError(f"srcad.source needs a function made by srcad, got {transformed!r}")


__all__ = ["grad", "value_and_grad", "vjp", "jvp", "hessian", "source", "explain", "Transformed", "Pullback", "runtime"]
