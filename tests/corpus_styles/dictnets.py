"""Dict-of-params networks (cs231n style): ``params['W1']``, ``grads`` dicts, functional
``affine_forward`` / ``relu_forward`` returning ``(out, cache)``, two/three-layer MLPs whose
loss returns ``scores`` when ``y is None``, keys built with ``'W%d' % i``. The gradient is
taken with respect to the whole ``params`` dict."""

import numpy as np

from . import Program, rng


def affine_forward(x, w, b):
    N = x.shape[0]
    out = x.reshape(N, -1).dot(w) + b
    cache = (x, w, b)
    return out, cache


def affine_backward(dout, cache):
    x, w, b = cache
    N = x.shape[0]
    dx = dout.dot(w.T).reshape(x.shape)
    dw = x.reshape(N, -1).T.dot(dout)
    db = np.sum(dout, axis=0)
    return dx, dw, db


def relu_forward(x):
    out = np.maximum(0, x)
    cache = x
    return out, cache


def relu_backward(dout, cache):
    x = cache
    dx = dout.copy()
    dx[x <= 0] = 0
    return dx


def affine_relu_forward(x, w, b):
    a, fc_cache = affine_forward(x, w, b)
    out, relu_cache = relu_forward(a)
    return out, (fc_cache, relu_cache)


def affine_relu_backward(dout, cache):
    fc_cache, relu_cache = cache
    da = relu_backward(dout, relu_cache)
    return affine_backward(da, fc_cache)


def softmax_loss(x, y):
    shifted = x - np.max(x, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted), axis=1, keepdims=True)
    log_probs = shifted - np.log(Z)
    probs = np.exp(log_probs)
    N = x.shape[0]
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    dx = probs.copy()
    dx[np.arange(N), y] -= 1
    dx /= N
    return loss, dx


# ---- programs ---------------------------------------------------------------------------

def two_layer_net(params, X, y=None, reg=0.05):
    W1, b1 = params['W1'], params['b1']
    W2, b2 = params['W2'], params['b2']
    N, D = X.shape
    h = np.maximum(0, X.dot(W1) + b1)
    scores = h.dot(W2) + b2
    if y is None:
        return scores
    scores = scores - np.max(scores, axis=1, keepdims=True)
    exp_scores = np.exp(scores)
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    data_loss = -np.sum(np.log(probs[range(N), y])) / N
    reg_loss = reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
    return data_loss + reg_loss


def two_layer_net_backward(params, X, y=None, reg=0.05):
    W1, b1, W2, b2 = params['W1'], params['b1'], params['W2'], params['b2']
    N = X.shape[0]
    h = np.maximum(0, X.dot(W1) + b1)
    scores = h.dot(W2) + b2
    _, dscores = softmax_loss(scores, y)
    grads = {}
    grads['W2'] = h.T.dot(dscores) + 2 * reg * W2
    grads['b2'] = np.sum(dscores, axis=0)
    dh = dscores.dot(W2.T)
    dh[h <= 0] = 0
    grads['W1'] = X.T.dot(dh) + 2 * reg * W1
    grads['b1'] = np.sum(dh, axis=0)
    return (grads,)


def loss_and_grads(params, X, y, reg=0.05):
    """The cs231n method body: computes the loss and, by hand, its grads."""
    W1, b1, W2, b2 = params['W1'], params['b1'], params['W2'], params['b2']
    h, cache1 = affine_relu_forward(X, W1, b1)
    scores, cache2 = affine_forward(h, W2, b2)
    loss, dscores = softmax_loss(scores, y)
    loss += 0.5 * reg * (np.sum(W1 ** 2) + np.sum(W2 ** 2))
    grads = {}
    dh, grads['W2'], grads['b2'] = affine_backward(dscores, cache2)
    _, grads['W1'], grads['b1'] = affine_relu_backward(dh, cache1)
    grads['W1'] += reg * W1
    grads['W2'] += reg * W2
    return loss, grads


def returns_loss_and_grads(params, X, y):
    loss, grads = loss_and_grads(params, X, y)
    return loss


def returns_loss_and_grads_backward(params, X, y):
    return (loss_and_grads(params, X, y)[1],)


def three_layer_keys_formatted(params, X, y=None, num_layers=3):
    out = X
    for i in range(1, num_layers):
        out = np.tanh(out @ params['W%d' % i] + params['b%d' % i])
    scores = out @ params['W%d' % num_layers] + params['b%d' % num_layers]
    if y is None:
        return scores
    loss, _ = softmax_loss(scores, y)
    return loss


def three_layer_keys_formatted_backward(params, X, y=None, num_layers=3):
    hs = [X]
    for i in range(1, num_layers):
        hs.append(np.tanh(hs[-1] @ params['W%d' % i] + params['b%d' % i]))
    scores = hs[-1] @ params['W%d' % num_layers] + params['b%d' % num_layers]
    _, d = softmax_loss(scores, y)
    grads = {}
    for i in range(num_layers, 0, -1):
        grads['W%d' % i] = hs[i - 1].T @ d
        grads['b%d' % i] = d.sum(axis=0)
        d = d @ params['W%d' % i].T
        if i > 1:
            d = d * (1 - hs[i - 1] ** 2)
    return (grads,)


def fc_net_caches_dict(params, X, y, num_layers=3, reg=0.01):
    caches = {}
    out = X
    for i in range(num_layers - 1):
        out, caches[i] = affine_relu_forward(out, params['W' + str(i + 1)],
                                             params['b' + str(i + 1)])
    scores, caches[num_layers - 1] = affine_forward(out, params['W' + str(num_layers)],
                                                    params['b' + str(num_layers)])
    loss, dscores = softmax_loss(scores, y)
    for i in range(num_layers):
        W = params['W' + str(i + 1)]
        loss += 0.5 * reg * np.sum(W * W)
    return loss


def fc_net_caches_dict_backward(params, X, y, num_layers=3, reg=0.01):
    caches = {}
    out = X
    for i in range(num_layers - 1):
        out, caches[i] = affine_relu_forward(out, params['W' + str(i + 1)],
                                             params['b' + str(i + 1)])
    scores, caches[num_layers - 1] = affine_forward(out, params['W' + str(num_layers)],
                                                    params['b' + str(num_layers)])
    _, dout = softmax_loss(scores, y)
    grads = {}
    L = num_layers
    dout, grads['W%d' % L], grads['b%d' % L] = affine_backward(dout, caches[L - 1])
    for i in range(L - 2, -1, -1):
        dout, grads['W%d' % (i + 1)], grads['b%d' % (i + 1)] = \
            affine_relu_backward(dout, caches[i])
    for i in range(L):
        grads['W%d' % (i + 1)] += reg * params['W%d' % (i + 1)]
    return (grads,)


def reg_over_items(params, X, y, reg=0.1):
    h = np.maximum(0, X @ params['W1'] + params['b1'])
    scores = h @ params['W2'] + params['b2']
    loss, _ = softmax_loss(scores, y)
    for name, value in params.items():
        if name.startswith('W'):
            loss += 0.5 * reg * np.sum(value ** 2)
    return loss


def reg_over_items_backward(params, X, y, reg=0.1):
    grads = two_layer_net_backward(params, X, y, reg=0.0)[0]
    for name, value in params.items():
        if name.startswith('W'):
            grads[name] = grads[name] + reg * value
    return (grads,)


def layers_list_of_dicts(layers, X, T):
    """Parameters as a list of per-layer dicts, activation names in the dicts."""
    a = X
    for layer in layers:
        z = a @ layer['W'] + layer['b']
        if layer['act'] == 'sigmoid':
            a = 1 / (1 + np.exp(-z))
        elif layer['act'] == 'tanh':
            a = np.tanh(z)
        else:
            a = z
    return 0.5 * np.sum((a - T) ** 2) / X.shape[0]


def layers_list_of_dicts_backward(layers, X, T):
    acts, zs = [X], []
    for layer in layers:
        z = acts[-1] @ layer['W'] + layer['b']
        zs.append(z)
        if layer['act'] == 'sigmoid':
            acts.append(1 / (1 + np.exp(-z)))
        elif layer['act'] == 'tanh':
            acts.append(np.tanh(z))
        else:
            acts.append(z)
    d = (acts[-1] - T) / X.shape[0]
    grads = [None] * len(layers)
    for i in range(len(layers) - 1, -1, -1):
        a = acts[i + 1]
        if layers[i]['act'] == 'sigmoid':
            d = d * a * (1 - a)
        elif layers[i]['act'] == 'tanh':
            d = d * (1 - a ** 2)
        grads[i] = {'W': acts[i].T @ d, 'b': d.sum(0), 'act': None}
        d = d @ layers[i]['W'].T
    return (grads,)


def column_major_andrew_ng(parameters, X, Y):
    """Deeplearning.ai layout: X is (features, examples), W{l} is (n_l, n_{l-1}),
    b is a column, caches appended to a list, cost = -1/m sum(Y log A + ...)."""
    caches = []
    A = X
    L = len(parameters) // 2
    for l in range(1, L):
        A_prev = A
        Z = np.dot(parameters['W' + str(l)], A_prev) + parameters['b' + str(l)]
        A = np.maximum(0, Z)
        caches.append((A_prev, Z))
    ZL = np.dot(parameters['W' + str(L)], A) + parameters['b' + str(L)]
    AL = 1 / (1 + np.exp(-ZL))
    m = Y.shape[1]
    cost = -1 / m * np.sum(Y * np.log(AL) + (1 - Y) * np.log(1 - AL))
    cost = np.squeeze(cost)
    return cost


def column_major_andrew_ng_backward(parameters, X, Y):
    L = len(parameters) // 2
    As, Zs = [X], [None]
    for l in range(1, L):
        Z = parameters['W' + str(l)] @ As[-1] + parameters['b' + str(l)]
        Zs.append(Z)
        As.append(np.maximum(0, Z))
    AL = 1 / (1 + np.exp(-(parameters['W' + str(L)] @ As[-1] + parameters['b' + str(L)])))
    m = Y.shape[1]
    dZ = (AL - Y) / m
    grads = {}
    for l in range(L, 0, -1):
        grads['W' + str(l)] = dZ @ As[l - 1].T
        grads['b' + str(l)] = np.sum(dZ, axis=1, keepdims=True)
        if l > 1:
            dA = parameters['W' + str(l)].T @ dZ
            dZ = dA * (Zs[l - 1] > 0)
    return (grads,)


def _params(seed, sizes, col=False):
    r = rng(seed)
    p = {}
    for i in range(1, len(sizes)):
        if col:
            p['W%d' % i] = r.standard_normal((sizes[i], sizes[i - 1])) * 0.5
            p['b%d' % i] = r.standard_normal((sizes[i], 1)) * 0.1
        else:
            p['W%d' % i] = r.standard_normal((sizes[i - 1], sizes[i])) * 0.5
            p['b%d' % i] = r.standard_normal(sizes[i]) * 0.1
    return p


def _xy(seed, N=6, D=4, C=3):
    r = rng(seed + 100)
    return r.standard_normal((N, D)), r.integers(0, C, N)


def _args_list_of_dicts():
    r = rng(36)
    layers = [{'W': r.standard_normal((4, 5)) * 0.5, 'b': r.standard_normal(5) * 0.1,
               'act': 'sigmoid'},
              {'W': r.standard_normal((5, 4)) * 0.5, 'b': r.standard_normal(4) * 0.1,
               'act': 'tanh'},
              {'W': r.standard_normal((4, 2)) * 0.5, 'b': r.standard_normal(2) * 0.1,
               'act': 'linear'}]
    return layers, r.standard_normal((6, 4)), r.standard_normal((6, 2))


def _args_col():
    r = rng(37)
    return (_params(37, [4, 5, 3, 1], col=True), r.standard_normal((4, 7)),
            (r.uniform(size=(1, 7)) > 0.5).astype(float))


PROGRAMS = [
    Program("dictnets.two_layer_net", two_layer_net, two_layer_net_backward,
            lambda: (_params(30, [4, 5, 3]),) + _xy(30), ("params",), fuse=True),
    Program("dictnets.returns_loss_and_grads", returns_loss_and_grads,
            returns_loss_and_grads_backward, lambda: (_params(31, [4, 5, 3]),) + _xy(31),
            ("params",)),
    Program("dictnets.three_layer_keys_formatted", three_layer_keys_formatted,
            three_layer_keys_formatted_backward,
            lambda: (_params(32, [4, 5, 4, 3]),) + _xy(32), ("params",)),
    Program("dictnets.fc_net_caches_dict", fc_net_caches_dict, fc_net_caches_dict_backward,
            lambda: (_params(33, [4, 6, 5, 3]),) + _xy(33), ("params",)),
    Program("dictnets.reg_over_items", reg_over_items, reg_over_items_backward,
            lambda: (_params(34, [4, 5, 3]),) + _xy(34), ("params",)),
    Program("dictnets.layers_list_of_dicts", layers_list_of_dicts,
            layers_list_of_dicts_backward, _args_list_of_dicts, ("layers",)),
    Program("dictnets.column_major_andrew_ng", column_major_andrew_ng,
            column_major_andrew_ng_backward, _args_col, ("parameters",)),
]
