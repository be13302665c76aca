"""C text for kernels: one block function per kernel, its descriptor, the module around them.

The block function reads like the Python it replaces: one C statement per fused op, each
temporary named after its Python value, each commented with the user's line. Ops numpy
computes with its own SIMD code (exp, log, tanh, pow, ...) are calls of numpy's inner loop
over the block, so a chain splits into stretches of inline arithmetic between such calls;
a value that crosses a call lives in a scratch array of SRCAD_BLOCK elements.

    static void fused_multiply_add_maximum_1c2e3a(char *const *p, intptr_t n, ...)
    {
        const float *restrict in_a = (const float *)p[0];  /* a: float32 array */
        ...
        for (intptr_t i = 0; i < n; i++) {
            const float a = in_a[i];
            ...
            const float t_multiply = a * b;  /* L5: a * b */
            const float t = t_multiply + c;  /* L5: t = a * b + c */
            const float d = ((__builtin_isgreater(t, ((float)0.0)) || ...) ? t : ...);
            out_d[i] = d;
        }
    }

The module's name is not in its text (``-DSRCAD_MODULE=...`` at compile time), so the text's
hash can name the module.
"""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np

from ..build.compiler import FLAGS
from . import cexpr
from .match import C_TYPES


def _lit(value, dtype: np.dtype) -> str:
    """A Python constant as a C value of `dtype` (numpy's conversion: a Python float is
    rounded to float32 once, from its double)."""
    ct = C_TYPES[dtype]
    if dtype.kind == "b":
        return "1" if value else "0"
    if dtype.kind in "iu":
        return f"(({ct}){int(value)})"
    v = float(value)
    if math.isnan(v):
        text = '__builtin_nan("")'
    elif math.isinf(v):
        text = "__builtin_inf()" if v > 0 else "(-__builtin_inf())"
    else:
        text = repr(v) if v >= 0 and not (v == 0 and math.copysign(1, v) < 0) else f"({v!r})"
    return text if ct == "double" else f"(({ct}){text})"


def _conv(text: str, src: np.dtype, dst: np.dtype) -> str:
    """C for converting a value from numpy dtype src to dst, as numpy casts."""
    if src == dst:
        return text
    if dst.kind == "b":
        return f"({text} != 0)"
    return f"(({C_TYPES[dst]}){text})"


def _c_string(s: str) -> str:
    return json.dumps(s, ensure_ascii=True)


def _comment(s: str) -> str:
    return s.replace("*/", "* /")


class _Block:
    """The block function of one kernel."""

    def __init__(self, k):
        self.k = k
        self.nin = len(k.args)
        self.out_of = {o.stmt: i for i, o in enumerate(k.outs)}
        self.tmps: list = []  # (C name, dtype)
        self.tmp_of: dict = {}  # (value key, dtype) -> C name of its buffer
        self.locals: list = []  # one-value operands of numpy loop calls
        self.loops: list = []  # (ufunc, index, type nums)
        self.raw_args: set = set()  # arguments a numpy loop reads in their own memory
        # steps: ("seg", [stmt]) and ("call", stmt); each call preceded by a seg
        steps, seg = [], []
        for j, s in enumerate(k.stmts):
            if s.inline:
                seg.append(j)
            else:
                steps.append(("seg", seg))
                steps.append(("call", j))
                seg = []
        steps.append(("seg", seg))
        self.steps = steps
        self.step_of = {}
        for si, (kind, what) in enumerate(steps):
            for j in (what if kind == "seg" else [what]):
                self.step_of[j] = si
        self.uses = k.uses()  # stmt -> [(consumer stmt, param)]

    # where a value lives in memory after its step (None: only in a register)
    def home(self, j: int) -> str | None:
        s = self.k.stmts[j]
        if j in self.out_of:
            return f"out_{self.k.outs[self.out_of[j]].name_c}"
        later = any(self.step_of[q] > self.step_of[j] for q, _ in self.uses.get(j, []))
        if not s.inline or later:
            return self._tmp(("stmt", j), s.dtype, f"tmp_{s.cname}")
        return None

    def _tmp(self, key, dtype, name) -> str:
        if (key, dtype) not in self.tmp_of:
            self.tmp_of[(key, dtype)] = name
            self.tmps.append((name, dtype))
        return self.tmp_of[(key, dtype)]

    def value_dtype(self, ref) -> np.dtype:
        if ref.kind == "arg":
            return self.k.args[ref.index].dtype
        return self.k.stmts[ref.index].dtype

    def text(self) -> str:
        k = self.k
        for o in k.outs:
            o.name_c = k.stmts[o.stmt].cname
        body = self._emit_steps()
        # the body takes every pointer as a restrict parameter (gcc does not trust restrict
        # on pointers loaded into locals, and would not vectorise a loop over many arrays)
        params, passed = [], []
        for j, a in enumerate(k.args):
            ct = C_TYPES[a.dtype]
            if a.kind == "array":
                params.append(f"const {ct} *restrict in_{a.cname}")
                passed.append(f"(const {ct} *)p[{j}]")
            elif a.kind == "scalar":
                params.append(f"const {ct} {a.cname}")
                passed.append(f"*(const {ct} *)p[{j}]")
            else:
                params.append(f"const double {a.cname}")
                passed.append(f"*(const double *)p[{j}]")
        for i, o in enumerate(k.outs):
            ct = k.stmts[o.stmt].ctype
            params.append(f"{ct} *restrict out_{o.name_c}")
            passed.append(f"({ct} *)p[{self.nin + i}]")
        for t, (name, dtype) in enumerate(self.tmps):
            ct = C_TYPES[dtype]
            params.append(f"{ct} *restrict {name}")
            passed.append(f"({ct} *)tmp[{t}]")
        for j in sorted(self.raw_args):
            a = k.args[j]
            params += [f"const char *raw_{a.cname}", f"const intptr_t step_{a.cname}"]
            passed += [f"raw[{j}]", f"step[{j}]"]
        params += ["intptr_t n", "const srcad_loop *loops"]
        passed += ["n", "loops"]
        self.params = params  # (a row kernel's chunk function calls its parts with these)
        notes = []
        for a in k.args:
            notes.append(f" *   {_comment(a.name)}: {self.arg_note(a)}")
        for o in k.outs:
            notes.append(f" *   -> {_comment(o.name)}: {self.out_note(o)}")
        head = ["/* arguments and results:"] + notes + [" */",
                f"static inline void\n{k.name}_body({', '.join(params)})", "{"]
        if all(s.inline for s in k.stmts):
            head.append("    (void)loops;")
        head.extend(self.locals)
        wrapper = [f"static void\n{k.name}_block(char *const *p, intptr_t n, "
                   f"const srcad_loop *loops, char *const *tmp, char *const *raw, "
                   f"const intptr_t *step)", "{"]
        if not self.tmps:
            wrapper.append("    (void)tmp;")
        if not self.raw_args:
            wrapper.append("    (void)raw;")
            wrapper.append("    (void)step;")
        wrapper.append(f"    {k.name}_body({', '.join(passed)});")
        wrapper.append("}")
        return "\n".join(head + body + ["}", ""] + wrapper) + "\n"

    @staticmethod
    def arg_note(a) -> str:
        return {"array": f"{a.dtype} array, broadcast", "scalar": f"0-d {a.dtype}",
                "number": "a Python number"}[a.kind]

    def out_note(self, o) -> str:
        what = "updated in place" if o.inout >= 0 else "a new array"
        return f"{self.k.stmts[o.stmt].dtype}, {what}"

    def _emit_steps(self) -> list[str]:
        body: list[str] = []
        for si, (kind, what) in enumerate(self.steps):
            if kind == "call":
                body.extend(self.call(what))
            else:
                body.extend(self.segment(si, what))
        return body

    def operand_text(self, ref, dst: np.dtype) -> str:
        if ref.kind == "const":
            return _lit(ref.value, dst)
        if ref.kind == "arg":
            a = self.k.args[ref.index]
            return _conv(a.cname, a.dtype, dst)
        s = self.k.stmts[ref.index]
        return _conv(s.cname, s.dtype, dst)

    def segment(self, si: int, stmts: list) -> list[str]:
        k = self.k
        lines, loads, stores = [], [], []
        need_args, need_vals = [], []

        def want(ref):
            if ref.kind == "arg" and k.args[ref.index].kind == "array" and \
                    ref.index not in need_args:
                need_args.append(ref.index)
            if ref.kind == "stmt" and self.step_of[ref.index] < si and \
                    ref.index not in need_vals:
                need_vals.append(ref.index)

        for j in stmts:
            s = k.stmts[j]
            for ref in s.operands.values():
                want(ref)
            lines.append(self.statement(j))
            home = self.home(j)
            if home is not None:
                stores.append(f"        {home}[i] = {s.cname};")
        # conversions a following numpy loop call needs
        if si + 1 < len(self.steps) and self.steps[si + 1][0] == "call":
            j = self.steps[si + 1][1]
            s = k.stmts[j]
            for p, ref in s.operands.items():
                dst = s.typed.loop_in[p]
                if ref.kind in ("const",) or (ref.kind == "arg" and
                                             k.args[ref.index].kind != "array"):
                    continue
                src = self.value_dtype(ref)
                if src == dst and (ref.kind == "arg" or self.home(ref.index) is not None):
                    continue
                want(ref)
                name = (k.args[ref.index].cname if ref.kind == "arg"
                        else k.stmts[ref.index].cname)
                buf = self._tmp((ref.kind, ref.index), dst, f"tmp_{name}_as_{C_TYPES[dst]}")
                stores.append(f"        {buf}[i] = {_conv(name, src, dst)};")
        for a in need_args:
            arg = k.args[a]
            loads.append(f"        const {C_TYPES[arg.dtype]} {arg.cname} = "
                         f"in_{arg.cname}[i];")
        for v in need_vals:
            s = k.stmts[v]
            loads.append(f"        const {s.ctype} {s.cname} = {self.home(v)}[i];")
        if not (lines or stores):
            return []
        return (["    for (intptr_t i = 0; i < n; i++) {"] + loads + lines + stores +
                ["    }"])

    def statement(self, j: int) -> str:
        s = self.k.stmts[j]
        typed = s.typed
        env = {}
        ctype = None
        for p, ref in s.operands.items():
            dst = typed.loop_in[p]
            env[p] = (self.operand_text(ref, dst), "F" if dst.kind == "f" else "I")
            if ctype is None and (s.op.c_types or {}).get(p) != "bool":
                ctype = C_TYPES[dst]
        expr = cexpr.emit(typed.c, env, ctype or C_TYPES[typed.out])
        expr = _conv(expr, typed.out, s.dtype) if typed.out != s.dtype else expr
        line = f"L{s.line}: " if s.line is not None else ""
        return (f"        const {s.ctype} {s.cname} = {expr};"
                f"  /* {line}{_comment(s.text)} ({s.op.name}) */")

    def call(self, j: int) -> list[str]:
        k = self.k
        s = k.stmts[j]
        ufunc, index, nums = s.typed.loop
        q = len(self.loops)
        self.loops.append((ufunc, index, nums))
        ptrs, steps = [], []
        for p, ref in s.operands.items():
            dst = s.typed.loop_in[p]
            size = dst.itemsize
            if ref.kind == "const" or (ref.kind == "arg" and k.args[ref.index].kind != "array"):
                local = f"one_{s.cname}_{p}"
                self.locals.append(f"    const {C_TYPES[dst]} {local} = "
                                   f"{self.operand_text(ref, dst)};")
                ptrs.append(f"&{local}")
                steps.append("0")
                continue
            src = self.value_dtype(ref)
            if ref.kind == "arg" and src == dst:
                # the argument's own memory and stride, as numpy's call would see it
                a = k.args[ref.index]
                self.raw_args.add(ref.index)
                ptrs.append(f"raw_{a.cname}")
                steps.append(f"step_{a.cname}")
                continue
            if ref.kind == "arg":
                ptrs.append(self.tmp_of[(("arg", ref.index), dst)])
            else:
                home = self.home(ref.index)
                ptrs.append(home if src == dst and home is not None else
                            self.tmp_of[(("stmt", ref.index), dst)])
            steps.append(str(size))
        out = self.home(j)
        steps.append(str(s.typed.out.itemsize))
        fn = f"srcad_call_{len(ptrs)}_1"
        line = f"L{s.line}: " if s.line is not None else ""
        return [f"    /* {line}{_comment(s.target)} = {_comment(s.text)}: numpy's own "
                f"{s.typed.out} loop ({ufunc}) */",
                f"    {fn}(&loops[{q}], {', '.join(ptrs)}, {out}, n, {', '.join(steps)});"]


def block_and_descriptor(k) -> str:
    b = (k.block_class or _Block)(k)  # (a row kernel's: cgen_rows.RowBlock)
    block = b.text()
    name = k.name
    kinds = {"array": "SRCAD_ARRAY", "scalar": "SRCAD_SCALAR", "number": "SRCAD_NUMBER"}
    out = [f"/* {name}: {_comment(k.where)}, {k.n_ops} ops over {k.ndim}-d arrays (planned "
           f"for shape ({', '.join(map(str, k.shape))})), in place of:"]
    for line, text in k.replaced:
        for piece in text.splitlines():
            out.append(f" *   {_comment(piece)}" + (f"  (L{line})" if line else ""))
    out.append(" */")
    out.append(block)
    def kind_of(a):
        return "SRCAD_SCALAR_OR_NUMBER" if a.kind == "scalar" and a.number_ok else kinds[a.kind]

    ins = ", ".join(f"{{{_c_string(a.name)}, {kind_of(a)}, {a.dtype.num}}}" for a in k.args)
    out.append(f"static const srcad_arg {name}_args[] = {{{ins}}};")
    outs = ", ".join(f"{{{_c_string(o.name)}, {k.stmts[o.stmt].dtype.num}, {o.inout}, "
                     f"{o.stmt}}}" for o in k.outs)
    out.append(f"static const srcad_out {name}_outs[] = {{{outs}}};")
    start, ops = [0], []
    for s in k.stmts:
        for ref in s.operands.values():
            if ref.kind == "stmt":
                ops.append(-ref.index - 1)
            elif ref.kind == "arg" and k.args[ref.index].kind == "array":
                ops.append(ref.index)
        start.append(len(ops))
    out.append(f"static const int {name}_stmt_start[] = {{{', '.join(map(str, start))}}};")
    ops_name = "NULL"
    if ops:
        out.append(f"static const int {name}_stmt_ops[] = {{{', '.join(map(str, ops))}}};")
        ops_name = f"{name}_stmt_ops"
    tmp_name = "NULL"
    if b.tmps:
        sizes = ", ".join(str(dt.itemsize) for _, dt in b.tmps)
        out.append(f"static const int {name}_tmp_itemsize[] = {{{sizes}}};")
        tmp_name = f"{name}_tmp_itemsize"
    loops_name = "NULL"
    if b.loops:
        for q, (_, _, nums) in enumerate(b.loops):
            out.append(f"static const int {name}_loop{q}_types[] = "
                       f"{{{', '.join(map(str, nums))}}};")
        refs = ", ".join(f"{{{_c_string(u)}, {i}, {len(nums)}, {name}_loop{q}_types}}"
                         for q, (u, i, nums) in enumerate(b.loops))
        out.append(f"static const srcad_loop_ref {name}_loops[] = {{{refs}}};")
        loops_name = f"{name}_loops"
    rows = ""
    if k.rowwise:
        tables, fields = b.row_fields()
        out.extend(tables)
        rows = f",\n    {fields}"
    out.append(f"SRCAD_SHARED srcad_kernel {name}_kernel = {{\n"
               f"    SRCAD_ABI, {_c_string(name)}, {_c_string(k.where)}, {k.ndim},\n"
               f"    {len(k.args)}, {name}_args, {len(k.outs)}, {name}_outs,\n"
               f"    {len(k.stmts)}, {name}_stmt_start, {ops_name},\n"
               f"    {len(b.tmps)}, {tmp_name}, {len(b.loops)}, {loops_name},\n"
               f"    {name}_block, {sum(1 << j for j in b.raw_args)}ULL, NULL, NULL{rows}}};")
    out.append(f"SRCAD_SHARED PyObject *\n{name}(PyObject *self, PyObject *const *args, "
               f"Py_ssize_t nargs, PyObject *kwnames)\n{{\n    (void)self;\n"
               f"    if (srcad_rt == NULL) return srcad_not_ready();\n"
               f"    return srcad_rt->run(&{name}_kernel, args, nargs, kwnames);\n}}\n")
    return "\n".join(out)


def kernel_name(k) -> str:
    """``fused_<ops>_<hash>``: the first ops it fuses, and a short hash of its C."""
    ops = k.op_names()
    stem = "_".join(ops[:3]) + (f"_and_{len(ops) - 3}_more" if len(ops) > 3 else "")
    k.name = "KERNEL"
    digest = hashlib.sha256(block_and_descriptor(k).encode()).hexdigest()[:6]
    return f"fused_{stem}_{digest}"


def _build_cost(k) -> int:
    """A kernel's estimated share of its module's compile time: a fixed part (its loops,
    descriptor and entry point: measured at about as much as eight ops) and one per op."""
    return 8 + k.n_ops


def parts_of(kernels: list) -> list[int]:
    """The translation unit (0 or 1) each kernel is compiled in when srcad.build compiles a
    module as two units at once: by estimated cost, largest first, each to the lighter
    part, so that the two compiler runs take about as long. One kernel: part 0."""
    load, part = [0, 0], [0] * len(kernels)
    for i in sorted(range(len(kernels)), key=lambda i: (-_build_cost(kernels[i]), i)):
        p = 0 if load[0] <= load[1] else 1
        part[i] = p
        load[p] += _build_cost(kernels[i])
    return part


_SPLIT_NOTE = [
    "/* Two translation units: srcad.build may compile this text twice at once, with",
    " * -DSRCAD_PART=0 and -DSRCAD_PART=1, and link the two objects into the one module.",
    " * Each part compiles the kernels marked for it (split by size); part 0 also the module",
    " * table and _init, which refer to part 1's kernels as hidden externs. Without",
    " * SRCAD_PART this is one unit holding everything, all of it static. */",
    "#define SRCAD_HIDDEN __attribute__((visibility(\"hidden\")))",
    "#ifdef SRCAD_PART",
    "#define SRCAD_IN_PART(p) (SRCAD_PART == (p))",
    "#define SRCAD_SHARED SRCAD_HIDDEN  /* (seen by the other part) */",
    "#else",
    "#define SRCAD_IN_PART(p) 1",
    "#define SRCAD_SHARED static",
    "#endif", ""]


def module_c(kernels: list, origin: str) -> str:
    """The C text of one extension module holding `kernels` (guarded for a build as two
    translation units when there are two or more: see `parts_of`)."""
    names = [k.name for k in kernels]
    split = len(kernels) >= 2
    parts = parts_of(kernels)
    head = [f"/* srcad kernels for {_comment(origin)}. Generated by srcad; do not edit.",
            f" * {len(kernels)} kernel(s): {', '.join(names)}.",
            f" * Built by srcad.build: gcc {' '.join(FLAGS)}",
            " * (other compilers: -O3 for the first three; never -ffast-math: exact IEEE",
            " * arithmetic, no contraction into FMA, so results equal numpy's). */",
            '#include "srcad_kernels.h"', ""]
    if split:
        head += _SPLIT_NOTE + [
            "#if SRCAD_IN_PART(0)",
            "SRCAD_SHARED const srcad_api *srcad_rt = NULL;",
            "#else",
            "extern SRCAD_HIDDEN const srcad_api *srcad_rt;  /* (part 0's) */",
            "#endif", ""]
    else:
        head += ["#define SRCAD_SHARED static  /* (one kernel: always one translation unit) */",
                 "", "static const srcad_api *srcad_rt = NULL;", ""]
    head.append("static PyObject *\nsrcad_not_ready(void)\n{\n    PyErr_SetString("
                "PyExc_RuntimeError, \"srcad kernel module used before srcad.build "
                "initialised it\");\n    return NULL;\n}\n")
    body = []
    for k, p in zip(kernels, parts):
        if split:
            body.append(f"#if SRCAD_IN_PART({p})  /* {k.name}: part {p} */")
        body.append(block_and_descriptor(k))
        if split:
            body.append(f"#endif  /* {k.name} */\n")
    kernel_list = ", ".join(f"&{n}_kernel" for n in names)
    tail = []
    if split:
        tail += ["#if SRCAD_IN_PART(0)  /* the module itself: part 0 */", "#ifdef SRCAD_PART",
                 "/* the kernels part 1 compiles */"]
        for n, p in zip(names, parts):
            if p == 1:
                tail += [f"extern SRCAD_HIDDEN srcad_kernel {n}_kernel;",
                         (f"SRCAD_HIDDEN PyObject *{n}(PyObject *, PyObject *const *, "
                          "Py_ssize_t, PyObject *);")]
        tail += ["#endif", ""]
    tail += [
        f"static srcad_kernel *const srcad_kernels[] = {{{kernel_list}}};", "",
        "/* _init(api capsule, fallbacks): bind the kernels to the runtime and to their Python "
        "fallbacks */",
        "static PyObject *\nsrcad_init(PyObject *self, PyObject *const *args, Py_ssize_t nargs)",
        "{",
        "    (void)self;",
        "    if (nargs != 2 || !PyTuple_Check(args[1]) ||",
        f"        PyTuple_GET_SIZE(args[1]) != {len(kernels)}) {{",
        "        PyErr_SetString(PyExc_TypeError, \"_init(api, fallbacks)\");",
        "        return NULL;",
        "    }",
        "    const srcad_api *api = (const srcad_api *)PyCapsule_GetPointer(args[0], "
        "\"srcad._kernels.api\");",
        "    if (api == NULL) return NULL;",
        "    if (api->abi != SRCAD_ABI) {",
        "        PyErr_SetString(PyExc_ImportError, \"srcad kernel module and runtime ABI "
        "differ\");",
        "        return NULL;",
        "    }",
        f"    for (int i = 0; i < {len(kernels)}; i++) {{",
        "        if (api->prepare(srcad_kernels[i], PyTuple_GET_ITEM(args[1], i)) < 0) "
        "return NULL;",
        "    }",
        "    srcad_rt = api;",
        "    Py_RETURN_NONE;",
        "}", "",
        "static PyMethodDef srcad_methods[] = {",
    ]
    for n in names:
        tail.append(f"    {{{_c_string(n)}, (PyCFunction)(void (*)(void)){n}, "
                    f"METH_FASTCALL | METH_KEYWORDS, NULL}},")
    tail += [
        "    {\"_init\", (PyCFunction)(void (*)(void))srcad_init, METH_FASTCALL, NULL},",
        "    {NULL, NULL, 0, NULL},",
        "};", "",
        "static struct PyModuleDef srcad_module = {",
        f"    PyModuleDef_HEAD_INIT, SRCAD_STR(SRCAD_MODULE), {_c_string('srcad kernels for ' + origin)},",
        "    -1, srcad_methods, NULL, NULL, NULL, NULL,",
        "};", "",
        "PyMODINIT_FUNC\nSRCAD_CAT(PyInit_, SRCAD_MODULE)(void)\n{\n"
        "    return PyModule_Create(&srcad_module);\n}",
    ]
    if split:
        tail.append("#endif  /* the module */")
    return "\n".join(head + body + tail) + "\n"
