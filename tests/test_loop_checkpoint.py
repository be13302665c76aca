"""Loop checkpointing (`for l in srcad.checkpoint(range(n), every=k | snapshots=c)`):
the gradient is bit for bit that of the unchecked loop, and the forward keeps fewer states.

What this file proves:

* The schedules (srcad/checkpoint.py), by simulation: a `LoopCheckpoints` driven by a fake
  loop whose state is its own position restores the right state at each episode, reverses
  every step exactly once from last to first, never holds more than `schedule.snapshots`
  states (nor more than c for `snapshots=c`), and recomputes exactly `schedule.recomputed`
  steps; revolve realises Griewank's optimum t(n, c) (checked against a brute-force DP) and
  beats equidistant segments on long loops; `copy()` supports a second backward sweep.
* The control-flow corpus (tests/corpus_control.py) with every loop forced to be
  checkpointed (the `loop_schedules` option of `srcad.pipeline.build`, also reaching loops
  in called user functions) gives gradients and pullbacks (called twice) `np.array_equal` to
  the unchecked build, for sqrt, every-k and binomial schedules.
* User programs written with `srcad.checkpoint(...)` in a loop header -- MLP, RNN/LSTM with
  two carried states, user calls, branches, while loops, nested checkpointed loops, schedules
  given as parameters, zero- and one-trip loops, float32, arrays/lists/enumerate/zip -- give
  the same bits as the same program without it, through grad, value_and_grad, vjp (twice),
  jvp, jvp(grad), hessian and mode="tape".
* The generated code says it recomputes, and `srcad.explain` and measured peak memory show
  a long loop keeping about sqrt(n) states instead of n.
* Misuse is refused with the user's file and line.

Bugs found while writing it are the `xfail(strict=True)` tests at the end of the file.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from dataclasses import replace

import corpus_control as C
import numpy as np
import pytest
from test_control_flow import float_positions, make_args

import srcad
import srcad.runtime
from srcad import api, ir, pipeline
from srcad.checkpoint import (
    LoopCheckpoints,
    measure_peak,
    revolve_cost,
    revolve_schedule,
    schedule_for,
)

rng = np.random.default_rng(0)


def _equal(a, b) -> bool:
    """Bitwise equality of (nested tuples of) arrays, dtypes included."""
    if isinstance(a, (tuple, list)):
        return (isinstance(b, (tuple, list)) and len(a) == len(b)
                and all(_equal(x, y) for x, y in zip(a, b)))
    return np.result_type(a) == np.result_type(b) and np.array_equal(a, b)


# == 1. schedules, by simulation =================================================================


def simulate(steps, every=None, snapshots=None):
    """Drive a LoopCheckpoints the way generated code does, with a loop whose state before
    step position p is p itself. Returns (schedule, most states held at once, steps advanced
    in the backward)."""
    ck = LoopCheckpoints(steps, every=every, snapshots=snapshots)
    n = len(steps)
    most = 0
    for pos in range(n):  # the forward sweep
        ck.offer(pos)
        most = max(most, len(ck.kept_states()))
    reversed_steps, advanced = [], 0
    for advance, record in ck.episodes():
        pos = ck.restore()
        most = max(most, len(ck.kept_states()))
        assert list(advance) == list(steps[pos:pos + len(advance)]), \
            f"restored the state at {pos}, but the episode advances over {list(advance)}"
        for _ in advance:
            ck.offer(pos)
            pos += 1
            most = max(most, len(ck.kept_states()))
        advanced += len(advance)
        assert list(record) == list(steps[pos:pos + len(record)]) and len(record) >= 1
        reversed_steps += reversed(record)
    assert reversed_steps == list(reversed(steps)), "not every step reversed once, last first"
    assert ck.kept_states() == [], "the backward sweep leaves no states behind"
    return ck.schedule, most, advanced


@functools.cache
def brute_cost(n: int, c: int) -> int:
    """The fewest steps any recursive schedule with c states advances to reverse n steps."""
    if n <= 1:
        return 0
    if c == 1:
        return n * (n - 1) // 2
    return min(ell + brute_cost(n - ell, c - 1) + brute_cost(ell, c) for ell in range(1, n))


@functools.cache
def brute_cost_free_sweep(n: int, c: int) -> int:
    """The same with srcad's forward sweep, which runs every step once anyway and may keep
    any state it passes: after the first kept state, the part to its right costs nothing to
    reach."""
    if n <= 1:
        return 0
    if c == 1:
        return n * (n - 1) // 2
    return min(brute_cost_free_sweep(n - ell, c - 1) + brute_cost(ell, c)
               for ell in range(1, n))


def equidistant_cost(n: int, c: int) -> int:
    """Advances of keeping c evenly spaced states and reversing each segment from its start
    (the forward sweep, which passes every state once, is free)."""
    c = min(c, n)
    sizes = [n // c + (i < n % c) for i in range(c)]
    return sum(s * (s - 1) // 2 for s in sizes)


@pytest.mark.parametrize("n", range(1, 61))
def test_every_k_schedule_reverses_each_step_once(n):
    for k in [*range(1, n + 3), None]:
        schedule, most, advanced = simulate(range(n), every=k)
        kk = min(k, n) if k is not None else math.isqrt(n - 1) + 1
        assert schedule.n == n
        assert schedule.keep == frozenset(range(0, n, kk))
        assert most == schedule.snapshots == len(range(0, n, kk))
        assert advanced == schedule.recomputed == 0  # every step is recorded straight away
        assert schedule.longest_record == kk


@pytest.mark.parametrize("n", range(1, 61))
def test_default_schedule_keeps_about_sqrt_n_states(n):
    s = schedule_for(n)
    assert s.snapshots * s.longest_record >= n
    assert s.snapshots + s.longest_record <= 2 * math.isqrt(n - 1) + 2


@pytest.mark.parametrize("n", range(1, 61))
def test_revolve_schedule_reverses_each_step_once_within_c_states(n):
    for c in range(1, 14):
        schedule, most, advanced = simulate(range(n), snapshots=c)
        assert most == schedule.snapshots <= c
        assert advanced == schedule.recomputed
        assert schedule.longest_record == 1


@pytest.mark.parametrize("n", range(1, 61))
def test_revolve_realises_griewanks_optimum(n):
    for c in range(1, 12):
        s = revolve_schedule(n, c)
        assert revolve_cost(n, c) == brute_cost(n, c)
        # the forward sweep did the first descent already: never more than revolve's t(n, c)
        assert s.recomputed <= brute_cost(n, c)


def test_revolve_beats_equidistant_segments_on_long_loops():
    assert revolve_schedule(1000, 10).recomputed < equidistant_cost(1000, 10) // 10
    assert revolve_schedule(1000, 10).recomputed <= 3 * 1000  # at most ~3 extra sweeps


@pytest.mark.parametrize("make", [lambda n: range(7, 7 + 3 * n, 3), lambda n: range(n)[::-1],
                                  lambda n: range(2 * n, 0, -2)],
                         ids=["range-step-3", "reversed", "negative-step"])
def test_schedules_follow_any_range_of_steps(make):
    for n in (1, 2, 5, 17, 40):
        for kw in ({}, {"every": 3}, {"snapshots": 1}, {"snapshots": 3}):
            simulate(make(n), **kw)


def test_copy_gives_an_independent_backward_sweep():
    def sweep(ck):
        out = []
        for advance, record in ck.episodes():
            pos = ck.restore()
            out.append((pos, list(advance), list(record)))
            for _ in advance:
                ck.offer(pos)
                pos += 1
        return out

    for kw in ({"every": 4}, {"snapshots": 3}):
        ck = LoopCheckpoints(range(23), **kw)
        for p in range(23):
            ck.offer(p)
        kept = ck.kept_states()
        twin = ck.copy()
        first = sweep(ck)
        assert ck.kept_states() == [] and twin.kept_states() == kept
        assert sweep(twin) == first


def test_zero_step_loop_has_no_episodes():
    ck = LoopCheckpoints(range(0), snapshots=3)
    assert ck.schedule is None and list(ck.episodes()) == []
    assert "0 steps" in repr(ck)


def test_loop_checkpoints_validates_its_schedule():
    with pytest.raises(ValueError):
        LoopCheckpoints(range(4), every=0)
    with pytest.raises(ValueError):
        LoopCheckpoints(range(4), every=2, snapshots=2)
    with pytest.raises(ValueError):
        LoopCheckpoints(range(4), snapshots=2.0)


# == 2. the control-flow corpus, every loop forced to be checkpointed ============================

SCHEDULES = [(1, None), (2, None), (None, None), (None, 1), (None, 2), (None, 3)]


def _sid(sched):
    every, snaps = sched
    return "sqrt" if sched == (None, None) else (f"every{every}" if every else f"snap{snaps}")


def loops_of(fn_ir):
    """Every `for` loop without an early exit, in fn_ir and in the user functions it calls."""
    out = []
    for s in ir.walk(fn_ir.body):
        if isinstance(s, ir.For) and not s.exits:
            out.append(s)
        if isinstance(s, ir.UserCall):
            out += loops_of(s.callee)
    return out


def _has_loops(fn) -> bool:
    return bool(loops_of(api._ir_of(fn)))


LOOP_CASES = [name for name in sorted(C.CASES) if _has_loops(C.CASES[name][0])]
LOOP_CASES_F32 = [name for name in LOOP_CASES if name in C.FLOAT32_CASES]
VJP_LOOP_CASES = [name for name in sorted(C.VJP_CASES) if _has_loops(C.VJP_CASES[name][0])]


@functools.cache
def _plain(name, dtype, kind):
    cases = C.VJP_CASES if kind == "vjp" else C.CASES
    fn, args = make_args(name, dtype, seed=3 if kind == "vjp" else 0, cases=cases)
    t = api.Transformed(fn, kind, float_positions(args) if kind != "vjp" else (), {})
    plain = t.compiled(list(args))
    infos, _ = api.probe(t._ir, dict(zip(t.params, args)))
    wrt = t.wrt if kind != "vjp" else [p for p, a in zip(t.params, args) if api._is_float(a)]
    return t, args, plain, infos, wrt


def forced(name, dtype, kind, sched):
    """(args, the plain build, the build with every loop checkpointed under `sched`)."""
    t, args, plain, infos, wrt = _plain(name, np.dtype(dtype).type, kind)
    scheds = {id(loop): sched for loop in loops_of(t._ir)}
    ck = pipeline.build(t._ir, infos, "test",
                        replace(t.options, wrt=tuple(wrt), loop_schedules=scheds))
    assert ck.source.count("LoopCheckpoints(") >= 1, "the hook checkpointed no loop"
    return args, plain, ck


def _as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


def test_corpus_has_loops_to_checkpoint():
    assert len(LOOP_CASES) >= 60 and len(VJP_LOOP_CASES) >= 2 and len(LOOP_CASES_F32) >= 10


@pytest.mark.parametrize("sched", SCHEDULES, ids=_sid)
@pytest.mark.parametrize("name", LOOP_CASES)
def test_corpus_grad_is_bitwise_equal_when_loops_are_checkpointed(name, sched):
    args, plain, ck = forced(name, np.float64, "grad", sched)
    a = _as_tuple(plain.functions["main"](*args))
    b = _as_tuple(ck.functions["main"](*args))
    assert _equal(a, b)


@pytest.mark.parametrize("sched", [(2, None), (None, 2)], ids=_sid)
@pytest.mark.parametrize("name", LOOP_CASES_F32)
def test_corpus_grad_float32_is_bitwise_equal_when_loops_are_checkpointed(name, sched):
    args, plain, ck = forced(name, np.float32, "grad", sched)
    assert _equal(_as_tuple(plain.functions["main"](*args)),
                  _as_tuple(ck.functions["main"](*args)))


@pytest.mark.parametrize("sched", [(1, None), (2, None), (None, None), (None, 1), (None, 3)],
                         ids=_sid)
@pytest.mark.parametrize("name", VJP_LOOP_CASES)
def test_corpus_pullback_twice_is_bitwise_equal_when_loops_are_checkpointed(name, sched):
    args, plain, ck = forced(name, np.float64, "vjp", sched)
    out1, saved1 = plain.functions["fwd"](*args)
    out2, saved2 = ck.functions["fwd"](*args)
    assert _equal(out1, out2)
    ct = np.random.default_rng(4).standard_normal(np.shape(out1))
    expected = plain.functions["bwd"](srcad.runtime.fresh_stacks(saved1), ct)
    first = ck.functions["bwd"](srcad.runtime.fresh_stacks(saved2), ct)
    second = ck.functions["bwd"](srcad.runtime.fresh_stacks(saved2), ct)
    assert _equal(expected, first) and _equal(expected, second)


# == 3. user programs: srcad.checkpoint in the loop header vs the same loop without it ===========
#
# Each `<name>` has a twin `<name>_plain` with the same body and no srcad.checkpoint.


def mlp(x, Ws):
    h = x
    for l in srcad.checkpoint(range(Ws.shape[0])):
        h = np.tanh(h @ Ws[l])
    return np.sum(h * h)


def mlp_plain(x, Ws):
    h = x
    for l in range(Ws.shape[0]):
        h = np.tanh(h @ Ws[l])
    return np.sum(h * h)


def mlp_every(x, Ws, k):
    h = x
    for l in srcad.checkpoint(range(Ws.shape[0]), every=k):
        h = np.tanh(h @ Ws[l])
    return np.sum(h * h)


def mlp_snapshots(x, Ws, c):
    h = x
    for l in srcad.checkpoint(range(Ws.shape[0]), snapshots=c):
        h = np.tanh(h @ Ws[l])
    return np.sum(h * h)


def mlp_k_plain(x, Ws, k):
    return mlp_plain(x, Ws)


def mlp_every_expr(x, Ws):
    h = x
    for l in srcad.checkpoint(range(Ws.shape[0]), every=Ws.shape[0] // 3 + 1):
        h = np.tanh(h @ Ws[l])
    return np.sum(h * h)


def rnn(x, Wh, Wc, n):
    h, c = x, x * 0.5
    for t in srcad.checkpoint(range(n), snapshots=3):
        h, c = np.tanh(h @ Wh + c), np.sin(c @ Wc) * h
    return np.sum(h * c)


def rnn_plain(x, Wh, Wc, n):
    h, c = x, x * 0.5
    for t in range(n):
        h, c = np.tanh(h @ Wh + c), np.sin(c @ Wc) * h
    return np.sum(h * c)


def lstm_cell(x_t, h, c, Wx, Wh):
    z = x_t @ Wx + h @ Wh
    gate = 1.0 / (1.0 + np.exp(-z))
    c = c * gate + np.tanh(z)
    return np.tanh(c) * gate, c


def lstm(xs, h, c, Wx, Wh):
    for t in srcad.checkpoint(range(xs.shape[0]), every=4):
        h, c = lstm_cell(xs[t], h, c, Wx, Wh)
    return np.sum(h * h) + np.sum(c)


def lstm_plain(xs, h, c, Wx, Wh):
    for t in range(xs.shape[0]):
        h, c = lstm_cell(xs[t], h, c, Wx, Wh)
    return np.sum(h * h) + np.sum(c)


def made_inside(x, n):
    h = x
    for l in srcad.checkpoint(range(n), every=2):
        y = np.sin(h)
        h = h * y + 1.0
    return np.sum(y * h)


def made_inside_plain(x, n):
    h = x
    for l in range(n):
        y = np.sin(h)
        h = h * y + 1.0
    return np.sum(y * h)


def cell(h, w):
    return np.tanh(h * w + 0.1)


def calls_cell(x, w, n):
    h = x
    for l in srcad.checkpoint(range(n), snapshots=2):
        h = cell(h, w)
    return np.sum(h)


def calls_cell_plain(x, w, n):
    h = x
    for l in range(n):
        h = cell(h, w)
    return np.sum(h)


def inner_checkpointed(h, w, m):
    for j in srcad.checkpoint(range(m), every=2):
        h = np.sin(h * w) + h * 0.5
    return h


def inner_plain(h, w, m):
    for j in range(m):
        h = np.sin(h * w) + h * 0.5
    return h


def calls_checkpointed_function(x, w):
    h = inner_checkpointed(x, w, 5)
    for l in srcad.checkpoint(range(3)):
        h = inner_checkpointed(h, w, 4) + h
    for l in range(2):
        h = inner_checkpointed(h, w, 3)
    return np.sum(h)


def calls_checkpointed_function_plain(x, w):
    h = inner_plain(x, w, 5)
    for l in range(3):
        h = inner_plain(h, w, 4) + h
    for l in range(2):
        h = inner_plain(h, w, 3)
    return np.sum(h)


def checkpointed_call_of_checkpointed_loop(x, w):
    h = srcad.checkpoint(inner_checkpointed)(x, w, 6)
    return np.sum(h * h)


def checkpointed_call_of_checkpointed_loop_plain(x, w):
    h = inner_plain(x, w, 6)
    return np.sum(h * h)


def branch_and_while(x, n):
    h = x
    for l in srcad.checkpoint(range(n), every=3):
        if np.sum(h) > 0:
            h = np.sin(h) * 2.0
        else:
            h = h * h + 0.5
        k = 0
        while k < l % 3:
            h = h * 0.9 + np.cos(h)
            k = k + 1
        if l % 2 == 1:
            continue
        h = h - 0.25
    return np.sum(h)


def branch_and_while_plain(x, n):
    h = x
    for l in range(n):
        if np.sum(h) > 0:
            h = np.sin(h) * 2.0
        else:
            h = h * h + 0.5
        k = 0
        while k < l % 3:
            h = h * 0.9 + np.cos(h)
            k = k + 1
        if l % 2 == 1:
            continue
        h = h - 0.25
    return np.sum(h)


def inner_break(x, n):
    h = x
    for l in srcad.checkpoint(range(n), every=2):
        for j in range(4):
            h = np.sin(h) * 1.3 + l
            if np.sum(h) > 1.0 + l:
                break
    return np.sum(h)


def inner_break_plain(x, n):
    h = x
    for l in range(n):
        for j in range(4):
            h = np.sin(h) * 1.3 + l
            if np.sum(h) > 1.0 + l:
                break
    return np.sum(h)


def nested(x, Ws):
    h = x
    for i in srcad.checkpoint(range(Ws.shape[0]), every=2):
        for j in srcad.checkpoint(range(3), snapshots=1):
            h = np.tanh(h @ Ws[i]) + j
    return np.sum(h)


def nested_outer_only(x, Ws):
    h = x
    for i in srcad.checkpoint(range(Ws.shape[0]), snapshots=2):
        for j in range(3):
            h = np.tanh(h @ Ws[i]) + j
    return np.sum(h)


def nested_inner_only(x, Ws):
    h = x
    for i in range(Ws.shape[0]):
        for j in srcad.checkpoint(range(3), every=2):
            h = np.tanh(h @ Ws[i]) + j
    return np.sum(h)


def nested_in_while(x, Ws):
    h = x
    i = 0
    while i < 2:
        for j in srcad.checkpoint(range(Ws.shape[0]), snapshots=2):
            h = np.tanh(h @ Ws[j]) + i
        i = i + 1
    return np.sum(h)


def nested_in_while_plain(x, Ws):
    h = x
    i = 0
    while i < 2:
        for j in range(Ws.shape[0]):
            h = np.tanh(h @ Ws[j]) + i
        i = i + 1
    return np.sum(h)


def nested_plain(x, Ws):
    h = x
    for i in range(Ws.shape[0]):
        for j in range(3):
            h = np.tanh(h @ Ws[i]) + j
    return np.sum(h)


def over_array(x, Ws):
    h = x
    for w in srcad.checkpoint(Ws, every=2):
        h = np.tanh(h @ w)
    return np.sum(h * h)


def over_list(x, Ws):
    h = x
    for w in srcad.checkpoint(Ws, snapshots=2):
        h = np.tanh(h @ w)
    return np.sum(h * h)


def over_list_plain(x, Ws):
    h = x
    for w in Ws:
        h = np.tanh(h @ w)
    return np.sum(h * h)


def over_enumerate(x, Ws):
    h = x
    for i, w in srcad.checkpoint(enumerate(Ws), every=2):
        h = np.tanh(h @ w) * (i + 1.0)
    return np.sum(h * h)


def over_enumerate_plain(x, Ws):
    h = x
    for i, w in enumerate(Ws):
        h = np.tanh(h @ w) * (i + 1.0)
    return np.sum(h * h)


def over_zip(x, Ws, bs):
    h = x
    for w, b in srcad.checkpoint(zip(Ws, bs), snapshots=2):
        h = np.tanh(h @ w + b)
    return np.sum(h * h)


def over_zip_plain(x, Ws, bs):
    h = x
    for w, b in zip(Ws, bs):
        h = np.tanh(h @ w + b)
    return np.sum(h * h)


def over_range_step(x, Ws):
    h = x
    for l in srcad.checkpoint(range(Ws.shape[0] - 1, 0, -2), every=1):
        h = np.tanh(h @ Ws[l])
    return np.sum(h * h)


def over_range_step_plain(x, Ws):
    h = x
    for l in range(Ws.shape[0] - 1, 0, -2):
        h = np.tanh(h @ Ws[l])
    return np.sum(h * h)


def reads_around_the_loop(x, w):
    h = x * 1.5
    z = np.sin(h)  # its backward reads h, which the loop overwrites
    for l in srcad.checkpoint(range(4)):
        h = h * 2.0 + w
    w = w * 3.0  # rebinds a name the loop read
    return np.sum(h * z) + np.sum(w * h)


def reads_around_the_loop_plain(x, w):
    h = x * 1.5
    z = np.sin(h)
    for l in range(4):
        h = h * 2.0 + w
    w = w * 3.0
    return np.sum(h * z) + np.sum(w * h)


def odd_states(x, n):
    """An argument as the loop state, a reassigned loop target, an int counter, an in-place
    buffer, a conditionally reassigned value defined before the loop, a previous-step value."""
    buf = np.zeros((n + 1, x.shape[0]))
    buf[0] = x
    count = 0
    a = x
    prev = x
    for l in srcad.checkpoint(range(n), every=2):
        l = l * 2
        count = count + 1
        if l % 3 == 0:
            a = x * 0.5
        t = x
        x = np.cos(x) * a + prev * 0.1
        prev = t
        buf[count] = np.tanh(buf[count - 1] * 1.3) + l
    return np.sum(x) + np.sum(buf ** 2) * count


def odd_states_plain(x, n):
    buf = np.zeros((n + 1, x.shape[0]))
    buf[0] = x
    count = 0
    a = x
    prev = x
    for l in range(n):
        l = l * 2
        count = count + 1
        if l % 3 == 0:
            a = x * 0.5
        t = x
        x = np.cos(x) * a + prev * 0.1
        prev = t
        buf[count] = np.tanh(buf[count - 1] * 1.3) + l
    return np.sum(x) + np.sum(buf ** 2) * count


def inactive_and_empty(x, n):
    scale = 0.0
    mask = np.zeros(n)
    for l in srcad.checkpoint(range(n), every=2):
        scale = scale * 1.5 + 1.0
        mask[l] = 1.0
    for l in srcad.checkpoint(range(n)):
        t = x * 2.0  # noqa: F841 (a loop that carries nothing)
    return np.sum(x * x) * scale * np.sum(mask)


def inactive_and_empty_plain(x, n):
    scale = 0.0
    mask = np.zeros(n)
    for l in range(n):
        scale = scale * 1.5 + 1.0
        mask[l] = 1.0
    for l in range(n):
        t = x * 2.0  # noqa: F841
    return np.sum(x * x) * scale * np.sum(mask)


def vec_out(x, Ws):
    h = x
    for l in srcad.checkpoint(range(Ws.shape[0]), every=2):
        h = np.tanh(h @ Ws[l])
    return h


def vec_out_plain(x, Ws):
    h = x
    for l in range(Ws.shape[0]):
        h = np.tanh(h @ Ws[l])
    return h


X = rng.standard_normal((3, 4)) * 0.8
WS = rng.standard_normal((7, 4, 4)) * 0.5
V = rng.standard_normal(4) * 0.5
BS = rng.standard_normal((7, 4)) * 0.3
WH, WC = rng.standard_normal((4, 4)) * 0.5, rng.standard_normal((4, 4)) * 0.5
XS = rng.standard_normal((11, 2, 3))
H0, C0 = rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
WX = rng.standard_normal((3, 4)) * 0.5

PROGRAMS = {  # name: (checkpointed, plain, args, wrt)
    "mlp": (mlp, mlp_plain, (X, WS), (0, 1)),
    "mlp_every_expr": (mlp_every_expr, mlp_plain, (X, WS), (0, 1)),
    "rnn_two_states": (rnn, rnn_plain, (V, WH, WC, 9), (0, 1, 2)),
    "lstm_user_cell": (lstm, lstm_plain, (XS, H0, C0, WX, WH), (0, 1, 2, 3, 4)),
    "made_inside_used_after": (made_inside, made_inside_plain, (V, 5), 0),
    "calls_user_function": (calls_cell, calls_cell_plain, (V, V + 0.5, 7), (0, 1)),
    "user_function_with_checkpointed_loop": (calls_checkpointed_function,
                                             calls_checkpointed_function_plain,
                                             (V, V + 0.5), (0, 1)),
    "checkpointed_call_of_checkpointed_loop": (checkpointed_call_of_checkpointed_loop,
                                               checkpointed_call_of_checkpointed_loop_plain,
                                               (V, V + 0.5), (0, 1)),
    "branch_while_continue": (branch_and_while, branch_and_while_plain, (V, 8), 0),
    "inner_loop_with_break": (inner_break, inner_break_plain, (V, 5), 0),
    "nested_checkpointed": (nested, nested_plain, (X, WS[:5]), (0, 1)),
    "nested_outer_only": (nested_outer_only, nested_plain, (X, WS[:5]), (0, 1)),
    "nested_inner_only": (nested_inner_only, nested_plain, (X, WS[:5]), (0, 1)),
    "inside_while": (nested_in_while, nested_in_while_plain, (X, WS[:5]), (0, 1)),
    "over_array": (over_array, mlp_plain, (X, WS), (0, 1)),
    "over_list": (over_list, over_list_plain, (X, list(WS)), (0, 1)),
    "over_enumerate": (over_enumerate, over_enumerate_plain, (X, WS), (0, 1)),
    "over_zip": (over_zip, over_zip_plain, (X, WS, BS), (0, 1, 2)),
    "over_range_negative_step": (over_range_step, over_range_step_plain, (X, WS), (0, 1)),
    "reads_around_the_loop": (reads_around_the_loop, reads_around_the_loop_plain,
                              (V, V - 0.2), (0, 1)),
    "odd_loop_states": (odd_states, odd_states_plain, (V, 7), 0),
    "inactive_and_empty_loops": (inactive_and_empty, inactive_and_empty_plain, (V, 5), 0),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_checkpointed_program_grad_is_bitwise_equal(name):
    ck, plain, args, wrt = PROGRAMS[name]
    g = srcad.grad(ck, wrt=wrt)
    assert _equal(g(*args), srcad.grad(plain, wrt=wrt)(*args))
    assert "LoopCheckpoints(" in srcad.source(g)


@pytest.mark.parametrize("name", ["mlp", "rnn_two_states", "branch_while_continue",
                                  "nested_checkpointed", "over_zip"])
def test_checkpointed_program_float32_is_bitwise_equal(name):
    ck, plain, args, wrt = PROGRAMS[name]
    args = tuple(a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args)
    a = srcad.grad(ck, wrt=wrt)(*args)
    assert all(np.result_type(g) == np.float32 for g in _as_tuple(a))
    assert _equal(a, srcad.grad(plain, wrt=wrt)(*args))


@pytest.mark.parametrize("k", [1, 2, 3, 6, 7, 50])
def test_schedule_given_by_a_parameter(k):
    expected = srcad.grad(mlp_k_plain, wrt=(0, 1))(X, WS, k)
    assert _equal(srcad.grad(mlp_every, wrt=(0, 1))(X, WS, k), expected)
    assert _equal(srcad.grad(mlp_snapshots, wrt=(0, 1))(X, WS, k), expected)


def test_a_parameter_schedule_reaches_the_runtime():
    """One compiled specialisation, different schedules: explain shows what each keeps."""
    Ws = rng.standard_normal((40, 4, 4)) * 0.3
    kept = {}
    for k in (2, 5, 20):
        rep = srcad.explain(mlp_every, X, Ws, k, wrt=(0, 1), print_report=False)
        (row,) = [i for i in rep.items if i.kind.startswith("loop states")]
        kept[k] = row.kind
    assert kept == {2: "loop states (20 kept, at most 20)",
                    5: "loop states (8 kept, at most 8)",
                    20: "loop states (2 kept, at most 2)"}


@pytest.mark.parametrize("trips", [0, 1, 2])
def test_zero_one_and_two_trip_loops(trips):
    Ws = WS[:trips]
    expected = srcad.grad(mlp_plain, wrt=(0, 1))(X, Ws)
    assert _equal(srcad.grad(mlp, wrt=(0, 1))(X, Ws), expected)
    for k in (1, 3):
        assert _equal(srcad.grad(mlp_every, wrt=(0, 1))(X, Ws, k), expected)
        assert _equal(srcad.grad(mlp_snapshots, wrt=(0, 1))(X, Ws, k), expected)


def test_value_and_grad_value_and_gradient_are_bitwise_equal():
    value, grads = srcad.value_and_grad(mlp, wrt=(0, 1))(X, WS)
    value_p, grads_p = srcad.value_and_grad(mlp_plain, wrt=(0, 1))(X, WS)
    assert _equal(value, value_p) and value == mlp(X, WS)
    assert _equal(grads, grads_p)


def test_grad_wrt_one_argument_by_name():
    assert _equal(srcad.grad(lstm, wrt="Wh")(XS, H0, C0, WX, WH),
                  srcad.grad(lstm_plain, wrt="Wh")(XS, H0, C0, WX, WH))


@pytest.mark.parametrize("ck, plain, args", [(vec_out, vec_out_plain, (X, WS)),
                                             (over_list, over_list_plain, (X, list(WS))),
                                             (rnn, rnn_plain, (V, WH, WC, 6))],
                         ids=["array-out", "list", "rnn"])
def test_vjp_pullback_twice_is_bitwise_equal(ck, plain, args):
    out, pullback = srcad.vjp(ck, *args)
    out_p, pullback_p = srcad.vjp(plain, *args)
    assert _equal(out, out_p)
    ct = rng.standard_normal(np.shape(out))
    expected = pullback_p(ct)
    assert _equal(pullback(ct), expected)
    assert _equal(pullback(ct), expected)


def test_vjp_twice_through_stacked_checkpoints():
    """Checkpointed loops inside a plain loop and inside called functions: the kept states
    live on stacks, and the second pullback must find them again."""
    for ck, plain in ((nested_inner_only, nested_plain),
                      (calls_checkpointed_function, calls_checkpointed_function_plain)):
        args = (X, WS[:5]) if ck is nested_inner_only else (V, V + 0.5)
        out, pullback = srcad.vjp(ck, *args)
        out_p, pullback_p = srcad.vjp(plain, *args)
        assert _equal(out, out_p)
        ct = np.ones_like(out)
        expected = pullback_p(ct)
        assert _equal(pullback(ct), expected) and _equal(pullback(ct), expected)


def test_jvp_through_a_checkpointed_loop():
    tangents = (np.ones_like(X), WS * 0.1)
    assert _equal(srcad.jvp(vec_out, (X, WS), tangents),
                  srcad.jvp(vec_out_plain, (X, WS), tangents))


@pytest.mark.parametrize("ck, plain", [(mlp, mlp_plain), (nested, nested_plain),
                                       (calls_checkpointed_function,
                                        calls_checkpointed_function_plain)],
                         ids=["mlp", "nested", "user-function"])
def test_jvp_of_grad_is_bitwise_equal(ck, plain):
    args = (V, V + 0.5) if ck is calls_checkpointed_function else (X, WS[:4])
    tangents = tuple(np.ones_like(a) * 0.3 for a in args)
    assert _equal(srcad.jvp(srcad.grad(ck, wrt=(0, 1)), args, tangents),
                  srcad.jvp(srcad.grad(plain, wrt=(0, 1)), args, tangents))


def test_hessian_is_bitwise_equal():
    x = X[:1]
    assert _equal(srcad.hessian(mlp)(x, WS[:4]), srcad.hessian(mlp_plain)(x, WS[:4]))
    assert _equal(srcad.hessian(rnn)(V, WH, WC, 5), srcad.hessian(rnn_plain)(V, WH, WC, 5))


@pytest.mark.parametrize("name", ["mlp", "rnn_two_states", "branch_while_continue",
                                  "nested_checkpointed", "lstm_user_cell"])
def test_tape_mode_is_bitwise_equal(name):
    ck, plain, args, wrt = PROGRAMS[name]
    assert _equal(srcad.grad(ck, wrt=wrt, mode="tape")(*args),
                  srcad.grad(plain, wrt=wrt)(*args))


def test_checkpoint_outside_differentiated_code_iterates_like_what_it_wraps():
    assert list(srcad.checkpoint(range(3))) == [0, 1, 2]
    assert list(srcad.checkpoint(range(5), every=2)) == list(range(5))
    assert list(srcad.checkpoint(range(2, 9, 3), snapshots=1)) == [2, 5, 8]
    assert len(srcad.checkpoint(range(4))) == 4
    assert [list(w) for w in srcad.checkpoint(np.eye(2))] == [[1.0, 0.0], [0.0, 1.0]]
    assert mlp(X, WS) == mlp_plain(X, WS)
    assert rnn(V, WH, WC, 4) == rnn_plain(V, WH, WC, 4)


# == 4. the generated code and what the forward keeps ============================================


def long_loop(x, W):
    h = x
    for l in srcad.checkpoint(range(100)):
        h = np.tanh(h @ W + 0.01 * l)
    return np.sum(h)


def long_loop_revolve(x, W):
    h = x
    for l in srcad.checkpoint(range(100), snapshots=4):
        h = np.tanh(h @ W + 0.01 * l)
    return np.sum(h)


def long_loop_plain(x, W):
    h = x
    for l in range(100):
        h = np.tanh(h @ W + 0.01 * l)
    return np.sum(h)


XL = rng.standard_normal((8, 16))
WL = rng.standard_normal((16, 16)) * 0.3


def test_generated_code_says_it_recomputes():
    g = srcad.grad(long_loop, wrt=(0, 1))
    g(XL, WL)
    text = srcad.source(g)
    assert "LoopCheckpoints(range(100))" in text
    assert ".offer(h)" in text and ".episodes()" in text and ".restore()" in text
    assert "# checkpointed loop: keeps its state (h)" in text
    assert "recompute from the kept state" in text
    g_plain = srcad.grad(long_loop_plain, wrt=(0, 1))
    g_plain(XL, WL)
    assert "LoopCheckpoints" not in srcad.source(g_plain)


def test_explain_shows_about_sqrt_n_states_for_a_long_loop():
    state_bytes = XL.nbytes
    rep = srcad.explain(long_loop, XL, WL, print_report=False)
    rep_r = srcad.explain(long_loop_revolve, XL, WL, print_report=False)
    rep_p = srcad.explain(long_loop_plain, XL, WL, print_report=False)
    (row,) = [i for i in rep.items if i.kind.startswith("loop states")]
    assert row.kind == "loop states (10 kept, at most 10)"
    (row_r,) = [i for i in rep_r.items if i.kind.startswith("loop states")]
    assert row_r.kind == "loop states (4 kept, at most 4)"
    assert not [i for i in rep_p.items if i.kind.startswith("loop states")]
    assert rep_p.total_bytes >= 100 * state_bytes
    assert rep.total_bytes <= 12 * state_bytes  # ~sqrt(100) states (the first is x itself)
    assert rep_r.total_bytes <= 5 * state_bytes


def test_peak_memory_of_a_long_checkpointed_loop_is_smaller():
    x = rng.standard_normal((32, 64))
    W = rng.standard_normal((64, 64)) * 0.2
    peaks = {}
    for fn in (long_loop, long_loop_revolve, long_loop_plain):
        g = srcad.grad(fn, wrt=(0, 1))
        g(x, W)  # compile first
        peaks[fn.__name__] = measure_peak(lambda g=g: g(x, W))
    state = x.nbytes
    assert peaks["long_loop_plain"] > 100 * state  # a state and more per step
    assert peaks["long_loop"] < 40 * state  # 10 kept states, 10 steps recorded at a time
    assert peaks["long_loop"] < peaks["long_loop_plain"] / 3
    assert peaks["long_loop_revolve"] < peaks["long_loop"]


# == 5. misuse ===================================================================================


def with_break(x, n):
    h = x
    for l in srcad.checkpoint(range(n)):
        h = np.sin(h)
        if np.sum(h) > 100:
            break
    return np.sum(h)


def with_return(x, n):
    h = x
    for l in srcad.checkpoint(range(n)):
        h = np.sin(h)
        if np.sum(h) > 100:
            return np.sum(h)
    return np.sum(h)


def with_break_in_while(x, n):
    h = x
    while np.sum(h) > 0:
        for l in srcad.checkpoint(range(n)):
            h = np.sin(h) - 0.5
            if l > 2:
                break
    return np.sum(h)


def with_both(x, n):
    h = x
    for l in srcad.checkpoint(range(n), every=2, snapshots=2):
        h = np.sin(h)
    return np.sum(h)


def with_every_zero(x, n):
    h = x
    for l in srcad.checkpoint(range(n), every=0):
        h = np.sin(h)
    return np.sum(h)


def with_snapshots_negative(x, n):
    h = x
    for l in srcad.checkpoint(range(n), snapshots=-1):
        h = np.sin(h)
    return np.sum(h)


def with_every_float(x, n):
    h = x
    for l in srcad.checkpoint(range(n), every=1.5):
        h = np.sin(h)
    return np.sum(h)


def with_unknown_keyword(x, n):
    h = x
    for l in srcad.checkpoint(range(n), stride=2):
        h = np.sin(h)
    return np.sum(h)


def _line_of(fn, text) -> int:
    lines, first = inspect.getsourcelines(fn)
    (k,) = [i for i, line in enumerate(lines) if text in line]
    return first + k


@pytest.mark.parametrize("fn, words", [
    (with_break, "`break` or `return` inside a checkpointed loop"),
    (with_return, "`break` or `return` inside a checkpointed loop"),
    (with_break_in_while, "`break` or `return` inside a checkpointed loop"),
    (with_both, "every= or snapshots=, not both"),
    (with_every_zero, "every= must be a positive integer, got 0"),
    (with_snapshots_negative, "snapshots= must be a positive integer, got -1"),
    (with_every_float, "every= must be a positive integer, got 1.5"),
    (with_unknown_keyword, "srcad.checkpoint in a `for` header"),
], ids=lambda v: v.__name__ if callable(v) else "")
@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp"])
def test_misuse_is_refused_at_the_users_line(fn, words, transform):
    x = np.ones(3)
    with pytest.raises(srcad.SrcadError) as info:
        if transform == "grad":
            srcad.grad(fn)(x, 3)
        elif transform == "vjp":
            srcad.vjp(fn, x, 3)
        else:
            srcad.jvp(fn, (x, 3), (x, 0))
    e = info.value
    assert words in str(e)
    assert e.filename == __file__
    assert e.lineno == _line_of(fn, "srcad.checkpoint(")
    assert f'File "{__file__}", line {e.lineno}' in str(e)


def test_checkpointed_loop_with_an_exit_is_refused_but_runs_plain():
    assert with_break(np.ones(3), 3) == np.sum(np.sin(np.sin(np.sin(np.ones(3)))))


def test_misuse_outside_differentiated_code():
    def block(h):
        return np.sin(h)

    with pytest.raises(TypeError, match="takes no schedule"):
        srcad.checkpoint(block, every=2)
    with pytest.raises(TypeError, match="takes no schedule"):
        srcad.checkpoint(block, snapshots=2)
    for kw in ({"every": 0}, {"snapshots": 0}, {"every": -1}, {"every": 2, "snapshots": 2},
               {"every": True}, {"snapshots": 2.0}):
        with pytest.raises(ValueError):
            srcad.checkpoint(range(3), **kw)


@pytest.mark.parametrize("k", [0, -2, 2.0])
def test_bad_schedule_from_a_parameter_is_an_error(k):
    with pytest.raises((srcad.SrcadError, ValueError), match="every= must be a positive"):
        srcad.grad(mlp_every, wrt=(0, 1))(X, WS, k)


# == bugs found while writing this file (remove the marks when fixed) ===========================


def carried_through_branch(x):
    h = x
    for l in srcad.checkpoint(range(4), every=2):
        if l % 2 == 0:
            a = h  # first assigned in the loop, read in the next step
        h = h * a
    return np.sum(h)


def carried_through_branch_plain(x):
    h = x
    for l in range(4):
        if l % 2 == 0:
            a = h
        h = h * a
    return np.sum(h)


def test_value_first_assigned_under_a_branch_in_a_checkpointed_loop():
    x = np.array([1.1, 0.7])
    # a = x, h = x^2; h = x^3; a = x^3, h = x^6; h = x^9
    np.testing.assert_allclose(srcad.grad(carried_through_branch)(x), 9 * x ** 8, rtol=1e-12)


def test_value_first_assigned_under_a_branch_in_a_plain_loop():
    x = np.array([1.1, 0.7])
    np.testing.assert_allclose(srcad.grad(carried_through_branch_plain)(x), 9 * x ** 8,
                               rtol=1e-12)


def dropout_loop(x, gen, n):
    h = x
    for l in srcad.checkpoint(range(n), every=2):
        m = gen.random(h.shape)
        h = np.sin(h * m) + h
    return np.sum(h)


def dropout_loop_plain(x, gen, n):
    h = x
    for l in range(n):
        m = gen.random(h.shape)
        h = np.sin(h * m) + h
    return np.sum(h)


def test_random_draws_in_a_checkpointed_loop_are_refused():
    """Recomputing a step would draw other random numbers: srcad says so at the loop."""
    x = np.array([0.3, -0.2, 0.5, 0.9])
    with pytest.raises(srcad.SrcadError, match=r"checkpointed loop at line \d+ calls "
                       r"`gen.random"):
        srcad.grad(dropout_loop)(x, np.random.default_rng(1), 6)


def test_memory_budget_does_not_checkpoint_a_loop_that_draws():
    x = np.array([0.3, -0.2, 0.5, 0.9])
    expected = srcad.grad(dropout_loop_plain)(x, np.random.default_rng(1), 60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the budget cannot be met without it)
        got = srcad.grad(dropout_loop_plain, memory_budget=1)(x, np.random.default_rng(1), 60)
    assert _equal(got, expected)


def draw_once(x, gen):
    m = gen.random(x.shape)
    return np.sum(np.sin(x * m))


def test_memory_budget_does_not_consume_the_callers_generator():
    x = np.array([0.3, -0.2, 0.5, 0.9])
    g1, g2 = np.random.default_rng(1), np.random.default_rng(1)
    a = srcad.grad(draw_once)(x, g1)
    b = srcad.grad(draw_once, memory_budget=10 ** 9)(x, g2)
    assert _equal(a, b) and g1.random() == g2.random()


def draw_in_expression(x, gen):
    return np.sum(np.sin(x * gen.random(x.shape)))


def test_generator_method_inside_an_expression():
    x = np.array([0.3, -0.2, 0.5, 0.9])
    expected = np.cos(x * np.random.default_rng(1).random(4)) * \
        np.random.default_rng(1).random(4)
    np.testing.assert_allclose(srcad.grad(draw_in_expression)(x, np.random.default_rng(1)),
                               expected, rtol=1e-12)


def reversed_loop(x, Ws):
    h = x
    for l in srcad.checkpoint(reversed(range(Ws.shape[0])), every=2):
        h = np.tanh(h @ Ws[l])
    return np.sum(h * h)


def reversed_loop_plain(x, Ws):
    h = x
    for l in range(Ws.shape[0] - 1, -1, -1):
        h = np.tanh(h @ Ws[l])
    return np.sum(h * h)


def test_reversed_range_loop():
    assert _equal(srcad.grad(reversed_loop, wrt=(0, 1))(X, WS),
                  srcad.grad(reversed_loop_plain, wrt=(0, 1))(X, WS))


def tuple_state(x):
    s = (x, x)
    for t in srcad.checkpoint(range(2)):
        s = (s[0] * s[1], s[0])
    return np.sum(s[0])


def tuple_state_plain(x):
    s = (x, x)
    for t in range(2):
        s = (s[0] * s[1], s[0])
    return np.sum(s[0])


@pytest.mark.parametrize("fn", [tuple_state, tuple_state_plain], ids=["checkpointed", "plain"])
def test_tuple_valued_loop_state(fn):
    x = np.array([1.1, 0.5])
    # (x, x) -> (x^2, x) -> (x^3, x^2): d/dx sum(x^3) = 3x^2
    np.testing.assert_allclose(srcad.grad(fn)(x), 3 * x ** 2, rtol=1e-12)


def block(h):
    return np.sin(h)


def checkpoint_call_with_schedule(x):
    return np.sum(srcad.checkpoint(block, every=2)(x))


def test_checkpoint_of_a_function_with_a_schedule_says_why():
    with pytest.raises((srcad.SrcadError, TypeError), match="no schedule"):
        srcad.grad(checkpoint_call_with_schedule)(np.ones(3))


def test_bad_schedule_from_a_parameter_names_the_loop():
    with pytest.raises((srcad.SrcadError, ValueError)) as info:
        srcad.grad(mlp_every, wrt=(0, 1))(X, WS, 0)
    assert f"line {_line_of(mlp_every, 'srcad.checkpoint(')}" in str(info.value)


def test_revolve_is_optimal_given_the_free_forward_sweep():
    """srcad's forward sweep runs every step anyway: the schedule recomputes exactly what an
    exhaustive search that takes the sweep as free finds, never more than evenly spaced
    states, and nothing once it may keep a state per step."""
    for n in range(1, 61):
        for c in range(1, 12):
            s = schedule_for(n, snapshots=c)
            assert s.recomputed == brute_cost_free_sweep(n, c), (n, c)
            assert s.recomputed <= equidistant_cost(n, c), (n, c)
            if c >= n:
                assert s.recomputed == 0


def list_concatenation(x):
    hs = [x] + [x * 2.0]
    return np.sum(hs[1])


def test_list_concatenation():
    x = np.array([1.0, 2.0])
    assert _equal(srcad.grad(list_concatenation)(x), np.full(2, 2.0))


def list_grown_in_a_loop(x):
    hs = [x]
    for i in range(2):
        hs = hs + [hs[-1] * 2.0]
    return np.sum(hs[2])


@pytest.mark.parametrize("opts", [{}, {"mode": "tape"}, {"fuse": True}],
                         ids=["source", "tape", "fuse"])
def test_growing_a_list_in_a_loop(opts):
    """`hs + [h]` on a list made in a loop is Python's concatenation (a list_concat row),
    never numpy's addition of the arrays."""
    x = np.array([1.0, 2.0])
    assert _equal(srcad.grad(list_grown_in_a_loop, **opts)(x), np.full(2, 4.0))
