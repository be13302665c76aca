"""PyTorch twins of the zoo's Transformer block and tiny GPT: the same math, op for op.

Test-only oracle (torch is never imported under srcad/). The twins take the numpy parameter
dicts (`srcad.zoo.transformer.init`, `srcad.zoo.gpt.init`) converted by `to_torch`, so that
srcad and torch start from bit-identical weights; weights are (in, out), y = x @ W + b.
"""

from __future__ import annotations

import math

import numpy as np
import torch

GELU_C = math.sqrt(2.0 / math.pi)
MASKED = -1e9


def to_torch(tree, requires_grad=True):
    """numpy pytree -> torch pytree (leaves share no memory with the numpy arrays)."""
    if isinstance(tree, dict):
        return {k: to_torch(v, requires_grad) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_torch(v, requires_grad) for v in tree)
    t = torch.tensor(np.array(tree))
    return t.requires_grad_(requires_grad) if t.is_floating_point() else t


def grads_of(tree):
    """The .grad of every leaf of a torch pytree, as numpy (zeros where torch left None)."""
    if isinstance(tree, dict):
        return {k: grads_of(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(grads_of(v) for v in tree)
    g = tree.grad
    return np.zeros(tuple(tree.shape), dtype=tree.detach().numpy().dtype) if g is None else g.numpy()


def layer_norm(x, gain, bias, eps=1e-5):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], gain, bias, eps)


def gelu(x):
    return torch.nn.functional.gelu(x, approximate="tanh")


def attention(x, p, n_heads):
    B, T, C = x.shape
    D = C // n_heads

    def heads(t):
        return t.reshape(B, T, n_heads, D).transpose(1, 2)

    q = heads(x @ p["w_q"] + p["b_q"])
    k = heads(x @ p["w_k"])
    v = heads(x @ p["w_v"] + p["b_v"])
    scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(D))
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    scores = torch.where(causal, scores, torch.tensor(MASKED, dtype=x.dtype))
    att = torch.softmax(scores, dim=-1)
    out = (att @ v).transpose(1, 2).reshape(B, T, C)
    return out @ p["w_o"] + p["b_o"]


def block(p, x, n_heads):
    x = x + attention(layer_norm(x, p["ln1_g"], p["ln1_b"]), p, n_heads)
    h = layer_norm(x, p["ln2_g"], p["ln2_b"])
    return x + gelu(h @ p["w_fc"] + p["b_fc"]) @ p["w_proj"] + p["b_proj"]


def block_loss(p, x, n_heads, probe):
    return torch.sum(block(p, x, n_heads) * probe)


def gpt_logits(params, tokens, n_heads):
    T = tokens.shape[1]
    h = params["wte"][tokens] + params["wpe"][:T]
    for p in params["blocks"]:
        h = block(p, h, n_heads)
    h = layer_norm(h, params["lnf_g"], params["lnf_b"])
    return h @ params["wte"].T


def gpt_loss(params, tokens, targets, n_heads):
    z = gpt_logits(params, tokens, n_heads)
    return torch.nn.functional.cross_entropy(z.reshape(-1, z.shape[-1]), targets.reshape(-1))


def block_grads(params, x, n_heads, probe):
    """(value, {name: grad}, dx) of `block_loss` by torch autograd, as numpy."""
    tp = to_torch(params)
    tx = to_torch(x)
    value = block_loss(tp, tx, n_heads, torch.tensor(probe))
    value.backward()
    return value.item(), grads_of(tp), tx.grad.numpy()


def gpt_grads(params, tokens, targets, n_heads):
    """(value, grads pytree) of `gpt_loss` by torch autograd, as numpy."""
    tp = to_torch(params)
    value = gpt_loss(tp, torch.tensor(tokens), torch.tensor(targets), n_heads)
    value.backward()
    return value.item(), grads_of(tp)
