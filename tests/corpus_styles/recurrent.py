"""Recurrent nets in the styles people write them: min-char-rnn's dicts keyed by t with
``hs[-1] = np.copy(hprev)`` and one-hot inputs built in the loop; lists with
``hs.append(h)``; cs231n's step functions returning caches and a preallocated ``h[:, t, :]``;
LSTM with ``np.vstack`` of [h; x]; GRU; a cell object whose ``self.h`` changes each step; a
stacked RNN keyed by (layer, t) tuples; a loss summed over time."""

import numpy as np

from . import Program, rng


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def char_rnn_loss(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    vocab_size = Why.shape[0]
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    for t in range(len(inputs)):
        xs[t] = np.zeros((vocab_size, 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
        ys[t] = np.dot(Why, hs[t]) + by
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    return loss


def char_rnn_loss_backward(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    vocab_size = Why.shape[0]
    xs, hs, ps = {}, {}, {}
    hs[-1] = np.copy(hprev)
    for t in range(len(inputs)):
        xs[t] = np.zeros((vocab_size, 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
        y = np.dot(Why, hs[t]) + by
        ps[t] = np.exp(y) / np.sum(np.exp(y))
    dWxh, dWhh, dWhy = np.zeros_like(Wxh), np.zeros_like(Whh), np.zeros_like(Why)
    dbh, dby = np.zeros_like(bh), np.zeros_like(by)
    dhnext = np.zeros_like(hs[0])
    for t in reversed(range(len(inputs))):
        dy = np.copy(ps[t])
        dy[targets[t]] -= 1
        dWhy += np.dot(dy, hs[t].T)
        dby += dy
        dh = np.dot(Why.T, dy) + dhnext
        dhraw = (1 - hs[t] * hs[t]) * dh
        dbh += dhraw
        dWxh += np.dot(dhraw, xs[t].T)
        dWhh += np.dot(dhraw, hs[t - 1].T)
        dhnext = np.dot(Whh.T, dhraw)
    return dWxh, dWhh, dWhy, dbh, dby, dhnext


def rnn_list_append(Wx, Wh, b, x, h0, targets):
    hs = [h0]
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ Wx + hs[-1] @ Wh + b)
        hs.append(h)
    loss = 0.0
    for t in range(len(targets)):
        loss += 0.5 * np.sum((hs[t + 1] - targets[t]) ** 2)
    return loss


def rnn_list_append_backward(Wx, Wh, b, x, h0, targets):
    hs = [h0]
    for t in range(x.shape[0]):
        hs.append(np.tanh(x[t] @ Wx + hs[-1] @ Wh + b))
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dnext = np.zeros_like(h0)
    for t in reversed(range(x.shape[0])):
        dh = (hs[t + 1] - targets[t]) + dnext
        draw = dh * (1 - hs[t + 1] ** 2)
        dWx += x[t].T @ draw
        dWh += hs[t].T @ draw
        db += draw.sum(0)
        dnext = draw @ Wh.T
    return dWx, dWh, db, dnext


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x.dot(Wx) + prev_h.dot(Wh) + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    return next_h, cache


def rnn_step_backward(dnext_h, cache):
    x, prev_h, Wx, Wh, next_h = cache
    dtanh = dnext_h * (1 - next_h ** 2)
    return dtanh.dot(Wx.T), dtanh.dot(Wh.T), x.T.dot(dtanh), prev_h.T.dot(dtanh), \
        dtanh.sum(axis=0)


def temporal_affine_forward(x, w, b):
    N, T, D = x.shape
    M = b.shape[0]
    out = x.reshape(N * T, D).dot(w).reshape(N, T, M) + b
    return out, (x, w, b, out)


def temporal_softmax_loss(x, y, mask):
    N, T, V = x.shape
    x_flat = x.reshape(N * T, V)
    y_flat = y.reshape(N * T)
    mask_flat = mask.reshape(N * T)
    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat])) / N
    dx_flat = probs.copy()
    dx_flat[np.arange(N * T), y_flat] -= 1
    dx_flat /= N
    dx_flat *= mask_flat[:, None]
    return loss, dx_flat.reshape(N, T, V)


def rnn_cs231n_preallocated(x, h0, Wx, Wh, b, W_vocab, b_vocab, y, mask):
    N, T, D = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    prev_h = h0
    for t in range(T):
        next_h, _ = rnn_step_forward(x[:, t, :], prev_h, Wx, Wh, b)
        h[:, t, :] = next_h
        prev_h = next_h
    scores, _ = temporal_affine_forward(h, W_vocab, b_vocab)
    loss, _ = temporal_softmax_loss(scores, y, mask)
    return loss


def rnn_cs231n_preallocated_backward(x, h0, Wx, Wh, b, W_vocab, b_vocab, y, mask):
    N, T, D = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    caches = []
    prev_h = h0
    for t in range(T):
        prev_h, cache = rnn_step_forward(x[:, t, :], prev_h, Wx, Wh, b)
        h[:, t, :] = prev_h
        caches.append(cache)
    scores, _ = temporal_affine_forward(h, W_vocab, b_vocab)
    _, dscores = temporal_softmax_loss(scores, y, mask)
    V = W_vocab.shape[1]
    dW_vocab = h.reshape(N * T, H).T.dot(dscores.reshape(N * T, V))
    db_vocab = dscores.sum(axis=(0, 1))
    dh = dscores.reshape(N * T, V).dot(W_vocab.T).reshape(N, T, H)
    dx = np.zeros_like(x)
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dprev = np.zeros((N, H))
    for t in reversed(range(T)):
        dx[:, t, :], dprev, dWx_t, dWh_t, db_t = rnn_step_backward(dh[:, t, :] + dprev,
                                                                  caches[t])
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    return dx, dprev, dWx, dWh, db, dW_vocab, db_vocab


def lstm_dicts_vstack(Wf, Wi, Wc, Wo, Wy, xs_in, targets, h_prev, c_prev):
    H = h_prev.shape[0]
    hs, cs, zs, fs, is_, cbar, os_, ps = {}, {}, {}, {}, {}, {}, {}, {}
    hs[-1] = np.copy(h_prev)
    cs[-1] = np.copy(c_prev)
    loss = 0
    for t in range(len(xs_in)):
        zs[t] = np.vstack((hs[t - 1], xs_in[t]))
        fs[t] = sigmoid(np.dot(Wf, zs[t]))
        is_[t] = sigmoid(np.dot(Wi, zs[t]))
        cbar[t] = np.tanh(np.dot(Wc, zs[t]))
        cs[t] = fs[t] * cs[t - 1] + is_[t] * cbar[t]
        os_[t] = sigmoid(np.dot(Wo, zs[t]))
        hs[t] = os_[t] * np.tanh(cs[t])
        v = np.dot(Wy, hs[t])
        ps[t] = np.exp(v) / np.sum(np.exp(v))
        loss += -np.log(ps[t][targets[t], 0])
    return loss


def lstm_dicts_vstack_backward(Wf, Wi, Wc, Wo, Wy, xs_in, targets, h_prev, c_prev):
    H = h_prev.shape[0]
    hs, cs, zs, fs, is_, cbar, os_, ps = {}, {}, {}, {}, {}, {}, {}, {}
    hs[-1], cs[-1] = np.copy(h_prev), np.copy(c_prev)
    T = len(xs_in)
    for t in range(T):
        zs[t] = np.vstack((hs[t - 1], xs_in[t]))
        fs[t] = sigmoid(Wf @ zs[t])
        is_[t] = sigmoid(Wi @ zs[t])
        cbar[t] = np.tanh(Wc @ zs[t])
        cs[t] = fs[t] * cs[t - 1] + is_[t] * cbar[t]
        os_[t] = sigmoid(Wo @ zs[t])
        hs[t] = os_[t] * np.tanh(cs[t])
        v = Wy @ hs[t]
        ps[t] = np.exp(v) / np.sum(np.exp(v))
    dWf, dWi, dWc, dWo, dWy = (np.zeros_like(W) for W in (Wf, Wi, Wc, Wo, Wy))
    dh_next, dc_next = np.zeros_like(h_prev), np.zeros_like(c_prev)
    for t in reversed(range(T)):
        dv = np.copy(ps[t])
        dv[targets[t]] -= 1
        dWy += dv @ hs[t].T
        dh = Wy.T @ dv + dh_next
        do = dh * np.tanh(cs[t]) * os_[t] * (1 - os_[t])
        dc = dh * os_[t] * (1 - np.tanh(cs[t]) ** 2) + dc_next
        df = dc * cs[t - 1] * fs[t] * (1 - fs[t])
        di = dc * cbar[t] * is_[t] * (1 - is_[t])
        dcb = dc * is_[t] * (1 - cbar[t] ** 2)
        dWf += df @ zs[t].T
        dWi += di @ zs[t].T
        dWc += dcb @ zs[t].T
        dWo += do @ zs[t].T
        dz = Wf.T @ df + Wi.T @ di + Wc.T @ dcb + Wo.T @ do
        dh_next = dz[:H]
        dc_next = fs[t] * dc
    return dWf, dWi, dWc, dWo, dWy, dh_next, dc_next


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b):
    H = prev_h.shape[1]
    a = x.dot(Wx) + prev_h.dot(Wh) + b
    i = sigmoid(a[:, :H])
    f = sigmoid(a[:, H:2 * H])
    o = sigmoid(a[:, 2 * H:3 * H])
    g = np.tanh(a[:, 3 * H:])
    next_c = f * prev_c + i * g
    next_h = o * np.tanh(next_c)
    cache = (x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c)
    return next_h, next_c, cache


def lstm_step_backward(dnext_h, dnext_c, cache):
    x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c = cache
    tc = np.tanh(next_c)
    do = dnext_h * tc
    dc = dnext_c + dnext_h * o * (1 - tc ** 2)
    di, df, dg = dc * g, dc * prev_c, dc * i
    da = np.hstack((di * i * (1 - i), df * f * (1 - f), do * o * (1 - o), dg * (1 - g ** 2)))
    return da.dot(Wx.T), da.dot(Wh.T), dc * f, x.T.dot(da), prev_h.T.dot(da), da.sum(0)


def lstm_cs231n_loop(x, h0, Wx, Wh, b, w_out):
    N, T, D = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    prev_h, prev_c = h0, np.zeros_like(h0)
    for t in range(T):
        prev_h, prev_c, _ = lstm_step_forward(x[:, t, :], prev_h, prev_c, Wx, Wh, b)
        h[:, t, :] = prev_h
    return np.sum(h.dot(w_out) ** 2) / N


def lstm_cs231n_loop_backward(x, h0, Wx, Wh, b, w_out):
    N, T, D = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    caches = []
    prev_h, prev_c = h0, np.zeros_like(h0)
    for t in range(T):
        prev_h, prev_c, cache = lstm_step_forward(x[:, t, :], prev_h, prev_c, Wx, Wh, b)
        h[:, t, :] = prev_h
        caches.append(cache)
    s = h.dot(w_out)
    dh = (2 * s / N)[..., None] * w_out
    dw_out = np.einsum('nth,nt->h', h, 2 * s / N)
    dx = np.zeros_like(x)
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dprev_h, dprev_c = np.zeros((N, H)), np.zeros((N, H))
    for t in reversed(range(T)):
        dx[:, t, :], dprev_h, dprev_c, dWx_t, dWh_t, db_t = lstm_step_backward(
            dh[:, t, :] + dprev_h, dprev_c, caches[t])
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    return dx, dprev_h, dWx, dWh, db, dw_out


def gru_lists(Wz, Wr, Wh, Uz, Ur, Uh, xs, h0, Wy, ys):
    h = h0
    hs, zs, rs, hts = [h0], [], [], []
    loss = 0.0
    for x, y in zip(xs, ys):
        z = sigmoid(x @ Wz + h @ Uz)
        r = sigmoid(x @ Wr + h @ Ur)
        h_tilde = np.tanh(x @ Wh + (r * h) @ Uh)
        h = (1 - z) * h + z * h_tilde
        zs.append(z)
        rs.append(r)
        hts.append(h_tilde)
        hs.append(h)
        pred = h @ Wy
        loss += np.mean((pred - y) ** 2)
    return loss / len(xs)


def gru_lists_backward(Wz, Wr, Wh, Uz, Ur, Uh, xs, h0, Wy, ys):
    h = h0
    hs, zs, rs, hts = [h0], [], [], []
    for x in xs:
        z = sigmoid(x @ Wz + h @ Uz)
        r = sigmoid(x @ Wr + h @ Ur)
        ht = np.tanh(x @ Wh + (r * h) @ Uh)
        h = (1 - z) * h + z * ht
        zs.append(z); rs.append(r); hts.append(ht); hs.append(h)
    T = len(xs)
    g = {k: np.zeros_like(v) for k, v in
         dict(Wz=Wz, Wr=Wr, Wh=Wh, Uz=Uz, Ur=Ur, Uh=Uh, Wy=Wy).items()}
    dnext = np.zeros_like(h0)
    for t in reversed(range(T)):
        x, h_prev, h, z, r, ht = xs[t], hs[t], hs[t + 1], zs[t], rs[t], hts[t]
        pred = h @ Wy
        dpred = 2 * (pred - ys[t]) / pred.size / T
        g['Wy'] += h.T @ dpred
        dh = dpred @ Wy.T + dnext
        dz = dh * (ht - h_prev)
        dht = dh * z
        dh_prev = dh * (1 - z)
        dat = dht * (1 - ht ** 2)
        g['Wh'] += x.T @ dat
        g['Uh'] += (r * h_prev).T @ dat
        drh = dat @ Uh.T
        dr = drh * h_prev
        dh_prev += drh * r
        daz = dz * z * (1 - z)
        dar = dr * r * (1 - r)
        g['Wz'] += x.T @ daz
        g['Uz'] += h_prev.T @ daz
        g['Wr'] += x.T @ dar
        g['Ur'] += h_prev.T @ dar
        dh_prev += daz @ Uz.T + dar @ Ur.T
        dnext = dh_prev
    return g['Wz'], g['Wr'], g['Wh'], g['Uz'], g['Ur'], g['Uh'], dnext, g['Wy']


class RNNCell:
    def __init__(self, W_hh, W_xh, W_hy):
        self.W_hh = W_hh
        self.W_xh = W_xh
        self.W_hy = W_hy
        self.h = np.zeros((W_hh.shape[0],))

    def step(self, x):
        self.h = np.tanh(np.dot(self.W_hh, self.h) + np.dot(self.W_xh, x))
        y = np.dot(self.W_hy, self.h)
        return y


CELL = RNNCell(rng(61).standard_normal((4, 4)) * 0.4, rng(62).standard_normal((4, 3)) * 0.4,
               rng(63).standard_normal((2, 4)) * 0.4)


def cell_object_self_h(xs, targets):
    """Karpathy's blog-post RNN: ``self.h`` changes at each ``step``; the input sequence is
    differentiated."""
    CELL.h = np.zeros(4)
    loss = 0.0
    for x, y in zip(xs, targets):
        out = CELL.step(x)
        loss = loss + np.sum((out - y) ** 2)
    return loss


def cell_object_self_h_backward(xs, targets):
    Whh, Wxh, Why = CELL.W_hh, CELL.W_xh, CELL.W_hy
    hs = [np.zeros(4)]
    for x in xs:
        hs.append(np.tanh(Whh @ hs[-1] + Wxh @ x))
    dxs = np.zeros_like(xs)
    dnext = np.zeros(4)
    for t in reversed(range(len(xs))):
        dy = 2 * (Why @ hs[t + 1] - targets[t])
        dh = Why.T @ dy + dnext
        draw = dh * (1 - hs[t + 1] ** 2)
        dxs[t] = Wxh.T @ draw
        dnext = Whh.T @ draw
    return (dxs,)


def stacked_rnn_tuple_keys(Wx1, Wh1, Wx2, Wh2, x, w_out, y):
    L = 2
    Ws = {0: (Wx1, Wh1), 1: (Wx2, Wh2)}
    T, N = x.shape[0], x.shape[1]
    hs = {}
    for l in range(L):
        hs[(l, -1)] = np.zeros((N, Wh1.shape[0]))
    for t in range(T):
        inp = x[t]
        for l in range(L):
            Wx, Wh = Ws[l]
            hs[(l, t)] = np.tanh(inp @ Wx + hs[(l, t - 1)] @ Wh)
            inp = hs[(l, t)]
    pred = hs[(L - 1, T - 1)] @ w_out
    return 0.5 * np.sum((pred - y) ** 2)


def stacked_rnn_tuple_keys_backward(Wx1, Wh1, Wx2, Wh2, x, w_out, y):
    Ws = [(Wx1, Wh1), (Wx2, Wh2)]
    T, N = x.shape[0], x.shape[1]
    H = Wh1.shape[0]
    hs = {(l, -1): np.zeros((N, H)) for l in range(2)}
    for t in range(T):
        inp = x[t]
        for l in range(2):
            hs[(l, t)] = np.tanh(inp @ Ws[l][0] + hs[(l, t - 1)] @ Ws[l][1])
            inp = hs[(l, t)]
    top = hs[(1, T - 1)]
    dpred = top @ w_out - y
    dw_out = top.T @ dpred
    dWs = [[np.zeros_like(Wx1), np.zeros_like(Wh1)], [np.zeros_like(Wx2), np.zeros_like(Wh2)]]
    dh = {(1, T - 1): dpred @ w_out.T}
    for t in reversed(range(T)):
        dup = np.zeros((N, H))
        for l in (1, 0):
            d = dh.get((l, t), np.zeros((N, H)))
            if l == 0:
                d = d + dup
            draw = d * (1 - hs[(l, t)] ** 2)
            inp = hs[(0, t)] if l == 1 else x[t]
            dWs[l][0] += inp.T @ draw
            dWs[l][1] += hs[(l, t - 1)].T @ draw
            prev = dh.get((l, t - 1), np.zeros((N, H)))
            dh[(l, t - 1)] = prev + draw @ Ws[l][1].T
            if l == 1:
                dup = draw @ Ws[1][0].T
    return dWs[0][0], dWs[0][1], dWs[1][0], dWs[1][1], dw_out


def _args_char():
    r = rng(60)
    V, H, T = 5, 4, 6
    return (r.standard_normal((H, V)) * 0.3, r.standard_normal((H, H)) * 0.3,
            r.standard_normal((V, H)) * 0.3, np.zeros((H, 1)) + 0.05, np.zeros((V, 1)),
            list(r.integers(0, V, T)), list(r.integers(0, V, T)),
            r.standard_normal((H, 1)) * 0.1)


def _args_list():
    r = rng(64)
    T, N, D, H = 5, 3, 2, 4
    return (r.standard_normal((D, H)) * 0.5, r.standard_normal((H, H)) * 0.4,
            r.standard_normal(H) * 0.1, r.standard_normal((T, N, D)),
            r.standard_normal((N, H)) * 0.1, r.uniform(-0.5, 0.5, (T, N, H)))


def _args_cs231n():
    r = rng(65)
    N, T, D, H, V = 2, 4, 3, 4, 5
    mask = np.ones((N, T), dtype=bool)
    mask[0, -1] = False
    return (r.standard_normal((N, T, D)), r.standard_normal((N, H)) * 0.1,
            r.standard_normal((D, H)) * 0.4, r.standard_normal((H, H)) * 0.4,
            r.standard_normal(H) * 0.1, r.standard_normal((H, V)) * 0.4,
            r.standard_normal(V) * 0.1, r.integers(0, V, (N, T)), mask)


def _args_lstm_dicts():
    r = rng(66)
    H, D, V, T = 3, 4, 4, 4
    Ws = tuple(r.standard_normal((H, H + D)) * 0.4 for _ in range(4))
    xs_in = [np.eye(D)[[k]].T for k in r.integers(0, D, T)]
    return Ws + (r.standard_normal((V, H)) * 0.4, xs_in, list(r.integers(0, V, T)),
                 r.standard_normal((H, 1)) * 0.1, r.standard_normal((H, 1)) * 0.1)


def _args_lstm_cs231n():
    r = rng(67)
    N, T, D, H = 2, 3, 3, 2
    return (r.standard_normal((N, T, D)), r.standard_normal((N, H)) * 0.1,
            r.standard_normal((D, 4 * H)) * 0.4, r.standard_normal((H, 4 * H)) * 0.4,
            r.standard_normal(4 * H) * 0.1, r.standard_normal(H))


def _args_gru():
    r = rng(68)
    T, N, D, H = 4, 2, 3, 3
    W = tuple(r.standard_normal((D, H)) * 0.4 for _ in range(3))
    U = tuple(r.standard_normal((H, H)) * 0.4 for _ in range(3))
    return W + U + (list(r.standard_normal((T, N, D))), r.standard_normal((N, H)) * 0.1,
                    r.standard_normal((H, 2)) * 0.5, list(r.standard_normal((T, N, 2))))


def _args_stacked():
    r = rng(69)
    T, N, D, H = 3, 2, 3, 3
    return (r.standard_normal((D, H)) * 0.5, r.standard_normal((H, H)) * 0.4,
            r.standard_normal((H, H)) * 0.5, r.standard_normal((H, H)) * 0.4,
            r.standard_normal((T, N, D)), r.standard_normal((H, 2)), r.standard_normal((N, 2)))


PROGRAMS = [
    Program("recurrent.char_rnn_loss", char_rnn_loss, char_rnn_loss_backward, _args_char,
            ("Wxh", "Whh", "Why", "bh", "by", "hprev"), fuse=True),
    Program("recurrent.rnn_list_append", rnn_list_append, rnn_list_append_backward,
            _args_list, ("Wx", "Wh", "b", "h0")),
    Program("recurrent.rnn_cs231n_preallocated", rnn_cs231n_preallocated,
            rnn_cs231n_preallocated_backward, _args_cs231n,
            ("x", "h0", "Wx", "Wh", "b", "W_vocab", "b_vocab")),
    Program("recurrent.lstm_dicts_vstack", lstm_dicts_vstack, lstm_dicts_vstack_backward,
            _args_lstm_dicts, ("Wf", "Wi", "Wc", "Wo", "Wy", "h_prev", "c_prev")),
    Program("recurrent.lstm_cs231n_loop", lstm_cs231n_loop, lstm_cs231n_loop_backward,
            _args_lstm_cs231n, ("x", "h0", "Wx", "Wh", "b", "w_out"), fuse=True),
    Program("recurrent.gru_lists", gru_lists, gru_lists_backward, _args_gru,
            ("Wz", "Wr", "Wh", "Uz", "Ur", "Uh", "h0", "Wy")),
    Program("recurrent.cell_object_self_h", cell_object_self_h, cell_object_self_h_backward,
            lambda: (rng(70).standard_normal((5, 3)), rng(71).standard_normal((5, 2))),
            ("xs",)),
    Program("recurrent.stacked_rnn_tuple_keys", stacked_rnn_tuple_keys,
            stacked_rnn_tuple_keys_backward, _args_stacked,
            ("Wx1", "Wh1", "Wx2", "Wh2", "w_out")),
]
