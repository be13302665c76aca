"""Loop-heavy examples: an RNN unrolled with a `for` loop, and a data-dependent `while`.

    python -m srcad show examples/rnn.py:rnn_loss --wrt W,U,b
    python -m srcad show examples/rnn.py:grow --wrt x
"""

import numpy as np


def rnn_loss(h, W, U, b, xs, target):
    """A tanh RNN over the time steps of xs (T, batch, n_in); MSE of the last state."""
    for t in range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t] @ U + b)
    return np.mean((h - target) ** 2)


def grow(x, w):
    """Scale x by (1 + w^2) until its norm passes 10: the trip count depends on the data."""
    while np.sqrt(np.sum(x * x)) < 10.0:
        x = x * (1.0 + w * w)
    return np.sum(np.sin(x))


def _example_rnn():
    rng = np.random.default_rng(0)
    T, batch, n_in, n_h = 6, 4, 3, 5
    return (
        np.zeros((batch, n_h)),
        rng.standard_normal((n_h, n_h)) * 0.5,
        rng.standard_normal((n_in, n_h)),
        rng.standard_normal(n_h) * 0.1,
        rng.standard_normal((T, batch, n_in)),
        rng.standard_normal((batch, n_h)),
    )


def _example_grow():
    return np.array([0.3, -0.2, 0.5]), 0.4


EXAMPLES = {"rnn_loss": _example_rnn, "grow": _example_grow}
