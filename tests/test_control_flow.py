"""Reverse mode through control flow agrees with torch autograd.

For every case of ``tests/corpus_control.py``: ``srcad.grad(fn, wrt=<all float args>)``
against torch autograd on a twin with the same math and the same control flow (conditions
evaluated eagerly with ``.item()``), with the seed's metric ``max|g - t| / (max|t| + 1e-12)``
below 1e-10 in float64 and 1e-5 in float32; gradients have their arguments' shapes and
dtypes; ``value_and_grad``'s value is exactly ``fn(*args)``. The twins themselves are checked
against central differences, so a disagreement points at srcad, not at the oracle.
``srcad.vjp`` of array-valued loop functions agrees with ``torch.autograd.grad``.

Also: a 100-step RNN, 100,000-iteration ``for`` and ``while`` loops (gradient against the
closed form), the shape of the generated code (stacks, trip counters, no pushes where the
backward needs nothing) and byte-identical regeneration. Torch is a test-only oracle.
"""

from __future__ import annotations

import corpus_control as C
import numpy as np
import pytest
import torch

import srcad
import srcad.api
from srcad.testing import numerical_grad, rel_error

torch.set_num_threads(1)

TOL = {np.float64: 1e-10, np.float32: 1e-5}


# == torch twins (same math, same control flow) ===============================================


def _item(t):
    return t.item() if isinstance(t, torch.Tensor) else t


def t_if_else_sign(x, w):
    if torch.sum(x).item() > 0:
        y = torch.sin(x) * w
    else:
        y = torch.cos(x) * w
    return torch.sum(y * x)


def t_if_elif_else(x, w):
    s = torch.mean(x).item()
    if s > 0.5:
        y = x * w
    elif s > -0.5:
        y = torch.tanh(x) * w * w
    else:
        y = torch.exp(x) + w
    return torch.sum(y ** 2)


def t_if_no_else(x, w):
    y = x * w
    if torch.max(x).item() > 0.5:
        y = y * x
    return torch.sum(y)


def t_nested_if(x, y):
    if torch.sum(x).item() > 0:
        if torch.sum(y).item() > 0:
            z = x * y
        else:
            z = x - y
    else:
        if torch.sum(y).item() > 0:
            z = torch.exp(x) * y
        else:
            z = x * x * y
    return torch.sum(z)


def t_branch_on_int_mode(x, W, mode):
    h = x @ W
    if mode == 0:
        out = torch.tanh(h)
    elif mode == 1:
        out = torch.clamp_min(h, 0.0)
    else:
        out = h * h
    return torch.sum(out)


def t_branch_unused_in_one_arm(x, w, v):
    if torch.sum(x).item() > 0:
        out = x * v
    else:
        out = x * w
    return torch.sum(out * out)


def t_ifexp_data(x):
    y = torch.sin(x) if torch.sum(x).item() > 0 else torch.cos(x)
    return torch.sum(y * y)


def t_ifexp_scale(x, n):
    scale = 2.0 if n > 2 else 0.5
    return torch.sum(torch.tanh(x * scale))


def t_multiple_returns(x, w):
    s = torch.sum(x * w)
    if s.item() > 1.0:
        return torch.sum(x ** 2 * w)
    elif s.item() < -1.0:
        return torch.sum(torch.sin(x) * w)
    return s * s


def t_early_return_before_loop(x, n):
    if torch.sum(x).item() < 0:
        return torch.sum(x * x)
    for i in range(n):
        x = torch.sin(x) + x
    return torch.sum(x)


def t_range_n_sin(x, n):
    for i in range(n):
        x = torch.sin(x) * 1.1 + 0.2
    return torch.sum(x * x)


def t_range_shape_rows(x, W):
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc + torch.sum(torch.tanh(x[i] @ W))
    return acc


def t_range_len(xs, w):
    s = 0.0
    for i in range(len(xs)):
        s = s + torch.sum(xs[i] * w) ** 2
    return s


def t_range_start_stop_step(x, w):
    y = w
    for i in range(1, 8, 3):
        y = y * torch.cos(x * i) + w
    return torch.sum(y)


def t_range_negative_step(x):
    y = x
    for i in range(6, 0, -2):
        y = torch.tanh(y * i) + x
    return torch.sum(y ** 2)


def t_range_step_pairs(x):
    s = 0.0
    for i in range(0, x.shape[0] - 1, 2):
        s = s + torch.sum(x[i] * x[i + 1])
    return s


def t_range_n_zero(x, n):
    y = x * 2.0
    for i in range(n):
        y = torch.exp(y) * x
    return torch.sum(y)


def t_counter_mod_selects_op(x, n):
    for i in range(n):
        if i % 3 == 0:
            x = torch.sin(x)
        elif i % 3 == 1:
            x = x * 1.5 + 0.1
        else:
            x = torch.tanh(x) * (i // 2 + 1)
    return torch.sum(x * x)


def t_counter_as_float(x, w, n):
    y = x
    for i in range(n):
        y = y + w * i
        y = torch.sin(y)
    return torch.sum(y)


def t_counter_floor_div_index(xs, w):
    s = 0.0
    for i in range(2 * xs.shape[0]):
        s = s + torch.sum(xs[i // 2] * w) * (i % 2 + 1)
    return s * s


def t_neighbours_in_loop(xs):
    s = 0.0
    for i in range(1, len(xs)):
        s = s + torch.sum((xs[i] - xs[i - 1]) ** 2)
    return s


def t_rows_sum(xs, w):
    s = 0.0
    for x in xs:
        s = s + torch.sum(torch.tanh(x * w))
    return s


def t_rnn(h, W, U, b, xs):
    for x in xs:
        h = torch.tanh(h @ W + x @ U + b)
    return torch.sum(h * h)


def t_rnn_relu_mean(h, W, U, xs):
    total = 0.0
    for x in xs:
        h = torch.clamp_min(h @ W + x @ U, 0.0) * 0.9 + h * 0.1
        total = total + torch.mean(h)
    return total


def t_rows_with_branch(xs, w):
    s = 0.0
    for x in xs:
        if torch.sum(x).item() > 0:
            s = s + torch.sum(x * w)
        else:
            s = s - torch.sum(x * x * w)
    return s


def t_horner_rows(c, x):
    y = torch.zeros_like(x)
    for ck in c:
        y = y * x + ck
    return torch.sum(y)


def t_loop_var_after_loop(xs, w):
    h = w
    for x in xs:
        h = torch.tanh(h * x)
    return torch.sum(h) + torch.sum(x * w)


def t_rows_ifexp(xs, w):
    s = 0.0
    for x in xs:
        t = torch.sum(torch.sin(x) * w) if torch.max(x).item() > 0 else torch.sum(x * w * w)
        s = s + t
    return s


def t_nested2(x, n, m):
    for i in range(n):
        for j in range(m):
            x = torch.sin(x + 0.1 * j) * 1.2
    return torch.sum(x)


def t_nested3(x, w):
    for i in range(2):
        for j in range(3):
            for k in range(2):
                x = torch.tanh(x * w + 0.1 * (i + j - k))
    return torch.sum(x * x)


def t_nested_rows_range(xs, W):
    s = 0.0
    for x in xs:
        h = x
        for k in range(3):
            h = torch.tanh(h @ W)
        s = s + torch.sum(h)
    return s


def t_nested_triangular(x, n):
    y = x
    for i in range(n):
        for j in range(i):
            y = torch.sin(y) + x * 0.5
    return torch.sum(y)


def t_nested_inner_branch(x, w, n):
    for i in range(n):
        for j in range(2):
            if torch.sum(x).item() > 0:
                x = x * w - 0.3
            else:
                x = torch.cos(x) + w
    return torch.sum(x * x)


def t_nested_rows_rows(A, B):
    s = 0.0
    for a in A:
        for b in B:
            s = s + torch.tanh(torch.sum(a * b))
    return s


def t_while_scale_until_norm(x):
    while torch.sqrt(torch.sum(x * x)).item() < C.THRESH:
        x = x * 1.3
    return torch.sum(x ** 3)


def t_while_newton_sqrt(a):
    y = a
    while torch.max(torch.abs(y * y - a)).item() > 1e-12:
        y = 0.5 * (y + a / y)
    return torch.sum(y * a)


def t_while_fixed_point_cos(x, c):
    y = x
    d = 1.0
    while d > 1e-9:
        y_new = torch.cos(y) * c
        d = torch.max(torch.abs(y_new - y)).item()
        y = y_new
    return torch.sum(y) + torch.sum(x * y)


def t_while_counter(x, n):
    i = 0
    while i < n:
        x = torch.tanh(x) * 1.5
        i = i + 1
    return torch.sum(x * x)


def t_while_break(x, w):
    while True:
        x = x * 1.2 + w
        if torch.sum(x).item() > 5.0:
            break
    return torch.sum(x * x)


def t_while_continue(x, n):
    i = 0
    while i < n:
        i = i + 1
        if i % 2 == 0:
            continue
        x = torch.sin(x) + x * 0.5
    return torch.sum(x)


def t_while_data_and_counter(x, w):
    i = 0
    while torch.sum(x).item() < 3.0:
        x = x + w * w
        i = i + 1
    return torch.sum(x * w) + i


def t_while_early_return(x):
    while torch.sum(x).item() < 100.0:
        x = x * 1.5 + 0.1
        if torch.max(x).item() > 4.0:
            return torch.sum(torch.sin(x))
    return torch.sum(x)


def t_for_break_data(x, n):
    for i in range(n):
        x = x * 1.5
        if torch.sum(x).item() > 10.0:
            break
    return torch.sum(x * x)


def t_for_continue_counter(x, n):
    for i in range(n):
        if i % 2 == 1:
            continue
        x = torch.tanh(x) + 0.1 * x
    return torch.sum(x)


def t_for_continue_data_rows(xs, w):
    s = 0.0
    for x in xs:
        if torch.sum(x).item() < 0:
            continue
        s = s + torch.sum(torch.exp(x * w))
    return s


def t_for_break_rows(xs, w):
    s = 0.0
    for x in xs:
        if torch.max(x).item() > 0.9:
            break
        s = s + torch.sum(x * w) ** 2
    return s


def t_nested_break_inner(x):
    for i in range(3):
        for j in range(4):
            if j > i:
                break
            x = torch.sin(x) * 1.1 + 0.05 * j
    return torch.sum(x * x)


def t_nested_continue_outer_break(x, w):
    for i in range(5):
        if i == 1:
            continue
        for j in range(3):
            x = torch.tanh(x * w) + 0.2
        if torch.sum(x).item() > 1e6:
            break
    return torch.sum(x)


def t_early_return_loop(x, n):
    for i in range(n):
        x = x * 1.3
        if torch.sum(x).item() > 5.0:
            return torch.sum(x ** 2)
    return torch.sum(x)


def t_early_return_nested(xs, W):
    h = torch.zeros(W.shape[1], dtype=W.dtype)
    for x in xs:
        for k in range(2):
            h = torch.tanh(h + x @ W)
            if torch.sum(h).item() > 1.5:
                return torch.sum(h * h)
    return torch.sum(h)


def t_early_return_rows_no_hit(xs, w):
    s = 0.0
    for x in xs:
        s = s + torch.sum(x * w)
        if s.item() > 1e9:
            return s
    return s * s


def t_accumulate_dW(W, xs):
    s = 0.0
    for x in xs:
        s = s + torch.sum(torch.tanh(x @ W) ** 2)
    return s


def t_power_of_x(x, n):
    p = torch.ones_like(x)
    for i in range(n):
        p = p * x
    return torch.sum(p)


def t_counter_not_needed(x, n):
    k = 0.0
    for i in range(n):
        k = k + 1.0
        x = x * 0.5 + 1.0
    return torch.sum(x * x) * k


def t_shift_not_needed(x, n):
    for i in range(n):
        x = x + 1.0
    return torch.sum(x * x)


def t_unrolled_gd(x, t, n):
    for i in range(n):
        x = x - 0.1 * (x - t) * 2.0
    return torch.sum((x - t) ** 2 + x)


def t_power_iteration(A, v, n):
    for i in range(n):
        v = A @ v
        v = v / torch.sqrt(torch.sum(v * v))
    return v @ A @ v


def t_softmax_steps(x, W, n):
    for i in range(n):
        z = x @ W
        z = z - torch.amax(z, dim=-1, keepdim=True)
        e = torch.exp(z)
        x = e / torch.sum(e, dim=-1, keepdim=True)
    return torch.sum(x * x)


def t_loop_mean_axis(x, w):
    for i in range(3):
        x = x - torch.mean(x, dim=0, keepdim=True) * w
    return torch.sum(x ** 2)


def t_two_carried_values(x, y, n):
    for i in range(n):
        x, y = torch.tanh(x + y), x * y
    return torch.sum(x + y * y)


def t_data_dependent_bound(x):
    k = int(torch.sum(x > 0).item())
    y = x
    for i in range(k):
        y = torch.sin(y) + x
    return torch.sum(y)


def t_shape_grows_in_loop(x, n):
    for i in range(n):
        x = torch.cat([x, x * 0.5])
    return torch.sum(x * x)


def t_scalar_rows(x):
    s = 0.0
    for v in x:
        s = s + v * v * v
    return s


def t_counter_after_loop(x, n):
    for i in range(n):
        x = torch.sin(x)
    return torch.sum(x) * i


def t_aug_assign_loop(xs, w):
    s = 0.0
    h = w + 0.0
    for x in xs:
        h = h * torch.tanh(x)
        s = s + torch.sum(h * x)
    return s


def t_not_condition(x):
    if not torch.sum(x).item() > 0:
        return torch.sum(x * x)
    return torch.sum(torch.exp(x))


def t_defined_in_loop_branch(xs):
    s = 0.0
    for x in xs:
        if torch.sum(x).item() > 0:
            t = x * 2.0
        else:
            t = x * x
        s = s + torch.sum(t * x)
    return s


def t_while_in_for(xs):
    s = 0.0
    for x in xs:
        while torch.sum(x * x).item() < 4.0:
            x = x * 1.5
        s = s + torch.sum(x)
    return s


def t_break_in_while_in_for(x, n):
    for i in range(n):
        while True:
            x = x * 1.1
            if torch.sum(x).item() > 2.0 * (i + 1):
                break
    return torch.sum(x * x)


def t_reverse_index_pairs(xs):
    s = 0.0
    n = len(xs)
    for i in range(n):
        s = s + torch.sum(xs[i] * xs[n - 1 - i])
    return s


def t_return_in_elif_in_loop(x, n):
    for i in range(n):
        x = x * 1.2
        if torch.sum(x).item() > 100.0:
            return torch.sum(x)
        elif torch.sum(x).item() > 3.0:
            return torch.sum(x * x)
    return torch.sum(torch.sin(x))


def t_break_at_first(x):
    for i in range(5):
        if torch.sum(x).item() > 0:
            break
        x = x * 2.0 + 0.3
    return torch.sum(x * x)


def t_minimum_in_loop(x, n):
    for i in range(n):
        x = torch.clamp_max(x, 0.5) + x * 0.5
    return torch.sum(x)


def t_swap_in_branch(a, b):
    if torch.sum(a).item() > 0:
        a, b = b, a
    return torch.sum(a * 2.0 + b)


def t_swap_in_loop(a, b, n):
    for i in range(n):
        a, b = b, a
    return torch.sum(a * 2.0 + b * b)


def t_and_condition(x, y):
    if torch.sum(x).item() > 0 and torch.sum(y).item() > 0:
        z = x * y
    else:
        z = x + y
    return torch.sum(z * z)


def t_while_and_condition(x, n):
    i = 0
    while i < n and torch.sum(x).item() < 10.0:
        x = x * 1.5
        i = i + 1
    return torch.sum(x * x)


def t_chained_comparison(x):
    s = torch.sum(x).item()
    if 0 < s < 10:
        return torch.sum(torch.sin(x))
    return torch.sum(x)


def t_range_reverse_loop(xs):
    h = xs[0] * 0.0
    for i in range(len(xs) - 1, -1, -1):
        h = torch.tanh(h + xs[i])
    return torch.sum(h)


def t_tuple_literal_iter(x):
    for c in (0.5, 1.0, 2.0):
        x = torch.sin(x * c)
    return torch.sum(x)


def t_iter_transposed(x, w):
    s = 0.0
    for col in x.T:
        s = s + torch.sum(torch.tanh(col * w))
    return s


def t_iter_slice(x):
    s = 0.0
    for r in x[1:]:
        s = s + torch.sum(r * r)
    return s


def t_shrink_in_loop(x):
    s = 0.0
    for i in range(3):
        x = x[1:] * 1.5
        s = s + torch.sum(x * x)
    return s


def t_rnn_broadcast_h0(h, W, U, xs):
    for x in xs:
        h = torch.tanh(h @ W + x @ U)
    return torch.sum(h * h)


def t_bias_broadcast_loop(x, b, n):
    for i in range(n):
        x = torch.tanh(x + b)
    return torch.sum(x)


def t_int_becomes_float(x, n):
    c = 0
    for i in range(n):
        c = c + 0.5
        x = x * c
    return torch.sum(x)


def t_where_clip_loop(x, n):
    for i in range(n):
        x = torch.where(x > 0, x * 1.5, x * 0.5)
        x = torch.clamp(x, -2.0, 2.0)
    return torch.sum(x * x)


def t_return_in_while_true(x):
    while True:
        x = x * 1.5
        if torch.sum(x).item() > 5.0:
            return torch.sum(x * x)


def t_return_in_while_in_for(xs):
    s = 0.0
    for x in xs:
        while torch.sum(x).item() < 2.0:
            x = x * 1.5 + 0.1
            if torch.max(x).item() > 1.5:
                return s + torch.sum(x)
        s = s + torch.sum(x)
    return s


def t_static_if_in_loop(x, mode, n):
    for i in range(n):
        if mode == 1:
            x = torch.sin(x)
        else:
            x = torch.cos(x)
    return torch.sum(x)


def t_nested_return_break_mix(x, n):
    for i in range(n):
        for j in range(n):
            x = x * 1.1
            if torch.sum(x).item() > 10.0:
                return torch.sum(x)
            if j > i:
                break
        if torch.sum(x).item() > 8.0:
            break
    return torch.sum(x * x)


def t_loop_target_is_param(x, w):
    for w in x:  # noqa: PLR1704
        w = w * 2.0
    return torch.sum(w * w)


def t_defined_in_loop_used_after(xs, w):
    for x in xs:
        t = torch.tanh(x * w)
    return torch.sum(t * w)


def t_carried_temp(xs):
    prev = xs[0] * 0.0
    s = 0.0
    for r in xs:
        cur = r * 2.0
        s = s + torch.sum(cur * prev)
        prev = cur
    return s + torch.sum(prev)


def t_arg_only_in_condition(x, t):
    while torch.sum(x).item() < torch.sum(t).item():
        x = x * 1.5
    return torch.sum(x * x)


def t_while_for_break_mix(x, n):
    i = 0
    while i < n:
        for j in range(3):
            if j == 0:
                x = x * 1.1
            elif torch.sum(x).item() > 5.0:
                break
            else:
                x = torch.sin(x) + x
        i = i + 1
    return torch.sum(x)


def t_ifexp_lazy_index(xs, k):
    y = xs[k] if k < len(xs) else xs[0]
    return torch.sum(y * y)


def t_and_short_circuit(xs):
    i = 0
    s = 0.0
    while i < len(xs) and torch.sum(xs[i]).item() > 0:
        s = s + torch.sum(xs[i] ** 2)
        i = i + 1
    return s


def t_or_short_circuit(xs, k):
    if k >= len(xs) or torch.sum(xs[k]).item() > 0:
        y = xs[0] * 2.0
    else:
        y = xs[1]
    return torch.sum(y * y)


def t_range_bound_reassigned(x, n):
    for i in range(n):
        x = torch.sin(x) * 1.5
        n = n - 1
    return torch.sum(x)


def t_iterable_reassigned(xs):
    s = 0.0
    for x in xs:
        s = s + torch.sum(x * x)
        xs = xs * 2.0
    return s + torch.sum(xs)


def t_enumerate_rows(xs, w):
    s = 0.0
    for i, x in enumerate(xs):
        s = s + torch.sum(x * w) * i
    return s


def t_zip_rows(xs, ys):
    s = 0.0
    for x, y in zip(xs, ys):
        s = s + torch.sum(x * y)
    return s


def t_path_dependent_shape(x, w):
    if torch.sum(x).item() > 0:
        y = x * 2.0
    else:
        y = x[:, None] * torch.ones(3, dtype=x.dtype)
    return torch.sum(y * w)


def t_trip_dependent_shape(x, w):
    while torch.sum(x).item() < 5.0:
        x = torch.cat([x, x * 0.5])
    return torch.sum(x) * torch.sum(w * w)


def t_vjp_rnn_state(h, W, xs):
    for x in xs:
        h = torch.tanh(h @ W + x)
    return h


def t_vjp_while_scale(x):
    while torch.sum(x * x).item() < 9.0:
        x = x * 1.25
    return x * x


def t_vjp_branch_rows(xs, w):
    acc = w
    for x in xs:
        if torch.sum(x).item() > 0:
            acc = acc * torch.tanh(x)
        else:
            acc = acc + torch.sin(x)
    return acc


def t_vjp_break(x, n):
    for i in range(n):
        x = torch.sin(x) * 2.0
        if torch.max(torch.abs(x)).item() > 1.5:
            break
    return x


def twin_of(fn):
    return globals()[f"t_{fn.__name__}"]


# == helpers ==================================================================================


def _is_float(a) -> bool:
    return isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating)


def _to_torch(args):
    return [torch.tensor(a, requires_grad=_is_float(a)) if isinstance(a, np.ndarray) else a
            for a in args]


def torch_grads(twin, args, cotangent=None):
    """Value and gradients (w.r.t. every float array argument) of a torch twin, as numpy."""
    ts = _to_torch(args)
    out = twin(*ts)
    wrt = [t for t, a in zip(ts, args) if _is_float(a)]
    grad_outputs = None if cotangent is None else torch.tensor(cotangent)
    grads = torch.autograd.grad(out, wrt, grad_outputs=grad_outputs, allow_unused=True)
    grads = [np.zeros_like(a) if g is None else g.numpy()
             for g, a in zip(grads, [a for a in args if _is_float(a)])]
    return out.detach().numpy(), grads


def make_args(name, dtype, seed=0, cases=C.CASES):
    fn, make = cases[name]
    return fn, make(np.random.default_rng(seed), dtype)


def float_positions(args):
    return tuple(i for i, a in enumerate(args) if _is_float(a))


def assert_grads_match(name, args, wrt, grads, expected, dtype):
    assert isinstance(grads, tuple) and len(grads) == len(wrt)
    for pos, g, t in zip(wrt, grads, expected):
        a = args[pos]
        assert np.shape(g) == a.shape, f"{name} d{pos}: shape {np.shape(g)} != {a.shape}"
        assert np.result_type(g) == a.dtype, f"{name} d{pos}: dtype {np.result_type(g)}"
        err = rel_error(np.asarray(g, dtype=np.float64), t.astype(np.float64))
        assert err < TOL[dtype], f"{name} d{pos} ({np.dtype(dtype).name}): rel error {err:.3g}"


# == corpus tests =============================================================================

# known srcad bugs: (case, dtype or None for both) -> reason
XFAIL: dict = {}


def _xfail_marks(name, dtype):
    reason = XFAIL.get((name, dtype)) or XFAIL.get((name, None))
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def _cases():
    for name in sorted(C.CASES):
        dtypes = [np.float64] + ([np.float32] if name in C.FLOAT32_CASES else [])
        for dtype in dtypes:
            yield pytest.param(name, dtype, id=f"{name}-{np.dtype(dtype).name}",
                               marks=_xfail_marks(name, dtype))


CASES = list(_cases())


def test_corpus_is_large_enough():
    functions = {fn for fn, _ in C.CASES.values()}
    assert len(functions) >= 45
    assert all(f"t_{fn.__name__}" in globals() for fn in functions)
    assert set(C.FLOAT32_CASES) <= set(C.CASES)


@pytest.mark.parametrize("name", sorted(C.CASES))
def test_twin_agrees_with_finite_differences(name):
    """The oracle check: each torch twin's gradient matches central differences of fn."""
    fn, args = make_args(name, np.float64)
    wrt = float_positions(args)
    value, expected = torch_grads(twin_of(fn), args)
    assert rel_error(np.float64(fn(*args)), value.astype(np.float64)) < 1e-12
    numeric = numerical_grad(fn, args, wrt=wrt, h=1e-5)
    for pos, n, t in zip(wrt, numeric, expected):
        assert rel_error(t, n) < 1e-6, f"{name} d{pos}: twin disagrees with finite differences"


@pytest.mark.parametrize("name, dtype", CASES)
def test_grad_agrees_with_torch(name, dtype):
    fn, args = make_args(name, dtype)
    wrt = float_positions(args)
    grads = srcad.grad(fn, wrt=wrt)(*args)
    _, expected = torch_grads(twin_of(fn), args)
    assert_grads_match(name, args, wrt, grads, expected, dtype)


@pytest.mark.parametrize("name, dtype", CASES)
def test_value_and_grad_value_is_fn(name, dtype):
    fn, args = make_args(name, dtype, seed=1)
    wrt = float_positions(args)
    value, grads = srcad.value_and_grad(fn, wrt=wrt)(*args)
    expected = fn(*args)
    assert np.result_type(value) == np.result_type(expected)
    np.testing.assert_array_equal(value, expected)
    _, t_grads = torch_grads(twin_of(fn), args)
    assert_grads_match(name, args, wrt, grads, t_grads, dtype)


VJP_XFAIL: dict = {}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", [
    pytest.param(n, marks=[pytest.mark.xfail(strict=True, reason=VJP_XFAIL[n])]
                 if n in VJP_XFAIL else []) for n in sorted(C.VJP_CASES)])
def test_vjp_agrees_with_torch(name, dtype):
    fn, args = make_args(name, dtype, seed=3, cases=C.VJP_CASES)
    out, pullback = srcad.vjp(fn, *args)
    np.testing.assert_array_equal(out, fn(*args))
    rng = np.random.default_rng(4)
    ct = rng.standard_normal(np.shape(out)).astype(np.result_type(out))
    grads = pullback(ct)
    assert isinstance(grads, tuple) and len(grads) == len(args)
    _, expected = torch_grads(twin_of(fn), args, cotangent=ct)
    expected = iter(expected)
    for i, (a, g) in enumerate(zip(args, grads)):
        if not _is_float(a):
            assert g is None
            continue
        t = next(expected)
        assert np.shape(g) == a.shape and np.result_type(g) == a.dtype
        err = rel_error(np.asarray(g, dtype=np.float64), t.astype(np.float64))
        assert err < TOL[dtype], f"{name} d{i}: rel error {err:.3g}"


# == a 100-step RNN ==========================================================================


def test_rnn_100_steps_agrees_with_torch():
    rng = np.random.default_rng(7)
    batch, hidden, inp, steps = 3, 8, 4, 100
    h0 = rng.uniform(-1, 1, (batch, hidden))
    W = rng.uniform(-1, 1, (hidden, hidden)) * 0.4
    U = rng.uniform(-1, 1, (inp, hidden)) * 0.5
    b = rng.uniform(-0.2, 0.2, hidden)
    xs = rng.uniform(-1, 1, (steps, batch, inp))
    args = (h0, W, U, b, xs)
    value, grads = srcad.value_and_grad(C.rnn, wrt=(0, 1, 2, 3))(*args)
    t_value, expected = torch_grads(t_rnn, args)
    assert value == C.rnn(*args)
    assert rel_error(np.float64(value), t_value) < 1e-12
    for g, t, name in zip(grads, expected, ["h0", "W", "U", "b"]):
        assert rel_error(g, t) < 1e-10, name
    assert np.abs(grads[1]).max() > 1e-3  # the gradient does not vanish to nothing


# == 100,000-iteration loops =================================================================

LONG = 100_000
DECAY, SHIFT = 0.99999, 0.001


def _decay_closed_form(x, n):
    """x_n = a^n x + c (1 - a^n) / (1 - a); d sum(x_n^2)/dx = 2 x_n a^n."""
    an = DECAY ** n
    xn = an * x + SHIFT * (1 - an) / (1 - DECAY)
    return 2 * xn * an


LONG_XFAIL: dict = {}


@pytest.mark.parametrize("which", [
    pytest.param(w, marks=[pytest.mark.xfail(strict=True, reason=LONG_XFAIL[w])]
                 if w in LONG_XFAIL else [])
    for w in ["for", "while_counter", "while_float_counter"]])
def test_long_loop_completes_with_right_gradient(which):
    x = np.array([0.5, -1.0, 2.0])
    if which == "for":
        fn, args = C.decay_for, (x, LONG)
    elif which == "while_counter":
        fn, args = C.decay_while_counter, (x, LONG)
    else:
        fn, args = C.decay_while_float_counter, (x,)
    value, g = srcad.value_and_grad(fn)(*args)
    assert value == fn(*args)
    assert g.shape == x.shape and g.dtype == x.dtype
    # closed form in exact arithmetic; 1e5 roundings of the recurrence stay far below 1e-8
    assert rel_error(g, _decay_closed_form(x, LONG)) < 1e-8


# == the generated code ======================================================================


def _source_after_call(fn, args, wrt=0):
    g = srcad.grad(fn, wrt=wrt)
    g(*args)
    return srcad.source(g)


def test_rnn_source_uses_stacks():
    _, args = make_args("rnn", np.float64)
    src = _source_after_call(C.rnn, args, wrt=(0, 1, 2, 3))
    assert "stack_h.push(h)" in src
    assert "h = stack_h.pop()" in src
    # the loop runs backwards over the rows in the backward sweep
    assert "reversed(" in src


def test_while_source_counts_trips():
    src = _source_after_call(C.while_scale_until_norm, (np.array([0.5, 0.2, 0.1]),))
    assert "trips_L" in src
    assert "trips_L" in src.split("# --- backward ---")[1]


def test_data_dependent_break_records_trips_or_pushes():
    """A ``for`` that may break early must remember how far it got for the backward."""
    src = _source_after_call(C.for_break_data, (np.array([0.5, 0.6, 0.7]), 20))
    forward = src.split("# --- backward ---")[0]
    assert "trips_L" in forward or ".push(" in forward


def test_needed_overwrite_is_pushed():
    # sin needs its input in the backward: the value overwritten each iteration is saved
    src = _source_after_call(C.range_n_sin, (np.ones((3, 2)), 4))
    assert ".push(" in src and ".pop()" in src


PUSH_XFAIL: dict = {}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=[pytest.mark.xfail(strict=True, reason=PUSH_XFAIL[n])]
                 if n in PUSH_XFAIL else [])
    for n in ["shift_not_needed", "counter_not_needed", "decay_for"]])
def test_overwrite_not_needed_pushes_nothing(name):
    """``x = x + 1.0`` / ``x * 0.5 + 1.0`` in a loop: the backward of add-a-constant and
    multiply-by-a-constant needs no primal value, so no iteration's ``x`` is needed; only the
    final ``x`` (for ``np.sum(x * x)``), which is live after the loop anyway."""
    fn = getattr(C, name)
    src = _source_after_call(fn, (np.array([0.5, -1.0, 2.0]), 5))
    assert "push" not in src, src


def test_regeneration_is_byte_identical():
    for name in ["rnn", "for_break_data_hit", "while_newton_sqrt", "nested_inner_branch",
                 "early_return_nested_hit", "counter_mod_selects_op"]:
        fn, args = make_args(name, np.float64)
        wrt = float_positions(args)
        sources = []
        for _ in range(2):
            srcad.api._IR_CACHE.clear()
            sources.append(_source_after_call(fn, args, wrt=wrt))
        assert sources[0] == sources[1], name


def test_nested_while_trip_counts_go_through_a_stack():
    """A while inside a for runs a different number of times per outer iteration."""
    xs = np.random.default_rng(0).uniform(0.2, 1.0, (4, 3))
    src = _source_after_call(C.while_in_for, (xs,))
    forward, backward = src.split("# --- backward ---")
    assert "stack_trips_L" in forward and ".push(trips_L" in forward
    assert ".pop()" in backward


# == one transformed function, many paths ====================================================

PATHS = {
    # name: (fn, [args taking different branches / trip counts, in call order])
    "if_else_sign": (C.if_else_sign, [
        (np.array([0.5, 0.2, 0.1]), np.array([1.0, -2.0, 0.5])),
        (np.array([-0.5, -0.2, 0.1]), np.array([1.0, -2.0, 0.5])),
        (np.array([0.6, 0.3, 0.1]), np.array([0.3, 0.2, 0.5]))]),
    "if_elif_else": (C.if_elif_else, [
        (np.array([-0.1, 0.1, 0.2]), np.array([1.0, 0.5, 2.0])),
        (np.array([1.0, 0.9, 1.1]), np.array([1.0, 0.5, 2.0])),
        (np.array([-1.0, -0.9, -1.1]), np.array([1.0, 0.5, 2.0]))]),
    "while_scale_until_norm": (C.while_scale_until_norm, [
        (np.array([0.5, 0.2, 0.1]),), (np.array([3.0, 3.0, 3.0]),),
        (np.array([1.0, 1.2, 0.9]),)]),
    "for_break_data": (C.for_break_data, [
        (np.array([0.5, 0.6, 0.7]), 20), (np.array([0.1, 0.1, 0.1]), 20),
        (np.array([0.5, 0.6, 0.7]), 2)]),
    "early_return_loop": (C.early_return_loop, [
        (np.array([0.5, 0.6, 0.7]), 20), (np.array([0.5, 0.6, 0.7]), 1),
        (np.array([2.0, 2.0, 2.0]), 20)]),
    "rows_with_branch": (C.rows_with_branch, [
        (np.array([[1.0, 0.5], [-1.0, -0.5]]), np.array([0.3, 0.7])),
        (np.array([[-1.0, -0.5], [1.0, 0.5], [2.0, 0.1]]), np.array([0.3, 0.7]))]),
    # a value whose shape depends on the path taken, with the same argument shapes
    "path_dependent_shape": (C.path_dependent_shape, [
        (np.array([-1.0, -2.0, -3.0]), np.array([0.5, 1.0, 2.0])),
        (np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 2.0]))]),
    "path_dependent_shape_other_order": (C.path_dependent_shape, [
        (np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.0, 2.0])),
        (np.array([-1.0, -2.0, -3.0]), np.array([0.5, 1.0, 2.0]))]),
    "trip_dependent_shape": (C.trip_dependent_shape, [
        (np.array([10.0, 20.0, 30.0]), np.array([0.5, 1.0, 2.0])),
        (np.array([0.5, 1.0, 1.5]), np.array([0.5, 1.0, 2.0]))]),
}

PATHS_XFAIL: dict = {}  # (fixed: shapes are specialised only where every path agrees)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=[pytest.mark.xfail(strict=True, reason=PATHS_XFAIL[n])]
                 if n in PATHS_XFAIL else []) for n in sorted(PATHS)])
def test_one_transform_serves_every_path(name):
    """The first call specialises the code; later calls that branch or loop differently
    (and, for ints, a different trip count) must still be right."""
    fn, calls = PATHS[name]
    g = srcad.value_and_grad(fn, wrt=float_positions(calls[0]))
    for args in calls:
        wrt = float_positions(args)
        value, grads = g(*args)
        assert value == fn(*args)
        _, expected = torch_grads(twin_of(fn), args)
        assert_grads_match(name, args, wrt, grads, expected, np.float64)


# == odds and ends ===========================================================================


def test_zero_rows_python_float_result():
    """``s = 0.0; for x in xs: ...`` over an empty xs returns the Python float; the
    gradients are zeros of the arguments' shapes."""
    xs, w = np.zeros((0, 3)), np.array([0.5, -1.0, 2.0])
    value, (dxs, dw) = srcad.value_and_grad(C.rows_sum, wrt=(0, 1))(xs, w)
    assert value == 0.0
    assert dxs.shape == (0, 3) and dxs.dtype == xs.dtype
    assert dw.shape == (3,) and dw.dtype == w.dtype and not dw.any()


@pytest.mark.parametrize("name", ["vjp_rnn_state", "vjp_break"])
def test_pullback_can_be_called_twice(name):
    """JAX semantics: a pullback is a function of the cotangent and can be called again
    (a Jacobian row by row)."""
    fn, args = make_args(name, np.float64, seed=3, cases=C.VJP_CASES)
    out, pullback = srcad.vjp(fn, *args)
    u = np.random.default_rng(0).standard_normal(np.shape(out))
    first = pullback(u)
    second = pullback(2.0 * u)
    for a, g1, g2 in zip(args, first, second):
        if _is_float(a):
            np.testing.assert_allclose(g2, 2.0 * g1, rtol=1e-12, atol=0)


def test_loop_over_a_list_of_weights():
    """``for W in Ws`` and ``Ws[i]`` over a list argument: the gradient is a list too."""
    rng = np.random.default_rng(5)
    Ws = [rng.uniform(-1, 1, (3, 3)) for _ in range(3)]
    bs = [rng.uniform(-1, 1, 3) for _ in range(3)]
    x = rng.uniform(-1, 1, (2, 3))
    dWs, dbs = srcad.grad(C.mlp_list, wrt=(0, 1))(Ws, bs, x)
    assert isinstance(dWs, list) and len(dWs) == 3 and isinstance(dbs, list)

    tWs = [torch.tensor(W, requires_grad=True) for W in Ws]
    tbs = [torch.tensor(b, requires_grad=True) for b in bs]
    h = torch.tensor(x)
    for i in range(len(tWs)):
        h = torch.tanh(h @ tWs[i] + tbs[i])
    for W in tWs:
        h = h + 0.1 * torch.tanh(h @ W)
    expected = torch.autograd.grad(torch.sum(h * h), [*tWs, *tbs])
    for g, t in zip([*dWs, *dbs], expected):
        assert g.shape == t.shape
        assert rel_error(g, t.numpy()) < 1e-10
