"""A bool output to `grad` (``return x < y``): its derivative is zero almost everywhere, so
the gradient is zeros shaped like each wrt argument, with one warning naming the user's line
(autograd returns 0 with a warning too). A comparison has no derivative where it jumps; the
gradient there is not defined, and zero is what every other point gives.

    srcad.grad(lambda x, y: x < y, wrt=(0, 1))(0.7, 1.8)  ->  (0.0, 0.0), UserWarning
"""

from __future__ import annotations

import warnings

import numpy as np

from .binding import _is_float
from .pipeline import Compiled


def is_bool_output(value) -> bool:
    """A Python bool, a numpy bool, or a bool array of one element."""
    if isinstance(value, (bool, np.bool_)):
        return True
    return isinstance(value, np.ndarray) and value.dtype == np.bool_ and value.size == 1


def zero_gradient(x):
    """Zeros shaped (and typed) like `x`, a pytree's of its structure; None for a leaf that
    carries no gradient (an int, a string), as `runtime.as_grad` gives."""
    if isinstance(x, dict):
        return {k: zero_gradient(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [zero_gradient(v) for v in x]
        return type(x)(*items) if hasattr(type(x), "_fields") else type(x)(items)
    if isinstance(x, float) and not isinstance(x, np.floating):
        return 0.0
    if not _is_float(x):
        return None
    if isinstance(x, np.generic):
        return x.dtype.type(0)
    return np.zeros_like(x)


def warn_bool_output(fn_ir, kind: str) -> None:
    """One warning, attributed to the user's return line."""
    warnings.warn_explicit(
        f"srcad.{kind}: {fn_ir.name} returns a bool, whose derivative is zero almost "
        f"everywhere: the gradient is zeros (return a float to differentiate a value)",
        UserWarning, fn_ir.filename, fn_ir.ret.line if fn_ir.ret is not None else
        fn_ir.first_line)


def zero_gradient_compiled(t, fn_ir) -> Compiled:
    """What `Transformed.compiled` holds for a bool output: a main that runs the function
    (for value_and_grad's value) and returns zeros for each wrt argument."""
    positions = [t.params.index(w) for w in t.wrt]
    fn, kind, single = t.fn, t.kind, t.single

    def main(*values):
        zeros = [zero_gradient(values[i]) for i in positions]
        grads = zeros[0] if single else tuple(zeros)
        return (fn(*values), grads) if kind == "value_and_grad" else grads

    warn_bool_output(fn_ir, kind)
    source = (f"# {fn_ir.name} returns a bool: its derivative is zero almost everywhere, so "
              f"srcad.{kind} returns zeros shaped like {', '.join(t.wrt)}\n")
    return Compiled(source=source, functions={"main": main}, saved=[],
                    namespace={"main": main}, roles={"main": "main"})
