"""Model functions for E4 (gradient checkpointing frontier). srcad reads their source here.

An L-layer tanh MLP, h <- tanh(h @ W_i) for i < L, written as a `for` loop over a list of
weights, loss sum(h ** 2). The schedules are written the way a user would write them:

* ``loss_plain(h, Ws)``: the plain loop; the backward keeps every layer's values
  (save-everything). The ``memory_budget=`` policy is run on this one too: it chooses the
  schedule itself.
* ``loss_sqrt(h, Ws)``: ``for i in srcad.checkpoint(range(L))``, the default schedule: keep
  every k-th loop state, k = isqrt(L - 1) + 1 ~ sqrt(L) (the sqrt(n) schedule).
* ``loss_every(h, Ws, k)``: ``srcad.checkpoint(range(L), every=k)``, k a parameter.
* ``loss_revolve(h, Ws, c)``: ``srcad.checkpoint(range(L), snapshots=c)``: the binomial
  (revolve) schedule keeping at most c loop states.
* ``loss_iter(h, Ws)``: the default schedule over the weights themselves,
  ``for W in srcad.checkpoint(Ws)``.
* ``loss_ckpt(h, Ws, k)`` / ``loss_ckpt_tail``: the older way, by hand: the loop cut into
  k-layer segment functions, each call ``srcad.checkpoint(segment)``-ed (kept as one row per
  L, to compare the transform's loop checkpointing with the hand-written segments).
"""

import numpy as np

import srcad


def loss_plain(h, Ws):
    """Save-everything: a plain loop over all layers."""
    for i in range(len(Ws)):
        h = np.tanh(h @ Ws[i])
    return np.sum(h * h)


def loss_sqrt(h, Ws):
    """The default loop checkpoint: every isqrt(L - 1) + 1 states (sqrt(n))."""
    for i in srcad.checkpoint(range(len(Ws))):
        h = np.tanh(h @ Ws[i])
    return np.sum(h * h)


def loss_every(h, Ws, k):
    """Keep every k-th loop state."""
    for i in srcad.checkpoint(range(len(Ws)), every=k):
        h = np.tanh(h @ Ws[i])
    return np.sum(h * h)


def loss_revolve(h, Ws, c):
    """Binomial (revolve) schedule: at most c loop states kept, fewest steps recomputed."""
    for i in srcad.checkpoint(range(len(Ws)), snapshots=c):
        h = np.tanh(h @ Ws[i])
    return np.sum(h * h)


def loss_iter(h, Ws):
    """The default schedule, iterating over the weights instead of an index."""
    for W in srcad.checkpoint(Ws):
        h = np.tanh(h @ W)
    return np.sum(h * h)


def forward_only(h, Ws):
    """The forward pass in plain numpy (no gradient): the unit of recomputation."""
    for W in Ws:
        h = np.tanh(h @ W)
    return np.sum(h * h)


# -- the older, hand-written form: segment functions under srcad.checkpoint(fn) ------------


def segment(h, Ws, start, k):
    """Layers start .. start + k - 1."""
    for i in range(start, start + k):
        h = np.tanh(h @ Ws[i])
    return h


def loss_ckpt(h, Ws, k):
    """Keep every k-th state: L // k checkpointed segments of k layers (k divides L)."""
    for s in range(len(Ws) // k):
        h = srcad.checkpoint(segment)(h, Ws, s * k, k)
    return np.sum(h * h)


def loss_ckpt_tail(h, Ws, k):
    """The same when k does not divide L: L // k segments of k layers and a last, shorter
    one of L % k layers."""
    n = len(Ws)
    full = n // k
    for s in range(full):
        h = srcad.checkpoint(segment)(h, Ws, s * k, k)
    if n % k > 0:
        h = srcad.checkpoint(segment)(h, Ws, full * k, n % k)
    return np.sum(h * h)
