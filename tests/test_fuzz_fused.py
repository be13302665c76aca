"""The differential fuzz corpus, fused: every program's value and gradients with fuse=True
bit for bit equal to fuse=False -- with the memory plan on (the default), so also with the
kernels writing into the plan's buffers (out=: at least `MIN_PLANNED` programs a batch).

The programs are tests/fuzz_programs.py's (chains of 3-12 ops from the op table, branches,
loops, calls, float32 and float64, broadcasting arguments; see tests/test_fuzz.py). A batch's
programs are transformed inside one `srcad.lower.batch()`, so their kernels build as one
module. Each program is checked on the same arguments as test_fuzz.py's (a): its source-mode
value and gradients, unfused and fused, must have the same shape, dtype and bits; no kernel
call may take the Python fallback (that would mean the fuser planned for types the program
does not have) -- but for a row kernel's argument that is not in C order, which runs
numpy's code by design (at most `MAX_LAYOUT_SHARE` of a batch); and across a batch most
programs must actually fuse something.

`ROW_SEEDS` batches more are generated with ``rows=True``: chains through sums, means,
maxima and minima over the last axis with keepdims (centring, LayerNorm-like, softmax and
the stable softmax through the row's max, scaling) on rows of 3-17 values, which the fuser makes row kernels of (at least `MIN_ROWS_SHARE` of them).

The default run checks `DEFAULT_SEEDS` batches (the first seeds of test_fuzz.py's corpus);
``-m slow`` (or ``SRCAD_FUZZ_SLOW=1``) checks all of test_fuzz.py's default batches.

`THREADED_SEEDS` batches more (with copying reshapes among their ops: FP.generate(copies=True))
run what fused code does on large arrays, on the corpus's small ones: every chain of one op a
kernel (srcad.lower.fuse.ONE_OP_MIN at 1), every kernel, sum
over leading axes (`lead_sum`) and copying reshape (`reshaped`) on two of srcad's threads
(the runtime's size threshold at 0, the choice of threads off) -- bit for bit as above; a
good share of the programs must then call a one-op kernel or `lead_sum`, and some
`reshaped`.
"""

from __future__ import annotations

import os
import re
import warnings

import numpy as np
import pytest

import srcad
from srcad import build
from srcad.lower import batch
from tests import fuzz_programs as FP
from tests.kernel_threads import on_threads
from tests.test_fuzz import PER_BATCH, _bitwise, load_module
from tests.test_memplan_fused import _leaves, guard_kernels

DEFAULT_SEEDS = range(2)  # 100 programs, one kernel module per batch (3 until 2026-12-07,
# sixteenth: the suite's time; the slow test fuses the others of SLOW_SEEDS)
SLOW_SEEDS = range(12)  # (test_fuzz.py's default batches until 2026-12-07)
THREADED_SEEDS = (3, 4)  # batches run as large arrays are (see the docstring)
MIN_THREADED_SHARE = 0.4  # (seeds 3 and 4: 28 and 27 of 50 call a one-op kernel)
MIN_FUSED_SHARE = 0.5
MIN_PLANNED = 3  # programs per batch whose kernels write into a planned buffer (out=)
KERNEL_OUT = re.compile(r"= fused_\w+\(.*\bout=")
ROW_SEEDS = range(2)  # batches of row-chain programs
MIN_ROWS_SHARE = 0.3  # ... of which at least this share must get a row kernel (0.35 until
# 2026-12-07, eleventh: fuzz_python's new forms took draws -- seeds 0 and 1 now 17 of 49, 21 of 47)
# the one fallback a program may take: a row kernel's argument not in C order (a transposed
# value: numpy would lay out or sum its rows in another order, so numpy's code runs) --
# in at most this share of a batch's programs
ROW_LAYOUT = "numpy would lay out or sum its rows in another order"
MAX_LAYOUT_SHARE = 0.2
# a kernel's comment listing a last-axis keepdims reduction among what it replaces
ROW_KERNEL = re.compile(r"#   .*(sum|mean)\(.*keepdims=True")


def run_fused_batch(seed, n=PER_BATCH, rows=False, copies=False):
    programs = [FP.generate(FP.RandomChooser(seed * 100_003 + i), i, rows=rows, copies=copies)
                for i in range(n)]
    module = load_module(programs, f"fused{seed}{'r' if rows else ''}{'c' if copies else ''}")
    plans = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with batch():
            for prog in programs:
                fn = getattr(module, prog.name)
                args = prog.make_args(0)
                try:
                    plain = srcad.value_and_grad(fn, wrt=prog.wrt)
                    expect = plain(*args)
                except srcad.SrcadError:
                    continue  # refused unfused (test_fuzz.py counts these): nothing to compare
                fused = srcad.value_and_grad(fn, wrt=prog.wrt, fuse=True)
                fused.compiled(fused.bind(args, {}))  # lowered now, built at the block's end
                plans.append((prog, fused, args, expect))
    failures, n_fused, n_planned, n_rows, n_layout = [], 0, 0, 0, 0
    for prog, fused, args, expect in plans:
        # every out= a kernel gets is exactly one of its arguments, never a user's array
        guard_kernels(fused, args, list(_leaves(args)))
        before = build.stats()["fallbacks"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = fused(*args)
        stats = build.stats()
        if stats["fallbacks"] != before:
            if ROW_LAYOUT not in stats["last_fallback"]:
                failures.append(f"--- fell back: {stats['last_fallback']}\n{prog.source}")
            n_layout += 1  # (a row kernel's argument not in C order: numpy's code, by design)
        if "fused kernel" in srcad.source(fused):
            n_fused += 1
        if ROW_KERNEL.search(srcad.source(fused)):
            n_rows += 1
        if KERNEL_OUT.search(srcad.source(fused)):
            n_planned += 1  # (the memory plan wrote a kernel's result into a dying buffer)
        (ev, eg), (gv, gg) = expect, got
        single = not isinstance(prog.wrt, tuple)
        eg, gg = ((eg,), (gg,)) if single else (eg, gg)
        bad = [] if _bitwise(ev, gv) else ["value"]
        bad += [f"gradient {i}" for i, (e, g) in enumerate(zip(eg, gg)) if not _bitwise(e, g)]
        if bad:
            failures.append(f"--- {', '.join(bad)} differ fused\n{prog.source}\n"
                            f"{srcad.source(fused)}")
    return len(plans), n_fused, failures, n_planned, n_rows, n_layout


def _check(seed, rows=False):
    total, n_fused, failures, n_planned, n_rows, n_layout = run_fused_batch(seed, rows=rows)
    assert not failures, f"{len(failures)} program(s) differ fused:\n" + "\n".join(failures)
    assert n_fused >= MIN_FUSED_SHARE * total, (n_fused, total)
    assert n_planned >= MIN_PLANNED, (n_planned, total)
    assert n_layout <= MAX_LAYOUT_SHARE * total, (n_layout, total)
    if rows:
        assert n_rows >= MIN_ROWS_SHARE * total, (n_rows, total)


@pytest.mark.parametrize("seed", ROW_SEEDS)
def test_fuzz_fused_row_chains_batch(seed):
    """Programs with chains through last-axis sums and means (FP.generate(rows=True)):
    row kernels, bit for bit, with no fallback."""
    _check(seed, rows=True)


@pytest.mark.parametrize("seed", DEFAULT_SEEDS)
def test_fuzz_fused_batch(seed):
    _check(seed)


@pytest.mark.slow
def test_fuzz_fused_all_default_batches(request):
    """test_fuzz.py's first 12 batches fused, those the default run leaves (500 programs)."""
    if "slow" not in (request.config.getoption("markexpr") or "") \
            and not os.environ.get("SRCAD_FUZZ_SLOW"):
        pytest.skip("the whole corpus fused: ask with -m slow or SRCAD_FUZZ_SLOW=1")
    for seed in SLOW_SEEDS:
        if seed not in DEFAULT_SEEDS:
            _check(seed)


@pytest.mark.parametrize("seed", THREADED_SEEDS)
def test_fuzz_fused_batch_as_large_arrays_run(seed, monkeypatch):
    """Fused code's plain ops on srcad's threads (issue 25), at the corpus's sizes."""
    from srcad import runtime
    from srcad.lower import fuse

    monkeypatch.setattr(fuse, "ONE_OP_MIN", 1)
    monkeypatch.setattr(runtime, "_COPY_MIN", 0)
    sources = []
    real = srcad.source
    monkeypatch.setattr(srcad, "source", lambda t: sources.append(real(t)) or sources[-1])
    with on_threads(2):
        total, n_fused, failures, _, _, n_layout = run_fused_batch(seed, copies=True)
    assert not failures, f"{len(failures)} program(s) differ fused:\n" + "\n".join(failures)
    assert n_layout <= MAX_LAYOUT_SHARE * total, (n_layout, total)
    plain = re.compile(r"= fused_[a-z]+_[0-9a-f]{6}\(|\blead_sum\(")
    threaded = {s for s in sources if plain.search(s)}
    assert len(threaded) >= MIN_THREADED_SHARE * total, (len(threaded), total)
    assert any("lead_sum(" in s for s in threaded) and any("reshaped(" in s for s in sources)


def test_batch_kernels_are_not_callable_inside_the_block():
    def f(x):
        return np.sum(np.tanh(x * 2.0) * x)

    x = np.linspace(-1, 1, 8)
    g = srcad.grad(f, fuse=True)
    with batch():
        g.compiled(g.bind((x,), {}))
        with pytest.raises(RuntimeError, match="inside the srcad.lower.batch"):
            g(x)
    np.testing.assert_array_equal(g(x), srcad.grad(f)(x))
