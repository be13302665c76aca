"""Differential fuzzing of functions used as values (issue 23's front door: closures).

Code people write passes functions around: a list of layers made by factories
(`make_dense(W, b)`), lambdas over the weights walked by a loop, `compose(*fns)`, an
activation handed to a helper, `functools.reduce(lambda h, f: f(h), fns, x)`. Each of those
closes over values the gradient flows through. This file generates small random modules whose
function `f(W, b, x)` makes such closures in random ways -- a lambda, a nested def, a factory's
result, a composition of earlier ones, a numpy function, a lambda whose default reads a name
(`lambda h, s=s: h * s`: that value, from when it was made) -- rebinds the names they close over
after making them (Python's closures read a name when they are called: late binding, the
classic `for k in ks: fs.append(lambda h: h * k)` included), and calls them through every
spelling above.

Each program, at random inputs:
  * `value_and_grad` (source) returns exactly what calling `f` returns, and a gradient that
    matches central differences of `f`;
  * tape mode gives the same gradient bit for bit, `fuse=True` the same to rounding;
  * a refusal is a `srcad.SrcadError` (counted, not a failure); any other exception fails.

`test_fuzzer_catches_early_binding` seeds the bug this class invites -- a closure reading the
values its names held when it was made, not when it is called -- and requires the fuzzer to
report it.
"""

from __future__ import annotations

import os
import random
import textwrap

import numpy as np
import pytest

import srcad
from srcad.frontend import closure_values
from srcad.testing import numerical_grad, rel_error
from tests.fuzz_programs import import_source

BATCHES = int(os.environ.get("SRCAD_FUZZ_CLOSURES", "4"))
PER_BATCH = 12

HEADER = textwrap.dedent("""\
    import functools

    import numpy as np


    def relu(z):
        return np.maximum(z, 0.0)


    def make_dense(W, b):
        def dense(h):
            return h @ W + b
        return dense


    def make_scale(s):
        return lambda h: h * s


    def compose(*fs):
        def run(h):
            for g in fs:
                h = g(h)
            return h
        return run


    def apply_all(fs, h):
        for g in fs:
            h = g(h)
        return h


    def layer(h, W, act):
        return act(h @ W)
    """)

# what a closure computes from h (4 x 3) and the names it closes over: W (3 x 3), b (3,),
# s (a 0-d value), c (3,)
BODIES = ("h @ W", "h * s", "np.tanh(h + c)", "h @ W + b", "np.sin(h) * s", "h * c - b")
REBINDS = ("W = W * 0.5", "s = s * 1.5 + 0.25", "c = np.cos(c)", "b = b + s")


def generate(r: random.Random) -> str:
    """One module: HEADER, then `f(W, b, x)`."""
    lines = ["s = np.sum(W) * 0.1", "c = np.tanh(b)"]
    fns: list[str] = []
    for k in range(r.randint(1, 4)):
        name = f"f{k}"
        kind = r.choice(["lambda", "def", "dense", "scale", "numpy", "compose", "loop",
                         "calls", "pick", "default", "loop_default"])
        if kind in ("compose", "calls", "pick") and len(fns) < 2:
            kind = "lambda"
        if kind == "lambda":
            lines.append(f"{name} = lambda h: {r.choice(BODIES)}")
        elif kind == "def":
            lines += [f"def {name}(h):", f"    return {r.choice(BODIES)}"]
        elif kind == "dense":
            lines.append(f"{name} = make_dense({r.choice(['W', 'W.T', 'W * s'])}, b)")
        elif kind == "scale":
            lines.append(f"{name} = make_scale({r.choice(['s', 'c', 'b * 0.5'])})")
        elif kind == "numpy":
            lines.append(f"{name} = {r.choice(['np.tanh', 'relu', 'np.sin'])}")
        elif kind == "compose":
            lines.append(f"{name} = compose({', '.join(r.sample(fns, 2))})")
        elif kind == "default":  # (a default reads its value when the lambda is made)
            v = r.choice(["s", "c", "W"])
            body = {"s": "h * s", "c": "np.tanh(h + c)", "W": "h @ W"}[v]
            lines.append(f"{name} = lambda h, {v}={v}: {body}")
        elif kind == "loop_default":  # (each lambda its own trip's k; a range's loop is
            # written out per trip where it makes closures: pylower.range_making_closures)
            over = r.choice(["(0.5, 2.0)", "(s, c)", "range(2)", "range(1, 4, 2)"])
            lines += [f"{name}s = []", f"for k in {over}:",
                      f"    {name}s.append(lambda h, k=k: h * k + {r.choice(['b', '0.1'])})",
                      f"{name} = compose(*{name}s)"]
        elif kind == "calls":  # (a closure calling closures, which it reads when called)
            a, b_ = r.sample(fns, 2)
            lines.append(f"{name} = lambda h: {a}(h) * s + {b_}(h * 0.5)")
        elif kind == "pick":  # (one of two, by a value known only when f runs)
            a, b_ = r.sample(fns, 2)
            lines.append(f"{name} = {a} if np.sum(x) > 0.0 else {b_}")
        else:  # (each lambda reads the loop's last k when it is called: Python's closures)
            lines += [f"{name}s = []", f"for k in ({r.choice(['0.5, 2.0', 's, c'])}):",
                      f"    {name}s.append(lambda h: h * k + {r.choice(['b', '0.1'])})",
                      f"{name} = compose(*{name}s)"]
        fns.append(name)
        if r.random() < 0.35:
            lines.append(r.choice(REBINDS))
    chosen = [r.choice(fns) for _ in range(r.randint(1, 3))]
    use = r.choice(["tuple_loop", "list_loop", "chain", "apply_all", "layer", "reduce",
                    "compose", "index", "dict", "range_loop", "reversed_loop"])
    if use == "tuple_loop":
        lines += [f"for g in ({', '.join(chosen)},):", "    h = g(h)"]
    elif use in ("list_loop", "reversed_loop"):
        walk = "fs" if use == "list_loop" else "reversed(fs)"
        lines += [f"fs = [{chosen[0]}]"] + [f"fs.append({n})" for n in chosen[1:]] + [
            f"for g in {walk}:", "    h = g(h)"]
    elif use == "chain":
        lines.append("h = " + "".join(f"{n}(" for n in chosen) + "h" + ")" * len(chosen))
    elif use == "apply_all":
        lines.append(f"h = apply_all([{', '.join(chosen)}], h)")
    elif use == "layer":
        lines.append(f"h = layer(h, W, {chosen[0]})")
    elif use == "reduce":
        lines.append(f"h = functools.reduce(lambda a, g: g(a), [{', '.join(chosen)}], h)")
    elif use == "compose":
        lines.append(f"h = compose({', '.join(chosen)})(h)")
    elif use == "dict":
        lines += ["acts = {" + ", ".join(f"'k{i}': {n}" for i, n in enumerate(chosen)) + "}",
                  f"h = acts['k{r.randrange(len(chosen))}'](h)"]
    elif use == "range_loop":  # (called on every trip of a loop srcad does not unroll)
        lines += ["for i in range(2):", f"    h = {chosen[0]}(h) * 0.5"]
    else:
        lines += [f"fs = ({', '.join(chosen)},)", f"h = fs[{r.randrange(len(chosen))}](h)"]
    lines.append(r.choice(["return np.sum(np.tanh(h) * h)", "return np.sum(h * h) * 0.1",
                           "return np.sum(np.sin(h)) + np.sum(h * s)"]))
    body = "\n".join("    " + ln for ln in ["h = x", *lines])
    return HEADER + "\n\ndef f(W, b, x):\n" + body + "\n"


def check(fn, seed: int) -> tuple[str, list[str]]:
    """("right" | "refused", [disagreements])"""
    rng = np.random.default_rng(seed)
    args = (rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3) * 0.5,
            rng.standard_normal((4, 3)))
    wrt = (0, 1, 2)
    want = fn(*args)
    try:
        value, grads = srcad.value_and_grad(fn, wrt=wrt)(*args)
    except srcad.SrcadError as e:
        if "comes from the user's code" in str(e):  # (the plain call ran: srcad's)
            return "refused", [f"an error blamed on the user's code: {e}"]
        return "refused", []
    bad = []
    if value != want:
        bad.append(f"value {value!r}, calling f gives {want!r}")
    fd = numerical_grad(fn, args, wrt=wrt)
    for name, g, d in zip("Wbx", grads, fd):
        if rel_error(g, d) > 1e-5:
            bad.append(f"d{name} off by {rel_error(g, d):.1e} from central differences")
    tape = srcad.grad(fn, wrt=wrt, mode="tape")(*args)
    if not all(np.array_equal(g, t) for g, t in zip(grads, tape)):
        bad.append("source and tape gradients differ")
    fused = srcad.grad(fn, wrt=wrt, fuse=True)(*args)
    if not all(rel_error(g, t) < 1e-10 for g, t in zip(grads, fused)):
        bad.append("fuse=True differs")
    return "right", bad


def run_batch(seed: int) -> tuple[dict, list[str]]:
    tally, failures = {"right": 0, "refused": 0}, []
    for i in range(PER_BATCH):
        source = generate(random.Random(seed * 1009 + i))
        mod = import_source(source, "closures")
        try:
            kind, bad = check(mod.f, seed * 1009 + i)
        except Exception as e:  # noqa: BLE001  (a crash: reported with its program)
            kind, bad = "crash", [f"{type(e).__name__}: {e}"]
        tally[kind] = tally.get(kind, 0) + 1
        if bad:
            failures.append(f"--- batch {seed} program {i}: {'; '.join(bad)}\n{source}")
    return tally, failures


@pytest.mark.parametrize("seed", range(BATCHES))
def test_fuzz_closures_batch(seed):
    """Each program right or refused, and the class followed, not refused: at most one program
    in six of each batch refused (checked over all batches at once, by a test that ran them
    again, until 2026-12-07; seeds 0-3 refuse 0, 1, 0, 0 of 12)."""
    tally, failures = run_batch(seed)
    assert not failures, f"{tally}\n" + "\n".join(failures)
    assert tally.get("refused", 0) * 6 <= sum(tally.values()), tally


def test_fuzzer_catches_early_binding(monkeypatch):
    """Seeded bug: closures made here read the values their names held when made."""
    real = closure_values.ClosureValuesMixin.closure_of

    def early(self, atom):
        c = real(self, atom)
        made = self.closure_made.get(getattr(self.followed(atom), "name", None))
        if c is None or made is None:
            return c
        return closure_values.Closure(c.fn, c.names, {k: now for k, (_, now) in made.items()})

    monkeypatch.setattr(closure_values.ClosureValuesMixin, "closure_of", early)
    # (the first batch that finds it is enough: the seeded bug is in every closure made)
    assert any(run_batch(seed)[1] for seed in range(BATCHES))


if __name__ == "__main__":  # python -m tests.test_fuzz_closures SEED [INDEX]
    import sys

    seed = int(sys.argv[1])
    if len(sys.argv) > 2:
        src = generate(random.Random(seed * 1009 + int(sys.argv[2])))
        print(src)
        print(check(import_source(src, "closures").f, seed * 1009 + int(sys.argv[2])))
    else:
        t, fails = run_batch(seed)
        print(t)
        print("\n".join(fails))
