"""The classes the eighth corpus probe (tests/corpus_probe/wild_repos7.py) found and made
work: scipy.stats.norm's logpdf/pdf giving scipy's value to the bit; a list of built objects
filled by a loop over another (Keras-like ``Sequential([Dense(..), ..])`` whose ``__init__``
runs ``for layer in layers or []: self.add(layer)``); a user function given by keyword or left
to a function default (cs224n's ``skipgram(.., word2vecLossAndGradient=naiveSoftmax..)``);
and a callee writing into a container item picked by a computed index (``bn(x, ps[i])`` in a
loop), which gave a zero gradient in source mode and is now refused at the read."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
import torch

import srcad
from srcad.testing import numerical_grad, rel_error

MODES = [("source", False), ("tape", False), ("source", True)]
R = np.random.default_rng(12)


def _check(fn, args, wrt, tol=1e-6):
    want_v = fn(*args)
    want = numerical_grad(fn, args, wrt=wrt)
    for mode, fuse in MODES:
        v, g = srcad.value_and_grad(fn, wrt=wrt, mode=mode, fuse=fuse)(*args)
        assert np.array_equal(np.asarray(v), np.asarray(want_v)), (mode, fuse, v, want_v)
        got, exp = (g, want) if isinstance(wrt, tuple) else ((g,), (want,))
        for a, b in zip(got, exp):
            assert rel_error(a, b) < tol, (mode, fuse)
    return want


# ---- 1. scipy.stats.norm.logpdf / pdf: scipy's value to the bit ----------------------------

def _norm_nll(mu, log_sigma, x):
    return -np.sum(scipy.stats.norm.logpdf(x, loc=mu, scale=np.exp(log_sigma)))


def _norm_nll_positional(mu, sigma, x):
    return -np.sum(scipy.stats.norm.logpdf(x, mu, sigma))


def _norm_pdf_mixture(mu, x):
    p = 0.3 * scipy.stats.norm.pdf(x, mu[0], 0.7) + 0.7 * scipy.stats.norm.pdf(x, loc=mu[1])
    return -np.sum(np.log(p))


def _std_norm_logpdf(z):
    return np.sum(scipy.stats.norm.logpdf(np.tanh(z)) ** 2)


@pytest.mark.parametrize("fn,args,wrt", [
    (_norm_nll, (0.3, -0.2, R.standard_normal(9)), (0, 1)),
    (_norm_nll_positional, (np.array([0.1, -0.4, 0.2]), np.array([0.5, 1.5, 2.5]),
                            R.standard_normal((4, 3)) * 2), (0, 1, 2)),
    (_norm_pdf_mixture, (np.array([-0.5, 0.8]), R.standard_normal(11)), 0),
    (_std_norm_logpdf, (R.standard_normal((3, 4)),), 0),
], ids=["nll_kw", "nll_positional", "pdf_mixture", "standard"])
def test_norm_logpdf_pdf_value_is_scipys(fn, args, wrt):
    """The value was scipy's to rounding only (-z^2/2 - log s - log(2pi)/2 against scipy's
    (-z**2/2 - log(sqrt(2 pi))) - log s): a probe comparing values bit for bit failed."""
    _check(fn, args, wrt)


def test_norm_logpdf_matches_torch_and_scipy_bits():
    x = R.standard_normal(50) * 3
    for mu, s in [(0.0, 1.0), (1.3, 0.2), (-2.0, 4.5)]:
        assert np.array_equal(srcad.value_and_grad(
            lambda m: np.sum(scipy.stats.norm.logpdf(x, m, s)))(mu)[0],
            np.sum(scipy.stats.norm.logpdf(x, mu, s)))
    mu, log_s = 0.4, -0.3
    g = srcad.grad(_norm_nll, wrt=(0, 1))(mu, log_s, x)
    tm = torch.tensor(mu, dtype=torch.float64, requires_grad=True)
    ts = torch.tensor(log_s, dtype=torch.float64, requires_grad=True)
    loss = -torch.distributions.Normal(tm, torch.exp(ts)).log_prob(torch.tensor(x)).sum()
    loss.backward()
    assert rel_error(g[0], tm.grad.item()) < 1e-10
    assert rel_error(g[1], ts.grad.item()) < 1e-10


# ---- 2. a list of built objects filled by a loop over another -------------------------------

class _Dense:
    def __init__(self, W, b, act=None):
        self.W, self.b, self.act = W, b, act

    def __call__(self, x):
        z = x @ self.W + self.b
        return np.tanh(z) if self.act == "tanh" else z


class _Seq:
    def add(self, layer):
        self.layers.append(layer)

    def predict(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class _SeqAdd(_Seq):
    def __init__(self, layers=None):
        self.layers = []
        for layer in layers or []:
            self.add(layer)


class _SeqAppend(_Seq):
    def __init__(self, layers):
        self.layers = []
        for layer in layers:
            self.layers.append(layer)


class _SeqEnumerate(_Seq):
    def __init__(self, layers):
        self.layers = []
        for i, layer in enumerate(layers):
            self.add(layer)


class _SeqReversed(_Seq):
    def __init__(self, layers):
        self.layers = []
        for layer in reversed(layers):
            self.add(layer)


def _seq_add(W1, b1, W2, b2, X):
    return np.sum(_SeqAdd([_Dense(W1, b1, "tanh"), _Dense(W2, b2)]).predict(X) ** 2)


def _seq_none_then_add(W1, b1, W2, b2, X):
    model = _SeqAdd()
    model.add(_Dense(W1, b1, "tanh"))
    model.add(_Dense(W2, b2))
    return np.sum(model.predict(X) ** 2)


def _seq_append(W1, b1, W2, b2, X):
    return np.sum(_SeqAppend([_Dense(W1, b1, "tanh"), _Dense(W2, b2)]).predict(X) ** 2)


def _seq_enumerate(W1, b1, W2, b2, X):
    return np.sum(_SeqEnumerate([_Dense(W1, b1, "tanh"), _Dense(W2, b2)]).predict(X) ** 2)


def _seq_reversed(W1, b1, W2, b2, X):
    return np.sum(_SeqReversed([_Dense(W2, b2), _Dense(W1, b1, "tanh")]).predict(X) ** 2)


def _copied_list(W1, b1, W2, b2, X):
    layers = [_Dense(W1, b1, "tanh"), _Dense(W2, b2, "tanh")]
    kept = []
    for layer in layers:
        kept.append(layer)
    for layer in kept:
        X = layer(X)
    return np.sum(X)


_NET = (R.standard_normal((3, 4)) * 0.6, R.standard_normal(4) * 0.1,
        R.standard_normal((4, 2)) * 0.6, R.standard_normal(2) * 0.1, R.standard_normal((5, 3)))


@pytest.mark.parametrize("fn", [_seq_add, _seq_none_then_add, _seq_append, _seq_enumerate,
                                _seq_reversed, _copied_list])
def test_list_of_objects_filled_by_a_loop_over_another(fn):
    """`for layer in layers [or []]: self.add(layer)` / `out.append(layer)`: was 'the object
    is handed to a function or operator srcad does not follow into, or held in a container'."""
    want = _check(fn, _NET, (0, 1, 2, 3))
    t = [torch.tensor(a, requires_grad=True) for a in _NET[:4]]
    h = torch.tanh(torch.tensor(_NET[4]) @ t[0] + t[1])
    out = h @ t[2] + t[3]
    out = torch.tanh(out).sum() if fn is _copied_list else (out ** 2).sum()
    out.backward()
    for a, w in zip(t, want):
        assert rel_error(a.grad.numpy(), w) < 1e-6


def _copied_arrays(W1, W2, X):
    kept = []
    for w in [W1, W2]:
        kept.append(w)
    return np.sum(np.tanh(X @ kept[0]) @ kept[1])


def test_a_loop_copying_a_list_of_arrays_still_works():
    args = (R.standard_normal((3, 4)), R.standard_normal((4, 2)), R.standard_normal((5, 3)))
    _check(_copied_arrays, args, (0, 1))


# ---- 3. a user function by keyword or a function default -----------------------------------

def _inner(v):
    return np.sin(v) * v


def _apply(x, f):
    return f(x)


def _apply_default(x, f=_inner):
    return f(x)


def _loss_and_grad(center, idx, outside):
    s = outside @ center
    p = np.exp(s - np.max(s))
    p = p / np.sum(p)
    return -np.log(p[idx]), outside.T @ p


def _skipgram(center, words, outside, loss_fn=_loss_and_grad):
    total = 0.0
    for w in words:
        loss, _ = loss_fn(center, w, outside)
        total += loss
    return total


def _by_keyword(x):
    return np.sum(_apply(x, f=_inner))


def _by_default(x):
    return np.sum(_apply_default(x))


def _by_default_overridden(x):
    return np.sum(_apply_default(x, np.tanh) + _apply_default(x))


def _skipgram_default(W):
    return _skipgram(W[0], [1, 3, 2], W[1:]) + _skipgram(W[2], [0], W[1:])


@pytest.mark.parametrize("fn,args", [
    (_by_keyword, (np.linspace(-1, 1, 5),)),
    (_by_default, (np.linspace(-1, 1, 5),)),
    (_by_default_overridden, (np.linspace(-1, 1, 5),)),
    (_skipgram_default, (R.standard_normal((6, 3)),)),
])
def test_user_function_by_keyword_or_default(fn, args):
    """`apply(x, f=inner)` and a parameter left to a function default: were '`f` has no
    derivative rule in srcad' (and a default spelled by its repr: a SyntaxError)."""
    _check(fn, args, 0)


def test_function_default_matches_torch():
    x = np.linspace(-1, 1, 5)
    g = srcad.grad(_by_default)(x)
    t = torch.tensor(x, requires_grad=True)
    (torch.sin(t) * t).sum().backward()
    assert rel_error(g, t.grad.numpy()) < 1e-12


# ---- 4. a callee writing into an item picked by a computed index ----------------------------

def _bn(x, p):
    p["m"] = np.mean(x) * 2.0
    return x * 1.5


def _items_in_loop(x):
    ps = [{"m": 0.0}, {"m": 0.0}]
    for i in range(2):
        _bn(x * (i + 1), ps[i])
    return ps[0]["m"] * ps[1]["m"]


def _comprehension_items(x):
    ps = [{"m": 0.0} for _ in range(2)]
    out = 0.0
    for i in range(2):
        out = out + np.sum(_bn(x * (i + 1), ps[i]))
    return out + ps[0]["m"] * ps[1]["m"]


@pytest.mark.parametrize("fn", [_items_in_loop])
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_write_into_an_item_picked_by_a_computed_index_is_refused(fn, mode):
    """Source mode gave a zero (`_items_in_loop`) or wrong (`_comprehension_items`) gradient:
    the callee's write into `ps[i]` was carried inside it only, and the later `ps[0]["m"]`
    read the old dict. Now refused at that read, naming it -- where the list is a display
    srcad holds item by item; one the loop carries under its name is followed (below)."""
    with pytest.raises(srcad.SrcadError,
                       match="writes into its argument `p` in place|writes in place into an item"):
        srcad.grad(fn, mode=mode)(np.linspace(-1, 1, 4) + 0.3)


def test_write_into_an_item_of_a_carried_list_is_followed():
    """`_comprehension_items`: the callee's write into `ps[i]`, a list the loop carries, is
    stored back into that slot (2026-12-07, frontend/inline.py `item_of_a_name`); every
    mode against finite differences."""
    _check(_comprehension_items, (np.linspace(-1, 1, 4) + 0.3,), 0)


def _items_not_read_again(x):
    ps = [{"m": 0.0}, {"m": 0.0}]
    out = 0.0
    for i in range(2):
        out = out + np.sum(_bn(x * (i + 1), ps[i]) ** 2)
    return out


def test_write_into_items_never_read_again_still_works():
    _check(_items_not_read_again, (np.linspace(-1, 1, 4),), 0)


# ---- 5. in-place writes into a list's item through another name ------------------------------

def _alias_item_straight(a, b):
    ps = [a.copy(), b.copy()]
    p = ps[0]
    p *= 2.0
    return np.sum(ps[0] * ps[1])


def _alias_item_setitem(a, b):
    ps = [a.copy(), b.copy()]
    p = ps[1]
    p[0] = a[0] * 3.0
    return np.sum(ps[0] * ps[1] ** 2)


def _indexed_in_loop(a, b):
    ps = [a.copy(), b.copy()]
    for i in range(2):
        p = ps[i]
        p += a[i]
    return np.sum(ps[0] * ps[1])


def _sgd_zip(a, b):
    ps = [a.copy(), b.copy()]
    gs = [np.sin(a), b * b]
    for p, g in zip(ps, gs):
        p -= 0.1 * g
    return np.sum(ps[0] * np.tanh(ps[1]))


def _clip_out_loop(a, b):
    ps = [a.copy(), b.copy()]
    for p in ps:
        np.clip(p, -0.5, 0.5, out=p)
    return np.sum(ps[0] * ps[1])


def _enumerate_scale(a, b):
    ps = [a.copy(), b.copy()]
    for i, p in enumerate(ps):
        p *= (i + 2.0)
    return np.sum(ps[0] * ps[1] ** 3)


def _rows_of_array(a, b):
    M = np.outer(a, b)
    for row in M:
        row *= 0.5
        row += b
    return np.sum(np.tanh(M))


def _scalar_items_unchanged(a, b):
    xs = [float(v) for v in [1.0, 2.0]]
    for v in xs:
        v += 10.0
    return np.sum(a * xs[0] + b * xs[1])


_AB = (np.linspace(-0.9, 0.8, 3), np.linspace(0.2, 0.7, 3))


@pytest.mark.parametrize("fn", [_alias_item_straight, _alias_item_setitem, _indexed_in_loop,
                                _sgd_zip, _clip_out_loop, _enumerate_scale, _rows_of_array,
                                _scalar_items_unchanged])
def test_in_place_write_into_a_list_item(fn):
    """All but the last two gave a wrong value and gradient in source mode (the write into
    the item was lost; tape mode was right)."""
    _check(fn, _AB, (0, 1))


def test_sgd_zip_matches_torch():
    g = srcad.grad(_sgd_zip, wrt=(0, 1))(*_AB)
    ta, tb = (torch.tensor(x, requires_grad=True) for x in _AB)
    pa = ta - 0.1 * torch.sin(ta)
    pb = tb - 0.1 * tb * tb
    (pa * torch.tanh(pb)).sum().backward()
    assert rel_error(g[0], ta.grad.numpy()) < 1e-12
    assert rel_error(g[1], tb.grad.numpy()) < 1e-12


def _nested_item_straight(a, b):
    layers = [[a.copy(), b.copy()], [b.copy(), a.copy()]]
    W = layers[1][0]
    W *= 2.0
    return np.sum(layers[0][0] * layers[1][0] + layers[0][1])


def _nested_item_in_loop(a, b):
    layers = [[a.copy(), b.copy()], [b.copy(), a.copy()]]
    for k in range(2):
        item = layers[k]
        W = item[0]
        W *= 2.0 + k
    return np.sum(layers[0][0] * layers[1][0] + layers[0][1])


def _unpacked_pairs(a, b):
    layers = [[a.copy(), b.copy()], [b.copy(), a.copy()]]
    for W, c in layers:
        W *= 2.0
        c -= 0.1 * W
    return np.sum(layers[0][0] * layers[1][0] + layers[0][1] * layers[1][1])


def _reversed_items(a, b):
    ps = [a.copy(), b.copy()]
    for i, p in enumerate(reversed(ps)):
        p *= 3.0 + i
    return np.sum(ps[0] * ps[1])


def _sliced_reverse(a, b):
    ps = [a.copy(), b.copy()]
    for p in ps[::-1]:
        p += ps[0]
    return np.sum(ps[0] * ps[1])


@pytest.mark.parametrize("fn", [_nested_item_straight, _nested_item_in_loop, _unpacked_pairs,
                                _reversed_items, _sliced_reverse])
def test_in_place_write_into_a_nested_or_reversed_item(fn):
    """A list of lists (`for W, c in layers: W *= 2`), `reversed(ps)` and `ps[::-1]`: source
    mode lost the write (a wrong value and gradient)."""
    _check(fn, _AB, (0, 1))


class _Holder:
    def __init__(self, a, b):
        self.ps = [a.copy(), b.copy()]


def _attribute_list_items(a, b):
    h = _Holder(a, b)
    for p in h.ps:
        p *= 2.0
    for i, p in enumerate(h.ps):
        p -= 0.1 * (i + 1) * b
    return np.sum(h.ps[0] * h.ps[1])


def test_in_place_write_into_items_of_an_attribute_list():
    """`for p in h.ps: p *= 2` of a built object's list attribute (source mode lost it)."""
    _check(_attribute_list_items, _AB, (0, 1))


# ---- open: in-place writes into list items srcad still loses in source mode -----------------

class _Net:
    def __init__(self, a, b):
        self.params = [a.copy(), b.copy()]

    def step(self, lr):
        for p in self.params:
            p -= lr * p

    def loss(self):
        return np.sum(self.params[0] * self.params[1])


def _method_steps_its_list(a, b):
    n = _Net(a, b)
    n.step(0.1)
    return n.loss()


def _zip_of_displays(a, b):
    A, B = a.copy(), b.copy()
    for p, g in zip([A, B], [a, b]):
        p -= 0.1 * g
    return np.sum(A * B)


def _namespace_list(a, b):
    from types import SimpleNamespace
    st = SimpleNamespace(ps=[a.copy(), b.copy()])
    for p in st.ps:
        p *= 2.0
    return np.sum(st.ps[0] * st.ps[1])


def test_a_method_walking_its_own_list():
    """`for p in self.params: p -= lr * p` in a method of a built object: the gradient was
    wrong in source mode (the spliced method stored the written items into the list object
    its caller built, which the loop's saved values still held: inline.py now leaves a list
    that only names hold to the names, which are given the written one)."""
    _check(_method_steps_its_list, _AB, (0, 1))


def test_an_in_place_write_into_a_namespace_list():
    """`for p in st.ps: p *= 2` of a SimpleNamespace's list: source mode lost the write (a
    wrong value, silently), then refused it at its line (refusals.check_container_holders);
    since 2026-12-05 (fourth session) the namespace's attributes are locals (attrdicts.py),
    so the list is the function's own and the write is followed, in both modes."""
    want_v = _namespace_list(*_AB)
    for mode in ("source", "tape"):
        v, g = srcad.value_and_grad(_namespace_list, wrt=(0, 1), mode=mode)(*_AB)
        assert np.array_equal(np.asarray(v), np.asarray(want_v))
        for a, b in zip(g, numerical_grad(_namespace_list, _AB, wrt=(0, 1))):
            assert rel_error(a, b) < 1e-6


def test_an_item_write_in_a_loop_left_as_written_is_refused():
    """`for p, g in zip([A, B], [a, b]): p -= 0.1 * g` (a loop itemloops.py does not rewrite:
    zip of displays) gave a wrong value silently; now refused at the loop (loops.py
    `refuse_item_writes`), in both modes' shared frontend."""
    with pytest.raises(srcad.SrcadError, match="walked container's item"):
        srcad.value_and_grad(_zip_of_displays, wrt=(0, 1), mode="source")(*_AB)
