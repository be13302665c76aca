"""Loops that fill an array slot by slot (issue 25 item 4: no copies nobody needs): a naive
convolution (`out[:, :, i, j] = patch @ W.T`), an RNN keeping its states (`hs[:, t] = h`), a
naive max pool (the layer functions of tests/fixtures_slots.py), each at three sizes.
srcad's gradient (default options) against the same function's forward alone and against a
backward written by hand, same process, interleaved medians (bench/timing.py `measure`).
Before srcad.memplan.slots each iteration copied the whole array twice (forward `setitem`,
backward `setitem_grad_x`): the ratio to the forward grew with the size.

    python bench/slot_writes.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                os.path.dirname(os.path.abspath(__file__))]
import srcad  # noqa: E402
from tests.fixtures_slots import conv_naive, pool_naive, rnn_states  # noqa: E402
from timing import cpu_model, measure  # noqa: E402


def conv_loss(w, x):
    return np.sum(conv_naive(w, x) ** 2)


def conv_by_hand(w, x):
    N, C, H, W_ = x.shape
    F, _, HH, WW = w.shape
    dout = 2.0 * conv_naive(w, x)
    dw = np.zeros((F, C * HH * WW))
    for i in range(H - HH + 1):
        for j in range(W_ - WW + 1):
            dw += dout[:, :, i, j].T @ x[:, :, i:i + HH, j:j + WW].reshape(N, -1)
    return dw.reshape(w.shape)


def rnn_loss(Wh, Wx, xs):
    hs = rnn_states(Wh, Wx, xs)
    return np.sum(hs * hs)


def rnn_by_hand(Wh, Wx, xs):
    hs = rnn_states(Wh, Wx, xs)
    dhs = 2.0 * hs
    dWh, dWx = np.zeros_like(Wh), np.zeros_like(Wx)
    dh = np.zeros_like(hs[:, 0, :])
    for t in reversed(range(xs.shape[1])):
        da = (dh + dhs[:, t, :]) * (1 - hs[:, t, :] ** 2)
        prev = hs[:, t - 1, :] if t > 0 else np.zeros_like(dh)
        dWh += prev.T @ da
        dWx += xs[:, t, :].T @ da
        dh = da @ Wh.T
    return dWh, dWx


def pool_loss(x):
    return np.sum(pool_naive(x) ** 2)


def pool_by_hand(x):
    N, C, H, W_ = x.shape
    out = pool_naive(x)
    dx = np.zeros_like(x)
    for i in range(H // 2):
        for j in range(W_ // 2):
            win = x[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
            m = out[:, :, i, j][:, :, None, None]  # (random data: no ties)
            dx[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2] += (win == m) * 2.0 * m
    return dx


def cases(s: int, rng):
    f = lambda *shape: rng.standard_normal(shape)  # noqa: E731
    return [("conv_naive", conv_loss, conv_by_hand, (0,), (f(8, 3, 3, 3) * 0.2,
                                                          f(4, 3, 8 * s, 8 * s))),
            ("rnn_states", rnn_loss, rnn_by_hand, (0, 1), (f(32, 32) * 0.1, f(16, 32) * 0.1,
                                                           f(16, 32 * s, 16))),
            ("pool_naive", pool_loss, pool_by_hand, (0,), (f(8, 8, 8 * s, 8 * s),))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)  # rounds of interleaved samples
    opt = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical cores); numpy {np.__version__}; "
          f"srcad default options")
    print(f"{'program':12s} {'size':>5s} {'srcad ms':>9s} {'forward ms':>11s} "
          f"{'by hand ms':>11s} {'/forward':>9s} {'/by hand':>9s}")
    for s in (1, 2, 4):
        for name, loss, by_hand, wrt, args in cases(s, rng):
            g = srcad.grad(loss, wrt=wrt)
            got, want = g(*args), by_hand(*args)
            got = got if isinstance(got, tuple) else (got,)
            want = want if isinstance(want, tuple) else (want,)
            for a, b in zip(got, want):
                assert np.allclose(a, b, rtol=1e-9, atol=1e-9), name
            t = measure({"srcad": lambda: g(*args), "fwd": lambda: loss(*args),
                         "hand": lambda: by_hand(*args)}, opt.repeat)
            print(f"{name:12s} {s:5d} {t['srcad'] * 1e3:9.2f} {t['fwd'] * 1e3:11.2f} "
                  f"{t['hand'] * 1e3:11.2f} {t['srcad'] / t['fwd']:9.2f} "
                  f"{t['srcad'] / t['hand']:9.2f}", flush=True)


if __name__ == "__main__":
    main()
