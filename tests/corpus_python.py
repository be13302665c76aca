"""The Python people write around numpy: a corpus for tests/test_python.py.

Each function uses one construct of issue 11 the way a user would -- calls that need no rule
(math, float(), rng draws made inside), print/assert/raise, comprehensions and generator
expressions over differentiated values, sum/min/max, lst.append, dict literals and
comprehensions, nested defs, closures and lambdas -- in straight-line code, loops and
branches. `CASES` lists (function, argument maker, wrt); the test differentiates each in
source and tape mode, forward and reverse, against central differences.
"""

from __future__ import annotations

import math

import numpy as np

# -- calls that need no rule ------------------------------------------------------------------


def attention_scale(q, k):
    d = q.shape[-1]
    scores = q @ k.T / math.sqrt(d)
    return np.sum(np.tanh(scores))


def rng_noise_made_inside(x):
    noise = np.random.default_rng(0).standard_normal(x.shape)
    return np.sum(np.sin(x) * noise)


def random_state_inside(x, w):
    r = np.random.RandomState(3)
    mask = r.rand(*x.shape) > 0.3
    return np.sum(np.where(mask, x * w, 0.0))


def casts_of_shapes(x):
    n = float(x.shape[0])
    half = int(x.shape[0] / 2)
    ok = isinstance(x, np.ndarray) and bool(x.ndim)
    return np.sum(x[:half] ** 2) / n * ok + round(n / 3)


def causal_mask(x):
    T = x.shape[0]
    mask = np.tril(np.ones((T, T)))
    return np.sum(np.where(mask > 0, x @ x.T, 0.0))


def inactive_in_loop(x):
    h = x
    for i in range(3):
        scale = math.exp(-i) + math.log(2.0)
        if math.isfinite(scale):
            h = np.tanh(h * scale)
    return np.sum(h)


# -- statements that do nothing to the gradient -------------------------------------------


def prints_and_asserts(x, w):
    assert x.ndim == 1, "x must be a vector"
    h = np.tanh(x * w)
    print("h is", h.shape, f"mean {np.mean(h):.3f}")
    if h.shape[0] < 1:
        raise ValueError(f"empty input: {h.shape}")
    pass  # noqa: PIE790
    return np.sum(h * h)


def effects_in_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(x * i)
        assert math.isfinite(float(np.sum(x))), f"step {i}"
    return s


# -- comprehensions and generator expressions ---------------------------------------------


def stack_of_comprehension(x, ws):
    hs = [np.tanh(w * x) for w in ws]
    return np.sum(np.stack(hs) ** 2)


def sum_of_generator(x):
    return sum(np.sum(x ** k) / (k + 1) for k in range(3))


def comprehension_with_condition(x):
    parts = [x[i] * x[j] for i in range(3) for j in range(3) if i < j]
    return np.sum(np.stack(parts))


def nested_comprehension(x):
    grid = [[x[i] * x[j] for j in range(2)] for i in range(3)]
    return sum(sum(row) for row in grid)


def dict_comprehension(params, x):
    scaled = {k: v * 2.0 for k, v in params.items()}
    return np.sum(scaled["a"] * x + np.sin(scaled["b"]))


def min_max_of_lists(x):
    top = max([np.sum(x), np.sum(x * x), np.sum(-x)])
    low = min(np.sum(x * k) for k in (1.0, -2.0, 0.5))
    return top + 3.0 * low


def comprehension_in_loop(x):
    h = x
    for step in range(2):
        h = np.sum(np.stack([np.sin(h * (step + k)) for k in range(3)]), axis=0)
    return np.sum(h)


def set_comprehension_of_shapes(x):
    sizes = {len(v) for v in (x, x[:2], x)}
    return np.sum(x) * len(sizes)


# -- lists built by append, builtin sum -----------------------------------------------------


def append_in_loop(x):
    out = []
    for i in range(3):
        out.append(np.sin(x * (i + 1)))
    out.append(x * x)
    return np.sum(np.stack(out))


def builtin_sum_of_list(x):
    terms = [np.sum(x), np.sum(x * x)]
    return sum(terms) + sum([np.sum(np.cos(x)), 1.0])


def append_in_branch(x):
    items = []
    for i in range(4):
        if i % 2:
            items.append(x[i] * 3.0)
        else:
            items.extend([x[i], x[i] ** 2])
    return np.sum(sum(items))


# -- dicts ------------------------------------------------------------------------------------


def dict_literal(x):
    d = {"a": x, "b": np.sin(x)}
    e = dict(c=d["a"] * d["b"], n=2)  # noqa: C408
    return np.sum(e["c"]) * e["n"]


def dict_items_loop(params, x):
    total = 0.0
    for name, v in params.items():
        if name != "skip":
            total = total + np.sum(v * x)
    return total


# -- nested functions, closures and lambdas ----------------------------------------------------


def closure_over_locals(x, w):
    s = np.sum(w)

    def layer(h):
        return np.tanh(h * w) * s

    h = layer(x)
    w = w * 2.0  # the closure reads w when it is called: this one
    return np.sum(h + layer(x))


def lambda_activation_in_loop(x, ws):
    act = lambda v: np.maximum(v, 0.0) + 0.1 * v
    h = x
    for w in ws:
        h = act(h @ w)
    return np.sum(h)


def nested_calls_nested(x, a):
    def inner(y):
        return y * a

    def outer(y):
        return inner(y) + a * np.sin(y)

    return np.sum(outer(x) * x)


def lambda_as_key(x):
    order = sorted(range(x.shape[0]), key=lambda i: -i)
    return np.sum(x[order] * np.arange(x.shape[0]))


def closure_in_branch(x, c):
    f = lambda v: v * c
    if c > 0:
        y = f(x)
    else:
        y = f(x) - c
    return np.sum(y ** 2)


def _r(rng, *shape):
    return rng.standard_normal(shape)


CASES = [
    (attention_scale, lambda r: (_r(r, 3, 4), _r(r, 5, 4)), (0, 1)),
    (rng_noise_made_inside, lambda r: (_r(r, 4),), (0,)),
    (random_state_inside, lambda r: (_r(r, 2, 3), _r(r, 3)), (0, 1)),
    (casts_of_shapes, lambda r: (_r(r, 4),), (0,)),
    (causal_mask, lambda r: (_r(r, 4, 2),), (0,)),
    (inactive_in_loop, lambda r: (_r(r, 3),), (0,)),
    (prints_and_asserts, lambda r: (_r(r, 3), _r(r, 3)), (0, 1)),
    (effects_in_loop, lambda r: (_r(r, 3),), (0,)),
    (stack_of_comprehension, lambda r: (_r(r, 3), [_r(r, 3) for _ in range(3)]), (0, 1)),
    (sum_of_generator, lambda r: (_r(r, 3),), (0,)),
    (comprehension_with_condition, lambda r: (_r(r, 3, 2),), (0,)),
    (nested_comprehension, lambda r: (_r(r, 3),), (0,)),
    (dict_comprehension, lambda r: ({"a": _r(r, 3), "b": _r(r, 3)}, _r(r, 3)), (0, 1)),
    (min_max_of_lists, lambda r: (_r(r, 3),), (0,)),
    (comprehension_in_loop, lambda r: (_r(r, 3),), (0,)),
    (set_comprehension_of_shapes, lambda r: (_r(r, 3),), (0,)),
    (append_in_loop, lambda r: (_r(r, 3),), (0,)),
    (builtin_sum_of_list, lambda r: (_r(r, 3),), (0,)),
    (append_in_branch, lambda r: (_r(r, 4, 2),), (0,)),
    (dict_literal, lambda r: (_r(r, 3),), (0,)),
    (dict_items_loop, lambda r: ({"a": _r(r, 3), "skip": _r(r, 3), "b": _r(r, 3)}, _r(r, 3)),
     (0, 1)),
    (closure_over_locals, lambda r: (_r(r, 4), _r(r, 4)), (0, 1)),
    (lambda_activation_in_loop, lambda r: (_r(r, 2, 3), [_r(r, 3, 3) for _ in range(3)]),
     (0, 1)),
    (nested_calls_nested, lambda r: (_r(r, 4), _r(r, 4)), (0, 1)),
    (lambda_as_key, lambda r: (_r(r, 4),), (0,)),
    (closure_in_branch, lambda r: (_r(r, 3), 0.7), (0, 1)),
]
