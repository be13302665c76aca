"""Random programs where one array is held in two places and written in place through one.

srcad returned silently wrong values and gradients on this class until the session of
2026-12-03 (fifth): a callee's `p -= t` into its argument (the caller's array was left as it
was, or the call dropped), `ps[0] -= t` or `for p in ps: p *= 2` where a name also holds
`ps[0]`, an object's `self.params = [self.W, self.b]` walked by a method, a list under two
names. Each program builds arrays from its arguments `a`, `b` (shape (3,)), puts them in a
list, a dict or an object's list under names of their own, then mixes, in random order:

- in-place writes through the container (`L[i] op= e`, `for p in L: p op= e`, `D[k] op= e`,
  a helper walking the list, a method walking the object's list),
- in-place writes through a name (`W1 op= e`, a helper given the name or a slice of it),
- plain stores into the container (`L[i] = e`: the name keeps its array),
- reads through both, accumulated into the result.

tests/test_shared_holders_fuzz.py runs them in source mode, tape mode and fused: each must give
Python's value and the central-difference gradient, or a SrcadError (counted, never wrong).
`generate_wide` (session of 2026-12-03, sixth) is the wider family: longer programs, second
names for an array or a slot, writes through an element, rebinding, statements inside an
`if` or a loop. On 944a064 its seeds 0-39 gave 50 wrong programs of 480 in source mode.
"""

from __future__ import annotations

import numpy as np

HELPERS = '''
def _fz_walk(ps, lr):
    for p in ps:
        p -= lr * p


def _fz_scale(p, s):
    p *= s


class _FzModel:
    def __init__(self, W1, W2):
        self.W1 = W1
        self.W2 = W2
        self.params = [self.W1, self.W2]

    def step(self, lr):
        for p in self.params:
            p -= lr * p

    def out(self):
        return np.sum(self.W1 * self.W2)

    def scale(self, s):
        self.W1 *= s

    def nudge(self, c):
        self.W2[0] += c * self.W1[1]


class _FzPair:
    def __init__(self, W, V):
        self.W = W
        self.V = V

    def decay(self, lr):
        self.W -= lr * self.W
        return self.W
'''


def generate(rng: np.random.Generator, index: int) -> str:
    """The source of one program, `fz_<index>(a, b)`."""
    holder = rng.choice(["list", "dict", "object"])
    lines = [f"def fz_{index}(a, b):",
             "    W1 = a * 1.5",
             "    W2 = b + 0.5",
             "    acc = 0.0"]
    if holder == "list":
        lines.append("    L = [W1, W2]")
    elif holder == "dict":
        lines.append("    D = {'x': W1, 'y': W2}")
    else:
        lines.append("    m = _FzModel(W1, W2)")
    ops = int(rng.integers(2, 5))
    for _ in range(ops):
        c = round(float(rng.uniform(0.3, 0.9)), 2)
        i = int(rng.integers(0, 2))
        name = ("W1", "W2")[i]
        op = rng.choice(["-=", "*=", "+="])
        kind = rng.choice(["container", "name", "helper_name", "helper_slice", "store",
                           "read"], p=[0.3, 0.15, 0.15, 0.1, 0.1, 0.2])
        if kind == "container":
            if holder == "list":
                lines.append(rng.choice([f"    L[{i}] {op} {c} * L[{1 - i}]",
                                         f"    for p in L:\n        p {op} {c} * a",
                                         f"    _fz_walk(L, {c})"]))
            elif holder == "dict":
                key = ("x", "y")[i]
                lines.append(rng.choice([f"    D['{key}'] {op} {c} * b",
                                         f"    for k in D:\n        D[k] {op} {c} * D[k]"]))
            else:
                lines.append(f"    m.step({c})")
        elif kind == "name":
            lines.append(f"    {name} {op} {c} * a")
        elif kind == "helper_name":
            lines.append(f"    _fz_scale({name}, {round(c + 0.5, 2)})")
        elif kind == "helper_slice":
            lines.append(f"    _fz_scale({name}[1:], {round(c + 0.5, 2)})")
        elif kind == "store" and holder == "list":
            lines.append(f"    L[{i}] = L[{i}] * {c}")
        else:
            through = {"list": f"L[{i}]", "dict": f"D['{('x', 'y')[i]}']",
                       "object": f"m.W{i + 1}"}[holder]
            lines.append(f"    acc = acc + np.sum({name} * {through}) * {c}")
    final = {"list": "np.sum(L[0] * L[1])", "dict": "np.sum(D['x'] * D['y'])",
             "object": "m.out()"}[holder]
    lines.append(f"    return acc + np.sum(W1 * W2) + {final}")
    return "\n".join(lines)


def _place(rng, lines: list, stmt: str, p, branch: bool, loop: bool) -> None:
    """Append `stmt` (one or more lines) to the body: as it is, inside an `if` (taken or
    not), or inside a two-trip loop, drawn with the probabilities `p` -- where `branch` /
    `loop` allow it."""
    wrap = str(rng.choice(["", "if", "loop"], p=list(p)))
    body = stmt.split("\n")
    if wrap == "if" and branch:
        lines.append(f"    if {rng.choice(['np.sum(a) > -100.0', 'a[0] > 5.0'])}:")
        lines += [f"        {s}" for s in body]
    elif wrap == "loop" and loop:
        lines.append("    for _ in range(2):")
        lines += [f"        {s}" for s in body]
    else:
        lines += [f"    {s}" for s in body]


def generate_wide(rng: np.random.Generator, index: int) -> str:
    """A program of the wider family (session of 2026-12-03, sixth): 2-7 statements, the
    arrays held by a list, a dict, both, or an object; besides `generate`'s statements,
    second names for an array or a slot (`V1 = W1`, `V1 = L[0]`), writes through an item's
    element (`W1[0] op= e`, `L[1][2] op= c`), plain rebinding (`W1 = W1 * c`, which the
    holders do not see), stores into an object's attribute, and any statement inside an
    `if` (taken or not) or a two-trip loop. Every name and holder is read at the end."""
    holder = str(rng.choice(["list", "dict", "object", "both"]))
    lines = [f"def fz_{index}(a, b):", "    W1 = a * 1.5", "    W2 = b + 0.5", "    acc = 0.0"]
    if holder in ("list", "both"):
        lines.append("    L = [W1, W2]")
    if holder in ("dict", "both"):
        lines.append("    D = {'x': W1, 'y': W2}")
    if holder == "object":
        lines.append("    m = _FzModel(W1, W2)")
    names = ["W1", "W2"]
    for _ in range(int(rng.integers(2, 8))):
        c = round(float(rng.uniform(0.3, 0.9)), 2)
        i = int(rng.integers(0, 2))
        name = str(rng.choice(names))
        op = str(rng.choice(["-=", "*=", "+="]))
        kind = str(rng.choice(
            ["container", "name", "helper_name", "helper_slice", "store", "read", "alias",
             "slot", "rebind"], p=[0.2, 0.12, 0.12, 0.08, 0.1, 0.16, 0.08, 0.08, 0.06]))
        slot = {"list": f"L[{i}]", "dict": f"D['{('x', 'y')[i]}']", "object": f"m.W{i + 1}",
                "both": str(rng.choice([f"L[{i}]", f"D['{('x', 'y')[i]}']"]))}[holder]
        if kind == "container" and holder == "object":
            stmt = f"m.step({c})"
        elif kind == "container":
            options = [f"{slot} {op} {c} * b"]
            if slot.startswith("L"):
                options += [f"for p in L:\n    p {op} {c} * a", f"_fz_walk(L, {c})",
                            f"{slot} {op} {c} * L[{1 - i}]"]
            else:
                options += [f"for k in D:\n    D[k] {op} {c} * D[k]"]
            stmt = str(rng.choice(options))
        elif kind == "name":
            stmt = f"{name} {op} {c} * a"
        elif kind == "helper_name":
            stmt = f"_fz_scale({name}, {round(c + 0.5, 2)})"
        elif kind == "helper_slice":
            stmt = f"_fz_scale({name}[1:], {round(c + 0.5, 2)})"
        elif kind == "slot":
            stmt = str(rng.choice([f"{name}[0] {op} {c} * b[0]", f"{name}[1:] {op} {c}",
                                   f"{slot}[{int(rng.integers(0, 3))}] {op} {c}"]))
        elif kind == "store":
            stmt = f"{slot} = {slot} * {c}"
        elif kind == "alias":
            names.append(f"V{len(names) - 1}")
            stmt = f"{names[-1]} = {str(rng.choice([name, slot]))}"
        elif kind == "rebind":
            stmt = f"{name} = {name} * {c}"
        else:
            stmt = f"acc = acc + np.sum({name} * {slot}) * {c}"
        _place(rng, lines, stmt, (0.7, 0.15, 0.15),
               branch=kind != "alias" and not stmt.startswith("for"),
               loop=kind not in ("alias", "read"))
    finals = {"list": ["np.sum(L[0] * L[1])"], "dict": ["np.sum(D['x'] * D['y'])"],
              "object": ["m.out()"],
              "both": ["np.sum(L[0] * L[1])", "np.sum(D['x'] * D['y'])"]}[holder]
    reads = [f"np.sum({n} * {round(1.0 - 0.1 * k, 1)})" for k, n in enumerate(names)]
    lines.append("    return acc + " + " + ".join(reads + finals))
    return "\n".join(lines)


def generate_objects(rng: np.random.Generator, index: int) -> str:
    """The objects family (session of 2026-12-03, seventh): arrays given to objects'
    constructors (`_FzModel`, which keeps a list of them too, and `_FzPair`, which does not;
    one or two objects, sharing arrays or not), then, in random order, in-place writes through
    an attribute (`m.W1 op= e`, `m.W1[0] op= e`), through a method (`m.scale(s)`, `m.step(lr)`,
    `m.nudge(c)`, `p.decay(lr)`, whose result may be kept), through the constructor's names
    (`W1 op= e`, a helper given `m.W1`), second names (`V = m.W1`), rebinding an attribute
    (`m.W1 = m.W1 * c`) or a name, and reads -- any of them inside an `if` or a loop. srcad
    returned a stale value for `m = M(W1); m.W1 *= c; W1` (no loop needed) until this family
    was written: no other family writes a whole attribute in place."""
    lines = [f"def fz_{index}(a, b):", "    W1 = a * 1.5", "    W2 = b + 0.5", "    acc = 0.0"]
    objects = [("m", "_FzModel(W1, W2)", ("W1", "W2"))]
    second = str(rng.choice(["none", "pair", "pair_shared", "model_swapped"]))
    if second == "pair":
        objects.append(("q", "_FzPair(W2, W1)", ("W", "V")))
    elif second == "pair_shared":
        objects.append(("q", "_FzPair(m.W1, b * 0.25)", ("W", "V")))
    elif second == "model_swapped":
        objects.append(("q", "_FzModel(W2, W1)", ("W1", "W2")))
    order = list(objects)
    if rng.random() < 0.5:
        order.reverse()  # (a pair sharing m's array needs m first)
    for name, made, _ in (objects if second == "pair_shared" else order):
        lines.append(f"    {name} = {made}")
    names = ["W1", "W2"]
    for _ in range(int(rng.integers(2, 8))):
        c = round(float(rng.uniform(0.3, 0.9)), 2)
        o, _, attrs = objects[int(rng.integers(0, len(objects)))]
        attr = f"{o}.{attrs[int(rng.integers(0, 2))]}"
        name = str(rng.choice(names))
        op = str(rng.choice(["-=", "*=", "+="]))
        model = o == "m" or second == "model_swapped"
        kind = str(rng.choice(
            ["attr", "attr_slot", "method", "name", "helper", "alias", "rebind_attr",
             "rebind", "read"], p=[0.2, 0.1, 0.16, 0.1, 0.08, 0.1, 0.06, 0.04, 0.16]))
        if kind == "attr":
            stmt = f"{attr} {op} {c} * a"
        elif kind == "attr_slot":
            stmt = f"{attr}[{int(rng.integers(0, 3))}] {op} {c}"
        elif kind == "method" and model:
            stmt = str(rng.choice([f"{o}.scale({round(c + 0.5, 2)})", f"{o}.step({c})",
                                   f"{o}.nudge({c})"]))
        elif kind == "method":
            if rng.random() < 0.5:
                names.append(f"V{len(names) - 1}")
                stmt = f"{names[-1]} = {o}.decay({c})"
            else:
                stmt = f"{o}.decay({c})"
        elif kind == "name":
            stmt = f"{name} {op} {c} * a"
        elif kind == "helper":
            stmt = f"_fz_scale({str(rng.choice([name, attr]))}, {round(c + 0.5, 2)})"
        elif kind == "alias":
            names.append(f"V{len(names) - 1}")
            stmt = f"{names[-1]} = {str(rng.choice([name, attr]))}"
        elif kind == "rebind_attr":
            stmt = f"{attr} = {attr} * {c}"
        elif kind == "rebind":
            stmt = f"{name} = {name} * {c}"
        else:
            stmt = f"acc = acc + np.sum({name} * {attr}) * {c}"
        _place(rng, lines, stmt, (0.6, 0.2, 0.2), branch=not stmt.startswith("V"),
               loop=not stmt.startswith(("V", "acc")))
    reads = [f"np.sum({n} * {round(1.0 - 0.1 * k, 1)})" for k, n in enumerate(names)]
    finals = ["m.out()"] + [f"np.sum({o}.{x} * {o}.{y})" for o, _, (x, y) in objects[1:]]
    lines.append("    return acc + " + " + ".join(reads + finals))
    return "\n".join(lines)


def generate_copies(rng: np.random.Generator, index: int) -> str:
    """The copies family (session of 2026-12-04, sixth): a second container that is a
    shallow copy of the first -- `list(L)`, `L.copy()`, `L[:]`, `copy.copy(L)`, `[w for w in
    L]`, `tuple(L)`, `dict(D)`, `D.copy()`, `{k: v for k, v in D.items()}`, or a list that
    holds one array twice (`[W1, W1]`) -- so that both hold the very same arrays, as Python's
    shallow copies do; then in-place writes through either (`M[i] op= e`, `for p in M: p op=
    e`, a helper walking it), plain stores into either (the other keeps its array), writes
    through the names, and reads of every holder. srcad kept such a copy as a container of
    its own and returned the other holder's old array, silently (15 of 20 hand-written
    programs wrong in source mode, 3 in tape mode), until this family was written. Besides,
    the other ways one array ends up held twice (same session, two probes): a history list
    appended to and then written in place in a later trip, np.split's pieces and the rows
    `r, t = S` unpacks (views), `W1.view()`, and another list keeping a list's items."""
    lines = [f"def fz_{index}(a, b):", "    W1 = a * 1.5", "    W2 = b + 0.5", "    acc = 0.0"]
    kind = str(rng.choice(["list", "dict", "twice"], p=[0.55, 0.3, 0.15]))
    lines.append(f"    {_MADE[kind]}")
    reads = _copies_body(rng, kind, lines)
    lines.append("    return acc + np.sum(W1 * W2) + " + " + ".join(reads))
    return "\n".join(lines)


_MADE = {"list": "L = [W1, W2]", "dict": "D = {'x': W1, 'y': W2}", "twice": "L = [W1, W1, W2]"}
_NAMED = {"list": "W1, W2 = L[0], L[1]", "dict": "W1, W2 = D['x'], D['y']",
          "twice": "W1, W2 = L[0], L[2]"}
_UNPACKED = {"list": "W1, W2 = L", "twice": "W1, W1b, W2 = L"}


def generate_passed(rng: np.random.Generator, index: int) -> str:
    """The passed family (session of 2026-12-05): the copies family's statements in a callee
    the caller gives its list or dict, `_fz_in_<index>(L, a, b)` -- the shallow copy, the
    writes through either holder and the names `W1, W2 = L[0], L[1]` are the callee's, the
    caller reads its own holder after the call; the harness also differentiates the callee
    alone, the list or dict an argument of the transformed function (`passed_checks`). Both
    modes were wrong on `ps.copy()` of a list argument written through the copy
    (`qs[0] *= 2`, then `ps[0]` read): source mode took numpy's copy, a 2-d array, and the
    tape's list copy held the argument's leaves unrecorded."""
    kind = str(rng.choice(["list", "dict", "twice"], p=[0.55, 0.3, 0.15]))
    holder = "D" if kind == "dict" else "L"
    named = _NAMED[kind] if kind == "dict" else str(rng.choice(
        [_NAMED[kind], _UNPACKED[kind]]))  # (`W1, W2 = L`: the list's items too)
    size = "" if kind == "dict" else f", slots={3 if kind == 'twice' else 2}"
    inner = [f"def _fz_in_{index}({holder}, a, b{size}):", f"    {named}", "    acc = 0.0"]
    reads = _copies_body(rng, kind, inner, walks=True)
    inner.append("    return acc + np.sum(W1 * W2) + " + " + ".join(reads))
    slots = ["D['x']", "D['y']"] if kind == "dict" else ["L[0]", "L[-1]"]
    outer = [f"def fz_{index}(a, b):", "    W1 = a * 1.5", "    W2 = b + 0.5",
             f"    {_MADE[kind]}", f"    acc = _fz_in_{index}({holder}, a, b)",
             "    return acc + np.sum(W1 * W2 * 0.5) + " + " + ".join(
                 f"np.sum({s} * {0.9 - 0.2 * k:.1f})" for k, s in enumerate(slots))]
    return "\n".join(inner) + "\n\n\n" + "\n".join(outer)


def _copies_body(rng, kind: str, lines: list, walks: bool = False) -> list:
    """The copies family's statements, appended to `lines` (a function with `W1`, `W2`,
    `acc` and the holder, `L` or `D`, bound): the reads its return adds up. (`walks`: a
    dict walked in any of the spellings people write -- `d.items()`, `d.values()`, `v =
    d[k]` -- not only `d[k] op= ...`.)"""
    if kind == "list":
        made = str(rng.choice(["list(L)", "L.copy()", "L[:]", "copy.copy(L)",
                               "[w for w in L]", "tuple(L)", "list(w for w in L)"]))
        lines.append(f"    M = {made}")
        holders = ["L", "M"] if made != "tuple(L)" else ["L"]
        slots = {"L": ["L[0]", "L[1]"], "M": ["M[0]", "M[1]"]}
    elif kind == "dict":
        made = str(rng.choice(["dict(D)", "D.copy()", "{k: v for k, v in D.items()}",
                               "copy.copy(D)"]))
        lines.append(f"    E = {made}")
        holders = ["D", "E"]
        slots = {"D": ["D['x']", "D['y']"], "E": ["E['x']", "E['y']"]}
    else:
        holders = ["L"]
        slots = {"L": ["L[0]", "L[1]", "L[2]"]}
    for _ in range(int(rng.integers(1, 5))):
        c = round(float(rng.uniform(0.3, 0.9)), 2)
        op = str(rng.choice(["-=", "*=", "+="]))
        h = str(rng.choice(holders))
        slot = str(rng.choice(slots[h]))
        what = str(rng.choice(["slot", "walk", "helper", "store", "name", "read", "history",
                               "pieces", "rows", "view", "saved"],
                              p=[0.25, 0.1, 0.08, 0.08, 0.08, 0.16, 0.05, 0.05, 0.05, 0.05,
                                 0.05]))
        k = len(lines)  # (names of this statement's own)
        if what == "slot":
            lines.append(f"    {slot} {op} {c} * b")
        elif what == "walk" and kind != "dict":
            lines.append(f"    for p in {h}:\n        p {op} {c} * a")
        elif what == "walk" and walks:  # (the passed family: the spellings of a walk)
            lines.append(str(rng.choice([
                f"    for k in {h}:\n        {h}[k] {op} {c} * {h}[k]",
                f"    for k, v in {h}.items():\n        v {op} {c} * v",
                f"    for v in {h}.values():\n        v {op} {c} * a",
                f"    for k in {h}:\n        v = {h}[k]\n        v {op} {c} * b"])))
        elif what == "walk":
            lines.append(f"    for k in {h}:\n        {h}[k] {op} {c} * {h}[k]")
        elif what == "helper" and kind != "dict":
            lines.append(f"    _fz_walk({h}, {c})")
        elif what == "store":
            lines.append(f"    {slot} = {slot} * {c}")
        elif what == "name":
            lines.append(f"    {str(rng.choice(['W1', 'W2']))} {op} {c} * a")
        elif what == "history":  # (appended, then written in place in a later trip)
            lines.append(f"    H{k} = []\n    for _ in range(2):\n        W1 {op} {c} * a\n"
                         f"        H{k}.append(W1)\n    acc = acc + np.sum(H{k}[0] * H{k}[1])")
        elif what == "pieces":  # (np.split's pieces are views into W2)
            lines.append(f"    P{k}, Q{k} = np.split(W2, [1])\n    Q{k} {op} {c}\n"
                         f"    acc = acc + np.sum(W2 * W2)")
        elif what == "rows":  # (`a, b = S` unpacks views of S's rows)
            lines.append(f"    S{k} = np.stack([W1, W2])\n    r{k}, t{k} = S{k}\n"
                         f"    r{k} {op} {c}\n    acc = acc + np.sum(S{k} * S{k})")
        elif what == "view":
            lines.append(f"    V{k} = W1.view()\n    V{k}[0] = {c}\n    acc = acc + np.sum(W1)")
        elif what == "saved" and kind == "list":  # (the list's items kept by another list)
            lines.append(f"    kept{k} = []\n    for q in L:\n        kept{k}.append(q)\n"
                         f"    L[0] {op} {c} * b\n    acc = acc + np.sum(kept{k}[0] * 0.5)")
        else:
            lines.append(f"    acc = acc + np.sum({slot} * {c})")
    reads = [f"np.sum({s} * {round(1.0 - 0.1 * k, 1)})"
             for k, s in enumerate([x for h in holders for x in slots[h]])]
    if kind == "list" and made == "tuple(L)":
        reads.append("np.sum(M[0] * M[1])")
    return reads


_SLICED = ["L[:n]", "L[1:]", "L[:-1]", "L[::-1]", "L[:len(L) - 1]", "L[0:n]", "L[-n:]"]
_SLICED_SHORT = ["L[:n]", "L[::-1]", "L[0:n]", "L[-n:]"]


def generate_slices(rng: np.random.Generator, index: int) -> str:
    """The slices family (session of 2026-12-05, second): a list of the function's arrays cut
    by a slice (`M = L[:n]`, `L[1:]`, `L[::-1]`: a new list of the same arrays) or shortened
    by a pop in a branch (`if c: L.pop()`, `L.pop(0)`, `t = L.pop(0) if c else W2`, which
    srcad lowers to `L[:L_n]` or rebuilds the list in the arm), then written in place through
    an item (`v = M[0]; v op= e`, `M[0] op= e`, `for p in M: p op= e`, `v = L[:n][0]`),
    through the names, or stored into, and every holder read. Source mode dropped the write
    through an item of a list no name holds (`v = L[:n][0]; v += 1`) and kept the names'
    old arrays after a write through a slice's item, silently, until this family was
    written (tests/test_list_slices.py holds the hand-written cases)."""
    twice = rng.random() < 0.25
    lines = [f"def fz_{index}(a, b):", "    W1 = a * 1.5", "    W2 = b + 0.5", "    acc = 0.0",
             f"    L = {'[W1, W1, W2]' if twice else '[W1, W2]'}", "    n = len(L) - 1"]
    how = str(rng.choice(["slice", "pop_end", "pop_front", "pop_expr"], p=[0.5, 0.2, 0.15,
                                                                            0.15]))
    if how == "slice":
        lines.append(f"    M = {rng.choice(_SLICED)}")
        holders = ["M", "L"]
    else:
        # (taken or not, the test far from the point: sum(b) is 1.8 at the fuzz's inputs)
        cond = f"np.sum(b) {rng.choice(['>', '<'])} 1.0"
        lines.append({"pop_end": f"    if {cond}:\n        L.pop()",
                      "pop_front": f"    if {cond}:\n        L.pop(0)",
                      "pop_expr": f"    t = L.pop(0) if {cond} else W2 * 0.5\n"
                                  "    acc = acc + np.sum(t * 0.3)"}[how])
        holders = ["L"]
    for _ in range(int(rng.integers(1, 5))):
        c = round(float(rng.uniform(0.3, 0.9)), 2)
        op = str(rng.choice(["-=", "*=", "+="]))
        h = str(rng.choice(holders))
        slot = f"{h}[{rng.choice(['0', '-1'])}]"
        what = str(rng.choice(["item", "slot", "walk", "chain", "name", "read", "store"],
                              p=[0.2, 0.15, 0.1, 0.1, 0.15, 0.2, 0.1]))
        k = len(lines)
        if what == "item":
            lines.append(f"    v{k} = {slot}\n    v{k} {op} {c} * b")
        elif what == "slot":
            lines.append(f"    {slot} {op} {c} * a")
        elif what == "walk":
            lines.append(f"    for p in {h}:\n        p {op} {c} * a")
        elif what == "chain":
            # (after a pop L may hold one item: the slices that keep it)
            cut = rng.choice(_SLICED if how == "slice" else _SLICED_SHORT)
            lines.append(f"    v{k} = {cut}[0]\n    v{k} {op} {c}")
        elif what == "name":
            lines.append(f"    {rng.choice(['W1', 'W2'])} {op} {c} * a")
        elif what == "store":
            lines.append(f"    {slot} = {slot} * {c}")
        else:
            lines.append(f"    acc = acc + np.sum({slot} * {c})")
    reads = [f"np.sum({h}[{i}] * {0.9 - 0.2 * k:.1f})"
             for k, (h, i) in enumerate((h, i) for h in holders for i in (0, -1))]
    lines.append("    return acc + np.sum(W1 * W2) + " + " + ".join(reads))
    return "\n".join(lines)


# (filled below: name -> generator)
FAMILIES = {"first": None, "wide": None, "objects": None, "copies": None,
            "passed": None, "slices": None}


def module_source(seed: int, n: int, wide: bool | str = False) -> tuple[str, list[str]]:
    """The module of `n` programs of seed `seed`, of a family: "first" (False), "wide"
    (True) or "objects"."""
    rng = np.random.default_rng(seed)
    family = {False: "first", True: "wide"}.get(wide, wide)
    make = FAMILIES[family]
    programs = [make(rng, seed * 1000 + k) for k in range(n)]
    names = [f"fz_{seed * 1000 + k}" for k in range(n)]
    head = "import copy\n\nimport numpy as np\n" + HELPERS
    return head + "\n\n" + "\n\n\n".join(programs) + "\n", names


FAMILIES.update(first=generate, wide=generate_wide, objects=generate_objects,
                copies=generate_copies, passed=generate_passed, slices=generate_slices)


def passed_arguments(fn, args=(np.array([0.7, -1.1, 0.4]), np.array([-0.3, 0.9, 1.2]))):
    """The arguments `(holder, a, b)` of a passed-family callee `_fz_in_<k>`, differentiated
    alone: its dict, or a list of arrays of its own, as many as its `slots` default says (a
    list argument holding one array twice has no gradient per leaf: the twice kind's three
    slots hold three arrays here)."""
    a, b = args
    if fn.__code__.co_varnames[0] == "D":
        return {"x": a * 1.5, "y": b + 0.5}, a.copy(), b.copy()
    items = [a * 1.5, a * 1.5 + 0.25, b + 0.5]
    return (items if fn.__defaults__[-1] == 3 else [items[0], items[2]]), a.copy(), b.copy()


def fresh_differences(fn, args, h: float = 1e-5):
    """Central differences of `fn` at `args` (arrays, or lists and dicts of them), every call
    on fresh copies: the passed family writes into its argument's arrays in place, so
    srcad.testing's numerical_grad, which copies once, would differentiate a moving point."""
    import copy

    paths = []

    def walk(node, path):
        if isinstance(node, (dict, list, tuple)):
            for k in (node if isinstance(node, dict) else range(len(node))):
                walk(node[k], path + (k,))
        else:
            paths.append(path)

    def at(node, path):
        for k in path:
            node = node[k]
        return node

    walk(list(args), ())
    out = copy.deepcopy(list(args))
    for path in paths:
        g = at(out, path)
        for i in range(g.size):
            vals = []
            for step in (h, -h):
                moved = copy.deepcopy(list(args))
                at(moved, path).flat[i] += step
                vals.append(fn(*moved))
            g.flat[i] = (vals[0] - vals[1]) / (2 * h)
    return tuple(out)


def _leaves(tree) -> list:
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in _leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [x for v in tree for x in _leaves(v)]
    return [tree]


def check_passed(fn, modes) -> dict:
    """{(mode, fuse): "pass" | "refused" | (the value, the gradient: wrong)} for a passed-family
    callee differentiated alone, its list or dict an argument (`passed_arguments`)."""
    import copy
    import warnings

    import srcad
    from srcad.testing import rel_error

    args = passed_arguments(fn)
    want_v = fn(*copy.deepcopy(args))
    want = _leaves(fresh_differences(fn, args))
    out = {}
    for mode, fuse in modes:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v, g = srcad.value_and_grad(fn, wrt=(0, 1, 2), mode=mode, fuse=fuse)(
                    *copy.deepcopy(args))
        except srcad.SrcadError:
            out[(mode, fuse)] = "refused"
            continue
        got = _leaves(g)
        right = np.allclose(v, want_v, rtol=1e-10, atol=1e-12) and len(got) == len(want) and \
            all(rel_error(x, y) < 1e-6 for x, y in zip(got, want))
        out[(mode, fuse)] = "pass" if right else (v, want_v, g, want)
    return out


def census(seeds, wide: bool | str, modes=(("source", False), ("tape", False))) -> dict:
    """{(mode, "pass" | "refused" | "wrong"): count} and the wrong programs' names, for the
    REPORT's figures (the test asserts; this counts)."""
    import warnings

    import srcad
    from srcad.testing import numerical_grad, rel_error
    from tests import fuzz_programs as FP

    args = (np.array([0.7, -1.1, 0.4]), np.array([-0.3, 0.9, 1.2]))
    counts: dict = {}
    wrong: list = []
    for seed in seeds:
        source, names = module_source(seed, 12, wide=wide)
        module = FP.import_source(source, f"census_{wide}{seed}")
        for name in names:
            fn = getattr(module, name)
            want_v = fn(*[a.copy() for a in args])
            want = numerical_grad(fn, [a.copy() for a in args], wrt=(0, 1))
            for mode, fuse in modes:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        v, g = srcad.value_and_grad(fn, wrt=(0, 1), mode=mode, fuse=fuse)(
                            *[a.copy() for a in args])
                    kind = "pass" if np.allclose(v, want_v, rtol=1e-10, atol=1e-12) and all(
                        rel_error(x, y) < 1e-6 for x, y in zip(g, want)) else "wrong"
                except srcad.SrcadError:
                    kind = "refused"
                counts[(mode, kind)] = counts.get((mode, kind), 0) + 1
                if kind == "wrong":
                    wrong.append(f"{name} {mode}")
            if wide != "passed":
                continue
            inner = getattr(module, "_fz_in_" + name[3:])
            for (mode, _), kind in check_passed(inner, modes).items():
                kind = kind if isinstance(kind, str) else "wrong"
                counts[(mode + " alone", kind)] = counts.get((mode + " alone", kind), 0) + 1
                if kind == "wrong":
                    wrong.append(f"{inner.__name__} {mode}")
    return {"counts": dict(sorted(counts.items())), "wrong": wrong}


# python -m tests.fuzz_shared_holders [--wide|--objects|--copies|--passed|--slices] [first]
# [stop]
if __name__ == "__main__":
    import sys

    wide = next((w for w in ("objects", "copies", "passed", "slices") if f"--{w}" in sys.argv),
                "--wide" in sys.argv)
    bounds = [int(a) for a in sys.argv[1:] if a.isdigit()]
    first, stop = (bounds + [0])[0], (bounds[1:] + [40])[0]
    print(census(range(first, stop), wide))
