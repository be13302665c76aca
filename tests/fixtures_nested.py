"""Programs for tests/test_nested_transforms.py: transforms called inside differentiated
functions, as a JAX user writes them. Each `*_by_hand` twin is the same function with the
inner derivative written out, the reference the nested version must agree with."""

from __future__ import annotations

import numpy as np

import srcad

A = np.array([0.3, -1.2, 0.8])
B = np.array([1.1, 0.4, -0.6])
W0 = np.array([[0.5, -0.3, 0.2], [0.1, 0.7, -0.4]])


# -- inner functions of containers ---------------------------------------------------------

def pair_loss(p):
    return np.sum(np.sin(p[0]) * p[1])


def list_loss(xs):
    return np.sum(xs[0] * xs[1]) + np.sum(np.tanh(xs[2]) ** 2)


def dict_loss(d):
    return np.sum(np.tanh(d["W"] @ d["x"])) + np.sum(d["b"] ** 2)


def nested_loss(t):
    return np.sum(t["a"][0] * t["a"][1][0]) + np.sum(np.sin(t["b"]))


# -- the inner derivative by hand -----------------------------------------------------------

def _pair_grad(x, y):
    return np.cos(x) * y, np.sin(x)


def _list_grad(x, y, z):
    return y, x, 2.0 * np.tanh(z) * (1.0 - np.tanh(z) ** 2)


def _dict_grad(W, x, b):
    s = 1.0 - np.tanh(W @ x) ** 2
    return np.outer(s, x), W.T @ s, 2.0 * b


# -- an inner grad of a tuple, list, dict and nested argument ---------------------------------

def grad_of_tuple(x, y):
    g = srcad.grad(pair_loss)((x, y))
    return np.sum(g[0] ** 2) + np.sum(np.cos(g[1]) * x)


def grad_of_tuple_by_hand(x, y):
    g = _pair_grad(x, y)
    return np.sum(g[0] ** 2) + np.sum(np.cos(g[1]) * x)


def grad_of_list(x, y):
    g = srcad.grad(list_loss)([x, y, x * y])
    return np.sum(g[0] * g[2]) + np.sum(np.sin(g[1]))


def grad_of_list_by_hand(x, y):
    g = _list_grad(x, y, x * y)
    return np.sum(g[0] * g[2]) + np.sum(np.sin(g[1]))


def grad_of_dict(W, x):
    g = srcad.grad(dict_loss)({"W": W, "x": x, "b": x[:2]})
    return np.sum(g["W"] ** 2) + np.sum(g["x"] * x) + np.sum(np.tanh(g["b"]))


def grad_of_dict_by_hand(W, x):
    gW, gx, gb = _dict_grad(W, x, x[:2])
    return np.sum(gW ** 2) + np.sum(gx * x) + np.sum(np.tanh(gb))


def grad_of_nested(x, y):
    g = srcad.grad(nested_loss)({"a": [x, (y,)], "b": x * y})
    return np.sum(g["a"][0] * g["a"][1][0]) + np.sum(g["b"] ** 2)


def grad_of_nested_by_hand(x, y):
    return np.sum(y * x) + np.sum(np.cos(x * y) ** 2)


def grad_of_tuple_arg(p):
    """The outer gradient is w.r.t. the tuple itself."""
    g = srcad.grad(pair_loss)(p)
    return np.sum(g[0] * g[1])


def value_and_grad_of_dict(W, x):
    v, g = srcad.value_and_grad(dict_loss)({"W": W, "x": x, "b": x[:2]})
    return v * np.sum(g["x"]) + np.sum(g["W"] ** 2)


def value_and_grad_of_dict_by_hand(W, x):
    v = dict_loss({"W": W, "x": x, "b": x[:2]})
    gW, gx, _ = _dict_grad(W, x, x[:2])
    return v * np.sum(gx) + np.sum(gW ** 2)


def pair_out(p):
    return np.sin(p[0]) * p[1]


def vjp_of_tuple(x, y):
    out, pullback = srcad.vjp(pair_out, (x, y))
    (g,) = pullback(np.cos(out))
    return np.sum(g[0] ** 2) + np.sum(g[1] * x)


def vjp_of_tuple_by_hand(x, y):
    out = np.sin(x) * y
    c = np.cos(out)
    return np.sum((c * np.cos(x) * y) ** 2) + np.sum(c * np.sin(x) * x)


def jvp_inside(x, y):
    out, t = srcad.jvp(pair_out, ((x, y),), ((y, x),))
    return np.sum(out * t)


def jvp_inside_by_hand(x, y):
    return np.sum(np.sin(x) * y * (np.cos(x) * y * y + np.sin(x) * x))


# -- scalar programs for third derivatives: grad(grad(.)) over an inner grad ------------------

def scalar_tuple(s):
    return grad_of_tuple(s * A, np.sin(s) * B)


def scalar_dict(s):
    return grad_of_dict(s * W0, np.cos(s) * A)


def scalar_nested(s):
    return grad_of_nested(s * A, s * s * B)


# -- per-example gradients, transforms held in containers and globals --------------------------

def example_loss(w, x):
    return np.tanh(np.dot(w, x)) ** 2


def per_example_norms(w, xs):
    grads = [srcad.grad(example_loss)(w, x) for x in xs]
    return sum(np.sum(g ** 2) for g in grads)


def per_example_norms_by_hand(w, xs):
    total = 0.0
    for x in xs:
        t = np.tanh(np.dot(w, x))
        total = total + np.sum((2.0 * t * (1.0 - t ** 2) * x) ** 2)
    return total


def per_example_loop(w, xs):
    total = 0.0
    for i in range(len(xs)):
        g = srcad.grad(example_loss)(w, xs[i])
        total = total + np.sum(g * xs[i])
    return total


GRAD_EXAMPLE = srcad.grad(example_loss)
TRANSFORMS = {"grad": srcad.grad(example_loss), "vg": srcad.value_and_grad(example_loss)}


def held_in_global(w, x):
    return np.sum(GRAD_EXAMPLE(w, x) ** 2)


def held_in_dict(w, x):
    v, g = TRANSFORMS["vg"](w, x)
    return v * np.sum(TRANSFORMS["grad"](w, x) * g)


def held_in_dict_by_hand(w, x):
    t = np.tanh(np.dot(w, x))
    g = 2.0 * t * (1.0 - t ** 2) * x
    return t ** 2 * np.sum(g * g)


def two_out(x, y):
    return np.tanh(x * y) + x


def vjp_of_two(x, y):
    out, pullback = srcad.vjp(two_out, x, y)
    gx, gy = pullback(out)
    return np.sum(gx * gy)


def vjp_of_two_by_hand(x, y):
    out = np.tanh(x * y) + x
    s = out * (1.0 - np.tanh(x * y) ** 2)
    return np.sum((s * y + out) * (s * x))


def scalar_vjp(s):
    return vjp_of_tuple(s * A, np.cos(s) * B) + jvp_inside(np.sin(s) * A, s * B)


def two_outputs(x, y):
    return np.sin(x) * y, x * x


def jvp_of_tuple_output(x, y):
    out, t = srcad.jvp(two_outputs, (x, y), (y, np.ones_like(x)))
    return np.sum(out[0] * t[0]) + np.sum(t[1] ** 2)


def jvp_of_tuple_output_by_hand(x, y):
    t0, t1 = np.cos(x) * y * y + np.sin(x), 2.0 * x * y
    return np.sum(np.sin(x) * y * t0) + np.sum(t1 ** 2)


def vjp_of_dict(x, y):
    out, pullback = srcad.vjp(dict_loss, {"W": np.outer(y, x), "x": x, "b": y})
    (g,) = pullback(2.0)
    return out + np.sum(g["W"] * np.outer(y, x)) + np.sum(g["x"] * g["b"])


def vjp_of_dict_by_hand(x, y):
    gW, gx, gb = _dict_grad(np.outer(y, x), x, y)
    out = dict_loss({"W": np.outer(y, x), "x": x, "b": y})
    return out + np.sum(2.0 * gW * np.outer(y, x)) + np.sum(4.0 * gx * gb)


def jvp_of_numpy_in_a_loop(w, xs):
    total = 0.0
    for x in xs:
        out, t = srcad.jvp(np.tanh, (w * x,), (x,))
        total = total + np.sum(t * out)
    return total


def jvp_of_numpy_in_a_loop_by_hand(w, xs):
    total = 0.0
    for x in xs:
        out = np.tanh(w * x)
        total = total + np.sum((1.0 - out ** 2) * x * out)
    return total


def pullback_returned(x, y):
    out, pullback = srcad.vjp(pair_out, (x, y))
    return np.sum(out), pullback  # (the pullback escapes: refused at the srcad.vjp line)
