"""Programs for tests/test_autograd_classes.py: small functions, one per case, in a module of
their own so that srcad can read their source. Each is our own program for one of the case
classes of HIPS autograd's test suite (what its tests check, not their code)."""

from __future__ import annotations

import operator

import numpy as np

import srcad

K_MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, True]])
CONST_23 = np.array([[0.3, -1.2, 0.7], [2.0, 0.1, -0.4]])
HQ = np.array([[1.0, 0.5, -0.3], [0.2, 2.0, 0.1], [-0.7, 0.4, 1.5]])
VR = np.array([0.4, -1.1, 0.9, 0.3])


# -- scalar-valued wrappers that give any array program a second derivative --------------------

def sumsin1(f):
    def s(x):
        return np.sum(np.sin(f(x)))
    return s


def sumsin2(f):
    def s(x, y):
        return np.sum(np.sin(f(x, y)))
    return s


def parts_sumsin1(f):
    def s(x):
        parts = f(x)
        total = 0.0
        for i in range(len(parts)):
            total = total + np.sum(np.sin(parts[i])) * (i + 1.0)
        return total
    return s


def parts_sumsin2(f):
    def s(x, y):
        parts = f(x, y)
        total = 0.0
        for i in range(len(parts)):
            total = total + np.sum(np.sin(parts[i])) * (i + 1.0)
        return total
    return s


# -- test_numpy: products --------------------------------------------------------------------

def dot(x, y):
    return np.dot(x, y)


def outer(x, y):
    return np.outer(x, y)


def inner(x, y):
    return np.inner(x, y)


def kron(x, y):
    return np.kron(x, y)


def matmul(x, y):
    return x @ y


def tensordot_axes(axes):
    def f(x, y):
        return np.tensordot(x, y, axes=axes)
    return f


def tensordot_two_positional(x):
    a = x * np.ones((3, 2))
    return np.sum(np.tensordot(a, a * 2.0, 2))


def einsum_of(spec):
    def f(x, y):
        return np.einsum(spec, x, y)
    return f


def einsum_one(spec):
    def f(x):
        return np.einsum(spec, x)
    return f


def einsum_three(x, y):
    return np.einsum("ijk,lji,lli->lki", x, y, y * 0.5)


def dot_slices(x):
    return np.dot(x[:2], x[2:])


# -- test_numpy: reductions ---------------------------------------------------------------------

def reduction(name, axis=None, keepdims=False, ddof=None):
    fn = getattr(np, name)
    if ddof is not None:
        def f(x):
            return fn(x, axis=axis, keepdims=keepdims, ddof=ddof)
        return f

    def g(x):
        return fn(x, axis=axis, keepdims=keepdims)
    return g


def plain_sum_of_boxes(x, y):
    return sum([x, y])


def mean_of_list(x):
    return np.mean([x, x + 2.0])


def std_of_tuple(x):
    return np.std((x, x + 2.0))


def var_of_list(x):
    return np.var([x * 2.0, x + 1.0, 0.5])


def norm_of_list(x):
    return np.linalg.norm([x, x + 2.0])


def max_tie_pair(x):
    return np.max(np.array([x, x]))


def max_tie_rows(x):
    return np.max(np.array([[x, x], [x, 0.5]]), axis=1)


def min_three_way(x):
    return np.min(np.array([[x, x, x], [x, 0.5, 0.5], [0.5, 0.5, 0.5], [x, x, 0.5]]), axis=0)


def maximum_self(x):
    return np.maximum(x, x)


def maximum_tie_grid(x):
    return np.maximum(np.array([x, x, 0.5]), np.array([[x, 0.5, x], [x, x, 0.5]]))


# -- test_numpy: indexing, shapes ---------------------------------------------------------------

def index_ints(x):
    return x[2, 0, 3]


def index_slice(x):
    return x[::-1, 1:3, :]


def index_list(x):
    return x[[0, 2, 1], :, :]


def index_mixed(x):
    return x[1, 1:, [0, 2]]


def index_fanout(x):
    a = x[::-1, 1:3, :]
    b = x[::-1, 2:4, :]
    return a * b


def index_twice(x):
    a = x[1:6]
    return a[2:4]


def index_repeat(x):
    return np.sum(x[[1, 1, 0, 1]] ** 2)


def reshape_method(x):
    return x.reshape((6, 4))


def reshape_call(x):
    return np.reshape(x, (4, 6))


def reshape_nolist(x):
    return x.reshape(2, 12)


def ravel_method(x):
    return x.ravel()


def ravel_call(x):
    return np.ravel(x)


def flatten_method(x):
    return x.flatten()


def transpose_attr(x):
    return x.T


def transpose_axes(axes):
    def f(x):
        return np.transpose(x, axes)
    return f


def moveaxis_of(src, dst):
    def f(x):
        return np.moveaxis(x, src, dst)
    return f


def swapaxes_of(a, b):
    def f(x):
        return np.swapaxes(x, a, b)
    return f


def rollaxis_of(axis, start):
    def f(x):
        return np.rollaxis(x, axis, start)
    return f


def squeeze_call(x):
    return np.squeeze(x)


def squeeze_method(x):
    return x.squeeze()


def expand_dims(x):
    return np.expand_dims(x, 1)


def flipud(x):
    return np.flipud(x)


def fliplr(x):
    return np.fliplr(x)


def rot90(x):
    return np.rot90(x)


def roll_axis(x):
    return np.roll(x, 3, axis=1)


def roll_flat(x):
    return np.roll(x, -2)


def len_checked(x):
    assert len(x) == 3
    return x * 2.0


def atleast(n):
    fn = (np.atleast_1d, np.atleast_2d, np.atleast_3d)[n - 1]

    def f(x):
        return fn(x)
    return f


# -- test_numpy: constructing ---------------------------------------------------------------

def array_1d(x):
    return np.array([x, x * 2.0, x - 1.5])


def array_2d(x):
    return np.array([[x, x * 1.5, x + 2.0], [x ** 2, x, x / 3.0]])


def array_fanout(x):
    a = np.array([x, x * 3.0, x + 0.5])
    return a + a


def array_scalar(x):
    return np.array(x)


def array_of_arrays(x):
    return np.array([x, 3.0 * x])


def array_of_arrays_2(x):
    return np.array([[x * 2.0, x - 1.0], [x, x * x]])


def r_one(x):
    return np.r_[x]


def r_two(x):
    return np.r_[x, x]


def r_const(x):
    return np.r_[x, CONST_23]


def r_mixed(x):
    return np.r_[x, CONST_23, x]


def r_range(x):
    return np.r_[x, VR, 1:4]


def c_mixed(x):
    return np.c_[x, CONST_23, x]


def r_unrelated(x):
    return np.r_[CONST_23]


def unrelated(x):
    return CONST_23


def append_flat(a, b):
    return np.append(a, b)


def append_axis(a, b):
    return np.append(a, b, axis=0)


def concat_first(x):
    return np.concatenate((CONST_23, x))


def concat_axis1(x):
    return np.concatenate((x, x * 2.0, x), axis=1)


def concat_positional(x):
    return np.concatenate((x, x), 1)


def concat_list_args(x, y):
    return np.concatenate([x, y], axis=0)


def stack_axis(axis):
    def f(x, y):
        return np.stack((x, y), axis=axis)
    return f


def vstack(x, y):
    return np.vstack((x, y))


def hstack(x, y):
    return np.hstack((x, y))


def column_stack(x, y):
    return np.column_stack((x, y))


def split_of(name, spec, axis):
    fn = getattr(np, name)

    def f(x):
        parts = fn(x, spec, axis=axis)
        return np.concatenate([np.sin(p) * (i + 1.0) for i, p in enumerate(parts)], axis=axis)
    return f


def vsplit_list(x):
    return np.vsplit(x, [1, 3])


def hsplit_sum(x):
    a, b = np.hsplit(x, 2)
    return np.sum(a * b)


def dsplit_sum(x):
    a, b = np.dsplit(x, 2)
    return np.sum(np.cos(a) * b)


def linspace_of(num):
    def f(x, y):
        return np.linspace(x, y, num)
    return f


def astype_back(x):
    return np.sum(np.sin(x.astype("float64")))


def cast_to_index(w):
    idx = np.int64(w[:, -1])
    core = w[:, :-1]
    return np.sum(core[idx] ** 2)


def nan_to_num(x):
    return np.sum(np.sin(np.nan_to_num(x + np.array([0.0, np.nan, np.inf, -np.inf]))))


# -- test_numpy: structure ----------------------------------------------------------------------

def trace_of(offset):
    def f(x):
        return np.trace(x, offset=offset)
    return f


def diag_of(k):
    def f(x):
        return np.diag(x, k=k)
    return f


def diagonal_last(x):
    return np.diagonal(x, axis1=-1, axis2=-2)


def tri_of(name, k):
    fn = getattr(np, name)

    def f(x):
        return fn(x, k=k)
    return f


def clip_kw(x):
    return np.clip(x, a_min=-0.3, a_max=0.8)


def where_mask(x, y):
    return np.where(K_MASK, x, y)


def repeat_of(reps, axis):
    def f(x):
        return np.repeat(x, reps, axis=axis)
    return f


def tile_of(reps):
    def f(x):
        return np.tile(x, reps)
    return f


def diff_of(n, axis):
    def f(x):
        return np.diff(x, n=n, axis=axis)
    return f


def gradient_of(axis):
    def f(x):
        return np.gradient(x, axis=axis)
    return f


def gradient_plain(x):
    return np.gradient(x)


def gradient_stack(x):
    gs = np.gradient(x)
    return np.stack(gs)


def cumsum_of(axis):
    def f(x):
        return np.cumsum(x, axis=axis)
    return f


def cumprod_of(axis):
    def f(x):
        return np.cumprod(x, axis=axis)
    return f


def sort(x):
    return np.sort(x)


def partition_of(k):
    def f(x):
        return np.partition(x, k)
    return f


def cross_of(axisa=-1, axisb=-1, axisc=-1, axis=None):
    def f(x, y):
        return np.cross(x, y, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)
    return f


def select_of(default):
    def f(x):
        return np.select([K_MASK, ~K_MASK & (x > 0)], [x * 2.0, np.sin(x)], default=default)
    return f


def pad_of(width):
    def f(x):
        return np.pad(x, width, "constant")
    return f


def fmax(x, y):
    return np.fmax(x, y)


def fmin(x, y):
    return np.fmin(x, y)


# -- test_linalg ---------------------------------------------------------------------------

def sym(a):
    low = np.tril(a)
    return (low + np.swapaxes(low, -1, -2)) / 2.0


def inv(x):
    return np.linalg.inv(x)


def pinv(x):
    return np.linalg.pinv(x)


def pinv_low_rank(x):
    return np.linalg.pinv(x.T @ x)


def det(x):
    return np.linalg.det(x)


def slogdet_logdet(x):
    _sign, logdet = np.linalg.slogdet(x)
    return logdet


def slogdet_batched(x):
    return np.sum(np.linalg.slogdet(x)[1])


def solve_a(a, b):
    return np.linalg.solve(a, b)


def solve_batched_vec(a, b):
    return np.linalg.solve(a, b[..., None])[..., 0]


def norm_of(ord=None, axis=None):
    def f(x):
        return np.linalg.norm(x, ord=ord, axis=axis)
    return f


def eigh_both(x):
    w, v = np.linalg.eigh(x)
    return w, v


def eigh_upper(x):
    w, v = np.linalg.eigh(x, "U")
    return w, v


def eigh_sym_sum(x):
    w, v = np.linalg.eigh(sym(x))
    return np.sum(w * np.arange(1.0, w.shape[-1] + 1.0)) + np.sum(np.abs(v[..., 0]))


def cholesky_sym(x):
    return np.linalg.cholesky(sym(x))


def cholesky_reparam(x):
    z = np.linalg.cholesky(sym(x)) @ VR[:3]
    return np.linalg.norm(z)


def svd_all(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return u, s, vt


def svd_values(x):
    return np.linalg.svd(x, full_matrices=False, compute_uv=False)


# -- test_scalar_ops / test_binary_ops / test_core ---------------------------------------------

def unary_times3(name):
    fn = getattr(np, name)

    def f(x):
        return 3.0 * fn(x)
    return f


def power_arg0(y):
    def f(x):
        return np.power(x, y)
    return f


def power_of_zero_base(y):
    return np.power(0.0, y)


def power_arg1(y):
    return np.power(1.7, y)


def binary_np(name):
    fn = getattr(np, name)

    def f(x, y):
        return fn(x, y)
    return f


def op_add(x, y):
    return x + y


def op_sub(x, y):
    return x - y


def op_mul(x, y):
    return x * y


def op_div(x, y):
    return x / y


def op_mod(x, y):
    return x % y


def op_pow(x, y):
    return x ** y


def operator_fn(name):
    fn = getattr(operator, name)

    def f(x, y):
        return fn(x, y)
    return f


def cmp_sum(kind):
    def f(x, y):
        if kind == "lt":
            c = x < y
        elif kind == "le":
            c = x <= y
        elif kind == "gt":
            c = x > y
        elif kind == "ge":
            c = x >= y
        elif kind == "eq":
            c = x == y
        else:
            c = x != y
        return np.sum(c) + 0.0
    return f


def cmp_raw(kind):
    def f(x, y):
        if kind == "lt":
            return x < y
        if kind == "le":
            return x <= y
        if kind == "gt":
            return x > y
        if kind == "ge":
            return x >= y
        if kind == "eq":
            return x == y
        return x != y
    return f


# -- test_logic -------------------------------------------------------------------------------

def assert_inside(x):
    assert np.allclose(x, (x * 3.0) / 3.0)
    return np.sum(x ** 2)


def allclose_out(x):
    return np.allclose(x, (x * 3.0) / 3.0)


def iscomplex_branch(x):
    return np.real(x ** 2 if np.iscomplex(x) else np.sum(x) * 3.0)


# -- test_direct -------------------------------------------------------------------------------

def direct(x):
    return (x + np.sin(x ** 2)) * x


# -- test_fft (real-valued part) ---------------------------------------------------------------

def fftshift(x):
    return np.fft.fftshift(x)


def ifftshift(x):
    return np.fft.ifftshift(x)


def fftshift_axes(x):
    return np.fft.fftshift(x, axes=1)


def ifftshift_axes(x):
    return np.fft.ifftshift(x, axes=0)


def fftfreq_scaled(x):
    return x * np.fft.fftfreq(x.shape[0], d=0.5)


def rfftfreq_scaled(x):
    return np.sum(x[:4] * np.fft.rfftfreq(6))


# -- containers (test_list, test_tuple, test_dict) ---------------------------------------------

def seq_getter(s):
    return np.sum(s[0]) + np.sum(s[1]) + np.sum(s[1])


def seq_sincos(s):
    return np.sum(np.sin(s[0])) + np.sum(np.cos(s[1]))


def seq_grad_inside(s):
    g = srcad.grad(seq_sincos)(s)
    return np.sum(g[0]) + np.sum(np.sin(g[0])) + np.sum(np.sin(g[1]))


def dict_getter(d):
    return np.sum(d["a"]) + np.sum(d["b"]) + np.sum(d["b"])


def dict_sincos(d):
    return np.sum(np.sin(d["a"])) + np.sum(np.cos(d["b"]))


def dict_grad_inside(d):
    g = srcad.grad(dict_sincos)(d)
    return np.sum(g["a"]) + np.sum(np.sin(g["a"])) + np.sum(np.sin(g["b"]))


def dict_iter_sorted(d):
    a = 0.0
    b = 0.0
    for i, k in enumerate(sorted(d)):
        a = a + np.sum(np.sin(d[k])) * (i + 1.0)
        b = b + np.sum(np.cos(d[k]))
    return a + b


def dict_items_values_keys(d):
    a = 0.0
    for i, (k, v) in enumerate(sorted(d.items(), key=operator.itemgetter(0))):
        a = a + np.sum(np.sin(v)) * (i + 2.0)
    for v in d.values():
        a = a + np.sum(v ** 2)
    for k in sorted(d.keys()):
        a = a + np.sum(np.cos(d[k]))
    return a


def dict_get(d, x):
    return d.get("k", x) ** 2 * 1.5


def dict_made(x):
    return dict([("p", x * 2.0)], q=np.sin(x))


def dict_literal(x):
    return {"a": x, "b": x * x}


def dict_isinstance(d):
    assert isinstance(d, dict)
    return d["x"] * 3.0


def dict_sum_values(d):
    s = 1.5
    for v in d.values():
        s = s + np.sum(v)
    return s


def list_slice_index(x):
    s = slice(None, -1, None)
    y = x[s]
    return y[1] * 2.0


def list_slice_plain(x):
    y = x[1:3]
    return y[0] * y[1]


def list_nested(x):
    return x[1:][0] * 2.0


def list_made(x):
    return list((x, x * 2.0))  # noqa: C410 (the constructor is the case)


def list_isinstance(x):
    assert isinstance(x, list)
    return x[0] * x[2]


def tuple_isinstance(x):
    assert isinstance(x, tuple)
    return x[0] + x[1] ** 2


def inner_product_pair(y):
    return y[0] * y[1]


def tuple_nested_higher(x):
    g = srcad.grad(inner_product_pair)((x, x))
    return np.sum(np.sin(np.array(g)))


# -- test_builtins --------------------------------------------------------------------------

def isinstance_checker(x, kind, truth):
    assert isinstance(x, kind) == truth
    return np.sum(x) * 2.0


# -- test_wrappers ------------------------------------------------------------------------

def many_args(a, b, c, d, e, f=1.1, g=9.0):
    return a + np.sin(b) + np.cosh(c) + np.cos(d) + np.tan(e) + f + g


def packed_db(db):
    d, b = db
    return many_args(0.5, b, 0.2, d, 0.7, f=0.6, g=-0.1)


def pow_scalar(x):
    return 3.0 * x ** 3.2


def sum_sin_sq(x):
    return np.sum(np.sin(x) ** 2)


def value_of_value_and_grad(x):
    v, _g = srcad.value_and_grad(sum_sin_sq)(x)
    return v


def quadratic(x):
    return np.dot(np.dot(x, HQ), x)


def elementwise(a):
    return a + np.sin(a) + np.cosh(a)


def elementwise_two(a, b):
    return a + np.sin(a) + np.cosh(b)


def sum_sin(a):
    return np.sum(np.sin(a))


def roll_sin(a):
    return np.roll(np.sin(a), 1)


def roll_sin_axis(a):
    return np.roll(np.sin(a), 1, axis=0)


def tanh_affine(x):
    return np.tanh(np.dot(CONST_23, x))


def affine(x):
    return np.dot(CONST_23, x)


def half_sq(y):
    return 0.5 * np.dot(y, y)


def quartic(y):
    return np.sum(2.0 * y ** 2 + y ** 4)


def partial_target(x, y):
    return x * 2.0 + y


def two_args_first(x, y):
    return x * 2.0 + y * 0.0


def real_sum_sq(x):
    return np.real(np.sum(x ** 2))


def block(x, w):
    return np.tanh(x @ w)


def checkpointed(x, w):
    h = srcad.checkpoint(block)(x, w)
    h = srcad.checkpoint(block)(h, w)
    return np.sum(h ** 2)


def unchecked(x, w):
    h = block(x, w)
    h = block(h, w)
    return np.sum(h ** 2)


def multiple_outputs_aux(x):
    return np.sum(CONST_23 @ x), x ** 2


# -- test_graphs ---------------------------------------------------------------------------

def fanout(x):
    return np.sin(np.sin(x) + np.sin(x))


def constant(x):
    return 1.0


def identity(x):
    return x


def sin_dot_v(x):
    return np.sin(np.dot(x, VR))


def vector_product(x, v):
    return np.sin(np.dot(v, srcad.grad(sin_dot_v)(x)))


def enclosing_ref(x):
    def inner_fun(y):
        return x * y
    return x * srcad.grad(inner_fun)(2.0)


def enclosing_ref_2(x):
    def inner_fun(y):
        return y * np.sin(x)
    return x * srcad.grad(inner_fun)(2.0)


def mutating_outgrad(a):
    b = a + 1.0
    c = b + 1.5
    d = a + b
    e = d + c
    return e


def mutating_outgrad_index(a):
    b = a + 1.0
    c = b[0] + 1.5
    d = a + b
    e = d + c
    return e


def fanout_two(x, y):
    return np.sin(np.sin(x) + np.sin(y))


def singleton_keepdims(x):
    return np.sum(np.sin(x), keepdims=True)


def singleton_axis0(x):
    return np.sum(np.sin(x), axis=0)


def singleton_axis1_keepdims(x):
    return np.sum(np.sin(x), axis=1, keepdims=True)


def grad_sum_of_singleton(x):
    return np.sum(srcad.grad(singleton_keepdims)(x))


def grad_sum_of_singleton_axis0(x):
    return np.sum(srcad.grad(singleton_axis0)(x) ** 2)


def assign_into_argument(a, b):
    a[1] = b
    return a


def assign_into_argument_sum(a, b):
    a[1] = b
    return np.sum(a ** 2)


# -- test_jacobian ---------------------------------------------------------------------------

def scalar_to_vector(x):
    return np.array([x, x ** 2, x ** 3])


def cube_sum(x):
    return np.sum(x ** 3)


def prod_sin(x):
    return np.prod(np.sin(x) + np.sin(x))


def exp_tanh(y, x0):
    return np.exp(y) * np.tanh(x0)


def grad_exp_tanh(x):
    return srcad.grad(exp_tanh)(x[1], x[0])


def stacked(x):
    return np.array([cube_sum(x), prod_sin(x), grad_exp_tanh(x)])


def outer_sin(x):
    return np.sin(np.outer(x, x)) + np.cos(np.dot(x, x))


# -- test_misc -------------------------------------------------------------------------------

def flatten_in_containers(x, y):
    xy = np.concatenate([np.ravel(x), np.ravel(y)])
    return np.sum(xy * xy)

