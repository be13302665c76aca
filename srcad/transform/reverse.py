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
This module holds the sweeps and the statements of straight-line code; branches and loops
are in control_flow.py, adjoint state in adjoints.py, calls to user functions in calls.py,
checkpointing in checkpointing.py and the stacks of generated code in stacks.py (mixins).

Before/after (one statement):
    h = np.tanh(h_add)            # --- backward ---
                                   # grad of L6: h = np.tanh(x @ W + b)
                                   dh_add = dh * (1 - h * h)
"""

from __future__ import annotations

import ast
import copy

import numpy as np

from .. import ir
from ..analysis.activity import active_vars, live_output, stack_of
from ..frontend.opaque import has_effects, may_change_state
from ..gcode import RESTORE as _RESTORE
from ..gcode import (GFunction, Line, assign, clone, dtype_is_type, dtype_src, line_reads, name,
                     parse_expr, store)
from ..gcode import call as _call
from ..gcode import compound as _compound
from ..gcode import free_names as _free
from ..gcode import method as _method
from ..naming import fresh
from .adjoints import Adj, AdjointsMixin, _np, int_index, zeros_expr
from .arrays import with_array_aliases
from .calls import CallsMixin
from .checkpointing import CheckpointingMixin
from .control_flow import ControlFlowMixin
from .module import Generated, Module
from .specialise import Info, ieee_divisions, simplify
from .stacks import StacksMixin
from .templates import as_array_operand, atom_expr, default_atom, effect_stmt, forward_expr, subst


class Reverse(AdjointsMixin, CallsMixin, CheckpointingMixin, ControlFlowMixin, StacksMixin):
    def __init__(self, fn: ir.Function, wrt: list[str], infos_by_fn: dict | None,
                 module: Module | None = None, live: tuple | None = None,
                 read: tuple | None = None):
        self.wrt = list(wrt)
        self.module = module or Module(infos_by_fn)
        self.infos = self.module.infos_by_fn.get(id(fn), {})
        self.containers = self.module.containers_by_fn.get(id(fn), set())
        # (aliases the shapes show to be one array: a copy of the IR where that changes it;
        # `origin`: copied statement -> the original, whose id the planner's options name)
        fn, self.origin = with_array_aliases(fn, self.infos,
                                             self.module.entry_by_fn.get(id(fn), {}),
                                             self.module.arrays0d_by_fn.get(id(fn), set()),
                                             self.module.numbers_by_fn.get(id(fn), set()),
                                             self.module.sites_by_fn.get(id(fn), {}))
        self.fn = fn
        # a callee: which items of its returned tuple get a cotangent from its caller (None:
        # all). The backward takes cotangents for those alone (`live_output`); the rest are
        # dead. `read`: which the caller reads at all; the forward returns None for the others
        self.live = live
        self.out = live_output(fn, live)
        self.returned = fn.ret.value if read is None else ir.Seq(tuple(
            a if keep else ir.Const(None, "None") for a, keep in zip(fn.ret.value.items, read)),
            fn.ret.value.kind)
        self.active = active_vars(fn, wrt, live)
        self._read_here = None  # every name this function reads (calls.read_outputs)
        self.taken = set(fn.names) | set(fn.params)
        self.adj: dict[str, str] = {}  # primal name -> adjoint name
        self.part_of: dict[str, str] = {}  # a call's cotangent part -> the argument it is for
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
        self.left_out: set[int] = set()  # ids of the branches a trial sweep left out (backward)
        self.rezero: set[str] = set()  # names pushed so that their adjoints' zeros fit them
        self.saved_of: dict[int, str] = {}  # id(user call) -> name of its callee's residuals
        self.restored_early: set[int] = set()  # checkpointed calls that pop before recomputing
        self.counters: dict[int, str] = {}  # id(loop) -> trip counter name
        self.ckpts: dict[int, str] = {}  # id(checkpointed loop) -> its LoopCheckpoints
        self.rematerialised: list = []  # (name, line) of values the backward recomputes
        self._plain = 0  # > 0: emitting forward code that saves nothing (recomputation)
        self._recompute = 0  # > 0: emitting forward code the forward sweep already ran
        self.restore_stacks: dict[str, str] = {}
        self.same = self.same_arrays()  # alias -> the name whose adjoint it shares
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

    def same_arrays(self) -> dict[str, str]:
        """`y_L5 = alias_again(v, y)` (a name `v op= t` carried its new value to) where the
        shapes show that y held an array, so y_L5 *is* v: at the top level, assigned once,
        `v` not assigned after it. Its reads add into v's adjoint -- one array, one adjoint,
        summed in the order the tape's one Tensor sums them -- and the copy has no backward.
        (A scalar y keeps its old value instead; a plain `v = a` copy of this kind is
        propagated away by the normaliser: srcad/frontend/aliases.py.)"""
        same: dict[str, str] = {}
        for s in self.fn.body:
            if not (isinstance(s, ir.Call) and s.op.name == "alias_again"):
                continue
            new, old = s.args.get("new"), s.args.get("old")
            info = self.infos.get(old.name) if isinstance(old, ir.Var) else None
            if (isinstance(new, ir.Var) and info is not None and info.dtype is not None
                    and info.ndim > 0 and s.target in self.active and new.name in self.active
                    and s.target not in self.fn.params and s.target != new.name
                    and len(self.def_sites.get(s.target, ())) == 1
                    and all(self.order[id(d)] < self.order[id(s)]
                            for d in self.def_sites.get(new.name, ()))):
                same[s.target] = same.get(new.name, new.name)
        return same

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

    def target_read_before(self, loop) -> bool:
        """Does the backward of a statement outside `loop` read the value its target held
        before the loop ran (as `old_value_read`)? `for t in range(2): acc += next(it)` then
        `for t in it: acc += np.sin(t)` in an outer loop: the backward of the second loop
        reads t's arrays, the first loop's backward (run between) sets t to its ints -- so
        the forward pushes t before the first loop and its backward pops it after
        (control_flow.py). Found 2026-12-06 by the widened pytree fuzzer: a wrong gradient."""
        var, inside = loop.target, {id(x) for x in ir.walk(loop.body)}
        around = set(self.loops[id(loop)])
        for s in ir.walk(self.fn.body):
            if id(s) in inside or s is loop or var not in self.bwd_reads.get(id(s), ()):
                continue
            if self.order[id(s)] < self.order[id(loop)] or around & set(self.loops[id(s)]):
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

    def ir_id(self, s) -> int:
        """The id options name `s` by: its original's, where the IR is a copy (arrays.py)."""
        return self.original_id(id(s))

    def original_id(self, k: int) -> int:
        return id(self.origin[k]) if k in self.origin else k

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
            if node.id in self.part_of:  # a subroutine's cotangent for an argument
                return self._part_info(self.part_of[node.id])
            return None
        if isinstance(node, ast.Constant):
            return Info((), None, node.value)
        if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) for e in node.elts):
            return Info((), None, tuple(e.value for e in node.elts))
        if isinstance(node, (ast.BinOp, ast.UnaryOp)) and not any(
                isinstance(n, (ast.Name, ast.Call, ast.Attribute)) for n in ast.walk(node)):
            return Info((), None)  # arithmetic on Python number literals
        if isinstance(node, ast.Subscript):
            return self._slot_info(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            # an array scaled by a Python number keeps its shape and dtype (a weak scalar)
            for arr, num in ((node.left, node.right), (node.right, node.left)):
                if isinstance(num, ast.Constant) and isinstance(num.value, (int, float)) and \
                        not isinstance(num.value, bool):
                    info = self.info_of(arr)
                    if info is not None and info.dtype is not None:
                        return Info(info.shape, info.dtype, c_order=info.c_order)
        return None

    def _slot_info(self, node: ast.Subscript) -> Info | None:
        """The Info of a basic subscript of an array of known shape by whole slices and
        Python ints (`dout[:, :, i, j]`): its shape, its dtype, a view (memory order not
        known); None for anything else."""
        base = self.info_of(node.value)
        if base is None or base.dtype is None or base.ndim == 0:
            return None
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        shape, dim = [], 0
        for p in parts:
            if dim >= base.ndim:
                return None
            if isinstance(p, ast.Slice) and p.lower is None and p.upper is None and \
                    p.step is None:
                shape.append(base.shape[dim])
            elif not int_index(p, self.infos):
                return None
            dim += 1
        return Info(tuple(shape) + tuple(base.shape[dim:]), base.dtype, c_order=False)

    def all_infos(self) -> dict:
        """Static Info of every primal and adjoint name (an adjoint has its primal's; so
        does the part of it a subroutine's backward returns for a float array argument,
        its memory order unknown)."""
        out = dict(self.infos)
        for primal, d in self.adj.items():
            if primal in self.infos:
                out[d] = self.infos[primal]
        for part, primal in self.part_of.items():
            info = self._part_info(primal)
            if info is not None:
                out[part] = info
        return out

    def _part_info(self, primal: str) -> Info | None:
        """The Info of the part of `primal`'s adjoint a subroutine's backward returns: the
        argument's own where it is a float array (the callee's contributions are each cast and
        shaped to it), its memory order unknown; None otherwise."""
        info = self.infos.get(primal)
        if info is not None and info.dtype is not None and info.ndim > 0 and \
                np.dtype(info.dtype).kind == "f":
            return Info(info.shape, info.dtype, c_order=False)
        return None

    # -- one statement -------------------------------------------------------------------------
    def contribution(self, s: ir.Call, pname: str, g: ast.expr) -> ast.expr:
        rule = s.op.vjp(pname)
        used = _free(rule.expr)  # (once, not once per global)
        self.globals.update({k: v for k, v in rule.globals.items() if k in used})
        mapping = {"g": g, "out": ir.Var(s.target)}
        for p in s.op.params:
            mapping[p.name] = as_array_operand(s.op, p.name, s.args.get(p.name),
                                               self.containers) or default_atom(s.op, p.name)
        expr = subst(rule.expr, mapping)
        return ieee_divisions(simplify(expr, rule.globals, self.info_of), self.may_be_python)

    def may_be_python(self, var: str) -> bool:
        """Can the name hold a Python number when the backward runs?  A forward value is
        one where the first call saw one; an adjoint may be one where its primal is not an
        array (one grown from the seed 1.0); generic code (no call yet) is not asked."""
        if not self.infos:
            return False
        if var in self.infos:
            return self.infos[var].dtype is None
        primal = next((p for p, a in self.adj.items() if a == var), None)
        primal = primal or self.snap_of.get(var) or self.part_of.get(var)
        info = self.infos.get(primal) if primal is not None else None
        return info is None or info.dtype is None or info.ndim == 0

    def fit(self, expr: ast.expr, s: ir.Call, atom: ir.Var) -> ast.expr:
        """Make a contribution match its input: unbroadcast and/or cast, when needed."""
        target, want = self.infos.get(s.target), self.infos.get(atom.name)
        if target is not None and want is not None:
            if s.op.broadcasting and target.shape != want.shape:
                call = _call("unbroadcast", expr, name(atom.name))
                return simplify(call, {}, lambda n: target if n is expr else self.info_of(n))
            if want.dtype is not None and target.dtype is not None and target.dtype != want.dtype:
                if s.op.broadcasting or want.shape == target.shape:
                    dtype = parse_expr(dtype_src(want.dtype))
                    if want.ndim == 0 and dtype_is_type(want.dtype):
                        # the contribution may be a Python or numpy scalar
                        return ast.Call(func=dtype, args=[expr], keywords=[])
                    if want.ndim == 0:  # (a 0-d array of a dtype with no scalar type)
                        return ast.Call(func=_np("asarray"), args=[expr],
                                        keywords=[ast.keyword(arg="dtype", value=dtype)])
                    return _method(expr, "astype", dtype)
            return expr
        if s.op.broadcasting:
            return _call("unbroadcast", expr, name(atom.name))
        return expr

    def call_backward(self, s: ir.Call, out: list) -> None:
        if s.target not in self.active or s.target not in self.state or s.target in self.same:
            return
        st = self.state.pop(s.target)  # consumed here: earlier values have adjoints of their own
        block: list[Line] = []
        if st.alias is not None:
            g = clone(st.alias)
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
                    g_use = clone(st.uniform)
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

    # -- blocks ------------------------------------------------------------------------------
    def bwd_block(self, body) -> list[Line]:
        out: list[Line] = []
        for s in reversed(body):
            if isinstance(s, (ir.Call, ir.UserCall)):
                if stack_of(s) is not None:
                    self.pop_backward(s, out)
                elif isinstance(s, ir.Call):
                    self.call_backward(s, out)
                    back = getattr(s.op, "context_back", None)
                    if back is not None:  # a `with` block's edge (frontend/withlower.py)
                        handle = name(s.target) if s.op.context_entry else \
                            atom_expr(s.args["_a0"])
                        out.append(Line(ast.Expr(_call(back, handle)), s.line, keep=True))
                        self.bwd_reads[id(s)] = self.bwd_reads.get(id(s), set()) | {handle.id}
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
                out.append(Line(assign(s.target, forward_expr(s.op, s.args, self.info_of)), s.line,
                                keep=may_change_state(s.op)))
            elif isinstance(s, ir.UserCall):
                out.append(Line(self.user_call_forward(s), s.line,
                                keep=has_effects(s.callee.body)))
            elif isinstance(s, ir.Effect):
                # (a recomputation does not print again; a measured candidate not at all)
                if not self._recompute and not self.module.options.measuring:
                    out.append(Line(effect_stmt(s), s.line))
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
        ret = self.out
        body = self.fn.body[:-1]
        lines: list[Line] = []
        if isinstance(ret, ir.Var) and ret.name in self.active:
            self.state[self.same.get(ret.name, ret.name)] = Adj(alias=seed)
        elif isinstance(ret, ir.Seq):  # a tuple output: its cotangent is a tuple too
            self.seed_seq(ret, seed, lines)
        # first pass: which values does the backward read?  (restores are placeholders)
        self.pushes = {}
        probe_state = {k: copy.copy(v) for k, v in self.state.items()}
        saved_adj, saved_taken = dict(self.adj), set(self.taken)
        saved_channels = dict(self.channels)
        for trial_pass in range(4):
            # (again while the pushes grow: a branch whose backward is only the restores of
            # values it overwrote -- `if c: found = True; break` in a loop -- appears once
            # those are pushed, and reads its test, which must be pushed in turn)
            if trial_pass:
                self.state = {k: copy.copy(v) for k, v in probe_state.items()}
                self.adj, self.taken = dict(saved_adj), set(saved_taken)
                self._stacks, self.channels = {}, dict(saved_channels)
            self.left_out = set()
            trial = self.bwd_block(body)
            needed = set(self.channels)  # (their cotangents are bound at the top)
            for ln in trial:
                needed |= line_reads(ln)
            needed |= set(self.counters.values())
            # a value is pushed where it is overwritten, if the backward reads it
            pushes = {}
            for s in ir.walk(body):
                if isinstance(s, ir.For) and s.target in needed and \
                        self.may_overwrite(s, s.target) and self.target_read_before(s):
                    pushes[id(s)] = [s.target]  # (see `target_read_before`)
                if not isinstance(s, (ir.Call, ir.UserCall)):
                    continue
                names = [t for t in ir.defs(s) if t in self.mutable and
                         self.may_overwrite(s, t) and (t in self.rezero or (
                             t in needed and self.old_value_read(s, t)))]
                if id(s) in self.saved_of and self.loop_depth[id(s)] > 0 and \
                        not self.recompute(s):
                    names.append(self.saved_of[id(s)])
                if names:
                    pushes[id(s)] = names
            if pushes == self.pushes:
                break
            self.pushes = pushes
            if not self.restores_in_blocks(body):
                break
        # second pass, for real
        self.state = probe_state
        self.adj, self.taken = saved_adj, saved_taken
        self._stacks = {}
        self.channels = {}
        swept = self.bwd_block(body)
        lines = [Line(comment="--- backward ---")] + self.cotangent_bindings() + lines + swept
        lines = self.rematerialise(lines, needed)
        return [self._finish_restores(ln) for ln in lines]

    def restores_in_blocks(self, body) -> bool:
        """Is there a branch or a loop whose backward is only restores (see `backward`): one
        the trial left out (it touches no active name, or its backward had no code: `if a and
        np.max(x) < 2.0` in a loop, whose flag's branch reads x but only to compare) that the
        pushes now put in?"""
        for s in ir.walk(body):
            if isinstance(s, (ir.If, ir.For, ir.While)):
                inner = getattr(s, "cond_body", []) + s.body + getattr(s, "orelse", [])
                if (id(s) in self.left_out or not self.touched(inner)) and \
                        any(id(c) in self.pushes for c in ir.walk(inner)):
                    return True
        return False

    def seed_seq(self, seq: ir.Seq, seed: ast.expr, lines: list) -> None:
        """Seed each item of a (nested) tuple output with its part of the cotangent."""
        for i, item in enumerate(seq.items):
            part = ast.Subscript(value=clone(seed), slice=ast.Constant(i),
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
                if isinstance(s, ir.For) and s.target == var:
                    # (a loop's own variable: unbound after it where it ran no trip, so a
                    # later push of it needs a value before -- `for t in range(0)` then
                    # `for t in xs`)
                    return self.loop_depth[id(s)] + 1
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
        ret = self.fn.ret.value
        info = self.infos.get(ret.name) if isinstance(ret, ir.Var) else None
        seed = ast.Constant(value=1.0) if info is None or info.ndim == 0 else \
            _method(name("np"), "ones_like", name(ret.name))  # (a size-1 array output)
        bwd = self.backward(seed)
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
        ret = self.out
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
