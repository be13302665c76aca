"""C text for row kernels: a chain with last-axis reductions, computed one row at a time.

Input: a `kir.Kernel` with ``rowwise`` set (fuse.py joined values of a full shape S and
of its row shape, S with last axis 1, through a row op: ``np.sum(e, axis=-1,
keepdims=True)``, ``np.mean``, ``np.max``, ``np.min``, ``np.broadcast_to(r, S)``). Output:
its block function, which the runtime (kernels_c/srcad_driver.c, `run_rows`) calls once per
row with `n` the row's length: full values are loops over the row, row values C scalars, a
sum or mean one call of the header's pairwise sum (numpy's own order, bit for bit), a max
or min numpy's own loop in reduce mode over the row (as np.max calls it):

    static inline void fused_mean_subtract_multiply_..._body(const float *restrict in_x,
        ..., intptr_t n, const srcad_loop *loops)
    {
        const float mu = srcad_row_mean_float(in_x, n);  /* L23: mu = np.mean(x, ...) */
        for (intptr_t i = 0; i < n; i++) {
            const float x = in_x[i];
            const float xc = x - mu;  /* L24: xc = x - mu (subtract) */
            tmp_xc[i] = xc;
            ...
        }
        const float var = srcad_row_mean_float(tmp_var_multiply, n);
        const float layer_norm_add = var + ((float)1e-05);  /* L26 ... */
        ...
    }

A value that a later step reads (a reduction, a numpy loop call, another loop) lives in a
scratch row of `n` elements (the runtime sizes them) or in its output row.
"""

from __future__ import annotations

import re

from .cgen import _Block, _comment, _conv
from .match import C_TYPES


class RowBlock(_Block):
    """The block function of one row kernel: `text()` as `_Block`'s, other steps."""

    def __init__(self, k):
        self.k = k
        self.nin = len(k.args)
        self.out_of = {o.stmt: i for i, o in enumerate(k.outs)}
        self.tmps, self.tmp_of, self.locals, self.loops = [], {}, [], []
        self.raw_args: set = set()
        self.dense_args: set = set()  # arguments read by numpy's own loops
        # steps: ("seg", [full inline stmts]) loops over the row; ("row", [row stmts])
        # scalar statements; ("reduce", j); ("call", j) numpy's loop over the row or over
        # one row value
        steps: list = []
        for j, s in enumerate(k.stmts):
            kind = ("reduce" if s.reduce else "call" if not s.inline else
                    "row" if s.row else "seg")
            if kind in ("seg", "row") and steps and steps[-1][0] == kind:
                steps[-1][1].append(j)
            else:
                steps.append((kind, [j]))
        self.steps = steps
        self.step_of = {j: si for si, (_, js) in enumerate(steps) for j in js}
        self.uses = k.uses()

    def home(self, j: int) -> str | None:
        s = self.k.stmts[j]
        if j in self.out_of:
            return f"out_{self.k.outs[self.out_of[j]].name_c}"
        if s.row:
            return None  # (a C scalar for the rest of the row)
        later = any(self.step_of[q] > self.step_of[j] for q, _ in self.uses.get(j, []))
        if not s.inline or later:
            return self._tmp(("stmt", j), s.dtype, f"tmp_{s.cname}")
        return None

    def _is_row(self, ref) -> bool:
        if ref.kind == "arg":
            return self.k.args[ref.index].row or self.k.args[ref.index].kind != "array"
        return ref.kind == "stmt" and self.k.stmts[ref.index].row

    def text(self) -> str:
        for a in self.k.args:
            if a.kind == "array" and a.row:
                self.locals.append(f"    const {C_TYPES[a.dtype]} {a.cname} = in_{a.cname}[0];"
                                   f"  /* one value per row */")
        return super().text() + "\n" + self.rows_text()

    # -- the chunk function: `nr` consecutive rows per call ---------------------------------
    # The runtime hands a row kernel a chunk of up to SRCAD_ROWS rows at once when every
    # operand's rows lie at a fixed distance from each other (`rs`, bytes; 0 for one value
    # for all rows). The block's steps run row by row in "parts" as in `_body`; a numpy loop
    # over full rows with no per-row operand (np.exp of a row) runs once over the chunk's
    # rows where they are adjacent in memory: one call instead of nr (numpy's elementwise
    # loops give every element the same bits whatever the call's length, as the unfused
    # whole-array call shows), and one floating-point-flag raise (an underflowing exp
    # raises it through glibc's slow x87 path at every call).

    def _batched(self, si: int) -> bool:
        kind, js = self.steps[si]
        if kind != "call":
            return False
        s = self.k.stmts[js[0]]
        return not s.row and not any(ref.kind != "const" and self._is_row(ref)
                                     for ref in s.operands.values())

    def _row_pointers(self, names: set, r: str) -> list:
        """Declarations of the named row pointers (in_, out_, tmp_) at row `r` of the chunk,
        shadowing `_body`'s parameters of the same names."""
        k, decl = self.k, []

        def at(i):
            return f"p[{i}]" if r == "0" else f"(p[{i}] + {r} * rs[{i}])"

        for j, a in enumerate(k.args):
            if a.kind == "array" and f"in_{a.cname}" in names:
                ct = C_TYPES[a.dtype]
                decl.append(f"const {ct} *restrict in_{a.cname} = "
                            f"(const {ct} *){at(j)};")
        for i, o in enumerate(k.outs):
            if f"out_{o.name_c}" in names:
                ct = k.stmts[o.stmt].ctype
                decl.append(f"{ct} *restrict out_{o.name_c} = "
                            f"({ct} *){at(self.nin + i)};")
        for t, (name, dtype) in enumerate(self.tmps):
            if name in names:
                ct = C_TYPES[dtype]
                decl.append(f"{ct} *restrict {name} = ({ct} *)tmp[{t}]"
                            + ("" if r == "0" else f" + {r} * n") + ";")
        return decl

    def _contiguous(self, names: set) -> str:
        """C condition: the named arguments' and outputs' rows are adjacent in the chunk."""
        k, conds = self.k, []
        for j, a in enumerate(k.args):
            if a.kind == "array" and f"in_{a.cname}" in names:
                conds.append(f"rs[{j}] == n * (intptr_t)sizeof({C_TYPES[a.dtype]})")
        for i, o in enumerate(k.outs):
            if f"out_{o.name_c}" in names:
                conds.append(f"rs[{self.nin + i}] == n * (intptr_t)sizeof("
                             f"{k.stmts[o.stmt].ctype})")
        return " && ".join(conds) or "1"

    def rows_text(self) -> str:
        k, name = self.k, self.k.name
        assert not self.raw_args  # (a row kernel reads its arguments' rows in place)
        parts: list = []  # ("part", [step]) or ("call", step)
        for si in range(len(self.steps)):
            if self._batched(si):
                parts.append(("call", si))
            elif parts and parts[-1][0] == "part":
                parts[-1][1].append(si)
            else:
                parts.append(("part", [si]))
        part_of = {si: pi for pi, (kind, what) in enumerate(parts)
                   for si in (what if kind == "part" else [what])}
        # row values one part computes and a later part reads
        gives: dict = {}
        takes: dict = {}
        for j, s in enumerate(k.stmts):
            if not s.row:
                continue
            pj = part_of[self.step_of[j]]
            for q, _ in self.uses.get(j, []):
                pq = part_of[self.step_of[q]]
                if pq > pj:
                    for d, pk in ((gives, pj), (takes, pq)):
                        if j not in d.setdefault(pk, []):
                            d[pk].append(j)
        crossing = sorted({j for js in gives.values() for j in js})
        out, calls = [], []
        one_part = len(parts) == 1
        for pi, (kind, what) in enumerate(parts):
            if kind == "call":
                lines = self.step_lines[what]
                names = set(re.findall(r"\b(?:in|out|tmp)_\w+", "\n".join(lines)))
                calls.append(
                    [f"    if ({self._contiguous(names)}) {{  /* adjacent rows: one call */",
                     "        const intptr_t n_all = n * nr;"]
                    + [f"        {d}" for d in self._row_pointers(names, "0")]
                    + ["        {", "            const intptr_t n = n_all;"]
                    + [f"        {ln}" for ln in lines]
                    + ["        }", "    }", "    else {",
                       "        for (intptr_t r = 0; r < nr; r++) {"]
                    + [f"            {d}" for d in self._row_pointers(names, "r")]
                    + [f"        {ln}" for ln in lines]
                    + ["        }", "    }"])
                continue
            fn = f"{name}_body" if one_part else f"{name}_part{pi}"
            extra, pass_extra = [], []
            for j in sorted(set(gives.get(pi, [])) | set(takes.get(pi, []))):
                s = k.stmts[j]
                extra.append(f"{s.ctype} *restrict rowx_{s.cname}")
                pass_extra.append(f"rowv_{s.cname} + r")
            if not one_part:
                head = [f"static inline void\n{fn}("
                        + ", ".join(self.params[:-2] + extra + self.params[-2:]) + ")", "{",
                        "    (void)n;", "    (void)loops;"]
                head += self.locals + [f"    (void){a.cname};" for a in k.args
                                       if a.kind == "array" and a.row]
                for j in takes.get(pi, []):
                    s = k.stmts[j]
                    head.append(f"    const {s.ctype} {s.cname} = rowx_{s.cname}[0];")
                body = [ln for si in what for ln in self.step_lines[si]]
                tail = [f"    rowx_{k.stmts[j].cname}[0] = {k.stmts[j].cname};"
                        for j in gives.get(pi, [])]
                out.append("\n".join(head + body + tail + ["}", ""]))
            passed = []
            for j, a in enumerate(k.args):
                ct = C_TYPES[a.dtype]
                passed.append({"array": f"(const {ct} *)(p[{j}] + r * rs[{j}])",
                               "scalar": f"*(const {ct} *)p[{j}]"}.get(
                                   a.kind, f"*(const double *)p[{j}]"))
            for i, o in enumerate(k.outs):
                ct = k.stmts[o.stmt].ctype
                passed.append(f"({ct} *)(p[{self.nin + i}] + r * rs[{self.nin + i}])")
            for t, (_, dtype) in enumerate(self.tmps):
                passed.append(f"({C_TYPES[dtype]} *)tmp[{t}] + r * n")
            calls.append(["    for (intptr_t r = 0; r < nr; r++) {",
                          f"        {fn}({', '.join(passed + pass_extra + ['n', 'loops'])});",
                          "    }"])
        decl = [f"    {k.stmts[j].ctype} rowv_{k.stmts[j].cname}[SRCAD_ROWS];"
                for j in crossing]
        fn = [f"/* {name}_rows: nr consecutive rows (nr <= SRCAD_ROWS):",
              " * p[i] points at the first one's row of argument or output i, rs[i] is the",
              " * distance between its rows in bytes, tmp holds nr rows of each scratch value */",
              (f"static void\n{name}_rows(char *const *p, const intptr_t *rs, intptr_t nr, "
               f"intptr_t n, const srcad_loop *loops, char *const *tmp)"), "{"]
        if not self.tmps:
            fn.append("    (void)tmp;")
        fn += decl + [ln for c in calls for ln in c] + ["}", ""]
        return "\n".join(out + fn)

    @staticmethod
    def arg_note(a) -> str:
        if a.kind == "array" and a.row:
            return f"{a.dtype} array, one value per row (last axis 1)"
        return _Block.arg_note(a) + (", each row whole" if a.kind == "array" else "")

    def out_note(self, o) -> str:
        row = ", one value per row" if self.k.stmts[o.stmt].row else ""
        return super().out_note(o) + row

    def _emit_steps(self) -> list:
        body, self.step_lines = [], []
        for si, (kind, js) in enumerate(self.steps):
            if kind == "seg":
                lines = self.row_segment(si, js)
            elif kind == "row":
                lines = []
                for j in js:
                    lines.append(self.statement(j)[4:])
                    lines.extend(self._store_row(j))
            elif kind == "reduce":
                lines = self.reduce(js[0])
            else:
                lines = self.row_call(js[0])
            self.step_lines.append(lines)
            body.extend(lines)
        return body

    def _store_row(self, j: int) -> list:
        home = self.home(j)
        return [f"    {home}[0] = {self.k.stmts[j].cname};"] if home is not None else []

    def _pointer(self, ref) -> str:
        """A full value's row in memory: an argument's own, or its home."""
        if ref.kind == "arg":
            return f"in_{self.k.args[ref.index].cname}"
        return self.home(ref.index)

    def reduce(self, j: int) -> list:
        s = self.k.stmts[j]
        (_, ref), = s.operands.items()
        line = f"L{s.line}: " if s.line is not None else ""
        row = self._pointer(ref)
        fn = f"srcad_row_{s.reduce}_{C_TYPES[s.dtype]}"
        if s.reduce in ("max", "min"):
            # a scan where the extremum's bits cannot depend on the order, else numpy's own
            # loop as np.max calls it (a NaN, or a tie that may mix -0.0 and +0.0)
            ufunc, index, nums = s.typed.loop
            q = len(self.loops)
            self.loops.append((ufunc, index, nums))
            return [f"    const {s.ctype} {s.cname} = {fn}(&loops[{q}], {row}, n);"
                    f"  /* {line}{_comment(s.text)} ({s.op.name}: as np.{s.reduce}, numpy's "
                    f"{ufunc} loop where a NaN or a zero decides) */"] + self._store_row(j)
        return [f"    const {s.ctype} {s.cname} = {fn}({row}, n);"
                f"  /* {line}{_comment(s.text)} ({s.op.name}, numpy's pairwise sum) */"
                ] + self._store_row(j)

    def row_segment(self, si: int, stmts: list) -> list:
        k = self.k
        lines, loads, stores, need_args, need_vals = [], [], [], [], []
        for j in stmts:
            s = k.stmts[j]
            for ref in s.operands.values():
                if ref.kind == "arg" and k.args[ref.index].kind == "array" and \
                        not k.args[ref.index].row and ref.index not in need_args:
                    need_args.append(ref.index)
                if ref.kind == "stmt" and not k.stmts[ref.index].row and \
                        self.step_of[ref.index] < si and ref.index not in need_vals:
                    need_vals.append(ref.index)
            lines.append(self.statement(j))
            home = self.home(j)
            if home is not None:
                stores.append(f"        {home}[i] = {s.cname};")
        for a in need_args:
            arg = k.args[a]
            loads.append(f"        const {C_TYPES[arg.dtype]} {arg.cname} = in_{arg.cname}[i];")
        for v in need_vals:
            s = k.stmts[v]
            loads.append(f"        const {s.ctype} {s.cname} = {self.home(v)}[i];")
        return ["    for (intptr_t i = 0; i < n; i++) {"] + loads + lines + stores + ["    }"]

    def row_call(self, j: int) -> list:
        """numpy's inner loop over the row (a full value) or over one value (a row value);
        one-value operands as locals with stride 0, a converted operand first copied."""
        k = self.k
        s = k.stmts[j]
        ufunc, index, nums = s.typed.loop
        q = len(self.loops)
        self.loops.append((ufunc, index, nums))
        pre, ptrs, steps = [], [], []
        for p, ref in s.operands.items():
            dst = s.typed.loop_in[p]
            if ref.kind == "const" or self._is_row(ref):
                local = f"one_{s.cname}_{p}"
                pre.append(f"        const {C_TYPES[dst]} {local} = {self.operand_text(ref, dst)};")
                ptrs.append(f"&{local}")
                steps.append("0")
                continue
            src = self.value_dtype(ref)
            ptr = self._pointer(ref)
            if ref.kind == "arg":
                self.dense_args.add(ref.index)
            if src != dst:
                name = (k.args[ref.index].cname if ref.kind == "arg" else
                        k.stmts[ref.index].cname)
                buf = self._tmp((ref.kind, ref.index), dst, f"tmp_{name}_as_{C_TYPES[dst]}")
                pre.append(f"        for (intptr_t i = 0; i < n; i++) "
                           f"{buf}[i] = {_conv(f'{ptr}[i]', src, dst)};")
                ptr = buf
            ptrs.append(ptr)
            steps.append(str(dst.itemsize))
        line = f"L{s.line}: " if s.line is not None else ""
        head = (f"    /* {line}{_comment(s.target)} = {_comment(s.text)}: numpy's own "
                f"{s.typed.out} loop ({ufunc}) */")
        fn = f"srcad_call_{len(ptrs)}_1"
        if s.row:  # (one value: contiguous steps, as numpy's call over the row values has)
            steps = [str(s.typed.loop_in[p].itemsize) for p in s.operands]
            call = (f"        {fn}(&loops[{q}], {', '.join(ptrs)}, &{s.cname}, 1, "
                    f"{', '.join(steps)}, {s.typed.out.itemsize});")
            return ([head, f"    {s.ctype} {s.cname};", "    {"] + pre + [call, "    }"] +
                    self._store_row(j))
        out = self.home(j)
        call = (f"        {fn}(&loops[{q}], {', '.join(ptrs)}, {out}, n, {', '.join(steps)}, "
                f"{s.typed.out.itemsize});")
        return [head, "    {"] + pre + [call, "    }"]

    def row_fields(self) -> tuple[list, str]:
        """The descriptor's row-kernel fields (designated initialisers) and the tables they
        point to: the planned full shape, each argument's planned shape (-1: an axis it does
        not have), which arguments and outputs hold one value per row, which arguments
        must be rows of adjacent elements (a reduction or numpy's own loop reads them: numpy
        sums, and its SIMD loops round, a strided row otherwise)."""
        k = self.k
        name = k.name
        nd = len(k.shape)
        dims = []
        for a in k.args:
            shape = tuple(a.vt.shape) if a.kind == "array" else ()
            dims.extend([-1] * (nd - len(shape)) + list(shape))
        tables = [f"static const intptr_t {name}_shape[] = {{{', '.join(map(str, k.shape))}}};",
                  f"static const intptr_t {name}_in_shape[] = {{{', '.join(map(str, dims))}}};"]
        row_in = sum(1 << j for j, a in enumerate(k.args) if a.kind == "array" and a.row)
        row_out = sum(1 << i for i, o in enumerate(k.outs) if k.stmts[o.stmt].row)
        dense = set(self.dense_args) | {r.index for s in k.stmts if s.reduce
                                        for r in s.operands.values() if r.kind == "arg"}
        fields = (f".rowwise = 1, .shape = {name}_shape, .in_shape = {name}_in_shape, "
                  f".row_in = {row_in}ULL, .row_out = {row_out}ULL, "
                  f".dense_in = {sum(1 << j for j in dense)}ULL, .block_rows = {name}_rows")
        return tables, fields

