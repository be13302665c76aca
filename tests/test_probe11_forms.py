"""Classes of failure the seventh wild-repositories probe found (tests/corpus_probe/
wild_repos6.py), several forms each, against central differences (and torch where it has
the op); each failed before its fix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.special

import srcad
from srcad.testing import numerical_grad, rel_error

R = np.random.default_rng(11)
MODES = ["source", "tape", "fuse"]


def _check(fn, args, wrt=0, how="source", tol=1e-6):
    options = {"fuse": True} if how == "fuse" else {"mode": how, "fuse": False}
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
    return got


# ---- log-sum-exp of terms that are all -inf: no weight, not NaN ---------------------------
# (a zero cotangent reaching `logaddexp(-inf, -inf)` was 0 * exp(-inf - -inf) = NaN, which
# then spread into every parameter: the CTC and HMM forward recursions' unreachable states)

def _ctc_like(lp, ext=(0, 1, 0, 2, 0, 2, 0)):
    S, T = len(ext), len(lp)
    alpha = np.full(S, -np.inf)
    alpha[0], alpha[1] = lp[0, 0], lp[0, ext[1]]
    for t in range(1, T):
        prev = alpha.copy()
        for s in range(S):
            a = prev[s]
            if s > 0:
                a = np.logaddexp(a, prev[s - 1])
            if s > 1 and ext[s] != 0 and ext[s] != ext[s - 2]:
                a = np.logaddexp(a, prev[s - 2])
            alpha[s] = a + lp[t, ext[s]]
    return -np.logaddexp(alpha[-1], alpha[-2])


def _logaddexp2_chain(x):
    dead = x[1] + np.full(2, -np.inf)             # -inf terms that depend on x
    b = np.logaddexp2(dead[0], dead[1])           # -inf, and its cotangent is 0
    return np.logaddexp2(x[0], b) * x[2]


def _lse_rows(x):
    m = x + np.where(np.arange(4)[None, :] < np.array([[2], [0], [3]]), 0.0, -np.inf)
    m = np.vstack([m, x[:1]])
    rows = scipy.special.logsumexp(m, axis=1)     # row 1 is all -inf
    return np.sum(np.exp(np.maximum(rows, -5.0))) + np.sum(np.logaddexp.reduce(m, axis=1)[
        [0, 2, 3]])


def _reduce_all_inf(x):
    m = np.concatenate([x, x - np.inf]).reshape(2, 3)
    r = np.logaddexp.reduce(m, axis=1)
    return r[0] + np.sum(np.maximum(r, 0.0))


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn,shape", [(_ctc_like, (6, 3)), (_logaddexp2_chain, (3,)),
                                      (_lse_rows, (3, 4)), (_reduce_all_inf, (3,))],
                         ids=["ctc_logaddexp", "logaddexp2", "scipy_logsumexp",
                              "logaddexp_reduce"])
def test_log_sum_exp_of_all_minus_inf_terms(fn, shape, how):
    _check(fn, (R.standard_normal(shape),), how=how)


def test_ctc_like_recursion_against_torch():
    torch = pytest.importorskip("torch")
    lp = R.standard_normal((5, 3))
    got = srcad.grad(_ctc_like)(lp)
    t = torch.tensor(lp, requires_grad=True)
    ext = (0, 1, 0, 2, 0, 2, 0)
    alpha = [t[0, 0], t[0, 1]] + [torch.tensor(-np.inf, dtype=torch.float64)] * 5
    for step in range(1, 5):
        prev = list(alpha)
        for s in range(7):
            terms = [prev[s]] + ([prev[s - 1]] if s > 0 else []) + (
                [prev[s - 2]] if s > 1 and ext[s] != 0 and ext[s] != ext[s - 2] else [])
            finite = [v for v in terms if torch.isfinite(v)]   # (torch's logaddexp: NaN)
            a = torch.logsumexp(torch.stack(finite), 0) if finite else terms[0]
            alpha[s] = a + t[step, ext[s]]
    (-torch.logaddexp(alpha[-1], alpha[-2])).backward()
    assert rel_error(got, t.grad.numpy()) < 1e-10


def test_logsumexp_jvp_of_an_all_minus_inf_row():
    x = R.standard_normal((3, 4))
    v = R.standard_normal((3, 4))
    _, t = srcad.jvp(_lse_rows, (x,), (v,))
    assert np.isfinite(t)
    assert abs(t - np.sum(numerical_grad(_lse_rows, (x,)) * v)) < 1e-6


# ---- a dict given to a callee that walks its keys, where the caller rebinds the name -------
# (`params = {..}; params = opt.step(params, grads)`: the callee's `for k in params` read
# params[0] -- a KeyError from the user's line -- since pylower.py counts a rebound name no
# dict of its own)

class _Momentum:
    def __init__(self, lr=0.1, beta=0.9):
        self.lr, self.beta, self.velocity = lr, beta, {}

    def step(self, params, grads):
        new = {}
        for k in params:
            v = self.beta * self.velocity.get(k, 0.0) + grads[k]
            self.velocity[k] = v
            new[k] = params[k] - self.lr * v
        return new


def _halve(params):
    out = {}
    for k in params:
        out[k] = params[k] * 0.5
    return out


def _scale_items(params, s):
    return {k: v * s for k, v in params.items()}


def _dict_to_function(w, b):
    params = {"w": w, "b": b}
    params = _halve(params)
    return np.sum(params["w"] ** 2) + params["b"] ** 2


def _dict_through_loop(w, b):
    params = {"w": w, "b": b}
    for i in range(3):
        params = _halve(params)
        params = _scale_items(params, 1.0 + i)
    return np.sum(np.tanh(params["w"])) + params["b"] ** 3


def _optimizer_object(w, b, X, y):
    opt = _Momentum(lr=0.05)
    params = {"w": w, "b": b}
    for _ in range(3):
        r = X @ params["w"] + params["b"] - y
        params = opt.step(params, {"w": X.T @ r / len(y), "b": r.mean()})
    return np.mean((X @ params["w"] + params["b"] - y) ** 2)


def _dict_remade_in_loop(w, b):
    params = {"w": w, "b": b}
    for i in range(2):
        new = {}
        for k in params:
            new[k] = np.sin(params[k]) * (i + 1.0)
        params = new
    return np.sum(params["w"] ** 2) + params["b"]


_W, _B = R.standard_normal(3), np.float64(0.4)
_X, _Y = R.standard_normal((6, 3)), R.standard_normal(6)


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn,args,wrt", [
    (_dict_to_function, (_W, _B), (0, 1)), (_dict_through_loop, (_W, _B), (0, 1)),
    (_optimizer_object, (_W, _B, _X, _Y), (0, 1)), (_dict_remade_in_loop, (_W, _B), (0, 1))],
    ids=["to_function", "through_loop", "optimizer_object", "remade_in_loop"])
def test_dict_rebound_and_walked_by_a_callee(fn, args, wrt, how):
    _check(fn, args, wrt=wrt, how=how)


def _dict_alias_kept_across_trips(w):
    s = 0.0
    b = {"v": w}
    a = {}
    for i in range(3):
        a["v"] = w * (i + 1.0)        # (`b` is the same dict from the 2nd trip: Python's b sees it)
        s = s + np.sum(b["v"] * w)
        b = a
    return s


def test_dict_alias_that_survives_the_loop_is_still_refused():
    with pytest.raises(srcad.SrcadError, match="cannot put back"):
        srcad.grad(_dict_alias_kept_across_trips)(_W)


def test_optimizer_object_against_torch():
    torch = pytest.importorskip("torch")
    got = srcad.grad(_optimizer_object, wrt=(0, 1))(_W, _B, _X, _Y)
    w = torch.tensor(_W, requires_grad=True)
    b = torch.tensor(float(_B), dtype=torch.float64, requires_grad=True)
    X, y = torch.tensor(_X), torch.tensor(_Y)
    p, vel = {"w": w, "b": b}, {}
    for _ in range(3):
        r = X @ p["w"] + p["b"] - y
        g = {"w": X.T @ r / len(y), "b": r.mean()}
        new = {}
        for k in p:
            vel[k] = 0.9 * vel.get(k, 0.0) + g[k]
            new[k] = p[k] - 0.05 * vel[k]
        p = new
    torch.mean((X @ p["w"] + p["b"] - y) ** 2).backward()
    assert rel_error(got[0], w.grad.numpy()) < 1e-10
    assert rel_error(got[1], b.grad.numpy()) < 1e-10


# ---- `self.attr = kwargs.pop(key, default)` in an __init__ reached by super().__init__ ------
# (was "`pop` takes at most 1 positional arguments in srcad (stack)": the dict `**kwargs`
# becomes in a followed constructor was not known to be one of its own)

class _Module:
    def __init__(self, name=None, **kwargs):
        self.name = name or type(self).__name__
        self.training = kwargs.pop("training", True)
        self.scale = kwargs.pop("scale", 1.0)
        self.extra = kwargs


class _Linear(_Module):
    def __init__(self, W, b=None, **kwargs):
        super().__init__(**kwargs)
        self.W, self.b = W, b

    def __call__(self, x):
        out = x @ self.W * self.scale
        out = out if self.b is None else out + self.b
        return out if self.training else np.tanh(out)


class _Residual(_Linear):
    def __init__(self, W, **kwargs):
        super().__init__(W, name="res", **kwargs)

    def __call__(self, x):
        return x + super().__call__(x)


def _kwargs_pop_chain(W1, W2, b, X):
    layers = [_Linear(W1, training=False), _Linear(W2, b, scale=0.5),
              _Residual(W2, training=False, scale=2.0, note="x")]
    h = X
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)


class _Popper:
    def __init__(self, W, **options):
        self.W = W
        self.power = options.pop("power", 2)
        self.keep = len(options)

    def __call__(self, x):
        return np.sum(np.abs(x @ self.W) ** self.power) + self.keep


def _kwargs_pop_direct(W, X):
    return _Popper(W)(X) + _Popper(W, power=3, other=1)(X)


_W3 = R.standard_normal((3, 3)) * 0.6


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn,args,wrt", [
    (_kwargs_pop_chain, (_W3, _W3.T.copy(), R.standard_normal(3), R.standard_normal((4, 3))),
     (0, 1, 2)),
    (_kwargs_pop_direct, (_W3, R.standard_normal((4, 3))), (0, 1))],
    ids=["super_chain", "direct"])
def test_kwargs_pop_into_an_attribute(fn, args, wrt, how):
    _check(fn, args, wrt=wrt, how=how)


# ---- a built object's method handed to a user function as a value -------------------------
# (`rk4_solve(func.dynamics, h0, ts)`, `odeint(self.func.f, ...)`: was "`ODEFunc` has no
# derivative rule" -- objects.py refused "the method `.dynamics` used as a value")

class _Dyn:
    def __init__(self, W1, W2):
        self.W1, self.W2 = W1, W2
        self.nfe = 0

    def f(self, t, h):
        self.nfe += 1
        return np.tanh(h @ self.W1 + t) @ self.W2


def _euler_step(fn, t, h, dt):
    return h + dt * fn(t, h)


def _odeint(fn, h, ts):
    for t0, t1 in zip(ts[:-1], ts[1:]):
        h = _euler_step(fn, t0, h, t1 - t0)
    return h


def _rk4(f, h, ts):
    for t0, t1 in zip(ts[:-1], ts[1:]):
        dt = t1 - t0
        k1 = f(t0, h)
        k2 = f(t0 + dt / 2, h + dt * k1 / 2)
        k3 = f(t0 + dt / 2, h + dt * k2 / 2)
        k4 = f(t1, h + dt * k3)
        h = h + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    return h


class _NODE:
    def __init__(self, W1, W2):
        self.func = _Dyn(W1, W2)

    def forward(self, h0):
        return _rk4(self.func.f, h0, np.linspace(0.0, 1.0, 4))


class _Linear_ODE:
    def __init__(self, W):
        self.W = W

    def rhs(self, t, y):
        return -y @ self.W

    def integrate(self, y):
        return _odeint(fn=self.rhs, h=y, ts=np.linspace(0.0, 0.5, 3))


def _bound_through_two_levels(W1, W2, h0):
    d = _Dyn(W1, W2)
    hT = _odeint(d.f, h0, np.linspace(0.0, 1.0, 5))
    return np.sum(hT ** 2) + 0.01 * d.nfe          # (the method's state flows back)


def _bound_of_an_attribute(W1, W2, h0):
    return np.sum(_NODE(W1, W2).forward(h0) ** 2)


def _own_bound_method_by_keyword(W1, W2, h0):
    return np.sum(np.sin(_Linear_ODE(W2.T @ W1.T).integrate(h0)))


_B3 = (R.standard_normal((2, 3)) * 0.5, R.standard_normal((3, 2)) * 0.5,
       R.standard_normal((4, 2)))


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn", [_bound_through_two_levels, _bound_of_an_attribute,
                                _own_bound_method_by_keyword],
                         ids=["two_levels", "attribute_object", "own_method_keyword"])
def test_bound_method_handed_to_a_function(fn, how):
    _check(fn, _B3, wrt=(0, 1, 2), how=how, tol=1e-5)


def test_bound_method_rk4_against_torch():
    torch = pytest.importorskip("torch")
    got = srcad.grad(_bound_of_an_attribute, wrt=(0, 1))(*_B3)
    W1, W2 = (torch.tensor(a, requires_grad=True) for a in _B3[:2])
    h = torch.tensor(_B3[2])
    ts = np.linspace(0.0, 1.0, 4)

    def f(t, y):
        return torch.tanh(y @ W1 + float(t)) @ W2
    for t0, t1 in zip(ts[:-1], ts[1:]):
        dt = float(t1 - t0)
        k1 = f(t0, h)
        k2 = f(t0 + dt / 2, h + dt * k1 / 2)
        k3 = f(t0 + dt / 2, h + dt * k2 / 2)
        k4 = f(t1, h + dt * k3)
        h = h + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    torch.sum(h ** 2).backward()
    assert rel_error(got[0], W1.grad.numpy()) < 1e-10
    assert rel_error(got[1], W2.grad.numpy()) < 1e-10


def _keep(fn):
    return fn


def _first(fs, t, h):
    return fs[0](t, h)


def _bound_returned(W1, W2, h0):
    d = _Dyn(W1, W2)
    return np.sum(_keep(d.f)(0.0, h0))


def _bound_in_a_list(W1, W2, h0):
    d = _Dyn(W1, W2)
    return np.sum(_first([d.f], 0.0, h0))


def _bound_held_in_a_name(W1, W2, h0):
    d = _Dyn(W1, W2)
    g = d.f
    return np.sum(_odeint(g, h0, np.linspace(0.0, 1.0, 3)))


@pytest.mark.parametrize("fn", [_bound_returned, _bound_in_a_list, _bound_held_in_a_name],
                         ids=["returned", "in_a_list", "held_in_a_name"])
def test_bound_method_other_uses_are_refused_cleanly(fn):
    """Only handed to a function srcad follows, or called there: anything else is the
    refusal it was (returning the method from the callee was a TypeError from the compiler
    while this class was written)."""
    with pytest.raises(srcad.SrcadError, match="no derivative rule"):
        srcad.grad(fn, wrt=(0, 1, 2))(*_B3)


# ---- a comprehension building objects as many times as an argument says --------------------
# (`[PlanarFlow(U[k], ...) for k in range(len(U))]`, `[Coupling(m, a) for m, a in zip(masks,
# Ws)]`, `[Flow(u) for u in U]` of an array argument: "a comprehension building objects over
# a sequence whose length is not known before running" -- a `for` loop building them waited
# for the first call's counts, a comprehension did not, and an array's rows were no count)

class _Planar:
    def __init__(self, u, w, b):
        self.u, self.w, self.b = u, w, b
        self.h = lambda x: np.tanh(x)

    def __call__(self, z, log_q):
        lin = z @ self.w + self.b
        psi = (1 - np.tanh(lin) ** 2)[:, None] * self.w
        log_q = log_q - np.log(np.abs(1 + psi @ self.u))
        return z + self.u * self.h(lin)[:, None], log_q


def _run_flows(flows, z):
    log_q = -0.5 * np.sum(z ** 2, axis=1)
    for flow in flows:
        z, log_q = flow(z, log_q)
    return np.mean(log_q + 0.5 * np.sum(z ** 2, axis=1))


def _flows_range_len(U, W, b, z):
    return _run_flows([_Planar(U[k], W[k], b[k]) for k in range(len(U))], z)


def _flows_shape0(U, W, b, z):
    return _run_flows([_Planar(U[k], W[k], b[k]) for k in range(U.shape[0])], z)


def _flows_zip_rows(U, W, b, z):
    return _run_flows([_Planar(u, w, c) for u, w, c in zip(U, W, b)], z)


def _flows_int_argument(U, W, b, z, K=2):
    return _run_flows([_Planar(U[k], W[k], b[k]) for k in range(K)], z)


class _Coupling:
    def __init__(self, mask, Ws):
        self.mask, self.Ws = mask, Ws

    def forward(self, x):
        xm = x * self.mask
        s = np.tanh(xm @ self.Ws) * (1 - self.mask)
        return xm + (1 - self.mask) * x * np.exp(s), s.sum(axis=1)


def _couplings_zip_local_list(Ws, z):
    masks = [(np.arange(2) + k) % 2 for k in range(len(Ws))]
    layers = [_Coupling(m.astype(float), a) for m, a in zip(masks, Ws)]
    log_det = 0.0
    for layer in layers:
        z, ld = layer.forward(z)
        log_det = log_det + ld
    return np.sum(z ** 2) - np.sum(log_det)


_PF = (R.standard_normal((3, 2)) * 0.3, R.standard_normal((3, 2)) * 0.5,
       R.standard_normal(3) * 0.1, R.standard_normal((5, 2)))


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn", [_flows_range_len, _flows_shape0, _flows_zip_rows,
                                _flows_int_argument, _couplings_zip_local_list],
                         ids=["range_len", "shape0", "zip_rows", "int_argument",
                              "zip_local_list"])
def test_comprehension_building_objects_counted_by_an_argument(fn, how):
    if fn is _couplings_zip_local_list:
        _check(fn, (R.standard_normal((3, 2, 2)) * 0.4, R.standard_normal((5, 2))), wrt=(0, 1),
               how=how)
    else:
        _check(fn, _PF, wrt=(0, 1, 2), how=how)


def test_comprehension_count_follows_the_argument():
    """Another number of rows is another specialisation (the count is in its key), as
    calling f again with other arguments is."""
    g = srcad.grad(_flows_zip_rows, wrt=(0, 1))
    for n in (3, 1, 4):
        args = (R.standard_normal((n, 2)) * 0.3, R.standard_normal((n, 2)) * 0.5,
                R.standard_normal(n) * 0.1, R.standard_normal((5, 2)))
        got = g(*args)
        want = numerical_grad(_flows_zip_rows, args, wrt=(0, 1))
        assert rel_error(got[0], want[0]) < 1e-6 and rel_error(got[1], want[1]) < 1e-6


# ---- a tuple of built objects ----------------------------------------------------------------
# (`net = (Dense(W1, b1), Dense(W2, b2))`, `self.blocks = (a, b)`: a list of them worked, a
# tuple was "the object is handed to a function or operator srcad does not follow into")

class _Slot:
    __slots__ = ("W", "b", "act")

    def __init__(self, W, b=0.0, act="tanh"):
        self.W, self.b, self.act = W, b, act

    def __call__(self, x):
        z = x @ self.W + self.b
        return np.tanh(z) if self.act == "tanh" else z


class _Net:
    def __init__(self, W1, b1, W2):
        self.blocks = (_Slot(W1, b1), _Slot(W2, act="linear"))

    def __call__(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x


def _tuple_loop(W1, b1, W2, X):
    net = (_Slot(W1, b1), _Slot(W2, act="linear"))
    for layer in net:
        X = layer(X)
    return np.sum(X ** 2)


def _tuple_attribute(W1, b1, W2, X):
    return np.sum(_Net(W1, b1, W2)(X) ** 3)


def _tuple_indexed_reversed(W1, b1, W2, X):
    net = (_Slot(W1, b1), _Slot(W2, act="linear"))
    h = net[1](net[0](X))
    for layer in reversed(net[:1]):
        h = h + np.sum(layer(X))
    return np.sum(h ** 2) + len(net)


def _tuple_of_values_still_values(W1, b1, W2, X):
    pairs = ((W1, np.tanh), (W2, np.sin))
    for W, f in pairs:
        X = f(X @ W)
    return np.sum(X) + np.sum(b1)


_TU = (R.standard_normal((3, 4)), R.standard_normal(4), R.standard_normal((4, 2)),
       R.standard_normal((5, 3)))


@pytest.mark.parametrize("how", MODES)
@pytest.mark.parametrize("fn", [_tuple_loop, _tuple_attribute, _tuple_indexed_reversed,
                                _tuple_of_values_still_values],
                         ids=["loop", "attribute", "indexed_reversed", "values"])
def test_tuple_of_built_objects(fn, how):
    _check(fn, _TU, wrt=(0, 1, 2), how=how)
