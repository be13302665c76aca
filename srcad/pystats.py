"""scipy.stats densities, written in the numpy (and scipy.special rows) srcad differentiates.

``norm.logpdf(x, loc, scale)``, ``multivariate_normal.logpdf(x, mean, cov)``,
``t.logpdf(x, df)``, ``poisson.logpmf(k, mu)``, ... -- what VAEs, Bayesian regressions,
mixture models and Gaussian-process marginal likelihoods call -- have no derivative rule of
their own: srcad calls the function of the same meaning here in their place, as it does for
srcad/pyfuncs.py's (`SUBSTITUTES`: source mode's calls.py, tape mode's `wrap`), traced as the
user's own code, so both modes differentiate the same numpy calls, first and second order,
reverse and forward, w.r.t. every argument (x, loc, scale, shape parameters, mean, cov).

scipy is optional: this module is imported (and imports scipy) only once the user's code has
imported scipy.stats (pyfuncs.optional_substitutes). The values are the textbook formulas,
which agree with scipy's to rounding on the support (tests/test_scipy_stats.py); outside it
the log densities are -inf as scipy's are (the gradient there is zero). The distribution
objects' methods are the keys (``scipy.stats.norm.logpdf``, however it is reached); a
distribution called with its parameters in the differentiated function (``norm(mu,
s).logpdf(x)``, ``d = stats.gamma(a, scale=s); d.pdf(x)``) builds this module's frozen class
of the same name (``norm_frozen``), whose methods are these functions; one frozen outside it
(a module's ``PRIOR = norm(0, 1)``) is scipy's object, refused where a differentiated value
reaches its methods.

Before/after:
    norm.logpdf(x, mu, s)        ->  pystats.norm_logpdf(x, mu, s):  -z^2/2 - log s - log(2 pi)/2
"""

from __future__ import annotations

import functools
import inspect
import math

import numpy as np
import scipy.special as sps
import scipy.stats as ss

# scipy's own constants and order of operations for the normal (the value is scipy's to the
# last bit, as calling the function gives): _norm_logpdf(z) - log(scale), _norm_pdf(z) / scale
_NORM_LOG_C = float(np.log(np.sqrt(2 * np.pi)))
_NORM_C = float(np.sqrt(2 * np.pi))


def _z(x, loc, scale):
    return (x - loc) / scale


# --- continuous, location-scale ------------------------------------------------------------
def norm_logpdf(x, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return (-(z * z) / 2.0 - _NORM_LOG_C) - np.log(scale)


def norm_pdf(x, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return np.exp(-(z * z) / 2.0) / _NORM_C / scale


def norm_cdf(x, loc=0.0, scale=1.0):
    return sps.ndtr(_z(x, loc, scale))


def norm_logcdf(x, loc=0.0, scale=1.0):
    return sps.log_ndtr(_z(x, loc, scale))


def norm_sf(x, loc=0.0, scale=1.0):
    return sps.ndtr(-_z(x, loc, scale))


def norm_logsf(x, loc=0.0, scale=1.0):
    return sps.log_ndtr(-_z(x, loc, scale))


def t_logpdf(x, df, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return (sps.gammaln((df + 1.0) / 2.0) - sps.gammaln(df / 2.0)
            - 0.5 * np.log(df * math.pi) - np.log(scale)
            - (df + 1.0) / 2.0 * np.log1p(z * z / df))


def t_pdf(x, df, loc=0.0, scale=1.0):
    return np.exp(t_logpdf(x, df, loc, scale))


def laplace_logpdf(x, loc=0.0, scale=1.0):
    return -np.abs(_z(x, loc, scale)) - np.log(2.0 * scale)


def laplace_pdf(x, loc=0.0, scale=1.0):
    return np.exp(laplace_logpdf(x, loc, scale))


def cauchy_logpdf(x, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return -np.log(math.pi * scale) - np.log1p(z * z)


def cauchy_pdf(x, loc=0.0, scale=1.0):
    return np.exp(cauchy_logpdf(x, loc, scale))


def logistic_logpdf(x, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return -z - 2.0 * np.logaddexp(0.0, -z) - np.log(scale)


def logistic_pdf(x, loc=0.0, scale=1.0):
    return np.exp(logistic_logpdf(x, loc, scale))


def logistic_cdf(x, loc=0.0, scale=1.0):
    return sps.expit(_z(x, loc, scale))


def expon_logpdf(x, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return np.where(z >= 0, -z - np.log(scale), -np.inf)


def expon_pdf(x, loc=0.0, scale=1.0):
    return np.exp(expon_logpdf(x, loc, scale))


def gamma_logpdf(x, a, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    inside = z > 0
    safe = np.where(inside, z, 1.0)
    return np.where(inside, sps.xlogy(a - 1.0, safe) - safe - sps.gammaln(a) - np.log(scale),
                    -np.inf)


def gamma_pdf(x, a, loc=0.0, scale=1.0):
    return np.exp(gamma_logpdf(x, a, loc, scale))


def beta_logpdf(x, a, b, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    inside = (z > 0) & (z < 1)
    safe = np.where(inside, z, 0.5)
    return np.where(inside, sps.xlogy(a - 1.0, safe) + sps.xlog1py(b - 1.0, -safe)
                    - sps.betaln(a, b) - np.log(scale), -np.inf)


def beta_pdf(x, a, b, loc=0.0, scale=1.0):
    return np.exp(beta_logpdf(x, a, b, loc, scale))


def uniform_logpdf(x, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return np.where((z >= 0) & (z <= 1), -np.log(scale) + 0.0 * z, -np.inf)


def uniform_pdf(x, loc=0.0, scale=1.0):
    return np.exp(uniform_logpdf(x, loc, scale))


# --- discrete ------------------------------------------------------------------------------
def poisson_logpmf(k, mu, loc=0):
    k = k - loc
    return sps.xlogy(k, mu) - mu - sps.gammaln(k + 1.0)


def poisson_pmf(k, mu, loc=0):
    return np.exp(poisson_logpmf(k, mu, loc))


def bernoulli_logpmf(k, p, loc=0):
    k = k - loc
    return sps.xlogy(k, p) + sps.xlog1py(1.0 - k, -p)


def bernoulli_pmf(k, p, loc=0):
    return np.exp(bernoulli_logpmf(k, p, loc))


def binom_logpmf(k, n, p, loc=0):
    k = k - loc
    return (sps.gammaln(n + 1.0) - sps.gammaln(k + 1.0) - sps.gammaln(n - k + 1.0)
            + sps.xlogy(k, p) + sps.xlog1py(n - k, -p))


def binom_pmf(k, n, p, loc=0):
    return np.exp(binom_logpmf(k, n, p, loc))


# --- multivariate ----------------------------------------------------------------------------
def multivariate_normal_logpdf(x, mean=None, cov=1, allow_singular=False):
    """scipy's shapes: the last axis of x is the dimension (x of shape (d,) is one point,
    (n, d) n points: n values); a scalar cov is cov * I, a 1-D one the diagonal."""
    if mean is None:
        dim = np.shape(cov)[0] if np.ndim(cov) > 0 else np.shape(x)[-1]
        diff = x
    else:
        dim = np.size(mean)
        diff = x - mean
    if dim == 1 and np.ndim(diff) >= 1 and np.shape(diff)[-1] != 1:
        diff = diff[..., None]  # (one dimension: x holds one value per point)
    if np.ndim(cov) == 0:
        c = cov * np.eye(dim)
    elif np.ndim(cov) == 1:
        c = np.diag(cov)
    else:
        # (scipy reads the lower triangle only -- its eigh's `lower=True` -- so the upper
        # one gets no gradient, as srcad's cholesky and eigvalsh rules treat theirs)
        c = np.tril(cov) + np.swapaxes(np.tril(cov, -1), -1, -2)
    sol = np.linalg.solve(c, diff.T).T
    maha = np.sum(diff * sol, axis=-1)
    logdet = np.linalg.slogdet(c)[1]
    return -0.5 * (dim * math.log(2.0 * math.pi) + logdet + maha)


def multivariate_normal_pdf(x, mean=None, cov=1, allow_singular=False):
    return np.exp(multivariate_normal_logpdf(x, mean, cov, allow_singular))


def dirichlet_logpdf(x, alpha):
    """x: (K,) or (K, n) (scipy's layout: the categories first); alpha: (K,)."""
    a = alpha if np.ndim(x) == 1 else alpha[:, None]
    return (np.sum(sps.xlogy(a - 1.0, x), axis=0)
            - np.sum(sps.gammaln(alpha)) + sps.gammaln(np.sum(alpha)))


def dirichlet_pdf(x, alpha):
    return np.exp(dirichlet_logpdf(x, alpha))


_NAMES = ("norm_logpdf norm_pdf norm_cdf norm_logcdf norm_sf norm_logsf t_logpdf t_pdf "
          "laplace_logpdf laplace_pdf cauchy_logpdf cauchy_pdf logistic_logpdf logistic_pdf "
          "logistic_cdf expon_logpdf expon_pdf gamma_logpdf gamma_pdf beta_logpdf beta_pdf "
          "uniform_logpdf uniform_pdf poisson_logpmf poisson_pmf bernoulli_logpmf "
          "bernoulli_pmf binom_logpmf binom_pmf multivariate_normal_logpdf "
          "multivariate_normal_pdf dirichlet_logpdf dirichlet_pdf").split()


def substitutes() -> dict:
    """scipy.stats's bound methods -> the functions above (pyfuncs.optional_substitutes)."""
    out = {}
    for name in _NAMES:
        dist, method = name.rsplit("_", 1)
        out[getattr(getattr(ss, dist), method)] = globals()[name]
    return out


def class_substitutes() -> dict:
    """scipy.stats's distributions -> the frozen classes below: `norm(mu, s)` builds one."""
    return {getattr(ss, name): cls for name, cls in
            ((n[:-len("_frozen")], c) for n, c in globals().items() if n.endswith("_frozen"))}


def frozen_method(method):
    """A method of a distribution scipy froze outside the differentiated function (a
    module's ``PRIOR = norm(0, 1)``: ``PRIOR.logpdf``) -> the function above of that method,
    its parameters bound to the ones the object holds now (``functools.partial(norm_logpdf,
    loc=0, scale=1)``); None for anything else. The partial is made where the call is
    normalised (source mode: the object's global is guarded, a rebound one builds anew) or
    made (tape mode), so each call reads the object the name holds then."""
    owner = getattr(method, "__self__", None)
    name = getattr(method, "__name__", None)
    if isinstance(owner, _FROZEN_SCALAR):
        dist = getattr(owner.dist, "name", None)
        if type(owner.dist) is not type(getattr(ss, str(dist), None)):
            return None  # (a user's own rv_continuous subclass: not one of these)
        args, kwds = owner.args, owner.kwds
    elif type(owner) in _FROZEN_MULTI:
        dist, args, kwds = _FROZEN_MULTI[type(owner)](owner)
    else:
        return None
    fn = globals().get(f"{dist}_{name}")
    if fn is None or not callable(fn):
        return None
    try:
        bound = inspect.signature(fn).bind(None, *args, **kwds)
    except TypeError:  # (parameters scipy takes and these functions do not)
        return None
    bound.arguments.pop(next(iter(bound.arguments)))  # (x: the call's own)
    return functools.partial(fn, **bound.arguments)


# scipy's frozen univariate distribution (rv_continuous_frozen and rv_discrete_frozen's base)
_FROZEN_SCALAR = next(c for c in type(ss.norm()).__mro__ if c.__name__ == "rv_frozen")
# scipy's frozen multivariate distributions -> (the name of this module's functions, their
# positional parameters, their keyword parameters) read from the object
_FROZEN_MULTI = {
    type(ss.multivariate_normal(np.zeros(1), np.ones((1, 1)))): lambda d: (
        "multivariate_normal", (), {"mean": d.mean, "cov": d.cov,
                                    "allow_singular": getattr(d, "allow_singular", False)}),
    type(ss.dirichlet(np.ones(2))): lambda d: ("dirichlet", (d.alpha,), {}),
}


def frozen_distribution(obj) -> bool:
    """Is `obj` a distribution scipy froze (``norm(0, 1)``), whose methods `frozen_method`
    substitutes?"""
    return isinstance(obj, _FROZEN_SCALAR) or type(obj) in _FROZEN_MULTI


def owners() -> list:
    """The distribution objects whose methods are substituted (tape mode shows them through
    a view that substitutes those methods: tape_builtins.MethodsView)."""
    return [getattr(ss, n.rsplit("_", 1)[0]) for n in _NAMES]


# --- frozen distributions: `norm(mu, s).logpdf(x)` -------------------------------------------
# Calling a distribution with its parameters builds the class of the same name here in its
# place (`class_substitutes`; source mode's frontend/objects.py builds it as a user class,
# tape mode's MethodsView calls it): its methods are the functions above at those parameters.
# A frozen distribution made outside the differentiated function (a module's `PRIOR =
# norm(0, 1)`) is scipy's own object: its methods are refused where a differentiated value
# reaches them.

class _LocScale:
    def __init__(self, loc=0.0, scale=1.0):
        self.loc = loc
        self.scale = scale


class norm_frozen(_LocScale):
    def logpdf(self, x):
        return norm_logpdf(x, self.loc, self.scale)

    def pdf(self, x):
        return norm_pdf(x, self.loc, self.scale)

    def cdf(self, x):
        return norm_cdf(x, self.loc, self.scale)

    def logcdf(self, x):
        return norm_logcdf(x, self.loc, self.scale)

    def sf(self, x):
        return norm_sf(x, self.loc, self.scale)

    def logsf(self, x):
        return norm_logsf(x, self.loc, self.scale)


class laplace_frozen(_LocScale):
    def logpdf(self, x):
        return laplace_logpdf(x, self.loc, self.scale)

    def pdf(self, x):
        return laplace_pdf(x, self.loc, self.scale)


class cauchy_frozen(_LocScale):
    def logpdf(self, x):
        return cauchy_logpdf(x, self.loc, self.scale)

    def pdf(self, x):
        return cauchy_pdf(x, self.loc, self.scale)


class logistic_frozen(_LocScale):
    def logpdf(self, x):
        return logistic_logpdf(x, self.loc, self.scale)

    def pdf(self, x):
        return logistic_pdf(x, self.loc, self.scale)

    def cdf(self, x):
        return logistic_cdf(x, self.loc, self.scale)


class expon_frozen(_LocScale):
    def logpdf(self, x):
        return expon_logpdf(x, self.loc, self.scale)

    def pdf(self, x):
        return expon_pdf(x, self.loc, self.scale)


class uniform_frozen(_LocScale):
    def logpdf(self, x):
        return uniform_logpdf(x, self.loc, self.scale)

    def pdf(self, x):
        return uniform_pdf(x, self.loc, self.scale)


class t_frozen:
    def __init__(self, df, loc=0.0, scale=1.0):
        self.df = df
        self.loc = loc
        self.scale = scale

    def logpdf(self, x):
        return t_logpdf(x, self.df, self.loc, self.scale)

    def pdf(self, x):
        return t_pdf(x, self.df, self.loc, self.scale)


class gamma_frozen:
    def __init__(self, a, loc=0.0, scale=1.0):
        self.a = a
        self.loc = loc
        self.scale = scale

    def logpdf(self, x):
        return gamma_logpdf(x, self.a, self.loc, self.scale)

    def pdf(self, x):
        return gamma_pdf(x, self.a, self.loc, self.scale)


class beta_frozen:
    def __init__(self, a, b, loc=0.0, scale=1.0):
        self.a = a
        self.b = b
        self.loc = loc
        self.scale = scale

    def logpdf(self, x):
        return beta_logpdf(x, self.a, self.b, self.loc, self.scale)

    def pdf(self, x):
        return beta_pdf(x, self.a, self.b, self.loc, self.scale)


class poisson_frozen:
    def __init__(self, mu, loc=0):
        self.mu = mu
        self.loc = loc

    def logpmf(self, k):
        return poisson_logpmf(k, self.mu, self.loc)

    def pmf(self, k):
        return poisson_pmf(k, self.mu, self.loc)


class bernoulli_frozen:
    def __init__(self, p, loc=0):
        self.p = p
        self.loc = loc

    def logpmf(self, k):
        return bernoulli_logpmf(k, self.p, self.loc)

    def pmf(self, k):
        return bernoulli_pmf(k, self.p, self.loc)


class binom_frozen:
    def __init__(self, n, p, loc=0):
        self.n = n
        self.p = p
        self.loc = loc

    def logpmf(self, k):
        return binom_logpmf(k, self.n, self.p, self.loc)

    def pmf(self, k):
        return binom_pmf(k, self.n, self.p, self.loc)


class multivariate_normal_frozen:
    def __init__(self, mean=None, cov=1, allow_singular=False):
        self.mean = mean
        self.cov = cov
        self.allow_singular = allow_singular

    def logpdf(self, x):
        return multivariate_normal_logpdf(x, self.mean, self.cov, self.allow_singular)

    def pdf(self, x):
        return multivariate_normal_pdf(x, self.mean, self.cov, self.allow_singular)


class dirichlet_frozen:
    def __init__(self, alpha):
        self.alpha = alpha

    def logpdf(self, x):
        return dirichlet_logpdf(x, self.alpha)

    def pdf(self, x):
        return dirichlet_pdf(x, self.alpha)
