"""In-place writes in differentiated code: `x[i] = v`, `x[i] += v`, `x += t` on arrays.

srcad differentiates a write as copy-on-write (`runtime.setitem`): the written name gets a new
array, so a value the backward saved is never overwritten. numpy instead writes into the old
array, which every alias and view of it sees. In straight-line code srcad does what numpy does,
with values: `r = y[1:]` is remembered as a basic-index view of `y`, and a write into one is
carried to the other (`y = setitem(y, np.s_[1:], r)`, `r = y[1:]`) and to plain aliases. Inside
loops and branches (and for transpose/reshape views) such a write is refused instead, when
something that shares the old array is read afterwards (`check_mutations`), so that no program
silently computes something numpy would not.

`AliasingMixin` holds these methods of the normaliser (srcad/frontend/normalize.py).
"""

from __future__ import annotations

import operator

import gast

from .. import ir, runtime
from ..errors import UnsupportedSyntaxError


def _makes_view(call: ir.Call) -> bool:
    """Does this call return memory shared with its input?  Indexing does only with basic
    indices (ints, slices, None, ...); an integer array or a mask makes a copy."""
    if call.op.name != "getitem":
        return True
    index = call.args.get("index")
    parts = index.parts if isinstance(index, ir.Index) else ()
    return all(isinstance(p, (ir.Slice, ir.Const)) for p in parts)




class AliasingMixin:
    """Subscript assignment and numpy's aliasing, for `Normalizer`."""

    def setitem(self, target, value, node):
        """x[i] = v: a new array (copy on write) bound to x. numpy would write into the old
        array, so every other name that shares its memory (a view, an alias) must be dead
        from here on -- checked once the whole function is normalised (`check_mutations`)."""
        if not isinstance(target.value, gast.Name) or target.value.id not in self.locals:
            raise self.unsupported("assignment into something other than a local array", node,
                                   "assign into a name: x = x.copy(); x[i] = v")
        name = target.value.id
        base = self.name_atom(target.value)
        index = self.index(target.slice, name)
        v = self.expr(value, name, None)
        call = self.op_call(runtime.setitem, [base, index, v], {}, node)
        new = self.result(call, name, (name, node.lineno), node)
        if isinstance(base, ir.Var):
            self.mutations.append((self.body[-1], base.name, node.lineno, True))
            self.propagate_write(name, base, new, node)

    # -- numpy's aliasing, in straight-line code ---------------------------------------------
    # `r = y[0]` (a basic index) makes r a view of y, `z = y` makes z the same array: a write
    # into one must show in the others. Outside loops and branches srcad does what numpy does,
    # with values: the written name gets the new array, and its base, its other views and its
    # aliases are rebuilt from it (setitem into the base, getitem out of it). Inside loops and
    # branches such a write is refused instead (`check_mutations`).

    def record_view(self, name: str, value) -> None:
        """After `name = value`: remember a basic-index view of another straight-line name."""
        self.views.pop(name, None)
        if (name in self.mutable or not isinstance(value, gast.Subscript)
                or not isinstance(value.value, gast.Name)):
            return
        base = value.value.id
        call = self.body[-1] if self.body else None
        if (base in self.locals and base not in self.mutable and isinstance(call, ir.Call)
                and call.op.name == "getitem" and _makes_view(call)
                and self.env.get(name) == ir.Var(call.target)):
            self.views[name] = (base, call.args["index"])

    def propagate_write(self, name: str, old: ir.Var, new: ir.Var, node) -> None:
        if name in self.mutable:
            return
        line = node.lineno
        for other, atom in list(self.env.items()):  # aliases: the same array, new contents
            if other != name and atom == old and other not in self.mutable:
                self.env[other] = new
        if name in self.views:  # a view: write its new contents into its base
            base, index = self.views[name]
            call = self.op_call(runtime.setitem, [self.env[base], index, new], {}, node)
            base_new = self.emit(call, self.fresh(f"{base}_L{line}"), node)
            self.propagations.add(id(self.body[-1]))  # reads the old base on purpose
            self.env[base] = base_new
            self.refresh_views(base, base_new, skip=name, node=node)
        self.refresh_views(name, new, skip=None, node=node)

    def refresh_views(self, base: str, base_new: ir.Var, skip, node) -> None:
        for view, (b, index) in list(self.views.items()):
            if b == base and view != skip:
                call = self.op_call(operator.getitem, [base_new, index], {}, node)
                self.env[view] = self.emit(call, self.fresh(f"{view}_L{node.lineno}"), node)

    def check_mutations(self) -> None:
        """Copy-on-write equals numpy's in-place write only if nothing else still reads the
        old array: no alias of it and no view into it (or of which it is a view)."""
        if not self.mutations:
            return
        order, loops = {}, {}

        def number(body, loop_ids):
            for st in body:
                order[id(st)] = len(order)
                loops[id(st)] = loop_ids
                if isinstance(st, ir.If):
                    number(st.body, loop_ids)
                    number(st.orelse, loop_ids)
                elif isinstance(st, (ir.For, ir.While)):
                    inner = loop_ids + (id(st),)
                    if isinstance(st, ir.While):
                        number(st.cond_body, inner)
                    number(st.body, inner)

        number(self.body, ())
        roots, made, view_at = {}, {}, {}
        for st in ir.walk(self.body):
            if isinstance(st, ir.Call):
                made.setdefault(st.target, st.line)
                first = next(iter(st.args.values()), None)
                if st.op.view and isinstance(first, ir.Var) and _makes_view(st):
                    roots[st.target] = roots.get(first.name, first.name)
                    view_at[st.target] = order[id(st)]
        for stmt, base, line, array in self.mutations:
            # only views that exist when the write happens see it
            roots = {v: r for v, r in roots.items() if view_at[v] < order[id(stmt)]}
            root = roots.get(base, base)
            sharing = {v for v, r in roots.items() if r == root} | {root}
            if array:  # x[i] = v: x is an array, so a plain alias shares it too
                sharing.add(base)
            elif base not in roots and not any(r == base for r in roots.values()):
                continue  # `s += 1` on a name with no views: rebinding is what numpy does
            sharing.discard(stmt.target)
            for st in ir.walk(self.body):
                if st is stmt or id(st) in self.propagations:
                    continue
                later = order[id(st)] > order[id(stmt)] or set(loops[id(st)]) & set(
                    loops[id(stmt)])
                used = set(ir.uses(st)) & sharing
                if later and used:
                    other = sorted(used)[0]
                    raise self.pf.error(
                        f"line {line} writes into an array in place, but `{other}` "
                        f"(made at line {made.get(other, self.pf.first_line)}) shares its "
                        f"memory and is read at line {st.line}: srcad copies on write, so "
                        f"`{other}` would not see the change that numpy makes",
                        line, cls=UnsupportedSyntaxError,
                        hint=f"copy explicitly before writing (`{base} = {base}.copy()`), "
                        "or build the new array with np.where / np.concatenate")

