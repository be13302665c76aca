"""A transform called inside a differentiated function (issue 23: transforms inside
transforms, as JAX composes them): a global `srcad.grad` object, `srcad.grad(f)(x)` written in
place (of a function or a lambda, with `wrt=`), per-example gradients in a loop -- each
differentiated through the inner transform's own derivative (srcad/ops/composed.py), in
source and tape mode, reverse and forward."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error
from tests import fixtures_composed as m

X = np.array([0.3, -0.5, 0.8])
W, B = np.array([0.7, -1.2, 0.4]), 0.3
XS = np.random.default_rng(0).standard_normal((4, 3))

CASES = {
    "a global grad object": (m.penalty_through_a_global_grad, (X,), 0),
    "srcad.grad(f)(x) in place": (m.grad_written_in_place, (X,), 0),
    "srcad.grad(lambda ...)(x)": (m.grad_of_a_lambda, (X,), 0),
    "srcad.grad(f, wrt=1)": (m.grad_with_wrt, (W, B, X), (0, 1)),
    "per-example gradients in a loop": (m.per_example_norms, (W, XS), 0),
    "a grad object taken from a list": (m.grad_taken_from_a_list, (X,), 0),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("how", ["source", "tape", "jvp"])
def test_transforms_inside_transforms(case, how):
    fn, args, wrt = CASES[case]
    want = numerical_grad(fn, args, wrt=wrt)
    if how == "jvp":
        pos = wrt[0] if isinstance(wrt, tuple) else wrt
        v = np.linspace(0.5, 1.5, np.size(args[pos])).reshape(np.shape(args[pos]))
        tangents = tuple(v if i == pos else np.zeros_like(a) for i, a in enumerate(args))
        out, tangent = srcad.jvp(fn, args, tangents)
        w0 = want[0] if isinstance(wrt, tuple) else want
        assert out == pytest.approx(fn(*args), rel=1e-12)
        assert rel_error(tangent, np.sum(w0 * v)) < 1e-5
        return
    value, got = srcad.value_and_grad(fn, wrt=wrt, mode=how)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    assert rel_error(got, want) < 1e-5, (got, want)


def test_the_inner_transform_follows_a_rebinding(monkeypatch):
    g = srcad.grad(m.grad_written_in_place)
    g(X)
    monkeypatch.setattr(m, "energy", lambda x: np.sum(np.cos(x) * x))
    assert rel_error(g(X), numerical_grad(m.grad_written_in_place, (X,))) < 1e-5
