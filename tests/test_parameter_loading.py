"""Loading parameters into built layers with ``zip`` (a probe of numpy layer libraries,
2026-12-04, third session).

``for layer, W in zip(layers, params): layer.W = W`` gave a gradient of zeros in source mode,
silently (tape mode was right): objects.py did not follow a loop over ``zip`` of built
objects, the loop ran as written, and the store ``layer.W = W`` into an object picked from
the list made no dependence in the refusals' analysis, so ``layers[0].forward(X)`` ran as a
call with nothing differentiated. Now (1) such a loop is unrolled, one copy of the body per
item, as many as the shortest sequence gives (Python's zip), and (2) a store of a
differentiated value into an object that runs as written makes that object -- and the
objects it was picked from -- depend on the value, so a method of it that is not followed
is refused. nnfs's ``Model.set_parameters``: ``for parameter_set, layer in zip(parameters,
self.layers): layer.set_parameters(*parameter_set)`` (a starred call of a method with a
fixed signature: its items by index, after Python's count check).
"""

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = ["source", "tape", pytest.param("fuse", marks=pytest.mark.slow)]  # (fuse: a C build each)
R = np.random.default_rng(5)
X = R.standard_normal((3, 2))
PAIRS = [(R.standard_normal((2, 2)), R.standard_normal(2)) for _ in range(2)]
WS = [R.standard_normal((2, 2)) for _ in range(2)]


def _flat_check(fn, mode, params, *rest):
    """Gradient of fn w.r.t. a list (of arrays, or of tuples of arrays) against central
    differences, item by item."""
    how = srcad.value_and_grad
    t = how(fn, fuse=True) if mode == "fuse" else how(fn, mode=mode)
    value, grad = t(params, *rest)
    np.testing.assert_allclose(value, fn(params, *rest), rtol=1e-12)
    nested = isinstance(params[0], tuple)
    flat = [a for p in params for a in p] if nested else list(params)
    got = [a for g in grad for a in g] if nested else list(grad)

    def rebuild(arrays):
        if not nested:
            return list(arrays)
        out, k = [], 0
        for p in params:
            out.append(tuple(arrays[k:k + len(p)]))
            k += len(p)
        return out

    for i, g in enumerate(got):
        def one(a, i=i):
            arrays = list(flat)
            arrays[i] = a
            return fn(rebuild(arrays), *rest)
        np.testing.assert_allclose(g, numerical_grad(one, (flat[i],)), rtol=1e-6, atol=1e-8)
    return grad


class Dense:
    def __init__(self, n=2):
        self.W = np.zeros((n, n))
        self.b = np.zeros(n)

    def forward(self, x):
        return np.tanh(x @ self.W + self.b)

    def set_parameters(self, W, b):
        self.W = W
        self.b = b


def zip_weights(params, x):
    layers = [Dense(), Dense()]
    for layer, W in zip(layers, params):
        layer.W = W
    h = x
    for layer in layers:
        h = layer.forward(h)
    return np.sum(h ** 2)


def zip_pairs_unpacked(params, x):
    layers = [Dense(), Dense()]
    for layer, (W, b) in zip(layers, params):
        layer.W = W
        layer.b = b
    return np.sum(layers[1].forward(layers[0].forward(x)) ** 2)


def zip_three(params, x):
    Ws = [p[0] for p in params]
    bs = [p[1] for p in params]
    layers = [Dense(), Dense()]
    for W, layer, b in zip(Ws, layers, bs):
        layer.set_parameters(W, b)
    h = x
    for layer in layers:
        h = layer.forward(h)
    return np.sum(h)


def zip_shorter(params, x):
    """One weight for two layers: zip stops after the first, the second keeps its zeros."""
    layers = [Dense(), Dense()]
    for layer, W in zip(layers, params[:1]):
        layer.W = W + 0.5
    return np.sum(layers[0].forward(x) * 2.0 + layers[1].forward(x) + 1.0)


class Model:
    """nnfs's: layers added one by one, parameters loaded from a list of (W, b) tuples."""

    def __init__(self):
        self.layers = []

    def add(self, layer):
        self.layers.append(layer)

    def set_parameters(self, parameters):
        for parameter_set, layer in zip(parameters, self.layers):
            layer.set_parameters(*parameter_set)

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


def model_set_parameters(params, x):
    model = Model()
    model.add(Dense())
    model.add(Dense())
    model.set_parameters(params)
    return np.sum(model.forward(x) ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [zip_weights, zip_shorter])
def test_zip_loads_weights(fn, mode):
    _flat_check(fn, mode, WS, X)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [zip_pairs_unpacked, zip_three, model_set_parameters])
def test_zip_loads_pairs(fn, mode):
    _flat_check(fn, mode, PAIRS, X)


def test_the_silent_zeros_are_gone():
    g = srcad.grad(zip_weights)(WS, X)
    assert all(np.abs(a).max() > 0 for a in g)


def test_a_starred_set_parameters_checks_the_count_as_python_does():
    bad = [(a, b, b) for a, b in PAIRS]
    with pytest.raises(TypeError):
        model_set_parameters(bad, X)
    with pytest.raises(TypeError):
        srcad.grad(model_set_parameters)(bad, X)


def zip_with_break(params, x):
    """A loop srcad does not unroll (a break): run as written, the store goes into an object
    of the list, which `forward` reads -- refused, never a gradient of zeros."""
    layers = [Dense(), Dense()]
    for layer, W in zip(layers, params):
        layer.W = W
        if W.shape[0] > 5:
            break
    return np.sum(layers[0].forward(x))


def test_a_store_into_an_object_run_as_written_is_refused():
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(zip_with_break)(WS, X)
    assert "test_parameter_loading.py" in str(e.value)
