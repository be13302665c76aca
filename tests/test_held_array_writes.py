"""A write in place into an array a module global or an object holds (issue 25's session of
2026-12-06, fifth: found by a front-door probe of course-style layer code).

`w = net.params["W1"]; w[:] = W` then `net.loss(X)` -- also `w += W` of `w = net.W`, `w *=
0.0; w += W`, `np.multiply(W, 1.0, out=w)`, `w = G["W1"]` of a module's dict, `w = GW` or a
row of it -- writes the held array in Python, which the object's methods, a function reading
the global and the caller after the call all see. srcad reads that array as a constant when
it builds the code and writes a copy (copy on write): the layer's method read the old values
and the gradient came out **zeros** (relative error 1.0 against finite differences), the value
stale. Now refused at the write (refusals.py `check_writes_into_held_values`), as tape mode
refuses them (a differentiable value written into an array the function did not make);
storing a new array whole is followed in both modes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(0)


class Net:
    def __init__(self):
        self.params = {"W1": RNG.standard_normal((4, 5))}
        self.W = RNG.standard_normal((4, 5))
        self.layers = [self]

    def loss(self, X):
        return np.sum(np.tanh(X @ self.params["W1"])) + np.sum(np.sin(X @ self.W))


NET = Net()
G = {"W1": RNG.standard_normal((4, 5))}
GW = RNG.standard_normal((4, 5))
X = RNG.standard_normal((6, 4))
START = {"W1": NET.params["W1"].copy(), "W": NET.W.copy(), "G": G["W1"].copy(), "GW": GW.copy()}


def _restore():
    CFG["W"], WS[0] = START["CFG"], START["WS"]
    NET.params["W1"][...] = START["W1"]
    NET.W[...] = START["W"]
    G["W1"][...] = START["G"]
    GW[...] = START["GW"]


def global_loss(X):
    return np.sum(np.tanh(X @ G["W1"])) + np.sum(np.sin(X @ GW))


def slice_store_into_a_dicts_item(W, X):
    w = NET.params["W1"]
    w[:] = W
    return NET.loss(X)


def zeroed_then_added(W, X):
    w = NET.params["W1"]
    w *= 0.0
    w += W
    return NET.loss(X)


def out_argument(W, X):
    w = NET.params["W1"]
    np.multiply(W, 1.0, out=w)
    return NET.loss(X)


def added_into_an_attribute(W, X):
    w = NET.W
    w += W
    return NET.loss(X)


def through_a_layer_item(W, X):
    w = NET.layers[0].W
    w -= W
    return NET.loss(X)


def into_a_modules_dict(W, X):
    w = G["W1"]
    w[:] = W
    return global_loss(X)


def into_a_modules_array(W, X):
    w = GW
    w[...] = W * 2.0
    return global_loss(X)


def into_a_row_of_it(W, X):
    row = GW[1]
    row[:] = W[0]
    return global_loss(X)


GL = [GW]


def in_a_loop_over_a_modules_list(W, X):  # (the list holds GW, which global_loss reads)
    for w in GL:
        w[:] = W
    return global_loss(X)


CFG = {"W": RNG.standard_normal((4, 5))}
WS = [RNG.standard_normal((4, 5))]


def cfg_loss(X):
    return np.sum(np.tanh(X @ CFG["W"])) + np.sum(np.sin(X @ WS[0]))


START.update(CFG=CFG["W"], WS=WS[0])


def into_a_modules_dict_by_key(W, X):  # (the container itself, not an array in it)
    d = CFG
    d["W"] = W
    return cfg_loss(X)


def into_a_modules_list_by_index(W, X):
    ws = WS
    ws[0] = W
    return cfg_loss(X)


def into_a_modules_dict_read_through_its_name(W, X):  # (no one else reads it: refused all
    # the same -- Python's dict keeps W after the call, srcad's copy would not)
    d = CFG
    d["W"] = W
    return np.sum(np.tanh(X @ d["W"]))


def through_ascontiguousarray(W, X):  # (numpy returns GW itself: contiguous already)
    x = np.ascontiguousarray(GW)
    x[0] = W[0]
    return global_loss(X)


def a_fancy_index_copy(W, X):  # (numpy's copy: GW unchanged; runs)
    x = GW[[0, 1]]
    x[:] = W[:2]
    return global_loss(X) + np.sum(x ** 2)


def stored_whole(W, X):  # (the hint's route: followed)
    NET.W = W
    return NET.loss(X)


WRITES = [slice_store_into_a_dicts_item, zeroed_then_added, out_argument,
          added_into_an_attribute, through_a_layer_item, into_a_modules_dict,
          into_a_modules_array, into_a_row_of_it, in_a_loop_over_a_modules_list,
          into_a_modules_dict_by_key, into_a_modules_list_by_index,
          into_a_modules_dict_read_through_its_name, through_ascontiguousarray]


@pytest.mark.parametrize("f", WRITES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_a_write_into_a_held_array_is_refused_not_zero(f, mode):
    if mode == "tape" and f in CONTAINER_STORES:  # (tape mode's dicts and lists are Python's
        return _tape_follows(f)  # own: the store reaches the module function that reads it)
    _restore()
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    try:
        with pytest.raises(srcad.SrcadError) as e:
            srcad.grad(f, **options)(START["W"].copy(), X)
    finally:
        _restore()
    assert e.value.filename.endswith("test_held_array_writes.py")
    assert f.__code__.co_firstlineno + 1 < e.value.lineno  # (the write's line)
    if mode != "tape" and f is not through_a_layer_item:  # (that one: refused before too)
        assert "a module global or an object holds" in str(e.value)


CONTAINER_STORES = (into_a_modules_dict_by_key, into_a_modules_list_by_index,
                    into_a_modules_dict_read_through_its_name)


def _tape_follows(f):
    W = RNG.standard_normal((4, 5))
    try:
        value, g = srcad.value_and_grad(f, mode="tape")(W, X)
        _restore()
        assert value == pytest.approx(f(W.copy(), X), rel=1e-12)
        fd = numerical_grad(f, (W, X))
        for idx in ((0, 1), (3, 4)):
            assert g[idx] == pytest.approx(fd[idx], rel=1e-5, abs=1e-7)
    finally:
        _restore()


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_storing_a_new_array_whole_is_followed(mode):
    W = RNG.standard_normal((4, 5))
    try:
        value, g = srcad.value_and_grad(stored_whole, mode=mode)(W, X)
        assert value == pytest.approx(stored_whole(W.copy(), X), rel=1e-12)
        fd = numerical_grad(stored_whole, (W, X))
        for idx in ((0, 1), (3, 4)):
            assert g[idx] == pytest.approx(fd[idx], rel=1e-5, abs=1e-7)
    finally:
        NET.W = np.array(START["W"])


BUF = np.zeros((4, 5))


def into_a_scratch_buffer(W, X):  # (read back only through the name it was written by)
    b = BUF
    b[:] = W * 2.0
    return np.sum(np.tanh(X @ b) ** 2)


@pytest.mark.parametrize("fuse", [False, True])
def test_a_scratch_buffer_read_only_through_its_name_runs(fuse):
    """Nothing else reads the module's buffer -- no function given it, no object's method:
    the gradient is right, as before (the buffer itself keeps its old values after the call,
    where Python's holds W * 2: left, noted in REPORT.md)."""
    W = RNG.standard_normal((4, 5))
    value, g = srcad.value_and_grad(into_a_scratch_buffer, fuse=fuse)(W, X)
    assert value == pytest.approx(into_a_scratch_buffer(W.copy(), X), rel=1e-12)
    fd = numerical_grad(into_a_scratch_buffer, (W, X))
    for idx in ((0, 1), (3, 4)):
        assert g[idx] == pytest.approx(fd[idx], rel=1e-5, abs=1e-7)



@pytest.mark.parametrize("mode", ["source", "fused"])
def test_a_copy_by_a_fancy_index_is_the_functions_own(mode):
    W = RNG.standard_normal((4, 5))
    f = a_fancy_index_copy
    try:
        value, g = srcad.value_and_grad(f, fuse=mode == "fused")(W, X)
        assert value == pytest.approx(f(W.copy(), X), rel=1e-12)
        fd = numerical_grad(f, (W, X))
        for idx in ((0, 1), (1, 4), (3, 4)):
            assert g[idx] == pytest.approx(fd[idx], rel=1e-5, abs=1e-7)
    finally:
        _restore()


class Shared:
    """A layer class whose weights every instance shares (a class attribute)."""

    table = {"W": RNG.standard_normal((4, 5))}

    def forward(self, X):
        return np.tanh(X @ Shared.table["W"])


SHARED = Shared()
SHARED_START = Shared.table["W"]


def by_the_instance(W, X):  # (Python's store goes into the class's dict)
    SHARED.table["W"] = W
    return np.sum(SHARED.forward(X))


def by_its_type(W, X):
    t = type(SHARED).table
    t["W"] = W
    return np.sum(SHARED.forward(X))


def by_its_class(W, X):
    t = SHARED.__class__.table
    t["W"] = W
    return np.sum(SHARED.forward(X))


def by_the_class_name(W, X):  # (followed, as before)
    Shared.table["W"] = W
    return np.sum(SHARED.forward(X))


@pytest.mark.parametrize("f", [by_the_instance, by_its_type, by_its_class],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("fuse", [False, True])
def test_a_class_attribute_stored_into_through_an_instance_is_refused(f, fuse):
    """A dict every instance shares, stored into through one instance or its type, read by
    the method by the class's name: zeros (relative error 1.0) on f02c1d7 for the last two,
    the first was carried as the instance's own dict -- zeros too."""
    try:
        with pytest.raises(srcad.SrcadError) as e:
            srcad.grad(f, fuse=fuse)(RNG.standard_normal((4, 5)), X)
        assert e.value.lineno > f.__code__.co_firstlineno
    finally:
        Shared.table["W"] = SHARED_START


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_a_class_attribute_stored_by_the_class_name_is_followed(mode):
    W = RNG.standard_normal((4, 5))
    try:
        value, g = srcad.value_and_grad(by_the_class_name, mode=mode)(W, X)
        fd = numerical_grad(by_the_class_name, (W, X))
        for idx in ((0, 1), (3, 4)):
            assert g[idx] == pytest.approx(fd[idx], rel=1e-5, abs=1e-7)
    finally:
        Shared.table["W"] = SHARED_START


class Dense:
    def __init__(self):
        self.W = RNG.standard_normal((4, 5))
        self.p = {"b": np.zeros(5)}

    def forward(self, X):
        return np.tanh(X @ self.W + self.p["b"])


LAYERS = {"fc1": Dense()}
NESTED = {"l1": {"W": RNG.standard_normal((4, 5))}}
HELD = {"W": LAYERS["fc1"].W.copy(), "b": LAYERS["fc1"].p["b"].copy(),
        "N": NESTED["l1"]["W"].copy()}


def nested_loss(X):
    return np.sum(np.sin(X @ NESTED["l1"]["W"]))


def by_getattr_of_a_dicts_layer(W, X):  # (the layer's method runs as written)
    w = getattr(LAYERS["fc1"], "W")
    w[:] = W
    return np.sum(LAYERS["fc1"].forward(X))


def into_a_dict_a_dicts_layer_holds(W, X):
    b = LAYERS["fc1"].p["b"]
    b[:] = W[0]
    return np.sum(LAYERS["fc1"].forward(X))


def into_a_nested_dicts_item(W, X):
    w = NESTED["l1"]["W"]
    w[:] = W
    return nested_loss(X)


@pytest.mark.parametrize("f", [by_getattr_of_a_dicts_layer, into_a_dict_a_dicts_layer_holds,
                               into_a_nested_dicts_item], ids=lambda f: f.__name__)
@pytest.mark.parametrize("fuse", [False, True])
def test_held_through_a_modules_dict_of_layers_or_dicts(f, fuse):
    """Zeros on 5159966 (relative error 1.0) for the two layers: the holder reached through a
    module dict's item, not a constant srcad folded, and a method srcad runs as written on it
    reads the array (the nested dict's item was refused there, as a dict; now as an array,
    with the outer dict among its holders)."""
    try:
        with pytest.raises(srcad.SrcadError) as e:
            srcad.grad(f, fuse=fuse)(RNG.standard_normal((4, 5)), X)
        assert "a module global or an object holds" in str(e.value)
    finally:
        LAYERS["fc1"].W[...] = HELD["W"]
        LAYERS["fc1"].p["b"][...] = HELD["b"]
        NESTED["l1"]["W"][...] = HELD["N"]


def by_dict_get(W, X):
    w = NET.params.get("W1")
    w[...] = W
    return NET.loss(X)


def by_the_first_of_its_values(W, X):
    w = list(NET.params.values())[0]
    w[:] = W
    return NET.loss(X)


def by_next_of_an_iterator(W, X):
    w = next(iter(NET.params.values()))
    w[:] = W
    return NET.loss(X)


def through_a_shallow_copy(W, X):  # (dict() copies the dict, not the arrays it holds)
    d = dict(NET.params)
    w = d["W1"]
    w[:] = W
    return NET.loss(X)


def by_get_of_a_modules_dict(W, X):  # (a module function reads G["W1"])
    w = G.get("W1")
    w[:] = W
    return global_loss(X)


@pytest.mark.parametrize("f", [by_dict_get, by_the_first_of_its_values, by_next_of_an_iterator,
                               through_a_shallow_copy, by_get_of_a_modules_dict],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("fuse", [False, True])
def test_a_held_array_reached_through_calls_srcad_knows(f, fuse):
    """Zeros on 977a7c6 (relative error 1.0): the array reached through `.get`, `list(...)`,
    `next(iter(...))` or a shallow copy of its dict -- the same array object the layer holds."""
    _restore()
    try:
        with pytest.raises(srcad.SrcadError) as e:
            srcad.grad(f, fuse=fuse)(START["W"].copy(), X)
        assert "a module global or an object holds" in str(e.value)
    finally:
        _restore()


# ---- an array reached through a list the function builds when the code runs ----------------
# A layer library's way of loading parameters: a list of the layers' arrays gathered by a
# comprehension, `extend`, a method that returns them, `itertools.chain`, then written in
# place. Zeros on 2af95e6 (relative error 1.0; tape mode refused already): the check traced
# the written array to an item of a list it could not resolve, and took it for the
# function's own. Now an item of a list the function builds is every value put in it
# (refusals.py `_list_items`: displays, appends, copies, a user function's returned list,
# items of items), a name a loop rebinds each value it is given, and `ps[0] += t` of a
# list's array (`write_through`) a write into it.

class Param(Dense):
    def params(self):
        return [self.W, self.p["b"]]


class Tanh:
    def params(self):
        return []

    def forward(self, x):
        return np.tanh(x)


class Stack:
    def __init__(self, layers):
        self.layers = layers

    def params(self):
        out = []
        for layer in self.layers:
            out.extend(layer.params())
        return out

    def loss(self, X):
        h = X
        for layer in self.layers:
            h = layer.forward(h)
        return np.sum(h ** 2)


STACK = Stack([Param(), Tanh()])
STACK_START = [STACK.layers[0].W.copy(), STACK.layers[0].p["b"].copy()]


def _restore_stack():
    STACK.layers[0].W[...] = STACK_START[0]
    STACK.layers[0].p["b"][...] = STACK_START[1]


def by_a_nested_comprehension(W, X):
    ps = [p for layer in STACK.layers for p in layer.params()]
    ps[0][...] = W
    return STACK.loss(X)


def by_extend_in_a_loop(W, X):
    ps = []
    for layer in STACK.layers:
        ps.extend(layer.params())
    ps[0][...] = W
    return STACK.loss(X)


def by_a_comprehension_of_attributes(W, X):
    ps = [layer.W for layer in STACK.layers if hasattr(layer, "W")]
    for p, w in zip(ps, [W]):
        p[:] = w
    return STACK.loss(X)


def by_copyto_into_an_item(W, X):
    ps = [p for layer in STACK.layers for p in layer.params()]
    np.copyto(ps[0], W)
    return STACK.loss(X)


def by_augmented_items(W, X):
    ps = [p for layer in STACK.layers for p in layer.params()]
    ps[0] *= 0.0
    ps[0] += W
    return STACK.loss(X)


def by_a_local_of_an_item(W, X):
    ps = STACK.params()
    w = ps[0]
    w[...] = W
    return STACK.loss(X)


def by_chain_from_iterable(W, X):
    ps = list(itertools.chain.from_iterable(layer.params() for layer in STACK.layers))
    ps[0][...] = W
    return STACK.loss(X)


@pytest.mark.parametrize("f", [by_a_nested_comprehension, by_extend_in_a_loop,
                               by_a_comprehension_of_attributes, by_copyto_into_an_item,
                               by_augmented_items, by_a_local_of_an_item,
                               by_chain_from_iterable], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_an_array_reached_through_a_list_built_when_the_code_runs(f, mode):
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    _restore_stack()
    try:
        with pytest.raises(srcad.SrcadError) as e:
            srcad.grad(f, **options)(STACK_START[0] + 0.1, X)
    finally:
        _restore_stack()
    assert e.value.filename.endswith("test_held_array_writes.py")


def a_list_of_the_functions_own_arrays(W, X):  # (items it made: written in place, runs)
    ps = [np.zeros_like(W) for _ in range(2)]
    ps[0][...] = W
    ps[1] += W * 2.0
    return np.sum(np.tanh(X @ (ps[0] + ps[1])) ** 2)


@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_a_list_of_the_functions_own_arrays_written_in_place_runs(mode):
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    W = RNG.standard_normal((4, 5)) * 0.3
    g = srcad.grad(a_list_of_the_functions_own_arrays, **options)(W, X)
    np.testing.assert_allclose(g, numerical_grad(a_list_of_the_functions_own_arrays, (W, X)),
                               rtol=1e-5, atol=1e-6)


# ---- an object's array written in place and not read again in the call -------------------
# Python's object shows the write after the call; srcad's code dropped it, or (fused) kept
# half of it -- `ps[0] *= 0.0` ran on the object's array, `ps[0] += W` into a copy -- so the
# layer was left with zeros (found by the object-state fuzzer, seed 220, 2026-12-06,
# eighth). Refused now wherever the array is an object's (refusals.py `_held_by_an_object`),
# read again or not; a module's scratch array read back only through the name that wrote
# it runs as before (test_a_scratch_buffer_read_only_through_its_name_runs).

class Holder:
    def __init__(self):
        self.W = RNG.standard_normal((4, 5))


HOLDER = Holder()


def zeroed_then_added_unread(W, X):
    d = HOLDER.W
    d *= 0.0
    d += W
    return np.sum(X ** 2)


def items_zeroed_then_added_unread(W, X):
    ps = [h.W for h in [HOLDER] if hasattr(h, "W")]
    ps[0] *= 0.0
    ps[0] += W
    return np.sum(X ** 2)


def slice_stored_unread(W, X):
    d = HOLDER.W
    d[:] = W * 2.0
    return np.sum(X ** 2)


@pytest.mark.parametrize("f", [zeroed_then_added_unread, items_zeroed_then_added_unread,
                               slice_stored_unread], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_an_objects_array_written_and_not_read_again_is_refused(f, mode):
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    before = HOLDER.W.copy()
    try:
        with pytest.raises(srcad.SrcadError) as e:
            srcad.grad(f, wrt=(0, 1), **options)(RNG.standard_normal((4, 5)), X)
        assert e.value.filename.endswith("test_held_array_writes.py")
    finally:
        HOLDER.W = before


# A write of a value that does not depend on the differentiated arguments (session of
# 2026-12-07): `w = GC; w[...] = 3.0` then `x * GC` -- Python writes GC, which the read shows;
# srcad's code wrote a copy and read GC as built: the value 0.0 against 9.0 and a zero
# gradient, silently. Refused now where the array is read another way, as a differentiated
# write is (the scratch buffer read back only through its own name runs, as before).
GC = np.zeros(3)


def _reads_gc():
    return GC


def constant_written_read_by_a_function(x):
    w = GC
    w[...] = 3.0
    return np.sum(x * _reads_gc())


def constant_written_read_by_its_global(x):
    w = GC
    w[1:] = 2.0
    return np.sum(x * GC)


def constant_written_read_by_its_own_name(x):  # (a scratch buffer: runs)
    w = GC
    w[...] = 3.0
    return np.sum(x * w)


@pytest.mark.parametrize("f", [constant_written_read_by_a_function,
                               constant_written_read_by_its_global], ids=lambda f: f.__name__)
@pytest.mark.parametrize("fuse", [False, True])
def test_a_constant_written_into_a_held_array_read_elsewhere_is_refused(f, fuse):
    GC[...] = 0.0
    try:
        with pytest.raises(srcad.SrcadError, match="in place: Python writes that very array"):
            srcad.grad(f, fuse=fuse)(np.ones(3))
    finally:
        GC[...] = 0.0


def test_tape_mode_writes_the_held_array_as_python_does():
    GC[...] = 0.0
    try:
        value, g = srcad.value_and_grad(constant_written_read_by_a_function, mode="tape")(
            np.ones(3))
        assert value == pytest.approx(9.0)
        np.testing.assert_allclose(g, [3.0, 3.0, 3.0])
    finally:
        GC[...] = 0.0


@pytest.mark.parametrize("fuse", [False, True])
def test_a_scratch_buffer_written_with_a_constant_runs(fuse):
    value, g = srcad.value_and_grad(constant_written_read_by_its_own_name, fuse=fuse)(
        np.array([1.0, 2.0, 3.0]))
    assert value == pytest.approx(18.0)
    np.testing.assert_allclose(g, [3.0, 3.0, 3.0])
    GC[...] = 0.0


# The direct spellings -- `GC2[...] = W` of a module's array, `L.W[...] = W` of an object's,
# `net[0].W[:] = W` through an item -- name the array and give the route that runs (they said
# "assignment into something other than a local array", or spoke of a list or dict and hinted
# `dict(layer.W)`); the hint's `layer.W = W` is followed.
GC2 = np.zeros((4, 5))


class _HeldLayer:
    def __init__(self):
        self.W = np.zeros((4, 5))

    def forward(self, X):
        return np.tanh(X @ self.W)


HELD_LAYER = _HeldLayer()
HELD_ITEMS = [HELD_LAYER]


def into_a_modules_array_by_its_name(W, X):
    GC2[...] = W
    return np.sum(np.tanh(X @ GC2))


def into_an_objects_array(W, X):
    HELD_LAYER.W[...] = W
    return np.sum(HELD_LAYER.forward(X))


def into_an_items_array(W, X):
    HELD_ITEMS[0].W[:] = W
    return np.sum(HELD_ITEMS[0].forward(X))


def stored_whole_on_the_item(W, X):  # (the hint's route)
    HELD_ITEMS[0].W = W
    return np.sum(HELD_ITEMS[0].forward(X))


@pytest.mark.parametrize("f,phrase,route", [
    (into_a_modules_array_by_its_name, "the module global `GC2`", "pass the array as an"),
    (into_an_objects_array, "an object's attribute `HELD_LAYER.W`", "`HELD_LAYER.W = v`"),
    (into_an_items_array, "an object's attribute `HELD_ITEMS[0].W`", "`HELD_ITEMS[0].W = v`"),
], ids=["a_modules_array", "an_objects_array", "an_items_array"])
@pytest.mark.parametrize("mode", ["source", "fused"])
def test_direct_writes_into_held_arrays_say_so(f, phrase, route, mode):
    options = {"fuse": True} if mode == "fused" else {}
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(f, **options)(RNG.standard_normal((4, 5)), X)
    assert "writes in place into an array" in str(e.value) and phrase in str(e.value)
    assert route in e.value.hint
    assert e.value.lineno == f.__code__.co_firstlineno + 1


@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_the_hints_route_runs(mode):
    start = HELD_LAYER.W
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    W = RNG.standard_normal((4, 5))
    try:
        value, g = srcad.value_and_grad(stored_whole_on_the_item, **options)(W, X)
        HELD_LAYER.W = start
        assert value == pytest.approx(stored_whole_on_the_item(W.copy(), X), rel=1e-12)
        HELD_LAYER.W = start
        np.testing.assert_allclose(g, numerical_grad(stored_whole_on_the_item, (W, X)),
                                   rtol=1e-5, atol=1e-7)
    finally:
        HELD_LAYER.W = start
