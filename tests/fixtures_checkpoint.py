"""Functions the checkpoint tests differentiate."""

import numpy as np
import srcad

def layer(h, W):
    return np.tanh(h @ W)

def plain(h, Ws):
    for W in Ws:
        h = layer(h, W)
    return np.sum(h * h)

def checked(h, Ws):
    for W in Ws:
        h = srcad.checkpoint(layer)(h, W)
    return np.sum(h * h)

def segment(h, Ws, start, k):
    for i in range(start, start + k):
        h = np.tanh(h @ Ws[i])
    return h

def sqrt_ck(h, Ws, k):
    for s in range(len(Ws) // k):
        h = srcad.checkpoint(segment)(h, Ws, s * k, k)
    return np.sum(h * h)

def unrolled(h, Ws, k):
    for i in range(len(Ws)):
        h = np.tanh(h @ Ws[i])
    return np.sum(h * h)


ck_layer = srcad.checkpoint(layer)  # a module-level checkpointed function


def checked_global(h, Ws):
    for W in Ws:
        h = ck_layer(h, W)
    return np.sum(h * h)


def straight(x, W1, W2):
    h = srcad.checkpoint(layer)(x, W1)
    return np.sum(layer(h, W2))


def checkpoint_not_a_function(x):
    return srcad.checkpoint(np.tanh)(x)


def branch_not_taken(x, n):
    if n > 0:
        x = np.tanh(x)
    return np.sum(x * x)


def zero_trip_callee(h, Ws, k):
    h = segment(h, Ws, 0, k)
    return np.sum(h * h)
