"""``lst.pop()`` of a list the function builds (a probe of 2026-12-04): source mode read it as
one of srcad's own stacks and crashed in the backward (``AttributeError: 'list' object has no
attribute '_cotangents'``). Now a pop of a list the function makes and no other name shares is
a value (``v = lst[i]; lst = lst[:i] + lst[i:][1:]``, frontend/pylower.py `list_pop`), also
inside an expression (``h @ stack.pop()``); a pop of a list given to the function is refused
with a SrcadError. Checked against the function itself and central differences, both modes.
"""

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = ["source", "tape"]


def last_layer_popped(Ws, x):
    ws = list(Ws)
    last = ws.pop()
    h = x
    for W in ws:
        h = np.tanh(h @ W)
    return np.sum(h @ last)


def popped_inside_an_expression(Ws, x):
    stack = list(Ws)
    h = x
    while stack:
        h = np.tanh(h @ stack.pop())
    return np.sum(h ** 2)


def popped_at_an_index(Ws, x):
    ws = [W * 1.0 for W in Ws]
    first = ws.pop(0)
    mid = ws.pop(-2)
    h = np.tanh(x @ first) @ mid
    for W in ws:
        h = np.sin(h @ W)
    return np.sum(h)


def pop_of_a_computed_index(Ws, x):
    ws = list(Ws)
    k = len(ws) // 2
    W = ws.pop(k + 0)
    return np.sum(np.tanh(x @ W) @ ws[0] @ ws[-1])


def popped_and_appended(Ws, x):
    q = [x]
    for W in Ws:
        h = q.pop()
        q.append(np.tanh(h @ W))
        q.append(h * 0.5)
        q.pop()
    return np.sum(q.pop())


RNG = np.random.default_rng(11)
WS = [RNG.standard_normal((3, 3)) * 0.6 for _ in range(3)]
X = RNG.standard_normal((2, 3))


@pytest.mark.parametrize("fn", [last_layer_popped, popped_inside_an_expression,
                                popped_at_an_index, pop_of_a_computed_index,
                                popped_and_appended], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", MODES)
def test_a_pop_of_a_list_the_function_builds(fn, mode):
    value, (gWs, gx) = srcad.value_and_grad(fn, wrt=(0, 1), mode=mode)(WS, X)
    assert np.isclose(value, fn(WS, X), rtol=1e-13)
    wWs, wx = numerical_grad(fn, (WS, X), wrt=(0, 1), h=1e-6)
    for i in range(len(WS)):
        np.testing.assert_allclose(gWs[i], wWs[i], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gx, wx, rtol=1e-6, atol=1e-8)


def pops_its_argument(Ws, x):
    last = Ws.pop()
    return np.sum(x @ last)


def test_a_pop_of_an_argument_is_refused():
    with pytest.raises(srcad.SrcadError, match="pop"):
        srcad.grad(pops_its_argument, wrt=(0, 1))(list(WS), X)


def test_a_pop_of_an_empty_list_raises_as_python_does():
    def empty(x):
        xs = []
        return np.sum(xs.pop() * x)

    with pytest.raises(IndexError):
        empty(X)
    with pytest.raises(IndexError):
        srcad.grad(empty)(X)


def pops_inside_a_loop_over_the_list(Ws, x):
    ws = [W * 1.0 for W in Ws]
    h = x
    for W in ws:  # (Python's iterator sees the list shrink: two trips, not three)
        h = np.tanh(h @ W) @ ws.pop()
    return np.sum(h)


def appended_then_popped_in_a_loop_over_it(Ws, x):
    ws = list(Ws)
    ws.append(Ws[0] * 0.5)
    h = x
    for W in ws:
        h = np.tanh(h @ W) @ ws.pop()
    return np.sum(h)


@pytest.mark.parametrize("fn", [pops_inside_a_loop_over_the_list,
                                appended_then_popped_in_a_loop_over_it],
                         ids=lambda f: f.__name__)
def test_a_pop_inside_a_loop_over_the_same_list_is_refused(fn):
    """The list value rebuilt at each pop would leave the loop walking the old list: a
    wrong value and gradient, silently (found while writing the fuzz form)."""
    fn(WS, X)  # (Python runs it)
    with pytest.raises(srcad.SrcadError, match="inside a loop over"):
        srcad.grad(fn, wrt=(0, 1))(WS, X)


def one_array_twice_popped(x):
    v = np.mean(x, axis=0)
    stack = list([v, v])
    acc = v * 0.5
    while stack:
        acc = acc * 0.5 + np.tanh(stack.pop())
    return np.sum(acc)


def one_array_twice_walked_after_a_pop(x):
    items = list([x, x, x])
    t = items.pop()
    for v in items:
        t = t * 0.5 + np.sin(v)
    return np.sum(t * x)


def one_array_twice_indexed(x):
    v = np.mean(x, axis=0)
    lst = list([v, v])
    acc = v * 0.5
    n = 2
    while n:
        acc = acc * 0.5 + np.tanh(lst[n - 1])
        n -= 1
    return np.sum(acc)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", [one_array_twice_popped, one_array_twice_walked_after_a_pop,
                                one_array_twice_indexed], ids=lambda f: f.__name__)
def test_source_and_tape_agree_bit_for_bit(fn, dtype):
    """One array held twice by a list read back by pops or a run-time index: each item's
    cotangent is added where it is read, in tape mode's order (the fuzz form of 2026-12-04
    found a pop's rebuilt list, and `list([v, v])` read by index, adding them in another
    order: the last bits differed)."""
    for seed in range(4):
        x = np.random.default_rng(seed).standard_normal((4, 2)).astype(dtype)
        src = srcad.value_and_grad(fn)(x)
        tape = srcad.value_and_grad(fn, mode="tape")(x)
        assert np.array_equal(src[0], tape[0]) and np.array_equal(src[1], tape[1]), seed


def one_array_twice_popped_from_the_middle(x):
    v = np.tanh(x)
    lst = [v, v, v]
    t = lst.pop(-2)
    w = t * 0.5 + sum(lst)
    return np.dot(w, w)


def test_pop_from_the_middle_of_a_list_holding_one_array_twice_bit_for_bit():
    """`t = lst.pop(-2)` then `t * 0.5 + sum(lst)` of a list holding one array thrice: two
    orders differed from tape mode's until 2026-12-04 (a strict xfail) -- the rebuilt list's
    items' cotangents were added where the list was made, not where each is read (the two
    displays joined are one display now: expressions.py `_joined_displays`), and `sum(lst)`,
    lowered to a loop before the statement, ran before `t * 0.5` (the operands before such a
    loop are computed first now, in Python's order: pylower.py `in_order`)."""
    for seed in range(8):
        x = np.random.default_rng(seed).standard_normal(3)
        src = srcad.value_and_grad(one_array_twice_popped_from_the_middle)(x)
        tape = srcad.value_and_grad(one_array_twice_popped_from_the_middle, mode="tape")(x)
        np.testing.assert_allclose(src[1], tape[1], rtol=1e-14)
        assert np.array_equal(src[1], tape[1]), seed


def popped_under_a_branch(w, c):
    v1 = np.sqrt(w * w + 1.0)
    lst = [v1, w, v1]
    if np.sum(v1) > 0:
        t = lst.pop(0)
    else:
        t = v1 * 0.25
    v2 = t * 0.5 + sum(lst)
    return np.sum(c * v2 * v1)


def test_popped_under_a_branch_gradient_is_right():
    rng = np.random.default_rng(0)
    w, c = rng.uniform(-1.3, 1.3, 3), rng.uniform(-1.3, 1.3, (4, 1))
    g = srcad.grad(popped_under_a_branch)(w, c)
    np.testing.assert_allclose(g, numerical_grad(popped_under_a_branch, (w, c)), rtol=1e-6)


@pytest.mark.xfail(strict=True, reason="open: a list holding one array twice, popped in a "
                   "branch: after the branch the list is one of two values, read by index at "
                   "run time, so its items' cotangents reach the array where the display was "
                   "made, not where each item is read (tape mode's order): the last bit of 9 "
                   "of 20 draws differs (found by the nesting fuzzer, 2026-12-06)")
def test_popped_under_a_branch_source_is_tape_bit_for_bit():
    gs = srcad.grad(popped_under_a_branch)
    gt = srcad.grad(popped_under_a_branch, mode="tape")
    for seed in range(20):
        rng = np.random.default_rng(seed)
        w, c = rng.uniform(-1.3, 1.3, 3), rng.uniform(-1.3, 1.3, (4, 1))
        assert np.array_equal(gs(w, c), gt(w, c)), seed
