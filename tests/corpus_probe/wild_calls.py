"""Second programs for the classes the wild probes found (wild_layers.py, wild_sequence.py),
written differently from the first, to show that a class works rather than one program:
names a loop rebinds to arrays of other shapes, ``**dict`` / ``*seq`` spread into a user
function, callables held in attributes, dicts a callee writes into, Keras-like ``add``."""

from __future__ import annotations

import numpy as np

from . import Probe, rng

# ---- a loop rebinding a name to arrays of other shapes (the last one read after it) -------


def unflatten_mlp(theta, x, dims):
    """One flat parameter vector cut into per-layer matrices (scipy.optimize style), float32;
    the middle layer skipped on even calls of `continue`, the last W read after the loop."""
    h = x
    off = 0
    for i in range(len(dims) - 1):
        n = dims[i] * dims[i + 1]
        W = theta[off:off + n].reshape(dims[i], dims[i + 1])
        off += n
        if i == 1 and W.shape[0] == W.shape[1]:
            continue  # (a square layer left out)
        h = np.tanh(h @ W)
    return np.sum(h ** 2) + 0.1 * np.sum(W * W)


def _unflatten():
    r = rng(501)
    dims = [3, 4, 4, 5, 2]
    size = sum(dims[i] * dims[i + 1] for i in range(len(dims) - 1))
    return ((r.standard_normal(size) * 0.5).astype(np.float32),
            r.standard_normal((2, 3)).astype(np.float32), dims)


# ---- `**d` and `*seq` spread into a user function ----------------------------------------


def layer_norm(x, g, b, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(var + eps) + b


def dense(x, w, b):
    return x @ w + b


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def ffn(x, c_fc, c_proj):
    return dense(gelu(dense(x, **c_fc)), **c_proj)


def gpt2_block_kwargs(params, x):
    """picoGPT's block: nested param dicts spread as keywords (`**ln_1`, `**mlp`), one with a
    default left to the callee (eps), a layer's arguments spread from a tuple (`*qk`)."""
    h = x + ffn(layer_norm(x, **params["ln_1"]), **params["mlp"])
    qk = (params["w_q"], params["b_q"])
    q = dense(h, *qk)
    return np.mean(layer_norm(q, **params["ln_f"]) ** 2)


def _gpt2_block():
    r = rng(502)
    C = 4
    p = {"ln_1": {"g": 1 + 0.1 * r.standard_normal(C), "b": 0.1 * r.standard_normal(C)},
         "ln_f": {"g": 1 + 0.1 * r.standard_normal(C), "b": 0.1 * r.standard_normal(C),
                  "eps": 1e-3},
         "mlp": {"c_fc": {"w": r.standard_normal((C, 2 * C)) * 0.4,
                          "b": r.standard_normal(2 * C) * 0.1},
                 "c_proj": {"w": r.standard_normal((2 * C, C)) * 0.4, "b": np.zeros(C)}},
         "w_q": r.standard_normal((C, C)) * 0.4, "b_q": r.standard_normal(C) * 0.1}
    return p, r.standard_normal((3, C))


PROGRAMS = [
    Probe("wild_calls.unflatten_mlp", unflatten_mlp, _unflatten, "theta", tol=1e-3),
    Probe("wild_calls.gpt2_block_kwargs", gpt2_block_kwargs, _gpt2_block, "params"),
]


# ---- callables held in attributes of built objects ----------------------------------------


def swish(z, beta=1.0):
    return z / (1 + np.exp(-beta * z))


class ActLayer:
    """numpy-ml style: the activation chosen at construction, a function, an op or a lambda
    kept on self and called from forward."""

    def __init__(self, W, b, act=swish, out_act=None):
        self.W, self.b = W, b
        self.act = act
        self.out = out_act if out_act is not None else (lambda z: z)
        self.clip = lambda z: np.clip(z, -3.0, 3.0)

    def forward(self, x):
        return self.out(self.clip(self.act(x @ self.W + self.b)))


class Stack2:
    def __init__(self, W1, b1, W2, b2):
        self.layers = [ActLayer(W1, b1), ActLayer(W2, b2, act=np.tanh, out_act=np.sin)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


def held_activations(W1, b1, W2, b2, x):
    return np.mean(Stack2(W1, b1, W2, b2)(x) ** 2)


def _held():
    r = rng(503)
    return (r.standard_normal((3, 5)) * 0.5, r.standard_normal(5) * 0.1,
            r.standard_normal((5, 2)) * 0.5, r.standard_normal(2) * 0.1,
            r.standard_normal((4, 3)))


PROGRAMS += [
    Probe("wild_calls.held_activations", held_activations, _held, ("W1", "b1", "W2", "b2")),
]
