"""Methods of the user's own objects inside a differentiated function (issue 22): reached
through an instance, a class, `super()`, another object's attribute, as static, class and
instance methods -- each differentiated as a user function, in every transform and mode, and
guarded (rebinding a method or an attribute holding an object changes the next call)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error
from tests import fixtures_methods as m

X = np.array([0.3, -0.5, 0.8])
Y = np.array([0.1, 0.2, -0.3])

CASES = {
    "method of a global instance": (m.through_instance, (X,)),
    "staticmethod through instance and class": (m.static_through_instance_and_class, (X,)),
    "classmethod through class and instance": (m.classmethods, (X,)),
    "super(), self.act.fn, self.helper, a class on self": (m.through_model, (X, Y)),
    "bound method transformed": (m.model.loss, (X, Y)),
    "callable object transformed": (m.objective, (X, Y)),
    "a class passed in, its staticmethod": (m.cost_passed_in, (X, Y, m.QuadraticCost)),
    "an instance passed in, its staticmethod": (m.cost_passed_in, (X, Y, m.QuadraticCost())),
    "a layer passed in, super() inside": (m.layer_passed_in, (X, m.model)),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("how", ["source", "tape", "vjp", "jvp", "fuse"])
def test_user_methods_are_differentiated(case, how):
    fn, args = CASES[case]
    want = numerical_grad(fn, args)
    value = fn(*args)
    if how == "vjp":
        out, pullback = srcad.vjp(fn, *args)
        got = pullback(1.0)[0]
    elif how == "jvp":
        v = np.linspace(0.5, 1.5, X.size)
        out, tangent = srcad.jvp(fn, args, (v,) + tuple(
            np.zeros_like(a) if isinstance(a, np.ndarray) else a for a in args[1:]))
        assert out == value and rel_error(tangent, np.sum(want * v)) < 1e-6
        return
    else:
        options = {"mode": "tape"} if how == "tape" else {"fuse": True} if how == "fuse" \
            else {}
        out, got = srcad.value_and_grad(fn, **options)(*args)
    assert out == value
    assert rel_error(got, want) < 1e-6, (got, want)


def test_a_rebound_method_is_seen(monkeypatch):
    g = srcad.grad(m.through_model)
    before = g(X, Y)
    monkeypatch.setattr(m.Scaled, "helper", lambda self, x: np.cos(x) * 4.0)
    after = g(X, Y)
    assert rel_error(after, numerical_grad(m.through_model, (X, Y))) < 1e-6
    assert not np.allclose(before, after)
    monkeypatch.setattr(m.model, "act", m.Layer(5.0))
    with pytest.raises(srcad.SrcadError):  # (Layer has no `fn`: the call's own error)
        g(X, Y)


def test_a_callable_object_is_read_at_each_call(monkeypatch):
    f = srcad.grad(m.objective)
    before = f(X, Y)
    monkeypatch.setattr(m.objective, "k", 3.0)  # (read when the call runs, as Python reads it)
    np.testing.assert_allclose(f(X, Y), numerical_grad(m.objective, (X, Y)), rtol=1e-6)
    assert not np.allclose(f(X, Y), before)


def test_an_object_swapped_on_self_is_seen(monkeypatch):
    class Sin:
        def fn(self, z):
            return np.sin(z)

    g = srcad.grad(m.through_instance)
    g(X)
    monkeypatch.setattr(m, "act", Sin())
    assert np.allclose(g(X), np.cos(X))


def test_each_object_passed_in_gets_its_own_methods():
    """The code is specialised on the object a parameter holds (its methods were resolved when
    normalising): another object, of the same class or another, gets code of its own."""
    g = srcad.grad(m.layer_passed_in)
    for layer in (m.Layer(1.0), m.Layer(3.0), m.model, m.Layer(1.0)):
        want = numerical_grad(m.layer_passed_in, (X, layer))
        assert rel_error(g(X, layer), want) < 1e-6


XB = np.array([[0.3, -0.5, 0.8], [0.1, 0.9, -0.4]])


@pytest.mark.parametrize("how", ["source", "tape", "fuse", "vjp"])
def test_self_attr_is_forward_state(how):
    """`self.out = ...` runs as numpy would: the object ends up holding this call's forward
    values (arrays, not srcad's), set once per call, and the gradient matches the author's
    own backward."""
    fn = m.through_stateful_layer
    calls = m.dense.calls
    if how == "vjp":
        value, pullback = srcad.vjp(fn, XB)
        g = pullback(1.0)[0]
    else:
        options = {"mode": "tape"} if how == "tape" else {"fuse": True} if how == "fuse" \
            else {}
        value, g = srcad.value_and_grad(fn, **options)(XB)
    assert m.dense.calls == calls + 1
    assert type(m.dense.out) is np.ndarray and m.dense.x is XB
    assert np.array_equal(m.dense.out, np.tanh(XB @ m.dense.W + m.dense.b))
    assert value == fn(XB)
    want = m.dense.backward(2 * m.dense.out)
    assert rel_error(g, want) < 1e-12 and rel_error(g, numerical_grad(fn, (XB,))) < 1e-6


def test_self_attr_accumulated_in_a_loop():
    g = srcad.grad(m.dense.loss_in_loop)(XB)
    total = m.dense.total  # (what srcad's call left on the object)
    assert total == m.dense.loss_in_loop(XB)
    assert rel_error(g, numerical_grad(m.dense.loss_in_loop, (XB,))) < 1e-6


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_forward_state_read_back_after_the_call_that_stored_it(mode):
    """`self.forward(x); return np.sum(self.out ** 2)`: Python reads what the call stored;
    so does srcad, the gradient flowing through it (frontend/state.py carries it out of the
    callee; it was refused before)."""
    fn = m.dense.loss_read_back
    value, g = srcad.value_and_grad(fn, mode=mode)(XB)
    assert value == fn(XB)
    want = m.dense.backward(2 * m.dense.out)
    assert rel_error(g, want) < 1e-12 and rel_error(g, numerical_grad(fn, (XB,))) < 1e-6


XS = np.random.default_rng(6).standard_normal((5, 3))
YS = np.random.default_rng(7).standard_normal((5, 2))


@pytest.mark.parametrize("how", ["source", "tape", "fuse", "jvp"])
def test_a_sequential_model_over_a_list_of_layers(how):
    """`for layer in self.layers: x = layer.forward(x)`: the loop over user objects runs once
    per layer, each with its own methods (the list's contents guarded)."""
    fn = m.sequential_loss
    want = numerical_grad(fn, (XS, YS))
    if how == "jvp":
        v = np.ones_like(XS)
        out, tangent = srcad.jvp(fn, (XS, YS), (v, np.zeros_like(YS)))
        assert out == fn(XS, YS) and rel_error(tangent, np.sum(want * v)) < 1e-6
        return
    options = {"mode": "tape"} if how == "tape" else {"fuse": True} if how == "fuse" else {}
    value, g = srcad.value_and_grad(fn, **options)(XS, YS)
    assert value == fn(XS, YS) and rel_error(g, want) < 1e-6


def test_a_layer_appended_or_swapped_is_seen(monkeypatch):
    g = srcad.grad(m.sequential_loss)
    g(XS, YS)
    layers = list(m.net.layers)
    monkeypatch.setattr(m.net, "layers", layers)  # (restored after the test)
    layers.append(m.Activation(np.sin))
    assert rel_error(g(XS, YS), numerical_grad(m.sequential_loss, (XS, YS))) < 1e-6
    layers[1] = m.Activation(np.cos)
    assert rel_error(g(XS, YS), numerical_grad(m.sequential_loss, (XS, YS))) < 1e-6


def layers_argument_loss(x, y, layers):
    for layer in layers:
        x = layer.forward(x)
    return np.mean((x - y) ** 2)


def test_a_list_of_layers_passed_as_an_argument():
    layers = list(m.net.layers)
    g = srcad.grad(layers_argument_loss)
    want = numerical_grad(layers_argument_loss, (XS, YS, layers))
    assert rel_error(g(XS, YS, layers), want) < 1e-6
    layers.append(m.Activation(np.sin))  # (the same list, one more layer)
    want = numerical_grad(layers_argument_loss, (XS, YS, layers))
    assert rel_error(g(XS, YS, layers), want) < 1e-6
    assert rel_error(srcad.grad(layers_argument_loss, mode="tape")(XS, YS, layers), want) < 1e-6
