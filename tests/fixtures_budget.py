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
