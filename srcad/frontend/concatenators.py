"""``np.r_[...]`` and ``np.c_[...]``: a subscript of a library object, lowered to op-table rows.

Input: the items of the subscript (atoms in source mode, values in tape mode), and how to
apply a row (`apply(fn, args, kwargs)`: the normaliser emits an `ir.Call`, the tape records
an entry). Output: the result of the rows that compute what numpy's AxisConcatenator
computes, or None where the form is not one of those below (it then runs as written, and
srcad/analysis/refusals.py refuses it where a differentiated value reaches it).

numpy's ``np.r_[a, b, ...]`` is ``np.concatenate((array(a, ndmin=1), ...), axis=0)``, a slice
``lo:hi:step`` being ``np.arange(lo, hi, step)`` (``np.linspace`` for a complex step);
``np.c_[...]`` is the same with ``ndmin=2``, a 1-d item made a column, along axis -1. So:

    np.r_[x, 2 * x, 0:3]       np.concatenate((np.atleast_1d(x), np.atleast_1d(x2), r_0_3), 0)
    np.c_[x, m]                np.concatenate((np.column_stack((x,)), np.column_stack((m,))), -1)
    np.r_["1", a, b]           (an integer directive: that axis)

``np.column_stack((item,))`` is numpy's own conversion for one item: a scalar or 0-d array
to shape (1, 1), a 1-d array to a column, a 2-d or more array as it is -- what c_'s
``array(item, ndmin=2)`` with its transposition gives. The rows carry every transform (grad,
jvp, tape, second order, fuse). Not lowered: the string directives other than a plain axis
(``"0,2"``, ``"0,2,0"``, ``"r"``, ``"c"``), which change ndmin or build a matrix.

One difference from numpy: a Python scalar item among float32 arrays (``np.r_[x32, 1.0]``)
gives float64 here (numpy's AxisConcatenator treats the scalar as weak: float32); float64
arrays, as every gradient check uses, give numpy's dtype.
"""

from __future__ import annotations

import numpy as np

# the library objects lowered here: (axis, ndmin) of each
FORMS = {id(np.r_): (0, 1), id(np.c_): (-1, 2)}


def is_concatenator(obj) -> bool:
    return id(obj) in FORMS and (obj is np.r_ or obj is np.c_)


def axis_directive(value) -> int | None:
    """The axis a plain integer directive ("1", "-1") names, else None."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def lower(obj, items, apply, *, directive, slice_item):
    """The rows for ``obj[items]`` (see the module docstring), or None.

    ``apply(fn, args, kwargs, final)`` applies a row (a ``("tuple", [...])`` argument is a
    tuple of the items given); ``directive(item)``: the item's value if it is a constant
    string, else None; ``slice_item(item)``: None if the item is no slice, else the array it
    stands for (LookupError where it cannot be lowered)."""
    axis, ndmin = FORMS[id(obj)]
    items = list(items)
    if items and directive(items[0]) is not None:
        axis = axis_directive(directive(items[0]))
        if axis is None:
            return None
        items = items[1:]
    if not items or any(directive(it) is not None for it in items):
        return None  # (numpy: a directive comes first, and alone it makes nothing)
    made = []
    for it in items:
        try:
            arr = slice_item(it)
        except LookupError:
            return None
        if arr is not None:
            it = arr
        if ndmin == 1:
            made.append(("atleast_1d", it))
        else:
            made.append(("column", it))
    objs = [apply(np.atleast_1d, [it], {}, False) if kind == "atleast_1d"
            else apply(np.column_stack, [("tuple", [it])], {}, False) for kind, it in made]
    return apply(np.concatenate, [("tuple", objs)], {"axis": axis}, True)
