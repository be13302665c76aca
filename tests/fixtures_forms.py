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


def gather_then_write(x, idx):
    s = x * 2.0
    c = s[idx]  # (an array index: numpy copies)
    s -= 1.0
    return np.sum(c * c) * np.sum(s)


def hint_applied_in_a_loop(x):
    s = x * 2.0
    total = 0.0
    for _ in range(2):
        c = s[1:]
        s = s.copy()  # (the refusal's own hint: the write below goes into a new array)
        s -= 1.0
        total = total + np.sum(c * c)
    return total


def size_one_vector(x):
    return np.sum(x * x, keepdims=True)


def size_one_matrix(x):
    return x[None, :] @ np.sin(x)[:, None]


def float_of_a_size_one_array(x):
    b = np.sum(x * x, keepdims=True)
    return float(b[0]) * 2.0


def float_hint_applied(x):
    b = np.sum(x * x, keepdims=True)
    return np.sum(b) * 2.0


def cumsum(x):  # (named like a runtime helper's function: cumsum_grad)
    return np.sum(np.cumsum(x) ** 2)


def loop_over_ndindex(x):
    s = 0.0
    for i in np.ndindex(x.shape[0]):
        s = s + x[i] ** 2
    return s


def _pair(x):
    return np.sum(x ** 2), np.tanh(x)


def unpack_into_a_dict_entry(x):
    out = {}
    loss, out["h"] = _pair(x)
    return loss + np.sum(out["h"] * x)


def loop_over_reversed_list(x):
    values = [x[0], x[1] * 2.0, x[2] * x[3]]
    acc = 0.0
    for v in reversed(values):
        acc = acc * 0.5 + v
    return acc


def enumerate_of_zip(x):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, x[::-1])):
        total = total + a * b * (i + 1)
    return total


# a helper taking *args (the function srcad transforms has fixed parameters)
def _concat(*parts, axis=0):
    return np.concatenate(parts, axis=axis)


def _mean_of(*xs):
    return sum(np.mean(x) for x in xs) / len(xs)


def star_args_helpers(x):
    both = _concat(x, np.sin(x), x ** 2)
    return np.sum(both * both) + _mean_of(x, x * 2.0) + _mean_of(np.tanh(x))
