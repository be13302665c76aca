"""Differential fuzzing of called functions changing the lists and dicts they are given
(tests/fuzz_callee_containers.py's programs: logs appended to, trimmed, cleared; config dicts
counted in, updated, keys deleted; through the caller's own objects, a list a dict holds, a
second name, a loop, a helper's helper).

Each program runs twice on the same two containers -- in source mode, with ``fuse=True`` and
in tape mode -- and plain Python twice on copies of its own. Each call must either raise
`srcad.SrcadError` (a refusal, counted by its message) or give Python's value exactly, a
gradient w.r.t. ``x`` matching central differences (the containers as they were before the
call, rel 1e-6), and leave the list and the dict as Python's call leaves them. Anything else
is a failure. ``python -m tests.test_fuzz_callee_containers FIRST LAST`` (from a directory
outside the repository) prints the counts of seeds FIRST..LAST.

Seeds 0-29 (360 programs, 1,080 checks), session of 2026-12-07, thirteenth:

  srcad at                         refused  passed  differ (checks)
  47653ca (before the fixes)         276     719       85   (23 of the 30 seeds)
  main (tests/test_callee_container_sync.py's fixes)   393     687        0

(The refusals grew by the calls given a dict and an item of it that change one, refused in
source mode now -- some of them were right by chance before -- and seeds 30-59 differ in
none either.)

`--objects` draws the object form: the list and dict on a module object `S`, changed by
helpers given it. Session of 2026-12-07, fourteenth, seeds 0-119 (4,320 checks each form),
an error srcad blames on the user's code (`TypeError in f: ...`) where Python's call ran
counted as a failure from that session on (it was counted as a refusal):

  form      srcad at   refused  passed  differ (checks)
  objects   850e9a0        --      --     20 of seeds 0-29 alone (10 programs)
  objects   main         1560    2760      0
  default   main         1588    2732      0  (3527497: 1636 / 2684 / 0, 14 of its
                                               refusals srcad's own errors)"""

from __future__ import annotations

import collections
import copy
import sys

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad
from tests import fuzz_callee_containers as FC

PER_BATCH = 12
BATCHES = 3
SLOW_BATCHES = 30
MODES = {"source": {}, "fuse": {"fuse": True}, "tape": {"mode": "tape"}}


class Failure(AssertionError):
    pass


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, (float, int, np.floating, np.ndarray)):
        return not isinstance(b, (list, dict, tuple)) and np.shape(a) == np.shape(b) and \
            bool(np.all(np.asarray(a, float) == np.asarray(b, float)))
    return a == b


def check_twice(fn, x, mine, call_with, now, opts, tally) -> None:
    """Two calls of `fn` -- Python's on copies of the containers `mine`, srcad's on `mine`
    itself -- each compared: the value, the containers after it (`now()`: srcad's), the
    gradient against central differences from the containers as they were before the call.
    `call_with(f, containers, z)` calls `f` (the function, or srcad's transform of it) with
    those containers in place (as its arguments, or on the module object)."""
    python = copy.deepcopy(mine)
    for call in range(2):
        xs = x * (1.0 if call == 0 else -0.7)
        before = copy.deepcopy(python)
        want = call_with(fn, python, xs.copy())
        try:
            if call == 0:
                g = srcad.value_and_grad(fn, wrt=0, **opts)
            value, grad = call_with(g, mine, xs.copy())
        except srcad.SrcadError as e:
            if "comes from the user's code" in str(e):
                # (Python's own call ran on these very containers: an error srcad says the
                # user's code raised is srcad's -- `k[...] = np.sort(k)` of a list, a probe's
                # copies disagreeing -- counted as refusals before the session of
                # 2026-12-07, fourteenth)
                raise Failure(f"call {call}: {str(e).splitlines()[0]}") from e
            tally["refused"] += 1
            tally["reasons"][str(e).splitlines()[0][:110]] += 1
            return
        if not np.array_equal(np.asarray(value), np.asarray(want)):
            raise Failure(f"call {call}: value {value!r}, Python's {want!r}")
        log, cfg = now()
        if not (_same(log, python[0]) and _same(cfg, python[1])):
            raise Failure(f"call {call}: containers {log!r} {cfg!r}, Python's {python[0]!r} "
                          f"{python[1]!r}")
        numeric = numerical_grad(lambda z: call_with(fn, copy.deepcopy(before), z),
                                 (xs.copy(),))
        if not np.allclose(grad, numeric, rtol=1e-6, atol=1e-8):
            raise Failure(f"call {call}: gradient {grad!r}, central differences {numeric!r}")
    tally["passed"] += 1


def check(fn, args, opts, tally) -> None:
    """A program taking its containers as arguments: `f(x, log, cfg)`."""
    x, log0, cfg0 = args
    mine = copy.deepcopy((log0, cfg0))
    check_twice(fn, x, mine, lambda f, pair, z: f(z, *pair), lambda: mine, opts, tally)


def check_state(fn, state, x, opts, tally) -> None:
    """A program keeping its containers on the module object `state`: Python's run and
    srcad's each keep their own two containers on it, put there before each call (srcad's
    the same objects across its calls)."""
    def call_with(f, pair, z):
        state.log, state.cfg = pair
        return f(z)

    check_twice(fn, x, (state.log, state.cfg), call_with, lambda: (state.log, state.cfg),
                opts, tally)


def run_batch(seed, n=PER_BATCH, verbose=False, objects=False):
    programs = FC.batch_programs(seed, n, objects)
    module = FC.import_programs(programs, f"cc{seed}")
    tally = {"checks": 0, "refused": 0, "passed": 0, "reasons": collections.Counter()}
    failures = []
    for i, prog in enumerate(programs):
        args = prog.make_args(seed * 100 + i)
        for mode, opts in MODES.items():
            tally["checks"] += 1
            try:
                if prog.state:
                    state = getattr(module, prog.state)
                    state.__init__()  # (its containers as the program made them)
                    check_state(getattr(module, prog.name), state, args[0], opts, tally)
                else:
                    check(getattr(module, prog.name), args, opts, tally)
            except Failure as e:
                failures.append((prog, mode, str(e)))
                if verbose:
                    print(f"--- seed {seed} {prog.name} {mode}: {e}\n{prog.source}")
    return tally, failures


@pytest.mark.parametrize("seed", range(BATCHES))
def test_callee_container_batch(seed):
    tally, failures = run_batch(seed)
    if failures:
        prog, mode, msg = failures[0]
        raise Failure(f"{len(failures)} failing; {mode}: {msg}\n{prog.source}")
    # (a generator whose programs srcad all refused would prove nothing)
    assert tally["passed"] >= tally["checks"] // 4, tally


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(BATCHES, BATCHES + SLOW_BATCHES))
def test_callee_container_batch_slow(seed):
    test_callee_container_batch(seed)


OBJECT_SEEDS = (1, 12, 27)  # (the default suite's: each held a wrong state or value once)


def _object_batch(seed):
    tally, failures = run_batch(seed, objects=True)
    if failures:
        prog, mode, msg = failures[0]
        raise Failure(f"{len(failures)} failing; {mode}: {msg}\n{prog.source}")
    assert tally["passed"] >= tally["checks"] // 4, tally


@pytest.mark.parametrize("seed", OBJECT_SEEDS)
def test_callee_container_batch_objects(seed):
    """The object form (`--objects`: the list and dict on a module object, changed by helpers
    given it): seed 1 held a wrong list, 12 a wrong value, 27 a wrong dict before the session
    of 2026-12-07, fourteenth (tests/test_object_containers_changed.py)."""
    _object_batch(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [s for s in range(BATCHES + SLOW_BATCHES)
                                  if s not in OBJECT_SEEDS])
def test_callee_container_batch_objects_slow(seed):
    _object_batch(seed)


if __name__ == "__main__":
    first, last = int(sys.argv[1]), int(sys.argv[2])
    objects = "--objects" in sys.argv
    total = collections.Counter()
    reasons = collections.Counter()
    for seed in range(first, last + 1):
        t, fails = run_batch(seed, verbose=True, objects=objects)
        print(f"seed {seed}: {t['checks']} checks, {t['refused']} refused, {t['passed']} "
              f"passed, {len(fails)} differ")
        total.update({k: t[k] for k in ("checks", "refused", "passed")})
        total["differ"] += len(fails)
        reasons.update(t["reasons"])
    print("total:", dict(total))
    for r, k in reasons.most_common():
        print(f"{k:6d}  {r}")
