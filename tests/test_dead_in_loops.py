"""Dead code inside loops and branches (issue 25 item 4): the optimiser drops a statement
whose value nothing live reads wherever it stands -- a loop-carried value is live only if read
after the loop or by a live statement of a later iteration -- and keeps every effect.

Two layers: `eliminate_dead` on small hand-written functions (what it removes and what it
must keep), and whole programs through srcad.grad, whose gradients must be bit for bit those
of the same program without the dead lines, and agree with central differences."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.codegen import render_function
from srcad.lower.standalone import to_gfunction
from srcad.optimize import eliminate_dead
from srcad.testing import numerical_grad, rel_error


def dce(src: str) -> str:
    f = to_gfunction(src)
    while eliminate_dead(f):
        pass
    return "\n".join(render_function(f))


# -- the pass on its own ----------------------------------------------------------------------
def test_accumulator_never_read_is_dropped_from_the_loop_and_its_branch():
    out = dce(
        "def f(X, n):\n"
        "    acc = np.zeros(3)\n"
        "    s = 0.0\n"
        "    for i in range(n):\n"
        "        t = X[i] * 2.0\n"
        "        s = s + np.sum(t)\n"
        "        if t[0] > 0:\n"
        "            acc = acc + t\n"
        "    return s\n")
    assert "acc" not in out
    assert "s = s + np.sum(t)" in out and "t = X[i] * 2.0" in out


def test_a_value_read_by_a_later_iteration_stays():
    out = dce(
        "def f(x, n):\n"
        "    h = x\n"
        "    prev = x\n"
        "    for i in range(n):\n"
        "        y = prev * 2.0\n"
        "        prev = h\n"
        "        h = np.tanh(h)\n"
        "    return y\n")
    # y reads prev, which the previous iteration set from h: all three carry
    assert "prev = h" in out and "h = np.tanh(h)" in out and "h = x" in out


def test_a_value_read_only_by_its_own_dead_update_is_dropped():
    out = dce(
        "def f(x, n):\n"
        "    c = 0\n"
        "    s = x\n"
        "    for i in range(n):\n"
        "        c = c + 1\n"
        "        s = s * x\n"
        "    return s\n")
    assert "c = " not in out and "s = s * x" in out


def test_effects_in_loops_stay():
    out = dce(
        "def f(x, n, st, d):\n"
        "    for i in range(n):\n"
        "        t = x * i\n"
        "        print(t)\n"
        "        st.push(x)\n"
        "        u = st.pop()\n"
        "        d[i] = x\n"
        "        r = x + 1\n"
        "        d.attr = r\n"
        "    return x\n")
    for line in ("print(t)", "t = x * i", "st.push(x)", "u = st.pop()", "d[i] = x", "r = x + 1",
                 "d.attr = r"):
        assert line in out, line


def test_a_value_read_after_a_break_stays_and_a_dead_branch_goes():
    out = dce(
        "def f(x, n):\n"
        "    for i in range(n):\n"
        "        last = x * i\n"
        "        junk = x - i\n"
        "        if last[0] > 3:\n"
        "            break\n"
        "    while True:\n"
        "        w = x + 1\n"
        "        if w[0] > 0:\n"
        "            break\n"
        "    if x[0] > 0:\n"
        "        z = x * 3\n"
        "    return last\n")
    assert "last = x * i" in out and "break" in out and "w = x + 1" in out
    assert "junk" not in out and "z = x * 3" not in out


def test_a_loop_left_empty_goes_unless_its_target_is_read():
    out = dce(
        "def f(x, n):\n"
        "    for i in range(n):\n"
        "        a = x * i\n"
        "    for j in range(n):\n"
        "        b = x * j\n"
        "    return x + j\n")
    assert "for i" not in out and "a = " not in out
    assert "for j in range(n):" in out and "b = " not in out


# -- whole programs ---------------------------------------------------------------------------
def svm_with_unused_dW(W, X, y):
    """A loss that also accumulates the gradient its author computed by hand, never used."""
    dW = np.zeros(W.shape)
    loss = 0.0
    for i in range(X.shape[0]):
        scores = X[i].dot(W)
        correct = scores[y[i]]
        for j in range(W.shape[1]):
            if j == y[i]:
                continue
            margin = scores[j] - correct + 1.0
            if margin > 0:
                loss += margin
                dW[:, j] += X[i]
                dW[:, y[i]] -= X[i]
    dW /= X.shape[0]
    return loss / X.shape[0] + 0.1 * np.sum(W * W)


def svm_without_dW(W, X, y):
    loss = 0.0
    for i in range(X.shape[0]):
        scores = X[i].dot(W)
        correct = scores[y[i]]
        for j in range(W.shape[1]):
            if j == y[i]:
                continue
            margin = scores[j] - correct + 1.0
            if margin > 0:
                loss += margin
    return loss / X.shape[0] + 0.1 * np.sum(W * W)


def rnn_with_unused_stats(Wx, Wh, xs, h):
    norms = 0.0
    seen = []
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
        norms = norms + np.sum(h ** 2)      # never read
        seen = seen + [h]                   # never read
        loss = loss + np.sum(h * h[::-1])
    return loss


def rnn_without_stats(Wx, Wh, xs, h):
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
        loss = loss + np.sum(h * h[::-1])
    return loss


def svm_args():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((6, 4)) * 0.1, rng.standard_normal((7, 6)),
            rng.integers(0, 4, 7)), 0


def rnn_args():
    rng = np.random.default_rng(1)
    return (rng.standard_normal((3, 4)) * 0.5, rng.standard_normal((4, 4)) * 0.5,
            rng.standard_normal((5, 3)), rng.standard_normal(4)), (0, 1)


OPTIONS = [pytest.param({}, id="source"), pytest.param({"fuse": True}, id="fuse"),
           pytest.param({"memory_budget": 1}, id="budget")]


def tup(g):
    return g if isinstance(g, tuple) else (g,)


@pytest.mark.filterwarnings("ignore:srcad. memory_budget")
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("fn,plain,make", [(svm_with_unused_dW, svm_without_dW, svm_args),
                                           (rnn_with_unused_stats, rnn_without_stats, rnn_args)],
                         ids=["svm", "rnn"])
def test_gradient_is_bitwise_that_of_the_program_without_the_dead_lines(fn, plain, make,
                                                                      options):
    args, wrt = make()
    got = tup(srcad.grad(fn, wrt=wrt, **options)(*args))
    want = tup(srcad.grad(plain, wrt=wrt, **options)(*args))
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()
    for g, n in zip(got, tup(numerical_grad(fn, args, wrt=wrt))):
        assert rel_error(g, n) < 1e-6


def test_the_unused_accumulator_is_gone_from_the_generated_loop():
    args, wrt = svm_args()
    g = srcad.grad(svm_with_unused_dW, wrt=wrt)
    g(*args)
    src = srcad.source(g)
    # (the user's dW would be made by np.zeros and written by setitem, copy on write)
    assert "setitem" not in src and "np.zeros(" not in src
    g = srcad.grad(rnn_with_unused_stats, wrt=(0, 1))
    g(*rnn_args()[0])
    src = srcad.source(g)
    assert "norms" not in src and "seen" not in src


def draws_in_a_loop(w, rng, n):
    s = 0.0
    for i in range(n):
        unused = rng.standard_normal(3)  # noqa: F841 (not read, but it moves the generator)
        s = s + np.sum(w * rng.standard_normal(3))
    return s


def test_an_unread_random_draw_in_a_loop_still_moves_the_generator():
    w = np.arange(3.0)
    used = np.random.default_rng(5)
    g = srcad.grad(draws_in_a_loop)(w, used, 4)
    rng = np.random.default_rng(5)
    want = np.zeros(3)
    for _ in range(4):
        rng.standard_normal(3)
        want += rng.standard_normal(3)
    np.testing.assert_allclose(g, want, rtol=1e-14)
    assert used.standard_normal() == rng.standard_normal()  # (8 draws of 3 made, not 4)


def prints_in_a_loop(w, n):
    s = 0.0
    for i in range(n):
        t = w * i
        print("t", t.sum())
        s = s + np.sum(w * w)
    return s


def test_a_print_of_an_otherwise_dead_value_in_a_loop_still_prints(capsys):
    g = srcad.grad(prints_in_a_loop)(np.ones(2), 3)
    assert g.tolist() == [6.0, 6.0]
    assert capsys.readouterr().out.split("\n")[:3] == ["t 0.0", "t 2.0", "t 4.0"]
