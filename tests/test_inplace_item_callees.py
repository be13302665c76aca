"""A helper that writes into its argument in place, given an item of a list the loop carries
(session of 2026-12-07) -- scikit-learn's multi-layer perceptron style:

    def inplace_relu(X):
        np.maximum(X, 0, out=X)

    for i in range(self.n_layers_ - 1):
        activations[i + 1] = activations[i] @ coefs[i]
        activations[i + 1] += intercepts[i]
        if (i + 1) != (self.n_layers_ - 1):
            hidden_activation(activations[i + 1])
    output_activation(activations[i + 1])

Before: refused ("writes into its argument `X` in place"), because srcad carried such a write
back to an item only for a constant index at the function's top level; and a method whose
loop read `self.n_layers_` spliced into its caller left `self.n_layers_` in the generated code
(a NameError when it ran). Now the written array is stored back into its slot for a computed
index too (frontend/inline.py `item_of_a_name`), and names bound to another read of the same
item (`a = acts[1]` before `fill(acts[1])`) show the write, as Python's one array does -- that
gave a wrong value silently even for a constant index; a read of the item put in another
container first is refused. The callee's `self` is spelt as its caller's constant."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(8)
X = RNG.standard_normal((5, 3))
Y = (RNG.random((5, 1)) > 0.5).astype(float)
C0 = RNG.standard_normal((3, 4)) * 0.5
C1 = RNG.standard_normal((4, 1)) * 0.5


def inplace_identity(X):
    pass


def inplace_tanh(X):
    np.tanh(X, out=X)


def inplace_relu(X):
    np.maximum(X, 0, out=X)


def inplace_logistic(X):
    X *= -1
    np.exp(X, out=X)
    X += 1
    np.reciprocal(X, out=X)


ACTIVATIONS = {"identity": inplace_identity, "tanh": inplace_tanh, "relu": inplace_relu,
               "logistic": inplace_logistic}


class Perceptron:
    def __init__(self, activation, out_activation):
        self.activation, self.out_activation_ = activation, out_activation
        self.n_layers_ = 3

    def _forward_pass(self, activations, coefs, intercepts):
        hidden_activation = ACTIVATIONS[self.activation]
        for i in range(self.n_layers_ - 1):
            activations[i + 1] = activations[i] @ coefs[i]
            activations[i + 1] += intercepts[i]
            if (i + 1) != (self.n_layers_ - 1):
                hidden_activation(activations[i + 1])
        output_activation = ACTIVATIONS[self.out_activation_]
        output_activation(activations[i + 1])
        return activations


CLASSIFIER = Perceptron("tanh", "logistic")
REGRESSOR = Perceptron("relu", "identity")


def log_loss(c0, c1, X, y):
    activations = [X, None, None]
    activations = CLASSIFIER._forward_pass(activations, [c0, c1],
                                           [np.full(4, 0.1), np.zeros(1)])
    p = activations[-1]
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def squared_loss(c0, c1, X, y):
    activations = [X, None, None]
    activations = REGRESSOR._forward_pass(activations, [c0, c1],
                                          [np.full(4, 0.1), np.zeros(1)])
    return np.mean((activations[-1] - y) ** 2) / 2


def read_before_a_write_in_a_loop(W, x):
    acts = [x, None]
    out = 0.0
    for i in range(1):
        acts[i + 1] = x @ W
        a = acts[i + 1]
        inplace_tanh(acts[i + 1])
        out = a * 2.0
    return np.sum(out)


def read_before_a_write_by_a_constant_index(W, x):
    acts = [x, None]
    acts[1] = x @ W
    a = acts[1]
    inplace_tanh(acts[1])
    return np.sum(a * 2.0)


MODES = {"source": {}, "fuse": {"fuse": True}, "tape": {"mode": "tape"}}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [log_loss, squared_loss], ids=lambda f: f.__name__)
def test_in_place_activations_of_a_perceptron(fn, mode):
    value, (g0, g1) = srcad.value_and_grad(fn, wrt=(0, 1), **MODES[mode])(C0, C1, X, Y)
    assert value == pytest.approx(fn(C0, C1, X, Y), rel=1e-12)
    e0, e1 = numerical_grad(fn, (C0, C1, X, Y), wrt=(0, 1), h=1e-6)
    np.testing.assert_allclose(g0, e0, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(g1, e1, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [read_before_a_write_in_a_loop,
                                read_before_a_write_by_a_constant_index],
                         ids=lambda f: f.__name__)
def test_a_name_read_before_the_write_shows_it(fn, mode):
    W = RNG.standard_normal((3, 4))
    value, g = srcad.value_and_grad(fn, **MODES[mode])(W, X)
    assert value == pytest.approx(fn(W, X), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (W, X), h=1e-6), rtol=1e-6, atol=1e-9)


def read_into_another_list_first(W, x):
    acts = [x, None]
    other = [None]
    for i in range(1):
        acts[i + 1] = x @ W
        other[0] = acts[i + 1]
        inplace_tanh(acts[i + 1])
    return np.sum(other[0] * 2.0)


@pytest.mark.parametrize("fuse", [False, True])
def test_a_read_put_in_another_container_first_is_refused(fuse):
    with pytest.raises(srcad.SrcadError, match="read before and put in a container") as e:
        srcad.grad(read_into_another_list_first, fuse=fuse)(RNG.standard_normal((3, 4)), X)
    assert e.value.lineno == read_into_another_list_first.__code__.co_firstlineno + 6


# Found checking the above (2026-12-07; on 8cb70f2 the first two gave a wrong gradient,
# silently): another read of the same item -- by the same index computed twice, or `1 + i`
# beside `i + 1` -- and an item of a display read by a computed index in a loop.
def two_reads_then_a_write(W, x):
    acts = [x, None]
    out = 0.0
    for i in range(1):
        acts[i + 1] = x @ W
        a = acts[i + 1]
        b = acts[i + 1]
        inplace_tanh(acts[i + 1])
        out = a * 2.0 + b
    return np.sum(out)


def read_before_the_slot_was_stored(W, x):
    acts = [x, x @ W * 0.5]
    out = 0.0
    for i in range(1):
        old = acts[i + 1]  # (the array the slot held before: not the one written)
        acts[i + 1] = x @ W
        inplace_tanh(acts[i + 1])
        out = old * 2.0 + acts[i + 1]
    return np.sum(out)


def by_the_hints_route(W, x):
    acts = [x @ W, x @ W * 2.0, None]
    out = 0.0
    for i in range(1):
        b = acts[i]
        v = acts[i + 1]
        inplace_tanh(v)
        acts[i + 1] = v
        out = b * 2.0 + acts[i + 1]
    return np.sum(out)


def scale_in_place(X):
    X *= 1.5


def a_name_read_before_an_augmented_write(W, x):
    # (found by the widened container-writes fuzzer, seed 2017: the helper's `X *= 1.5` is
    # carried by another route than `np.tanh(X, out=X)`, which left `a` the old array)
    acts = [x * (k + 1.0) for k in range(3)]
    for i in range(2):
        acts[i + 1] = np.sin(acts[i]) * 0.5 + (x @ W)[:, :3]
        a = acts[i + 1]
        scale_in_place(acts[i + 1])
    return np.sum(a * a) + np.sum(np.tanh(acts[-1] + acts[0]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [two_reads_then_a_write, read_before_the_slot_was_stored,
                                by_the_hints_route, a_name_read_before_an_augmented_write],
                         ids=lambda f: f.__name__)
def test_reads_of_the_written_item(fn, mode):
    W = RNG.standard_normal((3, 4))
    value, g = srcad.value_and_grad(fn, **MODES[mode])(W, X[:2])
    assert value == pytest.approx(fn(W, X[:2]), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (W, X[:2]), h=1e-6), rtol=1e-6,
                               atol=1e-9)


def another_spelling_of_the_index(W, x):
    acts = [x, None, None]
    out = 0.0
    for i in range(1):
        acts[i + 1] = x @ W
        a = acts[1 + i]
        inplace_tanh(acts[i + 1])
        out = a * 2.0
    return np.sum(out)


def an_item_of_a_display_by_a_computed_index(W, x):
    acts = [x @ W, x @ W * 2.0, None]
    out = 0.0
    for i in range(1):
        b = acts[i]
        inplace_tanh(acts[i + 1])
        out = b * 2.0 + acts[i + 1]
    return np.sum(out)


@pytest.mark.parametrize("fn,phrase", [
    (another_spelling_of_the_index, "by another index that may be the same one"),
    (an_item_of_a_display_by_a_computed_index, "writes in place into an item"),
], ids=["another_spelling", "display_item"])
def test_uncertain_item_writes_are_refused(fn, phrase):
    with pytest.raises(srcad.SrcadError, match=phrase):
        srcad.grad(fn)(RNG.standard_normal((3, 4)), X[:2])
