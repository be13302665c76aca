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
"""

from __future__ import annotations

from .. import ir
from ..errors import NoRuleError, UnsupportedSyntaxError
from ..frontend.opaque import MUTATING, is_opaque
from ..ops.runtime_ops import POPS


def _flows(fn: ir.Function):
    """(inputs, outputs) of each statement along which a value's dependence travels: a row's
    arguments with a derivative rule, every argument of an op with no rule (its result
    depends on them, with no gradient) and of a user call."""
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Call):
            if is_opaque(s.op) and s.op.kind == "operator":
                continue  # (`is`, `in`: a bool, piecewise constant like a comparison)
            if is_opaque(s.op):
                yield list(s.args.values()), [s.target]
            elif s.op.name in POPS + ("cotangents",):
                yield [s.args["stack"]], [s.target]
            else:
                yield [a for p, a in s.args.items()
                       if s.op.vjp(p) is not None or s.op.jvp(p) is not None], [s.target]
        elif isinstance(s, ir.UserCall):
            yield list(s.args), list(s.targets)
        elif isinstance(s, ir.Push):
            yield [s.value], [s.stack]


def _dependent(fn: ir.Function, wrt) -> set:
    """Names whose value depends on `wrt` (through ops with a rule or without one)."""
    flows = list(_flows(fn))
    dep = set(wrt)
    changed = True
    while changed:
        changed = False
        for ins, outs in flows:
            if any(v in dep for a in ins for v in ir.atom_vars(a)) and not set(outs) <= dep:
                dep.update(outs)
                changed = True
    return dep


def _useful(fn: ir.Function) -> tuple[set, set]:
    """(names, constant spellings) from which the output is reached through ops that would
    carry a gradient -- rows with a rule, ops with none, user calls -- but not through a row
    with no derivative (a comparison, a shape, int()): where a missing gradient matters."""
    flows = list(_flows(fn))
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


def _consts(atom):
    if isinstance(atom, ir.Const):
        yield atom.src
    elif isinstance(atom, ir.Seq):
        for a in atom.items:
            yield from _consts(a)


def _site_label(s) -> str:
    op = s.op
    if op.kind == "call":
        return f"`{op.label}`"
    if op.kind == "method":
        return f"the method `{op.label}`"
    if op.kind == "format":
        return op.label
    return f"the attribute `{op.label}`"


def _refuse(fn: ir.Function, s, why: str, hint: str):
    raise NoRuleError(f"{_site_label(s)} has no derivative rule in srcad, and {why}",
                      filename=fn.filename, lineno=s.line, func=fn.name, hint=hint)


_CONVERSIONS = {"float", "int", "complex", "bool", "item", "tolist"}


def _hint(s) -> str:
    op = s.op
    if op.label.strip(".()") in _CONVERSIONS:  # float(loss), x.item(): a plain number
        return ("keep the value an array: for its one element write np.sum(x) or "
                "x.reshape(()) (a 0-d array carries the gradient, a Python number does not)")
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
    caller after the call) would get the value with no gradient. Refused at that read when
    some function of the call stores a value that depends on the arguments under that name."""
    stored, reads = {}, []
    _attribute_flows(fn, list(wrt), set(), stored, reads)
    for f, line, attr in reads:
        if attr in stored:
            where, at = stored[attr]
            raise NoRuleError(
                f"`.{attr}` is read through the object here, but {where.name} (line {at}) "
                f"stores in it a value that depends on the arguments being differentiated: "
                f"read back from the object it would carry no gradient",
                filename=f.filename, lineno=line, func=f.name,
                hint=f"use the value {where.name} returns (return it, or both it and "
                f"`{attr}`), rather than reading `.{attr}` from the object")


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
    for at, s in enumerate(order):
        if not isinstance(s, ir.UserCall):
            continue
        written = {e.args["param"].value for e in ir.walk(s.callee.body)
                   if isinstance(e, ir.Effect) and e.kind == "setitem" and "param" in e.args}
        for p, a in zip(s.callee.params, s.args):
            if p not in written or not isinstance(a, ir.Var):
                continue
            later = next((r for r in order[at + 1:] if a.name in ir.uses(r)), None)
            if later is not None:
                raise UnsupportedSyntaxError(
                    f"{s.callee.name} (called at line {s.line}) writes into its argument "
                    f"`{p}` in place; srcad carries such a write as a new value inside "
                    f"{s.callee.name} only, so reading `{_user(a.name)}` here after the call "
                    f"would not see it", filename=fn.filename, lineno=later.line, func=fn.name,
                    hint=f"return it from {s.callee.name} (`return ..., {p}`) and read the "
                    f"returned one")
        check_argument_writes(s.callee, seen)


def _attribute_flows(fn: ir.Function, wrt, seen, stored, reads) -> None:
    key = (id(fn), tuple(sorted(wrt)))
    if key in seen:
        return
    seen.add(key)
    dep = _dependent(fn, wrt)
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Effect) and s.kind == "setattr" and \
                set(ir.atom_vars(s.args["value"])) & dep:
            stored.setdefault(s.args["attr"].value, (fn, s.line))
        elif isinstance(s, ir.Call) and is_opaque(s.op) and s.op.kind == "attribute":
            reads.append((fn, s.line, s.op.name[1:]))
        elif isinstance(s, ir.UserCall):
            inner = [p for p, a in zip(s.callee.params, s.args) if set(ir.atom_vars(a)) & dep]
            _attribute_flows(s.callee, inner, seen, stored, reads)


def check_opaque(fn: ir.Function, wrt, _seen=None, _callee=False) -> None:
    """Refuse an op with no rule where it would drop a gradient (see the module docstring);
    the user functions `fn` calls are checked with the arguments that reach them."""
    if _seen is None:
        check_attribute_state(fn, wrt)
        check_argument_writes(fn)
    seen = set() if _seen is None else _seen
    key = (id(fn), tuple(sorted(wrt)))
    if key in seen:
        return
    seen.add(key)
    sites = [s for s in ir.walk(fn.body) if (isinstance(s, (ir.Call, ir.Effect)) and
                                             is_opaque(s.op))]
    calls = [s for s in ir.walk(fn.body) if isinstance(s, ir.UserCall)]
    if not sites and not calls:
        return
    dep = _dependent(fn, wrt)
    useful = None
    for s in sites:
        given = {p for p, a in s.args.items() if set(ir.atom_vars(a)) & dep}
        if not given:
            continue
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
        if useful is None:
            useful = _useful(fn)
        names, consts = useful
        if isinstance(s, ir.Call) and s.target in names:
            _refuse(fn, s, "it is given a value that depends on the arguments being "
                    "differentiated: its result, which the output depends on, would carry "
                    "no gradient", _hint(s))
        if s.op.pure:
            continue
        shared = _from_params(fn) if _callee else set()
        method = s.op.kind == "method"
        if method:  # it may store its arguments in its object, or change the object itself
            holders = ["_obj"] if (given - {"_obj"} or s.op.name[1:] in MUTATING) else []
        else:  # a function srcad knows nothing about may change any of its arguments
            holders = [p for p in s.args if p != "_fn"]
        for p in holders:
            a = s.args[p]
            held = (isinstance(a, ir.Var) and (a.name in names or a.name in shared)) or (
                isinstance(a, ir.Const) and a.src in consts)
            if held:
                what = a.name if isinstance(a, ir.Var) else a.src
                _refuse(fn, s, f"it is given a value that depends on the arguments being "
                        f"differentiated; it may store it in or change `{_user(what)}`, "
                        f"which the output depends on, and the gradient would not follow",
                        "build the value with operations srcad differentiates (a list "
                        "made in the function follows lst.append(v)), or pass it on directly")
    for s in calls:
        inner = [p for p, a in zip(s.callee.params, s.args) if set(ir.atom_vars(a)) & dep]
        if inner:
            check_opaque(s.callee, inner, seen, True)


def _user(name: str) -> str:
    """The user's spelling of an IR name (`h_L12` -> `h`)."""
    base, _, tail = name.rpartition("_L")
    return base if base and tail.isdigit() else name


check_opaque_methods = check_opaque  # (its first name, when only methods were opaque)
