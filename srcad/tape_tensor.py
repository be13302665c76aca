"""The tape's value: a `Tensor` wraps a float array (or scalar) that tape mode follows.

Input: a value the user's function computes with, and the `Tape` it records onto
(srcad/tape.py). Output: a `Tensor` that behaves like the value under numpy and Python --
numpy calls reach `Tape.apply` through ``__array_ufunc__`` / ``__array_function__``,
operators and methods (``x @ W``, ``x.sum(axis=1)``, ``x.T``, ``x[i] = v``, ``x += t``) through
the Tensor's own dunders, mapped as source mode's normaliser maps them -- and that refuses,
with a clear `SrcadError` at the user's line, what would silently lose its gradient (``t``
stored into an array the tape does not follow, given to a method of one, ``out=``). `Plain`
is how the tape shows traced code the arrays it does not follow (srcad/tape.py).
`_unwrap` and `_has_tensor` see through Tensors inside lists, tuples, dicts and the tape's
containers (srcad/tape_containers.py).

Before/after (what one operator does, x a Tensor):
    h = x @ W        x.__matmul__(W) -> tape.apply(np.matmul, (x, W), {}, operator.matmul)
                     h = Tensor(x.value @ W), and the tape holds Entry(matmul, {x1: x, x2: W}, h)
"""

from __future__ import annotations

import dis
import operator
import os
import sys

import numpy as np

from . import pyfuncs, runtime
from .errors import SrcadError, UnsupportedSyntaxError
from .frontend.opaque import is_library_module, writes_out
from .interpret import check_inplace
from .ops import table
from .pyfuncs import tolist
from .runtime_at import AT_FORMS
from .runtime_callbacks import eager_callbacks
from .runtime_signal import INPLACE_WRITERS, inplace_parts
from .tape_containers import CONTAINERS, TensorDict, raw_items


def _reshape_in_place(t, shape) -> None:
    """`h.shape = (2, 6)` of a Tensor that is no view and has none: numpy reshapes the array
    itself, so the Tensor the user's names hold becomes the reshape of its old value (source
    mode's `h = h.reshape(...)`, normalize.py `reshaped_in_place`); else refused."""
    if t.view is not None or any(v.view is not None and v.view[0] is t
                                 for v in t.tape.views.values()):
        _no_reshape_in_place()
    t.tape._replace(t, lambda old: t.tape.apply(np.reshape, (old, shape), {}))


def _no_reshape_in_place(attr: str = "shape"):
    """`h.shape = (2, 1)` / `h.dtype = ...`: numpy changes the array itself in place."""
    raise UnsupportedSyntaxError(
        f"`x.{attr} = ...` changes an array that gradients flow through in place",
        hint="make a new array: `x = x.reshape(2, 1)` (or `x = x.view(dtype)`)")


class Tensor:
    """A float value the tape follows."""

    __slots__ = ("value", "tape", "view", "held_in")
    __array_priority__ = 1000

    def __init__(self, value, tape):
        self.value = value
        self.tape = tape
        self.view = None  # (base Tensor, kind, arg) while this value is a view of the base
        # (container, key, the argument's leaf) for an item read from a followed container
        # (`W = p["W"]`): Python's name holds the container's own array, so a write into it
        # in place is a write into the container's item (`Tape.item_written`)
        self.held_in = None

    # numpy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        if method == "at" and ufunc in AT_FORMS and out is None and not kwargs:
            return write_at(ufunc, inputs)  # np.add.at(t, i, v): t[...] = add_at(t, i, v)
        if method != "__call__" and out is None and table.lookup(getattr(ufunc, method)):
            return self.tape.apply(getattr(ufunc, method), inputs, kwargs)  # np.add.reduce
        if method == "__call__" and out is not None and len(out) == 1 and \
                isinstance(out[0], Tensor) and table.lookup(ufunc) is not None:
            # np.exp(s, out=s), np.maximum(z, 0, out=a) into an array the tape follows:
            # source mode's `s[...] = np.exp(s)` (frontend/normalize.py), copy on write
            mask = kwargs.pop("where", True)
            if mask is True:
                return _into(out[0], self.tape.apply(ufunc, inputs, kwargs, _PY.get(ufunc)))
            # np.log(p, out=o, where=p > 0): source mode's `o[...] = np.where(m,
            # np.log(where_input(p, m)), o)`
            inputs = tuple(self.tape.apply(runtime.where_input, (a, mask), {})
                           if isinstance(a, Tensor) else a for a in inputs)
            value = self.tape.apply(ufunc, inputs, kwargs, _PY.get(ufunc))
            return _into(out[0], self.tape.apply(np.where, (mask, value, out[0]), {}))
        if method != "__call__" or (out is not None and not (
                len(out) == 1 and out[0] is inputs[0] and isinstance(inputs[0], np.ndarray))):
            raise user_error(f"tape mode: `{ufunc.__name__}.{method}` / out= is not "
                             f"differentiable", hint="call the ufunc directly, without out=")
        # `a += t` with `a` a plain array: a new value that Python binds to `a` (source mode's
        # `a = a + t`), the array itself unchanged -- unless `a` is a view of another array,
        # which numpy would change and the tape cannot
        if out is not None and isinstance(out[0], np.ndarray) and (
                sys.getrefcount(out[0]) > _LONE_REFS or _seen_elsewhere(out[0].base)):
            # a plain array with a view or another name: numpy changes what they see
            raise user_error(
                f"tape mode: `{ufunc.__name__}` writes a differentiable value in place into a "
                f"plain array; numpy changes it (and its views and aliases), which the tape "
                f"cannot follow",
                hint="copy it first (`a = np.copy(a)`: the tape follows writes into arrays "
                "the function makes -- np.zeros, np.zeros_like, np.array, np.copy), or build "
                "the result with np.stack / np.concatenate, or use mode='source'")
        if ufunc is _CLIP_UFUNC:  # plain.clip(t, ...): ndarray.clip calls numpy's ufunc
            return self.tape.apply(np.clip, inputs, kwargs)
        py = _PY.get(ufunc)
        return self.tape.apply(ufunc, inputs, kwargs, py)

    def __array_function__(self, func, types_, args, kwargs):
        if func in _EAGER:  # np.piecewise / np.apply_along_axis: numpy's loop, on the tape
            return _EAGER[func](self.tape.numpy_view(), *args, **kwargs)
        if func in INPLACE_WRITERS:  # np.put / np.copyto / np.place / ...: x[index] = value
            return _write_in_place(func, args, kwargs)
        if func is np.clip and len(args) == 4 and "out" not in kwargs:  # (out by position)
            args, kwargs = args[:3], {**kwargs, "out": args[3]}
        if "out" in kwargs and kwargs["out"] is None:  # (numpy's default: a new array)
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        if (func is np.clip or writes_out(func) and "where" not in kwargs) and \
                isinstance(kwargs.get("out"), Tensor):
            # np.clip(a, .., out=a), np.cumsum(a, out=c): the result written into `out`
            kwargs = dict(kwargs)
            out = kwargs.pop("out")
            return _into(out, self.tape.apply(func, args, kwargs))
        return self.tape.apply(func, args, kwargs)

    # attributes
    shape = property(lambda self: np.shape(self.value), lambda self, v: _reshape_in_place(self, v))
    ndim = property(lambda self: np.ndim(self.value))
    size = property(lambda self: np.size(self.value))
    dtype = property(lambda self: np.result_type(self.value),
                     lambda self, v: _no_reshape_in_place("dtype"))
    T = property(lambda self: self.tape.apply(np.transpose, (self,), {}))
    if hasattr(np, "matrix_transpose"):  # (numpy >= 2; frontend/methods.py ATTRIBUTES)
        mT = property(lambda self: self.tape.apply(np.matrix_transpose, (self,), {}))

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
        frame = sys._getframe(1)
        if _untraced_user_code(frame):
            # (the user's function the tape does not follow -- one picked from a dict at run
            # time: its float(t) or math.exp(t) would drop the gradient, silently)
            raise user_error(
                "tape mode: a differentiable value is turned into a plain float in a function "
                "the tape does not follow (one reached through a dict or another object at "
                "run time): its gradient would be lost",
                hint="call the function by its name, pass it as an argument, or use "
                "mode='source'")
        if _called(frame) or _formatted(frame):
            return float(self.value)
        # numpy calls this to store a value into a plain array (`out[i] = t`): the gradient
        # would be silently wrong
        raise _lost_error(sys._getframe(1), "turned into a plain float")

    def __array__(self, dtype=None, copy=None):
        # numpy wants a plain array: `a[i] = t` into an array the tape does not follow, or an
        # ndarray method given t (`a.dot(t)` of an array the tape does not see as `Plain`)
        raise _lost_error(sys._getframe(1), "turned into a plain array")

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
        if attr in _IN_PLACE and isinstance(self.value, np.ndarray):
            return lambda *a, **k: self._in_place(attr, a, k)
        return getattr(self.value, attr)

    def _in_place(self, name, args, kwargs):
        """`t.fill(v)`, `t.sort()`, `t.put(i, v)`: numpy changes the array in place, so as
        `t[i] = v` the tape writes a new value (copy on write) -- changing the value the
        tape's earlier entries read would change their gradients."""
        if name == "fill" and isinstance(args[0] if args else None, Tensor) and not kwargs:
            self.tape.write(self, lambda old: self.tape.apply(np.full_like, (old, args[0]), {}))
            return
        if name == "put":  # t.put(ind, v, mode): np.put's write
            renamed = {_PUT_METHOD_NAMES.get(k, k): v for k, v in kwargs.items()}
            _write_in_place(np.put, (self, *args), renamed)
            return
        if name in ("sort", "partition") and not _has_tensor(args) and not _has_tensor(kwargs):
            fn = np.sort if name == "sort" else np.partition  # (rows: the values move)
            self.tape.write(self, lambda old: self.tape.apply(fn, (old, *args), kwargs))
            return
        if _has_tensor(args) or _has_tensor(kwargs):
            raise user_error(f"tape mode: `.{name}()` would store a differentiable value into "
                             f"the array as a plain number, which loses its gradient",
                             hint="write it with an index (`a[i] = v`) or use mode='source'")

        def make(old):
            new = np.array(old.value, copy=True)
            getattr(new, name)(*args, **kwargs)
            return new

        self.tape.write(self, make)

    def __getitem__(self, index):
        return self.tape.apply(operator.getitem, (self, index), {})

    def __setitem__(self, index, value):
        """x[i] = v, copy on write as in source mode: the Tensor the user's name holds takes
        the new value, and the tape's earlier references move to a Tensor for the old one."""
        self.tape.setitem(self, index, value)

    # methods, as source mode's normaliser maps them
    def _method(self, fn, a, k):
        """`t.sum(..)` as `np.sum(t, ..)`; with `out=o` numpy's function itself, whose
        `__array_function__` writes the result into o (copy on write), as source mode's
        `o[...] = t.sum(..)` (frontend/normalize.py `_out_keyword_as_write`)."""
        if k.get("out", False) is None:
            k = {key: v for key, v in k.items() if key != "out"}
        if "out" in k:
            return fn(self, *a, **k)
        return self.tape.apply(fn, (self, *a), k)

    def item(self, *index):
        return self.tape.apply(runtime.array_item, (self, index), {})

    def sum(self, *a, **k):
        return self._method(np.sum, a, k)

    def mean(self, *a, **k):
        return self._method(np.mean, a, k)

    def max(self, *a, **k):
        return self._method(np.max, a, k)

    def min(self, *a, **k):
        return self._method(np.min, a, k)

    def prod(self, *a, **k):
        return self._method(np.prod, a, k)

    def var(self, *a, **k):
        return self._method(np.var, a, k)

    def std(self, *a, **k):
        return self._method(np.std, a, k)

    def cumsum(self, *a, **k):
        return self._method(np.cumsum, a, k)

    def cumprod(self, *a, **k):
        return self._method(np.cumprod, a, k)

    def trace(self, *a, **k):
        return self._method(np.trace, a, k)

    def diagonal(self, *a, **k):
        return self.tape.apply(np.diagonal, (self, *a), k)

    def repeat(self, *a, **k):
        return self.tape.apply(np.repeat, (self, *a), k)

    def take(self, *a, **k):
        return self._method(np.take, a, k)

    def flatten(self, order="C"):
        return self.tape.apply(runtime.flatten, (self, order), {})

    # x.flat (read: iterated, indexed) is np.ravel(x), x.tolist() srcad/pyfuncs.py's, as in
    # source mode (frontend/methods.py, frontend/pylevel.py)
    flat = property(lambda self: self.tape.flat(self))

    def tolist(self):
        return self.tape.scoped(tolist)(self)

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

    def ravel(self, order="C"):
        return self.tape.apply(np.ravel, (self,), {"order": order})

    def copy(self, order="C"):  # (ndarray's: C order unless told; np.copy keeps the layout)
        return self.tape.apply(np.copy, (self,), {"order": order})

    def __copy__(self):  # (copy.copy of an array: a new array, as ndarray's -- order 'K')
        return self.copy("K")

    def __deepcopy__(self, memo):  # (copy.deepcopy of an object holding it: its own copy)
        return self.copy("K")

    def dot(self, other, out=None):
        return self._method(np.dot, (other,), {"out": out})

    def clip(self, *a, **k):
        return self._method(np.clip, a, k)

    # the method forms of rows (frontend/methods.py's METHODS and ATTRIBUTES, as source mode)
    def conj(self):
        return self.tape.apply(np.conjugate, (self,), {})

    conjugate = conj

    def choose(self, choices, *a, **k):
        return self.tape.apply(np.choose, (self, choices, *a), k)

    def ptp(self, *a, **k):
        return self.tape.apply(np.ptp, (self, *a), k)

    def compress(self, condition, *a, **k):
        return self.tape.apply(np.compress, (condition, self, *a), k)

    real = property(lambda self: self.tape.apply(np.real, (self,), {}))
    imag = property(lambda self: self.tape.apply(np.imag, (self,), {}))

    def astype(self, dtype, copy=True):
        return self.tape.apply(runtime.astype if copy else runtime.astype_shared, (self, dtype),
                               {})

    def argmax(self, *a, **k):
        return np.argmax(self.value, *a, **k)

    def argsort(self, *a, **k):  # (an order: no derivative, as source mode's row)
        return np.argsort(self.value, *a, **k)

    def all(self, *a, **k):
        return np.all(self.value, *a, **k)

    def any(self, *a, **k):
        return np.any(self.value, *a, **k)

    def round(self, *a, **k):  # (x.round(2): np.round's row, a zero derivative)
        return self._method(np.round, a, k)

    def argmin(self, *a, **k):
        return np.argmin(self.value, *a, **k)


class Plain(np.ndarray):
    """A plain array the function reads (an argument not differentiated, a global), as its
    traced code sees it: numpy's own array -- a view of the caller's, so writes into it,
    its views and its aliases are numpy's -- whose `.dot` with a tape value goes to the tape.
    numpy's ndarray methods do not look for overrides in their arguments (`X.dot(W)` asks a
    Tensor W for a plain array through ``__array__``); of those that take an array, `dot` and
    `choose` have a derivative (`X * t`, `X @ t`, `X.clip(t)` are ufuncs and reach the Tensor's
    ``__array_ufunc__``). numpy keeps the subclass on views and results (`X[i].dot(W)`,
    `X.T.dot(d)`); `_unwrap` turns it back into ndarray before any numpy call the tape makes,
    so nothing the tape computes or returns holds one."""

    _srcad_plain = True

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        """A 0-d result numpy would give as a scalar (`X.sum()`, `np.clip(s, 0, 1)` of one) is
        the scalar, as for numpy's own array: numpy's scalar arithmetic rounds differently
        from its 0-d arrays' (`np.float32 ** np.float32` is not the array power bit for bit),
        so a 0-d Plain made the tape's values differ from Python's and source mode's."""
        if return_scalar:
            return arr.view(np.ndarray)[()]
        return super().__array_wrap__(arr, context)  # (numpy 1.26's takes no return_scalar)

    def dot(self, b, out=None):
        t = _first_tensor(b)
        if t is None:
            return np.ndarray.dot(self, _unwrap(b), out)
        if out is not None:
            raise user_error("tape mode: `a.dot(x, out=...)` writes a differentiable value "
                             "into `out` in place, which the tape does not follow",
                             hint="write `r = a.dot(x)` without out=")
        return t.tape.apply(np.dot, (self.view(np.ndarray), b), {})

    def choose(self, choices, out=None, mode="raise"):
        """`idx.choose([a, b])`: the indices plain, the choices differentiable (np.choose)."""
        t = _first_tensor(choices)
        if t is None:
            return np.ndarray.choose(self, _unwrap(choices), out, mode)
        if out is not None:
            raise user_error("tape mode: `a.choose(choices, out=...)` writes a differentiable "
                             "value into `out` in place, which the tape does not follow",
                             hint="write `r = a.choose(choices)` without out=")
        return t.tape.apply(np.choose, (self.view(np.ndarray), choices), {"mode": mode})


def plain_view(x):
    """`x` as traced code sees it: a `Plain` view of a numeric ndarray, a numpy Generator
    drawing from the same bit generator whose `normal`/`uniform`/`exponential` given Tensors
    draw as numpy computes them (`DrawsGenerator`), else `x`."""
    if type(x) is np.ndarray and x.dtype.kind in "biufc":
        return x.view(Plain)
    if type(x) is np.random.Generator:
        return DrawsGenerator(x.bit_generator)
    return x


class DrawsGenerator(np.random.Generator):
    """A Generator as tape mode shows one (on the same bit generator: one stream of
    numbers): a draw with differentiated parameters is `loc + scale * z` of its standard
    draw, numpy's own numbers (srcad/pyfuncs.py's, source mode's too)."""

    def normal(self, loc=0.0, scale=1.0, size=None):
        if _has_tensor((loc, scale)):
            return pyfuncs.generator_normal(self, loc, scale, size)
        return super().normal(loc, scale, size)

    def uniform(self, low=0.0, high=1.0, size=None):
        if _has_tensor((low, high)):
            return pyfuncs.generator_uniform(self, low, high, size)
        return super().uniform(low, high, size)

    def exponential(self, scale=1.0, size=None):
        if _has_tensor((scale,)):
            return pyfuncs.generator_exponential(self, scale, size)
        return super().exponential(scale, size)


def _first_tensor(x):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (list, tuple)):
        return next((t for t in map(_first_tensor, x) if t is not None), None)
    return None


def user_error(message, hint=None, cls=SrcadError):
    """A refusal at the user's line: the innermost frame running code outside srcad."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_SRCAD_DIR):
        frame = frame.f_back
    if frame is None:
        return cls(message, hint=hint)
    return cls(message, hint=hint, filename=frame.f_code.co_filename,
               lineno=frame.f_lineno, func=frame.f_code.co_name)


_SRCAD_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


# ndarray methods that change the array in place (Tensor._in_place)
_IN_PLACE = ("fill", "sort", "partition", "put")
_PUT_METHOD_NAMES = {"indices": "ind", "values": "v"}  # (x.put's keywords, np.put's names)


def _lost_error(frame, what):
    """The refusal where numpy takes a Tensor's plain value (its gradient would be lost): in
    a method call of a plain array (`a.dot(t)`) or a store into one (`a[i] = t`)."""
    if _called(frame):
        return user_error(
            f"tape mode: a differentiable value given to a method of a plain numpy array (as in "
            f"`a.dot(x)`) is {what}, which loses its gradient: numpy's ndarray methods do not "
            f"let the tape see their arguments",
            hint="call the numpy function instead (`np.dot(a, x)` or `a @ x` for `a.dot(x)`), "
            "or use mode='source'")
    return user_error(
        f"tape mode: a differentiable value stored into an array the function did not make "
        f"(an argument, a global, an array a library returned) is {what}, which loses its "
        f"gradient",
        hint="make the array in the function (np.zeros(...), np.zeros_like(x), np.array(a), "
        "np.copy(a)) and write into that, build it with np.stack / np.concatenate, or use "
        "mode='source'")


_CALLS = {dis.opmap[n] for n in ("CALL", "PRECALL", "CALL_FUNCTION", "CALL_METHOD",
                                  "CALL_FUNCTION_KW", "CALL_FUNCTION_EX", "CALL_KW")
          if n in dis.opmap}


def _untraced_user_code(frame) -> bool:
    """Is `frame` the user's own Python code running outside the tape's view (its globals are
    not the tape's: tape.Tape.traced gives every function it follows its own)?"""
    if getattr(frame.f_globals, "srcad_traced", False):
        return False
    module = frame.f_globals.get("__name__", "") or ""
    if module.startswith(("srcad", "numpy", "scipy")) or frame.f_code.co_filename.startswith("<"):
        return False
    mod = sys.modules.get(module)
    return mod is not None and not is_library_module(mod)


def _called(frame) -> bool:
    """Is `frame` (the user's code) at a call -- float(t) -- rather than a store (a[i] = t)?"""
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] in _CALLS


_REMAINDER = {dis.opmap[n] for n in ("BINARY_MODULO", "INPLACE_MODULO") if n in dis.opmap}
_BINARY_OP = dis.opmap.get("BINARY_OP")
_NB_REMAINDER = (6, 19)  # (BINARY_OP's operand for `%` and `%=`, Python >= 3.11)


def _formatted(frame) -> bool:
    """Is `frame` at a `%` -- `"loss %.3f" % t`: str formatting asks for the number (a
    Tensor's own `t % 2` never gets here), a string that carries no gradient?"""
    code, i = frame.f_code.co_code, frame.f_lasti
    if not 0 <= i < len(code):
        return False
    return code[i] in _REMAINDER or (code[i] == _BINARY_OP and code[i + 1] in _NB_REMAINDER)


def _seen_elsewhere(base) -> bool:
    """Is `base`, the base of an array numpy writes into, seen by anything but that array?
    (A `Plain` view of a result no name holds is the result itself, to numpy's semantics.)"""
    if base is None:
        return False
    return type(base) is not np.ndarray or base.base is not None or sys.getrefcount(base) > 3


def _write_in_place(func, args, kwargs):
    """``np.put(t, ind, v)``, ``np.copyto(t, src)``, ``np.fill_diagonal(t, val)`` (and
    np.put_along_axis / np.place / np.putmask, and ``t.put(ind, v)``): the write
    ``t[index] = value`` as source mode lowers it (frontend/pylower.py), on the tape (copy on
    write into the Tensor the user's name holds). Into a plain array, a differentiable value
    is refused (numpy would store a plain number)."""
    plain = [a.value if isinstance(a, Tensor) else a for a in args]
    plain_kw = {k: v.value if isinstance(v, Tensor) else v for k, v in kwargs.items()}
    _, index, _, take = inplace_parts(func, plain, plain_kw)  # (from the values: no gradient)
    bound_target, _, value, _ = inplace_parts(func, args, kwargs)
    if (func is np.put or take is not None) and isinstance(value, Tensor):
        value = value.tape.apply(np.ravel, (value,), {})
        if take is not None:  # (np.place / np.putmask: the items numpy stores, repeated)
            value = value.tape.apply(operator.getitem, (value, take), {})
    elif take is not None:
        value = np.ravel(value)[take]
    if not isinstance(bound_target, Tensor):
        raise SrcadError(
            f"tape mode: `np.{func.__name__}` writes a differentiable value into a plain "
            f"array, which loses its gradient",
            hint="make the array with np.zeros_like(x) of a differentiable x, or use "
            "mode='source', which differentiates the write")
    bound_target.tape.setitem(bound_target, index, value)


def write_at(ufunc, args):
    """``np.add.at(t, indices, v)`` (any ufunc of `AT_FORMS`): the write ``t[...] =
    add_at(t, indices, v)`` as source mode lowers it (frontend/pylower.py), on the tape.
    Into a plain array, a differentiable value is refused (numpy would store plain numbers);
    with no Tensor at all it is numpy's own call."""
    target = args[0]
    if not isinstance(target, Tensor):
        if _has_tensor(tuple(args[1:])):
            raise SrcadError(
                f"tape mode: `np.{ufunc.__name__}.at` writes a differentiable value into a "
                f"plain array, which loses its gradient",
                hint="make the array with np.zeros_like(x) of a differentiable x (or "
                "np.zeros inside the function), or use mode='source'")
        return ufunc.at(*args)
    if len(args) != ufunc.nin + 1:
        return ufunc.at(*_unwrap(tuple(args)))  # (numpy's own error)
    value = target.tape.apply(AT_FORMS[ufunc], args, {})
    target.tape.setitem(target, Ellipsis, value)
    return None


class _RefProbe:
    """Measures how many references numpy's in-place call path itself holds to `a` in
    `a += t` (t overriding the ufunc): one more means another name or a view holds `a`."""

    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        self.refs = sys.getrefcount(out[0])
        return 0.0


def _into(out, value):
    """numpy's `out=`: the value written into `out` (`out[...] = value`), `out` returned."""
    out[...] = value
    return out


def _lone_refs() -> int:
    probe = _RefProbe()
    a = np.zeros(1)
    a += probe
    return probe.refs


_LONE_REFS = _lone_refs()


try:  # (the ufunc behind ndarray.clip: no row of its own, np.clip's semantics)
    from numpy._core.umath import clip as _CLIP_UFUNC
except ImportError:  # numpy < 2
    from numpy.core.umath import clip as _CLIP_UFUNC


_EAGER = eager_callbacks()

_PY = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
       np.true_divide: operator.truediv, np.power: operator.pow, np.matmul: operator.matmul,
       np.less: operator.lt, np.less_equal: operator.le, np.greater: operator.gt,
       np.greater_equal: operator.ge, np.equal: operator.eq, np.not_equal: operator.ne,
       operator.floordiv: operator.floordiv, operator.mod: operator.mod}


def _binary(fn, reflected=False):
    # an operator computes as Python's operator does on the values, as source mode's
    # generated `x ** 3` does: numpy scalars use their own scalar math, not the ufunc
    py = _PY[fn]

    def op(self, other):
        if isinstance(other, SparseView):
            return NotImplemented  # (`t @ S`: the view's own __rmatmul__)
        args = (other, self) if reflected else (self, other)
        return self.tape.apply(fn, args, {}, py)

    return op


class SparseView:
    """A module's scipy.sparse matrix as traced code sees it: `S @ t`, `t @ S` and `S.dot(t)`
    of a Tensor are the tape's `sparse_matmul` (source mode's row, frontend/expressions.py);
    anything else is the matrix's own."""

    __array_priority__ = 1000.0  # (numpy defers `x @ S` to the view)

    def __init__(self, tape, obj):
        self._tape, self._obj = tape, obj

    def __matmul__(self, other):
        if isinstance(other, Tensor):
            return self._tape.apply(runtime.sparse_matmul, (self._obj, other), {})
        return self._obj @ other

    def __rmatmul__(self, other):
        if isinstance(other, Tensor):
            return self._tape.apply(runtime.sparse_matmul, (other, self._obj), {})
        return other @ self._obj

    def dot(self, other):
        return self.__matmul__(other)

    @property
    def T(self):
        return SparseView(self._tape, self._obj.T)

    def transpose(self, *a, **k):
        return SparseView(self._tape, self._obj.transpose(*a, **k))

    def __getattr__(self, name):
        held = getattr(self._obj, name)
        if name in _SPARSE_KEEPS and callable(held):  # (`S.tocsc()`: a view of the result)
            return lambda *a, **k: SparseView(self._tape, held(*a, **k))
        return held


# a sparse matrix's methods that give one back (source mode's frontend/expressions.py too)
_SPARSE_KEEPS = frozenset({"tocsr", "tocsc", "tocoo", "copy", "astype"})


def _inplace(fn):
    # `x += t`: numpy writes into an array (its aliases and views see it, its base too),
    # and rebinds a scalar -- source mode's `x = x + t` plus what propagate_write rebuilds
    py = _PY[fn]

    def op(self, other):
        new = self.tape.apply(fn, (self, other), {}, py)
        check_inplace(self.value, new.value if isinstance(new, Tensor) else new)
        if ((self.view is not None or isinstance(self.value, np.ndarray))
                and isinstance(new, Tensor) and np.shape(new.value) == np.shape(self.value)):
            # (made in self's memory layout, as numpy's and source mode's: normalize.py
            # keep_layout)
            new = self.tape.apply(runtime.in_layout, (new, self), {})
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
    if isinstance(x, tuple):  # (a namedtuple keeps its type: `p.W` still reads)
        items = [_unwrap(v) for v in x]
        return type(x)(*items) if hasattr(type(x), "_fields") else tuple(items)
    if type(x) is dict:
        return {k: _unwrap(v) for k, v in x.items()}
    if type(x) is Plain:
        return x.view(np.ndarray)
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
