"""A method that makes an array, keeps it on its object and then fills it in place --
`self.states = np.zeros((B, T + 1, H))`, then `self.states[:, t] = self.activation(...)` in
the time loop -- the way from-scratch RNN, CNN (im2col) and course layers keep what their
hand-written backward reads. Python's object holds that one array and shows every write.
srcad carries such an attribute by a local (frontend/attrstate.py), whose writes srcad's
code may make into a copy, so the object would have kept the zeros: refused before the
session of 2026-12-07, thirteenth (ML-From-Scratch's RNN layer among them). Now the object is
given the written array again after each write, so it holds what Python's holds; where
another holder could miss the write -- a second attribute or the caller holding the array,
an array the object kept from an earlier call -- it is still refused. Each program runs in
every mode, twice, against plain Python: value, gradient (central differences) and the
object's arrays after the call."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = [{}, {"fuse": True}, {"mode": "tape"}]
RNG = np.random.default_rng(11)


class TanH:
    def __call__(self, x):
        return 2 / (1 + np.exp(-2 * x)) - 1


class Softmax:
    def __call__(self, x):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)


class RNN:
    """Batch-first, states kept on the layer (a time loop writing three arrays)."""

    def __init__(self, n_units, input_dim):
        self.n_units = n_units
        self.activation = TanH()
        limit = 1 / math.sqrt(input_dim)
        self.U = RNG.uniform(-limit, limit, (n_units, input_dim))
        limit = 1 / math.sqrt(n_units)
        self.V = RNG.uniform(-limit, limit, (input_dim, n_units))
        self.W = RNG.uniform(-limit, limit, (n_units, n_units))

    def forward_pass(self, X):
        self.layer_input = X
        batch_size, timesteps, input_dim = X.shape
        self.state_input = np.zeros((batch_size, timesteps, self.n_units))
        self.states = np.zeros((batch_size, timesteps + 1, self.n_units))
        self.outputs = np.zeros((batch_size, timesteps, input_dim))
        self.states[:, -1] = np.zeros((batch_size, self.n_units))
        for t in range(timesteps):
            self.state_input[:, t] = X[:, t].dot(self.U.T) + self.states[:, t - 1].dot(self.W.T)
            self.states[:, t] = self.activation(self.state_input[:, t])
            self.outputs[:, t] = self.states[:, t].dot(self.V.T)
        return self.outputs


class Conv1D:
    """im2col into an array kept on the layer."""

    def __init__(self, k):
        self.w = RNG.standard_normal(k) * 0.5

    def forward(self, x):
        k = self.w.shape[0]
        n = x.shape[0] - k + 1
        self.cols = np.zeros((n, k))
        for i in range(n):
            self.cols[i, :] = x[i:i + k]
        self.out = self.cols @ self.w
        return self.out


class Cell:
    def __init__(self):
        self.W = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4]])
        self.cfg = {"mode": "eval"}
        self.h = None

    def helper(self):
        return np.sum(self.h ** 2)

    def rows_then_read(self, x):  # (a method reading the attribute between the writes)
        self.h = np.zeros((2, 3))
        total = 0.0
        for t in range(2):
            self.h[t] = np.tanh(self.W[t] * x)
            total = total + self.helper()
        return total

    def augmented(self, x):
        self.h = np.ones(3)
        self.h[1] += x[1] * x[2]
        self.h *= 2.0
        return np.sum(self.h ** 2)

    def local_name_too(self, x):  # (Python's `h` is the object's array: it shows the write)
        h = np.zeros(3)
        self.h = h
        self.h[1] = x[1] ** 2
        return np.sum(h * x)

    def from_a_product(self, x):
        self.h = x * 2.0
        self.h[1] = 0.0
        return np.sum(self.h * x)

    def two_attributes(self, x):  # (`self.b` holds the array too)
        self.h = np.zeros(3)
        self.b = self.h
        self.h[0] = x[0] * 2
        return np.sum(self.b * x)

    def given(self, h, x):  # (the caller holds the array)
        self.h = h
        self.h[0] = x[0]
        return np.sum(self.h * x)


NET_RNN = RNN(5, 3)
CONV = Conv1D(2)
CELL = Cell()
OTHER = Cell()
X_SEQ = RNG.standard_normal((2, 4, 3))


def rnn_loss(U, W, V, X):
    NET_RNN.U, NET_RNN.W, NET_RNN.V = U, W, V
    out = NET_RNN.forward_pass(X)
    return np.sum(Softmax()(out) * np.arange(3))


def rnn_then_conv(U, W, V, X, flag=True):
    if flag:
        for layer in (CELL, OTHER):
            layer.cfg["mode"] = "train"
    NET_RNN.U, NET_RNN.W, NET_RNN.V = U, W, V
    out = NET_RNN.forward_pass(X)
    y = CONV.forward(out.sum(axis=(0, 2)))
    return np.sum(y ** 2) + np.sum(NET_RNN.states[:, 1] * 0.5)


def rows_then_read(x, flag=True):
    if flag:
        for layer in (CELL, OTHER):
            layer.cfg["mode"] = "train"
    return CELL.rows_then_read(x)


def augmented(x, flag=True):
    if flag:
        for layer in (CELL, OTHER):
            layer.cfg["mode"] = "train"
    return CELL.augmented(x)


def local_name_too(x, flag=True):
    if flag:
        for layer in (CELL, OTHER):
            layer.cfg["mode"] = "train"
    return CELL.local_name_too(x)


def from_a_product(x, flag=True):
    if flag:
        for layer in (CELL, OTHER):
            layer.cfg["mode"] = "train"
    return CELL.from_a_product(x)


def at_the_top(x):
    CELL.h = np.zeros(3)
    CELL.h[0] = x[0] * x[1]
    return np.sum(CELL.h * x) + CELL.helper()


def two_attributes(x, flag=True):
    if flag:
        for layer in (CELL, OTHER):
            layer.cfg["mode"] = "train"
    return CELL.two_attributes(x)


def given(x, flag=True):
    if flag:
        for layer in (CELL, OTHER):
            layer.cfg["mode"] = "train"
    h = np.zeros(3)
    v = CELL.given(h, x)
    return v + np.sum(h * x)


X3 = np.array([0.3, -0.7, 1.1])
KEPT = ["layer_input", "state_input", "states", "outputs", "cols", "out", "h", "b"]
FOLLOWED = {
    "rnn": (rnn_loss, lambda: (NET_RNN.U.copy(), NET_RNN.W.copy(), NET_RNN.V.copy(), X_SEQ),
            (0, 1, 2)),
    "rnn_then_conv": (rnn_then_conv, lambda: (NET_RNN.U.copy(), NET_RNN.W.copy(),
                                              NET_RNN.V.copy(), X_SEQ), (0, 1, 2)),
    "rows_then_read": (rows_then_read, lambda: (X3.copy(),), 0),
    "augmented": (augmented, lambda: (X3.copy(),), 0),
    "local_name_too": (local_name_too, lambda: (X3.copy(),), 0),
    "from_a_product": (from_a_product, lambda: (X3.copy(),), 0),
    "at_the_top": (at_the_top, lambda: (X3.copy(),), 0),
}


def _state():
    return {(i, a): copy.deepcopy(getattr(o, a, None))
            for i, o in enumerate((NET_RNN, CONV, CELL)) for a in KEPT}


def _clear():
    for o in (NET_RNN, CONV, CELL):
        for a in KEPT:
            if hasattr(o, a):
                setattr(o, a, None)


@pytest.mark.parametrize("opts", MODES, ids=["source", "fused", "tape"])
@pytest.mark.parametrize("name", list(FOLLOWED))
def test_object_holds_the_written_array(name, opts):
    fn, args_of, wrt = FOLLOWED[name]
    g = srcad.value_and_grad(fn, wrt=wrt, **opts)
    wrts = wrt if isinstance(wrt, tuple) else (wrt,)
    for scale in (1.0, -0.6):
        args = tuple(a * scale if i in wrts else a for i, a in enumerate(args_of()))
        _clear()
        want = fn(*copy.deepcopy(args))
        want_state = _state()
        _clear()
        value, grads = g(*copy.deepcopy(args))
        got_state = _state()
        assert np.isclose(value, want, rtol=1e-12), (value, want)
        for key, w in want_state.items():
            v = got_state[key]
            assert (w is None) == (v is None), key
            if w is not None:
                np.testing.assert_allclose(v, w, rtol=1e-12, atol=1e-14, err_msg=str(key))
        grads = grads if isinstance(wrt, tuple) else (grads,)
        for i, got in zip(wrts, grads):
            numeric = numerical_grad(fn, copy.deepcopy(args), wrt=i)
            np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", [two_attributes, given], ids=["two_attributes", "given"])
def test_another_holder_is_still_refused(fn):
    # (source mode; tape runs Python's objects as they are and follows both)
    with pytest.raises(srcad.SrcadError, match="stored on an object"):
        srcad.grad(fn)(X3.copy())
    _clear()
    want = fn(X3.copy())
    _clear()
    value, grad = srcad.value_and_grad(fn, mode="tape")(X3.copy())
    assert np.isclose(value, want, rtol=1e-12)
    np.testing.assert_allclose(grad, numerical_grad(fn, (X3.copy(),)), rtol=1e-6, atol=1e-8)
