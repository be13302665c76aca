"""Tests of the gradient-check harness itself, with hand-written numpy gradients only.

Nothing here calls srcad's compiler: every check passes ``grad_fn=`` or ``vjp_fn=``, so these
tests hold while the core is being written and say nothing about it.
"""

import ast
import collections
import doctest
import sys
from pathlib import Path

import numpy as np
import pytest

from srcad import testing
from srcad.testing import (
    broadcast_pairs,
    broadcast_shapes_for,
    check_grads,
    check_vjp,
    numerical_grad,
    random_args,
    rel_error,
)


def loss(W, b, x):
    return np.sum(np.tanh(x @ W + b) ** 2)


def loss_grads(W, b, x):
    h = np.tanh(x @ W + b)
    dz = 2 * h * (1 - h**2)
    return x.T @ dz, dz.sum(axis=0)


@pytest.fixture
def mlp_args():
    W, b, x = random_args([(3, 2), (2,), (4, 3)], np.float64, rng=1, domain=(-1.0, 1.0))
    return W, b, x


# --- rel_error -------------------------------------------------------------------------


def test_rel_error_known_values():
    assert rel_error(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == 0.0
    assert rel_error(np.array([1.5, 2.0]), np.array([1.0, 2.0])) == pytest.approx(0.25)
    assert rel_error(3.0, 2.0) == pytest.approx(0.5)
    assert rel_error(np.float32(1.0), np.array(1.0)) == 0.0
    assert rel_error(np.zeros(3), np.zeros(3)) == 0.0
    assert rel_error(np.array([1e-3]), np.array([0.0])) == pytest.approx(1e9)
    assert rel_error(np.empty((0, 3)), np.empty((0, 3))) == 0.0
    assert rel_error(np.array([np.inf, 1.0]), np.array([np.inf, 1.0])) == 0.0
    assert np.isnan(rel_error(np.array([np.nan, 1.0]), np.array([1.0, 1.0])))


def test_rel_error_pytree_takes_max_over_leaves():
    actual = {"a": np.array([1.0, 2.0]), "b": [np.array(10.0), (np.array([4.4]),)]}
    expected = {"b": [np.array(10.0), (np.array([4.0]),)], "a": np.array([1.0, 2.0])}
    assert rel_error(actual, expected) == pytest.approx(0.1)


def test_rel_error_shape_mismatch_names_both_shapes():
    with pytest.raises(AssertionError, match=r"\(3,\).*\(1, 3\)"):
        rel_error(np.ones(3), np.ones((1, 3)))
    with pytest.raises(AssertionError, match=r"\['w'\].*\(2,\).*\(\)"):
        rel_error({"w": np.ones(2)}, {"w": np.float64(1.0)})


def test_rel_error_structure_mismatch():
    with pytest.raises(AssertionError, match="keys"):
        rel_error({"a": 1.0}, {"b": 1.0})
    with pytest.raises(AssertionError, match="items"):
        rel_error([1.0, 2.0], [1.0])
    with pytest.raises(AssertionError, match="structure"):
        rel_error([1.0], (1.0,))


# --- numerical_grad --------------------------------------------------------------------


def test_numerical_grad_matches_analytic():
    x = np.linspace(-1.0, 1.0, 7)
    g = numerical_grad(lambda x: np.sum(np.sin(x)), (x,))
    assert g.shape == x.shape and g.dtype == np.float64
    assert rel_error(g, np.cos(x)) < 1e-8


def test_numerical_grad_wrt_names_positions_and_tuples(mlp_args):
    W, b, x = mlp_args
    dW, db = loss_grads(W, b, x)
    assert rel_error(numerical_grad(loss, mlp_args, wrt="b"), db) < 1e-8
    assert rel_error(numerical_grad(loss, mlp_args, wrt=-3), dW) < 1e-8
    gW, gb = numerical_grad(loss, mlp_args, wrt=("W", 1))
    assert rel_error((gW, gb), (dW, db)) < 1e-8
    with pytest.raises(ValueError, match="not a positional parameter"):
        numerical_grad(loss, mlp_args, wrt="nope")
    with pytest.raises(ValueError, match="3 were given"):
        numerical_grad(loss, mlp_args, wrt=5)


def test_numerical_grad_calls_fn_with_float64_copies():
    x = np.array([0.5, -0.25], dtype=np.float32)
    seen = []

    def f(x, n):
        seen.append((x.dtype, type(n)))
        return np.sum(x**2) * n

    g = numerical_grad(f, (x, 3))
    assert g.dtype == np.float64
    assert set(seen) == {(np.dtype(np.float64), int)}
    assert x.dtype == np.float32 and x.tolist() == [0.5, -0.25]  # caller's array untouched
    assert rel_error(g, 6 * x.astype(np.float64)) < 1e-8


def test_numerical_grad_of_a_function_that_writes_into_its_arguments():
    # (`x -= m`, `idx[0] = 1`: each call starts from the point asked for, and the caller's
    # arrays, float or not, are left as they were)
    x = np.array([0.5, -0.25, 2.0])
    idx = np.array([0, 2])

    def f(x, idx):
        x -= 1.0
        x *= x
        out = np.sum(x[idx]) + np.sum(x)
        idx[0] = 1
        return out

    g = numerical_grad(f, (x, idx))
    assert rel_error(g, 2 * (x - 1.0) * np.array([2.0, 1.0, 2.0])) < 1e-8
    assert x.tolist() == [0.5, -0.25, 2.0] and idx.tolist() == [0, 2]


def test_numerical_grad_scalar_arguments_stay_scalars():
    types = set()

    def f(a, b):
        types.add((type(a), type(b)))
        return a * b**2

    ga, gb = numerical_grad(f, (2.0, np.float32(3.0)), wrt=(0, 1))
    assert types == {(float, np.float64)}
    assert float(ga) == pytest.approx(9.0) and float(gb) == pytest.approx(12.0)


def test_numerical_grad_requires_scalar_output():
    with pytest.raises(ValueError, match=r"real scalar.*shape \(3,\)"):
        numerical_grad(lambda x: x**2, (np.ones(3),))
    with pytest.raises(ValueError, match="real scalar"):
        numerical_grad(lambda x: np.sum(x) + 0j, (np.ones(3),))
    assert numerical_grad(lambda x: np.sum(x, keepdims=True)[0], (np.ones(2),)).shape == (2,)


def test_numerical_grad_rejects_non_float_argument():
    with pytest.raises(TypeError, match="no floating-point"):
        numerical_grad(lambda x, n: np.sum(x) * n, (np.ones(2), np.arange(3)), wrt=1)
    with pytest.raises(TypeError, match=r"tuple"):
        numerical_grad(lambda x: np.sum(x), np.ones(2))


def test_numerical_grad_pytree_argument():
    params = {"w": np.array([1.0, 2.0]), "layers": [(np.array(3.0), np.arange(2))], "s": 0.5}

    def f(p):
        ((scale, idx),) = p["layers"]
        return np.sum(p["w"] ** 2) * scale + p["s"] * np.sum(idx)

    g = numerical_grad(f, (params,))
    assert list(g) == ["w", "layers", "s"]
    assert isinstance(g["layers"], list) and isinstance(g["layers"][0], tuple)
    assert g["layers"][0][1] is None  # integer leaf: no gradient
    assert rel_error(g["w"], 6 * params["w"]) < 1e-8
    assert float(g["layers"][0][0]) == pytest.approx(5.0)
    assert float(g["s"]) == pytest.approx(1.0)


# --- check_grads -----------------------------------------------------------------------


def test_check_grads_correct_gradients_pass(mlp_args):
    errors = check_grads(loss, mlp_args, wrt=("W", "b"), grad_fn=loss_grads)
    assert set(errors) == {"W", "b"} and max(errors.values()) < 1e-6
    errors = check_grads(loss, mlp_args, wrt=1, grad_fn=lambda *a: loss_grads(*a)[1])
    assert errors[1] < 1e-6


def test_check_grads_factor_two_fails(mlp_args):
    def wrong(*args):
        dW, db = loss_grads(*args)
        return dW, 2 * db

    with pytest.raises(AssertionError) as info:
        check_grads(loss, mlp_args, wrt=("W", "b"), grad_fn=wrong)
    message = str(info.value)
    assert "'b'" in message and "rel error 1.0e+00" in message and "tol 1.0e-06" in message
    assert "shape (2,)" in message and "'W'" not in message


def test_check_grads_wrong_shape_fails(mlp_args):
    with pytest.raises(AssertionError, match=r"shape \(1, 2\) != argument shape \(2,\)"):
        check_grads(loss, mlp_args, wrt="b", grad_fn=lambda *a: loss_grads(*a)[1][None])


def test_check_grads_wrong_dtype_fails():
    x = np.linspace(-1.0, 1.0, 4).astype(np.float32)

    def f(x):
        return np.sum(x**3)

    with pytest.raises(AssertionError, match="dtype float64 != argument dtype float32"):
        check_grads(f, (x,), grad_fn=lambda x: 3 * x.astype(np.float64) ** 2)
    with pytest.raises(AssertionError, match="gradient is NoneType"):
        check_grads(f, (x,), grad_fn=lambda x: None)


def test_check_grads_float32_uses_loose_tolerance():
    W, b, x = random_args([(3, 2), (2,), (4, 3)], np.float32, rng=2, domain=(-1.0, 1.0))
    errors = check_grads(loss, (W, b, x), wrt=(0, 1), grad_fn=loss_grads)
    assert max(errors.values()) < 1e-3
    # A float32 gradient is not float64-accurate: the default float64 tolerance rejects it.
    with pytest.raises(AssertionError, match="tol 1.0e-09"):
        check_grads(loss, (W, b, x), wrt=0, grad_fn=lambda *a: loss_grads(*a)[0], tol=1e-9)


def test_check_grads_tuple_wrt_needs_tuple(mlp_args):
    with pytest.raises(AssertionError, match="tuple of 2 gradients.*list of 2"):
        check_grads(loss, mlp_args, wrt=(0, 1), grad_fn=lambda *a: list(loss_grads(*a)))


def test_check_grads_detects_mutated_argument(mlp_args):
    def mutating(W, b, x):
        grads = loss_grads(W, b, x)
        b += 1.0
        return grads[1]

    with pytest.raises(AssertionError, match=r"mutated argument b"):
        check_grads(loss, mlp_args, wrt=1, grad_fn=mutating)


def test_check_grads_rejects_options_with_grad_fn(mlp_args):
    with pytest.raises(TypeError, match="mode"):
        check_grads(loss, mlp_args, grad_fn=lambda *a: loss_grads(*a)[0], mode="tape")


def pytree_loss(params, x):
    h = np.tanh(x @ params["W"] + params["b"])
    return np.sum(h**2) * params["scale"][0] + 0.0 * params["steps"]


def pytree_grad(params, x):
    h = np.tanh(x @ params["W"] + params["b"])
    s = params["scale"][0]
    dz = 2 * s * h * (1 - h**2)
    return {
        "W": x.T @ dz,
        "b": dz.sum(axis=0),
        "scale": [np.sum(h**2, keepdims=True).reshape(())],
        "steps": None,
    }


@pytest.fixture
def pytree_args():
    W, b, x = random_args([(3, 2), (2,), (4, 3)], np.float64, rng=3, domain=(-1.0, 1.0))
    params = {"W": W, "b": b, "scale": [np.array(1.5)], "steps": 7}
    return params, x


def test_check_grads_pytree_argument(pytree_args):
    errors = check_grads(pytree_loss, pytree_args, wrt="params", grad_fn=pytree_grad)
    assert errors["params"] < 1e-6


def test_check_grads_pytree_structure_and_leaves(pytree_args):
    def reordered(params, x):
        g = pytree_grad(params, x)
        return {k: g[k] for k in ("b", "W", "scale", "steps")}

    with pytest.raises(AssertionError, match="keys"):
        check_grads(pytree_loss, pytree_args, grad_fn=reordered)

    def as_tuple(params, x):
        g = pytree_grad(params, x)
        g["scale"] = tuple(g["scale"])
        return g

    with pytest.raises(AssertionError, match=r"\['scale'\]: gradient is a tuple"):
        check_grads(pytree_loss, pytree_args, grad_fn=as_tuple)

    def wrong_leaf(params, x):
        g = pytree_grad(params, x)
        g["W"] = 2 * g["W"]
        return g

    with pytest.raises(AssertionError, match=r"'params'\['W'\].*rel error"):
        check_grads(pytree_loss, pytree_args, grad_fn=wrong_leaf)

    def float_for_int(params, x):
        g = pytree_grad(params, x)
        g["steps"] = 1.0
        return g

    with pytest.raises(AssertionError, match=r"\['steps'\]: non-float"):
        check_grads(pytree_loss, pytree_args, grad_fn=float_for_int)


# --- check_vjp -------------------------------------------------------------------------


def tanh_layer(x, W):
    return np.tanh(x @ W)


def tanh_layer_vjp(x, W):
    out = np.tanh(x @ W)

    def pullback(g):
        gz = g * (1 - out**2)
        return gz @ W.T, x.T @ gz

    return out, pullback


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_check_vjp_hand_written_pullback(dtype):
    x, W = random_args([(5, 3), (3, 4)], dtype, rng=4)
    err = check_vjp(tanh_layer, (x, W), vjp_fn=tanh_layer_vjp)
    assert err < (1e-6 if dtype == np.float64 else 1e-3)
    assert check_vjp(tanh_layer, (x, W), vjp_fn=tanh_layer_vjp, rng=123) < 1e-3


def test_check_vjp_wrong_pullback_fails():
    x, W = random_args([(5, 3), (3, 4)], np.float64, rng=5)

    def missing_tanh_derivative(x, W):
        out = np.tanh(x @ W)
        return out, lambda g: (g @ W.T, x.T @ g)

    with pytest.raises(AssertionError, match="rel error"):
        check_vjp(tanh_layer, (x, W), vjp_fn=missing_tanh_derivative)

    def transposed(x, W):
        out, pullback = tanh_layer_vjp(x, W)
        return out, lambda g: (pullback(g)[0], pullback(g)[1].T)

    with pytest.raises(AssertionError, match=r"shape \(4, 3\) != argument shape \(3, 4\)"):
        check_vjp(tanh_layer, (x, W), vjp_fn=transposed)

    with pytest.raises(AssertionError, match="tuple of 2 gradients"):
        check_vjp(tanh_layer, (x, W), vjp_fn=lambda x, W: (tanh_layer(x, W), lambda g: None))


def test_check_vjp_checks_output_and_non_float_primals():
    x, W = random_args([(5, 3), (3, 4)], np.float64, rng=6)

    def scaled(x, W, k):
        return np.tanh(x @ W) * k

    def scaled_vjp(x, W, k):
        out, pullback = tanh_layer_vjp(x, W)
        return out * k, lambda g: (*pullback(g * k), None)

    assert check_vjp(scaled, (x, W, 3), vjp_fn=scaled_vjp) < 1e-6

    def bad_out(x, W, k):
        out, pullback = scaled_vjp(x, W, k)
        return out + 1.0, pullback

    with pytest.raises(AssertionError, match="out differs"):
        check_vjp(scaled, (x, W, 3), vjp_fn=bad_out)

    def grad_for_int(x, W, k):
        out, pullback = scaled_vjp(x, W, k)
        return out, lambda g: (*pullback(g)[:2], 1.0)

    with pytest.raises(AssertionError, match="non-float argument needs None"):
        check_vjp(scaled, (x, W, 3), vjp_fn=grad_for_int)


def test_check_vjp_detects_mutated_cotangent():
    x, W = random_args([(5, 3), (3, 4)], np.float64, rng=7)

    def mutating(x, W):
        out = np.tanh(x @ W)

        def pullback(g):
            g *= 1 - out**2
            return g @ W.T, x.T @ g

        return out, pullback

    with pytest.raises(AssertionError, match="mutated its cotangent"):
        check_vjp(tanh_layer, (x, W), vjp_fn=mutating)


# --- shapes and inputs -----------------------------------------------------------------


def test_broadcast_pairs_contents():
    pairs = broadcast_pairs()
    assert 20 <= len(pairs) <= 40
    assert len(set(pairs)) == len(pairs)
    assert pairs == broadcast_pairs()  # deterministic
    for a, b in pairs:
        np.broadcast_shapes(a, b)  # raises if they do not broadcast
    assert ((), ()) in pairs and any(a == () and b for a, b in pairs)
    assert any(b == () and a for a, b in pairs)
    assert any(len(a) != len(b) and a and b for a, b in pairs)  # rank mismatch
    out = [np.broadcast_shapes(a, b) for a, b in pairs]
    one_sided_a = [(a, b) for (a, b), o in zip(pairs, out) if len(a) == len(o) and a != o]
    one_sided_b = [(a, b) for (a, b), o in zip(pairs, out) if len(b) == len(o) and b != o]
    assert one_sided_a and one_sided_b
    two_sided = [(a, b) for (a, b), o in zip(pairs, out) if a != o and b != o]
    assert ((3, 1), (1, 4)) in two_sided
    assert any(len(a) == len(b) == 3 for a, b in two_sided)
    assert any(len(a) != len(b) and a and b for a, b in two_sided)
    # A size-1 axis at every position of a rank-3 operand, against the full shape.
    assert {((1, 3, 4), (2, 3, 4)), ((2, 1, 4), (2, 3, 4)), ((2, 3, 4), (2, 3, 1))} <= set(
        pairs
    ) | {(b, a) for a, b in pairs}


def test_broadcast_pairs_sizes_differ_per_axis():
    for a, b in broadcast_pairs():
        out = np.broadcast_shapes(a, b)
        assert out == (2, 3, 4)[3 - len(out) :] or 1 in out
        for shape in (a, b):
            full = [s for s in shape if s != 1]
            assert len(set(full)) == len(full), shape  # no two axes share a size
    assert all(max(len(a), len(b)) <= 2 for a, b in broadcast_pairs(2))
    assert broadcast_pairs(2, sizes=(5, 7))[-1] == ((1, 7), (7,))
    with pytest.raises(ValueError):
        broadcast_pairs(2, sizes=(1, 3))


def test_broadcast_shapes_for_three_args():
    triples = broadcast_shapes_for(3)
    assert len(set(triples)) == len(triples) and len(triples) <= 20
    assert triples == broadcast_shapes_for(3)
    for t in triples:
        assert len(t) == 3
        np.broadcast_shapes(*t)
    everyone = [t for t in triples if all(s != np.broadcast_shapes(*t) for s in t)]
    assert everyone, "needs a triple where every operand broadcasts"
    assert any(s == () for t in triples for s in t)
    assert broadcast_shapes_for(2) == broadcast_pairs()
    assert all(len(t) == 1 for t in broadcast_shapes_for(1))


def test_random_args():
    a, b, c = random_args([(2, 3), (), (4,)], np.float32, rng=0, domain=(0.1, 2.0))
    assert (a.shape, b.shape, c.shape) == ((2, 3), (), (4,))
    assert a.dtype == b.dtype == c.dtype == np.float32 and isinstance(b, np.ndarray)
    assert all(((v >= 0.1) & (v <= 2.0)).all() for v in (a, b, c))
    again = random_args([(2, 3), (), (4,)], np.float32, rng=0, domain=(0.1, 2.0))
    assert all(np.array_equal(x, y) for x, y in zip((a, b, c), again))
    x, y = random_args([(50,), (50,)], np.float64, np.random.default_rng(1), [(-1, 0), (5, 6)])
    assert x.max() <= 0 and y.min() >= 5
    (n,) = random_args([(100,)], np.int64, rng=0, domain=(-2, 2))
    assert n.dtype == np.int64 and set(n.tolist()) <= {-2, -1, 0, 1, 2}
    with pytest.raises(TypeError, match="sequence of shapes"):
        random_args((2, 3), np.float64, rng=0)


# --- the module itself -----------------------------------------------------------------


def test_docstring_examples_run():
    import importlib

    failed = attempted = 0
    for name in ("trees", "grads", "shapes", "forward"):  # (the package's modules)
        f, a = doctest.testmod(importlib.import_module(f"srcad.testing.{name}"),
                               extraglobs=vars(testing), optionflags=doctest.ELLIPSIS)
        failed, attempted = failed + f, attempted + a
    assert attempted > 10 and failed == 0


def test_public_functions_have_docstring_examples():
    for name in testing.__all__:
        doc = getattr(testing, name).__doc__
        assert doc and ">>>" in doc, name


def test_imports_only_numpy_the_standard_library_and_srcad():
    """The harness (a package: srcad/testing/) needs nothing beyond numpy and srcad's own
    API (a relative import), so users can run it wherever srcad runs."""
    top = set()
    for path in Path(testing.__file__).parent.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Import):
                top |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                top.add((node.module or "").split(".")[0])
    third_party = {m for m in top if m not in sys.stdlib_module_names and m != "__future__"}
    assert third_party == {"numpy"}


def test_namedtuple_arguments_round_trip():
    Params = collections.namedtuple("Params", "w b")
    p = Params(np.array([1.0, -1.0]), np.array(0.5))
    g = numerical_grad(lambda p: np.sum(p.w**2) + p.b, (p,))
    assert isinstance(g, Params)
    assert rel_error(g, Params(2 * p.w, np.array(1.0))) < 1e-8
