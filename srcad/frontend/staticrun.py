"""The objects a user function returns, found by running its normalised code while srcad
builds the code -- where that code only walks objects srcad knows.

Layer libraries written like PyTorch hand their parameters out through a generator that
walks the module's dicts of parameters and sub-modules:

    def parameters(self):
        for p in self._params.values():
            yield p
        for m in self._modules.values():
            yield from m.parameters()

and load weights by `for p, w in zip(model.parameters(), ws): p.data = w`. The generator's
code (lowered to a list built by appends, pylower.py) reads only attributes of objects srcad
knows here, their dicts and lists, and calls more such code: run now on those objects, it
gives the very list Python's call would, so the caller walks known objects and a store into
one (`p.data = w`) is followed into the methods that read it (calls.py
`emit_user_call`).

Only these statements run: a name bound to another, an attribute of a known object (no
property: code), a dict's keys (a plain dict's or an `OrderedDict`'s), `len`, an item of a
list, tuple or dict, `list_append`, int `+` / `min` (loop counters), str `+` (a name's prefix,
`named_parameters()`'s `prefix + name`: it may hand out (name, object) pairs), a `for` over a
known range, an `if` on a known bool, a call of another such function, the return. Anything else -- an effect, an array op, an opaque call --
and the answer is None (the call is emitted as before). Each attribute read is guarded, each
list's and dict's items too (guards.py): a parameter added to a module rebuilds the code.
"""

from __future__ import annotations

import collections
import inspect
import operator
import types

import numpy as np

from .. import ir
from . import guards
from .opaque import is_opaque, is_user_object

_UNKNOWN = object()
# (a module's `OrderedDict` of parameters walks as a dict does: the same keys, in order)
_DICTS = (dict, collections.OrderedDict)
_STEPS = 20_000  # (statements run at most: a bigger walk is left to run when the code runs)


class _Stop(Exception):
    pass


def returned_objects_by_running(call: ir.UserCall, args: list):
    """(the list or tuple of user objects `call`'s function returns for `args` -- Python
    values --, the (object, attribute) pairs it read), or None where its code does more than
    walk known objects (module docstring)."""
    runner = _Runner()
    try:
        value = runner.run(call.callee, args, 0)
    except (_Stop, RecursionError):
        return None
    if type(value) not in (list, tuple) or not value or not all(
            _an_object(v) or _a_named_object(v) for v in value):
        return None
    return value, runner.read


def _an_object(v) -> bool:
    return is_user_object(v) and not isinstance(v, (type, types.FunctionType,
                                                    types.MethodType))


def _a_named_object(v) -> bool:
    """A tuple of names and objects (`named_parameters()`'s `("fc1.W", p)`): str / int keys,
    at least one object."""
    return type(v) is tuple and any(_an_object(x) for x in v) and all(
        _an_object(x) or type(x) in (str, int) for x in v)


class _Runner:
    def __init__(self):
        self.steps = 0
        self.read: list = []  # (object, attribute)

    def run(self, fn: ir.Function, args: list, depth: int):
        if depth > 8 or len(args) != len(fn.params):
            raise _Stop
        env = dict(zip(fn.params, args))
        out = self.block(fn.body, env, depth)
        if out is _UNKNOWN:
            raise _Stop
        return out

    def block(self, body, env: dict, depth: int):
        """Run `body`; the returned value, or _UNKNOWN where it ran to its end."""
        for s in body:
            self.steps += 1
            if self.steps > _STEPS:
                raise _Stop
            if isinstance(s, ir.Return):
                return self.value(s.value, env)
            if isinstance(s, ir.Call):
                env[s.target] = self.call(s, env)
            elif isinstance(s, ir.For):
                start, stop, step = (self.value(a, env) for a in (s.start, s.stop, s.step))
                if not all(type(v) is int for v in (start, stop, step)) or s.exits:
                    raise _Stop
                for i in range(start, stop, step):
                    env[s.target] = i
                    out = self.block(s.body, env, depth)
                    if out is not _UNKNOWN:
                        return out
            elif isinstance(s, ir.If):
                test = self.value(s.test, env)
                if type(test) not in (bool, np.bool_):
                    raise _Stop
                out = self.block(s.body if test else s.orelse, env, depth)
                if out is not _UNKNOWN:
                    return out
            elif isinstance(s, ir.UserCall) and not s.carried:
                value = self.run(s.callee, [self.value(a, env) for a in s.args], depth + 1)
                if len(s.targets) == 1:
                    env[s.targets[0]] = value
                elif type(value) in (list, tuple) and len(value) == len(s.targets):
                    env.update(zip(s.targets, value))
                else:
                    raise _Stop
            else:
                raise _Stop
        return _UNKNOWN

    def value(self, a, env: dict):
        if isinstance(a, ir.Const):
            return a.value
        if isinstance(a, ir.Var):
            if a.name not in env:
                raise _Stop
            return env[a.name]
        if isinstance(a, ir.Seq):
            items = [self.value(x, env) for x in a.items]
            return items if a.kind == "list" else tuple(items)
        raise _Stop

    def call(self, s: ir.Call, env: dict):
        name = s.op.name
        args = {k: self.value(a, env) for k, a in s.args.items()
                if not isinstance(a, ir.Index)}
        if is_opaque(s.op) and s.op.kind == "attribute":
            self.read.append((args.get("_obj"), s.op.label.lstrip(".")))
            return _attribute(args.get("_obj", _UNKNOWN), s.op.label.lstrip("."))
        if name == "copy" and set(args) == {"x"}:
            return args["x"]
        if name == "in_layout" and type(args.get("new")) is int:
            return args["new"]
        if name == "dict_keys" and type(args.get("d")) in _DICTS:
            return list(args["d"])
        if name == "len" and type(args.get("obj")) in (list, tuple, dict):
            return len(args["obj"])
        if name == "list_append" and type(args.get("xs")) is list:
            return [*args["xs"], args.get("x")]
        if name in ("add", "minimum") and len(args) == 2 and all(
                type(v) is int for v in args.values()):
            return (operator.add if name == "add" else min)(*args.values())
        if name == "add" and len(args) == 2 and all(type(v) is str for v in args.values()):
            return operator.add(*args.values())  # (a name's prefix: `prefix + n`)
        if name == "getitem" and isinstance(s.args.get("index"), ir.Index):
            index = s.args["index"]
            if index.is_tuple or len(index.parts) != 1:
                raise _Stop
            container, key = args.get("a"), self.value(index.parts[0], env)
            if type(container) in (list, tuple) and type(key) is int or \
                    type(container) in _DICTS and type(key) in (str, int):
                try:
                    return container[key]
                except (IndexError, KeyError):
                    raise _Stop from None
        raise _Stop


def _attribute(obj, attr: str):
    """`obj.attr` of a known object, guarded -- its dict or list, their items too; _Stop
    for a property (code) or anything but a plain attribute of a user object."""
    if not is_user_object(obj) or isinstance(obj, (type, types.FunctionType,
                                                   types.MethodType)):
        raise _Stop
    found = inspect.getattr_static(obj, attr, guards.MISSING)
    if found is guards.MISSING or (attr not in getattr(obj, "__dict__", {}) and hasattr(
            type(found), "__get__")):
        raise _Stop
    value = getattr(obj, attr)
    guards.note_attr(obj, attr, value)
    if type(value) is list:
        guards.note("items", value, len(value), value)
    elif type(value) in _DICTS:
        guards.note("items", value, len(value), tuple(value))
        for k, v in value.items():
            guards.note("global", value, k, v)
    return value
