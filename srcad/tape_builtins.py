"""What tape mode shows the user's code besides numpy: builtins and libraries, seen as source
mode sees them.

Source mode runs a call with no derivative rule as written, on plain values, once it has
checked that no gradient is lost (frontend/opaque.py's `check_opaque`, which tape mode runs
too, on the same normalised function). Tape mode runs the user's Python itself, with
`Tensor`s in place of the values the gradient follows, so the same calls must see plain
values there: ``isinstance(x, np.ndarray)``, ``print(x)``, ``int(x)``, ``math.sqrt(s)``, a
scipy function, must behave as on the array, not on its Tensor. This module gives the
tape's traced functions
  * builtins that take Tensors as their values (isinstance, print, round, ...);
  * a view of each library module (math, scipy, ... -- not numpy, which reaches the tape
    through numpy's own protocols) whose functions unwrap their arguments.
"""

from __future__ import annotations

import builtins
import types

import numpy as np

from . import runtime
from .binding import _hashable
from .ops import table
from .pyfuncs import SUBSTITUTES, TAPE_ONLY, class_substitute, substituted_owner

# (not the builtin types -- float, int, bool, str -- which numpy takes as dtypes: a Tensor's
# __float__, __int__, __str__ serve them)
_UNWRAPPING = ("round", "isinstance", "print", "repr", "format", "hash", "id")


def plain(x, tensor_type):
    """`x` with every Tensor in it replaced by its value."""
    if isinstance(x, tensor_type):
        return x.value
    if getattr(type(x), "_srcad_plain", False):  # (tape_tensor.Plain: numpy's own array)
        return x.view(type(x).__mro__[1])
    if isinstance(x, list):
        return [plain(v, tensor_type) for v in x]
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return tuple(plain(v, tensor_type) for v in x)
    if isinstance(x, dict):
        return {k: plain(v, tensor_type) for k, v in x.items()}
    return x


def plain_call(fn, tensor_type):
    """`fn` called on the values of its Tensor arguments (a function a class statement takes
    as its base, `class P(typing.NamedTuple)`, is left as it is: its `__mro_entries__`)."""
    if hasattr(fn, "__mro_entries__"):
        return fn

    def call(*args, **kwargs):
        return fn(*plain(list(args), tensor_type), **plain(kwargs, tensor_type))

    call.__wrapped__ = fn
    return call


def tape_builtins(tape, tensor_type) -> dict:
    """Builtins for the tape's traced functions (by name)."""
    out = {n: plain_call(getattr(builtins, n), tensor_type) for n in _UNWRAPPING}
    out["isinstance"] = _tape_isinstance(tensor_type)
    out["sorted"] = tape.substitute(builtins.sorted)  # (srcad/pyfuncs.py)
    out["float"] = _tape_float(tape, tensor_type)
    return out


def _tape_isinstance(tensor_type):
    """`isinstance` as the tape shows it: a Tensor is its value, a container the object it
    is -- not rebuilt as `plain` does, which would make a user's subclass of list (``class
    ModuleList(list)``), an OrderedDict, a plain list or dict and answer False for it."""
    def isinstance_(obj, classinfo):
        if builtins.isinstance(obj, tensor_type) or getattr(type(obj), "_srcad_plain", False):
            obj = plain(obj, tensor_type)
        return builtins.isinstance(obj, plain(classinfo, tensor_type))

    isinstance_.__wrapped__ = builtins.isinstance
    return isinstance_


class _FloatType(type):
    """`float` as the tape shows it: ``float(t)`` of a Tensor is the row `to_float` (source
    mode's float(x)); everything else -- ``float("nan")``, ``isinstance(v, float)``,
    ``dtype=float`` (numpy reads the class's `dtype`), ``float.fromhex`` -- is float's."""

    def __instancecheck__(cls, v):
        return isinstance(v, float)

    def __subclasscheck__(cls, c):
        return issubclass(c, float)

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], cls._t):
            return cls._tape.apply(runtime.to_float, args, {})
        return float(*args, **kwargs)

    def __getattr__(cls, name):
        return getattr(float, name)


def _tape_float(tape, tensor_type):
    return _FloatType("float", (), {"_tape": tape, "_t": tensor_type,
                                    "dtype": np.dtype(np.float64)})


class MethodsView:
    """A library object some of whose methods srcad substitutes (``scipy.stats.norm``: its
    `logpdf` is srcad/pystats.py's) as the tape shows it: those methods traced as the user's
    code, anything else the object's own."""

    def __init__(self, obj, substitute):
        self._obj, self._sub = obj, substitute

    def __getattr__(self, name):
        value = getattr(self._obj, name)
        if _hashable(value) and value in SUBSTITUTES:
            return self._sub(value)
        return value

    def __call__(self, *args, **kwargs):  # (norm(mu, s): srcad/pystats.py's frozen one)
        return class_substitute(self._obj)(*args, **kwargs)


class LibraryView:
    """A library module (math, scipy.special, ...) as the tape shows it: its functions see
    plain values (source mode runs them as written, on plain values)."""

    def __init__(self, mod, tensor_type, is_library_module, substitute=None):
        self._mod, self._t, self._lib = mod, tensor_type, is_library_module
        self._sub = substitute  # (statistics.mean -> the tape's Tape.substitute)

    def __getattr__(self, name):
        value = getattr(self._mod, name)
        if isinstance(value, types.ModuleType):
            return LibraryView(value, self._t, self._lib, self._sub) if self._lib(value) \
                else value
        if self._sub is not None and _hashable(value) and (
                value in SUBSTITUTES or value in TAPE_ONLY):
            return self._sub(value)
        if self._sub is not None and substituted_owner(value):  # (scipy.stats.norm)
            return MethodsView(value, self._sub)
        if callable(value) and not isinstance(value, type):
            if table.lookup(value) is None:
                return plain_call(value, self._t)
            tape = getattr(self._sub, "__self__", None)  # (math.sin: its row, on the tape)
            if tape is not None and not (getattr(value, "__module__", None) or "").startswith(
                    "numpy"):
                return lambda *a, **k: tape.apply(value, a, k)
        return value
