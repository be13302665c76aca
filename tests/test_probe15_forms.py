"""Refusals of issue 23's list lifted in the session of 2026-12-05 (third), each class checked
in every mode against central differences and the plain call:

1. `lst.reverse()` and `lst.clear()` on a list the function builds (RNN code walks its hidden
   states backwards with `hs.reverse()`; a buffer emptied each step): refused before ("changes
   a list in place that srcad holds as a value"), now the list's name is rebound to
   `lst[::-1]` / `[]`, as `lst.insert` already was -- the list has no other name (pylower's
   `_local_lists`), so the rebinding is the change. A list the caller passed in is still
   refused (the caller's list would change);
2. `np.trapezoid(y, x)` / `np.trapz` with a differentiated `x` or `dx` (a quadrature over
   sample points that depend on the parameters): refused before, now rows (bilinear in y and
   the spacings), first and second order; and an `x` of more than one dimension (numpy takes
   its spacings along `axis`) crashed ("object too deep") even as a constant;
3. `x + [1.0]` / `[0.5, 2.0] * x` of an array in source mode: read as a list concatenation
   or repeat (a list display on one side), which gave a wrong value and crashed in the
   backward -- now refused at the user's line (tape mode runs numpy's arithmetic);
4. `hist = hist + (h,)` / `hist += (h,)` on a tuple the function makes: refused in source
   mode before ("a Python operator on a tuple that gradients flow through"), now Python's
   tuple concatenation (`tuple(list_concat(..))`);
5. `out=` of ndarray methods (`p.clip(lo, hi, out=p)`, `y.cumsum(out=c)`, `y.mean(out=m)`):
   refused before ("`clip` does not take the keyword `out`"), now numpy's write into `out`
   as for the function forms; `out=None` (numpy's default) was taken for a write into
   `None` and refused, in both forms; a 0-d `out` (`np.mean(v, out=m)` with `m =
   np.empty(())`) crashed in the backward of both modes (`3.0[...]`: the cotangent of a 0-d
   array was a number, which setitem's rule indexes);
6. `operator.isub(y, t)` / `operator.iadd(...)` / `y.__iadd__(t)` as statements or
   assigned: refused before; now Python's in-place operator -- an array written in place
   (its other names see it), a number left as it was (`operator.isub(s, 1.0)` does not
   change s). Source mode writes `tmp = y; tmp -= t`; tape mode calls the Tensor's own
   `__isub__`;
7. `OrderedDict([("W", W), ...])` / `OrderedDict(W=W)` of parameters: refused ("`OrderedDict`
   has no derivative rule"), now a dict of those entries in that order, as `dict(...)`;
8. `for k, v in vars(layer).items():` / `self.__dict__.values()` over an object built in the
   function (a hand-rolled `parameters()`): refused ("`Linear` has no derivative rule": the
   object was run as written), now unrolled over its attributes in the order Python keeps
   them (first assigned). The comprehension form with a condition on the values (`[v for
   k, v in vars(self).items() if isinstance(v, np.ndarray)]`) is still refused;
9. a module's scipy.sparse matrix times an array (`L @ x`, `x @ L`, `L.T @ X`, `L.dot(x)`: a
   finite-difference stencil, a graph Laplacian): refused ("the Python operator of `matmul`
   on `L` (a csr_matrix) has no derivative rule"), now a row (`sparse_matmul`: linear in
   the array, its cotangent the product with L's transpose), every mode and order.
"""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import srcad
from srcad.testing import numerical_grad, rel_error
from tests.test_probe14_forms import _check  # (value and gradient: source, tape, fused)


X = np.array([0.3, -0.8, 0.5, 1.1])


# ---- 1. lst.reverse(), lst.clear() ------------------------------------------------------------
def states_walked_backwards(x):
    hs = []
    h = x
    for t in range(4):
        h = np.tanh(1.3 * h + 0.2 * t)
        hs.append(h)
    hs.reverse()
    out = 0.0
    for k, h in enumerate(hs):
        out = out + (k + 1) * np.sum(h * h)
    return out


def reversed_each_trip(x):
    hs = [x, 2.0 * x]
    for i in range(3):
        hs.reverse()
        hs.append(np.sin(hs[0]) * (i + 1))
    return np.sum(hs[0] * hs[-1]) + np.sum(hs[1])


def reversed_on_one_arm(x):
    hs = [np.sin(x), np.cos(x), 3.0 * x]
    if np.sum(x) > 0:
        hs.reverse()
    return np.sum(2.0 * hs[0] + hs[1])


def reversed_then_popped(x):
    hs = []
    h = x
    for i in range(3):
        h = np.cos(h) + x
        hs.append(h)
    hs.reverse()
    last = hs.pop()
    return np.sum(last * hs[0]) + len(hs)


def buffer_cleared_each_step(x):
    buf = []
    total = 0.0
    for i in range(3):
        buf.append(np.tanh(x * (i + 1)))
        buf.append(0.5 * x)
        total = total + np.sum(buf[0] * buf[-1]) + len(buf)
        buf.clear()
    return total + len(buf)


class _Cell:
    def run(self, x):
        self.hs = []
        h = x
        for t in range(3):
            h = np.tanh(h + 0.5)
            self.hs.append(h)
        self.hs.reverse()
        return self.hs


def reversed_on_an_object(x):
    hs = _Cell().run(x)
    return np.sum(hs[0] * hs[2]) + np.sum(hs[1])


@pytest.mark.parametrize("fn", [states_walked_backwards, reversed_each_trip, reversed_on_one_arm,
                                reversed_then_popped, buffer_cleared_each_step,
                                reversed_on_an_object])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_list_reversed_or_cleared(fn, sign):
    _check(fn, (sign * X,))


def reverses_a_list_with_two_names(x):
    hs = [np.sin(x), np.cos(x)]
    a = hs
    hs.reverse()                      # a is reversed too (one list)
    return np.sum(2.0 * a[0] + a[1])


def test_a_list_with_a_second_name_reversed_is_refused():
    with pytest.raises(srcad.SrcadError, match="reverse"):
        srcad.grad(reverses_a_list_with_two_names)(X)


def reverses_its_argument(xs):
    xs.reverse()
    return np.sum(2.0 * xs[0] + xs[1])


def test_a_list_argument_reversed_is_still_refused():
    # (the caller's list would be reversed, as Python does: srcad says so rather than
    # reversing a copy; the plain call is the caller's own business)
    with pytest.raises(srcad.SrcadError, match="reverse") as e:
        srcad.grad(reverses_its_argument)([X.copy(), 2.0 * X])
    assert "test_probe15_forms.py" in str(e.value)


# ---- 2. np.trapezoid with a differentiated x or dx -------------------------------------------
TRAPEZOID = getattr(np, "trapezoid", None) or np.trapz


def area_under_moving_points(p):
    t = np.cumsum(np.exp(p))           # sample points that depend on the parameters
    return TRAPEZOID(np.sin(t) * p, t)


def area_rows_along_axis0(y, x):
    return np.sum(TRAPEZOID(y * y, x, axis=0) ** 2)


def area_with_points_per_column(y, x):
    return np.sum(np.tanh(TRAPEZOID(y, x, axis=0)))


def area_with_spacing(y, h):
    return np.sum(TRAPEZOID(np.cos(y), dx=h, axis=-1) ** 2)


def area_over_one_sample(y, x):
    return TRAPEZOID(y * x, x) + np.sum(y * x)


def test_trapezoid_wrt_sample_points():
    _check(area_under_moving_points, (np.array([0.1, -0.4, 0.3, 0.2, -0.1]),))


@pytest.mark.parametrize("fn, shapes", [
    (area_rows_along_axis0, [(4, 3), (4,)]),
    (area_with_points_per_column, [(4, 3), (4, 3)]),
    (area_with_points_per_column, [(4, 3), (4, 1)]),
    (area_with_spacing, [(3, 5), ()]),
    (area_over_one_sample, [(1,), (1,)]),
])
def test_trapezoid_wrt_y_and_x(fn, shapes):
    rng = np.random.default_rng(7)
    y = rng.standard_normal(shapes[0])
    x = np.cumsum(np.abs(rng.standard_normal(shapes[1])) + 0.2, axis=0) if shapes[1] else 0.7
    _check(fn, (y, x), wrt=(0, 1))


def test_trapezoid_matches_torch_and_second_order():
    rng = np.random.default_rng(3)
    y, x = rng.standard_normal((3, 5)), np.cumsum(rng.random(5) + 0.1)

    def f(y, x):
        return np.sum(TRAPEZOID(y * y, x) ** 2)

    gy, gx = srcad.grad(f, wrt=(0, 1))(y, x)
    ty = torch.tensor(y, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    torch.sum(torch.trapezoid(ty * ty, tx) ** 2).backward()
    assert rel_error(gy, ty.grad.numpy()) < 1e-12 and rel_error(gx, tx.grad.numpy()) < 1e-12

    def dx_sum(y, x):  # (a scalar of the gradient w.r.t. x: its derivative is second order)
        return np.sum(srcad.grad(f, wrt=1)(y, x) ** 2)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g2 = srcad.grad(dx_sum, wrt=1)(y, x)
    assert rel_error(g2, numerical_grad(dx_sum, (y, x), wrt=1)) < 1e-6


def test_trapezoid_with_a_constant_nd_x_no_longer_crashes():
    XX = np.cumsum(np.abs(np.random.default_rng(5).standard_normal((4, 3))) + 0.1, axis=0)

    def f(y):
        return np.sum(TRAPEZOID(y * y, XX, axis=0))

    y = np.random.default_rng(0).standard_normal((4, 3))
    _check(f, (y,))


# ---- 3. `x + [..]` / `[..] * x` of an array: numpy's arithmetic, not a list's ----------------
def adds_a_list_display(x):
    return np.sum(x + [1.0]) * np.sum(x * x)


def adds_to_a_list_display(x):
    return np.sum(([1.0, 2.0, 3.0, 4.0] + x) ** 2)


def scales_a_list_display(x):
    return np.sum([0.5, 2.0, 1.0, 3.0] * x * x)


@pytest.mark.parametrize("fn", [adds_a_list_display, adds_to_a_list_display,
                                scales_a_list_display])
def test_array_arithmetic_with_a_list_display(fn):
    # source mode reads `a + [..]` as a list concatenation and `[..] * n` as a list repeat
    # (the display says so): with an array on the other side it concatenated the array's
    # rows ([x0, x1, .., 1.0] -- a wrong value) and crashed in the backward; now refused at
    # the user's line. Tape mode runs numpy's arithmetic and is right.
    x = X.copy()
    with pytest.raises(srcad.SrcadError, match="elementwise") as e:
        srcad.value_and_grad(fn)(x)
    assert "test_probe15_forms.py" in str(e.value)
    v, g = srcad.value_and_grad(fn, mode="tape")(x)
    assert v == fn(x) and rel_error(g, numerical_grad(fn, (x,))) < 1e-6


def repeats_and_joins_lists(x, n):
    hs = [x] * n
    more = hs + [np.sin(x)]
    return np.sum(more[0] * more[-1]) + len(more)


def test_list_repeat_and_concatenation_still_lists():
    _check(repeats_and_joins_lists, (X, 3))
    _check(repeats_and_joins_lists, (X, np.int64(2)))


# ---- 4. tuples the function makes, concatenated ------------------------------------------
def history_as_a_tuple(x):
    hist = ()
    h = x
    for i in range(3):
        h = np.sin(1.1 * h + 0.2)
        hist = hist + (h,)
    return np.sum(hist[0] * hist[2]) + len(hist)


def history_extended_in_place(x):
    hist = ()
    h = x
    for i in range(3):
        h = np.tanh(1.2 * h + 0.1)
        hist += (h, 0.5 * h)
    return np.sum(hist[0] * hist[-1]) + np.sum(hist[3])


def tuples_joined(x):
    a = (np.sin(x),)
    b = (np.cos(x), 2.0 * x)
    c = a + b
    d = c + a
    return np.sum(d[0] * d[2]) + np.sum(d[3] * d[1])


def shape_extended(x):
    s = x.shape + (1,)
    return np.sum(np.reshape(x, s) ** 2)


def adds_a_tuple_display(x):   # (numpy's elementwise add: unchanged)
    return np.sum((x + (1.0, 2.0, 3.0, 4.0)) ** 2)


@pytest.mark.parametrize("fn", [history_as_a_tuple, history_extended_in_place, tuples_joined,
                                shape_extended, adds_a_tuple_display])
def test_tuples_the_function_makes(fn):
    _check(fn, (X,))


# ---- 5. out= of ndarray methods, out=None, a 0-d out ---------------------------------------
def clipped_in_place_by_the_method(x):
    p = 3.0 * x
    p.clip(-1.0, 1.0, out=p)
    return np.sum(p * x)


def method_reductions_into_buffers(x):
    c = np.zeros_like(x)
    y = 2.0 * x
    y.cumsum(out=c)
    m = np.empty(())
    y.mean(out=m)
    return np.sum(c * c) + 3.0 * m


def mean_into_a_0d_buffer(x):
    m = np.empty(())
    np.mean(2.0 * x, out=m)
    return 3.0 * m


def out_given_as_none(x):
    y = np.sum(x * x, out=None) + np.clip(x, -0.6, 0.6, out=None).sum()
    return y + np.cumsum(x, out=None)[-1] + x.sum(out=None)


class _Box:
    def clip(self, lo, hi, out=None):   # (a method of yours named like numpy's)
        return 7.0 if out is None else -1.0


def users_own_clip(x):
    return np.sum(x * _Box().clip(0, 1, out=None))


@pytest.mark.parametrize("fn", [clipped_in_place_by_the_method, method_reductions_into_buffers,
                                mean_into_a_0d_buffer, out_given_as_none, users_own_clip])
def test_out_of_methods_none_and_0d(fn):
    _check(fn, (X,))


# ---- 6. operator.i*, __i*__ -------------------------------------------------------------------
def subtracts_with_operator(x):
    y = 2.0 * x
    y = operator.isub(y, np.sin(x))
    return np.sum(y * y)


def adds_with_the_dunder(x):
    p = 2.0 * x
    p.__iadd__(np.cos(x))
    return np.sum(p * p)


def adds_into_an_alias(x):
    y = 2.0 * x
    w = y
    operator.iadd(y, np.sin(x))       # w is y: it sees the write
    z = operator.imul(w, 3.0)         # z is w too
    return np.sum(w * x) + np.sum(z * y)


def numbers_keep_their_value(x):
    s = np.sum(x * x)
    operator.isub(s, 1.0)             # a number: s is not changed
    z = operator.imul(s, 3.0)         # z = 3 s, s still s
    return s * z


class _Layer:
    def __init__(self, W):
        self.W = W

    def step(self, g):
        operator.isub(self.W, 0.1 * g)   # the layer's array, written in place
        return self.W


def subtracts_from_an_attribute(x):
    lay = _Layer(np.outer(x, x) * 0.5)
    w2 = lay.step(np.sin(x))
    return np.sum(lay.W @ x) + np.sum(w2)


def adds_into_list_items_and_a_view(x):
    ps = [np.outer(x, x), np.outer(x, x[::-1])]
    operator.iadd(ps[0], np.cos(x))
    ps[1].__imul__(3.0)
    A = ps[0] * 1.0
    operator.isub(A[0], x)           # a row of A: A sees it
    return np.sum(ps[0] * ps[1]) + np.sum(A ** 2)


@pytest.mark.parametrize("fn", [subtracts_with_operator, adds_with_the_dunder,
                                adds_into_an_alias, numbers_keep_their_value,
                                subtracts_from_an_attribute, adds_into_list_items_and_a_view])
def test_in_place_operators_as_functions(fn):
    _check(fn, (X,))


# ---- 7. OrderedDict of parameters --------------------------------------------------------------
def ordered_params_walked(x):
    W = np.outer(x, x[::-1]) * 0.3
    params = OrderedDict([("W", W), ("b", np.ones(x.shape[0]))])
    h = x
    for name, p in params.items():
        h = h @ p if p.ndim == 2 else h + p
    return np.sum(np.tanh(h)) + sum(np.sum(v ** 2) for v in params.values())


def ordered_params_by_keyword(x):
    params = OrderedDict(W=np.outer(x, x) * 0.2, b=np.sin(x))
    return np.sum(np.tanh(x @ params["W"] + params["b"])) + len(params)


@pytest.mark.parametrize("fn", [ordered_params_walked, ordered_params_by_keyword])
def test_ordered_dict_of_parameters(fn):
    _check(fn, (X,))


# ---- 8. vars(obj) / obj.__dict__ walked ----------------------------------------------------
class _Module:
    def __init__(self):
        self.training = True


class _Linear(_Module):
    def __init__(self, W, b):
        super().__init__()
        self.W, self.b = W, b

    def forward(self, x):
        return x @ self.W + self.b

    def l2(self):
        total = 0.0
        for name, v in vars(self).items():
            if isinstance(v, np.ndarray):
                total = total + np.sum(v ** 2)
        return total


def decay_over_vars(x):
    lin = _Linear(np.outer(x, x) * 0.3, np.sin(x))
    return np.sum(np.tanh(lin.forward(x))) + 0.1 * lin.l2()


def walk_dict_values(x):
    lin = _Linear(np.outer(x, x[::-1]) * 0.2, np.cos(x))
    out = np.sum(lin.forward(x) ** 2)
    names = []
    for v in lin.__dict__.values():
        if isinstance(v, np.ndarray):
            out = out + np.sum(v) * (len(names) + 1)
            names.append(1)
    return out


@pytest.mark.parametrize("fn", [decay_over_vars, walk_dict_values])
def test_attributes_walked_with_vars(fn):
    _check(fn, (X,))


# ---- 9. scipy.sparse constants -----------------------------------------------------------------
import scipy.sparse as _sp  # noqa: E402

N = 5
LAPLACIAN = _sp.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(N, N)).tocsr()
MIXING = _sp.random(N, N, density=0.4, random_state=3, format="csc")
STENCIL = _sp.csr_array(LAPLACIAN)


def smoothness(u):
    return np.sum((LAPLACIAN @ u) ** 2) + u @ (MIXING @ np.tanh(u))


def energy_both_sides(u):
    return (u @ LAPLACIAN) @ u + np.sum(LAPLACIAN.T @ np.sin(u)) + u @ LAPLACIAN.dot(u)


def columns_through_a_sparse_array(U):
    return np.sum(np.tanh(STENCIL @ U) ** 2) + np.sum((U.T @ MIXING.T) * U.T)


U0 = np.linspace(-1.0, 1.2, N)


@pytest.mark.parametrize("fn, arg", [(smoothness, U0), (energy_both_sides, U0),
                                     (columns_through_a_sparse_array,
                                      np.outer(U0, [1.0, -0.5, 0.3]))])
def test_sparse_constants(fn, arg):
    _check(fn, (arg,))


def test_sparse_second_order_and_forward():
    u = U0.copy()
    t = np.cos(np.arange(N))
    _, tangent = srcad.jvp(smoothness, (u,), (t,))
    assert abs(tangent - np.dot(numerical_grad(smoothness, (u,)), t)) < 1e-6

    def grad_norm(u):
        return np.sum(srcad.grad(smoothness)(u) ** 2)

    assert rel_error(srcad.grad(grad_norm)(u), numerical_grad(grad_norm, (u,))) < 1e-6


# (a sparse matrix given as an argument, refused here until 2026-12-05: followed since,
# tests/test_probe16_forms.py)
