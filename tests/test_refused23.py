"""Forms srcad refused until issue 23, each checked as Python runs it: the value equal to
calling the function, the gradient against central differences, in source mode, tape mode
and fused; where the function reads a module global, again after rebinding it between calls
(the same transformed function must follow, as Python would).

Forms: a scipy.stats distribution frozen at module level (``PRIOR.logpdf(w)``); a tuple tree
of arrays as the differentiated argument; ...
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import reduce

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

stats = pytest.importorskip("scipy.stats")

MODES = [{}, {"mode": "tape"}, {"fuse": True}]
MODE_IDS = ["source", "tape", "fuse"]
# (fused, the cases that build many specialisations: slow, `pytest -m slow`)
MODES_SLOW_FUSE = [{}, {"mode": "tape"}, pytest.param({"fuse": True}, marks=pytest.mark.slow)]


def _tree_error(g, fd):
    if isinstance(g, (tuple, list)):
        assert isinstance(fd, type(g)) and len(g) == len(fd), (g, fd)
        return max(_tree_error(a, b) for a, b in zip(g, fd))
    assert np.shape(g) == np.shape(fd), (np.shape(g), np.shape(fd))
    return rel_error(g, fd)


def _check(fn, args, wrt=0, opts=None, exact=True):
    """value_and_grad(fn) at args: the value calling fn gives, the gradient by differences."""
    value, g = srcad.value_and_grad(fn, wrt=wrt, **(opts or {}))(*args)
    want = fn(*args)
    if exact:
        assert value == want, (value, want)
    else:
        assert np.isclose(value, want, rtol=1e-12, atol=1e-12), (value, want)
    fd = numerical_grad(fn, args, wrt=wrt)
    assert _tree_error(g, fd) < 1e-6, (g, fd)
    return value, g


# --- 1. a distribution scipy froze at module level -------------------------------------------
PRIOR = stats.norm(0.0, 1.0)
NOISE = stats.norm(loc=0.5, scale=2.0)
PRIORS = stats.t(4.0, scale=1.5)
MVN = stats.multivariate_normal(np.array([0.1, -0.2, 0.3]), np.diag([1.0, 2.0, 0.5]))


def log_posterior(w, X, y):
    """A Bayesian regression: the prior's log density plus the likelihood's."""
    return np.sum(PRIOR.logpdf(w)) + np.sum(NOISE.logpdf(y - X @ w))


def heavy_tailed(w):
    """A Student-t prior read through a helper, beside a multivariate one, keyword argument."""
    return -np.sum(_prior_term(w)) - MVN.logpdf(x=w) + 0.1 * np.sum(w ** 2)


def _prior_term(w):
    return PRIORS.logpdf(w)


def penalised(w, steps):
    """The frozen objects used in a loop and a branch, and a method run as written beside."""
    total = 0.0
    for i in range(steps):
        if i % 2 == 0:
            total = total + np.sum(PRIOR.logcdf(w * (i + 1.0)))
        else:
            total = total - np.sum(NOISE.pdf(w + i))
    return total + PRIOR.mean() * np.sum(w)


W = np.array([0.3, -0.7, 1.1])
XS = np.array([[1.0, 0.5, -0.2], [0.3, -1.0, 0.8], [0.0, 0.4, 1.5], [-0.6, 0.2, 0.1]])
YS = np.array([0.5, -0.3, 1.2, 0.1])


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_frozen_distribution_at_module_level(opts, monkeypatch):
    t = srcad.value_and_grad(log_posterior, **opts)
    first, _ = _check(log_posterior, (W, XS, YS), opts=opts)
    # rebinding the module's prior: the same transformed function now follows the new one
    monkeypatch.setitem(globals(), "PRIOR", stats.norm(1.0, 0.5))
    value, g = t(W, XS, YS)
    assert value == log_posterior(W, XS, YS) != first
    assert rel_error(g, numerical_grad(log_posterior, (W, XS, YS))) < 1e-6
    # a prior of another family, its parameters by keyword
    monkeypatch.setitem(globals(), "PRIOR", stats.laplace(loc=0.2, scale=3.0))
    value, g = t(W, XS, YS)
    assert np.isclose(value, log_posterior(W, XS, YS), rtol=1e-13)
    assert rel_error(g, numerical_grad(log_posterior, (W, XS, YS))) < 1e-6


@pytest.mark.parametrize("opts", MODES_SLOW_FUSE, ids=MODE_IDS)
def test_frozen_distributions_through_a_helper_and_keywords(opts, monkeypatch):
    _check(heavy_tailed, (W,), opts=opts, exact=False)
    t = srcad.value_and_grad(heavy_tailed, **opts)
    monkeypatch.setitem(globals(), "PRIORS", stats.t(2.5, loc=0.3))
    value, g = t(W)
    assert np.isclose(value, heavy_tailed(W), rtol=1e-12)
    assert rel_error(g, numerical_grad(heavy_tailed, (W,))) < 1e-6


@pytest.mark.parametrize("opts", MODES_SLOW_FUSE, ids=MODE_IDS)
def test_frozen_distributions_in_loops_and_branches(opts, monkeypatch):
    _check(penalised, (W, 3), opts=opts, exact=False)
    t = srcad.value_and_grad(penalised, **opts)
    monkeypatch.setitem(globals(), "NOISE", stats.norm(-1.0, 0.7))
    monkeypatch.setitem(globals(), "PRIOR", stats.norm(2.0, 1.0))
    value, g = t(W, 3)
    assert np.isclose(value, penalised(W, 3), rtol=1e-12)
    assert rel_error(g, numerical_grad(penalised, (W, 3))) < 1e-6


# --- 3. a tuple tree of arrays as the differentiated argument ---------------------------------
def _tree(rng):
    return ((rng.normal(size=(3, 4)), rng.normal(size=4)),
            (rng.normal(size=(4, 2)), rng.normal(size=2)))


def mlp_tree(params, x):
    (W1, b1), (W2, b2) = params
    h = np.tanh(x @ W1 + b1)
    return np.sum((h @ W2 + b2) ** 2)


def mlp_tree_loop(params, x, scale=1.0):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return scale * np.sum((h @ W + b) ** 2)


def _layer(p, h):
    W, b = p
    return np.tanh(h @ W + b)


def mlp_tree_nested(tree, x):
    """A deeper, uneven tree -- (layers, scalar) -- its layers handed to a helper, indexed."""
    layers, temperature = tree
    h = x
    for i in range(len(layers)):
        h = _layer(layers[i], h)
    return np.sum(h ** 2) * temperature + layers[0][1][0] ** 2


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_tuple_tree_argument(opts):
    rng = np.random.default_rng(0)
    params, x = _tree(rng), rng.normal(size=(5, 3))
    _, g = _check(mlp_tree, (params, x), opts=opts)
    assert type(g) is tuple and all(type(p) is tuple and len(p) == 2 for p in g)
    assert g[0][0].shape == (3, 4) and g[1][1].shape == (2,)
    _check(mlp_tree_loop, (params, x), wrt="params", opts=opts)
    grad = srcad.grad(mlp_tree_loop, **opts)
    assert _tree_error(grad(params, x, scale=2.0),
                       numerical_grad(lambda p: mlp_tree_loop(p, x, scale=2.0), (params,))) < 1e-6


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_uneven_tuple_tree_argument(opts):
    rng = np.random.default_rng(1)
    tree = (_tree(rng), 1.5)
    _, g = _check(mlp_tree_nested, (tree, rng.normal(size=(5, 3))), opts=opts)
    assert type(g) is tuple and type(g[0]) is tuple and np.shape(g[1]) == ()


# --- 2. layers built from a module's list of dicts: `Dense(**spec)` ---------------------------
class Dense:
    def __init__(self, n_in, n_out, act="tanh", scale=1.0):
        self.W = np.linspace(-1.0, 1.0, n_in * n_out).reshape(n_in, n_out) * scale
        self.act = act

    def __call__(self, x):
        h = x @ self.W
        return np.tanh(h) if self.act == "tanh" else h


@dataclass
class Power:
    factor: float
    power: int = 1

    def __call__(self, x):
        return self.factor * x ** self.power


ARCH = [dict(n_in=3, n_out=3), dict(n_in=3, n_out=2, act="linear")]
HEAD = {"factor": 2.0}
TAIL = {"act": "linear"}
WIDTHS = (3, 2)


def built_from_specs(x, W):
    layers = []
    for spec in ARCH:
        layers.append(Dense(**spec))
    layers.append(Power(**HEAD))
    h = x @ W
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)


def built_by_comprehension(x, W, scale=0.5):
    """A comprehension, an explicit keyword beside the spread, an indexed spec."""
    layers = [Dense(scale=scale, **spec) for spec in ARCH[:-1]]
    last = Dense(3, WIDTHS[-1], **TAIL)
    h = x @ W
    layers.append(last)
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)


def _dense_fn(h, W, act="tanh", scale=1.0):
    z = h @ W * scale
    return np.tanh(z) if act == "tanh" else z


FN_SPECS = [dict(act="tanh"), dict(act="linear", scale=2.0)]


def functions_from_specs(x, W):
    h = x
    for spec in FN_SPECS:
        h = _dense_fn(h, W, **spec)
    return np.sum(h ** 2)


X3 = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4]])
W33 = np.array([[0.5, 0.1, -0.2], [0.0, 0.4, 0.3], [-0.3, 0.2, 0.6]])


@pytest.mark.parametrize("opts", MODES_SLOW_FUSE, ids=MODE_IDS)
def test_layers_built_from_a_module_list_of_dicts(opts, monkeypatch):
    t = srcad.value_and_grad(built_from_specs, wrt=(0, 1), **opts)

    def check():
        value, g = t(X3, W33)
        assert value == built_from_specs(X3, W33)
        fd = numerical_grad(built_from_specs, (X3, W33), wrt=(0, 1))
        assert _tree_error(g, fd) < 1e-6

    check()
    # the dicts read at each call: changed in place, a spec appended, the list rebound
    arch = [dict(d) for d in ARCH]
    monkeypatch.setitem(globals(), "ARCH", arch)
    check()
    arch[1]["act"] = "tanh"
    check()
    arch.append(dict(n_in=2, n_out=2, scale=0.3))
    check()
    monkeypatch.setitem(globals(), "ARCH", [dict(n_in=3, n_out=1, act="linear")])
    check()
    monkeypatch.setitem(globals(), "HEAD", {"factor": 0.5, "power": 2})
    check()
    # a key that is no parameter: Python's TypeError, as calling the function raises
    monkeypatch.setitem(globals(), "HEAD", {"factor": 0.5, "bogus": 2})
    with pytest.raises(TypeError, match="bogus"):
        built_from_specs(X3, W33)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        t(X3, W33)


@pytest.mark.parametrize("opts", MODES_SLOW_FUSE, ids=MODE_IDS)
def test_layers_built_by_a_comprehension_of_specs(opts, monkeypatch):
    _check(built_by_comprehension, (X3, W33), wrt=(0, 1), opts=opts)
    _check(functions_from_specs, (X3, W33), wrt=(0, 1), opts=opts)
    t = srcad.value_and_grad(built_by_comprehension, **opts)
    monkeypatch.setitem(globals(), "TAIL", {"n_in": 3})  # (Python: "multiple values")
    with pytest.raises(TypeError, match="multiple values for argument 'n_in'"):
        built_by_comprehension(X3, W33)
    with pytest.raises(TypeError, match="multiple values for argument 'n_in'"):
        t(X3, W33)


def grows_its_spec_list(x, W):
    if len(ARCH) < 3:
        ARCH.append(dict(n_in=2, n_out=2))
    layers = []
    for spec in ARCH:
        layers.append(Dense(**spec))
    h = x @ W
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)


def test_a_spec_list_changed_during_the_call_is_refused(monkeypatch):
    """The loop is unrolled by the list's length when the call begins: a list the call itself
    grows before the loop is refused where the loop runs, never walked by its old length."""
    monkeypatch.setitem(globals(), "ARCH", [dict(n_in=3, n_out=3), dict(n_in=3, n_out=2)])
    with pytest.raises(srcad.SrcadError, match="`ARCH` had 2 items") as err:
        srcad.value_and_grad(grows_its_spec_list, wrt=1)(X3, W33)
    assert "for spec in ARCH:" in str(err.value)


# --- 4. generators: a generator function defined inside, generator expressions --------------
def nested_generator(x, n):
    def steps(v, scale=1.0):
        h = v
        for i in range(n):
            if i % 2 == 0:
                h = np.tanh(h * scale)
            else:
                h = np.sin(h)
            yield h

    total = 0.0
    for h in steps(x, scale=0.5):
        total = total + np.sum(h ** 2)
    hs = list(steps(x))
    return total + np.sum(hs[-1]) + sum(np.sum(h) for h in steps(2 * x))


def nested_generator_of_pairs(x):
    w = x * 2.0

    def pairs(v):
        for k in range(2):
            for j in range(2):
                if k <= j:
                    yield v[k] * v[j] * w[k]
        return

    return sum(pairs(x)) + max(pairs(x)) + np.sum(np.stack(tuple(pairs(x))))


def loop_over_a_generator_expression(x):
    """The loop's body changes what the generator expression reads: Python steps the
    generator between the body's runs (its name `k` shadows nothing outside)."""
    s, k = 1.0, 10.0
    for v in (x * s + k for k in range(3) if k != 1):
        s = s + np.sum(v)
        if s > 100.0:
            break
    else:
        s = s * 2.0
    return s * k


def changes_what_the_generator_reads(x):
    w = x * 2.0

    def gen():
        for k in range(3):
            yield w * k

    s = 0.0
    for v in gen():
        w = w + 1.0
        s = s + np.sum(v)
    return s


def changes_what_a_header_generator_reads(x):
    w, s = x, 0.0
    for a, b in zip(x, (w * k for k in range(3))):
        w = w * 2.0
        s = s + a * np.sum(b)
    return s


def _batches(v):
    for k in range(3):
        yield v * k


def writes_into_what_its_generator_reads(x):
    buf = x.copy()
    s = 0.0
    for b in _batches(buf):
        buf[0] = 5.0  # (Python's generator sees it at its next step)
        s = s + np.sum(b * x)
    return s


def rebinds_what_it_gave_its_generator(x):
    h, s = x, 0.0
    for b in _batches(h):
        h = h * 2.0  # (a new array: the generator keeps the one it was given)
        s = s + np.sum(b * h)
    return s


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_generator_function_defined_inside(opts):
    _check(nested_generator, (W, 3), opts=opts)
    _check(nested_generator_of_pairs, (W,), opts=opts)


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_loop_over_a_generator_expression_steps_it(opts):
    _check(loop_over_a_generator_expression, (W,), opts=opts)
    _check(loop_over_a_generator_expression, (W * 40.0,), opts=opts)  # (the break taken)


@pytest.mark.parametrize("fn, says", [
    (changes_what_the_generator_reads, "changes `w`, which the generator"),
    (changes_what_a_header_generator_reads, "changes `w`, which the generator"),
    (writes_into_what_its_generator_reads, "writes into `buf`, which the generator")])
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_loop_changing_what_its_generator_reads_is_refused(fn, says, mode):
    """(Before issue 23 the last two gave a wrong value and gradient: the generator ran whole
    before the loop.)"""
    with pytest.raises(srcad.SrcadError, match=says) as err:
        srcad.value_and_grad(fn, mode=mode)(W)
    assert "for " in str(err.value) and "list(" in str(err.value)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_loop_rebinding_what_it_gave_its_generator_is_followed(mode):
    _check(rebinds_what_it_gave_its_generator, (W,), opts={"mode": mode})


# --- 5. functools.reduce over a list of built objects ----------------------------------------
class Affine:
    def __init__(self, W, act=True):
        self.W = W
        self.act = act

    def __call__(self, x):
        h = x @ self.W
        return np.tanh(h) if self.act else h


def _apply(h, layer):
    return layer(h)


class Stack:
    def __init__(self, Ws):
        self.layers = [Affine(W, i < len(Ws) - 1) for i, W in enumerate(Ws)]

    def forward(self, x):
        return reduce(lambda h, l: l(h) + 0.1 * h if h.shape == l.W.shape[:1] else l(h),
                      self.layers, x)


def reduced_with_a_lambda(W1, W2, x):
    layers = [Affine(W1), Affine(W2, act=False)]
    h = functools.reduce(lambda h, layer: layer(h), layers, x)
    return np.sum(h ** 2)


def reduced_with_a_function_and_in_a_method(W1, W2, x):
    layers = [Affine(W1), Affine(W2, act=False)]
    model = Stack([W1, W2])
    return np.sum(reduce(_apply, layers, x) ** 2) + np.sum(model.forward(x))


def reduced_in_a_loop(W1, W2, x):
    layers = [Affine(W1), Affine(W2, act=False)]
    out = x
    for k in range(2):  # (the lambda reads the loop's k)
        out = functools.reduce(lambda h, layer: layer(h) * (k + 1), layers[:1], out)
    return np.sum(reduce(lambda h, layer: layer(h), layers[1:], out))


RW1 = np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.6], [0.7, 0.2, 0.3]])
RW2 = np.array([[0.3, -0.2], [0.5, 0.1], [-0.4, 0.6]])
RX = np.array([[0.2, -0.1, 0.4], [1.0, 0.3, -0.5], [-0.7, 0.8, 0.1], [0.3, 0.3, 0.3]])


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("fn", [reduced_with_a_lambda, reduced_with_a_function_and_in_a_method,
                                reduced_in_a_loop])
def test_reduce_over_built_layers(fn, opts):
    _check(fn, (RW1, RW2, RX), wrt=(0, 1, 2), opts=opts)


# --- 6. iter / next over a list of functions or layers ---------------------------------------
ACTS = [np.tanh, np.sin, np.cos]


def next_of_local_functions(x):
    fs = [np.tanh, np.sin]
    it = iter(fs)
    a = next(it)(x)
    b = next(it)(a)
    return np.sum(b)


def first_layer_then_the_rest(W1, W2, x):
    layers = [Affine(W1), Affine(W2, act=False)]
    it = iter(layers)
    h = next(it)(x)
    for layer in it:
        h = layer(h)
    return np.sum(h ** 2)


def next_of_module_functions(x):
    it = iter(ACTS)
    first = next(it)
    s = first(x)
    for f in it:
        s = s + f(x) * 2.0
    return np.sum(s)


def next_of_arrays(x):
    it = iter([x * 2.0, x ** 2])
    a = next(it)
    return np.sum(a * next(it))


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_iter_next_over_functions_and_layers(opts):
    _check(next_of_local_functions, (W,), opts=opts)
    _check(next_of_arrays, (W,), opts=opts)
    _check(first_layer_then_the_rest, (RW1, RW2, RX), wrt=(0, 1, 2), opts=opts)


def next_in_a_comprehension(x):
    fs = [np.tanh, np.sin, np.cos]
    it = iter(fs)
    ys = [next(it)(x * k) for k in range(2)]  # (a next() per item: not one read)
    return np.sum(ys[0] + ys[1])


def next_maybe(x, c=False):
    it = iter([np.tanh, np.sin])
    a = c and next(it)  # (read on one path only)
    return np.sum(next(it)(x)) + (0.0 if a is False else 1.0)


@pytest.mark.parametrize("fn", [next_in_a_comprehension, next_maybe])
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_next_read_a_number_of_times_not_known_stays_refused(fn, mode):
    with pytest.raises(srcad.SrcadError):
        srcad.value_and_grad(fn, mode=mode)(W)


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_iter_next_over_a_module_list_read_at_each_call(opts, monkeypatch):
    t = srcad.value_and_grad(next_of_module_functions, **opts)

    def check():
        value, g = t(W)
        assert value == next_of_module_functions(W)
        assert rel_error(g, numerical_grad(next_of_module_functions, (W,))) < 1e-6

    check()
    acts = list(ACTS)
    monkeypatch.setitem(globals(), "ACTS", acts)
    check()
    acts[1] = np.arctan  # (changed in place)
    check()
    acts.append(np.exp)
    check()
    monkeypatch.setitem(globals(), "ACTS", (np.sin, np.tanh))  # (rebound, a tuple)
    check()


# --- 7. np.nditer over an array, read only ---------------------------------------------------
def running_sum_over_nditer(x):
    """Order matters (each item halves what came before): nditer's own order, memory order."""
    s = 0.0
    for v in np.nditer(x):
        s = s * 0.5 + v ** 2
    return s


def nditer_with_options(x, W):
    s = 0.0
    for v in np.nditer(x.T @ W, order="F", op_flags=["readonly"], flags=["zerosize_ok"]):
        if v > 0:
            s = s + np.tanh(v)
        else:
            s = s - 0.5 * v
    return s + _nditer_helper(x)


def _nditer_helper(a):
    t = 0.0
    for v in np.nditer(np.sin(a), order="C"):
        t = t * 0.9 + v
    return t


def writes_through_nditer(x):
    for v in np.nditer(x, op_flags=["readwrite"]):
        v[...] = v * 2.0
    return np.sum(x)


NX = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4]])
NW = np.array([[0.5, -1.0], [0.3, 0.8]])


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
def test_nditer_read_only(opts):
    _check(running_sum_over_nditer, (NX,), opts=opts)
    _check(nditer_with_options, (NX, NW), wrt=(0, 1), opts=opts)


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("layout", ["fortran", "transposed", "reversed"])
def test_nditer_walks_memory_order(layout, opts):
    """The items come in the array's memory order (nditer's 'K'): for a Fortran-ordered, a
    transposed or a reversed array, the gradient of the function at that very layout --
    checked against differences taken through the same layout."""
    make = {"fortran": np.asfortranarray, "transposed": lambda b: b.T,
            "reversed": lambda b: b[:, ::-1]}[layout]
    base = NX if layout != "transposed" else NX.T.copy()
    x = make(base)
    value, g = srcad.value_and_grad(running_sum_over_nditer, **opts)(x)
    assert value == running_sum_over_nditer(x)
    fd = numerical_grad(lambda b: running_sum_over_nditer(make(b)), (base,))
    want = {"fortran": fd, "transposed": fd.T, "reversed": fd[:, ::-1]}[layout]
    assert rel_error(g, want) < 1e-6


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_nditer_writing_through_the_iterator_is_refused(mode):
    with pytest.raises(srcad.SrcadError, match="readwrite") as err:
        srcad.value_and_grad(writes_through_nditer, mode=mode)(NX.copy())
    assert "np.ndindex" in str(err.value)


# --- 8. setattr / getattr with names computed in loops ---------------------------------------
class NamedLayers:
    def __init__(self, Ws, scale=1.0):
        self.n = len(Ws)
        for i in range(self.n):
            setattr(self, "W" + str(i), Ws[i] * scale)
            setattr(self, f"act{i}", "tanh" if i < self.n - 1 else "linear")

    def __call__(self, x):
        for i in range(self.n):
            x = getattr(self, f"W{i}") @ x
            if getattr(self, f"act{i}") == "tanh":
                x = np.tanh(x)
        return x


class NamedByEnumerate:
    def __init__(self, W1, W2):
        for i, W in enumerate([W1, W2]):
            setattr(self, f"W{i}", W)

    def forward(self, x, k):
        return sum(np.sum(getattr(self, f"W{i}") @ x) * (i + k) for i in range(2))


def named_layers(W1, W2, x):
    net = NamedLayers([W1, W2], scale=0.5)
    return np.sum(net(x) ** 2)


def named_by_enumerate(W1, W2, x):
    m = NamedByEnumerate(W1, W2 @ W1)
    return m.forward(x, k=2.0)


SW1 = np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.6], [0.7, 0.2, 0.3]])
SW2 = np.array([[0.3, -0.2, 0.1], [0.5, 0.1, -0.4], [-0.4, 0.6, 0.2]])
SX = np.array([0.2, -1.1, 0.4])


@pytest.mark.parametrize("opts", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("fn", [named_layers, named_by_enumerate])
def test_setattr_getattr_with_names_made_in_loops(fn, opts):
    _check(fn, (SW1, SW2, SX), wrt=(0, 1, 2), opts=opts)
