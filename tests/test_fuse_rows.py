"""Fused kernels against numpy, bit for bit, on every fusable row of the op table.

For each row with a C expression (`c=`), a two-statement chain ``t = <the row's spelling>;
u = t != t`` is lowered -- all rows' chains into one kernel module, so the suite compiles
once -- for each dtype the row's C is written for (float32, float64, mixed float32/float64,
ints and bools where its ``c_kinds`` say so), with array, 0-d and Python-number operands.
Each kernel then runs on inputs seeded with NaN, +-0, +-inf, subnormals, ties and random
values, in every layout numpy hands out: contiguous, transposed, reversed, sliced, and
broadcast (a stride-0 row, a stride-0 column, a 0-d array). The kernel's result must have
numpy's dtype, numpy's bits (NaN payloads included) and numpy's strides (its memory order
decides the order of a later sum), and no call may go to the Python fallback.
"""

from __future__ import annotations

import ast
import itertools

import numpy as np
import pytest

from srcad import build
from srcad.lower import match
from srcad.lower.standalone import fuse_functions
from srcad.ops import table

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
I32, I64, B = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.bool_)
SHAPE = (6, 8)


def _rows():
    return [op for op in table.all_ops() if op.c_expr]


def _spelled(op, names: dict) -> str:
    """The row's spelling with its parameters replaced by argument names or literals."""
    tree = ast.parse(op.spelling_src, mode="eval").body

    class Sub(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in names:
                return ast.parse(names[node.id], mode="eval").body
            return node

    return ast.unparse(Sub().visit(tree))


def _cases():
    """(case name, row, source, example args, arg kinds): the chains to lower."""
    out = []
    for op in _rows():
        operands = match.operand_params(op)
        kinds = op.c_kinds
        combos = []
        if "f" in kinds or not kinds:  # (a row that is not fused: numpy runs it)
            combos = [(F32,) * len(operands), (F64,) * len(operands)]
            if len(operands) >= 2:
                combos.append((F32, F64) + (F32,) * (len(operands) - 2))
        if "i" in kinds:
            combos.append((I32,) * len(operands))
            if "f" in kinds:
                combos.append((I64, F32) + (I64,) * (len(operands) - 2) if len(operands) >= 2
                              else (I64,))
        if "b" in kinds and op.name not in ("where",):
            combos.append((B,) * len(operands))
        for ci, combo in enumerate(combos):
            names, args = {}, []
            for p, dt in zip(operands, combo):
                if (op.c_types or {}).get(p) == "bool":
                    dt = B
                names[p] = f"a{len(args)}"
                args.append(("array", dt))
            statics = _statics(op)
            for si, static in enumerate(statics):
                src_names = {**names, **static}
                out.append((f"{op.name}_{ci}_{si}", op, _spelled(op, src_names), args))
        # a Python number and a 0-d array as the last operand
        if len(operands) >= 2 and op.name not in ("where",) and ("f" in kinds or not kinds):
            for form in ("number", "scalar"):
                names, args = {}, []
                for i, p in enumerate(operands):
                    if i == len(operands) - 1:
                        if form == "number":
                            names[p] = "0.5" if op.name != "power" else "1.5"
                            continue
                        args.append(("scalar", F32))
                    else:
                        args.append(("array", F32))
                    names[p] = f"a{len(args) - 1}"
                out.append((f"{op.name}_{form}", op, _spelled(op, names), args))
        if op.name == "power":  # numpy's own special exponents of `x ** c`
            for c in ("2", "0.5", "-1", "1", "3", "2.0", "-1.0", "-0.5"):
                for dt in (F32, F64):
                    out.append((f"power_const_{c.replace('.', '_').replace('-', 'm')}_"
                                f"{dt.char}", op, f"a0 ** {c}", [("array", dt)]))
    return out


def _statics(op):
    statics = [p for p in op.param_names if p not in match.operand_params(op)]
    if not statics:
        return [{}]
    assert statics == ["dtype"], (op.name, statics)  # astype: the only static parameter
    return [{"dtype": d} for d in ("np.float64", "np.float32", "bool", "np.int32")]


CASES = _cases()


def _source(name, expr, nargs):
    params = ", ".join(f"a{i}" for i in range(nargs))
    return (f"def {name}({params}):\n    t = {expr}\n    u = t != t\n    return (t, u)\n")


def _example(kind, dt):
    if kind == "scalar":
        return np.ones((), dt)
    return np.ones(SHAPE, dt)


@pytest.fixture(scope="module")
def fused():
    sources = [_source(name, expr, len(args)) for name, _, expr, args in CASES]
    examples = [tuple(_example(k, dt) for k, dt in args) for _, _, _, args in CASES]
    fns, lowered, text = fuse_functions(sources, examples, filename="test_fuse_rows.py")
    assert lowered is not None, "nothing was fused"
    return dict(zip([c[0] for c in CASES], fns)), lowered, text


def _values(dt, n, rng, position, nargs):
    if dt == B:
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind == "i":
        v = rng.integers(-5, 6, n)
        v[:3] = [np.iinfo(dt).min, np.iinfo(dt).max, 0]
        return v.astype(dt)
    fi = np.finfo(dt)
    special = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.0, 0.5, -3.5,
                        fi.tiny / 4, -fi.tiny / 4, fi.max, -fi.max, 1e-3, 100.0], dtype=dt)
    if nargs >= 2:  # every pair of special values across the first two operands
        grid = np.array(list(itertools.product(range(len(special)), repeat=2)))
        base = special[grid[:, min(position, 1)]]
    else:
        base = special
    rand = (rng.standard_normal(n) * 3).astype(dt)
    v = np.concatenate([base, rand])[:n] if len(base) < n else base[:n]
    if len(v) < n:
        v = np.concatenate([v, rand[:n - len(v)]])
    return v


def _layouts(arrays, kinds, rng):
    """The same values in the layouts numpy hands out, as (name, arrays)."""
    n = SHAPE[0] * SHAPE[1]
    flat = [a.reshape(-1)[:n] if k == "array" else a for a, k in zip(arrays, kinds)]
    yield "contiguous", [f.reshape(SHAPE) if k == "array" else f for f, k in zip(flat, kinds)]
    yield "transposed", [np.ascontiguousarray(f.reshape(SHAPE).T).T if k == "array" else f
                         for f, k in zip(flat, kinds)]
    yield "reversed", [np.ascontiguousarray(f.reshape(SHAPE)[::-1, ::-1])[::-1, ::-1]
                       if k == "array" else f for f, k in zip(flat, kinds)]

    def sliced(f):
        big = np.zeros((SHAPE[0] * 2, SHAPE[1] * 3), f.dtype)
        big[::2, ::3] = f.reshape(SHAPE)
        return big[::2, ::3]

    yield "sliced", [sliced(f) if k == "array" else f for f, k in zip(flat, kinds)]
    if sum(k == "array" for k in kinds) >= 2:
        first = kinds.index("array")
        for bname, shape in (("row", (1, SHAPE[1])), ("column", (SHAPE[0], 1)),
                             ("1-d", (SHAPE[1],)), ("0-d", ())):
            arrs = [f.reshape(SHAPE) if k == "array" else f for f, k in zip(flat, kinds)]
            last = max(i for i, k in enumerate(kinds) if k == "array")
            if last != first:
                size = int(np.prod(shape))
                arrs[last] = flat[last][:size].reshape(shape) if shape else flat[last][0][()]
                if not shape:
                    arrs[last] = np.asarray(arrs[last])
                yield f"broadcast {bname}", arrs


def _same_bits(got, want) -> bool:
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind == "f":
        u = np.uint32 if want.dtype.itemsize == 4 else np.uint64
        return np.array_equal(got.view(u), want.view(u))
    return np.array_equal(got, want)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_row_fused_equals_numpy(fused, case):
    name, op, expr, args = case
    fns, lowered, text = fused
    fn = fns[name]
    assert f"def {name}" in text
    body = text.split(f"def {name}(", 1)[1].split("\ndef ", 1)[0]
    kinds = [k for k, _ in args]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    n = SHAPE[0] * SHAPE[1]
    raw = [_values(dt, n, rng, i, len(args)) if k == "array" else
           np.asarray(_values(dt, 1, rng, i, 1)[0]) for i, (k, dt) in enumerate(args)]
    ns = {"np": np}
    exec(_source("ref", expr, len(args)), ns)
    before = build.stats()["fallbacks"]
    for layout, arrays in _layouts(raw, kinds, rng):
        with np.errstate(all="ignore"):
            want = ns["ref"](*arrays)
            got = fn(*arrays)
        for g, w, what in zip(got, want, ("t", "u")):
            assert _same_bits(g, w), (f"{name} ({layout}): `{expr}` {what}\nfused {g!r}\n"
                                      f"numpy {w!r}\n{body}")
            if w.ndim and w.size > 1:
                assert np.asarray(g).strides == w.strides, (name, layout, what)
    assert build.stats()["fallbacks"] == before, build.stats()["last_fallback"]
    assert ("fused kernel" in body) == _expect_fused(op, expr, args), body


def _expect_fused(op, expr, args) -> bool:
    """Every case fuses except: a float-to-integer astype (C's conversion is undefined for
    NaN and overflow); a row whose C is not exact and that has no numpy loop to call
    (np.sinc is not a ufunc); `x ** s` with a 0-d exponent (numpy picks another ufunc for
    some values of s, known only at run time); rows marked not fusable (c_kinds="")."""
    from srcad.lower import cexpr

    if not op.c_kinds:
        return False
    if op.name == "astype" and "int32" in expr and args[0][1].kind == "f":
        return False
    if not cexpr.exact(cexpr.parse(op.c_expr)) and not isinstance(op.fn, np.ufunc):
        return False
    if op.name == "power" and len(args) > 1 and args[-1][0] == "scalar":
        return False
    return True
