"""A probe of scientific code and ML from scratch (2026-12-04, fourth session): 249
programs of our own -- scientific and engineering numpy (PDE stencils, ODE integrators,
n-body, signal processing, statistics, Monte Carlo) and classic machine learning written from
scratch -- in source and tape mode against central differences. 223 right in each mode; no
wrong value; the classes it found, one focused test each, each failing before:

* a crash from the backward: ``np.cross`` of 2-component vectors (numpy reads a missing z as
  0) -- the op table's rows (srcad/ops/matrix.py, its grid of cases) cover it now;
* ``def h(a, *, s)`` / ``def h(*a, s=2.0)`` / ``def h(*parts, scale=1.0, **opts)`` nested in
  the function: "name `s` is not defined" (the lifted def's keyword-only and star parameters
  were taken for free names);
* ``np.trapz if hasattr(np, "trapz") else np.trapezoid``: "`np` (module) used as a value";
* ``Base.g(self, x)`` (the spelling before ``super()``): refused;
* ``layers = [Dense(W) for W in Ws[:-1]] + [Out(Ws[-1])]``: two lists of built objects joined
  by ``+``, refused ("an operand of an operator it has no method for");
* ``y[i], y[j] = y[j], y[i]``: refused naming srcad's temporary; and, found while fixing it,
  ``y[i], s = step(y[i + 1], s)`` in a loop: a wrong value and gradient in source mode,
  silently;
* ``np.random.normal(mu, sigma)`` with differentiated parameters: refused
  (tests/test_random_draws.py).
"""

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = ["source", "tape"]
R = np.random.default_rng(12)


def _check(fn, args, mode, wrt=0):
    value, grad = srcad.value_and_grad(fn, wrt=wrt, mode=mode)(*args)
    assert value == fn(*args)
    want = numerical_grad(fn, args, wrt=wrt)
    got, want = (grad, want) if isinstance(wrt, tuple) else ((grad,), (want,))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-9)


# -- nested defs with keyword-only and star parameters --------------------------------------

def nested_keyword_only(x):
    def h(a, *, s):
        return a * s
    return np.sum(h(x, s=3.0) ** 2)


def nested_star_then_keyword(x):
    scale = np.tanh(x[0])

    def combine(*parts, weight=0.5):
        return sum(parts) * weight * scale
    return np.sum(combine(x, x * 2.0, weight=0.25) + combine(x * x))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [nested_keyword_only, nested_star_then_keyword])
def test_nested_def_with_keyword_only_or_star_parameters(fn, mode):
    _check(fn, (R.standard_normal(4),), mode)


# -- hasattr of a module -------------------------------------------------------------------

def trapezoid_of_any_numpy(x):
    integrate = np.trapz if hasattr(np, "trapz") else np.trapezoid
    total = integrate(x * x, dx=0.5)
    return total + (np.sum(x) if hasattr(np, "no_such_function") else 0.0)


@pytest.mark.parametrize("mode", MODES)
def test_hasattr_of_a_module_is_its_answer(mode):
    _check(trapezoid_of_any_numpy, (R.standard_normal(5),), mode)


# -- an explicit base-class method ------------------------------------------------------------

class Dense:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return x @ self.W


class TanhDense(Dense):
    def __call__(self, x):
        return np.tanh(Dense.__call__(self, x))


class Scaled(Dense):
    def forward(self, x):
        return Dense.__call__(self, x) * 2.0 + 1.0


def explicit_base_calls(W1, W2, X):
    h = TanhDense(W1)(X)
    return np.sum(Scaled(W2).forward(h) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_an_explicit_base_class_method(mode):
    args = (R.standard_normal((3, 4)) * 0.5, R.standard_normal((4, 2)) * 0.5,
            R.standard_normal((5, 3)))
    _check(explicit_base_calls, args, mode, wrt=(0, 1))


# -- lists of objects joined by + ---------------------------------------------------------------

def layers_joined(Ws, X):
    layers = [TanhDense(W) for W in Ws[:-1]] + [Dense(Ws[-1])]
    h = X
    for layer in layers:
        h = layer(h)
    return np.mean(h ** 2)


def layers_grown_by_plus(W1, W2, X):
    layers = [TanhDense(W1)]
    layers = layers + [Dense(W2)]
    h = X
    for layer in layers:
        h = layer(h)
    return np.sum(h)


@pytest.mark.parametrize("mode", MODES)
def test_lists_of_objects_joined_by_plus(mode):
    Ws = [R.standard_normal((3, 4)) * 0.5, R.standard_normal((4, 4)) * 0.5,
          R.standard_normal((4, 1)) * 0.5]
    X = R.standard_normal((6, 3))
    value, grad = srcad.value_and_grad(layers_joined, mode=mode)(Ws, X)
    assert value == layers_joined(Ws, X)
    want = numerical_grad(layers_joined, (Ws, X))
    for g, w in zip(grad, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-9)
    _check(layers_grown_by_plus, (Ws[0], Ws[1], X), mode, wrt=(0, 1))


# -- np.cross of 2-vectors -------------------------------------------------------------------

def cross_of_plane_vectors(a, b):
    return np.sum(np.cross(a, b) ** 2) + np.sum(np.cross(a, np.ones(3)) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_cross_of_plane_vectors(mode):
    _check(cross_of_plane_vectors, (R.standard_normal((4, 2)), R.standard_normal((4, 2))),
           mode, wrt=(0, 1))


# -- stores unpacked into subscripts ------------------------------------------------------------
# (`y[i], y[j] = y[j], y[i]` was refused naming srcad's temporary `unpacked`; `y[i], s =
# step(..)` in a loop gave a wrong value and gradient in source mode, silently: the loop did
# not see `y` written, the store being inside a tuple target)

def swap_elements(x):
    y = x * 1.0
    y[0], y[2] = y[2], y[0]
    return np.sum(y * np.arange(1.0, 1.0 + y.size))


def swap_rows(X):
    """numpy's gotcha: rows are views, so both rows end as the old X[2]."""
    y = X * 1.0
    y[0], y[2] = y[2], y[0]
    return np.sum(y * np.arange(1.0, 1.0 + y.size).reshape(y.shape))


def bubble_pass(x):
    y = x.copy()
    for i in range(len(y) - 1):
        if y[i] > y[i + 1]:
            y[i], y[i + 1] = y[i + 1], y[i]
    return np.sum(y * np.arange(1.0, 1.0 + len(y)))


def _step(a, b):
    return a * 2.0, b + np.tanh(a)


def unpacked_into_an_item_in_a_loop(x):
    y = x.copy()
    s = 0.0
    for i in range(len(y) - 1):
        y[i], s = _step(y[i + 1], s)
    return np.sum(y * np.arange(1.0, 1.0 + len(y))) + s


def unpacked_into_two_items_in_a_loop(x):
    y = x.copy()
    for i in range(len(y) - 1):
        y[i], y[i + 1] = _step(y[i + 1], y[i])
    return np.sum(y * np.arange(1.0, 1.0 + len(y)))


def nested_star_star(x):
    def layer(h, **opts):
        return np.tanh(h) * opts.get("scale", 1.0)

    def combine(*parts, scale=1.0, **opts):
        return sum(parts) * scale + opts.get("shift", 0.0)
    return np.sum(layer(combine(x, x * 2.0, scale=0.5, shift=0.25), scale=3.0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, shape", [
    (swap_elements, (3,)), (swap_rows, (3, 4)), (bubble_pass, (5,)),
    (unpacked_into_an_item_in_a_loop, (4,)), (unpacked_into_two_items_in_a_loop, (4,)),
    (nested_star_star, (4,))])
def test_stores_unpacked_into_subscripts(fn, shape, mode):
    _check(fn, (R.standard_normal(shape),), mode)
