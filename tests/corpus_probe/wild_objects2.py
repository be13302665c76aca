"""Objects in the styles of public numpy-from-scratch code (read for patterns only), second
set: what layer classes do with themselves besides computing -- builtins applied to the
object (``str(self.act_fn)`` / ``type(layer).__name__`` in a hyperparameters dict,
``getattr(self, "_" + self.kind)``, ``hasattr(layer, "b")``, ``id(layer)`` as a key), lists
and dicts of lists held in attributes that methods fill (``self.derived_variables["Z"]
.append(Z)``, ``self.cache.append((x, h))``, ``self.hs.pop(0)`` sliding windows,
``self._params[name] = p`` registries read back by ``parameters()``), and classes the corpus
did not have yet: a GRU cell with a per-step cache, a conv layer through
sliding_window_view, an attention module holding its mask, a Sequential container with
``__iter__`` / ``__len__`` / ``__getitem__``, weight normalisation as a @property, a frozen
dataclass config with ``__post_init__``, a residual block, a batch norm layer keeping running
statistics."""

from dataclasses import dataclass, field

import numpy as np

from . import Probe, rng


# ---- numpy-ml style: retained derived variables, the activation's name ------------------------

class Sigmoid:
    def __str__(self):
        return "Sigmoid"

    def fn(self, z):
        return 1.0 / (1.0 + np.exp(-z))

    def __call__(self, z):
        return self.fn(z)


class Identity:
    def __call__(self, z):
        return z


class FullyConnectedRetained:
    def __init__(self, n_out, W, b, act_fn=None):
        self.n_out = n_out
        self.act_fn = Identity() if act_fn is None else act_fn
        self.parameters = {"W": W, "b": b}
        self.hyperparameters = {"layer": "FullyConnected", "n_out": n_out,
                                "act_fn": str(self.act_fn), "kind": type(self).__name__}
        self.derived_variables = {"Z": [], "A": []}

    def forward(self, X, retain_derived=True):
        Z = X @ self.parameters["W"] + self.parameters["b"]
        A = self.act_fn(Z)
        if retain_derived:
            self.derived_variables["Z"].append(Z)
            self.derived_variables["A"].append(A)
        return A


def retained_derived_dicts(W1, b1, W2, b2, X, y):
    l1 = FullyConnectedRetained(5, W1, b1, act_fn=Sigmoid())
    l2 = FullyConnectedRetained(2, W2, b2)
    out = l2.forward(l1.forward(X))
    out2 = l2.forward(l1.forward(X[::-1]), retain_derived=False)
    n = len(l1.derived_variables["A"]) + len(l2.derived_variables["Z"])
    act = l1.hyperparameters["act_fn"]
    pen = 0.0 if act != "Sigmoid" else 1e-2 * np.sum(l1.derived_variables["Z"][-1] ** 2)
    return np.mean((out - y) ** 2) + 0.1 * np.mean(out2 ** 2) + pen / n


# ---- cs231n-style: a layer called twice keeps both caches in a list ---------------------------

class SharedAffine:
    def __init__(self, W, b):
        self.W, self.b = W, b
        self.cache = []

    def __call__(self, x):
        out = x @ self.W + self.b
        self.cache.append((x, out))
        return out


def siamese_cache_list(W, b, xa, xb, same):
    enc = SharedAffine(W, b)
    ha, hb = np.tanh(enc(xa)), np.tanh(enc(xb))
    d = np.sum((ha - hb) ** 2, axis=1)
    margin = np.maximum(0.0, 1.0 - d)
    loss = np.mean(same * d + (1 - same) * margin ** 2)
    (x0, o0), (x1, o1) = enc.cache[0], enc.cache[1]
    return loss + 1e-3 * (np.sum(o0 ** 2) + np.sum(o1 ** 2)) + 0.0 * np.sum(x0 - x1)


# ---- dispatch on a string attribute; hasattr for an optional bias ------------------------------

class Linear:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        y = x @ self.W
        if hasattr(self, "b"):
            y = y + self.b
        return y


class LinearNoBias(Linear):
    def __init__(self, W):
        self.W = W


class Block:
    def __init__(self, fc, act="gelu"):
        self.fc = fc
        self.act = act

    def _relu(self, z):
        return np.maximum(z, 0.0)

    def _gelu(self, z):
        return 0.5 * z * (1.0 + np.tanh(0.7978845608 * (z + 0.044715 * z ** 3)))

    def _tanh(self, z):
        return np.tanh(z)

    def forward(self, x):
        return getattr(self, "_" + self.act)(self.fc(x))


def getattr_dispatch_hasattr(W1, b1, W2, W3, X, y):
    blocks = [Block(Linear(W1, b1), "gelu"), Block(LinearNoBias(W2), act="tanh")]
    head = LinearNoBias(W3)
    h = X
    names = []
    for blk in blocks:
        h = blk.forward(h)
        names.append(type(blk.fc).__name__ + ("+b" if hasattr(blk.fc, "b") else ""))
    out = head(h)
    reg = 1e-3 * (np.sum(W1 ** 2) if names[0] == "Linear+b" else 0.0)
    return np.mean((out - y) ** 2) + reg


# ---- a recurrent state kept as a sliding window (append, pop(0)) -------------------------------

class WindowRNN:
    def __init__(self, Wx, Wh, h0, window=3):
        self.Wx, self.Wh = Wx, Wh
        self.window = window
        self.hs = [h0]

    def step(self, x):
        h = np.tanh(x @ self.Wx + self.hs[-1] @ self.Wh)
        self.hs.append(h)
        if len(self.hs) > self.window:
            self.hs.pop(0)
        return h

    def summary(self):
        return np.mean(np.stack(self.hs), axis=0)


def window_rnn_pop(Wx, Wh, xs, y):
    rnn = WindowRNN(Wx, Wh, np.zeros((xs.shape[1], Wh.shape[0])))
    for t in range(xs.shape[0]):
        rnn.step(xs[t])
    s = rnn.summary()
    return np.mean((s - y) ** 2) + 1e-2 * np.sum(rnn.hs[0] ** 2)


# ---- id(layer) as a key; a loss history appended by a method ----------------------------------

class Tracker:
    def __init__(self):
        self.history = {"loss": [], "norm": []}
        self.seen = {}

    def log(self, layer, out, y):
        loss = np.mean((out - y) ** 2)
        self.history["loss"].append(loss)
        self.history["norm"].append(np.sum(layer.W ** 2))
        self.seen[id(layer)] = loss
        return loss


def tracker_history_ids(W1, W2, X, y):
    a, b = LinearNoBias(W1), LinearNoBias(W2)
    tr = Tracker()
    tr.log(a, a(X), y)
    tr.log(b, b(np.tanh(X)), y)
    total = sum(tr.history["loss"]) + 1e-3 * sum(tr.history["norm"])
    return total + 0.5 * tr.seen[id(a)] + 0.25 * tr.seen[id(b)]


# ---- a Module base class registering parameters in a dict --------------------------------------

class Module:
    def __init__(self):
        self._params = {}

    def add_param(self, name, value):
        self._params[name] = value
        return value

    def parameters(self):
        return list(self._params.values())


class MLP2(Module):
    def __init__(self, W1, b1, W2):
        super().__init__()
        self.W1 = self.add_param("W1", W1)
        self.b1 = self.add_param("b1", b1)
        self.W2 = self.add_param("W2", W2)

    def __call__(self, x):
        return np.tanh(x @ self.W1 + self.b1) @ self.W2


def module_param_registry(W1, b1, W2, X, y, wd=1e-2):
    net = MLP2(W1, b1, W2)
    out = net(X)
    l2 = sum(np.sum(p ** 2) for p in net.parameters())
    return np.mean((out - y) ** 2) + wd * l2


# ---- a GRU cell class with a cache per timestep -----------------------------------------------

def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


class GRUCell:
    def __init__(self, Wz, Wr, Wh, hidden):
        self.Wz, self.Wr, self.Wh = Wz, Wr, Wh
        self.hidden = hidden
        self.caches = []

    def forward(self, x, h_prev):
        xh = np.concatenate([x, h_prev], axis=1)
        z = _sigmoid(xh @ self.Wz)
        r = _sigmoid(xh @ self.Wr)
        h_tilde = np.tanh(np.concatenate([x, r * h_prev], axis=1) @ self.Wh)
        h = (1 - z) * h_prev + z * h_tilde
        self.caches.append({"z": z, "r": r, "h_tilde": h_tilde})
        return h


def gru_cell_caches(Wz, Wr, Wh, Wy, xs, y):
    N, H = xs.shape[1], Wh.shape[1]
    cell = GRUCell(Wz, Wr, Wh, H)
    h = np.zeros((N, H))
    for t in range(xs.shape[0]):
        h = cell.forward(xs[t], h)
    gate_pen = sum(np.mean(c["z"] * (1 - c["z"])) for c in cell.caches)
    return np.mean((h @ Wy - y) ** 2) + 1e-2 * gate_pen


# ---- a conv layer through sliding_window_view ------------------------------------------------

class Conv2DWindows:
    def __init__(self, W, b, stride=1, pad=0):
        self.W, self.b = W, b
        self.stride, self.pad = stride, pad

    def forward(self, x):
        F, C, kh, kw = self.W.shape
        xp = np.pad(x, ((0, 0), (0, 0), (self.pad, self.pad), (self.pad, self.pad)))
        win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))
        win = win[:, :, ::self.stride, ::self.stride]
        out = np.einsum("nchwij,fcij->nfhw", win, self.W)
        return out + self.b[None, :, None, None]


def conv_sliding_windows(W, b, x):
    conv = Conv2DWindows(W, b, stride=2, pad=1)
    out = conv.forward(x)
    return np.sum(np.tanh(out) ** 2) / out.shape[0]


# ---- an attention module holding its causal mask ---------------------------------------------

class MaskedSelfAttention:
    def __init__(self, Wq, Wk, Wv, T):
        self.Wq, self.Wk, self.Wv = Wq, Wk, Wv
        self.mask = np.triu(np.ones((T, T), dtype=bool), k=1)
        self.scale = 1.0 / np.sqrt(Wq.shape[1])
        self.attn = None

    def __call__(self, x):
        q, k, v = x @ self.Wq, x @ self.Wk, x @ self.Wv
        scores = q @ np.swapaxes(k, -1, -2) * self.scale
        scores = np.where(self.mask, -1e9, scores)
        scores = scores - scores.max(axis=-1, keepdims=True)
        w = np.exp(scores)
        self.attn = w / w.sum(axis=-1, keepdims=True)
        return self.attn @ v


def attention_mask_attribute(Wq, Wk, Wv, x, y):
    att = MaskedSelfAttention(Wq, Wk, Wv, x.shape[1])
    out = att(x)
    entropy = -np.sum(att.attn * np.log(att.attn + 1e-9)) / x.shape[0]
    return np.mean((out - y) ** 2) + 1e-3 * entropy


# ---- a Sequential container: __call__, __iter__, __len__, __getitem__ -------------------------

class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return x @ self.W + self.b


class Tanh:
    def __call__(self, x):
        return np.tanh(x)


class Sequential:
    def __init__(self, *layers):
        self.layers = list(layers)

    def __iter__(self):
        return iter(self.layers)

    def __len__(self):
        return len(self.layers)

    def __getitem__(self, i):
        return self.layers[i]

    def __call__(self, x):
        for layer in self:
            x = layer(x)
        return x


def sequential_dunders(W1, b1, W2, b2, X, y):
    model = Sequential(Dense(W1, b1), Tanh(), Dense(W2, b2))
    out = model(X)
    first = model[0]
    reg = sum(np.sum(model[i].W ** 2) for i in range(0, len(model), 2))
    return np.mean((out - y) ** 2) + 1e-3 * reg + 1e-4 * np.sum(first.b ** 2)


# ---- weight normalisation as a @property -----------------------------------------------------

class WeightNormDense:
    def __init__(self, v, g, b):
        self.v, self.g, self.b = v, g, b

    @property
    def W(self):
        return self.g * self.v / np.linalg.norm(self.v, axis=0, keepdims=True)

    def __call__(self, x):
        return x @ self.W + self.b


def weight_norm_property(v, g, b, X, y):
    layer = WeightNormDense(v, g, b)
    out = layer(X)
    return np.mean((out - y) ** 2) + 1e-3 * np.sum(layer.W ** 2)


# ---- a frozen dataclass config with __post_init__; a residual block --------------------------

@dataclass(frozen=True)
class BlockConfig:
    width: int
    depth: int = 2
    act: str = "relu"
    eps: float = 1e-5
    widths: list = field(default_factory=list)

    def __post_init__(self):
        if not self.widths:
            object.__setattr__(self, "widths", [self.width] * self.depth)


class Residual:
    def __init__(self, W, cfg):
        self.W = W
        self.cfg = cfg

    def __call__(self, x):
        h = x @ self.W
        h = np.maximum(h, 0.0) if self.cfg.act == "relu" else np.tanh(h)
        mu = h.mean(axis=-1, keepdims=True)
        var = h.var(axis=-1, keepdims=True)
        return x + (h - mu) / np.sqrt(var + self.cfg.eps)


CFG = BlockConfig(width=4, act="tanh")


def frozen_config_residual(Ws, X, y):
    blocks = [Residual(Ws[i], CFG) for i in range(CFG.depth)]
    h = X
    for blk in blocks:
        h = blk(h)
    return np.mean((h - y) ** 2) + 1e-3 * len(CFG.widths)


# ---- a batch norm layer updating its running statistics --------------------------------------

class BatchNorm1d:
    def __init__(self, gamma, beta, momentum=0.9, eps=1e-5):
        self.gamma, self.beta = gamma, beta
        self.momentum, self.eps = momentum, eps
        self.running_mean = np.zeros_like(gamma)
        self.running_var = np.ones_like(gamma)
        self.training = True

    def __call__(self, x):
        if self.training:
            mean, var = x.mean(axis=0), x.var(axis=0)
            self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mean
            self.running_var = self.momentum * self.running_var + (1 - self.momentum) * var
        else:
            mean, var = self.running_mean, self.running_var
        return self.gamma * (x - mean) / np.sqrt(var + self.eps) + self.beta


def batchnorm_running_stats(W, gamma, beta, X, y):
    bn = BatchNorm1d(gamma, beta)
    h = bn(X @ W)
    h2 = bn(np.tanh(h) @ np.eye(W.shape[1]))
    bn.training = False
    h3 = bn(X @ W)
    return np.mean((h2 - y) ** 2) + 0.1 * np.mean((h3 - y) ** 2)


# ---- numpy-ml style, lazily initialised: hyperparameters as a @property ------------------------

class ReLU2:
    def __str__(self):
        return "ReLU"

    def __call__(self, z):
        return np.maximum(z, 0.0)


class LazyFC:
    def __init__(self, n_out, act_fn, W, b):
        self.n_out = n_out
        self.act_fn = act_fn
        self.W0, self.b0 = W, b
        self.is_initialized = False

    def _init_params(self):
        self.parameters = {"W": self.W0, "b": self.b0}
        self.derived_variables = {"Z": [], "out": []}
        self.is_initialized = True

    @property
    def hyperparameters(self):
        return {"layer": "FullyConnected", "n_out": self.n_out, "act_fn": str(self.act_fn)}

    def forward(self, X):
        if not self.is_initialized:
            self._init_params()
        Z = X @ self.parameters["W"] + self.parameters["b"]
        out = self.act_fn(Z)
        self.derived_variables["Z"].append(Z)
        self.derived_variables["out"].extend([out])
        return out


def lazy_init_property(W1, b1, W2, b2, X, y):
    l1, l2 = LazyFC(5, ReLU2(), W1, b1), LazyFC(2, Sigmoid(), W2, b2)
    out = l2.forward(l1.forward(X))
    hp = l1.hyperparameters
    scale = 2.0 if hp["act_fn"] == "ReLU" and l2.hyperparameters["n_out"] == 2 else 1.0
    z_last = l1.derived_variables["Z"][-1]
    return scale * np.mean((out - y) ** 2) + 1e-3 * np.sum(z_last ** 2)


# ---- an OrderedDict of layers with __getitem__ by name; activations kept per layer -------------

class NamedNet:
    def __init__(self, W1, b1, W2, b2):
        self.layers = {}
        self.layers["fc1"] = Dense(W1, b1)
        self.layers["act"] = Tanh()
        self.layers["fc2"] = Dense(W2, b2)
        self.activations = []

    def __getitem__(self, name):
        return self.layers[name]

    def forward(self, x):
        self.activations = []
        for name, layer in self.layers.items():
            x = layer(x)
            self.activations.append(x)
        return x


def named_layers_getitem(W1, b1, W2, b2, X, y):
    net = NamedNet(W1, b1, W2, b2)
    out = net.forward(X)
    sparsity = np.mean(np.abs(net.activations[1]))
    return np.mean((out - y) ** 2) + 1e-2 * sparsity + 1e-3 * np.sum(net["fc2"].W ** 2)


# ---- a trainer object unrolling two gradient steps and keeping its losses --------------------

class Trainer:
    def __init__(self, lr):
        self.lr = lr
        self.losses = []

    def loss(self, w, X, y):
        r = X @ w - y
        value = np.mean(r ** 2)
        self.losses.append(value)
        return value, 2.0 * X.T @ r / X.shape[0]

    def step(self, w, X, y):
        _, g = self.loss(w, X, y)
        return w - self.lr * g


def trainer_losses_list(w, X, y):
    tr = Trainer(0.1)
    w1 = tr.step(w, X, y)
    w2 = tr.step(w1, X, y)
    final, _ = tr.loss(w2, X, y)
    return final + 0.1 * sum(tr.losses[:-1]) + 0.01 * len(tr.losses)


# ---- arguments -------------------------------------------------------------------------------

def _mlp(seed, out=2):
    r = rng(seed)
    return (r.standard_normal((3, 5)) * 0.5, r.standard_normal(5) * 0.1,
            r.standard_normal((5, out)) * 0.5, r.standard_normal(out) * 0.1,
            r.standard_normal((6, 3)), r.random((6, out)))


def _siamese():
    r = rng(501)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal(4) * 0.1,
            r.standard_normal((5, 3)), r.standard_normal((5, 3)),
            r.integers(0, 2, 5).astype(float))


def _dispatch():
    r = rng(502)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal(4) * 0.1,
            r.standard_normal((4, 4)) * 0.5, r.standard_normal((4, 2)) * 0.5,
            r.standard_normal((6, 3)), r.standard_normal((6, 2)))


def _window():
    r = rng(503)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal((4, 4)) * 0.5,
            r.standard_normal((6, 2, 3)), r.standard_normal((2, 4)))


def _tracker():
    r = rng(504)
    return (r.standard_normal((3, 2)), r.standard_normal((3, 2)), r.standard_normal((5, 3)),
            r.standard_normal((5, 2)))


def _registry():
    r = rng(505)
    return (r.standard_normal((3, 4)) * 0.5, r.standard_normal(4) * 0.1,
            r.standard_normal((4, 2)) * 0.5, r.standard_normal((6, 3)),
            r.standard_normal((6, 2)))


def _gru():
    r = rng(506)
    D, H = 3, 4
    return (r.standard_normal((D + H, H)) * 0.4, r.standard_normal((D + H, H)) * 0.4,
            r.standard_normal((D + H, H)) * 0.4, r.standard_normal((H, 2)) * 0.5,
            r.standard_normal((4, 2, D)), r.standard_normal((2, 2)))


def _conv():
    r = rng(507)
    return (r.standard_normal((3, 2, 3, 3)) * 0.4, r.standard_normal(3) * 0.1,
            r.standard_normal((2, 2, 5, 5)))


def _attn():
    r = rng(508)
    return (r.standard_normal((4, 3)) * 0.5, r.standard_normal((4, 3)) * 0.5,
            r.standard_normal((4, 3)) * 0.5, r.standard_normal((2, 5, 4)),
            r.standard_normal((2, 5, 3)))


def _wn():
    r = rng(509)
    return (r.standard_normal((3, 4)), 1 + 0.1 * r.standard_normal(4),
            r.standard_normal(4) * 0.1, r.standard_normal((6, 3)), r.standard_normal((6, 4)))


def _resid():
    r = rng(510)
    return (r.standard_normal((2, 4, 4)) * 0.5, r.standard_normal((6, 4)),
            r.standard_normal((6, 4)))


def _bnorm():
    r = rng(511)
    return (r.standard_normal((3, 4)), 1 + 0.1 * r.standard_normal(4),
            0.1 * r.standard_normal(4), r.standard_normal((8, 3)), r.standard_normal((8, 4)))


def _trainer():
    r = rng(513)
    X = r.standard_normal((8, 3))
    return r.standard_normal(3), X, X @ np.array([0.5, -1.0, 2.0])


PROGRAMS = [
    Probe("wild_objects2.retained_derived_dicts", retained_derived_dicts, lambda: _mlp(500),
          ("W1", "b1", "W2", "b2")),
    Probe("wild_objects2.siamese_cache_list", siamese_cache_list, _siamese, ("W", "b")),
    Probe("wild_objects2.getattr_dispatch_hasattr", getattr_dispatch_hasattr, _dispatch,
          ("W1", "b1", "W2", "W3")),
    Probe("wild_objects2.window_rnn_pop", window_rnn_pop, _window, ("Wx", "Wh")),
    Probe("wild_objects2.tracker_history_ids", tracker_history_ids, _tracker, ("W1", "W2")),
    Probe("wild_objects2.module_param_registry", module_param_registry, _registry,
          ("W1", "b1", "W2")),
    Probe("wild_objects2.gru_cell_caches", gru_cell_caches, _gru, ("Wz", "Wr", "Wh", "Wy")),
    Probe("wild_objects2.conv_sliding_windows", conv_sliding_windows, _conv, ("W", "b", "x")),
    Probe("wild_objects2.attention_mask_attribute", attention_mask_attribute, _attn,
          ("Wq", "Wk", "Wv", "x")),
    Probe("wild_objects2.sequential_dunders", sequential_dunders, lambda: _mlp(512),
          ("W1", "b1", "W2", "b2")),
    Probe("wild_objects2.weight_norm_property", weight_norm_property, _wn, ("v", "g", "b")),
    Probe("wild_objects2.frozen_config_residual", frozen_config_residual, _resid, "Ws"),
    Probe("wild_objects2.batchnorm_running_stats", batchnorm_running_stats, _bnorm,
          ("W", "gamma", "beta")),
    Probe("wild_objects2.lazy_init_property", lazy_init_property, lambda: _mlp(514),
          ("W1", "b1", "W2", "b2")),
    Probe("wild_objects2.named_layers_getitem", named_layers_getitem, lambda: _mlp(515),
          ("W1", "b1", "W2", "b2")),
    Probe("wild_objects2.trainer_losses_list", trainer_losses_list, _trainer, "w"),
]
