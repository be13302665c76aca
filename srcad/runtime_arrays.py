"""Runtime helpers for the array-shaped ops of the table (srcad/ops/arrays.py): the backward
of diagonals, padding, sorting, gathers, splits, tiles, repeats and cumulative products.

Generated code calls them by name (re-exported from srcad/runtime.py), and each is a row of
the table (srcad/ops/helper_rows.py), so generated code can be differentiated again. All but
`cumprod_grad` / `cumprod_jvp` are linear in their first argument (a cotangent or tangent)
and read the others only for shapes, indices or permutations; each one's transpose is a numpy
call or another helper here, which is what its row says.

>>> undiagonal(np.array([1.0, 2.0]), np.zeros((2, 3)), 1).tolist()
[[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
>>> untake(np.ones(3), np.zeros(4), [0, 0, 3]).tolist()
[2.0, 0.0, 0.0, 1.0]
"""

from __future__ import annotations

import numpy as np

from .errors import SrcadError
from .gradtree import GradTree, _Zero, pieces_tree, zeros_grad

__all__ = [
    "asarray_like",
    "unasarray",
    "concatenate_pieces",
    "flatten",
    "hsplit_axis",
    "join_pieces",
    "permute_like",
    "rolled_to",
    "select_default_grad",
    "select_default_jvp",
    "select_pieces",
    "unappend",
    "undiff",
    "rediff",
    "unjoin",
    "unpermute",
    "unselect",
    "cumprod_grad",
    "cumprod_grad2",
    "cumprod_jvp",
    "cumprod_jvp2",
    "prod_others_jvp",
    "diag_grad",
    "opposite",
    "pad_value_grad",
    "place_appended",
    "sort_like",
    "stack_pieces",
    "undiagonal",
    "unpad",
    "pad_tangent",
    "unrepeat",
    "unsort",
    "unsplit",
    "unsupported_derivative",
    "untake",
    "untake_along_axis",
    "untile",
]



def _shape(x):
    return np.shape(x)


def _dtype(x):
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    return None


def unbroadcast(g, x):
    """Sum `g` over the axes along which `x` was broadcast; cast to `x`'s dtype.

    The backward of broadcasting, written once (HIPS autograd's `unbroadcast`).

    >>> unbroadcast(np.ones((2, 3)), np.zeros((1, 3))).tolist()
    [[2.0, 2.0, 2.0]]
    """
    if isinstance(g, GradTree) or isinstance(x, (dict, list, tuple, GradTree)):
        return g  # (the cotangent of a container stored whole: `d[k] = (a, b)`)
    if isinstance(g, _Zero):  # (a slot of a container's cotangent that nothing reached)
        return zeros_grad(x)
    shape = _shape(x)
    gshape = np.shape(g)
    if gshape != shape:
        lead = len(gshape) - len(shape)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1
        )
        if axes:
            g = np.sum(g, axis=axes)
        g = np.reshape(np.asarray(g), shape)  # asarray: a full sum is a numpy scalar
    dtype = _dtype(x)
    if dtype is not None and np.result_type(g) != dtype:
        g = np.asarray(g).astype(dtype)
    return g


def rebroadcast(h, ct):
    """The transpose of ``unbroadcast(ct, x)`` (its VJP in ct): `h` broadcast back to `ct`'s
    shape. Where unbroadcast passed a container's cotangent through whole (a `GradTree`, or
    the cotangent of a dict, list or tuple), its transpose passes `h` through whole too.

    >>> rebroadcast(np.array([1.0, 2.0]), np.zeros((2, 2))).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    if isinstance(h, (GradTree, dict, list, tuple)) or isinstance(ct, (GradTree, dict, list,
                                                                       tuple)):
        return h
    if isinstance(h, _Zero):
        return zeros_grad(ct)
    return np.broadcast_to(h, np.shape(ct))


def _zeros_for(ct, x):
    """Zeros shaped like `x`, in `x`'s dtype when it has one (else `ct`'s)."""
    dtype = getattr(x, "dtype", None)
    if dtype is None or not np.issubdtype(dtype, np.inexact):
        dtype = np.result_type(ct)
    return np.zeros(np.shape(x), dtype=dtype)


def _tree(pieces, xs=None):
    return pieces_tree(list(pieces), xs)


def _like(r, x):
    """`r` in `x`'s float dtype (a Python-float cotangent must not promote float32)."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None and np.issubdtype(dtype, np.floating) and r.dtype != dtype:
        return r.astype(dtype)
    return r


def unsupported_derivative(what):
    """Raise: a derivative srcad does not implement (a second derivative through a helper
    whose dependence on that argument is real). Better a clear error than zeros."""
    raise SrcadError(
        f"srcad has no derivative rule for {what}",
        hint="first derivatives of this op are supported, in both modes; for a second "
        "derivative through it, register your own rule with srcad.defvjp / srcad.defjvp")


# --- diagonals ------------------------------------------------------------------------------


def undiagonal(ct, x, offset=0, axis1=0, axis2=1):
    """The VJP of ``np.diagonal(x, offset, axis1, axis2)``: zeros shaped like `x` with `ct`
    (its last axis runs along the diagonal; it broadcasts) written into that diagonal."""
    out = _zeros_for(ct, x)
    n1, n2 = out.shape[axis1], out.shape[axis2]
    length = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    rows = np.arange(length) - min(offset, 0)
    cols = np.arange(length) + max(offset, 0)
    moved = np.moveaxis(out, (axis1, axis2), (-2, -1))  # a view: writes land in `out`
    moved[..., rows, cols] = ct
    return out


def diag_grad(ct, v, k=0):
    """The VJP of ``np.diag(v, k)``: the k-th diagonal of `ct` for a 1-D `v` (which diag
    placed there), `ct` placed on the k-th diagonal of zeros shaped like a 2-D `v`."""
    if np.ndim(v) == 1:
        return np.diagonal(ct, k).copy()
    return undiagonal(ct, v, k, 0, 1)


# --- rolls ------------------------------------------------------------------------------------


def opposite(shift):
    """np.roll's shift undone: ``-shift`` for an int, item by item for a tuple.

    >>> opposite((1, -2))
    (-1, 2)
    """
    if isinstance(shift, (tuple, list)):
        return tuple(-s for s in shift)
    return -shift


opposite.static = True  # evaluated while generating code when its argument is a constant


# --- padding ----------------------------------------------------------------------------------


def _pad_pairs(pad_width, ndim):
    return np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (ndim, 2))


from .runtime_pad import STAT_PAD_MODES, stat_pad_tangent, stat_unpad  # noqa: E402

# np.pad's modes whose every padded cell is a copy of one cell of the array
COPY_PAD_MODES = ("edge", "reflect", "symmetric", "wrap")


def _check_constant(mode, copies=False):
    if mode != "constant" and not (copies and mode in COPY_PAD_MODES):
        raise SrcadError(
            f"the gradient of np.pad with mode={mode!r} is not implemented (mode='constant'"
            f"{', and for the array ' + ', '.join(map(repr, COPY_PAD_MODES)) if copies else ''})",
            hint="pad with mode='constant', or register a rule for your padding")
# ... and the other modes in which np.pad is linear in the array (its tangent is np.pad of the
# tangent; maximum, minimum and median pick values, empty leaves the border undefined)
_LINEAR_PAD_MODES = ("constant", *COPY_PAD_MODES, "mean", "linear_ramp")


def unpad(ct, array, pad_width, mode="constant", stat_length=None):
    """The VJP of ``np.pad(array, pad_width, mode)``: in constant mode the part of `ct` that
    holds `array` (the padding is constant, so it sends nothing back); in a mode that copies
    cells of the array into the border (edge, reflect, symmetric, wrap) each cell of `ct` is
    added back onto the cell it copies -- where np.pad puts the cells' own indices; in a
    mode that computes the border (mean, maximum, minimum, median, linear_ramp):
    srcad/runtime_pad.py."""
    if mode in STAT_PAD_MODES:
        return stat_unpad(ct, array, pad_width, mode, stat_length)
    _check_constant(mode, copies=True)
    pairs = _pad_pairs(pad_width, np.ndim(array))
    if mode == "constant":
        index = tuple(slice(int(b), int(b) + n) for (b, _), n in zip(pairs, np.shape(array)))
        return ct[index]
    source = np.pad(np.arange(np.size(array)).reshape(np.shape(array)), pairs, mode=mode)
    out = _zeros_for(ct, array)
    np.add.at(out.reshape(-1), source.reshape(-1), np.reshape(ct, -1))
    return out


def pad_tangent(t, pad_width, mode="constant", array=None, stat_length=None):
    """np.pad's JVP w.r.t. the array: np.pad of the tangent, in the modes where the pad is
    linear in the array; where the border is a statistic of the array (a maximum, a
    minimum, a median) or a ramp to its edge, srcad/runtime_pad.py's (an empty border is
    refused)."""
    if mode in STAT_PAD_MODES:
        return stat_pad_tangent(t, array, pad_width, mode, stat_length)
    if mode not in _LINEAR_PAD_MODES:
        raise SrcadError(
            f"the derivative of np.pad with mode={mode!r} is not implemented (modes: "
            f"{', '.join(_LINEAR_PAD_MODES)})",
            hint="pad with one of those modes (or write the padding with np.concatenate of "
            "slices, which srcad differentiates), or register a rule for your padding")
    return np.pad(t, pad_width, mode)


def pad_value_grad(ct, array, pad_width, mode="constant", constant_values=0):
    """The VJP of ``np.pad(..., constant_values=c)`` w.r.t. a scalar `c`: the sum of `ct`
    over the padded cells."""
    _check_constant(mode)
    if np.ndim(constant_values) != 0:
        unsupported_derivative("np.pad's constant_values unless it is one scalar")
    return np.sum(ct) - np.sum(unpad(ct, array, pad_width))


# --- sorting ----------------------------------------------------------------------------------


def _order(a, axis):
    """The permutation np.sort applies (stable, so ties keep their order)."""
    return np.argsort(a, axis=axis, kind="stable")


def sort_like(ct, a, axis=-1):
    """`ct` (shaped like `a`) permuted as ``np.sort(a, axis)`` permutes `a`: the JVP of sort
    (flattened for ``axis=None``)."""
    if axis is None:
        return np.ravel(ct)[_order(a, None)]
    return np.take_along_axis(ct, _order(a, axis), axis=axis)


def unsort(ct, a, axis=-1):
    """The VJP of ``np.sort(a, axis)``: each element of `ct` goes back to where its sorted
    value came from (the inverse permutation of `sort_like`)."""
    out = _zeros_for(ct, a)
    if axis is None:
        out.reshape(-1)[_order(a, None)] = ct
        return out
    np.put_along_axis(out, _order(a, axis), ct, axis=axis)
    return out


# --- gathers ----------------------------------------------------------------------------------


def _along_axis_index(indices, axis, shape):
    """The fancy index that ``np.take_along_axis(arr, indices, axis)`` reads with."""
    index = []
    for d in range(len(shape)):
        if d == axis % len(shape):
            index.append(indices)
        else:
            fancy = [1] * len(shape)
            fancy[d] = shape[d]
            index.append(np.arange(shape[d]).reshape(fancy))
    return tuple(index)


def untake_along_axis(ct, arr, indices, axis=-1):
    """The VJP of ``np.take_along_axis(arr, indices, axis)``: `ct` added back at the indices
    (a repeated index accumulates)."""
    out = _zeros_for(ct, arr)
    if axis is None:
        np.add.at(out.reshape(-1), indices, ct)
        return out
    indices = np.asarray(indices)
    shape = np.broadcast_shapes(indices.shape, tuple(
        1 if d == axis % out.ndim else n for d, n in enumerate(out.shape)))
    index = _along_axis_index(np.broadcast_to(indices, shape), axis, shape)
    np.add.at(out, index, np.broadcast_to(ct, shape))
    return out


def untake(ct, a, indices, axis=None, mode="raise"):
    """The VJP of ``np.take(a, indices, axis, mode=mode)``: `ct` added back at the indices
    (flattened for ``axis=None``; a repeated index accumulates; mode='wrap' / 'clip' read an
    index out of range as numpy does)."""
    out = _zeros_for(ct, a)
    if mode != "raise":
        n = out.size if axis is None else out.shape[axis]
        indices = np.asarray(indices)
        indices = indices % n if mode == "wrap" else np.clip(indices, 0, n - 1)
    if axis is None:
        np.add.at(out.reshape(-1), indices, ct)
        return out
    axis = axis % out.ndim
    np.add.at(out, (slice(None),) * axis + (np.asarray(indices),), ct)
    return out


def unrepeat(ct, a, repeats, axis=None):
    """The VJP of ``np.repeat(a, repeats, axis)``: each element's copies summed back into it."""
    n = np.size(a) if axis is None else np.shape(a)[axis]
    source = np.repeat(np.arange(n), repeats)  # the element each output position copies
    return untake(ct, a, source, axis)


# --- splits and tiles -------------------------------------------------------------------------


def unsplit(ct, ary, indices_or_sections, axis=0):
    """The VJP of ``np.split`` / ``np.array_split``: the pieces' cotangents concatenated back.

    `ct` is a list, tuple or `GradTree` of the pieces' cotangents; a piece nothing flowed
    into (a missing slot, 0.0) contributes zeros."""
    ary_shape = np.shape(ary)
    sizes = [len(p) for p in np.array_split(np.arange(ary_shape[axis]), indices_or_sections)]
    pieces = []
    for i, n in enumerate(sizes):
        shape = ary_shape[:axis % len(ary_shape)] + (n,) + ary_shape[axis % len(ary_shape) + 1:]
        piece = ct[i]
        if np.ndim(piece) == 0:  # no cotangent reached this piece (or a scalar one)
            piece = np.broadcast_to(piece, shape)
        pieces.append(piece)
    dtype = getattr(ary, "dtype", None)
    out = np.concatenate(pieces, axis=axis)
    return out.astype(dtype) if dtype is not None and out.dtype != dtype else out


def _pieces(ct, xs, shape_of):
    """The items of a list, tuple or `GradTree` of cotangents, zeros where one is missing."""
    out = []
    for i, x in enumerate(xs):
        piece = ct[i]
        if np.ndim(piece) == 0 and shape_of(x) != ():
            piece = np.zeros(shape_of(x), dtype=getattr(x, "dtype", np.result_type(piece)))
        out.append(piece)
    return out


def unasarray(ct, a):
    """The VJP of ``np.asarray(a)`` / ``np.array(a)``: for a (nested) list or tuple of values,
    numpy stacks its items along new leading axes, so item i's cotangent is ct[i] (a
    `GradTree` of them); for an array, `ct` itself, in the input's dtype.

    >>> [float(p) for p in unasarray(np.array([1.0, 2.0]), [0.5, 0.25])]
    [1.0, 2.0]
    """
    if isinstance(a, (list, tuple)):
        return GradTree({i: unasarray(ct[i], x) for i, x in enumerate(a)}, len(a))
    dtype = getattr(a, "dtype", None)
    if dtype is not None and np.result_type(ct) != dtype:
        return np.asarray(ct).astype(dtype)
    return ct


def asarray_like(ct, a):
    """The transpose of `unasarray`: the items' cotangents as one array shaped like
    ``np.asarray(a)`` (zeros where nothing flowed)."""
    if isinstance(a, (list, tuple)):
        return np.stack([asarray_like(ct[i], x) for i, x in enumerate(a)]) if a else \
            np.zeros((0,))
    if np.ndim(ct) == 0 and np.ndim(a) != 0:
        return np.zeros(np.shape(a), dtype=getattr(a, "dtype", np.result_type(ct)))
    return np.asarray(ct)


def concatenate_pieces(ct, xs, axis=0):
    """The transpose of `unconcatenate`: the pieces' cotangents concatenated (for
    ``axis=None`` flattened first, as np.concatenate does)."""
    return np.concatenate(_pieces(ct, xs, np.shape), axis=axis)


def stack_pieces(ct, xs, axis=0):
    """The transpose of `unstack`: the items' cotangents stacked."""
    return np.stack(_pieces(ct, xs, np.shape), axis=axis)


def untile(ct, A, reps):
    """The VJP of ``np.tile(A, reps)``: the copies of each element summed back into it."""
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    shape = np.shape(A)
    nd = max(len(shape), len(reps))
    shape_full = (1,) * (nd - len(shape)) + tuple(shape)
    reps_full = (1,) * (nd - len(reps)) + reps
    interleaved = tuple(n for pair in zip(reps_full, shape_full) for n in pair)
    summed = np.sum(np.reshape(ct, interleaved), axis=tuple(range(0, 2 * nd, 2)))
    return np.reshape(summed, shape)


# --- cumulative products ----------------------------------------------------------------------


def _last(x, axis):
    """`x` with `axis` moved last (flattened for None), and how to move a result back."""
    x = np.asarray(x)
    if axis is None:
        return np.ravel(x), lambda r: r
    return np.moveaxis(x, axis, -1), lambda r: np.moveaxis(r, -1, axis)


def _running_choice(am, om, i, largest):
    """Step i of ``np.maximum.accumulate`` (``minimum``): out_i = max(out_(i-1), a_i) -- the
    new item wins, ties split evenly (as np.maximum's rule)."""
    x, prev = am[..., i], om[..., i - 1]
    return (x > prev) if largest else (x < prev), x == prev


def running_extremum_grad(ct, out, array, axis=0, largest=True):
    """The VJP of ``np.maximum.accumulate(array, axis)`` (``largest=False``: minimum): a
    backward recurrence along the axis, each step's cotangent to the item that won it (half
    to each on a tie) and the rest carried to the running extremum before it. Linear in ct;
    its transpose is `running_extremum_jvp`."""
    am, back = _last(array, axis)
    om, _ = _last(out, axis)
    gm, _ = _last(ct, axis)
    gm = np.broadcast_to(gm, am.shape)
    n = am.shape[-1]
    da = np.zeros(am.shape, dtype=np.result_type(gm, am))
    carry = np.zeros(am.shape[:-1], dtype=da.dtype)
    for i in range(n - 1, 0, -1):
        c = gm[..., i] + carry
        wins, tie = _running_choice(am, om, i, largest)
        da[..., i] = np.where(wins, c, np.where(tie, c / 2, 0))
        carry = np.where(wins, 0, np.where(tie, c / 2, c))
    if n:
        da[..., 0] = gm[..., 0] + carry
    return back(da)


def running_extremum_jvp(t, out, array, axis=0, largest=True):
    """The JVP of ``np.maximum.accumulate`` (``minimum``): the winner's tangent at each step
    (the mean of both on a tie). Linear in t; its transpose is `running_extremum_grad`."""
    am, back = _last(array, axis)
    om, _ = _last(out, axis)
    tm, _ = _last(t, axis)
    tm = np.broadcast_to(tm, am.shape)
    n = am.shape[-1]
    res = np.zeros(am.shape, dtype=np.result_type(tm, am))
    if n:
        res[..., 0] = tm[..., 0]
    for i in range(1, n):
        wins, tie = _running_choice(am, om, i, largest)
        res[..., i] = np.where(wins, tm[..., i], np.where(tie, (tm[..., i] + res[..., i - 1])
                                                          / 2, res[..., i - 1]))
    return back(res)


def _lae_steps(x, out, array, axis):
    """``np.logaddexp.accumulate``'s weights, along the last axis (`x`, a cotangent or a
    tangent, broadcast to the array's shape there): w_i = exp(a_i - out_i), the share of
    item i in out_i, and r_i = exp(out_(i-1) - out_i), the share of the sum before it (0
    where out_i = -inf: every item so far -inf, which carries no derivative). Returns (x, w,
    r, back: what moves the axis back, the result's dtype)."""
    am, back = _last(array, axis)
    om, _ = _last(out, axis)
    xm, _ = _last(x, axis)
    xm = np.broadcast_to(xm, am.shape)
    dead = om == -np.inf
    safe = np.where(dead, 0.0, om)
    w = np.where(dead, 0.0, np.exp(np.where(dead, 0.0, am - safe)))
    prev = np.concatenate([np.full(om.shape[:-1] + (1,), -np.inf), om[..., :-1]], axis=-1)
    r = np.where(dead | (prev == -np.inf), 0.0, np.exp(np.where(dead, 0.0, prev - safe)))
    return xm, w, r, back, np.result_type(xm, am)


def logaddexp_accumulate_grad(ct, out, array, axis=0):
    """The VJP of ``np.logaddexp.accumulate(array, axis)`` -- out_i = log sum_{j<=i}
    exp(a_j): da_j = w_j h_j with h_j = g_j + r_(j+1) h_(j+1), a backward recurrence along
    the axis (`_lae_steps`: every weight at most 1, so nothing overflows). Linear in ct; its
    transpose is `logaddexp_accumulate_jvp`."""
    gm, w, r, back, dtype = _lae_steps(ct, out, array, axis)
    h = np.zeros(gm.shape, dtype=dtype)
    n = gm.shape[-1]
    for i in range(n - 1, -1, -1):
        h[..., i] = gm[..., i] + (r[..., i + 1] * h[..., i + 1] if i + 1 < n else 0)
    return back(w * h)


def logaddexp_accumulate_jvp(t, out, array, axis=0):
    """The JVP of ``np.logaddexp.accumulate``: dout_i = r_i dout_(i-1) + w_i t_i, a forward
    recurrence (`_lae_steps`). Linear in t; its transpose is `logaddexp_accumulate_grad`."""
    tm, w, r, back, dtype = _lae_steps(t, out, array, axis)
    res = np.zeros(tm.shape, dtype=dtype)
    for i in range(tm.shape[-1]):
        res[..., i] = w[..., i] * tm[..., i] + (r[..., i] * res[..., i - 1] if i else 0)
    return back(res)


def cumprod_grad(ct, a, axis=None):
    """The VJP of ``np.cumprod(a, axis)``, exact where `a` holds zeros.

    out_i = prod_{k<=i} a_k, so da_j = (prod_{k<j} a_k) h_j with h_j = sum_{i>=j} g_i
    prod_{j<k<=i} a_k, i.e. h_j = g_j + a_{j+1} h_{j+1}: a backward recurrence along the
    axis, which never divides by `a` (for ``axis=None``, along the flattened `a`)."""
    am, back = _last(a, axis)
    gm, _ = _last(ct, axis)
    gm = np.broadcast_to(gm, am.shape)
    n = am.shape[-1]
    dtype = np.result_type(gm, am)
    h = np.empty(am.shape, dtype=dtype)
    if n:
        h[..., n - 1] = gm[..., n - 1]
        for j in range(n - 2, -1, -1):
            h[..., j] = gm[..., j] + am[..., j + 1] * h[..., j + 1]
    left = np.ones(am.shape, dtype=dtype)
    if n > 1:
        left[..., 1:] = np.cumprod(am[..., :-1], axis=-1)
    return _like(np.reshape(back(left * h), np.shape(a)), a)


def cumprod_jvp(t, a, axis=None):
    """The JVP of ``np.cumprod(a, axis)``, exact where `a` holds zeros: d out_i =
    d out_{i-1} a_i + out_{i-1} da_i (a forward recurrence, no division)."""
    am, back = _last(a, axis)
    tm, _ = _last(t, axis)
    tm = np.broadcast_to(tm, am.shape)
    n = am.shape[-1]
    dtype = np.result_type(tm, am)
    d = np.empty(am.shape, dtype=dtype)
    if n:
        prev = np.cumprod(am, axis=-1)
        d[..., 0] = tm[..., 0]
        for i in range(1, n):
            d[..., i] = d[..., i - 1] * am[..., i] + prev[..., i - 1] * tm[..., i]
    return _like(back(d), a)


def _cumprod_tangents(am, tm):
    """The running product o and its tangent d along the last axis, before each position
    (o_{i-1}, d_{i-1}; 1 and 0 before the first): o_i = o_{i-1} a_i, d_i = d_{i-1} a_i +
    o_{i-1} t_i."""
    dtype = np.result_type(tm, am)
    n = am.shape[-1]
    o_before = np.ones(am.shape, dtype)
    d_before = np.zeros(am.shape, dtype)
    o, d = np.ones(am.shape[:-1], dtype), np.zeros(am.shape[:-1], dtype)
    for i in range(n):
        o_before[..., i], d_before[..., i] = o, d
        o, d = o * am[..., i], d * am[..., i] + o * tm[..., i]
    return o_before, d_before


def cumprod_jvp2(t, s, a, axis=None):
    """cumprod's second derivative along tangents `t` and `s` (symmetric, bilinear): the
    derivative of ``cumprod_jvp(t, a)`` along ``a + s``. A forward recurrence, exact where
    `a` holds zeros: dd_i = dd_{i-1} a_i + dt_{i-1} s_i + ds_{i-1} t_i."""
    am, back = _last(a, axis)
    tm = np.broadcast_to(_last(t, axis)[0], am.shape)
    sm = np.broadcast_to(_last(s, axis)[0], am.shape)
    _, dt = _cumprod_tangents(am, tm)
    _, ds = _cumprod_tangents(am, sm)
    dd = np.zeros(am.shape, np.result_type(tm, sm, am))
    prev = np.zeros(am.shape[:-1], dd.dtype)
    for i in range(am.shape[-1]):
        prev = prev * am[..., i] + dt[..., i] * sm[..., i] + ds[..., i] * tm[..., i]
        dd[..., i] = prev
    return _like(np.reshape(back(dd), np.shape(a)), a)


def cumprod_grad2(ct, a, t, axis=None):
    """cumprod's second derivative as a map to a's shape, <cumprod_grad2(G, a, t), s> =
    <G, cumprod_jvp2(t, s, a)>: the derivative of ``cumprod_grad(G, a)`` along ``a + t``,
    and the VJP of ``cumprod_jvp(t, a)`` w.r.t. a at G. The reverse of the recurrence above
    (no division): H_i = l_i dt_{i-1} + m_i o_{i-1}, with l_i = G_i + a_{i+1} l_{i+1} and
    m_i = t_{i+1} l_{i+1} + a_{i+1} m_{i+1}."""
    am, back = _last(a, axis)
    gm = np.broadcast_to(_last(ct, axis)[0], am.shape)
    tm = np.broadcast_to(_last(t, axis)[0], am.shape)
    o_before, dt = _cumprod_tangents(am, tm)
    dtype = np.result_type(gm, tm, am)
    h = np.empty(am.shape, dtype)
    n = am.shape[-1]
    lam = np.zeros(am.shape[:-1], dtype)
    mu = np.zeros(am.shape[:-1], dtype)
    for i in range(n - 1, -1, -1):
        if i < n - 1:
            lam, mu = gm[..., i] + am[..., i + 1] * lam, \
                tm[..., i + 1] * lam + am[..., i + 1] * mu
        else:
            lam = gm[..., i] + lam
        h[..., i] = lam * dt[..., i] + mu * o_before[..., i]
    return _like(np.reshape(back(h), np.shape(a)), a)


def prod_others_jvp(t, a, axis=None):
    """np.prod's second derivative as a map: element k of each reduced group gets the sum,
    over the group's other elements i, of t_i times the product of the group's elements other
    than i and k. It is the derivative along `t` of the "product of the other elements" that
    `prod_grad` multiplies by, and (a Hessian) its own transpose. Exact where `a` holds zeros:
    with o_k = l_k r_k (the products left and right of k), do_k = dl_k r_k + l_k dr_k, and
    dl, dr follow the recurrences dl_{k+1} = dl_k a_k + l_k t_k (no division)."""
    a = np.asarray(a)
    nd = a.ndim
    axes = tuple(range(nd)) if axis is None else tuple(
        int(x) % nd for x in np.atleast_1d(axis))
    last = tuple(range(nd - len(axes), nd))
    am = np.moveaxis(a, axes, last)
    tm = np.moveaxis(np.broadcast_to(t, a.shape), axes, last)
    lead = am.shape[:nd - len(axes)]
    x = np.reshape(am, lead + (-1,))
    u = np.reshape(tm, lead + (-1,))
    dtype = np.result_type(u, x)
    n = x.shape[-1]

    def sweep(order):
        prod, dprod = np.ones(lead, dtype), np.zeros(lead, dtype)
        p, dp = np.empty(x.shape, dtype), np.empty(x.shape, dtype)
        for k in order:
            p[..., k], dp[..., k] = prod, dprod
            prod, dprod = prod * x[..., k], dprod * x[..., k] + prod * u[..., k]
        return p, dp

    left, dleft = sweep(range(n))
    right, dright = sweep(range(n - 1, -1, -1))
    d = np.reshape(dleft * right + left * dright, am.shape)
    return _like(np.moveaxis(d, last, axes), a)


# --- differences, permutations, joins, selections, appends --------------------------------------


def _diff_end(v, a, axis):
    """np.diff's prepend= / append= as numpy reads it: a 0-d value broadcast to a's shape with
    one element along `axis`; None (not given): nothing."""
    if v is None:
        return None
    v = np.asarray(v)
    if v.ndim == 0:
        shape = list(np.shape(a))
        shape[axis] = 1
        v = np.broadcast_to(v, tuple(shape))
    return v


def undiff(ct, a, n=1, axis=-1, prepend=None, append=None, part="a"):
    """The VJP of ``np.diff(a, n, axis, prepend=, append=)`` w.r.t. `part` ("a", "prepend"
    or "append"): n times the transpose of one difference (minus the difference of `ct` padded
    with a zero at both ends) over the joined array numpy differences, then that part's
    slice of it (summed to a 0-d prepend / append, which numpy broadcast)."""
    ct = np.asarray(ct)
    axis = axis % max(np.ndim(a), 1)
    for _ in range(n):
        pad = [(0, 0)] * ct.ndim
        pad[axis] = (1, 1)
        ct = -np.diff(np.pad(ct, pad), axis=axis)
    front, back = _diff_end(prepend, a, axis), _diff_end(append, a, axis)
    p = 0 if front is None else front.shape[axis]
    q = 0 if back is None else back.shape[axis]
    length = ct.shape[axis]
    lo, hi = {"a": (p, length - q), "prepend": (0, p), "append": (length - q, length)}[part]
    piece = np.take(ct, np.arange(lo, hi), axis=axis) if (p or q) else ct
    if part == "a":
        return _like(piece, a)
    given = prepend if part == "prepend" else append
    if np.ndim(given) == 0:
        piece = np.sum(piece)
    return _like(np.asarray(piece), given)


def rediff(t, a, n=1, axis=-1, prepend=None, append=None, part="a"):
    """np.diff's JVP w.r.t. `part` (its map is linear in a, prepend and append jointly): the
    difference of the joined array with `t` in that part's place and zeros in the others; the
    transpose of `undiff`."""
    axis = axis % max(np.ndim(a), 1)
    front, back = _diff_end(prepend, a, axis), _diff_end(append, a, axis)
    dtype = np.result_type(t, 0.0)
    zero = {k: None if v is None else np.zeros(v.shape, dtype) for k, v in
            (("prepend", front), ("append", back))}
    body = np.broadcast_to(t, np.shape(a)) if part == "a" else np.zeros(np.shape(a), dtype)
    pieces = [zero["prepend"], body, zero["append"]]
    if part != "a":
        pieces[0 if part == "prepend" else 2] = _diff_end(t, a, axis)
    joined = [v for v in pieces if v is not None]
    return np.diff(np.concatenate(joined, axis=axis) if len(joined) > 1 else joined[0],
                   n, axis=axis)


def _orders(out, a, axis):
    """Stable argsorts of `out` and `a` (a permutation of each other) along `axis`: the
    element at out[order_out[r]] is a[order_a[r]]."""
    if axis is None:
        return np.argsort(np.ravel(out), kind="stable"), np.argsort(np.ravel(a), kind="stable")
    return np.argsort(out, axis=axis, kind="stable"), np.argsort(a, axis=axis, kind="stable")


def unpermute(ct, out, a, axis=-1):
    """The VJP of an op whose output `out` is a permutation of `a` along `axis` (np.partition,
    flattened for ``axis=None``): each cotangent goes to the element its value came from
    (matched by rank, so it does not matter how the op ordered the other elements)."""
    order_out, order_a = _orders(out, a, axis)
    res = _zeros_for(ct, a)
    if axis is None:
        res.reshape(-1)[order_a] = np.ravel(ct)[order_out]
        return res
    np.put_along_axis(res, order_a, np.take_along_axis(np.asarray(ct), order_out, axis), axis)
    return res


def permute_like(t, out, a, axis=-1):
    """The JVP of such a permutation: `t` (shaped like `a`) moved as `a` was moved."""
    order_out, order_a = _orders(out, a, axis)
    res = np.zeros(np.shape(out), dtype=np.result_type(t))
    if axis is None:
        res[order_out] = np.ravel(t)[order_a]
        return res
    np.put_along_axis(res, order_out, np.take_along_axis(np.asarray(t), order_a, axis), axis)
    return res


def rolled_to(ndim, axis, start=0):
    """Where ``np.rollaxis(a, axis, start)`` puts `axis` (so that np.moveaxis undoes it).

    >>> rolled_to(3, 2, 0), rolled_to(3, 0, 3)
    (0, 2)
    """
    axis, start = axis % ndim, (start + ndim + 1 if start < 0 else start)
    return start if start <= axis else start - 1


rolled_to.static = True


def hsplit_axis(ndim):
    """The axis np.hsplit splits: 1, or 0 for 1-D arrays."""
    return 1 if ndim > 1 else 0


hsplit_axis.static = True

_JOINS = {"vstack": (np.atleast_2d, 0), "hstack": (np.atleast_1d, None),
          "dstack": (np.atleast_3d, 2), "column_stack": (None, 1)}


def _joined(x, how):
    """An item as np.vstack / hstack / dstack / column_stack sees it, and the join axis."""
    lift, axis = _JOINS[how]
    if how == "column_stack":
        x = np.asarray(x)
        return (x.reshape(-1, 1) if x.ndim < 2 else x), axis
    x = lift(x)
    if how == "hstack":
        axis = 0 if np.ndim(x) == 1 else 1
    return x, axis


def unjoin(ct, tup, how):
    """The VJP of ``np.vstack(tup)`` (hstack, dstack, column_stack): `ct` split at the items'
    boundaries along the join axis, each piece reshaped to its item's own shape."""
    lifted = [_joined(x, how) for x in tup]
    axis = lifted[0][1]
    sizes = [np.shape(x)[axis] for x, _ in lifted]
    pieces = np.split(np.asarray(ct), np.cumsum(sizes)[:-1], axis=axis)
    return _tree((_like(np.reshape(p, np.shape(x)), x) if hasattr(x, "dtype") else
                  np.reshape(p, np.shape(x)) for p, x in zip(pieces, tup)), tup)


def join_pieces(ct, tup, how):
    """The transpose of `unjoin`: the items' cotangents joined as the op joined the items
    (zeros for an item with no cotangent)."""
    return getattr(np, how)(_pieces(ct, tup, np.shape))


def unselect(ct, condlist, choicelist):
    """The VJP of ``np.select(condlist, choicelist, default)`` w.r.t. the choices: each
    choice gets `ct` where its condition is the first one that holds."""
    taken = np.zeros(np.broadcast_shapes(*(np.shape(c) for c in condlist)), dtype=bool)
    out = []
    for cond, choice in zip(condlist, choicelist):
        mine = np.logical_and(cond, np.logical_not(taken))
        taken = np.logical_or(taken, cond)
        g = np.where(mine, ct, np.zeros_like(ct))
        out.append(_unbroadcast_to(g, choice))
    return _tree(out, choicelist)


def select_pieces(ct, condlist, choicelist):
    """The transpose of `unselect`: the choices' cotangents selected as np.select selects
    (zeros for a choice with no cotangent)."""
    return np.select(condlist, _pieces(ct, choicelist, np.shape))


def select_default_grad(ct, condlist, default):
    """The VJP of np.select w.r.t. `default`: `ct` where no condition holds."""
    none = np.logical_not(np.any(np.broadcast_arrays(*condlist), axis=0))
    return _unbroadcast_to(np.where(none, ct, np.zeros_like(ct)), default)


def select_default_jvp(t, condlist, out):
    """The JVP of np.select along `default`'s tangent: it where no condition holds."""
    none = np.logical_not(np.any(np.broadcast_arrays(*condlist), axis=0))
    return np.broadcast_to(np.where(none, t, np.zeros_like(t)), np.shape(out)).copy()


def _unbroadcast_to(g, x):
    shape = np.shape(x)
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape)
                                      if n == 1 and g.shape[i + lead] != 1)
    r = np.reshape(np.sum(g, axis=axes), shape) if axes else np.reshape(g, shape)
    return _like(np.asarray(r), x)


def unappend(ct, arr, values, axis=None, part=0):
    """The VJP of ``np.append(arr, values, axis)`` w.r.t. `arr` (part 0) or `values` (1):
    its slice of `ct` (flattened for ``axis=None``, as np.append is)."""
    x = arr if part == 0 else values
    if axis is None:
        n = np.size(arr)
        piece = np.ravel(ct)[:n] if part == 0 else np.ravel(ct)[n:]
        return np.reshape(piece, np.shape(x))
    n = np.shape(arr)[axis]
    index = [slice(None)] * np.ndim(ct)
    index[axis] = slice(0, n) if part == 0 else slice(n, None)
    return np.reshape(ct[tuple(index)], np.shape(x))


def place_appended(u, arr, values, axis=None, part=0):
    """The transpose of `unappend`: `u` in its part of np.append's output, zeros elsewhere."""
    if part == 0:
        return np.append(u, np.zeros_like(values), axis)
    return np.append(np.zeros_like(arr), u, axis)


def flatten(a, order="C"):
    """``a.flatten()`` as a function, so that the table can hold it (a copy, unlike ravel)."""
    return np.asarray(a).flatten(order)
