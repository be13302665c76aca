"""The eleventh probe (2026-12-04, third session): 173 programs of our own in the styles of
course layer libraries (CS231n, Andrew Ng's exercises), from-scratch RNN/CNN/attention code
and numpy ML libraries (numpy-ml, nnfs, ML-from-scratch), each checked in source and tape
mode against central differences. One focused test per class it found, each failing before:

* a hang: ``while not it.finished: ...; it.iternext()`` of an ``np.nditer`` -- the shape probe
  ran the method on a copy of the iterator, which deepcopy cannot make, so it skipped it and
  the loop never ended. A method of an object the probe itself made runs on that object.
* an internal error: ``LAYERS[0].W = W`` of a module's list of layers (the object's name in
  generated code was spelled `LAYERS[0]_2`).
* ``class L: W = None`` (no __init__) and ``layer.W = W`` from outside: refused.
* ``theta.reshape((4, 3), order='F')``, ``W.flatten('F')``, ``np.ravel(a, order='F')``
  (Andrew Ng's ex4 unrolls its weights so): refused (``order`` had no parameter).
* ``dict(zip(names, arrays))`` and ``dict(p, scale=2.0)``: refused.
* ``model.params.update(params)`` of a dict the model's __init__ made: refused.
* ``for i, name in enumerate(["tanh", "relu"]): h = ACT[name](h @ params["W%d" % i])``: refused
  ("`an item` has no derivative rule").
* numpy-ml's ``self.act_fn = ActivationInitializer("relu")()``: a factory object whose
  ``__call__`` picks the class by ``if``s on the name (``.lower()``, ``isinstance(param,
  str)``) -- refused; the known name now folds those branches and the one object it builds
  is the call's result.
* functional-style layers: ``layers = [lambda h, W=W: np.tanh(h @ W) for W in Ws]`` (or
  appended in a loop, or a display of closures and functions), then ``for f in layers: x =
  f(x)``: refused (a function fetched from a list); the loop is written out per function
  (frontend/funclists.py), a ``W=W`` default read as its item, a late-bound read as the last.
* ``np.apply_along_axis(normalise, 1, X)`` / ``np.vectorize(two)(x)`` of a nested ``def``:
  refused (a lambda or a module function worked).
* two more probes (scientific code; tutorial and blog styles, 171 programs): **complex values
  depending on the differentiated arguments gave silently wrong gradients** (the imaginary
  part dropped) -- now refused in both modes; ``h = c = np.zeros(n)`` (refused), ``q, k =
  map(split_heads, (q, k))`` (refused), ``"cost %f" % loss`` (refused in both modes, the
  tape's with a wrong reason), a module dict filled as a cache by a callee (a KeyError
  blamed on the user: the shape probe skipped the store and read the dict); ``for n, act in
  ARCH`` of a module's list of tuples and ``zip(Ws, ["tanh", "sq"])`` picking registry
  functions; a decorator's wrapper setting an attribute on itself (tape mode recursed);
  ``layer(x, **cfg)`` into ``def layer(x, scale=1.0, **unused)``; a factory defining its
  closure on each arm of an ``if`` on a name; ``linear(W)(x)``; ``Dyn(*params)``.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = ["source", "tape"]
R = np.random.default_rng(11)


def check(fn, mode, args, wrt=0):
    value, grad = srcad.value_and_grad(fn, wrt=wrt, mode=mode)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    wrts = wrt if isinstance(wrt, tuple) else (wrt,)
    grads = grad if isinstance(wrt, tuple) else (grad,)
    for k, g in zip(wrts, grads):
        if isinstance(args[k], dict):
            for key in args[k]:
                want = numerical_grad(
                    lambda a, key=key: fn(*args[:k], {**args[k], key: a}, *args[k + 1:]),
                    (args[k][key],))
                np.testing.assert_allclose(g[key], want, rtol=1e-6, atol=1e-8)
            continue
        want = numerical_grad(lambda a, k=k: fn(*args[:k], a, *args[k + 1:]), (args[k],))
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


# -- np.nditer driving a while loop ------------------------------------------------------------

def nditer_sum_of_squares(W):
    total = 0.0
    it = np.nditer(W, flags=["multi_index"])
    while not it.finished:
        total += W[it.multi_index] ** 2
        it.iternext()
    return total


def test_nditer_while_loop_ends():
    """In a child process with a time limit: the hang was an endless loop."""
    code = ("import numpy as np, srcad, test_probe11_forms as t\n"
            "W = np.arange(6.0).reshape(3, 2) / 10\n"
            "g = srcad.grad(t.nditer_sum_of_squares)(W)\n"
            "assert np.allclose(g, 2 * W), g\n")
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(os.path.abspath(srcad.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    done = subprocess.run([sys.executable, "-c", code], cwd=here, timeout=300,
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr


# -- an attribute stored on an item of a module's list ------------------------------------------

class _Cell:
    W = None

    def forward(self, x):
        return np.tanh(x @ self.W)


LAYERS = [_Cell(), _Cell()]


def module_list_item_attribute(W, x):
    LAYERS[0].W = W
    return np.sum(LAYERS[0].forward(x))


def test_module_list_item_attribute_store():
    W, x = R.standard_normal((3, 2)), R.standard_normal(3)
    g = srcad.grad(module_list_item_attribute)(W, x)
    np.testing.assert_allclose(g, numerical_grad(module_list_item_attribute, (W, x)),
                               rtol=1e-6, atol=1e-9)


# -- a class-level default set from outside ------------------------------------------------------

def class_default_set_from_outside(W, x):
    layer = _Cell()
    layer.W = W
    return np.sum(layer.forward(x))


def class_defaults_in_a_zip(W1, W2, x):
    layers = [_Cell(), _Cell()]
    for layer, W in zip(layers, [W1, W2]):
        layer.W = W
    for layer in layers:
        x = layer.forward(x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_class_level_default(mode):
    check(class_default_set_from_outside, mode,
          (R.standard_normal((3, 3)), R.standard_normal((2, 3))))
    check(class_defaults_in_a_zip, mode,
          (R.standard_normal((3, 3)), R.standard_normal((3, 3)), R.standard_normal((2, 3))),
          wrt=(0, 1))


# -- Fortran-order unrolling ---------------------------------------------------------------------

def ng_unrolled_cost(theta, X, y):
    T1 = theta[:12].reshape((4, 3), order="F")
    T2 = theta[12:].reshape(2, 5, order="F")
    a1 = np.c_[np.ones(X.shape[0]), X]
    a2 = np.c_[np.ones(X.shape[0]), 1 / (1 + np.exp(-a1 @ T1.T))]
    h = 1 / (1 + np.exp(-a2 @ T2.T))
    cost = -np.sum(y * np.log(h) + (1 - y) * np.log(1 - h)) / X.shape[0]
    return cost + 0.01 * np.sum(T1[:, 1:].flatten("F") ** 2) + \
        0.02 * np.sum(np.ravel(T2, order="F")[3:] ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_fortran_order_unrolling(mode):
    X = R.standard_normal((5, 2))
    y = np.eye(2)[R.integers(0, 2, 5)]
    check(ng_unrolled_cost, mode, (R.standard_normal(22) * 0.5, X, y))


def test_fortran_order_forward_mode():
    X = R.standard_normal((5, 2))
    y = np.eye(2)[R.integers(0, 2, 5)]
    theta, v = R.standard_normal(22) * 0.5, R.standard_normal(22)
    _, t = srcad.jvp(lambda th: ng_unrolled_cost(th, X, y), (theta,), (v,))
    want = numerical_grad(ng_unrolled_cost, (theta, X, y)) @ v
    np.testing.assert_allclose(t, want, rtol=1e-6)


# -- dicts built by dict(...) ---------------------------------------------------------------------

def dict_of_zip(a, b):
    p = dict(zip(["a", "b"], [a, b]))
    return np.sum(p["a"] * np.sin(p["b"]))


def dict_with_keywords(p):
    q = dict(p, scale=2.0)
    return np.sum(q["W"] ** 2) * q["scale"]


@pytest.mark.parametrize("mode", MODES)
def test_dict_builders(mode):
    check(dict_of_zip, mode, (R.standard_normal(3), R.standard_normal(3)), wrt=(0, 1))
    check(dict_with_keywords, mode, ({"W": R.standard_normal(3)},))


# -- dict.update of a built model's dict ---------------------------------------------------------

class _Model:
    def __init__(self):
        self.params = {}

    def loss(self, x):
        h = np.tanh(x @ self.params["W1"])
        return np.sum((h @ self.params["W2"]) ** 2)


def model_params_update(params, x):
    model = _Model()
    model.params.update(params)
    return model.loss(x)


def model_params_update_display(W1, W2, x):
    model = _Model()
    model.params.update({"W1": W1})
    model.params.update(W2=W2)
    return model.loss(x)


@pytest.mark.parametrize("mode", MODES)
def test_model_params_update(mode):
    x = R.standard_normal((2, 3))
    params = {"W1": R.standard_normal((3, 4)), "W2": R.standard_normal((4, 2))}
    check(model_params_update, mode, (params, x))
    check(model_params_update_display, mode, (params["W1"], params["W2"], x), wrt=(0, 1))


# -- a registry dispatched by names from enumerate ---------------------------------------------

def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


ACT = {"relu": lambda z: np.maximum(0, z), "tanh": np.tanh, "sigmoid": _sigmoid}


def enumerate_names_dispatch(params, X):
    h = X
    for i, name in enumerate(["tanh", "relu", "sigmoid"]):
        h = ACT[name](h @ params["W%d" % i])
    return np.sum(h)


def enumerate_names_from_one(params, X):
    h = X
    for i, name in enumerate(("sigmoid", "tanh"), 1):
        h = ACT[name](h @ params["W" + str(i)])
    return np.sum(h ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_enumerate_names_dispatch(mode):
    params = {f"W{i}": R.standard_normal((3, 3)) for i in range(3)}
    X = R.standard_normal((2, 3))
    check(enumerate_names_dispatch, mode, (params, X))
    check(enumerate_names_from_one, mode, (params, X))


# -- numpy-ml's activation factory ---------------------------------------------------------------

class _ActivationBase:
    def __call__(self, z):
        return self.fn(z)


class _ReLU(_ActivationBase):
    def fn(self, z):
        return np.maximum(z, 0)


class _Tanh(_ActivationBase):
    def fn(self, z):
        return np.tanh(z)


class _Affine(_ActivationBase):
    def __init__(self, slope=1.0, intercept=0.0):
        self.slope = slope
        self.intercept = intercept

    def fn(self, z):
        return self.slope * z + self.intercept


class _ActivationInitializer:
    def __init__(self, param=None):
        self.param = param

    def __call__(self):
        param = self.param
        if param is None:
            act = _Affine(slope=1, intercept=0)
        elif isinstance(param, _ActivationBase):
            act = param
        elif isinstance(param, str):
            act = self.init_from_str(param)
        else:
            raise ValueError(f"Unknown activation: {param}")
        return act

    def init_from_str(self, act_str):
        act_str = act_str.lower()
        if act_str == "relu":
            act_fn = _ReLU()
        elif act_str == "tanh":
            act_fn = _Tanh()
        elif act_str == "affine":
            act_fn = _Affine()
        else:
            raise ValueError(f"Unknown activation: {act_str}")
        return act_fn


class _FullyConnected:
    def __init__(self, n_out, act_fn=None):
        self.n_out = n_out
        self.act_fn = _ActivationInitializer(act_fn)()
        self.parameters = {"W": None, "b": None}

    def forward(self, X):
        W, b = self.parameters["W"], self.parameters["b"]
        return self.act_fn(X @ W + b)


def numpy_ml_style(W1, b1, W2, b2, X):
    l1 = _FullyConnected(4, "ReLU")
    l2 = _FullyConnected(1, "tanh")
    l3 = _FullyConnected(1)
    l1.parameters["W"] = W1
    l1.parameters["b"] = b1
    l2.parameters["W"] = W2
    l2.parameters["b"] = b2
    return np.sum(l2.forward(l1.forward(X)) ** 2) + 0.0 * l3.n_out


class _Picks:
    def __init__(self, name):
        self.name = name

    def __call__(self):
        if self.name == "tanh":
            return _Tanh()
        return None


def factory_returning_an_object(W, X):
    act = _Picks("tanh")()
    return np.sum(act(X @ W))


@pytest.mark.parametrize("mode", MODES)
def test_activation_factories(mode):
    args = (R.standard_normal((3, 4)), R.standard_normal(4), R.standard_normal((4, 1)),
            R.standard_normal(1), R.standard_normal((5, 3)))
    check(numpy_ml_style, mode, args, wrt=(0, 1, 2, 3))
    check(factory_returning_an_object, mode, (args[0], args[4]))


# -- a list of functions walked by a loop (functional-style layers) ------------------------------

def lambdas_with_default_capture(Ws, x):
    layers = [lambda h, W=W: np.tanh(h @ W) for W in Ws]
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def lambdas_appended_in_a_loop(Ws, x):
    fs = []
    for W in Ws:
        fs.append(lambda h, W=W: np.sin(h @ W) + h)
    for f in fs:
        x = f(x)
    return np.sum(x)


def late_bound_lambdas(Ws, x):
    """No `W=W`: every lambda reads the comprehension's W when called -- the last one."""
    fs = [lambda h: np.tanh(h @ W) for W in Ws]
    for f in fs:
        x = f(x)
    return np.sum(x)


def a_display_of_closures(W1, W2, x):
    fs = [lambda h: np.tanh(h @ W1), _relu, lambda h: np.sin(h @ W2)]
    for f in fs:
        x = f(x) * 1.5
    return np.sum(x)


def _relu(h):
    return np.maximum(h, 0.0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [lambdas_with_default_capture, lambdas_appended_in_a_loop,
                                late_bound_lambdas])
def test_lists_of_lambdas(fn, mode):
    Ws = [R.standard_normal((3, 3)) * 0.7 for _ in range(3)]
    x = R.standard_normal((2, 3))
    value, grad = srcad.value_and_grad(fn, mode=mode)(Ws, x)
    np.testing.assert_allclose(value, fn(Ws, x), rtol=1e-12)
    for k in range(3):
        want = numerical_grad(lambda a, k=k: fn(Ws[:k] + [a] + Ws[k + 1:], x), (Ws[k],))
        np.testing.assert_allclose(grad[k], want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", MODES)
def test_a_display_of_closures(mode):
    check(a_display_of_closures, mode,
          (R.standard_normal((3, 3)), R.standard_normal((3, 3)), R.standard_normal((2, 3))),
          wrt=(0, 1))


# -- numpy's callback functions given a nested def ---------------------------------------------

def along_axis_nested_def(W, X):
    def normalise(row):
        return row / np.sqrt(np.sum(row ** 2) + 1e-3)
    return np.sum(np.apply_along_axis(normalise, 1, X @ W) * np.arange(3.0))


def vectorize_nested_def_two_outputs(x):
    def two(v):
        return v * 2.0, np.sin(v)
    a, b = np.vectorize(two)(x)
    return np.sum(a * b)


@pytest.mark.parametrize("mode", MODES)
def test_callbacks_of_a_nested_def(mode):
    check(along_axis_nested_def, mode, (R.standard_normal((3, 3)), R.standard_normal((2, 3))))
    check(vectorize_nested_def_two_outputs, mode, (R.standard_normal(4),))


# -- complex values on the way to the output ----------------------------------------------------

def complex_real_part(k):
    return np.real(np.exp(1j * k))


def complex_imag_part(k):
    return np.imag(np.exp(1j * k))


def complex_modulus(k):
    z = np.exp(1j * k)
    return np.real(z * np.conj(z))


def complex_of_data_only(x):
    """An FFT of constants: no differentiated value is complex -- differentiated."""
    return np.sum(np.abs(np.fft.fft(np.arange(4.0))) * x)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [complex_real_part, complex_imag_part, complex_modulus])
def test_complex_values_are_refused(fn, mode):
    """Were silently wrong (the imaginary part of the gradient dropped: `np.imag(np.exp(1j *
    k))` gave 0, `|exp(ik)|^2` gave -sin(2k) for 0)."""
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(fn, mode=mode)(1.3)
    assert "complex" in str(e.value) and "test_probe11_forms.py" in str(e.value)


@pytest.mark.parametrize("mode", MODES)
def test_complex_values_of_constants_are_fine(mode):
    check(complex_of_data_only, mode, (R.standard_normal(4),))


# -- tutorial idioms: chained assignment, map unpacking, %-formatting, a module cache ----------

def chained_assignment(w):
    h = c = np.zeros(2)
    h += w  # (in place: c is the same array, as in Python)
    data_loss = reg_loss = 0.0
    data_loss += np.sum(h * c)
    reg_loss += 0.1 * np.sum(c ** 3)
    return data_loss + reg_loss


def _split_heads(v):
    return v.reshape(2, -1)


def map_unpacked(q, k):
    q, k = map(_split_heads, (q, k))
    a, b = map(np.tanh, (q, 2.0 * k))
    return np.sum(a @ b.T)


def percent_formatted(w):
    loss = np.sum(w ** 2)
    text = "cost after iteration %i: %f" % (3, loss)
    note = "loss %.3f" % loss
    return loss * (len(text) > 0) * (len(note) > 0)


_SCALES = {}


def _scale(n):
    if n not in _SCALES:
        _SCALES[n] = 2.0 * n
    return _SCALES[n]


def module_cache_in_a_callee(w):
    return _scale(3) * np.sum(w ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_tutorial_idioms(mode):
    w = R.standard_normal(2)
    check(chained_assignment, mode, (w,))
    check(map_unpacked, mode, (R.standard_normal(4), R.standard_normal(4)), wrt=(0, 1))
    check(percent_formatted, mode, (w,))
    _SCALES.clear()  # (empty: the first call stores, the shape probe's copy sees it)
    check(module_cache_in_a_callee, mode, (w,))


# -- layer specs as tuples, names zipped with weights, a decorator's wrapper ------------------

ARCH = [(2, "tanh"), (3, "sin")]
_ACTS = {"tanh": np.tanh, "sin": np.sin, "sq": lambda z: z * z}


def module_arch_of_tuples(x):
    for n, act in ARCH:
        x = _ACTS[act](x) * n
    return np.sum(x)


def names_zipped_with_weights(Ws, x):
    h = x
    for W, name in zip(Ws, ["tanh", "sq"]):
        h = _ACTS[name](h @ W)
    return np.sum(h)


def _timed(fn):
    def wrapper(*args):
        out = fn(*args)
        wrapper.calls = getattr(wrapper, "calls", 0) + 1
        return out
    return wrapper


@_timed
def _sine(x):
    return np.sin(x)


def decorated_wrapper_sets_its_attribute(x):
    """Tape mode recursed without end (the wrapper's closure holds the wrapper)."""
    return np.sum(_sine(x) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_specs_and_decorators(mode):
    x = R.standard_normal(2)
    check(module_arch_of_tuples, mode, (x,))
    Ws = [R.standard_normal((2, 2)) * 0.5 for _ in range(2)]
    value, grad = srcad.value_and_grad(names_zipped_with_weights, mode=mode)(Ws, x)
    np.testing.assert_allclose(value, names_zipped_with_weights(Ws, x), rtol=1e-12)
    for k in range(2):
        want = numerical_grad(lambda a, k=k: names_zipped_with_weights(
            Ws[:k] + [a] + Ws[k + 1:], x), (Ws[k],))
        np.testing.assert_allclose(grad[k], want, rtol=1e-6, atol=1e-9)
    check(decorated_wrapper_sets_its_attribute, mode, (x,))


# -- keywords into **unused, factories with branches, curried closures, Cls(*params) --------

def _layer(x, scale=1.0, **unused):
    return np.tanh(scale * x)


CFG = {"scale": 2.0, "dropout": 0.0}


def spread_into_unused(x):
    return np.sum(_layer(x, **CFG))


def spread_argument_into_unused(x, cfg):
    return np.sum(_layer(x, **cfg) ** 2)


def _make_act(kind):
    if kind == "relu":
        def act(z):
            return np.maximum(z, 0.0)
    elif kind in ("tanh", "th"):
        def act(z):
            return np.tanh(z)
    else:
        raise ValueError(kind)
    return act


def factory_defs_on_each_arm(x):
    act = _make_act("tanh")
    return np.sum(act(x) * 2.0) + np.sum(_make_act("relu")(x))


def _linear(W):
    def go(x):
        return x @ W
    return go


def curried_closure(W, x):
    return np.sum(np.tanh(_linear(W)(x)))


class _Dyn:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __call__(self, x):
        return -self.a * x + self.b


def constructed_from_a_star(params, x):
    return np.sum(_Dyn(*params)(x) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_keywords_factories_and_stars(mode):
    x = R.standard_normal(3)
    check(spread_into_unused, mode, (x,))
    value, grad = srcad.value_and_grad(spread_argument_into_unused, mode=mode)(
        x, {"scale": 0.5, "p": 1})
    np.testing.assert_allclose(grad, numerical_grad(
        lambda a: spread_argument_into_unused(a, {"scale": 0.5, "p": 1}), (x,)), rtol=1e-6)
    check(factory_defs_on_each_arm, mode, (x,))
    check(curried_closure, mode, (R.standard_normal((3, 2)), R.standard_normal((4, 3))))
    params = (R.standard_normal(3), R.standard_normal(3))
    value, grad = srcad.value_and_grad(constructed_from_a_star, mode=mode)(params, x)
    for k in range(2):
        want = numerical_grad(lambda a, k=k: constructed_from_a_star(
            params[:k] + (a,) + params[k + 1:], x), (params[k],))
        np.testing.assert_allclose(grad[k], want, rtol=1e-6, atol=1e-9)


def chained_literals_in_a_loop(w, X, y):
    """The fifth probe's own program: `data_loss = reg_loss = 0.0` then `+=` on each, one in
    a loop -- a silently wrong value in source mode when the two names shared one float
    (0.072 for 2.248): each name its own literal now."""
    data_loss = reg_loss = 0.0
    for i in range(X.shape[0]):
        data_loss += (X[i] @ w - y[i]) ** 2
    reg_loss += 0.1 * np.sum(w * w)
    return data_loss / X.shape[0] + reg_loss


@pytest.mark.parametrize("mode", MODES)
def test_chained_literals_in_a_loop(mode):
    check(chained_literals_in_a_loop, mode,
          (R.standard_normal(3), R.standard_normal((4, 3)), R.standard_normal(4)))


# (a chained assignment of any other value, refused until 2026-12-06 (sixth session), is
# tests/test_chained_assignment.py's)


def two_names_for_one_float(w, X, y):
    t = 0.0
    d = t
    r = t
    for i in range(X.shape[0]):
        d += (X[i] @ w - y[i]) ** 2
    r += 0.1 * np.sum(w * w)
    return d / X.shape[0] + r


# (`t = 0.0; d = t; r = t`, each changed by `+=`, one in a loop: source mode remade `d`
# from `t` after `r += ...` as for an array written in place, though `d += ...` had rebound
# `d` -- 0.072 for 2.248, silently, until 2026-12-04 (fourth session); an alias of a name
# is now made again with alias_again, which keeps a number its own value)

def two_names_for_one_array(w, X, y):
    """The same statements on an array: numpy's `+=` writes the one array all three share."""
    t = np.zeros(2)
    d = t
    r = t
    for i in range(X.shape[0]):
        d += (X[i] @ w - y[i]) ** 2
    r += 0.1 * np.sum(w * w)
    return np.sum(d) / X.shape[0] + np.sum(r) + np.sum(t)


def alias_of_a_scalar_copy_kept_after_its_base_is_written(x):
    """Found by the views fuzzer once it drew names for numbers (seed 35, program 35):
    `n6 = v2` of a numpy scalar copied out of a view, `v2 += ...` rebinds v2, then a write
    into the view's base remade n6 from v2's new value."""
    a0 = x * -0.75
    v1 = a0[2:3, -1]
    v2 = v1[0]
    if np.sum(x) > 0.5:
        pass
    else:
        v2 += 0.25
    n6 = v2
    v2 += np.sin(n6)
    a0[::-1] = n6 * -0.75
    return n6 * n6 + v2 + np.sum(a0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [two_names_for_one_float, two_names_for_one_array])
def test_names_for_one_value_each_changed(fn, mode):
    args = (R.standard_normal(3), R.standard_normal((4, 3)), R.standard_normal(4))
    if fn is two_names_for_one_array:
        args = (R.standard_normal((3, 2)), R.standard_normal((4, 3)), R.standard_normal((4, 2)))
    value, grad = srcad.value_and_grad(fn, mode=mode)(*args)
    assert value == fn(*args)
    np.testing.assert_allclose(grad, numerical_grad(lambda w: fn(w, *args[1:]), (args[0],)),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_alias_of_a_scalar_copy_kept_after_its_base_is_written(mode, sign):
    fn = alias_of_a_scalar_copy_kept_after_its_base_is_written
    x = sign * np.abs(R.standard_normal((3, 4)))
    value, grad = srcad.value_and_grad(fn, mode=mode)(x)
    assert value == fn(x)
    np.testing.assert_allclose(grad, numerical_grad(fn, (x,)), rtol=1e-6, atol=1e-9)


def pairs_zipped_with_names(layers, X, y, acts=("tanh", "sq")):
    """`for (W, b), name in zip(layers, acts)`: a tuple target beside the picked name."""
    h = X
    for (W, b), name in zip(layers, acts):
        h = _ACTS[name](h @ W + b)
    return np.mean((h[:, 0] - y) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_pairs_zipped_with_names(mode):
    layers = [(R.standard_normal((3, 4)) * 0.5, R.standard_normal(4) * 0.1),
              (R.standard_normal((4, 2)) * 0.5, R.standard_normal(2) * 0.1)]
    X, y = R.standard_normal((5, 3)), R.standard_normal(5)
    value, grad = srcad.value_and_grad(pairs_zipped_with_names, mode=mode)(layers, X, y)
    np.testing.assert_allclose(value, pairs_zipped_with_names(layers, X, y), rtol=1e-12)
    for k in range(2):
        for j in range(2):
            def one(a, k=k, j=j):
                pair = list(layers[k])
                pair[j] = a
                return pairs_zipped_with_names(layers[:k] + [tuple(pair)] + layers[k + 1:],
                                               X, y)
            want = numerical_grad(one, (layers[k][j],))
            np.testing.assert_allclose(grad[k][j], want, rtol=1e-6, atol=1e-9)
