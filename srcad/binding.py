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
