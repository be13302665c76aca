"""The census of numpy's public surface (srcad/analysis/census.py): complete, consistent with the
op table, and honest about each class -- a sample of each is run through srcad.grad."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import srcad
from srcad.analysis import census as c
from srcad.testing import check_grads


def test_every_public_name_is_classified():
    assert c.unclassified() == [], (
        "public names the census does not classify: add each to NO_GRADIENT_NAMES or "
        "REFUSED_NAMES in srcad/analysis/census.py (or give it a row)")


def test_no_name_is_listed_refused_and_has_a_row():
    assert c.stale() == [], "these have rows now: drop them from REFUSED_NAMES"


def test_classes_and_counts():
    entries = c.census()
    assert {e.kind for e in entries} == set(c.CLASSES)
    counts = c.counts()
    assert sum(counts.values()) == len(entries) == len({e.name for e in entries})
    assert counts[c.DIFFERENTIATED] >= 150
    docs = (Path(__file__).resolve().parents[1] / "docs" / "ops.md").read_text()
    assert f"{len(entries)} names: " + ", ".join(f"{n} {k}" for k, n in counts.items()) in docs


def test_rows_decide_the_class():
    e = {x.name: x for x in c.census()}
    assert e["np.tanh"].kind == c.DIFFERENTIATED and e["np.tanh"].reason == "row `tanh`"
    assert e["ndarray.sum"].kind == c.DIFFERENTIATED
    assert e["ndarray.T"].kind == c.DIFFERENTIATED
    assert e["ndarray.argmax"].kind == c.NO_GRADIENT
    assert e["np.argmax"].kind == c.NO_GRADIENT
    assert e["np.fft.fft"].kind == c.REFUSED and "complex" in e["np.fft.fft"].reason


def _module(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text("import math\nimport operator\n\nimport numpy as np\n\n\ndef f(x):\n"
                    + textwrap.indent(body, "    ") + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


# a sample of each listed class, spelled as people use them on a differentiated x
NO_GRADIENT_SAMPLES = {
    "np.count_nonzero": "return np.sum(x) * np.count_nonzero(x > 0)",
    "np.isclose": "return np.sum(np.where(np.isclose(x, 0.5), 0.0, x))",
    "np.rint": "return np.sum(x * np.rint(x))",
    "np.trunc": "return np.sum(x * np.trunc(x * 3))",
    "np.signbit": "return np.sum(x) * np.signbit(x[0])",
    "np.around": "return np.sum(x * np.around(x))",
    "np.floor_divide": "return np.sum(x * np.floor_divide(x, 0.5))",
    "np.argwhere": "return np.sum(x[np.argwhere(x > 0)])",
    "np.searchsorted": "return np.sum(x[np.searchsorted(np.sort(x), 0.0)] * x)",
    # an integer result of a function with no row, used in arithmetic with x: no gradient
    # through it (refusals._INTEGER_RESULTS), the product rule's other half intact
    "np.digitize": "return np.sum(x * np.digitize(x, [0.2, 0.6]))",
    "np.flatnonzero": "return np.sum(x * np.flatnonzero(x > 0.0).size + x ** 2)",
    "ndarray.searchsorted": "k = np.sort(x).searchsorted(0.5)\nreturn np.sum(x * k)",
}
DIFFERENTIATED_SAMPLES = {  # Python-level spellings that are rows (aliases of numpy's)
    "operator.mul": "return np.sum(operator.mul(x, x) + operator.truediv(x, 3.0))",
    "builtins.pow": "return np.sum(pow(x, 3) - operator.pow(x, 2) + operator.neg(x))",
    # ufunc methods: the rows of the reductions and products they equal (axis 0 by default)
    "ufunc.reduce": "return np.add.reduce(x * x) + np.multiply.reduce(x) "
                    "- np.maximum.reduce(x)",
    "ufunc.accumulate": "return np.sum(np.add.accumulate(x) * np.multiply.accumulate(x))",
    # numpy's in-place writers: the subscript assignments they perform (copy on write)
    "np.put": "y = x * 1.0\nnp.put(y, [0, 3], np.sin(x[1:3]))\nreturn np.sum(y * y)",
    "np.copyto": "y = x * 2.0\nnp.copyto(y, x ** 3, where=x > 0.5)\nreturn np.sum(y * x)",
    "np.fill_diagonal": "m = np.outer(x, x)\nnp.fill_diagonal(m, x)\nreturn np.sum(m * m)",
    "ndarray.item": "return np.sum(x) * x.item(0) + x.item(2) ** 2 + x[1:2].item()",
    "ufunc.outer": "return np.sum(np.multiply.outer(x, x) * np.subtract.outer(x, 2 * x))",
    # data-dependent gathers (srcad/ops/gathers.py): the method form too
    "np.unique": "return np.sum(np.unique(np.concatenate([x, x])) ** 2)",
    "ndarray.compress": "return np.sum(x.compress(x > 0.0) ** 2)",
    "np.histogram": "h, e = np.histogram(x, 3, weights=x * x, density=True)\n"
                    "return np.sum(h * np.arange(3.0)) + np.sum(e ** 2)",
    "np.histogram2d": "h, xe, ye = np.histogram2d(x, x * x, 3, weights=x, density=True)\n"
                      "return np.sum(h * np.arange(3.0)) + np.sum(xe ** 2) + np.sum(ye)",
    "np.histogramdd": "h, e = np.histogramdd(np.stack([x, x * x], axis=1), (2, 3), weights=x)\n"
                      "return np.sum(h ** 2) + np.sum(e[0] ** 2) + np.sum(e[1])",
    # Python-level functions (frontend/pylevel.py, srcad/pyfuncs.py)
    "ndarray.tolist": "return x.tolist()[0] * np.sum(x)",
    "builtins.float": "return float(np.sum(x)) * np.sum(x)",
    "builtins.map": "return sum(map(np.tanh, x)) * x[0]",
    "builtins.sorted": "return sorted(x * x)[1] * sorted(x, reverse=True)[0]",
    "ndarray.flat": "return sum(v for v in (x * x).flat) * x.flat[1]",
    "math.fsum": "return math.fsum(x * x)",
    # math.lgamma / math.gamma: digamma computed in Python (runtime_pymath.py_polygamma)
    "math.lgamma": "return math.lgamma(np.sum(x * x) + 1.0) * math.gamma(x[0] + 2.0)",
    # ufunc.at: a write that accumulates (copy on write); reduceat: a reduction by segment
    "ufunc.at": "y = np.zeros(3)\nnp.add.at(y, [0, 1, 0, 2], x)\nreturn np.sum(y * y)",
    "ufunc.reduceat": "return np.sum(np.multiply.reduceat(x, [0, 2]) ** 2)",
    # numpy functions that call a Python function: numpy's loops, written out
    "np.vectorize": "return np.sum(np.vectorize(lambda v: v * v if v > 0 else -v)(x))",
    "np.piecewise": "return np.sum(np.piecewise(x, [x < 0, x > 1], [np.sin, lambda v: v * v]))",
    "np.apply_along_axis": "return np.sum(np.apply_along_axis(lambda r: r * r.sum(), 0, "
                           "np.outer(x, x)))",
    "np.apply_over_axes": "return np.sum(np.apply_over_axes(np.sum, np.outer(x, x), [0]) ** 2)",
}
REFUSED_SAMPLES = {
    "np.fft.fft": "return np.sum(np.fft.fft(x).real)",
    "np.frompyfunc": "return np.sum(np.frompyfunc(lambda v: v * 2, 1, 1)(x).astype(float))",
    "math.remainder": "return math.remainder(np.sum(x * x), 0.7)",
}


@pytest.mark.parametrize("name", sorted(NO_GRADIENT_SAMPLES))
def test_no_gradient_runs_as_written(tmp_path, name):
    entry = {x.name: x for x in c.census()}[name]
    assert entry.kind == c.NO_GRADIENT
    f = _module(tmp_path, "ng_" + name.replace(".", "_"), NO_GRADIENT_SAMPLES[name])
    x = np.array([0.3, 0.7, -0.2, 1.4])
    check_grads(f, (x,))


@pytest.mark.parametrize("name", sorted(DIFFERENTIATED_SAMPLES))
@pytest.mark.parametrize("mode", ["source", "tape"])
def test_differentiated_python_spellings(tmp_path, name, mode):
    assert {x.name: x for x in c.census()}[name].kind == c.DIFFERENTIATED
    f = _module(tmp_path, f"df_{name.replace('.', '_')}_{mode}", DIFFERENTIATED_SAMPLES[name])
    check_grads(f, (np.array([0.3, 0.7, -0.2, 1.4]),), mode=mode)


@pytest.mark.parametrize("name", sorted(REFUSED_SAMPLES))
def test_refused_is_an_error_at_the_line(tmp_path, name):
    entry = {x.name: x for x in c.census()}[name]
    assert entry.kind == c.REFUSED
    f = _module(tmp_path, "rf_" + name.replace(".", "_"), REFUSED_SAMPLES[name])
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(f)(np.array([0.3, 0.7, -0.2, 1.4]))
    assert f"rf_{name.replace('.', '_')}.py" in str(info.value)


_OLD = os.environ.get("SRCAD_OLD_NUMPY")  # a site dir holding numpy 1.26 (pip --target)


@pytest.mark.skipif(not _OLD, reason="set SRCAD_OLD_NUMPY to a numpy 1.26 site directory")
def test_census_on_an_older_numpy():
    code = ("import numpy, warnings; warnings.simplefilter('ignore');"
            "from srcad.analysis import census as c;"
            "assert numpy.__version__.startswith('1.'), numpy.__version__;"
            "print(c.unclassified(), c.stale())")
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": f"{_OLD}{os.pathsep}{root}"}
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], check=False, env=env,
                         cwd=root,
                         capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "[] []", out.stdout + out.stderr


@pytest.mark.skipif(not _OLD, reason="set SRCAD_OLD_NUMPY to a numpy 1.26 site directory")
def test_numpy_1_aliases_are_their_rows_on_an_older_numpy(tmp_path):
    """np.product / np.cumproduct (numpy < 2's names for prod / cumprod) are those rows:
    their gradients are the rows' in both modes, checked against central differences."""
    (tmp_path / "old_aliases.py").write_text(
        "import numpy as np\n\n\ndef f(x):\n"
        "    return np.sum(np.cumproduct(x, axis=1)) + np.product(x, axis=0)[1]\n")
    code = ("import numpy as np, warnings; warnings.simplefilter('ignore'); import srcad;"
            "from srcad.testing import numerical_grad; from old_aliases import f;"
            "x = np.array([[0.7, 1.2, 0.9], [1.1, 0.8, 1.3]]);"
            "n = numerical_grad(f, (x,));"
            "print([float(np.max(np.abs(srcad.grad(f, mode=m)(x) - n))) < 1e-7"
            " for m in ('source', 'tape')])")
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((_OLD, str(root), str(tmp_path)))}
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], check=False, env=env,
                         cwd=root, capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1:] == ["[True, True]"], out.stdout + out.stderr


def test_an_integer_result_needs_no_rule_but_a_weighted_count_has_one(tmp_path):
    """np.searchsorted / np.digitize results carry no gradient (refusals._INTEGER_RESULTS);
    np.bincount with weights= sums the weights -- a float with a real derivative -- and has
    a row (srcad/ops/gathers.py), never run as written with its gradient dropped."""
    f = _module(tmp_path, "int_ok", "return np.sum(x * np.searchsorted(x, 0.5))")
    x = np.array([0.1, 0.4, 0.7, 0.9])
    check_grads(f, (x,))
    g = _module(tmp_path, "bincount_w",
                "return np.sum(np.bincount([0, 1, 1, 0], weights=x) ** 2)")
    check_grads(g, (x,))
    assert np.allclose(srcad.grad(g)(x), 2 * np.array([1.0, 1.1, 1.1, 1.0]))
