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
   runs (runtime_python.attribute_stored), with the same message, file and line.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad

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
