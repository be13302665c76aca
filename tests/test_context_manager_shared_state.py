"""A user's context manager that changes state beyond its own object as it enters or leaves
-- a class's flag (`CFG.training = False`, then back), a module global, another object's
attribute -- in a differentiated function (session of 2026-12-07, twelfth). srcad runs the
manager's `__enter__` / `__exit__` as written and reads globals and class attributes as they
stood when the call began, so a block reading the flag its manager changed got the old value:
`np.sum(...) * (3.0 if CFG.training else 1.0)` gave twice Python's value and gradient,
silently. Such a `with` block is refused now (pyforms.py `_shared_state_changed`), with the
route: set the flag in the function itself, which srcad follows. A manager that keeps to its
own attributes (a timer) runs as before, its value and gradient Python's.

(First tried this session: the shape probe not exiting its copy of a manager, so that a
manager logging into a class's list in `__exit__` logs once on the first call. Measured
worse -- a manager saving and restoring a class flag then left it changed after the call --
and reverted; such a log is still written twice on a transform's first call.)"""

from __future__ import annotations

import time

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

X = np.array([0.3, -0.7, 1.1])
MODES = [{}, {"fuse": True}, {"mode": "tape"}]


class CFG:
    training = True


class evaluating:
    def __enter__(self):
        self.prev = CFG.training
        CFG.training = False
        return self

    def __exit__(self, *exc):
        CFG.training = self.prev
        return False


MODE = "train"


class global_mode:
    def __enter__(self):
        global MODE
        MODE = "eval"

    def __exit__(self, *exc):
        global MODE
        MODE = "train"


class Model:
    training = True


MODEL = Model()


class holding:
    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.model.training = False
        return self

    def __exit__(self, *exc):
        self.model.training = True


def class_flag(x):
    with evaluating():
        y = np.tanh(x) * (2.0 if CFG.training else 1.0)
    return np.sum(y) * (3.0 if CFG.training else 1.0)


def module_global(x):
    with global_mode():
        y = np.tanh(x) * (2.0 if MODE == "train" else 1.0)
    return np.sum(y)


def another_objects_attribute(x):
    with holding(MODEL):
        y = np.tanh(x) * (2.0 if MODEL.training else 1.0)
    return np.sum(y)


@pytest.mark.parametrize("opts", MODES, ids=str)
@pytest.mark.parametrize("fn", [class_flag, module_global, another_objects_attribute],
                         ids=lambda f: f.__name__)
def test_a_manager_changing_shared_state_is_refused_not_wrong(fn, opts):
    with pytest.raises(srcad.SrcadError, match="changes .* as it enters or leaves"):
        srcad.grad(fn, **opts)(X.copy())
    assert CFG.training and MODE == "train" and MODEL.training  # (nothing left changed)


class Timed:
    """Keeps to its own attributes: runs as before."""

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start
        return False


class Scaled:
    """`__enter__` hands out an array the block computes with."""

    def __init__(self, s):
        self.s = s

    def __enter__(self):
        return np.full(3, self.s)

    def __exit__(self, *exc):
        return False


def timed(x):
    with Timed() as t:
        h = np.tanh(x)
    return np.sum(h ** 2) + 0.0 * t.start


def scaled_by_the_managers_value(x):
    with Scaled(2.0) as w:
        y = np.sum(np.tanh(x) * w)
    return y


@pytest.mark.parametrize("opts", MODES, ids=str)
@pytest.mark.parametrize("fn", [timed, scaled_by_the_managers_value], ids=lambda f: f.__name__)
def test_a_manager_keeping_to_its_own_object_runs(fn, opts):
    value, grad = srcad.value_and_grad(fn, **opts)(X.copy())
    assert value == pytest.approx(fn(X.copy()), rel=1e-12)
    np.testing.assert_allclose(grad, numerical_grad(fn, (X.copy(),), h=1e-6),
                               rtol=1e-6, atol=1e-8)
