"""numpy's other in-place writers, np.poly1d's methods and np.vectorize with several outputs.

* np.put_along_axis, np.place, np.putmask and ``x.put(...)`` into a local array are the
  subscript assignments numpy performs (frontend/pylower.py): ``a[index] = value``,
  differentiated copy-on-write like ``x[i] = v`` -- the gradient reaches the array written
  into (zero where it was written) and the values written (numpy's broadcasting of
  put_along_axis's values; place's and putmask's repetition of a short value; a repeated
  index keeps the last write). Views and aliases of the written array see the write.
* np.poly1d built in the function: deriv / integ / arithmetic return new poly1d objects
  (srcad/pyfuncs.py's class, scalarised by frontend/objects.py), differentiated through
  np.polyder / polyint / polyadd / polymul on the coefficients.
* np.vectorize of a function returning a tuple: a tuple of arrays, with and without
  signature=.

Each function is checked whole against central differences: the gradient in source and
tape mode (bit for bit alike), the JVP, and second order (the JVP of the gradient, and the
VJP of the gradient). Where torch has the op (scatter / masked_scatter / index_put /
where), its gradient is compared too.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp, check_vjp, numerical_grad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(2323)


def _check(fn, args, wrt=None, tol=None, second=True):
    """First order in both modes (bit for bit alike), forward; second order as the JVP and
    the VJP of the gradient."""
    wrt = tuple(range(len(args))) if wrt is None else wrt
    for mode in ("source", "tape"):
        check_grads(fn, args, wrt=wrt, mode=mode, tol=tol)
    s = srcad.value_and_grad(fn, wrt=wrt)(*args)
    t = srcad.value_and_grad(fn, wrt=wrt, mode="tape")(*args)
    assert np.array_equal(s[0], t[0])
    for a, b in zip(s[1], t[1]):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    tangents = tuple(RNG.standard_normal(np.shape(a)).astype(np.result_type(a))
                     if i in wrt else None for i, a in enumerate(args))
    check_jvp(fn, args, tangents, tol=tol or 1e-5)
    if second:
        g = srcad.grad(fn, wrt=wrt[0])
        check_jvp(g, args, tangents, tol=tol or 1e-5)
        check_vjp(g, args, tol=tol or 1e-5)


def _torch_grads(fn, args):
    ts = [torch.tensor(a, requires_grad=True) for a in args]
    fn(*ts).backward()
    return [t.grad.numpy() for t in ts]


def _assert_grads(fn, args, want, rtol=1e-10):
    got = srcad.grad(fn, wrt=tuple(range(len(args))))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12)


# --- np.put_along_axis ---------------------------------------------------------------------
IDX_ROWS = np.array([[2, 0], [1, 1]])  # row 1 writes position 1 twice: the last write wins


def f_put_along_axis(x, v):
    y = np.sin(x)
    np.put_along_axis(y, IDX_ROWS, v * x[:, :1], axis=1)
    return np.sum(y * y * x)


def f_put_along_axis_broadcast(x, v):
    y = x * 2.0
    np.put_along_axis(y, np.array([[0], [2]]), np.tanh(v), axis=-1)  # v (2, 1)
    return np.sum(np.cos(y) * x)


def f_put_along_axis_axis0(x, v):
    y = x ** 2
    np.put_along_axis(y, np.array([[1, 0, 1]]), v[0], 0)  # values broadcast along axis 1
    return np.sum(np.sin(y))


def f_put_along_axis_none(x, v):
    y = np.exp(x)
    np.put_along_axis(y, np.array([5, 0, -1]), v[:, 0] * v[:, 0], None)
    return np.sum(y * x)


def test_put_along_axis():
    x, v = RNG.uniform(0.2, 1.0, (2, 3)), RNG.uniform(0.2, 1.0, (2, 2))
    _check(f_put_along_axis, (x, v))
    _check(f_put_along_axis_broadcast, (x, v[:, :1]))
    _check(f_put_along_axis_axis0, (x, RNG.uniform(0.2, 1.0, (1, 3))))
    _check(f_put_along_axis_none, (x, RNG.uniform(0.2, 1.0, (3, 1))))


def test_put_along_axis_against_torch_scatter():
    x, v = RNG.uniform(0.2, 1.0, (2, 3)), RNG.uniform(0.2, 1.0, (2, 1))
    idx = np.array([[0], [2]])

    def t_fn(x, v):  # torch's scatter along dim 1, indices without repeats
        return (torch.cos(torch.scatter(x * 2.0, 1, torch.tensor(idx), torch.tanh(v))) * x).sum()

    _assert_grads(f_put_along_axis_broadcast, (x, v), _torch_grads(t_fn, (x, v)))


def test_put_along_axis_repeated_index_against_torch_index_put():
    x, v = RNG.uniform(0.2, 1.0, (2, 3)), RNG.uniform(0.2, 1.0, (2, 2))

    def t_fn(x, v):  # the writes numpy keeps: (0, 2), (0, 0) and (1, 1) from its last value
        y = torch.sin(x)
        val = v * x[:, :1]
        y = y.index_put((torch.tensor([0, 0, 1]), torch.tensor([2, 0, 1])),
                        torch.stack([val[0, 0], val[0, 1], val[1, 1]]))
        return (y * y * x).sum()

    _assert_grads(f_put_along_axis, (x, v), _torch_grads(t_fn, (x, v)))


def test_put_along_axis_values():
    x, v = RNG.uniform(0.2, 1.0, (2, 3)), RNG.uniform(0.2, 1.0, (2, 2))
    for fn, args in ((f_put_along_axis, (x, v)), (f_put_along_axis_broadcast, (x, v[:, :1])),
                     (f_put_along_axis_none, (x, RNG.uniform(0.2, 1, (3, 1))))):
        assert srcad.value_and_grad(fn)(*args)[0] == fn(*args)


# --- np.place, np.putmask --------------------------------------------------------------------
def f_place(x, v):
    y = x * 1.5
    np.place(y, x > 0.5, np.sin(v))  # v shorter than the mask's count: repeated
    return np.sum(y * y * x)


def f_place_long(x, v):
    y = np.cos(x)
    np.place(y, x < 0.6, v * v)  # v 2-d and longer: its first items, in flat order
    return np.sum(np.sin(y) * x)


def f_putmask(x, v):
    y = x * x
    np.putmask(y, x > 0.5, np.exp(v))  # values repeated by flat position
    return np.sum(y * np.cos(x))


def f_putmask_full(x, w):
    y = np.tanh(x)
    np.putmask(y, w > x, w * x)  # values of a's shape: the masked ones themselves
    return np.sum(y ** 3)


MASK_X = np.array([[0.7, 0.3, 0.9], [0.55, 0.2, 0.8]])  # (x > 0.5 on 4, x < 0.6 on 3)


def test_place_and_putmask():
    v = RNG.uniform(0.2, 1.0, 3)
    _check(f_place, (MASK_X, v))
    _check(f_place, (MASK_X, v[:1]))
    _check(f_place_long, (MASK_X, RNG.uniform(0.2, 1.0, (2, 3))))
    _check(f_putmask, (MASK_X, v))
    _check(f_putmask, (MASK_X, v[:2]))
    _check(f_putmask_full, (MASK_X, RNG.uniform(0.2, 1.0, (2, 3))))


def test_place_values_are_numpys():
    for v in (np.array([0.1, 0.2, 0.3]), np.array([0.4]), np.arange(7.0)):
        assert srcad.value_and_grad(f_place, wrt=(0, 1))(MASK_X, v)[0] == f_place(MASK_X, v)
        assert srcad.value_and_grad(f_putmask, wrt=(0, 1))(MASK_X, v)[0] == f_putmask(MASK_X, v)


def test_place_against_torch_masked_scatter():
    v = RNG.uniform(0.2, 1.0, 6)

    def t_fn(x, v):  # torch's masked_scatter takes the source's first items, as np.place
        y = (x * 1.5).masked_scatter(x > 0.5, torch.sin(v))
        return (y * y * x).sum()

    _assert_grads(f_place, (MASK_X, v), _torch_grads(t_fn, (MASK_X, v)))


def test_putmask_against_torch_where():
    w = RNG.uniform(0.2, 1.0, (2, 3))

    def t_fn(x, w):
        y = torch.where(w > x, w * x, torch.tanh(x))
        return (y ** 3).sum()

    _assert_grads(f_putmask_full, (MASK_X, w), _torch_grads(t_fn, (MASK_X, w)))


def test_putmask_repeated_against_torch():
    v = RNG.uniform(0.2, 1.0, 2)

    def t_fn(x, v):  # flat positions 0, 2, 3, 5 take v[0], v[0], v[1], v[1]
        flat = (x * x).reshape(-1)
        ev = torch.exp(v)
        y = flat.index_put((torch.tensor([0, 2, 3, 5]),), ev[torch.tensor([0, 0, 1, 1])])
        return (y.reshape(2, 3) * torch.cos(x)).sum()

    _assert_grads(f_putmask, (MASK_X, v), _torch_grads(t_fn, (MASK_X, v)))


# --- x.put(...) ------------------------------------------------------------------------------
def f_put_method(x, v):
    y = np.sin(x)
    y.put([4, 0, -1, 4], v * x[0, 0])  # repeated 4: the last write wins
    return np.sum(y * x)


def f_put_method_keywords(x, v):
    y = x * 3.0
    y.put(indices=np.array([7, 1]), values=np.cos(v), mode="wrap")
    return np.sum(y * y)


def test_put_method():
    x, v = RNG.uniform(0.2, 1.0, (2, 3)), RNG.uniform(0.2, 1.0, 4)
    _check(f_put_method, (x, v))
    _check(f_put_method_keywords, (x, v[:2]))


def test_put_method_against_torch_index_put():
    x, v = RNG.uniform(0.2, 1.0, (2, 3)), RNG.uniform(0.2, 1.0, 4)

    def t_fn(x, v):
        val = v * x[0, 0]
        y = torch.sin(x).reshape(-1).index_put((torch.tensor([0, 5, 4]),),
                                               torch.stack([val[1], val[2], val[3]]))
        return (y.reshape(2, 3) * x).sum()

    _assert_grads(f_put_method, (x, v), _torch_grads(t_fn, (x, v)))


# --- views and aliases see the write, as in numpy --------------------------------------------
def f_view_sees_write(x, v):
    y = x * 2.0
    row = y[1]  # a view made before the write: numpy's row sees it
    alias = y
    np.putmask(y, x > 0.5, v)
    return np.sum(row * x[0]) + np.sum(np.sin(alias) * x)


def f_write_into_view(x, v):
    y = np.cos(x)
    cols = y[:, 1:]  # written through: y sees it
    np.place(cols, x[:, 1:] > 0.5, v * v)
    np.put_along_axis(cols, np.array([[0], [1]]), v[:1], axis=1)
    return np.sum(y * x) + np.sum(cols ** 2)


def f_write_into_view_expression(x, v):
    y = x * 1.0
    np.putmask(y[0], x[0] > 0.5, v)  # numpy writes through the view y[0]
    y[1:].put([0, 2], np.sin(v[:2]))
    np.copyto(y.T, np.sin(y.T) * v[1])
    return np.sum(y * y)


def f_writes_in_a_loop(x, v):
    y = x * 1.0
    for i in range(3):
        np.putmask(y, y > 0.5 + 0.1 * i, np.sin(y[0, :2]) * v[i])
        np.put_along_axis(y, np.array([[i % 3], [0]]), y[:, 2:] * v[i], axis=1)
        np.add.at(y[1], [0, 0, 2], v[:1] * y[0, 1])  # (ufunc.at through a view, too)
    return np.sum(y * y)


def f_write_into_a_copy(x, v):
    y = x * 1.0
    np.place(y[[0]], x[[0]] > 0.5, v)  # a fancy index is a copy: the write is lost
    return np.sum(np.sin(y) * v[0])


def f_transposed_view(x, v):
    y = x + 1.0
    t = y.T
    t.put([0, 1], np.sin(v))  # flat positions of the transpose: y[0, 0] and y[1, 0]
    return np.sum(y * y * x)


def test_views_and_aliases():
    x, v = RNG.uniform(0.2, 1.0, (2, 3)), RNG.uniform(0.2, 1.0, 2)
    for fn in (f_view_sees_write, f_write_into_view, f_transposed_view,
               f_write_into_view_expression, f_write_into_a_copy):
        assert np.isclose(srcad.value_and_grad(fn)(MASK_X, v)[0], fn(MASK_X, v), rtol=0,
                          atol=1e-15), fn.__name__
        _check(fn, (MASK_X, v))
    _check(f_transposed_view, (x, v))


def test_writes_in_a_loop_fused_and_not():
    v = RNG.uniform(0.2, 1.0, 3)
    _check(f_writes_in_a_loop, (MASK_X, v), second=False)
    a = srcad.value_and_grad(f_writes_in_a_loop, wrt=(0, 1))(MASK_X, v)
    b = srcad.value_and_grad(f_writes_in_a_loop, wrt=(0, 1), fuse=True)(MASK_X, v)
    assert a[0] == b[0] == f_writes_in_a_loop(MASK_X, v)
    assert all(np.array_equal(p, q) for p, q in zip(a[1], b[1]))


# --- float32 -----------------------------------------------------------------------------------
def test_float32():
    x = MASK_X.astype(np.float32)
    v = RNG.uniform(0.2, 1.0, 3).astype(np.float32)
    for fn, args in ((f_place, (x, v)), (f_putmask, (x, v)), (f_put_method, (x, v[:2])),
                     (f_put_along_axis, (x, RNG.uniform(0.2, 1, (2, 2)).astype(np.float32)))):
        g = srcad.grad(fn, wrt=(0, 1))(*args)
        assert all(a.dtype == np.float32 for a in g), fn.__name__
        _check(fn, args, tol=2e-3, second=False)


def f_float32_values_into_float64(x, v):
    y = x.astype(np.float64) * 2.0
    np.putmask(y, x > 0.5, v)  # float32 values into a float64 array: cast, as numpy does
    np.place(y, x < 0.25, v[1:] * np.float32(3.0))
    return np.sum(y * y)


def f_float64_values_into_float32(x, v):
    y = x * np.float32(2.0)
    np.putmask(y, x > 0.5, v.astype(np.float64))  # numpy refuses the unsafe cast
    return np.sum(y * y)


def test_values_cast_to_the_arrays_dtype():
    x = MASK_X.astype(np.float32)
    v = RNG.uniform(0.2, 1.0, 3).astype(np.float32)
    val, g = srcad.value_and_grad(f_float32_values_into_float64, wrt=(0, 1))(x, v)
    assert val == f_float32_values_into_float64(x, v)
    assert g[0].dtype == np.float32 and g[1].dtype == np.float32
    _check(f_float32_values_into_float64, (x, v), tol=2e-3, second=False)
    with pytest.raises(TypeError, match="safe"):
        f_float64_values_into_float32(x, v)
    with pytest.raises(srcad.SrcadError, match="according to the rule 'safe'"):
        srcad.grad(f_float64_values_into_float32)(x, v)
    with pytest.raises(TypeError, match="according to the rule 'safe'"):  # (numpy's own)
        srcad.grad(f_float64_values_into_float32, mode="tape")(x, v)


# --- refusals that remain ----------------------------------------------------------------------
GLOBAL_ARRAY = np.zeros((2, 3))


def f_place_into_global(x, v):
    np.place(GLOBAL_ARRAY, x > 0.5, v)  # not the function's own array: numpy's call
    return np.sum(GLOBAL_ARRAY * x)


def f_place_star_arguments(x, v):
    y = x * 1.0
    args = (y, x > 0.5, v)
    np.place(*args)  # star arguments of a local tuple: spliced (frontend/pyforms.py)
    return np.sum(y)


def f_copyto_reshaped(x, v):
    y = x * 1.0
    np.copyto(y.reshape(6), np.tile(v, 2))  # a view numpy writes through: not followed
    return np.sum(y)


def f_put_resize(x, v):
    y = x * 1.0
    y.resize((3, 2))
    return np.sum(y)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_star_arguments_of_a_local_tuple_to_a_writer(mode):
    """`args = (y, mask, v); np.place(*args)`: the tuple's items spliced in, then np.place's
    copy-on-write rule (it was refused: numpy's call with star arguments)."""
    x, v = MASK_X.copy(), RNG.uniform(0.2, 1.0, 3)
    g = srcad.grad(f_place_star_arguments, wrt=(0, 1), mode=mode)(x.copy(), v.copy())
    want = numerical_grad(f_place_star_arguments, (x.copy(), v.copy()), wrt=(0, 1))
    for a, b in zip(g, want):
        np.testing.assert_allclose(a, b, atol=1e-8)


@pytest.mark.parametrize("fn, line", [
    (f_place_into_global, "np.place(GLOBAL_ARRAY, x > 0.5, v)"),
    (f_copyto_reshaped, "np.copyto(y.reshape(6), np.tile(v, 2))"),
    (f_put_resize, "y.resize((3, 2))"),
])
def test_refusals_name_the_users_line(fn, line):
    x, v = MASK_X.copy(), RNG.uniform(0.2, 1.0, 3)
    with pytest.raises(srcad.SrcadError) as err:
        srcad.grad(fn, wrt=(0, 1))(x, v)
    assert "test_writers2.py" in str(err.value) and line in str(err.value)


# --- np.poly1d: methods that return a new poly1d, arithmetic ---------------------------------
def f_poly_deriv(c, x):
    p = np.poly1d(c)
    q = p.deriv()
    return np.sum(q(x) * p(x)) + np.sum(p.deriv(2).coeffs)


def f_poly_integ(c, x):
    p = np.poly1d(c)
    q = p.integ(2, k=0.5)
    return np.sum(np.sin(q(x))) + q.order * q.c[1] + np.sum(p.integ()(x))


def f_poly_arithmetic(c, x):
    p = np.poly1d(c)
    q = np.poly1d(x[:2])
    r = (p * q - 2.0 * p + q * 3.0) ** 2 - -p
    s = (1.5 - r) / 4.0 + p
    return np.sum(s(x) ** 2) + s.o


def f_poly_with_arrays(c, x):
    p = np.poly1d(c)
    p += np.poly1d(x[1:])  # `p = p + ...`: no __iadd__, as Python falls back to
    q = p * x[:2] + x[:1]  # an array is a polynomial's coefficients, as numpy reads it
    xx = np.stack([x, x * x])  # evaluated at a 2-d array
    return np.sum(q(xx) * p.coeffs[-1])


def f_poly_operators(c, x):
    p = np.poly1d(c)
    s = (1.5 - p) / 2.0 + (-p) * p - p * 0.5
    return np.sum(s(x) * x)


def f_poly_power(c, x):
    return np.sum((np.poly1d(c) ** 3)(x))


POLY_FNS = [f_poly_deriv, f_poly_integ, f_poly_operators, f_poly_with_arrays,
            pytest.param(f_poly_arithmetic, marks=pytest.mark.slow)]


@pytest.mark.parametrize("fn", POLY_FNS, ids=lambda f: getattr(f, "__name__", None))
def test_poly1d_methods(fn):
    c, x = RNG.uniform(-1.0, 1.0, 3), RNG.uniform(-1.0, 1.0, 3)
    assert srcad.value_and_grad(fn, wrt=(0, 1))(c, x)[0] == pytest.approx(fn(c, x), rel=1e-13)
    _check(fn, (c, x), tol=1e-5)


def test_poly1d_power():
    # (first order here; f_poly_arithmetic's p ** 2 goes through second order, -m slow)
    c, x = RNG.uniform(-1.0, 1.0, 3), RNG.uniform(-1.0, 1.0, 3)
    assert srcad.value_and_grad(f_poly_power, wrt=(0, 1))(c, x)[0] == \
        pytest.approx(f_poly_power(c, x), rel=1e-13)
    for mode in ("source", "tape"):
        check_grads(f_poly_power, (c, x), wrt=(0, 1), mode=mode)
    check_jvp(f_poly_power, (c, x), tol=1e-5)


def test_poly1d_deriv_against_torch():
    c, x = RNG.uniform(-1.0, 1.0, 4), RNG.uniform(-1.0, 1.0, 3)

    def horner(coeffs, t):
        out = torch.zeros_like(t)
        for k in range(coeffs.shape[0]):
            out = out * t + coeffs[k]
        return out

    def t_fn(c, x):  # p' = c[:-1] * (n, ..., 1), p'' likewise
        n = c.shape[0] - 1
        d1 = c[:-1] * torch.arange(n, 0, -1, dtype=c.dtype)
        d2 = d1[:-1] * torch.arange(n - 1, 0, -1, dtype=c.dtype)
        return (horner(d1, x) * horner(c, x)).sum() + d2.sum()

    _assert_grads(f_poly_deriv, (c, x), _torch_grads(t_fn, (c, x)))


def test_poly1d_float32():
    c = RNG.uniform(-1.0, 1.0, 3).astype(np.float32)
    x = RNG.uniform(-1.0, 1.0, 3).astype(np.float32)
    g = srcad.grad(f_poly_deriv, wrt=(0, 1))(c, x)
    assert g[0].dtype == np.float32 and g[1].dtype == np.float32
    check_grads(f_poly_deriv, (c, x), wrt=(0, 1), tol=2e-3)


def f_poly_divided_by_poly(c, x):
    p, q = np.poly1d(c), np.poly1d(x[:2])
    return np.sum((p / q)(x))


def f_poly_composed(c, x):
    p, q = np.poly1d(c), np.poly1d(x[:2])
    return np.sum(p(q)(x))


def f_poly_integ_constant(c, x):
    q = np.poly1d(c).integ(1, k=x[0])  # np.polyint has no rule for its k
    return np.sum(q(x))


def f_poly_roots(c, x):
    return np.sum(np.poly1d(c).r * x[0])


@pytest.mark.parametrize("fn, line", [
    (f_poly_divided_by_poly, "return np.sum((p / q)(x))"),
    (f_poly_composed, "p, q = np.poly1d(c), np.poly1d(x[:2])"),  # (not followed: numpy's call)
    (f_poly_integ_constant, "q = np.poly1d(c).integ(1, k=x[0])"),
    (f_poly_roots, "return np.sum(np.poly1d(c).r * x[0])"),
], ids=lambda f: getattr(f, "__name__", ""))
def test_poly1d_refusals(fn, line):
    c, x = RNG.uniform(-1.0, 1.0, 3), RNG.uniform(-1.0, 1.0, 3)
    with pytest.raises(srcad.SrcadError) as err:
        srcad.grad(fn, wrt=(0, 1))(c, x)
    assert "test_writers2.py" in str(err.value) and line in str(err.value), str(err.value)


# --- operators on any built object (the mechanism poly1d's arithmetic uses) --------------------
class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __add__(self, other):
        return Pair(self.a + other.a, self.b + other.b)

    def __mul__(self, k):
        return Pair(self.a * k, self.b * k)

    def __rmul__(self, k):
        return Pair(k * self.a, k * self.b)

    def __neg__(self):
        return Pair(-self.a, -self.b)

    def swapped(self):
        return Pair(self.b, self.a)

    def norm(self):
        return np.sum(self.a * self.a) + np.sum(np.sin(self.b))


class Lazy(Pair):
    def __add__(self, other):
        if not isinstance(other, Pair):
            return NotImplemented
        return Lazy(self.a + other.a, self.b)


def f_pair_operators(x, y):
    p = Pair(x, y)
    q = (p + p.swapped()) * 2.0 + -(0.5 * p)
    q += p
    return q.norm()


def f_pair_not_implemented(x, y):
    return (Lazy(x, y) + Pair(y, x)).norm()


def test_operators_on_a_user_class():
    x, y = RNG.uniform(-1.0, 1.0, 3), RNG.uniform(-1.0, 1.0, 3)
    assert srcad.value_and_grad(f_pair_operators, wrt=(0, 1))(x, y)[0] == \
        pytest.approx(f_pair_operators(x, y), rel=1e-14)
    _check(f_pair_operators, (x, y))
    with pytest.raises(srcad.SrcadError) as err:  # (may return NotImplemented: not followed)
        srcad.grad(f_pair_not_implemented)(x, y)
    assert "test_writers2.py" in str(err.value)


# --- np.vectorize with several outputs -----------------------------------------------------------
def two_outputs(a, b):
    if a > b:  # (f may branch on its element)
        return a * b, np.sin(a)
    return a + b, a * a


vec_two = np.vectorize(two_outputs)


def row_stats(r):
    return np.sum(r * r), r / np.sum(r)


def f_vectorize_lambda(x):
    u, w = np.vectorize(lambda a: (a * 2.0, np.exp(a) * a))(x)
    return np.sum(u * w)


def f_vectorize_object(x, y):
    u, w = vec_two(x, y[:1])  # broadcast (2, 3) with (1, 3)
    return np.sum(np.cos(u) * w)


def f_vectorize_local_otypes(x, y):
    vf = np.vectorize(two_outputs, otypes="dd")
    res = vf(x, 0.5)
    return np.sum(res[0] * res[1]) + np.sum(vf(y, x)[1])


def f_vectorize_signature(x, y):
    s, n = np.vectorize(row_stats, signature="(n)->(),(n)")(x * y)
    return np.sum(np.sin(s)) + np.sum(n * x)


def f_vectorize_signature_excluded(x, y):
    f = np.vectorize(lambda r, k: (np.sum(r) * k, r * k), signature="(n)->(),(n)",
                     excluded={1})
    s, r = f(x, 3.0)
    return np.sum(s * s) + np.sum(np.tanh(r) * y)


VEC_FNS = [f_vectorize_object, f_vectorize_local_otypes, f_vectorize_signature,
           f_vectorize_signature_excluded]


def test_vectorize_lambda_with_two_outputs():
    x = RNG.uniform(0.2, 1.0, (2, 3))
    val = srcad.value_and_grad(f_vectorize_lambda)(x)[0]
    assert val == f_vectorize_lambda(x)
    _check(f_vectorize_lambda, (x,))


@pytest.mark.parametrize("fn", VEC_FNS, ids=lambda f: f.__name__)
def test_vectorize_several_outputs(fn):
    x, y = RNG.uniform(0.2, 1.0, (2, 3)), RNG.uniform(0.2, 1.0, (2, 3))
    assert srcad.value_and_grad(fn, wrt=(0, 1))(x, y)[0] == fn(x, y)
    _check(fn, (x, y))


def test_vectorize_signature_against_torch():
    x, y = RNG.uniform(0.2, 1.0, (2, 3)), RNG.uniform(0.2, 1.0, (2, 3))

    def t_fn(x, y):
        z = x * y
        s = (z * z).sum(-1)
        n = z / z.sum(-1, keepdim=True)
        return torch.sin(s).sum() + (n * x).sum()

    _assert_grads(f_vectorize_signature, (x, y), _torch_grads(t_fn, (x, y)))


def test_vectorize_float32():
    x = RNG.uniform(0.2, 1.0, (2, 3)).astype(np.float32)
    y = RNG.uniform(0.2, 1.0, (2, 3)).astype(np.float32)
    g = srcad.grad(f_vectorize_signature, wrt=(0, 1))(x, y)
    assert g[0].dtype == np.float32 and g[1].dtype == np.float32
    check_grads(f_vectorize_signature, (x, y), wrt=(0, 1), tol=2e-3)


def f_vectorize_complex_otypes(x):
    u, w = np.vectorize(lambda a: (a, a * 2.0), otypes="dD")(x)  # a complex output
    return np.sum(u * w.real)


def test_vectorize_refusal_names_the_users_line():
    with pytest.raises(srcad.SrcadError) as err:
        srcad.grad(f_vectorize_complex_otypes)(RNG.uniform(0.2, 1.0, 3))
    assert "test_writers2.py" in str(err.value) and "otypes=\"dD\"" in str(err.value)
