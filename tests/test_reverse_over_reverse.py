"""Reverse over reverse: srcad differentiates its own gradients through loops, branches and calls.

The generated code of ``srcad.grad(f)`` keeps values on stacks where f loops; reverse mode over
that code pushes a cotangent where it pops and pops one where it pushes
(srcad/transform/stacks.py). Checked here:

* The control-flow corpus (tests/corpus_control.py, every case, every float argument i):
  ``srcad.vjp(srcad.grad(f, wrt=i), *args)(v)`` -- the gradient of ``<grad_i f, v>`` by
  reverse mode over the generated reverse-mode code -- against forward over reverse
  (``srcad.jvp(srcad.grad(f), ...)``), torch's double backward on the twins of
  tests/test_control_flow.py, and central differences of ``srcad.grad(f)``.
* Every corpus function called from a scalar wrapper along a direction,
  ``along(t, *args, *d) = f(x + t * d, ...)`` (module-level defs, generated into a file):
  ``srcad.grad(srcad.grad(along))`` is ``d'Hd`` through a call to a function whose loops keep
  their stacks in its saved values (``f_fwd`` fills them, ``f_bwd`` empties them) -- against
  ``jvp(grad(along))``, central differences and torch; third derivatives for a few of them
  against central differences (for all: ``pytest -m slow`` or ``SRCAD_SLOW=1``).
* Hand-written scalar functions: a while loop whose trip count depends on the data, an early
  return, break in nested loops, a branch in a loop, a loop in a called function called in a
  loop, nested calls, a loop over a list of parameters (and the mixed partial w.r.t. the
  list), a relu whose mask is all the called function's backward reads of a popped value --
  against torch's double backward; third and fourth derivatives against central differences,
  ``jvp(grad(grad(f)))`` and torch.
* Regressions found on the way: a tuple literal passed to a user function lost its
  derivative (zeros, in both transforms); forward over reverse through a called function
  with a loop crashed; a pullback of ``vjp(grad(f))`` can be called twice.
* The second-order source: cotangent stacks named after the stacks, deterministic.

Metric: ``max|a - b| / (max|b| + 1e-12)``, float64; central differences with h = 1e-5 are
compared with an absolute floor (``|a - b| <= 1e-6 (1 + max|b|)``). Torch is a test-only
oracle.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys

import corpus_control as C
import numpy as np
import pytest
import test_control_flow as TCF  # torch twins of the corpus
import torch

import srcad
from srcad import runtime
from srcad.testing import rel_error

torch.set_num_threads(1)

TOL = 1e-8  # srcad against srcad and torch
FD_H = 1e-5


def _is_float(a) -> bool:
    return isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating)


def assert_close(actual, expected, what, tol=TOL):
    assert np.shape(actual) == np.shape(expected), (
        f"{what}: shape {np.shape(actual)} != {np.shape(expected)}")
    err = rel_error(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64))
    assert err < tol, f"{what}: rel error {err:.3g}"


def assert_fd_close(actual, fd, what):
    actual, fd = np.asarray(actual, dtype=np.float64), np.asarray(fd, dtype=np.float64)
    assert np.shape(actual) == np.shape(fd), what
    gap = np.max(np.abs(actual - fd), initial=0.0)
    assert gap <= 1e-6 * (1.0 + np.max(np.abs(fd), initial=0.0)), (
        f"{what}: differs from central differences by {gap:.3g}")


def corpus_args(name, seed=0):
    fn, make = C.CASES[name]
    return fn, make(np.random.default_rng(seed), np.float64)


def torch_hv(twin, args, i, v):
    """d/d(args) of <grad_i twin, v> by torch's double backward, for every float argument."""
    ts = [torch.tensor(a, requires_grad=_is_float(a)) if isinstance(a, np.ndarray) else a
          for a in args]
    floats = [k for k, a in enumerate(args) if _is_float(a)]
    wrt = [ts[k] for k in floats]
    grads = torch.autograd.grad(twin(*ts), wrt, create_graph=True, allow_unused=True)
    g = grads[floats.index(i)]
    if g is None or not g.requires_grad:
        return [np.zeros_like(args[k]) for k in floats]
    hv = torch.autograd.grad(g, wrt, grad_outputs=torch.tensor(v), allow_unused=True)
    return [np.zeros_like(args[k]) if h is None else h.numpy() for h, k in zip(hv, floats)]


# =============================================================================================
# the corpus: the gradient of <grad_i f, v>, reverse over reverse
# =============================================================================================


@pytest.mark.parametrize("name", sorted(C.CASES))
def test_corpus_vjp_of_grad(name):
    fn, args = corpus_args(name)
    floats = [k for k, a in enumerate(args) if _is_float(a)]
    rng = np.random.default_rng(1)
    grad_all = srcad.grad(fn, wrt=tuple(floats))
    for i in floats:
        v = rng.standard_normal(args[i].shape)
        g_i, pullback = srcad.vjp(srcad.grad(fn, wrt=i), *args)
        np.testing.assert_array_equal(g_i, srcad.grad(fn, wrt=i)(*args))
        hv = pullback(v)
        assert len(hv) == len(args)
        tangents = tuple(v if k == i else (np.zeros_like(a) if _is_float(a) else None)
                         for k, a in enumerate(args))
        _, hv_fwd = srcad.jvp(grad_all, args, tangents)
        want = torch_hv(TCF.twin_of(fn), args, i, v)

        def at(step):
            moved = list(args)
            moved[i] = args[i] + step * v
            return grad_all(*moved)

        fd = [(p - m) / (2 * FD_H) for p, m in zip(at(FD_H), at(-FD_H))]
        for k, j in enumerate(floats):
            what = f"{name}: d/d{j} <grad_{i} f, v>"
            assert np.result_type(hv[j]) == np.float64
            assert_close(hv[j], hv_fwd[k], f"{what} (against forward over reverse)")
            assert_close(hv[j], want[k], f"{what} (against torch)")
            assert_fd_close(hv[j], fd[k], what)
        for k, a in enumerate(args):
            if not _is_float(a):
                assert hv[k] is None


# =============================================================================================
# every corpus function called from a scalar wrapper: grad(grad(along))
# =============================================================================================


def _along_source() -> str:
    lines = ["import numpy as np", ""]
    names = sorted({fn.__name__ for fn, _ in C.CASES.values()})
    lines.append(f"from corpus_control import {', '.join(names)}")
    lines.append("")
    for name in sorted(C.CASES):
        fn, args = corpus_args(name)
        params = list(inspect.signature(fn).parameters)
        floats = [k for k, a in enumerate(args) if _is_float(a)]
        ds = [f"d_{params[k]}" for k in floats]
        call = ", ".join(f"{p} + t_ * d_{p}" if k in floats else p
                         for k, p in enumerate(params))
        lines += ["", f"def along_{name}(t_, {', '.join(params + ds)}):",
                  f"    return {fn.__name__}({call})", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def along(tmp_path_factory):
    """A module of wrappers, one per corpus case, written to a file (srcad reads source)."""
    path = tmp_path_factory.mktemp("along") / "along_corpus.py"
    path.write_text(_along_source())
    spec = importlib.util.spec_from_file_location("along_corpus", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["along_corpus"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("along_corpus", None)


def along_args(name):
    _, args = corpus_args(name)
    rng = np.random.default_rng(1)
    ds = [rng.standard_normal(a.shape) for a in args if _is_float(a)]
    return (np.float64(0.0), *args, *ds)


def torch_along_second(name, full):
    fn, args = corpus_args(name)
    floats = [k for k, a in enumerate(args) if _is_float(a)]
    ds = full[1 + len(args):]
    t = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    ts = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    for k, d in zip(floats, ds):
        ts[k] = ts[k] + t * torch.tensor(d)
    (g,) = torch.autograd.grad(TCF.twin_of(fn)(*ts), t, create_graph=True)
    if not g.requires_grad:
        return 0.0
    (h,) = torch.autograd.grad(g, t)
    return h.item()


@pytest.mark.parametrize("name", sorted(C.CASES))
def test_corpus_grad_of_grad_through_a_call(name, along):
    w = getattr(along, f"along_{name}")
    full = along_args(name)
    g = srcad.grad(w)
    h = srcad.grad(g)(*full)
    assert np.shape(h) == () and np.result_type(h) == np.float64
    tangents = (np.float64(1.0),) + tuple(np.zeros_like(a) if _is_float(a) else None
                                          for a in full[1:])
    _, h_fwd = srcad.jvp(g, full, tangents)
    fd = (g(np.float64(FD_H), *full[1:]) - g(np.float64(-FD_H), *full[1:])) / (2 * FD_H)
    assert_close(h, h_fwd, f"{name}: d'Hd (against forward over reverse)")
    assert_close(h, torch_along_second(name, full), f"{name}: d'Hd (against torch)")
    assert_fd_close(h, fd, f"{name}: d'Hd")


def _third_derivative_through_a_call(name, along):
    w = getattr(along, f"along_{name}")
    full = along_args(name)
    g2 = srcad.grad(srcad.grad(w))
    h3 = srcad.grad(g2)(*full)
    step = 1e-4
    fd = (g2(np.float64(step), *full[1:]) - g2(np.float64(-step), *full[1:])) / (2 * step)
    assert abs(h3 - fd) <= 1e-5 * (1e-3 + abs(fd)), f"{name}: third derivative {h3} vs {fd}"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(C.CASES))
def test_corpus_third_derivative_through_a_call(name, along, request):
    """Every case (~40 s): runs when asked, ``pytest -m slow`` or ``SRCAD_SLOW=1``."""
    if "slow" not in (request.config.getoption("markexpr") or "") \
            and not os.environ.get("SRCAD_SLOW"):
        pytest.skip("third derivatives of the whole corpus: ask with -m slow or SRCAD_SLOW=1")
    _third_derivative_through_a_call(name, along)


@pytest.mark.parametrize("name", ["rnn", "while_newton_sqrt", "for_break_data_hit",
                                  "nested_return_break_mix_break", "rows_with_branch",
                                  "counter_after_loop", "while_in_for", "multiple_returns_first"])
def test_third_derivative_through_a_call(name, along):
    _third_derivative_through_a_call(name, along)


# =============================================================================================
# hand-written scalar functions, against torch
# =============================================================================================


def while_data_trips(x):
    while x < 4.0:
        x = x * 1.3 + np.sin(x)
    return np.log(x) * x


def early_return_in_loop(x, n):
    for i in range(n):
        x = np.tanh(x) + 0.5 * x
        if x > 1.2:
            return x * x
    return x ** 3


def break_nested(x):
    s = x
    for i in range(4):
        for j in range(3):
            s = np.sin(s) + x * 0.3
            if s > 0.9:
                break
    return s * x


def branch_in_loop(x, n):
    for i in range(n):
        if x > 0.5:
            x = x * x - 0.2
        else:
            x = np.exp(x) * 0.6
    return x


def damp(x, n):
    for i in range(n):
        x = np.cos(x) * 0.9 + 0.1 * x
    return x


def loop_in_call_in_loop(x, n):
    y = x
    for k in range(3):
        y = damp(y, n) * x
    return y


def twice_damped(x, n):
    return damp(x, n) * damp(x * 0.5, n + 1)


def outer_call(x, n):
    s = 0.0
    for k in range(2):
        s = s + loop_in_call_in_loop(x + s, n)
    return s


def over_list(s, Ws, x):
    h = x
    for W in Ws:
        h = np.tanh(s * (h @ W))
    return np.sum(h * h)


def relu_steps(x, n):
    """The called function's backward reads its popped values only through a mask."""
    for i in range(n):
        x = np.maximum(x, 0.0) * 1.5 - 0.2
    return x


def relu_loss(x, n):
    return np.sum(relu_steps(x * x, n) ** 2)


def t_while_data_trips(x):
    while x.item() < 4.0:
        x = x * 1.3 + torch.sin(x)
    return torch.log(x) * x


def t_early_return_in_loop(x, n):
    for i in range(n):
        x = torch.tanh(x) + 0.5 * x
        if x.item() > 1.2:
            return x * x
    return x ** 3


def t_break_nested(x):
    s = x
    for i in range(4):
        for j in range(3):
            s = torch.sin(s) + x * 0.3
            if s.item() > 0.9:
                break
    return s * x


def t_branch_in_loop(x, n):
    for i in range(n):
        if x.item() > 0.5:
            x = x * x - 0.2
        else:
            x = torch.exp(x) * 0.6
    return x


def t_damp(x, n):
    for i in range(n):
        x = torch.cos(x) * 0.9 + 0.1 * x
    return x


def t_loop_in_call_in_loop(x, n):
    y = x
    for k in range(3):
        y = t_damp(y, n) * x
    return y


def t_twice_damped(x, n):
    return t_damp(x, n) * t_damp(x * 0.5, n + 1)


def t_outer_call(x, n):
    s = 0.0
    for k in range(2):
        s = s + t_loop_in_call_in_loop(x + s, n)
    return s


def t_relu_loss(x, n):
    x = x * x
    for i in range(n):
        x = torch.clamp(x, min=0.0) * 1.5 - 0.2
    return torch.sum(x ** 2)


SCALAR = {
    # name: (fn, twin, points, extra args)
    "while_data_trips": (while_data_trips, t_while_data_trips, [0.3, 1.1, 2.5], ()),
    "early_return_hit": (early_return_in_loop, t_early_return_in_loop, [0.9], (6,)),
    "early_return_miss": (early_return_in_loop, t_early_return_in_loop, [0.1], (2,)),
    "break_nested": (break_nested, t_break_nested, [0.2, 0.5], ()),
    "branch_in_loop": (branch_in_loop, t_branch_in_loop, [0.3, 0.7], (4,)),
    "loop_in_call_in_loop": (loop_in_call_in_loop, t_loop_in_call_in_loop, [0.4, 1.3], (3,)),
    "twice_damped": (twice_damped, t_twice_damped, [0.6], (2,)),
    "outer_call": (outer_call, t_outer_call, [0.3], (2,)),
}


def torch_derivatives(twin, x, extra, order):
    t = torch.tensor(float(x), dtype=torch.float64, requires_grad=True)
    out, values = twin(t, *extra), []
    for _ in range(order):
        (out,) = torch.autograd.grad(out, t, create_graph=True)
        values.append(out.item())
    return values


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_second_derivative_matches_torch(name):
    fn, twin, points, extra = SCALAR[name]
    d2 = srcad.grad(srcad.grad(fn))
    for x in points:
        _, want = torch_derivatives(twin, x, extra, 2)
        h = d2(np.float64(x), *extra)
        assert np.shape(h) == () and np.result_type(h) == np.float64
        assert_close(h, want, f"{name}''({x})")
        assert_close(d2(x, *extra), want, f"{name}''({x}), a Python float")


@pytest.mark.parametrize("name", ["while_data_trips", "early_return_hit", "break_nested",
                                  "branch_in_loop", "loop_in_call_in_loop", "twice_damped"])
def test_third_derivative_matches_torch(name):
    fn, twin, points, extra = SCALAR[name]
    d2 = srcad.grad(srcad.grad(fn))
    d3 = srcad.grad(d2)
    x = np.float64(points[0])
    *_, want = torch_derivatives(twin, x, extra, 3)
    h3 = d3(x, *extra)
    assert_close(h3, want, f"{name}'''")
    _, h3_fwd = srcad.jvp(d2, (x, *extra), (np.float64(1.0),) + (None,) * len(extra))
    assert_close(h3_fwd, want, f"{name}''' by jvp(grad(grad(f)))")


@pytest.mark.parametrize("name", ["while_data_trips", "loop_in_call_in_loop"])
def test_fourth_derivative(name):
    fn, twin, points, extra = SCALAR[name]
    d3 = srcad.grad(srcad.grad(srcad.grad(fn)))
    x = np.float64(points[0])
    *_, want = torch_derivatives(twin, x, extra, 4)
    assert_close(srcad.grad(d3)(x, *extra), want, f"{name}''''", tol=1e-7)


def test_relu_mask_popped_only_for_a_comparison():
    """relu_steps_bwd reads what it pops only in `x > 0`: the second-order transform does not
    differentiate those pops, and the pushes in relu_steps_fwd then get zero cotangents."""
    rng = np.random.default_rng(3)
    x, n = rng.uniform(-1.0, 1.0, 5), 3
    v = rng.standard_normal(5)
    _, pullback = srcad.vjp(srcad.grad(relu_loss), x, n)
    hv, none = pullback(v)
    assert none is None
    assert_close(hv, torch_hv(t_relu_loss, (x, n), 0, v)[0], "relu H v")
    source = srcad.source(pullback)
    assert "pop_or_zeros(" in source


def t_over_list(s, Ws, x):
    h = x
    for W in Ws:
        h = torch.tanh(s * (h @ W))
    return torch.sum(h * h)


def test_loop_over_a_list_of_parameters():
    rng = np.random.default_rng(5)
    Ws = [rng.uniform(-1, 1, (3, 3)) for _ in range(3)]
    x = rng.uniform(-1, 1, (2, 3))
    s = 0.8
    st = torch.tensor(s, dtype=torch.float64, requires_grad=True)
    tWs = [torch.tensor(W, requires_grad=True) for W in Ws]
    (gs,) = torch.autograd.grad(t_over_list(st, tWs, torch.tensor(x)), st, create_graph=True)
    want = torch.autograd.grad(gs, [st, *tWs])
    d_ss = srcad.grad(srcad.grad(over_list, wrt=0), wrt=0)(s, Ws, x)
    assert isinstance(d_ss, float)
    assert_close(d_ss, want[0].item(), "d2/ds2")
    d_sW = srcad.grad(srcad.grad(over_list, wrt=0), wrt=1)(s, Ws, x)
    assert isinstance(d_sW, list) and len(d_sW) == 3
    for k, (got, w) in enumerate(zip(d_sW, want[1:])):
        assert_close(got, w.numpy(), f"d2/ds dWs[{k}]")


# =============================================================================================
# regressions found on the way
# =============================================================================================


def _pair_product(p):
    return p[0] * np.sin(p[1])


def passes_a_tuple(x):
    return _pair_product((x, x * 2.0))


def test_tuple_literal_argument_to_a_user_function_keeps_its_derivative():
    """Was zero in source mode (reverse and forward): only name arguments were differentiated."""
    x = np.float64(0.7)
    want = np.sin(2 * x) + 2 * x * np.cos(2 * x)
    assert srcad.grad(passes_a_tuple)(x) == pytest.approx(want, rel=1e-14)
    assert srcad.grad(passes_a_tuple, mode="tape")(x) == pytest.approx(want, rel=1e-14)
    _, dot = srcad.jvp(passes_a_tuple, (x,), (np.float64(1.0),))
    assert dot == pytest.approx(want, rel=1e-14)
    second = 4 * np.cos(2 * x) - 4 * x * np.sin(2 * x)
    assert srcad.grad(srcad.grad(passes_a_tuple))(x) == pytest.approx(second, rel=1e-12)


def test_forward_over_reverse_through_a_called_loop():
    """jvp(grad(f)) where f calls a function whose loop pushes values the backward needs and
    values it does not (a branch flag, a loop counter): crashed on the stacks' tangents (the
    whole corpus through such calls: test_corpus_grad_of_grad_through_a_call)."""
    g = srcad.grad(twice_damped)
    _, h = srcad.jvp(g, (np.float64(0.6), 2), (np.float64(1.0), None))
    _, want = torch_derivatives(t_twice_damped, 0.6, (2,), 2)
    assert_close(h, want, "jvp(grad(twice_damped))")
    assert srcad.hessian(twice_damped)(np.float64(0.6), 2) == pytest.approx(want, rel=1e-10)


def test_pullback_of_grad_can_be_called_twice():
    fn, args = corpus_args("rnn")
    _, pullback = srcad.vjp(srcad.grad(fn, wrt=1), *args)
    v = np.random.default_rng(4).standard_normal(args[1].shape)
    first = pullback(v)
    second = pullback(2.0 * v)
    for a, b in zip(first, second):
        if a is not None:
            np.testing.assert_allclose(b, 2.0 * a, rtol=1e-12, atol=1e-14)


def test_fresh_stacks_keeps_one_copy_of_a_shared_stack():
    """A stack's cotangents are found through the stack, so a pullback's copy of its saved
    values must not split one stack into two."""
    s = runtime.Stack()
    s.push(np.ones(2))
    copied = runtime.fresh_stacks((s, (3, s)))
    assert copied[0] is copied[1][1] and copied[0] is not s
    assert len(copied[0]) == 1 and len(s) == 1


def test_cotangent_stacks_and_pop_or_zeros():
    s = runtime.Stack()
    c = runtime.cotangents(s)
    assert runtime.cotangents(s) is c
    c.push(np.full(3, 2.0))
    np.testing.assert_array_equal(runtime.pop_or_zeros(c, np.ones(3)), np.full(3, 2.0))
    np.testing.assert_array_equal(runtime.pop_or_zeros(c, np.ones(3)), np.zeros(3))
    assert runtime.zeros_grad(None) == 0.0


def test_missing_slot_of_a_tuple_cotangent_is_shaped_zeros():
    primal = (np.ones(3), (np.ones((2, 2)), 4))
    tree = runtime.unindex(np.full(3, 5.0), primal, 0)
    np.testing.assert_array_equal(tree[0], np.full(3, 5.0))
    inner = tree[1]
    assert np.shape(inner[0]) == (2, 2) and not np.any(inner[0])
    empty = runtime.zeros_grad(primal)
    a, b = empty
    assert np.shape(a) == (3,) and not np.any(a)


def test_memory_budget_does_not_recompute_stack_traffic():
    """A memory_budget policy on the outer transform must not choose to recompute code that
    pushes or pops (a recomputation would pop twice)."""
    d2 = srcad.grad(srcad.grad(damp))
    want = d2(np.float64(0.4), 5)
    with pytest.warns(UserWarning, match="cannot be met"):
        got = srcad.grad(srcad.grad(damp), memory_budget=0)(np.float64(0.4), 5)
    assert got == want


# =============================================================================================
# the second-order source
# =============================================================================================


def test_second_order_source_names_cotangent_stacks():
    x = np.random.default_rng(0).uniform(-1, 1, 3)
    _, pullback = srcad.vjp(srcad.grad(C.range_n_sin), x, 5)
    text = pullback.source
    assert "dstack_x = cotangents(stack_x)" in text
    assert "dstack_x.push(" in text and "dstack_x.pop()" in text
    assert "pop_or_zeros" not in text  # (the stack is made and emptied in one function)
    assert "# grad of L" in text and "stack_x.pop()  # L" in text


def test_second_order_source_is_deterministic():
    def build():
        d2 = srcad.grad(srcad.grad(loop_in_call_in_loop))
        d2(np.float64(0.4), 3)
        return srcad.source(d2)

    assert build() == build()


def test_second_order_example_and_cli(capsys):
    """examples/second_order.py (its generated code is in generated/) against torch, and
    `python -m srcad show ... --order 2`."""
    from srcad import cli

    module = cli.load_module(cli.ROOT / "examples" / "second_order.py")
    k, x, v, n = module.EXAMPLES["spring"]()

    def t_spring(k):
        xs, vs = torch.tensor(x, dtype=torch.float64), torch.tensor(v, dtype=torch.float64)
        for i in range(n):
            a = -k * torch.sin(xs)
            xs = xs + 0.1 * vs
            vs = vs + 0.1 * a
        return 0.5 * vs * vs + k * (1.0 - torch.cos(xs))

    _, want = torch_derivatives(t_spring, k, (), 2)
    got = srcad.grad(srcad.grad(module.spring))(k, x, v, n)
    assert isinstance(got, float)
    assert_close(got, want, "spring''")
    assert cli.main(["show", str(cli.ROOT / "examples" / "second_order.py") + ":spring",
                     "--wrt", "k", "--order", "2"]) == 0
    text = capsys.readouterr().out
    assert "def spring_grad_grad(k, x, v, n):" in text and "cotangents(stack_x)" in text


@pytest.mark.parametrize("name", sorted(C.FLOAT32_CASES))
def test_float32_stays_float32(name):
    fn, make = C.CASES[name]
    a32 = make(np.random.default_rng(0), np.float32)
    a64 = tuple(a.astype(np.float64) if _is_float(a) else a for a in a32)
    i = next(k for k, a in enumerate(a32) if _is_float(a))
    v = np.random.default_rng(1).standard_normal(a32[i].shape)
    h32 = srcad.vjp(srcad.grad(fn, wrt=i), *a32)[1](v.astype(np.float32))
    h64 = srcad.vjp(srcad.grad(fn, wrt=i), *a64)[1](v)
    for j, a in enumerate(a32):
        if _is_float(a):
            assert h32[j].dtype == np.float32
            assert_close(h32[j], h64[j], f"{name} d{j} in float32", tol=1e-3)


def dict_params_loop(s, p, x):
    h = x
    for i in range(3):
        h = np.tanh(s * (h @ p["W"]) + p["b"])
    return np.sum(h * h)


def t_dict_params_loop(s, p, x):
    h = x
    for i in range(3):
        h = torch.tanh(s * (h @ p["W"]) + p["b"])
    return torch.sum(h * h)


def test_mixed_partial_with_a_dict_argument():
    rng = np.random.default_rng(0)
    p = {"W": rng.standard_normal((3, 3)) * 0.5, "b": rng.standard_normal(3)}
    x = rng.standard_normal((2, 3))
    got = srcad.grad(srcad.grad(dict_params_loop, wrt=0), wrt=1)(0.7, p, x)
    assert isinstance(got, dict) and list(got) == ["W", "b"]
    st = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    (gs,) = torch.autograd.grad(t_dict_params_loop(st, tp, torch.tensor(x)), st,
                                create_graph=True)
    want = torch.autograd.grad(gs, [tp["W"], tp["b"]])
    assert_close(got["W"], want[0].numpy(), "d2/ds dW")
    assert_close(got["b"], want[1].numpy(), "d2/ds db")


def _block(h, W):
    for i in range(2):
        h = np.sin(h @ W)
    return h


def checkpointed_call(s, W, n):
    h = s * np.ones(3)
    for j in range(n):
        h = srcad.checkpoint(_block)(h, W) + h
    return np.sum(h)


def checkpointed_loop(s, W, n):
    h = s * np.ones(3)
    for j in srcad.checkpoint(range(n)):
        h = np.tanh(h @ W) + s
    return np.sum(h)


@pytest.mark.parametrize("fn", [checkpointed_call, checkpointed_loop],
                         ids=["call", "loop"])
def test_grad_of_grad_of_checkpointed_code(fn):
    """The inner gradient recomputes (a call) or runs a schedule (a loop: off when the code is
    transformed again); the second derivative is that of the plain program."""
    W = np.random.default_rng(0).standard_normal((3, 3)) * 0.5
    g = srcad.grad(fn)
    h = srcad.grad(g)(0.4, W, 4)
    fd = (g(0.4 + FD_H, W, 4) - g(0.4 - FD_H, W, 4)) / (2 * FD_H)
    assert_fd_close(h, fd, f"{fn.__name__}''")
    _, h_fwd = srcad.jvp(g, (np.float64(0.4), W, 4), (np.float64(1.0), np.zeros_like(W), None))
    assert_close(h, h_fwd, f"{fn.__name__}'' against forward over reverse")
