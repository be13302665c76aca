"""`srcad.checkpoint`: save a call's inputs, recompute its insides in the backward sweep.

    h = srcad.checkpoint(block)(h, W)

Outside differentiated code the wrapper just calls `block`. Inside it, the frontend marks the
call (`ir.UserCall.checkpoint`) and the reverse transform emits a plain forward call that saves
nothing of `block`'s internals, then, in the backward sweep, re-runs `block_fwd` on the saved
inputs (a comment says so) right before `block_bwd`. The recomputation runs the same ops in the
same order, so gradients are bit-for-bit those of the unchecked program.

Loop checkpointing is written with it: to keep every k-th state of an n-layer loop (k = sqrt(n)
segments), make the segment a function and checkpoint it --
``for s in range(n // k): h = srcad.checkpoint(segment)(h, Ws, s * k, k)`` (see bench/e4).
"""

from __future__ import annotations

import functools


class Checkpointed:
    """A function whose derivative is computed by recomputing it (see the module docstring)."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"srcad.checkpoint({getattr(self.fn, '__qualname__', self.fn)!r})"


def checkpoint(fn) -> Checkpointed:
    """Mark `fn` for recomputation in the backward sweep instead of saving its insides.

    >>> import numpy as np, srcad
    >>> def layer(h, W):
    ...     return np.tanh(h @ W)
    >>> ck = srcad.checkpoint(layer)
    >>> ck(np.ones((1, 2)), np.eye(2)).shape   # outside differentiated code: just the call
    (1, 2)
    """
    if isinstance(fn, Checkpointed):
        return fn
    return Checkpointed(fn)
