"""The example from DESIGN.md: a one-layer tanh regression loss.

    python -m srcad show examples/mlp.py:loss --wrt W,b
"""

import numpy as np


def loss(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def _example_loss():
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((16, 32)),
        rng.standard_normal(32),
        rng.standard_normal((4, 16)),
        rng.standard_normal((4, 32)),
    )


# `python -m srcad show` specialises a function to these inputs when they are given.
EXAMPLES = {"loss": _example_loss}
