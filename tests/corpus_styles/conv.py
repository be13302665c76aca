"""Convolution and pooling from scratch: naive nested loops over output positions slicing
windows out of a padded input (``np.pad``, or a zeros array with the input written in),
max pooling with ``np.max`` of a window, im2col with fancy index arrays, im2col by copying
strided slices into a preallocated column array, pooling by reshape, a 1-d conv, and a small
conv net with a ``conv_param`` dict."""

import numpy as np

from . import Program, rng


def conv_forward_naive(x, w, b, conv_param):
    stride, pad = conv_param['stride'], conv_param['pad']
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode='constant')
    H_out = 1 + (H + 2 * pad - HH) // stride
    W_out = 1 + (W + 2 * pad - WW) // stride
    out = np.zeros((N, F, H_out, W_out))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    window = x_pad[n, :, i * stride:i * stride + HH, j * stride:j * stride + WW]
                    out[n, f, i, j] = np.sum(window * w[f]) + b[f]
    return out


def conv_backward_naive(dout, x, w, b, conv_param):
    stride, pad = conv_param['stride'], conv_param['pad']
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode='constant')
    dx_pad = np.zeros_like(x_pad)
    dw, db = np.zeros_like(w), np.zeros_like(b)
    H_out, W_out = dout.shape[2], dout.shape[3]
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    hs, ws = i * stride, j * stride
                    db[f] += dout[n, f, i, j]
                    dw[f] += x_pad[n, :, hs:hs + HH, ws:ws + WW] * dout[n, f, i, j]
                    dx_pad[n, :, hs:hs + HH, ws:ws + WW] += w[f] * dout[n, f, i, j]
    return dx_pad[:, :, pad:pad + H, pad:pad + W], dw, db


def naive_conv_loss(x, w, b, conv_param):
    out = conv_forward_naive(x, w, b, conv_param)
    return np.sum(out ** 2) / 2


def naive_conv_loss_backward(x, w, b, conv_param):
    out = conv_forward_naive(x, w, b, conv_param)
    return conv_backward_naive(out, x, w, b, conv_param)


def max_pool_forward_naive(x, pool_param):
    N, C, H, W = x.shape
    ph, pw, s = pool_param['pool_height'], pool_param['pool_width'], pool_param['stride']
    H_out = 1 + (H - ph) // s
    W_out = 1 + (W - pw) // s
    out = np.zeros((N, C, H_out, W_out))
    for n in range(N):
        for c in range(C):
            for i in range(H_out):
                for j in range(W_out):
                    out[n, c, i, j] = np.max(x[n, c, i * s:i * s + ph, j * s:j * s + pw])
    return out


def max_pool_loss(x, pool_param):
    out = max_pool_forward_naive(x, pool_param)
    return np.sum(out * np.arange(out.size).reshape(out.shape))


def max_pool_loss_backward(x, pool_param):
    out = max_pool_forward_naive(x, pool_param)
    dout = np.arange(out.size).reshape(out.shape).astype(float)
    ph, pw, s = pool_param['pool_height'], pool_param['pool_width'], pool_param['stride']
    dx = np.zeros_like(x)
    N, C, H_out, W_out = out.shape
    for n in range(N):
        for c in range(C):
            for i in range(H_out):
                for j in range(W_out):
                    window = x[n, c, i * s:i * s + ph, j * s:j * s + pw]
                    mask = window == np.max(window)
                    dx[n, c, i * s:i * s + ph, j * s:j * s + pw] += mask * dout[n, c, i, j]
    return (dx,)


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
    x_padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), mode='constant')
    k, i, j = get_im2col_indices(x.shape, field_height, field_width, padding, stride)
    cols = x_padded[:, k, i, j]
    C = x.shape[1]
    cols = cols.transpose(1, 2, 0).reshape(field_height * field_width * C, -1)
    return cols


def im2col_fancy_conv(x, w, b):
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    H_out, W_out = H, W
    X_col = im2col_indices(x, HH, WW, padding=1, stride=1)
    W_col = w.reshape(F, -1)
    out = W_col @ X_col + b.reshape(-1, 1)
    out = out.reshape(F, H_out, W_out, N)
    out = out.transpose(3, 0, 1, 2)
    return np.sum(np.tanh(out))


def im2col_fancy_conv_backward(x, w, b):
    out = conv_forward_naive(x, w, b, {'stride': 1, 'pad': 1})
    dout = 1 - np.tanh(out) ** 2
    return conv_backward_naive(dout, x, w, b, {'stride': 1, 'pad': 1})


def im2col_slices(img, filter_h, filter_w, stride=1, pad=0):
    N, C, H, W = img.shape
    out_h = (H + 2 * pad - filter_h) // stride + 1
    out_w = (W + 2 * pad - filter_w) // stride + 1
    img = np.pad(img, [(0, 0), (0, 0), (pad, pad), (pad, pad)], 'constant')
    col = np.zeros((N, C, filter_h, filter_w, out_h, out_w))
    for y in range(filter_h):
        y_max = y + stride * out_h
        for x in range(filter_w):
            x_max = x + stride * out_w
            col[:, :, y, x, :, :] = img[:, :, y:y_max:stride, x:x_max:stride]
    col = col.transpose(0, 4, 5, 1, 2, 3).reshape(N * out_h * out_w, -1)
    return col


def im2col_slices_conv(x, W, b):
    FN, C, FH, FW = W.shape
    N, C, H, Wd = x.shape
    out_h = 1 + (H + 2 * 1 - FH) // 2
    out_w = 1 + (Wd + 2 * 1 - FW) // 2
    col = im2col_slices(x, FH, FW, 2, 1)
    col_W = W.reshape(FN, -1).T
    out = np.dot(col, col_W) + b
    out = out.reshape(N, out_h, out_w, -1).transpose(0, 3, 1, 2)
    return np.sum(out ** 2) / 2


def im2col_slices_conv_backward(x, W, b):
    out = conv_forward_naive(x, W, b, {'stride': 2, 'pad': 1})
    return conv_backward_naive(out, x, W, b, {'stride': 2, 'pad': 1})


def zeros_pad_stride2(x, w):
    """Pad by writing the input into a zeros array; stride 2; the bias-free conv."""
    N, C, H, W = x.shape
    F, _, k, _ = w.shape
    p, s = 1, 2
    xp = np.zeros((N, C, H + 2 * p, W + 2 * p))
    xp[:, :, p:-p, p:-p] = x
    Ho = (H + 2 * p - k) // s + 1
    Wo = (W + 2 * p - k) // s + 1
    out = np.zeros((N, F, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            patch = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return np.mean(np.maximum(out, 0) ** 2)


def zeros_pad_stride2_backward(x, w):
    F = w.shape[0]
    out = conv_forward_naive(x, w, np.zeros(F), {'stride': 2, 'pad': 1})
    dout = 2 * np.maximum(out, 0) / out.size
    dx, dw, _ = conv_backward_naive(dout, x, w, np.zeros(F), {'stride': 2, 'pad': 1})
    return dx, dw


def pool_by_reshape(x):
    N, C, H, W = x.shape
    xr = x.reshape(N, C, H // 2, 2, W // 2, 2)
    mx = xr.max(axis=3).max(axis=4)
    av = xr.mean(axis=(3, 5))
    return np.sum(mx * av)


def pool_by_reshape_backward(x):
    N, C, H, W = x.shape
    xr = x.reshape(N, C, H // 2, 2, W // 2, 2)
    mx = xr.max(axis=(3, 5))
    av = xr.mean(axis=(3, 5))
    dmx = av[:, :, :, None, :, None]
    dav = mx[:, :, :, None, :, None]
    mask = xr == mx[:, :, :, None, :, None]
    dxr = mask * dmx + np.broadcast_to(dav / 4.0, xr.shape)
    return (dxr.reshape(x.shape),)


def conv1d_loop(signal, kernel, target):
    n, k = len(signal), len(kernel)
    out = []
    for i in range(n - k + 1):
        out.append(np.dot(signal[i:i + k], kernel[::-1]))
    out = np.array(out)
    return np.sum((out - target) ** 2)


def conv1d_loop_backward(signal, kernel, target):
    n, k = len(signal), len(kernel)
    out = np.array([np.dot(signal[i:i + k], kernel[::-1]) for i in range(n - k + 1)])
    d = 2 * (out - target)
    ds, dk = np.zeros_like(signal), np.zeros_like(kernel)
    for i in range(n - k + 1):
        ds[i:i + k] += d[i] * kernel[::-1]
        dk += (d[i] * signal[i:i + k])[::-1]
    return ds, dk


def sliding_window_view_conv(x, w):
    windows = np.lib.stride_tricks.sliding_window_view(x, w.shape, axis=(1, 2))
    out = np.einsum('nijkl,kl->nij', windows, w)
    return np.sum(np.sin(out))


def sliding_window_view_conv_backward(x, w):
    N, H, W = x.shape
    k, l = w.shape
    Ho, Wo = H - k + 1, W - l + 1
    out = np.zeros((N, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            out[:, i, j] = np.sum(x[:, i:i + k, j:j + l] * w, axis=(1, 2))
    d = np.cos(out)
    dx, dw = np.zeros_like(x), np.zeros_like(w)
    for i in range(Ho):
        for j in range(Wo):
            dx[:, i:i + k, j:j + l] += d[:, i, j][:, None, None] * w
            dw += np.sum(d[:, i, j][:, None, None] * x[:, i:i + k, j:j + l], axis=0)
    return dx, dw


def three_layer_convnet(params, X, y):
    W1, b1 = params['W1'], params['b1']
    W2, b2 = params['W2'], params['b2']
    conv = conv_forward_naive(X, W1, b1, {'stride': 1, 'pad': 1})
    relu = np.maximum(conv, 0)
    pooled = max_pool_forward_naive(relu, {'pool_height': 2, 'pool_width': 2, 'stride': 2})
    N = X.shape[0]
    scores = pooled.reshape(N, -1) @ W2 + b2
    scores = scores - scores.max(axis=1, keepdims=True)
    log_probs = scores - np.log(np.sum(np.exp(scores), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(N), y])


def three_layer_convnet_backward(params, X, y):
    W1, b1, W2, b2 = params['W1'], params['b1'], params['W2'], params['b2']
    cp, pp = {'stride': 1, 'pad': 1}, {'pool_height': 2, 'pool_width': 2, 'stride': 2}
    conv = conv_forward_naive(X, W1, b1, cp)
    relu = np.maximum(conv, 0)
    pooled = max_pool_forward_naive(relu, pp)
    N = X.shape[0]
    flat = pooled.reshape(N, -1)
    scores = flat @ W2 + b2
    p = np.exp(scores - scores.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(N), y] -= 1
    dscores = p / N
    grads = {'W2': flat.T @ dscores, 'b2': dscores.sum(0)}
    dpooled = (dscores @ W2.T).reshape(pooled.shape)
    drelu = np.zeros_like(relu)
    for n in range(N):
        for c in range(relu.shape[1]):
            for i in range(pooled.shape[2]):
                for j in range(pooled.shape[3]):
                    win = relu[n, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
                    drelu[n, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2] += \
                        (win == win.max()) * dpooled[n, c, i, j]
    dconv = drelu * (conv > 0)
    _, grads['W1'], grads['b1'] = conv_backward_naive(dconv, X, W1, b1, cp)
    return (grads,)


def _args_naive():
    r = rng(80)
    return (r.standard_normal((2, 2, 4, 4)), r.standard_normal((2, 2, 3, 3)) * 0.3,
            r.standard_normal(2) * 0.1, {'stride': 1, 'pad': 1})


def _args_im2col(seed=81):
    r = rng(seed)
    return (r.standard_normal((2, 2, 4, 4)), r.standard_normal((3, 2, 3, 3)) * 0.3,
            r.standard_normal(3) * 0.1)


def _args_cnn():
    r = rng(85)
    params = {'W1': r.standard_normal((2, 1, 3, 3)) * 0.5, 'b1': r.standard_normal(2) * 0.1,
              'W2': r.standard_normal((8, 3)) * 0.5, 'b2': r.standard_normal(3) * 0.1}
    return params, r.standard_normal((2, 1, 4, 4)), r.integers(0, 3, 2)


PROGRAMS = [
    Program("conv.naive_conv_loss", naive_conv_loss, naive_conv_loss_backward, _args_naive,
            ("x", "w", "b")),
    Program("conv.max_pool_loss", max_pool_loss, max_pool_loss_backward,
            lambda: (rng(82).standard_normal((2, 2, 4, 4)),
                     {'pool_height': 2, 'pool_width': 2, 'stride': 2}), ("x",)),
    Program("conv.im2col_fancy_conv", im2col_fancy_conv, im2col_fancy_conv_backward,
            _args_im2col, ("x", "w", "b"), fuse=True),
    Program("conv.im2col_slices_conv", im2col_slices_conv, im2col_slices_conv_backward,
            lambda: _args_im2col(83), ("x", "W", "b")),
    Program("conv.zeros_pad_stride2", zeros_pad_stride2, zeros_pad_stride2_backward,
            lambda: _args_im2col(84)[:2], ("x", "w")),
    Program("conv.pool_by_reshape", pool_by_reshape, pool_by_reshape_backward,
            lambda: (rng(86).standard_normal((2, 2, 4, 4)),), ("x",)),
    Program("conv.conv1d_loop", conv1d_loop, conv1d_loop_backward,
            lambda: (rng(87).standard_normal(8), rng(88).standard_normal(3),
                     rng(89).standard_normal(6)), ("signal", "kernel")),
    Program("conv.sliding_window_view_conv", sliding_window_view_conv,
            sliding_window_view_conv_backward,
            lambda: (rng(90).standard_normal((2, 4, 4)), rng(91).standard_normal((2, 2))),
            ("x", "w")),
    Program("conv.three_layer_convnet", three_layer_convnet, three_layer_convnet_backward,
            _args_cnn, ("params",)),
]
