"""Shapes that broadcast together (`broadcast_pairs`, `broadcast_shapes_for`) and random
inputs for them (`random_args`): the grids the op table's tests are built from."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .trees import Shape

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
