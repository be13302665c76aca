"""Attention from scratch: scaled dot-product attention with a softmax helper, multi-head
with reshapes and ``transpose(0, 2, 1, 3)``, a causal mask by ``np.tril`` (with -1e9 through
``np.where`` and with -inf written through a boolean mask), heads in a loop concatenated,
``np.einsum``, a pre-LN transformer block with a tanh GELU."""

import math

import numpy as np

from . import Program, rng


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax_backward(p, dp, axis=-1):
    return p * (dp - np.sum(dp * p, axis=axis, keepdims=True))


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ K.swapaxes(-2, -1) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask == 0, -1e9, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def sdpa_loss(Q, K, V, target):
    out, _ = scaled_dot_product_attention(Q, K, V)
    return np.sum((out - target) ** 2)


def sdpa_loss_backward(Q, K, V, target):
    d = Q.shape[-1]
    s = Q @ K.swapaxes(-2, -1) / np.sqrt(d)
    p = softmax(s)
    out = p @ V
    dout = 2 * (out - target)
    dV = p.swapaxes(-2, -1) @ dout
    dp = dout @ V.swapaxes(-2, -1)
    ds = softmax_backward(p, dp) / np.sqrt(d)
    return ds @ K, ds.swapaxes(-2, -1) @ Q, dV


def multi_head(x, Wq, Wk, Wv, Wo, n_heads=2):
    B, T, C = x.shape
    hd = C // n_heads
    q = (x @ Wq).reshape(B, T, n_heads, hd).transpose(0, 2, 1, 3)
    k = (x @ Wk).reshape(B, T, n_heads, hd).transpose(0, 2, 1, 3)
    v = (x @ Wv).reshape(B, T, n_heads, hd).transpose(0, 2, 1, 3)
    att = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(hd))
    att = softmax(att)
    y = att @ v
    y = y.transpose(0, 2, 1, 3).reshape(B, T, C)
    return y @ Wo


def _mha_backward(x, Wq, Wk, Wv, Wo, dout, n_heads=2, causal=False):
    B, T, C = x.shape
    hd = C // n_heads
    split = lambda a: a.reshape(B, T, n_heads, hd).transpose(0, 2, 1, 3)
    merge = lambda a: a.transpose(0, 2, 1, 3).reshape(B, T, C)
    q, k, v = split(x @ Wq), split(x @ Wk), split(x @ Wv)
    s = (q @ k.transpose(0, 1, 3, 2)) / math.sqrt(hd)
    if causal:
        s = np.where(np.tril(np.ones((T, T))) == 0, -1e9, s)
    p = softmax(s)
    y = merge(p @ v)
    dWo = y.reshape(-1, C).T @ dout.reshape(-1, C)
    dy = split(dout @ Wo.T)
    dv = p.transpose(0, 1, 3, 2) @ dy
    ds = softmax_backward(p, dy @ v.transpose(0, 1, 3, 2)) / math.sqrt(hd)
    dq = ds @ k
    dk = ds.transpose(0, 1, 3, 2) @ q
    dq, dk, dv = merge(dq), merge(dk), merge(dv)
    flat = x.reshape(-1, C)
    dx = dq @ Wq.T + dk @ Wk.T + dv @ Wv.T
    return (dx, flat.T @ dq.reshape(-1, C), flat.T @ dk.reshape(-1, C),
            flat.T @ dv.reshape(-1, C), dWo)


def multi_head_loss(x, Wq, Wk, Wv, Wo):
    return np.sum(np.tanh(multi_head(x, Wq, Wk, Wv, Wo)))


def multi_head_loss_backward(x, Wq, Wk, Wv, Wo):
    out = multi_head(x, Wq, Wk, Wv, Wo)
    return _mha_backward(x, Wq, Wk, Wv, Wo, 1 - np.tanh(out) ** 2)


def causal_where(x, Wq, Wk, Wv, Wo, n_heads=2):
    B, T, C = x.shape
    hd = C // n_heads
    q = (x @ Wq).reshape(B, T, n_heads, hd).transpose(0, 2, 1, 3)
    k = (x @ Wk).reshape(B, T, n_heads, hd).transpose(0, 2, 1, 3)
    v = (x @ Wv).reshape(B, T, n_heads, hd).transpose(0, 2, 1, 3)
    mask = np.tril(np.ones((T, T)))
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    out = out.transpose(0, 2, 1, 3).reshape(B, T, C) @ Wo
    return np.mean(out ** 2)


def causal_where_backward(x, Wq, Wk, Wv, Wo, n_heads=2):
    B, T, C = x.shape
    hd = C // n_heads
    split = lambda a: a.reshape(B, T, n_heads, hd).transpose(0, 2, 1, 3)
    q, k, v = split(x @ Wq), split(x @ Wk), split(x @ Wv)
    mask = np.tril(np.ones((T, T)))
    o, _ = scaled_dot_product_attention(q, k, v, mask)
    out = o.transpose(0, 2, 1, 3).reshape(B, T, C) @ Wo
    return _mha_backward(x, Wq, Wk, Wv, Wo, 2 * out / out.size, causal=True)


def causal_inf_boolean_write(q, k, v):
    T = q.shape[0]
    scores = q @ k.T / np.sqrt(q.shape[1])
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    scores[mask] = -np.inf
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    w = w / w.sum(axis=1, keepdims=True)
    return np.sum(np.sin(w @ v))


def causal_inf_boolean_write_backward(q, k, v):
    T, d = q.shape
    s = q @ k.T / np.sqrt(d)
    s[np.triu(np.ones((T, T), dtype=bool), k=1)] = -np.inf
    p = softmax(s)
    o = p @ v
    do = np.cos(o)
    dv = p.T @ do
    ds = softmax_backward(p, do @ v.T) / np.sqrt(d)
    return ds @ k, ds.T @ q, dv


def heads_in_a_loop(x, Wqs, Wks, Wvs, Wo):
    heads = []
    for h in range(len(Wqs)):
        q = x @ Wqs[h]
        k = x @ Wks[h]
        v = x @ Wvs[h]
        a = softmax(q @ k.T / np.sqrt(q.shape[-1]))
        heads.append(a @ v)
    concat = np.concatenate(heads, axis=-1)
    return np.sum((concat @ Wo) ** 2) / 2


def heads_in_a_loop_backward(x, Wqs, Wks, Wvs, Wo):
    outs, caches = [], []
    for h in range(len(Wqs)):
        q, k, v = x @ Wqs[h], x @ Wks[h], x @ Wvs[h]
        p = softmax(q @ k.T / np.sqrt(q.shape[-1]))
        outs.append(p @ v)
        caches.append((q, k, v, p))
    concat = np.concatenate(outs, axis=-1)
    y = concat @ Wo
    dWo = concat.T @ y
    dconcat = y @ Wo.T
    hd = outs[0].shape[1]
    dWqs, dWks, dWvs = [], [], []
    for h, (q, k, v, p) in enumerate(caches):
        do = dconcat[:, h * hd:(h + 1) * hd]
        dv = p.T @ do
        ds = softmax_backward(p, do @ v.T) / np.sqrt(q.shape[-1])
        dWqs.append(x.T @ (ds @ k))
        dWks.append(x.T @ (ds.T @ q))
        dWvs.append(x.T @ dv)
    return dWqs, dWks, dWvs, dWo


def einsum_cross_attention(xq, xkv, Wq, Wk, Wv):
    q = np.einsum('bqc,cd->bqd', xq, Wq)
    k = np.einsum('bkc,cd->bkd', xkv, Wk)
    v = np.einsum('bkc,cd->bkd', xkv, Wv)
    s = np.einsum('bqd,bkd->bqk', q, k) / np.sqrt(q.shape[-1])
    a = softmax(s, axis=-1)
    o = np.einsum('bqk,bkd->bqd', a, v)
    return np.sum(o * np.cos(o))


def einsum_cross_attention_backward(xq, xkv, Wq, Wk, Wv):
    q, k, v = xq @ Wq, xkv @ Wk, xkv @ Wv
    d = q.shape[-1]
    a = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d))
    o = a @ v
    do = np.cos(o) - o * np.sin(o)
    dv = a.transpose(0, 2, 1) @ do
    ds = softmax_backward(a, do @ v.transpose(0, 2, 1)) / np.sqrt(d)
    dq = ds @ k
    dk = ds.transpose(0, 2, 1) @ q
    C = xq.shape[-1]
    return (np.einsum('bqc,bqd->cd', xq, dq), np.einsum('bkc,bkd->cd', xkv, dk),
            np.einsum('bkc,bkd->cd', xkv, dv))


def layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return g * (x - mu) / np.sqrt(var + eps) + b


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def transformer_block(x, p):
    h = layer_norm(x, p['ln1_g'], p['ln1_b'])
    x = x + multi_head(h, p['Wq'], p['Wk'], p['Wv'], p['Wo'])
    h = layer_norm(x, p['ln2_g'], p['ln2_b'])
    x = x + gelu(h @ p['W_fc']) @ p['W_proj']
    return np.sum(x ** 2) / x.size


def _ln_backward(x, g, dy, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    xh = (x - mu) / np.sqrt(var + eps)
    dxh = dy * g
    D = x.shape[-1]
    dx = (D * dxh - dxh.sum(-1, keepdims=True) - xh * np.sum(dxh * xh, -1, keepdims=True)) \
        / (D * np.sqrt(var + eps))
    C = x.shape[-1]
    return dx, np.sum((dy * xh).reshape(-1, C), 0), np.sum(dy.reshape(-1, C), 0)


def transformer_block_backward(x, p):
    C = x.shape[-1]
    h1 = layer_norm(x, p['ln1_g'], p['ln1_b'])
    x1 = x + multi_head(h1, p['Wq'], p['Wk'], p['Wv'], p['Wo'])
    h2 = layer_norm(x1, p['ln2_g'], p['ln2_b'])
    a = h2 @ p['W_fc']
    ga = gelu(a)
    x2 = x1 + ga @ p['W_proj']
    dx2 = 2 * x2 / x2.size
    g = {}
    g['W_proj'] = ga.reshape(-1, ga.shape[-1]).T @ dx2.reshape(-1, C)
    dga = dx2 @ p['W_proj'].T
    c = np.sqrt(2 / np.pi)
    t = np.tanh(c * (a + 0.044715 * a ** 3))
    da = dga * (0.5 * (1 + t) + 0.5 * a * (1 - t ** 2) * c * (1 + 3 * 0.044715 * a ** 2))
    g['W_fc'] = h2.reshape(-1, C).T @ da.reshape(-1, da.shape[-1])
    dh2 = da @ p['W_fc'].T
    dln, g['ln2_g'], g['ln2_b'] = _ln_backward(x1, p['ln2_g'], dh2)
    dx1 = dx2 + dln
    dh1, g['Wq'], g['Wk'], g['Wv'], g['Wo'] = _mha_backward(h1, p['Wq'], p['Wk'], p['Wv'],
                                                           p['Wo'], dx1)
    dln, g['ln1_g'], g['ln1_b'] = _ln_backward(x, p['ln1_g'], dh1)
    return dx1 + dln, g


def _args_mha(seed):
    r = rng(seed)
    C = 4
    return (r.standard_normal((2, 3, C)),) + tuple(r.standard_normal((C, C)) * 0.4
                                                   for _ in range(4))


def _args_block():
    r = rng(96)
    C = 4
    p = {k: r.standard_normal((C, C)) * 0.4 for k in ('Wq', 'Wk', 'Wv', 'Wo')}
    p.update(ln1_g=1 + 0.1 * r.standard_normal(C), ln1_b=0.1 * r.standard_normal(C),
             ln2_g=1 + 0.1 * r.standard_normal(C), ln2_b=0.1 * r.standard_normal(C),
             W_fc=r.standard_normal((C, 8)) * 0.4, W_proj=r.standard_normal((8, C)) * 0.4)
    return r.standard_normal((2, 3, C)), p


def _args_loop():
    r = rng(94)
    return (r.standard_normal((4, 4)), [r.standard_normal((4, 2)) * 0.5 for _ in range(2)],
            [r.standard_normal((4, 2)) * 0.5 for _ in range(2)],
            [r.standard_normal((4, 2)) * 0.5 for _ in range(2)],
            r.standard_normal((4, 3)) * 0.5)


PROGRAMS = [
    Program("attention.sdpa_loss", sdpa_loss, sdpa_loss_backward,
            lambda: tuple(rng(s).standard_normal((2, 3, 4)) for s in (90, 91, 92, 93)),
            ("Q", "K", "V"), fuse=True),
    Program("attention.multi_head_loss", multi_head_loss, multi_head_loss_backward,
            lambda: _args_mha(92), ("x", "Wq", "Wk", "Wv", "Wo")),
    Program("attention.causal_where", causal_where, causal_where_backward,
            lambda: _args_mha(93), ("x", "Wq", "Wk", "Wv", "Wo"), fuse=True),
    Program("attention.causal_inf_boolean_write", causal_inf_boolean_write,
            causal_inf_boolean_write_backward,
            lambda: tuple(rng(s).standard_normal((4, 3)) for s in (97, 98, 99)),
            ("q", "k", "v")),
    Program("attention.heads_in_a_loop", heads_in_a_loop, heads_in_a_loop_backward,
            _args_loop, ("Wqs", "Wks", "Wvs", "Wo")),
    Program("attention.einsum_cross_attention", einsum_cross_attention,
            einsum_cross_attention_backward,
            lambda: (rng(100).standard_normal((2, 3, 4)), rng(101).standard_normal((2, 5, 4)))
            + tuple(rng(s).standard_normal((4, 3)) * 0.5 for s in (102, 103, 104)),
            ("Wq", "Wk", "Wv")),
    Program("attention.transformer_block", transformer_block, transformer_block_backward,
            _args_block, ("x", "p"), fuse=True),
]
