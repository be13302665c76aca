"""Everyday spellings from numpy programs people write, for tests/test_everyday_forms.py."""

import numpy as np


class Cfg:
    dtype = np.float64
    eps = 1e-3


cfg = Cfg()


class Act:
    def fn(self, z):
        return np.tanh(z)


act = Act()


def clip_keywords(x):
    return np.sum(x.clip(min=0) * x + np.clip(x, max=0.5))


def astype_keywords(x):
    return np.sum(x.astype(np.float64, copy=False) ** 2 + x.astype(np.float64, copy=True))


def numpy_function_in_a_local(x):
    tanh = np.tanh
    return np.sum(tanh(x))


def method_in_a_local(x):
    f = act.fn
    return np.sum(f(x) * x)


def where_one_argument(x):
    idx = np.where(x > 0)
    return np.sum(x[idx] ** 2)


def dtype_from_an_object(x):
    return np.sum(x.astype(cfg.dtype) ** 2) + cfg.eps
