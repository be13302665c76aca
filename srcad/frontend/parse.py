"""Parse a user function and resolve the names its body uses.

Input: a Python function object. Output: a `ParsedFunction` holding its gast
`FunctionDef` (line numbers are the user's file lines, decorators removed), the file
name and source lines for error messages, and `resolve(name)`, which looks a free name
up in the function's closure, then its globals, then builtins -- so ``import numpy as
xp``, ``from numpy import tanh`` and a module-level alias all reach the same op row.
"""

from __future__ import annotations

import ast
import builtins
import collections
import copy
import importlib
import inspect
import linecache
import sys
import textwrap
import typing
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from ..errors import SrcadError, UnsupportedSyntaxError
from ..naming import fresh
from . import guards
from .opaque import library_file

_UNRESOLVED = object()


class _ByFunction(dict):
    """A dict keyed by functions, asked about any callee: an unhashable one (an instance of
    a ``@dataclass`` with ``eq=True``, called as ``layer(x)``) is simply not in it."""

    def __contains__(self, key) -> bool:
        try:
            return dict.__contains__(self, key)
        except TypeError:
            return False


class Members(frozenset):
    """A set of library callables asked about any callee: an unhashable one is not in it."""

    def __contains__(self, key) -> bool:
        try:
            return frozenset.__contains__(self, key)
        except TypeError:
            return False


LIFTED: dict = _ByFunction()  # a nested def or lambda lifted out of its function -> its
# ParsedFunction
EACH = ...  # a dict path's step that stands for every item (`ps[i]`, `for p in ps`)


def dict_paths_of(params, values, depth: int = 4) -> frozenset:
    """Where these arguments hold dicts, as `ParsedFunction.dict_paths` spells it: each
    parameter holding a dict, each item (by constant key or index) of a list, tuple or dict
    holding one, and `EACH` where every item of a container holds a dict there."""
    def within(v, depth) -> set:
        if depth < 0 or not isinstance(v, (dict, list, tuple)) or len(v) > 4096:
            return set()
        items = list(v.items()) if isinstance(v, dict) else list(enumerate(v))
        out = {()} if isinstance(v, dict) else set()
        common = None
        for k, x in items:
            inner = within(x, depth - 1)
            if type(k) in (str, int):
                out |= {(k,) + r for r in inner}
            common = inner if common is None else common & inner
        return out | {(EACH,) + r for r in common or ()}

    return frozenset((p,) + r for p, v in zip(params, values) for r in within(v, depth))


@dataclass
class ParsedFunction:
    fn: Callable
    name: str
    filename: str
    tree: gast.FunctionDef
    first_line: int
    last_line: int
    params: list[str]
    closure: dict[str, Any] = field(default_factory=dict)
    constants: dict[str, Any] = field(default_factory=dict)  # local names bound to objects
    cells: dict[str, Any] = field(default_factory=dict)  # closure name -> its cell (guards)
    known: dict[str, Any] = field(default_factory=dict)  # parameter -> the object it holds
    arrays: frozenset = frozenset()  # parameters that hold arrays (an index by one: a copy)
    containers: frozenset = frozenset()  # parameters that hold lists, tuples or dicts
    # where the arguments hold dicts (`for k in d` walks their keys): paths from a parameter,
    # ("p",) for p itself, ("p", "enc") for p["enc"], ("ps", EACH) for every item of ps
    dict_paths: frozenset = frozenset()
    dict_known: frozenset = frozenset()  # the same, of this function's names (its callees')
    # parameter -> the keys of the dict argument it holds, in order (a comprehension or a loop
    # building objects per key unrolls over them: objects.py); the call's arguments tell
    dict_keys: dict = field(default_factory=dict)
    # parameter -> {key: value} of the str / int / bool / None items of the dict argument it
    # holds (in the specialisation's key: `kwargs.get("act", "elu")` is known, chosen.py)
    dict_scalars: dict = field(default_factory=dict)
    # parameter -> the strings of the list / tuple display its caller passes (`f(x, ["a",
    # "b"])`: a loop over them picks callees, chosen.py)
    name_lists: dict = field(default_factory=dict)
    namedtuples: dict = field(default_factory=dict)  # parameter -> its namedtuple type
    namedtuple_items: dict = field(default_factory=dict)  # parameter -> its items' type
    attrdicts: dict = field(default_factory=dict)  # parameter -> its dict subclass (EasyDict)
    vararg: str | None = None  # `*xs`: the parameter holding the extra positional arguments
    varkw: str | None = None  # `**kw` of a function srcad transforms: the dict parameter
    bound: dict = field(default_factory=dict)  # names srcad gave objects (objects.py: guarded)
    imported: dict = field(default_factory=dict)  # a name an import in the body binds -> Import
    classes: dict = field(default_factory=dict)  # a class the body defines -> the class made
    # parameter -> ("len", n) for a list / tuple argument, ("int", v) for an int one: what a
    # loop that builds objects counts on (frontend/objects.py); None: not asked for yet
    statics: dict | None = None
    # [(obj, attr, parameter)]: values the caller stored in `obj.attr` before the call (its
    # own `layer.W = W` or an earlier callee's `self.output = ...`), given to this callee as
    # extra parameters its reads of `obj.attr` read (frontend/state.py)
    attr_in: list = field(default_factory=list)
    # closure values the caller passes (frontend/closure_values.py): {parameter: Closure,
    # its free variables the extra parameters `closure_extra`}, and {parameter: a display of
    # functions it holds}
    closure_params: dict = field(default_factory=dict)
    function_displays: dict = field(default_factory=dict)
    closure_extra: list = field(default_factory=list)
    closure_free: list = field(default_factory=list)  # (those a closure closes over)
    deferrable: bool = False  # a transform's own function: it may wait for the arguments
    # parameters whose kind (list, dict or array) the call has not told yet: the transform's
    # own, until its first call's arguments tell (`_ir_with`), and a callee's given them
    unknown_kinds: frozenset = frozenset()
    # n where the caller unpacks this call's result into n names (`a, b = helper(x)`): a
    # tuple-returning helper whose end may be reached then raises Python's TypeError there
    unpacked: int = 0

    def resolve(self, name: str) -> Any:
        """The object a free name refers to now, or UNRESOLVED. Each lookup is recorded as a
        guard (guards.py): the code built from it is valid while the name keeps its object."""
        if name in self.imported:
            return self.imported[name].bind(self)
        if name in self.classes:
            return self.classes[name]
        if name in self.closure:
            obj = self.closure[name]
            if name in self.cells:
                guards.note("cell", self.cells[name], name, obj)
            return obj
        if name in self.bound:
            return self.bound[name]
        g = self.fn.__globals__
        g = getattr(g, "_base", g)  # (a function made while the tape runs: its module's)
        if name in g:
            obj = g[name]
            guards.note("global", g, name, obj)
            return obj
        guards.note("absent", g, name)  # (a builtin, or nothing: while the module lacks it)
        if hasattr(builtins, name):
            return getattr(builtins, name)
        return _UNRESOLVED

    def line(self, lineno: int | None) -> str:
        if lineno is None:
            return ""
        return linecache.getline(self.filename, lineno).strip()

    def error(self, message: str, node=None, *, hint: str | None = None, cls=SrcadError):
        lineno = getattr(node, "lineno", None) if node is not None else None
        if isinstance(node, int):
            lineno = node
        return cls(message, filename=self.filename, lineno=lineno, hint=hint, func=self.name)


def _unwrap(fn):
    """Follow `__wrapped__` past the wrappers a library or srcad made (functools.lru_cache,
    the tape's views), but not past a user's own Python wrapper: a decorator written with
    `functools.wraps` runs its wrapper's code (`return 2.0 * fn(*a, **k)`), which is what
    calling the function does, so that wrapper is what srcad transforms."""
    while hasattr(fn, "__wrapped__"):
        if inspect.isfunction(fn) and library_file(fn) is None and \
                not (fn.__module__ or "").startswith("srcad"):
            return fn
        fn = fn.__wrapped__
    return fn


def parse_function(fn: Callable) -> ParsedFunction:
    """Parse `fn`'s source into gast with the user's line numbers."""
    if fn in LIFTED:  # a nested def or lambda lifted out of its function (closures.py)
        pf = LIFTED[fn]
        return ParsedFunction(fn=pf.fn, name=pf.name, filename=pf.filename,
                              tree=copy.deepcopy(pf.tree), first_line=pf.first_line,
                              last_line=pf.last_line, params=list(pf.params),
                              closure=dict(pf.closure), bound=pf.bound,
                              imported=pf.imported)
    fn = _unwrap(fn)
    if inspect.ismethod(fn) and inspect.isfunction(fn.__func__):
        # obj.method: `self` is the object, a constant (its arrays get no gradient); its
        # attributes are read when the generated code runs, so updates to them are seen
        pf = parse_function(fn.__func__)
        if not pf.params:
            raise SrcadError(f"{fn.__qualname__} takes no `self` parameter",
                             filename=pf.filename, lineno=pf.first_line)
        pf.constants = {pf.params[0]: fn.__self__}
        pf.params = pf.params[1:]
        pf.tree.args.args = pf.tree.args.args[1:] if pf.tree.args.args else []
        if not pf.tree.args.args:
            pf.tree.args.posonlyargs = pf.tree.args.posonlyargs[1:]
        return pf
    if not inspect.isfunction(fn):
        raise SrcadError(
            f"srcad can only transform Python functions, got {type(fn).__name__} {fn!r}",
            hint="pass a function defined with `def` or `lambda` in a .py file, or a bound "
            "method (obj.method)",
        )
    if fn.__name__ == "<lambda>":
        return _parse_lambda(fn)
    try:
        # (of the code object: inspect follows a function's `__wrapped__` to the one wrapped)
        lines, first = inspect.getsourcelines(fn.__code__)
    except (OSError, TypeError) as e:
        raise SrcadError(
            f"cannot read the source of {fn.__qualname__}",
            hint="srcad transforms source code: define the function in a .py file "
            "(not in an interactive session or via exec)",
        ) from e
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    source = textwrap.dedent("".join(lines))
    try:
        module = gast.parse(source)
    except SyntaxError as e:  # pragma: no cover - the function compiled, so it parses
        raise SrcadError(f"cannot parse {fn.__qualname__}: {e}") from e
    fdef = module.body[0]
    if not isinstance(fdef, gast.FunctionDef):
        raise SrcadError(
            f"{fn.__qualname__} is not a plain `def` function",
            filename=filename,
            lineno=first,
        )
    gast.increment_lineno(module, first - 1)
    fdef.decorator_list = []
    static_getattr(fdef, fn.__globals__)
    vararg = _star_as_tuple(fdef)
    _keyword_only_as_ordinary(fdef)
    closure, cells = _closure_of(fn), _cells_of(fn)
    # make sure linecache has the file, for error messages
    linecache.checkcache(filename)
    linecache.getlines(filename, fn.__globals__)
    args = fdef.args
    params = [a.id for a in args.posonlyargs + args.args]
    made = ParsedFunction(
        fn=fn,
        name=fn.__name__,
        filename=filename,
        tree=fdef,
        first_line=first,
        last_line=first + len(lines) - 1,
        params=params,
        closure=closure,
        cells=cells,
    )
    made.vararg = vararg
    made.imported = _imports_of(made)
    made.classes = _classes_of(made)
    return made


def static_getattr(fdef, globals_: dict, strings: dict | None = None,
                   objects: dict | None = None) -> None:
    """``getattr(obj, "name")`` is ``obj.name`` (Python's own meaning of the builtin with two
    arguments): rewritten in place so that a function or method picked by a constant string
    (``fn = getattr(Activations, "softplus")``, ``getattr(self, "_" + kind)(x)``) is followed
    as the attribute it is. `strings`: parameters known to hold these strings (each value
    its own specialisation) and never rebound in the function; `objects`: parameters known
    to hold user objects, whose attributes holding a string name one too (``getattr(np,
    cfg.activation)``: the lookup guarded, as any attribute of a known object)."""
    stored = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)
              and isinstance(n.ctx, gast.Store)}
    builtin = {name for name in ("getattr", "setattr") if name not in stored and
               name not in globals_ and not any(a.id == name for a in
                                                fdef.args.args + fdef.args.posonlyargs)}
    if not builtin:
        return
    strings = {k: v for k, v in (strings or {}).items() if k not in stored}
    objects = objects or {}
    params = {a.id if isinstance(a, gast.Name) else a.arg for a in
              fdef.args.args + fdef.args.posonlyargs + fdef.args.kwonlyargs}

    def text(e):
        if isinstance(e, gast.Constant) and type(e.value) is str:
            return e.value
        if isinstance(e, gast.Name) and e.id in strings:
            return strings[e.id]
        if isinstance(e, gast.BinOp) and isinstance(e.op, gast.Add):
            a, b = text(e.left), text(e.right)
            return a + b if a is not None and b is not None else None
        if isinstance(e, gast.Attribute) and isinstance(e.value, gast.Name) and \
                e.value.id in objects and e.value.id not in stored:
            obj = objects[e.value.id]
            value = getattr(obj, e.attr, None)
            if type(value) is str:
                guards.note_attr(obj, e.attr, value)
                return value
        if isinstance(e, gast.Subscript) and isinstance(e.value, gast.Name) and \
                e.value.id not in stored and e.value.id not in params and \
                isinstance(e.slice, gast.Constant) and type(e.slice.value) is str:
            # `getattr(np, CONFIG["act"])` of a module-level dict of settings: both lookups
            # guarded (rebinding CONFIG, or setting CONFIG["act"], rebuilds the code)
            base = getattr(globals_, "_base", globals_)
            held = base.get(e.value.id) if isinstance(base, dict) else None
            value = held.get(e.slice.value) if type(held) is dict else None
            if type(value) is str:
                guards.note("global", base, e.value.id, held)
                guards.note("global", held, e.slice.value, value)
                return value
        return None

    class Rewrite(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            f = node.func
            if isinstance(f, gast.Name) and f.id == "getattr" and "getattr" in builtin and \
                    len(node.args) == 2 and not node.keywords:
                name = text(node.args[1])
                if name is not None and name.isidentifier():
                    return gast.copy_location(gast.Attribute(
                        value=node.args[0], attr=name, ctx=gast.Load()), node)
            return node

        def visit_Expr(self, node):
            # `setattr(obj, "name", v)` as a statement is `obj.name = v` (no name mangling
            # either way for a name that is not private): then a store srcad follows as
            # the attribute store it is -- read back in the same call, carried to callers
            self.generic_visit(node)
            call = node.value
            if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and
                    call.func.id == "setattr" and "setattr" in builtin and
                    len(call.args) == 3 and not call.keywords):
                return node
            name = text(call.args[1])
            if name is None or not name.isidentifier() or (
                    name.startswith("__") and not name.endswith("__")):
                return node
            target = gast.copy_location(gast.Attribute(value=call.args[0], attr=name,
                                                       ctx=gast.Store()), call)
            target.srcad_setattr = True  # (objects.py: an attribute its method names so)
            return gast.copy_location(gast.Assign(targets=[target], value=call.args[2],
                                                  type_comment=None), node)

    Rewrite().visit(fdef)


# ---------------------------------------------------------------------------------------------
# import statements in the function's body
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """What one name of an import statement in the function binds, as Python runs the
    statement at every call: ``import a.b`` binds `a` (the package, with a.b imported),
    ``import a.b as c`` the module a.b, ``from a.b import n`` a.b's attribute n (or its
    submodule n). srcad reads it when it normalises the function, as it reads a global, and
    guards the lookup: sys.modules' entry for the module, and the attribute (guards.py's
    rules: an installed library's module attributes are not guarded). A call that finds
    another object rebuilds the code."""

    module: str  # the module the statement imports
    attr: str | None  # `from module import attr`; None for `import module`
    top: bool  # `import a.b` without `as`: the name is the top package
    node: Any  # the statement, for errors

    @property
    def key(self) -> tuple:
        return (self.module, self.attr, self.top)

    def bind(self, pf: ParsedFunction) -> Any:
        where = self.module.partition(".")[0] if self.top else self.module
        try:
            module = importlib.import_module(self.module)
            obj = sys.modules[where] if self.top else module
            if self.attr is not None:
                obj = getattr(module, self.attr, _UNRESOLVED)
                if obj is _UNRESOLVED:  # `from pkg import submodule`
                    obj = importlib.import_module(f"{self.module}.{self.attr}")
        except Exception as e:  # (what the statement would raise at the call)
            raise pf.error(f"the import in {pf.name} fails: {type(e).__name__}: {e}", self.node,
                           hint="srcad runs the function's imports as each call would: make "
                           "the module importable") from e
        guards.note("global", sys.modules, where, sys.modules.get(where, guards.MISSING))
        if self.attr is not None:
            guards.note_attr(module, self.attr, obj)
        return obj


def _imports_of(pf: ParsedFunction) -> dict:
    """The names the import statements of `pf`'s own body bind (not those of nested defs,
    which stay refused), each an `Import`; the statements themselves are taken out of the
    tree (`pass` in their place). A relative import, or a name an import binds that the
    function also assigns, is refused at its line (``import *`` cannot be in a function)."""
    out: dict = {}
    scopes = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)

    def visit(body: list) -> list:
        kept = []
        for stmt in body:
            if isinstance(stmt, (gast.Import, gast.ImportFrom)):
                for name, imp in _bindings(pf, stmt):
                    if name in out and out[name].key != imp.key:
                        raise pf.error(f"`{name}` is imported twice in {pf.name}, from "
                                       f"different places", stmt, hint="import it once",
                                       cls=UnsupportedSyntaxError)
                    out.setdefault(name, imp)
                kept.append(gast.copy_location(gast.Pass(), stmt))
                continue
            for fld in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, fld, None)
                if isinstance(inner, list) and not isinstance(stmt, scopes):
                    setattr(stmt, fld, visit(inner))
            kept.append(stmt)
        return kept

    pf.tree.body = visit(pf.tree.body)
    if out:
        assigned = set(pf.params) | {
            n.id for n in gast.walk(pf.tree)
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
        clash = sorted(set(out) & assigned)
        if clash:
            raise pf.error(f"`{clash[0]}` is bound by an import in {pf.name} and assigned too",
                           out[clash[0]].node, hint="give the import or the variable another "
                           "name", cls=UnsupportedSyntaxError)
    return out


def _classes_of(pf: ParsedFunction) -> dict:
    """The classes the function's body defines at its top level (`class Layer: ...`, then
    `Layer(W)(x)`), each made once here, in the function's module, and followed as a
    module-level class is (objects.py); the statements are taken out of the tree. Python
    makes the class again at every call: the same class, unless its body reads the call's
    values -- a class reading one of the function's locals (or its closure's) is refused,
    as is one defined in a loop or a branch, or a name that is also assigned."""
    out: dict = {}
    assigned = set(pf.params) | {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
                                 and not isinstance(n.ctx, gast.Load)}
    local = assigned | set(pf.closure)
    kept = []
    for stmt in pf.tree.body:
        tuple_class = _namedtuple_class(pf, stmt, assigned, local)
        if tuple_class is not None:
            out[stmt.targets[0].id] = tuple_class
            kept.append(gast.copy_location(gast.Pass(), stmt))
            continue
        if not isinstance(stmt, gast.ClassDef):
            kept.append(stmt)
            continue
        own = {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name)
               and not isinstance(n.ctx, gast.Load)} | {
            a.id for f in gast.walk(stmt) if isinstance(f, (gast.FunctionDef, gast.Lambda))
            for a in f.args.args + f.args.posonlyargs + f.args.kwonlyargs
            + [x for x in (f.args.vararg, f.args.kwarg) if x is not None]}
        read = sorted({n.id for n in gast.walk(stmt) if isinstance(n, gast.Name)
                       and isinstance(n.ctx, gast.Load)} - own & (local - {stmt.name}))
        if read or stmt.name in assigned or stmt.name in out:
            why = (f"its body reads `{read[0]}`, a value of the call" if read else
                   f"`{stmt.name}` is also assigned in {pf.name}")
            raise pf.error(f"a class defined in {pf.name} ({why})", stmt,
                           hint="define the class at module level and pass the value to "
                           "its constructor", cls=UnsupportedSyntaxError)
        module = ast.Module(body=[gast.gast_to_ast(stmt)], type_ignores=[])
        ast.fix_missing_locations(module)
        made: dict = {}
        try:
            exec(compile(module, pf.filename, "exec"), pf.fn.__globals__, made)  # noqa: S102
        except Exception as e:  # (what the statement would raise at the call)
            raise pf.error(f"the class statement in {pf.name} fails: {type(e).__name__}: {e}",
                           stmt, cls=UnsupportedSyntaxError) from e
        cls = made[stmt.name]
        cls.__qualname__ = f"{pf.fn.__qualname__}.<locals>.{stmt.name}"  # (where Python's is)
        out[stmt.name] = cls
        kept.append(gast.copy_location(gast.Pass(), stmt))
    pf.tree.body = kept
    return out


def resolve_dotted(pf: ParsedFunction, e, local=()):
    """The object a global dotted name `a.b.c` holds (`functools.partial`, `collections.
    namedtuple`), or UNRESOLVED: not a dotted name, its root a local (`local`), or a name
    the module lacks (Python says so where it runs)."""
    parts = []
    while isinstance(e, gast.Attribute):
        parts.append(e.attr)
        e = e.value
    if not isinstance(e, gast.Name) or e.id in local:
        return UNRESOLVED
    try:
        obj = pf.resolve(e.id)
        for a in reversed(parts):
            obj = getattr(obj, a)
    except Exception:  # noqa: BLE001  (any attribute error of the user's objects)
        return UNRESOLVED
    return obj


def rewrite_blocks(s, block) -> None:
    """Each statement list `s` holds (body, orelse, finalbody; not a nested def's or class's)
    through `block`, in place; a body left empty becomes `pass`."""
    if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
        return
    for field in ("body", "orelse", "finalbody"):
        if isinstance(getattr(s, field, None), list):
            new = block(getattr(s, field))
            setattr(s, field, new if new or field != "body"
                    else [gast.copy_location(gast.Pass(), s)])


def _namedtuple_class(pf: ParsedFunction, stmt, assigned: set, local: set):
    """`Params = namedtuple("Params", "W b")` (or `typing.NamedTuple("P", [("W", ...)])`) at
    the body's top level, its arguments reading none of the call's values and the name bound
    only here: the class, made once here (as a class statement is), else None. Python makes
    a new class of the same fields at every call; attribute reads of its instances (`p.W`)
    are item reads either way."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call)):
        return None
    name = stmt.targets[0].id
    maker = resolve_dotted(pf, stmt.value.func, local)
    if maker is not collections.namedtuple and maker is not typing.NamedTuple:
        return None
    reads = {n.id for n in gast.walk(stmt.value) if isinstance(n, gast.Name)
             and isinstance(n.ctx, gast.Load)}
    stores = sum(1 for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
                 and not isinstance(n.ctx, gast.Load) and n.id == name)
    if reads & local or stores != 1:
        return None
    expr = ast.Expression(body=gast.gast_to_ast(stmt.value))
    ast.fix_missing_locations(expr)
    try:
        ns = {r: pf.resolve(r) for r in reads}
        cls = eval(compile(expr, pf.filename, "eval"), dict(pf.fn.__globals__), ns)  # noqa: S307
    except Exception:  # noqa: BLE001  (what the call would raise: Python says so at the call)
        return None
    if not (isinstance(cls, type) and issubclass(cls, tuple)):
        return None
    cls.__qualname__ = f"{pf.fn.__qualname__}.<locals>.{cls.__name__}"
    return cls


def _bindings(pf: ParsedFunction, stmt) -> list:
    """(name, Import) for each name `stmt` binds."""
    if isinstance(stmt, gast.Import):
        return [(a.asname or a.name.partition(".")[0],
                 Import(a.name, None, a.asname is None and "." in a.name, stmt))
                for a in stmt.names]
    if stmt.level:
        raise pf.error(f"a relative import (`from {'.' * stmt.level}{stmt.module or ''} import "
                       f"...`) inside {pf.name}", stmt, hint="import at module level, or write "
                       "the absolute module name", cls=UnsupportedSyntaxError)
    return [(a.asname or a.name, Import(stmt.module, a.name, False, stmt)) for a in stmt.names]


def _star_as_tuple(fdef, with_kwarg: bool = False) -> str | None:
    """`def concat(*xs)` (a function srcad calls, not one it transforms): `xs` is one more
    parameter, the tuple of the extra positional arguments (normalize.user_call packs them).
    A callee that also takes `**kw` keeps both (refused); the transformed function's `**kw`
    becomes a parameter too (`star_params_as_containers`, with_kwarg)."""
    a = fdef.args
    if a.vararg is None or (a.kwarg is not None and not with_kwarg):
        return None
    name = a.vararg.id if isinstance(a.vararg, gast.Name) else a.vararg.arg
    param = gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None)
    a.args = list(a.args) + [gast.copy_location(param, fdef)]
    a.vararg = None
    a.defaults = []  # (no default may follow a parameter without one; callers bind by signature)
    return name


def star_params_as_containers(pf: ParsedFunction) -> None:
    """`def f(x, *rest, **kw)` transformed itself: `rest` is one more parameter, the tuple of
    the extra positional arguments, and `kw` another, the dict of the extra keywords (the
    call binds them through f's own signature, as Python does); both are pytrees like any
    tuple or dict argument."""
    a = pf.tree.args
    if a.kwarg is not None:
        name = a.kwarg.id if isinstance(a.kwarg, gast.Name) else a.kwarg.arg
        if pf.vararg is None and a.vararg is not None:
            pf.vararg = _star_as_tuple(pf.tree, with_kwarg=True)
            pf.params = pf.params + [pf.vararg]
        param = gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None)
        a.args = list(a.args) + [gast.copy_location(param, pf.tree)]
        a.kwarg = None
        a.defaults = []
        pf.varkw = name
        pf.params = pf.params + [name]


def star_params_for_call(pf: ParsedFunction, args: list, kwargs: dict) -> tuple[list, dict]:
    """A callee taking ``*args`` and/or ``**kwargs`` (``def __call__(self, *args, **kwargs):
    return self.forward(*args, **kwargs)``, a decorator's wrapper), specialised to one call:
    each extra positional argument becomes a parameter of its own, each extra keyword too,
    and the body starts by packing them as Python does (``args = (args_0, args_1)``,
    ``kwargs = {"train": kwargs_train}``) -- so `*args` and `**kwargs` in the body are a
    tuple and a dict display of known length and keys, spread like any other. Called once
    per call site (each gets its own generated subroutine). Returns the call's arguments
    for the new parameters: the positional ones, then the rest by keyword.

    Before/after (called as ``wrap(x, 3.0, b=y)``):
        def wrap(a, *args, **kw):          def wrap(a, args_0, kw_b):
            return h(a, *args, **kw)           args = (args_0,)
                                               kw = {"b": kw_b}
                                               return h(a, *args, **kw)
    """
    a = pf.tree.args
    star = pf.vararg or (_arg_name(a.vararg) if a.vararg is not None else None)
    kw = _arg_name(a.kwarg) if a.kwarg is not None else None
    P = inspect.Parameter
    sig = inspect.signature(pf.fn).parameters
    positional = [p for p in pf.params if p != star and p in sig and
                  sig[p].kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    named = [p for p in pf.params if p != star]
    extra = list(args[len(positional):]) if star is not None else []
    given = list(args[:len(positional)]) if star is not None else list(args)
    extra_keys = [k for k in kwargs if k not in named] if kw is not None else []
    taken = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)} | set(pf.params)
    items = [fresh(f"{star}_{i}", taken) for i in range(len(extra))]
    keyed = [fresh(f"{kw}_{k}", taken) for k in extra_keys]

    def param(name):
        return gast.copy_location(gast.Name(id=name, ctx=gast.Param(), annotation=None,
                                            type_comment=None), pf.tree)

    rest = [p for p in named if p not in positional]
    by_name = {p.id: p for p in a.posonlyargs + a.args}
    order = positional + items + rest + keyed
    a.posonlyargs = []
    a.args = [by_name[p] if p in by_name else param(p) for p in order]
    a.vararg = a.kwarg = None
    a.defaults = []  # (callers bind by the signature: user_call fills defaults from it)
    head = []
    if star is not None:
        head.append(gast.Assign(targets=[gast.Name(star, gast.Store(), None, None)],
                                value=gast.Tuple([gast.Name(n, gast.Load(), None, None)
                                                  for n in items], gast.Load())))
    if kw is not None:
        head.append(gast.Assign(targets=[gast.Name(kw, gast.Store(), None, None)],
                                value=gast.Dict([gast.Constant(k, None) for k in extra_keys],
                                                [gast.Name(n, gast.Load(), None, None)
                                                 for n in keyed])))
    for stmt in head:
        gast.copy_location(stmt, pf.tree.body[0])
        for node in gast.walk(stmt):
            gast.copy_location(node, pf.tree.body[0])
    _spread_in_calls(pf.tree, star, items, kw, dict(zip(extra_keys, keyed)))
    pf.tree.body[:0] = head
    pf.params = order
    pf.vararg = None
    new_kwargs = {k: v for k, v in kwargs.items() if k in named}
    new_kwargs.update(zip(keyed, (kwargs[k] for k in extra_keys)))
    return given + extra, new_kwargs


_READ_ONLY = {"get", "keys", "values", "items", "copy", "index", "count"}


def _spread_in_calls(fdef, star, items, kw, keyed) -> None:
    """`f(*args, **kwargs)` in the specialised body: the star parameters' items written out
    (`f(args_0, args_1, train=kwargs_train)`), wherever the body never rebinds or changes
    the tuple / dict (`kwargs.pop("train")` keeps the dict, spread by the call's own rules)."""
    def untouched(name):
        for n in gast.walk(fdef):
            if isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load):
                return False
            if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(
                    n.value, gast.Name) and n.value.id == name and (
                    not isinstance(n.ctx, gast.Load) or (
                        isinstance(n, gast.Attribute) and n.attr not in _READ_ONLY)):
                return False
        return True

    spread_star = star is not None and untouched(star)
    spread_kw = kw is not None and untouched(kw)
    for node in gast.walk(fdef):
        if not isinstance(node, gast.Call):
            continue
        if spread_star:
            args = []
            for a in node.args:
                if isinstance(a, gast.Starred) and isinstance(a.value, gast.Name) and \
                        a.value.id == star:
                    args.extend(gast.copy_location(gast.Name(n, gast.Load(), None, None), a)
                                for n in items)
                else:
                    args.append(a)
            node.args = args
        if spread_kw:
            keywords = []
            for k in node.keywords:
                if k.arg is None and isinstance(k.value, gast.Name) and k.value.id == kw:
                    keywords.extend(gast.copy_location(gast.keyword(
                        arg=key, value=gast.copy_location(
                            gast.Name(n, gast.Load(), None, None), k.value)), k.value)
                        for key, n in keyed.items())
                else:
                    keywords.append(k)
            node.keywords = keywords


def _arg_name(node) -> str:
    return node.id if isinstance(node, gast.Name) else node.arg


def _keyword_only_as_ordinary(fdef) -> None:
    """`def f(x, *, scale=2.0)`: a keyword-only parameter is one more parameter of the
    transformed code (callers bind it by name through the function's own signature, which
    keeps it keyword-only); its default moves with it."""
    a = fdef.args
    if not a.kwonlyargs:
        return
    n = len(a.args) + len(a.posonlyargs)
    defaults = [None] * (n - len(a.defaults)) + list(a.defaults) + list(a.kw_defaults)
    a.args = list(a.args) + list(a.kwonlyargs)
    while defaults and defaults[0] is None:
        defaults.pop(0)
    if any(d is None for d in defaults):  # (a later one without a default: keep them all)
        defaults = []
    a.defaults, a.kwonlyargs, a.kw_defaults = defaults, [], []


def _cells_of(fn) -> dict:
    return dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))


def _closure_of(fn) -> dict:
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: defined later in the enclosing scope
                pass
    return closure


def _parse_lambda(fn) -> ParsedFunction:
    """`srcad.grad(lambda x: ...)`: the lambda's node in its file, as `def lambda_L<n>`."""
    code = fn.__code__
    where = dict(filename=code.co_filename, lineno=code.co_firstlineno)
    try:
        lines, _ = inspect.findsource(fn)
    except (OSError, TypeError) as e:
        raise SrcadError("cannot read the source of this lambda", **where,
                         hint="srcad transforms source code: write the lambda in a .py file, "
                         "or define the function with `def`") from e
    module = gast.parse("".join(lines))
    want = code.co_varnames[: code.co_argcount]
    found = [n for n in gast.walk(module) if isinstance(n, gast.Lambda)
             and n.lineno <= code.co_firstlineno <= n.end_lineno
             and tuple(a.id for a in n.args.args) == tuple(want)]
    if len(found) > 1:  # the code's positions tell the lambdas on one line apart
        spots = {(ln, col) for ln, _, col, _ in code.co_positions() if ln is not None}
        found = [n for n in found if any((getattr(b, "lineno", None), getattr(
            b, "col_offset", None)) in spots for b in gast.walk(n.body))] or found
    if len(found) != 1:
        raise SrcadError(
            "srcad cannot tell which lambda this is: " + (
                f"{len(found)} lambdas with these parameters start on line "
                f"{code.co_firstlineno}" if found else "its source was not found"), **where,
            hint="give the function a name with `def`, or put each lambda on its own line")
    lam = found[0]
    name = f"lambda_L{lam.lineno}"
    ret = gast.copy_location(gast.Return(value=lam.body), lam)
    fdef = gast.FunctionDef(name=name, args=lam.args, body=[ret], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])
    gast.copy_location(fdef, lam)
    filename = inspect.getsourcefile(fn) or code.co_filename
    linecache.checkcache(filename)
    linecache.getlines(filename, fn.__globals__)
    return ParsedFunction(fn=fn, name=name, filename=filename, tree=fdef, first_line=lam.lineno,
                          last_line=lam.end_lineno, params=[a.id for a in lam.args.args],
                          closure=_closure_of(fn), cells=_cells_of(fn))


UNRESOLVED = _UNRESOLVED
