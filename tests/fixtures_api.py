"""Functions the API tests differentiate (srcad reads their source from this file)."""

import numpy as np


def loss(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def scaled(x, scale=2.0):
    return np.sum(np.sin(x) * scale)


def identity_scalar(x):
    return x


def uses_int(x, n):
    return np.sum(x[:n] ** 2)


def shape_error(x, y):
    z = x @ y
    return np.sum(z)


def vector_out(x, W):
    return np.tanh(x @ W)


def noisy(x, rng):
    z = rng.standard_normal(x.shape)
    return np.sum(x * z)


def conjugate_method(x):  # (x.conjugate() has a row now: a method that has none)
    return np.sum(x.getfield(np.float64))
