"""Normalising calls: op-table rows, user functions, and calls with no rule (a mixin).

`CallsMixin.call` lowers ``f(args)`` in the user's function to one of
  * an op-table row bound to its parameters (``np.sum(x, 1)`` -> ``sum(a=x, axis=1)``);
  * an `ir.UserCall` of another user function, normalised as a subroutine of its own (a
    function defined in the user's code, or a nested def / lambda lifted out of the function,
    see closures.py);
  * an opaque op made for this call site (opaque.py): a library function, a builtin, a class,
    a method with no row, a callable held in a local -- run as written, checked once the
    arguments being differentiated are known.
Star arguments (``np.random.RandomState(0).randn(*x.shape)``) are allowed where the call is
opaque, and in ``x.reshape(*shape)``.

Before/after:
    noise = np.random.default_rng(0).standard_normal(x.shape)
        noise_default_rng = np.random.default_rng(0)          (opaque call)
        x_shape = x.shape                                      (row: shape)
        noise = noise_default_rng.standard_normal(x_shape)    (opaque method)
"""

from __future__ import annotations

import ast
import builtins
import collections
import contextlib
import copy
import functools
import inspect
import operator
import types

import gast
import numpy as np

from .. import ir, runtime_python
from ..binding import _hashable
from ..checkpoint import Checkpointed
from ..ops import control, table
from ..ops.composed import transformed_call_op
from ..ops.python_rows import dict_literal_op, namedtuple_op, replace_op
from ..errors import DictUnknownError, SharingUnknownError, SrcadError, at_call_site, \
    in_substitute
from ..pyfuncs import GENERATOR_DRAWS, SUBSTITUTES, label_of
from ..runtime_linalg import is_sparse, sparse_matmul
from . import guards
from .chosen import argument_length
from .closures import PARTIAL
from .factories import ARGUMENT
from .knowntests import CHANGED_DURING_CALL, REGISTERED, decided_at
from .methods import _BUILTIN_OPS, METHODS, RESERVED
from .objcomps import known_value
from .objects import _changed_attrs, delegated_sequence
from .staticrun import returned_objects_by_running
from .opaque import (
    attribute_after,
    decided_class_test,
    is_namedtuple_type,
    is_object_sequence,
    is_opaque,
    is_user_object,
    library_file,
    opaque_attribute,
    opaque_call,
    opaque_method,
    rowed_callable,
)
from .parse import LIFTED, UNRESOLVED
from .pylower import DICT_GET

_RETURN = ("<return>", 0)  # `into` marker: the op computes the function's result


def user_method(method):
    """(function, the object it is bound to) if `method` is a user function reached as an
    attribute: (f, MISSING) for a staticmethod or a function stored on an object, (f, obj) for
    a method bound to an object or (a classmethod) to a class; None otherwise (a library's
    method, a row's function, anything not a Python function)."""
    fn, bound = method, guards.MISSING
    if isinstance(method, types.MethodType):
        fn, bound = method.__func__, method.__self__
    if isinstance(fn, types.FunctionType) and table.lookup(fn) is None and \
            library_file(fn) is None and fn not in LIFTED:
        return fn, bound
    return None


def at_user_call(err: SrcadError, fn: ir.Function) -> SrcadError:
    """`err`, raised by a check of `fn`'s IR at a line of srcad's code standing in for a
    library function (srcad/pyfuncs.py: np.histogram, statistics.mean, ...), made to name the
    user's call of it (errors.at_call_site): the first call of `fn` (or of a user function
    it calls) into a substitute that holds the function `err` names. Any other error: as it
    is."""
    if not in_substitute(err.filename):
        return err
    seen: set = set()

    def holds(callee: ir.Function) -> bool:  # (the substitute, or one it calls)
        return callee.name == err.func or any(
            holds(s.callee) for s in ir.walk(callee.body) if isinstance(s, ir.UserCall))

    def visit(f: ir.Function):
        if id(f) in seen:
            return None
        seen.add(id(f))
        for s in ir.walk(f.body):
            if not isinstance(s, ir.UserCall):
                continue
            if in_substitute(s.callee.filename):
                if holds(s.callee):
                    return f, s
            elif (found := visit(s.callee)) is not None:
                return found
        return None

    found = visit(fn)
    if found is None:
        return err
    f, s = found
    return at_call_site(err, f.filename, s.line, f.name, label_of(s.callee.name))


@contextlib.contextmanager
def at_user_lines(fn: ir.Function):
    """A SrcadError raised in the block, by a check of `fn`'s IR, names the user's line
    (`at_user_call`)."""
    try:
        yield
    except SrcadError as e:
        at_user_call(e, fn)
        raise



@functools.cache
def namespace_type(fields: tuple):
    """The namedtuple type srcad reads a ``types.SimpleNamespace(**fields)`` as."""
    return collections.namedtuple("namespace", fields)


def _item_written_as_a_store(fn: ir.Function, param: str) -> bool:
    """Does `fn` write an item of its list parameter in place (`ps[0] += t`) as a store into
    the slot -- a `setitem` of a value computed from the item it read there -- which a list
    holding that array in another slot too does not see? (`for p in ps: p += t` is a
    `write_through`, which asks the list when the code runs.)"""
    stmts = [st for st in ir.walk(fn.body) if isinstance(st, ir.Call)]
    made = {st.target: st for st in stmts}
    for st in stmts:
        if st.op.name != "setitem" or st.args.get("x") != ir.Var(param):
            continue
        todo, seen = list(ir.atom_vars(st.args.get("value"))), set()
        while todo:
            n = todo.pop()
            d = made.get(n)
            if n in seen or d is None:
                continue
            seen.add(n)
            if d.op.name == "getitem" and d.args.get("a") == ir.Var(param) and \
                    d.args.get("index") == st.args.get("index"):
                return True
            todo.extend(ir.atom_vars(ir.Seq(tuple(d.args.values()), "tuple")))
    return False




def _a_check(st) -> bool:
    """A statement of a callee's checks alone: an `assert`, or a value no gradient flows
    through computed for one (`hasattr(layer, "W")`, a test of it)."""
    return (isinstance(st, ir.Effect) and st.kind == "assert") or (
        isinstance(st, ir.Call) and not getattr(st.op, "differentiable", True))


class CallsMixin:
    """`call` and its helpers, for the `Normalizer` (normalize.py)."""

    def call_args(self, e: gast.Call, hint: str):
        """(positional atoms, keyword atoms, positions of starred arguments)."""
        e.args = self.spread_known_stars(e.args, e)
        e.keywords = self.spread_keywords(e)
        args, starred = [], []
        for i, a in enumerate(e.args):
            if isinstance(a, gast.Starred):
                starred.append(i)
                a = a.value
            args.append(self.expr(a, hint, None))
        kwargs = {k.arg: self.expr(k.value, hint, None) for k in e.keywords}
        return args, kwargs, tuple(starred)

    def spread_known_stars(self, args: list, e: gast.Call) -> list:
        """The call's positional arguments with each ``*t`` whose count srcad knows written out
        as Python spreads it, ``t[0], t[1], ...``: a name holding a tuple or list display of
        this function, or a list, tuple or array argument never rebound (its length, an
        array's rows, is in the specialisation's key: chosen.argument_length). Any other
        star is left for the callee's own rules (refused where none takes it)."""
        if not any(isinstance(a, gast.Starred) for a in args):
            return args
        out = []
        for a in args:
            count = None
            if isinstance(a, gast.Starred) and isinstance(a.value, gast.Name):
                held = self.env.get(a.value.id)
                made = self.display_copied_into(held)
                if isinstance(held, ir.Seq) or made is not None:
                    count = len((made or held).items)
                else:
                    count = argument_length(self.pf, a.value, e,
                                            f"`*{a.value.id}` spreads the argument's items")
            if count is None:
                out.append(a)
                continue
            out.extend(gast.copy_location(gast.Subscript(
                value=copy.deepcopy(a.value), slice=gast.Constant(i, None),
                ctx=gast.Load()), a) for i in range(count))
        return out

    def display_copied_into(self, atom):
        """The tuple or list display the IR name `atom` was last made a copy of in this
        block (`t = grab(p)` of a callee returning `a, b`: its items known), or None -- its
        length is what a spread of `t` needs."""
        if not isinstance(atom, ir.Var):
            return None
        st = next((st for st in reversed(self.body) if atom.name in ir.defs(st)), None)
        if isinstance(st, ir.UserCall) and st.targets == [atom.name] and not st.carried:
            # (a callee called, not spliced: the display it returns, its items its own)
            x = st.callee.ret.value
        elif isinstance(st, ir.Call) and st.op.fn is control.identity:
            x = next(iter(st.args.values()), None)
        else:
            return None
        return x if isinstance(x, ir.Seq) and x.kind in ("tuple", "list") else None

    def spread_keywords(self, e: gast.Call) -> list:
        """The call's keywords with ``**{"axis": 1}`` (a dict display with string keys)
        spread out; ``**kw`` of a name is refused, with the keywords written out in the hint
        when the name holds a dict now (a dict's keys and values can change between calls
        without rebinding the name: the code srcad builds is specialised on them)."""
        out = []
        for k in e.keywords:
            if k.arg is not None:
                out.append(k)
                continue
            v = k.value
            if isinstance(v, gast.Dict) and all(
                    isinstance(key, gast.Constant) and isinstance(key.value, str)
                    for key in v.keys):
                out.extend(gast.keyword(arg=key.value, value=val)
                           for key, val in zip(v.keys, v.values))
                continue
            spelled = None
            if isinstance(v, (gast.Name, gast.Attribute)) and self.local_base(v, "kw") is None:
                try:
                    held, _ = self.dotted(v)
                except Exception:  # noqa: BLE001  (not resolvable: the plain hint)
                    held = None
                if isinstance(held, dict) and all(isinstance(x, str) for x in held):
                    spelled = ", ".join(f"{x}={gast.unparse(v)}[{x!r}]" for x in held)
            raise self.unsupported(
                "`**kwargs` in a call", e,
                f"pass the keywords one by one ({spelled})" if spelled else
                "pass keywords one by one (a dict display, **{'axis': 1}, is spread)")
        return out

    def spread_for(self, fn, e: gast.Call, skip: int = 0, given=()) -> gast.Call:
        """``f(x, **c)`` and ``f(x, *t)`` of a user function `fn` with a fixed signature,
        written out as Python binds them: each parameter the call leaves to ``**c`` becomes
        ``p=c["p"]`` (one with a literal default ``p=c.get("p", default)``, pylower.py's row), ``*t`` the
        parameters it fills by position, ``t[0], t[1], ...`` (GPT-2-from-scratch code:
        ``linear(x, **c_attn)``). `skip`: leading parameters already bound (a method's
        object, a partial's arguments); `given`: keywords a partial binds. A spread whose
        reach the signature does not settle (a callee taking ``*args``/``**kwargs``, an
        optional parameter ``*t`` might fill) is left to `call_args`, which refuses it."""
        spreads = [k for k in e.keywords if k.arg is None and not isinstance(k.value, gast.Dict)]
        if any(isinstance(a, gast.Starred) for a in e.args):
            e = gast.copy_location(gast.Call(func=e.func, args=self.spread_known_stars(
                e.args, e), keywords=list(e.keywords)), e)
        stars = [i for i, a in enumerate(e.args) if isinstance(a, gast.Starred)]
        if not spreads and not stars:
            return e
        try:
            params = list(inspect.signature(fn).parameters.values())[skip:]
        except (TypeError, ValueError):
            return e
        P = inspect.Parameter
        rest_keys = None
        if spreads and not stars and len(spreads) == 1 and \
                any(p.kind is P.VAR_KEYWORD for p in params) and \
                not any(p.kind is P.VAR_POSITIONAL for p in params):
            # `layer(x, **cfg)` into `def layer(x, scale=1.0, **unused)`: the keys no
            # parameter takes go to `**unused`, each by name -- where the dict's keys are
            # known (the call's dict argument, a module's dict)
            d = spreads[0].value
            keys = self.known_keys(d)
            if keys is None and isinstance(d, gast.Name) and d.id in self.pf.params and \
                    not self.pf.dict_paths:
                raise self.pf.error(
                    f"`**{d.id}` into a function taking `**kwargs`: srcad reads the dict "
                    f"argument's keys from a call", e, cls=DictUnknownError,
                    hint=f"call the function with a dict for `{d.id}`")
            if keys is None:
                return e
            takes = {p.name for p in params if p.kind in (P.POSITIONAL_OR_KEYWORD,
                                                           P.KEYWORD_ONLY)}
            rest_keys = [k for k in keys if k not in takes]
            params = [p for p in params if p.kind is not P.VAR_KEYWORD]
        if not spreads and len(stars) == 1 and any(p.kind is P.VAR_POSITIONAL for p in params):
            # `compose(*fns)` of a list or tuple whose items this function knows: each item
            # by position, as Python spreads them (parse.star_params_for_call packs them)
            star = e.args[stars[0]].value
            held = self.env.get(star.id) if isinstance(star, gast.Name) else None
            items = list(enumerate(held.items)) if isinstance(held, ir.Seq) else (
                self.list_items_of(star.id) if isinstance(star, gast.Name) else None)
            if items is not None and [k for k, _ in items] == list(range(len(items))):
                args = list(e.args)
                args[stars[0]:stars[0] + 1] = [gast.copy_location(gast.Subscript(
                    value=copy.deepcopy(star), slice=gast.Constant(i, None),
                    ctx=gast.Load()), star) for i in range(len(items))]
                return gast.copy_location(gast.Call(func=e.func, args=args,
                                                    keywords=list(e.keywords)), e)
        if any(p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD) for p in params) or \
                len(spreads) > 1 or len(stars) > 1 or (stars and stars[0] != len(e.args) - 1):
            return e
        named = {k.arg for k in e.keywords if k.arg is not None} | set(given)
        positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY,
                                                       P.POSITIONAL_OR_KEYWORD)]
        args = list(e.args)
        if stars:
            star = args.pop()
            rest = positional[len(args):]
            held = self.env.get(star.value.id) if isinstance(star.value, gast.Name) else None
            if isinstance(held, ir.Seq):  # (`args = [w, b]`: its length is known)
                count = len(held.items)
            else:  # the parameters with no default, up to one passed by keyword
                count = next((i for i, p in enumerate(rest) if p.name in named
                              or p.default is not P.empty), len(rest))
            if count > len(rest) or any(p.name in named for p in rest[:count]) or any(
                    p.name not in named and p.default is P.empty for p in rest[count:]) or (
                    not isinstance(held, ir.Seq) and any(p.name not in named
                                                         for p in rest[count:])):
                return e  # (how many `*t` fills is known only when it runs)
            args += [gast.copy_location(gast.Subscript(
                value=copy.deepcopy(star.value), slice=gast.Constant(i, None),
                ctx=gast.Load()), star) for i in range(count)]
        keywords = [k for k in e.keywords if k.arg is not None or isinstance(k.value, gast.Dict)]
        if spreads:
            d = spreads[0].value
            bound = {p.name for p in positional[:len(args)]} | named
            if rest_keys is None:
                self.check_spread_keys(fn, d, params, bound, e)
            else:
                for k in rest_keys:
                    if k in named:
                        raise self.pf.error(
                            f"TypeError: {getattr(fn, '__qualname__', 'the function')}() got "
                            f"multiple values for keyword argument '{k}' (from "
                            f"`**{gast.unparse(d)}`): Python raises this when the call runs",
                            e, hint=f"give `{gast.unparse(d)}` only the keys it should pass")
                    keywords.append(gast.keyword(arg=k, value=gast.copy_location(
                        gast.Subscript(value=copy.deepcopy(d), slice=gast.Constant(k, None),
                                       ctx=gast.Load()), d)))
            for p in params:
                if p.name in bound or p.kind is P.POSITIONAL_ONLY:
                    continue
                key = gast.Constant(p.name, None)
                if p.default is P.empty:
                    value = gast.Subscript(value=copy.deepcopy(d), slice=key, ctx=gast.Load())
                elif isinstance(p.default, (str, int, float, bool, type(None))):
                    value = gast.Call(func=gast.Name(DICT_GET, gast.Load(), None, None),
                                      args=[copy.deepcopy(d), key,
                                            gast.Constant(p.default, None)], keywords=[])
                else:
                    raise self.unsupported(
                        f"`**{gast.unparse(d)}` for the parameter `{p.name}`, whose default "
                        "is not a literal", e,
                        f"pass {p.name}= explicitly, or give it a literal default")
                keywords.append(gast.keyword(arg=p.name, value=gast.copy_location(value, d)))
        return gast.copy_location(gast.Call(func=e.func, args=args, keywords=keywords), e)

    def known_keys(self, d):
        """The keys of the dict `d` where srcad knows them (a dict argument of this
        specialisation, a module's dict, one the function builds), all strings; else None."""
        keys = None
        if isinstance(d, gast.Name):
            atom = self.env.get(d.id)
            if d.id in self.pf.dict_keys:
                keys = list(self.pf.dict_keys[d.id])
            elif isinstance(atom, ir.Const) and isinstance(atom.value, dict):
                keys = list(atom.value)
            elif atom is None and d.id not in self.locals and isinstance(
                    self.pf.resolve(d.id), dict):
                keys = list(self.pf.resolve(d.id))
            elif isinstance(atom, ir.Var):
                items = self.list_items_of(d.id)
                keys = None if items is None else [k for k, _ in items]
        return keys if keys and all(isinstance(k, str) for k in keys) else None

    def check_spread_keys(self, fn, d, params, bound: set, e) -> None:
        """``f(x, **d)`` where srcad knows d's keys (a dict display here, a dict argument of
        this specialisation, a module's dict): a key f has no parameter for, or one the call
        already binds, is Python's TypeError -- said here, not left to pass silently as the
        keys f does read."""
        keys = self.known_keys(d)
        if not keys:
            return
        P = inspect.Parameter
        takes = {p.name for p in params if p.kind is not P.POSITIONAL_ONLY}
        name = getattr(fn, "__qualname__", getattr(fn, "__name__", "the function"))
        given = {kw.arg for kw in e.keywords}
        for k in keys:
            if k in bound:
                why = f"got multiple values for {'keyword ' * (k in given)}argument '{k}'"
            elif k not in takes:
                why = f"got an unexpected keyword argument '{k}'"
            else:
                continue
            raise self.pf.error(
                f"TypeError: {name}() {why} (from `**{gast.unparse(d)}`): Python raises "
                f"this when the call runs", e,
                hint=f"give `{gast.unparse(d)}` only the keys {name}() takes")

    def refuse_starred(self, e, what: str):
        raise self.unsupported(f"star-arguments (`*args`) in a call to {what}", e,
                               "pass the arguments one by one")

    def callee_atom(self, obj, spelled: str, node) -> ir.Const:
        """The callee of an opaque call, spelled in generated code as the user spelled it:
        a builtin by its name, `np.` for numpy, otherwise the root module (``math``)
        injected under its own name when it is free; else the callable under a fresh name."""
        if spelled.isidentifier() and getattr(builtins, spelled, None) is obj and \
                spelled not in self.locals:
            return ir.Const(obj, spelled)
        root, _, rest = spelled.partition(".")
        root_obj = self.pf.resolve(root) if root.isidentifier() else None
        if rest and root_obj is np:
            return ir.Const(obj, f"np.{rest}")
        if rest and root_obj is not None and root not in self.locals and root not in RESERVED \
                and self.inject.get(root, root_obj) is root_obj:  # (math.sqrt, CONFIG.get)
            self.inject[root] = root_obj
            self.taken.add(root)
            return ir.Const(obj, spelled)
        name = spelled.replace(".", "_") if spelled.replace(".", "_").isidentifier() else "fn"
        return ir.Const(obj, self.claim(name, obj))

    def opaque_parts(self, callee: ir.Atom, label: str, args, kwargs, starred, node, obj=None):
        try:
            op = opaque_call(label, len(args), tuple(kwargs), starred, callee=obj)
        except ValueError as e:
            raise self.unsupported(f"the {e} in a call to `{label}`", node) from None
        bound = {"_fn": callee, **{f"_a{i}": a for i, a in enumerate(args)}, **kwargs}
        return op, bound

    def method_parts(self, base, attr: str, e, hint):
        """``base.attr(...)``: the method table's row, or an opaque method."""
        if attr in ("reshape", "transpose") and len(e.args) > 1 and not e.keywords and any(
                isinstance(a, gast.Starred) for a in e.args):
            # `x.reshape(-1, *rest)`: numpy reads the items as one shape tuple
            e = gast.copy_location(gast.Call(func=e.func, args=[gast.copy_location(
                gast.Tuple(elts=e.args, ctx=gast.Load()), e)], keywords=[]), e)
        args, kwargs, starred = self.call_args(e, hint)
        make = METHODS.get(attr)
        if attr == "pop" and not self.generated:
            # (the row is for srcad's own stacks, in generated code transformed again; a user
            # list's pop is a value where pylower.py could write it so, and a method with no
            # rule elsewhere: refused where a gradient flows through it, never a constant)
            make = None
        if make is not None and starred and not (attr in ("reshape", "transpose")
                                                 and starred == (0,) and len(args) == 1):
            make = None  # x.take(*a): run as written (refused if a gradient needs it)
        if make is None:
            # a method with no rule: fine on a value gradients do not flow through
            # (rng.normal(...) on a passed Generator); refused where one does
            # (opaque.check_opaque, once the function is normalised)
            try:
                op = opaque_method(attr, len(args), tuple(kwargs), starred)
            except ValueError as err:
                raise self.unsupported(f"the {err} in a call to `.{attr}()`", e) from None
            bound = {"_obj": base, **{f"_a{i}": a for i, a in enumerate(args)}, **kwargs}
            return op, bound
        fn, args, kwargs = make(base, args, kwargs)
        return self.op_call(fn, args, kwargs, e)

    def resolve_call(self, e: gast.Call, hint: str):
        """What a call is: ("op", op, bound) or ("user", fn, spelled, args, kwargs,
        checkpointed)."""
        func = e.func
        if isinstance(func, gast.Attribute) and self.is_super(func.value):
            return self.super_call(func, e, hint)
        if isinstance(func, gast.Attribute) and func.attr == "_asdict" and not e.args and \
                not e.keywords and self.namedtuple_of(func.value) is not None:
            # `p._asdict()` of a namedtuple argument: the dict of its fields, in order
            fields = self.namedtuple_of(func.value)._fields
            display = gast.copy_location(gast.Dict(
                keys=[gast.Constant(f, None) for f in fields],
                values=[gast.copy_location(gast.Attribute(value=func.value, attr=f,
                                                          ctx=gast.Load()), e)
                        for f in fields]), e)
            return ("op", *self.dict_parts([self.expr(k, hint, None) for k in display.keys],
                                           display.values, hint))
        site = self.namedtuple_method(func, e, hint)
        if site is not None:
            return site
        if isinstance(func, gast.Attribute):
            carried = self.carried_read(func.value)  # (`dense1.output.sum()`: state.py)
            base = carried if carried is not None else self.local_base(func.value, hint)
            if base is not None and func.attr == "_replace" and not e.args and e.keywords \
                    and all(k.arg in self.namedtuple_fields() for k in e.keywords):
                # `p._replace(W=v)` of a namedtuple (its fields' names this code sees)
                names = tuple(k.arg for k in e.keywords)
                bound = {"_obj": base, **{f"v{i}": self.expr(k.value, k.arg, None)
                                          for i, k in enumerate(e.keywords)}}
                return ("op", replace_op(names), bound)
            if base is not None and self.is_sparse_atom(base) and \
                    func.attr in ("dot", "__matmul__") and len(e.args) == 1 and \
                    not e.keywords and not isinstance(e.args[0], gast.Starred):
                # `L.dot(x)` of a scipy.sparse argument (known: transformed.py): `L @ x`
                args, _, _ = self.call_args(e, hint)
                return ("op", table.lookup(sparse_matmul), {"a": base, "b": args[0]})
            if base is not None:
                user = self.bound_method_call(base, func.attr, e, hint)
                if user is not None:
                    return user
                draw = GENERATOR_DRAWS.get(func.attr)
                if draw is not None and not self.generated and (
                        not isinstance(base, ir.Const) or
                        isinstance(base.value, (np.random.Generator, np.random.RandomState))):
                    # `rng.normal(mu, sigma)`: a random generator's draw as numpy computes
                    # it, `mu + sigma * rng.standard_normal(shape)` (srcad/pyfuncs.py)
                    args, kwargs, starred = self.call_args(e, hint)
                    if not starred:
                        return ("user", draw, draw.__name__, [base, *args], kwargs, False)
                return ("op", *self.method_parts(base, func.attr, e, hint))
        held = self.env.get(func.id) if isinstance(func, gast.Name) else None
        if isinstance(held, ir.Const) and callable(held.value) and \
                func.id in self.locals:  # `tanh = np.tanh; tanh(x)`: np.tanh's row
            return self.call_of(held.value, held.src, func, e, hint)
        if isinstance(func, gast.Name) and func.id in self.locals:
            lifted = self.closure_site(held, e, hint)
            if lifted is not None:  # (`f = lambda h: h @ W; ...; f(x)`: closure_values.py)
                return lifted
            # a callable held in a local (an argument, a bound method): run as written
            callee = self.name_atom(func)
            args, kwargs, starred = self.call_args(e, hint)
            return ("op", *self.opaque_parts(callee, func.id, args, kwargs, starred, e))
        checkpointed = False
        if isinstance(func, gast.Call):  # srcad.checkpoint(block)(h, W)
            if self.is_checkpoint(func.func):
                if func.keywords:
                    raise self.unsupported(
                        "srcad.checkpoint(fn, ...) with a schedule: a function takes no "
                        "schedule", e, "every= and snapshots= are for loops: for i in "
                        "srcad.checkpoint(range(n), every=k)")
                if len(func.args) != 1:
                    raise self.unsupported("this call to srcad.checkpoint", e,
                                           "write srcad.checkpoint(fn)(args)")
                target = func.args[0]
                holder = self.known_object(target.value) if isinstance(
                    target, gast.Attribute) else None
                if holder is not None:
                    # `srcad.checkpoint(self.block)(h)` (torch's `checkpoint(self.layer, x)`):
                    # the method bound to the object srcad knows here
                    obj = getattr(holder, target.attr, guards.MISSING)
                    guards.note_attr(holder, target.attr, obj)
                    if isinstance(obj, Checkpointed):
                        obj = obj.fn
                    spelled = f"{type(holder).__name__}.{target.attr}"
                else:
                    obj, spelled = self.dotted(target)
                checkpointed = True
            elif self.made_transform(func) is not None:  # srcad.grad(f)(x), in place
                t, spelled = self.made_transform(func)
                return self.call_of(t, spelled, func, self.with_free_variables(func, e), hint)
            else:  # f(a)(b): run as written -- or the function a factory returns
                callee = self.expr(func, hint, None)
                lifted = self.closure_site(callee, e, hint)
                if lifted is not None:  # (`dense(W1)(x)`: the closure a factory returns)
                    return lifted
                if isinstance(callee, ir.Const) and (is_user_object(callee.value) or
                                                     rowed_callable(callee.value)):
                    spelled = "".join(c if c.isalnum() else "_" for c in callee.src)
                    return self.call_of(callee.value, spelled.strip("_"), func, e, hint)
                args, kwargs, starred = self.call_args(e, hint)
                return ("op", *self.opaque_parts(callee, "the result of a call", args, kwargs,
                                                 starred, e))
        elif isinstance(func, gast.Subscript):  # `self.layers[-1](h)`, `acts[0](z)`
            held = self.expr(func, hint, None)
            lifted = self.closure_site(held, e, hint)
            if lifted is not None:  # (`layers[0](x)`: a closure a display holds)
                return lifted
            if isinstance(self.followed(held), ir.Const):  # (`acts["relu"](z)`: a function
                held = self.followed(held)  # a display made here holds)
            if isinstance(held, ir.Const) and (is_user_object(held.value) or
                                               rowed_callable(held.value)):
                spelled = "".join(c if c.isalnum() else "_" for c in held.src).strip("_")
                return self.call_of(held.value, spelled, func, e, hint)
            args, kwargs, starred = self.call_args(e, hint)
            return ("op", *self.opaque_parts(held, "an item", args, kwargs, starred, e))
        else:
            carried = self.carried_read(func)
            if carried is not None:
                # `Cfg.act(x)` after this function or a callee stored `Cfg.act = np.sin`:
                # what was stored (state.py), not what the attribute held when normalising
                if isinstance(carried, ir.Const) and (is_user_object(carried.value) or
                                                      rowed_callable(carried.value)):
                    spelled = "".join(c if c.isalnum() else "_" for c in carried.src)
                    return self.call_of(carried.value, spelled.strip("_"), func, e, hint)
                args, kwargs, starred = self.call_args(e, hint)
                label = f"{gast.unparse(func)} (stored into during the call)"
                return ("op", *self.opaque_parts(carried, label, args, kwargs, starred, e))
            obj, spelled = self.dotted(func)
            if isinstance(func, gast.Attribute) and \
                    isinstance(getattr(obj, "__self__", None), np.ndarray):
                # `X.dot(W1)`, `X.T.dot(h)` of a module-level array: the method's row, as
                # for a local array (not a bound method run as written)
                base = self.expr(func.value, hint, None)
                return ("op", *self.method_parts(base, func.attr, e, hint))
            target = user_method(obj) if isinstance(func, gast.Attribute) else None
            if target is not None and target[1] is not guards.MISSING:
                # `act.fn(z)` on a global object, `Cost.make(y)` a classmethod: the function,
                # with the object as its first argument
                base = self.global_value(func.value)
                return self.bound_method_call(base, func.attr, e, hint)
        return self.call_of(obj, spelled, func, e, hint, checkpointed)

    def made_transform(self, e: gast.Call):
        """`srcad.grad(f, wrt=...)` (a transform of a function known when normalising, with
        constant options): (the transformed function, its spelling), else None."""
        if not isinstance(e.func, (gast.Name, gast.Attribute)) or self.local_base_is_local(
                e.func) or len(e.args) != 1:
            return None
        try:
            factory, spelled = self.dotted(e.func)
        except Exception:  # noqa: BLE001  (not a global: not a transform)
            return None
        if getattr(factory, "_srcad_transform", None) is None:
            return None
        target = e.args[0]
        if self.is_lifted_partial(target):  # (a nested def: lifted, its free variables bound)
            target = target.args[0]
        fn, fn_spelled = self.dotted(target)
        options = {}
        for k in e.keywords:
            value = k.value
            if not isinstance(value, (gast.Constant, gast.Tuple)) or k.arg is None:
                raise self.unsupported(f"`{spelled}(...)` with a computed `{k.arg}=`", e,
                                       "give the options as literals")
            options[k.arg] = ast.literal_eval(gast.gast_to_ast(value))
        return factory(fn, **options), f"{spelled.split('.')[-1]}_{fn_spelled}"

    def is_lifted_partial(self, e) -> bool:
        """`partial(g, w=w)`: a nested function used as a value (srcad/frontend/closures.py)."""
        return isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and \
            e.func.id == PARTIAL and len(e.args) == 1 and isinstance(e.args[0], gast.Name)

    def with_free_variables(self, made: gast.Call, e: gast.Call) -> gast.Call:
        """``srcad.grad(g)(y)`` with g a nested function (lifted with its free variables as
        extra parameters, last): the call passes them after the call's own arguments, so the
        inner transform's derivative w.r.t. them flows (the enclosing function's locals)."""
        target = made.args[0]
        if not self.is_lifted_partial(target):
            return e
        free = [k.value for k in target.keywords]
        fn, _ = self.dotted(target.args[0])
        own = len(inspect.signature(fn).parameters) - len(free)
        if e.keywords or len(e.args) != own or any(isinstance(a, gast.Starred) for a in e.args):
            raise self.unsupported(
                f"this call of a transform of the nested function `{target.args[0].id}` (it "
                f"takes {own} argument(s), passed by position)", e,
                "pass every argument of the nested function by position")
        return gast.copy_location(gast.Call(func=e.func, args=[*e.args, *free], keywords=[]), e)

    def call_of(self, obj, spelled: str, func, e, hint, checkpointed=False):
        """The call of a callable known when normalising: a row, a user function (or method,
        with its object first), a transformed function (srcad/ops/composed.py), or an opaque
        call."""
        owner = getattr(obj, "__self__", None)
        if is_sparse(owner) and getattr(obj, "__name__", None) in ("dot", "__matmul__") and \
                len(e.args) == 1 and not e.keywords and \
                not isinstance(e.args[0], gast.Starred):
            # `L.dot(x)` of a module's scipy.sparse matrix: `L @ x`, its row
            args, _, _ = self.call_args(e, hint)
            first = self.constant(owner, spelled.rpartition(".")[0] or "sparse", e)
            return ("op", table.lookup(sparse_matmul), {"a": first, "b": args[0]})
        if isinstance(owner, (np.random.Generator, np.random.RandomState)) and \
                getattr(obj, "__name__", None) in GENERATOR_DRAWS and not self.generated and \
                not any(isinstance(a, gast.Starred) for a in e.args):
            # `RNG.normal(mu, sigma)` of a module's generator: as for a local one (above)
            draw = GENERATOR_DRAWS[obj.__name__]
            args, kwargs, _ = self.call_args(e, hint)
            first = self.constant(owner, spelled.rpartition(".")[0] or "rng", e)
            return ("user", draw, draw.__name__, [first, *args], kwargs, checkpointed)
        if isinstance(obj, types.MethodType) and obj.__name__ == "vjp_at" and getattr(
                obj.__self__, "_srcad_transformed", False) is True and len(e.args) == 2 and \
                isinstance(e.args[0], gast.Tuple) and not e.keywords:
            # `t.vjp_at((a0, ...), g)`: generated code being differentiated again -- the
            # pullback as a transformed function of (a0, ..., g) (srcad/pullbacks.py)
            n = len(e.args[0].elts)
            obj, spelled = obj.__self__.pullbacks(n), spelled.rpartition(".")[0] + "_pullbacks"
            e = gast.Call(func=e.func, args=[*e.args[0].elts, e.args[1]], keywords=[])
        if getattr(obj, "_srcad_transformed", False) is True:
            args, kwargs, starred = self.call_args(e, hint)
            if kwargs or starred:
                raise self.unsupported(f"keyword or star arguments in a call of `{spelled}`",
                                       e, "pass the arguments by position")
            if isinstance(obj, types.MethodType):  # (`self.dloss(W, x)` of a decorated
                # method: the transform, given the object first)
                args = [self.constant(obj.__self__, type(obj.__self__).__name__.lower(), e),
                        *args]
                obj = obj.__func__
            callee = self.callee_atom(obj, spelled.replace(".", "_"), func)
            return ("op", transformed_call_op(len(args)),
                    {"_t": callee, **{f"a{i}": a for i, a in enumerate(args)}})
        if is_user_object(obj) and not isinstance(obj, (type, types.FunctionType,
                                                         types.MethodType)):
            call = getattr(obj, "__call__", None)  # `act(z)`: its class's __call__
            guards.note_attr(type(obj), "__call__", getattr(type(obj), "__call__", None))
            if user_method(call) is not None:
                obj, spelled = call, f"{spelled}.__call__"
        target = user_method(obj) if isinstance(obj, types.MethodType) else None
        if target is not None:  # (`f = act.fn; f(z)`)
            fn, bound = target
            e = self.spread_for(fn, e, skip=1)
            args, kwargs, starred = self.call_args(e, hint)
            if starred:
                self.refuse_starred(e, f"the method `{spelled}`")
            first = self.constant(bound, getattr(bound, "__name__", "obj"), e)
            return ("user", fn, spelled, [first, *args], kwargs, checkpointed)
        if type(obj) is types.MethodType and _hashable(obj) and obj in SUBSTITUTES:
            # a method of a library object made outside the function (`PRIOR.logpdf` of a
            # module's `PRIOR = scipy.stats.norm(0, 1)`): srcad/pystats.py's function, its
            # parameters those the object holds now (a partial, followed as below)
            obj = SUBSTITUTES[obj]
        user_partial = isinstance(obj, functools.partial) and \
            isinstance(obj.func, types.FunctionType) and table.lookup(obj.func) is None and \
            library_file(obj.func) is None and obj.func not in LIFTED
        if user_partial or isinstance(obj, functools.partial) and \
                not isinstance(obj.func, types.FunctionType) and _hashable(obj.func) and \
                table.lookup(obj.func) is not None:
            # a partial made at module level -- of a user function (`loss_half =
            # functools.partial(loss, scale=0.5)`) or of a row (`CLIP = functools.partial(
            # np.clip, a_min=-1, a_max=1)`): its bound arguments constants (read when the
            # call is built: guarded with the partial's name), then the call's own (its
            # keywords win)
            if user_partial:
                e = self.spread_for(obj.func, e, skip=len(obj.args), given=obj.keywords)
            args, kwargs, starred = self.call_args(e, hint)
            if starred:
                self.refuse_starred(e, f"the partial `{spelled}`")
            args = [self.constant(a, f"{spelled}_arg{i}", e)
                    for i, a in enumerate(obj.args)] + args
            kwargs = {**{k: self.constant(v, f"{spelled}_{k}", e)
                         for k, v in obj.keywords.items()}, **kwargs}
            if user_partial:
                return ("user", obj.func, getattr(obj.func, "__name__", spelled), args, kwargs,
                        checkpointed)
            return ("op", *self.op_call(obj.func, args, kwargs, e, spelled))
        if isinstance(obj, Checkpointed):  # ck = srcad.checkpoint(block) at module level
            obj, checkpointed = obj.fn, True
        if _hashable(obj) and obj in SUBSTITUTES:  # statistics.mean: srcad/pyfuncs.py's
            obj = SUBSTITUTES[obj]
        if _hashable(obj) and obj in _BUILTIN_OPS and not (obj in (min, max)
                                                            and len(e.args) != 2) and not (
                obj is float and (len(e.args) != 1 or e.keywords)):
            obj = _BUILTIN_OPS[obj]
        ordered = obj is collections.OrderedDict and bool(e.args or e.keywords)
        if ordered:
            # (`OrderedDict([("W", W), ...])`, `OrderedDict(W=W)`: a dict of these entries in
            # this order -- built as `dict(...)` is, then made an OrderedDict of, so that
            # `isinstance(d, OrderedDict)` is Python's answer)
            obj = dict

        def made(parts):
            if not ordered:
                return ("op", *parts)
            d = self.emit(parts, self.fresh(hint), e)
            return ("op", *self.op_call(runtime_python.ordered_dict, [d], {}, e))

        if ordered and len(e.args) == 1 and not e.keywords and not isinstance(
                e.args[0], (gast.List, gast.Tuple, gast.Dict, gast.Starred)):
            # (`OrderedDict(p)`: pylower gave it the new dict `dict(p)` makes)
            return made(self.op_call(control.identity, [self.expr(e.args[0], hint, None)],
                                     {}, e))
        if obj is dict and not e.args and all(k.arg is not None for k in e.keywords):
            keys = [ir.Const(k.arg, repr(k.arg)) for k in e.keywords]  # dict(a=x, b=y)
            return made(self.dict_parts(keys, [k.value for k in e.keywords], hint))
        if obj is dict and len(e.args) == 1 and isinstance(e.args[0], (gast.List, gast.Tuple)) \
                and all(isinstance(p, gast.Tuple) and len(p.elts) == 2 and not any(
                    isinstance(x, gast.Starred) for x in p.elts) for p in e.args[0].elts) \
                and all(k.arg is not None for k in e.keywords):
            # dict([(k0, v0), ...], a=x): the pairs in order, then the keywords (a later key
            # replaces an earlier one's value, in its first place, as a dict literal does)
            pairs = e.args[0].elts
            keys = [self.expr(p.elts[0], f"{hint}_key", None) for p in pairs] + [
                ir.Const(k.arg, repr(k.arg)) for k in e.keywords]
            values = [p.elts[1] for p in pairs] + [k.value for k in e.keywords]
            return made(self.dict_parts(keys, values, hint))
        if obj is types.SimpleNamespace and not e.args and not checkpointed and \
                all(k.arg is not None for k in e.keywords):
            # `p = SimpleNamespace(W=W, b=b, l2=1e-2)`: read by attribute, as a namedtuple
            # of these fields is (`p.W` its item); an attribute store into it is refused
            fields = tuple(k.arg for k in e.keywords)
            built = self.namedtuple_parts(namespace_type(fields), "namespace", func, e, hint)
            if built is not None:
                return ("op", *built)
        if isinstance(obj, types.MethodType) and obj.__name__ == "_make" and \
                is_namedtuple_type(obj.__self__) and isinstance(func, gast.Attribute) and \
                len(e.args) == 1 and not e.keywords:
            # `Params._make(p)`: `Params(*p)`, as the classmethod builds it
            obj, func, spelled = obj.__self__, func.value, spelled.rpartition(".")[0]
            e = gast.copy_location(gast.Call(func=func, args=[gast.copy_location(
                gast.Starred(value=e.args[0], ctx=gast.Load()), e.args[0])], keywords=[]), e)
        if is_namedtuple_type(obj) and not checkpointed and table.lookup(obj) is None:
            built = self.namedtuple_parts(obj, spelled, func, e, hint)
            if built is not None:
                return ("op", *built)
        user = isinstance(obj, types.FunctionType) and table.lookup(obj) is None and \
            library_file(obj) is None
        if checkpointed and not user:
            raise self.unsupported(f"srcad.checkpoint of `{spelled}`, which is not a plain "
                                   f"user function", e, "checkpoint a function defined with def")
        if user:
            e = self.spread_for(obj, e)
        args, kwargs, starred = self.call_args(e, hint)
        if user:
            if starred:
                self.refuse_starred(e, f"the user function `{spelled}`")
            return ("user", obj, spelled, args, kwargs, checkpointed)
        if table.lookup(obj) is not None:
            if starred:
                self.refuse_starred(e, f"`{spelled}`")
            return made(self.op_call(obj, args, kwargs, e, spelled))
        callee = self.callee_atom(obj, spelled, func)
        return ("op", *self.opaque_parts(callee, spelled, args, kwargs, starred, e, obj))

    def namedtuple_parts(self, cls, spelled: str, func, e, hint: str):
        """`Cache(x, z=z, h=h)`: the namedtuple op over its fields in order (a field not given
        takes its default), or None (a starred argument or ``**d`` whose items srcad does
        not know, or a call Python would refuse: run as written). ``Params(*p)`` of a known
        count is its items by position, ``Params(**d)`` of known keys its items by key."""
        args = self.spread_known_stars(e.args, e)
        keywords = []
        for k in e.keywords:
            if k.arg is not None:
                keywords.append(k)
                continue
            if isinstance(k.value, gast.Dict):
                keys = [key.value if isinstance(key, gast.Constant) else None
                        for key in k.value.keys]
                values = k.value.values
            else:
                keys = self.known_keys(k.value)
                if keys is None and isinstance(k.value, gast.Name) and \
                        k.value.id in self.pf.params and not self.pf.dict_paths:
                    raise self.pf.error(
                        f"`**{k.value.id}` into the namedtuple `{spelled}`: srcad reads the "
                        f"dict argument's keys from a call", e, cls=DictUnknownError,
                        hint=f"call the function with a dict for `{k.value.id}`")
                values = [gast.copy_location(gast.Subscript(
                    value=copy.deepcopy(k.value), slice=gast.Constant(key, None),
                    ctx=gast.Load()), k.value) for key in keys or ()]
            if keys is None or not all(isinstance(key, str) for key in keys):
                return None
            keywords.extend(gast.keyword(arg=key, value=v) for key, v in zip(keys, values))
        if any(isinstance(a, gast.Starred) for a in args) or len(args) > len(cls._fields):
            return None
        given = dict(zip(cls._fields, args))
        for k in keywords:
            if k.arg not in cls._fields or k.arg in given:
                return None
            given[k.arg] = k.value
        defaults = getattr(cls, "_field_defaults", {})
        if any(f not in given and f not in defaults for f in cls._fields):
            return None
        bound = {"_cls": self.callee_atom(cls, spelled, func)}
        for i, f in enumerate(cls._fields):
            bound[f"f{i}"] = self.expr(given[f], f, None) if f in given else \
                self.constant(defaults[f], repr(defaults[f]), e)
        return namedtuple_op(len(cls._fields)), bound

    def dict_parts(self, keys: list, values: list, hint: str):
        """A dict literal's op and arguments (keys: atoms; values: gast expressions)."""
        entries: dict = {}  # a key written twice keeps its first place and its last value
        for i, (k, v) in enumerate(zip(keys, values)):
            name = k.value if isinstance(k, ir.Const) and isinstance(k.value, str) and \
                k.value.isidentifier() else hint
            atom = self.expr(v, name, None)
            known = isinstance(k, ir.Const) and isinstance(k.value, (str, int, float, bool,
                                                                      type(None), bytes))
            slot = ("const", k.value) if known else ("at", i)  # (1 and 1.0: one key)
            if slot in entries:  # (the earlier value was computed; the dict drops it)
                entries[slot] = (entries[slot][0], atom)
            else:
                entries[slot] = (k, atom)
        bound = {}
        for i, (k, atom) in enumerate(entries.values()):
            bound[f"k{i}"] = k
            bound[f"v{i}"] = atom
        return dict_literal_op(len(entries)), bound

    def dict_display(self, e: gast.Dict, hint: str, into):
        """{"a": x, "b": y}: an op that builds the dict (`**d` in a display is refused)."""
        if any(k is None for k in e.keys):
            raise self.unsupported("`**` unpacking in a dict display", e,
                                   "build the dict with its entries, or with dict_set in a loop")
        keys = [self.expr(k, hint, None) for k in e.keys]
        return self.result(self.dict_parts(keys, e.values, hint), hint, into, e)

    def call(self, e: gast.Call, hint: str, into):
        if isinstance(e.func, gast.Name) and e.func.id not in self.locals and \
                len(e.args) == 1 and not e.keywords and \
                isinstance(e.args[0], (gast.Name, gast.Constant)) and \
                self.pf.resolve(e.func.id) in (str, repr):
            text = self.expr(e.args[0], hint, None)  # (a name or a literal: emits nothing)
            if isinstance(text, ir.Const) and type(text.value) in (int, str, bool):
                # (`str(idx)` of an index known here: its text, as a key `"W" + str(i)`)
                made = self.pf.resolve(e.func.id)(text.value)
                return ir.Const(made, repr(made))
        carried = self.carried_getattr(e)
        if carried is not None:
            return carried
        named = self.named_getattr(e, hint, into)
        if named is not None:
            return named
        if isinstance(e.func, gast.Name) and e.func.id == ARGUMENT and len(e.args) == 1 and \
                e.func.id not in self.locals:
            # a spliced factory's parameter (factories.py): a copy kept under its own name
            arg = self.expr(e.args[0], hint, None)
            if not isinstance(arg, ir.Var) or self.closure_of(arg) is not None:
                return arg  # (a constant, a function: no Tensor on the tape either)
            out = self.result(self.op_call(control.identity, [arg], {}, e), hint, into, e)
            last = self.body[-1] if self.body else None
            if isinstance(last, ir.Call) and last.target == out.name and not self.generated:
                last.scope = True
            return out
        chosen = self.dispatched_call(e, hint, into)
        if chosen is not None:  # (`act = f0 if c else np.tanh; act(x)`: closure_values.py)
            return chosen
        listed = self.listed_objects(e, hint)
        if listed is not None:  # (`list(self.layers)`: a display of those objects)
            return listed
        copied = self.copied_list(e)
        if copied is not None:  # (list(ws): a display of the same items, or a `list` op)
            kind = tuple if isinstance(copied, ir.Seq) and copied.kind == "tuple" else list
            return self.result(self.op_call(kind, [copied], {}, e), hint, into, e)
        site = self.resolve_call(e, hint)
        if site[0] == "op" and self.is_lifted_partial(e) and is_opaque(site[1]):
            # (a nested function as a value: closure_values.py)
            site = self.closure_made_op(site, e)
            out = self.result((site[1], site[2]), hint, into, e)
            self.note_closure(out, e, site[2])
            return out
        if site[0] == "op":
            known = self.known_predicate(site[1], site[2], e)
            if known is not None:
                return known
            return self.result((site[1], site[2]), hint, into, e)
        return self.emit_user_call(site, e, hint, into)

    def known_predicate(self, op, args: dict, e):
        """`isinstance(layer, Dense)`, `issubclass(cls, Base)`, `callable(layer.act)` and
        `hasattr(layer, "W")` of objects known here -- a module's layer, one of a list srcad
        unrolls a loop over, `self` of a bound method: the answer, a constant, so that `if
        isinstance(layer, Dense): layer.W = W` keeps only the branch Python takes (a store
        into an object under a test known only when the code runs is one srcad cannot
        follow). The objects and classes are guarded by identity already; an object's type
        does not change. An attribute's presence may: `hasattr` is guarded on it (guards.py
        "has") and checked again where the test stands, so a change between calls rebuilds
        the code and one during the call stops it there, never a branch taken silently.
        An `abc.ABC` the object's class does not derive from answers False until `register`
        adds a class: checked again where the test stands too; other metaclasses are tested
        when the code runs. None where the answer is known only then."""
        fn, atoms = getattr(op, "fn", None), list(args.values())
        if isinstance(args.get("_fn"), ir.Const):  # (a builtin with no row: an opaque call)
            fn, atoms = args["_fn"].value, [args[f"_a{i}"] for i in range(len(args) - 1)
                                            if f"_a{i}" in args]
            if len(atoms) != len(args) - 1 or "*" in (getattr(op, "spelling_src", "") or "*"):
                return None  # (keywords, `*args`: tested when it runs)
        if len(atoms) == 2 and isinstance(atoms[1], ir.Seq) and \
                all(isinstance(a, ir.Const) for a in atoms[1].items):  # (a tuple of classes)
            atoms = [atoms[0], ir.Const(tuple(a.value for a in atoms[1].items), "classes")]
        if fn not in (isinstance, issubclass, callable, hasattr) or self.generated or \
                not atoms or not all(isinstance(a, ir.Const) for a in atoms):
            return None
        values = [a.value for a in atoms]
        registered: list = []
        if fn in (isinstance, issubclass):
            answer = decided_class_test(fn, *values, registered) if len(values) == 2 else None
            if answer is None:
                return None
            if registered:
                guards.note_registrations()
        elif fn is hasattr:
            if len(values) != 2 or type(values[1]) is not str or \
                    not is_user_object(values[0]) or isinstance(values[0], type):
                return None
        elif len(values) != 1 or not (is_user_object(values[0]) or callable(values[0])):
            return None
        if fn not in (isinstance, issubclass):
            answer = bool(fn(*values))
        if fn is hasattr or registered:
            # (an attribute's presence, or an ABC's False until a class is registered with
            # it: checked again where the test stands)
            if fn is hasattr:
                guards.note("has", values[0], values[1], answer)
            held = self.emit((op, args), self.fresh(fn.__name__), e)
            test = held if answer else self.emit(
                self.op_call(np.logical_not, [held], {}, e), self.fresh(f"{fn.__name__}_not"),
                e)
            msg = decided_at(CHANGED_DURING_CALL if fn is hasattr else REGISTERED,
                             self.pf.filename, e.lineno)
            self.body.append(ir.Effect("assert", None, {"test": test, "msg": ir.Const(
                msg, repr(msg))}, e.lineno))
        return ir.Const(answer, repr(answer))

    def listed_objects(self, e: gast.Call, hint: str):
        """`list(self.layers)`, `tuple(net.blocks)`, `self.layers.copy()`, `list(net)` (an
        `__iter__` handing over to such a list) of a list or tuple of user objects known here
        (guarded): the display of those very objects, so that a loop over it is written out
        once per object and their methods resolve -- run as written on a copy, they would
        read a differentiated value stored into one of them with no gradient
        (analysis/refusals.py refuses that). Else None."""
        f = e.func
        if e.keywords or any(isinstance(a, gast.Starred) for a in e.args):
            return None
        if isinstance(f, gast.Name) and f.id not in self.locals and len(e.args) == 1 and \
                self.pf.resolve(f.id) in (list, tuple):
            src, kind = e.args[0], self.pf.resolve(f.id)
        elif isinstance(f, gast.Attribute) and f.attr == "copy" and not e.args:
            src, kind = f.value, list
        else:
            return None
        value = self.known_chain(src)
        found = delegated_sequence(value, "__iter__")
        if found is not None:
            value = found[1]
        if not is_object_sequence(value) or (isinstance(f, gast.Attribute) and
                                             type(value) is not list):
            return None  # (a tuple's `.copy()`: Python's AttributeError, where it runs)
        if type(value) is list:
            guards.note("items", value, len(value), value)
        return ir.Seq(tuple(self.constant(o, f"{hint}_{i}", e) for i, o in enumerate(value)),
                      "list" if kind is list else "tuple")

    def known_chain(self, e):
        """What `e` -- a name (a local holding a constant, a global) and attributes of user
        objects (`self.layers`, `net.n_layers`) -- holds while srcad builds the code, each
        lookup guarded; else UNRESOLVED. Emits nothing."""
        chain, root = [], e
        while isinstance(root, gast.Attribute):
            chain.append(root.attr)
            root = root.value
        if not isinstance(root, gast.Name):
            return UNRESOLVED
        if root.id in self.locals:
            held = self.env.get(root.id)
            if not isinstance(held, ir.Const):
                return UNRESOLVED
            value = held.value
        else:
            value = known_value(self.pf, root, self.locals)
        return _attributes_of(value, chain)

    def copied_list(self, e: gast.Call):
        """`ws.copy()` / `copy.copy(ws)` of a list (or tuple) display srcad holds item by
        item: that display (a copy holds the very same objects, as Python's shallow copy
        does: a write in place through one holder's item shows in the other's); `ps.copy()`
        of a list parameter the call's values show to be one (`pf.containers`): the
        parameter, for a `list` op -- not numpy's copy, a 2-d array; else None."""
        f = e.func
        if e.keywords or not isinstance(f, gast.Attribute) or f.attr != "copy":
            return None
        if not e.args:
            src = f.value
        elif len(e.args) == 1 and isinstance(f.value, gast.Name) and \
                f.value.id not in self.locals and self.pf.resolve(f.value.id) is copy:
            src = e.args[0]
        else:
            return None
        if not isinstance(src, gast.Name) or src.id not in self.locals:
            return None
        atom = self.env.get(src.id)
        if isinstance(atom, ir.Var) and atom.name == src.id and \
                src.id in self.pf.unknown_kinds and src.id not in self.pf.containers and \
                src.id not in self.rebound_params and not self.generated:
            # (a list's copy holds the very same arrays, numpy's copies one: the first
            # call's arguments tell which -- transformed.py normalises again with them)
            raise self.pf.error(
                f"`{ast.unparse(e)}` of the argument `{src.id}`: a list's shallow copy "
                f"(its items the very same arrays) or numpy's copy of an array, as the "
                f"argument holds; srcad waits for the call's arguments to tell", e,
                cls=SharingUnknownError,
                hint=f"call the transformed function (its arguments tell), or spell the "
                f"copy you mean: `list({src.id})` or `np.copy({src.id})`")
        if isinstance(atom, ir.Var) and atom.name == src.id and \
                src.id in getattr(self.pf, "containers", ()) and \
                (src.id,) not in getattr(self.pf, "dict_paths", ()) and \
                src.id not in self.rebound_params:
            # (`ps.copy()` of a list the call gives: list(ps), not numpy's copy of it)
            return atom
        if not isinstance(atom, ir.Seq):
            items = self.list_items_of(src.id)
            if items is None or [k for k, _ in items] != list(range(len(items))):
                return None
            atom = ir.Seq(tuple(a for _, a in items), "list")
        return atom if atom.kind == "list" or e.args else None

    def emit_user_call(self, site, e, hint: str, into, *, discard: bool = False):
        _, obj, spelled, args, kwargs, checkpointed = site
        call = self.user_call(obj, spelled, args, kwargs, e)
        self.refuse_module_array_writes(call, e)
        self.note_item_given_with_its_container(call, e)
        chosen = self.returned_function(call, e)
        if chosen is None:
            chosen = self.returned_objects(call, e)
        if chosen is None:
            chosen = self.objects_found_by_running(call, e)
        if chosen is not None:
            # `act = get_activation("relu")`: a factory whose branches the values known here
            # chose (chosen.py) returns one function, a constant -- the caller calls it as
            # it calls `relu` itself (the factory has no effect to keep)
            if into is not None and into is not _RETURN:
                self.env[into[0]] = chosen
            self.folded.extend(call.callee.folded)  # (`return ACTS[name]`: read here now)
            return chosen
        if obj in LIFTED and not checkpointed:  # a nested def or lambda (inline.py)
            return self.inline_call(call, into, hint, e)
        if (call.callee.closures_out or call.closures_in) and not checkpointed:
            # `dense(W1)` returning a nested function that closes over W1, `layer(h, W,
            # act=lambda z: z * s)` given one: spliced in, so the closure is called with the
            # values it closes over (closure_values.py)
            return self.inline_call(call, into, hint, e, scoped=True)
        if not checkpointed and self.passes_written_dict(call):
            # `bn_forward(x, bn_param)` writing `bn_param[k] = v`: Python changes the caller's
            # dict, so the caller reads the new entries after the call -- spliced in here,
            # the callee's writes are the caller's (inline.py), gradients included
            return self.inline_call(call, into, hint, e)
        self.refuse_twice_held_writes(call, e)
        call.checkpoint = checkpointed
        call.discard = discard
        if into is _RETURN:
            call.targets = [self.fresh(self.pf.name)]
        elif into is not None:
            call.targets = [self.def_name(into[0], into[1])]
        else:
            called = call.callee.name  # (a lambda bound to a name is `lambda_L<n>`)
            call.targets = [self.fresh(f"{hint}_{called}")]
        if call.carried:
            # (the callee's value, then what it left on objects: `d1.output` read below)
            result = call.targets[0]
            call.targets = [self.fresh(f"{result}_and_state")]
            self.body.append(call)
            whole = ir.Var(call.targets[0])
            var = self.emit(self.op_call(operator.getitem, [whole, _at(0)], {}, e), result, e)
            call.carried_atoms = []
            for i, (obj, attr) in enumerate(call.carried, 1):
                held = self.emit(self.op_call(operator.getitem, [whole, _at(i)], {}, e),
                                 self.fresh(f"{call.callee.name}_{attr}"), e)
                self.attr_carry[(id(obj), attr)] = (obj, held)
                call.carried_atoms.append((obj, attr, held))
                self.carry_into_local(obj, attr, held, e)
        else:
            self.body.append(call)
            var = ir.Var(call.targets[0])
        for obj, attr, before in call.changed_given:
            # (`log = s.log; log.pop(0)` there: Python's object holds the changed list --
            # read from it, as the caller's value from here on. Before the session of
            # 2026-12-07, fourteenth, the caller kept its own value of it, and gave it
            # again to its next callee, which put it back on the object: a wrong state)
            src = self.object_spelled(obj, f"{attr}_owner")
            held = self.emit((attribute_after(attr, call.callee.name), {
                "_obj": ir.Const(obj, src), "_before": before}),
                             self.fresh(f"{call.callee.name}_{attr}"), e)
            self.attr_carry[(id(obj), attr)] = (obj, held)
            self.carry_into_local(obj, attr, held, e)
        self.made.setdefault(var.name, []).append(call)  # (loops.py: what it may hold)
        if into is not None and into is not _RETURN:
            self.env[into[0]] = var
            if getattr(call, "returns_dict", False):  # (its next callee walks its keys)
                self.pf.dict_known = self.pf.dict_known | {(into[0],)}
        return var

    def note_item_given_with_its_container(self, call: ir.UserCall, node) -> None:
        """`h(cfg["hist"], cfg)` where `h` changes one of the two (`log[-1] = v`, `log.pop()`,
        `cfg["hist"] = ...`): Python's one list shows the change through the other name,
        which source mode's code, normalising the callee on its own, does not follow -- a
        wrong state and value, silently, before the session of 2026-12-07, thirteenth. A
        refusal for source mode (tape mode runs Python's objects and is right), raised by
        analysis/refusals.py."""
        roots = [self.item_roots(a) for a in call.args]
        for i, a in enumerate(call.args):
            for j, b in enumerate(call.args):
                if i == j or not isinstance(b, ir.Var) or b.name not in roots[i] or \
                        not (changes_param(call.callee, call.callee.params[i]) or
                             changes_param(call.callee, call.callee.params[j])):
                    continue
                item, whole = call.callee.params[i], call.callee.params[j]
                self.source_refusals.append(self.pf.error(
                    f"`{call.callee.name}` is given `{self.spelled(b.name)}` and an item of "
                    f"it (its `{item}` and `{whole}`), and changes one of them: Python's one "
                    f"object shows the change through the other name, which srcad's source "
                    f"mode does not follow there", node,
                    hint=f"give `{call.callee.name}` the container alone and read the item "
                    f"inside (`{whole}[...]`), or use mode=\"tape\""))
                return

    def item_roots(self, atom, depth: int = 0) -> set:
        """The names `atom` was read from by items (`h = cfg["hist"]`: {"cfg"}), through
        copies, at any depth."""
        if not isinstance(atom, ir.Var) or depth > 8:
            return set()
        made = self.definitions(atom.name)
        if len(made) != 1 or not isinstance(made[0], ir.Call) or \
                made[0].op.name not in ("getitem", "copy"):
            return set()
        first = next(iter(made[0].args.values()), None)
        if not isinstance(first, ir.Var):
            return set()
        return {first.name} | self.item_roots(first, depth + 1)

    def refuse_twice_held_writes(self, call: ir.UserCall, node) -> None:
        """A list display holding one array in two slots (`f([W, W], x)`) given to a callee
        that writes into that list's items: Python's one array shows the write in both
        slots, which the callee's code, not knowing its argument, does not follow."""
        for p, a in zip(call.callee.params, call.args):
            if p not in call.callee.written or not isinstance(a, ir.Seq) or \
                    not _item_written_as_a_store(call.callee, p):
                continue
            items = [x for x in a.items if isinstance(x, ir.Var)]
            if any(self.same_array(x, y) for i, x in enumerate(items) for y in items[i + 1:]):
                raise self.unsupported(
                    f"{call.callee.name} writes into the items of its argument `{p}`, and this "
                    f"call gives it a list holding one array in two places: Python's one "
                    f"array shows the write in both, which srcad does not follow there",
                    node, f"pass a list of distinct arrays (`[W, W.copy()]`), or write "
                    f"through one name in {call.callee.name}")

    def returned_function(self, call, node) -> ir.Const | None:
        """The function a user call returns, where its body is known to return that one
        function and does nothing else (no statement but its return, no state it leaves):
        a constant; else None."""
        ret = call.callee.ret
        if not (isinstance(ret, ir.Return) and isinstance(ret.value, ir.Const)):
            return None
        fn = ret.value.value
        if not callable(fn) or isinstance(fn, type) or len(call.callee.body) != 1 or \
                call.carried or call.callee.written or call.callee.written_arrays or \
                call.callee.state_out:
            return None
        name = getattr(fn, "__name__", "")
        if fn in LIFTED:  # (a lambda the factory returns, closing over nothing -- a value
            # would be a partial: closure_values.py -- spelled under a name of this function)
            return self.constant(fn, self.fresh(f"{call.callee.name}_{name}"), node)
        return self.constant(fn, name if name.isidentifier() else "fn", node)

    def returned_objects(self, call, node) -> ir.Seq | None:
        """The list or tuple of user objects a user call returns, where its body only returns
        a display of objects known here (``def params(self): return [self.W, self.b]`` of
        parameter objects) and does nothing else: that display, its items constants, so a
        loop over it is written out per object and a store into one (``p.value = v``) is
        followed; else None."""
        ret, checks = call.callee.ret, call.callee.body[:-1]
        if not (isinstance(ret, ir.Return) and isinstance(ret.value, ir.Seq) and
                ret.value.items and call.callee.body[-1:] == [ret]) or call.carried or \
                call.callee.written or call.callee.written_arrays or call.callee.state_out or \
                not all(_a_check(st) for st in checks):
            return None
        items = ret.value.items
        if not all(isinstance(a, ir.Const) and is_user_object(a.value) and
                   not isinstance(a.value, type) for a in items):
            return None
        if not self.copied_checks(checks, node):
            return None
        return self.objects_display(call, [a.value for a in items], ret.value.kind, node)

    def objects_display(self, call, objects: list, kind: str, node) -> ir.Seq:
        """The display of the objects a call hands out, each a constant named after it (a
        (name, object) pair a tuple of the two: `named_parameters()`)."""
        def item(v, i):
            if type(v) is tuple:
                return ir.Seq(tuple(item(x, f"{i}_{j}") if type(x) is not str and
                                    type(x) is not int else ir.Const(x, repr(x))
                                    for j, x in enumerate(v)), "tuple")
            return self.constant(v, f"{call.callee.name}_{i}", node)

        return ir.Seq(tuple(item(v, i) for i, v in enumerate(objects)), kind)

    def objects_found_by_running(self, call, node) -> ir.Seq | None:
        """The user objects a call returns where its code, run now on the objects it is
        given, only walks objects known here (`model.parameters()`, a generator over the
        module's dicts of parameters and sub-modules: staticrun.py): their display, each a
        constant, so a loop over them is written out per object; else None."""
        if not call.args or not all(isinstance(a, ir.Const) for a in call.args) or \
                call.carried or call.callee.written or call.callee.state_out:
            return None
        found = returned_objects_by_running(call, [a.value for a in call.args])
        if found is None:
            return None
        if self.may_change_before(found[1], node):
            # (its list read now might miss what the function adds first; run as written,
            # a store into an object it hands out is one srcad cannot name -- which code
            # run as written on the model may read: refused here, where it is clear)
            walked = ", ".join(sorted({f".{a}" for _, a in found[1]}))
            raise self.unsupported(
                f"`{call.callee.name}(...)` hands out objects srcad finds when it builds the "
                f"code by walking what it reads ({walked}), "
                f"and {self.pf.name} may change those before the call (an assignment, a "
                f"container changed in place, a method that changes them)", node,
                hint=f"call `{call.callee.name}(...)` before changing the model, or change it "
                "outside the differentiated function")
        objects = found[0]
        return self.objects_display(call, list(objects),
                                    "tuple" if type(objects) is tuple else "list", node)

    def may_change_before(self, read: list, node) -> bool:
        """May this function change what the attributes `read` (object, name) hold before
        `node` runs: assign one of those names anywhere, change a container one holds in
        place (`m._params["w"] = p`, `m._modules.update(...)`), or -- where an object's class
        has a `__setattr__` of its own, which may file the value away (`self._params[name] =
        value`) -- assign any attribute before the call's line?"""
        names = {attr for _, attr in read}
        custom = any(getattr(type(obj), "__setattr__", object.__setattr__) is not
                     object.__setattr__ for obj, _ in read)
        # (a method of the class that sets or changes one of them -- `add_module`,
        # `register_parameter` -- called on anything before the call)
        methods = {name for obj, attr in read if attr in _changed_attrs(type(obj))
                   for klass in type(obj).__mro__ for name, raw in vars(klass).items()
                   if callable(raw)}
        for n in gast.walk(self.pf.tree):
            if isinstance(n, gast.Attribute) and isinstance(n.ctx, (gast.Store, gast.Del)) \
                    and (n.attr in names or (custom and n.lineno < node.lineno)):
                return True
            if isinstance(n, gast.Subscript) and isinstance(n.ctx, (gast.Store, gast.Del)) \
                    and isinstance(n.value, gast.Attribute) and n.value.attr in names:
                return True
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                    isinstance(n.func.value, gast.Attribute) and n.func.value.attr in names:
                return True  # (`m._params.update(..)`, `.append`, `.pop`: any method)
            if custom and isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                    n.func.id == "setattr" and n.lineno < node.lineno:
                return True
            if methods and isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) \
                    and n.func.attr in methods and n.lineno < node.lineno:
                return True
        return False

    def copied_checks(self, checks: list, node) -> bool:
        """A callee's checks (`_a_check`: `return [l for l in self.layers if hasattr(l,
        "W")]`, the comprehension's answers checked again when the code runs --
        objcomps.py), made here where the call stood, under names of this function: False
        (nothing made) where one reads what is not a constant or one of them."""
        names: dict = {}
        for st in checks:
            if not all(isinstance(a, ir.Const) or (isinstance(a, ir.Var) and a.name in names)
                       for a in st.args.values()):
                return False
            if isinstance(st, ir.Call):
                names[st.target] = None
        made: list = []
        for st in checks:
            args = {k: ir.Var(names[a.name]) if isinstance(a, ir.Var) else
                    ir.Const(a.value, self.claim(a.src, a.value)) if is_user_object(a.value)
                    and not isinstance(a.value, type) else a for k, a in st.args.items()}
            if isinstance(st, ir.Call):
                names[st.target] = self.fresh(st.target)
                made.append(ir.Call(names[st.target], st.op, args, node.lineno))
            else:
                made.append(ir.Effect(st.kind, st.op, args, node.lineno))
        self.body.extend(made)
        return True

    def carry_into_local(self, obj, attr: str, held, node, via: str | None = None) -> None:
        """`obj.attr` holds `held` now (a callee left it there, or this function stored it
        through another name for the object): each local this function keeps `obj.attr` in
        (attrstate.py's for its own `self.attr`, objects.py's for an existing object it
        scalarised) but `via` holds it from here on, as the object does in Python."""
        for o, a, local in self.state_locals:
            if o is not obj or a != attr or local == via:
                continue
            if self.body is not self.top_body and local not in self.mutable:
                raise self.unsupported(
                    f"`.{attr}` of this object is set here, inside a branch or a loop, and "
                    f"{self.pf.name} also keeps it under another name: srcad carries it by "
                    f"one value per place here", node, hint=f"set `.{attr}` through one name "
                    "for the object, or return the value from the call")
            if self.env.get(local) == held:
                continue
            op, args = self.op_call(control.identity, [held], {}, node)
            # (a name of its own: the local's own definitions keep theirs, def_name)
            name = local if local in self.mutable else self.fresh(local)
            self.env[local] = self.emit((op, args), name, node)

    def static_text(self, e):
        """The string `e` spells while srcad builds the code -- a literal, a name bound to a
        known str here (an unrolled loop's variable), ``f"fc{i}"``, ``"fc" + str(i)`` of
        known ints and strs -- else None. Emits nothing."""
        v = self._static_value(e)
        return v if type(v) is str else None

    def _static_value(self, e):
        """`static_text`'s str or int value of `e`, or None."""
        if isinstance(e, gast.Constant) and type(e.value) in (str, int):
            return e.value
        if isinstance(e, gast.Name):
            held = self.env.get(e.id) if e.id in self.locals else None
            return held.value if isinstance(held, ir.Const) and \
                type(held.value) in (str, int) else None
        if isinstance(e, gast.JoinedStr):
            parts = []
            for v in e.values:
                if isinstance(v, gast.FormattedValue):
                    if v.format_spec is not None or v.conversion not in (-1, None):
                        return None
                    v = v.value
                part = self._static_value(v)
                if part is None:
                    return None
                parts.append(str(part))
            return "".join(parts)
        if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Add):
            a, b = self._static_value(e.left), self._static_value(e.right)
            return a + b if a is not None and type(a) is type(b) else None
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and \
                e.func.id == "str" and e.func.id not in self.locals and len(e.args) == 1 and \
                not e.keywords and self.pf.resolve("str") is str:
            v = self._static_value(e.args[0])
            return None if v is None else str(v)
        return None

    def named_getattr(self, e: gast.Call, hint: str, into):
        """``getattr(self, f"fc{i}")`` / ``getattr(net, "layer" + str(i))`` in a loop written
        out per index (or with a name known here): the attribute itself, ``self.fc1``, as
        srcad reads it -- the layer it picks resolves -- else None."""
        if not (isinstance(e.func, gast.Name) and e.func.id == "getattr" and
                e.func.id not in self.locals and len(e.args) == 2 and not e.keywords and
                self.pf.resolve("getattr") is builtins.getattr):
            return None
        name = self.static_text(e.args[1])
        if name is None or not name.isidentifier() or isinstance(e.args[1], gast.Constant):
            return None
        read = gast.copy_location(gast.Attribute(value=e.args[0], attr=name,
                                                 ctx=gast.Load()), e)
        return self.expr(read, hint, into)

    def carried_getattr(self, e: gast.Call):
        """`getattr(obj, "attr", default)` (attrstate.py's start value of a local, or the
        user's) of an object known here: `carried_read` of `obj.attr`, or None."""
        if not (isinstance(e.func, gast.Name) and e.func.id == "getattr" and
                e.func.id not in self.locals and 2 <= len(e.args) <= 3 and not e.keywords and
                isinstance(e.args[1], gast.Constant) and isinstance(e.args[1].value, str) and
                self.pf.resolve("getattr") is builtins.getattr):
            return None
        read = gast.copy_location(gast.Attribute(value=e.args[0], attr=e.args[1].value,
                                                 ctx=gast.Load()), e)
        return self.carried_read(read)

    def carried_read(self, e):
        """`d1.output` / `layer.prev.output` after a call that stored it (`self.output = ...`
        in d1's forward): the value the callee stored, carried out of it (state.py); the
        local this function keeps the attribute in (attrstate.py, objects.py), read through
        another spelling of the object (`net.layers[2].output`) -- or,
        where a callee stored it in a branch or a loop, the attribute read when the code runs
        (never a value folded before the call; refusals.check_attribute_state refuses it
        where the stored value carries a gradient). None: neither."""
        if not (self.attr_carry or self.attr_unknown or self.state_locals) or \
                not isinstance(e, gast.Attribute):
            return None
        obj = self.known_object(e.value)
        if obj is None:
            return None
        local = next((loc for o, a, loc in self.state_locals if o is obj and a == e.attr),
                     None)
        if local is not None and local in self.env:  # (the object spelled another way:
            return self.env[local]  # `net.layers[2].output` of the layer whose .output it is)
        hit = self.attr_carry.get((id(obj), e.attr))
        if hit is not None and hit[0] is obj:
            self.carry_log.append(((id(obj), e.attr), hit[1]))
            return hit[1]
        if (id(obj), e.attr) in self.attr_unknown:
            base = self.expr(e.value, "obj", None)
            return self.result((opaque_attribute(e.attr), {"_obj": base}), e.attr, None, e)
        return None

    def known_object(self, e):
        """The user object `e` (a name, `a.b`, `self.layers[-1]`) certainly holds when
        normalising, or None."""
        chain, root = [], e
        while isinstance(root, gast.Attribute):
            chain.append(root.attr)
            root = root.value
        if isinstance(root, gast.Call) and isinstance(root.func, gast.Name) and \
                root.func.id == "getattr" and root.func.id not in self.locals and \
                len(root.args) == 2 and not root.keywords and \
                self.pf.resolve("getattr") is builtins.getattr:
            name = self.static_text(root.args[1])  # (`getattr(net, name).W = w`)
            if name is None or not name.isidentifier():
                return None
            read = gast.copy_location(gast.Attribute(value=root.args[0], attr=name,
                                                     ctx=gast.Load()), root)
            for attr in reversed(chain):
                read = gast.copy_location(gast.Attribute(value=read, attr=attr,
                                                         ctx=gast.Load()), root)
            return self.known_object(read)
        if isinstance(root, gast.Subscript):  # (`self.layers[-1].output`)
            held = self.expr(root, "obj", None)
            obj = _attributes_of(held.value, chain) if isinstance(held, ir.Const) else None
        else:  # (a name and its attributes: `layer.prev`, an object held by an object)
            obj = self.known_chain(e)
        return obj if is_user_object(obj) else None

    # hooks (closures.py, methods)
    def namedtuple_method(self, func, e, hint):
        """`q.double()` where q holds a namedtuple whose class (a `typing.NamedTuple`, or a
        subclass of a namedtuple) defines that method: the user function, called with q --
        its `self.A` is the field, as q's is. None for anything else."""
        if not isinstance(func, gast.Attribute):
            return None
        nt = self.namedtuple_of(func.value)
        if nt is None or func.attr in nt._fields:
            return None
        method = inspect.getattr_static(nt, func.attr, None)
        if not (isinstance(method, types.FunctionType) and user_method(method) is not None):
            return None
        guards.note_attr(nt, func.attr, getattr(nt, func.attr))
        e = self.spread_for(method, e, skip=1)
        args, kwargs, starred = self.call_args(e, hint)
        if starred:
            self.refuse_starred(e, f"the method `{func.attr}`")
        spelled = "_".join(p for p in method.__qualname__.split(".") if p != "<locals>")
        return ("user", method, spelled, [self.expr(func.value, hint, None), *args], kwargs,
                False)

    def bound_method_call(self, base, attr: str, e, hint):
        """``self.helper(x)``, ``act.fn(z)``, ``Cost.make(y)`` on an object known when
        normalising (the `self` of ``srcad.grad(obj.method)``, a global, an attribute of one,
        a user object passed to a subroutine): the method's function, traced as a user
        function with the object (or, for a classmethod, the class) as its first argument."""
        if not isinstance(base, ir.Const):
            return None
        method = getattr(base.value, attr, guards.MISSING)
        guards.note_attr(base.value, attr, method)  # (the method `self.helper` finds now)
        return self.method_site(base, method, attr, e, hint)

    def is_super(self, e) -> bool:
        return (isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and not e.args
                and not e.keywords and e.func.id not in self.locals
                and self.pf.resolve(e.func.id) is builtins.super)

    def super_call(self, func: gast.Attribute, e, hint):
        """``super().forward(x)`` in a method whose object is known (the `self` of
        ``srcad.grad(obj.method)``, or passed on by its caller): the next class's method in
        the object's method order, traced as a user function."""
        cls = self.pf.closure.get("__class__")
        first = next(iter(self.pf.constants), None) or (self.pf.params or [None])[0]
        base = self.env.get(first) if first is not None else None
        if cls is None or not isinstance(base, ir.Const):
            raise self.unsupported(
                "`super()` here: srcad resolves it only in a method whose object is known "
                "when it is transformed", e,
                "differentiate the bound method (srcad.grad(obj.method)), or call the "
                "parent's method by name: Parent.method(self, ...)")
        method = getattr(super(cls, base.value), func.attr, guards.MISSING)
        guards.note_attr(cls, func.attr, getattr(cls, func.attr, guards.MISSING))
        site = self.method_site(base, method, func.attr, e, hint)
        if site is None:
            raise self.unsupported(f"`super().{func.attr}`, which is not a user's method", e)
        return site

    def method_site(self, base: ir.Const, method, attr: str, e, hint):
        """The user call of `method` (found as `base.attr`), or None if it is not a user's.
        A method decorated `@srcad.checkpoint` is checkpointed."""
        checkpointed = isinstance(method, Checkpointed)
        if checkpointed:
            method = method.fn
        target = user_method(method)
        if target is None and ((_hashable(method) and table.lookup(method) is not None) or (
                is_user_object(method) and callable(method))):
            # (`self.fn = np.tanh`; `self.loss_fn = MSE()` called as `self.loss_fn(p, y)`)
            return self.call_of(method, attr, e.func, e, hint)
        if target is None:
            return None
        fn, bound = target
        e = self.spread_for(fn, e, skip=0 if bound is guards.MISSING else 1)
        args, kwargs, starred = self.call_args(e, hint)
        if starred:
            self.refuse_starred(e, f"the method `{attr}`")
        # (named after where it is defined: `Base_forward` for super()'s, not the child's)
        spelled = "_".join(p for p in fn.__qualname__.split(".") if p != "<locals>")
        if bound is guards.MISSING:  # a staticmethod, or a function stored on the object
            return ("user", fn, spelled, args, kwargs, checkpointed)
        # (the object the method is bound to: a class for a classmethod, or another object
        # -- `wrapper.apply` found by the wrapper's `__getattr__` on the object it wraps)
        first = base if bound is base.value else self.constant(
            bound, getattr(bound, "__name__", None) or type(bound).__name__.lower(), e)
        return ("user", fn, spelled, [first, *args], kwargs, checkpointed)


def _at(i: int) -> ir.Index:
    return ir.Index((ir.Const(i, repr(i)),), False)


def _attributes_of(value, chain: list):
    """`value`'s attribute `chain` (innermost last, as `known_chain` gathers it) through
    user objects, each lookup guarded; UNRESOLVED where one is not a user object or lacks
    the attribute."""
    for attr in reversed(chain):
        if not is_user_object(value):
            return UNRESOLVED
        sub = getattr(value, attr, guards.MISSING)
        guards.note_attr(value, attr, sub)
        if sub is guards.MISSING:
            return UNRESOLVED
        value = sub
    return value


def changes_param(fn: ir.Function, p: str) -> bool:
    """Might `fn` change the list, dict or array its parameter `p` holds, or one held in it
    -- a store, a write, a changing method, or a user function given it (assumed to)?
    (Asked after every statement that calls `fn`: kept on it, per parameter.)"""
    known = fn.__dict__.setdefault("_changes_param", {})
    if p not in known:
        known[p] = True  # (asked again while answering: a function calling itself)
        known[p] = _changes_param(fn, p)
    return known[p]


def _changes_param(fn: ir.Function, p: str) -> bool:
    if p in fn.written or p in fn.written_arrays:
        return True
    made = {}
    for s in ir.walk(fn.body):
        for d in ir.defs(s):
            made.setdefault(d, []).append(s)

    def root(atom, k=0):
        if not isinstance(atom, ir.Var) or k > 8:
            return None
        if atom.name == p:
            return p
        defs = made.get(atom.name, [])
        if len(defs) != 1 or not isinstance(defs[0], ir.Call) or \
                defs[0].op.name not in ("getitem", "copy", "setitem", "write_through"):
            return None
        return root(next(iter(defs[0].args.values()), None), k + 1)

    for s in ir.walk(fn.body):
        # (a user function given it: where that function may change what it is given there
        # -- before the session of 2026-12-07, fourteenth, any call given it counted)
        if isinstance(s, ir.UserCall) and any(
                root(v) == p and changes_param(s.callee, q)
                for q, a in zip(s.callee.params, s.args) for v in map(ir.Var, ir.atom_vars(a))):
            return True
        if isinstance(s, (ir.Call, ir.Effect)) and s.op is not None:
            first = next(iter(s.args.values()), None)
            if root(first) != p:
                continue
            if s.op.family == "opaque method" and \
                    s.op.name.lstrip(".") in runtime_python.MUTATING:
                return True
            if isinstance(s, ir.Call) and (s.inplace or s.op.name in (
                    "setitem", "write_through", "list_append", "dict_set")):
                return True
    return False
