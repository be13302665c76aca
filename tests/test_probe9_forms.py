"""Classes of failure the fourth wild-repositories probe found (tests/corpus_probe/
wild_repos3.py's last xfails and wild_repos4.py), one focused test each, against central
differences; each failed before its fix."""

from __future__ import annotations

import warnings
from collections import defaultdict, namedtuple

import numpy as np
import pytest

import srcad
from tests.corpus_probe.wild_repos4 import ElmanCell
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(9)


def _check(fn, args, wrt=0, mode="source", tol=1e-6):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, got = srcad.value_and_grad(fn, wrt=wrt, mode=mode)(*args)
    assert np.array_equal(np.asarray(out), np.asarray(fn(*args)))
    want = numerical_grad(fn, args, wrt=wrt)
    got, want = (got, want) if isinstance(wrt, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert rel_error(g, w) < tol


MODES = ["source", "tape"]


# ---- a helper returning tuples from an if/elif chain whose end Python may reach -----------

def _padding(k, mode="same"):
    if mode == "valid":
        return 0, 0
    elif mode == "same":
        return (k - 1) // 2, k // 2


def _pad_then_conv(x, w, mode="same"):
    lo, hi = _padding(w.size, mode)
    xp = np.pad(x, (lo, hi))
    return np.sum(np.convolve(xp, w, mode="valid") ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["same", "valid"])
def test_tuple_returns_from_an_elif_chain_that_may_fall_off(how, mode):
    """`lo, hi = _padding(...)` where `_padding`'s end may be reached (Python returns None
    there): was 'unpacking the result of a function that does not return a tuple'."""
    _check(lambda x, w: _pad_then_conv(x, w, how), (R.standard_normal(6),
                                                    R.standard_normal(3)), wrt=(0, 1),
           mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_the_none_path_taken_is_pythons_type_error(mode):
    x, w = R.standard_normal(6), R.standard_normal(3)
    with pytest.raises(TypeError, match="cannot unpack non-iterable NoneType"):
        _pad_then_conv(x, w, "full")
    with pytest.raises(TypeError, match="cannot unpack non-iterable NoneType"):
        srcad.grad(_pad_then_conv, mode=mode)(x, w, "full")


# ---- a namedtuple built in a callee, read by field in the caller --------------------------

_Cache = namedtuple("_Cache", ["x", "z", "h"])
_Step = namedtuple("_Step", ["a", "scale"], defaults=[0.5])


def _dense(x, W):
    z = x @ W
    h = np.tanh(z)
    return h, _Cache(x=x, z=z, h=h)


def _by_field(X, W1, W2):
    h, c1 = _dense(X, W1)
    out, c2 = _dense(h, W2)
    return np.sum(out ** 2) + 0.1 * np.sum(c1.z ** 2) + np.sum(c2.x * c1.h)


def _caches_in_a_list(X, W1, W2):
    caches = []
    h = X
    for W in (W1, W2):
        h, cache = _dense(h, W)
        caches.append(cache)
    return sum(np.sum(c.z * c.h) for c in caches) + np.sum(caches[-1].x)


def _built_here_with_default(x):
    s = _Step(np.sin(x))
    t = _Step(a=x * 2.0, scale=3.0)
    return np.sum(s.a * s.scale + t.a * t.scale + s[0] * t[0])


_ARGS3 = (R.standard_normal((4, 3)), R.standard_normal((3, 3)) * 0.5,
          R.standard_normal((3, 3)) * 0.5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,args,wrt", [
    (_by_field, _ARGS3, (0, 1, 2)), (_caches_in_a_list, _ARGS3, (1, 2)),
    (_built_here_with_default, (R.standard_normal(5),), 0)],
    ids=["callee-built", "list-of-caches", "defaults"])
def test_namedtuple_built_and_read_by_field(fn, args, wrt, mode):
    """`cache.z` of a namedtuple a callee built with `_Cache(x=x, z=z, h=h)`: was 'the
    attribute `.z` has no derivative rule' (and the constructor: '`_Cache` has no
    derivative rule')."""
    _check(fn, args, wrt=wrt, mode=mode)


def test_namedtuple_field_jvp_and_hvp():
    x = R.standard_normal(5)
    v = R.standard_normal(5)
    f = _built_here_with_default
    _, t = srcad.jvp(f, (x,), (v,))
    assert abs(t - np.sum(numerical_grad(f, (x,)) * v)) < 1e-6
    W = (_ARGS3[0], _ARGS3[1])
    g = srcad.grad(_by_field, wrt=1)
    vw = R.standard_normal(W[1].shape)
    hv = srcad.jvp(lambda w: g(W[0], w, _ARGS3[2]), (W[1],), (vw,))[1]
    fd = (g(W[0], W[1] + 1e-5 * vw, _ARGS3[2]) - g(W[0], W[1] - 1e-5 * vw, _ARGS3[2])) / 2e-5
    assert rel_error(hv, fd) < 1e-5


def _maybe_pair(x, flag):
    if flag:
        return x, x * 2.0


def _both_uses(x):
    a, b = _maybe_pair(x, True)
    r = _maybe_pair(x * 3.0, False)
    extra = 0.0 if r is None else np.sum(r[0])
    return np.sum(a * b) + extra


@pytest.mark.parametrize("mode", MODES)
def test_a_none_returning_helper_unpacked_at_one_site_tested_at_another(mode):
    """Only the call site that unpacks gets the tuple form; `r is None` still reads None."""
    _check(_both_uses, (R.standard_normal(4),), mode=mode)


# ---- a classmethod factory returning `cls(...)` -------------------------------------------

class _Model:
    def __init__(self, W1, W2, act="tanh", scale=1.0):
        self.W1, self.W2, self.act, self.scale = W1, W2, act, scale

    @classmethod
    def from_params(cls, params, **kwargs):
        return cls(params["W1"], params["W2"], **kwargs)

    @classmethod
    def from_pair(cls, W1, W2, scale=2.0):
        model = cls(W1, W2, scale=scale)
        return model

    @classmethod
    def penalty(cls, W):
        return np.sum(W ** 2)

    def __call__(self, x):
        h = x @ self.W1
        h = np.tanh(h) if self.act == "tanh" else np.maximum(h, 0.0)
        return self.scale * (h @ self.W2)


class _Wide(_Model):
    def __call__(self, x):
        return super().__call__(x) + 1.0


def _from_params(params, X):
    model = _Model.from_params(params, act="relu", scale=0.5)
    return np.sum(model(X) ** 2) + _Model.penalty(params["W1"])


def _from_pair_on_subclass(W1, W2, X):
    return np.sum(_Wide.from_pair(W1, W2)(X) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_classmethod_factory_is_followed_as_its_constructor(mode):
    """`_Model.from_params(params, act=...)` returning `cls(..., **kwargs)`: was
    '`model` has no derivative rule' (objects.py did not follow the classmethod)."""
    params = {"W1": R.standard_normal((3, 4)) * 0.5, "W2": R.standard_normal((4, 2)) * 0.5}
    X = R.standard_normal((5, 3))
    _check(_from_params, (params, X), mode=mode)
    _check(_from_pair_on_subclass, (params["W1"], params["W2"], X), wrt=(0, 1), mode=mode)


# ---- a numpy function handed to a user function as a value --------------------------------

def _apply(f, x):
    return f(x)


def _apply_n(fn, x, n=2):
    for _ in range(n):
        x = fn(x)
    return x


def _with_act(x, act=None):
    return act(x) * 2.0


def _passes_ufuncs(x):
    return np.sum(_apply(np.tanh, x) + _apply(np.exp, 0.1 * x) + _apply_n(np.sin, x)
                  + _with_act(x, act=np.arctan)) + np.sum(_apply(np.maximum.reduce, x))


@pytest.mark.parametrize("mode", MODES)
def test_a_numpy_function_passed_to_a_user_function(mode):
    """`_apply(np.tanh, x)`: was '`np.tanh` (ufunc) used as a value'; the callee's calls of
    its parameter are the row's (each function its own specialisation)."""
    _check(_passes_ufuncs, (R.standard_normal(5),), mode=mode)


def test_a_numpy_function_passed_jvp():
    x, v = R.standard_normal(5), R.standard_normal(5)
    _, t = srcad.jvp(_passes_ufuncs, (x,), (v,))
    assert abs(t - np.sum(numerical_grad(_passes_ufuncs, (x,)) * v)) < 1e-6


# ---- a defaultdict read at a missing key ---------------------------------------------------

def _defaultdict_float(x):
    acc = defaultdict(float)
    acc["a"] += np.sum(x ** 2)
    acc["b"] += np.sum(np.sin(x))
    return acc["a"] + acc["b"] + acc["never"]


def _defaultdict_list(x):
    d = defaultdict(list)
    d["h"].append(x * 2.0)
    d["h"].append(np.tanh(x))
    return np.sum(np.stack(d["h"]) ** 2) + len(d["missing"])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [_defaultdict_float, _defaultdict_list], ids=["float", "list"])
def test_defaultdict_read_at_a_missing_key_makes_the_default(fn, mode):
    """`acc["b"] += v` of a defaultdict(float) and `d["missing"]` of a defaultdict(list):
    were KeyError in source mode (a write copied the dict as a plain dict; the lowering
    of appends made defaultdict(list) a `{}`)."""
    _check(fn, (R.standard_normal(4),), mode=mode)


# ---- `def __init__(self, W, *args, **kwargs): super().__init__(*args, **kwargs)` ----------

class _Base:
    def __init__(self, name="", *args, **kwargs):
        self.name = name
        self.scale = kwargs.get("scale", 1.0)


class _Lin(_Base):
    def __init__(self, W, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.W = W

    def __call__(self, x):
        return self.scale * np.tanh(x @ self.W)


def _star_init(W1, W2, X):
    a = _Lin(W1, "first")
    b = _Lin(W2, name="second", scale=0.5)
    return np.sum(b(a(X)) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_init_with_star_args_and_kwargs_forwarded_to_super(mode):
    """`__init__(self, W, *args, **kwargs)` handing both on to `super().__init__`: was
    'has a signature srcad cannot specialise' (objects.py), so '`_Lin` has no derivative
    rule'."""
    _check(_star_init, (R.standard_normal((3, 4)) * 0.5, R.standard_normal((4, 2)) * 0.5,
                        R.standard_normal((5, 3))), wrt=(0, 1), mode=mode)


# ---- getattr(np, cfg.activation) --------------------------------------------------------

class _Cfg:
    activation = "tanh"


_CFG = _Cfg()


def _getattr_np_by_config(x, cfg=_CFG):
    act = getattr(np, cfg.activation)
    return np.sum(act(x) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_getattr_of_numpy_by_a_config_string(mode):
    """`getattr(np, cfg.activation)` with `cfg` an object known when normalising: was
    '`np` (module) used as a value'; the string is read as the attribute is, guarded."""
    cfg = _Cfg()
    x = R.standard_normal(5)
    g = srcad.grad(_getattr_np_by_config, mode=mode)
    assert rel_error(g(x, cfg), numerical_grad(_getattr_np_by_config, (x, cfg))) < 1e-6
    cfg.activation = "sin"
    assert rel_error(g(x, cfg), numerical_grad(_getattr_np_by_config, (x, cfg))) < 1e-6
    assert rel_error(g(x), numerical_grad(_getattr_np_by_config, (x,))) < 1e-6


# ---- a method returning early before it sets an attribute --------------------------------

class _Dropout:
    def __init__(self, p=0.5):
        self.p = p
        self.mask = None

    def forward(self, x, mask, train=True):
        if not train:
            return x
        self.mask = mask
        return x * mask / self.p


def _early_return_state(W, X, mask, train=True):
    d = _Dropout(p=0.8)
    h = d.forward(np.tanh(X @ W), mask, train)
    extra = 0.0 if d.mask is None else np.sum(d.mask)
    return np.sum(h ** 2) + extra


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("train", [True, False])
def test_method_returning_before_it_sets_an_attribute(train, mode):
    """`if not train: return x` before `self.mask = mask`: was '`d_mask` is used before it
    is assigned' (the early return gives back the attribute's value from before the call)."""
    args = (R.standard_normal((3, 4)), R.standard_normal((5, 3)),
            (R.random((5, 4)) < 0.8).astype(float), train)
    _check(_early_return_state, args, mode=mode)


# ---- a property with a setter -------------------------------------------------------------

class _Scaled:
    def __init__(self, w, scale=1.0):
        self.scale = scale
        self.w = w                       # (through the setter)

    @property
    def w(self):
        return self._w * self.scale

    @w.setter
    def w(self, value):
        self._w = value / self.scale

    def __call__(self, x):
        return np.tanh(x @ self.w)


def _property_setter(w, X):
    layer = _Scaled(w, scale=2.0)
    first = layer(X)
    layer.w = layer.w * 0.5 + 0.1
    return np.sum(first ** 2) + np.sum(layer(X)) + np.sum(layer._w)


@pytest.mark.parametrize("mode", MODES)
def test_property_setter_on_a_built_object(mode):
    """`layer.w = v` (and `self.w = w` in __init__) of a property with a setter: was
    '`.w` assigned from outside the class' ('assignment to an attribute of an
    expression')."""
    _check(_property_setter, (R.standard_normal((3, 2)), R.standard_normal((4, 3))),
           wrt=(0, 1), mode=mode)


# ---- namedtuple._replace ------------------------------------------------------------------

_P = namedtuple("_P", ["W", "b", "scale"])


def _replace_steps(p, X, y):
    pred = X @ p.W + p.b
    g = X.T @ (pred - y) / len(X)
    p2 = p._replace(W=p.W - 0.1 * g)
    p3 = p2._replace(b=p2.b * 0.5, scale=p.scale * 2.0)
    return np.mean((X @ p3.W + p3.b - y) ** 2) * p3.scale + np.sum(p3[0])


_PARGS = (_P(R.standard_normal(3), np.array(0.2), np.array(1.5)), R.standard_normal((6, 3)),
          R.standard_normal(6))


@pytest.mark.parametrize("mode", MODES)
def test_namedtuple_replace(mode):
    """`p._replace(W=...)` of a namedtuple: was 'the method `._replace()` has no derivative
    rule'."""
    _check(_replace_steps, _PARGS, mode=mode)


def test_namedtuple_replace_jvp():
    t = _P(R.standard_normal(3), np.array(0.3), np.array(-0.2))
    _, got = srcad.jvp(_replace_steps, _PARGS, (t, np.zeros((6, 3)), np.zeros(6)))
    g = numerical_grad(_replace_steps, _PARGS)
    assert abs(got - sum(np.sum(a * b) for a, b in zip(g, t))) < 1e-6


# ---- layers linked by prev / next, walked by a while loop --------------------------------

class _Node:
    def __init__(self, prev=None):
        self.prev = prev
        self.next = None
        if prev is not None:
            prev.next = self


class _Aff(_Node):
    def __init__(self, W, prev=None):
        super().__init__(prev)
        self.W = W

    def __call__(self, x):
        return x @ self.W


class _Soft(_Node):
    def __call__(self, x):
        return np.logaddexp(0.0, x)


def _walk_linked(W1, W2, X):
    head = _Aff(W1)
    tail = _Aff(W2, _Soft(head))
    node, h = head, X
    while node is not None:
        h = node(h)
        node = node.next
    back, g = tail, h
    while back:
        g = g * 0.5 if back is tail else g + 0.1 * np.sum(g)
        back = back.prev
    return np.sum(h ** 2) + np.sum(g) + (node is None)


@pytest.mark.parametrize("mode", MODES)
def test_linked_layers_walked_by_a_while_loop(mode):
    """`while node is not None: h = node(h); node = node.next` over built objects linked by
    `prev` / `next`: was '`node` is rebound to another object in a loop' (objects.py), so
    '`_Aff` has no derivative rule'; now unrolled, one copy per object."""
    _check(_walk_linked, (R.standard_normal((4, 3)) * 0.5, R.standard_normal((3, 2)) * 0.5,
                          R.standard_normal((5, 4))), wrt=(0, 1), mode=mode)


# ---- star-unpacking inside a display and in x.reshape(-1, *rest) -------------------------

def _starred_displays(W, x):
    B, T, *rest = x.shape
    flat = x.reshape(-1, *rest)
    h = np.tanh(flat @ W).reshape(B, T, *W.shape[1:])
    hs = [h[:, t] for t in range(T)]
    stacked = np.stack([h[:, 0] * 2.0, *hs, np.sin(h[:, -1])])
    joined = np.concatenate((*hs[:2], h[:, -1] ** 2), axis=-1)
    shape = (*h.shape[:1], -1)
    return np.sum(stacked ** 2) + np.sum(joined) + np.sum(h.reshape(shape)[:, :2])


@pytest.mark.parametrize("mode", MODES)
def test_starred_items_in_displays_and_reshape(mode):
    """`x.reshape(-1, *rest)` was 'the method `.reshape()` has no derivative rule';
    `[a, *hs, b]` / `(*hs, c)` were 'star-unpacking (`*xs`) here'."""
    _check(_starred_displays, (R.standard_normal((3, 2)), R.standard_normal((2, 4, 3))),
           wrt=(0, 1), mode=mode)


# ---- scipy.spatial.distance.cdist ----------------------------------------------------------

def _rbf_features(C, X, metric="sqeuclidean"):
    import scipy.spatial.distance
    D = scipy.spatial.distance.cdist(X, C, metric)
    return np.sum(np.exp(-0.5 * D) * np.arange(D.size).reshape(D.shape))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("metric", ["sqeuclidean", "euclidean", "cityblock"])
def test_cdist_has_a_row(metric, mode):
    """`scipy.spatial.distance.cdist(X, C, metric)`: was '`...cdist` has no derivative rule'."""
    _check(lambda C, X: _rbf_features(C, X, metric),
           (R.standard_normal((3, 2)), R.standard_normal((5, 2))), wrt=(0, 1), mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_cdist_of_another_metric_is_refused_at_the_users_line(mode):
    C, X = R.standard_normal((3, 2)), R.standard_normal((5, 2))
    with pytest.raises(srcad.SrcadError, match="metric='cosine'") as info:
        srcad.grad(_rbf_features, mode=mode)(C, X, "cosine")
    assert info.value.filename == __file__
    assert info.value.lineno == _rbf_features.__code__.co_firstlineno + 2


# ---- a static method of a class picked from a registry ------------------------------------

class _Sig:
    @staticmethod
    def f(x, derivative=False):
        s = 1 / (1 + np.exp(-x))
        return s * (1 - s) if derivative else s


class _Id:
    @staticmethod
    def f(x, derivative=False):
        return np.ones_like(x) if derivative else x


_REG = {"sigmoid": _Sig, "identity": _Id}


def _registry_static(W, X, hidden="sigmoid", output="identity"):
    a = _REG[hidden].f(X @ W)
    act = _REG[output]
    return np.sum(act.f(a) ** 2) + np.sum(_REG["sigmoid"].f(X @ W, derivative=True))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("hidden", ["sigmoid", "identity"])
def test_static_method_of_a_registry_class(hidden, mode):
    """`ACTIVATIONS[name].f(x)` with `name` a string argument (and `act = ACTIVATIONS[name];
    act.f(x)`): was 'the method `.f()` has no derivative rule'."""
    _check(_registry_static, (R.standard_normal((3, 2)), R.standard_normal((4, 3)), hidden),
           mode=mode)


# ---- a comprehension calling a stateful object --------------------------------------------

def _comprehension_of_a_cell(Wx, Wh, xs):
    cell = ElmanCell(Wx, Wh)  # (wild_repos4's cell_state_tuple, another x beside it)
    cell.reset(xs.shape[1])
    x = 2.0  # (the comprehension's own `x` is another variable)
    outs = [cell(x) for x in xs if x.shape[0] > 0]
    return np.sum(outs[-1] ** 2) + 0.1 * sum(np.sum(o) for o in outs) + x


@pytest.mark.parametrize("mode", MODES)
def test_comprehension_calling_a_stateful_object(mode):
    """`outs = [cell(x) for x in xs]` where `cell(x)` changes the object: was 'a method that
    changes the object called inside a lazily evaluated expression' (objects.py); now the
    loop Python runs."""
    _check(_comprehension_of_a_cell, (R.standard_normal((3, 4)) * 0.5,
                                      R.standard_normal((4, 4)) * 0.4,
                                      R.standard_normal((5, 2, 3))), wrt=(0, 1, 2), mode=mode)


# ---- a dict a helper returns, walked by key in the next helper -----------------------------

def _sgd_step(params, grads, lr=0.1):
    out = {}
    for k in params:
        out[k] = params[k] - lr * grads[k]
    return out


def _dict_through_helpers(params, X, y):
    for _ in range(2):
        r = X @ params["w"] + params["c"] - y
        params = _sgd_step(params, {"w": X.T @ r / len(y), "c": np.mean(r)})
    p2 = _sgd_step(params, {"w": params["w"], "c": params["c"]}, lr=0.01)
    p3 = _sgd_step(p2, p2)
    return np.mean((X @ p3["w"] + p3["c"] - y) ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_a_dict_a_helper_returns_is_walked_by_key_in_the_next(mode):
    """`params = step(params, grads)` then `step(params, ...)` where step does `for k in
    params`: was a KeyError (0) at run time -- the result was not known to be a dict, so the
    loop indexed it as a list; also the parameter itself before it is rebound."""
    args = ({"w": R.standard_normal(3), "c": np.array(0.2)}, R.standard_normal((6, 3)),
            R.standard_normal(6))
    _check(_dict_through_helpers, args, mode=mode)
