"""Pytrees, the relative-error metric, and the reading of `args` / `wrt` shared by the checks."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


Shape = tuple[int, ...]

# Default tolerances by the lowest float precision among the checked arguments. A float32
# gradient is computed in float32 by srcad and compared with float64 finite differences.
_TOLERANCES = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-3}
_DEFAULT_TOL = 1e-6


# ---------------------------------------------------------------------------------------
# Pytrees: dict / list / tuple containers, anything else is a leaf.
# ---------------------------------------------------------------------------------------


def _is_node(x: Any) -> bool:
    return isinstance(x, (dict, list, tuple))


def _kind(x: Any) -> str:
    return "dict" if isinstance(x, dict) else "list" if isinstance(x, list) else "tuple"


def _flatten(tree: Any, path: str = "") -> tuple[list[str], list[Any], Any]:
    """Return (paths, leaves, treedef); dict order is insertion order."""
    paths: list[str] = []
    leaves: list[Any] = []

    def walk(node: Any, where: str) -> Any:
        if isinstance(node, dict):
            keys = tuple(node)
            return ("dict", type(node), keys, tuple(walk(node[k], f"{where}[{k!r}]") for k in keys))
        if isinstance(node, (list, tuple)):
            children = tuple(walk(c, f"{where}[{i}]") for i, c in enumerate(node))
            return (_kind(node), type(node), None, children)
        paths.append(where)
        leaves.append(node)
        return None

    treedef = walk(tree, path)
    return paths, leaves, treedef


def _unflatten(treedef: Any, leaves: Sequence[Any]) -> Any:
    it = iter(leaves)

    def build(td: Any) -> Any:
        if td is None:
            return next(it)
        kind, cls, keys, children = td
        if kind == "dict":
            built = {k: build(c) for k, c in zip(keys, children)}
            return built if cls is dict else cls(built)
        items = [build(c) for c in children]
        if kind == "list":
            return items if cls is list else cls(items)
        if cls is tuple:
            return tuple(items)
        if hasattr(cls, "_fields"):  # namedtuple
            return cls(*items)
        return cls(items)

    return build(treedef)


def _is_float_leaf(x: Any) -> bool:
    if isinstance(x, (np.ndarray, np.generic)):
        return np.issubdtype(x.dtype, np.floating)
    return isinstance(x, float)


def _leaf_dtype(x: Any) -> np.dtype | None:
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x).dtype
    return None


def _float64_copy(tree: Any) -> Any:
    """A copy of ``tree`` whose float leaves are float64 (arrays stay arrays, scalars scalars)."""
    _, leaves, td = _flatten(tree)
    return _unflatten(td, [_as_float64(leaf) for leaf in leaves])


def _as_float64(leaf: Any) -> Any:
    if isinstance(leaf, np.ndarray):
        if np.issubdtype(leaf.dtype, np.floating):
            return np.array(leaf, dtype=np.float64)
        return leaf.copy()
    if isinstance(leaf, np.generic) and np.issubdtype(leaf.dtype, np.floating):
        return np.float64(leaf)
    return leaf


def _snapshot(args: Sequence[Any]) -> list[Any]:
    """Copies of every array leaf, to detect in-place mutation of the caller's arguments."""
    return [np.array(leaf, copy=True) for _, leaves, _ in map(_flatten, args) for leaf in leaves]


def _mutated(args: Sequence[Any], snapshot: list[Any], labels: Sequence[str]) -> list[str]:
    found = []
    flat = [
        (f"{labels[i]}{path}", leaf)
        for i, arg in enumerate(args)
        for path, leaf in zip(*_flatten(arg)[:2])
    ]
    for (where, leaf), before in zip(flat, snapshot):
        now = np.asarray(leaf)
        same = now.shape == before.shape and now.dtype == before.dtype
        if same:
            with np.errstate(all="ignore"):
                same = bool(np.array_equal(now, before, equal_nan=now.dtype.kind in "fc"))
        if not same:
            found.append(where)
    return found


# ---------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------


def _leaf_rel_error(actual: Any, expected: Any, eps: float) -> float:
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if e.size == 0:
        return 0.0
    with np.errstate(all="ignore"):
        diff = np.where(a == e, 0.0, np.abs(a - e))  # equal infinities differ by 0
        if np.isnan(diff).any():
            return math.nan
        return float(diff.max() / (np.abs(e).max() + eps))


def _worst_index(actual: Any, expected: Any) -> tuple[int, ...]:
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    with np.errstate(all="ignore"):
        diff = np.where(a == e, 0.0, np.abs(a - e))
    diff = np.where(np.isnan(diff), np.inf, diff)
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape))


def _zip_leaves(actual: Any, expected: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Pair up the leaves of two pytrees; dicts match by key, in ``expected``'s order."""
    pairs: list[tuple[str, Any, Any]] = []
    stack = [(path, actual, expected)]
    while stack:
        where, a, e = stack.pop()
        if _is_node(e) or _is_node(a):
            if not (_is_node(a) and _is_node(e)) or _kind(a) != _kind(e):
                raise AssertionError(
                    f"structure mismatch at {where or 'top level'}: actual is "
                    f"{type(a).__name__}, expected {type(e).__name__}"
                )
            if isinstance(e, dict):
                if set(a) != set(e):
                    raise AssertionError(
                        f"structure mismatch at {where or 'top level'}: actual keys "
                        f"{list(a)}, expected keys {list(e)}"
                    )
                children = [(f"{where}[{k!r}]", a[k], e[k]) for k in e]
            else:
                if len(a) != len(e):
                    raise AssertionError(
                        f"structure mismatch at {where or 'top level'}: actual has {len(a)} "
                        f"items, expected {len(e)}"
                    )
                children = [(f"{where}[{i}]", x, y) for i, (x, y) in enumerate(zip(a, e))]
            stack.extend(reversed(children))
            continue
        if (a is None) != (e is None):
            raise AssertionError(
                f"at {where or 'top level'}: actual is {a!r:.40}, expected {e!r:.40}"
            )
        if a is not None and np.shape(a) != np.shape(e):
            raise AssertionError(
                f"shape mismatch at {where or 'top level'}: actual shape {np.shape(a)}, "
                f"expected shape {np.shape(e)}"
            )
        pairs.append((where, a, e))
    return pairs


def rel_error(actual: Any, expected: Any, eps: float = 1e-12) -> float:
    """The seed's relative error ``max|actual - expected| / (max|expected| + eps)``.

    Works on arrays, scalars and pytrees (dict/list/tuple of arrays, nested): for a pytree
    the result is the largest per-leaf error. Shapes and structure must match exactly, or an
    ``AssertionError`` names both. Equal infinities count as equal; any NaN difference gives
    NaN (which fails every ``err <= tol`` test). ``None`` leaves must pair with ``None``.

    >>> round(rel_error(np.array([1.1, 2.0]), np.array([1.0, 2.0])), 9)  # 0.1 / 2.0
    0.05
    >>> rel_error({"w": np.ones(2), "b": 1.0}, {"w": np.ones(2), "b": 1.0})
    0.0
    >>> rel_error(np.ones(3), np.ones((1, 3)))
    Traceback (most recent call last):
    ...
    AssertionError: shape mismatch at top level: actual shape (3,), expected shape (1, 3)
    """
    worst = 0.0
    for _, a, e in _zip_leaves(actual, expected):
        if a is None:
            continue
        err = _leaf_rel_error(a, e, eps)
        if math.isnan(err):
            return math.nan
        worst = max(worst, err)
    return worst


# ---------------------------------------------------------------------------------------
# Arguments and wrt
# ---------------------------------------------------------------------------------------


def _as_args(args: Any) -> tuple[Any, ...]:
    if not isinstance(args, (tuple, list)):
        raise TypeError(
            f"args must be a tuple of the function's positional arguments, got "
            f"{type(args).__name__}; write (x,) for a single argument"
        )
    return tuple(args)


def _param_names(fn: Callable[..., Any], nargs: int) -> list[str]:
    """Names for the first ``nargs`` positional parameters (``#i`` where unknown)."""
    names = [f"#{i}" for i in range(nargs)]
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return names
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    i = 0
    for p in params:
        if i >= nargs:
            break
        if p.kind in positional:
            names[i] = p.name
            i += 1
        elif p.kind is inspect.Parameter.VAR_POSITIONAL:
            while i < nargs:
                names[i] = f"{p.name}[{i}]"
                i += 1
    return names


def _resolve_wrt(fn: Callable[..., Any], wrt: Any, nargs: int) -> tuple[list[int], bool]:
    """Positions of ``wrt`` (int, str or tuple of them) and whether it was a single one."""
    single = not isinstance(wrt, tuple)
    items = (wrt,) if single else wrt
    if not items:
        raise ValueError("wrt is an empty tuple; name at least one argument")
    positions = []
    for w in items:
        if isinstance(w, (bool, np.bool_)) or not isinstance(w, (int, np.integer, str)):
            raise TypeError(f"wrt items must be int positions or str names, got {w!r}")
        if isinstance(w, str):
            try:
                params = inspect.signature(fn).parameters
            except (TypeError, ValueError) as exc:
                raise ValueError(f"wrt={w!r}: cannot read the signature of {fn!r}") from exc
            positional = [
                name
                for name, p in params.items()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
            if w not in positional:
                raise ValueError(f"wrt={w!r} is not a positional parameter; have {positional}")
            idx = positional.index(w)
        else:
            idx = int(w) + nargs if int(w) < 0 else int(w)
        if not 0 <= idx < nargs:
            raise ValueError(f"wrt={w!r} refers to argument {idx}, but {nargs} were given")
        positions.append(idx)
    return positions, single


def _scalar_output(y: Any) -> float:
    if isinstance(y, (np.ndarray, np.generic)):
        ok = y.shape == () and y.dtype.kind in "fiu"
    else:
        ok = isinstance(y, (int, float)) and not isinstance(y, bool)
    if not ok:
        raise ValueError(
            "fn must return a real scalar (python float, numpy scalar or 0-d array); got "
            f"{type(y).__name__} with shape {np.shape(y)}"
        )
    return float(y)


def _default_tol(trees: Sequence[Any]) -> float:
    tol = _DEFAULT_TOL
    for tree in trees:
        for leaf in _flatten(tree)[1]:
            if _is_float_leaf(leaf):
                tol = max(tol, _TOLERANCES.get(_leaf_dtype(leaf), _DEFAULT_TOL))
    return tol
