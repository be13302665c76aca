"""Lists and dicts a module (or a closure) keeps, changed in place by the differentiated code:
``history.append(h)``, ``CACHE["h"] = h``, ``ACTS.extend(...)``, ``STATS.update(...)``, a
factory's ``log = []`` appended by the function it returns. Python stores the very values
the call computed; the transformed function must leave the container as calling the function
leaves it (plain arrays, once per call), and give the function's gradient.

Before: source mode refused a stored value the output also reads (the bound method was an
unknown library function that "may change" its arguments) and ``CACHE[k] = v`` ("assignment
into something other than a local array"); it ran ``history.append(x * 2)`` and then read
``history[-1]`` as a constant -- the value right, the **gradient zero** -- and tape mode left
its own Tensors in the user's list.

A read of such a container in the same call after a store of a differentiated value would
need the container followed as a value (what srcad does for the containers an object keeps,
tests/test_object_containers.py): it is refused at the read, in both modes."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

history: list = []
CACHE: dict = {}
STATE: dict = {"h": np.zeros(4)}
ACTS: list = []
_R = np.random.RandomState(5)
W = _R.uniform(-0.7, 0.7, (4, 4))


def logs_its_hidden_layer(x):
    h = np.tanh(x @ W)
    history.append(h)
    return np.sum(h ** 2)


def caches_by_key(x):
    z = x @ W
    h = np.tanh(z)
    CACHE["z"] = z
    CACHE["h"] = h
    return np.sum(h * z)


def logs_a_scalar_and_a_copy(x):
    h = np.sin(x)
    loss = np.sum(h * h)
    history.append(float(loss))
    history.append(h.copy())
    return loss


def extends_and_updates(x):
    a = np.tanh(x)
    b = a * 2.0
    ACTS.extend([a, b])
    CACHE.update({"a": a}, b=b)
    CACHE.setdefault("first", a)
    return np.sum(a * b)


def _forward_layer(x):
    h = np.tanh(x @ W)
    ACTS.append(h)  # (in a callee, in a loop of its caller)
    return h


def a_callee_logs_each_layer(x):
    h = x
    for _ in range(3):
        h = _forward_layer(h)
    return np.sum(h)


def _make_logged(log):
    def f(x):
        y = np.exp(x)
        log.append(y)
        return np.sum(y * x)

    return f


_CLOSURE_LOG: list = []
a_closure_logs = _make_logged(_CLOSURE_LOG)

CASES = [
    (logs_its_hidden_layer, lambda x: [np.tanh(x @ W)], history),
    (caches_by_key, lambda x: [x @ W, np.tanh(x @ W)], CACHE),
    (logs_a_scalar_and_a_copy, lambda x: [float(np.sum(np.sin(x) ** 2)), np.sin(x)], history),
    (extends_and_updates, lambda x: [np.tanh(x), 2.0 * np.tanh(x)], ACTS),
    (a_callee_logs_each_layer, None, ACTS),
    (a_closure_logs, lambda x: [np.exp(x)], _CLOSURE_LOG),
]


def _reset():
    for c in (history, CACHE, ACTS, _CLOSURE_LOG):
        c.clear()
    STATE["h"] = np.zeros(4)


def _plain(v):
    return type(v) in (float, np.ndarray) or isinstance(v, np.generic)


@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
@pytest.mark.parametrize("case", CASES, ids=[c[0].__name__ for c in CASES])
def test_stores_into_a_module_container(case, mode):
    fn, expect, container = case
    x = _R.uniform(-1, 1, (2, 4)) if fn is not a_closure_logs else _R.uniform(-1, 1, 5)
    opts = {"tape": {"mode": "tape"}, "fused": {"fuse": True}, "source": {}}[mode]
    _reset()
    fn(x)
    want = list(container.values()) if isinstance(container, dict) else list(container)
    want_keys = list(container) if isinstance(container, dict) else None
    num = numerical_grad(lambda v: _value(fn, v), (x,))
    vg = srcad.value_and_grad(fn, **opts)
    for call in range(2):  # (the first call also probes shapes: the stores happen once)
        _reset()
        value, g = vg(x)
        assert value == _value(fn, x)
        assert rel_error(g, num) < 1e-6, (mode, call)
        got = list(container.values()) if isinstance(container, dict) else list(container)
        if want_keys is not None:
            assert list(container) == want_keys
        assert len(got) == len(want), (mode, call, len(got), len(want))
        for a, b in zip(got, want):
            assert _plain(a), type(a)
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    if expect is not None:
        for a, b in zip(want, expect(x)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


def _value(fn, x):
    """fn(x) as Python computes it, the containers left as they were."""
    saved = [list(history), dict(CACHE), list(ACTS), list(_CLOSURE_LOG)]
    try:
        return fn(x)
    finally:
        _reset()
        history.extend(saved[0])
        CACHE.update(saved[1])
        ACTS.extend(saved[2])
        _CLOSURE_LOG.extend(saved[3])


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp"])
def test_other_transforms_store_once(transform):
    x = _R.uniform(-1, 1, (2, 4))
    _reset()
    if transform == "grad":
        srcad.grad(logs_its_hidden_layer)(x)
    elif transform == "vjp":
        out, pullback = srcad.vjp(logs_its_hidden_layer, x)
        pullback(1.0)
    else:
        srcad.jvp(logs_its_hidden_layer, (x,), (np.ones_like(x),))
    assert len(history) == 1 and type(history[0]) is np.ndarray
    np.testing.assert_allclose(history[0], np.tanh(x @ W), rtol=1e-12)


def test_a_checkpointed_store_is_refused():
    """Recomputing the checkpointed call would store again: refused as a checkpointed print
    is, at the call."""
    def loss(x):
        h = srcad.checkpoint(_forward_layer)(x)
        return np.sum(h ** 2)

    _reset()
    with pytest.raises(srcad.SrcadError, match="ACTS.append") as e:
        srcad.grad(loss)(_R.uniform(-1, 1, (2, 4)))
    assert e.value.filename == __file__
    assert ACTS == []


def reads_back_what_it_stored(x):
    history.append(x * 2.0)
    return np.sum(history[-1] ** 2)


def reads_back_by_key(x):
    CACHE["h"] = np.tanh(x)
    return np.sum(CACHE["h"])


def _reads_the_log():
    return ACTS[-1]


def a_callee_reads_back(x):
    ACTS.append(np.sin(x))
    return np.sum(_reads_the_log() * x)


def sums_the_whole_log(x):
    history.append(x * 2.0)
    return np.sum(sum(history) ** 2)


def carries_a_state_in_a_loop(xs):
    for x in xs:  # (the second step's read comes after the first step's store)
        h = np.tanh(x + STATE["h"])
        STATE["h"] = h
    return np.sum(STATE["h"] ** 2)


def _step_state(x):
    STATE["h"] = np.sin(x)


def reads_what_a_callee_stored(x):
    _step_state(x)
    return np.sum(STATE["h"] * x)


def reads_in_a_checkpointed_loop_then_stores(xs):
    # (the loop runs again in the backward, after the store: it would read the new state)
    h = np.zeros(4)
    for t in srcad.checkpoint(range(len(xs)), every=2):
        h = np.tanh(xs[t] + h * STATE["h"])
    STATE["h"] = h
    return np.sum(h ** 2)


READ_BACK = [reads_back_what_it_stored, reads_back_by_key, a_callee_reads_back,
             sums_the_whole_log, carries_a_state_in_a_loop, reads_what_a_callee_stored,
             reads_in_a_checkpointed_loop_then_stores]


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", READ_BACK, ids=lambda f: f.__name__)
def test_a_read_after_a_store_is_refused(fn, mode):
    """The value read back is the stored value's, its gradient would be lost (it was zero in
    source mode); tape mode refuses what source mode refuses, at the same line."""
    x = _R.uniform(-1, 1, (3, 4) if fn in (carries_a_state_in_a_loop,
                                           reads_in_a_checkpointed_loop_then_stores) else 4)
    _reset()
    history.append(np.zeros(4))  # (a later call: the container is not empty)
    ACTS.append(np.zeros(4))
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(fn, mode=mode)(x)
    assert e.value.filename == __file__
    assert "stores a value depending on the differentiated arguments" in str(e.value)
    assert e.value.lineno in _read_lines(fn)


def _read_lines(fn):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    out = {first + i for i, text in enumerate(lines) if "history" in text.split("=")[-1] and
           "append" not in text or "CACHE[" in text.split("=")[-1] or "ACTS[" in text or
           "STATE[" in text.split("=")[-1]}
    return out | ({_reads_the_log.__code__.co_firstlineno + 1} if fn is a_callee_reads_back
                  else set())


def stores_then_writes_in_place(x):
    h = np.tanh(x)
    history.append(h)
    h[0] = 0.0
    return np.sum(h)


def test_a_stored_array_written_after_is_refused():
    with pytest.raises(srcad.SrcadError, match="in place"):
        srcad.grad(stores_then_writes_in_place)(_R.uniform(-1, 1, 4))


# -- a read before every store: what an earlier call left, a constant of this call ------------
HIDDEN: dict = {"h": np.zeros(4)}
RUNNING: dict = {"mean": np.zeros(4)}
STEPS: list = [np.zeros(4)]


def a_hidden_state_kept_across_calls(x, W):
    h = np.tanh(W @ x + HIDDEN["h"])
    HIDDEN["h"] = h
    return np.sum(h ** 2)


def a_running_mean(X):
    mu = np.mean(X, axis=0)
    RUNNING["mean"] = 0.9 * RUNNING["mean"] + 0.1 * mu
    return np.sum(np.tanh(X - mu) ** 2)


def the_last_step_and_the_count(x, W):
    prev = STEPS[-1]
    total = sum(STEPS)
    h = np.tanh(W @ x + prev + 0.1 * total) * len(STEPS)
    first = STEPS[0]
    for k in range(2):  # (a loop reading a name bound before it)
        h = h + 0.01 * first * k
    STEPS.append(h)
    return np.sum(h ** 2)


def _state_of(fn):
    return {a_hidden_state_kept_across_calls: HIDDEN, a_running_mean: RUNNING,
            the_last_step_and_the_count: STEPS}[fn]


@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
@pytest.mark.parametrize("fn", [a_hidden_state_kept_across_calls, a_running_mean,
                                the_last_step_and_the_count], ids=lambda f: f.__name__)
def test_a_read_before_every_store_reads_the_last_call(fn, mode):
    opts = {"tape": {"mode": "tape"}, "fused": {"fuse": True}, "source": {}}[mode]
    state = _state_of(fn)
    if isinstance(state, list):
        state[:] = [np.zeros(4)]
    else:
        state[next(iter(state))] = np.zeros(4)
    args = (_R.uniform(-1, 1, (3, 4)),) if fn is a_running_mean else (
        _R.uniform(-1, 1, 4), _R.uniform(-0.6, 0.6, (4, 4)))
    vg = srcad.value_and_grad(fn, **opts)
    for call in range(3):  # (each call reads what the one before stored)
        before = copy.deepcopy(state)

        def plain(*a):
            if isinstance(state, list):
                state[:] = copy.deepcopy(before)
            else:
                state.update(copy.deepcopy(before))
            return fn(*a)

        num = numerical_grad(plain, args)
        want = plain(*args)
        after = copy.deepcopy(state)
        plain(*args)  # (state as before the call again)
        if isinstance(state, list):
            state[:] = copy.deepcopy(before)
        else:
            state.update(copy.deepcopy(before))
        value, g = vg(*args)
        assert value == want, (mode, call)
        assert rel_error(g, num) < 1e-6, (mode, call)
        items = state if isinstance(state, list) else list(state.values())
        want_items = after if isinstance(after, list) else list(after.values())
        assert len(items) == len(want_items)
        for a, b in zip(items, want_items):
            assert type(a) is np.ndarray
            np.testing.assert_array_equal(a, b)
