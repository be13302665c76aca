"""Optimize generated code: copy propagation, dead-code elimination, freeing dead arrays.

Input: `GFunction`s whose top-level statements are assignments (``a = expr``), in-place
accumulations (``da += expr``), stack pushes and pops, compound statements (loops and
branches, as `Line`s with bodies) and one final ``return``. Output: the same functions with
  * copies propagated: ``a = b`` (a name or a literal) is removed and later reads of ``a``
    read ``b`` -- only for a name assigned exactly once anywhere and never ``+=``'d;
  * dead statements removed, at the top level and inside loops and branches: an assignment
    to plain names none of which a live statement reads afterwards -- a value carried round
    a loop is live if read after the loop or by a live statement of a later iteration (a
    stack push or pop, `pop_or_zeros` too, a line marked `keep` and a write through a
    subscript or an attribute are never removed); an `if` or a `range` loop left empty goes;

        for i in range(n):                     for i in range(n):
            s = s + np.sum(X[i])        ->         s = s + np.sum(X[i])
            dW = setitem(dW, i, X[i])          (dW read by nothing else)
  * ``del`` inserted after the last use of each array the function made (and, in a loop
    body, of each array an iteration makes for itself).
Each pass is a single linear sweep; the first two repeat until nothing changes.
"""

from __future__ import annotations

import ast

from .gcode import (GFunction, Line, clone, exposed_reads, line_reads, line_writes,
                    names_mentioned, names_read, names_written, nodes)


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.mapping:
            return clone(self.mapping[node.id])
        return node


def _rename_line(ln: Line, mapping) -> None:
    for sub in ln.walk():
        if sub.node is not None:
            sub.node = _Rename(mapping).visit(sub.node)


def _has_side_effect(node: ast.stmt) -> bool:
    for n in nodes(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in ("pop", "push"):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                n.func.id == "pop_or_zeros":
            return True
    return False


def propagate_copies(f: GFunction) -> bool:
    counts: dict[str, int] = {p: 1 for p in f.params}  # a parameter is bound on entry
    augmented = set()
    for top in f.body:
        for ln in top.walk():
            if ln.node is None:
                continue
            if isinstance(ln.node, ast.AugAssign):  # changed in place (`d += g`, `d[i] += g`)
                target = ln.node.target
                while isinstance(target, ast.Subscript):
                    target = target.value
                if isinstance(target, ast.Name):
                    augmented.add(target.id)
            for t in line_writes(Line(ln.node)):
                counts[t] = counts.get(t, 0) + 1
    mapping: dict[str, ast.expr] = {}
    changed = False
    new_body = []
    for ln in f.body:
        if ln.node is None:
            new_body.append(ln)
            continue
        _rename_line(ln, mapping)
        node = ln.node
        if (
            not ln.compound
            and isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, (ast.Name, ast.Constant))
            and node.targets[0].id not in augmented
            and counts.get(node.targets[0].id) == 1
            and node.targets[0].id not in f.params
            and not (isinstance(node.value, ast.Name) and (
                node.value.id in augmented or counts.get(node.value.id, 0) > 1))
        ):
            mapping[node.targets[0].id] = node.value
            changed = True
            continue
        new_body.append(ln)
    f.body = new_body
    return changed


def _pure_targets(node: ast.stmt) -> bool:
    """Does the statement bind plain names only (``a = ..``, ``a, b = ..``, ``a += ..``)?
    A write through a subscript or an attribute changes an object others may hold."""
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, ast.AugAssign) else []
    todo = list(targets)
    while todo:
        t = todo.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            todo.extend(t.elts)
        elif not isinstance(t, ast.Name):
            return False
    return bool(targets)


def _removable(ln: Line, live: set[str]) -> bool:
    """Is `ln` (a simple statement) dead where `live` is what is read after it?"""
    node = ln.node
    if ln.keep or not isinstance(node, (ast.Assign, ast.AugAssign)) or not _pure_targets(node):
        return False
    return not (names_written(node) & live) and not _has_side_effect(node)


_PURE_RANGE = ("range", "reversed")


def _pure_iter(expr: ast.expr) -> bool:
    """`range(..)` / `reversed(range(..))[..]` over names and literals: walking it does nothing."""
    for n in nodes(expr):
        if isinstance(n, ast.Call):
            if not (isinstance(n.func, ast.Name) and n.func.id in _PURE_RANGE and not n.keywords):
                return False
        elif not isinstance(n, (ast.Name, ast.Constant, ast.Subscript, ast.Slice, ast.Load,
                                ast.UnaryOp, ast.USub, ast.BinOp, ast.Add, ast.Sub)):
            return False
    return True


class _Liveness:
    """Backward liveness over `Line`s, nested bodies included, where a dead statement reads
    nothing (so a value read only by dead statements is dead too: faint variables). A loop's
    body is solved to a fixed point: what is live at the end of an iteration is what the loop
    leaves live plus what the next iteration reads before writing it. With `prune`, the sweep
    also removes the statements it finds dead (run it once the sets are stable)."""

    def __init__(self, prune: bool):
        self.prune = prune
        self.changed = False

    def lines(self, body: list, out: set, loop) -> set:
        live = set(out)
        keep = []
        for ln in reversed(body):
            if ln.node is None:
                keep.append(ln)
                continue
            live, stays = self.line(ln, live, loop)
            if stays:
                keep.append(ln)
            else:
                self.changed = True
        if self.prune:
            keep.reverse()
            body[:] = _drop_orphan_comments(keep)
        return live

    def line(self, ln: Line, out: set, loop) -> tuple[set, bool]:
        node = ln.node
        if ln.compound:
            return self.compound(ln, out, loop)
        if isinstance(node, ast.Break):
            return (set(loop[0]) if loop else set(out)), True
        if isinstance(node, ast.Continue):
            return (set(loop[1]) if loop else set(out)), True
        if isinstance(node, (ast.Return, ast.Raise)):
            return names_read(node), True
        if isinstance(node, ast.Delete):  # (a del keeps what it deletes bound)
            return set(out) | names_mentioned(node), True
        if _removable(ln, out):
            return out, False
        kill = names_written(node) if isinstance(node, ast.Assign) else set()
        return (out - kill) | names_read(node), True

    def compound(self, ln: Line, out: set, loop) -> tuple[set, bool]:
        node = ln.node
        head = names_read(node)
        if isinstance(node, ast.If):
            live = self.lines(ln.body, out, loop) | self.lines(ln.orelse or [], out, loop)
            if self.prune:
                ln.orelse = ln.orelse if _has_statement(ln.orelse) else None
                if not _has_statement(ln.body):
                    if ln.orelse is None and _is_pure(node.test):
                        return set(out), False
                    ln.body = [Line(ast.Pass(), ln.line)]
            return live | head, True
        if isinstance(node, (ast.For, ast.While)) and not ln.orelse:
            target = names_mentioned(node.target) if isinstance(node, ast.For) else set()
            head = head if isinstance(node, ast.While) else set()  # (a for's iter: once)
            top = set(out) | head
            for _ in range(1000):  # the sets only grow: a few rounds
                body_in = self.lines_dry(ln.body, top, (out, top))
                new = set(out) | head | (body_in - target)
                if new == top:
                    break
                top = new
            body_in = self.lines(ln.body, top, (out, top))
            if self.prune and not _has_statement(ln.body):
                if isinstance(node, ast.For) and not (target & out) and _pure_iter(node.iter):
                    return set(out), False
                ln.body = [Line(ast.Pass(), ln.line)]
            return top | names_read(node), True
        # (a with / try / for-else: left as it is, everything in it read)
        return set(out) | line_reads(ln), True

    def lines_dry(self, body: list, out: set, loop) -> set:
        prune, changed = self.prune, self.changed
        self.prune = False
        try:
            return self.lines(body, out, loop)
        finally:
            self.prune, self.changed = prune, changed


def _has_statement(body) -> bool:
    return any(ln.node is not None and not isinstance(ln.node, ast.Pass) for ln in body or [])


_TEST_NODES = (ast.Name, ast.Constant, ast.Load, ast.UnaryOp, ast.Not, ast.BoolOp, ast.And,
               ast.Or)


def _is_pure(test: ast.expr) -> bool:
    """A branch test that only reads names (a dropped `if` must not drop an effect)."""
    return all(isinstance(n, _TEST_NODES) for n in nodes(test))


def _drop_orphan_comments(body: list) -> list:
    """Drop `# grad of ..` comment lines that no longer head any statement."""
    out = []
    for i, ln in enumerate(body):
        if ln.node is None and ln.comment and ln.comment.startswith("grad of"):
            nxt = body[i + 1] if i + 1 < len(body) else None
            if nxt is None or nxt.node is None:
                continue
        out.append(ln)
    return out


def eliminate_dead(f: GFunction) -> bool:
    """Remove every assignment whose value nothing live reads -- at the top level and inside
    loops and branches (a value carried round a loop is live if read after the loop, or by a
    live statement of a later iteration). A statement with an effect stays: a stack push or
    pop, a line marked `keep` (a print, a random draw, an opaque call that may change
    state), a write through a subscript or an attribute, anything not an assignment."""
    sweep = _Liveness(prune=True)
    sweep.lines(f.body, set(), None)
    return sweep.changed


def release_dead(f: GFunction, infos: dict | None = None) -> None:
    """Insert `del` after the last use of each array the function made.

    A value that is no longer needed is freed at once instead of at return, which keeps the
    backward's peak memory down (and spares the allocator fresh pages on the next call).
    Only names assigned at the top level (certainly bound) are freed; scalars (known from
    `infos`) are left alone; parameters are the caller's.
    """
    stmts = [ln for ln in f.body if ln.node is not None]
    last: dict[str, int] = {}
    defined: set[str] = set()
    frees: dict[int, list[str]] = {}
    # a value a later top-level statement replaces without reading it (a recomputation in
    # the backward) dies at its last read before that: free it there too
    last_read: dict[str, int] = {}
    ends: list[tuple[str, int]] = []
    for i, ln in enumerate(stmts):
        reads = line_reads(ln)
        if not ln.compound:
            for n in line_writes(ln) - reads:
                if n in defined and n in last_read and last_read[n] >= 0:
                    ends.append((n, last_read[n]))
                last_read[n] = -1
        for n in reads:
            last_read[n] = i
        for n in reads | line_writes(ln):
            last[n] = i
        if not ln.compound:
            defined |= line_writes(ln)
    returned = names_read(stmts[-1].node) if stmts and isinstance(stmts[-1].node, ast.Return) \
        else set()

    def freeable(n):
        info = (infos or {}).get(n)
        return (n in defined and n not in returned and n not in f.params
                and not (info is not None and info.ndim == 0) and not n.startswith("stack_"))

    for n, i in ends:
        if freeable(n):
            frees.setdefault(i, []).append(n)
    for n, i in last.items():
        if freeable(n) and n not in frees.get(i, []):
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
            body.append(Line(node, ln.line))
    f.body = body
    _release_loop_locals(f, infos)


def _release_loop_locals(f: GFunction, infos: dict | None) -> None:
    """Inside each loop body, `del` an array the body makes after its last use there, when
    nothing outside the body reads it: each iteration makes its own (the body never reads
    it before assigning it), so the last iteration's values would otherwise live on after
    the loop -- a returned gradient then looks shared to `runtime.as_grad` and is copied."""
    def mentions(lines) -> dict[str, int]:  # every Name node: read, written or deleted
        out: dict[str, int] = {}
        for top in lines:
            for ln in top.walk():
                if ln.node is not None:
                    for n in nodes(ln.node):
                        if isinstance(n, ast.Name):
                            out[n.id] = out.get(n.id, 0) + 1
        return out

    in_function = mentions(f.body)
    loops = [ln for top in f.body for ln in top.walk()
             if ln.compound and isinstance(ln.node, (ast.For, ast.While))]
    for loop in loops:
        inside = mentions(loop.body)
        # (anything the rest of the function mentions -- even a `del` -- is left alone)
        outside = {n for n, k in in_function.items() if k > inside.get(n, 0)}
        outside |= exposed_reads(loop.body)
        if isinstance(loop.node, ast.For):
            outside |= {n.id for n in ast.walk(loop.node.target) if isinstance(n, ast.Name)}
        last: dict[str, int] = {}
        made: set[str] = set()
        deleted: set[str] = set()
        for j, ln in enumerate(loop.body):
            if ln.node is None:
                continue
            if isinstance(ln.node, ast.Delete):
                deleted |= {t.id for t in ln.node.targets if isinstance(t, ast.Name)}
            if not ln.compound:
                made |= names_written(ln.node)
            for n in line_reads(ln) | line_writes(ln):
                last[n] = j
        frees: dict[int, list[str]] = {}
        for n in sorted(made - outside - deleted - set(f.params)):
            info = (infos or {}).get(n)
            if n.startswith("stack_") or (info is not None and info.ndim == 0):
                continue
            frees.setdefault(last[n], []).append(n)
        if not frees:
            continue
        body = []
        for j, ln in enumerate(loop.body):
            body.append(ln)
            if j in frees:
                node = ast.Delete(targets=[ast.Name(id=n, ctx=ast.Del()) for n in frees[j]])
                body.append(Line(node, ln.line))
        loop.body = body


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
