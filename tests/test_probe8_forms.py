"""Classes of failure the third wild-repositories probe found (tests/corpus_probe/
wild_repos3.py), one focused test each, against central differences; each failed before its
fix."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(8)


def _check(fn, args, wrt=0, mode="source", tol=1e-6):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, got = srcad.value_and_grad(fn, wrt=wrt, mode=mode)(*args)
    assert np.array_equal(np.asarray(out), np.asarray(fn(*args)))
    want = numerical_grad(fn, args, wrt=wrt)
    got, want = (got, want) if isinstance(wrt, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert rel_error(g, w) < tol


# ---- weights handed to an object by a method, the object then held by another ------------

class _Tanh:
    def __call__(self, x):
        return np.tanh(x)


_ACTS = {"tanh": _Tanh}


class _Activation:
    def __init__(self, name):
        self.func = _ACTS[name]()

    def forward(self, X):
        return self.func(X)


class _Dense:
    def set(self, W):
        self.W = W

    def forward(self, X):
        return X @ self.W


class _Net:
    def __init__(self):
        self.layers = []

    def add(self, layer):
        self.layers.append(layer)

    def run(self, X):
        for layer in self.layers:
            X = layer.forward(X)
        return X


def _set_then_add(W, X):
    net = _Net()
    d = _Dense()
    d.set(W)
    net.add(d)
    net.add(_Activation("tanh"))
    return np.sum(net.run(X) ** 2)


def _set_then_add_tuple(W, X):
    net = _Net()
    d = _Dense()
    d.set(W)
    net.add(d)
    net.add(_Activation("tanh"))
    loss, acc = np.sum(net.run(X) ** 2), 0
    return loss


class _DenseSetattr:
    def set(self, W):
        setattr(self, "W", W)   # (a dynamic attribute: followed since issue 23)

    def forward(self, X):
        return X @ self.W


def _setattr_then_add(W, X):
    net = _Net()
    d = _DenseSetattr()
    d.set(W)
    net.add(d)
    return np.sum(np.tanh(net.run(X)) ** 2)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_weights_reaching_the_output_through_an_object_chain(mode):
    """`d.set(W); net.add(d); net.run(X)` where srcad does not follow the objects (here a
    dynamic attribute): the source-mode gradient was silently zero, as `net.add(d)` was not
    seen to make `net` depend on `d`. Then refused at the user's line (a call with no rule
    that may keep what it is given makes its object depend on it: analysis/refusals.py);
    since issue 23 the setattr is the attribute store it is, and the objects are followed:
    the value and gradient are checked (tests/test_refused23.py, setattr by computed names)."""
    _check(_setattr_then_add, (R.standard_normal((3, 4)), R.standard_normal((5, 3))),
           mode=mode)


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", [_set_then_add, _set_then_add_tuple])
def test_registry_entry_built_in_init(fn, mode):
    """`self.func = _ACTS[name]()` in the __init__ of a layer built in the function (the
    activation-classes style): the key is the constructor's string argument, known where the
    object is built; was 'calling `.func` of a built object' (and, with the weights reaching
    the net by `d.set(W)`, a silently zero gradient)."""
    _check(fn, (R.standard_normal((3, 4)), R.standard_normal((5, 3))), mode=mode)


# ---- a helper returning a tuple from each branch, unpacked by its caller ------------------

def _pick_else(x, mode):
    if mode == "a":
        return x * 2, x + 1
    else:
        return x, x * 3


def _pick_raise(x, mode):
    if mode == "a":
        return x * 2, np.sin(x)
    elif mode == "b":
        return np.cos(x), x * 3
    raise ValueError(mode)


def _pick_loop(x, n):
    for i in range(n):
        if np.sum(x) > i:
            return x * i, np.tanh(x)
    return x, x


def _padding(k, mode):
    if mode == "valid":
        return (0, 0), (0, 0)
    return (k // 2, (k - 1) // 2), (k // 2, k // 2)


def _unpack_branches(x, mode="b"):
    a, b = _pick_else(x, mode)
    c, d = _pick_raise(x, mode)
    e, f = _pick_loop(x, 3)
    (ph, pw) = _padding(3, "same")
    return np.sum(a * b + c * d + e * f) + np.sum(np.pad(x, (ph, pw)) ** 2)


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("arg", ["a", "b"])
def test_unpacking_a_helper_that_returns_in_branches(arg, mode):
    """`a, b = helper(x)` where the helper returns a tuple from each branch (if/else, a raise
    after an elif, a return in a loop, an early return before the last): was 'unpacking the
    result of a function that does not return a tuple' (desugar.py made its returns one
    result name; now one name per item, where every return gives an n-tuple and the end is
    never reached)."""
    x = np.linspace(-0.7, 0.9, 6).reshape(2, 3)
    _check(_unpack_branches, (x, arg), mode=mode)


def _maybe_pair(x, flag):
    if flag:
        return x, x * 2


def _falls_off_end(x):
    r = _maybe_pair(x, False)
    if r is None:
        return np.sum(x ** 2)
    return np.sum(r[0] * r[1])


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_helper_that_may_fall_off_its_end_still_returns_none(mode):
    """The end of `_maybe_pair` is reachable (Python returns None there): it keeps one result
    name, so `r is None` is what Python says."""
    _check(_falls_off_end, (np.linspace(-0.7, 0.9, 6),), mode=mode)


# ---- a Keras-like container built in the function, as activation-class libraries write it --

class _SquareLoss:
    def loss(self, y, p):
        return 0.5 * (y - p) ** 2


class _Layer:
    def set_input_shape(self, shape):
        self.input_shape = shape

    def layer_name(self):
        return self.__class__.__name__


class _Linear(_Layer):
    def __init__(self, n_units):
        self.n_units = n_units
        self.W = None

    def initialize(self, W):
        self.W = W

    def output_shape(self):
        return (self.n_units,)

    def forward_pass(self, X):
        return X.dot(self.W)


class _ActLayer(_Layer):
    def __init__(self, name):
        self.func = _ACTS[name]()

    def layer_name(self):
        return "Activation (%s)" % self.func.__class__.__name__

    def output_shape(self):
        return self.input_shape

    def forward_pass(self, X):
        return self.func(X)


class _Model:
    def __init__(self, loss):
        self.layers = []
        self.loss_function = loss()

    def add(self, layer):
        if self.layers:
            layer.set_input_shape(shape=self.layers[-1].output_shape())
        self.layers.append(layer)

    def summary(self):
        return ", ".join(layer.layer_name() for layer in self.layers)

    def test_on_batch(self, X, y):
        out = X
        for layer in self.layers:
            out = layer.forward_pass(out)
        return np.mean(self.loss_function.loss(y, out)), len(self.summary())


def _keras_like(W1, W2, X, y):
    model = _Model(loss=_SquareLoss)
    first = _Linear(4)
    first.initialize(W1)
    model.add(first)
    model.add(_ActLayer("tanh"))
    second = _Linear(2)
    second.initialize(W2)
    model.add(second)
    loss, _ = model.test_on_batch(X, y)
    return loss


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_keras_like_model_with_a_loss_class_argument(mode):
    """`Model(loss=SquareLoss)` building `self.loss_function = loss()`, `if self.layers:` in
    `add`, `self.__class__.__name__` in `layer_name`: each was a use srcad did not follow,
    so the object was left as written and `first.initialize(W1)` refused (before the
    refusals fix: a silently zero gradient)."""
    args = (R.standard_normal((3, 4)), R.standard_normal((4, 2)), R.standard_normal((5, 3)),
            R.standard_normal((5, 2)))
    _check(_keras_like, args, wrt=(0, 1), mode=mode)


# ---- an estimator whose fit returns self ---------------------------------------------------

class _LinReg:
    def __init__(self, lr=0.1, n_iter=3):
        self.lr = lr
        self.n_iter = n_iter
        self.history = []

    def fit(self, X, y, w0):
        self.w = w0.copy()
        for _ in range(self.n_iter):
            err = X @ self.w - y
            self.w -= self.lr * X.T @ err / len(y)
            self.history.append(np.mean(err ** 2))
        return self

    def predict(self, X):
        return X @ self.w


def _fit_bare(w0, X, y):
    model = _LinReg()
    model.fit(X, y, w0)
    return np.sum(model.predict(X) ** 2) + model.history[-1]


def _fit_chained(w0, X, y):
    model = _LinReg(lr=0.2).fit(X, y, w0)
    return np.sum(_LinReg(n_iter=2).fit(X, y, w0).predict(X)) + np.sum(model.w ** 2)


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("fn", [_fit_bare, _fit_chained])
def test_fit_returning_self(fn, mode):
    """`def fit(...): ...; return self` (scikit-learn's convention), called for its effect or
    chained (`Model().fit(X, y).predict(X)`): was 'the object is returned', so the object was
    left as written and `model.fit(X, y, w0)` refused."""
    args = (R.standard_normal(3), R.standard_normal((6, 3)), R.standard_normal(6))
    _check(fn, args, mode=mode)


# ---- a list of caches wrapped in a tuple as the forward ends (the course's rnn_forward) ----

def _rnn_forward(x, a0, Waa, Wax):
    caches = []
    a = np.zeros((a0.shape[0], x.shape[1], x.shape[2]))
    a_next = a0
    for t in range(x.shape[2]):
        a_next = np.tanh(Waa @ a_next + Wax @ x[:, :, t])
        a[:, :, t] = a_next
        caches.append((a_next, x[:, :, t]))
    caches = (caches, x)
    return a, caches


def _rnn_forward_returned(x, a0, Waa, Wax):
    caches = []
    a_next = a0
    for t in range(x.shape[2]):
        a_next = np.tanh(Waa @ a_next + Wax @ x[:, :, t])
        caches.append(a_next)
    return a_next, (caches, x)


def _course_rnn(Waa, Wax, x, a0):
    a, (caches, _) = _rnn_forward(x, a0, Waa, Wax)
    last, (hs, _) = _rnn_forward_returned(x, a0, Waa, Wax)
    return np.sum(a ** 2) + np.sum(caches[-1][0]) + np.sum(hs[0] * last)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_list_wrapped_in_a_tuple_after_its_appends(mode):
    """`caches.append(cache)` in the loop, then `caches = (caches, x)` (or `return a, (caches,
    x)`): a second holder made after the last change to the list, so its appends are still
    values (pylower.py); was '`.append()` changes a list ... srcad holds as a value'."""
    args = (R.standard_normal((3, 3)) * 0.5, R.standard_normal((3, 2)) * 0.5,
            R.standard_normal((2, 2, 4)), R.standard_normal((3, 2)))
    _check(_course_rnn, args, wrt=(0, 1), mode=mode)


def _appended_through_a_dict(W):
    lst = []
    for i in range(2):
        lst.append(W * i)
    d = {"a": lst}
    d["a"].append(W * 5)          # (changes lst through the dict)
    return np.sum(lst[-1] ** 2)


def test_list_changed_through_a_later_holder_is_still_refused():
    with pytest.raises(srcad.SrcadError, match="changes a list or dict in place"):
        srcad.grad(_appended_through_a_dict)(np.linspace(-0.5, 0.7, 6).reshape(3, 2))


# ---- a module-level function handed to a solver of the user's ------------------------------

def _decay(t, y, k):
    return -k * y + np.sin(t)


def _euler(f, y0, t_span, n, k):
    t0, t1 = t_span
    h = (t1 - t0) / n
    ts, ys = [t0], [y0]
    y = y0
    for _ in range(n):
        y = y + h * f(ts[-1], y, k)
        ys.append(y)
        ts.append(ts[-1] + h)
    return np.array(ts), np.array(ys)


def _solve(y0, k):
    ts, ys = _euler(_decay, y0, (0.0, 1.0), 4, k)
    return np.trapezoid(np.sum(ys ** 2, axis=1), ts)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_user_function_passed_to_a_user_solver(mode):
    """`integrate(rhs, y0, ...)` with `rhs` a module-level function: was '`rhs` (function)
    used as a value' (nested defs and lambdas were passed already); and `np.trapezoid(e, ts)`
    with `ts, ys` unpacked from the solver was refused for `x`, as every item of a callee's
    tuple was taken to depend on every argument (refusals.py now asks the callee)."""
    _check(_solve, (np.array([1.0, -0.4]), np.array(0.8)), wrt=(0, 1), mode=mode)


def _scaled(v):
    return v * v + 1.0


def _list_of_functions(x):
    fns = [_scaled, _decay_free]
    h = x
    for f in fns:
        h = f(h)
    return np.sum(h)


def _decay_free(v):
    return np.tanh(v) * 0.5


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_loop_over_a_local_list_of_user_functions(mode):
    """`fns = [relu, tanh]; for f in fns: h = f(h)` (user functions): the body once per
    function, as a loop over a global list of them already was (loops.py); with functions
    now values, was a call with no rule."""
    _check(_list_of_functions, (np.linspace(-0.9, 1.1, 6).reshape(3, 2),), mode=mode)


def _times_from_params(y0, k):
    ts, ys = _euler(_decay, y0, (0.0, k), 4, k)   # (ts depends on k: its spacing)
    return np.trapezoid(np.sum(ys ** 2, axis=1), ts)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_tuple_item_that_does_depend_carries_its_gradient(mode):
    # (np.trapezoid's sample points depend on k through the returned tuple's item: refused
    # while the row had no rule for x, differentiated since 2026-12-05 -- the gradient
    # w.r.t. k goes through ts as well as ys)
    _check(_times_from_params, (np.array([1.0, -0.4]), np.array(0.8)), wrt=(0, 1), mode=mode)


# ---- zip(*np.nonzero(R)) -------------------------------------------------------------------

def _mf_nonzero(P, Q, R, beta=0.02):
    e = 0
    for i, j in zip(*np.nonzero(R)):
        e = e + pow(R[i][j] - np.dot(P[i, :], Q[:, j]), 2)
        for k in range(P.shape[1]):
            e = e + (beta / 2) * (pow(P[i][k], 2) + pow(Q[k][j], 2))
    return e


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_zip_of_a_starred_call(mode):
    """`for i, j in zip(*np.nonzero(R))` (the matrix-factorisation tutorials' loop): the
    starred value through a name of its own, then zip(t[0], t[1]) as for `zip(*heads)`; was
    'a `for` loop with a tuple target'."""
    R = np.array([[5, 3, 0, 1], [4, 0, 0, 1], [1, 1, 0, 5], [0, 1, 5, 4]], dtype=float)
    _check(_mf_nonzero, (R[:, :2] / 5 + 0.1, R[:2, :] / 5 - 0.2, R), wrt=(0, 1), mode=mode)


# ---- numpy's out given by position ---------------------------------------------------------

def _clip_out_positional(W, X):
    p = 1 / (1 + np.exp(-(X @ W)))
    eps = np.finfo(float).eps
    np.clip(p, eps, 1 - eps, p)
    s = X @ W
    np.exp(s, s)
    np.multiply(s, p, s)
    return np.sum(np.log(p)) + np.sum(s)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_out_given_by_position(mode):
    """`np.clip(p, eps, 1 - eps, p)` (numpy-ml's losses), `np.exp(s, s)`: numpy's out by
    position is out= (pyforms.py, tape_tensor.py); np.clip's was '`clip` takes at most 3
    positional arguments', a ufunc's a call with no rule."""
    _check(_clip_out_positional, (R.standard_normal((3, 2)) * 0.5, R.standard_normal((4, 3))),
           mode=mode)


# ---- a dict of lists appended by key -------------------------------------------------------

def _history_dicts(W, X):
    from collections import defaultdict
    caches = {"Z": [], "A": []}
    hist = defaultdict(list)
    h = X
    for t in range(3):
        z = h @ W
        h = np.tanh(z)
        caches["Z"].append(z)
        caches["A"].append(h)
        hist["norm"].append(np.sum(h ** 2))
    total = 0.0
    for v in hist["norm"]:
        total = total + v
    return np.sum(np.stack(caches["Z"]) ** 2) * 0.1 + np.sum(caches["A"][-1]) + total + \
        len(hist)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_dict_of_lists_appended_by_key(mode):
    """`caches = {"Z": [], "A": []}` / `hist = defaultdict(list)` then `caches["Z"].append(z)`:
    appends written as values (`caches["Z"] = list_append(caches["Z"], z)`, pylower.py) where
    no second name sees the lists; was 'the method `.append()` has no derivative rule'."""
    _check(_history_dicts, (R.standard_normal((3, 3)) * 0.5, R.standard_normal((4, 3))),
           mode=mode)


def _dict_list_with_a_second_name(W, X):
    acts = {"z": []}
    zs = acts["z"]
    for i in range(2):
        acts["z"].append(X @ W * i)
    return np.sum(np.concatenate(zs))


def test_dict_of_lists_with_a_second_name_is_still_refused():
    with pytest.raises(srcad.SrcadError, match="append"):
        srcad.grad(_dict_list_with_a_second_name)(R.standard_normal((3, 3)),
                                                  R.standard_normal((4, 3)))


# ---- a local alias of a module-level function, passed on (function_alias claims its name) ----

def _alias_passed(y0, k):
    step = _decay                 # (it raised NameError: a constant never injected)
    ts, ys = _euler(step, y0, (0.0, 1.0), 3, k)
    return np.sum(ys ** 2)


def test_local_alias_of_a_function_passed_on():
    _check(_alias_passed, (np.array([1.0, -0.4]), np.array(0.8)), wrt=(0, 1))


# ---- a method of a module-level array given a differentiated argument --------------------------
X_DATA = np.random.default_rng(8).standard_normal((5, 3))


def _global_array_methods(W, h):
    z = X_DATA.dot(W)                     # (it was run as written: a zero gradient refused)
    return np.sum(np.tanh(z) ** 2) + np.sum(X_DATA.T.dot(h) ** 2)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_method_of_a_module_level_array_has_its_row(mode, monkeypatch):
    rng = np.random.default_rng(81)
    W, h = 0.5 * rng.standard_normal((3, 4)), rng.standard_normal(5)
    g = srcad.grad(_global_array_methods, wrt=(0, 1), mode=mode)
    for _ in range(2):  # (rebound between calls: the next call reads the new array)
        got = g(W, h)
        want = numerical_grad(_global_array_methods, (W, h), wrt=(0, 1))
        for a, b in zip(got, want):
            assert rel_error(a, b) < 1e-6
        monkeypatch.setattr(sys.modules[__name__], "X_DATA", -0.5 * X_DATA + 0.1)
