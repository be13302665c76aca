"""Central differences (`numerical_grad`) and the reverse-mode checks built on them:
`check_grads` (a gradient against finite differences) and `check_vjp` (a pullback, by
random projection)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import api
from .trees import (
    _as_args,
    _default_tol,
    _flatten,
    _float64_copy,
    _is_float_leaf,
    _is_node,
    _kind,
    _leaf_dtype,
    _leaf_rel_error,
    _mutated,
    _param_names,
    _resolve_wrt,
    _scalar_output,
    _snapshot,
    _unflatten,
    _worst_index,
    rel_error,
)

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
        if flat[pos][1] and not any(_is_float_leaf(leaf) for leaf in flat[pos][1]):
            # (an empty dict, list or tuple has an empty gradient, as in JAX and autograd)
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
    """The value ``fn`` sees for a leaf: arrays as arrays (a copy at every call: a function
    that writes into its argument, `x -= m`, leaves the perturbed values and the caller's
    array as they were), scalars as scalars."""
    if isinstance(work, np.ndarray) and (isinstance(original, np.ndarray)
                                         or not _is_float_leaf(original)):
        return work.copy()
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

        grad_fn = api.grad(fn, wrt=wrt, **options)
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

        out, pullback = api.vjp(fn, *args, **options)
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
