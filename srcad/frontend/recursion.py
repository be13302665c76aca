"""Recursion whose depth the call's static arguments fix: one subroutine per level.

A function that calls itself is normalised once per call, like any user function, so a
recursion srcad follows must end while srcad builds the code. It does when each call is
specialised on what it knows then -- its int arguments and the lengths of its list
arguments -- and the test that ends the recursion reads only those:

    def forward(x, layers):                 forward(x, [W1, W2]) builds three subroutines:
        if not layers:                          layers of length 2, 1, then 0, where
            return x                            `if not layers` is known true: `return x`
        return forward(np.tanh(x @ layers[0]), layers[1:])

    def f(x, n):                            f(x, 3): n is 3, 2, 1, then 0
        return x if n == 0 else f(np.sin(x), n - 1)

A tuple constant is a static argument too (``("tree", value)``): a recursive network over a
parse tree of nested tuples is specialised on each subtree, its reads are the constant, and
``isinstance(node, int)`` / ``isinstance(node, tuple)`` of it (builtin or numpy types) is
folded, so each level keeps the arm Python takes:

    def encode(node, E, W):                 encode(((0, 1), 2), E, W): one subroutine per
        if isinstance(node, int):               subtree -- ((0, 1), 2), (0, 1), 0, 1, 2 --
            return E[node]                      `left, right = node` of the known tuple
        left, right = node                      gives each call its subtree
        return combine(encode(left, E, W), encode(right, E, W))

A node of more than two children walked by ``for child in node:`` or ``[enc(c) for c in
node]`` (``sum(... for c in node)``) is written out once per child (`_Fold.unrolled_loop`,
`_unrolled_comprehension`), so that each call knows its subtree.

An int parameter the body assigns before it recurses (``n = n - 1; return f(x, n)``,
``n -= 1``) is followed statement by statement (`_Fold.block`): its value is known after a
straight-line assignment of a known int, and forgotten where a loop, a branch or any other
store may change it.

The normaliser (normalize.py `user_call`) finds recursion when a function is called while it
is being normalised on the same objects. The first time, it marks the function recursive
(`RECURSIVE`) and normalises the outermost call again; from then on each call of the
function gets its static arguments as `ParsedFunction.statics` (an int constant, a list
display's length, a slice of a list of known length: `static_arguments`), and
`fold_static_arguments` writes them into the function's tree before anything else reads it:
an int parameter's reads become the int, ``len(layers)`` and the truth of ``layers`` become
constants, and tests, conditional expressions and arithmetic of constants are folded, so only
the branch Python takes at that depth is code. A recursive call whose static arguments are
those of a call in progress (the depth hangs on a value known only when the code runs: a
differentiated one, an argument that is no int) or that goes deeper than `MAX_DEPTH` is
refused with a `SrcadError` at its line. A transform of the function itself waits for its
first call's arguments for its own ints and lengths (CountUnknownError), as a loop that
builds objects does.
"""

from __future__ import annotations

import builtins
import copy
import inspect
import operator
import types
import weakref

import gast

from .. import ir
from . import guards
from .opaque import is_user_object
from .parse import UNRESOLVED, parse_function

MAX_DEPTH = 48  # levels of one recursion (each a subroutine of the generated module)

# functions found calling themselves (directly or through others): specialised per call
RECURSIVE: weakref.WeakSet = weakref.WeakSet()


class Recursion(BaseException):
    """A function called while it is being normalised, before it was known recursive: the
    call that is normalising it (its `key`) starts again, specialised (normalize.py). A
    BaseException: no handler of user-facing errors on the way may take it."""

    def __init__(self, key):
        super().__init__(key)
        self.key = key


_CALLS_ITSELF: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def calls_itself(fn, tree) -> bool:
    """Does `fn`'s body (its gast `tree`) call it by its own name -- ``encode(node.left,
    ...)`` of a module function, ``self.forward(node.left)`` of a method? Such a function is
    known recursive before its first call is normalised (`RECURSIVE`), so that the tests
    that end its recursion on a node srcad knows (``if node.isLeaf:``) are folded from the
    first level on -- else the arm Python never takes at a leaf was followed, into a call on
    ``node.left`` = None."""
    if fn in _CALLS_ITSELF:
        return _CALLS_ITSELF[fn]
    name = getattr(fn, "__name__", "")
    params = [a.id for a in tree.args.args if isinstance(a, gast.Name)]
    method = "." in getattr(fn, "__qualname__", "").replace(".<locals>.", "") and params
    found = False
    for n in gast.walk(tree):
        if not isinstance(n, gast.Call):
            continue
        f = n.func
        if isinstance(f, gast.Name) and f.id == name and not method and \
                getattr(fn, "__globals__", {}).get(name) is fn:
            found = True
        elif method and isinstance(f, gast.Attribute) and f.attr == name and \
                isinstance(f.value, gast.Name) and f.value.id == params[0]:
            found = True
    try:
        _CALLS_ITSELF[fn] = found
    except TypeError:  # (not weakly referable)
        pass
    return found


def static_arguments(fn, pf, args: list, kwargs: dict, statics: dict, made) -> dict:
    """{parameter: ("int", v) | ("len", n) | ("tree", t)} for a call of a recursive function:
    int constants (also a known tree's leaf), tuple trees (`tree_of`), list and tuple
    displays, and slices with constant bounds of a name whose length
    is known here (`statics`: the caller's own). `made(name)`: the statements that assign a
    name in the caller."""
    out = {}

    def length(atom):
        if isinstance(atom, ir.Seq):
            return len(atom.items)
        if isinstance(atom, ir.Const) and isinstance(atom.value, (list, tuple)):
            return len(atom.value)
        if not isinstance(atom, ir.Var):
            return None
        if atom.name in statics and statics[atom.name][0] == "len":
            return statics[atom.name][1]
        defs = made(atom.name)
        if len(defs) != 1 or not isinstance(defs[0], ir.Call):
            return None
        st = defs[0]
        if getattr(st.op, "name", "") == "copy":
            return length(next(iter(st.args.values()), None))
        if getattr(st.op, "name", "") != "getitem":
            return None
        index = st.args.get("index")
        if not (isinstance(index, ir.Index) and len(index.parts) == 1
                and isinstance(index.parts[0], ir.Slice)):
            return None
        n = length(st.args.get("a"))
        bounds = []
        for b in (index.parts[0].lower, index.parts[0].upper, index.parts[0].step):
            if b is None or (isinstance(b, ir.Const) and b.value is None):
                bounds.append(None)
            elif isinstance(b, ir.Const) and type(b.value) is int:
                bounds.append(b.value)
            else:
                return None
        if n is None or bounds[2] == 0:
            return None
        return len(range(n)[slice(*bounds)])

    given = list(zip(pf.params, args)) + list(kwargs.items())
    try:  # (a parameter left to its default: `def forward(self, x, i=0)`)
        sig = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        sig = {}
    named = {p for p, _ in given}
    given += [(p, ir.Const(sig[p].default, repr(sig[p].default))) for p in pf.params
              if p not in named and p in sig and type(sig[p].default) in (int, bool)]
    for p, a in given:
        if isinstance(a, ir.Const) and type(a.value) in (int, bool):
            out[p] = ("int", a.value)
        elif isinstance(a, ir.Const) and is_user_object(a.value) and \
                not isinstance(a.value, type):
            # (a node of a tree of user objects, `encode(node.left, ...)`: the node itself
            # -- the object's identity; its attributes are read, guarded, while the code is
            # built, so the depth is the tree's)
            out[p] = ("obj", id(a.value))
        elif (v := tree_of(a, made)) is not None and type(v) in (int, bool):
            out[p] = ("int", v)  # (a tree's leaf: `left, right = node` of a known tree)
        elif v is not None and (is_tree(v) or type(v) is str):
            out[p] = ("tree", v)
        else:
            n = length(a)
            if n is not None:
                out[p] = ("len", n)
    return out


def tree_of(atom, made, depth: int = 0):
    """The constant an argument atom holds when it is a tuple tree's part: a constant, a
    tuple display of them, or a name assigned once from one (``left, right = node`` of a
    tree this level knows: an item of it), else None."""
    if depth > 64:
        return None
    if isinstance(atom, ir.Const):
        return atom.value
    if isinstance(atom, ir.Seq) and atom.kind == "tuple":
        items = [tree_of(x, made, depth + 1) for x in atom.items]
        return None if any(x is None and not (isinstance(a, ir.Const) and a.value is None)
                           for x, a in zip(items, atom.items)) else tuple(items)
    if isinstance(atom, ir.Var):
        defs = made(atom.name)
        if len(defs) != 1 or not isinstance(defs[0], ir.Call):
            return None
        st = defs[0]
        name = getattr(st.op, "name", "")
        if name == "copy" or name == "identity":
            return tree_of(next(iter(st.args.values()), None), made, depth + 1)
        if name == "getitem":
            index = st.args.get("index")
            if isinstance(index, ir.Index) and len(index.parts) == 1:
                index = index.parts[0]
            base = tree_of(st.args.get("a"), made, depth + 1)
            if type(base) is tuple and isinstance(index, ir.Const) and \
                    type(index.value) is int and -len(base) <= index.value < len(base):
                return base[index.value]
    return None


def is_tree(v, budget: list | None = None) -> bool:
    """A tuple of ints, strs, bools, None and such tuples (a parse tree ``((0, 1), (2, 3))``),
    of at most `_TREE_ITEMS` items in all."""
    budget = [_TREE_ITEMS] if budget is None else budget
    if type(v) is not tuple:
        return False
    for x in v:
        budget[0] -= 1
        if budget[0] < 0 or not (x is None or type(x) in (int, bool, str) or
                                 is_tree(x, budget)):
            return False
    return True


_TREE_ITEMS = 4096
_UNROLL = 64  # children of one node whose loop or comprehension is written out


class _Put(gast.NodeTransformer):
    """Reads of `name` as the constant `value` (a comprehension's variable, one child)."""

    def __init__(self, name, value):
        self.name, self.value = name, value

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, gast.Load):
            return gast.copy_location(gast.Constant(value=self.value, kind=None), node)
        return node

    def visit_Lambda(self, node):  # (its parameters may shadow the name)
        return node

    def visit_ListComp(self, node):  # (unless it binds the name itself)
        if any(isinstance(n, gast.Name) and n.id == self.name for g in node.generators
               for n in gast.walk(g.target)):
            return node
        self.generic_visit(node)
        return node

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp


class _Swap(gast.NodeTransformer):
    """Reads of the name `name` as a copy of the expression `by` (a method's `self` as the
    object it is called on)."""

    def __init__(self, name, by):
        self.name, self.by = name, by

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, gast.Load):
            return copy.deepcopy(self.by)
        return node

    def visit_Lambda(self, node):
        return node


def signature(statics: dict | None) -> tuple:
    return tuple(sorted((statics or {}).items()))


# -- folding the static arguments into the tree ----------------------------------------------

_COMPARE = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
            gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
            gast.Is: operator.is_, gast.IsNot: operator.is_not}
_BINARY = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
           gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod}
_JUMPS = (gast.Return, gast.Raise, gast.Break, gast.Continue)


def _const(v, at):
    return gast.copy_location(gast.Constant(value=v, kind=None), at)


def _is_const(e) -> bool:
    return isinstance(e, gast.Constant) and (e.value is None or type(e.value) in (int, bool))


def _stored_in(node) -> set:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, (gast.Store, gast.Del))}


class _Fold(gast.NodeTransformer):
    def __init__(self, ints: dict, lengths: dict, len_is_builtin: bool, held, trees=None,
                 builtin_type=None, rebound=frozenset()):
        self.ints, self.lengths, self.len_is_builtin = ints, lengths, len_is_builtin
        self.held = held  # name -> the user object it holds in every call, or UNRESOLVED
        self.stored_attrs: set = set()  # attribute names the function assigns
        self.trees = dict(trees or {})  # parameter -> the tuple tree it holds at this level
        # name -> the builtin type it is (`int` in `isinstance(node, int)`), or None
        self.builtin_type = builtin_type or (lambda name: None)
        # int parameters the body assigns: followed statement by statement (`block`)
        self.rebound = set(rebound)

    def attribute(self, e):
        """`self.Ws`, `self.depth` of an object known here: its value (each attribute read
        guarded, a list's items too: the code is rebuilt when they change), else
        UNRESOLVED."""
        chain, root = [], e
        while isinstance(root, gast.Attribute):
            chain.append(root.attr)
            root = root.value
        if not chain or not isinstance(root, gast.Name):
            return UNRESOLVED
        obj = self.held(root.id)
        if set(chain) & self.stored_attrs:  # (state the function sets: read as it runs)
            return UNRESOLVED
        for attr in reversed(chain):
            if not is_user_object(obj):
                return UNRESOLVED
            value = getattr(obj, attr, guards.MISSING)
            if value is guards.MISSING:
                return UNRESOLVED
            guards.note_attr(obj, attr, value)
            obj = value
        if isinstance(obj, list):
            guards.note("items", obj, len(obj), obj)
        return obj

    def length(self, e):
        if isinstance(e, gast.Name) and e.id in self.lengths:
            return self.lengths[e.id]
        if isinstance(e, gast.Name) and e.id in self.trees:
            return len(self.trees[e.id])
        v = self.attribute(e) if isinstance(e, gast.Attribute) else UNRESOLVED
        return len(v) if isinstance(v, (list, tuple)) else None

    def truth(self, e):
        """A test's node, with a list of known length as its truth."""
        n = self.length(e) if isinstance(e, (gast.Name, gast.Attribute)) else None
        if n is not None:
            return _const(n > 0, e)
        return self.visit(e)

    def visit_Attribute(self, node):
        if isinstance(node.ctx, gast.Load):
            v = self.attribute(node)
            if v is None or type(v) in (int, bool):
                return _const(v, node)
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node):  # (a nested function has its own names)
        return node

    visit_Lambda = visit_FunctionDef

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.ints:
            return _const(self.ints[node.id], node)
        if isinstance(node.ctx, gast.Load) and node.id in self.trees:
            return _const(self.trees[node.id], node)
        return node

    def _unrolled_comprehension(self, node):
        """``[enc(c) for c in node]`` over a tree this level knows: the list display
        ``[enc(<child 0>), enc(<child 1>), ...]`` (each call then knows its subtree), else
        None."""
        if len(node.generators) != 1:
            return None
        gen = node.generators[0]
        gen.iter = self.visit(gen.iter)
        if gen.ifs or gen.is_async or not isinstance(gen.target, gast.Name) or not (
                isinstance(gen.iter, gast.Constant) and type(gen.iter.value) is tuple and
                len(gen.iter.value) <= _UNROLL):
            return None
        elts = [_Put(gen.target.id, v).visit(copy.deepcopy(node.elt)) for v in gen.iter.value]
        if any(isinstance(n, gast.Name) and n.id == gen.target.id for e in elts
               for n in gast.walk(e)):
            return None  # (read where a lambda or comprehension of its own binds it)
        return self.visit(gast.copy_location(gast.List(elts=elts, ctx=gast.Load()), node))

    def visit_ListComp(self, node):
        out = self._unrolled_comprehension(node)
        if out is not None:
            return out
        self.generic_visit(node)
        return node

    def _isinstance(self, node):
        """``isinstance(c, int)`` / ``isinstance(c, (tuple, list))`` of a constant and
        builtin types: its value (a tree's leaf test), else None."""
        if not (isinstance(node.func, gast.Name) and node.func.id == "isinstance" and
                self.builtin_type(node.func) is isinstance and len(node.args) == 2 and
                not node.keywords and isinstance(node.args[0], gast.Constant)):
            return None
        spec = node.args[1]
        names = spec.elts if isinstance(spec, gast.Tuple) else [spec]
        types_ = [self.builtin_type(n) for n in names]
        if not all(isinstance(t, type) for t in types_):
            return None
        return _const(isinstance(node.args[0].value, tuple(types_)), node)

    def visit_Call(self, node):
        if len(node.args) == 1 and isinstance(node.args[0], gast.GeneratorExp):
            # (`sum(enc(c) for c in node)`: consumed here, once: the list of its items)
            out = self._unrolled_comprehension(node.args[0])
            if out is not None:
                node.args = [out]
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        if not isinstance(node.func, gast.Attribute):  # (`self.forward(...)`: a method)
            node.func = self.visit(node.func)
        elif isinstance(node.func.value, gast.AST):
            self.generic_visit(node.func)
        known = self._isinstance(node)
        if known is not None:
            return known
        known = self.folded_method(node)
        if known is not None:
            return known
        if self.len_is_builtin and isinstance(node.func, gast.Name) and node.func.id == "len" \
                and len(node.args) == 1 and not node.keywords and \
                isinstance(node.args[0], (gast.Name, gast.Attribute)):
            n = self.length(node.args[0])
            if n is not None:
                return _const(n, node)
        return node

    def visit_UnaryOp(self, node):
        node.operand = self.truth(node.operand) if isinstance(node.op, gast.Not) else \
            self.visit(node.operand)
        if _is_const(node.operand):
            if isinstance(node.op, gast.Not):
                return _const(not node.operand.value, node)
            if isinstance(node.op, gast.USub) and node.operand.value is not None:
                return _const(-node.operand.value, node)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        op = _BINARY.get(type(node.op))
        if op is not None and _is_const(node.left) and _is_const(node.right) and \
                node.left.value is not None and node.right.value is not None:
            try:
                return _const(op(node.left.value, node.right.value), node)
            except ZeroDivisionError:
                return node
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1 and type(node.ops[0]) in _COMPARE and _is_const(node.left) and \
                _is_const(node.comparators[0]):
            return _const(bool(_COMPARE[type(node.ops[0])](node.left.value,
                                                           node.comparators[0].value)), node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (gast.Is, gast.IsNot)):
            # (`node.left is None` of a node known here: a child object, so False)
            sides = [node.left, node.comparators[0]]
            for side, other in (sides, sides[::-1]):
                if isinstance(other, gast.Constant) and other.value is None:
                    v = self.known(side)
                    if v is not UNRESOLVED:
                        return _const((v is None) == isinstance(node.ops[0], gast.Is), node)
        return node

    def known(self, e):
        """The value a name or attribute chain of an object known here holds (guarded),
        else UNRESOLVED."""
        if isinstance(e, gast.Attribute):
            return self.attribute(e)
        if isinstance(e, gast.Name):
            return self.held(e.id)
        return UNRESOLVED

    def folded_method(self, node):
        """`node.is_leaf()` of an object known here, where the method (a user's, no
        parameter but `self`) only returns an expression this fold decides --
        ``return self.left is None`` --: that constant, else None."""
        f = node.func
        if node.args or node.keywords or not isinstance(f, gast.Attribute):
            return None
        obj = self.known(f.value)
        if obj is UNRESOLVED or not is_user_object(obj) or isinstance(obj, type):
            return None
        method = inspect.getattr_static(type(obj), f.attr, None)
        if not isinstance(method, types.FunctionType) or not is_user_object(method):
            return None
        try:
            fdef = parse_function(method).tree
        except Exception:  # noqa: BLE001  (no source: left to run)
            return None
        body = [st for st in fdef.body if not (isinstance(st, gast.Expr) and
                                               isinstance(st.value, gast.Constant))]
        params = [a.id for a in fdef.args.args]
        if len(params) != 1 or len(body) != 1 or not isinstance(body[0], gast.Return) or \
                body[0].value is None:
            return None
        guards.note_attr(type(obj), f.attr, getattr(type(obj), f.attr))
        out = self.visit(_Swap(params[0], f.value).visit(copy.deepcopy(body[0].value)))
        return out if _is_const(out) else None

    def visit_BoolOp(self, node):
        node.values = [self.truth(v) for v in node.values]
        stop = isinstance(node.op, gast.Or)  # (`or` stops at a true operand, `and` a false)
        for i, v in enumerate(node.values):
            if not _is_const(v):
                return node
            if bool(v.value) is stop or i == len(node.values) - 1:
                return v
        return node

    def visit_IfExp(self, node):
        node.test = self.truth(node.test)
        if _is_const(node.test):
            return self.visit(node.body if node.test.value else node.orelse)
        node.body, node.orelse = self.visit(node.body), self.visit(node.orelse)
        return node

    def block(self, stmts: list) -> list:
        out = []
        for s in stmts:
            if out and isinstance(out[-1], _JUMPS):
                break  # (after a return the fold brought up: dead)
            if isinstance(s, gast.If):
                s.test = self.truth(s.test)
                if _is_const(s.test):
                    out.extend(self.block(s.body if s.test.value else s.orelse))
                    continue
                before = dict(self.ints)
                s.body = self.block(s.body) or [gast.copy_location(gast.Pass(), s)]
                self.ints = dict(before)
                s.orelse = self.block(s.orelse)
                self.ints = before
                self.forget(_stored_in(s))
                out.append(s)
                continue
            if isinstance(s, (gast.FunctionDef, gast.ClassDef)):
                self.forget({s.name})
                out.append(s)
                continue
            if isinstance(s, gast.For):
                unrolled = self.unrolled_loop(s)
                if unrolled is not None:
                    out.extend(unrolled)
                    continue
            if self.rebound and isinstance(s, (gast.Assign, gast.AugAssign)) and \
                    isinstance(s.targets[0] if isinstance(s, gast.Assign) else s.target,
                               gast.Name) and (not isinstance(s, gast.Assign) or
                                               len(s.targets) == 1):
                # `n = n - 1` of an int parameter: its value from here on, when known
                target = s.targets[0] if isinstance(s, gast.Assign) else s.target
                self.forget(_stored_in(s.value))
                s.value = self.visit(s.value)
                value = s.value
                if isinstance(s, gast.AugAssign) and target.id in self.ints and \
                        type(s.op) in _BINARY and _is_const(value) and value.value is not None:
                    try:
                        value = _const(_BINARY[type(s.op)](self.ints[target.id], value.value), s)
                    except ZeroDivisionError:
                        value = s.value
                elif isinstance(s, gast.AugAssign):
                    value = None
                self.ints.pop(target.id, None)
                if target.id in self.rebound and value is not None and _is_const(value) and \
                        type(value.value) is int:
                    self.ints[target.id] = value.value
                    if isinstance(s, gast.AugAssign):  # (`n -= 1` of an int: `n = 2`)
                        s = gast.copy_location(gast.Assign(
                            targets=[gast.copy_location(gast.Name(
                                id=target.id, ctx=gast.Store(), annotation=None,
                                type_comment=None), target)],
                            value=value, type_comment=None), s)
                out.append(s)
                continue
            self.forget(_stored_in(s))
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list):
                    new = self.block(getattr(s, field))
                    setattr(s, field, new if new or field != "body"
                            else [gast.copy_location(gast.Pass(), s)])
            if isinstance(s, gast.Try):
                for h in s.handlers:
                    h.body = self.block(h.body) or [gast.copy_location(gast.Pass(), h)]
            for field, value in list(gast.iter_fields(s)):
                if field in ("body", "orelse", "finalbody", "handlers"):
                    continue
                if isinstance(value, gast.AST):
                    setattr(s, field, self.visit(value))
                elif isinstance(value, list):
                    setattr(s, field, [self.visit(v) if isinstance(v, gast.AST) else v
                                       for v in value])
            out.append(s)
        return out

    def unrolled_loop(self, s):
        """``for c in node:`` over a tree this level knows (no ``else``, ``break`` or
        ``continue``, `c` not assigned in the body): the body once per child, `c` that child,
        else None."""
        if s.orelse or not isinstance(s.target, gast.Name) or any(
                isinstance(n, (gast.Break, gast.Continue)) for n in gast.walk(s)) or \
                s.target.id in _stored_in(gast.Module(body=s.body, type_ignores=[])):
            return None
        if isinstance(s.iter, (gast.Name, gast.Attribute)) and self.length(s.iter) == 0:
            return []  # (`for c in node.children:` of a leaf known here: no trip)
        it = self.visit(copy.deepcopy(s.iter))
        if not (isinstance(it, gast.Constant) and type(it.value) is tuple and
                len(it.value) <= _UNROLL):
            return None
        name, out = s.target.id, []
        self.forget(_stored_in(s))  # (what the body assigns: not known across iterations)
        for v in it.value:
            out.append(gast.copy_location(gast.Assign(
                targets=[gast.copy_location(gast.Name(id=name, ctx=gast.Store(),
                                                      annotation=None, type_comment=None), s)],
                value=_const(v, s), type_comment=None), s))
            if type(v) in (int, bool):
                self.ints[name] = v
            else:
                self.trees[name] = v
            out.extend(self.block(copy.deepcopy(s.body)))
            self.forget({name})
        self.forget(_stored_in(s))
        return out

    def forget(self, names: set) -> None:
        for n in names:
            self.ints.pop(n, None)
            self.trees.pop(n, None)


def fold_static_arguments(pf) -> None:
    """Write a recursive function's static arguments (`pf.statics`) into its tree, as the
    module docstring says: the int parameters and the lengths of the list parameters that
    the body never assigns."""
    if pf.fn not in RECURSIVE or not pf.statics:
        return
    stored = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
              and isinstance(n.ctx, (gast.Store, gast.Del))}
    written = {t.value.id for n in gast.walk(pf.tree) if isinstance(n, (gast.Assign,
                                                                         gast.AugAssign))
               for t in (n.targets if isinstance(n, gast.Assign) else [n.target])
               if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name)}
    ints = {p: v for p, (kind, v) in pf.statics.items()
            if kind == "int" and p in pf.params}
    # (an int parameter the body assigns too -- `n = n - 1; return f(x, n)` -- is followed
    # statement by statement: `_Fold.block`)
    rebound = {p for p in ints if p in stored}
    trees = {p: v for p, (kind, v) in pf.statics.items()
             if kind == "tree" and p in pf.params and p not in stored}
    lengths = {p: n for p, (kind, n) in pf.statics.items()
               if kind == "len" and p in pf.params and p not in stored | written}
    len_is_builtin = "len" not in stored and pf.resolve("len") is builtins.len
    held = {**pf.known, **pf.constants}

    def holds(name):
        if name in held and name not in stored:
            return held[name]
        return UNRESOLVED

    def builtin_type(node):
        """The builtin or numpy type (or `isinstance`) a name or `np.integer` reads."""
        chain = []
        if isinstance(node, str):
            node = gast.Name(id=node, ctx=gast.Load(), annotation=None, type_comment=None)
        while isinstance(node, gast.Attribute):
            chain.append(node.attr)
            node = node.value
        if not isinstance(node, gast.Name) or node.id in stored or node.id in pf.params:
            return None
        obj = pf.resolve(node.id)
        for attr in reversed(chain):
            if not isinstance(obj, types.ModuleType) or obj.__name__.split(".")[0] != "numpy":
                return None
            obj = getattr(obj, attr, None)
        if obj is isinstance:
            return obj
        if not isinstance(obj, type):
            return None
        if chain:
            return obj if obj.__module__ == "numpy" else None
        return obj if getattr(builtins, node.id, None) is obj else None

    fold = _Fold(ints, lengths, len_is_builtin, holds, trees, builtin_type, rebound)
    fold.stored_attrs = {n.attr for n in gast.walk(pf.tree) if isinstance(n, gast.Attribute)
                         and isinstance(n.ctx, (gast.Store, gast.Del))}
    pf.tree.body = fold.block(pf.tree.body) or [gast.copy_location(gast.Pass(), pf.tree)]
    gast.fix_missing_locations(pf.tree)
