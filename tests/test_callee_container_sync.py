"""Lists and dicts a function is given, changed in place by a function it calls, by a method
of a list or dict they hold, or through a second name in a branch -- the classes the callee
container fuzzer (tests/fuzz_callee_containers.py) found on its first runs, in the session of
2026-12-07, thirteenth. Each was a wrong state of the caller's containers after the call
(and, where the program read them back, a wrong value), silently, in source mode:

- a function that stores into its dict argument works on its own copy of it (`own`); a
  callee's append, or a method of a list the dict holds (`cfg["hist"].append(v)`), then
  changed the copy only: now the caller's object is synced after every statement that may
  change it, a level down where it holds the caller's own lists (`runtime.sync_into`);
- `k = log` then `k[-1] = v` inside an `if`: the store was not seen as the argument's;
- `log.sort()` in a callee given a list the caller changes in place: srcad took the list
  for an array (`log[...] = np.sort(log)`: a TypeError blamed on the user's code);
- a callee's `log += [v]` of a list its caller read from a dict (`h(cfg["hist"])`): Python
  extends that list in place, srcad left the dict's list as it was (a wrong value);
- a callee given a dict and an item of it (`h(cfg["hist"], cfg)`) that changes one: source
  mode cannot follow the one object behind the two names -- refused now (it was a wrong
  value); tape mode runs Python's objects and is right;
- tape mode: `d.pop("a")` then `d["a"] = v` in a callee left the caller's key in its old
  place (Python's dict has it last).

Each program runs twice on the same containers against Python on copies of its own: the
value, the gradient (central differences) and both containers after each call."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = {"source": {}, "fuse": {"fuse": True}, "tape": {"mode": "tape"}}
X = np.array([0.3, -0.2, 0.4])


def _start():
    return [0.5], {"a": 1.0, "hist": [2.0], "n": 0.0}


def _append_hist(cfg):
    cfg["hist"].append(2.0)


def stored_then_callee_appends_inner(x, log, cfg):
    cfg["a"] = 1.0  # (a store: the function works on its own copy of cfg)
    _append_hist(cfg)
    return np.sum(np.tanh(x)) * len(cfg["hist"])


def _store_a(cfg):
    cfg["a"] = -0.5


def callee_stores_then_inner_append(x, log, cfg):
    _store_a(cfg)
    cfg["hist"].append(-0.5)
    return np.sum(np.tanh(x) * (1.0 + 0.1 * len(cfg["hist"])))


def inner_list_changed_by_name(x, log, cfg):
    cfg["a"] = -0.5
    h = cfg["hist"]
    h.pop()
    h.insert(0, 3.0)
    return np.sum(np.tanh(x)) * (1.0 + len(h) + h[0])


def _append(log):
    log.append(2.0)


def stored_then_callee_appends(x, log, cfg):
    log[0] = 1.0
    _append(log)
    return np.sum(np.tanh(x)) * len(log)


def alias_store_in_a_branch(x, log, cfg):
    log.append(1.0)
    k = log
    if k:
        k[-1] = 0.25
    log.pop(0)
    return np.sum(np.tanh(x) * (1.0 + 0.1 * len(log) + (log[-1] if log else 0.0)))


def _sort_and_store(x, log):
    log.sort()
    log[-1] = 3.0
    return np.sum(np.sin(x)) * 0.5


def sorted_by_a_callee_then_popped(x, log, cfg):
    log.insert(0, 4.0)
    extra = _sort_and_store(x, log)
    log.pop()
    return np.sum(np.tanh(x) * (1.0 + 0.1 * len(log))) + extra


def _trim_in_a_branch(log, cfg):
    cfg["hist"] = cfg["hist"] + [1.0]
    if log:
        log.pop()


def spliced_branch_pops(x, log, cfg):
    _trim_in_a_branch(log, cfg)
    return np.sum(np.tanh(x) * (1.0 + 0.1 * len(log) + 0.1 * len(cfg["hist"])))


def _extend(log):
    log += [3.0]


def callee_extends_a_dicts_list(x, log, cfg):
    _extend(cfg["hist"])
    return np.sum(np.tanh(x) * (1.0 + 0.1 * sum(cfg["hist"])))


def _reinsert(log, cfg):
    cfg.pop("a", None)
    cfg["a"] = 1.5


def key_popped_and_stored_again(x, log, cfg):
    _reinsert(log, cfg)
    return np.sum(np.tanh(x)) * (1.0 + list(cfg).index("a"))


def _sorted_by_a_second_name(log, cfg):
    cfg["hist"].append(float(len(cfg["hist"])))
    k = log
    k.sort()


def sorted_through_a_second_name(x, log, cfg):
    """`k = log; k.sort()`: the list's own sort (srcad took `k` for an array, `k[...] =
    np.sort(k)`, a TypeError blamed on the user's code, before the session of 2026-12-07,
    fourteenth)."""
    _sorted_by_a_second_name(log, cfg)
    log.insert(0, -0.5)
    return np.sum(np.tanh(x) * (1.0 + 0.1 * len(cfg["hist"]) + 0.1 * log[1]))


def _b_deleted_then_set(x, log, cfg):
    e = cfg
    if "b" in e:
        del e["b"]
    cfg.pop("a", None)
    cfg.update({"b": -0.5})


def deleted_through_a_second_name_twice(x, log, cfg):
    """`e = cfg; if "b" in e: del e["b"]`, twice in a call and again at the next call: the
    shape probe's copy of the dict, one for both names (it gave each name its own copy, and
    `del` raised a KeyError blamed on the user's code at the second call, before the session
    of 2026-12-07, fourteenth)."""
    _b_deleted_then_set(x, log, cfg)
    _b_deleted_then_set(x, log, cfg)
    return np.sum(np.tanh(x) * (1.0 + 0.1 * len(cfg)))


FOLLOWED = [stored_then_callee_appends_inner, callee_stores_then_inner_append,
            inner_list_changed_by_name, stored_then_callee_appends, alias_store_in_a_branch,
            sorted_by_a_callee_then_popped, spliced_branch_pops, callee_extends_a_dicts_list,
            key_popped_and_stored_again, sorted_through_a_second_name,
            deleted_through_a_second_name_twice]


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    return float(a) == float(b)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("fn", FOLLOWED, ids=[f.__name__ for f in FOLLOWED])
def test_the_callers_containers_are_left_as_python_leaves_them(fn, mode):
    log, cfg = _start()
    plog, pcfg = _start()
    g = srcad.value_and_grad(fn, **MODES[mode])
    for scale in (1.0, -0.7):
        x = X * scale
        before = copy.deepcopy((plog, pcfg))
        want = fn(x.copy(), plog, pcfg)
        value, grad = g(x.copy(), log, cfg)
        assert value == want
        assert _same(log, plog) and _same(cfg, pcfg), (log, cfg, plog, pcfg)
        numeric = numerical_grad(lambda z: fn(z, *copy.deepcopy(before)), (x.copy(),))
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def _item_and_whole(x, log, cfg):
    log[-1] = -0.5
    cfg["hist"] = cfg["hist"] + [-0.5]
    return np.sum(np.sin(x))


def item_given_with_its_dict(x, log, cfg):
    _item_and_whole(x, cfg["hist"], cfg)
    return np.sum(np.tanh(x) * (1.0 + 0.1 * sum(cfg["hist"])))


def test_an_item_given_with_its_dict_and_changed_is_refused_in_source_mode():
    with pytest.raises(srcad.SrcadError, match="is given `cfg` and an item of it"):
        srcad.value_and_grad(item_given_with_its_dict)(X, *_start())
    log, cfg = _start()
    plog, pcfg = _start()
    value, grad = srcad.value_and_grad(item_given_with_its_dict, mode="tape")(X, log, cfg)
    assert value == item_given_with_its_dict(X, plog, pcfg)
    assert _same(log, plog) and _same(cfg, pcfg) and cfg["hist"] == [-0.5, -0.5]


# A list an object holds, appended to by one helper (run as plain Python: srcad carries the
# list on as the value it holds then) and reversed in place by the next through a name bound
# to it (`log = s.log; log.reverse()`): the second helper was given the carried value, a copy,
# and reversed that -- the object's own list was left unreversed, silently (the callee
# container fuzzer's object form, seed 7 `p7_f`).


class _State:
    def __init__(self):
        self.log = [0.5]
        self.cfg = {"a": 1.0, "hist": [2.0], "n": 0.0}


STATE = _State()


def _log_reversed(x, s):
    log, cfg = s.log, s.cfg
    log.reverse()
    return np.sum(np.sin(x)) * 0.5 + len(s.log) * 0.1


def _log_appended(s):
    s.log.append(0.25)


def _b_updated(x, s):
    log, cfg = s.log, s.cfg
    cfg.update({"b": 2.0 * len(cfg["hist"])})
    return np.sum(np.sin(x)) * 0.5 + len(s.log) * 0.1


def object_list_appended_then_reversed(x):
    extra = 0.0
    _log_appended(STATE)
    extra = extra + _log_reversed(x, STATE)
    extra = extra + _b_updated(x, STATE)
    return np.sum(np.tanh(x) * (1.0 + 0.1 * STATE.cfg.get("b", 1.0) + 0.1 * (
        STATE.cfg["hist"][0] if STATE.cfg["hist"] else 0.0))) + extra


@pytest.mark.parametrize("mode", list(MODES))
def test_an_objects_list_changed_by_two_helpers_is_left_as_python_leaves_it(mode):
    STATE.__init__()
    mine = (STATE.log, STATE.cfg)
    python = copy.deepcopy(mine)
    STATE.log, STATE.cfg = python
    want = object_list_appended_then_reversed(X)
    STATE.log, STATE.cfg = mine
    value, grad = srcad.value_and_grad(object_list_appended_then_reversed, **MODES[mode])(X)
    assert value == want
    assert STATE.log == python[0] == [0.25, 0.5] and _same(STATE.cfg, python[1])
