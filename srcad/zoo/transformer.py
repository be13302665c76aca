"""A pre-LayerNorm Transformer block as plain numpy functions; its parameters live in a dict
(`init`, keys in PARAM_SHAPES) that `block_loss` unpacks into `block`'s array arguments.

    y = x + attention(layer_norm(x))          # multi-head causal self-attention
    y = y + mlp(layer_norm(y))                # 4x MLP with tanh-GELU

Every function here is ordinary numpy; srcad differentiates `block` by parsing this file and
differentiates each helper it calls (`layer_norm`, `attention`, `softmax`, `gelu`) as its own
subroutine, so the generated backward keeps the same structure. `tests/torch_twins.py` holds
the same math in PyTorch; the two agree to 1e-10 in float64 (`tests/test_zoo.py`).

Shapes: x is (batch, seq, width); width = n_heads * head_dim.
"""

import numpy as np

GELU_C = 0.7978845608028654  # sqrt(2 / pi), as torch's gelu(approximate="tanh")
MASKED = -1e9  # a finite "minus infinity": exp(MASKED - max) is exactly 0 in float32 and 64


def layer_norm(x, gain, bias, eps=1e-5):
    """LayerNorm over the last axis (biased variance, eps inside the sqrt, as torch)."""
    mu = np.mean(x, axis=-1, keepdims=True)
    xc = x - mu
    var = np.mean(xc * xc, axis=-1, keepdims=True)
    return xc / np.sqrt(var + eps) * gain + bias


def gelu(x):
    """GELU, tanh approximation."""
    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + 0.044715 * x * x * x)))


def softmax(x):
    """Softmax over the last axis; subtracting the max keeps exp in range for any finite x."""
    z = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)


def log_softmax(x):
    """log(softmax(x)) over the last axis, stable for any finite x."""
    z = x - np.max(x, axis=-1, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))


def split_heads(x, n_heads):
    """(B, T, C) -> (B, H, T, C/H)."""
    B, T, C = x.shape
    return np.transpose(np.reshape(x, (B, T, n_heads, C // n_heads)), (0, 2, 1, 3))


def merge_heads(x):
    """(B, H, T, D) -> (B, T, H*D)."""
    B, H, T, D = x.shape
    return np.reshape(np.transpose(x, (0, 2, 1, 3)), (B, T, H * D))


def attention(x, w_q, b_q, w_k, w_v, b_v, w_o, b_o, n_heads):
    """Multi-head causal self-attention with output projection.

    The keys have no bias: a key bias adds the same amount to every score of a query row,
    softmax removes it, and its gradient is identically zero (only round-off remains)."""
    T = x.shape[1]
    q = split_heads(x @ w_q + b_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v + b_v, n_heads)
    scale = q.shape[-1] ** -0.5  # a Python float: np.sqrt would make float32 scores float64
    scores = (q @ np.swapaxes(k, -1, -2)) * scale
    causal = np.arange(T)[:, None] >= np.arange(T)[None, :]
    scores = np.where(causal, scores, MASKED)
    att = softmax(scores)
    out = merge_heads(att @ v)
    return out @ w_o + b_o


def mlp(x, w_fc, b_fc, w_proj, b_proj):
    """Position-wise 4x MLP."""
    return gelu(x @ w_fc + b_fc) @ w_proj + b_proj


def block(x, ln1_g, ln1_b, w_q, b_q, w_k, w_v, b_v, w_o, b_o, ln2_g, ln2_b, w_fc, b_fc, w_proj,
          b_proj, n_heads):
    """One pre-LayerNorm Transformer block: x + attention(ln(x)), then + mlp(ln(.))."""
    x = x + attention(layer_norm(x, ln1_g, ln1_b), w_q, b_q, w_k, w_v, b_v, w_o, b_o, n_heads)
    x = x + mlp(layer_norm(x, ln2_g, ln2_b), w_fc, b_fc, w_proj, b_proj)
    return x


def block_loss(p, x, n_heads, probe):
    """A scalar of the block's output, <block(x), probe>: its cotangent is `probe`.

    `block` takes arrays rather than the dict `p`, so that its generated backward reads as
    one subroutine over named arrays."""
    y = block(x, p["ln1_g"], p["ln1_b"], p["w_q"], p["b_q"], p["w_k"], p["w_v"], p["b_v"],
              p["w_o"], p["b_o"], p["ln2_g"], p["ln2_b"], p["w_fc"], p["b_fc"], p["w_proj"],
              p["b_proj"], n_heads)
    return np.sum(y * probe)


PARAM_SHAPES = (
    # name, shape as a function of the width C
    ("ln1_g", lambda C: (C,)),
    ("ln1_b", lambda C: (C,)),
    ("w_q", lambda C: (C, C)),
    ("b_q", lambda C: (C,)),
    ("w_k", lambda C: (C, C)),
    ("w_v", lambda C: (C, C)),
    ("b_v", lambda C: (C,)),
    ("w_o", lambda C: (C, C)),
    ("b_o", lambda C: (C,)),
    ("ln2_g", lambda C: (C,)),
    ("ln2_b", lambda C: (C,)),
    ("w_fc", lambda C: (C, 4 * C)),
    ("b_fc", lambda C: (4 * C,)),
    ("w_proj", lambda C: (4 * C, C)),
    ("b_proj", lambda C: (C,)),
)


def init(rng, d_model, n_heads, dtype=np.float64, n_layers=1):
    """Block parameters, GPT-2 style: N(0, 0.02) weights, residual projections scaled by
    1/sqrt(2 n_layers), zero biases, unit LayerNorm gains. Weights are (in, out): y = x @ W."""
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} is not a multiple of n_heads={n_heads}")
    params = {}
    for name, shape_of in PARAM_SHAPES:
        shape = shape_of(d_model)
        if name.startswith("ln") and name.endswith("_g"):
            a = np.ones(shape)
        elif name.startswith(("b_", "ln")):
            a = np.zeros(shape)
        else:
            std = 0.02 / np.sqrt(2 * n_layers) if name in ("w_o", "w_proj") else 0.02
            a = rng.standard_normal(shape) * std
        params[name] = a.astype(dtype)
    return params


def randomize(rng, params, scale=0.1):
    """A copy of `params` with every tensor perturbed (non-zero biases, gains away from 1),
    so that a gradient test exercises every term rather than an initialisation's zeros."""
    return {k: (v + scale * rng.standard_normal(v.shape)).astype(v.dtype) for k, v in params.items()}


def _example_block_loss():
    rng = np.random.default_rng(0)
    p = init(rng, 16, 4)
    x = rng.standard_normal((2, 8, 16))
    return p, x, 4, rng.standard_normal((2, 8, 16))


EXAMPLES = {"block_loss": _example_block_loss}
