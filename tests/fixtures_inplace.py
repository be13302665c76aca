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
    y += 1.0  # numpy changes v too
    return np.sum(v @ y)


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


def view_made_in_loop(x):
    y = x * 1.0
    for i in range(2):
        r = y[i]
        r[0] = r[0] * 3.0  # writes into row i of y
    return np.sum(y * y)


def view_written_in_branch(x):
    y = x * 1.0
    r = y[1:]
    if x[0, 0] > -10.0:
        r[0] = np.sin(x[2])  # y[1] changes
    else:
        r *= 2.0
    return np.sum(y * r[0])


def write_into_transpose(x):
    y = x * 2.0
    t = y.T
    t[0] = np.cos(x[:, 1])  # y's first column
    return np.sum(y * y) + np.sum(t[1])


def write_into_swapaxes_in_loop(x):
    y = x * 1.0
    s = np.swapaxes(y, 0, 1)
    for j in range(3):
        s[j] += x[j, :3] * j  # y[:, j] changes
    return np.sum(y ** 2)


def chained_views(x):
    y = x * 1.0
    a = y[1:]
    b = a[0]
    b[1] = np.exp(x[0, 0])  # y[1, 1] changes
    return np.sum(y * y) + np.sum(a)


def loop_writes_rows_of_a_buffer(x):
    out = np.zeros_like(x)
    for i in range(3):
        row = out[i]
        row += np.tanh(x[i]) * (i + 1)
        row[0] = row[1] * x[i, 3]
    return np.sum(out * out)


def advanced_index_is_a_copy(x):
    y = x * 1.0
    r = y[[0, 2]]  # a copy in numpy: writing into it leaves y alone
    r[0] = 0.0
    return np.sum(y * y) + np.sum(r)


def write_into_reshape(x):
    y = x * 1.0
    r = y.reshape(12)  # a view or a copy, by memory layout
    r[0] = 5.0
    return np.sum(y * y)


def write_through_unknown_index(x, k):
    y = x * 1.0
    r = y[k]  # an int (a view) or an array (a copy): not known
    r[0] = 5.0
    return np.sum(y * y)


def write_param_through_view(x):
    r = x[1]
    r[0] = 2.0  # numpy changes the caller's x[1, 0]
    return np.sum(x * x)


def keep_running_mean(x, bn_param):
    """CS231n's batchnorm keeps its running mean in the caller's dict: Python writes it there."""
    running = bn_param.get("running_mean", np.zeros(x.shape[1]))
    bn_param["running_mean"] = 0.9 * running + 0.1 * x.mean(axis=0)
    return np.sum((x - x.mean(axis=0)) ** 2)
