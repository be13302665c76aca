"""Grouping by key with `d.setdefault(k, []).append(v)` on a dict the function makes (a
per-class mean, a bucket of rows): `if k not in d: d[k] = []` then `d[k].append(v)`, the key
and the default evaluated once, first (pylower.py `set_default_then`; the dict is one of lists
`_dicts_of_lists` follows: `_grouped_by_key`). Refused ("`.setdefault()` changes a list or
dict in place that srcad holds as a value here") until the session of 2026-12-06 (sixth); a
`defaultdict(list)` and `d.get(k, []) + [v]` worked."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad

RNG = np.random.default_rng(41)
LABELS = [0, 1, 0, 2, 1, 0]


def per_class_mean(W, X):
    groups = {}
    for i, lab in enumerate(LABELS):
        groups.setdefault(lab, []).append(X[i] @ W)
    return sum(np.sum(np.mean(np.stack(v), axis=0) ** 2) for v in groups.values())


def computed_key_and_extend(W, X):
    groups = {}
    for i in range(X.shape[0]):
        groups.setdefault(f"c{LABELS[i] % 2}", []).extend([X[i] @ W, np.tanh(X[i] @ W)])
    return sum(np.sum(np.stack(v) ** 2) * (k == "c0") + np.sum(np.stack(v))
               for k, v in groups.items())


def default_with_an_item(W, X):
    groups = {}
    for i, lab in enumerate(LABELS):
        groups.setdefault(lab, [W[0] * 0.0]).append(X[i] @ W)
    return sum(np.sum(np.stack(v) ** 2) for v in groups.values())


def keyed_order(W, X):
    groups = {}
    for i, lab in enumerate(LABELS[::-1]):
        groups.setdefault(lab, []).append(np.tanh(X[i] @ W) * (i + 1))
    return np.sum(np.stack(groups[LABELS[-1]]) ** 2) + len(groups) + np.sum(groups[2][0])


CASES = [per_class_mean, computed_key_and_extend, default_with_an_item, keyed_order]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "fused", "tape"])
def test_grouped_by_setdefault(f, mode):
    W, X = RNG.standard_normal((4, 3)), RNG.standard_normal((6, 4))
    options = {"fuse": True} if mode == "fused" else {"mode": mode}
    value, g = srcad.value_and_grad(f, **options)(W, X)
    assert value == pytest.approx(f(W, X), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(f, (W, X)), rtol=1e-5, atol=1e-6)


def bound_to_a_name(W, X):
    groups = {}
    for i, lab in enumerate(LABELS):
        bucket = groups.setdefault(lab, [])
        bucket.append(X[i] @ W)
    return sum(np.sum(np.stack(v) ** 2) for v in groups.values())


def test_the_list_bound_to_a_name_is_right_or_refused():
    """`bucket = d.setdefault(k, [])` then `bucket.append(v)`: the list has a second name;
    srcad follows it or refuses, never a dict missing the appends."""
    W, X = RNG.standard_normal((4, 3)), RNG.standard_normal((6, 4))
    try:
        value, g = srcad.value_and_grad(bound_to_a_name)(W, X)
    except srcad.SrcadError:
        return
    assert value == pytest.approx(bound_to_a_name(W, X), rel=1e-12)
    np.testing.assert_allclose(g, numerical_grad(bound_to_a_name, (W, X)), rtol=1e-5,
                               atol=1e-6)
