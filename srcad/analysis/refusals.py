"""Refusals that need the arguments being differentiated: a call with no derivative rule on a
value the gradient needs (frontend/opaque.py makes those calls' ops) would silently carry no
gradient, so it is an error at the user's line, made on the first call once `wrt` is known.

Input: a normalised `ir.Function` and the names it is differentiated with respect to.
Output: nothing, or a `NoRuleError` when, for some op with no rule given a value that
depends on `wrt` (through any op, with a rule or not: `_dependent`),
  * its result reaches the output through ops that would carry a gradient -- rows with a
    rule, other ops with none, user calls; not a row with no derivative, a comparison, a
    shape, `int()`: there the true derivative is zero anyway (`_useful`), or
  * it may store that value in an object the output is computed from, or change one in place
    (a method's object; any argument of a function srcad does not know to be pure).
Calls into user functions are checked with the arguments that reach them; in a called
function, storing into an object of its caller (a parameter) counts as read by the output.

    rng.normal(size=3) * x          fine: nothing rng.normal is given depends on x
    print(float(np.sum(x)))         fine: the float goes nowhere the gradient goes
    x * math.sqrt(np.sum(x))        NoRuleError at this line: math.sqrt has no rule

The rule (issue 21): every expression whose result depends on a differentiated value has a
derivative rule or is refused here. Beside opaque calls, the sites with no rule are
(`_ruleless`, statically; `check_held_objects`, from the probe's values):
  * a row's parameter listed in its `no_rule_for` (np.arange's start and step);
  * a subscript of a global that is no array, number or container (np.s_, np.index_exp,
    np.mgrid, np.r_ / np.c_ with a directive srcad does not lower, a user object's
    __getitem__) -- np.r_[...] / np.c_[...] themselves are rows (frontend/concatenators.py);
  * a Python operator with such an object as an operand (`some_lib_obj * x`);
  * the same on a local that held such an object when the probe ran (`t = Table(); t[x]`).

Every path of the normaliser that runs code as written, and why each is safe:
  * opaque calls, methods, attributes, f-strings (frontend/opaque.py, effects.py): refused
    here where given a dependent value and their result is useful, or where they may store
    one in an object the output reads;
  * ir.Effect statements (print, assert, raise, a bare call): no result; an opaque one is
    checked as above, for storing into what the output reads;
  * rows without a rule (comparisons, shapes, sign/floor/round, argmax, int(), len): their
    true derivative is zero wherever it exists, so a dropped gradient is the true one -- but
    for the parameters a row lists in `no_rule_for`, checked here;
  * a subscript's index (getitem's `index` has no rule): into an array, list, tuple or dict
    it selects, piecewise constant in the index; into anything else it is checked here;
  * Python operators on lists and tuples (concatenation, repetition): refused by the probe
    (probe.refuse_sequence_arithmetic) where a gradient flows through the sequence;
  * iteration: `for v in xs` over an array, list, tuple, range, zip, enumerate is lowered to
    subscripts (frontend/loops.py); over an opaque call's result (np.nditer(x), map(...),
    iter(x)) the call itself is checked above; a function passed as a value (map(np.tanh,
    xs)) is refused by the normaliser;
  * globals: constants, injected as written; a global is never differentiated.
"""

from __future__ import annotations

import re

import types
from collections.abc import Iterator

import numpy as np

from .. import ir, pyfuncs
from ..errors import NoRuleError, SharingUnknownError, UnsupportedSyntaxError
from .census import refused_reason
from ..frontend.aliasing import VIEW_OPS, makes_view
from ..frontend.concatenators import is_concatenator
from ..frontend.expressions import PY_BINARY
from ..frontend.kept_globals import kept_store_method
from ..frontend.unknown_writes import ANY
from ..frontend.opaque import MUTATING, class_attribute, is_opaque, is_user_object
from ..ops.runtime_ops import POPS
from ..runtime_signal import INPLACE_WRITERS


def _flows(fn: ir.Function):
    """(inputs, outputs) of each statement along which a value's dependence travels: a row's
    arguments with a derivative rule, every argument of an op with no rule (its result
    depends on them, with no gradient) and of a user call. An op with no rule that may keep
    what it is given (`net.add(layer)`, `box.put(v)`: a method may store its arguments in its
    object; a library function may change any argument) also makes those objects depend on
    it: `d.set(W); net.add(d); net.run(X)` reaches the output from W."""
    picked = _picked_from(ir.walk(fn.body))
    for s in ir.walk(fn.body):
        if isinstance(s, (ir.Call, ir.Effect)) and is_opaque(s.op) and not s.op.pure and \
                s.op.kind != "operator":
            holders = _holders(s)
            if holders:  # (and what each holder was picked from: `layer.set(p)` with
                # `layer = layers[i]` stores into one of layers' objects)
                yield list(s.args.values()), holders + sorted(
                    set().union(*(picked.get(h, set()) for h in holders)))
        read = _object_read(s)
        if read is not None and isinstance(s, ir.Call):  # (`layers[0].w`, `MODEL.run(x)`)
            yield [ir.Var(read)], [s.target]
        if isinstance(s, ir.Call):
            if is_opaque(s.op) and s.op.kind == "operator":
                continue  # (`is`, `in`: a bool, piecewise constant like a comparison)
            # (the user objects a constant argument holds: `list(self.layers)`, `layers[i]`
            # hand out the layers, whose methods -- run as written on what they give --
            # read a differentiated value stored into one of them: `_tainted_objects`)
            obj = s.args.get("_obj")
            if is_opaque(s.op) and s.op.kind == "attribute":
                # (`self.blocks` read as the code runs: the objects its value holds now; an
                # array attribute's own stores are check_attribute_state's)
                now = getattr(obj.value, s.op.name[1:], None) if isinstance(
                    obj, ir.Const) else None
                held = [ir.Var(n) for n in _objects_held(ir.Const(now, ""))]
            elif _hands_out_objects(s):
                held = [ir.Var(n) for a in s.args.values() for n in _objects_held(a)]
            else:
                held = []
            if held:
                yield held, [s.target]
            if is_opaque(s.op):
                yield list(s.args.values()) + ([ir.Var(_ANY_STATE)] if _calls_unknown(s)
                                               else []), [s.target]
            elif s.op.name in POPS + ("cotangents",):
                yield [s.args["stack"]], [s.target]
            else:
                extra = _ruleless(s)
                yield [a for p, a in s.args.items()
                       if s.op.vjp(p) is not None or s.op.jvp(p) is not None
                       or (extra is not None and p in extra[0])], [s.target]
        elif isinstance(s, ir.UserCall):
            items = _item_params(s)
            # (an object answering reads by a `__getattr__` hook, given to the callee and
            # changed with a differentiated value: the callee's reads of it depend on that
            # value; other objects' reads are followed by state.py, or refused at the read)
            held = [ir.Var(n) for a in s.args if (n := _user_object_name(a)) is not None
                    and _reads_by_hook(a.value)]
            # (and the state of objects a constant argument holds: `sorted(self.layers,
            # key=id)`, srcad's substitute, hands the layers back)
            held += [ir.Var(n) for a in s.args for n in _objects_held(a)]
            if items is None:
                yield list(s.args) + held, list(s.targets)
            else:  # (`ts, ys = integrate(rhs, y0)`: ts is made from constants alone)
                for t, params in zip(s.targets, items):
                    yield [a for p, a in zip(s.callee.params, s.args) if p in params] + [
                        ir.Var(n) for p, a in zip(s.callee.params, s.args) if p in params
                        for n in _objects_held(a)], [t]
        elif isinstance(s, ir.Push):
            yield [s.value], [s.stack]
        elif isinstance(s, ir.Effect) and s.kind == "setattr" and \
                isinstance(s.args.get("_obj"), ir.Var):
            # (`layer.W = W` on an object srcad runs as written: its methods read W back,
            # and so do those of the object it was picked from, `[d1, d2][i]` -- and any code
            # srcad calls not knowing what it is may be one of them: `_ANY_STATE`)
            obj = s.args["_obj"].name
            yield [s.args["value"]], [obj] + sorted(picked.get(obj, ())) + [_ANY_STATE]
        elif isinstance(s, ir.Effect) and s.kind == "setattr" and \
                _user_object_name(s.args.get("_obj")) is not None:
            # (`L._W = W` on a global layer: what its methods read back is carried (state.py);
            # its `__dict__`, read as it runs, holds W too: `L.__dict__["_W"]`; and so does
            # the object itself where code run as written reaches it -- `for l in
            # list(self.layers): x = l.forward(x)`, the layer handed out by an opaque call)
            yield [s.args["value"]], [_dict_name(s.args["_obj"]),
                                      _state_name(s.args["_obj"].value)] + (
                [_user_object_name(s.args["_obj"])] if _reads_by_hook(s.args["_obj"].value)
                else [])
        whole = _dict_read(s)
        if whole is not None:
            yield [ir.Var(whole)], [s.target]


# what code srcad calls without knowing it (`m(x)` of a module picked from a dict filled when
# the code runs) may read: the state of any object a differentiated value was stored into
# where srcad could not name the object (`for p in model.parameters(): p.data = w`, the
# model changed first) -- found 2026-12-06, eighth, as a gradient of zeros
_ANY_STATE = "<object any state>"


def _calls_unknown(s) -> bool:
    """Does the opaque call `s` run code srcad does not know -- a callable, or a method of
    an object, known only when the code runs?"""
    if s.op.kind == "call":
        return isinstance(s.args.get("_fn"), ir.Var)
    name = s.op.name.lstrip(".")
    return s.op.kind == "method" and isinstance(s.args.get("_obj"), ir.Var) and not any(
        hasattr(t, name) for t in _LIBRARY_TYPES)  # (`m.forward(x)`, not `d.get(k)`)


_LIBRARY_TYPES = (np.ndarray, dict, list, tuple, set, str, np.random.Generator,
                  np.random.RandomState)


def changed_by_unknown_code(fn: ir.Function, among: set):
    """Of the objects `among` (ids: those whose data attributes the program read as
    constants of the call), those that code it runs as written may change
    (frontend/unknown_writes.py) -- `ANY` where that code may reach any object: a method of
    an object known only when the code runs (`layer.forward(h)` of a layer a loop picks), a
    callable known only then, a store into an attribute of such an object; else the objects
    a call with no rule is given or holds, or whose method it is (`object.__setattr__(L1,
    "W", W1)`, `setattr(L1, k, v)`, `install(L1, W)`)."""
    names: set = set()
    for f in ir.program_functions(fn):
        picked = own = None
        for s in ir.walk(f.body):
            if isinstance(s, ir.Effect) and s.kind == "setattr" and \
                    isinstance(s.args.get("_obj"), ir.Var):
                return ANY
            if not isinstance(s, (ir.Call, ir.Effect)) or s.op is None or \
                    not is_opaque(s.op) or s.op.pure or s.op.checks_only or \
                    s.op.kind in ("operator", "attribute"):
                continue
            if _calls_unknown(s):
                return ANY
            obj = s.args.get("_obj")
            if s.op.kind == "method" and isinstance(obj, ir.Var):
                # (a list's or dict's own method changes that container in place, which its
                # object still holds -- unless it is the object's `__dict__`: `L1.__dict__
                # ["W"] = W1` rebinds `L1.W`)
                if own is None:
                    own = {r.target: n for r in ir.walk(f.body)
                           if (n := _user_object_name(_dict_of(r))) is not None}
                names.add(own.get(obj.name, ""))
                continue
            if s.op.kind == "call" and not _hands_out_objects(s):
                continue  # (`len(NET)`, `print(L1)`, `isinstance(l, Dense)`)
            if picked is None:
                picked = _picked_from(ir.walk(f.body))
            # (the objects it is given or whose method it is, what a name it is given was
            # picked from -- `setattr(layer, k, v)` of a loop's layer -- and the objects a
            # constant it is given holds)
            holders = _holders(s)
            names.update(holders, *(picked.get(h, ()) for h in holders),
                         *(_objects_held(a) for a in s.args.values()))
    found = {int(m.group(1)) for n in names if (m := re.match(r"<object (\d+)", n))}
    return found & among


def _item_params(s: ir.UserCall):
    """For a call that unpacks its callee's returned tuple, the callee's parameters each item
    depends on (through ops with a rule or without one), else None. (Kept on the callee, for
    the body it was computed from: a callee called in a loop is asked once.)"""
    callee = s.callee
    ret = callee.ret.value if callee.body and isinstance(callee.body[-1], ir.Return) else None
    if not (s.unpack and not s.carried and isinstance(ret, ir.Seq) and
            len(ret.items) == len(s.targets)):
        return None
    key = (id(callee.body), len(callee.body), id(ret))
    held = getattr(callee, "_item_params", None)
    if held is None or held[0] != key:
        deps = {p: _dependent(callee, [p]) for p in callee.params}
        held = (key, [{p for p, d in deps.items() if set(ir.atom_vars(item)) & d}
                      for item in ret.items])
        callee._item_params = held
    return held[1]


def _holders(s) -> list:
    """The names an op with no rule may store what it is given in, or change: a method's
    object (`rng.shuffle(y)`: also y), any argument of a function srcad does not know."""
    if s.op.kind == "method":
        params = list(s.args) if s.op.name[1:] in ("shuffle", "permutation") else ["_obj"]
    elif _kept_store(s) is not None:  # (`history.append(h)`: the module's list, not h)
        params = []
    else:
        params = [p for p in s.args if p != "_fn"]
    # (a user object a constant holds counts too: `setattr(L, k, v)` with k known only when
    # it runs, `object.__setattr__(L, "_W", W)`, `install(L, W)` may store into it, which
    # L's methods then read -- a zero gradient, silently, before)
    return [s.args[p].name if isinstance(s.args.get(p), ir.Var) else _user_object_name(
        s.args.get(p)) for p in params if isinstance(s.args.get(p), ir.Var) or
        _user_object_name(s.args.get(p)) is not None]


# numpy's functions that write into their first argument (runtime_signal.INPLACE_WRITERS;
# frontend/pylower.py rewrites them into a subscript store where the array is a local name,
# so one left as a call writes into an array the function does not hold) and methods that
# write into their array
_WRITER_METHODS = frozenset({"fill", "put", "itemset", "setfield"})


def _array_written(s) -> str | None:
    """The parameter naming the array an opaque call or method writes into in place
    (``np.copyto(L.W, v)``, ``np.add.at(G, i, v)``, ``L.W.fill(s)``), else None."""
    if s.op.kind == "method":
        return "_obj" if s.op.name[1:] in _WRITER_METHODS else None
    f = s.args.get("_fn")
    f = f.value if isinstance(f, ir.Const) else None
    if f is None:
        return None
    try:
        if f in INPLACE_WRITERS:
            return "_a0"
    except TypeError:  # (unhashable)
        return None
    if getattr(f, "__name__", "") == "at" and isinstance(getattr(f, "__self__", None),
                                                         np.ufunc):
        return "_a0"  # (np.add.at(a, indices, b))
    return None


def _dict_name(atom) -> str:
    """A name for the attributes of the user object a constant holds, as its `__dict__`
    shows them (`_flows`: a store into one makes a read of the dict depend on the value)."""
    return f"<dict {id(atom.value)}>"


def _dict_of(s):
    """The atom of the object whose whole `__dict__` `s` reads (``L.__dict__``, ``vars(L)``,
    ``object_attribute(L, "__dict__")``), else None."""
    if not isinstance(s, ir.Call):
        return None
    if is_opaque(s.op) and s.op.kind == "attribute" and s.op.name[1:] == "__dict__":
        return s.args.get("_obj")
    if s.op.name == "object_attribute" and isinstance(s.args.get("name"), ir.Const) and \
            s.args["name"].value == "__dict__":
        return s.args.get("obj")
    if is_opaque(s.op) and s.op.kind == "call" and isinstance(s.args.get("_fn"), ir.Const) \
            and s.args["_fn"].value is vars:
        return s.args.get("_a0")
    return None


def _dict_read(s) -> str | None:
    """`_dict_name` of the user object a constant holds whose whole `__dict__` `s` reads,
    else None."""
    obj = _dict_of(s)
    return _dict_name(obj) if _user_object_name(obj) is not None else None


def _reads_by_hook(obj) -> bool:
    """Does `obj`'s class answer attribute reads with a user's `__getattr__` (or
    `__getattribute__`)? Then any store into the object (`self._params["W"] = W`) may be
    what a read of another name (`self.W`) gives back."""
    for name in ("__getattr__", "__getattribute__"):
        hook = class_attribute(type(obj), name)[1]
        if isinstance(hook, types.FunctionType) and is_user_object(hook):
            return True
    return False


def _user_object_name(atom) -> str | None:
    """`_object_name` of a constant holding an instance of a user's class, else None."""
    return _object_name(atom) if isinstance(atom, ir.Const) and is_user_object(
        atom.value) and not isinstance(atom.value, type) else None


# calls given objects that neither hand them out nor run their code: a count, a test, text
_NO_OBJECTS_OUT = frozenset({len, isinstance, issubclass, hasattr, callable, id, type, print,
                             repr, str, hash})


def _hands_out_objects(s) -> bool:
    """May the call `s` give back (a copy of a list holds them, an item is one) or run the
    code of (an opaque call, a method) objects its constant arguments hold -- not `len`,
    `isinstance`, srcad's own checks (`zip_covers`)?"""
    if not is_opaque(s.op):  # (a row: `layers[i]`, `list(...)`, a dict display of them)
        return s.op.name not in ("len", "same_object")
    if _integer_result(s):
        return False
    f = getattr(s.args.get("_fn"), "value", None)
    try:
        if f in _NO_OBJECTS_OUT:
            return False
    except TypeError:  # (an unhashable callable)
        return True
    return any(f is h for h in _HANDS_OUT) or not (
        getattr(f, "__module__", "") or "").startswith("srcad.")


# srcad's own functions that give back the items they are given (`sorted(NET.layers,
# key=id)`: a list of the very layers)
_HANDS_OUT = (pyfuncs.sorted_by, pyfuncs.sorted_, pyfuncs.copy)


def _carries(a, dep: set) -> bool:
    """Does the atom `a` depend on `dep` -- a name it reads, or the state of an object a
    constant it is holds (`sorted_by(self.layers, ...)`: its parameter holds the layers)?"""
    return bool(set(ir.atom_vars(a)) & dep) or any(n in dep for n in _objects_held(a))


def _state_name(obj) -> str:
    """A name for what code srcad runs as written may read of a user object's state -- any
    of its attributes, through its methods or a function given it (`_flows`: a store of a
    differentiated value into a known object's attribute makes such code's result depend
    on it). Begins as `_object_name`s do, so `_tainted_objects` carries it into callees."""
    return f"<object {id(obj)} state>"


def _objects_held(atom, depth: int = 2, attributes: bool = True) -> list:
    """`_state_name`s of the user objects a constant atom is or holds in a list, tuple or
    dict (two levels deep, 256 items at most each), or in their attributes (four levels;
    not with `attributes` False), or whose bound method it is (`layer.forward`): what code
    run as written on it may reach."""
    if isinstance(atom, ir.Seq):  # (`iter([L1])`, `next(iter((a, b)))`: a display's items)
        return [n for item in atom.items for n in _objects_held(item, depth, attributes)]
    if not isinstance(atom, ir.Const):
        return []
    out, todo, seen = [], [(atom.value, 0)], set()
    while todo and len(seen) < 512:
        v, d = todo.pop()
        if isinstance(v, types.MethodType):
            v = v.__self__
        elif isinstance(v, types.BuiltinMethodType) and isinstance(
                getattr(v, "__self__", None), (list, tuple, dict)):
            v = v.__self__  # (`NET.named.get`: the dict whose item it hands out)
        if id(v) in seen:
            continue
        seen.add(id(v))
        if is_user_object(v) and not isinstance(v, type):
            out.append(_state_name(v))
            # (and the objects it holds: `getattr(net, "fc1")` run as written reaches
            # `net.fc1.W`, a parameter object a value was stored into)
            held = getattr(v, "__dict__", None) if attributes else None
            if d < depth + 2 and isinstance(held, dict):
                todo.extend((x, d + 1) for x in held.values() if not isinstance(
                    x, (np.ndarray, np.generic, int, float, str, bool, type(None))))
        elif d < depth and isinstance(v, (list, tuple, dict)) and len(v) <= 256:
            todo.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return out


def _object_name(atom) -> str | None:
    """A name for an object a constant atom holds (a global user object, a list of them):
    what a store through an item picked from it makes depend on a differentiated value."""
    if isinstance(atom, ir.Const) and not isinstance(
            atom.value, (int, float, complex, str, bytes, type(None), np.ndarray, np.generic,
                         tuple, slice, type, types.FunctionType, types.BuiltinFunctionType,
                         types.MethodType, types.ModuleType, np.ufunc)):
        return f"<object {id(atom.value)}>"
    return None


def _tainted_objects(fn: ir.Function, wrt, state: bool = True) -> set:
    """The names (`_object_name`) of the constant objects into which some function of the
    program, called from `fn` with `wrt` differentiated, stores a value that depends on
    them (to a fixed point: a store in one callee makes another's reads depend)."""
    tainted: set = set()
    for _ in range(6):
        before = len(tainted)
        seen: set = set()

        def visit(f, w):
            key = (id(f), tuple(sorted(w)))
            if key in seen:
                return
            seen.add(key)
            dep = _dependent(f, list(w) + sorted(tainted), state)
            tainted.update(n for n in dep if n.startswith("<object "))
            for s in ir.walk(f.body):
                if isinstance(s, ir.UserCall):
                    visit(s.callee, [p for p, a in zip(s.callee.params, s.args)
                                     if _carries(a, dep)])

        visit(fn, list(wrt))
        if len(tainted) == before:
            break
    return tainted


def _object_read(s) -> str | None:
    """The name (`_object_name`) of the constant object whose state a statement reads, where
    a differentiated value stored into that object through a name picked from it would reach
    the result: an attribute read off it that may hold an array (not a flag -- a bool, an
    int, a string or None now -- nor attrstate.py's `getattr(obj, "X", None)`, its value at
    entry, which the function's own local carries after that), a method of it, or a call of
    it (`MODEL[0](x)`). Else None."""
    if isinstance(s, ir.Call) and s.op.name == "getitem" and not plain_value(
            getattr(s.args.get("a"), "value", None)):
        return _object_name(s.args.get("a"))  # (`MODEL[0]`: an item of a user object)
    if not isinstance(s, (ir.Call, ir.Effect)) or not is_opaque(s.op):
        return None
    fn = s.args.get("_fn")
    if isinstance(fn, ir.Const) and fn.value is getattr:
        return None
    if s.op.kind == "attribute":
        obj = s.args.get("_obj")
        now = getattr(obj.value, s.op.name[1:], None) if isinstance(obj, ir.Const) else None
        # (no flag where code run as written may store an array there, whatever it holds
        # now: frontend/unknown_writes.py)
        if isinstance(now, (bool, int, str, type(None))) and not s.op.unknown_writer:
            return None
        return _object_name(obj)
    if s.op.kind == "method":
        return _object_name(s.args.get("_obj"))
    return _object_name(fn) if fn is not None else None


def _dependent(fn: ir.Function, wrt, state: bool = True) -> set:
    """Names whose value depends on `wrt` (through ops with a rule or without one; with
    `state` False, not through the objects' state a store makes depend: `_state_name`)."""
    flows = list(_flows(fn))
    if not state:
        flows = [(ins, [o for o in outs if not o.endswith(" state>")]) for ins, outs in flows]
        wrt = [w for w in wrt if not w.endswith(" state>")]
    dep = set(wrt)
    changed = True
    while changed:
        changed = False
        for ins, outs in flows:
            if any(v in dep for a in ins for v in ir.atom_vars(a)) and not set(outs) <= dep:
                dep.update(outs)
                changed = True
    return dep


def _bound_container(s) -> str | None:
    """The spelling of an object's list, dict or set whose own changing method an opaque call
    calls (`net.params.update` resolved when normalising: a bound method), else None."""
    f = s.args.get("_fn")
    if not isinstance(f, ir.Const) or not isinstance(getattr(f.value, "__self__", None),
                                                    (list, dict, set)):
        return None
    if getattr(f.value, "__name__", "") not in MUTATING:
        return None
    held = (f.src or "").rsplit(".", 1)[0]
    # (an object's: `net.params`; a module's own, `HIDDEN.__setitem__`, is kept_globals.py's)
    return held if "." in held else None


def _handed_out_by(fn: ir.Function, container, views: dict, names: set, consts: set,
                   changed_in_place=False):
    """(the call, its spelling) that handed out `container` -- or the container it is an item
    of -- where the call was given something the output reads (`net.parameters()`, whose
    method returns the layers' own dicts), else None: Python's container may be one an
    object holds, which srcad knows only as the call's result."""
    if not isinstance(container, ir.Var):
        return None
    roots = _view_roots(container.name, views)
    for d in ir.walk(fn.body):
        if isinstance(d, ir.UserCall):
            made, given = set(d.targets), list(d.args)
            what = f"`{getattr(d.fn, '__qualname__', d.fn_name)}(...)`"
        elif isinstance(d, ir.Call) and is_opaque(d.op) and not d.op.pure and \
                d.op.kind in ("method", "call"):
            made, what = {d.target}, _site_label(d)
            given = [a for p, a in d.args.items() if p != "_fn"]  # (not the callee itself)
            f = d.args.get("_fn")
            if container.name in made and isinstance(f, ir.Const) and \
                    isinstance(f.value, type):
                continue  # (a class called: a new container, `OrderedDict()`)
        elif _read_from_attribute(d) and _user_object_name(d.args.get("_obj")) is not None:
            # (`p = net.layers[0].params`: a dict a layer srcad reached as a constant holds,
            # which that layer's methods read; srcad's store goes into a copy, and Python's
            # object would keep the new array whether the output reads it or not. A method
            # changing it in place -- `.update`, `.append` -- runs on Python's own object:
            # refused where the output reads that attribute again, here or in a method it
            # calls; a cache appended to and never read is fine)
            if d.target in roots and (not changed_in_place or _attribute_read_again(fn, d)):
                return d, f"the attribute `{d.op.label}` of an object"
            continue
        else:
            continue
        # (an object of a user's class it was given may be read by the output through
        # another one -- `NET.forward` reads the layer `L1.attributes()` handed out the dict
        # of: objects hold each other, so any counts)
        objects = [a for a in given if _user_object_name(a) is not None]
        if not made & roots or not objects and not any(
                set(ir.atom_vars(a)) & names or set(_consts(a)) & consts for a in given):
            continue
        if container.name in made and isinstance(d, ir.UserCall) and _returns_fresh(d.callee):
            continue  # (the store goes into the container the callee made, `return {...}`)
        # (what the call was given reaches the output by another way than the container it
        # handed out -- `net.forward(X)` reads the layers whose dicts `net.parameters()`
        # returned; a container a helper makes from a config the output reads through the
        # container alone, `p = defaults(cfg); p["W"] = W`, is followed as any local one)
        other_names, other_consts = _useful(fn, skip=made)
        if objects or any(set(ir.atom_vars(a)) & other_names or set(_consts(a)) &
                          other_consts for a in given):
            return d, what
    return None


def _attribute_read_again(fn: ir.Function, d) -> bool:
    """Does the output of `fn` reach a read of the attribute `d` reads (`.params`) other than
    `d` itself: in `fn`, or in a user function it calls given an object?"""
    names, _ = _useful(fn, skip={d.target})

    def reads(s) -> bool:
        return _read_from_attribute(s) and s.op.label == d.op.label

    for s in ir.walk(fn.body):
        if s is not d and reads(s) and s.target in names:
            return True
        if isinstance(s, ir.UserCall) and set(s.targets) & names and \
                any(_user_object_name(a) is not None for a in s.args) and \
                any(reads(x) for x in ir.walk_program(s.callee)):
            return True
    return False


def _returns_fresh(callee: ir.Function) -> bool:
    """Does `callee` return a list, tuple or dict it makes itself (`return []`, `return
    {"scale": 1.0}`, `return dict(...)`) -- not one it read from an object or was given?
    (Only the container: its items may still be an object's.)"""
    value = callee.ret.value if callee.ret is not None else None
    if isinstance(value, ir.Seq):
        return True
    if not isinstance(value, ir.Var):
        return False
    made = [s for s in ir.walk(callee.body) if isinstance(s, ir.Call) and
            s.target == value.name]
    return bool(made) and all(s.op.name in ("dict", "list", "tuple", "dict_copy",
                                            "list_concat", "list_repeat") for s in made)


def check_stored_then_written(fn: ir.Function) -> None:
    """`net.layers[0].W = W2`, then `W2 *= 2` (or `W2[0] = v`, through a view of it): Python's
    layer holds W2 itself and shows the write; srcad's code writes a copy (copy on write), so
    what it carries as the layer's W kept the old values -- a wrong value and gradient,
    silently, before. Refused at the write."""
    order = list(ir.walk(fn.body))
    stores = [(i, s) for i, s in enumerate(order) if isinstance(s, ir.Effect) and
              s.kind == "setattr" and isinstance(s.args.get("value"), ir.Var)]
    if not stores:
        return
    views = _view_sources(fn)
    at = {id(s): i for i, s in enumerate(order)}
    writes = list(_in_place_writes(order, views))

    def stored_again(c, s) -> bool:
        # (`self.h = np.zeros(n)`, then `self.h[:, t] = v`, of an attribute a local carries:
        # attrstate.py gives the object the written array again at once, so the object holds
        # what Python's holds -- where no one else can hold the array: made in this call)
        if not _made_here(s.args["value"], order):
            return False
        held = {c.target}
        for t in order[at[id(c)] + 1:]:
            first = next(iter(t.args.values()), None) if isinstance(t, ir.Call) else None
            if isinstance(t, ir.Call) and t.op.name == "copy" and isinstance(first, ir.Var) and \
                    first.name in held:
                held.add(t.target)
                continue
            return isinstance(t, ir.Effect) and t.kind == "setattr" and \
                t.args["_obj"] == s.args["_obj"] and t.args["attr"] == s.args["attr"] and \
                isinstance(t.args["value"], ir.Var) and t.args["value"].name in held
        return False

    for i, s in stores:
        stored = _view_roots(s.args["value"].name, views)
        for c, roots in writes:
            if at[id(c)] > i and roots & stored and not stored_again(c, s):
                attr = s.args.get("attr")
                name = f"`.{attr.value}`" if isinstance(attr, ir.Const) else "an attribute"
                raise SharingUnknownError(
                    f"line {c.line} writes in place into an array that line {s.line} stored "
                    f"on an object ({name}): Python's object holds that array and shows the "
                    f"write; srcad's code writes a copy, and what it keeps for the object "
                    f"would have the old values", filename=fn.filename, lineno=c.line,
                    func=fn.name, hint="store a copy on the object (`layer.W = W.copy()`), "
                    "or make a new array after storing (`W = W * 2`)")


def check_writes_into_held_values(fn: ir.Function, wrt) -> None:
    """`w = net.params["W1"]; w[:] = W` (or `w += W`, `np.multiply(W, 1.0, out=w)`, `w = GW;
    w[:] = W`), and `d = CFG; d["W"] = W` (`ws = WS; ws[0] = W`, `d = net.sub.d`): a write of
    a value that depends on the arguments being differentiated into an array, list or dict a
    module global or an object holds, which srcad read as a constant, by a second name.
    Python writes that very array or container, which every holder then shows -- the
    object's methods, a function reading the global, the caller after the call; srcad's code
    writes a copy (copy on write), so those read the old values: zeros and a stale value,
    silently, before. Refused at the write, where the program may read it another way
    (`_held_elsewhere`)."""
    writes = [c for c in ir.walk(fn.body) if isinstance(c, ir.Call) and
              (c.inplace or c.op.name in ("setitem", "in_layout", "dict_set", "list_append",
                                          "write_through"))]
    held_effects = [e for e in ir.walk(fn.body) if isinstance(e, ir.Effect) and
                    e.kind == "setitem" and "held" in e.args]
    if not writes and not held_effects:
        return
    dep = _dependent(fn, wrt)
    every = _every_definition(fn)
    made = {name: defs[-1] for name, defs in every.items()}
    views = _view_sources(fn)
    for e in held_effects:  # (`self.cfg["k"] = v`, `d = CFG; d["k"] = v`: Python's store)
        if any(v in dep for v in ir.atom_vars(e.args["value"])):
            _refuse_held_write(fn, e.line, f"`{e.args['held'].value}`", False)
    for c in writes:
        # (`x op= t` of an array not the function's own: `x_op = op(x, t)`, then
        # `x = in_layout(x_op, x)` -- the new values written into x's memory)
        written, values = (c.args.get("like"), [c.args.get("new")]) \
            if c.op.name == "in_layout" else (c.args.get("view"), [c.args.get("value")]) \
            if c.op.name == "write_through" else (next(iter(c.args.values())),
                                                  list(c.args.values())[1:])
        dependent = any(v in dep for a in values for v in ir.atom_vars(a))
        if not dependent and c.op.name not in ("setitem", "in_layout", "write_through") and \
                not c.inplace:
            continue
        kinds = (np.ndarray, dict, list) if c.op.name == "setitem" else (dict, list) \
            if c.op.name in ("dict_set", "list_append") else (np.ndarray, list) \
            if c.op.name == "in_layout" else (np.ndarray,)  # (`ps[0] +=
        # t` of a list's array: `write_through` puts the array numpy wrote back in its slot)
        if c.op.name == "setitem" and c.augmented:
            # (`ps[0] *= 0.0; ps[0] += W` of a list: numpy writes the array in that slot --
            # an item of the display, or any item put in a list built when the code runs)
            slots = [_display_slot(written, c.args.get("index"))] if isinstance(
                written, ir.Seq) else [a for a, where in _list_items(written, fn, 4)
                                       if where is fn]
            held = next((h for h in (_held_value(a, made, views, (np.ndarray,), fn,
                                                 every=every)
                                     for a in slots if a is not None) if h is not None), None)
        else:
            held = _held_value(written, made, views, kinds, fn, every=every)
        # (a list or dict: refused wherever it is -- Python's container keeps the store after
        # the call, as kept_globals.py replays a store spelt by the global's own name; an
        # array read back only through the name that wrote it, a scratch buffer, runs)
        array = held is not None and isinstance(held[2][-1], np.ndarray)
        if c.op.name == "in_layout" and held is not None and type(held[2][-1]) is list:
            # (`h = NET.hist; h += [v]`: Python's `+=` extends that very list; srcad's code
            # rebinds h to a new one, and the holder's readers saw the old list -- zeros and
            # a stale value, silently, before the session of 2026-12-07, twelfth)
            _refuse_held_write(fn, c.line, held[0], False, dependent,
                               hint=f"extend it through what holds it (`{held[0]} += [...]`"
                               f" or `{held[0]}.extend(...)`), which srcad follows")
        if not dependent and not array:
            continue  # (a list's or dict's store of a constant value: Python's, kept_globals)
        if held is not None and (not array or _held_elsewhere(fn, made, *held[1:]) or
                                 _held_by_an_object(fn, held[2])):
            # (a value that does not depend on the differentiated arguments too: `w = BUF;
            # w[...] = 3.0` then `x * BUF` read the old values, the value and the gradient
            # wrong, silently, before 2026-12-07)
            # (an object's array: its state after the call is Python's -- the write shown --
            # only where srcad follows it; one nothing reads again in the call was written
            # or not as the code was fused, 2026-12-06, eighth. A module's scratch array
            # read back only through the name that wrote it runs, its buffer left as it was)
            _refuse_held_write(fn, c.line,
                               f"{held[0]}{_AS_BUILT if '`' in held[0] else ''}", array,
                               dependent)


def _object_container(atom, every: dict, params, depth: int = 0):
    """(How `obj.attr` is spelt, in backquotes; the keys `_container_reads` would list for a
    read of it) where `atom` may be an attribute of an object that exists before the call --
    a constant or a parameter (`s.log`) -- read as the code runs, or an item of one
    (`s.cfg["hist"]`), through copies, else None. (An object the function makes is
    objects.py's and aliasing.py's.)"""
    if not isinstance(atom, ir.Var) or depth > 8:
        return None
    for d in every.get(atom.name, ()):
        if not isinstance(d, ir.Call) or d.op is None:
            continue
        first = next(iter(d.args.values()), None)
        if d.op.family == "opaque attribute":
            attr = d.op.name[1:]
            if isinstance(first, ir.Const):
                now = getattr(first.value, attr, None)
                return f"`{first.src}{d.op.name}`", {(id(first.value), attr), id(now)}
            if isinstance(first, ir.Var) and first.name in params:
                return f"`{first.name}{d.op.name}`", {("param", attr)}
            continue
        found = _object_container(first, every, params, depth + 1) if d.op.name in (
            "getitem", "copy") else None
        if found is not None:
            return found
    return None


def changed_held_containers(fn: ir.Function, wrt, reads: set) -> list:
    """The refusals (not raised: check_opaque raises the first after its own, which name the
    route more closely) for each method of a list or dict an object that exists before the
    call holds (`s.log.extend([np.sum(x) * 0.5, 0.25])`, `s.cfg["hist"].append(v)`) given a
    value that depends on the arguments being differentiated, where the program reads that
    container again (`reads`: `_container_reads`). srcad runs the method as Python's, on the
    object's own container, and a read of it -- here, or by the caller when srcad built the
    code -- carries no gradient: a wrong gradient, silently, before the session of
    2026-12-07, fourteenth. (srcad follows `self.cache.append(h)` where the list is read by
    item or length alone: attrstate.py; a list a layer keeps for its own backward,
    `self.derived["Z"].append(Z)`, never read here, is Python's.)"""
    methods = [m for m in ir.walk(fn.body) if isinstance(m, (ir.Call, ir.Effect)) and
               m.op is not None and m.op.family == "opaque method" and
               m.op.name.lstrip(".") in MUTATING]
    if not methods:
        return []
    dep = _dependent(fn, wrt)
    every = _every_definition(fn)
    out = []
    for m in methods:
        if not any(v in dep for k, a in m.args.items() if k != "_obj"
                   for v in ir.atom_vars(a)):
            continue
        held = _object_container(m.args.get("_obj"), every, fn.params)
        if held is None or not held[1] & reads:
            continue
        out.append(SharingUnknownError(
            f"line {m.line} changes a list or dict an object holds ({held[0]}, "
            f"`{m.op.name}`) with a value that depends on the arguments being "
            f"differentiated: srcad runs that method as Python's, on the object's own "
            f"container, and what is read from the attribute later -- here or by the caller "
            f"-- carries no gradient", filename=fn.filename, lineno=m.line, func=fn.name,
            hint="return the value instead, or keep the values in a list the function makes;"
            " srcad follows `self.cache.append(v)` where the list is read by item or length "
            "alone"))
    return out


def _container_reads(main: ir.Function) -> set:
    """What the program reads of lists and dicts objects hold, other than to change them by
    their own methods: id() of each list or dict read as a constant (`S.log` of a module's
    object, read when srcad built the code), (id(obj), attr) of each attribute read as the
    code runs whose value is read -- not only picked from (`self.derived["Z"]`) to be changed
    by a method of its own -- and ("param", attr) of each such read through a parameter."""
    found: set = set()
    for f in ir.program_functions(main):
        uses: dict = {}  # name -> [(statement, the argument it is given as)]
        for st in ir.walk(f.body):
            args = st.args if isinstance(getattr(st, "args", None), dict) else {}
            for k, a in args.items():
                for atom in _atoms(a):
                    if isinstance(atom, ir.Const) and type(atom.value) in (list, dict):
                        found.add(id(atom.value))
                for v in ir.atom_vars(a):
                    uses.setdefault(v, []).append((st, k))
            extra = st.args if isinstance(st, ir.UserCall) else \
                [st.value] if isinstance(st, ir.Return) else []
            for a in extra:
                for v in ir.atom_vars(a):
                    uses.setdefault(v, []).append((st, None))

        def read(name, depth=0):
            for st, k in uses.get(name, ()):
                op = getattr(st, "op", None)
                if k == "_obj" and getattr(op, "family", "") == "opaque method" and \
                        op.name.lstrip(".") in MUTATING:
                    continue  # (changed by its method)
                if isinstance(st, ir.Call) and getattr(op, "name", "") in ("getitem", "copy") \
                        and k == next(iter(st.args), None) and depth < 8:
                    if read(st.target, depth + 1):
                        return True
                    continue  # (picked from, to be changed)
                return True
            return False

        for st in ir.walk(f.body):
            if isinstance(st, ir.Call) and getattr(st.op, "family", "") == \
                    "opaque attribute" and read(st.target):
                base = next(iter(st.args.values()), None)
                attr = st.op.name[1:]
                found.add((id(base.value), attr) if isinstance(base, ir.Const) else
                          ("param", attr))
                if isinstance(base, ir.Const):
                    found.add(id(getattr(base.value, attr, None)))
    return found


def _atoms(a):
    """`a` and the atoms it holds (a display's items, an index's parts)."""
    yield a
    for inner in getattr(a, "items", None) or getattr(a, "parts", None) or ():
        yield from _atoms(inner)


def _refuse_held_write(fn: ir.Function, line: int, held: str, array: bool,
                       dependent: bool = True, hint: str | None = None):
    what = "an array" if array else "a list or dict"
    value = "a value that depends on the arguments being differentiated" if dependent else \
        "in place"
    raise SharingUnknownError(
        f"line {line} writes into {what} a module global or an object holds "
        f"({held}), {value}: Python "
        f"writes that very {'array' if array else 'container'}, which every holder then "
        f"shows (its methods, a function reading it, the caller after the call); srcad's "
        f"code writes a copy, so they would read the old values",
        filename=fn.filename, lineno=line, func=fn.name,
        hint=hint or "make a new array or container and store it whole where it is held "
        "(`net.W = W`, `d = dict(net.params); d[\"W\"] = W; net.params = d`), or "
        "pass it as an argument")


_AS_BUILT = ", as srcad reads it when it builds the code"


def _held_value(atom, made: dict, views: dict, kinds: tuple, fn: ir.Function | None = None,
                depth: int = 4, every: dict | None = None):
    """Who holds the array, list or dict (`kinds`) `atom` is (or is a view of), where that is
    a constant srcad read when normalising -- a module global, an item of a global's or
    object's list or dict, an object's attribute: (its spelling, the constant it was reached
    from, [the objects that constant and the held value are]); else None (the function's
    own values). An item of a list `fn` builds is any value put in it (`_list_items`)."""
    if every is None:
        every = _every_definition(fn) if fn is not None else {}
    todo, seen = [atom], set()
    while todo:
        a = todo.pop()
        if isinstance(a, ir.Const):
            if isinstance(a.value, kinds):
                return f"`{a.src}`", a, [a.value]
            continue
        if not isinstance(a, ir.Var) or a.name in seen:
            continue
        seen.add(a.name)
        known = _known_value(a, made) if np.ndarray in kinds and a.name in made \
            else _UNKNOWN
        if isinstance(known, np.ndarray):  # (an array srcad knew when normalising -- one a
            # global or an object holds, reached through `.get`, `list(d.values())[0]`, ...)
            return "an array srcad read when it built the code", a, \
                _holding_values(a, made) + [known]
        # (a name a loop rebinds -- `for p in ps: p[:] = w` -- is each value it is given)
        for d in every.get(a.name) or ([made[a.name]] if a.name in made else []):
            held = _held_by(d, a, made, kinds, fn, depth, todo)
            if held is not None:
                return held
        todo.extend(ir.Var(v) for v in views.get(a.name, ()))
    return None


def _held_by(d, a, made: dict, kinds: tuple, fn, depth: int, todo: list):
    """`_held_value`'s step for one definition `d` of `a`: who holds it, or None (what to
    look at next put in `todo`)."""
    first = next(iter(d.args.values()), None)
    container = _known_value(first, made) if d.op.name == "getitem" else _UNKNOWN
    if isinstance(container, (dict, list, tuple)):
        key = _constant_key(d.args.get("index"))
        if key is not _UNKNOWN:
            try:
                items = [container[key]]
            except (KeyError, IndexError, TypeError):
                return None
        else:  # (an index known when it runs -- a loop's `for w in net.weights`: any)
            items = list(container.values() if isinstance(container, dict) else container)
        found = [item for item in items if isinstance(item, kinds)]
        if found:
            spelled = f"`{first.src}`" if isinstance(first, ir.Const) else "a container"
            return f"an item of {spelled}", first, _holding_values(first, made) + found
        return None
    if d.op.name == "getitem" and fn is not None and depth:
        # (`ps = [l.W for l in net.layers]`, `for l in net.layers: ps += l.params()`,
        # `[p for l in net.layers for p in l.params()]`: an item of a list built when the
        # code runs is what was put in it -- found on 2af95e6 written with zeros)
        for item, scope in _list_items(first, fn, depth):
            every = _every_definition(scope)
            held = _held_value(item, {k: v[-1] for k, v in every.items()},
                               _view_sources(scope), kinds, scope, depth - 1, every)
            if held is not None:
                return held
    holder = _known_value(first, made) if _read_from_attribute(d) else _UNKNOWN
    if holder is not _UNKNOWN:
        # (of an object, a class -- `type(layer).shared`, `layer.__class__.shared` -- or a
        # module)
        label = d.op.label
        held = getattr(holder, label.lstrip("."), None)
        if isinstance(held, kinds):
            return f"the attribute `{label}` of an object", first, \
                _holding_values(first, made) + [held]
        return None
    if d.op.name == "in_layout":
        todo.append(d.args.get("like"))  # (it written in place before: the same array)
    elif d.op.name == "getitem" and not makes_view(d, maybe=True):
        pass  # (an integer array or a mask: numpy's copy)
    elif d.op.name in _VIEW_OPS or getattr(d.op, "view", False) or d.op.name in (
            "getitem", "setitem", "dict_set", "list_append") or d.inplace:
        todo.append(first)  # (a view of it, or it written before: the same object)
    return None


def _every_definition(fn: ir.Function) -> dict:
    """{name: every `ir.Call` of `fn` that assigns it}."""
    out: dict = {}
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Call):
            out.setdefault(s.target, []).append(s)
    return out


_UNKNOWN = object()


def _list_items(container, fn: ir.Function, depth: int):
    """(atom, function it is an atom of) for each value `fn` may have put in the list
    `container` is: a display's items, what `list_append` added, the items of the list it
    copies, of the display or list a user function it calls returns (in that function);
    nothing for what is not such a list."""
    todo, seen = [(container, fn, depth)], set()
    while todo:
        a, scope, d = todo.pop()
        if isinstance(a, ir.Seq):
            yield from ((x, scope) for x in a.items)
            continue
        if not isinstance(a, ir.Var) or (id(scope), a.name) in seen or not d:
            continue
        seen.add((id(scope), a.name))
        for s in ir.walk(scope.body):
            if isinstance(s, ir.UserCall) and a.name in s.targets and \
                    isinstance(s.callee.ret, ir.Return):
                value = s.callee.ret.value
                if len(s.targets) > 1:  # (`ps, n = helper()`: its item of the tuple)
                    value = value.items[s.targets.index(a.name)] \
                        if isinstance(value, ir.Seq) else None
                todo.append((value, s.callee, d - 1))
            elif isinstance(s, ir.Call) and s.target == a.name and s.args:
                first = next(iter(s.args.values()))
                if s.op.name in ("copy", "list", "tuple"):
                    todo.append((first, scope, d))
                elif s.op.name == "list_append":
                    todo.append((s.args.get("xs"), scope, d))
                    yield s.args.get("x"), scope
                elif s.op.name == "setitem" and s.augmented:  # (`ps[0] *= 0.0`: the
                    # list, its slot's array written in place -- numpy's same array)
                    todo.append((first, scope, d))
                    yield s.args.get("value"), scope
                elif s.op.name == "getitem":  # (a list that is an item of a list: each
                    # item's items -- `itertools.chain` of the lists methods returned)
                    todo.extend((inner, where, d - 1)
                                for inner, where in _list_items(first, scope, d - 1))


def _holding_values(atom, made: dict, depth: int = 4) -> list:
    """The values `atom` is and that hold it, as srcad knew them when normalising (`P["l1"]`:
    that dict and P; `LAYERS["fc1"].p`: that dict, the layer and LAYERS; `CFG.get("W")`: the
    array and CFG)."""
    value = _known_value(atom, made)
    out = [] if value is _UNKNOWN else [value]
    held_by = getattr(atom.value, "__self__", None) if isinstance(atom, ir.Const) else None
    if isinstance(held_by, (dict, list, tuple)):  # (a bound method of a known container)
        out.append(held_by)
    d = made.get(atom.name) if isinstance(atom, ir.Var) and depth else None
    if d is not None and (_read_from_attribute(d) or d.op.name in ("getitem", "list", "tuple")
                          or is_opaque(d.op) and d.op.kind == "call"):
        for a in d.args.values():
            out += _holding_values(a, made, depth - 1)
    return out


def _constant_key(index):
    """The one constant an index atom is (`d["W"]`, `L[0]`), else _UNKNOWN."""
    parts = index.parts if isinstance(index, ir.Index) and not index.is_tuple else ()
    return parts[0].value if len(parts) == 1 and isinstance(parts[0], ir.Const) else _UNKNOWN


def _known_value(atom, made: dict, depth: int = 4):
    """The Python value `atom` holds where srcad knew it when normalising: a constant, an
    attribute of one, or `type(...)` of one (`type(layer)`); else _UNKNOWN."""
    if isinstance(atom, ir.Const):
        return atom.value
    d = made.get(atom.name) if isinstance(atom, ir.Var) and depth else None
    if d is None:
        return _UNKNOWN
    if _read_from_attribute(d):
        obj = _known_value(d.args.get("_obj"), made, depth - 1)
        return _UNKNOWN if obj is _UNKNOWN else getattr(obj, d.op.label.lstrip("."), _UNKNOWN)
    if d.op.name == "getitem" and isinstance(d.args.get("a"), (ir.Const, ir.Var)):
        container = _known_value(d.args["a"], made, depth - 1)
        key = _constant_key(d.args.get("index"))
        if isinstance(container, (dict, list, tuple)) and key is not _UNKNOWN:
            try:
                return container[key]
            except (KeyError, IndexError, TypeError):
                return _UNKNOWN
        return _UNKNOWN
    f = d.args.get("_fn")
    if d.op.name in ("list", "tuple") and set(d.args) == {"iterable"}:  # (the table's rows)
        f, args = ir.Const(list if d.op.name == "list" else tuple, d.op.name), [
            d.args["iterable"]]
    elif is_opaque(d.op) and isinstance(f, ir.Const):
        args = [a for k, a in d.args.items() if k != "_fn"]
        if not all(k.startswith("_a") for k in d.args if k != "_fn"):
            return _UNKNOWN  # (keywords)
    else:
        return _UNKNOWN
    fn_value = f.value
    if not (fn_value in _PURE_BUILTINS or getattr(fn_value, "__name__", "") in _PURE_METHODS
            and isinstance(getattr(fn_value, "__self__", None), (dict, list, tuple))):
        return _UNKNOWN
    values = [_known_value(a, made, depth - 1) for a in args]
    if any(v is _UNKNOWN for v in values):
        return _UNKNOWN
    try:  # (`type(layer)`, `net.params.get("W1")`, `next(iter(d.values()))`: no side effect)
        return fn_value(*values)
    except Exception:  # noqa: BLE001  (what Python would raise, it raises when the code runs)
        return _UNKNOWN


# calls `_known_value` makes itself on values srcad knew when normalising: they change nothing
# and make no new array (a new list or dict holds the same arrays)
_PURE_BUILTINS = (type, list, tuple, dict, iter, next)
_PURE_METHODS = frozenset({"get", "values", "keys", "items", "copy"})


def _held_by_an_object(fn: ir.Function, values: list) -> bool:
    """Is one of `values` (what holds the written array, and the array) a user object, or
    the value of an attribute of one srcad read when it built the code (`d = A.W`: the
    array injected as a constant, its lookup guarded)?"""
    if any(is_user_object(v) and not isinstance(v, type) for v in values):
        return True
    entries = getattr(fn.guards, "entries", ()) if fn.guards is not None else ()
    return any(kind == "attr" and is_user_object(where) and not isinstance(where, type) and
               any(obj is v for v in values) for kind, where, _, obj in entries)


def _held_elsewhere(fn: ir.Function, made: dict, const, objects: list) -> bool:
    """May the program read the written array other than through the constant `const` it
    was reached from -- another constant of one of `objects` (the array, the container or
    object holding it) in `fn` or in a function it calls (a module function reading the
    global), or a user function it calls given an object (whose methods may read one it
    holds)? A scratch array read back only through the name the function wrote it by
    (`b = BUF; b[:] = W * 2; return np.sum(b ** 2)`) is not: its gradient is right."""
    stmts = list(ir.walk_program(fn))
    if any(isinstance(s, ir.UserCall) and
           any(_user_object_name(a) is not None for a in s.args) for s in stmts):
        return True
    for s in ir.walk(fn.body):  # (a method srcad runs as written, on an object it knows)
        if isinstance(s, (ir.Call, ir.Effect)) and is_opaque(s.op) and \
                s.op.kind in ("method", "call") and any(
                    is_user_object(v) and not isinstance(v, type)
                    for v in (_known_value(a, made) for a in s.args.values())):
            return True
    for s in stmts:
        todo = list(s.args.values()) if isinstance(s, (ir.Call, ir.Effect)) else \
            list(s.args) if isinstance(s, ir.UserCall) else \
            [s.value] if isinstance(s, ir.Return) else []
        while todo:
            a = todo.pop()
            if isinstance(a, ir.Seq):
                todo.extend(a.items)
            elif isinstance(a, ir.Const) and a is not const and \
                    any(a.value is o for o in objects):
                return True
    return False


def _read_from_attribute(d) -> bool:
    """Is `d`, what handed a container out, an attribute read (not a call)?"""
    return isinstance(d, ir.Call) and is_opaque(d.op) and d.op.kind == "attribute"


def _handed_out_why(d, what: str) -> str:
    if _read_from_attribute(d):
        return (f"a list or dict read from {what} (line {d.line}) -- one the object holds "
                f"(its methods read it, and it keeps the new value after the call): srcad's "
                f"code would store into a copy and not follow")
    return (f"a list or dict that {what} (line {d.line}) handed out -- perhaps one an object "
            f"holds, which the output reads: srcad knows it only as the call's result and "
            f"would not follow")


_HANDED_OUT_HINT = ("store the new container whole into the object that holds it (`for "
                    "layer, p in zip(net.layers, params): layer.params = p`), which srcad "
                    "follows into the methods that read it, or pass the arrays to them as "
                    "arguments")


_ATTRIBUTE_HINT = ("store a new container whole into the object (`layer = net.layers[0]; d = "
                   "dict(layer.params); d[\"W\"] = W; layer.params = d`), which srcad follows "
                   "into the methods that read it")


def _handed_out_hint(d) -> str:
    return _ATTRIBUTE_HINT if _read_from_attribute(d) else _HANDED_OUT_HINT


def _refuse_handed_out(fn: ir.Function, s, views: dict, names: set, consts: set) -> None:
    """Refuse `s`, a list's or dict's own changing method given a differentiated value
    (`lp.update(p)`), where that container was handed out by a call given something the
    output reads (`_handed_out_by`): Python changes the object's dict, its methods read the
    new arrays, and srcad's code would not follow the change -- the gradient came out zero.
    A container the function makes itself is followed as before."""
    found = _handed_out_by(fn, s.args.get("_obj"), views, names, consts, changed_in_place=True)
    if found is not None:
        d, what = found
        _refuse(fn, s, f"it is given a value that depends on the arguments being "
                f"differentiated, and it changes {_handed_out_why(d, what)} the change",
                _handed_out_hint(d))


def check_handed_out_stores(fn: ir.Function, wrt) -> None:
    """`ps = net.parameters(); ps[0]["W"] = W` (or `.append`): a store of a differentiated
    value into a list or dict a call handed out (`_handed_out_by`) -- Python's object sees
    the new array, srcad's code would not, and the gradient came out zero. Refused."""
    stores = [s for s in ir.walk(fn.body) if isinstance(s, ir.Call) and s.op.name in (
        "setitem", "dict_set", "list_append")]
    if not stores:
        return
    dep = _dependent(fn, wrt)
    names, consts = _useful(fn)
    views = _view_sources(fn)
    made = {r.target: r for r in ir.walk(fn.body) if isinstance(r, ir.Call)}
    for s in stores:
        args = list(s.args.values())
        value = s.args.get("x" if s.op.name == "list_append" else "value")
        if value is None or not set(ir.atom_vars(value)) & dep:
            continue
        if isinstance(_known_value(args[0], made), np.ndarray):
            continue  # (an array an object holds: check_writes_into_held_values says so)
        found = _handed_out_by(fn, args[0], views, names, consts)
        index = s.args.get("index")
        if found is not None and s.op.name == "setitem" and isinstance(index, ir.Index) and \
                not index.is_tuple and any(isinstance(part, ir.Slice) or (isinstance(
                    part, ir.Const) and part.value is Ellipsis) for part in index.parts):
            # (`for p, v in zip(net.params, params): p[...] = v`: an array the list holds,
            # written in place -- loading weights into a model's own arrays)
            d, what = found
            raise SharingUnknownError(
                f"line {s.line} writes in place, with a value that depends on the arguments "
                f"being differentiated, into an array held by {_handed_out_why(d, what)} "
                f"the write", filename=fn.filename, lineno=s.line, func=fn.name,
                hint="store the new arrays whole on the objects that hold them (`for layer, "
                "W in zip(net.layers, Ws): layer.W = W`), which srcad follows into the "
                "methods that read them, or pass the arrays to them as arguments")
        if found is not None:
            d, what = found
            raise SharingUnknownError(
                f"line {s.line} stores a value that depends on the arguments being "
                f"differentiated into {_handed_out_why(d, what)} the store",
                filename=fn.filename, lineno=s.line, func=fn.name,
                hint=_handed_out_hint(d))


def _useful(fn: ir.Function, skip=frozenset()) -> tuple[set, set]:
    """(names, constant spellings) from which the output is reached through ops that would
    carry a gradient -- rows with a rule, ops with none, user calls -- but not through a row
    with no derivative (a comparison, a shape, int()): where a missing gradient matters.
    (`skip`: names whose making is left out -- what the output reaches other than through
    them.)"""
    flows = [(ins, outs) for ins, outs in _flows(fn) if not set(outs) <= skip]
    names = set(ir.atom_vars(fn.ret.value))
    consts = set()
    changed = True
    while changed:
        changed = False
        for ins, outs in reversed(flows):
            if not any(o in names for o in outs):
                continue
            for a in ins:
                for v in ir.atom_vars(a):
                    if v not in names:
                        names.add(v)
                        changed = True
                for c in _consts(a):
                    consts.add(c)
    return names, consts


# ops whose result may share memory with their first operand (numpy's views, and copies
# srcad makes of one name into another): frontend/aliasing.py's VIEW_OPS
_VIEW_OPS = VIEW_OPS | {"getitem", "copy"}


def _view_sources(fn: ir.Function) -> dict:
    """{name: the names it may be a view of}, one step: from the ops that may make a view."""
    out: dict = {}
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Call) and s.op.name in _VIEW_OPS and s.args:
            first = next(iter(s.args.values()))
            if isinstance(first, ir.Var):
                out.setdefault(s.target, set()).add(first.name)
            elif isinstance(first, ir.Seq) and s.op.name == "getitem":
                # (`w = [W1, W2][i]`: the item is one of the display's)
                out.setdefault(s.target, set()).update(_held_vars(first))
    return out


def _view_roots(name: str, views: dict) -> set:
    """`name` and every name it may be a view of, through views of views."""
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(views.get(n, ()))
    return seen


def _consts(atom):
    if isinstance(atom, ir.Const):
        yield atom.src
    elif isinstance(atom, ir.Seq):
        for a in atom.items:
            yield from _consts(a)


# numpy functions (and ndarray methods) whose result is an integer or bool array or number
# whatever they are given -- indices, counts, tests: piecewise constant, so a value computed
# from a differentiated one carries no gradient through them (`x * np.searchsorted(x, 0.5)`
# runs as written). Not np.bincount: with weights= its result is a float sum of them.
_INTEGER_NAMES = ("searchsorted digitize count_nonzero argwhere flatnonzero nonzero nanargmax "
                  "nanargmin lexsort ravel_multi_index unravel_index isin array_equal "
                  "array_equiv allclose isclose isreal iscomplex isneginf isposinf")
_INTEGER_RESULTS = frozenset(
    [getattr(np, n) for n in _INTEGER_NAMES.split() if hasattr(np, n)]
    + [np.linalg.matrix_rank])
_INTEGER_METHODS = frozenset({"searchsorted", "nonzero", "argsort", "argpartition"})


def _integer_result(s) -> bool:
    """Is the opaque site `s` one of the calls above (its result carries no gradient)?"""
    op = s.op
    if op.kind == "method":
        return op.label.strip(".()") in _INTEGER_METHODS
    callee = s.args.get("_fn")
    obj = getattr(callee, "value", None)
    try:
        return op.kind == "call" and obj in _INTEGER_RESULTS
    except TypeError:  # (an unhashable callee)
        return False


def _site_label(s) -> str:
    op = s.op
    if op.kind == "call":
        return f"`{op.label}`"
    if op.kind == "method":
        return f"the method `{op.label}`"
    if op.kind == "format":
        return op.label
    return f"the attribute `{op.label}`"


_STATE_HINT = (
    "reach the objects where srcad knows them when it builds the code -- `for l in "
    "self.layers:`, `self.layers[i]` in `for i in range(len(self.layers))`, `net[i]` or "
    "`for l in net` where the class's `__getitem__` / `__iter__` hands over to such a list "
    "-- rather than through a copy, a filter or a map of them; or pass the stored values "
    "to the methods as arguments")


def _refuse(fn: ir.Function, s, why: str, hint: str):
    raise NoRuleError(f"{_site_label(s)} has no derivative rule in srcad, and {why}",
                      filename=fn.filename, lineno=s.line, func=fn.name, hint=hint)


_CONVERSIONS = {"float", "int", "complex", "bool", "item", "tolist"}


def _object_why(fn: ir.Function, s):
    """For a method (or a store) on an object srcad runs as written: why objects.py did not
    follow the object, where it was built by a user class in this function (`t = C(..)`,
    or picked from a list of such, `[d1, d2][i]`); else None."""
    obj = s.args.get("_obj")
    if not isinstance(obj, ir.Var):
        return None
    made = {r.target: r for r in ir.walk(fn.body) if isinstance(r, ir.Call)}
    todo, seen = [obj.name], set()
    while todo:
        name = todo.pop()
        if name in seen or name not in made:
            continue
        seen.add(name)
        r = made[name]
        if getattr(r.op, "why", None):
            return r.op.why
        if r.op.name in ("getitem", "copy"):
            for a in r.args.values():
                items = a.items if isinstance(a, ir.Seq) else (a,)
                todo.extend(x.name for x in items if isinstance(x, ir.Var))
    return None


def _hint(s, fn: ir.Function | None = None) -> str:
    """What to do instead; for a callable the census lists as refused, its reason first
    (srcad/analysis/census.py, docs/ops.md)."""
    reason = refused_reason(s.op.label) if getattr(s.op, "label", "") else None
    why = _object_why(fn, s) if fn is not None and s.op.kind == "method" else None
    hint = _what_to_do(s) if why is None else _not_followed(why)
    return hint if reason is None else f"the census (docs/ops.md): {reason}. Else {hint}"


def _what_to_do(s) -> str:
    op = s.op
    if op.label.strip(".()") in _CONVERSIONS:  # float(loss), x.item(): a plain number
        return ("keep the value an array: for its one element write np.sum(x) or "
                "x.reshape(()) (a 0-d array carries the gradient, a Python number does not), "
                "or x.item() / x.item(i), which srcad differentiates (the number, numpy's own, "
                "has its derivative carried beside it)")
    if getattr(op, "why", None):
        return _not_followed(op.why)
    if getattr(op, "advice", None):
        return op.advice
    if op.kind == "attribute" and _user_object_name(s.args.get("_obj")) is not None:
        return _ROUTES_HINT  # (a layer's attribute read as the code runs)
    if op.kind == "call" and op.label in ("map", "filter"):  # (map(np.tanh, xs) kept)
        return ("consume it where it is made, or write it as a comprehension, which srcad "
                "differentiates: `[f(v) for v in xs]`")
    if op.kind == "call" and op.library is not None and getattr(op, "srcad_own", False):
        return (f"`{op.label}` is one of srcad's own helpers ({op.library}) and has no row in "
                f"the op table: this is a bug in srcad, please report it")
    if op.kind == "call" and op.library is not None:
        return (f"`{op.label}` is a function of an installed library ({op.library}); srcad "
                f"does not trace into installed libraries (site-packages, the standard "
                f"library). Register a rule: srcad.defvjp({op.label}, lambda g, out, x: ...) "
                f"(one rule per positional argument), or write it with numpy functions")
    if op.kind == "call":
        return (f"register one with srcad.defvjp({op.label}, lambda g, out, x: ...) (one "
                f"rule per positional argument), or use the numpy function")
    return ("call the numpy function instead (np.<name>(x, ...)), or register one with "
            "srcad.defvjp")


_ROUTES_HINT = (
    "a value that depends on the differentiated arguments reaches this object where srcad "
    "cannot follow it (`setattr(obj, name, v)` with a name known only when it runs, "
    "`obj.__dict__[...] = v`, `vars(obj).update(...)`, `object.__setattr__`, a function srcad "
    "does not read): store it as `obj.attr = v` or `setattr(obj, \"attr\", v)`, which srcad "
    "follows into the methods that read it")


def _not_followed(why: str) -> str:
    return (f"an object built in the function is turned into local variables when srcad "
            f"can follow every use of it; this one it cannot ({why}). Use it only through "
            f"its attributes and methods here, or build it outside the function and pass "
            f"the arrays to differentiate as arguments")


def _from_params(fn: ir.Function) -> set:
    """A subroutine's parameters and what indexes or copies them: objects its caller holds
    too (a value stored into one of them reaches the caller, where srcad cannot follow)."""
    out = set(fn.params)
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Call) and s.op.name in ("getitem", "copy") and any(
                v in out for v in ir.atom_vars(next(iter(s.args.values()), None))):
            out.add(s.target)
    return out


def check_attribute_state(fn: ir.Function, wrt) -> None:
    """`self.out = v` (frontend/attrstate.py) carries v by a local in the function that
    assigns it; another function reading `.out` back through the object (a callee, or the
    caller after the call) would get the value with no gradient. Refused at such a read when
    a function of the call stores a value that depends on the arguments under that name
    before it -- earlier in the call, or on an earlier trip of a loop around both. A read
    that comes first (a BatchNorm's running mean, blended with this call's batch and stored
    again) reads what an earlier call left there: a constant of this one, as in Python."""
    events = []
    _attribute_flows(fn, list(wrt), {}, events, False)
    stored = []
    for kind, attr, f, line, in_loop, obj in events:
        if kind == "store":
            stored.append((attr, obj, f, line))
    before = []
    for kind, attr, f, line, in_loop, obj in events:
        if kind == "store":
            before.append((attr, obj))
            continue
        hit = any(a == attr and _same_holder(o, obj, attr) for a, o in before) or (
            in_loop and any(a == attr and _same_holder(o, obj, attr) for a, o, _, _ in stored))
        if hit:
            where, at = next((w, ln) for a, o, w, ln in stored
                             if a == attr and _same_holder(o, obj, attr))
            raise NoRuleError(
                f"`.{attr}` is read through the object here, but {where.name} (line {at}) "
                f"stores in it a value that depends on the arguments being differentiated: "
                f"read back from the object it would carry no gradient",
                filename=f.filename, lineno=line, func=f.name,
                hint=f"use the value {where.name} returns (return it, or both it and "
                f"`{attr}`), rather than reading `.{attr}` from the object; a state carried "
                f"from one call to the next (an RNN cell's `h`) goes in as an argument")


def _arms_of(body, around=()) -> dict:
    """{id(statement): {id(branch): the arm it is in}} for the branches around each."""
    out = {}
    for st in body:
        out[id(st)] = dict(around)
        if isinstance(st, ir.If):
            for arm, sub in ((0, st.body), (1, st.orelse)):
                out.update(_arms_of(sub, (*around, (id(st), arm))))
        else:
            for sub in (getattr(st, "cond_body", None), getattr(st, "body", None)):
                if isinstance(sub, list):
                    out.update(_arms_of(sub, around))
    return out


def _exclusive(arms: dict, s, r) -> bool:
    """Are `s` and `r` on different arms of one branch (the one never runs after the other
    in a pass through it -- split_reads' `if h_is_X:` copies of a call, say)?"""
    mine, theirs = arms.get(id(s), {}), arms.get(id(r), {})
    return any(b in theirs and theirs[b] != arm for b, arm in mine.items())


def check_argument_writes(fn: ir.Function, _seen=None) -> None:
    """`cache[k] = v` in a called function writes into its caller's dict (an `ir.Effect`
    "setitem", frontend/aliasing.py), once per call; srcad carries the new dict as a value
    only inside the function that writes, so a caller reading that dict after the call would
    not see the entry (or its gradient): refused at the read, with the way that works."""
    seen = set() if _seen is None else _seen
    if id(fn) in seen:
        return
    seen.add(id(fn))
    order = list(ir.walk(fn.body))
    picked = _picked_from(order)
    arms = _arms_of(fn.body)
    for at, s in enumerate(order):
        if not isinstance(s, ir.UserCall):
            continue
        written = {e.args["param"].value for e in ir.walk(s.callee.body)
                   if isinstance(e, ir.Effect) and e.kind == "setitem" and "param" in e.args}
        written |= set(s.callee.written_arrays)  # (`p -= t` into an array argument)
        for p, a in zip(s.callee.params, s.args):
            if p not in written or not isinstance(a, (ir.Var, ir.Seq)):
                continue
            # (the argument, or a container item it was picked from by a computed index:
            # `[ps_dict, ps_dict_2][i]` of `ps[i]` in a loop -- the dict read after it; a
            # list display's items)
            names = set(ir.atom_vars(a))
            for n in list(names):
                names |= picked.get(n, set())
            later, read = None, sorted(names)[0]
            for r in order[at + 1:]:
                if _exclusive(arms, s, r):
                    continue  # (the other arm of a branch around the call: never after it)
                hit = names & set(ir.uses(r))
                if hit and r is not s:
                    later, read = r, sorted(hit)[0]
                    break
            if later is not None:
                # (the user's name where the line spells it; else what it is -- the list or
                # dict the argument was picked from, `bn_params[i]` on the next trip)
                spelled = _user(read)
                said = f"`{spelled}`" if re.search(
                    rf"\b{re.escape(spelled)}\b", fn.source_lines.get(later.line, "")) else \
                    "that object, or the list or dict it was taken from,"
                raise UnsupportedSyntaxError(
                    f"{s.callee.name} (called at line {s.line}) writes into its argument "
                    f"`{p}` in place; srcad carries such a write as a new value inside "
                    f"{s.callee.name} only, so reading {said} here after the call "
                    f"would not see it", filename=fn.filename, lineno=later.line, func=fn.name,
                    hint=f"return it from {s.callee.name} (`return ..., {p}`) and read the "
                    f"returned one")
        check_argument_writes(s.callee, seen)


# ops whose result holds the objects it is given (a list or dict made from them): Python's
# container holds the array itself
_HOLDING_OPS = {"dict", "dict_copy", "copy", "list_concat", "list_repeat", "setitem", "list",
                "tuple", "list_append", "dict_set"}


def _held_vars(atom) -> Iterator[str]:
    if isinstance(atom, ir.Var):
        yield atom.name
    elif isinstance(atom, ir.Seq):
        for a in atom.items:
            yield from _held_vars(a)


def _in_place_writes(stmts, views: dict, stores: bool = True, arguments=frozenset()):
    """(statement, the names its written array may be a view of) for each write into an
    array in place (`x op= t`, a write through a view, and -- `stores` -- `x[i] = v`; and
    `x[i] op= t` into the item of a list or dict made from one of `arguments`, or of a
    display: write_through, the item's)."""
    for c in stmts:
        if arguments and isinstance(c, ir.Call) and c.op.name == "write_through" and \
                isinstance(c.args.get("view"), ir.Var) and (
                    isinstance(c.args.get("x"), ir.Seq) or  # (a callee's `p[0] *= 3` into
                    # the display its caller gave, spliced in)
                    isinstance(c.args.get("x"), ir.Var) and c.args["x"].name in arguments):
            yield c, _view_roots(c.args["view"].name, views)
            continue
        if not isinstance(c, ir.Call) or not (c.inplace or c.undo is not None or (
                stores and c.op.name == "setitem")):
            continue
        first = next(iter(c.args.values()), None)
        if isinstance(first, ir.Var):
            yield c, _view_roots(first.name, views)
        elif c.op.name == "setitem" and isinstance(first, ir.Seq) and c.augmented:
            # (`ps[0] *= 3` of a list display: the array in that slot, written in place)
            item = _display_slot(first, c.args.get("index"))
            if item is not None:
                yield c, _view_roots(item.name, views)


def _display_slot(display: ir.Seq, index):
    """The name in the slot a constant index picks of a list display, else None."""
    parts = index.parts if isinstance(index, ir.Index) and not index.is_tuple else (index,)
    if len(parts) != 1 or not isinstance(parts[0], ir.Const) or type(parts[0].value) is not int:
        return None
    k = parts[0].value
    item = display.items[k] if -len(display.items) <= k < len(display.items) else None
    return item if isinstance(item, ir.Var) else None


def _made_from(s, after) -> set:
    """The container `s` makes and those made from it by a store or a write into an item
    (`setitem`, `write_through`, a copy, a slice `L[:n]`) in the statements `after` it."""
    derived = {s.target}
    for d in after:
        if isinstance(d, ir.Call) and (d.op.name in _HOLDING_OPS | {"write_through"} or
                                       _sliced(d)) and \
                set(ir.atom_vars(next(iter(d.args.values()), None))) & derived:
            derived.add(d.target)
    return derived


def _sliced(d) -> bool:
    """Is `d` a slice `a[i:j]` (of an array: a view; of a list or tuple: a new one holding
    some of the same objects)?"""
    index = d.args.get("index") if d.op.name == "getitem" else None
    parts = index.parts if isinstance(index, ir.Index) and not index.is_tuple else (index,)
    return index is not None and len(parts) == 1 and isinstance(parts[0], ir.Slice)


def _slices_a_container(d, every_def: dict) -> bool:
    """`L[:n]` of a list or tuple (a display, or a name made by a container's op): a new
    container of the same objects, which may be written in place through it."""
    base = d.args.get("a")
    return _sliced(d) and (isinstance(base, ir.Seq) and base.kind in ("list", "tuple") or
                           _is_container(base, every_def))


def _store_key(s):
    """The string key a store into a dict writes (`fc["X"] = A`), else _UNKNOWN."""
    if isinstance(s, ir.Call) and s.op.name == "setitem":
        key = _constant_key(s.args.get("index"))
        return key if isinstance(key, str) else _UNKNOWN
    return _UNKNOWN


def _other_key(s, w, holders: list, before: list) -> bool:
    """Does `w` write in place into the item of another string key than the one `s` stored
    its arrays under, an item every store under that key made a new array for (`A = fc["X"]
    = X * 2`, `fc["z"] = np.zeros(...)`, then `fc["z"][t] = ...`: the array `A` holds is not
    the one written)? Any other store under that key, or under a key known only at run time,
    may have put `A`'s array there (`fc["z"] = fc["X"]`): then no."""
    ks = _store_key(s)
    if ks is _UNKNOWN or not isinstance(w, ir.Call):
        return False
    kw = _UNKNOWN
    if w.op.name == "write_through":
        kw = _constant_key(w.args.get("index"))
    elif w.op.name == "setitem" and isinstance(w.args.get("x"), ir.Var):
        reads = [d for d in before if isinstance(d, ir.Call) and d.op.name == "getitem"
                 and d.target == w.args["x"].name]  # (`item = fc["z"]; item[t] = ...`)
        kw = _constant_key(reads[-1].args.get("index")) if reads else _UNKNOWN
    if not isinstance(kw, str) or kw == ks:
        return False
    # (the dict's values: the one stored into, those made from it by stores and copies, and
    # those it was made from)
    edges = [(first.name, d.target) for d in before if isinstance(d, ir.Call) and
             d.op.name in _KEYED_STORES | {"copy", "write_through"} and
             isinstance(first := next(iter(d.args.values()), None), ir.Var)]
    family = {s.target}
    while more := {b for a, b in edges if a in family} | {a for a, b in edges if b in family}:
        if more <= family:
            break
        family |= more
    under = [o for o, _ in holders if o.op.name in _KEYED_STORES and _store_key(o) in
             (kw, _UNKNOWN) and getattr(next(iter(o.args.values()), None), "name", None)
             in family]
    return bool(under) and all(
        _store_key(o) == kw and _new_array(o.args.get("value"), kw, family, before)
        for o in under)


_KEYED_STORES = frozenset({"setitem", "dict_set", "dict", "dict_copy"})  # (may put under a key)
_NEW_ARRAYS = frozenset({"zeros", "zeros_like", "ones", "ones_like", "empty", "empty_like",
                         "full", "full_like", "eye", "identity"})


def _new_array(atom, key, family: set, before: list, seen=None,
               makes=lambda d: d.op.name in _NEW_ARRAYS) -> bool:
    """Is `atom` a name every definition of which (up to here) makes a new array (`makes`),
    or is the item under `key` of the dict (`family`: its values) itself, written in place
    (srcad's own put-back of the item it wrote: `item = fc["z"]; item[t] = v; fc["z"] =
    item`)?"""
    seen = set() if seen is None else seen
    if not isinstance(atom, ir.Var) or atom.name in seen:
        return isinstance(atom, ir.Var)  # (a name met again: its other definitions decide)
    seen.add(atom.name)
    defs = [d for d in before if atom.name in ir.defs(d)]
    if not defs:
        return False
    for d in defs:
        if not isinstance(d, ir.Call):
            return False
        if makes(d) or (d.op.name == "getitem" and _constant_key(
                d.args.get("index")) == key and getattr(d.args.get("a"), "name", None) in family):
            continue
        inner = d.args.get("x") if d.op.name in ("copy", "setitem") else (
            d.args.get("view") if d.op.name == "view_again" else None)
        if inner is None or not _new_array(inner, key, family, before, seen, makes):
            return False
    return True


_MADE_BY = _NEW_ARRAYS | {"matmul", "dot", "concatenate", "stack", "vstack", "hstack", "outer"}


def _made_here(atom, order: list) -> bool:
    """Is `atom` a name every definition of which in the function makes a new array -- by
    np.zeros and its kind, a product, a concatenation, an elementwise op (not in place) --
    or copies or writes one so made? (No caller, global or object can hold it at the store.)"""
    return _new_array(atom, None, set(), order, makes=lambda d: not (
        d.inplace or d.undo is not None) and (d.op.name in _MADE_BY or (
            d.op.elementwise and not d.op.view)))


def _item_written(w, derived: set, inner: set, before: list, cut=frozenset()):
    """The item `w` writes in place (its old value's atom) where it is a write into an item
    of a container `derived` from a holder -- a `write_through` into one, or into an item
    of one (`inner`), or `x[i] op= t` into such an item, or into a slot of a slice `cut`
    (`M = L[:n]; M[0] += t`: items srcad does not know), whose kind srcad did not know (a
    `setitem` of a value computed from `x[i]`, read just before), or `v op= t` of an item
    read from a slice (`cut` holds those too) -- else None."""
    if not isinstance(w, ir.Call):
        return None
    x = w.args.get("x")
    into_inner = isinstance(x, ir.Var) and x.name in inner
    if w.op.name == "write_through" and (w.target in derived or into_inner):
        return w.args.get("view")
    like = w.args.get("like") if w.op.name == "in_layout" else None
    if isinstance(like, ir.Var) and like.name in inner and like.name in cut:
        return like  # (`v = lst[:n][0]; v += 1`: an item of a slice no name holds)
    if w.op.name != "setitem" or not (into_inner or (isinstance(x, ir.Var) and
                                                      x.name in derived and x.name in cut)):
        return None  # (`M[i] op= t` of a slice: numpy writes M[i]'s array)
    value = w.args.get("value")
    reads = [d for d in before if isinstance(d, ir.Call) and d.op.name == "getitem"
             and d.args.get("a") == x and d.args.get("index") == w.args.get("index")]
    if not reads or not isinstance(value, ir.Var):
        return None
    made = {d.target: d for d in before if isinstance(d, ir.Call)}
    todo, seen = [value.name], set()
    while todo:  # (is the stored value computed from the slot's old item?)
        n = todo.pop()
        if n == reads[-1].target:
            return ir.Var(n)
        if n in seen or n not in made:
            continue
        seen.add(n)
        todo.extend(ir.atom_vars(ir.Seq(tuple(made[n].args.values()), "tuple")))
    return None


def _is_container(atom, every_def: dict, seen=None) -> bool:
    """Is `atom` a list or a dict: a display, or made by a container's op (through stores
    into it and copies; a loop name's definitions that make it, not those that carry it)?"""
    seen = set() if seen is None else seen
    if isinstance(atom, ir.Seq):
        return atom.kind == "list"
    if not isinstance(atom, ir.Var) or atom.name in seen:
        return False
    seen.add(atom.name)
    for d in every_def.get(atom.name, ()):
        if d.op.name in ("dict", "list", "list_append", "list_concat", "list_repeat",
                         "dict_set", "dict_copy"):
            return True
        if d.op.name in ("copy", "setitem", "write_through") and _is_container(
                next(iter(d.args.values()), None), every_def, seen):
            return True
    return False


def _rebinds_the_write(d, c, defs: dict) -> bool:
    """Is `d` the write `c` itself, or its result carried into the loop name (`x *= 2` in a
    loop: `x_op = x * 2; x_new = in_layout(x_op, x); x = x_new`) -- the same array written,
    not a new one?"""
    for _ in range(4):
        if d is c:
            return True
        if not isinstance(d, ir.Call) or d.op.name not in ("copy", "in_layout"):
            return False
        src = next(iter(d.args.values()), None)
        if not isinstance(src, ir.Var) or src.name not in defs:
            return False
        d = defs[src.name]
    return False


def check_container_holders(fn: ir.Function, callee: bool = False) -> None:
    """`L = [W1, W2]` (a list or dict the code makes as a value), then an item of it written
    in place through the list (`for p in L: p -= t`, a callee walking it) and `W1` read
    after: Python's name is that array and shows the write. The frontend gives the names it
    can the new array (frontend/aliasing.py `refresh_item_holders`); a read of the old value
    left (a name the frontend could not reach) is refused at the write, naming the read.
    (The other way -- `W1 *= 2`, then `L` read -- is carried into displays srcad holds item
    by item and, in straight-line code, into a list or dict whose slots srcad knows, by a
    `write_through` into the slot (aliasing.carry_to_aliases); what is left is refused
    below. tests/test_shared_holders_fuzz.py lists what is still open.)"""
    order = list(ir.walk(fn.body))
    at = {id(s): i for i, s in enumerate(order)}
    loops: dict = {}

    def nest(body, around):
        for st in body:
            loops[id(st)] = around
            if isinstance(st, ir.If):
                nest(st.body, around)
                nest(st.orelse, around)
            elif isinstance(st, (ir.For, ir.While)):
                inner = around | {id(st)}
                nest(getattr(st, "cond_body", []), inner)
                nest(st.body, inner)

    nest(fn.body, frozenset())
    views = _view_sources(fn)
    for s in order:  # (the same array after a write, or a name's value as an alias of it)
        if isinstance(s, ir.Call) and s.op.name in ("alias_again", "in_layout"):
            views.setdefault(s.target, set()).update(ir.atom_vars(ir.Seq(tuple(
                s.args.values()))))
    defs = {st.target: st for st in order if isinstance(st, ir.Call)}
    every_def: dict = {}
    for st in order:
        if isinstance(st, ir.Call):
            every_def.setdefault(st.target, []).append(st)
    # (an object's field -- `st.ps` of a SimpleNamespace -- written in place)
    for c, roots in _in_place_writes(order, views, stores=False):
        field = next((defs[v] for v in roots if v in defs and defs[v].op.name.startswith(".")
                      and getattr(defs[v].op, "kind", None) in (None, "attribute")),
                     None)  # (not a method's result)
        if field is not None:
            raise SharingUnknownError(
                f"line {c.line} writes in place into `{field.op.name[1:]}` of an object "
                f"(read at line {field.line}), or into an item of it: Python's object holds "
                f"that array and shows the write; srcad's code writes a copy and does not "
                f"put it back there", filename=fn.filename, lineno=c.line, func=fn.name,
                hint="keep the arrays in a local list or on an object of a class of your "
                "own, or store the new value back (`obj.x = obj.x * 2`)")
    holders = []
    for s in order:
        if not isinstance(s, ir.Call) or (s.op.name not in _HOLDING_OPS and not (
                s.op.name == "getitem" and _slices_a_container(s, every_def))):
            continue
        if s.op.name == "copy" and not isinstance(next(iter(s.args.values()), None), ir.Seq):
            continue
        held = list(s.args.values())
        if s.op.name == "getitem":  # (the objects of the container sliced)
            held = [s.args["a"]]
        elif s.op.name == "setitem":  # (the container written, if a display, and the value)
            held = [a for a in (held[0], s.args.get("value")) if not (
                isinstance(a, ir.Var) and a is held[0])]
        elif s.op.name in ("list_append", "dict_set"):  # (the item, not the list grown)
            held = [s.args.get("x" if s.op.name == "list_append" else "value")]
        stored = {v for a in held for v in _held_vars(a)}
        if stored:
            holders.append((s, stored))
    if not holders:
        return
    made = {st.target: at[id(st)] for st in order if isinstance(st, ir.Call)}
    cut: set = set()  # (slices of containers, what is made from them, and their items:
    for st in order:  # items srcad does not know)
        if isinstance(st, ir.Call) and st.op.name == "getitem" and \
                _slices_a_container(st, every_def):
            cut |= _made_from(st, order[at[id(st)] + 1:])
    cut |= {st.target for st in order if isinstance(st, ir.Call) and st.op.name == "getitem"
            and isinstance(st.args.get("a"), ir.Var) and st.args["a"].name in cut}
    for s, stored in holders:  # (the other way: the container's item written in place)
        derived = _made_from(s, order[at[id(s)] + 1:])
        # (a container that is an item of one made from it -- `vs = [list(w) for w in ws]`,
        # then `vs[0][0] += t`: the write goes through `item = vs[0]`)
        outer = set(derived)  # (and the containers holding one: `vs` holding `list(w)`)
        for d in order[at[id(s)] + 1:]:
            if isinstance(d, ir.Call) and d.op.name in _HOLDING_OPS and \
                    set(ir.atom_vars(ir.Seq(tuple(d.args.values()), "tuple"))) & outer:
                outer.add(d.target)
        inner = {d.target for d in order[at[id(s)] + 1:] if isinstance(d, ir.Call) and
                 d.op.name == "getitem" and isinstance(d.args.get("a"), ir.Var) and
                 d.args["a"].name in outer}
        for w in order[at[id(s)] + 1:]:
            view = _item_written(w, derived, inner, order[at[id(s)] + 1:at[id(w)]], cut)
            if view is None or _other_key(s, w, holders, order[:at[id(w)]]):
                continue
            # (the item written, where it is one of those stored: the names holding another
            # are not stale; an item read in a loop may be any of them)
            written = stored & _view_roots(view.name, views) if isinstance(
                view, ir.Var) else set()
            value = w.args.get("value")
            new = value.name if isinstance(value, ir.Var) else None
            # (an item held was itself read out of another container -- `list(w)` of `w =
            # ws[k]`: the arrays w's container holds are the ones held)
            held = set().union(*(_view_roots(v, views) for v in (written or stored)))
            given = sorted((held & set(fn.params)) - set(fn.written_arrays) - set(fn.written))
            if callee and given:
                # (a callee's: `def scale(*arrs): for a in arrs: a *= 2` -- the caller's array,
                # which Python writes and the caller reads after the call)
                raise SharingUnknownError(
                    f"line {w.line} writes in place into an item of the list, tuple or dict "
                    f"made at line {s.line}, the array `{_user(given[0])}` the caller passed "
                    f"to `{fn.name}`: Python changes the caller's array, and srcad does not "
                    f"carry the write back", filename=fn.filename, lineno=w.line,
                    func=fn.name, hint="write through the parameter itself, or return the "
                    "new arrays and rebind them in the caller")
            for r in order[at[id(w)] + 1:]:
                # (not the object written itself -- `alias_again` of it, which a name
                # holding that object was made again from before the write)
                stale = [v for v in ir.uses(r) if v not in derived and made.get(
                    v, -1) < at[id(w)] and _view_roots(v, views) & held
                    and new not in _view_roots(v, views)]
                if stale and not isinstance(r, ir.Push) and not (isinstance(r, ir.Call) and (
                        r.op.name in ("alias_again", "item_again", "write_through",
                                      "same_object"))):
                    # (not the carried holders' own rebinding, which reads the old on
                    # purpose, nor write_through's identity test of the item written)
                    raise SharingUnknownError(
                        f"line {w.line} writes in place into an item of the list or dict "
                        f"made at line {s.line}, an array `{_user(stale[0])}` also holds "
                        f"and is read at line {r.line}: Python's name shows the write, and "
                        f"srcad does not carry it there", filename=fn.filename,
                        lineno=w.line, func=fn.name,
                        hint="read the array through the container after the write, or "
                        "write through the name")
    # (the way in: the array written through a name -- or through a slot of a list or dict
    # argument, whose items srcad does not hold one by one -- the container read)
    from_args = set(fn.params)  # (and the lists and dicts stored into or written from them)
    for d in order:
        if isinstance(d, ir.Call) and d.op.name in ("setitem", "write_through") and \
                set(ir.atom_vars(next(iter(d.args.values()), None))) & from_args:
            from_args.add(d.target)
    for c, roots in _in_place_writes(order, views, arguments=from_args):
        for s, stored in holders:
            if s.op.name == "setitem":  # (a display stored into: what it held besides)
                shown = next(iter(s.args.values()))
                value = set(_held_vars(s.args.get("value")))
                stored = set(_held_vars(shown)) - value if isinstance(shown, ir.Seq) \
                    else set()
                if loops[id(c)] & loops[id(s)] and _is_container(shown, every_def):
                    # (and, in a loop, the array stored into a list or dict: `L[t] = x` and,
                    # in a later trip, `x *= 2` -- which a write carried into the slot does
                    # not reach; `u[:] = v` into an array copies v)
                    stored |= value
            # (an item held that was itself read out of an array or a container -- `p` of
            # `for p in ps: saved.append(p)`, `W[i]` -- shares what it was read from)
            held_roots = set(stored).union(*(
                _view_roots(v, views) for v in stored
                if v in defs and defs[v].op.name == "getitem")) if (
                c.inplace or c.undo is not None or c.augmented or c.op.name != "setitem"
                or not isinstance(next(iter(c.args.values()), None), ir.Var)) else stored
            if not roots & held_roots or not (at[id(c)] > at[id(s)]
                                              or loops[id(c)] & loops[id(s)]):
                continue
            if at[id(c)] < at[id(s)] and any(
                    loops[id(d)] & loops[id(c)] & loops[id(s)] and at[id(d)] <= at[id(c)]
                    and not _rebinds_the_write(d, c, defs)
                    for v in roots & stored for d in every_def.get(v, ())):
                continue  # (a name the loop makes anew before writing: another array)
            derived = _made_from(s, order[at[id(s)] + 1:])
            if roots & derived:  # (a write through the container's own item: carried)
                continue
            if any(isinstance(w, ir.Call) and w.op.name == "write_through" and
                   at[id(w)] > at[id(c)] and loops[id(w)] == loops[id(c)] and
                   isinstance(w.args.get("value"), ir.Var) and
                   c.target in _view_roots(w.args["value"].name, views) and
                   set(ir.atom_vars(w.args.get("x"))) & derived for w in order):
                continue  # (written through the name, carried into the container's slot)
            def made_anew(r, c=c, derived=derived) -> bool:
                # (a read in a later trip only, of containers the trip makes again before it
                # reads them -- `it = iter([x, v])` read by `for t in it`, then `v += d`: the
                # next trip's list holds v as it is then, as srcad's code builds it)
                return at[id(r)] < at[id(c)] and all(
                    every_def.get(v) and all(loops[id(d)] & loops[id(c)] & loops[id(r)] and
                                             at[id(d)] < at[id(r)] for d in every_def[v])
                    for v in derived & set(ir.uses(r)))

            read = next((r for r in order if derived & set(ir.uses(r)) and r is not c and (
                at[id(r)] > at[id(c)] or loops[id(r)] & loops[id(c)]) and not made_anew(r)),
                None)
            if read is None:
                continue
            raise SharingUnknownError(
                f"line {c.line} writes in place into an array that the list or dict made at "
                f"line {s.line} holds too (read at line {read.line}): Python's container "
                f"shows the write, and srcad's code, which made the container before, does "
                f"not rebuild it", filename=fn.filename, lineno=c.line, func=fn.name,
                hint="write through the container (`L[0] *= 2`), or make the container "
                "after the write, or store a copy in it")


def _picked_from(order) -> dict:
    """name -> the names of the containers it may be an item of: `t = [d1, d2][i]` (a
    list display indexed by a value known only when it runs) picks d1 or d2 itself, `t =
    ps[i]` an item of ps, so a write into t is a write into one of them."""
    out: dict = {}
    for r in order:
        part_of = _dict_of(r)
        if part_of is None and isinstance(r, ir.Call) and r.op.name == "object_attribute" \
                and isinstance(r.args.get("obj"), ir.Const) and \
                _reads_by_hook(r.args["obj"].value):
            part_of = r.args["obj"]
        if part_of is not None:
            # (`vars(L)`, `L.__dict__`: the object's own dict -- and any attribute, changed in
            # place, of an object reading by a `__getattr__` hook: a store into it is one into
            # L, which L's methods read. Other objects' lists and dicts changed in place, as
            # `self.cache.append(z)`, are attrstate.py's to follow)
            o = part_of
            found = {o.name} | out.get(o.name, set()) if isinstance(o, ir.Var) else (
                {_user_object_name(o)} if _user_object_name(o) is not None else set())
            if found:
                out[r.target] = out.get(r.target, set()) | found
            continue
        if isinstance(r, ir.Call) and is_opaque(r.op) and r.op.kind == "attribute":
            # (`layers = model.layers`: a part of the object; a store into it, or into an
            # item picked from it, is a store into `model`, which `model.forward(x)` reads)
            o = r.args.get("_obj")
            found = {o.name} | out.get(o.name, set()) if isinstance(o, ir.Var) else (
                {_object_name(o)} if _object_name(o) is not None else set())
            if found:
                out[r.target] = out.get(r.target, set()) | found
            continue
        # (`sorted(NET.layers, key=id)`: srcad's `sorted_by`, a user call, hands them out too)
        sorts = isinstance(r, ir.UserCall) and any(r.fn is h for h in _HANDS_OUT)
        given = r.args if sorts else r.args.values() if isinstance(r, ir.Call) and (
            r.op.name in ("list_concat", "list", "tuple", "copy") or (
                is_opaque(r.op) and r.op.kind in ("call", "method") and
                _hands_out_objects(r))) else ()
        held = {n[:-len(" state>")] + ">" for a in given
                for n in _objects_held(a, depth=2, attributes=False)}
        if sorts:  # (and what a list it sorts was picked from)
            held |= {v for a in given if isinstance(a, ir.Var)
                     for v in {a.name} | out.get(a.name, set())}
        for t in (r.targets if sorts else [r.target]) if held else ():
            # (`filter(None, net.layers)`, `[*net.layers]`, `sorted(...)`: what it gives
            # holds those objects; a method run on one may change any of them, which a read
            # of one later -- `net.layers[0].output` -- sees)
            out[t] = out.get(t, set()) | held
        if isinstance(r, ir.Call) and r.op.name in ("list", "tuple") and \
                isinstance(r.args.get("iterable"), ir.Var):
            # (`list(model.layers)`, loops.py's list of what an `enumerate` walks: a shallow
            # copy holds the very same objects, so an item picked from it is one of theirs)
            o = r.args["iterable"]
            out[r.target] = out.get(r.target, set()) | {o.name} | out.get(o.name, set())
            continue
        if isinstance(r, ir.Call) and r.op.name == "getitem":
            a = r.args.get("a")
            if isinstance(a, ir.Const) and _object_name(a) is not None:
                # (`layer = MODEL[0]` of a global object: a store into layer is one into
                # whatever MODEL holds, which a later `MODEL[0](x)` reads; `layers[i]` of a
                # module's list: any of its objects, each read later as `layers[0].w`)
                out[r.target] = {_object_name(a)} | {
                    n for item in (a.value if isinstance(a.value, list) else ())
                    if (n := _object_name(ir.Const(item, "item"))) is not None}
                continue
            if isinstance(a, ir.Var):
                a = ir.Seq((a,), "list")
            if isinstance(a, ir.Seq) and all(isinstance(x, ir.Var) for x in a.items):
                found = {x.name for x in a.items}
                for x in list(found):
                    found |= out.get(x, set())
                out[r.target] = found
    return out


def _object_id(atom):
    """The object an attribute is stored on or read from, where normalising knew it (`self`
    of a method called on a global layer), else None (any object)."""
    return atom.value if isinstance(atom, ir.Const) else None


def _same_holder(a, b, attr: str) -> bool:
    """May a store into `a`'s attribute `attr` be what a read through `b` sees
    (`_object_id`s)? One object, or either not known when normalising -- or a class and an
    instance of it (or of a subclass) that holds no `attr` of its own: `K.W = W` is what
    `k.W` reads, `Base.scale = s` what `sub.scale` does."""
    if a is None or b is None or a is b:
        return True
    if isinstance(b, type):
        a, b = b, a
    return isinstance(a, type) and isinstance(b, a) and attr not in (
        getattr(b, "__dict__", None) or {})


def _attribute_flows(fn: ir.Function, wrt, cache, events, in_loop) -> None:
    """The stores of argument-dependent values into attributes and the reads of attributes
    through objects, in the order one call runs them (a callee's where it is called; each
    marked with whether a loop encloses it), appended to `events`."""
    key = (id(fn), tuple(sorted(wrt)), in_loop)
    if key in cache:
        events.extend(cache[key])
        return
    cache[key] = []  # (recursion is refused elsewhere; a cycle here adds nothing)
    dep = _dependent(fn, wrt)
    mine = []

    def visit(body, loop):
        for s in body:
            if isinstance(s, ir.Effect) and s.kind == "setattr" and \
                    set(ir.atom_vars(s.args["value"])) & dep:
                mine.append(("store", s.args["attr"].value, fn, s.line, loop,
                             _object_id(s.args["_obj"])))
            elif isinstance(s, ir.Call) and is_opaque(s.op) and s.op.kind == "attribute":
                mine.append(("read", s.op.name[1:], fn, s.line, loop,
                             _object_id(s.args.get("_obj"))))
            elif isinstance(s, ir.Call) and is_opaque(s.op) and s.op.kind == "call" and \
                    isinstance(s.args.get("_fn"), ir.Const) and s.args["_fn"].value is getattr \
                    and isinstance(s.args.get("_a1"), ir.Const):
                # (`self.h` read before this function stores it, attrstate.py's start value:
                # what was stored there before -- by an earlier step of an RNN cell, say)
                mine.append(("read", s.args["_a1"].value, fn, s.line, loop,
                             _object_id(s.args.get("_a0"))))
            elif isinstance(s, ir.UserCall):
                inner = [p for p, a in zip(s.callee.params, s.args)
                         if set(ir.atom_vars(a)) & dep]
                _attribute_flows(s.callee, inner, cache, mine, loop)
            if isinstance(s, ir.If):
                visit(s.body, loop)
                visit(s.orelse, loop)
            elif isinstance(s, ir.For):
                visit(s.body, True)
            elif isinstance(s, ir.While):
                visit(s.cond_body, True)
                visit(s.body, True)

    visit(fn.body, in_loop)
    cache[key] = mine
    events.extend(mine)


def _refuse_stored_then_written(fn: ir.Function, s, views: dict) -> None:
    """`self.cache.append(z)` then `z += 1` (or `z[0] = v`, or a write through a view of z):
    Python's list holds z itself and shows the write; srcad's code writes a copy (copy on
    write), so the list would keep the value before -- refused at the store."""
    stored = set()
    for p, a in s.args.items():
        if p != "_obj" and isinstance(a, ir.Var):
            stored |= _view_roots(a.name, views)
    if not stored:
        return
    for c, roots in _in_place_writes(ir.walk(fn.body), views):
        if roots & stored:
            raise NoRuleError(
                f"`{_site_label(s)}` stores an array the function then writes into in place "
                f"(line {c.line}): Python's object would hold the written array, srcad's "
                f"code writes a copy (copy on write), so the stored one would keep the old "
                f"values", filename=fn.filename, lineno=s.line, func=fn.name,
                hint="store a copy (`.append(z.copy())`), or write into a new array after "
                "storing (`z = z + 1`)")


def _kept_store(s):
    """The module's (or closure's) list or dict `s` stores into (`history.append(h)`), else
    None (frontend/kept_globals.py)."""
    f = s.args.get("_fn") if s.op.kind == "call" else None
    return kept_store_method(f.value) if isinstance(f, ir.Const) else None


def _kept_store_key(s, container) -> frozenset | None:
    """The constant key a store into a module's dict writes (`CACHE.__setitem__("h", h)`,
    `.setdefault("h", ...)`), else None."""
    key = s.args.get("_a0")
    if type(container) is dict and s.args["_fn"].value.__name__ in (
            "__setitem__", "setdefault") and isinstance(key, ir.Const):
        return frozenset({key.value})
    return None


def kept_stored(fn: ir.Function) -> list:
    """The lists and dicts of modules and closures that `fn` or a function it calls stores
    into (`history.append(h)`; tape mode makes what the run left there plain)."""
    out = {}
    for s in ir.walk_program(fn):
        if isinstance(s, (ir.Call, ir.Effect)) and is_opaque(s.op):
            c = _kept_store(s)
            if c is not None:
                out[id(c)] = c
    return list(out.values())


def _read_first(root: ir.Function, f: ir.Function, read, stored: dict) -> bool:
    """Is `read` (in `f`) made before any store into its container, in every call: in the
    function being differentiated (which runs once a call), every store of a differentiated
    value there too, the read's statement before (or the storing statement itself: its value
    is computed first) each store's, and in no loop (a checkpointed loop -- or one the
    memory budget's policy checkpoints -- runs again in the backward, after the stores: it
    would read what they stored)?"""
    c = read.container
    if f is not root or stored[id(c)][0] is not root or any(
            g is not root and any(u.kind == "store" and u.container is c for u in g.kept_uses)
            for g in ir.program_functions(root)):
        return False
    return not read.loops and all(read.at <= u.at for u in root.kept_uses
                                  if u.kind == "store" and u.container is c)


def check_kept_globals(fn: ir.Function, wrt) -> None:
    """Refuse a read of a module's (or a closure's) list or dict in a call that stores a
    value depending on the differentiated arguments into it: srcad stores the value, not its
    gradient, so the value read back would carry none (a zero gradient, before). Over the
    whole call tree: a callee may store and its caller read, or the other way round. A read
    made before every store, in the differentiated function itself, reads what an earlier
    call left: a constant of this call (`_read_first`)."""
    stored: dict = {}  # id(container) -> (function, line) of a store of a dependent value
    keys: dict = {}  # id(container) -> the constant keys those stores write (None: any)
    seen = set()

    def stores(f, params):
        key = (id(f), tuple(sorted(params)))
        if key in seen:
            return
        seen.add(key)
        dep = _dependent(f, params)
        for s in ir.walk(f.body):
            if isinstance(s, (ir.Call, ir.Effect)) and is_opaque(s.op):
                c = _kept_store(s)
                if c is not None and any(set(ir.atom_vars(a)) & dep
                                         for p, a in s.args.items() if p != "_fn"):
                    stored.setdefault(id(c), (f, s.line))
                    key = _kept_store_key(s, c)
                    keys[id(c)] = None if key is None or (
                        id(c) in keys and keys[id(c)] is None) else \
                        keys.get(id(c), frozenset()) | key
            elif isinstance(s, ir.UserCall):
                inner = [p for p, a in zip(s.callee.params, s.args) if set(ir.atom_vars(a)) & dep]
                stores(s.callee, inner)

    stores(fn, list(wrt))
    if not stored:
        return
    for f in ir.program_functions(fn):
        for u in f.kept_uses:
            c = u.container
            if u.kind != "read" or id(c) not in stored or _read_first(fn, f, u, stored):
                continue
            if u.keys is not None and keys[id(c)] is not None and not u.keys & keys[id(c)]:
                continue  # (`BN.get("calls")` beside `BN["running_mean"] = m`: another key)
            where, at = stored[id(c)]
            place = f"line {at}" if where is f else f"line {at} of {where.name}"
            looped = u.loops and f is fn
            why = (" in a loop", " (a loop may run again after the store: checkpointing "
                   "recomputes it in the backward)") if looped else ("", "")
            raise NoRuleError(
                f"`{u.name}` (a {type(c).__name__} kept across calls) is read{why[0]} in a "
                f"call that stores a value depending on the differentiated arguments into it "
                f"({place}){why[1]}: srcad stores the value, not its gradient, so what is "
                f"read back would carry none", filename=f.filename, lineno=u.line,
                func=f.name,
                hint=f"pass the values to the functions that read them -- a dict made in the "
                f"function (`params = {{**{u.name}, \"W1\": W1}}; forward(x, params)`), or "
                f"differentiate with respect to the dict itself (`srcad.grad(loss)({u.name}, "
                f"x)` gives a dict of gradients) -- and store into `{u.name}` after"
                if isinstance(c, dict) and f is not fn else
                f"read the value from the name you stored, or keep the values in a list "
                f"or dict made in the function (`hs = []; hs.append(h)`) and store them into "
                f"`{u.name}` when you are done with them (`{u.name}.extend(hs)`)")


def check_folded_items(fn: ir.Function) -> None:
    """Refuse a call through an item of a module's dict or list of functions
    (`ACTS["relu"](z)`, a factory's `return ACTS[name]`), or a read of a string a module's
    dict holds (`bn_param["mode"]`), in a call that also stores into that item (a store of
    unknown keys counts): srcad reads the item when it specialises (guarded between calls),
    so after a store in the same call the code would still call the old function or take
    the old branch -- a wrong value, silently."""
    functions = list(ir.program_functions(fn))
    stores = [(g, u.container, u.keys, u.line) for g in functions for u in g.kept_uses
              if u.kind == "store"]
    stores += [(g, *found) for g in functions for found in _held_stores(g)]
    for g in functions:
        for container, key, line, spelled in g.folded:
            # a store of other keys (`bn_param["running_mean"] = ...` beside a read of
            # `bn_param["mode"]`) leaves the item read as it was
            hit = next(((w, at) for w, c, keys, at in stores if c is container and
                        (keys is None or key in keys)), None)
            if hit is None:
                continue
            where, at = hit
            place = f"line {at}" if where is g else f"line {at} of {where.name}"
            item = container[key] if key in container else None
            what = ("is called here", "the function an item holds", "call the one")
            if not callable(item):
                what = ("is read here", "the value an item holds", "read the one")
            raise UnsupportedSyntaxError(
                f"`{spelled}` {what[0]}, and this call also stores into that "
                f"{type(container).__name__} ({place}): srcad picks {what[1]} when it "
                f"specialises, so it would {what[2]} held before the store",
                filename=g.filename,
                lineno=line, func=g.name,
                hint="bind the function to a name where you store it (`act = np.sin; "
                "ACTS['a'] = act`) and call the name, or store before calling the function "
                "you differentiate" if callable(item) else "use the value you store by a "
                "name of the function (`mode = 'test'; PARAMS['mode'] = mode`), or store "
                "before calling the function you differentiate")


def _held_stores(fn: ir.Function):
    """(container, keys, line) for each store `fn` makes into a list or dict a module global
    or an object holds by another name (`d = CFG; d["mode"] = m`, `for p in PS: p[k] = v`:
    the "held" setitem effects of frontend/aliasing.py), each container srcad can tell it
    may be (an item picked when the code runs: any item of what it is picked from); keys
    None where not a constant."""
    every = _every_definition(fn)

    def candidates(atom, depth=6):
        if isinstance(atom, ir.Const):
            return [atom.value]
        if not isinstance(atom, ir.Var) or depth == 0 or len(every.get(atom.name, ())) != 1:
            return []
        d = every[atom.name][0]
        if d.op.name == "getitem":
            index = d.args.get("index")
            parts = index.parts if isinstance(index, ir.Index) and not index.is_tuple else ()
            k = parts[0].value if len(parts) == 1 and isinstance(parts[0], ir.Const) else None
            out = []
            for c in candidates(d.args.get("a"), depth - 1):
                if k is not None and isinstance(c, (dict, list)):
                    try:
                        out.append(c[k])
                    except (KeyError, IndexError, TypeError):
                        pass
                elif isinstance(c, (dict, list)):
                    out.extend(c.values() if isinstance(c, dict) else c)
            return out
        obj = d.args.get("_obj")
        if getattr(d.op, "kind", None) == "attribute" and isinstance(obj, ir.Const):
            return [getattr(obj.value, d.op.name[1:], None)]
        return []

    for e in ir.walk(fn.body):
        if not (isinstance(e, ir.Effect) and e.kind == "setitem" and "held" in e.args):
            continue
        index = e.args.get("index")
        parts = index.parts if isinstance(index, ir.Index) and not index.is_tuple else ()
        keys = frozenset({parts[0].value}) if len(parts) == 1 and isinstance(
            parts[0], ir.Const) else None
        for c in candidates(e.args["_obj"]):
            if isinstance(c, (dict, list)):
                yield c, keys if isinstance(c, dict) else None, e.line


def _spliced(fn: ir.Function) -> list:
    """The callees normalised for `fn` (called, spliced in by frontend/inline.py, or dropped
    as having no effect), theirs too, each once."""
    out, todo = {}, list(getattr(fn, "inlined", ()))
    while todo:
        f = todo.pop()
        if id(f) not in out:
            out[id(f)] = f
            todo.extend(getattr(f, "inlined", ()))
    return list(out.values())


def check_opaque(fn: ir.Function, wrt, _seen=None, _callee=False, tape=False,
                 _reads=None) -> None:
    """Refuse an op with no rule where it would drop a gradient (`_check_opaque`); then, at
    the top, the first of the refusals it left pending (`changed_held_containers`)."""
    if _seen is None and not tape:
        _reads = {"reads": None, "pending": []}
    _check_opaque(fn, wrt, _seen, _callee, tape, _reads)
    if _seen is None and not tape and _reads["pending"]:
        raise _reads["pending"][0]


def _check_opaque(fn: ir.Function, wrt, _seen=None, _callee=False, tape=False,
                  _reads=None) -> None:
    """Refuse an op with no rule where it would drop a gradient (see the module docstring);
    the user functions `fn` calls are checked with the arguments that reach them. (`tape`:
    for tape mode, whose Tensors are Python's objects -- one array held by two containers
    is one Tensor there -- so the holders source mode's values cannot follow are not
    refused.)"""
    if _seen is None:
        check_attribute_state(fn, wrt)
        check_argument_writes(fn)
        if not tape:
            check_container_holders(fn)
            for callee in _spliced(fn):  # (a callee's holders, as it wrote them: its
                check_container_holders(callee, callee=True)  # parameter a list or dict)
        check_kept_globals(fn, wrt)
        check_folded_items(fn)
        if not tape:  # (tape mode's containers and objects are Python's own)
            for f in ir.program_functions(fn):  # (found while normalising: calls.py)
                if getattr(f, "source_refusals", None):
                    raise f.source_refusals[0]
            _reads["reads"] = _container_reads(fn)
            check_handed_out_stores(fn, wrt)
            check_stored_then_written(fn)
            check_writes_into_held_values(fn, wrt)
            _reads["pending"] += changed_held_containers(fn, wrt, _reads["reads"])
        # (objects a differentiated value is stored into anywhere in the program -- a
        # callee's `layer.set(w)` -- are read as depending on it in every function)
        # (tape mode's objects are Python's: a method run as written on one records its
        # operations, so the state a store made depend is not refused there: `state`)
        tainted = _tainted_objects(fn, wrt, state=not tape)
        if tainted:
            wrt = list(wrt) + sorted(tainted)
    seen = set() if _seen is None else _seen
    key = (id(fn), tuple(sorted(wrt)))
    if key in seen:
        return
    if _callee and not tape and id(fn) not in seen:  # (a subroutine's own holders, once)
        seen.add(id(fn))
        check_container_holders(fn, callee=True)
        check_handed_out_stores(fn, wrt)
        check_stored_then_written(fn)
        check_writes_into_held_values(fn, wrt)
        if _reads is not None:
            _reads["pending"] += changed_held_containers(fn, wrt, _reads["reads"])
    seen.add(key)
    sites = [s for s in ir.walk(fn.body) if (isinstance(s, (ir.Call, ir.Effect)) and
                                             is_opaque(s.op))]
    ruleless = [(s, r) for s in ir.walk(fn.body)
                if isinstance(s, ir.Call) and (r := _ruleless(s)) is not None]
    calls = [s for s in ir.walk(fn.body) if isinstance(s, ir.UserCall)]
    if not sites and not calls and not ruleless:
        return
    dep = _dependent(fn, wrt, state=not tape)
    useful = plain = None
    views = None
    for s, (params, label, hint) in ruleless:
        given = [p for p in params if p in s.args and set(ir.atom_vars(s.args[p])) & dep]
        if not given:
            continue
        if useful is None:
            useful = _useful(fn)
        if s.target in useful[0]:
            raise NoRuleError(
                f"{label(given[0])} has no derivative rule in srcad, and it is given a value "
                f"that depends on the arguments being differentiated: its result, which the "
                f"output depends on, would carry no gradient (or a wrong one)",
                filename=fn.filename, lineno=s.line, func=fn.name, hint=hint)
    for s in sites:  # `with cm:` (frontend/pyforms.py), before what is made in the block
        if getattr(s.op, "context_entry", False) and any(
                set(ir.atom_vars(a)) & dep for a in s.args.values()):
            raise UnsupportedSyntaxError(
                "the context manager of this `with` block is made from values that depend on "
                "the arguments being differentiated: srcad enters it as Python does, but no "
                "gradient flows through it", filename=fn.filename, lineno=s.line, func=fn.name,
                hint="make the context manager from values that do not depend on them, and "
                "compute with the differentiated values inside the block")
    for s in sites:  # (an object a constant holds, a differentiated value stored in it
        # through a name picked from it, counts too: `layers[0].w` after `layer.set(p)`)
        given = {p for p, a in s.args.items() if set(ir.atom_vars(a)) & dep}
        if not given and (_object_read(s) in dep or _dict_read(s) in dep):
            given = {"_obj"}
        if not given:
            continue
        if getattr(s.op, "after_call", None) is not None:
            # (`L.cache` read again after a callee changed it in place: frontend/calls.py)
            if useful is None:
                useful = _useful(fn)
            if not tape and isinstance(s, ir.Call) and s.target in useful[0]:
                obj = s.args["_obj"]
                spelled = f"{getattr(obj, 'src', '?')}{s.op.name}"
                raise SharingUnknownError(
                    f"`{spelled}` is read again after `{s.op.after_call}` changed it in place "
                    f"(line {s.line}); it held values that depend on the arguments being "
                    f"differentiated, and what srcad reads from the object's own list or dict "
                    f"carries no gradient", filename=fn.filename, lineno=s.line,
                    func=fn.name, hint=f"return what the output needs from "
                    f"`{s.op.after_call}`, or change `{spelled}` where it is filled; "
                    f"mode=\"tape\" follows Python's objects")
            continue
        into = _array_written(s)
        if into is not None and given - {into, "_fn"}:
            raise NoRuleError(
                f"{_site_label(s)} writes a value that depends on the arguments being "
                f"differentiated into an array the function holds by no name of its own (an "
                f"object's, the module's): srcad would not follow the write to where the "
                f"array is read, and the gradient would be lost",
                filename=fn.filename, lineno=s.line, func=fn.name,
                hint="write into a local copy and store it back whole (`w = L.W.copy(); "
                "np.copyto(w, v); L.W = w`), or assign the new array (`L.W = v`)")
        if s.op.kind == "operator":
            if s.op.label in ("is", "is not") and len(given) == 2:
                raise NoRuleError(
                    f"`a {s.op.label} b` compares the identity of two values that depend on "
                    f"the arguments being differentiated: srcad's code may hold either as a "
                    f"new array (a write gives a copy), so Python's answer is not kept",
                    filename=fn.filename, lineno=s.line, func=fn.name,
                    hint="compare what you mean: shapes, values (np.array_equal), or one of "
                    "them with None")
            continue  # (its bool carries no gradient, as `x > 0` carries none)
        if _integer_result(s):
            continue  # (an index, a count, a test: numpy's own, pure; no gradient to carry)
        if useful is None:
            useful = _useful(fn)
        names, consts = useful
        if isinstance(s, ir.Call) and s.target in names:
            if plain is None:  # (the dependence without the objects' state stored into)
                plain = _dependent(fn, wrt, state=False)
            if not any(set(ir.atom_vars(s.args[p])) & plain for p in given) and \
                    _object_read(s) not in plain and _dict_read(s) not in plain:
                _refuse(fn, s, "it runs as written on an object that a value depending on "
                        "the arguments being differentiated was stored into (`layer.W = "
                        "W`), or on what was picked from it: what it reads there, which the "
                        "output depends on, would carry no gradient", _STATE_HINT)
            _refuse(fn, s, "it is given a value that depends on the arguments being "
                    "differentiated: its result, which the output depends on, would carry "
                    "no gradient", _hint(s, fn))
        if s.op.pure or getattr(s.op, "checks_only", False):
            continue
        shared = _from_params(fn) if _callee else set()
        method = s.op.kind == "method"
        bound = _bound_container(s)
        if bound is not None and bound.split(".")[0] in consts:
            # (`net.params.update(params)`: a dict or list of an object the output reads,
            # changed by its own method with a differentiated value -- the object's methods
            # read it back with no gradient)
            _refuse(fn, s, f"it is given a value that depends on the arguments being "
                    f"differentiated; it changes `{_user(bound)}`, which the output depends "
                    f"on, and the gradient would not follow",
                    f"store each item (`{_user(bound)}[k] = v`), which srcad follows into the "
                    f"methods that read it")
        if method and s.op.name[1:] in ("shuffle", "permutation"):  # (`rng.shuffle(y)`: y)
            holders = list(s.args)
        elif method and s.op.name[1:] in MUTATING:
            # `v.sort()` changes v, `lst.append(a)` the list, not a (Python stores the object:
            # `self.X.append(X)`, a layer keeping its input, stores the array the call got)
            holders = ["_obj"]
            if views is None:
                views = _view_sources(fn)
            _refuse_stored_then_written(fn, s, views)
        elif method:  # it may store its arguments in its object, or change the object itself
            holders = ["_obj"] if given - {"_obj"} else []
        elif _kept_store(s) is not None:
            # `history.append(h)`, `CACHE.__setitem__("h", h)` of a module's (or a closure's)
            # container: Python stores h itself, as the code does; a read of the container
            # after it is refused (check_kept_globals)
            holders = []
            if views is None:
                views = _view_sources(fn)
            _refuse_stored_then_written(fn, s, views)
        else:  # a function srcad knows nothing about may change any of its arguments
            holders = [p for p in s.args if p != "_fn"]
        if views is None:
            views = _view_sources(fn)
        if s.op.name.startswith(".") and s.op.name[1:] in MUTATING and \
                given - {"_obj", "_fn"} and not tape:  # (tape mode's are Python's own)
            _refuse_handed_out(fn, s, views, names, consts)
        for p in holders:
            a = s.args[p]
            # (a view of an array the output reads is that array: a change through it shows)
            held = (isinstance(a, ir.Var) and any(
                v in names or v in shared for v in _view_roots(a.name, views))) or (
                isinstance(a, ir.Const) and a.src in consts)
            if held:
                what = a.name if isinstance(a, ir.Var) else a.src
                why = _object_why(fn, s) if method else None
                hint = _not_followed(why) if why is not None else _ROUTES_HINT if \
                    _user_object_name(a) is not None else (
                    "build the value with operations srcad differentiates (a list made "
                    "in the function follows lst.append(v)), or pass it on directly")
                if s.op.name.endswith("shuffle"):
                    hint = ("shuffle by an index: `order = rng.permutation(len(v))` (the same "
                            "draws as rng.shuffle), then `v = v[order]`, which srcad "
                            "differentiates")
                _refuse(fn, s, f"it is given a value that depends on the arguments being "
                        f"differentiated; it may store it in or change `{_user(what)}`, "
                        f"which the output depends on, and the gradient would not follow",
                        hint)
    objects = sorted(n for n in dep if n.startswith("<object "))
    for s in calls:
        # (an object answering reads by a `__getattr__` hook, changed with a differentiated
        # value: every read of it in the callee may give that value back)
        inner = [p for p, a in zip(s.callee.params, s.args) if _carries(a, dep)
                 or (_user_object_name(a) in dep and _reads_by_hook(a.value))]
        if inner or objects:
            _check_opaque(s.callee, inner + objects, seen, True, tape, _reads)


# values a subscript or a Python operator treats as numpy and Python do, with rules: an
# index into them (an array, a container) is piecewise constant -- its derivative is zero
_PLAIN = (bool, int, float, complex, str, bytes, type(None), np.ndarray, np.generic, list,
          tuple, dict, range, slice, type, np.dtype, type(Ellipsis))


def plain_value(value) -> bool:
    """Does a subscript or a Python operator on `value` mean what srcad's rows say (an
    array, a number, a container; srcad's own gradient containers, GradTree)?"""
    return isinstance(value, _PLAIN) or (type(value).__module__ or "").startswith("srcad.")


def _spelled(obj, src: str) -> str:
    """How the user wrote a global object: its numpy name if it is one of numpy's."""
    for name in ("r_", "c_", "s_", "index_exp", "mgrid", "ogrid"):
        if getattr(np, name, None) is obj:
            return f"np.{name}"
    return src


def _subscript_hint(obj, spelled: str) -> str:
    if is_concatenator(obj):
        return (f"{spelled}[a, b, ...] and {spelled}['1', a, b] (an integer axis) are "
                f"differentiated; for other directives write np.concatenate((np.atleast_2d(a), "
                f"np.atleast_2d(b)), axis=0) (or the join you mean), which srcad differentiates")
    if obj is np.s_ or obj is np.index_exp:
        return (f"{spelled}[...] only builds an index: use the value itself (it returns it), "
                f"or index with integers and slices that do not depend on the differentiated "
                f"arguments")
    return (f"srcad cannot see what `{spelled}`'s __getitem__ does with a differentiated "
            f"value: write it as a function of yours (def lookup(key): ...), which srcad "
            f"traces, or register a rule for a function with srcad.defvjp")


def _ruleless(s) -> tuple | None:
    """(parameters, label(param), hint) of a row's call whose result depends on those
    parameters with no derivative rule for them -- where a differentiated value given there
    is refused (see the module docstring) -- else None."""
    op = s.op
    if op.no_rule_for:
        spelled = op.spelling_src.split("(")[0] if op.spelling_src else op.name
        return (op.no_rule_for, lambda p: f"`{spelled}` (its argument `{p}`)",
                f"`{spelled}` has no gradient for its argument here: compute the values with "
                f"differentiable ops instead (e.g. start + step * np.arange(n))")
    if op.name == "getitem":
        base = s.args.get("a")
        if isinstance(base, ir.Const) and not plain_value(base.value):
            spelled = _spelled(base.value, base.src)
            return (("index",), lambda p: f"the subscript `{spelled}[...]` (of a "
                    f"{type(base.value).__name__}, not an array)",
                    _subscript_hint(base.value, spelled))
        return None
    if op.name in PY_BINARY:
        odd = [a for a in s.args.values() if isinstance(a, ir.Const)
               and not plain_value(a.value)]
        if odd:
            obj = odd[0].value
            spelled = _spelled(obj, odd[0].src)
            others = tuple(p for p, a in s.args.items() if a is not odd[0])
            return (others, lambda p: f"the Python operator of `{op.name}` on `{spelled}` "
                    f"(a {type(obj).__name__})",
                    f"srcad differentiates operators on arrays and numbers: convert "
                    f"`{spelled}` to one first (np.asarray(...) or float(...)) outside the "
                    f"differentiated function, or write the operation with numpy functions")
    return None


def check_held_objects(functions: dict, objects: dict, main: ir.Function, wrt) -> None:
    """The probe's half of the rule, where only the values say it: a subscript or a Python
    operator whose object is a local holding neither an array, a number nor a container (a
    user's or a library's object, `t = Table(); t[x]`), given a differentiated value, is
    refused where the output needs its result. `objects`: {id(function): names that held
    such an object}, recorded by the probe (srcad/probe.py)."""
    for fid, fn in functions.items():
        held = objects.get(fid)
        if not held:
            continue
        dep = useful = None
        for s in ir.walk(fn.body):
            if not (isinstance(s, ir.Call) and (s.op.name == "getitem" or s.op.name in
                                                 PY_BINARY)):
                continue
            if s.op.name == "getitem":
                base = s.args.get("a")
                odd = base if isinstance(base, ir.Var) and base.name in held else None
                params = ("index",)
            else:
                odd = next((a for a in s.args.values()
                            if isinstance(a, ir.Var) and a.name in held), None)
                params = tuple(p for p, a in s.args.items() if a is not odd)
            if odd is None:
                continue
            if dep is None:
                # (a called function's parameters all count as differentiated: conservative)
                dep = _dependent(fn, wrt if fn is main else fn.params)
                useful = _useful(fn)[0]
            given = [p for p in params if set(ir.atom_vars(s.args[p])) & dep]
            if given and s.target in useful:
                what = _user(odd.name)
                kind = "the subscript" if s.op.name == "getitem" else \
                    f"the Python operator of `{s.op.name}` on"
                raise NoRuleError(
                    f"{kind} `{what}` (an object, not an array or a number) has no derivative "
                    f"rule in srcad, and it is given a value that depends on the arguments "
                    f"being differentiated: its result, which the output depends on, would "
                    f"carry no gradient (or a wrong one)",
                    filename=fn.filename, lineno=s.line, func=fn.name,
                    hint=f"srcad cannot see what `{what}` does with a differentiated value: "
                    f"write it as a function of yours (def lookup(key): ...), which srcad "
                    f"traces, or register a rule for a function with srcad.defvjp")


def _user(name: str) -> str:
    """The user's spelling of an IR name (`h_L12` -> `h`)."""
    base, _, tail = name.rpartition("_L")
    return base if base and tail.isdigit() else name


check_opaque_methods = check_opaque  # (its first name, when only methods were opaque)
