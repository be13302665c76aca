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


def gelu_mlp(x, W1, W2):
    h = x @ W1
    g = 0.5 * h * (1.0 + np.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
    y = g @ W2
    return np.sum(y * y)


def gelu_layer(h, W):
    a = h @ W
    return 0.5 * a * (1.0 + np.tanh(0.7978845608 * (a + 0.044715 * a ** 3)))


def gelu_net(x, W1, W2, W3, W4):
    h = gelu_layer(x, W1)
    h = gelu_layer(h, W2)
    h = gelu_layer(h, W3)
    h = gelu_layer(h, W4)
    return np.sum(h * h)
