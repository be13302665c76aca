"""A corpus in the styles numpy-from-scratch code is written in (issue 22, item 6):
tests/corpus_styles/ holds the programs, each with a backward written by hand in its style.

For each program: the hand-written backward agrees with central differences (the oracle is
right); then in mode="source" and mode="tape" the value equals calling the function and the
gradient matches the oracle (rel 1e-6, float64) and central differences; a subset also with
fuse=True (the rest of fuse=True under -m slow). Where srcad refuses or is wrong today the
case is an xfail(strict=True) whose reason names the class of failure (XFAILS below)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error
from tests.corpus_styles import all_programs

PROGRAMS = {p.name: p for p in all_programs()}
TOL = 1e-6
NUM_TOL = 1e-5   # central differences (h=1e-4) on these programs are good to ~1e-8

# ---- known failures, one reason string per class ----------------------------------------
XFAILS: dict[tuple[str, str], str] = {}
SKIPS: dict[str, str] = {}
ALL_MODES = ("source", "tape", "fuse")
SRC = ("source", "fuse")   # the fused code is built from the source transform


def _xfail(names, modes, reason):
    for n in names:
        for m in modes:
            XFAILS[(n, m)] = reason


@functools.lru_cache(maxsize=None)
def _numerical(name):
    p = PROGRAMS[name]
    g = numerical_grad(p.fn, p.make_args(), wrt=p.wrt)
    return g if isinstance(g, tuple) else (g,)


def _oracle(name):
    p = PROGRAMS[name]
    g = p.backward(*p.make_args())
    return g if isinstance(g, tuple) else (g,)


def _param(name, mode):
    marks = []
    if name in SKIPS:
        marks.append(pytest.mark.skip(reason=SKIPS[name]))
    elif (name, mode) in XFAILS:
        marks.append(pytest.mark.xfail(strict=True, reason=XFAILS[(name, mode)]))
    if mode == "fuse" and not PROGRAMS[name].fuse:
        marks.append(pytest.mark.slow)
    return pytest.param(name, mode, marks=marks, id=f"{name}-{mode}")


def test_corpus_is_large_enough():
    assert len(PROGRAMS) >= 60
    assert len({p.fn for p in PROGRAMS.values()}) == len(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_hand_written_backward_is_right(name):
    """The oracle itself against central differences (no srcad involved)."""
    got = _oracle(name)
    want = _numerical(name)
    assert len(got) == len(want)
    for g, w, n in zip(got, want, PROGRAMS[name].wrt):
        assert rel_error(g, w) < NUM_TOL, n


@pytest.mark.parametrize("name,mode", [_param(n, m) for n in sorted(PROGRAMS)
                                       for m in ("source", "tape", "fuse")])
def test_srcad_matches_hand_written_backward(name, mode):
    p = PROGRAMS[name]
    args = p.make_args()
    value = p.fn(*p.make_args())
    options = {"fuse": True} if mode == "fuse" else {"mode": mode}
    out, got = srcad.value_and_grad(p.fn, wrt=p.wrt, **options)(*args)
    got = got if isinstance(got, tuple) else (got,)
    assert np.array_equal(out, value), (out, value)
    oracle = _oracle(name)
    num = _numerical(name)
    for g, o, w, n in zip(got, oracle, num, p.wrt):
        assert rel_error(g, o) < TOL, (n, "oracle")
        assert rel_error(g, w) < NUM_TOL, (n, "central differences")
