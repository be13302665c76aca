"""Matmul's backward as plain GEMMs (issue 15, item 2): every shape class of ``a @ b``,
``np.matmul``, ``np.dot`` and ``a.dot(b)`` (1-D on either side, 2-D, N-D against 2-D, against a
batch of 1s, batched with equal and with broadcast batches, empty axes), in float32, float64
and mixed, through source and tape mode (bit for bit equal to each other), against an
einsum oracle in float64, torch at 1e-5 in float32, central differences, forward mode
(``check_jvp``, ``check_consistency``) and second order.

The expression for each class is `srcad.runtime_linalg.matmul_grad_form`: where one operand
has no batch, the gradient is ONE 2-D GEMM on reshaped operands (``x.reshape(512, 128).T @
g.reshape(512, 512)``), with no batched product, no swapaxes and no sum afterwards.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.runtime_linalg import matmul_grad_form
from srcad.testing import check_consistency, check_grads, check_jvp

torch = pytest.importorskip("torch")

# (a shape, b shape, class): every class matmul_grad_form distinguishes, with broadcasting
SHAPES = [
    ((4,), (4,), "1-D @ 1-D"),
    ((3, 4), (4,), "2-D @ 1-D"),
    ((2, 3, 4), (4,), "N-D @ 1-D"),
    ((4,), (4, 5), "1-D @ 2-D"),
    ((4,), (2, 4, 5), "1-D @ N-D"),
    ((4,), (1, 4, 5), "1-D @ ones-batch"),
    ((3, 4), (4, 5), "2-D @ 2-D"),
    ((2, 3, 4), (4, 5), "N-D @ 2-D"),
    ((2, 2, 3, 4), (4, 5), "N-D @ 2-D"),
    ((2, 3, 4), (1, 4, 5), "N-D @ ones-batch"),
    ((3, 4), (1, 1, 4, 5), "2-D @ ones-batch"),
    ((3, 4), (2, 4, 5), "2-D @ N-D"),
    ((3, 4), (2, 3, 4, 5), "2-D @ N-D"),
    ((1, 3, 4), (2, 4, 5), "ones-batch @ N-D"),
    ((1, 1, 3, 4), (2, 4, 5), "ones-batch @ N-D"),
    ((2, 3, 4), (2, 4, 5), "batched"),
    ((2, 2, 3, 4), (2, 2, 4, 5), "batched"),
    ((2, 1, 3, 4), (5, 4, 2), "broadcast batches"),
    ((2, 1, 3, 4), (1, 5, 4, 2), "broadcast batches"),
    ((2, 1, 4), (4, 1), "M = N = 1"),
    ((3, 1), (1, 5), "K = 1"),
    ((0, 4), (4, 5), "empty rows"),
    ((2, 3, 0), (0, 5), "K = 0"),
]
IDS = [f"{c}:{a}@{b}" for a, b, c in SHAPES]
NO_BATCH_ON_ONE_SIDE = {"N-D @ 2-D", "N-D @ ones-batch", "2-D @ ones-batch", "2-D @ 2-D",
                        "N-D @ 1-D", "2-D @ 1-D", "1-D @ 2-D", "1-D @ ones-batch"}


def mm_loss(a, b, p):
    return np.sum((a @ b) * p)


def matmul_loss(a, b, p):
    return np.sum(np.matmul(a, b) * p)


def dot_loss(a, b, p):
    return np.sum(np.dot(a, b) * p)


def method_dot_loss(a, b, p):
    return np.sum(a.dot(b) * p)


def plain_sum_loss(a, b):  # the cotangent of a @ b is a broadcast (stride-0) view of 1.0
    return np.sum(a @ b)


def chain_loss(a, b, c, p):  # two products with an activation between them
    h = np.tanh(a @ b)
    return np.sum((h @ c.T) * p)


def _args(a_shape, b_shape, dtypes=("float64", "float64"), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(a_shape).astype(dtypes[0])
    b = rng.standard_normal(b_shape).astype(dtypes[1])
    out = np.matmul(a, b)
    p = rng.standard_normal(np.shape(out)).astype(out.dtype)
    return a, b, p


def _einsum_oracle(a, b, p):
    """(da, db) of sum((a @ b) * p) in float64 by einsum over explicitly broadcast operands."""
    a64, b64, p64 = (np.asarray(x, np.float64) for x in (a, b, p))
    a2 = a64[None, :] if a64.ndim == 1 else a64
    b2 = b64[:, None] if b64.ndim == 1 else b64
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    A = np.broadcast_to(a2, batch + a2.shape[-2:])
    B = np.broadcast_to(b2, batch + b2.shape[-2:])
    G = np.broadcast_to(p64.reshape(batch + (A.shape[-2], B.shape[-1])),
                        batch + (A.shape[-2], B.shape[-1]))
    dA = np.einsum("...mn,...kn->...mk", G, B)
    dB = np.einsum("...mk,...mn->...kn", A, G)

    def back(d, x2, x):
        lead = d.ndim - x2.ndim
        d = d.sum(axis=tuple(range(lead))) if lead else d
        axes = tuple(i for i, n in enumerate(x2.shape) if n == 1 and d.shape[i] != 1)
        d = d.sum(axis=axes, keepdims=True) if axes else d
        return d.reshape(np.shape(x))

    return back(dA, a2, a), back(dB, b2, b)


def _rel(x, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    scale = max(float(np.max(np.abs(y), initial=0.0)), 1e-30)
    return float(np.max(np.abs(x - y), initial=0.0)) / scale


# -- the expressions ---------------------------------------------------------------------------

@pytest.mark.parametrize("a_shape,b_shape,cls", SHAPES, ids=IDS)
def test_one_operand_without_batch_is_one_gemm(a_shape, b_shape, cls):
    for wrt in "ab":
        form = matmul_grad_form(a_shape, b_shape, wrt)
        assert "matmul_grad" not in form
        if cls in NO_BATCH_ON_ONE_SIDE:
            assert form.count("@") <= 1, form
            for word in ("swapaxes", "unbroadcast", "sum(", "-1"):
                assert word not in form, (wrt, form)
        if cls in ("batched",):
            assert "unbroadcast" not in form and "sum(" not in form, form


def test_the_block_shapes_read_as_gemms():
    assert matmul_grad_form((8, 64, 128), (128, 512), "b") == \
        "a.reshape(512, 128).T @ g.reshape(512, 512)"
    assert matmul_grad_form((8, 64, 128), (128, 512), "a") == \
        "(g.reshape(512, 512) @ b.T).reshape((8, 64, 128))"
    assert matmul_grad_form((3, 4), (4, 5), "a") == "g @ b.T"
    assert matmul_grad_form((3, 4), (4, 5), "b") == "a.T @ g"


def test_generated_backward_has_no_helper_for_nd_at_2d():
    a, b, p = _args((2, 3, 4), (4, 5), ("float32", "float32"))
    g = srcad.grad(mm_loss, wrt=(0, 1))
    g(a, b, p)
    src = srcad.source(g)
    assert "matmul_grad" not in src and "swapaxes" not in src and "unbroadcast" not in src
    assert "a.reshape(6, 4).T @ " in src and ".reshape(6, 5) @ b.T).reshape((2, 3, 4))" in src


# -- source mode against tape mode, bit for bit ------------------------------------------------

DTYPES = [("float32", "float32"), ("float64", "float64"), ("float32", "float64")]


@pytest.mark.parametrize("dtypes", DTYPES, ids=["f32", "f64", "mixed"])
@pytest.mark.parametrize("a_shape,b_shape,cls", SHAPES, ids=IDS)
def test_source_and_tape_agree_bitwise(a_shape, b_shape, cls, dtypes):
    args = _args(a_shape, b_shape, dtypes)
    losses = [mm_loss, matmul_loss]
    if len(b_shape) <= 2:  # np.dot is matmul there
        losses += [dot_loss, method_dot_loss]
    for loss in losses:
        src = srcad.grad(loss, wrt=(0, 1))(*args)
        tape = srcad.grad(loss, wrt=(0, 1), mode="tape")(*args)
        for s, t, x in zip(src, tape, args):
            assert s.dtype == t.dtype == x.dtype and s.shape == t.shape == x.shape
            assert np.array_equal(s, t), (loss.__name__, _rel(s, t))
    src = srcad.grad(plain_sum_loss, wrt=(0, 1))(*args[:2])
    tape = srcad.grad(plain_sum_loss, wrt=(0, 1), mode="tape")(*args[:2])
    assert all(np.array_equal(s, t) for s, t in zip(src, tape))


# -- against oracles ---------------------------------------------------------------------------

@pytest.mark.parametrize("a_shape,b_shape,cls", SHAPES, ids=IDS)
def test_float64_against_einsum_and_central_differences(a_shape, b_shape, cls):
    a, b, p = _args(a_shape, b_shape)
    da, db = srcad.grad(mm_loss, wrt=(0, 1))(a, b, p)
    ra, rb = _einsum_oracle(a, b, p)
    assert _rel(da, ra) < 1e-13 and _rel(db, rb) < 1e-13
    if a.size and b.size:
        check_grads(mm_loss, (a, b, p), wrt=(0, 1))
        check_grads(mm_loss, (a, b, p), wrt=(0, 1), mode="tape")


@pytest.mark.parametrize("a_shape,b_shape,cls", SHAPES, ids=IDS)
def test_float32_against_torch(a_shape, b_shape, cls):
    a, b, p = _args(a_shape, b_shape, ("float32", "float32"), seed=1)
    da, db = srcad.grad(mm_loss, wrt=(0, 1))(a, b, p)
    ta, tb = (torch.tensor(x, requires_grad=True) for x in (a, b))
    torch.sum(torch.matmul(ta, tb) * torch.tensor(p)).backward()
    assert da.dtype == db.dtype == np.float32
    assert _rel(da, ta.grad.numpy()) < 1e-5 and _rel(db, tb.grad.numpy()) < 1e-5


def test_block_sized_product_against_torch():
    a, b, p = _args((8, 64, 128), (128, 512), ("float32", "float32"), seed=2)
    da, db = srcad.grad(mm_loss, wrt=(0, 1))(a, b, p)
    ta, tb = (torch.tensor(x, requires_grad=True) for x in (a, b))
    torch.sum(torch.matmul(ta, tb) * torch.tensor(p)).backward()
    assert _rel(da, ta.grad.numpy()) < 1e-5 and _rel(db, tb.grad.numpy()) < 1e-5
    # and against float64: the single GEMM's summation order is as accurate as the batch's
    ra, rb = _einsum_oracle(a, b, p)
    assert _rel(da, ra) < 1e-5 and _rel(db, rb) < 1e-5


def test_views_and_chains():
    """Operands that are not C-contiguous (a transpose, a slice with a step): the reshape then
    copies, and the gradient is the same; two products with an activation between them."""
    rng = np.random.default_rng(3)
    base = rng.standard_normal((4, 3, 2))
    a = np.transpose(base, (2, 1, 0))[:, :, ::2]  # (2, 3, 2), not contiguous
    b = rng.standard_normal((5, 2)).T  # (2, 5), Fortran order
    p = rng.standard_normal((2, 3, 5))
    assert not a.flags.c_contiguous and not b.flags.c_contiguous
    src = srcad.grad(mm_loss, wrt=(0, 1))(a, b, p)
    tape = srcad.grad(mm_loss, wrt=(0, 1), mode="tape")(a, b, p)
    assert all(np.array_equal(s, t) for s, t in zip(src, tape))
    ra, rb = _einsum_oracle(a, b, p)
    assert _rel(src[0], ra) < 1e-13 and _rel(src[1], rb) < 1e-13
    a, b, c = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 6)), rng.standard_normal((5, 6))
    p = rng.standard_normal((2, 3, 5))
    check_grads(chain_loss, (a, b, c, p), wrt=(0, 1, 2))
    src = srcad.grad(chain_loss, wrt=(0, 1, 2))(a, b, c, p)
    tape = srcad.grad(chain_loss, wrt=(0, 1, 2), mode="tape")(a, b, c, p)
    assert all(np.array_equal(s, t) for s, t in zip(src, tape))


# -- forward mode and second order -------------------------------------------------------------

@pytest.mark.parametrize("a_shape,b_shape,cls", [s for s in SHAPES if 0 not in s[0] + s[1]],
                         ids=[i for s, i in zip(SHAPES, IDS) if 0 not in s[0] + s[1]])
def test_forward_mode(a_shape, b_shape, cls):
    a, b, p = _args(a_shape, b_shape)
    check_jvp(mm_loss, (a, b, p))
    check_consistency(mm_loss, (a, b, p))


@pytest.mark.parametrize("a_shape,b_shape", [((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
                                             ((4,), (2, 4, 5)), ((2, 3, 4), (4,)),
                                             ((1, 3, 4), (2, 4, 5))])
def test_second_order_through_the_gemm_forms(a_shape, b_shape):
    """The generated backward (reshapes and one GEMM) differentiated again: vjp(grad(f)) and
    jvp(grad(f)) against central differences of the first gradient, in float64."""
    a, b, p = _args(a_shape, b_shape)
    rng = np.random.default_rng(5)
    va, vb = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    eps = 1e-6
    for wrt in (0, 1):
        grad = srcad.grad(chain_like, wrt=wrt)
        u = rng.standard_normal((a, b)[wrt].shape)

        def pair(a_, b_, grad=grad, u=u):
            return np.sum(grad(a_, b_, p) * u)

        # vjp(grad f) with cotangent u: the gradient of <grad f, u> w.r.t. a and b
        _, pullback = srcad.vjp(grad, a, b, p)
        got = pullback(u)[:2]
        for i, x in enumerate((a, b)):
            num = np.zeros_like(x)
            for idx in np.ndindex(x.shape):
                xp, xm = x.copy(), x.copy()
                xp[idx] += eps
                xm[idx] -= eps
                num[idx] = ((pair(xp, b) - pair(xm, b)) if i == 0 else
                            (pair(a, xp) - pair(a, xm))) / (2 * eps)
            assert _rel(got[i], num) < 1e-6
        # jvp(grad f) along (va, vb): a Hessian-vector product
        _, h = srcad.jvp(grad, (a, b, p), (va, vb, np.zeros_like(p)))
        num = (grad(a + eps * va, b + eps * vb, p) - grad(a - eps * va, b - eps * vb, p)) / (2 * eps)
        assert _rel(h, num) < 1e-6


def chain_like(a, b, p):
    return np.sum(np.tanh(a @ b) * p)
