"""A two-layer MLP classifier as plain numpy: the demo's and the overhead benchmark's model."""

import numpy as np


def loss(W1, b1, W2, b2, x, labels_onehot):
    """Softmax cross-entropy of a tanh MLP, averaged over the batch."""
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(logp * labels_onehot) / x.shape[0]


def init(rng, n_in, n_hidden, n_out, dtype=np.float64):
    """Parameters (W1, b1, W2, b2), scaled for unit-variance activations."""
    W1 = rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)
    W2 = rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden)
    return tuple(a.astype(dtype) for a in (W1, np.zeros(n_hidden), W2, np.zeros(n_out)))


def batch(rng, n, n_in, n_out, dtype=np.float64):
    """A random batch (x, one-hot labels)."""
    x = rng.standard_normal((n, n_in)).astype(dtype)
    labels = rng.integers(0, n_out, size=n)
    return x, np.eye(n_out, dtype=dtype)[labels]


def _example_loss():
    rng = np.random.default_rng(0)
    return (*init(rng, 16, 32, 10), *batch(rng, 4, 16, 10))


EXAMPLES = {"loss": _example_loss}
