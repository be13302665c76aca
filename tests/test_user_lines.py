"""A refusal inside a function srcad runs in place of a library one names the user's line.

np.histogram, statistics.*, np.polyfit, np.poly1d, sorted(key=), math.fsum, ... are
differentiated through srcad/pyfuncs.py's functions, traced as user code (frontend/calls.py's
SUBSTITUTES, tape.py's `substitute`). Whatever such a function refuses -- while srcad
normalises it, checks it (check_opaque), probes it, runs its generated code, or traces it in
tape mode -- the SrcadError names the user's file, line and function (the call), with the
substitute's own detail ("in np.histogram: ..."), never a line of srcad/pyfuncs.py. Each
function below marks the offending call with ``# ERR``.
"""

from __future__ import annotations

import math
import os
import statistics

import numpy as np
import pytest
from test_errors import err_line

import srcad

HERE = os.path.abspath(__file__)
A = np.linspace(0.5, 2.0, 6)


def hist_range(a, lo):
    counts, edges = np.histogram(a, bins=5, range=(lo, lo + 3.0))  # ERR
    return np.sum(edges) + np.sum(counts)


def stats_one_point(x):
    return statistics.variance(x[:1])  # ERR


def stats_negative(x):
    return statistics.harmonic_mean(x - 5.0)  # ERR


def polyfit_full(x, y):
    c = np.polyfit(x, y, 2, full=True)  # ERR
    return np.sum(c[0])


def poly1d_of_matrix(c):
    p = np.poly1d(c[:4].reshape(2, 2), r=True)  # ERR
    return np.sum(p.coeffs)


def sorted_dict_key(x):
    s = sorted(list(x), key=lambda v: {"v": v})  # ERR
    return s[0]


def fsum_of_matrix(x):
    return math.fsum(x.reshape(2, -1))  # ERR


def _spread(x):
    return statistics.pvariance(x[:0])  # ERR


def via_helper(x):
    return _spread(x) + np.sum(x)


CASES = [
    (hist_range, (A, 0.25), {"wrt": (0, 1)}, "np.histogram"),
    (stats_one_point, (A,), {}, "statistics.variance"),
    (stats_negative, (A,), {}, "statistics.harmonic_mean"),
    (polyfit_full, (A, A ** 2), {"wrt": (0, 1)}, "np.polyfit"),
    (poly1d_of_matrix, (A,), {}, "np.poly"),
    (sorted_dict_key, (A,), {}, "sorted"),
    (fsum_of_matrix, (A,), {}, "math.fsum"),
    (via_helper, (A,), {}, "statistics.pvariance"),
]


def _check(err: srcad.SrcadError, fn, label: str) -> None:
    target = _spread if fn is via_helper else fn
    lineno, text = err_line(target)
    msg = str(err)
    assert err.filename == HERE, msg
    assert err.lineno == lineno, msg
    assert err.func == target.__name__, msg
    assert f'File "{HERE}", line {lineno}' in msg, msg
    assert text in msg, msg
    assert label in msg, msg
    assert "pyfuncs" not in msg, msg


@pytest.mark.parametrize("mode", ["source", "tape"])
@pytest.mark.parametrize("case", CASES, ids=[c[0].__name__ for c in CASES])
def test_substitute_refusal_names_the_users_line(case, mode):
    fn, args, kw, label = case
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(fn, mode=mode, **kw)(*args)
    _check(info.value, fn, label)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_the_same_refusal_again(mode):
    """A second call (the specialisation cached, or none made) says the same."""
    g = srcad.grad(polyfit_full, wrt=(0, 1), mode=mode)
    for _ in range(2):
        with pytest.raises(srcad.SrcadError) as info:
            g(A, A ** 2)
        _check(info.value, polyfit_full, "np.polyfit")


def test_value_and_grad_and_vjp_too():
    with pytest.raises(srcad.SrcadError) as info:
        srcad.value_and_grad(hist_range, wrt=(0, 1))(A, 0.25)
    _check(info.value, hist_range, "np.histogram")
    with pytest.raises(srcad.SrcadError) as info:
        srcad.vjp(stats_one_point, A)
    _check(info.value, stats_one_point, "statistics.variance")


def sorted_users_key(x):
    return sorted(list(x), key=_bad_key)[0]


def _bad_key(v):
    raise KeyError("the user's own")


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_the_users_own_exception_stays_the_users(mode):
    """A key function of the user's that raises: its exception, as it is (not a refusal)."""
    with pytest.raises(KeyError, match="the user's own"):
        srcad.grad(sorted_users_key, mode=mode)(A)


def fine(a, y):
    counts, edges = np.histogram(a, bins=4, weights=y)
    return np.sum(counts * edges[1:]) + statistics.fmean(y) + math.fsum(y * y)


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_accepted_calls_still_differentiate(mode):
    g = srcad.grad(fine, wrt=(0, 1), mode=mode)(A, A * 2.0)
    assert np.all(np.isfinite(g[1]))
    ref = srcad.grad(fine, wrt=(0, 1))(A, A * 2.0)
    np.testing.assert_array_equal(g[1], ref[1])


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_vjp_and_jvp_at_run_time(mode):
    """np.polyfit's refusal is raised by its generated code as it runs (fwd, jvp)."""
    with pytest.raises(srcad.SrcadError) as info:
        srcad.vjp(polyfit_full, A, A ** 2, mode=mode)
    _check(info.value, polyfit_full, "np.polyfit")
    with pytest.raises(srcad.SrcadError) as info:
        srcad.jvp(polyfit_full, (A, A ** 2), (A, A), mode=mode)
    _check(info.value, polyfit_full, "np.polyfit")
