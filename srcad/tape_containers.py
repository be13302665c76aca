"""Tape mode's containers: the list, tuple and dict arguments (pytrees) the tape follows.

Source mode gives a container argument an adjoint of its own (a `GradTree`, or an array where
numpy used the list as one): every ``p[i]`` is a gather whose cotangent is added into it, and
``np.sum(p)`` adds an array. So that tape mode adds the same contributions in the same order
(and agrees bit for bit), a container argument is wrapped in one of these subclasses: reading an
item (``p[-1]``, ``p[1:]``, ``for w in p``, ``a, b = p``, ``p["W"]``) records a gather on the tape
with a fresh Tensor (or a fresh container for a slice or a nested container) as its result, and
a numpy call that takes the container as an array records the container itself. The backward
adds cotangents into the container's adjoint (`srcad.tape.Tape.backward`), and the gradient is
that adjoint made into the argument's structure (`srcad.runtime.as_grad`), as in source mode.

    p = TensorList([t0, t1, t2])        p[-1]  ->  Tensor(t2's value), recorded as
                                                   getitem(a=p, index=-1)
"""

from __future__ import annotations

import ast
import copy as copying
import inspect
import operator
import textwrap


class TensorList(list):
    """A list argument whose items the tape follows. An item the function stores
    (`Ws[0] = Ws[0] * 2`) is read as stored, like a dict's (its cotangent goes to the stored
    value, not into the container's adjoint, which reaches the argument's original items);
    a change of its length or order (append, pop, sort, ...) is refused, as in source mode."""

    def __init__(self, items, tape, written=()):
        super().__init__(items)
        self.entry = tuple(list.__getitem__(self, i) for i in range(len(self)))  # (as given)
        self.tape = tape
        self.written = set(written)  # positions the function stored into
        self.in_place: set = set()  # of those, slots whose own container was written into
        self.nested_reads: dict = {}  # position -> the containers read there (index_container)

    def _position(self, index):
        i = operator.index(index)
        return i + len(self) if i < 0 else i

    def __getitem__(self, index):
        if not isinstance(index, slice) and self.written and \
                self._position(index) in self.written:
            return list.__getitem__(self, index)
        return self.tape.index_container(self, index)

    def __setitem__(self, index, value):
        if isinstance(index, slice):
            value = list(value)
            at = range(*index.indices(len(self)))
            if len(value) != len(at):
                self.tape.refuse_container_change(f"a slice assignment resizing it")
            self.written.update(at)
            for i in at:
                replaced(self, i)
            for i in at:
                self.nested_reads.pop(i, None)
        else:
            self.written.add(self._position(index))
            replaced(self, self._position(index))
            self.nested_reads.pop(self._position(index), None)
        list.__setitem__(self, index, value)
        stored_into_siblings(self, index, value)
        stored_into_item(self)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __reversed__(self):  # (list's own would hand out the items unrecorded)
        for i in reversed(range(len(self))):
            yield self[i]

    def copy(self):
        """`ps.copy()` / `copy.copy(ps)`: Python's shallow copy, a new list holding the very
        same arrays -- each read as `list(ps)` reads it (recorded, so a write in place
        through the copy's item is a write into ps's, `Tape.item_written`); list's own
        would hand out the argument's leaves unrecorded."""
        return list(self)

    __copy__ = copy

    def __deepcopy__(self, memo):
        """`copy.deepcopy`: a new list of copies, read and copied on the tape (TensorDict's)."""
        out = memo[id(self)] = []
        out.extend(copying.deepcopy(x, memo) for x in self)
        return out


def _refused(name):
    def method(self, *args, **kwargs):
        self.tape.refuse_container_change(f"`.{name}()`")
    method.__name__ = name
    return method


for _name in ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
              "__delitem__", "__iadd__", "__imul__"):
    setattr(TensorList, _name, _refused(_name.strip("_")))


class TensorTuple(tuple):
    """A tuple argument whose items the tape follows."""

    def __new__(cls, items, tape):
        out = super().__new__(cls, items)
        out.tape = tape
        return out

    def __getitem__(self, index):
        return self.tape.index_container(self, index)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __reversed__(self):  # (list's own would hand out the items unrecorded)
        for i in reversed(range(len(self))):
            yield self[i]

    def __deepcopy__(self, memo):
        """`copy.deepcopy`: a tuple of copies, read and copied on the tape (TensorDict's)."""
        out = memo[id(self)] = tuple(copying.deepcopy(x, memo) for x in self)
        return out


def reads_items_by_attribute(cls) -> bool:
    """A dict subclass whose `__getattr__` reads its items (`__getattr__ = dict.__getitem__`,
    or a `def __getattr__(self, k): return self[k]`): `cfg.W` is `cfg["W"]` for a key the
    class itself has no attribute for (EasyDict, AttrDict): frontend/expressions.py reads it so, and a TensorDict of one
    answers attributes so too."""
    if not (isinstance(cls, type) and issubclass(cls, dict) and cls is not dict):
        return False
    if dict_is_own_namespace(cls):
        return True
    fn = getattr(cls, "__getattr__", None)
    if fn in (dict.__getitem__, dict.get):
        return True
    tree = _source_tree(fn)
    if tree is None:
        return False
    f = tree.body[0] if tree.body else None
    if not isinstance(f, ast.FunctionDef) or len(f.args.args) != 2 or len(f.body) != 1:
        return False
    me, key = (a.arg for a in f.args.args)
    r = f.body[0]
    return isinstance(r, ast.Return) and isinstance(r.value, ast.Subscript) and \
        isinstance(r.value.value, ast.Name) and r.value.value.id == me and \
        isinstance(r.value.slice, ast.Name) and r.value.slice.id == key


def _source_tree(fn):
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (TypeError, OSError, SyntaxError):
        return None


def _is_self_dict_store(stmt, me) -> bool:
    """``self.__dict__ = self``"""
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.targets[0], ast.Attribute) and stmt.targets[0].attr == "__dict__" and \
        isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id == me and \
        isinstance(stmt.value, ast.Name) and stmt.value.id == me


def _is_dict_init_call(stmt, me) -> bool:
    """``super().__init__(*args, **kwargs)`` (or ``dict.__init__(self, ...)``,
    ``super(C, self).__init__(...)``) handing on the parameters as they came."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "__init__"):
        return False
    base, args = f.value, list(call.args)
    if isinstance(base, ast.Name) and base.id == "dict":
        if not (args and isinstance(args[0], ast.Name) and args[0].id == me):
            return False
        args = args[1:]
    elif not (isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and
              base.func.id == "super"):
        return False
    return all(isinstance(a, ast.Starred) for a in args) and \
        all(k.arg is None for k in call.keywords)


def dict_init_of(cls) -> bool:
    """Does building `cls` (a dict subclass) do what ``dict(...)`` does with its arguments --
    dict's own ``__init__``, or one that hands ``*args, **kwargs`` to it and sets
    ``self.__dict__ = self`` (the attribute-dict idiom)?"""
    init = None
    for klass in cls.__mro__:
        if "__init__" in vars(klass):
            init = vars(klass)["__init__"]
            break
    if init is dict.__init__ or init is None:
        return True
    tree = _source_tree(init)
    f = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(f, ast.FunctionDef) or not f.args.args or f.args.defaults or \
            f.args.kwonlyargs or len(f.args.args) != 1:
        return False
    me = f.args.args[0].arg
    body = [s for s in f.body if not (isinstance(s, ast.Expr) and
                                      isinstance(s.value, ast.Constant))]
    return len(body) in (1, 2) and _is_dict_init_call(body[0], me) and \
        all(_is_self_dict_store(s, me) for s in body[1:])


def dict_is_own_namespace(cls) -> bool:
    """``self.__dict__ = self`` in the class's ``__init__`` (after dict's): the object's
    attributes are its items, read and written."""
    for klass in cls.__mro__:
        if "__init__" in vars(klass):
            tree = _source_tree(vars(klass)["__init__"])
            f = tree.body[0] if tree is not None and tree.body else None
            if not isinstance(f, ast.FunctionDef) or not f.args.args:
                return False
            me = f.args.args[0].arg
            return any(_is_self_dict_store(s, me) for s in f.body)
    return False


def writes_items_by_attribute(cls) -> bool:
    """A dict subclass whose attribute stores set its items (``__setattr__ =
    dict.__setitem__``, ``def __setattr__(self, k, v): self[k] = v``, or ``self.__dict__ =
    self``): ``cfg.W = v`` is ``cfg["W"] = v``."""
    if not (isinstance(cls, type) and issubclass(cls, dict) and cls is not dict):
        return False
    if dict_is_own_namespace(cls):
        return True
    fn = getattr(cls, "__setattr__", None)
    if fn is dict.__setitem__:
        return True
    tree = _source_tree(fn)
    f = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(f, ast.FunctionDef) or len(f.args.args) != 3 or len(f.body) != 1:
        return False
    me, key, value = (a.arg for a in f.args.args)
    s = f.body[0]
    return isinstance(s, ast.Assign) and len(s.targets) == 1 and \
        isinstance(s.targets[0], ast.Subscript) and \
        isinstance(s.targets[0].value, ast.Name) and s.targets[0].value.id == me and \
        isinstance(s.targets[0].slice, ast.Name) and s.targets[0].slice.id == key and \
        isinstance(s.value, ast.Name) and s.value.id == value


class TensorDict(dict):
    """A dict argument whose values the tape follows."""

    def __init__(self, items, tape):
        super().__init__(items)
        self.tape = tape
        self.written = set()  # keys the function stored into (`d[k] = v`): read as stored
        self.in_place: set = set()  # of those, keys whose own container was written into
        self.nested_reads: dict = {}  # key -> the containers read there (index_container)
        self.entry_keys = tuple(self.keys())  # (its gradient has these: the argument's)
        self.entry = {k: dict.__getitem__(self, k) for k in self.entry_keys}  # (as given)

    def __getitem__(self, key):
        if key in self.written:  # (the stored value is its own Tensor: no gather)
            return dict.__getitem__(self, key)
        return self.tape.index_container(self, key)

    def __setitem__(self, key, value):
        self.written.add(key)
        replaced(self, key)
        self.nested_reads.pop(key, None)
        dict.__setitem__(self, key, value)
        stored_into_siblings(self, key, value)
        stored_into_item(self)

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args, **kwargs):
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def values(self):
        return [self[k] for k in self.keys()]

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __iter__(self):
        # (a dict subclass with dict's own iterator is copied by `dict(d)` / `{**d}` from its
        # storage, unrecorded; with this one Python reads each item through __getitem__)
        return iter(self.keys())

    def copy(self):
        """`d.copy()` / `copy.copy(d)`: a new dict holding the very same arrays, each read
        as `dict(d)` reads it (recorded, so a write in place through the copy is a write
        into d's item, `Tape.item_written`)."""
        return {k: self[k] for k in self.keys()}

    __copy__ = copy

    def __deepcopy__(self, memo):
        """`copy.deepcopy` of the dict or of what holds it (`copy.deepcopy(Net(params))`): a
        new dict of copies, each item read as recorded and copied on the tape (Tensor's
        own `__deepcopy__`), so the copies' gradients reach the argument's items; the
        dict's own state (its tape) is not copied."""
        out = memo[id(self)] = {}
        for k in self.keys():
            out[copying.deepcopy(k, memo)] = copying.deepcopy(self[k], memo)
        return out


class AttrItems(dict):
    """A plain dict that reads its items by attribute: what an AttrTensorDict is unwrapped
    to when the tape hands it to a callee (and wrapped again from)."""

    __getattr__ = dict.__getitem__


class AttrTensorDict(TensorDict):
    """A TensorDict of a dict subclass whose attributes read its items (`params.W`)."""

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        return self[key]


def stored_into_siblings(container, key, value) -> None:
    """A store into a container read from a slot of another: every other read of that slot
    (Python's one object, read here as one container per read) holds it too."""
    for sib in getattr(container, "siblings", ()):
        if sib is container:
            continue
        if isinstance(key, slice):
            sib.written.update(range(*key.indices(len(sib))))
        else:
            sib.written.add(sib._position(key) if isinstance(sib, TensorList) else key)
        (list if isinstance(sib, list) else dict).__setitem__(sib, key, value)


def replaced(container, key) -> None:
    """Slot `key` is given another value: where the function had written into the caller's
    own container there (`p[0][1] = v`, then `p[0] = [...]`), that follower is kept in
    `replaced_in_place` -- Python wrote the caller's object, which a name of the caller's may
    still hold, so the run's end writes it too (tape.py `_settle_slot`)."""
    if key in container.in_place:
        container.in_place.discard(key)
        old = raw_item(container, key)
        container.__dict__.setdefault("replaced_in_place", {}).setdefault(key, []).append(old)


def stored_into_item(container) -> None:
    """A store into a container read as an item of another (`p["layers"][0] = v`, or through
    a name, `L = p["layers"]; L[0] = v`): the outer one holds this container from now on, as
    stored (Python's outer dict holds the very list written), up to the argument itself."""
    outer = getattr(container, "outer", None)
    if outer is not None:
        container.outer = None  # (held as stored now: no longer a gather's result)
        parent, key = outer
        if key in getattr(parent, "written", ()) and raw_item(parent, key) is not container:
            return  # (`e = p["enc"]; p["enc"] = {...}; e["W"] = v`: no longer p's item)
        parent[key] = container
        if hasattr(parent, "in_place"):  # (the caller's object there is written, not replaced)
            parent.in_place.add(parent._position(key) if isinstance(parent, TensorList) else key)


CONTAINERS = (TensorList, TensorTuple, TensorDict)
_RAW_GET = {TensorList: list.__getitem__, TensorTuple: tuple.__getitem__,
            TensorDict: dict.__getitem__, AttrTensorDict: dict.__getitem__}


def raw_item(container, key):
    """An item as stored, without recording anything."""
    return _RAW_GET[type(container)](container, key)


def raw_items(container) -> list:
    """The items (a dict's values) as stored, without recording anything."""
    if isinstance(container, TensorDict):
        return [dict.__getitem__(container, k) for k in container.keys()]
    return [_RAW_GET[type(container)](container, i) for i in range(len(container))]


def rewrap(value, tape, like=None):
    """A fresh container holding the same items (a slice of a list is a plain list)."""
    kind = type(like) if like is not None else type(value)
    if kind is TensorDict or isinstance(value, dict):
        return (AttrTensorDict if kind is AttrTensorDict or isinstance(value, AttrTensorDict)
                or reads_items_by_attribute(type(value)) else TensorDict)(dict(value.items()) if not isinstance(value, TensorDict) else
                          {k: dict.__getitem__(value, k) for k in value.keys()}, tape)
    items = raw_items(value) if isinstance(value, CONTAINERS) else list(value)
    if kind in (TensorTuple, tuple):
        return TensorTuple(items, tape)
    return TensorList(items, tape)


def wrap_container(x, tape, wrap_leaf):
    """`x` (a dict, list or tuple argument) with its float leaves wrapped by `wrap_leaf`."""
    if isinstance(x, dict):
        kind = AttrTensorDict if reads_items_by_attribute(type(x)) else TensorDict
        return kind({k: wrap_container(v, tape, wrap_leaf) for k, v in x.items()}, tape)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        items = [wrap_container(v, tape, wrap_leaf) for v in x]
        return TensorTuple(items, tape) if isinstance(x, tuple) else TensorList(items, tape)
    if isinstance(x, (list, tuple)):  # a namedtuple keeps its type, items followed one by one
        return type(x)(*(wrap_container(v, tape, wrap_leaf) for v in x))
    return wrap_leaf(x)


GETITEM = operator.getitem
