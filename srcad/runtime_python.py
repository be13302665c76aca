"""Runtime helpers for the Python that people write: lists built by comprehensions and
``lst.append``, dict literals and comprehensions.

The frontend lowers ``[f(w) for w in ws]`` to a loop that builds the list with
``ys = list_append(ys, f(w))`` (a new list each time: values are never mutated in place),
``{k: v * 2 for k, v in d.items()}`` to ``out = dict_set(out, k, d[k] * 2)``, and
``{"a": x, "b": y}`` to a dict literal op (srcad/ops/python_rows.py). Their derivatives:

* A list's or dict's cotangent (reverse mode) is a `GradTree` (runtime.py), slot by index or
  key, a missing slot zero; the helpers here read a slot (`last_grad`, `key_grad`), drop
  slots (`head_grad`, `without_key`) or build one (`slot_tree`, `grow_grad`), and accept any
  derivative container numpy's own rules hand them (a GradTree, a list or tuple of pieces,
  an array stacked along axis 0, or a plain zero).
* A list's or dict's tangent (forward mode) is an `Items` list or a `Slots` dict: a real list
  or dict of tangents (numpy and indexing take it as the value's tangent) that adds item by
  item, as two tangents of one list must; slots known to be zero are marked, so that adding
  them costs nothing.

Every helper here is a row of the op table (srcad/ops/python_rows.py), so that generated
code calling them can be differentiated again.
"""

from __future__ import annotations

import collections
import math
import statistics

import types

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .errors import UnsupportedSyntaxError
from .gradtree import GradTree, Held, zeros_grad

# methods that change their object in place (a list's, a dict's, an array's): the frontend's
# table (frontend/opaque.py re-exports it) and the shape probe's (interpret.py)
MUTATING = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
            "popitem", "add", "discard", "reverse", "sort", "fill", "resize", "put",
            "partition", "itemset", "setflags", "setfield", "shuffle", "__setitem__"}

# -- containers of per-item derivatives -------------------------------------------------------


def _is_zero(v) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, (bool, np.generic))
                         and v == 0)


class Items(list):
    """The tangent of a list, item by item: adds item by item (Python's list `+` would
    concatenate). `zero` marks the items known to be zero."""

    __slots__ = ("zero",)

    def __init__(self, items=(), zero=frozenset()):
        super().__init__(items)
        self.zero = frozenset(zero)

    def __add__(self, other):
        if _is_zero(other):
            return self
        other_zero = getattr(other, "zero", frozenset())
        n = max(len(self), _length(other))
        out, zero = [], set()
        for i in range(n):
            a = self[i] if i < len(self) else None
            b = _item(other, i)
            if a is None or i in self.zero:
                out.append(b if b is not None else a)
                if b is None or i in other_zero:
                    zero.add(i)
            elif b is None or i in other_zero:
                out.append(a)
            else:
                out.append(a + b)
        return Items(out, zero)

    __radd__ = __add__

    def __iadd__(self, other):
        return self.__add__(other)

    def __repr__(self) -> str:
        return f"Items({list(self)!r})"


class Slots(dict):
    """The tangent of a dict, key by key: adds key by key. `zero` marks keys known zero."""

    __slots__ = ("zero",)

    def __init__(self, items=(), zero=frozenset()):
        super().__init__(items)
        self.zero = frozenset(zero)

    def __add__(self, other):
        if _is_zero(other):
            return self
        other_zero = getattr(other, "zero", frozenset())
        keys = list(self) + [k for k in _keys(other) if k not in self]
        out, zero = {}, set()
        for k in keys:
            a = self.get(k)
            b = _slot(other, k)
            if a is None or k in self.zero:
                out[k] = b if b is not None else a
                if b is None or k in other_zero:
                    zero.add(k)
            elif b is None or k in other_zero:
                out[k] = a
            else:
                out[k] = a + b
        return Slots(out, zero)

    __radd__ = __add__

    def __iadd__(self, other):
        return self.__add__(other)

    def __repr__(self) -> str:
        return f"Slots({dict(self)!r})"


def _length(d) -> int:
    if isinstance(d, GradTree):
        return d.length if d.length is not None else (max(d.slots, default=-1) + 1)
    if isinstance(d, (list, tuple)) or (isinstance(d, np.ndarray) and d.ndim > 0):
        return len(d)
    return 0


def _keys(d):
    if isinstance(d, GradTree):
        return list(d.slots)
    if isinstance(d, dict):
        return list(d)
    return []


def _item(d, i):
    """Item `i` of a derivative container, None where it is (certainly) zero."""
    if d is None or _is_zero(d):
        return None
    if isinstance(d, GradTree):
        return d.slots.get(i)
    if isinstance(d, (list, tuple, np.ndarray)):
        return d[i] if i < len(d) else None
    if isinstance(d, dict):
        return d.get(i)
    raise TypeError(f"srcad: not the derivative of a list: {type(d).__name__}")


def _slot(d, key):
    """Slot `key` of a dict's derivative container, None where it is zero."""
    if d is None or _is_zero(d):
        return None
    if isinstance(d, GradTree):
        return d.slots.get(key)
    if isinstance(d, dict):
        return d.get(key)
    raise TypeError(f"srcad: not the derivative of a dict: {type(d).__name__}")


# -- lists ------------------------------------------------------------------------------------


def list_append(xs, x):
    """``xs.append(x)`` as a value: a new list (xs unchanged)."""
    return [*xs, x]


def head_grad(g, xs):
    """The cotangent of `list_append`'s xs: g without its last item."""
    n = len(xs)
    if isinstance(g, GradTree):
        return GradTree({i: v for i, v in g.slots.items() if isinstance(i, int) and i < n}, n,
                        like=xs)
    return GradTree({i: v for i in range(n) if (v := _item(g, i)) is not None}, n, like=xs)


def last_grad(g, xs, x):
    """The cotangent of `list_append`'s x: the last item of g (zeros if g has none)."""
    v = _item(g, len(xs))
    return zeros_grad(x) if v is None else v


def grow_grad(g, xs):
    """The transpose of `head_grad`: the items of g, then a zero (a list one longer than xs)."""
    n = len(xs)
    return GradTree({i: v for i in range(n) if (v := _item(g, i)) is not None}, n + 1)


def slot_tree(g, xs):
    """The transpose of `last_grad`: g as the last item of a list one longer than xs."""
    n = len(xs)
    return GradTree({n: g}, n + 1)


def copied_as_itself(x) -> None:
    """srcad/pyfuncs.py's copy.copy / copy.deepcopy give back what they do not spell out
    (a number, a string, a tuple: immutable, as Python gives them back); a mutable object
    there (a user object srcad runs as written, not one frontend/objects.py follows and
    copies itself) would be the object itself, not a copy: refused where the call runs."""
    if isinstance(x, (int, float, complex, str, bytes, tuple, frozenset, type(None),
                      np.generic, type)) or callable(x):
        return
    raise UnsupportedSyntaxError(
        f"copy.copy / copy.deepcopy of a {type(x).__name__} object that srcad runs as "
        f"written: its copy would be the object itself",
        hint="copy an object the function builds and uses through its attributes and "
        "methods (srcad follows those), or build a new one instead of copying")


def object_attribute(obj, name: str):
    """``obj.<name>`` read as the code runs: the object's own list that generated code changes
    in place (``self.cache.append(z)`` on a list kept across calls: frontend/attrstate.py,
    objects.py), where the function reads its changed copy by a local."""
    return getattr(obj, name)


def list_concat(xs, ys):
    """``xs + ys`` of two lists as a value (``lst.insert(i, v)`` is ``lst[:i] + [v] +
    lst[i:]``). The normaliser reads `+` with a list display on one side as this; where the
    other side is a numpy array or number (``x + [1.0, 2.0]``), numpy adds elementwise
    instead, which srcad cannot tell before the call: refused, never concatenated."""
    for side in (xs, ys):
        if isinstance(side, (np.ndarray, np.generic, int, float)):
            raise UnsupportedSyntaxError(
                f"`+` of a {type(side).__name__} and a list: numpy adds the list to it "
                f"elementwise, where srcad reads `a + [...]` as Python's list concatenation",
                hint="write the list as an array (`x + np.array([1.0, 2.0])`) to add it; "
                "to join lists, make both sides lists")
    return [*xs, *ys]


def take_span(g, start, xs, total):
    """Items start .. start + len(xs) of the list cotangent g (of a list `total` long), as
    xs's cotangent."""
    n = len(xs)
    return GradTree({i: v for i in range(n) if (v := _item(g, start + i)) is not None}, n,
                    like=xs)


def put_span(g, start, xs, total):
    """The transpose of `take_span`: g's items at start .. in a list `total` long."""
    return GradTree({start + i: v for i in range(len(xs)) if (v := _item(g, i)) is not None},
                    total)


def span_tangent(g, start, xs, out):
    """The tangent of `list_concat` through one operand (its items at `start`): zeros
    elsewhere."""
    items, zero = [], set()
    for i, v in enumerate(out):
        t = _item(g, i - start) if start <= i < start + len(xs) else None
        if t is None:
            zero.add(i)
            t = _zero_like(v)
        items.append(t)
    return Items(items, zero)


def list_repeat(xs, n):
    """``xs * n`` of a list (``[h0] * T``): its items n times over, the same objects, as
    Python's list repeat holds them. (A count that is an array or a float -- `[0.5, 2.0] *
    x` -- is numpy's elementwise product, which srcad cannot tell before the call: refused.)"""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise UnsupportedSyntaxError(
            f"`*` of a list and a {type(n).__name__}: numpy multiplies the list by it "
            f"elementwise, where srcad reads `[...] * n` as Python's list repeat",
            hint="write the list as an array (`np.array([0.5, 2.0]) * x`) to multiply it")
    return list(xs) * n


def repeat_grad(g, xs, n):
    """xs's cotangent from the cotangent g of ``xs * n``: item i gathers the n copies' items,
    the last copy's first (the order of a reverse sweep, as one array read n times is)."""
    m = len(xs)
    slots = {}
    for k in reversed(range(max(n, 0))):
        for i in range(m):
            v = _item(g, k * m + i)
            if v is not None:
                slots[i] = slots[i] + v if i in slots else v
    return GradTree(slots, m, like=xs)


def repeat_spread(g, xs, n):
    """The transpose of `repeat_grad`: g's items at each of the n copies of xs."""
    m = len(xs)
    return GradTree({k * m + i: v for k in range(max(n, 0)) for i in range(m)
                     if (v := _item(g, i)) is not None}, m * max(n, 0))


def repeat_tangent(g, xs, n):
    """The tangent of `list_repeat` (xs's tangents n times over)."""
    items, zero = [], set()
    for k in range(max(n, 0)):
        for i, v in enumerate(xs):
            t = _item(g, i)
            if t is None:
                zero.add(k * len(xs) + i)
                t = _zero_like(v)
            items.append(t)
    return Items(items, zero)


def _zero_like(v):
    if type(v) is np.ndarray:  # (np.zeros takes its pages lazily: a big zero item is cheap)
        return np.zeros(v.shape, v.dtype)
    return zeros_grad(v)


def append_tangents(g, xs, x):
    """The tangent of `list_append(xs, x)` through xs: xs's tangents, then zero for x."""
    items = [v if (v := _item(g, i)) is not None else _zero_like(xs[i]) for i in range(len(xs))]
    zero = {i for i in range(len(xs)) if _item(g, i) is None} | {len(xs)}
    return Items(items + [_zero_like(x)], zero)


def appended_tangent(g, xs):
    """The tangent of `list_append(xs, x)` through x: zeros for xs's items, then g."""
    return Items([_zero_like(v) for v in xs] + [g], range(len(xs)))


# -- namedtuples (`Cache(x=x, z=z)` built, `cache.z` read: ops/python_rows.py) ---------------


def field_index(obj, name: str) -> int:
    """The position of the field `name` in the namedtuple `obj`."""
    fields = getattr(type(obj), "_fields", None)
    if not isinstance(obj, tuple) or fields is None or name not in fields:
        raise TypeError(f"srcad: `.{name}` was read as a namedtuple's field, but the object "
                        f"is a {type(obj).__name__}")
    return fields.index(name)


def item_at(ct, i, whole):
    """The cotangent of item `i` of the tuple `whole` built from its items: ct's slot i
    (zeros where it has none)."""
    v = _item(ct, i)
    return zeros_grad(whole[i]) if v is None else v


def item_tangent_at(t, i, whole):
    """The tangent of the tuple `whole` through its item `i`: t there, zeros elsewhere (the
    transpose of `item_at`)."""
    return Items([t if j == i else _zero_like(v) for j, v in enumerate(whole)],
                 [j for j in range(len(whole)) if j != i])


def field_grad(ct, obj, name):
    """The cotangent of the namedtuple `obj` through ``obj.<name>``: ct in that slot."""
    return GradTree({field_index(obj, name): ct}, len(obj), like=obj)


def replace_fields(obj, names, *values):
    """``obj._replace(name0=v0, ...)`` of a namedtuple, the names in a tuple."""
    return obj._replace(**dict(zip(names, values)))


def drop_fields(d, obj, names):
    """The derivative of the namedtuple `obj` with the fields `names` zero (what flows back
    to, or forward from, the tuple `_replace` started from); its own transpose."""
    idx = {field_index(obj, n) for n in names}
    if d is None or _is_zero(d):
        return d
    if isinstance(d, GradTree):
        return GradTree({k: v for k, v in d.slots.items() if k not in idx}, len(obj), like=obj)
    items = [_zero_like(obj[i]) if i in idx else v for i, v in enumerate(d)]
    return Items(items, set(idx) | set(getattr(d, "zero", ())))


def field_tangent(t, obj, name):
    """The tangent of ``obj.<name>`` from obj's tangent t (the transpose of `field_grad`)."""
    return item_at(t, field_index(obj, name), obj)


# -- dicts ------------------------------------------------------------------------------------


def _dict_copy(d):
    """A shallow copy of the same kind: `defaultdict.copy` keeps its default_factory,
    `OrderedDict.copy` its order."""
    return dict(d) if type(d) is dict or not isinstance(d, dict) else d.copy()


def dict_set(d, key, value):
    """``d[key] = value`` on a dict as a value: a new dict (d unchanged) of d's kind (a
    defaultdict keeps its default: a later read of a missing key makes it, as in Python)."""
    out = _dict_copy(d)
    out[key] = value
    return out


def dict_keys(d):
    """The keys of a dict, as a list (what ``for k in d`` / ``d.items()`` walk); Python's
    TypeError for what is not a mapping (``{**xs}`` of a list)."""
    if not hasattr(d, "keys"):
        raise TypeError(f"'{type(d).__name__}' object is not a mapping")
    return list(d.keys())


def sort_order(keys, reverse=False):
    """The positions of `keys` in the order Python's ``sorted(..., reverse=reverse)`` puts
    them (stable; equal keys keep their order, reversed or not): numbers, strings, tuples --
    whatever Python compares. A permutation: no derivative."""
    if not isinstance(keys, (list, tuple)):
        keys = list(keys)
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=bool(reverse))


def key_grad(g, key, value):
    """The cotangent of the value stored under `key`: g's slot (zeros if it has none)."""
    v = _slot(g, key)
    return zeros_grad(value) if v is None else v


def without_key(g, key):
    """g without the slot `key` (the cotangent of the dict `dict_set` wrote into); its own
    transpose."""
    if g is None or _is_zero(g):
        return GradTree()
    return GradTree({k: v for k in _keys(g) if k != key and (v := _slot(g, k)) is not None})


def dict_copy(d):
    """``dict(d)``: a dict's own copy (the call's copy of a dict an object keeps across calls,
    frontend/attrstate.py)."""
    return dict(d)


def ordered_dict(d):
    """``collections.OrderedDict(...)``: the dict its entries make, as an OrderedDict (the
    frontend builds the entries as a dict literal first: frontend/calls.py), so that
    ``isinstance(d, OrderedDict)``, ``type(d)``, ``d.move_to_end`` are Python's."""
    return collections.OrderedDict(d)


def mapping_grad(g, d):
    """The cotangent of ``dict_copy(d)``: d's own, slot by slot (its own transpose's
    partner is `mapping_tangent`)."""
    if g is None or _is_zero(g):
        return GradTree()
    return GradTree({k: v for k in _keys(g) if k in d and (v := _slot(g, k)) is not None})


def mapping_tangent(t, d):
    """The tangent of ``dict_copy(d)``: d's, key by key (zeros where t has none)."""
    items = {k: _slot(t, k) if t is not None and not _is_zero(t) else None for k in d}
    return Slots({k: zeros_grad(d[k]) if v is None else v for k, v in items.items()},
                 [k for k, v in items.items() if v is None])


def key_tree(g, key):
    """The transpose of `key_grad`: g in the slot `key`."""
    return GradTree({key: g})


def keyed_tangent(g, key, out):
    """The tangent of a dict `out` through the value under `key`: zeros elsewhere."""
    return Slots({k: (g if k == key else zeros_grad(v)) for k, v in out.items()},
                 [k for k in out if k != key])


def keys_tangent(g, key, out):
    """The tangent of ``dict_set(d, key, v)`` through d: d's tangents, zero under `key`."""
    items, zero = {}, set()
    for k, v in out.items():
        t = None if k == key else _slot(g, k)
        items[k] = zeros_grad(v) if t is None else t
        if t is None:
            zero.add(k)
    return Slots(items, zero)


def dict_without(d, key):
    """`d` after ``d.pop(key, ...)``, as a value: a new dict of d's kind without `key`."""
    out = _dict_copy(d)
    out.pop(key, None)
    return out


def nditer_indices(shape, strides, itemsize: int, order: str = "K",
                   zerosize_ok: bool = False) -> list:
    """The index of each item ``np.nditer(x, order=order)`` gives, in its order, from x's
    layout alone (frontend/pyforms.py writes ``for v in np.nditer(x)`` as a loop over these,
    ``v = x[i]``): the iterator run over an array of x's shape and strides that holds no
    data of x (its memory order with negative strides flipped, as nditer's 'K' walks it).
    A zero-size x raises numpy's ValueError unless `zerosize_ok` (nditer's flag)."""
    shape, strides = tuple(shape), tuple(strides)
    if 0 in shape:
        if not zerosize_ok:
            raise ValueError("Iteration of zero-sized operands is not enabled")
        return []
    if order == "A":  # (numpy's: 'F' where x is Fortran-contiguous, else 'C')
        want, f_contiguous = itemsize, True
        for n, st in zip(shape, strides):
            if n != 1 and st != want:
                f_contiguous = False
            want *= n
        order = "F" if f_contiguous else "C"
    low = sum((n - 1) * st for n, st in zip(shape, strides) if st < 0)
    high = sum((n - 1) * st for n, st in zip(shape, strides) if st > 0)
    probe = as_strided(np.zeros(high - low + 1, dtype=np.uint8)[-low:], shape=shape,
                       strides=strides, writeable=False)
    it = np.nditer(probe, flags=["multi_index"], order=order)
    out = []
    while not it.finished:
        out.append(it.multi_index)
        it.iternext()
    return out


def same_length(seq, n: int, name: str) -> None:
    """Where a loop over a module's list runs that srcad unrolled by its length when the call
    began (frontend/objects.py `_length_checks`): a list changed to another length during the
    call, before the loop, is refused here rather than walked by its old length."""
    if len(seq) != n:
        raise UnsupportedSyntaxError(
            f"the list `{name}` had {n} items when the call began and has {len(seq)} where "
            f"the loop over it runs: srcad unrolled the loop by its length at the call's "
            f"start", hint=f"change `{name}` before calling the function, or loop over a list "
            f"the function builds itself")


def class_attribute(cls, attr: str):
    """(the class along `cls`'s MRO whose __dict__ holds `attr`, the raw entry there -- a
    function, a property, a descriptor, a value), or (None, None): what Python's lookup finds
    on the class, before the descriptor protocol runs."""
    for klass in cls.__mro__:
        if attr in vars(klass):
            return klass, vars(klass)[attr]
    return None, None


def stores_elsewhere(raw) -> bool:
    """Is a class's raw entry `raw` a data descriptor whose `__set__` runs code (a property, a
    user's descriptor class) -- not an instance slot (``__slots__``) or a builtin's, which
    store the value itself?"""
    return raw is not None and hasattr(type(raw), "__set__") and not isinstance(
        raw, (types.MemberDescriptorType, types.GetSetDescriptorType))


def attribute_stored(obj, attr: str, name: str) -> None:
    """The check before ``p.W = v`` where the object the name `p` holds is not known when the
    function is compiled (``p = layer.W``, ``for p in model.parameters()``): a plain
    attribute of a user object is stored as written (frontend/normalize.py). Refused here,
    where the store runs: ``.data``, ``.shape``, ``.dtype`` or ``.strides`` of a numpy array
    (numpy would reshape or reinterpret it in place), and an attribute the object's class
    makes a data descriptor -- a property's setter stores elsewhere (``self._W``), where the
    reads srcad follows would not see the value (normalize.py `stored_by_descriptor` calls
    the setter where the object is known)."""
    if isinstance(obj, (np.ndarray, np.generic)):
        if attr in ("data", "shape", "dtype", "strides"):
            raise UnsupportedSyntaxError(
                f"`{name}.{attr} = ...` changes an array in place (numpy reshapes or "
                f"reinterprets it)", hint=f"make a new array: `{name} = {name}.reshape(...)`")
        return
    raw = class_attribute(type(obj), attr)[1]
    if stores_elsewhere(raw):
        raise UnsupportedSyntaxError(
            f"`{name}.{attr} = ...`: the {type(obj).__name__}'s class makes `{attr}` a "
            f"{'property' if isinstance(raw, property) else 'descriptor'}, whose setter srcad "
            f"follows only on an object known where the function is compiled",
            hint=f"store through the object's own name (a global, `self.layer`, an item of a "
            f"list the module holds), or into the attribute the {attr} setter stores")


def zip_covers(seq, steps: int, name: str) -> None:
    """Where a loop zipping a list of user objects with `seq` starts (frontend/loops.py
    `objects_walked`: written out once per object, `steps` of them): `seq` shorter than that
    would end Python's zip sooner, a loop srcad did not write -- refused here."""
    if hasattr(seq, "__len__") and len(seq) >= steps:
        return
    size = len(seq) if hasattr(seq, "__len__") else "an unknown number of"
    raise UnsupportedSyntaxError(
        f"the loop zips a list of {steps} objects with `{name}`'s sequence of {size} items: "
        f"srcad wrote the loop out once per object, and zip would stop sooner here",
        hint="zip the objects with a sequence at least as long (or slice the objects' list "
        "to the length you mean)")


def zip_lengths(strict, *seqs) -> None:
    """The check ``zip(a, b, strict=True)`` makes, made before the zip is walked (frontend/
    pyforms.py `zip_strict`): Python's ValueError, with its message, where the arguments'
    lengths differ. An argument without a length (an iterator) is not measured."""
    if not strict:
        return
    sizes = [len(s) if hasattr(s, "__len__") else None for s in seqs]
    known = [n for n in sizes if n is not None]
    if len(known) < 2 or min(known) == max(known):
        return
    first = min(known)
    short = sizes.index(first)  # (the argument Python finds exhausted first)
    if short == 0:
        i = next(k for k, n in enumerate(sizes) if n is not None and n > first)
        raise ValueError(f"zip() argument {i + 1} is longer than argument"
                         f"{' ' if i == 1 else 's 1-'}{i}")
    raise ValueError(f"zip() argument {short + 1} is shorter than argument"
                     f"{' ' if short == 1 else 's 1-'}{short}")


def star_count(seq, n: int, callee: str) -> None:
    """The check Python makes of ``obj.method(a, *seq)`` where srcad spelled the items out
    by index (frontend/objects.py `_spread_positional`): the method takes `n` more."""
    if len(seq) != n:
        raise TypeError(f"{callee}() takes {n} more positional arguments but "
                        f"{len(seq)} were given")


def spread_keywords(d, names: tuple, given: tuple, callee: str) -> None:
    """The check Python makes of ``callee(..., **d)`` where srcad spelled the call out by the
    callee's parameters `names` the call leaves to `d` (``Dense(n_in=d["n_in"],
    act=d.get("act", "tanh"))``; `given`: those it passes itself): a key that is no such
    parameter raises Python's TypeError."""
    for k in d:
        if not isinstance(k, str):
            raise TypeError(f"{callee}() keywords must be strings")
        if k in given:
            raise TypeError(f"{callee}() got multiple values for argument '{k}'")
        if k not in names:
            raise TypeError(f"{callee}() got an unexpected keyword argument '{k}'")


# (reads its arguments, may raise, stores nothing: frontend/opaque.py OpaqueOp.checks_only)
same_length.srcad_checks_only = True
spread_keywords.srcad_checks_only = True
copied_as_itself.srcad_checks_only = True
star_count.srcad_checks_only = True
zip_lengths.srcad_checks_only = True
zip_covers.srcad_checks_only = True
attribute_stored.srcad_checks_only = True


def dict_get(d, key, default=None):
    """``d.get(key, default)``."""
    return d.get(key, default)


def get_grad_d(g, d, key):
    """The cotangent of `dict_get`'s d: g in the slot `key` if d has it."""
    return GradTree({key: g}) if key in d else GradTree()


def get_grad_default(g, d, key, default):
    """The cotangent of `dict_get`'s default: g if d lacks `key`."""
    return zeros_grad(default) if key in d else g


def get_tangent(g, d, key, out):
    """The tangent of ``dict_get(d, key, default)`` through d."""
    v = _slot(g, key) if key in d else None
    return zeros_grad(out) if v is None else v


def get_tangent_default(g, d, key, out):
    """The tangent of ``dict_get(d, key, default)`` through default."""
    return zeros_grad(out) if key in d else g


def sequence_grad(g, x):
    """The cotangent of ``list(x)`` / ``tuple(x)``: x's own (a list's slots; an array's rows
    stacked; a dict's keys carry none)."""
    if isinstance(x, dict) or g is None or _is_zero(g):
        return GradTree() if isinstance(x, dict) else g
    n = len(x)
    if isinstance(x, np.ndarray):
        return np.stack([v if (v := _item(g, i)) is not None else np.zeros_like(x[i])
                         for i in range(n)]).astype(x.dtype, copy=False)
    return GradTree({i: v for i in range(n) if (v := _item(g, i)) is not None}, n, like=x)


def to_float(x):
    """``float(x)`` as a function the table can hold: a Python float of a number, a numpy
    scalar or a size-1 array (its derivative: the identity, in the generated code's adjoint)."""
    return float(x)


def py_fsum(a):
    """``math.fsum`` of a 1-D float array (pyfuncs.fsum): Python's exactly rounded sum, so the
    value is the one calling math.fsum gives; its derivative is the sum's."""
    return math.fsum(a.tolist())


def py_mean(a, exact):
    """``statistics.mean`` (exact: the correctly rounded mean of the exact sum) or
    ``statistics.fmean`` (math.fsum over n) of a 1-D float array, as a Python float."""
    return float(statistics.mean(a.tolist()) if exact else statistics.fmean(a.tolist()))


def py_variance(a, ddof):
    """``statistics.variance`` (ddof=1) or ``statistics.pvariance`` (ddof=0) of a 1-D float
    array: Python's exact sums of squared deviations, correctly rounded."""
    f = statistics.variance if ddof else statistics.pvariance
    return float(f(a.tolist()))


def py_stdev(a, ddof):
    """``statistics.stdev`` (ddof=1) or ``statistics.pstdev`` (ddof=0) of a 1-D float array:
    the correctly rounded square root of the exact variance."""
    f = statistics.stdev if ddof else statistics.pstdev
    return float(f(a.tolist()))


def py_dist(a, b):
    """``math.dist`` of two 1-D float arrays of coordinates: Python's own (correctly rounded
    hypot of the differences), as a Python float."""
    return math.dist(a.tolist(), b.tolist())


def py_geometric_mean(a):
    """``statistics.geometric_mean`` of a 1-D float array, Python's value."""
    return float(statistics.geometric_mean(a.tolist()))


def py_harmonic_mean(a, w):
    """``statistics.harmonic_mean`` of a 1-D float array with weights `w` (ones where the
    user gave none: Python's sum of weights is then n, the same value)."""
    return float(statistics.harmonic_mean(a.tolist(), w.tolist()))


def py_covariance(a, b):
    """``statistics.covariance`` (n - 1 in the denominator) of two 1-D float arrays."""
    return float(statistics.covariance(a.tolist(), b.tolist()))


def py_correlation(a, b, method="linear"):
    """``statistics.correlation`` of two 1-D float arrays: Pearson's ('linear') or, for
    method='ranked' (Python 3.12), Spearman's of the ranks."""
    if method == "linear":
        return float(statistics.correlation(a.tolist(), b.tolist()))
    return float(statistics.correlation(a.tolist(), b.tolist(), method=method))


def sequence_tangent(g, x):
    """The tangent of ``list(x)`` / ``tuple(x)``: item by item."""
    if isinstance(x, dict):
        return Items([0.0] * len(x), range(len(x)))
    items = [_item(g, i) for i in range(len(x))]
    return Items([_zero_like(x[i]) if v is None else v for i, v in enumerate(items)],
                 {i for i, v in enumerate(items) if v is None})


# -- `d[k] = v` / `xs[i] = v` on a dict or list the function holds (runtime.setitem) ----------


def _norm(index, n):
    """A list index as the slot it names (negative counts from the end)."""
    if isinstance(index, np.integer):
        index = int(index)
    if n is not None and isinstance(index, int) and not isinstance(index, bool) and index < 0:
        index += n
    return index


def container_set(x, index, value):
    """``x[index] = value`` on a dict or list as a value: a new dict or list (x unchanged),
    as copy on write does for an array."""
    out = _dict_copy(x) if isinstance(x, dict) else list(x)
    for k in (index if isinstance(index, Held) else (index,)):
        out[k] = value
    return out


def without_item(g, index):
    """The cotangent of the container `container_set` wrote into: g without the slot it
    wrote (a projection, its own transpose)."""
    if g is None or _is_zero(g):
        return g
    n = _length(g) if not isinstance(g, dict) and (
        not isinstance(g, GradTree) or g.length is not None) else None
    keys = {_norm(k, n) for k in (index if isinstance(index, Held) else (index,))}
    if isinstance(g, GradTree):
        return GradTree({k: v for k, v in g.slots.items() if k not in keys}, g.length, g.like)
    if isinstance(g, dict):
        return GradTree({k: v for k, v in g.items() if k not in keys})
    return GradTree({i: v for i in range(n) if i not in keys and (v := _item(g, i)) is not None},
                    n)


def item_grad(g, index, value):
    """The cotangent of the value `container_set` stored: g's slot (zeros if it has none)."""
    n = None
    if isinstance(g, GradTree):
        n = g.length
    elif isinstance(g, (list, tuple)):
        n = len(g)
    key = _norm(index, n)
    v = _slot(g, key) if not isinstance(g, (list, tuple)) else _item(g, key)
    if v is None:
        return 0.0 if value is None else zeros_grad(value)
    return v


def container_tangent_x(g, index, out):
    """The tangent of ``container_set(x, index, v)`` through x: x's tangents, zero in the
    slot written."""
    if isinstance(out, dict) and not isinstance(index, Held):
        return keys_tangent(g, index, out)
    if isinstance(out, dict):
        return Slots({k: zeros_grad(v) if k in index or (t := _slot(g, k)) is None else t
                      for k, v in out.items()},
                     [k for k in out if k in index or _slot(g, k) is None])
    keys = {_norm(k, len(out)) for k in (index if isinstance(index, Held) else (index,))}
    items = [_zero_like(v) if i in keys or (t := _item(g, i)) is None else t
             for i, v in enumerate(out)]
    return Items(items, {i for i in range(len(out)) if i in keys or _item(g, i) is None})


def container_tangent_value(g, index, out):
    """The tangent of ``container_set(x, index, v)`` through v: g in the slot written,
    zeros elsewhere."""
    if isinstance(out, dict) and not isinstance(index, Held):
        return keyed_tangent(g, index, out)
    if isinstance(out, dict):
        return Slots({k: g if k in index else zeros_grad(v) for k, v in out.items()},
                     [k for k in out if k not in index])
    keys = {_norm(k, len(out)) for k in (index if isinstance(index, Held) else (index,))}
    return Items([g if i in keys else _zero_like(v) for i, v in enumerate(out)],
                 [i for i in range(len(out)) if i not in keys])


__all__ = ["py_correlation", "py_covariance", "py_dist", "py_geometric_mean",
           "py_harmonic_mean", "Items", "Slots", "append_tangents", "appended_tangent",
           "container_set",
           "container_tangent_value", "container_tangent_x", "item_grad", "without_item",
           "dict_get", "get_grad_d", "get_grad_default", "get_tangent",
           "get_tangent_default", "sequence_grad", "sequence_tangent", "dict_keys",
           "dict_set", "grow_grad", "head_grad", "key_grad", "key_tree", "keyed_tangent",
           "keys_tangent", "last_grad", "list_append", "slot_tree", "without_key"]
