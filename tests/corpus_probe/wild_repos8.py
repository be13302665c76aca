"""Ninth set of programs in the styles of public numpy-from-scratch code (read for patterns
only, written here from scratch): layer libraries whose classes register themselves in a
module-level dict through a decorator (``@register("gelu")``), ``Module.__call__(self,
*args, **kwargs)`` forwarding to ``forward`` through three levels of ``super().forward``,
``@dataclass`` layers with ``__call__`` and a string activation, keyword-only helpers
(``dense(x, W, *, b=None, act=None)``), ``compose(*fns)`` closures over lambdas, ``train()``
/ ``eval()`` returning ``self``, a ``contextlib.contextmanager`` switching a model to
evaluation, class constants (``EPS = 1e-7``), scikit-style estimators with ``fit_intercept``
and a ``_design`` helper, module-level ``CONFIG`` dicts, ``try/except KeyError`` loss
lookup, early returns for 1-D inputs, ``enumerate(reversed(Ws), start=1)``,
``itertools.pairwise``, lists of ``[W, b]`` lists, ``dict.get`` with defaults, ``sorted``
parameter items, mixins under multiple inheritance, ``scale = scale or ...``; CNN code
(transposed convolution by col2im with ``np.add.at`` over ``(slice(None), k, i, j)``, a
depthwise convolution accumulated over shifted slices, bilinear grid sampling with
``np.floor(..).astype(int)``); sequence models (an LSTM stepping a dataclass state,
a minimal gated unit over ``enumerate(xs)`` stacked by ``np.stack``, a length-masked RNN
keeping state by ``np.where``, cross-attention with key padding masks from lengths, a
fastText bag of embeddings by ``np.add.at``, padded embedding means); generative and
probabilistic code (a VAE returning a ``Gaussian`` dataclass with ``std`` a property, one EM
step of a GMM followed by its log-likelihood, an RTS Kalman smoother, importance sampling
with ``scipy.special.logsumexp(b=)``, discrete-time survival by ``np.cumprod(axis=1)``);
losses (focal, label smoothing, InfoNCE, batch-hard triplet with ``np.where(.., np.inf)``,
Poisson deviance with ``np.maximum(y, 1e-12)``, log-cosh by ``np.logaddexp``); optimisation
(ridge hypergradients through ``np.linalg.solve``, a MAML inner step written as a dict
comprehension, a fixed-point layer with ``for .. else``, Sinkhorn in the log domain, soft-DTW
with builtin ``max`` of three scalars, sliced Wasserstein by ``np.sort(axis=0)``,
``np.polyval`` fits); physics (a pendulum class stepped symplectically, a 2-D heat equation
writing ``u[1:-1, 1:-1]``, a wave equation rotating three time levels, softened N-body
leapfrog, Kuramoto oscillators with ``np.hypot``, planar arm kinematics with ``np.cumsum``
and ``np.arctan2``); group means from ``np.unique(return_inverse=True)``; array-method
style (``x.dot(W).clip(0)``, ``.var(0)``, ``.swapaxes``, ``.cumsum``, ``.prod``)."""

from __future__ import annotations

import contextlib
import itertools
import math
from dataclasses import dataclass

import numpy as np
import scipy.special

from . import Probe, rng


# ---- 1. classes registered by a decorator in a module-level dict -------------------------

ACTIVATIONS = {}


def register(name):
    def deco(cls):
        ACTIVATIONS[name] = cls
        return cls
    return deco


@register("gelu")
class GELU:
    def __call__(self, x):
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


@register("softplus")
class Softplus:
    def __init__(self, beta=1.0):
        self.beta = beta

    def __call__(self, x):
        return np.logaddexp(0.0, self.beta * x) / self.beta


def registry_decorator_acts(W1, W2, x, names=("gelu", "softplus")):
    h = x
    for W, name in zip((W1, W2), names):
        act = ACTIVATIONS[name]()
        h = act(h @ W)
    return np.mean(h ** 2)


def _reg():
    r = rng(1)
    return r.standard_normal((3, 4)), r.standard_normal((4, 2)), r.standard_normal((5, 3))


# ---- 2. Module.__call__(*args, **kwargs) and three levels of super().forward ----------------

class Module:
    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class Linear(Module):
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward(self, x):
        return x @ self.W + self.b


class ScaledLinear(Linear):
    def __init__(self, W, b, scale=0.5):
        super().__init__(W, b)
        self.scale = scale

    def forward(self, x):
        return super().forward(x) * self.scale


class ResidualScaled(ScaledLinear):
    def forward(self, x, gate=1.0):
        return x + gate * np.tanh(super().forward(x))


def three_level_super(W, b, x):
    block = ResidualScaled(W, b, scale=0.8)
    y = block(x)
    y = block(y, gate=0.5)
    return np.sum(y ** 2)


def _tls():
    r = rng(2)
    return r.standard_normal((4, 4)) * 0.5, r.standard_normal(4), r.standard_normal((3, 4))


# ---- 3. dataclass layers with __call__ and a string activation ----------------------------

ACT_FNS = {"relu": lambda z: np.maximum(z, 0.0), "tanh": np.tanh, "linear": lambda z: z}


@dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray
    activation: str = "relu"

    def __call__(self, x):
        z = x @ self.W + self.b
        return ACT_FNS[self.activation](z)


def dataclass_layer_call(params, x, y):
    acts = ["tanh", "relu", "linear"]
    layers = [Dense(p["W"], p["b"], a) for p, a in zip(params, acts)]
    h = x
    for layer in layers:
        h = layer(h)
    return 0.5 * np.mean((h - y) ** 2)


def _dlc():
    r = rng(3)
    sizes = [3, 5, 4, 2]
    params = [{"W": r.standard_normal((m, n)) * 0.6, "b": r.standard_normal(n) * 0.1}
              for m, n in zip(sizes, sizes[1:])]
    return params, r.standard_normal((6, 3)), r.standard_normal((6, 2))


# ---- 4. keyword-only helper arguments with None defaults ---------------------------------

def dense(x, W, *, b=None, act=None):
    y = x @ W
    if b is not None:
        y = y + b
    if act is not None:
        y = act(y)
    return y


def kwonly_optional_bias(W1, b1, W2, x):
    h = dense(x, W1, b=b1, act=np.tanh)
    out = dense(h, W2)
    return np.sum(dense(out, np.eye(out.shape[1]), act=np.exp))


def _kw():
    r = rng(4)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal(4), r.standard_normal((4, 2)) * 0.5,
            r.standard_normal((5, 3)))


# ---- 5. compose(*fns) over lambdas closing over the weights -------------------------------

def compose(*fns):
    def run(x):
        for f in fns:
            x = f(x)
        return x
    return run


def chain_star_args(W1, W2, x):
    net = compose(lambda h: h @ W1, np.tanh, lambda h: h @ W2, np.sin)
    return np.sum(net(x) ** 2)


def _chain():
    r = rng(5)
    return r.standard_normal((3, 4)), r.standard_normal((4, 2)), r.standard_normal((4, 3))


# ---- 6. train() / eval() return self ----------------------------------------------------

class DropoutMLP:
    def __init__(self, W1, W2, p=0.5):
        self.W1, self.W2, self.p = W1, W2, p
        self.training = True

    def train(self):
        self.training = True
        return self

    def eval(self):
        self.training = False
        return self

    def __call__(self, x, mask=None):
        h = np.maximum(x @ self.W1, 0.0)
        if self.training and mask is not None:
            h = h * mask / (1.0 - self.p)
        return h @ self.W2


def method_chaining_train_eval(W1, W2, x, mask):
    model = DropoutMLP(W1, W2)
    train_out = model.train()(x, mask)
    eval_out = model.eval()(x, mask)
    return np.sum(train_out ** 2) + np.sum(np.abs(eval_out))


def _mcte():
    r = rng(6)
    return (r.standard_normal((3, 5)), r.standard_normal((5, 2)), r.standard_normal((4, 3)),
            (r.random((4, 5)) > 0.5).astype(float))


# ---- 7. a context manager switching the model to evaluation ------------------------------

@contextlib.contextmanager
def evaluating(model):
    was = model.training
    model.training = False
    try:
        yield model
    finally:
        model.training = was


def context_manager_eval(W1, W2, x, mask):
    model = DropoutMLP(W1, W2)
    with evaluating(model):
        clean = model(x, mask)
    noisy = model(x, mask)
    return np.sum((clean - noisy) ** 2) + np.sum(clean)


# ---- 8. class constants and a property on a loss object ----------------------------------

class BCELoss:
    EPS = 1e-7

    def __init__(self, reduction="mean"):
        self.reduction = reduction

    def __call__(self, p, y):
        p = np.clip(p, self.EPS, 1 - self.EPS)
        per = -(y * np.log(p) + (1 - y) * np.log(1 - p))
        return per.mean() if self.reduction == "mean" else per.sum()


class LogisticModel:
    def __init__(self, w, b):
        self._w = w
        self.b = b

    @property
    def coef_(self):
        return self._w.ravel()

    def predict_proba(self, X):
        return 1.0 / (1.0 + np.exp(-(X @ self.coef_ + self.b)))


def class_constant_eps(w, b, X, y):
    model = LogisticModel(w, b)
    return BCELoss()(model.predict_proba(X), y) + BCELoss("sum")(model.predict_proba(X[:2]), y[:2])


def _cce():
    r = rng(8)
    return (r.standard_normal((3, 1)), r.standard_normal(1) * 0.1, r.standard_normal((7, 3)),
            (r.random(7) > 0.5).astype(float))


# ---- 9. a scikit-style estimator: fit_intercept and a _design helper ---------------------

class RidgeRegressor:
    def __init__(self, alpha=1.0, fit_intercept=True):
        self.alpha = alpha
        self.fit_intercept = fit_intercept

    def _design(self, X):
        if self.fit_intercept:
            return np.hstack([np.ones((X.shape[0], 1)), X])
        return X

    def loss(self, w, X, y):
        A = self._design(X)
        resid = A @ w - y
        reg = w[1:] if self.fit_intercept else w
        return resid @ resid / len(y) + self.alpha * reg @ reg


def sklearn_like_estimator(w, v, X, y):
    with_b = RidgeRegressor(alpha=0.1)
    without = RidgeRegressor(alpha=0.3, fit_intercept=False)
    return with_b.loss(w, X, y) + without.loss(v, X, y)


def _ske():
    r = rng(9)
    return (r.standard_normal(4), r.standard_normal(3), r.standard_normal((8, 3)),
            r.standard_normal(8))


# ---- 10. a module-level CONFIG dict -------------------------------------------------------

CONFIG = {"n_layers": 2, "act": "tanh", "eps": 1e-5, "residual": True}


def layer_norm(x, g, b, eps=CONFIG["eps"]):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return g * (x - mu) / np.sqrt(var + eps) + b


def config_dict_module(Ws, g, b, x):
    act = getattr(np, CONFIG["act"])
    for i in range(CONFIG["n_layers"]):
        h = act(layer_norm(x, g, b) @ Ws[i])
        x = x + h if CONFIG["residual"] else h
    return np.sum(x ** 2)


def _cfg():
    r = rng(10)
    return ([r.standard_normal((4, 4)) * 0.5 for _ in range(2)], 1 + 0.1 * r.standard_normal(4),
            0.1 * r.standard_normal(4), r.standard_normal((3, 4)))


# ---- 11. try/except KeyError around a loss lookup -----------------------------------------

def huber(r, delta=1.0):
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta))


def logcosh(r):
    return np.logaddexp(r, -r) - np.log(2.0)


LOSSES = {"huber": huber, "logcosh": logcosh}


def get_loss(name):
    try:
        return LOSSES[name]
    except KeyError:
        raise ValueError(f"unknown loss {name!r}") from None


def try_except_dispatch(w, X, y, name="logcosh"):
    r = X @ w - y
    return np.mean(get_loss(name)(r)) + np.mean(get_loss("huber")(2.0 * r))


def _ted():
    r = rng(11)
    return r.standard_normal(3), r.standard_normal((9, 3)), r.standard_normal(9)


# ---- 12. an early return for 1-D inputs --------------------------------------------------

def as_batch(x):
    if x.ndim == 1:
        return x[None, :]
    return x


def softmax(z, axis=-1):
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def predict(W, x):
    squeeze = x.ndim == 1
    x = as_batch(x)
    out = softmax(x @ W)
    if squeeze:
        return out[0]
    return out


def early_return_helper(W, X, x1, y):
    p = predict(W, X)
    p1 = predict(W, x1)
    return -np.mean(np.log(p[np.arange(len(y)), y])) - np.log(p1[0])


def _erh():
    r = rng(12)
    return (r.standard_normal((3, 4)), r.standard_normal((5, 3)), r.standard_normal(3),
            np.array([0, 3, 1, 1, 2]))


# ---- 13. enumerate(reversed(Ws), start=1) in a tied decoder --------------------------------

def reversed_enumerate_tied(Ws, x):
    h = x
    for W in Ws:
        h = np.tanh(h @ W)
    for depth, W in enumerate(reversed(Ws), start=1):
        h = h @ W.T
        if depth < len(Ws):
            h = np.tanh(h)
    return np.mean((h - x) ** 2)


def _ret():
    r = rng(13)
    return ([r.standard_normal((5, 4)) * 0.5, r.standard_normal((4, 3)) * 0.5],
            r.standard_normal((6, 5)))


# ---- 14. itertools.pairwise over layer weights ---------------------------------------------

def pairwise_penalty(Ws, x):
    h = x
    for W in Ws:
        h = np.maximum(h @ W, 0.01 * (h @ W))
    pen = 0.0
    for A, B in itertools.pairwise(Ws):
        pen = pen + np.sum((A @ B) ** 2)
    return np.sum(h ** 2) + 1e-2 * pen


def _pw():
    r = rng(14)
    return [r.standard_normal((3, 3)) * 0.7 for _ in range(3)], r.standard_normal((4, 3))


# ---- 15. a list of [W, b] lists ------------------------------------------------------------

def list_of_lists_params(params, x, y):
    h = x
    for W, b in params[:-1]:
        h = np.maximum(h @ W + b, 0.0)
    W, b = params[-1]
    logits = h @ W + b
    lse = np.log(np.sum(np.exp(logits - logits.max(1, keepdims=True)), axis=1)) + logits.max(1)
    return np.mean(lse - logits[np.arange(len(y)), y])


def _lol():
    r = rng(15)
    sizes = [3, 6, 5, 4]
    params = [[r.standard_normal((m, n)) * 0.5, r.standard_normal(n) * 0.1]
              for m, n in zip(sizes, sizes[1:])]
    return params, r.standard_normal((7, 3)), np.array([0, 1, 2, 3, 0, 1, 2])


# ---- 16. cross-attention with key padding masks from lengths ------------------------------

class CrossAttention:
    def __init__(self, Wq, Wk, Wv):
        self.Wq, self.Wk, self.Wv = Wq, Wk, Wv

    def __call__(self, x, memory, lengths):
        q = x @ self.Wq
        k = memory @ self.Wk
        v = memory @ self.Wv
        scores = np.einsum("bqd,bkd->bqk", q, k) / np.sqrt(q.shape[-1])
        valid = np.arange(memory.shape[1])[None, :] < lengths[:, None]
        scores = np.where(valid[:, None, :], scores, -1e9)
        return np.einsum("bqk,bkd->bqd", softmax(scores), v)


def cross_attention_lengths(Wq, Wk, Wv, x, memory):
    attn = CrossAttention(Wq, Wk, Wv)
    return np.sum(np.tanh(attn(x, memory, np.array([4, 2]))))


def _cal():
    r = rng(16)
    return (r.standard_normal((4, 3)) * 0.5, r.standard_normal((4, 3)) * 0.5,
            r.standard_normal((4, 3)), r.standard_normal((2, 3, 4)), r.standard_normal((2, 4, 4)))


# ---- 17. transposed convolution by col2im with np.add.at ----------------------------------

def get_im2col_indices(x_shape, fh, fw, padding=0, stride=1):
    N, C, H, W = x_shape
    out_h = (H + 2 * padding - fh) // stride + 1
    out_w = (W + 2 * padding - fw) // stride + 1
    i0 = np.tile(np.repeat(np.arange(fh), fw), C)
    i1 = stride * np.repeat(np.arange(out_h), out_w)
    j0 = np.tile(np.arange(fw), fh * C)
    j1 = stride * np.tile(np.arange(out_w), out_h)
    i = i0.reshape(-1, 1) + i1.reshape(1, -1)
    j = j0.reshape(-1, 1) + j1.reshape(1, -1)
    k = np.repeat(np.arange(C), fh * fw).reshape(-1, 1)
    return k, i, j


def col2im_indices(cols, x_shape, fh, fw, padding=0, stride=1):
    N, C, H, W = x_shape
    x_padded = np.zeros((N, C, H + 2 * padding, W + 2 * padding), dtype=cols.dtype)
    k, i, j = get_im2col_indices(x_shape, fh, fw, padding, stride)
    cols_reshaped = cols.reshape(C * fh * fw, -1, N).transpose(2, 0, 1)
    np.add.at(x_padded, (slice(None), k, i, j), cols_reshaped)
    if padding == 0:
        return x_padded
    return x_padded[:, :, padding:-padding, padding:-padding]


def col2im_transposed_conv(x, w):
    # x: (N, F, h, w) -> (N, C, H, W) with H = (h - 1) * stride + fh
    N, F, h, wd = x.shape
    _, C, fh, fw = w.shape
    stride = 2
    out_shape = (N, C, (h - 1) * stride + fh, (wd - 1) * stride + fw)
    x_cols = x.transpose(1, 2, 3, 0).reshape(F, -1)
    cols = w.reshape(F, -1).T @ x_cols
    out = col2im_indices(cols, out_shape, fh, fw, padding=0, stride=stride)
    return np.sum(np.sin(out) * out)


def _col2im():
    r = rng(17)
    return r.standard_normal((2, 3, 2, 2)), r.standard_normal((3, 2, 3, 3)) * 0.5


# ---- 18. depthwise convolution over shifted slices ----------------------------------------

def depthwise_conv(x, w_dw, w_pw):
    N, C, H, W = x.shape
    kh, kw = w_dw.shape[1:]
    Ho, Wo = H - kh + 1, W - kw + 1
    out = np.zeros((N, C, Ho, Wo))
    for i in range(kh):
        for j in range(kw):
            out += x[:, :, i:i + Ho, j:j + Wo] * w_dw[None, :, i, j, None, None]
    y = np.einsum("nchw,oc->nohw", out, w_pw)
    return np.mean(np.maximum(y, 0.0) ** 2)


def _dw():
    r = rng(18)
    return r.standard_normal((2, 3, 5, 5)), r.standard_normal((3, 3, 3)), r.standard_normal((4, 3))


# ---- 19. bilinear grid sampling (a spatial transformer) -----------------------------------

def bilinear_sample(img, xs, ys):
    H, W = img.shape
    x0 = np.floor(xs).astype(int)
    y0 = np.floor(ys).astype(int)
    x1 = np.clip(x0 + 1, 0, W - 1)
    y1 = np.clip(y0 + 1, 0, H - 1)
    x0 = np.clip(x0, 0, W - 1)
    y0 = np.clip(y0, 0, H - 1)
    wx = xs - np.floor(xs)
    wy = ys - np.floor(ys)
    top = img[y0, x0] * (1 - wx) + img[y0, x1] * wx
    bottom = img[y1, x0] * (1 - wx) + img[y1, x1] * wx
    return top * (1 - wy) + bottom * wy


def bilinear_grid_sample(img, theta):
    gx, gy = np.meshgrid(np.linspace(0.5, 3.3, 4), np.linspace(0.4, 3.2, 3))
    coords = np.stack([gx.ravel(), gy.ravel(), np.ones(gx.size)])
    src = theta @ coords
    out = bilinear_sample(img, src[0], src[1])
    return np.sum(out ** 2)


def _bgs():
    r = rng(19)
    theta = np.array([[0.9, 0.05, 0.13], [-0.04, 0.95, 0.21]])
    return r.standard_normal((5, 5)), theta


# ---- 20. an LSTM stepping a dataclass state ------------------------------------------------

@dataclass
class LSTMState:
    h: np.ndarray
    c: np.ndarray


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_step(W, U, b, x, state):
    z = x @ W + state.h @ U + b
    H = state.h.shape[-1]
    i, f, o, g = (sigmoid(z[:, :H]), sigmoid(z[:, H:2 * H]), sigmoid(z[:, 2 * H:3 * H]),
                  np.tanh(z[:, 3 * H:]))
    c = f * state.c + i * g
    return LSTMState(h=o * np.tanh(c), c=c)


def lstm_dataclass_state(W, U, b, xs):
    B, H = xs.shape[1], U.shape[0]
    state = LSTMState(np.zeros((B, H)), np.zeros((B, H)))
    for x in xs:
        state = lstm_step(W, U, b, x, state)
    return np.sum(state.h ** 2) + 0.1 * np.sum(state.c)


def _lds():
    r = rng(20)
    H, D = 3, 2
    return (r.standard_normal((D, 4 * H)) * 0.5, r.standard_normal((H, 4 * H)) * 0.5,
            r.standard_normal(4 * H) * 0.1, r.standard_normal((4, 2, D)))


# ---- 21. a minimal gated unit over enumerate(xs), stacked ----------------------------------

def mgu_stack(params, xs, targets):
    h = np.zeros(params["Uf"].shape[0])
    outs = []
    for t, x_t in enumerate(xs):
        f = sigmoid(params["Wf"] @ x_t + params["Uf"] @ h + params["bf"])
        h_tilde = np.tanh(params["Wh"] @ x_t + params["Uh"] @ (f * h))
        h = (1 - f) * h + f * h_tilde
        outs.append(h * (t + 1) / len(xs))
    H = np.stack(outs, axis=0)
    return np.mean((H @ params["V"] - targets) ** 2)


def _mgu():
    r = rng(21)
    D, Hd = 2, 3
    params = {"Wf": r.standard_normal((Hd, D)), "Uf": r.standard_normal((Hd, Hd)) * 0.5,
              "bf": np.zeros(Hd), "Wh": r.standard_normal((Hd, D)),
              "Uh": r.standard_normal((Hd, Hd)) * 0.5, "V": r.standard_normal((Hd, 1))}
    xs = [r.standard_normal(D) for _ in range(4)]
    return params, xs, r.standard_normal((4, 1))


# ---- 22. a length-masked RNN keeping its state by np.where ----------------------------------

def masked_rnn_lengths(Wx, Wh, x, lengths):
    B, T, _ = x.shape
    mask = np.arange(T)[None, :] < lengths[:, None]
    h = np.zeros((B, Wh.shape[0]))
    for t in range(T):
        h_new = np.tanh(x[:, t] @ Wx + h @ Wh)
        h = np.where(mask[:, t, None], h_new, h)
    return np.sum(h ** 2)


def _mrl():
    r = rng(22)
    return (r.standard_normal((3, 4)), r.standard_normal((4, 4)) * 0.5,
            r.standard_normal((3, 5, 3)), np.array([5, 2, 3]))


# ---- 23. fastText: a bag of embeddings summed by np.add.at --------------------------------

def fasttext_add_at(E, W, word_ids, sent_ids, y):
    n_sent = sent_ids.max() + 1
    sums = np.zeros((n_sent, E.shape[1]))
    np.add.at(sums, sent_ids, E[word_ids])
    counts = np.bincount(sent_ids, minlength=n_sent)[:, None]
    logits = (sums / counts) @ W
    logp = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)
    return -logp[np.arange(n_sent), y].mean()


def _ft():
    r = rng(23)
    return (r.standard_normal((6, 3)), r.standard_normal((3, 2)),
            np.array([0, 2, 2, 5, 1, 3, 3, 4]), np.array([0, 0, 0, 1, 1, 2, 2, 2]),
            np.array([1, 0, 1]))


# ---- 24. padded embedding means with a PAD mask --------------------------------------------

PAD = 0


def padded_embedding_mean(E, w, ids):
    mask = ids != PAD
    emb = E[ids] * mask[..., None]
    mean = emb.sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
    return np.sum(sigmoid(mean @ w))


def _pem():
    r = rng(24)
    return (r.standard_normal((5, 3)), r.standard_normal(3),
            np.array([[1, 2, 0, 0], [3, 3, 4, 0], [0, 0, 0, 0]]))


# ---- 25. a VAE whose encoder returns a Gaussian dataclass ----------------------------------

@dataclass
class Gaussian:
    mu: np.ndarray
    logvar: np.ndarray

    @property
    def std(self):
        return np.exp(0.5 * self.logvar)

    def sample(self, eps):
        return self.mu + self.std * eps

    def kl(self):
        return -0.5 * np.sum(1 + self.logvar - self.mu ** 2 - np.exp(self.logvar), axis=-1)


def encode(params, x):
    h = np.tanh(x @ params["enc"])
    return Gaussian(h @ params["mu"], h @ params["logvar"])


def vae_dataclass_elbo(params, x, eps):
    q = encode(params, x)
    z = q.sample(eps)
    logits = z @ params["dec"]
    rec = np.sum(np.logaddexp(0.0, logits) - x * logits, axis=-1)
    return np.mean(rec + q.kl())


def _vae():
    r = rng(25)
    params = {"enc": r.standard_normal((4, 3)) * 0.5, "mu": r.standard_normal((3, 2)) * 0.5,
              "logvar": r.standard_normal((3, 2)) * 0.3, "dec": r.standard_normal((2, 4))}
    return params, (r.random((5, 4)) > 0.5).astype(float), r.standard_normal((5, 2))


# ---- 26. one EM step of a GMM, then its log-likelihood --------------------------------------

def gmm_log_prob(X, means, log_var, log_pi):
    d = X.shape[1]
    var = np.exp(log_var)
    diff = X[:, None, :] - means[None, :, :]
    return (log_pi - 0.5 * np.sum(diff ** 2, axis=-1) / var
            - 0.5 * d * (np.log(2 * np.pi) + log_var))


def gmm_em_step_loglik(means, X, log_var, log_pi):
    lp = gmm_log_prob(X, means, log_var, log_pi)
    m = lp.max(axis=1, keepdims=True)
    resp = np.exp(lp - m)
    resp /= resp.sum(axis=1, keepdims=True)
    Nk = resp.sum(axis=0)
    new_means = (resp.T @ X) / Nk[:, None]
    new_log_pi = np.log(Nk / X.shape[0])
    lp2 = gmm_log_prob(X, new_means, log_var, new_log_pi)
    m2 = lp2.max(axis=1)
    return -np.mean(m2 + np.log(np.exp(lp2 - m2[:, None]).sum(axis=1)))


def _gmm():
    r = rng(26)
    X = np.concatenate([r.standard_normal((5, 2)) - 1.5, r.standard_normal((5, 2)) + 1.5])
    return r.standard_normal((2, 2)), X, np.array([0.1, -0.2]), np.log(np.array([0.4, 0.6]))


# ---- 27. a Kalman filter and an RTS smoother ---------------------------------------------

def rts_smoother(A, log_q, log_r, ys):
    n = A.shape[0]
    Q = np.exp(log_q) * np.eye(n)
    R = np.exp(log_r)
    Hm = np.array([[1.0, 0.0]])
    m, P = np.zeros(n), np.eye(n)
    ms, Ps, mps, Pps = [], [], [], []
    for y in ys:
        mp = A @ m
        Pp = A @ P @ A.T + Q
        S = Hm @ Pp @ Hm.T + R
        K = Pp @ Hm.T / S
        m = mp + (K * (y - Hm @ mp)).ravel()
        P = Pp - K @ Hm @ Pp
        ms.append(m)
        Ps.append(P)
        mps.append(mp)
        Pps.append(Pp)
    sm = ms[-1]
    smoothed = [sm]
    for t in reversed(range(len(ys) - 1)):
        G = np.linalg.solve(Pps[t + 1].T, (Ps[t] @ A.T).T).T
        sm = ms[t] + G @ (sm - mps[t + 1])
        smoothed.append(sm)
    smoothed = np.array(smoothed[::-1])
    return np.sum((smoothed[:, 0] - ys) ** 2)


def _rts():
    r = rng(27)
    return (np.array([[1.0, 0.1], [0.0, 0.95]]), np.array([-2.0]), np.array([-1.0]),
            np.cumsum(r.standard_normal(6)) * 0.3)


# ---- 28. importance sampling with scipy.special.logsumexp(b=) -------------------------------

def importance_logsumexp_b(mu, log_s, z, weights):
    s = np.exp(log_s)
    logq = -0.5 * ((z - mu) / s) ** 2 - log_s - 0.5 * np.log(2 * np.pi)
    logp = -0.5 * z ** 2 - 0.5 * np.log(2 * np.pi) - np.log1p(z ** 2) * 0.1
    return -scipy.special.logsumexp(logp - logq, b=weights)


def _isb():
    r = rng(28)
    return np.array(0.3), np.array(-0.2), r.standard_normal(8), np.full(8, 1 / 8)


# ---- 29. discrete-time survival: np.cumprod over axis 1 -------------------------------------

def discrete_survival(w, b_t, X, times, events):
    hazards = sigmoid(X @ w[:, None] + b_t[None, :])
    surv = np.cumprod(1 - hazards, axis=1)
    n = X.shape[0]
    idx = np.arange(n)
    h_at = hazards[idx, times]
    s_before = np.where(times > 0, surv[idx, np.maximum(times - 1, 0)], 1.0)
    lik = np.where(events == 1, h_at * s_before, surv[idx, times])
    return -np.sum(np.log(np.maximum(lik, 1e-12)))


def _ds():
    r = rng(29)
    return (r.standard_normal(3) * 0.5, r.standard_normal(4) * 0.3, r.standard_normal((6, 3)),
            np.array([0, 1, 3, 2, 3, 1]), np.array([1, 0, 1, 1, 0, 1]))


# ---- 30. focal loss ------------------------------------------------------------------------

def focal_loss(W, X, y, gamma=2.0, alpha=0.25):
    p = sigmoid(X @ W)
    p_t = np.where(y == 1, p, 1 - p)
    alpha_t = np.where(y == 1, alpha, 1 - alpha)
    return -np.mean(alpha_t * (1 - p_t) ** gamma * np.log(np.clip(p_t, 1e-12, 1.0)))


def _focal():
    r = rng(30)
    return (r.standard_normal((3, 2)), r.standard_normal((6, 3)),
            (r.random((6, 2)) > 0.5).astype(int))


# ---- 31. label smoothing cross-entropy -------------------------------------------------------

def label_smoothing_xent(W, X, y, eps=0.1):
    logits = X @ W
    N, C = logits.shape
    targets = np.full((N, C), eps / (C - 1))
    targets[np.arange(N), y] = 1 - eps
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -(targets * logp).sum(axis=1).mean()


def _lsx():
    r = rng(31)
    return r.standard_normal((3, 4)), r.standard_normal((5, 3)), np.array([0, 3, 2, 1, 3])


# ---- 32. InfoNCE with a temperature ---------------------------------------------------------

def l2_normalize(z, axis=1):
    return z / np.maximum(np.linalg.norm(z, axis=axis, keepdims=True), 1e-12)


def infonce(W, x1, x2, tau=0.5):
    z1 = l2_normalize(x1 @ W)
    z2 = l2_normalize(x2 @ W)
    sim = z1 @ z2.T / tau
    logp = sim - scipy.special.logsumexp(sim, axis=1, keepdims=True)
    return -np.mean(np.diag(logp))


def _nce():
    r = rng(32)
    x = r.standard_normal((5, 4))
    return r.standard_normal((4, 3)), x, x + 0.3 * r.standard_normal((5, 4))


# ---- 33. batch-hard triplet loss --------------------------------------------------------------

def batch_hard_triplet(W, X, labels, margin=0.3):
    E = X @ W
    d2 = np.sum((E[:, None, :] - E[None, :, :]) ** 2, axis=-1)
    d = np.sqrt(np.maximum(d2, 1e-12))
    same = labels[:, None] == labels[None, :]
    hardest_pos = np.where(same, d, -np.inf).max(axis=1)
    hardest_neg = np.where(~same, d, np.inf).min(axis=1)
    return np.mean(np.maximum(hardest_pos - hardest_neg + margin, 0.0))


def _bht():
    r = rng(33)
    return r.standard_normal((4, 3)), r.standard_normal((6, 4)), np.array([0, 0, 1, 1, 2, 2])


# ---- 34. a GLM with link functions by name, Poisson deviance with guards --------------------

LINKS = {"log": (np.log, np.exp), "identity": (lambda m: m, lambda e: e)}


class PoissonGLM:
    def __init__(self, link="log"):
        self.link = link

    def deviance(self, beta, X, y):
        _, inverse = LINKS[self.link]
        mu = np.maximum(inverse(X @ beta), 1e-12)
        return 2 * np.sum(y * np.log(np.maximum(y, 1e-12) / mu) - (y - mu))


def glm_link_dispatch(beta, X, y):
    return PoissonGLM().deviance(beta, X, y) + PoissonGLM("identity").deviance(beta + 3.0, X, y)


def _glm():
    r = rng(34)
    return r.standard_normal(3) * 0.3, r.random((7, 3)), np.array([0, 1, 3, 0, 2, 1, 4.0])


# ---- 35. ridge hypergradient through np.linalg.solve -----------------------------------------

def ridge_hypergradient(log_lam, X, y, Xv, yv):
    lam = np.exp(log_lam[0])
    d = X.shape[1]
    w = np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ y)
    return np.mean((Xv @ w - yv) ** 2)


def _rh():
    r = rng(35)
    return (np.array([0.2]), r.standard_normal((8, 3)), r.standard_normal(8),
            r.standard_normal((5, 3)), r.standard_normal(5))


# ---- 36. a MAML inner step as a dict comprehension --------------------------------------------

def mse_and_grads(params, X, y):
    err = X @ params["w"] + params["b"] - y
    grads = {"w": 2 * X.T @ err / len(y), "b": 2 * np.mean(err, keepdims=True)}
    return np.mean(err ** 2), grads


def maml_inner_step(params, Xs, ys, Xq, yq, inner_lr=0.1, steps=2):
    fast = dict(params)
    for _ in range(steps):
        _, grads = mse_and_grads(fast, Xs, ys)
        fast = {k: v - inner_lr * grads[k] for k, v in fast.items()}
    loss, _ = mse_and_grads(fast, Xq, yq)
    return loss


def _maml():
    r = rng(36)
    return ({"w": r.standard_normal(3), "b": np.array([0.1])}, r.standard_normal((6, 3)),
            r.standard_normal(6), r.standard_normal((4, 3)), r.standard_normal(4))


# ---- 37. a fixed-point layer with for .. else --------------------------------------------------

def fixed_point_layer(W, U, x, max_iter=60, tol=1e-13):
    z = np.zeros(W.shape[0])
    for _ in range(max_iter):
        z_next = np.tanh(W @ z + U @ x)
        if np.max(np.abs(z_next - z)) < tol:
            z = z_next
            break
        z = z_next
    else:
        raise RuntimeError("fixed point did not converge")
    return np.sum(z ** 2)


def _fpl():
    r = rng(37)
    return r.standard_normal((3, 3)) * 0.2, r.standard_normal((3, 2)), r.standard_normal(2)


# ---- 38. Sinkhorn in the log domain ----------------------------------------------------------

def lse(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def sinkhorn_log(x, y, eps=0.5, n_iter=15):
    C = np.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
    n, m = C.shape
    log_a = np.full(n, -np.log(n))
    log_b = np.full(m, -np.log(m))
    f = np.zeros(n)
    g = np.zeros(m)
    for _ in range(n_iter):
        f = -eps * lse((g[None, :] - C) / eps + log_b[None, :], axis=1)
        g = -eps * lse((f[:, None] - C) / eps + log_a[:, None], axis=0)
    P = np.exp((f[:, None] + g[None, :] - C) / eps + log_a[:, None] + log_b[None, :])
    return np.sum(P * C)


def _sk():
    r = rng(38)
    return r.standard_normal((4, 2)), r.standard_normal((5, 2)) + 0.5


# ---- 39. soft-DTW with builtin max of three scalars --------------------------------------------

def softmin3(a, b, c, gamma):
    a, b, c = -a / gamma, -b / gamma, -c / gamma
    m = max(a, b, c)
    return -gamma * (np.log(np.exp(a - m) + np.exp(b - m) + np.exp(c - m)) + m)


def soft_dtw(x, y, gamma=0.5):
    D = (x[:, None] - y[None, :]) ** 2
    n, m = D.shape
    R = np.full((n + 1, m + 1), np.inf)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            R[i, j] = D[i - 1, j - 1] + softmin3(R[i - 1, j - 1], R[i - 1, j], R[i, j - 1], gamma)
    return R[n, m]


def _sdtw():
    r = rng(39)
    return r.standard_normal(4), r.standard_normal(3)


# ---- 40. sliced Wasserstein by np.sort over axis 0 ----------------------------------------------

def sliced_wasserstein(x, y, dirs):
    px = np.sort(x @ dirs, axis=0)
    py = np.sort(y @ dirs, axis=0)
    return np.mean((px - py) ** 2)


def _swd():
    r = rng(40)
    dirs = r.standard_normal((2, 3))
    dirs /= np.linalg.norm(dirs, axis=0)
    return r.standard_normal((6, 2)), r.standard_normal((6, 2)) * 2, dirs


# ---- 41. np.polyval fits ----------------------------------------------------------------------

def polyval_fit(coeffs, t, y):
    resid = np.polyval(coeffs, t) - y
    smooth = np.polyval(np.polyder(coeffs), t)
    return np.mean(resid ** 2) + 1e-2 * np.mean(smooth ** 2)


def _pv():
    r = rng(41)
    t = np.linspace(-1, 1, 9)
    return r.standard_normal(4), t, np.sin(2 * t)


# ---- 42. a pendulum class stepped symplectically -----------------------------------------------

class Pendulum:
    def __init__(self, params, g=9.81):
        self.length = params[0]
        self.damping = params[1]
        self.g = g

    def step(self, state, dt):
        th, om = state
        om = om - dt * (self.g / self.length * np.sin(th) + self.damping * om)
        th = th + dt * om
        return th, om


def pendulum_symplectic(params, observed, dt=0.05):
    pend = Pendulum(params)
    state = (0.8, 0.0)
    thetas = []
    for _ in range(len(observed)):
        state = pend.step(state, dt)
        thetas.append(state[0])
    return np.mean((np.array(thetas) - observed) ** 2)


def _pend():
    return np.array([1.3, 0.2]), 0.8 * np.cos(np.arange(1, 9) * 0.15)


# ---- 43. a 2-D heat equation writing the interior ---------------------------------------------

def heat_2d_interior(u0, alpha, steps=4):
    u = u0.copy()
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha[0] * lap
    return np.sum(u ** 2) + np.sum(u[2, :])


def _heat():
    r = rng(43)
    return r.standard_normal((5, 6)), np.array([0.15])


# ---- 44. a wave equation rotating three time levels --------------------------------------------

def wave_three_levels(u0, c, steps=5):
    u_prev = u0
    u = u0.copy()
    for _ in range(steps):
        lap = np.roll(u, 1) + np.roll(u, -1) - 2 * u
        u_next = 2 * u - u_prev + (c[0] ** 2) * lap
        u_prev, u = u, u_next
    return np.sum(u ** 2) - np.sum(u * u_prev)


def _wave():
    r = rng(44)
    return np.exp(-np.linspace(-2, 2, 8) ** 2) + 0.1 * r.standard_normal(8), np.array([0.6])


# ---- 45. softened N-body leapfrog ----------------------------------------------------------

def nbody_accel(pos, masses, soft=0.1):
    diff = pos[None, :, :] - pos[:, None, :]
    r2 = np.sum(diff ** 2, axis=-1) + soft ** 2
    n = len(pos)
    inv = np.where(np.eye(n, dtype=bool), 0.0, r2 ** -1.5)
    return np.einsum("ij,ijk,j->ik", inv, diff, masses)


def nbody_leapfrog(pos, vel, masses, dt=0.05, steps=4):
    acc = nbody_accel(pos, masses)
    for _ in range(steps):
        vel = vel + 0.5 * dt * acc
        pos = pos + dt * vel
        acc = nbody_accel(pos, masses)
        vel = vel + 0.5 * dt * acc
    return np.sum(pos[:, 0]) + 0.5 * np.sum(masses[:, None] * vel ** 2)


def _nb():
    r = rng(45)
    return (r.standard_normal((4, 2)), r.standard_normal((4, 2)) * 0.1,
            np.array([1.0, 0.5, 0.8, 1.2]))


# ---- 46. Kuramoto oscillators with np.hypot ------------------------------------------------

def kuramoto_sync(omega, K, theta0, dt=0.1, steps=6):
    theta = theta0
    n = len(theta)
    for _ in range(steps):
        coupling = np.sin(theta[None, :] - theta[:, None]).sum(axis=1)
        theta = theta + dt * (omega + K[0] / n * coupling)
    r = np.hypot(np.mean(np.cos(theta)), np.mean(np.sin(theta)))
    return 1.0 - r


def _kur():
    r = rng(46)
    return r.standard_normal(5) * 0.5, np.array([1.5]), r.uniform(-1, 1, 5)


# ---- 47. planar arm kinematics with np.cumsum and np.arctan2 -------------------------------

def planar_arm(thetas, lengths, target):
    angles = np.cumsum(thetas)
    xs = np.cumsum(lengths * np.cos(angles))
    ys = np.cumsum(lengths * np.sin(angles))
    end = np.array([xs[-1], ys[-1]])
    heading = np.arctan2(ys[-1] - ys[-2], xs[-1] - xs[-2])
    return np.sum((end - target) ** 2) + 0.1 * (heading - 0.3) ** 2


def _arm():
    return np.array([0.3, 0.5, -0.2]), np.array([1.0, 0.8, 0.5]), np.array([1.2, 1.1])


# ---- 48. group means from np.unique(return_inverse=True) -------------------------------------

def center_loss_unique(W, X, groups):
    feats = X @ W
    uniq, inv = np.unique(groups, return_inverse=True)
    sums = np.zeros((len(uniq), feats.shape[1]))
    np.add.at(sums, inv, feats)
    counts = np.bincount(inv).astype(float)
    centers = sums / counts[:, None]
    return np.mean(np.sum((feats - centers[inv]) ** 2, axis=1))


def _clu():
    r = rng(48)
    return r.standard_normal((3, 2)), r.standard_normal((7, 3)), np.array([5, 2, 5, 9, 2, 9, 9])


# ---- 49. array-method style --------------------------------------------------------------

def methods_style_net(W, V, x):
    h = x.dot(W).clip(0)
    hn = (h - h.mean(0)) / np.sqrt(h.var(0) + 1e-5)
    seq = hn.reshape(2, -1, hn.shape[1]).swapaxes(1, 2)
    c = seq.cumsum(axis=2)
    p = (1 + 0.1 * np.tanh(c)).prod(axis=1)
    return (p.ravel() @ V.ravel()) + hn.std()


def _msn():
    r = rng(49)
    return r.standard_normal((3, 4)), r.standard_normal((2, 2)), r.standard_normal((4, 3))


# ---- 50. dict.get with defaults, sorted items, a mixin -------------------------------------

def layer_get(x, p):
    y = x @ p["W"]
    b = p.get("b")
    if b is not None:
        y = y + b
    scale = p.get("scale", 1.0)
    return np.tanh(y * scale)


def dict_get_optional(layers, x):
    for p in layers:
        x = layer_get(x, p)
    return np.sum(x ** 2)


def _dgo():
    r = rng(50)
    return ([{"W": r.standard_normal((3, 4)), "b": r.standard_normal(4)},
             {"W": r.standard_normal((4, 2)), "scale": 0.5}], r.standard_normal((5, 3)))


class L2Mixin:
    def penalty(self):
        return self.lam * sum(np.sum(p ** 2) for _, p in sorted(self.params.items()))


class Base:
    def __init__(self, params):
        self.params = params

    def forward(self, x):
        return np.tanh(x @ self.params["W1"]) @ self.params["W2"]


class RegularisedNet(L2Mixin, Base):
    def __init__(self, params, lam=1e-2):
        super().__init__(params)
        self.lam = lam


def mixin_sorted_penalty(params, x, y):
    net = RegularisedNet(params)
    return np.mean((net.forward(x) - y) ** 2) + net.penalty()


def _mix():
    r = rng(51)
    return ({"W2": r.standard_normal((4, 1)), "W1": r.standard_normal((3, 4))},
            r.standard_normal((6, 3)), r.standard_normal((6, 1)))


# ---- 51. scale = scale or ...; mask=None defaults -----------------------------------------

def attention(q, k, v, mask=None, scale=None):
    scale = scale or 1.0 / math.sqrt(q.shape[-1])
    s = q @ k.swapaxes(-1, -2) * scale
    if mask is not None:
        s = np.where(mask, s, -1e9)
    return softmax(s) @ v


def scale_or_default(Wq, Wk, x):
    q, k = x @ Wq, x @ Wk
    causal = np.tril(np.ones((x.shape[0], x.shape[0]), dtype=bool))
    a = attention(q, k, x)
    b = attention(q, k, x, mask=causal, scale=0.3)
    return np.sum(a * b)


def _sod():
    r = rng(52)
    return r.standard_normal((3, 3)), r.standard_normal((3, 3)), r.standard_normal((4, 3))


PROGRAMS = [
    Probe("wild_repos8.registry_decorator_acts", registry_decorator_acts, _reg, ("W1", "W2")),
    Probe("wild_repos8.three_level_super", three_level_super, _tls, ("W", "b"), fuse=True),
    Probe("wild_repos8.dataclass_layer_call", dataclass_layer_call, _dlc, "params"),
    Probe("wild_repos8.kwonly_optional_bias", kwonly_optional_bias, _kw, ("W1", "b1", "W2")),
    Probe("wild_repos8.chain_star_args", chain_star_args, _chain, ("W1", "W2")),
    Probe("wild_repos8.method_chaining_train_eval", method_chaining_train_eval, _mcte,
          ("W1", "W2")),
    Probe("wild_repos8.context_manager_eval", context_manager_eval, _mcte, ("W1", "W2")),
    Probe("wild_repos8.class_constant_eps", class_constant_eps, _cce, ("w", "b"), fuse=True),
    Probe("wild_repos8.sklearn_like_estimator", sklearn_like_estimator, _ske, ("w", "v")),
    Probe("wild_repos8.config_dict_module", config_dict_module, _cfg, ("Ws", "g", "b")),
    Probe("wild_repos8.try_except_dispatch", try_except_dispatch, _ted, "w", fuse=True),
    Probe("wild_repos8.early_return_helper", early_return_helper, _erh, "W"),
    Probe("wild_repos8.reversed_enumerate_tied", reversed_enumerate_tied, _ret, "Ws"),
    Probe("wild_repos8.pairwise_penalty", pairwise_penalty, _pw, "Ws"),
    Probe("wild_repos8.list_of_lists_params", list_of_lists_params, _lol, "params"),
    Probe("wild_repos8.cross_attention_lengths", cross_attention_lengths, _cal,
          ("Wq", "Wk", "Wv", "memory")),
    Probe("wild_repos8.col2im_transposed_conv", col2im_transposed_conv, _col2im, ("x", "w")),
    Probe("wild_repos8.depthwise_conv", depthwise_conv, _dw, ("x", "w_dw", "w_pw")),
    Probe("wild_repos8.bilinear_grid_sample", bilinear_grid_sample, _bgs, ("img", "theta")),
    Probe("wild_repos8.lstm_dataclass_state", lstm_dataclass_state, _lds, ("W", "U", "b")),
    Probe("wild_repos8.mgu_stack", mgu_stack, _mgu, "params"),
    Probe("wild_repos8.masked_rnn_lengths", masked_rnn_lengths, _mrl, ("Wx", "Wh", "x")),
    Probe("wild_repos8.fasttext_add_at", fasttext_add_at, _ft, ("E", "W")),
    Probe("wild_repos8.padded_embedding_mean", padded_embedding_mean, _pem, ("E", "w")),
    Probe("wild_repos8.vae_dataclass_elbo", vae_dataclass_elbo, _vae, "params", fuse=True),
    Probe("wild_repos8.gmm_em_step_loglik", gmm_em_step_loglik, _gmm, ("means", "X", "log_var")),
    Probe("wild_repos8.rts_smoother", rts_smoother, _rts, ("A", "log_q", "log_r")),
    Probe("wild_repos8.importance_logsumexp_b", importance_logsumexp_b, _isb, ("mu", "log_s")),
    Probe("wild_repos8.discrete_survival", discrete_survival, _ds, ("w", "b_t")),
    Probe("wild_repos8.focal_loss", focal_loss, _focal, "W", fuse=True),
    Probe("wild_repos8.label_smoothing_xent", label_smoothing_xent, _lsx, "W"),
    Probe("wild_repos8.infonce", infonce, _nce, ("W", "x2")),
    Probe("wild_repos8.batch_hard_triplet", batch_hard_triplet, _bht, "W"),
    Probe("wild_repos8.glm_link_dispatch", glm_link_dispatch, _glm, "beta", fuse=True),
    Probe("wild_repos8.ridge_hypergradient", ridge_hypergradient, _rh, ("log_lam", "X")),
    Probe("wild_repos8.maml_inner_step", maml_inner_step, _maml, "params"),
    Probe("wild_repos8.fixed_point_layer", fixed_point_layer, _fpl, ("W", "U", "x")),
    Probe("wild_repos8.sinkhorn_log", sinkhorn_log, _sk, ("x", "y")),
    Probe("wild_repos8.soft_dtw", soft_dtw, _sdtw, ("x", "y")),
    Probe("wild_repos8.sliced_wasserstein", sliced_wasserstein, _swd, ("x", "y")),
    Probe("wild_repos8.polyval_fit", polyval_fit, _pv, "coeffs"),
    Probe("wild_repos8.pendulum_symplectic", pendulum_symplectic, _pend, "params"),
    Probe("wild_repos8.heat_2d_interior", heat_2d_interior, _heat, ("u0", "alpha")),
    Probe("wild_repos8.wave_three_levels", wave_three_levels, _wave, ("u0", "c"), fuse=True),
    Probe("wild_repos8.nbody_leapfrog", nbody_leapfrog, _nb, ("pos", "vel", "masses")),
    Probe("wild_repos8.kuramoto_sync", kuramoto_sync, _kur, ("omega", "K", "theta0")),
    Probe("wild_repos8.planar_arm", planar_arm, _arm, ("thetas", "lengths")),
    Probe("wild_repos8.center_loss_unique", center_loss_unique, _clu, ("W", "X")),
    Probe("wild_repos8.methods_style_net", methods_style_net, _msn, ("W", "V", "x")),
    Probe("wild_repos8.dict_get_optional", dict_get_optional, _dgo, "layers"),
    Probe("wild_repos8.mixin_sorted_penalty", mixin_sorted_penalty, _mix, "params"),
    Probe("wild_repos8.scale_or_default", scale_or_default, _sod, ("Wq", "Wk", "x")),
]
