"""Memory planning over fused code: a kernel's result written into a dying operand's buffer.

Input: a lowered function's lines (``fuse=True``: srcad/lower made elementwise chains into
calls of C kernels), its facts (`srcad.memplan.facts`, which learn from here what a kernel
call defines) and the kernels' descriptors (`srcad.lower.kir.Kernel`: each output's dtype,
which outputs update an argument in place). Output: each kernel call one of whose new
results has the shape and dtype of an array argument that the function owns, that is
certainly C-contiguous and that dies at the call, passes that argument as the result's
``out=``:

    # fused kernel fused_tanh_multiply_... (L8): ...     # fused kernel ... (L8): ...
    dh_add = fused_tanh_multiply_1a2b(dh, h)   ->        # in place: dh_add into dh's buffer
    del dh, h                                             dh_add = fused_tanh_...(dh, h, out=dh)
                                                          del dh, h

The kernel writes such a result block by block through scratch after reading the block's
arguments (kernels_c/srcad_driver.c: an out= array that is exactly an argument), so every
value is the one the unplanned call computes, bit for bit. The result's memory order is
unchanged too: the plan asks that every array argument of the call be known C-contiguous,
and the kernel then makes a new result C-contiguous as well. Never planned: a user's
argument or anything else the function does not own, a view (or any name that may alias
the buffer) among the call's other arguments, an array the kernel already updates in
place (``x += ...`` inside it), one buffer for two results, a value still live after the
call (saved for the backward, returned, pushed).
"""

from __future__ import annotations

import ast
import copy

import numpy as np

from ..gcode import Line


def kernel_call(node, kernels: dict):
    """(kernel, call, target names) of a statement ``t = K(...)`` / ``t, u = K(...)`` calling
    one of `kernels` (name -> kir.Kernel); None for anything else, or a call of an unusual
    form (the facts then treat it as an opaque assignment)."""
    if not kernels or not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return None
    call = node.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id in kernels):
        return None
    k = kernels[call.func.id]
    target = node.targets[0]
    targets = target.elts if isinstance(target, ast.Tuple) else [target]
    if len(targets) != len(k.outs) or len(call.args) != len(k.args) or \
            not all(isinstance(t, ast.Name) for t in targets) or \
            not all(isinstance(a, ast.Name) for a in call.args):
        return None
    return k, call, [t.id for t in targets]


class KernelResult(ast.expr):
    """One result of a kernel call, as a definition the facts keep (`_Facts.owned`, `.c`)."""

    _fields = ("call", "index")


def c_result(call: ast.Call, k, c: set, infos: dict, index: int) -> bool:
    """Is the call's new result `index` certainly C-contiguous (given the names in `c` are)?

    The kernel lays a new result out as numpy would (kernels_c/srcad_driver.c, `best_order`):
    in C order when every array argument is C-compatible; otherwise in the order its
    statement's operands agree on, where an operand in C order with the full shape wins
    every pair of axes. So the result is C-contiguous too when its statement reads, directly
    or through earlier statements of the kernel, an argument that is C-contiguous with the
    kernel's full shape (a saved value of unknown layout beside it changes nothing)."""
    names = [a.id for a in call.args]
    if all(a.kind != "array" or n in c for a, n in zip(k.args, names)):
        return True
    shapes = [tuple(i.shape) for a, n in zip(k.args, names)
              if a.kind == "array" and (i := infos.get(n)) is not None]
    if len(shapes) != sum(a.kind == "array" for a in k.args):
        return False
    try:
        full = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return False
    anchors = {j for j, (a, n) in enumerate(zip(k.args, names))
               if a.kind == "array" and n in c and tuple(infos[n].shape) == full}
    anchored: list[bool] = []
    for s in k.stmts:
        anchored.append(any((r.kind == "arg" and r.index in anchors) or
                            (r.kind == "stmt" and anchored[r.index])
                            for r in s.operands.values()))
    return anchored[k.outs[index].stmt]


def plan_call(ln: Line, facts, after: set, stats) -> list | None:
    """The planned lines of one kernel call (a comment, then the call with out=), or None."""
    found = kernel_call(ln.node, facts.kernels)
    if found is None:
        return None
    k, call, targets = found
    if call.keywords:
        return None  # (already writes somewhere)
    names = [a.id for a in call.args]
    updated = {names[o.inout] for o in k.outs if o.inout >= 0}
    given: list = [None] * len(k.outs)
    for i, (o, t) in enumerate(zip(k.outs, targets)):
        if o.inout >= 0:
            continue
        want = facts.infos.get(t)
        dtype = np.dtype(k.stmts[o.stmt].dtype)
        if want is None or want.dtype is None or want.ndim == 0 or \
                np.dtype(want.dtype) != dtype:
            continue
        if not c_result(call, k, facts.c, facts.infos, i):
            continue  # (unplanned, it may be laid out otherwise: a later sum would differ)
        for a, n in zip(k.args, names):
            if a.kind != "array" or n in given or n in updated or n in targets:
                continue
            info = facts.infos.get(n)
            if info is None or info.dtype is None or np.dtype(info.dtype) != dtype or \
                    tuple(info.shape) != tuple(want.shape):
                continue
            if not facts.reusable(n) or facts.closure(n) & after:
                continue  # (not ours, not C, escapes, or read after the call)
            if any(m != n and m in facts.closure(n) for m in names):
                continue  # (another argument may be a view of it: a partial overlap)
            given[i] = n
            break
    if not any(given):
        return None
    new_call = copy.copy(call)
    out = [ast.Name(n, ast.Load()) if n else ast.Constant(None) for n in given]
    new_call.keywords = [ast.keyword(arg="out", value=out[0] if len(out) == 1 else
                                     ast.Tuple(elts=out, ctx=ast.Load()))]
    new = copy.copy(ln.node)
    new.value = new_call
    planned = copy.copy(ln)
    planned.node = new
    for t, n in zip(targets, given):
        if n:
            info = facts.infos[n]
            stats.reused.append((n, int(np.prod(info.shape, dtype=np.int64))
                                 * np.dtype(info.dtype).itemsize))
    stats.statements += 1
    into = ", ".join(f"{t} into {n}'s buffer" for t, n in zip(targets, given) if n)
    head = Line(comment=f"in place: {k.name} writes {into} "
                        f"({', '.join(n for n in given if n)} dies here)")
    return [head, planned]
