"""ufunc methods (srcad/ops/ufunc_methods.py): found by (ufunc, method name), in both modes,
with numpy's axis-0 default; a method assigned over (numpy 2's ufuncs take attributes) is
read again at the next call, as Python reads it."""

from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads

_SRC = '''
import numpy as np


def reduce_default_axis(x):
    return np.sum(np.add.reduce(x) * np.arange(1.0, 5.0))
'''


@pytest.fixture()
def mod(tmp_path):
    path = tmp_path / "ufunc_methods_case.py"
    path.write_text(textwrap.dedent(_SRC))
    spec = importlib.util.spec_from_file_location("ufunc_methods_case", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_reduce_runs_along_axis_0(mod, mode):
    x = np.random.default_rng(0).standard_normal((3, 4))
    g = srcad.grad(mod.reduce_default_axis, mode=mode)(x)
    np.testing.assert_array_equal(g, np.broadcast_to(np.arange(1.0, 5.0), (3, 4)))
    check_grads(mod.reduce_default_axis, (x,), mode=mode)


def test_second_call_does_no_parsing_or_codegen(mod, monkeypatch):
    """np.add.reduce is a new object at each access: the guard is on nothing having been
    assigned over it (numpy 2's ufuncs take attributes), not on its identity."""
    from srcad import transformed

    x = np.random.default_rng(1).standard_normal((3, 4))
    g = srcad.grad(mod.reduce_default_axis)
    first = g(x)
    calls = []
    monkeypatch.setattr(transformed, "build", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(transformed, "normalize", lambda *a, **k: calls.append(a))
    np.testing.assert_array_equal(g(x), first)
    assert calls == []
