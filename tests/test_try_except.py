"""try / except / else / finally inside a differentiated function (issue 23, the front door;
srcad/frontend/trylower.py). Each case: the value is what calling the function gives, in
source and tape mode (and fuse=True for some), and the gradient matches central differences;
where srcad cannot keep Python's meaning, a SrcadError at the user's line that says what to
write instead."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(23)
X = R.standard_normal(4)
W = R.standard_normal((4, 3))
A = R.standard_normal((4, 4))
SPD = A @ A.T + 4.0 * np.eye(4)  # cholesky works
SING = np.outer(X, X)  # rank one: cholesky fails, the jitter makes it work
MODES = ("source", "tape")


def _check(fn, *args, wrt=0, modes=MODES, value=None, **options):
    """`fn`'s value and gradient in each mode against calling it and central differences."""
    want = fn(*args) if value is None else value()
    num = numerical_grad(fn, args, wrt=wrt)
    for mode in modes:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v, g = srcad.value_and_grad(fn, wrt=wrt, mode=mode, **options)(*args)
        assert np.allclose(np.asarray(v), np.asarray(want), rtol=1e-12, atol=1e-12), \
            (mode, v, want)
        assert rel_error(g, num) < 1e-6, (mode, g, num)


# --- the jitter fallback of a GP's log-likelihood ------------------------------------------------
def gp_loglik(K, y):
    n = K.shape[0]
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(K + 1e-1 * np.eye(n))
    alpha = np.linalg.solve(L, y)
    return -0.5 * np.sum(alpha * alpha) - np.sum(np.log(np.abs(np.diag(L))))


@pytest.mark.parametrize("K", [SPD, SING + 0.0], ids=["spd", "singular"])
def test_cholesky_jitter_fallback(K):
    _check(gp_loglik, K, X)
    _check(gp_loglik, K, X, modes=("source",), fuse=True)


def is_positive_definite(K):
    try:
        np.linalg.cholesky(K)  # (its value unused: only whether it raises)
        pd = True
    except np.linalg.LinAlgError:
        pd = False
    if pd:
        return np.sum(K * 2.0)
    return np.sum(K * K)


@pytest.mark.parametrize("K", [SPD, SING + 0.0], ids=["spd", "singular"])
def test_cholesky_as_a_test(K):
    _check(is_positive_definite, K)


# --- a dict lookup with a fallback ---------------------------------------------------------------
CACHE = {"warm": np.full(3, 0.5)}


def cached_hidden(x, key):
    try:
        h = CACHE[key]
    except KeyError:
        h = np.tanh(x @ W)
    return np.sum(h * h) + np.sum(x)


@pytest.mark.parametrize("key", ["warm", "cold"])
def test_dict_lookup_fallback(key):
    _check(cached_hidden, X, key)
    _check(cached_hidden, X, key, modes=("source",), fuse=True)


def test_dict_lookup_sees_the_dict_at_each_call():
    g = srcad.grad(cached_hidden)
    assert np.allclose(g(X, "fresh"), numerical_grad(cached_hidden, (X, "fresh")))
    CACHE["fresh"] = np.ones(3)
    try:
        assert np.allclose(g(X, "fresh"), np.ones(4))  # (h is the cached constant now)
    finally:
        del CACHE["fresh"]


# --- try/finally ---------------------------------------------------------------------------------
COUNTER = []


def step(x):
    return np.tanh(x) * 2.0


def counted(x, stats):
    try:
        out = step(x)
    finally:
        stats["calls"] += 1
    return np.sum(out * x)


@pytest.mark.parametrize("mode", MODES)
def test_try_finally_runs_the_finally_block_once_per_call(mode):
    stats = {"calls": 0}
    num = numerical_grad(counted, (X, stats))
    stats["calls"] = 0
    g = srcad.grad(counted, mode=mode)
    for k in range(3):
        assert rel_error(g(X, stats), num) < 1e-6
    assert stats["calls"] == 3


def strict_step(x):
    if np.sum(x) > 100.0:
        raise ValueError("too large")
    return np.tanh(x)


def counted_raising(x, stats):
    try:
        out = strict_step(x)
    finally:
        stats["calls"] += 1
    return np.sum(out)


@pytest.mark.parametrize("mode", MODES)
def test_try_finally_runs_the_finally_block_when_the_exception_propagates(mode):
    stats = {"calls": 0.0}  # (a float: an int in a dict argument is specialised on, each
    # new value a new first call: test_first_call_that_raises_runs_the_finally_block)
    g = srcad.grad(counted_raising, mode=mode)
    assert rel_error(g(X, stats), 1.0 - np.tanh(X) ** 2) < 1e-9
    assert stats["calls"] == 1
    with pytest.raises(ValueError, match="too large"):
        g(X + 1000.0, stats)
    assert stats["calls"] == 2


def test_first_call_that_raises_runs_the_finally_block():
    """srcad's first call runs the IR once to learn shapes (srcad/probe.py) with effects
    skipped; an exception the user's code raises there was raised before the real run, so
    the effects before it (here the finally block's store) did not happen on that call. The
    call is now made as Python makes it."""
    stats = {"calls": 0}
    with pytest.raises(ValueError, match="too large"):
        srcad.grad(counted_raising)(X + 1000.0, stats)
    assert stats["calls"] == 1
    with pytest.raises(ValueError, match="too large"):  # (a new specialisation: int calls)
        srcad.value_and_grad(counted_raising)(X + 1000.0, stats)
    assert stats["calls"] == 2


def finally_pure(x):
    try:
        y = np.sin(x)
    finally:
        z = 2.0
    return np.sum(y * z)


def test_finally_that_only_computes():
    _check(finally_pure, X)
    _check(finally_pure, X, modes=("source",), fuse=True)


# --- the user's own raise, several types, as e, else -----------------------------------------
def checked_div(x, d):
    if d == 0.0:
        raise ZeroDivisionError("d is zero")
    if d < 0.0:
        raise ValueError(f"negative d {d}")
    return x / d


def several(x, d):
    try:
        y = checked_div(x, d)
    except (ValueError, ZeroDivisionError) as e:
        msg = str(e)
        y = np.sin(x) * len(msg)
    else:
        y = y * 3.0
    return np.sum(y * y)


@pytest.mark.parametrize("d", [2.0, 0.0, -1.0])
def test_tuple_of_types_as_e_and_else(d):
    _check(several, X, d)
    _check(several, X, d, modes=("source",), fuse=True)


def own_raise(x):
    try:
        s = np.sum(x)
        if s > 0.0:
            raise ValueError("positive")
        y = x * 2.0
    except ValueError:
        y = np.exp(x)
    return np.sum(y)


@pytest.mark.parametrize("x", [np.abs(X), -np.abs(X)], ids=["raises", "completes"])
def test_user_raise_in_the_body(x):
    # (tape mode: what the tape recorded before the raise, np.sum(x), is dead: it adds nothing)
    _check(own_raise, x)


def handler_order(x, d):
    try:
        y = checked_div(x, d)
    except ZeroDivisionError:
        y = x * 5.0
    except Exception as e:
        y = x * float(len(e.args))
    return np.sum(y * x)


@pytest.mark.parametrize("d", [0.0, -1.0, 4.0])
def test_handlers_in_order_and_except_exception(d):
    _check(handler_order, X, d)


def bare_except(x, d):
    try:
        y = checked_div(x, d)
    except:  # noqa: E722
        y = np.cos(x)
    return np.sum(y)


@pytest.mark.parametrize("d", [0.0, 3.0])
def test_bare_except(d):
    _check(bare_except, X, d)


# --- exceptions that leave ---------------------------------------------------------------------
def uncaught(x, d):
    try:
        y = checked_div(x, d)
    except KeyError:
        y = x
    return np.sum(y)


@pytest.mark.parametrize("mode", MODES)
def test_uncaught_exception_reaches_the_caller(mode):
    with pytest.raises(ZeroDivisionError, match="d is zero"):
        srcad.grad(uncaught, mode=mode)(X, 0.0)
    assert rel_error(srcad.grad(uncaught, mode=mode)(X, 2.0), np.full(4, 0.5)) < 1e-12


def fallback_fails_too(K):
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(K - 10.0 * np.eye(4))
    return np.sum(L)


def test_exception_from_a_handler_reaches_the_caller_after_a_first_call():
    g = srcad.grad(fallback_fails_too)
    g(SPD)
    with pytest.raises(np.linalg.LinAlgError):
        g(-SPD)
    with pytest.raises(np.linalg.LinAlgError):
        srcad.grad(fallback_fails_too, mode="tape")(-SPD)


def test_exception_from_a_handler_on_the_first_call_reaches_the_caller():
    """(The first call's shape probe reports the op's exception at the user's line as a
    SrcadError that is also a LinAlgError: errors.user_error.)"""
    with pytest.raises(np.linalg.LinAlgError) as info:
        srcad.grad(fallback_fails_too)(-SPD)
    assert isinstance(info.value, srcad.SrcadError) and "test_try_except.py" in str(info.value)


def reraises(x, d):
    try:
        y = checked_div(x, d)
    except ValueError:
        raise
    except ZeroDivisionError as e:
        raise RuntimeError(f"wrapped: {e}") from e
    return np.sum(y)


@pytest.mark.parametrize("mode", MODES)
def test_handler_that_raises(mode):
    with pytest.raises(ValueError, match="negative d"):
        srcad.grad(reraises, mode=mode)(X, -1.0)
    with pytest.raises(RuntimeError, match="wrapped: d is zero") as info:
        srcad.grad(reraises, mode=mode)(X, 0.0)
    assert isinstance(info.value.__cause__, ZeroDivisionError)  # (`from e`)
    assert rel_error(srcad.grad(reraises, mode=mode)(X, 2.0), np.full(4, 0.5)) < 1e-12


# --- nesting, loops, callees ---------------------------------------------------------------------
def nested(x, d, e):
    try:
        try:
            y = checked_div(x, d)
        except ZeroDivisionError:
            y = checked_div(x, e)
    except ValueError:
        y = np.tanh(x)
    return np.sum(y * y)


@pytest.mark.parametrize("d, e", [(2.0, 3.0), (0.0, 3.0), (0.0, -1.0), (-1.0, 3.0)])
def test_nested_try(d, e):
    _check(nested, X, d, e)


def in_loop(x, ds):
    h = x
    for d in ds:
        try:
            h = checked_div(h, d)
        except ZeroDivisionError:
            h = np.sin(h)
    return np.sum(h)


def test_try_in_a_loop():
    _check(in_loop, X, [2.0, 0.0, 4.0, 0.0])


def loop_continue(x, ds):
    acc = 0.0
    for d in ds:
        try:
            y = checked_div(x, d)
        except ZeroDivisionError:
            continue
        acc = acc + np.sum(y * y)
    return acc


def test_continue_in_a_handler():
    _check(loop_continue, X, [2.0, 0.0, 4.0])


def early_return(x, d):
    try:
        y = checked_div(x, d)
    except ZeroDivisionError:
        return np.sum(np.cos(x))
    return np.sum(y * y)


@pytest.mark.parametrize("d", [0.0, 2.0])
def test_return_in_a_handler(d):
    _check(early_return, X, d)


def safe_log(x):
    try:
        y = np.log(x)
        if not np.all(np.isfinite(y)):
            raise FloatingPointError("log of a non-positive value")
    except FloatingPointError:
        y = np.log(np.abs(x) + 1e-3)
    return y


def calls_safe_log(x):
    return np.sum(safe_log(x) * x)


def test_try_in_a_callee():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(calls_safe_log, np.abs(X) + 0.1)
        _check(calls_safe_log, X)


def errstate_log(x):
    try:
        y = np.log(x)
    except FloatingPointError:
        y = np.log(np.abs(x) + 0.5)
    return np.sum(y * y)


@pytest.fixture
def raise_on_float_errors():
    old = np.seterr(all="raise")
    yield
    np.seterr(**old)


def test_floating_point_error_under_seterr(raise_on_float_errors):
    _check(errstate_log, X)  # (X has negative entries: np.log raises)
    _check(errstate_log, np.abs(X) + 0.5)


def same_name(x, d):
    h = x * 1.5
    try:
        h = h + checked_div(h, d)
    except ZeroDivisionError:
        h = h * 2.0
    return np.sum(h * h)


@pytest.mark.parametrize("d", [0.0, 2.0])
def test_body_reads_and_assigns_one_name(d):
    _check(same_name, X, d)


def last_assignment_only(x, d):
    y = x * 2.0
    try:
        y = checked_div(x, d)  # (nothing is assigned if this raises: y keeps its value)
    except ZeroDivisionError:
        pass
    return np.sum(y * x)


@pytest.mark.parametrize("d", [0.0, 2.0])
def test_handler_keeps_the_value_before_when_the_last_statement_raised(d):
    _check(last_assignment_only, X, d)


# --- other transforms ----------------------------------------------------------------------------
def test_vjp_and_jvp():
    for d in (0.0, 2.0, -1.0):
        out, pb = srcad.vjp(lambda x: several(x, d), X)
        assert np.allclose(out, several(X, d))
        (gx,) = pb(1.0)
        assert rel_error(gx, numerical_grad(several, (X, d))) < 1e-6
        v = R.standard_normal(4)
        out, tan = srcad.jvp(several, (X, d), (v, 0.0))
        assert np.allclose(out, several(X, d))
        assert abs(tan - np.dot(numerical_grad(several, (X, d)), v)) < 1e-6


def scaled(s, d):
    return several(s * X, d)


def grad_norm(x, d):
    g = srcad.grad(several)(x, d)  # (a transform inside: the outer goes through its own)
    return np.sum(g * g)


@pytest.mark.parametrize("d", [0.0, 2.0])
def test_grad_of_grad(d):
    gg = srcad.grad(srcad.grad(scaled))(0.7, d)
    num = numerical_grad(srcad.grad(scaled), (0.7, d))
    assert rel_error(gg, num) < 1e-5, (d, gg, num)
    g = srcad.grad(grad_norm)(X, d)
    assert rel_error(g, numerical_grad(grad_norm, (X, d))) < 1e-5
    hv = srcad.jvp(srcad.grad(several), (X, d), (X, 0.0))[1]
    assert rel_error(hv, numerical_grad(lambda x: np.dot(srcad.grad(several)(x, d), X),
                                        (X,))) < 1e-5


# --- refusals ------------------------------------------------------------------------------------
def _line_of(fn, marker="# refused"):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, t in enumerate(lines) if marker in t)


def partial_read_in_handler(x, d):
    try:
        y = np.sin(x)
        z = checked_div(y, d)
    except ZeroDivisionError:
        z = y * 2.0  # refused
    return np.sum(z)


def partial_read_after(x, d):
    y = x
    try:
        y = np.sin(x)
        z = checked_div(y, d)
    except ZeroDivisionError:
        z = x
    return np.sum(z * y)  # refused


def print_in_body(x):
    try:
        y = np.sin(x)
        print("computed")  # refused
    except ValueError:
        y = x
    return np.sum(y)


def store_in_body(x, d, stats):
    try:
        stats["calls"] += 1  # refused
        y = checked_div(x, d)
    except ZeroDivisionError:
        y = x
    return np.sum(y)


def noisy_step(x):
    COUNTER.append(1)
    return np.tanh(x)


def callee_effect_in_body(x):
    try:
        y = noisy_step(x)  # refused
    except ValueError:
        y = x
    return np.sum(y)


def random_in_body(x):
    try:
        y = x + np.random.normal(size=x.shape)  # refused
    except ValueError:
        y = x
    return np.sum(y)


def inplace_in_body(x):
    try:
        x += 1.0  # refused
    except ValueError:
        pass
    return np.sum(x)


def return_with_finally(x, stats):
    try:
        if np.sum(x) > 0:
            return np.sum(step(x))  # refused
        y = x * 2.0
    finally:
        stats["calls"] += 1
    return np.sum(y)


def returns_then_finally(x, d, stats):
    try:
        return np.sum(checked_div(x, d) ** 2)
    except ZeroDivisionError:
        return np.sum(np.cos(x))
    finally:
        stats["calls"] += 1.0


def returns_then_pure_finally(x, d):
    try:
        y = checked_div(x, d)
        return np.sum(y * y)
    finally:
        z = 1.0
    return z


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("d", [0.0, 2.0])
def test_return_as_the_last_statement_with_finally(d, mode):
    stats = {"calls": 0.0}
    v, g = srcad.value_and_grad(returns_then_finally, mode=mode)(X, d, stats)
    assert stats["calls"] == 1.0
    assert np.allclose(v, returns_then_finally(X, d, {"calls": 0.0}))
    assert rel_error(g, numerical_grad(returns_then_finally, (X, d, {"calls": 0.0}))) < 1e-6
    if d:
        _check(returns_then_pure_finally, X, d)


REFUSED = [
    (partial_read_in_handler, (X, 0.0), "read in an except block"),
    (partial_read_after, (X, 0.0), "read here after a try statement"),
    (print_in_body, (X,), "twice"),
    (store_in_body, (X, 0.0, {"calls": 0}), "twice"),
    (callee_effect_in_body, (X,), "noisy_step"),
    (random_in_body, (X,), "random draw"),
    (inplace_in_body, (X,), "update in place"),
    (return_with_finally, (X, {"calls": 0}), "finally block"),
]


def view_write_in_body(x, d):
    try:
        v = x[:2]
        v[0] = 5.0  # refused
        y = checked_div(x, d)
    except ZeroDivisionError:
        y = x
    return np.sum(y)


def alias_update_in_body(x, d):
    try:
        y = checked_div(x, d)
        v = step(y)
        v += 1.0  # refused
    except ZeroDivisionError:
        v = x
    return np.sum(v)


class Dense:
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return np.tanh(x @ self.W)


def built_object_in_body(x, W):
    layer = Dense(W)
    try:
        h = layer.forward(x)  # refused
    except ValueError:
        h = x[:3]
    return np.sum(h * h)


def partial_read_next_iteration(x, ds):
    h = x
    acc = 0.0
    for d in ds:
        acc = acc + np.sum(h)  # refused
        try:
            h = np.sin(h)
            q = checked_div(h, d)
        except ZeroDivisionError:
            q = x
        acc = acc + np.sum(q)
    return acc


REFUSED += [
    (partial_read_next_iteration, (X, [1.0, 0.0]), "read here after a try statement"),
    (view_write_in_body, (X, 0.0), "store into an object from outside"),
    (alias_update_in_body, (X, 0.0), "update in place"),
    (built_object_in_body, (X, W), "built in this function"),
]


def fresh_writes_in_body(x, d):
    try:
        out = np.zeros(4)
        out[1:] = checked_div(x[1:], d)
        acc = np.tanh(x)
        acc += out
    except ZeroDivisionError:
        acc = x * 1.0
    return np.sum(acc * acc)


@pytest.mark.parametrize("d", [0.0, 2.0])
def test_writes_into_arrays_the_body_makes(d):
    _check(fresh_writes_in_body, X, d)


# --- where the body's names come from ------------------------------------------------------------
def layer_argument(x, layer):
    try:
        h = layer.forward(x)
    except ValueError:
        h = x[:3]
    return np.sum(h * h)


def test_object_passed_as_an_argument():
    _check(layer_argument, X, Dense(W))


class Model:
    def __init__(self, W):
        self.W = W

    def loss(self, x):
        try:
            h = np.log(check_positive(x @ self.W))
        except ValueError:
            h = np.tanh(x @ self.W)
        return np.sum(h)


def check_positive(v):
    if not np.all(v > 0):
        raise ValueError("not positive")
    return v


def test_bound_method_reads_self():
    _check(Model(W).loss, X)
    _check(Model(np.abs(W)).loss, np.abs(X))


def make_closure(scale):
    def f(x):
        try:
            y = np.sum(np.log(check_positive(x))) * scale
        except ValueError:
            y = np.sum(x * x) * scale
        return y
    return f


def test_closure_cells():
    _check(make_closure(2.0), X)
    _check(make_closure(2.0), np.abs(X))


def nested_def_with_try(x):
    def inner(v):
        try:
            r = np.log(check_positive(v))
        except ValueError:
            r = v * 2.0
        return r
    return np.sum(inner(x) * x)


def test_nested_def_with_try():
    _check(nested_def_with_try, X)
    _check(nested_def_with_try, np.abs(X))


def try_in_handler(x, d):
    try:
        y = checked_div(x, d)
    except ZeroDivisionError:
        try:
            y = np.log(check_positive(x))
        except ValueError:
            y = x * 3.0
    return np.sum(y)


@pytest.mark.parametrize("x", [X, np.abs(X)], ids=["inner-raises", "inner-completes"])
def test_try_in_a_handler(x):
    _check(try_in_handler, x, 0.0)


def break_in_body(x, n):
    h = x
    k = 0
    while True:
        try:
            if k >= n:
                break
            h = np.sin(h)
        except ValueError:
            pass
        k = k + 1
    return np.sum(h)


def test_break_in_the_body():
    _check(break_in_body, X, 3)


# --- more forms ----------------------------------------------------------------------------------
def return_in_body(x, d):
    try:
        y = checked_div(x, d)
        return np.sum(y * y)
    except ZeroDivisionError:
        y = np.sin(x)
    return np.sum(y)


@pytest.mark.parametrize("d", [0.0, 2.0])
def test_return_in_the_body(d):
    _check(return_in_body, X, d)


class SolverError(Exception):
    pass


def solve_or_fail(A, b):
    if np.linalg.cond(A) > 1e8:
        raise SolverError("ill-conditioned")
    return np.linalg.solve(A, b)


def user_exception(A, b):
    try:
        z = solve_or_fail(A, b)
    except SolverError:
        z = np.linalg.lstsq(A + np.eye(4), b, rcond=None)[0]
    return np.sum(z * z)


@pytest.mark.parametrize("A", [SPD, SING], ids=["solves", "fails"])
def test_users_exception_class(A):
    _check(user_exception, A, X)


def dict_argument(x, cache, key):
    try:
        h = cache[key]
    except KeyError:
        h = np.tanh(x @ W)
    return np.sum(h * h) + np.sum(x * x)


@pytest.mark.parametrize("key", ["warm", "cold"])
def test_dict_argument_lookup(key):
    _check(dict_argument, X, {"warm": np.full(3, 0.5)}, key)


def test_jvp_through_cholesky_fallback_and_finally():
    for K in (SPD, SING):
        v = R.standard_normal((4, 4))
        out, tan = srcad.jvp(gp_loglik, (K, X), (v, np.zeros(4)))
        assert np.allclose(out, gp_loglik(K, X))
        assert abs(tan - np.sum(numerical_grad(gp_loglik, (K, X)) * v)) < 1e-5
    stats = {"calls": 0.0}
    out, tan = srcad.jvp(counted, (X, stats), (X, None))
    assert stats["calls"] == 1.0 and np.allclose(out, counted(X, {"calls": 0.0}))
    assert abs(tan - np.dot(numerical_grad(counted, (X, {"calls": 0.0})), X)) < 1e-6


def conditional_assignment_in_body(x, d, flag):
    y = x * 0.5
    try:
        if flag:
            y = np.cos(x)
        z = checked_div(y, d) + np.sum([y * k for k in range(2)])
        f = lambda v: v * y  # noqa: E731
        z = f(z)
    except ZeroDivisionError:
        z = x * 4.0
    return np.sum(z)


@pytest.mark.parametrize("flag", [False, True])
@pytest.mark.parametrize("d", [0.0, 2.0])
def test_body_reads_a_name_it_assigns_only_on_one_path(d, flag):
    _check(conditional_assignment_in_body, X, d, flag)


def all_four(x, d, stats):
    try:
        y = checked_div(x, d)
    except ZeroDivisionError as e:
        y = x * len(str(e))
    else:
        y = y + 1.0
    finally:
        stats["calls"] += 1.0
    return np.sum(y * y)


def partial_read_in_finally(x, d, stats):
    try:
        y = np.sin(x)
        z = checked_div(y, d)
    except ZeroDivisionError:
        z = x
    finally:
        stats["last"] = np.sum(y)  # refused
    return np.sum(z)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("d", [0.0, 2.0, -1.0])
def test_except_else_finally_with_an_effect(d, mode):
    stats = {"calls": 0.0}
    g = srcad.value_and_grad(all_four, mode=mode)
    if d < 0:  # (the handler does not take the ValueError: it leaves, after the finally)
        g(X, 2.0, stats)
        with pytest.raises(ValueError, match="negative d"):
            g(X, d, stats)
        assert stats["calls"] == 2.0
        return
    v, dx = g(X, d, stats)
    assert stats["calls"] == 1.0
    assert np.allclose(v, all_four(X, d, {"calls": 0.0}))
    assert rel_error(dx, numerical_grad(all_four, (X, d, {"calls": 0.0}))) < 1e-6


def partial_read_in_try_finally(x, stats):
    try:
        y = np.sin(x)
        z = strict_step(y)
    finally:
        stats["last"] = np.sum(y)  # refused
    return np.sum(z)


def handler_effect_with_finally_effect(x, d, stats):
    try:
        y = checked_div(x, d)
    except ZeroDivisionError:
        print("fallback")  # refused
        y = x
    finally:
        stats["calls"] += 1.0
    return np.sum(y)


def handler_effect_without_finally_effect(x, d):
    try:
        y = checked_div(x, d)
    except ZeroDivisionError:
        print("fallback")
        y = x
    finally:
        z = 2.0
    return np.sum(y) * z


def test_effects_in_a_handler_run_once(capsys):
    _check(handler_effect_without_finally_effect, X, 0.0)
    capsys.readouterr()
    srcad.grad(handler_effect_without_finally_effect)(X, 0.0)  # (its shape probe skips it)
    assert capsys.readouterr().out == "fallback\n"


REFUSED += [(handler_effect_with_finally_effect, (X, 0.0, {"calls": 0.0}), "except or else"),
            (partial_read_in_finally, (X, 0.0, {}), "read here after a try statement"),
            (partial_read_in_try_finally, (X, {}), "read in a finally block")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, args, what", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_refused_at_the_line(fn, args, what, mode):
    with pytest.raises(srcad.SrcadError, match=what) as info:
        srcad.grad(fn, mode=mode)(*args)
    err = info.value
    assert err.lineno == _line_of(fn), (err.lineno, str(err))
    assert err.filename.endswith("test_try_except.py")
    assert err.hint
