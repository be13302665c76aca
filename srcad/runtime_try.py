"""The probe of a try statement in a differentiated function (srcad/frontend/trylower.py).

`attempt(key, args)` runs the try body -- the user's own Python, compiled from the body's
source in the user's module and kept in `BODIES` under `key` -- on the values it reads, inside
a real `try`. It returns ``(True, None)`` when the body completes (or leaves by `return`,
`break` or `continue`) and ``(False, exception)`` when it raises; the generated code then
takes the branch Python would (the body again, differentiated, or the matching handler).
Its result is a bool and an exception: no gradient flows through it.
"""

from __future__ import annotations

BODIES: dict = {}  # key (the function, the try's line, a hash of the body) -> the body


def attempt(key: str, args: tuple):
    """Run the try body `key` on `args`: (completed, the exception it raised or None)."""
    try:
        BODIES[key](*args)
    except BaseException as e:  # noqa: BLE001  (dispatched by the caller, or raised again)
        return False, e
    return True, None


def with_cause(exc, cause):
    """`raise exc from cause` in a handler, as the exception to raise: Python's own
    `__cause__` (None: `raise exc from None`), and no context shown."""
    if isinstance(exc, type):
        exc = exc()
    exc.__cause__ = cause
    exc.__suppress_context__ = True
    return exc
