"""Stores into layers picked by tests srcad knows when it builds the code (calls.py
`known_predicate`, frontend/objcomps.py, loops.py `_objects_of`).

From-scratch layer code loads parameters into the layers that have them:

    for layer in net.layers:               dense = [l for l in net.layers
        if isinstance(layer, Dense):                if hasattr(l, "W")]
            layer.W = Ws[k]; k += 1        for l, W in zip(dense, Ws): l.W = W

srcad refused both (a store into an object under a test known only when the code runs, or
into the items of a list it built when the code runs, is one it cannot carry to the methods
that read it). Now `isinstance` / `issubclass` / `callable` / `hasattr` of objects known
here are constants (the branch Python takes is the code), a comprehension over a known list
of objects filtered by such tests is the display of the objects it keeps, and a loop over a
display of known objects is written out per object.

Checked: every program's value and gradient against tape mode (Python running the function
itself) and finite differences, float64; the code rebuilt when the list, a class test's
object or an attribute's presence changes between calls; a presence changed during the call
stops the call at the test, never a branch taken silently; a class with a metaclass of its
own (an ABC, whose `register` can change the answer) tested when the code runs.
"""

from __future__ import annotations

import abc

import numpy as np
import pytest

import srcad


class Dense:
    def __init__(self, n_in, n_out, rng):
        self.W = rng.standard_normal((n_in, n_out)) * 0.3
        self.b = rng.standard_normal(n_out) * 0.1
        self.trainable = True

    def forward(self, x):
        return x @ self.W + self.b


class Frozen(Dense):
    def __init__(self, n_in, n_out, rng):
        super().__init__(n_in, n_out, rng)
        self.trainable = False


class Tanh:
    def forward(self, x):
        return np.tanh(x)


class Net:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


_rng = np.random.default_rng(5)
net = Net([Dense(3, 4, _rng), Tanh(), Frozen(4, 4, _rng), Tanh(), Dense(4, 2, _rng)])
X = _rng.standard_normal((6, 3))


def _loss():
    return np.sum(net.forward(X) ** 2)


def load_by_isinstance(Ws):
    k = 0
    for layer in net.layers:
        if isinstance(layer, Dense):
            layer.W = Ws[k]
            k = k + 1
    return _loss()


def load_by_hasattr(Ws):
    k = 0
    for layer in net.layers:
        if hasattr(layer, "W"):
            layer.W = Ws[k]
            k += 1
    return _loss()


def load_by_not_isinstance(Ws):
    k = 0
    for layer in net.layers:
        if not isinstance(layer, Tanh):
            layer.W = Ws[k]
            k = k + 1
    return _loss()


def load_by_tuple_of_classes(Ws):
    k = 0
    for layer in net.layers:
        if isinstance(layer, (Frozen, Dense)) and not isinstance(layer, Tanh):
            layer.W = Ws[k]
            k = k + 1
    return _loss()


def load_filtered_zip(Ws):
    dense = [layer for layer in net.layers if hasattr(layer, "W")]
    for layer, W in zip(dense, Ws):
        layer.W = W
    return _loss()


def load_filtered_enumerate(Ws):
    dense = [layer for layer in net.layers if isinstance(layer, Dense)]
    for i, layer in enumerate(dense):
        layer.W = Ws[i]
    return _loss()


def load_trainable_flag(Ws):
    # (Frozen's flag is False: only the two trainable layers take the given matrices)
    trained = [layer for layer in net.layers if not isinstance(layer, Tanh) and layer.trainable]
    for layer, W in zip(trained, Ws):
        layer.W = W
    return _loss()


def load_by_flag_in_loop(Ws):
    k = 0
    for layer in net.layers:
        if isinstance(layer, Dense) and layer.trainable:
            layer.W = Ws[k]
            k = k + 1
    return _loss()


def load_display_zip(Ws):
    picked = [net.layers[0], net.layers[2], net.layers[4]]
    for layer, W in zip(picked, Ws):
        layer.W = W
    return _loss()


def scale_selected(s):
    for layer in [layer for layer in net.layers if isinstance(layer, Dense)]:
        layer.b = layer.b * s
    return _loss()


def regularised(Ws):
    dense = [layer for layer in net.layers if hasattr(layer, "W")]
    for layer, W in zip(dense, Ws):
        layer.W = W
    mats = [layer.W for layer in net.layers if hasattr(layer, "W")]
    return _loss() + 0.1 * sum(np.sum(W * W) for W in mats)


def _weights():
    return [net.layers[i].W.copy() for i in (0, 2, 4)]


def _restore(saved):
    for i, W in zip((0, 2, 4), saved):
        net.layers[i].W = W


def _fd(f, Ws, eps=1e-6):
    out = []
    for j, W in enumerate(Ws):
        g = np.zeros_like(W)
        for idx in np.ndindex(W.shape):
            up = [w.copy() for w in Ws]
            down = [w.copy() for w in Ws]
            up[j][idx] += eps
            down[j][idx] -= eps
            g[idx] = (f(up) - f(down)) / (2 * eps)
        out.append(g)
    return out


def load_by_index_named(Ws):
    dense = [layer for layer in net.layers if hasattr(layer, "W")]
    for i in range(len(dense)):
        layer = dense[i]
        layer.W = Ws[i]
    return _loss()


def load_by_global_index(Ws):
    for i in range(len(DENSE)):
        DENSE[i].W = Ws[i]
    return _loss()


DENSE = [net.layers[0], net.layers[2], net.layers[4]]

LOADERS = [load_by_isinstance, load_by_hasattr, load_by_not_isinstance,
           load_by_tuple_of_classes, load_filtered_zip, load_filtered_enumerate,
           load_display_zip, regularised, load_by_index_named, load_by_global_index]


@pytest.mark.parametrize("fn", LOADERS, ids=lambda f: f.__name__)
def test_loading_into_known_layers(fn):
    saved = _weights()
    try:
        Ws = [w + 0.05 for w in saved]
        value, grads = srcad.value_and_grad(fn)(Ws)
        t_value, t_grads = srcad.value_and_grad(fn, mode="tape")(Ws)
        assert value == fn([w.copy() for w in Ws])
        assert len(grads) == 3
        for g, t, want in zip(grads, t_grads, _fd(fn, Ws)):
            np.testing.assert_array_equal(g, t)
            np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)
    finally:
        _restore(saved)


@pytest.mark.parametrize("fn", [load_trainable_flag, load_by_flag_in_loop],
                         ids=lambda f: f.__name__)
def test_a_flag_of_the_layer_is_decided_when_the_code_is_built(fn):
    """`layer.trainable` was a value tested when the code ran (a context manager,
    `model.eval()`, may change it during the call), and a store under it was refused. Now
    it is decided when the code is built where no method of the class but `__init__` and no
    function of this file or the class's sets it (knowntests.py `StaticTest`; the context
    manager of tests/test_probe16_forms.py switching `training` is such a function), and
    read again where the test runs: a flag set during the call by code elsewhere stops the
    call there (tests/test_attribute_tests_decided.py), never the other branch silently."""
    saved = _weights()
    try:
        Ws = [saved[0] + 0.1, saved[2] - 0.1]
        grads = srcad.grad(fn)([w.copy() for w in Ws])
        t_grads = srcad.grad(fn, mode="tape")([w.copy() for w in Ws])
        assert len(grads) == 2
        for g, t, want in zip(grads, t_grads, _fd(fn, Ws)):
            np.testing.assert_array_equal(g, t)
            np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)
    finally:
        _restore(saved)


class Lazy:
    def forward(self, x):
        if not hasattr(self, "W"):
            self.W = np.ones((x.shape[-1], x.shape[-1])) * 0.5
        return x @ self.W


lazy_net = Net([Lazy(), Tanh()])


def lazily_built_regularised(x):
    out = lazy_net.forward(x)
    mats = [layer.W for layer in lazy_net.layers if hasattr(layer, "W")]
    return np.sum(out ** 2) + sum(np.sum(W * W) for W in mats)


def test_an_attribute_made_during_the_call_stops_the_comprehension():
    """The layer builds its `W` in its first forward, during the call: the comprehension's
    `hasattr` decided when the code was built (no `W` yet) is checked where it stands, and
    the call stops there rather than leave the regulariser out. Built, the next code keeps
    it -- the value and gradient Python gives."""
    x = np.array([[0.5, -1.0]])
    if hasattr(lazy_net.layers[0], "W"):
        del lazy_net.layers[0].W
    g = srcad.value_and_grad(lazily_built_regularised)
    with pytest.raises(srcad.SrcadError, match="added or deleted") as e:
        g(x)
    assert e.value.filename is not None and e.value.lineno is not None  # (the test's line)
    assert hasattr(lazy_net.layers[0], "W")  # (the call ran up to the check)
    value, grad = g(x)
    assert value == lazily_built_regularised(x)
    eps = 1e-6
    want = [(lazily_built_regularised(x + eps * np.eye(2)[i]) -
             lazily_built_regularised(x - eps * np.eye(2)[i])) / (2 * eps) for i in range(2)]
    np.testing.assert_allclose(grad[0], want, rtol=1e-6)


def test_scale_selected_biases():
    saved = [net.layers[i].b.copy() for i in (0, 2, 4)]
    try:
        g = srcad.grad(scale_selected)(1.3)
        for i, b in zip((0, 2, 4), saved):
            net.layers[i].b = b
        up, down = scale_selected(1.3 + 1e-6), None
        for i, b in zip((0, 2, 4), saved):
            net.layers[i].b = b
        down = scale_selected(1.3 - 1e-6)
        np.testing.assert_allclose(g, (up - down) / 2e-6, rtol=1e-6)
    finally:
        for i, b in zip((0, 2, 4), saved):
            net.layers[i].b = b


def test_the_code_follows_the_layers_between_calls():
    """A layer replaced by a new object, or by one of another class, between calls: the
    code is rebuilt for the list as it is (stale code would store into the old object, and
    the matrix it was given would get no gradient)."""
    saved_layers, saved = list(net.layers), _weights()
    g = srcad.grad(load_filtered_zip)
    try:
        Ws = [w + 0.05 for w in saved]
        g(Ws)
        net.layers[2] = Dense(4, 4, np.random.default_rng(1))
        for got, want in zip(g(Ws), _fd(load_filtered_zip, Ws)):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
        net.layers[2] = Tanh()  # (two layers with W now: zip stops at two matrices)
        two = [Ws[0], Ws[2]]
        for got, want in zip(g(two), _fd(load_filtered_zip, two)):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    finally:
        net.layers[:] = saved_layers
        _restore(saved)


class Probe:
    def __init__(self):
        self.scale = 2.0


probe = Probe()


def scaled_if_present(x):
    if hasattr(probe, "bias"):
        return np.sum(x * probe.scale + probe.bias)
    return np.sum(x * probe.scale)


def test_hasattr_follows_the_attribute_between_calls():
    g = srcad.grad(scaled_if_present)
    x = np.ones(3)
    assert scaled_if_present(x) == 6.0
    np.testing.assert_array_equal(g(x), [2.0, 2.0, 2.0])
    probe.bias = np.array([1.0, 2.0, 3.0])
    try:
        value, grad = srcad.value_and_grad(scaled_if_present)(x)
        assert value == 12.0
        assert srcad.value_and_grad(scaled_if_present)(x)[0] == scaled_if_present(x)
        np.testing.assert_array_equal(g(x), [2.0, 2.0, 2.0])
        probe.scale = 3.0
        np.testing.assert_array_equal(g(x), [3.0, 3.0, 3.0])
        assert srcad.value_and_grad(scaled_if_present)(x)[0] == 15.0
    finally:
        del probe.bias
        probe.scale = 2.0
    f = srcad.value_and_grad(scaled_if_present)
    assert f(x)[0] == 6.0


def adds_then_tests(x):
    probe.extra = x * 2.0
    if hasattr(probe, "late"):
        return np.sum(probe.late * x)
    probe.late = x
    return np.sum(x * x)


def test_presence_changed_during_the_call_is_not_a_silent_branch():
    """`hasattr` answered when the code was built; the call itself adds the attribute
    before a later call's test: the next call rebuilds (guarded), and the first answer was
    Python's."""
    x = np.array([1.0, 2.0])
    try:
        g = srcad.value_and_grad(adds_then_tests)
        v1, g1 = g(x)  # (no `late` yet: the second branch, which adds it)
        np.testing.assert_array_equal(g1, 2 * x)
        v2, g2 = g(x)  # (now `late` is there: the first branch, rebuilt for it)
        assert v2 == np.sum(x * x)
        np.testing.assert_array_equal(g2, probe.late)
    finally:
        for name in ("extra", "late"):
            if hasattr(probe, name):
                delattr(probe, name)


def test_during_the_call_change_stops_at_the_test():
    x = np.array([1.0, 2.0])

    try:
        g = srcad.grad(sets_then_tests)
        with pytest.raises(srcad.SrcadError, match="added or deleted") as e:
            g(x)
        line = sets_then_tests.__code__.co_firstlineno + 2  # (`if hasattr(probe, "late2"):`)
        assert (e.value.filename, e.value.lineno) == (__file__, line)
    finally:
        if hasattr(probe, "late2"):
            del probe.late2


def sets_then_tests(x):
    probe.late2 = 1.0
    if hasattr(probe, "late2"):
        return np.sum(x * 3.0)
    return np.sum(x)


class Base(abc.ABC):
    @abc.abstractmethod
    def forward(self, x): ...


class Impl:
    def __init__(self):
        self.W = np.eye(2)

    def forward(self, x):
        return x @ self.W


impl = Impl()


def abc_test(x):
    if isinstance(impl, Base):
        return np.sum(x * 2.0)
    return np.sum(impl.forward(x))


def test_abc_class_tested_when_the_code_runs():
    g = srcad.grad(abc_test)
    x = np.array([[1.0, 2.0]])
    np.testing.assert_array_equal(g(x), [[1.0, 1.0]])
    assert "isinstance(" in srcad.source(g)
    Base.register(Impl)  # (the answer changes with no rebinding srcad could guard)
    np.testing.assert_array_equal(g(x), [[2.0, 2.0]])


def test_known_test_source_reads_plainly():
    saved = _weights()
    try:
        g = srcad.grad(load_by_isinstance)
        g([w for w in saved])
        src = srcad.source(g)
        assert "isinstance(" not in src and "hasattr(" not in src
    finally:
        _restore(saved)


# ---- an object's dict updated from a dict argument -----------------------------------------
# `net.params.update(params)` then `net.loss(X, y)` reading `self.params["W1"]`: srcad ran the
# update as a call it does not follow, and the reads in the method carried no gradient -- a
# gradient of zeros, silently (found 2026-12-06 probing CS231n-style models). Now the update
# is its stores by key (objcomps.held_dict_updates), and such a call is refused where it is
# still opaque (analysis/refusals.py `_bound_container`).

class DictModel:
    def __init__(self, rng):
        self.params = {"W1": rng.standard_normal((3, 5)) * 0.4, "b1": np.zeros(5),
                       "W2": rng.standard_normal((5, 2)) * 0.4}
        self.reg = 0.1

    def loss(self, X):
        p = self.params
        h = np.maximum(0.0, X @ p["W1"] + p["b1"])
        return np.sum(np.tanh(h @ p["W2"]) ** 2) + self.reg * np.sum(p["W1"] ** 2)


dict_model = DictModel(np.random.default_rng(8))
XD = np.random.default_rng(9).standard_normal((4, 3))


def updated_then_loss(params):
    dict_model.params.update(params)
    return dict_model.loss(XD)


def rebound_then_loss(params):
    dict_model.params = params
    return dict_model.loss(XD)


def extended_then_loss(params):
    dict_model.params.setdefault("W1", params["W1"])
    return dict_model.loss(XD)


def _fd_dict(f, P, eps=1e-6):
    out = {}
    for k in P:
        g = np.zeros_like(P[k])
        for idx in np.ndindex(P[k].shape):
            up = {j: v.copy() for j, v in P.items()}
            down = {j: v.copy() for j, v in P.items()}
            up[k][idx] += eps
            down[k][idx] -= eps
            g[idx] = (f(up) - f(down)) / (2 * eps)
        out[k] = g
    return out


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", [updated_then_loss, rebound_then_loss], ids=lambda f: f.__name__)
def test_dict_of_an_object_given_the_arguments(fn, mode):
    saved = dict_model.params
    try:
        P = {k: v + 0.01 for k, v in saved.items()}
        dict_model.params = dict(saved)
        value, grads = srcad.value_and_grad(fn, mode=mode)(P)
        if fn is rebound_then_loss:
            assert dict_model.params is P  # (the caller's own dict, as in Python)
        assert all(type(v) is np.ndarray for v in dict_model.params.values())
        dict_model.params = dict(saved)
        want = _fd_dict(lambda q: (setattr(dict_model, "params", dict(saved)), fn(q))[1], P)
        assert sorted(grads) == sorted(P)
        for k in P:
            assert np.abs(want[k]).max() > 1e-3
            np.testing.assert_allclose(grads[k], want[k], rtol=1e-6, atol=1e-8)
    finally:
        dict_model.params = saved


def test_an_opaque_change_of_an_objects_dict_is_refused():
    saved = dict_model.params
    try:
        dict_model.params = {k: v for k, v in saved.items() if k != "W1"}
        with pytest.raises(srcad.SrcadError, match="changes `dict_model.params`"):
            srcad.grad(extended_then_loss)({"W1": saved["W1"] + 0.0})
    finally:
        dict_model.params = saved


class AttrModel:
    def __init__(self, rng):
        self.W1 = rng.standard_normal((3, 4)) * 0.5
        self.W2 = rng.standard_normal((4, 2)) * 0.5

    def loss(self, X):
        return np.sum(np.tanh(X @ self.W1) @ self.W2)


attr_model = AttrModel(np.random.default_rng(11))


def set_by_name(params):
    for k, v in params.items():
        setattr(attr_model, k, v)
    return attr_model.loss(XD)


def test_setattr_over_a_dict_arguments_items():
    """`setattr(model, k, v)` over a dict argument's items: once per key (the call's keys),
    each a store by name -- refused before as a setattr srcad did not follow. A dict with
    other keys, or in another order, is another specialisation."""
    saved = attr_model.W1, attr_model.W2
    try:
        g = srcad.grad(set_by_name)
        for P in ({"W1": saved[0] + 0.1, "W2": saved[1] - 0.1},
                  {"W2": saved[1] * 0.5, "W1": saved[0]}, {"W2": saved[1] * 2.0}):
            attr_model.W1, attr_model.W2 = saved
            got = g(P)
            assert sorted(got) == sorted(P)
            assert all(attr_model.__dict__[k] is P[k] for k in P)  # (as Python leaves it)

            def f(q):
                attr_model.W1, attr_model.W2 = saved
                return set_by_name(q)
            want = _fd_dict(f, P)
            for k in P:
                np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-8)
    finally:
        attr_model.W1, attr_model.W2 = saved
