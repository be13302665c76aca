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
        out, tangent = srcad.jvp(fn, args, (v,) + tuple(np.zeros_like(a) for a in args[1:]))
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


def test_an_object_swapped_on_self_is_seen(monkeypatch):
    class Sin:
        def fn(self, z):
            return np.sin(z)

    g = srcad.grad(m.through_instance)
    g(X)
    monkeypatch.setattr(m, "act", Sin())
    assert np.allclose(g(X), np.cos(X))
