"""One numpy array held in two places -- a name and a list's slot, a list's slot and an
object's attribute, one list under two names -- written in place through one of them: Python
shows the write through the other. Source mode used to keep the other holder's old value (a
wrong value and gradient, silently; tape mode was right). Now the holders of an array written
in place as a list's or dict's item are given its new value (frontend/aliasing.py
`refresh_item_holders`), a store through one name of a list shows in the others bound to it,
and a holder srcad cannot rebuild (a dict made around the list) is refused at the write."""

import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

MODES = [("source", False), ("tape", False), ("source", True)]
_R = np.random.default_rng(11)
_AB = (_R.standard_normal(3), _R.standard_normal(3))


def _check(fn, args=_AB, wrt=(0, 1), tol=1e-6):
    want_v = fn(*[a.copy() for a in args])
    want = numerical_grad(fn, [a.copy() for a in args], wrt=wrt)
    for mode, fuse in MODES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v, g = srcad.value_and_grad(fn, wrt=wrt, mode=mode, fuse=fuse)(*args)
        assert np.allclose(v, want_v, rtol=1e-12, atol=0), (mode, fuse, v, want_v)
        for a, b in zip(g, want):
            assert rel_error(a, b) < tol, (mode, fuse)


def _item_written_name_read(a, b):
    W1, W2 = a.copy(), b.copy()
    params = [W1, W2]
    params[0] -= 0.1 * a
    return np.sum(W1 * W2)


def _dict_values_written_in_a_loop(a, b):
    W1, W2 = a.copy(), b.copy()
    params = {"W1": W1, "W2": W2}
    for k in params:
        params[k] -= 0.1 * params[k]
    return np.sum(W1 * W2)


def _item_written_by_op_assign(a, b):
    A = a.copy()
    ps = [A, b.copy()]
    ps[0] *= 3.0
    ps[1] += ps[0]
    return np.sum(A * ps[1])


def _loop_over_the_list(a, b):
    W1, W2 = a.copy(), b.copy()
    params = [W1, W2]
    for p in params:
        p *= 0.5
    return np.sum(W1 * W2 + W1)


def _number_items_rebind(a, b):
    s = float(np.sum(a))
    xs = [s, 2.0]
    xs[0] += 1.0  # (a float: `+=` rebinds the slot, s keeps its value)
    return s * np.sum(b) + xs[0] * np.sum(a)


class _Layer:
    def __init__(self, a, b):
        self.W = a.copy()
        self.b = b.copy()
        self.params = [self.W, self.b]

    def step(self, lr):
        for p in self.params:
            p -= lr * p

    def __call__(self, x):
        return self.W * x + self.b


def _layer_params_and_attributes(a, b):
    layer = _Layer(a, b)
    layer.step(0.1)
    return np.sum(layer(a))


class _SGD:
    def __init__(self, params, lr):
        self.params = params
        self.lr = lr

    def step(self, grads):
        for p, g in zip(self.params, grads):
            p -= self.lr * g


def _optimizer_over_named_arrays(a, b):
    W, c = a.copy(), b.copy()
    opt = _SGD([W, c], 0.1)
    opt.step([W * c, W + c])
    opt.step([W * c, W + c])
    return np.sum(W * c)


def _optimizer_steps_in_a_loop(a, b):
    W, c = a.copy(), b.copy()
    opt = _SGD([W, c], 0.1)
    for _ in range(2):
        opt.step([W * c, W + c])
    return np.sum(W * c)


class _Net:
    def __init__(self, ps):
        self.params = ps

    def step(self, lr):
        for p in self.params:
            p -= lr * p


def _list_under_a_name_and_an_attribute(a, b):
    ps = [a.copy(), b.copy()]
    n = _Net(ps)
    for _ in range(2):
        n.step(0.1)
    return np.sum(ps[0] * n.params[1])


def _store_through_a_second_name(a, b):
    ps = [a.copy(), b.copy()]
    q = ps
    q[0] = q[0] * 2
    return np.sum(ps[0] * ps[1])


class _Box:
    def __init__(self, ps):
        self.ps = ps


def _loop_over_an_attribute_list(a, b):
    ps = [a.copy(), b.copy()]
    box = _Box(ps)
    for p in box.ps:
        p *= 2
    return np.sum(ps[0] * ps[1])


PROGRAMS = [_item_written_name_read, _dict_values_written_in_a_loop,
            _item_written_by_op_assign, _loop_over_the_list, _number_items_rebind,
            _layer_params_and_attributes, _optimizer_over_named_arrays,
            _list_under_a_name_and_an_attribute, _store_through_a_second_name,
            _loop_over_an_attribute_list]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__.strip("_"))
def test_a_write_through_one_holder_shows_in_the_other(fn):
    _check(fn)


def test_a_loop_of_steps_over_named_arrays_is_refused():
    """`for _ in range(2): opt.step(...)` where the optimizer's list holds `W` and `c`: in
    the loop, the names cannot be given the written arrays (they keep one value across the
    loop in srcad's code), so the write is refused instead of leaving them stale (it gave a
    wrong value before). Tape mode is refused alike (the modes share their refusals)."""
    with pytest.raises(srcad.SrcadError, match="inside a loop or a branch"):
        srcad.value_and_grad(_optimizer_steps_in_a_loop, wrt=(0, 1))(*_AB)


def _dict_around_the_list(a, b):
    ps = [a.copy(), b.copy()]
    d = {"ps": ps}
    for p in ps:
        p *= 2
    return np.sum(d["ps"][0] * ps[1])


def test_a_dict_made_around_the_list_is_refused():
    """The dict holds the list whose arrays are written: srcad does not rebuild it, so the
    write is refused at its line instead of leaving `d["ps"]` stale."""
    made = _dict_around_the_list.__code__.co_firstlineno + 2
    with pytest.raises(srcad.SrcadError, match=f"dict made at line {made}"):
        srcad.value_and_grad(_dict_around_the_list, wrt=(0, 1))(*_AB)


def _shrink(ps, lr):
    for p in ps:
        p -= lr * p


def _written_through_the_dict(a, b):
    ps = [a.copy(), b.copy()]
    model = {"ps": ps}
    _shrink(model["ps"], 0.1)
    return np.sum(model["ps"][0] * ps[1])


def test_a_list_written_through_a_dict_slot():
    """`f(model["ps"])` writing the list's arrays in place, `ps` naming the same list: the
    dict's slot was given the written list and `ps` kept the old arrays (source mode, a wrong
    value); the names bound to that list are given it too now (inline.py)."""
    _check(_written_through_the_dict)
