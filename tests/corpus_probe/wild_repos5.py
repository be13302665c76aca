"""Fifth set of programs in the styles of public numpy-from-scratch code (read for patterns
only, written here from scratch): Gaussian-process code that adds jitter through
``K.flat[::n + 1]``, builds distance matrices by writing through ``D.T[:]``, calls
``scipy.spatial.distance.cdist`` and ``scipy.linalg.cho_factor`` / ``cho_solve``, and
parameterises a Cholesky factor by ``L[np.tril_indices(d)] = theta``; structured prediction
(a linear-chain CRF's forward algorithm, a scaled HMM forward pass); a recursive network over
a parse tree; helpers under user decorators and ``functools.lru_cache``; parameters in
``types.SimpleNamespace``, attribute-dicts, ``typing.NamedTuple`` layers, ``Enum`` switches,
``functools.cached_property``; numpy's safe forms ``with np.errstate(...)``,
``np.divide(..., out=, where=)``, ``np.log(p, out=, where=)``, reductions with ``where=``,
``np.nanmean``; ``np.bincount(..., weights=)`` segment sums; upsampling by ``repeat`` /
``np.kron``; kernel flips by ``np.rot90``; ``itertools.product`` convolution loops;
discounted returns; einsum traces and diagonals; ``tensordot`` with axis lists;
``try/except LinAlgError`` fallbacks; ``match`` statements; the walrus; starred unpacking;
``global`` and ``nonlocal`` counters; generator functions yielding mini-batches; a small
tensor-wrapper class with operator dunders; ``dataclasses.fields`` / ``replace``;
``np.vectorize``; logging inside the loss; ufunc methods (``np.logaddexp.reduce``,
``np.subtract.outer``, ``np.maximum.accumulate``); ``np.interp``; ``pinv`` / ``lstsq`` /
``svd`` / ``qr``; ``scipy.special`` (``erf``, ``expit``, ``xlogy``, ``gammaln``,
``log_softmax``); ``np.fft`` convolution; iteration over an array's rows."""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import itertools
import logging
import operator
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np
import scipy.linalg
import scipy.special
from scipy.spatial.distance import cdist

from . import Probe, rng

log = logging.getLogger("srcad.probe10")


# ---- 1. GP: jitter on the diagonal through .flat, cho_factor / cho_solve -----------------

def gp_flat_jitter(log_ell, log_sf, X, y):
    ell, sf2 = np.exp(log_ell), np.exp(2 * log_sf)
    sq = np.sum(X ** 2, 1)
    d2 = sq[:, None] + sq[None, :] - 2 * X @ X.T
    K = sf2 * np.exp(-0.5 * d2 / ell ** 2)
    n = len(K)
    K.flat[::n + 1] += 0.1
    c, low = scipy.linalg.cho_factor(K, lower=True)
    alpha = scipy.linalg.cho_solve((c, low), y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(c)))


def _gpflat():
    r = rng(1001)
    return np.float64(0.2), np.float64(-0.1), r.standard_normal((6, 2)), r.standard_normal(6)


# ---- 2. pairwise differences by writing through a transposed view -----------------------

def transpose_view_distances(x, w):
    n = len(x)
    D = np.zeros((n, n))
    D[:] = x
    D.T[:] -= x
    return np.sum(w * np.exp(-D ** 2))


def _tvd():
    r = rng(1002)
    return r.standard_normal(5), r.random((5, 5))


# ---- 3. kernel ridge with scipy's cdist --------------------------------------------------

def cdist_kernel_ridge(Z, X, y, gamma=0.5):
    Kzz = np.exp(-gamma * cdist(Z, Z, "sqeuclidean"))
    Kxz = np.exp(-gamma * cdist(X, Z, metric="sqeuclidean"))
    a = np.linalg.solve(Kzz + 1e-2 * np.eye(len(Z)), Kxz.T @ y)
    return np.mean((Kxz @ a - y) ** 2) + 1e-3 * np.sum(cdist(Z, X))


def _cdist():
    r = rng(1003)
    return r.standard_normal((4, 2)), r.standard_normal((7, 2)), r.standard_normal(7)


# ---- 4. a Cholesky factor filled by tril_indices ----------------------------------------

def tril_cholesky_nll(theta, mu, X):
    d = X.shape[1]
    L = np.zeros((d, d))
    L[np.tril_indices(d)] = theta
    L[np.diag_indices(d)] = np.exp(np.diag(L))
    Z = scipy.linalg.solve_triangular(L, (X - mu).T, lower=True)
    return 0.5 * np.sum(Z ** 2) / len(X) + np.sum(np.log(np.diag(L)))


def _tril():
    r = rng(1004)
    return r.standard_normal(6) * 0.3, r.standard_normal(3) * 0.1, r.standard_normal((8, 3))


# ---- 5. linear-chain CRF negative log-likelihood ----------------------------------------

def _lse(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def crf_nll(W, trans, X, tags):
    emit = X @ W                                   # (T, K)
    T = len(tags)
    alpha = emit[0].copy()
    for t in range(1, T):
        alpha = _lse(alpha[:, None] + trans, axis=0) + emit[t]
    log_Z = _lse(alpha)
    gold = emit[np.arange(T), tags].sum() + trans[tags[:-1], tags[1:]].sum()
    return log_Z - gold


def _crf():
    r = rng(1005)
    return (r.standard_normal((4, 3)) * 0.5, r.standard_normal((3, 3)) * 0.3,
            r.standard_normal((5, 4)), np.array([0, 2, 1, 1, 0]))


# ---- 6. a scaled HMM forward pass -------------------------------------------------------

def hmm_scaled_forward(logits_A, logits_B, pi, obs):
    A = np.exp(logits_A) / np.exp(logits_A).sum(axis=1, keepdims=True)
    B = np.exp(logits_B) / np.exp(logits_B).sum(axis=1, keepdims=True)
    alpha = pi * B[:, obs[0]]
    loglik = 0.0
    for o in obs[1:]:
        c = alpha.sum()
        alpha /= c
        loglik += np.log(c)
        alpha = (alpha @ A) * B[:, o]
    return -(loglik + np.log(alpha.sum()))


def _hmm():
    r = rng(1006)
    return (r.standard_normal((3, 3)), r.standard_normal((3, 4)), np.full(3, 1 / 3),
            np.array([0, 3, 1, 2, 2, 1]))


# ---- 7. a recursive network over a parse tree -------------------------------------------

def _encode(node, E, W):
    if isinstance(node, int):
        return E[node]
    left, right = node
    return np.tanh(W @ np.concatenate([_encode(left, E, W), _encode(right, E, W)]))


def recursive_tree(E, W, u):
    tree = ((0, 1), (2, (3, 1)))
    return np.sum(u * _encode(tree, E, W)) ** 2


def _tree():
    r = rng(1007)
    return r.standard_normal((4, 3)) * 0.5, r.standard_normal((3, 6)) * 0.5, \
        r.standard_normal(3)


# ---- 8. helpers under a user decorator ---------------------------------------------------

def finite_checked(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        assert np.all(np.isfinite(out)), f"{fn.__name__} produced non-finite values"
        return out
    return wrapper


@finite_checked
def dense_relu(x, W, b=0.0):
    return np.maximum(x @ W + b, 0.0)


def decorated_helpers(W1, b1, W2, X, y):
    h = dense_relu(X, W1, b=b1)
    out = dense_relu(h, W2)
    return np.mean((out - y) ** 2)


def _deco():
    r = rng(1008)
    return (r.standard_normal((3, 5)), r.standard_normal(5) * 0.1 + 0.2,
            r.standard_normal((5, 2)), r.standard_normal((6, 3)), r.standard_normal((6, 2)))


# ---- 9. a position table behind functools.lru_cache --------------------------------------

@functools.lru_cache(maxsize=None)
def position_table(T, D):
    pos = np.arange(T)[:, None] / np.power(10000.0, np.arange(0, D, 2)[None, :] / D)
    table = np.zeros((T, D))
    table[:, 0::2] = np.sin(pos)
    table[:, 1::2] = np.cos(pos)
    return table


def lru_cached_positions(E, Wo, tokens):
    x = E[tokens] + position_table(len(tokens), E.shape[1])
    return np.sum(np.tanh(x @ Wo) ** 2)


def _lru():
    r = rng(1009)
    return r.standard_normal((6, 4)), r.standard_normal((4, 3)), np.array([1, 4, 2, 2, 5])


# ---- 10. parameters in a SimpleNamespace --------------------------------------------------

def namespace_params(W, b, X, y):
    p = SimpleNamespace(W=W, b=b, l2=1e-2)
    z = X @ p.W + p.b
    return np.mean(np.logaddexp(0.0, -y * z)) + p.l2 * np.sum(p.W ** 2)


def _ns():
    r = rng(1010)
    return r.standard_normal(3), np.float64(0.1), r.standard_normal((8, 3)), \
        np.sign(r.standard_normal(8))


# ---- 11. an attribute-dict of parameters -------------------------------------------------

class AttrDict(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


def attrdict_params(W1, W2, X):
    net = AttrDict(W1=W1, W2=W2)
    net.act = np.tanh
    h = net.act(X @ net.W1)
    return np.sum((h @ net.W2) ** 2)


def _ad():
    r = rng(1011)
    return r.standard_normal((3, 4)), r.standard_normal((4, 2)), r.standard_normal((5, 3))


# ---- 12. typing.NamedTuple layers with a __call__ ----------------------------------------

class DenseNT(NamedTuple):
    W: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return x @ self.W + self.b


def namedtuple_layers(W1, b1, W2, b2, X):
    layers = [DenseNT(W1, b1), DenseNT(W=W2, b=b2)]
    h = X
    for i, layer in enumerate(layers):
        h = layer(h)
        if i < len(layers) - 1:
            h = np.tanh(h)
    return np.mean(h ** 2)


def _ntl():
    r = rng(1012)
    return (r.standard_normal((3, 4)), r.standard_normal(4) * 0.1, r.standard_normal((4, 2)),
            r.standard_normal(2) * 0.1, r.standard_normal((5, 3)))


# ---- 13. an Enum switch ------------------------------------------------------------------

class Act(enum.Enum):
    RELU = "relu"
    TANH = "tanh"
    SOFTPLUS = "softplus"


def _apply(z, act):
    if act is Act.RELU:
        return np.maximum(z, 0)
    if act == Act.TANH:
        return np.tanh(z)
    return np.log1p(np.exp(z))


def enum_activations(W1, W2, X, act=Act.SOFTPLUS):
    h = _apply(X @ W1, act)
    return np.sum(_apply(h @ W2, Act.TANH) ** 2)


def _enum():
    r = rng(1013)
    return r.standard_normal((3, 4)), r.standard_normal((4, 2)), r.standard_normal((5, 3))


# ---- 14. numpy's safe forms: errstate, divide/log with out= and where= --------------------

def errstate_log(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    with np.errstate(divide="ignore", invalid="ignore"):
        logp = np.log(p)
        log1mp = np.log(1.0 - p)
    return -np.mean(y * logp + (1 - y) * log1mp)


def _err():
    r = rng(1014)
    return r.standard_normal(3) * 0.5, r.standard_normal((8, 3)), (r.random(8) < 0.5) * 1.0


def divide_where_out(W, X, counts):
    s = np.exp(X @ W)
    tot = s.sum(axis=1, keepdims=True)
    frac = np.divide(counts, tot, out=np.zeros_like(tot), where=tot != 0)
    return np.sum(frac ** 2) + np.sum(np.divide(s, tot, out=np.zeros_like(s), where=tot > 0))


def _dwo():
    r = rng(1015)
    return r.standard_normal((3, 4)) * 0.3, r.standard_normal((5, 3)), r.random((5, 1))


def log_where_entropy(W, X):
    z = X @ W
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    logp = np.log(p, out=np.zeros_like(p), where=p > 0)
    return -np.sum(p * logp)


def _lwe():
    r = rng(1016)
    return r.standard_normal((3, 4)), r.standard_normal((5, 3))


def reduction_where_mask(W, X, mask):
    err = (X @ W) ** 2
    return np.mean(err, where=mask) + np.sum(err, where=~mask) * 0.1


def _rwm():
    r = rng(1017)
    return r.standard_normal((3, 2)), r.standard_normal((6, 3)), r.random((6, 2)) < 0.6


def nanmean_targets(w, X, y):
    pred = X @ w
    return np.nanmean((pred - y) ** 2) + 0.1 * np.nansum(np.abs(pred - y))


def _nan():
    r = rng(1018)
    y = r.standard_normal(7)
    y[[1, 4]] = np.nan
    return r.standard_normal(3), r.standard_normal((7, 3)), y


# ---- 15. segment sums by bincount with weights --------------------------------------------

def bincount_segments(E, W, tokens, seg):
    h = np.tanh(E[tokens] @ W)                      # (n, d)
    k = seg.max() + 1
    pooled = np.stack([np.bincount(seg, weights=h[:, j], minlength=k)
                       for j in range(h.shape[1])], axis=1)
    counts = np.bincount(seg, minlength=k)[:, None]
    return np.sum((pooled / counts) ** 2)


def _binc():
    r = rng(1019)
    return (r.standard_normal((5, 3)), r.standard_normal((3, 2)), np.array([0, 3, 1, 4, 4, 2]),
            np.array([0, 0, 1, 1, 1, 2]))


# ---- 16. nearest upsampling by repeat and kron --------------------------------------------

def upsample_repeat_kron(x, w):
    up = x.repeat(2, axis=2).repeat(2, axis=3)
    up2 = np.kron(x, np.ones((1, 1, 2, 2)))
    return np.sum(w * up) + np.sum((up - up2) ** 2) + np.sum(np.sin(up2))


def _up():
    r = rng(1020)
    return r.standard_normal((2, 1, 3, 3)), r.standard_normal((2, 1, 6, 6))


# ---- 17. convolution by flipped kernels (rot90) and itertools.product ---------------------

def rot90_product_conv(x, w):
    kf = np.rot90(w, 2)
    kh, kw = kf.shape
    H, W = x.shape[0] - kh + 1, x.shape[1] - kw + 1
    out = np.zeros((H, W))
    for i, j in itertools.product(range(H), range(W)):
        out[i, j] = np.sum(x[i:i + kh, j:j + kw] * kf)
    return np.sum(np.tanh(out) ** 2) + np.sum(np.flip(w, axis=0)[0])


def _rot():
    r = rng(1021)
    return r.standard_normal((5, 5)), r.standard_normal((3, 2))


# ---- 18. discounted returns with a learned baseline --------------------------------------

def actor_critic_loss(Wp, Wv, S, actions, rewards, gamma=0.9):
    T = len(rewards)
    returns = np.zeros(T)
    running = 0.0
    for t in reversed(range(T)):
        running = rewards[t] + gamma * running
        returns[t] = running
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    logits = S @ Wp
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    values = S @ Wv
    adv = returns - values
    policy = -np.sum(logp[np.arange(T), actions] * adv)
    return policy + 0.5 * np.sum(adv ** 2)


def _ac():
    r = rng(1022)
    return (r.standard_normal((3, 2)) * 0.5, r.standard_normal(3) * 0.5,
            r.standard_normal((6, 3)), np.array([0, 1, 1, 0, 1, 0]), r.random(6))


# ---- 19. einsum traces, diagonals and ellipses -------------------------------------------

def einsum_traces(A, B):
    S = A @ A.T
    tr = np.einsum("ii->", S)
    dg = np.einsum("ii->i", S)
    bat = np.einsum("...ij,...jk->...ik", B, A)
    return tr + np.sum(np.log(dg)) + np.einsum("bij,bij->", bat, bat)


def _ein():
    r = rng(1023)
    return r.standard_normal((3, 3)), r.standard_normal((2, 4, 3))


# ---- 20. tensordot with axis lists --------------------------------------------------------

def tensordot_axes(x, W, V):
    h = np.tanh(np.tensordot(x, W, axes=([1, 2], [0, 1])))     # (N, F)
    return np.sum(np.tensordot(h, V, axes=1) ** 2) + np.tensordot(W, W, axes=3)


def _td():
    r = rng(1024)
    return r.standard_normal((4, 2, 3)), r.standard_normal((2, 3, 5)) * 0.5, \
        r.standard_normal((5, 2))


# ---- 21. a try/except LinAlgError fallback ------------------------------------------------

def cholesky_fallback(A, X):
    K = A @ A.T
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(K + 1e-3 * np.eye(len(K)))
    z = np.linalg.solve(L, X.T)
    return np.sum(z ** 2) + 2 * np.sum(np.log(np.abs(np.diag(L))))


def _chf():
    r = rng(1025)
    return r.standard_normal((3, 3)) + 2 * np.eye(3), r.standard_normal((5, 3))


# ---- 22. match statement, walrus and starred unpacking ------------------------------------

def _activation(z, kind):
    match kind:
        case "relu":
            return np.maximum(z, 0.0)
        case "gelu" | "gelu_tanh":
            return 0.5 * z * (1 + np.tanh(0.7978845608 * (z + 0.044715 * z ** 3)))
        case _:
            return z


def match_walrus_star(Ws, X, kinds=("gelu", "relu", "linear")):
    first, *rest = Ws
    *hidden, last = kinds
    h = _activation(X @ first, hidden[0])
    for W, kind in zip(rest, kinds[1:]):
        if (n := W.shape[0]) != h.shape[1]:
            raise ValueError(f"expected {n} features")
        h = _activation(h @ W, kind)
    return np.sum(h ** 2) / len(X)


def _mws():
    r = rng(1026)
    return [r.standard_normal((3, 4)), r.standard_normal((4, 4)), r.standard_normal((4, 2))], \
        r.standard_normal((5, 3))


# ---- 23. global and nonlocal counters -----------------------------------------------------

CALLS = 0


def global_counter(w, X):
    global CALLS
    CALLS += 1
    total = 0.0

    def add(term):
        nonlocal total
        total = total + term

    for x in X:
        add(np.tanh(x @ w) ** 2)
    return total / len(X)


def _glob():
    r = rng(1027)
    return r.standard_normal(3), r.standard_normal((4, 3))


# ---- 24. mini-batches from a generator function -------------------------------------------

def iterate_minibatches(X, y, size):
    for start in range(0, len(X), size):
        yield X[start:start + size], y[start:start + size]


def generator_minibatches(w, b, X, y):
    loss = 0.0
    for xb, yb in iterate_minibatches(X, y, 3):
        loss = loss + np.sum((xb @ w + b - yb) ** 2)
    return loss / len(X)


def _genmb():
    r = rng(1028)
    return r.standard_normal(2), np.float64(0.3), r.standard_normal((8, 2)), \
        r.standard_normal(8)


# ---- 25. a small tensor wrapper with operator dunders ------------------------------------

class Tensor:
    def __init__(self, data):
        self.data = np.asarray(data)

    def __matmul__(self, other):
        return Tensor(self.data @ other.data)

    def __add__(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        return Tensor(self.data + other.data)

    __radd__ = __add__

    def __mul__(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        return Tensor(self.data * other.data)

    def tanh(self):
        return Tensor(np.tanh(self.data))

    def sum(self):
        return Tensor(self.data.sum())

    @property
    def shape(self):
        return self.data.shape


def tensor_wrapper(W, b, X):
    x = Tensor(X)
    h = (x @ Tensor(W) + Tensor(b)).tanh()
    out = (h * h).sum() * (1.0 / h.shape[0])
    return out.data


def _tw():
    r = rng(1029)
    return r.standard_normal((3, 4)), r.standard_normal(4), r.standard_normal((5, 3))


# ---- 26. functools.cached_property on a layer ---------------------------------------------

class WeightNormLinear:
    def __init__(self, v, g):
        self.v = v
        self.g = g

    @functools.cached_property
    def weight(self):
        return self.g * self.v / np.linalg.norm(self.v, axis=0, keepdims=True)

    def __call__(self, x):
        return x @ self.weight


def cached_property_weight(v, g, X):
    layer = WeightNormLinear(v, g)
    return np.sum(np.tanh(layer(X)) ** 2) + 0.01 * np.sum(layer.weight ** 2)


def _cpw():
    r = rng(1030)
    return r.standard_normal((3, 4)), r.random(4) + 0.5, r.standard_normal((5, 3))


# ---- 27. dataclass fields, replace and asdict ---------------------------------------------

@dataclasses.dataclass
class Hyper:
    l2: float = 1e-2
    l1: float = 0.0
    temperature: float = 1.0


def dataclass_fields_replace(W, X, y):
    hp = dataclasses.replace(Hyper(), l1=1e-3)
    penalties = {"l2": np.sum(W ** 2), "l1": np.sum(np.abs(W)), "temperature": 0.0}
    reg = sum(getattr(hp, f.name) * penalties[f.name] for f in dataclasses.fields(hp))
    z = X @ W / dataclasses.asdict(hp)["temperature"]
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(len(y)), y]) + reg


def _dfr():
    r = rng(1031)
    return r.standard_normal((3, 4)), r.standard_normal((6, 3)), np.array([0, 1, 3, 2, 1, 0])


# ---- 28. np.vectorize on a scalar helper --------------------------------------------------

def _huber_scalar(r, delta=1.0):
    if abs(r) <= delta:
        return 0.5 * r * r
    return delta * (abs(r) - 0.5 * delta)


def vectorized_huber(w, X, y):
    huber = np.vectorize(_huber_scalar)
    return np.mean(huber(X @ w - y))


def _vec():
    r = rng(1032)
    return r.standard_normal(3), r.standard_normal((8, 3)) * 2, r.standard_normal(8)


# ---- 29. logging and formatted output inside the loss -------------------------------------

def logged_loss(W, X, y, verbose=True):
    pred = X @ W
    mse = np.mean((pred - y) ** 2)
    reg = 1e-3 * np.sum(W * W)
    if verbose:
        log.debug("mse=%.4f reg=%.2e", mse, reg)
        log.debug(f"pred range [{pred.min():.3f}, {pred.max():.3f}]")
        msg = "loss {:.5f}".format(mse + reg)
        log.debug(msg)
    return mse + reg


def _logl():
    r = rng(1033)
    return r.standard_normal((3, 2)), r.standard_normal((6, 3)), r.standard_normal((6, 2))


# ---- 30. ufunc methods: reduce, outer, accumulate -----------------------------------------

def ufunc_methods(x, W, S):
    lse = np.logaddexp.reduce(S @ W, axis=1)
    diff = np.subtract.outer(x, x)
    peak = np.maximum.accumulate(np.cumsum(x))
    return np.sum(lse) + np.sum(np.exp(-diff ** 2)) + np.sum(peak ** 2) \
        + np.sum(np.multiply.outer(x, x[:2]))


def _ufm():
    r = rng(1034)
    return r.standard_normal(5), r.standard_normal((3, 4)), r.standard_normal((6, 3))


# ---- 31. piecewise-linear interpolation ---------------------------------------------------

def interp_calibration(fp, z, t):
    xp = np.linspace(-2, 2, len(fp))
    cal = np.interp(z, xp, np.cumsum(np.exp(fp)))
    return np.mean((cal - t) ** 2) + np.sum(np.interp(np.tanh(z), xp, fp) ** 2)


def _interp():
    r = rng(1035)
    return r.standard_normal(6) * 0.3, r.uniform(-1.9, 1.9, 9), r.random(9)


# ---- 32. least squares by pinv / lstsq, spectral and nuclear norms, QR --------------------

def linalg_solvers(A, X, y):
    w_pinv = np.linalg.pinv(X @ A) @ y
    w_lst, *_ = np.linalg.lstsq(X @ A, y, rcond=None)
    s = np.linalg.svd(A, compute_uv=False)
    Q, R = np.linalg.qr(A)
    return np.sum(w_pinv ** 2) + np.sum(w_lst) + s[0] + np.linalg.norm(A, "nuc") \
        + np.sum(np.abs(np.diag(R))) + np.linalg.norm(A, 2)


def _lin():
    r = rng(1036)
    return r.standard_normal((3, 3)) + np.eye(3), r.standard_normal((7, 3)), r.standard_normal(7)


# ---- 33. scipy.special losses -------------------------------------------------------------

def scipy_special_losses(W, X, y, counts):
    z = X @ W
    gelu = 0.5 * z * (1 + scipy.special.erf(z / np.sqrt(2)))
    p = scipy.special.expit(z[:, 0])
    bce = -np.mean(scipy.special.xlogy(y, p) + scipy.special.xlogy(1 - y, 1 - p))
    lam = np.exp(z[:, 1])
    poisson = np.mean(lam - counts * np.log(lam) + scipy.special.gammaln(counts + 1))
    lsm = scipy.special.log_softmax(z, axis=1)
    return bce + poisson - np.mean(lsm[:, 2]) + np.sum(gelu ** 2) * 0.01


def _ssl():
    r = rng(1037)
    return (r.standard_normal((3, 3)) * 0.5, r.standard_normal((6, 3)),
            (r.random(6) < 0.5) * 1.0, r.poisson(2.0, 6).astype(float))


# ---- 34. convolution through the FFT ------------------------------------------------------

def fft_convolution(k, x):
    n = len(x) + len(k) - 1
    y = np.fft.irfft(np.fft.rfft(x, n) * np.fft.rfft(k, n), n)
    return np.sum(y ** 2) + np.sum(np.abs(np.fft.fft(k)) ** 2)


def _fft():
    r = rng(1038)
    return r.standard_normal(3), r.standard_normal(8)


# ---- 35. iterating over an array's rows ---------------------------------------------------

def iterate_rows(X, w, y):
    loss = 0
    for x_i, y_i in zip(X, y):
        loss += (np.dot(x_i, w) - y_i) ** 2
    for row in X.T:
        loss += 0.01 * max(np.max(row), 0.5)
    return loss / len(X) + sum(abs(w))


def _rows():
    r = rng(1039)
    return r.standard_normal((5, 3)), r.standard_normal(3), r.standard_normal(5)


# ---- 36. dict copies and merges of a parameter dict --------------------------------------

def dict_copies(params, X):
    p = dict(params)
    p["W"] = p["W"] * 0.5
    q = {**params, "b": params["b"] + 1.0}
    r = params.copy()
    r.update(W=np.tanh(params["W"]))
    total = 0.0
    for d in (p, q, r):
        total = total + np.sum((X @ d["W"] + d["b"]) ** 2)
    return total


def _dc():
    g = rng(1040)
    return {"W": g.standard_normal((3, 2)), "b": g.standard_normal(2)}, g.standard_normal((4, 3))


# ---- 37. deepcopy of a parameter dict perturbed inside the loss ---------------------------

def deepcopy_perturb(params, X, eps=1e-2):
    shifted = copy.deepcopy(params)
    shifted["W"] += eps
    base = np.sum(np.tanh(X @ params["W"]) ** 2)
    return base + np.sum(np.tanh(X @ shifted["W"]) ** 2)


def _dcp():
    g = rng(1041)
    return {"W": g.standard_normal((3, 2))}, g.standard_normal((4, 3))


# ---- 38. np.array of scalar losses and np.stack of a comprehension ------------------------

def array_of_losses(W, X, Y):
    per_task = [np.mean((X @ W[:, k] - Y[:, k]) ** 2) for k in range(W.shape[1])]
    losses = np.array(per_task)
    weights = np.array([1.0, 0.5, 0.25])
    stacked = np.stack([np.linalg.norm(W[:, k]) for k in range(W.shape[1])])
    return losses @ weights + np.max(stacked)


def _aol():
    r = rng(1042)
    return r.standard_normal((3, 3)), r.standard_normal((6, 3)), r.standard_normal((6, 3))


# ---- 39. take_along_axis / put_along_axis and argsort -------------------------------------

def take_along_topk(W, X, y, k=2):
    z = X @ W
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    nll = -np.take_along_axis(logp, y[:, None], axis=1)
    idx = np.argsort(-z, axis=1)[:, :k]
    top = np.take_along_axis(z, idx, axis=1)
    mask = np.zeros_like(z)
    np.put_along_axis(mask, idx, 1.0, axis=1)
    return np.mean(nll) + 0.1 * np.sum(top) + 0.01 * np.sum(mask * z ** 2)


def _tak():
    r = rng(1043)
    return r.standard_normal((3, 5)), r.standard_normal((6, 3)), np.array([0, 4, 2, 1, 3, 0])


# ---- 40. np.select and np.piecewise ------------------------------------------------------

def select_piecewise(w, X):
    z = X @ w
    smooth_l1 = np.select([z < -1, z > 1], [-z - 0.5, z - 0.5], default=0.5 * z ** 2)
    hinge2 = np.piecewise(z, [z < 0, z >= 0], [lambda v: v ** 2, lambda v: 0.1 * v])
    return np.sum(smooth_l1) + np.sum(hinge2)


def _sel():
    r = rng(1044)
    return r.standard_normal(3), r.standard_normal((9, 3)) * 1.5


# ---- 41. stick-breaking weights by cumprod ------------------------------------------------

def stick_breaking(v_logits, mus, X):
    v = 1 / (1 + np.exp(-v_logits))
    remaining = np.concatenate([[1.0], np.cumprod(1 - v)[:-1]])
    pi = v * remaining
    d2 = np.sum((X[:, None, :] - mus[None]) ** 2, axis=-1)
    return -np.sum(np.log(np.exp(-0.5 * d2) @ pi + 1e-12))


def _stick():
    r = rng(1045)
    return r.standard_normal(4), r.standard_normal((4, 2)), r.standard_normal((7, 2))


# ---- 42. kwargs options read with .get and lambdas with default arguments -----------------

ACTS = {
    "leaky": lambda z, a=0.1: np.where(z > 0, z, a * z),
    "elu": lambda z, a=1.0: np.where(z > 0, z, a * (np.exp(z) - 1)),
    "swish": lambda z: z / (1 + np.exp(-z)),
}


def forward_kwargs(W1, W2, X, **kwargs):
    act = ACTS[kwargs.get("act", "elu")]
    scale = kwargs.pop("scale", 1.0)
    h = act(X @ W1)
    if kwargs.get("residual", True):
        h = h + X @ W1
    return scale * np.sum(ACTS["swish"](h @ W2) ** 2)


def _fk():
    r = rng(1046)
    return r.standard_normal((3, 4)), r.standard_normal((4, 2)), r.standard_normal((5, 3))


# ---- 43. a layer registry filled by __init_subclass__ -------------------------------------

class Layer:
    registry: dict = {}

    def __init_subclass__(cls, key=None, **kw):
        super().__init_subclass__(**kw)
        Layer.registry[key or cls.__name__.lower()] = cls


class Tanh(Layer, key="tanh"):
    def __call__(self, x):
        return np.tanh(x)


class Square(Layer):
    def __call__(self, x):
        return x * x


def init_subclass_registry(W, X, spec=("tanh", "square")):
    h = X @ W
    for name in spec:
        h = Layer.registry[name]()(h)
    return np.sum(h)


def _isr():
    r = rng(1047)
    return r.standard_normal((3, 2)), r.standard_normal((5, 3))


# ---- 44. attribute delegation by __getattr__ ----------------------------------------------

class Params:
    def __init__(self, **arrays):
        self._arrays = arrays

    def __getattr__(self, name):
        try:
            return self._arrays[name]
        except KeyError:
            raise AttributeError(name) from None


def getattr_delegation(W, b, X):
    p = Params(W=W, b=b)
    return np.sum(np.tanh(X @ p.W + p.b) ** 2)


def _gd():
    r = rng(1048)
    return r.standard_normal((3, 2)), r.standard_normal(2), r.standard_normal((5, 3))


# ---- 45. operator-module reductions ------------------------------------------------------

def operator_reduce(Ws, X):
    M = functools.reduce(operator.matmul, Ws)
    terms = [np.sum(np.tanh(X @ M) ** 2), np.sum(M ** 2)]
    return functools.reduce(operator.add, terms) + operator.mul(0.5, np.sum(Ws[0]))


def _opr():
    r = rng(1049)
    return [r.standard_normal((3, 3)) * 0.5 for _ in range(3)], r.standard_normal((4, 3))


# ---- 46. triu_indices over a pairwise distance matrix -------------------------------------

def triu_pairs(Y):
    D = np.sqrt(np.sum((Y[:, None] - Y[None]) ** 2, axis=-1) + 1e-9)
    iu = np.triu_indices(len(Y), k=1)
    d = D[iu]
    return np.sum((d - 1.0) ** 2) + np.sum(np.triu(D, 1))


def _triu():
    r = rng(1050)
    return (r.standard_normal((5, 2)),)


# ---- 47. quantile (pinball) and trimmed losses by sort ------------------------------------

def sort_quantile_losses(w, X, y, q=0.8):
    r = y - X @ w
    pinball = np.mean(np.maximum(q * r, (q - 1) * r))
    trimmed = np.mean(np.sort(r ** 2)[:-2])
    med = np.median(np.abs(r))
    return pinball + trimmed + med + np.percentile(r, 75)


def _sq():
    g = rng(1051)
    return g.standard_normal(3), g.standard_normal((9, 3)), g.standard_normal(9)


# ---- 48. moveaxis / swapaxes / atleast_2d / expand_dims -----------------------------------

def axes_shuffles(x, W):
    h = np.moveaxis(x, 1, -1) @ W                      # (N, H, W, F)
    h = h.swapaxes(1, 2)
    v = np.atleast_2d(np.sum(h, axis=(0, 1, 2)))
    e = np.expand_dims(v, axis=0)
    return np.sum(np.tanh(h) ** 2) + np.sum(e ** 2) + np.sum(np.rollaxis(x, 2) ** 3)


def _ax():
    r = rng(1052)
    return r.standard_normal((2, 3, 4, 2)), r.standard_normal((3, 5))


# ---- 49. a seeded default_rng permutation inside the loss ---------------------------------

def shuffled_minibatch_sgd(w, X, y, epochs=2, lr=0.1, seed=0):
    rng_ = np.random.default_rng(seed)
    for _ in range(epochs):
        perm = rng_.permutation(len(X))
        for idx in np.array_split(perm, 2):
            grad = X[idx].T @ (X[idx] @ w - y[idx]) / len(idx)
            w = w - lr * grad
    return np.mean((X @ w - y) ** 2)


def _smb():
    g = rng(1053)
    return g.standard_normal(3), g.standard_normal((8, 3)), g.standard_normal(8)


# ---- 50. a contrastive (InfoNCE) loss with a temperature attribute ------------------------

class InfoNCE:
    def __init__(self, temperature=0.5):
        self.temperature = temperature

    @staticmethod
    def normalize(z):
        return z / np.linalg.norm(z, axis=1, keepdims=True)

    def __call__(self, a, b):
        a, b = self.normalize(a), self.normalize(b)
        logits = a @ b.T / self.temperature
        logits -= logits.max(axis=1, keepdims=True)
        labels = np.arange(len(a))
        logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        return -logp[labels, labels].mean()


def info_nce(W, X1, X2):
    return InfoNCE(temperature=0.3)(X1 @ W, X2 @ W)


def _nce():
    r = rng(1054)
    X = r.standard_normal((5, 4))
    return r.standard_normal((4, 3)), X, X + 0.1 * r.standard_normal((5, 4))


# ---- 51. an RBF layer whose centres come from a chained comparison mask --------------------

def chained_mask_rbf(C, w, X):
    d2 = np.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=2)
    phi = np.exp(-d2)
    band = (0.05 < phi) & (phi < 0.95)
    lo, hi = 0.0, 1.0
    assert lo <= float(np.min(phi)) <= hi
    return np.sum((np.where(band, phi, 0.0) @ w) ** 2) + np.sum(~band * phi)


def _cm():
    r = rng(1055)
    return r.standard_normal((3, 2)), r.standard_normal(3), r.standard_normal((6, 2))


# ---- 52. an LSTM over a sequence whose steps are tuple-returning methods ------------------

class LSTMCell:
    def __init__(self, W, U, b):
        self.W, self.U, self.b = W, U, b
        self.H = U.shape[0]

    def step(self, x, state):
        h, c = state
        z = x @ self.W + h @ self.U + self.b
        i, f, o, g = np.split(z, 4, axis=-1)
        c = 1 / (1 + np.exp(-f)) * c + 1 / (1 + np.exp(-i)) * np.tanh(g)
        h = 1 / (1 + np.exp(-o)) * np.tanh(c)
        return h, (h, c)


def lstm_state_tuples(W, U, b, X):
    cell = LSTMCell(W, U, b)
    state = (np.zeros((X.shape[0], cell.H)),) * 2
    outs = []
    for t in range(X.shape[1]):
        h, state = cell.step(X[:, t], state)
        outs.append(h)
    return np.sum(np.stack(outs, axis=1) ** 2)


def _lstm():
    r = rng(1056)
    return (r.standard_normal((3, 8)) * 0.5, r.standard_normal((2, 8)) * 0.5,
            r.standard_normal(8) * 0.1, r.standard_normal((2, 4, 3)))


PROGRAMS = [
    Probe("wild_repos5.gp_flat_jitter", gp_flat_jitter, _gpflat, ("log_ell", "log_sf", "X")),
    Probe("wild_repos5.transpose_view_distances", transpose_view_distances, _tvd, "x"),
    Probe("wild_repos5.cdist_kernel_ridge", cdist_kernel_ridge, _cdist, ("Z", "X")),
    Probe("wild_repos5.tril_cholesky_nll", tril_cholesky_nll, _tril, ("theta", "mu")),
    Probe("wild_repos5.crf_nll", crf_nll, _crf, ("W", "trans")),
    Probe("wild_repos5.hmm_scaled_forward", hmm_scaled_forward, _hmm, ("logits_A", "logits_B")),
    Probe("wild_repos5.recursive_tree", recursive_tree, _tree, ("E", "W", "u")),
    Probe("wild_repos5.decorated_helpers", decorated_helpers, _deco, ("W1", "b1", "W2")),
    Probe("wild_repos5.lru_cached_positions", lru_cached_positions, _lru, ("E", "Wo")),
    Probe("wild_repos5.namespace_params", namespace_params, _ns, ("W", "b")),
    Probe("wild_repos5.attrdict_params", attrdict_params, _ad, ("W1", "W2")),
    Probe("wild_repos5.namedtuple_layers", namedtuple_layers, _ntl, ("W1", "b1", "W2", "b2")),
    Probe("wild_repos5.enum_activations", enum_activations, _enum, ("W1", "W2")),
    Probe("wild_repos5.errstate_log", errstate_log, _err, "w", fuse=True),
    Probe("wild_repos5.divide_where_out", divide_where_out, _dwo, "W"),
    Probe("wild_repos5.log_where_entropy", log_where_entropy, _lwe, "W"),
    Probe("wild_repos5.reduction_where_mask", reduction_where_mask, _rwm, "W"),
    Probe("wild_repos5.nanmean_targets", nanmean_targets, _nan, "w"),
    Probe("wild_repos5.bincount_segments", bincount_segments, _binc, ("E", "W")),
    Probe("wild_repos5.upsample_repeat_kron", upsample_repeat_kron, _up, "x"),
    Probe("wild_repos5.rot90_product_conv", rot90_product_conv, _rot, ("x", "w")),
    Probe("wild_repos5.actor_critic_loss", actor_critic_loss, _ac, ("Wp", "Wv")),
    Probe("wild_repos5.einsum_traces", einsum_traces, _ein, ("A", "B")),
    Probe("wild_repos5.tensordot_axes", tensordot_axes, _td, ("x", "W", "V")),
    Probe("wild_repos5.cholesky_fallback", cholesky_fallback, _chf, "A"),
    Probe("wild_repos5.match_walrus_star", match_walrus_star, _mws, "Ws"),
    Probe("wild_repos5.global_counter", global_counter, _glob, ("w", "X")),
    Probe("wild_repos5.generator_minibatches", generator_minibatches, _genmb, ("w", "b")),
    Probe("wild_repos5.tensor_wrapper", tensor_wrapper, _tw, ("W", "b")),
    Probe("wild_repos5.cached_property_weight", cached_property_weight, _cpw, ("v", "g")),
    Probe("wild_repos5.dataclass_fields_replace", dataclass_fields_replace, _dfr, "W"),
    Probe("wild_repos5.vectorized_huber", vectorized_huber, _vec, "w"),
    Probe("wild_repos5.logged_loss", logged_loss, _logl, "W"),
    Probe("wild_repos5.ufunc_methods", ufunc_methods, _ufm, ("x", "W")),
    Probe("wild_repos5.interp_calibration", interp_calibration, _interp, ("fp", "z")),
    Probe("wild_repos5.linalg_solvers", linalg_solvers, _lin, "A", tol=1e-4),
    Probe("wild_repos5.scipy_special_losses", scipy_special_losses, _ssl, "W"),
    Probe("wild_repos5.fft_convolution", fft_convolution, _fft, ("k", "x")),
    Probe("wild_repos5.iterate_rows", iterate_rows, _rows, ("X", "w")),
    Probe("wild_repos5.dict_copies", dict_copies, _dc, "params"),
    Probe("wild_repos5.deepcopy_perturb", deepcopy_perturb, _dcp, "params"),
    Probe("wild_repos5.array_of_losses", array_of_losses, _aol, "W"),
    Probe("wild_repos5.take_along_topk", take_along_topk, _tak, "W"),
    Probe("wild_repos5.select_piecewise", select_piecewise, _sel, "w"),
    Probe("wild_repos5.stick_breaking", stick_breaking, _stick, ("v_logits", "mus")),
    Probe("wild_repos5.forward_kwargs", forward_kwargs, _fk, ("W1", "W2")),
    Probe("wild_repos5.init_subclass_registry", init_subclass_registry, _isr, "W"),
    Probe("wild_repos5.getattr_delegation", getattr_delegation, _gd, ("W", "b")),
    Probe("wild_repos5.operator_reduce", operator_reduce, _opr, "Ws"),
    Probe("wild_repos5.triu_pairs", triu_pairs, _triu, "Y"),
    Probe("wild_repos5.sort_quantile_losses", sort_quantile_losses, _sq, "w"),
    Probe("wild_repos5.axes_shuffles", axes_shuffles, _ax, ("x", "W")),
    Probe("wild_repos5.shuffled_minibatch_sgd", shuffled_minibatch_sgd, _smb, ("w", "X")),
    Probe("wild_repos5.info_nce", info_nce, _nce, "W"),
    Probe("wild_repos5.chained_mask_rbf", chained_mask_rbf, _cm, ("C", "w")),
    Probe("wild_repos5.lstm_state_tuples", lstm_state_tuples, _lstm, ("W", "U", "b")),
]
