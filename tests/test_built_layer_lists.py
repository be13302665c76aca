"""Models whose __init__ builds its layers in a loop (`for i in range(len(Ws)):
self.layers.append(Dense(Ws[i], bs[i]))`, `zip(sizes[:-1], sizes[1:])`, an f-string key into
a dict of layers, a count given as an int argument): the loop is unrolled once the first
call's arguments give its count, and the layers are scalarised like layers built one by one.
Each against central differences, in source and tape mode, with other counts on later calls."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error


def _relu(x):
    return np.maximum(x, 0)


ACTS = {"relu": _relu, "tanh": np.tanh}


class Dense:
    def __init__(self, W, b, act=None):
        self.W = W
        self.b = b
        self.act = act

    def forward(self, x):
        z = x @ self.W + self.b
        if self.act is not None:
            z = ACTS[self.act](z)
        return z


class ByIndex:
    def __init__(self, Ws, bs):
        self.layers = []
        for i in range(len(Ws)):
            layer = Dense(Ws[i], bs[i], "tanh" if i < len(Ws) - 1 else None)
            self.layers.append(layer)

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


class ByZip:
    def __init__(self, params, sizes):
        self.layers = {}
        for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
            self.layers[f"fc{i + 1}"] = Dense(params[f"W{i + 1}"], params[f"b{i + 1}"],
                                              act="relu")
        self.n = len(self.layers)

    def forward(self, x):
        for name, layer in self.layers.items():
            x = layer.forward(x)
        return x / self.n


class ByCount:
    def __init__(self, W, n_layers, act="tanh"):
        self.blocks = []
        for _ in range(n_layers):
            self.blocks.append(Dense(W, W[0], act))

    def __call__(self, x):
        for block in reversed(self.blocks):
            x = block.forward(x) + x
        return x


def by_index(Ws, bs, X):
    return np.sum(ByIndex(Ws, bs).forward(X) ** 2)


def by_zip(params, X, sizes):
    return np.sum(np.sin(ByZip(params, sizes).forward(X)))


def by_count(W, X, n_layers):
    return np.mean(ByCount(W, n_layers)(X) ** 2)


def by_pairs(Ws, bs, X):
    layers = []
    for W, b in zip(Ws, bs):
        layers.append(Dense(W, b, "relu"))
    for layer in layers[:-1]:
        X = layer.forward(X)
    return np.sum(layers[-1].forward(X) ** 2) + len(layers)


def _net(seed, dims):
    r = np.random.default_rng(seed)
    Ws = [r.standard_normal((dims[i], dims[i + 1])) * 0.7 for i in range(len(dims) - 1)]
    bs = [r.standard_normal(dims[i + 1]) * 0.3 + 0.1 for i in range(len(dims) - 1)]
    return Ws, bs, r.standard_normal((5, dims[0]))


def _params(seed, sizes):
    Ws, bs, X = _net(seed, sizes)
    params = {}
    for i, (W, b) in enumerate(zip(Ws, bs)):
        params[f"W{i + 1}"], params[f"b{i + 1}"] = W, b
    return params, X, sizes


def _cases():
    r = np.random.default_rng(7)
    W = r.standard_normal((3, 3)) * 0.4
    return [
        (by_index, [_net(1, [3, 4, 2]), _net(2, [3, 4, 4, 5, 2]), _net(3, [3, 2])], (0, 1)),
        (by_zip, [_params(4, [3, 5, 2]), _params(5, [3, 4, 4, 2])], 0),
        (by_count, [(W, r.standard_normal((4, 3)), 2), (W, r.standard_normal((4, 3)), 3)], 0),
        (by_pairs, [_net(6, [3, 4, 2]), _net(7, [3, 5, 5, 2])], (0, 1)),
    ]


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn,calls,wrt", _cases(), ids=lambda v: getattr(v, "__name__", ""))
def test_layers_built_in_a_loop(fn, calls, wrt, mode):
    g = srcad.value_and_grad(fn, wrt=wrt, mode=mode)
    for args in calls:  # (each count its own specialisation: the same transform)
        value, got = g(*args)
        assert value == fn(*args)
        assert rel_error(got, numerical_grad(fn, args, wrt=wrt)) < 1e-6


def _helper_builds(Ws, bs, X):
    return by_index(Ws, bs, X) * 0.5  # (a helper function builds the model: counts passed on)


def test_layers_built_in_a_loop_jvp_hvp_and_through_a_helper():
    Ws, bs, X = _net(8, [3, 4, 2])
    r = np.random.default_rng(9)
    v = [r.standard_normal(W.shape) for W in Ws]
    zero = ([np.zeros_like(b) for b in bs], np.zeros_like(X))
    _, t = srcad.jvp(by_index, (Ws, bs, X), (v,) + zero)
    want = numerical_grad(by_index, (Ws, bs, X))
    assert abs(t - sum(np.sum(a * b) for a, b in zip(want, v))) < 1e-6
    g = srcad.grad(by_index)
    hv = srcad.jvp(g, (Ws, bs, X), (v,) + zero)[1]
    fd = [(a - b) / 2e-5 for a, b in zip(g([W + 1e-5 * d for W, d in zip(Ws, v)], bs, X),
                                          g([W - 1e-5 * d for W, d in zip(Ws, v)], bs, X))]
    assert rel_error(hv, fd) < 1e-5
    got = srcad.grad(_helper_builds, wrt=(0, 1))(Ws, bs, X)
    assert rel_error(got, numerical_grad(_helper_builds, (Ws, bs, X), wrt=(0, 1))) < 1e-6


class Grows:
    def __init__(self, Ws):
        self.layers = []
        for W in Ws:
            self.layers.append(Dense(W, W[0]))


def list_changed_before_the_loop(Ws, X):
    mine = [Ws[0], Ws[1]]
    mine.append(Ws[0])
    m = Grows(mine)
    for layer in m.layers:
        X = np.tanh(layer.forward(X))
    return np.sum(X ** 2)


def test_a_list_changed_in_place_is_not_taken_at_its_argument_length():
    """`mine.append(..)` before the loop: its length is not the literal's -- the right
    gradient or a refusal, never the one of a shorter model."""
    r = np.random.default_rng(10)
    args = ([r.standard_normal((3, 3)) * 0.5 for _ in range(2)], r.standard_normal((2, 3)))
    try:
        got = srcad.grad(list_changed_before_the_loop)(*args)
    except srcad.SrcadError as e:
        assert "test_built_layer_lists.py" in str(e)
        return
    assert rel_error(got, numerical_grad(list_changed_before_the_loop, args)) < 1e-6


def count_from_a_shape(W, X):
    m = ByCount(W, X.shape[0])
    return np.sum(m(X))


def test_a_count_known_only_when_running_is_refused_at_the_users_line():
    r = np.random.default_rng(11)
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(count_from_a_shape)(r.standard_normal((3, 3)), r.standard_normal((2, 3)))
    assert "test_built_layer_lists.py" in str(info.value)


# ---- layers given to a container's constructor as *args (nn.Sequential's spelling) ----------
class Layer:
    def __init__(self):
        self.cache = None

    def __call__(self, x):
        return self.forward(x)


class Affine(Layer):
    def __init__(self, W, b):
        super().__init__()
        self.W, self.b = W, b

    def forward(self, x):
        self.cache = x
        return x @ self.W + self.b


class Relu(Layer):
    def forward(self, x):
        self.cache = x > 0
        return x * self.cache


class Sequential:
    def __init__(self, *layers, scale=1.0):
        self.layers = list(layers)
        self.scale = scale

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.scale


class Stack:
    def __init__(self, *blocks):
        self.blocks = blocks  # (the tuple itself)

    def forward(self, x):
        for i in range(len(self.blocks) - 1, -1, -1):
            x = self.blocks[i].forward(x) + x
        return x


def sequential_of_layers(Ws, bs, X):
    net = Sequential(Affine(Ws[0], bs[0]), Relu(), Affine(Ws[1], bs[1]), scale=0.5)
    out = net(X)
    seen = net.layers[0].cache  # (a layer's cache, read back through the container)
    return np.sum(out ** 2) + np.sum(seen) * len(net.layers)


def stack_of_blocks(W, X):
    return np.sum(np.tanh(Stack(Dense(W, W[0], "tanh"), Dense(W.T, W[1]))
                          .forward(X)))


@pytest.mark.parametrize("mode", ["source", "tape", "fuse"])
def test_layers_given_to_a_constructor_as_star_args(mode):
    """`Sequential(Affine(..), Relu(), Affine(..))` into `def __init__(self, *layers)`: was
    refused ("`Affine` has no derivative rule"); the extra arguments are a fixed list of
    built objects, followed like a list display of them."""
    opts = dict(fuse=True) if mode == "fuse" else dict(mode=mode)
    Ws, bs, X = _net(12, [3, 4, 2])
    g = srcad.value_and_grad(sequential_of_layers, wrt=(0, 1, 2), **opts)
    value, got = g(Ws, bs, X)
    assert value == sequential_of_layers(Ws, bs, X)
    assert rel_error(got, numerical_grad(sequential_of_layers, (Ws, bs, X),
                                         wrt=(0, 1, 2))) < 1e-6
    r = np.random.default_rng(13)
    W, X = r.standard_normal((3, 3)) * 0.5, r.standard_normal((4, 3))
    value, got = srcad.value_and_grad(stack_of_blocks, wrt=(0, 1), **opts)(W, X)
    assert value == stack_of_blocks(W, X)
    assert rel_error(got, numerical_grad(stack_of_blocks, (W, X), wrt=(0, 1))) < 1e-6


class IndexedNet:
    def __init__(self, Ws, bs):
        self.layers = [Affine(Ws[0], bs[0]), Relu(), Affine(Ws[1], bs[1])]

    def forward(self, x):
        for i in range(len(self.layers)):  # (by index, as from-scratch code often loops)
            x = self.layers[i].forward(x)
        return x


def indexed_forward(Ws, bs, X):
    net = IndexedNet(Ws, bs)
    out = net.forward(X)
    for k in reversed(range(3)):  # (a local list of them, walked backwards by index)
        out = out + 0.1 * np.sum(net.layers[k].cache)
    return np.sum(out ** 2)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_list_of_objects_indexed_by_the_loop_variable(mode):
    """`for i in range(len(self.layers)): x = self.layers[i].forward(x)`: was refused ("a
    list of objects indexed by a variable"); the loop is unrolled, its count known."""
    Ws, bs, X = _net(14, [3, 4, 2])
    value, got = srcad.value_and_grad(indexed_forward, wrt=(0, 1, 2), mode=mode)(Ws, bs, X)
    assert value == indexed_forward(Ws, bs, X)
    assert rel_error(got, numerical_grad(indexed_forward, (Ws, bs, X), wrt=(0, 1, 2))) < 1e-6
