"""numpy ML library style: estimator classes whose loss reads ``self.penalty`` strings and
``self.fit_intercept``, loss objects with ``__call__`` and static ``loss``, np.linalg norms,
a Gaussian process marginal likelihood through cholesky/solve/slogdet, word2vec negative
sampling with repeated rows, t-SNE's Q with np.fill_diagonal, matrix factorisation on an
observed mask, Huber and Poisson losses, scipy.special.logsumexp."""

import numpy as np
from scipy.special import logsumexp

from . import Probe, rng


class LogisticRegression:
    def __init__(self, penalty="l2", gamma=0.1, fit_intercept=True):
        self.penalty = penalty
        self.gamma = gamma
        self.fit_intercept = fit_intercept

    def _NLL(self, X, y, beta):
        N, M = X.shape
        order = 2 if self.penalty == "l2" else 1
        norm_beta = np.linalg.norm(beta, ord=order)
        y_pred = 1.0 / (1.0 + np.exp(-X @ beta))
        nll = -np.log(y_pred[y == 1]).sum() - np.log(1 - y_pred[y == 0]).sum()
        penalty = (self.gamma / 2) * norm_beta ** 2 if order == 2 else self.gamma * norm_beta
        return (penalty + nll) / N

    def loss(self, beta, X, y):
        if self.fit_intercept:
            X = np.c_[np.ones(X.shape[0]), X]
        return self._NLL(X, y, beta)


MODEL_L2 = LogisticRegression("l2")
MODEL_L1 = LogisticRegression("l1", fit_intercept=False)


def logreg_l2(beta, X, y):
    return MODEL_L2.loss(beta, X, y)


def logreg_l1(beta, X, y):
    return MODEL_L1.loss(beta, X, y)


class SquaredError:
    def __call__(self, y, y_pred):
        return self.loss(y, y_pred)

    @staticmethod
    def loss(y, y_pred):
        return 0.5 * np.linalg.norm(y_pred - y) ** 2


class Huber:
    def __init__(self, delta=1.0):
        self.delta = delta

    def __call__(self, y, y_pred):
        r = y_pred - y
        small = np.abs(r) <= self.delta
        return np.sum(np.where(small, 0.5 * r ** 2, self.delta * (np.abs(r) - 0.5 * self.delta)))


LOSSES = {"mse": SquaredError(), "huber": Huber(0.5)}


def ridge_with_loss_object(w, b, X, y, loss="huber", alpha=0.1):
    pred = X.dot(w).ravel() + b
    return LOSSES[loss](y, pred) + alpha * np.dot(w.T, w).squeeze()


def gp_marginal_likelihood(log_ell, log_sf, log_sn, X, y):
    ell, sf2, sn2 = np.exp(log_ell), np.exp(2 * log_sf), np.exp(2 * log_sn)
    sq = np.sum(X ** 2, 1).reshape(-1, 1) + np.sum(X ** 2, 1) - 2 * np.dot(X, X.T)
    K = sf2 * np.exp(-0.5 * sq / ell ** 2) + sn2 * np.eye(len(X))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    sign, logdet = np.linalg.slogdet(K)
    return 0.5 * y @ alpha + 0.5 * logdet + 0.5 * len(X) * np.log(2 * np.pi)


def sgns(W_in, W_out, centers, contexts, negatives):
    loss = 0.0
    for c, o, negs in zip(centers, contexts, negatives):
        v = W_in[c]
        u_pos = W_out[o]
        u_neg = W_out[negs]
        loss -= np.log(1 / (1 + np.exp(-u_pos @ v)))
        loss -= np.sum(np.log(1 / (1 + np.exp(u_neg @ v))))
    return loss / len(centers)


def tsne_kl(Y, P):
    sum_Y = np.sum(np.square(Y), 1)
    num = -2.0 * np.dot(Y, Y.T)
    num = 1.0 / (1.0 + np.add(np.add(num, sum_Y).T, sum_Y))
    np.fill_diagonal(num, 0.0)
    Q = num / np.sum(num)
    Q = np.maximum(Q, 1e-12)
    return np.sum(P * np.log(P / Q))


def matrix_factorization(P, Q, R, lam=0.02):
    mask = R > 0
    E = (R - P @ Q.T)[mask]
    return np.sum(E ** 2) + lam * (np.linalg.norm(P, "fro") ** 2 + np.linalg.norm(Q) ** 2)


def poisson_glm(w, X, y):
    eta = X @ w
    mu = np.exp(eta)
    return -np.sum(y * eta - mu) / len(y)


def softmax_regression_lse(W, X, y):
    logits = X @ W
    lse = logsumexp(logits, axis=1)
    Y = np.eye(W.shape[1])[y]
    return np.mean(lse - np.sum(Y * logits, axis=1))


def soft_kmeans(C, X, beta=2.0):
    d = np.linalg.norm(X[:, None, :] - C[None, :, :], axis=2)
    r = np.exp(-beta * d)
    r /= r.sum(axis=1, keepdims=True)
    return np.sum(r * d ** 2)


def _lr(seed=70, N=8, D=3, icpt=True):
    r = rng(seed)
    return r.standard_normal(D + icpt) * 0.5, r.standard_normal((N, D)), (r.random(N) > 0.5) * 1


def _ridge():
    r = rng(71)
    return r.standard_normal((3, 1)), 0.2, r.standard_normal((7, 3)), r.standard_normal(7)


def _gp():
    r = rng(72)
    X = r.standard_normal((6, 2))
    return 0.1, -0.2, -1.0, X, np.sin(X[:, 0]) + 0.1 * r.standard_normal(6)


def _sgns():
    r = rng(73)
    V, D = 6, 3
    return (r.standard_normal((V, D)) * 0.5, r.standard_normal((V, D)) * 0.5, [0, 2, 2],
            [1, 3, 0], [np.array([4, 5]), np.array([4, 4]), np.array([1, 5])])


def _tsne():
    r = rng(74)
    P = r.random((5, 5))
    P = P + P.T
    np.fill_diagonal(P, 1e-12)
    return r.standard_normal((5, 2)), P / P.sum()


def _mf():
    r = rng(75)
    R = r.integers(0, 5, (5, 4)).astype(float)
    return r.standard_normal((5, 2)), r.standard_normal((4, 2)), R


def _pois():
    r = rng(76)
    return r.standard_normal(3) * 0.3, r.standard_normal((8, 3)), r.poisson(1.0, 8).astype(float)


def _smr():
    r = rng(77)
    return r.standard_normal((3, 4)), r.standard_normal((6, 3)), r.integers(0, 4, 6)


def _km():
    r = rng(78)
    return r.standard_normal((3, 2)), r.standard_normal((7, 2))


PROGRAMS = [
    Probe("mllib.logreg_l2", logreg_l2, _lr, "beta"),
    Probe("mllib.logreg_l1", logreg_l1, lambda: _lr(79, icpt=False), "beta"),
    Probe("mllib.ridge_with_loss_object", ridge_with_loss_object, _ridge, ("w", "b")),
    Probe("mllib.gp_marginal_likelihood", gp_marginal_likelihood, _gp,
          ("log_ell", "log_sf", "log_sn")),
    Probe("mllib.sgns", sgns, _sgns, ("W_in", "W_out")),
    Probe("mllib.tsne_kl", tsne_kl, _tsne, "Y"),
    Probe("mllib.matrix_factorization", matrix_factorization, _mf, ("P", "Q")),
    Probe("mllib.poisson_glm", poisson_glm, _pois, "w"),
    Probe("mllib.softmax_regression_lse", softmax_regression_lse, _smr, "W"),
    Probe("mllib.soft_kmeans", soft_kmeans, _km, "C"),
]
