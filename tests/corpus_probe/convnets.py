"""From-scratch convolutional nets: im2col by np.lib.stride_tricks.as_strided on the
padded input's strides, np.pad with per-axis widths, naive loops writing out[:, f, i, j],
transposed convolution by slice +=, max pooling with an equality mask, average pooling in
loops, scatter by np.add.at, spatial batch norm over axes (0, 2, 3)."""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import Probe, rng


def im2col_strided(x, kh, kw, stride=1):
    N, C, H, W = x.shape
    out_h = (H - kh) // stride + 1
    out_w = (W - kw) // stride + 1
    sN, sC, sH, sW = x.strides
    cols = as_strided(x, shape=(N, C, out_h, out_w, kh, kw),
                      strides=(sN, sC, sH * stride, sW * stride, sH, sW))
    return cols, out_h, out_w


def conv_as_strided(x, w, b, pad=1):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant")
    F, C, kh, kw = w.shape
    cols, oh, ow = im2col_strided(xp, kh, kw)
    out = np.einsum("ncijkl,fckl->nfij", cols, w) + b[None, :, None, None]
    return np.sum(out ** 2) / out.size


def conv_naive_loops(x, w, b, stride=2, pad=1):
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    x_pad = np.pad(x, ((0,), (0,), (pad,), (pad,)), "constant")
    H_out = 1 + (H + 2 * pad - HH) // stride
    W_out = 1 + (W + 2 * pad - WW) // stride
    out = np.zeros((N, F, H_out, W_out))
    for f in range(F):
        for i in range(H_out):
            for j in range(W_out):
                window = x_pad[:, :, i * stride:i * stride + HH, j * stride:j * stride + WW]
                out[:, f, i, j] = np.sum(window * w[f], axis=(1, 2, 3)) + b[f]
    return np.mean(np.tanh(out))


def conv_transpose_slice_add(x, w, stride=2):
    N, C, H, W = x.shape
    _, F, k, _ = w.shape
    out = np.zeros((N, F, (H - 1) * stride + k, (W - 1) * stride + k))
    for i in range(H):
        for j in range(W):
            patch = np.tensordot(x[:, :, i, j], w, axes=([1], [0]))    # (N, F, k, k)
            out[:, :, i * stride:i * stride + k, j * stride:j * stride + k] += patch
    return np.sum(np.sin(out))


def maxpool_mask(x, size=2):
    N, C, H, W = x.shape
    out = np.zeros((N, C, H // size, W // size))
    for i in range(H // size):
        for j in range(W // size):
            win = x[:, :, i * size:(i + 1) * size, j * size:(j + 1) * size]
            out[:, :, i, j] = np.max(win, axis=(2, 3))
    return np.sum(out * np.arange(out.size).reshape(out.shape))


def avgpool_then_fc(x, W):
    N, C, H, Wd = x.shape
    pooled = np.zeros((N, C, H // 2, Wd // 2))
    for i in range(0, H, 2):
        for j in range(0, Wd, 2):
            pooled[:, :, i // 2, j // 2] = x[:, :, i:i + 2, j:j + 2].mean(axis=(2, 3))
    flat = pooled.reshape(N, -1)
    return np.sum(np.tanh(flat @ W))


def col2im_add_at(cols, x_shape, kh=2, kw=2):
    """cols: (N, C, out_h, out_w, kh, kw) accumulated back into an image."""
    N, C, H, W = x_shape
    out_h, out_w = H - kh + 1, W - kw + 1
    img = np.zeros(x_shape)
    i0 = np.repeat(np.arange(kh), kw)
    j0 = np.tile(np.arange(kw), kh)
    ii = (np.arange(out_h)[:, None, None, None] + i0[None, None, :]).reshape(out_h, 1, -1)
    jj = (np.arange(out_w)[None, :, None] + j0[None, None, :]).reshape(1, out_w, -1)
    ii = np.broadcast_to(ii, (out_h, out_w, kh * kw))
    jj = np.broadcast_to(jj, (out_h, out_w, kh * kw))
    vals = cols.reshape(N, C, out_h, out_w, kh * kw)
    np.add.at(img, (slice(None), slice(None), ii, jj), vals)
    return img


def col2im_loss(cols, target):
    img = col2im_add_at(cols, target.shape)
    return np.sum((img - target) ** 2)


def spatial_batchnorm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=(0, 2, 3), keepdims=True)
    var = x.var(axis=(0, 2, 3), keepdims=True)
    xhat = (x - mu) / np.sqrt(var + eps)
    out = gamma.reshape(1, -1, 1, 1) * xhat + beta.reshape(1, -1, 1, 1)
    return np.sum(out ** 3) / x.shape[0]


def embedding_scatter(E, ids, W):
    """Sum of embeddings per bag: np.add.at into a zero array with repeated indices."""
    bags = np.array([0, 0, 1, 2, 2, 2])
    vecs = E[ids]
    out = np.zeros((3, E.shape[1]))
    np.add.at(out, bags, vecs)
    return np.sum(np.tanh(out @ W))


def _conv():
    r = rng(40)
    return r.standard_normal((2, 2, 4, 4)), r.standard_normal((3, 2, 3, 3)) * 0.3, \
        r.standard_normal(3) * 0.1


def _convT():
    r = rng(41)
    return r.standard_normal((2, 2, 3, 3)), r.standard_normal((2, 3, 3, 3)) * 0.3


def _pool():
    r = rng(42)
    return (r.permutation(2 * 2 * 4 * 4).reshape(2, 2, 4, 4) / 7.0,)


def _avg():
    r = rng(43)
    return r.standard_normal((2, 2, 4, 4)), r.standard_normal((8, 3)) * 0.3


def _col():
    r = rng(44)
    return r.standard_normal((2, 1, 2, 3, 2, 2)), r.standard_normal((2, 1, 3, 4))


def _bn():
    r = rng(45)
    return r.standard_normal((3, 2, 3, 3)), r.standard_normal(2), r.standard_normal(2)


def _emb():
    r = rng(46)
    return r.standard_normal((5, 3)), np.array([1, 3, 1, 0, 4, 1]), r.standard_normal((3, 2))


PROGRAMS = [
    Probe("convnets.conv_as_strided", conv_as_strided, _conv, ("x", "w", "b"), True),
    Probe("convnets.conv_naive_loops", conv_naive_loops, _conv, ("x", "w", "b")),
    Probe("convnets.conv_transpose_slice_add", conv_transpose_slice_add, _convT, ("x", "w")),
    Probe("convnets.maxpool_mask", maxpool_mask, _pool, "x"),
    Probe("convnets.avgpool_then_fc", avgpool_then_fc, _avg, ("x", "W")),
    Probe("convnets.col2im_loss", col2im_loss, _col, "cols"),
    Probe("convnets.spatial_batchnorm", spatial_batchnorm, _bn, ("x", "gamma", "beta"), True),
    Probe("convnets.embedding_scatter", embedding_scatter, _emb, ("E", "W")),
]
