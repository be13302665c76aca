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


class _DenseSetattr:
    def set(self, W):
        setattr(self, "W", W)   # (a dynamic attribute: srcad does not follow the object)

    def forward(self, X):
        return X @ self.W


def _setattr_then_add(W, X):
    net = _Net()
    d = _DenseSetattr()
    d.set(W)
    net.add(d)
    return np.sum(np.tanh(net.run(X)) ** 2)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_weights_reaching_the_output_through_an_object_chain(mode):
    """`d.set(W); net.add(d); net.run(X)` where srcad does not follow the objects (here a
    dynamic attribute): the source-mode gradient was silently zero, as `net.add(d)` was not
    seen to make `net` depend on `d`. Now refused at the user's line (a call with no rule
    that may keep what it is given makes its object depend on it: analysis/refusals.py)."""
    args = (R.standard_normal((3, 4)), R.standard_normal((5, 3)))
    with pytest.raises(srcad.SrcadError, match=r"(?s)may store it in or change `d`.*"
                       r"test_probe8_forms.py"):
        srcad.grad(_setattr_then_add, wrt=0, mode=mode)(*args)


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", [_set_then_add, _set_then_add_tuple])
def test_registry_entry_built_in_init(fn, mode):
    """`self.func = _ACTS[name]()` in the __init__ of a layer built in the function (the
    activation-classes style): the key is the constructor's string argument, known where the
    object is built; was 'calling `.func` of a built object' (and, with the weights reaching
    the net by `d.set(W)`, a silently zero gradient)."""
    _check(fn, (R.standard_normal((3, 4)), R.standard_normal((5, 3))), mode=mode)


# ---- a helper returning a tuple from each branch, unpacked by its caller ------------------

def _pick_else(x, mode):
    if mode == "a":
        return x * 2, x + 1
    else:
        return x, x * 3


def _pick_raise(x, mode):
    if mode == "a":
        return x * 2, np.sin(x)
    elif mode == "b":
        return np.cos(x), x * 3
    raise ValueError(mode)


def _pick_loop(x, n):
    for i in range(n):
        if np.sum(x) > i:
            return x * i, np.tanh(x)
    return x, x


def _padding(k, mode):
    if mode == "valid":
        return (0, 0), (0, 0)
    return (k // 2, (k - 1) // 2), (k // 2, k // 2)


def _unpack_branches(x, mode="b"):
    a, b = _pick_else(x, mode)
    c, d = _pick_raise(x, mode)
    e, f = _pick_loop(x, 3)
    (ph, pw) = _padding(3, "same")
    return np.sum(a * b + c * d + e * f) + np.sum(np.pad(x, (ph, pw)) ** 2)


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("arg", ["a", "b"])
def test_unpacking_a_helper_that_returns_in_branches(arg, mode):
    """`a, b = helper(x)` where the helper returns a tuple from each branch (if/else, a raise
    after an elif, a return in a loop, an early return before the last): was 'unpacking the
    result of a function that does not return a tuple' (desugar.py made its returns one
    result name; now one name per item, where every return gives an n-tuple and the end is
    never reached)."""
    x = np.linspace(-0.7, 0.9, 6).reshape(2, 3)
    _check(_unpack_branches, (x, arg), mode=mode)


def _maybe_pair(x, flag):
    if flag:
        return x, x * 2


def _falls_off_end(x):
    r = _maybe_pair(x, False)
    if r is None:
        return np.sum(x ** 2)
    return np.sum(r[0] * r[1])


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_helper_that_may_fall_off_its_end_still_returns_none(mode):
    """The end of `_maybe_pair` is reachable (Python returns None there): it keeps one result
    name, so `r is None` is what Python says."""
    _check(_falls_off_end, (np.linspace(-0.7, 0.9, 6),), mode=mode)


# ---- a Keras-like container built in the function, as activation-class libraries write it --

class _SquareLoss:
    def loss(self, y, p):
        return 0.5 * (y - p) ** 2


class _Layer:
    def set_input_shape(self, shape):
        self.input_shape = shape

    def layer_name(self):
        return self.__class__.__name__


class _Linear(_Layer):
    def __init__(self, n_units):
        self.n_units = n_units
        self.W = None

    def initialize(self, W):
        self.W = W

    def output_shape(self):
        return (self.n_units,)

    def forward_pass(self, X):
        return X.dot(self.W)


class _ActLayer(_Layer):
    def __init__(self, name):
        self.func = _ACTS[name]()

    def layer_name(self):
        return "Activation (%s)" % self.func.__class__.__name__

    def output_shape(self):
        return self.input_shape

    def forward_pass(self, X):
        return self.func(X)


class _Model:
    def __init__(self, loss):
        self.layers = []
        self.loss_function = loss()

    def add(self, layer):
        if self.layers:
            layer.set_input_shape(shape=self.layers[-1].output_shape())
        self.layers.append(layer)

    def summary(self):
        return ", ".join(layer.layer_name() for layer in self.layers)

    def test_on_batch(self, X, y):
        out = X
        for layer in self.layers:
            out = layer.forward_pass(out)
        return np.mean(self.loss_function.loss(y, out)), len(self.summary())


def _keras_like(W1, W2, X, y):
    model = _Model(loss=_SquareLoss)
    first = _Linear(4)
    first.initialize(W1)
    model.add(first)
    model.add(_ActLayer("tanh"))
    second = _Linear(2)
    second.initialize(W2)
    model.add(second)
    loss, _ = model.test_on_batch(X, y)
    return loss


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_keras_like_model_with_a_loss_class_argument(mode):
    """`Model(loss=SquareLoss)` building `self.loss_function = loss()`, `if self.layers:` in
    `add`, `self.__class__.__name__` in `layer_name`: each was a use srcad did not follow,
    so the object was left as written and `first.initialize(W1)` refused (before the
    refusals fix: a silently zero gradient)."""
    args = (R.standard_normal((3, 4)), R.standard_normal((4, 2)), R.standard_normal((5, 3)),
            R.standard_normal((5, 2)))
    _check(_keras_like, args, wrt=(0, 1), mode=mode)
