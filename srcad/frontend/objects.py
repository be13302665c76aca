"""Objects built inside a differentiated function: ``fc = Dense(W, b); h = fc.forward(x)``.

Layer libraries written for a hand-written backward are used by building the layers in the
loss function and calling their methods: ``Dense(W1, b1)`` stores the very arrays being
differentiated on the object, ``forward`` reads them back through ``self.W`` and keeps what
it computed on ``self``. Python runs that code with one object whose attributes change; srcad
needs the arrays' data flow. So an object the function builds is *scalarised* (compilers call
it scalar replacement of aggregates): it never exists at run time; each of its attributes is a
local variable of the function, and each method called on it is a function of its own that
takes the attributes it reads and returns, after its result, the attributes it assigns:

    fc = Dense(W, b)              fc_W, fc_b, fc_x = None, None, None    (its attributes)
                                  fc_W, fc_b, fc_x = Dense___init__(W=W, b=b)
    h = fc.forward(x)             forward, fc_x = Dense_forward(fc_W, fc_b, x=x)
                                  h = forward
    def Dense_forward(self_W, self_b, x):       (a nested function: lifted and inlined by
        self_x = x                               closures.py / inline.py like any other)
        return x @ self_W + self_b, self_x

What is followed, statically, from the class the call resolves to (a user class of the same
module, guarded like any other name): ``__init__`` and methods reached through the object,
``self.m()``, ``super().m()``, ``obj()`` (``__call__``), properties (their getter), class
attributes and static/class methods (read from the class: ``Dense.scale``); objects held in
attributes (``self.act = Tanh()``) and lists of objects (``[Dense(..), Tanh()]``, iterated by
``for``/``reversed``/``enumerate``, which are unrolled, indexed by a constant, ``len``);
objects passed to methods and user functions (specialised per call site);
``isinstance(obj, C)`` (a constant; of a value that is no built object, False, checked where
the code runs: a wrapper's ``other if isinstance(other, T) else T(other)``); a class or
function picked from a module registry by a string argument (``ACTIVATIONS[name]()``); a
method whose one ``return`` (its last statement) gives back an object it builds (``def
deriv(self): return poly1d(...)``: the caller holds the new object, its state returned after
the result); operators on built objects (``p + q`` is
``p.__add__(q)``, or ``q.__radd__(p)`` as Python picks; ``-p``; ``p += q`` with no
``__iadd__`` is ``p = p + q``), unless the method may return NotImplemented; builtins that
say something of the object itself (`_object_builtin`: ``type``, ``id``, ``callable``,
``str``/``repr`` -- its ``__str__``/``__repr__``, or object's with an address of its own --,
``hasattr`` from the attributes assigned so far, ``getattr`` by a known name, also called:
``getattr(self, "_" + self.kind)(x)``); ``setattr(self, f"W{i}", v)`` / ``getattr(self, "W" +
str(i))`` by names an unrolled loop makes (an attribute a method names by setattr is state
like the others); ``Dense(**spec)`` of a dict read when the call runs, spelled out by the
constructor's parameters; a loop or comprehension over a module's list (``for spec in
ARCH``), unrolled by its length; ``functools.reduce(lambda h, layer: layer(h), layers, x)``,
the fold unrolled; ``obj is None`` (a constant); a classmethod
factory that builds ``cls(...)`` (``Model.from_params(p, **kw)``: the constructor call it
makes, a ``**kwargs`` of known keys expanded by name); ``__init__(self, W, *args,
**kwargs)`` handing both on to ``super().__init__``; a property's setter (``layer.w = v``);
a static method of a class picked from a registry (``ACTIVATIONS[name].f(x)``); a ``while``
loop walking objects linked by an attribute (``node = node.next``: unrolled); a list
comprehension whose item calls a built object (the loop Python runs); ``*layers`` of objects
(a list of them); ``__iter__`` / ``__len__`` / ``__getitem__`` that hand over to a list of
objects the object holds (`_delegate`); comprehensions over a list of objects or over a known
range reading them, unrolled; a comprehension's first iterable evaluated where it stands (a
method called there). Lists held in attributes that methods change in place
(``self.cache.append(z)``, ``self.derived["Z"].append(z)``, ``x = self.hs.pop(0)``) are
written as assignments (`_Rewriter._container_change`: ``self.cache = list_concat(self.cache,
[z])``), so their state flows through the methods like any attribute's -- only where every
value stored there is a new list and no read keeps a second name for it (`_container_depth`,
checked again over every function followed); else the change is left as written (and
refused where it matters). An existing
object the function reaches by a free name or an argument (a module-level RNN cell) is
scalarised the same way when the methods called on it keep state that a later read in the
call sees (``self.h = tanh(W @ self.h + ..)``): its attributes are read as the call starts
(those read before they are set) and written back as it returns. Anything else the function
does with such an object (returns it from the function, hands it to a library, a dynamic
attribute, ``self`` escaping a method, an object or list built in one arm of a branch only)
leaves the function as written: the construction is then a call with no rule, refused where
a gradient needs it.
"""

from __future__ import annotations

import abc
import copy
import dataclasses
import functools
import inspect
import operator
import types
from collections import OrderedDict
from dataclasses import dataclass, field

import gast

from ..errors import (CalleeUnknownError, CountUnknownError, UnsupportedSyntaxError,
                      in_substitute)
from ..naming import fresh
from ..pyfuncs import CLASS_SUBSTITUTES, class_substitute, substituted_owner
from ..runtime_python import list_concat, same_length, spread_keywords, star_count
from . import guards
from .attrstate import (DICT_COPY, _may_read_before_store, container_aliases, dict_update,
                        kept_store, own_change)
from .opaque import NOT_FOLLOWED, class_attribute, is_namedtuple_type, is_user_object, \
    library_file
from .parse import UNRESOLVED, _star_as_tuple, parse_function

_SUBSTITUTE_CLASSES = tuple(CLASS_SUBSTITUTES.values())
_COMPARE = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
            gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
            gast.Is: operator.is_, gast.IsNot: operator.is_not}
_INT_OPS = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
            gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod}
_FOLD_OPS = {**_INT_OPS, gast.Div: operator.truediv}
_CONST_TYPES = (str, int, float, bool, type(None))
_MUTATORS = ("append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort")
# builtins that say something of an object itself (its class, identity, attributes), never
# of its arrays: followed on a built object (`_Rewriter._object_builtin`)
_OBJECT_BUILTINS = ("type", "id", "callable", "str", "repr", "len", "hasattr", "getattr")
# the changes to a list held in an attribute written as assignments (`_container_change`)
_CHANGES = ("append", "extend", "insert", "pop")
# what may be done with such a list (or a dict of them) besides changing it, by the name it
# is read through: nothing that keeps a second name for it
_READ_METHODS = ("get", "keys", "index", "count", "copy", "values", "items")
_CONSUMERS = ("len", "sum", "min", "max", "list", "tuple", "sorted", "any", "all", "str",
              "repr", "print", "enumerate", "reversed", "zip")
_STR_FOLDS = ("lower", "upper", "strip", "lstrip", "rstrip", "casefold", "title")
_ANY_RETURN = object()  # (`_Rewriter.object_return`: see there)
_MAX_DEPTH = 24  # nested specialisations (a method calling methods ...): recursion is refused
# operators a built object answers with its methods (``p + q`` -> ``p.__add__(q)``)
_BINARY = {gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "truediv",
           gast.FloorDiv: "floordiv", gast.Mod: "mod", gast.Pow: "pow", gast.MatMult: "matmul"}
_UNARY = {gast.USub: "__neg__", gast.UAdd: "__pos__"}


class _Unsupported(Exception):
    """A use of a built object this pass does not follow: the function is left as written."""


@dataclass(eq=False)
class VObj:
    """An object the function builds (never made at run time)."""
    cls: type
    clsexpr: gast.expr  # how the function that built it spells its class
    attrs: tuple  # the attributes any of its methods assigns on self (its state)
    objects: dict = field(default_factory=dict)  # attribute -> VObj | VList held in it
    label: str = ""  # the name it was built under (its locals are `label_attr`)
    # attribute -> the constant (a str, a number, None) or the list length its __init__ gave
    # it, where no other method assigns it (`self.activation = "relu"`, `self.Ws = Ws`)
    consts: dict = field(default_factory=dict)
    lengths: dict = field(default_factory=dict)
    # attribute -> the callable its __init__ stored there, known when normalising (a global
    # function, np.tanh, a partial; `self.act = act` given one): `self.act(z)` calls it
    funcs: dict = field(default_factory=dict)
    built: bool = True  # made in the function (not an existing object it reaches)
    # the attributes assigned so far (`hasattr`): on every path, on some path
    surely: set = field(default_factory=set)
    maybe: set = field(default_factory=set)
    nones: set = field(default_factory=set)  # attributes whose last store was `= None`
    real: object = None  # the object itself, for an existing one (not built)
    # an existing object's lists the call appends to, never assigns (`_container_change`)
    kept: set = field(default_factory=set)
    # the attributes in the order first assigned (Python's `vars(obj)` order), as far as
    # noted: `vars(self).items()` is unrolled only where it covers every attribute held
    order: list = field(default_factory=list)

    def note(self, attr: str) -> None:
        if attr not in self.order:
            self.order.append(attr)


@dataclass(eq=False)
class VList:
    """A list of built objects, fixed once made; or a dict of them (`keys`: its constant
    keys in insertion order, as a dict or an OrderedDict of layers keeps them)."""
    items: list
    keys: list | None = None
    pairs: bool = False  # `d.items()` of such a dict: iterated as (key, object) pairs
    # what Python holds there, for `isinstance`: "list", "tuple" (a display, `*layers`),
    # "view" (`d.values()`), "iterator", or a user's subclass of list (`_container_marker`);
    # a dict's `keys` say "dict"
    kind: object = "list"


@dataclass(eq=False)
class VBound:
    """A built object's method handed to a user function as a value (``odeint(self.func,
    y0, ts)``, ``rk4_solve(model.dynamics, h0, ts)``): the callee is specialised to it, and
    its calls of the parameter are calls of the method on the object."""
    obj: VObj
    owner: type
    raw: object
    attr: str


@dataclass(eq=False)
class VTuple:
    """A method's `*args` at one call site: the extra arguments, one parameter each."""
    items: list  # gast.Name loads


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _assign(targets: list, value, at):
    if len(targets) == 1:
        target = targets[0]
    else:
        target = gast.Tuple(elts=targets, ctx=gast.Store())
    node = gast.Assign(targets=[target], value=value, type_comment=None)
    return gast.copy_location(node, at)


def _user_function(fn, globals_) -> bool:
    """A Python function of the user's program (this module or another: a method of a class
    imported from the user's layers module reads that module's names, see `localise`)."""
    return isinstance(fn, types.FunctionType) and is_user_object(fn) and \
        not fn.__code__.co_filename.startswith("<")


def _returns_new_object(fn, globals_):
    """The user class of the object the user function `fn` gives back by its one `return`
    (its last statement), built there (`return Gaussian(mu, logvar)`, or a name its body
    assigns one: `state = LSTMState(h, c); return state`); else None."""
    try:
        tree = parse_function(fn).tree
    except Exception:  # noqa: BLE001  (no source: not followed)
        return None
    returns = [n for n in _walk_own(tree) if isinstance(n, gast.Return)]
    if not returns or any(r.value is None for r in returns) or (
            len(returns) == 1 and returns[0] is not tree.body[-1]):
        return None
    made = []
    for r in returns:  # (several: a factory, `if name == "tanh": return Tanh()`, folded
        v = r.value    # by the name the call gives -- objects.py `_ANY_RETURN`)
        made += [v] if isinstance(v, gast.Call) else [
            st.value for st in (tree.body if len(returns) == 1 else _walk_own(tree))
            if isinstance(v, gast.Name) and isinstance(st, gast.Assign) and
            len(st.targets) == 1 and isinstance(st.targets[0], gast.Name) and
            st.targets[0].id == v.id and isinstance(st.value, gast.Call)]
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    for call in made:
        if not isinstance(call.func, gast.Name):
            continue
        name = call.func.id
        try:
            cls = cells[name].cell_contents if name in cells else fn.__globals__.get(name)
        except ValueError:  # (an empty cell)
            continue
        if _is_user_class(cls, globals_):
            return cls
    return None


def _substituted(obj):
    """The class srcad builds in place of a library class (srcad/pyfuncs.py's poly1d for
    np.poly1d) or where a library object is called (scipy.stats.norm(mu, s): a frozen
    distribution, srcad/pystats.py's), or obj itself."""
    if isinstance(obj, type) or substituted_owner(obj):
        return class_substitute(obj)
    return obj


def _is_user_class(obj, globals_) -> bool:
    if not isinstance(obj, type) or type(obj) not in (type, abc.ABCMeta) or \
            not is_user_object(obj):
        return False
    if _container_marker(obj) is not None:
        return True  # (`class ModuleList(list): pass`: `construct` holds it as the list)
    if getattr(obj, "__abstractmethods__", None):  # (Python refuses to make one)
        return False
    method_tuple = _namedtuple_with_methods(obj)
    for bad in ("__new__", "__getattr__", "__getattribute__", "__setattr__"):
        owner, raw = class_attribute(obj, bad)
        if bad == "__getattr__" and _user_function(raw, globals_):
            continue  # (called for what the object and its class do not have: `attribute`)
        if bad == "__setattr__" and _frozen_dataclass(owner) and \
                raw is owner.__dict__.get("__setattr__"):
            continue  # (the one @dataclass(frozen=True) wrote: a store raises, see _frozen)
        if owner is not None and owner is not object and not method_tuple or (
                method_tuple and owner not in (None, object, tuple) and not (
                    bad == "__new__" and  # (the one namedtuple wrote)
                    getattr(getattr(owner.__new__, "__code__", None), "co_filename",
                            "").startswith("<"))):
            return False
    owner, init = class_attribute(obj, "__init__")
    return owner is object or _user_function(init, globals_) or _dataclass_init(obj)


def _made_outside(pf, cls) -> bool:
    """Is an instance of `cls` held where the function may reach it without building it --
    an argument it is specialised on, a closure cell, a global it or the class's methods read
    by name, or an item or attribute of one of those? (One made elsewhere -- returned by a
    function of another global -- meets the check `_not_built_instance` leaves in the code.)"""
    g = pf.fn.__globals__
    g = getattr(g, "_base", g)
    read = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)}
    for klass in cls if isinstance(cls, tuple) else (cls,):
        for k in klass.__mro__:
            for raw in vars(k).values():
                for fn in _functions_of(raw):
                    read |= set(fn.__code__.co_names)
    values = [*pf.known.values(), *pf.constants.values(), *pf.closure.values(),
              *pf.bound.values(), *(g[n] for n in read if n in g)]
    for v in values:
        inner = [v]
        if isinstance(v, (list, tuple, set, frozenset)):
            inner += list(v)[:256]
        elif isinstance(v, dict):
            inner += list(v.values())[:256]
        elif is_user_object(v) and not isinstance(v, type):
            inner += list(getattr(v, "__dict__", {}).values())[:256]
        if any(isinstance(x, cls) for x in inner):
            return True
    return False


def _namedtuple_with_methods(cls) -> bool:
    """A namedtuple type (``class Dense(NamedTuple)`` with fields) whose class body defines
    methods of the user's (``__call__``, ``forward``): built in the function, it is an object
    whose fields are its attributes, as a dataclass's are (a namedtuple without methods stays
    a pytree of fields, calls.py)."""
    if not is_namedtuple_type(cls):
        return False
    return any(isinstance(v, types.FunctionType) and is_user_object(v)
               and not v.__code__.co_filename.startswith("<")
               for klass in cls.__mro__ if klass not in (tuple, object)
               for v in vars(klass).values())


def _namedtuple_fields(cls, bind) -> list:
    """A namedtuple's fields as `_fields` gives a dataclass's: [(name, default AST or
    None)]."""
    out = []
    defaults = getattr(cls, "_field_defaults", {})
    for name in cls._fields:
        if name not in defaults:
            out.append((name, None))
            continue
        d = defaults[name]
        out.append((name, gast.Constant(value=d, kind=None) if d is None or
                    type(d) in (int, float, bool, str) else _name(bind(d, f"{name}_default"))))
    return out


def _frozen_dataclass(cls) -> bool:
    """Is `cls` a @dataclass(frozen=True) (its `__setattr__` the one dataclasses wrote)?"""
    params = getattr(cls, "__dataclass_params__", None) if isinstance(cls, type) else None
    raw = vars(cls).get("__setattr__") if params is not None else None
    return bool(params is not None and params.frozen and isinstance(raw, types.FunctionType)
                and raw.__code__.co_filename.startswith("<"))


def _dataclass_init(cls) -> bool:
    """Is `cls.__init__` the one @dataclass wrote (no source of its own: its fields say it)?"""
    owner, init = class_attribute(cls, "__init__")
    return dataclasses.is_dataclass(owner) and isinstance(init, types.FunctionType) and \
        init.__code__.co_filename.startswith("<") and \
        getattr(owner, "__dataclass_params__", None) is not None and \
        owner.__dataclass_params__.init


def _container_marker(cls):
    """A user's subclass of list or tuple that adds no code of its own (``class
    ModuleList(list): pass``, perhaps a docstring or class constants): that base; else
    None."""
    if not isinstance(cls, type) or not issubclass(cls, (list, tuple)):
        return None
    base = list if issubclass(cls, list) else tuple
    for klass in cls.__mro__[:cls.__mro__.index(base)]:
        if any(callable(v) or isinstance(v, (property, staticmethod, classmethod))
               for k, v in vars(klass).items() if not k.startswith("__") or k in (
                   "__init__", "__new__", "__iter__", "__getitem__", "__len__", "__add__",
                   "__call__", "__setitem__")):
            return None
    return base


def _plain_kind(kind):
    """What a slice or a `+` of a list of built objects is, for `isinstance`: a user's
    subclass of list gives a plain list, as Python's list methods do."""
    return ("list" if issubclass(kind, list) else "tuple") if isinstance(kind, type) else kind


def _dataclass_written(klass, fn) -> bool:
    """Is `fn` a method @dataclass wrote for `klass` (`__init__`, `__repr__`, `__eq__`, ...:
    no source; they store each field from its argument or read the fields, and change no
    container in place)?"""
    return dataclasses.is_dataclass(klass) and fn.__code__.co_filename.startswith("<") and \
        fn.__name__.startswith("__") and fn.__name__.endswith("__")


def _fields(cls, bind) -> list:
    """The dataclass's `__init__` parameters: [(name, default AST or None)]. A default that
    is no literal (a functools.partial, a function) is read under a name `bind` gives it; a
    default_factory is called there, as the dataclass's __init__ calls it."""
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        default = None
        if f.default_factory is list:  # (`field(default_factory=list)`: a new list)
            default = gast.List(elts=[], ctx=gast.Load())
        elif f.default_factory is dict:
            default = gast.Dict(keys=[], values=[])
        elif f.default_factory is not dataclasses.MISSING:
            default = gast.Call(func=_name(bind(f.default_factory, f"{f.name}_factory")),
                                args=[], keywords=[])
        elif f.default is not dataclasses.MISSING:
            default = gast.Constant(value=f.default, kind=None) if f.default is None or \
                type(f.default) in (int, float, bool, str) else \
                _name(bind(f.default, f"{f.name}_default"))
        out.append((f.name, default))
    return out


def _state_attrs(cls) -> tuple:
    """Every attribute a method of `cls` (or a base) assigns on its first parameter."""
    found = []
    for klass in cls.__mro__:
        if klass is object:
            continue
        for raw in vars(klass).values():
            for fn in _functions_of(raw):
                try:
                    tree = parse_function(fn).tree
                except Exception:  # noqa: BLE001  (no source: its stores cannot be followed)
                    continue
                params = tree.args.posonlyargs + tree.args.args
                if not params:
                    continue
                me = params[0].id
                for node in gast.walk(tree):
                    targets = node.targets if isinstance(node, gast.Assign) else (
                        [node.target] if isinstance(node, (gast.AugAssign, gast.AnnAssign))
                        else [])
                    stack = list(targets)
                    while stack:
                        t = stack.pop()
                        if isinstance(t, (gast.Tuple, gast.List)):
                            stack.extend(t.elts)
                        elif isinstance(t, gast.Starred):
                            stack.append(t.value)
                        elif isinstance(t, gast.Attribute) and isinstance(t.value, gast.Name) \
                                and t.value.id == me and t.attr not in found and not \
                                isinstance(inspect.getattr_static(cls, t.attr, None), property):
                            found.append(t.attr)  # (`self.w = w` of a property: its setter)
        for name, raw in vars(klass).items():  # (a cached value lives in the instance)
            if isinstance(raw, functools.cached_property) and name not in found:
                found.append(name)
    return tuple(found)


def _class_default(cls, attr: str) -> bool:
    """Does `cls` hold `attr` as a plain value (``class L: W = None``, ``lr = 0.1``) --
    no method, property or other descriptor -- that an instance may shadow?"""
    raw = inspect.getattr_static(cls, attr, None)
    return not attr.startswith("__") and hasattr(cls, attr) and not callable(raw) and \
        not hasattr(type(raw), "__get__")


def _new_plain_attribute(cls, attr: str) -> bool:
    """May an instance of `cls` take `attr` as a plain new attribute -- ``st = State();
    st.h = h`` from outside the class: the class names no such attribute (no method, no
    property, no default), has no ``__slots__`` and no ``__setattr__`` of its own?"""
    if attr.startswith("__") or hasattr(cls, attr):
        return False
    if any("__slots__" in vars(k) for k in cls.__mro__ if k is not object):
        return False
    owner, _ = class_attribute(cls, "__setattr__")
    return owner is object


def _functions_of(raw) -> list:
    """The user functions a class attribute holds: a function, or a property's getter and
    setter."""
    fns = [raw.fget, raw.fset] if isinstance(raw, property) else \
        [raw.func] if isinstance(raw, functools.cached_property) else [raw]
    return [f for f in fns if isinstance(f, types.FunctionType)]


class _Scope:
    """One function's view of the built objects: the local holding each attribute."""

    def __init__(self, taken: set, locals_: set):
        self.taken = taken
        self.locals = locals_  # the function's own names (not globals)
        self.env: dict = {}  # local name -> VObj | VList
        self.names: dict = {}  # (id(VObj), attr) -> local name
        self.objs: dict = {}  # id(VObj) -> VObj (keeps ids alive and meaningful)
        self.entry: dict = {}  # (id, attr) -> name: state received from the caller
        self.stored: set = set()  # (id, attr) assigned in this function
        # (id, attr) that its callers assigned in this call before they called it: the value
        # there at its entry is one the call made (`_container_change`)
        self.fresh_in: set = set()
        self.made: set = set()  # ids of objects built in this function
        self.plain: set = set()  # names read as ordinary values
        # names last given a plain value read from a built object's attribute (`v =
        # getattr(self, name)` of an array): no instance of a user class (its objects are
        # followed as objects)
        self.attr_values: set = set()
        self.lengths: dict = {}  # name -> the length of the list / tuple it holds (static)
        self.mutated: set = set()  # names a list method / an index store changes (no length)
        self.unsafe: set = set()  # names declared global / nonlocal (never a constant)

    def watch(self, fdef) -> None:
        """Note the names of `fdef`'s body whose value srcad must not take as known."""
        self.mutated |= mutated_names(fdef.body)
        self.unsafe |= {n for x in gast.walk(fdef) if isinstance(x, (gast.Global, gast.Nonlocal))
                        for n in x.names}

    def local(self, o: VObj, attr: str, prefix: str | None = None) -> str:
        key = (id(o), attr)
        if key not in self.names:
            base = f"{prefix or o.label or o.cls.__name__.lower()}_{attr}"
            self.names[key] = fresh(base, self.taken)
            self.objs[id(o)] = o
            if id(o) not in self.made:
                self.entry[key] = self.names[key]
        return self.names[key]


def _reachable(statics) -> list:
    """The objects reachable from these static values, each once, in a fixed order."""
    out, seen, todo = [], set(), list(statics)
    while todo:
        s = todo.pop(0)
        if isinstance(s, VList):
            todo[:0] = s.items
        elif isinstance(s, VBound):
            todo.insert(0, s.obj)
        elif isinstance(s, VObj) and id(s) not in seen:
            seen.add(id(s))
            out.append(s)
            todo.extend(s.objects[k] for k in sorted(s.objects))
    return out


class _Rewriter:
    """Rewrites one function body (the user's, or a method's specialised copy)."""

    def __init__(self, owner: _Objects, scope: _Scope, depth: int, klass=None, me=None):
        self.o = owner
        self.scope = scope
        self.depth = depth
        self.klass = klass  # the class whose method this is (for super())
        self.me = me  # the VObj `self` is, in a method
        self.pre: list = []  # statements hoisted before the one being rewritten
        self.no_hoist = 0  # > 0 inside an expression evaluated lazily (IfExp, lambda, ...)
        self.read_now: set = set()  # state locals the current statement has read so far
        # names holding a constant here: an unrolled loop's index in this copy, a parameter
        # given a literal, `n = len(Ws)` / `act = "relu"` outside branches and loops
        self.consts: dict = {}
        self.funcs: dict = {}  # names holding a callable known here (see VObj.funcs)
        # a method's `**kwargs` never rebound, given these keys (a gast.Dict of str keys)
        self.kwdicts: dict = {}
        self.bound_ok = False  # evaluating a followed call's arguments (`VBound`)
        self.in_def = 0  # > 0 inside a nested def or lambda (reads there: when it is called)
        self.calls: list = []  # per call being rewritten: the state read before it
        self.nested = 0  # inside a branch or a loop that is not unrolled
        self.loops: list = []  # per loop (not unrolled) around: the objects names held before
        self.outer_nested = 0  # a method called inside such a branch or loop (its callers')
        self.hint = None  # the name a construction is assigned to (its locals' prefix)
        self.rest: list = []  # the statements after the current one, in its block
        self.object_return = None  # a method's one `return`, last in its body (specialise)
        # (or _ANY_RETURN: any `return` met outside branches and loops not unrolled, after
        # no `return` inside one -- a factory whose `if name == "tanh": return Tanh()` the
        # known name folds)
        self.nested_return = False
        self.returned = None  # the object that `return` gives back, built in the method

    # -- statements --------------------------------------------------------------------------
    def block(self, stmts) -> list:
        out = []
        for i, s in enumerate(stmts):
            self.rest = stmts[i + 1:]
            out.extend(self.stmt(s))
            if out and isinstance(out[-1], gast.Return) and not isinstance(s, gast.Return):
                break  # (`if i == len(self.Ws): return x` known true: the rest is dead)
        return out

    def stmt(self, s) -> list:
        self.pre, self.read_now = [], set()
        self.o.line = getattr(s, "lineno", self.o.line)
        changed = self._container_change(s)
        if changed is not None:
            out = []
            for one in changed:
                out.extend(self.stmt(one))
            return out
        if isinstance(s, gast.Assign):
            return self.assign(s)
        if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name) and \
                isinstance(self.scope.env.get(s.target.id), VObj) and type(s.op) in _BINARY:
            o = self.scope.env[s.target.id]
            if class_attribute(o.cls, f"__i{_BINARY[type(s.op)]}__")[0] not in (None, object):
                raise _Unsupported("an in-place operator method (`__iadd__`)")
            # `p += q` with no __iadd__: `p = p + q`, as Python falls back to
            read = gast.copy_location(_name(s.target.id), s.target)
            return self.assign(gast.copy_location(gast.Assign(
                targets=[s.target], value=gast.copy_location(gast.BinOp(
                    left=read, op=s.op, right=s.value), s), type_comment=None), s))
        if isinstance(s, gast.AugAssign):
            value = self.value(s.value)
            target = self.target(s.target)
            # (`self.W -= t`: the attribute's local written as Python does -- in place where
            # it holds an array, which every name bound to that array sees; `self.n += 1`
            # rebinds it; the normaliser's `op=` decides which when the code runs)
            s.target, s.value = target, value
            return self.pre + [s]
        if isinstance(s, gast.AnnAssign):
            if s.value is None:
                return []
            return self.stmt(gast.copy_location(gast.Assign(
                targets=[s.target], value=s.value, type_comment=None), s))
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and \
                isinstance(s.value.func, gast.Name) and s.value.func.id == "setattr" and \
                "setattr" not in self.scope.locals and len(s.value.args) == 3 and \
                not s.value.keywords and isinstance(self.peek(s.value.args[0]), VObj):
            # `setattr(self, f"W{i}", v)` by a name known here (an unrolled loop's): the
            # attribute store it is, `self.W0 = v`
            obj, key, value = s.value.args
            store = gast.copy_location(gast.Attribute(value=obj, attr=self._attr_name(key),
                                                      ctx=gast.Store()), s.value)
            store.srcad_setattr = True
            return self.pre + self.stmt(gast.copy_location(gast.Assign(
                targets=[store], value=value, type_comment=None), s))
        if isinstance(s, gast.Expr):
            v = self.expr(s.value)
            if isinstance(v, (VObj, VList)):
                return self.pre
            if isinstance(v, gast.Name) and self.pre:
                return self.pre  # (a method called for its effects)
            s.value = v
            return self.pre + [s]
        if isinstance(s, gast.Return):
            if self.nested:
                self.nested_return = True
            if s.value is not None:
                v = self.expr(s.value)
                mine = s is self.object_return or (
                    self.object_return is _ANY_RETURN and not self.nested and
                    not self.nested_return and self.returned is None)
                if isinstance(v, VObj) and mine and (id(v) in self.scope.made or v is self.me):
                    # `return poly1d(...)` as a method's one return: the caller holds the
                    # object (its state returned after the result: `specialise`); `return
                    # self` (an estimator's `fit`): the object it was called on
                    self.returned = v
                    v = gast.copy_location(gast.Constant(value=None, kind=None), s)
                if isinstance(v, (VObj, VList)):
                    raise _Unsupported("the object is returned (`return self` or `return obj`)")
                s.value = v
            return self.pre + [s]
        if isinstance(s, gast.If):
            s.test = self.test(s.test)
            pre = self.pre
            if isinstance(s.test, gast.Constant):  # (`if isinstance(layer, Tanh):` unrolled)
                return pre + self.block(s.body if s.test.value else s.orelse)
            before = dict(self.scope.env)
            self.nested += 1
            s.body = self.block(s.body)
            after_body = self.scope.env
            self.scope.env = dict(before)
            s.orelse = self.block(s.orelse)
            self.nested -= 1
            self._join(before, after_body, self.scope.env, (s.body, s.orelse))
            return pre + [s]
        if isinstance(s, gast.For):
            return self.for_(s)
        if isinstance(s, gast.While):
            walked = self._linked_walk(s)
            if walked is not None:
                return walked
            self._forget_stored(s.body + s.orelse)
            self._forget_carried(s.body)
            self.no_hoist += 1
            s.test = self.value(s.test)
            self.no_hoist -= 1
            before = dict(self.scope.env)
            self.nested += 1
            self.loops.append(before)
            s.body = self.block(s.body)
            self.loops.pop()
            self._same(before, self.scope.env, s.body)
            s.orelse = self.block(s.orelse)
            self.nested -= 1
            self._same(before, self.scope.env)
            return [s]
        if isinstance(s, (gast.Break, gast.Continue)) and self.loops:
            # (leaving the trip where a name holds the object built in it: the copies
            # `_same` makes at the body's end, made here)
            before, out = self.loops[-1], []
            for name in sorted(before):
                now = self.scope.env.get(name)
                if now is not before[name] and isinstance(before[name], VObj):
                    out.extend(self._carry(name, before[name], now, self.scope.env, [s]))
            return out + [s]
        if isinstance(s, gast.FunctionDef):
            self.no_hoist += 1
            self.in_def += 1
            s.body = [self._generic(x) for x in s.body]
            self.in_def -= 1
            self.no_hoist -= 1
            return [s]
        out = self._generic(s)
        return self.pre + [out]

    def _container_change(self, s):
        """`self.cache.append(Z)`, `self.derived["Z"].append(Z)`, `x = self.stack.pop()` on a
        list (or a dict's list) a built object holds in an attribute: the same change as an
        assignment, `self.cache = self.cache + [Z]`, `self.derived["Z"] = self.derived["Z"] +
        [Z]` (a new list: the attribute's state then flows through the methods like any
        other). Only where no second name can see the list change (`_container_depth`);
        else None (the statement as written)."""
        target = None
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Subscript):
            return self._kept_store(s)
        updated = self._built_dict_update(s)
        if updated is not None:
            return updated
        found = dict_update(s)
        if found is not None:  # `self.saved.update({"z": z})`: its values, then a store each
            o = self.peek(s.value.func.value.value)
            if isinstance(o, VObj) and not o.built and o.real is not None and \
                    type(getattr(o.real, found[1], None)) is dict:
                names = [fresh(f"{found[1]}_value", self.o.taken) for _ in found[2]]
                out = [_assign([_name(n, store=True)], v, s)
                       for n, (_, v) in zip(names, found[2])]
                out += [_assign([gast.Subscript(value=copy.deepcopy(s.value.func.value),
                                                slice=k, ctx=gast.Store())], _name(n), s)
                        for n, (k, _) in zip(names, found[2])]
                for x in out:
                    for n in gast.walk(x):
                        if getattr(n, "lineno", None) is None and \
                                isinstance(n, (gast.expr, gast.stmt)):
                            gast.copy_location(n, s)
                return out
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Name):
            target, call = s.targets[0], s.value
        elif isinstance(s, gast.Expr):
            call = s.value
        else:
            return None
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
                call.func.attr in _CHANGES and not call.keywords) or \
                (target is not None and call.func.attr != "pop"):
            return None
        path, depth = call.func.value, 0
        root = path
        while isinstance(root, gast.Subscript):
            root, depth = root.value, depth + 1
        if not isinstance(root, gast.Attribute):
            return None
        o = self.peek(root.value)
        if not isinstance(o, VObj) or root.attr not in o.attrs or \
                root.attr in o.objects or root.attr in o.funcs or \
                self.o.container_depth(o.cls, root.attr) is None:
            return None
        if not o.built and (root.attr in o.kept or (id(o), root.attr) not in
                            self.scope.stored | self.scope.fresh_in):
            # (an existing object's list kept from before the call: see `_kept_change`; one
            # the call assigned is a list it made, changed as a built object's is)
            return self._kept_change(s, o, root, depth, call, target)

        def read():
            return copy.deepcopy(path)

        def part(lower=None, upper=None):
            return gast.Subscript(value=read(), slice=gast.Slice(
                lower=lower, upper=upper, step=None), ctx=gast.Load())

        def num(k):
            return gast.Constant(value=k, kind=None)

        def add(a, b):  # (the lists' `a + b`, as srcad differentiates it)
            if self.o.concat is None:
                self.o.concat = self.o.bind(list_concat, "list_concat")
            return gast.Call(func=_name(self.o.concat), args=[a, b], keywords=[])

        store = copy.deepcopy(path)
        store.ctx = gast.Store()
        args, how = call.args, call.func.attr
        out = []
        if how == "append" and len(args) == 1:
            value = add(read(), gast.List(elts=[args[0]], ctx=gast.Load()))
        elif how == "extend" and len(args) == 1:
            value = add(read(), args[0])
        elif how == "insert" and len(args) == 2:  # (as `a[i:i] = [v]`: Python's clamping)
            value = add(add(part(upper=args[0]), gast.List(elts=[args[1]], ctx=gast.Load())),
                        part(lower=copy.deepcopy(args[0])))
        elif how == "pop" and (not args or isinstance(_const_int(args[0]), int)):
            i = _const_int(args[0]) if args else -1
            if target is not None:
                item = gast.Subscript(value=read(), slice=num(i), ctx=gast.Load())
                out.append(_assign([target], item, s))
            value = part(upper=num(-1)) if i == -1 else \
                add(part(upper=num(i)), part(lower=num(i + 1)))
        else:
            return None
        out.append(_assign([store], value, s))
        for x in out:
            for n in gast.walk(x):
                if isinstance(n, (gast.expr, gast.stmt)) and \
                        getattr(n, "lineno", None) is None:
                    gast.copy_location(n, s)
        return out

    def _built_dict_update(self, s):
        """``model.params.update(params)`` of a dict a built object holds (CS231n-style
        models fill ``self.params = {}``): a store per key, as ``update`` makes them --
        ``model.params[k] = params[k]`` for each key of a dict (looped: the keys of the
        argument, read where the call runs), or of a display / keywords. Else None."""
        if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and
                isinstance(s.value.func, gast.Attribute) and s.value.func.attr == "update" and
                isinstance(s.value.func.value, gast.Attribute)) or self.in_def:
            return None
        call, root = s.value, s.value.func.value
        o = self.peek(root.value)
        if not isinstance(o, VObj) or not o.built or root.attr not in o.attrs or \
                root.attr in o.objects or root.attr in o.funcs:
            return None
        stored = [n.value for t in (self.o.trees_of(o.cls) or [None]) if t is not None
                  for n in gast.walk(t) if isinstance(n, gast.Assign) and any(
                      isinstance(x, gast.Attribute) and x.attr == root.attr
                      for x in n.targets)]
        if not stored or not all(isinstance(v, (gast.Dict, gast.DictComp)) or (
                isinstance(v, gast.Call) and isinstance(v.func, gast.Name) and
                v.func.id == "dict") for v in stored):
            return None  # (a dict each value its class stores there: not a set's update)

        def store(key, value):  # (a store by key, as `model.params["W"] = W` is followed)
            target = gast.Subscript(value=copy.deepcopy(root), slice=key, ctx=gast.Store())
            target.value.ctx = gast.Load()
            return _assign([target], value, s)

        if not call.args and call.keywords and all(k.arg for k in call.keywords):
            return [store(gast.Constant(value=k.arg, kind=None), k.value)
                    for k in call.keywords]
        if len(call.args) != 1 or call.keywords or isinstance(call.args[0], gast.Starred):
            return None
        arg = call.args[0]
        if isinstance(arg, gast.Dict) and None not in arg.keys:
            return [store(k, v) for k, v in zip(arg.keys, arg.values)]
        out = []
        if not isinstance(arg, gast.Name):
            held = fresh(f"{root.attr}_update", self.o.taken)
            out.append(_assign([_name(held, store=True)], arg, s))
            arg = _name(held)
        key = fresh("key", self.o.taken)
        # (over the dict's keys, as `update` takes them: `for k in d` of an item srcad cannot
        # tell a dict here -- `params[0]` -- walked it by position, d[0])
        keys = gast.Call(func=_name("__srcad_dict_keys"), args=[copy.deepcopy(arg)],
                         keywords=[])  # (pylower.DICT_KEYS: an import here is circular)
        loop = gast.For(target=_name(key, store=True), iter=keys,
                        body=[store(_name(key), gast.Subscript(
                            value=copy.deepcopy(arg), slice=_name(key), ctx=gast.Load()))],
                        orelse=[], type_comment=None)
        out.append(gast.copy_location(loop, s))
        gast.fix_missing_locations(loop)
        return out

    def _kept_store(self, s):
        """`self.saved["z"] = z` into a dict an existing object holds (a module-level layer
        keeping a cache across calls) that no code followed here has assigned in this call:
        Python stores into that dict itself, so the object's own dict is stored into as the
        code runs, and the call reads its own copy, changed by the same store (srcad
        differentiates that). None (the statement as written) for any other store."""
        t = s.targets[0]
        root = t.value
        if not (isinstance(root, gast.Attribute) and not isinstance(t.slice, gast.Slice)):
            return None
        o = self.peek(root.value)
        if not isinstance(o, VObj) or o.built or o.real is None or \
                root.attr not in o.attrs or root.attr in o.objects or \
                root.attr in o.funcs or type(getattr(o.real, root.attr, None)) is not dict or (
                    root.attr not in o.kept and (id(o), root.attr) in
                    self.scope.stored | self.scope.fresh_in):
            return None
        real = self.o.bind(o.real, f"{o.label}_object")  # (not the scalarised name)
        out = kept_store(self.scope.local(o, root.attr), _name(real), root.attr, t.slice,
                         s.value, self.o.taken)
        for x in out:
            for n in gast.walk(x):
                if isinstance(n, (gast.expr, gast.stmt)) and \
                        getattr(n, "lineno", None) is None:
                    gast.copy_location(n, s)
        o.kept.add(root.attr)
        return out

    def _kept_change(self, s, o, root, depth, call, target):
        """`self.cache.append(z)` on a list an existing object holds (a module-level layer
        keeping a cache across calls) that no code followed here assigns: Python changes
        that list itself, so the object's own list is appended to as the code runs, and the
        call reads the changed list by its local (``cache = list_concat(cache, [z])``, which
        srcad differentiates). None (the statement as written) for any other change."""
        how = call.func.attr
        if depth != 0 or target is not None or how not in ("append", "extend") or \
                not self.o.kept_list(o, root.attr):
            return None
        arg = call.args[0] if len(call.args) == 1 else None
        if how == "append" and arg is not None:
            new = [arg]
        elif how == "extend" and isinstance(arg, (gast.List, gast.Tuple)):
            new = list(arg.elts)
        else:
            return None
        out, held = [], []
        for item in new:
            name = fresh(f"{root.attr}_item", self.o.taken)
            out.append(_assign([_name(name, store=True)], item, s))
            held.append(name)
        if self.o.concat is None:
            self.o.concat = self.o.bind(list_concat, "list_concat")
        store = copy.deepcopy(root)
        store.ctx = gast.Store()
        grown = gast.Call(func=_name(self.o.concat), args=[
            copy.deepcopy(root), gast.List(elts=[_name(n) for n in held], ctx=gast.Load())],
            keywords=[])
        out.append(_assign([store], grown, s))
        real = self.o.bind(o.real, f"{o.label}_object")  # (not the scalarised name)
        out += own_change(_name(real), root.attr, "append", [[_name(n)] for n in held],
                          self.o.taken)
        for x in out:
            for n in gast.walk(x):
                if isinstance(n, (gast.expr, gast.stmt)) and \
                        getattr(n, "lineno", None) is None:
                    gast.copy_location(n, s)
        o.kept.add(root.attr)
        return out

    def _join(self, before, a, b, arms):
        """After an `if`: a name bound on each arm to another object of one class (``state
        = State(..)`` on one arm, kept or rebuilt on the other) holds one object after the
        join -- the one it held before, else the first arm's --, the other arm's copied
        into its locals at that arm's end (`_carry`). `arms`: the two arms' statements."""
        done = [bool(arm) and isinstance(arm[-1], (gast.Return, gast.Raise, gast.Break,
                                                   gast.Continue)) for arm in arms]
        if done[0] != done[1]:  # (`if not train: return x`: the other arm's objects go on)
            self.scope.env = dict(b if done[0] else a)
            return
        for name in sorted(set(a) | set(b)):
            if a.get(name) is b.get(name):
                continue
            into = before.get(name) if isinstance(before.get(name), VObj) else a.get(name)
            for env, arm in ((a, arms[0]), (b, arms[1])):
                if env.get(name) is not into:
                    arm.extend(self._carry(name, into, env.get(name), env, arm))
                    env[name] = into
        self.scope.env = dict(a)

    def _same(self, before, after, body=None):
        """After a loop's body: a name the body rebinds to a new object of the class it held
        (``state = lstm_step(x, state)``) is carried, as a loop carries any value, by copying
        the new object's locals into the first's at the body's end (`_carry`)."""
        for name in sorted(set(before) | set(after)):
            if before.get(name) is not after.get(name) and name in before:
                if body is None or any(isinstance(n, gast.Return)
                                       for b in body for n in gast.walk(b)):
                    raise _Unsupported(f"`{name}` is rebound to another object in a loop")
                body.extend(self._carry(name, before[name], after.get(name), after, body))
                after[name] = before[name]

    def _carry(self, name, into, new, env, at) -> list:
        """``into``'s locals given ``new``'s values (two objects of one class, ``new`` built
        where ``name`` was rebound), so that from here ``name`` holds ``into`` again. Only
        where nothing else keeps either object (another name, a list, an attribute), and
        the two agree on all that is known of them statically (constants, callables, the
        objects they hold): else ``name`` holds a different object on each path, refused."""
        why = f"`{name}` holds a different object on each path (a branch or a loop's trips)"
        if not isinstance(into, VObj) or not isinstance(new, VObj) or \
                into.cls is not new.cls or into.attrs != new.attrs or \
                id(into) not in self.scope.made or id(new) not in self.scope.made or \
                into.objects or new.objects or into.funcs.keys() != new.funcs.keys() or \
                any(into.funcs[k] is not new.funcs[k] for k in into.funcs) or \
                self.in_def:
            raise _Unsupported(why)
        others = [v for n, v in env.items() if n != name] + \
            [v for n, v in self.scope.env.items() if n != name]
        if any(o is into or o is new for o in _reachable(others)):
            raise _Unsupported(why)
        where = at[-1] if at else None
        out = []
        for attr in into.attrs:
            dst, src = self.scope.local(into, attr), self.scope.local(new, attr)
            self.scope.stored.add((id(into), attr))
            if dst != src:
                node = _assign([_name(dst, store=True)], _name(src), where or gast.Pass())
                out.append(node)
        into.surely &= new.surely
        into.maybe |= new.maybe
        into.nones &= new.nones
        # (what is known of the attributes on both paths; their locals hold them all)
        into.consts = {k: v for k, v in into.consts.items()
                       if k in new.consts and type(new.consts[k]) is type(v) and
                       new.consts[k] == v}
        into.lengths = {k: v for k, v in into.lengths.items() if new.lengths.get(k) == v}
        return out

    def _forget_carried(self, stmts) -> None:
        """Before a loop whose body rebinds a name holding a built object: what is known of
        that object's attributes (a constant, a length) holds on the first trip only, so
        reads in the loop read their locals (`_carry` copies the new object's into them)."""
        for name in _stored_names(stmts):
            o = self.scope.env.get(name)
            if isinstance(o, VObj):
                o.consts.clear()
                o.lengths.clear()

    def assign(self, s) -> list:
        t0 = s.targets[0]
        looped = self._comprehension_as_loop(s)
        if looped is not None:
            return self.block(looped)
        if len(s.targets) == 1 and isinstance(t0, (gast.Tuple, gast.List)) and \
                isinstance(s.value, (gast.Tuple, gast.List)) and \
                len(t0.elts) == len(s.value.elts) and _parallel_ok(t0.elts, s.value):
            # `fc, act = Affine(W), Tanh()`, `self.l1, self.l2 = Dense(..), Dense(..)`: one
            # target at a time (none of them is read on the right)
            out = []
            for t, v in zip(t0.elts, s.value.elts):
                one = gast.copy_location(gast.Assign(targets=[t], value=v, type_comment=None), s)
                self.pre, self.read_now = [], set()
                out.extend(self.assign(one))
            return out
        if len(s.targets) == 1 and isinstance(t0, (gast.Tuple, gast.List)) and \
                isinstance(s.value, gast.Subscript) and not self.in_def and \
                all(isinstance(t, gast.Name) for t in t0.elts):
            try:
                held = self.o.resolve_static(s.value, self.scope)
            except Exception:  # noqa: BLE001  (not a static lookup)
                held = UNRESOLVED
            if isinstance(held, tuple) and len(held) == len(t0.elts) and all(
                    callable(f) and not isinstance(f, type) for f in held):
                # `link, inverse = LINKS[self.link]`: a tuple of functions of a registry,
                # one target at a time (each item read by its index)
                out = []
                for i, t in enumerate(t0.elts):
                    item = gast.copy_location(gast.Subscript(
                        value=copy.deepcopy(s.value), slice=gast.Constant(value=i, kind=None),
                        ctx=gast.Load()), s.value)
                    one = gast.copy_location(gast.Assign(targets=[t], value=item,
                                                         type_comment=None), s)
                    self.pre, self.read_now = [], set()
                    out.extend(self.assign(one))
                return out
        self.hint = t0.id if len(s.targets) == 1 and isinstance(t0, gast.Name) else None
        s = self._none_or_empty(s)
        empty = self._empty_container(s)
        plain_attr = len(s.targets) == 1 and isinstance(t0, gast.Name) and \
            self._reads_plain_attribute(copy.deepcopy(s.value))
        value = empty if empty is not None else self.expr(s.value)
        self.hint = None
        setter = self._setter_of(t0) if len(s.targets) == 1 else None
        if setter is not None and not isinstance(value, (VObj, VList)):
            # `layer.w = v` of a property with a setter: the setter, called on the object
            o, owner, fset = setter
            self.specialise(fset, o, owner, [value], [], s)
            return self.pre
        if isinstance(t0, gast.Name) and len(s.targets) == 1:
            self.scope.attr_values.discard(t0.id)
            if not isinstance(value, (VObj, VList)) and not self.nested and plain_attr:
                self.scope.attr_values.add(t0.id)
        if isinstance(value, VObj) and len(s.targets) == 1 and isinstance(t0, gast.Subscript):
            return self._store_item(t0, value)
        if isinstance(value, (VObj, VList)):
            if len(s.targets) != 1 or not isinstance(s.targets[0], (gast.Name, gast.Attribute)):
                raise _Unsupported("an object assigned to a target other than a name")
            t = s.targets[0]
            if isinstance(t, gast.Name):
                if t.id in self.scope.plain and (self.nested or self.in_def):
                    raise _Unsupported(f"`{t.id}` holds an object and other values")
                # (`other = other if isinstance(other, T) else T(other)` in straight-line
                # code: the reads before it saw the value, those after it see the object)
                self.scope.plain.discard(t.id)
                self.scope.env[t.id] = value
                return self.pre
            base = self.expr(t.value)
            if isinstance(base, VObj) and t.attr in base.nones and \
                    not (self.nested or self.outer_nested or self.in_def):
                # `self.act_fn = None` in a base class's __init__, then `self.act_fn = ReLU()`
                # in the subclass's: from here on the attribute holds the object
                self.scope.stored.discard((id(base), t.attr))
                base.nones.discard(t.attr)
            if not isinstance(base, VObj) or self._assigned_plain(base, t.attr):
                raise _Unsupported("an object stored on something other than a built object")
            if self.nested:
                raise _Unsupported("an object stored on an object in a branch or a loop")
            held = base.objects.get(t.attr)
            if held is not None and held is not value:
                raise _Unsupported(f"`.{t.attr}` rebound to another object")
            base.objects[t.attr] = value
            base.note(t.attr)
            return self.pre
        held = self.peek(t0.value) if len(s.targets) == 1 and \
            isinstance(t0, gast.Attribute) else None
        if isinstance(held, VObj) and not self.nested and not self.in_def and \
                t0.attr in held.attrs and t0.attr not in _changed_attrs(held.cls) and \
                self._static_callable(value, lambdas=True) is not UNRESOLVED:
            # `self.act = np.tanh` / `= act` given one / a lambda in __init__: no state, a
            # callable known from here on (`self.act(z)` calls it)
            held.funcs[t0.attr] = self._static_callable(value, lambdas=True)
            held.consts.pop(t0.attr, None)
            held.note(t0.attr)
            return self.pre
        if len(s.targets) == 1 and isinstance(t0, gast.Attribute):
            held_by = self.peek(t0.value)
            if isinstance(held_by, VObj):
                if isinstance(value, gast.Constant) and value.value is None and \
                        not (self.nested or self.outer_nested or self.in_def):
                    held_by.nones.add(t0.attr)
                else:
                    held_by.nones.discard(t0.attr)
        targets = [self.target(t) for t in s.targets]
        s.targets, s.value = targets, value
        if len(s.targets) == 1:
            self._note_static(t0, held, value)
            if isinstance(t0, gast.Name) and isinstance(self.funcs.get(t0.id), dict):
                # (`acts = {"relu": relu, ...}`: the dict of those functions, read as one)
                s.value = gast.copy_location(self._func_ref(self.funcs[t0.id], t0.id), value)
        return self.pre + [s]

    def _note_static(self, t, held, value) -> None:
        """`n = len(Ws)`, `act = "relu"`, `self.activation = activation` (a literal),
        `self.Ws = Ws` outside branches and loops: the value is known below, until stored."""
        if self.nested or self.in_def:
            return
        const = value.value if isinstance(value, gast.Constant) and \
            type(value.value) in _CONST_TYPES else UNRESOLVED
        n = self._static_len(value) if isinstance(value, (gast.Name, gast.List, gast.Tuple)) \
            else UNRESOLVED
        if isinstance(value, gast.ListComp) and len(value.generators) == 1 and \
                not value.generators[0].ifs:  # (`masks = [... for k in range(2)]`)
            n = self._static_len(value.generators[0].iter)
        fn = self._static_callable(value)
        if fn is UNRESOLVED and isinstance(value, gast.Subscript):
            try:  # (`act = ACTIVATIONS[name]`, a class of a registry: `act.f(x)` below)
                cls = self.o.resolve_static(value, self.scope)
            except Exception:  # noqa: BLE001  (not a static lookup)
                cls = UNRESOLVED
            if cls is not UNRESOLVED and _is_user_class(cls, self.o.globals):
                fn = cls
        if isinstance(t, gast.Name) and t.id not in self.scope.unsafe:
            if const is not UNRESOLVED:
                self.consts[t.id] = const
            if fn is not UNRESOLVED:
                self.funcs[t.id] = fn
            if n is not UNRESOLVED and t.id not in self.scope.mutated:
                self.scope.lengths[t.id] = n
        elif isinstance(t, gast.Attribute) and isinstance(held, VObj) and \
                t.attr not in _changed_attrs(held.cls):
            if const is not UNRESOLVED:
                held.consts[t.attr] = const
            if n is not UNRESOLVED:
                held.lengths[t.attr] = n
            if fn is not UNRESOLVED:
                held.funcs[t.attr] = fn

    def _func_ref(self, fn, hint: str):
        """An expression for a callable `_static_callable` found: the lambda itself, or a
        name the function reads it under."""
        if isinstance(fn, gast.Lambda):
            return copy.deepcopy(fn)
        return _name(self.o.bind(fn, hint))

    def _static_callable(self, value, lambdas: bool = False):
        """The function, partial or op `value` (a name or a dotted name) certainly holds
        here, else UNRESOLVED: not a class (a construction) nor a built object."""
        if isinstance(value, gast.Name) and value.id in self.funcs and \
                value.id not in self.scope.env:
            return self.funcs[value.id]
        if lambdas and isinstance(value, gast.Lambda) and not self.in_def:
            # `self.act = lambda z: ...` reading no local of where it is written: the same
            # lambda wherever it is called
            own = {a.id for a in value.args.args}
            if value.args.vararg is None and value.args.kwarg is None and not any(
                    isinstance(n, gast.Name) and n.id not in own and (
                        n.id in self.scope.locals or n.id in self.scope.env)
                    for n in gast.walk(value.body)):
                return value
        if isinstance(value, gast.Dict) and not self.in_def and value.keys and all(
                isinstance(k, gast.Constant) and type(k.value) in (str, int)
                for k in value.keys):
            # `{"relu": relu, "tanh": np.tanh}`: a registry of functions made here, the same
            # functions at every call (each name's lookup guarded)
            fns = [self._static_callable(v) for v in value.values]
            if all(f is not UNRESOLVED and not isinstance(f, dict) for f in fns):
                return {k.value: f for k, f in zip(value.keys, fns)}
            return UNRESOLVED
        if not isinstance(value, (gast.Name, gast.Attribute, gast.Subscript)) or self.in_def:
            return UNRESOLVED  # (a subscript: `act = ACTIVATIONS[name]`, a module's registry)
        try:
            obj = self.o.resolve_static(value, self.scope)
        except Exception:  # noqa: BLE001  (not a static name)
            return UNRESOLVED
        if obj is UNRESOLVED or isinstance(obj, (type, types.ModuleType)):
            return UNRESOLVED
        if not callable(obj) and not (is_user_object(type(obj)) and
                                      not isinstance(obj, _SUBSTITUTE_CLASSES)):
            return UNRESOLVED  # (a global config object of the user's: as static as these)
        return obj

    def _static_class(self, value):
        """The user class `value` (a name or a dotted name) certainly holds here, else
        UNRESOLVED."""
        if self.in_def or not isinstance(value, (gast.Name, gast.Attribute)):
            return UNRESOLVED
        try:
            obj = self.o.resolve_static(value, self.scope)
        except Exception:  # noqa: BLE001  (not a static name)
            return UNRESOLVED
        obj = _substituted(obj)
        return obj if obj is not UNRESOLVED and _is_user_class(obj, self.o.globals) \
            else UNRESOLVED

    def _keys_list(self, d: VList, at):
        return gast.copy_location(gast.List(elts=[gast.Constant(value=k, kind=None)
                                                  for k in d.keys], ctx=gast.Load()), at)

    def _container_method(self, base: VList, attr: str, e):
        if attr == "append" and base.keys is None and len(e.args) == 1 and not e.keywords:
            item = self.expr(e.args[0])
            if not isinstance(item, VObj) or self.nested or self.outer_nested:
                raise _Unsupported("`.append()` of a value, or in a branch or in a loop whose "
                                   "count is not known before running (a literal, an int "
                                   "argument, a list argument's length), to a list of objects")
            base.items.append(item)
            return base
        if base.keys is not None and not e.args and not e.keywords:
            if attr == "values":
                return VList(list(base.items), kind="view")
            if attr == "keys":
                return self._keys_list(base, e)
            if attr == "items":
                return VList(list(base.items), list(base.keys), pairs=True, kind="view")
        raise _Unsupported(f"`.{attr}()` on a list of objects")

    def _none_or_empty(self, s):
        """``self.Ws = Ws or []`` (or ``[] if Ws is None else Ws``) where `Ws` holds None
        here (its default): the statement ``self.Ws = []`` -- a list of built objects if
        what fills it is (`_empty_container`), else a list of values -- as Python makes it;
        any other statement as it is."""
        v = s.value
        if len(s.targets) != 1 or self.in_def:
            return s
        name = None
        if isinstance(v, gast.BoolOp) and isinstance(v.op, gast.Or) and len(v.values) == 2 \
                and isinstance(v.values[1], gast.List) and not v.values[1].elts:
            name = v.values[0]
        elif isinstance(v, gast.IfExp) and isinstance(v.test, gast.Compare) and \
                len(v.test.ops) == 1 and isinstance(v.test.ops[0], (gast.Is, gast.IsNot)) and \
                isinstance(v.test.comparators[0], gast.Constant) and \
                v.test.comparators[0].value is None:
            empty, other = (v.body, v.orelse) if isinstance(v.test.ops[0], gast.Is) else \
                (v.orelse, v.body)
            if isinstance(empty, gast.List) and not empty.elts and \
                    gast.dump(other) == gast.dump(v.test.left):
                name = other
        if not (isinstance(name, gast.Name) and name.id not in self.scope.env and
                name.id in self.consts and self.consts[name.id] is None):
            return s
        return gast.copy_location(gast.Assign(targets=s.targets, value=gast.copy_location(
            gast.List(elts=[], ctx=gast.Load()), v), type_comment=None), s)

    def _empty_container(self, s):
        """`self.layers = OrderedDict()` (or `{}`, `dict()`, `[]`, `list()`) that the rest
        of the block fills with built objects only (`self.layers["fc1"] = Affine(W1, b1)`,
        `self.layers.append(Relu())`): an empty VList to fill, else None (a plain value)."""
        v, t = s.value, s.targets[0]
        if len(s.targets) != 1 or not isinstance(t, (gast.Name, gast.Attribute)):
            return None
        if isinstance(v, gast.Dict) and not v.keys:
            keyed = True
        elif isinstance(v, gast.List) and not v.elts:
            keyed = False
        elif isinstance(v, gast.Call) and not v.args and not v.keywords:
            maker = self.o.resolve_static(v.func, self.scope)
            if maker not in (dict, list, OrderedDict):
                return None
            keyed = maker is not list
        else:
            return None
        spelled = gast.dump(t)
        fills, others = 0, 0
        built = {x.targets[0].id for r in self.rest for x in gast.walk(r)  # `layer = Dense(..)`
                 if isinstance(x, gast.Assign) and len(x.targets) == 1 and
                 isinstance(x.targets[0], gast.Name) and self._builds_object(x.value)}
        built |= self._object_loop_names(self.rest)  # `for layer in layers: out.append(layer)`
        for n in (x for r in self.rest for x in gast.walk(r)):
            if isinstance(n, gast.Assign) and any(
                    isinstance(x, gast.Subscript) and gast.dump(x.value) == spelled.replace(
                        "Store()", "Load()") for x in n.targets):
                fills += self._builds_object(n.value) and keyed
                others += not (self._builds_object(n.value) and keyed)
            elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                    gast.dump(n.func.value) == spelled.replace("Store()", "Load()") and \
                    n.func.attr in ("append", "update", "extend", "insert", "setdefault"):
                ok = not keyed and n.func.attr == "append" and len(n.args) == 1 and \
                    (self._builds_object(n.args[0]) or (isinstance(n.args[0], gast.Name) and
                                                        n.args[0].id in built) or
                     # (`out.append(self.layers[i])`: an item of a list of built objects)
                     (isinstance(n.args[0], gast.Subscript) and
                      isinstance(self.peek(n.args[0].value), VList)))
                fills += ok
                others += not ok
        if not fills and not others and not keyed and self._filled_by_methods(t, built):
            return VList([], None)
        if not fills or others:
            return None
        return VList([], [] if keyed else None)

    def _object_loop_names(self, block) -> set:
        """The names a `for` loop of `block` binds to the items of a list of built objects
        (`for layer in layers`, `for i, layer in enumerate(layers)`, `reversed(layers)`):
        appending one to a new list fills it with objects (the loop is unrolled). Where an
        item is not an object after all, `_container_method` refuses it as before."""
        out = set()
        for n in (x for r in block for x in gast.walk(r)):
            if not isinstance(n, gast.For):
                continue
            it, target = n.iter, n.target
            if isinstance(it, gast.BoolOp) and isinstance(it.op, gast.Or) and \
                    len(it.values) == 2:  # (`for layer in layers or []`)
                it = it.values[0]
            if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
                    it.func.id in ("enumerate", "reversed") and \
                    it.func.id not in self.scope.locals and len(it.args) == 1 and \
                    not it.keywords:
                if it.func.id == "enumerate":
                    if not (isinstance(target, gast.Tuple) and len(target.elts) == 2):
                        continue
                    target = target.elts[1]
                it = it.args[0]
            if not isinstance(it, (gast.Name, gast.Attribute)) or \
                    not isinstance(target, gast.Name):
                continue
            v = self.peek(it)
            if isinstance(v, VList) and v.keys is None and v.items and \
                    all(isinstance(o, VObj) for o in v.items):
                out.add(target.id)
        return out

    def _filled_by_methods(self, t, looped=frozenset()) -> bool:
        """`self.layers = []` in __init__ that another method fills (Keras-like
        `def add(self, layer): self.layers.append(layer)`): a list of objects when the class
        changes it only by such appends of a parameter and every call of those methods in the
        differentiated function hands them a built object (`model.add(Dense(..))`). (A
        non-object appended after all is refused by `_container_method`: the function is then
        left as written.)"""
        me = self.peek(t.value) if isinstance(t, gast.Attribute) else None
        if not isinstance(me, VObj) or self.me is not me:
            return False
        adders = set()
        for klass in me.cls.__mro__:
            for name, raw in vars(klass).items():
                if not isinstance(raw, types.FunctionType) or library_file(raw) is not None:
                    continue
                try:
                    fdef = parse_function(raw).tree
                except Exception:  # noqa: BLE001  (no source)
                    return False
                found = _appends_of_a_parameter(fdef, t.attr, name == "__init__")
                if found is None:
                    return False
                adders |= {(name, i) for i in found}
        if not adders:
            return False
        return self._given_objects(adders, looped)

    def _given_objects(self, adders, looped=frozenset()) -> bool:
        """Does every call `x.add(..)` (a method of `adders`, by name) in the function hand
        the appended parameter a construction of a user class, or a name assigned one? The
        calls in the rest of the block filling the list count too, where they hand on the
        items of a list of objects a loop walks (`looped`: `for layer in layers:
        self.add(layer)` in the __init__ of `Sequential([Dense(..), Dense(..)])`)."""
        tree = self.o.pf.tree
        top = self.o.top
        here = [n for r in self.rest for n in gast.walk(r)
                if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and
                isinstance(n.func.value, gast.Name) and n.func.value.id == "self" and
                len(n.args) == 1 and isinstance(n.args[0], gast.Name) and
                n.args[0].id in looped and not n.keywords]
        if here and all(any(n.func.attr == name for name, _ in adders) for n in here) and \
                all(i == 1 for _, i in adders):
            calls_here = len(here)
        else:
            calls_here = 0
        built = {x.targets[0].id for x in gast.walk(tree)
                 if isinstance(x, gast.Assign) and len(x.targets) == 1 and
                 isinstance(x.targets[0], gast.Name) and isinstance(x.value, gast.Call) and
                 _is_user_class(self.o.resolve_static(x.value.func, top), self.o.globals)}
        names = {n for n, _ in adders}
        calls = 0
        for n in gast.walk(tree):
            if not (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and
                    n.func.attr in names):
                continue
            for name, i in adders:
                if name != n.func.attr:
                    continue
                if n.keywords or len(n.args) != 1 or i != 1:
                    return False
                a = n.args[0]
                if not ((isinstance(a, gast.Call) and _is_user_class(
                        self.o.resolve_static(a.func, top), self.o.globals)) or
                        (isinstance(a, gast.Name) and a.id in built)):
                    return False
                calls += 1
        return calls + calls_here > 0

    def _builds_object(self, e) -> bool:
        return isinstance(e, gast.Call) and _is_user_class(
            self.o.resolve_static(e.func, self.scope), self.o.globals)

    def _store_item(self, t, value) -> list:
        """`layers["fc1"] = Affine(W1, b1)` into a dict of built objects (a constant key)."""
        base = self.expr(t.value)
        k = self.value(t.slice) if isinstance(base, VList) else t.slice  # (`f"fc{i}"`)
        if not isinstance(base, VList) or base.keys is None or self.nested or \
                self.outer_nested or \
                not isinstance(k, gast.Constant) or type(k.value) not in (str, int):
            raise _Unsupported("an object stored into a container srcad does not follow")
        if k.value in base.keys:
            base.items[base.keys.index(k.value)] = value
        else:
            base.keys.append(k.value)
            base.items.append(value)
        return self.pre

    def _assigned_plain(self, o: VObj, attr: str) -> bool:
        return (id(o), attr) in self.scope.stored

    def for_(self, s) -> list:
        it = s.iter
        wrap = None
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
                it.func.id in ("reversed", "enumerate") and it.func.id not in self.scope.locals \
                and len(it.args) == 1 and not it.keywords:
            inner = self.peek(it.args[0])
            if isinstance(inner, VList):
                wrap = it.func.id
                items = inner
        zipped = self._unroll_zip(s) if wrap is None else None
        if zipped is not None:
            return zipped
        if wrap is None and not s.orelse and (self._fills_objects(s.body) or
                                              self._indexes_objects(s.body, s.target) or
                                              self._names_attributes(s.body, s.target) or
                                              self._attribute_names(it) is not UNRESOLVED or
                                              self._attribute_walk(it) is not UNRESOLVED):
            # `for i in range(len(Ws)): self.layers.append(Dense(Ws[i], ..))`: unrolled when
            # its count is known before running (a literal, an argument's length)
            seq = self._static_seq(it, _stored_names([s.target] + s.body))
            if seq is not UNRESOLVED and not any(
                    isinstance(n, (gast.Break, gast.Continue)) for b in s.body
                    for n in gast.walk(b)):
                return self._length_checks(it, s) + self._unroll_static(s, seq)
            if seq is UNRESOLVED and self.o.pf.deferrable:
                raise self.o.pf.error(
                    "this loop builds objects into a list as many times as an argument says",
                    s, cls=CountUnknownError,
                    hint="srcad unrolls it once the first call's arguments give the count")
        if wrap is None:
            v = self.expr(it)
            if isinstance(v, VTuple):  # `for w in weights` of a method's *weights
                v = self.value(it)
            if isinstance(v, VObj):
                v = self._delegated(v, "__iter__")
            if isinstance(v, VList) and v.keys is not None and not v.pairs:
                raise _Unsupported("a loop over a dict of objects itself (its keys)")
            if isinstance(v, VList):
                items, wrap = v, "pairs" if v.pairs else "plain"
            else:
                s.iter = v
                self._forget_stored([s.target] + s.body + s.orelse)
                self._forget_carried(s.body)
                if self._binds_object_name(s.target):
                    raise _Unsupported("a loop variable that also holds a built object")
                s.target = self.target(s.target)
                pre = self.pre
                before = dict(self.scope.env)
                self.nested += 1
                self.loops.append(before)
                s.body = self.block(s.body)
                self.loops.pop()
                self._same(before, self.scope.env, s.body)
                s.orelse = self.block(s.orelse)
                self.nested -= 1
                self._same(before, self.scope.env)
                return pre + [s]
        # unrolled: one copy of the body per object, the loop variable bound to it
        if s.orelse or any(isinstance(n, (gast.Break, gast.Continue)) for b in s.body
                           for n in gast.walk(b)):
            raise _Unsupported("break/continue in a loop over built objects")
        pre = self.pre
        seq = list(items.items)
        if wrap == "reversed":
            seq = seq[::-1]
        out = list(pre)
        for i, obj in enumerate(seq):
            target = s.target
            if wrap == "enumerate":
                if not (isinstance(target, gast.Tuple) and len(target.elts) == 2 and
                        isinstance(target.elts[1], gast.Name)):
                    raise _Unsupported("enumerate over built objects into this target")
                index = self._plain_target(target.elts[0])
                out.append(_assign([index], gast.Constant(value=i, kind=None), s))
                if isinstance(index, gast.Name):
                    self.consts[index.id] = i
                target = target.elts[1]
            if wrap == "pairs":  # `for name, layer in layers.items()`
                if not (isinstance(target, gast.Tuple) and len(target.elts) == 2 and
                        isinstance(target.elts[1], gast.Name)):
                    raise _Unsupported("a loop over a dict's items into this target")
                key = self._plain_target(target.elts[0])
                out.append(_assign([key], gast.Constant(value=items.keys[i], kind=None), s))
                if isinstance(key, gast.Name):
                    self.consts[key.id] = items.keys[i]
                target = target.elts[1]
            if not isinstance(target, gast.Name):
                raise _Unsupported("a loop over built objects into this target")
            self.scope.env[target.id] = obj
            out.extend(self.block(copy.deepcopy(s.body)))
        return out  # (straight-line copies: the constants they leave hold after the loop)

    def _unroll_zip(self, s):
        """``for layer, W in zip(layers, params): layer.W = W`` (nnfs's `set_parameters`,
        loading weights into built layers): a zip over lists of built objects and sequences
        of known length, unrolled -- one copy of the body per item, as many as the shortest
        gives, the objects bound to their names and the others read by index. None where
        the loop is no such loop."""
        it = s.iter
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
                it.func.id == "zip" and it.func.id not in self.scope.locals and it.args and
                not it.keywords and isinstance(s.target, gast.Tuple) and
                len(s.target.elts) == len(it.args)):
            return None
        held = [self.peek(a) for a in it.args]
        if not any(isinstance(h, VList) for h in held):
            return None
        if s.orelse or any(isinstance(n, (gast.Break, gast.Continue)) for b in s.body
                           for n in gast.walk(b)):
            raise _Unsupported("break/continue in a loop over built objects")
        stored = _stored_names([s.target] + s.body)
        lengths = []
        for a, h, t in zip(it.args, held, s.target.elts):
            if isinstance(h, VList):
                if h.keys is not None or not isinstance(t, gast.Name):
                    raise _Unsupported("a zip over built objects into this target")
                lengths.append(len(h.items))
                continue
            if h is not None or any(isinstance(n, (gast.Call, gast.Lambda, gast.NamedExpr))
                                    for n in gast.walk(a)) or {
                    n.id for n in gast.walk(a) if isinstance(n, gast.Name)} & stored:
                raise _Unsupported("a zip of built objects with this sequence")
            n = self._static_len(a)
            if n is UNRESOLVED and self.o.pf.deferrable:
                raise self.o.pf.error(
                    "this loop zips built objects with a sequence of a length an argument "
                    "says", s, cls=CountUnknownError,
                    hint="srcad unrolls it once the first call's arguments give the length")
            if n is UNRESOLVED:
                raise _Unsupported("a zip of built objects with a sequence of unknown length")
            lengths.append(n)
        out = list(self.pre)
        for k in range(min(lengths)):
            for a, h, t in zip(it.args, held, s.target.elts):
                if isinstance(h, VList):
                    self.scope.env[t.id] = h.items[k]
                    continue
                item = gast.copy_location(gast.Subscript(
                    value=copy.deepcopy(a), slice=gast.Constant(value=k, kind=None),
                    ctx=gast.Load()), a)
                out.extend(self.stmt(gast.copy_location(gast.Assign(
                    targets=[copy.deepcopy(t)], value=item, type_comment=None), s)))
            out.extend(self.block(copy.deepcopy(s.body)))
        return out

    def _unroll_static(self, s, seq) -> list:
        """One copy of the loop's body per item, after `target = item` (an index, `Ws[k]`)."""
        out = []
        for item in seq:
            for t, v in _bindings(s.target, item):
                one = gast.Assign(targets=[copy.deepcopy(t)], value=copy.deepcopy(v),
                                  type_comment=None)
                out.extend(self.stmt(gast.copy_location(one, s)))
            out.extend(self.block(copy.deepcopy(s.body)))
        return out

    def _names_attributes(self, body, target) -> bool:
        """Does the loop body `getattr` / `setattr` an attribute of a built object by a name
        made from the loop variable (``setattr(self, f"W{i}", ...)``)? Then it is unrolled,
        each copy naming its attribute with a constant."""
        names = {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}
        return any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
                   n.func.id in ("getattr", "setattr", "hasattr") and
                   n.func.id not in self.scope.locals and len(n.args) >= 2 and
                   isinstance(self.peek(n.args[0]), VObj) and
                   any(isinstance(m, gast.Name) and m.id in names for m in gast.walk(n.args[1]))
                   for b in body for n in gast.walk(b))

    def _fills_objects(self, body) -> bool:
        """Does the loop body `.append()` to / store into a list or dict of built objects?"""
        for n in (x for b in body for x in gast.walk(b)):
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                    n.func.attr == "append" and isinstance(self.peek(n.func.value), VList):
                return True
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                    self._appending_method(self.peek(n.func.value), n.func.attr):
                return True  # (`model.add(Dense(W, b))`: see `_filled_by_methods`)
            if isinstance(n, gast.Assign) and any(
                    isinstance(t, gast.Subscript) and isinstance(self.peek(t.value), VList)
                    for t in n.targets):
                return True
        return False

    def _registry_made_here(self, f: gast.Subscript) -> None:
        """`acts[name](z)` / `self.activations[self.act](z)` where the function (or its
        __init__) made `acts` a dict display of functions (`_static_callable`): the dict is
        read under a name of its own and a key known here is a constant, so the callee
        resolves as a module's registry does."""
        v = f.value
        fns = self.funcs.get(v.id) if isinstance(v, gast.Name) and \
            v.id not in self.scope.env else None
        if isinstance(v, gast.Attribute) and isinstance(self.peek(v.value), VObj):
            fns = self.peek(v.value).funcs.get(v.attr)
        if self.in_def:
            return
        # a key known here is a constant, also for a module's registry (`self.func =
        # ACTIVATIONS[name]()` in the __init__ of a built object given name="tanh")
        k = f.slice
        if isinstance(k, gast.Name) and k.id in self.consts and k.id not in self.scope.env:
            f.slice = gast.copy_location(gast.Constant(value=self.consts[k.id], kind=None), k)
        elif isinstance(k, gast.Attribute) and isinstance(self.peek(k.value), VObj) and \
                k.attr in self.peek(k.value).consts:
            f.slice = gast.copy_location(gast.Constant(
                value=self.peek(k.value).consts[k.attr], kind=None), k)
        if not isinstance(fns, dict):
            return
        f.value = gast.copy_location(self._func_ref(fns, "registry"), v)
        if not isinstance(f.slice, gast.Constant) and self.o.pf.deferrable and \
                not self.o.pf.known and self.o.resolve_static(f, self.scope) is UNRESOLVED:
            if self.o.pf.params:  # (the key may be a string argument: known at the first call)
                raise self.o.pf.error(
                    f"the callee `{_spelled(v)}[...]` depends on the arguments' values", f,
                    hint="srcad picks the callee when the key is a string argument (each "
                    "value its own specialisation); pass the function itself otherwise",
                    cls=CalleeUnknownError)

    def _indexes_objects(self, body, target) -> bool:
        """Does the loop body index a list of built objects by the loop variable
        (`for i in range(len(self.layers)): x = self.layers[i].forward(x)`)? Then it is
        unrolled like a loop filling one, each copy reading a constant index."""
        names = {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}
        return any(isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Load) and
                   isinstance(self.peek(n.value), VList) and
                   any(isinstance(m, gast.Name) and m.id in names for m in gast.walk(n.slice))
                   for b in body for n in gast.walk(b))

    def _appending_method(self, o, name: str) -> bool:
        """Is `o.name(..)` a method of a built object appending to a list of objects it
        holds (`_filled_by_methods`)?"""
        if not isinstance(o, VObj):
            return False
        _, raw = class_attribute(o.cls, name)
        if not isinstance(raw, types.FunctionType):
            return False
        try:
            fdef = parse_function(raw).tree
        except Exception:  # noqa: BLE001  (no source)
            return False
        return any(isinstance(v, VList) and v.keys is None and
                   _appends_of_a_parameter(copy.deepcopy(fdef), a, False)
                   for a, v in o.objects.items())

    def _forget_stored(self, stmts) -> None:
        """Entering a loop that runs as written: what its body assigns is no constant in it
        (a read before the store sees the previous iteration's value)."""
        for n in (x for b in stmts for x in gast.walk(b)):
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
                self.consts.pop(n.id, None)
                self.funcs.pop(n.id, None)
                self.scope.lengths.pop(n.id, None)
            elif isinstance(n, gast.Attribute) and isinstance(n.ctx, (gast.Store, gast.Del)):
                for o in self.scope.objs.values():
                    if isinstance(o, VObj):
                        o.consts.pop(n.attr, None)
                        o.funcs.pop(n.attr, None)
                        o.lengths.pop(n.attr, None)
        for name in mutated_names(stmts):
            self.scope.lengths.pop(name, None)

    # -- what is known before running ----------------------------------------------------------
    def _static_int(self, e):
        """The int `e` certainly holds here (a literal, a known constant, `len` of a list of
        known length, arithmetic of those), else UNRESOLVED."""
        if isinstance(e, gast.Constant):
            return e.value if type(e.value) is int else UNRESOLVED
        if isinstance(e, gast.Name) and isinstance(e.ctx, gast.Load) and \
                e.id not in self.scope.env and not self.in_def:
            v = self.consts.get(e.id, UNRESOLVED)
            return v if type(v) is int else UNRESOLVED
        if isinstance(e, gast.Attribute):
            base = self.peek(e.value)
            v = base.consts.get(e.attr, UNRESOLVED) if isinstance(base, VObj) else UNRESOLVED
            if base is None and not self.in_def:  # (`cfg.depth` of a global config object:
                v = self.o._static_key_attr(e, self.scope)  # guarded per call)
            return v if type(v) is int else UNRESOLVED
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and e.func.id == "len" \
                and e.func.id not in self.scope.locals and len(e.args) == 1 and not e.keywords:
            held = self.peek(e.args[0])
            if isinstance(held, VObj) and _delegate(held.cls, "__len__") is not None:
                try:  # (`len(model)` of a container class: its list's)
                    return len(self._delegated(held, "__len__").items)
                except _Unsupported:
                    return UNRESOLVED
            return self._static_len(e.args[0])
        if isinstance(e, gast.Subscript) and isinstance(e.value, gast.Attribute) and \
                e.value.attr == "shape" and isinstance(e.value.value, gast.Name) and \
                isinstance(e.slice, gast.Constant) and e.slice.value == 0:
            return self._static_len(e.value.value)  # (`U.shape[0]`: an array argument's rows)
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
            v = self._static_int(e.operand)
            return -v if v is not UNRESOLVED else UNRESOLVED
        if isinstance(e, gast.BinOp) and type(e.op) in _INT_OPS:
            a, b = self._static_int(e.left), self._static_int(e.right)
            if a is UNRESOLVED or b is UNRESOLVED:
                return UNRESOLVED
            try:
                return _INT_OPS[type(e.op)](a, b)
            except ArithmeticError:
                return UNRESOLVED
        return UNRESOLVED

    def _static_len(self, e, module: bool = False):
        """The length of the list / tuple `e` holds, when known before running (`module`: a
        module's list or tuple too, for a loop over it -- `_length_checks`)."""
        held = self.peek(e)
        if isinstance(held, VList):
            return len(held.items)
        if isinstance(e, gast.Name) and isinstance(self.scope.env.get(e.id), VTuple):
            return len(self.scope.env[e.id].items)
        if isinstance(e, gast.Name) and e.id not in self.scope.env:
            n = self.scope.lengths.get(e.id, UNRESOLVED)
            if n is UNRESOLVED and module:
                held = self._module_seq(e)
                n = UNRESOLVED if held is None else len(held)
            return n
        if isinstance(e, gast.Attribute):
            base = self.peek(e.value)
            return base.lengths.get(e.attr, UNRESOLVED) if isinstance(base, VObj) else \
                UNRESOLVED
        if isinstance(e, (gast.List, gast.Tuple)) and \
                not any(isinstance(x, gast.Starred) for x in e.elts):
            return len(e.elts)
        if isinstance(e, gast.Subscript) and isinstance(e.slice, gast.Slice):
            n = self._static_len(e.value, module)
            parts = [None if p is None else self._static_int(p)
                     for p in (e.slice.lower, e.slice.upper, e.slice.step)]
            if n is UNRESOLVED or UNRESOLVED in parts or parts[2] == 0:
                return UNRESOLVED
            return len(range(n)[slice(*parts)])
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and \
                e.func.id == "range" and e.func.id not in self.scope.locals and \
                1 <= len(e.args) <= 3 and not e.keywords:
            parts = [self._static_int(a) for a in e.args]
            if UNRESOLVED in parts or (len(parts) == 3 and parts[2] == 0):
                return UNRESOLVED
            return len(range(*parts))
        return UNRESOLVED

    def _module_seq(self, e):
        """The list or tuple a module's name `e` holds (`for spec in ARCH:` building the
        layers), its lookup guarded -- the name rebound, or the list changed in place between
        calls, builds anew (guards.py); else None."""
        if not isinstance(e, gast.Name) or e.id in self.scope.env or \
                e.id in self.scope.locals or self.in_def:
            return None
        held = self.o.resolve_static(e, self.scope)
        if type(held) not in (list, tuple) or len(held) > 256:  # (a loop unrolled by it)
            return None
        if type(held) is list:
            guards.note("items", held, len(held), held)
        return held

    def _length_checks(self, e, at) -> list:
        """Statements checking, where a loop over `e` unrolled by a module's list's length
        runs, that the list has that length still (a change made during the call, before the
        loop, is refused there: runtime_python.same_length)."""
        out = []
        for n in gast.walk(e):
            held = self._module_seq(n) if isinstance(n, gast.Name) and \
                n.id not in self.scope.lengths else None
            if type(held) is list:
                check = gast.Call(func=_name(self.o.bind(same_length, "same_length")),
                                  args=[_name(n.id), gast.Constant(value=len(held), kind=None),
                                        gast.Constant(value=n.id, kind=None)], keywords=[])
                out.append(gast.copy_location(gast.Expr(value=check), at))
        return out

    def _static_seq(self, e, stored: set):
        """The items a loop over `e` binds, as expressions read at each iteration (a
        constant; `Ws[k]` of a list of known length the loop leaves alone), else UNRESOLVED."""
        if self.peek(e) is not None:
            return UNRESOLVED  # (a list of built objects: the loop over it unrolls anyway)
        keyed = self._dict_items(e, stored)
        if keyed is not UNRESOLVED:
            return keyed
        names = self._attribute_names(e)
        if names is not UNRESOLVED:
            return [gast.Constant(value=n, kind=None) for n in names]
        walked = self._attribute_walk(e)
        if walked is not UNRESOLVED:
            return walked
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and \
                e.func.id not in self.scope.locals and not e.keywords:
            f, args = e.func.id, e.args
            if f == "range" and 1 <= len(args) <= 3:
                parts = [self._static_int(a) for a in args]
                if UNRESOLVED in parts or (len(parts) == 3 and parts[2] == 0):
                    return UNRESOLVED
                return [gast.Constant(value=k, kind=None) for k in range(*parts)]
            if f == "zip" and args:
                seqs = [self._static_seq(a, stored) for a in args]
                if any(q is UNRESOLVED for q in seqs):
                    return UNRESOLVED
                n = min(len(q) for q in seqs)
                return [gast.Tuple(elts=[q[k] for q in seqs], ctx=gast.Load())
                        for k in range(n)]
            if f == "enumerate" and len(args) in (1, 2):
                seq = self._static_seq(args[0], stored)
                start = self._static_int(args[1]) if len(args) == 2 else 0
                if seq is UNRESOLVED or start is UNRESOLVED:
                    return UNRESOLVED
                return [gast.Tuple(elts=[gast.Constant(value=start + k, kind=None), x],
                                   ctx=gast.Load()) for k, x in enumerate(seq)]
            if f in ("reversed", "list", "tuple") and len(args) == 1:
                seq = self._static_seq(args[0], stored)
                if seq is UNRESOLVED:
                    return UNRESOLVED
                return seq[::-1] if f == "reversed" else seq
        if isinstance(e, (gast.List, gast.Tuple)) and all(
                isinstance(x, gast.Constant) for x in e.elts):
            return [copy.deepcopy(x) for x in e.elts]
        read = {n.id for n in gast.walk(e) if isinstance(n, gast.Name)}
        if read & stored or any(isinstance(n, gast.Call) for n in gast.walk(e)):
            return UNRESOLVED
        n = self._static_len(e, module=True)
        if n is UNRESOLVED:
            return UNRESOLVED
        return [gast.Subscript(value=copy.deepcopy(e), slice=gast.Constant(value=k, kind=None),
                               ctx=gast.Load()) for k in range(n)]

    def _attribute_names(self, e):
        """`sorted(vars(self))` / `sorted(self.__dict__)` (`.keys()` too) of a built object:
        the names of the attributes it holds here, sorted; else UNRESOLVED (also where one
        may or may not be set before running)."""
        if not (isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and
                e.func.id == "sorted" and e.func.id not in self.scope.locals and
                len(e.args) == 1 and not e.keywords):
            return UNRESOLVED
        inner = e.args[0]
        if isinstance(inner, gast.Call) and isinstance(inner.func, gast.Attribute) and \
                inner.func.attr == "keys" and not inner.args and not inner.keywords:
            inner = inner.func.value
        if isinstance(inner, gast.Call) and isinstance(inner.func, gast.Name) and \
                inner.func.id == "vars" and inner.func.id not in self.scope.locals and \
                len(inner.args) == 1 and not inner.keywords:
            o = self.peek(inner.args[0])
        elif isinstance(inner, gast.Attribute) and inner.attr == "__dict__":
            o = self.peek(inner.value)
        else:
            return UNRESOLVED
        if not isinstance(o, VObj) or not o.built:
            return UNRESOLVED
        held = set(o.surely) | set(o.objects) | set(o.consts) | set(o.funcs)
        if set(o.maybe) - held:
            return UNRESOLVED
        return sorted(held)

    def _attribute_walk(self, e):
        """`vars(self)` / `self.__dict__` of a built object walked as Python walks it --
        `.keys()` (or itself), `.values()`, `.items()` -- in the order its attributes were
        first assigned: the names, `self.<name>`, or the pairs; else UNRESOLVED (also where
        one may or may not be set, or the order of one is not known)."""
        method = "keys"
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Attribute) and \
                e.func.attr in ("keys", "values", "items") and not e.args and not e.keywords:
            method, e = e.func.attr, e.func.value
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and \
                e.func.id == "vars" and e.func.id not in self.scope.locals and \
                len(e.args) == 1 and not e.keywords:
            base = e.args[0]
        elif isinstance(e, gast.Attribute) and e.attr == "__dict__":
            base = e.value
        else:
            return UNRESOLVED
        o = self.peek(base)
        if not isinstance(o, VObj) or not o.built:
            return UNRESOLVED
        held = set(o.surely) | set(o.objects) | set(o.consts) | set(o.funcs)
        if set(o.maybe) - held or set(o.order) != held:
            return UNRESOLVED
        out = []
        for n in o.order:
            key = gast.Constant(value=n, kind=None)
            value = gast.Attribute(value=copy.deepcopy(base), attr=n, ctx=gast.Load())
            out.append(key if method == "keys" else value if method == "values" else
                       gast.Tuple(elts=[key, value], ctx=gast.Load()))
        return out

    def _dict_items(self, e, stored: set):
        """`params`, `params.keys()`, `params.values()`, `params.items()` of a dict argument
        whose keys the call's arguments gave (`pf.dict_keys`: the code is specialised on
        them): its keys as constants, its values as `params[key]`, or both as pairs; else
        UNRESOLVED."""
        method = None
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Attribute) and \
                e.func.attr in ("keys", "values", "items") and not e.args and not e.keywords:
            method, e = e.func.attr, e.func.value
        if not isinstance(e, gast.Name) or e.id in stored or e.id in self.scope.env or \
                e.id in _stored_names(self.o.pf.tree.body) or \
                e.id not in self.o.pf.dict_keys or self.scope is not self.o.top:
            return UNRESOLVED
        out = []
        for k in self.o.pf.dict_keys[e.id]:
            key = gast.Constant(value=k, kind=None)
            value = gast.Subscript(value=_name(e.id), slice=gast.Constant(value=k, kind=None),
                                   ctx=gast.Load())
            out.append(value if method == "values" else gast.Tuple(
                elts=[key, value], ctx=gast.Load()) if method == "items" else key)
        return out

    def _unrolled_dict_comprehension(self, e):
        """`{k: Parameter(v, name=k) for k, v in params.items()}` building objects, over a
        dict argument whose keys are known: the dict display of its entries."""
        (g,) = e.generators if len(e.generators) == 1 else (None,)
        if g is None or g.ifs or any(isinstance(n, (gast.Lambda, gast.ListComp, gast.SetComp,
                                                    gast.DictComp, gast.GeneratorExp))
                                     for part in (e.key, e.value) for n in gast.walk(part)):
            raise _Unsupported("a comprehension building objects with conditions or nested "
                               "comprehensions")
        seq = self._static_seq(g.iter, set())
        if seq is UNRESOLVED:
            raise _Unsupported("a comprehension building objects over a sequence whose length "
                               "is not known before running")
        self.pre.extend(self._length_checks(g.iter, e))
        keys, values = [], []
        for item in seq:
            binds = {}
            for t, v in _bindings(g.target, item):
                if not isinstance(t, gast.Name):
                    raise _Unsupported("a comprehension building objects into this target")
                binds[t.id] = v

            class _Put(gast.NodeTransformer):
                def visit_Name(self, n):
                    if n.id in binds and isinstance(n.ctx, gast.Load):
                        return gast.copy_location(copy.deepcopy(binds[n.id]), n)
                    return n

            keys.append(_Put().visit(copy.deepcopy(e.key)))
            values.append(_Put().visit(copy.deepcopy(e.value)))
        out = gast.copy_location(gast.Dict(keys=keys, values=values), e)
        gast.fix_missing_locations(out)
        return out

    def _plain_target(self, t):
        self.pre = []
        out = self.target(t)
        if self.pre:
            raise _Unsupported("a target with a method call")
        return out

    def _binds_object_name(self, target) -> bool:
        return any(isinstance(n, gast.Name) and n.id in self.scope.env
                   for n in gast.walk(target))

    # -- targets -----------------------------------------------------------------------------
    def target(self, t):
        if isinstance(t, gast.Name):
            self.consts.pop(t.id, None)
            self.funcs.pop(t.id, None)
            self.scope.lengths.pop(t.id, None)
            if t.id in self.scope.env:
                raise _Unsupported(f"`{t.id}` holds an object and other values")
            self.scope.plain.add(t.id)
            return t
        if isinstance(t, (gast.Tuple, gast.List)):
            t.elts = [self.target(e) for e in t.elts]
            return t
        if isinstance(t, gast.Starred):
            t.value = self.target(t.value)
            return t
        if isinstance(t, gast.Attribute):
            base = self.expr(t.value)
            if isinstance(base, VObj):
                if _frozen_dataclass(base.cls):
                    raise self.o.pf.error(
                        f"`.{t.attr}` assigned on a frozen dataclass ({base.cls.__name__}): "
                        f"Python raises FrozenInstanceError here (cannot assign to field "
                        f"'{t.attr}')", t, cls=UnsupportedSyntaxError,
                        hint=f"build a new {base.cls.__name__}(...) holding the new value")
                if t.attr in base.objects:
                    raise _Unsupported(f"`.{t.attr}` holds an object and other values")
                if t.attr not in base.attrs and getattr(t, "srcad_setattr", False) and \
                        base.built and base is self.me and not hasattr(base.cls, t.attr):
                    # (an attribute its own method names by setattr: state like the others
                    # from here on -- set before any read, so given back, never passed in)
                    base.attrs = base.attrs + (t.attr,)
                    self.o.late.append((base, t.attr, None))
                if t.attr not in base.attrs and base.built and _class_default(base.cls, t.attr) \
                        and not (self.nested or self.outer_nested or self.in_def):
                    # (`class L: W = None` and `layer.W = W` from outside: an instance
                    # attribute from here on, state like the others; before, the class's)
                    base.attrs = base.attrs + (t.attr,)
                    self.o.late.append((base, t.attr, gast.Attribute(
                        value=_name(self.o.bind(base.cls, base.cls.__name__)), attr=t.attr,
                        ctx=gast.Load())))
                if t.attr not in base.attrs and base.built and \
                        _new_plain_attribute(base.cls, t.attr) and \
                        not (self.nested or self.outer_nested or self.in_def):
                    # (`st = State(); st.h = np.tanh(z)`: a new attribute of an object built
                    # here, state like the others from here on -- Python reads it only after
                    # this store, so it is given back, never passed in)
                    base.attrs = base.attrs + (t.attr,)
                    self.o.late.append((base, t.attr, None))
                if t.attr not in base.attrs:
                    raise _Unsupported(f"`.{t.attr}` assigned from outside the class")
                base.consts.pop(t.attr, None)
                base.funcs.pop(t.attr, None)
                base.lengths.pop(t.attr, None)
                name = self.scope.local(base, t.attr)
                self.scope.stored.add((id(base), t.attr))
                base.maybe.add(t.attr)
                if not (self.nested or self.outer_nested or self.in_def):
                    base.surely.add(t.attr)
                    base.note(t.attr)
                return gast.copy_location(_name(name, store=True), t)
            if isinstance(base, VList):
                raise _Unsupported("an attribute of a list of objects")
            t.value = base
            return t
        if isinstance(t, gast.Subscript):
            base = self.expr(t.value)
            if isinstance(base, (VObj, VList)):
                raise _Unsupported("a write into a built object by index")
            t.value = base
            t.slice = self.value(t.slice)
            return t
        raise _Unsupported(f"assignment to a {type(t).__name__}")

    # -- expressions -------------------------------------------------------------------------
    def value(self, e):
        v = self.expr(e)
        if isinstance(v, VTuple):  # `args` as a value: the tuple of its items
            return gast.copy_location(gast.Tuple(elts=[copy.deepcopy(x) for x in v.items],
                                                 ctx=gast.Load()), e)
        if isinstance(v, (VObj, VList, VBound)):
            raise _Unsupported("the object is handed to a function or operator srcad does not "
                               "follow into, or held in a container")
        return v

    def test(self, e):
        """A test's value; a built list's or object's truth is a constant here (`if
        self.layers:` in a Keras-like `add`, `if not self.layers:`)."""
        negated = isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Not)
        inner = e.operand if negated else e
        v = self.peek(inner) if isinstance(inner, (gast.Name, gast.Attribute)) else None
        if isinstance(v, VList):
            truth = bool(v.items)
        elif isinstance(v, VObj) and all(class_attribute(v.cls, m)[0] in (None, object)
                                         for m in ("__bool__", "__len__")):
            truth = True  # (an object with neither is true, as Python says)
        else:
            out = self.value(e)
            if isinstance(out, gast.UnaryOp) and isinstance(out.op, gast.Not) and \
                    isinstance(out.operand, gast.Constant) and \
                    type(out.operand.value) in _CONST_TYPES:
                # (`if not isinstance(other, Tensor):` known here)
                return gast.copy_location(gast.Constant(value=not out.operand.value,
                                                        kind=None), e)
            return out
        return gast.copy_location(gast.Constant(value=truth != negated, kind=None), e)

    def expr(self, e):
        if isinstance(e, gast.Name):
            if isinstance(e.ctx, gast.Load) and isinstance(self.scope.env.get(e.id), VTuple):
                return gast.copy_location(gast.Tuple(  # (a method's *args: its items)
                    elts=[copy.deepcopy(x) for x in self.scope.env[e.id].items],
                    ctx=gast.Load()), e)
            if isinstance(e.ctx, gast.Load) and e.id in self.scope.env:
                if isinstance(self.scope.env[e.id], VBound) and not self.bound_ok:
                    raise _Unsupported(f"the method `{e.id}` used as a value (other than called "
                                       f"or handed to a function srcad follows)")
                return self.scope.env[e.id]
            if isinstance(e.ctx, gast.Load) and e.id in self.consts and not self.in_def:
                return gast.copy_location(gast.Constant(value=self.consts[e.id], kind=None), e)
            if isinstance(e.ctx, gast.Load) and e.id in self.funcs and not self.in_def:
                # (a callable known here, `act` given np.tanh: read under a name of its own)
                return gast.copy_location(self._func_ref(self.funcs[e.id], e.id), e)
            if isinstance(e.ctx, gast.Load) and e.id in self.scope.locals:
                self.scope.plain.add(e.id)
            return e
        if isinstance(e, gast.BoolOp) and isinstance(e.op, gast.Or) and len(e.values) == 2 \
                and isinstance(e.values[1], gast.List) and not e.values[1].elts:
            # `layers or []` of a list of objects (true when it holds any): that list
            first = self.peek(e.values[0])
            if isinstance(first, VList) and first.keys is None and first.items:
                return first
            v = e.values[0]  # (`layers or []` of `layers=None`: the empty list)
            if isinstance(v, gast.Name) and v.id not in self.scope.env and \
                    v.id in self.consts and self.consts[v.id] is None and not self.in_def:
                return VList([], None)
        if isinstance(e, gast.Attribute) and isinstance(e.ctx, gast.Load):
            base = self.expr(e.value)
            if isinstance(base, VObj):
                return self.attribute(base, e.attr, e)
            if isinstance(base, VList):
                raise _Unsupported("an attribute of a list of objects")
            e.value = base
            return e
        if isinstance(e, gast.Subscript) and isinstance(e.ctx, gast.Load):
            base = self.expr(e.value)
            if isinstance(base, VTuple) and isinstance(e.slice, gast.Constant) and \
                    type(e.slice.value) is int and -len(base.items) <= e.slice.value < \
                    len(base.items):
                return copy.deepcopy(base.items[e.slice.value])
            if isinstance(base, VTuple):
                e.value = self.value(e.value)
                e.slice = self.value(e.slice)
                return e
            if isinstance(base, VList) and not isinstance(e.slice, gast.Slice):
                e.slice = self.value(e.slice)  # (an unrolled index, `f"fc{i}"`: constants)
            if isinstance(base, VList) and base.keys is not None:
                k = e.slice
                if base.pairs or not (isinstance(k, gast.Constant) and k.value in base.keys):
                    raise _Unsupported("a dict of objects indexed by a variable or a missing key")
                return base.items[base.keys.index(k.value)]
            if isinstance(base, VList) and isinstance(e.slice, gast.Slice):
                parts = [_const_int(p) for p in (e.slice.lower, e.slice.upper, e.slice.step)]
                if any(p is UNRESOLVED for p in parts):
                    raise _Unsupported("a list of objects sliced by a variable")
                # (`layers[1:]`, `layers[::-1]`: a list subclass's slice is a plain list)
                return VList(base.items[slice(*parts)], kind=_plain_kind(base.kind))
            if isinstance(base, VList):
                k = e.slice
                if isinstance(k, gast.UnaryOp) and isinstance(k.op, gast.USub) and \
                        isinstance(k.operand, gast.Constant):
                    k = gast.Constant(value=-k.operand.value, kind=None)
                if not (isinstance(k, gast.Constant) and type(k.value) is int):
                    raise _Unsupported("a list of objects indexed by a variable")
                try:
                    return base.items[k.value]
                except IndexError:
                    raise _Unsupported("index out of range") from None
            if isinstance(base, VObj) and _delegate(base.cls, "__getitem__") is not None:
                # `model[0]`: its __getitem__ reading a list of objects it holds
                held = self._delegated(base, "__getitem__")
                base = held
                e.slice = self.value(e.slice)
                k = e.slice
                if isinstance(k, gast.UnaryOp) and isinstance(k.op, gast.USub) and \
                        isinstance(k.operand, gast.Constant):
                    k = gast.Constant(value=-k.operand.value, kind=None)
                if held.keys is not None and isinstance(k, gast.Constant) and \
                        k.value in held.keys:
                    return held.items[held.keys.index(k.value)]
                if held.keys is None and isinstance(k, gast.Constant) and \
                        type(k.value) is int and -len(held.items) <= k.value < len(held.items):
                    return held.items[k.value]
                raise _Unsupported("a built object indexed by a value not known before running")
            if isinstance(base, VObj):
                owner, raw = class_attribute(base.cls, "__getitem__")
                if owner is None or owner is object or isinstance(e.slice, gast.Slice):
                    raise _Unsupported("indexing a built object")
                # `params["W1"]` of an object with __getitem__: that method, called
                guards.note_attr(base.cls, "__getitem__", base.cls.__getitem__)
                call = gast.copy_location(gast.Call(func=copy.deepcopy(e.value),
                                                    args=[e.slice], keywords=[]), e)
                return self.method(base, owner, raw, "__getitem__", call)
            e.value = base
            e.slice = self.value(e.slice)
            return e
        if isinstance(e, gast.Call):
            return self.call(e)
        if isinstance(e, gast.IfExp):
            test = self.test(e.test)
            if isinstance(test, gast.Constant):
                return self.expr(e.body if test.value else e.orelse)
            e.test = test
            self.no_hoist += 1
            try:
                e.body, e.orelse = self.value(e.body), self.value(e.orelse)
            finally:
                self.no_hoist -= 1
            return e
        if isinstance(e, gast.Compare) and len(e.ops) == 1 and \
                isinstance(e.ops[0], (gast.Is, gast.IsNot)):
            # `act_fn if act_fn is not None else Tanh()` given an object: an identity known
            # here (a built object is none of None, a literal, another object)
            sides = [self.peek(x) for x in (e.left, e.comparators[0])]
            if any(x is not None for x in sides):
                other = [x if v is None else v for x, v in zip((e.left, e.comparators[0]),
                                                               sides)]
                if not all(isinstance(x, (VObj, VList)) or isinstance(x, gast.Constant)
                           for x in other):
                    raise _Unsupported("a built object compared by identity with a value")
                same = other[0] is other[1]
                return gast.copy_location(gast.Constant(
                    value=same if isinstance(e.ops[0], gast.Is) else not same, kind=None), e)
        if isinstance(e, gast.Compare):
            e = self._generic(e)
            parts = [e.left] + list(e.comparators)
            if all(isinstance(p, gast.Constant) and type(p.value) in _CONST_TYPES
                   for p in parts) and all(type(op) in _COMPARE for op in e.ops) and \
                    all(type(a.value) in (bool, type(None)) or type(b.value) in (
                        bool, type(None)) for op, a, b in zip(e.ops, parts, parts[1:])
                        if isinstance(op, (gast.Is, gast.IsNot))):
                ok = all(_COMPARE[type(op)](a.value, b.value)
                         for op, a, b in zip(e.ops, parts, parts[1:]))
                return gast.copy_location(gast.Constant(value=ok, kind=None), e)
            if len(e.ops) == 1 and isinstance(e.ops[0], (gast.Is, gast.IsNot)) and any(
                    isinstance(p, gast.Constant) and p.value is None for p in parts) and any(
                    self._static_callable(p) is not UNRESOLVED for p in parts):
                # `act is None` of a function known here (`out_act if out_act is not None`)
                return gast.copy_location(gast.Constant(
                    value=isinstance(e.ops[0], gast.IsNot), kind=None), e)
            return _fold(e)  # (`"leaky relu" in act_str` of a known name)
        if isinstance(e, gast.Dict) and e.keys and all(
                isinstance(k, gast.Constant) and type(k.value) in (str, int) for k in e.keys) \
                and len({k.value for k in e.keys}) == len(e.keys):
            items = [self.expr(x) for x in e.values]
            if all(isinstance(x, VObj) for x in items):  # `{"fc1": Affine(W1, b1), ...}`
                return VList(items, [k.value for k in e.keys])
            if any(isinstance(x, (VObj, VList)) for x in items):
                raise _Unsupported("a dict mixing objects and values")
            e.values = items
            return e
        if isinstance(e, gast.BinOp):
            return self.binop(e)
        if isinstance(e, gast.UnaryOp) and type(e.op) in _UNARY:
            operand = self.expr(e.operand)
            if isinstance(operand, VObj):
                return self.dunder(operand, _UNARY[type(e.op)], [], e)
            e.operand = self._as_value(operand, e.operand)
            return _fold(e)
        if isinstance(e, (gast.ListComp, gast.GeneratorExp)) and not self.in_def and \
                not self.no_hoist and e.generators and \
                isinstance(e.generators[0].target, gast.Name):
            over = self.peek(e.generators[0].iter)
            if isinstance(over, VObj):
                over = self._delegated(over, "__iter__")
            if isinstance(over, VList) and over.keys is None and not over.pairs:
                # `sum(np.sum(l.W ** 2) for l in self.layers)`, `[l.W for l in layers]`
                return self.expr(self._over_objects(e, over))
        if isinstance(e, (gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)) and \
                e.generators and self._attribute_walk(e.generators[0].iter) is not UNRESOLVED:
            # `[v for k, v in vars(self).items() if isinstance(v, np.ndarray)]` of a built
            # object: over the display of what the walk takes, in its order (each item
            # `self.<name>`, read as the attribute's local), conditions kept as written
            g = e.generators[0]
            g.iter = gast.copy_location(gast.Tuple(elts=self._attribute_walk(g.iter),
                                                   ctx=gast.Load()), g.iter)
        if isinstance(e, (gast.ListComp, gast.GeneratorExp)) and not self.in_def and \
                not self.no_hoist and (any(self._builds_object(n) for n in gast.walk(e.elt)) or (
                    len(e.generators) == 1 and any(
                        isinstance(n, gast.Name) and n.id in self.scope.env
                        for n in gast.walk(e.elt)) and
                    self._static_seq(e.generators[0].iter, set()) is not UNRESOLVED)):
            # (`[Residual(Ws[i], cfg) for i in range(depth)]`, `sum(np.sum(model[i].W ** 2)
            # for i in range(0, len(model), 2))`: unrolled)
            return self.expr(self._unrolled_comprehension(e))
        if isinstance(e, gast.DictComp) and not self.in_def and not self.no_hoist and \
                any(self._builds_object(n) for n in gast.walk(e.value)):
            # (`{k: Parameter(v) for k, v in params.items()}`: unrolled over the keys)
            return self.expr(self._unrolled_dict_comprehension(e))
        if isinstance(e, (gast.List, gast.Tuple)) and e.elts and isinstance(e.ctx, gast.Load):
            # (a tuple of objects as a list of them: `net = (Dense(W1, b1), Dense(W2, b2))`)
            items = [self.expr(x) for x in e.elts]
            if all(isinstance(x, VObj) for x in items):
                return VList(items, kind="tuple" if isinstance(e, gast.Tuple) else "list")
            if any(isinstance(x, (VObj, VList, VBound)) for x in items):
                raise _Unsupported("a list mixing objects and values")
            e.elts = [gast.copy_location(gast.Tuple(elts=[copy.deepcopy(y) for y in x.items],
                                                    ctx=gast.Load()), e)
                      if isinstance(x, VTuple) else x for x in items]  # (as `value` gives)
            return e
        if isinstance(e, (gast.BinOp, gast.UnaryOp, gast.JoinedStr, gast.Compare)):
            return _fold(self._generic(e))
        return self._generic(e)

    def _delegated(self, o: VObj, dunder: str):
        """The list of objects `o`'s `dunder` hands the operation to (`_delegate`)."""
        attr = _delegate(o.cls, dunder)
        held = o.objects.get(attr) if attr is not None else None
        if not isinstance(held, VList):
            raise _Unsupported(f"`{dunder}` of a built object, other than handing it to a "
                               f"list of objects it holds")
        guards.note_attr(o.cls, dunder, getattr(o.cls, dunder))
        if dunder == "__iter__" and held.keys is not None:
            raise _Unsupported("iterating over a dict of objects itself (its keys)")
        return VList(list(held.items), kind="iterator") if dunder == "__iter__" else held

    def _over_objects(self, e, over: VList):
        """A comprehension over a list of built objects as the list display of its items:
        one copy of the element per object (its condition, known here, picks them)."""
        g, rest = e.generators[0], e.generators[1:]
        if any(isinstance(n, (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp,
                              gast.GeneratorExp)) for n in gast.walk(e.elt)):
            raise _Unsupported("a comprehension over objects with a nested comprehension")
        elts = []
        for obj in over.items:
            name = fresh(f"{g.target.id}_item", self.scope.taken)
            self.scope.env[name] = obj

            class _Put(gast.NodeTransformer):
                def visit_Name(self, n):
                    if n.id == g.target.id:
                        return gast.copy_location(_name(name), n)
                    return n

            keep = True
            for cond in g.ifs:
                c = self.value(_Put().visit(copy.deepcopy(cond)))
                if not isinstance(c, gast.Constant):
                    raise _Unsupported("a comprehension over objects with a condition not "
                                       "known before running")
                keep = keep and bool(c.value)
            if keep and not rest:
                elts.append(_Put().visit(copy.deepcopy(e.elt)))
            elif keep:  # (`for layer in layers for p in layer.params`: that object's part)
                elts.append(gast.ListComp(elt=_Put().visit(copy.deepcopy(e.elt)), generators=[
                    _Put().visit(copy.deepcopy(r)) for r in rest]))
        out = gast.copy_location(gast.List(elts=elts, ctx=gast.Load()), e)
        if rest:
            # the parts in order, one list: `[v for part in [part1, part2] for v in part]`
            part, v = (fresh(n, self.scope.taken) for n in ("part", "item"))
            self.scope.taken.update((part, v))
            out = gast.copy_location(type(e)(elt=_name(v), generators=[
                gast.comprehension(target=_name(part, store=True), iter=out, ifs=[],
                                   is_async=0),
                gast.comprehension(target=_name(v, store=True), iter=_name(part), ifs=[],
                                   is_async=0)]), e)
        gast.fix_missing_locations(out)
        return out

    def _unrolled_comprehension(self, e):
        """`[Residual(Ws[i], cfg) for i in range(depth)]` building objects, over a sequence
        whose items are known before running: the list display of its items, each with the
        loop variable replaced by its item (`[Residual(Ws[0], cfg), Residual(Ws[1], cfg)]`)."""
        (g,) = e.generators if len(e.generators) == 1 else (None,)
        if g is None or g.ifs or any(isinstance(n, (gast.Lambda, gast.ListComp, gast.SetComp,
                                                    gast.DictComp, gast.GeneratorExp))
                                     for n in gast.walk(e.elt)):
            raise _Unsupported("a comprehension building objects with conditions or nested "
                               "comprehensions")
        seq = self._static_seq(g.iter, set())
        if seq is UNRESOLVED and self.o.pf.deferrable and not self.in_def:
            raise self.o.pf.error(  # (as a `for` loop building them: `for_`)
                "this comprehension builds objects as many times as an argument says", e,
                cls=CountUnknownError,
                hint="srcad unrolls it once the first call's arguments give the count")
        if seq is UNRESOLVED:
            raise _Unsupported("a comprehension building objects over a sequence whose length "
                               "is not known before running")
        self.pre.extend(self._length_checks(g.iter, e))
        elts = []
        for item in seq:
            binds = {}
            for t, v in _bindings(g.target, item):
                if isinstance(t, (gast.Tuple, gast.List)) and not any(
                        isinstance(x, gast.Starred) for x in t.elts) and all(
                        isinstance(x, gast.Name) for x in t.elts) and not (
                        self.nested or self.outer_nested or self.in_def or self.no_hoist):
                    # (`[Layer(W, b) for W, b in params]`, an item not a display: unpacked
                    # before the statement, as Python unpacks it -- its length checked)
                    names = [fresh(f"{x.id}_item", self.o.taken) for x in t.elts]
                    self.pre.append(_assign([gast.Tuple(
                        elts=[_name(n, store=True) for n in names], ctx=gast.Store())],
                        copy.deepcopy(v), e))
                    binds.update((x.id, _name(n)) for x, n in zip(t.elts, names))
                    continue
                if not isinstance(t, gast.Name):
                    raise _Unsupported("a comprehension building objects into this target")
                binds[t.id] = v
            elt = copy.deepcopy(e.elt)

            class _Put(gast.NodeTransformer):
                def visit_Name(self, n):
                    if n.id in binds and isinstance(n.ctx, gast.Load):
                        return gast.copy_location(copy.deepcopy(binds[n.id]), n)
                    return n

            elts.append(_Put().visit(elt))
        out = gast.copy_location(gast.List(elts=elts, ctx=gast.Load()), e)
        gast.fix_missing_locations(out)
        return out

    def binop(self, e):
        """``p + q``, ``2 * p``, ``p ** 3`` with a built object as an operand: its ``__add__``
        (or the right one's ``__radd__``), as Python picks (a method that may return
        NotImplemented is not followed)."""
        left, right = self.expr(e.left), self.expr(e.right)
        if isinstance(e.op, gast.Add) and isinstance(left, VList) and \
                isinstance(right, VList) and left.keys is None and right.keys is None and \
                not left.pairs and not right.pairs:
            # `[Dense(W) for W in Ws[:-1]] + [Out(Ws[-1])]`: two lists of objects, one list
            return VList(list(left.items) + list(right.items), kind=_plain_kind(left.kind))
        name = _BINARY.get(type(e.op))
        if name is not None and (isinstance(left, VObj) or isinstance(right, VObj)):
            order = [(left, f"__{name}__", right), (right, f"__r{name}__", left)]
            if isinstance(left, VObj) and isinstance(right, VObj) and \
                    right.cls is not left.cls and issubclass(right.cls, left.cls):
                order.reverse()  # (a subclass's reflected method first, as Python)
            for obj, attr, other in order:
                if isinstance(obj, VObj) and \
                        class_attribute(obj.cls, attr)[0] not in (None, object):
                    return self.dunder(obj, attr, [other], e)
        e.left = self._as_value(left, e.left)
        e.right = self._as_value(right, e.right)
        return _fold(e)

    def dunder(self, o: VObj, attr: str, args: list, e):
        """`o`'s operator method `attr` called with these (already rewritten) arguments."""
        owner, raw = class_attribute(o.cls, attr)
        if not isinstance(raw, types.FunctionType) or not _user_function(raw, self.o.globals):
            raise _Unsupported(f"`{attr}` is not a method srcad can follow")
        if "NotImplemented" in raw.__code__.co_names:
            raise _Unsupported(f"`{attr}` may return NotImplemented")
        guards.note_attr(o.cls, attr, getattr(o.cls, attr))
        return self.specialise(raw, o, owner, args, [], e)

    def _as_value(self, v, at):
        if isinstance(v, VTuple):
            return gast.copy_location(gast.Tuple(elts=[copy.deepcopy(x) for x in v.items],
                                                 ctx=gast.Load()), at)
        if isinstance(v, (VObj, VList)):
            raise _Unsupported("the object is an operand of an operator it has no method for")
        return v

    def _generic(self, node):
        """Rewrite the expressions under `node` (one with no meaning of its own here)."""
        lazy = isinstance(node, (gast.IfExp, gast.BoolOp, gast.Lambda, gast.ListComp,
                                 gast.SetComp, gast.DictComp, gast.GeneratorExp))
        first = None
        if isinstance(node, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)) \
                and not self.in_def:
            # (a comprehension's first iterable is evaluated where it stands, as Python does:
            # `sum(np.sum(p ** 2) for p in net.parameters())` calls the method once, here)
            first = node.generators[0]
            first.iter = self._child(first.iter)
        self.no_hoist += lazy
        self.in_def += isinstance(node, gast.Lambda)
        try:
            for fname, value in gast.iter_fields(node):
                if isinstance(value, list):
                    new = []
                    for v in value:
                        if first is not None and v is first:  # (its iterable done above;
                            # a dict display's keys hold None for each `**`)
                            first.target = self._child(first.target)
                            first.ifs = [self._child(x) for x in first.ifs]
                            new.append(first)
                            continue
                        new.append(self._child(v))
                    setattr(node, fname, new)
                elif isinstance(value, gast.AST):
                    setattr(node, fname, self._child(value))
        finally:
            self.no_hoist -= lazy
            self.in_def -= isinstance(node, gast.Lambda)
        return node

    def _child(self, v):
        if isinstance(v, gast.expr):
            if isinstance(getattr(v, "ctx", None), (gast.Store, gast.Del)):
                return self.target(v) if not isinstance(v, gast.Name) else v
            return self.value(v)
        if isinstance(v, gast.AST):
            return self._generic(v)
        return v

    def attribute(self, o: VObj, attr: str, node):
        if attr in o.objects:
            return o.objects[attr]
        if attr in o.attrs and attr not in o.surely and isinstance(
                class_attribute(o.cls, attr)[1], functools.cached_property):
            return self.cached_read(o, attr, node)
        fallback = class_attribute(o.cls, "__getattr__")
        if fallback[0] is not None and attr in o.attrs and attr not in o.surely:
            raise _Unsupported(f"`.{attr}` may be unset here, and the class has __getattr__")
        if attr in o.funcs and not self.in_def:
            return gast.copy_location(self._func_ref(o.funcs[attr], attr), node)
        if attr in o.consts and not self.in_def:
            return gast.copy_location(gast.Constant(value=o.consts[attr], kind=None), node)
        if attr in o.attrs:
            name = self.scope.local(o, attr)
            self.read_now.add(name)
            return gast.copy_location(_name(name), node)
        if attr == "__class__" and "__class__" not in o.attrs:  # (`self.__class__.__name__`)
            return gast.copy_location(_name(self.o.bind(o.cls, o.cls.__name__)), node)
        owner, raw = class_attribute(o.cls, attr)
        if (owner is None or owner is object) and fallback[0] is not None and \
                not attr.startswith("__"):
            # `p.W` of a class whose __getattr__ answers it (`return self._arrays[name]`):
            # Python calls it for what the instance and its class do not have
            guards.note_attr(o.cls, "__getattr__", fallback[1])
            return self.specialise(fallback[1], o, fallback[0],
                                   [gast.Constant(value=attr, kind=None)], [], node)
        if owner is None or owner is object:
            raise _Unsupported(f"`.{attr}` is not an attribute srcad can follow")
        guards.note_attr(o.cls, attr, getattr(o.cls, attr))
        if isinstance(raw, property):
            if raw.fget is None:
                raise _Unsupported("a property without a getter")
            return self.specialise(raw.fget, o, owner, [], [], node)
        if isinstance(raw, types.FunctionType) and self.bound_ok and not self.in_def and \
                _user_function(raw, self.o.globals):
            return VBound(o, owner, raw, attr)  # (an argument of a user function or method)
        if isinstance(raw, types.FunctionType):
            raise _Unsupported(f"the method `.{attr}` used as a value")
        if hasattr(type(raw), "__get__") and not isinstance(raw, (staticmethod, classmethod)):
            # (`functools.cached_property`, a user's descriptor: what the instance reads is
            # not what the class holds, and reading the class's would be another value)
            raise _Unsupported(f"`.{attr}` is a {type(raw).__name__} (srcad follows "
                               f"@property, not other descriptors)")
        return gast.copy_location(gast.Attribute(value=copy.deepcopy(o.clsexpr), attr=attr,
                                                 ctx=gast.Load()), node)

    def cached_read(self, o: VObj, attr: str, node):
        """The first read of a `functools.cached_property`: its getter runs and the value is
        stored on the instance (`o.attr = getter(o)`), as Python caches it; later reads read
        the stored value. Refused where that first read may or may not run (a branch, a loop
        not unrolled, a lazily evaluated expression) or was stored in one."""
        if attr in o.maybe or self.nested or self.outer_nested or self.in_def or \
                self.no_hoist:
            raise _Unsupported(f"the cached_property `.{attr}` first read where it may not run")
        owner, raw = class_attribute(o.cls, attr)
        guards.note_attr(o.cls, attr, raw)
        value = self.specialise(raw.func, o, owner, [], [], node)
        name = self.scope.local(o, attr)
        self.pre.append(_assign([_name(name, store=True)], value, node))
        self.scope.stored.add((id(o), attr))
        o.maybe.add(attr)
        o.surely.add(attr)
        o.note(attr)
        return gast.copy_location(_name(name), node)

    def call(self, e):
        self.calls.append(set(self.read_now))  # (what the statement read before this call)
        try:
            return self._call(e)
        finally:
            self.calls.pop()

    def _call(self, e):
        expanded = []
        for a in e.args:  # `self.forward(*args)` with args a method's *args: its items
            if isinstance(a, gast.Starred) and isinstance(a.value, gast.Name) and \
                    isinstance(self.scope.env.get(a.value.id), VTuple):
                expanded.extend(copy.deepcopy(x) for x in self.scope.env[a.value.id].items)
            else:
                expanded.append(a)
        e.args = expanded
        if isinstance(e.func, gast.Name) and e.func.id == "len" and len(e.args) == 1 and \
                isinstance(e.args[0], gast.Name) and \
                isinstance(self.scope.env.get(e.args[0].id), VTuple):
            return gast.copy_location(gast.Constant(
                value=len(self.scope.env[e.args[0].id].items), kind=None), e)
        if any(k.arg is None and isinstance(k.value, gast.Name) and k.value.id in self.kwdicts
               for k in e.keywords):
            # `cls(W1, W2, **kwargs)` of a `**kwargs` the call site gave known keys: each key
            # by name (its constant, or the dict's entry)
            keywords = []
            for k in e.keywords:
                d = self.kwdicts.get(k.value.id) if k.arg is None and isinstance(
                    k.value, gast.Name) else None
                if d is None:
                    keywords.append(k)
                    continue
                for key, v in zip(d.keys, d.values):
                    value = copy.deepcopy(v) if isinstance(v, gast.Constant) else \
                        gast.copy_location(gast.Subscript(
                            value=_name(k.value.id), slice=gast.Constant(key.value, None),
                            ctx=gast.Load()), k.value)
                    keywords.append(gast.keyword(arg=key.value, value=value))
            e.keywords = keywords
        if any(k.arg is None for k in e.keywords) and not self.in_def:
            self._spread(e)  # (`Dense(**spec)`, `layer(x, **cfg)`: by the callee's parameters)
        if len(e.args) in (2, 3) and not e.keywords and not self.in_def and \
                not self.no_hoist and not any(isinstance(a, gast.Starred) for a in e.args) \
                and isinstance(e.func, (gast.Name, gast.Attribute)) and \
                self.o.resolve_static(e.func, self.scope) is functools.reduce:
            items = self.peek(e.args[1])
            if isinstance(items, VList) and items.keys is None and not items.pairs:
                return self._unrolled_reduce(e, items)
        self._spread_positional(e)
        if any(isinstance(a, gast.Starred) for a in e.args) or \
                any(k.arg is None for k in e.keywords):
            return self._plain_call(e)
        f = e.func
        # super().m(...) in a method
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Call) and \
                isinstance(f.value.func, gast.Name) and f.value.func.id == "super" and \
                self.me is not None and "super" not in self.scope.locals:
            mro = self.me.cls.__mro__
            rest = mro[mro.index(self.klass) + 1:]
            for klass in rest:
                if klass is object and f.attr == "__init__" and not e.args and \
                        not e.keywords:  # (a base with no __init__ of its own: nothing)
                    return gast.copy_location(gast.Constant(value=None, kind=None), e)
                if f.attr in vars(klass):
                    return self.method(self.me, klass, vars(klass)[f.attr], f.attr, e)
            raise _Unsupported(f"super().{f.attr} not found")
        if isinstance(f, gast.Attribute) and e.args and not isinstance(e.args[0], gast.Starred):
            # `Base.g(self, x)`: a class's own method given the object explicitly (the
            # spelling before super()) -- that method, run on the object, as super() runs it
            klass = self.o.resolve_static(f.value, self.scope)
            first = self.peek(e.args[0]) if isinstance(klass, type) else None
            if isinstance(first, VObj) and issubclass(first.cls, klass):
                owner, raw = class_attribute(klass, f.attr)
                if isinstance(raw, types.FunctionType):
                    rest = gast.copy_location(gast.Call(func=e.func, args=e.args[1:],
                                                        keywords=e.keywords), e)
                    return self.method(first, owner, raw, f.attr, rest)
        if isinstance(f, gast.Name) and f.id in ("isinstance", "len") and \
                f.id not in self.scope.locals and e.args:
            first = self.peek(e.args[0])
            if f.id == "isinstance" and isinstance(first, VList) and len(e.args) == 2:
                return self._list_instance(first, e)
            if f.id == "isinstance" and isinstance(first, VObj) and len(e.args) == 2:
                cls = self.o.resolve_static(e.args[1], self.scope)
                if not (isinstance(cls, type) or (isinstance(cls, tuple) and all(
                        isinstance(c, type) for c in cls))):
                    raise _Unsupported("isinstance of a built object against an unknown class")
                return gast.copy_location(gast.Constant(
                    value=issubclass(first.cls, cls), kind=None), e)
            known = self.consts.get(e.args[0].id, UNRESOLVED) if isinstance(
                e.args[0], gast.Name) and e.args[0].id not in self.scope.env else UNRESOLVED
            if f.id == "isinstance" and first is None and len(e.args) == 2 and \
                    known is not UNRESOLVED and not self.in_def:
                # (`isinstance(param, str)` of a name holding a known constant: a factory
                # picking by what it is given)
                cls = self.o.resolve_static(e.args[1], self.scope)
                if isinstance(cls, type) or (isinstance(cls, tuple) and all(
                        isinstance(c, type) for c in cls)):
                    return gast.copy_location(gast.Constant(
                        value=isinstance(known, cls), kind=None), e)
            if f.id == "isinstance" and first is None and len(e.args) == 2 and \
                    isinstance(e.args[0], gast.Name) and \
                    e.args[0].id in self.scope.attr_values and \
                    self._user_classes(self.o.resolve_static(e.args[1], self.scope)):
                # (`isinstance(v, Module)` of `v = getattr(self, "W")`, an array: the
                # attributes that hold objects are followed as objects)
                return gast.copy_location(gast.Constant(value=False, kind=None), e)
            if f.id == "isinstance" and first is None and len(e.args) == 2 and \
                    any(self.o.resolve_static(e.args[1], self.scope) is c
                        for c in _SUBSTITUTE_CLASSES):
                # (srcad/pyfuncs.py's poly1d exists only as built objects: a value that is
                # not one is no instance of it)
                return gast.copy_location(gast.Constant(value=False, kind=None), e)
            if f.id == "isinstance" and first is None and len(e.args) == 2 and \
                    not e.keywords and not self.no_hoist and not self.in_def and \
                    isinstance(e.args[0], gast.Name):
                known = self._not_built_instance(e)
                if known is not None:
                    return known
            if f.id == "len" and isinstance(first, VList) and len(e.args) == 1:
                return gast.copy_location(gast.Constant(value=len(first.items), kind=None), e)
            if f.id == "len" and len(e.args) == 1 and not e.keywords and not self.in_def and \
                    self._static_len(e.args[0]) is not UNRESOLVED:  # (a list of known length)
                return gast.copy_location(gast.Constant(value=self._static_len(e.args[0]),
                                                        kind=None), e)
        if isinstance(f, gast.Name) and f.id in _OBJECT_BUILTINS and \
                f.id not in self.scope.locals and e.args and not e.keywords and \
                isinstance(self.peek(e.args[0]), VObj):
            return self._object_builtin(f.id, self.peek(e.args[0]), e)
        if len(e.args) == 1 and not e.keywords and not self.in_def and \
                isinstance(f, (gast.Name, gast.Attribute)) and \
                self.o.resolve_static(f, self.scope) in (copy.copy, copy.deepcopy) and \
                isinstance(self.peek(e.args[0]), VObj):
            return self._copied(self.expr(e.args[0]), f, e)
        if isinstance(f, gast.Call) and isinstance(f.func, gast.Name) and \
                f.func.id == "getattr" and "getattr" not in self.scope.locals and \
                len(f.args) == 2 and not f.keywords and isinstance(self.peek(f.args[0]), VObj):
            # `getattr(self, "_" + self.kind)(x)`: the method (or callable attribute) named
            e.func = gast.copy_location(gast.Attribute(
                value=f.args[0], attr=self._attr_name(f.args[1]), ctx=gast.Load()), f)
            return self._call(e)
        if isinstance(f, gast.Name) and f.id in ("list", "tuple") and \
                f.id not in self.scope.locals and len(e.args) == 1 and not e.keywords:
            comp = e.args[0]
            if isinstance(comp, gast.Call) and isinstance(comp.func, gast.Name) and \
                    comp.func.id == "map" and "map" not in self.scope.locals and \
                    self.o.resolve_static(comp.func, self.scope) is map and \
                    len(comp.args) >= 2 and not comp.keywords and \
                    _is_user_class(self.o.resolve_static(comp.args[0], self.scope),
                                   self.o.globals) and \
                    not any(isinstance(a, gast.Starred) for a in comp.args):
                # `list(map(Linear, Ws))`: the list of the objects it builds, in order --
                # `[Linear(W) for W in Ws]` (`zip` of the sequences for more than one)
                its = comp.args[1:]
                vs = [f"__srcad_map_item{i}" for i in range(len(its))]
                target = _name(vs[0], store=True) if len(its) == 1 else gast.Tuple(
                    elts=[_name(v, store=True) for v in vs], ctx=gast.Store())
                comp = gast.copy_location(gast.ListComp(
                    elt=gast.Call(func=comp.args[0], args=[_name(v) for v in vs],
                                  keywords=[]),
                    generators=[gast.comprehension(
                        target=target, iter=its[0] if len(its) == 1 else gast.Call(
                            func=_name("zip"), args=list(its), keywords=[]),
                        ifs=[], is_async=0)]), comp)
                gast.fix_missing_locations(comp)
            if isinstance(comp, (gast.ListComp, gast.GeneratorExp)) and \
                    any(self._builds_object(n) for n in gast.walk(comp.elt)):
                # `list(Linear(W) for W in Ws)`, `list(map(Linear, Ws))` (pylevel.py's
                # comprehension): the objects the comprehension builds, unrolled
                made = self.expr(comp)
                if isinstance(made, VList):
                    return VList(list(made.items))
                raise _Unsupported(f"{f.id}() of a comprehension building objects")
            first = self.peek(e.args[0])
            if isinstance(first, VList):  # `list(self.layers.values())`: the same objects
                return VList(list(first.items)) if first.keys is None else \
                    self._keys_list(first, e)
        if isinstance(f, gast.Attribute):
            base = self.expr(f.value)
            if isinstance(base, VObj):
                if f.attr in base.objects:
                    return self.call_object(base.objects[f.attr], e)
                if f.attr in base.funcs and not self.in_def:
                    # `self.act(z)` with `self.act = np.tanh` (or a function, a partial, a
                    # lambda)
                    e.func = gast.copy_location(self._func_ref(base.funcs[f.attr], f.attr), f)
                    return self._call(e)
                owner, raw = class_attribute(base.cls, f.attr)
                if f.attr in base.attrs or owner is None or owner is object:
                    raise _Unsupported(f"calling `.{f.attr}` of a built object")
                guards.note_attr(base.cls, f.attr, getattr(base.cls, f.attr))
                return self.method(base, owner, raw, f.attr, e)
            if isinstance(base, VList):
                return self._container_method(base, f.attr, e)
            obj = self.o.resolve_static(f, self.scope)  # (`layers.Dense(W, b)`: a module's)
            obj = _substituted(obj)  # (np.poly1d: srcad/pyfuncs.py's)
            if obj is not UNRESOLVED and _is_user_class(obj, self.o.globals):
                return self.construct(obj, f, e)
            held = self.funcs.get(f.value.id) if isinstance(f.value, gast.Name) and \
                not self.in_def else None
            if obj is UNRESOLVED and isinstance(held, type) and \
                    _is_user_class(held, self.o.globals):
                obj = getattr(held, f.attr, UNRESOLVED)  # (`act = REG[name]; act.f(x)`)
                if obj is not UNRESOLVED:
                    guards.note_attr(held, f.attr, obj)
            if obj is not UNRESOLVED and isinstance(f.value, (gast.Subscript, gast.Name)) and \
                    callable(obj) and not isinstance(obj, type) and not self._factory(obj) and \
                    (isinstance(f.value, gast.Subscript) or isinstance(held, type)):
                # `ACTIVATIONS[name].f(x)`: a static or class method of a class picked from a
                # registry by a key known here (each key its own specialisation), by name
                e.func = gast.copy_location(_name(self.o.bind(obj, f)), f)
                return self._call(e)
            if obj is not UNRESOLVED and not self.in_def and self._factory(obj):
                # `MLPModel.from_params(params)`, a classmethod returning `cls(...)`: followed
                # as the constructor call it makes, `cls` the class it was called on
                args = [copy.deepcopy(base)] + [self.expr(a) for a in e.args]
                kwargs = [(k.arg, self.expr(k.value)) for k in e.keywords]
                return self.specialise(obj.__func__, None, None, args, kwargs, e)
            f.value = base
            return self._plain_call(e, func_done=True)
        if isinstance(f, gast.Name) and f.id in self.scope.env:
            return self.call_object(self.scope.env[f.id], e)
        if isinstance(f, gast.Name) and f.id in self.funcs and not self.in_def and \
                _is_user_class(self.funcs[f.id], self.o.globals):  # (a class argument)
            cls = self.funcs[f.id]
            return self.construct(cls, gast.copy_location(self._func_ref(cls, f.id), f), e)
        if isinstance(f, gast.Subscript):  # `ACTIVATIONS[name]()`, `FUNCS[k](x)`
            self._registry_made_here(f)
            obj = self.o.resolve_static(f, self.scope)
            if obj is not UNRESOLVED and _is_user_class(obj, self.o.globals):
                return self.construct(obj, f, e)
            if obj is not UNRESOLVED and callable(obj) and not isinstance(obj, type):
                e.func = gast.copy_location(_name(self.o.bind(obj, f)), f)
                return self._call(e)
            key = f.slice
            arg = key.id if isinstance(key, gast.Name) else key.value.id if isinstance(
                key, gast.Attribute) and isinstance(key.value, gast.Name) else None
            if obj is UNRESOLVED and arg is not None and self.scope is self.o.top \
                    and arg in self.o.pf.params and arg not in self.o.pf.known and \
                    isinstance(self.o.resolve_static(f.value, self.scope), dict):
                spelled = gast.unparse(key) if hasattr(gast, "unparse") else arg
                raise self.o.pf.error(
                    f"the callee `{_spelled(f.value)}[{spelled}]` depends on the value of the "
                    f"argument `{arg}`", e,
                    hint=f"srcad picks the callee when `{spelled}` is a string (each value "
                    f"its own specialisation); pass the class or function itself otherwise",
                    cls=CalleeUnknownError)
        if not isinstance(f, (gast.Name, gast.Attribute)):  # `Affine(W)(x)`, `fs[0](x)`
            target = self.expr(f)
            if isinstance(target, (VObj, VList)):
                return self.call_object(target, e)
            e.func = target
            return self._plain_call(e, func_done=True)
        obj = _substituted(self.o.resolve_static(f, self.scope))
        if obj is not UNRESOLVED and _is_user_class(obj, self.o.globals):
            return self.construct(obj, f, e)
        if obj is not UNRESOLVED and _user_function(obj, self.o.globals):
            args, kwargs = self.call_values(e)
            if any(isinstance(v, (VObj, VList, VBound)) for v in args + [v for _, v in kwargs]) \
                    or (not self.in_def and
                        _returns_new_object(obj, self.o.globals) is not None):
                # (`q = encode(params, x)` returning `Gaussian(mu, logvar)`: the caller holds
                # the object the function builds, as a method's `return poly1d(..)`)
                return self.specialise(obj, None, None, args, kwargs, e)
            e.args = args
            e.keywords = [gast.keyword(arg=k, value=v) for k, v in kwargs]
            return e
        return self._plain_call(e)

    def _linked_walk(self, s):
        """`while node is not None: ...; node = node.next` over built objects linked by an
        attribute (`prev` / `next`): unrolled, one copy of the body per object, where every
        link is known here (an object, or the None its __init__ stored); else None."""
        test = s.test
        name = None
        if isinstance(test, gast.Compare) and len(test.ops) == 1 and \
                isinstance(test.ops[0], gast.IsNot) and isinstance(test.left, gast.Name) and \
                isinstance(test.comparators[0], gast.Constant) and \
                test.comparators[0].value is None:
            name = test.left.id
        elif isinstance(test, gast.Name):
            name = test.id
        if name is None or s.orelse or not isinstance(self.scope.env.get(name), VObj) or \
                self.nested or self.in_def:
            return None
        steps = [st for st in s.body if isinstance(st, gast.Assign) and any(
            isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
            for t in st.targets for n in gast.walk(t))]
        if len(steps) != 1 or s.body[-1] is not steps[0] or len(steps[0].targets) != 1 or \
                not isinstance(steps[0].targets[0], gast.Name):
            return None
        link = steps[0].value
        if not (isinstance(link, gast.Attribute) and isinstance(link.value, gast.Name) and
                link.value.id == name):
            return None
        if any(isinstance(n, (gast.Break, gast.Continue, gast.Return))
               for st in s.body for n in gast.walk(st)):
            return None
        chain, o = [], self.scope.env[name]
        while o is not None:
            if len(chain) > 256 or any(o is c for c in chain):
                return None
            if isinstance(test, gast.Name) and any(
                    class_attribute(o.cls, m)[0] not in (None, object)
                    for m in ("__bool__", "__len__")):
                return None  # (`while node:` of an object with a truth of its own)
            chain.append(o)
            if link.attr in o.objects:
                o = o.objects[link.attr]
            elif link.attr in o.nones:
                o = None
            else:
                return None
        out = []
        for o in chain:
            self.scope.env[name] = o
            out.extend(self.block(copy.deepcopy(s.body[:-1])))
        del self.scope.env[name]
        out.append(_assign([_name(name, store=True)], gast.Constant(value=None, kind=None), s))
        return out

    def _comprehension_as_loop(self, s):
        """`outs = [cell(x) for x in xs]` whose item calls a built object (a method that may
        change it): the loop Python runs, ``outs = []; for x_1 in xs: outs.append(cell(x_1))``
        (its variables renamed: a comprehension's are its own), so that the state flows
        through the loop as it does in a written one; None where it is not that."""
        v = s.value
        if not (len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) and
                isinstance(v, gast.ListComp) and len(v.generators) == 1) or \
                self.nested or self.in_def or self.no_hoist:
            return None
        gen = v.generators[0]
        if isinstance(self.peek(gen.iter), (VObj, VList)):
            return None  # (over objects: unrolled where it stands)
        calls_object = any(
            isinstance(n, gast.Call) and isinstance(self.peek(
                n.func.value if isinstance(n.func, gast.Attribute) else n.func), VObj)
            for n in gast.walk(v.elt) if isinstance(n, gast.Call))
        if not calls_object:
            return None
        renames = {n.id: fresh(n.id, self.o.taken) for n in gast.walk(gen.target)
                   if isinstance(n, gast.Name)}
        parts = [copy.deepcopy(x) for x in (gen.target, v.elt, *gen.ifs)]
        for part in parts:
            for n in gast.walk(part):
                if isinstance(n, gast.Name) and n.id in renames:
                    n.id = renames[n.id]
        target, elt, ifs = parts[0], parts[1], parts[2:]
        name = s.targets[0].id
        append = gast.Expr(value=gast.Call(func=gast.Attribute(
            value=_name(name), attr="append", ctx=gast.Load()), args=[elt], keywords=[]))
        body = [append]
        for cond in reversed(ifs):
            body = [gast.If(test=cond, body=body, orelse=[])]
        loop = gast.For(target=target, iter=gen.iter, body=body, orelse=[], type_comment=None)
        start = _assign([_name(name, store=True)], gast.List(elts=[], ctx=gast.Load()), s)
        out = [start, gast.copy_location(loop, s)]
        for st in out:
            for n in gast.walk(st):
                if isinstance(n, (gast.expr, gast.stmt)) and getattr(n, "lineno", None) is None:
                    gast.copy_location(n, s)
        return out

    def _setter_of(self, t):
        """(the object, the class defining it, the setter) where `t` is `obj.attr` of a built
        object whose class makes `attr` a property with a setter; else None."""
        if not isinstance(t, gast.Attribute):
            return None
        o = self.peek(t.value)
        if not isinstance(o, VObj) or t.attr in o.attrs:
            return None
        owner, raw = class_attribute(o.cls, t.attr)
        if not isinstance(raw, property) or not isinstance(raw.fset, types.FunctionType):
            return None
        guards.note_attr(o.cls, t.attr, getattr(o.cls, t.attr))
        return o, owner, raw.fset

    def _factory(self, obj) -> bool:
        """Is `obj` a classmethod of a user class, bound to it, that builds `cls(...)`?"""
        if not (inspect.ismethod(obj) and isinstance(obj.__self__, type) and
                _is_user_class(obj.__self__, self.o.globals) and
                _user_function(obj.__func__, self.o.globals)):
            return False
        try:
            fdef = parse_function(obj.__func__).tree
        except Exception:  # noqa: BLE001  (no source: not followed)
            return False
        if not fdef.args.args:
            return False
        first = fdef.args.args[0].id
        return any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
                   n.func.id == first for n in _walk_own(fdef))

    def _attr_name(self, e) -> str:
        """The attribute a `getattr` / `hasattr` / `setattr` names: a string known here
        (`"W" + str(i)` of an unrolled loop's `i` too)."""
        k = _text_fold(self.value(e), self.scope.locals)
        if not (isinstance(k, gast.Constant) and type(k.value) is str and
                k.value.isidentifier()):
            raise _Unsupported("getattr / hasattr of a built object by a name not known "
                               "before running")
        return k.value

    def _reads_plain_attribute(self, e) -> bool:
        """Is `e` `obj.attr` / `getattr(obj, "attr")` of a built object, an attribute that
        holds no object srcad follows (`.W`, an array)?"""
        if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and \
                e.func.id == "getattr" and e.func.id not in self.scope.locals and \
                len(e.args) == 2 and not e.keywords:
            k = e.args[1]
            if isinstance(k, gast.Name) and k.id in self.consts and not self.in_def:
                k = gast.Constant(value=self.consts[k.id], kind=None)
            if not isinstance(k, gast.Constant):
                return False
            e = gast.Attribute(value=e.args[0], attr=k.value, ctx=gast.Load())
        if not isinstance(e, gast.Attribute) or not isinstance(e.attr, str):
            return False
        o = self.peek(e.value)
        return isinstance(o, VObj) and o.built and e.attr in o.attrs and \
            e.attr not in o.objects and e.attr not in o.funcs

    def _list_instance(self, held: VList, e):
        """``isinstance(v, (list, tuple))`` of a list, tuple or dict of built objects (a
        module walking its attributes: ``elif isinstance(v, (list, tuple)): for m in v``):
        what Python answers, from the container the objects are held in."""
        spec = e.args[1]
        classes = tuple(self.o.resolve_static(c, self.scope) for c in spec.elts) if \
            isinstance(spec, gast.Tuple) else (self.o.resolve_static(spec, self.scope),)
        if len(classes) == 1 and isinstance(classes[0], tuple):
            classes = classes[0]
        if not classes or not all(isinstance(c, type) for c in classes):
            raise _Unsupported("isinstance of a list of built objects against an unknown class")
        python = held.kind if isinstance(held.kind, type) else \
            {"list": list, "tuple": tuple}.get(held.kind)
        if held.keys is not None and not held.pairs:
            python = dict  # (a dict or an OrderedDict: answered where both agree)
            if any(issubclass(c, dict) and c is not dict for c in classes) and \
                    not any(c is dict for c in classes):
                raise _Unsupported("isinstance of a dict of built objects against a subclass "
                                   "of dict")
        if python is None:
            raise _Unsupported(f"isinstance of a {held.kind} of built objects")
        return gast.copy_location(gast.Constant(value=issubclass(python, classes), kind=None), e)

    def _not_built_instance(self, e):
        """``isinstance(other, Tensor)`` of a user class whose objects this pass builds, where
        `other` is no object built here (``other if isinstance(other, Tensor) else
        Tensor(other)`` in a wrapper's ``__add__`` given a number or an array): False --
        exactly, of a constant; else as the check that the code makes before it, ``assert
        not isinstance(other, Tensor)``, so that an instance made elsewhere (an argument, a
        global) stops the call rather than taking the other arm silently."""
        cls = self.o.resolve_static(e.args[1], self.scope)
        if not self._user_classes(cls) or _made_outside(self.o.pf, cls):
            return None  # (an instance the function is given may reach it: left to run)
        arg = self.value(copy.deepcopy(e.args[0]))
        if isinstance(arg, gast.Constant):
            return gast.copy_location(gast.Constant(value=isinstance(arg.value, cls),
                                                    kind=None), e)
        if not isinstance(arg, gast.Name):
            return None
        spelled = ", ".join(c.__name__ for c in (cls if isinstance(cls, tuple) else (cls,)))
        test = gast.Call(func=_name("isinstance"),
                         args=[arg, self.value(copy.deepcopy(e.args[1]))], keywords=[])
        try:
            filename = inspect.getsourcefile(self.klass) if self.klass is not None else None
        except TypeError:
            filename = None
        error = functools.partial(
            UnsupportedSyntaxError,
            f"`{e.args[0].id}` is a {spelled} object made outside the differentiated function "
            f"(an argument, a global): srcad follows only the {spelled} objects the function "
            "builds, and took it here for a plain value",
            filename=filename or self.o.pf.filename, lineno=e.lineno,
            hint=f"build the {spelled} in the differentiated function from arrays passed to it")
        raise_ = gast.Raise(exc=gast.Call(func=_name(self.o.bind(error, "not_followed")),
                                          args=[], keywords=[]), cause=None)
        check = gast.copy_location(gast.If(test=test, body=[raise_], orelse=[]), e)
        self.pre.append(gast.fix_missing_locations(check))
        return gast.copy_location(gast.Constant(value=False, kind=None), e)

    def _user_classes(self, cls) -> bool:
        classes = cls if isinstance(cls, tuple) else (cls,)
        return bool(classes) and all(_is_user_class(c, self.o.globals) for c in classes)

    def _has(self, o: VObj, attr: str):
        """Whether `o` has `attr` here: True, False, or None (not known before running)."""
        if attr in o.objects or attr in o.funcs or attr in o.consts:
            return True
        if attr in o.attrs and o.built:
            # (built here: its __init__ ran, so what its body always assigns is set --
            # `hasattr(layer, "weights")` of a layer built inside a call, `m.add(Dense(..))`)
            return True if attr in o.surely or attr in _set_by_init(o.cls) else \
                None if attr in o.maybe else class_attribute(o.cls, attr)[0] is not None
        if attr in o.attrs:
            return True if attr in _set_by_init(o.cls) else None
        return class_attribute(o.cls, attr)[0] is not None

    def _object_builtin(self, name: str, o: VObj, e):
        """A Python builtin applied to a built object, for what it says of the object (its
        class, a name, an attribute), never of its arrays: `str(type(self.act))` in a
        hyperparameters dict, `getattr(self, "_" + kind)`, `hasattr(layer, "W")`."""
        const = functools.partial(gast.Constant, kind=None)
        if name == "type" and len(e.args) == 1:
            return gast.copy_location(_name(self.o.bind(o.cls, o.cls.__name__)), e)
        if name == "id" and len(e.args) == 1:
            return gast.copy_location(const(value=id(o)), e)
        if name == "callable" and len(e.args) == 1:
            found = class_attribute(o.cls, "__call__")[0]
            return gast.copy_location(const(value=found not in (None, object)), e)
        if name in ("str", "repr") and len(e.args) == 1:
            for dunder in (("__str__", "__repr__") if name == "str" else ("__repr__",)):
                if class_attribute(o.cls, dunder)[0] not in (None, object):
                    return self.dunder(o, dunder, [], e)
            cls = o.cls  # (object.__repr__: the class's name, an address of this object)
            return gast.copy_location(const(
                value=f"<{cls.__module__}.{cls.__qualname__} object at {hex(id(o))}>"), e)
        if name == "len" and len(e.args) == 1:
            if _delegate(o.cls, "__len__") is not None:
                return gast.copy_location(const(value=len(self._delegated(o, "__len__").items)),
                                          e)
            return self.dunder(o, "__len__", [], e)
        if name in ("hasattr", "getattr") and len(e.args) in ((2,) if name == "hasattr"
                                                             else (2, 3)):
            attr = self._attr_name(e.args[1])
            if class_attribute(o.cls, "__getattr__")[0] is not None:
                raise _Unsupported(f"`{name}()` of an object whose class has __getattr__")
            has = self._has(o, attr)
            if name == "hasattr" or (len(e.args) == 3 and has is not True):
                if has is None:
                    raise _Unsupported(f"whether `.{attr}` is set is not known before running")
                if name == "hasattr":
                    return gast.copy_location(const(value=has), e)
                if not has:
                    return self.expr(e.args[2])
            return self.expr(gast.copy_location(gast.Attribute(
                value=e.args[0], attr=attr, ctx=gast.Load()), e))
        raise _Unsupported(f"`{name}()` of a built object with these arguments")

    def peek(self, e):
        """What `e` means here when it is a built object or list, else None (no effect)."""
        saved, plain = list(self.pre), set(self.scope.plain)
        try:
            v = self.expr(copy.deepcopy(e))
        except _Unsupported:
            v = None
        self.pre, self.scope.plain = saved, plain
        return v if isinstance(v, (VObj, VList)) else None

    def _unrolled_reduce(self, e, items: VList):
        """``functools.reduce(lambda h, layer: layer(h), layers, x)`` over a list of built
        objects: the fold Python runs, unrolled -- ``h1 = layers[0](x); h2 = layers[1](h1)``
        (the lambda's body with its parameters bound, or the function called), each step
        its own statement, in order; without an initial value the first object starts it."""
        f, seq = e.args[0], list(items.items)
        params = None
        if isinstance(f, gast.Lambda):
            a = f.args
            if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or \
                    len(a.args) != 2:
                raise _Unsupported("a reduce over objects with this lambda")
            params = [p.id for p in a.args]
            if any(isinstance(n, gast.Name) and n.id in params and
                   not isinstance(n.ctx, gast.Load) for n in gast.walk(f.body)):
                raise _Unsupported("a reduce over objects whose lambda rebinds its parameters")

        def bind(value, hint):
            """A name holding `value` (an object's: its place in the scope)."""
            name = fresh(hint, self.o.taken)
            self.scope.locals.add(name)
            if isinstance(value, (VObj, VList)):
                self.scope.env[name] = value
            else:
                self.pre.append(_assign([_name(name, store=True)], value, e))
                self.scope.plain.add(name)
            return _name(name)

        if len(e.args) == 3:
            acc = bind(self.expr(e.args[2]), "reduced")
        elif seq:
            acc = bind(seq.pop(0), params[1] if params else "item")
        else:
            raise _Unsupported("reduce() of an empty list of objects with no initial value")
        for obj in seq:
            item = bind(obj, params[1] if params else "item")
            if params is not None:
                names = {params[0]: acc, params[1]: item}

                class _Put(gast.NodeTransformer):
                    def visit_Name(self, n):
                        return gast.copy_location(copy.deepcopy(names[n.id]), n) \
                            if n.id in names else n

                step = _Put().visit(copy.deepcopy(f.body))
            else:
                step = gast.Call(func=copy.deepcopy(f), args=[acc, item], keywords=[])
            gast.fix_missing_locations(gast.copy_location(step, e))
            acc = bind(self.expr(step), "reduced")
        return self.expr(acc)

    def _spread(self, e) -> None:
        """``Dense(**spec)`` of a user class whose constructor has a fixed signature, and
        ``layer(x, **cfg)`` / ``layer.forward(x, **cfg)`` of a built object's method (``spec``
        a dict read by a name, an attribute or a constant index -- an item of a module's
        ``ARCH = [dict(n_in=3, n_out=4), ...]`` a loop walks): written out, in place, as
        Python binds it -- each parameter the call leaves to ``**spec`` ``p=spec["p"]``, one
        with a literal default ``p=spec.get("p", default)`` -- after a statement that raises
        Python's TypeError for a key that is no parameter (runtime_python.spread_keywords).
        The dict is read when the call runs, so a changed one is followed; a call this cannot
        settle (two spreads, ``*args``, a callee taking ``**kwargs``, a default that is
        no literal) is left as it is (and refused where it matters)."""
        spreads = [k for k in e.keywords if k.arg is None]
        d = spreads[0].value if len(spreads) == 1 else None
        if d is None or isinstance(d, gast.Dict) or \
                any(isinstance(a, gast.Starred) for a in e.args) or \
                any(isinstance(n, (gast.Call, gast.Lambda, gast.NamedExpr, gast.ListComp,
                                   gast.SetComp, gast.DictComp, gast.GeneratorExp))
                    for n in gast.walk(d)):
            return  # (read once per parameter: an expression with no call of its own)
        target = self._spread_target(e.func)
        if target is None:
            return
        params, label = target
        P = inspect.Parameter
        if any(p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD, P.POSITIONAL_ONLY) for p in params) \
                or len(e.args) > len(params):
            return
        named = {k.arg for k in e.keywords if k.arg is not None}
        bound = {p.name for p in params[:len(e.args)]} | named
        keywords = [k for k in e.keywords if k.arg is not None]
        for p in params:
            if p.name in bound:
                continue
            key = gast.Constant(value=p.name, kind=None)
            if p.default is P.empty:
                value = gast.Subscript(value=copy.deepcopy(d), slice=key, ctx=gast.Load())
            elif p.default is None or type(p.default) in (str, int, float, bool):
                value = gast.Call(func=gast.Attribute(value=copy.deepcopy(d), attr="get",
                                                      ctx=gast.Load()),
                                  args=[key, gast.Constant(value=p.default, kind=None)],
                                  keywords=[])
            else:
                return
            keywords.append(gast.keyword(arg=p.name, value=gast.copy_location(value, d)))
        allowed = tuple(p.name for p in params if p.name not in bound)
        given = tuple(p.name for p in params if p.name in bound)
        check = gast.Call(func=_name(self.o.bind(spread_keywords, "spread_keywords")),
                          args=[copy.deepcopy(d), gast.Constant(value=allowed, kind=None),
                                gast.Constant(value=given, kind=None),
                                gast.Constant(value=label, kind=None)],
                          keywords=[])
        self.pre.append(gast.copy_location(gast.Expr(value=check), e))
        e.keywords = keywords

    def _copied(self, o: VObj, f, e) -> VObj:
        """``copy.copy(optimizer)`` / ``copy.deepcopy(layer)`` of a built object (ML-from-
        scratch gives each layer ``copy.copy(optimizer)``): a new object of its class whose
        attributes' locals start as the original's -- the same values (``copy.copy``: the
        arrays shared, as Python shares them), or their deep copies. Refused where a method
        changes a container the object holds in place (a shallow copy would share it) or
        the object holds other objects (a deep copy would copy them too)."""
        deep = self.o.resolve_static(f, self.scope) is copy.deepcopy
        if not o.built or self.no_hoist or (deep and o.objects) or any(
                isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and
                isinstance(n.func.value, gast.Attribute) and n.func.attr in _MUTATORS or
                isinstance(n, gast.Subscript) and isinstance(n.ctx, (gast.Store, gast.Del))
                for t in (self.o.trees_of(o.cls) or [None]) if t is not None
                for n in gast.walk(t)):
            raise _Unsupported(f"`{'copy.deepcopy' if deep else 'copy.copy'}` of this object")
        n = VObj(cls=o.cls, clsexpr=copy.deepcopy(o.clsexpr), attrs=o.attrs,
                 objects=dict(o.objects), label=self.hint or o.cls.__name__.lower(),
                 consts=dict(o.consts), lengths=dict(o.lengths), funcs=dict(o.funcs),
                 surely=set(o.surely), maybe=set(o.maybe), nones=set(o.nones))
        self.hint = None
        self.scope.made.add(id(n))
        self.scope.objs[id(n)] = n
        for attr in o.attrs:
            value = _name(self.scope.local(o, attr))
            if deep:
                value = gast.Call(func=copy.deepcopy(f), args=[value], keywords=[])
            self.pre.append(_assign([_name(self.scope.local(n, attr), store=True)], value, e))
            self.scope.stored.add((id(n), attr))
        return n

    def _spread_positional(self, e) -> None:
        """``layer.set_parameters(*parameter_set)`` (nnfs's `Model.set_parameters`) and
        ``Lorenz(*params)``: a method of a built object, or the constructor of a user class,
        with a fixed signature (no ``*args``, no defaults) takes
        as many items as it has parameters left, spelled out by index after a check, where
        the call runs, that the sequence has that many (Python's TypeError otherwise)."""
        starred = [i for i, a in enumerate(e.args) if isinstance(a, gast.Starred)]
        if starred != [len(e.args) - 1] or e.keywords or self.in_def or self.no_hoist or \
                not isinstance(e.func, (gast.Attribute, gast.Name)):
            return
        cls = self.o.resolve_static(e.func, self.scope) if isinstance(
            e.func, gast.Name) or self.peek(e.func.value) is None else UNRESOLVED
        if cls is not UNRESOLVED and _is_user_class(cls, self.o.globals):
            # (`Lorenz(*params)`: its __init__'s parameters)
            raw = class_attribute(cls, "__init__")[1]
        elif isinstance(e.func, gast.Attribute):
            base = self.peek(e.func.value)
            if not isinstance(base, VObj) or e.func.attr in base.attrs:
                return
            raw = class_attribute(base.cls, e.func.attr)[1]
        else:
            return
        if not isinstance(raw, types.FunctionType) or \
                not _user_function(raw, self.o.globals):
            return
        spec = inspect.getfullargspec(raw)
        if spec.varargs or spec.defaults or spec.kwonlyargs or spec.varkw:
            return
        n = len(spec.args) - 1 - (len(e.args) - 1)
        seq = e.args[-1].value
        if n < 0 or not isinstance(seq, gast.Name) or seq.id in self.scope.env:
            return
        check = gast.Call(func=_name(self.o.bind(star_count, "star_count")),
                          args=[_name(seq.id), gast.Constant(value=n, kind=None),
                                gast.Constant(value=raw.__qualname__, kind=None)],
                          keywords=[])
        self.pre.append(gast.copy_location(gast.Expr(value=check), e))
        e.args = e.args[:-1] + [gast.copy_location(gast.Subscript(
            value=_name(seq.id), slice=gast.Constant(value=k, kind=None), ctx=gast.Load()),
            seq) for k in range(n)]

    def _spread_target(self, f):
        """(the parameters a call of `f` binds by keyword, the callee's name for Python's
        TypeError) where `f` is a user class or a plain method of a built object (``layer``:
        its class's ``__call__``; ``layer.forward``), else None."""
        obj, attr = None, None
        if isinstance(f, gast.Attribute):
            obj, attr = self.peek(f.value), f.attr
        elif isinstance(f, gast.Name) and f.id in self.scope.env:
            obj, attr = self.scope.env[f.id], "__call__"
        elif isinstance(f, gast.Call):  # (`Dense(W, b)(x, **cfg)`)
            obj, attr = self.peek(f), "__call__"
        if isinstance(obj, VObj):
            if attr in obj.objects or attr in obj.funcs or attr in obj.attrs:
                return None
            owner, raw = class_attribute(obj.cls, attr)
            if owner is None or owner is object or not isinstance(raw, types.FunctionType):
                return None  # (a static or class method, a builtin's slot: left as it is)
            try:
                params = list(inspect.signature(raw).parameters.values())[1:]
            except (TypeError, ValueError):
                return None
            return params, f"{obj.cls.__name__}.{attr}"
        if obj is not None:
            return None
        if isinstance(f, gast.Name) and f.id in self.funcs and f.id in self.scope.locals:
            cls = self.funcs[f.id]  # (a class argument)
        elif isinstance(f, (gast.Name, gast.Attribute, gast.Subscript)):
            cls = _substituted(self.o.resolve_static(f, self.scope))
        else:
            return None
        if cls is UNRESOLVED or not _is_user_class(cls, self.o.globals):
            return None
        try:
            return list(inspect.signature(cls).parameters.values()), f"{cls.__name__}.__init__"
        except (TypeError, ValueError):
            return None

    def _plain_call(self, e, func_done=False):
        if not func_done:
            e.func = self.value(e.func)
        e.args = [self._child(a) for a in e.args]
        for k in e.keywords:
            k.value = self.value(k.value)
        return _fold(e)

    def call_object(self, target, e):
        if isinstance(target, VBound):  # (`f(t, h)` of a parameter given `model.dynamics`)
            guards.note_attr(target.obj.cls, target.attr, getattr(target.obj.cls, target.attr))
            return self.method(target.obj, target.owner, target.raw, target.attr, e)
        if not isinstance(target, VObj):
            raise _Unsupported("calling a list of objects")
        owner, raw = class_attribute(target.cls, "__call__")
        if owner is None or owner is object:
            raise _Unsupported("calling an object without __call__")
        guards.note_attr(target.cls, "__call__", target.cls.__call__)
        return self.method(target, owner, raw, "__call__", e)

    def method(self, o: VObj, owner, raw, attr: str, e):
        if isinstance(raw, (staticmethod, classmethod)):
            func = gast.Attribute(value=copy.deepcopy(o.clsexpr), attr=attr, ctx=gast.Load())
            e.func = gast.copy_location(func, e.func)
            return self._plain_call(e, func_done=True)
        if not isinstance(raw, types.FunctionType) or not _user_function(raw, self.o.globals):
            raise _Unsupported(f"`.{attr}` is not a method srcad can follow")
        args, kwargs = self.call_values(e)
        return self.specialise(raw, o, owner, args, kwargs, e)

    def call_values(self, e):
        """The arguments of a call of a user function or method srcad follows: a built
        object's method among them is a `VBound`."""
        def one(a):  # (only an argument that is a name or an attribute itself)
            self.bound_ok, outer = isinstance(a, (gast.Name, gast.Attribute)), self.bound_ok
            try:
                return self.expr(a)
            finally:
                self.bound_ok = outer
        return [one(a) for a in e.args], [(k.arg, one(k.value)) for k in e.keywords]

    def construct(self, cls, f, e):
        if self.no_hoist:
            raise _Unsupported("an object built inside a lazily evaluated expression")
        marker = _container_marker(cls)
        if marker is not None and len(e.args) <= 1 and not e.keywords:
            # `ModuleList([Dense(W1), Dense(W2)])` of `class ModuleList(list): pass`: the
            # same list of built objects, an instance of the class for `isinstance`
            held = self.expr(e.args[0]) if e.args else VList([])
            if isinstance(held, VList) and held.keys is None and not held.pairs:
                guards.note_attr(cls, "__init__", cls.__init__)
                return VList(list(held.items), kind=cls)
        if marker is not None:
            raise _Unsupported(f"a {cls.__name__} ({marker.__name__}) made of other than a "
                               f"list of built objects")
        args = [self.expr(a) for a in e.args]
        kwargs = [(k.arg, self.expr(k.value)) for k in e.keywords]
        fields = _fields(cls, self.o.bind) if _dataclass_init(cls) else \
            _namedtuple_fields(cls, self.o.bind) if _namedtuple_with_methods(cls) else None
        attrs = _state_attrs(cls)
        if fields is not None:
            attrs = tuple(n for n, _ in fields) + tuple(a for a in attrs
                                                        if a not in dict(fields))
        o = VObj(cls=cls, clsexpr=self._class_spelling(f), attrs=attrs)
        self.scope.made.add(id(o))
        self.scope.objs[id(o)] = o
        prefix = self.hint or cls.__name__.lower()
        o.label = prefix
        self.hint = None
        inits = []
        for attr in o.attrs:
            name = self.scope.local(o, attr, prefix)
            self.scope.stored.add((id(o), attr))
            if hasattr(cls, attr) and not isinstance(inspect.getattr_static(cls, attr, None),
                                                     functools.cached_property):
                # (an instance attribute shadowing a class attribute)
                value = gast.Attribute(value=copy.deepcopy(o.clsexpr), attr=attr,
                                       ctx=gast.Load())
            else:
                value = gast.Constant(value=None, kind=None)
            inits.append(_assign([_name(name, store=True)], value, e))
        self.pre.extend(inits)
        if fields is not None:  # @dataclass: each field from its argument or its default
            if len(args) > len(fields):
                raise _Unsupported(f"too many arguments to {cls.__name__}")
            given = dict(zip([n for n, _ in fields], args))
            for k, v in kwargs:
                if k in given or k not in dict(fields):
                    raise _Unsupported(f"argument `{k}` of {cls.__name__}")
                given[k] = v
            for fname, default in fields:
                o.surely.add(fname)
                o.maybe.add(fname)
                o.note(fname)
                value = given.get(fname, default)
                if value is None:
                    raise _Unsupported(f"{cls.__name__} is missing `{fname}`")
                if fname in given and not isinstance(value, (VObj, VList)) and \
                        not _fresh(value, 0) and self.o.container_depth(cls, fname) is not None:
                    # (its in-place changes are written as new lists: one the caller may
                    # still hold under its own name would not see them)
                    raise _Unsupported(f"the list given as `{fname}` to {cls.__name__} is "
                                       f"changed in place, and may have another name")
                if isinstance(value, (VObj, VList)):
                    o.objects[fname] = value
                    continue
                self.pre.append(_assign([_name(self.scope.local(o, fname), store=True)],
                                        value, e))
                held = self._static_callable(value)
                if held is not UNRESOLVED and not self.nested and \
                        fname not in _changed_attrs(cls):  # (`hidden_act=partial(..)`)
                    o.funcs[fname] = held
            post = class_attribute(cls, "__post_init__")
            if post[0] is not None:
                self.specialise(post[1], o, post[0], [], [], e)
            return o
        owner, init = class_attribute(cls, "__init__")
        if owner is object:
            if args or kwargs:
                raise _Unsupported("arguments to a class without __init__")
            return o
        guards.note_attr(cls, "__init__", cls.__init__)
        self.o.given_lists_checked(cls, args, kwargs)
        self.specialise(init, o, owner, args, kwargs, e)
        return o

    def _class_spelling(self, f):
        """The class's spelling for reads of its attributes: as the call spelled it."""
        spelled = copy.deepcopy(f)
        for n in gast.walk(spelled):
            if isinstance(n, gast.Name):
                if n.id in self.scope.env:
                    raise _Unsupported("a class reached through a built object")
        return spelled

    # -- specialisation ----------------------------------------------------------------------
    def specialise(self, fn, me: VObj | None, owner, args, kwargs, e):
        """Call `fn` (a method of `me`, or a function given built objects) as a nested
        function specialised to the objects it receives; returns the result's name."""
        lazy = self.no_hoist > 0  # (after `and`, in `x if c else y`: called there, or not)
        if self.depth >= _MAX_DEPTH:
            raise _Unsupported("methods nested too deep (recursion?)")
        try:
            pfm = parse_function(fn)
        except Exception as err:  # noqa: BLE001
            raise _Unsupported(f"cannot read {fn.__qualname__}") from err
        fdef = pfm.tree
        if inspect.isgeneratorfunction(fn):  # (`def parameters(self): ... yield v`)
            _generator_as_list(fdef, self.o.taken)
        self.o.followed.append(copy.deepcopy(fdef))
        if in_substitute(pfm.filename):  # (np.poly1d's stand-in: its lines are the call's)
            _relocate(fdef, e, self.o.line)
        if fn.__globals__ is not self.o.globals:
            self.o.localise(fdef, fn)
        a = fdef.args
        if a.vararg is not None and a.kwarg is not None and pfm.vararg is None:
            # `def __init__(self, W, *args, **kwargs)`: the extra positional arguments a
            # tuple parameter (below), the extra keywords a dict one
            pfm.vararg = _star_as_tuple(fdef, with_kwarg=True)
        if a.vararg is not None or a.kwonlyargs or a.posonlyargs or (
                a.kwarg is not None and not isinstance(a.kwarg, gast.Name)):
            raise _Unsupported(f"{fn.__qualname__} has a signature srcad cannot specialise")
        params = [p.id for p in a.args]
        kwarg_name = a.kwarg.id if a.kwarg is not None else None
        if a.kwarg is not None:  # `def __init__(self, W, **options)`: a dict of the rest
            named = set(params)
            extra = [(k, v) for k, v in kwargs if k not in named]
            if any(k is None or isinstance(v, (VObj, VList, VTuple)) for k, v in extra):
                raise _Unsupported(f"{fn.__qualname__}'s **{a.kwarg.id} given objects")
            kwargs = [(k, v) for k, v in kwargs if k in named] + [(a.kwarg.id, gast.Dict(
                keys=[gast.Constant(value=k, kind=None) for k, _ in extra],
                values=[v for _, v in extra]))]
            params.append(a.kwarg.id)
            a.args.append(a.kwarg)
            fdef.srcad_varkw = a.kwarg.id  # (a dict of its own per call: pylower.dict_pop)
            a.kwarg = None
        try:
            sig = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            raise _Unsupported(f"no signature for {fn.__qualname__}") from None
        defaults = {p: _default_ast(sig[p].default, self.o, p) for p in params
                    if p in sig and sig[p].default is not inspect.Parameter.empty}
        if me is not None:
            if not params:
                raise _Unsupported("a method without self")
            self_name, params = params[0], params[1:]
        star = star_objects = None
        if pfm.vararg is not None and args[params.index(pfm.vararg):] and all(
                isinstance(v, VObj) for v in args[params.index(pfm.vararg):]):
            # `Sequential(Dense(..), ReLU(), Dense(..))` into `def __init__(self, *layers)`:
            # the extra arguments are built objects, a fixed list of them
            fixed = params.index(pfm.vararg)
            star_objects = VList(list(args[fixed:]), kind="tuple")
            args = args[:fixed]
            params = [p for p in params if p != pfm.vararg]
        elif pfm.vararg is not None:  # `def __call__(self, *args)`: one parameter an item
            fixed = params.index(pfm.vararg)
            extra, args = args[fixed:], args[:fixed]
            if any(isinstance(v, (VObj, VList, VTuple)) for v in extra):
                raise _Unsupported("an object passed through *args with other values")
            taken = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)}
            star = [fresh(f"{pfm.vararg}_{i}", taken) for i in range(len(extra))]
            params = [p for p in params if p != pfm.vararg]
            params = params[:fixed] + star + params[fixed:]
            args = list(args) + list(extra)
        if len(args) > len(params):
            raise _Unsupported(f"too many arguments to {fn.__qualname__}")
        bound = dict(zip(params, args))
        for k, v in kwargs:
            if k not in params or k in bound:
                raise _Unsupported(f"argument `{k}` of {fn.__qualname__}")
            bound[k] = v
        for p in params:
            if p not in bound and p not in defaults:
                raise _Unsupported(f"{fn.__qualname__} is missing `{p}`")
        statics = {p: v for p, v in bound.items() if isinstance(v, (VObj, VList, VBound))}
        if star_objects is not None:
            statics[pfm.vararg] = star_objects
        # the callee's scope
        body_names = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)}
        inner = _Scope(set(body_names) | {fdef.name}, _locals_of(fdef))
        inner.fresh_in = self.scope.stored | self.scope.fresh_in
        if me is not None:
            inner.env[self_name] = me
        inner.env.update(statics)
        # (`s = self.saved; s["x"] = x` changes the object's dict)
        container_aliases(fdef, lambda name: isinstance(inner.env.get(name), VObj))
        if star is not None:
            inner.env[pfm.vararg] = VTuple([_name(n) for n in star])
        reach = _reachable(([me] if me is not None else []) + list(statics.values()))
        for obj in reach:
            inner.objs[id(obj)] = obj
        sub = _Rewriter(self.o, inner, self.depth + 1, klass=owner, me=me)
        sub.scope = inner
        sub.outer_nested = self.nested + self.outer_nested
        inner.watch(fdef)
        given = list(bound.items()) + [(p, defaults[p]) for p in params
                                       if p not in bound and p in defaults]
        fixed_fns: set = set()
        for p, v in given:  # what the call site knows of its arguments, the method knows
            if p in statics or p in inner.unsafe or not isinstance(v, gast.AST):
                continue
            if isinstance(v, gast.Constant) and type(v.value) in _CONST_TYPES:
                sub.consts[p] = v.value
                continue
            if isinstance(v, gast.Dict) and a.kwarg is None and p == kwarg_name and all(
                    isinstance(k, gast.Constant) and type(k.value) is str for k in v.keys) \
                    and p not in inner.mutated and not any(
                        isinstance(n, gast.Name) and n.id == p and isinstance(
                            n.ctx, (gast.Store, gast.Del)) for n in gast.walk(fdef)):
                sub.kwdicts[p] = v
                continue
            if isinstance(v, gast.Name) and self.scope is self.o.top and \
                    type(self.o.pf.known.get(v.id)) is str and v.id not in self.scope.env and \
                    v.id not in _stored_names(self.o.pf.tree.body):
                # (`Chooses(W, act)` given the string argument the code is specialised on)
                sub.consts[p] = self.o.pf.known[v.id]
                continue
            held = self._static_callable(v)
            if held is UNRESOLVED:
                # (`Net(loss=CrossEntropy)` and `self.loss_function = loss()`: a class of
                # the user's given as an argument, built where the method calls it)
                held = self._static_class(v)
            if held is not UNRESOLVED and not any(
                    isinstance(n, gast.Name) and n.id == p and isinstance(n.ctx, (
                        gast.Store, gast.Del)) for n in gast.walk(fdef)):
                # (`Dense(W, b, act=np.tanh)`: the method reads it as that callable, and it
                # is not passed: a function is no value srcad passes)
                sub.funcs[p] = held
                fixed_fns.add(p)
                continue
            n = self._static_len(v, module=True)
            if p in inner.mutated:  # (the method changes the list: its length is unknown)
                if isinstance(v, gast.Name):
                    self.scope.lengths.pop(v.id, None)
            elif n is not UNRESOLVED:
                inner.lengths[p] = n
        returns = [n for n in _walk_own(fdef) if isinstance(n, gast.Return)]
        if len(returns) == 1 and fdef.body and returns[0] is fdef.body[-1]:
            sub.object_return = returns[0]
        elif len(returns) > 1:
            sub.object_return = _ANY_RETURN
        hint = self.hint
        line = self.o.line
        body = sub.block(fdef.body)
        self.o.line = line
        returned = sub.returned  # (an object the method built and returns: the call's value)
        if returned is not None and sub.nested_return:
            raise _Unsupported("an object returned on one path, another value on another")
        if returned is not None and hint and id(returned) in inner.made:
            returned.label = hint
        # the state it reads (parameters) and the state it assigns (returned after the result)
        reach_after = _reachable(([me] if me is not None else []) + list(statics.values()) +
                                 ([returned] if returned is not None else []))
        state_out = []
        for obj in reach_after:
            for attr in obj.attrs:
                key = (id(obj), attr)
                if key in inner.stored and key in inner.names:
                    state_out.append((key, inner.names[key]))
        body = _with_state_returns(body, [n for _, n in state_out], fdef,
                                   init=me is not None and fn.__name__ == "__init__")
        # (an attribute the method sets before any read of it is not passed in; a return
        # before the store gives back the value it had: `if not train: return x`)
        probe = types.SimpleNamespace(body=body)
        state_in = [(key, name) for key, name in inner.entry.items()
                    if _may_read_before_store(probe, name)]
        for obj in reach_after:  # objects it built and attached: their state was set there
            self.scope.objs[id(obj)] = obj
            if id(obj) in inner.made:
                self.scope.made.add(id(obj))
        if lazy and (state_out or returned is not None):
            raise _Unsupported("a method that changes the object called inside a lazily "
                               "evaluated expression")
        label = f"{me.label}_{fn.__name__.strip('_')}" if me is not None else fn.__name__
        new_name = fresh(label, self.o.taken)
        rest = [p for p in params if p not in statics and p not in fixed_fns]
        fdef.name = new_name
        fdef.body = body
        pargs = [_param(n, fdef) for _, n in state_in] + [_param(p, fdef) for p in rest]
        fdef.args = gast.arguments(args=pargs, posonlyargs=[], vararg=None, kwonlyargs=[],
                                   kw_defaults=[], kwarg=None, defaults=[])
        self.o.defs.append(fdef)
        # the call site
        call_args = []
        for key, _ in state_in:
            obj = self.scope.objs.get(key[0]) or inner.objs[key[0]]
            call_args.append(_name(self.scope.local(obj, key[1])))
        keywords = [gast.keyword(arg=p, value=bound[p] if p in bound else
                                 copy.deepcopy(defaults[p])) for p in rest]
        call = gast.copy_location(gast.Call(func=_name(new_name), args=call_args,
                                            keywords=keywords), e)
        if lazy:  # (changing nothing: called where Python calls it, if it does)
            return call
        for name in (self.calls[-1] if self.calls else self.read_now):
            if any(self.scope.local(self.scope.objs[k[0]], k[1]) == name for k, _ in state_out
                   if k[0] in self.scope.objs):
                raise _Unsupported("a statement reads an attribute a later call changes")
        init = me is not None and fn.__name__ == "__init__"
        result = fresh(f"{label}_out", self.scope.taken)
        targets = [] if init else [_name(result, store=True)]
        for key, _ in state_out:
            obj = self.scope.objs.get(key[0]) or inner.objs[key[0]]
            targets.append(_name(self.scope.local(obj, key[1]), store=True))
            self.scope.stored.add(key)
        if targets:
            self.pre.append(_assign(targets, call, e))
        else:
            self.pre.append(gast.copy_location(gast.Expr(value=call), e))
        if returned is not None:
            return returned
        return gast.copy_location(_name(result), e)


_COMPARE_OPS = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
                gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
                gast.Is: operator.is_, gast.IsNot: operator.is_not}


def _fold(e):
    """`3 - 1`, `-1`, `f"fc{2}"` of constants: the constant (else `e` as it is)."""
    if isinstance(e, gast.BinOp) and isinstance(e.left, gast.Constant) and \
            isinstance(e.right, gast.Constant) and type(e.op) in _FOLD_OPS:
        a, b = e.left.value, e.right.value
        numbers = all(type(v) in (int, float) for v in (a, b))
        strings = isinstance(e.op, gast.Add) and all(type(v) is str for v in (a, b))
        if numbers or strings:
            try:
                return gast.copy_location(gast.Constant(
                    value=_FOLD_OPS[type(e.op)](a, b), kind=None), e)
            except ArithmeticError:
                return e
    if isinstance(e, gast.UnaryOp) and isinstance(e.operand, gast.Constant) and \
            type(e.operand.value) in (int, float) and isinstance(e.op, (gast.USub, gast.UAdd)):
        v = e.operand.value
        return gast.copy_location(gast.Constant(
            value=-v if isinstance(e.op, gast.USub) else v, kind=None), e)
    if isinstance(e, gast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in _COMPARE_OPS and \
            isinstance(e.left, gast.Constant) and isinstance(e.comparators[0], gast.Constant) \
            and all(v is None or type(v) in (int, bool, str)
                    for v in (e.left.value, e.comparators[0].value)) and \
            (not isinstance(e.ops[0], (gast.Is, gast.IsNot)) or
             None in (e.left.value, e.comparators[0].value)):
        try:  # (`i == 2` of a method's constant argument: a recursion's end, known here)
            return gast.copy_location(gast.Constant(value=bool(_COMPARE_OPS[type(e.ops[0])](
                e.left.value, e.comparators[0].value)), kind=None), e)
        except TypeError:
            return e
    if isinstance(e, gast.Compare) and len(e.ops) == 1 and \
            isinstance(e.ops[0], (gast.In, gast.NotIn)) and \
            isinstance(e.left, gast.Constant) and isinstance(e.comparators[0], gast.Constant) \
            and type(e.left.value) is str and type(e.comparators[0].value) is str:
        # (`elif "leaky relu" in act_str:` of a known name)
        found = e.left.value in e.comparators[0].value
        return gast.copy_location(gast.Constant(
            value=found if isinstance(e.ops[0], gast.In) else not found, kind=None), e)
    if isinstance(e, gast.Call) and isinstance(e.func, gast.Attribute) and \
            isinstance(e.func.value, gast.Constant) and type(e.func.value.value) is str and \
            e.func.attr in _STR_FOLDS and not e.args and not e.keywords:
        # (`act_str = act_str.lower()` of a known name: a factory's `if act_str == "relu"`)
        return gast.copy_location(gast.Constant(
            value=getattr(e.func.value.value, e.func.attr)(), kind=None), e)
    if isinstance(e, gast.JoinedStr):
        parts = []
        for v in e.values:
            if isinstance(v, gast.Constant) and type(v.value) is str:
                parts.append(v.value)
            elif isinstance(v, gast.FormattedValue) and v.conversion in (-1, None) and \
                    v.format_spec is None and isinstance(v.value, gast.Constant) and \
                    type(v.value.value) in (str, int):
                parts.append(str(v.value.value))
            else:
                return e
        return gast.copy_location(gast.Constant(value="".join(parts), kind=None), e)
    return e


def _appends_of_a_parameter(fdef, attr: str, init: bool):
    """The positions of the parameters a method appends to `self.<attr>` (`self.layers.
    append(layer)`), or None where it changes or rebinds `self.<attr>` otherwise (__init__'s
    own `self.<attr> = []` aside)."""
    params = [a.id for a in fdef.args.args]
    if not params:
        return set()
    me = params[0]

    def mine(e):
        return isinstance(e, gast.Attribute) and e.attr == attr and \
            isinstance(e.value, gast.Name) and e.value.id == me

    found = set()
    for n in gast.walk(fdef):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                mine(n.func.value) and n.func.attr in _MUTATORS:
            a = n.args[0] if len(n.args) == 1 and not n.keywords else None
            if n.func.attr != "append" or not isinstance(a, gast.Name) or \
                    a.id not in params[1:] or any(
                        isinstance(x, gast.Name) and x.id == a.id and
                        isinstance(x.ctx, (gast.Store, gast.Del)) for x in gast.walk(fdef)):
                return None
            found.add(params.index(a.id))
        elif isinstance(n, gast.Subscript) and isinstance(n.ctx, (gast.Store, gast.Del)) and \
                mine(n.value):
            return None
        elif mine(n) and isinstance(n.ctx, (gast.Store, gast.Del)) and not init:
            return None
    return found


def _generator_as_list(fdef, taken: set) -> None:
    """A generator method of a built object (`def parameters(self): for name in
    sorted(vars(self)): ... yield v ... yield from v.parameters()`) as a method that returns
    the list of the values it yields: ``yield v`` is ``acc.append(v)``, ``yield from it``
    ``acc.extend(it)``, a ``return`` returns the list. Run whole before its consumer, which
    no one can tell from the generator where it has no effects and always ends (else
    refused)."""
    if any(isinstance(n, gast.While) for n in gast.walk(fdef)) or _effects(fdef.body):
        raise _Unsupported("a generator method with a `while` loop or effects of its own")
    acc = fresh("yielded", taken)

    def put(method, value, at):
        call = gast.Call(func=gast.Attribute(value=_name(acc), attr=method, ctx=gast.Load()),
                         args=[value], keywords=[])
        return gast.copy_location(gast.Expr(value=call), at)

    def block(stmts):
        out = []
        for st in stmts:
            if isinstance(st, (gast.FunctionDef, gast.ClassDef)):
                out.append(st)
            elif isinstance(st, gast.Expr) and isinstance(st.value, gast.Yield):
                out.append(put("append", st.value.value or gast.Constant(None, None), st))
            elif isinstance(st, gast.Expr) and isinstance(st.value, gast.YieldFrom):
                out.append(put("extend", st.value.value, st))
            elif isinstance(st, gast.Return):
                out.append(gast.copy_location(gast.Return(value=_name(acc)), st))
            else:
                for f in ("body", "orelse"):
                    if isinstance(getattr(st, f, None), list):
                        setattr(st, f, block(getattr(st, f)))
                out.append(st)
        return out

    body = block(fdef.body)
    if any(isinstance(n, (gast.Yield, gast.YieldFrom)) for st in body for n in gast.walk(st)):
        raise _Unsupported("`yield` used as a value in a generator method")
    init = gast.copy_location(gast.Assign(targets=[_name(acc, True)], value=gast.List(
        elts=[], ctx=gast.Load()), type_comment=None), fdef.body[0])
    fdef.body = [init] + body + [gast.copy_location(gast.Return(value=_name(acc)),
                                                    fdef.body[-1])]
    gast.fix_missing_locations(fdef)


def _text_fold(e, local: set):
    """`"W" + str(0)` (constants joined by `+`, `str()` of a constant int) as the constant
    string it is; anything else as it is."""
    def fold(n):
        if isinstance(n, gast.Constant) and type(n.value) in (str, int):
            return n.value
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == "str" \
                and "str" not in local and len(n.args) == 1 and not n.keywords:
            v = fold(n.args[0])
            return str(v) if type(v) in (str, int) else None
        if isinstance(n, gast.BinOp) and isinstance(n.op, gast.Add):
            a, b = fold(n.left), fold(n.right)
            return a + b if type(a) is str and type(b) is str else None
        return None
    v = fold(e)
    return gast.copy_location(gast.Constant(value=v, kind=None), e) if type(v) is str else e


def _effects(stmts) -> bool:
    """A call made for its effect (not a yield) or a write to an attribute or a global."""
    for n in (x for st in stmts for x in gast.walk(st)):
        if isinstance(n, gast.Expr) and isinstance(n.value, gast.Call):
            return True
        if isinstance(n, (gast.Global, gast.Nonlocal)):
            return True
        if isinstance(n, (gast.Assign, gast.AugAssign)):
            targets = n.targets if isinstance(n, gast.Assign) else [n.target]
            if any(isinstance(t, (gast.Attribute, gast.Subscript)) for t in targets):
                return True
    return False


def _bindings(target, item) -> list:
    """(target, value) pairs binding a loop's target to one item: `i, W` to `(0, Ws[0])`
    pair by pair; any other target to the item whole."""
    if isinstance(target, (gast.Tuple, gast.List)) and isinstance(item, gast.Tuple) and \
            len(target.elts) == len(item.elts) and \
            not any(isinstance(t, gast.Starred) for t in target.elts):
        return [p for t, v in zip(target.elts, item.elts) for p in _bindings(t, v)]
    return [(target, item)]


def _stored_names(stmts) -> set:
    """The names `stmts` assign, delete or change through a list method / an index store."""
    out = {n.id for b in stmts for n in gast.walk(b)
           if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))}
    return out | mutated_names(stmts)


def mutated_names(stmts) -> set:
    """Names whose list `stmts` may change in place: `xs.append(..)`, `xs[i] = ..`,
    `del xs[i]`, `xs += ..` (a method given the list: see `specialise`)."""
    out = set()
    for n in (x for b in stmts for x in gast.walk(b)):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                isinstance(n.func.value, gast.Name) and n.func.attr in _MUTATORS:
            out.add(n.func.value.id)
        elif isinstance(n, gast.Subscript) and isinstance(n.ctx, (gast.Store, gast.Del)) and \
                isinstance(n.value, gast.Name):
            out.add(n.value.id)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            out.add(n.target.id)
    return out


def _delegate(cls, dunder: str):
    """The attribute `cls`'s `dunder` hands the operation to, when its body says only that:
    `__iter__`: `return iter(self.layers)`, `yield from self.layers`, `for l in self.layers:
    yield l`; `__len__`: `return len(self.layers)`; `__getitem__`: `return self.layers[i]`
    (the index its parameter). Else None."""
    owner, raw = class_attribute(cls, dunder)
    if not isinstance(raw, types.FunctionType) or owner is object or \
            library_file(raw) is not None:
        return None
    try:
        fdef = parse_function(raw).tree
    except Exception:  # noqa: BLE001  (no source)
        return None
    params = [a.id for a in fdef.args.args]
    body = [s for s in fdef.body if not (isinstance(s, gast.Expr) and
                                         isinstance(s.value, gast.Constant))]
    if len(body) != 1 or not params:
        return None
    me, (s,) = params[0], body

    def mine(e):
        return e.attr if isinstance(e, gast.Attribute) and isinstance(e.value, gast.Name) \
            and e.value.id == me else None

    def call_of(e, name):
        return mine(e.args[0]) if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) \
            and e.func.id == name and len(e.args) == 1 and not e.keywords else None

    if dunder == "__iter__":
        if isinstance(s, gast.Return):
            return call_of(s.value, "iter")
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.YieldFrom):
            return mine(s.value.value)
        if isinstance(s, gast.For) and isinstance(s.target, gast.Name) and not s.orelse and \
                len(s.body) == 1 and isinstance(s.body[0], gast.Expr) and \
                isinstance(s.body[0].value, gast.Yield) and \
                isinstance(s.body[0].value.value, gast.Name) and \
                s.body[0].value.value.id == s.target.id:
            return mine(s.iter)
        return None
    if dunder == "__len__" and isinstance(s, gast.Return):
        return call_of(s.value, "len")
    if dunder == "__getitem__" and isinstance(s, gast.Return) and len(params) == 2 and \
            isinstance(s.value, gast.Subscript) and isinstance(s.value.slice, gast.Name) and \
            s.value.slice.id == params[1]:
        return mine(s.value.value)
    return None


def delegated_sequence(obj, dunder: str):
    """(attr, value): the list or tuple (for `__getitem__` also a dict) that the user object
    `obj`, known when normalising, hands `dunder` to -- `__iter__`, `__len__` or
    `__getitem__` whose body only says so (`_delegate`: ``return iter(self.layers)``,
    ``return self.params[key]``) -- so that ``for l in net``, ``len(net)`` and ``net[0]``
    read what ``net.layers`` does; each lookup guarded (the method, the attribute). Else
    None."""
    if not is_user_object(obj) or isinstance(obj, type):
        return None
    attr = _delegate(type(obj), dunder)
    if attr is None:
        return None
    held = getattr(obj, attr, guards.MISSING)
    kinds = (list, tuple, dict) if dunder == "__getitem__" else (list, tuple)
    if type(held) not in kinds:
        return None
    guards.note_attr(type(obj), dunder, getattr(type(obj), dunder))
    guards.note_attr(obj, attr, held)
    return attr, held


def _parents(tree) -> dict:
    out = {}
    for n in gast.walk(tree):
        for c in gast.iter_child_nodes(n):
            out[id(c)] = n
    return out


def _chain(n, parents):
    """(the outermost of `n[..][..]` loads, how many subscripts it adds)."""
    depth = 0
    while True:
        p = parents.get(id(n))
        if isinstance(p, gast.Subscript) and p.value is n and isinstance(p.ctx, gast.Load):
            n, depth = p, depth + 1
        else:
            return n, depth


def _fresh(e, k: int) -> bool:
    """Is `e` a new container down to `k` levels of items (`[]`, `{"Z": [], "A": []}`,
    `self.cache + [Z]`)? k < 0: any value."""
    if k < 0 or isinstance(e, gast.Constant):  # (a number, a string: never changed)
        return True
    if isinstance(e, (gast.List, gast.Tuple)):
        return all(_fresh(x, k - 1) for x in e.elts)
    if isinstance(e, gast.Dict):
        return None not in e.keys and all(_fresh(x, k - 1) for x in e.values)
    if isinstance(e, gast.ListComp):
        return _fresh(e.elt, k - 1)
    if isinstance(e, gast.DictComp):
        return _fresh(e.value, k - 1)
    if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and \
            e.func.id in ("list", "dict") and not e.keywords and \
            (not e.args or (k == 0 and len(e.args) == 1)):
        return True
    if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Add) and k == 0:
        return any(isinstance(x, (gast.List, gast.ListComp)) for x in (e.left, e.right))
    return False


def _given_or_fresh(e, fdef) -> set | None:
    """The parameters of `fdef` (an `__init__`) that value `e` may be, where every other
    value it may be is a new list: ``layers``, ``layers or []``, ``[] if layers is None else
    layers``, ``layers if layers is not None else list()`` -- where each statement of
    `fdef` rebinding such a parameter gives it a new list (``if layers is None: layers =
    []``); else None. Whether the caller gives a new list is `construct`'s check."""
    if fdef is None or fdef.name != "__init__":
        return None
    params = {a.id for a in fdef.args.args[1:] + fdef.args.kwonlyargs}
    out, todo = set(), [e]
    while todo:
        v = todo.pop()
        if isinstance(v, gast.BoolOp) and isinstance(v.op, gast.Or):
            todo.extend(v.values)
        elif isinstance(v, gast.IfExp):
            todo.extend([v.body, v.orelse])
        elif isinstance(v, gast.Name) and v.id in params:
            out.add(v.id)
        elif not _fresh(v, 0) or isinstance(v, gast.Constant):
            return None
    for n in gast.walk(fdef):
        if isinstance(n, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            targets = n.targets if isinstance(n, gast.Assign) else [n.target]
            if any(isinstance(t, gast.Name) and t.id in out for tt in targets
                   for t in gast.walk(tt)) and not (
                    isinstance(n, gast.Assign) and _fresh(n.value, 0) and
                    not isinstance(n.value, gast.Constant)):
                return None
        elif isinstance(n, (gast.For, gast.With, gast.NamedExpr)) and any(
                isinstance(t, gast.Name) and t.id in out for t in gast.walk(n)
                if isinstance(t, gast.Name) and isinstance(t.ctx, gast.Store)):
            return None
    return out or None


def _container_depth(trees, attr: str, modules: set, given: set | None = None):
    """How deep the lists held in attribute `attr` are changed in place by statements of
    `trees` (0: `self.cache.append(..)`, 1: `self.derived["Z"].append(..)`), where writing
    those changes as assignments (`_Rewriter._container_change`) keeps Python's meaning:
    every value stored there is a new container (down to the level changed), and no read of
    it keeps a second name for a changed list (it is indexed, measured, iterated, handed to
    numpy). Else None (as is: also where nothing changes it in place)."""
    changes = []
    for tree in trees:
        parents = _parents(tree)
        for n in gast.walk(tree):
            if not (isinstance(n, gast.Attribute) and n.attr == attr) or (
                    isinstance(n.value, gast.Name) and n.value.id in modules):
                continue  # (`np.stack` is not an object's `.stack`)
            if isinstance(n.ctx, gast.Store):
                p = parents.get(id(n))
                if isinstance(p, gast.Assign) and len(p.targets) == 1:
                    changes.append(("store", p.value, 0, tree))
                elif isinstance(p, gast.AugAssign) and isinstance(p.op, gast.Add):
                    changes.append(("store", p.value, 0))  # (`+=`: rebinds, see stmt)
                elif isinstance(p, gast.AnnAssign) and p.value is not None:
                    changes.append(("store", p.value, 0))
                else:
                    return None
                continue
            if not isinstance(n.ctx, gast.Load):
                return None
            top, depth = _chain(n, parents)
            p = parents.get(id(top))
            if isinstance(p, gast.Subscript) and p.value is top and \
                    isinstance(p.ctx, gast.Store):  # `self.derived["Z"] = []`
                q = parents.get(id(p))
                if not (isinstance(q, gast.Assign) and len(q.targets) == 1):
                    return None
                changes.append(("store", q.value, depth + 1))
                continue
            if isinstance(p, gast.Attribute) and p.value is top:
                q = parents.get(id(p))
                if not (isinstance(q, gast.Call) and q.func is p):
                    return None
                if p.attr in _CHANGES:
                    stmt = parents.get(id(q))
                    if not (isinstance(stmt, gast.Expr) or (
                            p.attr == "pop" and isinstance(stmt, gast.Assign) and
                            len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name))):
                        return None
                    changes.append(("change", None, depth))
                    continue
                if p.attr in _READ_METHODS:
                    changes.append(("read", p.attr, depth))
                    continue
                changes.append(("other", p.attr, depth))
                continue
            if isinstance(p, gast.Call) and top in p.args:
                f = p.func
                if isinstance(f, gast.Name) and f.id in _CONSUMERS:
                    changes.append(("len" if f.id == "len" else "read", f.id, depth))
                    continue
                if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and \
                        f.value.id in modules:  # (`np.stack(self.cache)`)
                    changes.append(("read", f.attr, depth))
                    continue
            if isinstance(p, gast.Compare) and top in p.comparators and all(
                    isinstance(op, (gast.In, gast.NotIn)) for op in p.ops):
                continue
            if isinstance(p, gast.comprehension) and p.iter is top:
                changes.append(("read", "for", depth))  # (`for c in self.caches` inside)
                continue
            loop = p if isinstance(p, gast.For) and p.iter is top else None
            if isinstance(p, gast.Call) and isinstance(parents.get(id(p)), gast.For) and \
                    parents[id(p)].iter is p and isinstance(p.func, gast.Name) and \
                    p.func.id in ("enumerate", "reversed", "zip"):
                loop = parents[id(p)]
            if loop is not None:
                if any(isinstance(x, gast.Attribute) and x.attr == attr and
                       not isinstance(x.ctx, gast.Load) or (
                           isinstance(x, gast.Call) and isinstance(x.func, gast.Attribute) and
                           x.func.attr in _CHANGES and any(
                               isinstance(y, gast.Attribute) and y.attr == attr
                               for y in gast.walk(x.func.value)))
                       for b in loop.body for x in gast.walk(b)):
                    return None  # (a list changed while a loop walks it)
                changes.append(("read", "for", depth))
                continue
            changes.append(("other", None, depth))
    changed = [c[2] for c in changes if c[0] == "change"]
    if not changed or max(changed) > 1:
        return None
    level = max(changed)
    for kind, what, depth, *where in changes:
        if kind == "store" and not _fresh(what, level - depth):
            # (`self.Ws = Ws or []` in __init__: a new list unless the caller gives one of
            # its own -- `construct` checks each call's arguments for these parameters)
            params = _given_or_fresh(what, where[0] if where else None) if level == 0 \
                else None
            if params is None or given is None:
                return None
            given |= params
            continue
        if kind == "other" and depth <= level:
            return None  # (a changed list under a second name)
        if kind == "read" and depth <= level and (
                depth < level or what in ("get", "values", "items")):
            return None  # (its items are changed lists, under a second name)
    return level


_SET_BY_INIT: dict = {}


def _set_by_init(cls) -> set:
    """The attributes `cls.__init__` (its own, or a base's) always assigns: statements of its
    body itself (not in a branch or a loop) storing `self.<attr>`; a dataclass's fields."""
    if cls not in _SET_BY_INIT:
        out = set(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) \
            else set()
        owner, init = class_attribute(cls, "__init__")
        if isinstance(init, types.FunctionType):
            try:
                tree = parse_function(init).tree
            except Exception:  # noqa: BLE001  (no source)
                tree = None
            params = tree.args.args if tree is not None else []
            for s in tree.body if params else ():
                if any(isinstance(n, gast.Return) for n in gast.walk(s)):
                    break  # (an early `return`: what follows may not run)
                targets = s.targets if isinstance(s, gast.Assign) else \
                    [s.target] if isinstance(s, gast.AnnAssign) and s.value is not None else []
                stack = list(targets)
                while stack:
                    t = stack.pop()
                    if isinstance(t, (gast.Tuple, gast.List)):
                        stack.extend(t.elts)
                    elif isinstance(t, gast.Attribute) and isinstance(t.value, gast.Name) \
                            and t.value.id == params[0].id:
                        out.add(t.attr)
        _SET_BY_INIT[cls] = out
    return _SET_BY_INIT[cls]


_CHANGED: dict = {}


def _changed_attrs(cls) -> set:
    """The attributes a method of `cls` other than __init__ / __post_init__ assigns, or any
    method changes in place (`self.sizes.append(..)`): never taken as known."""
    if cls not in _CHANGED:
        out = set()
        for klass in cls.__mro__:
            for name, raw in vars(klass).items():
                fns = _functions_of(raw)
                if not fns:
                    continue
                fn = fns[0]
                for setter in fns[1:]:  # (a property's setter changes what it assigns)
                    out |= _self_accesses(setter)[1]
                reads, writes, _ = _self_accesses(fn)
                if name not in ("__init__", "__post_init__"):
                    out |= writes
                try:
                    tree = parse_function(fn).tree
                except Exception:  # noqa: BLE001  (no source)
                    continue
                for n in gast.walk(tree):
                    if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                            isinstance(n.func.value, gast.Attribute) and \
                            n.func.attr in _MUTATORS:
                        out.add(n.func.value.attr)
                    elif isinstance(n, gast.Subscript) and isinstance(
                            n.ctx, (gast.Store, gast.Del)) and \
                            isinstance(n.value, gast.Attribute):
                        out.add(n.value.attr)
        _CHANGED[cls] = out
    return _CHANGED[cls]


def _relocate(tree, at, line: int) -> None:
    """Every node of `tree` placed at `at`'s location (else at `line`): what it computes, and
    any error it raises, is the user's line (the methods of srcad/pyfuncs.py's classes)."""
    for n in gast.walk(tree):
        if isinstance(n, (gast.stmt, gast.expr)):
            for f in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                setattr(n, f, getattr(at, f, None))
            n.lineno = n.lineno or line


def _walk_own(fdef):
    """The nodes of `fdef`'s body, not those of functions or classes nested in it."""
    todo = list(fdef.body)
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef,
                              gast.Lambda)):
            todo.extend(gast.iter_child_nodes(n))


def _key(t):
    if isinstance(t, gast.Name):
        return (t.id,)
    if isinstance(t, gast.Attribute) and isinstance(t.value, gast.Name):
        return (t.value.id, t.attr)
    return None


def _parallel_ok(targets, value) -> bool:
    """`a, b = x, y` is `a = x; b = y` when the targets are distinct names or attributes of
    names and the right reads none of them."""
    keys = [_key(t) for t in targets]
    if None in keys or len(set(keys)) != len(keys):
        return False
    read = {_key(n) for n in gast.walk(value) if isinstance(n, (gast.Name, gast.Attribute))}
    return not (set(keys) & read)


def _default_ast(value, work, name):
    """A parameter's default as the call site passes it: a literal, else a bound name."""
    if value is None or type(value) in (int, float, bool, str):
        return gast.Constant(value=value, kind=None)
    return _name(work.bind(value, f"{name}_default"))


def _param(name, at):
    p = _name(name)
    p.ctx = gast.Param()
    return gast.copy_location(p, at)


def _locals_of(fdef) -> set:
    a = fdef.args
    out = {p.id for p in a.posonlyargs + a.args + a.kwonlyargs}
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            out.add(n.id)
    return out


def _with_state_returns(body: list, state: list, at, init=False) -> list:
    """Each `return v` of a specialised method also returns the state it assigned (an
    `__init__` returns that state alone)."""

    def pack(v):
        elts = ([] if init else [v]) + [_name(n) for n in state]
        if not elts:
            return gast.Constant(value=None, kind=None)
        return elts[0] if len(elts) == 1 else gast.Tuple(elts=elts, ctx=gast.Load())

    def fix(stmts):
        for s in stmts:
            if isinstance(s, gast.Return):
                v = s.value if s.value is not None else gast.Constant(value=None, kind=None)
                s.value = pack(v)
            for fname in ("body", "orelse"):
                inner = getattr(s, fname, None)
                if isinstance(inner, list) and not isinstance(s, gast.FunctionDef):
                    fix(inner)

    fix(body)
    if not body or not isinstance(body[-1], gast.Return):
        ret = gast.Return(value=pack(gast.Constant(value=None, kind=None)))
        body.append(gast.copy_location(ret, body[-1] if body else at))
    return body


class _Objects:
    def __init__(self, pf, taken: set):
        self.pf = pf
        self.taken = taken
        self.globals = getattr(pf.fn.__globals__, "_base", pf.fn.__globals__)
        self.defs: list = []
        self.line = pf.first_line  # the line being rewritten (for the refusal's reason)
        self.containers: dict = {}  # (class, attribute) -> _container_depth
        # (class, attribute) -> the __init__ parameters whose lists it may keep
        self.given_lists: dict = {}
        self.concat = None  # the name list_concat is read under (`_container_change`)
        self.followed: list = []  # the functions specialised (as written): `check_containers`
        # (object, attribute) a method made by setattr after the object was built (`setattr(
        # self, name, v)` of `add_param("W", W)`): its local is bound from the function's start
        self.late: list = []
        # items of module containers read here when specialising (ir.Function.folded)
        self.folded: list = []

    def localise(self, fdef, fn) -> None:
        """A method of a class from another module of the user's (``from layers import
        Dense``) reads that module's names: each free name it reads is renamed to one bound
        to the object it means there (guarded on that module), unless the function's own
        module binds the same object under it (``np``)."""
        bound = _locals_of(fdef)
        theirs = fn.__globals__
        renames = {}
        for n in gast.walk(fdef):
            if not (isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)) or \
                    n.id in bound:
                continue
            if n.id not in renames:
                if n.id not in theirs:
                    guards.note("absent", theirs, n.id)
                    renames[n.id] = n.id  # (a builtin)
                    continue
                obj = theirs[n.id]
                guards.note("global", theirs, n.id, obj)
                mine = self.pf.closure.get(n.id, self.globals.get(n.id, guards.MISSING))
                if n.id in self.pf.bound:
                    mine = self.pf.bound[n.id]
                renames[n.id] = n.id if mine is obj else self.bind(obj, n.id)
            n.id = renames[n.id]

    def trees_of(self, cls) -> list:
        """The parsed methods of `cls` and its bases (the user's own)."""
        out = []
        for klass in cls.__mro__:
            for raw in vars(klass).values():
                fns = _functions_of(raw.__func__ if isinstance(
                    raw, (staticmethod, classmethod)) else raw)
                for fn in fns:
                    if library_file(fn) is not None or _dataclass_written(klass, fn):
                        continue  # (a dataclass's __init__: `construct` writes its stores)
                    try:
                        out.append(parse_function(fn).tree)
                    except Exception:  # noqa: BLE001  (no source: nothing is followed)
                        return None
        return out

    def modules(self) -> set:
        return {k for k, v in self.globals.items() if isinstance(v, types.ModuleType)}

    def container_depth(self, cls, attr: str, extra=()):
        """`_container_depth` of `cls`'s attribute over its methods and this function."""
        key = (cls, attr)
        if key not in self.containers:
            trees = self.trees_of(cls)
            given: set = set()
            self.containers[key] = None if trees is None else _container_depth(
                trees + [self.pf.tree] + self.followed, attr, self.modules(), given)
            self.given_lists[key] = given
        return self.containers[key]

    def given_lists_checked(self, cls, args, kwargs) -> None:
        """Before `cls.__init__` is followed for an object built here: a parameter whose
        list it keeps and that list changed in place (``self.Ws = Ws or []``, then
        ``self.Ws.append(W)``: written as new lists, `_container_depth`) must get a new
        list from this call -- a list display, a comprehension, ``list(...)`` -- or None
        or nothing (its default None or an empty tuple): a list the caller holds under a
        name of its own would not see the appends, and a default list is shared by every
        call (Python's appends pile up in it)."""
        params = set()
        for attr in _state_attrs(cls):
            if self.container_depth(cls, attr) is not None:
                params |= self.given_lists.get((cls, attr), set())
        if not params:
            return
        owner, init = class_attribute(cls, "__init__")
        try:
            bound = inspect.signature(init).bind(None, *args, **dict(kwargs)).arguments
        except TypeError:
            return  # (Python's own error comes from following the call)
        defaults = {k: v.default for k, v in inspect.signature(init).parameters.items()}
        for p in sorted(params):
            if p in bound:
                v = bound[p]  # (a list of built objects is one object, shared as in Python)
                ok = isinstance(v, VList) or (
                    isinstance(v, gast.Constant) and v.value is None) or (
                    isinstance(v, gast.AST) and not isinstance(v, gast.Constant) and
                    _fresh(v, 0))
            else:
                ok = defaults.get(p) is None or defaults.get(p) == ()
            if not ok:
                raise _Unsupported(f"the list given as `{p}` to {cls.__name__} is changed in "
                                   f"place, and may have another name")

    def kept_list(self, o, attr: str) -> bool:
        """Does existing object `o` hold a list in `attr` that no code followed here (the
        function, the functions it hands objects to, the class's methods but `__init__`)
        assigns? (Its changes are Python's changes to that list: `_kept_change`.)"""
        if o.real is None or type(getattr(o.real, attr, None)) is not list:
            return False
        trees = self.trees_of(o.cls)
        if trees is None:
            return False
        for tree in [t for t in trees if t.name != "__init__"] + [self.pf.tree] + \
                self.followed:
            for n in gast.walk(tree):
                if isinstance(n, gast.Attribute) and n.attr == attr and \
                        not isinstance(n.ctx, gast.Load):
                    return False
        return True

    def check_containers(self) -> None:
        """Each list written as assignments (`_Rewriter._container_change`) again, over every
        function followed (one handed the object may keep a second name for the list)."""
        for (cls, attr), depth in list(self.containers.items()):
            if depth is None:
                continue
            del self.containers[(cls, attr)]
            if self.container_depth(cls, attr) != depth:
                raise _Unsupported(f"the list in `.{attr}`, changed in place, is read under a "
                                   f"second name")

    def bind(self, obj, at) -> str:
        """A fresh name under which the function reads `obj` (a closure entry: resolved like
        a free name, its lookup already guarded)."""
        hint = at if isinstance(at, str) else getattr(obj, "__name__", "fn")
        hint = hint if hint.isidentifier() else "fn"
        name = fresh(hint, self.taken)
        while self.pf.bound.get(name, obj) is not obj:
            # (a nested function shares its caller's names: a method specialised twice, once
            # per object, binds `inv` to each object's pick -- `inv = FNS[self.link]` -- and
            # normalising one copy must not rebind the name the other reads: silently the
            # wrong function)
            name = fresh(hint, self.taken)
        self.pf.bound[name] = obj
        return name

    def _static_key_attr(self, e: gast.Attribute, scope: _Scope):
        """A registry key read from an attribute (`FUNCS[cfg.act]`, `cfg` a parameter or a
        global holding a config object): the string or int it holds, guarded per call."""
        base = self.resolve_static(e.value, scope)
        if base is UNRESOLVED and isinstance(e.value, gast.Name) and scope is self.top and \
                e.value.id in self.pf.known and e.value.id not in scope.env:
            base = self.pf.known[e.value.id]
        if base is UNRESOLVED or isinstance(base, types.ModuleType):
            return UNRESOLVED
        val = getattr(base, e.attr, UNRESOLVED)
        if type(val) not in (str, int):
            return UNRESOLVED
        guards.note_attr(base, e.attr, val)
        return val

    def _note_folded(self, container, key, e) -> None:
        """A function a module's dict or list holds, read here as the callee itself (a
        registry): recorded, so that a store into that container during the call is
        refused (refusals.check_folded_items)."""
        item = container[key]
        if callable(item) and not isinstance(item, type):
            self.folded.append((container, key, getattr(e, "lineno", None),
                                f"{_spelled(e.value)}[{key!r}]"))

    def resolve_static(self, e, scope: _Scope):
        """The object a Name / dotted Attribute of globals (or a known parameter) means."""
        if isinstance(e, gast.Name):
            if e.id in scope.env:
                return UNRESOLVED
            if e.id in scope.locals:
                if scope is self.top and e.id in self.pf.known:
                    return self.pf.known[e.id]
                return UNRESOLVED
            return self.pf.resolve(e.id)
        if isinstance(e, gast.Subscript):  # `ACTIVATIONS[name]`: a registry of the module
            base = self.resolve_static(e.value, scope)
            key = e.slice
            key = key.value if isinstance(key, gast.Constant) else \
                self.resolve_static(key, scope) if isinstance(key, gast.Name) else \
                self._static_key_attr(key, scope) if isinstance(key, gast.Attribute) else \
                UNRESOLVED
            if isinstance(base, dict) and type(key) in (str, int) and key in base:
                guards.note("global", base, key, base[key])  # (the entry, checked per call)
                self._note_folded(base, key, e)
                return base[key]
            if isinstance(base, (tuple, list)) and type(key) is int and \
                    -len(base) <= key < len(base):
                if isinstance(base, list):
                    guards.note("items", base, len(base), base)
                    self._note_folded(base, key, e)
                return base[key]
            return UNRESOLVED
        if isinstance(e, gast.Attribute):
            base = self.resolve_static(e.value, scope)
            if base is UNRESOLVED or not isinstance(base, (types.ModuleType, type)):
                return UNRESOLVED
            try:
                obj = getattr(base, e.attr)
            except AttributeError:
                return UNRESOLVED
            guards.note_attr(base, e.attr, obj)
            return obj
        return UNRESOLVED


def scalarise_objects(pf, taken: set) -> list:
    """Rewrite `pf.tree` as the module docstring says, in place; a function that builds no
    object (or uses one in a way not followed) is left as it is. Returns [(obj, attr, local)]
    for the existing objects scalarised: the local each attribute lives in during the call
    (the user functions called here are given those values and give back what they leave
    there: state.py)."""
    classes = _built_classes(pf)
    stateful = _stateful_objects(pf)
    if not classes and not stateful:
        return []
    out = _scalarised(pf, taken, classes, stateful)
    if out is None and classes and stateful:
        # (an object the function keeps, whose methods srcad cannot turn into locals -- an
        # RNN layer calling `self.activation(...)` --, took the objects built here down with
        # it: `Softmax()(out)` after `R.forward(X)` refused, before the session of
        # 2026-12-07, twelfth. Those are followed alone then, the kept one as without them)
        out = _scalarised(pf, taken, classes, {})
    return out or []


def _scalarised(pf, taken: set, classes, stateful: dict) -> list | None:
    """`scalarise_objects` for these built classes and kept objects; None where a use is not
    followed (NOT_FOLLOWED says why, for each class)."""
    work = _Objects(pf, taken)
    scope = _Scope(taken, _locals_of(pf.tree) | set(pf.params))
    work.top = scope
    tree = copy.deepcopy(pf.tree)
    scope.watch(tree)
    top = _Rewriter(work, scope, 0)
    for name, (kind, n) in (pf.statics or {}).items():  # (the call's arguments told)
        if name in scope.unsafe:
            continue
        if kind == "len" and name not in scope.mutated:
            scope.lengths[name] = n
        elif kind == "int":
            top.consts[name] = n
    entry = []
    for name, obj in stateful.items():  # its state read when the call starts
        o = VObj(cls=type(obj), clsexpr=_name(name), attrs=_object_attrs(obj), label=name,
                 built=False, real=obj)
        at = _first_use(tree.body, name) or tree
        scope.env[name] = o
        scope.made.add(id(o))
        scope.objs[id(o)] = o
        for attr in o.attrs:
            local = scope.local(o, attr)
            value = gast.Attribute(value=_name(name), attr=attr, ctx=gast.Load()) \
                if hasattr(obj, attr) else gast.Constant(value=None, kind=None)
            entry.append(_assign([_name(local, store=True)], value, at))
    try:
        body = top.block(tree.body)
        work.check_containers()
    except _Unsupported as err:
        for cls in classes:
            NOT_FOLLOWED[cls] = f"line {work.line}: {err}"
        return None
    for cls in classes:
        NOT_FOLLOWED.pop(cls, None)
    if stateful:  # ... and what the call left in it written back as it returns
        back = []
        for name, obj in stateful.items():
            o = scope.env[name]
            for attr in o.attrs:
                if (id(o), attr) in scope.stored and attr not in o.kept:
                    back.append((name, attr, scope.names[(id(o), attr)]))
        # (a state the call sets before it reads it is not read at the start: an earlier
        # call's value there would be a constant of this one, which check_attribute_state
        # refuses where the call stores a differentiated value under that name)
        probe = types.SimpleNamespace(body=body)
        entry = [e for e in entry if _may_read_before_store(probe, e.targets[0].id)]
        kept = {scope.names[(id(scope.env[n]), a)] for n in stateful
                for a in scope.env[n].kept}
        kinds = {scope.names[(id(scope.env[n]), a)]: type(getattr(scope.env[n].real, a, None))
                 for n in stateful for a in scope.env[n].kept}
        for e in entry:  # (a list the call appends to, a dict it stores into by key: its
            if e.targets[0].id in kept:  # own copy; the object's own is changed too)
                kind = DICT_COPY if kinds.get(e.targets[0].id) is dict else "list"
                e.value = gast.copy_location(gast.Call(func=_name(kind), args=[e.value],
                                                       keywords=[]), e.value)
        if back and not (body and isinstance(body[-1], gast.Return)):
            # (falling off the end returns None -- a method `forward_prev(self)` calling
            # `self.forward(...)` -- and leaves the object as it is there: written back too)
            body = body + [_assign([gast.Attribute(value=_name(name), attr=attr,
                                                   ctx=gast.Store())], _name(local), body[-1])
                           for name, attr, local in back]
        body = entry + _before_returns(body, back)
    late = {scope.names[(id(o), a)]: v for o, a, v in work.late if (id(o), a) in scope.names}
    body = [_assign([_name(n, store=True)], v or gast.Constant(value=None, kind=None), tree)
            for n, v in late.items()] + body
    pf.folded_items = work.folded
    tree.body = body + work.defs  # (the methods' nested defs: lifted out, closures.py)
    gast.fix_missing_locations(tree)
    pf.tree.body = tree.body
    return [(obj, attr, scope.names[(id(scope.env[name]), attr)])
            for name, obj in stateful.items() for attr in scope.env[name].attrs
            if (id(scope.env[name]), attr) in scope.names]


def _first_use(body, name):
    """The first simple statement of `body` (in order, into compound ones) reading `name`."""
    for s in body:
        inner = [x for f in ("body", "orelse") for x in (getattr(s, f, None) or [])
                 if isinstance(getattr(s, f, None), list)]
        if inner and not isinstance(s, gast.FunctionDef):
            found = _first_use(inner, name)
            if found is not None:
                return found
        if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(s)):
            return s
    return None


def _before_returns(body: list, back: list) -> list:
    """`obj.attr = local` for each (obj, attr, local) before every `return` of the body."""
    out = []
    for s in body:
        if isinstance(s, gast.Return):
            for name, attr, local in back:
                target = gast.Attribute(value=_name(name), attr=attr, ctx=gast.Store())
                out.append(_assign([target], _name(local), s))
        elif not isinstance(s, gast.FunctionDef):
            for fname in ("body", "orelse"):
                inner = getattr(s, fname, None)
                if isinstance(inner, list):
                    setattr(s, fname, _before_returns(inner, back))
        out.append(s)
    return out


def _object_attrs(obj) -> tuple:
    """An existing object's state: its instance attributes and every one its methods assign."""
    found = list(vars(obj)) if hasattr(obj, "__dict__") else []
    return tuple(found + [a for a in _state_attrs(type(obj)) if a not in found])


def _self_accesses(fn) -> tuple[set, set, set]:
    """(attributes read on self, attributes assigned on self, methods called on self) in
    `fn`'s body."""
    try:
        tree = parse_function(fn).tree
    except Exception:  # noqa: BLE001  (no source)
        return set(), set(), set()
    params = tree.args.posonlyargs + tree.args.args
    if not params:
        return set(), set(), set()
    me = params[0].id
    reads, writes, calls = set(), set(), set()
    for n in gast.walk(tree):
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Attribute) and \
                isinstance(n.target.value, gast.Name) and n.target.value.id == me:
            reads.add(n.target.attr)
        if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name) and \
                n.value.id == me:
            (writes if isinstance(n.ctx, gast.Store) else reads).add(n.attr)
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                isinstance(n.func.value, (gast.Name, gast.Call)):
            calls.add(n.func.attr)
    return reads, writes, calls


def _stateful_objects(pf) -> dict:
    """Objects the function reaches by a free name or a known parameter (a module-level RNN
    cell) whose methods called here keep state on them that a later read in the same call
    sees (`self.h = tanh(W @ self.h + ...)`): name -> object. Scalarised like a built object,
    its attributes read at the call's start and written back as it returns, so the state a
    method leaves is the state the next method reads, in the gradient too."""
    globals_ = getattr(pf.fn.__globals__, "_base", pf.fn.__globals__)
    locals_ = _locals_of(pf.tree)
    used: dict = {}
    for n in gast.walk(pf.tree):
        if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name):
            used.setdefault(n.value.id, set()).add(n.attr)
    out = {}
    for name, attrs in used.items():
        if name in locals_:
            obj = pf.known.get(name, UNRESOLVED) if name in pf.params else UNRESOLVED
        else:
            obj = pf.closure.get(name, globals_.get(name, UNRESOLVED))
        if obj is UNRESOLVED or isinstance(obj, type) or not hasattr(obj, "__dict__") or \
                not _is_user_class(type(obj), globals_):
            continue
        reads, writes, todo, seen = set(), set(), list(attrs), set()
        builds = False  # (a method giving back an object it builds: `t.scaled(2.0)`)
        for n in gast.walk(pf.tree):  # the function's own stores on it
            if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name) and \
                    n.value.id == name and isinstance(n.ctx, gast.Store):
                writes.add(n.attr)
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            for klass in type(obj).__mro__:
                raw = vars(klass).get(m)
                if isinstance(raw, types.FunctionType):
                    r, w, c = _self_accesses(raw)
                    reads |= r
                    writes |= w
                    todo.extend(c)
                    builds = builds or (m in attrs and
                                        _returns_new_object(raw, globals_) is not None)
        if reads & writes or builds:
            out[name] = obj
    return out


def _const_int(e):
    """None, an int constant or its negation as written, else UNRESOLVED."""
    if e is None:
        return None
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        v = _const_int(e.operand)
        return -v if type(v) is int else UNRESOLVED
    return e.value if isinstance(e, gast.Constant) and type(e.value) is int else UNRESOLVED


def _spelled(e) -> str:
    """`a.b.c` as written ('' for anything else)."""
    if isinstance(e, gast.Name):
        return e.id
    if isinstance(e, gast.Attribute):
        base = _spelled(e.value)
        return f"{base}.{e.attr}" if base else ""
    return ""


def _global_of(e, globals_: dict, locals_: set):
    """The object a global name or a dotted attribute of one (`H.ACTIVATIONS`) holds, for a
    first look (UNRESOLVED otherwise; the pass resolves it again with guards)."""
    if isinstance(e, gast.Name):
        return UNRESOLVED if e.id in locals_ else globals_.get(e.id, UNRESOLVED)
    if isinstance(e, gast.Attribute):
        base = _global_of(e.value, globals_, locals_)
        if isinstance(base, (types.ModuleType, type)):
            return getattr(base, e.attr, UNRESOLVED)
    return UNRESOLVED


def _built_classes(pf) -> list:
    """The user classes the function calls (a cheap first look)."""
    found = []
    globals_ = getattr(pf.fn.__globals__, "_base", pf.fn.__globals__)
    locals_ = _locals_of(pf.tree)
    for n in gast.walk(pf.tree):
        if isinstance(n, gast.Assign) and isinstance(n.value, gast.Subscript) and \
                _REGISTRY not in found and _registry_of_callables(
                    _global_of(_subscript_root(n.value), globals_, locals_)):
            found.append(_REGISTRY)  # `act = ACTIVATIONS[name]`, then `act(z)`; `_, inv =
            # LINKS[link]` / `inv = LINKS[link][1]` of a dict of tuples of functions
        if isinstance(n, gast.Assign) and isinstance(n.value, gast.Dict) and \
                _REGISTRY not in found and any(
                    isinstance(v, (gast.Name, gast.Attribute)) and _registry_of_callables(
                        [_global_of(v, globals_, locals_)]) for v in n.value.values):
            found.append(_REGISTRY)  # `acts = {"relu": relu, ...}`, then `acts[name](z)`
        if not isinstance(n, gast.Call):
            continue
        f = n.func
        if isinstance(f, gast.Name) and f.id == "map" and f.id not in locals_ and n.args and \
                globals_.get("map", map) is map:
            f = n.args[0]  # (`map(Linear, Ws)`: the class it calls)
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Subscript):
            f = f.value  # (`ACTIVATIONS[name].f(x)`: a method of a class in a registry)
        obj = UNRESOLVED
        if isinstance(f, gast.Name):
            if f.id in locals_:
                obj = pf.known.get(f.id, UNRESOLVED)
            elif f.id in getattr(pf, "classes", {}):  # (a class the function defines)
                obj = pf.classes[f.id]
            elif f.id in globals_ or f.id in pf.closure:
                obj = pf.closure[f.id] if f.id in pf.closure else globals_[f.id]
        elif isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and \
                f.value.id not in locals_ and f.value.id in globals_:
            obj = getattr(globals_[f.value.id], f.attr, UNRESOLVED)
        elif isinstance(f, gast.Subscript) and \
                isinstance(_global_of(f.value, globals_, locals_), (dict, list, tuple)):
            held = _global_of(f.value, globals_, locals_)
            items = list(held.values()) if isinstance(held, dict) else list(held)
            obj = next((v for v in items if _is_user_class(v, globals_)),
                       UNRESOLVED)  # (a registry)
            if obj is UNRESOLVED and any(callable(v) for v in items):
                obj = _REGISTRY
        if obj is _REGISTRY and obj not in found:
            found.append(obj)
        obj = _substituted(obj)
        if inspect.ismethod(obj) and isinstance(obj.__self__, type):
            obj = obj.__self__  # (`Model.from_params(p)`: a classmethod may build one)
        if obj is not _REGISTRY and obj is not UNRESOLVED and _is_user_class(obj, globals_) \
                and obj not in found:
            found.append(obj)
        elif obj is not UNRESOLVED and _user_function(obj, globals_):
            made = _returns_new_object(obj, globals_)  # (`q = encode(x)`: a Gaussian)
            if made is not None and made not in found:
                found.append(made)
    return found


_REGISTRY = object()  # (a call through a global dict of functions: the pass looks at it)


def _subscript_root(e):
    """`LINKS` of `LINKS[key][1]`: what a chain of subscripts indexes."""
    while isinstance(e, gast.Subscript):
        e = e.value
    return e


def _registry_of_callables(held) -> bool:
    """A global dict / list / tuple holding a function (a registry of activations, losses),
    or tuples of them (`LINKS = {"log": (np.log, np.exp)}`)."""
    if not isinstance(held, (dict, list, tuple)):
        return False
    items = held.values() if isinstance(held, dict) else held
    return any(callable(v) and not isinstance(v, type) for v in items) or any(
        isinstance(v, tuple) and v and all(callable(f) and not isinstance(f, type) for f in v)
        for v in items) or any(
        isinstance(v, type) and not isinstance(getattr(v, "_fields", None), tuple) and
        any(isinstance(a, (staticmethod, classmethod)) for a in vars(v).values())
        for v in items)  # (classes whose static methods are called: `act.f(x)`)
