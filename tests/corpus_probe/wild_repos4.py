"""Fourth set of programs in the styles of public numpy-from-scratch code (read for patterns
only, written here from scratch): layer libraries on ``abc.ABC`` bases with
``@abstractmethod``, typed signatures and ``*args, **kwargs`` handed to ``super().__init__``;
layers linked by ``prev`` / ``next``; modules whose ``parameters()`` is a generator;
step-by-step batch normalisation returning a cache tuple that ends with ``eps``, with a
``bn_param`` dict of running statistics; layer normalisation objects keeping ``self._mean``;
attention with ``K, Q, V = np.split(X @ W_KQV, 3, axis=-1)``, with heads sliced in a
``range(0, D, hd)`` loop and concatenated, with heads split by reshape/transpose and a
sinusoidal position table filled by slice assignment; parameter objects in a dict read by
``weights["Wq"].weight``; a VAE with ``np.split`` into mean and log-variance; skip-gram
with negative sampling over a list of pairs; Adam steps unrolled through a dict of moments;
im2col by loops writing into a preallocated matrix; LSTM gates from one stacked matrix;
a GRU class with ``self.params``; one-hot by ``np.eye(C)[y]``; dilated causal 1-D
convolutions with gated activations; pooling by the reshape trick; inverted dropout in
place; properties with setters; dataclass configs and ``getattr(np, name)``; residual MLPs
over ``enumerate(zip(Ws, bs))``; robust losses with ``np.where`` / ``np.logaddexp``; a
Gaussian-process marginal likelihood with ``slogdet`` / ``solve``; min-char-rnn's dicts
keyed by time step (``hs[-1] = np.copy(hprev)``, ``xs[t][inputs[t]] = 1``); soft k-means;
a Verlet integrator carrying a state tuple."""

from __future__ import annotations

import math
from abc import ABC, ABCMeta, abstractmethod
from dataclasses import dataclass
from typing import Optional

import numpy as np
import scipy.special

from . import Probe, rng


# ---- 1. a layer library on an abstract base ----------------------------------------------

class BaseLayer(ABC):
    def __init__(self, name: str = "", *args, **kwargs):
        self.name = name
        self.input: Optional[np.ndarray] = None
        self.output: Optional[np.ndarray] = None

    @abstractmethod
    def forward(self, inputs: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def backward(self, grad: np.ndarray) -> np.ndarray:
        raise NotImplementedError("not used: srcad differentiates forward")

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.name})"


class Linear(BaseLayer):
    def __init__(self, W: np.ndarray, b: np.ndarray, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.W = W
        self.b = b

    def forward(self, inputs: np.ndarray) -> np.ndarray:
        self.input = inputs
        self.output = inputs @ self.W + self.b
        return self.output


class Activation(BaseLayer):
    funcs = {"relu": lambda x: np.maximum(x, 0.0), "tanh": np.tanh,
             "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x))}

    def __init__(self, kind: str = "relu", **kwargs):
        super().__init__(name=kind, **kwargs)
        self.kind = kind

    def forward(self, inputs):
        self.input = inputs
        self.output = self.funcs[self.kind](inputs)
        return self.output


class Sequential:
    def __init__(self, *layers: BaseLayer):
        self.layers = list(layers)

    def add(self, layer: BaseLayer) -> "Sequential":
        self.layers.append(layer)
        return self

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    __call__ = forward


class MSELoss:
    def __call__(self, pred, target):
        return np.mean(np.square(pred - target))


def abc_sequential(W1, b1, W2, b2, X, y):
    model = Sequential(Linear(W1, b1, name="fc1"), Activation("tanh"))
    model.add(Linear(W2, b2, name="fc2"))
    model.add(Activation("sigmoid"))
    return MSELoss()(model(X), y)


def _abc():
    r = rng(901)
    return (r.standard_normal((3, 5)) * 0.5, np.zeros(5), r.standard_normal((5, 2)) * 0.5,
            np.full(2, 0.1), r.standard_normal((6, 3)), r.random((6, 2)))


# ---- 2. layers linked by prev / next -----------------------------------------------------

class Node(metaclass=ABCMeta):
    def __init__(self, prev=None):
        self.prev = prev
        self.next = None
        if prev is not None:
            prev.next = self

    @abstractmethod
    def __call__(self, x):
        ...


class Affine(Node):
    def __init__(self, W, prev=None):
        super().__init__(prev)
        self.W = W

    def __call__(self, x):
        return x @ self.W


class Softplus(Node):
    def __call__(self, x):
        return np.logaddexp(0.0, x)


def linked_layers(W1, W2, X):
    head = Affine(W1)
    act = Softplus(head)
    Affine(W2, act)
    node, h = head, X
    while node is not None:
        h = node(h)
        node = node.next
    return np.sum(h ** 2) / len(X)


def _linked():
    r = rng(902)
    return r.standard_normal((4, 3)) * 0.5, r.standard_normal((3, 2)) * 0.5, \
        r.standard_normal((5, 4))


# ---- 3. a module whose parameters() is a generator ---------------------------------------

class Module:
    def parameters(self):
        for name in sorted(vars(self)):
            v = getattr(self, name)
            if isinstance(v, np.ndarray):
                yield v
            elif isinstance(v, Module):
                yield from v.parameters()


class Dense(Module):
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return x @ self.W + self.b


class TwoLayer(Module):
    def __init__(self, W1, b1, W2, b2):
        self.l1 = Dense(W1, b1)
        self.l2 = Dense(W2, b2)

    def __call__(self, x):
        return self.l2(np.tanh(self.l1(x)))


def generator_parameters(W1, b1, W2, b2, X, y):
    net = TwoLayer(W1, b1, W2, b2)
    out = net(X)
    l2 = sum(np.sum(p ** 2) for p in net.parameters())
    return np.mean((out - y) ** 2) + 1e-2 * l2


def _gen():
    r = rng(903)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal(4) * 0.1,
            r.standard_normal((4, 2)) * 0.5, r.standard_normal(2) * 0.1,
            r.standard_normal((5, 3)), r.standard_normal((5, 2)))


# ---- 4. batch normalisation, step by step, with a bn_param dict --------------------------

def batchnorm_forward_steps(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    if mode == "train":
        mu = 1. / N * np.sum(x, axis=0)
        xmu = x - mu
        sq = xmu ** 2
        var = 1. / N * np.sum(sq, axis=0)
        sqrtvar = np.sqrt(var + eps)
        ivar = 1. / sqrtvar
        xhat = xmu * ivar
        gammax = gamma * xhat
        out = gammax + beta
        cache = (xhat, gamma, xmu, ivar, sqrtvar, var, eps)
        running_mean = momentum * running_mean + (1 - momentum) * mu
        running_var = momentum * running_var + (1 - momentum) * var
    elif mode == "test":
        out = gamma * (x - running_mean) / np.sqrt(running_var + eps) + beta
        cache = None
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out, cache


def bn_steps_cache(W, gamma, beta, X, y):
    bn_param = {"mode": "train"}
    h, cache = batchnorm_forward_steps(X @ W, gamma, beta, bn_param)
    xhat, _, xmu, ivar, sqrtvar, var, eps = cache
    h = np.maximum(h, 0)
    drift = np.sum(bn_param["running_mean"] ** 2) + np.sum(bn_param["running_var"])
    return np.mean((h - y) ** 2) + 1e-2 * np.sum(xhat[:2] ** 2) + 1e-3 * drift


def _bn():
    r = rng(904)
    return (r.standard_normal((3, 4)), 1 + 0.1 * r.standard_normal(4), 0.1 * r.standard_normal(4),
            r.standard_normal((8, 3)), r.standard_normal((8, 4)))


# ---- 5. a layer-norm object keeping its statistics ---------------------------------------

class LayerNormalization:
    def __init__(self, gamma, beta, epsilon: float = 1e-5):
        self._epsilon = float(epsilon)
        self._gamma = gamma
        self._beta = beta

    def forward(self, x: np.ndarray) -> np.ndarray:
        self._x = x
        self._mean = np.mean(x, axis=-1, keepdims=True)
        self._var = np.var(x, axis=-1, keepdims=True)
        self._y = (x - self._mean) / np.sqrt(self._var + self._epsilon)
        return self._gamma * self._y + self._beta


def layernorm_object(gamma, beta, W, X):
    ln = LayerNormalization(gamma, beta)
    h = ln.forward(X @ W)
    return np.sum(np.tanh(h) ** 2) + 0.1 * np.sum(ln._var)


def _ln():
    r = rng(905)
    return (1 + 0.1 * r.standard_normal(5), 0.1 * r.standard_normal(5),
            r.standard_normal((4, 5)), r.standard_normal((2, 3, 4)))


# ---- 6. attention: K, Q, V from one matrix, split -----------------------------------------

def softmax_last(x):
    x = np.exp(x - x.max(axis=-1, keepdims=True))
    return x / x.sum(axis=-1, keepdims=True)


def self_attention(X, mask, W_KQV, W_OUT):
    K, Q, V = np.split(X @ W_KQV, 3, axis=-1)
    attention = softmax_last(K @ Q.swapaxes(-1, -2) / np.sqrt(X.shape[-1]) + mask)
    return attention @ V @ W_OUT, attention


def kqv_split_attention(W_KQV, W_OUT, X):
    T = X.shape[1]
    M = np.triu(np.full((T, T), -1e9), 1)
    Y, A = self_attention(X, M, W_KQV, W_OUT)
    entropy = -np.sum(A * np.log(A + 1e-9)) / A.shape[0]
    return np.mean(Y ** 2) + 0.01 * entropy


def _kqv():
    r = rng(906)
    return r.standard_normal((4, 12)) * 0.4, r.standard_normal((4, 4)) * 0.4, \
        r.standard_normal((2, 5, 4))


# ---- 7. heads sliced in a range(0, D, hd) loop --------------------------------------------

def attention_2d(Q, K, V):
    dim = Q.shape[-1]
    scores = Q @ K.T / dim ** 0.5
    return scipy.special.softmax(scores, axis=-1) @ V


def multi_head_loop(Q, K, V, num_heads):
    heads = []
    hd = Q.shape[-1] // num_heads
    for i in range(0, Q.shape[-1], hd):
        heads.append(attention_2d(Q[:, i: i + hd], K[:, i: i + hd], V[:, i: i + hd]))
    return np.concatenate(heads, axis=-1)


def heads_loop_concat(Wq, Wk, Wv, X):
    out = multi_head_loop(X @ Wq, X @ Wk, X @ Wv, num_heads=2)
    return np.sum(out * X)


def _heads():
    r = rng(907)
    return (r.standard_normal((4, 4)) * 0.5, r.standard_normal((4, 4)) * 0.5,
            r.standard_normal((4, 4)) * 0.5, r.standard_normal((5, 4)))


# ---- 8. heads by reshape / transpose, a sinusoidal table ----------------------------------

def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, np.newaxis]
    i = np.arange(d_model)[np.newaxis, :]
    angles = pos / np.power(10000, (2 * (i // 2)) / d_model)
    angles[:, 0::2] = np.sin(angles[:, 0::2])
    angles[:, 1::2] = np.cos(angles[:, 1::2])
    return angles


class MultiHeadAttention:
    def __init__(self, W_q, W_k, W_v, W_o, num_heads):
        self.d_model = W_q.shape[0]
        self.num_heads = num_heads
        self.d_k = self.d_model // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = W_q, W_k, W_v, W_o

    def split(self, x, batch_size):
        return x.reshape(batch_size, -1, self.num_heads, self.d_k).transpose(0, 2, 1, 3)

    def forward(self, Q, K, V, mask=None):
        batch_size = Q.shape[0]
        Q = self.split(np.matmul(Q, self.W_q), batch_size)
        K = self.split(np.matmul(K, self.W_k), batch_size)
        V = self.split(np.matmul(V, self.W_v), batch_size)
        scores = np.matmul(Q, K.transpose(0, 1, 3, 2)) / np.sqrt(self.d_k)
        if mask is not None:
            scores = scores + (mask * -1e9)
        weights = softmax_last(scores)
        out = np.matmul(weights, V).transpose(0, 2, 1, 3).reshape(batch_size, -1,
                                                                   self.d_model)
        return np.matmul(out, self.W_o)


def split_heads_posenc(W_q, W_k, W_v, W_o, emb):
    x = emb + positional_encoding(emb.shape[1], emb.shape[2])
    mha = MultiHeadAttention(W_q, W_k, W_v, W_o, num_heads=2)
    T = x.shape[1]
    look_ahead = 1 - np.tril(np.ones((T, T)))
    y = mha.forward(x, x, x, mask=look_ahead)
    return np.mean((x + y) ** 2)


def _mha():
    r = rng(908)
    return tuple(r.standard_normal((4, 4)) * 0.4 for _ in range(4)) + (
        r.standard_normal((2, 3, 4)),)


# ---- 9. parameter objects in a dict: weights["Wq"].weight ---------------------------------

class Parameter:
    def __init__(self, weight, name=None):
        self.weight = weight
        self.name = name
        self.grad = np.zeros_like(weight)


def projected(x, weights, key):
    W, b = weights["W" + key].weight, weights["b" + key].weight
    return x @ W + b


def param_objects_dict(params, X):
    weights = {k: Parameter(v, name=k) for k, v in params.items()}
    q = projected(X, weights, "q")
    k = projected(X, weights, "k")
    a = softmax_last(q @ k.T)
    return np.sum(a @ X) + np.sum(weights["Wq"].weight ** 2)


def _pod():
    r = rng(909)
    return ({"Wq": r.standard_normal((3, 3)) * 0.5, "bq": np.zeros(3),
             "Wk": r.standard_normal((3, 3)) * 0.5, "bk": 0.1 * np.ones(3)},
            r.standard_normal((4, 3)))


# ---- 10. a VAE in numpy ---------------------------------------------------------------------

def vae_loss(We, be, Wd, bd, X, eps):
    h = np.tanh(X @ We + be)
    mu, logvar = np.split(h, 2, axis=1)
    std = np.exp(0.5 * logvar)
    z = mu + eps * std
    logits = z @ Wd + bd
    recon = 1.0 / (1.0 + np.exp(-logits))
    recon = np.clip(recon, 1e-7, 1 - 1e-7)
    bce = -np.sum(X * np.log(recon) + (1 - X) * np.log(1 - recon))
    kl = -0.5 * np.sum(1 + logvar - mu ** 2 - np.exp(logvar))
    return (bce + kl) / X.shape[0]


def _vae():
    r = rng(910)
    return (r.standard_normal((6, 4)) * 0.4, np.zeros(4), r.standard_normal((2, 6)) * 0.4,
            np.zeros(6), r.random((5, 6)), r.standard_normal((5, 2)))


# ---- 11. skip-gram with negative sampling over a list of pairs ---------------------------

def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def sgns_loss(W_in, W_out, pairs, negatives):
    loss = 0.0
    for (center, context), neg in zip(pairs, negatives):
        v = W_in[center]
        u = W_out[context]
        loss -= np.log(sigmoid(np.dot(u, v)))
        loss -= np.sum(np.log(sigmoid(-W_out[neg] @ v)))
    return loss / len(pairs)


def _sgns():
    r = rng(911)
    return (r.standard_normal((7, 3)) * 0.3, r.standard_normal((7, 3)) * 0.3,
            [(0, 1), (2, 3), (4, 1), (0, 6)], [np.array([2, 5]), np.array([0, 4]),
                                             np.array([3, 3]), np.array([1, 5])])


# ---- 12. Adam steps unrolled through a dict of moments -------------------------------------

def adam_unrolled(params, A, b, lr=0.05, beta1=0.9, beta2=0.999, eps=1e-8, steps=3):
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    p = dict(params)
    for t in range(1, steps + 1):
        r = A @ p["w"] + p["c"] - b
        grads = {"w": A.T @ r, "c": np.sum(r)}
        for k in p:
            m[k] = beta1 * m[k] + (1 - beta1) * grads[k]
            v[k] = beta2 * v[k] + (1 - beta2) * grads[k] ** 2
            m_hat = m[k] / (1 - beta1 ** t)
            v_hat = v[k] / (1 - beta2 ** t)
            p[k] = p[k] - lr * m_hat / (np.sqrt(v_hat) + eps)
    r = A @ p["w"] + p["c"] - b
    return 0.5 * np.sum(r ** 2)


def _adam():
    r = rng(912)
    return ({"w": r.standard_normal(3), "c": np.array(0.3)}, r.standard_normal((5, 3)),
            r.standard_normal(5))


# ---- 13. im2col by loops into a preallocated matrix ---------------------------------------

def im2col_loops(x, kh, kw, stride=1, pad=1):
    N, C, H, W = x.shape
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant")
    out_h = (H + 2 * pad - kh) // stride + 1
    out_w = (W + 2 * pad - kw) // stride + 1
    cols = np.zeros((N, C * kh * kw, out_h * out_w))
    idx = 0
    for i in range(out_h):
        for j in range(out_w):
            hs, ws = i * stride, j * stride
            cols[:, :, idx] = x_pad[:, :, hs:hs + kh, ws:ws + kw].reshape(N, -1)
            idx += 1
    return cols, out_h, out_w


def conv_im2col_loops(W, b, x):
    F, C, kh, kw = W.shape
    cols, out_h, out_w = im2col_loops(x, kh, kw)
    out = np.einsum("fk,nkp->nfp", W.reshape(F, -1), cols) + b.reshape(1, F, 1)
    out = out.reshape(x.shape[0], F, out_h, out_w)
    return np.sum(np.maximum(out, 0) ** 2)


def _conv():
    r = rng(913)
    return r.standard_normal((2, 2, 3, 3)) * 0.4, r.standard_normal(2) * 0.1, \
        r.standard_normal((2, 2, 4, 4))


# ---- 14. LSTM gates from one stacked matrix ----------------------------------------------

def lstm_stacked(Wx, Wh, b, x, h0):
    N, T, D = x.shape
    H = h0.shape[1]
    h, c = h0, np.zeros_like(h0)
    hs = []
    for t in range(T):
        a = x[:, t, :] @ Wx + h @ Wh + b
        i = scipy.special.expit(a[:, :H])
        f = scipy.special.expit(a[:, H:2 * H])
        o = scipy.special.expit(a[:, 2 * H:3 * H])
        g = np.tanh(a[:, 3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
        hs.append(h)
    out = np.stack(hs, axis=1)
    return np.sum(out[:, -1] ** 2) + 0.1 * np.sum(out)


def _lstm():
    r = rng(914)
    return (r.standard_normal((3, 8)) * 0.4, r.standard_normal((2, 8)) * 0.4,
            r.standard_normal(8) * 0.1, r.standard_normal((2, 4, 3)), r.standard_normal((2, 2)))


# ---- 15. a GRU class with self.params ----------------------------------------------------

class GRU:
    def __init__(self, params):
        self.params = params
        self.cache = []

    def step(self, x, h):
        p = self.params
        z = sigmoid(x @ p["Wz"] + h @ p["Uz"])
        r = sigmoid(x @ p["Wr"] + h @ p["Ur"])
        n = np.tanh(x @ p["Wn"] + (r * h) @ p["Un"])
        h_new = (1 - z) * n + z * h
        self.cache.append((z, r, n))
        return h_new

    def forward(self, xs, h):
        for t in range(xs.shape[0]):
            h = self.step(xs[t], h)
        return h


def gru_params_dict(params, xs, h0, y):
    gru = GRU(params)
    h = gru.forward(xs, h0)
    return np.mean((h - y) ** 2) + 1e-2 * len(gru.cache)


def _gru():
    r = rng(915)
    p = {k: r.standard_normal((3, 3) if k[0] == "W" else (3, 3)) * 0.4
         for k in ("Wz", "Uz", "Wr", "Ur", "Wn", "Un")}
    return p, r.standard_normal((4, 2, 3)), np.zeros((2, 3)), r.standard_normal((2, 3))


# ---- 16. softmax regression with one-hot rows of np.eye --------------------------------------

def softmax_regression(W, b, X, y, reg=1e-2):
    C = W.shape[1]
    Y = np.eye(C)[y]
    scores = X.dot(W) + b
    scores -= np.max(scores, axis=1, keepdims=True)
    probs = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
    data_loss = np.mean(-np.sum(Y * np.log(probs + 1e-12), axis=1))
    return data_loss + 0.5 * reg * np.sum(W * W)


def _softreg():
    r = rng(916)
    return (r.standard_normal((4, 3)) * 0.3, np.zeros(3), r.standard_normal((6, 4)),
            np.array([0, 2, 1, 1, 0, 2]))


# ---- 17. dilated causal 1-D convolutions with gated activations ---------------------------

def causal_conv1d(x, w, dilation):
    K = w.shape[0]
    pad = (K - 1) * dilation
    xp = np.pad(x, ((0, 0), (pad, 0)))
    T = x.shape[1]
    out = np.zeros_like(x)
    for k in range(K):
        out = out + w[k] * xp[:, k * dilation: k * dilation + T]
    return out


def wavenet_block(wf, wg, x, dilations=(1, 2, 4)):
    skips = []
    for i, d in enumerate(dilations):
        filt = np.tanh(causal_conv1d(x, wf[i], d))
        gate = sigmoid(causal_conv1d(x, wg[i], d))
        z = filt * gate
        skips.append(z)
        x = x + z
    return np.sum(sum(skips) ** 2)


def _wave():
    r = rng(917)
    return r.standard_normal((3, 2)) * 0.5, r.standard_normal((3, 2)) * 0.5, \
        r.standard_normal((2, 9))


# ---- 18. pooling by the reshape trick ---------------------------------------------------------

def pooling_reshape(W, x):
    N, C, H, Wd = x.shape
    h = np.tanh(np.einsum("oc,nchw->nohw", W, x))
    mx = h.reshape(N, -1, H // 2, 2, Wd // 2, 2).max(axis=(3, 5))
    av = h.reshape(N, -1, H // 2, 2, Wd // 2, 2).mean(axis=(3, 5))
    gap = mx.mean(axis=(2, 3))
    return np.sum(gap ** 2) + np.sum(av * mx)


def _pool():
    r = rng(918)
    return r.standard_normal((3, 2)), r.standard_normal((2, 2, 4, 4))


# ---- 19. inverted dropout, in place, with the mask given ----------------------------------

class Dropout:
    def __init__(self, p=0.5):
        self.p = p
        self.mask = None

    def forward(self, x, mask, train=True):
        if not train:
            return x
        self.mask = mask
        x *= mask / self.p
        return x


def inverted_dropout_inplace(W1, W2, X, mask):
    h = np.maximum(X @ W1, 0)
    h = Dropout(p=0.8).forward(h, mask)
    return np.sum((h @ W2) ** 2)


def _drop():
    r = rng(919)
    return (r.standard_normal((3, 5)), r.standard_normal((5, 2)), r.standard_normal((4, 3)),
            (r.random((4, 5)) < 0.8).astype(float))


# ---- 20. a property with a setter ---------------------------------------------------------

class Scaled:
    def __init__(self, w, scale=1.0):
        self._w = w
        self.scale = scale

    @property
    def w(self):
        return self._w * self.scale

    @w.setter
    def w(self, value):
        self._w = value / self.scale

    def __call__(self, x):
        return np.tanh(x @ self.w)


def property_setter(w, X):
    layer = Scaled(w, scale=2.0)
    first = layer(X)
    layer.w = layer.w * 0.5
    return np.sum(first ** 2) + np.sum(layer(X))


def _prop():
    r = rng(920)
    return r.standard_normal((3, 2)), r.standard_normal((4, 3))


# ---- 21. a dataclass config, getattr(np, name) -------------------------------------------

@dataclass
class Config:
    hidden: int = 4
    activation: str = "tanh"
    weight_decay: float = 1e-3
    use_bias: bool = True


def dataclass_config(W1, b1, W2, X, y, cfg=Config()):
    act = getattr(np, cfg.activation)
    z = X @ W1
    if cfg.use_bias:
        z = z + b1
    out = act(z) @ W2
    assert W1.shape[1] == cfg.hidden, "hidden size mismatch"
    return np.mean((out - y) ** 2) + cfg.weight_decay * (np.sum(W1 ** 2) + np.sum(W2 ** 2))


def _cfg():
    r = rng(921)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal(4) * 0.1,
            r.standard_normal((4, 1)) * 0.5, r.standard_normal((6, 3)), r.standard_normal((6, 1)))


# ---- 22. a residual MLP over enumerate(zip(Ws, bs)) ---------------------------------------

def residual_mlp(Ws, bs, X):
    h = X
    for i, (W, b) in enumerate(zip(Ws, bs)):
        z = h @ W + b
        if i < len(Ws) - 1:
            z = np.maximum(z, 0.01 * z)
        if z.shape == h.shape:
            h = h + z
        else:
            h = z
    return np.sum(h ** 2) / X.shape[0]


def _res():
    r = rng(922)
    return ([r.standard_normal((3, 3)) * 0.5, r.standard_normal((3, 3)) * 0.5,
             r.standard_normal((3, 2)) * 0.5], [np.zeros(3), np.full(3, 0.1), np.zeros(2)],
            r.standard_normal((5, 3)))


# ---- 23. robust losses ---------------------------------------------------------------------

def robust_losses(w, X, y, delta=1.0, q=0.7):
    f = X @ w
    r = y - f
    huber = np.where(np.abs(r) < delta, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta))
    quantile = np.maximum(q * r, (q - 1) * r)
    labels = np.sign(y)
    logistic = np.logaddexp(0, -labels * f)
    return np.mean(huber) + np.mean(quantile) + np.mean(logistic)


def _robust():
    r = rng(923)
    return r.standard_normal(3), r.standard_normal((7, 3)), 2.0 * r.standard_normal(7)


# ---- 24. a Gaussian-process marginal likelihood ------------------------------------------

def rbf_kernel(X1, X2, lengthscale, variance):
    sqdist = np.sum(X1 ** 2, 1).reshape(-1, 1) + np.sum(X2 ** 2, 1) - 2 * np.dot(X1, X2.T)
    return variance * np.exp(-0.5 / lengthscale ** 2 * sqdist)


def gp_nll(theta, X, y):
    lengthscale, variance, noise = np.exp(theta)
    K = rbf_kernel(X, X, lengthscale, variance) + noise * np.eye(len(X))
    sign, logdet = np.linalg.slogdet(K)
    alpha = np.linalg.solve(K, y)
    return 0.5 * y @ alpha + 0.5 * logdet + 0.5 * len(X) * math.log(2 * math.pi)


def _gp():
    r = rng(924)
    return np.array([0.1, -0.2, -1.0]), r.standard_normal((6, 2)), r.standard_normal(6)


# ---- 25. min-char-rnn: dicts keyed by time step --------------------------------------------

def char_rnn_loss(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    vocab_size = Wxh.shape[1]
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    for t in range(len(inputs)):
        xs[t] = np.zeros((vocab_size, 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
        ys[t] = np.dot(Why, hs[t]) + by
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    return loss


def _charrnn():
    r = rng(925)
    V, H = 5, 4
    return (r.standard_normal((H, V)) * 0.3, r.standard_normal((H, H)) * 0.3,
            r.standard_normal((V, H)) * 0.3, np.zeros((H, 1)), np.zeros((V, 1)),
            [0, 3, 1, 4], [3, 1, 4, 2], r.standard_normal((H, 1)) * 0.1)


# ---- 26. soft k-means --------------------------------------------------------------------------

def soft_kmeans(C, X, beta=2.0):
    d = np.linalg.norm(X[:, None, :] - C[None, :, :], axis=2)
    R = scipy.special.softmax(-beta * d, axis=1)
    return np.sum(R * d ** 2) / len(X)


def _skm():
    r = rng(926)
    return r.standard_normal((3, 2)), r.standard_normal((8, 2))


# ---- 27. a Verlet integrator carrying a state tuple ------------------------------------------

def spring_forces(x, k):
    stretch = np.diff(x) - 1.0
    f = np.zeros_like(x)
    f[:-1] += k * stretch
    f[1:] -= k * stretch
    return f


def verlet_state(k, x0, v0, dt=0.05, steps=6):
    state = (x0, v0)
    energy = []
    for _ in range(steps):
        x, v = state
        a = spring_forces(x, k)
        x_new = x + v * dt + 0.5 * a * dt ** 2
        a_new = spring_forces(x_new, k)
        v_new = v + 0.5 * (a + a_new) * dt
        state = (x_new, v_new)
        energy.append(0.5 * np.sum(v_new ** 2))
    x, v = state
    return np.sum(x ** 2) + sum(energy)


def _verlet():
    r = rng(927)
    return r.random(3) + 0.5, np.arange(4.0) + 0.1 * r.standard_normal(4), \
        0.1 * r.standard_normal(4)


# ---- 28. numpy-ml style: hyperparameters property, derived variables ---------------------

class ReLU:
    def __str__(self):
        return "ReLU"

    def fn(self, z):
        return np.clip(z, 0, np.inf)


class FullyConnected:
    def __init__(self, n_out, act_fn=None):
        self.n_out = n_out
        self.act_fn = ReLU() if act_fn is None else act_fn
        self.parameters = {"W": None, "b": None}
        self.derived_variables = {"Z": []}

    def set_params(self, W, b):
        self.parameters["W"] = W
        self.parameters["b"] = b

    @property
    def hyperparameters(self):
        return {"layer": "FullyConnected", "n_out": self.n_out, "act_fn": str(self.act_fn)}

    def forward(self, X):
        W, b = self.parameters["W"], self.parameters["b"]
        Z = X @ W + b
        self.derived_variables["Z"].append(Z)
        return self.act_fn.fn(Z)


def numpy_ml_layer(W, b, X):
    fc = FullyConnected(n_out=W.shape[1])
    fc.set_params(W, b)
    Y = fc.forward(X)
    assert fc.hyperparameters["act_fn"] == "ReLU"
    return np.sum(Y ** 2) + 0.1 * np.sum(fc.derived_variables["Z"][0])


def _nml():
    r = rng(928)
    return r.standard_normal((3, 4)), r.standard_normal(4) * 0.1, r.standard_normal((5, 3))


# ---- 29. an SVM hinge loss with an in-place index write -------------------------------------

def svm_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    correct = scores[np.arange(num_train), y]
    margins = np.maximum(0, scores - correct[:, np.newaxis] + 1.0)
    margins[np.arange(num_train), y] = 0
    loss = np.sum(margins) / num_train
    loss += reg * np.sum(W * W)
    return loss


def _svm():
    r = rng(929)
    return r.standard_normal((4, 3)) * 0.1, r.standard_normal((6, 4)), \
        np.array([0, 1, 2, 0, 1, 2]), 0.05


# ---- 30. triplet loss over unzipped triples ---------------------------------------------------

def triplet_loss(W, triples, margin=0.5):
    anchors, positives, negatives = zip(*triples)
    a = np.stack(anchors) @ W
    p = np.stack(positives) @ W
    n = np.stack(negatives) @ W
    d_ap = np.linalg.norm(a - p, axis=1)
    d_an = np.linalg.norm(a - n, axis=1)
    return np.mean(np.maximum(d_ap - d_an + margin, 0.0))


def _trip():
    r = rng(930)
    return r.standard_normal((3, 2)), [tuple(r.standard_normal(3) for _ in range(3))
                                       for _ in range(4)]


# ---- 31. a product of matrices by functools.reduce ----------------------------------------

def reduce_chain(W1, W2, W3, x):
    import functools
    M = functools.reduce(lambda A, B: A @ B, [W1, W2, W3])
    return np.sum(np.tanh(x @ M) ** 2) + np.linalg.norm(M, "fro")


def _red():
    r = rng(931)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal((4, 4)) * 0.5,
            r.standard_normal((4, 2)) * 0.5, r.standard_normal((5, 3)))


# ---- 32. a mixture density network's loss ------------------------------------------------

def mdn_loss(W, X, y, K=3):
    out = X @ W
    logits, mu, log_sigma = out[:, :K], out[:, K:2 * K], out[:, 2 * K:]
    log_pi = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)
    log_norm = -0.5 * ((y[:, None] - mu) / np.exp(log_sigma)) ** 2 - log_sigma \
        - 0.5 * np.log(2 * np.pi)
    return -np.mean(scipy.special.logsumexp(log_pi + log_norm, axis=1))


def _mdn():
    r = rng(932)
    return r.standard_normal((2, 9)) * 0.3, r.standard_normal((6, 2)), r.standard_normal(6)


# ---- 33. a Sequential indexed and iterated through __getitem__ / __iter__ ----------------

class Stack:
    def __init__(self, layers):
        self.layers = layers

    def __getitem__(self, i):
        return self.layers[i]

    def __len__(self):
        return len(self.layers)

    def __iter__(self):
        return iter(self.layers)


class Tanh:
    def __call__(self, x):
        return np.tanh(x)


class Lin:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return x @ self.W


def getitem_iter_stack(W1, W2, X):
    model = Stack([Lin(W1), Tanh(), Lin(W2)])
    first = model[0](X)
    h = X
    for layer in model:
        h = layer(h)
    return np.sum(h ** 2) + 0.1 * np.sum(first) + len(model)


def _stack():
    r = rng(933)
    return r.standard_normal((3, 4)) * 0.5, r.standard_normal((4, 2)) * 0.5, \
        r.standard_normal((5, 3))


# ---- 34. keyword-only parameters --------------------------------------------------------------

def dense_kw(x, *, W, b, activation="relu"):
    z = x @ W + b
    return np.maximum(z, 0) if activation == "relu" else np.tanh(z)


def keyword_only(W1, b1, W2, b2, X):
    h = dense_kw(X, W=W1, b=b1)
    out = dense_kw(h, W=W2, b=b2, activation="tanh")
    return np.sum(out ** 2)


def _kwo():
    r = rng(934)
    return (r.standard_normal((3, 4)), r.standard_normal(4) * 0.1, r.standard_normal((4, 2)),
            np.zeros(2), r.standard_normal((5, 3)))


# ---- 35. a typing.NamedTuple of parameters, _replace ---------------------------------------

from typing import NamedTuple  # noqa: E402


class Params(NamedTuple):
    W: np.ndarray
    b: np.ndarray


def named_params_replace(p, X, y, lr=0.1):
    pred = X @ p.W + p.b
    g = X.T @ (pred - y) / len(X)
    p2 = p._replace(W=p.W - lr * g)
    p3 = Params(W=p2.W, b=p2.b - lr * np.mean(pred - y))
    return np.mean((X @ p3.W + p3.b - y) ** 2)


def _npr():
    r = rng(935)
    return Params(r.standard_normal(3), np.array(0.2)), r.standard_normal((6, 3)), \
        r.standard_normal(6)


# ---- 36. statistics as methods: std with ddof, clip, trace --------------------------------

def method_statistics(W, X):
    Z = X @ W
    Zs = (Z - Z.mean(axis=0)) / Z.std(axis=0, ddof=1)
    cov = Zs.T @ Zs / (len(Zs) - 1)
    return np.trace(cov @ cov) + np.sum(W.clip(-0.5, 0.5) ** 2) + Z.var()


def _mstat():
    r = rng(936)
    return r.standard_normal((3, 2)), r.standard_normal((7, 3))


# ---- 37. an explicit Euler over np.linspace times, the field reads t -------------------------

def field(t, y, A):
    return np.tanh(A @ y) * np.cos(t)


def euler_time(A, y0, n=5):
    ts = np.linspace(0.0, 1.0, n)
    y = y0
    traj = [y]
    for t0, t1 in zip(ts[:-1], ts[1:]):
        y = y + (t1 - t0) * field(t0, y, A)
        traj.append(y)
    return np.sum(np.array(traj)[-1] ** 2) + np.mean(np.array(traj))


def _euler():
    r = rng(937)
    return r.standard_normal((3, 3)) * 0.5, r.standard_normal(3)


# ---- 38. convolution by sliding_window_view ---------------------------------------------

def conv_sliding_window(W, b, x):
    kh, kw = W.shape[2:]
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    out = np.einsum("nchwij,fcij->nfhw", windows, W) + b[None, :, None, None]
    return np.mean(np.tanh(out) ** 2)


def _swv():
    r = rng(938)
    return r.standard_normal((2, 2, 2, 2)) * 0.5, r.standard_normal(2) * 0.1, \
        r.standard_normal((2, 2, 4, 5))


# ---- 39. cross-entropy by take_along_axis, log_softmax ----------------------------------

def gather_cross_entropy(W, X, y):
    logits = np.einsum("...ij,jk->...ik", X, W)
    logp = scipy.special.log_softmax(logits, axis=-1)
    picked = np.take_along_axis(logp, np.expand_dims(y, -1), axis=-1)
    return -np.mean(np.squeeze(picked, axis=-1))


def _gce():
    r = rng(939)
    return r.standard_normal((3, 4)) * 0.5, r.standard_normal((2, 5, 3)), \
        r.integers(0, 4, size=(2, 5))


# ---- 40. a config object filled by setattr over **kwargs ---------------------------------

class HParams:
    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)


def setattr_kwargs(W, X, y):
    hp = HParams(lr=0.1, l2=1e-2, act="tanh")
    h = np.tanh(X @ W) if hp.act == "tanh" else np.maximum(X @ W, 0)
    return np.mean((h - y) ** 2) + hp.l2 * np.sum(W ** 2)


def _sak():
    r = rng(940)
    return r.standard_normal((3, 2)), r.standard_normal((5, 3)), r.standard_normal((5, 2))


# ---- 41. a layer with a params list; zip(parameters(), names) ----------------------------

class ParamLayer:
    def __init__(self, W, b):
        self.params = [W, b]
        self.names = ["W", "b"]

    def parameters(self):
        return self.params

    def forward(self, x):
        W, b = self.params
        return x @ W + b


def params_list_zip(W, b, X):
    layer = ParamLayer(W, b)
    out = np.tanh(layer.forward(X))
    penalty = {n: np.sum(p ** 2) for p, n in zip(layer.parameters(), layer.names)}
    return np.sum(out ** 2) + 0.01 * penalty["W"] + 0.1 * penalty["b"]


def _plz():
    r = rng(941)
    return r.standard_normal((3, 4)), r.standard_normal(4), r.standard_normal((5, 3))


# ---- 42. masked attention by np.where(mask == 0, -1e9, scores) ----------------------------

def where_masked_attention(Wq, Wk, X):
    T = X.shape[0]
    mask = np.tril(np.ones((T, T)))
    scores = (X @ Wq) @ (X @ Wk).T / np.sqrt(Wq.shape[1])
    scores = np.where(mask == 0, -1e9, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.sum((weights @ X) ** 2)


def _wma():
    r = rng(942)
    return r.standard_normal((3, 3)) * 0.5, r.standard_normal((3, 3)) * 0.5, \
        r.standard_normal((4, 3))


# ---- 43. shapes with star-unpacking, reshape(-1, *shape) -----------------------------------

def star_shapes(W, x):
    B, T, *rest = x.shape
    flat = x.reshape(-1, *rest)
    h = np.tanh(flat @ W)
    return np.sum(h.reshape(B, T, *h.shape[1:])[:, -1] ** 2)


def _ss():
    r = rng(943)
    return r.standard_normal((3, 2)), r.standard_normal((2, 4, 3))


# ---- 44. a course TwoLayerNet whose loss() also returns hand-written grads ---------------

class TwoLayerNet:
    def __init__(self, params, reg=0.0):
        self.params = params
        self.reg = reg

    def loss(self, X, y=None):
        W1, b1 = self.params["W1"], self.params["b1"]
        W2, b2 = self.params["W2"], self.params["b2"]
        N, D = X.shape
        h = np.maximum(0, X.dot(W1) + b1)
        scores = h.dot(W2) + b2
        if y is None:
            return scores
        shifted = scores - np.max(scores, axis=1, keepdims=True)
        probs = np.exp(shifted)
        probs /= np.sum(probs, axis=1, keepdims=True)
        loss = -np.sum(np.log(probs[np.arange(N), y])) / N
        loss += self.reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
        grads = {}
        dscores = probs.copy()
        dscores[np.arange(N), y] -= 1
        dscores /= N
        grads["W2"] = h.T.dot(dscores) + 2 * self.reg * W2
        grads["b2"] = np.sum(dscores, axis=0)
        return loss, grads


def course_loss_and_grads(params, X, y):
    net = TwoLayerNet(params, reg=0.05)
    loss, grads = net.loss(X, y)
    scores = net.loss(X)
    return loss + 1e-3 * np.sum(scores ** 2) + 1e-3 * np.sum(grads["b2"] ** 2)


def _two():
    r = rng(944)
    return ({"W1": r.standard_normal((4, 5)) * 0.5, "b1": np.zeros(5),
             "W2": r.standard_normal((5, 3)) * 0.5, "b2": np.zeros(3)},
            r.standard_normal((6, 4)), np.array([0, 1, 2, 2, 1, 0]))


# ---- 45. an estimator whose fit loop updates self.w with -= ----------------------------------

class LinearRegressionGD:
    def __init__(self, w0, lr=0.05, n_iter=4):
        self.w = w0.copy()
        self.lr = lr
        self.n_iter = n_iter
        self.history = []

    def fit(self, X, y):
        for _ in range(self.n_iter):
            err = X @ self.w - y
            self.w -= self.lr * X.T @ err / len(y)
            self.history.append(float(np.mean(err ** 2)))
        return self

    def predict(self, X):
        return X @ self.w


def estimator_fit_self(w0, X, y):
    model = LinearRegressionGD(w0).fit(X, y)
    return np.mean((model.predict(X) - y) ** 2) + 0.0 * len(model.history)


def _lrgd():
    r = rng(945)
    return r.standard_normal(3), r.standard_normal((8, 3)), r.standard_normal(8)


# ---- 46. an RBF network with scipy's cdist ---------------------------------------------------

def rbf_network(C, w, X, gamma=0.5):
    import scipy.spatial.distance
    D = scipy.spatial.distance.cdist(X, C, "sqeuclidean")
    Phi = np.exp(-gamma * D)
    return np.mean((Phi @ w - np.sin(X[:, 0])) ** 2)


def _rbf():
    r = rng(946)
    return r.standard_normal((4, 2)), r.standard_normal(4), r.standard_normal((7, 2))


# ---- 47. a PCA reconstruction loss through eigh -------------------------------------------

def pca_eigh(X, k=2):
    Xc = X - X.mean(axis=0)
    C = np.cov(Xc, rowvar=False)
    vals, vecs = np.linalg.eigh(C)
    top = vecs[:, ::-1][:, :k]
    recon = Xc @ top @ top.T
    return np.sum((Xc - recon) ** 2) + np.sum(vals)


def _pca():
    r = rng(947)
    return (r.standard_normal((8, 3)) * np.array([3.0, 1.0, 0.3]),)


# ---- 48. float32 parameters with float64 data ----------------------------------------------

def mixed_precision(W, X):
    h = np.tanh(X.astype(np.float32) @ W)
    logits = h.astype(np.float64) @ np.ones((W.shape[1], 2))
    return np.sum(np.logaddexp(0, logits)) / len(X)


def _mixed():
    r = rng(948)
    return r.standard_normal((3, 4)).astype(np.float32), r.standard_normal((5, 3))


# ---- 49. a bidirectional recurrence over reversed(range(T)) ------------------------------

def birnn(Wf, Wb, U, x):
    T = x.shape[0]
    hf = np.zeros(U.shape[0])
    hb = np.zeros(U.shape[0])
    fw, bw = [], [None] * T
    for t in range(T):
        hf = np.tanh(Wf @ x[t] + U @ hf)
        fw.append(hf)
    for t in reversed(range(T)):
        hb = np.tanh(Wb @ x[t] + U @ hb)
        bw[t] = hb
    out = np.concatenate([np.stack(fw), np.stack(bw)], axis=1)
    return np.sum(out ** 2)


def _birnn():
    r = rng(949)
    return (r.standard_normal((3, 2)) * 0.5, r.standard_normal((3, 2)) * 0.5,
            r.standard_normal((3, 3)) * 0.4, r.standard_normal((4, 2)))


# ---- 50. image ops: reflect padding, np.roll shifts ----------------------------------------

def reflect_roll(k, img):
    p = np.pad(img, 1, mode="reflect")
    blur = (k[0] * p[:-2, 1:-1] + k[1] * p[1:-1, 1:-1] + k[2] * p[2:, 1:-1])
    shifted = np.roll(blur, shift=1, axis=1) - blur
    return np.sum(shifted ** 2) + np.sum(np.abs(blur) ** 1.5)


def _reflect():
    r = rng(950)
    return r.random(3), r.standard_normal((4, 5))


# ---- 51. an activation registry of classes with a static derivative flag -------------------

class Sigmoid:
    @staticmethod
    def f(x, derivative=False):
        s = 1 / (1 + np.exp(-x))
        return s * (1 - s) if derivative else s


class Identity:
    @staticmethod
    def f(x, derivative=False):
        return np.ones_like(x) if derivative else x


ACTIVATIONS = {"sigmoid": Sigmoid, "identity": Identity}


def static_derivative_flag(W1, W2, X, y, hidden="sigmoid", output="identity"):
    a1 = ACTIVATIONS[hidden].f(X @ W1)
    out = ACTIVATIONS[output].f(a1 @ W2)
    slope = ACTIVATIONS[hidden].f(X @ W1, derivative=True)
    return np.mean((out - y) ** 2) + 0.1 * np.mean(slope)


def _sdf():
    r = rng(951)
    return (r.standard_normal((3, 4)), r.standard_normal((4, 1)), r.standard_normal((6, 3)),
            r.standard_normal((6, 1)))


# ---- 52. an encoder-decoder whose layers live in a dict of lists -------------------------------

def enc_dec(params, X):
    h = X
    for W, b in zip(params["enc"]["W"], params["enc"]["b"]):
        h = np.tanh(h @ W + b)
    code = h
    for W, b in zip(params["dec"]["W"], params["dec"]["b"]):
        h = h @ W + b
    return np.mean((h - X) ** 2) + 1e-2 * np.mean(np.abs(code))


def _encdec():
    r = rng(952)
    return ({"enc": {"W": [r.standard_normal((4, 3)) * 0.5, r.standard_normal((3, 2)) * 0.5],
                     "b": [np.zeros(3), np.zeros(2)]},
             "dec": {"W": [r.standard_normal((2, 4)) * 0.5], "b": [np.zeros(4)]}},
            r.standard_normal((5, 4)))


# ---- 53. a recurrent cell object reused, its state a tuple attribute --------------------------

class ElmanCell:
    def __init__(self, Wx, Wh):
        self.Wx, self.Wh = Wx, Wh
        self.state = None

    def reset(self, batch):
        self.state = (np.zeros((batch, self.Wh.shape[0])),)

    def __call__(self, x):
        (h,) = self.state
        h = np.tanh(x @ self.Wx + h @ self.Wh)
        self.state = (h,)
        return h


def cell_state_tuple(Wx, Wh, xs):
    cell = ElmanCell(Wx, Wh)
    cell.reset(xs.shape[1])
    outs = [cell(x) for x in xs]
    return np.sum(outs[-1] ** 2) + 0.1 * sum(np.sum(o) for o in outs)


def _cell():
    r = rng(953)
    return r.standard_normal((3, 4)) * 0.5, r.standard_normal((4, 4)) * 0.4, \
        r.standard_normal((5, 2, 3))


# ---- 54. Q-learning style TD loss with np.max over next states -----------------------------

def td_loss(W, S, A, Rw, S2, done, gamma=0.9):
    q = S @ W
    q_sa = q[np.arange(len(A)), A]
    target = Rw + gamma * np.max(S2 @ W, axis=1) * (1 - done)
    return np.mean((q_sa - target) ** 2)


def _td():
    r = rng(954)
    return (r.standard_normal((3, 2)), r.standard_normal((6, 3)), np.array([0, 1, 1, 0, 1, 0]),
            r.standard_normal(6), r.standard_normal((6, 3)),
            np.array([0, 0, 1, 0, 0, 1], dtype=float))


# ---- 55. a policy-gradient loss with log-probabilities of sampled actions ---------------------

def reinforce_loss(W, states, actions, returns):
    logits = states @ W
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    chosen = logp[range(len(actions)), actions]
    adv = (returns - returns.mean()) / (returns.std() + 1e-8)
    return -np.sum(chosen * adv)


def _pg():
    r = rng(955)
    return (r.standard_normal((4, 3)) * 0.5, r.standard_normal((7, 4)),
            [0, 2, 1, 1, 0, 2, 2], r.standard_normal(7))


# ---- 56. nested functions: a closure factory for layers -----------------------------------------

def make_dense(W, b, act=np.tanh):
    def layer(x):
        return act(x @ W + b)
    return layer


def closure_factory(W1, b1, W2, b2, X):
    net = [make_dense(W1, b1), make_dense(W2, b2, act=lambda z: z)]
    h = X
    for f in net:
        h = f(h)
    return np.sum(h ** 2)


def _clos():
    r = rng(956)
    return (r.standard_normal((3, 4)), r.standard_normal(4), r.standard_normal((4, 2)),
            r.standard_normal(2), r.standard_normal((5, 3)))


# ---- 57. an Adam object with dict state, stepped inside the loss ---------------------------

class AdamOpt:
    def __init__(self, lr=0.05, b1=0.9, b2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.m, self.v, self.t = {}, {}, 0

    def step(self, params, grads):
        self.t += 1
        out = {}
        for k in params:
            self.m[k] = self.b1 * self.m.get(k, 0.0) + (1 - self.b1) * grads[k]
            self.v[k] = self.b2 * self.v.get(k, 0.0) + (1 - self.b2) * grads[k] ** 2
            mh = self.m[k] / (1 - self.b1 ** self.t)
            vh = self.v[k] / (1 - self.b2 ** self.t)
            out[k] = params[k] - self.lr * mh / (np.sqrt(vh) + self.eps)
        return out


def adam_object_steps(params, X, y):
    opt = AdamOpt()
    for _ in range(2):
        r = X @ params["w"] - y
        params = opt.step(params, {"w": X.T @ r / len(y)})
    return np.mean((X @ params["w"] - y) ** 2)


def _adamobj():
    r = rng(957)
    return {"w": r.standard_normal(3)}, r.standard_normal((6, 3)), r.standard_normal(6)


# ---- 58. layers described by a config list of dicts -----------------------------------------

def config_layers(W1, W2, X):
    cfg = {"layers": [{"W": W1, "act": "relu", "dropout": 0.0}, {"W": W2}]}
    h = X
    for layer in cfg["layers"]:
        h = h @ layer["W"]
        if layer.get("act") == "relu":
            h = np.maximum(h, 0)
        if layer.get("dropout", 0.0) > 0:
            h = h * (1 - layer["dropout"])
    return np.sum(h ** 2)


def _cfgl():
    r = rng(958)
    return r.standard_normal((3, 4)), r.standard_normal((4, 2)), r.standard_normal((5, 3))


# ---- 59. a minibatch loop with an rng made inside, f-string logging --------------------------

def minibatch_epoch(w, X, y, batch=3):
    rng_ = np.random.default_rng(0)
    perm = rng_.permutation(len(X))
    total = 0.0
    for start in range(0, len(X), batch):
        idx = perm[start:start + batch]
        err = X[idx] @ w - y[idx]
        loss = np.mean(err ** 2)
        print(f"batch {start // batch}: loss={float(loss):.4f}") if False else None
        total = total + loss * len(idx)
    return total / len(X)


def _mb():
    r = rng(959)
    return r.standard_normal(3), r.standard_normal((7, 3)), r.standard_normal(7)


# ---- 60. Newton steps with np.linalg.inv, tensordot, row-dot einsum -------------------------

def newton_logistic(w, X, y, steps=2):
    for _ in range(steps):
        p = 1 / (1 + np.exp(-X @ w))
        grad = X.T @ (p - y)
        H = np.tensordot(X * (p * (1 - p))[:, None], X, axes=([0], [0])) + 1e-3 * np.eye(len(w))
        w = w - np.linalg.inv(H) @ grad
    margins = np.einsum("ij,j->i", X, w)
    return np.sum(np.logaddexp(0, -margins * (2 * y - 1))) + np.linalg.norm(w, ord=2)


def _newton():
    r = rng(960)
    return 0.1 * r.standard_normal(2), r.standard_normal((8, 2)), \
        (r.random(8) < 0.5).astype(float)


# ---- 61. Python scalars over array elements, np.vectorize, errstate ------------------------

def scalar_softplus(v):
    return math.log1p(math.exp(-abs(v))) + max(v, 0.0)


def python_scalars(w, X):
    z = X @ w
    total = 0.0
    for i in range(len(z)):
        total += math.exp(-0.5 * z[i] ** 2) + scalar_softplus(float(z[i]))
    vsp = np.vectorize(scalar_softplus)
    with np.errstate(divide="ignore", over="ignore"):
        extra = np.sum(vsp(z))
    assert np.isfinite(total), "diverged"
    return total + extra


def _pys():
    r = rng(961)
    return r.standard_normal(3), r.standard_normal((5, 3))


# ---- 62. class attributes as hyperparameters, a global step counter ---------------------------

STEP = 0


class Regressor:
    l2 = 1e-2
    activation = staticmethod(np.tanh)

    def __init__(self, W):
        self.W = W

    def loss(self, X, y):
        global STEP
        STEP += 1
        pred = self.activation(X @ self.W)
        return np.mean((pred - y) ** 2) + self.l2 * np.sum(self.W ** 2)


def class_hyperparams(W, X, y):
    return Regressor(W).loss(X, y)


def _chp():
    r = rng(962)
    return r.standard_normal((3, 2)), r.standard_normal((5, 3)), r.standard_normal((5, 2))


# ---- 63. top-k by sort / argsort / partition ----------------------------------------------------

def topk_losses(w, X, y, k=3):
    per = (X @ w - y) ** 2
    hardest = np.sort(per)[-k:]
    order = np.argsort(-per)
    weights = np.zeros_like(per)
    weights[order[:k]] = 1.0
    part = np.partition(per, len(per) - k)[-k:]
    return np.mean(hardest) + np.sum(weights * per) + np.sum(part)


def _topk():
    r = rng(963)
    return r.standard_normal(3), r.standard_normal((8, 3)), r.standard_normal(8)


# ---- 64. try/except around a numerically risky step --------------------------------------------

def safe_log_loss(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    try:
        loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    except FloatingPointError:
        loss = np.float64(0.0)
    if not np.isfinite(loss):
        raise ValueError("non-finite loss")
    return loss


def _sll():
    r = rng(964)
    return r.standard_normal(3) * 0.3, r.standard_normal((6, 3)), (r.random(6) < 0.5) * 1.0


PROGRAMS = [
    Probe("wild_repos4.abc_sequential", abc_sequential, _abc, ("W1", "b1", "W2", "b2"),
          fuse=True),
    Probe("wild_repos4.linked_layers", linked_layers, _linked, ("W1", "W2")),
    Probe("wild_repos4.generator_parameters", generator_parameters, _gen,
          ("W1", "b1", "W2", "b2")),
    Probe("wild_repos4.bn_steps_cache", bn_steps_cache, _bn, ("W", "gamma", "beta"),
          fuse=True),
    Probe("wild_repos4.layernorm_object", layernorm_object, _ln, ("gamma", "beta", "W")),
    Probe("wild_repos4.kqv_split_attention", kqv_split_attention, _kqv, ("W_KQV", "W_OUT")),
    Probe("wild_repos4.heads_loop_concat", heads_loop_concat, _heads, ("Wq", "Wk", "Wv")),
    Probe("wild_repos4.split_heads_posenc", split_heads_posenc, _mha,
          ("W_q", "W_k", "W_v", "W_o", "emb")),
    Probe("wild_repos4.param_objects_dict", param_objects_dict, _pod, "params"),
    Probe("wild_repos4.vae_loss", vae_loss, _vae, ("We", "be", "Wd", "bd"), fuse=True),
    Probe("wild_repos4.sgns_loss", sgns_loss, _sgns, ("W_in", "W_out")),
    Probe("wild_repos4.adam_unrolled", adam_unrolled, _adam, ("params", "A")),
    Probe("wild_repos4.conv_im2col_loops", conv_im2col_loops, _conv, ("W", "b", "x")),
    Probe("wild_repos4.lstm_stacked", lstm_stacked, _lstm, ("Wx", "Wh", "b", "h0")),
    Probe("wild_repos4.gru_params_dict", gru_params_dict, _gru, ("params", "h0")),
    Probe("wild_repos4.softmax_regression", softmax_regression, _softreg, ("W", "b"),
          fuse=True),
    Probe("wild_repos4.wavenet_block", wavenet_block, _wave, ("wf", "wg", "x")),
    Probe("wild_repos4.pooling_reshape", pooling_reshape, _pool, ("W", "x")),
    Probe("wild_repos4.inverted_dropout_inplace", inverted_dropout_inplace, _drop,
          ("W1", "W2")),
    Probe("wild_repos4.property_setter", property_setter, _prop, ("w", "X")),
    Probe("wild_repos4.dataclass_config", dataclass_config, _cfg, ("W1", "b1", "W2")),
    Probe("wild_repos4.residual_mlp", residual_mlp, _res, ("Ws", "bs", "X")),
    Probe("wild_repos4.robust_losses", robust_losses, _robust, "w", fuse=True),
    Probe("wild_repos4.gp_nll", gp_nll, _gp, ("theta", "X")),
    Probe("wild_repos4.char_rnn_loss", char_rnn_loss, _charrnn,
          ("Wxh", "Whh", "Why", "bh", "by", "hprev")),
    Probe("wild_repos4.soft_kmeans", soft_kmeans, _skm, ("C", "X")),
    Probe("wild_repos4.verlet_state", verlet_state, _verlet, ("k", "x0", "v0")),
    Probe("wild_repos4.numpy_ml_layer", numpy_ml_layer, _nml, ("W", "b")),
    Probe("wild_repos4.svm_loss_vectorized", svm_loss_vectorized, _svm, "W"),
    Probe("wild_repos4.triplet_loss", triplet_loss, _trip, ("W", "triples")),
    Probe("wild_repos4.reduce_chain", reduce_chain, _red, ("W1", "W2", "W3")),
    Probe("wild_repos4.mdn_loss", mdn_loss, _mdn, "W", fuse=True),
    Probe("wild_repos4.getitem_iter_stack", getitem_iter_stack, _stack, ("W1", "W2")),
    Probe("wild_repos4.keyword_only", keyword_only, _kwo, ("W1", "b1", "W2", "b2")),
    Probe("wild_repos4.named_params_replace", named_params_replace, _npr, "p"),
    Probe("wild_repos4.method_statistics", method_statistics, _mstat, ("W", "X")),
    Probe("wild_repos4.euler_time", euler_time, _euler, ("A", "y0")),
    Probe("wild_repos4.conv_sliding_window", conv_sliding_window, _swv, ("W", "b", "x")),
    Probe("wild_repos4.gather_cross_entropy", gather_cross_entropy, _gce, ("W", "X")),
    Probe("wild_repos4.setattr_kwargs", setattr_kwargs, _sak, "W"),
    Probe("wild_repos4.params_list_zip", params_list_zip, _plz, ("W", "b")),
    Probe("wild_repos4.where_masked_attention", where_masked_attention, _wma, ("Wq", "Wk", "X")),
    Probe("wild_repos4.star_shapes", star_shapes, _ss, ("W", "x")),
    Probe("wild_repos4.course_loss_and_grads", course_loss_and_grads, _two, "params"),
    Probe("wild_repos4.estimator_fit_self", estimator_fit_self, _lrgd, ("w0", "X")),
    Probe("wild_repos4.rbf_network", rbf_network, _rbf, ("C", "w")),
    Probe("wild_repos4.pca_eigh", pca_eigh, _pca, "X"),
    Probe("wild_repos4.mixed_precision", mixed_precision, _mixed, ("W", "X"), tol=1e-2),
    Probe("wild_repos4.birnn", birnn, _birnn, ("Wf", "Wb", "U")),
    Probe("wild_repos4.reflect_roll", reflect_roll, _reflect, ("k", "img")),
    Probe("wild_repos4.static_derivative_flag", static_derivative_flag, _sdf, ("W1", "W2")),
    Probe("wild_repos4.enc_dec", enc_dec, _encdec, "params"),
    Probe("wild_repos4.cell_state_tuple", cell_state_tuple, _cell, ("Wx", "Wh", "xs")),
    Probe("wild_repos4.td_loss", td_loss, _td, "W"),
    Probe("wild_repos4.reinforce_loss", reinforce_loss, _pg, "W"),
    Probe("wild_repos4.closure_factory", closure_factory, _clos, ("W1", "b1", "W2", "b2")),
    Probe("wild_repos4.adam_object_steps", adam_object_steps, _adamobj, ("params", "X")),
    Probe("wild_repos4.config_layers", config_layers, _cfgl, ("W1", "W2")),
    Probe("wild_repos4.minibatch_epoch", minibatch_epoch, _mb, ("w", "X")),
    Probe("wild_repos4.newton_logistic", newton_logistic, _newton, ("w", "X"), tol=1e-4),
    Probe("wild_repos4.python_scalars", python_scalars, _pys, ("w", "X")),
    Probe("wild_repos4.class_hyperparams", class_hyperparams, _chp, "W"),
    Probe("wild_repos4.topk_losses", topk_losses, _topk, ("w", "X")),
    Probe("wild_repos4.safe_log_loss", safe_log_loss, _sll, ("w", "X")),
]
