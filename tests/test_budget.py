"""memory_budget=: a policy recomputes the calls with the largest residuals until what the
backward keeps fits, bit for bit the same gradients."""

import warnings

import numpy as np
import pytest

import srcad
from tests import fixtures_budget as F

rng = np.random.default_rng(0)
H = rng.standard_normal((16, 32))
WS = [rng.standard_normal((32, 32)) * 0.2 for _ in range(6)]


def _kept(**options):
    return srcad.explain(F.deep, H, WS, print_report=False, **options)


def _equal(a, b):
    if isinstance(a, (list, tuple)):
        return all(_equal(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b)


def test_budget_is_met_and_gradients_are_unchanged():
    everything = _kept().total_bytes
    budget = everything // 2
    rep = _kept(memory_budget=budget)
    assert rep.total_bytes <= budget
    assert any(i.status == "recomputed" for i in rep.items)
    plain = srcad.grad(F.deep, wrt=(0, 1))(H, WS)
    budgeted = srcad.grad(F.deep, wrt=(0, 1), memory_budget=budget)(H, WS)
    assert _equal(plain, budgeted)


def test_generous_budget_recomputes_nothing():
    rep = _kept(memory_budget=10**12)
    assert not any(i.status == "recomputed" for i in rep.items)


def test_impossible_budget_warns_with_the_minimum():
    with pytest.warns(UserWarning, match="cannot be met"):
        srcad.grad(F.deep, wrt=(0, 1), memory_budget=1)(H, WS)


def test_generated_code_shows_the_recomputation():
    g = srcad.grad(F.deep, wrt=(0, 1), memory_budget=_kept().total_bytes // 2)
    g(H, WS)
    text = srcad.source(g)
    assert "checkpointed: recompute block's forward" in text
    assert "checkpoint=memory_budget=" in text


def test_bad_budget_is_an_error():
    with pytest.raises(srcad.SrcadError, match="memory_budget"):
        srcad.grad(F.deep, memory_budget="lots")
