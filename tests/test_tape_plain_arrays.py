"""Tape mode on the plain numpy arrays of ordinary programs (issue 22).

1. An ndarray *method* of an array the tape does not follow, given a tape value: `X.dot(W)`
   with X a data argument (numpy's method asks the Tensor for a plain array). The tape sees
   such arrays as `srcad.tape_tensor.Plain`, numpy's own array whose `.dot` goes to the tape.
2. A differentiable value written into an array the function makes (np.zeros, np.empty,
   np.zeros_like, np.array, np.copy: `out[i, j] = v`, `h[:, t, :] = h_t`, `dx[...] += d`):
   the buffer is a Tensor with no history, written copy on write as in source mode.

Each program: the tape's gradient against central differences, and against source mode bit
for bit (the same rows in the same order); where the tape cannot keep numpy's semantics it
refuses at the user's line, and the refusal's hint, applied, runs.
"""

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, numerical_grad, rel_error

GLOBAL_W = np.linspace(-1.0, 1.0, 12).reshape(4, 3)


# -- 1. ndarray methods of plain arrays given a tape value --------------------------------------
def dot_of_argument(W, X):
    return np.sum(np.tanh(X.dot(W)))


def dot_of_row_of_argument(W, X):
    loss = 0.0
    for i in range(X.shape[0]):
        s = X[i].dot(W)
        loss += np.sum(s * s)
    return loss


def dot_of_transposed_argument(W, X):
    h = np.tanh(X.dot(W))
    return np.sum(X.T.dot(h) ** 2)


def dot_of_plain_result(W, X):
    Xc = X - np.mean(X, axis=0)  # numpy's own result, Plain
    Xr = Xc.reshape(X.shape[0], -1)
    return np.sum(Xr.dot(W) ** 2)


def dot_of_global(W, X):
    return np.sum((X @ W).dot(GLOBAL_W.T) ** 2)


def dot_of_library_result(W, X):
    P = np.linalg.pinv(np.eye(X.shape[1]) * 2.0 + 0.0 * X[:1].T @ X[:1])  # (X plain: no grad)
    return np.sum(P.dot(X.T).T.dot(W) ** 2)


def operators_and_ufunc_methods(W, X):
    # (these reach the Tensor's __array_ufunc__: numpy lets them defer)
    a = X * W[:, 0] + X @ W[:, :1] + X.clip(W[0, 0], 2.0) + X.T[:1].T - W[1, 1]
    return np.sum(a ** 2)


def dot_of_int_labels(W, X):
    onehot = np.eye(W.shape[1])[np.arange(X.shape[0]) % W.shape[1]]
    return np.sum(onehot.dot(W.T) * X)


# -- 2. differentiable values written into arrays the function makes -----------------------------
def zeros_setitem_scalars(x):
    out = np.zeros((3, 4))
    for i in range(3):
        for j in range(4):
            out[i, j] = x[i] * x[j] + 1.0
    return np.sum(out ** 2)


def zeros_rows_broadcast(x):
    h = np.zeros((2, 3, 4))
    prev = np.ones(4)
    for t in range(3):
        prev = np.tanh(prev * x[t] + x)
        h[:, t, :] = prev  # (4,) broadcast into (2, 4)
    return np.sum(h * h[:, ::-1, :])


def zeros_accumulate(x):
    dx = np.zeros((6, 6))
    for i in range(3):
        dx[i:i + 4, i:i + 4] += np.outer(x, x) * (i + 1)
    dx[...] += x[0]
    return np.sum(np.sin(dx))


def empty_and_zeros_like_of_plain(x, X):
    out = np.empty(X.shape)
    out[:] = 0.0
    z = np.zeros_like(X)
    for i in range(X.shape[0]):
        out[i] = X[i] * x
        z[i, :] += out[i] ** 2
    return np.sum(z) + np.sum(out)


def array_and_copy_buffers(x, X):
    a = np.array([0.0, 0.0, 0.0, 0.0])
    b = np.copy(X)
    c = np.ones(4)
    a[1:] = x[:3] * 2.0
    b[0] = x
    c[0] *= x[3]
    return np.sum(a * b) + np.sum(c ** 3)


def views_of_the_buffer(x):
    a = np.zeros((4, 3))
    b = a.T  # numpy: b sees every write into a
    r = a[1]
    a[0] = x[:3]
    r += x[1:] * 2.0  # a changes too
    return np.sum(b * b) + np.sum(np.tanh(a))


def fill_after_read(x):
    b = np.ones(4)
    y = b * x  # reads b as it is now
    b.fill(2.0)
    return np.sum(y) + np.sum(b * x)


def float32_buffer(x):
    out = np.zeros((3, 4), dtype=np.float32)
    for i in range(3):
        out[i] = np.tanh(x * (i + 1))
    out[:, 1:] += out[:, :-1]
    return np.sum(out * out)


_X = np.random.default_rng(0).standard_normal((5, 4))
_W = np.random.default_rng(1).standard_normal((4, 3))
_x4 = np.array([0.3, -0.7, 1.1, 0.4])

PROGRAMS = [
    (dot_of_argument, (_W, _X), 0),
    (dot_of_row_of_argument, (_W, _X), 0),
    (dot_of_transposed_argument, (_W, _X), 0),
    (dot_of_plain_result, (_W, _X), 0),
    (dot_of_global, (_W, _X), 0),
    (dot_of_library_result, (_W, _X), 0),
    (operators_and_ufunc_methods, (_W, _X), 0),
    (dot_of_int_labels, (_W, _X), 0),
    (zeros_setitem_scalars, (_x4,), 0),
    (zeros_rows_broadcast, (_x4,), 0),
    (zeros_accumulate, (_x4,), 0),
    (empty_and_zeros_like_of_plain, (_x4, _X), 0),
    (array_and_copy_buffers, (_x4, _X), 0),
    (views_of_the_buffer, (_x4,), 0),
    (float32_buffer, (_x4.astype(np.float32),), 0),
]


def _same_bits(a, b):
    assert type(a) is type(b), (type(a), type(b))
    assert np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("fn, args, wrt", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_tape_gradient_and_bitwise_with_source(fn, args, wrt):
    copies = [np.array(a, copy=True) for a in args]
    value, grad = srcad.value_and_grad(fn, wrt=wrt, mode="tape")(*args)
    for a, c in zip(args, copies):  # (the caller's arrays as numpy leaves them: unchanged)
        assert np.array_equal(a, c)
    assert type(grad) is np.ndarray and grad.dtype == args[wrt].dtype
    assert value == fn(*copies)
    want = numerical_grad(fn, args, wrt=wrt)
    assert rel_error(grad, want) < (2e-3 if grad.dtype == np.float32 else 1e-6)
    assert np.any(grad != 0)
    s_value, s_grad = srcad.value_and_grad(fn, wrt=wrt)(*args)
    _same_bits(value, s_value)
    _same_bits(grad, s_grad)


def test_check_grads_tape():
    check_grads(zeros_rows_broadcast, (_x4,), mode="tape")
    check_grads(dot_of_row_of_argument, (_W, _X), mode="tape")


def test_fill_after_read_tape():
    """`b.fill(c)` after `y = b * x` read b: the tape's entry keeps the value it read."""
    grad = srcad.grad(fill_after_read, mode="tape")(_x4)
    assert rel_error(grad, numerical_grad(fill_after_read, (_x4,))) < 1e-9
    assert np.allclose(grad, 3.0)


def test_fill_after_read_source():
    """Source mode: `b.fill(c)` is `b[...] = c`, a write copied on (pylower.array_method)."""
    for opts in ({}, {"fuse": True}):
        grad = srcad.grad(fill_after_read, **opts)(_x4)
        assert np.allclose(grad, 3.0)


def sort_after_read(x):
    b = x * np.array([3.0, 1.0, 2.0, 0.5])
    y = b * b
    b.sort()
    return np.sum(y) + np.sum(b * np.arange(4.0))


def partition_after_read(x):
    b = np.sin(x)
    y = np.sum(b * x)
    b.partition(1)
    return y + b[0] * 2.0 + b[3]


def put_after_read(x):
    b = np.ones(4)
    y = b * x
    b.put([0], 5.0)
    return np.sum(y * b)


@pytest.mark.parametrize("fn", [sort_after_read, partition_after_read, fill_after_read,
                                put_after_read], ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["source", "tape", "fuse"])
def test_in_place_array_methods_after_a_read(fn, mode):
    opts = {"fuse": True} if mode == "fuse" else {"mode": mode}
    x = np.array([0.3, -1.2, 0.7, 2.0])
    value, grad = srcad.value_and_grad(fn, **opts)(x.copy())
    assert value == fn(x.copy())
    assert rel_error(grad, numerical_grad(fn, (x.copy(),))) < 1e-7


def test_plain_results_do_not_leak():
    """The `Plain` arrays traced code sees are numpy's arrays again wherever they leave it."""

    def ret(W, X):
        return np.sum(X.dot(W)), X.T

    (value, xt), _ = srcad.vjp(ret, _W, _X, mode="tape")
    assert type(xt) is np.ndarray and np.array_equal(xt, _X.T)
    assert type(value) is np.float64
    cache = {}
    srcad.grad(keeps_in_dict, mode="tape")(_W, _X, cache)
    assert {k: type(v) for k, v in cache.items()} == {"X": np.ndarray, "m": np.ndarray}


def keeps_in_dict(W, X, cache):
    cache["X"] = X
    cache["m"] = np.mean(X, axis=0)
    return np.sum(X.dot(W))


# -- refusals: where numpy's semantics cannot be kept, at the user's line, with a working hint ----
def store_into_argument(x, X):
    X[0] = x  # numpy would change the caller's array: the tape cannot follow it
    return np.sum(X * X)


def store_into_argument_hint(x, X):
    X = np.copy(X)
    X[0] = x
    return np.sum(X * X)


def inplace_into_plain_with_view(x, X):
    s = np.sum(X, axis=0)  # numpy's result: Plain
    v = s[:2]
    s[:2] += x[:2]  # (v sees it)
    return np.sum(v * v) + np.sum(s)


def inplace_into_plain_with_view_hint(x, X):
    s = np.copy(np.sum(X, axis=0))
    v = s[:2]
    s[:2] += x[:2]
    return np.sum(v * v) + np.sum(s)


def unbound_ndarray_dot(W, X):
    return np.sum(np.ndarray.dot(X, W) ** 2)


def unbound_ndarray_dot_hint(W, X):
    return np.sum(np.dot(X, W) ** 2)


def write_through_reshape(x):
    a = np.zeros((2, 2))
    r = a.reshape(4)
    r[1:] = x[:3]
    return np.sum(a * a)


def write_through_reshape_hint(x):
    a = np.zeros((2, 2))
    r = a.reshape(4).copy()
    r[1:] = x[:3]
    a = r.reshape(2, 2)
    return np.sum(a * a)


REFUSALS = [
    (store_into_argument, store_into_argument_hint, (_x4, _X[:, :4].copy()), "np.copy"),
    (inplace_into_plain_with_view, inplace_into_plain_with_view_hint, (_x4, _X), "np.copy"),
    (unbound_ndarray_dot, unbound_ndarray_dot_hint, (_W, _X), "numpy function"),
    (write_through_reshape, write_through_reshape_hint, (_x4,), "copy"),
]


@pytest.mark.parametrize("fn, hinted, args, hint", REFUSALS, ids=[r[0].__name__ for r in REFUSALS])
def test_refusal_at_the_users_line_and_its_hint_works(fn, hinted, args, hint):
    copies = [np.array(a, copy=True) for a in args]
    try:
        srcad.grad(fn, mode="tape")(*copies)
    except srcad.SrcadError as e:
        assert e.filename == __file__ and e.func == fn.__name__, str(e)
        assert hint in (e.hint or ""), str(e)
    else:
        pytest.fail("not refused")
    grad = srcad.grad(hinted, mode="tape")(*args)
    assert rel_error(grad, numerical_grad(hinted, args)) < 1e-6
    _same_bits(grad, srcad.grad(hinted)(*args))


# -- the corpus programs of these two classes (tests/corpus_styles), source and tape bitwise -----
CORPUS = ["dictnets.two_layer_net", "losses.svm_loss_naive", "losses.svm_loss_vectorized",
          "losses.softmax_loss_naive", "losses.softmax_loss_vectorized",
          "dictnets.returns_loss_and_grads", "dictnets.fc_net_caches_dict",
          "recurrent.rnn_cs231n_preallocated", "recurrent.lstm_cs231n_loop",
          "conv.im2col_slices_conv", "conv.zeros_pad_stride2", "conv.naive_conv_loss",
          "conv.max_pool_loss", "conv.three_layer_convnet", "policy.gae_reversed"]


def _same_tree(a, b, where):
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _same_tree(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same_tree(x, y, f"{where}[{i}]")
    else:
        _same_bits(a, b)


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_program_bitwise_with_source(name):
    from tests.corpus_styles import all_programs

    p = next(q for q in all_programs() if q.name == name)
    src = srcad.value_and_grad(p.fn, wrt=p.wrt)(*p.make_args())
    tape = srcad.value_and_grad(p.fn, wrt=p.wrt, mode="tape")(*p.make_args())
    _same_tree(src, tape, name)
