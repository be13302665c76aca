"""Two helpers over pytrees (dicts, lists, tuples of arrays, or one array) that generated
code calls when a transform's pullback is itself differentiated (srcad/pullbacks.py).

`tree_vdot(o, t)` is the inner product sum_leaves sum(o_leaf * t_leaf); `tree_scale(s, t)`
scales every leaf of t by the scalar s. Both are bilinear, and each is the other's transpose,
so their rows (srcad/ops/composed.py) differentiate to each other at every order. A container
result is a `GradTree` (how generated code carries a container's cotangent); a missing slot
(a `GradTree`'s, or a key one side lacks) is zero.

    tree_vdot({"a": x, "b": y}, {"a": u, "b": v})  ==  np.sum(x * u) + np.sum(y * v)
"""

from __future__ import annotations

import itertools
import linecache
import re

import numpy as np

from .gradtree import GradTree


def _parts(x):
    """(key, item) of a container or a GradTree, else None for a leaf."""
    if isinstance(x, GradTree):
        return list(x.slots.items())
    if isinstance(x, dict):
        return list(x.items())
    if isinstance(x, (list, tuple)):
        return list(enumerate(x))
    return None


def _part(x, key):
    if isinstance(x, GradTree):
        return x.slots.get(key)
    if isinstance(x, dict):
        return x.get(key)
    if isinstance(x, (list, tuple)) and isinstance(key, int) and key < len(x):
        return x[key]
    return None


def _absent(x) -> bool:
    return x is None or (isinstance(x, (int, float)) and not isinstance(x, (bool, np.generic))
                         and x == 0)


def tree_vdot(o, t):
    """sum over the leaves both trees hold of np.sum(o_leaf * t_leaf) (0.0 if none)."""
    if _absent(o) or _absent(t):
        return 0.0
    parts = _parts(o)
    if parts is None:
        if _parts(t) is not None:  # (a GradTree against a leaf: nothing lines up)
            return 0.0
        return np.sum(o * t)
    total = 0.0
    for k, v in parts:
        total = total + tree_vdot(v, _part(t, k))
    return total


def tree_scale(s, t):
    """t with every leaf multiplied by the scalar s; a container's as a GradTree."""
    if _absent(t):
        return 0.0
    parts = _parts(t)
    if parts is None:
        return s * t
    like = t.like if isinstance(t, GradTree) else t
    length = t.length if isinstance(t, GradTree) else (
        None if isinstance(t, dict) else len(t))
    return GradTree({k: tree_scale(s, v) for k, v in parts}, length, like)


_COUNTER = itertools.count()


def vdot_function(fn, n: int, name: str, with_tangents: bool = False, extra: int = 0):
    """``def <name>(a0, ..., a<n-1>, g): return tree_vdot(_f(a0, ...), g)``, compiled from
    source registered in linecache so that srcad can parse it (a transform's pullback as a
    function: its gradient w.r.t. the a's is the pullback applied to g). With
    `with_tangents`: ``def <name>(a0, ..., t0, ..., g): return tree_vdot(_f(a0, ..., g),
    (t0, ...))`` -- for `_f` that pullback, its gradient w.r.t. g is the JVP along the t's.
    `extra` more arguments ``c0, ...`` after the a's are passed on to `_f` after them (the
    free variables of a nested function: closures.py lifts them as its last parameters)."""
    name = re.sub(r"\W", "_", name)  # (`<lambda>_vjp`: a lambda's name is no identifier)
    if not name.isidentifier():
        name = f"f_{name}"
    args = ", ".join([f"a{i}" for i in range(n)] + [f"c{i}" for i in range(extra)])
    filename = f"<srcad-pullback {name} {next(_COUNTER)}>"
    if with_tangents:
        tangents = ", ".join(f"t{i}" for i in range(n))
        src = (f"def {name}({args}, {tangents}, g):\n"
               f"    return tree_vdot(_f({args}, g), ({tangents},))\n")
    else:
        src = (f"def {name}({args}{', ' if n + extra else ''}g):\n"
               f"    return tree_vdot(_f({args}), g)\n")
    linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
    namespace = {"_f": fn, "tree_vdot": tree_vdot}
    exec(compile(src, filename, "exec"), namespace)  # noqa: S102 (our own text)
    return namespace[name]
