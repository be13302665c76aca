"""Tenth set: everyday Python idioms of numpy-from-scratch layer code (written here from
scratch): layers kept by ``setattr(self, f"W{i}", W)`` and read by ``getattr``, a forward by
``functools.reduce`` over layers, ``@dataclass`` and ``@property`` layers, ``layer(x, **cfg)``
of a built layer, ``it = iter(weights)`` read by ``next(it)`` in loops and branches, a list
used as a stack (``while stack: h = f(h @ stack.pop())``), the last layer popped off a copy,
``first, *rest = Ws``, a generator of layers, ``zip(*pairs)``, ``sliding_window_view`` and
``as_strided`` windows, a solve under ``try/except LinAlgError``, an f-string progress print,
``np.vectorize`` of a lambda, masked in-place scaling ``y[y < 0] *= 0.1``, ``np.outer``
accumulated over rows, ``**kw.get`` in a nested def, ``max(0.0, s)`` of a scalar loss.
Probes of 2026-12-04: the ``**cfg``, ``iter``, ``.pop()`` and dataclass forms were refused or
crashed before that day."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from . import Probe, rng


def _ws(seed=0, n=3, d=4):
    r = rng(seed)
    return [r.standard_normal((d, d)) * 0.5 for _ in range(n)], r.standard_normal((5, d))


# ---- layers kept by name ---------------------------------------------------------------

class NamedMLP:
    def __init__(self, Ws):
        for i, W in enumerate(Ws):
            setattr(self, f"W{i}", W)
        self.depth = len(Ws)

    def __call__(self, x):
        for i in range(self.depth):
            x = np.tanh(x @ getattr(self, f"W{i}"))
        return x


def setattr_layers(Ws, x):
    return np.sum(NamedMLP(Ws)(x) ** 2)


class Tanh:
    def __init__(self, W):
        self.W = W

    def __call__(self, h):
        return np.tanh(h @ self.W)


def reduce_over_layers(Ws, x):
    layers = [Tanh(W) for W in Ws]
    return np.sum(functools.reduce(lambda h, layer: layer(h), layers, x))


@dataclass
class Affine:
    W: np.ndarray
    b: np.ndarray
    act: str = "tanh"

    def __call__(self, x):
        z = x @ self.W + self.b
        return np.tanh(z) if self.act == "tanh" else np.maximum(z, 0.0)


def dataclass_layers(Ws, b, x):
    net = [Affine(Ws[0], b), Affine(Ws[1], -b, act="relu"), Affine(Ws[2], b * 0.5)]
    for layer in net:
        x = layer(x)
    return np.mean(x ** 2)


class Scaled:
    def __init__(self, W):
        self._W = W

    @property
    def W(self):
        return self._W

    def forward(self, x, gain=1.0, shift=0.0):
        return np.sin(x @ self.W) * gain + shift


def property_and_spread(Ws, x):
    cfg = {"gain": 1.5, "shift": 0.25}
    h = x
    for W in Ws:
        h = Scaled(W).forward(h, **cfg)
    return np.sum(h ** 2)


def call_with_spread(Ws, b, x):
    cfg = {"act": "relu"}
    layer = Affine(Ws[0], b, **cfg)
    out = Tanh(Ws[1])(layer(x))
    return np.sum(out)


# ---- iterators, stacks, unpacking ------------------------------------------------------

def iter_next_in_loop(Ws, x):
    it = iter(Ws)
    h = x
    for _ in range(len(Ws) - 1):
        h = np.tanh(h @ next(it))
    last = next(it)
    return np.sum((h @ last) ** 2)


def iter_next_in_branch(Ws, x):
    it = iter(Ws)
    h = np.tanh(x @ next(it))
    if np.mean(h) > 0:
        h = h @ next(it)
    else:
        h = -h @ next(it)
    for W in it:
        h = np.sin(h @ W)
    return np.sum(h)


def stack_of_layers(Ws, x):
    stack = list(Ws)
    h = x
    while stack:
        h = np.tanh(h @ stack.pop())
    return np.sum(h ** 2)


def last_layer_popped(Ws, x):
    ws = list(Ws)
    head = ws.pop()
    for W in ws:
        x = np.tanh(x @ W)
    return np.sum(x @ head)


def first_and_rest(Ws, x):
    first, *rest = Ws
    h = np.tanh(x @ first)
    for W in rest:
        h = h @ W * 0.5
    return np.sum(h ** 2)


def generator_of_layers(Ws, x):
    def layers():
        for W in Ws:
            yield W

    h = x
    for W in layers():
        h = np.tanh(h @ W)
    return np.sum(h)


def zip_star_pairs(Ws, x):
    pairs = [(W, W.T) for W in Ws]
    fwd, back = zip(*pairs)
    return np.sum(np.tanh(x @ fwd[0]) @ back[1])


# ---- windows, solves, prints, masks ----------------------------------------------------

def sliding_windows(w, x):
    win = sliding_window_view(x, 3, axis=1)  # (5, 2, 3)
    return np.sum(np.tanh(win @ w))


def strided_windows(w, x):
    s = x.strides
    win = as_strided(x, shape=(x.shape[0], 2, 3), strides=(s[0], s[1], s[1]))
    return np.sum(win @ w)


def solve_or_fall_back(Ws, x):
    A = Ws[0] @ Ws[0].T + np.eye(4)
    try:
        y = np.linalg.solve(A, x.T)
    except np.linalg.LinAlgError:
        y = x.T
    return np.sum(y ** 2)


def progress_print(Ws, x):
    h = np.tanh(x @ Ws[0])
    loss = np.mean(h ** 2)
    print(f"loss {loss:.4f}", end="\r")
    return loss


def vectorized_lambda(Ws, x):
    square = np.vectorize(lambda v: v * v)
    return np.sum(square(x @ Ws[0]))


def masked_in_place(Ws, x):
    y = np.copy(x)
    y[...] = y @ Ws[0]
    y[y < 0] *= 0.1
    return np.sum(y ** 2)


def outer_accumulated(Ws, x):
    A = np.zeros((4, 4))
    for r in x:
        A += np.outer(r, r @ Ws[0])
    return np.sum(A ** 2)


def nested_kwargs_get(Ws, x):
    def layer(h, W, **kw):
        return np.tanh(h @ W) * kw.get("scale", 1.0)

    return np.sum(layer(layer(x, Ws[0], scale=2.0), Ws[1]))


def hinge_of_a_scalar(Ws, x):
    s = np.sum(np.tanh(x @ Ws[0]))
    return max(0.0, s) + min(s, 1.0)


def _wx(seed):
    Ws, x = _ws(seed)
    return Ws, x


def _wbx(seed):
    Ws, x = _ws(seed)
    return Ws, rng(seed + 50).standard_normal(4) * 0.1, x


def _win(seed):
    r = rng(seed)
    return r.standard_normal((3, 2)), r.standard_normal((5, 4))


PROGRAMS = [
    Probe("wild_idioms.setattr_layers", setattr_layers, lambda: _wx(1), ("Ws", "x")),
    Probe("wild_idioms.reduce_over_layers", reduce_over_layers, lambda: _wx(2), ("Ws", "x")),
    Probe("wild_idioms.dataclass_layers", dataclass_layers, lambda: _wbx(3), ("Ws", "b", "x")),
    Probe("wild_idioms.property_and_spread", property_and_spread, lambda: _wx(4), ("Ws", "x")),
    Probe("wild_idioms.call_with_spread", call_with_spread, lambda: _wbx(5), ("Ws", "b", "x")),
    Probe("wild_idioms.iter_next_in_loop", iter_next_in_loop, lambda: _wx(6), ("Ws", "x")),
    Probe("wild_idioms.iter_next_in_branch", iter_next_in_branch, lambda: _wx(7), ("Ws", "x")),
    Probe("wild_idioms.stack_of_layers", stack_of_layers, lambda: _wx(8), ("Ws", "x")),
    Probe("wild_idioms.last_layer_popped", last_layer_popped, lambda: _wx(9), ("Ws", "x")),
    Probe("wild_idioms.first_and_rest", first_and_rest, lambda: _wx(10), ("Ws", "x")),
    Probe("wild_idioms.generator_of_layers", generator_of_layers, lambda: _wx(11),
          ("Ws", "x")),
    Probe("wild_idioms.zip_star_pairs", zip_star_pairs, lambda: _wx(12), ("Ws", "x")),
    Probe("wild_idioms.sliding_windows", sliding_windows, lambda: _win(13), ("w", "x")),
    Probe("wild_idioms.strided_windows", strided_windows, lambda: _win(14), ("w", "x")),
    Probe("wild_idioms.solve_or_fall_back", solve_or_fall_back, lambda: _wx(15), ("Ws", "x")),
    Probe("wild_idioms.progress_print", progress_print, lambda: _wx(16), ("Ws", "x")),
    Probe("wild_idioms.vectorized_lambda", vectorized_lambda, lambda: _wx(17), ("Ws", "x")),
    Probe("wild_idioms.masked_in_place", masked_in_place, lambda: _wx(18), ("Ws", "x")),
    Probe("wild_idioms.outer_accumulated", outer_accumulated, lambda: _wx(19), ("Ws", "x")),
    Probe("wild_idioms.nested_kwargs_get", nested_kwargs_get, lambda: _wx(20), ("Ws", "x")),
    Probe("wild_idioms.hinge_of_a_scalar", hinge_of_a_scalar, lambda: _wx(21), ("Ws", "x")),
]
