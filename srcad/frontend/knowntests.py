"""Tests known when normalising: `if self.act is None:` of an object srcad already knows.

Layer classes keep optional parts as attributes that are None or not (`act=None`,
`bias=None`, `dropout=None`) and branch on them, often with an early return:

    def __call__(self, x):
        z = x @ self.W
        if self.act is None:
            return z
        return self.act(z)

The object is known when srcad normalises the method (a global layer, a layer of a list,
`self` of a bound method), so Python's branch is known too: this pass keeps only that
branch, before desugar.py turns the early return into flags -- otherwise the other branch
(`self.act(z)` with `act` None) would be code srcad refuses. Each attribute looked up is
guarded (guards.py): set `layer.act = np.tanh` later and the code is rebuilt. An attribute
that a method of the object's class other than `__init__` assigns (or changes in place), or
that this function assigns, is not folded: the call may change it before the test runs
(`self.mark()` setting `self.flag`).

Input: a `ParsedFunction` (its tree, before desugar). Output: the same tree, in place, where
each `if` / `elif` whose test is `<known object>.<attr chain> is None` / `is not None` (or
`not` of one), or a test of an attribute its own branch assigns a literal (the lazy
initialisation `if not self.built: ...; self.built = True`: `set_once`), is replaced by the
statements of the branch Python takes.

Also here, `StaticTest`: the value of any test over known objects' classes and plain
attributes (`layer.trainable`, `type(layer).__name__ == "Dense"`), which the normaliser
(expressions.py `static_truth`) and comprehension filters (objcomps.py) decide with it.

Before/after (with `self.act` None):
    if self.act is None:                 return z
        return z
    return self.act(z)                   return self.act(z)   (after a return: dead)
"""

from __future__ import annotations

import ast
import copy
import inspect
import operator
import os
import types

import gast

from . import guards
from .objects import _changed_attrs
from .opaque import decided_class_test, is_library_module, is_user_object
from .parse import UNRESOLVED, parse_function, rewrite_blocks
from .unknown_writes import is_data, read_as_it_runs


def fold_known_tests(pf) -> None:
    """Rewrite `pf.tree` as the module docstring says."""
    assigned = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
                and isinstance(n.ctx, (gast.Store, gast.Del))}
    held = {**pf.known, **pf.constants}
    stored = stored_attributes(pf.tree)

    def root_object(name: str):
        if name in held and name not in assigned:
            return held[name]
        if name in assigned or name in pf.params:
            return UNRESOLVED
        return pf.resolve(name)

    def known(test):
        """True / False where the test's value is known here, else None."""
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            inner = known(test.operand)
            return None if inner is None else not inner
        if not (isinstance(test, gast.Compare) and len(test.ops) == 1 and
                isinstance(test.ops[0], (gast.Is, gast.IsNot))):
            return None
        left, right = test.left, test.comparators[0]
        if isinstance(left, gast.Constant) and left.value is None:
            left, right = right, left
        if not (isinstance(right, gast.Constant) and right.value is None):
            return None
        if isinstance(left, gast.Name) and left.id in pf.params and left.id in held \
                and left.id not in assigned:  # (a parameter every call here passes None or
            is_none = held[left.id] is None  # an object: `def dense(x, W, act=None)`)
            return is_none if isinstance(test.ops[0], gast.Is) else not is_none
        if not isinstance(left, gast.Attribute):
            return None
        chain, root = [], left
        while isinstance(root, gast.Attribute):
            chain.append(root.attr)
            root = root.value
        if not isinstance(root, gast.Name):
            return None
        obj = root_object(root.id)
        if obj is UNRESOLVED or not is_user_object(obj):
            return None
        for attr in reversed(chain):
            if not is_user_object(obj):
                return None  # (an array's or a container's attribute: read when it runs)
            if may_change(obj, attr, stored):
                return None
            value = getattr(obj, attr, guards.MISSING)
            if value is guards.MISSING:
                return None
            guards.note_attr(obj, attr, value)
            obj = value
        is_none = obj is None
        return is_none if isinstance(test.ops[0], gast.Is) else not is_none

    def block(stmts):
        out = []
        for s in stmts:
            if out and isinstance(out[-1], _JUMPS):
                break  # (after a return the branch brought up: dead, as Python never runs it)
            if isinstance(s, gast.If):
                truth = known(s.test)
                once = set_once(s.test, s.body) if truth is None else frozenset()
                if once:  # (`if not self.built: self.build(shape); self.built = True`)
                    truth = StaticTest(lambda n: UNKNOWN if (held := root_object(n)) is
                                       UNRESOLVED else held, stored, once=once).truth(s.test)
                if truth is not None:
                    out.append(_still(s.test, truth, pf))
                    out.extend(block(s.body if truth else s.orelse))
                    continue
            rewrite_blocks(s, block)
            if isinstance(s, gast.Try):
                for h in s.handlers:
                    h.body = block(h.body) or [_pass(h)]
            out.append(s)
        return out

    pf.tree.body = block(pf.tree.body) or [_pass(pf.tree)]
    gast.fix_missing_locations(pf.tree)


_JUMPS = (gast.Return, gast.Raise, gast.Break, gast.Continue)


def stored_attributes(tree) -> set:
    """The attribute names `tree` assigns or deletes (`x.flag = 1` of any x)."""
    return {n.attr for n in gast.walk(tree) if isinstance(n, gast.Attribute)
            and isinstance(n.ctx, (gast.Store, gast.Del))}


def may_change(obj, attr: str, stored: set) -> bool:
    """May `obj.attr` hold another value when a test of it runs than it holds now? Yes where
    the function assigns that name (`stored`), or a method of obj's class other than
    `__init__` assigns it or changes it in place (`self.mark()` setting `self.flag` before
    the test), or code the call runs as written may (`object.__setattr__(CFG, "train",
    True)`: unknown_writes.py): such a test runs as written, not folded."""
    return attr in stored or attr in _changed_attrs(type(obj)) or (
        is_data(obj, getattr(obj, attr, None)) and read_as_it_runs(obj))  # (unknown_writes.py)


# the messages of the checks srcad puts where it decided a test when it built the code (here,
# expressions.py `static_truth`, calls.py): the API (transformed.py `refuse_decided_test`)
# turns the AssertionError that carries one into a SrcadError at the user's line
STILL = ("srcad: this `if` was decided from the attribute's value when srcad built the code, "
         "and the attribute changed during the call before the test ran (the function, or code "
         "it calls, rebinds it between two calls of the method): srcad does not take the other "
         "branch of a test it decided")
DECIDED = "srcad: a test decided from .{} when the code was built; it changed during the call"
CHANGED_DURING_CALL = "srcad: hasattr decided when the code was built; added or deleted since"
REGISTERED = "srcad: isinstance decided when the code was built; a class registered since"
DECIDED_CHECKS = (STILL, DECIDED.split("{}")[0], CHANGED_DURING_CALL, REGISTERED)
DECIDED_HINT = ("set the attribute (or register the class) before calling the transformed "
                "function, or pass the choice as an argument (`layer(x, act=np.tanh)`)")


def decided_at(text: str, filename: str | None, line: int) -> str:
    """A decided test's check message, with where the test stands (the generated code's
    `# L<n>` of a method written out into its caller is the method's line, in its own file:
    transformed.py `refuse_decided_test` reads the place from here)."""
    return f'{text} (at "{filename}", line {line})' if filename else text


def _still(test, truth: bool, pf):
    """`assert <test>` (or `not`), checked when the code runs: the branch was chosen from the
    attribute's value when srcad built the code, and something the call does (a caller
    rebinding it between two calls of the method: `y = layer(x); layer.act = np.tanh`) may
    change it -- then the call fails at this line (a SrcadError: transformed.py
    `refuse_decided_test`) rather than take the other branch silently."""
    at, spelled = test, ast.unparse(gast.gast_to_ast(test))
    test = copy.deepcopy(test)
    for n in gast.walk(test):
        if isinstance(n, gast.Compare):
            n.srcad_at_run_time = True  # (expressions.py: not folded again)
    if not truth:
        test = gast.copy_location(gast.UnaryOp(op=gast.Not(), operand=test), at)
    msg = gast.Constant(value=decided_at(f"{STILL}: `if {spelled}:`", pf.filename,
                                         at.lineno), kind=None)
    out = gast.copy_location(gast.Assert(test=test, msg=msg), at)
    gast.fix_missing_locations(out)
    return out


def _pass(at):
    return gast.copy_location(gast.Pass(), at)


# -- tests of objects' plain attributes, decided when the code is built --------------------

UNKNOWN = object()  # a value known only when the code runs
_LITERALS = (type(None), bool, int, float, str)
_STR_METHODS = frozenset({"startswith", "endswith", "lower", "upper", "casefold", "strip",
                          "lstrip", "rstrip"})
_ORDER = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
          gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge}


def _literal(v) -> bool:
    """A value Python compares by value here: a literal, a class, a tuple of them."""
    if type(v) in _LITERALS or isinstance(v, type):
        return True
    return type(v) is tuple and all(_literal(x) for x in v)


def _instance(v) -> bool:
    """An instance of a user class (not the class, not a function)."""
    return is_user_object(v) and not isinstance(
        v, (type, types.FunctionType, types.MethodType))


def _source_file(obj) -> str | None:
    try:
        return inspect.getsourcefile(obj)
    except TypeError:
        return None


_SET_IN_FILE: dict = {}


def set_in_file(path: str | None) -> frozenset:
    """The attribute names a function of the source file at `path` sets (`x.training =
    False`, `setattr(x, "training", ...)`), outside `__init__` / `__post_init__`: a value a
    test of them reads may change during a call -- `model.eval()` flipping each layer's flag
    -- so StaticTest leaves such tests to run. (Statements at a module's top level run before
    any call: not counted.) Cached per file and modification time."""
    if path is None:
        return frozenset()
    try:
        stat = os.stat(path)
        key = (path, stat.st_mtime_ns, stat.st_size)
        if key not in _SET_IN_FILE:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            _SET_IN_FILE[key] = frozenset(_set_by_functions(tree))
        return _SET_IN_FILE[key]
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return frozenset()


def _set_by_functions(tree) -> set:
    out: set = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or \
                getattr(fn, "name", "") in ("__init__", "__post_init__"):
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
                out.add(n.attr)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                    n.func.id in ("setattr", "delattr") and len(n.args) >= 2 and \
                    isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str):
                out.add(n.args[1].value)
    return out


def set_once(test, body) -> frozenset:
    """The attributes `test` reads that the branch `body` itself assigns a literal at its
    top level -- the lazy-initialisation idiom, `if not self.built: self.build(shape);
    self.built = True` --: StaticTest decides such a test even though the code assigns the
    attribute (the branch is what sets it; it is read again where the test stands, so a
    reset during the call stops the call there)."""
    def spelled(e):
        parts = []
        while isinstance(e, gast.Attribute):
            parts.append(e.attr)
            e = e.value
        return tuple([e.id, *reversed(parts)]) if isinstance(e, gast.Name) else None

    read = {spelled(n) for n in gast.walk(test) if isinstance(n, gast.Attribute)}
    return frozenset(
        st.targets[0].attr for st in body
        if isinstance(st, gast.Assign) and len(st.targets) == 1 and
        isinstance(st.targets[0], gast.Attribute) and isinstance(st.value, gast.Constant) and
        spelled(st.targets[0]) in read)


class Known:
    """What `root` gives for a name the code itself bound to a literal (normalize.py
    `literal_value`): decided like an object's attribute, with nothing to guard."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class StaticTest:
    """The value of a test over objects srcad knows here (the layers of a loop written out
    once per layer, `self` of a method called on a known object), computed now, as Python
    would when the test runs:

        layer.trainable                      type(layer).__name__ == "Dense"
        layer.name.startswith("conv")        layer.__class__ is Dense
        layer.kind in ("dense", "conv")      layer.layer_name() == "Dense"  (a method that
        not layer.frozen and layer.bias is not None                  only returns a value)
        layer.layer_name() == "Activation (ReLU)"  (strings joined by `+` or `%`)

    so that only the branch Python takes becomes code -- a weight stored into the layers a
    test picks (`if layer.trainable: layer.W = Ws[i]`) is then a store into known objects,
    followed, not refused. Each attribute read is guarded (guards.py: the code is rebuilt if
    it is rebound); an attribute this function stores, a method of the class other than
    `__init__` sets, or a function of the class's or a base class's source file sets
    (`set_in_file`: `model.train()` flipping its layers' flags) is not read (`may_change`),
    nor a property's getter (code) or an array's value -- unless the test's own branch
    assigns it (`once`: `set_once`). `root(name)` gives a name's object or UNKNOWN.
    `truth(test)` is True / False, or None where anything in it is known only when the code
    runs."""

    def __init__(self, root, stored: set, depth: int = 0, once: frozenset = frozenset()):
        self.root, self.stored, self.depth, self.once = root, stored, depth, once
        self.consulted = False  # (an object's attribute or class read: else nothing to add)
        # (object, attribute, value, "attr" | "has") of plain values read; (subject, classes,
        # False, "isinstance" | "issubclass") of an ABC's answer
        self.reads: list = []

    def truth(self, e) -> bool | None:
        try:
            v = self.value(e)
        except Exception:  # noqa: BLE001  (Python would raise when it runs: leave it to it)
            return None
        if v is UNKNOWN or not self.consulted or type(v) not in _LITERALS:
            return None
        return bool(v)

    def value(self, e):
        if isinstance(e, gast.Constant):
            return e.value
        if isinstance(e, gast.Name):
            v = self.root(e.id)
            if isinstance(v, Known):
                self.consulted = True
                return v.value
            return v
        if isinstance(e, gast.Attribute):
            return self.attribute(self.value(e.value), e.attr)
        if isinstance(e, gast.Call):
            return self.call(e)
        if isinstance(e, (gast.Tuple, gast.List)) and not any(
                isinstance(x, gast.Starred) for x in e.elts):
            items = tuple(self.value(x) for x in e.elts)  # (`kind in ("dense", "conv")`)
            return UNKNOWN if UNKNOWN in items or not _literal(items) else items
        if isinstance(e, gast.Compare):
            left = self.value(e.left)
            for op, right_e in zip(e.ops, e.comparators):
                right = self.value(right_e)
                if UNKNOWN in (left, right):
                    return UNKNOWN
                if isinstance(op, (gast.Is, gast.IsNot)):
                    ok = (left is right) is isinstance(op, gast.Is)
                elif type(op) in _ORDER and _literal(left) and _literal(right):
                    ok = _ORDER[type(op)](left, right)
                elif isinstance(op, (gast.In, gast.NotIn)) and _literal(left) and (
                        type(right) is str and type(left) is str or
                        type(right) is tuple and _literal(right)):
                    ok = (left in right) is isinstance(op, gast.In)
                else:
                    return UNKNOWN
                if not isinstance(ok, bool):
                    return UNKNOWN
                if not ok:
                    return False
                left = right
            return True
        if isinstance(e, gast.BoolOp):
            v = UNKNOWN
            for operand in e.values:  # (Python's short circuit: the operand that decides)
                v = self.value(operand)
                if v is UNKNOWN or type(v) not in _LITERALS:
                    return UNKNOWN
                if bool(v) is isinstance(e.op, gast.Or):
                    return v
            return v
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Not):
            v = self.value(e.operand)
            return UNKNOWN if v is UNKNOWN or type(v) not in _LITERALS else not v
        if isinstance(e, gast.BinOp) and isinstance(e.op, (gast.Add, gast.Mod)):
            # (a name built from strings: `"Activation (%s)" % type(f).__name__`,
            # `prefix + "dense"` -- a `layer_name()` of a layer library)
            left, right = self.value(e.left), self.value(e.right)
            if type(left) is not str or not (type(right) is str or isinstance(
                    e.op, gast.Mod) and _literal(right) and not isinstance(right, type)):
                return UNKNOWN
            try:
                return left + right if isinstance(e.op, gast.Add) else left % right
            except (TypeError, ValueError):
                return UNKNOWN
        return UNKNOWN

    def attribute(self, base, attr: str, default=UNKNOWN):
        if base is UNKNOWN:
            return UNKNOWN
        if _instance(base):
            if attr == "__class__":
                self.consulted = True
                return type(base)
            if attr.startswith("__") or (attr not in self.once and (
                    may_change(base, attr, self.stored) or any(
                        attr in set_in_file(_source_file(c)) for c in type(base).__mro__
                        if c is not object))) or \
                    inspect.getattr_static(type(base), "__getattr__", None) is not None:
                return UNKNOWN
            found = inspect.getattr_static(base, attr, guards.MISSING)
            if found is guards.MISSING:
                if default is UNKNOWN:
                    return UNKNOWN
                guards.note("has", base, attr, False)
                self.consulted = True
                self.reads.append((base, attr, False, "has"))
                return default
            if attr not in getattr(base, "__dict__", {}) and hasattr(type(found), "__get__") \
                    and not isinstance(found, (types.FunctionType, staticmethod, classmethod,
                                               types.MemberDescriptorType)):
                return UNKNOWN  # (a property, a descriptor: code that runs at each read)
            value = getattr(base, attr)
            guards.note_attr(base, attr, value)
            self.consulted = True
            if type(value) in _LITERALS:
                self.reads.append((base, attr, value, "attr"))
            return value
        if isinstance(base, type) and attr in ("__name__", "__qualname__", "__module__"):
            return getattr(base, attr)
        if type(base) is str and attr in _STR_METHODS:
            return getattr(base, attr)
        if isinstance(base, types.ModuleType) and is_library_module(base):
            return getattr(base, attr, UNKNOWN)  # (`np.ndarray` in an isinstance)
        return UNKNOWN

    def call(self, e):
        if e.keywords or any(isinstance(a, gast.Starred) for a in e.args):
            return UNKNOWN
        fn = self.value(e.func)
        if fn is getattr and len(e.args) in (2, 3):
            base, name = self.value(e.args[0]), self.value(e.args[1])
            default = self.value(e.args[2]) if len(e.args) == 3 else UNKNOWN
            if type(name) is not str or (len(e.args) == 3 and default is UNKNOWN):
                return UNKNOWN
            return self.attribute(base, name, default)
        args = [self.value(a) for a in e.args]
        if fn is UNKNOWN or UNKNOWN in args:
            return UNKNOWN
        if fn is type and len(args) == 1:
            self.consulted = self.consulted or _instance(args[0])
            return type(args[0])
        if fn in (isinstance, issubclass) and len(args) == 2:
            registered: list = []  # (an ABC's False: a class registered may change it)
            answer = decided_class_test(fn, *args, registered)
            if answer is None:
                return UNKNOWN
            if registered:
                guards.note_registrations()
                self.reads.append((args[0], args[1], False, fn.__name__))
            self.consulted = self.consulted or _instance(args[0])
            return answer
        if fn is hasattr and len(args) == 2 and type(args[1]) is str and \
                _instance(args[0]) and \
                inspect.getattr_static(type(args[0]), "__getattr__", None) is None:
            # (an attribute the call sets later -- `if hasattr(layer, "W"): layer.W = W` --
            # too: its `has` is read again where the test runs, like calls.py's fold)
            found = hasattr(args[0], args[1])
            guards.note("has", args[0], args[1], found)
            self.consulted = True
            self.reads.append((args[0], args[1], found, "has"))
            return found
        if fn is len and len(args) == 1 and type(args[0]) in (str, tuple):
            return len(args[0])
        if isinstance(fn, types.BuiltinMethodType) and type(fn.__self__) is str and \
                fn.__name__ in _STR_METHODS and all(_literal(a) for a in args):
            return fn(*args)
        if isinstance(fn, types.MethodType) and _instance(fn.__self__):
            return self.returned(fn, args)
        return UNKNOWN

    def returned(self, method, args):
        """What a method whose body only returns an expression (`def layer_name(self):
        return self.__class__.__name__`) returns for these arguments, else UNKNOWN."""
        if self.depth >= 4:
            return UNKNOWN
        try:
            pf = parse_function(method.__func__)
        except Exception:  # noqa: BLE001  (no source: not known here)
            return UNKNOWN
        fdef = pf.tree
        if not isinstance(fdef, gast.FunctionDef) or fdef.decorator_list:
            return UNKNOWN
        body = [s for s in fdef.body if not (isinstance(s, gast.Expr) and isinstance(
            s.value, gast.Constant) and isinstance(s.value.value, str))]
        a = fdef.args
        if len(body) != 1 or not isinstance(body[0], gast.Return) or body[0].value is None \
                or a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or \
                len(a.args) != len(args) + 1:
            return UNKNOWN
        bound = dict(zip((p.id for p in a.args), (method.__self__, *args)))

        def root(name):
            if name in bound:
                return bound[name]
            held = pf.resolve(name)  # (a guarded global of the method's module)
            return UNKNOWN if held is UNRESOLVED else held

        inner = StaticTest(root, self.stored, self.depth + 1)
        value = inner.value(body[0].value)
        self.consulted = self.consulted or inner.consulted
        self.reads.extend(inner.reads)
        return value
