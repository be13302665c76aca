"""Eighth set of programs in the styles of public numpy-from-scratch code (read for patterns
only, written here from scratch): deeplearning.ai-style L-layer models (``parameters["W" +
str(l)]``, ``caches.append((linear_cache, activation_cache))``, ``L = len(parameters) // 2``,
dropout masks ``D = np.random.rand(...) < keep_prob`` passed in, L2 with ``lambd``,
``np.squeeze(cost)`` of a ``np.dot`` cost, ``propagate`` returning hand gradients next to the
cost, gradient-checking's ``dictionary_to_vector`` built by ``if count == 0`` and its inverse
by slicing, ``random_mini_batches`` with ``math.floor``), deeplearning.ai RNN/LSTM cells on
column-major batches storing into ``a[:, :, t]``; CS231n-style ``(out, cache)`` layers
(``np.pad`` with one-tuples, conv/pool parameters in dicts read by ``.get``, word embeddings,
temporal affine/softmax with a mask, a captioning model class with a ``cell_type`` string,
layer norm by transposing batch norm, ``probs[range(N), y]``); Keras-like numpy frameworks
(a ``Layer`` base whose ``__call__`` builds once, activations looked up by class name from a
dict comprehension over ``cls.__name__``, ``compile(loss="mse")``, an ``evaluate`` loop over
batches averaged by ``np.average(weights=)``); classic papers (neural style transfer's Gram
matrices over a list of ``(layer, coeff)`` tuples and total variation, van der Maaten's
t-SNE ``Q`` with ``num[range(n), range(n)] = 0``, cs224n skip-gram over a ``word2Ind``
dict, Luong attention with teacher forcing, RBM free energy with ``np.logaddexp``);
scientific code (Markowitz and Sharpe objectives with ``np.cov`` of returns, logistic-growth
fits closed-form and by Euler steps into a preallocated array, Lotka-Volterra by a
hand-written RK4 building ``np.array([...])`` of scalars, a mean-field Ising energy with
``np.roll``, Bishop's Bayesian linear regression evidence, Tukey biweight with a MAD scale
from ``np.median``, ISTA Lasso with a step from ``np.linalg.norm(X, 2)``, k-means inertia
after ``argmin``, ``scipy.stats.multivariate_normal.logpdf``); in-place updates of list
items (an unrolled SGD step ``for param, grad in zip(params, grads): param -= lr * grad``,
min-char-rnn's ``for w in Ws: np.clip(w, -5, 5, out=w)``); gradient-norm clipping inside the
loss; ``np.pad`` edge/reflect with ``getattr(np, name)``; decoder states in a dict keyed by t;
``W[:] = ..`` into ``np.empty_like``; a loss that is a property; ``RandomState.binomial``
dropout."""

from __future__ import annotations

import math

import numpy as np
import scipy.stats

from . import Probe, rng


def sigmoid(Z):
    A = 1 / (1 + np.exp(-Z))
    cache = Z
    return A, cache


def relu(Z):
    A = np.maximum(0, Z)
    cache = Z
    return A, cache


# ---- 1. deeplearning.ai L-layer model ----------------------------------------------------

def linear_forward(A, W, b):
    Z = np.dot(W, A) + b
    cache = (A, W, b)
    return Z, cache


def linear_activation_forward(A_prev, W, b, activation):
    if activation == "sigmoid":
        Z, linear_cache = linear_forward(A_prev, W, b)
        A, activation_cache = sigmoid(Z)
    elif activation == "relu":
        Z, linear_cache = linear_forward(A_prev, W, b)
        A, activation_cache = relu(Z)
    cache = (linear_cache, activation_cache)
    return A, cache


def L_model_forward(X, parameters):
    caches = []
    A = X
    L = len(parameters) // 2
    for l in range(1, L):
        A_prev = A
        A, cache = linear_activation_forward(A_prev, parameters["W" + str(l)],
                                             parameters["b" + str(l)], activation="relu")
        caches.append(cache)
    AL, cache = linear_activation_forward(A, parameters["W" + str(L)],
                                          parameters["b" + str(L)], activation="sigmoid")
    caches.append(cache)
    return AL, caches


def compute_cost(AL, Y):
    m = Y.shape[1]
    cost = -1 / m * np.sum(np.multiply(Y, np.log(AL)) + np.multiply(1 - Y, np.log(1 - AL)))
    cost = np.squeeze(cost)
    return cost


def l_layer_model(parameters, X, Y):
    AL, caches = L_model_forward(X, parameters)
    return compute_cost(AL, Y)


def _dims_params(dims, seed=0):
    r = rng(seed)
    parameters = {}
    for l in range(1, len(dims)):
        parameters["W" + str(l)] = r.standard_normal((dims[l], dims[l - 1])) * 0.5
        parameters["b" + str(l)] = r.standard_normal((dims[l], 1)) * 0.1
    return parameters


def _llayer():
    r = rng(1)
    X = r.standard_normal((4, 7))
    Y = (r.random((1, 7)) > 0.5).astype(float)
    return _dims_params([4, 5, 3, 1]), X, Y


# ---- 2. L2-regularised cost with lambd -----------------------------------------------------

def compute_cost_with_regularization(A3, Y, parameters, lambd):
    m = Y.shape[1]
    W1 = parameters["W1"]
    W2 = parameters["W2"]
    W3 = parameters["W3"]
    logprobs = np.multiply(-np.log(A3), Y) + np.multiply(-np.log(1 - A3), 1 - Y)
    cross_entropy_cost = 1. / m * np.nansum(logprobs)
    L2_regularization_cost = (1 / m) * (lambd / 2) * (np.sum(np.square(W1)) + np.sum(
        np.square(W2)) + np.sum(np.square(W3)))
    return cross_entropy_cost + L2_regularization_cost


def l2_lambd_model(parameters, X, Y, lambd=0.7):
    A3, _ = L_model_forward(X, parameters)
    return compute_cost_with_regularization(A3, Y, parameters, lambd)


def _l2():
    _, X, Y = _llayer()
    return _dims_params([4, 5, 3, 1], 2), X, Y, 0.7


# ---- 3. dropout masks made outside, passed in ----------------------------------------------

def forward_propagation_with_dropout(X, parameters, D1, D2, keep_prob=0.5):
    W1, b1 = parameters["W1"], parameters["b1"]
    W2, b2 = parameters["W2"], parameters["b2"]
    W3, b3 = parameters["W3"], parameters["b3"]
    Z1 = np.dot(W1, X) + b1
    A1, _ = relu(Z1)
    A1 = A1 * D1
    A1 = A1 / keep_prob
    Z2 = np.dot(W2, A1) + b2
    A2, _ = relu(Z2)
    A2 = np.multiply(A2, D2)
    A2 /= keep_prob
    Z3 = np.dot(W3, A2) + b3
    A3, _ = sigmoid(Z3)
    cache = (Z1, D1, A1, W1, b1, Z2, D2, A2, W2, b2, Z3, A3, W3, b3)
    return A3, cache


def dropout_masks_passed(parameters, X, Y, D1, D2):
    A3, cache = forward_propagation_with_dropout(X, parameters, D1, D2, keep_prob=0.8)
    return compute_cost(A3, Y)


def _dropout():
    parameters, X, Y = _llayer()
    np.random.seed(3)
    D1 = np.random.rand(5, X.shape[1])
    D1 = (D1 < 0.8).astype(int)
    D2 = np.random.rand(3, X.shape[1]) < 0.8
    return parameters, X, Y, D1, D2


# ---- 4. propagate() returning hand gradients next to the cost ------------------------------

def propagate(w, b, X, Y):
    m = X.shape[1]
    A = 1 / (1 + np.exp(-(np.dot(w.T, X) + b)))
    cost = (1. / m) * (-np.dot(Y, np.log(A).T) - np.dot(1 - Y, np.log(1 - A).T))
    dw = 1. / m * np.dot(X, (A - Y).T)
    db = 1. / m * np.sum(A - Y)
    assert dw.shape == w.shape
    cost = np.squeeze(cost)
    grads = {"dw": dw, "db": db}
    return grads, cost


def logistic_propagate(w, b, X, Y):
    grads, cost = propagate(w, b, X, Y)
    return cost


def _prop():
    r = rng(4)
    return (r.standard_normal((3, 1)) * 0.3, 0.1, r.standard_normal((3, 6)),
            (r.random((1, 6)) > 0.4).astype(float))


# ---- 5. gradient checking's dictionary_to_vector / vector_to_dictionary --------------------

def dictionary_to_vector(parameters):
    keys = []
    count = 0
    for key in ["W1", "b1", "W2", "b2"]:
        new_vector = np.reshape(parameters[key], (-1, 1))
        keys = keys + [key] * new_vector.shape[0]
        if count == 0:
            theta = new_vector
        else:
            theta = np.concatenate((theta, new_vector), axis=0)
        count = count + 1
    return theta, keys


def vector_to_dictionary(theta):
    parameters = {}
    parameters["W1"] = theta[:12].reshape((4, 3))
    parameters["b1"] = theta[12:16].reshape((4, 1))
    parameters["W2"] = theta[16:20].reshape((1, 4))
    parameters["b2"] = theta[20:21].reshape((1, 1))
    return parameters


def gradcheck_vectors(parameters, X, Y):
    theta, _ = dictionary_to_vector(parameters)
    p = vector_to_dictionary(theta * 1.0)
    AL, _ = L_model_forward(X, p)
    return compute_cost(AL, Y)


def _gc():
    r = rng(5)
    X = r.standard_normal((3, 5))
    Y = (r.random((1, 5)) > 0.5).astype(float)
    return _dims_params([3, 4, 1], 5), X, Y


# ---- 6. random_mini_batches with math.floor ------------------------------------------------

def random_mini_batches(X, Y, mini_batch_size=64, seed=0):
    np.random.seed(seed)
    m = X.shape[1]
    mini_batches = []
    permutation = list(np.random.permutation(m))
    shuffled_X = X[:, permutation]
    shuffled_Y = Y[:, permutation].reshape((1, m))
    num_complete_minibatches = math.floor(m / mini_batch_size)
    for k in range(0, num_complete_minibatches):
        mini_batch_X = shuffled_X[:, k * mini_batch_size: (k + 1) * mini_batch_size]
        mini_batch_Y = shuffled_Y[:, k * mini_batch_size: (k + 1) * mini_batch_size]
        mini_batches.append((mini_batch_X, mini_batch_Y))
    if m % mini_batch_size != 0:
        mini_batch_X = shuffled_X[:, num_complete_minibatches * mini_batch_size:]
        mini_batch_Y = shuffled_Y[:, num_complete_minibatches * mini_batch_size:]
        mini_batches.append((mini_batch_X, mini_batch_Y))
    return mini_batches


def minibatch_epoch_cost(parameters, X, Y):
    cost_total = 0
    minibatches = random_mini_batches(X, Y, mini_batch_size=3, seed=1)
    for minibatch in minibatches:
        (minibatch_X, minibatch_Y) = minibatch
        a3, caches = L_model_forward(minibatch_X, parameters)
        cost_total += compute_cost(a3, minibatch_Y) * minibatch_X.shape[1]
    cost_avg = cost_total / X.shape[1]
    return cost_avg


def _mbe():
    r = rng(6)
    X = r.standard_normal((4, 8))
    Y = (r.random((1, 8)) > 0.5).astype(float)
    return _dims_params([4, 3, 1], 6), X, Y


# ---- 7. deeplearning.ai RNN cell, column-major, a[:, :, t] stores --------------------------

def softmax_cols(x):
    e_x = np.exp(x - np.max(x))
    return e_x / e_x.sum(axis=0)


def rnn_cell_forward(xt, a_prev, parameters):
    Wax = parameters["Wax"]
    Waa = parameters["Waa"]
    Wya = parameters["Wya"]
    ba = parameters["ba"]
    by = parameters["by"]
    a_next = np.tanh(np.dot(Waa, a_prev) + np.dot(Wax, xt) + ba)
    yt_pred = softmax_cols(np.dot(Wya, a_next) + by)
    cache = (a_next, a_prev, xt, parameters)
    return a_next, yt_pred, cache


def rnn_forward(x, a0, parameters):
    caches = []
    n_x, m, T_x = x.shape
    n_y, n_a = parameters["Wya"].shape
    a = np.zeros((n_a, m, T_x))
    y_pred = np.zeros((n_y, m, T_x))
    a_next = a0
    for t in range(T_x):
        xt = x[:, :, t]
        a_next, yt_pred, cache = rnn_cell_forward(xt, a_next, parameters)
        a[:, :, t] = a_next
        y_pred[:, :, t] = yt_pred
        caches.append(cache)
    caches = (caches, x)
    return a, y_pred, caches


def dlai_rnn_forward(parameters, x, a0, Y):
    a, y_pred, caches = rnn_forward(x, a0, parameters)
    return -np.sum(Y * np.log(y_pred)) / x.shape[1]


def _dlai_rnn():
    r = rng(7)
    n_x, n_a, n_y, m, T = 3, 4, 2, 2, 4
    parameters = {"Waa": r.standard_normal((n_a, n_a)) * 0.4,
                  "Wax": r.standard_normal((n_a, n_x)) * 0.4,
                  "Wya": r.standard_normal((n_y, n_a)) * 0.4,
                  "ba": r.standard_normal((n_a, 1)) * 0.1,
                  "by": r.standard_normal((n_y, 1)) * 0.1}
    x = r.standard_normal((n_x, m, T))
    a0 = r.standard_normal((n_a, m)) * 0.1
    Y = np.eye(n_y)[r.integers(0, n_y, (m, T))].transpose(2, 0, 1)
    return parameters, x, a0, Y


# ---- 8. deeplearning.ai LSTM cell with concat = np.concatenate((a_prev, xt)) -----------------

def lstm_cell_forward(xt, a_prev, c_prev, parameters):
    Wf, bf = parameters["Wf"], parameters["bf"]
    Wi, bi = parameters["Wi"], parameters["bi"]
    Wc, bc = parameters["Wc"], parameters["bc"]
    Wo, bo = parameters["Wo"], parameters["bo"]
    n_x, m = xt.shape
    n_a = a_prev.shape[0]
    concat = np.zeros((n_a + n_x, m))
    concat[: n_a, :] = a_prev
    concat[n_a:, :] = xt
    ft = sigmoid(np.dot(Wf, concat) + bf)[0]
    it = sigmoid(np.dot(Wi, concat) + bi)[0]
    cct = np.tanh(np.dot(Wc, concat) + bc)
    c_next = ft * c_prev + it * cct
    ot = sigmoid(np.dot(Wo, concat) + bo)[0]
    a_next = ot * np.tanh(c_next)
    cache = (a_next, c_next, a_prev, c_prev, ft, it, cct, ot, xt, parameters)
    return a_next, c_next, cache


def lstm_concat_forward(parameters, x, a0, Wy):
    n_x, m, T_x = x.shape
    n_a = a0.shape[0]
    a = np.zeros((n_a, m, T_x))
    c = np.zeros((n_a, m, T_x))
    a_next = a0
    c_next = np.zeros(a_next.shape)
    caches = []
    for t in range(T_x):
        a_next, c_next, cache = lstm_cell_forward(x[:, :, t], a_next, c_next, parameters)
        a[:, :, t] = a_next
        c[:, :, t] = c_next
        caches.append(cache)
    return np.sum(np.tanh(np.einsum("ya,amt->ymt", Wy, a)) ** 2) + 0.1 * np.sum(c[:, :, -1])


def _dlai_lstm():
    r = rng(8)
    n_x, n_a, m, T = 2, 3, 2, 3
    parameters = {}
    for g in "fico":
        parameters["W" + g] = r.standard_normal((n_a, n_a + n_x)) * 0.5
        parameters["b" + g] = r.standard_normal((n_a, 1)) * 0.1
    return (parameters, r.standard_normal((n_x, m, T)), r.standard_normal((n_a, m)) * 0.2,
            r.standard_normal((2, n_a)))


# ---- 9. CS231n conv with np.pad one-tuples and conv_param dicts ---------------------------

def conv_forward_naive(x, w, b, conv_param):
    stride, pad = conv_param['stride'], conv_param['pad']
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    x_padded = np.pad(x, ((0,), (0,), (pad,), (pad,)), mode='constant', constant_values=0)
    H_out = 1 + (H + 2 * pad - HH) // stride
    W_out = 1 + (W + 2 * pad - WW) // stride
    out = np.zeros((N, F, H_out, W_out))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    window = x_padded[n, :, i * stride:i * stride + HH, j * stride:j * stride + WW]
                    out[n, f, i, j] = np.sum(window * w[f]) + b[f]
    cache = (x, w, b, conv_param)
    return out, cache


def max_pool_forward_naive(x, pool_param):
    N, C, H, W = x.shape
    ph = pool_param.get('pool_height', 2)
    pw = pool_param.get('pool_width', 2)
    stride = pool_param.get('stride', 2)
    H_out = 1 + (H - ph) // stride
    W_out = 1 + (W - pw) // stride
    out = np.zeros((N, C, H_out, W_out))
    for i in range(H_out):
        for j in range(W_out):
            out[:, :, i, j] = np.max(x[:, :, i * stride:i * stride + ph,
                                       j * stride:j * stride + pw], axis=(2, 3))
    return out, (x, pool_param)


def conv_pad_tuples(x, w, b, y):
    conv_param = {'stride': 1, 'pad': 1}
    out, conv_cache = conv_forward_naive(x, w, b, conv_param)
    out, pool_cache = max_pool_forward_naive(np.maximum(out, 0), {'stride': 2})
    scores = out.reshape(out.shape[0], -1)
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(log_probs[np.arange(x.shape[0]), y]) / x.shape[0]


def _conv():
    r = rng(9)
    return (r.standard_normal((2, 2, 4, 4)), r.standard_normal((2, 2, 3, 3)) * 0.5,
            r.standard_normal(2) * 0.1, np.array([1, 5]))


# ---- 10. CS231n captioning: embedding, rnn_forward into h[:, t, :], temporal softmax mask ----

def word_embedding_forward(x, W):
    out = W[x, :]
    cache = (x, W)
    return out, cache


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x.dot(Wx) + prev_h.dot(Wh) + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    return next_h, cache


def cs231n_rnn_forward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    cache = []
    prev_h = h0
    for t in range(T):
        prev_h, cache_t = rnn_step_forward(x[:, t, :], prev_h, Wx, Wh, b)
        h[:, t, :] = prev_h
        cache.append(cache_t)
    return h, cache


def temporal_affine_forward(x, w, b):
    N, T, D = x.shape
    M = b.shape[0]
    out = x.reshape(N * T, D).dot(w).reshape(N, T, M) + b
    cache = x, w, b, out
    return out, cache


def temporal_softmax_loss(x, y, mask, verbose=False):
    N, T, V = x.shape
    x_flat = x.reshape(N * T, V)
    y_flat = y.reshape(N * T)
    mask_flat = mask.reshape(N * T)
    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat])) / N
    if verbose:
        print('dx_flat: ', probs.shape)
    return loss


class CaptioningRNN:
    def __init__(self, word_to_idx, params, cell_type='rnn'):
        if cell_type not in {'rnn', 'lstm'}:
            raise ValueError('Invalid cell_type "%s"' % cell_type)
        self.cell_type = cell_type
        self.word_to_idx = word_to_idx
        self._null = word_to_idx['<NULL>']
        self._start = word_to_idx.get('<START>', None)
        self.params = params

    def loss(self, features, captions):
        captions_in = captions[:, :-1]
        captions_out = captions[:, 1:]
        mask = (captions_out != self._null)
        W_proj, b_proj = self.params['W_proj'], self.params['b_proj']
        W_embed = self.params['W_embed']
        Wx, Wh, b = self.params['Wx'], self.params['Wh'], self.params['b']
        W_vocab, b_vocab = self.params['W_vocab'], self.params['b_vocab']
        h0 = features.dot(W_proj) + b_proj
        x, cache_embedding = word_embedding_forward(captions_in, W_embed)
        if self.cell_type == 'rnn':
            h, cache_rnn = cs231n_rnn_forward(x, h0, Wx, Wh, b)
        scores, cache_scores = temporal_affine_forward(h, W_vocab, b_vocab)
        loss = temporal_softmax_loss(scores, captions_out, mask, verbose=False)
        return loss


WORD_TO_IDX = {'<NULL>': 0, '<START>': 1, '<END>': 2, 'a': 3, 'cat': 4, 'dog': 5}


def captioning_model(params, features, captions):
    model = CaptioningRNN(WORD_TO_IDX, params, cell_type='rnn')
    return model.loss(features, captions)


def _cap():
    r = rng(10)
    V, W, H, D = len(WORD_TO_IDX), 3, 4, 5
    params = {'W_proj': r.standard_normal((D, H)) * 0.3, 'b_proj': np.zeros(H) + 0.1,
              'W_embed': r.standard_normal((V, W)) * 0.5,
              'Wx': r.standard_normal((W, H)) * 0.4, 'Wh': r.standard_normal((H, H)) * 0.4,
              'b': r.standard_normal(H) * 0.1, 'W_vocab': r.standard_normal((H, V)) * 0.4,
              'b_vocab': r.standard_normal(V) * 0.1}
    captions = np.array([[1, 3, 4, 2, 0], [1, 3, 5, 5, 2]])
    return params, r.standard_normal((2, D)), captions


# ---- 11. layer norm by transposing batch norm; bn_param dict ------------------------------

def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param['mode']
    eps = bn_param.get('eps', 1e-5)
    momentum = bn_param.get('momentum', 0.9)
    N, D = x.shape
    running_mean = bn_param.get('running_mean', np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get('running_var', np.zeros(D, dtype=x.dtype))
    out, cache = None, None
    if mode == 'train':
        sample_mean = x.mean(axis=0)
        sample_var = x.var(axis=0)
        x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
        out = gamma * x_hat + beta
        cache = (x, x_hat, sample_mean, sample_var, gamma, eps)
        running_mean = momentum * running_mean + (1 - momentum) * sample_mean
        running_var = momentum * running_var + (1 - momentum) * sample_var
    elif mode == 'test':
        out = gamma * (x - running_mean) / np.sqrt(running_var + eps) + beta
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)
    bn_param['running_mean'] = running_mean
    bn_param['running_var'] = running_var
    return out, cache


def layernorm_forward(x, gamma, beta, ln_param):
    ln_param['mode'] = 'train'
    out, cache = batchnorm_forward(x.T, gamma.reshape(-1, 1), beta.reshape(-1, 1), ln_param)
    out = out.T
    return out, cache


def layernorm_by_transpose(x, gamma, beta, W):
    out, _ = layernorm_forward(x, gamma, beta, {'eps': 1e-5})
    return np.sum(np.tanh(out.dot(W)) ** 2)


def _ln():
    r = rng(11)
    return (r.standard_normal((3, 5)), 1 + 0.1 * r.standard_normal(5),
            0.1 * r.standard_normal(5), r.standard_normal((5, 2)))


# ---- 12. CS231n case study: probs[range(N), y] ----------------------------------------------

def case_study_net(W, b, W2, b2, X, y, reg=1e-3):
    num_examples = X.shape[0]
    hidden_layer = np.maximum(0, np.dot(X, W) + b)
    scores = np.dot(hidden_layer, W2) + b2
    exp_scores = np.exp(scores)
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    correct_logprobs = -np.log(probs[range(num_examples), y])
    data_loss = np.sum(correct_logprobs) / num_examples
    reg_loss = 0.5 * reg * np.sum(W * W) + 0.5 * reg * np.sum(W2 * W2)
    return data_loss + reg_loss


def _case():
    r = rng(12)
    return (r.standard_normal((2, 6)), np.zeros((1, 6)) + 0.1, r.standard_normal((6, 3)),
            np.zeros((1, 3)), r.standard_normal((5, 2)), np.array([0, 1, 2, 1, 0]))


# ---- 13. Keras-like Layer base: build once in __call__, activations by class name ----------

class Activation:
    def __call__(self, x):
        return self.forward(x)


class ReLU(Activation):
    def forward(self, x):
        return np.maximum(0, x)


class Sigmoid(Activation):
    def forward(self, x):
        return 1.0 / (1.0 + np.exp(-x))


class Tanh(Activation):
    def forward(self, x):
        return np.tanh(x)


ACTIVATIONS = {cls.__name__.lower(): cls for cls in (ReLU, Sigmoid, Tanh)}


class Layer:
    def __init__(self):
        self.built = False

    def build(self, input_shape):
        self.built = True

    def __call__(self, inputs):
        if not self.built:
            self.build(inputs.shape)
        return self.call(inputs)


class Dense(Layer):
    def __init__(self, units, kernel, bias, activation=None):
        super().__init__()
        self.units = units
        self._kernel, self._bias = kernel, bias
        self.activation = ACTIVATIONS[activation]() if activation else None

    def build(self, input_shape):
        assert self._kernel.shape == (input_shape[-1], self.units)
        self.kernel = self._kernel
        self.bias = self._bias
        super().build(input_shape)

    def call(self, inputs):
        z = inputs @ self.kernel + self.bias
        return self.activation(z) if self.activation is not None else z


class MeanSquaredError:
    def __call__(self, y_true, y_pred):
        return np.mean(np.square(y_true - y_pred))


class BinaryCrossentropy:
    def __call__(self, y_true, y_pred):
        y_pred = np.clip(y_pred, 1e-7, 1 - 1e-7)
        return -np.mean(y_true * np.log(y_pred) + (1 - y_true) * np.log(1 - y_pred))


LOSSES = {"mse": MeanSquaredError, "binary_crossentropy": BinaryCrossentropy}


class SequentialModel:
    def __init__(self, layers=None):
        self.layers = []
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        self.layers.append(layer)

    def compile(self, loss="mse"):
        self.loss_fn = LOSSES[loss]()

    def predict(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def evaluate(self, X, y, batch_size=4):
        losses, sizes = [], []
        n = X.shape[0]
        for start in range(0, n, batch_size):
            end = min(start + batch_size, n)
            losses.append(self.loss_fn(y[start:end], self.predict(X[start:end])))
            sizes.append(end - start)
        return np.average(losses, weights=sizes)


def keras_like_build(W1, b1, W2, b2, X, y):
    model = SequentialModel([Dense(4, W1, b1, activation="tanh"),
                             Dense(1, W2, b2, activation="sigmoid")])
    model.compile(loss="binary_crossentropy")
    return model.evaluate(X, y, batch_size=3)


def keras_like_mse(W1, b1, W2, b2, X, y):
    model = SequentialModel()
    model.add(Dense(4, W1, b1, activation="relu"))
    model.add(Dense(1, W2, b2))
    model.compile()
    return model.evaluate(X, y)


def _keras():
    r = rng(13)
    return (r.standard_normal((3, 4)) * 0.6, r.standard_normal(4) * 0.1,
            r.standard_normal((4, 1)) * 0.6, np.zeros(1) + 0.05, r.standard_normal((7, 3)),
            (r.random((7, 1)) > 0.5).astype(float))


# ---- 14. neural style transfer --------------------------------------------------------------

def compute_content_cost(a_C, a_G):
    m, n_H, n_W, n_C = a_G.shape
    a_C_unrolled = np.reshape(a_C, (m, n_H * n_W, n_C))
    a_G_unrolled = np.reshape(a_G, (m, n_H * n_W, n_C))
    return 1 / (4 * n_H * n_W * n_C) * np.sum(np.square(np.subtract(a_C_unrolled,
                                                                     a_G_unrolled)))


def gram_matrix(A):
    return np.dot(A, A.T)


def compute_layer_style_cost(a_S, a_G):
    m, n_H, n_W, n_C = a_G.shape
    a_S = np.transpose(np.reshape(a_S, (n_H * n_W, n_C)))
    a_G = np.transpose(np.reshape(a_G, (n_H * n_W, n_C)))
    GS = gram_matrix(a_S)
    GG = gram_matrix(a_G)
    return 1 / (4 * n_C ** 2 * (n_H * n_W) ** 2) * np.sum(np.square(np.subtract(GS, GG)))


STYLE_LAYERS = [('conv1_1', 0.5), ('conv2_1', 0.3), ('conv3_1', 0.2)]


def features(img, filters):
    out = {}
    x = img
    for (name, _), F in zip(STYLE_LAYERS, filters):
        x = np.tanh(np.einsum("mhwc,cd->mhwd", x, F))
        out[name] = x
    return out


def total_variation(img):
    return np.sum(np.abs(img[:, 1:, :, :] - img[:, :-1, :, :])) + \
        np.sum(np.abs(img[:, :, 1:, :] - img[:, :, :-1, :]))


def style_transfer(generated, content, style, filters, alpha=10, beta=40):
    fG = features(generated, filters)
    fC = features(content, filters)
    fS = features(style, filters)
    J_style = 0
    for layer_name, coeff in STYLE_LAYERS:
        J_style += coeff * compute_layer_style_cost(fS[layer_name], fG[layer_name])
    J_content = compute_content_cost(fC['conv2_1'], fG['conv2_1'])
    J = alpha * J_content + beta * J_style + 1e-3 * total_variation(generated)
    return J


def _style():
    r = rng(14)
    shape = (1, 4, 4, 3)
    filters = [r.standard_normal((3, 3)) * 0.6 for _ in STYLE_LAYERS]
    return r.standard_normal(shape), r.standard_normal(shape), r.standard_normal(shape), \
        filters


# ---- 15. van der Maaten t-SNE Q ---------------------------------------------------------------

def tsne_vdm(Y, P):
    n = Y.shape[0]
    sum_Y = np.sum(np.square(Y), 1)
    num = -2. * np.dot(Y, Y.T)
    num = 1. / (1. + np.add(np.add(num, sum_Y).T, sum_Y))
    num[range(n), range(n)] = 0.
    Q = num / np.sum(num)
    Q = np.maximum(Q, 1e-12)
    C = np.sum(P * np.log(P / Q))
    return C


def _tsne():
    r = rng(15)
    X = r.standard_normal((6, 4))
    D = np.sum((X[:, None] - X[None]) ** 2, -1)
    P = np.exp(-D)
    np.fill_diagonal(P, 0)
    P = P + P.T
    P = P / np.sum(P)
    P = np.maximum(P, 1e-12)
    return r.standard_normal((6, 2)), P


# ---- 16. cs224n skip-gram over a word2Ind dict ---------------------------------------------

def softmax_vec(x):
    x = x - np.max(x)
    return np.exp(x) / np.sum(np.exp(x))


def naiveSoftmaxLossAndGradient(centerWordVec, outsideWordIdx, outsideVectors, dataset=None):
    y_hat = softmax_vec(np.dot(outsideVectors, centerWordVec))
    loss = -np.log(y_hat[outsideWordIdx])
    gradCenterVec = np.dot(outsideVectors.T, y_hat) - outsideVectors[outsideWordIdx]
    return loss, gradCenterVec, None


def skipgram(currentCenterWord, windowSize, outsideWords, word2Ind,
             centerWordVectors, outsideVectors, dataset=None,
             word2vecLossAndGradient=naiveSoftmaxLossAndGradient):
    loss = 0.0
    gradCenterVecs = np.zeros(centerWordVectors.shape)
    centerWordIdx = word2Ind[currentCenterWord]
    centerWordVec = centerWordVectors[centerWordIdx]
    for word in outsideWords:
        outsideWordIdx = word2Ind[word]
        l, gc, _ = word2vecLossAndGradient(centerWordVec, outsideWordIdx, outsideVectors,
                                           dataset)
        loss += l
        gradCenterVecs[centerWordIdx] += gc
    return loss, gradCenterVecs


TOKENS = {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}


def skipgram_word2ind(wordVectors):
    N = wordVectors.shape[0]
    centerWordVectors = wordVectors[:int(N / 2), :]
    outsideVectors = wordVectors[int(N / 2):, :]
    batch = [("c", ["a", "b", "e", "b"]), ("a", ["d", "c"]), ("e", ["a", "a", "c"])]
    loss = 0.0
    for center, context in batch:
        c, _ = skipgram(center, 2, context, TOKENS, centerWordVectors, outsideVectors)
        loss += c / len(batch)
    return loss


def _sg():
    return (rng(16).standard_normal((10, 3)) * 0.5,)


# ---- 17. Luong attention with teacher forcing ------------------------------------------------

def luong_teacher_forcing(enc_states, E, W_a, W_c, W_s, W_dec, U_dec, targets):
    B, S, Hd = enc_states.shape
    T = targets.shape[1]
    h = enc_states[:, -1, :]
    outputs = []
    prev = np.zeros(B, dtype=int)
    for t in range(T):
        emb = E[prev]
        h = np.tanh(emb @ W_dec + h @ U_dec)
        scores = np.einsum("bsh,bh->bs", enc_states @ W_a, h)
        scores = scores - scores.max(axis=1, keepdims=True)
        align = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
        context = np.einsum("bs,bsh->bh", align, enc_states)
        h_tilde = np.tanh(np.concatenate([context, h], axis=1) @ W_c)
        outputs.append(h_tilde @ W_s)
        prev = targets[:, t]
    logits = np.stack(outputs, axis=1)
    logits = logits - logits.max(axis=-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    return -np.mean(np.take_along_axis(logp, targets[..., None], axis=-1))


def _luong():
    r = rng(17)
    B, S, Hd, V, D = 2, 3, 4, 5, 3
    return (r.standard_normal((B, S, Hd)), r.standard_normal((V, D)) * 0.5,
            r.standard_normal((Hd, Hd)) * 0.4, r.standard_normal((2 * Hd, Hd)) * 0.4,
            r.standard_normal((Hd, V)) * 0.4, r.standard_normal((D, Hd)) * 0.4,
            r.standard_normal((Hd, Hd)) * 0.4, np.array([[1, 2, 4], [3, 0, 2]]))


# ---- 18. RBM free energy, CD loss with fixed negative samples --------------------------------

def free_energy(v, W, vbias, hbias):
    wx_b = np.dot(v, W) + hbias
    vbias_term = np.dot(v, vbias)
    hidden_term = np.sum(np.logaddexp(0, wx_b), axis=1)
    return -hidden_term - vbias_term


def rbm_cd_loss(W, vbias, hbias, v_data, v_model):
    return np.mean(free_energy(v_data, W, vbias, hbias)) - \
        np.mean(free_energy(v_model, W, vbias, hbias))


def _rbm():
    r = rng(18)
    return (r.standard_normal((6, 4)) * 0.5, r.standard_normal(6) * 0.1,
            r.standard_normal(4) * 0.1, (r.random((5, 6)) > 0.5).astype(float),
            (r.random((5, 6)) > 0.5).astype(float))


# ---- 19. Markowitz / Sharpe with np.cov of returns --------------------------------------------

def portfolio_objective(logits, returns, risk_aversion=3.0):
    w = np.exp(logits) / np.sum(np.exp(logits))
    mu = np.mean(returns, axis=0)
    Sigma = np.cov(returns, rowvar=False)
    port_return = np.dot(w, mu)
    port_var = np.dot(w.T, np.dot(Sigma, w))
    return -(port_return - 0.5 * risk_aversion * port_var)


def neg_sharpe(weights, returns, rf=0.01):
    weights = weights / np.sum(np.abs(weights))
    mean_returns = returns.mean(axis=0) * 252
    cov_matrix = np.cov(returns.T) * 252
    p_ret = np.sum(mean_returns * weights)
    p_vol = np.sqrt(np.dot(weights.T, np.dot(cov_matrix, weights)))
    return -(p_ret - rf) / p_vol


def _port():
    r = rng(19)
    return r.standard_normal(4) * 0.3, r.standard_normal((20, 4)) * 0.02 + 0.001


def _sharpe():
    r = rng(20)
    return r.random(4) + 0.2, r.standard_normal((20, 4)) * 0.02 + 0.002


# ---- 20. logistic growth: closed form and Euler into a preallocated array ---------------------

def logistic(t, P0, r, K):
    return K / (1 + ((K - P0) / P0) * np.exp(-r * t))


def logistic_fit_sse(theta, t, data):
    P0, r, K = theta
    model = logistic(t, P0, r, K)
    return np.sum((model - data) ** 2)


def logistic_euler_sse(theta, t, data):
    P0, r, K = theta[0], theta[1], theta[2]
    P = np.zeros_like(t)
    P[0] = P0
    for i in range(1, len(t)):
        dt = t[i] - t[i - 1]
        P[i] = P[i - 1] + dt * r * P[i - 1] * (1 - P[i - 1] / K)
    return np.sum((P - data) ** 2) / len(t)


def _logi():
    t = np.linspace(0, 10, 12)
    data = logistic(t, 2.0, 0.8, 50.0) + rng(21).standard_normal(12)
    return np.array([2.5, 0.7, 45.0]), t, data


# ---- 21. Lotka-Volterra by a hand-written RK4 -----------------------------------------------

def lotka_volterra(state, t, params):
    x, y = state
    a, b, c, d = params
    dxdt = a * x - b * x * y
    dydt = d * x * y - c * y
    return np.array([dxdt, dydt])


def rk4(f, y0, t, args=()):
    n = len(t)
    y = np.zeros((n, len(y0)))
    y[0] = y0
    for i in range(n - 1):
        h = t[i + 1] - t[i]
        k1 = f(y[i], t[i], *args)
        k2 = f(y[i] + k1 * h / 2., t[i] + h / 2., *args)
        k3 = f(y[i] + k2 * h / 2., t[i] + h / 2., *args)
        k4 = f(y[i] + k3 * h, t[i] + h, *args)
        y[i + 1] = y[i] + (h / 6.) * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def lotka_volterra_fit(params, y0, t, observed):
    sol = rk4(lotka_volterra, y0, t, args=(params,))
    return np.mean((sol - observed) ** 2)


def _lv():
    t = np.linspace(0, 2, 9)
    true = rk4(lotka_volterra, np.array([1.0, 0.5]), t, args=(np.array([1.1, 0.4, 0.4, 0.1]),))
    return (np.array([1.0, 0.5, 0.5, 0.2]), np.array([1.0, 0.5]), t,
            true + 0.01 * rng(22).standard_normal(true.shape))


# ---- 22. mean-field Ising energy with np.roll ---------------------------------------------

def ising_free_energy(field, J=1.0, h=0.1, beta=0.5):
    m = np.tanh(field)
    E = -J * np.sum(m * (np.roll(m, 1, axis=0) + np.roll(m, 1, axis=1))) - h * np.sum(m)
    p = (1 + m) / 2
    S = -np.sum(p * np.log(p) + (1 - p) * np.log(1 - p))
    return E - S / beta


def _ising():
    return (rng(23).standard_normal((4, 5)) * 0.5,)


# ---- 23. Bishop's Bayesian linear regression log evidence ---------------------------------

def log_evidence(log_alpha, log_beta, Phi, t):
    alpha, beta = np.exp(log_alpha), np.exp(log_beta)
    N, M = Phi.shape
    A = alpha * np.eye(M) + beta * Phi.T.dot(Phi)
    m_N = beta * np.linalg.solve(A, Phi.T.dot(t))
    E_mN = beta / 2 * np.sum((t - Phi.dot(m_N)) ** 2) + alpha / 2 * m_N.dot(m_N)
    sign, logdet = np.linalg.slogdet(A)
    return -(M / 2 * np.log(alpha) + N / 2 * np.log(beta) - E_mN - 0.5 * logdet
             - N / 2 * np.log(2 * np.pi))


def _bayes():
    r = rng(24)
    x = np.linspace(-1, 1, 10)
    Phi = np.vander(x, 4, increasing=True)
    return 0.3, 1.2, Phi, np.sin(2 * x) + 0.1 * r.standard_normal(10)


# ---- 24. Tukey biweight with a MAD scale ----------------------------------------------------

def tukey_biweight(r, c=4.685):
    return np.where(np.abs(r) <= c, c ** 2 / 6 * (1 - (1 - (r / c) ** 2) ** 3), c ** 2 / 6)


def robust_regression(beta, X, y):
    resid = y - X @ beta
    scale = np.median(np.abs(resid - np.median(resid))) / 0.6745
    return np.sum(tukey_biweight(resid / scale))


def _tukey():
    r = rng(25)
    X = np.column_stack([np.ones(15), r.standard_normal(15)])
    y = X @ np.array([1.0, 2.0]) + 0.3 * r.standard_normal(15)
    y[3] += 8
    return np.array([0.8, 1.7]), X, y


# ---- 25. ISTA Lasso with a step from the spectral norm -------------------------------------

def soft_threshold(x, lam):
    return np.sign(x) * np.maximum(np.abs(x) - lam, 0.)


def ista_lasso(X, y, lam=0.1, n_iter=15):
    L = np.linalg.norm(X, 2) ** 2
    step = 1.0 / L
    w = np.zeros(X.shape[1])
    for _ in range(n_iter):
        grad = X.T @ (X @ w - y)
        w = soft_threshold(w - step * grad, step * lam)
    return 0.5 * np.sum((X @ w - y) ** 2) + lam * np.linalg.norm(w, 1)


def _ista():
    r = rng(26)
    return r.standard_normal((8, 4)), r.standard_normal(8)


# ---- 26. k-means inertia after argmin ------------------------------------------------------

def kmeans_inertia(centroids, X):
    distances = np.sqrt(((X - centroids[:, np.newaxis]) ** 2).sum(axis=2))
    labels = np.argmin(distances, axis=0)
    inertia = 0.0
    for k in range(centroids.shape[0]):
        members = X[labels == k]
        if len(members):
            inertia += np.sum((members - centroids[k]) ** 2)
    return inertia


def _km():
    r = rng(27)
    return r.standard_normal((3, 2)), r.standard_normal((12, 2))


# ---- 27. scipy.stats.multivariate_normal.logpdf ----------------------------------------------

def gaussian_mixture_nll(mus, log_sigmas, logits, X):
    K = mus.shape[0]
    weights = np.exp(logits) / np.exp(logits).sum()
    ll = np.zeros((X.shape[0], K))
    for k in range(K):
        cov = np.diag(np.exp(2 * log_sigmas[k]))
        ll[:, k] = np.log(weights[k]) + scipy.stats.multivariate_normal.logpdf(
            X, mean=mus[k], cov=cov)
    mx = ll.max(axis=1, keepdims=True)
    return -np.sum(mx[:, 0] + np.log(np.exp(ll - mx).sum(axis=1)))


def _gmm():
    r = rng(28)
    return (r.standard_normal((2, 2)), r.standard_normal((2, 2)) * 0.2,
            r.standard_normal(2) * 0.3, r.standard_normal((7, 2)))


def gaussian_norm_logpdf(mu, log_sigma, x):
    return -np.sum(scipy.stats.norm.logpdf(x, loc=mu, scale=np.exp(log_sigma)))


def _normlp():
    r = rng(29)
    return 0.3, -0.2, r.standard_normal(9)


# ---- 28. CS231n lstm_step_forward slicing a[:, :H] ... and h[:, t, :] ---------------------

def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    H = prev_h.shape[1]
    a = x.dot(Wx) + prev_h.dot(Wh) + b
    ai, af, ao, ag = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
    i = 1 / (1 + np.exp(-ai))
    f = 1 / (1 + np.exp(-af))
    o = 1 / (1 + np.exp(-ao))
    g = np.tanh(ag)
    next_c = f * prev_c + i * g
    next_h = o * np.tanh(next_c)
    cache = (x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c)
    return next_h, next_c, cache


def lstm_forward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    c = np.zeros_like(h0)
    prev_h = h0
    cache = {}
    for t in range(T):
        prev_h, c, cache[t] = lstm_step_forward(x[:, t, :], prev_h, c, Wx, Wh, b)
        h[:, t, :] = prev_h
    return h, cache


def cs231n_lstm(Wx, Wh, b, x, h0, w_out, y, mask):
    h, _ = lstm_forward(x, h0, Wx, Wh, b)
    scores, _ = temporal_affine_forward(h, w_out, np.zeros(w_out.shape[1]))
    return temporal_softmax_loss(scores, y, mask)


def _cs_lstm():
    r = rng(30)
    N, T, D, H, V = 2, 3, 3, 2, 4
    return (r.standard_normal((D, 4 * H)) * 0.4, r.standard_normal((H, 4 * H)) * 0.4,
            r.standard_normal(4 * H) * 0.1, r.standard_normal((N, T, D)),
            r.standard_normal((N, H)) * 0.2, r.standard_normal((H, V)),
            r.integers(0, V, (N, T)), np.array([[1, 1, 0], [1, 1, 1]], dtype=bool))


# ---- 29. deeplearning.ai initialize-then-forward with layer_dims and str(l) keys -----------

def two_layer_model_cost(parameters, X, Y, activation_hidden="relu"):
    m = X.shape[1]
    W1 = parameters["W1"]
    b1 = parameters["b1"]
    W2 = parameters["W2"]
    b2 = parameters["b2"]
    A1, cache1 = linear_activation_forward(X, W1, b1, activation_hidden)
    A2, cache2 = linear_activation_forward(A1, W2, b2, "sigmoid")
    logprobs = np.multiply(np.log(A2), Y) + np.multiply((1 - Y), np.log(1 - A2))
    cost = - np.sum(logprobs) / m
    cost = float(np.squeeze(cost))
    assert isinstance(cost, float)
    return cost


def _two():
    r = rng(31)
    X = r.standard_normal((3, 6))
    Y = (r.random((1, 6)) > 0.5).astype(float)
    return _dims_params([3, 4, 1], 31), X, Y


# ---- 30. batched Gram style loss with einsum and a weights dict ----------------------------

def style_loss_einsum(gen, style, style_weights):
    loss = 0.0
    for name, weight in style_weights.items():
        g = gen[name]
        s = style[name]
        b, c, h, w = g.shape
        G = np.einsum("bchw,bdhw->bcd", g, g) / (c * h * w)
        S = np.einsum("bchw,bdhw->bcd", s, s) / (c * h * w)
        loss += weight * np.mean((G - S) ** 2)
    return loss


def _sle():
    r = rng(32)
    gen = {"relu1": r.standard_normal((1, 2, 3, 3)), "relu2": r.standard_normal((1, 3, 2, 2))}
    style = {"relu1": r.standard_normal((1, 2, 3, 3)), "relu2": r.standard_normal((1, 3, 2, 2))}
    return gen, style, {"relu1": 1.0, "relu2": 0.5}


# ---- 31. Cauchy / log-cosh robust losses picked by name -----------------------------------

def robust_loss(r, kind="cauchy", c=1.0):
    if kind == "cauchy":
        return c ** 2 / 2 * np.log1p((r / c) ** 2)
    elif kind == "logcosh":
        return np.log(np.cosh(r))
    elif kind == "pseudo_huber":
        return c ** 2 * (np.sqrt(1 + (r / c) ** 2) - 1)
    raise ValueError(kind)


def robust_loss_names(w, X, y):
    r = X @ w - y
    total = 0.0
    for kind in ("cauchy", "logcosh", "pseudo_huber"):
        total = total + np.mean(robust_loss(r, kind=kind))
    return total


def _rl():
    r = rng(33)
    return r.standard_normal(3), r.standard_normal((9, 3)), r.standard_normal(9)


# ---- 32. Hopfield / Boltzmann energy with the diagonal zeroed ------------------------------

def hopfield_energy(W, s, theta):
    W = (W + W.T) / 2
    W = W - np.diag(np.diag(W))
    return -0.5 * s @ W @ s + theta @ s


def hopfield_batch(W, S, theta):
    return np.mean([hopfield_energy(W, s, theta) for s in np.tanh(S)])


def _hop():
    r = rng(34)
    return r.standard_normal((5, 5)), r.standard_normal((4, 5)), r.standard_normal(5) * 0.1


# ---- 33. CS231n affine_relu with nested cache tuples unpacked ------------------------------

def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    cache = (x, w, b)
    return out, cache


def affine_relu_forward(x, w, b):
    a, fc_cache = affine_forward(x, w, b)
    out = np.maximum(0, a)
    cache = (fc_cache, a)
    return out, cache


def affine_bn_relu_forward(x, w, b, gamma, beta, bn_param):
    a, fc_cache = affine_forward(x, w, b)
    an, bn_cache = batchnorm_forward(a, gamma, beta, bn_param)
    out = np.maximum(0, an)
    return out, (fc_cache, bn_cache, an)


def fc_bn_net(params, X, y, reg=0.01):
    bn_params = [{'mode': 'train'} for _ in range(2)]
    h = X
    caches = {}
    for i in range(2):
        h, caches[i] = affine_bn_relu_forward(h, params['W%d' % (i + 1)],
                                              params['b%d' % (i + 1)],
                                              params['gamma%d' % (i + 1)],
                                              params['beta%d' % (i + 1)], bn_params[i])
    scores, caches[2] = affine_forward(h, params['W3'], params['b3'])
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    loss = -np.sum(log_probs[np.arange(X.shape[0]), y]) / X.shape[0]
    for i in range(3):
        W = params['W' + str(i + 1)]
        loss += 0.5 * reg * np.sum(W * W)
    return loss


def _fcbn():
    r = rng(35)
    dims = [6, 5, 4, 3]
    params = {}
    for i in range(3):
        params['W%d' % (i + 1)] = r.standard_normal((dims[i], dims[i + 1])) * 0.5
        params['b%d' % (i + 1)] = r.standard_normal(dims[i + 1]) * 0.1
        if i < 2:
            params['gamma%d' % (i + 1)] = 1 + 0.1 * r.standard_normal(dims[i + 1])
            params['beta%d' % (i + 1)] = 0.1 * r.standard_normal(dims[i + 1])
    return params, r.standard_normal((5, 2, 3)), np.array([0, 2, 1, 1, 2])


# ---- 34. Poisson-process / survival log-likelihood with cumulative hazards ------------------

def weibull_loglik(log_k, log_lam, times, events):
    k, lam = np.exp(log_k), np.exp(log_lam)
    log_h = np.log(k) - np.log(lam) + (k - 1) * (np.log(times) - np.log(lam))
    H = (times / lam) ** k
    return -np.sum(events * log_h - H)


def _weib():
    r = rng(36)
    return 0.2, 0.5, r.weibull(1.5, 12) * 2 + 0.05, (r.random(12) > 0.3).astype(float)


# ---- 35. Word2Vec negative sampling with a unigram table lookup loop -----------------------

def neg_sampling_loss(W_in, W_out, pairs, negatives):
    loss = 0.0
    for (center, context), negs in zip(pairs, negatives):
        v = W_in[center]
        u_pos = W_out[context]
        loss -= np.log(1 / (1 + np.exp(-np.dot(u_pos, v))))
        for neg in negs:
            loss -= np.log(1 / (1 + np.exp(np.dot(W_out[neg], v))))
    return loss / len(pairs)


def _neg():
    r = rng(37)
    pairs = [(0, 1), (2, 3), (1, 4)]
    negatives = [[2, 3], [0, 4], [3, 2]]
    return r.standard_normal((5, 3)) * 0.5, r.standard_normal((5, 3)) * 0.5, pairs, negatives


# ---- 36. Ising-like energy-based sampler: Langevin steps unrolled --------------------------

def langevin_energy(x0, W, noise, step=0.05):
    def energy(x):
        return 0.5 * np.sum(x ** 2) - np.sum(np.log(np.cosh(x @ W)))

    def grad_energy(x):
        return x - np.tanh(x @ W) @ W.T

    x = x0
    for k in range(noise.shape[0]):
        x = x - step * grad_energy(x) + np.sqrt(2 * step) * noise[k]
    return energy(x)


def _lang():
    r = rng(38)
    return r.standard_normal(3), r.standard_normal((3, 4)) * 0.5, r.standard_normal((4, 3)) * 0.1


# ---- 37. in-place SGD step on loop variables over zip(params, grads), then the loss --------

def _mlp_loss(params, X, y):
    W1, b1, W2, b2 = params
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ W2 + b2 - y) ** 2)


def unrolled_sgd_inplace(W1, b1, W2, b2, X, y, lr=0.1):
    params = [W1.copy(), b1.copy(), W2.copy(), b2.copy()]
    grads = [0.1 * np.sign(W1), 0.2 * b1, 0.05 * W2, 0.0 * b2]
    for param, grad in zip(params, grads):
        param -= lr * grad
    return _mlp_loss(params, X, y)


def _sgd():
    r = rng(39)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal(4) * 0.1,
            r.standard_normal((4, 1)) * 0.5, np.zeros(1), r.standard_normal((6, 3)),
            r.standard_normal((6, 1)))


# ---- 38. min-char-rnn's np.clip(..., out=) over a list of arrays ---------------------------

def clip_out_list(Wxh, Whh, xs):
    Ws = [Wxh.copy(), Whh.copy()]
    for w in Ws:
        np.clip(w, -0.5, 0.5, out=w)
    h = np.zeros(Whh.shape[0])
    loss = 0.0
    for x in xs:
        h = np.tanh(Ws[0] @ x + Ws[1] @ h)
        loss += np.sum(h ** 2)
    return loss


def _clipout():
    r = rng(40)
    return r.standard_normal((4, 3)) * 0.4, r.standard_normal((4, 4)) * 0.4, \
        r.standard_normal((3, 3))


# ---- 39. gradient-norm clipping inside the loss ------------------------------------------

def clipped_update_loss(w, X, y, max_norm=0.5, lr=0.3):
    r = X @ w - y
    g = X.T @ r / len(y)
    norm = np.linalg.norm(g)
    if norm > max_norm:
        g = g * max_norm / norm
    w_new = w - lr * g
    return 0.5 * np.mean((X @ w_new - y) ** 2)


def _clipnorm():
    r = rng(41)
    return r.standard_normal(3), r.standard_normal((8, 3)), r.standard_normal(8) * 3


# ---- 40. np.pad edge/reflect in a 1-D conv; getattr(np, name) activation ----------------

def conv1d_pad_modes(x, k, act="tanh"):
    f = getattr(np, act)
    out = 0.0
    for mode in ("edge", "reflect", "constant"):
        xp = np.pad(x, (1, 1), mode=mode)
        y = np.array([np.dot(xp[i:i + 3], k) for i in range(len(x))])
        out = out + np.sum(f(y) ** 2)
    return out


def _c1d():
    r = rng(42)
    return r.standard_normal(7), r.standard_normal(3)


# ---- 41. seq2seq decoder with hidden states in a dict keyed by t, np.vstack --------------

def dict_states_decoder(Wh, Wx, Wy, xs, h0):
    hs = {}
    hs[-1] = np.copy(h0)
    ys = []
    for t in range(len(xs)):
        hs[t] = np.tanh(Wh @ hs[t - 1] + Wx @ xs[t])
        hs[t] = np.clip(hs[t], -0.9, 0.9)
        ys.append(Wy @ hs[t])
    Y = np.vstack(ys)
    return np.sum(np.log(np.sum(np.exp(Y), axis=1)) - Y[:, 0])


def _dsd():
    r = rng(43)
    return (r.standard_normal((4, 4)) * 0.5, r.standard_normal((4, 2)) * 0.5,
            r.standard_normal((3, 4)) * 0.5, r.standard_normal((5, 2)), r.standard_normal(4) * 0.2)


# ---- 42. weights[:] = ... slice assignment of a copy; masked causal attention -inf ----------

def slice_assign_attention(Wq, Wk, x):
    W = np.empty_like(Wq)
    W[:] = Wq
    W[:, 0] *= 0.5
    q = x @ W
    k = x @ Wk
    T = x.shape[0]
    scores = q @ k.T / np.sqrt(q.shape[1])
    mask = np.tril(np.ones((T, T))) == 0
    scores = np.where(mask, -np.inf, scores)
    scores -= scores.max(axis=1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=1, keepdims=True)
    return np.sum((w @ x) ** 2)


def _saa():
    r = rng(44)
    return r.standard_normal((3, 3)), r.standard_normal((3, 3)), r.standard_normal((4, 3))


# ---- 43. a model class whose loss is a property -------------------------------------------

class Regression:
    def __init__(self, w, X, y, alpha=0.1):
        self.w, self.X, self.y, self.alpha = w, X, y, alpha

    @property
    def residuals(self):
        return self.X @ self.w - self.y

    @property
    def loss(self):
        return 0.5 * np.mean(self.residuals ** 2) + self.alpha * np.sum(np.abs(self.w))


def property_loss(w, X, y):
    return Regression(w, X, y).loss


def _ploss():
    r = rng(45)
    return r.standard_normal(3), r.standard_normal((7, 3)), r.standard_normal(7)


# ---- 44. np.random.binomial dropout mask made in the loss under a seed --------------------

def binomial_dropout(W, X, keep=0.7):
    rs = np.random.RandomState(5)
    h = np.maximum(0, X @ W)
    mask = rs.binomial(1, keep, size=h.shape) / keep
    return np.sum((h * mask) ** 2)


def _bdrop():
    r = rng(46)
    return r.standard_normal((3, 5)), r.standard_normal((4, 3))


PROGRAMS = [
    Probe("wild_repos7.l_layer_model", l_layer_model, _llayer, "parameters"),
    Probe("wild_repos7.l2_lambd_model", l2_lambd_model, _l2, "parameters"),
    Probe("wild_repos7.dropout_masks_passed", dropout_masks_passed, _dropout, "parameters"),
    Probe("wild_repos7.logistic_propagate", logistic_propagate, _prop, ("w", "b"), fuse=True),
    Probe("wild_repos7.gradcheck_vectors", gradcheck_vectors, _gc, "parameters"),
    Probe("wild_repos7.minibatch_epoch_cost", minibatch_epoch_cost, _mbe, "parameters"),
    Probe("wild_repos7.dlai_rnn_forward", dlai_rnn_forward, _dlai_rnn, "parameters"),
    Probe("wild_repos7.lstm_concat_forward", lstm_concat_forward, _dlai_lstm,
          ("parameters", "a0")),
    Probe("wild_repos7.conv_pad_tuples", conv_pad_tuples, _conv, ("x", "w", "b")),
    Probe("wild_repos7.captioning_model", captioning_model, _cap, ("params", "features")),
    Probe("wild_repos7.layernorm_by_transpose", layernorm_by_transpose, _ln,
          ("x", "gamma", "beta")),
    Probe("wild_repos7.case_study_net", case_study_net, _case, ("W", "b", "W2", "b2"),
          fuse=True),
    Probe("wild_repos7.keras_like_build", keras_like_build, _keras, ("W1", "b1", "W2", "b2")),
    Probe("wild_repos7.keras_like_mse", keras_like_mse, _keras, ("W1", "b1", "W2", "b2")),
    Probe("wild_repos7.style_transfer", style_transfer, _style, ("generated", "filters")),
    Probe("wild_repos7.tsne_vdm", tsne_vdm, _tsne, "Y"),
    Probe("wild_repos7.skipgram_word2ind", skipgram_word2ind, _sg, "wordVectors"),
    Probe("wild_repos7.luong_teacher_forcing", luong_teacher_forcing, _luong,
          ("enc_states", "E", "W_a", "W_c")),
    Probe("wild_repos7.rbm_cd_loss", rbm_cd_loss, _rbm, ("W", "vbias", "hbias"), fuse=True),
    Probe("wild_repos7.portfolio_objective", portfolio_objective, _port, ("logits", "returns")),
    Probe("wild_repos7.neg_sharpe", neg_sharpe, _sharpe, ("weights", "returns")),
    Probe("wild_repos7.logistic_fit_sse", logistic_fit_sse, _logi, "theta", fuse=True),
    Probe("wild_repos7.logistic_euler_sse", logistic_euler_sse, _logi, "theta"),
    Probe("wild_repos7.lotka_volterra_fit", lotka_volterra_fit, _lv, ("params", "y0")),
    Probe("wild_repos7.ising_free_energy", ising_free_energy, _ising, "field", fuse=True),
    Probe("wild_repos7.log_evidence", log_evidence, _bayes, ("log_alpha", "log_beta", "t")),
    Probe("wild_repos7.robust_regression", robust_regression, _tukey, "beta"),
    Probe("wild_repos7.ista_lasso", ista_lasso, _ista, ("X", "y")),
    Probe("wild_repos7.kmeans_inertia", kmeans_inertia, _km, "centroids"),
    Probe("wild_repos7.gaussian_mixture_nll", gaussian_mixture_nll, _gmm,
          ("mus", "log_sigmas", "logits")),
    Probe("wild_repos7.gaussian_norm_logpdf", gaussian_norm_logpdf, _normlp,
          ("mu", "log_sigma")),
    Probe("wild_repos7.cs231n_lstm", cs231n_lstm, _cs_lstm, ("Wx", "Wh", "b", "x")),
    Probe("wild_repos7.two_layer_model_cost", two_layer_model_cost, _two, "parameters"),
    Probe("wild_repos7.style_loss_einsum", style_loss_einsum, _sle, "gen"),
    Probe("wild_repos7.robust_loss_names", robust_loss_names, _rl, "w", fuse=True),
    Probe("wild_repos7.hopfield_batch", hopfield_batch, _hop, ("W", "S", "theta")),
    # (b1, b2: a bias before batchnorm has a zero gradient, which srcad's rounding, ~1e-17,
    # against the differences' 0 reads as 2e-5 relative; every other entry is within 5e-8)
    Probe("wild_repos7.fc_bn_net", fc_bn_net, _fcbn, "params", tol=1e-4),
    Probe("wild_repos7.weibull_loglik", weibull_loglik, _weib, ("log_k", "log_lam")),
    Probe("wild_repos7.neg_sampling_loss", neg_sampling_loss, _neg, ("W_in", "W_out")),
    Probe("wild_repos7.langevin_energy", langevin_energy, _lang, ("x0", "W")),
    Probe("wild_repos7.unrolled_sgd_inplace", unrolled_sgd_inplace, _sgd, ("W1", "b1", "W2")),
    Probe("wild_repos7.clip_out_list", clip_out_list, _clipout, ("Wxh", "Whh")),
    Probe("wild_repos7.clipped_update_loss", clipped_update_loss, _clipnorm, "w"),
    Probe("wild_repos7.conv1d_pad_modes", conv1d_pad_modes, _c1d, ("x", "k")),
    Probe("wild_repos7.dict_states_decoder", dict_states_decoder, _dsd, ("Wh", "Wx", "Wy", "h0")),
    Probe("wild_repos7.slice_assign_attention", slice_assign_attention, _saa, ("Wq", "Wk", "x")),
    Probe("wild_repos7.property_loss", property_loss, _ploss, "w"),
    Probe("wild_repos7.binomial_dropout", binomial_dropout, _bdrop, "W", fuse=True),
]
