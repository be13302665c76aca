"""The public transforms: grad, value_and_grad, vjp, jvp, hessian, source, explain.

Each makes a `Transformed` (srcad/transformed.py: binding, the specialisation cache, the
first-call probe and build) or drives one; the pipeline itself is srcad/pipeline.py. The
names and behaviours here are pinned (DESIGN.md: "Pinned public API").

    >>> import numpy as np, srcad
    >>> def f(x):
    ...     return np.sum(np.tanh(x) ** 2)
    >>> float(srcad.grad(f)(np.zeros(3))[0])
    0.0
"""

from __future__ import annotations

import functools
import types
from dataclasses import replace

import numpy as np

from . import closure_lift, runtime, tape
from .binding import _describe, _is_differentiable, _is_float, _tangent_for
from .errors import SrcadError
from .memplan.peak import planned_peak
from .pipeline import build
from .probe import probe
from .pullback import Pullback, cotangent_like, out_structure, tree_leaves
from .report import Saved, report
from .runtime_trees import vdot_function
from .transformed import (  # noqa: F401  (tests reach the first three here)
    _IR_CACHE,
    Transformed,
    _ir_of,
    _cell_value,
    _tape_of,
    run_generated,
)
from .wrappers import fixed_arity, takes_star


def _decorator(kind):
    def transform(fn=None, wrt=0, **options):
        if fn is None:
            return lambda f: Transformed(f, kind, wrt, options)
        if isinstance(fn, (int, str, tuple)) and not callable(fn):
            raise SrcadError(f"srcad.{kind}'s first argument must be a function; pass wrt= "
                             f"by keyword")
        return Transformed(fn, kind, wrt, options)

    transform._srcad_transform = kind  # (`srcad.grad(f)(x)` inside a differentiated function)
    return transform


grad = _decorator("grad")
grad.__doc__ = """Gradient of `fn`'s scalar output with respect to argument(s) `wrt`.

    `wrt` is a position or name (one gradient) or a tuple of them (a tuple of gradients).
    Usable as `srcad.grad(f)`, `@srcad.grad` and `@srcad.grad(wrt=(0, 1))`.
    """
value_and_grad = _decorator("value_and_grad")
value_and_grad.__doc__ = """Like `grad`, but returns `(value, grad)`."""


def vjp(fn, *primals, **options):
    """`(out, pullback)`: `pullback(cotangent)` returns one gradient per primal (JAX semantics).

    The saved values live in the pullback between the two calls. A non-float primal gets
    None.
    """
    held = next((v for v in primals if _tape_of(v) is not None), None)
    lifted, cells = _tape_closure(fn)
    if held is not None or lifted is not None:
        # inside a function tape mode runs: the pullback as a grad call (of a closure over
        # the tape's values: lifted, its cells' values passed after the primals)
        out = fn(*primals)
        t = _pullback_transform(lifted or tape.untraced(fn), len(primals), options,
                                len(cells))
        return out, lambda cotangent: t(*primals, *cells, cotangent)
    t = _vjp_transformed(fn, options, len(primals))
    values = t.bind(primals, {})
    n_given = len(primals)
    if t.options.mode == "tape":
        tp, wrapped, out, value, mask = t.tape_call(values, given=n_given)
        value = _tree_value(out)
        structure, name = out_structure(value), t._ir.name
        # (the arguments' structure as the run left it: a container the caller changes
        # after vjp returned neither shapes nor feeds the gradients)
        wrapped, values = _as_given((wrapped, values))

        def pullback(cotangent):
            cotangent = cotangent_like(structure, cotangent, name)
            return tuple(tape.grads(tp, wrapped, values, tuple(tree_leaves(out)),
                                    tuple(tree_leaves(cotangent)), mask))[:n_given]

        return value, pullback
    c = t.compiled(values, given=n_given)
    out, saved = run_generated(c.functions["fwd"], t._ir, *values)
    saved, given = _as_given((saved, values[:n_given]))
    return out, Pullback(t, c, saved, given, out)


def _as_given(saved, memo=None):
    """`saved` with every list, dict and tuple in it copied (its arrays and other objects
    shared), Stacks too: the pullback is the derivative at the point given to vjp (JAX's),
    so what it reads must be the values the forward left, not containers the caller still
    holds and may change (`p[0][1] = ...`, `p[0].append(...)`) before calling it. Its arrays
    are checked instead (Pullback's checksums: they are not copied). Objects reached twice
    stay one object (`p` and `u = p[0]`, both saved)."""
    memo = {} if memo is None else memo
    kind = type(saved)
    if kind not in _COPIED and not (isinstance(saved, tuple) and hasattr(kind, "_fields")):
        return saved
    if id(saved) in memo:
        return memo[id(saved)]
    if kind is dict:
        out = memo[id(saved)] = {}
        for k, v in saved.items():
            out[k] = v if type(v) in _SHARED else _as_given(v, memo)
    elif kind is list:
        out = memo[id(saved)] = []
        out.extend(v if type(v) in _SHARED else _as_given(v, memo) for v in saved)
    elif kind is runtime.Stack:
        out = memo[id(saved)] = runtime.Stack()
        out._items = [_as_given(v, memo) for v in saved._items]
        out._cotangents = saved._cotangents
    else:  # (a tuple cannot hold itself: its items first)
        items = [_as_given(v, memo) for v in saved]
        out = memo[id(saved)] = saved if all(a is b for a, b in zip(items, saved)) else \
            kind(*items) if kind is not tuple else tuple(items)
    return out


_COPIED = frozenset({list, dict, tuple, runtime.Stack})
_SHARED = frozenset({np.ndarray, float, int, np.float64, np.float32, type(None)})


def _tree_value(out):
    """A tape output's value: its containers kept (a list stays a list), each leaf plain."""
    if isinstance(out, dict):
        return {k: _tree_value(v) for k, v in out.items()}
    if isinstance(out, list):
        return [_tree_value(v) for v in out]
    if isinstance(out, tuple) and not hasattr(type(out), "_fields"):
        return tuple(_tree_value(v) for v in out)
    return tape.value_of(out)


_VJP_CACHE: dict = {}
_JVP_CACHE: dict = {}


def jvp(fn, primals, tangents, **options):
    """`(out, tangent_out)`: the directional derivative of `fn` at `primals` along `tangents`,
    by a forward-mode source transformation (JAX semantics: tuples in). A non-float primal's
    tangent is ignored.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise SrcadError("srcad.jvp(fn, primals, tangents) takes tuples of primals and tangents",
                         hint="write srcad.jvp(f, (x,), (v,)) for one argument")
    if len(primals) != len(tangents):
        raise SrcadError(f"srcad.jvp got {len(primals)} primals but {len(tangents)} tangents")
    held = next((v for v in (*primals, *tangents) if _tape_of(v) is not None), None)
    lifted, cells = _tape_closure(fn)
    if held is not None or lifted is not None:
        # inside a function tape mode runs: the tangent as a grad call (a closure over the
        # tape's values: lifted, as in vjp)
        out = fn(*primals)
        return out, _tangent_transform(lifted or tape.untraced(fn), len(primals), options,
                                       len(cells))(*primals, *cells, *tangents, out)
    if takes_star(fn):  # (one primal, one tangent per positional argument, as JAX)
        fn = fixed_arity(fn, len(primals))
    key = (fn, tuple(sorted(options.items())))
    t = _JVP_CACHE.get(key)
    if t is None:
        t = Transformed(fn, "jvp", (), options)
        _JVP_CACHE[key] = t
    values = t.bind(tuple(primals), {})
    for p, v, d in zip(t.params, values, tangents):
        if not isinstance(v, (dict, list, tuple)) and _is_float(v) and np.shape(d) != np.shape(v):
            raise SrcadError(f"the tangent for `{p}` has shape {np.shape(d)} but the primal has "
                             f"shape {np.shape(v)}")
    c = t.compiled(values, given=len(primals))
    dots = [_tangent_for(d, v) for v, d in zip(values, tangents) if _is_differentiable(v)]
    out, tangent = run_generated(c.functions["main"], t._ir, *values, *dots)
    return out, _shaped_like(out, tangent)


_INNER_CACHE: dict = {}


def _tape_closure(fn):
    """(fn lifted, its cells' values) for a nested function over values tape mode follows
    (its free variables as parameters after its own: closure_lift.py), else (None, [])."""
    fn = tape.untraced(fn)
    cells = getattr(fn, "__closure__", None) or ()
    if not any(_tape_of(_cell_value(c)) is not None for c in cells):
        return None, []
    return closure_lift.lifted(fn), closure_lift.cell_values(fn)


def _pullback_transform(fn, n: int, options: dict, extra: int = 0) -> Transformed:
    """``srcad.vjp(fn, a0, ...)``'s pullback as one transform called inside a differentiated
    function: the gradient w.r.t. the a's of ``tree_vdot(fn(a0, ..., c0, ...), g)``, called
    as ``t(a0, ..., c0, ..., g)`` (a tuple, one gradient per a; the c's: a nested function's
    free variables, which the outer transform differentiates through)."""
    key = ("vjp", fn, n, extra, tuple(sorted(options.items())))
    if key not in _INNER_CACHE:
        h = vdot_function(fn, n, f"{getattr(fn, '__name__', 'f')}_vjp", extra=extra)
        _INNER_CACHE[key] = Transformed(h, "grad", tuple(range(n)), options)
    return _INNER_CACHE[key]


def _tangent_transform(fn, n: int, options: dict, extra: int = 0) -> Transformed:
    """``srcad.jvp(fn, (a0, ...), (t0, ...))``'s tangent as one transform called inside a
    differentiated function, ``t(a0, ..., c0, ..., t0, ..., c)``: the gradient w.r.t. c of
    ``tree_vdot(pullback(a0, ..., c), (t0, ...))`` -- linear in c, so it holds at any c of the
    output's structure (the output itself is passed)."""
    key = ("jvp", fn, n, extra, tuple(sorted(options.items())))
    if key not in _INNER_CACHE:
        h = vdot_function(_pullback_transform(fn, n, options, extra), n,
                          f"{getattr(fn, '__name__', 'f')}_jvp", with_tangents=True,
                          extra=extra)
        _INNER_CACHE[key] = Transformed(h, "grad", 2 * n + extra, options)
    return _INNER_CACHE[key]


# (``srcad.vjp(f, x)`` / ``srcad.jvp(f, ...)`` written inside a differentiated function: the
# frontend lowers them to calls of these transforms, which it finds here without an import
# of this module: srcad/frontend/inner_transforms.py)
vjp._srcad_inner, vjp._srcad_transform_of = "vjp", _pullback_transform
jvp._srcad_inner, jvp._srcad_transform_of = "jvp", _tangent_transform


def _shaped_like(out, tangent):
    """The output's tangent in the output's containers (as JAX): a list for a list, a tuple
    (a namedtuple) for a tuple, a plain dict in the output's key order for a dict, nested --
    generated code and the runtime carry a dict's or a grown list's tangent as their own
    `Slots` / `Items`, and a returned list through a variable as a tuple."""
    if isinstance(out, dict) and isinstance(tangent, dict):
        return {k: _shaped_like(v, tangent.get(k)) for k, v in out.items()}
    if isinstance(out, (list, tuple)) and isinstance(tangent, (list, tuple)) and \
            len(out) == len(tangent):
        items = [_shaped_like(o, d) for o, d in zip(out, tangent)]
        if isinstance(out, list):
            return items
        if isinstance(out, tuple) and hasattr(type(out), "_fields"):
            return type(out)(*items)
        return tuple(items)
    return tangent


def _vjp_transformed(fn, options, n: int) -> Transformed:
    if takes_star(fn):  # (one primal, one cotangent per positional argument, as JAX)
        fn = fixed_arity(fn, n)
    key = (fn, tuple(sorted(options.items(), key=lambda kv: kv[0])))
    try:
        t = _VJP_CACHE.get(key)
    except TypeError:
        t = None
        key = None
    if t is None:
        t = Transformed(fn, "vjp", (), options)
        if key is not None:
            _VJP_CACHE[key] = t
    return t


def hessian(fn, wrt=0, **options):
    """The Hessian of `fn`'s scalar output w.r.t. one argument, column by column from
    Hessian-vector products (forward over reverse: ``jvp(grad(f), (x,), (e_k,))``).
    For x of shape s the result has shape s + s.
    """
    if isinstance(wrt, (tuple, list)):
        raise SrcadError("srcad.hessian takes one argument (wrt=position or name)")
    g = grad(fn, wrt=wrt, **options)

    def hess(*args):
        values = g.bind(args, {})
        pos = g.params.index(g.wrt[0])
        x = np.asarray(values[pos])
        cols = []
        for k in range(x.size):
            e = np.zeros(x.size, dtype=x.dtype)
            e[k] = 1
            tangents = [np.zeros_like(v) if _is_float(v) else None for v in values]
            tangents[pos] = e.reshape(x.shape)
            _, hv = jvp(g, tuple(values), tuple(tangents))
            cols.append(np.ravel(hv))
        h = np.stack(cols, axis=1) if cols else np.zeros((0, 0), dtype=x.dtype)
        return h.reshape(x.shape + x.shape)

    functools.update_wrapper(hess, g)
    return hess


def explain(fn, *args, wrt=None, print_report: bool = True, **options):
    """Every value the backward of `fn` keeps for these arguments: name, shape, dtype,
    bytes, where it was made, saved or recomputed, and the total; then the planned peak of
    one grad call (``Report.planned_peak``, bytes above the arguments) and the number of
    statements the memory plan computed in place (``Report.in_place``). Prints the table (unless
    ``print_report=False``) and returns it as a `srcad.report.Report`.

    `fn` may be a plain function (gradients w.r.t. every float argument, or `wrt`) or a
    function made by `srcad.grad` / `value_and_grad` (its own `wrt`).
    """
    if isinstance(fn, Transformed):
        wrt = fn.wrt if wrt is None else wrt
        options = {**fn.options.user(), **options}
        fn = fn.fn
    t = Transformed(fn, "vjp", (), options)
    values = t.bind(args, {})
    env = dict(zip(t.params, values))
    names = t._resolve_wrt(wrt) if wrt is not None else [p for p in t.params
                                                          if _is_differentiable(env[p])]
    t._check_wrt_values(env, names)
    infos, _ = probe(t._ir, env, names)
    signature = ", ".join(f"{p}: {_describe(env[p])}" for p in t.params)
    # (the options a call builds with: the budget policy's choices, fuse=True's recomputation)
    opts = t.build_options(tuple(names), infos, signature, values)
    c = build(t._ir, infos, signature, opts)
    _, saved = c.functions["fwd"](*values)
    rep = report(t._ir, c.saved, saved, env)
    for what, line, note in (opts.plan.choices if opts.plan else []):
        rep.items.append(Saved(what, None, None, 0, f"{t._ir.filename}:{line}",
                               note, status="recomputed"))
    if opts.plan is None:  # the default policy's recomputations (memory_plan=True)
        for what, line in dict.fromkeys(c.rematerialised or []):
            rep.items.append(Saved(what, None, None, 0, f"{t._ir.filename}:{line}",
                                   "cheaper than keeping", status="recomputed"))
    rep.planned_peak, rep.in_place, rep.in_place_bytes = _planned(t, infos, signature, opts,
                                                                  values)
    if print_report:
        print(rep)
    return rep


def _planned(t, infos, signature, opts, values):
    """The planned peak of one grad call and what the memory plan did (`Report`'s lines)."""
    c = build(t._ir, infos, signature, replace(opts, kind="grad"))
    program = c.program
    stats = program.memory
    in_place = (stats.statements, stats.bytes_saved) if stats is not None else (None, 0)
    try:
        peak = planned_peak(program, program.roles["main"], values)
    except (AttributeError, IndexError, KeyError, RecursionError, TypeError, ValueError):
        # (generated code the walk does not model: the line says the peak is not known)
        peak = None
    return peak, *in_place


def source(transformed) -> str:
    """The generated Python source of a transformed function (or of a vjp's pullback): the
    code that runs now, for the specialisation called last (before any call: a generic build).

    Under the default (`fuse` omitted) that is the unfused code on a specialisation's first
    two calls and the lowered code, calling C kernels, from its third on (SRCAD_FUSE sets
    the call); the header's options line says which (``fuse=False`` / ``fuse=True``). A
    pullback shows the code of the forward that made it."""
    if isinstance(transformed, types.MethodType) and isinstance(transformed.__func__,
                                                                Transformed):
        transformed = transformed.__func__  # (`srcad.source(model.dloss)` of a method)
    if isinstance(transformed, (Transformed, Pullback)):
        return transformed.source
    raise SrcadError(f"srcad.source needs a function made by srcad, got {transformed!r}")


__all__ = ["grad", "value_and_grad", "vjp", "jvp", "hessian", "source", "explain",
           "Transformed", "Pullback", "runtime"]
