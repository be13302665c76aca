"""Functions the memory_budget tests differentiate."""

import numpy as np


def block(h, W):
    a = np.tanh(h @ W)
    b = np.tanh(a @ W.T)
    return np.tanh(b @ W) * 0.5 + a * 0.5


def deep(h, Ws):
    for W in Ws:
        h = block(h, W)
    return np.sum(h * h)


def layers(h, Ws):
    for W in Ws:
        h = np.tanh(h @ W)
    return np.sum(h * h)


def two_loops(h, Ws, Us):
    for W in Ws:
        h = np.tanh(h @ W)
    g = h
    for U in Us:
        g = np.sin(g @ U)
    return np.sum(g * h)


def calls_only(h, W1, W2, W3):
    a = block(h, W1)
    b = block(a, W2)
    c = block(b, W3)
    return np.sum(c * c)
