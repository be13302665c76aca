"""Tenth set of programs in the styles of public numpy-from-scratch code (read for patterns
only, written here from scratch), all on sequence models and language models: RWKV written the
"few lines" way (module-level lambdas ``exp = np.exp`` / ``layer_norm = lambda ...``, weights
fetched by ``lambda prefix: [w for k, w in model.items() if k.startswith(prefix)]`` and spread
with ``*``, a state list of lists assigned through ``out, state[i][:3] = f(...)``) and the
numerically stable ``aa / bb / pp`` form on a preallocated ``state`` array written per layer
slot; llama / mistral / gemma ports (a ``@dataclass ModelArgs``, RMSNorm, SwiGLU and exact-erf
GeGLU, rotary tables from ``np.outer`` applied to interleaved pairs or through complex
``np.exp(1j * ...)`` with ``.real`` / ``.imag``, ``np.triu(np.full(.., -np.inf), k=1)``
masks, grouped-query attention by ``np.repeat``, a preallocated KV cache written at
``start_pos``, a rolling sliding-window buffer indexed ``pos % W``, banded masks, logit
soft-capping); GPT-2 variants (HF-style ``past`` lists of ``(k, v)`` tuples grown by
``np.concatenate``, left-padded batches with ``position_ids`` from ``np.cumsum``, boolean
``att[..., ~causal] = -np.inf`` writes, blocks whose residual is ``x += ...`` in place, greedy
decoding by ``int(np.argmax(...))`` feeding ids back, shifted logits with an ``ignore_index``
of -100 and ``np.take_along_axis``); character tokenizers (``stoi`` dicts, ``encode``
lambdas, a tiny BPE merge loop producing Python lists used as ``E[ids]``); makemore-style
models (an MLP with batch norm and a step-by-step cross-entropy indexed by ``range(n)``,
layer classes with ``FlattenConsecutive`` that store ``self.out``); state-space and linear
recurrences (a Mamba-like selective scan with ``np.einsum`` discretisation and a causal
depthwise convolution, an S4 bilinear discretisation with ``np.linalg.inv`` /
``matrix_power`` and an FFT convolution, linear attention by ``np.cumsum`` of outer products,
RetNet's decay matrix versus its recurrence, a Hyena-like long convolution by
``np.convolve``, Transformer-XL memory); recurrent trainers (the preallocated ``Hin`` /
``IFOG`` LSTM with a bias column of ones, a batch-first GRU iterating ``np.moveaxis``, a
stacked LSTM keeping ``states[l] = (h, c)`` in a dict, ``functools.reduce`` and
``itertools.accumulate`` over time, gates unpacked from an ``einsum`` over stacked gate
weights); seq2seq with additive attention and teacher forcing; T5 relative-position buckets;
an Annotated-Transformer encoder built with ``copy.deepcopy`` clones and ``SublayerConnection``
lambdas; llama2.c ported line by line (flat weight vectors sliced per layer, a ``RunState``
dataclass of buffers filled by ``matmul_into(out, ...)`` / ``out[:] = ...`` helpers, rotary
pairs rotated element by element, a key-cache row written through a view, softmax in place
with ``np.exp(x, out=x)``) and a char RNN in the same buffer style; a cell that updates
``self.h *= z`` in place while the caller keeps every returned ``h``; ``scores[np.triu_indices
(T, 1)] = -1e9``; a top-k filtered next-token loss (``logits[indices_to_remove] = -np.inf``);
chunkwise retention written into ``np.empty_like``; S4D with its complex kernel spelled in real
parts and ``scipy.linalg.toeplitz``; minGRU by a log-space scan with
``np.logaddexp.accumulate``."""

from __future__ import annotations

import copy
import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.special

from . import Probe, rng


def _softmax(x, axis=-1):
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


# ---- 1. RWKV the few-lines way: prefix lookups, lambdas, list-of-lists state --------------

exp = np.exp
layer_norm = lambda x, w, b: (x - np.mean(x)) / np.std(x) * w + b  # noqa: E731
sigmoid = lambda x: 1.0 / (1.0 + exp(-x))  # noqa: E731


def _shift(cur, prev, mu):
    return mu * cur + (1.0 - mu) * prev


def rwkv_att(x, last_x, num, den, decay, first, mu_k, mu_v, mu_r, Wk, Wv, Wr, Wo):
    k = Wk @ _shift(x, last_x, mu_k)
    v = Wv @ _shift(x, last_x, mu_v)
    r = Wr @ _shift(x, last_x, mu_r)
    bonus = exp(first + k)
    wkv = (num + bonus * v) / (den + bonus)
    w = exp(-exp(decay))
    num = w * num + exp(k) * v
    den = w * den + exp(k)
    return Wo @ (sigmoid(r) * wkv), (x, num, den)


def rwkv_ffn(x, last_x, mu_k, mu_r, Wk, Wr, Wv):
    k = Wk @ _shift(x, last_x, mu_k)
    r = Wr @ _shift(x, last_x, mu_r)
    return sigmoid(r) * (Wv @ np.square(np.maximum(k, 0.0))), x


def rwkv_prefix_state(model, tokens=(1, 4, 0, 3, 2, 5), n_layer=2):
    grab = lambda prefix: [w for key, w in model.items() if key.startswith(prefix)]  # noqa
    d = model["emb.weight"].shape[1]
    state = [[np.zeros(d), np.zeros(d), np.zeros(d), np.zeros(d)] for _ in range(n_layer)]
    nll = 0.0
    for tok, nxt in zip(tokens[:-1], tokens[1:]):
        x = grab("emb.")[0][tok]
        x = layer_norm(x, *grab("blocks.0.ln0."))
        for i in range(n_layer):
            dx, state[i][:3] = rwkv_att(layer_norm(x, *grab(f"blocks.{i}.ln1.")),
                                        *state[i][:3], *grab(f"blocks.{i}.att."))
            x = x + dx
            dx, state[i][3] = rwkv_ffn(layer_norm(x, *grab(f"blocks.{i}.ln2.")),
                                       state[i][3], *grab(f"blocks.{i}.ffn."))
            x = x + dx
        logits = grab("head.")[0] @ layer_norm(x, *grab("ln_out."))
        nll = nll - (logits[nxt] - scipy.special.logsumexp(logits))
    return nll / (len(tokens) - 1)


def _rwkv1():
    r = rng(9001)
    V, d, n_layer = 6, 4, 2
    m = {"emb.weight": r.standard_normal((V, d)),
         "blocks.0.ln0.weight": 1 + 0.1 * r.standard_normal(d),
         "blocks.0.ln0.bias": 0.1 * r.standard_normal(d)}
    for i in range(n_layer):
        p = f"blocks.{i}."
        m[p + "ln1.weight"] = 1 + 0.1 * r.standard_normal(d)
        m[p + "ln1.bias"] = 0.1 * r.standard_normal(d)
        m[p + "ln2.weight"] = 1 + 0.1 * r.standard_normal(d)
        m[p + "ln2.bias"] = 0.1 * r.standard_normal(d)
        m[p + "att.time_decay"] = 0.3 * r.standard_normal(d)
        m[p + "att.time_first"] = 0.3 * r.standard_normal(d)
        m[p + "att.time_mix_k"] = r.uniform(0.2, 0.8, d)
        m[p + "att.time_mix_v"] = r.uniform(0.2, 0.8, d)
        m[p + "att.time_mix_r"] = r.uniform(0.2, 0.8, d)
        m[p + "att.key.weight"] = 0.4 * r.standard_normal((d, d))
        m[p + "att.value.weight"] = 0.4 * r.standard_normal((d, d))
        m[p + "att.receptance.weight"] = 0.4 * r.standard_normal((d, d))
        m[p + "att.output.weight"] = 0.4 * r.standard_normal((d, d))
        m[p + "ffn.time_mix_k"] = r.uniform(0.2, 0.8, d)
        m[p + "ffn.time_mix_r"] = r.uniform(0.2, 0.8, d)
        m[p + "ffn.key.weight"] = 0.4 * r.standard_normal((2 * d, d))
        m[p + "ffn.receptance.weight"] = 0.4 * r.standard_normal((d, d))
        m[p + "ffn.value.weight"] = 0.4 * r.standard_normal((d, 2 * d))
    m["ln_out.weight"] = 1 + 0.1 * r.standard_normal(d)
    m["ln_out.bias"] = 0.1 * r.standard_normal(d)
    m["head.weight"] = 0.5 * r.standard_normal((V, d))
    return (m,)


# ---- 2. RWKV with the stable aa/bb/pp recurrence on a preallocated state array ------------

class RWKVRNN:
    def __init__(self, emb, blocks, head):
        self.emb, self.blocks, self.head = emb, blocks, head
        self.n_layer = len(blocks)

    @staticmethod
    def ln(x, g, b, eps=1e-5):
        mu = x.mean()
        return (x - mu) / np.sqrt(((x - mu) ** 2).mean() + eps) * g + b

    def time_mixing(self, x, state, i, w):
        xx = state[5 * i + 1]
        xk = x * w["mix_k"] + xx * (1 - w["mix_k"])
        xv = x * w["mix_v"] + xx * (1 - w["mix_v"])
        xr = x * w["mix_r"] + xx * (1 - w["mix_r"])
        state[5 * i + 1] = x
        r = 1 / (1 + np.exp(-(w["Wr"] @ xr)))
        k = w["Wk"] @ xk
        v = w["Wv"] @ xv
        aa, bb, pp = state[5 * i + 2], state[5 * i + 3], state[5 * i + 4]
        ww = w["first"] + k
        p = np.maximum(pp, ww)
        e1, e2 = np.exp(pp - p), np.exp(ww - p)
        a = e1 * aa + e2 * v
        b = e1 * bb + e2
        ww = pp - np.exp(w["decay"])
        p = np.maximum(ww, k)
        e1, e2 = np.exp(ww - p), np.exp(k - p)
        state[5 * i + 2] = e1 * aa + e2 * v
        state[5 * i + 3] = e1 * bb + e2
        state[5 * i + 4] = p
        return w["Wo"] @ (r * (a / b))

    def forward(self, token, state):
        x = self.emb[token]
        for i, w in enumerate(self.blocks):
            x = x + self.time_mixing(self.ln(x, w["g"], w["b"]), state, i, w)
            x = x + np.tanh(w["Wf"] @ self.ln(x, w["g"], w["b"]))
        return self.head @ x, state


def rwkv_state_array(emb, blocks, head, tokens=(0, 2, 5, 1, 3, 4, 2)):
    d = emb.shape[1]
    model = RWKVRNN(emb, blocks, head)
    state = np.zeros((model.n_layer * 5, d))
    for i in range(model.n_layer):
        state[5 * i + 4] = -1e30
    loss = 0.0
    for tok, nxt in zip(tokens, tokens[1:]):
        logits, state = model.forward(tok, state)
        loss = loss + scipy.special.logsumexp(logits) - logits[nxt]
    return loss


def _rwkv2():
    r = rng(9002)
    V, d = 6, 4
    blocks = []
    for _ in range(2):
        blocks.append({"g": 1 + 0.1 * r.standard_normal(d), "b": 0.1 * r.standard_normal(d),
                       "mix_k": r.uniform(0.2, 0.8, d), "mix_v": r.uniform(0.2, 0.8, d),
                       "mix_r": r.uniform(0.2, 0.8, d), "first": 0.3 * r.standard_normal(d),
                       "decay": 0.3 * r.standard_normal(d),
                       "Wk": 0.5 * r.standard_normal((d, d)),
                       "Wv": 0.5 * r.standard_normal((d, d)),
                       "Wr": 0.5 * r.standard_normal((d, d)),
                       "Wo": 0.5 * r.standard_normal((d, d)),
                       "Wf": 0.5 * r.standard_normal((d, d))})
    return r.standard_normal((V, d)), blocks, 0.5 * r.standard_normal((V, d))


# ---- 3. llama: dataclass args, RMSNorm, interleaved rotary pairs, GQA by np.repeat -------

@dataclass
class ModelArgs:
    dim: int = 8
    n_heads: int = 4
    n_kv_heads: int = 2
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0


def rms_norm(x, weight, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def precompute_cos_sin(head_dim, seqlen, theta):
    inv = 1.0 / (theta ** (np.arange(0, head_dim, 2)[: head_dim // 2] / head_dim))
    freqs = np.outer(np.arange(seqlen), inv)
    return np.cos(freqs), np.sin(freqs)


def apply_rotary_pairs(x, cos, sin):
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    a, b = pairs[..., 0], pairs[..., 1]
    c, s = cos[:, None, :], sin[:, None, :]
    out = np.stack([a * c - b * s, a * s + b * c], axis=-1)
    return out.reshape(x.shape)


def silu(x):
    return x * (1.0 / (1.0 + np.exp(-x)))


def llama_block(h, layer, args, cos, sin, mask):
    T = h.shape[0]
    hd = args.dim // args.n_heads
    n_rep = args.n_heads // args.n_kv_heads
    x = rms_norm(h, layer["attention_norm"], args.norm_eps)
    xq = (x @ layer["wq"]).reshape(T, args.n_heads, hd)
    xk = (x @ layer["wk"]).reshape(T, args.n_kv_heads, hd)
    xv = (x @ layer["wv"]).reshape(T, args.n_kv_heads, hd)
    xq, xk = apply_rotary_pairs(xq, cos, sin), apply_rotary_pairs(xk, cos, sin)
    keys = np.repeat(xk, n_rep, axis=1)
    values = np.repeat(xv, n_rep, axis=1)
    scores = np.einsum("qhd,khd->hqk", xq, keys) / math.sqrt(hd) + mask
    probs = _softmax(scores)
    out = np.einsum("hqk,khd->qhd", probs, values).reshape(T, -1)
    h = h + out @ layer["wo"]
    x = rms_norm(h, layer["ffn_norm"], args.norm_eps)
    return h + (silu(x @ layer["w1"]) * (x @ layer["w3"])) @ layer["w2"]


def llama_rmsnorm_rope_gqa(tok_embeddings, layers, norm, output, tokens=(3, 1, 4, 1, 5, 2, 6)):
    args = ModelArgs()
    ids = np.array(tokens)
    T = len(ids) - 1
    h = tok_embeddings[ids[:-1]]
    cos, sin = precompute_cos_sin(args.dim // args.n_heads, T, args.rope_theta)
    mask = np.full((T, T), float("-inf"))
    mask = np.triu(mask, k=1)
    for layer in layers:
        h = llama_block(h, layer, args, cos, sin, mask)
    logits = rms_norm(h, norm, args.norm_eps) @ output.T
    lse = scipy.special.logsumexp(logits, axis=-1)
    return np.mean(lse - logits[np.arange(T), ids[1:]])


def _llama():
    r = rng(9003)
    V, d, hid = 8, 8, 12
    layers = []
    for _ in range(2):
        layers.append({"attention_norm": 1 + 0.1 * r.standard_normal(d),
                       "wq": 0.3 * r.standard_normal((d, d)),
                       "wk": 0.3 * r.standard_normal((d, 4)),
                       "wv": 0.3 * r.standard_normal((d, 4)),
                       "wo": 0.3 * r.standard_normal((d, d)),
                       "ffn_norm": 1 + 0.1 * r.standard_normal(d),
                       "w1": 0.3 * r.standard_normal((d, hid)),
                       "w3": 0.3 * r.standard_normal((d, hid)),
                       "w2": 0.3 * r.standard_normal((hid, d))})
    return (r.standard_normal((V, d)), layers, 1 + 0.1 * r.standard_normal(d),
            0.5 * r.standard_normal((V, d)))


# ---- 4. rotary embeddings through complex numbers (freqs_cis) -----------------------------

def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (np.arange(0, dim, 2) / dim))
    t = np.arange(end)
    return np.exp(1j * np.outer(t, freqs))


def apply_rotary_complex(xq, xk, freqs_cis):
    xq_ = xq.reshape(*xq.shape[:-1], -1, 2)
    xk_ = xk.reshape(*xk.shape[:-1], -1, 2)
    xq_c = xq_[..., 0] + 1j * xq_[..., 1]
    xk_c = xk_[..., 0] + 1j * xk_[..., 1]
    fc = freqs_cis[:, None, :]
    xq_out = xq_c * fc
    xk_out = xk_c * fc
    xq_r = np.stack([xq_out.real, xq_out.imag], axis=-1).reshape(xq.shape)
    xk_r = np.stack([xk_out.real, xk_out.imag], axis=-1).reshape(xk.shape)
    return xq_r, xk_r


def complex_rope_attention(wq, wk, x, n_heads=2):
    T, d = x.shape
    hd = wq.shape[1] // n_heads
    q = (x @ wq).reshape(T, n_heads, hd)
    k = (x @ wk).reshape(T, n_heads, hd)
    q, k = apply_rotary_complex(q, k, precompute_freqs_cis(hd, T))
    s = np.einsum("thd,shd->hts", q, k) / np.sqrt(hd)
    return np.sum(scipy.special.softmax(s, axis=-1) * s) + 0.1 * np.sum(q * k)


def _crope():
    r = rng(9004)
    return (0.5 * r.standard_normal((5, 8)), 0.5 * r.standard_normal((5, 8)),
            r.standard_normal((6, 5)))


# ---- 5. a preallocated KV cache written at start_pos (prefill, then decode) ---------------

class CachedSelfAttention:
    def __init__(self, wq, wk, wv, wo, n_heads, max_seq_len=8):
        self.wq, self.wk, self.wv, self.wo = wq, wk, wv, wo
        self.n_heads = n_heads
        self.head_dim = wq.shape[1] // n_heads
        self.cache_k = np.zeros((max_seq_len, n_heads, self.head_dim))
        self.cache_v = np.zeros((max_seq_len, n_heads, self.head_dim))

    def forward(self, x, start_pos):
        T = x.shape[0]
        xq = (x @ self.wq).reshape(T, self.n_heads, self.head_dim)
        xk = (x @ self.wk).reshape(T, self.n_heads, self.head_dim)
        xv = (x @ self.wv).reshape(T, self.n_heads, self.head_dim)
        self.cache_k[start_pos:start_pos + T] = xk
        self.cache_v[start_pos:start_pos + T] = xv
        keys = self.cache_k[:start_pos + T]
        values = self.cache_v[:start_pos + T]
        scores = np.matmul(xq.transpose(1, 0, 2), keys.transpose(1, 2, 0))
        scores = scores / math.sqrt(self.head_dim)
        if T > 1:
            mask = np.triu(np.full((T, T), -np.inf), k=1)
            mask = np.hstack([np.zeros((T, start_pos)), mask])
            scores = scores + mask
        probs = _softmax(scores)
        out = np.matmul(probs, values.transpose(1, 0, 2)).transpose(1, 0, 2)
        return out.reshape(T, -1) @ self.wo


def kv_cache_start_pos(wq, wk, wv, wo, emb, prompt=(2, 0, 3), gen=(1, 4, 2)):
    attn = CachedSelfAttention(wq, wk, wv, wo, n_heads=2)
    out = attn.forward(emb[list(prompt)], 0)
    total = np.sum(out[-1] * emb[gen[0]])
    pos = len(prompt)
    for tok, nxt in zip(gen[:-1], gen[1:]):
        o = attn.forward(emb[tok][None, :], pos)
        total = total + np.sum(o[0] * emb[nxt])
        pos += 1
    return total


def _kvc():
    r = rng(9005)
    return (0.5 * r.standard_normal((4, 4)), 0.5 * r.standard_normal((4, 4)),
            0.5 * r.standard_normal((4, 4)), 0.5 * r.standard_normal((4, 4)),
            r.standard_normal((5, 4)))


# ---- 6. mistral-like sliding-window (banded) mask in the prefill -------------------------

def sliding_window_prefill(Wqkv, Wo, x, window=3):
    T, d = x.shape
    q, k, v = np.split(x @ Wqkv, 3, axis=1)
    ones = np.ones((T, T))
    band = np.tril(ones) - np.tril(ones, k=-window)
    scores = q @ k.T / np.sqrt(d)
    scores = np.where(band.astype(bool), scores, -1e9)
    y = _softmax(scores) @ v @ Wo
    return np.sum(np.tanh(y)) + 0.5 * np.mean(y ** 2)


def _swp():
    r = rng(9006)
    return 0.4 * r.standard_normal((4, 12)), 0.4 * r.standard_normal((4, 4)), \
        r.standard_normal((7, 4))


# ---- 7. mistral-like rolling-buffer cache indexed pos % W -----------------------------------

def rolling_buffer_decode(Wq, Wk, Wv, xs, window=3):
    d = Wq.shape[1]
    cache_k = np.zeros((window, d))
    cache_v = np.zeros((window, d))
    outs = []
    for pos, x in enumerate(xs):
        cache_k[pos % window] = x @ Wk
        cache_v[pos % window] = x @ Wv
        n = min(pos + 1, window)
        s = cache_k[:n] @ (x @ Wq) / math.sqrt(d)
        w = np.exp(s - s.max())
        outs.append((w / w.sum()) @ cache_v[:n])
    out = np.vstack(outs)
    return np.sum(out[1:] * out[:-1])


def _rbd():
    r = rng(9007)
    return (0.5 * r.standard_normal((3, 3)), 0.5 * r.standard_normal((3, 3)),
            0.5 * r.standard_normal((3, 3)), r.standard_normal((7, 3)))


# ---- 8. Mamba-like selective scan -----------------------------------------------------------

def causal_depthwise_conv(u, w):
    K = w.shape[0]
    up = np.pad(u, ((K - 1, 0), (0, 0)))
    out = np.zeros_like(u)
    for j in range(K):
        out += w[j] * up[j:j + u.shape[0]]
    return out


def softplus(x):
    return np.log1p(np.exp(x))


def selective_scan(u, delta, A, B, C, D):
    L, d_in = u.shape
    n = A.shape[1]
    deltaA = np.exp(np.einsum("ld,dn->ldn", delta, A))
    deltaB_u = np.einsum("ld,ln,ld->ldn", delta, B, u)
    h = np.zeros((d_in, n))
    ys = []
    for i in range(L):
        h = deltaA[i] * h + deltaB_u[i]
        ys.append(h @ C[i])
    return np.stack(ys) + u * D


def mamba_selective_scan(p, x, dt_rank=2, d_state=3):
    xz = x @ p["in_proj"]
    xs, res = np.split(xz, 2, axis=-1)
    xs = silu(causal_depthwise_conv(xs, p["conv_w"]) + p["conv_b"])
    dbc = xs @ p["x_proj"]
    delta, B, C = np.split(dbc, [dt_rank, dt_rank + d_state], axis=-1)
    delta = softplus(delta @ p["dt_proj"] + p["dt_bias"])
    A = -np.exp(p["A_log"])
    y = selective_scan(xs, delta, A, B, C, p["D"])
    y = y * silu(res)
    return np.mean((y @ p["out_proj"]) ** 2)


def _mamba():
    r = rng(9008)
    d_model, d_in, n, dt_rank, K = 3, 4, 3, 2, 3
    p = {"in_proj": 0.5 * r.standard_normal((d_model, 2 * d_in)),
         "conv_w": 0.5 * r.standard_normal((K, d_in)),
         "conv_b": 0.1 * r.standard_normal(d_in),
         "x_proj": 0.5 * r.standard_normal((d_in, dt_rank + 2 * n)),
         "dt_proj": 0.5 * r.standard_normal((dt_rank, d_in)),
         "dt_bias": 0.1 * r.standard_normal(d_in),
         "A_log": np.log(np.tile(np.arange(1, n + 1, dtype=float), (d_in, 1))),
         "D": np.ones(d_in) + 0.1 * r.standard_normal(d_in),
         "out_proj": 0.5 * r.standard_normal((d_in, d_model))}
    return p, r.standard_normal((6, d_model))


# ---- 9. S4: bilinear discretisation, kernel by matrix_power, FFT convolution --------------

def discretize(A, B, C, step):
    I = np.eye(A.shape[0])
    BL = np.linalg.inv(I - (step / 2.0) * A)
    Ab = BL @ (I + (step / 2.0) * A)
    Bb = (BL * step) @ B
    return Ab, Bb, C


def k_conv(Ab, Bb, Cb, L):
    return np.array([(Cb @ np.linalg.matrix_power(Ab, l) @ Bb).reshape(()) for l in range(L)])


def causal_convolution(u, K):
    n = u.shape[0] + K.shape[0]
    ud = np.fft.rfft(u, n=n)
    Kd = np.fft.rfft(K, n=n)
    return np.fft.irfft(ud * Kd, n=n)[: u.shape[0]]


def scan_ssm(Ab, Bb, Cb, u):
    x = np.zeros((Ab.shape[0], 1))
    ys = []
    for u_k in u:
        x = Ab @ x + Bb * u_k
        ys.append((Cb @ x)[0, 0])
    return np.array(ys)


def s4_kernel_fft(A, B, C, log_step, u):
    Ab, Bb, Cb = discretize(A, B, C, np.exp(log_step))
    K = k_conv(Ab, Bb, Cb, u.shape[0])
    y_conv = causal_convolution(u, K)
    y_rec = scan_ssm(Ab, Bb, Cb, u)
    return np.sum(y_conv ** 2) + np.sum(y_conv * y_rec)


def _s4():
    r = rng(9009)
    N = 3
    A = -np.eye(N) + 0.3 * r.standard_normal((N, N))
    return (A, r.standard_normal((N, 1)), r.standard_normal((1, N)), np.array(np.log(0.1)),
            r.standard_normal(8))


# ---- 10. causal linear attention by cumulative sums of outer products --------------------

def elu_feature(x):
    return np.where(x > 0, x + 1.0, np.exp(x))


def linear_attention_cumsum(Wq, Wk, Wv, x, eps=1e-6):
    q, k, v = elu_feature(x @ Wq), elu_feature(x @ Wk), x @ Wv
    kv = np.cumsum(np.einsum("ti,tj->tij", k, v), axis=0)
    z = np.cumsum(k, axis=0)
    num = np.einsum("ti,tij->tj", q, kv)
    den = np.einsum("ti,ti->t", q, z)[:, None] + eps
    return np.sum((num / den) ** 2)


def _lac():
    r = rng(9010)
    return (0.5 * r.standard_normal((3, 4)), 0.5 * r.standard_normal((3, 4)),
            0.5 * r.standard_normal((3, 3)), r.standard_normal((6, 3)))


# ---- 11. the preallocated Hin/IFOG LSTM with a bias column of ones ------------------------

def lstm_ifog_prealloc(WLSTM, X, c0=None, h0=None):
    n, b, input_size = X.shape
    d = WLSTM.shape[1] // 4
    if c0 is None:
        c0 = np.zeros((b, d))
    if h0 is None:
        h0 = np.zeros((b, d))
    xphpb = WLSTM.shape[0]
    Hin = np.zeros((n, b, xphpb))
    Hout = np.zeros((n, b, d))
    IFOG = np.zeros((n, b, d * 4))
    IFOGf = np.zeros((n, b, d * 4))
    C = np.zeros((n, b, d))
    Ct = np.zeros((n, b, d))
    for t in range(n):
        prevh = Hout[t - 1] if t > 0 else h0
        Hin[t, :, 0] = 1
        Hin[t, :, 1:input_size + 1] = X[t]
        Hin[t, :, input_size + 1:] = prevh
        IFOG[t] = Hin[t].dot(WLSTM)
        IFOGf[t, :, :3 * d] = 1.0 / (1.0 + np.exp(-IFOG[t, :, :3 * d]))
        IFOGf[t, :, 3 * d:] = np.tanh(IFOG[t, :, 3 * d:])
        prevc = C[t - 1] if t > 0 else c0
        C[t] = IFOGf[t, :, :d] * IFOGf[t, :, 3 * d:] + IFOGf[t, :, d:2 * d] * prevc
        Ct[t] = np.tanh(C[t])
        Hout[t] = IFOGf[t, :, 2 * d:3 * d] * Ct[t]
    return np.sum(Hout ** 2) + np.sum(C[-1])


def _ifog():
    r = rng(9011)
    n, b, inp, d = 4, 2, 3, 3
    W = r.standard_normal((inp + d + 1, 4 * d)) / np.sqrt(inp + d)
    W[0, :] = 0.1
    W[0, d:2 * d] = 1.0
    return W, r.standard_normal((n, b, inp))


# ---- 12. a character tokenizer and a weight-tied one-block model --------------------------

TEXT = "hello world, hold the wheel"
chars = sorted(set(TEXT))
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for ch, i in stoi.items()}
encode = lambda s: [stoi[c] for c in s]  # noqa: E731
decode = lambda ids: "".join(itos[i] for i in ids)  # noqa: E731


def char_tokenizer_tied(wte, wpe, W, text="hold the world"):
    ids = np.array(encode(text), dtype=np.int64)
    assert decode(ids.tolist()) == text
    x_ids, y_ids = ids[:-1], ids[1:]
    T = len(x_ids)
    x = wte[x_ids] + wpe[:T]
    h = x + np.tanh(x @ W)
    logits = h @ wte.T
    counts = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = counts / counts.sum(axis=1, keepdims=True)
    return -np.log(probs[np.arange(T), y_ids]).mean()


def _ctt():
    r = rng(9012)
    V, d = len(chars), 4
    return 0.5 * r.standard_normal((V, d)), 0.1 * r.standard_normal((16, d)), \
        0.5 * r.standard_normal((d, d))


# ---- 13. makemore MLP with batch norm and a step-by-step cross entropy ---------------------

def makemore_mlp_steps(params, Xb, Yb):
    C, W1, b1, bngain, bnbias, W2, b2 = (params[k] for k in
                                         ("C", "W1", "b1", "bngain", "bnbias", "W2", "b2"))
    n = Xb.shape[0]
    emb = C[Xb]
    embcat = emb.reshape(emb.shape[0], -1)
    hprebn = embcat @ W1 + b1
    bnmeani = 1 / n * hprebn.sum(0, keepdims=True)
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff ** 2
    bnvar = 1 / (n - 1) * bndiff2.sum(0, keepdims=True)
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    h = np.tanh(hpreact)
    logits = h @ W2 + b2
    logit_maxes = logits.max(1, keepdims=True)
    norm_logits = logits - logit_maxes
    counts = np.exp(norm_logits)
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum ** -1
    probs = counts * counts_sum_inv
    logprobs = np.log(probs)
    reg = 1e-3 * sum((w ** 2).sum() for w in params.values())
    return -logprobs[range(n), Yb].mean() + reg


def _mm():
    r = rng(9013)
    V, d, block, hid = 7, 3, 3, 5
    params = {"C": r.standard_normal((V, d)),
              "W1": r.standard_normal((d * block, hid)) * 0.4,
              "b1": r.standard_normal(hid) * 0.1,
              "bngain": 1 + 0.1 * r.standard_normal((1, hid)),
              "bnbias": 0.1 * r.standard_normal((1, hid)),
              "W2": r.standard_normal((hid, V)) * 0.4,
              "b2": r.standard_normal(V) * 0.1}
    return params, r.integers(0, V, (8, block)), r.integers(0, V, 8)


# ---- 14. makemore-wavenet layer classes storing self.out -------------------------------------

class Embedding:
    def __init__(self, weight):
        self.weight = weight

    def __call__(self, IX):
        self.out = self.weight[IX]
        return self.out


class FlattenConsecutive:
    def __init__(self, n):
        self.n = n

    def __call__(self, x):
        B, T, C = x.shape
        x = x.reshape(B, T // self.n, C * self.n)
        if x.shape[1] == 1:
            x = np.squeeze(x, axis=1)
        self.out = x
        return self.out


class LinearNoBias:
    def __init__(self, weight):
        self.weight = weight

    def __call__(self, x):
        self.out = x @ self.weight
        return self.out


class BatchNorm1d:
    def __init__(self, gamma, beta, eps=1e-5, momentum=0.1):
        self.gamma, self.beta = gamma, beta
        self.eps, self.momentum = eps, momentum
        self.training = True
        self.running_mean = np.zeros(gamma.shape)
        self.running_var = np.ones(gamma.shape)

    def __call__(self, x):
        if self.training:
            dim = 0 if x.ndim == 2 else (0, 1)
            xmean = x.mean(dim, keepdims=True)
            xvar = x.var(dim, keepdims=True)
        else:
            xmean, xvar = self.running_mean, self.running_var
        xhat = (x - xmean) / np.sqrt(xvar + self.eps)
        self.out = self.gamma * xhat + self.beta
        if self.training:
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
        return self.out


class Tanh:
    def __call__(self, x):
        self.out = np.tanh(x)
        return self.out


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        self.out = x
        return self.out


def makemore_wavenet(C, W1, g1, b1, W2, g2, b2, W3, Xb, Yb):
    model = Sequential([
        Embedding(C),
        FlattenConsecutive(2), LinearNoBias(W1), BatchNorm1d(g1, b1), Tanh(),
        FlattenConsecutive(2), LinearNoBias(W2), BatchNorm1d(g2, b2), Tanh(),
        LinearNoBias(W3),
    ])
    logits = model(Xb)
    logp = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)
    return -np.mean(logp[np.arange(len(Yb)), Yb])


def _wn():
    r = rng(9014)
    V, d, hid = 6, 2, 4
    return (r.standard_normal((V, d)), 0.5 * r.standard_normal((2 * d, hid)),
            1 + 0.1 * r.standard_normal(hid), 0.1 * r.standard_normal(hid),
            0.5 * r.standard_normal((2 * hid, hid)), 1 + 0.1 * r.standard_normal(hid),
            0.1 * r.standard_normal(hid), 0.5 * r.standard_normal((hid, V)),
            r.integers(0, V, (6, 4)), r.integers(0, V, 6))


# ---- 15. seq2seq with additive (Bahdanau) attention and teacher forcing -------------------

def gru_step(x, h, W, U, b):
    H = h.shape[0]
    gx = W @ x + b
    gh = U @ h
    z = scipy.special.expit(gx[:H] + gh[:H])
    r = scipy.special.expit(gx[H:2 * H] + gh[H:2 * H])
    n = np.tanh(gx[2 * H:] + r * gh[2 * H:])
    return (1 - z) * n + z * h


def bahdanau_seq2seq(p, src=(1, 3, 2, 4), tgt=(0, 2, 3, 1), bos=0):
    enc_states = []
    h = np.zeros(p["enc_U"].shape[1])
    for tok in src:
        h = gru_step(p["src_emb"][tok], h, p["enc_W"], p["enc_U"], p["enc_b"])
        enc_states.append(h)
    enc = np.array(enc_states)
    keys = enc @ p["Wa"]
    s = np.tanh(p["Ws"] @ h)
    loss = 0.0
    y_prev = bos
    for y_t in tgt:
        energy = np.tanh(keys + p["Ua"] @ s) @ p["va"]
        alpha = np.exp(energy - energy.max())
        alpha /= alpha.sum()
        context = alpha @ enc
        dec_in = np.concatenate([p["tgt_emb"][y_prev], context])
        s = gru_step(dec_in, s, p["dec_W"], p["dec_U"], p["dec_b"])
        logits = p["Wo"] @ np.concatenate([s, context])
        loss -= logits[y_t] - scipy.special.logsumexp(logits)
        y_prev = y_t
    return loss / len(tgt)


def _bah():
    r = rng(9015)
    V, E, H, A = 5, 3, 4, 3
    g = lambda *shape: 0.4 * r.standard_normal(shape)  # noqa: E731
    p = {"src_emb": g(V, E), "tgt_emb": g(V, E),
         "enc_W": g(3 * H, E), "enc_U": g(3 * H, H), "enc_b": g(3 * H),
         "Ws": g(H, H), "Wa": g(H, A), "Ua": g(A, H), "va": g(A),
         "dec_W": g(3 * H, E + H), "dec_U": g(3 * H, H), "dec_b": g(3 * H),
         "Wo": g(V, 2 * H)}
    return (p,)


# ---- 16. T5 relative-position buckets looked up from a bias table ---------------------------

def relative_position_bucket(relative_position, bidirectional=True, num_buckets=8,
                             max_distance=16):
    ret = 0
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret += (n < 0).astype(np.int64) * num_buckets
        n = np.abs(n)
    else:
        n = np.maximum(n, 0)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        np.log(np.maximum(n, 1) / max_exact) / np.log(max_distance / max_exact)
        * (num_buckets - max_exact)).astype(np.int64)
    val_if_large = np.minimum(val_if_large, num_buckets - 1)
    return ret + np.where(is_small, n, val_if_large)


def t5_relative_bias(rel_table, Wq, Wk, x, n_heads=2):
    T, d = x.shape
    ctx = np.arange(T)[:, None]
    mem = np.arange(T)[None, :]
    buckets = relative_position_bucket(mem - ctx)
    bias = rel_table[buckets].transpose(2, 0, 1)
    q = (x @ Wq).reshape(T, n_heads, -1).swapaxes(0, 1)
    k = (x @ Wk).reshape(T, n_heads, -1).swapaxes(0, 1)
    scores = q @ k.swapaxes(-1, -2) + bias
    attn = scipy.special.softmax(scores, axis=-1)
    return np.sum(attn * scores) + 0.1 * np.sum(bias ** 2)


def _t5():
    r = rng(9016)
    return (0.5 * r.standard_normal((8, 2)), 0.5 * r.standard_normal((4, 4)),
            0.5 * r.standard_normal((4, 4)), r.standard_normal((9, 4)))


# ---- 17. shifted logits with ignore_index=-100 and take_along_axis ---------------------------

IGNORE_INDEX = -100


def shifted_lm_ignore_index(wte, W, input_ids, labels):
    h = np.tanh(wte[input_ids] @ W)
    logits = h @ wte.T
    shift_logits = logits[:, :-1, :]
    shift_labels = labels[:, 1:]
    mask = shift_labels != IGNORE_INDEX
    safe = np.where(mask, shift_labels, 0)
    logp = scipy.special.log_softmax(shift_logits, axis=-1)
    nll = -np.take_along_axis(logp, safe[..., None], axis=-1)[..., 0]
    return (nll * mask).sum() / mask.sum()


def _slm():
    r = rng(9017)
    V, d = 7, 4
    ids = r.integers(0, V, (3, 6))
    labels = ids.copy()
    labels[0, 4:] = IGNORE_INDEX
    labels[2, 3:] = IGNORE_INDEX
    return 0.5 * r.standard_normal((V, d)), 0.5 * r.standard_normal((d, d)), ids, labels


# ---- 18. greedy decoding: argmax ids fed back, log-probs of the chosen tokens -------------

def tiny_gpt(ids, wte, wpe, w_qkv, w_o):
    x = wte[ids] + wpe[: len(ids)]
    q, k, v = np.split(x @ w_qkv, 3, axis=-1)
    T = len(ids)
    causal = (1 - np.tri(T, dtype=x.dtype)) * -1e10
    a = _softmax(q @ k.T / np.sqrt(q.shape[-1]) + causal)
    x = x + a @ v @ w_o
    return x @ wte.T


def greedy_decode_logprob(wte, wpe, w_qkv, w_o, prompt=(1, 3), n_new=3):
    ids = list(prompt)
    total = 0.0
    for _ in range(n_new):
        logits = tiny_gpt(np.array(ids), wte, wpe, w_qkv, w_o)
        next_id = int(np.argmax(logits[-1]))
        total = total + scipy.special.log_softmax(logits[-1])[next_id]
        ids.append(next_id)
    return total


def _gd():
    r = rng(9018)
    V, d = 6, 4
    return (r.standard_normal((V, d)), 0.3 * r.standard_normal((8, d)),
            0.4 * r.standard_normal((d, 3 * d)), 0.4 * r.standard_normal((d, d)))


# ---- 19. left-padded batch: position ids from cumsum, padding and causal masks --------------

def left_padded_positions(wte, wpe, Wq, Wk, Wv, input_ids, attention_mask):
    B, T = input_ids.shape
    position_ids = np.cumsum(attention_mask, axis=-1) - 1
    position_ids = np.where(attention_mask == 0, 1, position_ids)
    h = wte[input_ids] + wpe[position_ids]
    q, k, v = h @ Wq, h @ Wk, h @ Wv
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
    causal = np.tril(np.ones((T, T), dtype=bool))
    allowed = causal[None, :, :] & attention_mask[:, None, :].astype(bool)
    scores = np.where(allowed, scores, np.finfo(scores.dtype).min)
    out = scipy.special.softmax(scores, axis=-1) @ v
    keep = attention_mask[..., None]
    return np.sum((out * keep) ** 2) / keep.sum()


def _lpp():
    r = rng(9019)
    V, d, T = 6, 4, 5
    ids = r.integers(0, V, (3, T))
    am = np.ones((3, T), dtype=np.int64)
    am[0, :2] = 0
    am[1, :1] = 0
    ids[am == 0] = 0
    return (r.standard_normal((V, d)), 0.3 * r.standard_normal((T, d)),
            0.5 * r.standard_normal((d, d)), 0.5 * r.standard_normal((d, d)),
            0.5 * r.standard_normal((d, d)), ids, am)


# ---- 20. a dataclass GPT config, np.moveaxis heads, att[..., ~causal] = -np.inf ----------

@dataclass
class GPTConfig:
    block_size: int = 8
    n_head: int = 2
    n_embd: int = 4


def ellipsis_bool_mask_gpt(params, idx, config=GPTConfig()):
    B, T = idx.shape
    C, nh = config.n_embd, config.n_head
    x = params["wte"][idx] + params["wpe"][np.arange(T)]
    qkv = x @ params["c_attn"]
    q, k, v = qkv[..., :C], qkv[..., C:2 * C], qkv[..., 2 * C:]
    q = np.moveaxis(q.reshape(B, T, nh, C // nh), 2, 1)
    k = np.moveaxis(k.reshape(B, T, nh, C // nh), 2, 1)
    v = np.moveaxis(v.reshape(B, T, nh, C // nh), 2, 1)
    att = (q @ np.swapaxes(k, -2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
    causal = np.tril(np.ones((config.block_size, config.block_size), dtype=bool))[:T, :T]
    att[..., ~causal] = -np.inf
    att = np.exp(att - att.max(axis=-1, keepdims=True))
    att = att / att.sum(axis=-1, keepdims=True)
    y = np.moveaxis(att @ v, 1, 2).reshape(B, T, C)
    y = y @ params["c_proj"]
    return np.mean((x + y) ** 2)


def _ebm():
    r = rng(9020)
    C = 4
    params = {"wte": r.standard_normal((5, C)), "wpe": 0.3 * r.standard_normal((8, C)),
              "c_attn": 0.4 * r.standard_normal((C, 3 * C)),
              "c_proj": 0.4 * r.standard_normal((C, C))}
    return params, r.integers(0, 5, (2, 5))


# ---- 21. gemma-like: (1 + w) RMSNorm, exact GeGLU, scaled embeddings, soft-capping -------

def gemma_rms(x, w, eps=1e-6):
    var = np.mean(np.square(x), axis=-1, keepdims=True)
    return x * (1.0 / np.sqrt(var + eps)) * (1.0 + w)


def gelu_exact(x):
    return 0.5 * x * (1.0 + scipy.special.erf(x / np.sqrt(2.0)))


def gemma_softcap_geglu(p, tokens=(2, 0, 4, 1, 3), attn_cap=5.0, final_cap=3.0):
    ids = np.asarray(tokens)
    x = p["embed"][ids[:-1]]
    d = x.shape[-1]
    x = x * np.array(d ** 0.5, dtype=x.dtype)
    h = gemma_rms(x, p["ln1"])
    q, k, v = h @ p["wq"], h @ p["wk"], h @ p["wv"]
    s = q @ k.T * d ** -0.5
    s = attn_cap * np.tanh(s / attn_cap)
    T = s.shape[0]
    s = np.where(np.tril(np.ones((T, T))) > 0, s, -np.inf)
    x = x + scipy.special.softmax(s, axis=-1) @ v @ p["wo"]
    h = gemma_rms(x, p["ln2"])
    x = x + (gelu_exact(h @ p["gate"]) * (h @ p["up"])) @ p["down"]
    logits = gemma_rms(x, p["final"]) @ p["embed"].T
    logits = np.tanh(logits / final_cap) * final_cap
    logp = scipy.special.log_softmax(logits, axis=-1)
    return -np.mean(logp[np.arange(T), ids[1:]])


def _gem():
    r = rng(9021)
    V, d, f = 6, 4, 6
    g = lambda *shape: 0.3 * r.standard_normal(shape)  # noqa: E731
    p = {"embed": g(V, d) * 2, "ln1": g(d), "ln2": g(d), "final": g(d),
         "wq": g(d, d), "wk": g(d, d), "wv": g(d, d), "wo": g(d, d),
         "gate": g(d, f), "up": g(d, f), "down": g(f, d)}
    return (p,)


# ---- 22. GPT blocks as classes, in-place residual x += ... ---------------------------------

class LayerNormC:
    def __init__(self, g, b):
        self.g, self.b = g, b

    def __call__(self, x):
        mu = x.mean(-1, keepdims=True)
        var = x.var(-1, keepdims=True)
        return self.g * (x - mu) / np.sqrt(var + 1e-5) + self.b


class CausalSelfAttention:
    def __init__(self, w_attn, w_proj, n_head):
        self.w_attn, self.w_proj, self.n_head = w_attn, w_proj, n_head

    def __call__(self, x):
        T, C = x.shape
        hs = C // self.n_head
        q, k, v = np.split(x @ self.w_attn, 3, axis=1)
        q = np.swapaxes(q.reshape(T, self.n_head, hs), 0, 1)
        k = np.swapaxes(k.reshape(T, self.n_head, hs), 0, 1)
        v = np.swapaxes(v.reshape(T, self.n_head, hs), 0, 1)
        att = q @ np.swapaxes(k, 1, 2) / math.sqrt(hs)
        att = att + np.triu(np.full((T, T), -1e9), k=1)
        att = _softmax(att)
        self.attn_cache = att
        y = np.swapaxes(att @ v, 0, 1).reshape(T, C)
        return y @ self.w_proj


class Block:
    def __init__(self, p, n_head):
        self.ln_1 = LayerNormC(p["ln_1_g"], p["ln_1_b"])
        self.attn = CausalSelfAttention(p["attn_w"], p["proj_w"], n_head)
        self.ln_2 = LayerNormC(p["ln_2_g"], p["ln_2_b"])
        self.fc, self.proj = p["fc_w"], p["mlp_proj_w"]

    def mlp(self, x):
        return np.tanh(x @ self.fc) @ self.proj


def gpt_inplace_residual(wte, wpe, blocks, idx=(4, 1, 0, 2, 3, 1)):
    idx = np.array(idx)
    T = idx.size
    x = wte[idx] + wpe[:T]
    model_blocks = [Block(p, n_head=2) for p in blocks]
    for blk in model_blocks:
        x += blk.attn(blk.ln_1(x))
        x += blk.mlp(blk.ln_2(x))
    logits = x @ wte.T
    return np.mean(scipy.special.logsumexp(logits[:-1], axis=1)
                   - logits[np.arange(T - 1), idx[1:]])


def _gir():
    r = rng(9022)
    V, C = 5, 4
    blocks = []
    for _ in range(2):
        blocks.append({"ln_1_g": 1 + 0.1 * r.standard_normal(C),
                       "ln_1_b": 0.1 * r.standard_normal(C),
                       "attn_w": 0.4 * r.standard_normal((C, 3 * C)),
                       "proj_w": 0.4 * r.standard_normal((C, C)),
                       "ln_2_g": 1 + 0.1 * r.standard_normal(C),
                       "ln_2_b": 0.1 * r.standard_normal(C),
                       "fc_w": 0.4 * r.standard_normal((C, 2 * C)),
                       "mlp_proj_w": 0.4 * r.standard_normal((2 * C, C))})
    return r.standard_normal((V, C)), 0.3 * r.standard_normal((8, C)), blocks


# ---- 23. HF-style past_key_values: lists of (k, v) tuples grown by concatenate -------------

def attn_with_past(x, w, layer_past, n_head=2):
    T, C = x.shape
    q, k, v = np.split(x @ w["c_attn"], 3, axis=-1)
    split = lambda a: a.reshape(T, n_head, C // n_head).transpose(1, 0, 2)  # noqa: E731
    q, k, v = split(q), split(k), split(v)
    if layer_past is not None:
        past_key, past_value = layer_past
        k = np.concatenate((past_key, k), axis=-2)
        v = np.concatenate((past_value, v), axis=-2)
    present = (k, v)
    w_ = q @ k.transpose(0, 2, 1) / np.sqrt(v.shape[-1])
    nd, ns = w_.shape[-2], w_.shape[-1]
    b = np.tril(np.ones((ns, ns)))[ns - nd:ns, :ns]
    w_ = w_ * b - 1e4 * (1 - b)
    a = _softmax(w_) @ v
    a = a.transpose(1, 0, 2).reshape(T, C)
    return a @ w["c_proj"], present


def past_key_values_concat(wte, layers, prompt=(0, 3, 1), continuation=(2, 4)):
    past = [None] * len(layers)
    x = wte[list(prompt)]
    total = 0.0
    for step_ids in [list(prompt)] + [[t] for t in continuation]:
        x = wte[step_ids]
        presents = []
        for w, layer_past in zip(layers, past):
            a, present = attn_with_past(x, w, layer_past)
            x = x + a
            presents.append(present)
        past = presents
        total = total + np.sum(np.tanh(x[-1] @ wte.T))
    return total


def _pkv():
    r = rng(9023)
    C = 4
    layers = [{"c_attn": 0.4 * r.standard_normal((C, 3 * C)),
               "c_proj": 0.4 * r.standard_normal((C, C))} for _ in range(2)]
    return r.standard_normal((5, C)), layers


# ---- 24. Transformer-XL memory: attend over [mem; h], keep the last M ---------------------

def txl_segment(h, mem, Wq, Wk, Wv):
    cat = np.concatenate([mem, h], axis=0) if mem is not None else h
    q, k, v = h @ Wq, cat @ Wk, cat @ Wv
    T, S = h.shape[0], cat.shape[0]
    s = q @ k.T / np.sqrt(q.shape[1])
    mask = np.triu(np.ones((T, S)), k=1 + S - T).astype(bool)
    s[mask] = -np.inf
    return h + _softmax(s) @ v


def transformer_xl_memory(Wq, Wk, Wv, segments, mem_len=4):
    mem = None
    total = 0.0
    for seg in segments:
        out = txl_segment(seg, mem, Wq, Wk, Wv)
        new_mem = seg if mem is None else np.concatenate([mem, seg], axis=0)
        mem = new_mem[-mem_len:]
        total = total + np.sum(out ** 2)
    return total


def _txl():
    r = rng(9024)
    return (0.5 * r.standard_normal((3, 3)), 0.5 * r.standard_normal((3, 3)),
            0.5 * r.standard_normal((3, 3)), [r.standard_normal((3, 3)) for _ in range(3)])


# ---- 25. RetNet: parallel decay matrix versus the recurrence ---------------------------------

def retention_parallel_recurrent(g, Wq, Wk, Wv, x):
    gamma = 1.0 / (1.0 + np.exp(-g))
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    T = x.shape[0]
    n = np.arange(T)
    D = gamma ** (n[:, None] - n[None, :]) * np.tril(np.ones((T, T)))
    par = (q @ k.T * D) @ v
    S = np.zeros((k.shape[1], v.shape[1]))
    rec = []
    for t in range(T):
        S = gamma * S + np.outer(k[t], v[t])
        rec.append(q[t] @ S)
    rec = np.array(rec)
    return np.sum(par ** 2) + np.sum(rec * par)


def _ret():
    r = rng(9025)
    return (np.array(1.2), 0.5 * r.standard_normal((3, 3)), 0.5 * r.standard_normal((3, 3)),
            0.5 * r.standard_normal((3, 3)), r.standard_normal((6, 3)))


# ---- 26. a tiny BPE merge loop; ids kept as a Python list and used as E[ids] --------------

BASE_VOCAB = {ch: i for i, ch in enumerate("abcdr ")}
MERGES = {(0, 1): 6, (6, 5): 7, (2, 0): 8}


def bpe_encode(text):
    ids = [BASE_VOCAB[ch] for ch in text]
    while len(ids) >= 2:
        pairs = set(zip(ids, ids[1:]))
        pair = min(pairs, key=lambda p: MERGES.get(p, float("inf")))
        if pair not in MERGES:
            break
        idx = MERGES[pair]
        new_ids, i = [], 0
        while i < len(ids):
            if i < len(ids) - 1 and (ids[i], ids[i + 1]) == pair:
                new_ids.append(idx)
                i += 2
            else:
                new_ids.append(ids[i])
                i += 1
        ids = new_ids
    return ids


def bpe_ids_embedding(E, W, text="abracadabra"):
    ids = bpe_encode(text)
    h = np.zeros(E.shape[1])
    loss = 0.0
    for i in range(len(ids) - 1):
        h = np.tanh(W @ h + E[ids[i]])
        logits = E @ h
        loss = loss + scipy.special.logsumexp(logits) - logits[ids[i + 1]]
    bag = E[ids].mean(axis=0)
    return loss + np.sum(bag ** 2)


def _bpe():
    r = rng(9026)
    return 0.7 * r.standard_normal((9, 4)), 0.5 * r.standard_normal((4, 4))


# ---- 27. batch-first GRU iterating np.moveaxis(X, 1, 0) -----------------------------------

def batch_first_gru(X, Wz, Wr, Wh):
    B, T, D = X.shape
    H = Wz.shape[1]
    h = np.zeros((B, H))
    outs = []
    for x_t in np.moveaxis(X, 1, 0):
        hx = np.hstack([h, x_t])
        z = scipy.special.expit(hx @ Wz)
        r = scipy.special.expit(hx @ Wr)
        h_tilde = np.tanh(np.hstack([r * h, x_t]) @ Wh)
        h = (1 - z) * h + z * h_tilde
        outs.append(h)
    out = np.stack(outs, axis=1)
    return np.sum(out[:, -1] ** 2) + np.mean(out)


def _bfg():
    r = rng(9027)
    B, T, D, H = 2, 5, 3, 4
    return (r.standard_normal((B, T, D)), 0.5 * r.standard_normal((H + D, H)),
            0.5 * r.standard_normal((H + D, H)), 0.5 * r.standard_normal((H + D, H)))


# ---- 28. stacked LSTM with states[l] = (h, c) and one-hot np.eye(V)[tok] inputs ------------

def stacked_lstm_dict_states(Ws, Wout, seq=(1, 0, 3, 2, 4, 1)):
    V = Wout.shape[0]
    H = Wout.shape[1]
    L = len(Ws)
    states = {l: (np.zeros(H), np.zeros(H)) for l in range(L)}
    loss = 0.0
    for tok, nxt in zip(seq[:-1], seq[1:]):
        inp = np.eye(V)[tok]
        for l in range(L):
            h, c = states[l]
            gates = Ws[l] @ np.concatenate([inp, h, [1.0]])
            i, f, o, g = np.split(gates, 4)
            c = scipy.special.expit(f) * c + scipy.special.expit(i) * np.tanh(g)
            h = scipy.special.expit(o) * np.tanh(c)
            states[l] = (h, c)
            inp = h
        logits = Wout @ inp
        loss -= logits[nxt] - np.log(np.sum(np.exp(logits)))
    return loss


def _sld():
    r = rng(9028)
    V, H = 5, 3
    Ws = [0.5 * r.standard_normal((4 * H, V + H + 1)),
          0.5 * r.standard_normal((4 * H, H + H + 1))]
    return Ws, r.standard_normal((V, H))


# ---- 29. a recurrence by functools.reduce and itertools.accumulate -------------------------

def reduce_accumulate_rnn(W, U, b, xs):
    h0 = np.zeros(U.shape[0])
    step = lambda h, x_t: np.tanh(W @ x_t + U @ h + b)  # noqa: E731
    h_last = functools.reduce(step, xs, h0)
    hs = list(itertools.accumulate(xs, step, initial=h0))[1:]
    return np.sum(h_last ** 2) + sum(np.sum(h) for h in hs)


def _raa():
    r = rng(9029)
    return (0.5 * r.standard_normal((4, 3)), 0.5 * r.standard_normal((4, 4)),
            0.1 * r.standard_normal(4), list(r.standard_normal((5, 3))))


# ---- 30. Annotated-Transformer encoder: deepcopy clones, SublayerConnection lambdas -------

class AnnLayerNorm:
    def __init__(self, a_2, b_2, eps=1e-6):
        self.a_2, self.b_2, self.eps = a_2, b_2, eps

    def __call__(self, x):
        mean = x.mean(-1, keepdims=True)
        std = x.std(-1, keepdims=True, ddof=1)
        return self.a_2 * (x - mean) / (std + self.eps) + self.b_2


class SublayerConnection:
    def __init__(self, norm):
        self.norm = norm

    def __call__(self, x, sublayer):
        return x + sublayer(self.norm(x))


def clones(module, N):
    return [copy.deepcopy(module) for _ in range(N)]


class MultiHeadedAttention:
    def __init__(self, h, linears):
        self.h = h
        self.linears = linears

    def __call__(self, query, key, value, mask):
        nb, T, d_model = query.shape
        d_k = d_model // self.h
        query, key, value = [(x @ lin).reshape(nb, -1, self.h, d_k).transpose(0, 2, 1, 3)
                             for lin, x in zip(self.linears, (query, key, value))]
        scores = query @ key.transpose(0, 1, 3, 2) / math.sqrt(d_k)
        scores = np.where(mask[:, None] == 0, -1e9, scores)
        p_attn = scipy.special.softmax(scores, axis=-1)
        x = (p_attn @ value).transpose(0, 2, 1, 3).reshape(nb, -1, self.h * d_k)
        return x @ self.linears[-1]


class EncoderLayer:
    def __init__(self, self_attn, ff, norm):
        self.self_attn, self.ff = self_attn, ff
        self.sublayer = clones(SublayerConnection(norm), 2)

    def __call__(self, x, mask):
        x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
        return self.sublayer[1](x, self.ff)


def annotated_encoder(p, src, pad=0, N=2):
    d_model = p["lut"].shape[1]
    x = p["lut"][src] * math.sqrt(d_model)
    T = src.shape[1]
    pe = np.zeros((T, d_model))
    position = np.arange(0, T)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    x = x + pe[None]
    mask = (src != pad)[:, None, :]
    norm = AnnLayerNorm(p["a_2"], p["b_2"])
    ff = lambda h: np.maximum(0.0, h @ p["w_1"]) @ p["w_2"]  # noqa: E731
    layer = EncoderLayer(MultiHeadedAttention(2, p["linears"]), ff, norm)
    for lyr in clones(layer, N):
        x = lyr(x, mask)
    return np.sum(norm(x) * (src != pad)[..., None]) / 10 + np.mean(x ** 2)


def _ann():
    r = rng(9030)
    V, d = 6, 4
    p = {"lut": 0.5 * r.standard_normal((V, d)),
         "a_2": 1 + 0.1 * r.standard_normal(d), "b_2": 0.1 * r.standard_normal(d),
         "w_1": 0.5 * r.standard_normal((d, 6)), "w_2": 0.5 * r.standard_normal((6, d)),
         "linears": [0.5 * r.standard_normal((d, d)) for _ in range(4)]}
    src = np.array([[1, 3, 2, 5, 0], [4, 4, 1, 0, 0]])
    return p, src


# ---- 31. a Hyena-like long convolution by np.convolve with an implicit filter --------------

def hyena_long_conv(Wf, log_decay, Wg, u):
    L, d = u.shape
    t = np.linspace(0.0, 1.0, L)[:, None]
    feats = np.concatenate([t, np.sin(np.pi * t), np.cos(np.pi * t)], axis=1)
    h = np.sin(feats @ Wf) * np.exp(-np.exp(log_decay) * t)
    y = np.stack([np.convolve(u[:, c], h[:, c])[:L] for c in range(d)], axis=1)
    gate = scipy.special.expit(u @ Wg)
    return np.sum((y * gate) ** 2) / L


def _hy():
    r = rng(9031)
    return (r.standard_normal((3, 3)), 0.2 * r.standard_normal(3),
            0.5 * r.standard_normal((3, 3)), r.standard_normal((8, 3)))


# ---- 32. LSTM gates unpacked from an einsum over stacked (4, H, D) weights ---------------

def einsum_gate_unpack_lstm(Wx, Wh, b, xs):
    H = Wh.shape[1]
    h, c = np.zeros(H), np.zeros(H)
    hs = []
    for x in xs:
        i, f, g, o = np.einsum("ghd,d->gh", Wx, x) + np.einsum("ghk,k->gh", Wh, h) + b
        c = scipy.special.expit(f) * c + scipy.special.expit(i) * np.tanh(g)
        h = scipy.special.expit(o) * np.tanh(c)
        hs.append(h)
    return np.sum(np.array(hs) ** 2)


def _egu():
    r = rng(9032)
    D, H = 3, 4
    return (0.5 * r.standard_normal((4, H, D)), 0.5 * r.standard_normal((4, H, H)),
            0.1 * r.standard_normal((4, H)), r.standard_normal((5, D)))


# ---- 33. llama2.c ported line by line: flat weights, a RunState of buffers written in place

@dataclass
class Config:
    dim: int = 4
    hidden_dim: int = 6
    n_layers: int = 2
    n_heads: int = 2
    vocab_size: int = 5
    seq_len: int = 4


@dataclass
class RunState:
    x: np.ndarray
    xb: np.ndarray
    xb2: np.ndarray
    hb: np.ndarray
    hb2: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    att: np.ndarray
    logits: np.ndarray
    key_cache: np.ndarray
    value_cache: np.ndarray


def new_run_state(c):
    return RunState(np.zeros(c.dim), np.zeros(c.dim), np.zeros(c.dim), np.zeros(c.hidden_dim),
                    np.zeros(c.hidden_dim), np.zeros(c.dim), np.zeros(c.dim), np.zeros(c.dim),
                    np.zeros((c.n_heads, c.seq_len)), np.zeros(c.vocab_size),
                    np.zeros((c.n_layers, c.seq_len, c.dim)),
                    np.zeros((c.n_layers, c.seq_len, c.dim)))


def rmsnorm_into(o, x, weight):
    ss = np.sum(x * x) / x.size + 1e-5
    o[:] = weight * (x / np.sqrt(ss))


def matmul_into(xout, x, w, n, d):
    xout[:] = w.reshape(d, n) @ x


def softmax_inplace(x):
    x -= x.max()
    np.exp(x, out=x)
    x /= x.sum()


def transformer_step(token, pos, p, w, s):
    dim, hs = p.dim, p.dim // p.n_heads
    s.x[:] = w["token_embedding_table"][token * dim:(token + 1) * dim]
    for l in range(p.n_layers):
        rmsnorm_into(s.xb, s.x, w["rms_att_weight"][l * dim:(l + 1) * dim])
        matmul_into(s.q, s.xb, w["wq"][l * dim * dim:(l + 1) * dim * dim], dim, dim)
        matmul_into(s.k, s.xb, w["wk"][l * dim * dim:(l + 1) * dim * dim], dim, dim)
        matmul_into(s.v, s.xb, w["wv"][l * dim * dim:(l + 1) * dim * dim], dim, dim)
        for i in range(0, dim, 2):
            freq = 1.0 / 10000.0 ** ((i % hs) / hs)
            fcr, fci = math.cos(pos * freq), math.sin(pos * freq)
            for vec in (s.q, s.k):
                v0, v1 = vec[i], vec[i + 1]
                vec[i] = v0 * fcr - v1 * fci
                vec[i + 1] = v0 * fci + v1 * fcr
        key_cache_row = s.key_cache[l, pos]
        key_cache_row[:] = s.k
        s.value_cache[l, pos] = s.v
        for h in range(p.n_heads):
            q = s.q[h * hs:(h + 1) * hs]
            att = s.att[h, :pos + 1]
            for t in range(pos + 1):
                att[t] = np.dot(q, s.key_cache[l, t, h * hs:(h + 1) * hs]) / math.sqrt(hs)
            softmax_inplace(att)
            xb = s.xb[h * hs:(h + 1) * hs]
            xb[:] = 0.0
            for t in range(pos + 1):
                xb += att[t] * s.value_cache[l, t, h * hs:(h + 1) * hs]
        matmul_into(s.xb2, s.xb, w["wo"][l * dim * dim:(l + 1) * dim * dim], dim, dim)
        s.x += s.xb2
        rmsnorm_into(s.xb, s.x, w["rms_ffn_weight"][l * dim:(l + 1) * dim])
        hd = p.hidden_dim
        matmul_into(s.hb, s.xb, w["w1"][l * dim * hd:(l + 1) * dim * hd], dim, hd)
        matmul_into(s.hb2, s.xb, w["w3"][l * dim * hd:(l + 1) * dim * hd], dim, hd)
        s.hb[:] = s.hb * (1.0 / (1.0 + np.exp(-s.hb))) * s.hb2
        matmul_into(s.xb, s.hb, w["w2"][l * dim * hd:(l + 1) * dim * hd], hd, dim)
        s.x += s.xb
    rmsnorm_into(s.x, s.x, w["rms_final_weight"])
    matmul_into(s.logits, s.x, w["token_embedding_table"], dim, p.vocab_size)


def llama2c_run_state(weights, tokens=(1, 3, 0, 4, 2)):
    conf = Config()
    state = new_run_state(conf)
    loss = 0.0
    for pos, (tok, nxt) in enumerate(zip(tokens[:-1], tokens[1:])):
        transformer_step(tok, pos, conf, weights, state)
        loss += scipy.special.logsumexp(state.logits) - state.logits[nxt]
    return loss / (len(tokens) - 1)


def _l2c():
    r = rng(9033)
    c = Config()
    d, hd, L, V = c.dim, c.hidden_dim, c.n_layers, c.vocab_size
    w = {"token_embedding_table": r.standard_normal(V * d),
         "rms_att_weight": 1 + 0.1 * r.standard_normal(L * d),
         "wq": 0.5 * r.standard_normal(L * d * d), "wk": 0.5 * r.standard_normal(L * d * d),
         "wv": 0.5 * r.standard_normal(L * d * d), "wo": 0.5 * r.standard_normal(L * d * d),
         "rms_ffn_weight": 1 + 0.1 * r.standard_normal(L * d),
         "w1": 0.5 * r.standard_normal(L * d * hd), "w2": 0.5 * r.standard_normal(L * d * hd),
         "w3": 0.5 * r.standard_normal(L * d * hd),
         "rms_final_weight": 1 + 0.1 * r.standard_normal(d)}
    return (w,)


# ---- 34. a stateful cell updating self.h in place; the caller keeps every returned h ------

class StatefulGRU:
    def __init__(self, Wz, Wh):
        self.Wz, self.Wh = Wz, Wh
        self.h = np.zeros(Wz.shape[1])

    def step(self, x):
        hx = np.concatenate([self.h, x])
        z = scipy.special.expit(hx @ self.Wz)
        cand = np.tanh(hx @ self.Wh)
        self.h *= z
        self.h += (1.0 - z) * cand
        return self.h


def aliased_state_appends(Wz, Wh, xs):
    cell = StatefulGRU(Wz, Wh)
    hs = []
    norms = []
    for x in xs:
        h = cell.step(x)
        norms.append(np.sum(h ** 2))
        hs.append(h)
    return sum(norms) + np.sum(np.array(hs) * np.arange(1, len(hs) + 1)[:, None])


def _asa():
    r = rng(9034)
    return (0.6 * r.standard_normal((6, 3)), 0.6 * r.standard_normal((6, 3)),
            r.standard_normal((5, 3)))


# ---- 35. scores[np.triu_indices(T, 1)] = -1e9 ---------------------------------------------

def triu_indices_scores(Wq, Wk, Wv, x):
    T = x.shape[0]
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    scores = q @ k.T / np.sqrt(k.shape[1])
    scores[np.triu_indices(T, k=1)] = -1e9
    out = scipy.special.softmax(scores, axis=1) @ v
    return np.sum(out * x)


def _tis():
    r = rng(9035)
    return (0.5 * r.standard_normal((4, 4)), 0.5 * r.standard_normal((4, 4)),
            0.5 * r.standard_normal((4, 4)), r.standard_normal((6, 4)))


# ---- 36. a top-k filtered next-token loss (logits[indices_to_remove] = -inf) --------------

def topk_filtered_nll(E, W, ids, targets, top_k=3, temperature=0.8):
    h = np.tanh(E[ids] @ W)
    logits = (h @ E.T) / temperature
    kth = np.sort(logits, axis=-1)[:, -top_k][:, None]
    indices_to_remove = logits < kth
    logits[indices_to_remove] = -np.inf
    logp = logits - scipy.special.logsumexp(logits, axis=-1, keepdims=True)
    return -np.mean(logp[np.arange(len(targets)), targets])


def _tkf():
    r = rng(9036)
    V, d = 7, 4
    E = r.standard_normal((V, d))
    W = 0.7 * r.standard_normal((d, d))
    ids = r.integers(0, V, 6)
    logits = (np.tanh(E[ids] @ W) @ E.T) / 0.8
    targets = np.argsort(logits, axis=-1)[:, -2]
    return E, W, ids, targets


# ---- 37. chunkwise retention written into np.empty_like -----------------------------------

def chunkwise_retention(g, Wq, Wk, Wv, x, chunk=2):
    gamma = scipy.special.expit(g)
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    T = x.shape[0]
    out = np.empty_like(v)
    S = np.zeros((k.shape[1], v.shape[1]))
    idx = np.arange(chunk)
    D = gamma ** (idx[:, None] - idx[None, :]) * (idx[:, None] >= idx[None, :])
    for start in range(0, T, chunk):
        sl = slice(start, start + chunk)
        qc, kc, vc = q[sl], k[sl], v[sl]
        inner = (qc @ kc.T * D) @ vc
        cross = (qc @ S) * (gamma ** (idx + 1))[:, None]
        out[sl] = inner + cross
        S = gamma ** chunk * S + (kc * (gamma ** (chunk - 1 - idx))[:, None]).T @ vc
    return np.sum(out ** 2)


def _cwr():
    r = rng(9037)
    return (np.array(0.8), 0.5 * r.standard_normal((3, 3)), 0.5 * r.standard_normal((3, 3)),
            0.5 * r.standard_normal((3, 3)), r.standard_normal((6, 3)))


# ---- 38. S4D with complex arithmetic spelled in real parts, scipy.linalg.toeplitz -------

def s4d_toeplitz(log_A_re, A_im, B, C, log_dt, u):
    A_re = -np.exp(log_A_re)
    dt = np.exp(log_dt)
    dA_re, dA_im = dt * A_re, dt * A_im
    L = u.shape[0]
    ell = np.arange(L)
    mag = np.exp(dA_re[:, None] * ell)
    ang = dA_im[:, None] * ell
    pow_re, pow_im = mag * np.cos(ang), mag * np.sin(ang)
    e_re = np.exp(dA_re) * np.cos(dA_im) - 1.0
    e_im = np.exp(dA_re) * np.sin(dA_im)
    den = A_re ** 2 + A_im ** 2
    z_re = (e_re * A_re + e_im * A_im) / den
    z_im = (e_im * A_re - e_re * A_im) / den
    cb_re = C[:, 0] * B[:, 0] - C[:, 1] * B[:, 1]
    cb_im = C[:, 0] * B[:, 1] + C[:, 1] * B[:, 0]
    c_re = cb_re * z_re - cb_im * z_im
    c_im = cb_re * z_im + cb_im * z_re
    K = 2.0 * np.sum(c_re[:, None] * pow_re - c_im[:, None] * pow_im, axis=0)
    y = scipy.linalg.toeplitz(K, np.zeros(L)) @ u
    return np.sum(y ** 2)


def _s4d():
    r = rng(9038)
    N = 3
    return (np.log(0.5 * np.ones(N)) + 0.1 * r.standard_normal(N),
            np.pi * np.arange(N) + 0.1 * r.standard_normal(N),
            r.standard_normal((N, 2)), r.standard_normal((N, 2)), np.array(np.log(0.2)),
            r.standard_normal(8))


# ---- 39. minGRU by a log-space parallel scan with np.logaddexp.accumulate -----------------

def log_g(x):
    return np.where(x >= 0, np.log(np.maximum(x, 0) + 0.5), -np.logaddexp(0.0, -x))


def mingru_log_scan(Wz, Wh, x, h0):
    k = x @ Wz
    h_tilde = x @ Wh
    log_coeffs = -np.logaddexp(0.0, k)
    log_z = -np.logaddexp(0.0, -k)
    log_values = np.concatenate([log_g(h0)[None, :], log_z + log_g(h_tilde)], axis=0)
    a_star = np.pad(np.cumsum(log_coeffs, axis=0), ((1, 0), (0, 0)))
    log_h = a_star + np.logaddexp.accumulate(log_values - a_star, axis=0)
    h = np.exp(log_h[1:])
    return np.sum(h ** 2) + np.mean(h)


def _mgs():
    r = rng(9039)
    return (0.6 * r.standard_normal((3, 4)), 0.6 * r.standard_normal((3, 4)),
            r.standard_normal((6, 3)), np.abs(r.standard_normal(4)) + 0.2)


# ---- 40. a char RNN written with llama2.c-style buffers and *_into helpers ----------------

@dataclass
class RNNState:
    h: np.ndarray
    xb: np.ndarray
    logits: np.ndarray


def rnn_step_into(token, w, s):
    matmul_into(s.xb, s.h, w["Whh"].ravel(), s.h.size, s.h.size)
    s.xb += w["Wxh"][token]
    s.h[:] = np.tanh(s.xb)
    matmul_into(s.logits, s.h, w["Why"].ravel(), s.h.size, w["Why"].shape[0])


def run_state_char_rnn(w, tokens=(0, 3, 1, 2, 4, 1)):
    H, V = w["Whh"].shape[0], w["Why"].shape[0]
    s = RNNState(np.zeros(H), np.zeros(H), np.zeros(V))
    loss = 0.0
    for tok, nxt in zip(tokens[:-1], tokens[1:]):
        rnn_step_into(tok, w, s)
        loss += scipy.special.logsumexp(s.logits) - s.logits[nxt]
    return loss


def _rsc():
    r = rng(9040)
    H, V = 4, 5
    return ({"Wxh": r.standard_normal((V, H)), "Whh": 0.5 * r.standard_normal((H, H)),
             "Why": r.standard_normal((V, H))},)


PROGRAMS = [
    Probe("wild_repos9.rwkv_prefix_state", rwkv_prefix_state, _rwkv1, "model"),
    Probe("wild_repos9.rwkv_state_array", rwkv_state_array, _rwkv2, ("emb", "blocks", "head")),
    Probe("wild_repos9.llama_rmsnorm_rope_gqa", llama_rmsnorm_rope_gqa, _llama,
          ("tok_embeddings", "layers", "norm", "output"), fuse=True),
    Probe("wild_repos9.complex_rope_attention", complex_rope_attention, _crope,
          ("wq", "wk", "x")),
    Probe("wild_repos9.kv_cache_start_pos", kv_cache_start_pos, _kvc,
          ("wq", "wk", "wv", "wo", "emb")),
    Probe("wild_repos9.sliding_window_prefill", sliding_window_prefill, _swp,
          ("Wqkv", "Wo", "x"), fuse=True),
    Probe("wild_repos9.rolling_buffer_decode", rolling_buffer_decode, _rbd,
          ("Wq", "Wk", "Wv", "xs")),
    Probe("wild_repos9.mamba_selective_scan", mamba_selective_scan, _mamba, ("p", "x")),
    Probe("wild_repos9.s4_kernel_fft", s4_kernel_fft, _s4, ("A", "B", "C", "log_step")),
    Probe("wild_repos9.linear_attention_cumsum", linear_attention_cumsum, _lac,
          ("Wq", "Wk", "Wv", "x"), fuse=True),
    Probe("wild_repos9.lstm_ifog_prealloc", lstm_ifog_prealloc, _ifog, ("WLSTM", "X")),
    Probe("wild_repos9.char_tokenizer_tied", char_tokenizer_tied, _ctt, ("wte", "wpe", "W"),
          fuse=True),
    Probe("wild_repos9.makemore_mlp_steps", makemore_mlp_steps, _mm, "params"),
    Probe("wild_repos9.makemore_wavenet", makemore_wavenet, _wn,
          ("C", "W1", "g1", "b1", "W2", "g2", "b2", "W3")),
    Probe("wild_repos9.bahdanau_seq2seq", bahdanau_seq2seq, _bah, "p", fuse=True),
    Probe("wild_repos9.t5_relative_bias", t5_relative_bias, _t5, ("rel_table", "Wq", "Wk")),
    Probe("wild_repos9.shifted_lm_ignore_index", shifted_lm_ignore_index, _slm, ("wte", "W"),
          fuse=True),
    Probe("wild_repos9.greedy_decode_logprob", greedy_decode_logprob, _gd,
          ("wte", "wpe", "w_qkv", "w_o")),
    Probe("wild_repos9.left_padded_positions", left_padded_positions, _lpp,
          ("wte", "wpe", "Wq", "Wk", "Wv")),
    Probe("wild_repos9.ellipsis_bool_mask_gpt", ellipsis_bool_mask_gpt, _ebm, "params"),
    Probe("wild_repos9.gemma_softcap_geglu", gemma_softcap_geglu, _gem, "p", fuse=True),
    Probe("wild_repos9.gpt_inplace_residual", gpt_inplace_residual, _gir,
          ("wte", "wpe", "blocks")),
    Probe("wild_repos9.past_key_values_concat", past_key_values_concat, _pkv,
          ("wte", "layers")),
    Probe("wild_repos9.transformer_xl_memory", transformer_xl_memory, _txl,
          ("Wq", "Wk", "Wv", "segments"), fuse=True),
    Probe("wild_repos9.retention_parallel_recurrent", retention_parallel_recurrent, _ret,
          ("g", "Wq", "Wk", "Wv", "x")),
    Probe("wild_repos9.bpe_ids_embedding", bpe_ids_embedding, _bpe, ("E", "W")),
    Probe("wild_repos9.batch_first_gru", batch_first_gru, _bfg, ("X", "Wz", "Wr", "Wh"),
          fuse=True),
    Probe("wild_repos9.stacked_lstm_dict_states", stacked_lstm_dict_states, _sld,
          ("Ws", "Wout")),
    Probe("wild_repos9.reduce_accumulate_rnn", reduce_accumulate_rnn, _raa,
          ("W", "U", "b", "xs"), fuse=True),
    Probe("wild_repos9.annotated_encoder", annotated_encoder, _ann, "p"),
    Probe("wild_repos9.hyena_long_conv", hyena_long_conv, _hy, ("Wf", "log_decay", "Wg", "u"),
          fuse=True),
    Probe("wild_repos9.einsum_gate_unpack_lstm", einsum_gate_unpack_lstm, _egu,
          ("Wx", "Wh", "b", "xs")),
    Probe("wild_repos9.llama2c_run_state", llama2c_run_state, _l2c, "weights"),
    Probe("wild_repos9.aliased_state_appends", aliased_state_appends, _asa, ("Wz", "Wh", "xs")),
    Probe("wild_repos9.triu_indices_scores", triu_indices_scores, _tis, ("Wq", "Wk", "Wv", "x"),
          fuse=True),
    Probe("wild_repos9.topk_filtered_nll", topk_filtered_nll, _tkf, ("E", "W")),
    Probe("wild_repos9.chunkwise_retention", chunkwise_retention, _cwr,
          ("g", "Wq", "Wk", "Wv", "x")),
    Probe("wild_repos9.s4d_toeplitz", s4d_toeplitz, _s4d,
          ("log_A_re", "A_im", "B", "C", "log_dt"), fuse=True),
    Probe("wild_repos9.mingru_log_scan", mingru_log_scan, _mgs, ("Wz", "Wh", "x", "h0")),
    Probe("wild_repos9.run_state_char_rnn", run_state_char_rnn, _rsc, "w"),
]
