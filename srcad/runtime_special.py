"""scipy.special's functions under names generated code can import (``from srcad.runtime
import special_expit``), for the rows of srcad/ops/special.py.

scipy is optional: this module does not import it. Each ``special_<name>`` calls
``scipy.special.<name>`` itself, with the same arguments, so source mode (which calls these)
and tape mode (which calls the scipy function the row is registered for) compute the same
values bit for bit. scipy is imported at the first call -- by then the user's code has
imported it, or generated code that calls these was made from code that had.

`special_weights` is logsumexp's ``b=`` as an array shaped like ``a`` (ones where there is
none): a helper of the rules, itself a row (linear in ``b``), so that generated code calling it
can be differentiated again.
"""

from __future__ import annotations

import importlib

import numpy as np

from .runtime_arrays import _shape


def _special():
    """scipy.special (imported once, at the first call that needs it)."""
    return importlib.import_module("scipy.special")


def special_expit(x):
    return _special().expit(x)


def special_log_expit(x):
    return _special().log_expit(x)


def special_softplus(x):
    return _special().softplus(x)


def special_logit(x):
    return _special().logit(x)


def special_erf(x):
    return _special().erf(x)


def special_erfc(x):
    return _special().erfc(x)


def special_gammaln(x):
    return _special().gammaln(x)


def special_digamma(x):
    return _special().digamma(x)


def special_log1p(x):
    return _special().log1p(x)


def special_expm1(x):
    return _special().expm1(x)


def special_cbrt(x):
    return _special().cbrt(x)


def special_i0(x):
    return _special().i0(x)


def special_i1(x):
    return _special().i1(x)


def special_ndtri(x):
    return _special().ndtri(x)


def special_erfinv(x):
    return _special().erfinv(x)


def special_polygamma(n, x):
    return _special().polygamma(n, x)


def special_ndtr(x):
    return _special().ndtr(x)


def special_log_ndtr(x):
    return _special().log_ndtr(x)


def special_entr(x):
    return _special().entr(x)


def special_xlogy(x, y):
    return _special().xlogy(x, y)


def special_xlog1py(x, y):
    return _special().xlog1py(x, y)


def special_betaln(a, b):
    return _special().betaln(a, b)


def special_logsumexp(a, axis=None, b=None, keepdims=False):
    return _special().logsumexp(a, axis=axis, b=b, keepdims=keepdims)


def special_softmax(x, axis=None):
    return _special().softmax(x, axis=axis)


def special_log_softmax(x, axis=None):
    return _special().log_softmax(x, axis=axis)


def special_weights(b, a):
    """logsumexp's weights `b` broadcast to `a`'s shape; ones in a's dtype for None.
    Linear in `b`."""
    if b is None:
        dtype = np.result_type(a)
        return np.ones(_shape(a), dtype=dtype if np.issubdtype(dtype, np.inexact)
                       else np.float64)
    return np.broadcast_to(b, _shape(a))


NAMES = ("expit", "log_expit", "logit", "erf", "erfc", "gammaln", "digamma", "polygamma", "ndtr",
         "log_ndtr", "entr", "xlogy", "xlog1py", "betaln", "logsumexp", "softmax", "log_softmax",
         "log1p", "expm1", "cbrt", "i0", "i1", "ndtri", "erfinv", "softplus")

__all__ = [f"special_{n}" for n in NAMES] + ["special_weights"]
