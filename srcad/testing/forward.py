"""Forward mode: `check_jvp` (a JVP against finite differences along the tangent) and
`check_consistency` (forward mode against reverse mode)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import api
from ..binding import _is_differentiable
from .trees import (
    _as_args,
    _default_tol,
    _flatten,
    _float64_copy,
    _is_float_leaf,
    _leaf_dtype,
    _mutated,
    _param_names,
    _snapshot,
    _unflatten,
    _zip_leaves,
    rel_error,
)
from .grads import _check_like, _present, _random_like

# ---------------------------------------------------------------------------------------
# Forward mode: JVPs against finite differences, and forward against reverse
# ---------------------------------------------------------------------------------------

# Forward and reverse mode are both exact; they differ only by rounding, so their default
# agreement tolerance is far tighter than a finite-difference one.
_CONSISTENCY_TOLERANCES = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4}
_CONSISTENCY_DEFAULT_TOL = 1e-9


def _all_float(tree: Any) -> bool:
    """Whether srcad differentiates this argument: every leaf (at least one) is a float."""
    return _is_differentiable(tree)


def _random_tree_like(tree: Any, gen: np.random.Generator) -> Any:
    """A random tree shaped and typed like ``tree`` (its float leaves must all be floats)."""
    _, leaves, td = _flatten(tree)
    return _unflatten(td, [_random_like(leaf, gen) if _is_float_leaf(leaf) else None
                           for leaf in leaves])


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

        out, out_dot = api.jvp(fn, args, tangents, **options)
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
                if v is not None and _is_float_leaf(leaf) else leaf
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

    args = _as_args(args)
    gen = np.random.default_rng(0 if rng is None else rng)
    names = _param_names(fn, len(args))
    fname = getattr(fn, "__qualname__", repr(fn))
    header = f"check_consistency: forward and reverse mode of {fname} disagree"
    differentiable = [_all_float(a) for a in args]
    if not any(differentiable):
        raise ValueError(f"{fname}: no floating-point argument to differentiate")

    expected_out = fn(*args)
    out_r, pullback = api.vjp(fn, *args, **options)
    if not _all_float(out_r):
        raise ValueError(f"check_consistency needs a floating-point output, got {out_r!r:.60}")
    u = _random_tree_like(out_r, gen)
    v = tuple(_random_tree_like(a, gen) if d else None for a, d in zip(args, differentiable))
    out_f, out_dot = api.jvp(fn, args, v, **options)
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


