"""The probe: the first call of a transformed function runs its IR once, on the actual
arguments, to learn what the transforms specialise on.

Input: a normalised `ir.Function` and the argument values. Output: `Infos` -- the static
`Info` (shape, dtype, memory order) of every value of the function and of each user function
it calls, and which names held lists or tuples -- and the output value. A name whose shape
changes between assignments (in a loop, across calls), or that a statement which did not run
assigns (another branch), gets no Info: code is specialised only where every path agrees.
It also refuses, with the user's line, Python operators on sequences that gradients would
flow through (`refuse_sequence_arithmetic`).

    probe(ir_of(loss), {"W": W, "x": x})  ->  ({id(loss): {"W": Info((3, 2), float64), ...}},
                                                 np.float64(0.73))
"""

from __future__ import annotations

import functools
import random
import types

import numpy as np

from . import interpret, ir
from .analysis.activity import varied_vars
from .analysis.refusals import check_held_objects, plain_value
from .errors import SrcadError, UnsupportedSyntaxError, user_error
from .frontend.opaque import is_opaque, is_user_object
from .interpret import PY_OPERATORS, evaluate
from .ops import control
from .ops import table as table_of_ops
from .transform.specialise import Info, Infos


def probe(fn_ir: ir.Function, args: dict, wrt=None) -> tuple[dict, object]:
    """Run the IR once on the actual arguments: the static Info of every value.

    Returns ({id(function): {name: Info}}, output) for the function and every user function
    it calls. A name that takes values of different shapes or dtypes (in a loop, or across
    calls) gets no Info, so nothing is specialised on it.
    """
    infos: dict = {id(fn_ir): {k: Info.of(v) for k, v in args.items()}}
    containers: dict = {id(fn_ir): {k for k, v in args.items() if isinstance(v, (list, tuple))}}
    varying: set = set()
    executed: set = set()
    functions: dict = {id(fn_ir): fn_ir}

    objects: dict = {id(fn_ir): {k for k, v in args.items() if not plain_value(v)}}
    # {id(function): names that held anything but integers (or sequences of them)}; a name
    # recorded and not in it held only integers: a shape, a stride, a count
    held: dict = {id(fn_ir): set(args)}
    not_integral: dict = {id(fn_ir): {k for k, v in args.items() if not _integral(v)}}

    complexes: dict = {}  # {id(function): names that held a complex value}
    # {id(function): {name: the kinds of value it held}} -- a 0-d numpy array ("0d"), a
    # number ("number"), an array of one dimension or more ("array"), anything else: a 0-d
    # array is written in place where a number is rebound, and Info tells the two apart by
    # neither; and {id(statement): the kinds it made} (`sites`, checked below for the
    # statements whose value is the same on every path)
    kinds: dict = {id(fn_ir): {k: {_kind(v)} for k, v in args.items()}}
    sites: dict = {}

    def record(fn, name, value, site):
        functions[id(fn)] = fn
        executed.add(site)
        if isinstance(value, (complex, np.complexfloating)) or (
                isinstance(value, np.ndarray) and value.dtype.kind == "c"):
            complexes.setdefault(id(fn), set()).add(name)
        held.setdefault(id(fn), set()).add(name)
        kinds.setdefault(id(fn), {}).setdefault(name, set()).add(_kind(value))
        if site is not None:
            sites.setdefault(site, set()).add(_kind(value))
        if not _integral(value):
            not_integral.setdefault(id(fn), set()).add(name)
        if isinstance(value, (list, tuple)):
            containers.setdefault(id(fn), set()).add(name)
        elif not plain_value(value):
            objects.setdefault(id(fn), set()).add(name)
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

    # the probe must not move a global random generator the real call then draws from
    rng_states = np.random.get_state(), random.getstate()
    interpret._PROBED_ATTRS.append({})  # (attributes it sets, seen by its later reads)
    interpret._PROBE_MADE.append({})  # (objects it makes: their methods run on them)
    interpret._PROBE_COPIES.append({})  # (module containers it stores into: its own copies)
    interpret.PROBE_ARG_CHECKS.append(_not_followed_object)
    interpret.PROBE_UNDO.append([])
    interpret.PROBE_SNAPSHOTS.append({})
    try:
        env = evaluate(fn_ir, {k: interpret.probe_argument(v) for k, v in args.items()},
                       record, probe=True)
    except SrcadError as e:
        line, where = getattr(e, "_srcad_line", None), getattr(e, "_srcad_fn", None) or fn_ir
        if e.filename is None and line is not None:  # (an op's check: at the user's line)
            raise type(e)(e.message, filename=where.filename, lineno=line, func=where.name,
                          hint=e.hint) from None
        raise
    except Exception as e:
        if getattr(e, "_srcad_user", False):  # the user's own assert / raise
            raise
        line = getattr(e, "_srcad_line", None)
        at = getattr(e, "_srcad_fn", None) or fn_ir  # (the function whose line it is)
        raise user_error(
            e, f"{type(e).__name__} in {getattr(e, '_srcad_within', None) or at.name}: {e}",
            filename=at.filename, lineno=line, func=at.name,
            hint="the error comes from the user's code on these inputs",
        ) from e
    finally:
        interpret._PROBED_ATTRS.pop()
        interpret._PROBE_MADE.pop()
        interpret._PROBE_COPIES.pop()
        interpret.PROBE_ARG_CHECKS.pop()
        interpret.PROBE_SNAPSHOTS.pop()
        for obj, index, old, had in reversed(interpret.PROBE_UNDO.pop()):
            if index is interpret.WHOLE:
                obj.clear()
                obj.update(old)
            elif had:
                obj[index] = old
            elif isinstance(obj, dict):  # (a later change in the probe may have removed it)
                obj.pop(index, None)
            else:
                del obj[index]
        np.random.set_state(rng_states[0])
        random.setstate(rng_states[1])
    out = env["<return>"]
    integral = {fid: names - not_integral.get(fid, set()) for fid, names in held.items()}
    dynamic = _dynamic_shapes(fn_ir, integral, infos)
    vouched: dict = {}  # {id(function): {id(statement): the one kind it made}}
    for fid, fn in functions.items():
        table = infos.setdefault(fid, {})
        unknown, unsure = _path_dependent(fn, executed, table)
        for name in unknown | _touched_by_effects(fn) | dynamic.get(fid, set()):
            table[name] = None
        vouched[fid] = {id(s): next(iter(sites[id(s)])) for s in ir.walk(fn.body)
                        if len(sites.get(id(s), ())) == 1 and id(s) not in unsure}
    clean = Infos({k: {n: i for n, i in t.items() if i is not None} for k, t in infos.items()},
                  containers, {id(fn_ir): {k: i for k, v in args.items()
                                           if (i := Info.of(v)) is not None}})

    def every_time(kind):
        return {fid: {n for n, ks in held_kinds.items() if ks == {kind}
                      and n in clean.get(fid, {})} for fid, held_kinds in kinds.items()}
    clean.arrays0d, clean.numbers = every_time("0d"), every_time("number")
    clean.sites = vouched
    if wrt is not None:
        refuse_sequence_arithmetic(functions, containers, infos, fn_ir, wrt, integral)
        refuse_complex(functions, complexes, fn_ir, wrt)
        check_held_objects(functions, objects, fn_ir, wrt)
    return clean, out


# integers a shape query gives: as fixed as the array's shape
_SHAPE_QUERIES = frozenset({"shape", "size", "ndim", "len"})
# ops whose result's shape depends on their input's values, not its shape
_DATA_SHAPED = frozenset({"nonzero", "argwhere", "flatnonzero", "unique", "compress", "extract",
                          "trim_zeros", "where_indices", "mask_index", "unique_values",
                          "unique_counts", "unique_inverse", "unique_all"})


_DATA_SHAPED_FNS = (np.nonzero, np.argwhere, np.flatnonzero, np.where, np.unique)


# ops whose result's length is read off an argument's values where that argument is not a
# literal: np.repeat's counts, np.delete's and np.split's positions, bincount's and the set
# operations' whole input
_VALUE_SHAPED = {"repeat": "repeats", "delete": "obj", "split": "indices_or_sections",
                 "array_split": "indices_or_sections", "insert": "obj",
                 "bincount": "x", "setdiff1d": "ar1", "union1d": "ar1", "intersect1d": "ar1",
                 "setxor1d": "ar1", "extract": "condition", "compress": "condition"}


def _data_shaped(s: ir.Call) -> bool:
    """Does this call's result's shape depend on its input's values (`np.nonzero(mask)`,
    `np.repeat(x, counts)`, a row or a library call srcad runs as written)?"""
    if s.op.name in _DATA_SHAPED:
        return True
    param = _VALUE_SHAPED.get(s.op.name)
    if param is not None and any(isinstance(a, ir.Var) for a in _atoms(s.args.get(param))):
        return True
    fn = s.args.get("_fn")
    return isinstance(fn, ir.Const) and any(fn.value is f for f in _DATA_SHAPED_FNS)


# ops that make a container longer than what they read: one a loop runs a value-set number
# of times makes a value-set length
_GROWING = frozenset({"list_append", "list_concat", "list_repeat", "dict_set", "setitem",
                      "list", "tuple", "dict", "dict_copy", "write_through"})


def _grows(s: ir.Call) -> bool:
    """May `s` make a list, tuple or dict whose length depends on how often it ran (an
    append, a concatenation, a store by a key; `list(...)` of such a one)?"""
    return s.op.name in _GROWING or "concat" in s.op.name or "append" in s.op.name


def _kind(value) -> str:
    """What `alias_again` and a write in place tell apart: a numpy array of no dimensions
    ("0d": `x[..., 0, 1]`, `np.asarray(2.0)`, written in place by `op=`), a number, numpy's
    or Python's ("number": rebound by `op=`), an array of one dimension or more ("array"),
    or anything else ("other")."""
    if isinstance(value, np.ndarray):
        return "0d" if value.ndim == 0 else "array"
    if isinstance(value, (np.number, np.bool_, bool, int, float)) and not isinstance(
            value, complex):
        return "number"
    return "other"


def _number(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_number(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str, slice, np.generic)) or \
        value is Ellipsis


def _atoms(atom):
    """Every atom inside `atom` (a sequence's items, an index's parts and slices)."""
    yield atom
    for sub in (getattr(atom, "items", None) or getattr(atom, "parts", None) or ()):
        yield from _atoms(sub)
    if isinstance(atom, ir.Slice):
        for sub in (atom.lower, atom.upper, atom.step):
            if sub is not None:
                yield from _atoms(sub)


def _dynamic_shapes(main: ir.Function, integral: dict, infos: dict) -> dict:
    """{id(function): names whose shape (an array) or value (an integer) may differ between
    two calls with the same specialisation key}: an integer read from an array's values
    (`n = int(np.sum(mask))`), an object's attribute (`self.n`), a container's item, a loop
    that runs while a test holds; an array shaped by one (`x.reshape(n, -1)`, `np.zeros(n)`,
    `x[:n]`), indexed by a mask (`x[x > 0]`) or made from such an array. The probe saw one
    value of each; the code must not be specialised on its shape (its Info is dropped), or a
    later call with another would run code built for the first -- a crash, or, where the
    sizes agree (`(2, 2)` for `(4, 1)`), a silently wrong gradient. Integers from shapes, the
    arguments' own integers (in the key), literals and folded globals stay fixed."""
    dynamic: dict = {}
    functions = {id(f): f for f in ir.program_functions(main)}

    def dyn_atom(fid, atom) -> bool:
        return isinstance(atom, ir.Var) and atom.name in dynamic.get(fid, set())

    def mark(fid, name) -> bool:
        names = dynamic.setdefault(fid, set())
        if name in names:
            return False
        names.add(name)
        return True

    def array(fid, name) -> bool:
        i = infos.get(fid, {}).get(name)
        return i is not None and i.dtype is not None and i.ndim > 0

    def block(fid, body, forced) -> bool:
        changed = False
        ints = integral.get(fid, set())
        for s in body:
            if isinstance(s, ir.Call):
                atoms = [a for v in s.args.values() for a in _atoms(v)]
                vars_ = [a.name for a in atoms if isinstance(a, ir.Var)]
                dyn_in = [v for v in vars_ if v in dynamic.get(fid, set())]
                name = s.op.name
                if forced and not array(fid, s.target) and (
                        s.target in ints or _grows(s)):
                    dyn = True  # (a count, a list grown by a loop whose trips a value sets;
                    # not a number or a fixed display of arrays -- `x[0], x[-3] = x[-3],
                    # x[0]` in a while loop -- whose Info the aliases' order needs)
                elif s.target in ints:  # an integer (or a tuple of them)
                    dyn = bool(dyn_in) if name in _SHAPE_QUERIES else bool(dyn_in) or any(
                        v not in ints for v in vars_) or any(
                        isinstance(a, ir.Const) and not _number(a.value) for a in atoms)
                elif array(fid, s.target):
                    mask = name == "getitem" and any(
                        isinstance(a, ir.Var) and (i := infos.get(fid, {}).get(a.name))
                        is not None and i.dtype is not None and i.ndim > 0 and
                        np.dtype(i.dtype).kind == "b" for a in _atoms(s.args.get("index")))
                    fixed = name == "reshape" and not any(  # (to a shape known: that one)
                        dyn_atom(fid, a) or (isinstance(a, ir.Const) and a.value == -1)
                        for a in _atoms(s.args.get("shape")))
                    dyn = _data_shaped(s) or mask or (not fixed and any(
                        array(fid, v) or not getattr(s.op, "elementwise", False)
                        for v in dyn_in))
                else:  # (a container, an object: a count kept in it; `np.nonzero`'s tuple)
                    dyn = bool(dyn_in) or _data_shaped(s)
                if dyn:
                    changed |= mark(fid, s.target)
            elif isinstance(s, ir.UserCall):
                cid = id(s.callee)
                for p, a in zip(s.callee.params, s.args):
                    if dyn_atom(fid, a) or (
                            isinstance(a, ir.Var) and a.name not in ints and
                            p in integral.get(cid, set())):
                        changed |= mark(cid, p)
                ret = s.callee.ret.value if getattr(s.callee, "ret", None) is not None \
                    else None
                items = ret.items if s.unpack and isinstance(ret, ir.Seq) else [ret] * len(
                    s.targets)
                for t, r in zip(s.targets, items):
                    if (forced and not array(fid, t)) or (r is not None and any(
                            dyn_atom(cid, a) for a in _atoms(r))):
                        changed |= mark(fid, t)
            elif isinstance(s, ir.If):
                test = forced or any(dyn_atom(fid, a) or (
                    isinstance(a, ir.Var) and a.name not in ints) for a in _atoms(s.test))
                changed |= block(fid, s.body, test) | block(fid, s.orelse, test)
            elif isinstance(s, ir.For):
                count = forced or any(dyn_atom(fid, a) for r in (s.start, s.stop, s.step,
                                                                  s.limit)
                                      if r is not None for a in _atoms(r))
                if count:
                    changed |= mark(fid, s.target)
                changed |= block(fid, s.body, count)
            elif isinstance(s, ir.While):  # (how often it runs: what its test reads)
                changed |= block(fid, s.cond_body, True) | block(fid, s.body, True)
        return changed

    for _ in range(20):  # (to a fixed point: a loop's body reads what a later trip makes)
        if not any([block(fid, fn.body, False) for fid, fn in functions.items()]):
            break
    return {fid: {n for n in names if array(fid, n)} for fid, names in dynamic.items()}


def _integral(value) -> bool:
    """An integer, or a list or tuple of them (`x.shape`, `x.strides`): it carries no
    gradient, whatever it was computed from."""
    if isinstance(value, (list, tuple)):
        return all(_integral(v) for v in value)
    return isinstance(value, (int, np.integer, np.bool_))


def refuse_sequence_arithmetic(functions: dict, containers: dict, infos: dict,
                               main: ir.Function, wrt, integral=None) -> None:
    """A Python operator on a list or tuple concatenates or repeats it (the generated code
    runs Python's `+` as written) while its op row's rule adds or scales: where gradients
    flow through such an operand, refuse instead of returning a wrong gradient. (A name that
    held only integers on the probe -- `integral`: a shape, a count -- carries none.)"""
    integral = integral or {}
    for fid, fn in functions.items():
        seqs = containers.get(fid, set())
        table = infos.get(fid, {})
        varied = None
        for s in ir.walk(fn.body):
            if not (isinstance(s, ir.Call) and s.op.name in PY_OPERATORS):
                continue
            args = list(s.args.values())
            if s.op.name == "mod" and isinstance(args[0], ir.Const) and \
                    isinstance(args[0].value, str):
                continue  # (`"cost %f" % (i, loss)`: a string, no gradient to carry)
            sequences = [a for a in args if isinstance(a, ir.Seq)
                         or (isinstance(a, ir.Var) and a.name in seqs)]
            # (a numpy integer scalar times a list repeats the list, as a Python int does:
            # `np.sum(counts) * xs`)
            numpy_operand = any(isinstance(a, ir.Var) and (i := table.get(a.name)) is not None
                                and i.dtype is not None and not (
                                    s.op.name == "multiply" and i.ndim == 0 and
                                    np.dtype(i.dtype).kind in "iub") for a in args)
            if not sequences or numpy_operand:  # (an array or numpy scalar: numpy's semantics)
                continue
            if varied is None:
                # (a called function's parameters all count as differentiated: conservative)
                varied = varied_vars(fn, wrt if fn is main else fn.params)
            bad = [v for a in sequences for v in ir.atom_vars(a)
                   if v in varied and v not in integral.get(fid, ())]
            if bad:
                raise SrcadError(
                    f"`{fn.source_lines.get(s.line, s.op.name)}` applies a Python operator to "
                    f"`{bad[0]}`, a list or tuple that gradients flow through: Python "
                    f"concatenates or repeats it, which srcad does not differentiate",
                    filename=fn.filename, lineno=s.line, func=fn.name,
                    hint="make it an array first (np.asarray(xs)), or combine the items with "
                    "np.concatenate / np.stack, or index the items one by one")


def refuse_complex(functions: dict, complexes: dict, main: ir.Function, wrt) -> None:
    """A value that depends on the differentiated arguments and held a complex number on the
    probe (`np.exp(1j * k)`): the rows' rules are real, so its gradient would lose the
    imaginary part -- a wrong gradient, silently. Refused at the line that made it."""
    for fid, names in complexes.items():
        fn = functions[fid]
        varied = varied_vars(fn, wrt if fn is main else fn.params)
        bad = names & varied
        if not bad:
            continue
        line = next((s.line for s in ir.walk(fn.body) if isinstance(s, ir.Call)
                     and s.target in bad), None)
        raise SrcadError(
            "a complex value depends on the arguments being differentiated: srcad "
            "differentiates real values only (complex numbers are out of its scope)",
            filename=fn.filename, lineno=line, func=fn.name,
            hint="write the computation with real arrays (`np.cos(k)` / `np.sin(k)` for the "
            "parts of `np.exp(1j * k)`), or register a real-valued rule for the function "
            "with srcad.defvjp")


def _touched_by_effects(fn: ir.Function) -> set:
    """Names the probe may not have computed as the real call will: objects that a method
    run for its effect (or a call that may write into its arguments) changes, which the
    probe ran on a copy or skipped (interpret.run_effect), and all computed from them."""
    unknown = set()
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Effect) and s.kind == "call" and is_opaque(s.op) and not s.op.pure:
            unknown.update(ir.uses(s))
    if not unknown:
        return unknown
    stmts = [s for s in ir.walk(fn.body) if isinstance(s, (ir.Call, ir.UserCall))]
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if set(ir.uses(s)) & unknown and not set(ir.defs(s)) <= unknown:
                unknown.update(ir.defs(s))
                changed = True
    return unknown


def _path_dependent(fn: ir.Function, executed: set, table: dict) -> tuple[set, set]:
    """Names whose shape this call cannot vouch for: assigned by a statement that did not run
    (another branch, a loop that ran no trips), or computed from such a value where it may
    reach (`_Reaching`: `e = v[1]` before an arm not taken rebinds v is computed from the v
    that ran). Code is specialised only on the rest, so that every path shares one correct
    transform.

    A statement that did not run but whose value is certainly one of its operands' -- a copy
    into a name (`e = identity(e_again)`), or `view_again(x, i, e)` of a 0-d `e` (a scalar
    copy keeps its value: `e = v[1]; e += 3` and a write into v on the arm not taken) -- has
    that operand's Info (`table`, filled in for it), unless the name holds another.

    Returns (those names, the ids of the statements that ran but may compute such a value:
    what the others made, they make on every path)."""
    unknown: set = set()
    while True:
        flow = _Reaching(executed, table, unknown)
        flow.block(fn.body, frozenset())
        if flow.unknown <= unknown:
            return unknown, flow.unsure
        unknown |= flow.unknown


class _Reaching:
    """A forward may-flow: the names whose value where a statement runs may be one the probe
    cannot vouch for (union where paths join, loops to a fixed point). `unknown`: the names
    some statement gives such a value (grows from the last pass's, `known_before`)."""

    def __init__(self, executed: set, table: dict, known_before: set):
        self.executed, self.table, self.earlier = executed, table, known_before
        self.copy_op = table_of_ops.lookup(control.identity)
        self.unknown: set = set(known_before)
        self.unsure: set = set()  # (statements that ran where such a value reaches them)

    def block(self, body, state: frozenset) -> frozenset:
        for s in body:
            state = self.stmt(s, state)
        return state

    def stmt(self, s, state: frozenset) -> frozenset:
        if isinstance(s, ir.If):
            return self.block(s.body, state) | self.block(s.orelse, state)
        if isinstance(s, (ir.For, ir.While)):
            seen = state
            while True:
                if isinstance(s, ir.For):
                    out = self.block(s.body, seen)
                else:
                    cond = self.block(s.cond_body, seen)
                    out = cond | self.block(s.body, cond)
                if out <= seen:
                    return seen
                seen = seen | out
        if not isinstance(s, (ir.Call, ir.UserCall)):
            return state
        names = set(ir.defs(s))
        if self._path_dependent(s, state):
            self.unknown |= names
            self.unsure.add(id(s))
            return state | names
        return state - names

    def _path_dependent(self, s, state) -> bool:
        if id(s) in self.executed:
            return bool(set(ir.uses(s)) & state)
        src = self._passed_through(s)
        info = self.table.get(src)
        return (src is None or src in state or src in self.earlier or info is None
                or self.table.setdefault(s.target, info) != info)

    def _passed_through(self, s) -> str | None:
        """The name whose value statement `s` certainly is, whatever path reaches it."""
        if not isinstance(s, ir.Call):
            return None
        if s.op is self.copy_op:
            src = s.args.get("x")
        elif s.op.name == "view_again":
            src = s.args.get("view")
            info = self.table.get(src.name) if isinstance(src, ir.Var) else None
            if info is None or info.ndim != 0:
                return None
        else:
            return None
        return src.name if isinstance(src, ir.Var) else None


def _not_followed_object(stmt: ir.Call, env: dict) -> None:
    """Refuse a numpy row (`np.sum`, and the methods and attributes spelt on a value:
    `u.sum()`, `u.shape`, `u.copy()`) given an instance of a user class: srcad reads such a
    spelling as numpy's where it did not follow the object -- one a call run as written
    handed back (`u = model.sub.scaled(2.0)`) -- while Python calls the class's own method
    or reads its own attribute (a TypeError at best, `np.ndim(u) == 0` silently at worst)."""
    module = getattr(stmt.op.fn, "__module__", None) or ""
    if not module.startswith("numpy"):
        return
    if stmt.op.name in _SET_OPERATORS and any(
            isinstance(env.get(a.name), (dict, set, frozenset))
            for a in stmt.args.values() if isinstance(a, ir.Var)):
        # (`defaults | overrides` of two dicts: Python's union, which srcad's row reads as
        # numpy's bitwise or -- no gradient through it, silently, before)
        raise UnsupportedSyntaxError(
            f"`{_SET_OPERATORS[stmt.op.name]}` of a dict or set: srcad reads the operator as "
            f"numpy's bitwise one, which carries no gradient",
            hint="write the union as a display: `{**defaults, **overrides}`")
    first = stmt.args.get(stmt.op.params[0].name) if stmt.op.params else None
    if isinstance(first, ir.Var) and isinstance(env.get(first.name), dict):
        # (`q = p.copy()` of a dict srcad did not know to be one -- an item picked from a
        # module's list when the code runs: numpy's copy, a 0-d object array, and an
        # IndexError blamed on the user's code at `q["mode"]`, before)
        raise UnsupportedSyntaxError(
            f"numpy's `{stmt.op.name}` is given a dict here: srcad read the method as an "
            f"array's, not knowing the value to be a dict when it built the code",
            hint="spell the dict's own operation by its builtin (`q = dict(p)` for "
            "`p.copy()`)")
    for atom in stmt.args.values():
        if not isinstance(atom, ir.Var) or atom.name not in env:
            continue
        value = env[atom.name]
        if isinstance(value, (type, *_FUNCTIONS)) or not is_user_object(value) or any(
                hasattr(value, a) for a in _ARRAY_LIKE):
            continue  # (a class, a function, a duck array numpy converts by its protocol)
        raise UnsupportedSyntaxError(
            f"numpy's `{stmt.op.name}` is given a {type(value).__name__} object that "
            f"srcad did not follow here (a call it runs as written handed it back): it reads "
            f"the method or attribute as numpy's, where Python calls the class's own",
            hint=f"build the {type(value).__name__} in the differentiated function, or get "
            f"it from a method of an object the function names directly (`t.scaled(2.0)` "
            f"of a global `t`), so that srcad follows it")


_SET_OPERATORS = {"bitwise_or": "|", "bitwise_and": "&", "bitwise_xor": "^"}
_ARRAY_LIKE = ("__array__", "__array_interface__", "__array_function__", "__array_ufunc__")
_FUNCTIONS = (types.FunctionType, types.MethodType, types.BuiltinFunctionType,
              functools.partial)
