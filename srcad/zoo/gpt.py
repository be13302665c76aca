"""A tiny GPT as plain numpy: token and position embeddings, pre-LayerNorm Transformer blocks,
a final LayerNorm, an output head tied to the token embedding, and a cross-entropy loss.

    params = gpt.init(rng, vocab=65, d_model=64, n_heads=4, n_layers=2, seq_len=32)
    value = gpt.loss(params, tokens, targets, n_heads=4)           # tokens, targets: (B, T) ints
    grads = srcad.grad(gpt.loss, wrt="params")(params, tokens, targets, 4)

`params` is a dict: "wte" (vocab, C), "wpe" (seq_len, C), "blocks" (a list of block dicts, see
`transformer.PARAM_SHAPES`), "lnf_g", "lnf_b" (C,). The block's helpers are differentiated by
srcad as subroutines of `loss`; `tests/torch_twins.py` holds the same model in PyTorch.
"""

import numpy as np

# Absolute imports, so that `python -m srcad show srcad/zoo/gpt.py:loss` can load this file.
from srcad.zoo import transformer
from srcad.zoo.transformer import layer_norm, log_softmax


def logits(params, tokens, n_heads):
    """(B, T) token ids -> (B, T, vocab) next-token logits."""
    T = tokens.shape[1]
    wte = params["wte"]
    h = wte[tokens] + params["wpe"][:T]
    for p in params["blocks"]:
        h = transformer.block(h, p["ln1_g"], p["ln1_b"], p["w_q"], p["b_q"], p["w_k"], p["w_v"],
                              p["b_v"], p["w_o"], p["b_o"], p["ln2_g"], p["ln2_b"], p["w_fc"],
                              p["b_fc"], p["w_proj"], p["b_proj"], n_heads)
    h = layer_norm(h, params["lnf_g"], params["lnf_b"])
    return h @ wte.T


def cross_entropy(z, targets):
    """Mean of -log softmax(z)[target] over rows; z is (N, vocab), targets (N,) ints."""
    logp = log_softmax(z)
    return -np.mean(logp[np.arange(z.shape[0]), targets])


def loss(params, tokens, targets, n_heads):
    """Mean next-token cross-entropy of the batch: cross_entropy(logits(params, tokens)).

    The body repeats `logits` rather than calling it: srcad drops the gradient of a dict that
    is passed into a subroutine (REPORT.md, issue 5), so subroutines here take arrays only.
    A test holds the two to the same value."""
    B, T = tokens.shape
    wte = params["wte"]
    h = wte[tokens] + params["wpe"][:T]
    for p in params["blocks"]:
        h = transformer.block(h, p["ln1_g"], p["ln1_b"], p["w_q"], p["b_q"], p["w_k"], p["w_v"],
                              p["b_v"], p["w_o"], p["b_o"], p["ln2_g"], p["ln2_b"], p["w_fc"],
                              p["b_fc"], p["w_proj"], p["b_proj"], n_heads)
    h = layer_norm(h, params["lnf_g"], params["lnf_b"])
    z = h @ wte.T
    return cross_entropy(np.reshape(z, (B * T, z.shape[-1])), np.reshape(targets, (B * T,)))


def init(rng, vocab, d_model, n_heads, n_layers, seq_len, dtype=np.float64):
    """GPT-2 style initialisation: N(0, 0.02) embeddings, blocks from `transformer.init`."""
    return {
        "wte": (rng.standard_normal((vocab, d_model)) * 0.02).astype(dtype),
        "wpe": (rng.standard_normal((seq_len, d_model)) * 0.01).astype(dtype),
        "blocks": [transformer.init(rng, d_model, n_heads, dtype, n_layers)
                   for _ in range(n_layers)],
        "lnf_g": np.ones(d_model, dtype),
        "lnf_b": np.zeros(d_model, dtype),
    }


def generate(params, prompt, n_new, n_heads, rng=None, temperature=1.0):
    """Extend the 1-D int array `prompt` by `n_new` tokens: greedy when rng is None, else
    sampled at `temperature`. The context is cropped to the position table's length."""
    seq_len = params["wpe"].shape[0]
    out = [int(t) for t in prompt]
    for _ in range(n_new):
        context = np.array(out[-seq_len:])[None, :]
        z = logits(params, context, n_heads)[0, -1]
        if rng is None:
            out.append(int(np.argmax(z)))
        else:
            p = np.exp((z - z.max()) / temperature)
            out.append(int(rng.choice(len(p), p=p / p.sum())))
    return np.array(out)


def _example_loss():
    rng = np.random.default_rng(0)
    params = init(rng, vocab=11, d_model=16, n_heads=4, n_layers=2, seq_len=8)
    tokens = rng.integers(0, 11, size=(2, 8))
    return params, tokens, np.roll(tokens, -1, axis=1), 4


EXAMPLES = {"loss": _example_loss}
