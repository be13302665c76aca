"""Import statements inside a differentiated function (srcad/frontend/parse.py `Import`):
Python runs them at every call, binding a local name to a module or a module's attribute;
srcad reads the names as the import gives them at each call (guarded like globals), in source
and tape mode, reverse, forward and second order. Relative imports and ``import *`` are
refused at their line (``import *`` is a SyntaxError in a function).
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

X = np.array([0.3, -0.8, 0.5, 1.1])
MODES = [{}, {"mode": "tape"}]
MODE_IDS = ["source", "tape"]


def library_imports(x):
    import math

    import numpy.linalg
    from numpy import tanh as th
    h = th(x) * math.pi
    return np.sum(h * h) + math.sqrt(2.0) * numpy.linalg.norm(x)


def library_imports_at_module_level(x):
    h = np.tanh(x) * np.pi
    return np.sum(h * h) + np.sqrt(2.0) * np.linalg.norm(x)


def import_in_a_branch_and_a_nested_def(x):
    if x.shape[0] > 2:
        import math

    def scaled(v):
        return math.sin(v) * 2.0

    return scaled(x[0]) + np.sum(x * x)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_library_imports_read_as_the_call_reads_them(mode):
    want = srcad.grad(library_imports_at_module_level)(X)
    np.testing.assert_allclose(srcad.grad(library_imports, **mode)(X), want, rtol=1e-12)
    check_grads(import_in_a_branch_and_a_nested_def, (X,), **mode)


def test_forward_and_second_order():
    check_jvp(library_imports, (X,), rng=0)
    hvp = srcad.jvp(srcad.grad(library_imports), (X,), (np.ones(4),))[1]
    want = srcad.jvp(srcad.grad(library_imports_at_module_level), (X,), (np.ones(4),))[1]
    np.testing.assert_allclose(hvp, want, rtol=1e-10)


def test_source_and_tape_agree_bit_for_bit():
    np.testing.assert_array_equal(srcad.grad(library_imports)(X),
                                  srcad.grad(library_imports, mode="tape")(X))


def test_generated_code_stays_readable():
    src = srcad.source(srcad.grad(library_imports))
    assert "import math" not in src and "__import__" not in src
    assert "np.tanh(x)" in src  # `th` is numpy's tanh: its row


# --- a user's module: what the import finds at each call --------------------------------------
_KNOBS = "SCALE = 2.0\n"
_OTHER = "SCALE = 5.0\n"
_USER = textwrap.dedent("""
    import numpy as np

    def from_import(x):
        from srcad_knobs import SCALE
        return np.sum(x * x) * SCALE

    def module_import(x):
        import srcad_knobs as k
        return np.sum(np.sin(x)) * k.SCALE
""")


@pytest.fixture
def user_modules(tmp_path, monkeypatch):
    (tmp_path / "srcad_knobs.py").write_text(_KNOBS)
    (tmp_path / "srcad_knobs_other.py").write_text(_OTHER)
    (tmp_path / "srcad_user.py").write_text(_USER)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("srcad_knobs", "srcad_knobs_other", "srcad_user"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    user = importlib.import_module("srcad_user")
    yield user, importlib.import_module("srcad_knobs")
    for name in ("srcad_knobs", "srcad_knobs_other", "srcad_user"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_a_changed_attribute_is_read_at_the_next_call(user_modules, mode):
    user, knobs = user_modules
    g1, g2 = srcad.grad(user.from_import, **mode), srcad.grad(user.module_import, **mode)
    np.testing.assert_allclose(g1(X), 2 * X * 2.0, rtol=1e-12)
    np.testing.assert_allclose(g2(X), np.cos(X) * 2.0, rtol=1e-12)
    knobs.SCALE = 3.0
    np.testing.assert_allclose(g1(X), 2 * X * 3.0, rtol=1e-12)
    np.testing.assert_allclose(g2(X), np.cos(X) * 3.0, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_another_module_in_sys_modules_is_read_at_the_next_call(user_modules, mode):
    user, _ = user_modules
    g = srcad.grad(user.from_import, **mode)
    np.testing.assert_allclose(g(X), 2 * X * 2.0, rtol=1e-12)
    sys.modules["srcad_knobs"] = importlib.import_module("srcad_knobs_other")
    np.testing.assert_allclose(g(X), 2 * X * 5.0, rtol=1e-12)


# --- refused, at the line -----------------------------------------------------------------------
def relative(x):
    from . import fixtures_hints
    return np.sum(x) * fixtures_hints.SCALE


def rebound(x):
    import math
    math = 2.0  # noqa: F811
    return np.sum(x) * math


def missing(x):
    import srcad_no_such_module
    return np.sum(x) * srcad_no_such_module.SCALE


@pytest.mark.parametrize("fn, says", [(relative, "relative import"), (rebound, "assigned too"),
                                      (missing, "ModuleNotFoundError")],
                         ids=["relative", "rebound", "missing"])
def test_refused_at_the_line(fn, says):
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(fn)(X)
    err = e.value
    assert says in str(err), str(err)
    assert err.filename == __file__, err.filename
    first = fn.__code__.co_firstlineno
    assert err.lineno == first + 1 + (fn is rebound and "assigned" not in says), err.lineno
