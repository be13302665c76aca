"""Classes the tenth and eleventh probes of the front door found (tests/corpus_probe/
wild_repos9.py, wild_repos10.py; 2026-12-07, seventeenth session), one focused test each:

* a name bound to another value on one arm of a branch (`b = a; if a.ndim == 1: b = a[:,
  None]`, PRML's basis functions): the backward zeroed the adjoint of the value from before
  the branch like the arm's value -- a gradient of the wrong shape, silently, or a crash;
* `np.prod` over an empty axis (`np.prod(X[:, :0], axis=1)`, a polynomial's degree-0
  column): its backward crashed;
* a function with a rule held in a local or a partial and given to a helper (`act =
  scipy.special.expit`): the generated code read `scipy`, which it did not import;
  `partial(dense, act=np.tanh)(x, W)` was refused;
* a helper writing in place into an array an object holds (`out[:] = w @ x` into
  `s.logits`), spliced in a loop: the write was lost -- a value and gradient of zeros,
  silently; refused now, at the user's line;
* refusals and crashes of library forms: `dict(sorted(p.items()))`, `OrderedDict(...)`,
  `layer.parameters.update(params[0])`, `copy.deepcopy` in tape mode, `np.size(X, 1)`,
  `itertools.combinations_with_replacement` of rows, `scipy.linalg.solve(..., assume_a=)`,
  `scipy.linalg.toeplitz`.
"""

from __future__ import annotations

import collections
import copy
import functools
import itertools
import operator
from dataclasses import dataclass

import numpy as np
import pytest
import scipy.linalg
import scipy.special
from numpy import size as np_size

import srcad
from srcad.testing import numerical_grad, rel_error

MODES = [{"mode": "source", "fuse": False}, {"mode": "tape"}, {"fuse": True}]
IDS = ["source", "tape", "fuse"]


def _check(fn, args, wrt, opts):
    value, got = srcad.value_and_grad(fn, wrt=wrt, **opts)(*args)
    assert value == fn(*args)
    want = numerical_grad(fn, args, wrt=wrt)
    got, want = (got, want) if isinstance(wrt, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        assert rel_error(g, w) < 1e-7


# ---- a name given another value on one arm of a branch --------------------------------------

def _alias_reshaped_on_an_arm(a):
    b = a
    if a.ndim == 1:
        b = a[:, None]
    return np.sum(np.tanh(b * np.array([1.0, 2.0])))


def _alias_of_a_value_reshaped(w):
    a = w.sum(axis=1)
    b = a
    if a.ndim == 1:
        b = a[:, None]
    return np.sum(b * np.array([1.0, -2.0]) ** 2 * b)


def _reshaped_on_the_else_arm(a, flat=False):
    b = a
    if flat:
        b = b * 2.0
    else:
        b = np.reshape(a, (-1, 1)) * np.ones(3)
    return np.sum(np.sin(b))


@pytest.mark.parametrize("opts", MODES, ids=IDS)
@pytest.mark.parametrize("fn,args,wrt", [
    (_alias_reshaped_on_an_arm, (np.array([0.3, -0.2, 0.9]),), "a"),
    (_alias_reshaped_on_an_arm, (np.array([0.4]),), "a"),
    (_alias_reshaped_on_an_arm, (np.array([[0.3, -0.2], [0.1, 0.5]]),), "a"),
    (_alias_of_a_value_reshaped, (np.arange(6.0).reshape(3, 2) / 7,), "w"),
    (_reshaped_on_the_else_arm, (np.array([0.3, -0.2]),), "a"),
    (_reshaped_on_the_else_arm, (np.array([0.3, -0.2]), True), "a"),
], ids=["1-d", "one value", "2-d", "of a sum", "else arm", "else arm not taken"])
def test_a_name_rebound_on_one_arm_keeps_the_gradients_shape(fn, args, wrt, opts):
    """Was (3, 3) for a (3,) argument in source and fused mode (each row the gradient), and
    a crash in the backward where an op made the value (`cannot reshape array of size 9`)."""
    _check(fn, args, wrt, opts)


# ---- np.prod over an empty axis -------------------------------------------------------------

def _empty_product_column(X):
    ones = np.prod(X[:, :0], axis=1)
    return np.sum(ones * X[:, 0]) + np.sum(np.prod(X[:, ()], axis=1, keepdims=True) * X)


def _polynomial_features(X, w):
    cols = [np.prod(X[:, list(c)], axis=1) for c in [(), (0,), (1,), (0, 1), (1, 1)]]
    return np.sum((np.stack(cols, axis=1) @ w) ** 2)


@pytest.mark.parametrize("opts", MODES, ids=IDS)
@pytest.mark.parametrize("fn,args,wrt", [
    (_empty_product_column, (np.arange(1.0, 7.0).reshape(3, 2) / 5,), "X"),
    (_polynomial_features, (np.arange(1.0, 7.0).reshape(3, 2) / 5,
                            np.array([0.5, -0.2, 0.3, 0.1, -0.4])), ("X", "w")),
], ids=["empty columns", "polynomial features"])
def test_a_product_of_no_elements(fn, args, wrt, opts):
    """`np.prod` over an empty axis is 1 and its gradient an empty array: the backward
    crashed (`cannot reshape array of size 3 into shape (3,0)`)."""
    _check(fn, args, wrt, opts)


def test_a_product_of_no_elements_forward_mode_and_float32():
    X = np.arange(1.0, 7.0).reshape(3, 2) / 5
    v = np.ones_like(X)
    _, t = srcad.jvp(_empty_product_column, (X,), (v,))
    assert abs(t - np.sum(numerical_grad(_empty_product_column, (X,)) * v)) < 1e-8
    g = srcad.grad(_empty_product_column)(X.astype(np.float32))
    assert g.dtype == np.float32


# ---- a function with a rule, held in a local or a partial, given to a helper ----------------

def _dense(x, W, act=None):
    z = x @ W
    return z if act is None else act(z)


def _rule_held_in_a_local(W, x):
    act = scipy.special.expit
    return np.sum(_dense(x, W, act=act) ** 2)


def _rule_bound_by_a_partial(W, x):
    layer = functools.partial(_dense, act=scipy.special.expit)
    return np.sum(layer(x, W) ** 2)


def _partial_called_where_made(W, x):
    return np.sum(functools.partial(_dense, act=np.tanh)(x, W) ** 2)


def _partial_called_where_made_keyword_wins(W, x):
    return np.sum(functools.partial(_dense, act=np.tanh)(x, W, act=np.sin) ** 2)


_WX = (np.array([[0.5, -0.3], [0.2, 0.8]]), np.array([[1.0, 0.4], [-0.6, 0.3], [0.2, 0.9]]))


@pytest.mark.parametrize("opts", MODES, ids=IDS)
@pytest.mark.parametrize("fn", [_rule_held_in_a_local, _rule_bound_by_a_partial,
                                _partial_called_where_made,
                                _partial_called_where_made_keyword_wins],
                         ids=lambda f: f.__name__.strip("_"))
def test_functions_with_rules_passed_as_values(fn, opts):
    """The first two were a NameError from generated code (`scipy` not imported there), the
    last two refused (`the result of a call` has no derivative rule)."""
    _check(fn, _WX, "W", opts)


# ---- a helper writing into an array an object holds, spliced in a loop ----------------------

@dataclass
class _RunState:
    logits: np.ndarray


def _matmul_into(out, x, w):
    out[:] = w @ x


def _step(w, x, s):
    _matmul_into(s.logits, x, w)


def _written_through_a_helper_in_a_loop(w, x):
    s = _RunState(np.zeros(2))
    for _ in range(2):
        _step(w, x, s)
    return s.logits[0]


def _written_through_a_helper_in_a_branch(w, x):
    s = _RunState(np.zeros(2))
    if x[0] > 0:
        _step(w, x, s)
    return s.logits[0]


def _written_through_a_helper(w, x):
    s = _RunState(np.zeros(2))
    _step(w, x, s)
    return s.logits[0] + s.logits[1]


_W2 = (np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 0.5]))


@pytest.mark.parametrize("opts", [MODES[0], MODES[2]], ids=["source", "fuse"])
@pytest.mark.parametrize("fn", [_written_through_a_helper_in_a_loop,
                                _written_through_a_helper_in_a_branch],
                         ids=["loop", "branch"])
def test_a_write_a_spliced_helper_would_lose_is_refused(fn, opts):
    """Was a value of 0.0 and a gradient of zeros, silently (Python: 3.0 and [1, 0.5])."""
    with pytest.raises(srcad.SrcadError) as e:
        srcad.value_and_grad(fn, wrt="w", **opts)(*_W2)
    assert "`_step` writes in place into `s.logits`" in str(e.value)
    assert "_step(w, x, s)" in str(e.value)  # (the user's line)


@pytest.mark.parametrize("fn", [_written_through_a_helper_in_a_loop,
                                _written_through_a_helper_in_a_branch,
                                _written_through_a_helper])
def test_a_write_through_a_helper_in_tape_mode(fn):
    _check(fn, _W2, "w", {"mode": "tape"})


@pytest.mark.parametrize("opts", MODES, ids=IDS)
def test_a_write_through_a_spliced_helper_in_straight_line_code(opts):
    _check(_written_through_a_helper, _W2, "w", opts)


# ---- dicts of pairs, OrderedDicts, `update` of an object's dict from a list's item ----------

def _dict_of_sorted_items(state):
    d = dict(sorted(state.items()))
    return sum(np.sum(v ** 2) for v in d.values())


def _ordered_dict_of_sorted_items(state):
    d = collections.OrderedDict(sorted(state.items()))
    assert isinstance(d, collections.OrderedDict)
    return sum(np.sum(np.tanh(v) * k) for k, v in zip((1.0, 2.0), d.values()))


def _ordered_dict_of_a_dict(state):
    d = collections.OrderedDict(state)
    return np.sum(d["w"] ** 2) + np.sum(d["b"])


def _dict_of_a_generator(state):
    d = dict((k, 2.0 * v) for k, v in state.items())
    return np.sum(d["w"] * d["b"][0])


def _dict_of_enumerate(state):
    d = dict(enumerate([state["w"], state["b"]]))
    return np.sum(d[0] ** 2) * np.sum(d[1])


class _Layer:
    def __init__(self):
        self.parameters = {"W": None}

    def forward(self, x):
        return np.tanh(x @ self.parameters["W"])


def _update_from_a_lists_item(params, x):
    layer = _Layer()
    layer.parameters.update(params[0])
    return np.sum(layer.forward(x))


_STATE = {"w": np.array([0.3, -0.7]), "b": np.array([0.5])}


@pytest.mark.parametrize("opts", MODES, ids=IDS)
@pytest.mark.parametrize("fn", [_dict_of_sorted_items, _ordered_dict_of_sorted_items,
                                _ordered_dict_of_a_dict, _dict_of_a_generator,
                                _dict_of_enumerate], ids=lambda f: f.__name__.strip("_"))
def test_dicts_made_of_pairs(fn, opts):
    """Were refused (`dict` / `collections.OrderedDict` has no derivative rule)."""
    _check(fn, (_STATE,), "state", opts)


@pytest.mark.parametrize("opts", MODES, ids=IDS)
def test_update_of_an_objects_dict_from_an_item_of_a_list(opts):
    """numpy-ml's `layer.parameters.update(p)`: was a KeyError (the dict walked by position,
    `p[0]`), blamed on the user's code."""
    _check(_update_from_a_lists_item, ([{"W": np.full((2, 2), 0.3)}], np.ones((3, 2))),
           "params", opts)


# ---- copy.deepcopy of what holds a dict argument, in tape mode ------------------------------

class _Net:
    def __init__(self, params):
        self.params = params


def _deepcopy_of_an_object_holding_the_argument(params):
    target = copy.deepcopy(_Net(params))
    return np.sum(target.params["W"] ** 2) + np.sum(copy.deepcopy(params)["b"])


def _deepcopy_of_a_list_argument(ps):
    qs = copy.deepcopy(ps)
    return np.sum(qs[0] * 2.0 * ps[1]) + np.sum(copy.deepcopy(tuple(ps))[1] ** 2)


@pytest.mark.parametrize("opts", MODES, ids=IDS)
def test_deepcopy_of_containers_of_the_argument(opts):
    """Tape mode crashed: `cannot pickle 'PyCapsule' object` (the tape's wrapper copied)."""
    _check(_deepcopy_of_an_object_holding_the_argument,
           ({"W": np.array([1.0, -2.0]), "b": np.array([0.5, 0.25])},), "params", opts)
    _check(_deepcopy_of_a_list_argument, ([np.array([1.0, -2.0]), np.array([0.5, 3.0])],),
           "ps", opts)


# ---- np.size with an axis; itertools' combinatorics over rows ------------------------------

def _size_along_an_axis(X, w):
    return np.sum(np.tanh(X @ w)) * np.size(X, 1) + np.size(X) * np.sum(w) + \
        np.size(X, axis=0) + np_size(X, 0) * np.size(X, axis=None)


def _polynomial_features_by_combinations(x):
    features = [np.ones(len(x))]
    for degree in range(1, 3):
        for items in itertools.combinations_with_replacement(x.T, degree):
            features.append(functools.reduce(lambda a, b: a * b, items))
    X = np.asarray(features).transpose()
    return np.sum((X.T @ X) ** 2) / 100.0


def _pairs_of_rows(x, y):
    s = 0.0
    for a, b in itertools.product(x, y):
        s = s + np.sum(a * b)
    for a, b in itertools.permutations(x, 2):
        s = s + np.sum(np.tanh(a - b))
    for a, b in itertools.combinations(list(x), 2):
        s = s + np.sum(a * b ** 2)
    for a, b in itertools.product(y, repeat=2):
        s = s + np.sum(a * b * 0.5)
    return s


_X32 = np.arange(6.0).reshape(3, 2) / 5 - 0.3


@pytest.mark.parametrize("opts", MODES, ids=IDS)
def test_size_along_an_axis(opts):
    """`np.size(X, 1)` was refused ("takes at most 1 positional arguments"); tape mode's
    first fix gave X.size for it (the row's `a.size` form), a wrong value silently."""
    _check(_size_along_an_axis, (_X32, np.array([0.4, -0.1])), ("X", "w"), opts)


@pytest.mark.parametrize("opts", MODES, ids=IDS)
@pytest.mark.parametrize("fn,args,wrt", [
    (_polynomial_features_by_combinations, (_X32,), "x"),
    (_pairs_of_rows, (_X32, np.array([[0.2, -0.5], [0.7, 0.1]])), ("x", "y")),
], ids=["combinations_with_replacement", "product, permutations, combinations"])
def test_itertools_combinatorics_over_rows(fn, args, wrt, opts):
    """PRML's polynomial features: `itertools.combinations_with_replacement` had no rule."""
    _check(fn, args, wrt, opts)


# ---- scipy.linalg.solve's structure keywords, scipy.linalg.toeplitz ------------------------

def _kernel_ridge(K, y):
    alpha = scipy.linalg.solve(K + 0.5 * np.eye(len(K)), y, assume_a="pos")
    return np.sum(alpha * y)


def _lower_symmetric_solve(A, b):
    return np.sum(scipy.linalg.solve(A + 3 * np.eye(3), b, lower=True, assume_a="sym") ** 2)


def _toeplitz_convolution(k, u):
    return np.sum((scipy.linalg.toeplitz(k, np.zeros(len(u))) @ u) ** 2) + \
        np.sum(scipy.linalg.toeplitz(u) @ u)


_R = np.random.default_rng(17)
_K = _R.standard_normal((4, 4))


@pytest.mark.parametrize("opts", MODES, ids=IDS)
@pytest.mark.parametrize("fn,args,wrt", [
    (_kernel_ridge, (_K @ _K.T, _R.standard_normal(4)), ("K", "y")),
    (_lower_symmetric_solve, (_R.standard_normal((3, 3)), _R.standard_normal(3)), ("A", "b")),
    (_toeplitz_convolution, (_R.standard_normal(5), _R.standard_normal(3)), ("k", "u")),
], ids=["solve assume_a=pos", "solve lower sym", "toeplitz"])
def test_scipy_linalg_forms(fn, args, wrt, opts):
    """`assume_a=` was refused (`scipy_solve` took a and b only); `toeplitz` had no rule.
    A symmetric solver reads one triangle: the gradient is finite differences' of that."""
    _check(fn, args, wrt, opts)


# ---- a list built by appends, then handed to another name ----------------------------------

def _attend_with_past(x, w, past):
    k = x @ w
    keys = k if past is None else np.concatenate([past, k], axis=0)
    a = np.tanh(x @ keys.T) @ keys
    return a, keys


def _kv_cache_handed_over(wte, ws):
    past = [None] * len(ws)
    total = 0.0
    for ids in ([0, 2], [1], [3]):
        x = wte[ids]
        presents = []
        for w, layer_past in zip(ws, past):
            a, present = _attend_with_past(x, w, layer_past)
            x = x + 0.5 * a
            presents.append(present)
        past = presents
        total = total + np.sum(np.tanh(x[-1]))
    return total


def _merge_pairs(ids, pair, idx):
    for _ in range(2):
        new_ids, i = [], 0
        while i < len(ids):
            if i < len(ids) - 1 and (ids[i], ids[i + 1]) == pair:
                new_ids.append(idx)
                i += 2
            else:
                new_ids.append(ids[i])
                i += 1
        ids = new_ids
    return ids


def _tokenizer_loop(E):
    return np.sum(E[_merge_pairs([0, 1, 2, 0, 1], (0, 1), 3)] ** 2)


def _handed_over_at_the_end(x):
    acc = []
    for k in range(3):
        acc.append(np.sin(x * (k + 1.0)))
    kept = acc
    return np.sum(np.stack(kept) ** 2)


def _appended_after_the_second_name(x):
    acc = [x]
    kept = acc
    acc.append(np.sin(x))   # (Python: `kept` sees it)
    return np.sum(np.stack(kept) ** 2)


@pytest.mark.parametrize("opts", MODES, ids=IDS)
@pytest.mark.parametrize("fn,args,wrt", [
    (_kv_cache_handed_over, (_R.standard_normal((4, 3)),
                             [0.4 * _R.standard_normal((3, 3)) for _ in range(2)]),
     ("wte", "ws")),
    (_tokenizer_loop, (np.arange(8.0).reshape(4, 2) / 4,), "E"),
    (_handed_over_at_the_end, (np.array([0.3, -0.8]),), "x"),
], ids=["kv cache", "tokenizer", "at the end"])
def test_a_list_handed_to_another_name(fn, args, wrt, opts):
    """`presents = []; ...; presents.append(p); past = presents` in a loop (GPT-2's key and
    value cache) and a tokenizer's `new_ids = []; ...; ids = new_ids`: the list's last use
    is the hand-over, so it has one holder at a time -- were refused (`.append()` of a list
    with a second name)."""
    _check(fn, args, wrt, opts)


@pytest.mark.parametrize("opts", MODES, ids=IDS)
def test_a_list_appended_after_its_second_name_is_right_or_refused(opts):
    x = np.array([0.3, -0.8])
    try:
        _check(_appended_after_the_second_name, (x,), "x", opts)
    except srcad.SrcadError as e:
        assert "append" in str(e)


# ---- itertools.accumulate -------------------------------------------------------------------

def _accumulated_rnn(W, U, xs):
    h0 = np.zeros(U.shape[0])
    step = lambda h, x: np.tanh(W @ x + U @ h)  # noqa: E731
    hs = list(itertools.accumulate(xs, step, initial=h0))[1:]
    return sum(np.sum(h ** 2) for h in hs)


def _running_sums_and_products(x):
    sums = list(itertools.accumulate(x))
    prods = [p for p in itertools.accumulate(x, func=operator.mul)]
    return sum(np.sum(s * s) for s in sums) + np.sum(np.stack(prods))


@pytest.mark.parametrize("opts", MODES, ids=IDS)
@pytest.mark.parametrize("fn,args,wrt", [
    (_accumulated_rnn, (0.5 * _R.standard_normal((3, 2)), 0.5 * _R.standard_normal((3, 3)),
                        list(_R.standard_normal((4, 2)))), ("W", "U", "xs")),
    (_running_sums_and_products, (0.8 * _R.standard_normal((4, 3)),), "x"),
], ids=["rnn with initial", "sums and products of rows"])
def test_itertools_accumulate(fn, args, wrt, opts):
    """Was refused (`step` / `itertools.accumulate` has no derivative rule)."""
    _check(fn, args, wrt, opts)


# ---- two star spreads of what helpers return -------------------------------------------------

def _grab(p, prefix):
    return p[prefix + "w"], p[prefix + "b"]


def _norm(x, w, b):
    return (x - x.mean()) / (x.std() + 1e-5) * w + b


def _gate(x, w, b, k):
    return np.tanh(x * w + b) * k


def _two_spreads(p, x):
    y = _gate(_norm(x, *_grab(p, "a.")), *_grab(p, "b."), 2.0)
    for _ in range(2):
        y = y + _gate(*_grab(p, "b."), *_grab(p, "a."))
    return np.sum(y ** 2)


@pytest.mark.parametrize("opts", MODES, ids=IDS)
def test_star_spreads_of_what_a_helper_returns(opts):
    """`f(g(x, *grab(a)), *grab(b), 2.0)` (RWKV ports): two spreads, or one before another
    argument, were refused; computed into names first, in Python's order, each is spread
    where the helper returns a display."""
    p = {k: _R.standard_normal(3) for k in ("a.w", "a.b", "b.w", "b.b")}
    _check(_two_spreads, (p, _R.standard_normal(3)), "p", opts)
