"""An L-layer tanh network written as a loop, checkpointed: the forward keeps every k-th
layer's input (k ~ sqrt(L)), the backward recomputes each segment before reversing it.

    python -m srcad show examples/deep.py:loss --wrt h,Ws
"""

import numpy as np

import srcad


def loss(h, Ws):
    for l in srcad.checkpoint(range(Ws.shape[0])):
        h = np.tanh(h @ Ws[l])
    return np.sum(h * h)


def _example_loss():
    rng = np.random.default_rng(0)
    return rng.standard_normal((8, 16)), rng.standard_normal((16, 16, 16)) * 0.25


# `python -m srcad show` specialises a function to these inputs when they are given.
EXAMPLES = {"loss": _example_loss}
