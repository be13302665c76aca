"""Tape mode follows the classes of the objects a list, dict or tuple holds, or another
object's attribute, or an argument (session of 2026-12-07).

autograd's convnet example keeps its layers in a list a closure holds (``for layer in
layer_specs: cur_units = layer.forward_pass(cur_units, W)``) and a softmax layer's method
calls ``scipy.special.logsumexp``. Source mode was right; tape mode refused ("a
differentiable value given to a method of a plain numpy array ... is turned into a plain
array"): it traced the methods of a class only where the object itself was a module global,
a closure's value or an argument, so a method reached through a list ran untraced, numpy saw
the Tensor through its dispatch, but scipy's function did not. Now every user object
reachable from a global, a closure cell or an argument -- through lists, tuples, dicts, sets
and objects' attributes, at any depth -- has its class followed for the run
(tape.py ``follow_reachable``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(3)
W0 = RNG.standard_normal((3, 4)) * 0.5
X = RNG.standard_normal((5, 3))


class LogSoftmax:
    def apply(self, z):
        return z - logsumexp(z, axis=1, keepdims=True)


class Gate:
    def __init__(self, k):
        self.k = k

    def apply(self, z):  # (math.exp of a scalar the gradient reaches)
        return z * math.exp(self.k * float(np.sum(z) != 0.0)) / math.e


class Holder:
    def __init__(self, layers):
        self.layers = layers


LAYERS = [LogSoftmax(), Gate(1.0)]
BY_NAME = {"first": LogSoftmax(), "second": (Gate(1.0), LogSoftmax())}
HOLDER = Holder([Holder([LogSoftmax()]), Gate(1.0)])


def through_a_global_list(W, X):
    h = X @ W
    for layer in LAYERS:
        h = layer.apply(h)
    return np.sum(h ** 2)


def through_a_global_dict_of_tuples(W, X):
    h = BY_NAME["first"].apply(X @ W)
    for layer in BY_NAME["second"]:
        h = layer.apply(h)
    return np.sum(h ** 2)


def through_an_objects_attributes(W, X):
    h = HOLDER.layers[0].layers[0].apply(X @ W)
    return np.sum(HOLDER.layers[1].apply(h) ** 2)


def _closure_over(layers):
    def loss(W, X):
        h = X @ W
        for layer in layers:
            h = layer.apply(h)
        return np.sum(h ** 2)
    return loss


through_a_closures_list = _closure_over([LogSoftmax(), LogSoftmax()])


def through_an_argument(W, X, layers):
    h = X @ W
    for layer in layers:
        h = layer.apply(h)
    return np.sum(h ** 2)


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", [through_a_global_list, through_a_global_dict_of_tuples,
                                through_an_objects_attributes, through_a_closures_list],
                         ids=lambda f: f.__name__)
def test_methods_of_objects_held_in_containers(fn, mode):
    value, g = srcad.value_and_grad(fn, mode=mode)(W0.copy(), X)
    np.testing.assert_allclose(value, fn(W0.copy(), X), rtol=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (W0.copy(), X), h=1e-6), rtol=1e-6,
                               atol=1e-9)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_methods_of_objects_in_an_argument_list(mode):
    layers = [LogSoftmax(), Holder(None), LogSoftmax()]
    layers.pop(1)
    value, g = srcad.value_and_grad(through_an_argument, mode=mode)(W0.copy(), X, layers)
    np.testing.assert_allclose(value, through_an_argument(W0.copy(), X, layers), rtol=1e-12)
    np.testing.assert_allclose(
        g, numerical_grad(through_an_argument, (W0.copy(), X, layers), h=1e-6), rtol=1e-6,
        atol=1e-9)


def test_classes_are_restored_after_the_run():
    before = LogSoftmax.__dict__["apply"]
    srcad.grad(through_a_global_list, mode="tape")(W0.copy(), X)
    assert LogSoftmax.__dict__["apply"] is before


# autograd's convnet example, in the shape its authors wrote: a flat parameter vector, a
# parser of named slices, layers in a closure's list, logsumexp in a layer's method
class WeightsParser:
    def __init__(self):
        self.idxs_and_shapes = {}
        self.N = 0

    def add_weights(self, name, shape):
        start = self.N
        self.N += int(np.prod(shape))
        self.idxs_and_shapes[name] = (slice(start, self.N), shape)

    def get(self, vect, name):
        idxs, shape = self.idxs_and_shapes[name]
        return np.reshape(vect[idxs], shape)


class FullLayer:
    def __init__(self, size):
        self.size = size

    def build_weights_dict(self, input_shape):
        input_size = int(np.prod(input_shape))
        self.parser = WeightsParser()
        self.parser.add_weights("params", (input_size, self.size))
        self.parser.add_weights("biases", (self.size,))
        return self.parser.N, (self.size,)

    def forward_pass(self, inputs, param_vector):
        params = self.parser.get(param_vector, "params")
        biases = self.parser.get(param_vector, "biases")
        if inputs.ndim > 2:
            inputs = inputs.reshape((inputs.shape[0], int(np.prod(inputs.shape[1:]))))
        return self.nonlinearity(np.dot(inputs[:, :], params) + biases)


class TanhLayer(FullLayer):
    def nonlinearity(self, x):
        return np.tanh(x)


class SoftmaxLayer(FullLayer):
    def nonlinearity(self, x):
        return x - logsumexp(x, axis=1, keepdims=True)


def make_nn_funs(input_shape, layer_specs, l2_reg):
    parser = WeightsParser()
    cur_shape = input_shape
    for layer in layer_specs:
        n_weights, cur_shape = layer.build_weights_dict(cur_shape)
        parser.add_weights(layer, (n_weights,))

    def predictions(w_vect, inputs):
        cur_units = inputs
        for layer in layer_specs:
            cur_weights = parser.get(w_vect, layer)
            cur_units = layer.forward_pass(cur_units, cur_weights)
        return cur_units

    def loss(w_vect, X, T):
        log_prior = -l2_reg * np.dot(w_vect, w_vect)
        return -log_prior - np.sum(predictions(w_vect, X) * T)

    return parser.N, loss


@pytest.mark.parametrize("mode", ["source", "fuse", "tape"])
def test_autograd_style_convnet_parser(mode):
    n, loss = make_nn_funs((2, 3), [TanhLayer(4), SoftmaxLayer(3)], 0.01)
    w = RNG.standard_normal(n) * 0.3
    inputs = RNG.standard_normal((5, 2, 3))
    targets = np.eye(3)[RNG.integers(0, 3, 5)]
    opts = {"fuse": True} if mode == "fuse" else {"mode": mode}
    value, g = srcad.value_and_grad(loss, **opts)(w, inputs, targets)
    np.testing.assert_allclose(value, loss(w, inputs, targets), rtol=1e-12)
    np.testing.assert_allclose(g, numerical_grad(loss, (w, inputs, targets), h=1e-6),
                               rtol=1e-6, atol=1e-9)
