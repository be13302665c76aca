"""Attributes of the module's objects that code srcad runs as written may change in a call.

A global object's attribute read in the function (``L1.output``, ``NET.l0.W``) is a constant
of the call: its value when the call starts, bound again at each call (guards.py). That is
what Python reads only where nothing in the call changes the attribute before the read --
or, where something does, srcad follows it (a method's ``self.output = h`` is carried by
state.py, ``L1.W = W`` by attrstate.py). Code srcad runs as written may change it too, and
srcad does not see how: ``object.__setattr__(L1, "W", W1)``, ``setattr(L1, name, v)``, a
method of an object picked when the code runs (``for layer in sorted(NET.layers, key=id):
layer.forward(h)``). Before the session of 2026-12-07 (fifteenth) such a read kept the value
the call began with -- a wrong value, and a gradient of zeros through it.

So a program is normalised twice where it holds such code (transformed.py `_normalized`):
the first time notes the objects whose data attributes it read as constants (`read_as_it_runs`);
where code run as written may reach one of them (analysis/refusals.py
`changed_by_unknown_code`), the program is normalised again with those objects' data
attributes (arrays, numbers, strings, None, containers: not the objects and methods whose
code srcad follows) read when the code runs (`read_as_it_runs`: an opaque attribute read,
marked `unknown_writer`), in the callees too -- so the value is Python's, and
refusals.check_opaque refuses the read where a differentiated value may have been stored
there (it carries no gradient), whatever it holds now (``self.output = None`` in
``__init__``, an int).

Before/after (`L1.W` read after ``object.__setattr__(L1, "W", W1)``):
    p1_f_sum = np.sum(x @ p1_L1_W)          p1_L1_W = p1_L1.W          (refused: a gradient
                                            p1_f_sum = np.sum(x @ p1_L1_W)   would be lost)
"""

from __future__ import annotations

import contextlib

import numpy as np

from .opaque import is_object_mapping, is_object_sequence, is_user_object

ANY = "any object"  # code run as written that may reach any object (a method of a value)

# one entry per program being normalised (a nested transform pushes its own):
# [ids of objects whose data attributes were read as constants, what is read as it runs]
_PROGRAMS: list = []

# the values an attribute read as the code runs may hold now: data, not objects, methods or
# classes (an int, a bool, a str too: `object.__setattr__(CFG, "n", 3)` then `x * CFG.n`)
_DATA = (np.ndarray, np.generic, int, float, complex, str, type(None), list, tuple, dict)


@contextlib.contextmanager
def program(changed=None):
    """Normalise one program: `changed` -- None (fold every attribute read, noting the
    objects), ANY, or a set of object ids whose data attributes are read as the code runs."""
    _PROGRAMS.append([set(), changed])
    try:
        yield _PROGRAMS[-1][0]
    finally:
        _PROGRAMS.pop()


def is_data(holder, value) -> bool:
    """Is `value`, held in an attribute of `holder`, data a call may change (not an object,
    a list of objects, a method, a class)?"""
    return is_user_object(holder) and not isinstance(holder, type) and \
        isinstance(value, _DATA) and not is_user_object(value) and \
        not is_object_sequence(value) and not is_object_mapping(value)


def read_as_it_runs(holder) -> bool:
    """Are `holder`'s data attributes read when the code runs in this program? Where not,
    the caller reads one as a constant of the call (None now: as a flag), and `holder` is
    noted for `changed_by_unknown_code`."""
    if not _PROGRAMS:
        return False
    folded, changed = _PROGRAMS[-1]
    if changed is not None and (changed == ANY or id(holder) in changed):
        return True
    folded.add(id(holder))
    return False
