"""`for idx, v in np.ndenumerate(a)` as a loop over np.ndindex (gast -> gast).

numpy's iterator yields each index of the array with the item there. Walked as

    for idx, v in np.ndenumerate(a):        for idx in np.ndindex(np.shape(a)):
        total += w[idx] * v                     v = a[idx]
                                                total += w[idx] * v

each item read is an index of the array, so its gradient flows (loops over np.ndindex are
differentiated already). An argument that is not a plain name (`np.ndenumerate(x @ W)`, a
list) is evaluated once first, through np.asarray, as numpy's iterator takes it; a
`(i, j), v` target unpacks the index. The tape walks the same indices (tape.py
`_ndenumerate`).

Input: a `ParsedFunction` before closures are lifted. Output: the same, in place.
"""

from __future__ import annotations

import gast
import numpy as np

from ..naming import fresh


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def lower_ndenumerate(pf, taken: set) -> None:
    """Rewrite `pf.tree` in place (see the module docstring)."""
    tree = pf.tree
    if not any(isinstance(n, gast.For) and isinstance(n.iter, gast.Call) and (
            getattr(n.iter.func, "attr", None) == "ndenumerate" or
            getattr(n.iter.func, "id", None) == "ndenumerate") for n in gast.walk(tree)):
        return
    stored = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)
              and isinstance(n.ctx, (gast.Store, gast.Del))}

    def is_ndenumerate(f) -> bool:
        parts = []
        while isinstance(f, gast.Attribute):
            parts.append(f.attr)
            f = f.value
        if not isinstance(f, gast.Name) or f.id in stored or f.id in pf.params:
            return False
        try:
            obj = pf.resolve(f.id)
            for a in reversed(parts):
                obj = getattr(obj, a)
        except Exception:  # noqa: BLE001
            return False
        return obj is np.ndenumerate

    def block(stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list) and \
                        not isinstance(s, (gast.FunctionDef, gast.ClassDef)):
                    setattr(s, field, block(getattr(s, field)))
            it = getattr(s, "iter", None)
            if isinstance(s, gast.For) and isinstance(it, gast.Call) and \
                    is_ndenumerate(it.func) and len(it.args) == 1 and not it.keywords and \
                    isinstance(s.target, gast.Tuple) and len(s.target.elts) == 2:
                idx, item = s.target.elts
                arr = it.args[0]
                np_name = _numpy_name(pf, stored)
                if np_name is None:
                    out.append(s)
                    continue
                if not (isinstance(arr, gast.Name) and arr.id not in _assigned_in(s.body)):
                    # (evaluated once, as numpy's iterator takes it: np.asarray of a list too)
                    held = fresh("ndenumerate_array", taken)
                    taken.add(held)
                    value = gast.Call(func=gast.Attribute(value=_name(np_name), attr="asarray",
                                                          ctx=gast.Load()),
                                      args=[arr], keywords=[])
                    out.append(gast.copy_location(gast.Assign(
                        targets=[_name(held, True)], value=value, type_comment=None), s))
                    arr = _name(held)
                index = fresh("ndenumerate_index", taken) if not isinstance(idx, gast.Name) \
                    else idx.id
                taken.add(index)
                shape = gast.Call(func=gast.Attribute(value=_name(np_name), attr="shape",
                                                      ctx=gast.Load()),
                                  args=[_name(arr.id)], keywords=[])
                s.iter = gast.copy_location(gast.Call(
                    func=gast.Attribute(value=_name(np_name), attr="ndindex", ctx=gast.Load()),
                    args=[shape], keywords=[]), it)
                s.target = _name(index, True)
                read = gast.Subscript(value=_name(arr.id), slice=_name(index), ctx=gast.Load())
                first = [gast.Assign(targets=[item], value=read, type_comment=None)]
                if not isinstance(idx, gast.Name):
                    first.insert(0, gast.Assign(targets=[idx], value=_name(index),
                                                type_comment=None))
                s.body = [gast.copy_location(x, s) for x in first] + s.body
            out.append(s)
        return out

    if not any(isinstance(n, gast.For) and isinstance(n.iter, gast.Call)
               and is_ndenumerate(n.iter.func) for n in gast.walk(tree)):
        return
    tree.body = block(tree.body)
    gast.fix_missing_locations(tree)


def _assigned_in(stmts) -> set:
    return {n.id for s in stmts for n in gast.walk(s) if isinstance(n, gast.Name)
            and isinstance(n.ctx, (gast.Store, gast.Del))}


def _numpy_name(pf, stored) -> str | None:
    """A free name of the function's module that holds numpy."""
    for name, obj in pf.fn.__globals__.items():
        if obj is np and name not in stored and name not in pf.params:
            return name
    return None
