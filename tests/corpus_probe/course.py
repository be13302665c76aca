"""Course-style layer code: layers holding ``self.params`` lists and caches, dicts of
parameters keyed by f-strings, global hyper-parameters, string switches, optional
arguments, in-place ReLU, mask-based stable sigmoid, mini-batch loops."""

import numpy as np

from . import Probe, rng
from . import helpers as H
from .helpers import activate, cross_entropy, softmax

REG = 1e-3
ACTIVATION = "tanh"
BATCH = 4


class Affine:
    def __init__(self, W, b):
        self.params = [W, b]
        self.x = None

    def forward(self, x):
        W, b = self.params
        self.x = x
        out = np.dot(x, W) + b
        return out


class Relu:
    def __init__(self):
        self.mask = None

    def forward(self, x):
        self.mask = (x <= 0)
        out = x.copy()
        out[self.mask] = 0
        return out


class SoftmaxWithLoss:
    def __init__(self):
        self.loss = None
        self.y = None
        self.t = None

    def forward(self, x, t):
        self.t = t
        self.y = softmax(x)
        if self.t.size == self.y.size:        # one-hot labels
            t = self.t.argmax(axis=1)
        else:
            t = self.t
        self.loss = cross_entropy(self.y, t)
        return self.loss


def layer_list_params_unpack(W1, b1, W2, b2, X, T):
    layers = [Affine(W1, b1), Relu(), Affine(W2, b2)]
    last = SoftmaxWithLoss()
    x = X
    for layer in layers:
        x = layer.forward(x)
    return last.forward(x, T)


def layer_list_onehot(W1, b1, W2, b2, X, T):
    layers = {"Affine1": Affine(W1, b1), "Relu1": Relu(), "Affine2": Affine(W2, b2)}
    x = X
    for layer in layers.values():
        x = layer.forward(x)
    onehot = np.eye(x.shape[1])[T]
    return SoftmaxWithLoss().forward(x, onehot)


def stable_sigmoid(x):
    pos = x >= 0
    neg = ~pos
    z = np.zeros_like(x)
    z[pos] = np.exp(-x[pos])
    z[neg] = np.exp(x[neg])
    top = np.ones_like(x)
    top[neg] = z[neg]
    return top / (1 + z)


def masked_sigmoid_bce(w, b, X, y):
    p = stable_sigmoid(X @ w + b)
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def fstring_params_loop(params, X, y, num_layers=3):
    h = X
    for i in range(1, num_layers):
        z = h @ params[f"W{i}"] + params[f"b{i}"]
        h = z.copy()
        h[h < 0] = 0
    scores = h @ params[f"W{num_layers}"] + params[f"b{num_layers}"]
    loss = cross_entropy(softmax(scores), y)
    for i in range(1, num_layers + 1):
        loss += 0.5 * REG * np.sum(params["W%d" % i] ** 2)
    return loss


def global_string_switch(W1, W2, X, y):
    h = activate(X @ W1, ACTIVATION)
    out = H.ACTIVATIONS["sigmoid"](h @ W2)
    return np.mean((out - y) ** 2)


def minibatch_loop(W, b, X, y):
    n = X.shape[0]
    total = 0.0
    n_batches = 0
    for i in range(0, n, BATCH):
        xb = X[i:i + BATCH]
        yb = y[i:i + BATCH]
        pred = np.tanh(xb @ W + b)
        total += np.sum((pred - yb) ** 2) / xb.shape[0]
        n_batches += 1
    return total / n_batches


def optional_args(W1, b1, W2, b2, X, y=None, reg=0.0, dropout=None, mode="train"):
    h = np.maximum(0, X @ W1 + b1)
    if dropout is not None and mode == "train":
        h = h * dropout
    scores = h @ W2 + b2
    if y is None:
        return scores
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    N = X.shape[0]
    loss = -np.sum(log_probs[range(N), y]) / N
    if reg > 0:
        loss += 0.5 * reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
    return loss


def optional_args_called(W1, b1, W2, b2, X, y, mask):
    return optional_args(W1, b1, W2, b2, X, y, reg=0.1, dropout=mask)


def svm_hinge(W, X, y, delta=1.0):
    num_train = X.shape[0]
    scores = X.dot(W)
    correct = scores[np.arange(num_train), y]
    margins = np.maximum(0, scores - correct[:, np.newaxis] + delta)
    margins[np.arange(num_train), y] = 0
    loss = np.sum(margins) / num_train
    loss += REG * np.sum(W * W)
    return loss


def svm_hinge_loops(W, X, y):
    loss = 0.0
    num_classes = W.shape[1]
    for i in range(X.shape[0]):
        scores = X[i].dot(W)
        correct_class_score = scores[y[i]]
        for j in range(num_classes):
            if j == y[i]:
                continue
            margin = scores[j] - correct_class_score + 1
            if margin > 0:
                loss += margin
    loss /= X.shape[0]
    return loss


def float32_model(W1, b1, W2, X, y):
    X = X.astype(np.float32)
    h = np.tanh(X @ W1 + b1)
    out = h @ W2
    return np.float32(0.5) * np.mean(np.square(out - y))


def reg_sum_generator(W1, b1, W2, b2, X, y, reg=0.05):
    weights = [W1, W2]
    h = np.maximum(X @ W1 + b1, 0.0)
    probs = softmax(h @ W2 + b2)
    data_loss = cross_entropy(probs, y)
    reg_loss = 0.5 * reg * sum(np.sum(w ** 2) for w in weights)
    return data_loss + reg_loss


def early_return_in_loop(W, X, y, max_steps=5):
    h = X
    loss = 0.0
    for step in range(max_steps):
        h = np.tanh(h @ W)
        loss = loss + np.mean((h - y) ** 2)
        if step == 2:
            return loss
    return loss


def _mlp(seed, D=4, Hd=5, C=3, N=6):
    r = rng(seed)
    W1 = r.standard_normal((D, Hd)) * 0.5
    b1 = r.standard_normal(Hd) * 0.1
    W2 = r.standard_normal((Hd, C)) * 0.5
    b2 = r.standard_normal(C) * 0.1
    X = r.standard_normal((N, D))
    y = r.integers(0, C, N)
    return W1, b1, W2, b2, X, y


def _params_dict(seed=5, dims=(4, 5, 5, 3), N=6):
    r = rng(seed)
    params = {}
    for i in range(1, len(dims)):
        params[f"W{i}"] = r.standard_normal((dims[i - 1], dims[i])) * 0.5
        params[f"b{i}"] = r.standard_normal(dims[i]) * 0.1
    X = r.standard_normal((N, dims[0]))
    y = r.integers(0, dims[-1], N)
    return params, X, y


def _bce(seed=7, N=8, D=3):
    r = rng(seed)
    return r.standard_normal(D), 0.1, r.standard_normal((N, D)) * 2, (r.random(N) > 0.5) * 1.0


def _switch():
    r = rng(8)
    return (r.standard_normal((3, 4)), r.standard_normal((4, 2)), r.standard_normal((5, 3)),
            r.random((5, 2)))


def _batch():
    r = rng(9)
    return r.standard_normal((3, 2)), r.standard_normal(2), r.standard_normal((10, 3)), \
        r.standard_normal((10, 2))


def _opt():
    W1, b1, W2, b2, X, y = _mlp(10)
    mask = (rng(11).random((6, 5)) > 0.3) / 0.7
    return W1, b1, W2, b2, X, y, mask


def _svm():
    r = rng(12)
    return r.standard_normal((4, 3)) * 0.3, r.standard_normal((7, 4)), r.integers(0, 3, 7)


def _f32():
    r = rng(13)
    return (r.standard_normal((3, 4)).astype(np.float32), np.zeros(4, np.float32),
            r.standard_normal((4, 2)).astype(np.float32), r.standard_normal((5, 3)),
            r.standard_normal((5, 2)).astype(np.float32))


def _early():
    r = rng(14)
    return r.standard_normal((3, 3)) * 0.5, r.standard_normal((4, 3)), r.standard_normal((4, 3))


W = ("W1", "b1", "W2", "b2")
PROGRAMS = [
    Probe("course.layer_list_params_unpack", layer_list_params_unpack, lambda: _mlp(1), W),
    Probe("course.layer_list_onehot", layer_list_onehot, lambda: _mlp(2), W),
    Probe("course.masked_sigmoid_bce", masked_sigmoid_bce, _bce, ("w", "b")),
    Probe("course.fstring_params_loop", fstring_params_loop, _params_dict, "params"),
    Probe("course.global_string_switch", global_string_switch, _switch, ("W1", "W2"), True),
    Probe("course.minibatch_loop", minibatch_loop, _batch, ("W", "b")),
    Probe("course.optional_args_called", optional_args_called, _opt, W),
    Probe("course.svm_hinge", svm_hinge, _svm, "W"),
    Probe("course.svm_hinge_loops", svm_hinge_loops, _svm, "W"),
    Probe("course.float32_model", float32_model, _f32, ("W1", "b1", "W2"), tol=2e-2),
    Probe("course.reg_sum_generator", reg_sum_generator, lambda: _mlp(15), W),
    Probe("course.early_return_in_loop", early_return_in_loop, _early, "W"),
]
