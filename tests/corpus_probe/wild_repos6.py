"""Seventh set of programs in the styles of public numpy-from-scratch code (read for patterns
only, written here from scratch): a Kalman filter class whose ``__init__`` takes a model
object and ``**kwargs`` and whose loop calls ``predict`` / ``update`` methods with
``np.linalg.slogdet``; normalising flows (planar flows as ``__call__`` objects holding lambda
attributes, RealNVP affine couplings with alternating masks); graph networks (a GCN on a
normalised adjacency with a boolean train mask, message passing by ``np.add.at`` through a
staticmethod, a dense GAT with ``np.where`` masking); attention variants (multi-query,
relative-position bias tables gathered by an index matrix, ALiBi slopes, rotary embeddings,
a decoder with a key/value cache in lists); layer classes with ``forward`` / ``backward`` and
caches; a Sequential built from a config list; optimiser classes unrolled in the loss;
dropout with ``np.random.default_rng`` seeded in the loss; batch-norm objects updating their
running statistics; VAEs with the noise passed in; dataclasses with ``field(default_factory)``
and ``__post_init__``; ``classmethod`` constructors; ``super().__init__(**kwargs)`` chains;
``Optional`` masks; word2vec CBOW; GloVe; recommender matrix factorisation with bias terms;
squared-hinge and Crammer-Singer SVMs; a periodic-kernel GP; EM's evidence lower bound of a
mixture with batched ``slogdet``; the CTC forward recursion; a log-space HMM backward pass;
Lennard-Jones energies with ``np.fill_diagonal``; a Burgers upwind scheme; a Poisson residual
with ``np.pad``; a neural ODE integrated by a bound method; PPO's clipped objective;
factorisation machines; ordinal regression; Cox partial likelihood; a hypernetwork; top-1
and top-k mixtures of experts; tied and contractive autoencoders; GRUs by ``np.split``; a
tuple of ``__slots__`` layer objects; hierarchical softmax over per-word paths; Gumbel-softmax;
spectral normalisation by power iteration; PageRank by a ``while`` loop to a tolerance; a
siamese contrastive loss; ``einsum`` with an ellipsis; a tied-embedding language model."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import scipy.linalg
import scipy.special

from . import Probe, rng


# ---- 1. Kalman filter class with predict/update methods ----------------------------------

class LinearGaussianModel:
    def __init__(self, A, H, log_q, log_r):
        self.A, self.H = A, H
        self.log_q, self.log_r = log_q, log_r

    @property
    def Q(self):
        return np.exp(self.log_q) * np.eye(self.A.shape[0])

    @property
    def R(self):
        return np.exp(self.log_r) * np.eye(self.H.shape[0])


class KalmanFilter:
    def __init__(self, model, observations, x0, P0, **kwargs):
        self.model = model
        self.observations = observations
        self.x, self.P = x0, P0
        self.ll = 0.0
        self.verbose = kwargs.get("verbose", False)

    def predict(self):
        m = self.model
        self.x = m.A @ self.x
        self.P = m.A @ self.P @ m.A.T + m.Q

    def update(self, y):
        m = self.model
        v = y - m.H @ self.x
        S = m.H @ self.P @ m.H.T + m.R
        sign, logdet = np.linalg.slogdet(S)
        self.ll += -0.5 * (logdet + v @ np.linalg.solve(S, v) + len(y) * np.log(2 * np.pi))
        K = self.P @ m.H.T @ np.linalg.inv(S)
        self.x = self.x + K @ v
        self.P = (np.eye(len(self.x)) - K @ m.H) @ self.P

    def run(self):
        for y in self.observations:
            self.predict()
            self.update(y)
        return self.ll


def kalman_filter_class(log_q, log_r, A, H, Y):
    model = LinearGaussianModel(A, H, log_q, log_r)
    kf = KalmanFilter(model, Y, np.zeros(A.shape[0]), np.eye(A.shape[0]), verbose=False)
    return -kf.run()


def _kf():
    r = rng(1101)
    A = np.array([[1.0, 0.1], [0.0, 0.95]])
    return np.float64(-1.0), np.float64(-0.5), A, r.standard_normal((1, 2)), \
        r.standard_normal((6, 1))


# ---- 2. planar flows as __call__ objects with lambda attributes --------------------------

class PlanarFlow:
    def __init__(self, u, w, b):
        self.u, self.w, self.b = u, w, b
        self.h = lambda x: np.tanh(x)
        self.h_prime = lambda x: 1 - np.tanh(x) ** 2

    def __call__(self, z, log_q):
        lin = z @ self.w + self.b
        psi = self.h_prime(lin)[:, None] * self.w
        det = np.abs(1 + psi @ self.u)
        z = z + self.u * self.h(lin)[:, None]
        log_q = log_q - np.log(1e-7 + det)
        return z, log_q


def planar_flows(U, Wf, bf, z0):
    flows = [PlanarFlow(U[k], Wf[k], bf[k]) for k in range(len(U))]
    z, log_q = z0, -0.5 * np.sum(z0 ** 2, axis=1)
    for flow in flows:
        z, log_q = flow(z, log_q)
    return np.mean(log_q + 0.5 * np.sum(z ** 2, axis=1))


def _planar():
    r = rng(1102)
    return (r.standard_normal((3, 2)) * 0.3, r.standard_normal((3, 2)) * 0.5,
            r.standard_normal(3) * 0.1, r.standard_normal((5, 2)))


# ---- 3. RealNVP affine couplings with alternating masks -----------------------------------

class Coupling:
    def __init__(self, mask, Ws, Wt):
        self.mask, self.Ws, self.Wt = mask, Ws, Wt

    def forward(self, x):
        xm = x * self.mask
        s = np.tanh(xm @ self.Ws) * (1 - self.mask)
        t = (xm @ self.Wt) * (1 - self.mask)
        y = xm + (1 - self.mask) * (x * np.exp(s) + t)
        return y, s.sum(axis=1)


def realnvp_nll(Ws, Wt, X):
    d = X.shape[1]
    masks = [np.arange(d) % 2 == k % 2 for k in range(len(Ws))]
    layers = [Coupling(m.astype(float), a, b) for m, a, b in zip(masks, Ws, Wt)]
    log_det = np.zeros(len(X))
    z = X
    for layer in layers:
        z, ld = layer.forward(z)
        log_det += ld
    log_pz = -0.5 * np.sum(z ** 2, axis=1) - 0.5 * d * np.log(2 * np.pi)
    return -np.mean(log_pz + log_det)


def _nvp():
    r = rng(1103)
    return r.standard_normal((3, 4, 4)) * 0.3, r.standard_normal((3, 4, 4)) * 0.3, \
        r.standard_normal((6, 4))


# ---- 4. GCN on a normalised adjacency, boolean train mask ---------------------------------

def normalize_adjacency(A):
    A_hat = A + np.eye(A.shape[0])
    d = A_hat.sum(axis=1)
    D_inv_sqrt = np.diag(1.0 / np.sqrt(d))
    return D_inv_sqrt @ A_hat @ D_inv_sqrt


def gcn_masked(W1, W2, A, X, labels, train_mask):
    A_norm = normalize_adjacency(A)
    H = np.maximum(A_norm @ X @ W1, 0)
    logits = A_norm @ H @ W2
    logits = logits - logits.max(axis=1, keepdims=True)
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    picked = log_p[np.arange(len(labels)), labels]
    return -picked[train_mask].mean()


def _gcn():
    r = rng(1104)
    A = (r.random((7, 7)) < 0.35).astype(float)
    A = np.triu(A, 1)
    A = A + A.T
    return (r.standard_normal((3, 5)) * 0.5, r.standard_normal((5, 3)) * 0.5, A,
            r.standard_normal((7, 3)), r.integers(0, 3, 7),
            np.array([1, 0, 1, 1, 0, 1, 0], dtype=bool))


# ---- 5. message passing with np.add.at through a staticmethod -----------------------------

class MPNNLayer:
    def __init__(self, W_msg, W_upd):
        self.W_msg, self.W_upd = W_msg, W_upd

    @staticmethod
    def aggregate(messages, index, num_nodes):
        out = np.zeros((num_nodes, messages.shape[1]))
        np.add.at(out, index, messages)
        return out

    def __call__(self, h, edges, edge_w):
        src, dst = edges[:, 0], edges[:, 1]
        msg = np.tanh(h[src] @ self.W_msg) * edge_w[:, None]
        agg = self.aggregate(msg, dst, h.shape[0])
        return np.tanh(np.concatenate([h, agg], axis=1) @ self.W_upd)


def message_passing(W_msg, W_upd, h0, edges, edge_w):
    layer = MPNNLayer(W_msg, W_upd)
    h = h0
    for _ in range(2):
        h = layer(h, edges, edge_w)
    return np.sum(h.mean(axis=0) ** 2)


def _mpnn():
    r = rng(1105)
    edges = np.array([[0, 1], [1, 0], [1, 2], [2, 3], [3, 1], [4, 2], [2, 4], [0, 4]])
    return (r.standard_normal((3, 3)) * 0.6, r.standard_normal((6, 3)) * 0.6,
            r.standard_normal((5, 3)), edges, r.random(8))


# ---- 6. scatter mean: counts by np.add.at of ones -----------------------------------------

def scatter_mean_readout(W, X, graph_id, y):
    n_graphs = graph_id.max() + 1
    h = np.tanh(X @ W)
    sums = np.zeros((n_graphs, h.shape[1]))
    counts = np.zeros(n_graphs)
    np.add.at(sums, graph_id, h)
    np.add.at(counts, graph_id, 1)
    pooled = sums / counts[:, None]
    return np.mean((pooled.sum(axis=1) - y) ** 2)


def _smr():
    r = rng(1106)
    return (r.standard_normal((3, 4)), r.standard_normal((9, 3)),
            np.array([0, 0, 1, 1, 1, 2, 2, 2, 2]), r.standard_normal(3))


# ---- 7. dense GAT with np.where masking of non-edges --------------------------------------

def leaky_relu(x, alpha=0.2):
    return np.where(x > 0, x, alpha * x)


def gat_dense(W, a_src, a_dst, A, X):
    H = X @ W
    e = leaky_relu((H @ a_src)[:, None] + (H @ a_dst)[None, :])
    adj = A + np.eye(len(A))
    e = np.where(adj > 0, e, -1e9)
    att = np.exp(e - e.max(axis=1, keepdims=True))
    att = att / att.sum(axis=1, keepdims=True)
    out = att @ H
    return np.sum(np.maximum(out, 0) ** 2)


def _gat():
    r = rng(1107)
    A = (r.random((6, 6)) < 0.4).astype(float)
    return (r.standard_normal((3, 4)) * 0.7, r.standard_normal(4), r.standard_normal(4), A,
            r.standard_normal((6, 3)))


# ---- 8. multi-query attention by einsum ---------------------------------------------------

def multi_query_attention(Wq, Wk, Wv, Wo, x, n_heads=2):
    B, T, D = x.shape
    hd = Wk.shape[1]
    q = (x @ Wq).reshape(B, T, n_heads, hd).transpose(0, 2, 1, 3)
    k = x @ Wk
    v = x @ Wv
    scores = np.einsum("bhtd,bsd->bhts", q, k) / np.sqrt(hd)
    scores = scores - scores.max(-1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(-1, keepdims=True)
    ctx = np.einsum("bhts,bsd->bhtd", w, v)
    out = ctx.transpose(0, 2, 1, 3).reshape(B, T, n_heads * hd) @ Wo
    return np.mean(out ** 2)


def _mqa():
    r = rng(1108)
    return (r.standard_normal((4, 4)) * 0.5, r.standard_normal((4, 2)) * 0.5,
            r.standard_normal((4, 2)) * 0.5, r.standard_normal((4, 4)) * 0.5,
            r.standard_normal((2, 3, 4)))


# ---- 9. relative-position bias table gathered by an index matrix --------------------------

def relative_position_attention(Wq, Wk, Wv, bias_table, x):
    T = x.shape[0]
    idx = np.arange(T)[:, None] - np.arange(T)[None, :] + T - 1
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    logits = q @ k.T / math.sqrt(q.shape[-1]) + bias_table[idx]
    logits -= logits.max(axis=-1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=-1, keepdims=True)
    return np.sum((p @ v) ** 2)


def _rpa():
    r = rng(1109)
    return (r.standard_normal((3, 3)) * 0.5, r.standard_normal((3, 3)) * 0.5,
            r.standard_normal((3, 3)) * 0.5, r.standard_normal(9) * 0.3,
            r.standard_normal((5, 3)))


# ---- 10. ALiBi slopes and a boolean causal mask -------------------------------------------

def alibi_slopes(n_heads):
    start = 2 ** (-8 / n_heads)
    return np.array([start ** (i + 1) for i in range(n_heads)])


def alibi_attention(Wqkv, x, n_heads=2):
    T, D = x.shape
    hd = D // n_heads
    qkv = x @ Wqkv
    q, k, v = np.split(qkv, 3, axis=-1)
    q = q.reshape(T, n_heads, hd).swapaxes(0, 1)
    k = k.reshape(T, n_heads, hd).swapaxes(0, 1)
    v = v.reshape(T, n_heads, hd).swapaxes(0, 1)
    dist = np.abs(np.arange(T)[None, :] - np.arange(T)[:, None])
    bias = -alibi_slopes(n_heads)[:, None, None] * dist[None]
    causal = np.triu(np.ones((T, T), dtype=bool), k=1)
    s = q @ k.swapaxes(-1, -2) / np.sqrt(hd) + bias
    s = np.where(causal, -np.inf, s)
    s = s - s.max(-1, keepdims=True)
    a = np.exp(s)
    a = a / a.sum(-1, keepdims=True)
    return np.sum((a @ v) ** 2)


def _alibi():
    r = rng(1110)
    return r.standard_normal((4, 12)) * 0.5, r.standard_normal((5, 4))


# ---- 11. rotary position embeddings -------------------------------------------------------

def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return np.concatenate((-x2, x1), axis=-1)


def rope_tables(T, d, base=10000.0):
    inv = 1.0 / base ** (np.arange(0, d, 2) / d)
    ang = np.outer(np.arange(T), inv)
    emb = np.concatenate([ang, ang], axis=-1)
    return np.cos(emb), np.sin(emb)


def rotary_attention(Wq, Wk, x):
    T = x.shape[0]
    q, k = x @ Wq, x @ Wk
    cos, sin = rope_tables(T, q.shape[-1])
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    s = q @ k.T
    return np.sum(scipy.special.softmax(s, axis=-1) * s)


def _rope():
    r = rng(1111)
    return r.standard_normal((3, 4)) * 0.5, r.standard_normal((3, 4)) * 0.5, \
        r.standard_normal((6, 3))


# ---- 12. decoder with a key/value cache in lists ------------------------------------------

class CachedAttention:
    def __init__(self, Wq, Wk, Wv):
        self.Wq, self.Wk, self.Wv = Wq, Wk, Wv
        self.k_cache = []
        self.v_cache = []

    def step(self, x_t):
        self.k_cache.append(x_t @ self.Wk)
        self.v_cache.append(x_t @ self.Wv)
        K = np.stack(self.k_cache)
        V = np.stack(self.v_cache)
        s = K @ (x_t @ self.Wq)
        p = np.exp(s - s.max())
        return (p / p.sum()) @ V


def kv_cache_decode(Wq, Wk, Wv, xs):
    attn = CachedAttention(Wq, Wk, Wv)
    outs = [attn.step(x) for x in xs]
    return np.sum(np.array(outs) ** 2)


def _kv():
    r = rng(1112)
    return (r.standard_normal((3, 3)) * 0.5, r.standard_normal((3, 3)) * 0.5,
            r.standard_normal((3, 3)) * 0.5, r.standard_normal((5, 3)))


# ---- 13. layers with forward/backward methods and caches ----------------------------------

class Layer:
    def __init__(self):
        self.cache = None
        self.params = {}
        self.grads = {}

    def forward(self, x):
        raise NotImplementedError

    def backward(self, dout):
        raise NotImplementedError


class Affine(Layer):
    def __init__(self, W, b):
        super().__init__()
        self.params["W"] = W
        self.params["b"] = b

    def forward(self, x):
        self.cache = x
        return x @ self.params["W"] + self.params["b"]

    def backward(self, dout):
        x = self.cache
        self.grads["W"] = x.T @ dout
        self.grads["b"] = dout.sum(axis=0)
        return dout @ self.params["W"].T


class Sigmoid(Layer):
    def forward(self, x):
        out = 1.0 / (1.0 + np.exp(-x))
        self.cache = out
        return out

    def backward(self, dout):
        return dout * self.cache * (1 - self.cache)


def layers_with_caches(W1, b1, W2, b2, X, y):
    net = [Affine(W1, b1), Sigmoid(), Affine(W2, b2)]
    out = X
    for layer in net:
        out = layer.forward(out)
    return 0.5 * np.mean((out[:, 0] - y) ** 2)


def _lwc():
    r = rng(1113)
    return (r.standard_normal((3, 4)), r.standard_normal(4) * 0.1, r.standard_normal((4, 1)),
            np.zeros(1), r.standard_normal((6, 3)), r.standard_normal(6))


# ---- 14. Sequential built from a config list ----------------------------------------------

class Dense:
    def __init__(self, W, b, activation=None):
        self.W, self.b, self.activation = W, b, activation

    def __call__(self, x):
        z = x @ self.W + self.b
        if self.activation == "relu":
            return np.maximum(z, 0)
        if self.activation == "tanh":
            return np.tanh(z)
        return z


class Sequential:
    def __init__(self, layers):
        self.layers = list(layers)

    @classmethod
    def from_config(cls, config, params):
        layers = []
        for i, spec in enumerate(config):
            layers.append(Dense(params[f"W{i}"], params[f"b{i}"], **spec))
        return cls(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


CONFIG = [{"activation": "relu"}, {"activation": "tanh"}, {}]


def sequential_from_config(params, X, y):
    model = Sequential.from_config(CONFIG, params)
    return np.mean((model(X).ravel() - y) ** 2)


def _sfc():
    r = rng(1114)
    sizes = [3, 5, 4, 1]
    params = {}
    for i in range(3):
        params[f"W{i}"] = r.standard_normal((sizes[i], sizes[i + 1])) * 0.5
        params[f"b{i}"] = r.standard_normal(sizes[i + 1]) * 0.1
    return params, r.standard_normal((6, 3)), r.standard_normal(6)


# ---- 15. an optimiser class unrolled in the loss (meta-learning the init) -----------------

class Momentum:
    def __init__(self, lr=0.1, beta=0.9):
        self.lr, self.beta = lr, beta
        self.velocity = {}

    def step(self, params, grads):
        new = {}
        for k in params:
            v = self.beta * self.velocity.get(k, 0.0) + grads[k]
            self.velocity[k] = v
            new[k] = params[k] - self.lr * v
        return new


def momentum_unrolled(w0, b0, X, y, steps=3):
    opt = Momentum(lr=0.05)
    params = {"w": w0, "b": b0}
    for _ in range(steps):
        r = X @ params["w"] + params["b"] - y
        grads = {"w": X.T @ r / len(y), "b": r.mean()}
        params = opt.step(params, grads)
    return np.mean((X @ params["w"] + params["b"] - y) ** 2)


def _mom():
    r = rng(1115)
    return r.standard_normal(3), np.float64(0.2), r.standard_normal((8, 3)), \
        r.standard_normal(8)


# ---- 16. dropout with a seeded default_rng inside the loss --------------------------------

def dropout(x, p, rng_):
    mask = rng_.random(x.shape) >= p
    return x * mask / (1 - p)


def seeded_dropout(W1, W2, X, seed=7):
    gen = np.random.default_rng(seed)
    h = np.maximum(X @ W1, 0)
    h = dropout(h, 0.3, gen)
    h2 = dropout(np.tanh(h @ W2), 0.2, gen)
    return np.sum(h2 ** 2)


def _sdrop():
    r = rng(1116)
    return r.standard_normal((3, 6)), r.standard_normal((6, 4)), r.standard_normal((5, 3))


# ---- 17. batch norm object with running statistics ----------------------------------------

class BatchNorm1d:
    def __init__(self, gamma, beta, momentum=0.1, eps=1e-5):
        self.gamma, self.beta = gamma, beta
        self.momentum, self.eps = momentum, eps
        self.running_mean = np.zeros_like(gamma)
        self.running_var = np.ones_like(gamma)
        self.training = True

    def __call__(self, x):
        if self.training:
            mu, var = x.mean(axis=0), x.var(axis=0)
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mu
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var
        else:
            mu, var = self.running_mean, self.running_var
        return self.gamma * (x - mu) / np.sqrt(var + self.eps) + self.beta

    def eval(self):
        self.training = False
        return self


def batchnorm_running(W, gamma, beta, X, Xv):
    bn = BatchNorm1d(gamma, beta)
    train = np.sum(np.tanh(bn(X @ W)) ** 2)
    for _ in range(2):
        bn(X[::-1] @ W * 1.1)
    val = np.sum(bn.eval()(Xv @ W) ** 2)
    return train + 0.5 * val


def _bnr():
    r = rng(1117)
    return (r.standard_normal((3, 4)), 1 + 0.1 * r.standard_normal(4),
            0.1 * r.standard_normal(4), r.standard_normal((6, 3)), r.standard_normal((4, 3)))


# ---- 18. conditional VAE: labels one-hot by np.eye(n)[y], noise passed in -----------------

def cvae_loss(We, Wmu, Wlv, Wd, X, y, eps, n_classes=3):
    c = np.eye(n_classes)[y]
    h = np.tanh(np.hstack([X, c]) @ We)
    mu, logvar = h @ Wmu, h @ Wlv
    z = mu + np.exp(0.5 * logvar) * eps
    logits = np.hstack([z, c]) @ Wd
    rec = np.sum(np.logaddexp(0, logits) - X * logits, axis=1)
    kl = -0.5 * np.sum(1 + logvar - mu ** 2 - np.exp(logvar), axis=1)
    return np.mean(rec + kl)


def _cvae():
    r = rng(1118)
    return (r.standard_normal((7, 5)) * 0.4, r.standard_normal((5, 2)) * 0.4,
            r.standard_normal((5, 2)) * 0.4, r.standard_normal((5, 4)) * 0.4,
            (r.random((6, 4)) < 0.5).astype(float), r.integers(0, 3, 6),
            r.standard_normal((6, 2)))


# ---- 19. dataclasses with field(default_factory) and __post_init__ ------------------------

@dataclass
class MLPConfig:
    sizes: list = field(default_factory=lambda: [3, 4, 1])
    activation: str = "tanh"
    weight_decay: float = 1e-3


@dataclass
class MLP:
    weights: list
    cfg: MLPConfig = field(default_factory=MLPConfig)
    n_layers: int = field(init=False)

    def __post_init__(self):
        self.n_layers = len(self.weights)

    def forward(self, x: np.ndarray) -> np.ndarray:
        for i, W in enumerate(self.weights):
            x = x @ W
            if i < self.n_layers - 1:
                x = np.tanh(x) if self.cfg.activation == "tanh" else np.maximum(x, 0)
        return x

    @property
    def l2(self) -> float:
        return sum(np.sum(W ** 2) for W in self.weights)


def dataclass_post_init(W1, W2, X, y):
    model = MLP([W1, W2])
    pred = model.forward(X)[:, 0]
    return np.mean((pred - y) ** 2) + model.cfg.weight_decay * model.l2


def _dpi():
    r = rng(1119)
    return r.standard_normal((3, 4)), r.standard_normal((4, 1)), r.standard_normal((5, 3)), \
        r.standard_normal(5)


# ---- 20. super().__init__(**kwargs) chains with keyword configuration ---------------------

class Module:
    def __init__(self, name=None, **kwargs):
        self.name = name or type(self).__name__
        self.training = kwargs.pop("training", True)
        self.extra = kwargs


class Linear(Module):
    def __init__(self, W, b=None, **kwargs):
        super().__init__(**kwargs)
        self.W, self.b = W, b

    def __call__(self, x):
        out = x @ self.W
        return out if self.b is None else out + self.b


class Residual(Linear):
    def __init__(self, W, b=None, scale=1.0, **kwargs):
        super().__init__(W, b, name="residual", **kwargs)
        self.scale = scale

    def __call__(self, x):
        return x + self.scale * np.tanh(super().__call__(x))


def super_kwargs_chain(W1, W2, b2, X):
    blocks = [Residual(W1, scale=0.5, training=False), Residual(W2, b2)]
    h = X
    for blk in blocks:
        h = blk(h)
    return np.sum(h ** 2)


def _skc():
    r = rng(1120)
    return r.standard_normal((3, 3)), r.standard_normal((3, 3)), r.standard_normal(3), \
        r.standard_normal((4, 3))


# ---- 21. Optional mask arguments with type hints ------------------------------------------

def masked_softmax(scores: np.ndarray, mask: Optional[np.ndarray] = None) -> np.ndarray:
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)


def attention_pool(W: np.ndarray, v: np.ndarray, X: np.ndarray,
                   mask: Optional[np.ndarray] = None) -> float:
    h = np.tanh(X @ W)
    a = masked_softmax(h @ v, mask)
    pooled = np.einsum("bt,btd->bd", a, h)
    return float(np.sum(pooled ** 2)) if mask is None else np.sum(pooled ** 2)


def optional_mask(W, v, X, lengths):
    mask = np.arange(X.shape[1])[None, :] < lengths[:, None]
    return attention_pool(W, v, X, mask) + attention_pool(W, v, X[:, :2])


def _om():
    r = rng(1121)
    return r.standard_normal((3, 4)), r.standard_normal(4), r.standard_normal((3, 5, 3)), \
        np.array([5, 3, 2])


# ---- 22. word2vec CBOW with context windows built by a list comprehension -----------------

def cbow_loss(E, W_out, tokens, window=2):
    pairs = [(tokens[max(0, i - window):i] + tokens[i + 1:i + 1 + window], tokens[i])
             for i in range(len(tokens))]
    loss = 0.0
    for context, center in pairs:
        h = E[context].mean(axis=0)
        logits = W_out @ h
        loss += scipy.special.logsumexp(logits) - logits[center]
    return loss / len(pairs)


def _cbow():
    r = rng(1122)
    return r.standard_normal((6, 3)) * 0.5, r.standard_normal((6, 3)) * 0.5, \
        [0, 3, 2, 5, 1, 3, 4]


# ---- 23. GloVe weighted least squares over the nonzero co-occurrences ---------------------

def glove_loss(W, Wc, b, bc, X, x_max=10.0, alpha=0.75):
    rows, cols = np.nonzero(X)
    x = X[rows, cols]
    f = np.minimum((x / x_max) ** alpha, 1.0)
    pred = np.sum(W[rows] * Wc[cols], axis=1) + b[rows] + bc[cols]
    return 0.5 * np.sum(f * (pred - np.log(x)) ** 2)


def _glove():
    r = rng(1123)
    X = np.floor(r.random((5, 5)) * 14) * (r.random((5, 5)) < 0.6)
    return (r.standard_normal((5, 3)) * 0.3, r.standard_normal((5, 3)) * 0.3,
            r.standard_normal(5) * 0.1, r.standard_normal(5) * 0.1, X)


# ---- 24. matrix factorisation with global, user and item biases ---------------------------

class BiasedMF:
    def __init__(self, P, Q, bu, bi, mu, reg=0.02):
        self.P, self.Q, self.bu, self.bi, self.mu, self.reg = P, Q, bu, bi, mu, reg

    def predict(self, users, items):
        return (self.mu + self.bu[users] + self.bi[items]
                + np.einsum("ij,ij->i", self.P[users], self.Q[items]))

    def loss(self, users, items, ratings):
        err = ratings - self.predict(users, items)
        penalty = self.reg * (np.sum(self.P[users] ** 2) + np.sum(self.Q[items] ** 2)
                              + np.sum(self.bu[users] ** 2) + np.sum(self.bi[items] ** 2))
        return np.sum(err ** 2) + penalty


def biased_mf(P, Q, bu, bi, users, items, ratings):
    model = BiasedMF(P, Q, bu, bi, ratings.mean())
    return model.loss(users, items, ratings)


def _bmf():
    r = rng(1124)
    return (r.standard_normal((4, 2)) * 0.3, r.standard_normal((5, 2)) * 0.3,
            r.standard_normal(4) * 0.1, r.standard_normal(5) * 0.1,
            np.array([0, 1, 1, 2, 3, 3, 0, 2]), np.array([1, 0, 4, 2, 3, 1, 1, 4]),
            np.array([4.0, 3.0, 5.0, 2.0, 1.0, 4.0, 3.0, 5.0]))


# ---- 25. one-vs-rest squared hinge with L2 ------------------------------------------------

def ovr_squared_hinge(W, b, X, y, C=1.0):
    n_classes = W.shape[1]
    Y = np.where(y[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)
    margins = Y * (X @ W + b)
    loss = np.maximum(0, 1 - margins) ** 2
    return 0.5 * np.sum(W * W) + C * loss.sum() / len(y)


def _ovr():
    r = rng(1125)
    return r.standard_normal((3, 3)) * 0.3, np.zeros(3), r.standard_normal((8, 3)), \
        r.integers(0, 3, 8)


# ---- 26. Crammer-Singer multiclass hinge, the correct class's margin zeroed ---------------

def crammer_singer(W, X, y, reg=0.1):
    scores = X @ W
    correct = scores[np.arange(len(y)), y][:, None]
    margins = np.maximum(0, scores - correct + 1.0)
    margins[np.arange(len(y)), y] = 0
    return np.mean(np.max(margins, axis=1)) + reg * np.sum(W ** 2)


def _cs():
    r = rng(1126)
    return r.standard_normal((4, 3)) * 0.5, r.standard_normal((7, 4)), r.integers(0, 3, 7)


# ---- 27. GP marginal likelihood with a periodic kernel, solve_triangular ------------------

def periodic_kernel(x1, x2, log_ell, log_p, log_sf):
    d = x1[:, None] - x2[None, :]
    return np.exp(2 * log_sf) * np.exp(-2 * np.sin(np.pi * d / np.exp(log_p)) ** 2
                                       / np.exp(2 * log_ell))


def gp_periodic_nll(theta, x, y):
    log_ell, log_p, log_sf, log_sn = theta
    K = periodic_kernel(x, x, log_ell, log_p, log_sf) + np.exp(2 * log_sn) * np.eye(len(x))
    L = np.linalg.cholesky(K)
    a = scipy.linalg.solve_triangular(L, y, lower=True)
    return 0.5 * a @ a + np.log(np.diag(L)).sum() + 0.5 * len(x) * np.log(2 * np.pi)


def _gpp():
    r = rng(1127)
    x = np.sort(r.random(7) * 4)
    return np.array([0.1, 0.3, 0.0, -1.0]), x, np.sin(2 * x) + 0.1 * r.standard_normal(7)


# ---- 28. EM evidence lower bound of a Gaussian mixture with batched slogdet ---------------

def gmm_elbo(means, chol_params, logits, X):
    K, d = means.shape
    L = np.tril(chol_params) + 2.0 * np.eye(d)
    covs = L @ np.swapaxes(L, -1, -2)
    diff = X[:, None, :] - means[None, :, :]
    prec = np.linalg.inv(covs)
    maha = np.einsum("nkd,kde,nke->nk", diff, prec, diff)
    _, logdet = np.linalg.slogdet(covs)
    log_pi = logits - scipy.special.logsumexp(logits)
    log_joint = log_pi - 0.5 * (maha + logdet + d * np.log(2 * np.pi))
    resp = np.exp(log_joint - scipy.special.logsumexp(log_joint, axis=1, keepdims=True))
    return -np.sum(resp * (log_joint - np.log(resp + 1e-12)))


def _gmme():
    r = rng(1128)
    return (r.standard_normal((3, 2)), r.standard_normal((3, 2, 2)) * 0.3,
            r.standard_normal(3) * 0.2, r.standard_normal((8, 2)))


# ---- 29. CTC forward recursion in log space -----------------------------------------------

def ctc_loss(W, X, label, blank=0):
    logits = X @ W
    log_probs = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)
    ext = [blank]
    for c in label:
        ext += [c, blank]
    S, T = len(ext), len(log_probs)
    alpha = np.full(S, -np.inf)
    alpha[0] = log_probs[0, blank]
    alpha[1] = log_probs[0, ext[1]]
    for t in range(1, T):
        prev = alpha.copy()
        for s in range(S):
            a = prev[s]
            if s > 0:
                a = np.logaddexp(a, prev[s - 1])
            if s > 1 and ext[s] != blank and ext[s] != ext[s - 2]:
                a = np.logaddexp(a, prev[s - 2])
            alpha[s] = a + log_probs[t, ext[s]]
    return -np.logaddexp(alpha[-1], alpha[-2])


def _ctc():
    r = rng(1129)
    return r.standard_normal((3, 4)) * 0.5, r.standard_normal((6, 3)), [1, 2, 2]


# ---- 30. HMM backward pass in log space with np.newaxis -----------------------------------

def hmm_backward_loglik(log_A_raw, log_B_raw, log_pi_raw, obs):
    log_A = log_A_raw - scipy.special.logsumexp(log_A_raw, axis=1)[:, np.newaxis]
    log_B = log_B_raw - scipy.special.logsumexp(log_B_raw, axis=1)[:, np.newaxis]
    log_pi = log_pi_raw - scipy.special.logsumexp(log_pi_raw)
    T, N = len(obs), log_A.shape[0]
    beta = np.zeros((T, N))
    for t in range(T - 2, -1, -1):
        beta[t] = scipy.special.logsumexp(
            log_A + log_B[np.newaxis, :, obs[t + 1]] + beta[t + 1][np.newaxis, :], axis=1)
    return -scipy.special.logsumexp(log_pi + log_B[:, obs[0]] + beta[0])


def _hmmb():
    r = rng(1130)
    return (r.standard_normal((3, 3)), r.standard_normal((3, 4)), r.standard_normal(3),
            np.array([0, 2, 1, 3, 3, 0]))


# ---- 31. Lennard-Jones energy with np.fill_diagonal ---------------------------------------

def lennard_jones(pos, eps=1.0, sigma=1.0):
    diff = pos[:, None, :] - pos[None, :, :]
    r2 = np.sum(diff ** 2, axis=-1)
    np.fill_diagonal(r2, 1.0)
    inv6 = (sigma ** 2 / r2) ** 3
    energy = 4 * eps * (inv6 ** 2 - inv6)
    np.fill_diagonal(energy, 0.0)
    return 0.5 * energy.sum()


def _lj():
    g = np.stack(np.meshgrid(np.arange(2), np.arange(3)), -1).reshape(-1, 2) * 1.2
    return (g + 0.05 * rng(1131).standard_normal(g.shape),)


# ---- 32. Burgers' equation by an upwind scheme with np.roll -------------------------------

def burgers_upwind(u0, nu, target, dt=0.01, dx=0.1, steps=5):
    u = u0.copy()
    for _ in range(steps):
        back = u - np.roll(u, 1)
        fwd = np.roll(u, -1) - u
        adv = np.where(u > 0, u * back, u * fwd) / dx
        diff = nu * (np.roll(u, -1) - 2 * u + np.roll(u, 1)) / dx ** 2
        u = u + dt * (diff - adv)
    return np.mean((u - target) ** 2)


def _burg():
    x = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    return np.sin(x) + 0.3, np.float64(0.05), np.cos(x)


# ---- 33. Poisson residual with np.pad boundary conditions ---------------------------------

def poisson_residual(u_inner, f, h=0.25):
    u = np.pad(u_inner, 1, mode="constant", constant_values=0.0)
    lap = (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
           - 4 * u[1:-1, 1:-1]) / h ** 2
    return np.sum((lap + f) ** 2) * h ** 2


def _poi():
    r = rng(1133)
    return r.standard_normal((4, 5)), r.standard_normal((4, 5))


# ---- 34. neural ODE integrated through a bound method -------------------------------------

class ODEFunc:
    def __init__(self, W1, W2):
        self.W1, self.W2 = W1, W2
        self.nfe = 0

    def dynamics(self, t, h):
        self.nfe += 1
        return np.tanh(h @ self.W1 + t) @ self.W2


def rk4_solve(f, h0, ts):
    h = h0
    for t0, t1 in zip(ts[:-1], ts[1:]):
        dt = t1 - t0
        k1 = f(t0, h)
        k2 = f(t0 + dt / 2, h + dt * k1 / 2)
        k3 = f(t0 + dt / 2, h + dt * k2 / 2)
        k4 = f(t1, h + dt * k3)
        h = h + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    return h


def neural_ode(W1, W2, h0, target):
    func = ODEFunc(W1, W2)
    hT = rk4_solve(func.dynamics, h0, np.linspace(0.0, 1.0, 4))
    return np.mean((hT - target) ** 2)


def _node():
    r = rng(1134)
    return (r.standard_normal((2, 5)) * 0.5, r.standard_normal((5, 2)) * 0.5,
            r.standard_normal((3, 2)), r.standard_normal((3, 2)))


# ---- 35. PPO clipped surrogate with an entropy bonus --------------------------------------

def ppo_loss(W, states, actions, logp_old, advantages, clip=0.2, ent_coef=0.01):
    logits = states @ W
    log_p = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)
    logp = np.take_along_axis(log_p, actions[:, None], axis=1)[:, 0]
    adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    ratio = np.exp(logp - logp_old)
    surr = np.minimum(ratio * adv, np.clip(ratio, 1 - clip, 1 + clip) * adv)
    entropy = -np.sum(np.exp(log_p) * log_p, axis=1)
    return -np.mean(surr) - ent_coef * entropy.mean()


def _ppo():
    r = rng(1135)
    S = r.standard_normal((8, 3))
    a = r.integers(0, 4, 8)
    return (r.standard_normal((3, 4)) * 0.3, S, a, np.log(np.full(8, 0.25)) + 0.05 *
            r.standard_normal(8), r.standard_normal(8))


# ---- 36. factorisation machine -------------------------------------------------------------

def factorization_machine(w0, w, V, X, y):
    linear = w0 + X @ w
    inter = 0.5 * np.sum((X @ V) ** 2 - (X ** 2) @ (V ** 2), axis=1)
    pred = linear + inter
    return np.mean(np.logaddexp(0, -y * pred))


def _fm():
    r = rng(1136)
    return (np.float64(0.1), r.standard_normal(5) * 0.2, r.standard_normal((5, 3)) * 0.3,
            r.standard_normal((7, 5)), np.sign(r.standard_normal(7)))


# ---- 37. ordinal regression: ordered thresholds by a cumulative sum -----------------------

def ordinal_logit(w, theta_raw, X, y):
    thresholds = np.cumsum(np.concatenate([theta_raw[:1], np.exp(theta_raw[1:])]))
    eta = X @ w
    cdf = scipy.special.expit(thresholds[None, :] - eta[:, None])
    cdf = np.concatenate([np.zeros((len(y), 1)), cdf, np.ones((len(y), 1))], axis=1)
    probs = cdf[:, 1:] - cdf[:, :-1]
    return -np.sum(np.log(probs[np.arange(len(y)), y] + 1e-12))


def _ord():
    r = rng(1137)
    return r.standard_normal(3) * 0.5, np.array([-1.0, 0.0, -0.3]), \
        r.standard_normal((9, 3)), r.integers(0, 4, 9)


# ---- 38. Cox partial likelihood by a reversed cumulative sum ------------------------------

def cox_partial_likelihood(beta, X, time, event):
    order = np.argsort(-time)
    risk = X[order] @ beta
    log_cum = np.log(np.cumsum(np.exp(risk)))
    return -np.sum((risk - log_cum)[event[order] == 1])


def _cox():
    r = rng(1138)
    return r.standard_normal(3) * 0.3, r.standard_normal((8, 3)), r.random(8) * 10, \
        np.array([1, 0, 1, 1, 0, 1, 1, 0])


# ---- 39. hypernetwork: weights generated by reshaping a projection ------------------------

def hypernetwork(H, b_h, z, X, y, shape=(3, 2)):
    W = (z @ H + b_h).reshape(shape)
    pred = np.tanh(X @ W).sum(axis=1)
    return np.mean((pred - y) ** 2)


def _hyp():
    r = rng(1139)
    return (r.standard_normal((4, 6)) * 0.3, np.zeros(6), r.standard_normal(4),
            r.standard_normal((5, 3)), r.standard_normal(5))


# ---- 40. top-1 mixture of experts, routing by argmax --------------------------------------

def moe_top1(Wg, We, X, y):
    gate = scipy.special.softmax(X @ Wg, axis=1)
    choice = np.argmax(gate, axis=1)
    expert_out = np.einsum("nd,edo->neo", X, We)
    picked = expert_out[np.arange(len(X)), choice]
    out = gate[np.arange(len(X)), choice][:, None] * picked
    load = np.bincount(choice, minlength=We.shape[0]) / len(X)
    aux = We.shape[0] * np.sum(load * gate.mean(axis=0))
    return np.mean((out[:, 0] - y) ** 2) + 0.01 * aux


def _moe():
    r = rng(1140)
    return r.standard_normal((3, 3)), r.standard_normal((3, 3, 1)) * 0.5, \
        r.standard_normal((8, 3)), r.standard_normal(8)


# ---- 41. tied-weight sparse autoencoder with a KL sparsity penalty ------------------------

def sparse_tied_autoencoder(W, b, c, X, rho=0.1, beta=0.5):
    h = scipy.special.expit(X @ W + b)
    X_hat = h @ W.T + c
    rho_hat = h.mean(axis=0)
    kl = np.sum(rho * np.log(rho / rho_hat) + (1 - rho) * np.log((1 - rho) / (1 - rho_hat)))
    return 0.5 * np.sum((X_hat - X) ** 2) / len(X) + beta * kl


def _sta():
    r = rng(1141)
    return (r.standard_normal((5, 3)) * 0.3, np.zeros(3), np.zeros(5),
            r.standard_normal((6, 5)))


# ---- 42. contractive autoencoder: the Jacobian's Frobenius norm in closed form ------------

def contractive_autoencoder(W, b, Wd, X, lam=0.1):
    h = 1 / (1 + np.exp(-(X @ W + b)))
    rec = h @ Wd
    jac = np.sum((h * (1 - h)) ** 2 @ np.sum(W ** 2, axis=0)[:, None])
    return np.mean((rec - X) ** 2) + lam * jac


def _cae():
    r = rng(1142)
    return r.standard_normal((4, 3)) * 0.5, np.zeros(3), r.standard_normal((3, 4)) * 0.5, \
        r.standard_normal((5, 4))


# ---- 43. GRU with gates split by np.split --------------------------------------------------

def gru_split(Wx, Wh, b, xs, h0):
    h = h0
    H = h0.shape[-1]
    for x in xs:
        gx = x @ Wx + b
        gh = h @ Wh
        xz, xr, xn = np.split(gx, 3, axis=-1)
        hz, hr, hn = np.split(gh, [H, 2 * H], axis=-1)
        z = scipy.special.expit(xz + hz)
        r_ = scipy.special.expit(xr + hr)
        n = np.tanh(xn + r_ * hn)
        h = (1 - z) * n + z * h
    return np.sum(h ** 2)


def _grus():
    r = rng(1143)
    return (r.standard_normal((3, 6)) * 0.5, r.standard_normal((2, 6)) * 0.5,
            np.zeros(6), r.standard_normal((4, 2, 3)), np.zeros((2, 2)))


# ---- 44. spring network: edges iterated as (i, j) tuples with rest lengths ----------------

def spring_network(pos, k, edges, rest):
    energy = 0.0
    for (i, j), L0 in zip(edges, rest):
        d = np.linalg.norm(pos[i] - pos[j])
        energy += 0.5 * k * (d - L0) ** 2
    return energy + 0.01 * np.sum(pos[:, 1])


def _springs():
    r = rng(1144)
    return (r.standard_normal((4, 2)), np.float64(2.0),
            [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)], [1.0, 1.0, 1.0, 1.0, 1.4])


# ---- 45. rng passed around: Gaussian noise injection by helper functions ------------------

def add_gaussian_noise(x, scale, gen):
    return x + scale * gen.normal(size=x.shape)


def denoising_rng(W, X, seed=3):
    gen = np.random.default_rng(seed)
    noisy = add_gaussian_noise(X, 0.1, gen)
    code = np.tanh(noisy @ W)
    rec = code @ W.T
    return np.mean((rec - X) ** 2)


def _drng():
    r = rng(1145)
    return r.standard_normal((4, 2)) * 0.5, r.standard_normal((6, 4))


# ---- 46. a pre-LN transformer block whose config is a frozen dataclass --------------------

@dataclass(frozen=True)
class BlockConfig:
    d_model: int = 4
    n_heads: int = 2
    eps: float = 1e-5


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


class Block:
    def __init__(self, params: dict, cfg: BlockConfig = BlockConfig()):
        self.p, self.cfg = params, cfg

    def ln(self, x, g, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return g * (x - mu) / np.sqrt(var + self.cfg.eps) + b

    def attn(self, x):
        T, D = x.shape
        hd = D // self.cfg.n_heads
        q, k, v = np.split(x @ self.p["qkv"], 3, axis=1)
        q, k, v = (a.reshape(T, self.cfg.n_heads, hd).transpose(1, 0, 2) for a in (q, k, v))
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hd)
        s = s + np.triu(np.full((T, T), -1e9), 1)
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        return (w @ v).transpose(1, 0, 2).reshape(T, D) @ self.p["proj"]

    def __call__(self, x):
        x = x + self.attn(self.ln(x, self.p["g1"], self.p["b1"]))
        return x + gelu_tanh(self.ln(x, self.p["g2"], self.p["b2"]) @ self.p["fc"]) \
            @ self.p["fc2"]


def pre_ln_block(params, x):
    return np.sum(Block(params)(x) ** 2)


def _pln():
    r = rng(1146)
    p = {"qkv": r.standard_normal((4, 12)) * 0.4, "proj": r.standard_normal((4, 4)) * 0.4,
         "g1": np.ones(4), "b1": np.zeros(4), "g2": np.ones(4) + 0.1, "b2": np.zeros(4),
         "fc": r.standard_normal((4, 8)) * 0.4, "fc2": r.standard_normal((8, 4)) * 0.4}
    return p, r.standard_normal((5, 4))


# ---- 47. Poisson GLM with an offset and gammaln -------------------------------------------

def poisson_glm(beta, X, counts, exposure):
    eta = X @ beta + np.log(exposure)
    return -np.sum(counts * eta - np.exp(eta) - scipy.special.gammaln(counts + 1))


def _pglm():
    r = rng(1147)
    return r.standard_normal(3) * 0.3, r.standard_normal((9, 3)), \
        r.integers(0, 6, 9).astype(float), r.random(9) + 0.5


# ---- 48. staticmethod activations dispatched through getattr on the class -----------------

class Activations:
    @staticmethod
    def relu(x):
        return np.maximum(x, 0)

    @staticmethod
    def swish(x):
        return x / (1 + np.exp(-x))


def getattr_static_activation(W1, W2, X, act="swish"):
    f = getattr(Activations, act)
    return np.sum(f(f(X @ W1) @ W2) ** 2)


def _gsa():
    r = rng(1148)
    return r.standard_normal((3, 4)), r.standard_normal((4, 2)), r.standard_normal((5, 3))


# ---- 49. a tuple of layer objects with __slots__ ----------------------------------------

class SlotDense:
    __slots__ = ("W", "b", "act")

    def __init__(self, W, b, act="tanh"):
        self.W, self.b, self.act = W, b, act

    def __call__(self, x):
        z = x @ self.W + self.b
        return np.tanh(z) if self.act == "tanh" else z


def slots_layers(W1, b1, W2, X):
    net = (SlotDense(W1, b1), SlotDense(W2, 0.0, act="linear"))
    for layer in net:
        X = layer(X)
    return np.sum(X ** 2)


def _slots():
    r = rng(1150)
    return r.standard_normal((3, 4)), r.standard_normal(4), r.standard_normal((4, 2)), \
        r.standard_normal((5, 3))


# ---- 50. hierarchical softmax over per-word paths (lists of lists) -------------------------

PATHS = {0: ([0, 1], [1.0, 1.0]), 1: ([0, 1], [1.0, -1.0]), 2: ([0, 2], [-1.0, 1.0]),
         3: ([0, 2], [-1.0, -1.0])}


def hierarchical_softmax(E, N, contexts, targets):
    loss = 0.0
    for c, t in zip(contexts, targets):
        nodes, signs = PATHS[int(t)]
        h = E[c]
        for node, sgn in zip(nodes, signs):
            loss -= np.log(1.0 / (1.0 + np.exp(-sgn * (N[node] @ h))))
    return loss / len(targets)


def _hs():
    r = rng(1151)
    return r.standard_normal((5, 3)) * 0.5, r.standard_normal((3, 3)) * 0.5, \
        np.array([0, 3, 4, 1]), np.array([1, 2, 3, 0])


# ---- 51. top-k mixture of experts, gates renormalised over the chosen -------------------

def topk_moe(Wg, We, X, k=2):
    logits = X @ Wg
    top = np.argsort(-logits, axis=1)[:, :k]
    chosen = np.take_along_axis(logits, top, axis=1)
    gates = np.exp(chosen - chosen.max(axis=1, keepdims=True))
    gates /= gates.sum(axis=1, keepdims=True)
    outs = np.einsum("nd,edo->neo", X, We)
    picked = np.take_along_axis(outs, top[:, :, None], axis=1)
    return np.sum((gates[:, :, None] * picked).sum(axis=1) ** 2)


def _tkm():
    r = rng(1152)
    return r.standard_normal((3, 4)), r.standard_normal((4, 3, 2)) * 0.5, \
        r.standard_normal((6, 3))


# ---- 52. Gumbel-softmax with the noise passed in ---------------------------------------------

def gumbel_softmax(logits_W, X, U, tau=0.5):
    g = -np.log(-np.log(U + 1e-10) + 1e-10)
    y = (X @ logits_W + g) / tau
    y = np.exp(y - y.max(axis=-1, keepdims=True))
    y = y / y.sum(axis=-1, keepdims=True)
    return np.sum(y * np.arange(y.shape[-1]))


def _gum():
    r = rng(1153)
    return r.standard_normal((3, 4)), r.standard_normal((5, 3)), r.random((5, 4))


# ---- 53. spectral normalisation by power iteration -------------------------------------------

def spectral_norm(W, X, u0, n_iter=3):
    u = u0
    for _ in range(n_iter):
        v = W.T @ u
        v = v / np.linalg.norm(v)
        u = W @ v
        u = u / np.linalg.norm(u)
    sigma = u @ W @ v
    return np.sum(np.tanh(X @ (W / sigma).T) ** 2)


def _spn():
    r = rng(1154)
    return r.standard_normal((4, 3)), r.standard_normal((5, 3)), r.standard_normal(4)


# ---- 54. PageRank by a while loop until converged -------------------------------------------

def pagerank_while(w, A, d=0.85, tol=1e-10):
    W = A * np.exp(w)
    P = W / W.sum(axis=0, keepdims=True)
    n = len(A)
    r = np.full(n, 1.0 / n)
    diff, it = 1.0, 0
    while diff > tol and it < 200:
        r_new = (1 - d) / n + d * P @ r
        diff = np.abs(r_new - r).sum()
        r = r_new
        it += 1
    return r @ np.arange(n)


def _pr():
    r = rng(1155)
    A = (r.random((5, 5)) < 0.6).astype(float) + np.eye(5)
    return r.standard_normal((5, 5)) * 0.3, A


# ---- 55. siamese contrastive loss on pairs ----------------------------------------------------

def siamese_contrastive(W, X1, X2, same, margin=1.0):
    e1, e2 = np.tanh(X1 @ W), np.tanh(X2 @ W)
    d = np.sqrt(np.sum((e1 - e2) ** 2, axis=1) + 1e-9)
    return np.mean(same * d ** 2 + (1 - same) * np.maximum(margin - d, 0) ** 2)


def _siam():
    r = rng(1156)
    return (r.standard_normal((3, 2)), r.standard_normal((6, 3)), r.standard_normal((6, 3)),
            np.array([1, 0, 1, 0, 0, 1]))


# ---- 56. batched matrix products by einsum with an ellipsis ---------------------------------

def einsum_ellipsis(A, B, x):
    C = np.einsum("...ij,...jk->...ik", A, B)
    d = np.einsum("...ii->...i", C)
    return np.sum(np.einsum("...i,i->...", d, x) ** 2) + np.einsum("bij,bij->", A, A)


def _ell():
    r = rng(1157)
    return r.standard_normal((2, 3, 3)), r.standard_normal((2, 3, 3)), r.standard_normal(3)


# ---- 57. a tied-embedding language model on one-hot rows of np.eye ---------------------------

def tied_lm(E, Wh, tokens):
    V = E.shape[0]
    onehot = np.eye(V)[tokens[:-1]]
    h = np.zeros(E.shape[1])
    loss = 0.0
    for t, x in enumerate(onehot):
        h = np.tanh(x @ E + h @ Wh)
        logits = E @ h
        loss += np.log(np.sum(np.exp(logits))) - logits[tokens[t + 1]]
    return loss


def _tlm():
    r = rng(1158)
    return r.standard_normal((6, 3)) * 0.5, r.standard_normal((3, 3)) * 0.5, \
        np.array([0, 4, 2, 5, 1])


PROGRAMS = [
    Probe("wild_repos6.kalman_filter_class", kalman_filter_class, _kf, ("log_q", "log_r", "A")),
    Probe("wild_repos6.planar_flows", planar_flows, _planar, ("U", "Wf", "bf")),
    Probe("wild_repos6.realnvp_nll", realnvp_nll, _nvp, ("Ws", "Wt"), fuse=True),
    Probe("wild_repos6.gcn_masked", gcn_masked, _gcn, ("W1", "W2")),
    Probe("wild_repos6.message_passing", message_passing, _mpnn, ("W_msg", "W_upd", "h0")),
    Probe("wild_repos6.scatter_mean_readout", scatter_mean_readout, _smr, ("W", "X")),
    Probe("wild_repos6.gat_dense", gat_dense, _gat, ("W", "a_src", "a_dst")),
    Probe("wild_repos6.multi_query_attention", multi_query_attention, _mqa,
          ("Wq", "Wk", "Wv", "Wo")),
    Probe("wild_repos6.relative_position_attention", relative_position_attention, _rpa,
          ("Wq", "Wk", "bias_table")),
    Probe("wild_repos6.alibi_attention", alibi_attention, _alibi, ("Wqkv", "x")),
    Probe("wild_repos6.rotary_attention", rotary_attention, _rope, ("Wq", "Wk", "x")),
    Probe("wild_repos6.kv_cache_decode", kv_cache_decode, _kv, ("Wq", "Wk", "Wv")),
    Probe("wild_repos6.layers_with_caches", layers_with_caches, _lwc, ("W1", "b1", "W2")),
    Probe("wild_repos6.sequential_from_config", sequential_from_config, _sfc, "params"),
    Probe("wild_repos6.momentum_unrolled", momentum_unrolled, _mom, ("w0", "b0")),
    Probe("wild_repos6.seeded_dropout", seeded_dropout, _sdrop, ("W1", "W2"), fuse=True),
    Probe("wild_repos6.batchnorm_running", batchnorm_running, _bnr, ("W", "gamma", "beta")),
    Probe("wild_repos6.cvae_loss", cvae_loss, _cvae, ("We", "Wmu", "Wlv", "Wd"), fuse=True),
    Probe("wild_repos6.dataclass_post_init", dataclass_post_init, _dpi, ("W1", "W2")),
    Probe("wild_repos6.super_kwargs_chain", super_kwargs_chain, _skc, ("W1", "W2", "b2")),
    Probe("wild_repos6.optional_mask", optional_mask, _om, ("W", "v")),
    Probe("wild_repos6.cbow_loss", cbow_loss, _cbow, ("E", "W_out")),
    Probe("wild_repos6.glove_loss", glove_loss, _glove, ("W", "Wc", "b", "bc")),
    Probe("wild_repos6.biased_mf", biased_mf, _bmf, ("P", "Q", "bu", "bi")),
    Probe("wild_repos6.ovr_squared_hinge", ovr_squared_hinge, _ovr, ("W", "b")),
    Probe("wild_repos6.crammer_singer", crammer_singer, _cs, "W"),
    Probe("wild_repos6.gp_periodic_nll", gp_periodic_nll, _gpp, "theta", tol=1e-4),
    Probe("wild_repos6.gmm_elbo", gmm_elbo, _gmme, ("means", "chol_params", "logits"),
          tol=1e-4),
    Probe("wild_repos6.ctc_loss", ctc_loss, _ctc, "W"),
    Probe("wild_repos6.hmm_backward_loglik", hmm_backward_loglik, _hmmb,
          ("log_A_raw", "log_B_raw", "log_pi_raw")),
    Probe("wild_repos6.lennard_jones", lennard_jones, _lj, "pos", tol=1e-4),
    Probe("wild_repos6.burgers_upwind", burgers_upwind, _burg, ("u0", "nu"), fuse=True),
    Probe("wild_repos6.poisson_residual", poisson_residual, _poi, ("u_inner", "f")),
    Probe("wild_repos6.neural_ode", neural_ode, _node, ("W1", "W2", "h0")),
    Probe("wild_repos6.ppo_loss", ppo_loss, _ppo, "W"),
    Probe("wild_repos6.factorization_machine", factorization_machine, _fm, ("w0", "w", "V")),
    Probe("wild_repos6.ordinal_logit", ordinal_logit, _ord, ("w", "theta_raw")),
    Probe("wild_repos6.cox_partial_likelihood", cox_partial_likelihood, _cox, "beta"),
    Probe("wild_repos6.hypernetwork", hypernetwork, _hyp, ("H", "b_h", "z")),
    Probe("wild_repos6.moe_top1", moe_top1, _moe, ("Wg", "We")),
    Probe("wild_repos6.sparse_tied_autoencoder", sparse_tied_autoencoder, _sta, ("W", "b", "c"),
          fuse=True),
    Probe("wild_repos6.contractive_autoencoder", contractive_autoencoder, _cae, ("W", "b", "Wd")),
    Probe("wild_repos6.gru_split", gru_split, _grus, ("Wx", "Wh", "b")),
    Probe("wild_repos6.spring_network", spring_network, _springs, ("pos", "k")),
    Probe("wild_repos6.denoising_rng", denoising_rng, _drng, "W"),
    Probe("wild_repos6.pre_ln_block", pre_ln_block, _pln, "params"),
    Probe("wild_repos6.poisson_glm", poisson_glm, _pglm, "beta"),
    Probe("wild_repos6.getattr_static_activation", getattr_static_activation, _gsa,
          ("W1", "W2")),
    Probe("wild_repos6.slots_layers", slots_layers, _slots, ("W1", "b1", "W2")),
    Probe("wild_repos6.hierarchical_softmax", hierarchical_softmax, _hs, ("E", "N")),
    Probe("wild_repos6.topk_moe", topk_moe, _tkm, ("Wg", "We")),
    Probe("wild_repos6.gumbel_softmax", gumbel_softmax, _gum, "logits_W", fuse=True),
    Probe("wild_repos6.spectral_norm", spectral_norm, _spn, "W", tol=1e-4),
    Probe("wild_repos6.pagerank_while", pagerank_while, _pr, "w", tol=1e-4),
    Probe("wild_repos6.siamese_contrastive", siamese_contrastive, _siam, "W"),
    Probe("wild_repos6.einsum_ellipsis", einsum_ellipsis, _ell, ("A", "B", "x")),
    Probe("wild_repos6.tied_lm", tied_lm, _tlm, ("E", "Wh")),
]
