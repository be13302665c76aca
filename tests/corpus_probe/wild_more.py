"""Second programs, written differently, for the classes wild_layers.py's strict xfails named
(see XFAILS in tests/test_corpus_probe.py): a method of a user class calling numpy where
numpy does not dispatch (as_strided in a classmethod of a base class, a property, a
module-level layer: tape mode traces user methods), and Keras-like layers pushed onto a list
attribute by a method the caller calls (`net.push(Linear(W))`)."""

from __future__ import annotations

import numpy as np

from . import Probe, rng

# ---- a method calling numpy that has no dispatcher (tape mode traces user methods) --------


class Framed:
    """A base class whose classmethod cuts the last axis into overlapping frames."""

    @classmethod
    def frames(cls, x, size, hop):
        n = (x.shape[-1] - size) // hop + 1
        s = x.strides
        return np.lib.stride_tricks.as_strided(
            x, shape=x.shape[:-1] + (n, size), strides=s[:-1] + (s[-1] * hop, s[-1]))


class Conv1D(Framed):
    def __init__(self, w, hop):
        self.w = w
        self.hop = hop

    @property
    def width(self):
        return self.w.shape[0]

    def __call__(self, x):
        return self.frames(x, self.width, self.hop) @ self.w


SMOOTH = Conv1D(np.array([0.25, 0.5, 0.25]), 1)  # (a module-level layer)


def strided_frames_method(w, x):
    conv = Conv1D(w, hop=2)
    y = np.tanh(conv(np.ascontiguousarray(x)))
    return np.sum(SMOOTH(y) ** 2) + 0.1 * np.sum(Conv1D.frames(x, 2, 3))


def _frames():
    r = rng(601)
    return r.standard_normal(4) * 0.5, r.standard_normal((3, 17))


PROGRAMS = [
    Probe("wild_more.strided_frames_method", strided_frames_method, _frames, ("w", "x")),
]


# ---- Keras-like: a method that appends its argument to a list attribute --------------------


class Linear:
    def __init__(self, W, b=None):
        self.W, self.b = W, b

    def __call__(self, x):
        z = x @ self.W
        return z if self.b is None else z + self.b


class Act:
    def __init__(self, kind):
        self.kind = kind

    def __call__(self, x):
        return np.tanh(x) if self.kind == "tanh" else np.maximum(x, 0.0)


class Net:
    def __init__(self, scale=1.0):
        self.stack = list()
        self.scale = scale

    def push(self, layer):
        self.stack.append(layer)

    def __call__(self, x):
        for i, layer in enumerate(self.stack):
            x = layer(x) if i > 0 else layer(x) * 1.5
        return x * self.scale


def keras_like_push(W1, b1, W2, X):
    net = Net(scale=0.5)
    hidden = Linear(W1, b1)
    net.push(hidden)
    net.push(Act("tanh"))
    net.push(Linear(W2))
    out = net(X)
    return np.mean(out ** 2) + 0.01 * np.sum(hidden.W ** 2) + 0.1 * len(net.stack)


def _push():
    r = rng(602)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal(4) * 0.1,
            r.standard_normal((4, 2)) * 0.5, r.standard_normal((5, 3)))


PROGRAMS += [
    Probe("wild_more.keras_like_push", keras_like_push, _push, ("W1", "b1", "W2"), fuse=True),
]
