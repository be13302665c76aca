"""Layer functions that fill an array slot by slot, as from-scratch numpy code writes them
(tests/test_slot_writes.py, bench/slot_writes.py): a naive convolution, an RNN keeping its
states, a naive 2x2 max pool. Each returns the filled array."""

from __future__ import annotations

import numpy as np


def conv_naive(w, x):
    N, C, H, W_ = x.shape
    F, _, HH, WW = w.shape
    out = np.zeros((N, F, H - HH + 1, W_ - WW + 1), dtype=x.dtype)
    for i in range(H - HH + 1):
        for j in range(W_ - WW + 1):
            patch = x[:, :, i:i + HH, j:j + WW].reshape(N, -1)
            out[:, :, i, j] = patch @ w.reshape(F, -1).T
    return out


def rnn_states(Wh, Wx, xs):
    N, T, D = xs.shape
    hs = np.zeros((N, T, Wh.shape[0]), dtype=xs.dtype)
    h = np.zeros((N, Wh.shape[0]), dtype=xs.dtype)
    for t in range(T):
        h = np.tanh(h @ Wh + xs[:, t, :] @ Wx)
        hs[:, t, :] = h
    return hs


def pool_naive(x):
    N, C, H, W_ = x.shape
    out = np.zeros((N, C, H // 2, W_ // 2), dtype=x.dtype)
    for i in range(H // 2):
        for j in range(W_ // 2):
            out[:, :, i, j] = np.max(x[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2], axis=(2, 3))
    return out
