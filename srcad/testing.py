"""Gradient checking for srcad: finite differences, comparisons and broadcast-shape grids.

This module is public: users import it to check their own functions and rules, and srcad's
own op tests are built from it.

- ``check_grads(fn, args, wrt)`` compares ``srcad.grad(fn, wrt=wrt)`` (or any ``grad_fn``)
  with central differences computed in float64, after checking that every gradient has its
  argument's shape, dtype and pytree structure.
- ``check_vjp(fn, args)`` checks a pullback of an array-valued function by random
  projection: ``<u, J v>`` from finite differences against ``sum_i <vjp_i(u), v_i>``.
- ``numerical_grad`` and ``rel_error`` are the two pieces they are made of.
- ``broadcast_pairs`` / ``broadcast_shapes_for`` enumerate small grids of shapes that
  broadcast together, and ``random_args`` fills them with inputs from a domain.

The error metric is the seed's: ``max|actual - expected| / (max|expected| + eps)``.
Prior art: HIPS/autograd ``autograd/test_util.py`` (``check_grads``, random-projection VJP
checks) and jax ``tests/lax_autodiff_test.py`` (per-dtype tolerances, domains).

This module imports only numpy at import time; ``srcad`` itself is imported inside the
functions that need it, so the harness works with hand-written gradients alone.
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "broadcast_pairs",
    "broadcast_shapes_for",
    "check_grads",
    "check_vjp",
    "numerical_grad",
    "random_args",
    "rel_error",
]

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


# ---------------------------------------------------------------------------------------
# Finite differences
# ---------------------------------------------------------------------------------------


def numerical_grad(
    fn: Callable[..., Any], args: Sequence[Any], wrt: Any = 0, h: float = 1e-4
) -> Any:
    """Central-difference gradient of a scalar-valued ``fn`` at ``args``, in float64.

    Float leaves of every argument are copied to float64 and ``fn`` is called with the
    copies (the caller's arrays are never touched). ``wrt`` is an int position or a str
    parameter name (one gradient) or a tuple of them (a tuple of gradients). A pytree
    argument (dict/list/tuple of arrays, nested) gets a gradient of the same structure;
    its non-float leaves get ``None``. Gradients are float64 arrays shaped like their
    arguments (``np.float64`` for scalar arguments). ``fn`` must return a real scalar,
    else ``ValueError``. Cost: two calls of ``fn`` per element differentiated.

    >>> g = numerical_grad(lambda x: np.sum(x ** 2), (np.array([1.0, -2.0]),))
    >>> np.round(g, 6)
    array([ 2., -4.])
    >>> gx, gy = numerical_grad(lambda x, y: x * y, (3.0, 5.0), wrt=("x", 1))
    >>> round(float(gx), 6), round(float(gy), 6)
    (5.0, 3.0)
    """
    args = _as_args(args)
    positions, single = _resolve_wrt(fn, wrt, len(args))
    names = _param_names(fn, len(args))
    flat = [_flatten(arg) for arg in args]
    # Working float64 storage for every float leaf; scalars get a 0-d array to perturb.
    work = [[_work_leaf(leaf) for leaf in leaves] for _, leaves, _ in flat]

    def call() -> float:
        built = [
            _unflatten(td, [_present(leaf, w) for leaf, w in zip(leaves, work[i])])
            for i, (_, leaves, td) in enumerate(flat)
        ]
        return _scalar_output(fn(*built))

    for pos in positions:
        if not any(_is_float_leaf(leaf) for leaf in flat[pos][1]):
            raise TypeError(
                f"cannot differentiate with respect to argument {names[pos]!r}: it has no "
                f"floating-point values ({type(args[pos]).__name__})"
            )
    call()  # fail early, with a clear message, on a non-scalar output
    grads = []
    for pos in positions:
        _, leaves, td = flat[pos]
        out = []
        for leaf, w in zip(leaves, work[pos]):
            if not _is_float_leaf(leaf):
                out.append(None)
                continue
            g = np.empty(w.shape, dtype=np.float64)
            view, gview = w.reshape(-1), g.reshape(-1)
            for i in range(view.size):
                x0 = view[i]
                xp, xm = x0 + h, x0 - h
                view[i] = xp
                fp = call()
                view[i] = xm
                fm = call()
                view[i] = x0
                gview[i] = (fp - fm) / (xp - xm)  # the step actually taken
            out.append(g if isinstance(leaf, np.ndarray) else np.float64(g[()]))
        grads.append(_unflatten(td, out))
    return grads[0] if single else tuple(grads)


def _work_leaf(leaf: Any) -> Any:
    if _is_float_leaf(leaf):
        # C order: the perturbation loop writes through w.reshape(-1), which copies (and
        # so perturbs nothing) for a transposed or Fortran-ordered argument
        return np.array(leaf, dtype=np.float64, order="C")
    return leaf.copy() if isinstance(leaf, np.ndarray) else leaf


def _present(original: Any, work: Any) -> Any:
    """The value ``fn`` sees for a leaf: arrays as arrays, scalars as scalars."""
    if not _is_float_leaf(original) or isinstance(original, np.ndarray):
        return work
    if isinstance(original, np.generic):
        return np.float64(work[()])
    return float(work[()])


# ---------------------------------------------------------------------------------------
# Structure, shape and dtype of computed gradients
# ---------------------------------------------------------------------------------------


def _check_like(grad: Any, arg: Any, where: str) -> list[str]:
    """Problems with ``grad`` as the gradient of ``arg`` (structure, shapes, dtypes)."""
    problems: list[str] = []
    stack = [(where, grad, arg)]
    while stack:
        at, g, a = stack.pop()
        if _is_node(a):
            if not _is_node(g) or _kind(g) != _kind(a):
                problems.append(
                    f"{at}: gradient is a {type(g).__name__}, argument is a {type(a).__name__}"
                )
            elif isinstance(a, dict) and list(g) != list(a):
                problems.append(f"{at}: gradient keys {list(g)} != argument keys {list(a)}")
            elif len(g) != len(a):
                problems.append(f"{at}: gradient has {len(g)} items, argument has {len(a)}")
            elif isinstance(a, dict):
                stack.extend((f"{at}[{k!r}]", g[k], a[k]) for k in reversed(list(a)))
            else:
                stack.extend(
                    (f"{at}[{i}]", gi, ai) for i, (gi, ai) in reversed(list(enumerate(zip(g, a))))
                )
            continue
        if not _is_float_leaf(a):
            # No gradient for a non-float leaf: None, or zeros of its shape.
            if g is not None and not (np.shape(g) == np.shape(a) and np.all(np.asarray(g) == 0)):
                problems.append(f"{at}: non-float argument leaf got gradient {g!r:.60}")
            continue
        gdtype = _leaf_dtype(g)
        if g is None or gdtype is None or _is_node(g):
            problems.append(f"{at}: gradient is {type(g).__name__}, expected an array")
        elif np.shape(g) != np.shape(a):
            problems.append(f"{at}: gradient shape {np.shape(g)} != argument shape {np.shape(a)}")
        elif gdtype != _leaf_dtype(a):
            problems.append(
                f"{at}: gradient dtype {gdtype} != argument dtype {_leaf_dtype(a)} "
                f"(shape {np.shape(a)})"
            )
    return problems


# ---------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------


def check_grads(
    fn: Callable[..., Any],
    args: Sequence[Any],
    wrt: Any = 0,
    *,
    tol: float | None = None,
    grad_fn: Callable[..., Any] | None = None,
    h: float = 1e-4,
    **options: Any,
) -> dict[Any, float]:
    """Check the gradient of scalar-valued ``fn`` at ``args`` against finite differences.

    The gradient comes from ``grad_fn(*args)`` when given, else from
    ``srcad.grad(fn, wrt=wrt, **options)(*args)``. Checked, in order: the caller's
    arguments are not mutated; there is one gradient per ``wrt`` (a tuple for a tuple
    ``wrt``); each has exactly its argument's shape and dtype (pytrees: same structure and
    key order, leaf by leaf; non-float leaves get ``None``); each agrees with
    ``numerical_grad`` on float64 copies within ``tol`` by ``rel_error``. The default
    ``tol`` is 1e-6 when every differentiated value is float64, 1e-3 when any is float32
    (srcad differentiates float32 in float32), 1e-2 for float16. Raises ``AssertionError``
    naming the argument, the error, the tolerance and the shapes; returns
    ``{wrt item: rel error}`` on success.

    With srcad: ``check_grads(loss, (W, b, x, y), wrt=("W", "b"), mode="tape")``.

    >>> def cube(x):
    ...     return np.sum(x ** 3)
    >>> x = np.linspace(-1.0, 1.0, 5)
    >>> check_grads(cube, (x,), grad_fn=lambda x: 3 * x ** 2)[0] < 1e-6
    True
    >>> check_grads(cube, (x,), grad_fn=lambda x: 6 * x ** 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: check_grads: gradient of cube is wrong
      wrt 'x' (argument 0): rel error 1.0e+00 > tol 1.0e-06; shape (5,), dtype float64; ...
    """
    args = _as_args(args)
    positions, single = _resolve_wrt(fn, wrt, len(args))
    keys = list(wrt) if isinstance(wrt, tuple) else [wrt]
    names = _param_names(fn, len(args))
    fname = getattr(fn, "__qualname__", repr(fn))
    snapshot = _snapshot(args)

    if grad_fn is None:
        import srcad  # lazy: this module must import while srcad's core does not

        grad_fn = srcad.grad(fn, wrt=wrt, **options)
        source = "srcad.grad"
    elif options:
        raise TypeError(f"options {sorted(options)} go to srcad.grad; not used with grad_fn")
    else:
        source = "grad_fn"
    grads = grad_fn(*args)

    header = f"check_grads: gradient of {fname} is wrong"
    problems = [f"{source} mutated argument {w} in place" for w in _mutated(args, snapshot, names)]
    if single:
        grads = (grads,)
    elif not isinstance(grads, tuple) or len(grads) != len(positions):
        problems.append(
            f"wrt={wrt!r} needs a tuple of {len(positions)} gradients, {source} returned "
            f"{type(grads).__name__}"
            + (f" of {len(grads)}" if isinstance(grads, (tuple, list)) else "")
        )
        raise AssertionError("\n  ".join([header, *problems]))
    for pos, g in zip(positions, grads):
        problems += _check_like(g, args[pos], f"wrt {names[pos]!r} (argument {pos})")
    if problems:
        raise AssertionError("\n  ".join([header, *problems]))

    if tol is None:
        tol = _default_tol([args[p] for p in positions])
    numeric = numerical_grad(fn, args, wrt=tuple(positions), h=h)
    errors: dict[Any, float] = {}
    for key, pos, g, n in zip(keys, positions, grads, numeric):
        worst = 0.0
        # _check_like matched g's structure and key order to the argument's, so the
        # flattened leaves line up; non-float leaves have no numerical gradient (None).
        g_paths, g_leaves, _ = _flatten(g)
        for path, gl, nl in zip(g_paths, g_leaves, _flatten(n)[1]):
            if nl is None:
                continue
            err = _leaf_rel_error(gl, nl, 1e-12)
            worst = err if math.isnan(err) else max(worst, err)
            if not err <= tol:
                idx = _worst_index(gl, nl)
                got, want = np.asarray(gl)[idx], np.asarray(nl)[idx]
                problems.append(
                    f"wrt {names[pos]!r}{path} (argument {pos}): rel error {err:.1e} > tol "
                    f"{tol:.1e}; shape {np.shape(gl)}, dtype {_leaf_dtype(gl)}; worst at index "
                    f"{idx}: got {float(got):.6g}, finite differences {float(want):.6g}"
                )
            if math.isnan(err):
                break
        errors[key] = worst
    if problems:
        raise AssertionError("\n  ".join([header, *problems]))
    return errors


def check_vjp(
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    rng: np.random.Generator | int | None = None,
    tol: float | None = None,
    h: float = 1e-4,
    vjp_fn: Callable[..., Any] | None = None,
    **options: Any,
) -> float:
    """Check the pullback of an array-valued ``fn`` at ``args`` by random projection.

    ``out, pullback = vjp_fn(*args)`` when given, else ``srcad.vjp(fn, *args, **options)``.
    A random cotangent ``u`` shaped (and typed) like ``out`` and a random float64 direction
    ``v_i`` for every float argument give two numbers that must agree:
    ``sum(u * (f(x + h v) - f(x - h v)) / 2h)`` (finite differences on float64 copies) and
    ``sum_i <pullback(u)[i], v_i>``. Also checked: ``out`` matches ``fn(*args)``; the
    pullback returns a tuple with one gradient per argument, shaped and typed like it
    (``None`` for a non-float argument); neither the arguments nor ``u`` are mutated. The
    error is ``|vjp - fd| / (|fd| + 1e-12)``; ``tol`` defaults as in ``check_grads``.
    ``rng`` is a Generator or a seed (default 0, so runs repeat). Returns the error;
    raises ``AssertionError`` on failure. ``out`` may be a pytree of float arrays.

    >>> def f(x, W):
    ...     return np.tanh(x @ W)
    >>> def f_vjp(x, W):
    ...     out = np.tanh(x @ W)
    ...     def pullback(g):
    ...         gz = g * (1 - out ** 2)
    ...         return gz @ W.T, x.T @ gz
    ...     return out, pullback
    >>> x, W = random_args([(4, 3), (3, 2)], np.float64, rng=0)
    >>> check_vjp(f, (x, W), vjp_fn=f_vjp) < 1e-6
    True
    """
    args = _as_args(args)
    gen = np.random.default_rng(0 if rng is None else rng)
    names = _param_names(fn, len(args))
    fname = getattr(fn, "__qualname__", repr(fn))
    header = f"check_vjp: pullback of {fname} is wrong"
    snapshot = _snapshot(args)

    if vjp_fn is None:
        import srcad  # lazy: see check_grads

        out, pullback = srcad.vjp(fn, *args, **options)
        source = "srcad.vjp"
    elif options:
        raise TypeError(f"options {sorted(options)} go to srcad.vjp; not used with vjp_fn")
    else:
        out, pullback = vjp_fn(*args)
        source = "vjp_fn"

    problems = [f"{source} mutated argument {w} in place" for w in _mutated(args, snapshot, names)]
    expected_out = fn(*args)
    out_paths, out_leaves, out_td = _flatten(out)
    for path, leaf in zip(out_paths, out_leaves):
        if not _is_float_leaf(leaf):
            raise ValueError(
                f"check_vjp needs floating-point outputs; output{path} is {leaf!r:.60}"
            )
    if tol is None:
        tol = _default_tol([*args, out])
    problems += _check_like(out, expected_out, "out")
    if not problems:
        err = rel_error(out, expected_out)
        if not err <= tol:
            problems.append(f"out differs from fn(*args): rel error {err:.1e} > tol {tol:.1e}")
    if problems:
        raise AssertionError("\n  ".join([header, *problems]))

    u_leaves = [_random_like(leaf, gen) for leaf in out_leaves]
    u = _unflatten(out_td, u_leaves)
    u_snapshot = _snapshot((u,))
    grads = pullback(u)
    if _mutated((u,), u_snapshot, ["cotangent"]):
        problems.append("the pullback mutated its cotangent in place")
    problems += [f"the pullback mutated argument {w}" for w in _mutated(args, snapshot, names)]
    if not isinstance(grads, tuple) or len(grads) != len(args):
        got = type(grads).__name__
        if isinstance(grads, (tuple, list)):
            got += f" of {len(grads)}"
        problems.append(f"the pullback must return a tuple of {len(args)} gradients, got {got}")
        raise AssertionError("\n  ".join([header, *problems]))
    for i, (g, a) in enumerate(zip(grads, args)):
        where = f"gradient for {names[i]!r} (argument {i})"
        if not any(_is_float_leaf(leaf) for leaf in _flatten(a)[1]):
            if g is not None:
                problems.append(f"{where}: non-float argument needs None, got {g!r:.60}")
            continue
        problems += _check_like(g, a, where)
    if problems:
        raise AssertionError("\n  ".join([header, *problems]))

    # Random directions, float64, one per float leaf of every argument.
    directions = []
    vjp_side = 0.0
    for a, g in zip(args, grads):
        _, leaves, _ = _flatten(a)
        g_leaves = _flatten(g)[1] if g is not None else [None] * len(leaves)
        dirs = []
        for leaf, gl in zip(leaves, g_leaves):
            if _is_float_leaf(leaf):
                v = gen.standard_normal(np.shape(leaf))
                dirs.append(v)
                if gl is not None:
                    vjp_side += float(np.sum(np.asarray(gl, dtype=np.float64) * v))
            else:
                dirs.append(None)
        directions.append(dirs)

    def shifted(sign: float) -> list[np.ndarray]:
        moved = []
        for a, dirs in zip(args, directions):
            _, leaves, td = _flatten(_float64_copy(a))
            new = [
                leaf if v is None else _present(leaf, np.asarray(leaf) + sign * h * v)
                for leaf, v in zip(leaves, dirs)
            ]
            moved.append(_unflatten(td, new))
        return [np.asarray(y, dtype=np.float64) for y in _flatten(fn(*moved))[1]]

    plus, minus = shifted(1.0), shifted(-1.0)
    fd_side = sum(
        float(np.sum(np.asarray(ul, dtype=np.float64) * (p - m) / (2 * h)))
        for ul, p, m in zip(u_leaves, plus, minus)
    )
    err = abs(vjp_side - fd_side) / (abs(fd_side) + 1e-12)
    if not err <= tol:
        shapes = ", ".join(f"{names[i]} {np.shape(a)}" for i, a in enumerate(args))
        raise AssertionError(
            f"{header}\n  <pullback(u), v> = {vjp_side:.9g}, finite differences <u, J v> = "
            f"{fd_side:.9g}: rel error {err:.1e} > tol {tol:.1e}; output shape "
            f"{[np.shape(o) for o in out_leaves]}, arguments {shapes}"
        )
    return err


def _random_like(leaf: Any, gen: np.random.Generator) -> Any:
    value = gen.standard_normal(np.shape(leaf))
    if isinstance(leaf, np.ndarray):
        return value.astype(leaf.dtype)
    if isinstance(leaf, np.generic):
        return leaf.dtype.type(value[()])
    return float(value[()])


# ---------------------------------------------------------------------------------------
# Shapes and inputs
# ---------------------------------------------------------------------------------------


def _full_sizes(max_ndim: int, sizes: Sequence[int] | None) -> Shape:
    if max_ndim < 0:
        raise ValueError(f"max_ndim must be >= 0, got {max_ndim}")
    full = tuple(k + 2 for k in range(max_ndim)) if sizes is None else tuple(sizes)
    if len(full) != max_ndim or any(int(s) < 2 for s in full):
        raise ValueError(f"sizes must be {max_ndim} axis sizes, each >= 2; got {sizes!r}")
    return full


def _candidate_shapes(full: Shape) -> list[Shape]:
    """Every shape of rank 0..len(full) whose axis is 1 or the full size (right-aligned)."""
    shapes = []
    for r in range(len(full) + 1):
        tail = full[len(full) - r :]
        for ones in itertools.product((False, True), repeat=r):
            shapes.append(tuple(1 if one else s for one, s in zip(ones, tail)))
    return shapes


def broadcast_pairs(
    max_ndim: int = 3, sizes: Sequence[int] | None = None
) -> list[tuple[Shape, Shape]]:
    """A deterministic grid of shape pairs that numpy broadcasts together.

    Axes are right-aligned and each axis of the broadcast result has its own size,
    ``sizes`` left to right (default ``k + 2`` for axis ``k``: ``(2, 3, 4)`` for rank 3), so
    a transposed or mis-summed gradient cannot pass by accident; an operand's axis is that
    size or 1. One pair is kept for every combination of (rank of a, rank of b, a is
    broadcast, b is broadcast), preferring a result without size-1 axes and then the fewest
    size-1 axes; extras add a size-1 axis at every position (a bias ``(1, 4)`` against
    ``(3, 4)``), alternating 1s on both sides, all-ones operands and a size-1 axis kept in
    the result.
    That covers ``()`` on either side, rank mismatch, size-1 axes on either side and both
    sides broadcasting at once (``(3, 1)`` with ``(1, 4)``). 38 pairs for rank 3.

    >>> pairs = broadcast_pairs()
    >>> ((3, 1), (1, 4)) in pairs and ((), (3, 4)) in pairs and ((4,), (3, 4)) in pairs
    True
    >>> all(np.broadcast_shapes(a, b) is not None for a, b in pairs)
    True
    """
    full = _full_sizes(max_ndim, sizes)
    shapes = _candidate_shapes(full)
    best: dict[tuple[int, int, bool, bool], tuple[tuple[int, int, int], Shape, Shape]] = {}
    for order, (a, b) in enumerate(itertools.product(shapes, shapes)):
        out = np.broadcast_shapes(a, b)
        sig = (len(a), len(b), a != out, b != out)
        rank = (int(1 in out), a.count(1) + b.count(1), order)
        if sig not in best or rank < best[sig][0]:
            best[sig] = (rank, a, b)
    pairs = [(a, b) for _, (_, a, b) in sorted(best.items(), key=lambda kv: kv[0])]
    # A size-1 axis at each position, not only the last one picked above (a bias row is
    # (1, n) against (m, n)), and one two-sided pair that alternates 1s.
    for r in range(2, max_ndim + 1):
        tail = full[max_ndim - r :]
        pairs += [(tail[:k] + (1,) + tail[k + 1 :], tail) for k in range(r - 1)]
    if max_ndim >= 3:
        alt = tuple(1 if k % 2 == 0 else s for k, s in enumerate(full))
        pairs.append((alt, tuple(s if k % 2 == 0 else 1 for k, s in enumerate(full))))
    if max_ndim >= 1:
        ones = (1,) * max_ndim
        keep = (1,) + full[1:]  # a size-1 axis that survives into the result
        pairs += [(ones, full), (full, ones), (ones, ()), (keep, keep[1:])]
    return _unique(pairs)


def broadcast_shapes_for(
    nargs: int, max_ndim: int = 3, sizes: Sequence[int] | None = None
) -> list[tuple[Shape, ...]]:
    """Deterministic tuples of ``nargs`` shapes that broadcast together (for n-ary ops).

    ``nargs=1`` gives single shapes of every rank, ``nargs=2`` is ``broadcast_pairs``.
    For three or more (``np.where``, ``np.clip``): no broadcasting, all scalars, each
    position alone a scalar / the only full array / one rank short / with a size-1 axis,
    and every operand broadcasting at once. Sizes are chosen as in ``broadcast_pairs``.

    >>> triples = broadcast_shapes_for(3)
    >>> ((1, 3, 4), (2, 1, 4), (2, 3, 1)) in triples
    True
    >>> len(triples) < len(broadcast_pairs())
    True
    """
    full = _full_sizes(max_ndim, sizes)
    if nargs < 1:
        raise ValueError(f"nargs must be >= 1, got {nargs}")
    if nargs == 1:
        singles = [(full[len(full) - r :],) for r in range(max_ndim + 1)]
        if max_ndim >= 2:
            singles.append((full[:1] + (1,) + full[2:],))
        return _unique(singles)
    if nargs == 2:
        return broadcast_pairs(max_ndim, sizes)
    m = max_ndim

    def with_one(axis: int) -> Shape:
        return tuple(1 if k == axis else s for k, s in enumerate(full))

    def put(i: int, shape: Shape, rest: Shape) -> tuple[Shape, ...]:
        return tuple(shape if j == i else rest for j in range(nargs))

    combos: list[tuple[Shape, ...]] = [(full,) * nargs, ((),) * nargs]
    for i in range(nargs):
        combos.append(put(i, (), full))
        combos.append(put(i, full, ()))
        if m >= 1:
            combos.append(put(i, full[1:], full))
            combos.append(put(i, with_one(i % m), full))
    if m >= 1:
        combos.append(tuple(with_one(i % m) for i in range(nargs)))
    if m >= 2:  # rank mismatch, two-sided and scalar at once: (3, 1), (2, 1, 4), ()
        combos.append((with_one(m - 1)[1:], with_one(m - 2), *[()] * (nargs - 2)))
    return _unique(combos)


def _unique(items: list[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


def random_args(
    shapes: Sequence[Shape],
    dtype: Any,
    rng: np.random.Generator | int | None,
    domain: Any = (-2.0, 2.0),
) -> tuple[np.ndarray, ...]:
    """Random arrays, one per shape, of ``dtype`` drawn uniformly from ``domain``.

    ``domain`` is one ``(low, high)`` for all arguments, e.g. ``(0.1, 2.0)`` for log or
    sqrt, or a sequence with one ``(low, high)`` per shape. Integer dtypes draw integers in
    ``[ceil(low), floor(high)]``; bool draws fair coins. ``rng`` is a Generator or a seed
    (``None`` means seed 0). Shape ``()`` gives a 0-d array.

    >>> x, y = random_args([(2, 3), ()], np.float32, rng=0, domain=(0.1, 2.0))
    >>> x.shape, x.dtype, y.shape, bool(((x >= 0.1) & (x <= 2.0)).all())
    ((2, 3), dtype('float32'), (), True)
    """
    if any(isinstance(s, (int, np.integer)) for s in shapes):
        raise TypeError(f"shapes is a sequence of shapes; for one shape write [{tuple(shapes)}]")
    gen = np.random.default_rng(0 if rng is None else rng)
    dtype = np.dtype(dtype)
    if len(domain) == 2 and all(isinstance(d, (int, float, np.number)) for d in domain):
        domains = [tuple(domain)] * len(shapes)
    else:
        domains = [tuple(d) for d in domain]
        if len(domains) != len(shapes):
            raise ValueError(f"{len(domains)} domains for {len(shapes)} shapes")
    out = []
    for shape, (low, high) in zip(shapes, domains):
        shape = tuple(shape)
        if dtype == np.bool_:
            value = gen.random(shape) < 0.5
        elif np.issubdtype(dtype, np.integer):
            value = gen.integers(math.ceil(low), math.floor(high), size=shape, endpoint=True)
        else:
            value = gen.uniform(low, high, size=shape)
        out.append(np.asarray(value).astype(dtype))
    return tuple(out)


# ---------------------------------------------------------------------------------------
# Forward mode: JVPs against finite differences, and forward against reverse
# ---------------------------------------------------------------------------------------

# Forward and reverse mode are both exact; they differ only by rounding, so their default
# agreement tolerance is far tighter than a finite-difference one.
_CONSISTENCY_TOLERANCES = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4}
_CONSISTENCY_DEFAULT_TOL = 1e-9


def _all_float(tree: Any) -> bool:
    """Whether srcad differentiates this argument: every leaf (at least one) is a float."""
    leaves = _flatten(tree)[1]
    return bool(leaves) and all(_is_float_leaf(leaf) for leaf in leaves)


def _random_tree_like(tree: Any, gen: np.random.Generator) -> Any:
    """A random tree shaped and typed like ``tree`` (its float leaves must all be floats)."""
    _, leaves, td = _flatten(tree)
    return _unflatten(td, [_random_like(leaf, gen) for leaf in leaves])


def _tree_dot(a: Any, b: Any) -> float:
    """``sum_leaves sum(a * b)`` in float64; ``None`` leaves contribute nothing."""
    total = 0.0
    for _, x, y in _zip_leaves(a, b):
        if x is None or y is None:
            continue
        total += float(np.sum(np.asarray(x, dtype=np.float64) * np.asarray(y, dtype=np.float64)))
    return total


def _lowest_float(trees: Sequence[Any]) -> np.dtype:
    """The least precise float dtype among the float leaves of ``trees`` (float64 if none)."""
    dtypes = [
        _leaf_dtype(leaf)
        for tree in trees
        for leaf in _flatten(tree)[1]
        if _is_float_leaf(leaf) and _leaf_dtype(leaf) is not None
    ]
    return min(dtypes, key=lambda d: d.itemsize, default=np.dtype(np.float64))


def check_jvp(
    fn: Callable[..., Any],
    args: Sequence[Any],
    tangents: Sequence[Any] | None = None,
    *,
    rng: np.random.Generator | int | None = None,
    tol: float | None = None,
    h: float = 1e-4,
    jvp_fn: Callable[..., Any] | None = None,
    **options: Any,
) -> float:
    """Check the JVP of ``fn`` at ``args`` along ``tangents`` against central differences.

    ``out, out_dot = jvp_fn(args, tangents)`` when given, else
    ``srcad.jvp(fn, args, tangents, **options)``. ``tangents`` has one entry per argument:
    for a float argument (every leaf of a pytree a float) a tree of its structure, shapes
    and dtypes; ``None`` for any other argument. Default: random normal tangents drawn from
    ``rng`` (a Generator or a seed, default 0), cast to each leaf's dtype.

    Checked: ``out`` matches ``fn(*args)``; ``out_dot`` has ``out``'s structure, shapes and
    dtypes (float32 stays float32); neither arguments nor tangents are mutated; and
    ``out_dot`` agrees by ``rel_error`` with ``(f(x + h v) - f(x - h v)) / 2h`` computed on
    float64 copies. ``tol`` defaults as in ``check_grads`` (1e-6 in float64, 1e-3 if
    anything is float32). Returns the error; raises ``AssertionError`` on failure.

    >>> def f(x, y):
    ...     return np.sin(x) * y
    >>> x, y = random_args([(3,), (3,)], np.float64, rng=0)
    >>> check_jvp(f, (x, y), jvp_fn=lambda p, t: (
    ...     f(*p), np.cos(p[0]) * p[1] * t[0] + np.sin(p[0]) * t[1])) < 1e-6
    True
    """
    args = _as_args(args)
    gen = np.random.default_rng(0 if rng is None else rng)
    names = _param_names(fn, len(args))
    fname = getattr(fn, "__qualname__", repr(fn))
    header = f"check_jvp: JVP of {fname} is wrong"
    differentiable = [_all_float(a) for a in args]
    if tangents is None:
        tangents = tuple(
            _random_tree_like(a, gen) if d else None for a, d in zip(args, differentiable)
        )
    else:
        tangents = _as_args(tangents)
        if len(tangents) != len(args):
            raise ValueError(f"{len(tangents)} tangents for {len(args)} arguments")
    problems = []
    for i, (a, t, d) in enumerate(zip(args, tangents, differentiable)):
        if d:
            problems += _check_like(t, a, f"tangent for {names[i]!r} (argument {i})")
    if problems:
        raise ValueError("\n  ".join(["check_jvp: bad tangents", *problems]))
    snapshot = _snapshot(args)
    t_snapshot = _snapshot([t for t in tangents if t is not None])

    if jvp_fn is None:
        import srcad  # lazy: see check_grads

        out, out_dot = srcad.jvp(fn, args, tangents, **options)
        source = "srcad.jvp"
    elif options:
        raise TypeError(f"options {sorted(options)} go to srcad.jvp; not used with jvp_fn")
    else:
        out, out_dot = jvp_fn(args, tangents)
        source = "jvp_fn"

    problems = [f"{source} mutated argument {w} in place" for w in _mutated(args, snapshot, names)]
    if _mutated([t for t in tangents if t is not None], t_snapshot,
                [f"tangent {i}" for i in range(len(tangents))]):
        problems.append(f"{source} mutated a tangent in place")
    expected_out = fn(*args)
    if tol is None:
        tol = _default_tol([*args, expected_out])
    problems += _check_like(out, expected_out, "out")
    if not problems:
        err = rel_error(out, expected_out)
        if not err <= tol:
            problems.append(f"out differs from fn(*args): rel error {err:.1e} > tol {tol:.1e}")
    problems += _check_like(out_dot, expected_out, "tangent out")
    if problems:
        raise AssertionError("\n  ".join([header, *problems]))

    def shifted(sign: float) -> Any:
        moved = []
        for a, t, d in zip(args, tangents, differentiable):
            a64 = _float64_copy(a)
            if not d:
                moved.append(a64)
                continue
            _, leaves, td = _flatten(a64)
            t_leaves = _flatten(t)[1]
            moved.append(_unflatten(td, [
                _present(leaf, np.asarray(leaf) + sign * h * np.asarray(v, dtype=np.float64))
                for leaf, v in zip(leaves, t_leaves)
            ]))
        return fn(*moved)

    plus, minus = shifted(1.0), shifted(-1.0)
    _, p_leaves, out_td = _flatten(plus)
    m_leaves = _flatten(minus)[1]
    fd = _unflatten(out_td, [
        (np.asarray(p, dtype=np.float64) - np.asarray(m, dtype=np.float64)) / (2 * h)
        for p, m in zip(p_leaves, m_leaves)
    ])
    _, d_leaves, d_td = _flatten(out_dot)
    err = rel_error(_unflatten(d_td, [np.asarray(x, dtype=np.float64) for x in d_leaves]), fd)
    if not err <= tol:
        shapes = ", ".join(f"{names[i]} {np.shape(a)}" for i, a in enumerate(args))
        raise AssertionError(
            f"{header}\n  tangent out differs from finite differences along the tangent: "
            f"rel error {err:.1e} > tol {tol:.1e}; arguments {shapes}"
        )
    return err


def check_consistency(
    fn: Callable[..., Any],
    args: Sequence[Any],
    rng: np.random.Generator | int | None = None,
    *,
    tol: float | None = None,
    **options: Any,
) -> float:
    """Forward mode against reverse mode: ``<u, J v>`` from ``srcad.jvp`` against
    ``<J^T u, v>`` from ``srcad.vjp``, for a random cotangent ``u`` (shaped and typed like
    the output) and random tangents ``v`` (one per float argument, a tree for a pytree).

    The two numbers are the same bilinear form evaluated both ways (right to left and left
    to right through ``J``), so they agree up to rounding; no finite differences are
    involved. Also checked: both transforms return ``fn(*args)`` as the value, the tangent
    out has the output's shape and dtype, and every gradient its argument's. The error is
    ``|<u, J v> - <J^T u, v>| / (max(|<u, J v>|, |<J^T u, v>|) + 1e-12)`` (symmetric: neither
    mode is the reference). ``tol`` defaults to 1e-9 in float64, 1e-4 if anything is float32,
    1e-2 for float16. ``rng`` is a Generator or a seed (default 0). Returns the error;
    raises ``AssertionError`` on failure. ``options`` go to both transforms.

    >>> from srcad.zoo.transformer import gelu, softmax
    >>> x, = random_args([(3, 4)], np.float64, rng=0)
    >>> check_consistency(gelu, (x,)) < 1e-9
    True
    >>> check_consistency(softmax, (x.astype(np.float32),), rng=1) < 1e-4
    True
    """
    import srcad  # lazy: see check_grads

    args = _as_args(args)
    gen = np.random.default_rng(0 if rng is None else rng)
    names = _param_names(fn, len(args))
    fname = getattr(fn, "__qualname__", repr(fn))
    header = f"check_consistency: forward and reverse mode of {fname} disagree"
    differentiable = [_all_float(a) for a in args]
    if not any(differentiable):
        raise ValueError(f"{fname}: no floating-point argument to differentiate")

    expected_out = fn(*args)
    out_r, pullback = srcad.vjp(fn, *args, **options)
    if not _all_float(out_r):
        raise ValueError(f"check_consistency needs a floating-point output, got {out_r!r:.60}")
    u = _random_tree_like(out_r, gen)
    v = tuple(_random_tree_like(a, gen) if d else None for a, d in zip(args, differentiable))
    out_f, out_dot = srcad.jvp(fn, args, v, **options)
    grads = pullback(u)

    if tol is None:
        dt = _lowest_float([*args, expected_out])
        tol = _CONSISTENCY_TOLERANCES.get(dt, _CONSISTENCY_DEFAULT_TOL)
    problems = []
    for label, out in (("srcad.vjp", out_r), ("srcad.jvp", out_f)):
        like = _check_like(out, expected_out, f"{label} value")
        problems += like
        if not like:
            err = rel_error(out, expected_out)
            if not err <= tol:
                problems.append(f"{label} value differs from fn(*args): rel error {err:.1e}")
    problems += _check_like(out_dot, expected_out, "tangent out")
    for i, (g, a, d) in enumerate(zip(grads, args, differentiable)):
        if d:
            problems += _check_like(g, a, f"gradient for {names[i]!r} (argument {i})")
    if problems:
        raise AssertionError("\n  ".join([header, *problems]))

    forward = _tree_dot(u, out_dot)
    reverse = sum(_tree_dot(g, t) for g, t, d in zip(grads, v, differentiable) if d)
    err = abs(forward - reverse) / (max(abs(forward), abs(reverse)) + 1e-12)
    if not err <= tol:
        shapes = ", ".join(f"{names[i]} {np.shape(a)}" for i, a in enumerate(args))
        raise AssertionError(
            f"{header}\n  <u, J v> (srcad.jvp) = {forward:.12g}, <J^T u, v> (srcad.vjp) = "
            f"{reverse:.12g}: rel error {err:.1e} > tol {tol:.1e}; arguments {shapes}"
        )
    return err


__all__ += ["check_consistency", "check_jvp"]
