"""Transforms called inside differentiated functions, for tests/test_composed.py."""

import numpy as np

import srcad


def energy(x):
    return np.sum(np.sin(x) * x ** 2)


grad_energy = srcad.grad(energy)


def penalty_through_a_global_grad(x):
    g = grad_energy(x)
    return np.sum(g * g)


def grad_written_in_place(x):
    return np.sum(srcad.grad(energy)(x) * x)


def grad_of_a_lambda(x):
    g = srcad.grad(lambda y: np.sum(np.tanh(y) * y))(x)
    return np.sum(g ** 2)


def pair_loss(w, b, x):
    return np.sum(np.tanh(x * w + b) ** 2)


def grad_with_wrt(w, b, x):
    gw = srcad.grad(pair_loss, wrt=1)(w, b, x)
    return np.sum(gw * gw) + np.sum(w * w)


def per_example_norms(w, xs):
    total = 0.0
    for i in range(xs.shape[0]):
        g = srcad.grad(pair_loss)(w, 0.5, xs[i])
        total = total + np.sum(g * g)
    return total


GRADS = [grad_energy, srcad.grad(lambda x: np.sum(np.cos(x) * x))]  # noqa: E731


def grad_taken_from_a_list(x):
    return np.sum(GRADS[0](x) ** 2) + np.sum(GRADS[1](x) * x)
