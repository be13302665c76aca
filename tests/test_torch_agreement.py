"""srcad's gradients agree with torch autograd on the straight-line corpus.

For every function of ``tests/corpus_straight.py``: ``srcad.grad(fn, wrt=<all float
args>)`` against torch autograd on the same inputs, with the seed's metric
``max|g - t| / (max|t| + 1e-12)`` below 1e-10 in float64 and 1e-5 in float32; gradients
have their arguments' shapes and dtypes; ``value_and_grad``'s value is ``fn(*args)``.
``srcad.vjp`` of array-valued functions agrees with ``torch.autograd.grad`` for a random
cotangent. Torch is a test-only oracle.
"""

from __future__ import annotations

import math

import corpus_straight as C
import numpy as np
import pytest
import torch

import srcad
from srcad.testing import rel_error

torch.set_num_threads(1)

TOL = {np.float64: 1e-10, np.float32: 1e-5}

# -- torch twins (same math as the corpus) ---------------------------------------------------


def t_mlp2_tanh(W1, b1, W2, b2, x, y):
    h = torch.tanh(x @ W1 + b1)
    out = h @ W2 + b2
    return torch.mean((out - y) ** 2)


def t_mlp3_relu(W1, b1, W2, b2, W3, b3, x, y):
    h1 = torch.maximum(x @ W1 + b1, torch.zeros((), dtype=x.dtype))
    h2 = torch.maximum(h1 @ W2 + b2, torch.zeros((), dtype=x.dtype))
    out = h2 @ W3 + b3
    return 0.5 * torch.sum((out - y) ** 2) / x.shape[0]


def t_xent_gather(W, b, x, labels):
    logits = x @ W + b
    n = x.shape[0]
    z = logits - torch.amax(logits, dim=1, keepdim=True)
    logp = z - torch.log(torch.sum(torch.exp(z), dim=1, keepdim=True))
    return -torch.mean(logp[torch.arange(n), labels])


def t_xent_onehot(logits, labels):
    n, k = logits.shape
    onehot = torch.eye(k, dtype=torch.float64)[labels]
    m = torch.amax(logits, dim=-1, keepdim=True)
    lse = m + torch.log(torch.exp(logits - m).sum(dim=-1, keepdim=True))
    return -torch.sum(onehot * (logits - lse)) / n


def t_log_softmax_weighted(x, w):
    z = x - torch.amax(x, dim=-1, keepdim=True)
    logp = z - torch.log(torch.sum(torch.exp(z), dim=-1, keepdim=True))
    return torch.sum(logp * w)


def t_logsumexp(x):
    m = torch.amax(x)
    return m + torch.log(torch.sum(torch.exp(x - m)))


def t_layer_norm(x, g, b, w):
    mu = torch.mean(x, dim=-1, keepdim=True)
    var = torch.mean((x - mu) ** 2, dim=-1, keepdim=True)
    xhat = (x - mu) / torch.sqrt(var + C.EPS)
    y = xhat * g + b
    return torch.sum(y * w)


def _softmax_last(s):
    s = s - torch.amax(s, dim=-1, keepdim=True)
    p = torch.exp(s)
    return p / p.sum(dim=-1, keepdim=True)


def t_attention_single(x, Wq, Wk, Wv):
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    s = q @ k.T / math.sqrt(q.shape[-1])
    return torch.sum((_softmax_last(s) @ v) ** 2)


def t_attention_multihead_causal(x, Wq, Wk, Wv, Wo):
    n, d = x.shape
    heads = 2
    dh = d // heads
    q = (x @ Wq).reshape(n, heads, dh).permute(1, 0, 2)
    k = (x @ Wk).reshape(n, heads, dh).permute(1, 0, 2)
    v = (x @ Wv).reshape(n, heads, dh).permute(1, 0, 2)
    scores = q @ k.permute(0, 2, 1) / math.sqrt(dh)
    scores = torch.where(torch.from_numpy(C.CAUSAL), scores, torch.tensor(-1e9, dtype=x.dtype))
    o = (_softmax_last(scores) @ v).permute(1, 0, 2).reshape(n, -1)
    return torch.mean(torch.tanh(o @ Wo))


def t_attention_mask_arg(x, Wq, Wk, Wv, mask):
    q, k = x @ Wq, x @ Wk
    scores = q @ k.T * (1.0 / math.sqrt(q.shape[1]))
    scores = torch.where(mask, scores, torch.tensor(-1e9, dtype=x.dtype))
    return torch.sum((_softmax_last(scores) @ (x @ Wv)) * x)


def t_used_three_times(x):
    y = torch.sin(x)
    return torch.sum(y * y + y * x + torch.exp(y))


def t_outer_broadcast(a, b):
    return torch.sum(torch.tanh(a * b))


def t_mean_axis_tuple(x, w):
    m = torch.mean(x ** 2, dim=(0, 2))
    k = torch.mean(x, dim=(1, 2), keepdim=True)
    return torch.sum(m * w) + torch.sum(k * x)


def t_methods_T_sum(x, W):
    r = (x.T @ W).sum(dim=1)
    c = x.mean(dim=0, keepdim=True)
    return torch.sum(r ** 2) + (c * x).sum()


def t_reshape_minus_one(x, w):
    return torch.sum(torch.tanh(x.reshape(x.shape[0], -1) @ w))


def t_swapaxes_both(x, w):
    return torch.sum(torch.swapaxes(x, 0, 1) * w) + torch.sum(x.swapaxes(1, 2) ** 2)


def t_concat_stack(a, b, w):
    c = torch.cat([a, b], dim=0)
    s = torch.stack((a, b), dim=1)
    return torch.sum(c ** 3) + torch.sum(torch.tanh(s) * w)


def t_slicing_steps(x):
    evens = x[::2]
    odd_cols = x[:, 1::2]
    rev = torch.flip(x[1:], dims=(1,))
    return torch.sum(evens ** 2) + torch.sum(odd_cols * 3.0) + torch.sum(rev * x[:-1, :])


def t_xp_alias(x, y):
    return torch.sum(torch.exp(x) * torch.cos(y)) + torch.mean(x * y)


def t_from_import_tanh(x, W):
    return torch.sum(torch.tanh(x @ W) ** 2)


def t_module_alias_act(x, W, b):
    return torch.sum(torch.tanh(torch.tanh(x @ W + b)))


def t_module_const_eps(x):
    return torch.sum(torch.log(x ** 2 + C.EPS))


def t_closure_captured(x):
    Cm = torch.from_numpy(np.linspace(-1.0, 1.0, 12).reshape(4, 3)).to(x.dtype)
    return torch.sum((x @ Cm) ** 2)


def t_global_name_clash(x, W):
    out = torch.tanh(x @ W)
    om = torch.from_numpy(C.out_matmul).to(x.dtype)
    do = torch.from_numpy(C.dout).to(x.dtype)
    return torch.sum(out * om) + torch.sum(out * do)


def t_aug_assign(x, W, b):
    h = x @ W
    h = h + b
    h = h * 0.5
    return torch.sum(torch.tanh(h))


def t_tuple_unpack(x, w):
    n, d = x.shape
    return torch.sum(x @ w) / (n * d) + torch.sum(x ** 2) / n


def t_reassigned(x, y):
    h = torch.tanh(x)
    h = h * 2
    h = h + y
    return torch.sum(h * h)


def t_clip_abs_sqrt(x, y):
    c = torch.clamp(x, -0.5, 0.5)
    return torch.sum(c * torch.abs(y) + torch.sqrt(torch.abs(x) + 1.0))


def t_softplus_exp_log(x):
    return torch.sum(torch.log(1.0 + torch.exp(x))) - torch.log(torch.sum(torch.exp(-x)))


def t_div_pow(x, y):
    z = x ** 1.5 / (y + 2.0)
    return torch.mean(z) + torch.sum(1.0 / x)


def t_leaky_relu_where(x, W):
    h = x @ W
    h = torch.where(h > 0, h, 0.01 * h)
    return torch.sum(torch.square(h))


def t_newaxis_ellipsis(x, v):
    a = x[:, None, :] * v[None, :, None]
    b = x[..., -1]
    return torch.sum(a ** 2) + torch.sum(b * x[-1, 0]) + torch.sum(v.unsqueeze(0) * x[:, :1])


def t_misc_reductions(x, y):
    p = torch.prod(x, dim=1)
    m = torch.amin(y, dim=0)
    return torch.sum(p) + torch.dot(m, m) + torch.sum(torch.pow(x, 3)) + torch.amax(y)


def t_int_promotion(x, labels):
    # numpy 2 promotes float32 * int64 to float64; do the same
    xd = x.to(torch.float64)
    r = xd * torch.arange(x.shape[1], dtype=torch.float64) + labels[:, None]
    return torch.sum(r * xd)


TWINS = {name: globals()[f"t_{name}"] for name in C.CASES}

# -- helpers -----------------------------------------------------------------------------------


def _is_float(a) -> bool:
    return isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating)


def torch_grads(twin, args):
    """Value and gradients (w.r.t. every float argument) of a torch twin, as numpy."""
    ts = [torch.tensor(a, requires_grad=_is_float(a)) for a in args]
    out = twin(*ts)
    wrt = [t for t, a in zip(ts, args) if _is_float(a)]
    grads = torch.autograd.grad(out, wrt)
    return out.detach().numpy(), [g.numpy() for g in grads]


def make_args(name, dtype, seed=0):
    fn, make = C.CASES[name]
    rng = np.random.default_rng(seed)
    return fn, make(rng, dtype)


def float_positions(args):
    return tuple(i for i, a in enumerate(args) if _is_float(a))


# -- tests -------------------------------------------------------------------------------------

DTYPES = [np.float64, np.float32]

# known bugs outside the frontend: (case, dtype) -> reason
XFAIL: dict = {}


def _cases():
    for name in sorted(C.CASES):
        for dtype in DTYPES:
            reason = XFAIL.get((name, dtype))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, dtype, id=f"{name}-{np.dtype(dtype).name}", marks=marks)


CASES = list(_cases())


def test_corpus_is_large_enough():
    assert len(C.CASES) >= 24
    assert set(TWINS) == set(C.CASES)


@pytest.mark.parametrize("name, dtype", CASES)
def test_grad_agrees_with_torch(name, dtype):
    fn, args = make_args(name, dtype)
    wrt = float_positions(args)
    grads = srcad.grad(fn, wrt=wrt)(*args)
    assert isinstance(grads, tuple) and len(grads) == len(wrt)
    _, expected = torch_grads(TWINS[name], args)
    for pos, g, t in zip(wrt, grads, expected):
        a = args[pos]
        assert np.shape(g) == a.shape, f"d{pos}: shape {np.shape(g)} != {a.shape}"
        assert np.result_type(g) == a.dtype, f"d{pos}: dtype {np.result_type(g)} != {a.dtype}"
        err = rel_error(np.asarray(g, dtype=np.float64), t.astype(np.float64))
        assert err < TOL[dtype], f"{name} d{pos} ({np.dtype(dtype).name}): rel error {err:.3g}"


@pytest.mark.parametrize("name, dtype", CASES)
def test_value_and_grad_value_is_fn(name, dtype):
    fn, args = make_args(name, dtype, seed=1)
    wrt = float_positions(args)
    value, grads = srcad.value_and_grad(fn, wrt=wrt)(*args)
    expected = fn(*args)
    assert np.result_type(value) == np.result_type(expected)
    np.testing.assert_array_equal(value, expected)
    t_value, _ = torch_grads(TWINS[name], args)
    assert rel_error(np.float64(value), t_value.astype(np.float64)) < TOL[dtype]
    assert len(grads) == len(wrt)


def test_single_wrt_gives_one_array():
    fn, args = make_args("mlp2_tanh", np.float64)
    g = srcad.grad(fn, wrt="b1")(*args)
    _, expected = torch_grads(TWINS["mlp2_tanh"], args)
    assert isinstance(g, np.ndarray) and g.shape == args[1].shape
    assert rel_error(g, expected[1]) < 1e-10


def test_grad_is_reusable_across_calls_and_shapes():
    g = srcad.grad(C.mlp2_tanh, wrt=(0, 1, 2, 3))
    for seed, n in [(0, 5), (1, 5), (2, 9)]:
        rng = np.random.default_rng(seed)
        args = (C._f(rng, np.float64, 3, 4), C._f(rng, np.float64, 4),
                C._f(rng, np.float64, 4, 2), C._f(rng, np.float64, 2),
                C._f(rng, np.float64, n, 3), C._f(rng, np.float64, n, 2))
        _, expected = torch_grads(t_mlp2_tanh, args)
        assert rel_error(list(g(*args)), expected[:4]) < 1e-10


# -- vjp of array-valued functions ----------------------------------------------------------


def np_layer(x, W, b):
    return np.tanh(x @ W + b) * x[:, :1]


def t_layer(x, W, b):
    return torch.tanh(x @ W + b) * x[:, :1]


def np_heads(x, Wq, Wk):
    n = x.shape[0]
    q = (x @ Wq).reshape(n, 2, -1).transpose(1, 0, 2)
    k = (x @ Wk).reshape(n, 2, -1).transpose(1, 0, 2)
    s = q @ k.transpose(0, 2, 1)
    s = s - np.max(s, axis=-1, keepdims=True)
    e = np.exp(s)
    return e / np.sum(e, axis=-1, keepdims=True)


def t_heads(x, Wq, Wk):
    n = x.shape[0]
    q = (x @ Wq).reshape(n, 2, -1).permute(1, 0, 2)
    k = (x @ Wk).reshape(n, 2, -1).permute(1, 0, 2)
    return _softmax_last(q @ k.permute(0, 2, 1))


def np_gather_rows(x, idx):
    return np.exp(x[idx]) + x[idx] ** 2


def t_gather_rows(x, idx):
    return torch.exp(x[idx]) + x[idx] ** 2


VJP_CASES = {
    "layer": (np_layer, t_layer, lambda r, t: (
        C._f(r, t, 4, 3), C._f(r, t, 3, 5), C._f(r, t, 5))),
    "heads": (np_heads, t_heads, lambda r, t: (
        C._f(r, t, 3, 4), C._f(r, t, 4, 4), C._f(r, t, 4, 4))),
    "gather_rows": (np_gather_rows, t_gather_rows, lambda r, t: (
        C._f(r, t, 4, 2), np.array([0, 2, 2, 3]))),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(VJP_CASES))
def test_vjp_agrees_with_torch(name, dtype):
    fn, twin, make = VJP_CASES[name]
    rng = np.random.default_rng(3)
    args = make(rng, dtype)
    out, pullback = srcad.vjp(fn, *args)
    np.testing.assert_array_equal(out, fn(*args))
    ct = rng.standard_normal(np.shape(out)).astype(np.result_type(out))
    grads = pullback(ct)
    assert isinstance(grads, tuple) and len(grads) == len(args)

    ts = [torch.tensor(a, requires_grad=_is_float(a)) for a in args]
    t_out = twin(*ts)
    wrt = [t for t, a in zip(ts, args) if _is_float(a)]
    expected = iter(torch.autograd.grad(t_out, wrt, grad_outputs=torch.tensor(ct)))
    for a, g in zip(args, grads):
        if not _is_float(a):
            assert g is None
            continue
        t = next(expected).numpy()
        assert np.shape(g) == a.shape and np.result_type(g) == a.dtype
        err = rel_error(np.asarray(g, dtype=np.float64), t.astype(np.float64))
        assert err < TOL[dtype], f"{name}: rel error {err:.3g}"
