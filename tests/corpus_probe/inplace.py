"""In-place numpy as from-scratch code writes it: ufuncs with out= into a fresh buffer,
``np.clip(..., out=...)``, ``/=`` normalisation, masked ``*=``, a running-statistics dict
updated in the function, a tolerance-driven while loop, a batch loop with an early break,
float32 parameters computed in float64 by astype."""

import numpy as np

from . import Probe, rng


def relu_out(W, x):
    z = x @ W
    a = np.empty_like(z)
    np.maximum(z, 0, out=a)
    np.clip(a, 0.0, 1.5, out=a)
    return np.sum(a ** 2)


def exp_out_normalise(W, x):
    s = x @ W
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=1, keepdims=True)
    return -np.sum(np.log(s[:, 0]))


def masked_scale(W, x):
    h = np.tanh(x @ W)
    h[h < 0] *= 0.1
    h[:, -1] += 1.0
    return np.sum(h ** 3)


def running_stats(gamma, beta, x, stats, momentum=0.9, eps=1e-5):
    mu = x.mean(axis=0)
    var = x.var(axis=0)
    stats["mean"] = momentum * stats["mean"] + (1 - momentum) * mu
    stats["var"] = momentum * stats["var"] + (1 - momentum) * var
    xhat = (x - mu) / np.sqrt(var + eps)
    return np.sum((gamma * xhat + beta) ** 2)


def fixed_point(W, x, tol=1e-6, max_iter=50):
    h = np.zeros(W.shape[0])
    it = 0
    while it < max_iter:
        h_new = np.tanh(W @ h + x)
        if np.max(np.abs(h_new - h)) < tol:
            break
        h = h_new
        it += 1
    return np.sum(h ** 2)


def batch_loop_break(W, X, y, bs=3, max_batches=2):
    total = 0.0
    for k, i in enumerate(range(0, len(X), bs)):
        if k >= max_batches:
            break
        pred = X[i:i + bs] @ W
        total = total + np.mean((pred - y[i:i + bs]) ** 2)
    return total


def float32_params_f64_math(W, b, x):
    W64 = W.astype(np.float64)
    z = x @ W64 + b.astype(np.float64)
    return np.sum(np.log1p(np.exp(z)))


def _w(seed, shape, x_shape):
    r = rng(seed)
    return r.standard_normal(shape) * 0.5, r.standard_normal(x_shape)


def _stats():
    r = rng(104)
    return (r.standard_normal(3), r.standard_normal(3), r.standard_normal((5, 3)),
            {"mean": np.zeros(3), "var": np.ones(3)})


def _fp():
    r = rng(105)
    return r.standard_normal((3, 3)) * 0.3, r.standard_normal(3)


def _bl():
    r = rng(106)
    return r.standard_normal((2, 1)), r.standard_normal((10, 2)), r.standard_normal((10, 1))


def _f32():
    r = rng(107)
    return (r.standard_normal((3, 2)).astype(np.float32), np.zeros(2, np.float32),
            r.standard_normal((4, 3)))


PROGRAMS = [
    Probe("inplace.relu_out", relu_out, lambda: _w(100, (3, 4), (5, 3)), "W"),
    Probe("inplace.exp_out_normalise", exp_out_normalise, lambda: _w(101, (3, 4), (5, 3)), "W",
          True),
    Probe("inplace.masked_scale", masked_scale, lambda: _w(102, (3, 4), (5, 3)), "W"),
    Probe("inplace.running_stats", running_stats, _stats, ("gamma", "beta", "x")),
    Probe("inplace.fixed_point", fixed_point, _fp, ("W", "x")),
    Probe("inplace.batch_loop_break", batch_loop_break, _bl, "W"),
    Probe("inplace.float32_params_f64_math", float32_params_f64_math, _f32, ("W", "b"),
          tol=1e-3),
]
