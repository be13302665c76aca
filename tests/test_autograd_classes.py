"""HIPS autograd's test suite, class by class, through srcad (issue 23, "autograd's own test
suite through srcad").

autograd's tests (tests/test_numpy.py, test_systematic.py, test_linalg.py, test_scalar_ops.py,
test_binary_ops.py, test_truediv.py, test_logic.py, test_list.py, test_tuple.py, test_dict.py,
test_wrappers.py, test_graphs.py, test_direct.py, test_core.py, test_misc.py,
test_jacobian.py, the real part of test_fft.py, test_builtins.py) were read for what they
check; the programs and inputs here are our own (tests/fixtures_agsuite.py). Each case is
checked through the pinned API against central differences (srcad.testing): a scalar output
with ``grad`` in source and tape mode, an array output with ``vjp`` (random cotangent) in
both modes and ``jvp``; where autograd checks second order, a scalarised program's
Hessian-vector product ``jvp(grad(f))`` against differences of the gradient. Complex numbers
are out of scope.
"""

from __future__ import annotations

import copy

import fixtures_agsuite as F
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp, check_vjp, numerical_grad, rel_error

MODES = ("source", "tape")


def _rng(seed=0):
    return np.random.default_rng(seed)


def R(*shape, seed=None, lo=None, hi=None):
    """A float64 array of `shape` (a Python float for no shape), normal or uniform."""
    rng = _rng(hash(shape) % 1000 if seed is None else seed)
    if lo is not None:
        a = rng.uniform(lo, hi, size=shape)
    else:
        a = rng.standard_normal(shape)
    return float(a) if shape == () else a


def _is_scalar(v):
    return isinstance(v, (float, int, np.floating, np.integer)) or (
        isinstance(v, np.ndarray) and v.ndim == 0)


def _is_float_tree(a):
    if isinstance(a, (list, tuple)):
        return len(a) > 0 and all(_is_float_tree(b) for b in a)
    if isinstance(a, dict):
        return len(a) > 0 and all(_is_float_tree(b) for b in a.values())
    return isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")


def thin(cases, ids, every=4):
    """pytest params: every `every`-th case runs in the quick suite, the rest are slow."""
    return [pytest.param(*c, id=i, marks=() if k % every == 0 else pytest.mark.slow)
            for k, (c, i) in enumerate(zip(cases, ids))]


def check(fn, args, order=1, wrt=None, modes=MODES, jvp=True, tol=None):
    """fn's derivative at args in every mode against central differences.

    A scalar output: ``grad`` w.r.t. every float argument (or `wrt`) in each mode. An array:
    ``vjp`` in each mode and ``jvp``. A tuple or list of arrays (srcad.vjp takes one array
    out): ``jvp``, and ``grad`` of sum_i (i+1) sum(sin(out_i)) in each mode. order=2 adds the
    Hessian-vector product of the scalar program (fn itself when scalar, else
    sum(sin(fn))) against differences of its gradient."""
    out = fn(*copy.deepcopy(args))
    floats = tuple(i for i, a in enumerate(args) if _is_float_tree(a))
    if wrt is None:
        wrt = floats if len(floats) > 1 else floats[0]
    if _is_scalar(out):
        for m in modes:
            check_grads(fn, args, wrt=wrt, mode=m, tol=tol)
        scalar_fn = fn
    elif isinstance(out, (tuple, list)):
        if jvp:
            check_jvp(fn, args, tol=tol)
        scalar_fn = (F.parts_sumsin1, F.parts_sumsin2)[len(args) - 1](fn)
        for m in modes:
            check_grads(scalar_fn, args, wrt=wrt, mode=m, tol=tol)
    else:
        for m in modes:
            check_vjp(fn, args, mode=m, tol=tol)
        if jvp:
            check_jvp(fn, args, tol=tol)
        scalar_fn = (F.sumsin1, F.sumsin2)[len(args) - 1](fn) if order >= 2 else None
    if order >= 2:
        first = wrt if isinstance(wrt, int) else wrt[0]
        check_jvp(srcad.grad(scalar_fn, wrt=first), args, tol=1e-5 if tol is None else tol * 10)


# == test_numpy: products ======================================================================

PRODUCTS = [
    ("dot_mat_vec", F.dot, (R(4, 5), R(5))),
    ("dot_mat_mat", F.dot, (R(4, 5), R(5, 3))),
    ("dot_vec_mat", F.dot, (R(4), R(4, 5))),
    ("dot_vec_vec", F.dot, (R(5), R(5, seed=3))),
    ("dot_mat_float", F.dot, (R(4, 5), 1.3)),
    ("dot_float_vec", F.dot, (-0.7, R(5))),
    ("dot_3d_2d", F.dot, (R(2, 2, 3), R(3, 4))),
    ("outer", F.outer, (R(4), R(3))),
    ("inner_vec", F.inner, (R(3), R(3, seed=5))),
    ("inner_mat", F.inner, (R(2, 3), R(4, 3))),
    ("inner_float", F.inner, (1.5, R(3))),
    ("kron_2d", F.kron, (R(3, 2), R(2, 3))),
    ("kron_1d", F.kron, (R(3), R(2))),
    ("kron_col_row", F.kron, (R(3, 1), R(1, 2))),
    ("matmul_bcast", F.matmul, (R(1, 2, 2), R(3, 2, 1))),
    ("matmul_vec", F.matmul, (R(3), R(2, 3, 4))),
    ("tensordot_1_0", F.tensordot_axes(((1,), (0,))), (R(2, 3, 2), R(3, 4, 2))),
    ("tensordot_0_1", F.tensordot_axes(((0,), (1,))), (R(3, 4, 2), R(2, 3, 2))),
    ("tensordot_pairs", F.tensordot_axes(((1, 0), (2, 1))), (R(2, 3, 4), R(2, 2, 3, 4))),
    ("tensordot_int1", F.tensordot_axes(1), (R(4, 2, 2), R(2, 2, 4))),
    ("tensordot_int2", F.tensordot_axes(2), (R(4, 2, 2), R(2, 2, 4))),
    ("tensordot_int0", F.tensordot_axes(0), (R(4), R(3))),
    ("tensordot_neg", F.tensordot_axes(([-1], [0])), (R(2, 6), R(6, 3))),
    ("einsum_matmul", F.einsum_of("ij,jk->ik"), (R(2, 3), R(3, 4))),
    ("einsum_bcast", F.einsum_of("...ij,...jk->...ik"), (R(2, 2, 3), R(3, 4))),
    ("einsum_cov", F.einsum_of("ijk,lji->lki"), (R(3, 4, 4), R(4, 4, 3))),
    ("einsum_tail", F.einsum_of("jk...,lj...->lk..."), (R(3, 2, 4), R(2, 3, 4))),
    ("einsum_center", F.einsum_of("j...k,lj...->lk..."), (R(2, 2, 2), R(2, 2, 2, seed=9))),
    ("einsum_naked", F.einsum_of("k,nk->"), (R(5), R(10, 5))),
    ("einsum_no_out", F.einsum_of("ij,k"), (R(3, 4), R(3))),
    ("einsum_leadzero", F.einsum_of("...ij,...jk->...ik"), (R(0, 2, 3), R(0, 3, 4))),
    ("einsum_transpose", F.einsum_one("ij->ji"), (R(3, 4),)),
    ("einsum_sum_axes", F.einsum_one("abcd->bd"), (R(3, 2, 3, 2),)),
    ("einsum_three", F.einsum_three, (R(3, 4, 4), R(4, 4, 3))),
    ("dot_slices", F.dot_slices, (R(4),)),
    ("tensordot_positional", F.tensordot_two_positional, (1.3,)),
]


@pytest.mark.parametrize("name,fn,args", thin(PRODUCTS, [c[0] for c in PRODUCTS], every=3))
def test_numpy_products(name, fn, args):
    check(fn, args, order=2 if name.startswith(("dot", "outer", "tensordot")) else 1)


# == test_numpy / test_systematic: reductions ====================================================

STAT_INPUTS = [R(3), R(2, 3), R(1, 3)]
STAT_AXES = [{}, {"axis": 0}, {"axis": 0, "keepdims": True}, {"axis": 1}, {"keepdims": True},
             {"axis": -1, "keepdims": True}, {"axis": (0, 1)}]


def _stat_cases():
    cases = []
    for name in ("sum", "mean", "prod", "max", "min", "var", "std"):
        for kw in STAT_AXES:
            for x in STAT_INPUTS:
                if "axis" in kw and kw["axis"] not in (0, -1) and x.ndim < 2:
                    continue
                cases.append((name, kw, x))
        cases.append((name, {}, 3.5))
        cases.append((name, {}, np.array(-0.4)))
    for ddof in (0, 1, 2):
        for kw in ({}, {"axis": 1}, {"axis": 1, "keepdims": True}):
            cases.append(("var", dict(ddof=ddof, **kw), R(3, 4)))
            cases.append(("std", dict(ddof=ddof, **kw), R(3, 4)))
    return cases


STATS = _stat_cases()


@pytest.mark.parametrize("name,kw,x", thin(STATS, [f"{n}-{k}-{np.shape(x)}" for n, k, x in STATS], 6))
def test_systematic_reductions(name, kw, x):
    if name == "prod":
        x = np.abs(x) + 0.3 if isinstance(x, np.ndarray) else abs(x) + 0.3
    check(F.reduction(name, **kw), (x,), order=2 if name in ("prod", "var", "std") else 1)


def test_numpy_reductions_sum_axis_tuple_3d():
    check(F.reduction("sum", axis=(1, 2)), (R(4, 3, 2),))
    check(F.reduction("max", axis=1, keepdims=True), (R(3, 4, 5),))
    check(F.reduction("min", axis=1), (R(3, 4, 5),))


@pytest.mark.parametrize("fn,x", [(F.max_tie_pair, 1.0), (F.max_tie_rows, 1.0),
                                  (F.max_tie_rows, -1.0), (F.min_three_way, 1.0),
                                  (F.min_three_way, -1.0), (F.maximum_self, 1.0),
                                  (F.maximum_tie_grid, 1.0), (F.maximum_tie_grid, -1.0),
                                  (F.maximum_tie_grid, 2.0)])
def test_numpy_max_min_with_ties(fn, x):
    """Ties share the gradient so that it matches the two-sided difference."""
    check(fn, (x,))


@pytest.mark.parametrize("fn,args,expected", [
    (F.plain_sum_of_boxes, (R(3, 2), R(3, 2, seed=4)), None),
    (F.mean_of_list, (0.0,), 1.0),
    (F.std_of_tuple, (0.0,), 0.0),
    (F.var_of_list, (0.3,), None),
    (F.norm_of_list, (0.0,), 1.0),
])
def test_numpy_reductions_of_python_lists(fn, args, expected):
    check(fn, args)
    if expected is not None:
        for m in MODES:
            assert srcad.grad(fn, mode=m)(*args) == expected


# == test_numpy: indexing and shapes ===========================================================

A543 = R(5, 4, 3, seed=1)
SHAPES = [
    ("index_ints", F.index_ints, (R(3, 2, 4),)),
    ("index_slice", F.index_slice, (A543,)),
    ("index_list", F.index_list, (A543,)),
    ("index_mixed", F.index_mixed, (A543,)),
    ("index_fanout", F.index_fanout, (A543,)),
    ("index_twice", F.index_twice, (R(7),)),
    ("index_repeat", F.index_repeat, (R(3),)),
    ("reshape_method", F.reshape_method, (R(2, 3, 4),)),
    ("reshape_call", F.reshape_call, (R(2, 3, 4),)),
    ("reshape_nolist", F.reshape_nolist, (R(2, 3, 4),)),
    ("ravel_method", F.ravel_method, (R(2, 3, 4),)),
    ("ravel_call", F.ravel_call, (R(2, 3, 4),)),
    ("flatten_method", F.flatten_method, (R(2, 3, 4),)),
    ("transpose_attr", F.transpose_attr, (R(3, 5),)),
    ("squeeze_call", F.squeeze_call, (R(4, 1, 3),)),
    ("squeeze_method", F.squeeze_method, (R(4, 1, 3),)),
    ("expand_dims", F.expand_dims, (R(4, 3),)),
    ("flipud", F.flipud, (R(4, 3),)),
    ("fliplr", F.fliplr, (R(4, 3),)),
    ("rot90", F.rot90, (R(4, 3),)),
    ("roll_axis", F.roll_axis, (R(3, 5),)),
    ("roll_flat", F.roll_flat, (R(3, 5),)),
    ("len", F.len_checked, (R(3, 2),)),
] + [
    (f"transpose_{ax}", F.transpose_axes(ax), (R(2, 3, 4),))
    for ax in (None, (0, 1, 2), (0, 2, 1), (2, 0, 1), (2, 1, 0), (1, 0, 2), (1, 2, 0))
] + [
    (f"moveaxis_{s}_{d}", F.moveaxis_of(s, d), (R(2, 3, 4),)) for s in range(3) for d in range(3)
] + [
    (f"swapaxes_{a}_{b}", F.swapaxes_of(a, b), (R(2, 3, 4),)) for a in range(3) for b in range(3)
] + [
    (f"rollaxis_{a}_{s}", F.rollaxis_of(a, s), (R(2, 3, 4),)) for a in range(3) for s in range(3)
] + [
    (f"atleast_{n}d_{np.shape(x)}", F.atleast(n), (x,))
    for n in (1, 2, 3) for x in (1.2, R(1), R(4), R(1, 4), R(2, 4), R(2, 4, 3))
]


@pytest.mark.parametrize("name,fn,args", thin(SHAPES, [c[0] for c in SHAPES], every=4))
def test_numpy_indexing_and_shapes(name, fn, args):
    check(fn, args, order=2 if name.startswith("index") else 1)


# == test_numpy: building arrays ===============================================================

X32 = R(3, 2, seed=2)
BUILD = [
    ("array_1d", F.array_1d, (2.5,)),
    ("array_2d", F.array_2d, (2.5,)),
    ("array_fanout", F.array_fanout, (2.5,)),
    ("array_scalar", F.array_scalar, (2.5,)),
    ("array_of_arrays", F.array_of_arrays, (X32,)),
    ("array_of_arrays_2", F.array_of_arrays_2, (X32,)),
    ("r_one", F.r_one, (X32,)),
    ("r_two", F.r_two, (X32,)),
    ("r_const", F.r_const, (R(4, 3),)),
    ("r_mixed", F.r_mixed, (R(2, 3),)),
    ("r_range", F.r_range, (R(5),)),
    ("c_mixed", F.c_mixed, (R(2, 3),)),
    ("append_list", F.append_flat, ([1.0, 2.0, 3.0], 4.0)),
    ("append_arr", F.append_flat, (np.array([1.0, -2.0, 3.0]), 4.0)),
    ("append_2d", F.append_axis, ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0]])),
    ("concat_first", F.concat_first, (R(3, 3),)),
    ("concat_axis1", F.concat_axis1, (R(2, 3),)),
    ("concat_positional", F.concat_positional, (R(2, 3),)),
    ("concat_list", F.concat_list_args, (R(1), R(3))),
    ("stack_0", F.stack_axis(0), (R(2), R(2, seed=7))),
    ("stack_1", F.stack_axis(1), (R(2), R(2, seed=7))),
    ("vstack_1d", F.vstack, (R(2), R(2, seed=7))),
    ("vstack_2d", F.vstack, (R(2, 4), R(1, 4))),
    ("vstack_3d", F.vstack, (R(2, 3, 4), R(5, 3, 4))),
    ("hstack_1d", F.hstack, (R(2), R(2, seed=7))),
    ("hstack_2d", F.hstack, (R(3, 4), R(3, 5))),
    ("hstack_3d", F.hstack, (R(2, 1, 4), R(2, 5, 4))),
    ("column_stack_1d", F.column_stack, (R(2), R(2, seed=7))),
    ("column_stack_2d", F.column_stack, (R(2, 2), R(2, 2, seed=7))),
    ("vsplit_list", F.vsplit_list, (R(4, 3),)),
    ("hsplit_sum", F.hsplit_sum, (R(4, 4, 2),)),
    ("dsplit_sum", F.dsplit_sum, (R(2, 4, 4),)),
    ("astype_back", F.astype_back, (np.arange(3, dtype="float32"),)),
    ("cast_to_index", F.cast_to_index, (np.c_[R(5, 4), [0.5, 2.5, 1.5, 4.5, 0.5]],)),
    ("nan_to_num", F.nan_to_num, (R(4),)),
] + [
    (f"{name}_{spec}_{axis}_{np.shape(x)}", F.split_of(name, spec, axis), (x,))
    for name, x, specs, axes in [("split", R(4, 8), (4, [1, 2]), (0, 1)),
                                 ("split", R(4, 4, 4), (2, [1, 2]), (0, 1, 2)),
                                 ("split", R(7), (1,), (0,)),
                                 ("array_split", R(7, 7), (4, [3, 5]), (0, 1)),
                                 ("array_split", R(7), (1, 3), (0,))]
    for spec in specs for axis in axes
] + [
    (f"linspace_{num}_{a}_{b}", F.linspace_of(num), (a, b))
    for num in (0, 1, 5) for a, b in ((1.2, 3.4), (1.2, -3.4), (1.2, 1.2))
]


@pytest.mark.parametrize("name,fn,args", thin(BUILD, [c[0] for c in BUILD], every=3))
def test_numpy_building_arrays(name, fn, args):
    check(fn, args, order=2 if name.startswith(("array", "r_", "c_")) else 1)


def test_numpy_astype_keeps_dtype():
    x = np.arange(3, dtype="float32")
    for m in MODES:
        assert srcad.grad(F.astype_back, mode=m)(x).dtype == np.float32


def test_numpy_unrelated_outputs_have_zero_pullback():
    for fn in (F.unrelated, F.r_unrelated):
        for m in MODES:
            out, pb = srcad.vjp(fn, R(3, 2), mode=m)
            (g,) = pb(np.ones_like(out))
            assert g.shape == (3, 2) and not g.any()


# == test_numpy / test_systematic: structure ===================================================

STRUCT = [
    ("clip", F.clip_kw, (R(4, 5),)),
    ("where", F.where_mask, (R(3, 4), R(3, 4, seed=8))),
    ("diagonal_2d", F.diagonal_last, (R(4, 4),)),
    ("diagonal_3d", F.diagonal_last, (R(3, 4, 4),)),
    ("sort_1", F.sort, (R(1),)),
    ("sort_7", F.sort, (R(7),)),
    ("cumprod_none", F.cumprod_of(None), (R(2, 3, lo=0.5, hi=1.5),)),
    ("cumprod_1", F.cumprod_of(1), (R(2, 3, lo=0.5, hi=1.5),)),
    ("fmax", F.fmax, (R(3, 4), R(1, 4))),
    ("fmin", F.fmin, (R(1), R(3, 4))),
    ("gradient_plain_1d", F.gradient_plain, (R(10),)),
    ("gradient_plain_2d", F.gradient_stack, (R(5, 6),)),
] + [
    (f"trace_{off}_{x.shape}", F.trace_of(off), (x,))
    for off in (-1, 0, 1, 3) for x in (R(5, 5), R(4, 5), R(5, 4), R(3, 4, 5))
] + [
    (f"diag_{k}", F.diag_of(k), (R(5, 5),)) for k in (-1, 0, 1)
] + [
    (f"diag_flat_{k}", F.diag_of(k), (R(5),)) for k in (-1, 0, 1)
] + [
    (f"{n}_{k}_{x.shape}", F.tri_of(n, k), (x,))
    for n in ("tril", "triu") for k in (-1, 0, 2) for x in (R(5, 5), R(5, 5, 4))
] + [
    (f"repeat_{r}_{a}_{x.shape}", F.repeat_of(r, a), (x,))
    for r in (0, 1, 2) for a in (None, 0, 1) for x in (R(2, 3, 4), R(3, 1))
] + [
    (f"tile_{reps}_{x.shape}", F.tile_of(reps), (x,))
    for x, repss in ((R(2, 1, 3, 1), [(1, 4, 1, 2)]), (R(1, 2), [(1, 2), (2, 3), (3, 2, 1)]),
                     (R(1), [(2,), 2]))
    for reps in repss
] + [
    (f"diff_{n}_{a}_{x.shape}", F.diff_of(n, a), (x,))
    for x in (R(5, 5), R(4, 5, 3)) for n in (1, 2) for a in (0, 1)
] + [
    ("diff_single", F.diff_of(1, 0), (R(1),)),
    ("diff_single_col", F.diff_of(1, 1), (R(3, 1),)),
] + [
    (f"gradient_{a}_{x.shape}", F.gradient_of(a), (x,))
    for x in (R(5, 5), R(4, 5, 3)) for a in (None, 0, 1, -1)
] + [
    (f"gradient_{a}_3d", F.gradient_of(a), (R(4, 5, 3),)) for a in ((0, 1), (0, -1))
] + [
    (f"cumsum_{a}_{x.shape}", F.cumsum_of(a), (x,)) for a in (None, 0, 1) for x in (R(4, 5),)
] + [
    ("cumsum_1d", F.cumsum_of(None), (R(6),)),
] + [
    (f"partition_{k}_{n}", F.partition_of(k), (R(n),)) for k in (0, 3, 6) for n in (7, 12)
] + [
    (f"cross_{kw}", F.cross_of(**kw), (R(3, 3), R(3, 3, seed=6)))
    for kw in ({}, {"axis": 0}, {"axisa": 0, "axisb": 1, "axisc": 0}, {"axisa": 1, "axisb": 0})
] + [
    (f"select_{d}", F.select_of(d), (R(3, 4),)) for d in (0.0, 1.1)
] + [
    (f"pad_{w}", F.pad_of(w), (R(2, 3),))
    for w in (0, 3, (3,), (3, 2), ((3, 2),), ((1, 2), (3, 4)), ((0, 0), (0, 0)))
]


@pytest.mark.parametrize("name,fn,args", thin(STRUCT, [c[0] for c in STRUCT], every=4))
def test_numpy_structure(name, fn, args):
    check(fn, args, order=2 if name.startswith(("trace", "diag", "tril", "cumsum")) else 1)


# == test_linalg ===============================================================================

def _well(n, batch=(), seed=0):
    return R(*batch, n, n, seed=seed) + 3.0 * np.eye(n)


def _psd(n, seed=0):
    a = R(n, n, seed=seed)
    return a @ a.T + np.eye(n)


LINALG = [
    ("inv", F.inv, (_well(4),)),
    ("inv_3d", F.inv, (_well(3, (2, 2)),)),
    ("pinv_square", F.pinv, (_well(4),)),
    ("pinv_tall", F.pinv, (R(5, 3),)),
    ("pinv_wide", F.pinv, (R(3, 5),)),
    ("pinv_batched", F.pinv, (R(2, 4, 3),)),
    ("pinv_low_rank", F.pinv_low_rank, (R(3, 4),)),
    ("det", F.det, (R(4, 4),)),
    ("det_3d", F.det, (R(2, 3, 3),)),
    ("slogdet", F.slogdet_logdet, (_well(4),)),
    ("slogdet_neg", F.slogdet_logdet, (-_well(4),)),
    ("slogdet_3d", F.slogdet_batched, (R(2, 3, 3),)),
    ("solve_mat", F.solve_a, (_well(4), R(4, 3))),
    ("solve_vec", F.solve_a, (_well(4), R(4))),
    ("solve_3d_3d", F.solve_a, (_well(3, (2,)), R(2, 3, 2))),
    ("solve_3d_vec", F.solve_batched_vec, (_well(3, (2,)), R(2, 3))),
    ("norm_vec", F.norm_of(), (R(6),)),
    ("norm_fro", F.norm_of(), (R(4, 5),)),
    ("norm_fro_axis", F.norm_of(axis=(0, 1)), (R(4, 5, 3),)),
    ("norm_fro_kw", F.norm_of(ord="fro"), (R(4, 5),)),
    ("norm_nuc", F.norm_of(ord="nuc"), (R(4, 5),)),
    ("norm_nuc_axis", F.norm_of(ord="nuc", axis=(0, 1)), (R(4, 5, 3),)),
    ("norm_inf", F.norm_of(ord=np.inf), (R(6),)),
    ("norm_1", F.norm_of(ord=1), (R(6),)),
    ("norm_2_mat", F.norm_of(ord=2), (R(4, 3),)),
    ("eigh_lower", F.eigh_both, (R(4, 4),)),
    ("eigh_upper", F.eigh_upper, (R(4, 4),)),
    ("eigh_batched", F.eigh_both, (np.stack([_psd(4, 1), _psd(4, 2)]),)),
    ("eigh_sym", F.eigh_sym_sum, (R(4, 4),)),
    ("cholesky", F.cholesky_sym, (_psd(4),)),
    ("cholesky_batched", F.cholesky_sym, (np.stack([_psd(3, 1), _psd(3, 2)]),)),
    ("cholesky_reparam", F.cholesky_reparam, (_psd(3),)),
    ("svd_wide", F.svd_all, (R(3, 5),)),
    ("svd_tall", F.svd_all, (R(5, 3),)),
    ("svd_square", F.svd_all, (R(4, 4),)),
    ("svd_wide_3d", F.svd_all, (R(2, 3, 5),)),
    ("svd_tall_3d", F.svd_all, (R(2, 5, 3),)),
    ("svd_values_2d", F.svd_values, (R(5, 3),)),
    ("svd_values_3d", F.svd_values, (R(2, 5, 3),)),
] + [
    (f"norm_ord_{o}", F.norm_of(ord=o), (R(6),)) for o in (2, 3, 4)
] + [
    (f"norm_axis_{a}", F.norm_of(axis=a), (R(4, 3, 5),)) for a in (0, 1, 2)
]


@pytest.mark.parametrize("name,fn,args", thin(LINALG, [c[0] for c in LINALG], every=3))
def test_linalg(name, fn, args):
    # u and vt of svd / v of eigh: central differences with h = 1e-4 agree to ~2e-6 only
    # (the error shrinks as h^2; forward and reverse agree to 1e-16)
    tol = 1e-5 if name.startswith(("svd", "eigh")) else None
    check(fn, args, order=2 if name in ("inv", "det", "slogdet", "solve_mat", "norm_vec",
                                        "norm_fro", "cholesky") else 1, tol=tol)


# == test_systematic / test_scalar_ops: unary ufuncs ===========================================

UNARY = {
    "sin": (-2, 2), "cos": (-2, 2), "tan": (-1.1, 1.1), "sinh": (-2, 2), "cosh": (-2, 2),
    "tanh": (-2, 2), "arcsin": (-0.8, 0.8), "arccos": (-0.8, 0.8), "arctan": (-2, 2),
    "arcsinh": (-0.9, 0.9), "arccosh": (1.1, 4.0), "arctanh": (-0.9, 0.9),
    "exp": (-2, 2), "exp2": (-2, 2), "expm1": (-2, 2), "log": (0.2, 2.0), "log2": (0.2, 2.0),
    "log10": (0.2, 2.0), "log1p": (0.2, 2.0), "sqrt": (1.0, 3.0), "cbrt": (0.5, 3.0),
    "square": (-2, 2), "abs": (0.1, 4.0), "absolute": (0.1, 4.0), "fabs": (0.1, 4.0),
    "sign": (-2, 2), "ceil": (-1.4, 1.4), "floor": (-1.4, 1.4), "rint": (-1.4, 1.4),
    "deg2rad": (-2, 2), "rad2deg": (-2, 2), "degrees": (-2, 2), "radians": (-2, 2),
    "negative": (-2, 2), "reciprocal": (0.5, 2.0), "sinc": (-2, 2), "real": (-2, 2),
    "real_if_close": (-2, 2), "conj": (-2, 2), "conjugate": (-2, 2),
}


def _transform(lims, u):
    return lims[0] + (lims[1] - lims[0]) * u


def _unary_cases():
    cases = []
    for name, lims in UNARY.items():
        lims = (float(lims[0]), float(lims[1]))
        for shape in ((), (2,), (3, 2), (1, 2)):
            u = R(*shape, lo=0.05, hi=0.95, seed=len(name))
            cases.append((name, _transform(lims, u)))
    return cases


UNARY_CASES = _unary_cases()


@pytest.mark.parametrize("name,x", thin(UNARY_CASES, [f"{n}-{np.shape(x)}" for n, x in UNARY_CASES], 6))
def test_systematic_unary_ufuncs(name, x):
    # (3 * rad2deg(x) is ~170 x: sin of it oscillates too fast for the second-order check)
    order = 2 if np.shape(x) == (3, 2) and name not in ("rad2deg", "degrees") else 1
    check(F.unary_times3(name), (x,), order=order)


def test_systematic_imag_and_angle_of_reals():
    """np.imag / np.angle of a real array: zero gradient (autograd checks them on reals too)."""
    for name in ("imag", "angle"):
        x = R(3, 2, seed=11)
        for m in MODES:
            out, pb = srcad.vjp(F.unary_times3(name), x, mode=m)
            np.testing.assert_array_equal(out, 3.0 * getattr(np, name)(x))
            (g,) = pb(np.ones_like(out))
            assert g.shape == x.shape and not g.any()


# == test_binary_ops / test_truediv / test_systematic: binary ufuncs ===========================

def _pair_values():
    return [2.0, R(4, seed=21), R(3, 4, seed=22), R(1, 4, seed=23)]


def _gap(v):
    return np.sqrt(np.square(v) + 0.5) if isinstance(v, np.ndarray) else float(np.sqrt(v * v + 0.5))


def _pos(v):
    return np.abs(v) + 1.1 if isinstance(v, np.ndarray) else abs(v) + 1.1


def _binary_cases():
    cases = []
    vals = _pair_values()
    for i, a in enumerate(vals):
        for j, b in enumerate(vals):
            tag = f"{np.shape(a)}x{np.shape(b)}"
            cases += [("mul", F.op_mul, a, b, tag), ("add", F.op_add, a, b, tag),
                      ("sub", F.op_sub, a, b, tag), ("div", F.op_div, _gap(a), _gap(b), tag),
                      ("pow", F.op_pow, _pos(a), b, tag),
                      ("arctan2", F.binary_np("arctan2"), a, b, tag),
                      ("hypot", F.binary_np("hypot"), a, b, tag),
                      ("logaddexp", F.binary_np("logaddexp"), a, b, tag),
                      ("logaddexp2", F.binary_np("logaddexp2"), a, b, tag),
                      ("true_divide", F.binary_np("true_divide"), a, _gap(b) * 0.4 + 0.8, tag),
                      ("true_divide_neg", F.binary_np("true_divide"), a, -_gap(b) - 0.3, tag),
                      ("maximum", F.binary_np("maximum"), a, b * 1.01 + 0.003, tag),
                      ("minimum", F.binary_np("minimum"), a, b * 1.01 + 0.003, tag),
                      ("op_mul", F.operator_fn("mul"), a, b, tag),
                      ("op_add", F.operator_fn("add"), a, b, tag),
                      ("op_sub", F.operator_fn("sub"), a, b, tag)]
            if i != j:  # x % y has no derivative where x == y
                cases += [("mod", F.op_mod, _gap(a), _gap(b), tag),
                          ("np_mod", F.binary_np("mod"), a * 0.9, _gap(b) + 0.3, tag),
                          ("remainder", F.binary_np("remainder"), a * 0.45, _gap(b) + 0.2, tag),
                          ("mod_neg", F.binary_np("mod"), a * 0.9, -_gap(b) - 0.3, tag),
                          ("op_mod", F.operator_fn("mod"), a * 0.9, _gap(b) + 0.3, tag)]
    return cases


BINARY = _binary_cases()


@pytest.mark.parametrize("name,fn,a,b,tag", thin(BINARY, [f"{c[0]}-{c[4]}" for c in BINARY], 8))
def test_binary_ops(name, fn, a, b, tag):
    # arctan2 / hypot where x == y near 0: central differences lose digits, not srcad
    tol = 1e-5 if name in ("arctan2", "hypot") else None
    check(fn, (a, b), order=2 if name in ("mul", "div", "pow", "arctan2") else 1, tol=tol)


CMP = ("lt", "le", "gt", "ge", "eq", "ne")


@pytest.mark.parametrize("kind", CMP)
def test_binary_comparisons_zero_gradient_and_value(kind):
    vals = _pair_values()
    fn = F.cmp_sum(kind)
    for a in vals:
        for b in vals:
            for m in MODES:
                v, (ga, gb) = srcad.value_and_grad(fn, wrt=(0, 1), mode=m)(a, b)
                assert v == fn(a, b)
                assert np.shape(ga) == np.shape(a) and not np.any(ga)
                assert np.shape(gb) == np.shape(b) and not np.any(gb)


@pytest.mark.parametrize("kind", CMP)
def test_core_comparison_output_has_zero_gradient(kind):
    """autograd: grad of ``x < y`` on Python floats is 0 (a bool output, with a warning)."""
    fn = F.cmp_raw(kind)
    for m in MODES:
        with pytest.warns(UserWarning, match="returns a bool"):
            g = srcad.grad(fn, wrt=(0, 1), mode=m)(0.7, 1.8)
        assert g == (0.0, 0.0)


@pytest.mark.parametrize("fn", [F.op_add, F.op_sub, F.op_mul, F.op_div, F.op_pow, F.op_mod])
def test_core_python_floats(fn):
    check(fn, (0.7, 1.8), order=2)


@pytest.mark.parametrize("y", [0.0, 1.0, 2.0, 3.5, -1.5])
def test_scalar_power_arg0(y):
    check(F.power_arg0(y), (1.7,), order=2)


def test_scalar_power_arg1_and_zero_base():
    check(F.power_arg1, (-0.6,), order=2)
    for m in MODES:  # d/dy 0**y at y > 0 is 0 (0 * log 0 must not become nan)
        g = srcad.grad(F.power_of_zero_base, mode=m)(2.0)
        assert g == 0.0


def test_scalar_power_zero_exponent_at_zero():
    """np.power(x, 0) at x = 0: d/dx is 0 (not nan)."""
    for m in MODES:
        g = srcad.grad(F.power_arg0(0.0), mode=m)(0.0)
        assert g == 0.0
        g = srcad.grad(F.power_arg0(0), mode=m)(0.0)
        assert g == 0.0


# == test_logic / test_builtins ===============================================================

def test_logic_assert_inside():
    check(F.assert_inside, (np.array([1.0, 2.0, 3.0]),))


def test_logic_bool_output_has_zero_gradient():
    """A bool-valued function (np.allclose): the zero gradient, with a warning (its
    derivative is zero almost everywhere), never a nonzero one."""
    x = np.array([1.0, 2.0, 3.0])
    for m in MODES:
        with pytest.warns(UserWarning, match="returns a bool"):
            g = srcad.grad(F.allclose_out, mode=m)(x)
        assert np.shape(g) == x.shape and g.dtype == x.dtype and not np.any(g)


def test_logic_falseyness():
    check(F.iscomplex_branch, (2.0,), order=2)


@pytest.mark.parametrize("x,kind,truth", [
    ([np.zeros(1)], list, True), ([np.zeros(1)], tuple, False),
    (np.zeros(2), np.ndarray, True), ((np.zeros(2),), np.ndarray, False),
    ((np.zeros(2), np.ones(2)), (tuple, list), True), (np.zeros(1), (tuple, list), False),
    ({"a": np.zeros(2)}, dict, True),
])
def test_builtins_isinstance(x, kind, truth):
    if isinstance(x, dict):
        x = dict(x)
        fn = F.dict_sum_values
    else:
        fn = F.isinstance_checker
        assert fn(x, kind, truth) == 2.0 * np.sum(x)
    for m in MODES:
        g = srcad.grad(fn, mode=m)(x, kind, truth) if fn is F.isinstance_checker \
            else srcad.grad(fn, mode=m)(x)
        want = numerical_grad(fn, (x, kind, truth) if fn is F.isinstance_checker else (x,))
        assert rel_error(g, want) < 1e-6


# == test_list / test_tuple / test_dict =======================================================

def _seq(kind):
    items = [R(5, 6, seed=31), R(4, 3, seed=32), R(2, 4, seed=33)]
    return kind(items)


@pytest.mark.parametrize("kind", [list, tuple])
def test_sequences_getter_grads_and_second_order(kind):
    s = _seq(kind)
    for m in MODES:
        g = srcad.grad(F.seq_getter, mode=m)(s)
        assert type(g) is kind
        np.testing.assert_array_equal(g[0], np.ones((5, 6)))
        np.testing.assert_array_equal(g[1], 2 * np.ones((4, 3)))
        np.testing.assert_array_equal(g[2], np.zeros((2, 4)))
    check(F.seq_sincos, (s,))


@pytest.mark.parametrize("kind", [list, tuple])
def test_sequences_grad_inside_grad(kind):
    check(F.seq_grad_inside, (_seq(kind),))


def test_dict_getter_grads_and_second_order():
    d = {"a": R(5, 6, seed=41), "b": R(4, 3, seed=42), "x": R(2, 4, seed=43)}
    for m in MODES:
        g = srcad.grad(F.dict_getter, mode=m)(d)
        assert list(g) == ["a", "b", "x"]
        np.testing.assert_array_equal(g["a"], np.ones((5, 6)))
        np.testing.assert_array_equal(g["b"], 2 * np.ones((4, 3)))
        np.testing.assert_array_equal(g["x"], np.zeros((2, 4)))
    check(F.dict_sincos, (d,))


def test_dict_grad_inside_grad():
    d = {"a": R(5, 6, seed=41), "b": R(4, 3, seed=42), "x": R(2, 4, seed=43)}
    check(F.dict_grad_inside, (d,))


@pytest.mark.parametrize("fn", [F.dict_iter_sorted, F.dict_items_values_keys])
def test_dict_iteration(fn):
    d = {"b": R(3, 2, seed=44), "a": R(4, seed=45), "c": R(2, 2, seed=46)}
    check(fn, (d,))


@pytest.mark.parametrize("d", [{"k": 3.0}, {"j": 4.0}, {}])
def test_dict_get_with_default(d):
    x = 2.0
    check(F.dict_get, (d, x), wrt=(0, 1))


def test_dict_grad_wrt_empty_dict():
    for m in MODES:
        gd, gx = srcad.grad(F.dict_get, wrt=(0, 1), mode=m)({}, 2.0)
        assert gd == {} and gx == 6.0


@pytest.mark.parametrize("fn", [F.dict_made, F.dict_literal])
def test_dict_outputs(fn):
    for m in MODES:
        check_vjp(fn, (1.3,), mode=m)
    check_jvp(fn, (1.3,))


def test_dict_isinstance():
    check(F.dict_isinstance, ({"x": 1.0},))


@pytest.mark.parametrize("fn,x", [
    (F.list_slice_index, [1.0, 2.0, 3.0]),
    (F.list_slice_plain, [1.0, 2.0, 3.0]),
    (F.list_nested, [[1.0], 2.0, 1.5]),
    (F.list_isinstance, [1.0, 2.0, 3.0]),
    (F.tuple_isinstance, (1.0, 2.0, 3.0)),
])
def test_list_and_tuple_programs(fn, x):
    for m in MODES:
        g = srcad.grad(fn, mode=m)(x)
        want = numerical_grad(fn, (x,))
        assert type(g) is type(x)
        assert rel_error(g, want) < 1e-6


def test_list_made_output():
    for m in MODES:
        check_vjp(F.list_made, (1.3,), mode=m)
    check_jvp(F.list_made, (1.3,))


def test_tuple_nested_higher_order():
    # reverse over reverse through an inner srcad.grad of a tuple argument (the outer in
    # tape mode records the inner transform as one op), and a third derivative
    check(F.tuple_nested_higher, (5.0,), order=2)
    for m in MODES:
        check_grads(srcad.grad(F.tuple_nested_higher), (10.0,), mode=m)
    check_grads(srcad.grad(srcad.grad(F.tuple_nested_higher)), (10.0,))


# == test_wrappers ============================================================================

def test_wrappers_value_and_grad():
    for m in MODES:
        v, d = srcad.value_and_grad(F.pow_scalar, mode=m)(1.7)
        assert v == F.pow_scalar(1.7)
        assert d == srcad.grad(F.pow_scalar, mode=m)(1.7)
    x = R(5, seed=51)
    v, g = srcad.value_and_grad(F.sum_sin_sq)(x)
    assert isinstance(v, float) or np.ndim(v) == 0
    assert rel_error(g, srcad.grad(F.sum_sin_sq)(x)) == 0.0


def test_wrappers_value_and_grad_inside():
    check(F.value_of_value_and_grad, (R(5, seed=51),), order=2)


def test_wrappers_hessian_of_quadratic():
    x = R(3, seed=52)
    np.testing.assert_allclose(srcad.hessian(F.quadratic)(x), F.HQ + F.HQ.T, atol=1e-12)


def test_wrappers_multigrad_order_and_packed():
    args = (0.5, -0.3, 0.2, -1.1, 0.7)
    for m in MODES:
        got = srcad.grad(F.many_args, wrt=(3, 1), mode=m)(*args, f=0.6, g=-0.1)
        packed = srcad.grad(F.packed_db, mode=m)((-1.1, -0.3))
        assert rel_error(got, packed) < 1e-12
        v, g2 = srcad.value_and_grad(F.many_args, wrt=(3, 1), mode=m)(*args, f=0.6, g=-0.1)
        assert v == F.many_args(*args, f=0.6, g=-0.1) and rel_error(g2, got) == 0.0


def test_wrappers_elementwise_grad():
    a = R(6, seed=53)
    for m in MODES:
        out, pb = srcad.vjp(F.elementwise, a, mode=m)
        (wrapped,) = pb(np.ones_like(out))
        explicit = np.array([srcad.grad(F.elementwise, mode=m)(float(ai)) for ai in a])
        assert rel_error(wrapped, explicit) < 1e-12
    b = R(6, seed=54)
    out, pb = srcad.vjp(F.elementwise_two, 0.9, b)
    g = pb(np.ones_like(out))[1]
    explicit = np.array([srcad.grad(F.elementwise_two, wrt=1)(0.9, float(bi)) for bi in b])
    assert rel_error(g, explicit) < 1e-12


@pytest.mark.parametrize("shape", [(5,), (5, 4), (3, 4, 2)])
def test_wrappers_hessian_tensor_product(shape):
    a, v = R(*shape, seed=55), R(*shape, seed=56)
    h = srcad.hessian(F.sum_sin)(a)
    _, hv = srcad.jvp(srcad.grad(F.sum_sin), (a,), (v,))
    want = np.tensordot(h, v, axes=len(shape))
    assert rel_error(hv, want) < 1e-12
    _, pb = srcad.vjp(srcad.grad(F.sum_sin), a)  # reverse over reverse
    assert rel_error(pb(v)[0], want) < 1e-12


@pytest.mark.parametrize("fn,shape,vshape", [(F.roll_sin, (5,), (5,)),
                                             (F.roll_sin, (5, 4), (5, 4)),
                                             (F.roll_sin_axis, (5, 4, 3), (5, 4, 3))])
def test_wrappers_tensor_jacobian_product(fn, shape, vshape):
    a, v = R(*shape, seed=57), R(*vshape, seed=58)
    jac = np.stack([srcad.jvp(fn, (a,), (e.reshape(shape),))[1]
                    for e in np.eye(a.size)], axis=-1).reshape(shape + shape)
    for m in MODES:
        _, pb = srcad.vjp(fn, a, mode=m)
        assert rel_error(pb(v)[0], np.tensordot(v, jac, axes=v.ndim)) < 1e-12


def test_wrappers_make_jvp_and_ggnvp():
    x, v = R(3, seed=59), R(3, seed=60)
    jac = np.stack([srcad.vjp(F.tanh_affine, x)[1](e)[0] for e in np.eye(2)])
    _, jv = srcad.jvp(F.tanh_affine, (x,), (v,))
    assert rel_error(jv, jac @ v) < 1e-12
    for f in (F.affine, F.tanh_affine):
        for g in (F.half_sq, F.quartic):
            y, jv = srcad.jvp(f, (x,), (v,))
            _, hjv = srcad.jvp(srcad.grad(g), (y,), (jv,))
            _, pb = srcad.vjp(f, x)
            ggnvp = pb(hjv)[0]
            jf = np.stack([srcad.vjp(f, x)[1](e)[0] for e in np.eye(2)])
            explicit = jf.T @ srcad.hessian(g)(y) @ jf @ v
            assert rel_error(ggnvp, explicit) < 1e-10


def test_wrappers_grad_and_aux_via_vjp():
    x = R(3, seed=61)
    (_s, aux), pb = srcad.vjp(F.multiple_outputs_aux, x)
    np.testing.assert_array_equal(aux, x ** 2)
    (g,) = pb((1.0, np.zeros_like(aux)))
    np.testing.assert_allclose(g, F.CONST_23.sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_wrappers_dtypes(dtype):
    y = R(4, 4, seed=62).astype(dtype)
    for m in MODES:
        g = srcad.grad(F.real_sum_sq, mode=m)(y)
        assert g.dtype == dtype
        np.testing.assert_allclose(g, 2 * y, rtol=1e-2)


def test_wrappers_unused_argument():
    for m in MODES:
        assert srcad.grad(F.two_args_first, wrt=1, mode=m)(3.0, 1.0) == 0.0


def test_wrappers_partial():
    import functools
    for m in MODES:
        assert srcad.grad(functools.partial(F.partial_target, y=1.0), mode=m)(3.0) == 2.0


def test_wrappers_checkpoint():
    x, w = R(3, 4, seed=63), R(4, 4, seed=64) * 0.5
    for m in MODES:
        got = srcad.grad(F.checkpointed, wrt=(0, 1), mode=m)(x, w)
        want = srcad.grad(F.unchecked, wrt=(0, 1), mode=m)(x, w)
        assert rel_error(got, want) < 1e-12
    check(F.checkpointed, (x, w))


# == test_graphs ==============================================================================

def test_graphs_fanout_and_third_derivative():
    check(F.fanout, (0.3,), order=2)
    d1 = srcad.grad(F.fanout)
    d2 = srcad.grad(d1)
    check_grads(d1, (0.4,))
    check_grads(d2, (0.4,), tol=1e-5)
    for wrt in (0, 1):
        check_grads(srcad.grad(srcad.grad(F.fanout_two, wrt=wrt), wrt=1 - wrt), (0.3, -0.5),
                    tol=1e-5)
    check_grads(srcad.grad(srcad.grad(F.fanout_two, wrt=1), wrt=1), (0.3, -0.5), tol=1e-5)


def test_graphs_constant_and_identity():
    for m in MODES:
        assert srcad.grad(F.constant, mode=m)(2.0) == 0.0
        assert srcad.grad(F.identity, mode=m)(2.0) == 1.0
    assert srcad.grad(srcad.grad(F.identity))(2.0) == 0.0


def test_graphs_hess_vector_prod_through_inner_grad():
    a, b = R(4, seed=71), R(4, seed=72)
    check(F.sin_dot_v, (a,))
    check(F.vector_product, (a, b))


@pytest.mark.parametrize("fn", [F.enclosing_ref, F.enclosing_ref_2])
def test_graphs_enclosing_scope_grad(fn):
    check(fn, (1.3,))


@pytest.mark.parametrize("fn", [F.mutating_outgrad, F.mutating_outgrad_index])
def test_graphs_mutating_outgrad(fn):
    check(fn, (R(5, seed=73),), order=2)


@pytest.mark.parametrize("fn,shape", [(F.singleton_keepdims, (3, 3)), (F.singleton_axis0, (3, 1)),
                                      (F.singleton_axis1_keepdims, (1, 3))])
def test_graphs_singleton_array_output(fn, shape):
    x = R(*shape, seed=74)
    for m in MODES:
        g = srcad.grad(fn, mode=m)(x)
        assert g.shape == shape
        assert rel_error(g, np.cos(x)) < 1e-12


@pytest.mark.parametrize("fn,shape", [(F.grad_sum_of_singleton, (3, 3)),
                                      (F.grad_sum_of_singleton_axis0, (3, 1))])
def test_graphs_grad_of_singleton_grad(fn, shape):
    check(fn, (R(*shape, seed=75),))


def test_graphs_assignment_into_argument():
    """autograd raises; srcad either differentiates the write (copy-on-write) or refuses."""
    a = R(5, seed=76)
    for m in MODES:
        try:
            ga, gb = srcad.grad(F.assign_into_argument_sum, wrt=(0, 1), mode=m)(a.copy(), 3.0)
        except srcad.SrcadError:
            continue
        want = 2 * a
        want[1] = 0.0
        assert rel_error(ga, want) < 1e-12 and gb == 6.0


# == test_direct / test_jacobian =============================================================

def test_direct_values():
    for m in MODES:
        assert abs(srcad.grad(F.direct, mode=m)(1.3) - 3.190948746871) < 1e-6
    _, t = srcad.jvp(F.direct, (1.3,), (1.0,))
    assert abs(t - 3.190948746871) < 1e-6


def test_jacobian_against_grad_and_stacked():
    a = R(1, 3, seed=81)
    _, pb = srcad.vjp(F.singleton_axis1_keepdims, a)
    assert rel_error(pb(np.ones((1, 1)))[0], srcad.grad(F.singleton_axis1_keepdims)(a)) == 0.0
    x = 0.7
    _, t = srcad.jvp(F.scalar_to_vector, (x,), (1.0,))
    np.testing.assert_allclose(t, [1.0, 2 * x, 3 * x ** 2], rtol=1e-12)
    x = R(5, seed=82)
    _, pb = srcad.vjp(F.stacked, x)
    jac = np.stack([pb(e)[0] for e in np.eye(3)])
    grads = np.stack([srcad.grad(f)(x) for f in (F.cube_sum, F.prod_sin, F.grad_exp_tanh)])
    assert rel_error(jac, grads) < 1e-12
    check(F.stacked, (x,))


def test_jacobian_higher_order():
    x = R(2, seed=83)
    check(F.outer_sin, (x,), order=2)


# == test_fft (real-valued parts) ============================================================

FFT = [
    ("fftshift_odd", F.fftshift, (R(5, 5),)),
    ("fftshift_even", F.fftshift, (R(4, 6),)),
    ("fftshift_axes", F.fftshift, (R(3, 5),)),
    ("fftshift_axes1", F.fftshift_axes, (R(4, 5),)),
    ("ifftshift_odd", F.ifftshift, (R(5, 5),)),
    ("ifftshift_even", F.ifftshift, (R(4, 6),)),
    ("ifftshift_axes0", F.ifftshift_axes, (R(5, 4),)),
    ("fftfreq", F.fftfreq_scaled, (R(7),)),
    ("rfftfreq", F.rfftfreq_scaled, (R(5),)),
]


@pytest.mark.parametrize("name,fn,args", FFT, ids=[c[0] for c in FFT])
def test_fft_real_parts(name, fn, args):
    check(fn, args, order=2)


# == test_misc ==============================================================================

def test_misc_flatten_nodes_in_containers():
    check(F.flatten_in_containers, (1.0, 2.0))
    check(F.flatten_in_containers, (R(2, 3), R(4)))


# == torch as a second oracle (linalg, where differences are least sharp) =====================

@pytest.mark.parametrize("name,fn,make", [
    ("pinv", F.pinv, lambda: R(4, 3, seed=91)),
    ("slogdet", F.slogdet_logdet, lambda: _well(4, seed=92)),
    ("cholesky", F.cholesky_sym, lambda: _psd(4, seed=93)),
    ("svd_values", F.svd_values, lambda: R(4, 3, seed=94)),
    ("norm_nuc", F.norm_of(ord="nuc"), lambda: R(4, 3, seed=95)),
])
def test_linalg_against_torch(name, fn, make):
    torch = pytest.importorskip("torch")
    x = make()
    t = torch.tensor(x, requires_grad=True)
    if name == "pinv":
        out = torch.linalg.pinv(t)
    elif name == "slogdet":
        out = torch.linalg.slogdet(t)[1]
    elif name == "cholesky":
        low = torch.tril(t)
        out = torch.linalg.cholesky((low + low.T) / 2.0)
    elif name == "svd_values":
        out = torch.linalg.svdvals(t)
    else:
        out = torch.linalg.matrix_norm(t, ord="nuc")
    u = np.random.default_rng(96).standard_normal(out.shape)
    (want,) = torch.autograd.grad(out, t, torch.tensor(u))
    for m in MODES:
        _, pb = srcad.vjp(fn, x, mode=m)
        assert rel_error(pb(u if u.shape else float(u))[0], want.numpy()) < 1e-10
