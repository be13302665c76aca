"""Sequence and attention code in the styles of public from-scratch repositories (read for
patterns only): an LSTM over a stacked 4H weight matrix cut by np.split or by slices, lists of
per-step states and cache tuples, the min-char-rnn dicts keyed by time step (``hs[-1]``),
a GRU cell class with a params dict, embeddings by fancy index, a bidirectional RNN over
reversed(range(T)), GPT-2-style ``linear(x, **c_attn)`` with heads split by np.split inside
map/zip, masks from np.tri / np.triu with -1e10 or -np.inf, an einsum multi-head attention
class, a Luong attention decoder loop, a VAE with a seeded generator, a conv1d by
sliding_window_view, and a transformer whose blocks are built in a loop in __init__."""

import numpy as np

from . import Probe, rng


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_split_gates(Wx, Wh, b, xs, y):
    N, T, D = xs.shape
    H = Wh.shape[0]
    h, c = np.zeros((N, H)), np.zeros((N, H))
    hs, caches = [], []
    for t in range(T):
        a = xs[:, t, :] @ Wx + h @ Wh + b
        ai, af, ao, ag = np.split(a, 4, axis=1)
        i, f, o, g = sigmoid(ai), sigmoid(af), sigmoid(ao), np.tanh(ag)
        c = f * c + i * g
        h = o * np.tanh(c)
        hs.append(h)
        caches.append((i, f, o, g, c))
    out = np.stack(hs, axis=1)
    _, f_last, _, _, c_last = caches[-1]
    return np.mean((out[:, -1] - y) ** 2) + 0.01 * np.sum(f_last * c_last)


def lstm_sliced_gates(W, b, xs, y):
    T, N, D = xs.shape
    H = W.shape[1] // 4
    h = np.zeros((N, H))
    c = np.zeros((N, H))
    loss = 0.0
    for t in range(T):
        z = np.hstack([xs[t], h]) @ W + b
        i = sigmoid(z[:, :H])
        f = sigmoid(z[:, H:2 * H])
        o = sigmoid(z[:, 2 * H:3 * H])
        g = np.tanh(z[:, 3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
        loss += np.sum((h - y[t]) ** 2)
    return loss / T


def min_char_rnn(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    V = Wxh.shape[1]
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    for t in range(len(inputs)):
        xs[t] = np.zeros((V, 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
        ys[t] = np.dot(Why, hs[t]) + by
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    return loss


class GRUCell:
    def __init__(self, params):
        self.p = params

    def __call__(self, x, h):
        p = self.p
        r = sigmoid(x @ p["Wr"] + h @ p["Ur"] + p["br"])
        z = sigmoid(x @ p["Wz"] + h @ p["Uz"] + p["bz"])
        n = np.tanh(x @ p["Wn"] + r * (h @ p["Un"]) + p["bn"])
        return (1 - z) * n + z * h


def gru_embedding(params, E, tokens, y):
    cell = GRUCell(params)
    x = E[tokens]                       # (N, T, D) by fancy index
    h = np.zeros((x.shape[0], params["Ur"].shape[0]))
    for t in range(x.shape[1]):
        h = cell(x[:, t], h)
    logits = h @ params["Wy"]
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(y)), y].mean()


def birnn_reversed(Wf, Wb, U, xs):
    T = xs.shape[0]
    H = Wf.shape[1]
    hf, hb = np.zeros(H), np.zeros(H)
    fwd, bwd = [None] * T, [None] * T
    for t in range(T):
        hf = np.tanh(xs[t] @ Wf + hf @ U)
        fwd[t] = hf
    for t in reversed(range(T)):
        hb = np.tanh(xs[t] @ Wb + hb @ U.T)
        bwd[t] = hb
    out = np.concatenate([np.array(fwd), np.array(bwd)], axis=-1)
    return np.sum(out[0] * out[-1]) + np.mean(out ** 2)


# ---- GPT-2 style ---------------------------------------------------------------------------

def linear(x, w, b):
    return x @ w + b


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def attention(q, k, v, mask):
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def mha(x, c_attn, c_proj, n_head):
    x = linear(x, **c_attn)
    qkv = np.split(x, 3, axis=-1)
    qkv_heads = list(map(lambda a: np.split(a, n_head, axis=-1), qkv))
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10
    out_heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]
    x = np.hstack(out_heads)
    return linear(x, **c_proj)


def gpt2_kwargs_heads(c_attn, c_proj, x):
    out = mha(x, c_attn, c_proj, n_head=2)
    return np.sum(out ** 2) / out.size


class MultiHeadAttention:
    def __init__(self, Wq, Wk, Wv, Wo, n_heads):
        self.Wq, self.Wk, self.Wv, self.Wo = Wq, Wk, Wv, Wo
        self.h = n_heads

    def split(self, x):
        B, T, C = x.shape
        return x.reshape(B, T, self.h, C // self.h).transpose(0, 2, 1, 3)

    def __call__(self, x, causal=True):
        B, T, C = x.shape
        q, k, v = self.split(x @ self.Wq), self.split(x @ self.Wk), self.split(x @ self.Wv)
        scores = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(C // self.h)
        if causal:
            mask = np.triu(np.ones((T, T), dtype=bool), k=1)
            scores = np.where(mask[None, None], -np.inf, scores)
        att = softmax(scores)
        out = np.einsum("bhqk,bhkd->bhqd", att, v).transpose(0, 2, 1, 3).reshape(B, T, C)
        return out @ self.Wo


def einsum_mha_class(Wq, Wk, Wv, Wo, x, y):
    attn = MultiHeadAttention(Wq, Wk, Wv, Wo, n_heads=2)
    return np.mean((attn(x) - y) ** 2)


def luong_decoder(Wenc, Wdec, Wc, src, tgt_in):
    enc = np.tanh(src @ Wenc)                       # (B, S, H)
    B, T, _ = tgt_in.shape
    h = enc.mean(axis=1)
    outs = []
    for t in range(T):
        h = np.tanh(tgt_in[:, t] @ Wdec + h)
        scores = np.einsum("bd,bsd->bs", h, enc)
        alpha = softmax(scores)
        context = np.einsum("bs,bsd->bd", alpha, enc)
        outs.append(np.tanh(np.concatenate([context, h], axis=1) @ Wc))
    return np.sum(np.stack(outs, axis=1) ** 2)


def vae_reparam(We, Wmu, Wlv, Wd, x):
    r = np.random.default_rng(7)
    h = np.maximum(x @ We, 0)
    mu, logvar = h @ Wmu, h @ Wlv
    eps = r.standard_normal(mu.shape)
    z = mu + np.exp(0.5 * logvar) * eps
    logits = z @ Wd
    bce = np.sum(np.logaddexp(0, logits) - x * logits)
    kl = -0.5 * np.sum(1 + logvar - mu ** 2 - np.exp(logvar))
    return (bce + kl) / x.shape[0]


def conv1d_windows(w, b, x):
    K = w.shape[-1]
    windows = np.lib.stride_tricks.sliding_window_view(x, K, axis=-1)   # (N, C, L-K+1, K)
    out = np.einsum("nclk,fck->nfl", windows, w) + b[None, :, None]
    out = np.maximum(out, 0.1 * out)
    return np.sum(out.max(axis=-1))


# ---- a transformer whose blocks are built in a loop ----------------------------------------

class LayerNorm:
    def __init__(self, g, b, eps=1e-5):
        self.g, self.b, self.eps = g, b, eps

    def __call__(self, x):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return self.g * (x - mu) / np.sqrt(var + self.eps) + self.b


class TransformerBlock:
    def __init__(self, p, i):
        self.ln = LayerNorm(p[f"ln{i}_g"], p[f"ln{i}_b"])
        self.W1, self.W2 = p[f"fc{i}_W1"], p[f"fc{i}_W2"]
        self.Wqkv = p[f"attn{i}"]

    def __call__(self, x):
        h = self.ln(x)
        q, k, v = np.split(h @ self.Wqkv, 3, axis=-1)
        T = x.shape[0]
        mask = np.tril(np.ones((T, T))) == 0
        s = q @ k.T / np.sqrt(q.shape[-1])
        s[mask] = -np.inf
        x = x + softmax(s) @ v
        return x + np.maximum(self.ln(x) @ self.W1, 0) @ self.W2


class TinyTransformer:
    def __init__(self, params, n_layers):
        self.wte = params["wte"]
        self.blocks = []
        for i in range(n_layers):
            self.blocks.append(TransformerBlock(params, i))

    def __call__(self, tokens):
        x = self.wte[tokens]
        for block in self.blocks:
            x = block(x)
        return x @ self.wte.T


def transformer_blocks_in_loop(params, tokens, targets):
    model = TinyTransformer(params, n_layers=2)
    logits = model(tokens)
    m = logits.max(axis=-1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(axis=-1, keepdims=True))
    return -np.mean(logp[np.arange(len(targets)), targets])


# ---- arguments ---------------------------------------------------------------------------------

def _lstm():
    r = rng(401)
    D, H = 3, 2
    return (r.standard_normal((D, 4 * H)) * 0.5, r.standard_normal((H, 4 * H)) * 0.5,
            r.standard_normal(4 * H) * 0.1, r.standard_normal((2, 3, D)),
            r.standard_normal((2, H)))


def _lstm2():
    r = rng(402)
    D, H = 2, 3
    return (r.standard_normal((D + H, 4 * H)) * 0.4, r.standard_normal(4 * H) * 0.1,
            r.standard_normal((3, 2, D)), r.standard_normal((3, 2, H)))


def _charrnn():
    r = rng(403)
    V, H = 4, 3
    return (r.standard_normal((H, V)) * 0.3, r.standard_normal((H, H)) * 0.3,
            r.standard_normal((V, H)) * 0.3, np.zeros((H, 1)), np.zeros((V, 1)),
            [0, 2, 1, 3], [2, 1, 3, 0], r.standard_normal((H, 1)) * 0.1)


def _gru():
    r = rng(404)
    D, H, V, C = 3, 2, 5, 3
    p = {}
    for g in "rzn":
        p["W" + g] = r.standard_normal((D, H)) * 0.5
        p["U" + g] = r.standard_normal((H, H)) * 0.5
        p["b" + g] = r.standard_normal(H) * 0.1
    p["Wy"] = r.standard_normal((H, C))
    return p, r.standard_normal((V, D)), r.integers(0, V, (2, 3)), r.integers(0, C, 2)


def _birnn():
    r = rng(405)
    return (r.standard_normal((2, 3)) * 0.5, r.standard_normal((2, 3)) * 0.5,
            r.standard_normal((3, 3)) * 0.4, r.standard_normal((4, 2)))


def _gpt2():
    r = rng(406)
    C = 4
    return ({"w": r.standard_normal((C, 3 * C)) * 0.4, "b": r.standard_normal(3 * C) * 0.1},
            {"w": r.standard_normal((C, C)) * 0.4, "b": np.zeros(C)},
            r.standard_normal((3, C)))


def _mha():
    r = rng(407)
    C = 4
    return tuple(r.standard_normal((C, C)) * 0.4 for _ in range(4)) + (
        r.standard_normal((2, 3, C)), r.standard_normal((2, 3, C)))


def _luong():
    r = rng(408)
    return (r.standard_normal((2, 3)) * 0.5, r.standard_normal((2, 3)) * 0.5,
            r.standard_normal((6, 2)) * 0.5, r.standard_normal((2, 4, 2)),
            r.standard_normal((2, 3, 2)))


def _vae():
    r = rng(409)
    return (r.standard_normal((5, 4)) * 0.4, r.standard_normal((4, 2)) * 0.4,
            r.standard_normal((4, 2)) * 0.2, r.standard_normal((2, 5)) * 0.4,
            (r.random((3, 5)) > 0.5).astype(float))


def _conv1d():
    r = rng(410)
    return r.standard_normal((3, 2, 3)) * 0.5, r.standard_normal(3) * 0.1, \
        r.standard_normal((2, 2, 7))


def _tiny():
    r = rng(411)
    V, C = 6, 4
    p = {"wte": r.standard_normal((V, C)) * 0.5}
    for i in range(2):
        p[f"ln{i}_g"] = 1 + 0.1 * r.standard_normal(C)
        p[f"ln{i}_b"] = 0.1 * r.standard_normal(C)
        p[f"fc{i}_W1"] = r.standard_normal((C, 2 * C)) * 0.3
        p[f"fc{i}_W2"] = r.standard_normal((2 * C, C)) * 0.3
        p[f"attn{i}"] = r.standard_normal((C, 3 * C)) * 0.3
    return p, r.integers(0, V, 4), r.integers(0, V, 4)


PROGRAMS = [
    Probe("wild_sequence.lstm_split_gates", lstm_split_gates, _lstm, ("Wx", "Wh", "b")),
    Probe("wild_sequence.lstm_sliced_gates", lstm_sliced_gates, _lstm2, ("W", "b")),
    Probe("wild_sequence.min_char_rnn", min_char_rnn, _charrnn,
          ("Wxh", "Whh", "Why", "bh", "by", "hprev")),
    Probe("wild_sequence.gru_embedding", gru_embedding, _gru, ("params", "E")),
    Probe("wild_sequence.birnn_reversed", birnn_reversed, _birnn, ("Wf", "Wb", "U", "xs")),
    Probe("wild_sequence.gpt2_kwargs_heads", gpt2_kwargs_heads, _gpt2, ("c_attn", "c_proj")),
    Probe("wild_sequence.einsum_mha_class", einsum_mha_class, _mha, ("Wq", "Wk", "Wv", "Wo")),
    Probe("wild_sequence.luong_decoder", luong_decoder, _luong, ("Wenc", "Wdec", "Wc")),
    Probe("wild_sequence.vae_reparam", vae_reparam, _vae, ("We", "Wmu", "Wlv", "Wd")),
    Probe("wild_sequence.conv1d_windows", conv1d_windows, _conv1d, ("w", "b", "x")),
    Probe("wild_sequence.transformer_blocks_in_loop", transformer_blocks_in_loop, _tiny,
          "params"),
]
