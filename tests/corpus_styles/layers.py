"""Layer classes that keep their forward state on self (``self.x = x``, ``self.cache``) and
have their own ``backward`` methods: Dense, ReLU, Sigmoid, Tanh, Softmax-CE, Dropout with a
fixed mask, BatchNorm. The program builds or receives layer objects and runs ``forward``; the
oracle runs the same layers' ``backward`` methods in reverse."""

import numpy as np

from . import Program, rng


class Dense:
    def __init__(self, W, b):
        self.W = W
        self.b = b
        self.x = None

    def forward(self, x):
        self.x = x
        return x @ self.W + self.b

    def backward(self, dout):
        self.dW = self.x.T @ dout
        self.db = np.sum(dout, axis=0)
        return dout @ self.W.T


class ReLU:
    def __init__(self):
        self.mask = None

    def forward(self, x):
        self.mask = x <= 0
        out = x.copy()
        out[self.mask] = 0
        return out

    def backward(self, dout):
        dout = dout.copy()
        dout[self.mask] = 0
        return dout


class Sigmoid:
    def forward(self, x):
        out = 1 / (1 + np.exp(-x))
        self.out = out
        return out

    def backward(self, dout):
        return dout * (1.0 - self.out) * self.out


class Tanh:
    def forward(self, x):
        self.cache = np.tanh(x)
        return self.cache

    def backward(self, dout):
        y = self.cache
        return dout * (1 - y ** 2)


def softmax(x):
    x = x - np.max(x, axis=1, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=1, keepdims=True)


class SoftmaxWithLoss:
    def __init__(self):
        self.y = None
        self.t = None

    def forward(self, x, t):
        self.t = t
        self.y = softmax(x)
        batch_size = x.shape[0]
        self.loss = -np.sum(np.log(self.y[np.arange(batch_size), t] + 1e-7)) / batch_size
        return self.loss

    def backward(self, dout=1):
        batch_size = self.t.shape[0]
        # the eps in log(y + 1e-7) scales the usual (y - onehot) by p / (p + 1e-7)
        p = self.y[np.arange(batch_size), self.t]
        scale = (p / (p + 1e-7))[:, None]
        dx = self.y * scale
        dx[np.arange(batch_size), self.t] -= scale[:, 0]
        return dx * dout / batch_size


class MSELoss:
    def forward(self, pred, target):
        self.diff = pred - target
        return 0.5 * np.mean(self.diff ** 2)

    def backward(self):
        return self.diff / self.diff.size


class Dropout:
    """Inverted dropout; the mask is given (fixed) so that the program is deterministic."""

    def __init__(self, p, mask):
        self.p = p
        self.mask = mask

    def forward(self, x, train=True):
        if train:
            return x * self.mask / (1 - self.p)
        return x

    def backward(self, dout):
        return dout * self.mask / (1 - self.p)


class BatchNorm:
    def __init__(self, gamma, beta, momentum=0.9, eps=1e-5):
        self.gamma = gamma
        self.beta = beta
        self.momentum = momentum
        self.eps = eps
        self.running_mean = np.zeros(gamma.shape[0])
        self.running_var = np.ones(gamma.shape[0])

    def forward(self, x, train=True):
        if train:
            mu = x.mean(axis=0)
            xc = x - mu
            var = np.mean(xc ** 2, axis=0)
            std = np.sqrt(var + self.eps)
            xn = xc / std
            self.xc, self.xn, self.std = xc, xn, std
            self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mu
            self.running_var = self.momentum * self.running_var + (1 - self.momentum) * var
        else:
            xn = (x - self.running_mean) / np.sqrt(self.running_var + self.eps)
        return self.gamma * xn + self.beta

    def backward(self, dout):
        N = dout.shape[0]
        self.dbeta = dout.sum(axis=0)
        self.dgamma = np.sum(self.xn * dout, axis=0)
        dxn = self.gamma * dout
        dxc = dxn / self.std
        dstd = -np.sum((dxn * self.xc) / (self.std * self.std), axis=0)
        dvar = 0.5 * dstd / self.std
        dxc += (2.0 / N) * self.xc * dvar
        dmu = np.sum(dxc, axis=0)
        return dxc - dmu / N


# ---- programs ---------------------------------------------------------------------------

def two_layer_built_inside(W1, b1, W2, b2, X, y):
    fc1 = Dense(W1, b1)
    relu = ReLU()
    fc2 = Dense(W2, b2)
    loss_layer = SoftmaxWithLoss()
    h = relu.forward(fc1.forward(X))
    scores = fc2.forward(h)
    return loss_layer.forward(scores, y)


def two_layer_built_inside_backward(W1, b1, W2, b2, X, y):
    fc1, relu, fc2, loss_layer = Dense(W1, b1), ReLU(), Dense(W2, b2), SoftmaxWithLoss()
    loss_layer.forward(fc2.forward(relu.forward(fc1.forward(X))), y)
    d = loss_layer.backward()
    d = fc1.backward(relu.backward(fc2.backward(d)))
    return fc1.dW, fc1.db, fc2.dW, fc2.db


def sigmoid_tanh_mse(W1, b1, W2, b2, X, T):
    layers = [Dense(W1, b1), Sigmoid(), Dense(W2, b2), Tanh()]
    out = X
    for layer in layers:
        out = layer.forward(out)
    crit = MSELoss()
    return crit.forward(out, T)


def sigmoid_tanh_mse_backward(W1, b1, W2, b2, X, T):
    layers = [Dense(W1, b1), Sigmoid(), Dense(W2, b2), Tanh()]
    out = X
    for layer in layers:
        out = layer.forward(out)
    crit = MSELoss()
    crit.forward(out, T)
    d = crit.backward()
    for layer in reversed(layers):
        d = layer.backward(d)
    return layers[0].dW, layers[0].db, layers[2].dW, layers[2].db


def dropout_fixed_mask(W1, b1, W2, b2, X, y, mask):
    fc1 = Dense(W1, b1)
    drop = Dropout(0.5, mask)
    fc2 = Dense(W2, b2)
    h = np.maximum(0, fc1.forward(X))
    h = drop.forward(h, train=True)
    scores = fc2.forward(h)
    return SoftmaxWithLoss().forward(scores, y)


def dropout_fixed_mask_backward(W1, b1, W2, b2, X, y, mask):
    fc1, drop, fc2, sm = Dense(W1, b1), Dropout(0.5, mask), Dense(W2, b2), SoftmaxWithLoss()
    a = fc1.forward(X)
    h = drop.forward(np.maximum(0, a))
    sm.forward(fc2.forward(h), y)
    d = drop.backward(fc2.backward(sm.backward()))
    fc1.backward(d * (a > 0))
    return fc1.dW, fc1.db, fc2.dW, fc2.db


def batchnorm_layer_net(W1, gamma, beta, W2, X, y):
    fc1 = Dense(W1, np.zeros(W1.shape[1]))
    bn = BatchNorm(gamma, beta)
    fc2 = Dense(W2, np.zeros(W2.shape[1]))
    h = bn.forward(fc1.forward(X), train=True)
    h = np.tanh(h)
    scores = fc2.forward(h)
    return SoftmaxWithLoss().forward(scores, y)


def batchnorm_layer_net_backward(W1, gamma, beta, W2, X, y):
    fc1 = Dense(W1, np.zeros(W1.shape[1]))
    bn = BatchNorm(gamma, beta)
    fc2 = Dense(W2, np.zeros(W2.shape[1]))
    sm = SoftmaxWithLoss()
    h = np.tanh(bn.forward(fc1.forward(X), train=True))
    sm.forward(fc2.forward(h), y)
    d = fc2.backward(sm.backward())
    d = bn.backward(d * (1 - h ** 2))
    fc1.backward(d)
    return fc1.dW, bn.dgamma, bn.dbeta, fc2.dW


# a network of layer objects held in a module global: the weights are constants, the
# gradient is the input's (a saliency map)
_r = rng(11)
NET = [Dense(_r.standard_normal((4, 6)) * 0.5, _r.standard_normal(6) * 0.1), Tanh(),
       Dense(_r.standard_normal((6, 3)) * 0.5, np.zeros(3))]
CRIT = SoftmaxWithLoss()


def input_saliency(x, y):
    out = x
    for layer in NET:
        out = layer.forward(out)
    return CRIT.forward(out, y)


def input_saliency_backward(x, y):
    out = x
    for layer in NET:
        out = layer.forward(out)
    CRIT.forward(out, y)
    d = CRIT.backward()
    for layer in reversed(NET):
        d = layer.backward(d)
    return (d,)


def layers_passed_in(X, y, layers, loss_layer):
    out = X
    for layer in layers:
        out = layer.forward(out)
    return loss_layer.forward(out, y)


def layers_passed_in_backward(X, y, layers, loss_layer):
    out = X
    for layer in layers:
        out = layer.forward(out)
    loss_layer.forward(out, y)
    d = loss_layer.backward()
    for layer in reversed(layers):
        d = layer.backward(d)
    return (d,)


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def backward(self, dout):
        for layer in reversed(self.layers):
            dout = layer.backward(dout)
        return dout


def sequential_container(W1, b1, W2, b2, X, T):
    model = Sequential([Dense(W1, b1), Tanh(), Dense(W2, b2), Sigmoid()])
    crit = MSELoss()
    return crit.forward(model.forward(X), T)


def sequential_container_backward(W1, b1, W2, b2, X, T):
    model = Sequential([Dense(W1, b1), Tanh(), Dense(W2, b2), Sigmoid()])
    crit = MSELoss()
    crit.forward(model.forward(X), T)
    model.backward(crit.backward())
    return model.layers[0].dW, model.layers[0].db, model.layers[2].dW, model.layers[2].db


class Linear:
    """A layer whose parameters live in a dict on self."""

    def __init__(self, W, b):
        self.params = {"W": W, "b": b}
        self.grads = {}
        self.cache = None

    def forward(self, x):
        self.cache = x
        return np.dot(x, self.params["W"]) + self.params["b"]

    def backward(self, dout):
        x = self.cache
        self.grads["W"] = np.dot(x.T, dout)
        self.grads["b"] = np.sum(dout, axis=0)
        return np.dot(dout, self.params["W"].T)


def params_dict_on_layer(W1, b1, W2, b2, X, y):
    l1 = Linear(W1, b1)
    l2 = Linear(W2, b2)
    a = l1.forward(X)
    h = np.where(a > 0, a, 0.1 * a)
    return SoftmaxWithLoss().forward(l2.forward(h), y)


def params_dict_on_layer_backward(W1, b1, W2, b2, X, y):
    l1, l2, sm = Linear(W1, b1), Linear(W2, b2), SoftmaxWithLoss()
    a = l1.forward(X)
    h = np.where(a > 0, a, 0.1 * a)
    sm.forward(l2.forward(h), y)
    d = l2.backward(sm.backward())
    l1.backward(d * np.where(a > 0, 1.0, 0.1))
    return l1.grads["W"], l1.grads["b"], l2.grads["W"], l2.grads["b"]


def forward_twice_same_layer(W, b, X1, X2):
    """One layer object used twice: self.x is overwritten by the second call."""
    fc = Dense(W, b)
    act = Tanh()
    a = act.forward(fc.forward(X1))
    b2 = act.forward(fc.forward(X2))
    return np.sum(a * b2)


def forward_twice_same_layer_backward(W, b, X1, X2):
    a = np.tanh(X1 @ W + b)
    c = np.tanh(X2 @ W + b)
    da = c * (1 - a ** 2)
    dc = a * (1 - c ** 2)
    return X1.T @ da + X2.T @ dc, da.sum(0) + dc.sum(0)


def _args_mlp(seed=0, D=4, H=5, C=3, N=6):
    r = rng(seed)
    return (r.standard_normal((D, H)) * 0.5, r.standard_normal(H) * 0.1,
            r.standard_normal((H, C)) * 0.5, r.standard_normal(C) * 0.1,
            r.standard_normal((N, D)), r.integers(0, C, N))


def _args_regress(seed=1):
    r = rng(seed)
    return (r.standard_normal((4, 5)) * 0.5, r.standard_normal(5) * 0.1,
            r.standard_normal((5, 2)) * 0.5, r.standard_normal(2) * 0.1,
            r.standard_normal((6, 4)), r.uniform(-0.5, 0.5, (6, 2)))


def _args_dropout():
    return _args_mlp(2) + ((rng(3).uniform(size=(6, 5)) > 0.5).astype(float),)


def _args_bn():
    r = rng(4)
    return (r.standard_normal((4, 5)) * 0.5, 1 + 0.1 * r.standard_normal(5),
            0.1 * r.standard_normal(5), r.standard_normal((5, 3)) * 0.5,
            r.standard_normal((6, 4)), r.integers(0, 3, 6))


def _args_passed():
    r = rng(5)
    layers = [Dense(r.standard_normal((4, 5)) * 0.5, np.zeros(5)), Sigmoid(),
              Dense(r.standard_normal((5, 3)) * 0.5, np.zeros(3))]
    return (r.standard_normal((6, 4)), r.integers(0, 3, 6), layers, SoftmaxWithLoss())


def _args_twice():
    r = rng(6)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal(4) * 0.1,
            r.standard_normal((5, 3)), r.standard_normal((5, 3)))


_W4 = ("W1", "b1", "W2", "b2")
PROGRAMS = [
    Program("layers.two_layer_built_inside", two_layer_built_inside,
            two_layer_built_inside_backward, _args_mlp, _W4, fuse=True),
    Program("layers.sigmoid_tanh_mse", sigmoid_tanh_mse, sigmoid_tanh_mse_backward,
            _args_regress, _W4),
    Program("layers.dropout_fixed_mask", dropout_fixed_mask, dropout_fixed_mask_backward,
            _args_dropout, _W4),
    Program("layers.batchnorm_layer_net", batchnorm_layer_net, batchnorm_layer_net_backward,
            _args_bn, ("W1", "gamma", "beta", "W2"), fuse=True),
    Program("layers.input_saliency", input_saliency, input_saliency_backward,
            lambda: (rng(7).standard_normal((6, 4)), rng(8).integers(0, 3, 6)), ("x",)),
    Program("layers.layers_passed_in", layers_passed_in, layers_passed_in_backward,
            _args_passed, ("X",)),
    Program("layers.sequential_container", sequential_container,
            sequential_container_backward, _args_regress, _W4),
    Program("layers.params_dict_on_layer", params_dict_on_layer,
            params_dict_on_layer_backward, _args_mlp, _W4),
    Program("layers.forward_twice_same_layer", forward_twice_same_layer,
            forward_twice_same_layer_backward, _args_twice, ("W", "b")),
]
