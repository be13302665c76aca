"""Which values one chain may hold: a full shape, and its row shape through row ops.

Input: the fuser's parts (srcad/lower/fuse.py: one statement's typed tree each). Output:
the shape a chain takes when a part joins it, or None (the part starts a chain of its own).
A chain's values all have one shape S -- or, once it holds a row op (a last-axis sum, mean,
max or min with keepdims, a broadcast of a row's value back along the last axis: the table's
``c_row``), S and S's row shape (last axis 1). Such a chain becomes a row kernel
(srcad/lower/cgen_rows.py).

    joint((2, 8, 16), (2, 8, 1))  ->  (2, 8, 16)      joint((2, 8, 16), (2, 8, 4))  ->  None
"""

from __future__ import annotations


def shapes_of(p) -> list:
    """The shapes a part's values take: its own, and the full rows its row ops read or
    write (a reduction's operand, a broadcast's result)."""
    out = [p.shape]

    def walk(t):
        if t.kind != "op":
            return
        if t.typed.row in ("sum", "mean", "max", "min"):
            out.extend(c.vt.shape for c in t.children.values())
        elif t.typed.row:
            out.append(t.vt.shape)
        for c in t.children.values():
            walk(c)

    walk(p.tree)
    return out


def has_row_op(t) -> bool:
    return t.kind == "op" and (bool(t.typed.row) or
                               any(has_row_op(c) for c in t.children.values()))


def joint(full, *shapes):
    """The shape of a chain holding values of `full` (None: nothing yet) and `shapes`, or
    None: equal shapes, or a full shape and its row shape (last axis 1) -- the chain is then
    a row kernel, which works one row at a time."""
    for s in shapes:
        if full is None or s == full:
            full = s if full is None else full
            continue
        if len(s) != len(full) or not s or s[:-1] != full[:-1]:
            return None
        if full[-1] == 1:
            full = s
        elif s[-1] != 1:
            return None
    return full
