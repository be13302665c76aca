"""Python statement forms other people's programs use (issue 23, the front door): `with`
blocks, `for`/`while ... else`, starred assignment targets, `reversed(...)` of lists and
arrays, generator functions as callees, star-arguments of a display, sets of constants in a
test (srcad/frontend/pyforms.py, srcad/runtime_context.py). Each case: the value is what
calling the function gives and the gradient matches central differences, in source mode,
tape mode and fused; where srcad cannot keep Python's meaning, a SrcadError at the user's
line that says what to write instead."""

from __future__ import annotations

import contextlib
import time
import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(7)
X = R.standard_normal(5)
P = R.uniform(0.2, 0.9, size=5)
M = R.standard_normal((4, 3))
MODES = ({"mode": "source"}, {"mode": "tape"}, {"fuse": True})


def _check(fn, *args, wrt=0, modes=MODES, tol=1e-6):
    """`fn`'s value and gradient in each mode, against calling it and central differences."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(*args)
        num = numerical_grad(fn, args, wrt=wrt)
    for opts in modes:
        for _ in range(2):  # (the first call probes; the second runs the cached code)
            v, g = srcad.value_and_grad(fn, wrt=wrt, **opts)(*args)
            assert np.allclose(v, want, rtol=1e-12, atol=1e-12), (opts, v, want)
            assert rel_error(g, num) < tol, (opts, g, num)


def _line_of(fn, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


# --- with ---------------------------------------------------------------------------------------
def loglik(p, y):
    """Bernoulli log-likelihood with the 0 * log(0) terms silenced, as people write it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lp = np.log(p)
        lq = np.log1p(-p)
        ll = np.where(y > 0, lp, lq)
    return -np.mean(ll)


def errstate_as_decorated_block(x):
    h = np.tanh(x)
    with np.errstate(all="ignore"):
        r = np.sqrt(h * h + 1.0) / x
    return np.sum(r * h)


def caught_warnings(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.log(np.abs(x)) * x
    return np.sum(y)


def null_context(x):
    with contextlib.nullcontext(3.0) as k:
        y = np.sin(x) * k
    return np.sum(y * y)


def two_items(x):
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.exp(x) / (1.0 + np.exp(x))
    return np.sum(y * x)


def in_a_loop(x):
    s = 0.0
    for i in range(3):
        with np.errstate(under="ignore"):
            s = s + np.sum(np.cos(x * (i + 1)) ** 2)
    return s


def checkpointed_errstate(x):
    h = x
    for _ in srcad.checkpoint(range(6), every=2):
        with np.errstate(divide="ignore"):  # (entered again when the steps are recomputed)
            h = np.tanh(h) + 0.5 * np.log(h * h + 1.0)
    return np.sum(h)


@pytest.mark.parametrize("fn, args", [
    (checkpointed_errstate, (X,)),
    (loglik, (P, (R.uniform(size=5) > 0.5).astype(float))),
    (errstate_as_decorated_block, (X,)),
    (caught_warnings, (P,)),
    (null_context, (X,)),
    (two_items, (X,)),
    (in_a_loop, (X,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_with_blocks(fn, args):
    _check(fn, *args)


def log_of(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x) * x
        y = np.where(np.isfinite(y), y, 0.0)
    return np.sum(y)


@pytest.mark.parametrize("opts", MODES, ids=str)
def test_errstate_silences_forward_and_backward(opts):
    x = np.array([0.0, 1.0, 2.0])
    g = srcad.grad(log_of, **opts)
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (any warning fails the test)
        for _ in range(2):
            g(x)
    assert np.geterr() == before


def log_raising(x):
    with np.errstate(all="raise"):
        y = np.log(x)
    return np.sum(y)


@pytest.mark.parametrize("opts", MODES, ids=str)
def test_errstate_raise_does_not_leak(opts):
    g = srcad.grad(log_raising, **opts)
    before = np.geterr()
    assert np.allclose(g(np.array([1.0, 2.0])), [1.0, 0.5])
    for _ in range(2):
        with pytest.raises((FloatingPointError, srcad.SrcadError), match="divide by zero"):
            g(np.array([0.0, 2.0]))
        assert np.geterr() == before  # (Python's `with` restores it: so does srcad)
    if opts.get("mode") != "tape":
        for run in (lambda v: srcad.vjp(log_raising, v, **opts),
                    lambda v: srcad.jvp(log_raising, (v,), (np.ones(2),), **opts)):
            run(np.array([1.0, 2.0]))  # (built: the next call runs the generated code)
            with pytest.raises((FloatingPointError, srcad.SrcadError), match="divide by zero"):
                run(np.array([0.0, 2.0]))
            assert np.geterr() == before


def warnings_then_raise(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if np.sum(x) > 100.0:
            raise ValueError("too large")
        y = x * 2.0
    return np.sum(y)


def test_filters_restored_when_the_body_raises():
    g = srcad.grad(warnings_then_raise)
    g(np.ones(3))
    n = len(warnings.filters)
    with pytest.raises(ValueError, match="too large"):
        g(np.full(3, 50.0))
    assert len(warnings.filters) == n


class Timer:
    """A training script's timer (a module-level object): entered once per call, whatever
    the transform (the first call's shape probe enters a copy)."""

    def __init__(self):
        self.log = []

    def __enter__(self):
        self.start = time.perf_counter()
        self.log.append("enter")
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start
        self.log.append("exit")
        return False


TIMER = Timer()


def timed_forward(W, x):
    with TIMER as t:
        h = np.tanh(x @ W)
        loss = np.mean(h ** 2)
    return loss + 0.0 * t.start


def timed_early_return(W, x):
    with TIMER:
        h = np.tanh(x @ W)
        if np.sum(h) > -1e9:
            return np.sum(h * h)
        h = h * 2.0
    return np.sum(h)


@pytest.mark.parametrize("fn", [timed_forward, timed_early_return])
@pytest.mark.parametrize("opts", MODES, ids=str)
def test_user_context_manager_entered_once_per_call(fn, opts):
    W, x = R.standard_normal((3, 2)), R.standard_normal((4, 3))
    g = srcad.grad(fn, **opts)
    for _ in range(3):
        TIMER.log.clear()
        dW = g(W, x)
        assert TIMER.log == ["enter", "exit"], (opts, TIMER.log)
    assert rel_error(dW, numerical_grad(fn, (W, x))) < 1e-6


class Depth:
    """Counts how deep the blocks it guards are open, and how often they were entered."""

    def __init__(self):
        self.open, self.entered = 0, 0

    def __enter__(self):
        self.open += 1
        self.entered += 1
        return self

    def __exit__(self, *exc):
        self.open -= 1
        return False


DEPTH = Depth()


def jumps_in_with(x):
    s = 0.0
    for i in range(6):
        with DEPTH:
            s = s + np.sum(np.sin(x * (i + 1.0)))
            if i == 1:
                continue
            if s > 1.5:
                break
            s = s * 1.1
    return s


@pytest.mark.parametrize("opts", MODES, ids=str)
@pytest.mark.parametrize("x", [X, X * 0.01], ids=["breaks", "runs"])
def test_break_and_continue_leave_the_block(opts, x):
    g = srcad.grad(jumps_in_with, **opts)
    for _ in range(2):
        DEPTH.entered = 0
        g(x)
        assert DEPTH.open == 0
        s, want = 0.0, 0
        for i in range(6):  # (how many iterations Python runs)
            want += 1
            s = s + np.sum(np.sin(x * (i + 1.0)))
            if i == 1:
                continue
            if s > 1.5:
                break
            s = s * 1.1
        assert DEPTH.entered == want
    assert rel_error(g(x), numerical_grad(jumps_in_with, (x,))) < 1e-6


def test_with_vjp_jvp_and_grad_of_grad():
    x = X.copy()
    out, pull = srcad.vjp(errstate_as_decorated_block, x)
    assert np.allclose(out, errstate_as_decorated_block(x))
    (gx,) = pull(1.0)
    assert rel_error(gx, numerical_grad(errstate_as_decorated_block, (x,))) < 1e-6
    v = R.standard_normal(5)
    _, t = srcad.jvp(errstate_as_decorated_block, (x,), (v,))
    assert np.allclose(t, gx @ v)
    hess_v = srcad.jvp(srcad.grad(in_a_loop), (x,), (v,))[1]
    num = (srcad.grad(in_a_loop)(x + 1e-5 * v) - srcad.grad(in_a_loop)(x - 1e-5 * v)) / 2e-5
    assert rel_error(hess_v, num) < 1e-5
    gg = srcad.grad(lambda y: np.sum(srcad.grad(in_a_loop)(y) ** 2))(x)
    assert rel_error(gg, numerical_grad(lambda y: np.sum(srcad.grad(in_a_loop)(y) ** 2),
                                        (x,))) < 1e-5


class Scaled:
    def __init__(self, k):
        self.k = k

    def __enter__(self):
        return self.k

    def __exit__(self, *exc):
        return False


def context_of_x(x):
    with Scaled(np.sum(x)) as k:
        y = x * k
    return np.sum(y)


def context_holds_x(x):
    with Scaled(x * 2.0):
        y = np.sin(x)
    return np.sum(y)


def suppressing(x):
    with contextlib.suppress(ValueError):
        y = np.sin(x)
    return np.sum(y)


@pytest.mark.parametrize("opts", MODES[:2], ids=str)
def test_with_refusals(opts):
    for fn in (context_of_x, context_holds_x):
        with pytest.raises(srcad.SrcadError, match="depend on the arguments") as e:
            srcad.grad(fn, **opts)(X)
        assert e.value.lineno == _line_of(fn, "with Scaled")
    with pytest.raises(srcad.SrcadError, match="suppress") as e:
        srcad.grad(suppressing, **opts)(X)
    assert e.value.lineno == _line_of(suppressing, "with contextlib")
    assert "try/except" in str(e.value)


# --- for/while ... else ------------------------------------------------------------------------
def first_above(x):
    s = 0.0
    for i in range(5):
        if x[i] > 0.5:
            s = s + x[i] ** 2
            break
        s = s + np.sin(x[i])
    else:
        s = s * 10.0
    return s


def no_break_else(x):
    s = np.sum(x)
    for w in (1.0, 2.0):
        s = s * w + np.cos(s)
    else:
        s = s + np.sum(x ** 3)
    return s


def while_else(x):
    h = x
    n = 0
    while n < 10:
        h = np.tanh(h) * 1.5
        n += 1
        if np.max(np.abs(h)) > 1.2:
            break
    else:
        h = h * 0.0
    return np.sum(h * x)


def nested_else(x):
    s = 0.0
    for i in range(3):
        for j in range(3):
            if j > i:
                break
            s = s + x[i] * x[j]
        else:
            s = s + np.exp(x[i])
    return s


def checkpointed_else(x):
    h = x
    for _ in srcad.checkpoint(range(4)):
        h = np.sin(h) + 0.5 * h
    else:  # noqa: PLW0120  (no break: the else always runs)
        h = h * 2.0
    return np.sum(h)


def search_flag(x):
    found = False
    s = 0.0
    for i in range(5):
        for j in range(5):
            if x[j] > x[i] + 0.5:
                found = True
                break
        else:
            s = s + x[i] ** 2
    return s + np.sum(x) * found


@pytest.mark.parametrize("fn", [first_above, no_break_else, while_else, nested_else,
                                checkpointed_else, search_flag])
@pytest.mark.parametrize("x", [X, np.full(5, 0.1), np.full(5, 2.0)], ids=["x", "small", "big"])
def test_loop_else(fn, x):
    _check(fn, x)


# --- starred targets -------------------------------------------------------------------------
def first_rest(x):
    xs = [x, 2.0 * x, np.sin(x)]
    first, *rest = xs
    return np.sum(first * rest[0]) + np.sum(rest[1] ** 2) + len(rest)


def init_last(x):
    *init, last = (np.cos(x), x * x, np.exp(x))
    return np.sum(last) + sum(np.sum(v) for v in init)


def rows(m):
    top, *middle, bottom = m  # an array unpacks along axis 0
    return np.sum(top * bottom) + np.sum(np.stack(middle) ** 2)


def lstsq_first(A, b):
    sol, *_ = np.linalg.lstsq(A, b, rcond=None)
    return np.sum(sol ** 2)


def nested_star(x):
    (a, b), *c = [(x, 2.0 * x), x ** 2, np.sin(x)]
    return np.sum(a * b) + np.sum(c[0] * c[1])


def from_call(x):
    head, *tail = split3(x)
    return np.sum(head) * np.sum(tail[0] * tail[1])


def split3(x):
    return x[0], x[1:3], x[3:]


def loop_star(x):
    s = 0.0
    for first, *others in [(x, x * 2.0), (np.sin(x), x, x * x)]:
        s = s + np.sum(first * others[-1])
    return s


@pytest.mark.parametrize("fn, args", [
    (first_rest, (X,)), (init_last, (X,)), (rows, (M,)),
    (lstsq_first, (R.standard_normal((6, 3)), R.standard_normal(6))),
    (nested_star, (X,)), (from_call, (X,)), (loop_star, (X,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_starred_targets(fn, args):
    _check(fn, *args)


def too_few(x):
    a, b, *rest = [x]
    return np.sum(a)


def test_starred_too_few_is_pythons_value_error():
    for mode in ("source", "tape"):
        with pytest.raises((ValueError, srcad.SrcadError), match="not enough values"):
            srcad.grad(too_few, mode=mode)(X)


# --- reversed ------------------------------------------------------------------------------------
def rnn_backwards(W, xs):
    h = np.zeros(3)
    for x in reversed(xs):
        h = np.tanh(W @ h + x)
    return np.sum(h ** 2)


def reversed_list(x):
    hs = [x, np.sin(x), x * 3.0]
    rs = list(reversed(hs))
    return np.sum(rs[0] * rs[1] ** 2) + np.sum(rs[2])


def reversed_zip(x):
    hs = [x, np.sin(x), x * 3.0]
    s = 0.0
    for a, b in zip(reversed(hs), hs):
        s = s + np.sum(a * b)
    return s


def reversed_rows(m):
    return sum(np.sum(r * (i + 1)) for i, r in enumerate(reversed(m)))


def reversed_array_list(m):
    rs = list(reversed(m))
    return np.sum(rs[0] * np.exp(rs[-1]))


@pytest.mark.parametrize("fn, args", [
    (rnn_backwards, (R.standard_normal((3, 3)) * 0.5, R.standard_normal((4, 3)))),
    (reversed_list, (X,)), (reversed_zip, (X,)), (reversed_rows, (M,)),
    (reversed_array_list, (M,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_reversed(fn, args):
    _check(fn, *args)


# --- star-arguments of a display ------------------------------------------------------------------
def star_add(x):
    y = np.add(*[x, np.sin(x)])
    z = np.zeros(*[5]) + np.multiply(*(y, x))
    return np.sum(z * y)


def star_local_list(x):
    pair = [x, x * x]
    return np.sum(np.add(*pair))


@pytest.mark.parametrize("fn", [star_add, star_local_list])
def test_star_displays(fn):
    _check(fn, X)


# --- sets of constants in a test ---------------------------------------------------------------
def by_mode(x, mode):
    if mode in {"train", "eval"}:
        return np.sum(np.tanh(x))
    return np.sum(x)


def set_of_x(x):
    s = {x[0], x[1]}
    return x[0] * len(s)


def test_constant_sets():
    for mode in ("train", "other"):
        _check(by_mode, X, mode)
    with pytest.raises(srcad.SrcadError, match="set") as e:
        srcad.grad(set_of_x)(X)
    assert e.value.lineno == _line_of(set_of_x, "s = {")


# --- generator functions as callees ---------------------------------------------------------------
def batches(x):
    for i in range(3):
        yield x[i] * (i + 1.0)


def windows(x, k):
    for i in range(len(x) - k + 1):
        w = x[i:i + k]
        if np.sum(w) > 100.0:
            return
        yield np.mean(w)


def for_over_generator(x):
    s = 0.0
    for v in batches(x):
        s = s + np.sum(np.sin(v))
    return s


def sum_of_generator(x):
    return sum(np.sum(v * v) for v in batches(x))


def list_of_generator(x):
    vs = list(batches(x))
    return np.sum(vs[0] * vs[2]) + len(vs)


def generator_with_return(x):
    return sum(windows(x, 2)) + max(windows(x, 3))


def generator_in_comprehension(x):
    ys = [np.tanh(v) for v in batches(x)]
    return np.sum(np.stack(ys) ** 2)


@pytest.mark.parametrize("fn, args", [
    (for_over_generator, (M,)), (sum_of_generator, (M,)), (list_of_generator, (M,)),
    (generator_with_return, (X,)), (generator_in_comprehension, (M,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_generators(fn, args):
    _check(fn, *args)


def noisy(x):
    for i in range(3):
        print("yielding", i)
        yield x[i]


def counter():
    i = 0
    while True:
        yield float(i)
        i += 1


def next_of_generator(x):
    it = batches(x)
    return np.sum(next(it))


def noisy_consumer(x):
    s = 0.0
    for v in noisy(x):
        print("got", v.shape)
        s = s + np.sum(v)
    return s


def noisy_break(x):
    s = 0.0
    for v in noisy(x):
        s = s + np.sum(v)
        break
    return s


def endless_zip(x):
    return sum(np.sum(v * c) for c, v in zip(counter(), x))


def delegating(x):
    yield from batches(x)


def uses_delegating(x):
    return sum(np.sum(v) for v in delegating(x))


@pytest.mark.parametrize("fn, text, line", [
    (next_of_generator, "not consumed whole", "it = batches"),
    (noisy_consumer, "effects of its own", "for v in noisy"),
    (noisy_break, "may stop before its end", "for v in noisy"),
    (endless_zip, "`while` loop", "zip(counter()"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_generator_refusals(fn, text, line):
    for mode in ("source", "tape"):
        with pytest.raises(srcad.SrcadError, match=text) as e:
            srcad.grad(fn, mode=mode)(M)
        assert e.value.lineno == _line_of(fn, line)


def test_yield_from_delegates_to_the_inner_generator():
    # (refused until the session of 2026-12-05, fifth: each item of `batches(x)` is yielded
    # as `for v in batches(x): yield v` yields it -- tests/test_probe17_forms.py)
    want = numerical_grad(uses_delegating, (M,))
    for mode in ("source", "tape"):
        v, g = srcad.value_and_grad(uses_delegating, mode=mode)(M)
        assert v == uses_delegating(M)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


# --- the forms inside a nested function and a method -----------------------------------------
def nested_forms(x):
    def inner(v):
        with np.errstate(divide="ignore"):
            w = np.log(v * v + 1.0)
            if np.sum(w) > 100.0:
                return w
        first, *rest = [w, v]
        for u in (1.0, 2.0):
            w = w * u
        else:
            w = w + rest[0]
        return w + first
    return np.sum(inner(x) * inner(2.0 * x))


class Layer:
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        with np.errstate(over="ignore"):
            h = np.tanh(x @ self.W)
        first, *rest = [h, x]
        for k in range(3):
            if k > 5:
                break
        else:
            h = h * 2.0
        return h + rest[0] @ self.W + first


def layer_forms(W, x):
    return np.sum(Layer(W).forward(x) ** 2)


def test_forms_in_nested_functions_and_methods():
    _check(nested_forms, X)
    _check(layer_forms, R.standard_normal((3, 3)), R.standard_normal((2, 3)))


# --- vjp, jvp and second order through the lowered forms ----------------------------------------
@pytest.mark.parametrize("fn, x", [
    (first_above, X), (while_else, X), (first_rest, X), (rows, M), (reversed_list, X),
    (for_over_generator, M), (in_a_loop, X), (star_add, X),
], ids=lambda v: getattr(v, "__name__", ""))
def test_vjp_jvp_second_order(fn, x):
    num = numerical_grad(fn, (x,))
    out, pull = srcad.vjp(fn, x)
    assert np.allclose(out, fn(x))
    assert rel_error(pull(1.0)[0], num) < 1e-6
    v = R.standard_normal(x.shape)
    value, tangent = srcad.jvp(fn, (x,), (v,))
    assert np.allclose(value, fn(x))
    assert np.allclose(tangent, np.sum(num * v), atol=1e-6)
    g = srcad.grad(fn)
    hv = srcad.jvp(g, (x,), (v,))[1]
    fd = (g(x + 1e-5 * v) - g(x - 1e-5 * v)) / 2e-5
    assert np.allclose(hv, fd, atol=1e-4)
    gg = srcad.grad(lambda y: np.sum(g(y) ** 2))(x)
    assert rel_error(gg, numerical_grad(lambda y: np.sum(g(y) ** 2), (x,))) < 1e-5
