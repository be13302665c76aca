"""numpy's in-place writers -- np.put, np.copyto, np.fill_diagonal -- into a local array are
the subscript assignments numpy performs (frontend/pylower.py), differentiated copy-on-write
like ``x[i] = v``, with the array's views followed; tape mode writes on the tape and agrees
bit for bit. Checked against central differences (and torch's index_put for put)."""

from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest
import torch

import srcad
from srcad.testing import check_grads

_SRC = '''
import numpy as np


def put(x):
    y = x.copy()
    np.put(y, [0, 2], x[1:3] * 2.0)
    return np.sum(y * y)


def put_repeated_wrap(x):
    y = x * 0.5
    np.put(y, [1, 5, -1, 1], np.tanh(x[:4]), mode='wrap')
    return np.sum(y * np.arange(4.0))


def put_clip_2d(x):
    y = np.outer(x, x)
    np.put(y, np.array([0, 4, 100]), np.sin(x[:3]), 'clip')
    return np.sum(y ** 2)


def copyto(x):
    y = np.ones_like(x) * 2.0
    np.copyto(y, np.cos(x[0]))
    return np.sum(np.sin(y) * x)


def copyto_where(x):
    y = x * 3.0
    np.copyto(y, x ** 2, where=x > 0.5)
    return np.sum(y * y)


def fill_diagonal(x):
    m = np.outer(x, x)
    np.fill_diagonal(m, x * 5.0)
    return np.sum(np.sin(m))


def fill_diagonal_wrap(x):
    m = np.outer(np.concatenate([x, x]), x)
    np.fill_diagonal(m, np.sum(x), wrap=True)
    return np.sum(np.sin(m))


def fill_diagonal_view(x):
    m = np.outer(x, x)
    r = m[0]
    np.fill_diagonal(m, 0.0)
    return np.sum(r * m)


def put_into_plain_array(x):
    y = np.zeros(4)
    np.put(y, [1, 2], x[:2])
    return np.sum(y * y)
'''

NAMES = ["put", "put_repeated_wrap", "put_clip_2d", "copyto", "copyto_where",
         "fill_diagonal", "fill_diagonal_wrap", "fill_diagonal_view"]


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("inplace_writers") / "inplace_writers_case.py"
    path.write_text(textwrap.dedent(_SRC))
    spec = importlib.util.spec_from_file_location("inplace_writers_case", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def _x():
    return np.random.default_rng(7).uniform(0.1, 1.0, 4)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_gradient(mod, name, mode):
    check_grads(getattr(mod, name), (_x(),), mode=mode)


@pytest.mark.parametrize("name", NAMES)
def test_tape_is_bitwise_source(mod, name):
    fn = getattr(mod, name)
    s = srcad.value_and_grad(fn)(_x())
    t = srcad.value_and_grad(fn, mode="tape")(_x())
    assert np.array_equal(s[0], t[0]) and np.array_equal(s[1], t[1])


def test_into_an_array_the_function_made(mod):
    """The write into np.zeros(4): both modes differentiate it (the tape holds an array the
    function made as a tape value), bit for bit alike."""
    check_grads(mod.put_into_plain_array, (_x(),))
    check_grads(mod.put_into_plain_array, (_x(),), mode="tape")
    s = srcad.value_and_grad(mod.put_into_plain_array)(_x())
    t = srcad.value_and_grad(mod.put_into_plain_array, mode="tape")(_x())
    assert np.array_equal(s[1], t[1])


def test_put_against_torch(mod):
    x = _x()
    t = torch.tensor(x, requires_grad=True)
    y = t * 0.5
    # np.put(y, [1, 5, -1, 1], tanh(x[:4]), mode='wrap'): positions 1, 1, 3, 1 (last wins)
    y = y.index_put((torch.tensor([3, 1]),), torch.tanh(t[[2, 3]]))
    (y * torch.arange(4.0, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(srcad.grad(mod.put_repeated_wrap)(x), t.grad.numpy(),
                               rtol=1e-12)
