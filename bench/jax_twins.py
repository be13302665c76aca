"""The zoo's Transformer block and tiny GPT for JAX: the *same source* run with ``np`` bound to
``jax.numpy``, so that the peer computes exactly the math srcad differentiates, op for op.

    from jax_twins import load
    T, G = load()            # module-like namespaces: T.block_loss, G.loss, ...

Bench-only (jax is an optional extra, never imported under srcad/). The zoo files are plain
numpy: every call they make (mean, sqrt, tanh, exp, max, sum, reshape, transpose, swapaxes,
arange, where, indexing by an int array) has a jax.numpy twin of the same name.
"""

from __future__ import annotations

import types

import jax.numpy as jnp

from srcad.zoo import gpt as _gpt
from srcad.zoo import transformer as _transformer


def _rebind(module, extra=None):
    """A copy of `module`'s namespace whose functions read `np` as jax.numpy."""
    with open(module.__file__) as f:
        src = f.read()
    ns = types.ModuleType(module.__name__ + "_jax")
    ns.__dict__["__file__"] = module.__file__
    exec(compile(src, module.__file__, "exec"), ns.__dict__)
    ns.np = jnp
    for k, v in (extra or {}).items():
        setattr(ns, k, v)
    return ns


def load():
    T = _rebind(_transformer)
    G = _rebind(_gpt, {"transformer": T, "layer_norm": T.layer_norm,
                       "log_softmax": T.log_softmax})
    return T, G
