"""A corpus of straight-line composite numpy functions (no if/for/while), for agreement tests.

Each function returns a scalar and has a torch twin with the same math in
``tests/test_torch_agreement.py``. ``CASES`` lists, for each function, a maker of its
arguments: ``make(rng, dtype) -> tuple``; every floating-point argument is
differentiated (wrt all of them), integer and boolean arguments are data.

The module deliberately exercises the ways a name can reach numpy: ``np.``, an ``xp``
alias, ``from numpy import tanh``, a module-level alias ``act = np.tanh``, a module
constant ``EPS``, a module-level constant array ``CAUSAL``, and a closure-captured array.
"""

from __future__ import annotations

import numpy as np
import numpy as xp
from numpy import tanh

EPS = 1e-5
act = np.tanh
SEQ = 5  # sequence length of the attention cases
CAUSAL = np.tril(np.ones((SEQ, SEQ), dtype=bool))


# -- MLPs ---------------------------------------------------------------------------------


def mlp2_tanh(W1, b1, W2, b2, x, y):
    h = np.tanh(x @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def mlp3_relu(W1, b1, W2, b2, W3, b3, x, y):
    h1 = np.maximum(x @ W1 + b1, 0)
    h2 = np.maximum(h1 @ W2 + b2, 0.0)
    out = h2 @ W3 + b3
    return 0.5 * np.sum((out - y) ** 2) / x.shape[0]


# -- classification losses ----------------------------------------------------------------


def xent_gather(W, b, x, labels):
    logits = x @ W + b
    n = x.shape[0]
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(n), labels])


def xent_onehot(logits, labels):
    n, k = logits.shape
    onehot = np.eye(k)[labels]
    m = logits.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(logits - m).sum(axis=-1, keepdims=True))
    return -np.sum(onehot * (logits - lse)) / n


def log_softmax_weighted(x, w):
    z = x - np.max(x, axis=-1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))
    return np.sum(logp * w)


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


# -- normalisation and attention ----------------------------------------------------------


def layer_norm(x, g, b, w):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    xhat = (x - mu) / np.sqrt(var + EPS)
    y = xhat * g + b
    return np.sum(y * w)


def attention_single(x, Wq, Wk, Wv):
    q = x @ Wq
    k = x @ Wk
    v = x @ Wv
    d = q.shape[-1]
    s = q @ k.T / np.sqrt(d)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(axis=-1, keepdims=True)
    o = p @ v
    return np.sum(o ** 2)


def attention_multihead_causal(x, Wq, Wk, Wv, Wo):
    n, d = x.shape
    heads = 2
    dh = d // heads
    q = (x @ Wq).reshape(n, heads, dh).transpose(1, 0, 2)
    k = (x @ Wk).reshape(n, heads, dh).transpose(1, 0, 2)
    v = (x @ Wv).reshape(n, heads, dh).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
    scores = np.where(CAUSAL, scores, -1e9)
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    p = np.exp(scores)
    p = p / np.sum(p, axis=-1, keepdims=True)
    o = (p @ v).transpose(1, 0, 2).reshape(n, -1)
    out = o @ Wo
    return np.mean(np.tanh(out))


def attention_mask_arg(x, Wq, Wk, Wv, mask):
    q = x @ Wq
    k = x @ Wk
    scores = q @ np.swapaxes(k, 0, 1) * (1.0 / np.sqrt(q.shape[1]))
    scores = np.where(mask, scores, -1e9)
    e = np.exp(scores - np.max(scores, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum((p @ (x @ Wv)) * x)


# -- broadcasting, reductions and shapes ----------------------------------------------------


def used_three_times(x):
    y = np.sin(x)
    return np.sum(y * y + y * x + np.exp(y))


def outer_broadcast(a, b):
    return np.sum(np.tanh(a * b))


def mean_axis_tuple(x, w):
    m = np.mean(x ** 2, axis=(0, 2))
    k = np.mean(x, axis=(1, 2), keepdims=True)
    return np.sum(m * w) + np.sum(k * x)


def methods_T_sum(x, W):
    r = (x.T @ W).sum(axis=1)
    c = x.mean(axis=0, keepdims=True)
    return np.sum(r ** 2) + (c * x).sum()


def reshape_minus_one(x, w):
    n = x.shape[0]
    y = x.reshape(n, -1)
    return np.sum(np.tanh(y @ w))


def swapaxes_both(x, w):
    a = np.swapaxes(x, 0, 1)
    b = x.swapaxes(1, 2)
    return np.sum(a * w) + np.sum(b ** 2)


def concat_stack(a, b, w):
    c = np.concatenate([a, b], axis=0)
    s = np.stack((a, b), axis=1)
    return np.sum(c ** 3) + np.sum(np.tanh(s) * w)


def slicing_steps(x):
    evens = x[::2]
    odd_cols = x[:, 1::2]
    rev = x[1:, ::-1]
    return np.sum(evens ** 2) + np.sum(odd_cols * 3.0) + np.sum(rev * x[:-1, :])


# -- how names reach numpy ------------------------------------------------------------------


def xp_alias(x, y):
    return xp.sum(xp.exp(x) * xp.cos(y)) + xp.mean(x * y)


def from_import_tanh(x, W):
    return np.sum(tanh(x @ W) ** 2)


def module_alias_act(x, W, b):
    h = act(x @ W + b)
    return np.sum(act(h))


def module_const_eps(x):
    return np.sum(np.log(x ** 2 + EPS))


def _make_closure():
    C = np.linspace(-1.0, 1.0, 12).reshape(4, 3)

    def closure_captured(x):
        return np.sum((x @ C) ** 2)

    return closure_captured


closure_captured = _make_closure()


# globals named like the temporary (`out_matmul`) and the adjoint (`dout`) srcad would make
out_matmul = np.linspace(0.5, 1.5, 8).reshape(4, 2)
dout = np.linspace(-1.0, 1.0, 8).reshape(4, 2)


def global_name_clash(x, W):
    out = np.tanh(x @ W)
    return np.sum(out * out_matmul) + np.sum(out * dout)


# -- statement forms ------------------------------------------------------------------------


def aug_assign(x, W, b):
    h = x @ W
    h += b
    h *= 0.5
    return np.sum(np.tanh(h))


def tuple_unpack(x, w):
    n, d = x.shape
    return np.sum(x @ w) / (n * d) + np.sum(x ** 2) / n


def reassigned(x, y):
    h = np.tanh(x)
    h = h * 2
    h = h + y
    return np.sum(h * h)


# -- elementwise ------------------------------------------------------------------------------


def clip_abs_sqrt(x, y):
    c = np.clip(x, -0.5, 0.5)
    return np.sum(c * np.abs(y) + np.sqrt(np.abs(x) + 1.0))


def softplus_exp_log(x):
    return np.sum(np.log(1.0 + np.exp(x))) - np.log(np.sum(np.exp(-x)))


def div_pow(x, y):
    z = x ** 1.5 / (y + 2.0)
    return np.mean(z) + np.sum(1.0 / x)


def leaky_relu_where(x, W):
    h = x @ W
    h = np.where(h > 0, h, 0.01 * h)
    return np.sum(np.square(h))


def newaxis_ellipsis(x, v):
    a = x[:, None, :] * v[None, :, None]
    b = x[..., -1]
    return np.sum(a ** 2) + np.sum(b * x[-1, 0]) + np.sum(np.expand_dims(v, 0) * x[:, :1])


def misc_reductions(x, y):
    p = np.prod(x, axis=1)
    m = np.min(y, axis=0)
    return np.sum(p) + np.dot(m, m) + np.sum(np.power(x, 3)) + np.max(y)


def int_promotion(x, labels):
    r = x * np.arange(x.shape[1]) + labels[:, None]
    return np.sum(r * x)


# -- arguments ------------------------------------------------------------------------------


def _f(rng, dtype, *shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


def _labels(rng, n, k):
    return rng.integers(0, k, size=n)


CASES = {
    "mlp2_tanh": (mlp2_tanh, lambda r, t: (
        _f(r, t, 3, 4), _f(r, t, 4), _f(r, t, 4, 2), _f(r, t, 2), _f(r, t, 5, 3), _f(r, t, 5, 2))),
    "mlp3_relu": (mlp3_relu, lambda r, t: (
        _f(r, t, 3, 6), _f(r, t, 6), _f(r, t, 6, 4), _f(r, t, 4), _f(r, t, 4, 2), _f(r, t, 2),
        _f(r, t, 7, 3), _f(r, t, 7, 2))),
    "xent_gather": (xent_gather, lambda r, t: (
        _f(r, t, 3, 4), _f(r, t, 4), _f(r, t, 6, 3), _labels(r, 6, 4))),
    "xent_onehot": (xent_onehot, lambda r, t: (_f(r, t, 6, 4, low=-3, high=3), _labels(r, 6, 4))),
    "log_softmax_weighted": (log_softmax_weighted, lambda r, t: (
        _f(r, t, 4, 5, low=-3, high=3), _f(r, t, 4, 5))),
    "logsumexp": (logsumexp, lambda r, t: (_f(r, t, 3, 4, low=-3, high=3),)),
    "layer_norm": (layer_norm, lambda r, t: (
        _f(r, t, 4, 6, low=-2, high=2), _f(r, t, 6), _f(r, t, 6), _f(r, t, 4, 6))),
    "attention_single": (attention_single, lambda r, t: (
        _f(r, t, 5, 4), _f(r, t, 4, 3), _f(r, t, 4, 3), _f(r, t, 4, 3))),
    "attention_multihead_causal": (attention_multihead_causal, lambda r, t: (
        _f(r, t, SEQ, 4), _f(r, t, 4, 4), _f(r, t, 4, 4), _f(r, t, 4, 4), _f(r, t, 4, 3))),
    "attention_mask_arg": (attention_mask_arg, lambda r, t: (
        _f(r, t, 4, 3), _f(r, t, 3, 3), _f(r, t, 3, 3), _f(r, t, 3, 3),
        np.tril(np.ones((4, 4), dtype=bool)))),
    "used_three_times": (used_three_times, lambda r, t: (_f(r, t, 3, 4),)),
    "outer_broadcast": (outer_broadcast, lambda r, t: (_f(r, t, 4, 1), _f(r, t, 1, 3))),
    "mean_axis_tuple": (mean_axis_tuple, lambda r, t: (_f(r, t, 2, 3, 4), _f(r, t, 3))),
    "methods_T_sum": (methods_T_sum, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 4, 2))),
    "reshape_minus_one": (reshape_minus_one, lambda r, t: (_f(r, t, 2, 3, 2), _f(r, t, 6, 2))),
    "swapaxes_both": (swapaxes_both, lambda r, t: (_f(r, t, 2, 3, 4), _f(r, t, 3, 2, 4))),
    "concat_stack": (concat_stack, lambda r, t: (
        _f(r, t, 2, 3), _f(r, t, 2, 3), _f(r, t, 2, 2, 3))),
    "slicing_steps": (slicing_steps, lambda r, t: (_f(r, t, 5, 4),)),
    "xp_alias": (xp_alias, lambda r, t: (_f(r, t, 3, 2), _f(r, t, 3, 2))),
    "from_import_tanh": (from_import_tanh, lambda r, t: (_f(r, t, 3, 4), _f(r, t, 4, 2))),
    "module_alias_act": (module_alias_act, lambda r, t: (
        _f(r, t, 3, 4), _f(r, t, 4, 2), _f(r, t, 2))),
    "module_const_eps": (module_const_eps, lambda r, t: (_f(r, t, 3, 3, low=0.2, high=2.0),)),
    "closure_captured": (closure_captured, lambda r, t: (_f(r, t, 2, 4),)),
    "global_name_clash": (global_name_clash, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 3, 2))),
    "aug_assign": (aug_assign, lambda r, t: (_f(r, t, 3, 4), _f(r, t, 4, 2), _f(r, t, 2))),
    "tuple_unpack": (tuple_unpack, lambda r, t: (_f(r, t, 3, 4), _f(r, t, 4))),
    "reassigned": (reassigned, lambda r, t: (_f(r, t, 3, 2), _f(r, t, 3, 2))),
    "clip_abs_sqrt": (clip_abs_sqrt, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 4, 3))),
    "softplus_exp_log": (softplus_exp_log, lambda r, t: (_f(r, t, 5, low=-2, high=2),)),
    "div_pow": (div_pow, lambda r, t: (_f(r, t, 3, 2, low=0.3, high=2.0), _f(r, t, 3, 2))),
    "leaky_relu_where": (leaky_relu_where, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 3, 3))),
    "newaxis_ellipsis": (newaxis_ellipsis, lambda r, t: (_f(r, t, 3, 4), _f(r, t, 5))),
    "misc_reductions": (misc_reductions, lambda r, t: (_f(r, t, 3, 4), _f(r, t, 3, 4))),
    "int_promotion": (int_promotion, lambda r, t: (_f(r, t, 3, 4), _labels(r, 3, 5))),
}
