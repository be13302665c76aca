"""Adjoint state while the backward sweep is generated: how a contribution becomes code.

An adjoint is absent (zero), an alias of an expression (no statement made yet), or a named
variable; a named adjoint that holds a buffer only it refers to is *owned*, and only then do
later contributions go in place (`dx += c`). `AdjointsMixin` holds these methods of
`srcad.transform.reverse.Reverse`; `is_fresh` says whether an expression certainly makes a
new array, and `zeros_expr` spells a zero derivative.

    accumulate("h", <g1>)   ->  dh = g1                 (a fresh array: owned)
    accumulate("h", <g2>)   ->  dh += g2
    accumulate("x", <unindex(g, x, 1)>)  ->  dx[1] += g   (a gather into its own buffer)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from .. import ir, runtime
from ..gcode import Line, assign, clone, dtype_src, name, store
from ..gcode import free_names as _free
from ..ops.table import lookup

_FRESH_HELPERS = {
    runtime.unindex, runtime.matmul_grad_a, runtime.matmul_grad_b,
    runtime.select_grad, runtime.extremum_grad, runtime.extremum_grad_add, runtime.clip_grad,
    runtime.as_grad,
    runtime.astype,
    runtime.setitem_grad_x,
}
_VIEW_NP = {np.reshape, np.transpose, np.swapaxes, np.expand_dims, np.squeeze,
            np.broadcast_to, np.ravel, np.asarray}


def is_fresh(expr: ast.expr, globals_: dict, specialised: bool = False) -> bool:
    """Does `expr` certainly evaluate to a new array that nothing else refers to?"""
    if isinstance(expr, (ast.BinOp, ast.UnaryOp)):
        return True
    if isinstance(expr, ast.Call):
        f = expr.func
        if isinstance(f, ast.Attribute):
            if isinstance(f.value, ast.Name) and f.value.id == "np":
                fn = getattr(np, f.attr, None)
                row = lookup(fn) if fn is not None else None
                # a row marked `view` (np.flip, np.moveaxis, ...) may return memory of its input
                return fn is not None and fn not in _VIEW_NP and not (row and row.view)
            if f.attr == "reshape":  # a view of a new array only the view refers to
                return is_fresh(f.value, globals_, specialised)
            return f.attr in ("astype", "copy", "sum")
        if isinstance(f, ast.Name):
            fn = globals_.get(f.id, getattr(runtime, f.id, None))
            if fn is runtime.unbroadcast and expr.args:
                # it may hand back its input (shapes unknown): fresh when that input is
                return is_fresh(expr.args[0], globals_, specialised)
            return fn in _FRESH_HELPERS
    return False




@dataclass
class Adj:
    """The state of one adjoint while the backward is generated (absent: not in the map)."""

    alias: ast.expr | None = None  # the adjoint is this expression (no statement made yet)
    uniform: ast.expr | None = None  # ... which broadcasts this scalar over the value
    owned: bool = False  # a named adjoint that holds a buffer only it refers to
    tree: bool = False  # ... which is certainly a GradTree (a container's, made by a gather)

    @property
    def named(self) -> bool:
        return self.alias is None



def _np(attr: str) -> ast.Attribute:
    return ast.Attribute(value=name("np"), attr=attr, ctx=ast.Load())


def zeros_expr(value: ast.expr, info) -> ast.Call:
    """A zero derivative for `value`: `np.zeros_like` for a known array, else the runtime's
    `zeros_grad` (a Python float's is 0.0, a container's an empty GradTree)."""
    fn = _np("zeros_like") if info is not None and info.dtype is not None else name("zeros_grad")
    return ast.Call(func=fn, args=[value], keywords=[])


def int_index(index: ast.expr, infos: dict) -> bool:
    """Is this index expression certainly a Python int (a constant, a loop counter the probe
    saw as one, arithmetic on those)?"""
    if isinstance(index, ast.Constant):
        return isinstance(index.value, int) and not isinstance(index.value, bool)
    if isinstance(index, ast.Name):  # a Python int (a loop counter), known from the probe
        info = infos.get(index.id)
        return info is not None and info.ndim == 0 and info.dtype is None
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.Add, ast.Sub, ast.Mult)):
        return int_index(index.left, infos) and int_index(index.right, infos)
    return False


def basic_index(index: ast.expr, infos: dict) -> bool:
    """Is this index expression certainly basic (ints, slices, None, ...)? No position is
    picked twice."""
    if isinstance(index, ast.Constant) and (index.value is None or index.value is Ellipsis):
        return True
    if isinstance(index, ast.Tuple):
        return all(basic_index(e, infos) for e in index.elts)
    if isinstance(index, ast.Slice):
        return all(p is None or basic_index(p, infos) for p in (index.lower, index.upper,
                                                                 index.step))
    if isinstance(index, ast.Subscript) and isinstance(index.value, ast.Attribute) and \
            index.value.attr == "s_":
        return basic_index(index.slice, infos)
    return int_index(index, infos)


class AdjointsMixin:
    """The adjoint-state methods of `Reverse` (see the module docstring)."""

    def ref(self, var: str) -> ast.expr:
        """The expression holding var's adjoint (it must not be absent)."""
        st = self.state[var]
        return clone(st.alias) if st.alias is not None else name(self.adj[var])

    def bind(self, var: str, value: ast.expr, line, out: list, *, owned: bool,
             tree: bool = False) -> None:
        """Emit `dvar = value`: a new binding of var's adjoint name."""
        d = self.adj_name(var)
        # an alias that reads the old binding keeps that value under a name of its own
        # (a fresh one, never rebound, so that swaps cannot chase each other)
        for other, st in list(self.state.items()):
            if other != var and st.alias is not None and d in _free(st.alias):
                snap = self.fresh(f"d{other}")
                self.snap_of[snap] = other
                out.append(Line(assign(snap, st.alias), line))
                self.state[other] = Adj(alias=name(snap), uniform=st.uniform)
        out.append(Line(assign(d, value), line))
        self.state[var] = Adj(owned=owned, tree=tree)

    def materialise(self, var: str, line, out: list, *, zeros: bool, within=None,
                    stale: bool = False) -> None:
        """Make var's adjoint a named variable (absent: zeros shaped like the value).
        `within`: the branch arms around the code this goes into (see `zeros`); `stale`: the
        name may hold another value than the one the adjoint belongs to (see `zeros`)."""
        st = self.state.get(var)
        if st is None:
            if zeros:  # (a container's zeros are an empty GradTree)
                self.bind(var, self.zeros(var, within, stale), line, out, owned=True,
                          tree=self.maybe_container(var))
        elif st.alias is not None:
            self.bind(var, st.alias, line, out, owned=False)

    def zeros(self, var: str, within=None, stale: bool = False) -> ast.expr:
        info = self.infos.get(var)
        stale = stale or var in getattr(self, "stale_now", ())  # (in a loop that rebinds it)
        if stale and (info is None or info.shape is None or info.dtype is None) and \
                var not in self.containers and not self.restored(var):
            # a loop rebinds it, maybe to values of other shapes (`W = params["W%d" % i]`),
            # and the backward does not pop its old values back: the value it holds when the
            # backward sweep resets its adjoint may be another iteration's. The forward is
            # then planned to push them (reverse.py: `rezero`), so that the zero is made like
            # the value the adjoint belongs to; where it cannot be, a scalar zero (weak, as a
            # Python float: it adds to any shape and keeps the dtype it meets)
            self.rezero.add(var)
            return ast.Call(func=name("zeros_grad"), args=[ast.Constant(None)], keywords=[])
        sites = self.def_sites.get(var, ()) if within is not None else ()
        arms = {self.arms[id(d)][-1] if self.arms[id(d)] else None for d in sites}
        if within is not None and sites and var not in self.fn.params and len(arms) == 1 \
                and None not in arms and not arms & set(within):
            # a value made on one arm of one branch only may be unbound in the code of
            # another branch's arm (`within` does not hold its arm): its zero is made from its
            # shape and dtype, or -- where the first call never made it (no shape known) -- a
            # scalar zero, which adds and broadcasts as zeros of any shape would
            if info is None or info.shape is None or info.dtype is None:
                return ast.Call(func=name("zeros_grad"), args=[ast.Constant(None)], keywords=[])
            return ast.Call(func=_np("zeros"), args=[ast.Constant(tuple(info.shape))],
                            keywords=[ast.keyword(arg="dtype", value=ast.parse(
                                dtype_src(info.dtype), mode="eval").body)])
        return zeros_expr(name(var), info)

    def accumulate(self, var: str, expr: ast.expr, line: int, out: list) -> None:
        var = self.same.get(var, var)  # (an alias of an array adds into the array's adjoint)
        fresh = is_fresh(expr, {**runtime.__dict__, **self.globals}, bool(self.infos))
        # a gather from a container gives a GradTree (and a GradTree plus anything is one)
        gathered = isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and \
            expr.func.id == "unindex" and self.maybe_container(var)
        st = self.state.get(var)
        if st is None:
            uniform = self.uniform_scalar(expr)
            if (uniform is not None or isinstance(expr, (ast.Name, ast.Constant))) and \
                    not (_free(expr) & self.mutable):
                # an alias must not read a value that a restore (pop) will rebind
                self.state[var] = Adj(alias=expr, uniform=uniform)
            else:
                self.bind(var, expr, line, out, owned=fresh and self.may_own(var, gathered),
                          tree=gathered)
            return
        d = self.adj_name(var)
        scatter = self._scatter(var, expr) if st.named and st.owned else None
        if scatter is not None:  # a gather's contribution, added where it was gathered
            out.append(Line(scatter, line))
            return
        tree = st.tree or gathered
        if st.alias is not None:  # the second contribution: sum into a new buffer
            self.bind(var, ast.BinOp(left=st.alias, op=ast.Add(), right=expr), line, out,
                      owned=self.may_own(var, tree), tree=tree)
        elif st.owned:
            out.append(Line(ast.AugAssign(target=store(d), op=ast.Add(), value=expr), line))
            st.tree = tree
        else:
            self.bind(var, ast.BinOp(left=name(d), op=ast.Add(), right=expr), line, out,
                      owned=self.may_own(var, tree), tree=tree)

    def may_own(self, var: str, tree: bool) -> bool:
        """May a new adjoint buffer of `var` take later contributions in place (`d += c`)?
        Not an array adjoint of a container (numpy used the list as an array): a GradTree
        may be added to it, which numpy cannot do in place."""
        return tree or not self.maybe_container(var)

    def maybe_container(self, var: str) -> bool:
        """May `var` hold a list or tuple? (The probe gives those no Info.)"""
        return var in self.containers or (bool(self.infos) and var not in self.infos)

    def _scatter(self, var: str, expr: ast.expr):
        """`dx[index] += g` for a contribution `unindex(g, x, index)` into x's own buffer,
        when the index is basic (no position twice, so the sums are those of adding a
        zero-padded copy): no array of x's size per gather (a layer's weights taken out of
        a stack in a loop)."""
        info = self.infos.get(var)
        gather = (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)
                  and expr.func.id == "unindex" and len(expr.args) == 3 and not expr.keywords
                  and isinstance(expr.args[1], ast.Name) and expr.args[1].id == var)
        array = info is not None and info.dtype is not None and info.ndim > 0
        if self.module.options.reparsed or not (gather and array and
                                                basic_index(expr.args[2], self.infos)):
            return None
        g, _, index = expr.args
        if isinstance(index, ast.Subscript) and isinstance(index.value, ast.Attribute) and \
                index.value.attr == "s_":  # np.s_[1:, 0] -> dx[1:, 0]
            index = index.slice
        target = ast.Subscript(value=name(self.adj_name(var)), slice=index, ctx=ast.Store())
        return ast.AugAssign(target=target, op=ast.Add(), value=g)

    def uniform_scalar(self, expr: ast.expr) -> ast.expr | None:
        """S if `expr` is ``np.broadcast_to(S, shape)`` with S a scalar, else None."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
                and expr.func.attr == "broadcast_to" and isinstance(expr.func.value, ast.Name)
                and expr.func.value.id == "np" and expr.args):
            return None
        s = expr.args[0]
        for n in _free(s):
            info = self.info_of(ast.Name(id=n)) if n != "np" else None
            if n != "np" and (info is None or info.ndim != 0):
                return None
        return s

    def takes_scalar_g(self, s: ir.Call, pname: str) -> bool:
        """Can this rule take a scalar `g` and still yield a full-shaped result?"""
        target = self.infos.get(s.target)
        if not s.op.elementwise or target is None:
            return False
        infos = [i for a in s.args.values() for v in ir.atom_vars(a)
                 if (i := self.infos.get(v)) is not None]
        if not all(i.c_order for i in infos) or not target.c_order:
            # a transposed operand: numpy may lay the result out differently next to a scalar
            # than next to a broadcast array, and a later sum would add in another order
            return False
        dtypes = {i.dtype for i in infos if i.dtype is not None}
        if dtypes - {target.dtype}:
            # mixed dtypes: the broadcast array has the result's dtype and promotes the
            # others; a Python scalar would not (numpy's weak scalars)
            return False
        reads = s.op.vjp(pname).reads - {"g"}
        if "out" in reads:
            return True
        for p in reads:
            a = s.args.get(p)
            if isinstance(a, ir.Var) and (i := self.infos.get(a.name)) is not None \
                    and i.shape == target.shape:
                return True
        return False
