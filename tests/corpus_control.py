"""A corpus of numpy functions with control flow, for reverse-mode agreement tests.

Each function returns a scalar (the ``VJP_*`` functions at the bottom return arrays) and has
a torch twin with the same math and the same control flow in ``tests/test_control_flow.py``.
``CASES`` maps a case name to ``(fn, make)`` where ``make(rng, dtype) -> tuple`` builds the
arguments; every floating-point array argument is differentiated, Python ints are data
(trip counts, modes). Several cases share one function with inputs chosen to take a
different branch or trip count (``if_elif_else_hi/mid/lo``, ``range_n_zero``).

Inputs are drawn so that every data-dependent condition is decided with a wide margin
(a finite-difference step or float32 rounding cannot flip it), and so that loops with
data-dependent trip counts run the same number of times in numpy and in torch.

Covered: if / elif / else on data and on int arguments, ``a if c else b``; ``for`` over
``range(n)``, ``range(x.shape[0])``, ``range(len(xs))``, ``range(a, b, step)`` (positive
and negative steps), over the first axis of an array; nested loops 2 and 3 deep (also with
the inner bound depending on the outer counter); a branch inside a loop body; ``while`` on
data (scale until a norm threshold, Newton with a tolerance, fixed-point iteration) and on a
counter; ``break`` and ``continue`` in ``for`` and ``while``; early ``return`` before, inside
and in nested loops; values overwritten in a loop that the backward needs (RNN) and ones it
does not (counters, ``x = x + 1.0``); accumulation across iterations; loop-invariant weights
used every iteration; integer arithmetic on counters (``i // 2``, ``i % 3``); zero-trip loops.
"""

from __future__ import annotations

import numpy as np

THRESH = 4.0  # a module constant used in a while condition

# == branches =================================================================================


def if_else_sign(x, w):
    if np.sum(x) > 0:
        y = np.sin(x) * w
    else:
        y = np.cos(x) * w
    return np.sum(y * x)


def if_elif_else(x, w):
    s = np.mean(x)
    if s > 0.5:
        y = x * w
    elif s > -0.5:
        y = np.tanh(x) * w * w
    else:
        y = np.exp(x) + w
    return np.sum(y ** 2)


def if_no_else(x, w):
    y = x * w
    if np.max(x) > 0.5:
        y = y * x
    return np.sum(y)


def nested_if(x, y):
    if np.sum(x) > 0:
        if np.sum(y) > 0:
            z = x * y
        else:
            z = x - y
    else:
        if np.sum(y) > 0:
            z = np.exp(x) * y
        else:
            z = x * x * y
    return np.sum(z)


def branch_on_int_mode(x, W, mode):
    h = x @ W
    if mode == 0:
        out = np.tanh(h)
    elif mode == 1:
        out = np.maximum(h, 0.0)
    else:
        out = h * h
    return np.sum(out)


def branch_unused_in_one_arm(x, w, v):
    # v only matters when the condition holds, w only when it does not
    if np.sum(x) > 0:
        out = x * v
    else:
        out = x * w
    return np.sum(out * out)


def ifexp_data(x):
    y = np.sin(x) if np.sum(x) > 0 else np.cos(x)
    return np.sum(y * y)


def ifexp_scale(x, n):
    scale = 2.0 if n > 2 else 0.5
    return np.sum(np.tanh(x * scale))


def multiple_returns(x, w):
    s = np.sum(x * w)
    if s > 1.0:
        return np.sum(x ** 2 * w)
    elif s < -1.0:
        return np.sum(np.sin(x) * w)
    return s * s


def early_return_before_loop(x, n):
    if np.sum(x) < 0:
        return np.sum(x * x)
    for i in range(n):
        x = np.sin(x) + x
    return np.sum(x)


# == for over range ============================================================================


def range_n_sin(x, n):
    for i in range(n):
        x = np.sin(x) * 1.1 + 0.2
    return np.sum(x * x)


def range_shape_rows(x, W):
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc + np.sum(np.tanh(x[i] @ W))
    return acc


def range_len(xs, w):
    s = 0.0
    for i in range(len(xs)):
        s = s + np.sum(xs[i] * w) ** 2
    return s


def range_start_stop_step(x, w):
    y = w
    for i in range(1, 8, 3):
        y = y * np.cos(x * i) + w
    return np.sum(y)


def range_negative_step(x):
    y = x
    for i in range(6, 0, -2):
        y = np.tanh(y * i) + x
    return np.sum(y ** 2)


def range_step_pairs(x):
    s = 0.0
    for i in range(0, x.shape[0] - 1, 2):
        s = s + np.sum(x[i] * x[i + 1])
    return s


def range_n_zero(x, n):
    y = x * 2.0
    for i in range(n):
        y = np.exp(y) * x
    return np.sum(y)


def counter_mod_selects_op(x, n):
    for i in range(n):
        if i % 3 == 0:
            x = np.sin(x)
        elif i % 3 == 1:
            x = x * 1.5 + 0.1
        else:
            x = np.tanh(x) * (i // 2 + 1)
    return np.sum(x * x)


def counter_as_float(x, w, n):
    y = x
    for i in range(n):
        y = y + w * i
        y = np.sin(y)
    return np.sum(y)


def counter_floor_div_index(xs, w):
    s = 0.0
    for i in range(2 * xs.shape[0]):
        s = s + np.sum(xs[i // 2] * w) * (i % 2 + 1)
    return s * s


def neighbours_in_loop(xs):
    s = 0.0
    for i in range(1, len(xs)):
        s = s + np.sum((xs[i] - xs[i - 1]) ** 2)
    return s


# == for over the rows of an array =============================================================


def rows_sum(xs, w):
    s = 0.0
    for x in xs:
        s = s + np.sum(np.tanh(x * w))
    return s


def rnn(h, W, U, b, xs):
    for x in xs:
        h = np.tanh(h @ W + x @ U + b)
    return np.sum(h * h)


def rnn_relu_mean(h, W, U, xs):
    total = 0.0
    for x in xs:
        h = np.maximum(h @ W + x @ U, 0.0) * 0.9 + h * 0.1
        total = total + np.mean(h)
    return total


def rows_with_branch(xs, w):
    s = 0.0
    for x in xs:
        if np.sum(x) > 0:
            s = s + np.sum(x * w)
        else:
            s = s - np.sum(x * x * w)
    return s


def horner_rows(c, x):
    # polynomial with coefficient rows c[0] (highest) .. c[-1]
    y = np.zeros_like(x)
    for ck in c:
        y = y * x + ck
    return np.sum(y)


def loop_var_after_loop(xs, w):
    h = w
    for x in xs:
        h = np.tanh(h * x)
    return np.sum(h) + np.sum(x * w)


def rows_ifexp(xs, w):
    s = 0.0
    for x in xs:
        t = np.sum(np.sin(x) * w) if np.max(x) > 0 else np.sum(x * w * w)
        s = s + t
    return s


# == nested loops ==============================================================================


def nested2(x, n, m):
    for i in range(n):
        for j in range(m):
            x = np.sin(x + 0.1 * j) * 1.2
    return np.sum(x)


def nested3(x, w):
    for i in range(2):
        for j in range(3):
            for k in range(2):
                x = np.tanh(x * w + 0.1 * (i + j - k))
    return np.sum(x * x)


def nested_rows_range(xs, W):
    s = 0.0
    for x in xs:
        h = x
        for k in range(3):
            h = np.tanh(h @ W)
        s = s + np.sum(h)
    return s


def nested_triangular(x, n):
    y = x
    for i in range(n):
        for j in range(i):
            y = np.sin(y) + x * 0.5
    return np.sum(y)


def nested_inner_branch(x, w, n):
    for i in range(n):
        for j in range(2):
            if np.sum(x) > 0:
                x = x * w - 0.3
            else:
                x = np.cos(x) + w
    return np.sum(x * x)


def nested_rows_rows(A, B):
    s = 0.0
    for a in A:
        for b in B:
            s = s + np.tanh(np.sum(a * b))
    return s


# == while =====================================================================================


def while_scale_until_norm(x):
    while np.sqrt(np.sum(x * x)) < THRESH:
        x = x * 1.3
    return np.sum(x ** 3)


def while_newton_sqrt(a):
    y = a
    while np.max(np.abs(y * y - a)) > 1e-12:
        y = 0.5 * (y + a / y)
    return np.sum(y * a)


def while_fixed_point_cos(x, c):
    y = x
    d = 1.0
    while d > 1e-9:
        y_new = np.cos(y) * c
        d = np.max(np.abs(y_new - y))
        y = y_new
    return np.sum(y) + np.sum(x * y)


def while_counter(x, n):
    i = 0
    while i < n:
        x = np.tanh(x) * 1.5
        i = i + 1
    return np.sum(x * x)


def while_break(x, w):
    while True:
        x = x * 1.2 + w
        if np.sum(x) > 5.0:
            break
    return np.sum(x * x)


def while_continue(x, n):
    i = 0
    while i < n:
        i = i + 1
        if i % 2 == 0:
            continue
        x = np.sin(x) + x * 0.5
    return np.sum(x)


def while_data_and_counter(x, w):
    i = 0
    while np.sum(x) < 3.0:
        x = x + w * w
        i = i + 1
    return np.sum(x * w) + i


def while_early_return(x):
    while np.sum(x) < 100.0:
        x = x * 1.5 + 0.1
        if np.max(x) > 4.0:
            return np.sum(np.sin(x))
    return np.sum(x)


# == break / continue in for ===================================================================


def for_break_data(x, n):
    for i in range(n):
        x = x * 1.5
        if np.sum(x) > 10.0:
            break
    return np.sum(x * x)


def for_continue_counter(x, n):
    for i in range(n):
        if i % 2 == 1:
            continue
        x = np.tanh(x) + 0.1 * x
    return np.sum(x)


def for_continue_data_rows(xs, w):
    s = 0.0
    for x in xs:
        if np.sum(x) < 0:
            continue
        s = s + np.sum(np.exp(x * w))
    return s


def for_break_rows(xs, w):
    s = 0.0
    for x in xs:
        if np.max(x) > 0.9:
            break
        s = s + np.sum(x * w) ** 2
    return s


def nested_break_inner(x):
    for i in range(3):
        for j in range(4):
            if j > i:
                break
            x = np.sin(x) * 1.1 + 0.05 * j
    return np.sum(x * x)


def nested_continue_outer_break(x, w):
    for i in range(5):
        if i == 1:
            continue
        for j in range(3):
            x = np.tanh(x * w) + 0.2
        if np.sum(x) > 1e6:
            break
    return np.sum(x)


# == early return inside loops =================================================================


def early_return_loop(x, n):
    for i in range(n):
        x = x * 1.3
        if np.sum(x) > 5.0:
            return np.sum(x ** 2)
    return np.sum(x)


def early_return_nested(xs, W):
    h = np.zeros(W.shape[1])
    for x in xs:
        for k in range(2):
            h = np.tanh(h + x @ W)
            if np.sum(h) > 1.5:
                return np.sum(h * h)
    return np.sum(h)


def early_return_rows_no_hit(xs, w):
    s = 0.0
    for x in xs:
        s = s + np.sum(x * w)
        if s > 1e9:
            return s
    return s * s


# == accumulation, invariants, overwrites the backward does (not) need ========================


def accumulate_dW(W, xs):
    s = 0.0
    for x in xs:
        s = s + np.sum(np.tanh(x @ W) ** 2)
    return s


def power_of_x(x, n):
    p = np.ones_like(x)
    for i in range(n):
        p = p * x
    return np.sum(p)


def counter_not_needed(x, n):
    k = 0.0
    for i in range(n):
        k = k + 1.0
        x = x * 0.5 + 1.0
    return np.sum(x * x) * k


def shift_not_needed(x, n):
    for i in range(n):
        x = x + 1.0
    return np.sum(x * x)


def unrolled_gd(x, t, n):
    for i in range(n):
        x = x - 0.1 * (x - t) * 2.0
    return np.sum((x - t) ** 2 + x)


def power_iteration(A, v, n):
    for i in range(n):
        v = A @ v
        v = v / np.sqrt(np.sum(v * v))
    return v @ A @ v


def softmax_steps(x, W, n):
    for i in range(n):
        z = x @ W
        z = z - np.max(z, axis=-1, keepdims=True)
        e = np.exp(z)
        x = e / np.sum(e, axis=-1, keepdims=True)
    return np.sum(x * x)


def loop_mean_axis(x, w):
    for i in range(3):
        x = x - np.mean(x, axis=0, keepdims=True) * w
    return np.sum(x ** 2)


def two_carried_values(x, y, n):
    for i in range(n):
        x, y = np.tanh(x + y), x * y
    return np.sum(x + y * y)


# == more shapes of control flow ==============================================================


def data_dependent_bound(x):
    k = np.sum(x > 0)
    y = x
    for i in range(k):
        y = np.sin(y) + x
    return np.sum(y)


def shape_grows_in_loop(x, n):
    for i in range(n):
        x = np.concatenate([x, x * 0.5])
    return np.sum(x * x)


def scalar_rows(x):
    s = 0.0
    for v in x:
        s = s + v * v * v
    return s


def counter_after_loop(x, n):
    for i in range(n):
        x = np.sin(x)
    return np.sum(x) * i


def aug_assign_loop(xs, w):
    s = 0.0
    h = w + 0.0
    for x in xs:
        h *= np.tanh(x)
        s += np.sum(h * x)
    return s


def not_condition(x):
    if not np.sum(x) > 0:
        return np.sum(x * x)
    return np.sum(np.exp(x))


def defined_in_loop_branch(xs):
    s = 0.0
    for x in xs:
        if np.sum(x) > 0:
            t = x * 2.0
        else:
            t = x * x
        s = s + np.sum(t * x)
    return s


def while_in_for(xs):
    s = 0.0
    for x in xs:
        while np.sum(x * x) < 4.0:
            x = x * 1.5
        s = s + np.sum(x)
    return s


def break_in_while_in_for(x, n):
    for i in range(n):
        while True:
            x = x * 1.1
            if np.sum(x) > 2.0 * (i + 1):
                break
    return np.sum(x * x)


def reverse_index_pairs(xs):
    s = 0.0
    n = len(xs)
    for i in range(n):
        s = s + np.sum(xs[i] * xs[n - 1 - i])
    return s


def return_in_elif_in_loop(x, n):
    for i in range(n):
        x = x * 1.2
        if np.sum(x) > 100.0:
            return np.sum(x)
        elif np.sum(x) > 3.0:
            return np.sum(x * x)
    return np.sum(np.sin(x))


def break_at_first(x):
    for i in range(5):
        if np.sum(x) > 0:
            break
        x = x * 2.0 + 0.3
    return np.sum(x * x)


def minimum_in_loop(x, n):
    for i in range(n):
        x = np.minimum(x, 0.5) + x * 0.5
    return np.sum(x)


def range_reverse_loop(xs):
    h = xs[0] * 0.0
    for i in range(len(xs) - 1, -1, -1):
        h = np.tanh(h + xs[i])
    return np.sum(h)


def tuple_literal_iter(x):
    for c in (0.5, 1.0, 2.0):
        x = np.sin(x * c)
    return np.sum(x)


def iter_transposed(x, w):
    s = 0.0
    for col in x.T:
        s = s + np.sum(np.tanh(col * w))
    return s


def iter_slice(x):
    s = 0.0
    for r in x[1:]:
        s = s + np.sum(r * r)
    return s


def shrink_in_loop(x):
    s = 0.0
    for i in range(3):
        x = x[1:] * 1.5
        s = s + np.sum(x * x)
    return s


def rnn_broadcast_h0(h, W, U, xs):
    # h starts as (hidden,) and becomes (batch, hidden) after the first step
    for x in xs:
        h = np.tanh(h @ W + x @ U)
    return np.sum(h * h)


def bias_broadcast_loop(x, b, n):
    for i in range(n):
        x = np.tanh(x + b)
    return np.sum(x)


def int_becomes_float(x, n):
    c = 0
    for i in range(n):
        c = c + 0.5
        x = x * c
    return np.sum(x)


def where_clip_loop(x, n):
    for i in range(n):
        x = np.where(x > 0, x * 1.5, x * 0.5)
        x = np.clip(x, -2.0, 2.0)
    return np.sum(x * x)


def return_in_while_true(x):
    while True:
        x = x * 1.5
        if np.sum(x) > 5.0:
            return np.sum(x * x)


def return_in_while_in_for(xs):
    s = 0.0
    for x in xs:
        while np.sum(x) < 2.0:
            x = x * 1.5 + 0.1
            if np.max(x) > 1.5:
                return s + np.sum(x)
        s = s + np.sum(x)
    return s


def static_if_in_loop(x, mode, n):
    for i in range(n):
        if mode == 1:
            x = np.sin(x)
        else:
            x = np.cos(x)
    return np.sum(x)


def nested_return_break_mix(x, n):
    for i in range(n):
        for j in range(n):
            x = x * 1.1
            if np.sum(x) > 10.0:
                return np.sum(x)
            if j > i:
                break
        if np.sum(x) > 8.0:
            break
    return np.sum(x * x)


def loop_target_is_param(x, w):
    # rebinding the argument as the loop target is the point of this case
    for w in x:  # noqa: PLR1704
        w = w * 2.0
    return np.sum(w * w)


def defined_in_loop_used_after(xs, w):
    for x in xs:
        t = np.tanh(x * w)
    return np.sum(t * w)


def carried_temp(xs):
    prev = xs[0] * 0.0
    s = 0.0
    for r in xs:
        cur = r * 2.0
        s = s + np.sum(cur * prev)
        prev = cur
    return s + np.sum(prev)


def arg_only_in_condition(x, t):
    while np.sum(x) < np.sum(t):
        x = x * 1.5
    return np.sum(x * x)


def while_for_break_mix(x, n):
    i = 0
    while i < n:
        for j in range(3):
            if j == 0:
                x = x * 1.1
            elif np.sum(x) > 5.0:
                break
            else:
                x = np.sin(x) + x
        i = i + 1
    return np.sum(x)


def ifexp_lazy_index(xs, k):
    y = xs[k] if k < len(xs) else xs[0]
    return np.sum(y * y)


def path_dependent_shape(x, w):
    # y is (n,) on one path and (n, 3) on the other: same argument shapes, different shapes inside
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = x[:, None] * np.ones(3)
    return np.sum(y * w)


def trip_dependent_shape(x, w):
    # zero trips keep x (3,), one trip makes it (6,), two (12,)
    while np.sum(x) < 5.0:
        x = np.concatenate([x, x * 0.5])
    return np.sum(x) * np.sum(w * w)


# == once-broken corners: swaps, and/or (short-circuit), tuple targets, rebound bounds ===


def swap_in_branch(a, b):
    if np.sum(a) > 0:
        a, b = b, a
    return np.sum(a * 2.0 + b)


def swap_in_loop(a, b, n):
    for i in range(n):
        a, b = b, a
    return np.sum(a * 2.0 + b * b)


def and_condition(x, y):
    if np.sum(x) > 0 and np.sum(y) > 0:
        z = x * y
    else:
        z = x + y
    return np.sum(z * z)


def while_and_condition(x, n):
    i = 0
    while i < n and np.sum(x) < 10.0:
        x = x * 1.5
        i = i + 1
    return np.sum(x * x)


def chained_comparison(x):
    s = np.sum(x)
    if 0 < s < 10:
        return np.sum(np.sin(x))
    return np.sum(x)


def and_short_circuit(xs):
    # Python never evaluates xs[i] once i == len(xs)
    i = 0
    s = 0.0
    while i < len(xs) and np.sum(xs[i]) > 0:
        s = s + np.sum(xs[i] ** 2)
        i = i + 1
    return s


def or_short_circuit(xs, k):
    if k >= len(xs) or np.sum(xs[k]) > 0:
        y = xs[0] * 2.0
    else:
        y = xs[1]
    return np.sum(y * y)


def range_bound_reassigned(x, n):
    # range(n) is evaluated once; rebinding n inside the body does not change the trip count
    for i in range(n):
        x = np.sin(x) * 1.5
        n = n - 1
    return np.sum(x)


def iterable_reassigned(xs):
    # the loop iterates over the original xs; the rebinding only affects the return
    s = 0.0
    for x in xs:
        s = s + np.sum(x * x)
        xs = xs * 2.0
    return s + np.sum(xs)


def enumerate_rows(xs, w):
    s = 0.0
    for i, x in enumerate(xs):
        s = s + np.sum(x * w) * i
    return s


def zip_rows(xs, ys):
    s = 0.0
    for x, y in zip(xs, ys):
        s = s + np.sum(x * y)
    return s


# == array-valued functions (for srcad.vjp) ===================================================


def vjp_rnn_state(h, W, xs):
    for x in xs:
        h = np.tanh(h @ W + x)
    return h


def vjp_while_scale(x):
    while np.sum(x * x) < 9.0:
        x = x * 1.25
    return x * x


def vjp_branch_rows(xs, w):
    acc = w
    for x in xs:
        if np.sum(x) > 0:
            acc = acc * np.tanh(x)
        else:
            acc = acc + np.sin(x)
    return acc


def vjp_break(x, n):
    for i in range(n):
        x = np.sin(x) * 2.0
        if np.max(np.abs(x)) > 1.5:
            break
    return x


# == arguments =================================================================================


def _f(rng, dtype, *shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


def _rows_mixed_sign(rng, dtype, n, d, margin=0.3):
    """Rows whose sums alternate in sign, each at least ``margin * d`` away from 0."""
    x = rng.uniform(margin, 1.0, size=(n, d))
    sign = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)[:, None]
    return (x * sign).astype(dtype)


def _rows_for_break(rng, dtype):
    xs = rng.uniform(-0.8, 0.8, size=(6, 3))
    xs[3, 1] = 0.95  # breaks at row 3
    return xs.astype(dtype)


CASES = {
    # branches
    "if_else_sign_pos": (if_else_sign, lambda r, t: (_f(r, t, 3, 4, low=0.1), _f(r, t, 3, 4))),
    "if_else_sign_neg": (if_else_sign, lambda r, t: (_f(r, t, 3, 4, high=-0.1), _f(r, t, 3, 4))),
    "if_elif_else_hi": (if_elif_else, lambda r, t: (_f(r, t, 5, low=0.8, high=1.2), _f(r, t, 5))),
    "if_elif_else_mid": (if_elif_else, lambda r, t: (_f(r, t, 5, low=-0.2, high=0.2), _f(r, t, 5))),
    "if_elif_else_lo": (if_elif_else, lambda r, t: (_f(r, t, 5, low=-1.5, high=-0.8),
                                                    _f(r, t, 5))),
    "if_no_else_taken": (if_no_else, lambda r, t: (_f(r, t, 4, low=0.6), _f(r, t, 4))),
    "if_no_else_skipped": (if_no_else, lambda r, t: (_f(r, t, 4, high=0.4), _f(r, t, 4))),
    "nested_if_pp": (nested_if, lambda r, t: (_f(r, t, 3, low=0.1), _f(r, t, 3, low=0.1))),
    "nested_if_pn": (nested_if, lambda r, t: (_f(r, t, 3, low=0.1), _f(r, t, 3, high=-0.1))),
    "nested_if_np": (nested_if, lambda r, t: (_f(r, t, 3, high=-0.1), _f(r, t, 3, low=0.1))),
    "nested_if_nn": (nested_if, lambda r, t: (_f(r, t, 3, high=-0.1), _f(r, t, 3, high=-0.1))),
    "branch_on_int_mode_0": (branch_on_int_mode, lambda r, t: (_f(r, t, 3, 4), _f(r, t, 4, 2), 0)),
    "branch_on_int_mode_1": (branch_on_int_mode, lambda r, t: (_f(r, t, 3, 4), _f(r, t, 4, 2), 1)),
    "branch_on_int_mode_2": (branch_on_int_mode, lambda r, t: (_f(r, t, 3, 4), _f(r, t, 4, 2), 2)),
    "branch_unused_in_one_arm_pos": (branch_unused_in_one_arm, lambda r, t: (
        _f(r, t, 4, low=0.1), _f(r, t, 4), _f(r, t, 4))),
    "branch_unused_in_one_arm_neg": (branch_unused_in_one_arm, lambda r, t: (
        _f(r, t, 4, high=-0.1), _f(r, t, 4), _f(r, t, 4))),
    "ifexp_data_pos": (ifexp_data, lambda r, t: (_f(r, t, 2, 3, low=0.1),)),
    "ifexp_data_neg": (ifexp_data, lambda r, t: (_f(r, t, 2, 3, high=-0.1),)),
    "ifexp_scale_big": (ifexp_scale, lambda r, t: (_f(r, t, 4), 3)),
    "ifexp_scale_small": (ifexp_scale, lambda r, t: (_f(r, t, 4), 1)),
    "multiple_returns_first": (multiple_returns, lambda r, t: (
        _f(r, t, 4, low=0.8), _f(r, t, 4, low=0.8))),
    "multiple_returns_second": (multiple_returns, lambda r, t: (
        _f(r, t, 4, low=0.8), _f(r, t, 4, low=-1.0, high=-0.8))),
    "multiple_returns_fallthrough": (multiple_returns, lambda r, t: (
        _f(r, t, 4, low=-0.3, high=0.3), _f(r, t, 4, low=-0.3, high=0.3))),
    "early_return_before_loop_hit": (early_return_before_loop, lambda r, t: (
        _f(r, t, 3, high=-0.1), 3)),
    "early_return_before_loop_miss": (early_return_before_loop, lambda r, t: (
        _f(r, t, 3, low=0.1), 3)),
    # for over range
    "range_n_sin": (range_n_sin, lambda r, t: (_f(r, t, 3, 2), 5)),
    "range_n_zero": (range_n_zero, lambda r, t: (_f(r, t, 3), 0)),
    "range_n_one": (range_n_zero, lambda r, t: (_f(r, t, 3), 1)),
    "range_shape_rows": (range_shape_rows, lambda r, t: (_f(r, t, 5, 3), _f(r, t, 3, 2))),
    "range_len": (range_len, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 3))),
    "range_start_stop_step": (range_start_stop_step, lambda r, t: (_f(r, t, 4), _f(r, t, 4))),
    "range_negative_step": (range_negative_step, lambda r, t: (_f(r, t, 2, 3),)),
    "range_step_pairs": (range_step_pairs, lambda r, t: (_f(r, t, 7, 3),)),
    "counter_mod_selects_op": (counter_mod_selects_op, lambda r, t: (_f(r, t, 4), 7)),
    "counter_as_float": (counter_as_float, lambda r, t: (_f(r, t, 3), _f(r, t, 3), 4)),
    "counter_floor_div_index": (counter_floor_div_index, lambda r, t: (_f(r, t, 3, 2),
                                                                      _f(r, t, 2))),
    "neighbours_in_loop": (neighbours_in_loop, lambda r, t: (_f(r, t, 5, 2),)),
    # for over rows
    "rows_sum": (rows_sum, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 3))),
    "rnn": (rnn, lambda r, t: (_f(r, t, 2, 3), _f(r, t, 3, 3), _f(r, t, 4, 3), _f(r, t, 3),
                               _f(r, t, 5, 2, 4))),
    "rnn_relu_mean": (rnn_relu_mean, lambda r, t: (_f(r, t, 2, 3), _f(r, t, 3, 3),
                                                   _f(r, t, 2, 3), _f(r, t, 4, 2, 2))),
    "rows_with_branch": (rows_with_branch, lambda r, t: (_rows_mixed_sign(r, t, 5, 3),
                                                         _f(r, t, 3))),
    "horner_rows": (horner_rows, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 3))),
    "loop_var_after_loop": (loop_var_after_loop, lambda r, t: (_f(r, t, 3, 4), _f(r, t, 4))),
    "rows_ifexp": (rows_ifexp, lambda r, t: (_rows_mixed_sign(r, t, 4, 3), _f(r, t, 3))),
    # nested
    "nested2": (nested2, lambda r, t: (_f(r, t, 3), 3, 2)),
    "nested2_inner_zero": (nested2, lambda r, t: (_f(r, t, 3), 3, 0)),
    "nested3": (nested3, lambda r, t: (_f(r, t, 3), _f(r, t, 3))),
    "nested_rows_range": (nested_rows_range, lambda r, t: (_f(r, t, 3, 2), _f(r, t, 2, 2))),
    "nested_triangular": (nested_triangular, lambda r, t: (_f(r, t, 3), 4)),
    "nested_inner_branch": (nested_inner_branch, lambda r, t: (
        np.array([0.9, 0.8, 0.7], dtype=t), np.array([0.5, 0.6, 0.4], dtype=t), 3)),
    "nested_rows_rows": (nested_rows_rows, lambda r, t: (_f(r, t, 3, 2), _f(r, t, 2, 2))),
    # while
    "while_scale_until_norm": (while_scale_until_norm, lambda r, t: (_f(r, t, 3, low=0.2),)),
    "while_newton_sqrt": (while_newton_sqrt, lambda r, t: (_f(r, t, 4, low=0.5, high=2.0),)),
    "while_fixed_point_cos": (while_fixed_point_cos, lambda r, t: (
        _f(r, t, 3), _f(r, t, 3, low=0.3, high=0.6))),
    "while_counter": (while_counter, lambda r, t: (_f(r, t, 3), 4)),
    "while_counter_zero": (while_counter, lambda r, t: (_f(r, t, 3), 0)),
    "while_break": (while_break, lambda r, t: (_f(r, t, 3, low=0.1), _f(r, t, 3, low=0.2))),
    "while_continue": (while_continue, lambda r, t: (_f(r, t, 3), 5)),
    "while_data_and_counter": (while_data_and_counter, lambda r, t: (
        _f(r, t, 3, low=-0.5, high=0.0), _f(r, t, 3, low=0.5, high=0.9))),
    "while_early_return_hit": (while_early_return, lambda r, t: (_f(r, t, 3, low=0.2, high=0.5),)),
    # break / continue in for
    "for_break_data_hit": (for_break_data, lambda r, t: (_f(r, t, 3, low=0.5), 20)),
    "for_break_data_miss": (for_break_data, lambda r, t: (_f(r, t, 3, low=0.5), 2)),
    "for_continue_counter": (for_continue_counter, lambda r, t: (_f(r, t, 3), 6)),
    "for_continue_data_rows": (for_continue_data_rows, lambda r, t: (
        _rows_mixed_sign(r, t, 5, 3), _f(r, t, 3))),
    "for_break_rows": (for_break_rows, lambda r, t: (_rows_for_break(r, t), _f(r, t, 3))),
    "nested_break_inner": (nested_break_inner, lambda r, t: (_f(r, t, 3),)),
    "nested_continue_outer_break": (nested_continue_outer_break, lambda r, t: (
        _f(r, t, 3), _f(r, t, 3))),
    # early return inside loops
    "early_return_loop_hit": (early_return_loop, lambda r, t: (_f(r, t, 3, low=0.5), 20)),
    "early_return_loop_miss": (early_return_loop, lambda r, t: (_f(r, t, 3, low=0.5), 1)),
    "early_return_nested_hit": (early_return_nested, lambda r, t: (
        _f(r, t, 4, 3, low=0.3), _f(r, t, 3, 2, low=0.2))),
    "early_return_nested_miss": (early_return_nested, lambda r, t: (
        _f(r, t, 4, 3, low=-1.0, high=-0.3), _f(r, t, 3, 2, low=0.2))),
    "early_return_rows_no_hit": (early_return_rows_no_hit, lambda r, t: (_f(r, t, 3, 2),
                                                                        _f(r, t, 2))),
    # accumulation / invariants / overwrites
    "accumulate_dW": (accumulate_dW, lambda r, t: (_f(r, t, 3, 2), _f(r, t, 4, 5, 3))),
    "power_of_x": (power_of_x, lambda r, t: (_f(r, t, 4), 5)),
    "counter_not_needed": (counter_not_needed, lambda r, t: (_f(r, t, 3), 4)),
    "shift_not_needed": (shift_not_needed, lambda r, t: (_f(r, t, 3), 4)),
    "unrolled_gd": (unrolled_gd, lambda r, t: (_f(r, t, 3), _f(r, t, 3), 6)),
    "power_iteration": (power_iteration, lambda r, t: (_f(r, t, 4, 4), _f(r, t, 4, low=0.1), 6)),
    "softmax_steps": (softmax_steps, lambda r, t: (_f(r, t, 2, 3), _f(r, t, 3, 3, low=-2, high=2),
                                                   3)),
    "loop_mean_axis": (loop_mean_axis, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 3))),
    "two_carried_values": (two_carried_values, lambda r, t: (_f(r, t, 3), _f(r, t, 3), 4)),
    # more shapes of control flow
    "rnn_zero_steps": (rnn, lambda r, t: (
        _f(r, t, 2, 3), _f(r, t, 3, 3), _f(r, t, 4, 3), _f(r, t, 3), _f(r, t, 0, 2, 4))),
    "while_scale_zero_trips": (while_scale_until_norm, lambda r, t: (
        _f(r, t, 3, low=3.0, high=4.0),)),
    "data_dependent_bound": (data_dependent_bound, lambda r, t: (
        np.array([0.5, -0.3, 0.7, 0.2, -0.9], dtype=t),)),
    "shape_grows_in_loop": (shape_grows_in_loop, lambda r, t: (_f(r, t, 3), 3)),
    "scalar_rows": (scalar_rows, lambda r, t: (_f(r, t, 5),)),
    "counter_after_loop": (counter_after_loop, lambda r, t: (_f(r, t, 3), 4)),
    "aug_assign_loop": (aug_assign_loop, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 3))),
    "not_condition_pos": (not_condition, lambda r, t: (_f(r, t, 3, low=0.1),)),
    "not_condition_neg": (not_condition, lambda r, t: (_f(r, t, 3, high=-0.1),)),
    "defined_in_loop_branch": (defined_in_loop_branch, lambda r, t: (
        _rows_mixed_sign(r, t, 4, 3),)),
    "while_in_for": (while_in_for, lambda r, t: (_f(r, t, 4, 3, low=0.2),)),
    "break_in_while_in_for": (break_in_while_in_for, lambda r, t: (_f(r, t, 3, low=0.2), 3)),
    "reverse_index_pairs": (reverse_index_pairs, lambda r, t: (_f(r, t, 5, 2),)),
    "return_in_elif_in_loop_elif": (return_in_elif_in_loop, lambda r, t: (
        _f(r, t, 3, low=0.5), 10)),
    "return_in_elif_in_loop_none": (return_in_elif_in_loop, lambda r, t: (
        _f(r, t, 3, low=0.05, high=0.1), 2)),
    "break_at_first": (break_at_first, lambda r, t: (_f(r, t, 3, low=0.1),)),
    "break_after_two": (break_at_first, lambda r, t: (
        np.array([0.4, -0.5, -0.6], dtype=t),)),
    "minimum_in_loop": (minimum_in_loop, lambda r, t: (
        np.array([0.1, 0.45, 0.9, -0.3], dtype=t), 3)),
    "range_reverse_loop": (range_reverse_loop, lambda r, t: (_f(r, t, 4, 3),)),
    "tuple_literal_iter": (tuple_literal_iter, lambda r, t: (_f(r, t, 3),)),
    "iter_transposed": (iter_transposed, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 4))),
    "iter_slice": (iter_slice, lambda r, t: (_f(r, t, 4, 3),)),
    "shrink_in_loop": (shrink_in_loop, lambda r, t: (_f(r, t, 6),)),
    "rnn_broadcast_h0": (rnn_broadcast_h0, lambda r, t: (
        _f(r, t, 3), _f(r, t, 3, 3), _f(r, t, 2, 3), _f(r, t, 4, 2, 2))),
    "bias_broadcast_loop": (bias_broadcast_loop, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 3), 3)),
    "int_becomes_float": (int_becomes_float, lambda r, t: (_f(r, t, 3), 3)),
    "where_clip_loop": (where_clip_loop, lambda r, t: (
        np.array([0.3, -0.7, 1.1, -1.9], dtype=t), 3)),
    "return_in_while_true": (return_in_while_true, lambda r, t: (_f(r, t, 3, low=0.1),)),
    "return_in_while_in_for_hit": (return_in_while_in_for, lambda r, t: (
        np.array([[0.5, 0.2, 0.3], [0.4, 1.0, 0.2], [0.1, 0.1, 0.1]], dtype=t),)),
    "return_in_while_in_for_miss": (return_in_while_in_for, lambda r, t: (
        np.array([[0.5, 0.2, 0.3], [0.4, 0.5, 0.2], [0.1, 0.2, 0.1]], dtype=t),)),
    "static_if_in_loop_1": (static_if_in_loop, lambda r, t: (_f(r, t, 3), 1, 3)),
    "static_if_in_loop_0": (static_if_in_loop, lambda r, t: (_f(r, t, 3), 0, 3)),
    "nested_return_break_mix_break": (nested_return_break_mix, lambda r, t: (
        _f(r, t, 3, low=0.1), 4)),
    "nested_return_break_mix_return": (nested_return_break_mix, lambda r, t: (
        np.array([3.0, 3.1, 3.2], dtype=t), 4)),
    "loop_target_is_param": (loop_target_is_param, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 3))),
    "defined_in_loop_used_after": (defined_in_loop_used_after, lambda r, t: (
        _f(r, t, 4, 3), _f(r, t, 3))),
    "carried_temp": (carried_temp, lambda r, t: (_f(r, t, 4, 3),)),
    "arg_only_in_condition": (arg_only_in_condition, lambda r, t: (
        _f(r, t, 3, low=0.1), np.full(3, 2.0, dtype=t))),
    "while_for_break_mix": (while_for_break_mix, lambda r, t: (_f(r, t, 3, low=0.1), 3)),
    "ifexp_lazy_index_in": (ifexp_lazy_index, lambda r, t: (_f(r, t, 3, 2), 1)),
    "ifexp_lazy_index_out": (ifexp_lazy_index, lambda r, t: (_f(r, t, 3, 2), 5)),
    "path_dependent_shape_pos": (path_dependent_shape, lambda r, t: (
        _f(r, t, 3, low=0.1), _f(r, t, 3))),
    "path_dependent_shape_neg": (path_dependent_shape, lambda r, t: (
        _f(r, t, 3, high=-0.1), _f(r, t, 3))),
    "trip_dependent_shape": (trip_dependent_shape, lambda r, t: (
        _f(r, t, 3, low=0.5, high=1.0), _f(r, t, 3))),
    # once-broken corners (see the section above and the one before the vjp functions)
    "and_short_circuit": (and_short_circuit, lambda r, t: (_f(r, t, 4, 3, low=0.1),)),
    "or_short_circuit": (or_short_circuit, lambda r, t: (_f(r, t, 3, 2), 5)),
    "range_bound_reassigned": (range_bound_reassigned, lambda r, t: (_f(r, t, 3), 3)),
    "iterable_reassigned": (iterable_reassigned, lambda r, t: (_f(r, t, 3, 2),)),
    "enumerate_rows": (enumerate_rows, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 3))),
    "zip_rows": (zip_rows, lambda r, t: (_f(r, t, 4, 3), _f(r, t, 4, 3))),
    "swap_in_branch": (swap_in_branch, lambda r, t: (_f(r, t, 3, low=0.1), _f(r, t, 3))),
    "swap_in_loop": (swap_in_loop, lambda r, t: (_f(r, t, 3), _f(r, t, 3), 3)),
    "and_condition": (and_condition, lambda r, t: (_f(r, t, 3, low=0.1), _f(r, t, 3, low=0.1))),
    "while_and_condition": (while_and_condition, lambda r, t: (_f(r, t, 3, low=0.5), 20)),
    "chained_comparison": (chained_comparison, lambda r, t: (_f(r, t, 3, low=0.1),)),
}

# Cases also run in float32 (the rest are float64 only).
FLOAT32_CASES = (
    "if_else_sign_pos", "if_elif_else_mid", "multiple_returns_first", "range_n_sin",
    "range_shape_rows", "rnn", "rows_with_branch", "nested3", "nested_rows_range",
    "while_scale_until_norm", "while_break", "for_break_data_hit", "for_continue_data_rows",
    "early_return_loop_hit", "accumulate_dW", "counter_mod_selects_op", "range_n_zero",
    "while_in_for", "aug_assign_loop", "shape_grows_in_loop", "early_return_nested_hit",
    "rnn_broadcast_h0", "where_clip_loop", "while_for_break_mix", "return_in_while_in_for_hit",
    "path_dependent_shape_neg", "nested_break_inner", "if_elif_else_lo",
)

VJP_CASES = {
    "vjp_rnn_state": (vjp_rnn_state, lambda r, t: (_f(r, t, 2, 3), _f(r, t, 3, 3),
                                                   _f(r, t, 4, 2, 3))),
    "vjp_while_scale": (vjp_while_scale, lambda r, t: (_f(r, t, 2, 2, low=0.2),)),
    "vjp_branch_rows": (vjp_branch_rows, lambda r, t: (_rows_mixed_sign(r, t, 4, 3),
                                                       _f(r, t, 3))),
    "vjp_break": (vjp_break, lambda r, t: (_f(r, t, 3, low=0.3, high=0.6), 10)),
}


# == loops over a list argument (a pytree; dedicated test) =====================================


def mlp_list(Ws, bs, x):
    h = x
    for i in range(len(Ws)):
        h = np.tanh(h @ Ws[i] + bs[i])
    for W in Ws:
        h = h + 0.1 * np.tanh(h @ W)
    return np.sum(h * h)


# == long loops and larger models (used by dedicated tests, not in CASES) ======================


def decay_for(x, n):
    for i in range(n):
        x = x * 0.99999 + 0.001
    return np.sum(x * x)


def decay_while_counter(x, n):
    i = 0
    while i < n:
        x = x * 0.99999 + 0.001
        i = i + 1
    return np.sum(x * x)


def decay_while_float_counter(x):
    k = 0.0
    while k < 100000.0:
        x = x * 0.99999 + 0.001
        k = k + 1.0
    return np.sum(x * x)
