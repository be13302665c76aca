"""The few helpers generated code calls, besides numpy.

Exported generated source needs only numpy and this module. The op table's rules call
these helpers by name, and each is itself a row of the table (srcad/ops/runtime_ops.py), so
generated code can be differentiated again (higher order).

Their shape-specialised forms (an identity unbroadcast disappears, a 2-D matmul backward reads
``dh @ W.T``) live with the transform, in srcad/transform/specialise.py; matmul's backward is
one expression per shape class (`matmul_grad_form`, srcad/runtime_linalg.py) that both the
helpers here and the specialiser use.
"""

from __future__ import annotations

import inspect
import numbers
import sys
import weakref

import numpy as np

from .build import c_helper, scatter_add_rows
from .checkpoint import LoopCheckpoints
from .errors import SrcadError, UnsupportedSyntaxError
from .gradtree import _ZERO, GradTree, Held, _slot, _Zero, pieces_tree, zeros_grad  # noqa: F401
from .runtime_arrays import _dtype, _shape, rebroadcast, unbroadcast  # noqa: F401  (written once there)
from .runtime_arrays import (  # noqa: F401  (the array ops' helpers)
    asarray_like, unasarray,
    concatenate_pieces, logaddexp_accumulate_grad, logaddexp_accumulate_jvp,
    running_extremum_grad, running_extremum_jvp, cumprod_grad, cumprod_grad2, cumprod_jvp, cumprod_jvp2, diag_grad, flatten, hsplit_axis, join_pieces,
    opposite, pad_tangent, pad_value_grad, permute_like, place_appended, prod_others_jvp, rolled_to,
    select_default_grad, select_default_jvp, select_pieces, sort_like, stack_pieces, unappend, undiagonal, undiff, rediff,
    unjoin, unpad, unpermute, unrepeat, unselect, unsort, unsplit, unsupported_derivative,
    untake, untake_along_axis, untile)
from .runtime_linalg import (  # noqa: F401  (the matrix ops' helpers)
    as_columns, cross_grad_a, cross_grad_b, einsum_grad, einsum_grad_first, einsum_grad_tangent, einsum_jvp,
    einsum_jvp_first, einsum_jvp_tangent, from_columns, inner_grad_a, inner_grad_b, kron_grad_a,
    kron_grad_b, matmul_grad_form, sparse_matmul, tensordot_grad_a, tensordot_grad_b)
from .runtime_python import (  # noqa: F401  (lists and dicts: the Python people write)
    Items, Slots, append_tangents, appended_tangent, container_set, container_tangent_value,
    container_tangent_x, dict_get, get_grad_d, get_grad_default, get_tangent,
    get_tangent_default, sequence_grad, sequence_tangent, mapping_grad, mapping_tangent,
    dict_copy, dict_without, ordered_dict, object_attribute, dict_keys, dict_set, grow_grad,
    item_grad, without_item,
    head_grad, key_grad, key_tree, keyed_tangent, keys_tangent, last_grad, list_append,
    list_concat, list_repeat, put_span, repeat_grad, repeat_spread, repeat_tangent,
    span_tangent, take_span, field_grad, field_index, field_tangent,
    item_at, item_tangent_at, drop_fields, replace_fields,
    py_correlation, py_covariance, py_dist, py_geometric_mean, py_harmonic_mean,
    py_fsum, py_mean, py_stdev, py_variance, slot_tree, sort_order, to_float, without_key)
from .runtime_signal import (  # noqa: F401  (convolutions, interp, gradient, choose)
    array_item,
    choose_tree,
    along_axis_index,
    conv_crop,
    conv_embed,
    diagonal_index,
    gradient_tree,
    interp_basis,
    item_grad,
    multi_dot_grad,
    multi_dot_grad2,
    multi_dot_jvp,
    multi_dot_jvp2,
    outer_axes,
    outer_shape,
    mask_index,
    place_take,
    put_index,
    put_take,
    putmask_take,
    unchoose,
    ungradient,
    unwindow,
    last_writes,
    array_strides,
    restride,
    strided_index,
    unstride,
)
from .runtime_at import (  # noqa: F401  (ufunc.at as a value, the group matrices)
    add_at, subtract_at, multiply_at, maximum_at, minimum_at, negative_at,
    at_gather, at_take_a, at_take_b, reduceat_gather, reduceat_scatter)
from .runtime_stats import (  # noqa: F401  (order statistics, average, cov)
    average_identity,
    average_pair,
    average_part,
    average_plus_count,
    average_weights,
    cov_grad,
    cov_jvp,
    cov_part,
    cov_place,
    cov_stack,
    cov_weights,
    order_grad,
    order_jvp,
    unaverage_weights,
)
from .runtime_decompositions import (  # noqa: F401  (the decomposition ops' helpers)
    diag_embed, eig_gaps, fold_triangle, moved_axes, qr_kind, norm_grad, norm_grad_dot, norm_jvp, norm_matrix_axes,
    norm_reduce, norm_svd_unweights, norm_svd_weights, norm_uses_svd,
    phi_lower, svd_gaps, svd_grad, svd_jvp, svd_s_grad, svd_s_grad_usv, symmetric_from,
    transpose_if)
from .runtime_trees import tree_scale, tree_vdot  # noqa: F401  (srcad/pullbacks.py)
from .runtime_try import attempt  # noqa: F401  (a try statement's probe: frontend/trylower.py)

from . import runtime_pymath as _pymath  # (Python's math functions, by their row names)
from .runtime_pymath import *  # noqa: F401,F403
from . import runtime_poly as _poly  # (constants of srcad/ops/polynomials.py's rules)
from .runtime_poly import *  # noqa: F401,F403
from . import runtime_special as _special  # (scipy.special's functions: srcad/ops/special.py)
from .runtime_spatial import spatial_cdist  # noqa: F401  (scipy.spatial: srcad/ops/spatial.py)
from . import runtime_scipy_signal as _scipy_signal
from .runtime_scipy_signal import (  # noqa: F401  (scipy.signal: srcad/ops/scipy_signal.py)
    scipy_signal_convolve,
    scipy_signal_convolve2d,
    scipy_signal_correlate,
    scipy_signal_correlate2d,
    scipy_signal_fftconvolve,
    sig_crop,
    sig_embed,
)
from .runtime_scipy_linalg import (  # noqa: F401  (scipy.linalg: srcad/ops/scipy_linalg.py)
    cho_factor_grad, cho_factor_tangent, cho_solve_grad_c, cho_solve_tangent_c, scipy_cho_factor,
    scipy_cho_solve, scipy_cholesky, scipy_det, scipy_expm, scipy_inv, scipy_solve,
    scipy_solve_triangular, scipy_toeplitz, solve_sees, solve_sees_t, toeplitz_grad,
    toeplitz_grad_t, trans_flip, trans_is, triangle)
from .runtime_special import *  # noqa: F401,F403
from . import runtime_pieces as _pieces  # (tuple outputs, np.block, np.insert)
from .runtime_pieces import *  # noqa: F401,F403
from . import runtime_gathers as _gathers  # (data-dependent gathers, np.bincount)
from .runtime_gathers import *  # noqa: F401,F403

__all__ = [
    "attempt",
    "tree_scale",
    "tree_vdot",
    "sort_order",
    "ieee_divide",
    "Stack",
    "cotangents",
    "pop_or_zeros",
    "LoopCheckpoints",
    "setitem",
    "own",
    "write_through",
    "view_again",
    "is_view_of",
    "follows_base",
    "item_again",
    "writes_through",
    "held_at",
    "takes_written",
    "alias_again",
    "in_layout",
    "setitem_grad_x",
    "GradTree",
    "pieces_tree",
    "zeros_grad",
    "as_grad",
    "astype",
    "astype_shared",
    "clip_grad",
    "clip_grad_max",
    "clip_grad_min",
    "cumsum_grad",
    "dot_grad_a",
    "dot_grad_b",
    "extremum_grad",
    "extremum_grad_add",
    "extremum_jvp",
    "inverse_permutation",
    "matmul_grad_a",
    "matmul_grad_b",
    "gemm",
    "lead_sum",
    "reshaped",
    "prod_grad",
    "select_grad",
    "unbroadcast",
    "rebroadcast",
    "unconcatenate",
    "unindex",
    "unreduce",
    "masked",
    "filled",
    "masked_count",
    "unstack",
    # srcad/runtime_arrays.py
    "asarray_like",
    "unasarray",
    "concatenate_pieces",
    "cumprod_grad",
    "running_extremum_grad",
    "running_extremum_jvp",
    "logaddexp_accumulate_grad",
    "logaddexp_accumulate_jvp",
    "cumprod_grad2",
    "cumprod_jvp2",
    "cumprod_jvp",
    "prod_others_jvp",
    "diag_grad",
    "flatten",
    "hsplit_axis",
    "join_pieces",
    "opposite",
    "pad_value_grad",
    "permute_like",
    "place_appended",
    "rolled_to",
    "select_default_grad",
    "select_default_jvp",
    "select_pieces",
    "sort_like",
    "stack_pieces",
    "unappend",
    "undiagonal",
    "undiff",
    "rediff",
    "unjoin",
    "unpad",
    "pad_tangent",
    "unpermute",
    "unrepeat",
    "unselect",
    "unsort",
    "unsplit",
    "unsupported_derivative",
    "untake",
    "untake_along_axis",
    "untile",
    # srcad/runtime_linalg.py
    "as_columns",
    "einsum_grad",
    "einsum_grad_first",
    "einsum_grad_tangent",
    "einsum_jvp",
    "einsum_jvp_first",
    "einsum_jvp_tangent",
    "from_columns",
    "inner_grad_a",
    "inner_grad_b",
    "kron_grad_a",
    "cross_grad_a",
    "cross_grad_b",
    "kron_grad_b",
    "sparse_matmul",
    "tensordot_grad_a",
    "tensordot_grad_b",
    # srcad/runtime_at.py
    "add_at",
    "subtract_at",
    "multiply_at",
    "maximum_at",
    "minimum_at",
    "negative_at",
    "at_gather",
    "at_take_a",
    "at_take_b",
    "reduceat_gather",
    "reduceat_scatter",
    # srcad/runtime_stats.py
    "average_identity",
    "average_pair",
    "average_part",
    "average_plus_count",
    "average_weights",
    "cov_grad",
    "cov_jvp",
    "cov_part",
    "cov_place",
    "cov_stack",
    "cov_weights",
    "order_grad",
    "order_jvp",
    "unaverage_weights",
    # srcad/runtime_signal.py
    "array_item",
    "choose_tree",
    "along_axis_index",
    "conv_crop",
    "conv_embed",
    "diagonal_index",
    "gradient_tree",
    "interp_basis",
    "item_grad",
    "multi_dot_grad",
    "multi_dot_grad2",
    "multi_dot_jvp",
    "multi_dot_jvp2",
    "outer_axes",
    "outer_shape",
    "mask_index",
    "place_take",
    "put_index",
    "put_take",
    "putmask_take",
    "unchoose",
    "ungradient",
    "unwindow",
    "last_writes",
    # srcad/runtime_decompositions.py
    "eig_gaps",
    "fold_triangle",
    "phi_lower",
    "symmetric_from",
    "moved_axes",
    "qr_kind",
    "transpose_if",
    "norm_grad",
    "norm_grad_dot",
    "norm_jvp",
    "norm_reduce",
    "diag_embed",
    "norm_matrix_axes",
    "norm_svd_unweights",
    "norm_svd_weights",
    "norm_uses_svd",
    "svd_gaps",
    "svd_grad",
    "svd_jvp",
    "svd_s_grad",
    "svd_s_grad_usv",
    # srcad/runtime_python.py
    "Items",
    "Slots",
    "append_tangents",
    "appended_tangent",
    "container_set",
    "store_into",
    "sync_into",
    "store_through",
    "container_tangent_value",
    "container_tangent_x",
    "dict_get",
    "get_grad_d",
    "get_grad_default",
    "get_tangent",
    "get_tangent_default",
    "sequence_grad",
    "sequence_tangent",
    "mapping_grad",
    "mapping_tangent",
    "dict_copy",
    "dict_without",
    "ordered_dict",
    "object_attribute",
    "to_float",
    "same_object",
    "where_input",
    "unpacked",
    "py_fsum",
    "py_mean",
    "py_correlation",
    "py_covariance",
    "py_dist",
    "py_geometric_mean",
    "py_harmonic_mean",
    "py_stdev",
    "py_variance",
    "dict_keys",
    "dict_set",
    "item_grad",
    "without_item",
    "grow_grad",
    "head_grad",
    "key_grad",
    "key_tree",
    "keyed_tangent",
    "keys_tangent",
    "last_grad",
    "list_append",
    "list_concat",
    "take_span",
    "put_span",
    "span_tangent",
    "list_repeat",
    "repeat_grad",
    "repeat_spread",
    "repeat_tangent",
    "slot_tree",
    "without_key",
    "field_grad",
    "field_index",
    "field_tangent",
    "item_at",
    "item_tangent_at",
    "drop_fields",
    "replace_fields",
    "spatial_cdist",
    "cho_factor_grad", "cho_factor_tangent", "cho_solve_grad_c", "cho_solve_tangent_c",
    "scipy_cho_factor", "scipy_cho_solve", "scipy_cholesky", "scipy_det", "scipy_inv",
    "scipy_solve", "scipy_solve_triangular", "scipy_toeplitz", "solve_sees", "solve_sees_t",
    "toeplitz_grad", "toeplitz_grad_t", "trans_flip", "trans_is", "triangle",
]
__all__ += _pymath.__all__ + _poly.__all__ + _special.__all__ + _pieces.__all__
__all__ += _gathers.__all__ + [n for n in _scipy_signal.__all__ if not n.startswith("sig_check")]


_PY_NUMBERS = (int, float, bool)


def ieee_divide(x, y):
    """``x / y`` as numpy computes it: where both are Python numbers and y is 0, numpy's
    answer (an np.float64 inf or nan, with numpy's RuntimeWarning) in place of Python's
    ZeroDivisionError; anywhere else exactly ``x / y``, of the same type.

    Generated code spells a rule's division with it where both operands may be Python
    numbers (`specialise.ieee_divisions`: ``g / x`` of np.log at a Python float argument),
    and tape mode runs rules with their divisions spelled so too: a rule's derivative is
    numpy's, never an exception Python's own arithmetic would raise."""
    if type(x) in _PY_NUMBERS and type(y) in _PY_NUMBERS and y == 0:
        return np.divide(x, y)
    return x / y


def same_object(a, b):
    """`y is a`: are two names bound to one array? (frontend/aliases.py `split_reads`: which
    adjoint a read adds into; no gradient of its own.)"""
    return a is b


def unpacked(x, n: int):
    """`a, b, c = x` of a value whose length is known only when the code runs (a list a
    callee built, an array): x itself, once it has n items (an iterable that cannot be read
    by index, as a tuple of its items) -- else Python's own error."""
    if isinstance(x, (numbers.Number, np.generic)) or (isinstance(x, np.ndarray) and
                                                        x.ndim == 0):
        raise TypeError(f"cannot unpack non-iterable {type(x).__name__} object")
    if not hasattr(x, "__getitem__"):  # (a dict's values, a set, zip(...), a generator:
        x = tuple(x)  # Python unpacks any iterable; the code reads the items by index)
    k = len(x) if hasattr(x, "__len__") else n  # (srcad's own GradTree: read by item)
    if k != n:
        raise ValueError(f"too many values to unpack (expected {n})" if k > n else
                         f"not enough values to unpack (expected {n}, got {k})")
    return x


def where_input(x, where):
    """An input of a ufunc called with ``where=`` (``np.log(p, out=o, where=p > 0)``):
    `x` broadcast against the mask, so that the backward masks each element's gradient
    before any broadcast sum (frontend/normalize.py `_out_keyword_as_write`)."""
    shape = np.broadcast_shapes(np.shape(x), np.shape(where))
    return np.broadcast_to(x, shape).copy() if np.shape(x) != shape else x


def _norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the cotangent of a reduction of `x` back to `x`'s shape.

    The result is a read-only broadcast view (no memory is spent on the repeated values);
    the ops that consume it make fresh arrays.
    """
    return np.broadcast_to(_kept(g, x, axis, keepdims), _shape(x))


def _kept(g, x, axis=None, keepdims=False):
    """The cotangent of a reduction of `x` with the reduced axes kept (length 1), in `x`'s
    dtype: what `unreduce` broadcasts."""
    if not keepdims and axis is not None:
        g = np.expand_dims(g, _norm_axes(axis, len(_shape(x))))
    dtype = _dtype(x)
    g = np.asarray(g)
    if dtype is not None and g.dtype != dtype:
        g = g.astype(dtype)
    return g


def masked(x, where=True):
    """`x` where `where` holds and 0 elsewhere: the gradient of a reduction's ``where=``
    (numpy reads only the elements it selects). ``where=True`` (numpy's default) is `x`
    itself, and the specialiser drops the call (srcad/transform/specialise.py)."""
    if where is True:
        return x
    return np.where(where, x, np.zeros((), dtype=np.result_type(x)))


def filled(x, where=True, value=np.nan):
    """`x` where `where` holds, `value` elsewhere (``np.max(x, where=m)``'s gradient reads the
    selected elements only: the others filled with NaN, which equals nothing). ``where=True``
    is `x` itself."""
    if where is True:
        return x
    return np.where(where, x, np.asarray(value, dtype=np.result_type(x)))


def masked_count(n, x, axis=None, keepdims=False, where=True):
    """How many elements of `x` a reduction with ``where=`` reads into each output: `n` (the
    caller's count of the whole slot) for ``where=True``, else the count of `where`
    broadcast to x's shape over `axis`, in x's float dtype (a divisor that keeps float32)."""
    if where is True:
        return n
    dtype = _dtype(x)
    if dtype is None or not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    count = np.sum(np.broadcast_to(where, _shape(x)), axis=axis, keepdims=keepdims)
    return count.astype(dtype)


def unindex(g, x, index):
    """Scatter-add `g` into zeros shaped like `x` at `index` (basic or advanced).

    For a dict, list or tuple `x` (a pytree argument such as ``params["W1"]``) the gradient
    is a `GradTree` holding `g` in that one slot.
    """
    # (a GradTree: a tuple op's cotangent; a _Zero: the missing slot of one)
    if isinstance(x, (dict, list, tuple, GradTree, _Zero)):
        # (a user's dict subclass may answer any attribute, or raise KeyError for one:
        # only srcad's own trees are asked)
        length = len(x) if isinstance(x, (list, tuple)) else getattr(x, "length", None) \
            if isinstance(x, (GradTree, _Zero)) else None
        like = x if not isinstance(x, (GradTree, _Zero)) else getattr(x, "like", None)
        if isinstance(index, np.integer):
            index = int(index)
        if length is None:  # a dict: the key itself
            return GradTree({index: g}, None, like)
        if isinstance(index, slice):  # xs[1:] is a list of the items it picks
            picked = range(length)[index]
            return GradTree({i: s for j, i in enumerate(picked)
                             if (s := _slot(g, j)) is not None}, length, like)
        if isinstance(index, int) and not isinstance(index, bool):
            if not -length <= index < length:
                raise IndexError(f"srcad: index {index} out of range for {length} items")
            index %= length  # p[-1] is p[2] of three: one slot per item, whatever the spelling
        return GradTree({index: g}, length, like)
    dtype = _dtype(x)
    if isinstance(x, np.ndarray):
        # zeros in x's memory order: source mode scatters a gather's cotangent into its own
        # adjoint buffer (`dx[i] += g`, which keeps that buffer's order), the tape and the
        # other forms add `unindex(...)`; numpy lays out a sum of a transposed adjoint and
        # C-ordered zeros in C order, and a later reduction over it then adds in another
        # order (the two modes differed in the last bits)
        out = np.zeros_like(x, dtype=np.result_type(g) if dtype is None else dtype)
    else:
        out = np.zeros(_shape(x), dtype=np.result_type(g) if dtype is None else dtype)
    parts = index if isinstance(index, tuple) else (index,)
    basic = all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice))
                for p in parts)
    if basic:
        out[index] = g
    elif not _scatter_rows(out, index, g):
        np.add.at(out, index, g)
    return out


def _scatter_rows(out, index, g) -> bool:
    """`np.add.at(out, index, g)` in C when `index` is one integer array (an embedding's
    gradient: ``table[tokens]``) and `g` has out's dtype and exactly the gathered shape: the
    same adds in the same order, without ufunc.at's dispatch per index (~300 us -> ~10 us
    for the demo GPT's 512 tokens). False where that is not the case: the caller runs
    np.add.at itself."""
    if _SCATTER[0] is None:
        _SCATTER[0] = scatter_add_rows() or False
    fn = _SCATTER[0]
    if not fn or type(index) is not np.ndarray or index.dtype.kind not in "iu" or \
            type(g) is not np.ndarray or g.dtype != out.dtype or \
            g.shape != index.shape + out.shape[1:]:
        return False
    try:
        fn(out, index, np.ascontiguousarray(g))
    except TypeError:
        return False
    return True


_SCATTER: list = [None]


def gemm(a, b):
    """``a @ b``, as fused code (``fuse=True``) spells a matmul: numpy's product bit for bit.
    Where srcad runs the BLAS at one thread in its calls (a BLAS whose products change with
    its thread count: srcad.build.pinned), the C runtime's `gemm` computes large float32 and
    float64 products on srcad's own threads, blocks of rows pulled one at a time, each a
    one-thread BLAS call (kernels_c/srcad_gemm.h); everything else, and everything without the
    C runtime, is numpy's own ``a @ b``."""
    fn = _GEMM[0]
    if fn is None:
        fn = c_helper("gemm")
        if fn is None:  # (no runtime yet, or none at all: numpy's, and look again next time)
            return a @ b
        _GEMM[0] = fn
    return fn(a, b)


_GEMM: list = [None]


def lead_sum(x, axis):
    """``x.sum(axis=axis)``, `axis` being 0 or ``(0, 1, ..., k-1)``, as fused code spells a sum
    over leading axes (a bias's gradient, ``dh.sum(axis=(0, 1))``): numpy's sum bit for bit,
    by the C runtime on srcad's threads where it handles the case (a C-contiguous float32 or
    float64 array keeping two values or more: kernels_c/srcad_colsum.h, which adds each
    column's values in numpy's order), numpy's own sum everywhere else. The runtime's sums
    are checked against numpy's once per process (`_lead_sum_checked`)."""
    fn = _LEAD[0]
    if fn is None:
        fn = _lead_sum_checked()
    if fn and type(x) is np.ndarray:
        try:
            return fn(x, axis + 1 if type(axis) is int else len(axis))
        except TypeError:
            pass
    return x.sum(axis=axis)


_LEAD: list = [None]


def reshaped(x, shape):
    """``np.reshape(x, shape)``, as fused code spells it: where numpy would copy (a view no
    strides can express: attention's heads merged back, ``np.reshape(np.transpose(h, (0, 2, 1,
    3)), (B, T, D))``), a large array's copy is made by the C runtime on srcad's threads
    (kernels_c/srcad_colsum.h `c_copy`), the same bytes; numpy's view where numpy makes one;
    numpy's own reshape for everything else, and with a numpy older than 2.1 (whose reshape
    cannot be asked not to copy: setting `.shape` instead copies, then refuses)."""
    if type(x) is np.ndarray and x.flags.c_contiguous:
        return x.reshape(shape)  # (a view: the common case, as cheap as the method)
    if _NO_COPY and type(x) is np.ndarray and x.size >= _COPY_MIN and x.dtype.kind in "fciub":
        try:
            return np.reshape(x, shape, copy=False)  # (numpy's own view, where one expresses it)
        except ValueError:  # (numpy would copy: the same copy, on srcad's threads)
            pass
        fn = _C_COPY[0]
        if fn is None:
            fn = _C_COPY[0] = c_helper("c_copy")
        if fn is not None:
            try:
                return fn(x).reshape(shape)
            except TypeError:
                pass
    return np.reshape(x, shape)


_NO_COPY = "copy" in inspect.signature(np.reshape).parameters  # (numpy >= 2.1)
_C_COPY: list = [None]
_COPY_MIN = 65536  # elements (the runtime's size threshold for its threads)


def _lead_sum_checked():
    """The runtime's `lead_sum`, or False where its sums are not numpy's bit for bit on a few
    probe arrays (checked once per process: numpy's order of a reduction is its iterator's
    choice, not a documented contract); None while there is no runtime (look again later)."""
    fn = c_helper("lead_sum")
    if fn is None:
        return None
    rng = np.random.default_rng(25)
    ok = True
    for shape in ((3, 5), (7, 2), (64, 300), (2, 3, 33), (1, 4), (40, 1030)):
        for dtype in (np.float32, np.float64):
            x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 6, shape)).astype(dtype)
            x.flat[::7] = -0.0
            for k in range(1, x.ndim):
                want, got = x.sum(axis=tuple(range(k))), fn(x, k)
                ok = ok and want.shape == got.shape and \
                    want.tobytes() == got.tobytes()
    _LEAD[0] = fn if ok else False
    return _LEAD[0]


def setitem(x, index, value):
    """``x[index] = value`` as a value: a new array (copy on write), `x` unchanged.

    srcad's generated code never writes into an array that another name may still read (a
    saved value, the caller's argument): this is how `x[i] = v` and `x[i] += v` are
    differentiated (see frontend/normalize.py for the aliasing rules).
    """
    if isinstance(x, list) and isinstance(index, slice):
        # (the write-back of `ys = xs[a:b]; ys[i] = v` followed as numpy's view, or a slice
        # assignment into a list: in Python a slice of a list is a copy)
        raise SrcadError("a write into a list through a slice of it (`ys = xs[a:b]` then "
                         "`ys[i] = v`, or `xs[a:b] = ...`): srcad follows a slice as numpy's "
                         "view, but a slice of a Python list is a copy",
                         hint="copy with `ys = list(xs)` (or `list(xs[a:b])`) before writing")
    if isinstance(x, (dict, list)):  # `d[k] = v` / `xs[i] = v` on a dict or list: a new one
        return container_set(x, index, value)
    out = np.array(x, copy=True)
    out[index] = value
    return out


def store_into(container, index, value, levels: int = 0):
    """``param[k] = v`` on a dict (or list) the caller passed: the caller's own object ends up
    holding v, as Python leaves it (an effect, once per call: frontend/aliasing.py). The
    differentiated code itself carries the new dict as a value (`setitem`); an array argument
    is left as it was (copy on write). With `levels` (``p[0][1] = v``, lowered as `item =
    p[0]; item[1] = v; p[0] = item`: `value` is the code's new item) Python wrote into the
    list or dict the slot holds, not a new one: the caller's own object there is written
    (`merge_into`), so a name the caller bound to it sees the write."""
    if not isinstance(container, (dict, list)):
        return
    if levels and _same_container(container[index], value):
        merge_into(container[index], value, levels)
    else:
        container[index] = value


def sync_into(container, owned) -> None:
    """The caller's list, dict or set after the function's own copy of it (`own`) was
    changed by one of its methods (`c.pop()`, `c.append(v)`, `c.setdefault(k, [])`), by a
    method of a list or dict it holds (`c["hist"].append(v)`), or by a function given it
    (`log_step(c)`): the caller's object made to hold what the copy holds -- the same items,
    in the same order -- as Python's one object would (an effect, once per call). A list or
    dict the copy holds in place of the caller's own (`own` copies those) is written into the
    caller's own, a level down, so that a name the caller bound to it sees the change too."""
    if container is owned or type(container) is not type(owned):
        return
    if isinstance(container, set):
        container.clear()
        container.update(owned)
    elif isinstance(container, (list, dict)):
        _sync_level(container, owned, 0)


def _sync_level(old, new, depth: int):
    """`old` (the caller's list or dict) made to hold what `new` (the code's copy) holds;
    returns `old`. Slots that correspond -- the same object, or a list or dict in both --
    keep the caller's object, synced a level down; a list aligns its unchanged head and tail
    (an append, a pop, an insert at the front move no other item)."""
    def keep(a, b):
        return _sync_level(a, b, depth + 1) if depth < 32 and _same_container(a, b) else b

    def corresponds(a, b):
        return a is b or _same_container(a, b)

    if old is new:
        return old
    if type(old) is list:
        n, m = len(old), len(new)
        head = 0
        while head < min(n, m) and corresponds(old[head], new[head]):
            head += 1
        tail = 0
        while tail < min(n, m) - head and corresponds(old[n - 1 - tail], new[m - 1 - tail]):
            tail += 1
        merged = [keep(old[i], new[i]) for i in range(head)] + new[head:m - tail] + \
            [keep(old[n - tail + j], new[m - tail + j]) for j in range(tail)]
        if len(merged) != n or any(a is not b for a, b in zip(old, merged)):
            old[:] = merged
        return old
    merged = {k: keep(old[k], b) if k in old else b for k, b in new.items()}
    if list(old) != list(merged):
        old.clear()
        old.update(merged)
    else:
        for k, b in merged.items():
            if old[k] is not b:
                old[k] = b
    return old


def store_through(container, index, value, old):
    """The caller's object after a write through a name bound to its item (`W = p['W'];
    W -= t`): its slot holds the written item if it still held that object (`old`), as in
    Python; a slot stored into since holds another object, left as it is. A list or dict
    item (`L = p['layers']; L[0] = v`) is the caller's own object, written in place."""
    if not isinstance(container, (dict, list)):
        return
    if writes_through(container, index, old):
        if _same_container(old, value):
            merge_into(old, value, 1)
        else:
            container[index] = value
    elif _same_container(old, value) and _holds_as(container[index], old):
        # (the caller's own object there, written in place by an earlier store -- it holds
        # the very items of the code's copy `old`: `e1 = p["enc"]; e2 = p["enc"]`, a store
        # through each)
        merge_into(container[index], value, 1)


def _same_container(old, new) -> bool:
    return type(old) is type(new) and type(old) in (list, dict) and old is not new


def _holds_as(mine, copy) -> bool:
    """Is the caller's list or dict `mine` what the code's copy-on-write `copy` stands for
    -- the same kind, holding the very same objects (`merge_into` leaves it so)?"""
    if not _same_container(mine, copy) or len(mine) != len(copy):
        return False
    if type(mine) is list:
        return all(a is b for a, b in zip(mine, copy))
    return all(k in copy and mine[k] is copy[k] for k in mine)


def merge_into(old, new, levels: int) -> None:
    """Make the caller's list or dict `old` hold what the code's copy-on-write `new` holds
    (a copy of `old` with some slots stored into), writing only the slots that differ: a slot
    that holds another object gets it, or -- `levels` > 1, both the same kind of container --
    is itself written in place, a level down (``p[0][1][2] = v``)."""
    def put(key, a, b):
        if a is b:
            return
        if levels > 1 and _same_container(a, b):
            merge_into(a, b, levels - 1)
        else:
            old[key] = b

    if type(old) is list:
        if len(old) != len(new):
            old[:] = new
            return
        for i, (a, b) in enumerate(zip(old, new)):
            put(i, a, b)
    else:
        for k in [k for k in old if k not in new]:
            del old[k]
        for k, b in new.items():
            if k in old:
                put(k, old[k], b)
            else:
                old[k] = b


def own(container):
    """The generated code's own copy of a list or dict argument the function stores into
    (`p_caller, p = p, own(p)`): the stores go into the caller's object (`store_into`), and
    the code, whose backward reads the argument as it came in, reads this copy. The items are
    shared -- the arrays, and every object but the lists, dicts and tuples holding them:
    those are copied too, at every depth, since the caller's own are written in place
    (`p[0][1] = v`: `store_into`, `store_through`) while the code reads them as they came in.
    Anything else (an array is copied on write) is itself."""
    if type(container) is list:
        return [own(v) for v in container]
    if type(container) is dict:
        return {k: own(v) for k, v in container.items()}
    if type(container) is tuple and any(type(v) in (list, dict, tuple) for v in container):
        return tuple(own(v) for v in container)
    return container


def write_through(x, index, value, view, stored=False):
    """numpy's `view += t`, seen from `x`, where `view = x[index]` with integer indices: an
    array view (x changes: `x[index] = value`), or a scalar copy when the index picks one
    element (x stays as it is); a list's or dict's item is the object itself: `x` holds it,
    written -- if its slot still holds that object (`W = p['W']; p['W'] = W * 2; W -= t`
    leaves p as it is). One generated line serves every case (`writes_through`). `stored`:
    the statement is the item's own `x[index] op= t` of a list or dict, which Python ends by
    storing the result into the slot whatever the item is -- a number's new value too
    (`d["n"] += 1`; `n = d["n"]; n += 1` leaves d as it is)."""
    if not writes_through(x, index, view, stored):
        return x
    if isinstance(x, (list, dict)):
        _note_written(value, view)
    return setitem(x, held_at(x, index, view), value)


# id(new) -> (weak references to new and to old): `new` is a container item's array `old`
# written in place by write_through (srcad's code makes a new array where numpy writes into
# the old one: Python's object is still the old one). `follows_item` walks it back.
_WRITTEN: dict = {}


def _note_written(new, old) -> None:
    if new is old or type(new) is not np.ndarray or type(old) is not np.ndarray:
        return
    key = id(new)

    def gone(ref, key=key):
        if _WRITTEN.get(key, (None,))[0] is ref:
            del _WRITTEN[key]

    _WRITTEN[key] = (weakref.ref(new, gone), weakref.ref(old))


def follows_item(x, index, view) -> bool:
    """Is `view`, bound earlier to the list's or dict's item `x[index]`, the very object
    that slot holds now -- written in place since (by a write through another name, in a
    loop or a callee srcad inlined, where no one IR name was written), so that Python's
    name shows the new values? (`view_again`'s choice for a container, its rules' too.)"""
    if not isinstance(x, (list, dict)) or type(view) is not np.ndarray:
        return False
    try:
        now = x[index]
    except (IndexError, KeyError, TypeError):
        return False
    if now is view:
        return False  # (the slot's very object: kept as bound, its gradient there)
    for _ in range(1 << 16):  # (each write of the slot in turn, newest first)
        link = _WRITTEN.get(id(now))
        if link is None or link[0]() is not now:
            return False
        now = link[1]()
        if now is view:
            return True
    return False


def follows_base(x, index, view) -> bool:
    """`view_again`'s choice: is `view = x[index]`, made again from a new `x`, x's item now
    -- an array's view of its memory (`is_view_of`), or the container's item written in
    place since it was bound (`follows_item`)?"""
    return is_view_of(x, view) or follows_item(x, index, view)


def held_at(x, index, view):
    """Where a write through `view` (read as x[index]) lands in x: `index`, or -- a list or
    dict holding that one object in several slots (`hs = [h] * T`, `ps = [W, W]`) -- every
    such slot (a `Held`), as numpy's one array shows the write in each."""
    if isinstance(x, (list, dict)) and isinstance(view, (np.ndarray, list, dict)):
        slots = [k for k in (range(len(x)) if isinstance(x, list) else x) if x[k] is view]
        if len(slots) > 1:
            return Held(slots)
    return index


def writes_through(x, index, view, stored=False) -> bool:
    """`write_through`'s choice, and its rules': does writing `view` (read as x[index]) write
    x?"""
    if isinstance(x, (list, dict)):  # (a number item: `v *= 2` rebinds v, the slot keeps
        # it -- but `x[index] op= t` stores into the slot: always, and asked again by the
        # backward after later stores may have changed the slot, so not asked of x)
        return stored or (x[index] is view and isinstance(view, (np.ndarray, list, dict)))
    return isinstance(view, (list, dict)) or bool(np.ndim(view))


def alias_again(new, old):
    """After `y op= t`, a name that was `y` (`z = y`): the same array, so it sees the new
    values -- a list too, which `+=` / `*=` extend in place (`c["hist"]` given to a callee's
    `log += [v]`) -- or, when `y` held a scalar or a tuple, which `op=` rebinds, the old
    value."""
    return new if isinstance(old, np.ndarray) or (type(old) is list and
                                                   type(new) is list) else old


def in_layout(new, like):
    """numpy's `v op= t` as a value: numpy writes the result into v's own memory, so v keeps
    its memory order (a transposed view stays F-ordered), where srcad's `v op t` gets the
    order the ufunc picks (C where the operands' orders differ). The same values in `like`'s
    layout (`np.empty_like`, order 'K'), so that a later reduction over v adds in numpy's
    order; an array already in that layout (every C-ordered one) is returned as it is. A
    0-d `v` stays a 0-d array (`v op t` of one gives a numpy scalar; numpy's `v op= t`
    writes into v, which its other names still share: alias_again tells the two apart by
    it)."""
    if type(like) is np.ndarray and like.ndim == 0 and not isinstance(new, np.ndarray):
        return np.asarray(new)
    if (type(new) is np.ndarray and type(like) is np.ndarray and like.ndim > 1
            and not like.flags.c_contiguous and new.shape == like.shape):
        out = np.empty_like(like, dtype=new.dtype)
        if out.strides != new.strides:
            out[...] = new
            return out
    return new


def view_again(x, index, view):
    """`view = x[index]` made again from a new `x` (its base was written): a view follows
    its base, a scalar copy (an index that picked one element) keeps its value, and so does
    an item of a list, tuple or dict (the object itself, not a view: a write puts another
    object in its slot) -- unless the object in that slot now is `view` itself written in
    place since (`follows_item`)."""
    return x[index] if follows_base(x, index, view) else view


def item_again(x, index, view, old, new):
    """`view = x[index]` made again after a write through another name bound to an item of x
    (the item `old`, now `new`): a list's, tuple's or dict's item is an object, so `view`
    becomes the written one if it was that very object (Python's names share it, whatever
    the index spelled: `p[-1]`, `p[1]`) and keeps its own otherwise (a slot stored into since
    it was bound holds another); an array's view follows its base (`view_again`)."""
    if takes_written(x, view, old):
        return new
    return view_again(x, index, view)


def takes_written(x, view, old) -> bool:
    """`item_again`'s choice: is `view` the container item written through another name --
    an object written in place (an array, list or dict)? A number is never written: `n =
    d["n"]; d["n"] += 1` stores a new number in the slot, and n keeps the old one."""
    return isinstance(x, (list, tuple, dict)) and view is old and \
        isinstance(old, (np.ndarray, list, dict))


def is_view_of(x, view) -> bool:
    """Did `view = x[index]` give a view of x's memory (an array of an array), rather than
    a scalar copy or a container's item? (`view_again`'s choice, its rules' too.)"""
    return not isinstance(x, (list, tuple, dict)) and bool(np.ndim(view))


def setitem_grad_x(g, index):
    """The cotangent of `setitem`'s `x`: `g` with the overwritten positions zeroed."""
    if isinstance(g, (GradTree, _Zero)) or g is None:  # a dict's or list's cotangent
        return without_item(g, index)
    out = np.array(g, copy=True)
    out[index] = 0
    return out


def set_tangent_x(g, index, out):
    """The tangent of ``setitem(x, index, value)`` through x: g, zero where it was written
    (a dict's or list's tangent: zero under that key)."""
    if isinstance(out, (dict, list)):
        return container_tangent_x(g, index, out)
    return setitem(g, index, 0)


def set_tangent_value(g, index, out):
    """The tangent of ``setitem(x, index, value)`` through value: zeros, g where it was
    written (a dict's or list's tangent: g under that key, zeros elsewhere)."""
    if isinstance(out, (dict, list)):
        return container_tangent_value(g, index, out)
    return setitem(np.zeros_like(out), index, g)


def set_tangent_value_grad(g, index, ct):
    """The transpose of `set_tangent_value` in its g: the written slot of ct."""
    if isinstance(ct, (GradTree, _Zero, dict, list)) or ct is None:
        return item_grad(ct, index, None)
    return unbroadcast(ct[index], g)


def unconcatenate(g, xs, axis=0):
    """Split the cotangent of `np.concatenate(xs, axis)` into one piece per input.

    With ``axis=None`` numpy flattens every input first, so each piece is reshaped back.
    """
    if axis is None:
        sizes = [np.size(x) for x in xs]
        pieces = np.split(np.ravel(g), np.cumsum(sizes)[:-1])
        return pieces_tree([np.reshape(p, np.shape(x)) for p, x in zip(pieces, xs)], xs)
    sizes = [np.shape(x)[axis] for x in xs]
    bounds = np.cumsum(sizes)[:-1]
    return pieces_tree(np.split(g, bounds, axis=axis), xs)


def unstack(g, xs, axis=0):
    """Split the cotangent of `np.stack(xs, axis)` into one piece per input."""
    return pieces_tree([np.take(g, i, axis=axis) for i in range(len(xs))], xs)


_FORMS: dict = {}  # matmul_grad_form's expression -> a compiled function of (g, a, b)


def _run_form(form, g, a, b):
    fn = _FORMS.get(form)
    if fn is None:
        fn = _FORMS[form] = eval(f"lambda g, a, b: {form}",  # noqa: S307 (our own text)
                                 {"np": np, "unbroadcast": unbroadcast})
    return fn(g, a, b)


def _matrix(x):
    return x if isinstance(x, np.ndarray) else np.asarray(x)


def matmul_grad_a(g, a, b):
    """d(a @ b)/da applied to g, for 1-D, 2-D and batched (broadcast) operands: the plain GEMM
    of `matmul_grad_form` (shared with the generated code, so both modes run the same calls)."""
    a, b = _matrix(a), _matrix(b)
    # unbroadcast: shapes already match; it casts to a's dtype (mixed precision operands)
    return unbroadcast(_run_form(matmul_grad_form(a.shape, b.shape, "a"), g, a, b), a)


def matmul_grad_b(g, a, b):
    """d(a @ b)/db applied to g (see `matmul_grad_a`)."""
    a, b = _matrix(a), _matrix(b)
    return unbroadcast(_run_form(matmul_grad_form(a.shape, b.shape, "b"), g, a, b), b)


def dot_grad_a(g, a, b):
    """d(np.dot(a, b))/da applied to g.

    np.dot is matmul for 1-D and 2-D operands and multiplication when either is 0-d; for
    N-D ``b`` it contracts a's last axis with b's second-to-last:
    ``out[i..., j..., m] = sum_k a[i..., k] b[j..., k, m]``, so da = tensordot(g, b) over
    b's other axes.
    """
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    if np.ndim(b) <= 2:
        return matmul_grad_a(g, a, b)
    nb = np.ndim(b)
    g_axes = tuple(range(np.ndim(a) - 1, np.ndim(g)))  # g's axes that come from b
    b_axes = tuple(i for i in range(nb) if i != nb - 2)
    return np.tensordot(g, b, axes=(g_axes, b_axes))


def dot_grad_b(g, a, b):
    """d(np.dot(a, b))/db applied to g (see `dot_grad_a`)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    if np.ndim(b) <= 2:
        return matmul_grad_b(g, a, b)
    na, nb = np.ndim(a), np.ndim(b)
    lead = tuple(range(na - 1))
    gb = np.tensordot(a, g, axes=(lead, lead))  # (k, j..., m)
    return np.moveaxis(gb, 0, nb - 2).copy()




def select_grad(g, mask):
    """`g` where `mask` holds, else 0: the VJP of a selection (where, maximum, abs, clip)."""
    return np.where(mask, g, np.zeros_like(g))


def extremum_grad(g, out, x, axis=None, keepdims=False):
    """VJP of max/min reductions: split `g` evenly among the tied extrema (as torch.amax)."""
    if isinstance(x, np.ndarray) and x.ndim and axis in (-1, x.ndim - 1):
        rows = c_helper("extremum_grad_rows")  # over the last axis: one C pass, same bits
        if rows is not None:
            try:
                return rows(_kept(g, x, axis, keepdims), _kept(out, x, axis, keepdims), x)
            except TypeError:
                pass  # (not a case it handles: a strided x, a broadcast g)
    full_out = unreduce(out, x, axis, keepdims)
    mask = x == full_out
    count = np.sum(mask, axis=axis, keepdims=True)
    gk = _kept(g, x, axis, keepdims)
    # each extremum's share, once per reduced slot (the same division as on the broadcast
    # array, so the same bits), then placed where the extrema are: two full passes, not four
    # (a slot with no extremum -- NaN in it, or an initial= that is the max -- gets nothing:
    # divided by 1, not 0, its share is never placed)
    share = gk / np.maximum(count, 1).astype(gk.dtype)
    return np.where(mask, share, np.zeros((), share.dtype))


def extremum_grad_add(acc, g, out, x, axis=None, keepdims=False):
    """``acc + extremum_grad(g, out, x, axis, keepdims)``, the same values: fused code's form of
    an adjoint that adds a max/min's gradient to another contribution (the softmax
    backward's ``dx = dz + extremum_grad(dz_max, z_max, x, -1, True)``). Over the last axis of
    same-typed C-ordered arrays, one C pass: no middle array of shares, no second pass to add
    it (kernels_c/srcad_rowgrad.h); numpy's two statements otherwise."""
    if isinstance(x, np.ndarray) and type(acc) is np.ndarray and x.ndim and \
            axis in (-1, x.ndim - 1):
        rows = c_helper("extremum_grad_rows")
        if rows is not None:
            try:
                return rows(_kept(g, x, axis, keepdims), _kept(out, x, axis, keepdims), x, acc)
            except TypeError:
                pass  # (not a case it handles, or a runtime built before `acc`)
    return acc + extremum_grad(g, out, x, axis, keepdims)


def extremum_jvp(g, out, x, axis=None, keepdims=False):
    """JVP of max/min reductions: the mean of the tangent over the tied extrema (0 where there
    is none: NaN in the slot, or an initial= that is the max, as the VJP)."""
    mask = x == unreduce(out, x, axis, keepdims)
    num = np.sum(np.where(mask, g, 0), axis=axis, keepdims=keepdims)
    count = np.sum(mask, axis=axis, keepdims=keepdims)
    return num / np.maximum(count, 1).astype(np.result_type(num))


def clip_grad(g, a, a_min, a_max):
    """VJP of np.clip w.r.t. `a`: g where a lies inside [a_min, a_max] (bounds may be None).

    np.clip is ``minimum(maximum(a, a_min), a_max)``; at a bound the gradient goes to `a`
    (as torch.clamp). With ``a_min > a_max`` the output is `a_max` and `a` gets nothing.
    """
    inside = np.ones(np.shape(a), dtype=bool)
    if a_min is not None:
        inside = inside & (a >= a_min)
    if a_max is not None:
        inside = inside & (a <= a_max)
    return np.where(inside, g, np.zeros_like(g))


def clip_grad_min(g, a, a_min, a_max):
    """VJP of np.clip w.r.t. `a_min`: g where a < a_min and the lower bound is the output."""
    mask = a < a_min
    if a_max is not None:
        mask = mask & (a_min <= a_max)
    return np.where(mask, g, np.zeros_like(g))


def clip_grad_max(g, a, a_min, a_max):
    """VJP of np.clip w.r.t. `a_max`: g where the output is a_max (a > a_max, or a_min > a_max)."""
    mask = a > a_max
    if a_min is not None:
        mask = mask | (a_min > a_max)
    return np.where(mask, g, np.zeros_like(g))


def prod_grad(g, a, axis=None, keepdims=False):
    """VJP of np.prod: g times the product of the *other* elements, exact with zeros.

    The reduced axes are moved last and flattened; the product of the others is the
    exclusive cumulative product from the left times the one from the right (no division,
    so a zero input gets the product of the rest, as torch).
    """
    a = np.asarray(a)
    nd = a.ndim
    axes = _norm_axes(axis, nd)
    kept = tuple(i for i in range(nd) if i not in axes)
    if any(a.shape[i] == 0 for i in axes):  # (a product of no elements is 1: `np.prod(X[:,
        # :0], axis=1)`, a polynomial's degree-0 column -- and the gradient of no elements)
        return np.zeros(a.shape, np.result_type(np.asarray(g).dtype, a.dtype))
    perm = kept + axes
    moved = np.transpose(a, perm)
    lead = moved.shape[: len(kept)]
    flat = np.reshape(moved, lead + (-1,))
    ones = np.ones(lead + (1,), dtype=a.dtype)
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = np.reshape(left * right, moved.shape)
    others = np.transpose(others, inverse_permutation(perm))
    return unreduce(g, a, axis, keepdims) * others


def cumsum_grad(g, a, axis=None):
    """VJP of np.cumsum: a reversed cumulative sum of g (over the flattened input for None)."""
    if axis is None:
        return np.reshape(np.cumsum(np.ravel(g)[::-1])[::-1], np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def inverse_permutation(axes, ndim=None):
    """The axes that undo `np.transpose(x, axes)` (None stays None).

    Negative axes count from the end of `ndim` axes: (0, -1, 1) is (0, 2, 1) for 3-D.

    >>> inverse_permutation((2, 0, 1))
    (1, 2, 0)
    >>> inverse_permutation((0, -1, 1), 3)
    (0, 2, 1)
    """
    if axes is None:
        return None
    n = len(axes) if ndim is None else ndim
    return tuple(int(i) for i in np.argsort([int(a) % n for a in axes]))


inverse_permutation.static = True


def astype(x, dtype):
    """`x.astype(dtype)` as a function, so that the op table can hold it."""
    return np.asarray(x).astype(dtype)


def astype_shared(x, dtype):
    """`x.astype(dtype, copy=False)`: x itself where its dtype is already `dtype` (numpy may
    share the memory: the op table marks it a view, so a write through it is handled as
    through any view whose sharing is known only when running)."""
    return np.asarray(x).astype(dtype, copy=False)


def as_grad(d, x):
    """Make `d` a gradient for `x`: same shape and dtype, an array the caller owns.

    A Python float argument gets a Python float gradient; a dict, list or tuple argument gets
    the same structure (and key order) with a gradient per leaf.

    No copy where none is needed: an array leaf that nothing but the generated code's own
    frame refers to (its reference count says so, see `_LONE`), that owns its memory (or is
    the whole of a base nothing else refers to), writeable, of the right shape and dtype, is
    handed out as it is -- the caller is then the only holder, so it never sees the array
    change and no two gradients share memory. Anything else (a user's argument, a value the
    backward keeps, a view, the same array in two slots) is copied, as before.
    """
    return _as_grad(d, x, _LONE[0])


def _as_grad(d, x, lone):
    if type(x) is np.ndarray and type(d) is np.ndarray and d.shape == x.shape:
        # (the common leaf, an array's gradient an array of its shape: the steps below without
        # their generic calls -- np.issubdtype, np.ndim, np.shape -- ~3 us a leaf; the same
        # locals at the reference count, which `_calibrate_lone` measures through this path)
        if x.dtype.kind not in "fc":  # (`_inert_leaf`: an integer or bool array)
            return None
        dtype = x.dtype
        out = d
        refs = sys.getrefcount(d)
        if lone is None:
            _CALIBRATION.append(refs)
        elif refs <= lone and _sole_buffer(d, dtype, x):
            return d
        return np.array(out, dtype=dtype, copy=True)
    if isinstance(x, dict):
        return {k: (_as_grad(s, v, _LONE[1]) if (s := _slot(d, k)) is not None
                    else zeros_grad_leaf(v)) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [_as_grad(s, v, _LONE[1]) if (s := _slot(d, i)) is not None
                 else zeros_grad_leaf(v) for i, v in enumerate(x)]
        return type(x)(items) if not hasattr(x, "_fields") else type(x)(*items)
    if isinstance(x, float) and not isinstance(x, np.floating):
        return float(np.sum(d))
    if _inert_leaf(x):  # (a pytree's name, flag or count: no gradient)
        return None
    dtype = _dtype(x)
    dtype = np.float64 if dtype is None else dtype  # (a dtype's truth value is not reliable)
    if np.ndim(d) == 0 and np.shape(x) != ():
        # a container's slot nothing reached reads 0.0 (GradTree.__getitem__): zeros
        out = np.broadcast_to(d, np.shape(x))
    else:
        out = unbroadcast(np.asarray(d), x) if np.shape(d) != np.shape(x) else d
    if out is d and type(d) is np.ndarray and not isinstance(x, np.generic):
        refs = sys.getrefcount(d)
        if lone is None:  # calibrating `_LONE`: what a leaf nothing else holds shows here
            _CALIBRATION.append(refs)
        elif refs <= lone and _sole_buffer(d, dtype, x):
            return d
    out = np.array(out, dtype=dtype, copy=True)
    if isinstance(x, np.generic):
        return out[()]
    return out


def _sole_buffer(d, dtype, x) -> bool:
    """`d` is writeable, shaped and typed as the gradient of `x`, and owns its memory or is a
    C-contiguous view of all of a base array that only `d` refers to (a reshaped product)."""
    if d.dtype != dtype or d.shape != np.shape(x) or not d.flags.writeable:
        return False
    base = d.base
    if base is None:
        return True
    if type(base) is not np.ndarray or base.base is not None:
        return False
    refs = sys.getrefcount(base)
    if _LONE[2] is None:  # calibrating
        _CALIBRATION.append(refs)
        return False
    return (d.flags.c_contiguous and base.flags.c_contiguous and d.nbytes == base.nbytes and
            refs <= _LONE[2])


_CALIBRATION: list = []
_LONE: list = [None, None, None]  # (called directly, as a container's slot, a view's base)


def _calibrate_lone() -> None:
    """The reference counts a gradient leaf shows at `_as_grad`'s check when nothing but the
    calling frame holds it, measured through the very calls generated code makes: directly
    (`return as_grad(dx, x)`) and as a slot of a container (`return as_grad(dp, p)`), and
    the count of a base array only its view refers to. They differ between Python versions,
    so they are measured on this interpreter at import, never assumed; a count above them
    means someone else holds the array, and it is copied."""
    x = np.zeros(6)

    def top():
        dx = np.ones(6)
        return as_grad(dx, x)

    def tree():
        dp = GradTree({"a": np.ones(6)})
        return as_grad(dp, {"a": x})

    def view():
        dx = np.ones(6)
        _sole_buffer(dx.reshape(6), dx.dtype, x)  # (a view of a base only it refers to)

    _LONE[:] = [None, None, None]
    _CALIBRATION.clear()
    top()
    tree()
    # called directly, the calibration's leaf is also the caller's local `dx`: a real call
    # whose argument is an expression (`as_grad(saved[0], x)`) lacks that reference and may
    # have another holder in its place, so only a leaf with fewer references than that -- a
    # temporary nothing else holds -- is handed out (named arrays the generated code owns
    # need no as_grad at all: transform/reverse.py returns them as they are)
    lone = [_CALIBRATION[0] - 1, _CALIBRATION[1]]
    _CALIBRATION.clear()
    view()
    lone.append(_CALIBRATION[0] - 1)  # (the base's own name in `view` is not there in use)
    _CALIBRATION.clear()
    _LONE[:] = lone


def zeros_grad_leaf(x):
    """The gradient of an untouched leaf (or sub-tree) of a pytree argument: zeros."""
    if isinstance(x, (dict, list, tuple)):
        return as_grad(GradTree(), x)
    if isinstance(x, float):
        return 0.0
    if _inert_leaf(x):
        return None
    return np.zeros_like(x)


def _inert_leaf(x) -> bool:
    """A pytree leaf that carries no gradient: a string, a bool, an int, None, an integer
    or bool array."""
    if isinstance(x, (np.ndarray, np.generic)):
        return not np.issubdtype(x.dtype, np.inexact)
    return isinstance(x, (str, bytes, bool, int)) or x is None


class Stack:
    """A named stack of values the forward sweep records for the backward (Tangent's push/pop).

    It holds references, not copies: generated code never mutates a value in place. Reverse
    over reverse gives a stack a second stack, of its values' cotangents (`cotangents`).
    """

    __slots__ = ("_items", "_cotangents")

    def __init__(self):
        self._items = []
        self._cotangents = None

    def push(self, value) -> None:
        self._items.append(value)

    def pop(self):
        return self._items.pop()

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Stack({len(self._items)} items)"


def cotangents(stack: Stack) -> Stack:
    """The stack of cotangents of `stack`'s values, made on first use: the backward of
    ``w = stack.pop()`` pushes dw on it, that of ``stack.push(v)`` pops dv off it. It is found
    through the stack itself, so functions that share a stack share its cotangents."""
    if not isinstance(stack, Stack):  # (`.pop()` of a list srcad did not follow as a value)
        raise UnsupportedSyntaxError(
            f"`.pop()` of a {type(stack).__name__} the function does not make itself (an "
            f"argument, a module's, or one two names share): srcad follows the pops of lists "
            f"the function builds", hint="pop from a copy made in the function: "
            "`items = list(arg)`, then `items.pop()`")
    if stack._cotangents is None:
        stack._cotangents = Stack()
    return stack._cotangents


def pop_or_zeros(stack: Stack, like):
    """`stack.pop()`, or zeros like `like` if the stack is empty: a derivative stack that the
    function which fills it did not fill (it was not differentiated there: every value it
    would have pushed is zero)."""
    return stack.pop() if stack._items else zeros_grad(like)


def fresh_stacks(saved, memo=None):
    """`saved` with every Stack and LoopCheckpoints in it copied: the backward pops them, and
    a pullback may be called more than once. A stack reached twice is copied once (its
    cotangents are found through it: both references must stay one stack)."""
    memo = {} if memo is None else memo
    if isinstance(saved, Stack):
        if id(saved) not in memo:
            out = memo[id(saved)] = Stack()
            out._items = [fresh_stacks(v, memo) for v in saved._items]
        return memo[id(saved)]
    if isinstance(saved, LoopCheckpoints):
        return saved.copy()
    if isinstance(saved, tuple) and any(isinstance(v, (Stack, LoopCheckpoints, tuple))
                                        for v in saved):
        return tuple(fresh_stacks(v, memo) for v in saved)
    return saved


_calibrate_lone()
