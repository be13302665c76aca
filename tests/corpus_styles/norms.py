"""Batch/layer/group normalisation as the assignments write them: ``bn_param`` dicts whose
running statistics are written back into the dict argument (``bn_param['running_mean'] =
...``), ``bn_param.get`` with defaults, ``mode == 'train'``, the step-by-step graph version,
spatial batchnorm through transposes and reshapes, layernorm returning a cache."""

import numpy as np

from . import Program, rng


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param['mode']
    eps = bn_param.get('eps', 1e-5)
    momentum = bn_param.get('momentum', 0.9)
    N, D = x.shape
    running_mean = bn_param.get('running_mean', np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get('running_var', np.zeros(D, dtype=x.dtype))
    if mode == 'train':
        sample_mean = np.mean(x, axis=0)
        sample_var = np.var(x, axis=0)
        x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
        out = gamma * x_hat + beta
        cache = (x_hat, gamma, sample_var + eps)
        running_mean = momentum * running_mean + (1 - momentum) * sample_mean
        running_var = momentum * running_var + (1 - momentum) * sample_var
    elif mode == 'test':
        x_hat = (x - running_mean) / np.sqrt(running_var + eps)
        out = gamma * x_hat + beta
        cache = None
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)
    bn_param['running_mean'] = running_mean
    bn_param['running_var'] = running_var
    return out, cache


def batchnorm_backward_alt(dout, cache):
    x_hat, gamma, var_eps = cache
    N = dout.shape[0]
    dbeta = dout.sum(axis=0)
    dgamma = np.sum(dout * x_hat, axis=0)
    dx_hat = dout * gamma
    dx = (N * dx_hat - dx_hat.sum(axis=0) - x_hat * np.sum(dx_hat * x_hat, axis=0)) \
        / (N * np.sqrt(var_eps))
    return dx, dgamma, dbeta


def bn_param_written_back(x, gamma, beta, W, bn_param):
    out, _ = batchnorm_forward(x @ W, gamma, beta, bn_param)
    return np.sum(np.tanh(out) * np.arange(out.shape[1]))


def bn_param_written_back_backward(x, gamma, beta, W, bn_param):
    bn_param = dict(bn_param)
    out, cache = batchnorm_forward(x @ W, gamma, beta, bn_param)
    dout = (1 - np.tanh(out) ** 2) * np.arange(out.shape[1])
    da, dgamma, dbeta = batchnorm_backward_alt(dout, cache)
    return da @ W.T, dgamma, dbeta, x.T @ da


def bn_test_mode_running_stats(x, gamma, beta, bn_param):
    out, _ = batchnorm_forward(x, gamma, beta, bn_param)
    return np.sum(out ** 2)


def bn_test_mode_running_stats_backward(x, gamma, beta, bn_param):
    xh = (x - bn_param['running_mean']) / np.sqrt(bn_param['running_var'] + 1e-5)
    out = gamma * xh + beta
    d = 2 * out
    return d * gamma / np.sqrt(bn_param['running_var'] + 1e-5), np.sum(d * xh, 0), d.sum(0)


def batchnorm_graph_steps(x, gamma, beta, eps=1e-5):
    N, D = x.shape
    mu = 1. / N * np.sum(x, axis=0)
    xmu = x - mu
    sq = xmu ** 2
    var = 1. / N * np.sum(sq, axis=0)
    sqrtvar = np.sqrt(var + eps)
    ivar = 1. / sqrtvar
    xhat = xmu * ivar
    gammax = gamma * xhat
    out = gammax + beta
    return np.sum(out * np.cos(np.arange(N * D).reshape(N, D)))


def batchnorm_graph_steps_backward(x, gamma, beta, eps=1e-5):
    N, D = x.shape
    dout = np.cos(np.arange(N * D).reshape(N, D))
    mu = x.mean(0)
    xmu = x - mu
    var = np.mean(xmu ** 2, 0)
    sqrtvar = np.sqrt(var + eps)
    ivar = 1. / sqrtvar
    xhat = xmu * ivar
    dbeta = np.sum(dout, axis=0)
    dgamma = np.sum(dout * xhat, axis=0)
    dxhat = dout * gamma
    divar = np.sum(dxhat * xmu, axis=0)
    dxmu1 = dxhat * ivar
    dsqrtvar = -1. / (sqrtvar ** 2) * divar
    dvar = 0.5 * 1. / np.sqrt(var + eps) * dsqrtvar
    dsq = 1. / N * np.ones((N, D)) * dvar
    dxmu2 = 2 * xmu * dsq
    dx1 = dxmu1 + dxmu2
    dmu = -1 * np.sum(dxmu1 + dxmu2, axis=0)
    dx2 = 1. / N * np.ones((N, D)) * dmu
    return dx1 + dx2, dgamma, dbeta


def spatial_batchnorm(x, gamma, beta, bn_param):
    N, C, H, W = x.shape
    x_flat = x.transpose(0, 2, 3, 1).reshape(-1, C)
    out_flat, _ = batchnorm_forward(x_flat, gamma, beta, bn_param)
    out = out_flat.reshape(N, H, W, C).transpose(0, 3, 1, 2)
    return np.sum(out * np.sin(np.arange(out.size).reshape(out.shape)))


def spatial_batchnorm_backward(x, gamma, beta, bn_param):
    bn_param = dict(bn_param)
    N, C, H, W = x.shape
    x_flat = x.transpose(0, 2, 3, 1).reshape(-1, C)
    _, cache = batchnorm_forward(x_flat, gamma, beta, bn_param)
    dout = np.sin(np.arange(x.size).reshape(x.shape))
    dflat = dout.transpose(0, 2, 3, 1).reshape(-1, C)
    dx, dgamma, dbeta = batchnorm_backward_alt(dflat, cache)
    return dx.reshape(N, H, W, C).transpose(0, 3, 1, 2), dgamma, dbeta


def layernorm_forward(x, gamma, beta, ln_param):
    eps = ln_param.get('eps', 1e-5)
    mu = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    x_hat = (x - mu) / np.sqrt(var + eps)
    out = gamma * x_hat + beta
    cache = (x_hat, gamma, var + eps)
    return out, cache


def layernorm_mlp(x, gamma, beta, W):
    h, _ = layernorm_forward(x @ W, gamma, beta, {})
    return np.mean(np.maximum(h, 0) ** 2)


def layernorm_mlp_backward(x, gamma, beta, W):
    a = x @ W
    h, (xh, g, ve) = layernorm_forward(a, gamma, beta, {})
    dh = 2 * np.maximum(h, 0) / h.size
    dgamma = np.sum(dh * xh, 0)
    dbeta = dh.sum(0)
    dxh = dh * g
    D = a.shape[1]
    da = (D * dxh - dxh.sum(1, keepdims=True) - xh * np.sum(dxh * xh, 1, keepdims=True)) \
        / (D * np.sqrt(ve))
    return da @ W.T, dgamma, dbeta, x.T @ da


def groupnorm_reshape(x, gamma, beta, G=2, eps=1e-5):
    N, C, H, W = x.shape
    xg = x.reshape(N, G, C // G, H, W)
    mean = xg.mean(axis=(2, 3, 4), keepdims=True)
    var = xg.var(axis=(2, 3, 4), keepdims=True)
    xg = (xg - mean) / np.sqrt(var + eps)
    out = xg.reshape(N, C, H, W) * gamma.reshape(1, C, 1, 1) + beta.reshape(1, C, 1, 1)
    return np.sum(out ** 3) / out.size


def groupnorm_reshape_backward(x, gamma, beta, G=2, eps=1e-5):
    N, C, H, W = x.shape
    xg = x.reshape(N, G, -1)
    mean = xg.mean(2, keepdims=True)
    var = xg.var(2, keepdims=True)
    xh = ((xg - mean) / np.sqrt(var + eps)).reshape(N, C, H, W)
    out = xh * gamma.reshape(1, C, 1, 1) + beta.reshape(1, C, 1, 1)
    dout = 3 * out ** 2 / out.size
    dgamma = np.sum(dout * xh, axis=(0, 2, 3))
    dbeta = np.sum(dout, axis=(0, 2, 3))
    dxh = (dout * gamma.reshape(1, C, 1, 1)).reshape(N, G, -1)
    xh = xh.reshape(N, G, -1)
    M = xh.shape[2]
    dx = (M * dxh - dxh.sum(2, keepdims=True) - xh * np.sum(dxh * xh, 2, keepdims=True)) \
        / (M * np.sqrt(var + eps))
    return dx.reshape(x.shape), dgamma, dbeta


def _bn_param(mode='train', D=5, seed=50):
    r = rng(seed)
    if mode == 'train':
        return {'mode': 'train', 'momentum': 0.9}
    return {'mode': 'test', 'running_mean': r.standard_normal(D) * 0.1,
            'running_var': r.uniform(0.5, 1.5, D)}


def _args_bnw():
    r = rng(51)
    return (r.standard_normal((7, 4)), 1 + 0.1 * r.standard_normal(5),
            0.1 * r.standard_normal(5), r.standard_normal((4, 5)) * 0.5, _bn_param())


def _args_bn(seed, D=5, N=7):
    r = rng(seed)
    return (r.standard_normal((N, D)), 1 + 0.1 * r.standard_normal(D),
            0.1 * r.standard_normal(D))


def _args_spatial():
    r = rng(55)
    return (r.standard_normal((2, 3, 3, 2)), 1 + 0.1 * r.standard_normal(3),
            0.1 * r.standard_normal(3), _bn_param())


def _args_ln():
    r = rng(56)
    return (r.standard_normal((6, 4)), 1 + 0.1 * r.standard_normal(5),
            0.1 * r.standard_normal(5), r.standard_normal((4, 5)))


def _args_gn():
    r = rng(57)
    return (r.standard_normal((2, 4, 2, 3)), 1 + 0.1 * r.standard_normal(4),
            0.1 * r.standard_normal(4))


PROGRAMS = [
    Program("norms.bn_param_written_back", bn_param_written_back,
            bn_param_written_back_backward, _args_bnw, ("x", "gamma", "beta", "W"),
            fuse=True),
    Program("norms.bn_test_mode_running_stats", bn_test_mode_running_stats,
            bn_test_mode_running_stats_backward, lambda: _args_bn(52) + (_bn_param('test'),),
            ("x", "gamma", "beta")),
    Program("norms.batchnorm_graph_steps", batchnorm_graph_steps,
            batchnorm_graph_steps_backward, lambda: _args_bn(53), ("x", "gamma", "beta")),
    Program("norms.spatial_batchnorm", spatial_batchnorm, spatial_batchnorm_backward,
            _args_spatial, ("x", "gamma", "beta")),
    Program("norms.layernorm_mlp", layernorm_mlp, layernorm_mlp_backward, _args_ln,
            ("x", "gamma", "beta", "W"), fuse=True),
    Program("norms.groupnorm_reshape", groupnorm_reshape, groupnorm_reshape_backward,
            _args_gn, ("x", "gamma", "beta")),
]
