"""Layer-library code in the styles found in public numpy-from-scratch repositories (read for
patterns only): forward functions returning ``(out, cache)`` tuples that callers unpack and
nest, ``conv_param`` / ``bn_param`` / ``dropout_param`` dicts, naive convolution and pooling
loops over np.pad-ded inputs, im2col by fancy-index arrays or by as_strided in a
@staticmethod, ``'W%d' % i`` parameter dicts walked by a layer count, numpy-ml style layers
(``self.parameters`` / ``self.hyperparameters`` dicts, activation objects, ``retain_derived``
lists), Keras-like ``model.add(layer)``, optimizer classes stepping dicts of parameters inside
the loss (unrolled training), @property parameters, @staticmethod activations,
functools.partial activations, ``*xs`` layers, a dataclass config with a default_factory."""

import functools
from dataclasses import dataclass, field

import numpy as np

from . import Probe, rng


# ---- cs231n-style layers.py: (out, cache) tuples -------------------------------------------

def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    cache = (x, w, b)
    return out, cache


def relu_forward(x):
    out = np.maximum(0, x)
    return out, x


def affine_relu_forward(x, w, b):
    a, fc_cache = affine_forward(x, w, b)
    out, relu_cache = relu_forward(a)
    cache = (fc_cache, relu_cache)
    return out, cache


def softmax_loss(x, y):
    shifted = x - np.max(x, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted), axis=1, keepdims=True)
    log_probs = shifted - np.log(Z)
    probs = np.exp(log_probs)
    N = x.shape[0]
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    dx = probs.copy()
    dx[np.arange(N), y] -= 1
    dx /= N
    return loss, dx


def two_layer_cache_tuples(W1, b1, W2, b2, X, y, reg=0.05):
    h, cache1 = affine_relu_forward(X, W1, b1)
    scores, cache2 = affine_forward(h, W2, b2)
    (x_in, w_in, _), relu_in = cache1
    data_loss, _ = softmax_loss(scores, y)
    reg_loss = 0.5 * reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
    return data_loss + reg_loss + 1e-3 * np.sum(relu_in * (relu_in > 0))


def svm_loss(x, y):
    N = x.shape[0]
    correct = x[np.arange(N), y]
    margins = np.maximum(0, x - correct[:, np.newaxis] + 1.0)
    margins[np.arange(N), y] = 0
    return np.sum(margins) / N


def svm_vectorized(W, X, y):
    return svm_loss(X.dot(W), y) + 0.5 * 0.1 * np.sum(W * W)


def conv_forward_naive(x, w, b, conv_param):
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    H_out = 1 + (H + 2 * pad - HH) // stride
    W_out = 1 + (W + 2 * pad - WW) // stride
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant")
    out = np.zeros((N, F, H_out, W_out))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    hs, ws = i * stride, j * stride
                    out[n, f, i, j] = np.sum(x_pad[n, :, hs:hs + HH, ws:ws + WW] * w[f]) + b[f]
    cache = (x, w, b, conv_param)
    return out, cache


def max_pool_forward_naive(x, pool_param):
    ph, pw, s = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    N, C, H, W = x.shape
    Ho, Wo = 1 + (H - ph) // s, 1 + (W - pw) // s
    out = np.zeros((N, C, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            window = x[:, :, i * s:i * s + ph, j * s:j * s + pw]
            out[:, :, i, j] = np.max(window, axis=(2, 3))
    return out, (x, pool_param)


def conv_pool_naive(w, b, x):
    out, _ = conv_forward_naive(x, w, b, {"stride": 1, "pad": 1})
    pooled, _ = max_pool_forward_naive(out, {"pool_height": 2, "pool_width": 2, "stride": 2})
    return np.sum(np.tanh(pooled) ** 2)


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    if mode == "train":
        sample_mean = x.mean(axis=0)
        sample_var = x.var(axis=0)
        x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
        out = gamma * x_hat + beta
        cache = (x_hat, gamma, sample_var + eps)
        running_mean = momentum * running_mean + (1 - momentum) * sample_mean
        running_var = momentum * running_var + (1 - momentum) * sample_var
    elif mode == "test":
        out = gamma * (x - running_mean) / np.sqrt(running_var + eps) + beta
        cache = None
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out, cache


def batchnorm_param_dicts(W, gamma, beta, X, y):
    bn_param = {"mode": "train"}
    h, cache = batchnorm_forward(X @ W, gamma, beta, bn_param)
    x_hat, _, var = cache
    h2, _ = batchnorm_forward(np.maximum(h, 0), gamma, beta, bn_param)
    return np.mean((h2 - y) ** 2) + 1e-2 * np.sum(bn_param["running_mean"] ** 2) + \
        1e-3 * np.sum(var)


def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    if "seed" in dropout_param:
        np.random.seed(dropout_param["seed"])
    mask = None
    if mode == "train":
        mask = (np.random.rand(*x.shape) < p) / p
        out = x * mask
    else:
        out = x
    return out, (dropout_param, mask)


def dropout_global_seed(W1, W2, X, y):
    h, _ = dropout_forward(np.maximum(X @ W1, 0), {"p": 0.6, "mode": "train", "seed": 123})
    out = h @ W2
    return np.mean((out - y) ** 2)


def get_im2col_indices(x_shape, fh, fw, padding=1, stride=1):
    N, C, H, W = x_shape
    out_h = (H + 2 * padding - fh) // stride + 1
    out_w = (W + 2 * padding - fw) // stride + 1
    i0 = np.repeat(np.arange(fh), fw)
    i0 = np.tile(i0, C)
    i1 = stride * np.repeat(np.arange(out_h), out_w)
    j0 = np.tile(np.arange(fw), fh * C)
    j1 = stride * np.tile(np.arange(out_w), out_h)
    i = i0.reshape(-1, 1) + i1.reshape(1, -1)
    j = j0.reshape(-1, 1) + j1.reshape(1, -1)
    k = np.repeat(np.arange(C), fh * fw).reshape(-1, 1)
    return k.astype(int), i.astype(int), j.astype(int)


def im2col_indices(x, fh, fw, padding=1, stride=1):
    p = padding
    x_padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), mode="constant")
    k, i, j = get_im2col_indices(x.shape, fh, fw, padding, stride)
    cols = x_padded[:, k, i, j]
    C = x.shape[1]
    return cols.transpose(1, 2, 0).reshape(fh * fw * C, -1)


def conv_im2col_fancy(w, b, x):
    N, C, H, W = x.shape
    F, _, fh, fw = w.shape
    cols = im2col_indices(x, fh, fw, padding=1, stride=1)
    res = w.reshape(F, -1) @ cols + b.reshape(-1, 1)
    out = res.reshape(F, H, W, N).transpose(3, 0, 1, 2)
    return np.mean(out ** 2)


class Conv2D:
    def __init__(self, W, b, stride=1, padding=0):
        self.W, self.b = W, b
        self.stride, self.padding = stride, padding

    @staticmethod
    def im2col(x, kh, kw, stride):
        N, C, H, W = x.shape
        oh, ow = (H - kh) // stride + 1, (W - kw) // stride + 1
        sN, sC, sH, sW = x.strides
        return np.lib.stride_tricks.as_strided(
            x, shape=(N, C, oh, ow, kh, kw),
            strides=(sN, sC, sH * stride, sW * stride, sH, sW))

    def forward(self, x):
        if self.padding > 0:
            p = self.padding
            x = np.pad(x, [(0, 0), (0, 0), (p, p), (p, p)])
        cols = self.im2col(x, self.W.shape[2], self.W.shape[3], self.stride)
        out = np.einsum("ncijkl,fckl->nfij", cols, self.W, optimize=True)
        return out + self.b[None, :, None, None]


def strided_conv_class(W, b, x):
    conv = Conv2D(W, b, stride=2, padding=1)
    out = conv.forward(x)
    flat = out.reshape(out.shape[0], -1)
    return np.sum(np.log1p(np.exp(flat)))


# ---- a FullyConnectedNet with 'W%d' keys and a layer count ---------------------------------

class FullyConnectedNet:
    def __init__(self, params, num_layers, reg=0.0):
        self.params = params
        self.num_layers = num_layers
        self.reg = reg

    def loss(self, X, y):
        h = X
        for i in range(self.num_layers - 1):
            W, b = self.params["W%d" % (i + 1)], self.params["b%d" % (i + 1)]
            h, _ = affine_relu_forward(h, W, b)
        W, b = self.params["W%d" % self.num_layers], self.params["b%d" % self.num_layers]
        scores, _ = affine_forward(h, W, b)
        loss, _ = softmax_loss(scores, y)
        for i in range(self.num_layers):
            loss += 0.5 * self.reg * np.sum(self.params["W" + str(i + 1)] ** 2)
        return loss


def fc_net_percent_keys(params, X, y):
    n = len(params) // 2
    return FullyConnectedNet(params, n, reg=0.1).loss(X, y)


# ---- numpy-ml style: parameter dicts, activation objects, retained derived variables -------

class ActivationBase:
    def __call__(self, z):
        return self.fn(z)


class ReLU(ActivationBase):
    def fn(self, z):
        return np.clip(z, 0, np.inf)


class Tanh(ActivationBase):
    def fn(self, z):
        return np.tanh(z)


class FullyConnected:
    def __init__(self, W, b, act_fn=None):
        self.act_fn = act_fn if act_fn is not None else Tanh()
        self.parameters = {"W": W, "b": b}
        self.hyperparameters = {"n_out": W.shape[1], "act_fn": str(type(self.act_fn))}
        self.derived_variables = {"Z": []}

    def forward(self, X, retain_derived=True):
        Y, Z = self._fwd(X)
        if retain_derived:
            self.derived_variables["Z"].append(Z)
        return Y

    def _fwd(self, X):
        W = self.parameters["W"]
        b = self.parameters["b"]
        Z = X @ W + b
        Y = self.act_fn(Z)
        return Y, Z


def numpy_ml_layers(W1, b1, W2, b2, X, y):
    fc1 = FullyConnected(W1, b1, act_fn=ReLU())
    fc2 = FullyConnected(W2, b2)
    out = fc2.forward(fc1.forward(X))
    z_pen = np.sum(fc1.derived_variables["Z"][0] ** 2)
    return np.mean((out - y) ** 2) + 1e-3 * z_pen


# ---- Keras-like model.add(layer) -----------------------------------------------------------

class Dense:
    def __init__(self, W, b, activation="linear"):
        self.W, self.b, self.activation = W, b, activation

    def forward(self, x):
        z = x @ self.W + self.b
        if self.activation == "relu":
            return np.maximum(z, 0)
        if self.activation == "sigmoid":
            return 1 / (1 + np.exp(-z))
        return z


class Sequential:
    def __init__(self):
        self.layers = []

    def add(self, layer):
        self.layers.append(layer)

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


def keras_like_add(W1, b1, W2, b2, X, y):
    model = Sequential()
    model.add(Dense(W1, b1, activation="relu"))
    model.add(Dense(W2, b2, activation="sigmoid"))
    p = model.forward(X)
    return -np.mean(y * np.log(p + 1e-9) + (1 - y) * np.log(1 - p + 1e-9))


# ---- optimizers stepping dicts inside the loss (unrolled training) -------------------------

class Adam:
    def __init__(self, lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8):
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.m, self.v, self.t = {}, {}, 0

    def update(self, params, grads):
        self.t += 1
        for k in params:
            if k not in self.m:
                self.m[k] = np.zeros_like(params[k])
                self.v[k] = np.zeros_like(params[k])
            self.m[k] = self.beta1 * self.m[k] + (1 - self.beta1) * grads[k]
            self.v[k] = self.beta2 * self.v[k] + (1 - self.beta2) * grads[k] ** 2
            m_hat = self.m[k] / (1 - self.beta1 ** self.t)
            v_hat = self.v[k] / (1 - self.beta2 ** self.t)
            params[k] = params[k] - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def linreg_grads(params, X, y):
    err = X @ params["w"] + params["b"] - y
    return {"w": 2 * X.T @ err / len(y), "b": 2 * np.mean(err)}


def adam_unrolled(w, X, y, steps=3):
    params = {"w": w, "b": 0.0}
    opt = Adam(lr=0.05)
    for _ in range(steps):
        grads = linreg_grads(params, X, y)
        opt.update(params, grads)
    return np.mean((X @ params["w"] + params["b"] - y) ** 2)


def sgd_momentum_zip(W, b, X, y, lr=0.1, mu=0.9):
    params = [W, b]
    vel = [np.zeros_like(p) for p in params]
    for it in range(3):
        err = X @ params[0] + params[1] - y
        grads = [X.T @ err / len(X), err.mean(axis=0)]
        for i, (p, g) in enumerate(zip(params, grads)):
            vel[i] = mu * vel[i] - lr * g
            params[i] = p + vel[i]
    return 0.5 * np.mean((X @ params[0] + params[1] - y) ** 2)


# ---- properties, static methods, partial, *xs, dataclass with default_factory --------------

def leaky(x, alpha=0.01):
    return np.where(x > 0, x, alpha * x)


@dataclass
class NetConfig:
    hidden_act: object = functools.partial(leaky, alpha=0.2)
    dims: list = field(default_factory=lambda: [3, 4, 2])
    label_smoothing: float = 0.1


class Block:
    def __init__(self, params, name, cfg):
        self.params, self.name, self.cfg = params, name, cfg

    @property
    def W(self):
        return self.params[self.name + "_W"]

    @property
    def b(self):
        return self.params[self.name + "_b"]

    @staticmethod
    def log_softmax(z):
        m = z.max(axis=-1, keepdims=True)
        return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))

    def __call__(self, x):
        return self.cfg.hidden_act(x @ self.W + self.b)


class Concat:
    def forward(self, *xs):
        return np.concatenate(xs, axis=1)


def property_partial_config(params, X, y):
    cfg = NetConfig()
    h1 = Block(params, "a", cfg)(X)
    h2 = Block(params, "b", cfg)(X)
    h = Concat().forward(h1, h2)
    logits = h @ params["out"]
    C = logits.shape[1]
    target = np.eye(C)[y] * (1 - cfg.label_smoothing) + cfg.label_smoothing / C
    return -np.mean(np.sum(target * Block.log_softmax(logits), axis=1))


def huber_clip_masks(W, X, y, delta=1.0):
    pred = np.clip(X @ W, -3.0, 3.0)
    r = pred - y
    small = np.abs(r) <= delta
    loss = np.where(small, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta))
    z = X @ W
    z[z < 0] *= 0.01
    return loss.mean() + 0.1 * np.mean(z ** 2)


# ---- arguments --------------------------------------------------------------------------------

def _two_layer():
    r = rng(301)
    return (r.standard_normal((4, 6)) * 0.5, r.standard_normal(6) * 0.1,
            r.standard_normal((6, 3)) * 0.5, r.standard_normal(3) * 0.1,
            r.standard_normal((5, 2, 2)), r.integers(0, 3, 5))


def _svm():
    r = rng(302)
    return r.standard_normal((4, 3)), r.standard_normal((6, 4)), r.integers(0, 3, 6)


def _conv(fh=3):
    r = rng(303)
    return (r.standard_normal((2, 2, fh, fh)) * 0.4, r.standard_normal(2) * 0.1,
            r.standard_normal((2, 2, 4, 4)))


def _bn():
    r = rng(304)
    return (r.standard_normal((3, 4)), 1 + 0.1 * r.standard_normal(4),
            0.1 * r.standard_normal(4), r.standard_normal((6, 3)), r.standard_normal((6, 4)))


def _drop():
    r = rng(305)
    return (r.standard_normal((3, 5)), r.standard_normal((5, 2)), r.standard_normal((4, 3)),
            r.standard_normal((4, 2)))


def _strided():
    r = rng(306)
    return (r.standard_normal((3, 2, 3, 3)) * 0.4, r.standard_normal(3) * 0.1,
            r.standard_normal((2, 2, 5, 5)))


def _fcnet():
    r = rng(307)
    dims = [4, 5, 5, 3]
    p = {}
    for i in range(3):
        p["W%d" % (i + 1)] = r.standard_normal((dims[i], dims[i + 1])) * 0.5
        p["b%d" % (i + 1)] = r.standard_normal(dims[i + 1]) * 0.1
    return p, r.standard_normal((6, 4)), r.integers(0, 3, 6)


def _mlp(seed, out=2):
    r = rng(seed)
    return (r.standard_normal((3, 5)) * 0.5, r.standard_normal(5) * 0.1,
            r.standard_normal((5, out)) * 0.5, r.standard_normal(out) * 0.1,
            r.standard_normal((6, 3)), r.random((6, out)))


def _adam():
    r = rng(310)
    X = r.standard_normal((8, 3))
    return r.standard_normal(3), X, X @ np.array([1.0, -2.0, 0.5]) + 0.1


def _sgd():
    r = rng(311)
    return (r.standard_normal((3, 2)) * 0.3, np.zeros(2), r.standard_normal((7, 3)),
            r.standard_normal((7, 2)))


def _prop():
    r = rng(312)
    p = {"a_W": r.standard_normal((3, 4)) * 0.5, "a_b": r.standard_normal(4) * 0.1,
         "b_W": r.standard_normal((3, 2)) * 0.5, "b_b": r.standard_normal(2) * 0.1,
         "out": r.standard_normal((6, 3)) * 0.5}
    return p, r.standard_normal((5, 3)), r.integers(0, 3, 5)


def _huber():
    r = rng(313)
    return r.standard_normal((3, 2)), r.standard_normal((6, 3)) * 2, r.standard_normal((6, 2))


PROGRAMS = [
    Probe("wild_layers.two_layer_cache_tuples", two_layer_cache_tuples, _two_layer,
          ("W1", "b1", "W2", "b2")),
    Probe("wild_layers.svm_vectorized", svm_vectorized, _svm, "W"),
    Probe("wild_layers.conv_pool_naive", conv_pool_naive, _conv, ("w", "b")),
    Probe("wild_layers.batchnorm_param_dicts", batchnorm_param_dicts, _bn,
          ("W", "gamma", "beta")),
    Probe("wild_layers.dropout_global_seed", dropout_global_seed, _drop, ("W1", "W2")),
    Probe("wild_layers.conv_im2col_fancy", conv_im2col_fancy, _conv, ("w", "b", "x")),
    Probe("wild_layers.strided_conv_class", strided_conv_class, _strided, ("W", "b", "x")),
    Probe("wild_layers.fc_net_percent_keys", fc_net_percent_keys, _fcnet, "params"),
    Probe("wild_layers.numpy_ml_layers", numpy_ml_layers, lambda: _mlp(308),
          ("W1", "b1", "W2", "b2")),
    Probe("wild_layers.keras_like_add", keras_like_add, lambda: _mlp(309),
          ("W1", "b1", "W2", "b2")),
    Probe("wild_layers.adam_unrolled", adam_unrolled, _adam, "w"),
    Probe("wild_layers.sgd_momentum_zip", sgd_momentum_zip, _sgd, ("W", "b")),
    Probe("wild_layers.property_partial_config", property_partial_config, _prop, "params"),
    Probe("wild_layers.huber_clip_masks", huber_clip_masks, _huber, "W"),
]
