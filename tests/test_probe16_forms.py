"""Refusals of issue 23's list lifted in the session of 2026-12-05 (fourth), each checked in
every mode against central differences and the plain call (functions as values have their own
module, tests/test_closure_values.py, and fuzzer, tests/test_fuzz_closures.py):

1. a hand-rolled `parameters()` as a comprehension over an object built in the function,
   with a condition on the values -- `[v for k, v in vars(self).items() if isinstance(v,
   np.ndarray)]`, `{k: v for k, v in vars(self).items() if ...}`, `[p for p in
   self.__dict__.values() if ...]`: refused before ("`Net` has no derivative rule": the
   object was run as written; the `for` loop form was followed), now the comprehension walks
   the display of the object's attributes in the order Python keeps them, its condition as
   written.
"""

from __future__ import annotations

import numpy as np

from tests.test_probe14_forms import _check


class Net:
    def __init__(self, W1, W2):
        self.W1 = W1
        self.name = "net"
        self.W2 = W2

    def params(self):
        return [v for k, v in vars(self).items() if isinstance(v, np.ndarray)]

    def named(self):
        return {k: v for k, v in vars(self).items() if isinstance(v, np.ndarray)}

    def values(self):
        return [p for p in self.__dict__.values() if isinstance(p, np.ndarray)]

    def forward(self, x):
        return np.tanh(x @ self.W1) @ self.W2


def l2_by_params(W1, W2, x):
    net = Net(W1, W2)
    reg = sum(np.sum(p ** 2) for p in net.params())
    return np.sum(net.forward(x)) + 0.01 * reg


def l2_by_named(W1, W2, x):
    net = Net(W1, W2)
    reg = sum(np.sum(v ** 2) for v in net.named().values())
    return np.sum(net.forward(x)) + 0.01 * reg


def l2_by_values(W1, W2, x):
    net = Net(W1, W2)
    return np.sum(net.forward(x)) + 0.01 * sum(np.sum(v * v) for v in net.values())


def _args():
    r = np.random.default_rng(16)
    return r.standard_normal((3, 4)), r.standard_normal((4, 2)), r.standard_normal((5, 3))


def test_parameters_by_a_comprehension_over_vars():
    for fn in (l2_by_params, l2_by_named, l2_by_values):
        _check(fn, _args(), wrt=(0, 1))
