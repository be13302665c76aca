"""`srcad.checkpoint`: keep less in the forward sweep, recompute it in the backward.

Two forms, one name:

    h = srcad.checkpoint(block)(h, W)          # a call: save its inputs only
    for l in srcad.checkpoint(range(L)):       # a loop: save every k-th loop state
    for l in srcad.checkpoint(range(L), snapshots=8):   # ... or a binomial (revolve) schedule

Outside differentiated code both just run. Inside it:

* A checkpointed call (`ir.UserCall.checkpoint`) is emitted as a plain forward call that saves
  nothing of `block`'s internals; in the backward sweep `block_fwd` re-runs on the saved inputs
  (a comment says so) right before `block_bwd`.
* A checkpointed loop (`ir.For.checkpoint`) runs plain in the forward sweep, offering its loop
  state -- the names the loop carries from one step to the next -- to a `LoopCheckpoints`
  object, which keeps the states its schedule asks for. The backward is a sequence of
  *episodes*: restore a kept state, advance plain to the steps to reverse (keeping the states
  the schedule wants on the way), run those steps again saving what their backward reads, and
  run their backward. `every=k` keeps every k-th state (k = ceil(sqrt(n)) by default: about
  2 sqrt(n) step-sized values live at once for one extra forward sweep); `snapshots=c` keeps at
  most c states and places them by Griewank's binomial rule (revolve), which recomputes the
  fewest steps of any schedule with c states that pays for its first sweep (`revolve_cost`).
  srcad's forward sweep runs every step anyway, so the states of the first descent come
  free: they are placed for that (`free_sweep_cost`, exact up to 64 states).

Recomputation runs the same ops in the same order, and adjoints accumulate into the same
variables in the same (reversed) step order, so gradients are bit-for-bit those of the
unchecked program.
"""

from __future__ import annotations

import functools
import math
import tracemalloc
import types
from dataclasses import dataclass

import numpy as np


class Checkpointed:
    """A function whose derivative is computed by recomputing it (see the module docstring)."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __get__(self, obj, owner=None):
        """`@srcad.checkpoint` on a method: `self.block(h)` is the method bound to the object,
        checkpointed (as a function's `__get__` binds it)."""
        if obj is None:
            return self
        return Checkpointed(types.MethodType(self.fn, obj))

    def __repr__(self) -> str:
        return f"srcad.checkpoint({getattr(self.fn, '__qualname__', self.fn)!r})"


class CheckpointedLoop:
    """`srcad.checkpoint(range(n), ...)`: iterates like the sequence it wraps; inside
    differentiated code the frontend reads its schedule (`every` / `snapshots`)."""

    def __init__(self, seq, every=None, snapshots=None):
        self.seq, self.every, self.snapshots = seq, every, snapshots

    def __iter__(self):
        return iter(self.seq)

    def __len__(self) -> int:
        return len(self.seq)

    def __repr__(self) -> str:
        opts = "".join(f", {k}={v}" for k, v in (("every", self.every),
                                                  ("snapshots", self.snapshots)) if v is not None)
        return f"srcad.checkpoint({self.seq!r}{opts})"


def checkpoint(fn, *, every=None, snapshots=None):
    """Mark `fn` for recomputation in the backward sweep instead of saving its insides; or,
    given the sequence a `for` loop walks, checkpoint the loop (see the module docstring).

    >>> import numpy as np, srcad
    >>> def layer(h, W):
    ...     return np.tanh(h @ W)
    >>> ck = srcad.checkpoint(layer)
    >>> ck(np.ones((1, 2)), np.eye(2)).shape   # outside differentiated code: just the call
    (1, 2)
    >>> list(srcad.checkpoint(range(3), snapshots=2))
    [0, 1, 2]
    """
    if callable(fn) and not isinstance(fn, (range, CheckpointedLoop)):
        if every is not None or snapshots is not None:
            raise TypeError("srcad.checkpoint(fn) takes no schedule: every= and snapshots= "
                            "are for loops, srcad.checkpoint(range(n), every=k)")
        return fn if isinstance(fn, Checkpointed) else Checkpointed(fn)
    check_schedule(every, snapshots)
    return CheckpointedLoop(fn, every, snapshots)


def check_schedule(every=None, snapshots=None) -> None:
    """Reject a schedule that names both strategies, or a count below one."""
    if every is not None and snapshots is not None:
        raise ValueError("give srcad.checkpoint every= or snapshots=, not both")
    for label, v in (("every", every), ("snapshots", snapshots)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))
                              or v < 1):
            raise ValueError(f"srcad.checkpoint: {label}= must be a positive integer, "
                             f"got {v!r}")


# -- schedules ----------------------------------------------------------------------------
#
# A schedule for n steps (positions 0..n-1; the state at position i is the loop state before
# step i) is a set of positions the forward sweep keeps, and a list of episodes
#     (restore, advance_to, keep, record_to):
# restore the kept state at `restore` (dropping kept states beyond it), run steps
# restore..advance_to-1 plain, keeping the states at positions in `keep`, then run steps
# advance_to..record_to-1 saving what their backward reads, and run their backward. Episodes
# reverse the steps from the last to the first.

@dataclass(frozen=True)
class Schedule:
    n: int
    keep: frozenset
    episodes: tuple
    snapshots: int  # the most loop states kept at once
    recomputed: int  # steps run plain again in the backward (the forward sweep runs n)
    longest_record: int  # the most steps whose saved values are alive at once


def every_schedule(n: int, k: int) -> Schedule:
    """Keep the states at 0, k, 2k, ...; reverse one segment of k steps per episode."""
    k = max(1, min(k, n))
    starts = list(range(0, n, k))
    episodes = tuple((a, a, frozenset(), min(a + k, n)) for a in reversed(starts))
    return Schedule(n, frozenset(starts), episodes, len(starts), 0, min(k, n))


def beta(c: int, r: int) -> int:
    """The most steps c kept states reverse when no step runs more than r extra times."""
    return math.comb(c + r, c)


def _repetitions(n: int, c: int) -> int:
    r = 0
    while beta(c, r) < n:
        r += 1
    return r


def revolve_cost(n: int, c: int) -> int:
    """The fewest steps any schedule keeping c states (the first included) must recompute to
    reverse n steps (Griewank and Walther's t(n, c) = r n - beta(c + 1, r - 1))."""
    if n <= 1:
        return 0
    if c == 1:
        return n * (n - 1) // 2
    r = _repetitions(n, c)
    return r * n - beta(c + 1, r - 1)


def _split(n: int, c: int) -> int:
    """Where revolve keeps its next state in a range of n steps with c states: a minimiser of
    l + t(n - l, c - 1) + t(l, c), found among the kinks of that piecewise-linear cost."""
    r = _repetitions(n, c)
    cands = {beta(c, r - 1), n - beta(c - 1, r), n - beta(c - 1, r - 1)}
    if r >= 2:
        cands |= {beta(c, r - 2), beta(c, r - 2) + 1}
    cands = sorted({min(max(v, 1), n - 1) for v in cands})
    return min(cands, key=lambda v: v + revolve_cost(n - v, c - 1) + revolve_cost(v, c))


_FREE_SWEEP_MAX_SLOTS = 64  # beyond, the first descent uses revolve's own split


@functools.lru_cache(maxsize=None)
def free_sweep_cost(m: int, c: int) -> int:
    """The fewest steps recomputed to reverse m steps with c states when the first sweep
    over them is free (srcad's forward sweep): the states it keeps on its way cost nothing,
    F(m, c) = min_l F(m - l, c - 1) + t(l, c)."""
    if m <= 1 or c >= m:
        return 0
    if c == 1:
        return m * (m - 1) // 2
    return _free_split(m, c)[1]


@functools.lru_cache(maxsize=None)
def _free_split(m: int, c: int) -> tuple:
    """(l, cost): where the sweep keeps its next state; the cost is convex in l (a sum of
    convex piecewise-linear costs), so a ternary search finds the minimum."""
    def cost(v):
        return free_sweep_cost(m - v, c - 1) + revolve_cost(v, c)

    lo, hi = 1, m - 1
    while hi - lo > 2:
        a, b = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if cost(a) <= cost(b):
            hi = b
        else:
            lo = a
    best = min(range(lo, hi + 1), key=lambda v: (cost(v), -v))
    return best, cost(best)


def revolve_schedule(n: int, c: int) -> Schedule:
    """The binomial schedule with at most c kept states (c >= 1). Its first descent -- the
    states the forward sweep keeps -- is placed for a free sweep (`free_sweep_cost`); what
    is left of each part is reversed by revolve's rule."""
    c = max(1, min(c, n))
    actions: list = []  # ("restore", a) | ("advance", a, j, keep_j) | ("record", j, b)
    todo = [(0, n, c)]
    while todo:
        a, b, slots = todo.pop()
        first_descent = b == n  # (its advances are the forward sweep's: free)
        if b - a == 1:
            actions += [("restore", a), ("record", a, b)]
        elif slots == 1:
            for j in reversed(range(a, b)):
                actions += [("restore", a), ("advance", a, j, False), ("record", j, j + 1)]
        elif first_descent and slots <= _FREE_SWEEP_MAX_SLOTS:
            m = a + _free_split(b - a, slots)[0]
            todo.append((a, m, slots))
            actions += [("restore", a), ("advance", a, m, True)]
            todo.append((m, b, slots - 1))
        else:
            m = a + _split(b - a, slots)
            todo.append((a, m, slots))  # (the left part is reversed after the right)
            if b - m == 1:  # one step to the right: reverse it straight from the advance
                actions += [("restore", a), ("advance", a, m, False), ("record", m, b)]
            else:
                actions += [("restore", a), ("advance", a, m, True)]
                todo.append((m, b, slots - 1))
    return _episodes(n, actions)


def _episodes(n: int, actions: list) -> Schedule:
    """Group restore/advance/record actions into episodes, run the first episode's advances
    as the forward sweep, and count what the schedule keeps and recomputes."""
    episodes = []
    restore, at, keep = None, None, set()
    for act in actions:
        if act[0] == "restore":
            if restore is None:
                restore, at, keep = act[1], act[1], set()
            # else: restoring the state just kept at the current position changes nothing
        elif act[0] == "advance":
            at = act[2]
            if act[3]:
                keep.add(at)
        else:
            episodes.append((restore, at, frozenset(keep), act[2]))
            restore = None
    # the forward sweep has run every step plain: the first episode's keeps become the
    # sweep's, and it restarts from the last of them
    first_restore, first_to, first_keep, first_end = episodes[0]
    fwd_keep = frozenset({first_restore} | first_keep)
    episodes[0] = (max(fwd_keep), first_to, frozenset(), first_end)
    held, most, recomputed = [], 0, 0
    for keep in [fwd_keep]:
        held = sorted(keep)
    most = len(held)
    for restore, to, keep, _ in episodes:
        while held and held[-1] > restore:
            held.pop()
        held += sorted(keep)
        most = max(most, len(held))
        recomputed += to - restore
    longest = max(end - to for _, to, _, end in episodes)
    return Schedule(n, fwd_keep, tuple(episodes), most, recomputed, longest)


@functools.lru_cache(maxsize=256)
def schedule_for(n: int, every=None, snapshots=None) -> Schedule:
    """The schedule a loop of n steps runs (made once per (n, every, snapshots))."""
    if snapshots is not None:
        if snapshots >= n:  # a state for every step: nothing to recompute
            return every_schedule(n, 1)
        return revolve_schedule(n, int(snapshots))
    return every_schedule(n, int(every) if every is not None else math.isqrt(max(n - 1, 0)) + 1)


class LoopCheckpoints:
    """What a checkpointed loop keeps in the forward sweep, and the episodes of its backward.

    Generated code (see srcad/transform/reverse.py) drives it:

        ckpt_L5 = LoopCheckpoints(range(L))            # sqrt(n) segments
        for l in range(L):
            ckpt_L5.offer(h)                           # the loop state before step l
            ...
        for advance, record in ckpt_L5.episodes():
            h = ckpt_L5.restore()
            for l in advance: ckpt_L5.offer(h); ...    # recompute, saving nothing
            for l in record: ...                       # recompute, saving for the backward
            for l in reversed(record): ...             # the backward of those steps
    """

    __slots__ = ("steps", "schedule", "_kept", "_pos", "_keep")

    def __init__(self, steps: range, every=None, snapshots=None):
        check_schedule(every, snapshots)
        self.steps = steps
        self.schedule = schedule_for(len(steps), every, snapshots) if len(steps) else None
        self._kept: list = []  # [(position, state)], positions increasing
        self._pos = 0
        self._keep = self.schedule.keep if self.schedule is not None else frozenset()

    def offer(self, state) -> None:
        """Called before each step that runs plain: keep `state` if the schedule wants it."""
        if self._pos in self._keep:
            self._kept.append((self._pos, state))
        self._pos += 1

    def episodes(self):
        """Yield (steps to advance, steps to record) per episode, last steps first."""
        if self.schedule is None:
            return
        for restore, to, keep, end in self.schedule.episodes:
            while self._kept[-1][0] > restore:
                self._kept.pop()
            self._pos, self._keep = restore, keep
            yield self.steps[restore:to], self.steps[to:end]
        self._kept.clear()

    def restore(self):
        """The kept loop state at the start of the current episode."""
        return self._kept[-1][1]

    def copy(self) -> "LoopCheckpoints":
        """The same kept states (references), ready for another backward sweep."""
        out = LoopCheckpoints.__new__(LoopCheckpoints)
        out.steps, out.schedule = self.steps, self.schedule
        out._kept, out._pos = list(self._kept), self._pos
        out._keep = self._keep
        return out

    def kept_states(self) -> list:
        return [state for _, state in self._kept]

    def __repr__(self) -> str:
        s = self.schedule
        if s is None:
            return "LoopCheckpoints(0 steps)"
        return (f"LoopCheckpoints({s.n} steps, {len(self._kept)} states kept, at most "
                f"{s.snapshots}, {s.recomputed} steps recomputed)")


# -- measuring memory -------------------------------------------------------------------

def measure_peak(run) -> int:
    """Peak bytes traced (tracemalloc, which sees numpy's buffers) while `run()` runs, above
    what was traced when it started. Inside an outer trace the outer peak is reset."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        if started:
            tracemalloc.stop()
