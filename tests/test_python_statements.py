"""Python statements inside a differentiated function (issue 23, the front door): dict
displays with ``**`` unpacking (srcad/frontend/pylower.py), ``global`` / ``nonlocal``
assignments, ``try`` statements and classes defined in the body. Each case: the value is
what calling the function gives, source and tape agree, and the gradient matches central
differences; where srcad cannot keep Python's meaning, a SrcadError at the user's line that
says what to write instead."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(23)
X = R.standard_normal(4)
P = {"a": R.standard_normal(4), "b": R.standard_normal(4)}
Q = {"b": R.standard_normal(4), "c": R.standard_normal(4)}
MODES = ("source", "tape")


def _check(fn, *args, wrt=0, value=None):
    """`fn`'s value (or `value()`, for a function whose calls change state) and gradient,
    in both modes, against calling it and central differences."""
    want = fn(*args) if value is None else value()
    num = numerical_grad(fn, args, wrt=wrt)
    for mode in MODES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v, g = srcad.value_and_grad(fn, wrt=wrt, mode=mode)(*args)
        assert np.array_equal(np.asarray(v), np.asarray(want)), (mode, v, want)
        assert rel_error(g, num) < 1e-6, (mode, g, num)


# --- {**p, "k": v} --------------------------------------------------------------------------
def override_entry(x, p):
    q = {**p, "b": x * 2.0}
    return np.sum(q["a"] * q["b"]) + np.sum(np.tanh(q["a"]))


def add_entry(x, p):
    q = {**p, "k": np.sin(x)}
    return sum(np.sum(v * v) for v in q.values())


def merge_two(x, p, q):
    r = {**p, **q}  # q's "b" replaces p's (p's b gets no gradient)
    return np.sum(r["a"] * r["b"] * r["c"]) + np.sum(x)


def merge_local(x, p):
    base = {"w": x, "s": np.cos(x)}
    out = {"s": x * x, **base, **p, "w": 3.0 * x}
    keys = list(out)  # Python's order: the first position of each key
    return np.sum(out["w"] * out["s"] * out["a"]) + len(keys)


def nested_display(x, p):
    q = {**{**p, "a": x}, "b": p["b"] * x}
    return np.sum(q["a"] * q["b"])


@pytest.mark.parametrize("fn", [override_entry, add_entry, nested_display])
@pytest.mark.parametrize("wrt", [0, 1])
def test_dict_unpacking_gradient(fn, wrt):
    _check(fn, X, P, wrt=wrt)


@pytest.mark.parametrize("wrt", [0, 1, 2])
def test_two_dicts_merged(wrt):
    _check(merge_two, X, P, Q, wrt=wrt)


@pytest.mark.parametrize("wrt", [0, 1])
def test_local_dict_merged_keeps_order(wrt):
    _check(merge_local, X, P, wrt=wrt)


def test_merged_away_entry_gets_zero():
    for mode in MODES:
        gp = srcad.grad(merge_two, wrt=1, mode=mode)(X, P, Q)
        np.testing.assert_array_equal(gp["b"], np.zeros(4))


def unpack_unknown(x, obj):
    q = {**obj.params, "k": x}
    return np.sum(q["k"])


def test_unpacking_an_objects_dict_is_read_at_the_call():
    # (refused before 2026-12-07: a dict srcad did not know from the arguments; now read key
    # by key where Python reads it -- tests/test_dict_unpacking_held.py)
    class Holder:
        params = {"k": X, "m": 2.0}
    for mode in MODES:
        np.testing.assert_array_equal(
            srcad.grad(unpack_unknown, mode=mode)(X, Holder()), np.ones_like(X))


# --- global / nonlocal ----------------------------------------------------------------------
step = 0
SCALE = 1.5
last_loss = None


def counts_steps(x):
    global step
    step = step + 1
    return np.sum(np.sin(x) * step)


def reads_declared_only(x):
    global SCALE
    return np.sum(x * SCALE)


def augmented_and_later_read(x):
    global step
    before = step
    step += 2
    return np.sum(x * x) * (step - before)


def stores_loss(x):
    global last_loss
    y = np.sum(np.tanh(x) ** 2)
    last_loss = y  # a plain value: no gradient leaves the call through it
    return y * 2.0


def make_counter():
    count = 0

    def body(x):
        nonlocal count
        count += 1
        return np.sum(x ** 2) * count

    def read():
        return count
    return body, read


def test_global_counter_is_set_once_per_call():
    global step
    for mode in MODES:
        step = 3
        g = srcad.grad(counts_steps, mode=mode)(X)
        assert step == 4, mode  # Python's meaning: the call sets it once
        np.testing.assert_allclose(g, np.cos(X) * 4)
        v, _ = srcad.value_and_grad(counts_steps, mode=mode)(X)
        assert step == 5 and v == np.sum(np.sin(X) * 5), mode


def test_global_counter_gradient():
    global step
    step = 0
    num = numerical_grad(lambda x: np.sum(np.sin(x) * 7), (X,))
    for mode in MODES:
        step = 6
        g = srcad.grad(counts_steps, mode=mode)(X)
        assert rel_error(g, num) < 1e-6, mode


def test_global_augmented_later_read_sees_new_value():
    global step
    for mode in MODES:
        step = 10
        v, g = srcad.value_and_grad(augmented_and_later_read, mode=mode)(X)
        assert step == 12
        assert v == np.sum(X * X) * 2
        np.testing.assert_allclose(g, 4 * X)


def test_global_only_read():
    _check(reads_declared_only, X)


def test_differentiated_value_stored_as_plain_value():
    global last_loss
    for mode in MODES:
        last_loss = None
        g = srcad.grad(stores_loss, mode=mode)(X)
        assert type(last_loss) in (float, np.float64), (mode, type(last_loss))
        assert last_loss == np.sum(np.tanh(X) ** 2), mode
        np.testing.assert_allclose(g, numerical_grad(stores_loss, (X,)), rtol=1e-6)


def test_nonlocal_counter():
    for mode in MODES:
        body, read = make_counter()
        g = srcad.grad(body, mode=mode)
        np.testing.assert_allclose(g(X), 2 * X)
        assert read() == 1
        np.testing.assert_allclose(g(X), 4 * X)
        assert read() == 2, mode


def nonlocal_of_the_differentiated_function(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
    add(x)
    return np.sum(total)


def test_nonlocal_of_the_function_itself():
    # (was refused: closures.py now returns the new value from the lifted function)
    for mode in MODES:
        g = srcad.grad(nonlocal_of_the_differentiated_function, mode=mode)(X)
        np.testing.assert_allclose(g, np.ones_like(X))


def nested_reads_assigned_global(x):
    global step
    step = step + 1
    scale = lambda v: v * step  # noqa: E731
    return np.sum(scale(x))


def test_nested_function_reading_assigned_global_refused():
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(nested_reads_assigned_global)(X)
    assert "pass `step` to it as an argument" in str(info.value)
    assert "test_python_statements.py" in str(info.value)


def test_global_counter_forward_mode():
    global step
    step = 1
    out, tangent = srcad.jvp(counts_steps, (X,), (np.ones(4),))
    assert step == 2
    assert out == np.sum(np.sin(X) * 2)
    np.testing.assert_allclose(tangent, np.sum(np.cos(X) * 2))


def bumps_step(x):
    global step
    step += 1
    return np.tanh(x) * step


def calls_a_bumper(x):
    global step
    y = bumps_step(x)
    step = step * 10
    return np.sum(y * step)


def test_callee_assigning_the_same_global_refused():
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(calls_a_bumper)(X)
    assert "bumps_step assigns the global `step` too" in str(info.value)
    assert "y = bumps_step(x)" in str(info.value)


def test_callee_assigning_a_global_alone():
    global step
    step = 2
    v, g = srcad.value_and_grad(lambda x: np.sum(bumps_step(x)))(X)
    assert step == 3 and v == np.sum(np.tanh(X) * 3)
    np.testing.assert_allclose(g, 3 * (1 - np.tanh(X) ** 2))


# ---- a class defined in the function (made once, followed as a module-level class is) -----
def mlp_of_local_classes(W, b, x):
    class Dense:
        def __init__(self, W, b):
            self.W, self.b = W, b

        def __call__(self, x):
            return np.tanh(x @ self.W + self.b)

    class MLP:
        def __init__(self, layers):
            self.layers = layers

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    net = MLP([Dense(W, b), Dense(W.T, b * 0.5)])
    return np.sum(net.forward(x) ** 2)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_classes_defined_in_the_function(mode):
    r = np.random.default_rng(4)
    args = (r.normal(size=(3, 3)), r.normal(size=3), r.normal(size=(2, 3)))
    value, g = srcad.value_and_grad(mlp_of_local_classes, wrt=(0, 1, 2), mode=mode)(*args)
    assert value == mlp_of_local_classes(*args)
    want = numerical_grad(mlp_of_local_classes, args, wrt=(0, 1, 2))
    assert all(rel_error(a, b) < 1e-7 for a, b in zip(g, want))


def class_reading_a_local(x, s):
    class Scaled:
        def __call__(self, v):
            return v * s  # (the call's s: Python makes the class again at every call)

    return np.sum(Scaled()(x))


def class_in_a_branch(x):
    if np.sum(x) > 0:
        class Twice:
            def __call__(self, v):
                return v * 2
    return np.sum(x)


@pytest.mark.parametrize("fn, args, match", [
    (class_reading_a_local, (X, 2.0), "reads `s`, a value of the call"),
    (class_in_a_branch, (X,), "in a loop, a branch or a nested function"),
])
def test_classes_the_function_cannot_make_once_are_refused(fn, args, match):
    with pytest.raises(srcad.SrcadError, match=match) as info:
        srcad.grad(fn)(*args)
    assert info.value.filename.endswith("test_python_statements.py")
