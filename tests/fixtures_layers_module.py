"""A layer library in a module of its own (tests/test_built_objects.py builds its layers in a
function of another module): its methods read this module's names (`_softmax`, `EPS`, `act`)."""

import numpy as np
import numpy as xp

EPS = 1e-7


def act(z):
    return xp.tanh(z)


def _softmax(z):
    z = z - np.max(z, axis=1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=1, keepdims=True)


class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def forward(self, x):
        self.x = x
        return act(x @ self.W + self.b)


class SoftmaxCE:
    def forward(self, s, y):
        self.p = _softmax(s)
        return -np.mean(np.log(self.p[np.arange(len(y)), y] + EPS))


class Net:
    def __init__(self, W1, b1, W2, b2):
        self.l1, self.l2 = Dense(W1, b1), Dense(W2, b2)
        self.loss = SoftmaxCE()

    def __call__(self, x, y):
        return self.loss.forward(self.l2.forward(self.l1.forward(x)), y)
