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


def through_model(x, y):
    return model.loss(x, y)
