"""The Phase I exit test: the zoo's Transformer block and tiny GPT against PyTorch.

From identical weights and input, one forward and one backward in srcad and in torch
(`tests/torch_twins.py`, the same math); for every parameter tensor the seed's metric
max|g - g_torch| / (max|g_torch| + 1e-12) is below 1e-5 in float32 and 1e-10 in float64.
Also: softmax / log-softmax / cross-entropy stay finite at logits of +-1e4, the attention is
causal in its gradient, a finite-difference spot check of a tiny block, the demo's data and
a short training run whose loss falls. Torch is a test-only oracle.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch_twins as TT

import srcad
from srcad.testing import check_grads, rel_error
from srcad.zoo import data, gpt
from srcad.zoo import transformer as T

torch.set_num_threads(1)

TOL = {np.float64: 1e-10, np.float32: 1e-5}
DTYPES = [pytest.param(np.float64, id="float64"), pytest.param(np.float32, id="float32")]


def block_case(dtype, batch=3, seq=7, width=32, heads=4, seed=0):
    """Randomised block parameters (non-zero biases, gains away from 1), input and probe."""
    rng = np.random.default_rng(seed)
    p = T.randomize(rng, T.init(rng, width, heads, dtype))
    x = rng.standard_normal((batch, seq, width)).astype(dtype)
    probe = rng.standard_normal((batch, seq, width)).astype(dtype)
    return p, x, heads, probe


def gpt_case(dtype, vocab=13, width=16, heads=4, layers=2, seq=8, batch=2, seed=0):
    rng = np.random.default_rng(seed)
    params = gpt.init(rng, vocab, width, heads, layers, seq + 2, dtype)
    params["blocks"] = [T.randomize(rng, b) for b in params["blocks"]]
    params["wte"] = (params["wte"] * 20).astype(dtype)  # logits of order 1, not 1e-3
    tokens = rng.integers(0, vocab, size=(batch, seq))
    targets = rng.integers(0, vocab, size=(batch, seq))
    return params, tokens, targets, heads


def leaves(tree, path=""):
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from leaves(v, f"{path}/{k}" if path else k)
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from leaves(v, f"{path}/{i}")
    else:
        yield path, tree


# -- the exit test -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_block_gradients_match_torch(dtype):
    p, x, heads, probe = block_case(dtype)
    value, (gp, gx) = srcad.value_and_grad(T.block_loss, wrt=("p", "x"))(p, x, heads, probe)
    t_value, t_gp, t_gx = TT.block_grads(p, x, heads, probe)
    assert np.asarray(value).dtype == dtype  # no silent promotion in the forward
    assert abs(value - t_value) <= 10 * TOL[dtype] * abs(t_value)
    assert list(gp) == list(p)
    errors = {name: rel_error(gp[name], t_gp[name]) for name in p}
    errors["x"] = rel_error(gx, t_gx)
    for name, g in gp.items():
        assert g.shape == p[name].shape and g.dtype == dtype, name
    print(f"\n{np.dtype(dtype).name} block, max rel error per tensor:",
          ", ".join(f"{k} {e:.1e}" for k, e in errors.items()))
    bad = {k: e for k, e in errors.items() if not e < TOL[dtype]}
    assert not bad, f"gradients differ from torch: {bad}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_gpt_loss_gradients_match_torch(dtype):
    params, tokens, targets, heads = gpt_case(dtype)
    value, grads = srcad.value_and_grad(gpt.loss, wrt="params")(params, tokens, targets, heads)
    t_value, t_grads = TT.gpt_grads(params, tokens, targets, heads)
    assert np.asarray(value).dtype == dtype
    assert abs(value - t_value) <= 10 * TOL[dtype] * abs(t_value)
    ours, theirs = dict(leaves(grads)), dict(leaves(t_grads))
    assert list(ours) == [k for k, _ in leaves(params)]
    errors = {k: rel_error(ours[k], theirs[k]) for k in ours}
    for k, g in leaves(grads):
        assert g.dtype == dtype, k
    worst = max(errors, key=errors.get)
    print(f"\n{np.dtype(dtype).name} GPT: worst {worst} {errors[worst]:.1e} "
          f"over {len(errors)} tensors")
    bad = {k: e for k, e in errors.items() if not e < TOL[dtype]}
    assert not bad, f"gradients differ from torch: {bad}"


def test_gpt_loss_is_cross_entropy_of_logits():
    """`loss` repeats `logits`' body (see gpt.loss): hold the two together, and to torch."""
    params, tokens, targets, heads = gpt_case(np.float64)
    z = gpt.logits(params, tokens, heads)
    expected = gpt.cross_entropy(z.reshape(-1, z.shape[-1]), targets.reshape(-1))
    assert gpt.loss(params, tokens, targets, heads) == pytest.approx(expected, rel=1e-14)
    tz = TT.gpt_logits(TT.to_torch(params, False), torch.tensor(tokens), heads)
    assert rel_error(z, tz.numpy()) < 1e-12


# -- numerical stability -------------------------------------------------------------------


def _softmax_weighted(z, w):
    return np.sum(T.softmax(z) * w)


def _log_softmax_weighted(z, w):
    return np.sum(T.log_softmax(z) * w)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "cross_entropy"])
def test_softmax_family_is_finite_at_huge_logits(fn, dtype):
    z = np.array([[1e4, -1e4, 0.0, 1e4], [-1e4, -1e4, -1e4, 5.0], [3e4, 2e4, -3e4, 1e4]],
                 dtype=dtype)
    labels = np.array([1, 3, 2])
    w = np.arange(12, dtype=dtype).reshape(3, 4) - 5
    tz = torch.tensor(z, requires_grad=True)
    if fn == "cross_entropy":
        value, g = srcad.value_and_grad(gpt.cross_entropy)(z, labels)
        t_value = torch.nn.functional.cross_entropy(tz, torch.tensor(labels))
    elif fn == "softmax":
        value, g = srcad.value_and_grad(_softmax_weighted)(z, w)
        t_value = torch.sum(torch.softmax(tz, -1) * torch.tensor(w))
    else:
        value, g = srcad.value_and_grad(_log_softmax_weighted)(z, w)
        t_value = torch.sum(torch.log_softmax(tz, -1) * torch.tensor(w))
    t_value.backward()
    assert np.isfinite(value) and np.all(np.isfinite(g)) and g.dtype == dtype
    assert abs(value - t_value.item()) <= TOL[dtype] * max(1.0, abs(t_value.item()))
    assert rel_error(g, tz.grad.numpy()) < TOL[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_block_is_finite_with_huge_scores(dtype):
    """Scores of order 1e4 (a saturated softmax next to the -1e9 mask) stay finite."""
    p, x, heads, probe = block_case(dtype, batch=1, seq=5, width=8, heads=2)
    p = dict(p, w_q=(p["w_q"] * 300).astype(dtype), w_k=(p["w_k"] * 300).astype(dtype))
    value, gp = srcad.value_and_grad(T.block_loss, wrt="p")(p, x, heads, probe)
    assert np.isfinite(value)
    assert all(np.all(np.isfinite(g)) for g in gp.values())


# -- structure and finite differences ------------------------------------------------------


def _position_sum(x, p, heads, t):
    y = T.block(x, p["ln1_g"], p["ln1_b"], p["w_q"], p["b_q"], p["w_k"], p["w_v"], p["b_v"],
                p["w_o"], p["b_o"], p["ln2_g"], p["ln2_b"], p["w_fc"], p["b_fc"], p["w_proj"],
                p["b_proj"], heads)
    return np.sum(y[:, t])


def test_attention_is_causal_in_the_gradient():
    p, x, heads, _ = block_case(np.float64, batch=2, seq=6, width=16, heads=4)
    dx = srcad.grad(_position_sum, wrt="x")(x, p, heads, 2)
    assert np.all(dx[:, 3:] == 0)  # exactly: masked scores carry no gradient
    assert np.all(np.abs(dx[:, :3]).max(axis=-1) > 1e-3)


def test_tiny_block_against_finite_differences():
    p, x, heads, probe = block_case(np.float64, batch=1, seq=3, width=8, heads=2, seed=3)
    errors = check_grads(T.block_loss, (p, x, heads, probe), wrt=("p", "x"), tol=1e-6)
    assert max(errors.values()) < 1e-6


def test_generated_source_uses_subroutines():
    p, x, heads, probe = block_case(np.float64, batch=1, seq=3, width=8, heads=2)
    g = srcad.grad(T.block_loss, wrt="p")
    g(p, x, heads, probe)
    text = srcad.source(g)
    for name in ("layer_norm", "attention", "softmax", "gelu", "mlp", "block"):
        assert f"def {name}_bwd(" in text, name


# -- the demo's data and training ----------------------------------------------------------


def test_char_tokenizer_and_batches():
    tok = data.CharTokenizer(data.TEXT)
    ids = tok.encode(data.TEXT)
    assert tok.decode(ids) == data.TEXT and 40 < tok.vocab_size < 80
    tokens, targets = next(data.batches(np.random.default_rng(0), ids, 4, 16))
    assert tokens.shape == targets.shape == (4, 16)
    assert np.array_equal(tokens[:, 1:], targets[:, :-1])


def test_short_training_run_lowers_the_loss():
    from srcad.optim import Adam

    tok = data.CharTokenizer(data.TEXT)
    ids = tok.encode(data.TEXT)
    rng = np.random.default_rng(0)
    params = gpt.init(rng, tok.vocab_size, 32, 4, 1, 16, np.float32)
    opt = Adam(params, lr=1e-2)
    grad_fn = srcad.value_and_grad(gpt.loss, wrt="params")
    stream = data.batches(rng, ids, 8, 16)
    losses = []
    for _ in range(60):
        tokens, targets = next(stream)
        loss, grads = grad_fn(params, tokens, targets, 4)
        opt.step(grads)
        losses.append(float(loss))
    assert losses[0] > np.log(tok.vocab_size) - 0.2
    assert np.mean(losses[-10:]) < losses[0] - 0.7  # ~4.06 -> ~3.1 (the unigram entropy)
    sample = gpt.generate(params, tok.encode("When "), 20, 4)
    again = gpt.generate(params, tok.encode("When "), 20, 4)
    assert sample.shape == (25,) and np.array_equal(sample, again)


def test_demo_runs(tmp_path, capsys):
    from srcad.cli import demo

    assert demo(steps=20, out_dir=tmp_path) == 0
    out = capsys.readouterr().out
    path = tmp_path / "gpt_loss_grad.py"
    assert str(path) in out and "tokens/s" in out and "sampled" in out
    assert "def loss_grad(" in path.read_text()
