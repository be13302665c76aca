"""Programs for bench/discarded.py: each user function returns more than its caller reads
(`loss, _ = f(...)`, `out, cache = layer(...)` with the cache never used), in the styles
numpy-from-scratch code is written in. A line ending in `# alone: <code>` is the same
program returning only what the caller reads; bench/discarded.py writes both variants out
and times srcad's gradient of each against the backward written by hand (`*_by_hand`)."""

import numpy as np


# -- losses that also return the gradient the author computed by hand ------------------------
def svm_loss_naive(W, X, y, reg):
    num_train, num_classes = X.shape[0], W.shape[1]
    dW = np.zeros(W.shape)
    loss = 0.0
    for i in range(num_train):
        scores = X[i].dot(W)
        correct = scores[y[i]]
        for j in range(num_classes):
            if j == y[i]:
                continue
            margin = scores[j] - correct + 1.0
            if margin > 0:
                loss += margin
                dW[:, j] += X[i]
                dW[:, y[i]] -= X[i]
    loss /= num_train
    dW /= num_train
    loss += reg * np.sum(W * W)
    dW += 2 * reg * W
    return loss, dW  # alone: return loss


def svm_naive(W, X, y):
    loss, _ = svm_loss_naive(W, X, y, 1e-3)  # alone: loss = svm_loss_naive(W, X, y, 1e-3)
    return loss


def svm_naive_by_hand(W, X, y):
    return svm_loss_naive(W, X, y, 1e-3)[1]


def softmax_loss_naive(W, X, y, reg):
    dW = np.zeros_like(W)
    loss = 0.0
    for i in range(X.shape[0]):
        f = X[i].dot(W)
        f = f - np.max(f)
        p = np.exp(f) / np.sum(np.exp(f))
        loss += -np.log(p[y[i]])
        for k in range(W.shape[1]):
            dW[:, k] += (p[k] - (k == y[i])) * X[i]
    loss = loss / X.shape[0] + 0.5 * reg * np.sum(W * W)
    dW = dW / X.shape[0] + reg * W
    return loss, dW  # alone: return loss


def softmax_naive(W, X, y):
    loss, dW = softmax_loss_naive(W, X, y, 1e-3)  # alone: loss = softmax_loss_naive(W, X, y, 1e-3)
    return loss


def softmax_naive_by_hand(W, X, y):
    return softmax_loss_naive(W, X, y, 1e-3)[1]


def softmax_loss_vectorized(W, X, y, reg):
    n = X.shape[0]
    scores = X.dot(W)
    scores -= np.max(scores, axis=1, keepdims=True)
    probs = np.exp(scores)
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(np.log(probs[np.arange(n), y])) / n + 0.5 * reg * np.sum(W * W)
    dscores = probs.copy()
    dscores[np.arange(n), y] -= 1
    dW = X.T.dot(dscores) / n + reg * W
    return loss, dW  # alone: return loss


def softmax_vec(W, X, y):
    loss, _ = softmax_loss_vectorized(W, X, y, 1e-3)  # alone: loss = softmax_loss_vectorized(W, X, y, 1e-3)
    return loss


def softmax_vec_by_hand(W, X, y):
    return softmax_loss_vectorized(W, X, y, 1e-3)[1]


# -- layers that return (out, cache) ---------------------------------------------------------
def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    cache = (x, w, b)
    return out, cache  # alone: return out


def relu_forward(x):
    out = np.maximum(0, x)
    cache = x
    return out, cache  # alone: return out


def affine_relu_forward(x, w, b):
    a, fc_cache = affine_forward(x, w, b)  # alone: a = affine_forward(x, w, b)
    out, relu_cache = relu_forward(a)  # alone: out = relu_forward(a)
    cache = (fc_cache, relu_cache)  # alone: pass
    return out, cache  # alone: return out


def two_layer(W1, b1, W2, b2, X, y):
    h, cache1 = affine_relu_forward(X, W1, b1)  # alone: h = affine_relu_forward(X, W1, b1)
    scores, cache2 = affine_forward(h, W2, b2)  # alone: scores = affine_forward(h, W2, b2)
    loss, _ = softmax_ce(scores, y)  # alone: loss = softmax_ce(scores, y)
    return loss


def softmax_ce(scores, y):
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    n = scores.shape[0]
    loss = -np.sum(logp[np.arange(n), y]) / n
    dscores = np.exp(logp)
    dscores[np.arange(n), y] -= 1
    return loss, dscores / n  # alone: return loss


def two_layer_by_hand(W1, b1, W2, b2, X, y):
    a = X.dot(W1) + b1
    h = np.maximum(0, a)
    scores = h.dot(W2) + b2
    _, dscores = softmax_ce(scores, y)
    dW2, db2 = h.T.dot(dscores), dscores.sum(axis=0)
    da = dscores.dot(W2.T) * (a > 0)
    return X.T.dot(da), da.sum(axis=0), dW2, db2


def batchnorm_forward(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=0)
    xc = x - mu
    var = np.mean(xc ** 2, axis=0)
    std = np.sqrt(var + eps)
    xhat = xc / std
    out = gamma * xhat + beta
    cache = {"xhat": xhat, "std": std, "gamma": gamma, "xc": xc}
    return out, cache  # alone: return out


def bn_net(W, gamma, beta, X, t):
    a, _ = affine_forward(X, W, np.zeros(W.shape[1]))  # alone: a = affine_forward(X, W, np.zeros(W.shape[1]))
    h, bn_cache = batchnorm_forward(a, gamma, beta)  # alone: h = batchnorm_forward(a, gamma, beta)
    return 0.5 * np.sum((h - t) ** 2) / X.shape[0]


def bn_net_by_hand(W, gamma, beta, X, t):
    a = X.dot(W)
    mu = a.mean(axis=0)
    xc = a - mu
    var = np.mean(xc ** 2, axis=0)
    std = np.sqrt(var + 1e-5)
    xhat = xc / std
    h = gamma * xhat + beta
    dh = (h - t) / X.shape[0]
    dgamma, dbeta = np.sum(dh * xhat, axis=0), dh.sum(axis=0)
    dxhat = dh * gamma
    n = a.shape[0]
    da = (dxhat - dxhat.mean(axis=0) - xhat * np.mean(dxhat * xhat, axis=0)) / std
    del n
    return X.T.dot(da), dgamma, dbeta


def layernorm_forward(x, g, b, eps=1e-5):
    mu = x.mean(axis=1, keepdims=True)
    xc = x - mu
    var = (xc ** 2).mean(axis=1, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    xhat = xc * inv
    return g * xhat + b, (xhat, inv, g)  # alone: return g * xhat + b


def ln_mlp(W1, W2, g, b, X, t):
    h, _ = layernorm_forward(np.tanh(X @ W1), g, b)  # alone: h = layernorm_forward(np.tanh(X @ W1), g, b)
    return np.mean((h @ W2 - t) ** 2)


def ln_mlp_by_hand(W1, W2, g, b, X, t):
    z = np.tanh(X @ W1)
    mu = z.mean(axis=1, keepdims=True)
    xc = z - mu
    inv = 1.0 / np.sqrt((xc ** 2).mean(axis=1, keepdims=True) + 1e-5)
    xhat = xc * inv
    h = g * xhat + b
    out = h @ W2
    dout = 2.0 * (out - t) / out.size
    dW2 = h.T @ dout
    dh = dout @ W2.T
    dg, db = np.sum(dh * xhat, axis=0), dh.sum(axis=0)
    dxhat = dh * g
    dz = inv * (dxhat - dxhat.mean(axis=1, keepdims=True)
                - xhat * (dxhat * xhat).mean(axis=1, keepdims=True))
    return X.T @ (dz * (1 - z * z)), dW2, dg, db


def dropout_forward(x, mask):
    out = x * mask
    return out, mask  # alone: return out


def dropout_mlp(W1, W2, X, mask, t):
    h, _ = dropout_forward(np.maximum(X @ W1, 0.0), mask)  # alone: h = dropout_forward(np.maximum(X @ W1, 0.0), mask)
    return np.mean((h @ W2 - t) ** 2)


def dropout_mlp_by_hand(W1, W2, X, mask, t):
    a = X @ W1
    r = np.maximum(a, 0.0)
    h = r * mask
    out = h @ W2
    dout = 2.0 * (out - t) / out.size
    dh = dout @ W2.T
    return X.T @ (dh * mask * (a > 0)), h.T @ dout


# -- recurrent steps returning (h, cache) -----------------------------------------------------
def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x.dot(Wx) + prev_h.dot(Wh) + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    return next_h, cache  # alone: return next_h


def rnn_loss(Wx, Wh, b, x, h0, t):
    h = h0
    for k in range(x.shape[1]):
        h, cache = rnn_step_forward(x[:, k, :], h, Wx, Wh, b)  # alone: h = rnn_step_forward(x[:, k, :], h, Wx, Wh, b)
    return np.sum((h - t) ** 2)


def rnn_loss_by_hand(Wx, Wh, b, x, h0, t):
    hs = [h0]
    for k in range(x.shape[1]):
        hs.append(np.tanh(x[:, k, :].dot(Wx) + hs[-1].dot(Wh) + b))
    dh = 2.0 * (hs[-1] - t)
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    for k in reversed(range(x.shape[1])):
        da = dh * (1 - hs[k + 1] ** 2)
        dWx += x[:, k, :].T.dot(da)
        dWh += hs[k].T.dot(da)
        db += da.sum(axis=0)
        dh = da.dot(Wh.T)
    return dWx, dWh, db


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    H = prev_h.shape[1]
    a = x.dot(Wx) + prev_h.dot(Wh) + b
    i = 1.0 / (1.0 + np.exp(-a[:, :H]))
    f = 1.0 / (1.0 + np.exp(-a[:, H:2 * H]))
    o = 1.0 / (1.0 + np.exp(-a[:, 2 * H:3 * H]))
    g = np.tanh(a[:, 3 * H:])
    next_c = f * prev_c + i * g
    next_h = o * np.tanh(next_c)
    cache = (x, prev_h, prev_c, i, f, o, g, next_c)
    return next_h, next_c, cache  # alone: return next_h, next_c


def lstm_loss(Wx, Wh, b, x, h0, t):
    h, c = h0, np.zeros_like(h0)
    for k in range(x.shape[1]):
        h, c, _ = lstm_step_forward(x[:, k, :], h, c, Wx, Wh, b)  # alone: h, c = lstm_step_forward(x[:, k, :], h, c, Wx, Wh, b)
    return np.sum((h - t) ** 2)


def lstm_loss_by_hand(Wx, Wh, b, x, h0, t):
    H = h0.shape[1]
    h, c = h0, np.zeros_like(h0)
    steps = []
    for k in range(x.shape[1]):
        a = x[:, k, :].dot(Wx) + h.dot(Wh) + b
        i = 1.0 / (1.0 + np.exp(-a[:, :H]))
        f = 1.0 / (1.0 + np.exp(-a[:, H:2 * H]))
        o = 1.0 / (1.0 + np.exp(-a[:, 2 * H:3 * H]))
        g = np.tanh(a[:, 3 * H:])
        nc = f * c + i * g
        tc = np.tanh(nc)
        steps.append((h, c, i, f, o, g, tc))
        h, c = o * tc, nc
    dh, dc = 2.0 * (h - t), np.zeros_like(h)
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    for k in reversed(range(x.shape[1])):
        hp, cp, i, f, o, g, tc = steps[k]
        dc = dc + dh * o * (1 - tc * tc)
        da = np.concatenate([dc * g * i * (1 - i), dc * cp * f * (1 - f),
                             dh * tc * o * (1 - o), dc * i * (1 - g * g)], axis=1)
        dWx += x[:, k, :].T.dot(da)
        dWh += hp.T.dot(da)
        db += da.sum(axis=0)
        dh, dc = da.dot(Wh.T), dc * f
    return dWx, dWh, db


# -- attention returning (out, weights) -------------------------------------------------------
def attention_forward(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[1])
    s = s - np.max(s, axis=1, keepdims=True)
    w = np.exp(s)
    w = w / np.sum(w, axis=1, keepdims=True)
    return w @ v, w  # alone: return w @ v


def attn_loss(Wq, Wk, Wv, X, t):
    out, weights = attention_forward(X @ Wq, X @ Wk, X @ Wv)  # alone: out = attention_forward(X @ Wq, X @ Wk, X @ Wv)
    return np.sum((out - t) ** 2)


def attn_loss_by_hand(Wq, Wk, Wv, X, t):
    q, k, v = X @ Wq, X @ Wk, X @ Wv
    c = 1.0 / np.sqrt(q.shape[1])
    s = q @ k.T * c
    s = s - np.max(s, axis=1, keepdims=True)
    w = np.exp(s)
    w = w / np.sum(w, axis=1, keepdims=True)
    out = w @ v
    dout = 2.0 * (out - t)
    dv = w.T @ dout
    dw = dout @ v.T
    ds = w * (dw - np.sum(dw * w, axis=1, keepdims=True)) * c
    dq, dk = ds @ k, ds.T @ q
    return X.T @ dq, X.T @ dk, X.T @ dv


# -- an MLP forward returning its logits and every hidden layer --------------------------------
def mlp_forward(x, W1, W2, W3):
    h1 = np.tanh(x @ W1)
    h2 = np.tanh(h1 @ W2)
    logits = h2 @ W3
    return logits, [h1, h2]  # alone: return logits


def mlp3_loss(W1, W2, W3, X, t):
    logits, hidden = mlp_forward(X, W1, W2, W3)  # alone: logits = mlp_forward(X, W1, W2, W3)
    return 0.5 * np.sum((logits - t) ** 2)


def mlp3_loss_by_hand(W1, W2, W3, X, t):
    h1 = np.tanh(X @ W1)
    h2 = np.tanh(h1 @ W2)
    d = h2 @ W3 - t
    dW3 = h2.T @ d
    dh2 = (d @ W3.T) * (1 - h2 * h2)
    dW2 = h1.T @ dh2
    dh1 = (dh2 @ W2.T) * (1 - h1 * h1)
    return X.T @ dh1, dW2, dW3


# -- a conv layer with naive loops returning (out, cache) --------------------------------------
def conv_forward_naive(x, w):
    N, C, H, W_ = x.shape
    F, _, HH, WW = w.shape
    Ho, Wo = H - HH + 1, W_ - WW + 1
    out = np.zeros((N, F, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            patch = x[:, :, i:i + HH, j:j + WW].reshape(N, -1)
            out[:, :, i, j] = patch @ w.reshape(F, -1).T
    return out, (x, w)  # alone: return out


def conv_loss(w, x, t):
    out, _ = conv_forward_naive(x, w)  # alone: out = conv_forward_naive(x, w)
    return np.sum((out - t) ** 2)


def conv_loss_by_hand(w, x, t):
    N, C, H, W_ = x.shape
    F, _, HH, WW = w.shape
    out, _ = conv_forward_naive(x, w)
    dout = 2.0 * (out - t)
    dw = np.zeros_like(w).reshape(F, -1)
    for i in range(H - HH + 1):
        for j in range(W_ - WW + 1):
            dw += dout[:, :, i, j].T @ x[:, :, i:i + HH, j:j + WW].reshape(N, -1)
    return dw.reshape(w.shape)
