"""Functions as values that close over differentiated values (frontend/closure_values.py).

Each program passes a nested def or lambda around the way numpy-from-scratch code does -- a
tuple of layers a loop walks, factories' closures in a list, `compose(*fns)`, an activation
handed to a helper, `functools.reduce` -- and was refused until 2026-12-05 (fourth session):
`__srcad_partial has no derivative rule`, in tape mode too. Each is checked against calling it
(the value), central differences (the gradient), tape mode (bit for bit) and `fuse=True`.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error


def relu(z):
    return np.maximum(z, 0.0)


def make_dense(W):
    def dense(h):
        return h @ W
    return dense


def make_sum(*ws):
    def add(h):
        return h * sum(ws)
    return add


def compose(*fs):
    def run(h):
        for g in fs:
            h = g(h)
        return h
    return run


def apply_all(fs, h):
    for g in fs:
        h = g(h)
    return h


def layer(h, W, act):
    return act(h @ W)


def run_layers(params, h):
    for W, act in params:
        h = act(h @ W)
    return h


def tuple_of_lambdas(W1, W2, x):
    fns = (lambda h: h @ W1, np.tanh, lambda h: h @ W2)
    for f in fns:
        x = f(x)
    return np.sum(x ** 2)


def list_of_factory_closures(W1, W2, x):
    layers = [make_dense(W1), np.tanh, make_dense(W2)]
    for lay in layers:
        x = lay(x)
    return np.sum(x ** 2)


def composed_lambdas(W1, W2, x):
    net = compose(lambda h: h @ W1, relu, lambda h: h @ W2)
    return np.sum(net(x) ** 2)


def reduced_over_layers(W1, W2, x):
    layers = [make_dense(W1), np.tanh, make_dense(W2)]
    return np.sum(functools.reduce(lambda h, f: f(h), layers, x) ** 2)


def numpy_functions_into_a_helper(W1, W2, x):
    return np.sum(apply_all([np.tanh, relu], x @ W1) @ W2)


def activation_closing_over_a_value(W1, W2, x):
    scale = np.sum(W2)
    return np.sum(layer(layer(x, W1, lambda z: z * scale), W2, relu))


def pairs_of_weight_and_function(W1, W2, x):
    return np.sum(run_layers([(W1, np.tanh), (W2, relu)], x))


def appended_closures(W1, W2, x):
    s = np.sum(W2)
    fs = [lambda h: h @ W1, lambda h: h * s]
    fs.append(np.tanh)
    for f in fs:
        x = f(x)
    return np.sum(x)


def rebound_after_the_lambda(W1, W2, x):
    f = lambda h: h @ W1  # noqa: E731
    W1 = W1 * 2.0  # (Python's closure reads W1 when called: the new one)
    return np.sum(f(x) @ W2)


def every_lambda_reads_the_last_loop_value(W1, W2, x):
    fs = []
    for W in (W1, W1 * 0.5):
        fs.append(lambda h: h @ W)  # (both read the last W, as Python's closures do)
    return np.sum((fs[0](x) + fs[1](x)) @ W2)


def rebound_after_composing(W1, W2, x):
    c = np.tanh(W2[0])
    net = compose(lambda h: h @ W1 * c, np.tanh)
    c = c * 2.0 + 1.0  # (the lambda inside `net` reads the new c)
    return np.sum(net(x) @ W2)


def items_by_index(W1, W2, x):
    fs = [lambda h: h @ W1, np.tanh, lambda h: h @ W2]
    return np.sum(fs[2](fs[1](fs[0](x))))


def items_by_key(W1, W2, x):
    acts = {"first": lambda h: h @ W1, "act": relu, "last": make_dense(W2)}
    return np.sum(acts["last"](acts["act"](acts["first"](x))))


def a_loss_as_a_lambda(W1, W2, x):
    loss = lambda p: np.sum(np.tanh(x @ p) @ W2)  # noqa: E731
    return loss(W1) + loss(W1 * 2)


def one_star_argument(W1, W2, x):
    add = make_sum(W2[0])  # (`*ws` of one argument is the tuple of it: sum(ws) is W2[0])
    return np.sum(add(x @ W1))


def factory_closure_called_between_other_uses(W1, W2, x):
    b = W2[0]
    c = np.tanh(b)
    f0 = make_dense(W1)
    h = x * c - b
    h = f0(h)
    h = h * c - b
    h = f0(h)
    return np.sum(h * h) * 0.1


PROGRAMS = [tuple_of_lambdas, list_of_factory_closures, composed_lambdas, reduced_over_layers,
            numpy_functions_into_a_helper, activation_closing_over_a_value,
            pairs_of_weight_and_function, appended_closures, rebound_after_the_lambda,
            every_lambda_reads_the_last_loop_value, rebound_after_composing, items_by_index,
            items_by_key, a_loss_as_a_lambda, one_star_argument,
            factory_closure_called_between_other_uses]


def _right_and_bitwise(fn, W1, W2, x):
    """The value of the call, the gradient of central differences, tape mode's bit for bit."""
    value, grads = srcad.value_and_grad(fn, wrt=(0, 1))(W1, W2, x)
    assert value == fn(W1, W2, x)
    for g, w in zip(grads, numerical_grad(fn, (W1, W2, x), wrt=(0, 1))):
        assert rel_error(g, w) < 1e-6
    for g, t in zip(grads, srcad.grad(fn, wrt=(0, 1), mode="tape")(W1, W2, x)):
        np.testing.assert_array_equal(g, t)
    return grads


def _args(seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal((3, 3)) * 0.7, r.standard_normal((3, 3)) * 0.7, \
        r.standard_normal((4, 3))


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_closure_values_right_in_every_mode(fn):
    for seed in range(2):
        args = _args(seed)
        grads = _right_and_bitwise(fn, *args)
        fused = srcad.grad(fn, wrt=(0, 1), fuse=True)(*args)
        for g, t in zip(grads, fused):
            assert rel_error(g, t) < 1e-12


@pytest.mark.parametrize("fn", [composed_lambdas, rebound_after_composing, items_by_key],
                         ids=lambda f: f.__name__)
def test_closure_values_forward_mode(fn):
    W1, W2, x = _args()
    dW = np.random.default_rng(5).standard_normal(W1.shape)
    _, t = srcad.jvp(fn, (W1, W2, x), (dW, np.zeros_like(W2), np.zeros_like(x)))
    g = srcad.grad(fn)(W1, W2, x)
    assert rel_error(t, np.sum(g * dW)) < 1e-10


def test_one_star_argument_was_silently_wrong():
    """`make_sum(b)` of `def make_sum(*ws)`: the factory splice bound `ws` to b itself, not
    `(b,)` -- `sum(ws)` summed b's elements (72.0 where Python gives 24.0) until 2026-12-05."""
    b, x = np.array([1.0, 2.0, 3.0]), np.ones((4, 3))
    assert srcad.value_and_grad(lambda_free_star, wrt=0)(b, x)[0] == lambda_free_star(b, x)


def lambda_free_star(b, x):
    add = make_sum(b)
    return np.sum(add(x))


def chosen_at_run_time(W1, W2, x):
    f0 = lambda h: h @ W1  # noqa: E731
    f1 = lambda h: h @ W2  # noqa: E731
    f = f0 if np.sum(x) > 0 else f1
    return np.sum(f(x))


def a_lambda_or_a_numpy_function(W1, W2, x):
    s = np.sum(W2) * 0.1
    act = (lambda z: z * s) if np.sum(x @ W1) > 0 else np.tanh
    h = act(x @ W1)
    for g in (act, np.sin):
        h = g(h)
    return np.sum(h)


def chosen_then_called_in_a_loop(W1, W2, x):
    act = np.tanh if np.sum(x) > 0 else np.sin
    h = x @ W1
    for _ in range(2):  # (a loop name as the argument: its arms pin nothing)
        h = act(h) * 0.5 + h
    return np.sum(act(act(h) @ W2))


def a_choice_given_to_a_helper(W1, W2, x):
    s = np.sum(W2) * 0.1
    act = (lambda z: z * s) if np.sum(x @ W1) > 0 else relu
    h = layer(x, W1, act)
    return np.sum(layer(h, W2, act=act) ** 2)


@pytest.mark.parametrize("fn", [chosen_at_run_time, a_lambda_or_a_numpy_function,
                                chosen_then_called_in_a_loop, a_choice_given_to_a_helper],
                         ids=lambda f: f.__name__)
def test_a_function_chosen_at_run_time_is_called_as_chosen(fn):
    """`act = f0 if c else f1; act(x)` (or `layer(h, W, act)`): refused until 2026-12-05
    (fourth session); now an `if` chain of the calls, each differentiated, both ways."""
    for sign in (1.0, -1.0):
        W1, W2, x = _args()
        _right_and_bitwise(fn, W1, W2, x * sign)


def a_pick_given_to_a_helper(W1, W2, x):
    f0 = lambda h: h @ W1  # noqa: E731
    f = f0 if np.sum(x) > 0 else np.tanh
    return np.sum(apply_all([f], x) @ W2)


def test_a_pick_given_to_a_helper_is_refused_by_its_name():
    W1, W2, x = _args()
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(a_pick_given_to_a_helper)(W1, W2, x)
    text = str(e.value)
    assert "__srcad_partial" not in text and text.startswith("`f0`")
    assert "test_closure_values.py" in text and "f0 if c else f1" in text


# -- defaults that read the function's names: their value where the function is made ------------

def a_named_lambda_with_a_default(W1, W2, x):
    s = np.sum(W2)
    f = lambda h, k=s: h * k  # noqa: E731  (k is s now, whatever s is later)
    s = s * 2.0
    return np.sum(f(x @ W1)) + s


def a_def_with_a_computed_default(W1, W2, x):
    def act(z, scale=np.sum(W2) * 0.1):
        return np.tanh(z) * scale
    return np.sum(act(x @ W1)) + np.sum(act(x @ W1, scale=2.0))


def defaults_per_trip_then_composed(W1, W2, x):
    fs = []
    for k in (np.sum(W2) * 0.1, 0.5):
        fs.append(lambda h, k=k: np.tanh(h * k))
    return np.sum(compose(*fs)(x @ W1))


def a_default_lambda_handed_to_a_helper(W1, W2, x):
    s = np.sum(W2) * 0.1
    h = apply_all([lambda z, k=s: z * k, np.tanh], x @ W1)
    s = s * 3.0
    return np.sum(h) + s


@pytest.mark.parametrize("fn", [a_named_lambda_with_a_default, a_def_with_a_computed_default,
                                defaults_per_trip_then_composed,
                                a_default_lambda_handed_to_a_helper], ids=lambda f: f.__name__)
def test_defaults_read_where_the_function_is_made(fn):
    """Refused until 2026-12-05 (fourth session): "the default value of a parameter ...
    reads `s`, a local" -- now the value where the function is made, as Python's."""
    _right_and_bitwise(fn, *_args())


# -- a factory picking a lambda by a string ------------------------------------------------------

def loss_factory(kind):
    if kind == "mse":
        return lambda p, t: np.mean((p - t) ** 2)
    return lambda p, t: np.mean(np.abs(p - t))


def make_act(kind, alpha=0.1):
    if kind == "leaky":
        return lambda z: np.where(z > 0, z, alpha * z)
    elif kind == "scaled":
        return lambda z: np.tanh(z) * alpha
    return np.tanh


def a_loss_from_a_factory(W1, W2, x):
    loss = loss_factory("mse")
    return loss(np.tanh(x @ W1) @ W2, 1.0)


def activations_from_a_factory(W1, W2, x):
    a1 = make_act("leaky", np.sum(W2) * 0.1)
    a2 = make_act("scaled", 2.0)
    a3 = make_act("none")
    return np.sum(a3(a2(a1(x @ W1)) @ W2))


@pytest.mark.parametrize("fn", [a_loss_from_a_factory, activations_from_a_factory],
                         ids=lambda f: f.__name__)
def test_a_lambda_a_factory_picks_by_a_string(fn):
    """`loss = loss_factory("mse")` returning a lambda that closes over nothing was refused
    ("`loss` has no derivative rule") until 2026-12-05 (fourth session)."""
    _right_and_bitwise(fn, *_args())
