"""Model functions for E9 (memory planning), and careful hand-written backwards of two of
them. srcad reads the models' source here.

* ``mlp6_loss``: a 6-layer tanh MLP, straight-line, loss ``sum(h * h)``;
* ``gelu_block_loss``: a GELU MLP block ``gelu(x @ W1 + b1) @ W2 + b2`` (tanh form), loss
  ``sum(y * probe)`` (so the backward's seed is `probe`, an argument).

The hand-written backwards are what a careful person writes in numpy: keep only what the
backward needs (each layer's tanh output; for GELU, x1 = x @ W1 + b1 and tanh(.)), compute
every elementwise step in place into a buffer that dies there, free each temporary after its
last use, and return fresh gradient arrays.
"""

import numpy as np

GELU_C = 0.7978845608028654


def mlp6_loss(x, W1, b1, W2, b2, W3, b3, W4, b4, W5, b5, W6, b6):
    h = np.tanh(x @ W1 + b1)
    h = np.tanh(h @ W2 + b2)
    h = np.tanh(h @ W3 + b3)
    h = np.tanh(h @ W4 + b4)
    h = np.tanh(h @ W5 + b5)
    h = np.tanh(h @ W6 + b6)
    return np.sum(h * h)


def mlp6_grad_by_hand(x, W1, b1, W2, b2, W3, b3, W4, b4, W5, b5, W6, b6):
    """dW1, db1, ..., dW6, db6 of mlp6_loss."""
    Ws, bs = (W1, W2, W3, W4, W5, W6), (b1, b2, b3, b4, b5, b6)
    hs = [x]
    for W, b in zip(Ws, bs):
        z = hs[-1] @ W
        z += b
        np.tanh(z, out=z)
        hs.append(z)
    g = hs[-1] * 2.0  # d sum(h * h) / dh
    grads = [None] * 12
    for i in range(5, -1, -1):
        h = hs.pop()  # tanh output of layer i: dies here
        np.multiply(h, h, out=h)
        np.subtract(1.0, h, out=h)
        g *= h  # dz
        del h
        grads[2 * i + 1] = g.sum(axis=0)
        grads[2 * i] = hs[-1].T @ g
        if i > 0:
            g = g @ Ws[i].T
    return tuple(grads)


def gelu(a):
    return 0.5 * a * (1.0 + np.tanh(GELU_C * (a + 0.044715 * a * a * a)))


def gelu_block_loss(x, W1, b1, W2, b2, probe):
    a = x @ W1 + b1
    g = 0.5 * a * (1.0 + np.tanh(GELU_C * (a + 0.044715 * a * a * a)))
    y = g @ W2 + b2
    return np.sum(y * probe)


def gelu_block_grad_by_hand(x, W1, b1, W2, b2, probe):
    """dx, dW1, db1, dW2, db2 of gelu_block_loss."""
    a = x @ W1
    a += b1
    t = a * a  # tanh(C * (a + 0.044715 a^3)), built in one buffer
    t *= a
    t *= 0.044715
    t += a
    t *= GELU_C
    np.tanh(t, out=t)
    g = t + 1.0  # gelu(a) = 0.5 a (1 + t)
    g *= a
    g *= 0.5
    dy = probe
    db2 = dy.sum(axis=(0,))
    dW2 = g.T @ dy
    del g
    dg = dy @ W2.T
    # d gelu / da = 0.5 (1 + t) + 0.5 a (1 - t^2) C (1 + 3 * 0.044715 a^2)
    u = a * a
    u *= 3 * 0.044715
    u += 1.0
    u *= GELU_C
    u *= a
    s = t * t
    np.subtract(1.0, s, out=s)
    u *= s
    del s
    t += 1.0
    u += t
    del t
    u *= 0.5
    dg *= u  # da
    del u, a
    db1 = dg.sum(axis=0)
    dW1 = x.T @ dg
    dx = dg @ W1.T
    return dx, dW1, db1, dW2, db2
