"""srcad.vjp of a function returning a pytree, transforms inside transforms, and the other
cases where autograd and JAX give an answer (issue 23): each gradient against central
differences, in both modes."""

import fixtures_agfix as F
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_vjp, numerical_grad, rel_error

MODES = ("source", "tape")
RNG = np.random.default_rng(23)
X, W = RNG.standard_normal(4), RNG.standard_normal(4)


# -- srcad.vjp of a container output (JAX: a cotangent of the output's structure) -----------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,args", [(F.tuple_out, (X, W)), (F.list_out, (X,)),
                                     (F.dict_out, (X, W))])
def test_vjp_of_a_container_output(fn, args, mode):
    check_vjp(fn, args, mode=mode)
    out, _ = srcad.vjp(fn, *args, mode=mode)
    want = fn(*args)
    assert type(out) is type(want)
    if isinstance(want, dict):
        assert list(out) == list(want) and type(out["aux"]["pair"]) is tuple


@pytest.mark.parametrize("mode", MODES)
def test_vjp_container_pullback_is_the_sum_of_its_parts(mode):
    """pullback((g1, g2)) is pullback of g1 through the first output plus g2 through the
    second, each computed by hand."""
    _, pb = srcad.vjp(F.tuple_out, X, W, mode=mode)
    g2 = RNG.standard_normal(4)
    dx, dw = pb((0.7, g2))
    t = np.tanh(X * W)
    np.testing.assert_allclose(dx, 0.7 * (1 - t ** 2) * W + g2 * 2 * X * W, rtol=1e-12)
    np.testing.assert_allclose(dw, 0.7 * (1 - t ** 2) * X + g2 * X ** 2, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bad,says", [
    (np.ones(4), "is a"), ((1.0,), "tuple of 1"), ((1.0, np.ones(3)), "[1] has shape (3,)"),
    ([1.0, np.ones(4), 2.0], "list of 3")])
def test_vjp_container_cotangent_of_the_wrong_structure(bad, says, mode):
    _, pb = srcad.vjp(F.tuple_out, X, W, mode=mode)
    with pytest.raises(srcad.SrcadError) as e:
        pb(bad)
    assert says in str(e.value)


def test_vjp_dict_cotangent_with_other_keys():
    _, pb = srcad.vjp(F.dict_out, X, W)
    with pytest.raises(srcad.SrcadError, match="keys"):
        pb({"loss": 1.0, "other": {}})


# -- srcad.grad of a container argument, inside a differentiated function ----------------------

@pytest.mark.parametrize("mode", MODES)
def test_grad_of_a_dict_inside_a_grad(mode):
    """The inner gradient is a dict; a key the inner function does not read ("c") gets no
    gradient, and the others a true one (not zeros)."""
    d = {"a": RNG.standard_normal(3), "b": RNG.standard_normal(2), "c": RNG.standard_normal(2)}
    g = srcad.grad(F.grad_of_dict_inside, mode=mode)(d)
    want = numerical_grad(F.grad_of_dict_inside, (d,))
    assert list(g) == ["a", "b", "c"] and np.any(g["a"]) and np.any(g["b"])
    assert rel_error(g, want) < 1e-6


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", [list, tuple])
def test_grad_of_a_sequence_inside_a_grad(kind, mode):
    s = kind([RNG.standard_normal(3), RNG.standard_normal(3)])
    check_grads(F.grad_of_list_inside, (s,), mode=mode)
    assert type(srcad.grad(F.grad_of_list_inside, mode=mode)(s)) is kind


# -- value_and_grad inside, and second derivatives through an inner transform ----------------

@pytest.mark.parametrize("mode", MODES)
def test_value_and_grad_inside_a_grad(mode):
    check_grads(F.value_and_grad_inside, (X,), mode=mode)


def test_second_derivatives_through_an_inner_value_and_grad():
    v = RNG.standard_normal(4)
    g = srcad.grad(F.value_and_grad_inside)
    _, hv = srcad.jvp(g, (X,), (v,))  # forward over reverse
    h = 1e-5
    fd = (g(X + h * v) - g(X - h * v)) / (2 * h)
    assert rel_error(hv, fd) < 1e-6
    check_vjp(g, (X,), tol=1e-5)  # reverse over reverse


def test_grad_of_grad_of_a_function_that_calls_grad():
    """grad(grad(f)) with f calling grad(cube): the second derivative of f, a third of cube
    (the pullback of the inner pullback), against differences of the first."""
    g, gg = srcad.grad(F.calls_grad_of_scalar), srcad.grad(srcad.grad(F.calls_grad_of_scalar))
    for x in (0.3, -1.2):
        check_grads(g, (x,), tol=1e-6)
        h = 1e-5
        assert rel_error(gg(x), (g(x + h) - g(x - h)) / (2 * h)) < 1e-7
    x = RNG.standard_normal(3)  # and on an array, forward over reverse over reverse
    v = RNG.standard_normal(3)
    gv = srcad.grad(F.value_and_grad_inside)
    _, hv = srcad.jvp(gv, (x,), (v,))
    assert rel_error(hv, (gv(x + 1e-5 * v) - gv(x - 1e-5 * v)) / 2e-5) < 1e-6


# -- srcad.grad of a nested function, inside a differentiated function -------------------------

@pytest.mark.parametrize("mode", MODES)
def test_grad_of_a_closure_inside_a_grad(mode):
    """The closure's free variables (w, b) are the enclosing function's: the inner gradient
    depends on them, and so does the outer one (a mixed second derivative). Source mode lifts
    the closure when normalising; tape mode lifts the closure it meets (closure_lift.py)."""
    w, b = RNG.standard_normal(4), RNG.standard_normal(4)
    check_grads(F.grad_of_a_closure, (w, b), wrt=(0, 1), mode=mode)
    check_grads(F.grad_of_a_closure_two_args, (RNG.standard_normal(3),), mode=mode)


def test_grad_of_a_closure_refusals():
    with pytest.raises(srcad.SrcadError, match="by position"):
        srcad.grad(F.closure_called_with_a_keyword)(np.ones(2))


# -- an empty pytree argument: its gradient is empty (JAX, autograd) -------------------------

@pytest.mark.parametrize("mode", MODES)
def test_grad_wrt_an_empty_pytree(mode):
    gp, gx = srcad.grad(F.reads_a_tree, wrt=(0, 1), mode=mode)({}, 1.5)
    assert gp == {} and type(gp) is dict and gx == 2.0
    for empty in ([], ()):
        gs, gx = srcad.grad(F.sums_a_list, wrt=(0, 1), mode=mode)(empty, 1.5)
        assert type(gs) is type(empty) and len(gs) == 0 and gx == 3.0
    # and next to a full one: the full one's gradient is unchanged
    p = {"a": RNG.standard_normal(3)}
    gp, gx = srcad.grad(F.reads_a_tree, wrt=(0, 1), mode=mode)(p, 1.5)
    np.testing.assert_allclose(gp["a"], np.full(3, 1.5))
    assert rel_error(gx, 2.0 + np.sum(p["a"])) < 1e-12


@pytest.mark.parametrize("mode", MODES)
def test_vjp_with_an_empty_pytree_primal(mode):
    out, pb = srcad.vjp(F.reads_a_tree, {}, 1.5, mode=mode)
    assert out == 3.0
    assert pb(1.0) == ({}, 2.0)


# -- a dict argument's items / values / keys as values; dict(pairs, **kw) ---------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [F.items_sorted_by_itemgetter, F.items_and_values_as_lists])
def test_dict_views_as_values(fn, mode):
    d = {"b": RNG.standard_normal((3, 2)), "a": RNG.standard_normal(4),
         "c": RNG.standard_normal((2, 2))}
    check_grads(fn, (d,), mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_dict_from_pairs_and_keywords(mode):
    out, _ = srcad.vjp(F.dict_from_pairs, X, mode=mode)
    want = F.dict_from_pairs(X)
    assert list(out) == list(want) == ["p", "r", "q"]
    np.testing.assert_array_equal(out["p"], X ** 3)
    check_vjp(F.dict_from_pairs, (X,), mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_key_written_twice_keeps_only_its_last_value(mode):
    """{"p": a, "p": b}["p"] is b: a gets no gradient (it used to get b's)."""
    check_grads(F.literal_with_a_key_twice, (X,), mode=mode)
    g = srcad.grad(F.literal_with_a_key_twice, mode=mode)(X)
    np.testing.assert_allclose(g, 3 * X ** 2 + 2 * np.cos(X), rtol=1e-12)


# -- functools.partial, and numpy functions passed directly ----------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_grad_of_a_partial(mode):
    import functools
    a, b = RNG.standard_normal(3), RNG.standard_normal(3)
    p = functools.partial(F.three, a, scale=0.5)  # remaining: b, c (and scale=)
    gb, gc = srcad.grad(p, wrt=(0, 1), mode=mode)(b, 1.7)
    want = numerical_grad(lambda b, c: F.three(a, b, c, scale=0.5), (b, 1.7), wrt=(0, 1))
    assert rel_error((gb, gc), want) < 1e-7
    g = srcad.grad(p, wrt="c", mode=mode)(b, 1.7, scale=2.0)  # a keyword overrides its binding
    assert rel_error(g, F.three(a, b, 1.0, scale=2.0)) < 1e-12
    pp = functools.partial(p, b)  # a partial of a partial: remaining c
    assert rel_error(srcad.grad(pp, mode=mode)(1.7), gc) < 1e-12
    with pytest.raises(srcad.SrcadError, match="out of range"):
        srcad.grad(pp, wrt=2)  # (c, and scale, a keyword parameter)


def test_a_partial_pickles_by_reference():
    import functools
    import pickle
    g = srcad.grad(functools.partial(F.three, np.ones(2), scale=0.5), wrt=1)
    h = pickle.loads(pickle.dumps(g))
    b = RNG.standard_normal(2)
    assert h(b, 2.0) == g(b, 2.0)

    def local(x, y):
        return x * y
    with pytest.raises(srcad.SrcadError, match="cannot be sent to another process"):
        pickle.dumps(srcad.grad(functools.partial(local, y=2.0)))


@pytest.mark.parametrize("mode", MODES)
def test_numpy_functions_passed_directly(mode):
    x = RNG.standard_normal((3, 3))
    assert rel_error(srcad.grad(np.sin, mode=mode)(0.4), np.cos(0.4)) < 1e-15
    check_vjp(np.tril, (x,), mode=mode)
    check_vjp(np.arctan2, (x, x.T + 2.0), mode=mode)
    _, pb = srcad.vjp(np.tril, x, mode=mode)
    np.testing.assert_array_equal(pb(np.ones((3, 3)))[0], np.tril(np.ones((3, 3))))


# -- a bool output: zeros, one warning at the user's line --------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_bool_output_gives_zeros_and_one_warning(mode):
    import inspect
    import warnings
    p, x = {"w": RNG.standard_normal(3).astype(np.float32), "n": 2}, RNG.standard_normal(3)
    g = srcad.value_and_grad(F.compares, wrt=(0, 1), mode=mode)
    with pytest.warns(UserWarning, match="returns a bool") as caught:
        v, (gp, gx) = g(p, x)
    assert v == F.compares(p, x)
    assert gp["w"].dtype == np.float32 and not np.any(gp["w"]) and gp["n"] is None
    assert gx.shape == x.shape and not np.any(gx)
    _, first = inspect.getsourcelines(F.compares)
    assert caught[0].filename == F.__file__ and caught[0].lineno == first + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (once: the next call is quiet)
        g(p, x)


@pytest.mark.parametrize("mode", MODES)
def test_invert_of_a_mask_runs_as_written(mode):
    x = np.array([0.3, -1.2, 2.0, -0.4])
    assert F.inverted_mask(x) == srcad.value_and_grad(F.inverted_mask, mode=mode)(x)[0]
    check_grads(F.inverted_mask, (x,), mode=mode)


# -- **kw in a call: a dict display is spread; a name holding a dict is refused with the
#    keywords written out (the same for every numpy function) ---------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_double_star_keywords(mode):
    x = RNG.standard_normal((3, 3))
    check_grads(F.spread_display, (x,), mode=mode)
    with pytest.raises(srcad.SrcadError, match=r"axis=VAR_KW\['axis'\], keepdims="):
        srcad.grad(F.spread_global, mode=mode)(x)
    check_grads(F.spread_global_as_hinted, (x,), mode=mode)  # (the hint, applied)


def test_second_derivative_through_an_inner_grad_reads_names_at_each_call(monkeypatch):
    g, gg = srcad.grad(F.calls_scaled), srcad.grad(srcad.grad(F.calls_scaled))
    for scale in (2.0, -0.5):
        monkeypatch.setattr(F, "SCALE", scale)
        for x in (0.4, 1.1):
            h = 1e-5
            assert rel_error(gg(x), (g(x + h) - g(x - h)) / (2 * h)) < 1e-7, scale
