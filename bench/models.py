"""Functions the benchmarks differentiate (srcad reads their source from this file)."""

import numpy as np


def mlp2_loss(W1, b1, W2, b2, x, y):
    """A two-layer tanh MLP with a mean-squared-error loss."""
    h = np.tanh(x @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def mlp2_grad_by_hand(W1, b1, W2, b2, x, y):
    """A careful hand-written forward and backward of mlp2_loss."""
    h = np.tanh(x @ W1 + b1)
    out = h @ W2 + b2
    dout = (out - y) * (2.0 / out.size)
    dW2 = h.T @ dout
    db2 = dout.sum(axis=0)
    dz = (dout @ W2.T) * (1 - h * h)
    dW1 = x.T @ dz
    db1 = dz.sum(axis=0)
    return dW1, db1, dW2, db2
