"""Reverse mode: from the normalised IR to adjoint code (a `GFunction`, or two for a split).

Input: an `ir.Function`, the parameters to differentiate, and optionally the static
shapes and dtypes of every value (from the first call). Output: generated functions

    joint  <f>_grad(params) -> grads            (value_and_grad: (value, grads))
    split  <f>_fwd(params)  -> (out, saved)     <f>_bwd(saved, dout) -> grads

The forward sweep is the IR itself; the backward sweep walks the active statements in
reverse and, for each active argument, inlines the op row's VJP rule with ``g`` bound to
the adjoint of the statement's result. Rows marked `broadcasting` get each contribution
unbroadcast to its input (dropped when shapes show it is the identity). A value used k
times receives k contributions: the first is assigned, later ones are added with an
explicit ``+=`` into a buffer the backward owns (never into a saved or user array).

Control flow follows Tangent: the forward sweep records what the backward needs and the
backward replays it in reverse.
  * A name assigned in a loop or a branch (``ir.Function.mutable``) whose value the backward
    reads is pushed on a named stack before it is overwritten (``stack_h.push(h)``) and
    restored after its adjoint is done (``h = stack_h.pop()``); nothing else is pushed.
  * A loop runs backward over ``reversed(range(...))``; a loop that can exit early, and every
    while loop, counts its trips (``trips_L7``) and runs backward that many times.
  * A branch runs backward under the same test, which is a recorded value like any other.
  * Generated code transformed again (reverse over reverse) has stacks of its own: a pop's
    backward pushes the popped value's cotangent, a push's backward pops it (stacks.py).
Adjoints have a state while the backward is generated: absent (zero), an alias of another
expression (no statement yet), or a named variable (owned: safe to ``+=`` into). Where
control flow joins, states are made to agree by materialising names (``np.zeros_like``).

Before/after (one statement):
    h = np.tanh(h_add)            # --- backward ---
                                   # grad of L6: h = np.tanh(x @ W + b)
                                   dh_add = dh * (1 - h * h)
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

import numpy as np

from .. import ir, runtime
from ..analysis.activity import active_vars, pushes_on_stacks, stack_of
from ..errors import SrcadError
from ..naming import fresh
from ..options import Options
from ..gcode import RESTORE as _RESTORE
from ..gcode import GFunction, Line, assign, line_reads, name, store
from ..gcode import call as _call
from ..gcode import compound as _compound
from ..gcode import free_names as _free
from ..gcode import method as _method
from .specialise import Info, simplify
from .checkpointing import CheckpointingMixin
from .stacks import StacksMixin
from ..ops.table import lookup
from .templates import (as_array_operand, atom_expr, default_atom, forward_expr, loop_iter,
                        range_expr, subst)

_FRESH_HELPERS = {
    runtime.unindex, runtime.matmul_grad_a, runtime.matmul_grad_b,
    runtime.select_grad, runtime.extremum_grad, runtime.clip_grad, runtime.as_grad,
    runtime.astype,
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
            return f.attr in ("astype", "copy", "sum")
        if isinstance(f, ast.Name):
            # (not unbroadcast: where shapes are unknown it may hand back its input)
            return globals_.get(f.id, getattr(runtime, f.id, None)) in _FRESH_HELPERS
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


@dataclass
class Generated:
    functions: list  # list[GFunction]
    saved: list  # names the split backward reads from the forward
    inject: dict


def _np(attr: str) -> ast.Attribute:
    return ast.Attribute(value=name("np"), attr=attr, ctx=ast.Load())


def zeros_expr(value: ast.expr, info) -> ast.Call:
    """A zero derivative for `value`: `np.zeros_like` for a known array, else the runtime's
    `zeros_grad` (a Python float's is 0.0, a container's an empty GradTree)."""
    fn = _np("zeros_like") if info is not None and info.dtype is not None else name("zeros_grad")
    return ast.Call(func=fn, args=[value], keywords=[])


def _exposed_uses(body, defined: frozenset) -> set[str]:
    """Names `body` may read before it assigns them (`defined`: certainly assigned on entry):
    an assignment under a branch or in a loop does not count after that statement."""
    out: set[str] = set()
    done = set(defined)
    for x in body:
        out |= set(ir.uses(x)) - done
        if isinstance(x, ir.If):
            out |= _exposed_uses(x.body, frozenset(done))
            out |= _exposed_uses(x.orelse, frozenset(done))
        elif isinstance(x, ir.For):
            out |= _exposed_uses(x.body, frozenset(done | {x.target}))
        elif isinstance(x, ir.While):
            out |= _exposed_uses(x.cond_body + x.body, frozenset(done))
        else:
            done |= set(ir.defs(x))
    return out


def _leaves(atom, expr: ast.expr):
    """(name, its part of `expr`) for each name in a (nested) tuple atom: `d[0][1]`."""
    if isinstance(atom, ir.Var):
        yield atom.name, expr
    elif isinstance(atom, ir.Seq):
        for i, item in enumerate(atom.items):
            yield from _leaves(item, ast.Subscript(value=copy.deepcopy(expr),
                                                   slice=ast.Constant(i), ctx=ast.Load()))


@dataclass
class Pair:
    """A user function's generated subroutines, made once per (function, wrt) in a module."""

    fwd: GFunction
    bwd: GFunction
    ret: ast.expr  # what the forward returns besides its saved values
    rev: "Reverse"


class Module:
    """What the functions of one generated module share: the probe's findings, the options
    they are built with, names, and the subroutines made for calls (`_fwd`/`_bwd` pairs for
    reverse mode, `_jvp` functions for forward mode)."""

    def __init__(self, infos_by_fn: dict | None, options=None):
        self.infos_by_fn = infos_by_fn or {}
        # names that held a list or tuple on the first call (see specialise.Infos)
        self.containers_by_fn = getattr(infos_by_fn, "containers", {})
        self.options = options if options is not None else Options()
        self.names: set[str] = set()
        self.pairs: dict[tuple, Pair] = {}
        self.jvp_functions: dict = {}  # (id(callee), wrt) -> (GFunction, Forward)

    def function_name(self, base: str) -> str:
        return fresh(base, self.names)


class Reverse(CheckpointingMixin, StacksMixin):
    def __init__(self, fn: ir.Function, wrt: list[str], infos_by_fn: dict | None,
                 module: Module | None = None):
        self.fn = fn
        self.wrt = list(wrt)
        self.module = module or Module(infos_by_fn)
        self.infos = self.module.infos_by_fn.get(id(fn), {})
        self.containers = self.module.containers_by_fn.get(id(fn), set())
        self.active = active_vars(fn, wrt)
        self.taken = set(fn.names) | set(fn.params)
        self.adj: dict[str, str] = {}  # primal name -> adjoint name
        self.state: dict[str, Adj] = {}
        self.globals: dict = {}
        self.mutable = set(fn.mutable)
        # program order, for "defined before this statement?" questions
        self.order: dict[int, int] = {}
        self.first_def: dict[str, int] = {p: -1 for p in fn.params}
        self.loop_depth: dict[int, int] = {}
        self.arms: dict[int, tuple] = {}  # id(stmt) -> ((id(if), arm), ...) it lies under
        self.loops: dict[int, tuple] = {}  # id(stmt) -> ids of the loops around it
        self.bwd_reads: dict[int, set] = {}  # id(stmt) -> names its backward code reads
        self.snap_of: dict[str, str] = {}  # snapshot adjoint name -> its primal
        self.original: dict[str, str] = {}  # reassigned parameter -> name of its first value
        self.subroutine = False  # the _bwd of a called user function
        self.def_sites: dict[str, list] = {}
        self._number(fn.body, 0)
        # ANF temporaries made inside a loop are overwritten each iteration too
        self.mutable |= {t for s in ir.walk(fn.body) if self.loop_depth[id(s)] > 0
                         for t in ir.defs(s)}
        self.pushes: dict[int, list[str]] = {}  # id(stmt) -> names pushed before it runs
        self.saved_of: dict[int, str] = {}  # id(user call) -> name of its callee's residuals
        self.restored_early: set[int] = set()  # checkpointed calls that pop before recomputing
        self.counters: dict[int, str] = {}  # id(loop) -> trip counter name
        self.ckpts: dict[int, str] = {}  # id(checkpointed loop) -> its LoopCheckpoints
        self.rematerialised: list = []  # (name, line) of values the backward recomputes
        self._plain = 0  # > 0: emitting forward code that saves nothing (recomputation)
        self.restore_stacks: dict[str, str] = {}
        self.plan_stacks()  # generated code transformed again: its stacks (stacks.py)

    # -- bookkeeping -------------------------------------------------------------------------
    def _number(self, body, depth, arms=(), loops=()):
        for s in body:
            k = len(self.order)
            self.order[id(s)] = k
            self.loop_depth[id(s)] = depth
            self.arms[id(s)] = arms
            self.loops[id(s)] = loops
            for d in ir.defs(s):
                self.first_def.setdefault(d, k)
                self.def_sites.setdefault(d, []).append(s)
            if isinstance(s, ir.If):
                self._number(s.body, depth, arms + ((id(s), 0),), loops)
                self._number(s.orelse, depth, arms + ((id(s), 1),), loops)
            elif isinstance(s, ir.For):
                self._number(s.body, depth + 1, arms, loops + (id(s),))
            elif isinstance(s, ir.While):
                self._number(s.cond_body, depth + 1, arms, loops + (id(s),))
                self._number(s.body, depth + 1, arms, loops + (id(s),))

    def old_value_read(self, d, var: str) -> bool:
        """Does the backward read the value of `var` that `d` overwrites?  Only the backward of
        a statement that runs before `d` (earlier, or in an earlier iteration of a loop around
        both) can see it; a value read only after the last overwrite needs no stack."""
        around = set(self.loops[id(d)])
        for s in ir.walk(self.fn.body):
            if var in self.bwd_reads.get(id(s), ()) and (
                    self.order[id(s)] < self.order[id(d)] or around & set(self.loops[id(s)])):
                return True
        return False

    def may_overwrite(self, s, var: str) -> bool:
        """Can `var` hold an earlier value when `s` assigns it?"""
        if self.loop_depth[id(s)] > 0 or var in self.fn.params:
            return True
        mine = dict(self.arms[id(s)])
        for e in self.def_sites.get(var, []):
            if e is s or self.order[id(e)] > self.order[id(s)]:
                continue
            exclusive = any(mine.get(if_id, arm) != arm for if_id, arm in self.arms[id(e)])
            if not exclusive:
                return True
        return False

    def fresh(self, base: str) -> str:
        return fresh(base, self.taken)

    def adj_name(self, var: str) -> str:
        if var not in self.adj:
            self.adj[var] = self.fresh(f"d{var}")
        return self.adj[var]

    def info_of(self, node: ast.expr) -> Info | None:
        if isinstance(node, ast.Name):
            if node.id in self.infos:
                return self.infos[node.id]
            for primal, a in self.adj.items():
                if a == node.id:
                    return self.infos.get(primal)
            if node.id in self.snap_of:
                return self.infos.get(self.snap_of[node.id])
            return None
        if isinstance(node, ast.Constant):
            return Info((), None, node.value)
        if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) for e in node.elts):
            return Info((), None, tuple(e.value for e in node.elts))
        if isinstance(node, (ast.BinOp, ast.UnaryOp)) and not any(
                isinstance(n, (ast.Name, ast.Call, ast.Attribute)) for n in ast.walk(node)):
            return Info((), None)  # arithmetic on Python number literals
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            # an array scaled by a Python number keeps its shape and dtype (a weak scalar)
            for arr, num in ((node.left, node.right), (node.right, node.left)):
                if isinstance(num, ast.Constant) and isinstance(num.value, (int, float)) and \
                        not isinstance(num.value, bool):
                    info = self.info_of(arr)
                    if info is not None and info.dtype is not None:
                        return Info(info.shape, info.dtype, c_order=info.c_order)
        return None

    def all_infos(self) -> dict:
        """Static Info of every primal and adjoint name (an adjoint has its primal's)."""
        out = dict(self.infos)
        for primal, d in self.adj.items():
            if primal in self.infos:
                out[d] = self.infos[primal]
        return out

    # -- adjoint state -------------------------------------------------------------------------
    def ref(self, var: str) -> ast.expr:
        """The expression holding var's adjoint (it must not be absent)."""
        st = self.state[var]
        return copy.deepcopy(st.alias) if st.alias is not None else name(self.adj[var])

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

    def materialise(self, var: str, line, out: list, *, zeros: bool) -> None:
        """Make var's adjoint a named variable (absent: zeros shaped like the value)."""
        st = self.state.get(var)
        if st is None:
            if zeros:  # (a container's zeros are an empty GradTree)
                self.bind(var, self.zeros(var), line, out, owned=True,
                          tree=self.maybe_container(var))
        elif st.alias is not None:
            self.bind(var, st.alias, line, out, owned=False)

    def zeros(self, var: str) -> ast.expr:
        return zeros_expr(name(var), self.infos.get(var))

    def accumulate(self, var: str, expr: ast.expr, line: int, out: list) -> None:
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
        if self.module.options.reparsed or not (gather and array and self._basic(expr.args[2])):
            return None
        g, _, index = expr.args
        if isinstance(index, ast.Subscript) and isinstance(index.value, ast.Attribute) and \
                index.value.attr == "s_":  # np.s_[1:, 0] -> dx[1:, 0]
            index = index.slice
        target = ast.Subscript(value=name(self.adj_name(var)), slice=index, ctx=ast.Store())
        return ast.AugAssign(target=target, op=ast.Add(), value=g)

    def _basic(self, index: ast.expr) -> bool:
        """Is this index expression certainly basic (ints, slices, None, ...)?"""
        if isinstance(index, ast.Constant):
            v = index.value
            return v is None or v is Ellipsis or (isinstance(v, int) and not isinstance(v, bool))
        if isinstance(index, ast.Tuple):
            return all(self._basic(e) for e in index.elts)
        if isinstance(index, ast.Slice):
            return all(p is None or self._basic(p) for p in (index.lower, index.upper,
                                                               index.step))
        if isinstance(index, ast.Subscript) and isinstance(index.value, ast.Attribute) and \
                index.value.attr == "s_":
            return self._basic(index.slice)
        if isinstance(index, ast.Name):  # a Python int (a loop counter), known from the probe
            info = self.infos.get(index.id)
            return info is not None and info.ndim == 0 and info.dtype is None
        return False

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

    # -- one statement -------------------------------------------------------------------------
    def contribution(self, s: ir.Call, pname: str, g: ast.expr) -> ast.expr:
        rule = s.op.vjp(pname)
        self.globals.update({k: v for k, v in rule.globals.items() if k in _free(rule.expr)})
        mapping = {"g": g, "out": ir.Var(s.target)}
        for p in s.op.params:
            mapping[p.name] = as_array_operand(s.op, p.name, s.args.get(p.name),
                                               self.containers) or default_atom(s.op, p.name)
        expr = subst(rule.expr, mapping)
        return simplify(expr, rule.globals, self.info_of)

    def fit(self, expr: ast.expr, s: ir.Call, atom: ir.Var) -> ast.expr:
        """Make a contribution match its input: unbroadcast and/or cast, when needed."""
        target, want = self.infos.get(s.target), self.infos.get(atom.name)
        if target is not None and want is not None:
            if s.op.broadcasting and target.shape != want.shape:
                call = _call("unbroadcast", expr, name(atom.name))
                return simplify(call, {}, lambda n: target if n is expr else self.info_of(n))
            if want.dtype is not None and target.dtype is not None and target.dtype != want.dtype:
                if s.op.broadcasting or want.shape == target.shape:
                    dtype = _np(str(want.dtype))
                    if want.ndim == 0:  # the contribution may be a Python or numpy scalar
                        return ast.Call(func=dtype, args=[expr], keywords=[])
                    return _method(expr, "astype", dtype)
            return expr
        if s.op.broadcasting:
            return _call("unbroadcast", expr, name(atom.name))
        return expr

    def call_backward(self, s: ir.Call, out: list) -> None:
        if s.target not in self.active or s.target not in self.state:
            return
        st = self.state.pop(s.target)  # consumed here: earlier values have adjoints of their own
        block: list[Line] = []
        if st.alias is not None:
            g = copy.deepcopy(st.alias)
            rebound = {self.adj[v] for a in s.args.values() for v in ir.atom_vars(a)
                       if v in self.adj}
            if _free(g) & rebound:  # `y = y * x`-like: g must outlive the new binding of dy
                d = self.adj_name(s.target)
                block.append(Line(assign(d, g), s.line))
                g = name(d)
                st = Adj(owned=False)
        else:
            g = name(self.adj[s.target])
        for pname, atom in s.args.items():
            if s.op.vjp(pname) is None:
                continue
            if isinstance(atom, ir.Var):
                if atom.name not in self.active:
                    continue
                g_use = g
                if st.uniform is not None and self.takes_scalar_g(s, pname):
                    g_use = copy.deepcopy(st.uniform)
                expr = self.fit(self.contribution(s, pname, g_use), s, atom)
                self.accumulate(atom.name, expr, s.line, block)
            elif isinstance(atom, ir.Seq):
                if not (set(ir.atom_vars(atom)) & self.active):
                    continue
                expr = self.contribution(s, pname, g)
                parts: list[tuple[str, str]] = []
                target = self.unpack_target(atom, parts)
                block.append(Line(ast.Assign(targets=[target], value=expr, lineno=0), s.line))
                for var, part in parts:
                    self.accumulate(var, name(part), s.line, block)
        self.bwd_reads[id(s)] = set().union(*(line_reads(ln) for ln in block))
        self.bwd_reads[id(s)] |= _free(g) if isinstance(g, ast.AST) else set()
        if block:
            self.comment(out, s.line)
            out.extend(block)

    def comment(self, out: list, line: int) -> None:
        """Head an adjoint block with the user's line, unless the block before it did."""
        text = f"grad of L{line}: {self.fn.source_lines.get(line, '')}"
        for ln in reversed(out):
            if ln.node is None:
                if ln.comment == text:
                    return
                break
            if ln.compound:
                break
        out.append(Line(comment=text))

    def unpack_target(self, atom, parts: list) -> ast.expr:
        """`(da_part, (db_part, _))` mirroring a (nested) sequence of atoms: a rule for a
        list argument returns one piece per item, and numpy turns an inner list into an
        array stacked along axis 0, whose pieces unpacking yields in order."""
        if isinstance(atom, ir.Seq):
            return ast.Tuple(elts=[self.unpack_target(a, parts) for a in atom.items],
                             ctx=ast.Store())
        if isinstance(atom, ir.Var) and atom.name in self.active:
            part = self.fresh(f"d{atom.name}_part")
            parts.append((atom.name, part))
            return store(part)
        return store("_")

    # -- calls to other user functions ---------------------------------------------------------
    def recompute(self, s: ir.UserCall) -> bool:
        """Is this call checkpointed (by srcad.checkpoint, or by a memory_budget policy)?"""
        return s.checkpoint or id(s) in self.module.options.checkpoint_ids

    def call_is_active(self, s: ir.UserCall) -> bool:
        # (a callee that pushes on stacks has outputs besides its result: stacks.py)
        return (any(t in self.active for t in s.targets) or pushes_on_stacks(s.callee)) and \
            any(v in self.active for a in s.args for v in ir.atom_vars(a))

    def callee_wrt(self, s: ir.UserCall) -> list[str]:
        # (an argument written as a tuple, `g((a, b))`, is differentiated if an item is)
        return [p for p, a in zip(s.callee.params, s.args)
                if set(ir.atom_vars(a)) & self.active]

    def pair(self, s: ir.UserCall) -> Pair:
        """The callee's `_fwd`/`_bwd` subroutines for this call's active arguments."""
        wrt = self.callee_wrt(s)
        key = (id(s.callee), tuple(wrt))
        if key not in self.module.pairs:
            sub = Reverse(s.callee, wrt, None, self.module)
            sub.subroutine = True
            fwd, bwd = sub.split(names=(
                self.module.function_name(f"{s.callee.name}_fwd"),
                self.module.function_name(f"{s.callee.name}_bwd")))
            self.module.pairs[key] = Pair(fwd, bwd, atom_expr(s.callee.ret.value), sub)
            self.globals.update(sub.globals)
        return self.module.pairs[key]

    def user_call_forward(self, s: ir.UserCall) -> ast.stmt:
        args = [atom_expr(a) for a in s.args]
        if s.unpack:
            outs = ast.Tuple(elts=[store(t) for t in s.targets], ctx=ast.Store())
        else:
            outs = store(s.targets[0])
        if id(s) not in self.saved_of or self.recompute(s) or self._plain:
            # no residuals: a checkpointed call saves only its inputs (read again below)
            return ast.Assign(targets=[outs], value=ast.Call(func=name(s.fn_name), args=args,
                                                             keywords=[]), lineno=0)
        p = self.pair(s)
        target = ast.Tuple(elts=[outs, store(self.saved_of[id(s)])], ctx=ast.Store())
        return ast.Assign(targets=[target], value=ast.Call(func=name(p.fwd.name), args=args,
                                                           keywords=[]), lineno=0)

    def user_call_backward(self, s: ir.UserCall, out: list) -> None:
        # a callee that pushes on stacks runs its backward even with no cotangent coming in:
        # it pops what another function's backward left on its stacks (stacks.py)
        if id(s) not in self.saved_of or not (any(t in self.state for t in s.targets)
                                              or pushes_on_stacks(s.callee)):
            for t in s.targets:
                self.state.pop(t, None)
            return
        p = self.pair(s)
        block: list[Line] = []
        cots = []
        for t in s.targets:
            st = self.state.pop(t, None)
            if st is None:
                cots.append(self.zeros(t))
            else:
                cots.append(copy.deepcopy(st.alias) if st.alias is not None
                            else name(self.adj[t]))
        g = ast.Tuple(elts=cots, ctx=ast.Load()) if s.unpack else cots[0]
        wrt = self.callee_wrt(s)
        parts = []
        elts = []
        for pname, a in zip(s.callee.params, s.args):
            if pname in wrt:
                part = self.fresh(f"d{a.name if isinstance(a, ir.Var) else pname}_part")
                parts.extend((v, e) for v, e in _leaves(a, name(part)) if v in self.active)
                elts.append(store(part))
        if self.recompute(s):
            # recompute the call's forward from its saved inputs, keeping its residuals
            # only until its backward has run. An input the call overwrites (h = f(h, W))
            # is restored first: the recomputation needs its value from before the call.
            if set(s.targets) & {v for a in s.args for v in ir.atom_vars(a)}:
                for v in reversed(self.pushes.get(id(s), [])):
                    block.append(Line(ast.Expr(_call(_RESTORE, name(v))), s.line))
                self.restored_early.add(id(s))
            block.append(Line(comment=f"checkpointed: recompute {s.callee.name}'s forward "
                                      f"from its inputs"))
            recompute = ast.Call(func=name(p.fwd.name), args=[atom_expr(a) for a in s.args],
                                 keywords=[])
            block.append(Line(ast.Assign(targets=[ast.Tuple(elts=[
                store("_"), store(self.saved_of[id(s)])], ctx=ast.Store())], value=recompute,
                lineno=0), s.line))
        call = ast.Call(func=name(p.bwd.name), args=[name(self.saved_of[id(s)]), g],
                        keywords=[])
        block.append(Line(ast.Assign(targets=[ast.Tuple(elts=elts, ctx=ast.Store())],
                                     value=call, lineno=0), s.line))
        for var, part in parts:
            self.accumulate(var, part, s.line, block)
        self.bwd_reads[id(s)] = set().union(*(line_reads(ln) for ln in block))
        self.comment(out, s.line)
        out.extend(block)

    # -- blocks ------------------------------------------------------------------------------
    def touched(self, body) -> set[str]:
        """Active names (and stacks) that statements in `body` define or read."""
        names = set()
        for s in ir.walk(body):
            names.update(ir.defs(s))
            names.update(ir.uses(s))
        return names & (self.active | self.stacks)

    def defined_before(self, var: str, stmt) -> bool:
        """Can `var` hold a value when `stmt` runs: assigned earlier, or anywhere in a loop
        around `stmt` (an earlier iteration)?"""
        if self.first_def.get(var, 1 << 60) < self.order[id(stmt)]:
            return True
        around = set(self.loops[id(stmt)])
        return any(set(self.loops[id(d)]) & around for d in self.def_sites.get(var, ()))

    def bwd_block(self, body) -> list[Line]:
        out: list[Line] = []
        for s in reversed(body):
            if isinstance(s, (ir.Call, ir.UserCall)):
                if stack_of(s) is not None:
                    self.pop_backward(s, out)
                elif isinstance(s, ir.Call):
                    self.call_backward(s, out)
                else:
                    self.user_call_backward(s, out)
                if id(s) not in self.restored_early:
                    for v in reversed(self.pushes.get(id(s), [])):
                        out.append(Line(ast.Expr(_call(_RESTORE, name(v))), s.line))
            elif isinstance(s, ir.Push):
                self.push_backward(s, out)
            elif isinstance(s, ir.If):
                self.if_backward(s, out)
            elif isinstance(s, (ir.For, ir.While)):
                self.loop_backward(s, out)
        return out

    def if_backward(self, s: ir.If, out: list) -> None:
        touched = self.touched(s.body + s.orelse)
        restores = any(id(c) in self.pushes for c in ir.walk(s.body + s.orelse))
        if not touched and not restores:
            return
        joined = {v for v in touched - self.stacks if self.defined_before(v, s)}
        for v in sorted(joined):  # both branches start from the same named adjoints
            if v in self.state:
                self.materialise(v, s.line, out, zeros=False)
        before = {k: copy.copy(v) for k, v in self.state.items()}
        branches = []
        states = []
        for stmts in (s.body, s.orelse):
            self.state = {k: copy.copy(v) for k, v in before.items()}
            lines = self.bwd_block(stmts)
            branches.append(lines)
            states.append(self.state)
        need = {v for v in joined if any(v in st for st in states)}
        for lines, st in zip(branches, states):
            self.state = st
            for v in sorted(need):
                self.materialise(v, s.line, lines, zeros=True)
        self.state = {k: v for k, v in before.items() if k not in touched}
        for v in need:
            self.state[v] = Adj(owned=False)
        if not any(ln.node is not None for ln in branches[0] + branches[1]):
            return
        header = ast.If(test=atom_expr(s.test), body=[], orelse=[])
        self.bwd_reads[id(s)] = set(ir.atom_vars(s.test))
        self.comment(out, s.line)
        out.append(_compound(header, s.line, branches[0] or [Line(ast.Pass(), s.line)],
                             branches[1] or None))

    def loop_backward(self, s, out: list) -> None:
        body = s.body if isinstance(s, ir.For) else s.cond_body + s.body
        touched = self.touched(body)
        restores = any(id(c) in self.pushes for c in ir.walk(body))
        if not touched and not restores and id(s) not in self.counters:
            return
        local = self.loop_locals(s, body)
        carried = touched - local - self.stacks
        for v in sorted(carried):
            self.materialise(v, s.line, out, zeros=True)
        # the adjoint of a value the loop does not assign is only added to in the loop: a
        # buffer it owns on entry stays its own (contributions go in place)
        made = {d for x in ir.walk(body) for d in ir.defs(x)}
        owned = {v for v in carried if v not in made and v in self.state
                 and self.state[v].named and self.state[v].owned}
        before = {k: v for k, v in self.state.items() if k not in carried}
        self.state = {k: v for k, v in self.state.items() if k not in local}
        for v in carried:
            self.state[v] = Adj(owned=v in owned)
        lines = self.bwd_block(s.body)
        for v in sorted(carried):
            self.materialise(v, s.line, lines, zeros=True)
        ends_owned = {v for v in owned if v in self.state and self.state[v].named
                      and self.state[v].owned}
        self.state = before
        for v in carried:
            self.state[v] = Adj(owned=v in ends_owned)
        header = self.backward_loop_header(s)
        self.bwd_reads[id(s)] = line_reads(Line(header))
        if self.loop_depth[id(s)] > 0 and id(s) in self.counters:
            c = self.counters[id(s)]
            out.append(Line(ast.Expr(_call(_RESTORE, name(c))), s.line))
            self.restore_stacks[c] = self.stack_name(c)
        if id(s) in self.ckpts:
            self.checkpointed_loop_backward(s, lines, out)
            return
        self.comment(out, s.line)
        out.append(_compound(header, s.line, lines or [Line(ast.Pass(), s.line)]))

    def loop_locals(self, s, body) -> set[str]:
        """Names that live and die within one iteration: their adjoints never cross it. A
        name is local only if every read of it in the body follows an assignment that
        certainly ran earlier in the same iteration (not one under a branch or in an inner
        loop that may not run), and nothing outside the loop touches it."""
        inside = {id(x) for x in ir.walk(body)}
        made = {d for x in ir.walk(body) for d in ir.defs(x)}
        outside = set(self.fn.params)
        for x in ir.walk(self.fn.body):
            if id(x) not in inside and x is not s:
                outside.update(ir.uses(x))
                outside.update(ir.defs(x))
        return made - _exposed_uses(body, frozenset()) - outside

    def backward_loop_header(self, s) -> ast.stmt:
        if isinstance(s, ir.For):
            rng = range_expr(s)
            if s.exits:
                if s.reverse:
                    raise SrcadError("internal: an early exit from a reversed loop")
                rng = ast.Subscript(value=rng, slice=ast.Slice(upper=name(self.counters[id(s)])),
                                    ctx=ast.Load())
            it = rng if s.reverse else _call("reversed", rng)
            return ast.For(target=store(s.target), iter=it, body=[], orelse=[], lineno=0)
        it = _call("range", name(self.counters[id(s)]))
        return ast.For(target=store("_"), iter=it, body=[], orelse=[], lineno=0)

    # -- forward -----------------------------------------------------------------------------
    def stack_name(self, var: str) -> str:
        if var not in self._stacks:
            self._stacks[var] = self.fresh(f"stack_{var}")
        return self._stacks[var]

    def fwd_block(self, body) -> list[Line]:
        out: list[Line] = []
        for s in body:
            if isinstance(s, (ir.Call, ir.UserCall)) and not self._plain:
                for v in self.pushes.get(id(s), []):
                    out.append(Line(ast.Expr(_method(name(self.stack_name(v)), "push",
                                                     name(v))), s.line))
            if isinstance(s, ir.Call):
                out.append(Line(assign(s.target, forward_expr(s.op, s.args)), s.line))
            elif isinstance(s, ir.UserCall):
                out.append(Line(self.user_call_forward(s), s.line))
            elif isinstance(s, ir.Push):
                out.append(Line(ast.Expr(_method(name(s.stack), "push", atom_expr(s.value))),
                                s.line))
            elif isinstance(s, ir.If):
                header = ast.If(test=atom_expr(s.test), body=[], orelse=[])
                body_lines = self.fwd_block(s.body) or [Line(ast.Pass(), s.line)]
                else_lines = self.fwd_block(s.orelse) or None
                out.append(_compound(header, s.line, body_lines, else_lines))
            elif isinstance(s, (ir.For, ir.While)):
                out.extend(self.fwd_loop(s))
        return out

    def fwd_loop(self, s) -> list[Line]:
        if id(s) in self.ckpts and not self._plain:
            return self.fwd_checkpointed_loop(s)
        out = []
        counter = None if self._plain else self.counters.get(id(s))
        if counter is not None:
            out.append(Line(assign(counter, ast.Constant(0)), s.line))
        body = self.fwd_block(s.body)
        if counter is not None:
            body.append(Line(ast.AugAssign(target=store(counter), op=ast.Add(),
                                           value=ast.Constant(1)), s.line))
        for flag in s.exits:
            body.append(_compound(ast.If(test=name(flag), body=[], orelse=[]), s.line,
                                  [Line(ast.Break(), s.line)]))
        if isinstance(s, ir.For):
            header = ast.For(target=store(s.target), iter=loop_iter(s), body=[], orelse=[],
                             lineno=0)
        else:
            cond = self.fwd_block(s.cond_body)
            stop = _compound(ast.If(test=ast.UnaryOp(op=ast.Not(), operand=atom_expr(s.cond)),
                                    body=[], orelse=[]), s.line, [Line(ast.Break(), s.line)])
            body = cond + [stop] + body
            header = ast.While(test=ast.Constant(True), body=[], orelse=[])
        out.append(_compound(header, s.line, body))
        if counter is not None and self.loop_depth[id(s)] > 0:
            out.append(Line(ast.Expr(_method(name(self.stack_name(counter)), "push",
                                             name(counter))), s.line))
        return out

    # -- the whole function ------------------------------------------------------------------
    def plan(self) -> None:
        """Decide the trip counters and the callees' residuals (before either sweep)."""
        for s in ir.walk(self.fn.body):
            if isinstance(s, ir.UserCall) and self.call_is_active(s):
                self.saved_of[id(s)] = self.fresh(f"{s.targets[0]}_saved")
            if isinstance(s, ir.While) or (isinstance(s, ir.For) and s.exits):
                self.counters[id(s)] = self.fresh(f"trips_L{s.line}")
            if self.loop_schedule(s) is not None and not s.exits and self.touched(s.body):
                self.refuse_stateful(s.body, s.line, "loop")
                self.ckpts[id(s)] = self.fresh(f"ckpt_L{s.line}")
            if isinstance(s, ir.UserCall) and s.checkpoint and self.call_is_active(s):
                self.refuse_stateful(s.callee.body, s.line, "call")

    def backward(self, seed: ast.expr) -> list[Line]:
        """The backward sweep; then decide what the forward pushes, and finish the restores."""
        self._stacks: dict[str, str] = {}
        ret = self.fn.ret.value
        body = self.fn.body[:-1]
        lines: list[Line] = []
        if isinstance(ret, ir.Var) and ret.name in self.active:
            self.state[ret.name] = Adj(alias=seed)
        elif isinstance(ret, ir.Seq):  # a tuple output: its cotangent is a tuple too
            self.seed_seq(ret, seed, lines)
        # first pass: which values does the backward read?  (restores are placeholders)
        self.pushes = {}
        probe_state = {k: copy.copy(v) for k, v in self.state.items()}
        saved_adj, saved_taken = dict(self.adj), set(self.taken)
        trial = self.bwd_block(body)
        needed = set(self.channels)  # (their cotangents are bound at the top)
        for ln in trial:
            needed |= line_reads(ln)
        needed |= set(self.counters.values())
        # a value is pushed where it is overwritten, if the backward reads it
        for s in ir.walk(body):
            if not isinstance(s, (ir.Call, ir.UserCall)):
                continue
            names = [t for t in ir.defs(s) if t in self.mutable and t in needed
                     and self.may_overwrite(s, t) and self.old_value_read(s, t)]
            if id(s) in self.saved_of and self.loop_depth[id(s)] > 0 and not self.recompute(s):
                names.append(self.saved_of[id(s)])
            if names:
                self.pushes[id(s)] = names
        # second pass, for real
        self.state = probe_state
        self.adj, self.taken = saved_adj, saved_taken
        self._stacks = {}
        self.channels = {}
        swept = self.bwd_block(body)
        lines = [Line(comment="--- backward ---")] + self.cotangent_bindings() + lines + swept
        lines = self.rematerialise(lines, needed)
        return [self._finish_restores(ln) for ln in lines]

    def seed_seq(self, seq: ir.Seq, seed: ast.expr, lines: list) -> None:
        """Seed each item of a (nested) tuple output with its part of the cotangent."""
        for i, item in enumerate(seq.items):
            part = ast.Subscript(value=copy.deepcopy(seed), slice=ast.Constant(i),
                                 ctx=ast.Load())
            if isinstance(item, ir.Var) and item.name in self.active:
                self.accumulate(item.name, part, self.fn.ret.line, lines)
            elif isinstance(item, ir.Seq):
                self.seed_seq(item, part, lines)

    def _finish_restores(self, ln: Line) -> Line:
        if ln.body is not None:
            ln.body = [self._finish_restores(x) for x in ln.body]
        if ln.orelse is not None:
            ln.orelse = [self._finish_restores(x) for x in ln.orelse]
        node = ln.node
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id == _RESTORE):
            var = node.value.args[0].id
            pop = _method(name(self.stack_name(var)), "pop")
            ln.node = assign(var, pop)
        return ln

    def forward(self) -> list[Line]:
        lines = [Line(comment="--- forward ---")]
        pushed = sorted({v for names in self.pushes.values() for v in names})
        stacks = sorted(set(pushed) | {c for s_id, c in [*self.counters.items(),
                                                         *self.ckpts.items()]
                                       if self._nested_counter(s_id)})
        for var in stacks:
            lines.append(Line(assign(self.stack_name(var), _call("Stack")), None))
        for var in pushed:
            # a value first made inside a loop has no value before its first push
            if var not in self.fn.params and (var in self.saved_of.values()
                                               or self.loop_depth_of_first_def(var) > 0):
                lines.append(Line(assign(var, ast.Constant(None)), None))
        for p in self.wrt:
            if p in self.mutable:  # the gradient is shaped like the argument, not its last value
                self.original[p] = self.fresh(f"{p}_in")
                lines.append(Line(assign(self.original[p], name(p)), None))
        lines.extend(self.fwd_block(self.fn.body[:-1]))
        return lines

    def _nested_counter(self, loop_id: int) -> bool:
        return self.loop_depth.get(loop_id, 0) > 0

    def loop_depth_of_first_def(self, var: str) -> int:
        k = self.first_def.get(var)
        for s in ir.walk(self.fn.body):
            if self.order[id(s)] == k:
                return self.loop_depth[id(s)]
        return 0

    def grads_expr(self) -> list[ast.expr]:
        out = []
        for p in self.wrt:
            st = self.state.get(p)
            like = name(self.original.get(p, p))
            if self.subroutine:
                # a callee hands its caller raw adjoints (a GradTree for a dict argument):
                # only the user-facing function converts them to the argument's structure
                out.append(self.ref(p) if st is not None and p in self.active else
                           _call("zeros_grad", like))
                continue
            info = self.infos.get(p) if p not in self.original else None
            if st is not None and p in self.active:
                d = self.ref(p)
                if (not st.named or not st.owned or info is None or info.dtype is None
                        or info.ndim == 0):
                    d = _call("as_grad", d, like)
                out.append(d)
            else:
                z = zeros_expr(like, info)
                out.append(z if isinstance(z.func, ast.Attribute) else _call("as_grad", z, like))
        return out

    # -- drivers -----------------------------------------------------------------------------
    def joint(self, *, with_value: bool, single: bool) -> Generated:
        f = GFunction(name=self.module.function_name(f"{self.fn.name}_grad"),
                      params=list(self.fn.params))
        self.plan()
        bwd = self.backward(ast.Constant(value=1.0))
        f.body.extend(self.forward())
        value = atom_expr(self.fn.ret.value)
        if with_value and _free(value) & self.mutable:
            # the backward's restores rebind loop values: keep the output under its own name
            keep = self.fresh(f"{self.fn.name}_value")
            f.body.append(Line(assign(keep, value), self.fn.ret.line))
            value = name(keep)
        f.body.extend(bwd)
        grads = self.grads_expr()
        gexpr = grads[0] if single else ast.Tuple(elts=grads, ctx=ast.Load())
        if with_value:
            gexpr = ast.Tuple(elts=[value, gexpr], ctx=ast.Load())
        f.body.append(Line(ast.Return(value=gexpr), self.fn.ret.line))
        return Generated([f], [], self.globals)

    def split(self, names: tuple[str, str] | None = None):
        """The `_fwd`/`_bwd` pair; the caller finishes them (saved values, see pipeline.finish_pair)."""
        if names is None:
            names = (self.module.function_name(f"{self.fn.name}_fwd"),
                     self.module.function_name(f"{self.fn.name}_bwd"))
        fwd = GFunction(name=names[0], params=list(self.fn.params))
        ret = self.fn.ret.value
        gname = self.fresh(f"d{ret.name}" if isinstance(ret, ir.Var) else "dout")
        if isinstance(ret, ir.Var):
            self.adj[ret.name] = gname  # (so that the cotangent has the output's Info)
        saved_name = self.fresh("saved")
        bwd = GFunction(name=names[1], params=[saved_name, gname])
        self.plan()
        bwd.body.extend(self.backward(name(gname)))
        fwd.body.extend(self.forward())
        grads = self.grads_expr()
        bwd.body.append(Line(ast.Return(value=ast.Tuple(elts=grads, ctx=ast.Load())),
                             self.fn.ret.line))
        return fwd, bwd
