"""User classes and their methods, as numpy-from-scratch code writes them, for
tests/test_methods.py: activation and cost classes with static, class and instance methods,
a layer hierarchy using super(), objects held on other objects."""

import numpy as np


class Tanh:
    def fn(self, z):
        return np.tanh(z)

    @staticmethod
    def sfn(z):
        return np.sin(z)

    scale = 3.0

    @classmethod
    def cfn(cls, z):
        return cls.scale * z


class QuadraticCost:
    @staticmethod
    def fn(a, y):
        return 0.5 * np.sum((a - y) ** 2)


act = Tanh()


def through_instance(z):
    return np.sum(act.fn(z))


def static_through_instance_and_class(z):
    return np.sum(act.sfn(z) + Tanh.sfn(z))


def classmethods(z):
    return np.sum(Tanh.cfn(z) * act.cfn(z))


class Layer:
    def __init__(self, k):
        self.k = k

    def forward(self, x):
        return np.tanh(x) * self.k


class Scaled(Layer):
    def __init__(self):
        super().__init__(2.0)
        self.act = Tanh()
        self.cost = QuadraticCost

    def forward(self, x):
        return super().forward(x) + self.act.fn(x) + self.helper(x)

    def helper(self, x):
        return self.act.fn(x * 2.0)

    def loss(self, x, y):
        return self.cost.fn(self.forward(x), y)


model = Scaled()


class Objective(Scaled):
    """A callable object: `srcad.grad(objective)` transforms its `__call__`, bound to it."""

    def __call__(self, x, y):
        return self.loss(x, y) * self.k


objective = Objective()


def through_model(x, y):
    return model.loss(x, y)


def cost_passed_in(a, y, cost):
    return cost.fn(a, y)


def layer_passed_in(x, layer):
    return np.sum(layer.forward(x) ** 2)


class Dense:
    """A layer that keeps its forward state on self, for a hand-written backward."""

    def __init__(self, W, b):
        self.W, self.b = W, b
        self.calls = 0

    def forward(self, x):
        self.x = x
        self.z = x @ self.W + self.b
        self.out = np.tanh(self.z)
        self.calls += 1
        return self.out

    def backward(self, dout):  # (the author's own backward: the oracle)
        dz = dout * (1 - self.out ** 2)
        return dz @ self.W.T

    def loss(self, x):
        h = self.forward(x)
        return np.sum(h ** 2)

    def loss_read_back(self, x):
        self.forward(x)
        return np.sum(self.out ** 2)  # (through the object, in another function: refused)

    def loss_in_loop(self, x):
        self.total = 0.0
        for _ in range(2):
            self.total += np.sum(np.sin(x @ self.W))
        return self.total


dense = Dense(np.array([[0.5, -1.0], [0.25, 2.0], [1.5, -0.5]]), np.array([0.1, -0.2]))


def through_stateful_layer(x):
    return dense.loss(x)


class Linear:
    def __init__(self, w, b):
        self.W, self.b = w, b

    def forward(self, x):
        return x @ self.W + self.b


class Activation:
    def __init__(self, fn):
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Sequential:
    """The usual container: a list of layers, each called in turn."""

    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def loss(self, x, y):
        return np.mean((self.forward(x) - y) ** 2)


_r = np.random.default_rng(5)
net = Sequential([Linear(_r.standard_normal((3, 4)), _r.standard_normal(4)),
                  Activation(np.tanh),
                  Linear(_r.standard_normal((4, 2)), _r.standard_normal(2))])


def sequential_loss(x, y):
    return net.loss(x, y)
