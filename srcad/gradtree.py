"""The gradient of a container (a dict, list or tuple: a pytree), built slot by slot.

Generated code and the op table's helpers build a container's cotangent as a `GradTree`: one
slot per item that a gradient reached (``unindex(g, params, "W")`` for ``params["W"]``), adding
slot by slot. Where numpy treated a list as one array (``np.sum(xs)``) the cotangent is an
array whose row i is item i's: adding one to a GradTree, or reading a slot of it, takes the
rows apart. `srcad.runtime.as_grad` turns either into the argument's own structure.

    >>> t = GradTree({0: 1.0}, 2) + np.array([10.0, 20.0])
    >>> sorted(t.slots.items())
    [(0, np.float64(11.0)), (1, np.float64(20.0))]
"""

from __future__ import annotations

import numpy as np


class _Zero(float):
    """0.0 that can be indexed (to itself): the missing slot of a nested tuple's cotangent,
    ``dout[0][1]`` where no cotangent reached ``dout[0]``."""

    def __getitem__(self, key):
        return self

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """Promote as a Python float does (NEP 50: a weak scalar): a float32 gradient plus
        this zero stays float32 (a float subclass is otherwise taken as a float64 scalar)."""
        inputs = tuple(0.0 if isinstance(x, _Zero) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)


_ZERO = _Zero(0.0)


class Held(tuple):
    """The slots of one list or dict that hold one object written in place through one of
    them (`hs = [h] * T; hs[0] += v`, `for p in ps: p -= t` where ps holds p twice): numpy
    writes the one array, so each of those slots sees it (runtime.held_at). Used as the
    `index` of the write's rules: a store into each, a cotangent summed over them."""

    __slots__ = ()


class GradTree:
    """The gradient of a dict, list or tuple argument (a pytree), built slot by slot.

    A missing slot is zero. `+` merges two trees (adding where both have a slot); `as_grad`
    turns the tree into the argument's own structure.
    """

    __slots__ = ("slots", "length", "like")
    # numpy defers to GradTree's own operators (`array + tree`), never making an object array
    __array_ufunc__ = None

    def __init__(self, slots=None, length=None, like=None):
        self.slots = dict(slots or {})
        self.length = length  # for a list or tuple: how many items (unpacking yields them)
        self.like = like  # the value this is the gradient of, when known (for missing slots)

    def __add__(self, other):
        out = GradTree(self.slots, self.length, self.like)
        out += other
        return out

    __radd__ = __add__

    def __iadd__(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool) and other == 0:
            return self
        if not isinstance(other, GradTree):
            # the cotangent of a list or tuple that numpy treated as one array (np.sum(xs)),
            # or a sequence of pieces: item i's part is other[i]
            other = _as_tree(other, self.length)
        for k, v in other.slots.items():
            self.slots[k] = v if k not in self.slots else self.slots[k] + v
        if other.length is not None:
            self.length = max(self.length or 0, other.length)
        if self.like is None:
            self.like = other.like
        return self

    def __getitem__(self, key):
        """A slot of the gradient (a missing slot is zero: zeros like that item of `like`
        when the tree knows it): generated code that is itself differentiated reads a tuple
        cotangent this way."""
        if isinstance(key, Held):  # (one object in several slots: the sum, last slot first)
            parts = [self[k] for k in reversed(key)]
            out = parts[0]
            for p in parts[1:]:
                out = out + p
            return out
        if key in self.slots:
            return self.slots[key]
        if self.length is not None and isinstance(key, int) and -self.length <= key < 0 \
                and key + self.length in self.slots:  # (a list's slots: xs[-1] is xs[n-1])
            return self.slots[key + self.length]
        if isinstance(self.like, (list, tuple)) and isinstance(key, int) and \
                -len(self.like) <= key < len(self.like):
            return zeros_grad(self.like[key])
        if isinstance(self.like, dict) and key in self.like:
            return zeros_grad(self.like[key])
        return _ZERO

    def __iter__(self):
        """The slots of a list or tuple's gradient in order (`da, db = d` for `s = (a, b)`)."""
        if self.length is None:
            raise TypeError("srcad: the gradient of a dict cannot be unpacked")
        return iter([self[i] for i in range(self.length)])

    def __repr__(self) -> str:
        return f"GradTree({self.slots!r})"


def zeros_grad(x):
    """A zero gradient for `x`: zeros like an array, an empty `GradTree` for a container,
    0.0 for a Python float (a float64 0-d array would promote float32 values it meets) and
    for None (a name generated code sets to None before a loop gives it a value: its zero
    adds to anything)."""
    if x is None:
        return _ZERO  # (0.0 that unbroadcast turns into zeros of the shape it meets)
    if isinstance(x, (dict, list, tuple)):
        return GradTree(length=len(x) if not isinstance(x, dict) else None, like=x)
    if isinstance(x, GradTree):  # (a gradient, itself differentiated at a higher order)
        return GradTree(length=x.length, like=x.like)
    if isinstance(x, float) and not isinstance(x, np.floating):
        return 0.0
    return np.zeros_like(x)


def _as_tree(d, length=None) -> "GradTree":
    """A list's cotangent as a GradTree: `d` an array (the list was used as an array: item i's
    cotangent is its row d[i]) or a list/tuple of pieces."""
    if isinstance(d, (list, tuple)) or (isinstance(d, np.ndarray) and d.ndim > 0):
        if length is not None and len(d) != length:
            raise ValueError(f"srcad: a cotangent of {len(d)} items for a sequence of {length}")
        return GradTree(dict(enumerate(d)), len(d))
    raise TypeError(f"srcad: cannot add a {type(d).__name__} to the gradient of a container")


def _slot(d, key):
    """Item `key` of a container's cotangent, or None where nothing flowed to it: a GradTree's
    slot, or -- the container was used as an array, or its cotangent is a sequence of
    pieces -- d[key]."""
    if isinstance(d, GradTree):
        return d.slots.get(key)
    if isinstance(key, int) and (isinstance(d, (list, tuple)) or (
            isinstance(d, np.ndarray) and d.ndim > 0)):
        return d[key]
    return None


def pieces_tree(pieces, xs=None):
    """One cotangent per item of a list or tuple, as a `GradTree`: two of them add item by
    item (a tuple would concatenate: the cotangents of `parts` reaching it from
    np.concatenate(parts) and np.stack(parts) must add, not queue), and it unpacks as the
    items do. When the items were the rows of one array `xs`, the rows' cotangents stacked
    into an array shaped like it."""
    if isinstance(xs, np.ndarray):
        return np.reshape(np.stack([np.reshape(p, np.shape(x)) for p, x in zip(pieces, xs)]),
                          xs.shape)
    return GradTree(dict(enumerate(pieces)), len(pieces))
