"""Functions that tests send to other processes (tests/test_pickle.py, tests/test_parallel.py):
a transformed function travels by module and name, so they live at a module's top level."""

import time

import numpy as np

import srcad

DELAY = {"seconds": 0.0}  # (test_parallel: a step slow enough to kill a worker during it)


def mse(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


@srcad.grad(wrt=("W", "b"))
def mse_grad(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def slow_mse(W, b, x, y, seconds):
    time.sleep(seconds)  # (runs as written: its argument carries no gradient)
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def make_local():
    def inner(x):
        return np.sum(x * x)

    return inner


def example(rng=None, n=8, dtype=np.float64):
    rng = rng or np.random.default_rng(0)
    W = rng.standard_normal((5, 3)).astype(dtype)
    b = rng.standard_normal(3).astype(dtype)
    x = rng.standard_normal((n, 5)).astype(dtype)
    y = rng.standard_normal((n, 3)).astype(dtype)
    return W, b, x, y


def cubic(x):
    return 0.5 * x ** 3
