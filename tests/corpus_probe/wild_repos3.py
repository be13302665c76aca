"""Third set of programs in the styles of public numpy-from-scratch repositories (read for
patterns only, written here from scratch): a network class with cost classes of static
methods over column vectors and lists of ``(x, y)`` tuples (``zip(self.biases,
self.weights)``, ``np.nan_to_num``, ``np.linalg.norm(w) ** 2`` summed by a generator), an
ML-library in the "activation classes with ``__call__`` and ``gradient``" style (a dict of
classes instantiated by name, ``self.__class__.__name__``, ``X.dot(self.W) + self.w0``, an
RNN layer writing preallocated state arrays whose step ``t - 1`` reads index -1, max pooling
by ``X_col[arg_max, range(arg_max.size)]``), the deep-learning-course style (parameters
``"W" + str(l)``, caches as tuples of tuples, ``np.multiply``/``np.log`` costs with
``np.squeeze``, dropout masks from ``np.random.rand`` under ``np.random.seed``, L2 over named
weights, RNN/LSTM cells writing ``a[:, :, t]``, ``conv_single_step`` with ``b.item()``, pooling
by mode string), a captioning RNN with ``self.params``, nn-from-scratch's ``probs[range(n),
y]`` over globals, an RNN tutorial's ``self.U[:, x[t]]`` and ``np.sum`` of a generator,
numpy-ml's loss objects (``np.finfo(float).eps``, ``np.clip(p, eps, 1 - eps, p)``, asserts of
``np.allclose`` on predictions), a fit loop of a scikit-learn-like estimator (``np.c_``,
attribute ``-=``, a loss history), GMM / k-means code (``np.linalg.det``/``inv``, einsum
quadratic forms, ``C[np.argmin(...)]``), simulations (``np.roll`` Laplacians, ``np.diff``
springs, RK4 with a right-hand side passed in, Lotka-Volterra tuples, leapfrog with tuple
swaps, N-body with ``np.triu_indices``), Karpathy's policy gradient (``h[h < 0] = 0``,
discounted rewards in reversed loops), skip-gram with ``np.outer``, a loop over
``zip(*np.nonzero(R))`` with builtin ``pow``, and everyday Python around them (namedtuple
caches, ``defaultdict(list)``, ``sorted`` keys, ``str.format``, ``np.apply_along_axis``,
``map``, ``isinstance`` shape fixes, ``logging``)."""

from __future__ import annotations

import logging
import math
from collections import defaultdict, namedtuple

import numpy as np
import scipy.special

from . import Probe, rng

log = logging.getLogger(__name__)


# ---- 1. a network class with cost classes of static methods (column vectors) -------------

def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


class QuadraticCost(object):

    @staticmethod
    def fn(a, y):
        return 0.5 * np.linalg.norm(a - y) ** 2


class CrossEntropyCost(object):

    @staticmethod
    def fn(a, y):
        return np.sum(np.nan_to_num(-y * np.log(a) - (1 - y) * np.log(1 - a)))


class Network2(object):

    def __init__(self, sizes, weights, biases, cost=CrossEntropyCost):
        self.num_layers = len(sizes)
        self.sizes = sizes
        self.weights = weights
        self.biases = biases
        self.cost = cost

    def feedforward(self, a):
        for b, w in zip(self.biases, self.weights):
            a = sigmoid(np.dot(w, a) + b)
        return a

    def total_cost(self, data, lmbda, convert=False):
        cost = 0.0
        for x, y in data:
            a = self.feedforward(x)
            if convert:
                y = vectorized_result(y)
            cost += self.cost.fn(a, y) / len(data)
        cost += 0.5 * (lmbda / len(data)) * sum(np.linalg.norm(w) ** 2 for w in self.weights)
        return cost


def vectorized_result(j):
    e = np.zeros((2, 1))
    e[j] = 1.0
    return e


def network2_cross_entropy(weights, biases, data):
    net = Network2([3, 4, 2], weights, biases)
    return net.total_cost(data, 0.1)


def network2_quadratic_labels(weights, biases, data):
    net = Network2([3, 4, 2], weights, biases, cost=QuadraticCost)
    return net.total_cost(data, 0.3, convert=True)


def _net2(labels=False):
    def make():
        r = rng(801)
        sizes = [3, 4, 2]
        weights = [r.standard_normal((y, x)) / np.sqrt(x) for x, y in zip(sizes[:-1], sizes[1:])]
        biases = [r.standard_normal((y, 1)) for y in sizes[1:]]
        data = []
        for k in range(4):
            x = r.standard_normal((3, 1))
            data.append((x, k % 2 if labels else vectorized_result(k % 2)))
        return weights, biases, data
    return make


# ---- 2. an ML library of activation classes with __call__ and gradient ------------------

class MSigmoid():
    def __call__(self, x):
        return 1 / (1 + np.exp(-x))

    def gradient(self, x):
        return self.__call__(x) * (1 - self.__call__(x))


class MTanH():
    def __call__(self, x):
        return 2 / (1 + np.exp(-2 * x)) - 1

    def gradient(self, x):
        return 1 - np.power(self.__call__(x), 2)


class MLeakyReLU():
    def __init__(self, alpha=0.2):
        self.alpha = alpha

    def __call__(self, x):
        return np.where(x >= 0, x, self.alpha * x)


class MSoftmax():
    def __call__(self, x):
        e_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e_x / np.sum(e_x, axis=-1, keepdims=True)


class MSoftPlus():
    def __call__(self, x):
        return np.log(1 + np.exp(x))


activation_functions = {
    'sigmoid': MSigmoid,
    'tanh': MTanH,
    'leaky_relu': MLeakyReLU,
    'softmax': MSoftmax,
    'softplus': MSoftPlus,
}


class MLayer(object):

    def set_input_shape(self, shape):
        self.input_shape = shape

    def layer_name(self):
        return self.__class__.__name__

    def parameters(self):
        return 0


class MDense(MLayer):
    def __init__(self, n_units, input_shape=None):
        self.layer_input = None
        self.input_shape = input_shape
        self.n_units = n_units
        self.trainable = True
        self.W = None
        self.w0 = None

    def initialize(self, W, w0):
        self.W = W
        self.w0 = w0

    def parameters(self):
        return np.prod(self.W.shape) + np.prod(self.w0.shape)

    def forward_pass(self, X, training=True):
        self.layer_input = X
        return X.dot(self.W) + self.w0

    def output_shape(self):
        return (self.n_units, )


class MActivation(MLayer):
    def __init__(self, name):
        self.activation_name = name
        self.activation_func = activation_functions[name]()
        self.trainable = True

    def layer_name(self):
        return "Activation (%s)" % (self.activation_func.__class__.__name__)

    def forward_pass(self, X, training=True):
        self.layer_input = X
        return self.activation_func(X)

    def output_shape(self):
        return self.input_shape


class MLoss(object):
    def loss(self, y_true, y_pred):
        return NotImplementedError()

    def acc(self, y, y_pred):
        return 0


class MSquareLoss(MLoss):
    def __init__(self): pass

    def loss(self, y, y_pred):
        return 0.5 * np.power((y - y_pred), 2)


class MCrossEntropy(MLoss):
    def __init__(self): pass

    def loss(self, y, p):
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return - y * np.log(p) - (1 - y) * np.log(1 - p)

    def acc(self, y, p):
        return np.mean(np.argmax(y, axis=1) == np.argmax(p, axis=1))


class MNeuralNetwork():
    def __init__(self, loss, validation_data=None):
        self.layers = []
        self.errors = {"training": [], "validation": []}
        self.loss_function = loss()
        self.val_set = None
        if validation_data:
            X, y = validation_data
            self.val_set = {"X": X, "y": y}

    def add(self, layer):
        if self.layers:
            layer.set_input_shape(shape=self.layers[-1].output_shape())
        self.layers.append(layer)

    def _forward_pass(self, X, training=True):
        layer_output = X
        for layer in self.layers:
            layer_output = layer.forward_pass(layer_output, training)
        return layer_output

    def test_on_batch(self, X, y):
        y_pred = self._forward_pass(X, training=False)
        loss = np.mean(self.loss_function.loss(y, y_pred))
        acc = self.loss_function.acc(y, y_pred)
        return loss, acc

    def summary(self):
        names = []
        for layer in self.layers:
            names.append(layer.layer_name())
        return ", ".join(names)


def mlfs_classifier(W1, w01, W2, w02, X, y):
    clf = MNeuralNetwork(loss=MCrossEntropy)
    dense = MDense(5, input_shape=(3,))
    dense.initialize(W1, w01)
    clf.add(dense)
    clf.add(MActivation('leaky_relu'))
    out = MDense(3)
    out.initialize(W2, w02)
    clf.add(out)
    clf.add(MActivation('softmax'))
    log.debug("model: %s", clf.summary())
    loss, acc = clf.test_on_batch(X, y)
    return loss


def _mlfs():
    r = rng(802)
    y = np.eye(3)[r.integers(0, 3, 6)]
    return (r.standard_normal((3, 5)) * 0.6, np.zeros((1, 5)) + 0.1,
            r.standard_normal((5, 3)) * 0.6, np.zeros((1, 3)), r.standard_normal((6, 3)), y)


class MRNN(MLayer):
    def __init__(self, n_units, activation='tanh', U=None, V=None, W=None):
        self.n_units = n_units
        self.activation = activation_functions[activation]()
        self.U, self.V, self.W = U, V, W

    def forward_pass(self, X, training=True):
        self.layer_input = X
        batch_size, timesteps, input_dim = X.shape
        self.state_input = np.zeros((batch_size, timesteps, self.n_units))
        self.states = np.zeros((batch_size, timesteps + 1, self.n_units))
        self.outputs = np.zeros((batch_size, timesteps, input_dim))
        self.states[:, -1] = np.zeros((batch_size, self.n_units))
        for t in range(timesteps):
            self.state_input[:, t] = X[:, t].dot(self.U.T) + self.states[:, t - 1].dot(self.W.T)
            self.states[:, t] = self.activation(self.state_input[:, t])
            self.outputs[:, t] = self.states[:, t].dot(self.V.T)
        return self.outputs


def mlfs_rnn_prealloc(U, V, W, X, y):
    rnn = MRNN(4, activation='tanh', U=U, V=V, W=W)
    y_pred = rnn.forward_pass(X)
    return np.mean(MSquareLoss().loss(y, y_pred))


def _mlfs_rnn():
    r = rng(803)
    return (r.standard_normal((4, 3)) * 0.5, r.standard_normal((3, 4)) * 0.5,
            r.standard_normal((4, 4)) * 0.4, r.standard_normal((2, 5, 3)),
            r.standard_normal((2, 5, 3)))


def determine_padding(filter_shape, output_shape="same"):
    if output_shape == "valid":
        return (0, 0), (0, 0)
    elif output_shape == "same":
        filter_height, filter_width = filter_shape
        pad_h1 = int(math.floor((filter_height - 1) / 2))
        pad_h2 = int(math.ceil((filter_height - 1) / 2))
        pad_w1 = int(math.floor((filter_width - 1) / 2))
        pad_w2 = int(math.ceil((filter_width - 1) / 2))
        return (pad_h1, pad_h2), (pad_w1, pad_w2)


def get_im2col_indices(images_shape, filter_shape, padding, stride=1):
    batch_size, channels, height, width = images_shape
    filter_height, filter_width = filter_shape
    pad_h, pad_w = padding
    out_height = int((height + np.sum(pad_h) - filter_height) / stride + 1)
    out_width = int((width + np.sum(pad_w) - filter_width) / stride + 1)
    i0 = np.repeat(np.arange(filter_height), filter_width)
    i0 = np.tile(i0, channels)
    i1 = stride * np.repeat(np.arange(out_height), out_width)
    j0 = np.tile(np.arange(filter_width), filter_height * channels)
    j1 = stride * np.tile(np.arange(out_width), out_height)
    i = i0.reshape(-1, 1) + i1.reshape(1, -1)
    j = j0.reshape(-1, 1) + j1.reshape(1, -1)
    k = np.repeat(np.arange(channels), filter_height * filter_width).reshape(-1, 1)
    return (k, i, j)


def image_to_column(images, filter_shape, stride, output_shape='same'):
    filter_height, filter_width = filter_shape
    pad_h, pad_w = determine_padding(filter_shape, output_shape)
    images_padded = np.pad(images, ((0, 0), (0, 0), pad_h, pad_w), mode='constant')
    k, i, j = get_im2col_indices(images.shape, filter_shape, (pad_h, pad_w), stride)
    cols = images_padded[:, k, i, j]
    channels = images.shape[1]
    cols = cols.transpose(1, 2, 0).reshape(filter_height * filter_width * channels, -1)
    return cols


class MConv2D(MLayer):
    def __init__(self, W, w0, input_shape, padding='same', stride=1):
        self.W, self.w0 = W, w0
        self.n_filters = W.shape[0]
        self.filter_shape = W.shape[2:]
        self.input_shape = input_shape
        self.padding = padding
        self.stride = stride

    def forward_pass(self, X, training=True):
        batch_size, channels, height, width = X.shape
        self.layer_input = X
        self.X_col = image_to_column(X, self.filter_shape, stride=self.stride,
                                     output_shape=self.padding)
        self.W_col = self.W.reshape((self.n_filters, -1))
        output = self.W_col.dot(self.X_col) + self.w0
        output = output.reshape(self.output_shape() + (batch_size, ))
        return output.transpose(3, 0, 1, 2)

    def output_shape(self):
        channels, height, width = self.input_shape
        pad_h, pad_w = determine_padding(self.filter_shape, output_shape=self.padding)
        output_height = (height + np.sum(pad_h) - self.filter_shape[0]) / self.stride + 1
        output_width = (width + np.sum(pad_w) - self.filter_shape[1]) / self.stride + 1
        return self.n_filters, int(output_height), int(output_width)


class MMaxPooling2D(MLayer):
    def __init__(self, input_shape, pool_shape=(2, 2), stride=2):
        self.pool_shape = pool_shape
        self.stride = stride
        self.input_shape = input_shape

    def forward_pass(self, X, training=True):
        self.layer_input = X
        batch_size, channels, height, width = X.shape
        _, out_height, out_width = self.output_shape()
        X = X.reshape(batch_size * channels, 1, height, width)
        X_col = image_to_column(X, self.pool_shape, self.stride, 'valid')
        output = self._pool_forward(X_col)
        output = output.reshape(out_height, out_width, batch_size, channels)
        return output.transpose(2, 3, 0, 1)

    def _pool_forward(self, X_col):
        arg_max = np.argmax(X_col, axis=0).flatten()
        output = X_col[arg_max, range(arg_max.size)]
        self.cache = arg_max
        return output

    def output_shape(self):
        channels, height, width = self.input_shape
        out_height = (height - self.pool_shape[0]) / self.stride + 1
        out_width = (width - self.pool_shape[1]) / self.stride + 1
        assert out_height % 1 == 0
        assert out_width % 1 == 0
        return channels, int(out_height), int(out_width)


def mlfs_conv_maxpool(W, w0, X, y):
    conv = MConv2D(W, w0, input_shape=X.shape[1:], padding='same')
    h = MActivation('tanh').forward_pass(conv.forward_pass(X))
    pool = MMaxPooling2D(input_shape=h.shape[1:])
    out = pool.forward_pass(h)
    flat = out.reshape((out.shape[0], -1))
    return np.mean(MSquareLoss().loss(y, flat))


def padding_for(filter_shape, output_shape="same"):
    if output_shape == "valid":
        return (0, 0), (0, 0)
    filter_height, filter_width = filter_shape
    return ((filter_height - 1) // 2, filter_height // 2), ((filter_width - 1) // 2,
                                                            filter_width // 2)


def image_to_column_padded(images, filter_shape, stride, output_shape='same'):
    filter_height, filter_width = filter_shape
    pad_h, pad_w = padding_for(filter_shape, output_shape)
    images_padded = np.pad(images, ((0, 0), (0, 0), pad_h, pad_w), mode='constant')
    k, i, j = get_im2col_indices(images.shape, filter_shape, (pad_h, pad_w), stride)
    cols = images_padded[:, k, i, j]
    return cols.transpose(1, 2, 0).reshape(filter_height * filter_width * images.shape[1], -1)


class MConv2DSame(MConv2D):
    def forward_pass(self, X, training=True):
        batch_size = X.shape[0]
        self.X_col = image_to_column_padded(X, self.filter_shape, self.stride, self.padding)
        output = self.W.reshape((self.n_filters, -1)).dot(self.X_col) + self.w0
        return output.reshape(self.output_shape() + (batch_size, )).transpose(3, 0, 1, 2)

    def output_shape(self):
        channels, height, width = self.input_shape
        pad_h, pad_w = padding_for(self.filter_shape, output_shape=self.padding)
        output_height = (height + np.sum(pad_h) - self.filter_shape[0]) / self.stride + 1
        output_width = (width + np.sum(pad_w) - self.filter_shape[1]) / self.stride + 1
        return self.n_filters, int(output_height), int(output_width)


class MMaxPool(MMaxPooling2D):
    def forward_pass(self, X, training=True):
        batch_size, channels, height, width = X.shape
        _, out_height, out_width = self.output_shape()
        X_col = image_to_column_padded(X.reshape(batch_size * channels, 1, height, width),
                                       self.pool_shape, self.stride, 'valid')
        output = self._pool_forward(X_col)
        return output.reshape(out_height, out_width, batch_size, channels).transpose(2, 3, 0, 1)


def mlfs_conv_early_return_padding(W, w0, X, y):
    conv = MConv2DSame(W, w0, input_shape=X.shape[1:])
    h = MActivation('softplus').forward_pass(conv.forward_pass(X))
    out = MMaxPool(input_shape=h.shape[1:]).forward_pass(h)
    return np.mean(MSquareLoss().loss(y, out.reshape((out.shape[0], -1))))


def _mlfs_conv():
    r = rng(804)
    return (r.standard_normal((2, 2, 3, 3)) * 0.4, r.standard_normal((2, 1)) * 0.1,
            r.standard_normal((2, 2, 4, 4)), r.standard_normal((2, 8)))


# ---- 3. deep-learning-course style: parameters "W" + str(l), tuple caches ---------------

def dl_sigmoid(Z):
    A = 1 / (1 + np.exp(-Z))
    cache = Z
    return A, cache


def dl_relu(Z):
    A = np.maximum(0, Z)
    assert(A.shape == Z.shape)
    cache = Z
    return A, cache


def linear_forward(A, W, b):
    Z = np.dot(W, A) + b
    assert(Z.shape == (W.shape[0], A.shape[1]))
    cache = (A, W, b)
    return Z, cache


def linear_activation_forward(A_prev, W, b, activation):
    if activation == "sigmoid":
        Z, linear_cache = linear_forward(A_prev, W, b)
        A, activation_cache = dl_sigmoid(Z)
    elif activation == "relu":
        Z, linear_cache = linear_forward(A_prev, W, b)
        A, activation_cache = dl_relu(Z)
    assert (A.shape == (W.shape[0], A_prev.shape[1]))
    cache = (linear_cache, activation_cache)
    return A, cache


def L_model_forward(X, parameters):
    caches = []
    A = X
    L = len(parameters) // 2
    for l in range(1, L):
        A_prev = A
        A, cache = linear_activation_forward(A_prev, parameters['W' + str(l)],
                                             parameters['b' + str(l)], activation="relu")
        caches.append(cache)
    AL, cache = linear_activation_forward(A, parameters['W' + str(L)],
                                          parameters['b' + str(L)], activation="sigmoid")
    caches.append(cache)
    assert(AL.shape == (1, X.shape[1]))
    return AL, caches


def compute_cost(AL, Y):
    m = Y.shape[1]
    cost = (-1. / m) * np.sum(np.multiply(Y, np.log(AL)) + np.multiply(1 - Y, np.log(1 - AL)))
    cost = np.squeeze(cost)
    assert(cost.shape == ())
    return cost


def dl_L_layer(parameters, X, Y):
    AL, caches = L_model_forward(X, parameters)
    (linear_cache, activation_cache) = caches[-1]
    A_prev, W, b = linear_cache
    return compute_cost(AL, Y) + 0.0 * np.sum(activation_cache)


def _dl_params(layer_dims, seed):
    r = rng(seed)
    parameters = {}
    L = len(layer_dims)
    for l in range(1, L):
        parameters['W' + str(l)] = r.standard_normal((layer_dims[l], layer_dims[l - 1])) * 0.5
        parameters['b' + str(l)] = r.standard_normal((layer_dims[l], 1)) * 0.1
    return parameters, r


def _dl_L():
    parameters, r = _dl_params([4, 5, 3, 1], 805)
    return parameters, r.standard_normal((4, 7)), (r.random((1, 7)) > 0.5).astype(float)


def dl_forward_with_dropout(X, parameters, keep_prob=0.6):
    np.random.seed(1)
    W1 = parameters["W1"]
    b1 = parameters["b1"]
    W2 = parameters["W2"]
    b2 = parameters["b2"]
    W3 = parameters["W3"]
    b3 = parameters["b3"]
    Z1 = np.dot(W1, X) + b1
    A1, _ = dl_relu(Z1)
    D1 = np.random.rand(A1.shape[0], A1.shape[1])
    D1 = D1 < keep_prob
    A1 = A1 * D1
    A1 = A1 / keep_prob
    Z2 = np.dot(W2, A1) + b2
    A2, _ = dl_relu(Z2)
    D2 = np.random.rand(A2.shape[0], A2.shape[1])
    D2 = (D2 < keep_prob).astype(int)
    A2 = np.multiply(A2, D2)
    A2 /= keep_prob
    Z3 = np.dot(W3, A2) + b3
    A3, _ = dl_sigmoid(Z3)
    cache = (Z1, D1, A1, W1, b1, Z2, D2, A2, W2, b2, Z3, A3, W3, b3)
    return A3, cache


def dl_compute_cost_nansum(a3, Y):
    m = Y.shape[1]
    logprobs = np.multiply(-np.log(a3), Y) + np.multiply(-np.log(1 - a3), 1 - Y)
    cost = 1. / m * np.nansum(logprobs)
    return cost


def compute_cost_with_regularization(A3, Y, parameters, lambd):
    m = Y.shape[1]
    W1 = parameters["W1"]
    W2 = parameters["W2"]
    W3 = parameters["W3"]
    cross_entropy_cost = dl_compute_cost_nansum(A3, Y)
    L2_regularization_cost = (1. / m) * (lambd / 2) * (np.sum(np.square(W1)) + np.sum(
        np.square(W2)) + np.sum(np.square(W3)))
    cost = cross_entropy_cost + L2_regularization_cost
    return cost


def dl_dropout_l2(parameters, X, Y):
    a3, cache = dl_forward_with_dropout(X, parameters, keep_prob=0.7)
    return compute_cost_with_regularization(a3, Y, parameters, lambd=0.7)


def _dl_drop():
    parameters, r = _dl_params([3, 6, 4, 1], 806)
    return parameters, r.standard_normal((3, 8)), (r.random((1, 8)) > 0.5).astype(float)


def dl_softmax(x):
    e_x = np.exp(x - np.max(x))
    return e_x / e_x.sum(axis=0)


def rnn_cell_forward(xt, a_prev, parameters):
    Wax = parameters["Wax"]
    Waa = parameters["Waa"]
    Wya = parameters["Wya"]
    ba = parameters["ba"]
    by = parameters["by"]
    a_next = np.tanh(np.dot(Waa, a_prev) + np.dot(Wax, xt) + ba)
    yt_pred = dl_softmax(np.dot(Wya, a_next) + by)
    cache = (a_next, a_prev, xt, parameters)
    return a_next, yt_pred, cache


def rnn_forward(x, a0, parameters):
    caches = []
    n_x, m, T_x = x.shape
    n_y, n_a = parameters["Wya"].shape
    a = np.zeros((n_a, m, T_x))
    y_pred = np.zeros((n_y, m, T_x))
    a_next = a0
    for t in range(T_x):
        a_next, yt_pred, cache = rnn_cell_forward(x[:, :, t], a_next, parameters)
        a[:, :, t] = a_next
        y_pred[:, :, t] = yt_pred
        caches.append(cache)
    caches = (caches, x)
    return a, y_pred, caches


def dl_rnn(parameters, x, a0, Y):
    a, y_pred, caches = rnn_forward(x, a0, parameters)
    return -np.sum(Y * np.log(y_pred)) / x.shape[1] + 0.01 * np.sum(a ** 2)


def _dl_rnn():
    r = rng(807)
    n_x, n_a, n_y, m, T = 3, 4, 2, 3, 4
    parameters = {"Wax": r.standard_normal((n_a, n_x)) * 0.5,
                  "Waa": r.standard_normal((n_a, n_a)) * 0.5,
                  "Wya": r.standard_normal((n_y, n_a)) * 0.5,
                  "ba": r.standard_normal((n_a, 1)) * 0.1, "by": r.standard_normal((n_y, 1)) * 0.1}
    Y = np.zeros((n_y, m, T))
    lab = r.integers(0, n_y, (m, T))
    for i in range(m):
        for t in range(T):
            Y[lab[i, t], i, t] = 1
    return parameters, r.standard_normal((n_x, m, T)), r.standard_normal((n_a, m)), Y


def lstm_cell_forward(xt, a_prev, c_prev, parameters):
    Wf = parameters["Wf"]
    bf = parameters["bf"]
    Wi = parameters["Wi"]
    bi = parameters["bi"]
    Wc = parameters["Wc"]
    bc = parameters["bc"]
    Wo = parameters["Wo"]
    bo = parameters["bo"]
    n_x, m = xt.shape
    n_y, n_a = parameters["Wy"].shape
    concat = np.zeros((n_a + n_x, m))
    concat[: n_a, :] = a_prev
    concat[n_a:, :] = xt
    ft = sigmoid(np.dot(Wf, concat) + bf)
    it = sigmoid(np.dot(Wi, concat) + bi)
    cct = np.tanh(np.dot(Wc, concat) + bc)
    c_next = ft * c_prev + it * cct
    ot = sigmoid(np.dot(Wo, concat) + bo)
    a_next = ot * np.tanh(c_next)
    yt_pred = dl_softmax(np.dot(parameters["Wy"], a_next) + parameters["by"])
    cache = (a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters)
    return a_next, c_next, yt_pred, cache


def lstm_forward(x, a0, parameters):
    caches = []
    n_x, m, T_x = x.shape
    n_y, n_a = parameters['Wy'].shape
    a = np.zeros((n_a, m, T_x))
    c = np.zeros((n_a, m, T_x))
    y = np.zeros((n_y, m, T_x))
    a_next = a0
    c_next = np.zeros(a_next.shape)
    for t in range(T_x):
        a_next, c_next, yt, cache = lstm_cell_forward(x[:, :, t], a_next, c_next, parameters)
        a[:, :, t] = a_next
        y[:, :, t] = yt
        c[:, :, t] = c_next
        caches.append(cache)
    caches = (caches, x)
    return a, y, c, caches


def dl_lstm(parameters, x, a0, Y):
    a, y, c, caches = lstm_forward(x, a0, parameters)
    return -np.sum(Y * np.log(y)) + 0.1 * np.sum(c[:, :, -1] ** 2)


def _dl_lstm():
    r = rng(808)
    n_x, n_a, n_y, m, T = 3, 4, 2, 2, 3
    p = {}
    for g in "fico":
        p["W" + g] = r.standard_normal((n_a, n_a + n_x)) * 0.4
        p["b" + g] = r.standard_normal((n_a, 1)) * 0.1
    p["Wy"] = r.standard_normal((n_y, n_a)) * 0.5
    p["by"] = r.standard_normal((n_y, 1)) * 0.1
    Y = np.zeros((n_y, m, T))
    Y[0, :, ::2] = 1
    Y[1, :, 1::2] = 1
    return p, r.standard_normal((n_x, m, T)), r.standard_normal((n_a, m)), Y


def zero_pad(X, pad):
    X_pad = np.pad(X, ((0, 0), (pad, pad), (pad, pad), (0, 0)), mode='constant',
                   constant_values=(0, 0))
    return X_pad


def conv_single_step(a_slice_prev, W, b):
    s = np.multiply(a_slice_prev, W)
    Z = np.sum(s)
    Z = Z + b.item()
    return Z


def conv_forward(A_prev, W, b, hparameters):
    (m, n_H_prev, n_W_prev, n_C_prev) = A_prev.shape
    (f, f, n_C_prev, n_C) = W.shape
    stride = hparameters["stride"]
    pad = hparameters["pad"]
    n_H = int((n_H_prev - f + 2 * pad) / stride) + 1
    n_W = int((n_W_prev - f + 2 * pad) / stride) + 1
    Z = np.zeros((m, n_H, n_W, n_C))
    A_prev_pad = zero_pad(A_prev, pad)
    for i in range(m):
        a_prev_pad = A_prev_pad[i]
        for h in range(n_H):
            vert_start = h * stride
            vert_end = vert_start + f
            for w in range(n_W):
                horiz_start = w * stride
                horiz_end = horiz_start + f
                for c in range(n_C):
                    a_slice_prev = a_prev_pad[vert_start:vert_end, horiz_start:horiz_end, :]
                    weights = W[:, :, :, c]
                    biases = b[:, :, :, c]
                    Z[i, h, w, c] = conv_single_step(a_slice_prev, weights, biases)
    assert(Z.shape == (m, n_H, n_W, n_C))
    cache = (A_prev, W, b, hparameters)
    return Z, cache


def pool_forward(A_prev, hparameters, mode="max"):
    (m, n_H_prev, n_W_prev, n_C_prev) = A_prev.shape
    f = hparameters["f"]
    stride = hparameters["stride"]
    n_H = int(1 + (n_H_prev - f) / stride)
    n_W = int(1 + (n_W_prev - f) / stride)
    n_C = n_C_prev
    A = np.zeros((m, n_H, n_W, n_C))
    for i in range(m):
        for h in range(n_H):
            vert_start = h * stride
            vert_end = vert_start + f
            for w in range(n_W):
                horiz_start = w * stride
                horiz_end = horiz_start + f
                for c in range(n_C):
                    a_prev_slice = A_prev[i, vert_start:vert_end, horiz_start:horiz_end, c]
                    if mode == "max":
                        A[i, h, w, c] = np.max(a_prev_slice)
                    elif mode == "average":
                        A[i, h, w, c] = np.mean(a_prev_slice)
    cache = (A_prev, hparameters)
    return A, cache


def dl_conv_pool(W, b, A_prev):
    Z, _ = conv_forward(A_prev, W, b, {"pad": 1, "stride": 2})
    A, _ = pool_forward(np.tanh(Z), {"f": 2, "stride": 1}, mode="max")
    A2, _ = pool_forward(Z, {"f": 2, "stride": 1}, mode="average")
    return np.sum(A ** 2) + np.mean(A2)


def _dl_conv():
    r = rng(809)
    return (r.standard_normal((2, 2, 2, 2)) * 0.5, r.standard_normal((1, 1, 1, 2)) * 0.1,
            r.standard_normal((2, 4, 4, 2)))


# ---- 4. course RNN captioning class with self.params ------------------------------------

def word_embedding_forward(x, W):
    out = W[x]
    cache = x, W
    return out, cache


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(prev_h.dot(Wh) + x.dot(Wx) + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    return next_h, cache


def rnn_forward_layer(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    cache = []
    prev_h = h0
    for t in range(T):
        next_h, cache_t = rnn_step_forward(x[:, t, :], prev_h, Wx, Wh, b)
        h[:, t, :] = next_h
        cache.append(cache_t)
        prev_h = next_h
    return h, cache


def temporal_affine_forward(x, w, b):
    N, T, D = x.shape
    M = b.shape[0]
    out = x.reshape(N * T, D).dot(w).reshape(N, T, M) + b
    cache = x, w, b, out
    return out, cache


def temporal_softmax_loss(x, y, mask):
    N, T, V = x.shape
    x_flat = x.reshape(N * T, V)
    y_flat = y.reshape(N * T)
    mask_flat = mask.reshape(N * T)
    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat])) / N
    return loss


class CaptioningRNN(object):
    def __init__(self, params, word_to_idx, dtype=np.float64):
        self.dtype = dtype
        self.word_to_idx = word_to_idx
        self.idx_to_word = {i: w for w, i in word_to_idx.items()}
        self._null = word_to_idx['<NULL>']
        self._start = word_to_idx.get('<START>', None)
        self._end = word_to_idx.get('<END>', None)
        self.params = params
        for k, v in self.params.items():
            self.params[k] = v.astype(self.dtype)

    def loss(self, features, captions):
        captions_in = captions[:, :-1]
        captions_out = captions[:, 1:]
        mask = (captions_out != self._null)
        W_proj, b_proj = self.params['W_proj'], self.params['b_proj']
        W_embed = self.params['W_embed']
        Wx, Wh, b = self.params['Wx'], self.params['Wh'], self.params['b']
        W_vocab, b_vocab = self.params['W_vocab'], self.params['b_vocab']
        loss, grads = 0.0, {}
        h0 = features.dot(W_proj) + b_proj
        x, _ = word_embedding_forward(captions_in, W_embed)
        h, _ = rnn_forward_layer(x, h0, Wx, Wh, b)
        scores, _ = temporal_affine_forward(h, W_vocab, b_vocab)
        loss = temporal_softmax_loss(scores, captions_out, mask)
        grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        return loss, grads


def captioning_rnn(params, features, captions):
    word_to_idx = {'<NULL>': 0, '<START>': 1, '<END>': 2, 'a': 3, 'cat': 4}
    model = CaptioningRNN(params, word_to_idx)
    loss, grads = model.loss(features, captions)
    return loss


def _caption():
    r = rng(810)
    D, W, H, V = 3, 4, 5, 5
    params = {"W_proj": r.standard_normal((D, H)) * 0.4, "b_proj": np.zeros(H),
              "W_embed": r.standard_normal((V, W)) * 0.5, "Wx": r.standard_normal((W, H)) * 0.4,
              "Wh": r.standard_normal((H, H)) * 0.4, "b": np.zeros(H) + 0.05,
              "W_vocab": r.standard_normal((H, V)) * 0.4, "b_vocab": np.zeros(V)}
    captions = np.array([[1, 3, 4, 2, 0], [1, 4, 4, 3, 2]])
    return params, r.standard_normal((2, D)), captions


# ---- 5. nn-from-scratch over globals, an RNN tutorial class ------------------------------

_R = rng(811)
X_nn = _R.standard_normal((9, 2))
y_nn = _R.integers(0, 2, 9)
num_examples = len(X_nn)
reg_lambda = 0.01


def calculate_loss(model):
    W1, b1, W2, b2 = model['W1'], model['b1'], model['W2'], model['b2']
    z1 = X_nn.dot(W1) + b1
    a1 = np.tanh(z1)
    z2 = a1.dot(W2) + b2
    exp_scores = np.exp(z2)
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    corect_logprobs = -np.log(probs[range(num_examples), y_nn])
    data_loss = np.sum(corect_logprobs)
    data_loss += reg_lambda / 2 * (np.sum(np.square(W1)) + np.sum(np.square(W2)))
    return 1. / num_examples * data_loss


def _nn_model():
    r = rng(812)
    return ({'W1': r.standard_normal((2, 4)) / np.sqrt(2), 'b1': np.zeros((1, 4)),
             'W2': r.standard_normal((4, 2)) / np.sqrt(4), 'b2': np.zeros((1, 2))},)


def tut_softmax(x):
    xt = np.exp(x - np.max(x))
    return xt / np.sum(xt)


class RNNNumpy:

    def __init__(self, word_dim, hidden_dim=4, bptt_truncate=4, U=None, V=None, W=None):
        self.word_dim = word_dim
        self.hidden_dim = hidden_dim
        self.bptt_truncate = bptt_truncate
        self.U, self.V, self.W = U, V, W

    def forward_propagation(self, x):
        T = len(x)
        s = np.zeros((T + 1, self.hidden_dim))
        s[-1] = np.zeros(self.hidden_dim)
        o = np.zeros((T, self.word_dim))
        for t in np.arange(T):
            s[t] = np.tanh(self.U[:, x[t]] + self.W.dot(s[t - 1]))
            o[t] = tut_softmax(self.V.dot(s[t]))
        return [o, s]

    def calculate_total_loss(self, x, y):
        L = 0
        for i in np.arange(len(y)):
            o, s = self.forward_propagation(x[i])
            correct_word_predictions = o[np.arange(len(y[i])), y[i]]
            L += -1 * np.sum(np.log(correct_word_predictions))
        return L

    def calculate_loss(self, x, y):
        N = sum((len(y_i) for y_i in y))
        return self.calculate_total_loss(x, y) / N


def rnn_tutorial(U, V, W, x, y):
    model = RNNNumpy(6, hidden_dim=4, U=U, V=V, W=W)
    return model.calculate_loss(x, y)


def _rnn_tut():
    r = rng(813)
    x = [[0, 3, 2, 5], [1, 4, 4]]
    y = [[3, 2, 5, 1], [4, 4, 0]]
    return (r.uniform(-0.5, 0.5, (4, 6)), r.uniform(-0.5, 0.5, (6, 4)),
            r.uniform(-0.5, 0.5, (4, 4)), x, y)


# ---- 6. numpy-ml style loss objects --------------------------------------------------------

def is_binary(x):
    msg = "Matrix must be binary"
    assert np.array_equal(x, x.astype(bool)), msg
    return True


def is_stochastic(X):
    msg = "Array should be stochastic along the columns"
    assert len(X[X < 0]) == len(X[X > 1]) == 0, msg
    assert np.allclose(np.sum(X, axis=1), np.ones(X.shape[0])), msg
    return True


class ObjectiveBase(object):
    def __init__(self):
        super().__init__()


class NMLCrossEntropy(ObjectiveBase):
    def __init__(self):
        super().__init__()

    def __call__(self, y, y_pred):
        return self.loss(y, y_pred)

    def __str__(self):
        return "CrossEntropy"

    @staticmethod
    def loss(y, y_pred):
        is_binary(y)
        is_stochastic(y_pred)
        eps = np.finfo(float).eps
        cross_entropy = -np.sum(y * np.log(y_pred + eps))
        return cross_entropy


class NMLVAELoss(ObjectiveBase):
    def __call__(self, y, y_pred, t_mean, t_log_var):
        return self.loss(y, y_pred, t_mean, t_log_var)

    @staticmethod
    def loss(y, y_pred, t_mean, t_log_var):
        eps = np.finfo(float).eps
        y_pred = np.clip(y_pred, eps, 1 - eps)
        rec_loss = -np.sum(y * np.log(y_pred) + (1 - y) * np.log(1 - y_pred), axis=1)
        kl_loss = -0.5 * np.sum(1 + t_log_var - t_mean ** 2 - np.exp(t_log_var), axis=1)
        loss = np.mean(kl_loss + rec_loss)
        return loss


def numpy_ml_losses(W, Wm, Wv, X, y, xb):
    z = X @ W
    y_pred = np.exp(z - z.max(axis=1, keepdims=True))
    y_pred = y_pred / y_pred.sum(axis=1, keepdims=True)
    ce = NMLCrossEntropy()
    loss = ce(y, y_pred)
    t_mean, t_log_var = xb @ Wm, xb @ Wv
    recon = sigmoid(t_mean @ Wm.T)
    return loss + NMLVAELoss()(xb > 0, recon, t_mean, t_log_var)


def _nml():
    r = rng(814)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal((5, 2)) * 0.4,
            r.standard_normal((5, 2)) * 0.3, r.standard_normal((6, 3)),
            np.eye(4)[r.integers(0, 4, 6)], r.standard_normal((4, 5)))


def nce_style_inplace(W, b, X, target, noise_probs):
    n = X.shape[0]
    Z = X @ W + b
    p_target = np.atleast_2d(noise_probs[target])
    Z[range(n), ...] -= np.log(p_target).T
    y_pred = sigmoid(Z)
    eps = np.finfo(float).eps
    np.clip(y_pred, eps, 1 - eps, y_pred)
    y_true = np.zeros_like(y_pred)
    y_true[range(n), target] = 1
    loss = -np.sum(y_true * np.log(y_pred) + (1 - y_true) * np.log(1 - y_pred))
    return loss


def _nce():
    r = rng(815)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal(4) * 0.1,
            r.standard_normal((5, 3)), np.array([0, 3, 1, 1, 2]),
            np.array([0.1, 0.2, 0.3, 0.4]))


# ---- 7. an estimator with a fit loop (unrolled gradient descent) --------------------------

class LogisticRegressionGD:
    def __init__(self, lr=0.1, n_iter=5, fit_intercept=True, verbose=False):
        self.lr = lr
        self.n_iter = n_iter
        self.fit_intercept = fit_intercept
        self.verbose = verbose
        self.cost_history = []

    def _add_intercept(self, X):
        return np.c_[np.ones(X.shape[0]), X]

    def _sigmoid(self, z):
        return 1 / (1 + np.exp(-z))

    def _cost(self, h, y):
        return (-y * np.log(h) - (1 - y) * np.log(1 - h)).mean()

    def fit(self, X, y, theta0):
        if self.fit_intercept:
            X = self._add_intercept(X)
        self.theta = theta0.copy()
        for i in range(self.n_iter):
            z = np.dot(X, self.theta)
            h = self._sigmoid(z)
            gradient = np.dot(X.T, (h - y)) / y.size
            self.theta -= self.lr * gradient
            cost = self._cost(h, y)
            self.cost_history.append(cost)
            if self.verbose and i % 2 == 0:
                print(f'loss: {cost} \t')
        return self

    def predict_prob(self, X):
        if self.fit_intercept:
            X = self._add_intercept(X)
        return self._sigmoid(np.dot(X, self.theta))


def estimator_fit_loop(theta0, X, y, X_val, y_val):
    model = LogisticRegressionGD(lr=0.5, n_iter=4)
    model.fit(X, y, theta0)
    p = model.predict_prob(X_val)
    return model._cost(p, y_val) + 0.1 * model.cost_history[-1]


def _est():
    r = rng(816)
    X = r.standard_normal((8, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(float)
    return (r.standard_normal(3) * 0.3, X, y, r.standard_normal((5, 2)),
            np.array([1., 0., 1., 1., 0.]))


class SoftmaxRegression:
    def __init__(self, n_classes, reg=1e-2):
        self.n_classes = n_classes
        self.reg = reg

    def _one_hot(self, y):
        return np.eye(self.n_classes)[y]

    def loss(self, W, b, X, y):
        logits = X @ W + b
        log_probs = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)
        nll = -np.take_along_axis(log_probs, y[:, None], axis=1).mean()
        probs = scipy.special.softmax(logits, axis=1)
        brier = np.mean(np.sum((probs - self._one_hot(y)) ** 2, axis=1))
        return nll + 0.1 * brier + self.reg * np.sum(W * W)


def softmax_regression_scipy(W, b, X, y):
    return SoftmaxRegression(3).loss(W, b, X, y)


def _smr():
    r = rng(817)
    return (r.standard_normal((4, 3)) * 0.5, np.zeros(3), r.standard_normal((7, 4)),
            r.integers(0, 3, 7))


# ---- 8. GMM and k-means --------------------------------------------------------------------

def gaussian_pdf(X, mu, cov):
    d = X.shape[1]
    diff = X - mu
    inv = np.linalg.inv(cov)
    det = np.linalg.det(cov)
    norm_const = 1.0 / np.sqrt((2 * np.pi) ** d * det)
    return norm_const * np.exp(-0.5 * np.einsum('ij,jk,ik->i', diff, inv, diff))


class GMM:
    def __init__(self, k):
        self.k = k

    def log_likelihood(self, X, means, covs, weights):
        n = X.shape[0]
        pdfs = np.zeros((n, self.k))
        for j in range(self.k):
            pdfs[:, j] = weights[j] * gaussian_pdf(X, means[j], covs[j])
        return np.sum(np.log(np.sum(pdfs, axis=1)))

    def e_step(self, X, means, covs, weights):
        resp = np.array([w * gaussian_pdf(X, m, c) for w, m, c in zip(weights, means, covs)]).T
        resp /= resp.sum(axis=1, keepdims=True)
        return resp


def gmm_loglik(means, log_weights, L, X):
    gmm = GMM(2)
    weights = np.exp(log_weights) / np.sum(np.exp(log_weights))
    covs = [l @ l.T + 0.5 * np.eye(2) for l in L]
    ll = gmm.log_likelihood(X, means, covs, weights)
    resp = gmm.e_step(X, means, covs, weights)
    Nk = resp.sum(axis=0)
    return -ll / X.shape[0] + 0.1 * np.sum(Nk ** 2) / X.shape[0] ** 2


def _gmm():
    r = rng(818)
    return (r.standard_normal((2, 2)), np.array([0.2, -0.1]),
            r.standard_normal((2, 2, 2)) * 0.5, r.standard_normal((10, 2)))


def kmeans_assign_loss(C, X):
    dists = np.sqrt(((X[:, np.newaxis, :] - C[np.newaxis, :, :]) ** 2).sum(axis=2))
    labels = np.argmin(dists, axis=1)
    inertia = np.sum((X - C[labels]) ** 2)
    counts = np.bincount(labels, minlength=C.shape[0])
    spread = sum(np.sum(dists[labels == k, k]) / max(counts[k], 1) for k in range(C.shape[0]))
    return inertia + spread


def _km():
    r = rng(819)
    return (np.array([[-1.0, 0.2], [1.1, -0.3], [0.1, 1.4]]), r.standard_normal((12, 2)))


# ---- 9. simulations ----------------------------------------------------------------------

def laplacian(u, dx):
    return (np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1)
            + np.roll(u, -1, axis=1) - 4 * u) / dx ** 2


def heat_equation(u0, alpha, target):
    dx, dt = 1.0, 0.1
    u = u0.copy()
    for step in range(5):
        u = u + dt * alpha * laplacian(u, dx)
    return np.mean((u - target) ** 2)


def _heat():
    r = rng(820)
    return r.standard_normal((5, 6)), np.array(0.7), r.standard_normal((5, 6))


def spring_chain_energy(x, k, L0=0.5):
    stretch = np.diff(x) - L0
    elastic = 0.5 * np.sum(k * stretch ** 2)
    bend = np.sum(np.diff(x, n=2) ** 2)
    v = np.gradient(x, 0.1)
    return elastic + 0.1 * bend + 0.01 * np.sum(v ** 2) + np.sum(np.cumsum(x) * 0.01)


def _spring():
    r = rng(821)
    return np.cumsum(0.5 + 0.1 * r.standard_normal(7)), 1.0 + r.random(6)


def rk4_step(f, t, y, h, params):
    k1 = f(t, y, params)
    k2 = f(t + h / 2, y + h / 2 * k1, params)
    k3 = f(t + h / 2, y + h / 2 * k2, params)
    k4 = f(t + h, y + h * k3, params)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def damped_oscillator(t, y, params):
    omega, zeta = params
    x, v = y
    return np.array([v, -2 * zeta * omega * v - omega ** 2 * x])


def integrate(f, y0, t_span, n_steps, params):
    t0, t1 = t_span
    h = (t1 - t0) / n_steps
    ts = [t0]
    ys = [y0]
    y = y0
    for i in range(n_steps):
        y = rk4_step(f, ts[-1], y, h, params)
        ys.append(y)
        ts.append(ts[-1] + h)
    return np.array(ts), np.array(ys)


def rk4_oscillator(y0, params):
    ts, ys = integrate(damped_oscillator, y0, (0.0, 1.0), 6, params)
    energy = 0.5 * ys[:, 1] ** 2 + 0.5 * params[0] ** 2 * ys[:, 0] ** 2
    return np.trapezoid(energy, ts) + ys[-1, 0]


def _rk4():
    return np.array([1.0, 0.2]), np.array([2.0, 0.3])


def lotka_volterra(state, alpha, beta, delta, gamma):
    x, y = state
    dx = alpha * x - beta * x * y
    dy = delta * x * y - gamma * y
    return np.array([dx, dy])


def lotka_volterra_euler(theta, state0):
    alpha, beta, delta, gamma = theta
    state = state0
    traj = [state]
    dt = 0.05
    for _ in range(8):
        state = state + dt * lotka_volterra(state, alpha, beta, delta, gamma)
        traj.append(state)
    traj = np.vstack(traj)
    return np.sum(np.log(traj))


def _lv():
    return np.array([1.1, 0.4, 0.1, 0.4]), np.array([10.0, 5.0])


def wave_leapfrog(u0, c):
    u_prev = u0.copy()
    u = u0.copy()
    c2 = (c * 0.1) ** 2
    for n in range(6):
        lap = np.convolve(u, [1.0, -2.0, 1.0], mode='same')
        u_prev, u = u, 2 * u - u_prev + c2 * lap
    return np.sum(u ** 2) + np.sum(u * u_prev)


def _wave():
    x = np.linspace(0, 1, 9)
    return np.exp(-30 * (x - 0.4) ** 2), np.array(1.5)


def nbody_energy(pos, vel, masses):
    n = pos.shape[0]
    i, j = np.triu_indices(n, k=1)
    dt = 0.01
    for step in range(3):
        r = pos[:, None, :] - pos[None, :, :]
        d = np.linalg.norm(r, axis=-1) + np.eye(n)
        acc = -np.sum(masses[None, :, None] * r / d[:, :, None] ** 3, axis=1)
        vel = vel + 0.5 * dt * acc
        pos = pos + dt * vel
    pair_d = np.linalg.norm(pos[i] - pos[j], axis=1)
    potential = -np.sum(masses[i] * masses[j] / pair_d)
    kinetic = 0.5 * np.sum(masses[:, None] * vel ** 2)
    return kinetic + potential


def _nbody():
    r = rng(822)
    return (np.array([[0., 0.], [1., 0.2], [-0.3, 1.1], [0.9, -1.0]]) + 0.05 * r.standard_normal((4, 2)),
            0.1 * r.standard_normal((4, 2)), np.array([1.0, 0.5, 0.8, 0.3]))


# ---- 10. policy gradient, skip-gram, matrix factorisation ---------------------------------

gamma = 0.9


def policy_forward(model, x):
    h = np.dot(model['W1'], x)
    h[h < 0] = 0
    logp = np.dot(model['W2'], h)
    p = sigmoid(logp)
    return p, h


def discount_rewards(r):
    discounted_r = np.zeros_like(r)
    running_add = 0
    for t in reversed(range(0, r.size)):
        if r[t] != 0:
            running_add = 0
        running_add = running_add * gamma + r[t]
        discounted_r[t] = running_add
    return discounted_r


def policy_gradient_loss(model, xs, actions, rewards):
    logps, hs = [], []
    for x, a in zip(xs, actions):
        aprob, h = policy_forward(model, x)
        y = 1 if a == 2 else 0
        logps.append(y * np.log(aprob) + (1 - y) * np.log(1 - aprob))
        hs.append(h)
    eplogp = np.vstack(logps)
    eph = np.vstack(hs)
    discounted_epr = discount_rewards(rewards)
    discounted_epr -= np.mean(discounted_epr)
    discounted_epr /= np.std(discounted_epr)
    return -np.sum(eplogp.ravel() * discounted_epr) + 1e-3 * np.sum(eph ** 2)


def _pg():
    r = rng(823)
    model = {'W1': r.standard_normal((5, 4)) / np.sqrt(4), 'W2': r.standard_normal(5) / np.sqrt(5)}
    xs = [r.standard_normal(4) for _ in range(6)]
    return model, xs, [2, 3, 2, 2, 3, 3], np.array([0., 0., 1., 0., 0., -1.])


def skipgram_loss(W1, W2, corpus_pairs):
    total = 0.0
    for word_idx, context in corpus_pairs:
        h = W1[word_idx]
        u = np.dot(W2.T, h)
        loss = -np.sum([u[w] for w in context]) + len(context) * np.log(np.sum(np.exp(u)))
        total += loss
    reg = np.outer(W1[0], W1[1]).sum()
    return total / len(corpus_pairs) + 0.01 * reg


def _sg():
    r = rng(824)
    return (r.standard_normal((6, 3)) * 0.5, r.standard_normal((3, 6)) * 0.5,
            [(0, [1, 2]), (3, [0, 4, 5]), (1, [2])])


def matrix_factorization_loops(P, Q, R, beta=0.02):
    K = P.shape[1]
    e = 0
    for i, j in zip(*np.nonzero(R)):
        e = e + pow(R[i][j] - np.dot(P[i, :], Q[:, j]), 2)
        for k in range(K):
            e = e + (beta / 2) * (pow(P[i][k], 2) + pow(Q[k][j], 2))
    return e


def _mfl():
    r = rng(825)
    R = np.array([[5, 3, 0, 1], [4, 0, 0, 1], [1, 1, 0, 5], [0, 1, 5, 4]], dtype=float)
    return r.random((4, 2)), r.random((2, 4)), R


# ---- 11. everyday Python around numpy -----------------------------------------------------

Cache = namedtuple("Cache", ["x", "z", "h"])


def dense_forward(x, W, b):
    z = x @ W + b
    h = np.tanh(z)
    return h, Cache(x=x, z=z, h=h)


def namedtuple_defaultdict(params, X, y):
    acts = defaultdict(list)
    h = X
    n_layers = len([k for k in params if k.startswith("W")])
    for i in range(n_layers):
        h, cache = dense_forward(h, params["W{}".format(i)], params["b{:d}".format(i)])
        acts["z"].append(cache.z)
        acts["h"].append(cache.h)
    reg = sum(np.sum(np.square(params[k])) for k in sorted(params) if k.startswith("W"))
    zs = np.concatenate([z.reshape(-1) for z in acts["z"]])
    log.info("layers=%d reg=%s", n_layers, reg)
    return np.mean((h - y) ** 2) + 1e-3 * reg + 1e-3 * np.sum(zs ** 2)


def _ntd():
    r = rng(826)
    return ({"W0": r.standard_normal((3, 4)) * 0.5, "b0": np.zeros(4),
             "W1": r.standard_normal((4, 2)) * 0.5, "b1": np.zeros(2)},
            r.standard_normal((5, 3)), r.standard_normal((5, 2)))


def softmax_1d(v):
    e = np.exp(v - v.max())
    return e / e.sum()


def apply_along_and_map(W, X):
    scores = X @ W
    probs = np.apply_along_axis(softmax_1d, 1, scores)
    norms = list(map(np.linalg.norm, [W[:, 0], W[:, 1]]))
    sq = list(map(lambda w: np.sum(w ** 2), W.T))
    return -np.sum(np.log(probs[:, 0])) + sum(norms) + 0.1 * sum(sq)


def _aam():
    r = rng(827)
    return r.standard_normal((3, 3)), r.standard_normal((5, 3))


def as_batch(x):
    if isinstance(x, list):
        x = np.array(x)
    if x.ndim == 1:
        x = x[np.newaxis, :]
    return x


def isinstance_shape_fixes(w, b, x, reg=0.1):
    x = as_batch(x)
    out = x.dot(w) + b
    if out.ndim == 2 and out.shape[1] == 1:
        out = out.reshape(-1)
    if isinstance(reg, (int, float)) and reg > 0:
        out = out + reg * np.dot(w.ravel(), w.ravel())
    return np.sum(np.log1p(np.exp(-np.abs(out))) + np.maximum(out, 0))


def _isf():
    r = rng(828)
    return r.standard_normal((3, 1)), np.array([0.1]), list(r.standard_normal(3))


def batches_array_split(W, X, y):
    losses = []
    for i, (xb, yb) in enumerate(zip(np.array_split(X, 3), np.array_split(y, 3))):
        pred = xb @ W
        losses.append(np.mean((pred - yb) ** 2) * (i + 1))
    return sum(losses) / len(losses)


def _bas():
    r = rng(829)
    return r.standard_normal((3, 2)), r.standard_normal((8, 3)), r.standard_normal((8, 2))


def stable_losses(w, X, y):
    z = X @ w
    bce = np.mean(np.logaddexp(0, -z) * y + np.logaddexp(0, z) * (1 - y))
    elu = np.where(z > 0, z, np.expm1(z))
    hinge = np.maximum(0, 1 - (2 * y - 1) * z)
    return bce + 0.1 * np.sum(elu ** 2) + np.mean(hinge ** 2)


def _stable():
    r = rng(830)
    return r.standard_normal(3), r.standard_normal((9, 3)), (r.random(9) > 0.5).astype(float)


def image_smoothing_tv(img, kernel):
    H, W = img.shape
    xp = np.pad(img, 1, mode="edge")
    out = np.zeros_like(img)
    for di in range(3):
        for dj in range(3):
            out += kernel[di, dj] * xp[di:di + H, dj:dj + W]
    refl = np.pad(out, ((1, 1), (2, 2)), mode="reflect")
    tv = np.sum(np.abs(np.diff(out, axis=0))) + np.sum(np.abs(np.diff(out, axis=1)))
    return np.sum(np.clip(refl, -0.8, 0.8) ** 2) + 0.1 * tv


def _smooth():
    r = rng(831)
    return r.standard_normal((4, 5)), r.random((3, 3)) / 4


def transformer_tensordot(x, Wq, Wk, Wv, Wo, n_heads=2):
    T, d = x.shape
    dh = d // n_heads
    q = np.tensordot(x, Wq, axes=([1], [0]))
    k = np.tensordot(x, Wk, axes=([1], [0]))
    v = np.tensordot(x, Wv, axes=([1], [0]))
    mask = np.triu(np.ones((T, T)), k=1) * -1e9
    heads = []
    for h in range(n_heads):
        sl = slice(h * dh, (h + 1) * dh)
        s = q[:, sl] @ k[:, sl].T / math.sqrt(dh) + mask
        s = s - s.max(1)[:, None]
        a = np.exp(s) / np.exp(s).sum(1).reshape(-1, 1)
        heads.append(a @ v[:, sl])
    out = np.hstack(heads) @ Wo
    mu = out.mean(-1, keepdims=True)
    sd = out.std(-1, keepdims=True)
    return np.sum(((out - mu) / (sd + 1e-5)) ** 3 * 0.1) + np.sum(out ** 2) * 0.01


def _tt():
    r = rng(832)
    return (r.standard_normal((4, 4)), *(r.standard_normal((4, 4)) * 0.5 for _ in range(4)))


def contrastive_losses(A, B, Wa, tau=0.5):
    za = A @ Wa
    zb = B @ Wa
    za = za / np.linalg.norm(za, axis=1, keepdims=True)
    zb = zb / np.linalg.norm(zb, axis=1, keepdims=True)
    sim = za @ zb.T / tau
    labels = np.arange(sim.shape[0])
    logits = sim - sim.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    info_nce = -np.mean(logp[labels, labels])
    pos = np.einsum('ij,ij->i', za, zb)
    neg = np.einsum('ij,ij->i', za, np.roll(zb, 1, axis=0))
    triplet = np.mean(np.maximum(0, 0.5 - pos + neg))
    acc = (np.argmax(sim, axis=1) == labels).mean()
    log.debug("acc %.2f", acc)
    return info_nce + triplet + 0.1 * np.sum(np.diag(sim))


def _contrast():
    r = rng(833)
    return r.standard_normal((5, 3)), r.standard_normal((5, 3)), r.standard_normal((3, 4))


def label_smoothing(W, X, y, eps=0.1):
    z = X.dot(W)
    logp = z - z.max(axis=1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(axis=1, keepdims=True))
    nll = -np.take_along_axis(logp, np.expand_dims(y, axis=1), axis=1).squeeze(1)
    smooth = -logp.mean(axis=-1)
    top = np.argmax(z, axis=1)
    conf = z[np.arange(len(y)), top]
    return np.mean((1 - eps) * nll + eps * smooth) + 0.01 * np.sum(conf)


def _ls():
    r = rng(834)
    return r.standard_normal((3, 4)), r.standard_normal((6, 3)), r.integers(0, 4, 6)


def gru_hstack(Wz, Wr, Wh, xs, h0):
    h = h0
    hs = []
    for x_t in xs:
        hx = np.hstack([h, x_t])
        z = sigmoid(Wz @ hx)
        r = sigmoid(Wr @ hx)
        h_tilde = np.tanh(Wh @ np.hstack((r * h, x_t)))
        h = z * h + (1 - z) * h_tilde
        hs.append(h)
    H = np.vstack(hs)
    return np.sum(H[-1] ** 2) + np.mean(H)


def _gru():
    r = rng(835)
    return (r.standard_normal((3, 5)) * 0.5, r.standard_normal((3, 5)) * 0.5,
            r.standard_normal((3, 5)) * 0.5, [r.standard_normal(2) for _ in range(4)],
            np.zeros(3))


def add_noise(x, scale, seed=0):
    rs = np.random.RandomState(seed)
    return x + scale * rs.randn(*x.shape)


def denoising_clip_assert(W, X):
    Xn = add_noise(X, 0.1)
    H = np.tanh(Xn @ W)
    R = H @ W.T
    loss = np.mean((R - X) ** 2)
    resid = 2 * (R - X) / R.size
    rnorm = np.linalg.norm(resid)
    if rnorm > 0.05:
        resid = resid * (0.05 / rnorm)
    assert np.isfinite(loss), f"loss diverged: {loss}"
    log.debug(f"loss={loss:.4f} |r|={rnorm:.3f}")
    return loss + 0.1 * np.sum(resid * R)


def _dae():
    r = rng(836)
    return r.standard_normal((4, 3)) * 0.5, r.standard_normal((6, 4))


def sorted_items_builtins(params, X, y):
    h = X
    for name, W in sorted(params.items()):
        if name.startswith("W"):
            z = h @ W
            h = np.maximum(z, 0.01 * z)
    worst = max(np.max(np.abs(W)) for W in params.values())
    smallest = min(np.sum(W ** 2) for W in params.values())
    return np.mean((h - y) ** 2) + 0.01 * worst + 0.1 * smallest


def _sib():
    r = rng(837)
    return ({"W1": r.standard_normal((4, 2)) * 0.5, "W0": r.standard_normal((3, 4)) * 0.5},
            r.standard_normal((5, 3)), r.standard_normal((5, 2)))


class MLPModel:
    def __init__(self, W1, W2, act="tanh"):
        self.W1 = W1
        self.W2 = W2
        self.act = act

    @classmethod
    def from_params(cls, params, **kwargs):
        return cls(params["W1"], params["W2"], **kwargs)

    @property
    def weights(self):
        return [self.W1, self.W2]

    @staticmethod
    def activation(z, kind):
        return np.tanh(z) if kind == "tanh" else np.maximum(z, 0)

    def __call__(self, x):
        return self.activation(x @ self.W1, self.act) @ self.W2


def classmethod_constructor(params, X, y):
    model = MLPModel.from_params(params, act="tanh")
    pred = model(X)
    return np.mean((pred - y) ** 2) + 1e-3 * sum(np.sum(w * w) for w in model.weights)


def _cmc():
    r = rng(838)
    return ({"W1": r.standard_normal((3, 4)) * 0.5, "W2": r.standard_normal((4, 2)) * 0.5},
            r.standard_normal((5, 3)), r.standard_normal((5, 2)))


def calculate_loss_args(model, X, y, reg_lambda=0.01):
    num_examples = len(X)
    W1, b1, W2, b2 = model['W1'], model['b1'], model['W2'], model['b2']
    a1 = np.tanh(X.dot(W1) + b1)
    exp_scores = np.exp(a1.dot(W2) + b2)
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    data_loss = np.sum(-np.log(probs[range(num_examples), y]))
    data_loss += reg_lambda / 2 * (np.sum(np.square(W1)) + np.sum(np.square(W2)))
    return 1. / num_examples * data_loss


def _nn_args():
    return _nn_model()[0], X_nn, y_nn


PROGRAMS = [
    Probe("wild_repos3.network2_cross_entropy", network2_cross_entropy, _net2(), ("weights", "biases")),
    Probe("wild_repos3.network2_quadratic_labels", network2_quadratic_labels, _net2(True),
          ("weights", "biases")),
    Probe("wild_repos3.mlfs_classifier", mlfs_classifier, _mlfs, ("W1", "w01", "W2", "w02"), fuse=True),
    Probe("wild_repos3.mlfs_rnn_prealloc", mlfs_rnn_prealloc, _mlfs_rnn, ("U", "V", "W")),
    Probe("wild_repos3.mlfs_conv_maxpool", mlfs_conv_maxpool, _mlfs_conv, ("W", "w0", "X")),
    Probe("wild_repos3.mlfs_conv_early_return_padding", mlfs_conv_early_return_padding,
          _mlfs_conv, ("W", "w0", "X")),
    Probe("wild_repos3.dl_L_layer", dl_L_layer, _dl_L, "parameters", fuse=True),
    Probe("wild_repos3.dl_dropout_l2", dl_dropout_l2, _dl_drop, "parameters"),
    Probe("wild_repos3.dl_rnn", dl_rnn, _dl_rnn, ("parameters", "a0")),
    Probe("wild_repos3.dl_lstm", dl_lstm, _dl_lstm, ("parameters", "x")),
    Probe("wild_repos3.dl_conv_pool", dl_conv_pool, _dl_conv, ("W", "b", "A_prev")),
    Probe("wild_repos3.captioning_rnn", captioning_rnn, _caption, ("params", "features")),
    Probe("wild_repos3.calculate_loss", calculate_loss, _nn_model, "model", fuse=True),
    Probe("wild_repos3.rnn_tutorial", rnn_tutorial, _rnn_tut, ("U", "V", "W")),
    Probe("wild_repos3.numpy_ml_losses", numpy_ml_losses, _nml, ("W", "Wm", "Wv")),
    Probe("wild_repos3.nce_style_inplace", nce_style_inplace, _nce, ("W", "b")),
    Probe("wild_repos3.estimator_fit_loop", estimator_fit_loop, _est, "theta0"),
    Probe("wild_repos3.softmax_regression_scipy", softmax_regression_scipy, _smr, ("W", "b")),
    Probe("wild_repos3.gmm_loglik", gmm_loglik, _gmm, ("means", "log_weights", "L")),
    Probe("wild_repos3.kmeans_assign_loss", kmeans_assign_loss, _km, "C"),
    Probe("wild_repos3.heat_equation", heat_equation, _heat, ("u0", "alpha"), fuse=True),
    Probe("wild_repos3.spring_chain_energy", spring_chain_energy, _spring, ("x", "k")),
    Probe("wild_repos3.rk4_oscillator", rk4_oscillator, _rk4, ("y0", "params")),
    Probe("wild_repos3.lotka_volterra_euler", lotka_volterra_euler, _lv, ("theta", "state0")),
    Probe("wild_repos3.wave_leapfrog", wave_leapfrog, _wave, ("u0", "c")),
    Probe("wild_repos3.nbody_energy", nbody_energy, _nbody, ("pos", "vel", "masses")),
    Probe("wild_repos3.policy_gradient_loss", policy_gradient_loss, _pg, "model"),
    Probe("wild_repos3.skipgram_loss", skipgram_loss, _sg, ("W1", "W2")),
    Probe("wild_repos3.matrix_factorization_loops", matrix_factorization_loops, _mfl, ("P", "Q")),
    Probe("wild_repos3.namedtuple_defaultdict", namedtuple_defaultdict, _ntd, "params"),
    Probe("wild_repos3.apply_along_and_map", apply_along_and_map, _aam, "W"),
    Probe("wild_repos3.isinstance_shape_fixes", isinstance_shape_fixes, _isf, ("w", "b")),
    Probe("wild_repos3.batches_array_split", batches_array_split, _bas, "W"),
    Probe("wild_repos3.stable_losses", stable_losses, _stable, "w", fuse=True),
    Probe("wild_repos3.image_smoothing_tv", image_smoothing_tv, _smooth, ("img", "kernel")),
    Probe("wild_repos3.transformer_tensordot", transformer_tensordot, _tt,
          ("x", "Wq", "Wk", "Wv", "Wo"), fuse=True),
    Probe("wild_repos3.contrastive_losses", contrastive_losses, _contrast, ("A", "B", "Wa")),
    Probe("wild_repos3.label_smoothing", label_smoothing, _ls, "W", fuse=True),
    Probe("wild_repos3.gru_hstack", gru_hstack, _gru, ("Wz", "Wr", "Wh", "h0")),
    Probe("wild_repos3.denoising_clip_assert", denoising_clip_assert, _dae, "W"),
    Probe("wild_repos3.sorted_items_builtins", sorted_items_builtins, _sib, "params"),
    Probe("wild_repos3.classmethod_constructor", classmethod_constructor, _cmc, "params"),
    Probe("wild_repos3.calculate_loss_args", calculate_loss_args, _nn_args, "model", fuse=True),
]
