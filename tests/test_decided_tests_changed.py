"""A test srcad decided when it built the code, changed during the call: a SrcadError at the
user's line, never a bare AssertionError from generated code.

Layer classes branch on optional parts (`if self.act is None: return z`); srcad keeps the
branch Python takes for the object it knows (frontend/knowntests.py), and puts a check
where the test stood, in case the call changes the attribute before the test runs. On main
at 6379667 that check failed as an AssertionError raised from inside srcad's generated code
(or its shape probe) -- found when a function set a layer's activation between two calls of
the layer, as a user tries a layer with and without it:

    y = layer(x)
    layer.act = np.tanh
    return np.sum(layer(x) + y)

The same where a helper, `map`, a loop over setters or `layer.__setattr__(name, f)` sets it.
Now the check's failure reaches the user as a `srcad.SrcadError` naming the decided test's
own file and line (a method's, in its own file, where srcad wrote it out into the function),
with what to do instead -- the checks of `StaticTest`'s reads, `hasattr` and `isinstance`
likewise (tests/test_attribute_tests_decided.py). Tape mode runs the program as written
(Python's value and gradient). A user's own `assert` still raises AssertionError.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

from tests import fixtures_known_tests as fx


LAYER = fx.Activated()  # (`if self.act is None: return x * 2.0`, in a file of its own)
KEYS = {"a": "act"}


def set_act(f):
    LAYER.act = f


def set_in_the_function(x):
    y = LAYER(x)
    LAYER.act = np.tanh
    return np.sum(LAYER(x) * y)


def set_by_a_helper(x):
    y = LAYER(x)
    set_act(np.tanh)
    return np.sum(LAYER(x) * y)


def set_by_map(x):
    y = LAYER(x)
    list(map(set_act, [np.tanh]))
    return np.sum(LAYER(x) * y)


def set_by_a_loop_of_setters(x):
    y = LAYER(x)
    for setter in [set_act]:
        setter(np.tanh)
    return np.sum(LAYER(x) * y)


def set_by_dunder_setattr(x):
    y = LAYER(x)
    LAYER.__setattr__(KEYS["a"], np.tanh)
    return np.sum(LAYER(x) * y)


PROGRAMS = [set_in_the_function, set_by_a_helper, set_by_map, set_by_a_loop_of_setters,
            set_by_dunder_setattr]
X = np.array([0.3, -0.7, 1.1])


@pytest.fixture(autouse=True)
def _act_none():
    LAYER.act = None
    yield
    LAYER.act = None


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_a_test_changed_during_the_call_is_a_srcad_error_at_the_users_line(fn, fuse):
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(fn, fuse=fuse)(X)
    err, decided = e.value, fx.Activated.__call__.__code__.co_firstlineno + 1
    assert not isinstance(err, AssertionError)
    # (the decided test's own file and line: srcad wrote the method out into the function)
    assert (err.filename, err.lineno) == (fx.__file__, decided)
    assert "    if self.act is None:" in str(err)  # (the line quoted)
    assert "hint: set the attribute" in str(err)


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_tape_mode_runs_it_as_written(fn):
    value, g = srcad.value_and_grad(fn, mode="tape")(X)
    LAYER.act = None
    want = fn(X)
    LAYER.act = None
    assert value == pytest.approx(want, rel=1e-12)
    num = numerical_grad(lambda x: _fresh(fn, x), (X.copy(),))
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-9)


def _fresh(fn, x):
    LAYER.act = None
    try:
        return fn(x)
    finally:
        LAYER.act = None


def not_changed(x):
    return np.sum(LAYER(x) * LAYER(x))


def test_a_decided_test_that_holds_runs_warm_and_cold():
    g = srcad.grad(not_changed)
    for _ in range(2):
        np.testing.assert_allclose(g(X), 8.0 * X)


def own_assert(x):
    assert np.all(x > 0), "the user's own check"
    return np.sum(LAYER(x))


def test_the_users_own_assert_is_an_assertion_error():
    g = srcad.grad(own_assert)
    np.testing.assert_allclose(g(np.abs(X)), 2.0 * np.ones(3))
    with pytest.raises(AssertionError, match="the user's own check") as e:
        g(X)
    assert not isinstance(e.value, srcad.SrcadError)

