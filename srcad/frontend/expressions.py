"""Normalising expressions: each one to an atom, its ops emitted as `ir.Call`s (a mixin).

Input: a gast expression of the user's function (a name, a constant, an operator, a
comparison, `and`/`or`, `a if t else b`, an attribute, a subscript, a call), the hint its
temporaries are named after, and `into`: the user's variable the top-level op writes, if any.
Output: an atom (`ir.Var`, `ir.Const`, `ir.Seq`, `ir.Index`); every op the expression needs
is appended to the normaliser's body as an `ir.Call` of an op-table row, bound to the row's
parameters (`op_call`). Python's operators map to their numpy rows (`_BINOPS`, `_CMPOPS`);
`a and b` and `a if t else b` become branches that assign one flag name (Python's short
circuit); a global becomes a constant, spelled as generated code can read it (`_const_src`)
or injected under its name.

Before/after (``h = np.tanh(x @ W + b)``, into=("h", line)):
    x @ W + b          h_matmul = x @ W
                       h_add = h_matmul + b
    np.tanh(...)       h = np.tanh(h_add)            (the top-level op writes h)

`ExpressionsMixin` holds these methods of the normaliser (srcad/frontend/normalize.py).
"""

from __future__ import annotations

import inspect
import operator
import re
import types

import gast
import numpy as np

from .. import ir
from ..errors import NoRuleError, UnresolvedNameError, UnsupportedSyntaxError
from ..ops import control, table
from ..ops.python_rows import dict_literal_op, field_op
from ..runtime_linalg import is_sparse, sparse_matmul
from ..runtime_python import dict_copy, list_concat
from . import concatenators, guards
from .aliasing import _whole_slice
from .calls import _RETURN
from .opaque import rowed_callable  # noqa: F401  (re-exported: normalize.py)
from .concatenators import is_concatenator
from .knowntests import CHANGED_DURING_CALL, DECIDED, REGISTERED, UNKNOWN, Known, StaticTest, \
    decided_at, may_change, set_in_file, stored_attributes
from .methods import ATTRIBUTES
from .unknown_writes import is_data, read_as_it_runs
from .objects import delegated_sequence
from .opaque import (
    class_attribute,
    folds_as_dict_item,
    is_namedtuple_type,
    is_object_mapping,
    is_object_sequence,
    is_user_object,
    opaque_attribute,
    opaque_compare,
)
from .parse import LIFTED, UNRESOLVED

_BINOPS = {
    gast.Add: np.add,
    gast.Sub: np.subtract,
    gast.Mult: np.multiply,
    gast.Div: np.true_divide,
    gast.Pow: np.power,
    gast.MatMult: np.matmul,
    gast.FloorDiv: operator.floordiv,
    gast.Mod: operator.mod,
    gast.BitAnd: np.bitwise_and,
    gast.BitOr: np.bitwise_or,
}
_CMPOPS = {
    gast.Lt: np.less,
    gast.LtE: np.less_equal,
    gast.Gt: np.greater,
    gast.GtE: np.greater_equal,
    gast.Eq: np.equal,
    gast.NotEq: np.not_equal,
}
_PY_TESTS = {gast.Is: "is", gast.IsNot: "is not", gast.In: "in", gast.NotIn: "not in"}
PY_BINARY = {"add", "subtract", "multiply", "divide", "power", "matmul", "floordiv", "mod",
             "bitwise_and", "bitwise_or"}  # the rows of _BINOPS


def _const_src(value, fallback_name: str | None) -> str | None:
    """How generated code spells a constant, or None to inject it under a name."""
    if isinstance(value, float) and value != value:
        return "np.nan"  # (repr gives `nan` and `inf`, which generated code cannot read)
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "np.inf" if value > 0 else "-np.inf"
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if value is Ellipsis:
        return "..."
    if isinstance(value, type) and getattr(np, value.__name__, None) is value:
        return f"np.{value.__name__}"
    if isinstance(value, tuple) and all(isinstance(v, (int, float, bool)) for v in value):
        return repr(value)
    return None



# attributes and methods of a scipy.sparse matrix that give one back (run as scipy runs them)
_SPARSE_KEEPS = frozenset({"T", "transpose", "tocsr", "tocsc", "tocoo", "copy", "astype"})

class ExpressionsMixin:
    """`expr` and its helpers, for the `Normalizer` (normalize.py)."""

    def property_getter(self, e: gast.Attribute, hint: str):
        """``layer.weights`` where the object is known here and its class makes `weights` a
        @property: its getter's call site (a user function called with the object), so that
        what the getter reads (``self._W``, stored earlier in the call) carries its gradient
        -- read as a plain attribute, its value was a constant of the call: zeros, silently.
        A user's descriptor class there (its ``__get__`` runs code srcad does not follow) is
        refused. None: not such a read."""
        obj = self.known_object(e.value)
        if obj is None or isinstance(obj, type) or not is_user_object(obj):
            return None
        owner, raw = class_attribute(type(obj), e.attr)
        if owner is None and e.attr not in (getattr(obj, "__dict__", None) or {}) and \
                not e.attr.startswith("__"):
            # `model.W` found by the class's `__getattr__` (`return self._params[k]`): that
            # method, called as Python calls it -- read as a plain attribute, a value the
            # call stored where it looks (`model._params["W"] = W`) came back a constant
            hook = class_attribute(type(obj), "__getattr__")[1]
            if isinstance(hook, types.FunctionType) and is_user_object(hook):
                guards.note_attr(type(obj), "__getattr__", hook)
                spelled = "_".join(p for p in hook.__qualname__.split(".") if p != "<locals>")
                return ("user", hook, spelled, [self.expr(e.value, hint, None),
                                                ir.Const(e.attr, repr(e.attr))], {}, False)
        if isinstance(raw, property) and isinstance(raw.fget, types.FunctionType) and \
                is_user_object(raw.fget):
            guards.note_attr(owner, e.attr, raw)
            spelled = "_".join(p for p in raw.fget.__qualname__.split(".") if p != "<locals>")
            return ("user", raw.fget, spelled, [self.expr(e.value, hint, None)], {}, False)
        if raw is not None and hasattr(type(raw), "__get__") and \
                hasattr(type(raw), "__set__") and is_user_object(type(raw)):
            raise self.unsupported(
                f"`{type(obj).__name__}.{e.attr}` is a descriptor ({type(raw).__name__}) whose "
                f"`__get__` srcad does not follow", e,
                "read the attribute it reads, or use a @property")
        return None

    def emit(self, call_parts, target: str, node) -> ir.Var:
        op, args = call_parts
        self.body.append(ir.Call(target, op, args, node.lineno))
        self.note_int(self.body[-1])
        self.made.setdefault(target, []).append(self.body[-1])
        return ir.Var(target)

    def result(self, call_parts, hint: str, into, node) -> ir.Var:
        """Emit an op; into=(user name, line) names it as that user variable."""
        if into is _RETURN:
            return self.emit(call_parts, self.fresh(self.pf.name), node)
        joined = _joined_displays(call_parts) or _copied_display(call_parts)
        if call_parts[0].fn is dict_copy:
            call_parts = self.copied_dict(call_parts)
        if joined is not None and (into is None or into[0] not in self.mutable):
            # two list displays joined (`lst.pop(i)`'s `lst[:i] + lst[i:][1:]`, `[a] + [b]`
            # of pylower.py): the display of their items, so a run-time index into it is
            # still a read of a known item (its cotangent added into that item's adjoint
            # where it is read, as tape mode adds it)
            if into is not None:
                self.env[into[0]] = joined
            return joined
        if into is not None:
            user, line = into
            target = self.def_name(user, line)
            reads = {n for a in call_parts[1].values() for n in ir.atom_vars(a)}
            if target in reads:  # `h = h + b` in a loop: compute, then copy into h
                tmp = self.emit(call_parts,
                                self.fresh(f"{user}_{call_parts[0].name.lstrip('.')}"), node)
                op, args = self.op_call(control.identity, [tmp], {}, node)
                self.body.append(ir.Call(target, op, args, node.lineno))
            else:
                self.emit(call_parts, target, node)
            var = ir.Var(target)
            self.env[user] = var
            return var
        opname = call_parts[0].name.lstrip(".")  # (a method with no rule: ".random")
        return self.emit(call_parts, self.fresh(f"{hint}_{opname}"), node)

    def copied_dict(self, call_parts):
        """`dict(d)` of a dict whose entries srcad knows here (a display, stores into one):
        the display of the same entries (the very same objects, as Python's shallow copy
        holds: a write in place through one dict's value shows in the other's); else the
        call as it is."""
        items = self.list_items_of_atom(next(iter(call_parts[1].values()), None))
        if not items or not all(type(k) in (str, int) for k, _ in items):
            return call_parts
        args = {}
        for i, (k, atom) in enumerate(items):
            args[f"k{i}"], args[f"v{i}"] = ir.Const(k, repr(k)), atom
        return dict_literal_op(len(items)), args

    def is_sparse_atom(self, a) -> bool:
        """Does `a` hold a scipy.sparse matrix: a module's or an argument's (a constant),
        or its transpose or another format of it (`L.T`, `L.tocsc()`)?"""
        for _ in range(16):
            if isinstance(a, ir.Const):
                return is_sparse(a.value)
            if not isinstance(a, ir.Var):
                return False
            defs = self.definitions(a.name)
            if len(defs) != 1 or not isinstance(defs[0], ir.Call) or \
                    defs[0].op.name.lstrip(".") not in _SPARSE_KEEPS:
                return False
            a = defs[0].args.get("_obj")
        return False

    def expr(self, e, hint: str, into):
        """Lower `e` to an atom; with `into`, the top-level op writes the user's variable."""
        if isinstance(e, gast.Constant):
            return ir.Const(e.value, _const_src(e.value, None) or repr(e.value))
        if isinstance(e, gast.Name):
            return self.name_atom(e)
        if isinstance(e, (gast.Tuple, gast.List)) and any(
                isinstance(x, gast.Starred) for x in e.elts):
            return self.starred_display(e, hint, into)
        if isinstance(e, (gast.Tuple, gast.List)):
            items = tuple(self.expr(x, hint, None) for x in e.elts)
            return ir.Seq(items, "tuple" if isinstance(e, gast.Tuple) else "list")
        if isinstance(e, gast.BinOp):
            fn = _BINOPS.get(type(e.op))
            if fn is None:
                raise self.unsupported(f"the operator {type(e.op).__name__}", e)
            left = self.expr(e.left, hint, None)
            right = self.expr(e.right, hint, None)
            # Python's list and tuple `+` concatenates: known items make one sequence. Other
            # operators on sequences run as Python runs them (`x.shape + (1,)`); where a
            # gradient would flow through the sequence, the first call refuses
            # (probe.refuse_sequence_arithmetic)
            if isinstance(e.op, gast.Add) and isinstance(left, ir.Seq) and isinstance(
                    right, ir.Seq) and left.kind == right.kind:
                return ir.Seq(left.items + right.items, left.kind)
            if isinstance(e.op, gast.Add) and isinstance(left, ir.Const) and isinstance(
                    right, ir.Const) and type(left.value) is str and type(right.value) is str:
                # (`"Affine" + str(idx)` of a loop written out per index: the key, known)
                return ir.Const(left.value + right.value, repr(left.value + right.value))
            if fn is np.matmul and any(self.is_sparse_atom(a) for a in (left, right)):
                fn = sparse_matmul  # (`L @ x` of a module's scipy.sparse matrix: its row)
            return self.result(self.op_call(fn, [left, right], {}, e), hint, into, e)
        if isinstance(e, gast.UnaryOp):
            operand = self.expr(e.operand, hint, None)
            if isinstance(e.op, gast.UAdd):
                return operand
            if isinstance(e.op, gast.USub):
                if isinstance(operand, ir.Const) and isinstance(operand.value, (int, float)):
                    return ir.Const(-operand.value, _const_src(-operand.value, None))
                return self.result(self.op_call(np.negative, [operand], {}, e), hint, into, e)
            if isinstance(e.op, gast.Not):
                truth = known_truth(operand)
                if truth is not None:  # (`not isinstance(layer, Dense)` known here)
                    return ir.Const(not truth, repr(not truth))
                return self.result(self.op_call(np.logical_not, [operand], {}, e), hint, into, e)
            if isinstance(e.op, gast.Invert):  # `~mask`: no gradient, Python's own `~`
                return self.result(self.op_call(np.invert, [operand], {}, e), hint, into, e)
            raise self.unsupported(f"the operator {type(e.op).__name__}", e)
        if isinstance(e, gast.Compare) and len(e.ops) == 1 and \
                isinstance(e.ops[0], (gast.Is, gast.IsNot)) and \
                not getattr(e, "srcad_at_run_time", False):
            known = self.known_is_none(e.left, e.comparators[0])
            if known is not None:  # `self.act is not None`, the attribute guarded
                value = known if isinstance(e.ops[0], gast.Is) else not known
                return ir.Const(value, repr(value))
        if isinstance(e, gast.Compare):
            # a < b < c is (a < b) and (b < c), each operand evaluated once
            operands = [self.expr(x, hint, None) for x in [e.left, *e.comparators]]
            tests = []
            for op, lhs, rhs in zip(e.ops, operands, operands[1:]):
                last = len(tests) == len(e.ops) - 1
                if isinstance(op, (gast.Is, gast.IsNot)) and isinstance(lhs, ir.Const) and \
                        isinstance(rhs, ir.Const) and len(e.ops) == 1 and any(
                            v.value is None or type(v.value) is bool for v in (lhs, rhs)):
                    # `self.act is not None` of an attribute known here (its lookup guarded)
                    same = lhs.value is rhs.value
                    value = same if isinstance(op, gast.Is) else not same
                    return ir.Const(value, repr(value))
                if isinstance(op, (gast.Eq, gast.NotEq)) and len(e.ops) == 1 and all(
                        isinstance(v, ir.Const) and type(v.value) is str for v in (lhs, rhs)):
                    # `HP["act"] == "tanh"` of a config string folded (and guarded) here:
                    # known, so that `np.tanh if ... else relu` picks its function now
                    same = lhs.value == rhs.value
                    value = same if isinstance(op, gast.Eq) else not same
                    return ir.Const(value, repr(value))
                if type(op) in _PY_TESTS:  # `y is None`, `"seed" in params`: as Python does
                    call = (opaque_compare(_PY_TESTS[type(op)]), {"_a0": lhs, "_a1": rhs})
                else:
                    call = self.op_call(_CMPOPS[type(op)], [lhs, rhs], {}, e)
                tests.append(self.result(call, hint, into, e) if last and len(e.ops) == 1
                             else self.result(call, hint, None, e))
            return self.combine(np.logical_and, tests, hint, into, e) if len(tests) > 1 \
                else tests[0]
        if isinstance(e, gast.BoolOp):
            # `a and b` short-circuits: t = a; if t: t = b  (`or`: if not t)
            values = list(e.values)
            first = self.expr(values.pop(0), hint, None)
            while values and known_truth(first) is not None:
                # (`isinstance(layer, Dense) and ...`, known here: Python's value)
                if known_truth(first) is isinstance(e.op, gast.Or):
                    return first
                first = self.expr(values.pop(0), hint, None)
            if not values:
                return first
            var = self.fresh(f"{hint}_{'and' if isinstance(e.op, gast.And) else 'or'}")
            self.mutable.add(var)
            op, args = self.op_call(control.identity, [first], {}, e)
            self.body.append(ir.Call(var, op, args, e.lineno))
            for v in values:
                outer, self.body = self.body, []
                try:
                    a = self.expr(v, hint, None)
                    op, args = self.op_call(control.identity, [a], {}, e)
                    self.body.append(ir.Call(var, op, args, e.lineno))
                    branch = self.body
                finally:
                    self.body = outer
                if isinstance(e.op, gast.And):
                    self.body.append(ir.If(ir.Var(var), branch, [], e.lineno))
                else:
                    self.body.append(ir.If(ir.Var(var), [], branch, e.lineno))
            return ir.Var(var)
        if isinstance(e, gast.Call):
            return self.call(e, hint, into)
        if isinstance(e, gast.Dict):
            return self.dict_display(e, hint, into)
        if isinstance(e, gast.JoinedStr):
            return self.fstring(e, hint, into)
        if isinstance(e, gast.IfExp):
            truth = self.static_truth(e.test)
            test = self.expr(e.test, hint, None) if truth is None else \
                ir.Const(truth, repr(truth))
            if isinstance(test, ir.Const) and type(test.value) is bool:
                # `self.act(z) if self.act is not None else z`, the test known (and guarded)
                # here: the other arm is no code
                return self.expr(e.body if test.value else e.orelse, hint, into)
            var = self.fresh(f"{hint}_if")
            self.mutable.add(var)
            branches = []
            for branch in (e.body, e.orelse):
                outer, self.body = self.body, []
                try:
                    a = self.expr(branch, hint, None)
                    op, args = self.op_call(control.identity, [a], {}, e)
                    self.body.append(ir.Call(var, op, args, e.lineno))
                    branches.append(self.body)
                finally:
                    self.body = outer
            self.body.append(ir.If(test, branches[0], branches[1], e.lineno))
            return ir.Var(var)
        if isinstance(e, gast.Attribute) and isinstance(e.value, gast.Name) and \
                e.value.id in self.pf.attrdicts and not self.defs[e.value.id] and \
                not hasattr(self.pf.attrdicts[e.value.id], e.attr):
            # `params.W` of an EasyDict / AttrDict argument (its __getattr__ reads items,
            # transformed.py): the item `params["W"]`
            item = gast.copy_location(gast.Subscript(
                value=e.value, slice=gast.Constant(value=e.attr, kind=None), ctx=gast.Load()), e)
            return self.expr(item, hint, into)
        nt = self.namedtuple_of(e.value) if isinstance(e, gast.Attribute) else None
        prop = inspect.getattr_static(nt, e.attr, None) if nt is not None and \
            e.attr not in nt._fields else None
        if isinstance(prop, property) and isinstance(prop.fget, types.FunctionType) and \
                is_user_object(prop.fget):
            # `q.norm2`, a property of a NamedTuple class: its getter, called with q
            guards.note_attr(nt, e.attr, prop)
            spelled = "_".join(p for p in prop.fget.__qualname__.split(".")
                               if p != "<locals>")
            site = ("user", prop.fget, spelled, [self.expr(e.value, hint, None)], {}, False)
            return self.emit_user_call(site, e, hint, into)
        if nt is not None and e.attr in nt._fields:
            # `p.W1` of a namedtuple argument (a pytree): its field by position, `p[0]`
            index = nt._fields.index(e.attr)
            item = gast.copy_location(gast.Subscript(
                value=e.value, slice=gast.Constant(value=index, kind=None), ctx=gast.Load()), e)
            return self.expr(item, hint, into)
        if isinstance(e, gast.Attribute):
            getter = self.property_getter(e, hint)
            if getter is not None:  # `layer.weights` of a @property: its getter, called
                return self.emit_user_call(getter, e, hint, into)
            carried = self.carried_read(e)
            if carried is not None:  # `dense1.output` after `dense1.forward(X)` (state.py)
                return carried
            base = self.local_base(e.value, hint)
            if base is None and e.attr == "__dict__" and is_user_object(
                    self.known_object(e.value)):
                # `L.__dict__` of a global layer: read as it runs, a part of L (a store into it
                # is one into L: analysis/refusals.py), not a constant of the call
                base = self.expr(e.value, hint, None)
                return self.result((opaque_attribute(e.attr), {"_obj": base}), hint, into, e)
            if base is None:
                return self.global_attribute(e, hint, into)
            if isinstance(base, ir.Const) and is_user_object(base.value) and \
                    e.attr not in ATTRIBUTES:
                sub = getattr(base.value, e.attr, guards.MISSING)
                if is_user_object(sub) or is_object_sequence(sub) or is_object_mapping(sub):
                    # `self.act`, `self.layers`: objects whose methods resolve now (a dict of
                    # them: its keys in order, and each key's object, guarded)
                    guards.note_attr(base.value, e.attr, sub)
                    if isinstance(sub, list):
                        guards.note("items", sub, len(sub), sub)
                    if isinstance(sub, dict):
                        guards.note("items", sub, len(sub), tuple(sub))
                        for k, v in sub.items():
                            guards.note("global", sub, k, v)
                    return self.constant(sub, f"{base.src}.{e.attr}", e)
            if self.is_sparse_atom(base):  # (`L.T` of a scipy.sparse argument: scipy's own)
                return self.result((opaque_attribute(e.attr), {"_obj": base}), hint, into, e)
            fn = ATTRIBUTES.get(e.attr)
            if isinstance(base, ir.Const) and is_user_object(base.value):
                fn = None  # (`self.dtype`, `self.size`, `self.T` of a layer: its own attribute)
            if fn is None and e.attr in self.namedtuple_fields():
                # `cache.z` of a namedtuple a callee built (`Cache(x=x, z=z)`): its field,
                # differentiable (the name is a field of a namedtuple type this code sees)
                return self.result((field_op(e.attr), {"_obj": base}), hint, into, e)
            if fn is None:  # (x.itemsize, rng.bit_generator: run as written, see opaque.py)
                # (a module's object that code run as written may change: unknown_writes.py)
                unknown = isinstance(base, ir.Const) and read_as_it_runs(base.value)
                return self.result((opaque_attribute(e.attr, unknown), {"_obj": base}), hint,
                                   into, e)
            return self.result(self.op_call(fn, [base], {}, e), hint, into, e)
        if isinstance(e, gast.Subscript):
            base = self.handed_over(self.expr(e.value, hint, None), "__getitem__", e)
            index = self.index(e.slice, hint)
            if isinstance(base, ir.Const) and is_concatenator(base.value):
                lowered = self.concatenator(base.value, index, hint, into, e)
                if lowered is not None:  # (else as written: refusals.py checks it)
                    return lowered
            item = _static_item(base, index)
            if item is not None:  # `[a, b][-1]` is `b`: the item itself, as Python has it
                return item
            item = self.slot_after_branch(base, index)
            if item is not None:  # (`lst[0]` after `if c: lst.pop(0)` of `lst = [b, b]`)
                return item
            item = self.read_again(base, index)
            if item is not None:  # (`u2 = p[0]` after `u1 = p[0]`: the object u1 is)
                return item
            if isinstance(base, ir.Var) and _whole_slice(index) and \
                    self.surely_container(base) and not self.generated:
                # `M = L[:]` of a list: `list(L)`, a new list of the very same objects (no
                # view of L: a store into L leaves M as it was, a write in place into an
                # item shows in both -- the list op's holders, aliasing.py)
                return self.result(self.op_call(list, [base], {}, e), hint, into, e)
            part = index.parts[0] if not index.is_tuple else None
            if isinstance(base, ir.Const) and type(base.value) is dict and \
                    isinstance(part, ir.Const) and type(part.value) in (str, int) and \
                    part.value in base.value and folds_as_dict_item(base.value[part.value]):
                # `ACTS["tanh"]` of a module's dict of functions: that function, guarded to
                # be the dict's item still (as a module global is); `HP["act"]`, a string a
                # config dict holds, likewise (`ACTS[HP["act"]]` then picks its function);
                # `MODEL["net"].forward(x)`, `for layer in MODEL["layers"]:` of a dict holding
                # objects beside numbers and strings: the object or its list (2026-12-07)
                fn = base.value[part.value]
                guards.note("global", base.value, part.value, fn)
                self.folded.append((base.value, part.value, e.lineno,
                                    f"{base.src}[{part.value!r}]"))
                held = isinstance(fn, (list, tuple, dict)) or (
                    is_user_object(fn) and not isinstance(fn, types.FunctionType))
                spelled = f"{base.src}[{part.value!r}]" if held else f"{base.src}_{part.value}"
                return self.constant(fn, spelled, e)
            if isinstance(base, ir.Const) and is_object_mapping(base.value) and \
                    isinstance(part, ir.Const) and part.value in base.value:
                # `self.layers["Affine1"]` of a dict of objects: the object itself (guarded
                # to be the dict's item still)
                obj = base.value[part.value]
                guards.note("global", base.value, part.value, obj)
                return self.constant(obj, f"{base.src}[{part.value!r}]", e)
            if isinstance(base, ir.Const) and is_object_sequence(base.value) and \
                    isinstance(part, ir.Const) and type(part.value) is int and \
                    -len(base.value) <= part.value < len(base.value):
                # `self.layers[-1].forward(h)`: the object itself, whose methods resolve now
                # (the list guarded to hold these very objects, as a loop over it is)
                guards.note("items", base.value, len(base.value), base.value)
                return self.constant(base.value[part.value], f"{base.src}[{part.value}]", e)
            if isinstance(base, ir.Const) and is_object_sequence(base.value) and \
                    isinstance(part, ir.Slice) and all(
                        b is None or (isinstance(b, ir.Const) and type(b.value) is int)
                        for b in (part.lower, part.upper, part.step)):
                # `for layer in self.layers[1:]:`: those objects (a loop over them unrolls)
                bounds = slice(*(None if b is None else b.value
                                 for b in (part.lower, part.upper, part.step)))
                guards.note("items", base.value, len(base.value), base.value)
                picked = base.value[bounds]
                return ir.Const(picked, f"{base.src}[{bounds.start}:{bounds.stop}]")
            part = index.parts[0] if not index.is_tuple else None
            if (into is None and isinstance(part, ir.Const) and isinstance(part.value, str)
                    and part.value.isidentifier()):
                # params["W1"] is named W1 (a pytree leaf says what it holds)
                call = self.op_call(operator.getitem, [base, index], {}, e)
                return self.same_item(base, index, self.emit(call, self.fresh(part.value), e))
            return self.same_item(base, index, self.result(
                self.op_call(operator.getitem, [base, index], {}, e), hint, into, e))
        if isinstance(e, gast.Starred):
            raise self.unsupported("star-unpacking (`*xs`) here", e,
                                   "write the items out, or join arrays with np.concatenate")
        raise self.unsupported(f"the expression `{type(e).__name__}`", e)

    def starred_display(self, e, hint: str, into):
        """`(-1, *rest)` / `[a, *xs, b]`: the runs of items and each `list(xs)` joined by
        list_concat (the rows of the Python people write: a gradient flows through), then
        `tuple(...)` for a tuple display."""
        acc, run = None, []

        def join(acc, part):
            if acc is None:
                return part
            return self.result(self.op_call(list_concat, [acc, part], {}, e), hint, None, e)

        for x in e.elts:
            if isinstance(x, gast.Starred):
                if run:
                    acc = join(acc, ir.Seq(tuple(run), "list"))
                    run = []
                items = self.expr(x.value, hint, None)
                acc = join(acc, self.result(self.op_call(list, [items], {}, e), hint, None, e))
            else:
                run.append(self.expr(x, hint, None))
        if run:
            acc = join(acc, ir.Seq(tuple(run), "list"))
        if isinstance(e, gast.Tuple):
            return self.result(self.op_call(tuple, [acc], {}, e), hint, into, e)
        return acc if into is None else self.result(
            self.op_call(list, [acc], {}, e), hint, into, e)

    def concatenator(self, obj, index, hint, into, node):
        """`np.r_[...]` / `np.c_[...]` as rows (srcad/frontend/concatenators.py), or None."""

        def apply(fn, args, kwargs, final):
            args = [ir.Seq(tuple(a[1]), "tuple") if isinstance(a, tuple) else a for a in args]
            kwargs = {k: ir.Const(v, repr(v)) for k, v in kwargs.items()}
            return self.result(self.op_call(fn, args, kwargs, node), hint,
                               into if final else None, node)

        def directive(item):
            if isinstance(item, ir.Const) and isinstance(item.value, str):
                return item.value
            return None

        def slice_item(item):
            if not isinstance(item, ir.Slice):
                return None
            bounds = (item.lower, item.upper, item.step)
            if all(b is None or (isinstance(b, ir.Const) and isinstance(
                    b.value, (int, float, complex)) and not isinstance(b.value, bool))
                   for b in bounds):
                value = np.r_[slice(*(None if b is None else b.value for b in bounds))]
                return self.constant(value, self.fresh(f"{hint}_range"), node)
            if isinstance(item.step, ir.Const) and isinstance(item.step.value, complex):
                raise LookupError(item)  # (a linspace with bounds known only when running)
            zero, one = ir.Const(0, "0"), ir.Const(1, "1")
            if item.upper is None:
                raise LookupError(item)
            return apply(np.arange, [item.lower or zero, item.upper, item.step or one], {},
                         False)

        return concatenators.lower(obj, index.parts, apply, directive=directive,
                                   slice_item=slice_item)

    def combine(self, fn, atoms, hint, into, node):
        acc = atoms[0]
        for i, a in enumerate(atoms[1:], start=2):
            call = self.op_call(fn, [acc, a], {}, node)
            acc = self.result(call, hint, into if i == len(atoms) else None, node)
        return acc

    def index(self, s, hint):
        def part(p):
            if isinstance(p, gast.Slice):
                return ir.Slice(*(None if v is None else self.expr(v, hint, None)
                                  for v in (p.lower, p.upper, p.step)))
            return self.expr(p, hint, None)

        if isinstance(s, gast.Tuple):
            return ir.Index(tuple(part(p) for p in s.elts), True)
        return ir.Index((part(s),), False)

    def name_atom(self, e: gast.Name):
        if e.id in self.env:
            return self.env[e.id]
        if e.id in self.locals:
            raise self.pf.error(f"`{e.id}` is used before it is assigned", e)
        obj = self.pf.resolve(e.id)
        if obj is UNRESOLVED:
            raise self.pf.error(f"name `{e.id}` is not defined", e, cls=UnresolvedNameError)
        return self.constant(obj, e.id, e)

    def handed_over(self, atom, dunder: str, node):
        """`net[0]`, `for l in net` of a user object known here whose `__getitem__` /
        `__iter__` only hands the operation to a list (or dict) it holds
        (objects.py `delegated_sequence`, guarded): that list, a constant, so its objects
        resolve here as `net.layers[0]` does; any other atom as it is."""
        if not isinstance(atom, ir.Const):
            return atom
        found = delegated_sequence(atom.value, dunder)
        if found is None:
            return atom
        attr, held = found
        return self.constant(held, f"{atom.src}.{attr}", node)

    def constant(self, obj, spelled: str, node):
        if isinstance(obj, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                            np.ufunc)) and not isinstance(obj, type) and obj not in LIFTED \
                and not _passable(obj) and not rowed_callable(obj):
            raise self.unsupported(f"`{spelled}` ({type(obj).__name__}) used as a value", node,
                                   "call it where it is used (for a map kept in a name: "
                                   "`[f(v) for v in xs]`), or pass values in as arguments")
        src = _const_src(obj, spelled)
        if src is None:
            # (`LAYERS[0]` of a module's list: named `LAYERS_0`, a name of its own)
            src = self.claim(spelled if spelled.isidentifier() else
                             self.fresh(re.sub(r"\W+", "_", spelled).strip("_") or "value"),
                             obj)
        return ir.Const(obj, src)

    def local_base(self, e, hint):
        """The atom for `e` if it is (rooted at) a local value, else None (a global)."""
        root = e
        while isinstance(root, gast.Attribute):
            root = root.value
        if isinstance(root, gast.Name) and root.id not in self.locals:
            return None
        return self.expr(e, hint, None)

    def namedtuple_fields(self) -> frozenset:
        """The field names of the namedtuple types this function's module, closure and
        arguments hold (where `obj.<field>` of a local is read as that field)."""
        if getattr(self, "_nt_fields", None) is None:
            g = getattr(self.pf.fn, "__globals__", {})
            g = getattr(g, "_base", g)
            values = [*list(g.values()), *self.pf.closure.values(), *self.pf.classes.values(),
                      *self.pf.namedtuples.values(), *self.pf.namedtuple_items.values()]
            self._nt_fields = frozenset(f for v in values if is_namedtuple_type(v)
                                        for f in v._fields) | self._namespace_fields()
        return self._nt_fields

    def _namespace_fields(self) -> frozenset:
        """The keywords of this function's ``types.SimpleNamespace(...)`` calls (read as
        namedtuples of those fields: calls.py `namespace_type`)."""
        return frozenset(k.arg for n in self._namespace_calls() for k in n.keywords
                         if k.arg is not None)

    def namespace_names(self) -> set:
        """The names this function binds to a ``types.SimpleNamespace(...)`` it makes."""
        calls = {id(n) for n in self._namespace_calls()}
        return {t.id for n in gast.walk(self.pf.tree) if isinstance(n, gast.Assign) and
                id(n.value) in calls for t in n.targets if isinstance(t, gast.Name)}

    def _namespace_calls(self) -> list:
        out = []
        for n in gast.walk(self.pf.tree):
            if not (isinstance(n, gast.Call) and n.keywords and not n.args):
                continue
            f, parts = n.func, []
            while isinstance(f, gast.Attribute):
                parts.append(f.attr)
                f = f.value
            if not isinstance(f, gast.Name) or f.id in self.locals:
                continue
            obj = self.pf.resolve(f.id)
            for a in reversed(parts):
                obj = getattr(obj, a, None)
            if obj is types.SimpleNamespace:
                out.append(n)
        return out

    def namedtuple_of(self, e):
        """The namedtuple type `e` (a name) holds: a parameter never rebound, or the variable
        of a loop over a parameter holding a list of them (`for layer in layers:`)."""
        if not isinstance(e, gast.Name):
            return None
        if e.id in self.pf.namedtuples and not self.defs[e.id]:
            return self.pf.namedtuples[e.id]
        atom = self.env.get(e.id)
        made = self.definitions(e.id) if isinstance(atom, ir.Var) and \
            self.defs[e.id] == 1 else []
        if len(made) == 1 and isinstance(made[0], ir.Call) and \
                made[0].op.name == "._replace" and made[0].target == atom.name:
            # `p2 = p._replace(W=...)`: p's namedtuple type
            base = made[0].args.get("_obj")
            if isinstance(base, ir.Var) and base.name in self.pf.namedtuples and \
                    not self.defs[base.name]:
                return self.pf.namedtuples[base.name]
        return self.nt_vars.get(e.id)

    def known_is_none(self, left, right) -> bool | None:
        """`obj.attr is None` where obj is an object known here (`self` of a method called on
        a global object): whether the attribute holds None now, its lookup guarded like a
        global's (the code is rebuilt if it is rebound) -- so `if self.bias is not None:`
        keeps only the branch Python takes. None when not known here."""
        if isinstance(left, gast.Constant) and left.value is None:
            left, right = right, left
        if not (isinstance(right, gast.Constant) and right.value is None) or \
                not isinstance(left, gast.Attribute):
            return None
        chain = []
        root = left
        while isinstance(root, gast.Attribute):
            chain.append(root.attr)
            root = root.value
        held = self.env.get(root.id) if isinstance(root, gast.Name) else None
        if not (isinstance(held, ir.Const) and is_user_object(held.value)):
            return None
        obj = held.value
        for attr in reversed(chain):
            if isinstance(obj, (np.ndarray, list, dict, tuple)):
                return None  # (an array's or a container's attribute: read when it runs)
            if self.stored_attrs is None:  # (walked once per function, not per test)
                self.stored_attrs = stored_attributes(self.pf.tree)
            if may_change(obj, attr, self.stored_attrs):
                return None  # (a method may set it before the test: knowntests.may_change)
            try:
                value = getattr(obj, attr)
            except AttributeError:
                return None
            guards.note_attr(obj, attr, value)
            obj = value
        return obj is None

    def static_truth(self, test, once: frozenset = frozenset()) -> bool | None:
        """The truth of an `if`'s test over objects known here, decided now
        (knowntests.StaticTest: `if layer.trainable:`, `type(layer).__name__ == "Dense"` of
        a layer a loop is written out for), else None. Each plain attribute it read is read
        again where the test runs: were one set during the call by code srcad does not see
        (a module function freezing the layer), the call fails there rather than take the
        branch decided when the code was built."""
        if self.stored_attrs is None:
            self.stored_attrs = stored_attributes(self.pf.tree)
        atoms: dict = {}

        def root(name):
            held = self.env.get(name)
            if isinstance(held, ir.Const) and name in self.locals and \
                    type(held.value) in (str, int, bool, type(None)):
                # (`for key, layer in self.layers.items(): if "Dropout" in key:` -- the key
                # of a loop written out per layer, a literal here: decided, nothing to guard)
                return Known(held.value)
            if isinstance(held, ir.Const):
                atoms[id(held.value)] = held
                return held.value
            if held is not None or name in self.locals:
                return self.literal_value(name) if name in self.locals else UNKNOWN
            found = self.pf.resolve(name)
            return UNKNOWN if found is UNRESOLVED else found

        decided = StaticTest(root, self.stored_attrs | set_in_file(self.pf.filename),
                             once=once)
        truth = decided.truth(test)
        if truth is None:
            return None
        for obj, attr, value, kind in decided.reads:
            text = decided_at(CHANGED_DURING_CALL if kind == "has" else REGISTERED if kind in (
                "isinstance", "issubclass") else DECIDED.format(attr), self.pf.filename,
                getattr(test, "lineno", self.line))
            msg = ir.Const(text, repr(text))
            at = atoms.get(id(obj)) or self.constant(obj, type(obj).__name__.lower(), test)
            if kind in ("isinstance", "issubclass"):  # (`attr`: the classes)
                classes = [ir.Const(k, self.constant(k, k.__name__, test).src)
                           for k in (attr if type(attr) is tuple else (attr,))]
                fn = isinstance if kind == "isinstance" else issubclass
                read = self.emit(self.opaque_parts(
                    self.callee_atom(fn, kind, test), kind, [at, classes[0] if len(
                        classes) == 1 else ir.Seq(tuple(classes), "tuple")], {}, (), test, fn),
                    self.fresh(kind), test)
            elif kind == "has":
                callee = self.callee_atom(hasattr, "hasattr", test)
                read = self.emit(self.opaque_parts(callee, "hasattr", [at, ir.Const(
                    attr, repr(attr))], {}, (), test, hasattr), self.fresh("hasattr"), test)
            else:
                read = self.emit((opaque_attribute(attr), {"_obj": at}), self.fresh(attr),
                                 test)
            same = read if kind == "has" and value is True else self.emit((opaque_compare(
                "is" if value is None or type(value) is bool else "=="),
                {"_a0": read, "_a1": ir.Const(value, repr(value))}),
                self.fresh(f"{attr if type(attr) is str else kind}_as_built"), test)
            self.body.append(ir.Effect("assert", None, {"test": same, "msg": msg},
                                       test.lineno))
        return truth

    def dotted(self, e) -> tuple[object, str]:
        """Resolve a global `a.b.c` to its object."""
        if isinstance(e, gast.Name):
            obj = self.pf.resolve(e.id)
            if obj is UNRESOLVED:
                raise self.pf.error(f"name `{e.id}` is not defined", e, cls=UnresolvedNameError)
            return obj, e.id
        if isinstance(e, gast.Attribute):
            base, spelled = self.dotted(e.value)
            try:
                obj = getattr(base, e.attr)
            except AttributeError:
                raise self.pf.error(f"`{spelled}` has no attribute `{e.attr}`", e) from None
            guards.note_attr(base, e.attr, obj)  # (`Config.beta`: read again at each call)
            return obj, f"{spelled}.{e.attr}"
        raise self.unsupported(f"calling the result of a `{type(e).__name__}` expression", e)

    def global_value(self, e):
        obj, spelled = self.dotted(e)
        return self.constant(obj, spelled, e)

    def global_attribute(self, e: gast.Attribute, hint: str, into):
        """`L1.output` of a module's object: a constant of the call (its value as the call
        starts, guarded) -- or, where code the call runs as written may change it, the
        attribute read when the code runs (unknown_writes.py)."""
        holder, spelled = self.dotted(e.value)
        value = getattr(holder, e.attr, guards.MISSING)
        if value is guards.MISSING:
            return self.global_value(e)  # (its error)
        if is_data(holder, value) and read_as_it_runs(holder):
            base = self.constant(holder, spelled, e.value)
            return self.result((opaque_attribute(e.attr, True), {"_obj": base}), hint, into, e)
        guards.note_attr(holder, e.attr, value)  # (as `dotted` notes it)
        return self.constant(value, f"{spelled}.{e.attr}", e)

    def op_call(self, fn, args, kwargs, node, spelled: str | None = None):
        """Bind a call to its op row's parameters: (op, {param: atom})."""
        if fn is np.where and len(args) == 1 and not kwargs:
            # np.where(c) is np.nonzero(c) (numpy's docs): integer indices, no derivative
            callee = self.callee_atom(np.nonzero, "np.nonzero", node)
            return self.opaque_parts(callee, "np.nonzero", args, {}, (), node, np.nonzero)
        copy = kwargs.get("copy")
        if fn is np.array and copy is not None and set(kwargs) <= {"copy", "dtype"} and \
                not (isinstance(copy, ir.Const) and copy.value is True):
            # np.array(a, copy=False) (or copy=None, or a flag known only when it runs) is
            # numpy's asarray: `a` itself where no copy is needed -- a write through it
            # writes `a` (numpy 2's copy=False raises where a copy would be needed; asarray
            # makes one)
            fn, kwargs = np.asarray, {k: v for k, v in kwargs.items() if k != "copy"}
        op = table.lookup(fn)
        if op is None:
            name = spelled or getattr(fn, "__name__", repr(fn))
            if isinstance(fn, types.FunctionType):
                hint = (f"calls to user functions are not differentiated yet; register a rule "
                        f"with srcad.defvjp({name}, lambda g, out, ...: ...) or inline it")
            else:
                hint = (f"register one with srcad.defvjp({name}, lambda g, out, x: ...) "
                        f"(one rule per positional argument)")
            raise self.pf.error(f"`{name}` has no derivative rule in srcad", node,
                                hint=hint, cls=NoRuleError)
        params = op.params
        args = op.canonical_args(args, _static_value, lambda v: ir.Const(v, repr(v)))
        try:
            bound = op.bind(args, kwargs)
        except TypeError as e:
            raise self.pf.error(str(e), node, cls=UnsupportedSyntaxError) from None
        if op.star is not None:  # np.einsum(s, a, b): the operands as one tuple atom
            bound[op.star.name] = ir.Seq(tuple(bound[op.star.name]), "tuple")
        for p in params:
            if p.required and p.name not in bound:
                raise self.pf.error(f"`{op.name}` is missing its argument `{p.name}`", node)
            if op.spell_defaults and p.name not in bound and not p.star:
                bound[p.name] = ir.Const(p.default, _const_src(p.default, None) or
                                         repr(p.default))
        ordered = {p.name: bound[p.name] for p in params if p.name in bound}
        return op, ordered


def _joined_displays(call_parts) -> ir.Seq | None:
    """`list_concat(a, b)` of two list displays: the display of their items; else None."""
    op, args = call_parts
    parts = list(args.values())
    if op.fn is not list_concat or len(parts) != 2 or not all(
            isinstance(p, ir.Seq) and p.kind == "list" for p in parts):
        return None
    return ir.Seq(parts[0].items + parts[1].items, "list")


def _copied_display(call_parts) -> ir.Seq | None:
    """`list(ws)` / `tuple(ws)` of a list or tuple display: a new display of the same items
    (Python's shallow copy holds the very same objects, so a write in place through one
    holder's item is seen through the other's -- aliasing.carry_to_aliases); else None."""
    op, args = call_parts
    src = next(iter(args.values()), None)
    if not isinstance(src, ir.Seq) or len(args) != 1 or op.fn not in (list, tuple):
        return None
    return ir.Seq(src.items, op.fn.__name__)


def _static_value(atom):
    """The value of an atom written as a literal (a constant, or a sequence of them), for an
    op's `canonical` form; LookupError where it is known only when the code runs."""
    if isinstance(atom, ir.Const):
        return atom.value
    if isinstance(atom, ir.Seq):
        items = [_static_value(x) for x in atom.items]
        return items if atom.kind == "list" else tuple(items)
    raise LookupError(atom)


def _static_item(base, index):
    """The item (or, for a slice, the items) of a literal sequence picked by a constant index,
    or None when it is not known before running."""
    if not isinstance(base, ir.Seq) or index.is_tuple:
        return None
    part = index.parts[0]
    if isinstance(part, ir.Const) and type(part.value) is int:
        if -len(base.items) <= part.value < len(base.items):
            return base.items[part.value]
        return None
    if isinstance(part, ir.Slice):
        bounds = [None if b is None else b for b in (part.lower, part.upper, part.step)]
        if all(b is None or (isinstance(b, ir.Const) and type(b.value) is int) for b in bounds):
            sl = slice(*(None if b is None else b.value for b in bounds))
            return ir.Seq(tuple(base.items[sl]), base.kind)
    return None


def _passable(obj) -> bool:
    """A user function, which may be held as a value and handed to another user function
    (`integrate(rhs, y0)`: the callee knows it, as it knows a user object it is passed, and
    its calls of it are subroutine calls of `rhs`). A numpy function with a row is held as
    a value too (`constant`: `apply(np.tanh, x)`, `[np.tanh, relu]`); where it is then called
    through something srcad cannot see (a library's `map`, a name bound at run time) the
    call is refused where a differentiated value reaches it (analysis/refusals.py)."""
    return isinstance(obj, types.FunctionType) and is_user_object(obj)




def known_truth(atom) -> bool | None:
    """The truth of a test folded to a constant here (`self.act is not None` of a guarded
    attribute, a literal flag), or None when it is known only when the code runs."""
    if not isinstance(atom, ir.Const):
        return None
    v = atom.value
    if v is None or type(v) in (bool, int, float, str, bytes):
        return bool(v)
    if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, np.ufunc, type,
                      types.ModuleType)):
        return True  # (a function or class: always true)
    return None  # (a container or an object: its truth may change without a rebinding)
