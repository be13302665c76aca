"""Lists and dicts a function is given -- as an argument of the transformed function, or by
its caller to a helper -- holding arrays that are written in place through another holder:
a shallow copy of the argument (`ps.copy()`, `copy.copy(D)`, `dict(D)`, `L[:]`), a display
of its items (`E = {"x": D["x"]}`), a helper walking it (`for p in ps: p -= t`), one array
in two of its slots (`[W, W]`), a store into a plain list a helper was given. Python's names
show every such write; srcad returned the old array in these programs, silently, until the
session of 2026-12-05 (source mode: `ps.copy()` of a list argument taken as numpy's copy, a
display's item not known to be the name's array, `view_again` keeping a list's item a loop
wrote in place; tape mode: a list or dict argument's copy holding its leaves unrecorded, a
scoped callee's store into a plain list lost, a callee's in-place write into an item not
shown to the caller's names). Each case is checked against central differences taken on
fresh copies (the programs write into their arguments' arrays); source mode may refuse a
form it cannot follow (a `SrcadError`), never return a wrong value or gradient.
tests/fuzz_shared_holders.py `generate_passed` is the random family of this class."""

import copy
import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import rel_error
from tests import fuzz_shared_holders as SH

MODES = ("source", "tape")


def _check(fn, args, mode, may_refuse=False):
    want_v = fn(*copy.deepcopy(args))
    want = SH._leaves(SH.fresh_differences(fn, args))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v, g = srcad.value_and_grad(fn, wrt=tuple(range(len(args))), mode=mode)(
                *copy.deepcopy(args))
    except srcad.SrcadError:
        assert may_refuse, f"{fn.__name__} refused in {mode} mode"
        return "refused"
    got = SH._leaves(g)
    assert np.allclose(v, want_v, rtol=1e-10, atol=1e-12), (fn.__name__, mode, v, want_v)
    assert len(got) == len(want)
    for x, y in zip(got, want):
        assert rel_error(x, y) < 1e-6, (fn.__name__, mode, x, y)
    return "right"


def _list():
    return [np.array([1.0, 2.0, -0.5]), np.array([3.0, -1.0, 0.25])]


def _dict():
    return {"x": np.array([1.0, 2.0, -0.5]), "y": np.array([3.0, -1.0, 0.25])}


A = np.array([0.5, -2.0, 1.5])


# -- a shallow copy of a list or dict argument, written through the copy ------------------

def list_method_copy(ps, a):
    qs = ps.copy()
    qs[0] *= 2.0
    return np.sum(qs[0] * a) + np.sum(ps[0] * ps[1])


def list_copy_copy(ps, a):
    qs = copy.copy(ps)
    qs[1] -= 0.5 * a
    return np.sum(ps[1] * ps[0]) + np.sum(qs[1])


def list_call_copy(ps, a):
    qs = list(ps)
    for q in qs:
        q *= 0.5
    return np.sum(ps[0] * a) + np.sum(ps[1] ** 2)


def dict_call_copy(D, a):
    W1 = D["x"]
    E = dict(D)
    E["x"] -= 0.41 * E["x"]
    return np.sum(W1 * a)


def dict_method_copy(D, a):
    E = D.copy()
    for k in E:
        E[k] *= 2.0
    return np.sum(D["x"] * a) + np.sum(D["y"])


def dict_copy_copy(D, a):
    W1 = D["x"]
    E = copy.copy(D)
    E["x"] -= 0.41 * E["x"]
    D["x"] *= 0.55 * a
    return np.sum(W1 * a)


def dict_comprehension_copy(D, a):
    E = {k: v for k, v in D.items()}
    E["y"] += a
    return np.sum(D["y"] * a)


COPIES = [list_method_copy, list_copy_copy, list_call_copy, dict_call_copy, dict_method_copy,
          dict_copy_copy, dict_comprehension_copy]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", COPIES, ids=lambda f: f.__name__)
def test_copy_of_an_argument_written_through_the_copy(fn, mode):
    holder = _dict() if fn.__code__.co_varnames[0] == "D" else _list()
    # (tape mode follows Python's objects: right; source mode may refuse these)
    _check(fn, (holder, A.copy()), mode, may_refuse=mode == "source")


# -- a display of an argument's items, or another read of the same slot -------------------

def display_of_an_items_read(D, a):
    A1 = D["x"]
    E = {"x": D["x"]}
    E["x"] *= 2.0
    return np.sum(A1 * a)


def list_display_of_items(L, a):
    A1 = L[0]
    M = [L[0], L[1]]
    M[0] *= 2.0
    return np.sum(A1 * a) + np.sum(M[1])


def two_reads_of_a_slot(L, a):
    A1 = L[0]
    B1 = L[0]
    A1 *= 2.0
    return np.sum(B1 * a)


def display_kept_then_slot_written(L, a):
    L[0] = L[0] * 0.86
    kept = [L[0]]
    L[0] += 0.56 * a
    return np.sum(kept[0] * 0.5) + np.sum(L[0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [display_of_an_items_read, list_display_of_items,
                                two_reads_of_a_slot, display_kept_then_slot_written],
                         ids=lambda f: f.__name__)
def test_holders_of_an_arguments_item_see_the_write(fn, mode):
    holder = _dict() if fn.__code__.co_varnames[0] == "D" else _list()
    assert _check(fn, (holder, A.copy()), mode) == "right"


def appended_then_slot_written(L, a):
    L[0] = L[0] * 0.86
    kept = []
    kept.append(L[0])
    L[0] += 0.56 * a
    return np.sum(kept[0] * 0.5)


def walked_into_a_list_then_slot_written(L, a):
    W1 = L[0]
    L[0] = L[0] * 0.86
    kept = []
    for q in L:
        kept.append(q)
    L[0] += 0.56 * a
    return np.sum(W1 * a) + np.sum(kept[0] * 0.5) + np.sum(L[0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [appended_then_slot_written,
                                walked_into_a_list_then_slot_written], ids=lambda f: f.__name__)
def test_kept_items_of_an_argument(fn, mode):
    _check(fn, (_list(), A.copy()), mode, may_refuse=mode == "source")


# -- a helper walking the list it is given ------------------------------------------------

def _walk(ps, lr):
    for p in ps:
        p -= lr * p


def walked_by_a_helper(L, a):
    W1 = L[0]
    _walk(L, 0.5)
    return np.sum(W1 * a) + np.sum(L[0] * 2.0)


def written_then_walked(L, a):
    W1 = L[0]
    W1 -= 0.83 * a
    _walk(L, 0.5)
    return np.sum(W1 * a) + np.sum(L[0] * 2.0)


def slice_walked(L, a):
    W1 = L[0]
    M = L[:]
    W1 -= 0.83 * a
    _walk(M, 0.5)
    return np.sum(W1 * a) + np.sum(L[0] * 2.0) + np.sum(M[0] * 3.0)


def slice_walked_in_the_body(L, a):
    W1 = L[0]
    M = L[:]
    for p in M:
        p -= 0.5 * p
    return np.sum(W1 * a) + np.sum(L[0] * 2.0) + np.sum(M[0] * 3.0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [walked_by_a_helper, written_then_walked],
                         ids=lambda f: f.__name__)
def test_a_helper_walking_a_list_argument(fn, mode):
    assert _check(fn, (_list(), A.copy()), mode) == "right"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [slice_walked, slice_walked_in_the_body],
                         ids=lambda f: f.__name__)
def test_a_slice_of_a_list_argument_walked(fn, mode):
    _check(fn, (_list(), A.copy()), mode, may_refuse=mode == "source")


# -- a list built here, given to a helper ---------------------------------------------------

def _bump_second(L, b):
    L[1] += 0.44 * b
    return 0.0


def _bump_and_read(L, b):
    W1 = L[0]
    L[1] += 0.44 * b
    return np.sum(W1 * 2.0) + np.sum(L[0])


def one_array_twice_given(a, b):
    W1 = a * 1.5
    L = [W1, W1, b * 1.0]
    acc = _bump_second(L, b)
    return acc + np.sum(W1 * 0.5) + np.sum(L[0] * 0.9)


def one_array_twice_given_and_read_there(a, b):
    W1 = a * 1.5
    L = [W1, W1, b * 1.0]
    acc = _bump_and_read(L, b)
    return acc + np.sum(W1 * 0.5) + np.sum(L[0] * 0.9)


def _store_first(L, b):
    L[0] = L[0] * 0.86
    return 0.0


def _store_then_write(L, b):
    L[0] = L[0] * 0.86
    L[0] += 0.5 * b
    return 0.0


def stored_into_by_a_helper(a, b):
    W1 = a * 1.5
    L = [W1, b * 1.0]
    acc = _store_first(L, b)
    return acc + np.sum(W1 * 0.5) + np.sum(L[0] * 0.9)


def stored_and_written_by_a_helper(a, b):
    W1 = a * 1.5
    L = [W1, b * 1.0]
    acc = _store_then_write(L, b)
    return acc + np.sum(W1 * 0.5) + np.sum(L[0] * 0.9)


def _copy_and_write(ps):
    qs = ps.copy()
    qs[0] *= 2.0
    return np.sum(qs[0]) + np.sum(ps[0])


def copied_by_a_helper(a, b):
    ps = [a * 1.0, b * 2.0]
    return _copy_and_write(ps)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [one_array_twice_given, one_array_twice_given_and_read_there,
                                stored_into_by_a_helper, stored_and_written_by_a_helper,
                                copied_by_a_helper], ids=lambda f: f.__name__)
def test_a_list_given_to_a_helper(fn, mode):
    may = mode == "source" and fn in (stored_and_written_by_a_helper, copied_by_a_helper)
    _check(fn, (A.copy(), np.array([-0.3, 0.9, 1.2])), mode, may_refuse=may)


# -- `x.copy()` of an argument: numpy's copy of an array, as before --------------------------

def copied_array_argument(x, a):
    y = x.copy()
    y[0] = 5.0
    y *= a
    return np.sum(y * x)


def copied_scalar_array_argument(x, a):
    y = x.copy()
    return np.sum(y * a)


@pytest.mark.parametrize("mode", MODES)
def test_copy_of_an_array_argument_is_numpys(mode):
    assert _check(copied_array_argument, (A * 0.5, A.copy()), mode) == "right"
    assert _check(copied_scalar_array_argument, (np.array(1.5), A.copy()), mode) == "right"


# -- a walk over a dict's values, written in place through the loop's name -------------------
# (refused in both modes until 2026-12-05: `v = d[k]` with k a key known only when the code
# runs was not the dict's item for srcad, so `v op= t` was not carried into the dict)

def sgd_over_items(params, grads):
    for k, v in params.items():
        v -= 0.1 * grads[k]
    return np.sum(params["x"] * params["y"])


def scaled_over_values(D, a):
    for v in D.values():
        v *= a
    return np.sum(D["x"]) + np.sum(D["y"] * a)


def scaled_by_key(D, a):
    for k in D:
        v = D[k]
        v *= a
    return np.sum(D["x"]) + np.sum(D["y"] * a)


def scaled_over_a_local_dict(a, b):
    D = {"x": a * 1.0, "y": b * 2.0}
    for k, v in D.items():
        v *= a
    return np.sum(D["x"]) + np.sum(D["y"] * a)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [sgd_over_items, scaled_over_values, scaled_by_key,
                                scaled_over_a_local_dict], ids=lambda f: f.__name__)
def test_values_of_a_dict_written_in_a_loop(fn, mode):
    args = {sgd_over_items: (_dict(), {"x": A * 1.0, "y": A * 0.5}),
            scaled_over_a_local_dict: (A.copy(), A * 0.5 + 0.25)}.get(fn, (_dict(), A.copy()))
    assert _check(fn, args, mode) == "right"


# -- `for i, (p, g) in enumerate(zip(ps, gs)): p -= ...` ---------------------------------------
# (refused in both modes until 2026-12-05: frontend/itemloops.py wrote `zip` and `enumerate`
# of names as the indexed loop Python runs, not `enumerate` of a `zip`)

def enumerated_zip_step(ps, gs):
    for i, (p, g) in enumerate(zip(ps, gs)):
        p -= (0.1 + i) * g
    return np.sum(ps[0] * ps[1])


def enumerated_zip_step_on_a_local_list(a, b):
    ps = [a * 1.0, b * 2.0]
    gs = [b, a]
    for i, (p, g) in enumerate(zip(ps, gs)):
        p -= (0.1 + i) * g
    return np.sum(ps[0] * ps[1])


@pytest.mark.parametrize("mode", MODES)
def test_enumerate_of_zip_written_in_place(mode):
    assert _check(enumerated_zip_step, (_list(), [A * 1.0, A * 0.5]), mode) == "right"
    assert _check(enumerated_zip_step_on_a_local_list, (A.copy(), A * 0.5 - 0.25),
                  mode) == "right"


# -- found by a probe of optimiser and layer code (session of 2026-12-05) ---------------------
# A helper writing in place into the arrays it gets through `*args` or `**kwargs`: source mode
# dropped the write (the call had no effect srcad saw), silently; it is refused now (the
# packed tuple's item is no parameter srcad carries back). Tape mode runs it.

def _scale_all(*arrs):
    for a in arrs:
        a *= 2.0


def _scale_kw(**kw):
    for a in kw.values():
        a *= 2.0


def scaled_through_star_args(x, y):
    z = x * 1.0
    _scale_all(z)
    return np.sum(z * y)


def scaled_through_star_kwargs(x, y):
    z = x * 1.0
    _scale_kw(p=z)
    return np.sum(z * y)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [scaled_through_star_args, scaled_through_star_kwargs],
                         ids=lambda f: f.__name__)
def test_a_star_args_helper_writing_in_place(fn, mode):
    assert _check(fn, (A.copy(), A * 0.5 + 1.0), mode,
                  may_refuse=mode == "source") == ("right" if mode == "tape" else "refused")


# A helper storing into the list or dict it was given and returning it: tape mode returned
# its own copy of the container, so a later store through the returned name was not seen
# through the caller's; and a store of an argument's array into a list argument's slot gave
# that slot the stored array's gradient as well.

def _store_and_return(ps, x):
    ps[0] = ps[0] * x
    return ps


def _set_and_return(d, k, v):
    d[k] = v
    return d


def stored_through_the_returned_list(ps, x):
    qs = _store_and_return(ps, x)
    qs[0] = qs[0] * x
    return np.sum(ps[0])


def stored_through_the_returned_dict(d, x):
    e = _set_and_return(d, "c", x * 2.0)
    e["x"] = e["x"] * e["c"]
    return np.sum(d["x"])


def an_argument_stored_into_a_list_argument(ps, x):
    ps[1] = x
    return np.sum(ps[1]) + np.sum(ps[0] * x)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [stored_through_the_returned_list,
                                stored_through_the_returned_dict,
                                an_argument_stored_into_a_list_argument],
                         ids=lambda f: f.__name__)
def test_a_container_returned_or_stored_into(fn, mode):
    holder = _dict() if fn is stored_through_the_returned_dict else _list()
    _check(fn, (holder, A.copy()), mode, may_refuse=mode == "source")


# -- `W, b = ps`, then `W -= t`: the names are the list's items (refused in both modes until
# 2026-12-05: the unpacked names were no items of the list for srcad) -------------------------

def unpacked_argument_written(ps, a):
    W, b = ps
    W -= 0.1 * a
    return np.sum(ps[0] * a) + np.sum(W) + np.sum(b)


def unpacked_local_list_written(a, c):
    ps = [a * 1.0, c * 2.0]
    W, b = ps
    W *= 2.0
    b += a
    return np.sum(ps[0] * ps[1]) + np.sum(W * b)


def unpacked_then_slot_stored(ps, a):
    W, b = ps
    ps[0] = W * 3.0
    W += a
    return np.sum(ps[0]) + np.sum(W * a)


@pytest.mark.parametrize("mode", MODES)
def test_unpacked_items_written_in_place(mode):
    assert _check(unpacked_argument_written, (_list(), A.copy()), mode) == "right"
    assert _check(unpacked_local_list_written, (A.copy(), A * 0.5 - 0.25), mode) == "right"
    assert _check(unpacked_then_slot_stored, (_list(), A.copy()), mode) == "right"


# -- a slice of a list: a new list of the same objects, no view (found by the passed family
# widened to `W1, W2 = L`, 2026-12-05: `M = L[:]; L[0] = v` gave M the stored array) --------

def stored_after_a_whole_slice(L, a):
    M = L[:]
    L[0] = L[0] * 0.35
    return np.sum(M[0] * a) + np.sum(L[0])


def stored_after_a_slice(L, a):
    M = L[1:]
    L[1] = L[1] * 2.0
    return np.sum(M[0] * a) + np.sum(L[1])


def written_through_a_local_slice(a, c):
    L = [a * 1.0, c * 2.0, a + c]
    M = L[1:]
    M[0] += a
    return np.sum(L[1] * a) + np.sum(M[0])


def unpacked_then_written_through_a_slot(L, a):
    W1, W2 = L
    M = L[:]
    L[1] += 0.7 * a
    M[1] *= 0.89 * a
    return np.sum(W1 * W2) + np.sum(L[1]) + np.sum(M[1] * 0.7)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [stored_after_a_whole_slice, stored_after_a_slice,
                                written_through_a_local_slice,
                                unpacked_then_written_through_a_slot],
                         ids=lambda f: f.__name__)
def test_slices_of_lists(fn, mode):
    args = (A.copy(), A * 0.5 - 0.25) if fn is written_through_a_local_slice else \
        (_list(), A.copy()) if fn is unpacked_then_written_through_a_slot else \
        ([*_list(), A * 0.25 + 1.0], A.copy())
    # (source mode refuses a store into a list argument a whole slice copied, for now)
    _check(fn, args, mode, may_refuse=mode == "source" and fn in (
        unpacked_then_written_through_a_slot, stored_after_a_whole_slice))
