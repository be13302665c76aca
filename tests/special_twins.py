"""torch twins of srcad's scipy.special rows (srcad/ops/special.py), by row name: the oracle
of tests/test_scipy_special.py, and of the op-table grids (tests/test_forward.py's `_torch_op`
can answer ``special_twins.twin(op.name)`` for a row of the family "scipy.special").

Each twin takes what the scipy function takes (torch tensors, or torch._numpy arrays, which it
unwraps) and answers a tensor (a torch._numpy array when given those). Test-only: torch is never
imported under srcad/. Imports no scipy (test_forward.py must run without it).
"""

from __future__ import annotations

import math

import torch
import torch._numpy as tnp

S = torch.special


def _dims(x, axis):
    return tuple(range(x.ndim)) if axis is None else axis


def _logsumexp(a, axis=None, b=None, keepdims=False):
    w = a if b is None else a + torch.log(torch.as_tensor(b, dtype=a.dtype))
    return torch.logsumexp(w, dim=_dims(a, axis), keepdim=keepdims)


def _softmax(x, axis=None):
    if axis is None:  # over every element
        return torch.softmax(x.reshape(-1), 0).reshape(x.shape)
    return torch.softmax(x, dim=axis)


def _log_softmax(x, axis=None):
    if axis is None:
        return torch.log_softmax(x.reshape(-1), 0).reshape(x.shape)
    return torch.log_softmax(x, dim=axis)


def _pg(n, x):
    """polygamma(n, x) from the Hurwitz zeta function, (-1)^(n+1) n! zeta(n + 1, x): torch's
    own polygamma(1, .) (trigamma) is off by ~4e-10 relative in float64, scipy's and this are
    exact to rounding (checked against mpmath)."""
    if n == 0:
        return S.digamma(x)
    return (-1) ** (n + 1) * math.factorial(n) * S.zeta(float(n + 1), x)


class _Polygamma(torch.autograd.Function):
    """polygamma(n, x) with its derivative polygamma(n + 1, x) from `_pg`, in both modes."""

    @staticmethod
    def forward(n, x):
        return _pg(n, x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.n = inputs[0]
        ctx.save_for_backward(inputs[1])
        ctx.save_for_forward(inputs[1])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return None, g * _pg(ctx.n + 1, x)

    @staticmethod
    def jvp(ctx, _n_dot, x_dot):
        (x,) = ctx.saved_tensors
        return x_dot * _pg(ctx.n + 1, x)


TWINS = {
    "special_expit": S.expit,
    "special_log_expit": torch.nn.functional.logsigmoid,
    "special_softplus": torch.nn.functional.softplus,
    "special_logit": S.logit,
    "special_erf": S.erf,
    "special_erfc": S.erfc,
    "special_ndtr": S.ndtr,
    "special_log_ndtr": S.log_ndtr,
    "special_gammaln": S.gammaln,
    "special_digamma": lambda x: _Polygamma.apply(0, x),
    "special_polygamma": lambda n, x: _Polygamma.apply(int(n), x),
    "special_entr": S.entr,
    "special_xlogy": S.xlogy,
    "special_xlog1py": S.xlog1py,
    "special_betaln": lambda a, b: S.gammaln(a) + S.gammaln(b) - S.gammaln(a + b),
    "special_ndtri": S.ndtri,
    "special_erfinv": S.erfinv,
    "special_log1p": torch.log1p,
    "special_expm1": torch.expm1,
    "special_cbrt": lambda x: torch.sign(x) * torch.abs(x) ** (1.0 / 3.0),
    "special_i0": S.i0,
    "special_i1": S.i1,
    "special_logsumexp": _logsumexp,
    "special_softmax": _softmax,
    "special_log_softmax": _log_softmax,
}


def twin(name: str):
    """The torch twin of row `name`, taking and answering torch._numpy arrays or tensors."""
    fn = TWINS[name]

    def call(*args, **kwargs):
        wrapped = any(isinstance(v, tnp.ndarray) for v in (*args, *kwargs.values()))
        args = [v.tensor if isinstance(v, tnp.ndarray) else v for v in args]
        kwargs = {k: v.tensor if isinstance(v, tnp.ndarray) else v for k, v in kwargs.items()}
        out = fn(*args, **kwargs)
        return tnp.asarray(out) if wrapped else out

    return call
