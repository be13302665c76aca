"""A state object rebuilt on every trip of a loop, or on one arm of a branch (a probe of
from-scratch RNN code, 2026-12-04, third session).

``state = lstm_step(W, U, b, x, state)`` where the step returns a new ``LSTMState(h, c)`` (a
dataclass, a plain class, a method's result), ``while`` loops over time steps, and ``if``s
that rebuild the state on one arm: srcad follows objects a function builds as their
attributes' locals (objects.py), and refused a name that held one object before a loop or
branch and another after it ("`.h` has no derivative rule"). Now the new object's locals are
copied into the first's at the end of the trip or arm, as a loop carries any value -- where
nothing else keeps either object. Where something does (``prev = state`` read after the
loop, the objects appended to a list), the answer is right or a SrcadError, never a silent
gradient. A ``break``/``continue`` after the rebuild copies before it leaves the trip.
"""

from dataclasses import dataclass

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = ["source", "tape", pytest.param("fuse", marks=pytest.mark.slow)]  # (fuse: a C build each)
R = np.random.default_rng(11)
H, D = 3, 2
W = R.standard_normal((D, 4 * H)) * 0.5
U = R.standard_normal((H, 4 * H)) * 0.5
B = R.standard_normal(4 * H) * 0.1
XS = R.standard_normal((4, 2, D))
WG = R.standard_normal((D + H, H)) * 0.5


def _transform(fn, mode, how=srcad.value_and_grad, wrt=0):
    return how(fn, wrt=wrt, fuse=True) if mode == "fuse" else how(fn, wrt=wrt, mode=mode)


def check(fn, mode, *args, wrt=0):
    value, grad = _transform(fn, mode, wrt=wrt)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    wrts = wrt if isinstance(wrt, tuple) else (wrt,)
    grads = grad if isinstance(wrt, tuple) else (grad,)
    for k, g in zip(wrts, grads):
        want = numerical_grad(lambda a: fn(*args[:k], a, *args[k + 1:]), (args[k],))
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
    return grad


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


@dataclass
class Carry:
    h: np.ndarray
    c: np.ndarray


def cell(W, U, b, x, carry):
    z = x @ W + carry.h @ U + b
    n = carry.h.shape[-1]
    i, f = sigmoid(z[:, :n]), sigmoid(z[:, n:2 * n])
    o, g = sigmoid(z[:, 2 * n:3 * n]), np.tanh(z[:, 3 * n:])
    c = f * carry.c + i * g
    return Carry(h=o * np.tanh(c), c=c)


def lstm_for(W, U, b, xs):
    carry = Carry(np.zeros((xs.shape[1], U.shape[0])), np.zeros((xs.shape[1], U.shape[0])))
    for x in xs:
        carry = cell(W, U, b, x, carry)
    return np.sum(carry.h ** 2) + 0.1 * np.sum(carry.c)


def lstm_while(W, U, b, xs):
    carry = Carry(np.zeros((xs.shape[1], U.shape[0])), np.zeros((xs.shape[1], U.shape[0])))
    t = 0
    while t < len(xs):
        carry = cell(W, U, b, xs[t], carry)
        t += 1
    return np.sum(carry.h * carry.c)


def lstm_reads_in_the_loop(W, U, b, xs):
    """The state's fields read before and after it is rebuilt in one trip."""
    carry = Carry(np.zeros((xs.shape[1], U.shape[0])), np.zeros((xs.shape[1], U.shape[0])))
    total = 0.0
    for t in range(len(xs)):
        before = carry.h
        carry = cell(W, U, b, xs[t], carry)
        total = total + np.sum((carry.h - before) ** 2)
    return total + np.sum(carry.c)


class GRUState:
    """A plain class (an __init__ of its own) holding the hidden state and a step count."""

    def __init__(self, h, steps=0):
        self.h = h
        self.steps = steps


class GRUCell:
    def __init__(self, Wg):
        self.Wg = Wg

    def step(self, x, state):
        xh = np.concatenate([x, state.h], axis=1)
        u = sigmoid(xh @ self.Wg)
        return GRUState((1.0 - u) * state.h + u * np.tanh(xh @ self.Wg), state.steps + 1)


def gru_method_returns_state(Wg, xs):
    cellobj = GRUCell(Wg)
    state = GRUState(np.zeros((xs.shape[1], Wg.shape[1])))
    for x in xs:
        state = cellobj.step(x, state)
    return np.sum(np.tanh(state.h)) * state.steps


def built_in_the_body(Wg, xs):
    """The object built by the loop body itself, not by a callee."""
    state = GRUState(np.ones((xs.shape[1], Wg.shape[1])) * 0.1)
    for x in xs:
        z = np.concatenate([x, state.h], axis=1) @ Wg
        state = GRUState(np.tanh(z) + 0.5 * state.h, state.steps + 1)
    return np.sum(state.h ** 2) / state.steps


def rebuilt_on_one_arm(Wg, xs):
    """An `if` in the loop rebuilds the state on one arm only."""
    state = GRUState(np.zeros((xs.shape[1], Wg.shape[1])))
    for t, x in enumerate(xs):
        z = np.concatenate([x, state.h], axis=1) @ Wg
        if t % 2 == 0:
            state = GRUState(np.tanh(z), state.steps + 1)
        else:
            state.h = state.h + 0.25 * np.tanh(z)
    return np.sum(state.h ** 3)


def built_on_both_arms(Wg, xs, flag=True):
    """No object before the `if`; each arm builds one."""
    z = np.concatenate([xs[0], np.zeros((xs.shape[1], Wg.shape[1]))], axis=1) @ Wg
    if flag:
        state = GRUState(np.tanh(z), 1)
    else:
        state = GRUState(np.sin(z), 2)
    return np.sum(state.h ** 2) * state.steps


def kept_under_another_name(Wg, xs):
    """`prev` keeps the object of the trip before: read after the loop."""
    state = GRUState(np.zeros((xs.shape[1], Wg.shape[1])))
    prev = state
    for x in xs:
        prev = state
        state = GRUState(np.tanh(np.concatenate([x, state.h], axis=1) @ Wg), state.steps + 1)
    return np.sum(state.h ** 2) + np.sum(prev.h)


def ends_early(Wg, xs):
    """`break` after the rebuild, on the third trip: the copy is made before it."""
    state = GRUState(np.zeros((xs.shape[1], Wg.shape[1])))
    for x in xs:
        state = GRUState(np.tanh(np.concatenate([x, state.h], axis=1) @ Wg), state.steps + 1)
        if state.steps >= 3:
            break
    return np.sum(state.h ** 2) * state.steps


def skips_a_trip(Wg, xs):
    """`continue` on one arm after the rebuild, `while True` with a `break` before it."""
    state = GRUState(np.zeros((xs.shape[1], Wg.shape[1])))
    t = 0
    while True:
        if t >= len(xs):
            break
        state = GRUState(np.tanh(np.concatenate([xs[t], state.h], axis=1) @ Wg),
                         state.steps + 1)
        t += 1
        if t % 2 == 1:
            continue
        state.h = state.h * 0.5
    return np.sum(state.h ** 2) + state.steps


def kept_in_a_list(Wg, xs):
    state = GRUState(np.zeros((xs.shape[1], Wg.shape[1])))
    states = []
    for x in xs:
        state = GRUState(np.tanh(np.concatenate([x, state.h], axis=1) @ Wg), state.steps + 1)
        states.append(state)
    return sum(np.sum(s.h ** 2) for s in states)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [lstm_for, lstm_while, lstm_reads_in_the_loop])
def test_lstm_state_carried_through_a_loop(fn, mode):
    check(fn, mode, W, U, B, XS, wrt=(0, 1, 2))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [gru_method_returns_state, built_in_the_body, rebuilt_on_one_arm,
                                built_on_both_arms, ends_early, skips_a_trip])
def test_plain_class_state(fn, mode):
    check(fn, mode, WG, XS)


def test_both_arms_other_flag():
    check(lambda Wg, xs: built_on_both_arms(Wg, xs, False), "source", WG, XS)


@pytest.mark.parametrize("fn", [lstm_for, lstm_while, lstm_reads_in_the_loop])
def test_source_and_tape_bit_for_bit(fn):
    s = srcad.grad(fn, wrt=(0, 1, 2))(W, U, B, XS)
    t = srcad.grad(fn, wrt=(0, 1, 2), mode="tape")(W, U, B, XS)
    for a, b in zip(s, t):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("fn", [kept_under_another_name, kept_in_a_list])
def test_right_or_refused(fn):
    """Where the state object is kept elsewhere or a trip ends early: never a silent wrong
    gradient."""
    try:
        g = srcad.grad(fn)(WG, XS)
    except srcad.SrcadError:
        return
    np.testing.assert_allclose(g, numerical_grad(fn, (WG, XS)), rtol=1e-6, atol=1e-8)


def test_generated_code_copies_the_new_state_at_the_trip_end():
    text = srcad.source(srcad.grad(built_in_the_body))
    assert "state_h = " in text
