"""The names normalisation gives a meaning of its own: array methods and attributes that are
op-table rows (``x.sum(axis=1)`` is ``np.sum(x, axis=1)``), builtins that are rows
(``abs``, ``len``, ``min``/``max`` of two), and the names generated code always has in scope.

Input: nothing (tables). Output: `METHODS` (method name -> how to bind the call to a row),
`ATTRIBUTES` (attribute name -> row), `_BUILTIN_OPS`, `RESERVED`.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import ir, runtime
from ..ops import runtime_ops

_BUILTIN_OPS = {abs: np.absolute, len: len, min: np.minimum, max: np.maximum,  # min/max of two
               float: runtime.to_float}


# names generated code always has in scope
RESERVED = {"np", "operator"} | set(runtime.__all__)


def _reduction_method(fn):
    def make(self_atom, args, kwargs):
        return fn, [self_atom, *args], kwargs

    return make


def _varargs_method(fn, pname):
    """x.reshape(3, 4) / x.reshape((3, 4)); x.transpose(1, 0) / x.transpose()."""

    def make(self_atom, args, kwargs):
        if len(args) > 1:
            args = [ir.Seq(tuple(args))]
        if args:
            kwargs = {pname: args[0], **kwargs}
        return fn, [self_atom], kwargs

    return make


def _simple_method(fn):
    def make(self_atom, args, kwargs):
        return fn, [self_atom, *args], kwargs

    return make


def _astype_method(self_atom, args, kwargs):
    """x.astype(dtype, copy=...): `copy=False` may share x's memory (a row marked a view,
    runtime.astype_shared); `copy=True` is the plain row."""
    copy = kwargs.pop("copy", None)
    shared = copy is not None and not (isinstance(copy, ir.Const) and copy.value)
    return (runtime.astype_shared if shared else runtime.astype), [self_atom, *args], kwargs


def _compress_method(self_atom, args, kwargs):
    """x.compress(condition, axis): np.compress(condition, x, axis) (x the second argument)."""
    if not args and "condition" in kwargs:
        kwargs = dict(kwargs)
        args = [kwargs.pop("condition")]
    return np.compress, [*args[:1], self_atom, *args[1:]], kwargs


def _copy_method(self_atom, args, kwargs):
    """x.copy(order='C'): ndarray's copy is C-ordered unless told (np.copy keeps x's
    layout, order 'K'), which a later reduction's order of adding follows."""
    if not args and "order" not in kwargs:
        kwargs = {**kwargs, "order": ir.Const("C", "'C'")}
    return np.copy, [self_atom, *args], kwargs


def _item_method(self_atom, args, kwargs):
    """x.item(), x.item(i), x.item(i, j), x.item((i, j)): one element, a Python number."""
    return runtime.array_item, [self_atom, ir.Seq(tuple(args), "tuple")], kwargs


METHODS = {
    "sum": _reduction_method(np.sum),
    "mean": _reduction_method(np.mean),
    "max": _reduction_method(np.max),
    "min": _reduction_method(np.min),
    "prod": _reduction_method(np.prod),
    "var": _reduction_method(np.var),
    "std": _reduction_method(np.std),
    "cumsum": _simple_method(np.cumsum),
    "cumprod": _simple_method(np.cumprod),
    "trace": _simple_method(np.trace),
    "round": _simple_method(np.round),  # (x.round(2): np.round's row, a zero derivative)
    "all": _reduction_method(np.all),  # (x.all(), x.any(axis=1): a bool, no derivative)
    "any": _reduction_method(np.any),
    "argsort": _simple_method(np.argsort),
    "diagonal": _simple_method(np.diagonal),
    "repeat": _simple_method(np.repeat),
    "take": _simple_method(np.take),
    "flatten": _simple_method(runtime.flatten),
    "argmax": _simple_method(np.argmax),
    "argmin": _simple_method(np.argmin),
    "reshape": _varargs_method(np.reshape, "shape"),
    "transpose": _varargs_method(np.transpose, "axes"),
    "swapaxes": _simple_method(np.swapaxes),
    "squeeze": _simple_method(np.squeeze),
    "ravel": _simple_method(np.ravel),
    "copy": _copy_method,
    "dot": _simple_method(np.dot),
    "clip": _simple_method(np.clip),
    "conj": _simple_method(np.conjugate),
    "conjugate": _simple_method(np.conjugate),
    "choose": _simple_method(np.choose),  # (x.choose(choices): x the indices)
    "compress": _compress_method,
    "ptp": _reduction_method(np.ptp),  # (numpy < 2)
    "astype": _astype_method,
    "item": _item_method,
    "pop": _simple_method(runtime_ops.stack_pop),
}


def _reflected_method(fn):
    """``x.__radd__(y)`` is ``y + x``: the row with the operands swapped."""

    def make(self_atom, args, kwargs):
        return fn, [*args, self_atom], kwargs

    return make


# the operators' dunder methods, called by name (``x.__mul__(y)``): each its operator's row
# (frontend/expressions.py's _BINOPS), the reflected ones with the operands swapped
_DUNDERS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
            "pow": np.power, "matmul": np.matmul}
METHODS.update({f"__{k}__": _simple_method(fn) for k, fn in _DUNDERS.items()})
METHODS.update({f"__r{k}__": _reflected_method(fn) for k, fn in _DUNDERS.items()})
METHODS.update({"__neg__": _simple_method(np.negative), "__pos__": _simple_method(np.positive),
                "__abs__": _simple_method(np.absolute),
                "__getitem__": _simple_method(operator.getitem)})

ATTRIBUTES = {"T": np.transpose, "shape": np.shape, "ndim": np.ndim, "size": np.size,
              "dtype": np.result_type, "flat": np.ravel,  # (x.flat: read, iterated, indexed)
              "real": np.real, "imag": np.imag,
              "strides": runtime.array_strides}
if hasattr(np, "matrix_transpose"):  # (numpy >= 2: x.mT, the last two axes swapped)
    ATTRIBUTES["mT"] = np.matrix_transpose  # (a layout, no derivative: as_strided)  # (a real array's: itself, and zeros)
