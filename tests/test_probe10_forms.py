"""Classes of failure the sixth wild-repositories probe found (tests/corpus_probe/
wild_repos5.py), one focused test each, against central differences; each failed before its
fix."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(10)


def _check(fn, args, wrt=0, mode="source", tol=1e-6, fuse=False):
    options = {"fuse": True} if fuse else {"mode": mode}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, got = srcad.value_and_grad(fn, wrt=wrt, **options)(*args)
    assert np.array_equal(np.asarray(out), np.asarray(fn(*args)))
    want = numerical_grad(fn, args, wrt=wrt)
    got, want = (got, want) if isinstance(wrt, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        for leaf in (g.values() if isinstance(g, dict) else (g,)):
            assert np.all(np.isfinite(leaf))
        assert rel_error(g, w) < tol


MODES = ["source", "tape", "fuse"]


def _run(fn, args, wrt, how, tol=1e-6):
    _check(fn, args, wrt=wrt, mode="source" if how == "fuse" else how, fuse=how == "fuse",
           tol=tol)


# ---- a user generator whose arguments carry no gradient, consumed by a for loop -----------

def _batches(X, y, size):
    for start in range(0, len(X), size):
        yield X[start:start + size], y[start:start + size]


def _batched_loss(w, b, X, y):
    loss = 0.0
    for xb, yb in _batches(X, y, 3):
        loss = loss + np.sum((xb @ w + b - yb) ** 2)
    return loss / len(X)


@pytest.mark.parametrize("how", MODES)
def test_generator_of_inputs_not_differentiated(how):
    """`for xb, yb in batches(X, y, 3)` with X, y data: the call ran the user's generator as
    written (no gradient flows through it) and the loop took `len()` of a generator: a
    TypeError from generated code (source and fuse)."""
    args = (R.standard_normal(2), np.float64(0.3), R.standard_normal((8, 2)),
            R.standard_normal(8))
    _run(_batched_loss, args, (0, 1), how)


def test_generator_of_inputs_not_differentiated_jvp():
    args = (R.standard_normal(2), np.float64(0.3), R.standard_normal((8, 2)),
            R.standard_normal(8))
    v = R.standard_normal(2)
    _, t = srcad.jvp(lambda w: _batched_loss(w, *args[1:]), (args[0],), (v,))
    want = numerical_grad(_batched_loss, args) @ v
    assert abs(t - want) < 1e-6


# ---- numpy's safe forms: a ufunc with out= and where= ------------------------------------

def _entropy_log_where(x):
    p = x ** 2 / np.sum(x ** 2)
    logp = np.log(p, out=np.zeros_like(p), where=p > 0)
    return -np.sum(p * logp)


def _entropy_nested(x):
    p = x ** 2 / np.sum(x ** 2)
    return -np.sum(p * np.log(p, out=np.zeros_like(p), where=p > 0))


def _ratio_divide_where(a, b, n):
    tot = n * b                                       # (5, 1): zero where n is
    frac = np.divide(a, tot, out=np.zeros_like(a), where=n != 0)     # a: (5, 4)
    return np.sum(frac ** 2) + np.sum(np.divide(1.0, tot, out=np.ones_like(tot),
                                                where=tot != 0))


def _x_with_zeros():
    x = R.standard_normal(6)
    x[[1, 4]] = 0.0
    return x


def _ab():
    n = np.array([[0.0], [2.0], [1.0], [0.0], [3.0]])
    return R.standard_normal((5, 4)), R.random((5, 1)) + 0.5, n


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn", [_entropy_log_where, _entropy_nested])
def test_log_with_out_and_where(fn, how):
    """`np.log(p, out=np.zeros_like(p), where=p > 0)` (entropy with zero probabilities):
    was '`log` does not take the keyword `out`'. The gradient where p = 0 is 0 (not the NaN
    of `np.where(p > 0, np.log(p), 0)`'s 0 * inf)."""
    _run(fn, (_x_with_zeros(),), 0, how, tol=1e-5)   # (x^2 log x^2 near 0: differences)


@pytest.mark.parametrize("how", MODES)
def test_divide_with_out_and_where_broadcast(how):
    """`np.divide(a, tot, out=np.zeros_like(a), where=tot != 0)` with the mask broadcast
    against `a`, and a Python-float numerator: was refused ('`divide` does not take the
    keyword `out`')."""
    _run(_ratio_divide_where, _ab(), (0, 1), how)


def test_where_out_second_order_and_jvp():
    x = _x_with_zeros() + 0.5
    v = R.standard_normal(6)
    _, t = srcad.jvp(_entropy_log_where, (x,), (v,))
    assert abs(t - numerical_grad(_entropy_log_where, (x,)) @ v) < 1e-6
    g = srcad.grad(_entropy_log_where)
    hv = srcad.jvp(g, (x,), (v,))[1]
    fd = (g(x + 1e-5 * v) - g(x - 1e-5 * v)) / 2e-5
    assert rel_error(hv, fd) < 1e-5


# ---- functools.cached_property on a layer -----------------------------------------------

class _WeightNorm:
    def __init__(self, v, g):
        self.v = v
        self.g = g

    @functools.cached_property
    def weight(self):
        return self.g * self.v / np.linalg.norm(self.v, axis=0, keepdims=True)


def _cached(v, g, X):
    layer = _WeightNorm(v, g)
    return np.sum((X @ layer.weight) ** 2)


class _Scaled:
    def __init__(self, v):
        self.v = v

    @functools.cached_property
    def w(self):
        return self.v * 2

    def __call__(self, x):
        return x * self.w


def _cache_kept(v, X):
    c = _Scaled(v)
    a = c.w
    c.v = v * 10                    # (the cached value stays what the first read computed)
    h = c(X)
    return np.sum(a * c.w * h) + np.sum(c.v)


def _cache_in_branch(v, X):
    c = _Scaled(v)
    h = c.w if X[0] > 0 else v
    return np.sum(c.w * h)


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn", [_cached, _cache_kept])
def test_cached_property(fn, how):
    """A `functools.cached_property` on an object built in the function: source mode read
    the class's attribute (the descriptor itself) and reported numpy's error on it as 'the
    error comes from the user's code'. Its first read now runs the getter and stores the
    value on the object, as Python caches it; later reads read that value."""
    args = (R.standard_normal((3, 4)), R.random(4) + 0.5, R.standard_normal((5, 3))) \
        if fn is _cached else (R.standard_normal(3), R.standard_normal(3))
    _run(fn, args, 0, how)


def test_cached_property_first_read_in_a_branch_is_refused():
    with pytest.raises(srcad.SrcadError, match="cached_property") as info:
        srcad.grad(_cache_in_branch)(R.standard_normal(3), np.ones(3))
    assert "test_probe10_forms.py" in str(info.value)


# ---- stores through an array's .flat and .T ----------------------------------------------

def _gp_jitter(log_ell, X, y):
    d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = np.exp(-0.5 * d2 / np.exp(2 * log_ell))
    n = len(K)
    K.flat[::n + 1] += 0.1
    L = np.linalg.cholesky(K)
    a = np.linalg.solve(L, y)
    return 0.5 * a @ a + np.sum(np.log(np.diag(L)))


def _flat_of_transposed(x, w):
    K = np.outer(x, x).T            # (numpy's ravel of this layout copies; .flat writes K)
    K.flat[1:4] = w
    K.flat[[0, 8]] *= 3.0
    K.flat[4] = x[0] ** 3
    return np.sum(np.sin(K) * np.arange(9).reshape(3, 3)) + K.flat[4]


def _flat_in_loop(x):
    y = x * 1.0
    for k in range(y.size):
        y.flat[k] = y.flat[k] * (k + 1.0)
    return np.sum(y * x)


def _distances_through_T(x, w):
    n = len(x)
    D = np.zeros((n, n))
    D[:] = x
    D.T[:] -= x
    D.T[0] = 2 * x
    return np.sum(w * np.exp(-D ** 2))


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn,args,wrt", [
    (_gp_jitter, (np.float64(0.2), R.standard_normal((5, 2)), R.standard_normal(5)), (0, 1)),
    (_flat_of_transposed, (R.standard_normal(3), R.standard_normal(3)), (0, 1)),
    (_flat_in_loop, (R.standard_normal((2, 3)),), 0),
    (_distances_through_T, (R.standard_normal(4), R.random((4, 4))), (0, 1))],
    ids=["K.flat[::n+1]+=", "flat-of-transposed", "flat-in-loop", "D.T[:]-="])
def test_stores_through_flat_and_T(fn, args, wrt, how):
    """`K.flat[::n + 1] += jitter` (GP code) and `D.T[:] -= x` (pairwise differences): were
    refused ('assignment into something other than a local array'). Tape mode: a write
    through `.flat` writes the array whatever numpy's ravel does (was not followed, and of a
    transposed layout would have been lost)."""
    _run(fn, args, wrt, how)


def test_flat_store_jvp():
    x, w = R.standard_normal(3), R.standard_normal(3)
    v = R.standard_normal(3)
    _, t = srcad.jvp(lambda a: _flat_of_transposed(a, w), (x,), (v,))
    want = numerical_grad(_flat_of_transposed, (x, w)) @ v
    assert abs(t - want) < 1e-6 * max(1.0, abs(want))


# ---- scipy.linalg in GP / kernel code ------------------------------------------------------

import scipy.linalg  # noqa: E402  (the user's import, as GP code makes it)


def _gp_cho(theta, X, y):
    d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = np.exp(theta[0]) * np.exp(-0.5 * d2 / np.exp(2 * theta[1])) + 0.1 * np.eye(len(X))
    c, low = scipy.linalg.cho_factor(K, lower=True)
    alpha = scipy.linalg.cho_solve((c, low), y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(c)))


def _gp_cho_upper(A, y):
    K = A @ A.T + np.eye(len(A))
    c, low = scipy.linalg.cho_factor(K)            # (upper; c's lower triangle is K's)
    return y @ scipy.linalg.cho_solve((c, low), y) + np.sum(c ** 2)


def _tri_solves(A, B):
    L = scipy.linalg.cholesky(A @ A.T + np.eye(3), lower=True)
    U = scipy.linalg.cholesky(A @ A.T + 2 * np.eye(3))
    Z = scipy.linalg.solve_triangular(L, B, lower=True)
    W = scipy.linalg.solve_triangular(U, B[:, 0], trans="T", unit_diagonal=True)
    return np.sum(Z ** 2) + np.sum(np.sin(W)) + np.sum(scipy.linalg.solve(L @ U, B[:, 1]))


def _inv_det(A):
    M = A + 3 * np.eye(3)
    return np.sum(scipy.linalg.inv(M) ** 2) + np.log(scipy.linalg.det(M))


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn,args,wrt", [
    (_gp_cho, (np.array([0.1, -0.2]), R.standard_normal((5, 2)), R.standard_normal(5)),
     (0, 1)),
    (_gp_cho_upper, (R.standard_normal((4, 4)), R.standard_normal(4)), (0, 1)),
    (_tri_solves, (R.standard_normal((3, 3)), R.standard_normal((3, 2))), (0, 1)),
    (_inv_det, (R.standard_normal((3, 3)) * 0.5,), 0)],
    ids=["cho_factor/cho_solve", "cho_factor-upper", "cholesky/solve_triangular", "inv/det"])
def test_scipy_linalg(fn, args, wrt, how):
    """scipy.linalg's cholesky, cho_factor, cho_solve, solve_triangular, solve, inv, det:
    were refused ('`scipy.linalg.cho_factor` has no derivative rule')."""
    _run(fn, args, wrt, how, tol=1e-5)


def _chol_tri(A, b):
    L = scipy.linalg.cholesky(A @ A.T + np.eye(3), lower=True)
    return np.sum(scipy.linalg.solve_triangular(L, b, lower=True) ** 2)


def test_scipy_linalg_second_order():
    """cholesky and solve_triangular's rules are numpy and scipy rows: a Hessian-vector
    product works; cho_factor / cho_solve's helpers have no row: refused, never zeros."""
    A, b, V = R.standard_normal((3, 3)), R.standard_normal(3), R.standard_normal((3, 3))
    g = srcad.grad(_chol_tri)
    hv = srcad.jvp(lambda a: g(a, b), (A,), (V,))[1]
    fd = (g(A + 1e-5 * V, b) - g(A - 1e-5 * V, b)) / 2e-5
    assert rel_error(hv, fd) < 1e-5
    theta, X, y = np.array([0.1, -0.2]), R.standard_normal((4, 2)), R.standard_normal(4)
    with pytest.raises(srcad.SrcadError):
        srcad.grad(srcad.grad(_gp_cho))(theta, X, y)


# ---- dicts: d.pop(key, default) of **kwargs, d.copy() then .update() ----------------------

def _pop_kwargs(W, X, **kwargs):
    scale = kwargs.pop("scale", 1.0)
    shift = kwargs.pop("shift")
    kwargs.pop("unused", None)
    h = np.tanh(X @ W * scale + shift)
    return np.sum(h ** 2) + len(kwargs)


def _pop_made_dict(W, X):
    p = {"W": W, "b": np.ones(W.shape[1]), "s": 2.0}
    b = p.pop("b")
    s = p.pop("s", 1.0)
    p.pop("missing", 0.0)
    return np.sum((X @ p["W"] + b) ** 2) * s + len(p)


def _copy_update(params, X):
    p = params.copy()
    p.update(W=np.tanh(params["W"]))
    q = {"a": X, "b": 2 * X}
    r = q.copy()
    r.update({"b": params["b"] ** 2})
    return np.sum((r["a"] @ p["W"] + r["b"]) ** 2) + np.sum(params["W"] * q["b"][0, 0])


@pytest.mark.parametrize("how", MODES)
def test_kwargs_pop_with_default(how):
    """`scale = kwargs.pop("scale", 1.0)`: was '`pop` takes at most 1 positional arguments
    in srcad (stack)' (read as a list's pop)."""
    W, X = R.standard_normal((3, 2)), R.standard_normal((4, 3))
    _run(lambda W, X: _pop_kwargs(W, X, shift=0.5, scale=0.7, other=1), (W, X), 0, how)
    _run(lambda W, X: _pop_kwargs(W, X, shift=W[0, 0]), (W, X), 0, how)
    _run(_pop_made_dict, (W, X), 0, how)


def test_kwargs_pop_missing_key_is_pythons_key_error():
    W, X = R.standard_normal((3, 2)), R.standard_normal((4, 3))
    with pytest.raises(KeyError):
        srcad.grad(lambda W, X: _pop_kwargs(W, X, scale=0.7))(W, X)


@pytest.mark.parametrize("how", MODES)
def test_dict_copy_then_update(how):
    """`p = params.copy(); p.update(W=...)` of a dict argument, `r = q.copy(); r.update({...})`
    of one the function made: were refused ('`.update()` changes a list or dict in place that
    srcad holds as a value here')."""
    params = {"W": R.standard_normal((3, 2)), "b": R.standard_normal(2)}
    _run(_copy_update, (params, R.standard_normal((4, 3))), 0, how)


# ---- np.logaddexp.reduce -------------------------------------------------------------------

def _lse_reduce(W, S):
    z = S @ W
    return np.sum(np.logaddexp.reduce(z, axis=1)) - np.sum(z[:, 0]) \
        + np.sum(np.logaddexp.reduce(z, keepdims=True) ** 2)


@pytest.mark.parametrize("how", MODES)
def test_logaddexp_reduce(how):
    """`np.logaddexp.reduce(S @ W, axis=1)` (log-sum-exp as a ufunc method): was refused
    ('`np.logaddexp.reduce` has no derivative rule')."""
    _run(_lse_reduce, (R.standard_normal((3, 4)), R.standard_normal((5, 3))), 0, how)


# ---- match statements -----------------------------------------------------------------------

def _act(z, kind):
    match kind:
        case "relu":
            return np.maximum(z, 0.0)
        case "gelu" | "gelu_tanh":
            return 0.5 * z * (1 + np.tanh(0.7978845608 * (z + 0.044715 * z ** 3)))
        case None:
            return z
        case _:
            return np.tanh(z)


def _scale_of(cfg, z):
    match cfg["mode"].lower():
        case "double" if np.sum(z) > -100:
            s = 2.0
        case other:
            s = float(len(other))
    return s


def _match_net(W1, W2, X, kinds=("gelu", "relu", None, "other")):
    h = X @ W1
    for k in kinds:
        h = _act(h, k)
    out = h @ W2
    match out.shape:
        case (n, 2):
            pass
    return np.sum(out ** 2) * _scale_of({"mode": "Double"}, out)


def _match_plain(W1, W2, X):
    h = _act(X @ W1, "gelu_tanh")
    total = 0.0
    for k in ("relu", "swish"):
        total = total + np.sum(_act(h @ W2, k) ** 2) * _scale_of({"mode": "abc"}, h)
    return total


@pytest.mark.parametrize("how", MODES)
def test_match_statement(how):
    """`match kind: case "relu": ... case "gelu" | "gelu_tanh": ... case None: ... case _:`
    with guards and a capture: was 'srcad does not support a `match` statement'."""
    args = (R.standard_normal((3, 4)), R.standard_normal((4, 2)), R.standard_normal((5, 3)))
    _run(_match_plain, args, (0, 1), how)


def test_match_with_a_sequence_pattern_is_refused_at_its_line():
    args = (R.standard_normal((3, 4)), R.standard_normal((4, 2)), R.standard_normal((5, 3)))
    with pytest.raises(srcad.SrcadError, match="pattern") as info:
        srcad.grad(_match_net)(*args)
    assert "test_probe10_forms.py" in str(info.value)


# ---- parameters in a types.SimpleNamespace ------------------------------------------------

import types  # noqa: E402
from types import SimpleNamespace  # noqa: E402


def _namespace(W, b, X, y):
    p = SimpleNamespace(W=W, b=b, l2=1e-2)
    cfg = types.SimpleNamespace(depth=2)
    h = X
    for _ in range(cfg.depth):
        h = np.tanh(h @ p.W + p.b)
    return np.mean((h[:, 0] - y) ** 2) + p.l2 * np.sum(p.W ** 2)


def _namespace_store(W, X):
    p = SimpleNamespace(W=W, scale=2.0)
    p.scale = 3.0
    return np.sum((X @ p.W) ** 2) * p.scale


@pytest.mark.parametrize("how", MODES)
def test_simple_namespace_of_parameters(how):
    """`p = SimpleNamespace(W=W, b=b, l2=1e-2)` read by attribute: was '`SimpleNamespace`
    has no derivative rule'. It is read as a namedtuple of its keywords."""
    args = (R.standard_normal((3, 3)), R.standard_normal(3), R.standard_normal((5, 3)),
            R.standard_normal(5))
    _run(_namespace, args, (0, 1), how)


@pytest.mark.parametrize("how", MODES)
def test_simple_namespace_attribute_store(how):
    """`p.scale = 3.0` into a SimpleNamespace the function makes: refused until 2026-12-05
    (fourth session); its attributes are locals now, as an attribute dict's items are
    (attrdicts.py)."""
    _run(_namespace_store, (R.standard_normal((3, 3)), R.standard_normal((4, 3))), 0, how)


# ---- np.maximum.accumulate / np.minimum.accumulate ------------------------------------------

def _drawdown(x, W):
    wealth = np.cumsum(x)
    peak = np.maximum.accumulate(wealth)
    low = np.minimum.accumulate(np.tanh(W), axis=1)
    return np.sum((peak - wealth) ** 2) + np.sum(low ** 2) + np.sum(np.maximum.accumulate(
        np.array([x[0], x[0], x[1]])))


@pytest.mark.parametrize("how", MODES)
def test_running_extremum(how):
    """`np.maximum.accumulate(np.cumsum(x))` (a running peak; ties where the peak holds,
    split as np.maximum's rule): was refused ('`np.maximum.accumulate` has no derivative
    rule')."""
    _run(_drawdown, (R.standard_normal(7), R.standard_normal((3, 5))), (0, 1), how)


def test_running_extremum_second_order():
    x, v = R.standard_normal(6), R.standard_normal(6)
    f = lambda x: np.sum(np.maximum.accumulate(x * x) ** 2)  # noqa: E731
    g = srcad.grad(f)
    hv = srcad.jvp(g, (x,), (v,))[1]
    fd = (g(x + 1e-5 * v) - g(x - 1e-5 * v)) / 2e-5
    assert rel_error(hv, fd) < 1e-5


# ---- typing.NamedTuple layers with methods --------------------------------------------------

from typing import NamedTuple  # noqa: E402


class _DenseNT(NamedTuple):
    W: np.ndarray
    b: np.ndarray
    scale: float = 1.0

    def __call__(self, x):
        return (x @ self.W + self.b) * self.scale

    def forward(self, x):
        return np.tanh(self(x))


def _nt_layers(W1, b1, W2, b2, X):
    layers = [_DenseNT(W1, b1), _DenseNT(W=W2, b=b2, scale=0.5)]
    h = X
    for i, layer in enumerate(layers):
        h = layer.forward(h) if i < len(layers) - 1 else layer(h)
    return np.mean(h ** 2) + np.sum(layers[0].W ** 2) * 1e-2


@pytest.mark.parametrize("how", MODES)
def test_namedtuple_layers_with_methods(how):
    """`class Dense(NamedTuple)` with `__call__` / `forward`, built in the function and
    called (`layer(h)`): was '`layer` has no derivative rule'. A namedtuple type with methods
    of the user's is followed as an object whose fields are its attributes."""
    args = (R.standard_normal((3, 4)), R.standard_normal(4), R.standard_normal((4, 2)),
            R.standard_normal(2), R.standard_normal((5, 3)))
    _run(_nt_layers, args, (0, 1, 2, 3), how)


# ---- layers whose base class keeps a registry through __init_subclass__ ----------------------

class _Registered:
    registry: dict = {}

    def __init_subclass__(cls, key=None, **kw):
        super().__init_subclass__(**kw)
        _Registered.registry[key or cls.__name__.lower()] = cls


class _TanhLayer(_Registered, key="tanh"):
    def __call__(self, x):
        return np.tanh(x)


class _SquareLayer(_Registered):
    def __init__(self, scale=1.0):
        self.scale = scale

    def __call__(self, x):
        return self.scale * x * x


def _registered_layers(W, X):
    h = _TanhLayer()(X @ W)
    sq = _SquareLayer(0.5)
    return np.sum(sq(h)) + np.sum(_Registered.registry["tanh"]()(h))


@pytest.mark.parametrize("how", MODES)
def test_objects_of_a_class_with_init_subclass(how):
    """Layers built from classes whose base defines `__init_subclass__` (a plugin
    registry): were not followed as objects ('the result of a call has no derivative rule');
    `__init_subclass__` runs when a class is made, not when an instance is."""
    _run(_registered_layers, (R.standard_normal((3, 2)), R.standard_normal((4, 3))), 0, how)


# ---- attribute delegation through __getattr__ ----------------------------------------------

class _Params:
    def __init__(self, **arrays):
        self._arrays = arrays

    def __getattr__(self, name):
        try:
            return self._arrays[name]
        except KeyError:
            raise AttributeError(name) from None


class _Dense:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.tanh(x @ self.W)


class _Wrapped:
    def __init__(self, inner, scale):
        self.inner = inner
        self.scale = scale

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __call__(self, x):
        return self.scale * self.inner(x)


def _delegating(W, b, X):
    p = _Params(W=W, b=b)
    m = _Wrapped(_Dense(p.W), 2.0)
    return np.sum(np.tanh(X @ p.W + p.b) ** 2) + np.sum(m(X) ** 2) + np.sum(m.W) * m.scale


def _missing(W, b, X):
    return np.sum(_Params(W=W).b)


@pytest.mark.parametrize("how", MODES)
def test_getattr_delegation(how):
    """`p.W` answered by a class's `__getattr__` (a params object over a **kwargs dict, a
    wrapper delegating to its inner layer): the class was not followed ('`Params` has no
    derivative rule'). Python calls __getattr__ for what the object and its class lack."""
    args = (R.standard_normal((3, 3)), R.standard_normal(3), R.standard_normal((4, 3)))
    _run(_delegating, args, (0, 1), how)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_getattr_delegation_missing_is_pythons_attribute_error(mode):
    args = (R.standard_normal((3, 3)), R.standard_normal(3), R.standard_normal((4, 3)))
    with pytest.raises(AttributeError):
        srcad.grad(_missing, mode=mode)(*args)


# ---- parameters in an attribute-dict (EasyDict / AttrDict) argument -------------------------

class _AttrDict(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


class _EasyDict(dict):
    def __getattr__(self, key):
        return self[key]


def _hidden(p, X):
    return np.tanh(X @ p.W1 + p.b1)


def _attrdict_loss(params, X, cfg):
    h = _hidden(params, X) + np.tanh(X @ params.W1 + params.b1)
    return np.mean((h @ params["W2"]) ** 2) + cfg.l2 * np.sum(params.W1 ** 2)


def _attrdict_args(kind):
    p = kind(W1=R.standard_normal((3, 4)), b1=R.standard_normal(4),
             W2=R.standard_normal((4, 2)))
    return p, R.standard_normal((5, 3)), kind(l2=0.1)


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("kind", [_AttrDict, _EasyDict])
def test_attribute_dict_parameters(kind, how):
    """`params.W1` of a dict subclass whose `__getattr__` reads its items, differentiated as
    a pytree: was '`.W1` has no derivative rule' (and the tape's dict wrapper had no such
    attribute). Read as `params["W1"]`; the gradient is a dict of the same keys."""
    _run(_attrdict_loss, _attrdict_args(kind), 0, how)
