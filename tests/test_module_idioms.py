"""How numpy layer libraries write their modules (a probe of 2026-12-04), each refused or
failing with one of srcad's own names until then:

* a `Module` base class whose `add_param(name, value)` stores by `setattr(self, name, value)`
  and keeps an `OrderedDict` of parameters ("`layer_W` is used before it is assigned": the
  attribute made by setattr after the object was built had no local before its first use);
* an L2 penalty over every layer's parameters, `sum(np.sum(p ** 2) for layer in layers for p
  in layer.parameters())` ("`Dense` has no derivative rule": a comprehension over objects
  with a second `for` was not followed);
* `act = kw.get("act", np.tanh)` in a function taking `**kw` (the default a function).

Each against central differences in both modes and fused.
"""

from collections import OrderedDict

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = ["source", "tape", pytest.param("fuse", marks=pytest.mark.slow)]  # (fuse: a C build each)
R = np.random.default_rng(11)
W = R.standard_normal((4, 4)) * 0.5
X = R.standard_normal((3, 4))


def check(fn, mode, *args):
    how = dict(fuse=True) if mode == "fuse" else dict(mode=mode)
    value, grad = srcad.value_and_grad(fn, **how)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    np.testing.assert_allclose(grad, numerical_grad(fn, args), rtol=1e-6, atol=1e-8)


class Module:
    def __init__(self):
        self._params = OrderedDict()

    def add_param(self, name, value):
        self._params[name] = value
        setattr(self, name, value)

    def parameters(self):
        return list(self._params.values())

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class Dense(Module):
    def __init__(self, W, b, activation=None):
        super().__init__()
        self.add_param("W", W)
        self.add_param("b", b)
        self.activation = activation

    def forward(self, x):
        z = x @ self.W + self.b
        if self.activation is not None:
            z = self.activation(z)
        return z


class Sequential(Module):
    def __init__(self, *layers):
        super().__init__()
        self.layers = list(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def penalty(self):
        return sum(np.sum(p * p) for layer in self.layers for p in layer.parameters()
                   if p.ndim == 2)


def one_layer(W, x):
    layer = Dense(W, np.full(W.shape[1], 0.1), np.tanh)
    return np.sum(layer(x) ** 2)


def two_layers_and_their_penalty(W, x):
    net = [Dense(W, np.zeros(W.shape[1]), np.tanh), Dense(W.T, np.zeros(W.shape[0]))]
    h = x
    for layer in net:
        h = layer(h)
    reg = sum(np.sum(p ** 2) for layer in net for p in layer.parameters())
    return np.sum(h ** 2) + 0.01 * reg


def a_sequential_with_its_penalty(W, x):
    net = Sequential(Dense(W, np.zeros(4), np.tanh), Dense(W @ W, np.ones(4)))
    return np.sum(net(x)) + 0.1 * net.penalty()


class Affine:
    def __init__(self, W, b):
        self.params = {"W": W, "b": b}

    def __call__(self, x):
        return x @ self.params["W"] + self.params["b"]


def penalty_over_dict_items(W, x):
    layers = [Affine(W, np.ones(4)), Affine(W.T, np.zeros(4))]
    h = x
    for layer in layers:
        h = np.tanh(layer(h))
    reg = sum(np.sum(v ** 2) for layer in layers for k, v in layer.params.items() if k == "W")
    return np.sum(h) + reg


def keyword_defaults_that_are_functions(W, x):
    def forward(x, **kw):
        scale = kw.get("scale", 1.0)
        act = kw.get("act", np.tanh)
        return act(x @ W) * scale

    return np.sum(forward(x, scale=2.0)) + np.sum(forward(x, act=np.sin)) + \
        np.sum(forward(x, act=np.cos, scale=0.5))


@pytest.mark.parametrize("fn", [one_layer, two_layers_and_their_penalty,
                                a_sequential_with_its_penalty, penalty_over_dict_items,
                                keyword_defaults_that_are_functions], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", MODES)
def test_module_idioms(fn, mode):
    check(fn, mode, W, X)


# -- a model object that links its layers and picks the trainable ones ------------------------
# (`hasattr(self.layers[i], "weights")` of a layer built inside `model.add(Dense(..))`: "not
# known before running" until 2026-12-04 -- what a built object's __init__ always assigns is
# set; `self.trainable.append(self.layers[i])` filling a list of objects by index: refused)

class Inputs:
    def forward(self, inputs, training):
        self.output = inputs


class Linear:
    def __init__(self, weights, biases, l2=0.0):
        self.weights = weights
        self.biases = biases
        self.l2 = l2

    def forward(self, inputs, training):
        self.inputs = inputs
        self.output = inputs @ self.weights + self.biases


class Relu:
    def forward(self, inputs, training):
        self.output = np.maximum(inputs, 0.0)


class Scale:
    def __init__(self, keep):
        self.keep = keep

    def forward(self, inputs, training):
        if not training:
            self.output = inputs.copy()
            return
        self.output = inputs / self.keep


class Softmax:
    def forward(self, inputs, training):
        e = np.exp(inputs - inputs.max(axis=1, keepdims=True))
        self.output = e / e.sum(axis=1, keepdims=True)


class CrossEntropy:
    def remember(self, trainable):
        self.trainable = trainable

    def penalty(self):
        total = 0
        for layer in self.trainable:
            if layer.l2 > 0:
                total += layer.l2 * np.sum(layer.weights * layer.weights)
        return total

    def calculate(self, probs, y, *, with_penalty=False):
        picked = np.clip(probs, 1e-7, 1 - 1e-7)[range(len(probs)), y]
        loss = np.mean(-np.log(picked))
        return (loss, self.penalty()) if with_penalty else loss


class Network:
    def __init__(self):
        self.layers = []

    def add(self, layer):
        self.layers.append(layer)

    def finalize(self, loss):
        self.loss = loss
        self.input_layer = Inputs()
        self.trainable = []
        count = len(self.layers)
        for i in range(count):
            self.layers[i].prev = self.input_layer if i == 0 else self.layers[i - 1]
            if hasattr(self.layers[i], "weights"):
                self.trainable.append(self.layers[i])
        self.loss.remember(self.trainable)

    def forward(self, X, training):
        self.input_layer.forward(X, training)
        for layer in self.layers:
            layer.forward(layer.prev.output, training)
        return layer.output


def linked_network(W, x):
    net = Network()
    net.add(Linear(W, np.zeros((1, 4)), l2=5e-3))
    net.add(Relu())
    net.add(Scale(0.9))
    net.add(Linear(W.T, np.full((1, 4), 0.1)))
    net.add(Softmax())
    net.finalize(CrossEntropy())
    probs = net.forward(x, training=True)
    loss, penalty = net.loss.calculate(probs, np.array([0, 3, 1]), with_penalty=True)
    return loss + penalty


@pytest.mark.parametrize("mode", MODES)
def test_a_network_linking_its_layers(mode):
    check(linked_network, mode, W, X)


class EarlyReturn:
    def __init__(self, W, skip):
        if skip:
            return
        self.weights = W


def hasattr_after_an_early_return(W, x, skip=False):
    layer = EarlyReturn(W, skip)
    return np.sum(x @ layer.weights) if hasattr(layer, "weights") else np.sum(x)


@pytest.mark.parametrize("skip", [False, True])
def test_hasattr_of_what_an_init_may_not_assign_follows_python(skip):
    """An `__init__` that may return before its store: `hasattr` is not folded to True."""
    want = hasattr_after_an_early_return(W, X, skip)
    try:
        value, _ = srcad.value_and_grad(hasattr_after_an_early_return)(W, X, skip)
    except srcad.SrcadError:
        return  # (refused: fine, never a wrong answer)
    assert np.isclose(value, want)
