"""Functions that read module globals, class attributes and closure cells, for
tests/test_names_at_call.py (each test rebinds a name here and puts it back)."""

import numpy as np

import srcad

SCALE = 2.0
ACT = np.tanh
W = np.array([0.5, -1.0, 2.0])
STEPS = 2
OPTS = {"alpha": 0.5}


class Config:
    beta = 1.5

    @staticmethod
    def act(x):
        return np.tanh(x)


class Settings:
    def __init__(self):
        self.gamma = 0.25


settings = Settings()


def scaled(x):
    return np.sum(SCALE * x * x)


def activated(x):
    return np.sum(ACT(x))


def weighted(x):
    return np.sum(W * x)


def with_class_attr(x):
    return np.sum(Config.beta * x * x)


def with_instance_attr(x):
    return np.sum(settings.gamma * np.sin(x))


def with_static_method(x):
    return np.sum(Config.act(x) * x)


def with_dict(x):
    return OPTS["alpha"] * np.sum(x * x)


def callee(x):
    return SCALE * np.sin(x)


def caller(x):
    return np.sum(callee(x) * x)


def looped(x):
    h = x
    for _ in range(STEPS):
        h = np.tanh(h * SCALE)
    return np.sum(h)


def checkpointed(x):
    h = srcad.checkpoint(callee)(x)
    return np.sum(h * h)


def make_closure(c):
    def inner(x):
        return np.sum(c * x * x)

    def set_c(value):
        nonlocal c
        c = value

    return inner, set_c


closure_fn, set_closure = make_closure(3.0)


@srcad.grad
def uses_later(x):  # (decorated above the names it reads: Python reads them at the call)
    return np.sum(later_helper(x) * LATER)


def later_helper(x):
    return np.tanh(x)


LATER = 2.0
