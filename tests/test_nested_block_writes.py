"""A name made in a loop's body or a branch and written by index in a loop or a branch
nested inside it (`for step in ...: f = np.zeros_like(p); for n in ...: f[n] += k[n] * ...`:
a simulation's forces, an RNN step's scratch, a per-class sum). srcad took such a name for
one value of its block (normalize.py `_block_locals`) and gave the nested writes a name of
their own: the gradient was zeros (or part of it), and where the fill loop read the buffer
back, the value was not Python's; some forms were refused with a KeyError blamed on the
user's code. Found by a front-door probe (a spring-mass simulation) in the session of
2026-12-06 (sixth); such a name now joins its values as any name a loop carries
(`_written_in_nested_blocks`). The fill fuzzer draws the class now (tests/fuzz_programs.py
`nested_statement`, tests/test_slot_writes.py)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(3)


def forces_in_a_step_loop(k, P):
    p = P * 1.0
    for _ in range(2):
        f = np.zeros_like(p)
        for n in range(3):
            f[n] += k[n] * p[2 - n]
        p = p + 0.1 * f
    return np.sum(p ** 2)


def slot_read_back(k, P):
    p = P * 1.0
    for _ in range(2):
        f = np.zeros_like(p)
        for n in range(3):
            f[n] = f[n] + k[n] * p[2 - n]
        p = np.tanh(p + f)
    return np.sum(p ** 2)


def chain_in_the_fill(k, P):
    p = P * 1.0
    for _ in range(2):
        f = np.zeros_like(p)
        f[0] = k[0] * p[0]
        for n in range(1, 3):
            f[n] = f[n - 1] * k[n] + p[n]
        p = p + 0.1 * f
    return np.sum(p ** 2)


def edges_unpacked(k, P):
    edges = [(0, 1), (1, 2), (0, 2)]
    p = P * 1.0
    for _ in range(3):
        f = np.zeros_like(p)
        for (i, j), kk in zip(edges, k):
            d = p[j] - p[i]
            f[i] += kk * d
            f[j] -= kk * d
        p = p + 0.1 * f * np.arange(1.0, 4.0)[:, None]
    return np.sum(p[:, 1] * np.arange(3.0)) + np.sum(p ** 2)


def written_in_a_branch(k, P):
    p = P * 1.0
    for t in range(3):
        f = np.zeros_like(p)
        if t % 2 == 0:
            f[0] = k[0] * p[1]
        f[1] = f[1] + k[1] * p[0]
        p = p + 0.1 * f
    return np.sum(p ** 2)


def fill_loop_in_a_branch(k, P):
    p = P * 1.0
    for t in range(3):
        f = np.zeros_like(p)
        if t > 0:
            for n in range(3):
                f[n] += k[n] * p[2 - n]
        p = np.tanh(p + f)
    return np.sum(p ** 2)


def made_in_a_branch(k, P):
    p = P * 1.0
    if k[0] > -10.0:
        f = np.zeros_like(p)
        for n in range(3):
            f[n] += k[n] * p[2 - n]
        p = p + f
    return np.sum(p ** 2)


def while_inside(k, P):
    p = P * 1.0
    for _ in range(2):
        f = np.zeros_like(p)
        n = 0
        while n < 3:
            f[n] -= k[n] * p[2 - n]
            n += 1
        p = p + 0.1 * f
    return np.sum(p ** 2)


def two_levels_inside(k, P):
    p = P * 1.0
    for _ in range(2):
        f = np.zeros_like(p)
        for n in range(3):
            for m in range(2):
                f[n, m] += k[n] * p[2 - n, 1 - m]
        p = p + 0.1 * f
    return np.sum(p ** 2)


def scattered_by_add_at(k, P):
    p = P * 1.0
    for _ in range(2):
        f = np.zeros_like(p)
        for n in range(3):
            np.add.at(f, [n, n, 0], k[n] * p[2 - n])
        p = p + 0.1 * f
    return np.sum(p ** 2)


def list_of_numbers(k, P):
    p = P * 1.0
    for _ in range(2):
        fs = [0.0, 0.0, 0.0]
        for n in range(3):
            fs[n] = k[n] * np.sum(p[2 - n])
        p = p + 0.1 * np.array(fs)[:, None]
    return np.sum(p ** 2)


def dict_entry(k, P):
    p = P * 1.0
    for _ in range(2):
        d = {"a": np.zeros(2)}
        for n in range(3):
            d["a"] = d["a"] + k[n] * p[2 - n]
        p = p + 0.1 * d["a"]
    return np.sum(p ** 2)


def naive_conv_layers(W0, W1, x):
    h = x
    for W in (W0, W1):
        c_out, _, kh, kw = W.shape
        n, _, rows, cols = h.shape
        out = np.zeros((n, c_out, rows - kh + 1, cols - kw + 1))
        for i in range(rows - kh + 1):
            for j in range(cols - kw + 1):
                patch = h[:, :, i:i + kh, j:j + kw]
                out[:, :, i, j] = np.tensordot(patch, W, axes=([1, 2, 3], [1, 2, 3]))
        h = np.maximum(out, 0) + 0.1 * out
    return np.sum(h ** 2)


def heads_per_batch(Wq, X):
    T, D = X.shape
    hd = D // 2
    out = np.zeros_like(X)
    for b in range(2):
        Xb = X * (b + 1)
        heads = np.zeros((2, T, hd))
        for h in range(2):
            q = Xb @ Wq[:, h * hd:(h + 1) * hd]
            s = q @ q.T / np.sqrt(hd)
            s = np.exp(s - s.max(axis=1, keepdims=True))
            s /= s.sum(axis=1, keepdims=True)
            heads[h] = s @ q
        out += np.concatenate(list(heads), axis=1)
    return np.sum(out ** 2)


def normalised_by_column(g, X):
    out = X
    for _ in range(2):
        mu, var = out.mean(axis=0), out.var(axis=0)
        nrm = np.empty_like(out)
        for c in range(out.shape[1]):
            nrm[:, c] = (out[:, c] - mu[c]) / np.sqrt(var[c] + 1e-5)
        out = np.tanh(nrm * g)
    return np.sum(out ** 3)


LAYERS = [
    (naive_conv_layers, lambda: (RNG.standard_normal((2, 1, 2, 2)),
                                 RNG.standard_normal((2, 2, 2, 2)),
                                 RNG.standard_normal((2, 1, 5, 5)))),
    (heads_per_batch, lambda: (0.5 * RNG.standard_normal((4, 4)), RNG.standard_normal((3, 4)))),
    (normalised_by_column, lambda: (RNG.standard_normal(3), RNG.standard_normal((5, 3)))),
]


@pytest.mark.parametrize("f, make", LAYERS, ids=[f.__name__ for f, _ in LAYERS])
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_layers_with_a_scratch_buffer_a_trip(f, make, mode):
    """Layer code as course libraries write it: a naive convolution's output, a batch's
    heads, a column-wise normalisation, each allocated in a loop over layers or batches and
    filled in a loop inside: all three were wrong (rel. errors 0.3-1.0) before."""
    args = make()
    wrt = tuple(range(len(args)))
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    value, grads = srcad.value_and_grad(f, wrt=wrt, **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    for got, want in zip(grads, numerical_grad(f, args, wrt=wrt)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)


CASES = [forces_in_a_step_loop, slot_read_back, chain_in_the_fill, edges_unpacked,
         written_in_a_branch, fill_loop_in_a_branch, made_in_a_branch, while_inside,
         two_levels_inside, scattered_by_add_at, list_of_numbers, dict_entry]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_written_in_a_nested_block(f, mode):
    k, P = RNG.standard_normal(3), RNG.standard_normal((3, 2))
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    value, (gk, gP) = srcad.value_and_grad(f, wrt=(0, 1), **options)(k, P)
    assert value == pytest.approx(f(k, P), rel=1e-12)
    want_k, want_P = numerical_grad(f, (k, P), wrt=(0, 1))
    np.testing.assert_allclose(gk, want_k, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(gP, want_P, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_float32_matches_float64_route(f):
    """The same programs in float32: the fused gradient bit for bit the unfused one."""
    k = RNG.standard_normal(3).astype(np.float32)
    P = RNG.standard_normal((3, 2)).astype(np.float32)
    plain = srcad.grad(f, wrt=(0, 1))(k, P)
    fused = srcad.grad(f, wrt=(0, 1), fuse=True)(k, P)
    for a, b in zip(plain, fused):
        assert a.dtype == np.float32 and np.array_equal(a, b)
