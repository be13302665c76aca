"""``del d[k]`` and ``del xs[i]``: the item is gone, as in Python (session of 2026-12-06, ninth).

srcad read every ``del`` statement as ``del x`` -- a name's memory freed, no value changed --
so ``del d["a"]`` left the key in srcad's dict (``d.get("a", default)`` then read the old
value: a wrong value and gradient, silently) and ``del xs[0]`` left the list as it was (every
later index read the item before it), and a module's dict kept the key after the call. Now
``del t[k]`` is Python's ``t.pop(k)`` (frontend/pylower.py `_DeletedItems`), which srcad
follows as any pop; ``del xs[a:b]`` and ``del obj.attr`` are refused with a route. The
shape probe changes its own copy of a module's container for such a pop (interpret.py
`_probe_copies_changed`: it popped the module's own key before, and the call then raised
KeyError).
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

MODES = {"source": {}, "fuse": {"fuse": True}, "tape": {"mode": "tape"}}
X = np.array([0.3, -0.7, 1.1])


def dict_key_deleted(x):
    d = {"a": x, "b": x * 2.0}
    del d["a"]
    return np.sum(d.get("a", x * 10.0) * d["b"])


def list_item_deleted(x):
    xs = [x, x * 2.0, x * 3.0]
    del xs[0]
    return np.sum(xs[0] * xs[1]) + len(xs)


def two_targets_deleted(x):
    d = {"a": x, "b": np.sin(x), "c": x ** 2}
    del d["a"], d["c"]
    return np.sum(d["b"]) * len(d) + np.sum(d.get("c", x))


def deleted_in_a_loop(x):
    xs = [x * k for k in range(1, 5)]
    for _ in range(2):
        del xs[-1]
    return np.sum(xs[-1] ** 2) + len(xs)


def name_deleted(x):
    h = np.tanh(x)
    y = h * 2.0
    del h
    return np.sum(y)


FUNCTIONS = [dict_key_deleted, list_item_deleted, two_targets_deleted, deleted_in_a_loop,
             name_deleted]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_the_item_is_gone(fn, mode):
    value, g = srcad.value_and_grad(fn, **MODES[mode])(X.copy())
    np.testing.assert_allclose(value, fn(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(g, numerical_grad(fn, (X.copy(),), h=1e-6), rtol=1e-6,
                               atol=1e-9)


CFG = {"mode": "train", "k": 1}


def module_key_deleted(x):
    del CFG["k"]
    return np.sum(x ** 2) * (2.0 if "k" in CFG else 1.0)


@pytest.mark.parametrize("mode", MODES)
def test_a_modules_key_is_gone_after_the_call(mode):
    CFG["k"] = 1
    try:
        value, g = srcad.value_and_grad(module_key_deleted, **MODES[mode])(X.copy())
        assert CFG == {"mode": "train"}
        np.testing.assert_allclose(value, np.sum(X ** 2), rtol=1e-12)
        np.testing.assert_allclose(g, 2 * X, rtol=1e-12)
        with pytest.raises(KeyError):  # (as Python's second call raises)
            srcad.value_and_grad(module_key_deleted, **MODES[mode])(X.copy())
    finally:
        CFG["k"] = 1


def slice_deleted(x):
    xs = [x, x * 2.0, x * 3.0]
    del xs[0:2]
    return np.sum(xs[0])


def test_a_slice_deleted_is_refused_with_a_route():
    with pytest.raises(srcad.SrcadError, match=r"del xs\[a:b\]"):
        srcad.grad(slice_deleted)(X.copy())


class Holder:
    def __init__(self):
        self.scale = 3.0


HOLDER = Holder()


def attribute_deleted(x):
    HOLDER.scale = 2.0
    del HOLDER.scale
    return np.sum(x ** 2) * getattr(HOLDER, "scale", 5.0)


def test_an_attribute_deleted_is_refused_not_read_as_it_was():
    """`del obj.attr` was read as `del x`: the getattr after it took the deleted value (2.0,
    where Python's default is 5.0), silently, and the object kept it after the call."""
    with pytest.raises(srcad.SrcadError, match=r"del obj\.attr"):
        srcad.grad(attribute_deleted)(X.copy())
    assert vars(HOLDER) == {"scale": 3.0}
