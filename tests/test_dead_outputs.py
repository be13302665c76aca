"""Outputs nobody reads cost nothing in the backward (issue 25 item 4, issue 22 item 3).

A user function returning a tuple whose caller discards an item (`loss, _ = f(...)`, or binds
it and never reads it for the result) is specialised: the discarded item gets no adjoint, no
zero cotangent, no stack and no copy-on-write copy, and where the caller never reads it at
all the callee's forward returns None in its place. Each case checks the generated source
for that, and that the gradient is bit for bit the one of the same program returning only
what is read, and agrees with central differences -- in source mode, fuse=True and with
checkpointing."""

from __future__ import annotations

import re

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error


# -- programs: each `*_alone` is the same program returning only what its caller reads ----
def svm_loss(W, X, y):
    dW = np.zeros(W.shape)
    loss = 0.0
    for i in range(X.shape[0]):
        scores = X[i].dot(W)
        correct = scores[y[i]]
        for j in range(W.shape[1]):
            if j == y[i]:
                continue
            margin = scores[j] - correct + 1.0
            if margin > 0:
                loss += margin
                dW[:, j] += X[i]
                dW[:, y[i]] -= X[i]
    return loss / X.shape[0] + 0.1 * np.sum(W * W), dW / X.shape[0] + 0.2 * W


def svm_loss_alone(W, X, y):
    loss = 0.0
    for i in range(X.shape[0]):
        scores = X[i].dot(W)
        correct = scores[y[i]]
        for j in range(W.shape[1]):
            if j == y[i]:
                continue
            margin = scores[j] - correct + 1.0
            if margin > 0:
                loss += margin
    return loss / X.shape[0] + 0.1 * np.sum(W * W)


def svm(W, X, y):
    loss, _ = svm_loss(W, X, y)
    return loss


def svm_alone(W, X, y):
    return svm_loss_alone(W, X, y)


def layer(x, W):
    out = np.tanh(x @ W)
    cache = (x, W, out)
    return out, cache


def layer_alone(x, W):
    return np.tanh(x @ W)


def two_layers(W1, W2, x):
    h, cache1 = layer(x, W1)
    o, cache2 = layer(h, W2)
    return np.sum(o ** 2)


def two_layers_alone(W1, W2, x):
    return np.sum(layer_alone(layer_alone(x, W1), W2) ** 2)


def rnn_step(x, h, Wx, Wh):
    nh = np.tanh(x @ Wx + h @ Wh)
    return nh, (x, h, nh)


def rnn(Wx, Wh, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h, cache = rnn_step(xs[t], h, Wx, Wh)
    return np.sum(h)


def rnn_alone(Wx, Wh, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
    return np.sum(h)


def stats(x, W):
    z = x @ W
    return np.sum(np.tanh(z)), z * 2.0


def read_not_differentiated(x, W):
    loss, z = stats(x, W)
    return loss * z.shape[0]       # z is read (its shape), never differentiated


def read_not_differentiated_alone(x, W):
    return np.sum(np.tanh(x @ W)) * (x @ W).shape[0]


def both_read(x, W):
    loss, z = stats(x, W)
    return loss + np.sum(z ** 2)


def checkpointed(W1, W2, x):
    h, _ = srcad.checkpoint(layer)(x, W1)
    o, _ = layer(h, W2)
    return np.sum(o ** 2)


def inner_pair(x, W):
    a, b = stats(x, W)
    return a, b


def nested(x, W):
    loss, _ = inner_pair(x, W)
    return loss


def nested_alone(x, W):
    return np.sum(np.tanh(x @ W))


def make(name):
    rng = np.random.default_rng(0)
    if name.startswith("svm"):
        return (rng.standard_normal((6, 4)) * 0.1, rng.standard_normal((5, 6)),
                rng.integers(0, 4, 5)), 0
    if name.startswith("two_layers") or name == "checkpointed":
        return (rng.standard_normal((4, 3)) * 0.5, rng.standard_normal((3, 3)) * 0.5,
                rng.standard_normal((5, 4))), (0, 1)
    if name.startswith("rnn"):
        return (rng.standard_normal((3, 4)) * 0.5, rng.standard_normal((4, 4)) * 0.5,
                rng.standard_normal((5, 2, 3)), rng.standard_normal((2, 4))), (0, 1)
    return (rng.standard_normal((5, 4)), rng.standard_normal((4, 3)) * 0.5), (0, 1)


def tup(g):
    return g if isinstance(g, tuple) else (g,)


PAIRS = [("svm", "svm_alone"), ("two_layers", "two_layers_alone"), ("rnn", "rnn_alone"),
         ("read_not_differentiated", "read_not_differentiated_alone"),
         ("nested", "nested_alone")]


# -- gradients: bit for bit the program returning only what is read ------------------------
@pytest.mark.parametrize("options", [{}, {"fuse": True}, {"memory_budget": 1}],
                         ids=["source", "fuse", "budget"])
@pytest.mark.parametrize("name,alone", PAIRS)
def test_gradient_is_that_of_the_program_returning_only_what_is_read(name, alone, options):
    args, wrt = make(name)
    fn, ref = globals()[name], globals()[alone]
    got = tup(srcad.grad(fn, wrt=wrt, **options)(*args))
    want = tup(srcad.grad(ref, wrt=wrt, **options)(*args))
    num = tup(numerical_grad(fn, args, wrt=wrt))
    for g, w, n in zip(got, want, num):
        assert g.shape == w.shape and g.dtype == w.dtype
        if name in ("svm", "two_layers", "read_not_differentiated", "nested"):
            # (the same arithmetic in the same order: bit for bit)
            assert g.tobytes() == w.tobytes()
        assert rel_error(g, w) < 1e-12
        assert rel_error(g, n) < 1e-6


def test_value_and_grad_and_tape_agree():
    args, wrt = make("two_layers")
    v, g = srcad.value_and_grad(two_layers, wrt=wrt)(*args)
    assert v == two_layers(*args)
    vt, gt = srcad.value_and_grad(two_layers, wrt=wrt, mode="tape")(*args)
    assert vt == v and all(rel_error(a, b) < 1e-12 for a, b in zip(g, gt))


@pytest.mark.parametrize("options", [{}, {"memory_budget": 1}], ids=["source", "budget"])
def test_checkpointed_call_with_a_discarded_output(options):
    args, wrt = make("checkpointed")
    got = srcad.grad(checkpointed, wrt=wrt, **options)(*args)
    want = srcad.grad(two_layers_alone, wrt=wrt, **options)(*args)
    num = numerical_grad(checkpointed, args, wrt=wrt)
    for g, w, n in zip(got, want, num):
        assert rel_error(g, w) < 1e-12 and rel_error(g, n) < 1e-6


def test_second_order_through_a_discarded_output():
    """Generated code transformed again: a Hessian-vector product through the call."""
    args, wrt = make("two_layers")
    v = np.random.default_rng(3).standard_normal(args[0].shape)

    def hvp(fn):
        g = srcad.grad(fn, wrt=0)
        return srcad.jvp(g, args, (v, np.zeros_like(args[1]), np.zeros_like(args[2])))[1]

    assert rel_error(hvp(two_layers), hvp(two_layers_alone)) < 1e-10


# -- the generated code: nothing for the discarded outputs ------------------------------------
def source_of(fn, **options):
    args, wrt = make(fn.__name__)
    g = srcad.grad(fn, wrt=wrt, **options)
    g(*args)
    return srcad.source(g)


def function_text(source, name):
    m = re.search(rf"^def {name}\(.*?(?=^def |\Z)", source, re.DOTALL | re.MULTILINE)
    assert m, (name, source)
    return m.group(0)


def test_discarded_gradient_gets_no_adjoint_stack_or_copy():
    src = source_of(svm)
    fwd, bwd = function_text(src, "svm_loss_fwd"), function_text(src, "svm_loss_bwd")
    assert not re.search(r"\bddW", src)                 # no adjoint of dW
    assert "stack_dW" not in src                        # nothing of dW pushed in the loop
    assert "setitem_grad_x" not in src                  # no backward of its writes
    assert re.match(r"def svm_loss_bwd\(saved, dsvm_loss\w*\)", bwd)  # the loss's alone
    assert "dout" not in bwd
    assert re.search(r"return \(\(\w+, None\), ", fwd)  # dW is not returned at all
    assert not re.search(r"zeros\w*\(_\)", src)         # and the call passes no zeros for it


def test_discarded_cache_gets_no_zero_cotangent():
    src = source_of(two_layers)
    assert "zeros_grad" not in src and "zeros_like(c" not in src
    assert not re.search(r"dout\[", src)                 # one cotangent, `out`'s, not a pair
    assert len(re.findall(r"def layer_bwd\w*\(saved, dout\)", src)) == 2
    for m in re.finditer(r"return \(\((\w+), (.*?)\), \(", src):
        assert m.group(2) == "None"                     # the cache is never built


def test_discarded_cache_in_a_loop_is_not_pushed():
    src = source_of(rnn)
    assert "zeros_grad" not in src and "stack_cache" not in src
    assert re.search(r"\(h, cache\), \w+ = rnn_step_fwd\(", src)


def test_read_but_not_differentiated_output_is_returned_without_cotangent():
    src = source_of(read_not_differentiated)
    fwd = function_text(src, "stats_fwd")
    assert re.search(r"return \(\(\w+, \w+\), ", fwd)   # z is returned (its shape is read)
    assert "dstats_multiply" not in src and "zeros" not in src
    assert re.search(r"def stats_bwd\w*\(saved, d\w+\)", src)


def test_both_outputs_read_keeps_both_cotangents():
    src = source_of(both_read)
    assert re.search(r"stats_bwd\w*\(\w+, \(", src)     # a tuple of two cotangents
    args, wrt = make("both_read")
    got = srcad.grad(both_read, wrt=wrt)(*args)
    for g, n in zip(got, numerical_grad(both_read, args, wrt=wrt)):
        assert rel_error(g, n) < 1e-6


def test_fused_source_has_no_adjoint_for_the_discarded_output():
    src = source_of(svm, fuse=True)
    assert not re.search(r"\bddW", src) and "stack_dW" not in src


def test_discard_propagates_through_a_callee_that_returns_a_callees_pair():
    src = source_of(nested)
    assert "zeros" not in src
    inner = function_text(src, "inner_pair_fwd")
    assert re.search(r"return \(\(\w+, None\), ", inner)
    stats_fwd = function_text(src, "stats_fwd")
    assert re.search(r"return \(\(\w+, None\), ", stats_fwd)
    assert "* 2.0" not in stats_fwd                     # `z * 2.0` is not computed


# -- the top level: a tuple output of grad is refused, with a hint that works ------------------
def loss_and_aux(W, x):
    h = np.tanh(x @ W)
    return np.sum(h ** 2), h


def loss_and_aux_loss(W, x):           # the hint, applied
    loss, _ = loss_and_aux(W, x)
    return loss


def test_grad_of_a_tuple_output_is_refused_with_a_hint_that_works():
    x, W = make("stats")[0]
    args = (W, x)
    with pytest.raises(srcad.SrcadError) as e:
        srcad.grad(loss_and_aux)(*args)
    msg = str(e.value)
    assert "returns a tuple" in msg and "test_dead_outputs.py" in msg
    assert "def loss_and_aux_loss(W, x): loss, _ = loss_and_aux(W, x); return loss" in msg
    g = srcad.grad(loss_and_aux_loss)(*args)
    assert rel_error(g, numerical_grad(loss_and_aux_loss, args, wrt=0)) < 1e-6
    src = srcad.source(srcad.grad(loss_and_aux_loss))
    assert "zeros" not in src


# -- an output read only where nothing reaches the result: still computed -------------------
def sum_and_double(x):
    return np.sum(np.sin(x)), x * 2.0


def read_in_a_branch(x):
    a, b = sum_and_double(x)
    if np.max(x) > -10.0:
        b = b + 1.0     # runs (the optimiser keeps statements in branches), so b is read
    return a


def test_output_read_in_a_branch_that_reaches_nothing():
    x = np.random.default_rng(4).standard_normal(3)
    g = srcad.grad(read_in_a_branch)
    assert rel_error(g(x), numerical_grad(read_in_a_branch, (x,), wrt=0)) < 1e-6
    src = srcad.source(g)
    assert "dsum_and_double_multiply" not in src and "zeros" not in src
