"""A module's iterator read inside the function -- ``k = next(COUNTER)`` of an
``itertools.count``, ``X = next(BATCHES)`` of an ``iter(list)`` -- (session of 2026-12-07,
eleventh). srcad's first call of a transform runs the function once more to learn shapes (the
probe); numpy's and Python's random generators were drawn there from a copy, but an iterator
was advanced by the probe too: the first call read the second item (a skipped batch, the
value of another call than Python's), silently. The probe now reads its own copy of a
module's iterator; a module's generator, which Python cannot copy, is refused with the fix
(pass what it yields as an argument) -- source and fused mode; tape mode runs no probe."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.7, 1.1])
BATCHES = [np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 2.0]), np.array([0.0, 4.0, 1.0])]
STATE = {}


def counted(x):
    k = next(STATE["counter"])
    return np.sum(x) * (k % 3 + 1)


def batched(x):
    b = next(STATE["batches"])
    return np.sum(np.tanh(x * b))


def sliced(x):
    b = next(STATE["sliced"])
    return np.sum(x ** 2) * b


def _fresh():
    STATE["counter"] = itertools.count()
    STATE["batches"] = iter(BATCHES)
    STATE["sliced"] = itertools.islice(itertools.cycle([1.0, 2.0, 5.0]), 0, None)


MODES = {"source": {}, "fuse": {"fuse": True}, "tape": {"mode": "tape"}}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [counted, batched, sliced], ids=lambda f: f.__name__)
def test_each_call_reads_the_next_item_as_python_does(fn, mode):
    _fresh()
    g = srcad.value_and_grad(fn, **MODES[mode])
    got = [g(X.copy()) for _ in range(3)]
    left = next(STATE["counter"]), next(STATE["sliced"])
    _fresh()
    want = [fn(X.copy()) for _ in range(3)]
    assert left == (next(STATE["counter"]), next(STATE["sliced"]))
    for (value, grad), ref in zip(got, want):
        assert value == pytest.approx(ref, rel=1e-12)
        assert grad.shape == X.shape


def _yields():
    for b in BATCHES:
        yield b


DATA = {"gen": None}


def from_a_generator(x):
    b = next(DATA["gen"])
    return np.sum(x * b)


@pytest.mark.parametrize("mode", ["source", "fuse"])
def test_a_modules_generator_is_refused_with_the_fix(mode):
    DATA["gen"] = _yields()
    with pytest.raises(srcad.SrcadError, match="pass what it yields as an argument"):
        srcad.value_and_grad(from_a_generator, **MODES[mode])(X.copy())
    assert np.array_equal(next(DATA["gen"]), BATCHES[0])  # (not advanced)


def test_tape_mode_reads_a_modules_generator_as_python_does():
    DATA["gen"] = _yields()
    g = srcad.value_and_grad(from_a_generator, mode="tape")
    assert [g(X.copy())[0] for _ in range(2)] == pytest.approx(
        [np.sum(X * BATCHES[0]), np.sum(X * BATCHES[1])], rel=1e-12)


def from_an_argument(x, it):
    b = next(it)
    return np.sum(np.sin(x * b))


@pytest.mark.parametrize("mode", MODES)
def test_an_iterator_argument_gives_its_next_item(mode):
    g = srcad.value_and_grad(from_an_argument, **MODES[mode])
    it = iter(BATCHES)
    got = [g(X.copy(), it)[0] for _ in range(2)]
    assert got == pytest.approx([np.sum(np.sin(X * b)) for b in BATCHES[:2]], rel=1e-12)
    assert np.array_equal(next(it), BATCHES[2])


@pytest.mark.parametrize("mode", ["source", "fuse"])
def test_a_generator_argument_is_refused_with_the_fix(mode):
    gen = _yields()
    with pytest.raises(srcad.SrcadError, match="pass what it yields as an argument"):
        srcad.value_and_grad(from_an_argument, **MODES[mode])(X.copy(), gen)
    assert np.array_equal(next(gen), BATCHES[0])
