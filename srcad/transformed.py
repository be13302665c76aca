"""A transformed function (`srcad.grad(f)` and friends): what calling it does.

On each call it binds the arguments to f's parameters and looks the specialisation up by the
arguments' key (shapes, dtypes, integer values, structure: srcad/binding.py). On first sight
of a key it checks the arguments, runs the probe (srcad/probe.py), asks the memory-budget
planner for a plan if `memory_budget=` was given (srcad/plan.py), and builds the generated
code (srcad/pipeline.py); later calls with that key go straight to the compiled function.
mode="tape" runs f on the tape instead (srcad/tape.py). f's normalised IR is made once per
function and cached until the op table changes (a new defvjp rule) or a name it read is
rebound: every call first checks the guards normalising it recorded (srcad/frontend/guards.py:
the globals, closure cells and attributes it looked up still hold the same objects), and
re-specialises when one fails, so a call means what calling f means at that moment.

Fusion in tiers (fuse omitted, the default): a specialisation is built unfused; on its third
call (`options.fuse_after()`: SRCAD_FUSE) it is built again with fuse=True -- lowered to C
kernels -- and that build replaces it, where a compiler works and something fused (else the
unfused code stays, silently). Only the build differs: the fuser inlines correctly rounded
expressions and calls numpy's loops otherwise, so every gradient is bit for bit the same on
every call. fuse=True fuses from the first call, fuse=False never.

    g = Transformed(loss, "grad", ("W", "b"), {})   # what srcad.grad(loss, wrt=...) returns
    dW, db = g(W, b, x, y)                          # first call: probe, build; then cached
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
import inspect
import linecache
import re
import sys
import types
import warnings
from dataclasses import replace

import numpy as np

from . import closure_lift, ir, runtime, tape
from .analysis.refusals import changed_by_unknown_code, check_opaque, kept_stored
from .binding import _a, _describe, _is_differentiable, _is_float, _key_of, _spec_key
from .build import CompilerUnavailable, c_helper, compiler_identity
from .errors import (CountUnknownError, NonScalarOutputError, SharingUnknownError, SrcadError,
                     UnresolvedNameError, UnsupportedSyntaxError, at_call_site, in_substitute,
                     user_error)
from .frontend import normalize, parse_function, star_params_as_containers
from .frontend import unknown_writes
from .frontend.recursion import Recursion
from .frontend.calls import at_user_lines
from .frontend.parse import dict_paths_of
from .tape_containers import reads_items_by_attribute
from .frontend.guards import Guards, equivalent, recording
from .frontend.knowntests import DECIDED_CHECKS, DECIDED_HINT
from .frontend.opaque import is_library_module, is_object_sequence, is_user_object
from .lower import builds_now, quiet
from .ops import generation, lookup
from .ops.composed import transformed_call_op
from .options import Options, fuse_after
from .pipeline import Compiled, build, relink
from .plan import budget_plan
from .booleans import is_bool_output, zero_gradient_compiled
from .probe import probe
from .pyfuncs import label_of
from .runtime_linalg import is_sparse
from .wrappers import needs_wrapper, wrapper
from .pullbacks import Pullbacks
from .pullback import (cotangent_like, dense_cotangent, grad_tree, out_structure, tangent_tree,
                       zero_tangent)

_IR_CACHE: dict = {}


def _ir_of(fn, known: dict | None = None, arrays: frozenset = frozenset(),
           tuples: frozenset = frozenset(), statics: frozenset | None = None,
           dicts: frozenset = frozenset(), containers: frozenset = frozenset(),
           keys: tuple = (), scalars: tuple = (), kinds: bool = False) -> ir.Function:
    """The normalised IR of `fn`, cached until the op table changes (a new defvjp rule) or a
    name it read is bound to another object (its guards). `known`: parameters that hold these
    user objects (their methods resolve when normalising); `arrays`: parameters that hold
    arrays (indexing by one makes a copy, not a view); `tuples`: (parameter, namedtuple
    type, kind) for parameters that hold namedtuples (`p.W1` is `p[0]`) or lists of them;
    `statics`: (parameter, "len" | "int", n) for the list / tuple / int arguments, once a
    loop building objects asked for them (CountUnknownError); `dicts`: where the arguments
    hold dicts (parse.dict_paths_of: `for k in d` walks their keys, as Python does);
    `containers`: parameters that hold lists, tuples or dicts (a store into one shares no
    memory with the names holding its items); `keys`: (parameter, its dict's keys) for the
    dict arguments (a comprehension building objects per key unrolls over them); `scalars`:
    (parameter, its dict's str / int / bool / None items) (`kwargs.get("act")`: chosen.py);
    `kinds`: the call's arguments told which parameters hold lists, dicts and arrays (a
    parameter in none of `arrays`, `containers` holds neither: `x.copy()` is numpy's)."""
    key = (fn, generation()) + ((tuple((p, _known_key(v))
                                       for p, v in known.items()),) if known else ()) + ((arrays,) if arrays else ()) \
        + ((tuples,) if tuples else ()) + ((statics,) if statics is not None else ()) \
        + ((("dicts", dicts),) if dicts else ()) \
        + ((("containers", containers),) if containers else ()) \
        + ((("keys", keys),) if keys else ()) \
        + ((("scalars", scalars),) if scalars else ()) + (("kinds",) if kinds else ())
    hit = _IR_CACHE.get(key)
    if hit is not None and hit.guards.holds():
        return hit
    try:
        made, guards = _normalized(fn, known, arrays, tuples, statics, dicts, containers, keys,
                                   scalars, kinds)
    except Recursion:  # (fn calls itself: normalised again, one level per call)
        made, guards = _normalized(fn, known, arrays, tuples, statics, dicts, containers, keys,
                                   scalars, kinds)
    made.guards = guards
    _IR_CACHE[key] = made
    return made


def _normalized(fn, known, arrays, tuples, statics, dicts, containers, keys, scalars, kinds):
    """The IR and its guards -- normalised again where code the program runs as written may
    change attributes it read as constants of the call (frontend/unknown_writes.py)."""
    with unknown_writes.program() as folded:
        made, guards = _normalized_once(fn, known, arrays, tuples, statics, dicts,
                                        containers, keys, scalars, kinds)
    changed = changed_by_unknown_code(made, folded) if folded else set()
    if not changed:
        return made, guards
    with unknown_writes.program(changed):
        again, guards = _normalized_once(fn, known, arrays, tuples, statics, dicts,
                                         containers, keys, scalars, kinds)
    # (tape mode runs the user's code on Python's objects, which reads what that code
    # stored: its refusals read the program as first normalised, as before)
    again.as_folded = made
    return again, guards


def _normalized_once(fn, known, arrays, tuples, statics, dicts, containers, keys, scalars,
                     kinds):
    with recording() as guards:
        pf = parse_function(fn)
        star_params_as_containers(pf)
        pf.known = dict(known or {})
        pf.arrays = arrays
        pf.containers = containers
        pf.unknown_kinds = frozenset() if kinds else frozenset(pf.params)
        pf.dict_paths = dicts
        pf.dict_keys = dict(keys)
        pf.dict_scalars = {p: dict(items) for p, items in scalars}
        pf.namedtuples = {p: t for p, t, kind in tuples if kind == "self"}
        pf.namedtuple_items = {p: t for p, t, kind in tuples if kind == "items"}
        pf.attrdicts = {p: t for p, t, kind in tuples if kind == "attrdict"}
        pf.statics = None if statics is None else {p: (k, n) for p, k, n in statics}
        pf.deferrable = statics is None
        made = normalize(pf)
        for v in pf.known.values():
            if isinstance(v, list):  # (a list of layers, in order: append or swap rebuilds)
                guards.add("items", v, len(v), v)
    return made, guards


def _params_of(fn) -> list[str]:
    """fn's parameters as its transformed code takes them (`*rest`, `**kw`: one each)."""
    pf = parse_function(fn)
    star_params_as_containers(pf)
    return pf.params


def _is_namedtuple(v) -> bool:
    return isinstance(v, tuple) and isinstance(getattr(type(v), "_fields", None), tuple)


def _has_row(v) -> bool:
    """Is `v` a library function with an op row (np.tanh, np.exp given as an argument)?"""
    if not callable(v) or isinstance(v, type) or is_user_object(v):
        return False
    try:
        return lookup(v) is not None
    except TypeError:  # (unhashable)
        return False


def _namedtuple_params(params, values):
    """(parameter, namedtuple type, "self" | "items") for the parameters that hold a namedtuple
    or a list / tuple of namedtuples of one type (`for layer in layers: layer.W`); (parameter,
    dict subclass, "attrdict") for one whose attributes read its items (EasyDict)."""
    for p, v in zip(params, values):
        if reads_items_by_attribute(type(v)):
            yield p, type(v), "attrdict"
        elif _is_namedtuple(v):
            yield p, type(v), "self"
        elif isinstance(v, (list, tuple)) and v and all(
                _is_namedtuple(x) and type(x) is type(v[0]) for x in v):
            yield p, type(v[0]), "items"


def _static_params(params, values):
    """(parameter, "len", n) for each list / tuple argument and each array of one or more
    dimensions (its rows: `[PlanarFlow(u) for u in U]`), (parameter, "int", v) for each
    int one: the counts a loop building objects may run over (all are in the
    specialisation's key already: binding.py's `_key_of`, an array by its shape)."""
    for p, v in zip(params, values):
        if isinstance(v, (list, tuple)) or (type(v) is np.ndarray and v.ndim):
            yield p, "len", len(v)
        elif type(v) in (int, bool):
            yield p, "int", v


def _dict_keys(params, values) -> tuple:
    """(parameter, its keys) for each dict argument of a few str / int keys (in the
    specialisation's key already: binding.py's `_key_of` spells a dict by its keys)."""
    return tuple((p, tuple(v)) for p, v in zip(params, values)
                 if type(v) is dict and len(v) <= 64 and all(type(k) in (str, int) for k in v))


def _names(v) -> bool:
    """A list or tuple of a few short strings (specialised on by value, as a string is)."""
    return type(v) in (list, tuple) and 0 < len(v) <= 16 and all(
        type(x) is str and len(x) <= 64 for x in v)


def _known_key(v):
    """A known argument in a specialisation's key: a string (or a few) by value, an object
    by identity."""
    if isinstance(v, str):
        return v
    if _names(v):
        return (type(v).__name__, tuple(v))
    return id(v)


def _dict_scalars(params, values) -> tuple:
    """(parameter, its str / int / bool / None items) for each dict argument of a few str /
    int keys (in the specialisation's key already: binding.py's `_key_of` spells those
    values): what `kwargs.get("act", "elu")` reads (frontend/chosen.py)."""
    return tuple((p, tuple((k, x) for k, x in v.items() if type(x) in (str, int, bool)
                           or x is None))
                 for p, v in zip(params, values)
                 if type(v) is dict and len(v) <= 64 and all(type(k) in (str, int) for k in v))


def _array_key(args: tuple):
    """The fast path's key of a call whose arguments are all plain arrays of numeric dtypes
    (the C runtime's `array_key`, kernels_c/srcad_guards.h: the facts of `_spec_key` as
    bytes), else None -- and always None without the C runtime (the Python key serves)."""
    global _array_key
    _array_key = c_helper("array_key") or (lambda args: None)
    return _array_key(args)


def _unwrap_attribute_state(fn_ir: ir.Function, given: dict) -> None:
    """`self.out = v` ran natively on the tape: the object holds the tape's wrapper of v. It
    must end up holding v, as after a call in source mode (frontend/attrstate.py): the
    caller's own list or dict where v is an argument the tape followed (`net.params =
    params`: `net.params is params` after the call, as in Python; `given` maps id(follower)
    to the argument), else plain values."""
    def settled(held):
        if id(held) in given:
            return given[id(held)]
        return tape._plain_tree(held)

    for s in ir.walk_program(fn_ir):
        if isinstance(s, ir.Effect) and s.kind == "setattr" and \
                isinstance(s.args["_obj"], ir.Const):
            obj, attr = s.args["_obj"].value, s.args["attr"].value
            held = getattr(obj, attr, None)
            if isinstance(held, (tape.Tensor, tape.CONTAINERS)):
                setattr(obj, attr, settled(held))
            elif type(held) in (list, dict):  # (`self.cache = [h]`, made in the call)
                tape._plain_in_place(held)
    # `self.X.append(X)`, `self.cache["Z"].append(Z)` (a list or dict an object holds, changed
    # by its own method) ran natively too: the tape's wrappers in them become their values;
    # and an attribute set by a route the IR does not spell (`setattr(L, key, W)` with a key
    # known only when it runs, `L.__dict__["W"] = W`, `object.__setattr__`: refused where a
    # gradient would read it back, run as written elsewhere) holds the value, not its wrapper
    todo, seen = [], set()
    for s in ir.walk_program(fn_ir):
        for a in getattr(s, "args", {}).values() if isinstance(s, (ir.Call, ir.Effect)) else ():
            if isinstance(a, ir.Const):
                todo.append(a.value)
    while todo:  # (the objects reached from them too: `net.layers[0].saved["z"] = z`)
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if type(v) in (list, tuple):
            todo.extend(v)
        elif is_user_object(v) and isinstance(getattr(v, "__dict__", None), dict):
            own = vars(v)
            for k, held in list(own.items()):
                if isinstance(held, (tape.Tensor, tape.CONTAINERS)):
                    own[k] = settled(held)
                elif type(held) in (list, dict):
                    tape._plain_in_place(held)
                    todo.extend(held.values() if type(held) is dict else held)
                elif is_user_object(held):
                    todo.append(held)


class _Pending:
    """A specialisation built unfused under the automatic default, to be fused on call `at`:
    what its fused build needs (the same IR, probe results and options), and the objects
    rebound since (`Transformed._fresh`'s swaps, applied to the fused module with `relink`)."""

    __slots__ = ("at", "calls", "fn_ir", "infos", "opts", "signature", "swaps")

    def __init__(self, at, fn_ir, infos, signature, opts):
        self.calls, self.at = 1, at
        self.fn_ir, self.infos, self.signature, self.opts = fn_ir, infos, signature, opts
        self.swaps: dict = {}

    def rebound(self, swaps: dict) -> None:
        """Objects the generated code reads were rebound (id(old) -> new): compose."""
        for k, v in self.swaps.items():
            self.swaps[k] = swaps.get(id(v), v)
        for k, v in swaps.items():
            self.swaps.setdefault(k, v)


class Transformed:
    """A transformed function: calling it runs the generated code for its inputs."""

    def __init__(self, fn, kind: str, wrt, options: dict):
        call = inspect.getattr_static(type(fn), "__call__", None)
        if inspect.isfunction(call) and not isinstance(fn, type) and \
                type(fn).__module__.split(".")[0] != "srcad":
            # a user's callable object (`model` of `def __call__(self, x)`): its __call__,
            # bound to it, as `model.loss` is transformed (the object read at each call)
            fn = types.MethodType(call, fn)
        if needs_wrapper(fn):  # (a functools.partial, np.sin: srcad/wrappers.py)
            fn = wrapper(fn)
        self.fn = fn
        self.kind = kind  # "grad" | "value_and_grad" | "vjp" | "jvp"
        # (validated first: a bad option is the user's first error, before any parsing)
        self.options = Options.of(kind, **options)
        self.inner = None
        if isinstance(fn, Transformed):
            # higher order: the generated code of `fn` (for each input signature) is ordinary
            # Python, and it is what this transform parses
            if fn.kind != "grad" and not (fn.kind == "value_and_grad" and kind in ("vjp", "jvp")):
                raise SrcadError(
                    f"srcad can transform a srcad.grad again, not a srcad.{fn.kind}",
                    hint="write the derivative you want as srcad.grad(...) of a function")
            self.inner = fn
            try:
                self._ir = fn._ir
            except SharingUnknownError:  # (fn waits for its first call's arguments: so do we)
                self._ir_now = None
            self.params = list(fn.params)
            self._inner_version = fn._version
        # what the code is built on: the guards of the names its IR read (a copy: accepting an
        # equal value here must not hide the change from another transform of fn)
        self._guards = Guards()
        self._ir_stale = False  # normalise again before the next build (see `_ir`)
        self._deferred = None  # a refusal that the first call's arguments may lift
        self._version = 0  # bumped whenever the built code changes (a transform of this sees it)
        if self.inner is None:
            try:
                self._ir = _ir_of(fn)
                self._guards = self._ir.guards.copy()
            except UnresolvedNameError:
                # (`@srcad.grad` above a helper the module defines later: Python reads the
                # name when the function runs, so the first call normalises again)
                self._ir_now = None
                self._ir_stale = True
            except SharingUnknownError as e:
                # (`c = s[idx]; s -= m` with idx an argument: a view or a copy as idx holds
                # an int or an array; the first call's arguments tell)
                self._ir_now = None
                self._deferred = e
            self.params = list(self._ir_now.params) if self._ir_now is not None else \
                _params_of(fn)
        self.single = not isinstance(wrt, (tuple, list))
        self.wrt = self._resolve_wrt(wrt)
        self.options = replace(self.options, wrt=tuple(self.wrt), single=self.single)
        self._cache: dict = {}
        self._pending: dict = {}  # specialisation key -> _Pending (fused on a later call)
        self._unsettled = False  # the last `compiled` returned code that will be replaced
        self._last: Compiled | None = None
        self._mains: dict = {}  # specialisation key -> generated function, for __call__
        self.__signature__ = inspect.signature(fn)
        # (`*rest` / `**kw`: arguments are bound through the signature, never positionally)
        starred = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                      for p in self.__signature__.parameters.values())
        self._nparams = -1 if starred else len(self.params)
        self._fast = self.options.mode == "source" and kind in ("grad", "value_and_grad")
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
                star = self._star_position()
                code = getattr(self.fn, "__code__", None)
                if star is not None and not 0 <= w < star:
                    raise SrcadError(
                        f"wrt={w}: {self._ir.name} takes *{self.params[star]}, so argument "
                        f"{w} is one of the extra positional arguments, not a parameter",
                        filename=getattr(code, "co_filename", None),
                        lineno=getattr(code, "co_firstlineno", None), func=code and code.co_name,
                        hint=f"differentiate with respect to all of them, "
                        f"wrt={self.params[star]!r} (a tuple of gradients), or name the "
                        f"parameter")
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

    def _star_position(self) -> int | None:
        """Where `*rest` sits among the positional parameters (None: fn takes no *rest)."""
        params = list(inspect.signature(self.fn).parameters.values())
        for i, p in enumerate(params):
            if p.kind == p.VAR_POSITIONAL:
                return i
        return None

    def _runs_as_written(self, values) -> bool:
        """Can `fn(*values)` make the call (fn a plain function of positional parameters)?"""
        if self.inner is not None or not callable(self.fn):
            return False
        try:
            params = list(inspect.signature(self.fn).parameters.values())
        except (TypeError, ValueError):
            return False
        return len(params) == len(values) and all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)

    # -- arguments ---------------------------------------------------------------------------
    def bind(self, args, kwargs) -> list:
        if not kwargs and len(args) == self._nparams:
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
            if not _is_differentiable(v):
                record = dataclasses.is_dataclass(v) and not isinstance(v, type)
                raise SrcadError(
                    f"cannot differentiate {self._ir.name} with respect to `{w}`, {_a(v)}: "
                    + ("a dataclass instance is no pytree srcad differentiates (arrays and "
                       "numbers, in dicts, lists, tuples and namedtuples)" if record else
                       "gradients are defined for floating-point arguments only"),
                    filename=self._ir.filename, lineno=self._ir.first_line, func=self._ir.name,
                    hint=(f"pass its fields as a dict (`dataclasses.asdict({w})`) or a "
                          f"namedtuple (a typing.NamedTuple keeps its methods and properties)"
                          if record else
                          f"pass `{w}` as a float array (e.g. np.asarray({w}, dtype=float)) or "
                          f"leave it out of wrt"))

    # -- names read at call time ------------------------------------------------------------
    @property
    def _ir(self) -> ir.Function:
        """fn's normalised IR as fn's names are bound now (normalised again when stale)."""
        self._renormalise_if_stale()
        if self._ir_now is None and self._deferred is not None:
            raise self._deferred
        return self._ir_now

    def _renormalise_if_stale(self) -> None:
        if self._ir_stale:
            self._ir_stale = False
            try:
                self._ir_now = _ir_of(self.fn)
            except SharingUnknownError as e:  # (the arguments will tell: `_ir_with`)
                self._ir_now, self._deferred, self._guards = None, e, Guards()
                return
            self._guards = self._ir_now.guards.copy()

    @_ir.setter
    def _ir(self, value: ir.Function) -> None:
        self._ir_now = value

    def _fresh(self) -> None:
        """Make the built code mean what calling fn means now: check the guards (the names
        fn's normalisation looked up still hold their objects), and where one fails keep the
        code (an equal literal; an array of the same shape and dtype, rebound in the generated
        modules) or drop every specialisation (srcad/frontend/guards.py)."""
        if self.inner is not None:
            self.inner._fresh()
            if self.inner._version != self._inner_version:  # (its code is what we parsed)
                self._inner_version = self.inner._version
                self._drop()
            return
        if self._guards.holds():
            return
        failed = self._guards.failures()
        how = [None if e[0] == "absent" else equivalent(e[3], new) for e, new in failed]
        if not all(how):
            self._drop()
            self._ir_stale = True
            self._renormalise_if_stale()  # (now: a name that is gone is this call's error)
            return
        swaps = {id(e[3]): new for (e, new), h in zip(failed, how) if h == "rebind"}
        for entry, new in failed:
            self._guards.accept(entry, new)
        if swaps:  # the same code over the new arrays (a new module: see pipeline.relink)
            self._cache = {k: relink(c, swaps) for k, c in self._cache.items()}
            for pending in self._pending.values():
                pending.rebound(swaps)
            self._mains.clear()
            self._last = None
            self._ir_stale = True  # (a later build must inject the new objects)
            self._version += 1

    def _known_objects(self, values) -> dict:
        """The arguments that are user objects (a layer, a cost class) or lists of them (the
        layers of a model): their methods are resolved when normalising, so the code is
        specialised on them, by identity (a list's items guarded too); and short strings (a
        registry key, a mode), specialised on their value as the built code already is."""
        if self.inner is not None:
            return {}
        return {p: v for p, v in zip(self.params, values)
                if (not isinstance(v, (np.ndarray, np.generic, float, int, dict, list, tuple))
                    and v is not None and is_user_object(v))
                or (isinstance(v, (list, tuple)) and is_object_sequence(v))
                or (type(v) is str and len(v) <= 64)  # (a name: `ACTIVATIONS[name]()`)
                or _names(v)  # (names a loop picks by: `for name in spec: REG[name]()(h)`)
                or _has_row(v)  # (a numpy function given as an argument: `act=np.tanh`)
                or (isinstance(v, functools.partial) and is_user_object(v.func))
                or is_sparse(v)}  # (a scipy.sparse matrix: `L @ x`'s row, as a module's)

    def _ir_with(self, known: dict, values=()) -> ir.Function:
        """fn's IR with these parameters known to hold these objects (its guards join the
        ones checked before each call); for a function whose in-place writes depend on what
        an index argument holds (`_deferred`), also told which arguments are arrays. A
        transform of a transform parses the inner one's generated code for these arguments
        (`self._ir`, set by `compiled`), which the inner one specialised on them already:
        normalising `self.fn` here would differentiate the user's function, not its
        derivative."""
        if self.inner is not None:
            return self._ir
        arrays, containers = self._kinds(values) if self._deferred else (frozenset(), frozenset())
        tuples = frozenset(_namedtuple_params(self.params, values))
        statics = frozenset(_static_params(self.params, values)) \
            if isinstance(self._deferred, CountUnknownError) else None
        dicts = dict_paths_of(self.params, values)
        keys = _dict_keys(self.params, values)
        scalars = _dict_scalars(self.params, values)
        kinds = bool(self._deferred)  # (arrays and containers above are the arguments')
        if not known and not arrays and not tuples and statics is None and not dicts \
                and not containers and not scalars and not kinds:
            return self._ir
        try:
            fn_ir = _ir_of(self.fn, known, arrays, tuples, statics, dicts, containers, keys,
                           scalars, kinds)
        except CountUnknownError as e:  # (told only now: the arguments' counts settle it)
            if statics is not None:
                raise
            self._deferred = e
            statics = frozenset(_static_params(self.params, values))
            arrays, containers = self._kinds(values)
            fn_ir = _ir_of(self.fn, known, arrays, tuples, statics, dicts, containers, keys,
                           scalars, True)
        self._guards.extend(fn_ir.guards)
        if self._ir_now is None:  # (messages name the function through `_ir`)
            self._ir_now = fn_ir
        return fn_ir

    def _kinds(self, values) -> tuple:
        """The parameters that hold arrays (not 0-d), and those that hold lists, tuples and
        dicts (a store into one replaces an item, which names bound to the old item keep --
        no memory is shared)."""
        return (frozenset(p for p, v in zip(self.params, values)
                          if type(v) is np.ndarray and v.ndim),
                frozenset(p for p, v in zip(self.params, values)
                          if type(v) in (list, tuple, dict)))

    def _drop(self) -> None:
        """Forget every specialisation (a name fn reads was rebound)."""
        self._cache.clear()
        self._pending.clear()
        self._mains.clear()
        self._last = None
        self._version += 1

    # -- compilation -------------------------------------------------------------------------
    def compiled(self, values: list, given: int | None = None, *,
                 to_transform: bool = False) -> Compiled:
        """The generated code for these argument values (built on first sight of their
        shapes). `given`: for vjp/jvp, how many leading arguments are primals; parameters
        left to their defaults get no derivative. `to_transform`: the code will be parsed
        and transformed again (higher order), so loops are not checkpointed (the gradient
        is the same, bit for bit)."""
        self._fresh()
        key = _spec_key(values) + (given,) + ((True,) if to_transform else ())
        known = self._known_objects(values)
        if known:  # (the code resolved their methods: it is theirs, by identity)
            key += (tuple(_known_key(v) for v in known.values()),)
        hit = self._cache.get(key)
        if hit is not None:
            pending = self._pending.get(key)
            if pending is not None:
                pending.calls += 1
                if pending.calls >= pending.at and builds_now():
                    hit = self._fuse_now(key, pending)
            self._unsettled = key in self._pending
            if not to_transform:
                self._last = hit
            return hit
        self._renormalise_if_stale()  # (an array it injects may have been rebound since)
        if self.inner is not None:
            main = self.inner.compiled(values, to_transform=True).functions["main"]
            self._ir = _ir_of(main)
        fn_ir = self._ir_with(known, values)
        env = dict(zip(self.params, values))
        n = len(self.params) if given is None else given
        wrt = self.wrt if self.kind not in ("vjp", "jvp") else [p for p in self.params[:n]
                                                               if _is_differentiable(env[p])]
        self._check_wrt_values(env, wrt)
        with at_user_lines(fn_ir):
            check_opaque(fn_ir, wrt)
        # the probe must not consume a random generator's state: it runs on a copy
        probe_env = {k: copy.deepcopy(v) if isinstance(v, (np.random.Generator,
                                                          np.random.RandomState)) else v
                     for k, v in env.items()}
        try:
            infos, out = probe(fn_ir, probe_env, wrt)
        except SrcadError:
            raise
        except Exception as e:
            # the user's code raised on this call: the probe skips effects, so the call is
            # made as Python makes it -- its effects up to the raise, then the exception
            if not to_transform and self._runs_as_written(values):
                self.fn(*values)
            if isinstance(e, AssertionError):  # (srcad's check of a test it decided?)
                refuse_decided_test(e, fn_ir)
            raise  # (Python's call returned where the probe raised: the probe's exception)
        if self.kind not in ("vjp", "jvp") and isinstance(out, (tuple, list, dict)):
            raise SrcadError(
                f"{self._ir.name} returns a {type(out).__name__}; grad needs one scalar output",
                filename=self._ir.filename, lineno=self._ir.ret.line, func=self._ir.name,
                hint=_keep_first_hint(self._ir.name, self.params, out))
        if self.kind not in ("vjp", "jvp") and is_bool_output(out):  # (x < y: zeros)
            c = self._cache[key] = zero_gradient_compiled(self, fn_ir)
            if not to_transform:
                self._last = c
            return c
        if self.kind not in ("vjp", "jvp") and not _is_float(out) and not (
                isinstance(out, (np.ndarray, np.generic)) and np.ndim(out) != 0):
            raise SrcadError(
                f"{self._ir.name} returns {_describe(out) if out is not None else 'None'}; "
                f"grad needs a floating-point scalar output",
                filename=self._ir.filename, lineno=self._ir.ret.line, func=self._ir.name,
                hint="return the scalar loss to differentiate (a float, not an int, bool or "
                "None)")
        if self.kind not in ("vjp", "jvp") and np.size(out) != 1:
            # (a size-1 array, (1,) or (1, 1), is differentiated as its one element, as
            # autograd does: the backward is seeded with ones of its shape)
            raise NonScalarOutputError(
                f"{self._ir.name} returns an array of shape {np.shape(out)}; grad needs a "
                f"scalar output",
                filename=self._ir.filename, lineno=self._ir.ret.line, func=self._ir.name,
                hint="reduce it to a scalar (e.g. np.sum), or use srcad.vjp(f, *args) to "
                "pull back a cotangent of that shape")
        signature = ", ".join(f"{p}: {_describe(env[p])}" for p in self.params)
        opts = self._options_or_error(wrt, infos, signature, values, to_transform, fn_ir)
        with at_user_lines(fn_ir):
            c = self._build(wrt, infos, signature, values, to_transform=to_transform,
                            fn_ir=fn_ir, opts=opts)
        self._cache[key] = c
        at = fuse_after() if self.options.fuse is None else 0
        if at > 1 and not to_transform and not opts.fuse:  # (tiered: fused on call `at`)
            self._pending[key] = _Pending(at, fn_ir, infos, signature, opts)
        self._unsettled = key in self._pending
        if not to_transform:
            self._last = c
        return c

    def _fuse_now(self, key, pending: _Pending) -> Compiled:
        """The automatic default's second tier: build this specialisation fused (the same IR,
        probe results and options, with fuse=True) and use it from this call on, where a
        compiler works and something fused; otherwise the unfused code stays. Silent, but for
        a bug in the fuser (a warning, and the unfused code)."""
        current = self._cache[key]
        if self._pending.pop(key, None) is None:  # (another thread took it)
            return current
        try:
            compiler_identity()  # (cached per process: no compiler, no build attempted)
        except CompilerUnavailable:
            return current
        opts = replace(pending.opts, fuse=True,
                       remat=True if pending.opts.kind != "jvp" else pending.opts.remat)
        try:
            with quiet():
                fused = build(pending.fn_ir, pending.infos, pending.signature, opts)
        except Exception as e:  # noqa: BLE001  (a bug: the unfused code is right and runs)
            warnings.warn(f"srcad: fusing {self._ir.name} failed ({type(e).__name__}: {e}); "
                          f"it keeps running unfused. This is a bug in srcad, please report "
                          f"it (fuse=False silences this)", stacklevel=4)
            return current
        if fused.kernels is None or fused.kernels.module is None:
            return current  # (nothing fused, or no compiler after all)
        if pending.swaps:  # (a global array rebound since the first build: read the new one)
            fused = relink(fused, pending.swaps)
        self._cache[key] = fused
        return fused

    def build_options(self, wrt, infos, signature, values=None,
                      to_transform=False, fn_ir=None) -> Options:
        """The options one specialisation is built with: the user's, with the memory-budget
        planner's choices (measured on `values`) and fuse=True's recomputation. The
        automatic default builds unfused (fused later: `_fuse_now`) unless SRCAD_FUSE says
        to fuse from the first call."""
        fuse = self.options.fuse if self.options.fuse is not None else fuse_after() == 1
        opts = replace(self.options, wrt=tuple(wrt), reparsed=to_transform, fuse=fuse)
        if opts.memory_budget is not None and values is not None and \
                self.kind != "jvp" and not to_transform:
            opts = self._budget_policy(opts, infos, signature, values, fn_ir or self._ir)
        if opts.fuse and opts.kind != "jvp" and not to_transform:
            # fused code recomputes elementwise values in the backward rather than saving
            # them: inside a kernel that costs arithmetic, not memory traffic
            opts = replace(opts, remat=True)
        return opts

    def _internal_error(self, e: Exception) -> SrcadError:
        return SrcadError(
            f"internal error while transforming {self._ir.name}: {type(e).__name__}: {e}",
            filename=self._ir.filename, lineno=self._ir.first_line, func=self._ir.name,
            hint="this is a bug in srcad; please report it with the function")

    def _options_or_error(self, wrt, infos, signature, values, to_transform, fn_ir) -> Options:
        try:
            return self.build_options(wrt, infos, signature, values, to_transform, fn_ir)
        except SrcadError:
            raise
        except Exception as e:  # an internal error must not reach the user bare
            raise self._internal_error(e) from e

    def _build(self, wrt, infos, signature, values=None, to_transform=False,
               fn_ir=None, opts=None) -> Compiled:
        fn_ir = fn_ir or self._ir
        try:
            if opts is None:
                opts = self.build_options(wrt, infos, signature, values, to_transform, fn_ir)
            return build(fn_ir, infos, signature, opts)
        except SrcadError:
            raise
        except Exception as e:  # an internal error must not reach the user bare
            raise self._internal_error(e) from e

    def _budget_policy(self, opts: Options, infos, signature, values, fn_ir) -> Options:
        """memory_budget: what to save and what to recompute, measured on these arguments
        (srcad.plan); warns when the budget cannot be met. Returns the options with the
        plan's choices."""
        plan = budget_plan(fn_ir, infos, signature, values, opts)
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
        self._fresh()
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
            return self._tape_over_inner(values, given)
        self._fresh()  # (the refusals below read the IR: the one fn means now)
        fn_ir = self._ir_with(self._known_objects(values), values)
        env = dict(zip(self.params, values))
        n = len(self.params) if given is None else given
        wrt = self.wrt if self.kind not in ("vjp", "jvp") else [p for p in self.params[:n]
                                                               if _is_differentiable(env[p])]
        self._check_wrt_values(env, wrt)
        with at_user_lines(fn_ir):  # (the same refusals as source mode, at the same lines)
            check_opaque(getattr(fn_ir, "as_folded", fn_ir), wrt, tape=True)
        mask = [p in wrt for p in self.params]
        try:
            t, wrapped, out = tape.run(self.fn, values, mask, self.params)
        except Exception as e:
            raise _at_traced_line(e)  # noqa: B904  (the same exception, or one at its line)
        tape.settle_arguments(values, wrapped)  # (param[k] = v: plain values, as in source)
        _unwrap_attribute_state(fn_ir, {id(w): v for v, w in zip(values, wrapped)
                                        if w is not v})
        tape.settle_kept(t, kept_stored(fn_ir))  # (history.append(h): likewise)
        value = tape.value_of(out)
        if self.kind in ("grad", "value_and_grad") and not is_bool_output(value):
            if not _is_float(value) or np.size(value) != 1:
                raise NonScalarOutputError(
                    f"{self._ir.name} returns {_describe(value)}; grad needs a floating-point "
                    f"scalar output", filename=self._ir.filename, lineno=self._ir.ret.line,
                    func=self._ir.name, hint="use srcad.vjp for other outputs")
        return t, wrapped, out, value, mask

    def _tape_over_inner(self, values, given=None):
        """mode="tape" of a transformed function (``srcad.grad(srcad.grad(f), mode="tape")``):
        the tape records the inner transform's call as one composed op, as it does for a
        transform called inside a function it runs; its backward is the inner transform's own
        pullback (reverse over reverse through the inner's generated code)."""
        inner = self.inner

        def call_inner(*args):
            return inner(*args)

        n = len(self.params) if given is None else given
        env = dict(zip(self.params, values))
        wrt = self.wrt if self.kind not in ("vjp", "jvp") else [p for p in self.params[:n]
                                                               if _is_differentiable(env[p])]
        self._check_wrt_values(env, wrt)
        mask = [p in wrt for p in self.params]
        t, wrapped, out = tape.run(call_inner, values, mask, None)
        value = tape.value_of(out)
        if self.kind in ("grad", "value_and_grad") and not is_bool_output(value) and (
                not _is_float(value) or np.size(value) != 1):
            raise NonScalarOutputError(
                f"{self._ir.name}'s gradient is {_describe(value)}; grad needs a "
                f"floating-point scalar output", filename=self._ir.filename,
                lineno=self._ir.ret.line, func=self._ir.name,
                hint="use srcad.vjp or srcad.jvp for other outputs")
        return t, wrapped, out, value, mask

    def __call__(self, *args, **kwargs):
        # the common path: positional arrays whose shapes were seen before -> straight to the
        # generated function (the key is built as `compiled` builds it)
        if not kwargs and len(args) == self._nparams and self._fast and (
                self.inner is None and self._guards.holds()):
            key = _array_key(args)  # (all plain arrays: read in C, ~1 us less for six)
            if key is None:  # (`_spec_key` written out: one function call less every call)
                key = tuple([(v.shape, v.dtype, v.flags.c_contiguous)
                             if type(v) is np.ndarray else _key_of(v) for v in args]) + (None,)
            main = self._mains.get(key)
            if main is not None:
                try:
                    return main(*args)
                except SrcadError as e:  # (a refusal at run time: the user's line)
                    _at_generated_line(e, self._ir)
                    raise
                except AssertionError as e:  # (a test decided when built, changed since?)
                    refuse_decided_test(e, self._ir)
                    raise
        values = self.bind(args, kwargs)
        if self.inner is None and getattr(self.fn, "__closure__", None) and any(
                _tape_of(_cell_value(c)) is not None for c in self.fn.__closure__):
            # a nested function over the tape's values (tape mode runs the enclosing one as
            # written): its free variables as arguments, one composed op (closure_lift.py) --
            # first, also where an argument is the tape's too (else the composed op's own
            # call would meet the Tensors in the cells)
            lift = self.__dict__.setdefault("_lifted", {})
            if "t" not in lift:
                lift["t"] = Transformed(closure_lift.lifted(self.fn), self.kind,
                                        self.wrt[0] if self.single else tuple(self.wrt),
                                        self.options.user())
            return lift["t"](*values, *closure_lift.cell_values(self.fn))
        held = next((v for v in values if _tape_of(v) is not None), None)
        if held is not None:  # called inside a function tape mode runs: one composed op
            return _tape_of(held).apply(None, (self, *values), {}, op=transformed_call_op(
                len(values)))
        if self.options.mode == "tape":
            t, wrapped, out, value, mask = self.tape_call(values)
            if is_bool_output(value):  # (x < y: zeros, as in source mode; one warning)
                if ("bool",) not in self._cache:
                    self._cache[("bool",)] = zero_gradient_compiled(self, self._ir)
                return self._cache[("bool",)].functions["main"](*values)
            seed = 1.0 if np.ndim(value) == 0 else np.ones_like(value)  # (size 1: see above)
            gs = tape.grads(t, wrapped, values, out, seed, mask)
            picked = [gs[self.params.index(p)] for p in self.wrt]
            result = picked[0] if self.single else tuple(picked)
            return (value, result) if self.kind == "value_and_grad" else result
        c = self.compiled(values)
        if self._fast and not kwargs and len(args) == self._nparams and not self._unsettled \
                and not self._known_objects(values):  # (objects: by identity, in `compiled`)
            self._mains[_spec_key(values) + (None,)] = c.functions["main"]
            key = _array_key(tuple(values))
            if key is not None:
                self._mains[key] = c.functions["main"]
        try:
            return c.functions["main"](*values)
        except SrcadError as e:  # (a refusal at run time: the user's line)
            _at_generated_line(e, self._ir)
            raise
        except AssertionError as e:  # (a test decided when built, changed since?)
            refuse_decided_test(e, self._ir)
            raise

    def __repr__(self):
        return f"<srcad.{self.kind} of {self._ir.name} wrt {', '.join(self.wrt)}>"

    def __get__(self, obj, owner=None):
        """`@srcad.grad(wrt="W")` on a method: `model.dloss(W, x)` passes the object first, as
        a function's `__get__` does (an instance's own attribute is not bound: Python's rule)."""
        if obj is None:
            return self
        return types.MethodType(self, obj)

    # -- pickling: by reference (another process rebuilds it: srcad/parallel.py) ----------------
    def __reduce__(self):
        """What `pickle` sends: the user function by module and qualified name (or, for a
        transform of a transform, the inner transform, itself by reference), the kind, `wrt`
        and the user's options -- never generated code or kernels. The receiving process
        builds its own specialisations and kernels (its SRCAD_CACHE_DIR) on first call."""
        wrt = self.wrt[0] if self.single else tuple(self.wrt)
        fn = getattr(self.fn, "__srcad_wraps__", self.fn)  # (a partial: pickle's own way)
        if fn is not self.fn:
            reference_check(fn, self.kind)
        return (_rebuilt, (_reference(fn, self.kind), self.kind, wrt,
                           tuple(sorted(self.options.user().items()))))

    # -- called inside a differentiated function (srcad/ops/composed.py) ----------------------
    _srcad_transformed = True  # (the frontend's mark: a call of this is a composed op)

    def _derived(self, kind: str) -> Transformed:
        """vjp / jvp of this transform, made once (its code is built per shape, cached)."""
        derived = self.__dict__.setdefault("_derived_transforms", {})
        if kind not in derived:
            if self.kind not in ("grad", "value_and_grad"):
                raise SrcadError(
                    f"a srcad.{self.kind} called inside a differentiated function can only be "
                    f"differentiated for srcad.grad", hint="call srcad.grad(...) there, and "
                    "compute the value with the function itself")
            derived[kind] = Transformed(self, kind, (), {})
        return derived[kind]

    def pullbacks(self, n: int):
        """``t.vjp_at((a0, ..., a<n-1>), g)`` as a function of (a0, ..., g) that srcad can
        differentiate again (srcad/pullbacks.py), made once per n."""
        made = self.__dict__.setdefault("_pullbacks", {})
        if n not in made:
            made[n] = Pullbacks(self, n)
        return made[n]

    def vjp_at(self, args, cotangent) -> tuple:
        """The pullback of this transform at `args`, applied to `cotangent`: one gradient per
        argument (None for one that is not a float), as `srcad.vjp(self, *args)[1]`."""
        t = self._derived("vjp")
        values = list(args)
        c = t.compiled(values, given=len(values))
        out, saved = c.functions["fwd"](*values)
        cotangent = cotangent_like(out_structure(out), dense_cotangent(out, cotangent),
                                   getattr(self.fn, "__name__", "the function"))
        grads = iter(c.functions["bwd"](runtime.fresh_stacks(saved), cotangent))
        # (a container argument's gradient as generated code carries one: a GradTree)
        return tuple(grad_tree(next(grads), v) if _is_differentiable(v) else None
                     for v in values)

    def jvp_at(self, args, i: int, tangent):
        """The tangent of this transform's output along argument `i`'s `tangent` (the other
        arguments held), as `srcad.jvp(self, args, ...)[1]`."""
        t = self._derived("jvp")
        values = list(args)
        c = t.compiled(values, given=len(values))
        dots = [tangent if k == i else zero_tangent(v) for k, v in enumerate(values)
                if _is_differentiable(v)]
        return tangent_tree(c.functions["main"](*values, *dots)[1])


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # (an empty cell)
        return None


def _tape_of(v):
    """The tape that a value tape mode follows belongs to (a Tensor, a container argument
    of Tensors, or a plain list / tuple / dict holding one), else None."""
    if isinstance(v, (tape.Tensor, *tape.CONTAINERS)):
        return v.tape
    if isinstance(v, (list, tuple)):  # (a namedtuple too: `P(W, b)` of Tensors)
        return next((t for x in v if (t := _tape_of(x)) is not None), None)
    if isinstance(v, dict):
        return next((t for x in v.values() if (t := _tape_of(x)) is not None), None)
    return None


# --- refusals raised while code runs: the user's line ---------------------------------------
_LINE_MARK = re.compile(r"#\s*L(\d+)\s*$")


def _at_generated_line(err: SrcadError, fn_ir: ir.Function) -> None:
    """`err`, a SrcadError that names no line (or one of srcad/pyfuncs.py), raised while the
    generated code of `fn_ir` ran (a refusal of srcad's runtime, or of its stand-in for a
    library function): made to name the line of `fn_ir` its entry point was running (the
    `# L<n>` each generated line ends with), with the stand-in it was inside, if any ("in
    np.polyfit: ...")."""
    if err.filename is not None and not in_substitute(err.filename):
        return
    frames = []
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<srcad-generated"):
            frames.append((tb.tb_frame.f_code, tb.tb_lineno))
        tb = tb.tb_next
    if not frames:
        return
    (code, lineno), inner = frames[0], frames[1:2]
    mark = _LINE_MARK.search(linecache.getline(code.co_filename, lineno))
    if mark is not None:
        label = label_of(inner[0][0].co_name.rsplit("_", 1)[0]) if inner else None
        at_call_site(err, fn_ir.filename, int(mark.group(1)), fn_ir.name, label)


def refuse_decided_test(e: AssertionError, fn_ir: ir.Function) -> None:
    """Where `e` is a check srcad put where it decided a test when it built the code
    (knowntests.py `_still`, `DECIDED_CHECKS`) failing: raises the SrcadError at the test's
    own file and line (the generated line's, where the message has none). Else returns: the
    user's own `assert`, which reaches the user as Python raises it."""
    text = e.args[0] if len(e.args) == 1 and isinstance(e.args[0], str) else ""
    if not text.startswith(DECIDED_CHECKS):
        return
    text = text.removeprefix("srcad: ")
    at = _DECIDED_AT.search(text)
    if at is not None:  # (knowntests.decided_at)
        raise SrcadError(text[:at.start()], filename=at.group(1), lineno=int(at.group(2)),
                         hint=DECIDED_HINT) from None
    err = SrcadError(text, hint=DECIDED_HINT).with_traceback(e.__traceback__)
    _at_generated_line(err, fn_ir)
    raise err from None


_DECIDED_AT = re.compile(r' \(at "(.+)", line (\d+)\)$')


def run_generated(entry, fn_ir: ir.Function, *args):
    """`entry(*args)`, a generated function of `fn_ir`: a refusal it raises that names no
    line of the user's names the one it was running (`_at_generated_line`)."""
    try:
        return entry(*args)
    except SrcadError as e:
        _at_generated_line(e, fn_ir)
        raise
    except AssertionError as e:  # (a test decided when built, changed since?)
        refuse_decided_test(e, fn_ir)
        raise


def _at_traced_line(err: Exception):
    """`err`, raised while tape mode ran the user's function: a SrcadError that names no
    line (or one of srcad/pyfuncs.py) names the user's line that made the call it came from
    (the innermost frame of the user's code); another exception raised inside srcad's stand-in
    for a library function (not by the user's code it calls back: a key function) becomes a
    SrcadError at that line, as source mode's probe reports it. Returns the error to raise."""
    user, inside = None, None  # (the innermost user frame; the stand-in frame it called)
    tb = err.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if in_substitute(frame.f_code.co_filename):
            if user is not None and inside is None:
                inside = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
        else:
            try:  # (a traced function's globals: tape.py's _TracedGlobals, filled on reads)
                mod = sys.modules.get(frame.f_globals["__name__"])
            except Exception:  # noqa: BLE001
                mod = None
            if mod is not None and not is_library_module(mod):
                user, inside = (frame.f_code, tb.tb_lineno), None
        tb = tb.tb_next
    if user is None:
        return err
    code, lineno = user
    if isinstance(err, SrcadError):
        return at_call_site(err, code.co_filename, lineno, code.co_name, label_of(inside or ""))
    if inside is None or getattr(err, "_srcad_user", False):
        return err  # (the user's own code raised it)
    label = label_of(inside) or inside
    return user_error(err, f"{type(err).__name__} in {label}: {err}",
                      filename=code.co_filename, lineno=lineno, func=code.co_name,
                      hint="the error comes from the user's code on these inputs")


def _keep_first_hint(name: str, params, out) -> str:
    """A wrapper that keeps a tuple output's first item, spelled for this function."""
    args = ", ".join(params)
    if not isinstance(out, tuple) or len(out) < 2:
        return "return the scalar loss alone"
    targets = ", ".join(["loss"] + ["_"] * (len(out) - 1))
    return (f"differentiate a function that keeps the loss and drops the rest: `def "
            f"{name}_loss({args}): {targets} = {name}({args}); return loss` (what it drops "
            f"costs nothing in the backward)")


# -- pickling by reference ----------------------------------------------------------------------
_REBUILT: dict = {}  # (fn, kind, wrt, options) -> the Transformed this process rebuilt


def _unwrapped(obj):
    """The plain function under `@srcad.grad` decorations (what a module binds the name to)."""
    while isinstance(obj, Transformed):
        obj = obj.fn
    return obj


def _reference(fn, kind: str):
    """How `fn` travels: a plain function as ("ref", module, qualname), checked here to name
    this very function (so the receiver cannot silently rebuild another); anything else (a
    transform, a bound method) as itself, for pickle to handle."""
    if not isinstance(fn, types.FunctionType):
        return fn
    module, qualname = fn.__module__, fn.__qualname__
    where = f"{module}.{qualname}"
    if "<locals>" in qualname or "<lambda>" in qualname:
        raise SrcadError(
            f"srcad.{kind} of {where} cannot be sent to another process: a function defined "
            f"inside another function (or a lambda) has no name to import it by there",
            filename=fn.__code__.co_filename, lineno=fn.__code__.co_firstlineno,
            hint="define the function at the top level of a module the receiving process "
            "can import")
    try:
        found = _unwrapped(_resolve(module, qualname, kind))
    except SrcadError:
        found = None
    if found is not fn:
        raise SrcadError(
            f"srcad.{kind} of {where} cannot be sent to another process by name: {where} is "
            f"now bound to {'nothing' if found is None else repr(found)}, not this function",
            filename=fn.__code__.co_filename, lineno=fn.__code__.co_firstlineno,
            hint="transform the function the module's name holds (do not rebind or delete it)")
    return ("ref", module, qualname)


def reference_check(fn, kind: str) -> None:
    """A partial travels to another process as itself (pickle's own way): its function must
    be importable there -- say so now, as for a transformed function (a SrcadError)."""
    inner = fn
    while isinstance(inner, functools.partial):
        inner = inner.func
    if isinstance(inner, types.FunctionType):
        _reference(inner, kind)


def _resolve(module: str, qualname: str, kind: str):
    """The object `module.qualname` names in this process (imported if need be)."""
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise SrcadError(
            f"cannot rebuild srcad.{kind} of {module}.{qualname} in this process: "
            f"{type(e).__name__}: {e}",
            hint="a transformed function travels by reference: its module must be importable "
            "here (installed or on sys.path; a script's __main__ is not) and define it at "
            "the top level") from None
    return obj


def _rebuilt(ref, kind: str, wrt, options: tuple) -> Transformed:
    """The receiving side of `Transformed.__reduce__`: the transform of the function `ref`
    names, made once per process (later unpickles reuse its specialisations and kernels)."""
    if isinstance(ref, tuple) and len(ref) == 3 and ref[0] == "ref":
        fn = _unwrapped(_resolve(ref[1], ref[2], kind))
    else:
        fn = ref
    key = (fn, kind, wrt, options)
    try:
        hit = _REBUILT.get(key)
    except TypeError:  # (an unhashable callable: rebuilt every time)
        return Transformed(fn, kind, wrt, dict(options))
    if hit is None:
        hit = _REBUILT[key] = Transformed(fn, kind, wrt, dict(options))
    return hit
