"""The data-dependent gathers (srcad/ops/gathers.py): np.delete, np.compress, np.extract,
np.trim_zeros, np.unique and its forms, the set operations, np.bincount's weights and
np.histogram, np.histogram2d, np.histogramdd (srcad/pyfuncs.py's).

tests/test_ops.py, test_forward.py, test_tape.py and test_ops_second_order.py run every row's
own cases (central differences, forward mode, source = tape bit for bit, second order). Here:
torch as the oracle where it has the same gather (index_select, index_add), the first
occurrence of tied values, empty results, repeated indices, integer inputs, float32, second
order through np.histogram, and the refusals that remain, at the user's line.
"""

from __future__ import annotations

import importlib.util
import itertools
import textwrap

import numpy as np
import pytest
import torch

import srcad
from srcad.testing import check_grads, check_jvp

_count = itertools.count()


def _fn(tmp_path, body, params="x"):
    """``def f(<params>): <body>`` in a real module (srcad reads the source)."""
    name = f"gathers_case_{next(_count)}"
    path = tmp_path / f"{name}.py"
    path.write_text(f"import numpy as np\n\n\ndef f({params}):\n"
                    + textwrap.indent(body, "    ") + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


def _both_modes(f, args, wrt=0):
    """srcad's gradient in source and tape mode, equal bit for bit."""
    g_src = srcad.grad(f, wrt=wrt)(*args)
    g_tape = srcad.grad(f, wrt=wrt, mode="tape")(*args)
    for a, b in zip(g_src if isinstance(g_src, tuple) else (g_src,),
                    g_tape if isinstance(g_tape, tuple) else (g_tape,)):
        np.testing.assert_array_equal(a, b)
    return g_src


def _torch_grad(fn, *args):
    ts = [torch.tensor(a, requires_grad=True) for a in args]
    fn(*ts).backward()
    return [t.grad.numpy() for t in ts]


X = np.array([[0.3, -1.2, 0.7, 1.9], [-0.4, 0.8, 1.1, -1.6], [0.5, 0.2, -0.9, 1.3]])


# --- torch as the oracle ------------------------------------------------------------------------
def test_delete_and_compress_match_torch_index_select(tmp_path):
    f = _fn(tmp_path, "return np.sum(np.tanh(np.delete(x, [0, 2, 2], axis=1))[1:] * "
                      "np.compress([True, False, True], x, axis=0)[:, :2])")
    (g,) = _torch_grad(lambda t: torch.sum(
        torch.tanh(t.index_select(1, torch.tensor([1, 3])))[1:]
        * t.index_select(0, torch.tensor([0, 2]))[:, :2]), X)
    np.testing.assert_allclose(_both_modes(f, (X,)), g, rtol=1e-12)
    check_grads(f, (X,))


def test_unique_matches_torch_gather_at_first_occurrence(tmp_path):
    x = np.array([0.5, -1.0, 0.5, 2.0, -1.0, 0.5])
    f = _fn(tmp_path, "u = np.unique(x)\nreturn np.sum(u ** 3 * np.arange(u.size))")
    first = torch.tensor([1, 0, 3])  # sorted values -1, 0.5, 2 at their first positions
    (g,) = _torch_grad(lambda t: torch.sum(t[first] ** 3 * torch.arange(3.0)), x)
    np.testing.assert_allclose(_both_modes(f, (x,)), g, rtol=1e-12)
    # only the first occurrence of a tied value gets the cotangent (JAX's choice)
    assert _both_modes(f, (x,))[[2, 4, 5]].tolist() == [0.0, 0.0, 0.0]


def test_bincount_and_histogram_weights_match_torch_index_add(tmp_path):
    k = np.array([0, 3, 3, 1, 0, 3])
    w = np.array([0.2, -0.5, 1.5, 0.7, 0.1, 0.9])
    f = _fn(tmp_path, "return np.sum(np.bincount(k, weights=w, minlength=5) ** 2)", "w, k")
    (g,) = _torch_grad(lambda t: torch.sum(
        torch.zeros(5, dtype=t.dtype).index_add(0, torch.tensor(k), t) ** 2), w)
    np.testing.assert_allclose(_both_modes(f, (w, k)), g, rtol=1e-12)

    a = np.array([0.1, 0.9, 0.45, 0.3, 0.75, 0.6])
    edges = np.array([0.0, 0.25, 0.5, 1.0])
    h = _fn(tmp_path, "hist, e = np.histogram(a, bins=np.array([0.0, 0.25, 0.5, 1.0]), "
                      "weights=w, density=True)\nreturn np.sum(np.sin(hist))", "w, a")

    def twin(t):
        b = torch.bucketize(torch.tensor(a), torch.tensor(edges), right=True) - 1
        sums = torch.zeros(3, dtype=t.dtype).index_add(0, b, t)
        return torch.sum(torch.sin(sums / torch.tensor(np.diff(edges)) / sums.sum()))

    (g,) = _torch_grad(twin, w)
    np.testing.assert_allclose(_both_modes(h, (w, a)), g, rtol=1e-12)


# --- semantics -------------------------------------------------------------------------------
@pytest.mark.parametrize("body", [
    "return np.sum(np.compress(x[0] > 5, x, axis=1)) + np.sum(x)",
    "return np.sum(np.delete(x, np.arange(x.size))) + np.sum(x)",
    "return np.sum(np.extract(x > 5, x) ** 2) + np.sum(x)",
    "return np.sum(np.trim_zeros(x * 0.0)) + np.sum(x)",
    "return np.sum(np.intersect1d(x, x + 10.0)) + np.sum(x)",
    "return np.sum(np.unique(x[:0])) + np.sum(x)",
])
def test_empty_results_give_the_other_terms_only(tmp_path, body):
    f = _fn(tmp_path, body)
    np.testing.assert_array_equal(_both_modes(f, (X,)), np.ones_like(X))
    out, dot = srcad.jvp(f, (X,), (np.ones_like(X),))
    assert out == f(X) and dot == X.size


def test_repeated_positions_accumulate(tmp_path):
    # np.unique of a repeated input: one value, its gradient at the first copy; the copies of
    # the same argument add up to the full derivative (central differences agree)
    f = _fn(tmp_path, "return np.sum(np.unique(np.concatenate([x, x, x[::-1]])) ** 2)")
    x = np.array([0.3, -0.8, 1.4])
    np.testing.assert_allclose(_both_modes(f, (x,)), 2 * x)
    check_grads(f, (x,))
    # np.delete with a repeated index deletes once
    g = _fn(tmp_path, "return np.sum(np.delete(x, [1, 1, -1]) ** 2)")
    np.testing.assert_allclose(_both_modes(g, (x,)), [0.6, 0.0, 0.0])


def test_unique_outputs_and_the_integer_parts(tmp_path):
    f = _fn(tmp_path, "u, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, "
                      "return_counts=True)\nreturn np.sum(u[inv] ** 2 * cnt[inv]) + "
                      "np.sum(x[idx])")
    x = np.array([0.3, 0.3, -0.5, 0.3, 1.1])
    g = _both_modes(f, (x,))
    # u[inv] rebuilds x; the tied copies of 0.3 all read u[0], whose gradient goes to x[0]
    np.testing.assert_allclose(g, [2 * 0.3 * 3 * 3 + 1, 0.0, 2 * -0.5 + 1, 0.0, 2 * 1.1 + 1])
    y = np.array([0.3, 0.9, -0.5, 0.2, 1.1])  # distinct values: a smooth point
    check_grads(f, (y,))
    check_jvp(f, (y,))


def test_integer_inputs_carry_no_gradient(tmp_path):
    f = _fn(tmp_path, "return np.sum(x * np.unique(k).size + np.bincount(k, x) ** 2)", "x, k")
    k = np.array([2, 0, 2, 3])
    x = np.array([0.5, -1.0, 2.0, 0.25])
    check_grads(f, (x, k))
    with pytest.raises(srcad.SrcadError):
        srcad.grad(f, wrt=1)(x, k)


@pytest.mark.parametrize("body", [
    "return np.sum(np.unique(np.concatenate([x, x]), axis=0) ** 2)",
    "return np.sum(np.bincount(np.array([0, 2, 2, 0]), x[0]) ** 2)",
    "return np.sum(np.compress(x[0] > 0, x, axis=1) ** 3)",
    "return np.sum(np.setxor1d(x[0], x[1]) * np.arange(8))",
    "h, e = np.histogram(x, 3, weights=x * x, density=True)\nreturn np.sum(h ** 2) + np.sum(e)",
])
def test_float32_stays_float32(tmp_path, body):
    f = _fn(tmp_path, body)
    x32 = X[:2].astype(np.float32)
    g = _both_modes(f, (x32,))
    assert g.dtype == np.float32 and g.shape == x32.shape
    check_grads(f, (x32,))


def test_histogram_values_are_numpys(tmp_path):
    f = _fn(tmp_path, "return np.histogram(x, 7, weights=x ** 2, density=True)")
    x = np.random.default_rng(3).standard_normal(200)
    (h, e), pullback = srcad.vjp(f, x)
    want = np.histogram(x, 7, weights=x ** 2, density=True)
    np.testing.assert_array_equal(h, want[0])
    np.testing.assert_array_equal(e, want[1])
    # edges move with min(x) and max(x) only (JAX's histogram_bin_edges); the counts' weights
    # get g at their bin
    (gx,) = pullback((np.zeros_like(h), np.ones_like(e)))
    lo, hi = np.argmin(x), np.argmax(x)
    assert np.count_nonzero(gx) == 2 and gx[lo] == pytest.approx(e.size / 2)
    assert gx[hi] == pytest.approx(e.size / 2)


def test_histogram_second_order(tmp_path):
    f = _fn(tmp_path, "h, e = np.histogram(x, 4, weights=np.exp(x), density=True)\n"
                      "return np.sum(np.sin(h) * np.arange(4.0)) + np.sum(e ** 3)")
    x = np.array([0.1, -0.7, 0.45, 1.3, 0.62, -0.1, 0.9])  # (none near an edge)
    v = np.array([0.3, -0.1, 0.2, 0.5, -0.4, 0.1, 0.2])
    g = srcad.grad(f)
    _, hvp = srcad.jvp(g, (x,), (v,))
    h = 1e-6
    fd = (g(x + h * v) - g(x - h * v)) / (2 * h)
    np.testing.assert_allclose(hvp, fd, rtol=1e-5, atol=1e-7)
    (hu,) = srcad.vjp(g, x)[1](v)
    np.testing.assert_allclose(hu, fd, rtol=1e-5, atol=1e-7)  # H is symmetric


def test_trim_zeros_follows_the_data(tmp_path):
    f = _fn(tmp_path, "return np.sum(np.trim_zeros(np.maximum(x, 0.0)) ** 2)")
    x = np.array([-1.0, 0.5, -0.2, 0.7, -0.3])
    np.testing.assert_allclose(_both_modes(f, (x,)), [0.0, 1.0, 0.0, 1.4, 0.0])
    check_grads(f, (x,))


# --- what stays refused, at the user's line ----------------------------------------------------
@pytest.mark.parametrize("body, what", [
    ("buf = np.zeros(2)\nreturn np.sum(np.compress([1, 0, 1], x, out=buf))", "out"),
    ("return np.sum(np.frompyfunc(lambda v: v * 2, 1, 1)(x).astype(float))", "frompyfunc"),
])
def test_refusals_name_the_line(tmp_path, body, what):
    f = _fn(tmp_path, body)
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(f)(np.array([0.3, 0.7, -0.2]))
    text = str(info.value)
    assert "gathers_case_" in text and what in text, text


def test_a_differentiated_range_is_refused_in_histogram():
    """(np.histogram is traced as srcad/pyfuncs.py's function: the refusal names its line
    there, and the argument, not yet the user's call)"""
    f = _fn_range
    with pytest.raises(srcad.SrcadError, match="range"):
        srcad.grad(f)(np.array([0.3, 0.7, -0.2]))


def _fn_range(x):
    return np.sum(np.histogram(x, 3, range=(np.min(x), 2.0))[1])


def test_edges_given_as_an_array_are_differentiated(tmp_path):
    f = _fn(tmp_path, "h, e = np.histogram(x, bins=np.sort(b), density=True)\n"
                      "return np.sum(h * np.arange(3.0)) + np.sum(e ** 2)", "x, b")
    x = np.array([0.1, 0.5, 0.35, 0.8, 0.65])
    b = np.array([0.9, 0.0, 0.3, 0.6])
    check_grads(f, (x, b), wrt=(0, 1))
    _both_modes(f, (x, b), wrt=(0, 1))


# --- np.histogram2d / np.histogramdd (srcad/pyfuncs.py's, through np.histogramdd) ----------------
_HIST_DD = [
    "h, xe, ye = np.histogram2d(x, y, bins=3, weights=x * y, density=True)\n"
    "return np.sum(h * np.arange(3.0)[:, None]) + np.sum(xe ** 2) + np.sum(ye ** 3)",
    "h, xe, ye = np.histogram2d(x, y, bins=(2, 3), weights=np.exp(x))\n"
    "return np.sum(np.sin(h)) + np.sum(xe * ye[:3])",
    "h, xe, ye = np.histogram2d(x, y, bins=np.array([-3.0, -0.5, 0.0, 0.5, 3.0]), weights=y)\n"
    "return np.sum(h ** 2) + np.sum(xe)",
    "s = np.stack([x, y, x * y], axis=1)\n"
    "h, e = np.histogramdd(s, bins=(2, 3, 2), weights=y ** 2, density=True)\n"
    "return np.sum(h ** 2) + np.sum(e[0]) + np.sum(e[2] ** 2)",
    "h, e = np.histogramdd((x, y), bins=4, range=[(-3.0, 3.0), None], weights=x)\n"
    "return np.sum(h * h) + np.sum(e[1] ** 2) + np.sum(e[0])",
    "h, e = np.histogramdd(x, bins=5, density=True)\nreturn np.sum(h * np.arange(5.0)) + "
    "np.sum(e[0] ** 2)",
]
_XY = (np.array([0.31, -1.2, 0.74, 1.9, -0.45, 0.05, 1.1, -2.3, 0.6]),
       np.array([-0.8, 0.33, 1.45, -0.1, 0.9, -1.7, 0.2, 0.55, -0.35]))


@pytest.mark.parametrize("body", _HIST_DD)
def test_histogram2d_and_histogramdd_gradients(tmp_path, body):
    """Counts carry no gradient in the points; weights= is linear; the edges move with each
    coordinate's min and max (as np.histogram's); density= as numpy divides. The values are
    numpy's, source = tape bit for bit, reverse and forward mode against central
    differences."""
    f = _fn(tmp_path, body, "x, y")
    assert srcad.value_and_grad(f, wrt=(0, 1))(*_XY)[0] == f(*_XY)
    _both_modes(f, _XY, wrt=(0, 1))
    check_grads(f, _XY, wrt=(0, 1))
    check_jvp(f, _XY)


def test_histogramdd_values_are_numpys(tmp_path):
    f = _fn(tmp_path, "return np.histogramdd(np.stack([x, y], axis=1), (3, 2), "
                      "weights=x ** 2, density=True)", "x, y")
    (h, e), pullback = srcad.vjp(f, *_XY)
    want = np.histogramdd(np.stack(_XY, axis=1), (3, 2), weights=_XY[0] ** 2, density=True)
    np.testing.assert_array_equal(h, want[0])
    for a, b in zip(e, want[1]):
        np.testing.assert_array_equal(a, b)
    # the edges move with min and max of their coordinate only
    gx, gy = pullback((np.zeros_like(h), [np.ones_like(e[0]), np.zeros_like(e[1])]))
    assert np.count_nonzero(gy) == 0 and np.count_nonzero(gx) == 2
    assert gx[np.argmin(_XY[0])] == pytest.approx(e[0].size / 2)


def test_histogram2d_second_order(tmp_path):
    f = _fn(tmp_path, "h, xe, ye = np.histogram2d(x, x ** 2, 3, weights=np.exp(x), "
                      "density=True)\nreturn np.sum(np.sin(h)) + np.sum(xe ** 3) + "
                      "np.sum(ye ** 2)")
    x = np.array([0.1, -0.7, 0.45, 1.3, 0.62, -0.2, 0.9])  # (no tie in x ** 2)
    v = np.array([0.3, -0.1, 0.2, 0.5, -0.4, 0.1, 0.2])
    g = srcad.grad(f)
    _, hvp = srcad.jvp(g, (x,), (v,))
    h = 1e-6
    fd = (g(x + h * v) - g(x - h * v)) / (2 * h)
    np.testing.assert_allclose(hvp, fd, rtol=1e-5, atol=1e-7)
    (hu,) = srcad.vjp(g, x)[1](v)
    np.testing.assert_allclose(hu, fd, rtol=1e-5, atol=1e-7)
