"""From-scratch recurrent nets: LSTM with np.split gates and column-vector states stacked
by np.vstack, batch-major LSTM slicing A[:, :H], GRU with lists of states, char-RNN with
one-hot inputs built in the loop, a bidirectional RNN walking reversed(range(T)), clipping
of the hidden state, seq2seq attention with einsum."""

import numpy as np

from . import Probe, rng
from .helpers import sigmoid, softmax


def lstm_split_column(Wf, bf, Wy, xs, y):
    H = Wf.shape[0] // 4
    h = np.zeros((H, 1))
    c = np.zeros((H, 1))
    for t in range(len(xs)):
        concat = np.vstack((h, xs[t]))
        z = np.dot(Wf, concat) + bf
        f, i, g, o = np.split(z, 4, axis=0)
        f, i, o = sigmoid(f), sigmoid(i), sigmoid(o)
        g = np.tanh(g)
        c = f * c + i * g
        h = o * np.tanh(c)
    out = Wy @ h
    return 0.5 * np.sum((out - y) ** 2)


class LSTMCell:
    def __init__(self, Wx, Wh, b):
        self.params = [Wx, Wh, b]
        self.cache = None

    def forward(self, x, h_prev, c_prev):
        Wx, Wh, b = self.params
        N, H = h_prev.shape
        A = np.dot(x, Wx) + np.dot(h_prev, Wh) + b
        f = A[:, :H]
        g = A[:, H:2 * H]
        i = A[:, 2 * H:3 * H]
        o = A[:, 3 * H:]
        f = sigmoid(f)
        g = np.tanh(g)
        i = sigmoid(i)
        o = sigmoid(o)
        c_next = f * c_prev + g * i
        h_next = o * np.tanh(c_next)
        self.cache = (x, h_prev, c_prev, i, f, g, o, c_next)
        return h_next, c_next


def lstm_batch_major(Wx, Wh, b, xs, target):
    N, T, D = xs.shape
    H = Wh.shape[0]
    cell = LSTMCell(Wx, Wh, b)
    h = np.zeros((N, H))
    c = np.zeros((N, H))
    hs = np.empty((N, T, H), dtype="f8")
    for t in range(T):
        h, c = cell.forward(xs[:, t, :], h, c)
        hs[:, t, :] = h
    return np.mean((hs - target) ** 2)


def gru_lists(Wz, Uz, Wr, Ur, Wh, Uh, xs, y):
    h = np.zeros(Uz.shape[0])
    hs = [h]
    for x in xs:
        z = sigmoid(Wz @ x + Uz @ hs[-1])
        r = sigmoid(Wr @ x + Ur @ hs[-1])
        h_tilde = np.tanh(Wh @ x + Uh @ (r * hs[-1]))
        h = (1 - z) * hs[-1] + z * h_tilde
        hs.append(h)
    H = np.array(hs[1:])
    return np.sum((H.sum(axis=0) - y) ** 2)


def char_rnn(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    vocab_size = Wxh.shape[1]
    for t in range(len(inputs)):
        xs[t] = np.zeros((vocab_size, 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
        ys[t] = np.dot(Why, hs[t]) + by
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    return loss


def bidirectional(Wf, Wb, U, V, xs, y):
    T = xs.shape[0]
    H = Wf.shape[0]
    hf = [None] * T
    hb = [None] * T
    h = np.zeros(H)
    for t in range(T):
        h = np.tanh(Wf @ h + U @ xs[t])
        hf[t] = h
    h = np.zeros(H)
    for t in reversed(range(T)):
        h = np.tanh(Wb @ h + U @ xs[t])
        hb[t] = h
    feats = np.concatenate([np.stack(hf), np.stack(hb)[::-1]], axis=1)
    return np.mean((feats @ V - y) ** 2)


def clipped_state(W, U, xs, y):
    h = np.zeros(W.shape[0])
    for x_t in xs:
        h = W @ h + U @ x_t
        h = np.clip(h, -1.0, 1.0)
        h = np.maximum(h, -0.5)
    return np.sum((h - y) ** 2)


def seq2seq_attention(E, Wd, Wa, enc, dec_in, y):
    hs = np.tanh(enc @ E)                      # (T, H)
    s = np.zeros(Wd.shape[1])
    loss = 0.0
    for t, x in enumerate(dec_in):
        scores = np.einsum("th,h->t", hs @ Wa, s)
        a = softmax(scores)
        ctx = np.einsum("t,th->h", a, hs)
        s = np.tanh(x @ Wd + ctx)
        loss += np.sum((s - y[t]) ** 2)
    return loss / len(dec_in)


def _lstm_col():
    r = rng(30)
    H, D, T = 3, 2, 4
    return (r.standard_normal((4 * H, H + D)) * 0.5, r.standard_normal((4 * H, 1)) * 0.1,
            r.standard_normal((2, H)), [r.standard_normal((D, 1)) for _ in range(T)],
            r.standard_normal((2, 1)))


def _lstm_b():
    r = rng(31)
    N, T, D, H = 2, 3, 3, 2
    return (r.standard_normal((D, 4 * H)) * 0.5, r.standard_normal((H, 4 * H)) * 0.5,
            r.standard_normal(4 * H) * 0.1, r.standard_normal((N, T, D)),
            r.standard_normal((N, T, H)))


def _gru():
    r = rng(32)
    H, D, T = 3, 2, 4
    m = [r.standard_normal(s) * 0.5 for s in [(H, D), (H, H)] * 3]
    return (*m, r.standard_normal((T, D)), r.standard_normal(H))


def _char():
    r = rng(33)
    V, H, T = 5, 4, 6
    return (r.standard_normal((H, V)) * 0.1, r.standard_normal((H, H)) * 0.1,
            r.standard_normal((V, H)) * 0.1, np.zeros((H, 1)), np.zeros((V, 1)),
            [int(i) for i in r.integers(0, V, T)], [int(i) for i in r.integers(0, V, T)],
            r.standard_normal((H, 1)) * 0.1)


def _bi():
    r = rng(34)
    H, D, T = 3, 2, 4
    return (r.standard_normal((H, H)) * 0.5, r.standard_normal((H, H)) * 0.5,
            r.standard_normal((H, D)), r.standard_normal((2 * H, 2)),
            r.standard_normal((T, D)), r.standard_normal((T, 2)))


def _clip():
    r = rng(35)
    return (r.standard_normal((3, 3)) * 0.4, r.standard_normal((3, 2)) * 0.4,
            r.standard_normal((4, 2)), r.standard_normal(3))


def _s2s():
    r = rng(36)
    T, D, H, Td = 4, 3, 3, 3
    return (r.standard_normal((D, H)), r.standard_normal((D, H)), r.standard_normal((H, H)),
            r.standard_normal((T, D)), r.standard_normal((Td, D)), r.standard_normal((Td, H)))


PROGRAMS = [
    Probe("recurrent.lstm_split_column", lstm_split_column, _lstm_col, ("Wf", "bf", "Wy"), True),
    Probe("recurrent.lstm_batch_major", lstm_batch_major, _lstm_b, ("Wx", "Wh", "b")),
    Probe("recurrent.gru_lists", gru_lists, _gru, ("Wz", "Uz", "Wr", "Ur", "Wh", "Uh")),
    Probe("recurrent.char_rnn", char_rnn, _char, ("Wxh", "Whh", "Why", "bh", "by", "hprev")),
    Probe("recurrent.bidirectional", bidirectional, _bi, ("Wf", "Wb", "U", "V")),
    Probe("recurrent.clipped_state", clipped_state, _clip, ("W", "U")),
    Probe("recurrent.seq2seq_attention", seq2seq_attention, _s2s, ("E", "Wd", "Wa"), True),
]
