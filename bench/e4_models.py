"""Model functions for E4 (gradient checkpointing frontier). srcad reads their source here.

An L-layer tanh MLP written as a `for` loop over a list of weights. Three schedules:

* ``loss_plain``: the plain loop; the backward keeps every layer's values (save-everything).
* ``loss_ckpt(h, Ws, k)`` (``loss_ckpt_tail`` when k does not divide L): the loop cut into
  ceil(L / k) segments of k layers (the last one shorter if need be), each segment a
  ``srcad.checkpoint``-ed call: the forward keeps only the segment inputs (every k-th state),
  and the backward recomputes one segment's forward right before running its backward.
  k = round(sqrt(L)) is the sqrt(n) schedule; k = 1 checkpoints every layer.
"""

import numpy as np

import srcad


def segment(h, Ws, start, k):
    """Layers start .. start + k - 1."""
    for i in range(start, start + k):
        h = np.tanh(h @ Ws[i])
    return h


def loss_plain(h, Ws):
    """Save-everything: a plain loop over all layers."""
    for i in range(len(Ws)):
        h = np.tanh(h @ Ws[i])
    return np.sum(h * h)


def loss_ckpt(h, Ws, k):
    """Keep every k-th state: L // k checkpointed segments of k layers (k divides L)."""
    for s in range(len(Ws) // k):
        h = srcad.checkpoint(segment)(h, Ws, s * k, k)
    return np.sum(h * h)


def loss_ckpt_tail(h, Ws, k):
    """The same when k does not divide L: L // k segments of k layers and a last, shorter one
    of L % k layers.

    Two functions rather than one with the `if` below, because srcad.vjp / srcad.explain
    (not srcad.grad) fail with UnboundLocalError when the `if` is not taken (a value saved
    inside an untaken branch); and the builtin `min` of two ints has no rule in srcad, so
    the segment length cannot be written min(k, L - start). See REPORT.md, E4.
    """
    n = len(Ws)
    full = n // k
    for s in range(full):
        h = srcad.checkpoint(segment)(h, Ws, s * k, k)
    if n % k > 0:
        h = srcad.checkpoint(segment)(h, Ws, full * k, n % k)
    return np.sum(h * h)
