"""Losses as linear-classifier assignments write them: SVM and softmax losses with explicit
loops and vectorised, ``if y is None: return scores``, one-hot targets with ``np.eye``,
logistic regression, Huber with ``np.where``, loops over ``zip``/``enumerate``."""

import numpy as np

from . import Program, rng


def svm_loss_naive(W, X, y, reg):
    num_classes = W.shape[1]
    num_train = X.shape[0]
    loss = 0.0
    for i in range(num_train):
        scores = X[i].dot(W)
        correct_class_score = scores[y[i]]
        for j in range(num_classes):
            if j == y[i]:
                continue
            margin = scores[j] - correct_class_score + 1
            if margin > 0:
                loss += margin
    loss /= num_train
    loss += reg * np.sum(W * W)
    return loss


def svm_loss_naive_backward(W, X, y, reg):
    dW = np.zeros(W.shape)
    num_train = X.shape[0]
    for i in range(num_train):
        scores = X[i].dot(W)
        for j in range(W.shape[1]):
            if j == y[i]:
                continue
            if scores[j] - scores[y[i]] + 1 > 0:
                dW[:, j] += X[i]
                dW[:, y[i]] -= X[i]
    dW /= num_train
    dW += 2 * reg * W
    return (dW,)


def svm_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    correct = scores[np.arange(num_train), y]
    margins = np.maximum(0, scores - correct[:, np.newaxis] + 1.0)
    margins[np.arange(num_train), y] = 0
    loss = np.sum(margins) / num_train
    loss += 0.5 * reg * np.sum(W * W)
    return loss


def svm_loss_vectorized_backward(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    correct = scores[np.arange(num_train), y]
    margins = scores - correct[:, np.newaxis] + 1.0
    binary = (margins > 0).astype(float)
    binary[np.arange(num_train), y] = 0
    binary[np.arange(num_train), y] = -np.sum(binary, axis=1)
    return (X.T.dot(binary) / num_train + reg * W,)


def softmax_loss_naive(W, X, y, reg):
    loss = 0.0
    num_train = X.shape[0]
    for i in range(num_train):
        f = X[i].dot(W)
        f -= np.max(f)
        loss += -f[y[i]] + np.log(np.sum(np.exp(f)))
    loss /= num_train
    loss += reg * np.sum(W * W)
    return loss


def softmax_loss_naive_backward(W, X, y, reg):
    dW = np.zeros_like(W)
    num_train = X.shape[0]
    for i in range(num_train):
        f = X[i].dot(W)
        f -= np.max(f)
        p = np.exp(f) / np.sum(np.exp(f))
        for j in range(W.shape[1]):
            dW[:, j] += (p[j] - (j == y[i])) * X[i]
    return (dW / num_train + 2 * reg * W,)


def softmax_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    scores -= np.max(scores, axis=1, keepdims=True)
    probs = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
    loss = -np.sum(np.log(probs[np.arange(num_train), y])) / num_train
    loss += reg * np.sum(W * W)
    return loss


def softmax_loss_vectorized_backward(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    scores -= np.max(scores, axis=1, keepdims=True)
    probs = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
    dscores = probs
    dscores[np.arange(num_train), y] -= 1
    return (X.T.dot(dscores) / num_train + 2 * reg * W,)


def linear_classifier_loss(W, b, X, y=None):
    scores = X @ W + b
    if y is None:
        return scores
    N = X.shape[0]
    Y = np.eye(W.shape[1])[y]
    logZ = np.log(np.sum(np.exp(scores), axis=1))
    return np.mean(logZ - np.sum(Y * scores, axis=1))


def linear_classifier_loss_backward(W, b, X, y=None):
    scores = X @ W + b
    p = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
    d = (p - np.eye(W.shape[1])[y]) / X.shape[0]
    return X.T @ d, d.sum(0)


def logistic_regression(w, b, X, y):
    m = X.shape[0]
    z = np.dot(X, w) + b
    a = 1 / (1 + np.exp(-z))
    cost = (-1 / m) * np.sum(y * np.log(a) + (1 - y) * np.log(1 - a))
    return cost


def logistic_regression_backward(w, b, X, y):
    m = X.shape[0]
    a = 1 / (1 + np.exp(-(np.dot(X, w) + b)))
    dz = (a - y) / m
    return np.dot(X.T, dz), np.sum(dz)


def huber_where(w, X, t, delta=0.5):
    r = X @ w - t
    quad = 0.5 * r ** 2
    lin = delta * (np.abs(r) - 0.5 * delta)
    return np.mean(np.where(np.abs(r) <= delta, quad, lin))


def huber_where_backward(w, X, t, delta=0.5):
    r = X @ w - t
    dr = np.where(np.abs(r) <= delta, r, delta * np.sign(r)) / r.size
    return (X.T @ dr,)


def hinge_zip_enumerate(w, b, X, y, C=1.0):
    loss = 0.5 * np.dot(w, w)
    for i, (xi, yi) in enumerate(zip(X, y)):
        margin = yi * (np.dot(w, xi) + b)
        if margin < 1:
            loss = loss + C * (1 - margin) / len(y)
    return loss


def hinge_zip_enumerate_backward(w, b, X, y, C=1.0):
    dw = w.copy()
    db = 0.0
    for xi, yi in zip(X, y):
        if yi * (np.dot(w, xi) + b) < 1:
            dw -= C * yi * xi / len(y)
            db -= C * yi / len(y)
    return dw, db


def multiclass_hinge_loop_over_classes(W, X, y):
    N, C = X.shape[0], W.shape[1]
    scores = X @ W
    loss = 0.0
    for c in range(C):
        margin = scores[:, c] - scores[np.arange(N), y] + 1.0
        margin[y == c] = 0.0
        loss += np.sum(np.maximum(margin, 0.0))
    return loss / N


def multiclass_hinge_loop_over_classes_backward(W, X, y):
    return (svm_loss_vectorized_backward(W, X, y, 0.0)[0],)


def _args(seed, D=5, C=4, N=8):
    r = rng(seed)
    return r.standard_normal((D, C)) * 0.3, r.standard_normal((N, D)), r.integers(0, C, N)


def _args_bin(seed):
    r = rng(seed)
    return r.standard_normal(4) * 0.5, 0.2, r.standard_normal((9, 4)), \
        (r.uniform(size=9) > 0.5).astype(float)


def _args_hinge():
    w, b, X, y = _args_bin(47)
    return w, b, X, 2 * y - 1


def _args_huber():
    r = rng(48)
    return r.standard_normal(3), r.standard_normal((10, 3)), r.standard_normal(10)


def _args_lin():
    W, X, y = _args(45)
    return W, rng(46).standard_normal(4) * 0.1, X, y


PROGRAMS = [
    Program("losses.svm_loss_naive", svm_loss_naive, svm_loss_naive_backward,
            lambda: _args(40) + (0.1,), ("W",)),
    Program("losses.svm_loss_vectorized", svm_loss_vectorized, svm_loss_vectorized_backward,
            lambda: _args(41) + (0.1,), ("W",), fuse=True),
    Program("losses.softmax_loss_naive", softmax_loss_naive, softmax_loss_naive_backward,
            lambda: _args(42) + (0.1,), ("W",)),
    Program("losses.softmax_loss_vectorized", softmax_loss_vectorized,
            softmax_loss_vectorized_backward, lambda: _args(43) + (0.1,), ("W",), fuse=True),
    Program("losses.linear_classifier_loss", linear_classifier_loss,
            linear_classifier_loss_backward, _args_lin, ("W", "b")),
    Program("losses.logistic_regression", logistic_regression, logistic_regression_backward,
            lambda: _args_bin(44), ("w", "b")),
    Program("losses.huber_where", huber_where, huber_where_backward, _args_huber, ("w",)),
    Program("losses.hinge_zip_enumerate", hinge_zip_enumerate, hinge_zip_enumerate_backward,
            _args_hinge, ("w", "b")),
    Program("losses.multiclass_hinge_loop_over_classes", multiclass_hinge_loop_over_classes,
            multiclass_hinge_loop_over_classes_backward, lambda: _args(49), ("W",)),
]
