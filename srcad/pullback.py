"""The backward half of `srcad.vjp`: a `Pullback` holds the values the forward saved until
it is called, as often as the caller likes, and refuses to run on arguments or an output
the caller changed in place in between (it remembers their checksums).

    out, pullback = srcad.vjp(f, x, W)      # runs f's generated forward
    dx, dW = pullback(np.ones_like(out))    # runs its backward on the saved values
"""

from __future__ import annotations

import zlib

import numpy as np

from . import runtime
from .binding import _is_differentiable
from .errors import SrcadError


def _checksum(a: np.ndarray) -> int:
    """crc32 of an array's bytes (contiguous arrays are read in place, without a copy)."""
    data = memoryview(a).cast("B") if a.flags.c_contiguous and a.size else a.tobytes()
    return zlib.crc32(data)


def _leaves_of(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves_of(v)
    elif isinstance(value, runtime.Stack):
        yield from _leaves_of(list(value._items))
    elif isinstance(value, runtime.LoopCheckpoints):
        yield from _leaves_of(value.kept_states())
    else:
        yield value


class Pullback:
    """The backward half of `vjp`: holds the saved values between the two calls."""

    def __init__(self, t, c, saved, values, out):
        self._t = t
        self._c = c
        self._saved = saved
        self._values = values
        self._out_shape = np.shape(out)
        self._out_dtype = np.result_type(out)
        # the caller owns the arguments and the output: if the backward keeps a reference to
        # one of them, remember a checksum, so that a change made before the pullback runs is
        # reported instead of silently corrupting the gradient
        held = {id(v) for v in _leaves_of(saved)}
        named = [(p, v) for p, v in zip(t.params, values) if isinstance(v, np.ndarray)]
        named.append(("the output", out))
        self._guards = [(label, v, _checksum(v)) for label, v in named
                        if isinstance(v, np.ndarray) and id(v) in held]

    @property
    def source(self) -> str:
        return self._c.source

    def __reduce__(self):
        # (the saved values are this process's forward, tied to code built here: sending them
        # would mean sending the generated code's private layout; send the primals instead)
        raise SrcadError(
            f"a pullback of {self._t._ir.name} cannot be sent to another process: it holds "
            f"the values this process's forward saved",
            hint="send the primals and call srcad.vjp there (a srcad.grad or "
            "srcad.value_and_grad pickles by reference)")

    def __call__(self, cotangent):
        for label, v, crc in self._guards:
            if _checksum(v) != crc:
                what = f"argument `{label}`" if label != "the output" else "the output"
                raise SrcadError(
                    f"{what} of {self._t._ir.name} was changed in place after srcad.vjp and "
                    f"before its pullback; the backward needs its original values",
                    filename=self._t._ir.filename, lineno=self._t._ir.first_line,
                    hint="copy the array before changing it, or call vjp again")
        if np.shape(cotangent) != self._out_shape:
            raise SrcadError(
                f"the cotangent has shape {np.shape(cotangent)} but "
                f"{self._t._ir.name}'s output has shape {self._out_shape}")
        if np.result_type(cotangent) != self._out_dtype:
            cotangent = np.asarray(cotangent, dtype=self._out_dtype)
        grads = self._c.functions["bwd"](runtime.fresh_stacks(self._saved), cotangent)
        it = iter(grads)
        return tuple(next(it) if _is_differentiable(v) else None for v in self._values)
