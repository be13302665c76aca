"""Which expressions of the generated code are fusable ops, and what numpy computes for them.

Everything here is read from the op table: a row is fusable when it has a C expression
(``c=``); how generated code spells it comes from the row's spelling (``x + y``,
``np.tanh(x)``, ``x.astype(dtype)``) or, for a call, from the callable the expression names
(so aliases work). No op is named in this module.

`match(node)` recognises one op application and binds its parameters; `type_op` then says
what numpy would do with operands of the given static types: the result's dtype and shape
(found by running the op on one-element stand-ins, so numpy's own promotion rules -- float32
stays float32, a Python number is weak -- decide), the loop dtypes each operand is converted
to (a ufunc's `resolve_dtypes`; otherwise the result dtype), and how the kernel computes it:
inline C when the row's C is exact (`cexpr.exact`), else numpy's own inner loop for that
dtype signature (``np.exp.types.index('f->f')``: the loop numpy itself would pick).
`match_row` / `type_row` do the same for the row ops of row kernels (the table's
``c_row``): last-axis sums and means with keepdims, and broadcasts of a row's value back.
"""

from __future__ import annotations

import ast
import builtins
import operator
import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import runtime
from ..ops import table
from . import cexpr

# the dtypes kernels compute in, by numpy kind letter
KIND_DTYPES = {
    "f": (np.dtype(np.float32), np.dtype(np.float64)),
    "b": (np.dtype(np.bool_),),
    "i": tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)),
    "u": tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)),
}
C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
           np.dtype(np.bool_): "srcad_bool", np.dtype(np.int8): "int8_t",
           np.dtype(np.int16): "int16_t", np.dtype(np.int32): "int32_t",
           np.dtype(np.int64): "int64_t", np.dtype(np.uint8): "uint8_t",
           np.dtype(np.uint16): "uint16_t", np.dtype(np.uint32): "uint32_t",
           np.dtype(np.uint64): "uint64_t"}

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
           ast.BitXor: operator.xor, ast.MatMult: operator.matmul}
_UNOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
_CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
           ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}


@dataclass(frozen=True)
class VT:
    """A value's static type. kind: "array" (an ndarray or numpy scalar: numpy treats it as
    strong), "number" (a Python int, float or bool: weak, value unknown), "const" (a literal
    of the generated code: weak, value known)."""

    kind: str
    dtype: np.dtype | None = None
    shape: tuple = ()
    value: object = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @classmethod
    def of_info(cls, info) -> "VT | None":
        if info is None:
            return None
        if info.dtype is None:
            return cls("number") if info.value is None else cls("const", value=info.value)
        if np.dtype(info.dtype) not in C_TYPES:
            # a dtype no kernel reads (a big-endian float64, whose bytes C would take
            # unswapped; float16; object): not a kernel operand, numpy computes it
            return None
        return cls("array", np.dtype(info.dtype), tuple(info.shape))


# -- the table's spellings, indexed --------------------------------------------------------

@dataclass
class _Index:
    generation: int
    binop: dict = field(default_factory=dict)
    unop: dict = field(default_factory=dict)
    cmp: dict = field(default_factory=dict)
    method: dict = field(default_factory=dict)


_INDEX: list = []


def fusable_row(op) -> bool:
    """A row with a C expression computes elementwise: the fuser may lower it."""
    return bool(op.c_expr) and bool(op.c_kinds)


def _index() -> _Index:
    gen = table.generation()
    if _INDEX and _INDEX[0].generation == gen:
        return _INDEX[0]
    idx = _Index(gen)
    for op in table.all_ops(user=True, optional=False):  # (scipy rows: none fusable)
        if not fusable_row(op):
            continue
        sp, names = op.spelling, op.param_names
        if isinstance(sp, ast.BinOp) and _is_params(sp.left, sp.right, names=names):
            idx.binop.setdefault(type(sp.op), op)
        elif isinstance(sp, ast.UnaryOp) and _is_params(sp.operand, names=names):
            idx.unop.setdefault(type(sp.op), op)
        elif isinstance(sp, ast.Compare) and len(sp.ops) == 1 and \
                _is_params(sp.left, sp.comparators[0], names=names):
            idx.cmp.setdefault(type(sp.ops[0]), op)
        elif isinstance(sp, ast.Call) and isinstance(sp.func, ast.Attribute) and \
                isinstance(sp.func.value, ast.Name) and sp.func.value.id == names[0]:
            idx.method.setdefault(sp.func.attr, op)
    _INDEX[:] = [idx]
    return idx


def _is_params(*nodes, names) -> bool:
    return all(isinstance(n, ast.Name) and n.id in names for n in nodes)


# -- matching ---------------------------------------------------------------------------------

@dataclass
class Applied:
    """One op application in generated code: `args` maps the row's operand parameters to
    sub-expressions, `static` its other parameters to their (literal) values."""

    op: object
    node: ast.expr
    args: dict
    static: dict
    apply: object  # values {param: value} -> what the generated expression computes
    via_spelling: bool  # spelled as the row's operator form (``x ** y``), not as a call


def operand_params(op) -> tuple[str, ...]:
    """The parameters the row's C expression reads (the rest are static: a dtype, ...)."""
    used = cexpr.names(cexpr.parse(op.c_expr))
    for p in getattr(op, "c_consts", {}) or {}:
        used.add(p)
    return tuple(p for p in op.param_names if p in used)


def resolve_callable(func: ast.expr, namespace: dict):
    """The object a call's function expression names in generated code, or None."""
    if isinstance(func, ast.Name):
        if func.id in namespace:
            return namespace[func.id]
        found = getattr(runtime, func.id, None)
        return found if found is not None else getattr(builtins, func.id, None)
    if isinstance(func, ast.Attribute):
        base = resolve_callable(func.value, namespace)
        if base is None and isinstance(func.value, ast.Name) and func.value.id == "np":
            base = np
        return getattr(base, func.attr, None) if base is not None else None
    return None


# the nodes ast.literal_eval can accept (at their top); it raises on every other expression
_LITERAL_FORMS = (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Call, ast.UnaryOp,
                  ast.BinOp, ast.Expression, str)


def static_value(node: ast.expr, namespace: dict):
    """(True, value) for an expression known before run time: a literal, a constant
    folded from literals, a dtype or type named by attribute (np.float32); else (False, _)."""
    if isinstance(node, _LITERAL_FORMS):  # (any other node: literal_eval would refuse it)
        try:
            return True, ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
    if isinstance(node, (ast.Attribute, ast.Name)):
        v = resolve_callable(node, namespace)
        if isinstance(v, type) or isinstance(v, np.dtype):
            return True, v
        if isinstance(node, ast.Attribute) and isinstance(v, float):
            return True, v  # np.pi, np.inf, np.e
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        # a numpy scalar made from a literal: np.float32(1.0) (strong, unlike 1.0)
        t = resolve_callable(node.func, namespace)
        ok, v = static_value(node.args[0], namespace)
        if isinstance(t, type) and issubclass(t, np.generic) and ok and _is_number(v):
            try:
                out = t(v)
            except (ValueError, TypeError, OverflowError):
                return False, None
            if np.dtype(out.dtype) in C_TYPES:
                return True, out
        return False, None
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        parts = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.operand]
        vals = []
        for p in parts:
            ok, v = static_value(p, namespace)
            if not ok or not _is_number(v):
                return False, None
            vals.append(v)
        fn = _BINOPS.get(type(node.op)) if isinstance(node, ast.BinOp) else \
            _UNOPS.get(type(node.op))
        if fn is None:
            return False, None
        try:
            out = fn(*vals)
        except (ArithmeticError, ValueError, TypeError):
            return False, None
        return (True, out) if _is_number(out) else (False, None)
    return False, None


def _is_number(v) -> bool:
    return type(v) in (int, float, bool)


def match(node: ast.expr, namespace: dict) -> Applied | None:
    """The fusable op application `node` is, or None."""
    idx = _index()
    if isinstance(node, ast.BinOp):
        op = idx.binop.get(type(node.op))
        if op is None:
            return None
        fn = _BINOPS[type(node.op)]
        p0, p1 = _spelled_params(op)
        return _applied(op, node, {p0: node.left, p1: node.right},
                        lambda v, fn=fn, p0=p0, p1=p1: fn(v[p0], v[p1]), True)
    if isinstance(node, ast.UnaryOp):
        op = idx.unop.get(type(node.op))
        if op is None:
            return None
        fn = _UNOPS[type(node.op)]
        p0, = _spelled_params(op)
        return _applied(op, node, {p0: node.operand}, lambda v, fn=fn, p0=p0: fn(v[p0]), True)
    if isinstance(node, ast.Compare):
        if len(node.ops) != 1:
            return None
        op = idx.cmp.get(type(node.ops[0]))
        if op is None:
            return None
        fn = _CMPOPS[type(node.ops[0])]
        p0, p1 = _spelled_params(op)
        return _applied(op, node, {p0: node.left, p1: node.comparators[0]},
                        lambda v, fn=fn, p0=p0, p1=p1: fn(v[p0], v[p1]), True)
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords) or \
            any(isinstance(a, ast.Starred) for a in node.args):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr in idx.method:
        op = idx.method[node.func.attr]
        sp = op.spelling
        names = [op.param_names[0]] + [a.id for a in sp.args if isinstance(a, ast.Name)]
        if len(node.args) > len(names) - 1:
            return None
        bound = {names[0]: node.func.value, **dict(zip(names[1:], node.args))}
        for k in node.keywords:
            if k.arg not in op.param_names or k.arg in bound:
                return None
            bound[k.arg] = k.value
        pos = names[1:1 + len(node.args)]
        kws = {k.arg: k.arg for k in node.keywords}
        meth = node.func.attr
        return _applied(op, node, bound,
                        lambda v, m=meth, r=names[0], pos=tuple(pos), kws=kws:
                        getattr(v[r], m)(*[v[p] for p in pos], **{k: v[p] for k, p in
                                                                  kws.items()}), True)
    fn = resolve_callable(node.func, namespace)
    op = table.lookup(fn) if fn is not None else None
    if op is None or not fusable_row(op):
        return None
    try:
        bound = op.bind(list(node.args), {k.arg: k.value for k in node.keywords})
    except TypeError:
        return None
    if any(p.required and p.name not in bound for p in op.params):
        return None
    names = [p.name for p in op.params]
    pos = names[:len(node.args)]
    kws = {k.arg: k.arg for k in node.keywords}
    return _applied(op, node, bound,
                    lambda v, fn=fn, pos=tuple(pos), kws=kws:
                    fn(*[v[p] for p in pos], **{k: v[p] for k, p in kws.items()}), False)


def _spelled_params(op) -> tuple[str, ...]:
    sp = op.spelling
    if isinstance(sp, ast.BinOp):
        return sp.left.id, sp.right.id
    if isinstance(sp, ast.UnaryOp):
        return (sp.operand.id,)
    return sp.left.id, sp.comparators[0].id


def _applied(op, node, bound, apply, via_spelling) -> Applied | None:
    try:
        operands = operand_params(op)
    except ValueError:
        return None
    args = {p: e for p, e in bound.items() if p in operands}
    stat = {p: e for p, e in bound.items() if p not in operands}
    if any(p not in args for p in operands):
        return None
    return Applied(op, node, args, stat, apply, via_spelling)


# -- typing -------------------------------------------------------------------------------------

@dataclass
class Typed:
    """What numpy does for one op application on operands of these static types."""

    out: np.dtype
    shape: tuple
    loop_in: dict  # operand param -> the dtype numpy converts it to
    c: object | None  # the parsed C expression to compute inline, or None
    c_special: str | None  # a row's C for a constant operand (``x ** 2``: ``x * x``)
    loop: tuple | None  # (ufunc name, loop index, type numbers) of numpy's inner loop
    row: str | None = None  # a row op (the table's ``c_row``): "sum", "mean", "max", "min",
    # "broadcast"


def _stand_in(vt: VT, as_type=float):
    if vt.kind == "array":
        return np.ones((1,) * vt.ndim, vt.dtype) if vt.ndim else np.ones((), vt.dtype)
    if vt.kind == "const":
        return vt.value
    return as_type(1)


def _ufunc_type(vt: VT, as_type=float):
    if vt.kind == "array":
        return vt.dtype
    if vt.kind == "const" and isinstance(vt.value, np.generic):
        return np.dtype(vt.value.dtype)
    v = vt.value if vt.kind == "const" else as_type(1)
    if isinstance(v, bool):
        return np.dtype(np.bool_)
    return type(v) if type(v) in (int, float) else None


def type_op(app: Applied, vts: dict, namespace: dict) -> Typed | str:
    """Typed, or the reason the application cannot be fused."""
    op = app.op
    static = {}
    for p, e in app.static.items():
        ok, v = static_value(e, namespace)
        if not ok:
            return f"`{ast.unparse(e)}` is not known before run time"
        static[p] = v
    shapes = [vt.shape for vt in vts.values() if vt.kind == "array"]
    if not shapes:
        return "no array operand"
    try:
        shape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return "operands do not broadcast"
    # numpy's result dtype, with weak Python numbers tried as int, float and bool: a value
    # whose kind changes the result cannot be fused (its kind is not known until run time)
    outs = set()
    for as_type in ((float, int, bool) if any(v.kind == "number" for v in vts.values())
                    else (float,)):
        vals = {p: _stand_in(vt, as_type) for p, vt in vts.items()}
        vals.update(static)
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = app.apply(vals)
        except Exception:  # numpy rejects these types: let numpy say so at run time
            return "numpy rejects these operand types"
        if not isinstance(res, (np.ndarray, np.generic)):
            return "not an array result"
        outs.add(np.dtype(res.dtype))
    if len(outs) != 1:
        return "the result's dtype depends on whether a Python number is an int or a float"
    out = outs.pop()
    if out not in C_TYPES:
        return f"no C type for {out}"
    # the loop's input dtypes
    fn = op.fn
    operands = tuple(app.args)
    c_types = getattr(op, "c_types", None) or {}
    if isinstance(fn, np.ufunc) and fn.nin == len(operands) and fn.nout == 1 and \
            not c_types:
        loop_sets = set()
        for as_type in ((float, int, bool) if any(v.kind == "number" for v in vts.values())
                        else (float,)):
            types = tuple(_ufunc_type(vts[p], as_type) for p in operands)
            if any(t is None for t in types):
                return "an operand numpy's loop resolution cannot take"
            try:
                loop_sets.add(fn.resolve_dtypes(types + (None,)))
            except Exception:
                return "numpy has no loop for these types"
        if len(loop_sets) != 1:
            return "the loop depends on whether a Python number is an int or a float"
        resolved = loop_sets.pop()
        loop_in = dict(zip(operands, resolved[:-1]))
        if np.dtype(resolved[-1]) != out:
            return "the ufunc's loop and the result disagree"
    else:
        loop_in = {p: (np.dtype(np.bool_) if c_types.get(p) == "bool" else out)
                   for p in operands}
    kinds = op.c_kinds
    allowed = {dt for k in kinds for dt in KIND_DTYPES.get(k, ())}
    for p, dt in loop_in.items():
        if c_types.get(p) == "bool":
            continue
        if np.dtype(dt) not in allowed:
            return f"{op.name}'s C is not for {np.dtype(dt)} (c_kinds={kinds!r})"
    loop_in = {p: np.dtype(dt) for p, dt in loop_in.items()}
    for p, dt in loop_in.items():
        src = vts[p]
        if src.kind == "array" and src.dtype.kind == "f" and dt.kind in "iu":
            return "a float-to-integer conversion (undefined in C for NaN and overflow)"
    # how to compute it
    consts = getattr(op, "c_consts", None) or {}
    special = None
    for p, table_ in consts.items():
        vt = vts.get(p)
        if vt is None or not app.via_spelling:
            continue
        if vt.kind == "const" and not isinstance(vt.value, bool) and vt.value in table_:
            special = table_[vt.value]
        elif vt.kind == "number" or (vt.kind == "array" and vt.ndim == 0):
            return (f"`{ast.unparse(app.node)}`: numpy's result depends on the value of "
                    f"{p}, known only at run time")
    tree = cexpr.parse(special or op.c_expr)
    if cexpr.exact(tree):
        return Typed(out, shape, loop_in, tree, special, None)
    if not isinstance(fn, np.ufunc) or fn.nout != 1 or fn.nin != len(operands):
        return f"{op.name}'s C is not exact and it has no numpy loop to call"
    if any(dt.kind != "f" for dt in loop_in.values()) or out.kind != "f":
        return f"{op.name}: numpy's loop is called for float types only"
    sig = "".join(loop_in[p].char for p in operands) + "->" + out.char
    if sig not in fn.types:
        return f"numpy.{fn.__name__} has no {sig} loop"
    if getattr(np, fn.__name__, None) is not fn:
        return f"numpy.{fn.__name__} is not the ufunc {fn!r}"
    nums = tuple(loop_in[p].num for p in operands) + (out.num,)
    return Typed(out, shape, loop_in, None, None, (fn.__name__, fn.types.index(sig), nums))


def cast_ok(src: np.dtype, dst: np.dtype) -> bool:
    """Can C convert a value of dtype src to dst as numpy's cast does?"""
    if src == dst:
        return True
    return not (src.kind == "f" and dst.kind in "iu")


# -- row ops: last-axis reductions and their broadcasts back (row kernels) --------------------

_ROW_METHODS: list = []  # [(table generation, _row_methods' answer)]


def _row_methods() -> dict:
    """Method names of the row reductions (``g.sum(axis=2, keepdims=True)``): the ndarray
    method of the same name as the row's numpy function (kept until the table changes)."""
    gen = table.generation()
    if _ROW_METHODS and _ROW_METHODS[0][0] == gen:
        return _ROW_METHODS[0][1]
    out = {}
    for op in table.all_ops(user=True, optional=False):  # (scipy rows: none fusable)
        name = getattr(op.fn, "__name__", "")
        if op.c_row in ("sum", "mean", "max", "min") and getattr(np, name, None) is op.fn and \
                hasattr(np.ndarray, name):
            out.setdefault(name, op)
    _ROW_METHODS[:] = [(gen, out)]
    return out


def match_row(node: ast.expr, namespace: dict) -> Applied | None:
    """A row op application (its row has ``c_row``): a call of the op's function, or the
    ndarray method of the same name on an array."""
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords) or \
            any(isinstance(a, ast.Starred) for a in node.args):
        return None
    fn = resolve_callable(node.func, namespace)
    op = table.lookup(fn) if fn is not None else None
    args = list(node.args)
    if op is None and isinstance(node.func, ast.Attribute) and \
            resolve_callable(node.func.value, namespace) is None:
        op = _row_methods().get(node.func.attr)
        args = [node.func.value] + args
    if op is None or not op.c_row:
        return None
    try:
        bound = op.bind(args, {k.arg: k.value for k in node.keywords})
    except TypeError:
        return None
    first = op.params[0].name
    if first not in bound or any(p.required and p.name not in bound for p in op.params):
        return None
    return Applied(op, node, {first: bound[first]},
                   {p: e for p, e in bound.items() if p != first}, None, False)


def type_row(app: Applied, vts: dict, namespace: dict) -> Typed | str:
    """Typed for a row op, or the reason it is left to numpy. A reduction (sum, mean, max,
    min) must be over the last axis of a float32/float64 array of more than one column,
    keepdims=True (its value:
    one per row); a broadcast must take such a per-row value back to the full row."""
    (p, vt), = vts.items()
    if vt.kind != "array" or vt.dtype not in KIND_DTYPES["f"] or not vt.ndim:
        return "row ops are for float32 / float64 arrays"
    static = {}
    for q, e in app.static.items():
        ok, v = static_value(e, namespace)
        if not ok:
            return f"`{ast.unparse(e)}` is not known before run time"
        static[q] = v
    kind = app.op.c_row
    if kind in ("sum", "mean", "max", "min"):
        axis = static.get("axis")
        if set(static) - {"axis", "keepdims"} or static.get("keepdims") is not True or \
                type(axis) is not int or axis not in (-1, vt.ndim - 1) or vt.shape[-1] < 2:
            return "not a last-axis reduction with keepdims=True"
        row = vt.shape[:-1] + (1,)
        loop = None
        if kind in ("max", "min"):
            # numpy's own maximum / minimum loop, called as np.max calls it on a row (its
            # SIMD order decides which of -0.0 and +0.0 a tie gives): see cgen_rows.reduce
            fn = np.maximum if kind == "max" else np.minimum
            sig = vt.dtype.char * 2 + "->" + vt.dtype.char
            loop = (fn.__name__, fn.types.index(sig), (vt.dtype.num,) * 3)
        return Typed(vt.dtype, row, {p: vt.dtype}, None, None, loop, kind)
    if kind == "broadcast":
        shape = static.get("shape")
        if set(static) != {"shape"} or not isinstance(shape, tuple) or \
                not all(type(d) is int for d in shape) or len(shape) != vt.ndim or \
                vt.shape[-1] != 1 or shape[:-1] != vt.shape[:-1] or shape[-1] < 2:
            return "not a broadcast of one value per row along the last axis"
        return Typed(vt.dtype, shape, {p: vt.dtype}, cexpr.parse(p), None, None, kind)
    return f"unknown row op kind {kind!r}"
