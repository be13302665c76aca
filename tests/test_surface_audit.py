"""Issue 23's probe list, function by function, through srcad (an audit of the census's claims).

Every function of the issue's probe of everyday numpy and Python (np.median ... x.__mul__(y),
np.where(cond), np.linalg.pinv, np.gradient, np.fft.fftshift, a dict argument's .get() /
.items(), size-1 and bool outputs, wrt an empty dict), the reductions' where= (as jax.numpy
differentiates it), and the rows people use of jax.numpy's differentiable functions (the bar
issue 23 sets), each written as a user would, in a scalar program that makes the cotangent
depend on the input (a sine around it), and checked:

* reverse mode, ``srcad.grad`` in source and tape mode, against central differences
  (srcad.testing.check_grads);
* forward mode, ``srcad.jvp`` in source and tape mode, against central differences
  (check_jvp);
* second order, forward over reverse (``srcad.jvp(srcad.grad(f))``) and reverse over reverse
  (``srcad.vjp(srcad.grad(f))``), in source and tape mode, against differences of srcad's own
  gradient (which the first check holds to central differences of f);
* against torch's autograd where torch has the function, and jax's where jax.numpy has it
  (float64; jax is a bench dependency: its checks skip without it);
* the census (srcad/analysis/census.py) classifies the name as differentiated -- or, for the
  one the issue allows to be refused (x.view(dtype)), as refused, and the refusal is a
  SrcadError at the user's line that gives the census's reason (np.nditer, the other one,
  is lowered since issue 23: tests/test_refused23.py).

Then what the audit found and fixed, each a test that failed before: a third derivative of
multi_dot / cumprod is refused (their second derivatives are rules now), the second derivative
of np.average(..., returned=True) is refused, np.pad's maximum / minimum / median modes are
refused in forward mode too (np.pad of the tangent was a wrong value), a max with where= whose
selected maximum is 0, and a reduction over an axis computed when the code runs (the
specialised backward read it as axis=None: a transposed gradient).

Run: ``PYTHONPATH=. python -m pytest -n 0 tests/test_surface_audit.py``.
"""

from __future__ import annotations

import copy
import functools
import math
import operator
import statistics
from typing import Callable, NamedTuple

import numpy as np
import pytest

import srcad
from srcad.analysis import census as C
from srcad.testing import check_grads, check_jvp, check_vjp, numerical_grad

MODES = ("source", "tape")

# =============================================================================================
# the programs (module-level functions: srcad reads their source)
# =============================================================================================


def median(x):
    return np.sum(np.sin(np.median(x, axis=0))) + np.median(x) ** 2


def percentile(x):
    return np.sum(np.sin(np.percentile(x, [25.0, 60.0], axis=1)))


def quantile(x):
    return np.sum(np.sin(np.quantile(x, 0.3, axis=0))) + np.quantile(x, 0.75) ** 2


def ptp(x):
    return np.sum(np.sin(np.ptp(x, axis=1))) + np.ptp(x) ** 2


def average_weights(x, w):
    return np.sum(np.sin(np.average(x, axis=0, weights=w)))


def cov(x):
    return np.sum(np.sin(np.cov(x)))


def corrcoef(x):
    return np.sum(np.sin(np.corrcoef(x)))


XP = np.array([-1.0, -0.3, 0.4, 1.1, 2.0])


def interp(t, fp):
    return np.sum(np.sin(np.interp(t, XP, fp)))


def convolve(a, v):
    return np.sum(np.sin(np.convolve(a, v))) + np.sum(np.convolve(a, v, mode="same") ** 2)


def multi_dot(a, b, c):
    return np.sum(np.sin(np.linalg.multi_dot([a, b, c])))


def choose(a, b):
    return np.sum(np.sin(np.choose(np.array([0, 1, 1, 0, 1]), [a, b])))


def piecewise(x):
    return np.sum(np.piecewise(x, [x < 0, x > 1], [np.sin, lambda v: v * v, np.cos]))


def put(x):
    y = x * 1.0
    np.put(y, [0, 3], np.sin(x[1:3]))
    return np.sum(np.sin(y) * y)


def copyto(x):
    y = x * 2.0
    np.copyto(y, x ** 3, where=x > 0.5)
    return np.sum(np.sin(y) * x)


def fill_diagonal(x):
    m = np.outer(x, x)
    np.fill_diagonal(m, np.sin(x))
    return np.sum(m * m)


def add_reduce(x):
    return np.sum(np.sin(np.add.reduce(x, axis=1))) + np.multiply.reduce(x[0]) ** 2


def add_accumulate(x):
    return np.sum(np.sin(np.add.accumulate(x, axis=1)))


def multiply_outer(x):
    return np.sum(np.sin(np.multiply.outer(x[0], x[1])))


def add_at(x):
    y = np.zeros(3)
    np.add.at(y, [0, 1, 0, 2], x[0])
    return np.sum(np.sin(y) * y)


def reduceat(x):
    return np.sum(np.sin(np.add.reduceat(x[0], [0, 2, 3])))


def item(x):
    return x.item(0) * np.sin(x.item(2)) + x[1:2].item() ** 2


def tolist(x):
    v = x.tolist()
    return v[0] * np.sin(v[2]) + v[1] ** 2


def view_dtype(x):
    return np.sum(x.view(np.int64) * x)


def flat(x):
    return sum(v * v for v in (x * x).flat) * x.flat[1]


def nditer(x):
    s = 0.0
    for v in np.nditer(x):
        s = s + v * v
    return s


def vectorize(x):
    return np.sum(np.vectorize(lambda v: np.sin(v) * v if v > 0 else -v)(x))


def apply_along_axis(x):
    return np.sum(np.sin(np.apply_along_axis(lambda r: r * r.sum(), 1, x)))


def reduce_multiply(x):
    return np.sum(np.sin(functools.reduce(np.multiply, [x, np.sin(x), x])))


def map_tanh(x):
    return sum(map(np.tanh, x)) * x[0]


def operator_mul(x, y):
    return np.sum(np.sin(operator.mul(x, y)))


def builtin_pow(x):
    return np.sum(pow(x, 3) * np.sin(x))


def builtin_sorted(x):
    s = sorted(x * x)
    return s[1] * np.sin(s[0]) + sorted(x, reverse=True)[0] ** 2


def math_fsum(x):
    return math.fsum(x * x) * math.fsum(np.sin(x))


def statistics_mean(x):
    return statistics.mean(x * x) * np.sin(statistics.mean(x))


def deepcopy(x):
    y = copy.deepcopy(x)
    return np.sum(np.sin(y) * x)


def dunder_mul(x, y):
    return np.sum(np.sin(x.__mul__(y)))


def where_one_argument(x):
    return np.sum(np.sin(x[np.where(x > 0)]))


def pinv(a):
    return np.sum(np.sin(np.linalg.pinv(a)))


def gradient(x):
    return np.sum(np.sin(np.gradient(x))) + np.sum(np.sin(np.gradient(x, 0.5, axis=0)))


def fftshift(x):
    return np.sum(np.sin(np.fft.fftshift(x)) * np.arange(12.0).reshape(3, 4)) \
        + np.sum(np.fft.ifftshift(x, axes=0) * np.cos(x))


def dict_get_items(d):
    s = d.get("a") * 2.0 + d.get("missing", 1.0)
    for k, v in d.items():
        s = s + np.sum(np.sin(v))
    return np.sum(s)


# --- where= on the reductions (jax.numpy's semantics: the elements left out get none) --------
def sum_where(x):
    return np.sum(np.sin(x) * x, where=x > 0) + np.sum(np.sin(np.sum(x, axis=1, where=x < 1)))


def mean_where(x):
    return np.sum(np.sin(np.mean(x * x, axis=0, where=x > -1.0))) + x.mean(where=x < 1.0) ** 2


def max_where(x):
    return np.sum(np.sin(np.max(x, axis=1, where=x < 1.0, initial=-5.0))) \
        + np.min(x * x, where=x > 0, initial=9.0)


def var_std_where(x):
    return np.sum(np.sin(np.var(x, axis=0, where=x > -1.0))) + np.std(x, where=x < 1.0, ddof=1)


def prod_where(x):
    return np.sum(np.sin(np.prod(x, axis=1, where=x > 0)))


# --- rows of jax.numpy's differentiable functions people use -------------------------------
def nan_functions(x):
    y = np.where(x > 1.0, np.nan, x)
    return np.sum(np.sin(np.nan_to_num(y * y, nan=0.5))) + np.nansum(y * y) \
        + np.sum(np.sin(np.nanmean(y, axis=0))) + np.nanmax(y) ** 2


def cumprod_diff(x):
    return np.sum(np.sin(np.cumprod(x, axis=1))) \
        + np.sum(np.diff(x, prepend=0.5, append=x[:, :1], axis=1) ** 2)


def trapezoid(x):
    return np.sum(np.trapezoid(np.sin(x), dx=0.5) ** 2) \
        + np.sum(np.trapezoid(x * x, x=XP, axis=0))


def kron(a, b):
    return np.sum(np.sin(np.kron(a, b)))


def decompositions(a):
    s = a @ a.T + np.eye(3)
    sign, logdet = np.linalg.slogdet(s)
    w, v = np.linalg.eigh(s)
    return logdet + np.sum(np.sin(w)) + np.sum(np.linalg.svd(a, compute_uv=False) ** 2) \
        + np.sum(v[:, 0] ** 2 * w)


def lstsq(a, b):
    return np.sum(np.sin(np.linalg.lstsq(a, b, rcond=None)[0]))


def polyval_sinc(p, x):
    return np.sum(np.sin(np.polyval(p, x))) + np.sum(np.sinc(x) * x)


def piecewise_constant(x):
    return np.sum(x * x * np.heaviside(x, 0.5) + np.round(x) * x + np.sign(x) * np.sin(x))


def binary_ufuncs(x, y):
    return np.sum(np.sin(np.logaddexp2(x, y)) + np.hypot(x, y) + np.arctan2(x, y)
                  + np.fmod(x, 0.7) * y + np.remainder(x, 0.7) * x)


def shapes(x):
    return np.sum(np.sin(np.tril(x) + np.triu(x, 1) * 2.0)) \
        + np.sum(np.sin(np.roll(x, 1, axis=0)) * np.rot90(x).T) \
        + np.sum(np.flip(x, axis=1) * x) + np.sum(np.sin(np.tile(x, (2, 1)))) \
        + np.sum(np.sin(np.repeat(x, [1, 2, 0, 1], axis=1)))


def meshgrid_select(x):
    u, v = np.meshgrid(x[0], x[1])
    taken = np.take_along_axis(x, np.argsort(x, axis=1), axis=1)
    picked = np.select([x < -0.5, x > 0.5], [x * x, np.sin(x)], default=x)
    return np.sum(np.sin(u * v)) + np.sum(taken * np.arange(4.0)) + np.sum(picked * x)


def max_where_at_zero(x):
    # (the maximum of the selected elements is exactly 0 in two rows, beside elements where=
    # leaves out: they must not tie with it)
    return np.sum(np.sin(np.max(x, axis=1, where=x < 0.5, initial=-5.0)) * np.arange(1.0, 4.0)) \
        + np.sum(np.min(x * x, axis=0, where=x > -0.6, initial=9.0))


X_ZEROS = np.array([[-0.5, 0.0, 0.7, -0.3], [0.2, 0.9, -1.1, 0.1], [0.0, -0.2, 1.3, -0.7]])


def nan_where(x):
    y = np.where(x > 1.2, np.nan, x)
    m = x > -1.0
    return np.nansum(np.sin(y), where=m) + np.sum(np.sin(np.nanmean(y * y, axis=0, where=m))) \
        + np.nanmax(y, where=x < 0.9, initial=-9.0) + np.nanvar(y, axis=1, where=m).sum() \
        + np.nanstd(y, where=m, ddof=1) + np.sum(np.nanprod(np.abs(y) + 0.5, axis=1, where=m))


def pad_modes(x):
    return np.sum(np.sin(np.pad(x, 2, mode="reflect")) * np.arange(56.0).reshape(7, 8)) \
        + np.sum(np.pad(x, ((1, 2), (0, 3)), mode="edge") ** 2) \
        + np.sum(np.sin(np.pad(x, 1, mode="symmetric"))) \
        + np.sum(np.pad(x, (0, 4), mode="wrap") ** 3)


def take_modes_and_dtypes(x):
    return np.sum(np.take(x, [0, 5, -7, 13], mode="wrap") ** 2) \
        + np.sum(np.sin(np.take(x, [[0, 9], [-3, 1]], axis=1, mode="clip"))) \
        + np.sum(np.sin(np.cumsum(x, axis=0, dtype=np.float64))) \
        + np.sum(np.cumprod(x, axis=1, dtype=np.float64)) + np.var(x, axis=0, correction=1).sum()


def average_returned(x, w):
    avg, total = np.average(x, axis=1, weights=w, returned=True)
    return np.sum(np.sin(avg) * total)


def apply_over_axes(x):
    return np.sum(np.sin(np.apply_over_axes(np.sum, x * x, [0, -1]))) \
        + np.sum(np.apply_over_axes(lambda a, ax: np.tanh(a).mean(axis=ax), x, 1) ** 2)


def pad_maximum(x):
    return np.sum(np.sin(np.pad(x, 1, mode="maximum")))


# --- API-level: size-1 and bool outputs, wrt an empty dict -----------------------------------
def size1_vector(x):
    return np.sum(x * np.sin(x), keepdims=True).reshape(1)


def size1_matrix(x):
    return np.sin(x[:1, :1]) * x[1:2, 2:3]


def bool_output(x):
    return np.sum(x) > 0


def with_empty_dict(d, x):
    return np.sum(np.sin(x))


# =============================================================================================
# the table: census name -> program, arguments, twins
# =============================================================================================


def _r(*shape, seed=0, low=-1.5, high=1.5):
    return np.random.default_rng(seed).uniform(low, high, size=shape)


class Probe(NamedTuple):
    name: str  # the census name (or the words for an API-level case)
    fn: Callable
    args: tuple
    torch: Callable | None = None  # the same program on torch tensors
    jax: Callable | None = None  # ... on jax arrays (jax.numpy as jnp)
    census: tuple = ()  # census names that must be differentiated
    tol: float | None = None


def _t():
    import torch
    return torch


def _jnp():
    import jax.numpy as jnp
    return jnp


def _torch_gradient(x):
    torch = _t()
    return sum(torch.sin(g).sum() for g in torch.gradient(x)) \
        + torch.sin(torch.gradient(x, spacing=0.5, dim=0)[0]).sum()


def _torch_sorted(x):
    torch = _t()
    s = torch.sort(x * x).values
    return s[1] * torch.sin(s[0]) + torch.sort(x, descending=True).values[0] ** 2


X34 = _r(3, 4)
PROBES = [
    Probe("np.median", median, (_r(5, 3),),
          torch=lambda x: _t().sin(_t().median(x, dim=0).values).sum() + _t().median(x) ** 2),
    Probe("np.percentile", percentile, (X34,),
          torch=lambda x: _t().sin(_t().quantile(x, _t().tensor([0.25, 0.6], dtype=x.dtype),
                                                 dim=1)).sum()),
    Probe("np.quantile", quantile, (_r(5, 3),),
          torch=lambda x: _t().sin(_t().quantile(x, 0.3, dim=0)).sum()
          + _t().quantile(x, 0.75) ** 2),
    Probe("np.ptp", ptp, (X34,),
          torch=lambda x: _t().sin(x.amax(1) - x.amin(1)).sum() + (x.max() - x.min()) ** 2),
    Probe("np.average", average_weights, (X34, _r(3, 4, seed=1, low=0.5, high=2.0)),
          torch=lambda x, w: _t().sin((x * w).sum(0) / w.sum(0)).sum()),
    Probe("np.cov", cov, (X34,), torch=lambda x: _t().sin(_t().cov(x)).sum()),
    Probe("np.corrcoef", corrcoef, (X34,), torch=lambda x: _t().sin(_t().corrcoef(x)).sum()),
    Probe("np.interp", interp, (_r(6, seed=2), _r(5, seed=3)),
          jax=lambda t, fp: _jnp().sum(_jnp().sin(_jnp().interp(t, XP, fp)))),
    Probe("np.convolve", convolve, (_r(5), _r(3, seed=1)),
          jax=lambda a, v: _jnp().sum(_jnp().sin(_jnp().convolve(a, v)))
          + _jnp().sum(_jnp().convolve(a, v, mode="same") ** 2)),
    Probe("np.linalg.multi_dot", multi_dot, (_r(2, 3), _r(3, 4, seed=1), _r(4, 2, seed=2)),
          torch=lambda a, b, c: _t().sin(_t().linalg.multi_dot([a, b, c])).sum()),
    Probe("np.choose", choose, (_r(5), _r(5, seed=1)),
          jax=lambda a, b: _jnp().sum(_jnp().sin(_jnp().choose(_jnp().array([0, 1, 1, 0, 1]),
                                                               [a, b])))),
    Probe("np.piecewise", piecewise, (_r(6),),
          torch=lambda x: _t().where(x < 0, _t().sin(x), _t().where(x > 1, x * x, _t().cos(x)))
          .sum()),
    Probe("np.put", put, (_r(5),)),
    Probe("np.copyto", copyto, (_r(5),)),
    Probe("np.fill_diagonal", fill_diagonal, (_r(4),)),
    Probe("ufunc.reduce", add_reduce, (X34,),
          torch=lambda x: _t().sin(x.sum(1)).sum() + x[0].prod() ** 2),
    Probe("ufunc.accumulate", add_accumulate, (X34,),
          torch=lambda x: _t().sin(_t().cumsum(x, 1)).sum()),
    Probe("ufunc.outer", multiply_outer, (X34,),
          torch=lambda x: _t().sin(_t().outer(x[0], x[1])).sum()),
    Probe("ufunc.at", add_at, (_r(2, 4),),
          torch=lambda x: (lambda y: (_t().sin(y) * y).sum())(
              _t().zeros(3, dtype=x.dtype).index_add(0, _t().tensor([0, 1, 0, 2]), x[0]))),
    Probe("ufunc.reduceat", reduceat, (X34,),
          torch=lambda x: _t().sin(_t().stack([x[0, :2].sum(), x[0, 2], x[0, 3]])).sum()),
    Probe("ndarray.item", item, (_r(4),),
          torch=lambda x: x[0] * _t().sin(x[2]) + x[1] ** 2),
    Probe("ndarray.tolist", tolist, (_r(4),),
          torch=lambda x: x[0] * _t().sin(x[2]) + x[1] ** 2),
    Probe("ndarray.flat", flat, (_r(2, 2),),
          torch=lambda x: ((x * x) ** 2).sum() * x.flatten()[1]),
    Probe("np.vectorize", vectorize, (_r(5),),
          torch=lambda x: _t().where(x > 0, _t().sin(x) * x, -x).sum()),
    Probe("np.apply_along_axis", apply_along_axis, (X34,),
          torch=lambda x: _t().sin(x * x.sum(1, keepdim=True)).sum()),
    Probe("functools.reduce(np.multiply, ...)", reduce_multiply, (_r(4),),
          torch=lambda x: _t().sin(x * _t().sin(x) * x).sum(), census=("np.multiply",)),
    Probe("builtins.map", map_tanh, (_r(4),), torch=lambda x: _t().tanh(x).sum() * x[0]),
    Probe("operator.mul", operator_mul, (_r(4), _r(4, seed=1)),
          torch=lambda x, y: _t().sin(x * y).sum()),
    Probe("builtins.pow", builtin_pow, (_r(4),), torch=lambda x: (x ** 3 * _t().sin(x)).sum()),
    Probe("builtins.sorted", builtin_sorted, (_r(4),), torch=_torch_sorted),
    Probe("math.fsum", math_fsum, (_r(4),),
          torch=lambda x: (x * x).sum() * _t().sin(x).sum()),
    Probe("statistics.mean", statistics_mean, (_r(4),),
          torch=lambda x: (x * x).mean() * _t().sin(x.mean())),
    Probe("copy.deepcopy", deepcopy, (_r(4),), torch=lambda x: (_t().sin(x) * x).sum()),
    Probe("x.__mul__(y)", dunder_mul, (_r(4), _r(4, seed=1)),
          torch=lambda x, y: _t().sin(x * y).sum()),
    Probe("np.where (one argument)", where_one_argument, (_r(5),),
          torch=lambda x: _t().sin(x[x > 0]).sum(), census=("np.where",)),
    Probe("np.linalg.pinv", pinv, (_r(3, 4),),
          torch=lambda a: _t().sin(_t().linalg.pinv(a)).sum()),
    Probe("np.gradient", gradient, (_r(5, 4),), torch=_torch_gradient),
    Probe("np.fft.fftshift", fftshift, (X34,),
          torch=lambda x: (_t().sin(_t().fft.fftshift(x))
                           * _t().arange(12.0, dtype=x.dtype).reshape(3, 4)).sum()
          + (_t().fft.ifftshift(x, dim=0) * _t().cos(x)).sum(),
          census=("np.fft.fftshift", "np.fft.ifftshift")),
    Probe("dict .get() / .items()", dict_get_items, ({"a": _r(3), "b": _r(2, seed=1)},)),
    # where= (jax.numpy's semantics)
    Probe("np.sum(where=)", sum_where, (X34,),
          jax=lambda x: _jnp().sum(_jnp().sin(x) * x, where=x > 0)
          + _jnp().sum(_jnp().sin(_jnp().sum(x, axis=1, where=x < 1))), census=("np.sum",)),
    Probe("np.mean(where=)", mean_where, (X34,),
          jax=lambda x: _jnp().sum(_jnp().sin(_jnp().mean(x * x, axis=0, where=x > -1.0)))
          + _jnp().mean(x, where=x < 1.0) ** 2, census=("np.mean", "ndarray.mean")),
    Probe("np.max(where=, initial=)", max_where, (X34,),
          jax=lambda x: _jnp().sum(_jnp().sin(_jnp().max(x, axis=1, where=x < 1.0,
                                                         initial=-5.0)))
          + _jnp().min(x * x, where=x > 0, initial=9.0), census=("np.max", "np.min")),
    Probe("np.var / np.std(where=)", var_std_where, (_r(5, 4),),
          jax=lambda x: _jnp().sum(_jnp().sin(_jnp().var(x, axis=0, where=x > -1.0)))
          + _jnp().std(x, where=x < 1.0, ddof=1), census=("np.var", "np.std")),
    Probe("np.prod(where=)", prod_where, (_r(3, 4, low=0.5, high=1.5) * [[1], [-1], [1]],),
          jax=lambda x: _jnp().sum(_jnp().sin(_jnp().prod(x, axis=1, where=x > 0))),
          census=("np.prod",)),
    # jax.numpy's differentiable functions
    Probe("np.nan_to_num / nansum / nanmean / nanmax", nan_functions, (_r(3, 4, low=-1, high=2),),
          jax=lambda x: (lambda y: _jnp().sum(_jnp().sin(_jnp().nan_to_num(y * y, nan=0.5)))
                         + _jnp().nansum(y * y) + _jnp().sum(_jnp().sin(_jnp().nanmean(y, 0)))
                         + _jnp().nanmax(y) ** 2)(_jnp().where(x > 1.0, _jnp().nan, x)),
          census=("np.nan_to_num", "np.nansum", "np.nanmean", "np.nanmax")),
    Probe("np.cumprod / np.diff(prepend=, append=)", cumprod_diff, (X34,),
          jax=lambda x: _jnp().sum(_jnp().sin(_jnp().cumprod(x, axis=1)))
          + _jnp().sum(_jnp().diff(x, prepend=0.5, append=x[:, :1], axis=1) ** 2),
          census=("np.cumprod", "np.diff")),
    Probe("np.trapezoid", trapezoid, (_r(5, 3),),
          jax=lambda x: _jnp().sum(_jnp().trapezoid(_jnp().sin(x), dx=0.5) ** 2)
          + _jnp().sum(_jnp().trapezoid(x * x, x=XP, axis=0))),
    Probe("np.kron", kron, (_r(2, 3), _r(3, 2, seed=1)),
          torch=lambda a, b: _t().sin(_t().kron(a, b)).sum()),
    Probe("np.linalg.slogdet / eigh / svd", decompositions, (_r(3, 4),),
          jax=lambda a: (lambda s, w, v: _jnp().linalg.slogdet(s)[1] + _jnp().sum(_jnp().sin(w))
                         + _jnp().sum(_jnp().linalg.svd(a, compute_uv=False) ** 2)
                         + _jnp().sum(v[:, 0] ** 2 * w))(
              a @ a.T + _jnp().eye(3), *_jnp().linalg.eigh(a @ a.T + _jnp().eye(3))),
          census=("np.linalg.slogdet", "np.linalg.eigh", "np.linalg.svd")),
    Probe("np.linalg.lstsq", lstsq, (_r(5, 3), _r(5, 2, seed=1)),
          torch=lambda a, b: _t().sin(_t().linalg.lstsq(a, b).solution).sum()),
    Probe("np.polyval / np.sinc", polyval_sinc, (_r(4), _r(5, seed=1)),
          jax=lambda p, x: _jnp().sum(_jnp().sin(_jnp().polyval(p, x)))
          + _jnp().sum(_jnp().sinc(x) * x), census=("np.polyval", "np.sinc")),
    Probe("np.heaviside / np.round / np.sign (zero gradient)", piecewise_constant, (_r(6),),
          jax=lambda x: _jnp().sum(x * x * _jnp().heaviside(x, 0.5) + _jnp().round(x) * x
                                   + _jnp().sign(x) * _jnp().sin(x)), census=()),
    Probe("np.logaddexp2 / hypot / arctan2 / fmod / remainder", binary_ufuncs,
          (_r(6, low=0.2, high=1.5), _r(6, seed=1, low=0.2, high=1.5)),
          jax=lambda x, y: _jnp().sum(_jnp().sin(_jnp().logaddexp2(x, y)) + _jnp().hypot(x, y)
                                      + _jnp().arctan2(x, y) + _jnp().fmod(x, 0.7) * y
                                      + _jnp().remainder(x, 0.7) * x),
          census=("np.logaddexp2", "np.hypot", "np.arctan2", "np.fmod", "np.remainder")),
    Probe("np.tril / triu / roll / rot90 / flip / tile / repeat", shapes, (X34,),
          jax=lambda x: _jnp().sum(_jnp().sin(_jnp().tril(x) + _jnp().triu(x, 1) * 2.0))
          + _jnp().sum(_jnp().sin(_jnp().roll(x, 1, axis=0)) * _jnp().rot90(x).T)
          + _jnp().sum(_jnp().flip(x, axis=1) * x) + _jnp().sum(_jnp().sin(_jnp().tile(x, (2, 1))))
          + _jnp().sum(_jnp().sin(_jnp().repeat(x, _jnp().array([1, 2, 0, 1]), axis=1,
                                                total_repeat_length=4))),
          census=("np.tril", "np.triu", "np.roll", "np.rot90", "np.flip", "np.tile",
                  "np.repeat")),
    Probe("np.max(where=) with the maximum at 0", max_where_at_zero, (X_ZEROS,),
          jax=lambda x: _jnp().sum(_jnp().sin(_jnp().max(x, axis=1, where=x < 0.5, initial=-5.0))
                                   * _jnp().arange(1.0, 4.0))
          + _jnp().sum(_jnp().min(x * x, axis=0, where=x > -0.6, initial=9.0)),
          census=("np.max", "np.min")),
    Probe("np.nansum / nanmean / nanmax / nanvar / nanstd / nanprod(where=)", nan_where,
          (_r(3, 4, low=-1.5, high=1.5, seed=5),),
          jax=lambda x: (lambda y, m: _jnp().nansum(_jnp().sin(y), where=m)
                         + _jnp().sum(_jnp().sin(_jnp().nanmean(y * y, axis=0, where=m)))
                         + _jnp().nanmax(y, where=x < 0.9, initial=-9.0)
                         + _jnp().nanvar(y, axis=1, where=m).sum()
                         + _jnp().nanstd(y, where=m, ddof=1)
                         + _jnp().sum(_jnp().nanprod(_jnp().abs(y) + 0.5, axis=1, where=m)))(
              _jnp().where(x > 1.2, _jnp().nan, x), x > -1.0),
          census=("np.nansum", "np.nanmean", "np.nanmax", "np.nanvar", "np.nanstd",
                  "np.nanprod")),
    Probe("np.pad(mode=reflect / edge / symmetric / wrap)", pad_modes, (X34,),
          jax=lambda x: _jnp().sum(_jnp().sin(_jnp().pad(x, 2, mode="reflect"))
                                   * _jnp().arange(56.0).reshape(7, 8))
          + _jnp().sum(_jnp().pad(x, ((1, 2), (0, 3)), mode="edge") ** 2)
          + _jnp().sum(_jnp().sin(_jnp().pad(x, 1, mode="symmetric")))
          + _jnp().sum(_jnp().pad(x, (0, 4), mode="wrap") ** 3), census=("np.pad",)),
    Probe("np.take(mode=) / cumsum(dtype=) / cumprod(dtype=) / var(correction=)",
          take_modes_and_dtypes, (X34,),
          jax=lambda x: _jnp().sum(_jnp().take(x, _jnp().array([0, 5, -7, 13]), mode="wrap") ** 2)
          + _jnp().sum(_jnp().sin(_jnp().take(x, _jnp().array([[0, 9], [-3, 1]]), axis=1,
                                               mode="clip")))
          + _jnp().sum(_jnp().sin(_jnp().cumsum(x, axis=0)))
          + _jnp().sum(_jnp().cumprod(x, axis=1)) + _jnp().var(x, axis=0, ddof=1).sum(),
          census=("np.take", "np.cumsum", "np.cumprod", "np.var")),
    Probe("np.average(returned=True)", average_returned,
          (X34, _r(4, seed=3, low=0.5, high=2.0)),
          jax=lambda x, w: (lambda aw: _jnp().sum(_jnp().sin(aw[0]) * aw[1]))(
              _jnp().average(x, axis=1, weights=w, returned=True)), census=("np.average",)),
    Probe("np.apply_over_axes", apply_over_axes, (_r(2, 3, 4),),
          jax=lambda x: _jnp().sum(_jnp().sin(_jnp().apply_over_axes(_jnp().sum, x * x, [0, -1])))
          + _jnp().sum(_jnp().apply_over_axes(lambda a, ax: _jnp().tanh(a).mean(axis=ax), x,
                                              [1]) ** 2)),
    Probe("np.meshgrid / take_along_axis / select", meshgrid_select, (X34,),
          jax=lambda x: (lambda u, v: _jnp().sum(_jnp().sin(u * v)))(*_jnp().meshgrid(x[0], x[1]))
          + _jnp().sum(_jnp().take_along_axis(x, _jnp().argsort(x, axis=1), axis=1)
                       * _jnp().arange(4.0))
          + _jnp().sum(_jnp().select([x < -0.5, x > 0.5], [x * x, _jnp().sin(x)], default=x) * x),
          census=("np.meshgrid", "np.take_along_axis", "np.select")),
]
_BY_NAME = {p.name: p for p in PROBES}
assert len(_BY_NAME) == len(PROBES)


def _wrt(args):
    floats = tuple(i for i, a in enumerate(args)
                   if isinstance(a, dict) or np.asarray(a).dtype.kind == "f")
    return floats if len(floats) > 1 else floats[0]


def _ids(items):
    return [p.name for p in items]


# =============================================================================================
# the checks
# =============================================================================================


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("probe", PROBES, ids=_ids(PROBES))
def test_reverse_mode_against_central_differences(probe, mode):
    check_grads(probe.fn, copy.deepcopy(probe.args), wrt=_wrt(probe.args), mode=mode,
                tol=probe.tol)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("probe", PROBES, ids=_ids(PROBES))
def test_forward_mode_against_central_differences(probe, mode):
    check_jvp(probe.fn, copy.deepcopy(probe.args), mode=mode, tol=probe.tol)


# (a dict: first order below; np.average(returned=True): a second derivative is refused, below)
SECOND = [p for p in PROBES if p.fn not in (dict_get_items, average_returned)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("probe", SECOND, ids=_ids(SECOND))
def test_second_order_forward_over_reverse(probe, mode):
    """srcad.jvp(srcad.grad(f)): the Hessian-vector product, against differences of srcad's
    gradient (all float arguments perturbed: the mixed terms too)."""
    g = srcad.grad(probe.fn, mode=mode)
    check_jvp(g, copy.deepcopy(probe.args), mode=mode, tol=1e-5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("probe", SECOND, ids=_ids(SECOND))
def test_second_order_reverse_over_reverse(probe, mode):
    """srcad.vjp(srcad.grad(f)): H u, against differences of srcad's gradient."""
    g = srcad.grad(probe.fn, mode=mode)
    check_vjp(g, copy.deepcopy(probe.args), mode=mode, tol=1e-5)


def test_dict_argument_second_order():
    d = {"a": _r(3), "b": _r(2, seed=1)}
    hvp = srcad.jvp(srcad.grad(dict_get_items), (d,), ({"a": np.ones(3), "b": np.ones(2)},))[1]
    h = 1e-5
    plus = srcad.grad(dict_get_items)({k: v + h for k, v in d.items()})
    minus = srcad.grad(dict_get_items)({k: v - h for k, v in d.items()})
    for k in d:
        np.testing.assert_allclose(hvp[k], (plus[k] - minus[k]) / (2 * h), rtol=1e-6, atol=1e-8)


TORCH = [p for p in PROBES if p.torch is not None]


@pytest.mark.parametrize("probe", TORCH, ids=_ids(TORCH))
def test_against_torch(probe):
    torch = pytest.importorskip("torch")
    args = copy.deepcopy(probe.args)
    wrt = _wrt(args)
    wrt = wrt if isinstance(wrt, tuple) else (wrt,)
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=i in wrt)
          for i, a in enumerate(args)]
    out = probe.torch(*ts)
    want = torch.autograd.grad(out, [ts[i] for i in wrt])
    got = srcad.grad(probe.fn, wrt=wrt)(*args)
    np.testing.assert_allclose(float(probe.fn(*copy.deepcopy(args))), out.item(), rtol=1e-10)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-8, atol=1e-10)


JAX = [p for p in PROBES if p.jax is not None]


@pytest.fixture(scope="module")
def jax_x64():
    jax = pytest.importorskip("jax")
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", old)


@pytest.mark.parametrize("probe", JAX, ids=_ids(JAX))
def test_against_jax(probe, jax_x64):
    args = copy.deepcopy(probe.args)
    wrt = _wrt(args)
    wrt = wrt if isinstance(wrt, tuple) else (wrt,)
    want = jax_x64.grad(probe.jax, argnums=wrt)(*args)
    got = srcad.grad(probe.fn, wrt=wrt)(*args)
    np.testing.assert_allclose(float(probe.fn(*copy.deepcopy(args))),
                               float(probe.jax(*args)), rtol=1e-10)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-8, atol=1e-10)


def test_every_probe_has_an_oracle_besides_differences():
    """torch or jax for each probe but the in-place writers and the dict (torch and jax have
    no np.put / copyto / fill_diagonal: central differences only)."""
    bare = sorted(p.name for p in PROBES if p.torch is None and p.jax is None)
    assert bare == ["dict .get() / .items()", "np.copyto", "np.fill_diagonal", "np.put"]


# =============================================================================================
# the census: each probe's name is classified as the checks above found it
# =============================================================================================

_ENTRIES = {e.name: e for e in C.census()}


@pytest.mark.parametrize("probe", PROBES, ids=_ids(PROBES))
def test_census_says_differentiated(probe):
    names = probe.census or ((probe.name,) if probe.name in C.surface() else ())
    for n in names:
        assert _ENTRIES[n].kind == C.DIFFERENTIATED, (n, _ENTRIES[n])


@pytest.mark.parametrize("name", ["np.heaviside", "np.round", "np.sign", "np.rint"])
def test_piecewise_constant_functions_are_no_gradient(name):
    """jax.numpy's gradient of these is zero (test_against_jax checks the value): the census
    has them as no gradient, run as written."""
    assert _ENTRIES[name].kind == C.NO_GRADIENT


REFUSED = [("ndarray.view", view_dtype)]


@pytest.mark.parametrize("mode", MODES)
def test_nditer_is_lowered(mode):
    """(Refused with the census's reason until issue 23: read-only iteration is a loop over
    indices now, tests/test_refused23.py.)"""
    assert _ENTRIES["np.nditer"].kind == C.DIFFERENTIATED
    check_grads(nditer, (_r(4),), grad_fn=srcad.grad(nditer, mode=mode))


@pytest.mark.parametrize("name, fn", REFUSED, ids=[n for n, _ in REFUSED])
@pytest.mark.parametrize("mode", MODES)
def test_refused_with_the_census_reason(name, fn, mode):
    entry = _ENTRIES[name]
    assert entry.kind == C.REFUSED
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(fn, mode=mode)(_r(4))
    text = str(info.value)
    assert "test_surface_audit.py" in text
    assert f"the census (docs/ops.md): {entry.reason}." in " ".join(text.split()), text


# =============================================================================================
# API-level cases of the autograd classes
# =============================================================================================


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn, shape", [(size1_vector, (4,)), (size1_matrix, (3, 4))])
def test_grad_of_a_size_one_output(fn, shape, mode):
    """A (1,) or (1, 1) output is accepted by grad as autograd does (its one element)."""
    x = _r(*shape)
    assert np.shape(fn(x)) in ((1,), (1, 1))
    check_grads(lambda v: float(np.sum(fn(v))), (x,),
                grad_fn=srcad.grad(fn, mode=mode))
    check_jvp(srcad.grad(fn, mode=mode), (x,), mode=mode, tol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_grad_of_a_bool_output_is_zero(mode):
    x = _r(3, 4)
    with pytest.warns(UserWarning, match="bool"):
        g = srcad.grad(bool_output, mode=mode)(x)
    assert g.shape == x.shape and g.dtype == x.dtype and not np.any(g)


@pytest.mark.parametrize("mode", MODES)
def test_grad_wrt_an_empty_dict(mode):
    x = _r(3)
    assert srcad.grad(with_empty_dict, wrt=0, mode=mode)({}, x) == {}
    d, dx = srcad.grad(with_empty_dict, wrt=(0, 1), mode=mode)({}, x)
    assert d == {}
    np.testing.assert_allclose(dx, np.cos(x))


def multi_dot_gradient_norm(a, b, c):
    return np.sum(srcad.grad(multi_dot)(a, b, c) ** 2)


def test_third_derivative_of_multi_dot_is_refused():
    """multi_dot's second derivative has rules (multi_dot_grad2 / jvp2: a gradient of its
    gradient is right); a third is an error, never zeros."""
    args = (_r(2, 3), _r(3, 4, seed=1), _r(4, 2, seed=2))
    check_grads(multi_dot_gradient_norm, args, tol=1e-5)
    with pytest.raises(srcad.SrcadError, match="third derivative of np.linalg.multi_dot"):
        srcad.jvp(srcad.grad(multi_dot_gradient_norm), args, tuple(np.ones_like(a) for a in args))


def cumprod_gradient_norm(x):
    return np.sum(srcad.grad(cumprod_diff)(x) ** 2)


def test_third_derivative_of_cumprod_is_refused():
    """cumprod's second derivative (cumprod_grad2 / cumprod_jvp2) through a gradient of its
    gradient, with a zero in the input (the recurrences never divide); a third is refused."""
    x = X34.copy()
    x[1, 2] = 0.0
    check_grads(cumprod_gradient_norm, (x,), tol=1e-5)
    with pytest.raises(srcad.SrcadError, match="third derivative of np.cumprod"):
        srcad.jvp(srcad.grad(cumprod_gradient_norm), (x,), (np.ones_like(x),))


@pytest.mark.parametrize("mode", MODES)
def test_second_derivative_of_average_returned_is_refused(mode):
    args = _BY_NAME["np.average(returned=True)"].args
    with pytest.raises(srcad.SrcadError, match="returned=True"):
        srcad.jvp(srcad.grad(average_returned, mode=mode), args,
                  tuple(np.ones_like(a) for a in args), mode=mode)


def pad_empty(x):
    return np.sum(np.pad(x, 1, mode="empty")[1:-1, 1:-1])


@pytest.mark.parametrize("mode", MODES)
def test_pad_modes_that_pick_a_value(mode):
    """np.pad's maximum / minimum / median modes are not linear in the array (forward mode
    gave np.pad of the tangent once: a wrong value; then both modes refused them): the
    border's cotangent goes to the picked cells (srcad/runtime_pad.py), checked here against
    central differences, reverse and forward; an empty border is refused."""
    x = X34.copy()
    g = srcad.grad(pad_maximum, mode=mode)(x)
    np.testing.assert_allclose(g, numerical_grad(pad_maximum, (x,)), rtol=1e-6, atol=1e-9)
    t = np.random.default_rng(5).standard_normal(x.shape)
    _, dot = srcad.jvp(pad_maximum, (x,), (t,), mode=mode)
    np.testing.assert_allclose(dot, np.sum(g * t), rtol=1e-10)
    with pytest.raises(srcad.SrcadError, match="mode='empty'"):
        srcad.grad(pad_empty, mode=mode)(x)


def mean_over_a_computed_axis(x):
    ax = int(np.argmax(np.array([0, 5])))  # 1, known only when the code runs
    return np.sum(np.mean(x, axis=ax) * np.array([1.0, 2.0, 3.0])) + np.sum(np.sum(x, ax) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_a_reduction_over_an_axis_known_only_at_run_time(mode):
    """The specialised backward of a reduction must not take an axis whose value is not known
    when the code is generated for axis=None (a square x gave the transposed gradient)."""
    x = _r(3, 3)
    check_grads(mean_over_a_computed_axis, (x,), mode=mode)
    check_jvp(mean_over_a_computed_axis, (x,), mode=mode)
