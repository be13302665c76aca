"""The tape's value: a `Tensor` wraps a float array (or scalar) that tape mode follows.

Input: a value the user's function computes with, and the `Tape` it records onto
(srcad/tape.py). Output: a `Tensor` that behaves like the value under numpy and Python --
numpy calls reach `Tape.apply` through ``__array_ufunc__`` / ``__array_function__``,
operators and methods (``x @ W``, ``x.sum(axis=1)``, ``x.T``, ``x[i] = v``, ``x += t``) through
the Tensor's own dunders, mapped as source mode's normaliser maps them -- and that refuses,
with a clear `SrcadError`, what would silently lose its gradient (``float(t)`` stored into a
plain array, ``out=``, a differentiable value written in place into a plain array).
`_unwrap` and `_has_tensor` see through Tensors inside lists, tuples, dicts and the tape's
containers (srcad/tape_containers.py).

Before/after (what one operator does, x a Tensor):
    h = x @ W        x.__matmul__(W) -> tape.apply(np.matmul, (x, W), {}, operator.matmul)
                     h = Tensor(x.value @ W), and the tape holds Entry(matmul, {x1: x, x2: W}, h)
"""

from __future__ import annotations

import dis
import operator
import sys

import numpy as np

from . import runtime
from .errors import SrcadError
from .interpret import check_inplace
from .ops import table
from .runtime_signal import INPLACE_WRITERS, inplace_parts
from .tape_containers import CONTAINERS, TensorDict, raw_items


class Tensor:
    """A float value the tape follows."""

    __slots__ = ("value", "tape", "view")
    __array_priority__ = 1000

    def __init__(self, value, tape):
        self.value = value
        self.tape = tape
        self.view = None  # (base Tensor, kind, arg) while this value is a view of the base

    # numpy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        if method != "__call__" and out is None and table.lookup(getattr(ufunc, method)):
            return self.tape.apply(getattr(ufunc, method), inputs, kwargs)  # np.add.reduce
        if method != "__call__" or (out is not None and not (
                len(out) == 1 and out[0] is inputs[0] and isinstance(inputs[0], np.ndarray))):
            raise SrcadError(f"tape mode: `{ufunc.__name__}.{method}` / out= is not "
                             f"differentiable", hint="call the ufunc directly, without out=")
        # `a += t` with `a` a plain array: a new value that Python binds to `a` (source mode's
        # `a = a + t`), the array itself unchanged -- unless `a` is a view of another array,
        # which numpy would change and the tape cannot
        if out is not None and isinstance(out[0], np.ndarray) and (
                out[0].base is not None or sys.getrefcount(out[0]) > _LONE_REFS):
            # a plain array with a view or another name: numpy changes what they see
            raise SrcadError(
                f"tape mode: `{ufunc.__name__}` writes a differentiable value in place into a "
                f"plain array; numpy changes it (and its views and aliases), which the tape "
                f"cannot follow",
                hint="make the buffer with np.zeros_like(x) of a differentiable x, or build "
                "the result with np.stack / np.concatenate, or use mode='source'")
        py = _PY.get(ufunc)
        return self.tape.apply(ufunc, inputs, kwargs, py)

    def __array_function__(self, func, types_, args, kwargs):
        if func in INPLACE_WRITERS:  # np.put / np.copyto / np.fill_diagonal: x[index] = value
            return _write_in_place(func, args, kwargs)
        return self.tape.apply(func, args, kwargs)

    # attributes
    shape = property(lambda self: np.shape(self.value))
    ndim = property(lambda self: np.ndim(self.value))
    size = property(lambda self: np.size(self.value))
    dtype = property(lambda self: np.result_type(self.value))
    T = property(lambda self: self.tape.apply(np.transpose, (self,), {}))

    def __len__(self):
        return len(self.value)

    def __iter__(self):
        for i in range(len(self.value)):
            yield self.tape.apply(operator.getitem, (self, i), {})

    def __bool__(self):
        return bool(self.value)

    def __float__(self):
        # float(t), math.sqrt(t): source mode runs them on the value where check_opaque has
        # made sure the gradient does not need their result (and refuses them otherwise)
        if _called(sys._getframe(1)):
            return float(self.value)
        # numpy calls this to store a value into a plain array (`out[i] = t`): the gradient
        # would be silently wrong
        raise SrcadError(
            "tape mode: a differentiable value is being turned into a plain float (float(x), "
            "or `a[i] = x` into an array the tape does not follow), which loses its gradient",
            hint="build the array from differentiable values (np.stack, np.concatenate), or "
            "use mode='source', which differentiates `a[i] = x`")

    def __array__(self, dtype=None, copy=None):
        # numpy wants a plain array (`a[i] = t` into an array the tape does not follow): the
        # value would lose its gradient
        raise SrcadError(
            "tape mode: a differentiable value is being stored into a plain array (`a[i] = x`), "
            "which loses its gradient",
            hint="make the array with np.zeros_like(x) of a differentiable x, or build it with "
            "np.stack / np.concatenate, or use mode='source', which differentiates `a[i] = x`")

    def __index__(self):
        return operator.index(self.value)

    def __int__(self):  # int(t): no derivative (a row with none, as in source mode)
        return int(self.value)

    def __round__(self, ndigits=None):
        return round(self.value, ndigits)

    def __repr__(self):
        return f"Tensor({self.value!r})"

    def __str__(self):
        return str(self.value)

    def __format__(self, spec):
        return format(self.value, spec)

    def __getattr__(self, attr):
        # an attribute or method with no rule (x.itemsize, x.tolist()): source mode runs it on
        # the value once check_opaque has made sure the gradient does not need it
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.value, attr)

    def __getitem__(self, index):
        return self.tape.apply(operator.getitem, (self, index), {})

    def __setitem__(self, index, value):
        """x[i] = v, copy on write as in source mode: the Tensor the user's name holds takes
        the new value, and the tape's earlier references move to a Tensor for the old one."""
        self.tape.setitem(self, index, value)

    # methods, as source mode's normaliser maps them
    def item(self, *index):
        return self.tape.apply(runtime.array_item, (self, index), {})

    def sum(self, *a, **k):
        return self.tape.apply(np.sum, (self, *a), k)

    def mean(self, *a, **k):
        return self.tape.apply(np.mean, (self, *a), k)

    def max(self, *a, **k):
        return self.tape.apply(np.max, (self, *a), k)

    def min(self, *a, **k):
        return self.tape.apply(np.min, (self, *a), k)

    def prod(self, *a, **k):
        return self.tape.apply(np.prod, (self, *a), k)

    def var(self, *a, **k):
        return self.tape.apply(np.var, (self, *a), k)

    def std(self, *a, **k):
        return self.tape.apply(np.std, (self, *a), k)

    def cumsum(self, *a, **k):
        return self.tape.apply(np.cumsum, (self, *a), k)

    def cumprod(self, *a, **k):
        return self.tape.apply(np.cumprod, (self, *a), k)

    def trace(self, *a, **k):
        return self.tape.apply(np.trace, (self, *a), k)

    def diagonal(self, *a, **k):
        return self.tape.apply(np.diagonal, (self, *a), k)

    def repeat(self, *a, **k):
        return self.tape.apply(np.repeat, (self, *a), k)

    def take(self, *a, **k):
        return self.tape.apply(np.take, (self, *a), k)

    def flatten(self):
        return self.tape.apply(runtime.flatten, (self,), {})

    def reshape(self, *shape, **k):
        shape = shape[0] if len(shape) == 1 else shape
        return self.tape.apply(np.reshape, (self, shape), k)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 else (axes or None)
        return self.tape.apply(np.transpose, (self,), {} if axes is None else {"axes": axes})

    def swapaxes(self, a, b):
        return self.tape.apply(np.swapaxes, (self, a, b), {})

    def squeeze(self, *a, **k):
        return self.tape.apply(np.squeeze, (self, *a), k)

    def ravel(self):
        return self.tape.apply(np.ravel, (self,), {})

    def copy(self):
        return self.tape.apply(np.copy, (self,), {})

    def dot(self, other):
        return self.tape.apply(np.dot, (self, other), {})

    def clip(self, *a, **k):
        return self.tape.apply(np.clip, (self, *a), k)

    def astype(self, dtype, copy=True):
        return self.tape.apply(runtime.astype if copy else runtime.astype_shared, (self, dtype),
                               {})

    def argmax(self, *a, **k):
        return np.argmax(self.value, *a, **k)

    def argmin(self, *a, **k):
        return np.argmin(self.value, *a, **k)


_CALLS = {dis.opmap[n] for n in ("CALL", "PRECALL", "CALL_FUNCTION", "CALL_METHOD",
                                  "CALL_FUNCTION_KW", "CALL_FUNCTION_EX", "CALL_KW")
          if n in dis.opmap}


def _called(frame) -> bool:
    """Is `frame` (the user's code) at a call -- float(t) -- rather than a store (a[i] = t)?"""
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] in _CALLS


def _write_in_place(func, args, kwargs):
    """``np.put(t, ind, v)``, ``np.copyto(t, src)``, ``np.fill_diagonal(t, val)``: the write
    ``t[index] = value`` as source mode lowers it (frontend/pylower.py), on the tape (copy on
    write into the Tensor the user's name holds). Into a plain array, a differentiable value
    is refused (numpy would store a plain number)."""
    plain = [a.value if isinstance(a, Tensor) else a for a in args]
    plain_kw = {k: v.value if isinstance(v, Tensor) else v for k, v in kwargs.items()}
    _, index, _ = inplace_parts(func, plain, plain_kw)  # (from the values: no gradient)
    bound_target, _, value = inplace_parts(func, args, kwargs)
    if func is np.put and isinstance(value, Tensor):
        value = value.tape.apply(np.ravel, (value,), {})
    if not isinstance(bound_target, Tensor):
        raise SrcadError(
            f"tape mode: `np.{func.__name__}` writes a differentiable value into a plain "
            f"array, which loses its gradient",
            hint="make the array with np.zeros_like(x) of a differentiable x, or use "
            "mode='source', which differentiates the write")
    bound_target.tape.setitem(bound_target, index, value)


class _RefProbe:
    """Measures how many references numpy's in-place call path itself holds to `a` in
    `a += t` (t overriding the ufunc): one more means another name or a view holds `a`."""

    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        self.refs = sys.getrefcount(out[0])
        return 0.0


def _lone_refs() -> int:
    probe = _RefProbe()
    a = np.zeros(1)
    a += probe
    return probe.refs


_LONE_REFS = _lone_refs()


_PY = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
       np.true_divide: operator.truediv, np.power: operator.pow, np.matmul: operator.matmul,
       np.less: operator.lt, np.less_equal: operator.le, np.greater: operator.gt,
       np.greater_equal: operator.ge, np.equal: operator.eq, np.not_equal: operator.ne,
       operator.floordiv: operator.floordiv, operator.mod: operator.mod}


def _binary(fn, reflected=False):
    # an operator computes as Python's operator does on the values, as source mode's
    # generated `x ** 3` does: numpy scalars use their own scalar math, not the ufunc
    py = _PY[fn]
    if reflected:
        return lambda self, other: self.tape.apply(fn, (other, self), {}, py)
    return lambda self, other: self.tape.apply(fn, (self, other), {}, py)


def _inplace(fn):
    # `x += t`: numpy writes into an array (its aliases and views see it, its base too),
    # and rebinds a scalar -- source mode's `x = x + t` plus what propagate_write rebuilds
    py = _PY[fn]

    def op(self, other):
        new = self.tape.apply(fn, (self, other), {}, py)
        check_inplace(self.value, new.value if isinstance(new, Tensor) else new)
        if ((self.view is not None or isinstance(self.value, np.ndarray))
                and isinstance(new, Tensor) and np.shape(new.value) == np.shape(self.value)):
            self.tape.write(self, lambda old: new)
            return self
        return new

    return op


for _name, _fn in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.true_divide), ("pow", np.power), ("matmul", np.matmul)]:
    setattr(Tensor, f"__{_name}__", _binary(_fn))
    setattr(Tensor, f"__r{_name}__", _binary(_fn, reflected=True))
    setattr(Tensor, f"__i{_name}__", _inplace(_fn))
for _name, _fn in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal),
                   ("floordiv", operator.floordiv), ("mod", operator.mod)]:
    setattr(Tensor, f"__{_name}__", _binary(_fn))
Tensor.__rmod__ = _binary(operator.mod, reflected=True)  # (2.5 % x: a float remainder)
Tensor.__neg__ = lambda self: self.tape.apply(np.negative, (self,), {}, operator.neg)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: self.tape.apply(np.absolute, (self,), {})
Tensor.__hash__ = object.__hash__


def _unwrap(x):
    if isinstance(x, Tensor):
        return x.value
    if isinstance(x, TensorDict):
        return {k: _unwrap(dict.__getitem__(x, k)) for k in x.keys()}
    if isinstance(x, CONTAINERS):
        items = [_unwrap(v) for v in raw_items(x)]
        return tuple(items) if isinstance(x, tuple) else items
    if isinstance(x, list):
        return [_unwrap(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_unwrap(v) for v in x)
    if type(x) is dict:
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _has_tensor(x) -> bool:
    if isinstance(x, Tensor):
        return True
    if isinstance(x, CONTAINERS):
        return any(_has_tensor(v) for v in raw_items(x))
    if isinstance(x, (list, tuple)):
        return any(_has_tensor(v) for v in x)
    if type(x) is dict:
        return any(_has_tensor(v) for v in x.values())
    return False
