"""A transformed function reads names when it is called, as Python does (issue 21).

Each case builds every transform of a function from tests/fixtures_names.py and calls it,
then rebinds one name the function reads -- a global float, array, function, dict or loop
count, a class attribute, an instance attribute, a static method, a callee's global, a
closure cell -- and calls the *same* transformed functions again: each must now give what
calling the function gives, in every transform and mode (source, fuse=True, tape, vjp, jvp,
value_and_grad, a Hessian-vector product, grad of grad, checkpointing, memory_budget). The
mechanism is srcad/frontend/guards.py; tests/test_fuzz_names.py fuzzes the same class.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.frontend import guards
from srcad.testing import numerical_grad, rel_error
from tests import fixtures_names as m

X = np.array([0.3, -0.7, 1.1])


def _set(monkeypatch, what):
    """Apply one change; monkeypatch undoes it after the test."""
    target, name, value = what
    if target == "closure":
        before = m.closure_fn.__closure__[0].cell_contents
        m.set_closure(value)
        monkeypatch.setattr(m, "_restore_closure", before, raising=False)
        return
    monkeypatch.setattr(target, name, value)


CHANGES = {
    "global float": ("scaled", (m, "SCALE", 5.0)),
    "global function": ("activated", (m, "ACT", np.sin)),
    "global array, same shape": ("weighted", (m, "W", np.array([3.0, 1.5, -2.0]))),
    "global array, other dtype": ("weighted", (m, "W", np.array([3, 2, -2]))),
    "global dict rebound": ("with_dict", (m, "OPTS", {"alpha": 4.0})),
    "class attribute": ("with_class_attr", (m.Config, "beta", -2.0)),
    "instance attribute": ("with_instance_attr", (m.settings, "gamma", 3.0)),
    "static method": ("with_static_method", (m.Config, "act", staticmethod(np.sin))),
    "callee's global": ("caller", (m, "SCALE", -1.5)),
    "callee rebound": ("caller", (m, "callee", lambda x: np.cos(x) * 2.0)),
    "loop count": ("looped", (m, "STEPS", 4)),
    "global in a loop": ("looped", (m, "SCALE", 0.5)),
    "global in a checkpointed call": ("checkpointed", (m, "SCALE", 3.0)),
    "closure cell": ("closure_fn", ("closure", None, -0.5)),
}


@pytest.fixture(autouse=True)
def _closure_back():
    yield
    m.set_closure(3.0)


def _expect(fn):
    return fn(X.copy()), numerical_grad(fn, (X.copy(),))


def _transforms(fn):
    return {
        "grad": srcad.grad(fn),
        "grad tape": srcad.grad(fn, mode="tape"),
        "value_and_grad": srcad.value_and_grad(fn),
        "value_and_grad tape": srcad.value_and_grad(fn, mode="tape"),
        "value_and_grad fuse": srcad.value_and_grad(fn, fuse=True),
        "value_and_grad budget": srcad.value_and_grad(fn, memory_budget=10**6),
    }


def _check(fn, transforms):
    value, fd = _expect(fn)
    for name, t in transforms.items():
        out = t(X.copy())
        if name.startswith("value_and_grad"):
            got_value, g = out
            assert got_value == value, (name, got_value, value)
        else:
            g = out
        assert rel_error(g, fd) < 1e-6, (name, g, fd)
    out, pullback = srcad.vjp(fn, X.copy())
    assert out == value
    assert rel_error(pullback(1.0)[0], fd) < 1e-6
    v = np.array([1.0, -2.0, 0.5])
    out, tangent = srcad.jvp(fn, (X.copy(),), (v,))
    assert out == value and rel_error(tangent, np.sum(fd * v)) < 1e-6
    # a Hessian-vector product: the derivative of the gradient along v, by differences
    hv = srcad.jvp(srcad.grad(fn), (X.copy(),), (v,))[1]
    h = 1e-5
    want = (numerical_grad(fn, (X + h * v,)) - numerical_grad(fn, (X - h * v,))) / (2 * h)
    assert np.max(np.abs(hv - want)) < 1e-4 * (1 + np.max(np.abs(want))), (hv, want)


@pytest.mark.parametrize("case", sorted(CHANGES))
def test_a_rebound_name_is_read_at_the_next_call(case, monkeypatch):
    name, change = CHANGES[case]
    fn = getattr(m, name)
    transforms = _transforms(fn)
    _check(fn, transforms)  # (built for the names as they were)
    before = fn(X.copy())
    _set(monkeypatch, change)
    assert fn(X.copy()) != before, "the change must change the function's value"
    _check(fn, transforms)
    _check(fn, _transforms(fn))  # (and new transforms: no process-wide stale IR)


def test_grad_of_grad_reads_names_at_each_call(monkeypatch):
    def second(x0):  # d2/dx2 of SCALE * x**2 is 2 * SCALE
        return srcad.grad(srcad.grad(m.scaled))(x0)

    gg = srcad.grad(srcad.grad(m.scaled))
    assert gg(0.7) == pytest.approx(2 * m.SCALE)
    monkeypatch.setattr(m, "SCALE", 7.0)
    assert gg(0.7) == pytest.approx(14.0)
    assert second(0.7) == pytest.approx(14.0)


def test_an_equal_value_keeps_the_code(monkeypatch):
    """`SCALE = 2.0` again (a new float object of equal value): the guard accepts it without
    rebuilding; an array of the same shape and dtype is rebound in the generated module."""
    g = srcad.grad(m.scaled)
    g(X)
    built = dict(g._cache)
    monkeypatch.setattr(m, "SCALE", float(repr(m.SCALE)))
    assert np.array_equal(g(X), 4.0 * X) and g._cache == built
    w = srcad.grad(m.weighted)
    w(X)
    built = dict(w._cache)
    monkeypatch.setattr(m, "W", np.array([7.0, 8.0, 9.0]))
    assert np.array_equal(w(X), [7.0, 8.0, 9.0])
    assert w._cache.keys() == built.keys() and all(  # (relinked, not rebuilt)
        w._cache[k].program is built[k].program for k in built)
    m.W[0] = -1.0  # (in place: the code reads the array it holds)
    assert np.array_equal(w(X), [-1.0, 8.0, 9.0])


def test_in_place_changes_are_seen(monkeypatch):
    g = srcad.grad(m.with_dict)
    assert np.allclose(g(X), 2 * 0.5 * X)
    monkeypatch.setitem(m.OPTS, "alpha", 2.5)
    assert np.allclose(g(X), 2 * 2.5 * X)


def test_decorated_above_the_names_it_reads():
    """`@srcad.grad` runs before `later_helper` and `LATER` exist: the first call finds them."""
    want = 2.0 * (1 - np.tanh(X) ** 2)
    assert np.allclose(m.uses_later(X), want)


def test_a_name_deleted_is_the_callers_error(monkeypatch):
    g = srcad.grad(m.scaled)
    g(X)
    monkeypatch.delattr(m, "SCALE")
    with pytest.raises(srcad.SrcadError, match="SCALE"):
        g(X)


def test_guards_are_few_and_named():
    """What a specialisation assumed, and nothing about numpy's own attributes."""
    g = srcad.grad(m.caller)
    g(X)
    seen = {(kind, name) for kind, _, name, _ in g._guards.entries}
    assert seen == {("global", "np"), ("global", "callee"), ("global", "SCALE")}, seen
    assert isinstance(g._guards, guards.Guards)


def test_a_pending_pullback_keeps_what_its_forward_read(monkeypatch):
    """vjp's pullback, called after a global array it reads was rebound, gives the gradient at
    the forward's values (JAX's semantics: the pullback closes over the forward)."""
    out, pullback = srcad.vjp(m.weighted, X.copy())
    monkeypatch.setattr(m, "W", np.array([7.0, 8.0, 9.0]))
    (g,) = pullback(1.0)
    assert np.array_equal(g, [0.5, -1.0, 2.0])
    out2, pullback2 = srcad.vjp(m.weighted, X.copy())
    assert np.array_equal(pullback2(1.0)[0], [7.0, 8.0, 9.0]) and out2 == m.weighted(X)


@pytest.mark.parametrize("with_c", [True, False], ids=["C check", "Python check"])
def test_both_checks_agree(with_c, monkeypatch):
    """The C runtime's guards_hold and the Python fallback give the same verdicts."""
    if not with_c:
        monkeypatch.setattr(guards, "c_helper", lambda name: None)
    elif guards.c_helper("guards_hold") is None:
        pytest.skip("the C runtime is not installed")
    d, cell_owner = {"a": 1.5, "f": np.tanh}, m.make_closure(2.0)
    cell = cell_owner[0].__closure__[0]

    class K:
        beta = 2.0

        def meth(self):
            return 1

    k = K()
    layers = [K(), K()]
    c0, beta0, first = cell.cell_contents, K.beta, layers[0]
    g = guards.Guards([("global", d, "a", d["a"]), ("global", d, "f", np.tanh),
                       ("absent", d, "len"), ("cell", cell, "c", cell.cell_contents),
                       ("attr", K, "beta", K.beta), ("attr", k, "meth", k.meth),
                       ("items", layers, 2, layers)])
    assert g.holds()
    for change, undo in [(lambda: d.__setitem__("a", 9.0), lambda: d.__setitem__("a", 1.5)),
                         (lambda: d.__setitem__("len", 1), lambda: d.pop("len")),
                         (lambda: cell_owner[1](5.0), lambda: cell_owner[1](c0)),
                         (lambda: setattr(K, "beta", 3.0), lambda: setattr(K, "beta", beta0)),
                         (lambda: setattr(k, "meth", lambda: 2), lambda: delattr(k, "meth")),
                         (lambda: layers.append(K()), lambda: layers.pop()),
                         (lambda: layers.__setitem__(0, K()),
                          lambda: layers.__setitem__(0, first))]:
        change()
        g.__dict__.pop("holds", None)
        assert not g.holds(), change
        undo()
        g.__dict__.pop("holds", None)
        assert g.holds()
