"""The loss the optimiser tests train (srcad reads its source from this file)."""

import numpy as np


def mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return np.mean((out - y) ** 2)


def neg_mlp_loss(params, x, y):
    # maximize=True climbs this, i.e. fits the data (climbing mlp_loss would diverge)
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return -np.mean((out - y) ** 2)
