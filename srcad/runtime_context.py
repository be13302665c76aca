"""Runtime helpers for a `with` block in a differentiated function (srcad/frontend/withlower.py).

Generated code spells ``with np.errstate(divide="ignore"): y = np.log(x)`` as

    context_L3 = enter_context(context_L3_cm)     # cm.__enter__(), kept on a stack
    y = np.log(x)
    context_L3_exit = exit_context(context_L3)    # the state at the exit, then cm.__exit__

and the backward of the block runs between ``reenter_context(context_L3)`` and
``leave_context(context_L3)`` (srcad/transform/reverse.py): for numpy's `np.errstate` and
`warnings.catch_warnings` -- state, not an action -- the numpy error state and the warning
filters the forward block had at its exit (so the adjoint of a `np.log(x)` the user silenced
is silent too); any other context manager (a user's `Timer`, `contextlib.nullcontext`) is
entered once, by the forward, and the backward runs as it would outside it.

Every context entered is kept on a per-thread stack. `unwinding(fn)` wraps the generated
entry points of a program that has a `with`: when the call raises, the contexts it entered
and did not leave are exited, innermost first, with the exception (Python's `with`), so
numpy's error state and the warning filters never leak out of a call that raised.

The shape probe (srcad/probe.py: the first call's IR run, `interpreting`) enters numpy's
and the warnings' contexts and `contextlib.nullcontext` as the real call does, and leaves a
user's context manager to the real call: it enters and exits a copy of it (as it runs a
method on a copy of its object), or, where the manager cannot be copied, enters nothing and
binds `as t` to the manager itself (the usual ``return self``).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import sys
import threading
import warnings

import numpy as np

_LOCAL = threading.local()


def _stack() -> list:
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    return stack


def is_state_context(cm) -> bool:
    """numpy's error state and the warning filters: what the backward enters again."""
    return isinstance(cm, (np.errstate, warnings.catch_warnings))


class Context:
    """One `with` item as the forward ran it: the manager, what `__enter__` returned, and
    (filled at the exit) the error state and warning filters the backward enters again."""

    __slots__ = ("cm", "value", "state", "entered", "__weakref__")

    def __init__(self, cm):
        self.cm = cm
        self.value = None
        self.state = None  # (np.geterr(), warnings.filters) at the exit, for a state context
        self.entered = False

    def __exit__(self, kind, exc, tb):  # (as `unwind` calls it)
        return self.cm.__exit__(kind, exc, tb) if self.entered else None


class _Reentered:
    """The backward's re-entry of a state context: the forward's error state and filters."""

    __slots__ = ("managers",)

    def __init__(self, state):
        err, filters = state
        errstate, caught = np.errstate(**err), warnings.catch_warnings()
        errstate.__enter__()
        caught.__enter__()
        warnings.filters[:] = filters
        warnings._filters_mutated()
        self.managers = (caught, errstate)

    def __exit__(self, kind, exc, tb):
        for m in self.managers:
            m.__exit__(kind, exc, tb)


class _Nothing:
    __slots__ = ()

    def __exit__(self, kind, exc, tb):
        return None


def interpreting(probe: bool):
    """srcad/interpret.py runs the IR inside this: the shape probe (`probe`) leaves a user's
    context managers alone, and a run that raised exits what it entered."""
    return _Interpreting(probe)


class _Interpreting:
    __slots__ = ("depth", "probe")

    def __init__(self, probe):
        self.probe = probe

    def __enter__(self):
        _LOCAL.probing = getattr(_LOCAL, "probing", 0) + self.probe
        self.depth = len(_stack())

    def __exit__(self, kind, exc, tb):
        _LOCAL.probing -= self.probe
        unwind(self.depth, kind, exc, tb)


def enter_context(cm) -> Context:
    """`cm.__enter__()`, as `with cm:` does; the handle `exit_context` takes."""
    if not (hasattr(type(cm), "__enter__") and hasattr(type(cm), "__exit__")):
        raise TypeError(f"'{type(cm).__name__}' object does not support the context manager "
                        f"protocol")
    h = Context(cm)
    if getattr(_LOCAL, "probing", 0) and not (is_state_context(cm) or
                                              isinstance(cm, contextlib.nullcontext)):
        # (the probe leaves a user's manager to the real call: it enters a copy, or, where
        # the manager cannot be copied, binds `as` to the manager itself)
        try:
            h.cm = copy.deepcopy(cm)
        except Exception:  # noqa: BLE001  (a lock, a file: nothing to enter in the probe)
            h.value = cm
            _stack().append(h)
            return h
    h.value = type(h.cm).__enter__(h.cm)
    h.entered = True
    _stack().append(h)
    return h


def enter_state(cm) -> Context:
    """`enter_context` of numpy's error state, the warning filters or a null context
    (``with np.errstate(...)``, spelled so by the frontend): entering it again when a
    checkpointed region is recomputed changes nothing anyone sees."""
    return enter_context(cm)


def context_value(h: Context):
    """What `__enter__` returned: the `as` target's value."""
    return h.value


def exit_context(h: Context) -> None:
    """`cm.__exit__(None, None, None)` at the end of the block (after an early `return` too:
    srcad/frontend/desugar.py guards the rest of the block, never its exit)."""
    stack = _stack()
    if stack and stack[-1] is h:
        stack.pop()
    elif h in stack:  # pragma: no cover - (blocks nest: the innermost leaves first)
        stack.remove(h)
    if is_state_context(h.cm) and h.entered:
        h.state = (np.geterr(), list(warnings.filters))
    if h.entered:
        h.entered = False
        type(h.cm).__exit__(h.cm, None, None, None)


def exit_state(h: Context) -> None:
    """`exit_context` of a context `enter_state` entered."""
    exit_context(h)


# the calls that set what a state context holds, by the name generated code spells
SETTINGS = {"warnings.simplefilter": warnings.simplefilter,
            "warnings.filterwarnings": warnings.filterwarnings,
            "warnings.resetwarnings": warnings.resetwarnings, "np.seterr": np.seterr}
SETTINGS_BY_FN = {fn: key for key, fn in SETTINGS.items()}


def context_setting(key: str, *args, **kwargs):
    """``warnings.simplefilter("ignore")`` inside a state context's block, run as a value
    (``context_setting("warnings.simplefilter", "ignore")``) so that the shape probe runs it
    too (srcad/frontend/pyforms.py)."""
    return SETTINGS[key](*args, **kwargs)


def reenter_context(h: Context) -> None:
    """The backward of the block starts: the forward block's error state and warning filters
    again, for numpy's and the warnings' contexts; nothing for any other."""
    _stack().append(_Reentered(h.state) if h.state is not None else _Nothing())


def leave_context(h: Context) -> None:
    """The backward of the block ends (see `reenter_context`)."""
    _stack().pop().__exit__(None, None, None)


def unwind(depth: int, kind, exc, tb) -> None:
    """Exit the contexts entered above `depth`, innermost first, with the exception."""
    stack = _stack()
    while len(stack) > depth:
        top = stack.pop()
        try:
            top.__exit__(kind, exc, tb)
        except BaseException:  # noqa: BLE001  (the first exception is the one to report)
            pass


def unwinding(fn):
    """`fn` (a generated entry point) that exits the contexts a raising call left open."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        depth = len(_stack())
        try:
            return fn(*args, **kwargs)
        except BaseException:
            unwind(depth, *sys.exc_info())
            raise

    return run


SUPPRESS = contextlib.suppress


# -- tape mode (srcad/tape.py): the user's `with` runs natively; each recorded op keeps the
# error state and warning filters it ran under, and the backward replays each op's rule
# under them (the same rule as the generated code's: an op inside a silenced block has a
# silenced adjoint)
try:  # (numpy >= 2: the error state is a context variable; cheap to read per op)
    from numpy._core._ufunc_config import _extobj_contextvar as _EXTOBJ
except ImportError:  # pragma: no cover - (older numpy: read the settings themselves)
    _EXTOBJ = None


def ambient():
    """The error state and warning filters an op runs under now (identities, not copies:
    a block's filters list keeps what it held when the block ended)."""
    err = _EXTOBJ.get() if _EXTOBJ is not None else tuple(sorted(np.geterr().items()))
    return (err, warnings.filters)


class Replay:
    """`replay(state)` before each op's rule in the tape's backward; restores at the end."""

    def __init__(self):
        self.start = self.now = ambient()
        self.token = None

    def __call__(self, state) -> None:
        if state is None or (state[0] is self.now[0] and state[1] is self.now[1]):
            return
        self._apply(state)

    def _apply(self, state) -> None:
        err, filters = state
        if err is not self.now[0]:
            if _EXTOBJ is not None:
                _EXTOBJ.set(err)
            else:  # pragma: no cover
                np.seterr(**dict(err))
        if filters is not self.now[1]:
            warnings.filters = filters
            warnings._filters_mutated()
        self.now = state

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._apply(self.start)
