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

The package: `trees` (pytrees, the metric, argument handling), `grads` (finite differences,
check_grads, check_vjp), `shapes` (broadcast grids, random inputs), `forward` (check_jvp,
check_consistency). Besides srcad's own API it imports only numpy and the standard library.
"""

from .forward import check_consistency, check_jvp
from .grads import check_grads, check_vjp, numerical_grad
from .shapes import broadcast_pairs, broadcast_shapes_for, random_args
from .trees import rel_error

__all__ = [
    "broadcast_pairs",
    "broadcast_shapes_for",
    "check_consistency",
    "check_grads",
    "check_jvp",
    "check_vjp",
    "numerical_grad",
    "random_args",
    "rel_error",
]
