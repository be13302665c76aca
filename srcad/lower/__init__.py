"""Lowering (``fuse=True``): elementwise chains of the generated code become C kernels.

    functions --fuse (find chains; kir.Kernel each)--> lowered functions + kernels
              --cgen--> one C module --srcad.build (cache, compiler)--> extension module

Input: the optimised `GFunction`s of one specialisation, the static `Info` of their names
({function name: {name: Info}}) and the generated module's namespace (what its names
resolve to). Output: ``(functions, LoweredModule)`` -- deep copies of the functions in which
each chain of two or more fusable ops is one call of a kernel, commented with the
statements it replaces; and the built module whose entry points those calls name. When no
chain is found, or kernels cannot be built (no working compiler: one warning per process),
the input functions come back unchanged with ``None``, and the unfused code runs.

Before (generated, optimised)::

    t = a * b + c  # L5
    d = np.maximum(t, 0.0)  # L6

After::

    # fused kernel fused_multiply_add_maximum_1c2e3a (L5-L6): 3 ops in one pass over
    # [1000], in place of:
    #   t = a * b + c  # L5
    #   d = np.maximum(t, 0.0)  # L6
    d = fused_multiply_add_maximum_1c2e3a(a, b, c)  # L5
"""

from __future__ import annotations

import ast
import contextlib
import copy
import linecache
import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import build, runtime
from ..codegen import VERSION
from . import cgen
from .fuse import FunctionLowering
from .match import VT

__all__ = ["lower", "plan", "LoweredModule", "text_only", "batch", "quiet", "builds_now",
           "matmuls_as_gemm", "threaded_forms"]

_WARNED: set = set()
_TEXT_ONLY: list = [False]
_QUIET: list = [False]


@contextlib.contextmanager
def quiet():
    """Within it, no compiler leaves `lower` silent (the unfused code runs, as always): the
    automatic default (fuse omitted) fuses only where it can and says nothing otherwise. A
    later fuse=True still gets its one warning."""
    old = _QUIET[0]
    _QUIET[0] = True
    try:
        yield
    finally:
        _QUIET[0] = old


def builds_now() -> bool:
    """Whether `lower` would build and load kernels now (not inside `text_only` or `batch`)."""
    return not _TEXT_ONLY[0] and not _BATCH


@contextlib.contextmanager
def text_only():
    """Within it, `lower` plans and writes the C but builds nothing (the lowered functions'
    kernels are then not callable): `python -m srcad regen` and `show --fuse` use it, so the
    generated text does not depend on whether this machine has a compiler."""
    old = _TEXT_ONLY[0]
    _TEXT_ONLY[0] = True
    try:
        yield
    finally:
        _TEXT_ONLY[0] = old


@dataclass
class LoweredModule:
    """The kernels of one transformed function, built and loaded."""

    c_source: str
    kernels: list
    module: object = None  # the extension module (None: planned, not built)
    name: str = ""
    functions: dict = field(default_factory=dict)  # kernel name -> entry point


class _Pending:
    """A kernel of a `batch` whose module is not built yet: calls go to it once it is."""

    __slots__ = ("name", "target")

    def __init__(self, name):
        self.name, self.target = name, None

    def __call__(self, *args, **out):
        if self.target is None:
            raise RuntimeError(f"srcad: kernel {self.name} is called inside the srcad.lower."
                               f"batch() that builds it; call it after the block")
        return self.target(*args, **out)


_BATCH: list = []


@contextlib.contextmanager
def batch():
    """Lower everything transformed inside the block into one kernel module, built once at
    its end (one compiler run instead of one per function: the tests' fuzz corpus, or
    warming many specialisations up). Kernels cannot be called inside the block."""
    pending: list = []
    _BATCH.append(pending)
    try:
        yield
    finally:
        _BATCH.pop()
        _build_batch(pending)


def _build_batch(pending: list) -> None:
    kernels, seen = [], set()
    for ks, _ in pending:
        for k in ks:
            if k.name not in seen:
                seen.add(k.name)
                kernels.append(k)
    if not kernels:
        return
    fallbacks = _fallbacks(kernels)
    by_name = {k.name: f for k, f in zip(kernels, fallbacks)}
    text = cgen.module_c(kernels, f"a batch of {len(pending)} functions")
    rows = {s.op.name: s.op.c_version for k in kernels for s in k.stmts}
    try:
        module_name, key, material, comp = build.module_key(text, rows, VERSION)
        module = build.load_module(text, module_name, key, material, comp, fallbacks)
        found = {k.name: getattr(module, k.name) for k in kernels}
    except (build.CompilerUnavailable, build.BuildFailed) as e:
        warnings.warn(f"srcad: building a batch of fused kernels failed ({e}); their Python "
                      f"fallbacks run instead", stacklevel=3)
        found = {k.name: _taking_out(by_name[k.name], len(k.outs)) for k in kernels}
    for _, proxies in pending:
        for name, proxy in proxies.items():
            proxy.target = found[name]


def _taking_out(fallback, nout: int):
    """A kernel's Python fallback standing in for the kernel itself: it takes the kernel's
    out= too (the memory plan's buffers), copying its results into the arrays given."""
    def kernel(*args, out=None):
        res = fallback(*args)
        if out is None:
            return res
        given = out if isinstance(out, tuple) else (out,)
        got = (res,) if nout == 1 else res
        done = []
        for g, r in zip(given, got):
            if g is not None:
                np.copyto(g, r)
            done.append(r if g is None else g)
        return done[0] if nout == 1 else tuple(done)
    return kernel


def _relpath(filename: str) -> str:
    try:
        rel = os.path.relpath(filename)
    except ValueError:
        return os.path.basename(filename)
    return os.path.basename(filename) if rel.startswith("..") else rel


def plan(functions: list, infos_of: dict, namespace: dict, origin: dict):
    """(lowered copies of `functions`, their kernels, the module's C text): no compiler
    needed. `origin` is codegen's header description (filename, name)."""
    work = copy.deepcopy(functions)
    kernels: list = []
    taken: set = set()
    where_file = _relpath(origin.get("filename", "?"))
    lowerings = [FunctionLowering(f, infos_of.get(f.name), namespace,
                                  f"{where_file}:{f.name}", kernels, taken) for f in work]
    for f, fl in zip(work, lowerings):
        env = {n: vt for n, i in (infos_of.get(f.name) or {}).items()
               if (vt := VT.of_info(i)) is not None}
        f.body = fl.body(f.body, env)
    if "extremum_grad_add" not in taken and \
            namespace.get("extremum_grad", runtime.extremum_grad) is runtime.extremum_grad:
        for f in work:
            for top in f.body:
                for ln in top.walk():
                    _extremum_add(ln)
    unique, seen = [], set()
    for k in kernels:
        if k.name not in seen:
            seen.add(k.name)
            unique.append(k)
    if not unique:
        return functions, [], None
    text = cgen.module_c(unique, f"{where_file}:{origin.get('name', '?')}")
    return work, unique, text


def _extremum_add(ln) -> None:
    """``d = a + extremum_grad(g, out, x, ...)`` (an adjoint's two contributions, the
    softmax backward's) becomes ``d = extremum_grad_add(a, g, out, x, ...)``: the same values
    (the runtime adds in one C pass over the last axis, `a` the left operand as here), without
    the array of shares between them."""
    node = ln.node
    if ln.compound or not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return
    v = node.value
    if not (isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add) and
            isinstance(v.left, ast.Name) and isinstance(v.right, ast.Call) and
            isinstance(v.right.func, ast.Name) and v.right.func.id == "extremum_grad" and
            not v.right.keywords and 3 <= len(v.right.args) <= 5):
        return
    node.value = ast.Call(func=ast.Name("extremum_grad_add", ast.Load()),
                          args=[v.left] + v.right.args, keywords=[])
    ast.copy_location(node.value, v)
    ast.fix_missing_locations(node)


def _fallbacks(kernels) -> tuple:
    ns_base = {"np": np, **{n: getattr(runtime, n) for n in runtime.__all__}}
    out = []
    for k in kernels:
        filename = f"<srcad-fallback {k.name}>"
        linecache.cache[filename] = (len(k.fallback), None, k.fallback.splitlines(True),
                                     filename)
        ns = dict(ns_base)
        exec(compile(k.fallback, filename, "exec"), ns)
        out.append(ns[k.name])
    return tuple(out)


def lower(functions: list, infos_of: dict, namespace: dict, origin: dict):
    """``(functions, LoweredModule | None)``: see the module docstring."""
    work, kernels, text = plan(functions, infos_of, namespace, origin)
    if not kernels:
        return functions, None
    if _TEXT_ONLY[0]:
        return work, LoweredModule(text, kernels)
    if _BATCH:
        proxies = {k.name: _Pending(k.name) for k in kernels}
        _BATCH[-1].append((kernels, proxies))
        return work, LoweredModule(text, kernels, None, "(batched)", proxies)
    rows = {}
    for k in kernels:
        for s in k.stmts:
            rows[s.op.name] = s.op.c_version
    try:
        module_name, key, material, comp = build.module_key(text, rows, VERSION)
        module = build.load_module(text, module_name, key, material, comp, _fallbacks(kernels))
    except build.CompilerUnavailable as e:
        tag = getattr(e, "warn_key", "compiler")
        if tag not in _WARNED and not _QUIET[0]:
            _WARNED.add(tag)
            warnings.warn(getattr(e, "warning", None)
                          or f"srcad: fuse=True needs a C compiler: {e}; running unfused",
                          stacklevel=2)
        return functions, None
    except build.BuildFailed as e:
        warnings.warn(f"srcad: building the fused kernels failed; running unfused. "
                      f"This is a bug in srcad, please report it:\n{e}", stacklevel=2)
        return functions, None
    lowered = LoweredModule(text, kernels, module, module_name,
                            {k.name: getattr(module, k.name) for k in kernels})
    return work, lowered


GEMM = "gemm"  # srcad.runtime.gemm: `a @ b` on srcad's threads (kernels_c/srcad_gemm.h)
LEAD_SUM = "lead_sum"  # srcad.runtime.lead_sum: a sum over leading axes (kernels_c/srcad_colsum.h)
RESHAPED = "reshaped"  # srcad.runtime.reshaped: np.reshape, a copy on srcad's threads


def _in_runtime_forms(functions: list, form_of, names_used: set) -> list:
    """Copies of `functions` in which every expression node `form_of` gives a replacement
    for (the runtime's call standing for it) is replaced, innermost first; the functions
    themselves where no node has one, or where the functions already use one of
    `names_used` (the forms' names) for something else."""
    def has(node) -> bool:
        return any(form_of(n) is not None for n in ast.walk(node))

    lines = [sub for f in functions for ln in f.body for sub in ln.walk()
             if sub.node is not None]
    if not any(has(ln.node) for ln in lines):
        return functions
    names = {n.id for ln in lines for n in ast.walk(ln.node) if isinstance(n, ast.Name)}
    names |= {p for f in functions for p in f.params} | {f.name for f in functions}
    names |= {n.arg for ln in lines for n in ast.walk(ln.node) if isinstance(n, ast.arg)}
    if names & names_used:
        return functions

    class Rewrite(ast.NodeTransformer):
        def generic_visit(self, node):
            node = super().generic_visit(node)
            form = form_of(node)
            return node if form is None else ast.copy_location(form, node)

    out = copy.deepcopy(functions)
    for f in out:
        for ln in f.body:
            for sub in ln.walk():
                if sub.node is not None and has(sub.node):
                    sub.node = Rewrite().visit(sub.node)
    return out


def _gemm_form(n):
    """``gemm(a, b)`` for ``a @ b``, or None."""
    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult):
        return ast.Call(ast.Name(GEMM, ast.Load()), [n.left, n.right], [])
    return None


def matmuls_as_gemm(functions: list) -> list:
    """Fused code's matmuls as calls of the runtime's `gemm` (``h = gemm(x, W)  # L10``, for
    ``h = x @ W``): numpy's product bit for bit, computed where srcad runs the BLAS at one
    thread (srcad.build.pinned) by srcad's own threads, blocks of rows pulled as each comes
    free, so a core another process holds delays one block, not half the product. Copies of
    `functions` (the program keeps its `@`: the memory plan's walkers read it); the functions
    themselves where none has a matmul or any of them already uses the name."""
    return _in_runtime_forms(functions, _gemm_form, {GEMM})


def _leading_axes(node) -> bool:
    """`0`, or `(0, 1, ..., k-1)`: every leading axis up to some k."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int and node.value == 0
    return isinstance(node, ast.Tuple) and len(node.elts) > 0 and all(
        isinstance(e, ast.Constant) and type(e.value) is int and e.value == i
        for i, e in enumerate(node.elts))


def _flattened(n):
    """``reshaped(x, (m, k))`` for an operand ``x.reshape(m, k)`` (a matmul rule's N-D operand
    as one matrix, literal sizes), and the same under ``.T``; None for anything else."""
    if isinstance(n, ast.Attribute) and n.attr == "T":
        inner = _flattened(n.value)
        return None if inner is None else ast.Attribute(inner, "T", ast.Load())
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
            n.func.attr == "reshape" and isinstance(n.func.value, ast.Name) and \
            len(n.args) >= 2 and not n.keywords and \
            all(isinstance(a, ast.Constant) and type(a.value) is int for a in n.args):
        return ast.Call(ast.Name(RESHAPED, ast.Load()),
                        [n.func.value, ast.Tuple(list(n.args), ast.Load())], [])
    return None


def _threaded_form(n):
    """The runtime's call standing for `n`, or None: ``x.sum(axis=(0, ..., k-1))`` as
    ``lead_sum(x, (0, ..., k-1))``; ``np.reshape(x, shape)`` as ``reshaped(x, shape)``; a
    product's operand ``x.reshape(m, k)`` as ``reshaped(x, (m, k))`` (a cotangent that is a
    view of heads split or merged: numpy's copy on one thread took ~40 us of the small
    Transformer block's step, twice for the two products that read it)."""
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == GEMM and \
            len(n.args) == 2 and not n.keywords:
        args = [_flattened(a) for a in n.args]
        if all(a is None for a in args):
            return None
        return ast.Call(n.func, [new or old for new, old in zip(args, n.args)], [])
    if not isinstance(n, ast.Call) or not isinstance(n.func, ast.Attribute):
        return None
    if n.func.attr == "sum" and not n.args and len(n.keywords) == 1 and \
            n.keywords[0].arg == "axis" and _leading_axes(n.keywords[0].value):
        return ast.Call(ast.Name(LEAD_SUM, ast.Load()), [n.func.value, n.keywords[0].value], [])
    if n.func.attr == "reshape" and isinstance(n.func.value, ast.Name) and \
            n.func.value.id == "np" and len(n.args) == 2 and not n.keywords and \
            not any(isinstance(a, ast.Starred) for a in n.args):
        return ast.Call(ast.Name(RESHAPED, ast.Load()), list(n.args), [])
    return None


def threaded_forms(functions: list) -> list:
    """Fused code's plain numpy calls that numpy runs on one thread, as calls of the runtime's
    forms on srcad's threads, each numpy's result bit for bit (numpy's own call for what the
    runtime does not handle): a sum over leading axes -- ``db = dh.sum(axis=(0, 1))``, the
    gradient of a bias added to a batch, or LayerNorm's gain -- as ``lead_sum(dh, (0, 1))``
    (each column's values added in numpy's order, the columns shared), and ``np.reshape(x,
    shape)`` as ``reshaped(x, shape)`` (where numpy would copy -- attention's heads merged
    back -- the copy's rows shared; numpy's view where it makes one). Copies of `functions`,
    as `matmuls_as_gemm` makes them; the functions themselves where none has such a call or
    a name is taken."""
    return _in_runtime_forms(functions, _threaded_form, {LEAD_SUM, RESHAPED})
