"""State kept on objects between calls, read and stored again in one call (a BatchNorm's
running statistics): a read that comes before the call stores an argument-dependent value
under that name reads what an earlier call left there -- a constant of this call, as in
Python -- and is differentiated; a read after such a store (a second forward pass in the
same call, or the next trip of a loop) would lose the gradient and is refused."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import srcad
from srcad.errors import NoRuleError
from srcad.testing import numerical_grad, rel_error


class BatchNorm:
    def __init__(self, n, momentum=0.9):
        self.gamma, self.beta = np.ones(n), np.zeros(n)
        self.running_mean, self.running_var = np.zeros(n), np.ones(n)
        self.momentum = momentum

    def forward(self, x, training=True):
        if training:
            mu, var = x.mean(axis=0), x.var(axis=0)
            self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mu
            self.running_var = self.momentum * self.running_var + (1 - self.momentum) * var
        else:
            mu, var = self.running_mean, self.running_var
        xhat = (x - mu) / np.sqrt(var + 1e-5)
        return self.gamma * xhat + self.beta


BN = BatchNorm(3)


def one_pass(x):
    return np.sum(np.tanh(BN.forward(x)) ** 2)


def train_then_eval(x):  # the eval pass reads the statistics this call just stored
    y = BN.forward(x)
    return np.sum(BN.forward(x, training=False) * y)


def loop_of_passes(xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(BN.forward(x) * x)
    return total


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_running_statistics_read_then_stored_again(mode):
    r = np.random.default_rng(0)
    x = r.normal(size=(5, 3))
    BN.running_mean, BN.running_var = r.normal(size=3), np.ones(3) + r.random(3)
    start = copy.deepcopy((BN.running_mean, BN.running_var))
    python = copy.deepcopy(BN)
    python.forward(x)
    value, g = srcad.value_and_grad(one_pass, mode=mode)(x)
    # the object holds what Python leaves there: the statistics blended once
    np.testing.assert_allclose(BN.running_mean, python.running_mean, rtol=1e-15)
    np.testing.assert_allclose(BN.running_var, python.running_var, rtol=1e-15)
    BN.running_mean, BN.running_var = start
    assert value == one_pass(x)
    BN.running_mean, BN.running_var = start
    want = numerical_grad(one_pass, (x,))
    assert rel_error(g, want) < 1e-6


def _reset():
    BN.running_mean, BN.running_var = np.zeros(3), np.ones(3)


@pytest.mark.parametrize("fn, args", [
    (train_then_eval, (np.ones((4, 3)) + np.arange(12.0).reshape(4, 3) ** 1.5,)),
    (loop_of_passes, (list(np.random.default_rng(3).normal(size=(2, 4, 3))),)),
])
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_statistics_read_after_this_call_stored_them(fn, args, mode):
    """A second pass in the same call (eval after train, the next trip of a loop) reads the
    statistics the first stored: carried by a local in the function (attrstate.py), so the
    gradient flows through them too -- the whole derivative of calling the function."""
    _reset()
    value, g = srcad.value_and_grad(fn, mode=mode)(*copy.deepcopy(args))
    after = (BN.running_mean.copy(), BN.running_var.copy())
    _reset()
    assert value == fn(*copy.deepcopy(args))
    np.testing.assert_array_equal(after[0], BN.running_mean)
    np.testing.assert_array_equal(after[1], BN.running_var)

    def fresh(*a):
        _reset()
        return fn(*a)

    want = numerical_grad(fresh, copy.deepcopy(args))
    got = np.asarray(g)
    assert rel_error(got, np.asarray(want)) < 1e-6


def test_a_measured_memory_budget_leaves_the_state_and_the_generators_alone():
    """memory_budget measures candidate programs by running them on the caller's arguments:
    they stored the statistics into the object once per candidate (blended four times where
    Python blends once), and drew from numpy's global generator."""
    r = np.random.default_rng(1)
    x = r.normal(size=(5, 3))
    _reset()
    python = copy.deepcopy(BN)
    python.forward(x)
    np.random.seed(7)
    third = [np.random.random() for _ in range(3)][2]  # (what follows one call's two draws)
    np.random.seed(7)

    def drawing(x):
        return np.sum(BN.forward(x) * np.random.random()) + np.random.random() * 0.0

    srcad.grad(drawing, memory_budget=1)(x)
    np.testing.assert_array_equal(BN.running_mean, python.running_mean)
    np.testing.assert_array_equal(BN.running_var, python.running_var)
    assert np.random.random() == third
