"""Signals and tables: np.convolve, np.correlate, np.interp, np.gradient, np.choose and
np.linalg.multi_dot (runtime helpers: srcad/runtime_signal.py).

Convolutions are bilinear: with G the output's cotangent placed in the 'full' output
(`conv_embed`), convolve(a, v)'s da = correlate(G, v, 'valid') and dv = correlate(G, a,
'valid'); correlate(a, v) is convolve(a, v[::-1]) up to where numpy puts its 'same' output,
so da = convolve(G, v, 'valid') and dv = flip(correlate(G, a, 'valid')).

np.interp is piecewise linear in x and linear in fp: inside [xp[0], xp[-1]],
out = (1 - t) fp[i0] + t fp[i1] with t = (x - xp[i0]) / (xp[i1] - xp[i0]), so
d out / dx = (fp[i1] - fp[i0]) / (xp[i1] - xp[i0]) and fp gets (1 - t) g at i0 and t g at i1;
outside, the value is fp[0] / fp[-1] (or `left` / `right`): no derivative in x. **Kink
convention**: at a knot xp[k] the slope of the interval to its right (at the last knot, of the
last interval): a one-sided derivative, as numpy's search puts x == xp[k] in that interval.
xp, left, right and period have no rule (refused where differentiated).

np.gradient is linear in f: its VJP is the transpose of numpy's own stencil on each axis.
np.choose is linear in the choices: each element's cotangent goes to the choice it came from.
multi_dot's factor i gets L^T G R^T (L, R: the products before and after it); its second
derivative replaces two factors (multi_dot_grad2 / multi_dot_jvp2); a third is refused (an
error, never zeros).
"""

import numpy as np

from .. import runtime_signal as sg
from ..runtime import (
    array_item,
    array_strides,
    choose_tree,
    conv_crop,
    conv_embed,
    gradient_tree,
    interp_basis,
    item_grad,
    last_writes,
    multi_dot_grad,
    multi_dot_grad2,
    multi_dot_jvp,
    multi_dot_jvp2,
    restride,
    unchoose,
    ungradient,
    unstride,
    unsupported_derivative,
    untake,
    unwindow,
)
from .table import Param, defjvp, defnondiff, defvjp

_F = "signal"

# --- convolutions -----------------------------------------------------------------------------
_CONV = ("np.{f}(a, b)", "np.{f}(a, b, 'same')", "np.{f}(a, b, mode='valid')",
         "np.{f}(a, b, 'full')")
_CONV_SHAPES = ([(5,), (3,)], [(3,), (5,)], [(4,), (4,)], [(2,), (5,)], [(6,), (1,)])


def _conv_cases(f):
    return tuple((src.format(f=f), shapes) for src in _CONV for shapes in _CONV_SHAPES[:3]) \
        + ((f"np.{f}(a, b, 'same')", [(2,), (5,)]), (f"np.{f}(a, b, 'same')", [(4,), (7,)]),
           (f"np.{f}(a, b)", [(6,), (1,)]))


defvjp(np.convolve,
       lambda g, out, a, v, mode="full":
           np.reshape(np.correlate(conv_embed(g, np.size(a), np.size(v), mode, False),
                                   np.ravel(v), "valid"), np.shape(a)),
       lambda g, out, a, v, mode="full":
           np.reshape(np.correlate(conv_embed(g, np.size(a), np.size(v), mode, False),
                                   np.ravel(a), "valid"), np.shape(v)),
       None, name="convolve", linear=("a", "v"), family=_F,
       derivation="bilinear: with G the cotangent placed in the 'full' output, "
       "da = correlate(G, v, 'valid'), dv = correlate(G, a, 'valid')",
       test_cases=_conv_cases("convolve"))
defvjp(np.correlate,
       lambda g, out, a, v, mode="valid":
           np.reshape(np.convolve(conv_embed(g, np.size(a), np.size(v), mode, True),
                                  np.ravel(v), "valid"), np.shape(a)),
       lambda g, out, a, v, mode="valid":
           np.reshape(np.flip(np.correlate(conv_embed(g, np.size(a), np.size(v), mode, True),
                                           np.ravel(a), "valid")), np.shape(v)),
       None, name="correlate", linear=("a", "v"), family=_F,
       derivation="convolve(a, v[::-1]): da = convolve(G, v, 'valid'), "
       "dv = flip(correlate(G, a, 'valid')) (G: the cotangent placed in the 'full' output)",
       test_cases=_conv_cases("correlate"))

# --- interp -----------------------------------------------------------------------------------
defvjp(np.interp,
       lambda g, out, x, xp, fp, left=None, right=None, period=None:
           g * (np.take(fp, interp_basis(x, xp, left, right, period, "i1"))
                - np.take(fp, interp_basis(x, xp, left, right, period, "i0")))
           * interp_basis(x, xp, left, right, period, "inv_h"),
       None,
       lambda g, out, x, xp, fp, left=None, right=None, period=None:
           untake(g * interp_basis(x, xp, left, right, period, "mask")
                  * (1 - (x - interp_basis(x, xp, left, right, period, "offset"))
                     * interp_basis(x, xp, left, right, period, "inv_h")),
                  fp, interp_basis(x, xp, left, right, period, "i0"))
           + untake(g * ((x - interp_basis(x, xp, left, right, period, "offset"))
                         * interp_basis(x, xp, left, right, period, "inv_h")),
                    fp, interp_basis(x, xp, left, right, period, "i1")),
       None, None, None, name="interp", family=_F, no_rule_for=("xp", "left", "right"),
       derivation="piecewise linear: dx = g (fp[i1] - fp[i0]) / (xp[i1] - xp[i0]) inside "
       "[xp[0], xp[-1]] (0 outside; at a knot the interval to its right, at the last knot "
       "the last one); fp gets (1 - t) g at i0 and t g at i1",
       test_cases=(("np.interp(a, np.linspace(-2.5, 2.5, 7), b)", [(3, 4), (7,)]),
                   ("np.interp(a, [-1.0, -0.2, 0.3, 1.5], b)", [(9,), (4,)]),
                   ("np.interp(a * 2, [-1.0, -0.2, 0.3, 1.5], b, left=-3.0, right=5.0)",
                    [(12,), (4,)]),
                   ("np.interp(a, [0.0, 1.0, 2.5, 4.0], b, period=4.0)", [(8,), (4,)]),
                   ("np.interp(a, [0.5, -1.5, 1.0], b, period=3.0)", [(6,), (3,)]),
                   ("np.interp(a, [0.5], b)", [(4,), (1,)]),
                   ("np.interp(a, [-1.0, 1.0], [2.0, -1.0])", [(5,)]),
                   ("np.interp(0.25, [-1.0, 0.0, 1.0], a)", [(3,)])))
defjvp(np.interp,
       lambda g, out, x, xp, fp, left=None, right=None, period=None:
           g * (np.take(fp, interp_basis(x, xp, left, right, period, "i1"))
                - np.take(fp, interp_basis(x, xp, left, right, period, "i0")))
           * interp_basis(x, xp, left, right, period, "inv_h"),
       None,
       lambda g, out, x, xp, fp, left=None, right=None, period=None:
           np.take(g, interp_basis(x, xp, left, right, period, "i0"))
           * (interp_basis(x, xp, left, right, period, "mask")
              * (1 - (x - interp_basis(x, xp, left, right, period, "offset"))
                 * interp_basis(x, xp, left, right, period, "inv_h")))
           + np.take(g, interp_basis(x, xp, left, right, period, "i1"))
           * ((x - interp_basis(x, xp, left, right, period, "offset"))
              * interp_basis(x, xp, left, right, period, "inv_h")),
       None, None, None)

# --- gradient ---------------------------------------------------------------------------------
defvjp(np.gradient,
       lambda g, out, f, varargs, axis=None, edge_order=1:
           ungradient(g, f, varargs, axis, edge_order),
       params=(Param("f"), Param("varargs", star=True), Param("axis", None),
               Param("edge_order", 1)),
       spelling="np.gradient(f, *varargs, axis, edge_order)",
       name="gradient", family=_F, no_rule_for=("varargs",),
       derivation="linear in f: each axis's cotangent through the transpose of numpy's "
       "stencil (central differences inside, one-sided of order edge_order at the ends)",
       test_cases=(("np.gradient(a)", [(6,)]), ("np.gradient(a, 0.5)", [(5,)]),
                   ("np.gradient(a, edge_order=2)", [(6,)]),
                   ("np.gradient(a, 2.0, edge_order=2)", [(5,)]),
                   ("np.gradient(a, axis=1)", [(3, 5)]),
                   ("np.gradient(a, axis=0, edge_order=2)", [(4, 3)]),
                   ("np.gradient(a)[1] * np.gradient(a)[0]", [(3, 4)]),
                   ("np.gradient(a, 0.5, 2.0)[0]", [(4, 3)]),
                   # numpy's tuple read as one array by a ufunc: a stacked cotangent
                   ("np.sin(np.gradient(a))", [(3, 4)]),
                   ("np.sin(np.gradient(a, 0.5, 2.0, edge_order=2))", [(4, 3)]),
                   ("np.stack(np.gradient(a, axis=(0, 2)))", [(3, 2, 4)]),
                   ("np.gradient(a, np.array([0.0, 0.5, 1.5, 1.75, 3.0]))", [(5,)]),
                   ("np.gradient(a, [0.0, 1.0, 3.0, 3.5], edge_order=2)", [(4,)])))
defjvp(np.gradient,
       lambda g, out, f, varargs, axis=None, edge_order=1:
           gradient_tree(g, f, varargs, axis, edge_order, False))

# --- choose -----------------------------------------------------------------------------------
defvjp(np.choose, None,
       lambda g, out, a, choices, mode="raise": unchoose(g, a, choices, mode),
       None, name="choose", sequences=("choices",), linear=("choices",), family=_F,
       derivation="linear in the choices: each element's cotangent to the choice it was "
       "read from, summed over the axes that choice was broadcast along",
       test_cases=(("np.choose(np.array([0, 2, 1, 0]), [a, b, c])", [(4,), (4,), (4,)]),
                   ("np.choose(np.array([[0, 1, 1], [1, 0, 0]]), (a, b))", [(2, 3), (3,)]),
                   ("np.choose(np.array([0, 3, -1, 1]), [a, b], mode='clip')",
                    [(4,), (1,)]),
                   ("np.choose(np.array([0, 3, -1, 2]), [a, b, a * b], mode='wrap')",
                    [(4,), (4,)]),
                   ("np.choose(np.array([1, 0, 1]), a)", [(2, 3)]),
                   ("np.choose(np.array([1, 0, 1]), [a, 2.0])", [(3,)])))

# --- multi_dot --------------------------------------------------------------------------------
defvjp(np.linalg.multi_dot, lambda g, out, arrays: multi_dot_grad(g, arrays),
       name="multi_dot", sequences=("arrays",), family=_F,
       derivation="multilinear: factor i gets L^T G R^T (L, R the products of the factors "
       "before and after it; a 1-D first factor a row, a 1-D last one a column)",
       test_cases=(("np.linalg.multi_dot([a, b, c])", [(2, 3), (3, 4), (4, 2)]),
                   ("np.linalg.multi_dot([a, b, c, a.T])", [(3, 2), (2, 4), (4, 2)]),
                   ("np.linalg.multi_dot((a, b, c))", [(3,), (3, 4), (4,)]),
                   ("np.linalg.multi_dot([a, b])", [(4,), (4, 2)]),
                   ("np.linalg.multi_dot([a, b, a.T])", [(2, 3), (3, 3)])))
defjvp(np.linalg.multi_dot, lambda g, out, arrays: multi_dot_jvp(g, arrays))

# --- sliding_window_view ----------------------------------------------------------------------
_SWV = np.lib.stride_tricks.sliding_window_view
defvjp(_SWV, lambda g, out, x, window_shape, axis=None: unwindow(g, x, window_shape, axis),
       None, None, name="sliding_window_view", linear=("x",), view=True, family=_F,
       spelling="np.lib.stride_tricks.sliding_window_view(x, window_shape, axis)",
       params=(Param("x"), Param("window_shape"), Param("axis", None)),
       derivation="a view in which every window reads x: the windows' cotangents added back "
       "where each window sits (a scatter-add)",
       test_cases=(("np.lib.stride_tricks.sliding_window_view(a, 3)", [(6,)]),
                   ("np.lib.stride_tricks.sliding_window_view(a, (2, 3))", [(4, 5)]),
                   ("np.lib.stride_tricks.sliding_window_view(a, 2, axis=0)", [(4, 3)]),
                   ("np.lib.stride_tricks.sliding_window_view(a, (2, 2), axis=(1, 2))",
                    [(2, 4, 3)]),
                   ("np.lib.stride_tricks.sliding_window_view(a, (3, 2), axis=(-1, 0))",
                    [(4, 5)])))

# --- as_strided (and x.strides, which im2col code reads to call it) ----------------------------
_AS = np.lib.stride_tricks.as_strided
defnondiff(array_strides, name="strides", spelling="a.strides", params=(Param("a"),),
           family="query", test_cases=(("a * len(a.strides)", [(3, 4)]),))
defvjp(_AS, lambda g, out, x, shape=None, strides=None, subok=False, writeable=True:
       unstride(g, x, shape, strides), None, None, None, None,
       name="as_strided", linear=("x",), view=True, family=_F,
       spelling="np.lib.stride_tricks.as_strided(x, shape, strides, subok, writeable)",
       params=(Param("x"), Param("shape", None), Param("strides", None), Param("subok", False),
               Param("writeable", True)),
       derivation="a view in which each element reads one element of x (found through x's "
       "own strides): the cotangents added back to the elements they read (a scatter-add)",
       check=lambda x, shape=None, strides=None, subok=False, writeable=True:
       sg.strided_index(x, shape, strides),
       test_cases=(("np.lib.stride_tricks.as_strided(a, (3, 2), a.strides * 2)", [(4,)]),
                   ("np.lib.stride_tricks.as_strided(a, (2, 2, 2, 2), a.strides * 2)",
                    [(3, 3)])))
defjvp(_AS, lambda g, out, x, shape=None, strides=None, subok=False, writeable=True:
       restride(g, x, shape, strides))

# --- x.item() -------------------------------------------------------------------------------
defvjp(sg.array_item, lambda g, out, x, index=(): item_grad(g, x, index), None,
       name="item", spelling="array_item(x, index)", linear=("x",), family=_F,
       derivation="one element as a Python number: g goes to that element (the number "
       "carries no derivative; generated code carries it beside the number)",
       test_cases=(("a.item() * a", [(1,)]), ("a * a.item(2)", [(4,)]),
                   ("a.item(1, 2) + a", [(2, 3)]), ("a.item((0, 1)) * a", [(2, 3)]),
                   ("np.tanh(a.item(-1)) * a", [(3,)])))

# --- the helpers as rows (second order) -------------------------------------------------------
_R = "runtime"
_THIRD = "the third derivative of np.linalg.multi_dot"
defvjp(sg.conv_embed, lambda g, out, ct, n_a, n_v, mode="full", corr=False:
       conv_crop(g, n_a, n_v, mode, corr), None, None, None, None,
       name="conv_embed", linear=("ct",), family=_R,
       derivation="a placement among zeros; its transpose is the slice")
defvjp(sg.conv_crop, lambda g, out, t, n_a, n_v, mode="full", corr=False:
       conv_embed(g, n_a, n_v, mode, corr), None, None, None, None,
       name="conv_crop", linear=("t",), family=_R,
       derivation="a slice; its transpose places it among zeros")
defvjp(sg.item_grad, lambda g, out, ct, x, index=(): array_item(g, index), None, None,
       name="item_grad", linear=("ct",), family=_R,
       derivation="one element placed among zeros; its transpose reads that element")
defvjp(sg.unwindow, lambda g, out, ct, x, window_shape, axis=None:
       np.lib.stride_tricks.sliding_window_view(g, window_shape, axis), None, None, None,
       name="unwindow", linear=("ct",), family=_R,
       derivation="the windows added back; its transpose is the sliding window view")
defvjp(sg.unstride, lambda g, out, ct, x, shape=None, strides=None:
       restride(g, x, shape, strides), None, None, None,
       name="unstride", linear=("ct",), family=_R,
       derivation="the strided reads added back; its transpose reads them again")
defjvp(sg.unstride, lambda g, out, ct, x, shape=None, strides=None:
       unstride(g, x, shape, strides))
defvjp(sg.restride, lambda g, out, t, x, shape=None, strides=None:
       unstride(g, x, shape, strides), None, None, None,
       name="restride", linear=("t",), family=_R,
       derivation="a gather of the elements as_strided reads; its transpose adds them back")
defjvp(sg.restride, lambda g, out, t, x, shape=None, strides=None:
       restride(g, x, shape, strides))
defvjp(sg.last_writes, lambda g, out, ct, x, index: last_writes(g, x, index), None, None,
       name="last_writes", linear=("ct",), family=_R,
       derivation="a mask (the writes a repeated index overwrote): its own transpose")
defnondiff(sg.put_index, name="put_index", family=_R,
           params=(Param("a"), Param("ind"), Param("mode", "raise")))
defnondiff(sg.diagonal_index, name="diagonal_index", family=_R,
           params=(Param("a"), Param("wrap", False)))
defnondiff(sg.along_axis_index, name="along_axis_index", family=_R,
           params=(Param("a"), Param("indices"), Param("axis")))
defnondiff(sg.mask_index, name="mask_index", family=_R, params=(Param("a"), Param("mask")))
defnondiff(sg.put_take, name="put_take", family=_R, params=(Param("v"), Param("ind")))
defnondiff(sg.place_take, name="place_take", family=_R,
           params=(Param("vals"), Param("mask"), Param("a")))
defnondiff(sg.putmask_take, name="putmask_take", family=_R,
           params=(Param("values"), Param("mask"), Param("a")))
defnondiff(sg.interp_basis, name="interp_basis", family=_R,
           params=(Param("x"), Param("xp"), Param("left", None), Param("right", None),
                   Param("period", None), Param("which", "i0")))
defvjp(sg.ungradient,
       lambda g, out, ct, f, varargs=(), axis=None, edge_order=1:
           gradient_tree(g, f, varargs, axis, edge_order, ct),
       None, None, None, None, name="ungradient", linear=("ct",), family=_R,
       derivation="np.gradient's VJP, linear in ct; its transpose is np.gradient")
defvjp(sg.gradient_tree,
       lambda g, out, t, f, varargs=(), axis=None, edge_order=1, tree=True:
           ungradient(g, f, varargs, axis, edge_order),
       None, None, None, None, None, name="gradient_tree", linear=("t",), family=_R,
       derivation="np.gradient, linear in t; its transpose is its VJP")
defvjp(sg.unchoose, lambda g, out, ct, a, choices, mode="raise": choose_tree(g, a, choices, mode),
       None, None, None, name="unchoose", linear=("ct",), family=_R,
       derivation="np.choose's VJP, linear in ct; its transpose is np.choose")
defvjp(sg.choose_tree, lambda g, out, t, a, choices, mode="raise": unchoose(g, a, choices, mode),
       None, None, None, name="choose_tree", linear=("t",), family=_R,
       derivation="np.choose of the pieces, linear in t; its transpose is its VJP")
defvjp(sg.multi_dot_grad, lambda g, out, ct, arrays: multi_dot_jvp(g, arrays),
       lambda g, out, ct, arrays: multi_dot_grad2(ct, arrays, g),
       name="multi_dot_grad", linear=("ct",), family=_R,
       derivation="multi_dot's VJP, linear in ct (its transpose is multi_dot's JVP); in the "
       "factors, the sum over pairs of factors with one replaced by g (multilinear)")
defjvp(sg.multi_dot_grad, None, lambda g, out, ct, arrays: multi_dot_grad2(ct, arrays, g))
defvjp(sg.multi_dot_jvp, lambda g, out, ts, arrays: multi_dot_grad(g, arrays),
       lambda g, out, ts, arrays: multi_dot_grad2(g, arrays, ts),
       name="multi_dot_jvp", linear=("ts",), family=_R,
       derivation="multi_dot's JVP, linear in ts (its transpose is multi_dot's VJP); in the "
       "factors, the sum over pairs of factors with one replaced by its ts")
defjvp(sg.multi_dot_jvp, None, lambda g, out, ts, arrays: multi_dot_jvp2(ts, arrays, g))
defvjp(sg.multi_dot_grad2, lambda g, out, ct, arrays, hs: multi_dot_jvp2(hs, arrays, g),
       lambda g, out, ct, arrays, hs: unsupported_derivative(_THIRD),
       lambda g, out, ct, arrays, hs: multi_dot_grad2(ct, arrays, g),
       name="multi_dot_grad2", linear=("ct", "hs"), family=_R,
       derivation="multi_dot's second derivative, bilinear in (ct, hs): <K, grad2(ct, A, H)> "
       "= <ct, jvp2(H, A, K)> = <H, grad2(ct, A, K)>; a third derivative is refused")
defjvp(sg.multi_dot_grad2, None, lambda g, out, ct, arrays, hs: unsupported_derivative(_THIRD),
       None)
defvjp(sg.multi_dot_jvp2, lambda g, out, ts, arrays, ss: multi_dot_grad2(g, arrays, ss),
       lambda g, out, ts, arrays, ss: unsupported_derivative(_THIRD),
       lambda g, out, ts, arrays, ss: multi_dot_grad2(g, arrays, ts),
       name="multi_dot_jvp2", linear=("ts", "ss"), family=_R,
       derivation="multi_dot's second tangent, bilinear in (ts, ss), symmetric; its "
       "transposes are multi_dot_grad2; a third derivative is refused")
defjvp(sg.multi_dot_jvp2, None, lambda g, out, ts, arrays, ss: unsupported_derivative(_THIRD),
       None)
