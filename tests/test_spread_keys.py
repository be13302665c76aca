"""``f(x, **spec)`` of a user function where the dict has a key f takes no parameter for,
or one the call already binds: Python raises TypeError when the call runs. Source mode used
to read the keys f does take and drop the rest (a result where Python has none); srcad now
says Python's TypeError at the call's line, in every way it knows the dict's keys (a display
in the function, a dict argument, a module's dict), in both modes."""

import numpy as np
import pytest

import srcad

SPEC = {"scale": 2.0, "shift": 1.0}
TYPO = {"scale": 2.0, "shfit": 1.0}


def _dense(x, scale, shift=0.0):
    return np.tanh(x * scale + shift)


def module_dict(x):
    return np.sum(_dense(x, **SPEC))


def module_dict_with_a_typo(x):
    return np.sum(_dense(x, **TYPO))


def local_dict_with_an_extra_key(x):
    spec = {"scale": 2.0, "bias": 1.0}
    return np.sum(_dense(x, **spec))


def key_given_twice(x):
    spec = {"scale": 2.0, "shift": 1.0}
    return np.sum(_dense(x, shift=0.5, **spec))


def key_given_by_position(x):
    spec = {"x": x, "scale": 2.0}
    return np.sum(_dense(x, **spec))


def argument_dict(x, spec):
    return np.sum(_dense(x, **spec))


X = np.array([0.3, -0.2, 0.5])


@pytest.mark.parametrize("fn, message", [
    (module_dict_with_a_typo, "unexpected keyword argument 'shfit'"),
    (local_dict_with_an_extra_key, "unexpected keyword argument 'bias'"),
    (key_given_twice, "multiple values for keyword argument 'shift'"),
    (key_given_by_position, "multiple values for argument 'x'")],
    ids=lambda v: getattr(v, "__name__", ""))
def test_a_key_python_refuses_is_refused(fn, message):
    with pytest.raises(TypeError):
        fn(X.copy())
    with pytest.raises(srcad.SrcadError, match=message) as e:
        srcad.grad(fn)(X)
    assert "test_spread_keys.py" in str(e.value)
    with pytest.raises((srcad.SrcadError, TypeError), match=message):  # (tape mode too)
        srcad.grad(fn, mode="tape")(X)


def test_an_argument_dict_with_an_extra_key_is_refused_and_a_right_one_is_not():
    with pytest.raises(srcad.SrcadError, match="unexpected keyword argument 'bias'"):
        srcad.grad(argument_dict)(X, {"scale": 2.0, "bias": 1.0})
    good = {"scale": 2.0, "shift": 1.0}
    g = srcad.grad(argument_dict)(X, good)
    want = 2.0 * (1 - np.tanh(2.0 * X + 1.0) ** 2)
    assert np.allclose(g, want, rtol=1e-12)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_keys_the_function_takes_work(mode):
    g = srcad.grad(module_dict, mode=mode)(X)
    assert np.allclose(g, 2.0 * (1 - np.tanh(2.0 * X + 1.0) ** 2), rtol=1e-12)
