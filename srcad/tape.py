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
"""

from __future__ import annotations

import builtins
import dis
import inspect
import operator
import sys
import types

import numpy as np

from . import runtime
from .errors import SrcadError
from .frontend.opaque import is_library_module, library_file
from .interpret import check_inplace
from .ops import table
from .tape_builtins import LibraryView, plain_call, tape_builtins
from .tape_containers import CONTAINERS, TensorDict, raw_item, raw_items, rewrap, wrap_container


_BUILTIN_NAMES = {"round", "isinstance", "print", "repr", "format", "hash", "id", "sorted"}


class Tensor:
    """A float value the tape follows."""

    __slots__ = ("value", "tape", "view")
    __array_priority__ = 1000

    def __init__(self, value, tape):
        self.value = value
        self.tape = tape
        self.view = None  # (base Tensor, kind, arg) while this value is a view of the base

    # numpy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        if method != "__call__" or (out is not None and not (
                len(out) == 1 and out[0] is inputs[0] and isinstance(inputs[0], np.ndarray))):
            raise SrcadError(f"tape mode: `{ufunc.__name__}.{method}` / out= is not "
                             f"differentiable", hint="call the ufunc directly, without out=")
        # `a += t` with `a` a plain array: a new value that Python binds to `a` (source mode's
        # `a = a + t`), the array itself unchanged -- unless `a` is a view of another array,
        # which numpy would change and the tape cannot
        if out is not None and isinstance(out[0], np.ndarray) and (
                out[0].base is not None or sys.getrefcount(out[0]) > _LONE_REFS):
            # a plain array with a view or another name: numpy changes what they see
            raise SrcadError(
                f"tape mode: `{ufunc.__name__}` writes a differentiable value in place into a "
                f"plain array; numpy changes it (and its views and aliases), which the tape "
                f"cannot follow",
                hint="make the buffer with np.zeros_like(x) of a differentiable x, or build "
                "the result with np.stack / np.concatenate, or use mode='source'")
        py = _PY.get(ufunc)
        return self.tape.apply(ufunc, inputs, kwargs, py)

    def __array_function__(self, func, types_, args, kwargs):
        return self.tape.apply(func, args, kwargs)

    # attributes
    shape = property(lambda self: np.shape(self.value))
    ndim = property(lambda self: np.ndim(self.value))
    size = property(lambda self: np.size(self.value))
    dtype = property(lambda self: np.result_type(self.value))
    T = property(lambda self: self.tape.apply(np.transpose, (self,), {}))

    def __len__(self):
        return len(self.value)

    def __iter__(self):
        for i in range(len(self.value)):
            yield self.tape.apply(operator.getitem, (self, i), {})

    def __bool__(self):
        return bool(self.value)

    def __float__(self):
        # float(t), math.sqrt(t): source mode runs them on the value where check_opaque has
        # made sure the gradient does not need their result (and refuses them otherwise)
        if _called(sys._getframe(1)):
            return float(self.value)
        # numpy calls this to store a value into a plain array (`out[i] = t`): the gradient
        # would be silently wrong
        raise SrcadError(
            "tape mode: a differentiable value is being turned into a plain float (float(x), "
            "or `a[i] = x` into an array the tape does not follow), which loses its gradient",
            hint="build the array from differentiable values (np.stack, np.concatenate), or "
            "use mode='source', which differentiates `a[i] = x`")

    def __array__(self, dtype=None, copy=None):
        # numpy wants a plain array (`a[i] = t` into an array the tape does not follow): the
        # value would lose its gradient
        raise SrcadError(
            "tape mode: a differentiable value is being stored into a plain array (`a[i] = x`), "
            "which loses its gradient",
            hint="make the array with np.zeros_like(x) of a differentiable x, or build it with "
            "np.stack / np.concatenate, or use mode='source', which differentiates `a[i] = x`")

    def __index__(self):
        return operator.index(self.value)

    def __int__(self):  # int(t): no derivative (a row with none, as in source mode)
        return int(self.value)

    def __round__(self, ndigits=None):
        return round(self.value, ndigits)

    def __repr__(self):
        return f"Tensor({self.value!r})"

    def __str__(self):
        return str(self.value)

    def __format__(self, spec):
        return format(self.value, spec)

    def __getattr__(self, attr):
        # an attribute or method with no rule (x.itemsize, x.tolist()): source mode runs it on
        # the value once check_opaque has made sure the gradient does not need it
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.value, attr)

    def __getitem__(self, index):
        return self.tape.apply(operator.getitem, (self, index), {})

    def __setitem__(self, index, value):
        """x[i] = v, copy on write as in source mode: the Tensor the user's name holds takes
        the new value, and the tape's earlier references move to a Tensor for the old one."""
        self.tape.setitem(self, index, value)

    # methods, as source mode's normaliser maps them
    def sum(self, *a, **k):
        return self.tape.apply(np.sum, (self, *a), k)

    def mean(self, *a, **k):
        return self.tape.apply(np.mean, (self, *a), k)

    def max(self, *a, **k):
        return self.tape.apply(np.max, (self, *a), k)

    def min(self, *a, **k):
        return self.tape.apply(np.min, (self, *a), k)

    def prod(self, *a, **k):
        return self.tape.apply(np.prod, (self, *a), k)

    def var(self, *a, **k):
        return self.tape.apply(np.var, (self, *a), k)

    def std(self, *a, **k):
        return self.tape.apply(np.std, (self, *a), k)

    def cumsum(self, *a, **k):
        return self.tape.apply(np.cumsum, (self, *a), k)

    def cumprod(self, *a, **k):
        return self.tape.apply(np.cumprod, (self, *a), k)

    def trace(self, *a, **k):
        return self.tape.apply(np.trace, (self, *a), k)

    def diagonal(self, *a, **k):
        return self.tape.apply(np.diagonal, (self, *a), k)

    def repeat(self, *a, **k):
        return self.tape.apply(np.repeat, (self, *a), k)

    def take(self, *a, **k):
        return self.tape.apply(np.take, (self, *a), k)

    def flatten(self):
        return self.tape.apply(runtime.flatten, (self,), {})

    def reshape(self, *shape, **k):
        shape = shape[0] if len(shape) == 1 else shape
        return self.tape.apply(np.reshape, (self, shape), k)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 else (axes or None)
        return self.tape.apply(np.transpose, (self,), {} if axes is None else {"axes": axes})

    def swapaxes(self, a, b):
        return self.tape.apply(np.swapaxes, (self, a, b), {})

    def squeeze(self, *a, **k):
        return self.tape.apply(np.squeeze, (self, *a), k)

    def ravel(self):
        return self.tape.apply(np.ravel, (self,), {})

    def copy(self):
        return self.tape.apply(np.copy, (self,), {})

    def dot(self, other):
        return self.tape.apply(np.dot, (self, other), {})

    def clip(self, *a, **k):
        return self.tape.apply(np.clip, (self, *a), k)

    def astype(self, dtype):
        return self.tape.apply(runtime.astype, (self, dtype), {})

    def argmax(self, *a, **k):
        return np.argmax(self.value, *a, **k)

    def argmin(self, *a, **k):
        return np.argmin(self.value, *a, **k)


_CALLS = {dis.opmap[n] for n in ("CALL", "PRECALL", "CALL_FUNCTION", "CALL_METHOD",
                                  "CALL_FUNCTION_KW", "CALL_FUNCTION_EX", "CALL_KW")
          if n in dis.opmap}


def _called(frame) -> bool:
    """Is `frame` (the user's code) at a call -- float(t) -- rather than a store (a[i] = t)?"""
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] in _CALLS


class _RefProbe:
    """Measures how many references numpy's in-place call path itself holds to `a` in
    `a += t` (t overriding the ufunc): one more means another name or a view holds `a`."""

    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        self.refs = sys.getrefcount(out[0])
        return 0.0


def _lone_refs() -> int:
    probe = _RefProbe()
    a = np.zeros(1)
    a += probe
    return probe.refs


_LONE_REFS = _lone_refs()


_PY = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
       np.true_divide: operator.truediv, np.power: operator.pow, np.matmul: operator.matmul,
       np.less: operator.lt, np.less_equal: operator.le, np.greater: operator.gt,
       np.greater_equal: operator.ge, np.equal: operator.eq, np.not_equal: operator.ne,
       operator.floordiv: operator.floordiv, operator.mod: operator.mod}


def _binary(fn, reflected=False):
    # an operator computes as Python's operator does on the values, as source mode's
    # generated `x ** 3` does: numpy scalars use their own scalar math, not the ufunc
    py = _PY[fn]
    if reflected:
        return lambda self, other: self.tape.apply(fn, (other, self), {}, py)
    return lambda self, other: self.tape.apply(fn, (self, other), {}, py)


def _inplace(fn):
    # `x += t`: numpy writes into an array (its aliases and views see it, its base too),
    # and rebinds a scalar -- source mode's `x = x + t` plus what propagate_write rebuilds
    py = _PY[fn]

    def op(self, other):
        new = self.tape.apply(fn, (self, other), {}, py)
        check_inplace(self.value, new.value if isinstance(new, Tensor) else new)
        if ((self.view is not None or isinstance(self.value, np.ndarray))
                and isinstance(new, Tensor) and np.shape(new.value) == np.shape(self.value)):
            self.tape.write(self, lambda old: new)
            return self
        return new

    return op


for _name, _fn in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.true_divide), ("pow", np.power), ("matmul", np.matmul)]:
    setattr(Tensor, f"__{_name}__", _binary(_fn))
    setattr(Tensor, f"__r{_name}__", _binary(_fn, reflected=True))
    setattr(Tensor, f"__i{_name}__", _inplace(_fn))
for _name, _fn in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal),
                   ("floordiv", operator.floordiv), ("mod", operator.mod)]:
    setattr(Tensor, f"__{_name}__", _binary(_fn))
Tensor.__rmod__ = _binary(operator.mod, reflected=True)  # (2.5 % x: a float remainder)
Tensor.__neg__ = lambda self: self.tape.apply(np.negative, (self,), {}, operator.neg)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: self.tape.apply(np.absolute, (self,), {})
Tensor.__hash__ = object.__hash__


def _unwrap(x):
    if isinstance(x, Tensor):
        return x.value
    if isinstance(x, TensorDict):
        return {k: _unwrap(dict.__getitem__(x, k)) for k in x.keys()}
    if isinstance(x, CONTAINERS):
        items = [_unwrap(v) for v in raw_items(x)]
        return tuple(items) if isinstance(x, tuple) else items
    if isinstance(x, list):
        return [_unwrap(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_unwrap(v) for v in x)
    if type(x) is dict:
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _has_tensor(x) -> bool:
    if isinstance(x, Tensor):
        return True
    if isinstance(x, CONTAINERS):
        return any(_has_tensor(v) for v in raw_items(x))
    if isinstance(x, (list, tuple)):
        return any(_has_tensor(v) for v in x)
    if type(x) is dict:
        return any(_has_tensor(v) for v in x.values())
    return False


class Entry:
    __slots__ = ("op", "args", "out", "kind", "pairs")

    def __init__(self, op, args, out, kind="op", pairs=None):
        self.op = op  # the row
        self.args = args  # param name -> argument as given (Tensors inside)
        self.out = out  # the result Tensor
        self.kind = kind  # "op", or "call": leaving a user function (backward adds back)
        self.pairs = pairs  # for "call": [(outer Tensor, inner Tensor), ...]


_VIEW_KINDS = {operator.getitem: "index", np.transpose: "transpose", np.swapaxes: "swapaxes"}


class Tape:
    def __init__(self):
        self.entries: list[Entry] = []
        self._traced: dict = {}
        self._scalar_types: dict = {}  # np.float64 -> its stand-in (see `_scalar_type`)
        self.views: dict = {}  # id -> Tensor that is a view of another, in creation order
        self.origin: dict = {}  # id(argument Tensor) -> the Tensor of its value on entry

    # -- forward -----------------------------------------------------------------------------
    def apply(self, fn, args, kwargs, py_operator=None):
        op = table.lookup(fn)
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
            raise SrcadError(f"tape mode: {e}") from None
        values = {k: _unwrap(v) for k, v in bound.items()}
        positional, keywords = op.call_parts(values)
        result = (py_operator(*positional) if py_operator is not None
                  else op.fn(*positional, **keywords))
        if op.family == "constructor" and isinstance(result, np.ndarray) and any(
                _has_tensor(v) for v in bound.values()):
            # np.zeros_like(x): a buffer the function may write differentiable values into,
            # in place or through views -- a Tensor (with no history) follows them
            return Tensor(result, self)
        if not op.differentiable or not any(_has_tensor(bound[p]) for p in bound
                                            if op.vjp(p) is not None):
            return result
        out = Tensor(result, self)
        # a plain array the backward will read may be changed in place later (v += 1.0 on an
        # array no Tensor touches): keep a copy of it, as source mode's code rebinds instead
        saved = {k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
                 for k, v in bound.items()}
        self.entries.append(Entry(op, saved, out))
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

    def index_container(self, c, index):
        """`c[index]` of a container argument (srcad/tape_containers.py): a gather recorded
        with a fresh Tensor (a fresh container for a slice or a nested container) as its
        result, as source mode's `p[i]` is a getitem with an adjoint of its own."""
        raw = raw_item(c, index)
        if isinstance(raw, Tensor):
            out = Tensor(raw.value, self)
        elif isinstance(raw, CONTAINERS) or (isinstance(raw, (list, tuple))
                                             and isinstance(index, slice)):
            out = rewrap(raw, self, like=c if isinstance(index, slice) else None)
        else:
            return raw
        if not _has_tensor(out):
            return raw
        self.entries.append(Entry(table.lookup(operator.getitem), {"a": c, "index": index},
                                  out))
        return out

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
        at = t
        while at.view is not None:
            base, kind, arg = at.view
            if id(base) in done:
                break
            if kind == "opaque":
                raise SrcadError(
                    "tape mode: a write through a view made by reshape/ravel/squeeze/... "
                    "(numpy shares memory here) is not followed",
                    hint="copy before writing (r = r.copy()), or write into the base array")
            self._replace(base, lambda old, k=kind, a=arg, v=at: self._write_back(old, k, a, v))
            done.add(id(base))
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
                changed = True

    def _write_back(self, old_base, kind, arg, view):
        if kind == "index":
            return self.apply(runtime.setitem, (old_base, arg, view), {})
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
        if kind == "transpose":
            return self.apply(np.transpose, (base, arg), {})
        return self.apply(np.swapaxes, (base, arg[0], arg[1]), {})

    def _replace(self, t: Tensor, make) -> None:
        old = Tensor(t.value, self)
        if id(t) in self.origin and self.origin[id(t)] is t:
            self.origin[id(t)] = old  # an argument's gradient is for its value on entry
        for e in self.entries:
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
            for e in self.entries:
                if e.out is new:
                    e.out = t
        else:
            t.value = new

    # -- user functions ----------------------------------------------------------------------
    def traced(self, fn):
        """`fn` with its globals (and closure) seen through the tape: registered user rules
        become ops and calls to other user functions become scoped calls."""
        if fn in self._traced:
            return self._traced[fn]
        g = _TracedGlobals(self, fn.__globals__)
        closure = None
        if fn.__closure__:
            closure = tuple(types.CellType(self.wrap(c.cell_contents)) if _cell_full(c) else c
                            for c in fn.__closure__)
        out = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, closure)
        out.__kwdefaults__ = fn.__kwdefaults__
        self._traced[fn] = out
        return out

    def wrap(self, obj):
        """What a traced function sees for a global or closure value."""
        if isinstance(obj, types.FunctionType):
            op = table.lookup(obj)
            if op is not None:
                return lambda *a, **k: self.apply(obj, a, k)
            if _is_user_function(obj):
                return self.scoped(obj)
            if not (obj.__module__ or "").startswith(("numpy", "srcad")):
                return plain_call(obj, Tensor)  # a library's function (see tape_builtins.py)
        if isinstance(obj, types.ModuleType) and _is_user_module(obj):
            return _ModuleView(self, obj)
        if isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] == "numpy":
            return _NumpyView(self, obj)
        if isinstance(obj, types.ModuleType) and not obj.__name__.startswith("srcad"):
            return LibraryView(obj, Tensor, is_library_module)
        if isinstance(obj, types.BuiltinFunctionType) and table.lookup(obj) is None and \
                not (getattr(obj, "__module__", None) or "").startswith("numpy"):
            return plain_call(obj, Tensor)  # (from math import sqrt)
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
            return fn(*args, **kwargs)

        return call

    def scoped(self, fn):
        traced = self.traced(fn)

        def call(*args, **kwargs):
            pairs = []

            def fresh(x):
                if isinstance(x, Tensor):
                    inner = Tensor(x.value, self)
                    pairs.append((x, inner))
                    return inner
                if isinstance(x, CONTAINERS):  # the callee's own container (and leaves)
                    inner = wrap_container(_raw_tree(x), self, fresh)
                    pairs.append((x, inner))
                    return inner
                if isinstance(x, dict):
                    return {k: fresh(v) for k, v in x.items()}
                if isinstance(x, (list, tuple)):
                    return type(x)(fresh(v) for v in x)
                return x

            args = tuple(fresh(a) for a in args)
            kwargs = {k: fresh(v) for k, v in kwargs.items()}
            self.entries.append(Entry(None, None, None, kind="enter", pairs=pairs))
            return traced(*args, **kwargs)

        return call

    # -- backward ----------------------------------------------------------------------------
    def backward(self, seeds: list) -> dict:
        """Adjoints by id(Tensor), from (Tensor, cotangent) seeds."""
        adj: dict[int, object] = {}
        for t, g in seeds:
            if isinstance(t, Tensor):
                _accumulate(adj, t, g)
        for e in reversed(self.entries):
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
            values = {p.name: _unwrap(e.args[p.name]) if p.name in e.args else p.default
                      for p in op.params}
            for k, v in values.items():  # a list numpy took as one array: so does the rule
                if isinstance(v, (list, tuple)) and op.takes_array(k):
                    values[k] = np.asarray(v)
            for p in op.params:
                rule = op.vjp(p.name)
                if rule is None or p.name not in e.args or not _has_tensor(e.args[p.name]):
                    continue
                c = rule.fn(g, out_value, *(values[q.name] for q in op.params))
                arg = e.args[p.name]
                if isinstance(arg, Tensor):
                    _accumulate(adj, arg, _fit(c, op, out_value, arg.value))
                elif isinstance(arg, CONTAINERS):  # a container argument's own adjoint
                    _accumulate(adj, arg, c)
                else:  # a list of arrays (concatenate, stack): one piece per item
                    for item, piece in _pieces(arg, c):
                        _accumulate(adj, item, piece)
        return adj


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
            if isinstance(item, Tensor):
                yield item, piece
            elif isinstance(item, (list, tuple, dict)):
                yield from _pieces(item, piece)
        return
    for item, piece in zip(arg, c):
        if isinstance(item, Tensor):
            yield item, piece
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


class _TracedGlobals(dict):
    """A function's globals as the tape shows them (wrapped on first access)."""

    def __init__(self, tape, base):
        super().__init__()
        self._tape = tape
        self._base = base
        self._builtins = None
        self["__builtins__"] = base.get("__builtins__", builtins)

    def __missing__(self, key):
        if key not in self._base and key in _BUILTIN_NAMES:
            if self._builtins is None:
                self._builtins = tape_builtins(self._tape, Tensor)
            value = self._builtins[key]  # (isinstance, print, float, ...: tape_builtins.py)
            self[key] = value
            return value
        value = self._tape.wrap(self._base[key])
        self[key] = value
        return value


# numpy callables that never hand a Tensor argument to its __array_function__
_NO_DISPATCH = (np.asarray, np.array)


class _NumpyView:
    """numpy (or one of its submodules) as a traced function sees it: its callables with a
    row are `Tape.sequence_aware`."""

    def __init__(self, tape, mod):
        self._tape, self._mod = tape, mod

    def __getattr__(self, name):
        obj = getattr(self._mod, name)
        if isinstance(obj, types.ModuleType):
            return _NumpyView(self._tape, obj)
        if callable(obj) and not isinstance(obj, type) and table.lookup(obj) is not None:
            return self._tape.sequence_aware(obj)
        if isinstance(obj, type) and issubclass(obj, np.generic) and table.lookup(obj):
            return _scalar_type(self._tape, obj)
        return obj


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

    return [wrap_container(v, tape, leaf) if w else v for v, w in zip(values, wrt_mask)]


def _raw_tree(x):
    """A container's structure as plain dicts, lists and tuples, its leaves as they are."""
    if isinstance(x, TensorDict):
        return {k: _raw_tree(dict.__getitem__(x, k)) for k in x.keys()}
    if isinstance(x, CONTAINERS):
        items = [_raw_tree(v) for v in raw_items(x)]
        return tuple(items) if isinstance(x, tuple) else items
    return x


def _collect(wrapped, original, adj, origin=None):
    """The gradient for one argument, in its own structure (zeros where nothing flowed): a
    container's own adjoint (its gathers, numpy using it as an array), plus what reached its
    leaves directly (a callee's, a plain list's pieces)."""
    if isinstance(wrapped, CONTAINERS):
        direct = _collect(_raw_tree(wrapped), original, adj, origin)
        d = adj.get(id(wrapped))
        return direct if d is None else _add_trees(runtime.as_grad(d, original), direct)
    if isinstance(wrapped, dict):
        return {k: _collect(wrapped[k], original[k], adj, origin) for k in original}
    if isinstance(wrapped, (list, tuple)):
        return type(original)(_collect(w, o, adj, origin) for w, o in zip(wrapped, original))
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


def run(fn, values, wrt_mask):
    """Run `fn` on the tape: (tape, wrapped args, output)."""
    tape = Tape()
    wrapped = _wrap_args(tape, values, wrt_mask)
    try:
        if inspect.ismethod(fn):  # a bound method: its object comes first, as a constant
            out = tape.traced(fn.__func__)(fn.__self__, *wrapped)
        else:
            out = tape.traced(fn)(*wrapped)
    except ValueError as e:
        # numpy turns our refusal to become a float (`a[i] = t` into a plain array) into
        # "setting an array element with a sequence": say what really happened
        if isinstance(e.__cause__, SrcadError):
            raise e.__cause__ from None
        raise
    return tape, wrapped, out


def grads(tape, wrapped, values, out, cotangent, wrt_mask):
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
    return out.value if isinstance(out, Tensor) else out
