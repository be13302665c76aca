"""User-facing errors. Every message points at the user's file and line.

`SrcadError` is the base of every error srcad raises on purpose; internal
exceptions are caught at the API boundary and re-raised as `SrcadError`
(with the original chained) so that a user never sees a bare KeyError from
inside the compiler.
"""

from __future__ import annotations

import functools
import linecache
import os
import re


class SrcadError(Exception):
    """An error in the user's program or in how srcad was called.

    The message names the user's file and line, quotes the offending source
    line and says what to do instead.
    """

    def __init__(
        self,
        message: str,
        *,
        filename: str | None = None,
        lineno: int | None = None,
        hint: str | None = None,
        func: str | None = None,
    ):
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.hint = hint
        self.func = func
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [self.message]
        if self.filename is not None and self.lineno is not None:
            where = f'  File "{self.filename}", line {self.lineno}'
            if self.func:
                where += f", in {self.func}"
            parts.append(where)
            text = linecache.getline(self.filename, self.lineno).strip()
            if text:
                parts.append(f"    {text}")
        if self.hint:
            parts.append(f"  hint: {self.hint}")
        return "\n".join(parts)


# srcad's own Python that it runs in place of a library function (np.histogram, statistics.*:
# srcad/pyfuncs.py), traced as user code: its lines are srcad's, never the user's to read
SUBSTITUTE_FILES = frozenset({os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                           "pyfuncs.py")})


def in_substitute(filename: str | None) -> bool:
    """Is `filename` srcad's code that stands in for a library function (SUBSTITUTE_FILES)?"""
    return filename is not None and os.path.abspath(filename) in SUBSTITUTE_FILES


def at_call_site(err: SrcadError, filename: str | None, lineno: int | None, func: str | None,
                 within: str | None = None) -> SrcadError:
    """`err`, raised inside the call at `filename`:`lineno` (in `func`) of a library function
    srcad runs its own code in place of (`within`, as the user spells it: "np.histogram"),
    made to name that call: an error that names no line, or a line of SUBSTITUTE_FILES, is
    the call's (the substitute's detail kept: "in np.histogram: ..."). Any other is left as
    it is (it already names a user's line). Changed in place, so its type, traceback and
    cause stay; returned."""
    if not isinstance(err, SrcadError) or filename is None or in_substitute(filename) or (
            err.filename is not None and not in_substitute(err.filename)):
        return err
    if within and not re.search(rf"(?<![\w.]){re.escape(within)}(?!\w)", err.message):
        err.message = f"in {within}: {err.message}"
    err.filename, err.lineno, err.func = filename, lineno, func
    err.args = (err._render(),)
    return err


@functools.cache
def _also(kind: type) -> type | None:
    """A SrcadError class that is also a `kind` (None where Python cannot make one: an
    exception type whose instances are laid out differently, OSError's kind)."""
    try:
        return type(kind.__name__, (SrcadError, kind), {"__module__": kind.__module__,
                                                         "__qualname__": kind.__qualname__})
    except TypeError:
        return None


def user_error(err: BaseException, message: str, **where) -> SrcadError:
    """The user's own code raised `err` on these inputs (a shape mismatch, a singular
    matrix, 0.0 ** -1) while srcad ran it: a SrcadError at the user's line that is also an
    instance of err's type -- `except np.linalg.LinAlgError:` around the call catches it as it
    catches the plain function's, in every mode (as numpy's AxisError is both a ValueError
    and an IndexError). `err` is its cause."""
    cls = _also(type(err)) if isinstance(err, Exception) and \
        not isinstance(err, SrcadError) else None
    out = None
    if cls is not None:
        try:
            out = cls(message, **where)
        except Exception:  # noqa: BLE001  (an __init__ wanting its own arguments)
            out = None
    if out is None:
        out = SrcadError(message, **where)
    out.__cause__ = err
    return out


class UnsupportedSyntaxError(SrcadError):
    """The function uses a Python construct srcad cannot differentiate."""


class NoRuleError(SrcadError):
    """A call to a function that has no derivative rule."""


class SharingUnknownError(UnsupportedSyntaxError):
    """An in-place write where numpy's memory sharing depends on what a name holds (an index
    held in an argument: a view for an int or a slice, a copy for an array). A transform made
    before any call waits for the first call's arguments to tell."""


class CountUnknownError(SharingUnknownError):
    """A loop that builds objects into a list (``for i in range(len(Ws)):
    self.layers.append(Dense(Ws[i], ...))``) runs as many times as an argument's length (or
    an int argument) says: a transform made before any call waits for the first call's
    arguments to tell, and is specialised on them."""


class DictUnknownError(SharingUnknownError):
    """``{**p, "k": v}`` with ``p`` an argument: srcad builds the new dict from p's keys,
    which only a call's arguments tell; a transform made before any call waits for them."""


class CalleeUnknownError(SharingUnknownError):
    """A callee picked from a registry by an argument (``ACTIVATIONS[name]()``): which class
    or function it is depends on the value the argument holds, so a transform made before
    any call waits for the first call's arguments to tell."""


class UnresolvedNameError(SrcadError):
    """A free name the function reads is bound nowhere (yet): Python would raise NameError
    when the line runs. A transform made before the name is defined (a decorator above a
    helper defined later in the module) waits for the first call to look again."""


class NonScalarOutputError(SrcadError):
    """`grad` of a function whose output is not a scalar."""
