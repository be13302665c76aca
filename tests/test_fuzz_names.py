"""Differential fuzzing of the names a differentiated function reads (issue 21).

A transformed function means what calling the function means *at the moment of each call*:
module globals, class attributes, attributes of global objects, functions bound to globals,
callees' globals, closure cells (srcad/frontend/guards.py). This file generates small random
modules whose function `f` reads such names in random combinations -- a float folded into the
code, an array injected by reference, a numpy function bound to a global, a class attribute,
an instance attribute, a global dict, a loop count, a callee that reads globals itself, a
closure cell changed through `nonlocal` -- and then, between calls of the *same* transformed
functions (and of new ones), rebinds random names: a new float, an equal float (a new object
of equal value), a new array of the same shape (the code is kept, the module rebound), an
in-place change, another numpy function, another callee, a new loop count, a new dict.

After every change, each transform must agree with calling `f` then:
  * `value_and_grad` (source, fuse=True, tape) returns exactly `f(x)` and a gradient that
    matches central differences of `f` as it is now;
  * `grad`, `vjp`'s pullback and `jvp` agree with that gradient (jvp against the
    directional derivative);
  * source and tape give the same gradient.

The fuzzer is evidence only if it catches the bug it was built for: `test_fuzzer_catches_
frozen_names` turns the guards off (every check says "holds", which is exactly srcad before
issue 21: names frozen at the first transform) and requires the fuzzer to report failures.
"""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest

import srcad
from srcad.frontend import guards
from srcad.testing import numerical_grad, rel_error
from tests.fuzz_programs import import_source

N_PROGRAMS = int(os.environ.get("SRCAD_FUZZ_NAMES", "5"))  # (12 until 2026-12-04)
ACTS = ("tanh", "sin", "cos", "arctan")

TERMS = {
    "float": "t = np.sum(S0 * x * x)",
    "array": "t = np.sum(ACT(x) * W)",
    "class_attr": "t = Cfg.beta * np.sum(np.sin(x))",
    "instance_attr": "t = cfg.gamma * np.sum(x ** 2)",
    "dict": "t = P['a'] * np.sum(np.cos(x))",
    "loop": "h = x\n    for i in range(K):\n        h = np.tanh(h * S1 + W)\n    t = np.sum(h)",
    "callee": "t = np.sum(helper(x) * x)",
    "function": "t = np.sum(ACT(x * S1))",
    # a module's dict of functions called through, and a factory picking a function by a
    # name (chosen.py folds its branches; the item is guarded like a global: 2026-12-04)
    "registry": "t = np.sum(REG['a'](x) * S1)",
    "factory": "t = np.sum(pick_act('a')(x)) + np.sum(pick_act('b')(x * S0))",
    # an attribute stored by `setattr` during the call, then read (source mode read the
    # value from before the store until 2026-12-04)
    "setattr": "setattr(Cfg, 'delta', S0 * 0.5)\n    t = Cfg.delta * np.sum(x * x)",
}


def module_source(rng: np.random.Generator, n: int) -> tuple[str, list[str]]:
    """A module with the names and a function `f` (and a closure `f_closure`) reading a random
    subset of them; returns (source, the term kinds used)."""
    kinds = list(rng.choice(sorted(TERMS), size=int(rng.integers(2, 5)), replace=False))
    body = "\n    ".join(f"{TERMS[k]}\n    total = total + t" for k in kinds)
    f = f"def f(x):\n    total = 0.0\n    {body}\n    return total\n"
    return textwrap.dedent(f"""\
        import numpy as np

        S0 = {rng.uniform(0.5, 2):.3f}
        S1 = {rng.uniform(0.2, 0.9):.3f}
        K = {int(rng.integers(1, 4))}
        W = np.linspace(-0.5, 0.7, {n})
        ACT = np.{rng.choice(ACTS)}
        P = {{"a": {rng.uniform(0.5, 2):.3f}}}
        REG = {{"a": np.{rng.choice(ACTS)}}}


        class Cfg:
            beta = {rng.uniform(0.5, 2):.3f}
            delta = 1.0


        class Holder:
            def __init__(self, gamma):
                self.gamma = gamma


        cfg = Holder({rng.uniform(0.5, 2):.3f})


        def helper(h):
            return ACT(h) * S1


        def helper_alt(h):
            return np.sin(h) * S0 + h


        def pick_act(name):
            if name == "a":
                return REG["a"]
            return ACT


        def make(c):
            def inner(x):
                return np.sum(np.tanh(c * x)) + f(x) * c

            def set_c(v):
                nonlocal c
                c = v

            return inner, set_c


        """) + f + f"\n\nf_closure, set_c = make({rng.uniform(0.5, 2):.3f})\n", kinds


def mutate(mod, rng: np.random.Generator) -> str:
    """Rebind (or change in place) one name the module's functions read; says which."""
    kind = rng.choice(["S0", "S0_equal", "S1", "K", "W", "W_inplace", "ACT", "beta", "gamma",
                       "P", "P_entry", "helper", "closure", "REG_entry"])
    if kind == "S0":
        mod.S0 = float(rng.uniform(0.5, 3))
    elif kind == "S0_equal":
        mod.S0 = float(repr(mod.S0))  # an equal value, another object
    elif kind == "S1":
        mod.S1 = float(rng.uniform(0.2, 0.9))
    elif kind == "K":
        mod.K = int(rng.integers(0, 4))
    elif kind == "W":
        mod.W = rng.uniform(-1, 1, mod.W.shape)
    elif kind == "W_inplace":
        mod.W[...] = rng.uniform(-1, 1, mod.W.shape)
    elif kind == "ACT":
        mod.ACT = getattr(np, str(rng.choice(ACTS)))
    elif kind == "beta":
        mod.Cfg.beta = float(rng.uniform(0.5, 3))
    elif kind == "gamma":
        mod.cfg.gamma = float(rng.uniform(0.5, 3))
    elif kind == "P":
        mod.P = {"a": float(rng.uniform(0.5, 3))}
    elif kind == "P_entry":
        mod.P["a"] = float(rng.uniform(0.5, 3))
    elif kind == "helper":
        mod.helper, mod.helper_alt = mod.helper_alt, mod.helper
    elif kind == "REG_entry":
        mod.REG["a"] = getattr(np, str(rng.choice(ACTS)))
    else:
        mod.set_c(float(rng.uniform(0.5, 3)))
    return str(kind)


def disagreements(fn, transforms: dict, x: np.ndarray) -> list[str]:
    """What each transform gets wrong against calling `fn` now (empty: all agree). The
    transforms run first, right after a change: a function that stores into a name and reads
    it back (`setattr(Cfg, "delta", S0 * 0.5)`) must not lean on a Python call made before."""
    v = np.random.default_rng(1).standard_normal(x.shape)
    got, bad = {}, []
    for name, t in transforms.items():
        try:
            if "value_and_grad" in name:
                got[name] = t(x.copy())
            elif name == "vjp":
                value, pullback = srcad.vjp(fn, x.copy())
                got[name] = (value, pullback(1.0)[0])
            elif name == "jvp":
                got[name] = srcad.jvp(fn, (x.copy(),), (v,))
            else:
                got[name] = (None, t(x.copy()))
        except srcad.SrcadError as e:  # no refusal is expected in these programs
            bad.append(f"{name}: SrcadError {e}")
    want = fn(x.copy())
    fd = numerical_grad(fn, (x.copy(),))
    grads = {}
    for name, (value, g) in got.items():
        if value is not None and not np.array_equal(value, want):
            bad.append(f"{name}: value {value!r} != f(x) {want!r}")
        if name == "jvp":
            if rel_error(g, np.sum(fd * v)) > 1e-6:
                bad.append(f"jvp: tangent {g!r} != {np.sum(fd * v)!r}")
            continue
        grads[name] = g
        if rel_error(g, fd) > 1e-6:
            bad.append(f"{name}: gradient off by {rel_error(g, fd):.2e} from differences")
    if "grad" in grads and "grad_tape" in grads and \
            rel_error(grads["grad"], grads["grad_tape"]) > 1e-12:
        bad.append("source and tape gradients differ")
    return bad


def make_transforms(fn, fuse: bool) -> dict:
    out = {"grad": srcad.grad(fn), "grad_tape": srcad.grad(fn, mode="tape"),
           "value_and_grad": srcad.value_and_grad(fn), "vjp": None, "jvp": None}
    if fuse:
        out["value_and_grad_fused"] = srcad.value_and_grad(fn, fuse=True)
    return out


def run_program(seed: int, rounds: int = 4) -> list[str]:
    """Build one random module, then call its transforms before and after random changes;
    returns every disagreement, each with the program's seed and the change before it."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    source, _ = module_source(rng, n)
    mod = import_source(source, f"names{seed}")
    x = rng.uniform(-1, 1, n)
    fuse = seed % 4 == 0  # (fused builds cost a compile each: a quarter of the programs)
    kept = {"f": make_transforms(mod.f, fuse), "f_closure": make_transforms(mod.f_closure,
                                                                            False)}
    report, changes = [], []
    for r in range(rounds):
        for which, transforms in kept.items():
            fn = getattr(mod, which)
            fresh = {f"new {k}": t for k, t in make_transforms(fn, False).items()
                     if k in ("grad", "value_and_grad")}
            for problem in disagreements(fn, {**transforms, **fresh}, x):
                report.append(f"seed {seed}, {which}, after {changes or 'no change'}: "
                              f"{problem}")
        changes = [mutate(mod, rng) for _ in range(int(rng.integers(1, 3)))]
    if report:
        report.append("program:\n" + source)
    return report


@pytest.mark.parametrize("seed", range(N_PROGRAMS))
def test_names_read_at_each_call(seed):
    problems = run_program(seed)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_names_read_at_each_call_more(request):
    """200 more programs (~3 min): ``pytest -m slow tests/test_fuzz_names.py`` or
    ``SRCAD_FUZZ_SLOW=1`` (CI runs every test, so this one only when asked)."""
    if "slow" not in (request.config.getoption("markexpr") or "") \
            and not os.environ.get("SRCAD_FUZZ_SLOW"):
        pytest.skip("200-program run: ask with -m slow or SRCAD_FUZZ_SLOW=1")
    problems = [p for seed in range(N_PROGRAMS, 212) for p in run_program(seed)]
    assert not problems, "\n".join(problems)


def test_fuzzer_catches_frozen_names(monkeypatch):
    """The seeded bug: with every guard saying "holds", names are frozen at the first
    transform (srcad before issue 21), and the fuzzer must see it."""
    monkeypatch.setattr(guards.Guards, "holds", lambda self: True)
    def shown(found):
        return any("gradient off" in p or "value" in p for p in found)

    found = []
    for seed in range(4):  # (until a program shows it)
        found += run_program(1000 + seed)
        if shown(found):
            break
    assert shown(found), found
