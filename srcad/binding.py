"""What transforms need to know about argument values: which are floats (differentiable),
the specialisation key of a value (shapes, dtypes, integer values, pytree structure), and how
a value is described in messages and generated headers.

    >>> _key_of(np.zeros((2, 3)))
    ((2, 3), dtype('float64'))
    >>> _describe(np.zeros((2, 3), np.float32))
    'float32[2, 3]'
"""

from __future__ import annotations

import numpy as np


def _is_float(value) -> bool:
    if isinstance(value, dict):
        return bool(value) and all(_is_float(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_is_float(v) for v in value)
    if isinstance(value, (np.ndarray, np.generic)):
        return np.issubdtype(value.dtype, np.floating)
    return isinstance(value, float)


_INERT = (str, bytes, bool, int, type(None))


def _is_differentiable(value) -> bool:
    """A wrt argument: a float (array) or a pytree with float leaves; a pytree's other leaves
    (a layer's activation name, a flag, a count, None) carry no gradient (theirs is None)."""
    if isinstance(value, (dict, list, tuple)):
        leaves = list(value.values()) if isinstance(value, dict) else list(value)
        if not leaves:  # (an empty pytree: its gradient is empty, as in JAX and autograd)
            return True
        return any(_is_differentiable(v) for v in leaves) and all(
            _is_differentiable(v) or _is_inert(v) for v in leaves)
    return _is_float(value)


def _is_inert(value) -> bool:
    if isinstance(value, (np.ndarray, np.generic)):
        return not np.issubdtype(value.dtype, np.inexact)
    return isinstance(value, _INERT) or (isinstance(value, (dict, list, tuple)) and all(
        _is_inert(v) for v in (value.values() if isinstance(value, dict) else value)))


def _tangent_for(d, value):
    """A jvp tangent for `value` with each inert leaf's tangent a float zero (the forward
    code may read it: `n * x` where n is a pytree's int), whatever the caller passed there."""
    if d is None and not _is_inert(value):  # (no tangent given for it: zeros)
        if isinstance(value, dict):
            return {k: _tangent_for(None, v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            items = [_tangent_for(None, v) for v in value]
            return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
        return 0.0 if isinstance(value, float) else np.zeros_like(value)
    if isinstance(value, dict) and isinstance(d, dict):
        return {k: _tangent_for(d.get(k), v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and isinstance(d, (list, tuple)):
        return type(value)(_tangent_for(t, v) for t, v in zip(d, value)) \
            if not hasattr(value, "_fields") else type(value)(
                *(_tangent_for(t, v) for t, v in zip(d, value)))
    if _is_inert(value):
        return np.zeros(np.shape(value)) if isinstance(value, np.ndarray) else 0.0
    return d


def _key_of(value):
    if type(value) is np.ndarray:
        return (value.shape, value.dtype)
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str)
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str)
    if isinstance(value, bool) or isinstance(value, int):
        return ("int", type(value).__name__, value)
    if isinstance(value, float):
        return ("float",)
    if isinstance(value, dict):
        return ("dict", tuple((k, _key_of(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key_of(v) for v in value))
    if value is None or isinstance(value, str):
        return ("value", repr(value))
    return ("object", type(value).__qualname__)


def _describe(value) -> str:
    if isinstance(value, (np.ndarray, np.generic)):
        return f"{value.dtype}[{', '.join(map(str, np.shape(value)))}]"
    return type(value).__name__


def _a(value) -> str:
    """`value` described with its article, for messages: 'a float32[2, 3]', 'an int64[3]',
    'an object array (object[2])', 'a list'.

    >>> _a(np.array([1.0, 2.0], dtype=object))
    'an object array (object[2])'
    """
    if isinstance(value, np.ndarray) and value.dtype.kind == "O":
        return f"an object array ({_describe(value)})"
    what = _describe(value) if isinstance(value, (np.ndarray, np.generic)) else \
        type(value).__name__
    return ("an " if what[:1] in tuple("aeiou") else "a ") + what


def _spec_key(values) -> tuple:
    """What a specialisation is built for: each array's shape, dtype and layout, each other
    value's key (srcad/binding.py) -- one spelling for `compiled` and the fast path."""
    return tuple([(v.shape, v.dtype, v.flags.c_contiguous) if type(v) is np.ndarray
                  else _key_of(v) for v in values])


def _hashable(obj) -> bool:
    """Can `obj` be looked up in a dict (an op table, a substitutes map)?"""
    try:
        hash(obj)
        return True
    except TypeError:
        return False
