"""Fuzzing soundness (issue 21): differentiated values fed to library objects and protocols.

Small random programs (one argument ``x``, 2-4 statements, each a template drawn from
`TEMPLATES` applied to an earlier value) hand differentiated values to what srcad has no
op-table row for, or only lately has one for: ``np.r_[...]`` / ``np.c_[...]`` (with
scalars, constant slices, directives), subscripts of library objects (``np.s_``,
``np.index_exp``, ``np.mgrid``) and of a user object, library methods and attributes
(``.tolist()``, ``.item()``, ``.real``), ``float()`` / ``math.fsum``, np.full / np.full_like /
np.arange, a Python operator on a user object, iteration driven by a library
(``np.nditer``, ``map``, ``enumerate``, ``zip``), containers (list, tuple, dict). For each
program, in ``mode="source"`` and ``mode="tape"``, `check` asserts one of two outcomes:

* value and gradient match plain numpy and central differences (`srcad.testing.
  numerical_grad`, relative error 1e-5, retried at a second step where the first disagrees);
* or a deliberate `srcad.SrcadError` (not an ``internal error``, not a probe failure).

Anything else fails: a silent zero or wrong gradient, a wrong value, an internal crash. A
program plain numpy cannot run is skipped (the templates make few). The default run checks
``BATCHES * PER_BATCH`` programs (seeded, deterministic; under 60 s on a busy core);
``-m slow`` checks ``SLOW_BATCHES`` batches more. ``python -m tests.test_fuzz_library_objects
SEED INDEX`` prints and checks one program.

It catches the bug it was written for. Run on srcad as it was before issue 21 (commit
278865f: ``git checkout 278865f -- srcad`` with this file in place, then ``git checkout HEAD
-- srcad``), every default batch fails (11 of 11 tests), the first one on seed 0's first
program:

    def p0(x):
        t1 = np.r_[np.tanh(x), 2.0 * np.tanh(x)]
        t2 = [t1, t1 * 2.0][1]
        t3 = np.full(np.shape(t1), 0.5) * t1
        ...
    Failure: mode=source: gradient array([[0., 0., 0.], ...]) (zero) where differences
    give [...]

(np.r_'s subscript ran as an inactive expression: zero gradients in grad, vjp and jvp);
the other batches fail on np.c_, np.full / np.full_like's fill value (zero or partial
gradients, in tape mode too), np.arange's start and np.s_[x].

The templates after those (2026-12-04, third session) store differentiated values on user
objects the function builds -- weights loaded by a zip over a list of layers, a class-level
default set from outside, a copy.copy of a layer, an object rebuilt on each trip of a loop --
and read them back through the objects' methods. Run on srcad as it was when that session
began (``git worktree add /tmp/wt 167236f`` with this file copied in), 9 of the 15 default
tests fail: batch 0 with a silently wrong gradient in source mode (``for t3_l, t3_w in
zip(t3_ls, [t1]): t3_l.W = t3_w``, then ``t3_ls[0].forward(0.5)``: the loop ran as written
and nothing made the layer depend on ``t1``), the others with a crash from the layer's
``W = None`` read where the store was not seen, and `test_zip_zero_gradient_seed`.

The last templates write into a differentiated array in place through a library call or a
method on a view expression (``y[1:].sort()``, ``rng.shuffle(y)``, ``np.negative(y[::2],
out=y[::2])``). With srcad/analysis/refusals.py and srcad/frontend/pylower.py as they were
before (the session of 2026-12-02, fourth: ``git checkout a6693a9 -- srcad/analysis/
refusals.py srcad/frontend/pylower.py``), 26 of the 30 default batches fail: wrong
gradients in source mode for sorts, fills and partitions of a view, in both modes for a
shuffle.
"""

from __future__ import annotations

import os
import random
import sys
import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error
from tests import fuzz_programs as FP

PER_BATCH = 12
BATCHES = 12  # 144 programs in the default run (30 until 2026-12-04)
SLOW_BATCHES = 118  # (seeds 12-129)
FD_TOL = 1e-5

HEADER = '''
import copy
import math
import numpy as np


class Table:
    """A user object with a subscript."""

    def __getitem__(self, key):
        return key * 2.0


class Scale:
    """A user object with Python operators."""

    def __mul__(self, other):
        return other * 2.0

    __rmul__ = __mul__


class Holder:
    """A layer whose weight is a class-level default, set from outside (``layer.W = W``)."""
    W = None

    def read(self, v):
        return v * self.W


class Stateful:
    """A layer that keeps its weight from __init__ and its forward's output."""

    def __init__(self):
        self.W = 1.0
        self.out = None

    def forward(self, v):
        self.out = np.tanh(v * self.W)
        return self.out


LUT = Table()
SCALE = Scale()
'''

# (template, kind): {a} an earlier value (an array of any shape), {s} a scalar made from it,
# {n} a fresh name. "expr" templates are one expression; "stmt" ones are statements that
# assign {n}.
TEMPLATES = [
    ("np.r_[{a}, 2.0 * {a}]", "expr"),
    ("np.r_[{s}, np.ravel({a})]", "expr"),
    ("np.r_[0:3, np.ravel({a})]", "expr"),
    ("np.r_[np.ravel({a}), 1.5, {s}]", "expr"),
    ("np.r_[np.ravel({a})]", "expr"),
    ("np.r_['-1', np.atleast_2d({a}), np.atleast_2d({a}) * 0.5]", "expr"),
    ("np.r_['0,2', np.ravel({a}), np.ravel({a})]", "expr"),
    ("np.c_[np.ravel({a}), np.tanh(np.ravel({a}))]", "expr"),
    ("np.c_[np.ravel({a}), 0:np.size({a})]", "expr"),
    ("np.s_[{a}] * 2.0", "expr"),
    ("np.index_exp[{a}][0] + 1.0", "expr"),
    ("np.ravel({a})[np.s_[0:2]]", "expr"),
    ("np.ravel({a})[np.r_[0, 1]]", "expr"),
    ("np.sum(np.mgrid[0:3]) * {a}", "expr"),
    ("LUT[{a}]", "expr"),
    ("LUT[2] * {a}", "expr"),
    ("SCALE * {a}", "expr"),
    ("np.full(3, {s})", "expr"),
    ("np.full_like({a}, {s})", "expr"),
    ("np.full(np.shape({a}), 0.5) * {a}", "expr"),
    ("np.arange({s}, {s} + 2.5)", "expr"),
    ("np.arange(3) * {s}", "expr"),
    ("np.asarray({a}.tolist())", "expr"),
    ("{a}.item(0) * {a}", "expr"),
    ("np.sin({a}).real", "expr"),
    ("float({s}) * {a}", "expr"),
    ("np.float64({s}) * {a}", "expr"),
    ("math.fsum(np.ravel({a})) * {a}", "expr"),
    ("np.asarray(list(map(float, np.ravel({a}))))", "expr"),
    ("np.asarray(list(map(np.tanh, np.ravel({a}))))", "expr"),
    ("np.stack([v * v for v in np.ravel({a})])", "expr"),
    ("sum(v * 0.5 for v in np.ravel({a}))", "expr"),
    ("[{a}, {a} * 2.0][1]", "expr"),
    ("{{'k': {a} * 3.0}}['k']", "expr"),
    ("np.asarray(tuple(np.ravel({a})))", "expr"),
    ("np.concatenate([np.ravel({a}), np.ravel({a})[::-1]])", "expr"),
    ("{n} = 0.0\n    for v in np.nditer({a}):\n        {n} = {n} + v * 2.0", "stmt"),
    ("{n} = 0.0\n    for i, v in enumerate(np.ravel({a})):\n        {n} = {n} + v * i",
     "stmt"),
    ("{n} = 0.0\n    for u, v in zip(np.ravel({a}), np.ravel({a})[::-1]):\n"
     "        {n} = {n} + u * v", "stmt"),
    ("{n} = 0.0\n    for v in map(np.tanh, np.ravel({a})):\n        {n} = {n} + v", "stmt"),
    ("{n} = [v for v in np.ravel({a}).flat]", "stmt"),
    # in-place library writes into a differentiated array, through a view expression too
    ("{n} = np.ravel({a}) * 1.0\n    {n}[::-1].sort()", "stmt"),
    ("{n} = np.ravel({a}) * 1.0\n    {n}[1:].sort()", "stmt"),
    ("{n} = np.ravel({a}) * 1.0\n    {n}[:2].fill(0.5)", "stmt"),
    ("{n} = np.ravel({a}) * 1.0\n    {n}[1:].partition(0)", "stmt"),
    ("{n} = np.ravel({a}) * 1.0\n    np.random.default_rng(1).shuffle({n})", "stmt"),
    ("{n} = np.ravel({a}) * 1.0\n    np.random.default_rng(2).shuffle({n}[1:])", "stmt"),
    ("{n} = np.ravel({a}) * 1.0\n    np.negative({n}[::2], out={n}[::2])", "stmt"),
    ("{n} = np.ravel({a}) * 1.0\n    np.copyto({n}[::2], 0.5)", "stmt"),
    # weights stored on user objects the function builds, then read by their methods (a
    # zip over built layers gave zero gradients in source mode until 2026-12-04, third)
    ("{n}_ls = [Holder(), Holder()]\n    for {n}_l, {n}_w in zip({n}_ls, [{a}, {a} * 2.0]):\n"
     "        {n}_l.W = {n}_w\n    {n} = {n}_ls[1].read(1.5) + {n}_ls[0].read(0.5)", "stmt"),
    ("{n}_ls = [Stateful(), Stateful()]\n    for {n}_l, {n}_w in zip({n}_ls, [{a}]):\n"
     "        {n}_l.W = {n}_w\n    {n} = {n}_ls[0].forward(0.5) + {n}_ls[1].forward(1.0)",
     "stmt"),
    ("{n}_ls = [Holder(), Holder()]\n    for {n}_l, {n}_w in zip({n}_ls, [{a}, {a}]):\n"
     "        {n}_l.W = {n}_w\n        if {n}_l is {n}_ls[-1]:\n            break\n"
     "    {n} = {n}_ls[0].read(2.0)", "stmt"),
    ("{n}_l = Holder()\n    {n}_l.W = {a} * 3.0\n    {n} = {n}_l.read({a})", "stmt"),
    ("{n}_l = Stateful()\n    {n}_l.W = {a}\n    {n}_c = copy.copy({n}_l)\n"
     "    {n}_c.W = {n}_c.W * 2.0\n    {n} = {n}_l.forward(1.0) + {n}_c.forward(0.5)", "stmt"),
    # an object rebuilt on each trip of a loop (objects.py carries the new one's locals),
    # and one kept under a second name across the trips (right, or refused)
    ("{n}_s = Stateful()\n    {n}_s.W = {a}\n    for {n}_i in range(2):\n"
     "        {n}_t = Stateful()\n        {n}_t.W = {n}_s.W * 0.5 + {n}_s.forward(0.3)\n"
     "        {n}_s = {n}_t\n    {n} = {n}_s.forward(1.0)", "stmt"),
    ("{n}_s = Stateful()\n    {n}_s.W = {a}\n    {n}_p = {n}_s\n    for {n}_i in range(2):\n"
     "        {n}_p = {n}_s\n        {n}_s = Stateful()\n        {n}_s.W = {n}_p.W * 1.5\n"
     "    {n} = {n}_s.forward(1.0) + {n}_p.forward(0.5)", "stmt"),
]
SEED_ZIP = len(TEMPLATES) - 7  # the zip over built layers (test_zip_zero_gradient_seed)
SEED_BUG = 0  # np.r_[...]: the first template (see the module docstring)
SHAPES = [(3,), (2, 3), (4,)]
FINALS = ["np.sum(np.sin({t}))", "np.sum(np.tanh({t}) ** 2)", "np.sum(np.cos({t}) * 0.5)"]


def generate(rng: random.Random, index: int):
    """One program: (name, source, shape)."""
    shape = rng.choice(SHAPES)
    names = ["x"]
    lines = []
    for k in range(rng.randint(2, 4)):
        src, kind = TEMPLATES[rng.randrange(len(TEMPLATES))] if not (
            index == 0 and k == 0) else TEMPLATES[SEED_BUG]
        a = rng.choice(names)
        if rng.random() < 0.3:
            a = f"np.tanh({a})"
        n = f"t{k + 1}"
        text = src.format(a=a, s=f"np.sum({a})", n=n)
        lines.append(f"    {n} = {text}" if kind == "expr" else f"    {text}")
        names.append(n)
    terms = [rng.choice(FINALS).format(t=f"np.asarray({t})") for t in names[1:]]
    name = f"p{index}"
    body = "\n".join(lines)
    return name, f"def {name}(x):\n{body}\n    return {' + '.join(terms)}\n", shape


class Failure(AssertionError):
    pass


def _refusal(e: BaseException) -> bool:
    text = str(e)
    return isinstance(e, srcad.SrcadError) and "internal error" not in text and (
        "the error comes from the user's code" not in text)


def _fd(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [numerical_grad(fn, (x,), h=h) for h in (1e-6, 1e-5)]


def _close(g, fds) -> bool:
    g = np.asarray(g, np.float64)
    return any(rel_error(g, f) <= FD_TOL or np.max(np.abs(g - f), initial=0.0) <= 1e-9
               for f in fds)


def check(fn, x, source: str) -> dict:
    """{mode: "ok" | "refused"} for `fn` at `x`; raises Failure on a wrong value or
    gradient or a crash. None where plain numpy cannot run the program."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = fn(x.copy())
            float(want)
    except Exception:
        return None
    fds = None
    out = {}
    for mode in ("source", "tape"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value, g = srcad.value_and_grad(fn, mode=mode)(x)
        except Exception as e:  # classifying is the point
            if _refusal(e):
                out[mode] = "refused"
                continue
            raise Failure(f"mode={mode}: crash {type(e).__name__}: {e}\n{source}") from e
        if not np.allclose(value, want, rtol=1e-10, atol=1e-12):
            raise Failure(f"mode={mode}: value {value!r}, numpy {want!r}\n{source}")
        fds = fds or _fd(fn, x)
        if not _close(g, fds):
            zero = " (zero)" if not np.any(g) else ""
            raise Failure(f"mode={mode}: gradient {g!r}{zero} where differences give "
                          f"{fds[0]!r}\n{source}")
        out[mode] = "ok"
    return out


def run_batch(seed: int, n: int = PER_BATCH) -> dict:
    rng = random.Random(seed)
    programs = [generate(rng, seed * 1000 + i) for i in range(n)]
    mod = FP.import_source(HEADER + "\n\n" + "\n\n".join(p[1] for p in programs), "lib")
    tally = {"ok": 0, "refused": 0, "skipped": 0}
    for name, source, shape in programs:
        x = np.random.default_rng(seed).uniform(-1.0, 1.0, shape)
        res = check(getattr(mod, name), x, source)
        if res is None:
            tally["skipped"] += 1
            continue
        for v in res.values():
            tally[v] += 1
    return tally


@pytest.mark.parametrize("seed", range(BATCHES))
def test_library_objects_batch(seed):
    tally = run_batch(seed)
    assert tally["skipped"] <= PER_BATCH // 2, tally


def test_both_outcomes_are_exercised():
    """The generator reaches both sides of the rule: programs differentiated and programs
    refused (a fuzzer that only ever saw refusals would prove nothing about gradients)."""
    totals = {"ok": 0, "refused": 0, "skipped": 0}
    for seed in range(100, 103):
        for k, v in run_batch(seed).items():
            totals[k] += v
    assert totals["ok"] >= 5 and totals["refused"] >= 5, totals


@pytest.mark.slow
def test_library_objects_slow(request):
    """SLOW_BATCHES more batches: ``pytest -m slow tests/test_fuzz_library_objects.py`` or
    SRCAD_FUZZ_SLOW=1."""
    if "slow" not in (request.config.getoption("markexpr") or "") \
            and not os.environ.get("SRCAD_FUZZ_SLOW"):
        pytest.skip("the long run: ask with -m slow or SRCAD_FUZZ_SLOW=1")
    for seed in range(1000, 1000 + SLOW_BATCHES):
        run_batch(seed)


def test_r_zero_gradient_seed():
    """The bug the fuzzer was seeded with (template 0, np.r_ of a differentiated value), as
    the generator writes it: differentiated in both modes now, zero gradients before."""
    src = TEMPLATES[SEED_BUG][0].format(a="x")
    source = f"def p(x):\n    t1 = {src}\n    return np.sum(np.sin(np.asarray(t1)))\n"
    mod = FP.import_source(HEADER + "\n\n" + source, "lib")
    x = np.random.default_rng(0).uniform(-1.0, 1.0, (3,))
    assert check(mod.p, x, source) == {"source": "ok", "tape": "ok"}


def test_zip_zero_gradient_seed():
    """The weights loaded into built layers by a zip (template SEED_ZIP), as the generator
    writes it: right in both modes now; a zero gradient in source mode before (the loop ran
    as written, and the store into a layer of the list made no dependence)."""
    src = TEMPLATES[SEED_ZIP][0].format(a="x", n="t1")
    source = f"def p(x):\n    {src}\n    return np.sum(np.sin(np.asarray(t1)))\n"
    mod = FP.import_source(HEADER + "\n\n" + source, "lib")
    x = np.random.default_rng(0).uniform(-1.0, 1.0, (3,))
    assert check(mod.p, x, source) == {"source": "ok", "tape": "ok"}


if __name__ == "__main__":  # python -m tests.test_fuzz_library_objects SEED INDEX
    seed, index = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    progs = [generate(rng, seed * 1000 + i) for i in range(index + 1)]
    name, source, shape = progs[index]
    print(source)
    mod = FP.import_source(HEADER + "\n\n" + source, "lib")
    print(check(getattr(mod, name), np.random.default_rng(seed).uniform(-1, 1, shape), source))
