"""Classes of failure the third wild-repositories probe found (tests/corpus_probe/
wild_repos3.py), one focused test each, against central differences; each failed before its
fix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(8)


def _check(fn, args, wrt=0, mode="source", tol=1e-6):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, got = srcad.value_and_grad(fn, wrt=wrt, mode=mode)(*args)
    assert np.array_equal(np.asarray(out), np.asarray(fn(*args)))
    want = numerical_grad(fn, args, wrt=wrt)
    got, want = (got, want) if isinstance(wrt, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert rel_error(g, w) < tol


# ---- weights handed to an object by a method, the object then held by another ------------

class _Tanh:
    def __call__(self, x):
        return np.tanh(x)


_ACTS = {"tanh": _Tanh}


class _Activation:
    def __init__(self, name):
        self.func = _ACTS[name]()

    def forward(self, X):
        return self.func(X)


class _Dense:
    def set(self, W):
        self.W = W

    def forward(self, X):
        return X @ self.W


class _Net:
    def __init__(self):
        self.layers = []

    def add(self, layer):
        self.layers.append(layer)

    def run(self, X):
        for layer in self.layers:
            X = layer.forward(X)
        return X


def _set_then_add(W, X):
    net = _Net()
    d = _Dense()
    d.set(W)
    net.add(d)
    net.add(_Activation("tanh"))
    return np.sum(net.run(X) ** 2)


def _set_then_add_tuple(W, X):
    net = _Net()
    d = _Dense()
    d.set(W)
    net.add(d)
    net.add(_Activation("tanh"))
    loss, acc = np.sum(net.run(X) ** 2), 0
    return loss


class _Box:
    def put(self, v):
        self.v = v


def _library_holder(W, X):
    box = _Box()
    box.put(W)
    held = [box]
    return np.sum(held[0].v * X[:, :1].T @ X[:, :1])


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", [_set_then_add, _set_then_add_tuple])
def test_weights_reaching_the_output_through_an_object_chain(fn, mode):
    """`d.set(W); net.add(d); net.run(X)` where srcad does not follow the objects (a layer
    made from a registry entry in its __init__): the source-mode gradient was silently zero,
    as `net.add(d)` was not seen to make `net` depend on `d`. Now: the right gradient or a
    SrcadError at the user's line, never a zero."""
    args = (R.standard_normal((3, 4)), R.standard_normal((5, 3)))
    try:
        _check(fn, args, mode=mode)
    except srcad.SrcadError as e:
        assert "test_probe8_forms.py" in str(e)
