"""Order statistics at ties and at NaNs, where central differences cannot decide: the
convention of srcad/runtime_stats.py (a tied run shares its weight evenly, as max does), the
sum of the weights (d median(x + c) / dc = 1), torch where it agrees, and both modes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import srcad


def median(x):
    return np.median(x)


def percentile_rows(x):
    return np.sum(np.percentile(x, 30, axis=1))


def nanquantile(x):
    return np.nanquantile(x, 0.5)


def test_median_of_ties_splits_evenly():
    np.testing.assert_array_equal(srcad.grad(median)(np.array([1.0, 3.0, 3.0])), [0, 0.5, 0.5])
    # even length: numpy averages the two middle elements; here they tie with a third
    g = srcad.grad(median)(np.array([2.0, 2.0, 2.0, 5.0]))
    np.testing.assert_allclose(g, [1 / 3, 1 / 3, 1 / 3, 0])
    g = srcad.grad(median)(np.array([4.0, 1.0, 3.0, 2.0]))  # no ties: half to each middle one
    np.testing.assert_array_equal(g, [0, 0, 0.5, 0.5])


@pytest.mark.parametrize("x", [np.array([1.0, 1.0, 2.0, 2.0, 2.0, 7.0]),
                               np.array([[0.5, 0.5, 0.5], [3.0, 1.0, 3.0]])])
def test_weights_sum_to_one_per_output(x):
    g = srcad.grad(percentile_rows)(np.atleast_2d(x))
    np.testing.assert_allclose(np.sum(g, axis=1), 1.0, rtol=1e-15)


def test_nan_forms_give_nans_no_weight():
    x = np.array([np.nan, 1.0, 4.0, np.nan, 2.0])
    np.testing.assert_array_equal(srcad.grad(nanquantile)(x), [0, 0, 0, 0, 1])


def test_without_ties_torch_agrees():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 7))
    t = torch.tensor(x, requires_grad=True)
    torch.quantile(t, 0.3, dim=1).sum().backward()
    np.testing.assert_allclose(srcad.grad(percentile_rows)(x), t.grad.numpy(), rtol=1e-12)
    t = torch.tensor(x[0], requires_grad=True)  # odd length: torch.median selects the same one
    torch.median(t).backward()
    np.testing.assert_allclose(srcad.grad(median)(x[0]), t.grad.numpy())


@pytest.mark.parametrize("mode", ["source", "tape"])
def test_both_modes_and_forward(mode):
    x = np.array([1.0, 3.0, 3.0, 0.5, 4.0])
    g = srcad.grad(median, mode=mode)(x)
    np.testing.assert_array_equal(g, [0, 0.5, 0.5, 0, 0])
    _, t = srcad.jvp(median, (x,), (np.arange(5.0),))
    assert t == pytest.approx(np.dot(g, np.arange(5.0)))
