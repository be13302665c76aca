"""From-scratch attention and transformer code: causal masks from np.triu(...).astype(bool)
written with ``scores[mask] = -np.inf`` or np.where, heads split by reshape/transpose(0, 2, 1,
3), sinusoidal positions computed in the function, LayerNorm with np.var, tanh GELU with
np.sqrt(2 / np.pi), dropout with a seeded generator made inside, float32 weights."""

import math

import numpy as np

from . import Probe, rng
from .helpers import softmax

N_HEADS = 2
DROP_P = 0.25


def positional_encoding(T, d):
    pos = np.arange(T)[:, np.newaxis]
    i = np.arange(d)[np.newaxis, :]
    angle = pos / np.power(10000, (2 * (i // 2)) / np.float64(d))
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(angle[:, 0::2])
    pe[:, 1::2] = np.cos(angle[:, 1::2])
    return pe


def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return g * (x - mean) / np.sqrt(var + eps) + b


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def split_heads(x, n_heads):
    B, T, C = x.shape
    return x.reshape(B, T, n_heads, C // n_heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    B, h, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, h * d)


def causal_self_attention(x, Wqkv, Wo):
    B, T, C = x.shape
    qkv = x @ Wqkv
    q, k, v = np.split(qkv, 3, axis=-1)
    q, k, v = split_heads(q, N_HEADS), split_heads(k, N_HEADS), split_heads(v, N_HEADS)
    att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(k.shape[-1])
    mask = np.triu(np.ones((T, T)), k=1).astype(bool)
    att[:, :, mask] = -np.inf
    att = softmax(att, axis=-1)
    return merge_heads(att @ v) @ Wo


def attention_mask_loss(x, Wqkv, Wo, y):
    return np.mean((causal_self_attention(x, Wqkv, Wo) - y) ** 2)


def gpt_block(params, idx, targets):
    wte, wpe = params["wte"], params["wpe"]
    T = idx.shape[1]
    x = wte[idx] + wpe[:T]
    h = layer_norm(x, params["ln1_g"], params["ln1_b"])
    x = x + causal_self_attention(h, params["Wqkv"], params["Wo"])
    h = layer_norm(x, params["ln2_g"], params["ln2_b"])
    x = x + gelu(h @ params["W1"]) @ params["W2"]
    logits = x @ wte.T
    B, T, V = logits.shape
    logits = logits.reshape(B * T, V)
    targets = targets.reshape(-1)
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -logp[np.arange(B * T), targets].mean()


def where_mask_sinusoid(x, Wq, Wk, Wv):
    T, d = x.shape
    x = x + positional_encoding(T, d)
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    scores = q @ k.T / np.sqrt(d)
    causal = np.tril(np.ones((T, T))) == 1
    scores = np.where(causal, scores, -1e9)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    return np.sum((w @ v) ** 2)


def dropout_rng_inside(x, W1, W2, seed=0, train=True):
    h = np.maximum(x @ W1, 0)
    if train:
        r = np.random.default_rng(seed)
        keep = (r.random(h.shape) >= DROP_P).astype(h.dtype)
        h = h * keep / (1.0 - DROP_P)
    return np.sum(np.tanh(h @ W2))


def float32_attention(x, Wq, Wk, Wv):
    q = x @ Wq
    k = x @ Wk
    v = x @ Wv
    s = (q @ k.T) * np.float32(1.0 / np.sqrt(q.shape[-1]))
    s = s - s.max(axis=1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(axis=1, keepdims=True)
    out = p @ v
    return (out ** 2).sum()


def _attn():
    r = rng(50)
    B, T, C = 2, 3, 4
    return (r.standard_normal((B, T, C)), r.standard_normal((C, 3 * C)) * 0.4,
            r.standard_normal((C, C)) * 0.4, r.standard_normal((B, T, C)))


def _gpt():
    r = rng(51)
    V, T, C, B = 6, 3, 4, 2
    p = {"wte": r.standard_normal((V, C)) * 0.3, "wpe": r.standard_normal((T, C)) * 0.3,
         "ln1_g": np.ones(C), "ln1_b": np.zeros(C), "Wqkv": r.standard_normal((C, 3 * C)) * 0.3,
         "Wo": r.standard_normal((C, C)) * 0.3, "ln2_g": np.ones(C) + 0.1,
         "ln2_b": np.zeros(C) + 0.1, "W1": r.standard_normal((C, 2 * C)) * 0.3,
         "W2": r.standard_normal((2 * C, C)) * 0.3}
    return p, r.integers(0, V, (B, T)), r.integers(0, V, (B, T))


def _wm():
    r = rng(52)
    return (r.standard_normal((4, 4)), r.standard_normal((4, 4)) * 0.4,
            r.standard_normal((4, 4)) * 0.4, r.standard_normal((4, 4)) * 0.4)


def _drop():
    r = rng(53)
    return r.standard_normal((5, 3)), r.standard_normal((3, 6)), r.standard_normal((6, 2))


def _f32():
    return tuple(a.astype(np.float32) for a in _wm())


PROGRAMS = [
    Probe("transformers.attention_mask_loss", attention_mask_loss, _attn, ("x", "Wqkv", "Wo")),
    Probe("transformers.gpt_block", gpt_block, _gpt, "params", True),
    Probe("transformers.where_mask_sinusoid", where_mask_sinusoid, _wm, ("x", "Wq", "Wk", "Wv")),
    Probe("transformers.dropout_rng_inside", dropout_rng_inside, _drop, ("x", "W1", "W2")),
    Probe("transformers.float32_attention", float32_attention, _f32, ("x", "Wq", "Wk", "Wv"),
          tol=2e-2),
]
