"""Lists and tuples as arguments: indexed every way Python allows, and used as arrays.

Two silently wrong gradients lived here (issue 11): ``p[-1]`` of a list argument got zeros in
source mode (its slot was keyed -1, the gradient read slot 2), and a list that numpy used as
an array (``np.sum(p)``) got zeros (its array cotangent was never split into the items), or a
RecursionError when added to a gather's. Each case runs in source and tape mode, against
central differences, and the two modes agree bit for bit. The random version of these is
tests/test_fuzz_pytrees.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads

RNG = np.random.default_rng(11)


def _list(k=3, shape=(3,), dtype=np.float64):
    return [RNG.standard_normal(shape).astype(dtype) for _ in range(k)]


def _leaves(tree):
    if isinstance(tree, dict):
        for k in tree:
            yield from _leaves(tree[k])
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            yield from _leaves(v)
    else:
        yield tree


def both_modes(fn, args, wrt=0):
    """check_grads in both modes; the two modes' gradients are bitwise equal."""
    out = {}
    for mode in ("source", "tape"):
        check_grads(fn, args, wrt=wrt, mode=mode)
        out[mode] = srcad.grad(fn, wrt=wrt, mode=mode)(*args)
    for a, b in zip(_leaves(out["source"]), _leaves(out["tape"])):
        assert np.array_equal(a, b) and np.result_type(a) == np.result_type(b)
    return out["source"]


# --- indexing ----------------------------------------------------------------------------------


def last_item(p):
    return np.sum(p[-1] * 2.0)


def first_and_last(t):
    a, b = t[0], t[-1]
    return np.sum(a * b)


def computed_index(p):
    return np.sum(p[len(p) - 1] * p[1 - len(p)])


def sliced(p):
    q = p[1:]
    r = p[::-1]
    s = p[-2:]
    return np.sum(q[0] * r[0]) + np.sum(s[-1]) + np.sum(p[:-1][-1] ** 2)


def unpacked_slice(p):
    a, b = p[-2:]
    return np.sum(np.tanh(a) * b)


def loop_with_previous(p):
    acc = 0.0
    for i in range(len(p)):
        acc = acc + np.sum(p[i] * p[i - 1])  # p[-1] at i = 0
    return acc


def loop_over_items(p):
    acc = 0.0
    for w in p:
        acc = acc + np.sum(np.sin(w))
    for i, w in enumerate(p[::-1]):
        acc = acc + (i + 1.0) * np.sum(w)
    return acc


def nested(p):
    return np.sum(p[-1][0] * p[0][-1]) + np.sum(p[1][1])


def dict_of_lists(params):
    layers = params["layers"]
    return np.sum(layers[-1] * params["w"]) + np.sum(layers[0])


def mlp(Ws, bs, x):
    """The reported case: an MLP whose output layer is Ws[-1], bs[-1]."""
    h = x
    for i in range(len(Ws) - 1):
        h = np.tanh(h @ Ws[i] + bs[i])
    return np.sum((h @ Ws[-1] + bs[-1]) ** 2)


@pytest.mark.parametrize("fn, make", [
    (last_item, lambda: (_list(),)),
    (first_and_last, lambda: (tuple(_list()),)),
    (computed_index, lambda: (_list(),)),
    (sliced, lambda: (_list(4),)),
    (unpacked_slice, lambda: (tuple(_list(4)),)),
    (loop_with_previous, lambda: (_list(),)),
    (loop_over_items, lambda: (_list(),)),
    (nested, lambda: ([tuple(_list(2)) for _ in range(3)],)),
    (dict_of_lists, lambda: ({"w": _list(1)[0], "layers": _list()},)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_indexing_containers(fn, make):
    g = both_modes(fn, make())
    assert any(np.any(leaf != 0) for leaf in _leaves(g))


def test_negative_index_gets_its_gradient():
    p = _list()
    g = srcad.grad(last_item)(p)
    assert np.array_equal(g[2], np.full(3, 2.0)) and not np.any(g[0]) and not np.any(g[1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mlp_output_layer_indexed_from_the_end(dtype):
    Ws = [RNG.standard_normal(s).astype(dtype) for s in ((4, 5), (5, 5), (5, 2))]
    bs = [RNG.standard_normal(s[1]).astype(dtype) for s in ((4, 5), (5, 5), (5, 2))]
    x = RNG.standard_normal((6, 4)).astype(dtype)
    dWs, dbs = both_modes(mlp, (Ws, bs, x), wrt=(0, 1))
    assert np.any(dWs[-1]) and np.any(dbs[-1])
    assert all(d.dtype == dtype for d in dWs + dbs)


# --- a list used as an array -------------------------------------------------------------------


def sum_of_list(p):
    return np.sum(p)


def gather_plus_sum(p):
    return np.sum(p[0] * p[1] + np.sum(p))


def array_then_gather(p):
    a = p[0] * 2.0
    b = np.sum(np.tanh(p))
    return np.sum(a) + b


def mean_axis0(p):
    return np.sum(np.mean(p, axis=0) ** 2) + np.sum(np.max(p, axis=0))


def list_in_ufuncs(p):
    return np.sum(np.maximum(p, 0.1) * np.exp(p)) + np.sum(np.where(np.asarray(p) > 0, p, 0.0))


def list_times_array(p, w):
    return np.sum(np.asarray(p) * w)


def array_of_items(a, b):
    m = np.array([[a, b], [b * 2.0, a]])
    v = np.asarray((a, b, a))
    return np.sum(m @ v[:2]) + np.sum(np.stack([a, b]) ** 3)


def matmul_of_list(p, x):
    return np.sum(np.tanh(x @ np.asarray(p)))


@pytest.mark.parametrize("fn, make", [
    (sum_of_list, lambda: ([1.0, 2.0],)),
    (sum_of_list, lambda: (_list(),)),
    (sum_of_list, lambda: (tuple(_list(2, (2, 3))),)),
    (gather_plus_sum, lambda: (_list(),)),
    (array_then_gather, lambda: (_list(2),)),
    (mean_axis0, lambda: (_list(4, (2, 3)),)),
    (list_in_ufuncs, lambda: (_list(),)),
    (list_in_ufuncs, lambda: ([0.5, -0.25, 1.5],)),
    (list_times_array, lambda: (_list(2), RNG.standard_normal(3))),
    (array_of_items, lambda: (RNG.standard_normal(()), RNG.standard_normal(()))),
    (matmul_of_list, lambda: (_list(3, (2,)), RNG.standard_normal((4, 3)))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_list_used_as_an_array(fn, make):
    args = make()
    wrt = tuple(range(len(args))) if len(args) > 1 else 0
    both_modes(fn, args, wrt=wrt)


def test_list_of_floats_gets_float_gradients():
    g = srcad.grad(sum_of_list)([1.0, 2.0])
    assert g == [1.0, 1.0] and all(type(v) is float for v in g)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_list_as_array_keeps_dtypes(dtype):
    p = _list(3, (2,), dtype)
    for mode in ("source", "tape"):
        g = srcad.grad(list_in_ufuncs, mode=mode)(p)
        assert isinstance(g, list) and all(d.dtype == dtype and d.shape == (2,) for d in g)


def test_vjp_and_jvp_of_a_list_argument():
    p = _list(2)
    out, pull = srcad.vjp(mean_axis0, p)
    (dp,) = pull(1.0)
    assert np.allclose(dp[0], srcad.grad(mean_axis0)(p)[0])
    t = [np.ones(3), np.zeros(3)]
    _, tangent = srcad.jvp(mean_axis0, (p,), (t,))
    assert np.isclose(tangent, np.sum(srcad.grad(mean_axis0)(p)[0]))


# --- Python operators on sequences ---------------------------------------------------------------


def shape_arithmetic(x):
    s = x.shape + (1,)
    return np.sum(np.reshape(x, s) * 2.0)


def repeat_inactive(x, n):
    reps = [1.0, 2.0] * n
    return np.sum(x) * len(reps)


def concat_active(p, q):
    return np.sum(np.asarray(p + q))


def test_python_operators_on_inactive_sequences_run_as_python_does():
    x = RNG.standard_normal(3)
    both_modes(shape_arithmetic, (x,))
    assert srcad.grad(repeat_inactive)(x, 3).tolist() == [6.0] * 3


def test_python_operator_on_a_differentiated_list_is_refused():
    p, q = _list(2), _list(2)
    with pytest.raises(srcad.SrcadError, match=r"concatenates or repeats") as e:
        srcad.grad(concat_active)(p, q)
    assert "test_sequences.py" in str(e.value) and "np.asarray(p + q)" in str(e.value)


# --- the power rule with Python floats (issue 11: it crashed) ------------------------------------


def branchy_power(a, b):
    if a >= 0:
        a = a ** b
    else:
        a = (-a) ** b
    return a


@pytest.mark.parametrize("a", [2.0, -3.0])
def test_power_rule_with_python_float_base(a):
    for mode in ("source", "tape"):
        g = srcad.grad(branchy_power, wrt=1, mode=mode)(a, 1.5)
        assert np.isclose(g, abs(a) ** 1.5 * np.log(abs(a)))
    check_grads(branchy_power, (a, 1.5), wrt=(0, 1))
