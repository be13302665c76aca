"""Differential fuzzing of state kept on objects (tests/fuzz_object_state.py's programs).

Layer objects whose ``forward`` stores its result on the object (``self.output = ...``) and
returns nothing, the caller reading ``dense1.output`` / ``layer.prev.output`` /
``net.layers[-1].output`` afterwards, weights set on a layer by the function (``L1.W = W1``)
and read by its methods: before b2a4a18 / 330f56f / e3e1bd8 source mode read such attributes
as the value an earlier plain call had left on the object (a stale value, a zero or wrong
gradient, silently). Each program of a batch is checked twice, in a fresh module each time
("first call": the objects as ``__init__`` left them; "after a plain call": the function
run on other inputs first, so the objects hold other values), in source and tape mode (and
``fuse=True`` for every other program). Each must either raise `srcad.SrcadError` (a refusal,
counted by its message) or give exactly the plain call's value, a gradient (w.r.t. ``x`` and
every weight argument) matching central differences (rel 1e-6), and leave on the objects
what the plain call leaves (arrays, never srcad's Tensor; lists item by item). Anything else
escaping is a failure. Programs with a form in `KNOWN_OPEN` (wrong on main, each a strict
xfail with its smallest program) are counted "open" and do not fail a batch: empty since the
session of 2026-12-03 (the eight classes it held are test_fixed_class below).

Counts, the default run (seeds 0-19, 120 programs, 600 checks: programs x {first call,
after a plain call} x modes), ``python -m tests.test_fuzz_object_state 0 19`` from a
directory outside the repository (so that PYTHONPATH picks srcad):

  srcad at                        refused  passed  programs differ  of them outside KNOWN_OPEN
  1e46696 (before b2a4a18)          504      39          23                 5
  9e72a0f (b2a4a18, not the rest)   449      97          21                 3
  main b2769ee (with this file)     252     256          34                 0

    git -C /work/main worktree add --detach /work/wt-fuzzold 9e72a0f   # (and 1e46696)
    cp /work/main/srcad/_kernels*.so /work/wt-fuzzold/srcad/
    cd /tmp; export PYTHONPATH=/work/wt-fuzzold:/work/wt-fuzzstate
    python -m tests.test_fuzz_object_state 0 19
    python -m pytest -n 0 -q -p no:cacheprovider /work/wt-fuzzstate/tests/test_fuzz_object_state.py

11 of the programs that differ on 1e46696 (5 on 9e72a0f) are right or refused on main; the
pytest run fails 4 of the 20 default batches on 1e46696 (seeds 7, 10, 13, 19) and 2 on 9e72a0f
(10, 13), none on main. The smallest of them, on 1e46696 (seed 7: the b2a4a18 class, a wrong
gradient on the first call, the stale value after a plain call) and on 9e72a0f (seed 10: a
callee with a loop before its top-level ``self.output = h``, the e3e1bd8 class):

    def p0_f(x):                          def p1_f(x):       # forward: h = x; for i in
        p0_L3.forward(x)                      p1_L1.forward(x)   #   range(2): h = tanh(..)
        h1 = p0_L3.output                     h1 = p1_L1.output  # self.output = h
        return np.sum(h1 * h1)                return np.sum(h1 * h1)

On main the 34 programs that differ are all in the six open classes of KNOWN_OPEN (eight
strict xfails, test_known_open_class: 17 of the 36 failing checks are a cache appended to);
120 batches (720 programs) found no other. They differ on main more often than on the old
commits because those refused most of them (the forms main differentiates now reach the open
classes). Refusals on main by message (seeds 0-19, 252): 162 "read back from the object it
would carry no gradient" (forward storing in a branch or a loop, or after a loop of its own),
38 ".append() has no derivative rule" (the cache), and 52 that blame the user's code although
the plain function runs (ValueError of a matmul, IndexError of ``self.cache[-1]``, TypeError
of None: srcad running a layer's method on the object's attribute as it is before the call --
``self.output = None``, an empty cache).

Session of 2026-12-03: the state a callee leaves is carried out by the local attrstate.py
keeps it in (a store in a branch or a loop included), an existing object scalarised by
objects.py and reached another way (``NET.layers[2]``, ``L3.prev``) is one object, the
values given to callees and given back rebind every local the caller keeps an attribute in,
``getattr(self, "x", None)`` start values read what the caller stored, plain-run callees
see the call's state, and a list kept across calls is appended to in place while the call
reads its copy. The generator also draws four more forwards (a list made again per call and
appended in a loop, a ``while`` loop, a helper method storing the output, the forward's own
store then the helper's). Seeds 0-19 with that generator:

  srcad at                        refused  passed  programs differ
  1e5a911 (before the session)      249      263          32
  main (this session)                 0      600           0

and 0 differ / 0 refused on seeds 20-79 (1,800 checks). The widened generator also found a
tape-mode bug on its first run: a list made in the call (``self.cache = []`` then appends)
kept the tape's Tensors (transformed._unwrap_attribute_state).

Session of 2026-12-03, third: the generator also stores into a list and a dict the *module*
keeps (``p_LOG.append(h)``, ``p_SAVED['z'] = z`` in a forward, and `step_kept` in f: append,
a store by key, ``.update``, ``.extend``; one in seven read back in the same call). Before
frontend/kept_globals.py source mode refused most of these stores ("has no derivative rule
... may change `h`", "assignment into something other than a local array") and
differentiated a read back as a constant: **a wrong gradient, silently** (seeds 0-9 with the
refusal of such reads taken out -- the seeded bug, /tmp/s10/seeded.py in the session's note:
3 programs differ, e.g. seed 4 p3_f gradient [-2.01, 2.24, -1.65] against differences
[-5.33, 4.67, -5.38]); tape mode left its own Tensors in the module's dict (seed 3 p5_f).
Now, seeds 0-9: 0 programs differ, 16 of 300 checks refused, every one at a read back.
"""

from __future__ import annotations

import collections
import copy
import os
import re
import sys
import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import numerical_grad, rel_error
from tests import fuzz_object_state as FS

PER_BATCH = int(os.environ.get("SRCAD_FUZZ_STATE_N", "6"))
BATCHES = 4  # the default run (20 until 2026-12-04, 8 until 2026-12-07): 4 x 6 programs,
# each cold and warm, source / tape (/ fuse)
SLOW_BATCHES = 116  # (seeds 4-119)
FD_TOL = 1e-6


class Failure(AssertionError):
    def __init__(self, msg, mode=None):
        super().__init__(msg)
        self.mode = mode


# Classes of program srcad still gets wrong on main (each minimised into a strict xfail below):
# a failure of a program with one of these forms *in source mode* (all of them are) is counted
# as "open", not failed; tape mode is held to every program.
KNOWN_OPEN: dict = {  # (the eight classes before were; fixed: test_fixed_class)
    # (session of 2026-12-07, fifteenth: the one held since the fourteenth -- weights set by
    # `object.__setattr__`, layers run by a loop picked at run time, `L3.prev.output` read
    # after: a ZERO gradient on the first call -- is closed: frontend/unknown_writes.py,
    # tests/test_unknown_writes.py)
}


def known_open(prog) -> str | None:
    for reason, test in KNOWN_OPEN.items():
        if test(prog.features):
            return reason
    return None


# -- the objects' state -------------------------------------------------------------------------
def objects(prog, mod):
    p = prog.name[:-1]  # ("p3_f" -> "p3_")
    return {n: getattr(mod, p + n) for n in prog.objects}


def snapshot(objs):
    """What each object holds now (its lists and dicts by content; a module-level list or
    dict: its items): `restore` puts it back, in the same containers."""
    return [(o, copy.copy(o), None) if type(o) in (list, dict) else
            (o, dict(o.__dict__), {a: copy.copy(v) for a, v in o.__dict__.items()
                                   if type(v) in (list, dict)}) for o in objs.values()]


def restore(snap):
    for o, attrs, held in snap:
        if held is None:  # (the module's own list or dict)
            o.clear()
            o.extend(attrs) if isinstance(o, list) else o.update(attrs)
            continue
        o.__dict__.clear()
        o.__dict__.update(attrs)
        for a, items in held.items():
            attrs[a].clear()
            if isinstance(items, list):
                attrs[a].extend(items)
            else:
                attrs[a].update(items)


def capture(objs):
    def copied(v):
        if isinstance(v, list):
            return [copied(u) for u in v]
        if isinstance(v, dict):
            return {k: copied(u) for k, u in v.items()}
        if isinstance(v, np.ndarray):
            return v.copy()
        return v

    return {n: {"items": copied(o)} if type(o) in (list, dict) else
            {a: copied(v) for a, v in o.__dict__.items()} for n, o in objs.items()}


def state_diff(got, want) -> str | None:
    """Where the objects' attributes after srcad's call differ from the plain call's."""
    def same(g, w):
        if isinstance(w, list):
            return isinstance(g, list) and len(g) == len(w) and all(map(same, g, w))
        if isinstance(w, dict):
            return isinstance(g, dict) and g.keys() == w.keys() and all(
                same(g[k], w[k]) for k in w)
        if isinstance(w, np.ndarray):
            return type(g) is np.ndarray and g.shape == w.shape and np.allclose(
                g, w, rtol=1e-12, atol=1e-14)
        if isinstance(w, (float, int, bool, type(None), np.generic)):
            return type(g) is type(w) and g == w
        return g is w

    for n in want:
        if set(got[n]) != set(want[n]):
            return f"{n}: attributes {sorted(got[n])}, plain {sorted(want[n])}"
        for a, w in want[n].items():
            if not same(got[n][a], w):
                return f"{n}.{a}: {got[n][a]!r}, plain {w!r}"
    return None


# -- one check -----------------------------------------------------------------------------------
def refusal_reason(e: BaseException) -> str:
    """The message's gist, names and places taken out (to count refusals by reason)."""
    text = str(e).split("\n")[0]
    text = re.sub(r"^.*?line \d+[^:]*:\s*", "", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "_", text)
    text = re.sub(r"\bp\d+_\w+", "_", text)
    text = re.sub(r"\d+", "N", text)
    return text[:110]


def _fd(fn, args, wrt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [numerical_grad(fn, tuple(a.copy() for a in args), wrt=wrt, h=h)
                for h in (1e-6, 1e-5)]


def _close(g, fds, n) -> bool:
    def ok(g, f):
        g = np.asarray(g, np.float64)
        return rel_error(g, f) <= FD_TOL or np.max(np.abs(g - f), initial=0.0) <= 1e-9

    if n == 1:
        return any(ok(g, f) for f in fds)
    return any(all(ok(gi, fi) for gi, fi in zip(g, f)) for f in fds)


MODES = {"source": {"mode": "source"}, "tape": {"mode": "tape"},
         "fuse": {"mode": "source", "fuse": True}}


def check(fn, objs, args, warm_args, modes, tally) -> None:
    """Each mode in `modes`: a refusal (counted in tally) or exactly the plain call's value and
    objects' state (`objs`: {name: object}) and a gradient matching central differences;
    raises Failure otherwise."""
    if warm_args is not None:
        fn(*[a.copy() for a in warm_args])  # (other values on the objects)
    start = snapshot(objs)
    want = fn(*[a.copy() for a in args])
    want_state = capture(objs)
    n = len(args)
    wrt = tuple(range(n)) if n > 1 else 0
    fds = None
    for m in modes:
        restore(start)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value, g = srcad.value_and_grad(fn, wrt=wrt, **MODES[m])(
                    *[a.copy() for a in args])
        except srcad.SrcadError as e:
            if "comes from the user's code" in str(e):  # (the plain call ran: srcad's)
                raise Failure(f"{m}: an error blamed on the user's code: {e}", m) from e
            tally["refused"] += 1
            tally["reasons"][refusal_reason(e)] += 1
            continue
        except Exception as e:  # (classifying is the point)
            raise Failure(f"{m}: crash {type(e).__name__}: {e}", m) from e
        where = f"{m}, {'after a plain call' if warm_args is not None else 'first call'}"
        if not (isinstance(value, (float, np.floating)) and value == want):
            if not np.isclose(value, want, rtol=1e-12, atol=0.0):
                raise Failure(f"{where}: value {value!r}, plain {want!r}", m)
        diff = state_diff(capture(objs), want_state)
        if diff:
            raise Failure(f"{where}: objects after the call: {diff}", m)
        if fds is None:
            restore(start)
            fds = _fd(fn, args, wrt)
        if not _close(g, fds, n):
            zero = " (zero)" if not any(np.any(gi) for gi in (g if n > 1 else [g])) else ""
            raise Failure(f"{where}: gradient {g!r}{zero}, differences {fds[0]!r}", m)
        tally["passed"] += 1
    restore(start)


def run_batch(seed, n=PER_BATCH, verbose=False):
    """Check batch `seed`'s n programs, cold and warm. Returns the tally and the failures."""
    programs = FS.batch_programs(seed, n)
    mods = {"cold": FS.import_programs(programs, f"st{seed}c"),
            "warm": FS.import_programs(programs, f"st{seed}w")}
    tally = {"programs": 0, "checks": 0, "refused": 0, "passed": 0, "differ": 0, "open": 0,
             "reasons": collections.Counter(), "unfollowed": collections.Counter()}
    failures = []
    for i, prog in enumerate(programs):
        args = prog.make_args(seed * 100 + i)
        warm_args = prog.make_args(seed * 100 + i + 50)
        modes = ("source", "tape", "fuse") if i % 2 else ("source", "tape")
        tally["programs"] += 1
        bad = False
        # (the weights set by a route srcad must refuse: their reasons counted apart)
        reasons = tally["reasons"]
        if prog.features & {"weights unfollowed", "global read in a callee", "global in place",
                            "net filter_here", "net iterate_method", "kept read",
                            "A filled_shared", "B filled_shared"}:
            # (and, session of 2026-12-07, thirteenth: an array made on a layer and held by a
            # second attribute, then written in place -- refused by design; a read back of the
            # module's LOG after a store by a second name, `k = LOG; k.append(v)`, whose
            # refusal names the append)
            # (layers a filter / `[*...]` hands out; a layer's state read around a loop of
            # Net's method through `self.layers[0]`: refused, frontend `carried_around`)
            tally["reasons"] = tally["unfollowed"]
        for kind, warm in (("cold", None), ("warm", warm_args)):
            tally["checks"] += len(modes)
            try:
                check(getattr(mods[kind], prog.name), objects(prog, mods[kind]), args, warm,
                      modes, tally)
            except Failure as e:
                bad = True
                failures.append((prog, str(e), known_open(prog) if e.mode in (
                    "source", "fuse") else None))
                if verbose:
                    print(f"--- seed {seed} {prog.name} ({kind}): {e}\n{prog.source}")
        tally["differ"] += bad
        tally["reasons"] = reasons
    return tally, failures


@pytest.mark.parametrize("seed", range(BATCHES))
def test_object_state_batch(seed):
    tally, failures = run_batch(seed)
    print(f"seed {seed}: {tally['programs']} programs, {tally['checks']} checks, "
          f"{tally['refused']} refused, {tally['passed']} passed")
    new = [(prog, msg) for prog, msg, why in failures if why is None]
    if new:
        prog, msg = new[0]
        raise Failure(f"{len(new)} failing: {msg}\n{prog.source}")
    # (a batch that only saw refusals would prove nothing: seeds 0-3 pass 24, 20, 18, 24 of 30)
    assert tally["passed"] * 3 >= tally["checks"], tally


@pytest.mark.slow  # (its seeds are the slow set's; 21 s on a Zen 3 -- the default batches
# check that each passes a third of its checks or more)
def test_both_outcomes_are_exercised():
    """The generator reaches gradients, not only refusals (a fuzzer that only saw refusals
    would prove nothing) -- since the state carried across functions (frontend/state.py)
    every program of these batches is differentiated, none refused."""
    passed, reasons = 0, collections.Counter()
    for seed in (100, 101, 102):
        tally, _ = run_batch(seed)
        passed += tally["passed"]
        reasons.update(tally["reasons"])
    # (the one refusal left: a read of the module's LOG / SAVED after a store into it in the
    # same call, `step_kept`'s read back -- refused by design, frontend/kept_globals.py)
    # (programs whose weights go in by a route srcad does not follow -- `L1.__dict__['W'] =
    # W1`, `object.__setattr__`, `setattr` with a name a loop gives -- are refused where the
    # weights are read back, or run where they are not; and those whose `global GH` a module
    # function reads back, refused: their reasons are counted apart)
    # (58 of the 90 checks pass since those forms were drawn, 2026-12-05: 80 before)
    other = {r: k for r, k in reasons.items() if "what is read back would carry none" not in r}
    assert passed >= 50 and not other, (passed, reasons)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(BATCHES, BATCHES + SLOW_BATCHES))
def test_object_state_batch_slow(seed):
    test_object_state_batch(seed)


def main(argv):
    """python -m tests.test_fuzz_object_state [FIRST [LAST]] [-v]: batches FIRST..LAST."""
    verbose = "-v" in argv
    argv = [a for a in argv if a != "-v"]
    first = int(argv[0]) if argv else 0
    last = int(argv[1]) if len(argv) > 1 else first + BATCHES - 1
    totals = collections.Counter()
    reasons = collections.Counter()
    by_class = collections.Counter()
    for seed in range(first, last + 1):
        tally, failures = run_batch(seed, verbose=verbose)
        reasons.update(tally.pop("reasons"))
        totals.update(tally)
        print(f"seed {seed}: {tally['programs']} programs, {tally['checks']} checks: "
              f"{tally['refused']} refused, {tally['passed']} passed, {tally['differ']} "
              f"programs differ", flush=True)
        for prog, msg, why in failures:
            totals["open"] += why is not None
            by_class[why or "NEW"] += 1
            print(f"    {prog.name}: {msg.splitlines()[0][:150]} [{why or 'NEW'}]")
    print(f"total: {dict(totals)}")
    for why, k in by_class.most_common():
        print(f"  {k:4d} failing checks: {why}")
    print("refusals by reason:")
    for r, k in reasons.most_common():
        print(f"  {k:4d}  {r}")


if __name__ == "__main__":
    main(sys.argv[1:])


# -- the classes the fuzzer found wrong (open until the 2026-12-03 session), each as the smallest
# program it found: now right in both modes, first call and after a plain call -------------------
class Dense:
    def __init__(self, W, b, store="top"):
        self.W, self.b, self.store = W, b, store
        self.output = None
        self.prev = None
        self.cache = []
        self.saved = {}

    def forward(self, x):
        self.inputs = x
        self.output = np.tanh(x @ self.W + self.b)

    def forward_prev(self):
        self.forward(self.prev.output)

    def score(self):
        return np.sum(np.tanh(self.output) * self.b)

    def remember(self):
        self.cache.append(self.output * 1.0)

    def stash(self):
        self.saved["out"] = self.output * 1.0


class DenseTwice(Dense):
    def forward(self, x):
        self.inputs = x
        self.output = x @ self.W
        self.output = np.tanh(self.output + self.b)


class DenseLoop(Dense):
    def forward(self, x):
        self.inputs = x
        h = x
        for i in range(2):
            self.output = np.tanh(h @ self.W) + self.b
            h = self.output * 0.5


class DenseBranch(Dense):
    def forward(self, x):
        self.inputs = x
        z = x @ self.W + self.b
        if self.store == "squash":
            h = np.tanh(z)
        else:
            h = z * 0.5
        self.output = h


class DenseCache(Dense):
    def forward(self, x):
        self.inputs = x
        self.cache.append(np.tanh(x @ self.W))
        self.output = self.cache[-1] * 0.5 + self.b


class DenseFreshCache(Dense):
    def forward(self, x):
        self.inputs = x
        self.cache = []
        h = x
        for i in range(2):
            h = np.tanh(h @ self.W)
            self.cache.append(h)
        self.output = self.cache[-1] + self.b


class DenseHelper(Dense):
    def forward(self, x):
        self.inputs = x
        self.output = x @ self.W
        self._finish(self.output * 0.5)

    def _finish(self, z):
        self.z = z
        self.output = np.tanh(z) + self.b


class Act:
    def forward(self, x):
        self.inputs = x
        self.output = np.tanh(x) * 1.5


class Net:
    def __init__(self, layers):
        self.layers = layers
        for i, layer in enumerate(layers):
            layer.prev = layers[i - 1] if i > 0 else None

    def forward_loop(self, x):
        h = x
        for layer in self.layers:
            layer.forward(h)
            h = layer.output
        self.output = h


_R = np.random.RandomState(3)


def _w():
    return _R.uniform(-0.8, 0.8, (3, 3))


def _b():
    return _R.uniform(-0.5, 0.5, 3)


TW1, TW2 = DenseTwice(_w(), _b()), DenseTwice(_w(), _b())
TW2.prev = TW1
LOOPY, ACT = DenseLoop(_w(), _b()), Act()
NET_LOOPY = Net([Dense(_w(), _b()), ACT, LOOPY])
BR1 = DenseBranch(_w(), _b(), "squash")
NET_BR = Net([BR1, Act(), Dense(_w(), _b())])
D1, D2 = Dense(_w(), _b()), Dense(_w(), _b())
NET_D = Net([D1, Act(), D2])
D3 = Dense(_w(), _b())
D3.prev = D1
CACHED = DenseCache(_w(), _b())
FRESH = DenseFreshCache(_w(), _b())
HELPED = DenseHelper(_w(), _b())
ACT2 = Act()
NET_F = Net([FRESH, ACT2, Dense(_w(), _b())])


def prev_of_a_forward_storing_twice(x):
    TW1.forward(x)
    TW2.forward_prev()
    return np.sum(TW2.output * TW2.output)


def read_through_the_list_after_a_loop_store(x):
    LOOPY.forward(x)
    h = NET_LOOPY.layers[2].output
    return np.sum(h * h)


def read_through_the_list_after_weights_set(x, W):
    BR1.W = W
    BR1.forward(x)
    h = NET_BR.layers[-3].output
    return np.sum(h * h)


def a_method_reads_after_fs_own_loop(x):
    D1.forward(x)
    h = D1.output
    for layer in NET_D.layers:
        layer.forward(h)
    return D1.score()


def weights_set_then_a_method_loops_over_the_layers(x, W):
    D1.W = W
    D1.forward(x)
    NET_D.forward_loop(D1.output)
    h = NET_D.layers[-1].output * NET_D.output
    return np.sum(h * h)


def prev_after_weights_set(x, W):
    D1.W = W
    D1.forward(x)
    D3.forward_prev()
    h = D3.prev.output * 0.5 + D3.output
    return np.sum(h * h)


def forward_appends_to_its_cache(x):
    CACHED.forward(x)
    return np.sum(CACHED.output * CACHED.output)


def a_method_appends_to_the_cache(x):
    D1.forward(x)
    NET_D.layers[0].remember()
    h = NET_D.layers[0].cache[-1] * 0.75
    return np.sum(h * h)


def a_method_appends_to_a_list_made_in_a_loop_over_the_layers(x):
    for layer in [FRESH]:
        layer.forward(x)
    FRESH.remember()
    h = FRESH.cache[-1] * 0.75
    return np.sum(h * h)


def a_method_appends_to_a_list_forward_made(x):
    FRESH.forward(x)
    FRESH.remember()
    h = FRESH.cache[-1] * 0.75
    return np.sum(h * h)


def a_method_run_as_written_keeps_its_argument(x):
    HELPED.forward(x)
    h1 = HELPED.output + np.tanh(HELPED.z) * 0.5
    NET_F.layers[1].forward(h1)    # (its value unread: run as written, ACT2.inputs is h1)
    return np.sum(np.tanh(h1) * x)


def a_method_stores_into_a_kept_dict_read_through_the_list(x):
    D1.forward(x)
    D1.stash()
    h = NET_D.layers[0].saved["out"] * 0.75
    return np.sum(h * h)


_ALL = {"TW1": TW1, "TW2": TW2, "LOOPY": LOOPY, "ACT": ACT, "NET_LOOPY": NET_LOOPY,
        "BR1": BR1, "NET_BR": NET_BR, "D1": D1, "D2": D2, "D3": D3, "NET_D": NET_D,
        "CACHED": CACHED, "FRESH": FRESH, "ACT2": ACT2, "NET_F": NET_F,
        "HELPED": HELPED}
_X = np.array([0.31, -0.52, 0.77])
_W = _R.uniform(-0.8, 0.8, (3, 3))

FIXED_CASES = [
    (prev_of_a_forward_storing_twice, "source mode: NameError 'TW2_prev' is not defined (an "
     "internal crash, not a SrcadError) where forward stores self.output twice or in a loop"),
    (read_through_the_list_after_a_loop_store, "an attribute forward stores in a loop, read "
     "back through net.layers[i] rather than the global: not refused, the stale value and a "
     "wrong gradient (source mode)"),
    (read_through_the_list_after_weights_set, "weights set on a layer through its global, its "
     "output read back through net.layers[i]: a wrong gradient (source mode), a stale value "
     "after a plain call"),
    (a_method_reads_after_fs_own_loop, "f's own loop over net.layers calls forward; a method "
     "reading self.output after it reads the value before the loop (source mode)"),
    (weights_set_then_a_method_loops_over_the_layers, "weights set on a layer, then a "
     "method's loop over the layers: the objects' output left wrong, a stale value after a "
     "plain call (source mode)"),
    (prev_after_weights_set, "weights set on a layer, then another layer's forward_prev "
     "reads its output: a wrong gradient, a stale value after a plain call (source mode)"),
    (forward_appends_to_its_cache, "forward appends to self.cache and reads self.cache[-1]: a "
     "zero gradient after a plain call, an IndexError blamed on the user's code on the first "
     "(source mode)"),
    (a_method_appends_to_the_cache, "a method appends self.output to self.cache, the caller "
     "reads cache[-1] through net.layers[i]: a zero gradient after a plain call (source mode)"),
    (a_method_appends_to_a_list_made_in_a_loop_over_the_layers, "forward makes self.cache "
     "in this call, called from a loop; a method appends to it in place ('kept'), into the "
     "list srcad saved for the backward: a zero gradient (source mode)"),
    (a_method_appends_to_a_list_forward_made, "the same called directly: refused ('.append() "
     "changes a list srcad holds as a value')"),
    (a_method_run_as_written_keeps_its_argument, "a method run as written stores its argument "
     "on its object (`self.inputs = x`); the memory planner reused that array's buffer "
     "after its last use here: the object left holding other values (source mode)"),
    (a_method_stores_into_a_kept_dict_read_through_the_list, "a method stores into a dict "
     "the object keeps (self.saved['out'] = v), read through net.layers[i]: a KeyError "
     "blamed on the user's code, or a zero gradient where the key was there from a call "
     "before (the store into a dict read as a constant, the read folded)"),
]


@pytest.mark.parametrize("fn, reason", [pytest.param(fn, reason, id=fn.__name__)
                                        for fn, reason in FIXED_CASES])
def test_fixed_class(fn, reason):
    """Each class the fuzzer found wrong (`reason`: what srcad did), smallest program: right
    -- not refused -- in source and tape mode, first call and after a plain call on other
    inputs (the callee's state carried by locals: frontend/state.py)."""
    args = (_X, _W)[:fn.__code__.co_argcount]
    tally = {"refused": 0, "passed": 0, "reasons": collections.Counter()}
    for warm in (None, tuple(a + 0.3 for a in args)):
        start = snapshot(_ALL)
        try:
            check(fn, _ALL, args, warm, ("source", "tape"), tally)
        finally:
            restore(start)
    assert tally["refused"] == 0, tally["reasons"]
    assert tally["passed"] == 4
