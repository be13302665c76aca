"""Optimize generated code: copy propagation and dead-code elimination, to a fixed point.

Input: `GFunction`s whose statements are pure assignments (``a = expr``), in-place
accumulations (``da += expr``) and one final ``return``. Output: the same functions with
  * copies propagated: ``a = b`` (a name or a literal) is removed and later reads of ``a``
    read ``b`` -- unless ``a`` is later accumulated into with ``+=`` (it owns a buffer);
  * dead statements removed: an assignment whose target is never read afterwards.
Both passes are single linear sweeps, repeated until nothing changes.
"""

from __future__ import annotations

import ast
import copy

from .gcode import GFunction, names_read, names_written


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.mapping:
            return copy.deepcopy(self.mapping[node.id])
        return node


def propagate_copies(f: GFunction) -> bool:
    stmts = f.statements()
    augmented = {n.node.target.id for n in stmts if isinstance(n.node, ast.AugAssign)}
    assigned_count: dict[str, int] = {}
    for ln in stmts:
        for t in names_written(ln.node):
            assigned_count[t] = assigned_count.get(t, 0) + 1
    mapping: dict[str, ast.expr] = {}
    changed = False
    new_body = []
    for ln in f.body:
        node = ln.node
        if node is None:
            new_body.append(ln)
            continue
        node = _Rename(mapping).visit(node)
        ln.node = node
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, (ast.Name, ast.Constant))
            and node.targets[0].id not in augmented
            and assigned_count.get(node.targets[0].id) == 1
            and node.targets[0].id not in f.params
            and not (isinstance(node.value, ast.Name) and node.value.id in augmented)
        ):
            mapping[node.targets[0].id] = node.value
            changed = True
            continue
        new_body.append(ln)
    f.body = new_body
    return changed


def eliminate_dead(f: GFunction) -> bool:
    live: set[str] = set()
    keep = []
    changed = False
    for ln in reversed(f.body):
        node = ln.node
        if node is None:
            keep.append(ln)
            continue
        if isinstance(node, ast.Return):
            live |= names_read(node)
            keep.append(ln)
            continue
        written = names_written(node)
        if written and not (written & live):
            changed = True
            continue
        if isinstance(node, ast.Assign):
            live -= written
        live |= names_read(node)
        keep.append(ln)
    keep.reverse()
    # drop comment lines that no longer head any statement
    body = []
    for i, ln in enumerate(keep):
        if ln.node is None and ln.comment and ln.comment.startswith("grad of"):
            nxt = keep[i + 1] if i + 1 < len(keep) else None
            if nxt is None or nxt.node is None:
                changed = True if nxt is not None and nxt.comment else changed
                continue
        body.append(ln)
    f.body = body
    return changed


def release_dead(f: GFunction, infos: dict | None = None) -> None:
    """Insert `del` after the last use of each array the function made.

    A value that is no longer needed is freed at once instead of at return, which keeps the
    backward's peak memory down (and spares the allocator fresh pages on the next call).
    Scalars (known from `infos`) are left alone; parameters are the caller's.
    """
    stmts = [ln for ln in f.body if ln.node is not None]
    last: dict[str, int] = {}
    defined: set[str] = set()
    for i, ln in enumerate(stmts):
        for n in names_read(ln.node) | names_written(ln.node):
            last[n] = i
        defined |= names_written(ln.node)
    returned = names_read(stmts[-1].node) if stmts and isinstance(stmts[-1].node, ast.Return) \
        else set()
    frees: dict[int, list[str]] = {}
    for n, i in last.items():
        if n not in defined or n in returned or n in f.params:
            continue
        info = (infos or {}).get(n)
        if info is not None and info.ndim == 0:
            continue
        frees.setdefault(i, []).append(n)
    body = []
    k = -1
    for ln in f.body:
        body.append(ln)
        if ln.node is None:
            continue
        k += 1
        if k in frees:
            names = sorted(frees[k])
            node = ast.Delete(targets=[ast.Name(id=n, ctx=ast.Del()) for n in names])
            body.append(type(ln)(node, ln.line))
    f.body = body


def optimize(f: GFunction, infos: dict | None = None, *, release: bool = True) -> GFunction:
    """Copy propagation and dead-code elimination to a fixed point, then free dead arrays."""
    for _ in range(50):
        a = propagate_copies(f)
        b = eliminate_dead(f)
        if not (a or b):
            break
    if release:
        release_dead(f, infos)
    return f
