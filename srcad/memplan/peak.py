"""The planned peak memory of one call, from the plan and the static Infos (issue 14).

Input: the planned program (`srcad.pipeline.Program`: its generated functions, the Info of
their names) and the call's arguments. Output: the peak bytes of array buffers the call
holds at once above its arguments -- forward, backward and the returned gradients -- found
by walking the generated code statement by statement over abstract values (a buffer's size,
a view's base; never the data):

    h = np.tanh(x @ W1 + b1)   # x @ W1: +n*w*8 (a temporary); + b1: +n*w*8; tanh: into it
    del ...                    # a buffer is freed when no name, stack or tuple holds it

Each fresh array numpy makes is counted from where it is made to where its last holder lets
it go, temporaries inside an expression included (``a * b + c`` holds ``a * b`` until the
sum is made); a view, a reshape of a C-contiguous array, a broadcast or an ``out=`` write
adds nothing. Loops run their trips (a count the arguments fix, ``range(len(blocks))``, is
known; an unknown one runs once), a branch whose test is unknown takes the arm with the
larger peak, and a call of a generated subroutine runs its body with its own Infos. The
runtime's helpers are modelled by what they allocate (`as_grad` copies a leaf it cannot hand out, `unindex`
scatters into zeros shaped like its target).

Only array data is counted, not Python's objects (frames, tuples, array headers: about a KiB
per call), so at kilobyte sizes the estimate is low by those (the MLP of zoo's example, 10 KB:
18%); from about a MiB it is within 1% of tracemalloc on the zoo (tests/test_peak.py).
"""

from __future__ import annotations

import ast
import copy

import numpy as np

from ..gcode import GFunction

_VIEWS = {"transpose", "swapaxes", "broadcast_to", "expand_dims", "squeeze", "moveaxis",
          "real", "asarray"}
_REDUCE = {"sum", "mean", "max", "min", "prod", "amax", "amin", "std", "var", "any", "all",
           "argmax", "argmin"}


class _Buf:
    """One array buffer numpy allocated (None in an `_Arr`: the caller's)."""

    __slots__ = ("nbytes",)

    def __init__(self, nbytes: int):
        self.nbytes = int(nbytes)


_ELIDE_BYTES = 256 * 1024  # numpy's NPY_MIN_ELIDE_BYTES


class _Arr:
    """An array value: its buffer (shared by its views), shape, dtype, C-contiguity."""

    __slots__ = ("buf", "c", "dtype", "shape")

    def __init__(self, buf, shape, dtype, c=True):
        self.buf, self.shape, self.dtype, self.c = buf, tuple(shape), np.dtype(dtype), c

    def __deepcopy__(self, memo):
        return self


class _Box:
    """A tuple, list, stack or gradient tree of values."""

    def __init__(self, items=()):
        self.items = list(items)


class _Py:
    """A Python value known exactly (an int, a shape, the caller's dict of arrays)."""

    def __init__(self, value):
        self.value = value

    def __deepcopy__(self, memo):
        return self


def _of(value):
    """The abstract value of a concrete one."""
    if isinstance(value, np.ndarray):
        return _Arr(None, value.shape, value.dtype, value.flags.c_contiguous)
    return _Py(value)


def _nbytes(shape, dtype) -> int:
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


class Peak:
    """Walks a program's generated functions over abstract values (see the module)."""

    def __init__(self, functions: list, infos_of: dict, kernels=None):
        self.functions = {f.name: f for f in functions}
        self.infos_of = infos_of
        self.kernels = kernels or {}  # fuse=True: kernel name -> srcad.lower.kir.Kernel
        self.frames: list[dict] = []
        self.temps: list = []
        self.peak = 0

    # -- accounting --------------------------------------------------------------------------

    def live(self) -> int:
        seen, total, todo = set(), 0, [*self.temps]
        for env in self.frames:
            todo.extend(env.values())
        while todo:
            v = todo.pop()
            if isinstance(v, _Arr):
                if v.buf is not None and id(v.buf) not in seen:
                    seen.add(id(v.buf))
                    total += v.buf.nbytes
            elif isinstance(v, _Box) and id(v) not in seen:
                seen.add(id(v))
                todo.extend(v.items)
        return total

    def fresh(self, shape, dtype) -> _Arr:
        """A new buffer, held as a temporary until the statement ends or its user drops it."""
        a = _Arr(_Buf(_nbytes(shape, dtype)), shape, dtype, True)
        self.temps.append(a)
        self.peak = max(self.peak, self.live())
        return a

    # -- functions and statements --------------------------------------------------------------

    def call(self, f: GFunction, args: list):
        env = dict(zip(f.params, args))
        self.frames.append(env)
        saved_temps, self.temps = self.temps, []
        try:
            return self.lines(f.body, env, self.infos_of.get(f.name, {}))
        except _Return as r:
            return r.value
        finally:
            self.frames.pop()
            self.temps = saved_temps

    def lines(self, lines, env, infos):
        for ln in lines:
            if ln.node is not None:
                self.line(ln, env, infos)
                self.temps.clear()

    def line(self, ln, env, infos):
        node = ln.node
        if isinstance(node, ast.For):
            items = self.iterate(self.eval(node.iter, env, infos))
            self.temps.clear()
            for item in items:
                self.bind(node.target, item, env)
                self.lines(ln.body, env, infos)
            return
        if isinstance(node, ast.While):
            self.lines(ln.body, env, infos)  # (one trip: its count is not known statically)
            return
        if isinstance(node, ast.If):
            test = self.eval(node.test, env, infos)
            if isinstance(test, _Py):
                self.lines(ln.body if test.value else (ln.orelse or []), env, infos)
                return
            self.both(ln, env, infos)
            return
        if isinstance(node, ast.Return):
            raise _Return(self.eval(node.value, env, infos) if node.value else None)
        if isinstance(node, ast.Delete):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    env.pop(t.id, None)
            return
        if isinstance(node, ast.Assign):
            target = node.targets[0]
            hint = infos.get(target.id) if isinstance(target, ast.Name) else None
            value = self.eval(node.value, env, infos, hint)
            for t in node.targets:
                self.bind(t, value, env)
            return
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            old = env.get(node.target.id)
            value = self.eval(node.value, env, infos)
            if isinstance(old, _Box):
                env[node.target.id] = _Box(old.items + (
                    value.items if isinstance(value, _Box) else [value]))
            elif not isinstance(old, _Arr):
                env[node.target.id] = value
            return  # (an array: numpy adds in place)
        if isinstance(node, ast.Expr):
            self.eval(node.value, env, infos)

    def both(self, ln, env, infos):
        """An unknown test: each arm from the same state; the one with the larger peak."""
        frames, temps, peak = self.frames, self.temps, self.peak
        best = None
        for arm in (ln.body, ln.orelse or []):
            self.frames, self.temps = copy.deepcopy((frames, temps))
            self.peak = peak
            self.lines(arm, self.frames[-1], infos)
            if best is None or self.peak > best[2]:
                best = (self.frames, self.temps, self.peak)
        # the callers hold their frames' dicts: the chosen arm's contents go back into them
        for mine, chosen in zip(frames, best[0]):
            mine.clear()
            mine.update(chosen)
        self.frames, self.peak = frames, best[2]
        temps[:] = best[1]
        self.temps = temps

    def bind(self, target, value, env):
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.items if isinstance(value, _Box) else (
                list(value.value) if isinstance(value, _Py) and
                isinstance(value.value, (tuple, list)) else [None] * len(target.elts))
            for t, v in zip(target.elts, items):
                self.bind(t, _of(v) if not isinstance(v, (_Arr, _Box, _Py, type(None))) else v,
                          env)

    def iterate(self, it):
        if isinstance(it, _Py):
            try:
                return [_of(v) for v in it.value]
            except TypeError:
                return [None]
        if isinstance(it, _Box):
            return list(it.items)
        return [None]

    # -- expressions -------------------------------------------------------------------------

    def eval(self, e, env, infos, hint=None):
        """The abstract value of `e`; `hint`: the Info of the name it is assigned to."""
        if isinstance(e, ast.Constant):
            return _Py(e.value)
        if isinstance(e, ast.Name):
            if e.id in env:
                return env[e.id]
            return None
        if isinstance(e, ast.Tuple | ast.List):
            items = [self.eval(x, env, infos) for x in e.elts]
            if isinstance(e, ast.Tuple) and all(isinstance(v, _Py) for v in items):
                return _Py(tuple(v.value for v in items))  # (a shape, an axis tuple)
            return _Box(items)
        if isinstance(e, ast.Attribute):
            v = self.eval(e.value, env, infos)
            if isinstance(v, _Arr):
                if e.attr == "T":
                    return _Arr(v.buf, v.shape[::-1], v.dtype, v.c and len(v.shape) < 2)
                if e.attr == "shape":
                    return _Py(v.shape)
                if e.attr in ("ndim", "size", "dtype"):
                    return _Py({"ndim": len(v.shape), "size": int(np.prod(v.shape)),
                                "dtype": v.dtype}[e.attr])
            if isinstance(v, _Py):
                try:
                    return _of(getattr(v.value, e.attr))
                except AttributeError:
                    return None
            return None
        if isinstance(e, ast.Subscript):
            return self.subscript(e, env, infos, hint)
        if isinstance(e, ast.BinOp | ast.UnaryOp | ast.Compare):
            kids = [e.left, e.right] if isinstance(e, ast.BinOp) else (
                [e.operand] if isinstance(e, ast.UnaryOp) else [e.left, *e.comparators])
            vals = self.args(kids, env, infos)
            if all(isinstance(v, _Py) for v in vals):
                try:
                    return _Py(eval(compile(ast.Expression(_const_tree(e, vals)), "", "eval")))
                except Exception:  # noqa: BLE001  (not a plain Python value: unknown)
                    return None
            if isinstance(e, ast.BinOp) and isinstance(e.op, ast.MatMult):
                return self.result(vals, hint, _matmul_shape(vals), _dtype(vals))
            dtype = np.dtype(bool) if isinstance(e, ast.Compare) else _dtype(vals)
            elided = self.elided(e, vals, hint, _broadcast(vals), dtype)
            if elided is not None:
                return elided
            return self.result(vals, hint, _broadcast(vals), dtype)
        if isinstance(e, ast.Call):
            return self.call_expr(e, env, infos, hint)
        return None

    def elided(self, e, vals, hint, shape, dtype):
        """numpy's temporary elision: `a * b + c` computes the `+` into the temporary `a * b`
        (an operand no name holds, of the result's shape and dtype, owning >= 256 KiB; the
        left operand, or either of a commutative op). Then no new buffer is made."""
        if isinstance(e, ast.Compare):
            return None
        if hint is not None and hint.dtype is not None:
            shape, dtype = hint.shape, hint.dtype
        cands = vals[:1] if isinstance(e, ast.UnaryOp) else (
            vals if isinstance(e.op, ast.Add | ast.Mult | ast.BitAnd | ast.BitOr | ast.BitXor)
            else vals[:1])
        for v in cands:
            if isinstance(v, _Arr) and v.buf is not None and v.c and shape is not None and \
                    v.shape == tuple(shape) and dtype is not None and v.dtype == dtype and \
                    v.buf.nbytes >= _ELIDE_BYTES and any(t is v for t in self.temps):
                self.drop([o for o in vals if o is not v])
                return v
        return None

    def args(self, exprs, env, infos):
        return [self.eval(x, env, infos) for x in exprs]

    def result(self, operands, hint, shape, dtype):
        """A fresh array made from `operands` (temporaries until it exists), or None."""
        if hint is not None and hint.dtype is not None:
            shape, dtype = hint.shape, hint.dtype
        if shape is None or dtype is None:
            return None
        out = self.fresh(shape, dtype)
        self.drop(operands)
        return out

    def drop(self, operands):
        """Operand temporaries die once their consumer's result exists."""
        for v in operands:
            for k in range(len(self.temps) - 1, -1, -1):
                if self.temps[k] is v:
                    del self.temps[k]
                    break

    def subscript(self, e, env, infos, hint):
        v = self.eval(e.value, env, infos)
        idx = self.eval(e.slice, env, infos)
        if isinstance(v, _Py) and isinstance(idx, _Py):
            try:
                return _of(v.value[idx.value])
            except Exception:  # noqa: BLE001
                return None
        if isinstance(v, _Box) and isinstance(idx, _Py) and isinstance(idx.value, int):
            try:
                return v.items[idx.value]
            except IndexError:
                return None
        if isinstance(v, _Arr):
            parts = idx.items if isinstance(idx, _Box) else [idx]
            if any(isinstance(p, _Arr) for p in parts):  # advanced: a copy
                return self.result([v, *parts], hint, None, v.dtype)
            shape = hint.shape if hint is not None and hint.dtype is not None else v.shape
            return _Arr(v.buf, shape, v.dtype, False)
        return None

    def call_expr(self, e, env, infos, hint):
        f = e.func
        name = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name)
                                                            else None)
        if isinstance(f, ast.Name) and f.id in self.functions:
            out = self.call(self.functions[f.id], self.args(e.args, env, infos))
            self.temps.append(out)  # (held by the caller's expression until bound)
            return out
        if isinstance(f, ast.Name) and f.id in self.kernels:
            return self.kernel(self.kernels[f.id], e, env, infos)
        on_np = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
            f.value.id == "np"
        method = isinstance(f, ast.Attribute) and not on_np
        recv = self.eval(f.value, env, infos) if method else None
        vals = self.args(e.args, env, infos)
        kw = {k.arg: self.eval(k.value, env, infos) for k in e.keywords}
        if isinstance(recv, _Box) and name in ("push", "append"):
            recv.items.append(vals[0])
            return None
        if isinstance(recv, _Box) and name == "pop":
            return recv.items.pop() if recv.items else None
        if name == "Stack" and not on_np:
            return _Box()
        if "out" in kw:
            return kw["out"]
        if method and isinstance(recv, _Arr):
            vals = [recv, *vals]
        if name in ("len", "range", "reversed") and not on_np:
            if all(isinstance(v, _Py) for v in vals):
                fn = {"len": len, "range": range, "reversed": lambda r: list(reversed(r))}
                return _Py(fn[name](*[v.value for v in vals]))
            if name == "len" and isinstance(vals[0], _Box):
                return _Py(len(vals[0].items))
            return None
        first = vals[0] if vals else None
        if name in _VIEWS and isinstance(first, _Arr) and (on_np or method):
            shape = hint.shape if hint is not None and hint.dtype is not None else first.shape
            return _Arr(first.buf, shape, first.dtype, name in ("real", "asarray") and first.c)
        if name == "reshape" and isinstance(first, _Arr):
            if first.c:
                shape = hint.shape if hint is not None and hint.dtype is not None else None
                if shape is None:
                    target = vals[1] if len(vals) > 1 else None
                    shape = _shape_of(target, vals[1:], first)
                return _Arr(first.buf, shape, first.dtype, True)
            return self.result([first], hint, None, first.dtype)
        if name == "unindex" and not on_np:
            if isinstance(vals[1], _Arr):
                return self.result(vals, hint, vals[1].shape, _dtype([vals[1]]))
            return _Box([vals[0]])
        if name == "zeros_grad" and not on_np:
            if isinstance(vals[0], _Arr):
                return self.result(vals, hint, vals[0].shape, vals[0].dtype)
            return _Box()
        if name == "as_grad" and not on_np:
            return self.as_grad(vals[0])
        if name == "extremum_grad" and not on_np and len(vals) >= 3 and \
                isinstance(vals[2], _Arr):
            # runtime.extremum_grad holds a mask and each slot's share beside its result
            x = vals[2]
            dt = vals[0].dtype if isinstance(vals[0], _Arr) else x.dtype
            inner = [self.fresh(x.shape, bool)]
            return self.result([*vals, *inner], hint, x.shape, dt)
        if name in _REDUCE and isinstance(first, _Arr):
            return self.result(vals, hint, _reduce(first, vals[1:], kw), first.dtype)
        arrays = [v for v in vals if isinstance(v, _Arr)]
        if on_np and isinstance(getattr(np, name, None), np.ufunc):
            return self.result(vals, hint, _broadcast(vals), _dtype(vals))
        if hint is not None and hint.dtype is not None and hint.ndim > 0:
            return self.result(vals, hint, None, None)
        if on_np and arrays:
            return self.result(vals, hint, max(arrays, key=lambda a: np.prod(a.shape)).shape,
                               _dtype(arrays))
        return None

    def kernel(self, k, e, env, infos):
        """A fused kernel's call: a new buffer for each result, except one it updates in
        place (its argument) or writes into an out= array (the memory plan's buffer)."""
        vals = self.args(e.args, env, infos)
        kw = {x.arg: self.eval(x.value, env, infos) for x in e.keywords}
        given = kw.get("out")
        given = given.items if isinstance(given, _Box) else [given] * len(k.outs)
        shape = _broadcast(vals)
        outs = []
        for o, g in zip(k.outs, given):
            if o.inout >= 0:
                outs.append(vals[o.inout])
            elif isinstance(g, _Arr):
                outs.append(g)
            else:
                s = shape
                if getattr(k, "rowwise", False):  # (a row kernel: full rows or one per row)
                    s = k.shape[:-1] + (1,) if k.stmts[o.stmt].row else k.shape
                outs.append(None if s is None else self.fresh(s, k.stmts[o.stmt].dtype))
        return outs[0] if len(outs) == 1 else _Box(outs)

    def as_grad(self, d, seen=None):
        """runtime.as_grad: a leaf the generated code made (a buffer of its own, once in the
        tree) is handed out as it is; an argument's, or a buffer met twice, is copied. (The
        runtime also copies a leaf something else still refers to, which this walk does not
        see: then the plan's peak is below the measured one by that copy.)"""
        seen = set() if seen is None else seen
        if isinstance(d, _Box):
            return _Box([self.as_grad(x, seen) for x in d.items])
        if isinstance(d, _Arr):
            if d.buf is not None and id(d.buf) not in seen:
                seen.add(id(d.buf))
                return d
            return self.fresh(d.shape, d.dtype)
        return d


class _Return(Exception):
    def __init__(self, value):
        self.value = value


def _const_tree(e, vals):
    """`e` with its operands replaced by their known values (for Python arithmetic)."""
    consts = [ast.Constant(v.value) for v in vals]
    if isinstance(e, ast.BinOp):
        return ast.fix_missing_locations(ast.BinOp(consts[0], e.op, consts[1]))
    if isinstance(e, ast.UnaryOp):
        return ast.fix_missing_locations(ast.UnaryOp(e.op, consts[0]))
    return ast.fix_missing_locations(ast.Compare(consts[0], e.ops, consts[1:]))


def _shapes(vals):
    out = []
    for v in vals:
        if isinstance(v, _Arr):
            out.append(v.shape)
        elif isinstance(v, _Py) and isinstance(v.value, (int, float, complex, bool)):
            out.append(())
        else:
            return None
    return out


def _broadcast(vals):
    shapes = _shapes(vals)
    if shapes is None:
        return None
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _matmul_shape(vals):
    a, b = vals
    if not (isinstance(a, _Arr) and isinstance(b, _Arr)):
        return None
    sa, sb = a.shape, b.shape
    if not sa or not sb:  # (a shape the walk lost track of)
        return None
    if len(sa) == 1 and len(sb) == 1:
        return ()
    if len(sa) == 1:
        return sb[:-2] + sb[-1:]
    if len(sb) == 1:
        return sa[:-1]
    try:
        return tuple(np.broadcast_shapes(sa[:-2], sb[:-2])) + (sa[-2], sb[-1])
    except ValueError:
        return None


def _dtype(vals):
    arrays = [v.dtype for v in vals if isinstance(v, _Arr)]
    if not arrays:
        return None
    return max(arrays, key=lambda d: (d.kind in "fc", d.itemsize))


def _reduce(a: _Arr, args, kw):
    axis = kw.get("axis", args[0] if args else None)
    keep = kw.get("keepdims", args[1] if len(args) > 1 else _Py(False))
    axis = axis.value if isinstance(axis, _Py) else axis
    keep = keep.value if isinstance(keep, _Py) else False
    if axis is None:
        return tuple(1 for _ in a.shape) if keep else ()
    axes = {x % len(a.shape) for x in (axis if isinstance(axis, tuple) else (axis,))}
    return tuple(1 if k in axes else n for k, n in enumerate(a.shape)
                 if keep or k not in axes)


def _shape_of(target, rest, first: _Arr):
    if isinstance(target, _Py) and isinstance(target.value, tuple):
        return target.value
    if rest and all(isinstance(v, _Py) and isinstance(v.value, int) for v in rest):
        return tuple(v.value for v in rest)
    return first.shape


def planned_peak(program, entry: str, args: list) -> int:
    """Peak bytes of one call of the program's `entry` function with `args` (concrete:
    the arguments themselves cost nothing, being the caller's)."""
    lowered = getattr(program, "kernels", None)
    walk = Peak(program.functions, program.infos_of,
                {k.name: k for k in lowered.kernels} if lowered is not None else None)
    walk.call(walk.functions[entry], [_of(a) for a in args])
    return walk.peak
