"""Activation and loss class hierarchies: a base class with ``forward``/``backward`` (or
``__call__`` / ``derivative``), subclasses calling ``super()``, ``@staticmethod`` and
``@classmethod`` helpers, a registry of classes by name, an activation object passed in or
held on a layer. Parameters are the function's arguments; the objects hold no arrays that
are differentiated."""

import numpy as np

from . import Program, rng


class Activation:
    def __call__(self, x):
        return self.forward(x)

    def forward(self, x):
        raise NotImplementedError

    def derivative(self, x):
        raise NotImplementedError


class Sigmoid(Activation):
    @staticmethod
    def _sigmoid(x):
        return 1.0 / (1.0 + np.exp(-x))

    def forward(self, x):
        return self._sigmoid(x)

    def derivative(self, x):
        s = self._sigmoid(x)
        return s * (1 - s)


class Tanh(Activation):
    def forward(self, x):
        return np.tanh(x)

    def derivative(self, x):
        return 1.0 - np.tanh(x) ** 2


class ReLU(Activation):
    def forward(self, x):
        return np.maximum(0, x)

    def derivative(self, x):
        return (x > 0).astype(x.dtype)


class LeakyReLU(ReLU):
    def __init__(self, alpha=0.1):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return super().forward(x) + self.alpha * np.minimum(x, 0)

    def derivative(self, x):
        return super().derivative(x) + self.alpha * (x <= 0)


class Softplus(Activation):
    beta = 2.0

    @classmethod
    def with_beta(cls, x):
        return np.log1p(np.exp(cls.beta * x)) / cls.beta

    def forward(self, x):
        return self.with_beta(x)

    def derivative(self, x):
        return 1.0 / (1.0 + np.exp(-self.beta * x))


class Loss:
    def __call__(self, pred, target):
        return self.loss(pred, target)


class MSE(Loss):
    def loss(self, pred, target):
        return np.mean((pred - target) ** 2)

    def grad(self, pred, target):
        return 2 * (pred - target) / pred.size


class CrossEntropy(Loss):
    @staticmethod
    def softmax(z):
        z = z - z.max(axis=-1, keepdims=True)
        ez = np.exp(z)
        return ez / ez.sum(axis=-1, keepdims=True)

    def loss(self, logits, labels):
        p = self.softmax(logits)
        n = logits.shape[0]
        return -np.mean(np.log(p[np.arange(n), labels]))

    def grad(self, logits, labels):
        p = self.softmax(logits)
        n = logits.shape[0]
        p[np.arange(n), labels] -= 1
        return p / n


class BCE(Loss):
    eps = 1e-12

    @classmethod
    def clipped(cls, p):
        return np.clip(p, cls.eps, 1 - cls.eps)

    def loss(self, p, y):
        p = self.clipped(p)
        return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))

    def grad(self, p, y):
        return (p - y) / (p * (1 - p)) / p.size


ACTIVATIONS = {"sigmoid": Sigmoid, "tanh": Tanh, "relu": ReLU, "leaky_relu": LeakyReLU}
sigmoid = Sigmoid()
tanh = Tanh()
leaky = LeakyReLU(0.05)
softplus = Softplus()
mse = MSE()
xent = CrossEntropy()
bce = BCE()


class Layer:
    def __init__(self, activation):
        self.activation = activation

    def forward(self, x, W, b):
        self.z = x @ W + b
        return self.activation(self.z)


class Model:
    def __init__(self):
        self.hidden = Layer(Tanh())
        self.out = Layer(Sigmoid())
        self.loss_fn = MSE()

    def loss(self, x, y, W1, b1, W2, b2):
        h = self.hidden.forward(x, W1, b1)
        p = self.out.forward(h, W2, b2)
        return self.loss_fn(p, y)


model = Model()


# ---- programs ---------------------------------------------------------------------------

def call_dunder_global(W, b, x, y):
    return mse(sigmoid(x @ W + b), y)


def call_dunder_global_backward(W, b, x, y):
    z = x @ W + b
    dz = mse.grad(sigmoid.forward(z), y) * sigmoid.derivative(z)
    return x.T @ dz, dz.sum(0)


def forward_method_global(W, b, x, y):
    a = tanh.forward(x @ W + b)
    return xent.loss(a, y)


def forward_method_global_backward(W, b, x, y):
    z = x @ W + b
    dz = xent.grad(tanh.forward(z), y) * tanh.derivative(z)
    return x.T @ dz, dz.sum(0)


def super_chain(W, x, y):
    return mse.loss(leaky.forward(x @ W), y)


def super_chain_backward(W, x, y):
    z = x @ W
    dz = mse.grad(leaky.forward(z), y) * leaky.derivative(z)
    return (x.T @ dz,)


def classmethod_activation(W, x, y):
    return mse(softplus(x @ W), y)


def classmethod_activation_backward(W, x, y):
    z = x @ W
    dz = mse.grad(softplus.forward(z), y) * softplus.derivative(z)
    return (x.T @ dz,)


def activation_passed_in(W1, W2, x, y, act):
    h = act.forward(x @ W1)
    return xent(h @ W2, y)


def activation_passed_in_backward(W1, W2, x, y, act):
    z = x @ W1
    h = act.forward(z)
    dlogits = xent.grad(h @ W2, y)
    dz = (dlogits @ W2.T) * act.derivative(z)
    return x.T @ dz, h.T @ dlogits


def activation_class_passed_in(W1, W2, x, y, act_cls):
    h = act_cls().forward(x @ W1)
    return xent(h @ W2, y)


def activation_class_passed_in_backward(W1, W2, x, y, act_cls):
    return activation_passed_in_backward(W1, W2, x, y, act_cls())


def registry_by_name(W1, W2, x, y, name="tanh"):
    act = ACTIVATIONS[name]()
    h = act(x @ W1)
    return xent(h @ W2, y)


def registry_by_name_backward(W1, W2, x, y, name="tanh"):
    return activation_passed_in_backward(W1, W2, x, y, ACTIVATIONS[name]())


def layer_holds_activation(W1, b1, W2, b2, x, y):
    return model.loss(x, y, W1, b1, W2, b2)


def layer_holds_activation_backward(W1, b1, W2, b2, x, y):
    z1 = x @ W1 + b1
    h = np.tanh(z1)
    z2 = h @ W2 + b2
    p = Sigmoid._sigmoid(z2)
    dz2 = MSE().grad(p, y) * p * (1 - p)
    dz1 = (dz2 @ W2.T) * (1 - h ** 2)
    return x.T @ dz1, dz1.sum(0), h.T @ dz2, dz2.sum(0)


def bce_classmethod_clip(w, b, X, y):
    p = sigmoid(X @ w + b)
    return bce(p, y)


def bce_classmethod_clip_backward(w, b, X, y):
    p = Sigmoid._sigmoid(X @ w + b)
    dz = (p - y) / p.size
    return X.T @ dz, np.sum(dz)


def loss_object_passed_in(W, x, y, loss_fn):
    return loss_fn(np.tanh(x @ W), y)


def loss_object_passed_in_backward(W, x, y, loss_fn):
    h = np.tanh(x @ W)
    dz = loss_fn.grad(h, y) * (1 - h ** 2)
    return (x.T @ dz,)


def _a(seed, D=4, H=5, C=3, N=6):
    r = rng(seed)
    return r, r.standard_normal((D, H)) * 0.5, r.standard_normal((N, D))


def _args_reg(seed=20):
    r, W, x = _a(seed)
    return W, r.standard_normal(5) * 0.1, x, r.uniform(0.1, 0.9, (6, 5))


def _args_cls(seed=21):
    r, W, x = _a(seed)
    return W, r.standard_normal(5) * 0.1, x, r.integers(0, 5, 6)


def _args_w(seed=22):
    r, W, x = _a(seed)
    return W, x, r.uniform(-0.5, 0.5, (6, 5))


def _args_two(seed, extra):
    r, W1, x = _a(seed)
    return (W1, r.standard_normal((5, 3)) * 0.5, x, r.integers(0, 3, 6)) + extra


def _args_model():
    r = rng(25)
    return (r.standard_normal((4, 5)) * 0.5, r.standard_normal(5) * 0.1,
            r.standard_normal((5, 2)) * 0.5, r.standard_normal(2) * 0.1,
            r.standard_normal((6, 4)), r.uniform(0.1, 0.9, (6, 2)))


def _args_bce():
    r = rng(26)
    return r.standard_normal(4) * 0.5, 0.1, r.standard_normal((8, 4)), \
        (r.uniform(size=8) > 0.5).astype(float)


PROGRAMS = [
    Program("classes.call_dunder_global", call_dunder_global, call_dunder_global_backward,
            _args_reg, ("W", "b"), fuse=True),
    Program("classes.forward_method_global", forward_method_global,
            forward_method_global_backward, _args_cls, ("W", "b")),
    Program("classes.super_chain", super_chain, super_chain_backward, _args_w, ("W",)),
    Program("classes.classmethod_activation", classmethod_activation,
            classmethod_activation_backward, lambda: _args_w(23), ("W",)),
    Program("classes.activation_passed_in", activation_passed_in,
            activation_passed_in_backward, lambda: _args_two(24, (Sigmoid(),)),
            ("W1", "W2")),
    Program("classes.activation_class_passed_in", activation_class_passed_in,
            activation_class_passed_in_backward, lambda: _args_two(27, (Tanh,)),
            ("W1", "W2")),
    Program("classes.registry_by_name", registry_by_name, registry_by_name_backward,
            lambda: _args_two(28, ()), ("W1", "W2")),
    Program("classes.layer_holds_activation", layer_holds_activation,
            layer_holds_activation_backward, _args_model, ("W1", "b1", "W2", "b2")),
    Program("classes.bce_classmethod_clip", bce_classmethod_clip,
            bce_classmethod_clip_backward, _args_bce, ("w", "b")),
    Program("classes.loss_object_passed_in", loss_object_passed_in,
            loss_object_passed_in_backward, lambda: _args_w(29) + (MSE(),), ("W",)),
]
