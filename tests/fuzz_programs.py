"""A generator of random, valid numpy programs for srcad's differential fuzz test.

``generate(chooser, index)`` builds one program -- a main function ``p<index>`` and the
helper functions it calls -- from the op table's everyday rows: elementwise arithmetic
(+ - * / **), tanh exp log sqrt sin cos abs maximum minimum where clip, sum/mean/max/min
with axis and keepdims, ``@`` / ``np.dot``, transpose / ``.T``, reshape, basic and integer
array indexing, concatenate / stack; with ``if``/``elif``/``else`` on data, ``for`` over
``range``, ``while`` (counter and data-dependent), ``break`` / ``continue``, augmented
assignment, tuple unpacking and calls to other user functions; and the Python around numpy
(tests/fuzz_python.py): calls with no rule on inactive values, random draws made inside,
print / assert, comprehensions and generator expressions, closures, lambdas, dict literals,
lists built by append.

Every random decision goes through a *chooser* with one method, ``int(lo, hi)`` (inclusive),
so the same generator runs from a seeded ``random.Random`` (``RandomChooser``: fast,
deterministic, for batches of thousands) or from hypothesis (``DrawChooser``: each choice is
a draw, so a failing program shrinks; option 0 of every choice is the simplest one).

Validity by construction:
- shapes are tracked concretely (every program is generated for one set of argument shapes),
  operands are only combined where numpy broadcasting allows, arrays stay at most 2-D and
  at most ``MAX_SIZE`` elements;
- every value carries a bound on its magnitude; ``exp`` and products get a ``tanh``-squashed
  operand when the bound would grow too far, and a loop's carried value is updated through
  a bounded function, so nothing overflows and finite differences stay accurate;
- domains are safe: ``log`` and ``sqrt`` see ``x * x + 1.0``, ``1.5 + np.sin(x)`` or
  ``np.exp(x) + 1.0``; a divisor is ``x * x + 1.0``, ``2.0 + np.tanh(x)`` or ``1.5 + np.cos(x)``;
  a power's base is ``x * x + 1.0``;
- float32 programs use only Python-float constants (NEP 50 keeps them float32);
- no plain copy ``y = a`` is ever generated (a copy rebound in a loop was a not-bitwise
  pattern; srcad/frontend/aliases.py `split_reads` and tests/test_tape.py's
  copy-on-some-paths tests cover it now);
- augmented assignment (a real in-place write in numpy) only targets a value that the
  program itself allocated, that is no view and of which no view was taken.
"""

from __future__ import annotations

import atexit
import importlib.util
import itertools
import math
import os
import random
import shutil
import sys
import tempfile
from dataclasses import dataclass, field, replace

import numpy as np

MAX_SIZE = 36  # elements in any intermediate array
BIG = 50.0  # magnitude above which operands are squashed before growing further


# ----------------------------------------------------------------------------------------
# Choosers
# ----------------------------------------------------------------------------------------


class Chooser:
    def int(self, lo: int, hi: int) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def pick(self, seq):
        return seq[self.int(0, len(seq) - 1)]

    def flag(self, p: float) -> bool:
        """True with probability p; shrinks towards False."""
        return self.int(0, 999) >= round(1000 * (1 - p))

    def weighted(self, options):
        """options: [(weight, value), ...]; shrinks towards the first."""
        total = sum(w for w, _ in options)
        r = self.int(0, total - 1)
        for w, v in options:
            if r < w:
                return v
            r -= w
        return options[-1][1]  # pragma: no cover


class RandomChooser(Chooser):
    def __init__(self, seed):
        self.r = random.Random(seed)

    def int(self, lo, hi):
        return self.r.randint(lo, hi)


class DrawChooser(Chooser):
    def __init__(self, data):
        from hypothesis import strategies as st

        self.data = data
        self.st = st

    def int(self, lo, hi):
        return self.data.draw(self.st.integers(lo, hi))


# ----------------------------------------------------------------------------------------
# Expressions and programs
# ----------------------------------------------------------------------------------------


@dataclass
class E:
    """An expression (or a variable: then text is its name) with what the generator knows."""

    text: str
    shape: tuple
    bound: float
    pyf: bool = False  # a Python float (not an array, no methods)
    atom: bool = True  # safe to use as an operand without parentheses
    fresh: bool = True  # an array this program allocated: no view, no views taken of it

    @property
    def op(self) -> str:
        return self.text if self.atom else f"({self.text})"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass
class Program:
    name: str
    source: str  # the main function and its helpers, helpers first
    params: list  # [(name, shape, kind)], kind: "array" | "pyfloat" | "npscalar" | "int"
    dtype: type
    wrt: object  # int, str or tuple, as passed to srcad
    features: set = field(default_factory=set)
    int_values: dict = field(default_factory=dict)

    def make_args(self, seed: int):
        rng = np.random.default_rng(seed)
        args = []
        for name, shape, kind in self.params:
            if kind == "int":
                args.append(self.int_values[name])
                continue
            # values in +-[0.2, 1.3]: away from 0 so that kinks (abs, relu) and ties are rare
            v = rng.uniform(0.2, 1.3, size=shape) * rng.choice([-1.0, 1.0], size=shape)
            if kind == "pyfloat":
                args.append(float(v))
            elif kind == "npscalar":
                args.append(self.dtype(v))
            else:
                args.append(np.asarray(v, dtype=self.dtype))
        return tuple(args)

    def float_positions(self):
        return tuple(i for i, (_, _, k) in enumerate(self.params) if k != "int")


def _broadcast(a: tuple, b: tuple):
    try:
        s = np.broadcast_shapes(a, b)
    except ValueError:
        return None
    if len(s) > 2 or math.prod(s) > MAX_SIZE:
        return None
    return s


def _fmt_const(c: float) -> str:
    return repr(float(c))


CONSTS = (0.5, 2.0, 1.5, 0.25, 3.0, 0.75, -0.5, -1.25)


class Gen:
    """Generates the body of one function into ``self.lines``."""

    def __init__(self, ch: Chooser, module: ModuleGen, name: str, env: dict, depth: int):
        self.ch = ch
        self.module = module
        self.name = name
        self.env = dict(env)  # name -> E (text == name)
        self.params = list(env)
        self.lines: list[str] = []
        self.indent = 1
        self.depth = depth  # helper nesting depth
        self.in_loop = False
        # names assigned in the innermost block (None at function level): only they may be
        # updated in place, so a loop never grows an outer value by repeated `*=`
        self.block_locals = None
        self.block_depth = 0  # blocks nested in blocks here (generate(nesting=True))
        self.locals_only = False  # (target_var: a nested block's target)
        self.counters: list = []  # the counters of the loops around (condition)

    # -- bookkeeping -------------------------------------------------------------------

    def fresh_name(self, stem="v"):
        return self.module.fresh(stem)

    def emit(self, text):
        self.lines.append("    " * self.indent + text)

    def feature(self, f):
        self.module.features.add(f)

    def vars(self, pred=None):
        """Live variables, most recent first."""
        out = [e for e in reversed(list(self.env.values())) if pred is None or pred(e)]
        return out

    def pick_var(self, pred=None):
        cands = self.vars(pred)
        if not cands:
            return None
        # favour recent values (chains), but reach back sometimes
        if len(cands) > 1 and self.ch.flag(0.35):
            return cands[self.ch.int(0, len(cands) - 1)]
        return cands[self.ch.int(0, min(2, len(cands) - 1))]

    def assign(self, expr: E, target=None, aug=None):
        name = target or self.fresh_name()
        if aug:
            self.emit(f"{name} {aug}= {expr.text}")
        else:
            self.emit(f"{name} = {expr.text}")
        self.env[name] = E(name, expr.shape, expr.bound, pyf=expr.pyf, fresh=expr.fresh)
        if self.block_locals is not None:
            self.block_locals.add(name)
        return self.env[name]

    def mark_viewed(self, e: E):
        if e.text in self.env:
            self.env[e.text] = replace(self.env[e.text], fresh=False)

    # -- operands ----------------------------------------------------------------------

    def squash(self, e: E, limit=BIG) -> E:
        """e, or np.tanh(e) when its bound is above `limit`."""
        if e.bound <= limit:
            return e
        return E(f"np.tanh({e.text})", e.shape, 1.0, fresh=True)

    def operand(self, pred=None) -> E | None:
        e = self.pick_var(pred)
        if e is None:
            return None
        if self.ch.flag(0.15):  # a nested expression: exercises normalisation
            e = self.unary(e)
        return e

    # -- ops: each returns an E (not yet assigned) or None -----------------------------

    def unary(self, a: E) -> E:
        ch = self.ch
        kind = ch.weighted([
            (4, "tanh"), (2, "sin"), (2, "cos"), (3, "exp"), (3, "log"), (2, "sqrt"),
            (2, "abs"), (1, "neg"), (2, "pow"), (2, "clip"), (2, "relu"), (1, "leaky"),
            (3, "scale"), (1, "square"), (1, "rdiv"),
        ])
        self.feature(kind)
        s, B = a.shape, a.bound
        if kind == "tanh":
            return E(f"np.tanh({a.text})", s, 1.0)
        if kind == "sin":
            return E(f"np.sin({a.text})", s, 1.0)
        if kind == "cos":
            return E(f"np.cos({a.text})", s, 1.0)
        if kind == "exp":
            a = self.squash(a, 3.0)
            return E(f"np.exp({a.text})", s, math.exp(a.bound))
        if kind == "log":
            form = ch.int(0, 2)
            if form == 0:
                a = self.squash(a, 1e3)
                return E(f"np.log({a.op} * {a.op} + 1.0)", s, math.log(a.bound**2 + 1) + 1)
            if form == 1:
                return E(f"np.log(1.5 + np.sin({a.text}))", s, 1.0)
            a = self.squash(a, 3.0)
            return E(f"np.log(np.exp({a.text}) + 1.0)", s, a.bound + 1.0)
        if kind == "sqrt":
            a = self.squash(a, 1e3)
            if ch.flag(0.5):
                return E(f"np.sqrt({a.op} * {a.op} + 1.0)", s, a.bound + 1.0)
            return E(f"np.sqrt(np.abs({a.text}) + 0.5)", s, math.sqrt(a.bound + 0.5))
        if kind == "abs":
            return E(f"np.abs({a.text})", s, B)
        if kind == "neg":
            return E(f"-{a.op}", s, B, pyf=a.pyf, atom=False)
        if kind == "pow":
            a = self.squash(a, 5.0)
            k = ch.pick((2, 3))
            if s == ():
                self.feature("scalar_pow")
            return E(f"{a.op} ** {k}", s, a.bound**k, pyf=a.pyf, atom=False)
        if kind == "square":
            a = self.squash(a, 5.0)
            return E(f"np.square({a.text})", s, a.bound**2)
        if kind == "clip":
            c = ch.pick((0.5, 1.0))
            return E(f"np.clip({a.text}, {-c!r}, {c!r})", s, c)
        if kind == "relu":
            return E(f"np.maximum({a.text}, 0.0)", s, B)
        if kind == "leaky":
            return E(f"np.where({a.op} > 0, {a.text}, 0.1 * {a.op})", s, B)
        if kind == "rdiv":
            a = self.squash(a, 1e3)
            return E(f"1.0 / ({a.op} * {a.op} + 1.0)", s, 1.0, pyf=a.pyf, atom=False)
        # scale: a Python constant on either side
        c = ch.pick(CONSTS)
        form = ch.int(0, 3)
        if form == 0:
            return E(f"{a.op} * {_fmt_const(c)}", s, B * abs(c), pyf=a.pyf, atom=False)
        if form == 1:
            return E(f"{_fmt_const(c)} * {a.op}", s, B * abs(c), pyf=a.pyf, atom=False)
        if form == 2:
            return E(f"{a.op} + {_fmt_const(c)}", s, B + abs(c), pyf=a.pyf, atom=False)
        return E(f"{_fmt_const(abs(c))} - {a.op}", s, B + abs(c), pyf=a.pyf, atom=False)

    def denominator(self, b: E) -> tuple[str, float]:
        """(text, lower bound of |text|) for a divisor bounded away from 0."""
        form = self.ch.int(0, 2)
        if form == 0:
            b = self.squash(b, 1e3)
            return f"({b.op} * {b.op} + 1.0)", 1.0
        if form == 1:
            return f"(2.0 + np.tanh({b.text}))", 1.0
        return f"(1.5 + np.cos({b.text}))", 0.5

    def binary(self, a: E, b: E) -> E | None:
        s = _broadcast(a.shape, b.shape)
        if s is None:
            return None
        ch = self.ch
        kind = ch.weighted([
            (4, "add"), (3, "sub"), (4, "mul"), (3, "div"), (2, "maximum"), (2, "minimum"),
            (2, "where"), (1, "power"),
        ])
        self.feature(kind)
        pyf = a.pyf and b.pyf
        if kind == "add":
            return E(f"{a.op} + {b.op}", s, a.bound + b.bound, pyf=pyf, atom=False)
        if kind == "sub":
            return E(f"{a.op} - {b.op}", s, a.bound + b.bound, pyf=pyf, atom=False)
        if kind == "mul":
            if a.bound * b.bound > BIG:
                a, b = self.squash(a, 5.0), self.squash(b, 5.0)
            return E(f"{a.op} * {b.op}", s, a.bound * b.bound, pyf=pyf, atom=False)
        if kind == "div":
            den, low = self.denominator(b)
            return E(f"{a.op} / {den}", s, a.bound / low, pyf=False, atom=False)
        if kind in ("maximum", "minimum"):
            return E(f"np.{kind}({a.text}, {b.text})", s, max(a.bound, b.bound))
        if kind == "where":
            if ch.flag(0.5):
                return E(f"np.where({a.op} > {b.op}, {a.text}, {b.text})", s,
                         max(a.bound, b.bound))
            c = ch.pick(CONSTS)
            return E(f"np.where({b.op} > 0, {a.text}, {b.op} * {_fmt_const(c)})", s,
                     max(a.bound, b.bound * abs(c)))
        # power: base >= 1, exponent in (-1, 1)
        a = self.squash(a, 3.0)
        if s == ():
            self.feature("scalar_pow")
        return E(f"({a.op} * {a.op} + 1.0) ** np.tanh({b.text})", s, a.bound**2 + 1.0,
                 atom=False)

    def reduction(self, a: E) -> E | None:
        if a.ndim == 0 or a.pyf:
            return None
        ch = self.ch
        fn = ch.weighted([(4, "sum"), (3, "mean"), (2, "max"), (2, "min")])
        self.feature(f"reduce_{fn}")
        axis = ch.pick([None] + list(range(a.ndim)) + [-1])
        keepdims = axis is not None and ch.flag(0.4)
        if axis is None:
            shape = ()
            count = a.size
        else:
            ax = axis % a.ndim
            count = a.shape[ax]
            shape = tuple(1 if i == ax else d for i, d in enumerate(a.shape)) if keepdims \
                else tuple(d for i, d in enumerate(a.shape) if i != ax)
        bound = a.bound * count if fn == "sum" else a.bound
        kw = "" if axis is None else f"axis={axis}"
        if keepdims:
            kw += ", keepdims=True"
        if ch.flag(0.3) and self._is_array(a):  # method spelling
            return E(f"{a.op}.{fn}({kw})", shape, bound)
        return E(f"np.{fn}({a.text}{', ' + kw if kw else ''})", shape, bound)

    def row_chain(self) -> E | None:
        """(``rows=True`` programs) a chain through a sum, mean, max or min over the last
        axis with keepdims, broadcast back: centring, a LayerNorm-like normalisation, a
        softmax (also the stable one, through the row's max), a scale by the row's reduction
        -- what the fuser makes row kernels of."""
        ch = self.ch
        a = self.pick_var(lambda e: e.ndim >= 1 and e.shape[-1] >= 2 and not e.pyf)
        if a is None:
            return None
        fn = ch.pick(("sum", "mean", "max", "min"))
        n = a.shape[-1]

        def red(t: E, fn=fn) -> str:
            if ch.flag(0.3):
                return f"{t.op}.{fn}(axis=-1, keepdims=True)"
            return f"np.{fn}({t.text}, axis={ch.pick((-1, t.ndim - 1))}, keepdims=True)"

        def rb(t: E) -> float:
            return t.bound * (n if fn == "sum" else 1)

        form = ch.weighted([(2, "center"), (2, "norm"), (2, "softmax"), (1, "scale"),
                            (2, "stable_softmax")])
        self.feature(f"row_{form}")
        if form == "stable_softmax":  # exp(a - max(a)) / sum(...): the max's row kernel
            z = self.assign(E(f"{a.op} - {red(a, 'max')}", a.shape, 2 * a.bound, atom=False))
            e = self.assign(E(f"np.exp({z.op})", z.shape, 1.0))
            return E(f"{e.op} / {red(e, 'sum')}", e.shape, 1.0, atom=False)
        if form == "center":
            return E(f"{a.op} - {red(a)}", a.shape, a.bound + rb(a), atom=False)
        if form == "norm":
            a = self.squash(a, 3.0)
            c = self.assign(E(f"{a.op} - {red(a)}", a.shape, a.bound + rb(a), atom=False))
            sq = E(f"{c.op} * {c.op}", c.shape, c.bound ** 2, atom=False)
            return E(f"{c.op} / np.sqrt({red(sq)} + 1.0)", c.shape, c.bound, atom=False)
        if form == "softmax":
            e = self.assign(E(f"np.exp(np.tanh({a.text}))", a.shape, math.e))
            return E(f"{e.op} / {red(e)}", e.shape, math.e ** 2, atom=False)
        return E(f"{a.op} * np.tanh({red(a)})", a.shape, a.bound, atom=False)

    def _is_array(self, a: E) -> bool:
        """True when `a` is certainly an ndarray or numpy scalar (has methods)."""
        return not a.pyf

    def matmul(self) -> E | None:
        ch = self.ch
        a = self.pick_var(lambda e: e.ndim in (1, 2) and not e.pyf)
        if a is None:
            return None
        q = a.shape[-1]
        # b as (q, r) / (q,) directly, or (r, q) transposed
        cands = []
        for e in self.vars(lambda e: not e.pyf and e.ndim in (1, 2)):
            if e.shape[0] == q:
                cands.append((e, False))
            if e.ndim == 2 and e.shape[1] == q:
                cands.append((e, True))
        if not cands:
            return None
        b, transposed = cands[ch.int(0, len(cands) - 1)]
        if transposed:
            bshape = (b.shape[1], b.shape[0])
        else:
            bshape = b.shape
        shape = a.shape[:-1] + bshape[1:]
        if math.prod(shape) > MAX_SIZE:
            return None
        if a.bound * b.bound * q > BIG:
            a, b = self.squash(a, 2.0), self.squash(b, 2.0)
        bt = b.op
        if transposed:
            self.feature("transpose")
            bt = ch.pick([f"{b.op}.T", f"np.transpose({b.text})"])
        self.feature("matmul")
        if ch.flag(0.2):
            self.feature("dot")
            return E(f"np.dot({a.text}, {bt})", shape, a.bound * b.bound * q)
        return E(f"{a.op} @ {bt}", shape, a.bound * b.bound * q, atom=False)

    def reshape(self) -> E | None:
        ch = self.ch
        a = self.pick_var(lambda e: e.ndim in (1, 2) and not e.pyf)
        if a is None:
            return None
        self.feature("reshape")
        self.mark_viewed(a)
        if a.ndim == 2:
            p, q = a.shape
            form = ch.int(0, 5 if self.module.copies else 3)
            if form == 4:  # (copies=True: a reshape numpy makes by copying a transposed view)
                self.feature("transpose")
                return E(f"np.reshape(np.transpose({a.text}), (-1,))", (p * q,), a.bound,
                         fresh=False)
            if form == 5:
                self.feature("transpose")
                return E(f"np.reshape({a.op}.T, ({p}, {q}))", (p, q), a.bound, fresh=False)
            if form == 0:
                return E(f"{a.op}.reshape(-1)", (p * q,), a.bound, fresh=False)
            if form == 1:
                return E(f"np.reshape({a.text}, ({q}, {p}))", (q, p), a.bound, fresh=False)
            if form == 2:
                self.feature("transpose")
                return E(f"{a.op}.T", (q, p), a.bound, fresh=False)
            self.feature("transpose")
            return E(f"np.transpose({a.text})", (q, p), a.bound, fresh=False)
        (k,) = a.shape
        form = ch.int(0, 2)
        if form == 0:
            return E(f"{a.op}.reshape(1, {k})", (1, k), a.bound, fresh=False)
        if form == 1:
            return E(f"np.reshape({a.text}, ({k}, 1))", (k, 1), a.bound, fresh=False)
        return E(f"{a.op}.reshape(-1, 1)", (k, 1), a.bound, fresh=False)

    def index(self) -> E | None:
        ch = self.ch
        a = self.pick_var(lambda e: e.ndim in (1, 2) and not e.pyf)
        if a is None:
            return None
        self.feature("index")
        opts = []
        if a.ndim == 2:
            p, q = a.shape
            opts += [("[0]", (q,)), ("[-1]", (q,)), ("[:, 0]", (p,)), ("[:, -1]", (p,))]
            if p >= 2:
                opts += [("[1:]", (p - 1, q)), ("[:-1, :]", (p - 1, q))]
            if q >= 2:
                opts += [("[:, 1:]", (p, q - 1)), ("[0, 1]", ()), ("[..., :1]", (p, 1))]
            if p >= 2:
                opts += [("[[0, 1, 0]]", (3, q))]  # integer array: repeated rows accumulate
        else:
            (k,) = a.shape
            opts += [("[0]", ()), ("[-1]", ())]
            if k >= 2:
                opts += [("[1:]", (k - 1,)), ("[::-1]", (k,)), ("[:2]", (2,)),
                         ("[[1, 0, 1]]", (3,))]
        idx, shape = opts[ch.int(0, len(opts) - 1)]
        if "[[" in idx:
            self.feature("fancy_index")
            return E(f"{a.op}{idx}", shape, a.bound)
        self.mark_viewed(a)
        return E(f"{a.op}{idx}", shape, a.bound, fresh=False)

    def join(self) -> E | None:
        ch = self.ch
        a = self.pick_var(lambda e: e.ndim in (0, 1, 2) and not e.pyf)
        if a is None:
            return None
        cands = []
        for b in self.vars(lambda e: not e.pyf and e.ndim == a.ndim):
            if b.shape == a.shape and a.ndim <= 1 and 2 * a.size <= MAX_SIZE:
                cands.append(("stack0", b))
                if a.ndim == 1:
                    cands.append(("stack1", b))
            if a.ndim == 1 and a.size + b.size <= MAX_SIZE:
                cands.append(("cat0", b))
            if a.ndim == 2 and a.shape[1] == b.shape[1] and a.size + b.size <= MAX_SIZE:
                cands.append(("cat0", b))
            if a.ndim == 2 and a.shape[0] == b.shape[0] and a.size + b.size <= MAX_SIZE:
                cands.append(("cat1", b))
        if not cands:
            return None
        kind, b = cands[ch.int(0, len(cands) - 1)]
        bound = max(a.bound, b.bound)
        br = ch.pick(("[{}, {}]", "({}, {})"))
        pair = br.format(a.text, b.text)
        if kind == "stack0":
            self.feature("stack")
            return E(f"np.stack({pair})", (2,) + a.shape, bound)
        if kind == "stack1":
            self.feature("stack")
            return E(f"np.stack({pair}, axis=1)", a.shape + (2,), bound)
        self.feature("concatenate")
        if kind == "cat0":
            shape = (a.shape[0] + b.shape[0],) + a.shape[1:]
            ax = "" if ch.flag(0.5) else ", axis=0"
            return E(f"np.concatenate({pair}{ax})", shape, bound)
        shape = (a.shape[0], a.shape[1] + b.shape[1])
        return E(f"np.concatenate({pair}, axis={ch.pick((1, -1))})", shape, bound)

    def elementwise_binary(self) -> E | None:
        a = self.operand()
        if a is None:
            return None
        b = self.operand(lambda e: _broadcast(e.shape, a.shape) is not None)
        if b is None:
            return None
        return self.binary(a, b)

    # -- statements ------------------------------------------------------------------

    def simple_expr(self) -> E:
        """One op (occasionally a small nest) over live variables."""
        ch = self.ch
        while True:
            kind = ch.weighted([
                (6, "binary"), (5, "unary"), (3, "reduce"), (2, "matmul"), (2, "reshape"),
                (2, "index"), (1, "join"),
            ] + ([(8, "rows")] if self.module.rows else [])
              + ([(6, "reshape")] if self.module.copies else []))
            if kind == "rows":
                e = self.row_chain()
            elif kind == "binary":
                e = self.elementwise_binary()
            elif kind == "unary":
                e = self.unary(self.pick_var())
            elif kind == "reduce":
                a = self.pick_var(lambda e: e.ndim >= 1 and not e.pyf)
                e = self.reduction(a) if a is not None else None
            elif kind == "matmul":
                e = self.matmul()
            elif kind == "reshape":
                e = self.reshape()
            elif kind == "index":
                e = self.index()
            else:
                e = self.join()
            if e is not None:
                return e

    def statement(self):
        """A straight-line statement: a new value, an augmented update or an unpacking."""
        ch = self.ch
        form = ch.weighted([(12, "assign"), (2, "aug"), (1, "unpack"), (2, "call"),
                            (3, "python")] + ([(4, "shape_arm")] if self.module.shapes
                                              else []))
        if form == "shape_arm" and self.shape_arm():
            return
        if form == "python":  # comprehensions, closures, inactive calls, print (fuzz_python)
            from tests import fuzz_python

            if fuzz_python.statement(self):
                return
            form = "assign"
        if form == "aug":
            t = self.pick_var(lambda e: e.fresh and not e.pyf and e.text not in self.params
                              and (self.block_locals is None or e.text in self.block_locals))
            if t is not None:
                o = self.pick_var(lambda e: _broadcast(e.shape, t.shape) == t.shape)
                op = ch.pick(("+", "-", "*"))
                if op == "*" and t.bound * o.bound > BIG:
                    o = self.squash(o, 1.0) if o.bound > 1.0 else o
                    if t.bound * o.bound > BIG:
                        op = "+"
                bound = t.bound * o.bound if op == "*" else t.bound + o.bound
                self.feature("augassign")
                self.emit(f"{t.text} {op}= {o.text}")
                self.env[t.text] = replace(t, bound=bound)
                # a rebound name moves to the end: the most recent value
                self.env[t.text] = self.env.pop(t.text)
                return
        if form == "unpack":
            e1, e2 = self.simple_expr(), self.simple_expr()
            n1, n2 = self.fresh_name(), self.fresh_name()
            self.feature("unpack")
            self.emit(f"{n1}, {n2} = {e1.text}, {e2.text}")
            self.env[n1] = E(n1, e1.shape, e1.bound, pyf=e1.pyf, fresh=e1.fresh)
            self.env[n2] = E(n2, e2.shape, e2.bound, pyf=e2.pyf, fresh=e2.fresh)
            return
        if form == "call" and self.depth < 2:
            self.call()
            return
        self.assign(self.simple_expr())

    def shape_arm(self) -> bool:
        """`s = a; if <test>: s = a[..., None]` (or `np.expand_dims`, a reshape adding an
        axis): a name of two shapes after the branch, read by a reduction either shape
        allows -- PRML's `if x.ndim == 1: x = x[:, None]`. (The backward zeroed the adjoint
        from before the branch like the arm's value: a gradient of another shape, silently,
        until 2026-12-07, seventeenth session.)"""
        ch = self.ch
        a = self.pick_var(lambda e: not e.pyf and e.ndim >= 1 and e.size * 2 <= MAX_SIZE)
        if a is None:
            return False
        s = self.fresh_name("s")
        self.emit(f"{s} = {a.text}")
        test = ch.pick((f"{a.text}.ndim == {a.ndim}", f"np.ndim({a.text}) > 1", None))
        self.emit(f"if {test or self.condition()}:")
        self.emit("    " + ch.pick((f"{s} = {a.op}[..., None]",
                                    f"{s} = np.expand_dims({a.text}, -1)",
                                    f"{s} = {a.op}.reshape({a.op}.shape + (1,))",
                                    f"{s} = {s}[None]")))
        n = self.fresh_name()
        form = ch.pick(("tanh", "mean", "mul"))
        if form == "tanh":
            self.emit(f"{n} = np.sum(np.tanh({s}) * 1.5)")
            bound = 1.5 * a.size
        elif form == "mean":
            self.emit(f"{n} = np.mean({s} ** 2)")
            bound = a.bound ** 2
        else:  # (with another value broadcast against either shape: a scalar)
            o = self.pick_var(lambda e: e.shape == () and not e.pyf)
            k = o.op if o is not None else "0.5"
            self.emit(f"{n} = np.sum({s} * {k} + {s})")
            bound = a.size * a.bound * ((o.bound if o is not None else 0.5) + 1.0)
        self.feature("shape_arm")
        self.env[n] = E(n, (), bound, fresh=True)
        if self.block_locals is not None:
            self.block_locals.add(n)
        return True

    def call(self):
        """Define a helper function over 1-2 live values and call it."""
        ch = self.ch
        nargs = ch.int(1, 2)
        args = []
        for _ in range(nargs):
            a = self.pick_var()
            if a is not None and a not in args:
                args.append(a)
        hname = self.module.fresh(f"{self.module.prefix}_h")
        pnames = [f"u{i}" for i in range(len(args))]
        env = {p: E(p, a.shape, a.bound, pyf=a.pyf, fresh=False) for p, a in zip(pnames, args)}
        sub = Gen(ch, self.module, hname, env, self.depth + 1)
        n = ch.int(1, 4)
        sub.body(n, allow_blocks=ch.flag(0.3))
        two = ch.flag(0.2)
        r1 = sub.result_expr()
        lines = [f"def {hname}({', '.join(pnames)}):", *sub.lines]
        if two:
            r2 = sub.simple_expr()
            lines.append(f"    return {r1.text}, {r2.text}")
        else:
            lines.append(f"    return {r1.text}")
        self.module.helpers.append("\n".join(lines))
        self.feature("call")
        argtext = ", ".join(a.text for a in args)
        if two:
            self.feature("call_tuple")
            n1, n2 = self.fresh_name(), self.fresh_name()
            self.emit(f"{n1}, {n2} = {hname}({argtext})")
            self.env[n1] = E(n1, r1.shape, r1.bound, pyf=r1.pyf, fresh=False)
            self.env[n2] = E(n2, r2.shape, r2.bound, pyf=r2.pyf, fresh=False)
        else:
            name = self.fresh_name()
            self.emit(f"{name} = {hname}({argtext})")
            self.env[name] = E(name, r1.shape, r1.bound, pyf=r1.pyf, fresh=False)

    def result_expr(self) -> E:
        """An op over the most recent values (a helper's return value): never a bare name,
        so the caller never receives an alias of its own argument."""
        e = self.pick_var()
        if self.ch.flag(0.5):
            e2 = self.binary(e, self.pick_var(lambda x: _broadcast(x.shape, e.shape) is not None))
            if e2 is not None:
                return e2
        return self.unary(e)

    # -- control flow ----------------------------------------------------------------

    def condition(self) -> str:
        ch = self.ch
        a = self.pick_var(lambda e: not e.pyf) or self.pick_var()
        form = ch.weighted([(4, "sum"), (2, "mean"), (2, "max"), (1, "min"), (1, "and")])
        self.feature("if")
        if a.pyf:
            return f"{a.text} > 0.0"
        if self.module.nesting and self.counters and ch.flag(0.4):
            # a loop's counter first, a value compared second: the flag of `a and b` is set
            # in a branch of its own, whose test differs from trip to trip
            self.feature("counter_test")
            i = ch.pick(self.counters)
            return ch.pick((f"{i} % 2 == 0 and np.max({a.text}) < 2.0",
                            f"{i} == 1 or np.sum({a.text}) > 0",
                            f"{i} != 1 and np.min({a.text}) > -2.0"))
        if form == "sum":
            return f"np.sum({a.text}) > 0"
        if form == "mean":
            return f"np.mean({a.text}) > {ch.pick(('0.0', '0.1', '-0.2'))}"
        if form == "max":
            return f"np.max({a.text}) > {ch.pick(('0.5', '1.0'))}"
        if form == "min":
            return f"np.min({a.text}) < {ch.pick(('-0.5', '0.0'))}"
        b = self.pick_var(lambda e: not e.pyf) or a
        self.feature("and")
        return f"np.sum({a.text}) > 0 and np.max({b.text}) < 2.0"

    def shape_preserving_update(self, t: E, bounded: bool) -> tuple[str, float]:
        """An expression of exactly t's shape and dtype, over t and other live values."""
        ch = self.ch
        o = self.pick_var(lambda e: _broadcast(e.shape, t.shape) == t.shape and e is not t)
        if o is not None:
            inner = self.binary(t, o)
            if inner is None or inner.shape != t.shape:
                inner = E(f"{t.op} * 0.5", t.shape, t.bound * 0.5, atom=False)
        else:
            inner = self.unary(t)
        if not bounded:
            return inner.text, inner.bound
        form = ch.int(0, 3)
        if form == 0:
            return f"np.tanh({inner.text})", max(1.0, 0.0)
        if form == 1:
            return f"0.5 * {t.op} + 0.5 * np.sin({inner.text})", 0.5 * t.bound + 0.5
        if form == 2:
            return f"{t.op} * np.tanh({inner.text})", t.bound
        return f"np.clip({inner.text}, -1.0, 1.0)", 1.0

    def block_body(self, n: int, target: E, bounded: bool):
        """n statements into a block: temporaries, then an update of `target`."""
        saved = dict(self.env)
        saved_locals, self.block_locals = self.block_locals, set()
        self.indent += 1
        extra = self.ch.int(1, 2) if self.module.nesting else 0  # (room for a block inside)
        for _ in range(n - 1 + extra):
            self.nested_statement("fill_in_branch")
        self.block_locals = saved_locals
        t = self.env.get(target.text, target)
        text, bound = self.shape_preserving_update(t, bounded)
        self.emit(f"{target.text} = {text}")
        self.indent -= 1
        live_after = {k: v for k, v in saved.items()}
        new_t = replace(target, bound=max(bound, target.bound if not bounded else bound),
                        fresh=True, pyf=False)
        # values of the target's shape defined in the block are not live after it
        self.env = live_after
        self.env[target.text] = new_t
        return new_t

    def nested_statement(self, feature: str):
        """A statement in a loop's body or a branch: with generate(fills=True), sometimes a
        buffer made there and filled slot by slot in a loop nested inside (`for t in ...:
        buf = np.zeros_like(x); for i in ...: buf[i] += ...` -- one value a trip of the
        outer block, carried by the inner loop)."""
        if self.module.fills and self.ch.flag(0.3) and self.fill_block():
            self.feature(feature)
            return
        if self.module.nesting and self.block_depth < 2 and self.block_locals and \
                self.ch.flag(0.5):
            # an `if` or a loop inside, updating a value made in this block (so a loop's
            # repeated updates stay within their bounds)
            kind = self.ch.pick(("if", "loop"))
            self.block_depth += 1
            self.locals_only = True
            made = (self.if_block if kind == "if" else self.loop_block)(self.ch.int(1, 2))
            self.locals_only = False
            self.block_depth -= 1
            if made:
                self.feature(f"{kind}_in_{feature.rsplit('_', 1)[1]}")
                return
        self.statement()

    def target_var(self):
        """An existing variable to update in a block (not a Python float); in a block nested
        in another (generate(nesting=True)), one the enclosing block made."""
        if self.locals_only:
            self.locals_only = False
            return self.pick_var(lambda e: not e.pyf and e.text in (self.block_locals or ()))
        t = self.pick_var(lambda e: not e.pyf and e.text not in self.params)
        if t is None or self.ch.flag(0.15):
            t = self.pick_var(lambda e: not e.pyf)
        return t

    def if_block(self, n: int):
        ch = self.ch
        t = self.target_var()
        if t is None:
            return False
        cond = self.condition()
        self.emit(f"if {cond}:")
        k = max(1, min(n, ch.int(1, 3)))
        b1 = self.block_body(k, t, bounded=False)
        bounds = [b1.bound]
        form = ch.weighted([(3, "else"), (1, "none"), (1, "elif")])
        if form == "elif":
            self.feature("elif")
            self.emit(f"elif {self.condition()}:")
            bounds.append(self.block_body(ch.int(1, 2), t, bounded=False).bound)
        if form in ("else", "elif"):
            self.feature("else")
            self.emit("else:")
            bounds.append(self.block_body(ch.int(1, 2), t, bounded=False).bound)
        else:
            bounds.append(t.bound)
        self.env[t.text] = replace(self.env[t.text], bound=max(bounds),
                                   fresh=(form != "none") and self.env[t.text].fresh and t.fresh)
        self.env[t.text] = self.env.pop(t.text)
        return True

    def loop_block(self, n: int):
        ch = self.ch
        t = self.target_var()
        if t is None:
            return False
        kind = ch.weighted([(4, "for"), (1, "for_index"), (2, "while"), (1, "while_data")])
        if kind == "for_index":
            x = self.pick_var(lambda e: e.ndim in (1, 2) and not e.pyf and e.shape[0] <= 4
                              and _broadcast(e.shape[1:], t.shape) == t.shape)
            if x is None:
                kind = "for"
        self.feature(kind)
        i = self.module.fresh("i")
        saved_in_loop = self.in_loop
        self.in_loop = True
        bound_src = None
        most = 4 if self.module.nesting else 3  # (trips enough for a test's pattern to vary)
        if kind == "for":
            k = ch.int(1, most)
            if self.module.int_param is not None and self.depth == 0 and ch.flag(0.3):
                rng = f"range({self.module.int_param})"
                self.feature("int_arg")
            else:
                rng = ch.pick((f"range({k})", f"range(1, {k + 1})", f"range({k}, 0, -1)"))
            self.emit(f"for {i} in {rng}:")
        elif kind == "for_index":
            rng = ch.pick((f"range({x.text}.shape[0])", f"range(len({x.text}))"))
            self.emit(f"for {i} in {rng}:")
            # the indexed row is a fresh value in the loop's environment
            bound_src = E(f"{x.op}[{i}]", x.shape[1:], x.bound, fresh=False)
        elif kind == "while":
            k = ch.int(1, most)
            self.emit(f"{i} = 0")
            self.emit(f"while {i} < {k}:")
        else:  # data-dependent trip count, capped
            self.emit(f"{i} = 0")
            self.emit(f"while np.max(np.abs({t.text})) > 0.3 and {i} < 3:")
        self.indent += 1
        self.counters.append(i)
        saved = dict(self.env)
        saved_locals, self.block_locals = self.block_locals, set()
        if bound_src is not None:
            row = self.fresh_name("row")
            self.emit(f"{row} = {bound_src.text}")
            self.env[row] = E(row, bound_src.shape, bound_src.bound, fresh=False)
        if kind == "for" and ch.flag(0.3):
            self.feature("loop_counter_use")
            c = self.fresh_name("c")
            self.emit(f"{c} = {t.op} * (1.0 + 0.25 * {i})")
            self.env[c] = E(c, t.shape, t.bound * 2.0)
        if kind != "while_data" and ch.flag(0.15):
            self.feature("continue")
            cond = f"{i} == 1" if kind != "for_index" else f"np.sum({t.text}) > 2.0"
            if kind == "while":
                self.emit(f"if {cond}:")
                self.emit(f"    {i} = {i} + 1")
                self.emit("    continue")
            else:
                self.emit(f"if {cond}:")
                self.emit("    continue")
        extra = ch.int(1, 2) if self.module.nesting else 0  # (room for a block inside)
        for _ in range(max(0, min(n, ch.int(1, 3)) - 1) + extra):
            self.nested_statement("fill_in_loop")
        tt = self.env.get(t.text, t)
        if kind == "while_data":
            text, bound = f"{tt.op} * 0.5", tt.bound
        else:
            text, bound = self.shape_preserving_update(tt, bounded=True)
        if tt.fresh and tt.text not in self.params and ch.flag(0.15) and kind != "while_data":
            self.feature("augassign_loop")
            self.emit(f"{t.text} += 0.1 * {self._paren(text)}")
            bound = tt.bound + 0.1 * bound
        else:
            self.emit(f"{t.text} = {text}")
        if kind in ("while", "while_data"):
            self.emit(ch.pick((f"{i} = {i} + 1", f"{i} += 1")))
        if kind in ("for", "for_index") and ch.flag(0.15):
            self.feature("break")
            self.emit(f"if np.sum({t.text}) > {ch.pick(('0.0', '1.0'))}:")
            self.emit("    break")
        self.indent -= 1
        self.counters.pop()
        self.block_locals = saved_locals
        self.in_loop = saved_in_loop
        self.env = saved
        self.env.pop(t.text, None)
        self.env[t.text] = replace(t, bound=max(bound, t.bound), fresh=t.fresh, pyf=False)
        return True

    def fill_block(self) -> bool:
        """A buffer filled slot by slot in a loop (generate(fills=True)): `buf = np.zeros_like(t)`
        then `for i in range(t.shape[0]): buf[i] = f(t[i], ...)` -- or `+=`, or with a slot of
        the buffer (a view) read after the write, or the buffer's old value kept by a name."""
        ch = self.ch
        t = self.pick_var(lambda e: not e.pyf and len(e.shape) >= 1)
        if t is None:
            return False
        self.feature("fill")
        buf, i = self.fresh_name("buf"), self.module.fresh("i")
        self.emit(f"{buf} = np.zeros_like({t.text})" if ch.flag(0.7)
                  else f"{buf} = {t.op} * 0.5")
        kept = None
        self.emit(f"for {i} in range({t.op}.shape[0]):")
        self.indent += 1
        saved = dict(self.env)
        row = E(f"{t.op}[{i}]", t.shape[1:], t.bound, fresh=False)
        self.env = {k: v for k, v in self.env.items() if _broadcast(v.shape, row.shape)
                    == row.shape}
        text, bound = self.shape_preserving_update(row, bounded=True)
        self.env = saved
        form = ch.weighted([(4, "set"), (2, "aug"), (1, "view"), (1, "old")])
        if form == "old":  # the old buffer must stay as it was
            kept = self.fresh_name("old")
            self.emit(f"{kept} = {buf}")
        self.emit(f"{buf}[{i}] {'+=' if form == 'aug' else '='} {text}")
        if form == "view":  # a view of the slot, read after the write
            v = self.fresh_name("slot")
            self.emit(f"{v} = {buf}[{i}]")
            self.emit(f"{buf}[{i}] = {v} * 0.5 + {buf}[{i}] * 0.25")
        self.indent -= 1
        self.env[buf] = E(buf, t.shape, max(t.bound, 1.0) + bound, fresh=True)
        if kept is not None:  # (bound to the last pass's buffer, or unbound: use it guarded)
            self.emit(f"{buf} = {buf} + 0.5 * ({kept} if {t.op}.shape[0] > 0 else {buf})")
        return True

    @staticmethod
    def _paren(text):
        return f"({text})"

    def body(self, n: int, allow_blocks: bool = True):
        """About n op statements, with branches and loops when allowed."""
        used = 0
        while used < n:
            r = self.ch.int(0, 99)
            if allow_blocks and r < 12 and n - used >= 1:
                k = self.ch.int(1, 3)
                if self.if_block(k):
                    used += k
                    continue
            if allow_blocks and 12 <= r < 22 and n - used >= 1:
                k = self.ch.int(1, 3)
                if self.loop_block(k):
                    used += k
                    continue
            if allow_blocks and self.module.fills and 22 <= r < 40 and self.fill_block():
                used += 1
                continue
            self.statement()
            used += 1


class ModuleGen:
    def __init__(self, prefix):
        self.prefix = prefix
        self.helpers: list[str] = []
        self.features: set = set()
        self.counter = 0
        self.int_param = None
        self.rows = False  # row chains too (generate(rows=True))
        self.copies = False  # copying reshapes too (generate(copies=True))
        self.fills = False  # buffers filled slot by slot in loops (generate(fills=True))
        self.nesting = False  # ifs and loops in loops and branches (generate(nesting=True))
        self.shapes = False  # names of two shapes after a branch (generate(shapes=True))

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}{self.counter}"


SHAPE_KINDS = ("full", "row", "vec", "col", "scalar")


def generate(ch: Chooser, index: int, dtype=None, rows: bool = False,
             copies: bool = False, fills: bool = False, nesting: bool = False,
             shapes: bool = False) -> Program:
    """One random valid program named ``p<index>``. rows=True: also chains through
    last-axis sums and means (`Gen.row_chain`), on rows of 3 to 17 values (numpy's pairwise
    sum changes its blocking at 8). copies=True: also reshapes numpy makes by copying a
    transposed view (``np.reshape(np.transpose(a), (-1,))``, ``np.reshape(a.T, (p, q))``).
    fills=True: also buffers filled slot by slot in loops (`Gen.fill_block`), at the top
    level and made in a loop's body or a branch (`Gen.nested_statement`). nesting=True: also
    `if`s and loops inside loops and branches, two deep, each updating a value its enclosing
    block made. shapes=True: also names given another shape on one arm of a branch
    (`Gen.shape_arm`)."""
    name = f"p{index}"
    mod = ModuleGen(name)
    mod.shapes = shapes
    mod.rows = rows
    mod.copies = copies
    mod.fills = fills
    mod.nesting = nesting
    if dtype is None:
        dtype = ch.pick((np.float64, np.float32))
    m, n = ch.int(1, 4), ch.int(1, 4)
    m, n = max(m, 2) if ch.flag(0.8) else m, max(n, 2) if ch.flag(0.8) else n
    if rows:
        n = ch.pick((3, 5, 9, 17))
        m = min(m, MAX_SIZE // n)
    nargs = ch.int(1, 3)
    params = []
    env = {}
    pnames = ("x", "w", "b")
    for j in range(nargs):
        kind = ch.weighted([(4, "full"), (2, "row"), (2, "vec"), (2, "col"), (1, "scalar")])
        shape = {"full": (m, n), "row": (1, n), "vec": (n,), "col": (m, 1), "scalar": ()}[kind]
        akind = "array"
        if kind == "scalar":
            akind = ch.pick(("array", "npscalar", "pyfloat") if dtype == np.float64
                            else ("array", "npscalar"))
        params.append((pnames[j], shape, akind))
        env[pnames[j]] = E(pnames[j], shape, 1.3, pyf=(akind == "pyfloat"), fresh=False)
    int_values = {}
    if ch.flag(0.15):
        mod.int_param = "n"
        int_values["n"] = ch.int(0, 3)
        params.append(("n", (), "int"))
    g = Gen(ch, mod, name, env, depth=0)
    g.params = [p for p, _, _ in params]
    nops = ch.int(3, 12)
    g.body(nops, allow_blocks=ch.flag(0.6))
    # the scalar output
    last = g.pick_var(lambda e: not e.pyf) or g.pick_var()
    form = ch.weighted([(4, "sum"), (2, "sumsq"), (1, "mean"), (2, "two")])
    if last.pyf:
        ret = f"{last.text} * 2.0"
        mod.features.add("pyfloat_out")
    elif form == "sum" or last.ndim == 0 and form == "mean":
        ret = f"np.sum({last.text})"
    elif form == "sumsq":
        ret = f"np.sum({last.op} * {last.op})"
    elif form == "mean":
        ret = f"np.mean({last.text})"
    else:
        other = g.pick_var(lambda e: not e.pyf and e is not last) or last
        ret = f"np.sum({last.text}) + np.mean({other.op} ** 2)"
        if other.shape == ():
            mod.features.add("scalar_pow")
    g.emit(f"return {ret}")
    sig = ", ".join(p for p, _, _ in params)
    src = "\n\n\n".join([*mod.helpers, f"def {name}({sig}):\n" + "\n".join(g.lines)])
    floats = [i for i, (_, _, k) in enumerate(params) if k != "int"]
    wform = ch.weighted([(5, "all"), (2, "one"), (1, "name"), (1, "subset")])
    if wform == "all" or len(floats) == 1 and wform == "subset":
        wrt = tuple(floats)
    elif wform == "one":
        wrt = ch.pick(floats)
    elif wform == "name":
        wrt = params[ch.pick(floats)][0]
    else:
        drop = ch.pick(floats)
        wrt = tuple(i for i in floats if i != drop)
    return Program(name, src, params, dtype, wrt, mod.features, int_values)


def module_source(programs) -> str:
    from tests.fuzz_python import HEADER

    return ("import numpy as np\n" + HEADER + "\n\n" + "\n\n\n".join(p.source for p in programs)
            + "\n")


# -- loading generated programs (a real file, so srcad reads them with inspect.getsource) --

_MODULE_DIR = None
_COUNTER = itertools.count()


def import_source(source: str, tag: str):
    """Write `source` to a .py file in a temporary directory and import it under a unique
    name (registered in sys.modules: inspect.getsource finds the file through the module)."""
    global _MODULE_DIR
    if _MODULE_DIR is None:
        _MODULE_DIR = tempfile.mkdtemp(prefix="srcad_fuzz_")
        atexit.register(shutil.rmtree, _MODULE_DIR, ignore_errors=True)
    name = f"srcad_fuzz_{tag}_{os.getpid()}_{next(_COUNTER)}"
    path = os.path.join(_MODULE_DIR, name + ".py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
