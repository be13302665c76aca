"""A transformed function (`srcad.grad(f)` and friends): what calling it does.

On each call it binds the arguments to f's parameters and looks the specialisation up by the
arguments' key (shapes, dtypes, integer values, structure: srcad/binding.py). On first sight
of a key it checks the arguments, runs the probe (srcad/probe.py), asks the memory-budget
planner for a plan if `memory_budget=` was given (srcad/plan.py), and builds the generated
code (srcad/pipeline.py); later calls with that key go straight to the compiled function.
mode="tape" runs f on the tape instead (srcad/tape.py). f's normalised IR is made once per
function and cached until the op table changes (a new defvjp rule).

    g = Transformed(loss, "grad", ("W", "b"), {})   # what srcad.grad(loss, wrt=...) returns
    dW, db = g(W, b, x, y)                          # first call: probe, build; then cached
"""

from __future__ import annotations

import copy
import functools
import inspect
import warnings
from dataclasses import replace

import numpy as np

from . import ir, tape
from .analysis.refusals import check_opaque
from .binding import _a, _describe, _is_float, _key_of
from .errors import NonScalarOutputError, SrcadError
from .frontend import normalize, parse_function
from .ops import generation
from .options import Options
from .pipeline import Compiled, build
from .plan import budget_plan
from .probe import probe

_IR_CACHE: dict = {}


def _ir_of(fn) -> ir.Function:
    """The normalised IR of `fn`, cached until the op table changes (a new defvjp rule)."""
    key = (fn, generation())
    if key not in _IR_CACHE:
        _IR_CACHE[key] = normalize(parse_function(fn))
    return _IR_CACHE[key]



class Transformed:
    """A transformed function: calling it runs the generated code for its inputs."""

    def __init__(self, fn, kind: str, wrt, options: dict):
        self.fn = fn
        self.kind = kind  # "grad" | "value_and_grad" | "vjp" | "jvp"
        # (validated first: a bad option is the user's first error, before any parsing)
        self.options = Options.of(kind, **options)
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
        self.options = replace(self.options, wrt=tuple(self.wrt), single=self.single)
        self._cache: dict = {}
        self._last: Compiled | None = None
        self._mains: dict = {}  # specialisation key -> generated function, for __call__
        self._nparams = len(self.params)
        self._fast = self.options.mode == "source" and kind in ("grad", "value_and_grad")
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
                    bound = inspect.ismethod(self.fn) and w == next(
                        iter(inspect.signature(self.fn.__func__).parameters), None)
                    raise SrcadError(
                        f"wrt={w!r} is not a parameter of {self._ir.name} "
                        f"(parameters: {', '.join(self.params)})",
                        hint="the object of srcad.grad(obj.method) is a constant (its arrays "
                        "get no gradient): pass the arrays to differentiate as arguments"
                        if bound else None)
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
                raise SrcadError(
                    f"cannot differentiate {self._ir.name} with respect to `{w}`, {_a(v)}: "
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
        key = tuple([(v.shape, v.dtype, v.flags.c_contiguous)
                      if type(v) is np.ndarray else _key_of(v)
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
        check_opaque(self._ir, wrt)
        # the probe must not consume a random generator's state: it runs on a copy
        probe_env = {k: copy.deepcopy(v) if isinstance(v, (np.random.Generator,
                                                          np.random.RandomState)) else v
                     for k, v in env.items()}
        infos, out = probe(self._ir, probe_env, wrt)
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

    def build_options(self, wrt, infos, signature, values=None,
                      to_transform=False) -> Options:
        """The options one specialisation is built with: the user's, with the memory-budget
        planner's choices (measured on `values`) and fuse=True's recomputation."""
        opts = replace(self.options, wrt=tuple(wrt), reparsed=to_transform)
        if opts.memory_budget is not None and values is not None and \
                self.kind != "jvp" and not to_transform:
            opts = self._budget_policy(opts, infos, signature, values)
        if opts.fuse and opts.kind != "jvp" and not to_transform:
            # fused code recomputes elementwise values in the backward rather than saving
            # them: inside a kernel that costs arithmetic, not memory traffic
            opts = replace(opts, remat=True)
        return opts

    def _build(self, wrt, infos, signature, values=None, to_transform=False) -> Compiled:
        try:
            opts = self.build_options(wrt, infos, signature, values, to_transform)
            return build(self._ir, infos, signature, opts)
        except SrcadError:
            raise
        except Exception as e:  # an internal error must not reach the user bare
            raise SrcadError(
                f"internal error while transforming {self._ir.name}: "
                f"{type(e).__name__}: {e}",
                filename=self._ir.filename, lineno=self._ir.first_line, func=self._ir.name,
                hint="this is a bug in srcad; please report it with the function") from e

    def _budget_policy(self, opts: Options, infos, signature, values) -> Options:
        """memory_budget: what to save and what to recompute, measured on these arguments
        (srcad.plan); warns when the budget cannot be met. Returns the options with the
        plan's choices."""
        plan = budget_plan(self._ir, infos, signature, values, opts)
        if not plan.fits:
            warnings.warn(
                f"srcad: memory_budget={plan.budget:,} bytes cannot be met for "
                f"{self._ir.name}: the least this policy reaches is a peak of "
                f"{plan.peak:,} bytes ({plan.describe()})", stacklevel=5)
        return plan.applied(opts)

    @property
    def source(self) -> str:
        if self.options.mode == "tape":
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
        if self.inner is not None:
            raise SrcadError("mode='tape' cannot transform a transformed function",
                             hint="use mode='source' for higher-order derivatives")
        env = dict(zip(self.params, values))
        n = len(self.params) if given is None else given
        wrt = self.wrt if self.kind not in ("vjp", "jvp") else [p for p in self.params[:n]
                                                               if _is_float(env[p])]
        self._check_wrt_values(env, wrt)
        check_opaque(self._ir, wrt)  # (the same refusals as source mode, at the same lines)
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
            key = tuple([(v.shape, v.dtype, v.flags.c_contiguous)
                      if type(v) is np.ndarray else _key_of(v)
                         for v in args]) + (None,)
            main = self._mains.get(key)
            if main is not None:
                return main(*args)
        values = self.bind(args, kwargs)
        if self.options.mode == "tape":
            t, wrapped, out, value, mask = self.tape_call(values)
            gs = tape.grads(t, wrapped, values, out, 1.0, mask)
            picked = [gs[self.params.index(p)] for p in self.wrt]
            result = picked[0] if self.single else tuple(picked)
            return (value, result) if self.kind == "value_and_grad" else result
        c = self.compiled(values)
        if self._fast and not kwargs and len(args) == self._nparams:
            key = tuple([(v.shape, v.dtype, v.flags.c_contiguous)
                      if type(v) is np.ndarray else _key_of(v)
                         for v in values]) + (None,)
            self._mains[key] = c.functions["main"]
        return c.functions["main"](*values)

    def __repr__(self):
        return f"<srcad.{self.kind} of {self._ir.name} wrt {', '.join(self.wrt)}>"
