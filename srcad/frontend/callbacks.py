"""numpy functions that call a Python function: np.piecewise, np.vectorize,
np.apply_along_axis and np.apply_over_axes, written out as the loops and writes numpy performs
(gast -> gast).

Input: a fenced gast `FunctionDef` (before closures.py lifts its lambdas). Output: the same
function where such a call, inside a simple statement (an assignment, ``return``, an
expression), is computed by statements just before it, which srcad differentiates like any
code -- the callable is called as the user wrote it (a lambda is given a name, lifted by
closures.py; a module-level function or a numpy function is called by its name), so its
control flow on its own argument works:

  * ``np.piecewise(x, [c0, c1], [f0, f1, default], *args, **kw)``: ``y = np.zeros_like(x)``,
    then for each condition in order (later ones win) ``y[c] = f(x[c], *args, **kw)`` when c
    selects anything (``y[c] = f`` for a value), a default under ``~(c0 | c1)`` when there is
    one function more than conditions -- numpy's algorithm. A condition list held in a value
    (a name) is read as numpy reads it when the code runs (`piecewise_conditions`).
  * ``np.vectorize(f)(x, z)`` (or a global / decorated vectorize object, or one held in a
    local that is only called; otypes float types): f applied to each element of the
    broadcast arguments in C order, the results made an array of their shape. With
    signature= the loop runs over the non-core dimensions and f gets the core arrays;
    excluded= arguments are passed whole (`general`). Several outputs -- the signature's
    count, or f returning a tuple display of n items at every return -- are one list per
    output in the loop and a tuple of arrays after it.
  * ``np.apply_along_axis(f, axis, arr, *args, **kw)``: f applied to each 1-d slice along
    the axis, the results stacked and their axes put where the axis was (numpy's layout).
  * ``np.apply_over_axes(f, a, axes)``: ``a = f(a, axis)`` for each axis in turn, a result
    that dropped the axis given it back with np.expand_dims (numpy's loop).
Any other form is left as written: a call with no rule, refused where a differentiated value
reaches it. Tape mode runs the same algorithm on its values (srcad/tape_callbacks.py).

Before/after:
    y = np.piecewise(x, [x < 0], [lambda v: -v, np.sin])
                                        piecewise_x = x
                                        piecewise_c0 = np.asarray(x < 0, dtype=bool)
                                        piecewise_c1 = np.logical_not(piecewise_c0)
                                        piecewise_f0 = lambda v: -v
                                        piecewise_y = np.zeros_like(piecewise_x)
                                        if np.any(piecewise_c0):
                                            piecewise_y[piecewise_c0] = piecewise_f0(
                                                piecewise_x[piecewise_c0])
                                        if np.any(piecewise_c1): ... np.sin(...)
                                        y = piecewise_y
"""

from __future__ import annotations

import copy
import types

import gast
import numpy as np

from .. import runtime_callbacks
from ..naming import fresh
from .parse import parse_function
from ..runtime_callbacks import VECTORIZE_NAME

_SIMPLE = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Return, gast.Expr)
_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp,
           gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _parse(src: str, subs: dict) -> list:
    """Statements of `src`, each Name in `subs` replaced by a copy of its node (a str: the
    name it stands for)."""
    tree = gast.parse(src.replace("np.", NP + "."))

    class _Sub(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in subs:
                v = subs[node.id]
                if isinstance(v, str):
                    return gast.copy_location(_name(v, isinstance(node.ctx, gast.Store)), node)
                return copy.deepcopy(v)
            return node

    return [_Sub().visit(s) for s in tree.body]


class _Lowerer:
    def __init__(self, pf, taken: set):
        self.pf, self.taken = pf, taken
        self.used = False
        self.stored = {n.id for n in gast.walk(pf.tree) if isinstance(n, gast.Name)
                       and isinstance(n.ctx, gast.Store)} | {
            a.id for a in pf.tree.args.posonlyargs + pf.tree.args.args}
        self.lambdas = {t.id for n in gast.walk(pf.tree) if isinstance(n, gast.Assign)
                        and isinstance(n.value, gast.Lambda) for t in n.targets
                        if isinstance(t, gast.Name)}
        # (`def sm(v): ...` nested in the function, bound once: called by its name, lifted by
        # closures.py like a lambda held in a name)
        defs = [n.name for n in gast.walk(pf.tree) if isinstance(n, gast.FunctionDef)
                and n is not pf.tree]
        self.lambdas |= {d for d in defs if defs.count(d) == 1 and d not in self.stored}
        self.held = self.held_vectorize()

    def held_vectorize(self) -> dict:
        """``vf = np.vectorize(f, ...)`` held in a local that is only called: name -> the
        assignment (dropped; each call ``vf(x)`` is lowered as ``np.vectorize(f, ...)(x)``).
        Only where the name is assigned once and what the call reads (f, a lambda's free
        names) is assigned at most once, so that every call means what the object held."""
        stores: dict = {}
        for n in gast.walk(self.pf.tree):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                stores[n.id] = stores.get(n.id, 0) + 1
        for a in self.pf.tree.args.posonlyargs + self.pf.tree.args.args:
            stores[a.id] = stores.get(a.id, 0) + 1
        called = {id(n.func) for n in gast.walk(self.pf.tree) if isinstance(n, gast.Call)}
        held = {}
        for n in gast.walk(self.pf.tree):
            if not (isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                    n.targets[0], gast.Name) and isinstance(n.value, gast.Call)):
                continue
            name = n.targets[0].id
            if stores.get(name) != 1 or not isinstance(n.value.func, (gast.Name, gast.Attribute)):
                continue
            try:
                if self.resolve(n.value.func) is not np.vectorize:
                    continue
            except TypeError:
                continue
            uses = [u for u in gast.walk(self.pf.tree) if isinstance(u, gast.Name)
                    and u.id == name and isinstance(u.ctx, gast.Load)]
            reads = {u.id for u in gast.walk(n.value) if isinstance(u, gast.Name)
                     and isinstance(u.ctx, gast.Load)}
            if uses and all(id(u) in called for u in uses) and all(
                    stores.get(r, 0) <= 1 for r in reads):
                held[name] = n
        return held

    def resolve(self, e):
        """The object an expression names (a global, or an attribute of one), else None."""
        names = []
        while isinstance(e, gast.Attribute):
            names.append(e.attr)
            e = e.value
        if not isinstance(e, gast.Name) or e.id in self.stored:
            return None
        try:
            obj = self.pf.resolve(e.id)
            for n in reversed(names):
                obj = getattr(obj, n)
        except AttributeError:
            return None
        return obj

    def fresh(self, base):
        return fresh(base, self.taken)

    # -- statements ---------------------------------------------------------------------------
    def body(self, stmts: list) -> list:
        out = []
        for s in stmts:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list) and not isinstance(s, _SCOPES):
                    setattr(s, field, self.body(getattr(s, field)))
            if isinstance(s, gast.Try):
                for h in s.handlers:
                    h.body = self.body(h.body)
            if isinstance(s, _SIMPLE):
                before = []
                self.rewrite(s, before)
                for b in before:
                    gast.copy_location(b, s)
                    for n in gast.walk(b):
                        if hasattr(n, "lineno"):
                            gast.copy_location(n, s)
                out.extend(before)
            out.append(s)
        return out

    def rewrite(self, node, before: list):
        """Replace the calls inside `node` (not inside a lambda or comprehension) by names
        the statements appended to `before` compute (innermost first)."""
        for field, value in gast.iter_fields(node):
            if isinstance(value, list):
                for i, v in enumerate(value):
                    if isinstance(v, gast.AST) and not isinstance(v, _SCOPES):
                        self.rewrite(v, before)
                        value[i] = self.lowered(v, before) or v
            elif isinstance(value, gast.AST) and not isinstance(value, _SCOPES):
                self.rewrite(value, before)
                setattr(node, field, self.lowered(value, before) or value)

    def lowered(self, e, before):
        if not isinstance(e, gast.Call) or any(isinstance(a, gast.Starred) for a in e.args) \
                or any(k.arg is None for k in e.keywords):
            return None
        fn = self.resolve(e.func)
        mine: list = []
        out = self._lowered(e, fn, mine)
        if out is not None:  # (statements of a form given up half way are dropped)
            before.extend(mine)
            self.used = True
        return out

    def _lowered(self, e, fn, before):
        try:
            if fn is np.piecewise:
                return self.piecewise(e, before)
            if fn is np.apply_along_axis:
                return self.apply_along_axis(e, before)
            if fn is np.apply_over_axes:
                return self.apply_over_axes(e, before)
        except TypeError:  # (unhashable)
            return None
        if isinstance(e.func, gast.Name) and e.func.id in self.held:
            return self.vectorize_call(copy.deepcopy(self.held[e.func.id].value), e, before)
        if isinstance(e.func, gast.Call) and self.resolve(e.func.func) is np.vectorize:
            return self.vectorize_call(e.func, e, before)
        if isinstance(fn, np.vectorize):
            return self.vectorize_object(fn, e, before)
        return None

    # -- the callable, as a name to call ------------------------------------------------------
    def callee(self, f, base, before):
        """An expression to call for the function `f` is, or None when `f` is a value."""
        if isinstance(f, gast.Lambda):
            name = self.fresh(base)
            before.append(gast.Assign(targets=[_name(name, True)], value=f, type_comment=None))
            return _name(name)
        if isinstance(f, gast.Name) and f.id in self.lambdas:
            return f
        if isinstance(f, (gast.Name, gast.Attribute)):
            obj = self.resolve(f)
            if obj is not None and callable(obj) and not isinstance(obj, type):
                return f
        return None

    # -- np.piecewise ---------------------------------------------------------------------------
    def piecewise(self, e, before):
        args = e.args
        if len(args) < 3 or any(k.arg in ("x", "condlist", "funclist") for k in e.keywords):
            return None
        x, conds, funcs, extra = args[0], args[1], args[2], args[3:]
        if not isinstance(funcs, (gast.List, gast.Tuple)):
            return None
        if isinstance(conds, (gast.List, gast.Tuple)):
            items = list(conds.elts)
            if items and not any(isinstance(c, (gast.List, gast.Tuple)) for c in items) and \
                    all(isinstance(c, gast.Constant) for c in items):
                return None  # (a list of Python bools: numpy reads it as one condition)
        elif isinstance(conds, (gast.Compare, gast.BoolOp, gast.UnaryOp, gast.BinOp)):
            items = [conds]  # one boolean array: numpy wraps it in a list
        elif isinstance(conds, (gast.Name, gast.Attribute, gast.Subscript, gast.Call)):
            items = None  # (a value: which form it is, the run tells)
        else:
            return None
        nf = len(funcs.elts)
        n = nf if items is None else len(items)
        if items is not None and (nf not in (n, n + 1) or not items):
            return None
        xs = self.fresh("piecewise_x")
        before.extend(_parse(f"{xs} = np.asarray(X)", {"X": x}))
        names = []
        if items is None:
            names = self.piecewise_conditions(conds, xs, nf, before)
        for k, c in enumerate(items or ()):
            cn = self.fresh(f"piecewise_c{k}")
            before.extend(_parse(f"{cn} = np.asarray(C, dtype=bool)", {"C": c}))
            names.append(cn)
        if items is not None and nf == n + 1:
            cn = self.fresh(f"piecewise_c{n}")
            either = names[0]
            for other in names[1:]:
                either = f"np.logical_or({either}, {other})"
            before.extend(_parse(f"{cn} = np.logical_not({either})", {}))
            names.append(cn)
        calls = [self.callee(f, f"piecewise_f{k}", before) for k, f in enumerate(funcs.elts)]
        ys = self.fresh("piecewise_y")
        before.extend(_parse(f"{ys} = np.zeros_like({xs})", {}))
        for k, (cn, call) in enumerate(zip(names, calls)):
            if call is None:
                before.extend(_parse(f"{ys}[{cn}] = V", {"V": funcs.elts[k]}))
                continue
            value = gast.Call(func=call, args=[_parse(f"{xs}[{cn}]", {})[0].value,
                                               *copy.deepcopy(extra)],
                              keywords=copy.deepcopy(e.keywords))
            before.extend(_parse(f"if np.any({cn}):\n    {ys}[{cn}] = V", {"V": value}))
        return _name(ys)

    def piecewise_conditions(self, conds, xs, nf, before) -> list:
        """A condition list held in a value (``conds = [x < 0, x > 1]``): numpy's reading of
        it at run time -- one boolean array (of x's dimensions) is one condition -- then nf
        conditions, the last one the default (none of the others holds) when the value holds
        one condition fewer than there are functions."""
        cs, count = self.fresh("piecewise_conds"), self.fresh("piecewise_count")
        before.extend(_parse(
            f"{cs} = np.asarray(C, dtype=bool)\n"
            f"if np.ndim({cs}) == np.ndim({xs}):\n"
            f"    {cs} = np.expand_dims({cs}, 0)\n"
            f"{count} = {COUNT}(np.shape({cs})[0], {nf})", {"C": conds}))
        names = [self.fresh(f"piecewise_c{k}") for k in range(nf)]
        for k, cn in enumerate(names[:-1]):
            before.extend(_parse(f"{cn} = {cs}[{k}]", {}))
        last = names[-1]
        before.extend(_parse(
            f"if {count} == {nf}:\n"
            f"    {last} = {cs}[{nf - 1}]\n"
            f"else:\n"
            f"    {last} = np.logical_not(np.any({cs}, axis=0))", {}))
        return names

    # -- np.vectorize ---------------------------------------------------------------------------
    def vectorize_call(self, make, e, before):
        if len(make.args) != 1:
            return None
        otypes = signature = None
        excluded: set = set()
        for k in make.keywords:
            value = k.value
            if k.arg in ("doc", "cache"):
                continue
            if k.arg in ("otypes", "signature") and isinstance(value, gast.Constant) and \
                    isinstance(value.value, str):
                otypes, signature = (value.value, signature) if k.arg == "otypes" else (
                    otypes, value.value)
                continue
            if k.arg == "excluded" and isinstance(value, (gast.Set, gast.Tuple, gast.List)) \
                    and all(isinstance(v, gast.Constant) and isinstance(v.value, (int, str))
                            for v in value.elts):
                excluded = {v.value for v in value.elts}
                continue
            return None
        nout = self.outputs(make.args[0])
        call = self.callee(make.args[0], "vectorized", before)
        if call is None:
            return None
        if signature is None and not excluded:
            return self.elementwise(call, otypes, e, before, nout)
        return self.general(call, otypes, signature, excluded, e, before, nout)

    def vectorize_object(self, obj, e, before):
        name = self.fresh(f"{VECTORIZE_NAME}{getattr(obj.pyfunc, '__name__', 'f')}")
        self.pf.closure[name] = obj.pyfunc
        otypes = obj.otypes if isinstance(obj.otypes, str) and obj.otypes else None
        nout = _returned_tuple(obj.pyfunc)
        if obj.signature is None and not obj.excluded and not e.keywords:
            return self.elementwise(_name(name), otypes, e, before, nout)
        return self.general(_name(name), otypes, obj.signature, set(obj.excluded), e, before,
                            nout)

    def outputs(self, f) -> int:
        """How many outputs np.vectorize gives for `f`: n when f (a lambda, a lambda held in
        a local, a Python function) returns a tuple display of n items wherever it returns
        (numpy counts the first call's tuple), else 1."""
        if isinstance(f, gast.Name) and f.id in self.lambdas:
            held = [n.value for n in gast.walk(self.pf.tree) if isinstance(n, gast.Assign)
                    and any(isinstance(t, gast.Name) and t.id == f.id for t in n.targets)]
            held += [n for n in gast.walk(self.pf.tree) if isinstance(n, gast.FunctionDef)
                     and n.name == f.id and n is not self.pf.tree]
            f = held[0] if len(held) == 1 else None
            if isinstance(f, gast.FunctionDef):
                return _returned_tuple(f)
        if isinstance(f, gast.Lambda):
            return len(f.body.elts) if isinstance(f.body, gast.Tuple) else 1
        if isinstance(f, (gast.Name, gast.Attribute)):
            return _returned_tuple(self.resolve(f))
        return 1

    def _stacked(self, out_lists, results, otypes, shape, core: bool, before):
        """The results of the loop: each output's list made an array (cast to its otype),
        of the loop's shape (then f's own dimensions, with a signature); a tuple display of
        them for several outputs."""
        names = []
        for k, (out, res) in enumerate(zip(out_lists, results)):
            code = otypes[k] if otypes and len(otypes) == len(out_lists) else otypes
            cast = f".astype(np.dtype({code!r}))" if code else ""
            if core:
                before.extend(_parse(f"{res} = np.array({out}){cast}\n"
                                     f"{res} = np.reshape({res}, {shape} + np.shape({res})[1:])",
                                     {}))
            else:
                before.extend(_parse(f"{res} = np.reshape(np.array({out}){cast}, {shape})", {}))
            names.append(_name(res))
        if len(names) == 1:
            return names[0]
        return gast.Tuple(elts=names, ctx=gast.Load())

    def _loop(self, value, count, nout, before):
        """``for i in range(count)``: f's result (`value`, reading `i`) appended to one list per
        output (item k of a tuple of `nout`). Returns the lists' names."""
        i = self.fresh("vectorize_i")
        for n in gast.walk(value):
            if isinstance(n, gast.Name) and n.id == "__I__":
                n.id = i
        if nout == 1:
            out = self.fresh("vectorize_out")
            before.extend(_parse(f"{out} = []\nfor {i} in range({count}):\n"
                                 f"    {out}.append(V)", {"V": value}))
            return [out]
        outs = [self.fresh(f"vectorize_out{k}") for k in range(nout)]
        item = self.fresh("vectorize_item")
        before.extend(_parse(
            "".join(f"{o} = []\n" for o in outs) + f"for {i} in range({count}):\n"
            f"    {item} = V\n" + "".join(
                f"    {o}.append({item}[{k}])\n" for k, o in enumerate(outs)), {"V": value}))
        return outs

    def general(self, call, otypes, signature, excluded, e, before, nout=1):
        """np.vectorize with signature= or excluded= (or keywords): the arguments not
        excluded -- positional, then keywords, numpy's order -- broadcast over their loop
        dimensions (all but the signature's core ones), f called on each loop element's core
        arrays, the excluded ones passed as they are; the results stacked in the loop shape
        (one array per output: the signature's count, else `nout`)."""
        cores = None
        if signature is not None:
            try:
                cores, nout = runtime_callbacks.signature_cores(signature)
            except ValueError:
                return None
        if not _float_otypes(otypes, nout):
            return None
        vector = [(i, a) for i, a in enumerate(e.args) if i not in excluded] + [
            (k.arg, k.value) for k in e.keywords if k.arg not in excluded]
        if not vector or (cores is not None and len(cores) != len(vector)):
            return None
        cores = cores or (0,) * len(vector)
        passed = {}
        for key, node in [(i, a) for i, a in enumerate(e.args) if i in excluded] + [
                (k.arg, k.value) for k in e.keywords if k.arg in excluded]:
            passed[key] = self.fresh("vectorize_excluded")
            before.extend(_parse(f"{passed[key]} = A", {"A": node}))
        arrays = [self.fresh(f"vectorize_arg{k}") for k in range(len(vector))]
        cores_of = [self.fresh(f"vectorize_core{k}") for k in range(len(vector))]
        for a, c, (_, node), n in zip(arrays, cores_of, vector, cores):
            before.extend(_parse(f"{a} = np.asarray(A)\n{c} = np.shape({a})[np.ndim({a}) - {n}:]",
                                 {"A": node}))
        shape = self.fresh("vectorize_shape")
        before.extend(_parse(f"{shape} = np.broadcast_shapes(" + ", ".join(
            f"np.shape({a})[:np.ndim({a}) - {n}]" for a, n in zip(arrays, cores)) + ")", {}))
        flat = [self.fresh(f"vectorize_flat{k}") for k in range(len(vector))]
        for a, c, fl in zip(arrays, cores_of, flat):
            before.extend(_parse(
                f"{fl} = np.reshape(np.broadcast_to({a}, {shape} + {c}), (-1,) + {c})", {}))
        item = {key: _parse(f"{fl}[__I__]", {})[0].value for (key, _), fl in zip(vector, flat)}
        item.update({key: _name(n) for key, n in passed.items()})
        value = gast.Call(func=call, args=[item[k] for k in range(len(e.args))],
                          keywords=[gast.keyword(arg=k.arg, value=item[k.arg])
                                    for k in e.keywords])
        outs = self._loop(value, f"np.shape({flat[0]})[0]", nout, before)
        results = [self.fresh("vectorized")] if nout == 1 else [
            self.fresh(f"vectorized{k}") for k in range(nout)]
        return self._stacked(outs, results, otypes, shape, True, before)

    def elementwise(self, call, otypes, e, before, nout=1):
        if not _float_otypes(otypes, nout):
            return None
        if e.keywords or not e.args:
            return None
        args = [self.fresh(f"vectorize_arg{k}") for k in range(len(e.args))]
        for a, node in zip(args, e.args):
            before.extend(_parse(f"{a} = np.asarray(A)", {"A": node}))
        shape = self.fresh("vectorize_shape")
        before.extend(_parse(f"{shape} = np.broadcast_shapes("
                             + ", ".join(f"np.shape({a})" for a in args) + ")", {}))
        flat = [self.fresh(f"vectorize_flat{k}") for k in range(len(args))]
        for a, fl in zip(args, flat):
            before.extend(_parse(f"{fl} = np.ravel(np.broadcast_to({a}, {shape}))", {}))
        value = gast.Call(func=call, args=[_parse(f"{fl}[__I__]", {})[0].value for fl in flat],
                          keywords=[])
        outs = self._loop(value, f"np.size({flat[0]})", nout, before)
        results = [self.fresh("vectorized")] if nout == 1 else [
            self.fresh(f"vectorized{k}") for k in range(nout)]
        return self._stacked(outs, results, otypes, shape, False, before)

    # -- np.apply_along_axis --------------------------------------------------------------------
    def apply_along_axis(self, e, before):
        if len(e.args) < 3 or any(k.arg in ("func1d", "axis", "arr") for k in e.keywords):
            return None
        f, axis, arr, extra = e.args[0], e.args[1], e.args[2], e.args[3:]
        call = self.callee(f, "along_axis_f", before)
        if call is None:
            return None
        m, ax, flat, rows, i, res = (self.fresh(b) for b in (
            "along_axis_arr", "along_axis", "along_axis_rows", "along_axis_out",
            "along_axis_i", "along_axis_res"))
        before.extend(_parse(f"{ax} = AX\n{m} = np.moveaxis(np.asarray(A), {ax}, -1)\n"
                             f"{flat} = np.reshape({m}, (-1, np.shape({m})[-1]))",
                             {"AX": axis, "A": arr}))
        value = gast.Call(func=call, args=[_parse(f"{flat}[{i}]", {})[0].value,
                                           *copy.deepcopy(extra)],
                          keywords=copy.deepcopy(e.keywords))
        before.extend(_parse(f"{rows} = []\nfor {i} in range(np.shape({flat})[0]):\n"
                             f"    {rows}.append(V)", {"V": value}))
        before.extend(_parse(
            f"{res} = np.array({rows})\n"
            f"{res} = np.reshape({res}, np.shape({m})[:-1] + np.shape({res})[1:])\n"
            f"{res} = np.moveaxis({res}, {SOURCE}(np.ndim({m}), np.ndim({res})), "
            f"{DEST}(np.ndim({m}), {ax}, np.ndim({res})))", {}))
        return _name(res)


    # -- np.apply_over_axes ---------------------------------------------------------------------
    def apply_over_axes(self, e, before):
        if len(e.args) != 3 or e.keywords:
            return None
        f, arr, axes = e.args
        call = self.callee(f, "over_axes_f", before)
        if call is None:
            return None
        val, ax, res = (self.fresh(b) for b in ("over_axes_val", "over_axes", "over_axes_res"))
        value = gast.Call(func=call, args=[_name(val), _name(ax)], keywords=[])
        before.extend(_parse(
            f"{val} = np.asarray(A)\n"
            f"for {ax} in {OVER}(AX, np.ndim({val})):\n"
            f"    {res} = V\n"
            f"    if np.ndim({res}) != np.ndim({val}):\n"
            f"        {res} = np.expand_dims({res}, {ax})\n"
            f"        if np.ndim({res}) != np.ndim({val}):\n"
            f"            raise ValueError('function is not returning an array of the correct "
            f"shape')\n"
            f"    {val} = {res}", {"A": arr, "AX": axes, "V": value}))
        return _name(val)


def _float_otypes(otypes, nout) -> bool:
    """otypes srcad follows: none, or one float type per output (one for all outputs)."""
    try:
        return otypes is None or (len(otypes) in (1, nout) and all(
            np.dtype(c).kind == "f" for c in otypes))
    except TypeError:  # (not a type code: numpy's own error, as written)
        return False


def _returned_tuple(fn) -> int:
    """n when the Python function `fn` (or a nested def's tree) returns a tuple display of n
    items (n > 1) at every ``return``, else 1."""
    if isinstance(fn, gast.FunctionDef):
        tree = fn
    elif not isinstance(fn, types.FunctionType):
        return 1
    else:
        try:
            tree = parse_function(fn).tree
        except Exception:  # noqa: BLE001  (no source: one output, as before)
            return 1
    if isinstance(tree, gast.Lambda) or (isinstance(tree, gast.FunctionDef) and isinstance(
            getattr(tree, "body", None), gast.expr)):
        body = tree.body
        return len(body.elts) if isinstance(body, gast.Tuple) and len(body.elts) > 1 else 1
    sizes = set()
    todo = list(tree.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)):
            continue
        if isinstance(n, gast.Return):
            sizes.add(len(n.value.elts) if isinstance(n.value, gast.Tuple) else 1)
        todo.extend(gast.iter_child_nodes(n))
    return sizes.pop() if len(sizes) == 1 else 1


NP = "__srcad_np"  # numpy, by a name the user's module cannot shadow
SOURCE = "__srcad_along_axis_source"
COUNT = "__srcad_piecewise_count"
DEST = "__srcad_along_axis_dest"
OVER = "__srcad_over_axes"


def lower_callbacks(pf, taken: set) -> None:
    """Rewrite `pf.tree` in place (see the module docstring)."""
    if not any(isinstance(n, gast.Call) for n in gast.walk(pf.tree)):
        return
    low = _Lowerer(pf, taken)
    body = low.body(pf.tree.body)
    if low.held:
        body = _drop_held(body, low.held)
    if low.used:
        pf.tree.body = body
        pf.closure.update({NP: np, SOURCE: runtime_callbacks.along_axis_source,
                           COUNT: runtime_callbacks.piecewise_count,
                           DEST: runtime_callbacks.along_axis_dest,
                           OVER: runtime_callbacks.over_axes})
        gast.fix_missing_locations(pf.tree)


def _drop_held(body: list, held: dict) -> list:
    """The assignments ``vf = np.vectorize(f)`` whose calls were all lowered (nothing reads
    vf any more) dropped; one a call still reads stays (that call is refused as written)."""
    read = {n.id for s in body for n in gast.walk(s) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}
    drop = {id(a) for name, a in held.items() if name not in read}

    def block(stmts):
        out = []
        for s in stmts:
            if id(s) in drop:
                continue
            for field in ("body", "orelse", "finalbody"):
                stmts_in = getattr(s, field, None)
                if isinstance(stmts_in, list) and stmts_in and not isinstance(s, _SCOPES):
                    setattr(s, field, block(stmts_in) or [gast.Pass()])
            out.append(s)
        return out

    return block(body)
