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


def central(f, v, h=1e-6):
    g = np.zeros_like(v)
    for i in np.ndindex(v.shape):
        up, dn = v.copy(), v.copy()
        up[i] += h
        dn[i] -= h
        g[i] = (f(up) - f(dn)) / (2 * h)
    return g


@pytest.mark.parametrize("fn", [last_layer_popped, popped_inside_an_expression,
                                popped_at_an_index, pop_of_a_computed_index,
                                popped_and_appended], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", MODES)
def test_a_pop_of_a_list_the_function_builds(fn, mode):
    value, (gWs, gx) = srcad.value_and_grad(fn, wrt=(0, 1), mode=mode)(WS, X)
    assert np.isclose(value, fn(WS, X), rtol=1e-13)
    for i in range(len(WS)):
        want = central(lambda v: fn([v if j == i else WS[j] for j in range(len(WS))], X), WS[i])
        np.testing.assert_allclose(gWs[i], want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gx, central(lambda v: fn(WS, v), X), rtol=1e-6, atol=1e-8)


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
