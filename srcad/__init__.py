"""srcad: gradients of numpy functions by source transformation.

    >>> import numpy as np, srcad
    >>> def f(x):
    ...     return np.sum(np.tanh(x) ** 2)

The public API (pinned in DESIGN.md): grad, value_and_grad, vjp, source, defvjp, defjvp,
SrcadError, explain, and the harness in srcad.testing.
"""

from . import ops  # noqa: F401  (registers the op table)
from .api import explain, grad, hessian, jvp, source, value_and_grad, vjp
from .checkpoint import checkpoint
from .errors import SrcadError
from . import optim
from .io import load, save
from .ops import defjvp, defvjp

__version__ = "0.1.0"

__all__ = ["SrcadError", "checkpoint", "defjvp", "defvjp", "explain", "grad", "hessian", "jvp", "load", "optim", "save", "source", "value_and_grad", "vjp"]
