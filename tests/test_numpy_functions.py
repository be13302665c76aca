"""numpy functions that write by index, reduce by segment, or take a Python callable:
``ufunc.at`` (copy on write, repeated indices accumulate), ``ufunc.reduceat``,
``np.piecewise``, ``np.vectorize``, ``np.apply_along_axis`` / ``np.apply_over_axes``,
``x.view()`` and ``np.nditer``. Each is checked in both modes against central differences,
in reverse (grad) and forward (jvp) mode and at second order (Hessians against differences
of the gradient), against torch where torch has the op (index_add / scatter_reduce /
segment_reduce), and tape mode agrees with source mode bit for bit."""

from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest
import torch

import srcad
from srcad.testing import check_grads, check_jvp

_SRC = '''
import numpy as np


def add_at(x):
    y = np.zeros(3)
    np.add.at(y, [0, 1, 1, 2], x)
    return np.sum(y * y)


def add_at_into_x(x):
    y = x * 1.5
    np.add.at(y, [0, 0, 3], np.sin(x[:3]))
    return np.sum(y ** 3)


def add_at_2d_broadcast(x):
    m = np.outer(x, x[:3])
    np.add.at(m, [1, 1, 2], x[:3])
    np.add.at(m, ([0, 0], [2, 2]), 2.0 * x[0])
    return np.sum(np.tanh(m))


def add_at_view(x):
    m = np.outer(x, x)
    r = m[1]
    np.add.at(m, [1, 1], x)
    return np.sum(r * m)


def subtract_at(x):
    y = x ** 2
    np.subtract.at(y, [2, 2, 0], x[1:])
    return np.sum(y * np.arange(1.0, 5.0))


def multiply_at(x):
    y = x + 1.0
    np.multiply.at(y, [0, 1, 1, 1], np.cos(x))
    return np.sum(y * y)


def maximum_at(x):
    y = np.zeros(2) + x[0]
    np.maximum.at(y, [0, 1, 1, 0], x * np.array([1.0, -1.0, 2.0, 0.5]))
    return np.sum(y ** 2)


def minimum_at(x):
    y = np.ones(2) * x[3]
    np.minimum.at(y, [1, 0, 1, 1], x ** 2)
    return np.sum(np.exp(y))


def negative_at(x):
    y = x * x
    np.negative.at(y, [0, 1, 1, 3, 3, 3])
    return np.sum(y * np.arange(1.0, 5.0))


def add_reduceat(x):
    return np.sum(np.add.reduceat(x * x, [0, 2]) ** 2)


def add_reduceat_overlap(x):
    return np.sum(np.sin(np.add.reduceat(x, [0, 3, 1, 3])))


def multiply_reduceat(x):
    m = np.reshape(x, (2, 2)) + 1.0
    return np.sum(np.multiply.reduceat(np.concatenate([m, m * x[0]], 1), [0, 1, 3], axis=1) ** 2)


def maximum_reduceat(x):
    return np.sum(np.maximum.reduceat(x * np.array([1.0, 2.0, -1.0, 0.5]), [0, 2, 1]) ** 2)


def minimum_reduceat(x):
    return np.sum(np.exp(np.minimum.reduceat(np.outer(x, x), [0, 3], axis=0)))


def branchy(v):
    return v * v if v > 0 else -v


vbranchy = np.vectorize(branchy)


@np.vectorize
def decorated(v):
    return np.sin(v) if v < 0.5 else v * 2.0


def piecewise(x):
    return np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * v]))


def piecewise_default(x):
    # later conditions win; a constant; the default where no condition holds; a ufunc
    y = np.piecewise(x, [x < 0.5, x < 0, x > 1.0], [np.sin, 2.0, lambda v: v ** 3, np.tanh])
    return np.sum(y * x)


def piecewise_one_condition(x):
    return np.sum(np.piecewise(x * 2.0, x > 0, [branchy_arrays, lambda v, k: v * k], 3.0))


def branchy_arrays(v, k):
    return np.exp(v) * k


def vectorize(x):
    return np.sum(np.vectorize(lambda v: v * v if v > 0 else -v)(x))


def vectorize_objects(x):
    return np.sum(vbranchy(x) * decorated(x))


def vectorize_broadcast(x):
    y = np.vectorize(lambda a, b: a * b if a > b else a + b, otypes='d')(x, x[::-1].reshape(4, 1))
    return np.sum(y ** 2)


def vectorize_local(x):
    vf = np.vectorize(branchy)  # (held in a local, called twice)
    return np.sum(vf(x) * vf(x[::-1]))


def vectorize_signature(x):
    rows = np.vectorize(lambda r, s: np.sum(r ** 2) * r[0] + s, signature="(n),()->()")
    return np.sum(np.sin(rows(x.reshape(2, 2), x[:2])))


def vectorize_signature_out(x):
    y = np.vectorize(lambda r: np.cumsum(np.sin(r)) * r[::-1], signature="(n)->(n)")(
        x.reshape(2, 2))
    return np.sum(y ** 2)


def power_plus(v, p):
    return v ** p + np.cos(v) if v > 0 else v * p


def vectorize_excluded(x):
    return np.sum(np.vectorize(power_plus, excluded={1})(x, 3) * x)


def vectorize_excluded_keyword(x):
    return np.sum(np.vectorize(power_plus, excluded={"p"})(x * 2.0, p=2))


def piecewise_condlist_value(x):
    conds = [x < 0, x > 1.0]
    one = x > 0.5
    y = np.piecewise(x, conds, [np.sin, lambda v: v ** 2, np.tanh])
    return np.sum(y * np.piecewise(x, one, [np.exp, np.cos]))


def apply_along_axis(x):
    return np.sum(np.apply_along_axis(lambda r: r * r.sum(), 1, x.reshape(2, 2)) ** 2)


def apply_along_axis_outer(x):
    m = np.reshape(np.concatenate([x, x * x]), (2, 4))
    return np.sum(np.apply_along_axis(lambda r, s: np.outer(r, r) * s, 0, m, 1.5) ** 2)


def apply_along_axis_scalar(x):
    return np.sum(np.sin(np.apply_along_axis(np.max, -1, np.outer(x, x))))
'''

AT = ["add_at", "add_at_into_x", "add_at_2d_broadcast", "add_at_view", "subtract_at",
      "multiply_at", "maximum_at", "minimum_at", "negative_at"]
REDUCEAT = ["add_reduceat", "add_reduceat_overlap", "multiply_reduceat", "maximum_reduceat",
            "minimum_reduceat"]
CALLBACKS = ["piecewise", "piecewise_default", "piecewise_one_condition", "vectorize",
             "vectorize_objects", "vectorize_broadcast", "apply_along_axis",
             "apply_along_axis_outer", "apply_along_axis_scalar", "vectorize_local",
             "vectorize_signature", "vectorize_signature_out", "vectorize_excluded",
             "vectorize_excluded_keyword", "piecewise_condlist_value"]
NAMES = AT + REDUCEAT + CALLBACKS


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("numpy_functions") / "numpy_functions_case.py"
    path.write_text(textwrap.dedent(_SRC))
    spec = importlib.util.spec_from_file_location("numpy_functions_case", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def _x():
    return np.array([0.3, -0.5, 0.8, 1.1])


def _numerical_jacobian(fn, x, h=1e-5):
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        cols.append((fn(x + e) - fn(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_gradient(mod, name, mode):
    check_grads(getattr(mod, name), (_x(),), mode=mode)


@pytest.mark.parametrize("name", NAMES)
def test_tape_is_bitwise_source(mod, name):
    fn = getattr(mod, name)
    s = srcad.value_and_grad(fn)(_x())
    t = srcad.value_and_grad(fn, mode="tape")(_x())
    assert np.array_equal(s[0], t[0]) and np.array_equal(s[1], t[1])
    assert np.array_equal(s[0], fn(_x()))  # numpy's own value


@pytest.mark.parametrize("name", NAMES)
def test_jvp(mod, name):
    check_jvp(getattr(mod, name), (_x(),), rng=3, h=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_vjp(mod, name):
    fn = getattr(mod, name)
    out, pullback = srcad.vjp(fn, _x())
    (g,) = pullback(2.0)
    np.testing.assert_allclose(g, 2.0 * srcad.grad(fn)(_x()), rtol=1e-12)
    assert np.array_equal(out, fn(_x()))


@pytest.mark.parametrize("name", NAMES)
def test_second_order(mod, name):
    fn = getattr(mod, name)
    hess = srcad.hessian(fn)(_x())
    want = _numerical_jacobian(srcad.grad(fn), _x())
    np.testing.assert_allclose(hess, want, atol=1e-6, rtol=1e-5)


# --- against torch -----------------------------------------------------------------------


def _torch_grad(build, x):
    t = torch.tensor(x, requires_grad=True)
    build(t).backward()
    return t.grad.numpy()


def test_add_at_against_torch(mod):
    def build(t):
        y = torch.zeros(3, dtype=torch.float64).index_add(0, torch.tensor([0, 1, 1, 2]), t)
        return (y * y).sum()
    np.testing.assert_allclose(srcad.grad(mod.add_at)(_x()), _torch_grad(build, _x()),
                               rtol=1e-12)


@pytest.mark.parametrize("name, reduce", [("multiply_at", "prod"), ("maximum_at", "amax"),
                                          ("minimum_at", "amin")])
def test_scatter_reduce_against_torch(mod, name, reduce):
    def build(t):
        idx = {"multiply_at": [0, 1, 1, 1], "maximum_at": [0, 1, 1, 0],
               "minimum_at": [1, 0, 1, 1]}[name]
        if name == "multiply_at":
            y, v = t + 1.0, torch.cos(t)
        elif name == "maximum_at":
            y = torch.zeros(2, dtype=torch.float64) + t[0]
            v = t * torch.tensor([1.0, -1.0, 2.0, 0.5], dtype=torch.float64)
        else:
            y, v = torch.ones(2, dtype=torch.float64) * t[3], t ** 2
        y = y.scatter_reduce(0, torch.tensor(idx), v, reduce=reduce, include_self=True)
        return (torch.exp(y) if name == "minimum_at" else y * y if name == "multiply_at"
                else y ** 2).sum()
    for mode in ("source", "tape"):
        np.testing.assert_allclose(srcad.grad(getattr(mod, name), mode=mode)(_x()),
                                   _torch_grad(build, _x()), rtol=1e-12)


def test_ties_split_like_torch():
    """maximum.at with b equal to a at a position: torch's amax splits g evenly."""
    a = np.array([1.0, 2.0])
    b = np.array([1.0, 0.5, 2.0])
    idx = [0, 0, 1]
    g = np.array([1.0, 3.0])
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    ta.scatter_reduce(0, torch.tensor(idx), tb, "amax").backward(torch.tensor(g))
    from srcad.runtime_at import maximum_at
    out, pullback = srcad.vjp(_call_maximum_at, a, b)
    da, db = pullback(g)
    np.testing.assert_array_equal(out, maximum_at(a, idx, b))
    np.testing.assert_allclose(da, ta.grad.numpy())
    np.testing.assert_allclose(db, tb.grad.numpy())


def _call_maximum_at(a, b):
    y = a * 1.0
    np.maximum.at(y, [0, 0, 1], b)
    return y


def test_add_reduceat_against_torch_segment_reduce(mod):
    def build(t):
        s = torch.segment_reduce(t * t, "sum", lengths=torch.tensor([2, 2]))
        return (s ** 2).sum()
    np.testing.assert_allclose(srcad.grad(mod.add_reduceat)(_x()), _torch_grad(build, _x()),
                               rtol=1e-12)


def test_reduceat_rows_match_numpy():
    """The segment matrix follows numpy's rule (indices[i] >= indices[i+1] gives a[i])."""
    from srcad.runtime_at import reduceat_gather
    a = np.arange(1.0, 7.0)
    for idx in ([0, 3, 1, 4, 4], [5, 0], [0], [2, 2, 2]):
        rows = reduceat_gather(a, idx, 0, 0.0)
        np.testing.assert_array_equal(rows.sum(-1), np.add.reduceat(a, idx))


def test_at_into_a_plain_array_is_refused_in_tape_mode(tmp_path):
    """np.add.at into an argument's plain array (not one the function made): numpy would
    store plain numbers -- tape mode refuses, source mode differentiates the copy on write."""
    path = tmp_path / "at_plain_case.py"
    path.write_text(textwrap.dedent('''
        import numpy as np
        def f(x, y):
            np.add.at(y, [0, 0], x)
            return np.sum(y * y)
    '''))
    spec = importlib.util.spec_from_file_location("at_plain_case", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    y = np.ones(3)
    with pytest.warns(UserWarning, match="in place"):
        g = srcad.grad(m.f)(np.array([0.5, 2.0]), y)
    np.testing.assert_allclose(g, [2 * 3.5, 2 * 3.5])
    assert np.array_equal(y, np.ones(3))
    with pytest.raises(srcad.SrcadError, match="plain array"):
        srcad.grad(m.f, mode="tape")(np.array([0.5, 2.0]), y)


def test_piecewise_against_torch(mod):
    def build(t):
        y = torch.where(t < 0, -t, t * t)
        return y.sum()
    for mode in ("source", "tape"):
        np.testing.assert_allclose(srcad.grad(mod.piecewise, mode=mode)(_x()),
                                   _torch_grad(build, _x()), rtol=1e-12)


def test_apply_along_axis_against_torch(mod):
    def build(t):
        m = t.reshape(2, 2)
        return ((m * m.sum(1, keepdim=True)) ** 2).sum()
    np.testing.assert_allclose(srcad.grad(mod.apply_along_axis)(_x()),
                               _torch_grad(build, _x()), rtol=1e-12)
