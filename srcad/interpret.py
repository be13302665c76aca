"""Evaluate the normalised IR directly, one op-table call per statement.

Used on a transformed function's first call (per input signature) to learn the shape
and dtype of every value, which lets the reverse transform drop identity unbroadcasts
and pick shape-specialised rule forms; tape mode runs the same calls.
"""

from __future__ import annotations

import collections.abc
import copy
import itertools
import operator
from typing import Any

import numpy as np

from . import ir
from .checkpoint import check_schedule
from .errors import SrcadError, at_call_site, in_substitute
from .pyfuncs import label_of
from .runtime import own, store_into, store_through, sync_into
from .runtime_python import MUTATING
from .runtime_context import interpreting


def atom_value(atom, env: dict) -> Any:
    if isinstance(atom, ir.Var):
        value = env[atom.name]
        if _PROBE_COPIES and _PROBE_COPIES[-1] and type(value) in (list, dict, set):
            held = _PROBE_COPIES[-1].get(id(value))  # (the probe's copy: changed in its place)
            return value if held is None else held[1]
        return value
    if isinstance(atom, ir.Const):
        if _PROBE_COPIES and (_PROBE_COPIES[-1] or isinstance(atom.value, _GENERATORS) or
                              isinstance(getattr(atom.value, "__self__", None), _GENERATORS)
                              or _an_iterator(atom.value)):
            return _probe_copy_of(atom.value)
        return atom.value
    if isinstance(atom, ir.Seq):
        items = [atom_value(a, env) for a in atom.items]
        return tuple(items) if atom.kind == "tuple" else items
    if isinstance(atom, ir.Slice):
        return slice(*(None if a is None else atom_value(a, env)
                       for a in (atom.lower, atom.upper, atom.step)))
    if isinstance(atom, ir.Index):
        parts = tuple(atom_value(p, env) for p in atom.parts)
        return parts if atom.is_tuple else parts[0]
    raise TypeError(f"not an atom: {atom!r}")


# Generated code spells these ops as Python operators: on Python numbers they follow Python's
# arithmetic (int ** -0.5 is a Python float, which numpy treats as a weak scalar), not numpy's
# (np.power(4, -0.5) is a float64 scalar, which would promote float32 arrays).
PY_OPERATORS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "power": operator.pow, "negative": operator.neg,
    "floordiv": operator.floordiv, "mod": operator.mod, "less": operator.lt,
    "less_equal": operator.le, "greater": operator.gt, "greater_equal": operator.ge,
    "equal": operator.eq, "not_equal": operator.ne,
}


# The attributes the shape probe has set (id(obj), name) -> (obj, value): it leaves the
# objects to the real call, but a later read in the same run sees what Python would
# (`self.n_in = X.shape[1]; self._init_params()` of a layer initialised on its first call).
_PROBED_ATTRS: list = []
# per shape probe: (container, index, old item, had it) of each store the probe made into a
# list or dict a global or an object holds ("held" setitem effects), undone by probe.py
PROBE_UNDO: list = []
# per shape probe: a check of each op's argument values before it runs (probe.py
# `_not_followed_object`), called with the statement and the environment
PROBE_ARG_CHECKS: list = []
# per shape probe: a module's list, dict or set a store of the call changes (`_cache[n] = v`,
# `LOG.append(h)`), by id -> the probe's own copy of it, changed in its place: later reads in
# the probe see the store, as Python's would, and the module's container is the real call's
_PROBE_COPIES: list = []


# random generators: the shape probe draws from its own copy of one it did not make (a
# module's `RNG`, `self.rng`), so the real call draws the numbers calling the function would
_GENERATORS = (np.random.Generator, np.random.RandomState)


# iterators over a container or a count, whose shallow copy is independent of them
_LEAF_ITERATORS = frozenset(type(it) for it in (
    iter([]), iter(()), iter(range(0)), iter(range(2 ** 64)), itertools.count(),
    itertools.repeat(0)))


def _an_iterator(value) -> bool:
    """A Python iterator the shape probe would advance (`next(COUNTER)` of a module's
    `itertools.count`, `next(BATCHES)` of its `iter(list)`): the probe reads its own copy,
    so the real call reads the item calling the function would. A generator cannot be
    copied: `_probe_copy_of` refuses it."""
    return isinstance(value, collections.abc.Iterator) and not isinstance(
        value, (np.ndarray, np.generic, str, bytes))


def _containers_copied(value):
    """`value` with each list, dict, tuple and set in it copied, at every depth; arrays and
    other objects are the same objects."""
    if type(value) in (list, tuple, set):
        return type(value)(_containers_copied(v) for v in value)
    if type(value) is dict:
        return {k: _containers_copied(v) for k, v in value.items()}
    return value


def probe_argument(value):
    """An argument as the shape probe reads it: its own copy of an iterator (`g(x, it)`
    reading `next(it)`), the argument itself otherwise."""
    return _probe_copy_of(value) if _an_iterator(value) else value


def _probe_copy_of(value):
    copies = _PROBE_COPIES[-1]
    held = copies.get(id(value))
    if held is not None:
        return held[1]
    made = bool(_PROBE_MADE) and id(value) in _PROBE_MADE[-1]
    if isinstance(value, _GENERATORS) and not made:
        copies[id(value)] = (value, copy.deepcopy(value))
        return copies[id(value)][1]
    if _an_iterator(value) and not made:
        try:  # (a list's or a range's own iterator shares its items; an islice or a map
            # wraps another iterator, which a shallow copy would advance: a deep copy)
            copies[id(value)] = (value, copy.copy(value) if type(value) in _LEAF_ITERATORS
                                 else copy.deepcopy(value))
        except Exception:  # noqa: BLE001  (a generator, a file: Python copies neither)
            raise SrcadError(
                f"srcad's first call of a transform runs the function once more to learn "
                f"its shapes, which would advance the {type(value).__name__} this function "
                f"reads items from (`{getattr(value, '__qualname__', '')}`): the real call "
                f"would then read the item after the one Python's call reads",
                hint="pass what it yields as an argument (`g(x, next(batches))`), or make "
                "it a list and pass the index") from None
        return copies[id(value)][1]
    owner = getattr(value, "__self__", None)  # (`_cache.__setitem__`, `_cache.get`)
    if isinstance(owner, _GENERATORS) and id(owner) not in copies:  # (`RNG.standard_normal`)
        _probe_copy_of(owner)
    if owner is not None and id(owner) in copies:
        return getattr(copies[id(owner)][1], value.__name__)
    return value


def _probe_copies_changed(stmt: ir.Call) -> None:
    """`v = CFG.pop("k")` (`del CFG["k"]`) of a module's list, dict or set: the shape probe
    changes its own copy (`_PROBE_COPIES`), leaving the container to the real call."""
    fn, obj = stmt.args.get("_fn"), stmt.args.get("_obj")
    if isinstance(fn, ir.Const):  # (`CFG.pop`, a bound method read as a constant)
        owner, name = getattr(fn.value, "__self__", None), getattr(fn.value, "__name__", "")
    elif isinstance(obj, ir.Const) and getattr(stmt.op, "family", "") == "opaque method":
        owner, name = obj.value, stmt.op.name.lstrip(".")  # (`CFG.pop("k")` as a method)
    else:
        return
    if _PROBE_COPIES and type(owner) in (list, dict, set) and name in MUTATING and \
            id(owner) not in _PROBE_COPIES[-1]:
        _PROBE_COPIES[-1][id(owner)] = (owner, copy.copy(owner))


def _probe_snapshots_given(stmt, env: dict) -> None:
    """Before a call srcad runs as written and does not know to change nothing (`rng.shuffle(
    X)`, `random.Random(0).shuffle(c)`, `np.copyto(dst, v)`): the arrays, lists and dicts it
    is given as they are, put back when the shape probe ends (`PROBE_UNDO`). The probe's
    later reads see the call's change, as the real call's do, and the caller's objects are
    changed once, by the real call -- an argument shuffled by the probe and again by the
    call was a wrong value and gradient, silently, before the session of 2026-12-07,
    twelfth."""
    if not PROBE_UNDO or getattr(stmt.op, "family", "") not in (
            "opaque call", "opaque method") or getattr(stmt.op, "pure", False) or \
            getattr(stmt.op, "checks_only", False):
        return
    seen = PROBE_SNAPSHOTS[-1] if PROBE_SNAPSHOTS else {}
    for key, atom in stmt.args.items():
        if key in ("_fn", "_obj") or not isinstance(atom, ir.Var):
            continue
        value = env.get(atom.name)
        if id(value) in seen:  # (its state before the first such call is what goes back)
            continue
        seen[id(value)] = value
        if type(value) is np.ndarray and value.flags.writeable and \
                seen.get("bytes", 0) + value.nbytes <= _SNAPSHOT_BYTES:
            seen["bytes"] = seen.get("bytes", 0) + value.nbytes
            PROBE_UNDO[-1].append((value, Ellipsis, value.copy(), True))
        elif type(value) is list:
            PROBE_UNDO[-1].append((value, slice(None), list(value), True))
        elif type(value) is dict:
            PROBE_UNDO[-1].append((value, WHOLE, dict(value), True))


# (a PROBE_UNDO index: the dict's every entry, put back as it was)
WHOLE = object()
# per shape probe: the objects `_probe_snapshots_given` copied (by id), and the bytes of arrays
# copied -- at most _SNAPSHOT_BYTES, so that a loop handing a large array to such a call at
# every trip does not hold a copy per trip until the probe ends
PROBE_SNAPSHOTS: list = []
_SNAPSHOT_BYTES = 1 << 28


def _makes_new(stmt: ir.Call, env: dict) -> bool:
    """Does the call make the object it gives (a class called, `np.nditer(x)`,
    `np.random.default_rng(0)`), rather than hand out one that exists (`layers[0]`,
    `getattr(net, "fc1")`, `next(iter(...))`)?"""
    if getattr(stmt.op, "family", "") != "opaque call":
        return False
    fn = atom_value(stmt.args["_fn"], env) if "_fn" in stmt.args else None
    return isinstance(fn, type) or (getattr(fn, "__module__", "") or "").startswith("numpy")


def _probe_owns(env: dict, name: str, method: str = "") -> None:
    """Before a method srcad runs as written (`layer.forward(h)` of a layer a loop picked
    at run time) in the shape probe: a user's object the probe did not make is replaced, in
    the probe's names, by the probe's own copy of it (one per object, which a constant
    holding it reads too: `_probe_copy_of`), so the method's effects -- a cache appended
    to, a counter moved -- happen once per call, in the real call, as Python's do."""
    value = env[name]
    if _PROBE_COPIES and type(value) in (list, dict, set) and method in MUTATING and \
            not (_PROBE_MADE and id(value) in _PROBE_MADE[-1]) and \
            not _a_probe_copy(value, _PROBE_COPIES[-1]):
        # (`c_deleted = c.pop(0)` of `del c[0]`, `c.setdefault(k, [])` of a list or dict the
        # function is given: the probe changes its own shallow copy, the real call the
        # caller's, once -- the probe had popped the caller's list too: a skipped item)
        copies = _PROBE_COPIES[-1]
        if id(value) not in copies:
            copies[id(value)] = (value, copy.copy(value))
        env[name] = copies[id(value)][1]
        return
    if not _PROBE_COPIES or (_PROBE_MADE and id(value) in _PROBE_MADE[-1]) or \
            not hasattr(value, "__dict__") or isinstance(value, (type, np.ndarray)) or \
            (type(value).__module__ or "").split(".")[0] in _LIBRARIES:
        return
    copies = _PROBE_COPIES[-1]
    if id(value) not in copies:
        try:
            copies[id(value)] = (value, copy.deepcopy(value))
        except Exception:  # noqa: BLE001  (a logger, a socket: run on the object itself)
            return
    env[name] = copies[id(value)][1]


def _a_probe_copy(value, copies: dict) -> bool:
    """Is `value` one of the shape probe's own copies (`copies`: id -> (object, copy))?"""
    return any(dup is value for _, dup in copies.values())


_LIBRARIES = frozenset({"builtins", "numpy", "scipy", "srcad", "functools", "itertools",
                        "collections", "types"})


# per shape probe: the objects (not arrays, not numbers) its own calls made, by id -- a method
# of one of them runs on the object itself (`it.iternext()` of an `np.nditer` the function
# makes drives its loop); a method of anything else runs on a copy, or not at all
_PROBE_MADE: list = []


def call_op(op, args: dict, env: dict):
    """Call an op's numpy forward: required parameters by position (a variadic one's items
    spread), the rest by keyword."""
    if _PROBED_ATTRS and getattr(op, "kind", None) == "attribute" and "_obj" in args:
        obj = atom_value(args["_obj"], env)
        held = _PROBED_ATTRS[-1].get((id(obj), op.name[1:]))
        if held is not None and held[0] is obj:
            return held[1]
    py = PY_OPERATORS.get(op.name)
    if py is not None:
        # generated code spells these rows as Python's operators (`x + y`): compute as it
        # does -- Python numbers by Python's arithmetic (int ** -0.5 is a weak float), numpy
        # scalars by numpy's scalar math, `shape + (1,)` by concatenation (srcad refuses a
        # gradient through a sequence, see probe.refuse_sequence_arithmetic), a GradTree by
        # its own `+`
        return py(*[atom_value(args[p.name], env) for p in op.params if p.name in args])
    values = {p.name: atom_value(args[p.name], env) for p in op.params if p.name in args}
    positional, keywords = op.call_parts(values)
    return op.fn(*positional, **keywords)


def check_op(op, args: dict, env: dict) -> None:
    """An op's own check of its arguments' values (`Op.check`: as_strided past its input)."""
    if op.check is not None:
        op.check(**{p.name: atom_value(args[p.name], env) for p in op.params if p.name in args})


def _refuse_argument_list_repeated(first, env: dict, fn, stmt) -> None:
    """`c *= n` of a list the function is given (`c += [v]` is lowered to the extend it is:
    frontend/pylower.py): Python repeats the caller's list in place, where srcad's `c = c *
    n` would leave it as it was -- a wrong value at the next reader, silently, before the
    session of 2026-12-07, thirteenth. Refused in source mode (tape mode runs Python's list
    operator itself)."""
    if isinstance(first, ir.Var) and first.name in fn.params and \
            type(env.get(first.name)) is list:
        raise SrcadError(
            f"`{fn.source_lines.get(stmt.line, first.name + ' op= ...')}` changes the list "
            f"argument `{first.name}` in place: Python changes the caller's list, which srcad "
            f"would leave as it was", filename=fn.filename, lineno=stmt.line, func=fn.name,
            hint=f"write `{first.name} = {first.name} * ...` where a new list is meant, or "
            f"extend the argument (`{first.name}.extend(...)`)")


def check_inplace(old, new, where=None) -> None:
    """`x op= y` into an array x: numpy writes the result into x's own memory, so it keeps x's
    shape and dtype (a float64 y is cast into a float32 x; a result broadcast larger than x
    is an error), where srcad's copy-on-write `x = x op y` would not. Refuse what differs."""
    if not isinstance(old, np.ndarray) or not isinstance(new, (np.ndarray, np.generic)):
        return
    if np.shape(new) != old.shape:
        raise ValueError(f"non-broadcastable output operand with shape {old.shape} doesn't "
                         f"match the broadcast shape {np.shape(new)}")
    if new.dtype != old.dtype:
        fn, line = where if where is not None else (None, None)
        raise SrcadError(
            f"an augmented assignment into a {old.dtype} array gives {new.dtype}: numpy "
            f"would cast the result back into the array ({old.dtype}), srcad computes "
            f"`x = x op y` ({new.dtype})",
            filename=getattr(fn, "filename", None), lineno=line, func=getattr(fn, "name", None),
            hint="write the cast you mean, `x = (x + y).astype(x.dtype)`, or give both "
            "operands the same dtype")


def run_effect(stmt: ir.Effect, env: dict, probe: bool = False) -> None:
    """print(...), assert, raise (frontend/effects.py). The shape probe (`probe=True`) leaves
    the caller's objects to the real call: it skips function calls (print) and runs a method
    on a copy of its object (skipping it if the object cannot be copied)."""
    if stmt.kind == "call":
        if probe:
            obj = stmt.args.get("_obj") if stmt.op.family == "opaque method" else None
            fn = stmt.args.get("_fn") if stmt.op.family == "opaque call" else None
            owner = getattr(fn.value, "__self__", None) if isinstance(fn, ir.Const) else None
            if type(owner) in (list, dict, set) and _PROBE_COPIES:
                # (a store into a module's container: into the probe's copy of it)
                copies = _PROBE_COPIES[-1]
                if id(owner) not in copies:
                    copies[id(owner)] = (owner, copy.copy(owner))
                call_op(stmt.op, stmt.args, env)
                return
            if not isinstance(obj, ir.Var):
                return
            value = env[obj.name]
            if not (_PROBE_MADE and id(value) in _PROBE_MADE[-1]):
                # (one copy per object, by id: a second name for it -- `e1 = cfg; del
                # e1["b"]` then `"b" in cfg` -- and a callee given it read the probe's copy
                # too, `atom_value`; each name had its own before the session of 2026-12-07,
                # fourteenth, and the probe's reads disagreed: a KeyError blamed on the user)
                copies = _PROBE_COPIES[-1] if _PROBE_COPIES else None
                if copies is not None and id(value) in copies:
                    dup = copies[id(value)][1]
                elif copies is not None and _a_probe_copy(value, copies):
                    dup = value  # (the probe's own already: changed in its place)
                else:
                    try:
                        dup = copy.deepcopy(value)
                    except Exception:  # noqa: BLE001  (a logger, a socket: the real call's)
                        return
                    if copies is not None:
                        copies[id(value)] = (value, dup)
                for name in [k for k, v in env.items() if v is value]:
                    env[name] = dup
            _probe_snapshots_given(stmt, env)  # (`rng.shuffle(X)`: X put back after)
        call_op(stmt.op, stmt.args, env)
        return
    if stmt.kind == "setattr":  # (the probe leaves the caller's objects to the real call)
        obj, value = atom_value(stmt.args["_obj"], env), atom_value(stmt.args["value"], env)
        if not probe:
            setattr(obj, stmt.args["attr"].value, value)
        elif _PROBED_ATTRS:
            _PROBED_ATTRS[-1][(id(obj), stmt.args["attr"].value)] = (obj, value)
        return
    if stmt.kind == "sync":  # (the caller's container, once, by the real call)
        if not probe:
            sync_into(env[stmt.args["caller"].value], atom_value(stmt.args["value"], env))
        return
    if stmt.kind == "own":  # p_caller, p = p, own(p) (frontend/normalize.py: own_on_entry)
        param = stmt.args["param"].name
        env[stmt.args["caller"].value], env[param] = env[param], own(env[param])
        return
    if stmt.kind == "setitem":  # param[k] = v: the caller's dict (once, by the real call)
        if probe and "held" in stmt.args and PROBE_UNDO:
            # (a list or dict a global or an object holds, stored into by another name: the
            # probe stores too, so that its later reads take the branch the call will take,
            # and probe.py puts the old item back when it is done)
            obj = atom_value(stmt.args["_obj"], env)
            index = atom_value(stmt.args["index"], env)
            if isinstance(obj, (dict, list)):
                had = index in obj if isinstance(obj, dict) else True
                PROBE_UNDO[-1].append((obj, index, obj[index] if had else None, had))
                obj[index] = atom_value(stmt.args["value"], env)
            return
        if not probe:
            caller = stmt.args.get("caller")
            obj = env[caller.value] if caller is not None else atom_value(stmt.args["_obj"], env)
            index, value = atom_value(stmt.args["index"], env), atom_value(stmt.args["value"], env)
            if "old" in stmt.args:
                store_through(obj, index, value, atom_value(stmt.args["old"], env))
            else:
                levels = stmt.args.get("levels")
                store_into(obj, index, value, 0 if levels is None else levels.value)
        return
    if stmt.kind == "assert":
        if not atom_value(stmt.args["test"], env):
            err = AssertionError(atom_value(stmt.args["msg"], env)) if "msg" in stmt.args \
                else AssertionError()
            err._srcad_user = True
            raise err
        return
    exc = call_op(stmt.op, stmt.args, env) if stmt.op is not None else \
        atom_value(stmt.args["exc"], env)
    try:
        exc._srcad_user = True  # the user's own exception: it reaches the user as it is
    except AttributeError:
        pass
    raise exc


def run_block(body, env: dict, record=None, fn=None, probe: bool = False) -> None:
    """Execute IR statements in `env`; `record(fn, name, value, site)` sees every assignment
    (`site`: the id of the assigning statement). `probe`: see `run_effect`."""
    for stmt in body:
        if isinstance(stmt, ir.Call):
            try:
                if probe:
                    check_op(stmt.op, stmt.args, env)
                    if PROBE_ARG_CHECKS:
                        PROBE_ARG_CHECKS[-1](stmt, env)
                    if getattr(stmt.op, "family", "") == "opaque method" and \
                            isinstance(stmt.args.get("_obj"), ir.Var):
                        _probe_owns(env, stmt.args["_obj"].name, stmt.op.name.lstrip("."))
                    _probe_copies_changed(stmt)
                    _probe_snapshots_given(stmt, env)
                if probe and stmt.op.name == "transformed":
                    # (`srcad.grad(f)(x, c)` inside: the inner transform's code runs on the
                    # probe's own copies of the lists and dicts it is given, so that what it
                    # stores into them happens once per call, in the real call)
                    given = {n for a in stmt.args.values() for n in ir.atom_vars(a)}
                    value = call_op(stmt.op, stmt.args, {
                        k: _containers_copied(v) if k in given else v
                        for k, v in env.items()})
                else:
                    value = call_op(stmt.op, stmt.args, env)
                if stmt.inplace:
                    first = next(iter(stmt.args.values()))
                    if probe:
                        _refuse_argument_list_repeated(first, env, fn, stmt)
                    check_inplace(atom_value(first, env), value, (fn, stmt.line))
            except Exception as e:
                if not hasattr(e, "_srcad_line"):
                    e._srcad_line = stmt.line  # which user line failed, for the message
                    e._srcad_fn = fn  # (and in which function: a callee's line is its own)
                raise
            if probe and _PROBE_COPIES and (isinstance(value, _GENERATORS) or (
                    _an_iterator(value) and not _makes_new(stmt, env))):
                value = _probe_copy_of(value)  # (`self.rng`, `cfg["rng"]`: its copy)
            env[stmt.target] = value
            if probe and _PROBE_MADE and not isinstance(
                    value, (np.ndarray, np.generic, int, float, complex, str, bool, tuple,
                            list, dict, type(None))) and _makes_new(stmt, env):
                _PROBE_MADE[-1][id(value)] = value
            if record is not None:
                record(fn, stmt.target, value, id(stmt))
        elif isinstance(stmt, ir.UserCall):
            args = [atom_value(a, env) for a in stmt.args]
            inner = dict(zip(stmt.callee.params, args))
            if record is not None:
                for p, v in inner.items():
                    record(stmt.callee, p, v, None)
            try:
                run_block(stmt.callee.body, inner, record, stmt.callee, probe)
            except Exception as e:
                _at_call(e, fn, stmt)
                raise
            result = inner["<return>"]
            values = list(result) if stmt.unpack else [result]
            for t, v in zip(stmt.targets, values):
                env[t] = v
                if record is not None:
                    record(fn, t, v, id(stmt))
        elif isinstance(stmt, ir.Effect):
            try:
                run_effect(stmt, env, probe)
            except Exception as e:
                if not hasattr(e, "_srcad_line"):
                    try:
                        e._srcad_line, e._srcad_fn = stmt.line, fn
                    except AttributeError:
                        pass
                raise
        elif isinstance(stmt, ir.Push):
            env[stmt.stack].push(atom_value(stmt.value, env))
        elif isinstance(stmt, ir.Return):
            env["<return>"] = atom_value(stmt.value, env)
        elif isinstance(stmt, ir.If):
            run_block(stmt.body if atom_value(stmt.test, env) else stmt.orelse, env, record, fn,
                      probe)
        elif isinstance(stmt, ir.For):
            if stmt.checkpoint is not None:  # srcad.checkpoint(range(n), every=k): k valid?
                every, snaps = (None if a is None else atom_value(a, env)
                                for a in stmt.checkpoint)
                try:
                    check_schedule(every, snaps)
                except ValueError as e:
                    e._srcad_line = stmt.line
                    raise
            for i in stmt.range_value(lambda a: atom_value(a, env)):
                env[stmt.target] = i
                if record is not None:
                    record(fn, stmt.target, i, id(stmt))
                run_block(stmt.body, env, record, fn, probe)
                if any(env[f] for f in stmt.exits):
                    break
        elif isinstance(stmt, ir.While):
            while True:
                run_block(stmt.cond_body, env, record, fn, probe)
                if not atom_value(stmt.cond, env):
                    break
                run_block(stmt.body, env, record, fn, probe)
                if any(env[f] for f in stmt.exits):
                    break


def _at_call(e: Exception, fn, stmt: ir.UserCall) -> None:
    """An exception out of srcad's stand-in for a library function (srcad/pyfuncs.py: `fn`
    calls np.histogram, statistics.mean, ...) is the call's: a SrcadError names the call's
    line (errors.at_call_site); any other, not the user's own, is reported at it (the
    probe's message, "StatisticsError in statistics.variance: ...")."""
    if fn is None or in_substitute(fn.filename) or not in_substitute(stmt.callee.filename):
        return
    label = label_of(stmt.callee.name) or stmt.callee.name
    if isinstance(e, SrcadError):
        at_call_site(e, fn.filename, stmt.line, fn.name, label)
    elif not getattr(e, "_srcad_user", False):
        try:
            e._srcad_line, e._srcad_fn, e._srcad_within = stmt.line, fn, label
        except AttributeError:
            pass


def evaluate(fn: ir.Function, args: dict, record=None, probe: bool = False) -> dict:
    """Run the IR on concrete arguments; return every variable's value (and '<return>')."""
    env = dict(args)
    with interpreting(probe):  # (a `with` block's contexts: srcad/runtime_context.py)
        run_block(fn.body, env, record, fn, probe)
    return env
