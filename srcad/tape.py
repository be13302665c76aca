"""Tape mode: the eager reference, an operator-overloading tape over the same op table.

The user's function runs as ordinary Python, with every float argument wrapped in a
`Tensor`. numpy calls reach the tape through ``__array_ufunc__`` / ``__array_function__``,
operators and methods through the Tensor's own dunders; each call is looked up in the op
table, run with the same numpy function and arguments that source mode's generated code
uses, and recorded. The backward walks the tape in reverse and calls the rows' VJP
lambdas -- the very expressions source mode inlines -- so the two modes run the same numpy
operations in the same order and agree bit for bit.

To keep that order where source mode differentiates a call to another user function as a
subroutine (the callee's contributions to an argument are summed before they are added to
the caller's), the tape runs user functions through wrappers that give the callee fresh
Tensors for its arguments and add their adjoints back when the backward leaves the call.
This front end shares nothing with srcad's parser: it is a second, independent mechanism.

The arrays the function does not differentiate come in two kinds. A new float array it makes
itself (np.zeros, np.empty_like, np.array, np.copy, ...) is a Tensor with no history: a buffer
it may write differentiable values into (`out[i, j] = v`, `h[:, t] = h_t`), followed copy on
write as source mode does. Every other (an argument, a global, numpy's result on those) is
`Plain` (tape_tensor.py): numpy's own array, whose `.dot` given a Tensor goes to the tape.
The wrapped value, `Tensor`, and its operators are in srcad/tape_tensor.py; this module holds
the `Tape` (recording, writes through views, user functions, the backward) and `run`/`grads`.

Input: the user's function, its argument values and which of them to differentiate (`run`).
Output: the tape of that run, the wrapped arguments and the output; `grads` walks the tape
back from the output's cotangent to each asked-for argument's gradient, in its structure.

Before/after:
    def f(x, W):                           run(f, [x, W], [False, True]) records
        return np.sum(np.tanh(x @ W))          matmul(x1=x, x2=W), tanh, sum   (W a Tensor)
                                           grads(..., 1.0, [False, True]) -> [None, dW]
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import copy
import dis
import functools
import inspect
import operator
import sys
import types

import numpy as np

from . import runtime, runtime_python
from .build import pinned
from .errors import SrcadError
from .frontend import concatenators
from .frontend.concatenators import is_concatenator
from .frontend.kept_globals import kept_container
from .frontend.opaque import is_library_module, is_user_object, library_file
from .ops import control, table
from .pyfuncs import CLASS_SUBSTITUTES, SUBSTITUTES, TAPE_ONLY, substituted_owner
from .tape_builtins import LibraryView, MethodsView, _hashable, plain_call, tape_builtins
from .tape_containers import (CONTAINERS, AttrItems, AttrTensorDict, TensorDict, TensorList, TensorTuple, raw_item, raw_items, rewrap,
                              wrap_container)
from .runtime_at import AT_FORMS
from .runtime_context import Replay, ambient
from .runtime_callbacks import VectorizeEager
from .runtime_linalg import is_sparse
from .tape_tensor import (
    _PY, Plain, SparseView, Tensor, _has_tensor, _unwrap, plain_view, user_error, write_at)
from .transform.specialise import Info


# a class's entries `Tape.follow_class` leaves as they are
_UNFOLLOWED = {"__new__", "__init_subclass__", "__class_getitem__", "__del__", "__set_name__"}

_BUILTIN_NAMES = {"round", "isinstance", "print", "repr", "format", "hash", "id", "sorted",
                  "float"}


class Entry:
    __slots__ = ("op", "args", "out", "kind", "pairs", "frozen", "state")

    def __init__(self, op, args, out, kind="op", pairs=None, frozen=None):
        self.op = op  # the row
        self.args = args  # param name -> argument as given (Tensors inside)
        self.out = out  # the result Tensor
        self.kind = kind  # "op", or "call": leaving a user function (backward adds back)
        self.pairs = pairs  # for "call": [(outer Tensor, inner Tensor), ...]
        # param name -> a followed container argument's values when the row read it (the
        # function may store into the container later; the backward reads them as they were)
        self.frozen = frozen
        self.state = None  # the error state and warning filters it ran under (`_record`)


_VIEW_KINDS = {operator.getitem: "index", np.transpose: "transpose", np.swapaxes: "swapaxes"}


_NO_FORM = object()
_FORMS: dict = {}  # (params, a row's forward_form expression) -> its compiled function


def _forward_form(op, values):
    """The row's `forward_form` for these values' shapes, run as generated code runs it (so
    the two modes compute the same numpy calls), or _NO_FORM where it has none."""
    if op.forward_form is None:
        return _NO_FORM
    template = op.forward_template({k: Info.of(v) for k, v in values.items()})
    if template is None:
        return _NO_FORM
    key = (op.param_names, template)
    fn = _FORMS.get(key)
    if fn is None:
        fn = _FORMS[key] = eval(f"lambda {', '.join(op.param_names)}: {template}",
                                {"np": np, **vars(runtime)})
    return fn(**{p.name: values.get(p.name, p.default) for p in op.params})


_COMPLEX = ("a complex value depends on the arguments being differentiated: srcad "
            "differentiates real values only (complex numbers are out of its scope)")
_COMPLEX_HINT = ("write the computation with real arrays (`np.cos(k)` / `np.sin(k)` for "
                 "the parts of `np.exp(1j * k)`), or register a real-valued rule for the "
                 "function with srcad.defvjp")



class Tape:
    def __init__(self):
        self.entries: list[Entry] = []
        self.uses: dict = {}  # id(Tensor) -> the entries holding it (`_record`, `_replace`)
        self._traced: dict = {}
        self._scalar_types: dict = {}  # np.float64 -> its stand-in (see `_scalar_type`)
        self.views: dict = {}  # id -> Tensor that is a view of another, in creation order
        self.flats: dict = {}  # id of a Tensor -> its `.flat` view (one per Tensor)
        self.origin: dict = {}  # id(argument Tensor) -> the Tensor of its value on entry
        self.patched: list = []  # (class, name, entry before the run): `follow_class`
        self._followed: set = set()
        self.modules: set = set()  # (the modules of the classes followed: settle_kept)
        # id(an argument's leaf) -> (the leaf, the Tensors read from it as a container's item:
        # one object to Python, `W = p["W"]` and `u = p["W"]`), and -> the Tensor that holds
        # it since a write in place through one of them (`item_written`)
        self.item_reads: dict = {}
        self.superseded: dict = {}
        self._syncing = False
        # id -> a list or dict a module global or closure cell holds, as traced code saw it:
        # what the run stored there is made plain at its end (`settle_kept`)
        self.kept: dict = {}
        # id -> (a library object, the view traced code sees for it): one view per object, so
        # that `act is np.tanh`, `fns[np.tanh]` and `==` hold on the tape as in Python
        self.shown: dict = {}
        self._walked: set = set()  # ids of the objects `follow_reachable` has looked into

    # -- forward -----------------------------------------------------------------------------
    def apply(self, fn, args, kwargs, py_operator=None, op=None):
        op = op if op is not None else table.lookup(fn)
        name = getattr(fn, "__name__", repr(fn))
        if op is None:
            # no rule: source mode runs it as written on plain values, once check_opaque has
            # made sure no gradient is lost (api.Transformed.tape_call runs that check too)
            del name
            return fn(*_unwrap(tuple(args)), **{k: _unwrap(v) for k, v in kwargs.items()})
        args = op.canonical_args(list(args), _unwrap, lambda v: v)
        try:
            bound = op.bind(args, kwargs)
        except TypeError as e:
            raise user_error(f"tape mode: {e}") from None
        for p, v in list(bound.items()):
            now = self._as_now(v) if fn is not operator.getitem else v
            if now is not v:
                # a list argument with items stored into it, taken whole (`np.sum(p, axis=0)`,
                # `np.stack(p)`): its items as they are now (a stored one itself, the others
                # read from the argument), so each position's cotangent reaches its own item
                bound[p] = now if p in op.sequences or not isinstance(v, CONTAINERS) else \
                    self.apply(np.stack, (now,), {})
        values = {k: _unwrap(v) for k, v in bound.items()}
        if op.check is not None:  # (arguments with no derivative: refused at the user's line)
            try:
                op.check(**values)
            except SrcadError as e:
                raise user_error(e.message, e.hint, type(e)) from None
        positional, keywords = op.call_parts(values)
        result = _forward_form(op, values)
        if result is _NO_FORM:
            result = (py_operator(*positional) if py_operator is not None
                      else op.fn(*positional, **keywords))
        if op.family == "constructor" and isinstance(result, np.ndarray) and any(
                _has_tensor(v) for v in bound.values()) and not any(
                _has_tensor(bound[p]) for p in bound if op.vjp(p) is not None):
            # np.zeros_like(x): a buffer the function may write differentiable values into,
            # in place or through views -- a Tensor (with no history) follows them
            return Tensor(result, self)
        if not op.differentiable or not any(_has_tensor(bound[p]) for p in bound
                                            if op.vjp(p) is not None):
            return result
        if isinstance(result, (np.ndarray, np.generic, complex)) and np.iscomplexobj(result):
            raise user_error(_COMPLEX, _COMPLEX_HINT)
        out = Tensor(result, self)
        # a plain array the backward will read may be changed in place later (v += 1.0 on an
        # array no Tensor touches): keep a copy of it, as source mode's code rebinds instead
        saved = {k: _as_read(v) for k, v in bound.items()}
        frozen = {k: _unwrap(v) for k, v in bound.items() if isinstance(v, CONTAINERS)}
        self._record(Entry(op, saved, out, frozen=frozen or None))
        base = next(iter(bound.values()), None)
        if (op.view and isinstance(base, Tensor) and isinstance(result, np.ndarray)
                and isinstance(base.value, np.ndarray)
                and np.may_share_memory(result, base.value)):
            kind = _VIEW_KINDS.get(fn, "opaque")
            arg = (bound.get("index") if kind == "index" else bound.get("axes")
                   if kind == "transpose" else (bound.get("axis1"), bound.get("axis2"))
                   if kind == "swapaxes" else None)
            out.view = (base, kind, arg)
            self.views[id(out)] = out
        return out

    def flat(self, t: Tensor) -> Tensor:
        """`t.flat`: read as np.ravel(t); a write through it (`K.flat[::n + 1] += v`) is a
        write into `t`, whether or not numpy's ravel would copy (source mode: frontend/
        normalize.py `_writes_through_views`)."""
        held = self.flats.get(id(t))
        if held is not None and held.view is not None and held.view[0] is t and \
                held.view[1] == "flat":  # (one view a write rebuilds, not one per read)
            return held
        out = self.apply(np.ravel, (t,), {})
        if isinstance(out, Tensor):
            out.view = (t, "flat", None)
            self.views[id(out)] = out
            self.flats[id(t)] = out
        return out

    def index_container(self, c, index):
        """`c[index]` of a container argument (srcad/tape_containers.py): a gather recorded
        with a fresh Tensor (a fresh container for a slice or a nested container) as its
        result, as source mode's `p[i]` is a getitem with an adjoint of its own."""
        raw = raw_item(c, index)
        if isinstance(raw, Tensor):
            held = self.superseded.get(id(raw))
            if held is not None:  # written in place through a name (`W -= d`): that object
                return held
            out = Tensor(raw.value, self)
            out.held_in = (c, index, raw)
            self.item_reads.setdefault(id(raw), (raw, []))[1].append(out)
        elif isinstance(raw, CONTAINERS) or (isinstance(raw, (list, tuple))
                                             and isinstance(index, slice)):
            reads = getattr(c, "nested_reads", None) if not isinstance(index, slice) else None
            slot = None if reads is None else (
                c._position(index) if isinstance(c, TensorList) else index)
            out = rewrap(raw, self, like=c if isinstance(index, slice) else None)
            if isinstance(index, slice) and getattr(c, "written", None) and \
                    isinstance(out, list):  # (items stored before: read as stored there too)
                at = range(*index.indices(len(c)))
                out.written = {j for j, i in enumerate(at) if i in c.written}
            elif not isinstance(index, slice) and not isinstance(out, TensorTuple) and \
                    not isinstance(c, TensorTuple):  # (a store into it is a store into c)
                out.outer = (c, index)
                if reads is not None:  # (`e1 = p["enc"]; e2 = p["enc"]`: one dict in Python,
                    # two reads here, each its own gather: a store through one is in both)
                    out.siblings = reads.setdefault(slot, [])
                    out.siblings.append(out)
        else:
            return raw
        if not _has_tensor(out):
            return raw
        self._record(Entry(table.lookup(operator.getitem), {"a": c, "index": index}, out))
        return out

    def refuse_container_change(self, what: str):
        """A list argument's length or order changed in tape mode: refused at the user's
        line (its items' gradients are matched by position), as source mode refuses it."""
        raise user_error(f"tape mode: {what} on a list the function is given (its items are "
                         f"followed by position)",
                         hint="make a new list (`ys = list(xs) + [v]`, `ys = xs[::-1]`) "
                         "and change that")

    def setitem(self, t: Tensor, index, value) -> None:
        """x[i] = v, copy on write as in source mode, then numpy's aliasing (`write`)."""
        self.write(t, lambda old: self.apply(runtime.setitem, (old, index, value), {}))

    def write(self, t: Tensor, make) -> None:
        """`t` takes the value `make(old)` computes from its old value, in place: the Tensor
        the user's names hold keeps its identity (aliases see the change) and the tape's
        earlier references move to a Tensor for the old value. Then what shares memory with
        it is rebuilt, in source mode's order (frontend/aliasing.py, `propagate_write`): the
        bases up the chain of views, then every view of a rebuilt Tensor."""
        self._replace(t, make)
        done = {id(t)}
        rebuilt = [t]
        at = t
        while at.view is not None:
            base, kind, arg = at.view
            if id(base) in done:
                break
            if kind == "opaque":
                raise user_error(
                    "tape mode: a write through a view made by reshape/ravel/squeeze/... "
                    "(numpy shares memory here) is not followed",
                    hint="copy before writing (r = r.copy()), or write into the base array")
            self._replace(base, lambda old, k=kind, a=arg, v=at: self._write_back(old, k, a, v))
            done.add(id(base))
            rebuilt.append(base)
            at = base
        changed = True
        while changed:
            changed = False
            for v in list(self.views.values()):
                if id(v) in done or v.view is None or id(v.view[0]) not in done:
                    continue
                base, kind, arg = v.view
                if kind == "opaque":
                    v.view = (base, "stale", None)
                    continue
                if kind == "stale":
                    continue
                self._replace(v, lambda old, b=base, k=kind, a=arg: self._remake(b, k, a))
                v.view = (base, kind, arg)
                done.add(id(v))
                rebuilt.append(v)
                changed = True
        if not self._syncing:
            for r in rebuilt:
                if r.held_in is not None:
                    self.item_written(r)

    def item_written(self, t: Tensor) -> None:
        """`t`, read as a container's item (`W = p["W"]`, `for w in p`), was written in place
        (`W -= lr * g`, `W[0] = v`): in Python the name holds the container's own array, so
        the container holds the written value from now on -- stored into it, read as stored
        (a list's or dict's: its cotangent goes to `t`, the caller's container holds it after
        the call: `settle_arguments`), up to the argument (`stored_into_item`) -- and every
        other read of that item (`u = p["W"]` before the write, through any path) is that
        array: it takes t's value (source mode's `propagate_write` rebuilding its aliases)."""
        c, key, leaf = t.held_in
        self.superseded[id(leaf)] = t
        group = self.item_reads[id(leaf)][1]
        if isinstance(c, (TensorList, TensorDict)):
            now = raw_item(c, key)
            if now is not t and (now is leaf or any(now is m for m in group)):
                c[key] = t  # (a later store `p["W"] = v` is not undone: then c holds v)
        self._syncing = True
        try:
            for m in group:
                if m is not t:
                    self.write(m, lambda old: self.apply(runtime.setitem, (old, Ellipsis, t), {}))
        finally:
            self._syncing = False

    def _as_now(self, v):
        """A followed list or tuple taken whole (also inside a plain list), as it is now: one
        with items stored into it (`p[0][1] = v`, at any depth) or written in place through
        a name (`item_written`) is the list of its items as read now (a stored one itself,
        the others read from the argument: so each cotangent reaches its own item); `v`
        itself where nothing changed."""
        if isinstance(v, (TensorList, TensorTuple)):
            if not (getattr(v, "written", None) or self._holds_superseded(v)):
                return v
            return [self._as_now(item) for item in v]  # (a gather per item not stored)
        if type(v) in (list, tuple):
            items = [self._as_now(item) for item in v]
            return v if all(a is b for a, b in zip(items, v)) else type(v)(items)
        return v

    def _holds_superseded(self, c) -> bool:
        if not self.superseded:
            return False
        for v in raw_items(c):
            if isinstance(v, Tensor) and id(v) in self.superseded:
                return True
            if isinstance(v, CONTAINERS) and self._holds_superseded(v):
                return True
        return False

    def _write_back(self, old_base, kind, arg, view):
        if kind == "index":
            return self.apply(runtime.setitem, (old_base, arg, view), {})
        if kind == "flat":  # (x.flat[i] = v: the base's elements in C order, copy or not)
            return self.apply(runtime.setitem, (old_base, Ellipsis, self.apply(
                np.reshape, (view, np.shape(old_base.value)), {})), {})
        # (the base keeps its memory layout, as numpy's does: its values, set whole)
        if kind == "transpose":
            inv = None if arg is None else runtime.inverse_permutation(arg, len(arg))
            moved = self.apply(np.transpose, (view, inv), {})
        else:
            moved = self.apply(np.swapaxes, (view, arg[0], arg[1]), {})
        return self.apply(runtime.setitem, (old_base, Ellipsis, moved), {})

    def _remake(self, base, kind, arg):
        if kind == "index":
            return self.apply(operator.getitem, (base, arg), {})
        if kind == "flat":
            return self.apply(np.ravel, (base,), {})
        if kind == "transpose":
            return self.apply(np.transpose, (base, arg), {})
        return self.apply(np.swapaxes, (base, arg[0], arg[1]), {})

    def _record(self, entry: Entry) -> None:
        """Append `entry` to the tape, indexed by the Tensors it holds (as `_replace` finds
        them: its result, its arguments and the items of list or tuple arguments, a call's
        pairs), so that a write visits the entries that read the written Tensor only."""
        self.entries.append(entry)
        entry.state = ambient()  # (a `with np.errstate(...)` block: runtime_context.py)
        held = {}
        if isinstance(entry.out, Tensor):
            held[id(entry.out)] = entry.out
        for v in (entry.args or {}).values():
            _tensors_in(v, held)
        for pair in entry.pairs or ():
            _tensors_in(pair, held)
        for key in held:
            self.uses.setdefault(key, []).append(entry)

    def _replace(self, t: Tensor, make) -> None:
        old = Tensor(t.value, self)
        if id(t) in self.origin and self.origin[id(t)] is t:
            self.origin[id(t)] = old  # an argument's gradient is for its value on entry
        uses = self.uses.pop(id(t), [])
        if uses:
            self.uses[id(old)] = uses
        for e in uses:
            if e.out is t:
                e.out = old
            if e.args is not None:
                for k, v in e.args.items():
                    if v is t:
                        e.args[k] = old
                    elif type(v) in (list, tuple) and _has_tensor(v):
                        # np.stack((t, u)): the entry read t's old value too
                        e.args[k] = _swap(v, t, old)
            if e.pairs:
                e.pairs = [(old if a is t else a, old if b is t else b) for a, b in e.pairs]
        new = make(old)
        if isinstance(new, Tensor):
            t.value = new.value
            self.views.pop(id(new), None)  # (t keeps its own place, or none)
            made = self.uses.pop(id(new), [])
            for e in made:
                if e.out is new:
                    e.out = t
            self.uses.setdefault(id(t), []).extend(e for e in made if e.out is t)
            rest = [e for e in made if e.out is not t]
            if rest:
                self.uses[id(new)] = rest
        else:
            t.value = new

    # -- user functions ----------------------------------------------------------------------
    def traced(self, fn):
        """`fn` with its globals (and closure) seen through the tape: registered user rules
        become ops and calls to other user functions become scoped calls."""
        if fn in self._traced:
            return self._traced[fn]
        g = _TracedGlobals(self, fn.__globals__)
        _class_body_names(g, fn.__code__)
        closure, selves = None, []
        if fn.__closure__:
            cells = []
            for c in fn.__closure__:
                if _cell_full(c) and c.cell_contents is fn:
                    # (a function reading its own name: a decorator's `wrapper.calls = 1`, a
                    # nested recursive def -- the traced function, set below)
                    selves.append(types.CellType())
                    cells.append(selves[-1])
                else:
                    cells.append(types.CellType(self.wrap(c.cell_contents))
                                 if _cell_full(c) else c)
            closure = tuple(cells)
        # (a function given as a default, `def helper(a, b, fn=step)`: traced as well, as a
        # global or a closure's function is -- its float(b) and math.exp(b) on the tape)
        defaults = None if fn.__defaults__ is None else tuple(
            self.wrap(d) if isinstance(d, types.FunctionType) else d for d in fn.__defaults__)
        out = types.FunctionType(fn.__code__, g, fn.__name__, defaults, closure)
        out.__kwdefaults__ = None if fn.__kwdefaults__ is None else {
            k: self.wrap(d) if isinstance(d, types.FunctionType) else d
            for k, d in fn.__kwdefaults__.items()}
        names, cells = _declared_stores(fn.__code__)
        if names or cells:
            out = _settling(out, fn, g, closure, names, cells)
        out._srcad_untraced = fn  # (`follow_class`: the user's function behind it)
        self._traced[fn] = out
        for cell in selves:
            cell.cell_contents = out
        return out

    def follow_class(self, cls) -> None:
        """Trace the methods of a user class (and its user bases) as part of their callers:
        for the run, each function in the class's __dict__ (a method, a @staticmethod, a
        @classmethod, a property's accessors) is replaced by its traced form, so that
        `self.im2col(x)` sees numpy through the tape as the function that called it does
        (np.lib.stride_tricks.as_strided given a Tensor). Source mode inlines methods into
        their callers (frontend/objects.py), so no subroutine boundary is added here; the
        class itself (identity, isinstance, class attributes) is the user's. `restore_classes`
        puts the class back when the run ends."""
        for c in cls.__mro__:
            if c in self._followed or not is_user_object(c):
                continue
            self._followed.add(c)
            self.modules.add(c.__module__)
            for name, entry in list(vars(c).items()):
                new = self._traced_entry(entry) if name not in _UNFOLLOWED else None
                if new is None:
                    continue
                try:
                    setattr(c, name, new)
                except (AttributeError, TypeError):  # (a class that refuses: left as it is)
                    continue
                self.patched.append((c, name, entry))

    def _traced_entry(self, entry):
        def traced(fn):
            fn = getattr(fn, "_srcad_untraced", fn)  # (a tape further out traced it)
            if isinstance(fn, types.FunctionType) and _is_user_function(fn):
                return self.traced(fn)
            return None

        if isinstance(entry, types.FunctionType):
            return traced(entry)
        if isinstance(entry, (staticmethod, classmethod)):
            fn = traced(entry.__func__)
            return None if fn is None else type(entry)(fn)
        if type(entry) is property:
            parts = [entry.fget, entry.fset, entry.fdel]
            new = [traced(f) if f is not None else None for f in parts]
            if all(n is None for n in new):
                return None
            return property(*[n if n is not None else f for n, f in zip(new, parts)],
                            entry.__doc__)
        return None

    def follow_reachable(self, obj) -> None:
        """Follow the class of every user object `obj` holds -- in a list, tuple, dict or set,
        or as an attribute of another user object, at any depth: `for layer in self.layers:
        h = layer.forward(h)` with `layers` a module's list, a closure's, an argument's or an
        object's. numpy sees a Tensor through its dispatch from any method, traced or not, but
        a library function a method calls (`scipy.special.logsumexp`) and Python's own
        (`math.exp`, `float`) see it only through the traced globals of a followed class."""
        todo = [obj]
        while todo:
            x = todo.pop()
            if isinstance(x, (np.ndarray, np.generic, Tensor, int, float, complex, str, bytes,
                              types.ModuleType, types.FunctionType, type)) or x is None or \
                    id(x) in self._walked:
                continue
            self._walked.add(id(x))
            if isinstance(x, dict):
                todo.extend(x.values())
            elif isinstance(x, (list, tuple, set, frozenset, collections.deque)):
                todo.extend(x)
            elif isinstance(x, types.MethodType):  # (`step = model.forward`)
                todo.append(x.__self__)
            elif is_user_object(x):
                self.follow_class(type(x))
                todo.extend(getattr(x, "__dict__", {}).values())

    def restore_classes(self) -> None:
        for c, name, entry in reversed(self.patched):
            setattr(c, name, entry)
        self.patched.clear()
        self._followed.clear()

    def substitute(self, obj):
        """What the traced code calls for `obj`, a key of pyfuncs.SUBSTITUTES or TAPE_ONLY:
        srcad/pyfuncs.py's function, traced as user code, or `obj` itself."""
        fn = SUBSTITUTES.get(obj, TAPE_ONLY.get(obj))
        if isinstance(fn, functools.partial):  # (`PRIOR.logpdf`: pystats.frozen_method)
            return functools.partial(self.scoped(fn.func), *fn.args, **fn.keywords)
        if obj in (copy.copy, copy.deepcopy):
            inner = self.scoped(fn)

            def copied(x):
                # (a user object: Python's own copy -- its arrays copied by Tensor.__copy__ /
                # __deepcopy__ on the tape, or shared as Python shares them; a list or dict
                # argument's shallow copy: its own `__copy__`, each item read as recorded)
                return obj(x) if is_user_object(x) or (obj is copy.copy and isinstance(
                    x, (TensorList, TensorDict))) else inner(x)
            return copied
        return obj if fn is None else self.scoped(fn)

    def numpy_view(self):
        """numpy as traced code sees it (`_NumpyView`)."""
        return _NumpyView(self, np)

    def one_view(self, obj, make):
        """`make(obj)`, made once per object in this run (`shown`); an object shown as itself
        is not kept."""
        seen = self.shown.get(id(obj))
        if seen is not None and seen[0] is obj:
            return seen[1]
        view = make(obj)
        if view is not obj:
            self.shown[id(obj)] = (obj, view)
        return view

    def wrap(self, obj):
        """What a traced function sees for a global or closure value (one view per object:
        `one_view`)."""
        if type(obj) is np.ndarray or kept_container(obj):
            return self._wrap(obj)  # (a plain view of an array is cheap and not compared)
        return self.one_view(obj, self._wrap)

    def _wrap(self, obj):
        if _hashable(obj) and (obj in SUBSTITUTES or obj in TAPE_ONLY):
            return self.substitute(obj)  # (statistics.mean: srcad/pyfuncs.py's)
        if is_sparse(obj):  # (a module's scipy.sparse matrix: `S @ t` on the tape)
            return SparseView(self, obj)
        if isinstance(obj, np.vectorize):  # (a vectorize object: its loop on the tape)
            return VectorizeEager(self.numpy_view(), _has_tensor, obj, self.wrap(obj.pyfunc))
        if type(obj) in (np.ndarray, np.random.Generator):  # a global array: numpy's, its
            return plain_view(obj)  # `.dot` seeing Tensors; a generator: its draws
        if isinstance(obj, types.FunctionType):
            op = table.lookup(obj)
            if op is not None:
                def call(*a, **k):
                    return self.apply(obj, a, k)

                call.__wrapped__ = obj  # (`untraced`)
                return call
            if _is_user_function(obj):
                return self.scoped(obj)
            gen = getattr(obj, "__wrapped__", None)
            if obj.__code__.co_filename == contextlib.__file__ and \
                    inspect.isgeneratorfunction(gen) and _is_user_function(gen):
                # a user's `@contextlib.contextmanager`: its generator traced as part of the
                # caller (source mode writes it where the `with` block is: pyforms.py)
                return contextlib.contextmanager(self.traced(gen))
            if not (obj.__module__ or "").startswith(("numpy", "srcad")):
                return plain_call(obj, Tensor)  # a library's function (see tape_builtins.py)
        if is_concatenator(obj):  # `from numpy import r_`
            return _Concatenator(self, obj)
        if substituted_owner(obj):  # `from scipy.stats import norm`: its substituted methods
            return MethodsView(obj, self.substitute)
        if kept_container(obj):  # (`history.append(h)`: plain arrays once the run ends)
            self.kept[id(obj)] = obj
        if kept_container(obj) or type(obj) is tuple:  # (`LAYERS = [Dense(..), ..]`)
            self.follow_reachable(obj)
        if not isinstance(obj, types.FunctionType) and is_user_object(obj):
            # a user class or an object of one (a module-level layer): its methods traced,
            # and those of the objects it holds (`self.layers`)
            if isinstance(obj, type):
                self.follow_class(obj)
            else:
                self.follow_reachable(obj)
            return obj
        if isinstance(obj, types.ModuleType) and _is_user_module(obj):
            return _ModuleView(self, obj)
        if isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] == "numpy":
            return _NumpyView(self, obj)
        if isinstance(obj, types.ModuleType) and not obj.__name__.startswith("srcad"):
            return LibraryView(obj, Tensor, is_library_module, self.substitute)
        if isinstance(obj, types.BuiltinFunctionType) and \
                not (getattr(obj, "__module__", None) or "").startswith("numpy"):
            if table.lookup(obj) is None:
                return plain_call(obj, Tensor)  # (from math import sqrt)
            return lambda *a, **k: self.apply(obj, a, k)  # (from math import sin: its row)
        if isinstance(obj, type) and issubclass(obj, np.generic) and table.lookup(obj):
            return _scalar_type(self, obj)  # `from numpy import float64`
        if not isinstance(obj, types.FunctionType) and callable(obj) and (
                table.lookup(obj) is not None):
            return self.sequence_aware(obj)  # `from numpy import sum`
        return obj

    def sequence_aware(self, fn):
        """`fn` (a numpy callable with a row) as the tape calls it: numpy looks for Tensors
        only among the arguments its dispatcher names, so `np.sum([t1, t2])` or `np.sum(xs)` of
        a list argument would turn the Tensors into plain floats; a list or tuple that holds a
        Tensor sends the call to the tape itself (numpy's semantics: the list is an array)."""

        def call(*args, **kwargs):
            given = (*args, *kwargs.values())
            if any(isinstance(a, (list, tuple)) and _has_tensor(a) for a in given) or (
                    fn in _NO_DISPATCH and any(_has_tensor(a) for a in given)):
                return self.apply(fn, args, kwargs, _PY.get(fn))
            out = fn(*args, **kwargs)
            if type(out) in (np.ndarray, Plain):  # (np.zeros_like(X) of a Plain X: Plain)
                return self.made(out, given if makes else None)
            return out

        op = table.lookup(fn)
        makes = fn in _MAKERS or (op is not None and op.family == "constructor")
        call.__wrapped__ = fn  # (`untraced`)
        return call

    def made(self, out, args=None):
        """A numpy call's array result, no Tensor among its arguments, as traced code sees it.
        A new float array the function made itself (`args`: np.zeros, np.empty_like,
        np.array, np.copy -- holding no memory of anything else) is a Tensor with no history:
        a buffer the function may write differentiable values into (`out[i, j] = v`,
        `h[:, t, :] = h_t`, `dx[...] += d`), in place or through its views, which the tape
        follows as source mode's copy on write does. Any other is `Plain`, numpy's array."""
        if args is not None and np.issubdtype(out.dtype, np.floating) and \
                out.flags.owndata and not any(out is a for a in args):
            return Tensor(out.view(np.ndarray) if type(out) is Plain else out, self)
        return plain_view(out)

    def scoped(self, fn):
        traced = self.traced(fn)

        def call(*args, **kwargs):
            pairs = []
            seen: dict = {}  # id -> (the caller's object, the callee's)

            def fresh(x):
                # (one object given twice -- `[W, W]`, `f(L, L)` -- is one object in the
                # callee too: a write through one of its places shows in the others)
                if id(x) in seen and seen[id(x)][0] is x:
                    return seen[id(x)][1]
                inner = made_fresh(x)
                if inner is not x and isinstance(x, (Tensor, list, tuple, dict)):
                    seen[id(x)] = (x, inner)
                return inner

            def made_fresh(x):
                if isinstance(x, Tensor):
                    inner = Tensor(x.value, self)
                    pairs.append((x, inner))
                    return inner
                if isinstance(x, CONTAINERS):  # the callee's own container (and leaves)
                    inner = wrap_container(_raw_tree(x, self.superseded), self, fresh)
                    pairs.append((x, inner))
                    held.append((x, inner, dict(_slots(inner))))
                    # (an item written in place since through another holder -- `M = L[:]`,
                    # then `W = L[0]; W -= t` -- is given as written: read as stored, below)
                    stored = set(getattr(x, "written", None) or ()) | {
                        k for k, v in _slots(x) if isinstance(v, Tensor) and
                        id(v) in self.superseded} if hasattr(inner, "written") else set()
                    if stored:
                        # an entry the caller stored (`p["W"] = ...` by an earlier call) is
                        # read as stored in the callee too: its cotangent goes to that value
                        # (paired above), not into the container's adjoint, which reaches
                        # the argument's original entries
                        inner.written |= stored
                        kept.append((inner, {k: raw_item(inner, k) for k in stored}))
                    return inner
                if isinstance(x, dict):
                    inner = {k: fresh(v) for k, v in x.items()}
                    dicts.append((x, inner, dict(inner)))
                    return inner
                if isinstance(x, (list, tuple)):
                    items = [fresh(v) for v in x]
                    if type(x) is list:
                        inner = list(items)
                        lists.append((x, inner, items))
                        return inner
                    return type(x)(*items) if hasattr(type(x), "_fields") else type(x)(items)
                return x

            dicts, kept, held, lists = [], [], [], []
            args = tuple(fresh(a) for a in args)
            kwargs = {k: fresh(v) for k, v in kwargs.items()}
            self._record(Entry(None, None, None, kind="enter", pairs=pairs))
            entry = [(x, inner, inner.value) for x, inner in pairs if isinstance(x, Tensor)]
            out = traced(*args, **kwargs)
            for x, inner, was in entry:
                if inner.value is not was:  # (`p -= t` into an array argument: numpy wrote
                    # the caller's array -- source mode: frontend/inline.py)
                    new = self.apply(control.identity, (inner,), {})
                    self.write(x, lambda old, new=new: new)
            callers = {id(inner): x for x, inner in pairs if isinstance(x, Tensor)}
            for x, inner, made in dicts:  # `param[k] = v` in the callee: the caller's dict
                for k in inner:
                    if k not in made or inner[k] is not made[k]:
                        x[k] = _as_callers(inner[k], callers)
                for k in [k for k in made if k not in inner and k in x]:
                    del x[k]  # (`del param[k]`, `param.pop(k)`: gone from the caller's too)
                order = [k for k in inner if k in x] + [k for k in x if k not in inner]
                if list(x) != order:  # (`d.pop(k)`, then `d[k] = v`: last, as in Python's)
                    items = [(k, x[k]) for k in order]
                    x.clear()
                    x.update(items)
            for x, inner, made in lists:  # `ps[k] = v`, `ps.append(v)`, `ps += [v]`,
                # `ps.pop()` in the callee: the caller's list, as Python's one list shows them
                # (only a replaced item reached the caller: an append was lost, a wrong value
                # silently, before the session of 2026-12-07, twelfth)
                given = {id(m): j for j, m in enumerate(made)}
                now = [x[given[id(v)]] if id(v) in given and given[id(v)] < len(x) else
                       _as_callers(v, callers) for v in inner]
                if len(now) != len(x) or any(a is not b for a, b in zip(now, x)):
                    x[:] = now
            unchanged = {id(inner): made for inner, made in kept}
            written = self._items_written_in_callee(pairs, held)
            for x, inner in pairs:  # (`p[k] = v` into a dict or list argument: the caller's)
                if isinstance(inner, (dict, list)) and getattr(inner, "written", None):
                    made = unchanged.get(id(inner), {})
                    for k in inner.written:
                        v = raw_item(inner, k)
                        if (k not in made or v is not made[k]) and \
                                (id(x), k) not in written:  # (stored by this call)
                            x[k] = v
            # (a container the caller gave, returned -- `return ps` after `ps[0] = ..`: the
            # caller's very list or dict, which holds the callee's stores by now)
            callers.update((id(inner), x) for x, inner in pairs if not isinstance(x, Tensor))
            callers.update((id(inner), x) for x, inner, _ in lists)
            callers.update((id(inner), x) for x, inner, _ in dicts)
            return _as_callers(out, callers) if callers else out

        call.__wrapped__ = fn  # (srcad.grad(f) of the traced f transforms f itself)
        call.__name__, call.__qualname__ = fn.__name__, fn.__qualname__  # (`fn.__name__`
        # read by the user's code: a decorator's log line, a registry keyed by name)
        return call

    def _items_written_in_callee(self, pairs, held) -> set:
        """A scoped callee wrote in place into an item of a list or dict argument (`for p in
        ps: p -= t`, the item superseded: `item_written`): numpy wrote the caller's very
        array, so the caller's item is written in place too -- every other read of it (`W =
        ps[0]` before the call) takes the new value, as a write through the caller's own
        name would (not a store, which would leave them their old array). The slots so
        written, as (id(container), key)."""
        outer = {id(inner): x for x, inner in pairs if isinstance(x, Tensor)}
        done = set()
        for x, inner, before in held:
            if not isinstance(x, (TensorList, TensorDict)):
                continue
            for k, was in before.items():
                now = self.superseded.get(id(was)) if isinstance(was, Tensor) else None
                given = outer.get(id(was))  # (the caller's object in that slot)
                raw = raw_item(x, k)
                if now is None or given is None or raw_item(inner, k) is not now or \
                        now.held_in is None or (raw is not given and
                                                self.superseded.get(id(raw)) is not given):
                    continue
                reads = self.item_reads.setdefault(id(raw), (raw, []))[1]
                if not any(r is now for r in reads):
                    reads.append(now)
                now.held_in = (x, k, raw)
                self.item_written(now)
                done.add((id(x), k))
        return done

    # -- backward ----------------------------------------------------------------------------
    def backward(self, seeds: list) -> dict:
        """Adjoints by id(Tensor), from (Tensor, cotangent) seeds."""
        adj: dict[int, object] = {}
        for t, g in seeds:
            if isinstance(t, Tensor):
                _accumulate(adj, t, g)
        with Replay() as replay:
            self._backward(adj, replay)
        return adj

    def _backward(self, adj: dict, replay) -> None:
        for e in reversed(self.entries):
            replay(e.state)
            if e.kind == "enter":
                for outer, inner in e.pairs:
                    if id(inner) in adj:
                        _accumulate(adj, outer, adj.pop(id(inner)))
                continue
            g = adj.pop(id(e.out), None)
            if g is None:
                continue
            op = e.op
            out_value = _unwrap(e.out)
            if isinstance(out_value, np.ndarray) and out_value.ndim == 0 and \
                    isinstance(g, (int, float, np.generic)):
                g = np.asarray(g)  # (a 0-d array's cotangent a 0-d array: `g[...]` indexes it)
            values = {p.name: _unwrap(e.args[p.name]) if p.name in e.args else p.default
                      for p in op.params}
            if e.frozen:
                values.update(e.frozen)
            for k, v in values.items():  # a list numpy took as one array: so does the rule
                if isinstance(v, (list, tuple)) and op.takes_array(k):
                    values[k] = np.asarray(v)
            for p in op.params:
                rule = op.vjp(p.name)
                if rule is None or p.name not in e.args or not _has_tensor(e.args[p.name]):
                    continue
                c = rule.tape_fn(g, out_value, *(values[q.name] for q in op.params))
                arg = e.args[p.name]
                if isinstance(arg, Tensor):
                    _accumulate(adj, arg, _fit(c, op, out_value, arg.value))
                elif isinstance(arg, CONTAINERS):  # a container argument's own adjoint
                    _accumulate(adj, arg, c)
                else:  # a list of arrays (concatenate, stack): one piece per item
                    for item, piece in _pieces(arg, c):
                        _accumulate(adj, item, piece)


def _as_read(v):
    """An argument as a row read it, kept for the backward: a plain array the function may
    change in place later (`v += 1.0` on an array no Tensor touches) is copied, as source
    mode's code rebinds instead; a plain list or dict the function may store into later
    (`Ws[1] = ...` after `np.max(Ws)`) is kept as it is now, its Tensors themselves kept."""
    if isinstance(v, np.ndarray):
        return np.array(v, copy=True)
    if type(v) is list:
        return [_as_read(item) if type(item) in (list, dict) else item for item in v]
    if type(v) is dict:
        return {k: _as_read(item) if type(item) in (list, dict) else item
                for k, item in v.items()}
    return v


def _tensors_in(v, held: dict) -> None:
    """The Tensors `_replace` may find in an entry's argument `v` (by id, into `held`)."""
    if isinstance(v, Tensor):
        held[id(v)] = v
    elif type(v) in (list, tuple):
        for item in v:
            _tensors_in(item, held)


def _swap(seq, t, old):
    """`seq` (a plain list or tuple, nested) with the Tensor `t` replaced by `old`."""
    items = [old if v is t else _swap(v, t, old) if type(v) in (list, tuple) else v
             for v in seq]
    return tuple(items) if isinstance(seq, tuple) else items


def _pieces(arg, c):
    if type(arg) is dict:  # (a dict argument of a row: dict_set's cotangent, key by key)
        for k, item in arg.items():
            piece = c.slots.get(k) if isinstance(c, runtime.GradTree) else c.get(k)
            if piece is None:
                continue
            if isinstance(item, (Tensor, *CONTAINERS)):
                yield item, piece
            elif isinstance(item, (list, tuple, dict)):
                yield from _pieces(item, piece)
        return
    for item, piece in zip(raw_items(arg) if isinstance(arg, CONTAINERS) else arg, c):
        if isinstance(item, (Tensor, *CONTAINERS)):  # (a container: its own adjoint, which
            yield item, piece                         # its gather takes on: not iterated here)
        elif isinstance(item, (list, tuple, dict)):
            yield from _pieces(item, piece)


def _fit(c, op, out, x):
    """Source mode's `Reverse.fit`: unbroadcast a broadcasting row's contribution, cast."""
    if op.broadcasting and np.shape(c) != np.shape(x):
        return runtime.unbroadcast(c, x)
    if isinstance(out, (tuple, list, dict)):  # eigh, slogdet, split, dict_set: no one dtype
        return c
    want = np.result_type(x) if isinstance(x, (np.ndarray, np.generic)) else None
    if want is not None and np.result_type(out) != want and (
            op.broadcasting or np.shape(x) == np.shape(out)):
        return want.type(c) if np.ndim(x) == 0 else np.asarray(c).astype(want)
    return c


def _accumulate(adj: dict, t: Tensor, c) -> None:
    if id(t) in adj:
        adj[id(t)] = adj[id(t)] + c
    else:
        adj[id(t)] = c


def _cell_full(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def _is_user_function(fn) -> bool:
    """Traced as the user's code (source mode's rule: frontend/opaque.py, `library_file`)."""
    return library_file(fn) is None


def _is_user_module(mod) -> bool:
    return not is_library_module(mod)


def _importing_builtins(tape, base) -> dict:
    """The traced function's builtins: its module's, with an `__import__` whose modules the
    function sees through the tape (`Tape.wrap`), as it sees its globals: ``import math`` or
    ``from scipy.special import expit`` in the function's body binds a view, its functions
    with a row applied on the tape (source mode reads the same imports: frontend/parse.py)."""
    own = base.get("__builtins__", builtins)
    own = own if isinstance(own, dict) else vars(own)
    real = own.get("__import__", builtins.__import__)

    def traced_import(name, globals=None, locals=None, fromlist=(), level=0):
        return tape.wrap(real(name, base, locals, fromlist, level))

    return {**own, "__import__": traced_import}


def _declared_stores(code) -> tuple:
    """The module globals (`global step; step = ...`) and closure cells (`nonlocal count;
    count += 1`) that `code` assigns."""
    names, cells = set(), set()
    for ins in dis.get_instructions(code):
        if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            names.add(ins.argval)
        elif ins.opname == "STORE_DEREF" and ins.argval in code.co_freevars:
            cells.add(ins.argval)
    return names, cells


def _settling(traced, fn, g, closure, names: set, cells: set):
    """`traced`, which sets module globals or closure cells: it runs on the tape's own
    globals and cells, so each call ends by setting the user's (plain values, as source mode
    stores them: frontend/attrstate.py `declared_names`), as Python would have set them."""
    start = {i: c.cell_contents for i, c in enumerate(closure or ()) if _cell_full(c)}

    @functools.wraps(fn)
    def settled(*args, **kwargs):
        try:
            return traced(*args, **kwargs)
        finally:
            for name in names:
                if dict.__contains__(g, name) and dict.__getitem__(g, name) is not \
                        g.read.get(name, _UNSET):
                    g._base[name] = _plain_tree(dict.__getitem__(g, name))
            for i, name in enumerate(fn.__code__.co_freevars):
                if name in cells and _cell_full(closure[i]) and \
                        closure[i].cell_contents is not start.get(i, _UNSET):
                    fn.__closure__[i].cell_contents = _plain_tree(closure[i].cell_contents)

    return settled


_UNSET = object()


def _class_body_names(g, code) -> None:
    """The globals the class statements in `code` read, looked up in `g` now: a class body
    reads its globals with the dict's own lookup, which never calls `__missing__`
    (`class P(NamedTuple): W: np.ndarray` made in the function)."""
    for c in code.co_consts:
        if not isinstance(c, types.CodeType):
            continue
        if not c.co_flags & inspect.CO_OPTIMIZED:  # (a class body's code)
            for name in c.co_names:
                if name in g._base and name not in g:
                    g[name]  # noqa: B018  (`__missing__` wraps it)
        _class_body_names(g, c)


def _slots(c):
    """(key, item as stored) of a list, tuple or dict argument's container."""
    keys = list(dict.keys(c)) if isinstance(c, dict) else range(len(c))
    return [(k, raw_item(c, k)) for k in keys]


def _as_callers(out, callers: dict):
    """A scoped call's result with each Tensor that is one of the callee's own copies of an
    argument's (`def first(ps): return ps[0]`, copy.copy's `[v for v in x]`) given back as
    the caller's Tensor: Python returns that very object, which a later write in place
    through the result changes for every name holding it (the callee's writes into it were
    carried into the caller's already)."""
    if isinstance(out, Tensor) or id(out) in callers:
        return callers.get(id(out), out)
    if type(out) in (list, tuple):
        items = [_as_callers(v, callers) for v in out]
        return out if all(a is b for a, b in zip(items, out)) else type(out)(items)
    if type(out) is dict:
        items = {k: _as_callers(v, callers) for k, v in out.items()}
        return out if all(items[k] is out[k] for k in out) else items
    return out


class _TracedGlobals(dict):
    """A function's globals as the tape shows them (wrapped on first access)."""

    srcad_traced = True  # (a frame running with these globals is one the tape follows)

    def __init__(self, tape, base):
        super().__init__()
        self._tape = tape
        self._base = base
        self._builtins = None
        self.read: dict = {}  # name -> what the tape showed for it (`_settling`)
        self["__builtins__"] = _importing_builtins(tape, base)

    def __missing__(self, key):
        if key not in self._base and key in _BUILTIN_NAMES:
            if self._builtins is None:
                self._builtins = tape_builtins(self._tape, Tensor)
            value = self._builtins[key]  # (isinstance, print, float, ...: tape_builtins.py)
            self[key] = value
            return value
        value = self._tape.wrap(self._base[key])
        self[key] = value
        self.read[key] = value
        return value


# numpy callables that never hand a Tensor argument to its __array_function__ (np.full's
# dispatcher sees only `like`, np.full_like's only the prototype, not the fill value)
_NO_DISPATCH = (np.asarray, np.array, np.full, np.full_like, np.asanyarray,
                np.ascontiguousarray, np.asfortranarray, np.asarray_chkfinite, np.require,
                np.lib.stride_tricks.as_strided)  # (as_strided: no dispatcher at all)
# numpy callables with a row, besides the constructors, that make a new array (a copy)
_MAKERS = (np.array, np.asarray, np.copy)


def _ndenumerate(a):
    """np.ndenumerate over a Tensor: (index, a[index]) in numpy's order, each item a
    getitem on the tape (frontend/ndenumerate.py lowers the source form to the same indices)."""
    if not isinstance(a, Tensor):
        yield from np.ndenumerate(a)
        return
    for idx in np.ndindex(a.shape):
        yield idx, a[idx]


_NDITER_FLAGS = frozenset({"refs_ok", "zerosize_ok", "buffered", "delay_bufalloc",
                           "copy_if_overlap", "reduce_ok"})
_NDITER_READS = frozenset({"readonly", "copy", "updateifcopy", "no_broadcast", "contig",
                           "aligned", "nbo"})


def _nditer(op, flags=None, op_flags=None, order="K", **rest):
    """np.nditer over a Tensor, read only: its items in numpy's order (memory order for 'K',
    runtime_python.nditer_indices), each a getitem on the tape -- what source mode's loop
    reads (frontend/pyforms.py `nditer_loop`). Anything else is numpy's own iterator."""
    flags, op_flags = list(flags or ()), list(op_flags or ())
    if not isinstance(op, Tensor) or rest or order not in ("K", "C", "F", "A") or \
            not set(flags) <= _NDITER_FLAGS or not set(op_flags) <= _NDITER_READS:
        return np.nditer(op, flags=flags or None, op_flags=op_flags or None, order=order,
                         **rest)
    value = op.value
    index = runtime_python.nditer_indices(np.shape(value), value.strides, value.dtype.itemsize,
                                          order, "zerosize_ok" in flags)
    return (op[i] for i in index)


class _NumpyView:
    """numpy (or one of its submodules) as a traced function sees it: its callables with a
    row are `Tape.sequence_aware`."""

    def __init__(self, tape, mod):
        self._tape, self._mod = tape, mod

    def __getattr__(self, name):
        obj = getattr(self._mod, name)
        return self._tape.one_view(obj, self._view)

    def _view(self, obj):
        if isinstance(obj, types.ModuleType):
            return _NumpyView(self._tape, obj)
        if is_concatenator(obj):
            return _Concatenator(self._tape, obj)
        if isinstance(obj, np.ufunc) and table.lookup(obj) is not None:
            return _UfuncView(self._tape, obj)
        if _hashable(obj) and obj in SUBSTITUTES:  # np.polyfit: srcad/pyfuncs.py's
            return self._tape.substitute(obj)
        if _hashable(obj) and obj in CLASS_SUBSTITUTES:  # np.poly1d: srcad/pyfuncs.py's
            return CLASS_SUBSTITUTES[obj]
        if obj is np.random.default_rng:  # (its draws with Tensors: tape_tensor.py's)
            return lambda *a, **k: plain_view(np.random.default_rng(*a, **k))
        if obj is np.nditer:  # (a Tensor's items: indexed, as pyforms.nditer_loop reads)
            return _nditer
        if obj is np.ndenumerate:  # (a Tensor's items: indexed, as ndenumerate.py walks)
            return lambda a: _ndenumerate(self.asarray(a) if isinstance(a, (list, tuple))
                                          else a)
        if obj is np.vectorize:  # np.vectorize(f)(t): its loop on the tape
            return lambda *a, **k: VectorizeEager(self, _has_tensor, np.vectorize(*a, **k))
        if callable(obj) and not isinstance(obj, type) and table.lookup(obj) is not None:
            return self._tape.sequence_aware(obj)
        if callable(obj) and not isinstance(obj, type):  # no row: np.random.randn, ...
            return _plain_results(self._tape, obj)
        if isinstance(obj, type) and issubclass(obj, np.generic) and table.lookup(obj):
            return _scalar_type(self._tape, obj)
        return obj


def _plain_results(tape, fn):
    """A numpy callable with no row as traced code sees it: its array results `Plain`."""

    def call(*args, **kwargs):
        out = fn(*args, **kwargs)
        return tape.made(out) if type(out) is np.ndarray else out

    call.__wrapped__ = fn
    return call


class _UfuncView:
    """A ufunc with a row as traced code sees it: called, the row (`Tape.sequence_aware`);
    its methods with a row (``np.add.reduce``, ``np.multiply.outer``: srcad/ops/
    ufunc_methods.py) likewise; anything else is the ufunc's own."""

    def __init__(self, tape, ufunc):
        self._tape, self._ufunc = tape, ufunc
        self._call = tape.sequence_aware(ufunc)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    # the ufunc's own identity as a key and in `==` (`{np.tanh: 2.0}[act]`, `act == np.tanh`)
    def __hash__(self):
        return hash(self._ufunc)

    def __eq__(self, other):
        return other is self or other is self._ufunc or (
            isinstance(other, _UfuncView) and other._ufunc is self._ufunc)

    def __getattr__(self, name):
        obj = getattr(self._ufunc, name)
        if name == "at" and self._ufunc in AT_FORMS:  # np.add.at(t, i, v): a write (tape_tensor)
            return lambda *args: write_at(self._ufunc, args)
        if callable(obj) and table.lookup(obj) is not None:
            return self._tape.sequence_aware(obj)
        return obj


class _Concatenator:
    """np.r_ / np.c_ as traced code sees it: a subscript that holds a Tensor is the rows
    source mode lowers it to (srcad/frontend/concatenators.py), on the tape; one that holds
    none, or a form not lowered, is numpy's own (source mode refuses the latter where a
    differentiated value reaches it, before the tape runs)."""

    def __init__(self, tape, obj):
        self._tape, self._obj = tape, obj

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        if not _has_tensor(items) and not any(
                isinstance(i, slice) and _has_tensor((i.start, i.stop, i.step)) for i in items):
            return self._obj[key]

        def apply(fn, args, kwargs, final):
            del final
            args = [tuple(a[1]) if isinstance(a, tuple) else a for a in args]
            return self._tape.apply(fn, args, kwargs)

        def slice_item(item):
            if not isinstance(item, slice):
                return None
            bounds = (item.start, item.stop, item.step)
            if not _has_tensor(bounds):
                return np.r_[item]
            if isinstance(item.step, complex) or item.stop is None:
                raise LookupError(item)
            return apply(np.arange, [0 if item.start is None else item.start, item.stop,
                                     1 if item.step is None else item.step], {}, False)

        out = concatenators.lower(self._obj, items, apply,
                                  directive=lambda i: i if isinstance(i, str) else None,
                                  slice_item=slice_item)
        return self._obj[key] if out is None else out

    def __getattr__(self, name):
        return getattr(self._obj, name)


class _SameType(type):
    """The metaclass of `_scalar_type`'s stand-ins: numpy's own scalars are instances."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.__mro__[1])

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.__mro__[1])


def _scalar_type(tape, kind):
    """A numpy scalar type with a row (np.float64, np.int64) as traced code sees it: called on
    a Tensor it is the row, on the tape (np.float64(t) is a differentiable cast, np.int64(t)
    an index with no gradient -- numpy alone would take the plain value, silently dropping the
    gradient or refusing); as a dtype, in isinstance or np.finfo it is `kind` itself."""
    made = tape._scalar_types.get(kind)
    if made is None:
        def new(cls, *args, **kwargs):
            if any(_has_tensor(a) for a in (*args, *kwargs.values())):
                return tape.apply(kind, args, kwargs)
            return kind(*args, **kwargs)

        made = _SameType(kind.__name__, (kind,), {"__new__": new, "__module__": "numpy"})
        tape._scalar_types[kind] = made
    return made


class _ModuleView:
    def __init__(self, tape, mod):
        self._tape, self._mod = tape, mod

    def __getattr__(self, name):
        return self._tape.wrap(getattr(self._mod, name))


def _wrap_args(tape, values, wrt_mask):
    """Wrap float arguments (and the float leaves of pytrees) that gradients are asked for."""

    def leaf(x):
        if isinstance(x, (np.ndarray, np.generic, float)) and np.issubdtype(
                np.result_type(x), np.floating):
            t = Tensor(x, tape)
            tape.origin[id(t)] = t
            return t
        return x

    # (a scipy.sparse argument: `L @ t` on the tape, as a module's sparse matrix is)
    return [wrap_container(v, tape, leaf) if w else SparseView(tape, v) if is_sparse(v) else
            plain_view(v) for v, w in zip(values, wrt_mask)]


def _raw_tree(x, superseded=None):
    """A container's structure as plain dicts, lists and tuples, its leaves as they are (or,
    given `superseded`, as written in place since through another holder: `Tape.item_written`,
    what reading the item would give)."""
    if isinstance(x, TensorDict):
        return (AttrItems if isinstance(x, AttrTensorDict) else dict)(
            {k: _raw_tree(dict.__getitem__(x, k), superseded) for k in x.keys()})
    if isinstance(x, CONTAINERS):
        items = [_raw_tree(v, superseded) for v in raw_items(x)]
        return tuple(items) if isinstance(x, tuple) else items
    if superseded and isinstance(x, Tensor):
        return superseded.get(id(x), x)
    return x


def _entry_tree(x):
    """A container argument's structure as plain dicts, lists and tuples, its leaves as the
    call gave them: an item the function stored since (`ps[1] = x`) is not the argument's
    leaf -- its cotangent is the stored value's (another argument's, if it is one)."""
    if isinstance(x, TensorDict):
        return (AttrItems if isinstance(x, AttrTensorDict) else dict)(
            {k: _entry_tree(v) for k, v in x.entry.items()})
    if isinstance(x, TensorList):
        return [_entry_tree(v) for v in x.entry]
    if isinstance(x, CONTAINERS):
        items = [_entry_tree(v) for v in raw_items(x)]
        return tuple(items) if isinstance(x, tuple) else items
    return x


def _collect(wrapped, original, adj, origin=None):
    """The gradient for one argument, in its own structure (zeros where nothing flowed): a
    container's own adjoint (its gathers, numpy using it as an array), plus what reached its
    leaves directly (a callee's, a plain list's pieces)."""
    if isinstance(wrapped, CONTAINERS):
        if isinstance(wrapped, TensorDict) and isinstance(original, dict) and \
                set(original) != set(wrapped.entry_keys):
            # (a key the function stored into the caller's dict is no argument's: the
            # gradient has the keys given, as source mode's and JAX's)
            original = {k: original[k] for k in wrapped.entry_keys if k in original}
        direct = _collect(_entry_tree(wrapped), original, adj, origin)
        d = adj.get(id(wrapped))
        return direct if d is None else _add_trees(runtime.as_grad(d, original), direct)
    if isinstance(wrapped, dict):
        return {k: _collect(wrapped[k], original[k], adj, origin) for k in original}
    if isinstance(wrapped, (list, tuple)):
        items = [_collect(w, o, adj, origin) for w, o in zip(wrapped, original)]
        return type(original)(*items) if hasattr(type(original), "_fields") else \
            type(original)(items)
    if isinstance(wrapped, Tensor):
        first = (origin or {}).get(id(wrapped), wrapped)
        d = adj.get(id(first))
        if d is None:
            return runtime.zeros_grad_leaf(original)
        return runtime.as_grad(d, original)
    return None


def _add_trees(a, b):
    """Leaf by leaf a + b of two gradients of one structure (b's zeros add nothing)."""
    if isinstance(a, dict):
        return {k: _add_trees(a[k], b[k]) for k in a}
    if isinstance(a, (list, tuple)):
        items = [_add_trees(x, y) for x, y in zip(a, b)]
        return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
    if b is None or not np.any(b):
        return a
    return a + b


def untraced(fn):
    """What a traced function's view of a callable stands for: the user's function or numpy's
    callable itself (srcad.vjp / srcad.jvp called in traced code transform that object)."""
    if isinstance(fn, _UfuncView):
        return fn._ufunc
    if getattr(fn, "__module__", None) == __name__ and hasattr(fn, "__wrapped__"):
        return fn.__wrapped__
    return fn


def run(fn, values, wrt_mask, names):
    """Run `fn` on the tape: (tape, wrapped args, output). `values` are the values of fn's
    parameters `names` (a `*rest` one a tuple, a `**kw` one a dict), passed as fn takes them
    (names None: every value positionally). With the BLAS at one thread where srcad's
    generated code runs it so (srcad.build.pinned): the same products, the same bits."""
    return pinned(_run)(fn, values, wrt_mask, names)


def _run(fn, values, wrt_mask, names):
    tape = Tape()
    wrapped = _wrap_args(tape, values, wrt_mask)
    func = fn.__func__ if inspect.ismethod(fn) else fn
    given = dict(zip(names, wrapped)) if names is not None else {}
    args, kwargs = [] if names is not None else list(wrapped), {}
    for p in inspect.signature(func).parameters.values():
        if p.name not in given:  # (a bound method's object; names None: all positional)
            continue
        v = given[p.name]
        if p.kind is p.VAR_POSITIONAL:
            args.extend(v)
        elif p.kind is p.VAR_KEYWORD:
            kwargs.update(v)
        elif p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = v
        else:
            args.append(v)
    for v in (*values, getattr(fn, "__self__", None)):
        # (an object given to fn, and those an argument holds: `layers`, `model.layers`)
        tape.follow_reachable(v)
    try:
        if inspect.ismethod(fn):  # a bound method: its object comes first, as a constant
            out = tape.traced(fn.__func__)(fn.__self__, *args, **kwargs)
        else:
            out = tape.traced(fn)(*args, **kwargs)
    except ValueError as e:
        # numpy turns our refusal to become a float (`a[i] = t` into a plain array) into
        # "setting an array element with a sequence": say what really happened
        if isinstance(e.__cause__, SrcadError):
            raise e.__cause__ from None
        raise
    finally:
        tape.restore_classes()
    return tape, wrapped, out


def settle_kept(tape, stored=()) -> None:
    """After the run: the lists and dicts of modules and closures the function stored into
    (`history.append(h)`, `CACHE["h"] = h`: frontend/kept_globals.py) hold plain values, as
    after a call in source mode -- those its traced code looked up, and `stored`, those the
    IR stores into (a method of an object the tape did not follow looks its globals up
    itself)."""
    held = {**tape.kept, **{id(c): c for c in stored}}
    for module in {sys.modules.get(name) for name in tape.modules} - {None}:
        # (a module the followed classes live in: a container of its that a method of theirs
        # run as Python's stored into -- `LOG.append(z)` in a layer reached through `[*net.
        # layers]` -- holds plain values too; it kept the tape's Tensor before the session
        # of 2026-12-06, ninth)
        held.update({id(v): v for v in list(vars(module).values()) if kept_container(v)})
    for c in held.values():
        if type(c) in (list, dict):
            _plain_in_place(c)
        elif isinstance(c, (dict, collections.deque)):  # (OrderedDict, defaultdict, deque)
            for k in (list(c.keys()) if isinstance(c, dict) else range(len(c))):
                if isinstance(c[k], (Tensor, Plain)) or isinstance(c[k], CONTAINERS):
                    c[k] = _plain_tree(c[k])


def settle_arguments(values, wrapped) -> None:
    """After the run: a dict (or list) argument the function stored into (``param[k] = v``)
    holds plain values, as after a call in source mode -- the caller's own object, also when
    the tape followed a wrapped copy of it."""
    for original, w in zip(values, wrapped):
        if w is original:  # (not followed: the function ran on the caller's own object)
            _plain_in_place(original)
        elif isinstance(original, dict):
            keys = list(w.keys()) if isinstance(w, dict) else []
            for k in keys:
                if k in getattr(w, "written", ()) or k not in original:
                    _settle_slot(original, w, k, dict.__setitem__)
        elif type(original) is list and isinstance(w, list) and getattr(w, "written", None):
            for i in w.written:  # (`Ws[i] = v` into a list argument: the caller's list)
                _settle_slot(original, w, i)
        _settle_items_written(original, w)


def _settle_slot(original, w, k, put=operator.setitem) -> None:
    """The caller's `original[k]` after the function stored into slot k of its follower `w`:
    the stored value, plain -- or, where the function wrote into the container that slot held
    (`p[0][1] = v`, `L = p["layers"]; L[0] = v`: Python writes the caller's own list), that
    container written in place, so that a name the caller bound to it sees the write."""
    v = raw_item(w, k)
    for gone in getattr(w, "replaced_in_place", {}).get(k, ()):
        # (the caller's container once in this slot, written before the slot was replaced:
        # Python wrote that very object, which a name of the caller's may hold)
        if type(original[k]) in (list, dict) and isinstance(gone, CONTAINERS):
            _settle_in_place(original[k], gone)
    own = original[k] if k in getattr(w, "in_place", ()) else None
    if type(own) in (list, dict) and isinstance(v, CONTAINERS) and not isinstance(v, tuple):
        _settle_in_place(own, v)
    else:
        put(original, k, _plain_tree(v))


def _settle_in_place(own, follower) -> None:
    """The caller's own list or dict `own` after the function wrote into it through the tape's
    `follower`: each slot stored, then the items written in place."""
    for j in list(follower.written):
        _settle_slot(own, follower, j)
    _settle_items_written(own, follower)


def _settle_items_written(original, w) -> None:
    """An argument's item written in place through a name where the tape could not store it
    into the container it was read from (`q = p[1:]; W = q[0]; W *= 2`, a list read as a
    slice): the caller's list or dict holds its value, as where it could (`Tape.item_written`;
    a tuple's item is left as it came in, as source mode leaves it)."""
    if not isinstance(w, CONTAINERS) or type(original) not in (list, dict, tuple):
        return
    keys = list(w.keys()) if isinstance(w, TensorDict) else range(len(w))
    for k in keys:
        if k in getattr(w, "written", ()) or (isinstance(original, dict) and k not in original):
            # (stored: into the caller's own container at this depth -- `p[0][1] = v` writes
            # the list the caller's p[0] is -- settled above at the top)
            if type(original) is not tuple:
                _settle_slot(original, w, k)
            continue
        v = raw_item(w, k)
        now = v.tape.superseded.get(id(v)) if isinstance(v, Tensor) else None
        if now is not None and type(original) is not tuple:
            original[k] = value_of(now)
        elif isinstance(v, CONTAINERS):
            _settle_items_written(original[k], v)


def _plain_tree(x):
    """What a store left in a followed container, as plain values: dicts, lists and tuples
    of arrays (a Tensor's value), as source mode leaves the caller's object."""
    if isinstance(x, (Tensor, Plain)):
        return value_of(x)
    if isinstance(x, TensorDict):
        return {k: _plain_tree(dict.__getitem__(x, k)) for k in x.keys()}
    if isinstance(x, CONTAINERS):
        items = [_plain_tree(v) for v in raw_items(x)]
        return tuple(items) if isinstance(x, tuple) else items
    if type(x) is dict:  # (a new one: the tape's own stays as the backward reads it)
        return {k: _plain_tree(v) for k, v in x.items()}
    if type(x) is list:
        return [_plain_tree(v) for v in x]
    return x


def _plain_in_place(x) -> None:
    """A plain list or dict of the caller's the function stored Tensors into, at any depth:
    their values in their place."""
    keys = list(x.keys()) if type(x) is dict else range(len(x)) if type(x) is list else ()
    for k in keys:
        v = x[k]
        if isinstance(v, (Tensor, Plain)) or isinstance(v, CONTAINERS):
            x[k] = _plain_tree(v)
        elif type(v) in (list, dict):
            _plain_in_place(v)


def grads(tape, wrapped, values, out, cotangent, wrt_mask):
    return pinned(_grads)(tape, wrapped, values, out, cotangent, wrt_mask)


def _grads(tape, wrapped, values, out, cotangent, wrt_mask):
    if isinstance(out, tuple):
        seeds = list(zip(out, cotangent))
    else:
        seeds = [(out, cotangent)]
    adj = tape.backward(seeds)
    return [(_collect(w, v, adj, tape.origin) if m else None)
            for w, v, m in zip(wrapped, values, wrt_mask)]


def value_of(out):
    if isinstance(out, tuple):
        return tuple(value_of(o) for o in out)
    if type(out) is Plain:
        return out.view(np.ndarray)
    return out.value if isinstance(out, Tensor) else out
