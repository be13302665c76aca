"""Assignment expressions (`:=`): each becomes the assignment it is, just before its statement
(srcad/frontend/walrus.py), where that is exactly Python's meaning; elsewhere a refusal at
the walrus's line."""

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad


def walrus_if(x):
    if (s := np.sum(x * x)) > 1.0:
        return s * 2.0
    return -s


def walrus_while(x):
    t = 0.0
    y = x
    while (n := np.sum(y * y)) > 0.1:  # bound before each test: before the loop, end of body
        y = y * 0.5
        t = t + n
    return t + np.sum(y) + n


def walrus_elif(x):
    if np.sum(x) > 100.0:
        return np.sum(x)
    elif (m := np.max(x)) > -100.0:  # (evaluated only when the first test fails)
        return m * np.sum(x)
    return 0.0


def walrus_nested_values(x):
    y = np.tanh(x) * (a := np.sum((b := np.sin(x)) ** 2))
    return np.sum(y) + a * np.sum(b)


def walrus_in_loop_body(x):
    acc = 0.0
    for i in range(3):
        acc = acc + (t := np.sum(np.cos(x * i)))
        acc = acc * t
    return acc


def walrus_read_after_in_the_statement(x):
    # (read after the walrus in Python's order: the hoisted binding means the same)
    y = np.sum((h := np.tanh(x)) * h) + np.sum(np.maximum(m := np.sin(x), m * 0.5))
    return y + {"a": (k := np.sum(x ** 2)), "b": k * 2.0}["b"] + np.sum(h)


def walrus_reads_its_own_old_value(x):
    r = x * 0.5
    t = np.sum((r := np.tanh(r) + x) ** 2)
    return t + np.sum(r)


CASES = [walrus_if, walrus_while, walrus_elif, walrus_nested_values, walrus_in_loop_body,
         walrus_read_after_in_the_statement, walrus_reads_its_own_old_value]


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_walrus_value_and_gradient(fn, mode):
    for seed in (0, 3):
        x = np.random.default_rng(seed).standard_normal(4) * 1.5
        value, g = srcad.value_and_grad(fn, mode=mode)(x.copy())
        assert value == fn(x.copy())
        assert np.allclose(g, numerical_grad(fn, (x,)), rtol=1e-6, atol=1e-8)


def test_walrus_forward_mode():
    x, v = np.random.default_rng(1).standard_normal((2, 4))
    out, tan = srcad.jvp(walrus_while, (x,), (v,))
    assert out == walrus_while(x)
    assert np.isclose(tan, numerical_grad(walrus_while, (x,)) @ v)


def walrus_after_and(x):
    if np.sum(x) > -100.0 and (m := np.max(x)) > 0.0:  # ERR (only when the first holds)
        return m
    return np.sum(x)


def walrus_name_read_in_the_statement(x):
    s = 1.0
    y = s + (s := np.sum(x))  # ERR (s read before it is bound: order matters)
    return y * s


def walrus_name_bound_twice(x):
    y = (h := np.sum(x)) + (h := h * 2.0)  # ERR (the first walrus's place reads the first h)
    return y * h


def walrus_read_in_a_dict_key_before(x):
    s = 1.0
    d = {s: 1.0, "v": (s := np.sum(x))}  # ERR (the key is evaluated before the walrus)
    return d["v"] * s


def walrus_while_with_continue(x):
    y = x
    k = 0
    while (n := np.sum(y * y)) > 0.1:  # ERR (a continue would skip the re-binding)
        y = y * 0.5
        k += 1
        if k > 100:
            continue
    return np.sum(y) + n


def walrus_in_comprehension(x):
    # (a comprehension's condition: hoisted in its loop -- tests/test_probe17_forms.py --
    # but not after `and`, where Python may not evaluate it)
    return sum([y for v in x if v > 0 and (y := v * v) > 0.1])  # ERR


def walrus_in_comprehension_condition(x):
    return sum([y for v in x if (y := v * v) > 0.1]) + y


def test_walrus_in_a_comprehension_condition_binds_at_each_step():
    x = np.array([0.2, 0.5, -0.7, 0.05])
    for mode in ("source", "tape"):
        v, g = srcad.value_and_grad(walrus_in_comprehension_condition, mode=mode)(x)
        assert v == walrus_in_comprehension_condition(x)
        np.testing.assert_allclose(g, numerical_grad(walrus_in_comprehension_condition, (x,)),
                                   rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("fn", [walrus_after_and, walrus_name_read_in_the_statement,
                                walrus_name_bound_twice, walrus_read_in_a_dict_key_before,
                                walrus_while_with_continue, walrus_in_comprehension],
                         ids=lambda f: f.__name__)
def test_walrus_that_is_not_a_statement_is_refused_at_its_line(fn):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, t in enumerate(lines) if "# ERR" in t)
    with pytest.raises(srcad.SrcadError, match=r"assignment expression") as e:
        srcad.grad(fn)(np.ones(4))
    assert e.value.lineno == line and e.value.filename.endswith("test_walrus.py")
