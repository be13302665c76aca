"""scipy.signal's convolutions: convolve, correlate (any number of dimensions), convolve2d,
correlate2d (boundary='fill', fillvalue=0) and fftconvolve (every axis) -- what CNNs written
from scratch call (``signal.correlate2d(x, k, "valid")`` forward, ``signal.convolve2d(g, k,
"full")`` backward) and autograd's ``scipy.signal.convolve``.

Like srcad/ops/spatial.py, scipy is optional: the rows are registered (`table.optional_rows`)
once the user's code imports scipy.signal; generated code spells them
``scipy_signal_convolve(...)`` (scipy's own call, srcad/runtime_scipy_signal.py). Each is
bilinear. With G the output's cotangent placed in the 'full' output (`sig_embed`):

    convolve(a, v)    da = correlate(G, v, 'valid')     dv = correlate(G, a, 'valid')
    correlate(a, v)   da = convolve(G, v, 'valid')      dv = flip(correlate(G, a, 'valid'))

(correlate(a, v) is convolve(a, flip(v)); the 'same' output of correlate2d sits elsewhere in
the full one than the others': `sig_embed`'s corr2d). The rules are these rows again, so the
second derivative is theirs; the JVPs are the op on one tangent. Another boundary, a
fillvalue, fftconvolve over some axes, or complex inputs are refused (the rows' checks).
"""

import numpy as np

from .. import runtime_scipy_signal as rss
from ..runtime_scipy_signal import (
    scipy_signal_convolve,
    scipy_signal_convolve2d,
    scipy_signal_correlate,
    scipy_signal_correlate2d,
    scipy_signal_fftconvolve,
    sig_crop,
    sig_embed,
)
from .table import Param, defjvp, defvjp, optional_rows

_F = "scipy.signal"
_SHAPES = ([(5,), (3,)], [(3,), (5,)], [(4, 5), (2, 3)], [(3, 4), (3, 2)])
_MODES = ("OP(a, b)", "OP(a, b, 'same')", "OP(a, b, mode='valid')")
_CONV = "bilinear: da = correlate(G, v, 'valid'), dv = correlate(G, a, 'valid')"
_CORR = ("correlate(a, v) = convolve(a, flip(v)): da = convolve(G, v, 'valid'), "
         "dv = flip(correlate(G, a, 'valid'))")
_G = " (G: the cotangent placed in the 'full' output)"


def _cases(shapes=_SHAPES):
    return tuple((m, s) for m in _MODES for s in shapes)


def _register_rows() -> None:
    """The rows (run by `table.optional_rows`, once scipy.signal is imported)."""
    import scipy.signal as sig  # (an optional library: imported only here)

    nd = (Param("in1"), Param("in2"), Param("mode", "full"), Param("method", "auto"))
    two = (Param("in1"), Param("in2"), Param("mode", "full"), Param("boundary", "fill"),
           Param("fillvalue", 0))
    fft = (Param("in1"), Param("in2"), Param("mode", "full"), Param("axes", None))
    meta = {"family": _F, "linear": ("in1", "in2"), "dtypes": ("float64",)}

    defvjp(sig.convolve,
           lambda g, out, in1, in2, mode="full", method="auto": scipy_signal_correlate(
               sig_embed(g, np.shape(in1), np.shape(in2), mode, False), in2, "valid"),
           lambda g, out, in1, in2, mode="full", method="auto": scipy_signal_correlate(
               sig_embed(g, np.shape(in1), np.shape(in2), mode, False), in1, "valid"),
           None, None, name="scipy_signal_convolve", aliases=(rss.scipy_signal_convolve,),
           params=nd, spelling="scipy_signal_convolve(in1, in2, mode, method)",
           check=rss.sig_check, derivation=_CONV + _G, test_cases=_cases(), **meta)
    defjvp(sig.convolve,
           lambda g, out, in1, in2, mode="full", method="auto":
               scipy_signal_convolve(g, in2, mode, method),
           lambda g, out, in1, in2, mode="full", method="auto":
               scipy_signal_convolve(in1, g, mode, method), None, None)

    defvjp(sig.correlate,
           lambda g, out, in1, in2, mode="full", method="auto": scipy_signal_convolve(
               sig_embed(g, np.shape(in1), np.shape(in2), mode, False), in2, "valid"),
           lambda g, out, in1, in2, mode="full", method="auto": np.flip(scipy_signal_correlate(
               sig_embed(g, np.shape(in1), np.shape(in2), mode, False), in1, "valid")),
           None, None, name="scipy_signal_correlate", aliases=(rss.scipy_signal_correlate,),
           params=nd, spelling="scipy_signal_correlate(in1, in2, mode, method)",
           check=rss.sig_check, derivation=_CORR + _G, test_cases=_cases(), **meta)
    defjvp(sig.correlate,
           lambda g, out, in1, in2, mode="full", method="auto":
               scipy_signal_correlate(g, in2, mode, method),
           lambda g, out, in1, in2, mode="full", method="auto":
               scipy_signal_correlate(in1, g, mode, method), None, None)

    defvjp(sig.convolve2d,
           lambda g, out, in1, in2, mode="full", boundary="fill", fillvalue=0:
               scipy_signal_correlate(
                   sig_embed(g, np.shape(in1), np.shape(in2), mode, False), in2, "valid"),
           lambda g, out, in1, in2, mode="full", boundary="fill", fillvalue=0:
               scipy_signal_correlate(
                   sig_embed(g, np.shape(in1), np.shape(in2), mode, False), in1, "valid"),
           None, None, None, name="scipy_signal_convolve2d",
           aliases=(rss.scipy_signal_convolve2d,), params=two,
           spelling="scipy_signal_convolve2d(in1, in2, mode, boundary, fillvalue)",
           check=rss.sig_check2d, derivation=_CONV + _G, test_cases=_cases(_SHAPES[2:]),
           **meta)
    defjvp(sig.convolve2d,
           lambda g, out, in1, in2, mode="full", boundary="fill", fillvalue=0:
               scipy_signal_convolve2d(g, in2, mode, boundary, fillvalue),
           lambda g, out, in1, in2, mode="full", boundary="fill", fillvalue=0:
               scipy_signal_convolve2d(in1, g, mode, boundary, fillvalue), None, None, None)

    defvjp(sig.correlate2d,
           lambda g, out, in1, in2, mode="full", boundary="fill", fillvalue=0:
               scipy_signal_convolve(
                   sig_embed(g, np.shape(in1), np.shape(in2), mode, True), in2, "valid"),
           lambda g, out, in1, in2, mode="full", boundary="fill", fillvalue=0:
               np.flip(scipy_signal_correlate(
                   sig_embed(g, np.shape(in1), np.shape(in2), mode, True), in1, "valid")),
           None, None, None, name="scipy_signal_correlate2d",
           aliases=(rss.scipy_signal_correlate2d,), params=two,
           spelling="scipy_signal_correlate2d(in1, in2, mode, boundary, fillvalue)",
           check=rss.sig_check2d, derivation=_CORR + _G + "; its 'same' output is centred "
           "the other way", test_cases=_cases(_SHAPES[2:]), **meta)
    defjvp(sig.correlate2d,
           lambda g, out, in1, in2, mode="full", boundary="fill", fillvalue=0:
               scipy_signal_correlate2d(g, in2, mode, boundary, fillvalue),
           lambda g, out, in1, in2, mode="full", boundary="fill", fillvalue=0:
               scipy_signal_correlate2d(in1, g, mode, boundary, fillvalue), None, None, None)

    defvjp(sig.fftconvolve,
           lambda g, out, in1, in2, mode="full", axes=None: scipy_signal_correlate(
               sig_embed(g, np.shape(in1), np.shape(in2), mode, False), in2, "valid"),
           lambda g, out, in1, in2, mode="full", axes=None: scipy_signal_correlate(
               sig_embed(g, np.shape(in1), np.shape(in2), mode, False), in1, "valid"),
           None, None, name="scipy_signal_fftconvolve",
           aliases=(rss.scipy_signal_fftconvolve,), params=fft,
           spelling="scipy_signal_fftconvolve(in1, in2, mode, axes)", check=rss.sig_check_fft,
           derivation=_CONV + _G + " (the rules convolve directly)",
           test_cases=_cases(), **meta)
    defjvp(sig.fftconvolve,
           lambda g, out, in1, in2, mode="full", axes=None:
               scipy_signal_fftconvolve(g, in2, mode, axes),
           lambda g, out, in1, in2, mode="full", axes=None:
               scipy_signal_fftconvolve(in1, g, mode, axes), None, None)

    # the placement helpers as rows (second order): each other's transposes
    defvjp(rss.sig_embed, lambda g, out, ct, shape_a, shape_v, mode="full", corr2d=False:
           sig_crop(g, shape_a, shape_v, mode, corr2d), None, None, None, None,
           name="sig_embed", linear=("ct",), family=_F,
           derivation="a placement among zeros; its transpose is the slice",
           test_cases=(("OP(a, (4, 5), (2, 3), 'same')", [(4, 5)]),
                       ("OP(a, (4, 5), (2, 3), 'same', True)", [(4, 5)]),
                       ("OP(a, (3,), (5,), 'valid')", [(3,)]), ("OP(a, (3,), (2,))", [(4,)])))
    defvjp(rss.sig_crop, lambda g, out, t, shape_a, shape_v, mode="full", corr2d=False:
           sig_embed(g, shape_a, shape_v, mode, corr2d), None, None, None, None,
           name="sig_crop", linear=("t",), family=_F,
           derivation="a slice; its transpose places it among zeros",
           test_cases=(("OP(a, (4, 5), (2, 3), 'same')", [(5, 7)]),
                       ("OP(a, (4, 5), (2, 3), 'same', True)", [(5, 7)]),
                       ("OP(a, (3,), (5,), 'valid')", [(7,)]), ("OP(a, (3,), (2,))", [(4,)])))


optional_rows("scipy.signal", _register_rows, helpers=rss.__name__)
