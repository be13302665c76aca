"""Shape-specialised simplification of generated expressions.

Once a transformed function is specialised to its inputs' shapes and dtypes, some rule
forms can be simplified at generation time:
  * runtime helpers with a ``simplify`` hook (``unbroadcast(g, x)`` with equal shapes is
    ``g``; a 2-D ``matmul_grad_b(g, a, b)`` is ``a.T @ g``, an N-D @ 2-D one the single GEMM
    ``x.reshape(512, 128).T @ g.reshape(512, 512)``);
  * helpers marked ``static`` on constant arguments (tuples of constants too) are evaluated
    (``inverse_permutation(None)`` is ``None``, ``inverse_permutation((0, 2, 1, 3), 4)`` is
    ``(0, 2, 1, 3)``);
  * shape queries on values of known shape become constants (``np.size(h)`` is 512);
  * integer arithmetic on constants (``max`` and ``min`` of them too), comparisons of numeric
    constants, and multiplication by a literal 1.0 (the seed) -- or by numpy's 1.0 of a
    float dtype the product keeps, spread or not (``np.float32(1.0) * probe`` is ``probe``)
    -- fold; ``np.where`` of a constant
    condition picks an array operand where that keeps its values (`_Simplify._where`);
  * trailing arguments of runtime helpers equal to their defaults are dropped, and so are a
    numpy call's ``where=True`` and ``dtype=None`` (a reduction rule's ``where=where`` with
    numpy's defaults); ``masked`` / ``filled`` / ``masked_count`` with ``where=True`` are
    their argument.
Each rewrite keeps the numpy calls that run on arrays the same, so results are unchanged.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import operator
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import runtime
from ..gcode import dtype_is_type, dtype_src, parse_expr
from .templates import subst


@dataclass(frozen=True)
class Info:
    """What is known statically about a value: its shape and dtype (None: a Python scalar)."""

    shape: tuple
    dtype: object
    value: object = None  # for a constant: its value
    c_order: bool = True  # C-contiguous (numpy picks a result's memory order from its inputs')

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @classmethod
    def of(cls, value) -> "Info | None":
        if isinstance(value, np.ndarray):
            return cls(tuple(value.shape), value.dtype, c_order=value.flags.c_contiguous)
        if isinstance(value, np.generic):
            return cls(tuple(value.shape), value.dtype)
        if isinstance(value, (bool, int, float)):
            return cls((), None)
        return None


class Infos(dict):
    """What the first call (the probe) found: {id(function): {name: Info}}, and, in
    `containers`, {id(function): names that held a list or tuple} (those get no Info)."""

    def __init__(self, tables=(), containers=None, entry=None):
        super().__init__(tables)
        self.containers = dict(containers or {})
        # {id(function): {parameter: Info}} of the values the call began with (the
        # specialisation's own arguments: true however the body rebinds them)
        self.entry = dict(entry or {})
        # {id(function): names that held a 0-d numpy array every time, not a number (an Info
        # of shape () is either): the probe's, set after it ran
        self.arrays0d: dict = {}
        self.numbers: dict = {}  # (and names that held a number every time)
        # {id(function): {id(statement): the one kind of value it made every time it ran --
        # "0d", "number", "array" (of one dimension or more), "other" -- where the values
        # it reads are the same on every path}
        self.sites: dict = {}


def _const_shape(node) -> tuple | None:
    """The shape a tuple of integer constants spells, or None."""
    if isinstance(node, ast.Tuple) and all(_is_const(e, int) for e in node.elts):
        return tuple(e.value for e in node.elts)
    return None


def _const(v) -> ast.Constant:
    return ast.Constant(value=v)


def _is_const(node, types=(int, float)) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, types) and not isinstance(
        node.value, bool
    )


_INT_OPS = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__,
            ast.FloorDiv: int.__floordiv__}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def _const_number(node):
    """The value of a numeric constant expression (``3.0 - 1``, ``-2``), or None."""
    if _is_const(node):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _const_number(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        a, b = _const_number(node.left), _const_number(node.right)
        return None if a is None or b is None else _ARITH[type(node.op)](a, b)
    return None


def _literal(node) -> bool:
    """A constant, or a tuple of them (``(0, 2, 1, 3)``: a transpose's axes)."""
    if isinstance(node, ast.Tuple):
        return all(_literal(e) for e in node.elts)
    return isinstance(node, ast.Constant)


def _plain(value) -> bool:
    """A value Python writes as a literal (a numpy scalar's repr is not one)."""
    if isinstance(value, tuple):
        return all(_plain(v) for v in value)
    return value is None or type(value) in (int, float, bool, str)


class _Simplify(ast.NodeTransformer):
    def __init__(self, globals_: dict, info_of: Callable[[ast.expr], Info | None]):
        self.globals = globals_
        self.info_of = info_of

    def resolve(self, func):
        if isinstance(func, ast.Name):
            found = self.globals.get(func.id, getattr(runtime, func.id, None))
            return found if found is not None or func.id not in ("max", "min") else \
                getattr(builtins, func.id)
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id == "np"):
            return getattr(np, func.attr, None)
        return None

    def visit_Call(self, node):
        self.generic_visit(node)
        fn = self.resolve(node.func)
        if fn is None:
            return node
        if node.keywords and isinstance(node.func, ast.Attribute):
            _drop_numpy_defaults(node, fn)
        # shape queries on known values
        if fn in (np.size, np.shape, np.ndim) and len(node.args) == 1 and not node.keywords:
            info = self.info_of(node.args[0])
            shape = info.shape if info is not None else self._broadcast_shape(node.args[0])
            if shape is not None:
                value = {np.size: int(np.prod(shape, dtype=np.int64)), np.shape: shape,
                         np.ndim: len(shape)}[fn]
                return _const(value)
        # static helpers on constant arguments
        if getattr(fn, "static", False) and not node.keywords and \
                all(_literal(a) for a in node.args):
            value = fn(*[ast.literal_eval(a) for a in node.args])
            if _plain(value):
                return _const(value)
        if fn is runtime.last_writes and len(node.args) == 3 and not node.keywords and \
                self._basic_index(node.args[2]):
            return node.args[0]  # (no position written twice: the helper hands back ct)
        simplify = SIMPLIFY.get(fn)
        if simplify is not None and not node.keywords:
            infos = [self.info_of(a) for a in node.args]
            # a hook may take an unknown first argument (matmul's backward needs only the
            # operands' shapes; the cotangent's Info is missing after a subroutine's call)
            if all(i is not None for i in infos[getattr(simplify, "known_from", 0):]):
                template = simplify(*infos)
                if template is not None:
                    params = list(inspect.signature(fn).parameters)
                    mapping = dict(zip(params, node.args))
                    return self.visit(subst(parse_expr(template), mapping))
        if fn is np.where:
            return self._where(node)
        if fn in (max, min) and len(node.args) > 1 and not node.keywords and \
                all(_is_const(a, int) for a in node.args):  # a rule's guard on a count
            return _const(fn(a.value for a in node.args))
        if fn in _RUNTIME_FUNCS:
            _drop_default_tail(node, fn)
        return node

    def _times_one_is(self, one, x) -> bool:
        """Is ``one * x`` the array `x` itself, value, dtype and shape -- `one` a float scalar
        1.0 of numpy's (the seed cast to the adjoint's dtype, ``np.float32(1.0)``), or one
        spread to `x`'s own shape (``np.broadcast_to(np.float32(1.0), (8, 128))``), `x` a
        floating array of one dimension or more whose dtype the product keeps? (x * 1 is x
        for every float, -0.0, inf and NaN included.)"""
        info = self.info_of(x)
        # (not a 0-d value: a numpy scalar times a 0-d array is a numpy scalar, not the array)
        if info is None or info.dtype is None or np.dtype(info.dtype).kind not in "fc" or \
                info.ndim == 0:
            return False
        if isinstance(one, ast.Call) and self.resolve(one.func) is np.broadcast_to and \
                len(one.args) == 2 and not one.keywords:
            if _const_shape(one.args[1]) != info.shape:
                return False
            one = one.args[0]
        scalar = self.resolve(one.func) if isinstance(one, ast.Call) else None
        if scalar not in (np.float16, np.float32, np.float64) or len(one.args) != 1 or \
                one.keywords or not _is_const(one.args[0]) or one.args[0].value != 1:
            return False
        return np.result_type(scalar, info.dtype) == info.dtype

    def _basic_index(self, node) -> bool:
        """Is `node` (``np.s_[...]``) certainly an index without a list or an integer array,
        whatever it is called with? Slices, constants and names of 0-d values: with such an
        index `last_writes` hands back its cotangent unchanged."""
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "np"
                and node.value.attr == "s_"):
            return False
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for item in items:
            if isinstance(item, ast.Slice):
                parts = [p for p in (item.lower, item.upper, item.step) if p is not None]
            else:
                parts = [item]
            for p in parts:
                if isinstance(p, ast.Constant) and not isinstance(p.value, (list, tuple)):
                    continue
                if isinstance(p, ast.Name):
                    info = self.info_of(p)
                    if info is not None and info.shape == ():
                        continue
                return False
        return True

    def _broadcast_shape(self, node) -> tuple | None:
        """The shape of ``np.broadcast_to(v, (3, 4))`` (a seed spread over a reduction's
        output), or None."""
        if not (isinstance(node, ast.Call) and len(node.args) == 2 and not node.keywords
                and self.resolve(node.func) is np.broadcast_to):
            return None
        shape = node.args[1]
        if isinstance(shape, ast.Tuple) and all(_is_const(n, int) for n in shape.elts):
            return tuple(n.value for n in shape.elts)
        return None

    def _where(self, node: ast.Call) -> ast.expr:
        """``np.where(False, 1, x)`` (a rule's guard, decided by a constant: the power rule's
        ``np.where(y == 0, 1, x)`` for ``x ** 3.0``) is ``x`` where x is an array of at least
        one dimension whose dtype the constant does not change: the same values (np.where
        copies them). Kept for scalars: there np.where is what makes a Python float a numpy
        value (and a 0-d array computes ``** 2`` as a square, a numpy scalar with pow)."""
        if len(node.args) != 3 or node.keywords or not isinstance(node.args[0], ast.Constant) \
                or not isinstance(node.args[0].value, bool):
            return node
        chosen, other = (node.args[1], node.args[2]) if node.args[0].value else \
            (node.args[2], node.args[1])
        if not _is_const(other):
            return node
        info = self.info_of(chosen)
        if info is None or info.dtype is None or info.ndim == 0:
            return node
        dtype = np.dtype(info.dtype)
        if dtype.kind != "f" or np.result_type(other.value, dtype) != dtype:
            return node
        return chosen

    def visit_Compare(self, node):
        """A comparison of two numeric constants (``3.0 - 1 == 0``, a rule's guard on a
        constant exponent) is its truth value: Python computes it the same way at run time."""
        self.generic_visit(node)
        if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARE:
            return node
        left, right = _const_number(node.left), _const_number(node.comparators[0])
        if left is None or right is None:
            return node
        return _const(bool(_COMPARE[type(node.ops[0])](left, right)))

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr in ("size", "shape", "ndim") and isinstance(node.ctx, ast.Load):
            info = self.info_of(node.value)
            if info is not None:
                return _const(getattr(info, node.attr))
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = node.left, node.right
        if _is_const(left, int) and _is_const(right, int) and type(node.op) in _INT_OPS:
            if not (isinstance(node.op, ast.FloorDiv) and right.value == 0):
                return _const(_INT_OPS[type(node.op)](left.value, right.value))
        if isinstance(node.op, ast.Mult):
            if _is_const(left, float) and left.value == 1.0:
                if _is_const(right):
                    return _const(1.0 * right.value)
                return right
            if _is_const(right, float) and right.value == 1.0 and not _is_const(left):
                return left
            for one, other in ((left, right), (right, left)):
                if self._times_one_is(one, other):
                    return other
        if isinstance(node.op, ast.Pow) and _is_const(right, int) and right.value == 1:
            if not _is_const(left):
                return left
        if isinstance(node.op, ast.Div) and _is_const(right) and right.value == 1:
            if not _is_const(left, int):
                return left
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.USub) and _is_const(node.operand):
            return _const(-node.operand.value)
        return node


_RUNTIME_FUNCS = {getattr(runtime, n) for n in runtime.__all__}


# -- shape-specialised forms of runtime helpers ------------------------------------------------
# Each hook takes the Info of the helper's arguments and returns an equivalent expression over
# the helper's parameter names (or None to keep the call). The array operations they emit are
# the ones the helper would run, so results are bitwise unchanged.




def _unbroadcast_form(g: Info, x: Info):
    if x.dtype is not None and g.dtype is not None and g.dtype != x.dtype:
        return None
    if g.shape == x.shape:
        return "g"
    lead = g.ndim - x.ndim
    if lead < 0:
        return None
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(x.shape) if n == 1 and g.shape[i + lead] != 1)
    kept = tuple(n for i, n in enumerate(g.shape) if i not in axes)
    axis = axes[0] if len(axes) == 1 else axes
    # the method form: same reduction as np.sum, without np.sum's Python-level dispatch
    if kept == x.shape:
        return f"g.sum(axis={axis!r})"
    if lead == 0:
        return f"g.sum(axis={axis!r}, keepdims=True)"
    return f"g.sum(axis={axis!r}).reshape({x.shape!r})"


def _unreduce_form(g: Info, x: Info, axis: Info | None = None, keepdims: Info | None = None):
    axis_v = None if axis is None else axis.value
    keep_v = False if keepdims is None else keepdims.value
    if x.dtype is None or (g.dtype is not None and g.dtype != x.dtype):
        return None
    if axis_v is None and not keep_v and g.ndim != 0:
        # (an axis whose value is not known here -- a name computed when the code runs -- has
        # no value in its Info, as None has none: a reduction over every axis gives a 0-d g,
        # so this one is over some axes, which the helper finds when it runs)
        return None
    src = "g"
    if g.ndim == 0 and x.dtype != np.float64:
        # a 0-d adjoint may be a Python float at run time (grown from the seed 1.0): cast it,
        # as unreduce does, so that the broadcast array has x's dtype (a dtype with no
        # scalar type of its own, big-endian or object, keeps the helper)
        if not dtype_is_type(x.dtype):
            return None
        src = f"{dtype_src(x.dtype)}(g)"
    if axis_v is not None and not keep_v:
        axes = axis_v if isinstance(axis_v, tuple) else (axis_v,)
        axes = sorted(a % x.ndim for a in axes)
        shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
        src = f"np.reshape({src}, {shape!r})"
    return f"np.broadcast_to({src}, {x.shape!r})"


def _same_dtype(g: Info | None, a: Info, b: Info) -> bool:
    """a, b and g of one dtype (g may be a Python float: it then takes theirs)."""
    return (a.dtype is not None and a.dtype == b.dtype
            and (g is None or g.dtype in (None, a.dtype)))


def _matmul_form(g: Info | None, a: Info, b: Info, wrt: str):
    if not _same_dtype(g, a, b) or a.ndim == 0 or b.ndim == 0:
        return None
    form = runtime.matmul_grad_form(a.shape, b.shape, wrt)
    # a cotangent of unknown dtype: cast as the helper does (unbroadcast of equal shapes
    # only casts), so that the two modes still run the same calls
    return form if g is not None else f"unbroadcast({form}, {wrt})"


def _matmul_a_form(g: Info | None, a: Info, b: Info):
    # the helper's own expression for these shapes (runtime_linalg.matmul_grad_form): a plain
    # GEMM on reshaped operands where one operand has no batch, so both modes match bitwise
    # (mixed dtypes keep the call, which casts its result to the argument's dtype after
    # running the same expression)
    return _matmul_form(g, a, b, "a")


def _matmul_b_form(g: Info | None, a: Info, b: Info):
    return _matmul_form(g, a, b, "b")


def _dot_a_form(g: Info, a: Info, b: Info):
    if a.ndim == 0 or b.ndim == 0 or b.ndim > 2:
        return None
    return _matmul_a_form(g, a, b) or "matmul_grad_a(g, a, b)"


def _dot_b_form(g: Info, a: Info, b: Info):
    if a.ndim == 0 or b.ndim == 0 or b.ndim > 2:
        return None
    return _matmul_b_form(g, a, b) or "matmul_grad_b(g, a, b)"


_matmul_a_form.known_from = _matmul_b_form.known_from = 1
_dot_a_form.known_from = _dot_b_form.known_from = 1

def _masked_form(x: Info | None, where: Info | None = None):
    if where is None or where.value is True:
        return "x"
    return None


def _filled_form(x: Info | None, where: Info | None = None, value: Info | None = None):
    if where is None or where.value is True:
        return "x"
    return None


def _count_form(n, x=None, axis=None, keepdims=None, where: Info | None = None):
    if where is None or where.value is True:
        return "n"
    return None


def _average_part_form(v, returned=None):
    return "v" if returned is None or returned.value is False else None


def _average_pair_form(t, t_count=None, returned=None):
    return "t" if returned is None or returned.value is False else None


def _average_plus_form(x, ct=None, a=None, axis=None, keepdims=None, returned=None):
    return "x" if returned is None or returned.value is False else None


# (np.average's returned=: with numpy's default returned=False these are their argument)
_average_part_form.known_from = 1
_average_pair_form.known_from = 2
_average_plus_form.known_from = 5

# (a reduction's where=: with numpy's default where=True these helpers are their argument)
_masked_form.known_from = _filled_form.known_from = 1
_count_form.known_from = 4

SIMPLIFY = {
    runtime.dot_grad_a: _dot_a_form,
    runtime.dot_grad_b: _dot_b_form,
    runtime.unbroadcast: _unbroadcast_form,
    runtime.unreduce: _unreduce_form,
    runtime.matmul_grad_a: _matmul_a_form,
    runtime.matmul_grad_b: _matmul_b_form,
    runtime.masked: _masked_form,
    runtime.filled: _filled_form,
    runtime.masked_count: _count_form,
    runtime.average_part: _average_part_form,
    runtime.average_pair: _average_pair_form,
    runtime.average_plus_count: _average_plus_form,
}


def _drop_default_tail(node: ast.Call, fn) -> None:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return
    while node.args and len(node.args) <= len(params):
        p = params[len(node.args) - 1]
        last = node.args[-1]
        if (p.default is not inspect.Parameter.empty and isinstance(last, ast.Constant)
                and last.value is p.default or (isinstance(last, ast.Constant)
                                                and p.default is not inspect.Parameter.empty
                                                and type(last.value) is type(p.default)
                                                and last.value == p.default)):
            node.args.pop()
        else:
            break


def _drop_numpy_defaults(node: ast.Call, fn) -> None:
    """A rule's ``np.mean(a, axis=axis, keepdims=True, where=where)`` called with numpy's
    defaults reads ``np.mean(a, axis=0, keepdims=True)``: ``where=True``, ``dtype=None``
    (where the function's own default is None) and ``order`` at its default are dropped --
    the same call to numpy, and the form the fuser matches."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return
    def default(k):
        if k.arg == "where" and "where" in params:
            return isinstance(k.value, ast.Constant) and k.value.value is True
        if k.arg == "dtype" and "dtype" in params and params["dtype"].default is None:
            return isinstance(k.value, ast.Constant) and k.value.value is None
        if k.arg == "order" and k.arg in params and type(params[k.arg].default) is str:
            # (`np.reshape(g, np.shape(a), order=order)` of a C-order reshape)
            return isinstance(k.value, ast.Constant) and \
                k.value.value == params[k.arg].default
        return False
    node.keywords = [k for k in node.keywords if not default(k)]


def simplify(expr: ast.expr, globals_: dict, info_of) -> ast.expr:
    return ast.fix_missing_locations(_Simplify(globals_, info_of).visit(expr))


# -- a rule's divisions of Python numbers ------------------------------------------------------
# numpy calls whose value is a Python number (a shape query), not a numpy one
_PY_VALUED = {"size", "ndim", "shape"}


def may_be_python(node: ast.expr, name_may_be_python: Callable[[str], bool]) -> bool:
    """Can `node` be a Python number (not a numpy value) when the code runs?  Constants
    are; a numpy call is not (but np.size and the like); arithmetic is a Python number only
    where all its operands are; a name asks `name_may_be_python`; anything else may be."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float))
    if isinstance(node, ast.Name):
        return name_may_be_python(node.id)
    if isinstance(node, ast.BinOp):
        return (may_be_python(node.left, name_may_be_python)
                and may_be_python(node.right, name_may_be_python))
    if isinstance(node, ast.UnaryOp):
        return may_be_python(node.operand, name_may_be_python)
    if isinstance(node, ast.Call):
        func = node.func
        while isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute):
            func = func.value
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id == "np":
            return node.func.attr in _PY_VALUED
    return True


def ieee_divisions(expr: ast.expr, name_may_be_python: Callable[[str], bool]) -> ast.expr:
    """A rule's ``a / b`` spelled ``ieee_divide(a, b)`` where both may be Python numbers and
    b is not a nonzero number written out: numpy's inf / nan where b is 0 (``g / x`` of
    np.log at a Python float 0.0), not Python's ZeroDivisionError. Where either is a numpy
    value the division already is numpy's, and stays as it is (``x ** 3.0``, ``g / x`` of an
    array, ``1.0 / 128`` of a mean)."""

    class _Divisions(ast.NodeTransformer):
        def visit_BinOp(self, node):
            self.generic_visit(node)
            if not isinstance(node.op, ast.Div):
                return node
            divisor = _const_number(node.right)
            if divisor is not None and divisor != 0:
                return node
            if not (may_be_python(node.left, name_may_be_python)
                    and may_be_python(node.right, name_may_be_python)):
                return node
            return ast.Call(func=ast.Name(id="ieee_divide", ctx=ast.Load()),
                            args=[node.left, node.right], keywords=[])

    return ast.fix_missing_locations(_Divisions().visit(expr))
