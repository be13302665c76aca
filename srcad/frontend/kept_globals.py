"""Lists and dicts a module or a closure keeps, changed in place by the function (gast -> gast).

Input: a parsed function whose body stores into a list, dict, set or deque that a module
global or a closure cell holds -- ``history.append(h)``, ``CACHE["h"] = h``,
``ACTS.extend(...)``, ``STATS.update(...)``, ``COUNTS["calls"] += 1``. Output: the same tree,
each item store spelled as the method call Python makes (``CACHE.__setitem__("h", h)``, a
statement srcad runs as written, once per call, with the values the call computed: the
effect the user wrote, frontend/effects.py), and `pf.kept_uses`, one `KeptUse` per use of
such a container in the function (a store or a read, where and inside which loops).

Why the uses are recorded: srcad stores the value, not its gradient. A read of the container
in the same call after a store of a differentiated value (``history[-1]``, ``sum(history)``,
``for h in ACTS``, a callee reading ``CACHE["h"]``) would give back the stored value with no
gradient -- srcad/analysis/refusals.py `check_kept_globals` refuses it at the read, over the
whole call tree (the containers an object keeps are followed as values instead:
attrstate.py). A read that comes before every store, in the function being differentiated
and in no loop (a checkpointed loop runs again in the backward, after the stores), reads
what an earlier call left -- a constant of this call, as
Python's value is: ``h = np.tanh(W @ x + STATE["h"]); STATE["h"] = h`` (a hidden state kept
across calls), ``RUNNING["mean"] = 0.9 * RUNNING["mean"] + 0.1 * mu``. ``len(c)`` and
``c.clear()`` read or store no value.

Before/after:
    CACHE["h"] = h              CACHE.__setitem__("h", h)
    COUNTS["n"] += 1            COUNTS.__setitem__("n", COUNTS["n"] + 1)
"""

from __future__ import annotations

import collections
import copy
from dataclasses import dataclass

import gast

from .parse import UNRESOLVED, ParsedFunction

# what a store into the container is spelled as (the container is its object)
STORES = frozenset({"append", "extend", "insert", "update", "setdefault", "__setitem__",
                    "add"})
_NEUTRAL = frozenset({"clear"})  # (changes the container, stores and returns no value)


def kept_container(obj) -> bool:
    """A plain list, dict, set or deque (not a user's subclass, whose methods are its own)."""
    return type(obj) in (list, dict, set, collections.deque, collections.OrderedDict,
                         collections.defaultdict)


def kept_store_method(fn):
    """The container whose store `fn` (a bound method: `history.append`) is, else None."""
    owner = getattr(fn, "__self__", None)
    if kept_container(owner) and getattr(fn, "__name__", None) in STORES:
        return owner
    return None


def kept_globals(pf: ParsedFunction) -> None:
    """Rewrite item stores into kept containers as calls and record every use (module
    docstring)."""
    stored = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
              and isinstance(n.ctx, (gast.Store, gast.Del))} | set(pf.params)
    found: dict = {}

    def container(e):
        if not isinstance(e, gast.Name) or e.id in stored:
            return None
        if e.id not in found:
            try:
                obj = pf.resolve(e.id)
            except Exception:  # noqa: BLE001  (not resolvable here: the normaliser says why)
                obj = UNRESOLVED
            found[e.id] = obj if kept_container(obj) else None
        return found[e.id]

    uses: list = []

    class Rewrite(gast.NodeTransformer):
        def visit_Assign(self, node):
            self.generic_visit(node)
            if len(node.targets) == 1 and isinstance(node.targets[0], gast.Subscript) and \
                    container(node.targets[0].value) is not None:
                return self._setitem(node, node.targets[0], node.value)
            return node

        def visit_AugAssign(self, node):
            self.generic_visit(node)
            t = node.target
            if isinstance(t, gast.Subscript) and container(t.value) is not None:
                read = gast.Subscript(value=_load(t.value), slice=copy.deepcopy(t.slice),
                                      ctx=gast.Load())
                value = gast.BinOp(left=gast.copy_location(read, t), op=node.op,
                                   right=node.value)
                return self._setitem(node, t, gast.copy_location(value, node))
            return node

        @staticmethod
        def _setitem(node, target, value):
            call = gast.Call(func=gast.Attribute(value=_load(target.value), attr="__setitem__",
                                                 ctx=gast.Load()),
                             args=[target.slice, value], keywords=[])
            out = gast.Expr(value=call)
            gast.copy_location(call, node)
            gast.copy_location(call.func, node)
            gast.copy_location(call.func.value, node)
            return gast.copy_location(out, node)

    if not any(container(n) is not None for n in gast.walk(pf.tree)):
        pf.kept_uses = []
        return
    pf.tree = Rewrite().visit(pf.tree)
    gast.fix_missing_locations(pf.tree)
    parents = {}
    for node in gast.walk(pf.tree):
        for child in gast.iter_child_nodes(node):
            parents[child] = node
    for node in gast.walk(pf.tree):
        obj = container(node)
        if obj is None or not isinstance(node.ctx, gast.Load):
            continue
        up = parents.get(node)
        kind = "read"
        if isinstance(up, gast.Attribute) and isinstance(parents.get(up), gast.Call) and \
                parents[up].func is up:
            kind = "store" if up.attr in STORES else "neutral" if up.attr in _NEUTRAL \
                else "read"
        elif isinstance(up, gast.Call) and isinstance(up.func, gast.Name) and \
                up.func.id == "len" and len(up.args) == 1:
            kind = "neutral"
        if kind != "neutral":
            keys = None  # (a list's: any slot -- its -1 moves)
            if kind == "store" and isinstance(obj, dict):
                keys = _stored_keys(parents[up], up.attr)
            elif kind == "read" and isinstance(obj, dict):
                keys = _read_keys(node, up, parents)
            uses.append(KeptUse(obj, kind, getattr(node, "lineno", None), node.id,
                                *_place(node, parents), keys))
    pf.kept_uses = uses


@dataclass(frozen=True)
class KeptUse:
    """One use of a kept container: `at`, its statement's (line, column) -- a store's value
    and a read inside the storing statement are computed before the store; `loops`, the ids
    of the loops (and comprehensions) around it; `keys`, the keys of a dict a store may write
    or a read takes where they are spelled as constants (`CACHE["h"] = h`, `D.update(a=...)`,
    `D.get("h")`), else None (any key or slot)."""

    container: object
    kind: str  # "store" | "read"
    line: int | None
    name: str
    at: tuple
    loops: frozenset
    keys: frozenset | None = None


def _read_keys(node, up, parents) -> frozenset | None:
    """The constant key a read of a dict takes (`D["k"]`, `D.get("k", ...)`), else None."""
    if isinstance(up, gast.Subscript) and up.value is node and \
            isinstance(up.slice, gast.Constant):
        return frozenset({up.slice.value})
    call = parents.get(up)
    if isinstance(up, gast.Attribute) and up.attr == "get" and isinstance(call, gast.Call) \
            and call.func is up and call.args and isinstance(call.args[0], gast.Constant):
        return frozenset({call.args[0].value})
    return None


def _stored_keys(call: gast.Call, method: str) -> frozenset | None:
    """The constant keys a store into a dict writes (`__setitem__`/`setdefault` of a
    constant key, `update` of keywords or of a dict display with constant keys), else None."""
    if method in ("__setitem__", "setdefault") and call.args and \
            isinstance(call.args[0], gast.Constant):
        return frozenset({call.args[0].value})
    if method == "update" and len(call.args) <= 1 and all(k.arg for k in call.keywords):
        keys = {k.arg for k in call.keywords}
        if not call.args:
            return frozenset(keys)
        arg = call.args[0]
        if isinstance(arg, gast.Dict) and all(isinstance(k, gast.Constant) for k in arg.keys):
            return frozenset(keys | {k.value for k in arg.keys})
    return None


_LOOPS = (gast.For, gast.While, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def _place(node, parents) -> tuple:
    stmt, loops, up = None, set(), parents.get(node)
    while up is not None:
        if stmt is None and isinstance(up, gast.stmt):
            stmt = up
        if isinstance(up, _LOOPS):
            loops.add(id(up))
        up = parents.get(up)
    at = (getattr(stmt, "lineno", 0), getattr(stmt, "col_offset", 0)) if stmt is not None \
        else (0, 0)
    return at, frozenset(loops)


def _load(e):
    out = copy.deepcopy(e)
    out.ctx = gast.Load()
    return out
