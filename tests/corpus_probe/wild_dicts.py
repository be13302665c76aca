"""Dicts written by called functions and walked by key, in the styles of public numpy code:
a layer helper that stores its statistics into a dict the caller passes (`store[name] = mu`,
the caller reading them back into its loss), and an optimizer object whose state dicts are
filled by walking a parameter dict's keys (`for name in params`)."""

from __future__ import annotations

import numpy as np

from . import Probe, rng


def norm_layer(x, layer, store, name, eps=1e-5):
    mu = x.mean(axis=0)
    var = ((x - mu) ** 2).mean(axis=0)
    store[name + "_mu"] = mu
    store[name + "_var"] = var
    return layer["g"] * (x - mu) / np.sqrt(var + eps) + layer["b"]


def stacked_norm_store(params, X, y, stats):
    store = {}
    h = X
    for i in range(2):
        name = "l%d" % i
        h = np.tanh(h @ params["W%d" % i])
        h = norm_layer(h, {"g": params["g%d" % i], "b": params["b%d" % i]}, store, name)
        stats[name] = 0.9 * stats.get(name, 0.0) + 0.1 * store[name + "_mu"]
    penalty = 0.0
    for key in store:
        penalty = penalty + np.sum(store[key] ** 2)
    return np.mean((h - y) ** 2) + 0.05 * penalty + 0.01 * np.sum(stats["l1"] ** 2)


class Momentum:
    def __init__(self, lr=0.1, mu=0.8):
        self.lr, self.mu = lr, mu
        self.vel = {}

    def step(self, params, grads):
        for name in params:
            if name not in self.vel:
                self.vel[name] = np.zeros_like(grads[name])
            self.vel[name] = self.mu * self.vel[name] - self.lr * grads[name]
            params[name] = params[name] + self.vel[name]


def _mse_grads(params, X, y):
    err = np.tanh(X @ params["A"]) @ params["B"] - y
    dB = np.tanh(X @ params["A"]).T @ err / len(y)
    dA = X.T @ ((err @ params["B"].T) * (1 - np.tanh(X @ params["A"]) ** 2)) / len(y)
    return {"B": dB, "A": dA}


def momentum_over_keys(A, B, X, y):
    params = {"A": A, "B": B}
    opt = Momentum()
    for _ in range(2):
        opt.step(params, _mse_grads(params, X, y))
    return np.mean((np.tanh(X @ params["A"]) @ params["B"] - y) ** 2)


def _norm():
    r = rng(401)
    p = {"W0": r.standard_normal((3, 4)) * 0.7, "g0": 1 + 0.1 * r.standard_normal(4),
         "b0": 0.1 * r.standard_normal(4), "W1": r.standard_normal((4, 2)) * 0.7,
         "g1": 1 + 0.1 * r.standard_normal(2), "b1": 0.1 * r.standard_normal(2)}
    return p, r.standard_normal((6, 3)), r.standard_normal((6, 2)), {"l0": 0.5}


def _mom():
    r = rng(402)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal((4, 2)) * 0.5,
            r.standard_normal((7, 3)), r.standard_normal((7, 2)))


PROGRAMS = [
    Probe("wild_dicts.stacked_norm_store", stacked_norm_store, _norm, "params"),
    Probe("wild_dicts.momentum_over_keys", momentum_over_keys, _mom, ("A", "B")),
]
