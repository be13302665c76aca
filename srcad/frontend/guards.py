"""Guards: what a specialisation assumed about the names its function reads.

The frontend resolves every free name when it normalises a function (srcad/frontend/parse.py
`ParsedFunction.resolve`, expressions.py `dotted`): `SCALE` folds into the code as the literal
`2.0`, `ACT` picks the op row of `np.tanh`, `Config.beta` its value, `W` is injected into the
generated module as that array, `callee` becomes a subroutine of the code it has now. Python
reads those names when the function runs; so a transformed function must mean what calling
the function means *at the moment of each call* (DESIGN.md, "Pinned public API").

srcad keeps that meaning the way `torch.compile` does (its guards on globals and attributes):
each lookup the frontend made while normalising is recorded here as a guard, and every call of
a transformed function first checks that each guard still holds -- the name is bound to the
same object. Three kinds:

    global   d.get(name, MISSING) is obj          a module global (or a builtin's absence
                                                  from the module, `absent`)
    cell     cell.cell_contents is obj            a closure cell of the function
    attr     getattr(base, name, MISSING) is obj  `Config.beta`, `cfg.lr`, `mod.f`, a method
                                                  on an object (compared by its function)
    items    the list holds these very objects    `for layer in self.layers:` unrolled over
                                                  the layers (a list changes in place);
                                                  a dict: these very keys, in this order
                                                  (`for k, f in HEADS.items()` unrolled)
    has      hasattr(base, name) is obj           `if hasattr(layer, "W"):` folded (True or
                                                  False; the attribute's value may change)

Attributes of installed libraries' modules (`np.tanh`, `math.pi`) are not guarded: they are
the library's, not the program's state. The check is one generated boolean expression over
the recorded objects (a few tens of ns a guard; `bench/guards.py` measures it).

When a guard fails, the transformed function asks `equivalent(old, new)`:
  * a literal folded into the code (float, int, bool, str, None, a tuple of them) rebound to
    an equal value of the same type (`SCALE = 2.0` again): the code is still right;
  * an array injected by reference rebound to another array of the same type, shape, dtype
    and layout (a mask rebuilt per step): the code is still right once its module reads the
    new array (`Compiled.namespace` is rebound, no rebuild);
  * anything else (`SCALE = 5.0`, `ACT = np.sin`, a callee redefined, an array of another
    shape): every specialisation is dropped and rebuilt from a fresh normalisation.
In-place changes (`W[0] = 1`, `cfg_dict["lr"] = 0.1`) need no guard: generated code reads the
object itself when it runs.

    >>> import types
    >>> d = {"SCALE": 2.0}
    >>> g = Guards([("global", d, "SCALE", d["SCALE"])])
    >>> g.holds()
    True
    >>> d["SCALE"] = 5.0
    >>> g.holds(), [(e[2], new) for e, new in g.failures()]
    (False, [('SCALE', 5.0)])
"""

from __future__ import annotations

import abc
import functools
import types
from contextlib import contextmanager

import numpy as np

from ..build import c_helper
from .opaque import is_library_module

MISSING = object()  # a name not bound (yet): a guard that it stays unbound
_RECORDING: list = []  # the Guards being filled by the normalisation in progress (a stack)


def _method_key(obj):
    """A bound method is made anew at every attribute lookup: compare its function."""
    if isinstance(obj, types.MethodType):
        return obj.__func__
    return obj


def _same_items(seq, items: tuple) -> bool:
    return len(seq) == len(items) and all(a is b for a, b in zip(seq, items))


def _cell_contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # (an empty cell)
        return MISSING


class Guards:
    """The lookups one normalisation made, and a fast check that they still hold."""

    def __init__(self, entries=()):
        self.entries: list[list] = []
        self._seen: dict = {}
        for e in entries:
            self.add(*e)

    # -- recording ---------------------------------------------------------------------------
    def add(self, kind: str, where, name, obj=None) -> None:
        if kind == "items" and type(where) is tuple:
            return  # (a tuple's items cannot change: `self.pair[1]`, `CFG["pair"][0]`)
        key = (kind, id(where), name)
        if key in self._seen:
            return
        if kind == "attr":
            obj = _method_key(obj)
        if kind == "items":
            obj = tuple(obj)
        entry = [kind, where, name, obj]
        self._seen[key] = entry
        self.entries.append(entry)
        self.__dict__.pop("holds", None)

    def extend(self, other: Guards) -> None:
        for e in other.entries:
            self.add(*e)

    def copy(self) -> Guards:
        return Guards([tuple(e) for e in self.entries])

    # -- checking ----------------------------------------------------------------------------
    def holds(self) -> bool:
        """Does every recorded lookup still find the object it found? (The first call compiles
        the check and puts it in this method's place: later calls go straight to it.)"""
        self.holds = self._compile()
        return self.holds()

    def _compile(self):
        """The C runtime's `guards_hold` over the entries (kernels_c/srcad_guards.h: a few ns
        a guard), else one Python boolean expression over them, their objects bound as
        defaults (fast locals: ~30 ns a guard)."""
        if not self.entries:
            return lambda: True
        c_check = c_helper("guards_hold")
        if c_check is None:
            return self.python_check()
        code = {"global": 0, "absent": 0, "cell": 1, "items": 4, "has": 5}
        table = tuple((code.get(kind, 3 if callable(obj) else 2), where, name,
                       MISSING if kind == "absent" else obj)
                      for kind, where, name, obj in self.entries)
        return functools.partial(c_check, table, MISSING)

    def python_check(self):
        """The check as one Python boolean expression (where the C runtime is not there)."""
        if not self.entries:
            return lambda: True
        params, terms = ["_M=_M", "_getattr=getattr", "_key=_key", "_cell=_cell",
                         "_same=_same"], []
        for i, (kind, where, name, obj) in enumerate(self.entries):
            params += [f"w{i}=w{i}", f"o{i}=o{i}"]
            if kind in ("global", "absent"):
                terms.append(f"w{i}.get({name!r}, _M) is o{i}")
            elif kind == "cell":
                terms.append(f"_cell(w{i}) is o{i}")
            elif kind == "items":
                terms.append(f"_same(w{i}, o{i})")
            elif kind == "has":
                terms.append(f"(_getattr(w{i}, {name!r}, _M) is not _M) is o{i}")
            else:
                terms.append(f"_key(_getattr(w{i}, {name!r}, _M)) is o{i}"
                             if callable(obj) else f"_getattr(w{i}, {name!r}, _M) is o{i}")
        src = f"def check({', '.join(params)}):\n    return ({' and '.join(terms)})\n"
        env = {"_M": MISSING, "_key": _method_key, "_cell": _cell_contents,
               "_same": _same_items}
        for i, (kind, where, name, obj) in enumerate(self.entries):
            env[f"w{i}"] = where
            env[f"o{i}"] = MISSING if kind == "absent" else obj
        exec(compile(src, "<srcad guards>", "exec"), env)  # noqa: S102 (our own text)
        return env["check"]

    def current(self, entry):
        kind, where, name, _ = entry
        if kind in ("global", "absent"):
            return where.get(name, MISSING)
        if kind == "cell":
            return _cell_contents(where)
        if kind == "items":
            return where if _same_items(where, entry[3]) else tuple(where)
        if kind == "has":
            return getattr(where, name, MISSING) is not MISSING
        return _method_key(getattr(where, name, MISSING))

    def failures(self) -> list:
        """(entry, the object found now) for each guard that no longer holds."""
        out = []
        for e in self.entries:
            now = self.current(e)
            if e[0] == "items":
                if now is not e[1]:
                    out.append((e, now))
                continue
            if now is not (MISSING if e[0] == "absent" else e[3]):
                out.append((e, now))
        return out

    def accept(self, entry, new) -> None:
        """The guard holds for `new` from now on (an equivalent value)."""
        entry[3] = new
        self.__dict__.pop("holds", None)

    def __len__(self):
        return len(self.entries)


def equivalent(old, new) -> str | None:
    """How code built for `old` can serve `new`: "same" (a literal of equal value and type:
    nothing to do), "rebind" (an array of the same type, shape, dtype and layout: the
    generated module must read the new one), or None (rebuild)."""
    if type(old) is not type(new):
        return None
    if old is None or isinstance(old, (bool, int, float, str)):
        return "same" if repr(old) == repr(new) else None  # (repr: nan, -0.0 and 0.0)
    if isinstance(old, tuple) and len(old) == len(new):
        return "same" if all(equivalent(a, b) == "same" for a, b in zip(old, new)) else None
    if type(old) is np.ndarray:
        same = (old.shape == new.shape and old.dtype == new.dtype
                and old.flags.c_contiguous == new.flags.c_contiguous
                and old.flags.f_contiguous == new.flags.f_contiguous
                and old.flags.writeable == new.flags.writeable)
        return "rebind" if same else None
    return None


# -- recording while normalising ------------------------------------------------------------


@contextmanager
def recording():
    """Collect the guards of the lookups made inside (nested normalisations of callees add to
    the same set: a callee's globals are the caller's assumptions too)."""
    g = Guards()
    _RECORDING.append(g)
    try:
        yield g
    finally:
        _RECORDING.pop()


def note(kind: str, where, name, obj=None) -> None:
    """Record one lookup in the normalisation in progress (no-op outside one)."""
    if _RECORDING:
        _RECORDING[-1].add(kind, where, name, obj)


class _Registrations:
    """`abc`'s cache token as an attribute (a guard of kind "attr"): one object per token,
    so the guard holds until a class is registered with any ABC (`Base.register(Impl)`)."""

    _objects: dict = {}

    @property
    def token(self):
        return self._objects.setdefault(abc.get_cache_token(), object())


REGISTRATIONS = _Registrations()


def note_registrations() -> None:
    """Guard on no class being registered with an ABC (an `isinstance` answered False by
    one: opaque.decided_class_test)."""
    note("attr", REGISTRATIONS, "token", REGISTRATIONS.token)


def note_attr(base, name: str, obj) -> None:
    """Record `base.name` unless `base` is an installed library's module (its attributes are
    the library's, not the program's state) or `obj` is a submodule."""
    if not _RECORDING or isinstance(obj, types.ModuleType):
        return
    if isinstance(base, types.ModuleType) and is_library_module(base):
        return
    if isinstance(base, np.ufunc) and isinstance(getattr(base, "__dict__", None), dict) \
            and name not in base.__dict__:
        # np.add.reduce is a new bound object at each access: guard on nothing having been
        # assigned over it (numpy 2's ufuncs take attributes) rather than on its identity
        note("absent", base.__dict__, name)
        return
    note("attr", base, name, obj)
