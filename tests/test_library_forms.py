"""Forms of numpy layer libraries. Callees taking ``*args`` / ``**kwargs``: the forwarding wrappers of torch-like numpy
frameworks (``Module.__call__(self, *args, **kwargs): return self.forward(*args,
**kwargs)``), decorators' wrappers and option dicts -- each call site specialises the callee
to its arguments (frontend/parse.py `star_params_for_call`), and one function called on other
objects (a model's ``__call__`` calling its layers' ``__call__``) is not recursion.

Every case: the value of calling the function and central differences, source and tape
mode; a few through vjp/jvp and fuse=True."""

from __future__ import annotations

import abc
import functools

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

MODES = ("source", "tape")


def _h(a, b=2.0, c=0.5):
    return a * b + c * np.sin(a)


def _star(*args):
    return _h(*args)


def _options(a, **kw):
    return _h(a, **kw)


def _both(*args, **kwargs):
    return _h(*args, **kwargs)


def _counted(*xs):
    total = 0.0
    for v in xs:
        total = total + np.sum(v ** 2)
    return total * len(xs)


def _get(a, **kw):
    return a * kw.get("scale", 3.0) + kw["shift"]


def _positional_then_star(a, b, *rest, scale=1.0):
    out = a * b
    for r in rest:
        out = out + r
    return out * scale


class Module:
    def __init__(self):
        self.training = True

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class Linear(Module):
    def __init__(self, n_in, n_out, seed):
        super().__init__()
        r = np.random.RandomState(seed)
        self.W = r.randn(n_in, n_out) / np.sqrt(n_in)
        self.b = np.zeros(n_out)

    def forward(self, x, **unused):
        return x.dot(self.W) + self.b


class Tanh(Module):
    def forward(self, x, train=False):
        return np.tanh(x)


class Dropout(Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x, train=False):
        if not train:
            return x
        mask = np.random.RandomState(0).rand(*x.shape) > self.p
        return x * mask / (1 - self.p)


class Sequential(Module):
    def __init__(self, *mods):
        super().__init__()
        self.mods = list(mods)

    def forward(self, x, **kwargs):
        for m in self.mods:
            x = m(x, **kwargs)
        return x


MODEL = Sequential(Linear(4, 6, 0), Tanh(), Dropout(0.5), Linear(6, 2, 1))


def _logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@_logged
def _layer(x, W, scale=1.0):
    return np.tanh(x @ W) * scale


W0 = np.random.default_rng(3).standard_normal((4, 3))


def f_star(x):
    return np.sum(_star(x, 3.0))


def f_star_all(x):
    return np.sum(_star(x, x, 0.25))


def f_options(x):
    return np.sum(_options(x, c=x, b=1.5))


def f_options_none(x):
    return np.sum(_options(x))


def f_both(x):
    return np.sum(_both(x, c=2.0)) + np.sum(_both(x, x))


def f_counted(x):
    return _counted(x, 2 * x, np.sin(x)) + _counted(x)


def f_get(x):
    return np.sum(_get(x, shift=x ** 2)) + np.sum(_get(x, scale=0.5, shift=1.0))


def f_positional_then_star(x):
    return np.sum(_positional_then_star(x, x, np.cos(x), 1.0, scale=2.0))


def f_module(x):
    return np.mean(MODEL(x) ** 2)


def f_module_train(x):
    return np.mean(MODEL(x, train=True) ** 2)


def f_decorated(x):
    return np.sum(_layer(x, W0, scale=2.0)) + np.sum(_layer(x, W0))


CASES = [f_star, f_star_all, f_options, f_options_none, f_both, f_counted, f_get,
         f_positional_then_star, f_module, f_module_train, f_decorated]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
def test_star_parameters_value_and_gradient(fn, mode):
    x = np.random.default_rng(0).standard_normal((3, 4)) + 0.1
    value, g = srcad.value_and_grad(fn, mode=mode)(x.copy())
    assert value == pytest.approx(fn(x.copy()), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (x.copy(),)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", [f_module, f_both, f_get], ids=lambda f: f.__name__)
def test_star_parameters_fused_and_forward(fn):
    x = np.random.default_rng(1).standard_normal((3, 4))
    want = srcad.grad(fn, mode="tape")(x.copy())
    np.testing.assert_allclose(srcad.grad(fn, fuse=True)(x.copy()), want, rtol=1e-10)
    t = np.random.default_rng(2).standard_normal((3, 4))
    _, tangent = srcad.jvp(fn, (x.copy(),), (t,))
    assert tangent == pytest.approx(np.sum(want * t), rel=1e-9)


def test_each_call_site_gets_its_own_specialisation():
    """`_both(x, c=2.0)` and `_both(x, x)` bind different parameters: two subroutines."""
    t = srcad.grad(f_both)
    t(np.ones((2, 4)))
    src = srcad.source(t)
    assert "def _both_fwd(" in src and "def _both_fwd_2(" in src


class Node:
    def __init__(self, child=None):
        self.child = child

    def __call__(self, x):
        return np.sin(x) if self.child is None else self.child(np.cos(x))


class Loop:
    def __call__(self, x):
        return self(x * 0.5)


CHAIN = Node(Node(Node()))
LOOP = Loop()


def f_chain(x):
    return np.sum(CHAIN(x))


def f_loop(x):
    return np.sum(LOOP(x))


@pytest.mark.parametrize("mode", MODES)
def test_one_method_on_other_objects_is_not_recursion(mode):
    x = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(srcad.grad(f_chain, mode=mode)(x),
                               numerical_grad(f_chain, (x,)), rtol=1e-7)


def test_a_method_calling_itself_on_its_own_object_is_still_refused():
    with pytest.raises(srcad.SrcadError, match="calls itself"):
        srcad.grad(f_loop)(np.ones(3))


# -- optional attributes, layers kept in lists, lazy initialisation, cached inputs ----------
# (the styles of numpy layer libraries: `bias=None`, `act_fn=None`, `self.layers[-1]`,
# `if not self.is_initialized: self._init_params()`, `self.X.append(X)`)


class Dense:
    def __init__(self, W, b=None, act=None):
        self.W, self.b, self.act = W, b, act

    def __call__(self, x):
        out = x @ self.W
        if self.b is not None:
            out = out + self.b
        if self.act is not None:
            out = self.act(out)
        return out


PLAIN = Dense(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
FULL = Dense(np.linspace(-1.0, 1.0, 12).reshape(4, 3), np.ones(3), np.tanh)


def f_plain(x):
    return np.sum(PLAIN(x) ** 2)


def f_full(x):
    return np.sum(FULL(x) ** 2)


class Gate:
    def __init__(self, act=None):
        self.act = act

    def __call__(self, z):
        return self.act(z) if self.act is not None else z


GATES = [Gate(), Gate(np.sin)]


def f_ternary_gates(x):
    return np.sum(GATES[0](x) * GATES[-1](x))


class LazyLayer:
    """A layer that makes its weights on its first call (numpy-ml's style)."""

    def __init__(self, n_out, act=None):
        self.n_in = None
        self.n_out = n_out
        self.act = Gate(np.tanh) if act is None else act
        self.is_initialized = False
        self.parameters = {"W": None, "b": None}
        self.X = []
        self.derived = {"Z": []}

    def _init_params(self):
        rng = np.random.default_rng(0)
        b = np.zeros((1, self.n_out))
        W = rng.standard_normal((self.n_in, self.n_out)) * 0.5
        self.parameters = {"W": W, "b": b}
        self.is_initialized = True

    def forward(self, X, retain_derived=True):
        if not self.is_initialized:
            self.n_in = X.shape[1]
            self._init_params()
        Z = X @ self.parameters["W"] + self.parameters["b"]
        Y = self.act(Z)
        if retain_derived:
            self.X.append(X)
            self.derived["Z"].append(Z)
        return Y


LAZY: list = []


def f_lazy(x):
    h = x
    for layer in LAZY:
        h = layer.forward(h)
    return np.sum(h ** 2)


def f_lazy_indexed(x):
    return np.sum(LAZY[1].forward(LAZY[0].forward(x, retain_derived=False),
                                  retain_derived=False) ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [f_plain, f_full, f_ternary_gates], ids=lambda f: f.__name__)
def test_optional_attributes_take_the_branch_python_takes(fn, mode):
    x = np.random.default_rng(0).standard_normal((3, 4))
    value, g = srcad.value_and_grad(fn, mode=mode)(x.copy())
    assert value == pytest.approx(fn(x.copy()), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (x.copy(),)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", MODES)
def test_an_optional_attribute_set_later_is_seen_at_the_next_call(mode):
    """The folded `self.b is not None` is guarded: setting the attribute rebuilds the code."""
    layer = Dense(np.linspace(-1.0, 1.0, 12).reshape(4, 3))

    def f(x):
        return np.sum(layer(x) ** 2)

    x = np.random.default_rng(1).standard_normal((3, 4))
    t = srcad.value_and_grad(f, mode=mode)
    t(x)
    layer.b = np.full(3, 0.5)
    layer.act = np.sin
    value, g = t(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(f, (x,)), rtol=1e-6, atol=1e-8)
    layer.b = None
    value, g = t(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(f, (x,)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [f_lazy, f_lazy_indexed], ids=lambda f: f.__name__)
def test_layers_initialised_on_their_first_call(fn, mode):
    """The first call makes the weights (the shape probe sees the attributes the call sets
    before its callee reads them), later calls reuse them; the cached inputs are the
    arrays Python would have appended."""
    LAZY[:] = [LazyLayer(5), LazyLayer(2)]
    x = np.random.default_rng(2).standard_normal((3, 4))
    t = srcad.value_and_grad(fn, mode=mode)
    value, g = t(x.copy())
    assert all(layer.is_initialized for layer in LAZY)
    W0 = LAZY[0].parameters["W"]
    assert value == pytest.approx(fn(x.copy()), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (x.copy(),)), rtol=1e-6, atol=1e-8)
    assert LAZY[0].parameters["W"] is W0  # (made once)
    if fn is f_lazy:
        kept = LAZY[0].X[0]
        np.testing.assert_array_equal(kept, x)
        np.testing.assert_allclose(LAZY[1].derived["Z"][0],
                                   np.tanh(x @ W0) @ LAZY[1].parameters["W"], rtol=1e-12)


class Scale:
    def __init__(self, s):
        self.s = s

    def forward(self, x):
        return np.tanh(x * self.s)


STACK = [Scale(1.0), Scale(2.0)]


def f_stack(x):
    h = x
    for layer in STACK:
        h = layer.forward(h)
    return np.sum(h)


@pytest.mark.parametrize("mode", MODES)
def test_a_list_of_layers_changed_in_place_is_seen_at_the_next_call(mode):
    """The loop is unrolled over the list's objects: `STACK[:] = ...` and `STACK.append(...)`
    change what the function computes (silently stale before: the items were not guarded)."""
    x = np.linspace(0.1, 1.0, 4)
    t = srcad.value_and_grad(f_stack, mode=mode)
    try:
        for change in (lambda: STACK.__setitem__(slice(None), [Scale(3.0), Scale(0.5)]),
                       lambda: STACK.append(Scale(1.5)), lambda: STACK.pop(0)):
            change()
            value, g = t(x)
            assert value == pytest.approx(f_stack(x), rel=1e-12)
            np.testing.assert_allclose(g, numerical_grad(f_stack, (x,)), rtol=1e-6)
    finally:
        STACK[:] = [Scale(1.0), Scale(2.0)]


class ActivationBase(abc.ABC):
    """numpy-ml's pattern: an abstract base, `__call__` handing over to `fn`."""

    def __call__(self, z):
        if z.ndim == 1:
            z = z.reshape(1, -1)
        return self.fn(z)

    @abc.abstractmethod
    def fn(self, z):
        raise NotImplementedError


class SoftPlus(ActivationBase):
    def fn(self, z):
        return np.log1p(np.exp(z))


class Affine(abc.ABC):
    def __init__(self, W):
        self.W = W

    def forward(self, X):
        return X @ self.W


def f_abc_built_inside(x):
    act = SoftPlus()
    layer = Affine(np.full((4, 2), 0.25))
    return np.sum(act(layer.forward(x)) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_classes_with_an_abstract_base_built_in_the_function(mode):
    x = np.random.default_rng(4).standard_normal((3, 4))
    value, g = srcad.value_and_grad(f_abc_built_inside, mode=mode)(x.copy())
    assert value == pytest.approx(f_abc_built_inside(x.copy()), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(f_abc_built_inside, (x.copy(),)), rtol=1e-6)


def _singular(x):
    return np.sum(np.linalg.inv(np.outer(x, x)))


def _bad_shapes(x):
    return np.sum(x @ np.ones((7, 2)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, kind", [(_singular, np.linalg.LinAlgError),
                                      (_bad_shapes, ValueError)], ids=["singular", "shapes"])
def test_the_users_own_exception_is_caught_by_its_type(fn, kind, mode):
    """`except np.linalg.LinAlgError:` around a transformed call catches what the plain call
    raises, on the first call (srcad's shape probe) and later ones, in both modes; source
    mode's is a SrcadError at the user's line too (errors.user_error)."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    t = srcad.grad(fn, mode=mode)
    for _ in range(2):
        with pytest.raises(kind) as info:
            t(x)
        if mode == "source":
            assert isinstance(info.value, srcad.SrcadError)
            assert "test_library_forms.py" in str(info.value)


class LayerBase(abc.ABC):
    def __init__(self):
        self.act_fn = None  # (numpy-ml: the base says "none yet", the subclass sets one)
        self.parameters = {}

    @abc.abstractmethod
    def forward(self, X):
        raise NotImplementedError


class FC(LayerBase):
    def __init__(self, W, act_fn=None):
        super().__init__()
        self.act_fn = SoftPlus() if act_fn is None else act_fn
        self.parameters = {"W": W}

    def forward(self, X):
        return self.act_fn(X @ self.parameters["W"])


def f_base_none_then_object(W):
    x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    return np.sum(FC(W).forward(x) ** 2) + np.sum(FC(W, Gate(np.tanh)).forward(x))


@pytest.mark.parametrize("mode", MODES)
def test_an_attribute_a_base_class_sets_to_none_then_an_object(mode):
    W = np.random.default_rng(5).standard_normal((4, 2))
    value, g = srcad.value_and_grad(f_base_none_then_object, mode=mode)(W.copy())
    assert value == pytest.approx(f_base_none_then_object(W.copy()), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(f_base_none_then_object, (W.copy(),)),
                               rtol=1e-6)


# -- "forward stores, the caller reads" (Neural Networks from Scratch's style) ----------------
# `dense1.forward(X); activation1.forward(dense1.output)`: forward returns nothing and keeps
# its result on the object. Source mode read `dense1.output` as the value an earlier plain call
# had left there (a zero gradient, a stale value: silently) or refused a cold first call.


class LayerDense:
    def __init__(self, n_inputs, n_neurons, l2=0.0):
        self.weights = 0.1 * np.random.RandomState(0).randn(n_inputs, n_neurons)
        self.biases = np.zeros((1, n_neurons))
        self.l2 = l2

    def forward(self, inputs, training):
        self.inputs = inputs
        self.output = np.dot(inputs, self.weights) + self.biases


class ActivationReLU:
    def forward(self, inputs, training):
        self.inputs = inputs
        self.output = np.maximum(0, inputs)


class ActivationSoftmax:
    def forward(self, inputs, training):
        self.inputs = inputs
        exp_values = np.exp(inputs - np.max(inputs, axis=1, keepdims=True))
        self.output = exp_values / np.sum(exp_values, axis=1, keepdims=True)


class LossCCE:
    def remember_trainable_layers(self, layers):
        self.trainable_layers = layers

    def regularization_loss(self):
        total = 0
        for layer in self.trainable_layers:
            if layer.l2 > 0:
                total += layer.l2 * np.sum(layer.weights * layer.weights)
        return total

    def calculate(self, output, y, *, include_regularization=False):
        data_loss = np.mean(self.forward(output, y))
        if not include_regularization:
            return data_loss
        return data_loss, self.regularization_loss()

    def forward(self, y_pred, y_true):
        samples = len(y_pred)
        clipped = np.clip(y_pred, 1e-7, 1 - 1e-7)
        if len(y_true.shape) == 1:
            correct = clipped[range(samples), y_true]
        else:
            correct = np.sum(clipped * y_true, axis=1)
        return -np.log(correct)


class Model:
    """The book's Model: layers linked by `prev`, each forward reading `prev.output`."""

    def __init__(self, layers):
        self.layers = layers
        for i, layer in enumerate(layers):
            layer.prev = layers[i - 1] if i > 0 else None

    def forward(self, X, training):
        self.layers[0].forward(X, training)
        for layer in self.layers[1:]:
            layer.forward(layer.prev.output, training)
        return self.layers[-1].output


NN_DENSE1, NN_ACT1 = LayerDense(4, 8, l2=5e-4), ActivationReLU()
NN_DENSE2, NN_ACT2 = LayerDense(8, 3), ActivationSoftmax()
NN_LOSS = LossCCE()
NN_LOSS.remember_trainable_layers([NN_DENSE1, NN_DENSE2])
NN_Y = np.array([0, 1, 2, 1, 0])
NN_MODEL = Model([LayerDense(4, 6), ActivationReLU(), LayerDense(6, 3), ActivationSoftmax()])


def nnfs_loss(X):
    NN_DENSE1.forward(X, training=True)
    NN_ACT1.forward(NN_DENSE1.output, training=True)
    NN_DENSE2.forward(NN_ACT1.output, training=True)
    NN_ACT2.forward(NN_DENSE2.output, training=True)
    data_loss, reg = NN_LOSS.calculate(NN_ACT2.output, NN_Y, include_regularization=True)
    return data_loss + reg


def nnfs_model_loss(X):
    out = NN_MODEL.forward(X, training=True)
    return NN_LOSS.calculate(out, NN_Y)


@pytest.mark.parametrize("warm", [False, True], ids=["first call", "after a plain call"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [nnfs_loss, nnfs_model_loss], ids=lambda f: f.__name__)
def test_forward_stores_on_the_object_and_the_caller_reads_it(fn, mode, warm):
    X = np.random.default_rng(6).standard_normal((5, 4))
    for layer in (NN_DENSE1, NN_ACT1, NN_DENSE2, NN_ACT2, *NN_MODEL.layers):
        layer.__dict__.pop("output", None)
    if warm:
        fn(X + 1.0)  # (leaves other values on the objects: they must not be read)
    value, g = srcad.value_and_grad(fn, mode=mode)(X.copy())
    assert value == pytest.approx(fn(X.copy()), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (X.copy(),)), rtol=1e-6, atol=1e-9)
    srcad.grad(fn, mode=mode)(X.copy())
    last = NN_ACT2 if fn is nnfs_loss else NN_MODEL.layers[-1]
    assert type(last.output) is np.ndarray  # (the object holds the array, as after a call)
    np.testing.assert_allclose(np.sum(last.output, axis=1), 1.0, rtol=1e-12)


def nnfs_loss_of_weights(W1, W2):
    """The gradient w.r.t. the layers' weights, set on them first (the book's backward gives
    dweights: what a user compares against)."""
    NN_DENSE1.weights = W1
    NN_DENSE2.weights = W2
    return nnfs_loss(NN_X)


NN_X = np.random.default_rng(8).standard_normal((5, 4))


@pytest.mark.parametrize("mode", MODES)
def test_weights_set_on_the_layers_then_read_by_their_methods(mode):
    W1, W2 = NN_DENSE1.weights.copy(), NN_DENSE2.weights.copy()
    try:
        value, (g1, g2) = srcad.value_and_grad(nnfs_loss_of_weights, wrt=(0, 1), mode=mode)(
            W1.copy(), W2.copy())
        assert value == pytest.approx(nnfs_loss_of_weights(W1.copy(), W2.copy()), rel=1e-12)
        n1, n2 = numerical_grad(nnfs_loss_of_weights, (W1.copy(), W2.copy()), wrt=(0, 1))
        np.testing.assert_allclose(g1, n1, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(g2, n2, rtol=1e-6, atol=1e-9)
        # the book's own backward of the same step, by hand: dweights of the last layer
        nnfs_loss_of_weights(W1, W2)
        probs, y = NN_ACT2.output, NN_Y
        dvalues = probs.copy()
        dvalues[range(len(y)), y] -= 1
        dvalues /= len(y)
        np.testing.assert_allclose(g2, NN_DENSE2.inputs.T @ dvalues, rtol=1e-9, atol=1e-12)
    finally:
        NN_DENSE1.weights, NN_DENSE2.weights = W1, W2


class Branchy:
    def __init__(self, W):
        self.W = W
        self.output = None

    def forward(self, x, squash):
        if squash:
            self.output = np.tanh(x @ self.W)
        else:
            self.output = x @ self.W


class Looping:
    def forward(self, x):
        for i in range(2):
            self.last = x * (i + 1.0)


BRANCHY, LOOPING = Branchy(np.eye(3) * 0.5), Looping()


def reads_branch_state(x):
    BRANCHY.forward(x, True)
    return np.sum(BRANCHY.output ** 2)


def reads_loop_state(x):
    LOOPING.forward(x)
    return np.sum(LOOPING.last ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [reads_branch_state, reads_loop_state], ids=lambda f: f.__name__)
def test_state_a_callee_sets_in_a_branch_or_loop_is_carried_out(fn, mode):
    """Read back after a callee set it in a branch or a loop: source mode folded the value an
    earlier plain call had left (a wrong value and gradient, silently); then it was refused.
    Now the callee returns what its local for the attribute holds at its end (state.py), on
    every path: the value, the gradient and the object afterwards are Python's."""
    x = np.linspace(0.1, 1.0, 3)
    fn(x * 3.0)  # (another value on the object first)
    want = fn(x)
    obj = BRANCHY if fn is reads_branch_state else LOOPING
    attr = "output" if fn is reads_branch_state else "last"
    after = getattr(obj, attr).copy()
    fn(x * 3.0)
    value, g = srcad.value_and_grad(fn, mode=mode)(x)
    assert value == want
    np.testing.assert_array_equal(getattr(obj, attr), after)
    assert rel_error(g, numerical_grad(fn, (x,), wrt=0)) < 1e-6


# -- generator methods (a CNN from scratch walking its image regions) ------------------------
class Conv3x3:
    def __init__(self, num_filters):
        self.num_filters = num_filters
        self.filters = np.random.RandomState(0).randn(num_filters, 3, 3) / 9

    def iterate_regions(self, image):
        h, w = image.shape
        for i in range(h - 2):
            for j in range(w - 2):
                yield image[i:(i + 3), j:(j + 3)], i, j

    def forward(self, image):
        self.last_input = image
        h, w = image.shape
        output = np.zeros((h - 2, w - 2, self.num_filters))
        for region, i, j in self.iterate_regions(image):
            output[i, j] = np.sum(region * self.filters, axis=(1, 2))
        return output


class MaxPool2:
    def iterate_regions(self, image):
        h, w, _ = image.shape
        for i in range(h // 2):
            for j in range(w // 2):
                yield image[(i * 2):(i * 2 + 2), (j * 2):(j * 2 + 2)], i, j

    def forward(self, image):
        h, w, n = image.shape
        output = np.zeros((h // 2, w // 2, n))
        for region, i, j in self.iterate_regions(image):
            output[i, j] = np.amax(region, axis=(0, 1))
        return output


CONV, POOL = Conv3x3(4), MaxPool2()
SOFT_W = np.random.RandomState(1).randn(36, 3) / 36


def cnn_loss(image):
    out = POOL.forward(CONV.forward(image / 255 - 0.5)).flatten()
    totals = np.dot(out, SOFT_W)
    probs = np.exp(totals) / np.sum(np.exp(totals))
    return -np.log(probs[1])


@pytest.mark.parametrize("mode", MODES)
def test_generator_methods_consumed_by_a_loop(mode):
    """`for region, i, j in self.iterate_regions(image):` -- a generator method of the layer
    (it was refused at its `yield`: only module-level generator functions were followed)."""
    image = np.random.default_rng(0).uniform(0, 255, (8, 8))
    value, g = srcad.value_and_grad(cnn_loss, mode=mode)(image.copy())
    assert value == pytest.approx(cnn_loss(image.copy()), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(cnn_loss, (image.copy(),), h=1e-3),
                               rtol=1e-5, atol=1e-10)


# -- weights set through an expression (`net.layers[0].W = W`, ML-From-Scratch's style) -------
class MLFSDense:
    def __init__(self, n_in, n_units, seed):
        limit = 1 / np.sqrt(n_in)
        self.W = np.random.RandomState(seed).uniform(-limit, limit, (n_in, n_units))
        self.w0 = np.zeros((1, n_units))

    def forward_pass(self, X, training=True):
        self.layer_input = X
        return X.dot(self.W) + self.w0


class MLFSActivation:
    def __init__(self, fn):
        self.activation_func = fn

    def forward_pass(self, X, training=True):
        self.layer_input = X
        return self.activation_func(X)


class MLFSNet:
    def __init__(self, layers):
        self.layers = layers

    def _forward_pass(self, X, training=True):
        out = X
        for layer in self.layers:
            out = layer.forward_pass(out, training)
        return out


MLFS = MLFSNet([MLFSDense(4, 6, 0), MLFSActivation(np.tanh), MLFSDense(6, 3, 1),
                MLFSActivation(np.tanh)])
MLFS_X = np.random.default_rng(9).standard_normal((5, 4))


def mlfs_loss_first_weights(W):
    MLFS.layers[0].W = W  # (the other Dense keeps its own W: one attribute name, two objects)
    return np.mean(MLFS._forward_pass(MLFS_X) ** 2)


def mlfs_loss_through_a_name(W):
    layer = MLFS.layers[2]
    layer.W = W
    return np.mean(MLFS._forward_pass(MLFS_X) ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, index", [(mlfs_loss_first_weights, 0),
                                       (mlfs_loss_through_a_name, 2)],
                         ids=["net.layers[0].W = W", "layer = ...; layer.W = W"])
def test_weights_set_on_one_layer_of_a_list(fn, index, mode):
    W0 = MLFS.layers[index].W.copy()
    try:
        value, g = srcad.value_and_grad(fn, mode=mode)(W0.copy())
        assert value == pytest.approx(fn(W0.copy()), rel=1e-12)
        np.testing.assert_allclose(g, numerical_grad(fn, (W0.copy(),)), rtol=1e-6, atol=1e-10)
        W1 = W0 * 0.5
        srcad.grad(fn, mode=mode)(W1)
        assert type(MLFS.layers[index].W) is np.ndarray
        np.testing.assert_array_equal(MLFS.layers[index].W, W1)  # (what Python leaves)
    finally:
        MLFS.layers[index].W = W0


class EarlyOut:
    def __init__(self, W, act=None, child=None):
        self.W, self.act, self.child = W, act, child

    def __call__(self, x):
        z = x @ self.W
        if self.act is None:
            return z if self.child is None else self.child(z)
        if self.child is not None:
            z = self.child(z)
        return self.act(z)


EARLY = EarlyOut(np.eye(3) * 0.5, child=EarlyOut(np.eye(3) * 2.0, act=np.tanh))


def f_early_return_on_none(x):
    return np.sum(EARLY(x) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_an_early_return_on_an_optional_attribute(mode):
    """`if self.act is None: return z` then `return self.act(z)`: the branch Python takes
    (knowntests.py, before the return becomes flags), guarded: setting `act` later rebuilds."""
    x = np.linspace(0.1, 1.0, 3)
    t = srcad.value_and_grad(f_early_return_on_none, mode=mode)
    try:
        for act in (None, np.sin):
            EARLY.act = act
            value, g = t(x)
            assert value == pytest.approx(f_early_return_on_none(x), rel=1e-12)
            np.testing.assert_allclose(g, numerical_grad(f_early_return_on_none, (x,)),
                                       rtol=1e-6)
    finally:
        EARLY.act = None


# -- state kept on module-level layers: lists appended to, a value read then stored ------------
class Keeper:
    def __init__(self, W):
        self.W = W
        self.cache = []

    def forward(self, x):
        z = np.tanh(x @ self.W)
        self.cache.append(z)
        self.output = self.cache[-1] * 2.0


class Running:
    def __init__(self):
        self.mean = np.zeros(3)

    def update(self, x):
        self.mean = 0.9 * self.mean + 0.1 * x


KEEPER = Keeper(np.random.RandomState(4).uniform(-0.8, 0.8, (3, 3)))
RUNNING = Running()


def keeps_a_cache(x):
    KEEPER.forward(x)
    KEEPER.forward(x * 0.5)
    return np.sum(KEEPER.output * KEEPER.cache[-2])


def reads_what_it_reset(x):
    RUNNING.mean = x * 2.0
    RUNNING.update(x)
    return np.sum(RUNNING.mean ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_a_list_kept_across_calls_is_appended_to_in_place(mode):
    """`self.cache.append(z)` on a module-level layer's list, read back by `self.cache[-1]`
    in the method and `cache[-2]` by the caller: the method reads its changed list by a local
    (attrstate.py), the object's own list is appended to as Python appends (the same list
    object, two more items) -- it was a zero gradient after a plain call (fuzz_object_state)."""
    x = np.linspace(-0.4, 0.9, 3)
    keeps_a_cache(x + 1.0)
    own = KEEPER.cache
    before = len(own)
    want = keeps_a_cache(x)
    value, g = srcad.value_and_grad(keeps_a_cache, mode=mode)(x)
    assert value == want
    assert KEEPER.cache is own and len(own) == before + 4
    np.testing.assert_array_equal(own[-1], own[-3])
    assert rel_error(g, numerical_grad(keeps_a_cache, (x,), wrt=0)) < 1e-6


@pytest.mark.parametrize("mode", MODES)
def test_a_callee_reads_the_value_its_caller_stored_before_storing_its_own(mode):
    """`RUNNING.mean = 2x`, then `update` reads `self.mean` before it stores it: it reads the
    caller's value (given to it, state.py), not the one an earlier call left on the object."""
    x = np.linspace(-0.4, 0.9, 3)
    reads_what_it_reset(x * 3.0)
    want = reads_what_it_reset(x)
    RUNNING.mean = np.ones(3)
    value, g = srcad.value_and_grad(reads_what_it_reset, mode=mode)(x)
    assert value == want
    np.testing.assert_allclose(RUNNING.mean, 1.9 * x, rtol=1e-15)
    assert rel_error(g, numerical_grad(reads_what_it_reset, (x,), wrt=0)) < 1e-6
