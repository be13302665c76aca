"""scipy.signal's convolutions in differentiated code (srcad/ops/scipy_signal.py): a CNN
layer written from scratch (``signal.correlate2d(x, k, "valid")`` per channel pair, as the
popular tutorials write it), and each function in each mode against central differences, in
source mode (fused too) and tape mode, first and second order. Before: each was refused
("`signal.correlate2d` has no derivative rule")."""

from __future__ import annotations

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error

signal = pytest.importorskip("scipy.signal")

_R = np.random.default_rng(5)


class Convolutional:
    """A from-scratch conv layer: depth kernels over the input's channels."""

    def __init__(self, kernels, biases):
        self.kernels, self.biases = kernels, biases

    def forward(self, x):
        depth, channels = self.kernels.shape[:2]
        out = np.copy(self.biases)
        for i in range(depth):
            for j in range(channels):
                out[i] += signal.correlate2d(x[j], self.kernels[i, j], "valid")
        return out


def cnn_loss(x, kernels, biases):
    layer = Convolutional(kernels, biases)
    h = np.tanh(layer.forward(x))
    return np.sum(h ** 2)


def conv_layer_case():
    x = _R.normal(size=(2, 5, 6))
    kernels = _R.normal(size=(3, 2, 2, 3)) * 0.5
    biases = _R.normal(size=(3, 4, 4)) * 0.1
    return cnn_loss, (x, kernels, biases)


def _case(fn, *shapes):
    return fn, tuple(_R.normal(size=s) for s in shapes)


CASES = {
    "cnn layer": conv_layer_case(),
    "convolve2d full": _case(lambda a, k: np.sum(np.sin(signal.convolve2d(a, k))), (4, 5),
                             (2, 3)),
    "convolve2d same": _case(lambda a, k: np.sum(signal.convolve2d(a, k, "same") ** 2), (4, 5),
                             (2, 2)),
    "correlate2d same even": _case(lambda a, k: np.sum(signal.correlate2d(a, k, mode="same")
                                                       ** 2), (5, 4), (2, 3)),
    "correlate2d valid": _case(lambda a, k: np.sum(np.tanh(signal.correlate2d(a, k, "valid"))),
                               (5, 6), (3, 2)),
    "convolve 1-d valid, kernel longer": _case(
        lambda a, k: np.sum(signal.convolve(a, k, "valid") ** 2), (3,), (6,)),
    "correlate 3-d same": _case(lambda a, k: np.sum(signal.correlate(a, k, "same") ** 3),
                                (3, 4, 3), (2, 2, 2)),
    "fftconvolve full": _case(lambda a, k: np.sum(signal.fftconvolve(a, k) ** 2), (4, 5),
                              (3, 2)),
}


@pytest.mark.parametrize("opts", [{}, {"fuse": True}, {"mode": "tape"}],
                         ids=["source", "fused", "tape"])
@pytest.mark.parametrize("name", list(CASES))
def test_convolutions(name, opts):
    fn, args = CASES[name]
    wrt = tuple(range(len(args)))
    value, grads = srcad.value_and_grad(fn, wrt=wrt, **opts)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    for g, n in zip(grads, numerical_grad(fn, args, wrt=wrt, h=1e-5)):
        assert rel_error(g, n) < 1e-6, name


@pytest.mark.parametrize("name", ["convolve2d same", "correlate2d same even",
                                  "correlate 3-d same"])
def test_second_order(name):
    """A Hessian-vector product (forward over reverse) against differences of the
    gradient."""
    fn, (a, k) = CASES[name]
    u = _R.normal(size=a.shape)
    _, hvp = srcad.jvp(srcad.grad(fn), (a, k), (u, np.zeros_like(k)))
    g = srcad.grad(fn)
    eps = 1e-5
    want = (g(a + eps * u, k) - g(a - eps * u, k)) / (2 * eps)
    assert rel_error(hvp, want) < 1e-6


def wrapped_boundary(a, k):
    return np.sum(signal.convolve2d(a, k, boundary="wrap") ** 2)


def test_another_boundary_is_refused_at_the_line():
    with pytest.raises(srcad.SrcadError, match="boundary='wrap'") as e:
        srcad.grad(wrapped_boundary)(_R.normal(size=(4, 4)), _R.normal(size=(2, 2)))
    assert e.value.filename == __file__
