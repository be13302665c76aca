"""Functions that use Python's own tests around numpy (`is`, `is not`, `in`, `not in`, `==`
on strings), for tests/test_python_tests.py."""

import numpy as np


def loss(scores, y=None):
    if y is None:
        return np.sum(scores ** 2)
    return np.sum((scores - y) ** 2)


def dense(x, W, b=None):
    h = x @ W
    if b is not None:
        h = h + b
    return np.sum(np.tanh(h))


def with_options(x, params):
    scale = 1.0
    if "scale" in params:
        scale = params["scale"]
    if "dropout" not in params:
        scale = scale * 3.0
    return np.sum(x * params["w"]) * scale


def mode_switch(x, mode="train"):
    if mode == "train" and mode not in ("eval", "test"):
        return np.sum(np.sin(x))
    return np.sum(x)


def bool_as_number(x):
    return np.sum(x * x) * (x is not None) + np.sum(x) * ("a" in "abc")


def membership_of_int(x, k):
    out = np.sum(x)
    for i in range(3):
        if i in (k, k + 1):
            out = out + np.sum(x * x) * i
    return out


def identity_of_two(x):
    y = x * 2.0
    if x is y:
        return np.sum(x)
    return np.sum(y)
