"""Rows for the Python that people write: builtins with no derivative (`int`, `bool`,
`round`, `isinstance`: piecewise constant, or no value at all), lists built by comprehensions and ``lst.append``, dict literals and
comprehensions (srcad/runtime_python.py holds the helpers).

A list's or dict's cotangent is a `GradTree` and its tangent an `Items` / `Slots` container
(runtime_python.py): `list_append`'s VJP splits the list's cotangent into the old list's and
the new item's, `dict_set`'s into the old dict's and the stored value's. The helpers the
rules call are linear in their first argument (a cotangent or tangent) and are rows too,
each with its transpose as VJP, so generated code calling them can be differentiated again.

A dict literal ``{k0: v0, k1: v1}`` is an op per number of entries (`dict_literal_op`), made
on demand like the frontend's opaque ops: its keys are atoms with no derivative, each value's
VJP reads its key's slot of the cotangent. Namedtuples the same way: ``Cache(x, z=z)`` an op
per field count (`namedtuple_op`), ``cache.z`` one per field name (`field_op`, where the name
is a field of a namedtuple type the code sees), ``p._replace(W=v)`` one per set of names
(`replace_op`); a namedtuple's cotangent is a `GradTree` slot by field position.
"""

from __future__ import annotations

import ast
import functools
import operator

import numpy as np

from .. import runtime_python as rp
from ..runtime_python import (  # (the rules' names)
    append_tangents,
    appended_tangent,
    drop_fields,
    field_grad,
    field_index,
    field_tangent,
    get_grad_d,
    get_grad_default,
    get_tangent,
    get_tangent_default,
    grow_grad,
    head_grad,
    item_at,
    item_tangent_at,
    key_grad,
    key_tree,
    keyed_tangent,
    keys_tangent,
    last_grad,
    mapping_grad,
    mapping_tangent,
    put_span,
    repeat_grad,
    repeat_spread,
    repeat_tangent,
    sequence_grad,
    sequence_tangent,
    slot_tree,
    span_tangent,
    take_span,
    without_key,
)
from ..runtime_signal import item_grad
from .table import Op, Param, Rule, defjvp, defnondiff, defvjp

_FAM = "python"
_RT = "runtime"

# --- builtins -----------------------------------------------------------------------------------
defnondiff(int, name="int", params=(Param("x"),), spelling="int(x)", family=_FAM,
           test_cases=(("a * int(a.shape[0] / 2)", [(3, 4)]),))
defnondiff(bool, name="bool", params=(Param("x"),), spelling="bool(x)", family=_FAM,
           test_cases=(("a * bool(a.shape[0] > 2)", [(3, 4)]),))
defnondiff(round, name="py_round", params=(Param("number"), Param("ndigits", None)),
           spelling="round(number, ndigits)", family=_FAM,
           test_cases=(("a * round(a.shape[0] / 2)", [(3, 4)]),))
defnondiff(isinstance, name="isinstance", params=(Param("obj"), Param("classinfo")),
           spelling="isinstance(obj, classinfo)", family=_FAM,
           test_cases=(("a * isinstance(a, np.ndarray)", [(3,)]),))

defvjp(rp.to_float, lambda g, out, x: item_grad(g, x), name="float", params=(Param("x"),),
       spelling="float(x)", linear=("x",), family=_FAM,
       derivation="the same number as a Python float: g, shaped like x (a size-1 array)",
       test_cases=(("OP(a[1]) * a", [(3,)]), ("OP(np.sum(a)) * 2.0", [(2, 2)]),
                   ("OP(a) * 2.0", [()])))

# --- lists ----------------------------------------------------------------------------------
defvjp(rp.list_append, lambda g, out, xs, x: head_grad(g, xs),
       lambda g, out, xs, x: last_grad(g, xs, x),
       name="list_append", family=_FAM,
       derivation="out = xs + [x]: the old items' cotangents go to xs, the last one to x",
       test_cases=(("np.stack(OP([a], b))", [(3,), (3,)]),
                   ("np.sum(np.stack(OP(OP([], a), b * a)), axis=0)", [(2, 3), (2, 3)]),
                   ("OP([a, b], a * b)[2]", [(3,), (3,)])))
defjvp(rp.list_append, lambda g, out, xs, x: append_tangents(g, xs, x),
       lambda g, out, xs, x: appended_tangent(g, xs))
defvjp(rp.head_grad, lambda g, out, ct, xs: grow_grad(g, xs), None,
       name="head_grad", linear=("ct",), family=_RT,
       derivation="drops the last item; its transpose appends a zero")
defvjp(rp.grow_grad, lambda g, out, ct, xs: head_grad(g, xs), None,
       name="grow_grad", linear=("ct",), family=_RT,
       derivation="appends a zero item; its transpose drops it")
defvjp(rp.last_grad, lambda g, out, ct, xs, x: slot_tree(g, xs), None, None,
       name="last_grad", linear=("ct",), family=_RT,
       derivation="takes the last item; its transpose puts g there")
defvjp(rp.slot_tree, lambda g, out, ct, xs: last_grad(g, xs, ct), None,
       name="slot_tree", linear=("ct",), family=_RT,
       derivation="puts ct as the last item; its transpose takes it")
defvjp(rp.append_tangents, lambda g, out, ct, xs, x: head_grad(g, xs), None, None,
       name="append_tangents", linear=("ct",), family=_RT,
       derivation="the items of ct, then a zero; its transpose drops the last item")
defvjp(rp.appended_tangent, lambda g, out, ct, xs: last_grad(g, xs, ct), None,
       name="appended_tangent", linear=("ct",), family=_RT,
       derivation="zeros, then ct; its transpose takes the last item")

defvjp(rp.list_concat, lambda g, out, xs, ys: take_span(g, 0, xs, len(out)),
       lambda g, out, xs, ys: take_span(g, len(xs), ys, len(out)),
       name="list_concat", family=_FAM,
       derivation="out = xs + ys: items [0, len(xs)) of g go to xs, the rest to ys",
       test_cases=(("np.stack(OP([a], [b, a * b]))", [(3,), (3,)]),
                   ("OP(OP([], [a]), [b * a])[1] * OP([a, b], [])[0]", [(2, 3), (2, 3)])))
defjvp(rp.list_concat, lambda g, out, xs, ys: span_tangent(g, 0, xs, out),
       lambda g, out, xs, ys: span_tangent(g, len(xs), ys, out))
defvjp(rp.take_span, lambda g, out, ct, start, xs, total: put_span(g, start, xs, total), None,
       None, None, name="take_span", linear=("ct",), family=_RT,
       derivation="takes items start..; its transpose puts g there (zeros elsewhere)")
defvjp(rp.put_span, lambda g, out, ct, start, xs, total: take_span(g, start, xs, total), None,
       None, None, name="put_span", linear=("ct",), family=_RT,
       derivation="puts ct at start..; its transpose takes those items")
defvjp(rp.span_tangent, lambda g, out, ct, start, xs, o: take_span(g, start, xs, len(o)), None,
       None, None, name="span_tangent", linear=("ct",), family=_RT,
       derivation="ct's items at start.., zeros elsewhere; its transpose takes them")

defvjp(rp.list_repeat, lambda g, out, xs, n: repeat_grad(g, xs, n), None,
       name="list_repeat", family=_FAM, spelling="xs * n",
       derivation="out = xs * n (the same items n times): item i of xs gathers g's items "
       "i, i + len(xs), ..., the last copy's first",
       test_cases=(("np.stack(OP([a, b], 2))", [(3,), (3,)]),
                   ("OP([a * b], 3)[2] * OP([a], 1)[0] + len(OP([b], 0))", [(2, 3), (2, 3)])))
defjvp(rp.list_repeat, lambda g, out, xs, n: repeat_tangent(g, xs, n), None)
defvjp(rp.repeat_grad, lambda g, out, ct, xs, n: repeat_spread(g, xs, n), None, None,
       name="repeat_grad", linear=("ct",), family=_RT,
       derivation="the n copies' items summed into one; its transpose spreads g over them")
defvjp(rp.repeat_spread, lambda g, out, ct, xs, n: repeat_grad(g, xs, n), None, None,
       name="repeat_spread", linear=("ct",), family=_RT,
       derivation="ct's items at each copy; its transpose sums the copies")
defvjp(rp.repeat_tangent, lambda g, out, ct, xs, n: repeat_grad(g, xs, n), None, None,
       name="repeat_tangent", linear=("ct",), family=_RT,
       derivation="ct's items n times over; its transpose sums the copies")

# --- dicts ----------------------------------------------------------------------------------
defvjp(rp.dict_set, lambda g, out, d, key, value: without_key(g, key), None,
       lambda g, out, d, key, value: key_grad(g, key, value),
       name="dict_set", family=_FAM,
       derivation="out = {**d, key: value}: the slot `key` of g goes to value, the rest to d",
       test_cases=(("OP({'u': a}, 'v', b * a)['v'] * OP({'u': a}, 'v', b)['u']",
                    [(3,), (3,)]),
                   ("OP(OP({}, 'u', a), 'u', b)['u'] * a", [(3,), (3,)])))
defjvp(rp.dict_set, lambda g, out, d, key, value: keys_tangent(g, key, out), None,
       lambda g, out, d, key, value: keyed_tangent(g, key, out))
defnondiff(rp.object_attribute, name="object_attribute", params=(Param("obj"), Param("name")),
           spelling="object_attribute(obj, name)", family=_RT,
           derivation="the object's own list or dict, changed in place as the code runs (its "
           "values flow through the call's copy: frontend/attrstate.py)")
defvjp(rp.dict_copy, lambda g, out, d: mapping_grad(g, d),
       name="dict_copy", family=_FAM, spelling="dict(d)",
       derivation="the same items: g slot by slot",
       test_cases=(("OP({'u': a, 'v': b * a})['v'] * OP({'u': a})['u']", [(3,), (3,)]),))
defjvp(rp.dict_copy, lambda g, out, d: mapping_tangent(g, d))
defvjp(rp.ordered_dict, lambda g, out, d: mapping_grad(g, d),
       name="ordered_dict", family=_FAM, spelling="ordered_dict(d)",
       derivation="collections.OrderedDict of a dict's entries: the same items, g slot by "
       "slot",
       test_cases=(("OP({'u': a, 'v': b * a})['v'] * OP({'u': a})['u']", [(3,), (3,)]),))
defjvp(rp.ordered_dict, lambda g, out, d: mapping_tangent(g, d))
defvjp(rp.dict_without, lambda g, out, d, key: mapping_grad(g, out), None,
       name="dict_without", family=_FAM, spelling="dict_without(d, key)",
       derivation="d after d.pop(key): the items left, g slot by slot (none for key)",
       test_cases=(("OP({'u': a, 'v': b * a}, 'u')['v'] * a", [(3,), (3,)]),))
defjvp(rp.dict_without, lambda g, out, d, key: mapping_tangent(g, out), None)
defvjp(rp.mapping_grad, lambda g, out, ct, d: mapping_tangent(g, d), None,
       name="mapping_grad", linear=("ct",), family=_RT,
       derivation="dict(d)'s cotangent as d's; its transpose is mapping_tangent")
defvjp(rp.mapping_tangent, lambda g, out, t, d: mapping_grad(g, d), None,
       name="mapping_tangent", linear=("t",), family=_RT,
       derivation="d's tangent key by key; its transpose is mapping_grad")
defnondiff(rp.dict_keys, name="dict_keys", params=(Param("d"),), family=_FAM,
           spelling="dict_keys(d)",
           test_cases=(("a * len(OP({'u': 1, 'v': 2}))", [(3,)]),))
defnondiff(rp.sort_order, name="sort_order", params=(Param("keys"), Param("reverse", False)),
           family=_FAM, spelling="sort_order(keys, reverse)",
           test_cases=(("a[OP([2.0, 0.5, 1.0])]", [(3,)]),
                       ("a[OP(['b', 'c', 'a'], True)] * a", [(3,)])))
defvjp(rp.key_grad, lambda g, out, ct, key, value: key_tree(g, key), None, None,
       name="key_grad", linear=("ct",), family=_RT,
       derivation="takes a slot; its transpose puts g there")
defvjp(rp.key_tree, lambda g, out, ct, key: key_grad(g, key, ct), None,
       name="key_tree", linear=("ct",), family=_RT,
       derivation="puts ct in a slot; its transpose takes it")
defvjp(rp.without_key, lambda g, out, ct, key: without_key(g, key), None,
       name="without_key", linear=("ct",), family=_RT,
       derivation="drops a slot: a projection, its own transpose")
defvjp(rp.keyed_tangent, lambda g, out, ct, key, out_: key_grad(g, key, ct), None, None,
       name="keyed_tangent", linear=("ct",), family=_RT,
       derivation="ct in one slot, zeros elsewhere; its transpose takes that slot")
defvjp(rp.keys_tangent, lambda g, out, ct, key, out_: without_key(g, key), None, None,
       name="keys_tangent", linear=("ct",), family=_RT,
       derivation="ct's slots but one; its transpose drops that slot")

defvjp(rp.dict_get, lambda g, out, d, key, default: get_grad_d(g, d, key), None,
       lambda g, out, d, key, default: get_grad_default(g, d, key, default),
       name="dict_get", spelling="d.get(key, default)", family=_FAM,
       derivation="out = d[key] if key in d else default: g flows to that one",
       test_cases=(("OP({'u': a, 'v': b}, 'v', a) * OP({'u': a}, 'w', b * a)", [(3,), (3,)]),))
defjvp(rp.dict_get, lambda g, out, d, key, default: get_tangent(g, d, key, out), None,
       lambda g, out, d, key, default: get_tangent_default(g, d, key, out))

# dict_get's helpers: each linear in its first argument (a cotangent or tangent), the four
# transposes of one another in pairs, so that generated code calling them differentiates again
defvjp(rp.get_grad_d, lambda g, out, ct, d, key: get_tangent(g, d, key, ct), None, None,
       name="get_grad_d", linear=("ct",), family=_RT,
       derivation="ct in the slot `key`; its transpose reads that slot (get_tangent)")
defvjp(rp.get_tangent, lambda g, out, t, d, key, like: get_grad_d(g, d, key), None, None, None,
       name="get_tangent", linear=("t",), family=_RT,
       derivation="t's slot `key`; its transpose puts g in that slot (get_grad_d)")
defvjp(rp.get_grad_default,
       lambda g, out, ct, d, key, default: get_tangent_default(g, d, key, ct), None, None, None,
       name="get_grad_default", linear=("ct",), family=_RT,
       derivation="ct where d lacks `key`; its own transpose (get_tangent_default)")
defvjp(rp.get_tangent_default,
       lambda g, out, t, d, key, like: get_grad_default(g, d, key, t), None, None, None,
       name="get_tangent_default", linear=("t",), family=_RT,
       derivation="t where d lacks `key`; its transpose is get_grad_default")

# --- list(x), tuple(x) ---------------------------------------------------------------------------
# (their helpers are linear in the cotangent / tangent and transposes of each other)
defvjp(rp.sequence_grad, lambda g, out, ct, x: sequence_tangent(g, x), None,
       name="sequence_grad", linear=("ct",), family=_RT,
       derivation="list(x)'s cotangent as x's; its transpose is sequence_tangent")
defvjp(rp.sequence_tangent, lambda g, out, t, x: sequence_grad(g, x), None,
       name="sequence_tangent", linear=("t",), family=_RT,
       derivation="x's tangent item by item; its transpose is sequence_grad")
for _seq in (list, tuple):
    defvjp(_seq, lambda g, out, iterable: sequence_grad(g, iterable),
           name=_seq.__name__, params=(Param("iterable"),), family=_FAM,
           spelling=f"{_seq.__name__}(iterable)",
           derivation="the same items: g item by item (an array's rows stacked)",
           test_cases=(("OP([a, b * a])[1] * OP((a, b))[0]", [(3,), (3,)]),
                       ("OP(a)[1] * 2.0", [(3, 2)])))
    defjvp(_seq, lambda g, out, iterable: sequence_tangent(g, iterable))

# --- namedtuples -------------------------------------------------------------------------------
# (`Cache(x=x, z=z, h=h)` is an op per namedtuple type, `cache.z` one per field name: made on
# demand, like a dict literal's; their helpers are linear in the cotangent / tangent, rows
# here with their transposes)
defvjp(rp.item_at, lambda g, out, ct, i, whole: item_tangent_at(g, i, whole), None, None,
       name="item_at", linear=("ct",), family=_RT,
       derivation="takes item i of ct; its transpose puts g there among zeros")
defvjp(rp.item_tangent_at, lambda g, out, t, i, whole: item_at(g, i, whole), None, None,
       name="item_tangent_at", linear=("t",), family=_RT,
       derivation="t as item i among zeros; its transpose takes item i")
defvjp(rp.field_grad, lambda g, out, ct, obj, name: field_tangent(g, obj, name), None, None,
       name="field_grad", linear=("ct",), family=_RT,
       derivation="ct in the slot of field `name`; its transpose takes that slot")
defvjp(rp.field_tangent, lambda g, out, t, obj, name: field_grad(g, obj, name), None, None,
       name="field_tangent", linear=("t",), family=_RT,
       derivation="the slot of field `name` of t; its transpose puts g there")


defvjp(rp.drop_fields, lambda g, out, d, obj, names: drop_fields(g, obj, names), None, None,
       name="drop_fields", linear=("d",), family=_RT,
       derivation="zeros the fields `names`; its own transpose")
defnondiff(rp.field_index, name="field_index", params=(Param("obj"), Param("name")),
           family=_RT)


def _make_namedtuple(_cls, *items):
    return _cls(*items)


@functools.cache
def namedtuple_op(n: int) -> Op:
    """``Cache(x, z=z, h=h)``: a namedtuple type (`_cls`, no derivative) of n fields, given by
    position in its fields' order; item i's VJP reads slot i of the cotangent."""
    names = [f"f{i}" for i in range(n)]
    params = (Param("_cls"), *(Param(p) for p in names))
    every = ("g", "out", "_cls", *names)
    vjps = (None, *(_rule(every, f"item_at(g, {i}, out)") for i in range(n)))
    jvps = (None, *(_rule(every, f"item_tangent_at(g, {i}, out)") for i in range(n)))
    src = f"_cls({', '.join(names)})"
    return Op(name="namedtuple", fn=_make_namedtuple, params=params,
              spelling=ast.parse(src, mode="eval").body, spelling_src=src, vjps=vjps,
              jvps=jvps, differentiable=n > 0, family=_FAM,
              derivation="each field's value gets that slot of g")


@functools.cache
def replace_op(names: tuple) -> Op:
    """``obj._replace(W=v0, ...)`` of a namedtuple: the fields not named keep obj's values
    (obj's VJP: g with the named slots zero), each named one its value's (that slot of g)."""
    vs = [f"v{i}" for i in range(len(names))]
    params = (Param("_obj"), *(Param(v) for v in vs))
    every = ("g", "out", "_obj", *vs)
    vjps = (_rule(every, f"drop_fields(g, _obj, {names!r})"),
            *(_rule(every, f"item_at(g, field_index(out, {n!r}), out)") for n in names))
    jvps = (_rule(every, f"drop_fields(g, _obj, {names!r})"),
            *(_rule(every, f"item_tangent_at(g, field_index(out, {n!r}), out)")
              for n in names))
    src = f"_obj._replace({', '.join(f'{n}={v}' for n, v in zip(names, vs))})"
    return Op(name="._replace", fn=lambda _obj, *values: rp.replace_fields(_obj, names, *values),
              params=params, spelling=ast.parse(src, mode="eval").body, spelling_src=src,
              vjps=vjps, jvps=jvps, family=_FAM,
              derivation="the named fields' slots of g to their values, the rest to obj")


@functools.cache
def field_op(name: str) -> Op:
    """``obj.<name>`` of a namedtuple (`cache.z`): its field, by name."""
    src = f"_obj.{name}"
    every = ("g", "out", "_obj")
    return Op(name=f".{name}", fn=operator.attrgetter(name), params=(Param("_obj"),),
              spelling=ast.parse(src, mode="eval").body, spelling_src=src,
              vjps=(_rule(every, f"field_grad(g, _obj, {name!r})"),),
              jvps=(_rule(every, f"field_tangent(g, _obj, {name!r})"),), family=_FAM,
              derivation="g in the slot of that field")


# --- dict literals ------------------------------------------------------------------------------


def _rule(params: tuple, body: str) -> Rule:
    fn = eval(f"lambda {', '.join(params)}: {body}", globals())  # (our own text)
    return Rule(fn=fn, params=params, expr=ast.parse(body, mode="eval").body, source=body)


def _make_dict(*pairs):
    return dict(zip(pairs[::2], pairs[1::2]))


@functools.cache
def dict_literal_op(n: int) -> Op:
    """``{k0: v0, ..., k<n-1>: v<n-1>}`` (also ``dict(a=x)``): keys carry no derivative; the
    value under a key gets that slot of the cotangent."""
    names = [f"{c}{i}" for i in range(n) for c in ("k", "v")]
    params = tuple(Param(p) for p in names)
    every = ("g", "out", *names)
    vjps = tuple(None if p.startswith("k") else _rule(every, f"key_grad(g, k{p[1:]}, {p})")
                 for p in names)
    jvps = tuple(None if p.startswith("k") else _rule(every, f"keyed_tangent(g, k{p[1:]}, out)")
                 for p in names)
    src = "{" + ", ".join(f"k{i}: v{i}" for i in range(n)) + "}"
    return Op(name="dict", fn=_make_dict, params=params,
              spelling=ast.parse(src, mode="eval").body, spelling_src=src, vjps=vjps,
              jvps=jvps, differentiable=n > 0, family=_FAM,
              derivation="the value under each key gets that slot of g")


del np
