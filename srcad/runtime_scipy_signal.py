"""scipy.signal's convolutions under names generated code can import (``from srcad.runtime
import scipy_signal_convolve``), and the placement helpers their rules use, for the rows of
srcad/ops/scipy_signal.py.

scipy is optional: this module does not import it until the first call. The wrappers call
scipy's own functions with the same arguments, so source mode (which calls them) and tape
mode (which calls the scipy functions the rows are registered for) compute the same values.

A convolution is bilinear; its cotangent is read in the 'full' output, where a 'same' or
'valid' output sits at these offsets on each axis (measured against scipy for every pair of
lengths up to 6): 'valid' from min(n, m) - 1, 'same' (of length n, in1's) from (m - 1) // 2
-- and from m // 2 for correlate2d, whose 'same' output is centred the other way.
`sig_embed` puts a cotangent there among zeros; `sig_crop`, its transpose, slices it out.

>>> sig_embed(np.array([1.0, 2.0]), (3,), (2,), "valid").tolist()
[0.0, 1.0, 2.0, 0.0]
"""

from __future__ import annotations

import importlib

import numpy as np

from .errors import SrcadError

__all__ = ["scipy_signal_convolve", "scipy_signal_correlate", "scipy_signal_convolve2d",
           "scipy_signal_correlate2d", "scipy_signal_fftconvolve", "sig_embed", "sig_crop",
           "sig_check", "sig_check2d", "sig_check_fft"]


def _sig():
    return importlib.import_module("scipy.signal")


def scipy_signal_convolve(in1, in2, mode="full", method="auto"):
    return _sig().convolve(in1, in2, mode, method)


def scipy_signal_correlate(in1, in2, mode="full", method="auto"):
    return _sig().correlate(in1, in2, mode, method)


def scipy_signal_convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    return _sig().convolve2d(in1, in2, mode, boundary, fillvalue)


def scipy_signal_correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    return _sig().correlate2d(in1, in2, mode, boundary, fillvalue)


def scipy_signal_fftconvolve(in1, in2, mode="full", axes=None):
    return _sig().fftconvolve(in1, in2, mode, axes)


def _slices(shape_a, shape_v, mode, corr2d):
    out = []
    for n, m in zip(shape_a, shape_v):
        if mode == "full":
            out.append(slice(0, n + m - 1))
        elif mode == "valid":
            lo, hi = min(n, m), max(n, m)
            out.append(slice(lo - 1, hi))
        elif mode == "same":
            start = m // 2 if corr2d else (m - 1) // 2
            out.append(slice(start, start + n))
        else:
            raise ValueError(f"mode must be 'full', 'same' or 'valid', got {mode!r}")
    return tuple(out)


def sig_embed(ct, shape_a, shape_v, mode="full", corr2d=False):
    """The 'full' output's shape with `ct` (a `mode` output's cotangent) at its place."""
    ct = np.asarray(ct)
    out = np.zeros(tuple(int(n) + int(m) - 1 for n, m in zip(shape_a, shape_v)), ct.dtype)
    out[_slices(shape_a, shape_v, mode, corr2d)] = ct
    return out


def sig_crop(t, shape_a, shape_v, mode="full", corr2d=False):
    """The transpose of `sig_embed`: the `mode` part of a 'full'-shaped array."""
    return np.asarray(t)[_slices(shape_a, shape_v, mode, corr2d)]


def _refuse(why: str):
    raise SrcadError(f"this scipy.signal convolution has no derivative rule in srcad here "
                     f"({why}): its rules cover real inputs, boundary='fill' with fillvalue=0, "
                     f"and every axis")


def _real(in1, in2):
    if np.iscomplexobj(in1) or np.iscomplexobj(in2):
        _refuse("complex inputs")


def sig_check(in1, in2, mode="full", method="auto"):
    """convolve / correlate: real inputs."""
    _real(in1, in2)


def sig_check2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """convolve2d / correlate2d: zeros filled in beyond the edges (no wrap or symmetric)."""
    _real(in1, in2)
    if boundary not in ("fill", "pad") or np.any(np.asarray(fillvalue) != 0):
        _refuse(f"boundary={boundary!r}, fillvalue={fillvalue!r}")


def sig_check_fft(in1, in2, mode="full", axes=None):
    """fftconvolve: over every axis."""
    _real(in1, in2)
    if axes is not None:
        _refuse(f"axes={axes!r}")
