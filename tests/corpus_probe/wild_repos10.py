"""Tenth set of programs in the styles of public numpy machine-learning libraries, textbook
implementations and course assignments (read for patterns only, written here from scratch):
textbook estimators (an Adaline class whose ``fit`` loop updates ``self.w_[1:]`` and
``self.w_[0]`` in place and appends to ``self.cost_``, its stochastic variant shuffling with
``self.rgen.permutation`` and summing a list of per-sample costs, logistic regression with
``np.clip(z, -250, 250)`` in ``activation``); Bishop-book code (polynomial features by
``itertools.combinations_with_replacement`` and ``functools.reduce``, Bayesian linear
regression's log evidence and predictive variance, evidence re-estimation of alpha and beta
from ``np.linalg.eigvalsh``, a relevance vector machine's re-estimation loop over ``np.diag``
of an inverse, probabilistic PCA's likelihood with ``np.cov(bias=True)`` and ``slogdet``, the
Laplace evidence of logistic regression after Newton steps, a mixture density network cut by
``np.split(out, [K, 2 * K], axis=1)``, Fisher's discriminant ratio over class scatter); GP
regression with ``scipy.linalg.cho_factor(lower=True)`` / ``cho_solve`` and a hyperparameter
dict; scikit-learn-like ``BaseEstimator`` with ``get_params`` from ``inspect.signature``,
``set_params`` returning self, ``clone``, ``_check_X``, ``np.insert(X, 0, 1, axis=1)`` bias
columns, a kernel ridge through ``scipy.linalg.solve(assume_a="pos")``; numpy-ml-style layers
(``parameters`` / ``derived_variables`` dicts, ``hyperparameters`` properties, ``_fwd``,
activations parsed from strings by ``re.search``, a loss object with a static ``loss``) and an
Adam optimiser keeping per-name moments in ``self.cache``; ML-From-Scratch regression with
regularisation classes and polynomial features by ``np.prod(X[:, combo], axis=1)``; CS231n
im2col by index arrays from ``np.repeat`` / ``np.tile`` and pooling by reshape; batch norm
objects with a ``mode`` string and running statistics updated in place; a ``Sequential``
with ``__getitem__`` slices, ``__len__`` and ``__iter__`` split into encoder and decoder;
GAN losses sharing a BCE helper through ``functools.partial``; implicit-feedback ALS rows
solved in a loop; ranking (ListNet by ``np.add.reduceat`` and ``np.repeat``, RankNet by
``np.subtract.outer`` under a ``np.triu`` mask) and survival (Breslow ties by
``np.unique(return_inverse=True)`` and ``np.bincount(weights=)``); variational inference with
samples from ``np.random.RandomState(0)``; flat parameter vectors unpacked by slicing or by
``np.split`` at ``np.cumsum`` offsets; ``operator.itemgetter`` and ``functools.partial``; a
module registering parameters through ``__setattr__`` in an ``OrderedDict``; weight
normalisation as a ``@property`` with ``np.linalg.norm(axis=0, keepdims=True)``; a DQN target
made by ``copy.deepcopy`` then Polyak-averaged; metric learning with ``np.einsum(...,
optimize=True)``; proxy losses with masked means; locally weighted regression; leave-one-out
KDE via ``np.diag_indices_from``; neural collaborative filtering with ``np.take``; smoothing
by ``np.apply_along_axis(np.convolve, ...)``."""

from __future__ import annotations

import collections
import copy
import functools
import inspect
import itertools
import math
import operator
import re

import numpy as np
import scipy.linalg
import scipy.special

from . import Probe, rng


# ---- 1. Adaline with full-batch gradient descent, in-place weight updates --------------------

class AdalineGD:
    """ADAptive LInear NEuron trained by batch gradient descent."""

    def __init__(self, eta=0.01, n_iter=10):
        self.eta = eta
        self.n_iter = n_iter

    def fit(self, X, y, w_init):
        self.w_ = w_init.copy()
        self.cost_ = []
        for _ in range(self.n_iter):
            output = self.activation(self.net_input(X))
            errors = y - output
            self.w_[1:] += self.eta * X.T.dot(errors)
            self.w_[0] += self.eta * errors.sum()
            cost = (errors ** 2).sum() / 2.0
            self.cost_.append(cost)
        return self

    def net_input(self, X):
        return np.dot(X, self.w_[1:]) + self.w_[0]

    def activation(self, X):
        return X


def adaline_gd_epochs(w_init, X, y):
    ada = AdalineGD(eta=0.004, n_iter=6).fit(X, y, w_init)
    return np.mean(ada.cost_[-3:]) + 0.1 * np.sum(ada.w_ ** 2)


def _ada():
    r = rng(1)
    X = r.standard_normal((30, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1.0, -1.0)
    return r.standard_normal(5) * 0.1, X, y


# ---- 2. Adaline with stochastic updates and a shuffling RandomState -----------------------

class AdalineSGD:
    def __init__(self, eta=0.01, n_iter=2, shuffle=True, random_state=1):
        self.eta = eta
        self.n_iter = n_iter
        self.shuffle = shuffle
        self.random_state = random_state

    def _shuffle(self, X, y):
        r = self.rgen.permutation(len(y))
        return X[r], y[r]

    def _initialize_weights(self, w):
        self.rgen = np.random.RandomState(self.random_state)
        self.w_ = np.array(w, dtype=float, copy=True)
        self.w_initialized = True

    def _update_weights(self, xi, target):
        output = self.activation(self.net_input(xi))
        error = target - output
        self.w_[1:] += self.eta * xi.dot(error)
        self.w_[0] += self.eta * error
        cost = 0.5 * error ** 2
        return cost

    def fit(self, X, y, w):
        self._initialize_weights(w)
        self.cost_ = []
        for _ in range(self.n_iter):
            if self.shuffle:
                X, y = self._shuffle(X, y)
            cost = []
            for xi, target in zip(X, y):
                cost.append(self._update_weights(xi, target))
            avg_cost = sum(cost) / len(y)
            self.cost_.append(avg_cost)
        return self

    def net_input(self, X):
        return np.dot(X, self.w_[1:]) + self.w_[0]

    def activation(self, X):
        return X


def adaline_sgd_shuffle(w, X, y):
    model = AdalineSGD(eta=0.02, n_iter=2).fit(X, y, w)
    return model.cost_[-1] + 0.5 * model.cost_[0]


def _ada_sgd():
    r = rng(2)
    X = r.standard_normal((12, 3))
    y = np.sign(X @ np.array([1.0, -0.5, 0.3]) + 0.1)
    return r.standard_normal(4) * 0.1, X, y


# ---- 3. logistic regression with a clipped sigmoid in ``activation`` --------------------------

class LogisticRegressionGD:
    def __init__(self, eta=0.05, n_iter=8):
        self.eta = eta
        self.n_iter = n_iter

    def fit(self, X, y, w0):
        self.w_ = w0 + 0.0
        self.cost_ = []
        for i in range(self.n_iter):
            net_input = self.net_input(X)
            output = self.activation(net_input)
            errors = (y - output)
            self.w_[1:] += self.eta * X.T.dot(errors)
            self.w_[0] += self.eta * errors.sum()
            cost = -y.dot(np.log(output)) - ((1 - y).dot(np.log(1 - output)))
            self.cost_.append(cost)
        return self

    def net_input(self, X):
        return np.dot(X, self.w_[1:]) + self.w_[0]

    def activation(self, z):
        return 1. / (1. + np.exp(-np.clip(z, -250, 250)))


def logistic_gd_clip(w0, X, y):
    lr = LogisticRegressionGD().fit(X, y, w0)
    return lr.cost_[-1] / len(y)


def _lgd():
    r = rng(3)
    X = r.standard_normal((25, 3))
    y = (X @ np.array([1.0, -1.0, 0.5]) + 0.7 * r.standard_normal(25) > 0).astype(float)
    return r.standard_normal(4) * 0.2, X, y


# ---- 4. PRML: polynomial features, Bayesian regression, log evidence ---------------------------

class PolynomialFeature:
    def __init__(self, degree=2):
        assert isinstance(degree, int)
        self.degree = degree

    def transform(self, x):
        if x.ndim == 1:
            x = x[:, None]
        x_t = x.transpose()
        features = [np.ones(len(x))]
        for degree in range(1, self.degree + 1):
            for items in itertools.combinations_with_replacement(x_t, degree):
                features.append(functools.reduce(lambda a, b: a * b, items))
        return np.asarray(features).transpose()


class BayesianRegression:
    def __init__(self, alpha=1.0, beta=1.0):
        self.alpha = alpha
        self.beta = beta
        self.w_mean = None
        self.w_precision = None

    def fit(self, X, t):
        if self.w_mean is not None:
            mean_prev = self.w_mean
        else:
            mean_prev = np.zeros(np.size(X, 1))
        if self.w_precision is not None:
            precision_prev = self.w_precision
        else:
            precision_prev = self.alpha * np.eye(np.size(X, 1))
        w_precision = precision_prev + self.beta * X.T @ X
        w_mean = np.linalg.solve(w_precision, precision_prev @ mean_prev + self.beta * X.T @ t)
        self.w_mean = w_mean
        self.w_precision = w_precision
        self.w_cov = np.linalg.inv(self.w_precision)

    def log_evidence(self, X, t):
        N, D = X.shape
        return 0.5 * (D * np.log(self.alpha) + N * np.log(self.beta)
                      - self.beta * np.square(t - X @ self.w_mean).sum()
                      - self.alpha * np.sum(self.w_mean ** 2)
                      - np.linalg.slogdet(self.w_precision)[1]
                      - N * np.log(2 * np.pi))

    def predict(self, X, return_std=False):
        y = X @ self.w_mean
        if return_std:
            y_var = 1 / self.beta + np.sum(X @ self.w_cov * X, axis=1)
            return y, np.sqrt(y_var)
        return y


def prml_polynomial_bayes(log_alpha, log_beta, x, t, x_test):
    feature = PolynomialFeature(degree=2)
    X = feature.transform(x)
    model = BayesianRegression(alpha=np.exp(log_alpha[0]), beta=np.exp(log_beta[0]))
    model.fit(X, t)
    _, y_std = model.predict(feature.transform(x_test), return_std=True)
    return -model.log_evidence(X, t) / len(t) + np.mean(y_std)


def _pb():
    r = rng(4)
    x = r.uniform(-1, 1, (25, 2))
    t = np.sin(2 * x[:, 0]) + x[:, 1] ** 2 + 0.1 * r.standard_normal(25)
    return np.array([0.3]), np.array([1.5]), x, t, r.uniform(-1, 1, (6, 2))


# ---- 5. PRML: Gaussian basis functions, evidence re-estimation by eigenvalues ------------------

class GaussianFeature:
    def __init__(self, mean, var):
        if mean.ndim == 1:
            mean = mean[:, None]
        self.mean = mean
        self.var = var

    def _gauss(self, x, mean):
        return np.exp(-0.5 * np.sum(np.square(x - mean), axis=-1) / self.var)

    def transform(self, x):
        if x.ndim == 1:
            x = x[:, None]
        basis = [np.ones(len(x))]
        for m in self.mean:
            basis.append(self._gauss(x, m))
        return np.asarray(basis).transpose()


def evidence_reestimate(Phi, t, alpha, beta, iter_max=3):
    M = Phi.shape[1]
    eigenvalues = np.linalg.eigvalsh(Phi.T @ Phi)
    for _ in range(iter_max):
        precision = alpha * np.eye(M) + beta * Phi.T @ Phi
        w_mean = beta * np.linalg.solve(precision, Phi.T @ t)
        gamma = np.sum(beta * eigenvalues / (alpha + beta * eigenvalues))
        alpha = gamma / np.sum(w_mean ** 2)
        beta = (len(t) - gamma) / np.sum(np.square(t - Phi @ w_mean))
    return alpha, beta, w_mean


def prml_gaussian_evidence_iter(means, t, x):
    Phi = GaussianFeature(means, var=0.1).transform(x)
    alpha, beta, w = evidence_reestimate(Phi, t, alpha=1.0, beta=10.0)
    N, M = Phi.shape
    A = alpha * np.eye(M) + beta * Phi.T @ Phi
    E = 0.5 * beta * np.sum((t - Phi @ w) ** 2) + 0.5 * alpha * w @ w
    return -(0.5 * M * np.log(alpha) + 0.5 * N * np.log(beta) - E
             - 0.5 * np.linalg.slogdet(A)[1]) / N


def _pge():
    r = rng(5)
    x = np.linspace(0, 1, 20)
    t = np.sin(2 * np.pi * x) + 0.2 * r.standard_normal(20)
    means = np.linspace(0.05, 0.95, 5) + 0.02 * r.standard_normal(5)
    return means, t, x


# ---- 6. a relevance vector machine's re-estimation loop --------------------------------------

def rbf_design(x, centres, log_ls):
    d2 = np.square(x[:, None] - centres[None, :])
    return np.exp(-0.5 * d2 / np.exp(2 * log_ls))


class RelevanceVectorRegressor:
    def __init__(self, alpha=1.0, beta=1.0):
        self.alpha = alpha
        self.beta = beta

    def fit(self, Phi, t, iter_max=3):
        N, M = Phi.shape
        self.alpha = np.zeros(M) + self.alpha
        for _ in range(iter_max):
            precision = np.diag(self.alpha) + self.beta * Phi.T @ Phi
            covariance = np.linalg.inv(precision)
            mean = self.beta * covariance @ Phi.T @ t
            gamma = 1 - self.alpha * np.diag(covariance)
            self.alpha = gamma / np.square(mean)
            np.clip(self.alpha, 0, 1e10, out=self.alpha)
            self.beta = (N - np.sum(gamma)) / np.sum((t - Phi.dot(mean)) ** 2)
        self.covariance = covariance
        self.mean = mean
        return self


def rvm_regression(t, log_ls, x):
    Phi = rbf_design(x, x[::3], log_ls[0])
    rvm = RelevanceVectorRegressor(alpha=1.0, beta=20.0).fit(Phi, t)
    pred = Phi @ rvm.mean
    var = 1.0 / rvm.beta + np.sum(Phi @ rvm.covariance * Phi, axis=1)
    return np.mean((pred - t) ** 2 / var + np.log(var))


def _rvm():
    r = rng(6)
    x = np.sort(r.uniform(-2, 2, 18))
    t = np.sinc(x) + 0.1 * r.standard_normal(18)
    return t, np.array([-0.2]), x


# ---- 7. GP regression with cho_factor(lower=True) and a hyperparameter dict -------------------

class ARDKernel:
    def __init__(self, hyp):
        self.ls = np.exp(hyp["log_ls"])
        self.sf2 = np.exp(2 * hyp["log_sf"])

    def __call__(self, A, B):
        diff = (A[:, None, :] - B[None, :, :]) / self.ls
        return self.sf2 * np.exp(-0.5 * np.sum(diff ** 2, axis=-1))


class GPRegressor:
    def __init__(self, hyp):
        self.hyp = hyp
        self.kernel = ARDKernel(hyp)

    def fit(self, X, y):
        n = len(X)
        K = self.kernel(X, X) + np.exp(2 * self.hyp["log_sn"]) * np.eye(n)
        self.L_ = scipy.linalg.cho_factor(K, lower=True)
        self.alpha_ = scipy.linalg.cho_solve(self.L_, y)
        self.X_train_ = X
        self.nll_ = (0.5 * y @ self.alpha_ + np.sum(np.log(np.diag(self.L_[0])))
                     + 0.5 * n * np.log(2 * np.pi))
        return self

    def predict(self, Xs, return_var=False):
        Ks = self.kernel(Xs, self.X_train_)
        mu = Ks @ self.alpha_
        if not return_var:
            return mu
        v = scipy.linalg.cho_solve(self.L_, Ks.T)
        var = np.exp(2 * self.hyp["log_sf"]) - np.sum(Ks * v.T, axis=1)
        return mu, var


def gp_cho_hyp_dict(hyp, X, y, Xs, ys):
    gp = GPRegressor(hyp).fit(X, y)
    mu, var = gp.predict(Xs, return_var=True)
    return gp.nll_ / len(y) + np.mean((mu - ys) ** 2) + 0.1 * np.mean(var)


def _gp():
    r = rng(7)
    X = r.uniform(-2, 2, (15, 2))
    f = lambda Z: np.sin(Z[:, 0]) * np.cos(0.5 * Z[:, 1])
    Xs = r.uniform(-2, 2, (5, 2))
    hyp = {"log_ls": np.array([0.1, 0.3]), "log_sf": np.array(0.0), "log_sn": np.array(-1.5)}
    return hyp, X, f(X) + 0.1 * r.standard_normal(15), Xs, f(Xs)


# ---- 8. scikit-learn-like BaseEstimator, clone, kernel ridge with assume_a --------------------

class BaseEstimator:
    @classmethod
    def _get_param_names(cls):
        init_signature = inspect.signature(cls.__init__)
        parameters = [p for p in init_signature.parameters.values()
                      if p.name != "self" and p.kind != p.VAR_KEYWORD]
        return sorted(p.name for p in parameters)

    def get_params(self, deep=True):
        return {key: getattr(self, key) for key in self._get_param_names()}

    def set_params(self, **params):
        valid = self.get_params()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"Invalid parameter {key} for estimator {self}")
            setattr(self, key, value)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def clone(estimator):
    return type(estimator)(**estimator.get_params())


class PolynomialKernel:
    def __init__(self, degree=2, gamma=0.5, coef0=1.0):
        self.degree, self.gamma, self.coef0 = degree, gamma, coef0

    def __call__(self, X, Y=None):
        Y = X if Y is None else Y
        return (self.gamma * X @ Y.T + self.coef0) ** self.degree


class KernelRidge(BaseEstimator):
    def __init__(self, alpha=1.0, degree=2, gamma=0.5):
        self.alpha = alpha
        self.degree = degree
        self.gamma = gamma

    def _check_X(self, X):
        X = np.asarray(X, dtype=np.float64)
        return np.atleast_2d(X)

    def fit(self, X, y):
        X = self._check_X(X)
        self.kernel_ = PolynomialKernel(self.degree, self.gamma)
        K = self.kernel_(X)
        self.dual_coef_ = scipy.linalg.solve(K + self.alpha * np.eye(len(X)), y, assume_a="pos")
        self.X_fit_ = X
        return self

    def predict(self, X):
        return self.kernel_(self._check_X(X), self.X_fit_) @ self.dual_coef_


def sklearn_kernel_ridge(X, log_alpha, y, Xv, yv):
    base = KernelRidge(degree=3)
    model = clone(base).set_params(alpha=np.exp(log_alpha[0]))
    model.fit(X, y)
    return np.mean((model.predict(Xv) - yv) ** 2)


def _skr():
    r = rng(8)
    X = r.uniform(-1, 1, (14, 2))
    g = lambda Z: Z[:, 0] ** 2 - Z[:, 1] + 0.5 * Z[:, 0] * Z[:, 1]
    Xv = r.uniform(-1, 1, (6, 2))
    return X, np.array([-1.0]), g(X) + 0.05 * r.standard_normal(14), Xv, g(Xv)


# ---- 9. numpy-ml-style layers with string-parsed activations ----------------------------------

class ActivationBase:
    def __call__(self, z):
        if z.ndim == 1:
            z = z.reshape(1, -1)
        return self.fn(z)


class Tanh(ActivationBase):
    def __str__(self):
        return "Tanh"

    def fn(self, z):
        return np.tanh(z)


class LeakyReLU(ActivationBase):
    def __init__(self, alpha=0.3):
        self.alpha = alpha

    def __str__(self):
        return "Leaky ReLU(alpha={})".format(self.alpha)

    def fn(self, z):
        _z = z.copy()
        _z[z < 0] = _z[z < 0] * self.alpha
        return _z


class Identity(ActivationBase):
    def __str__(self):
        return "Identity"

    def fn(self, z):
        return z


class ActivationInitializer:
    def __init__(self, param=None):
        self.param = param

    def __call__(self):
        param = self.param
        if param is None:
            return Identity()
        if isinstance(param, ActivationBase):
            return param
        if isinstance(param, str):
            return self.init_from_str(param)
        raise ValueError("Unknown activation: {}".format(param))

    def init_from_str(self, act_str):
        act_str = act_str.lower()
        if act_str == "tanh":
            return Tanh()
        if "leaky relu" in act_str:
            r = r"leaky relu\(alpha=(.*)\)"
            alpha = float(re.match(r, act_str).groups()[0])
            return LeakyReLU(alpha)
        raise ValueError("Unknown activation: {}".format(act_str))


class FullyConnected:
    def __init__(self, n_out, act_fn=None):
        self.n_out = n_out
        self.act_fn = ActivationInitializer(act_fn)()
        self.parameters = {"W": None, "b": None}
        self.derived_variables = {"Z": []}
        self.X = []

    @property
    def hyperparameters(self):
        return {"layer": "FullyConnected", "n_out": self.n_out, "act_fn": str(self.act_fn)}

    def forward(self, X, retain_derived=True):
        Y, Z = self._fwd(X)
        if retain_derived:
            self.X.append(X)
            self.derived_variables["Z"].append(Z)
        return Y

    def _fwd(self, X):
        W = self.parameters["W"]
        b = self.parameters["b"]
        Z = X @ W + b
        Y = self.act_fn(Z)
        return Y, Z


class CrossEntropy:
    def __call__(self, y, y_pred):
        return self.loss(y, y_pred)

    def __str__(self):
        return "CrossEntropy"

    @staticmethod
    def loss(y, y_pred):
        eps = np.finfo(float).eps
        return -np.sum(y * np.log(y_pred + eps))


def numpy_ml_fc_regex(params, X, Y):
    acts = ["Leaky ReLU(alpha=0.2)", "tanh", None]
    layers = []
    for p, act in zip(params, acts):
        layer = FullyConnected(n_out=p["W"].shape[1], act_fn=act)
        layer.parameters.update(p)
        layers.append(layer)
    h = X
    for layer in layers:
        h = layer.forward(h)
    assert layers[0].hyperparameters["act_fn"].startswith("Leaky")
    e = np.exp(h - h.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    return CrossEntropy()(Y, probs) / len(X) + 1e-3 * sum(
        np.sum(layer.derived_variables["Z"][-1] ** 2) for layer in layers)


def _nml():
    r = rng(9)
    sizes = [4, 6, 5, 3]
    params = [{"W": r.standard_normal((a, b)) * 0.6, "b": r.standard_normal(b) * 0.1}
              for a, b in zip(sizes[:-1], sizes[1:])]
    return params, r.standard_normal((8, 4)), np.eye(3)[r.integers(0, 3, 8)]


# ---- 10. numpy-ml-style Adam keeping per-parameter moments in ``self.cache`` ------------------

class Adam:
    def __init__(self, lr=0.05, decay1=0.9, decay2=0.999, eps=1e-7):
        self.cache = {}
        self.hyperparameters = {"id": "Adam", "lr": lr, "decay1": decay1,
                                "decay2": decay2, "eps": eps}

    def __call__(self, param, param_grad, param_name, cur_loss=None):
        return self.update(param, param_grad, param_name, cur_loss)

    def update(self, param, param_grad, param_name, cur_loss=None):
        C = self.cache
        H = self.hyperparameters
        d1, d2 = H["decay1"], H["decay2"]
        lr, eps = H["lr"], H["eps"]
        if param_name not in C:
            C[param_name] = {"t": 0, "mean": np.zeros_like(param_grad),
                             "var": np.zeros_like(param_grad)}
        t = C[param_name]["t"] + 1
        var = C[param_name]["var"]
        mean = C[param_name]["mean"]
        C[param_name]["t"] = t
        C[param_name]["var"] = d2 * var + (1 - d2) * param_grad ** 2
        C[param_name]["mean"] = d1 * mean + (1 - d1) * param_grad
        v_hat = C[param_name]["var"] / (1 - d2 ** t)
        m_hat = C[param_name]["mean"] / (1 - d1 ** t)
        update = lr * m_hat / (np.sqrt(v_hat) + eps)
        return param - update


def numpy_ml_adam_cache(W, b, X, y):
    opt = Adam()
    params = {"W": W, "b": b}
    n = len(y)
    for step in range(4):
        resid = X @ params["W"] + params["b"] - y
        grads = {"W": X.T @ resid / n, "b": resid.mean(axis=0)}
        for name in ("W", "b"):
            params[name] = opt(params[name], grads[name], name)
    assert opt.cache["W"]["t"] == 4
    return 0.5 * np.mean((X @ params["W"] + params["b"] - y) ** 2)


def _adam():
    r = rng(10)
    X = r.standard_normal((16, 3))
    return (r.standard_normal((3, 2)), r.standard_normal(2) * 0.1, X,
            X @ r.standard_normal((3, 2)) + 0.1 * r.standard_normal((16, 2)))


# ---- 11. a scikit-like Huber regressor: _check_X, np.insert bias, clone + set_params ----------

class HuberRegressor(BaseEstimator):
    def __init__(self, epsilon=1.35, alpha=1e-3, fit_intercept=True):
        self.epsilon = epsilon
        self.alpha = alpha
        self.fit_intercept = fit_intercept

    def _check_X(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[:, np.newaxis]
        return X

    def _loss(self, coef, X, y):
        X = self._check_X(X)
        if self.fit_intercept:
            X = np.insert(X, 0, 1, axis=1)
        r = y - X @ coef
        a = np.abs(r)
        quad = 0.5 * r ** 2
        lin = self.epsilon * a - 0.5 * self.epsilon ** 2
        return np.mean(np.where(a <= self.epsilon, quad, lin)) + self.alpha * coef[1:] @ coef[1:]


def sklearn_huber_clone(coef, X, y):
    est = HuberRegressor()
    other = clone(est).set_params(epsilon=0.8, alpha=1e-2)
    return est._loss(coef, X, y) + other._loss(coef, X, y)


def _hub():
    r = rng(11)
    X = r.standard_normal((20, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 + r.standard_t(2, 20) * 0.7
    return r.standard_normal(4) * 0.3, X, y


# ---- 12. CS231n im2col by index arrays, pooling by reshape -----------------------------------

def get_im2col_indices(x_shape, field_height, field_width, padding=1, stride=1):
    N, C, H, W = x_shape
    out_height = (H + 2 * padding - field_height) // stride + 1
    out_width = (W + 2 * padding - field_width) // stride + 1
    i0 = np.repeat(np.arange(field_height), field_width)
    i0 = np.tile(i0, C)
    i1 = stride * np.repeat(np.arange(out_height), out_width)
    j0 = np.tile(np.arange(field_width), field_height * C)
    j1 = stride * np.tile(np.arange(out_width), out_height)
    i = i0.reshape(-1, 1) + i1.reshape(1, -1)
    j = j0.reshape(-1, 1) + j1.reshape(1, -1)
    k = np.repeat(np.arange(C), field_height * field_width).reshape(-1, 1)
    return k, i, j


def im2col_indices(x, field_height, field_width, padding=1, stride=1):
    p = padding
    x_padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), mode="constant")
    k, i, j = get_im2col_indices(x.shape, field_height, field_width, padding, stride)
    cols = x_padded[:, k, i, j]
    C = x.shape[1]
    cols = cols.transpose(1, 2, 0).reshape(field_height * field_width * C, -1)
    return cols


class Conv2D:
    def __init__(self, W, b, stride=1, pad=1):
        self.W, self.b = W, b
        self.stride, self.pad = stride, pad
        self.cache = None

    def forward(self, x):
        N, C, H, W_ = x.shape
        F, _, HH, WW = self.W.shape
        out_h = (H + 2 * self.pad - HH) // self.stride + 1
        out_w = (W_ + 2 * self.pad - WW) // self.stride + 1
        x_cols = im2col_indices(x, HH, WW, self.pad, self.stride)
        res = self.W.reshape((F, -1)).dot(x_cols) + self.b.reshape(-1, 1)
        out = res.reshape(F, out_h, out_w, N).transpose(3, 0, 1, 2)
        self.cache = (x, x_cols)
        return out


def max_pool_reshape(x, pool=2):
    N, C, H, W = x.shape
    x_reshaped = x.reshape(N, C, H // pool, pool, W // pool, pool)
    return x_reshaped.max(axis=3).max(axis=4)


def cs231n_im2col_indices(W, b, W_fc, x, y):
    conv = Conv2D(W, b)
    h = np.maximum(conv.forward(x), 0)
    p = max_pool_reshape(h)
    scores = p.reshape(p.shape[0], -1) @ W_fc
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(log_probs[np.arange(len(y)), y]) / len(y)


def _c231():
    r = rng(12)
    return (r.standard_normal((3, 2, 3, 3)) * 0.4, r.standard_normal(3) * 0.1,
            r.standard_normal((27, 4)) * 0.3, r.standard_normal((2, 2, 6, 6)),
            np.array([1, 3]))


# ---- 13. batch norm with a mode string and running statistics updated in place -------------

class BatchNorm:
    def __init__(self, dim, momentum=0.9, eps=1e-5):
        self.mode = "train"
        self.momentum = momentum
        self.eps = eps
        self.running_mean = np.zeros(dim)
        self.running_var = np.ones(dim)

    def forward(self, x, gamma, beta):
        if self.mode == "train":
            mu = np.mean(x, axis=0)
            var = np.var(x, axis=0)
            self.running_mean *= self.momentum
            self.running_mean += (1 - self.momentum) * mu
            self.running_var *= self.momentum
            self.running_var += (1 - self.momentum) * var
        elif self.mode == "test":
            mu, var = self.running_mean, self.running_var
        else:
            raise ValueError('Invalid forward batchnorm mode "%s"' % self.mode)
        x_hat = (x - mu) / np.sqrt(var + self.eps)
        return gamma * x_hat + beta


def batchnorm_mode_running(W, gamma, beta, X, Xv, v):
    bn = BatchNorm(W.shape[1])
    losses = []
    for batch in (X[:10], X[10:]):
        h = np.tanh(bn.forward(batch @ W, gamma, beta))
        losses.append(np.mean((h @ v) ** 2))
    bn.mode = "test"
    hv = np.tanh(bn.forward(Xv @ W, gamma, beta))
    return sum(losses) + np.mean((hv @ v - 1.0) ** 2)


def _bn():
    r = rng(13)
    return (r.standard_normal((4, 5)), 1.0 + 0.1 * r.standard_normal(5),
            0.1 * r.standard_normal(5), r.standard_normal((20, 4)), r.standard_normal((7, 4)),
            r.standard_normal(5))


# ---- 14. a Sequential with __getitem__ slices split into encoder and decoder ----------------

class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return x @ self.W + self.b


class Activation:
    def __init__(self, name):
        self.name = name

    def __call__(self, x):
        return getattr(np, self.name)(x)


class Sequential:
    def __init__(self, *layers):
        self.layers = list(layers)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(*self.layers[idx])
        return self.layers[idx]

    def __len__(self):
        return len(self.layers)

    def __iter__(self):
        return iter(self.layers)

    def __call__(self, x):
        for layer in self:
            x = layer(x)
        return x


def sequential_slice_autoencoder(params, X):
    (W1, b1), (W2, b2), (W3, b3), (W4, b4) = params
    model = Sequential(Dense(W1, b1), Activation("tanh"), Dense(W2, b2),
                       Dense(W3, b3), Activation("tanh"), Dense(W4, b4))
    encoder, decoder = model[: len(model) // 2], model[len(model) // 2:]
    z = encoder(X)
    recon = decoder(z)
    return np.mean((recon - X) ** 2) + 1e-2 * np.mean(np.log1p(z ** 2))


def _seq():
    r = rng(14)
    sizes = [6, 4, 2, 4, 6]
    params = [(r.standard_normal((a, b)) * 0.5, r.standard_normal(b) * 0.1)
              for a, b in zip(sizes[:-1], sizes[1:])]
    return params, r.standard_normal((10, 6))


# ---- 15. GAN losses sharing a BCE helper through functools.partial ---------------------------

def _bce_with_logits(logits, target):
    return np.mean(np.maximum(logits, 0) - logits * target + np.log1p(np.exp(-np.abs(logits))))


real_loss = functools.partial(_bce_with_logits, target=1.0)
fake_loss = functools.partial(_bce_with_logits, target=0.0)


class Generator:
    def __init__(self, params):
        self.params = params

    def __call__(self, z):
        h = np.tanh(z @ self.params["W1"] + self.params["b1"])
        return h @ self.params["W2"]


class Discriminator:
    def __init__(self, params):
        self.params = params

    def features(self, x):
        return np.tanh(x @ self.params["W1"])

    def __call__(self, x):
        return (self.features(x) @ self.params["w2"]).ravel()


def gan_partial_bce(g_params, d_params, x_real, z):
    G, D = Generator(g_params), Discriminator(d_params)
    x_fake = G(z)
    d_loss = real_loss(D(x_real)) + fake_loss(D(x_fake))
    g_loss = real_loss(D(x_fake))
    fm = np.mean((D.features(x_real).mean(0) - D.features(x_fake).mean(0)) ** 2)
    return d_loss + g_loss + fm


def _gan():
    r = rng(15)
    g = {"W1": r.standard_normal((3, 5)) * 0.5, "b1": r.standard_normal(5) * 0.1,
         "W2": r.standard_normal((5, 4)) * 0.5}
    d = {"W1": r.standard_normal((4, 6)) * 0.5, "w2": r.standard_normal((6, 1))}
    return g, d, r.standard_normal((8, 4)) + 1.0, r.standard_normal((8, 3))


# ---- 16. implicit-feedback ALS: user rows solved in a loop, then the weighted loss ----------

def implicit_als_step(V, R, alpha=5.0, lam=0.1):
    C = 1.0 + alpha * R
    P = (R > 0).astype(np.float64)
    n_users, k = R.shape[0], V.shape[1]
    U = np.zeros((n_users, k))
    VtV = V.T.dot(V)
    for u in range(n_users):
        Cu = C[u]
        A = VtV + V.T.dot((Cu - 1)[:, None] * V) + lam * np.eye(k)
        U[u] = np.linalg.solve(A, (V.T * Cu).dot(P[u]))
    err = P - U @ V.T
    return np.sum(C * err ** 2) + lam * (np.sum(U ** 2) + np.sum(V ** 2))


def _als():
    r = rng(16)
    R = r.poisson(2.0, (6, 10)) * (r.random((6, 10)) < 0.35)
    return r.standard_normal((10, 3)) * 0.5, R.astype(float)


# ---- 17. ListNet over query groups with np.add.reduceat ---------------------------------------

def listnet_reduceat(w, X, rel, counts):
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    scores = X @ w
    exp_s = np.exp(scores - scores.max())
    p_pred = exp_s / np.repeat(np.add.reduceat(exp_s, starts), counts)
    exp_r = np.exp(rel)
    p_true = exp_r / np.repeat(np.add.reduceat(exp_r, starts), counts)
    return -np.sum(p_true * np.log(p_pred)) / len(counts)


def _lnet():
    r = rng(17)
    counts = np.array([4, 6, 3, 5])
    n = counts.sum()
    return r.standard_normal(5) * 0.5, r.standard_normal((n, 5)), r.integers(0, 3, n) * 1.0, counts


# ---- 18. RankNet pairs by np.subtract.outer under a triu mask ----------------------------------

def ranknet_outer_triu(w, X, y, sigma=1.0):
    s = X @ w
    diff = np.subtract.outer(s, s)
    y_diff = np.subtract.outer(y, y)
    mask = np.triu(np.ones_like(diff, dtype=bool), k=1) & (y_diff != 0)
    S = np.sign(y_diff)
    pair_loss = np.logaddexp(0.0, -sigma * S * diff)
    ranks = np.argsort(np.argsort(-s)) + 1
    gain = (2.0 ** y - 1) / np.log2(1 + ranks)
    weight = np.abs(np.subtract.outer(gain, gain))
    return np.sum(np.where(mask, weight * pair_loss, 0.0)) / mask.sum()


def _rnet():
    r = rng(18)
    return r.standard_normal(4) * 0.5, r.standard_normal((12, 4)), r.integers(0, 4, 12) * 1.0


# ---- 19. DeepSurv-style Cox loss with Breslow ties from np.unique and np.bincount -----------

def deepsurv_breslow_bincount(W1, w2, X, times, events):
    h = np.tanh(X @ W1) @ w2
    uniq, inv = np.unique(times, return_inverse=True)
    hazard_sum = np.bincount(inv, weights=np.exp(h), minlength=len(uniq))
    risk_set = np.cumsum(hazard_sum[::-1])[::-1]
    d = np.bincount(inv, weights=events, minlength=len(uniq))
    partial = np.sum(h * events) - np.sum(d * np.log(risk_set))
    return -partial / events.sum()


def _ds():
    r = rng(19)
    X = r.standard_normal((20, 4))
    times = r.integers(0, 7, 20)
    events = (r.random(20) < 0.7).astype(float)
    return r.standard_normal((4, 5)) * 0.5, r.standard_normal(5) * 0.5, X, times, events


# ---- 20. black-box VI for Bayesian logistic regression with a fixed RandomState -------------

def bbvi_logistic_elbo(mu, rho, X, y, n_samples=8):
    rs = np.random.RandomState(0)
    eps = rs.randn(n_samples, mu.size)
    sigma = np.log1p(np.exp(rho))
    W = mu + sigma * eps
    logits = X @ W.T
    loglik = -np.logaddexp(0.0, -y[:, None] * logits).sum(axis=0)
    kl = 0.5 * np.sum(sigma ** 2 + mu ** 2 - 1.0 - 2.0 * np.log(sigma))
    return -(loglik.mean() - kl) / len(y)


def _bbvi():
    r = rng(20)
    X = r.standard_normal((20, 3))
    y = np.sign(X @ np.array([1.5, -1.0, 0.5]) + 0.5 * r.standard_normal(20))
    return r.standard_normal(3) * 0.3, r.standard_normal(3) * 0.3 - 1.0, X, y


# ---- 21. scipy.optimize-style objective: one flat theta unpacked by slicing -------------------

LAYER_SHAPES = [(4, 6), (6,), (6, 3), (3,)]


def unpack(theta, shapes=LAYER_SHAPES):
    params, i = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        params.append(theta[i:i + size].reshape(shape))
        i += size
    assert i == theta.size
    return params


def flat_theta_slices(theta, X, y, lam=1e-3):
    W1, b1, W2, b2 = unpack(theta)
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    logp = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)
    nll = -np.mean(logp[np.arange(len(y)), y])
    return nll + 0.5 * lam * theta.dot(theta)


def _fts():
    r = rng(21)
    n_theta = sum(int(np.prod(s)) for s in LAYER_SHAPES)
    return r.standard_normal(n_theta) * 0.4, r.standard_normal((10, 4)), r.integers(0, 3, 10)


# ---- 22. the same, unpacked by np.split at cumulative offsets ---------------------------------

def unflatten(theta, shapes):
    sizes = [math.prod(s) for s in shapes]
    chunks = np.split(theta, np.cumsum(sizes)[:-1])
    return [c.reshape(s) for c, s in zip(chunks, shapes)]


def flat_theta_split(theta, X, y):
    shapes = ((3, 5), (5,), (5, 1))
    W, b, v = unflatten(theta, shapes)
    pred = (np.tanh(X @ W + b) @ v).ravel()
    return np.mean((pred - y) ** 2)


def _ftsp():
    r = rng(22)
    X = r.standard_normal((12, 3))
    return r.standard_normal(25) * 0.5, X, np.sin(X[:, 0]) + X[:, 1]


# ---- 23. operator.itemgetter unpacking and functools.partial layers ---------------------------

def dense(x, W, b, act=None):
    z = x @ W + b
    return z if act is None else act(z)


def itemgetter_partial(params, X, y):
    W1, b1, W2, b2 = operator.itemgetter("W1", "b1", "W2", "b2")(params)
    hidden = functools.partial(dense, act=np.tanh)
    out = functools.partial(dense, act=scipy.special.expit)
    p = out(hidden(X, W1, b1), W2, b2).ravel()
    p = np.clip(p, 1e-7, 1 - 1e-7)
    bce = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    l2 = sum(map(lambda w: np.sum(w ** 2), operator.itemgetter("W1", "W2")(params)))
    return bce + 1e-2 * l2


def _igp():
    r = rng(23)
    params = {"W1": r.standard_normal((3, 4)), "b1": r.standard_normal(4) * 0.1,
              "W2": r.standard_normal((4, 1)), "b2": np.zeros(1)}
    return params, r.standard_normal((14, 3)), (r.random(14) > 0.5).astype(float)


# ---- 24. a module registering parameters through __setattr__ into an OrderedDict -------------

class Parameter:
    def __init__(self, data):
        self.data = data


class Module:
    def __init__(self):
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_modules", collections.OrderedDict())

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def named_parameters(self, prefix=""):
        for name, p in self._parameters.items():
            yield prefix + name, p
        for mname, m in self._modules.items():
            yield from m.named_parameters(prefix + mname + ".")

    def load_state_dict(self, state):
        own = dict(self.named_parameters())
        for name, value in state.items():
            own[name].data = value
        return self

    def __call__(self, *args):
        return self.forward(*args)


class Linear(Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = Parameter(np.zeros((n_out, n_in)))
        self.bias = Parameter(np.zeros(n_out))

    def forward(self, x):
        return x @ self.weight.data.T + self.bias.data


class MLP(Module):
    def __init__(self):
        super().__init__()
        self.fc1 = Linear(3, 5)
        self.fc2 = Linear(5, 2)

    def forward(self, x):
        return self.fc2(np.tanh(self.fc1(x)))


def module_setattr_ordered(state, X, Y):
    net = MLP().load_state_dict(collections.OrderedDict(sorted(state.items())))
    out = net(X)
    decay = sum(np.sum(p.data ** 2) for name, p in net.named_parameters() if "weight" in name)
    return np.mean((out - Y) ** 2) + 1e-3 * decay


def _msa():
    r = rng(24)
    state = {"fc1.weight": r.standard_normal((5, 3)), "fc1.bias": r.standard_normal(5) * 0.1,
             "fc2.weight": r.standard_normal((2, 5)), "fc2.bias": r.standard_normal(2) * 0.1}
    return state, r.standard_normal((9, 3)), r.standard_normal((9, 2))


# ---- 25. weight normalisation as a property, cosine classifier ------------------------------

class WeightNormLinear:
    def __init__(self, v, g):
        self.v = v
        self.g = g

    @property
    def weight(self):
        return self.g * self.v / np.linalg.norm(self.v, axis=0, keepdims=True)


class CosineClassifier:
    def __init__(self, proto, scale=8.0):
        self.proto = proto
        self.scale = scale

    def __call__(self, h):
        hn = h / np.linalg.norm(h, axis=1, keepdims=True)
        pn = self.proto / np.linalg.norm(self.proto, axis=1, keepdims=True)
        return self.scale * hn @ pn.T


def weight_norm_cosine(v, g, P, X, y):
    layer = WeightNormLinear(v, g)
    h = np.tanh(X @ layer.weight)
    logits = CosineClassifier(P)(h)
    logp = scipy.special.log_softmax(logits, axis=1)
    return -np.mean(logp[np.arange(len(y)), y])


def _wnc():
    r = rng(25)
    return (r.standard_normal((4, 5)), 1.0 + 0.2 * r.standard_normal(5),
            r.standard_normal((3, 5)), r.standard_normal((10, 4)), r.integers(0, 3, 10))


# ---- 26. a DQN target network by copy.deepcopy, then Polyak averaging ------------------------

class QNetwork:
    def __init__(self, params):
        self.params = params

    def __call__(self, s):
        h = np.tanh(s @ self.params["W1"] + self.params["b1"])
        return h @ self.params["W2"]


def deepcopy_polyak_dqn(params, s, a, r, s2, done, gamma=0.9, tau=0.3):
    online = QNetwork(params)
    target = copy.deepcopy(online)
    for k in target.params:
        target.params[k] = tau * online.params[k] + (1 - tau) * target.params[k] * 0.9
    q = online(s)[np.arange(len(a)), a]
    q_next = target(s2).max(axis=1)
    td = r + gamma * (1.0 - done) * q_next - q
    return np.mean(np.where(np.abs(td) < 1.0, 0.5 * td ** 2, np.abs(td) - 0.5))


def _dqn():
    r = rng(26)
    params = {"W1": r.standard_normal((4, 6)) * 0.5, "b1": r.standard_normal(6) * 0.1,
              "W2": r.standard_normal((6, 3)) * 0.5}
    return (params, r.standard_normal((10, 4)), r.integers(0, 3, 10), r.standard_normal(10),
            r.standard_normal((10, 4)), (r.random(10) < 0.2).astype(float))


# ---- 27. LMNN-style metric learning with np.einsum(optimize=True) ---------------------------

def lmnn_einsum_optimize(L, X, targets, impostors, margin=1.0):
    M = L.T @ L
    d_t = X - X[targets]
    d_i = X - X[impostors]
    pull = np.einsum("ij,jk,ik->i", d_t, M, d_t, optimize=True)
    push = np.einsum("ij,jk,ik->i", d_i, M, d_i, optimize="greedy")
    hinge = np.log1p(np.exp(margin + pull - push))
    return np.mean(pull) + np.mean(hinge)


def _lmnn():
    r = rng(27)
    n = 14
    return (np.eye(3) + 0.2 * r.standard_normal((3, 3)), r.standard_normal((n, 3)),
            r.permutation(n), r.permutation(n))


# ---- 28. proxy-NCA with normalised embeddings and a masked mean -------------------------------

def proxy_nca_masked(W, P, X, labels):
    emb = X @ W
    emb = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    prox = P / np.linalg.norm(P, axis=1, keepdims=True)
    d = 2.0 - 2.0 * emb @ prox.T
    valid = labels >= 0
    safe = np.where(valid, labels, 0)
    logp = -d - scipy.special.logsumexp(-d, axis=1, keepdims=True)
    per = -logp[np.arange(len(safe)), safe]
    return np.sum(per * valid) / np.maximum(valid.sum(), 1)


def _pnca():
    r = rng(28)
    labels = r.integers(0, 4, 12)
    labels[[2, 7]] = -1
    return r.standard_normal((5, 3)), r.standard_normal((4, 3)), r.standard_normal((12, 5)), labels


# ---- 29. Bishop's mixture density network cut by np.split at index lists --------------------

def mdn_split_indices(W1, W2, x, t, K=3):
    h = np.tanh(x @ W1)
    out = h @ W2
    pi_logits, mu, log_sigma = np.split(out, [K, 2 * K], axis=1)
    log_pi = pi_logits - scipy.special.logsumexp(pi_logits, axis=1, keepdims=True)
    log_norm = (-0.5 * ((t - mu) / np.exp(log_sigma)) ** 2 - log_sigma
                - 0.5 * np.log(2 * np.pi))
    return -np.mean(scipy.special.logsumexp(log_pi + log_norm, axis=1))


def _mdn():
    r = rng(29)
    x = r.uniform(0, 1, (15, 1))
    t = x + 0.3 * np.sin(2 * np.pi * x) + 0.05 * r.standard_normal((15, 1))
    return r.standard_normal((1, 6)), r.standard_normal((6, 9)) * 0.5, x, t


# ---- 30. Fisher's linear discriminant ratio from per-class scatter ----------------------------

def fisher_lda_ratio(w, X, y):
    m = X.mean(axis=0)
    d = X.shape[1]
    Sw = np.zeros((d, d))
    Sb = np.zeros((d, d))
    for c in np.unique(y):
        Xc = X[y == c]
        mc = Xc.mean(axis=0)
        Sw += (Xc - mc).T @ (Xc - mc)
        Sb += len(Xc) * np.outer(mc - m, mc - m)
    return -(w @ Sb @ w) / (w @ Sw @ w)


def _flda():
    r = rng(30)
    y = np.repeat([0, 1, 2], 6)
    X = r.standard_normal((18, 3)) + np.array([[0, 0, 0], [2, 0, 1], [0, 2, -1]])[y]
    return r.standard_normal(3), X, y


# ---- 31. probabilistic PCA log-likelihood ------------------------------------------------------

def ppca_loglik(W, log_sigma2, X):
    N, D = X.shape
    C = W @ W.T + np.exp(log_sigma2) * np.eye(D)
    S = np.cov(X, rowvar=False, bias=True)
    _, logdet = np.linalg.slogdet(C)
    return 0.5 * N * (D * np.log(2 * np.pi) + logdet + np.trace(np.linalg.solve(C, S))) / N


def _ppca():
    r = rng(31)
    Z = r.standard_normal((30, 2))
    X = Z @ r.standard_normal((2, 4)) + 0.3 * r.standard_normal((30, 4))
    return r.standard_normal((4, 2)), np.array(-1.0), X


# ---- 32. Laplace evidence of Bayesian logistic regression after Newton steps ------------------

def laplace_evidence_newton(log_alpha, Phi, t, n_newton=6):
    alpha = np.exp(log_alpha)
    N, M = Phi.shape
    w = np.zeros(M)
    for _ in range(n_newton):
        p = scipy.special.expit(Phi @ w)
        g = Phi.T @ (p - t) + alpha * w
        H = Phi.T @ (Phi * (p * (1 - p))[:, None]) + alpha * np.eye(M)
        w = w - np.linalg.solve(H, g)
    p = scipy.special.expit(Phi @ w)
    H = Phi.T @ (Phi * (p * (1 - p))[:, None]) + alpha * np.eye(M)
    loglik = np.sum(scipy.special.xlogy(t, p) + scipy.special.xlogy(1 - t, 1 - p))
    log_ev = (loglik - 0.5 * alpha * w @ w + 0.5 * M * np.log(alpha)
              - 0.5 * np.linalg.slogdet(H)[1])
    return -log_ev / N


def _lap():
    r = rng(32)
    Phi = np.c_[np.ones(25), r.standard_normal((25, 3))]
    t = (Phi @ np.array([0.2, 1.0, -1.0, 0.5]) + r.standard_normal(25) > 0).astype(float)
    return np.array(0.5), Phi, t


# ---- 33. CS229 locally weighted linear regression ---------------------------------------------

def lwr_cs229(tau, y, x, x_query, y_query):
    X = np.c_[np.ones(len(x)), x]
    preds = []
    for x0 in x_query:
        q = np.array([1.0, x0])
        w = np.exp(-np.sum((X - q) ** 2, axis=1) / (2 * tau ** 2))
        W = np.diag(w)
        theta = np.linalg.inv(X.T @ W @ X) @ X.T @ W @ y
        preds.append(q @ theta)
    preds = np.array(preds)
    return np.mean((preds - y_query) ** 2)


def _lwr():
    r = rng(33)
    x = np.linspace(-3, 3, 20)
    y = np.sin(x) + 0.1 * r.standard_normal(20)
    xq = np.array([-2.2, -0.7, 0.4, 1.9])
    return np.array(0.8), y, x, xq, np.sin(xq)


# ---- 34. leave-one-out KDE bandwidth via np.diag_indices_from -------------------------------

def loo_kde_bandwidth(log_h, X):
    n, d = X.shape
    h2 = np.exp(2 * log_h)
    sq = np.sum(X ** 2, axis=1)
    D = sq[:, None] + sq[None, :] - 2 * X @ X.T
    K = np.exp(-D / (2 * h2)) / (2 * np.pi * h2) ** (d / 2)
    K[np.diag_indices_from(K)] = 0.0
    return -np.mean(np.log(K.sum(axis=1) / (n - 1)))


def _kde():
    r = rng(34)
    return np.array(-0.3), r.standard_normal((16, 2))


# ---- 35. neural collaborative filtering with np.take embeddings ------------------------------

def ncf_embeddings(P, Q, W, h, users, items, labels):
    u = np.take(P, users, axis=0)
    i = Q[items]
    gmf = u * i
    mlp = np.tanh(np.concatenate([u, i], axis=1) @ W)
    logits = np.hstack([gmf, mlp]) @ h
    p = np.clip(1.0 / (1.0 + np.exp(-logits)), 1e-7, 1 - 1e-7)
    return -np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p))


def _ncf():
    r = rng(35)
    n = 16
    return (r.standard_normal((5, 3)) * 0.5, r.standard_normal((7, 3)) * 0.5,
            r.standard_normal((6, 4)) * 0.5, r.standard_normal(7), r.integers(0, 5, n),
            r.integers(0, 7, n), (r.random(n) > 0.5).astype(float))


# ---- 36. ML-From-Scratch regression with regularisation classes and polynomial features ------

class l1_l2_regularization:
    def __init__(self, alpha, l1_ratio=0.5):
        self.alpha = alpha
        self.l1_ratio = l1_ratio

    def __call__(self, w):
        l1_contr = self.l1_ratio * np.linalg.norm(w)
        l2_contr = (1 - self.l1_ratio) * 0.5 * w.T.dot(w)
        return self.alpha * (l1_contr + l2_contr)

    def grad(self, w):
        l1_contr = self.l1_ratio * np.sign(w)
        l2_contr = (1 - self.l1_ratio) * w
        return self.alpha * (l1_contr + l2_contr)


def polynomial_features(X, degree):
    n_samples, n_features = np.shape(X)

    def index_combinations():
        combs = [itertools.combinations_with_replacement(range(n_features), i)
                 for i in range(0, degree + 1)]
        return [item for sublist in combs for item in sublist]

    combinations = index_combinations()
    X_new = np.empty((n_samples, len(combinations)))
    for i, index_combs in enumerate(combinations):
        X_new[:, i] = np.prod(X[:, index_combs], axis=1)
    return X_new


class ElasticNet:
    def __init__(self, degree=2, reg_factor=0.05, l1_ratio=0.5, n_iterations=5,
                 learning_rate=0.01):
        self.degree = degree
        self.regularization = l1_l2_regularization(alpha=reg_factor, l1_ratio=l1_ratio)
        self.n_iterations = n_iterations
        self.learning_rate = learning_rate

    def fit(self, X, y, w):
        X = polynomial_features(X, degree=self.degree)
        X = np.insert(X, 0, 1, axis=1)
        self.training_errors = []
        self.w = w.copy()
        for i in range(self.n_iterations):
            y_pred = X.dot(self.w)
            mse = np.mean(0.5 * (y - y_pred) ** 2 + self.regularization(self.w))
            self.training_errors.append(mse)
            grad_w = -(y - y_pred).dot(X) + self.regularization.grad(self.w)
            self.w -= self.learning_rate * grad_w
        return self


def mlfs_elasticnet_poly(w, X, y):
    model = ElasticNet().fit(X, y, w)
    return np.sum(model.training_errors)


def _mlfs():
    r = rng(36)
    X = r.uniform(-1, 1, (20, 2))
    y = 1 + X[:, 0] - 2 * X[:, 1] ** 2 + 0.1 * r.standard_normal(20)
    return r.standard_normal(7) * 0.3, X, y


# ---- 37. a learned smoothing filter applied row-wise by np.apply_along_axis ------------------

def apply_along_convolve(k, noisy, clean):
    smoothed = np.apply_along_axis(np.convolve, 1, noisy, k, "same")
    return np.mean((smoothed - clean) ** 2) + 1e-2 * (np.sum(k) - 1.0) ** 2


def _aac():
    r = rng(37)
    t = np.linspace(0, 2 * np.pi, 16)
    clean = np.stack([np.sin(t + ph) for ph in (0.0, 0.7, 1.9)])
    return (np.array([0.2, 0.5, 0.2]) + 0.05 * r.standard_normal(3),
            clean + 0.2 * r.standard_normal(clean.shape), clean)


PROGRAMS = [
    Probe("wild_repos10.adaline_gd_epochs", adaline_gd_epochs, _ada, ("w_init", "X")),
    Probe("wild_repos10.adaline_sgd_shuffle", adaline_sgd_shuffle, _ada_sgd, ("w", "X")),
    Probe("wild_repos10.logistic_gd_clip", logistic_gd_clip, _lgd, ("w0", "X"), fuse=True),
    Probe("wild_repos10.prml_polynomial_bayes", prml_polynomial_bayes, _pb,
          ("log_alpha", "log_beta", "x")),
    Probe("wild_repos10.prml_gaussian_evidence_iter", prml_gaussian_evidence_iter, _pge,
          ("means", "t")),
    Probe("wild_repos10.rvm_regression", rvm_regression, _rvm, ("t", "log_ls")),
    Probe("wild_repos10.gp_cho_hyp_dict", gp_cho_hyp_dict, _gp, ("hyp", "X")),
    Probe("wild_repos10.sklearn_kernel_ridge", sklearn_kernel_ridge, _skr, ("X", "log_alpha")),
    Probe("wild_repos10.numpy_ml_fc_regex", numpy_ml_fc_regex, _nml, "params"),
    Probe("wild_repos10.numpy_ml_adam_cache", numpy_ml_adam_cache, _adam, ("W", "b", "X")),
    Probe("wild_repos10.sklearn_huber_clone", sklearn_huber_clone, _hub, ("coef", "X")),
    Probe("wild_repos10.cs231n_im2col_indices", cs231n_im2col_indices, _c231,
          ("W", "b", "W_fc", "x"), fuse=True),
    Probe("wild_repos10.batchnorm_mode_running", batchnorm_mode_running, _bn,
          ("W", "gamma", "beta")),
    Probe("wild_repos10.sequential_slice_autoencoder", sequential_slice_autoencoder, _seq,
          "params"),
    Probe("wild_repos10.gan_partial_bce", gan_partial_bce, _gan, ("g_params", "d_params"),
          fuse=True),
    Probe("wild_repos10.implicit_als_step", implicit_als_step, _als, "V"),
    Probe("wild_repos10.listnet_reduceat", listnet_reduceat, _lnet, ("w", "X", "rel"),
          fuse=True),
    Probe("wild_repos10.ranknet_outer_triu", ranknet_outer_triu, _rnet, ("w", "X")),
    Probe("wild_repos10.deepsurv_breslow_bincount", deepsurv_breslow_bincount, _ds,
          ("W1", "w2", "X")),
    Probe("wild_repos10.bbvi_logistic_elbo", bbvi_logistic_elbo, _bbvi, ("mu", "rho"),
          fuse=True),
    Probe("wild_repos10.flat_theta_slices", flat_theta_slices, _fts, "theta"),
    Probe("wild_repos10.flat_theta_split", flat_theta_split, _ftsp, ("theta", "X"), fuse=True),
    Probe("wild_repos10.itemgetter_partial", itemgetter_partial, _igp, "params"),
    Probe("wild_repos10.module_setattr_ordered", module_setattr_ordered, _msa, "state"),
    Probe("wild_repos10.weight_norm_cosine", weight_norm_cosine, _wnc, ("v", "g", "P"),
          fuse=True),
    Probe("wild_repos10.deepcopy_polyak_dqn", deepcopy_polyak_dqn, _dqn, ("params", "s2")),
    Probe("wild_repos10.lmnn_einsum_optimize", lmnn_einsum_optimize, _lmnn, ("L", "X"),
          fuse=True),
    Probe("wild_repos10.proxy_nca_masked", proxy_nca_masked, _pnca, ("W", "P", "X")),
    Probe("wild_repos10.mdn_split_indices", mdn_split_indices, _mdn, ("W1", "W2"), fuse=True),
    Probe("wild_repos10.fisher_lda_ratio", fisher_lda_ratio, _flda, ("w", "X")),
    Probe("wild_repos10.ppca_loglik", ppca_loglik, _ppca, ("W", "log_sigma2", "X"), fuse=True),
    Probe("wild_repos10.laplace_evidence_newton", laplace_evidence_newton, _lap,
          ("log_alpha", "Phi")),
    Probe("wild_repos10.lwr_cs229", lwr_cs229, _lwr, ("tau", "y")),
    Probe("wild_repos10.loo_kde_bandwidth", loo_kde_bandwidth, _kde, ("log_h", "X")),
    Probe("wild_repos10.ncf_embeddings", ncf_embeddings, _ncf, ("P", "Q", "W", "h"), fuse=True),
    Probe("wild_repos10.mlfs_elasticnet_poly", mlfs_elasticnet_poly, _mlfs, ("w", "X")),
    Probe("wild_repos10.apply_along_convolve", apply_along_convolve, _aac, "k"),
]
