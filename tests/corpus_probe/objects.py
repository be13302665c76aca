"""How people organise a model in objects and containers: layers in an OrderedDict (the
"deep learning from scratch" style) built in __init__ from a params dict, a dict of
activation functions called by key, getattr by a string, lists of weights zipped with
biases, layers appended in __init__ and called with __call__, a dataclass config argument,
a module-level model whose params are swapped by the loss (set_params), functools.reduce."""

import functools
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from . import Probe, rng
from .helpers import cross_entropy, relu, sigmoid, softmax

ACT_FNS = {"relu": relu, "tanh": np.tanh, "sigmoid": sigmoid}


class Affine:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward(self, x):
        self.x = x
        return x @ self.W + self.b


class Relu:
    def forward(self, x):
        self.mask = x <= 0
        out = x.copy()
        out[self.mask] = 0
        return out


class TwoLayerNet:
    def __init__(self, params):
        self.params = params
        self.layers = OrderedDict()
        self.layers["Affine1"] = Affine(self.params["W1"], self.params["b1"])
        self.layers["Relu1"] = Relu()
        self.layers["Affine2"] = Affine(self.params["W2"], self.params["b2"])

    def predict(self, x):
        for layer in self.layers.values():
            x = layer.forward(x)
        return x

    def loss(self, x, t):
        y = self.predict(x)
        return cross_entropy(softmax(y), t)


def ordered_dict_net(params, x, t):
    net = TwoLayerNet(params)
    return net.loss(x, t)


def dict_of_functions(W1, W2, X, y, act="tanh"):
    h = ACT_FNS[act](X @ W1)
    out = ACT_FNS["sigmoid"](h @ W2)
    return np.mean((out - y) ** 2)


class Activations:
    @staticmethod
    def tanh(x):
        return np.tanh(x)

    @staticmethod
    def softplus(x):
        return np.log1p(np.exp(x))


def getattr_by_name(W1, W2, X, y, act="softplus"):
    fn = getattr(Activations, act)
    h = fn(X @ W1)
    return np.mean((h @ W2 - y) ** 2)


def zip_weights_biases(weights, biases, X, y):
    a = X
    for i, (W, b) in enumerate(zip(weights, biases)):
        z = a @ W + b
        a = np.tanh(z) if i < len(weights) - 1 else z
    return np.mean((a - y) ** 2)


class Dense:
    def __init__(self, W, b, activation=None):
        self.W, self.b = W, b
        self.activation = activation

    def __call__(self, x):
        z = x @ self.W + self.b
        if self.activation == "relu":
            return np.maximum(z, 0)
        if self.activation is not None:
            return ACT_FNS[self.activation](z)
        return z


class MLP:
    def __init__(self, Ws, bs):
        self.layers = []
        for i in range(len(Ws)):
            act = "relu" if i < len(Ws) - 1 else None
            self.layers.append(Dense(Ws[i], bs[i], act))

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def appended_layers_call(Ws, bs, X, y):
    model = MLP(Ws, bs)
    return np.mean((model(X) - y) ** 2)


@dataclass
class Config:
    hidden_act: str = "tanh"
    l2: float = 0.01
    temperature: float = 2.0


def dataclass_config(W1, W2, X, y, cfg):
    h = ACT_FNS[cfg.hidden_act](X @ W1)
    logits = h @ W2 / cfg.temperature
    return cross_entropy(softmax(logits), y) + cfg.l2 * (np.sum(W1 ** 2) + np.sum(W2 ** 2))


def reduce_layers(Ws, x):
    out = functools.reduce(lambda h, W: np.tanh(h @ W), Ws, x)
    return np.sum(out ** 2)


def _mlp(seed, D=4, Hd=5, C=3, N=6):
    r = rng(seed)
    return (r.standard_normal((D, Hd)) * 0.5, r.standard_normal((Hd, C)) * 0.5,
            r.standard_normal((N, D)), r.random((N, C)))


def _od():
    r = rng(90)
    p = {"W1": r.standard_normal((4, 5)) * 0.5, "b1": r.standard_normal(5) * 0.1,
         "W2": r.standard_normal((5, 3)) * 0.5, "b2": r.standard_normal(3) * 0.1}
    return p, r.standard_normal((6, 4)), r.integers(0, 3, 6)


def _zip():
    r = rng(91)
    dims = [3, 4, 4, 2]
    Ws = [r.standard_normal((dims[i], dims[i + 1])) * 0.5 for i in range(3)]
    bs = [r.standard_normal(dims[i + 1]) * 0.1 for i in range(3)]
    return Ws, bs, r.standard_normal((5, 3)), r.standard_normal((5, 2))


def _cfg():
    W1, W2, X, _ = _mlp(92)
    return W1, W2, X, rng(93).integers(0, 3, 6), Config()


def _red():
    r = rng(94)
    return [r.standard_normal((3, 3)) * 0.5 for _ in range(3)], r.standard_normal((2, 3))


PROGRAMS = [
    Probe("objects.ordered_dict_net", ordered_dict_net, _od, "params", True),
    Probe("objects.dict_of_functions", dict_of_functions, lambda: _mlp(95), ("W1", "W2")),
    Probe("objects.getattr_by_name", getattr_by_name, lambda: _mlp(96)[:2] + (
        _mlp(96)[2], rng(97).random((6, 3))), ("W1", "W2")),
    Probe("objects.zip_weights_biases", zip_weights_biases, _zip, ("weights", "biases")),
    Probe("objects.appended_layers_call", appended_layers_call, _zip, ("Ws", "bs")),
    Probe("objects.dataclass_config", dataclass_config, _cfg, ("W1", "W2")),
    Probe("objects.reduce_layers", reduce_layers, _red, "Ws"),
]
