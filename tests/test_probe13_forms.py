"""The classes of failure the ninth probe of the front door found (tests/corpus_probe/
wild_repos8.py), one focused test each: the value equals calling the function, the gradient
matches central differences, in source and tape mode (and fuse=True where it lowers)."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

MODES = [{"mode": "source"}, {"mode": "tape"}, {"fuse": True}]
MODE_IDS = ["source", "tape", "fuse"]


def _check(fn, args, wrt=0, options=None, tol=1e-6):
    value = fn(*args)
    out, got = srcad.value_and_grad(fn, wrt=wrt, **(options or {}))(*args)
    assert np.array_equal(np.asarray(out), np.asarray(value)), (out, value)
    want = numerical_grad(fn, args, wrt=wrt)
    assert rel_error(got, want) < tol


# ---- an adjoint alias across a branch that rebinds what it reads --------------------------

def _shift_with_branch(u0):
    p = u0 * 1.0
    u = u0 * 1.5
    for i in range(3):
        s = np.sin(u)
        if i % 2 == 0:
            n = s - p
        else:
            n = s * 2.0
        p = u
        u = n
    return np.sum(u)


def _wave_levels(u0, c):
    u_prev = u0                      # (an argument: the branch on `u_prev is u0` is srcad's)
    u = u0.copy()
    for _ in range(4):
        lap = np.roll(u, 1) + np.roll(u, -1) - 2 * u
        u_next = 2 * u - u_prev + (c[0] ** 2) * lap
        u_prev, u = u, u_next
    return np.sum(u ** 2) - np.sum(u * u_prev)


_X = np.linspace(-1.0, 1.0, 5)


@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("fn,args,wrt", [
    (_shift_with_branch, (_X,), 0),
    (_wave_levels, (np.exp(-_X ** 2), np.array([0.6])), (0, 1))], ids=["branch", "wave"])
def test_shifted_levels_through_a_branch(fn, args, wrt, options):
    """`p = u; u = n` in a loop whose body branches on something reading p (a user `if`, or
    the `u_prev is u0` branch srcad makes for a name that may be an argument): the adjoint of
    u was left an alias of `dp` across the branch, whose arms rebind dp, so the backward read
    p's new adjoint for u's (silently wrong gradients in source mode; tape mode was right)."""
    _check(fn, args, wrt, options)


# ---- helpers' defaults: a function left to a keyword-only default, `act=None` -----------------

def _dense_kwonly(x, W, *, act=np.tanh):
    return act(x @ W)


def _dense_none(x, W, b=None, *, act=None):
    y = x @ W
    if b is not None:
        y = y + b
    if act is not None:
        y = act(y)
    return y


def _kwonly_default(W, x):
    return np.sum(_dense_kwonly(x, W)) + np.sum(_dense_kwonly(x, W, act=np.sin) ** 2)


def _none_defaults(W, b, x):
    h = _dense_none(x, W, b, act=np.tanh)          # (given)
    out = _dense_none(h, W)                        # (both left to None)
    return np.sum(_dense_none(out, W, None, act=np.exp)) + np.sum(out ** 2)


_R = np.random.default_rng(13)
_W = _R.standard_normal((3, 3)) * 0.5
_B = _R.standard_normal(3)
_XX = _R.standard_normal((4, 3))


@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("fn,args,wrt", [(_kwonly_default, (_W, _XX), 0),
                                         (_none_defaults, (_W, _B, _XX), (0, 1))],
                         ids=["kwonly-ufunc-default", "none-defaults"])
def test_function_and_none_defaults_of_a_helper(fn, args, wrt, options):
    """`def dense(x, W, *, act=np.tanh)` called without `act`: was an internal error (the
    default spelled `<ufunc 'tanh'>` in generated code); `def dense(x, W, b=None, *,
    act=None)` with `if act is not None: y = act(y)`, called leaving act None (or passing
    None): was refused ('`act` has no derivative rule'), the branch Python never takes."""
    _check(fn, args, wrt, options)


# ---- enumerate(xs, start) ----------------------------------------------------------------------

def _enumerate_start(Ws, x):
    for depth, W in enumerate(reversed(Ws), start=1):
        x = np.tanh(x @ W) * depth
    for k, W in enumerate(Ws, 2):
        x = x + np.sin(x @ W) / k
    first = len(Ws)
    for pair in enumerate(Ws, first):
        x = x * pair[0] + x @ pair[1]
    scaled = [np.sum(np.tanh(x @ W)) * k for k, W in enumerate(Ws, start=first)]
    return np.sum(x ** 2) + sum(scaled) + sum(k * v for k, v in enumerate([0.5, 2.0], 3))


@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
def test_enumerate_with_a_start(options):
    """`enumerate(xs, start=1)`, `enumerate(xs, 2)`, a start read from a name, a target
    that is not unpacked, and in comprehensions: was refused ('a `for` loop with a tuple
    target', 'this use of enumerate()')."""
    _check(_enumerate_start, ([_W, _W.T * 0.5], _XX * 0.3), 0, options)


# ---- max / min of three or more numbers; itertools.pairwise -----------------------------------

def _softmin3(a, b, c, gamma=0.5):
    a, b, c = -a / gamma, -b / gamma, -c / gamma
    m = max(a, b, c)
    return -gamma * (np.log(np.exp(a - m) + np.exp(b - m) + np.exp(c - m)) + m)


def _soft_dtw(x, y):
    D = (x[:, None] - y[None, :]) ** 2
    n, m = D.shape
    R = np.full((n + 1, m + 1), np.inf)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            R[i, j] = D[i - 1, j - 1] + _softmin3(R[i - 1, j - 1], R[i - 1, j], R[i, j - 1])
    return R[n, m] + min(np.sum(x), np.sum(y), 0.25, np.sum(x[:2] * y))


def _pairwise(Ws, x):
    import itertools
    pen = 0.0
    for A, B in itertools.pairwise(Ws):
        pen = pen + np.sum((A @ B) ** 2)
    steps = [np.sum((b - a) ** 2) for a, b in itertools.pairwise(x)]
    return pen + sum(steps)


@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
def test_max_and_min_of_three_numbers(options):
    """`max(a, b, c)` / `min(a, b, c, d)` of differentiated numbers (soft-DTW's soft minimum):
    was refused ('`max` has no derivative rule'); now Python's comparisons, the first of the
    largest, as `max([a, b, c])` already was."""
    _check(_soft_dtw, (np.array([0.3, -1.2, 0.8]), np.array([0.1, 0.9])), (0, 1), options)


@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
def test_itertools_pairwise(options):
    """`for A, B in itertools.pairwise(Ws)` and a comprehension over `pairwise(x)`: was
    refused ('`itertools.pairwise` has no derivative rule'); now zip(xs, xs[1:])."""
    _check(_pairwise, ([_W, _W.T, _W * 0.5], _XX[0]), (0, 1), options)


# ---- a user function that builds and returns an object ----------------------------------------

from dataclasses import dataclass  # noqa: E402


@dataclass
class _Gaussian:
    mu: np.ndarray
    logvar: np.ndarray

    @property
    def std(self):
        return np.exp(0.5 * self.logvar)

    def sample(self, eps):
        return self.mu + self.std * eps


class _Pair:
    def __init__(self, h, c):
        self.h, self.c = h, c


def _encode(W, x):
    h = np.tanh(x @ W)
    return _Gaussian(h[:, :2], h[:, 2:])


def _make_pair(W, x):
    pair = _Pair(W @ x, np.sin(x))
    return pair


def _returned_objects(W, x, eps):
    q = _encode(W, x)
    p = _make_pair(W.T, x[0])
    return np.sum(q.sample(eps) ** 2) + np.sum(p.h[:3] * p.c) + np.sum(q.std)


@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
def test_a_function_returning_an_object_it_builds(options):
    """`q = encode(W, x)` returning `Gaussian(mu, logvar)` (a dataclass with a property and a
    method), `p = make_pair(..)` returning a name it assigned a built object: was refused
    ('the method `.sample()` has no derivative rule'); the caller now holds the object, as
    it does one a method builds and returns."""
    r = np.random.default_rng(5)
    args = (r.standard_normal((3, 4)) * 0.5, r.standard_normal((2, 3)), r.standard_normal((2, 2)))
    _check(_returned_objects, args, 0, options)


# ---- getattr(np, CONFIG["act"]) of a module-level settings dict --------------------------------

CONFIG = {"act": "tanh", "layers": 2}


def _config_act(W, x):
    act = getattr(np, CONFIG["act"])
    for _ in range(CONFIG["layers"]):
        x = act(x @ W)
    return np.sum(x ** 2)


@pytest.mark.parametrize("options", MODES[:2], ids=MODE_IDS[:2])
def test_getattr_of_numpy_by_a_module_config_dict(options):
    """`getattr(np, CONFIG["act"])`: was refused ('`np` (module) used as a value'); the
    lookups are guarded: setting CONFIG["act"] or rebinding CONFIG changes the next call."""
    global CONFIG
    saved = CONFIG
    try:
        g = srcad.grad(_config_act, **options)
        for change in (None, ("act", "sin"), "rebind"):
            if change == "rebind":
                CONFIG = {"act": "cos", "layers": 1}
            elif change is not None:
                CONFIG[change[0]] = change[1]
            want = numerical_grad(_config_act, (_W, _XX))
            assert rel_error(g(_W, _XX), want) < 1e-6
    finally:
        saved["act"] = "tanh"
        CONFIG = saved


# ---- a function picked by an object's key, in a method called on two objects -----------------

_PICK = {"log": np.exp, "id": lambda e: e * 3.0}


class _Glm:
    def __init__(self, link="log"):
        self.link = link

    def mean(self, b):
        inverse = _PICK[self.link]
        return np.sum(inverse(b))


def _two_objects_two_picks(b):
    first, second = _Glm(), _Glm("id")
    return first.mean(b) + 10.0 * second.mean(b) + _Glm("id").mean(b * 2.0)


@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
def test_a_method_picking_a_function_per_object(options):
    """`inverse = REG[self.link]` in a method called on objects with different links: source
    mode called the first object's pick for every object (a silently wrong value and
    gradient): normalising one specialisation of the method rebound the name the other's
    call read (objects.py `bind` gave a name its caller already gave another function)."""
    _check(_two_objects_two_picks, (_X,), 0, options)


# ---- a registry of tuples of functions ------------------------------------------------------

_LINKS = {"log": (np.log, np.exp), "identity": (lambda m: m, lambda e: e + 0.5)}


class _Poisson:
    def __init__(self, link="log"):
        self.link = link

    def deviance(self, beta, X, y):
        _, inverse = _LINKS[self.link]
        mu = np.maximum(inverse(X @ beta), 1e-12)
        return 2 * np.sum(y * np.log(np.maximum(y, 1e-12) / mu) - (y - mu))


def _tuple_registry(beta, X, y, name="log"):
    link = _LINKS[name][0]
    first = _Poisson().deviance(beta, X, y)
    return first + _Poisson("identity").deviance(beta + 3.0, X, y) + np.sum(link(beta ** 2 + 1))


@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
def test_functions_unpacked_from_a_registry_of_tuples(options):
    """`_, inverse = LINKS[self.link]` and `LINKS[name][0]` of a module dict of (link,
    inverse) tuples: was refused ('`inverse` has no derivative rule')."""
    r = np.random.default_rng(3)
    args = (r.standard_normal(3) * 0.3, r.random((6, 3)), np.array([0, 1, 3, 0, 2, 1.0]))
    _check(_tuple_registry, args, 0, options)


# ---- zip of a display and strings known here, each picking a registered class ------------------

_ACTS = {}


def _register(name):
    def deco(cls):
        _ACTS[name] = cls
        return cls
    return deco


@_register("softplus")
class _Softplus:
    def __call__(self, x):
        return np.logaddexp(0.0, x)


@_register("sin")
class _Sin:
    def __call__(self, x):
        return np.sin(x)


def _zip_registry(W1, W2, x, names=("softplus", "sin")):
    h = x
    for W, name in zip((W1, W2), names):
        act = _ACTS[name]()
        h = act(h @ W)
    return np.sum(h ** 2) + len(name)


@pytest.mark.parametrize("options", MODES, ids=MODE_IDS)
def test_zip_of_weights_and_known_names_picking_classes(options):
    """`for W, name in zip((W1, W2), names)` with `act = REGISTRY[name]()` (classes a
    decorator registered): was refused ('`act` has no derivative rule'); the loop is written
    out once per pair, as a loop over the names alone is. Other names give other code."""
    g = srcad.grad(_zip_registry, wrt=(0, 1), **options)
    for names in (("softplus", "sin"), ("sin", "softplus")):
        args = (_W, _W.T, _XX, names)
        want = numerical_grad(_zip_registry, args, wrt=(0, 1))
        assert rel_error(g(*args), want) < 1e-6
