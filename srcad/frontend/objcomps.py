"""A list comprehension that picks objects srcad knows here, by tests known here.

From-scratch layer code selects its layers before it loads parameters into them:

    dense = [l for l in net.layers if isinstance(l, Dense)]
    for l, W in zip(dense, Ws):
        l.W = W

`net.layers` is a module's list of built objects: srcad resolves it when it normalises the
function (its items guarded, as a loop over it unrolls -- frontend/loops.py), and whether a
layer is a `Dense` (or has a `W`, or its `trainable` flag is set) is known then too. Lowered
as a loop that appends (pylower.py), the list would be one srcad follows only when the code
runs, and a store into its items (`l.W = W`) one srcad cannot carry to the methods that read
it: refused. Here the comprehension is the display of the items it keeps, each spelled as
the item of the known list, so what follows walks known objects:

    dense = [net.layers[0], net.layers[2]]

Only a comprehension of one `for` over a name, attribute or constant index chain that holds
a list or tuple of user objects, whose every `if` is decided per object by `isinstance(v, C)`
(C a class, or a tuple of classes: an ABC's False answer checked again, opaque.py
`decided_class_test`), `hasattr(v, "name")`, a test of the item's class and plain attributes
(`l.trainable`, `type(l).__name__ == "Dense"`: knowntests.py `StaticTest`, which leaves to
run a flag the function, a method of the class or a function of the class's or a base
class's file sets -- a context manager or `model.eval()` -- ), and `not`, `and`, `or` of
those (short-circuited); whose element reads no call (it is evaluated per item, where the
list is read again). Each fact is guarded (guards.py: the list's items, an attribute's
presence or value), so a change between calls rebuilds the code, and each answer is checked
again where the comprehension stands (an attribute a method adds during the call -- a lazily
built layer -- stops the call, never a list silently short). Anything else is left to
pylower.py as written.

Input: a `ParsedFunction` and a comprehension node of its tree; output: a `gast.List`, or None.

Also here, `held_dict_updates`: an object's dict, known here, updated from a dict argument --

    net.params.update(params)      ->      for k in params:
                                               net.params[k] = params[k]

the stores by key that frontend/attrstate.py carries into the methods reading `self.params`
(as a call srcad does not follow, the reads carried no gradient: refused since,
analysis/refusals.py `_bound_container`).
"""

from __future__ import annotations

import copy

import gast

from ..errors import DictUnknownError
from ..naming import fresh
from . import guards
from .knowntests import UNKNOWN, StaticTest, set_in_file, stored_attributes
from .objects import delegated_sequence
from .opaque import decided_class_test, is_object_sequence, is_user_object
from .parse import UNRESOLVED, rewrite_blocks
from .pylevel import Substitute, _assign, _call, _for, _name


def folded_object_comprehension(pf, e, stored: set):
    """(`e` as the display of the objects it keeps, the `assert hasattr(...)` statements
    that check its `hasattr` answers when the code runs), else None (module docstring)."""
    if not (isinstance(e, gast.ListComp) and len(e.generators) == 1):
        return None
    gen = e.generators[0]
    if gen.is_async or not isinstance(gen.target, gast.Name) or \
            any(isinstance(n, (gast.Call, gast.NamedExpr, gast.Lambda, gast.ListComp,
                               gast.GeneratorExp, gast.DictComp, gast.SetComp))
                for n in gast.walk(e.elt)):
        return None
    seq = known_value(pf, gen.iter, stored)
    found = delegated_sequence(seq, "__iter__")
    if found is not None:  # (`[l for l in net if ...]`: the list its __iter__ walks)
        seq = found[1]
    if seq is UNRESOLVED or type(seq) not in (list, tuple) or not is_object_sequence(seq):
        return None
    var = gen.target.id
    kept, asserts = [], []
    # (the attributes a filter over a flag leaves to run -- `_static` -- walked once here)
    attrs = frozenset(stored_attributes(pf.tree) | set_in_file(pf.filename))
    for k, obj in enumerate(seq):
        checks: list = []
        for cond in gen.ifs:
            verdict = _decide(pf, cond, var, obj, stored, checks, attrs)
            if verdict is None:
                return None
            if not verdict:
                break
        else:
            kept.append(k)
        for _, attr, answer, kind in checks:  # (checked again when the code runs: a
            if kind == "isinstance":  # (`attr`: the classes, as the filter spells them)
                test = gast.UnaryOp(op=gast.Not(), operand=_call("isinstance", [
                    _item(gen.iter, k), copy.deepcopy(attr)]))
            elif kind == "attr":  # value, as Python reads it; a `hasattr`, by calls.py's
                test = gast.Compare(  # `known_predicate`, which folds this assert's test)
                    left=gast.Attribute(value=_item(gen.iter, k), attr=attr, ctx=gast.Load()),
                    ops=[gast.Is() if answer is None or type(answer) is bool else gast.Eq()],
                    comparators=[gast.Constant(answer, None)])
                test.srcad_at_run_time = True  # (expressions.py: not folded again)
            else:
                test = _call("hasattr", [_item(gen.iter, k), gast.Constant(attr, None)])
                if not answer:
                    test = gast.UnaryOp(op=gast.Not(), operand=test)
            asserts.append(gast.copy_location(gast.Assert(test=test, msg=None), e))
    if type(seq) is list:
        guards.note("items", seq, len(seq), seq)
    elts = [Substitute(var, _item(gen.iter, k)).visit(copy.deepcopy(e.elt)) for k in kept]
    out = gast.copy_location(gast.List(elts=elts, ctx=gast.Load()), e)
    for n in (out, *asserts):
        gast.fix_missing_locations(n)
    return out, asserts


def _item(seq, k: int):
    return gast.Subscript(value=copy.deepcopy(seq), slice=gast.Constant(k, None),
                          ctx=gast.Load())


def known_value(pf, e, stored: set):
    """What `e` -- a name, an attribute chain, constant indexes -- holds now (each lookup
    guarded), or UNRESOLVED."""
    if isinstance(e, gast.Name):
        if e.id in stored:
            return UNRESOLVED
        if e.id in pf.params:
            return pf.known.get(e.id, UNRESOLVED)
        try:
            return pf.resolve(e.id)
        except Exception:  # noqa: BLE001  (a name the module lacks: Python says so later)
            return UNRESOLVED
    if isinstance(e, gast.Attribute):
        base = known_value(pf, e.value, stored)
        if base is UNRESOLVED or not is_user_object(base) or isinstance(base, type):
            return UNRESOLVED
        v = getattr(base, e.attr, guards.MISSING)
        if v is guards.MISSING:
            return UNRESOLVED
        guards.note_attr(base, e.attr, v)
        return v
    if isinstance(e, gast.Subscript) and isinstance(e.slice, gast.Constant) and \
            type(e.slice.value) is int:
        base = known_value(pf, e.value, stored)
        found = delegated_sequence(base, "__getitem__")
        if found is not None:  # (`net[0]`: the list its __getitem__ reads)
            base = found[1]
        if type(base) not in (list, tuple) or not -len(base) <= e.slice.value < len(base):
            return UNRESOLVED
        if type(base) is list:
            guards.note("items", base, len(base), base)
        return base[e.slice.value]
    return UNRESOLVED


def _decide(pf, cond, var: str, obj, stored: set, checks: list, attrs: frozenset):
    """The truth of the filter `cond` for the item `obj`, or None where it is known only
    when the code runs."""
    if isinstance(cond, gast.UnaryOp) and isinstance(cond.op, gast.Not):
        v = _decide(pf, cond.operand, var, obj, stored, checks, attrs)
        return None if v is None else not v
    if isinstance(cond, gast.BoolOp):  # (short-circuited as Python does)
        stop = isinstance(cond.op, gast.Or)
        for c in cond.values:
            v = _decide(pf, c, var, obj, stored, checks, attrs)
            if v is None or v is stop:
                return v
        return not stop
    if not (isinstance(cond, gast.Call) and isinstance(cond.func, gast.Name) and
            not cond.keywords and cond.func.id not in stored):
        return _static(pf, cond, var, obj, stored, checks, attrs)
    fn = known_value(pf, cond.func, stored)
    args = cond.args
    if fn is isinstance and len(args) == 2 and _is_var(args[0], var):
        kinds = known_value(pf, args[1], stored) if not isinstance(args[1], gast.Tuple) else \
            tuple(known_value(pf, x, stored) for x in args[1].elts)
        registered: list = []
        answer = decided_class_test(isinstance, obj, kinds, registered)
        if registered:  # (an ABC's False until a class is registered with it: checked)
            guards.note_registrations()
            checks.append((obj, args[1], False, "isinstance"))
        return answer
    if fn is hasattr and len(args) == 2 and _is_var(args[0], var) and \
            isinstance(args[1], gast.Constant) and type(args[1].value) is str:
        answer = hasattr(obj, args[1].value)
        guards.note("has", obj, args[1].value, answer)
        checks.append((obj, args[1].value, answer, "has"))
        return answer
    return _static(pf, cond, var, obj, stored, checks, attrs)


def _static(pf, cond, var: str, obj, stored: set, checks: list, attrs: frozenset):
    """Any other filter over the item's class and plain attributes (`l.trainable`,
    `type(l).__name__ == "Dense"`): knowntests.StaticTest, which leaves to run a test of an
    attribute that the function, a method of the item's class, or a function of either's
    source file sets; the attributes it read are checked again where the comprehension
    stands. None where it is known only when the code runs, or it read another object."""

    def root(name):
        if name == var:
            return obj
        held = known_value(pf, gast.Name(name, gast.Load(), None, None), stored)
        return UNKNOWN if held is UNRESOLVED else held

    decided = StaticTest(root, attrs)
    truth = decided.truth(cond)
    if truth is None or any(read[0] is not obj for read in decided.reads):
        return None
    checks.extend(decided.reads)
    return truth


def _is_var(e, var: str) -> bool:
    return isinstance(e, gast.Name) and e.id == var


def held_dict_updates(pf) -> None:
    """Rewrite `pf.tree`'s ``B.attr.update(d)`` statements as the module docstring says: B.attr
    resolves to a dict (guarded) and d is a dict argument the function does not rebind."""
    if not any(isinstance(n, gast.Attribute) and n.attr == "update"
               for n in gast.walk(pf.tree)):
        return
    stored = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
              and isinstance(n.ctx, (gast.Store, gast.Del))}
    names = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)}  # (`fresh` adds)

    def one(s):
        v = s.value if isinstance(s, gast.Expr) else None
        if not (isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute) and
                v.func.attr == "update" and isinstance(v.func.value, gast.Attribute) and
                len(v.args) == 1 and not v.keywords and isinstance(v.args[0], gast.Name) and
                v.args[0].id not in stored and v.args[0].id in pf.params):
            return None
        if type(known_value(pf, v.func.value, stored)) is not dict:
            return None
        if not pf.dict_paths and pf.deferrable:
            raise pf.error(f"`{v.args[0].id}` may be a dict: srcad reads its keys from the "
                           f"call's arguments", s, cls=DictUnknownError,
                           hint=f"call the function with a dict for `{v.args[0].id}`")
        if (v.args[0].id,) not in pf.dict_paths:
            return None
        d = v.args[0].id
        key = fresh(f"{d}_key", names)
        put = _assign(gast.Subscript(value=copy.deepcopy(v.func.value), slice=_name(key),
                                     ctx=gast.Store()),
                      gast.Subscript(value=_name(d), slice=_name(key), ctx=gast.Load()))
        return gast.copy_location(_for(_name(key, True), _name(d), [put]), s)

    def block(stmts):
        out = []
        for s in stmts:
            rewrite_blocks(s, block)
            new = one(s)
            out.append(s if new is None else new)
        return out

    pf.tree.body = block(pf.tree.body)
    gast.fix_missing_locations(pf.tree)
