"""The backward half of `srcad.vjp`: a `Pullback` holds the values the forward saved until
it is called, as often as the caller likes, and refuses to run on arguments or an output
the caller changed in place in between (it remembers their checksums).

    out, pullback = srcad.vjp(f, x, W)      # runs f's generated forward
    dx, dW = pullback(np.ones_like(out))    # runs its backward on the saved values
"""

from __future__ import annotations

import zlib

import numpy as np

from . import runtime
from .binding import _is_differentiable
from .errors import SrcadError
from .gradtree import GradTree
from .runtime_python import Items, Slots


def _checksum(a: np.ndarray) -> int:
    """crc32 of an array's bytes (contiguous arrays are read in place, without a copy)."""
    data = memoryview(a).cast("B") if a.flags.c_contiguous and a.size else a.tobytes()
    return zlib.crc32(data)


def _leaves_of(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves_of(v)
    elif isinstance(value, runtime.Stack):
        yield from _leaves_of(list(value._items))
    elif isinstance(value, runtime.LoopCheckpoints):
        yield from _leaves_of(value.kept_states())
    else:
        yield value


def out_structure(out):
    """What a cotangent of `out` must look like: ("leaf", shape, dtype) for an array or a
    number, else (container type, keys, children) for a dict, list or tuple (a pytree)."""
    if isinstance(out, dict):
        return (dict, tuple(out), tuple(out_structure(v) for v in out.values()))
    if isinstance(out, (list, tuple)):
        return (type(out), len(out), tuple(out_structure(v) for v in out))
    return ("leaf", np.shape(out), np.result_type(out))


def _spelled(where: str) -> str:
    return f"the cotangent{where}" if where else "the cotangent"


def cotangent_like(structure, cotangent, name: str, where: str = ""):
    """`cotangent` checked against the output's structure (JAX semantics: a pytree of the
    output's structure, a list or a tuple for either) and each leaf cast to its output's
    dtype; a SrcadError saying where they differ."""
    kind = structure[0]
    if kind == "leaf":
        _, shape, dtype = structure
        if isinstance(cotangent, (dict, list, tuple)) and not (
                shape and isinstance(cotangent, (list, tuple))):
            raise SrcadError(f"{_spelled(where)} is a {type(cotangent).__name__} but "
                             f"{name}'s output{where} is an array of shape {shape}")
        if np.shape(cotangent) != shape:
            raise SrcadError(f"{_spelled(where)} has shape {np.shape(cotangent)} but "
                             f"{name}'s output{where} has shape {shape}")
        if np.result_type(cotangent) != dtype:
            cotangent = np.asarray(cotangent, dtype=dtype)
        return cotangent
    if kind is dict:
        keys, children = structure[1], structure[2]
        if not isinstance(cotangent, dict) or set(cotangent) != set(keys):
            got = f"a dict with keys {sorted(map(str, cotangent))}" if isinstance(
                cotangent, dict) else f"a {type(cotangent).__name__}"
            raise SrcadError(f"{_spelled(where)} is {got} but {name}'s output{where} is a dict "
                             f"with keys {sorted(map(str, keys))}",
                             hint="pass a cotangent of the output's structure (JAX semantics)")
        return {k: cotangent_like(c, cotangent[k], name, f"{where}[{k!r}]")
                for k, c in zip(keys, children)}
    n, children = structure[1], structure[2]
    if not isinstance(cotangent, (list, tuple)) or len(cotangent) != n:
        got = f"a {type(cotangent).__name__}" + (
            f" of {len(cotangent)}" if isinstance(cotangent, (list, tuple, dict)) else "")
        raise SrcadError(f"{_spelled(where)} is {got} but {name}'s output{where} is a "
                         f"{kind.__name__} of {n}",
                         hint="pass a cotangent of the output's structure (JAX semantics)")
    items = [cotangent_like(c, g, name, f"{where}[{i}]")
             for i, (c, g) in enumerate(zip(children, cotangent))]
    return list(items) if kind is list else tuple(items)


def dense_cotangent(out, g):
    """A cotangent generated code carries (a `GradTree` with missing slots, a zero, None, a
    dict, list or tuple) as a plain pytree of `out`'s structure, zeros where nothing flowed
    (what a transform's own pullback takes: `Transformed.vjp_at`)."""
    if isinstance(out, (dict, list, tuple)):
        if isinstance(g, GradTree):
            part = g.slots.get
        elif isinstance(g, dict):
            part = g.get
        elif isinstance(g, (list, tuple)) and len(g) == len(out):
            part = g.__getitem__
        else:
            part = (lambda k: None) if _is_zero(g) else None
        if part is None:
            return g  # (the structure check reports it)
        if isinstance(out, dict):
            return {k: dense_cotangent(v, part(k)) for k, v in out.items()}
        items = [dense_cotangent(v, part(i)) for i, v in enumerate(out)]
        return items if isinstance(out, list) else tuple(items)
    if _is_zero(g):
        return np.zeros_like(out)
    return g


def grad_tree(g, x):
    """A container argument `x`'s plain gradient `g` (a dict, list or tuple) as the
    `GradTree` generated code adds and reads slot by slot; an array's as it is."""
    if isinstance(x, dict) and isinstance(g, dict):
        return GradTree({k: grad_tree(v, x[k]) for k, v in g.items() if k in x}, None, x)
    if isinstance(x, (list, tuple)) and isinstance(g, (list, tuple)):
        return GradTree({i: grad_tree(v, xi) for i, (v, xi) in enumerate(zip(g, x))},
                        len(x), x)
    return g


def zero_tangent(x):
    """A zero tangent for `x`, of its structure (zeros for each array leaf)."""
    if isinstance(x, dict):
        return {k: zero_tangent(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(zero_tangent(v) for v in x) if not hasattr(type(x), "_fields") else \
            tuple(zero_tangent(v) for v in x)
    return np.zeros_like(x)


def tangent_tree(t):
    """A container's tangent as generated forward code adds them: item by item (`Items`,
    `Slots`; a tuple's `+` would concatenate); an array's as it is."""
    if isinstance(t, dict):
        return Slots({k: tangent_tree(v) for k, v in t.items()})
    if isinstance(t, (list, tuple)):
        return Items([tangent_tree(v) for v in t])
    return t


def _is_zero(g) -> bool:
    return g is None or (isinstance(g, (int, float)) and not isinstance(g, (bool, np.generic))
                         and g == 0)


def tree_leaves(tree) -> list:
    """The leaves of a pytree of dicts, lists and tuples, in order (a dict's in key order)."""
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in tree_leaves(v)]
    if isinstance(tree, (list, tuple)):
        return [x for v in tree for x in tree_leaves(v)]
    return [tree]


class Pullback:
    """The backward half of `vjp`: holds the saved values between the two calls."""

    def __init__(self, t, c, saved, values, out):
        self._t = t
        self._c = c
        self._saved = saved
        self._values = values
        self._out = out_structure(out)
        self._name = t._ir.name
        # the caller owns the arguments and the output: if the backward keeps a reference to
        # one of them, remember a checksum, so that a change made before the pullback runs is
        # reported instead of silently corrupting the gradient
        held = {id(v) for v in _leaves_of(saved)}
        named = [(p, v) for p, v in zip(t.params, values) if isinstance(v, np.ndarray)]
        named += [("the output", leaf) for leaf in tree_leaves(out)]
        self._guards = [(label, v, _checksum(v)) for label, v in named
                        if isinstance(v, np.ndarray) and id(v) in held]

    @property
    def source(self) -> str:
        return self._c.source

    def __reduce__(self):
        # (the saved values are this process's forward, tied to code built here: sending them
        # would mean sending the generated code's private layout; send the primals instead)
        raise SrcadError(
            f"a pullback of {self._t._ir.name} cannot be sent to another process: it holds "
            f"the values this process's forward saved",
            hint="send the primals and call srcad.vjp there (a srcad.grad or "
            "srcad.value_and_grad pickles by reference)")

    def __call__(self, cotangent):
        for label, v, crc in self._guards:
            if _checksum(v) != crc:
                what = f"argument `{label}`" if label != "the output" else "the output"
                raise SrcadError(
                    f"{what} of {self._t._ir.name} was changed in place after srcad.vjp and "
                    f"before its pullback; the backward needs its original values",
                    filename=self._t._ir.filename, lineno=self._t._ir.first_line,
                    hint="copy the array before changing it, or call vjp again")
        # (the name for messages read once: `_ir` on the hot path would renormalise a stale
        # IR between the forward and this call)
        cotangent = cotangent_like(self._out, cotangent, self._name)
        grads = self._c.functions["bwd"](runtime.fresh_stacks(self._saved), cotangent)
        it = iter(grads)
        return tuple(next(it) if _is_differentiable(v) else None for v in self._values)
