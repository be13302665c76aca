"""Functions for the in-place and view tests."""

import numpy as np


def setrow(x, v):
    y = x * 2.0
    y[0] = v
    return np.sum(y * y)


def augrow(x, v):
    y = np.tanh(x)
    y[:, 1] += v
    return np.sum(y ** 3)


def mask_zero(x):
    y = x * 1.5
    y[y < 0] = 0.0
    return np.sum(y * x)


def loop_set(x, n):
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.sum(x * i)
    return np.sum(out ** 2)


def write_param(x, v):
    x[0] = v  # numpy would change the caller's array; srcad copies on write
    return np.sum(x * x)


def relu_inplace_scenario(x, W):
    # the seed's scenario: an activation modified in place after the op that saved it
    h = x @ W
    a = np.tanh(h)
    a[a < 0] *= 0.1  # in place: tanh's backward needs the original `a`
    return np.sum(a * a)


def view_then_write(x):
    y = x * 1.0
    r = y[0]  # a view into y
    y[0] = 5.0  # numpy changes r too
    return np.sum(r * y)


def alias_then_write(x):
    y = x * 1.0
    z = y
    y[1] = 0.0
    return np.sum(z)


def transpose_then_augassign(x):
    y = x * 1.0
    v = y.T
    y += 1.0
    return np.sum(v * y)


def views_read_before_write(x):
    y = x * 1.0
    s = np.sum(y[0])  # the view dies before the write: fine
    y[0] = 2.0
    return s + np.sum(y * y)


def vector_out(x, W):
    return np.tanh(x @ W)


def write_into_view(x):
    y = x * 2.0
    r = y[1:]
    r[0] = np.tanh(x[0])  # numpy changes y[1] too
    return np.sum(y * y)


def augassign_into_view(x):
    y = x * 1.5
    r = y[:, 0]
    r += x[:, 1]  # in place: y's first column changes
    return np.sum(y ** 2)


def sibling_views(x):
    y = x * 1.0
    a = y[0]
    b = y[0:2]
    a[1] = 7.0 * x[2, 2]  # shows in y and in b
    return np.sum(b * b) + np.sum(y)


def view_written_in_loop(x):
    y = x * 1.0
    r = y[0]
    for i in range(2):
        r[i] = x[1, i] * 2.0
    return np.sum(y * r)
