"""Tape mode: an in-place write into a container argument's item read through a name.

`W = p["W"]` binds the dict's own array (a string key picks the object itself, as an int picks
a list's), so `W -= lr * g` is a write into `p["W"]`: later reads of `p["W"]` (and every other
name bound to it) see it, and the caller's container holds the written value after the call,
as source mode leaves it (srcad/tape.py `Tape.item_written`). And a list held inside the
argument, read whole before an item is stored into it, then the argument read whole
(`Tape._as_now`). Each program is checked in tape mode through value_and_grad, vjp and jvp:
the value against the function run on a deep copy, the gradient against central differences,
the tangent against the central differences' directional derivative, and the caller's
container after the call against what Python leaves (a tuple's item: against source mode,
which leaves the caller's array as it came in, with its warning).
"""

import copy
import warnings

import numpy as np
import pytest

import srcad
from srcad import SrcadError
from srcad.testing import numerical_grad


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for k in tree for leaf in _leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [leaf for v in tree for leaf in _leaves(v)]
    return [np.asarray(tree)]


def _stepped(p, x):  # (an optimiser's step on the dict's own array)
    W = p["W"]
    W -= 0.1 * x
    return np.sum(p["W"] * x)


def _list_stepped(p, x):
    W = p[0]
    W -= 0.1 * x
    return np.sum(p[0] * x) + np.sum(p[1] * W)


def _nested_by_name(p, x):
    e = p["enc"]
    W = e["W"]
    W *= x
    return np.sum(p["enc"]["W"] ** 2) + np.sum(e["b"] * W)


def _nested_list_by_name(p, x):
    L = p["layers"]
    W = L[1]
    W -= np.tanh(x) * W
    return np.sum(np.stack(p["layers"]) ** 2) + np.sum(L[1] * x)


def _another_name(p, x):
    u = p["W"]  # (the item itself: numpy's `u` sees the write below)
    n = p["W"]
    n *= 1.5 * x
    return np.sum(u * x) + np.sum(p["W"])


def _list_read_whole_after(p, x):
    W = p[1]
    W += np.sin(x)
    return np.sum(np.sum(p, axis=0) ** 2)


def _through_a_view(p, x):
    W = p["W"]
    W[0] = x[0] * W[1]
    return np.sum(p["W"] * x)


def _twice_through_two_names(p, x):
    u = p["W"]
    n = p["W"]
    n *= x
    u -= 0.5 * np.sin(n)
    return np.sum(p["W"] ** 2) + np.sum(n * u)


def _stored_then_written(p, x):
    W = p["W"]
    p["W"] = W * 2.0  # (p["W"] is a new array now: the write below is into the old one)
    W -= x
    return np.sum(p["W"] ** 2) + np.sum(W * x)


def _through_a_slice(p, x):
    q = p[1:]  # (a new list holding the same arrays)
    W = q[0]
    W *= x
    return np.sum(np.stack(p) ** 2) + np.sum(p[1])


def _tuple_item(p, x):
    W = p[0]
    W -= x * W
    return np.sum(p[0] * x) + np.sum(np.stack(p) ** 2)


def _min_of_an_inner_list_then_a_store(p, x):  # (tests/test_fuzz_pytrees.py's, in a dict)
    u = np.min(p["L"], axis=0)
    p["L"][0] = np.sin(x) * u
    return np.sum(u) + np.sum(np.sum(p["L"], axis=0) ** 2)


def _inner_list_two_deep_then_a_store(p, x):
    u = np.min(p[0][0], axis=0)
    p[0][0][0] = np.sin(x) * u
    return np.sum(u) + np.sum(np.sum(p, axis=(0, 1, 2)) ** 2)


def _second_inner_list_then_a_store(p, x):
    u = np.max(p[1], axis=0)
    p[1][1] = np.cos(x) * u
    return np.sum(np.sum(p, axis=(0, 1)) * x) + np.sum(u ** 2)


def _item_then_stored_row(p, x):
    L = p["L"]
    u = np.sum(L, axis=0)
    L[1] *= x
    return np.sum(u * np.sum(p["L"], axis=0)) + np.sum(L[1])


def _a(r):
    return r.normal(size=3)


PROGRAMS = {
    "dict": (_stepped, lambda r: {"W": _a(r)}),
    "list": (_list_stepped, lambda r: [_a(r), _a(r)]),
    "nested_dict_by_name": (_nested_by_name, lambda r: {"enc": {"W": _a(r), "b": _a(r)}}),
    "nested_list_by_name": (_nested_list_by_name, lambda r: {"layers": [_a(r), _a(r)]}),
    "another_name": (_another_name, lambda r: {"W": _a(r)}),
    "list_read_whole_after": (_list_read_whole_after, lambda r: [_a(r), _a(r)]),
    "through_a_view": (_through_a_view, lambda r: {"W": _a(r)}),
    "twice_through_two_names": (_twice_through_two_names, lambda r: {"W": _a(r)}),
    "stored_then_written": (_stored_then_written, lambda r: {"W": _a(r)}),
    "through_a_slice": (_through_a_slice, lambda r: [_a(r), _a(r), _a(r)]),
    "tuple_item": (_tuple_item, lambda r: (_a(r), _a(r))),
    "inner_list_in_a_dict": (_min_of_an_inner_list_then_a_store,
                             lambda r: {"L": [_a(r), _a(r)]}),
    "second_inner_list": (_second_inner_list_then_a_store,
                          lambda r: [[_a(r), _a(r)], [_a(r), _a(r)]]),
    "item_then_stored_row": (_item_then_stored_row, lambda r: {"L": [_a(r), _a(r)]}),
}


def _setup(prog, seed=5):
    fn, make = PROGRAMS[prog]
    r = np.random.default_rng(seed)
    p, x = make(r), _a(r)
    python_after = copy.deepcopy(p)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        want_value = fn(python_after, x.copy())
    want = numerical_grad(lambda p, x: fn(copy.deepcopy(p), x.copy()), (p, x), wrt=(0, 1))
    if isinstance(p, tuple):  # (source mode leaves a tuple's arrays as they came in)
        python_after = p
    return fn, p, x, want_value, want, python_after, r


def _assert_close(got, want, tol=1e-7):
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _assert_after(mine, python_after):
    assert type(mine) is type(python_after)
    for a, b in zip(_leaves(mine), _leaves(python_after)):
        assert type(a) is np.ndarray
        np.testing.assert_array_equal(a, b)


@pytest.mark.filterwarnings("ignore:srcad.*writes into its argument:UserWarning")
@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_value_and_grad(prog):
    fn, p, x, want_value, want, python_after, _ = _setup(prog)
    mine = copy.deepcopy(p)
    value, got = srcad.value_and_grad(fn, wrt=(0, 1), mode="tape")(mine, x.copy())
    assert value == pytest.approx(want_value, rel=1e-13, abs=1e-13)
    _assert_close(got, want)
    _assert_after(mine, python_after)


@pytest.mark.filterwarnings("ignore:srcad.*writes into its argument:UserWarning")
@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_vjp(prog):
    fn, p, x, want_value, want, python_after, _ = _setup(prog)
    mine = copy.deepcopy(p)
    out, pullback = srcad.vjp(fn, mine, x.copy(), mode="tape")
    assert out == pytest.approx(want_value, rel=1e-13, abs=1e-13)
    _assert_after(mine, python_after)
    fn(copy.deepcopy(p), x.copy())  # (more Python between the calls)
    _assert_close(pullback(1.0), want)
    _assert_close(pullback(1.0), want)  # (a pullback may be called again)


@pytest.mark.filterwarnings("ignore:srcad.*writes into its argument:UserWarning")
@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_jvp(prog):
    fn, p, x, want_value, want, python_after, r = _setup(prog)
    tp = copy.deepcopy(p)
    for leaf in _leaves(tp):
        leaf[...] = r.normal(size=leaf.shape)
    tx = _a(r)
    directional = sum(float(np.sum(a * b)) for a, b in zip(_leaves((tp, tx)), _leaves(want)))
    mine = copy.deepcopy(p)
    try:
        out, tangent = srcad.jvp(fn, (mine, x.copy()), (copy.deepcopy(tp), tx.copy()),
                                 mode="tape")
    except SrcadError as e:  # (a refusal at the user's line: `q = p[1:]` then a write)
        assert "line" in str(e)
        return
    assert out == pytest.approx(want_value, rel=1e-13, abs=1e-13)
    assert tangent == pytest.approx(directional, rel=1e-6, abs=1e-7)
    _assert_after(mine, python_after)


def test_tape_agrees_with_source_mode():
    """Where source mode differentiates these, the two modes agree to the last bits but the
    summation order."""
    for prog in ("dict", "list", "nested_dict_by_name", "list_read_whole_after",
                 "through_a_view", "inner_list_in_a_dict", "second_inner_list"):
        fn, p, x, *_ = _setup(prog)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = srcad.grad(fn, wrt=(0, 1), mode="tape")(copy.deepcopy(p), x.copy())
            b = srcad.grad(fn, wrt=(0, 1), mode="source")(copy.deepcopy(p), x.copy())
        _assert_close(a, b, 1e-12)


def test_only_x_differentiated_is_refused():
    """With the container not differentiated, its arrays are numpy's own (`Plain`): the write
    of a differentiable value into one is refused at the user's line, not lost."""
    fn, p, x, *_ = _setup("dict")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(SrcadError, match="in place"):
            srcad.grad(fn, wrt=1, mode="tape")(copy.deepcopy(p), x.copy())


def _written_by_a_chained_subscript(p, x):
    W = p["enc"]["W"]
    W -= 0.1 * x
    return np.sum(p["enc"]["W"] * x) + np.sum(p["enc"]["b"] ** 2)


def _each_item_written_in_a_loop(p, x):
    for w in p:
        w *= x
    return np.sum(p[0] * p[1])


@pytest.mark.filterwarnings("ignore:srcad.*writes into its argument:UserWarning")
@pytest.mark.parametrize("fn, make", [
    (_written_by_a_chained_subscript, lambda r: {"enc": {"W": _a(r), "b": _a(r)}}),
    (_each_item_written_in_a_loop, lambda r: [_a(r), _a(r)]),
    (_inner_list_two_deep_then_a_store, lambda r: [[[_a(r), _a(r)]]]),
])
def test_refused_or_right(fn, make):
    """Forms the shared front end refuses in both modes today (srcad cannot tell whether the
    item shares memory): a refusal at the user's line, or the right answer -- never a wrong
    one."""
    r = np.random.default_rng(7)
    p, x = make(r), _a(r)
    python_after = copy.deepcopy(p)
    want_value = fn(python_after, x.copy())
    want = numerical_grad(lambda p, x: fn(copy.deepcopy(p), x.copy()), (p, x), wrt=(0, 1))
    mine = copy.deepcopy(p)
    try:
        value, got = srcad.value_and_grad(fn, wrt=(0, 1), mode="tape")(mine, x.copy())
    except SrcadError as e:
        assert "line" in str(e)
        return
    assert value == pytest.approx(want_value, rel=1e-13)
    _assert_close(got, want)
    _assert_after(mine, python_after)


# ---- classes found on the way (their smallest programs; source mode: tests/test_containers.py) ----


def _old_inner_dict_read_after_its_slot_is_rebound(p, x):
    e = p["enc"]
    p["enc"] = {"W": x * 2.0}
    return np.sum(p["enc"]["W"]) + np.sum(e["W"])


def _store_through_a_name_after_its_slot_is_rebound(p, x):
    e = p["enc"]
    p["enc"] = {"W": x * 2.0}
    e["W"] = e["W"] * x  # (e is no longer p's item: p["enc"] stays the new dict)
    return np.sum(p["enc"]["W"]) + np.sum(e["W"])


def _two_names_for_one_inner_dict(p, x):
    e1 = p["enc"]
    e2 = p["enc"]  # (the same dict as e1)
    e1["W"] = e1["W"] * x
    e2["b"] = e2["b"] + x
    return np.sum(p["enc"]["W"] * p["enc"]["b"]) + np.sum(e1["b"])


def _check_tape(fn, p, x):
    python_after = copy.deepcopy(p)
    want_value = fn(python_after, x.copy())
    want = numerical_grad(lambda p, x: fn(copy.deepcopy(p), x.copy()), (p, x), wrt=(0, 1))
    mine = copy.deepcopy(p)
    value, got = srcad.value_and_grad(fn, wrt=(0, 1), mode="tape")(mine, x.copy())
    assert value == pytest.approx(want_value, rel=1e-13)
    assert all(g is not None for g in _leaves(got) if g.ndim), got
    _assert_close(got, want)
    _assert_after(mine, python_after)


@pytest.mark.parametrize("fn", [_old_inner_dict_read_after_its_slot_is_rebound,
                                _store_through_a_name_after_its_slot_is_rebound])
def test_old_inner_dict_after_its_slot_is_rebound(fn):
    """(Its items got no gradient: the caller's copy of the stored dict was made plain in
    place, under the tape's feet -- settle_arguments builds new plain containers now.)"""
    _check_tape(fn, {"enc": {"W": np.array([0.3, -0.2, 0.9])}}, np.array([0.4, 0.5, 0.6]))


def test_two_names_for_one_inner_dict():
    """(Each read of p["enc"] gave a fresh container, so one store was lost: 0.754 for 2.576;
    a nested slot read again is the container read before, until a store replaces it.)"""
    p = {"enc": {"W": np.array([0.3, -0.2, 0.9]), "b": np.array([0.1, 0.2, 0.3])}}
    _check_tape(_two_names_for_one_inner_dict, p, np.array([0.4, 0.5, 0.6]))
