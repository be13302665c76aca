"""Refusals found by an eighteenth probe of the front door (session of 2026-12-05, sixth): a
small framework's ``Parameter`` objects, whose array is their ``.data`` -- as in most
numpy-from-scratch libraries -- reached through a local name and given new values there:

1. ``p = layer.W`` then ``p.data = W`` (and ``pw, pb = layer.W, layer.b``, ``p =
   PARAMS[0]``), the layer then called: refused before ("`p.data = ...` changes an array in
   place": any store to `.data`, `.shape`, `.dtype` or `.strides` through a name whose object
   was not known when the function is compiled was taken for numpy's in-place
   reinterpretation of an array), now stored as written where the name holds a user object,
   for a module whose ``__setattr__`` registers parameters too;
2. the same store where the name holds a numpy array when the call runs (``z = y`` then
   ``z.shape = (6,)``, ``p.data = x`` of a list's array): still refused, now where the store
   runs (runtime_python.attribute_stored), with the same message, file and line;
3. parameters installed into a module's model by a loop before calling it -- ``for layer, W
   in zip(model.layers, Ws): layer.W = W``, ``for i, layer in enumerate(model.layers)``,
   ``for i, (layer, p) in enumerate(zip(...))``, ``for p, v in zip(PARAMS, vals): p.data =
   v``: refused before ("`.W` is read through the object here, but ... stores in it a value
   that depends on the arguments": the loop was an index loop, its `layer` no object known
   here), now written out once per object, as ``for layer in model.layers`` is
   (frontend/loops.py `objects_walked`); a sequence shorter than the objects (zip would stop
   sooner) is refused where the loop starts; the list's items are guarded (a layer appended
   between calls makes srcad build the function again). Left refused: the same loop inside
   a method of the model (``model.set_params(Ws)``: a store another function reads back),
   ``zip(model.parameters(), vals)`` (a list a call makes), a comprehension filtering the
   layers;
4. **a silent wrong gradient, present before this session**: a @property of a layer the
   module holds -- ``L.weights = W`` whose setter stores ``self._W = v``, or ``L._W = W``
   read back as ``L.weights`` -- was stored or read as a plain attribute named `weights`:
   the value never reached the reads of ``self._W`` (or came back as a constant), and the
   gradient was zeros (``[[0., 0.], ...]`` against central differences of ~1). Now the
   setter and the getter are called as Python calls them (normalize.py
   `stored_by_descriptor`, expressions.py `property_getter`); a user's descriptor class
   there is refused; a store through a name whose object is not known when compiling is
   checked where it runs (runtime_python.attribute_stored). The object-state fuzzer
   (tests/fuzz_object_state.py) now sets weights through a property too: 5 of its 120
   default programs differ on the code before, none now;
5. **silent wrong gradients, present before this session**: a layer's attribute set by a
   route srcad does not follow -- ``L.__dict__["_W"] = W``, ``L.__dict__.update(...)``,
   ``object.__setattr__(L, "_W", W)``, ``setattr(L, k, W)`` with `k` a loop's (``for k, v in
   params.items(): setattr(model, k, v)``), ``L.__dict__["_W"]`` read after ``L._W = W`` --
   then read by L's methods: zeros. Now refused where the value is read back (a store
   through a constant object into it, or into its `__dict__`, makes what is read from it
   depend on the value: analysis/refusals.py `_holders`, `_dict_read`), with a hint naming
   the routes; where nothing reads it back the store runs as written, and tape mode leaves
   the value, not its wrapper, on the object (transformed.py `_unwrap_attribute_state`).
   The object-state fuzzer draws these routes: 8 of its 120 default programs differ on the
   code before (zeros; a tape Tensor left on a layer), none now;
6. **a silent wrong gradient (and in tape mode a wrong value), present before this
   session**: ``global GW; GW = W`` and then a module function that reads ``GW`` (itself,
   or through a function it calls): srcad gave it the value ``GW`` had when the call began
   -- zeros, and in tape mode the old value's result. Now refused at the call (attrstate.py
   `_callees_leave_alone`, which refused a callee *assigning* the global already); a read
   in the function itself is followed, as before. The object-state fuzzer draws a ``global
   GH`` read back here or by ``read_gh()``: 8 of its 120 default programs differ before,
   none now;
7. **a silent wrong gradient, present before this session**: ``K.W = W`` (or
   ``Base.scale = s``) into a class whose instance -- holding no ``W`` of its own -- then
   reads ``self.W``: zeros in source mode (tape mode was right). Now refused at the read, as
   a store into the instance itself read back elsewhere is (analysis/refusals.py
   `_same_holder`); an instance with its own ``W`` does not see the store, and runs;
8. **silent wrong gradients, present before this session**: numpy's in-place writers into
   an array the function holds by no name of its own -- ``np.copyto(L.W, W)``, ``np.put``,
   ``np.add.at(L.W, i, v)``, ``L.W.fill(s)``, ``np.copyto(GLOBAL, W)`` -- then read by a
   method or a module function: zeros in source mode (``.fill`` in tape mode too). Now
   refused at the write (analysis/refusals.py `_array_written`), as tape mode refused
   most of them already; into a local array they are a store srcad follows, as before;
9. a module's object whose class answers reads by ``__getattr__`` -- **zeros, present
   before this session**, where the function stored into what the hook reads
   (``M._params["W"] = W`` or ``M._params = {...}``, then ``M(x)`` reading ``self.W``): now
   refused (a store into such an object makes its methods' reads depend on the value,
   analysis/refusals.py `_reads_by_hook`); a wrapper delegating to a wrapped layer
   (``WR.apply(x)`` found by ``getattr(self.inner, k)``) crashed inside srcad
   (``'Inner' object has no attribute '__name__'``) and now runs the wrapped layer's method.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

from tests.test_probe14_forms import MODES, _check

RNG = np.random.default_rng(18)


def _r(*shape):
    return RNG.standard_normal(shape) * 0.5


class Parameter:
    def __init__(self, data):
        self.data = data


class Linear:
    def __init__(self, n_in, n_out):
        self.W = Parameter(_r(n_in, n_out))
        self.b = Parameter(np.zeros(n_out))

    def __call__(self, x):
        return np.tanh(x @ self.W.data + self.b.data)


class Module:
    """A PyTorch-like module: attribute stores of Parameters register them."""

    def __init__(self):
        object.__setattr__(self, "_params", {})

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self._params[name] = value
        object.__setattr__(self, name, value)


class Registered(Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.W = Parameter(_r(n_in, n_out))

    def __call__(self, x):
        return x @ self.W.data


LAYER = Linear(3, 2)
PARAMS = [LAYER.W, LAYER.b]
REG = Registered(3, 2)


# ---- 1. p.data = v of a user object -----------------------------------------------------------
def data_through_a_local(W, x):
    p = LAYER.W
    p.data = W
    return np.sum(LAYER(x) ** 2)


def data_through_unpacked_locals(W, b, x):
    pw, pb = LAYER.W, LAYER.b
    pw.data = W
    pb.data = b * 2.0
    return np.sum(LAYER(x) ** 2)


def data_through_a_list_item(W, x):
    p = PARAMS[0]
    p.data = W
    return np.sum(LAYER(x) ** 2)


def data_of_a_registered_parameter(W, x):
    p = REG.W
    p.data = W
    return np.sum(np.sin(REG(x)))


def test_data_stored_through_a_local_name():
    W = _r(3, 2)
    _check(data_through_a_local, (W, _r(4, 3)))
    assert LAYER.W.data is W  # (left where Python leaves it: the last call stored W)


def test_data_stored_through_unpacked_locals():
    _check(data_through_unpacked_locals, (_r(3, 2), _r(2), _r(4, 3)), wrt=(0, 1))


def test_data_stored_through_a_list_item():
    _check(data_through_a_list_item, (_r(3, 2), _r(4, 3)))


def test_data_of_a_module_that_registers_parameters():
    _check(data_of_a_registered_parameter, (_r(3, 2), _r(4, 3)))
    assert REG._params["W"] is REG.W


# ---- 2. the same store on a numpy array: refused where it runs --------------------------------
def shape_set_through_an_alias(x):
    y = x * 2.0
    z = y
    z.shape = (x.size,)
    return np.sum(z ** 2)


def data_set_on_a_list_item(x, arrays):
    for p in arrays:
        p.data = x
    return np.sum(x ** 2)


@pytest.mark.parametrize("mode,fuse", [m for m in MODES if m[0] == "source"])
@pytest.mark.parametrize("fn,args,spelled", [
    (shape_set_through_an_alias, lambda: (_r(2, 3),), "z.shape"),
    (data_set_on_a_list_item, lambda: (_r(3), [np.zeros(3)]), "p.data")])
def test_an_arrays_attribute_stored_is_refused_where_it_runs(mode, fuse, fn, args, spelled):
    with pytest.raises(srcad.SrcadError, match="changes an array in place") as e:
        srcad.grad(fn, mode=mode, fuse=fuse)(*args())
    assert f"`{spelled} = ...`" in str(e.value)
    assert "test_probe18_forms.py" in str(e.value)


# ---- 3. a loop installing parameters into a module's model ------------------------------------
class Dense:
    def __init__(self, n_in, n_out):
        self.W = _r(n_in, n_out)
        self.b = np.zeros(n_out)

    def forward(self, x):
        return np.tanh(x @ self.W + self.b)


class Model:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x


MODEL = Model([Dense(3, 4), Dense(4, 2)])
DENSE = [MODEL.layers[0], MODEL.layers[1]]


def install_by_zip(Ws, x):
    for layer, W in zip(MODEL.layers, Ws):
        layer.W = W
    return np.sum(MODEL.forward(x) ** 2)


def install_by_enumerate(Ws, x):
    for i, layer in enumerate(MODEL.layers):
        layer.W = Ws[i] * (i + 1.0)
    return np.sum(MODEL.forward(x) ** 2)


def install_dicts_by_enumerate_zip(params, x):
    for i, (layer, p) in enumerate(zip(DENSE, params)):
        layer.W = p["W"]
        layer.b = p["b"] + i
    return np.sum(np.sin(MODEL.forward(x)))


def install_data_by_zip(vals, x):
    for p, v in zip(PARAMS, vals):
        p.data = v
    return np.sum(LAYER(x) ** 2)


def _Ws():
    return [_r(3, 4), _r(4, 2)]


def test_parameters_installed_by_zip_over_the_models_layers():
    _check(install_by_zip, (_Ws(), _r(5, 3)))


def test_parameters_installed_by_enumerate_over_the_models_layers():
    _check(install_by_enumerate, (_Ws(), _r(5, 3)))


def test_parameter_dicts_installed_by_enumerate_of_zip():
    params = [{"W": _r(3, 4), "b": _r(4)}, {"W": _r(4, 2), "b": _r(2)}]
    _check(install_dicts_by_enumerate_zip, (params, _r(5, 3)))


def test_data_installed_by_zip_over_a_list_of_parameters():
    _check(install_data_by_zip, ([_r(3, 2), _r(2)], _r(4, 3)))


def test_a_longer_sequence_stops_at_the_objects_as_zip_does():
    Ws = _Ws() + [_r(2, 2)]
    _check(install_by_zip, (Ws, _r(5, 3)))


@pytest.mark.parametrize("mode,fuse", [m for m in MODES if m[0] == "source"])
def test_a_shorter_sequence_is_refused_where_the_loop_starts(mode, fuse):
    with pytest.raises(srcad.SrcadError, match="zip would stop sooner"):
        srcad.grad(install_by_zip, mode=mode, fuse=fuse)([_r(3, 4)], _r(5, 3))


def test_a_shorter_sequence_in_tape_mode_stops_as_zip_does():
    MODEL.layers[1].W = _r(4, 2)  # (the layer the loop leaves alone: a constant)
    args = ([_r(3, 4)], _r(5, 3))
    v, g = srcad.value_and_grad(install_by_zip, mode="tape")(*args)
    assert v == install_by_zip(*args)
    assert np.allclose(g[0], numerical_grad(install_by_zip, args, wrt=0)[0], atol=1e-5)


def test_a_layer_added_between_calls_is_walked_too():
    model = Model([Dense(3, 3), Dense(3, 3)])

    def loss(Ws, x):
        for layer, W in zip(model.layers, Ws):
            layer.W = W
        return np.sum(model.forward(x) ** 2)

    g = srcad.grad(loss)
    Ws, x = [_r(3, 3) for _ in range(3)], _r(4, 3)
    assert not np.any(g(Ws, x)[2])  # (two layers: the third W unused)
    model.layers.append(Dense(3, 3))
    got = g(Ws, x)
    assert np.any(got[2])  # (the third layer now reads it)
    num = numerical_grad(loss, (Ws, x), wrt=0)
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(got, num))


# ---- 4. properties and descriptors of a layer the module holds ---------------------------------
class Prop:
    def __init__(self, W):
        self._W = W

    @property
    def weights(self):
        return self._W

    @weights.setter
    def weights(self, v):
        self._W = v * 2.0

    def __call__(self, x):
        return np.tanh(x @ self._W)

    def load(self, W):
        self.weights = W

    def forward_prop(self, x):
        return np.tanh(x @ self.weights)


class Slotted:
    __slots__ = ("W",)

    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.sin(x @ self.W)


class Clamp:
    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, objtype=None):
        return getattr(obj, self.name)

    def __set__(self, obj, v):
        setattr(obj, self.name, np.clip(v, -1.0, 1.0))


class Clamped:
    W = Clamp()

    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return x @ self._W


PROP = Prop(_r(3, 2))
PROPS = [Prop(_r(3, 2)), Prop(_r(3, 2))]
SLOTTED = Slotted(_r(3, 2))
CLAMPED = Clamped(_r(3, 2))


def set_by_a_property(W, x):
    PROP.weights = W
    return np.sum(PROP(x) ** 2)


def read_by_a_property(W, x):
    PROP._W = W
    return np.sum(x @ PROP.weights) + np.sum(PROP.forward_prop(x))


def set_by_a_property_in_a_loop(W, x):
    for layer in PROPS:
        layer.weights = W
    return np.sum(PROPS[0](x) * PROPS[1](x))


def set_by_a_property_in_a_method(W, x):
    PROP.load(W)
    return np.sum(PROP.forward_prop(x) ** 2)


def set_on_slots(W, x):
    SLOTTED.W = W
    return np.sum(SLOTTED(x))


def set_by_a_descriptor(W, x):
    CLAMPED.W = W
    return np.sum(CLAMPED(x) ** 2)


@pytest.mark.parametrize("fn", [set_by_a_property, read_by_a_property,
                                set_by_a_property_in_a_loop, set_by_a_property_in_a_method,
                                set_on_slots])
def test_a_property_of_a_modules_layer_is_its_setter_and_getter(fn):
    _check(fn, (_r(3, 2), _r(4, 3)))


@pytest.mark.parametrize("mode,fuse", MODES)
def test_a_descriptor_class_is_refused(mode, fuse):
    with pytest.raises(srcad.SrcadError, match="descriptor .Clamp."):
        srcad.grad(set_by_a_descriptor, mode=mode, fuse=fuse)(_r(3, 2), _r(4, 3))


def set_by_a_property_of_an_item_chosen_when_it_runs(W, x):
    layer = PROPS[int(x.shape[0] > 10)]
    layer.weights = W
    return np.sum(PROPS[0](x) ** 2)


@pytest.mark.parametrize("mode,fuse", [m for m in MODES if m[0] == "source"])
def test_a_property_set_through_an_object_not_known_here_is_refused(mode, fuse):
    # (a refusal, never zeros: here the read of `self._W` the setter stored is refused first)
    with pytest.raises(srcad.SrcadError):
        srcad.grad(set_by_a_property_of_an_item_chosen_when_it_runs, mode=mode, fuse=fuse)(
            _r(3, 2), _r(4, 3))


def test_the_check_where_a_store_runs():
    from srcad.runtime_python import attribute_stored
    for obj, attr in ((PROP, "_W"), (SLOTTED, "W"), (np.zeros(3), "flags_x")):
        attribute_stored(obj, attr, "p")  # (a plain attribute, a slot: stored as written)
    for obj, attr, says in ((PROP, "weights", "a property"), (CLAMPED, "W", "a descriptor"),
                            (np.zeros(3), "data", "changes an array in place"),
                            (np.float64(1.0), "shape", "changes an array in place")):
        with pytest.raises(srcad.SrcadError, match=says):
            attribute_stored(obj, attr, "p")


# ---- 5. an attribute set by a route srcad does not follow: refused where it is read ---------
class Held:
    def __init__(self):
        self._W = _r(3, 2)

    def __call__(self, x):
        return np.tanh(x @ self._W)


HELD = Held()


def stored_into_its_dict(W, x):
    HELD.__dict__["_W"] = W
    return np.sum(HELD(x) ** 2)


def updated_in_its_dict(W, x):
    HELD.__dict__.update({"_W": W})
    return np.sum(HELD(x) ** 2)


def stored_by_object_setattr(W, x):
    object.__setattr__(HELD, "_W", W)
    return np.sum(HELD(x) ** 2)


def stored_by_setattr_of_a_loops_name(W, x):
    for name, value in {"_W": W}.items():
        setattr(HELD, name, value)
    return np.sum(HELD(x) ** 2)


def read_from_its_dict(W, x):
    HELD._W = W
    return np.sum(HELD.__dict__["_W"] ** 2)


def stored_by_setattr_not_read(W, x):
    for name in ["_W"]:
        setattr(HELD, name, W * 2.0)
    return np.sum(np.sin(x @ W))


@pytest.mark.parametrize("mode,fuse", MODES)
@pytest.mark.parametrize("fn", [stored_into_its_dict, updated_in_its_dict,
                                stored_by_object_setattr, stored_by_setattr_of_a_loops_name,
                                read_from_its_dict])
def test_an_attribute_set_where_srcad_cannot_follow_is_refused_where_read(fn, mode, fuse):
    with pytest.raises(srcad.SrcadError, match="no derivative rule"):
        srcad.grad(fn, mode=mode, fuse=fuse)(_r(3, 2), _r(4, 3))


def test_the_hint_names_the_routes():
    with pytest.raises(srcad.SrcadError, match="object.__setattr__") as e:
        srcad.grad(stored_by_object_setattr)(_r(3, 2), _r(4, 3))
    assert "`obj.attr = v`" in str(e.value)


def test_an_attribute_set_so_and_not_read_back_runs_and_holds_the_value():
    W, x = _r(3, 2), _r(4, 3)
    _check(stored_by_setattr_not_read, (W, x))
    for mode in ("source", "tape"):
        srcad.grad(stored_by_setattr_not_read, mode=mode)(W, x)
        assert type(HELD._W) is np.ndarray and np.array_equal(HELD._W, W * 2.0)


# ---- 6. a global the function assigns, read by a function it calls: refused ---------------
GW = np.zeros((3, 2))


def _reads_gw(x):
    return np.sin(x @ GW)


def _reads_through(x):
    return _reads_gw(x) * 2.0


def assigns_then_a_callee_reads(W, x):
    global GW
    GW = W
    return np.sum(_reads_gw(x))


def assigns_then_a_callees_callee_reads(W, x):
    global GW
    GW = W * 0.5
    return np.sum(_reads_through(x))


def assigns_then_reads_itself(W, x):
    global GW
    GW = W * 2.0
    return np.sum(np.sin(x @ GW))


@pytest.mark.parametrize("mode,fuse", MODES)
@pytest.mark.parametrize("fn", [assigns_then_a_callee_reads, assigns_then_a_callees_callee_reads])
def test_a_global_assigned_then_read_by_a_callee_is_refused(fn, mode, fuse):
    with pytest.raises(srcad.SrcadError, match="reads the global `GW`, which .* assigns"):
        srcad.grad(fn, mode=mode, fuse=fuse)(_r(3, 2), _r(4, 3))


def test_a_global_assigned_then_read_by_the_function_itself():
    _check(assigns_then_reads_itself, (_r(3, 2), _r(4, 3)))


# ---- 7. a class attribute stored, read through an instance ---------------------------------
class ClassHeld:
    W = np.zeros((3, 2))

    def __call__(self, x):
        return np.tanh(x @ self.W)


class Scaled:
    scale = 1.0

    def __call__(self, x):
        return x * self.scale


class SubScaled(Scaled):
    pass


class OwnW(ClassHeld):
    def __init__(self):
        self.W = np.ones((3, 2)) * 0.5


CLASS_HELD, SUB_SCALED, OWN_W = ClassHeld(), SubScaled(), OwnW()


def class_attribute_read_through_an_instance(W, x):
    ClassHeld.W = W
    return np.sum(CLASS_HELD(x) ** 2)


def base_class_attribute_read_through_a_subclass(s, x):
    Scaled.scale = s
    return np.sum(SUB_SCALED(x))


def class_attribute_an_instance_shadows(W, x):
    ClassHeld.W = W
    return np.sum(OWN_W(x) ** 2) + np.sum(W * 0.0)


@pytest.mark.parametrize("mode,fuse", MODES)
@pytest.mark.parametrize("fn,args", [
    (class_attribute_read_through_an_instance, lambda: (_r(3, 2), _r(4, 3))),
    (base_class_attribute_read_through_a_subclass, lambda: (1.5, _r(4, 3)))])
def test_a_class_attribute_stored_and_read_through_an_instance_is_refused(fn, args, mode,
                                                                          fuse):
    with pytest.raises(srcad.SrcadError, match="is read through the object here"):
        srcad.grad(fn, mode=mode, fuse=fuse)(*args())


def test_a_class_attribute_an_instance_shadows_is_not_read():
    _check(class_attribute_an_instance_shadows, (_r(3, 2), _r(4, 3)))


# ---- 8. numpy's in-place writers into an array the function does not hold -------------------
class Buffered:
    def __init__(self):
        self.W = np.zeros((3, 2))

    def __call__(self, x):
        return np.tanh(x @ self.W)


BUFFERED = Buffered()
BUFFER = np.zeros((3, 2))


def _reads_buffer(x):
    return np.sin(x @ BUFFER)


def copied_into_an_objects_array(W, x):
    np.copyto(BUFFERED.W, W)
    return np.sum(BUFFERED(x) ** 2)


def put_into_an_objects_array(W, x):
    np.put(BUFFERED.W, [0, 1], W[0])
    return np.sum(BUFFERED(x) ** 2)


def added_at_into_an_objects_array(W, x):
    np.add.at(BUFFERED.W, [0], W[0])
    return np.sum(BUFFERED(x) ** 2)


def filled_into_an_objects_array(W, x):
    BUFFERED.W.fill(np.sum(W))
    return np.sum(BUFFERED(x) ** 2)


def copied_into_a_modules_array(W, x):
    np.copyto(BUFFER, W)
    return np.sum(_reads_buffer(x))


def copied_into_a_local_array(W, x):
    w = np.zeros((3, 2))
    np.copyto(w, W * 2.0)
    return np.sum(np.tanh(x @ w))


@pytest.mark.parametrize("mode,fuse", MODES)
@pytest.mark.parametrize("fn", [copied_into_an_objects_array, put_into_an_objects_array,
                                added_at_into_an_objects_array, filled_into_an_objects_array,
                                copied_into_a_modules_array])
def test_an_in_place_writer_into_an_array_not_held_here_is_refused(fn, mode, fuse):
    with pytest.raises(srcad.SrcadError, match="writes a value that depends on the arguments"):
        srcad.grad(fn, mode=mode, fuse=fuse)(_r(3, 2), _r(4, 3))


def test_an_in_place_writer_into_a_local_array_is_followed():
    _check(copied_into_a_local_array, (_r(3, 2), _r(4, 3)))


# ---- 9. a module's object that answers reads by __getattr__ ----------------------------------
class Hooked:
    def __init__(self):
        self._params = {"W": np.zeros((3, 2))}

    def __getattr__(self, k):
        p = self.__dict__.get("_params", {})
        if k in p:
            return p[k]
        raise AttributeError(k)

    def __call__(self, x):
        return np.tanh(x @ self.W)


class Wrapper:
    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, k):
        return getattr(self.inner, k)


class Wrapped:
    def __init__(self):
        self.W = np.zeros((3, 2))

    def apply(self, x):
        return np.sin(x @ self.W)


HOOKED = Hooked()
WRAPPED = Wrapped()
WRAPPER = Wrapper(WRAPPED)


def stored_into_what_the_hook_reads(W, x):
    HOOKED._params["W"] = W
    return np.sum(HOOKED(x) ** 2)


def stored_whole_where_the_hook_reads(W, x):
    HOOKED._params = {"W": W}
    return np.sum(HOOKED(x) ** 2)


def a_method_found_by_a_wrappers_hook(W, x):
    WRAPPED.W = W
    return np.sum(WRAPPER.apply(x))


@pytest.mark.parametrize("mode,fuse", MODES)
@pytest.mark.parametrize("fn", [stored_into_what_the_hook_reads,
                                stored_whole_where_the_hook_reads])
def test_a_store_into_an_object_read_by_its_getattr_is_refused(fn, mode, fuse):
    with pytest.raises(srcad.SrcadError, match="no derivative rule"):
        srcad.grad(fn, mode=mode, fuse=fuse)(_r(3, 2), _r(4, 3))


def test_a_method_found_by_a_wrappers_getattr():
    _check(a_method_found_by_a_wrappers_hook, (_r(3, 2), _r(4, 3)))
