"""Random programs that store into the containers they are given (issue 21's classes).

srcad returned silently wrong values and gradients on these until 4a712f6 (see
tests/test_containers.py: test_a_container_argument_read_after_stores_into_it,
test_a_container_item_written_through_a_name, test_a_callee_writes_into_a_dict_then_rebinds_
the_name, test_a_list_argument_taken_whole_before_a_write). Every program takes a container
``p`` and an array ``x`` (shape (3,)) and mixes, in random order and spelling:

(a) reads of the container whole (``np.stack(p)``, ``sum(p)``, ``np.max(p, axis=0)``,
    ``np.concatenate(list(p.values()))`` ...) or by item, BEFORE stores into it
    (``p[i] = ...``, ``p["b"] = ...``, ``p["layers"][i] = ...``), and again after;
(b) an item bound to a name (``W = p["W"]``, ``L = p["layers"]``, ``inner = p[0]``, ``V = p``)
    and written through that name (``W -= ...``, ``W[0] = ...``, ``L[1] = ...``,
    ``e["W"] = ...``), then read back through the container;
(c) a callee storing into the dict or list it was given and then rebinding its parameter
    name (``c["a"] = ...; c = {}``, ``c = dict(c)``, a rebinding under a branch), the caller
    reading the entry after;
(d) a copy of the container (or of a list in it) with an item deleted (``del q[i]``,
    ``del q["b"]``), read after;
(e) a helper writing in place an item of a list the function builds, picked by a computed
    index in a loop (``np.tanh(X, out=X)`` on ``acts[i + 1]``), names bound to the item.

The checks (all modes, grad / vjp / jvp / memory_budget) live in tests/test_fuzz_pytrees.py.
"""

from __future__ import annotations

import numpy as np

from tests import fuzz_programs as FP

KINDS = ("list", "nested", "flat", "dict")

# Forms once generated only with open_forms=True, each found wrong by this fuzzer and fixed
# since (tests/test_fuzz_pytrees.py holds each smallest program): a store through a name
# bound to the whole argument (`q = p; q["b"] = ...`: source mode left the caller's container
# unwritten), a callee given a container held inside the argument (`fill(p[0], x)`,
# `fill(p["layers"], x)` storing into it: source mode's gradient was wrong), the writes into
# an item's array in place through a name (`W = p["W"]; W -= ...`, `W[0] = ...`, `b *= 1.5`)
# with another name bound to the same item before (source mode gave the old values), and a
# callee rebinding its parameter under a branch (`if ...: c = {}` after `c["a"] = ...`: a
# store before the branch reaches the caller; one after it is refused). The default run
# generates them all now; open_forms=False keeps the narrower generator of the first run.
# Still open (`_known_open` in tests/test_fuzz_pytrees.py): tape mode and jvp on the
# in-place writes with the container differentiated, and nested lists under tape / a vjp.
OPEN_FORMS = ("q = p; q[k] = ...", "fill(p[i], x)", "W = p[k]; W -= ...", "if ..: c = {}")
FLAT_KEYS = ("a", "b", "c", "d")


class Prog:
    def __init__(self, name, source, kind, k, features, inplace):
        self.name, self.source, self.kind, self.k = name, source, kind, k
        self.features = features  # which of the classes (a), (b), (c) the program has
        self.inplace = inplace  # writes into an argument's array in place (`W -= ...`)

    def make_args(self, seed):
        rng = np.random.default_rng(seed)

        def arr(*shape):
            return rng.uniform(0.2, 1.3, size=shape) * rng.choice([-1.0, 1.0], size=shape)

        k = self.k
        if self.kind == "list":
            p = [arr(3) for _ in range(k)]
        elif self.kind == "nested":
            p = [[arr(3), arr(3)] for _ in range(k)]
        elif self.kind == "flat":
            p = {key: arr(3) for key in FLAT_KEYS[:k]}
        else:
            p = {"W": arr(3, 3), "b": arr(3), "layers": [arr(3) for _ in range(k)],
                 "enc": {"W": arr(3, 3)}}
        return p, arr(3)

    def tangents(self, seed):
        """Random tangents shaped like the arguments (for jvp)."""
        return self.make_args(seed + 10_000)


class CW:
    """One program: statements over the container `p`, the array `x` and the (3,) values made
    so far (self.vals); every value stays within a few units (FD-friendly)."""

    def __init__(self, ch, name, kind, k, open_forms=False):
        self.ch, self.name, self.kind, self.k = ch, name, kind, k
        self.open_forms = open_forms  # (also the forms of classes left open: OPEN_FORMS)
        self.lines: list[str] = []
        self.helpers: list[str] = []
        self.vals: list[str] = []
        self.scalars: list[str] = []
        self.features: set[str] = set()
        self.inplace = False
        self.n = 0

    def fresh(self, stem="u"):
        self.n += 1
        return f"{stem}{self.n}"

    def emit(self, text):
        self.lines.append("    " + text)

    def bind(self, expr):
        name = self.fresh()
        self.emit(f"{name} = {expr}")
        self.vals.append(name)
        return name

    # -- reads -----------------------------------------------------------------------------
    def item(self) -> str:
        """One item of the container (or an item times x for a matrix), shape (3,)."""
        ch, k = self.ch, self.k
        i = ch.int(0, k - 1)
        if self.kind == "list":
            return ch.pick((f"p[{i}]", f"p[{i - k}]"))
        if self.kind == "nested":
            return f"p[{ch.pick((i, i - k))}][{ch.int(-2, 1)}]"
        if self.kind == "flat":
            return f'p["{FLAT_KEYS[i]}"]'
        return ch.pick(('p["b"]', 'p["W"] @ x', f'p["layers"][{i}]', 'p["enc"]["W"] @ x',
                        'x @ p["W"]', f'p["layers"][{i - k}]'))

    def seq(self) -> str:
        """A flat sequence of (3,) items from the container."""
        if self.kind == "list":
            return "p"
        if self.kind == "nested":
            return f"p[{self.ch.int(-self.k, self.k - 1)}]"
        if self.kind == "flat":
            return self.ch.pick(("list(p.values())", "[p[key] for key in p]"))
        return 'p["layers"]'

    def whole(self) -> str:
        """The container (or a list in it) read whole, as one (3,) value."""
        ch = self.ch
        if self.kind == "nested" and ch.flag(0.3):
            return ch.pick(("np.sum(p, axis=(0, 1))", f"np.stack(p)[{ch.int(0, self.k - 1)}]"
                            f"[{ch.int(0, 1)}]", "np.max(np.max(p, axis=0), axis=0)"))
        s = self.seq()
        n = 2 if self.kind == "nested" else self.k
        j = ch.int(-n, n - 1)
        form = ch.weighted([(2, "sum0"), (2, "builtin_sum"), (2, "max0"), (1, "min0"),
                            (1, "mean0"), (2, "stack"), (2, "concat"), (1, "array")])
        if form == "sum0":
            return f"np.sum({s}, axis=0)"
        if form == "builtin_sum":
            return f"sum({s})"
        if form == "max0":
            return f"np.max({s}, axis=0)"
        if form == "min0":
            return f"np.min({s}, axis=0)"
        if form == "mean0":
            return f"np.mean({s}, axis=0)"
        if form == "stack":
            return f"np.stack({s})[{j}]"
        if form == "array":
            return f"np.asarray({s})[{j}] * np.array({s})[{ch.int(-n, n - 1)}]"
        return f"np.concatenate({s})[:3] * np.concatenate({s})[-3:]"

    def read(self, whole_weight=1):
        self.bind(self.whole() if self.ch.flag(whole_weight / (whole_weight + 1.0))
                  else self.item())

    def operand(self) -> str:
        ch = self.ch
        pool = ["x"] + self.vals
        return ch.pick(pool) if ch.flag(0.6) else self.item()

    def rhs(self) -> str:
        """A new (3,) value from what is live (bounded: tanh, sin, small factors)."""
        ch = self.ch
        a, b = self.operand(), self.operand()
        return ch.pick((f"np.tanh({a}) * 1.5", f"np.sin({a}) * {b}", f"{a} * 0.5 - {b}",
                        f"np.tanh({a} * {b})", f"{a} * {b} * 0.5"))

    # -- (a) stores into the argument --------------------------------------------------------
    def store(self):
        ch, k = self.ch, self.k
        rhs = self.rhs()
        i = ch.int(-k, k - 1)
        if self.kind == "list":
            self.emit(f"p[{i}] = {rhs}")
            back = f"p[{i}]"
        elif self.kind == "nested" and ch.flag(0.3):
            # (the slot given a new list, mostly after a store into the caller's own one
            # there: tape mode lost that store until 2026-12-04 -- the caller's names bound
            # to the old inner list kept it as it was)
            written = sorted(getattr(self, "inner_written", ()))
            if written and ch.flag(0.7):
                i = ch.pick(tuple(written))
            elif ch.flag(0.6):
                self.emit(f"p[{i}][0] = np.tanh(p[{i}][0]) * 1.5")
            self.emit(f"p[{i}] = [p[{i}][1] * 0.5, {rhs}]")
            back = f"p[{i}][1]"
        elif self.kind == "nested":
            j = ch.int(-2, 1)
            self.emit(f"p[{i}][{j}] = {rhs}")
            back = f"p[{i}][{j}]"
            self.inner_written = getattr(self, "inner_written", set()) | {i}
        elif self.kind == "flat":
            key = FLAT_KEYS[ch.int(0, k - 1)]
            self.emit(f'p["{key}"] = {rhs}')
            back = f'p["{key}"]'
        else:
            form = ch.pick(("b", "layers", "W", "enc", "enc_new"))
            if form == "b":
                self.emit(f'p["b"] = {rhs}')
                back = 'p["b"]'
            elif form == "layers":
                self.emit(f'p["layers"][{i}] = {rhs}')
                back = f'p["layers"][{i}]'
            elif form == "W":
                self.emit(f'p["W"] = p["W"] * 0.5 + np.outer({rhs}, x) * 0.25')
                back = 'p["W"] @ x'
            elif form == "enc":
                self.emit(f'p["enc"]["W"] = np.tanh(p["enc"]["W"]) + np.outer(x, {rhs}) * 0.25')
                back = 'x @ p["enc"]["W"]'
            else:  # (a new dict in the slot: the caller's old one keeps what was stored)
                self.emit(f'p["enc"] = {{"W": p["enc"]["W"] * 0.5 + np.outer({rhs}, x)}}')
                back = 'x @ p["enc"]["W"]'
        self.features.add("a")
        if ch.flag(0.5):
            self.bind(back)

    # -- (b) an item bound to a name, written through it -------------------------------------
    def slot_write(self, name, slot, rhs, forms, last) -> bool:
        """One write into the argument's `slot` (`p[1]`, `p["b"]`) among `forms`: a store
        through the container after binding a name to the item ("whole_ok", the only form
        without open_forms), a store through a name for the whole container ("whole"), or an
        in-place write through a name for the item (`-= ...`, or `last()`'s statement).
        Returns whether the item was written in place."""
        form = self.ch.pick(forms if self.open_forms else ("whole_ok",))
        item = slot[1:]  # (`[1]`, `["b"]`)
        if form == "whole_ok":
            self.emit(f"{name} = {slot}")
            self.emit(f"{slot} = {rhs}")
            self.vals.append(name)  # (the item as it was: the store left it alone)
            return False
        if form == "whole":
            self.emit(f"{name} = p")
            self.emit(f"{name}{item} = {rhs}")
            return False
        self.emit(f"{name} = {slot}")
        self.emit(f"{name} -= 0.25 * {rhs}" if form == "isub" else last())
        return True

    def alias_write(self):
        ch, k = self.ch, self.k
        i = ch.int(-k, k - 1)
        rhs = self.rhs()
        name = self.fresh("n")
        inplace = False
        if self.kind == "list":
            back = f"p[{i}]"
            inplace = self.slot_write(name, back, rhs, ("whole", "isub", "row"), lambda: (
                f"{name}[{ch.int(0, 2)}] = np.sum({rhs}) * 0.5"))
        elif self.kind == "nested":
            j = ch.int(-2, 1)
            self.emit(f"{name} = p[{i}]")
            if ch.flag(0.5):
                self.emit(f"{name}[{j}] = {rhs}")
            else:
                self.emit(f"{name}[{j}] = {name}[{j}] * 0.5 + {rhs}")
            back = f"p[{i}][{j}]"
        elif self.kind == "flat":
            back = f'p["{FLAT_KEYS[ch.int(0, k - 1)]}"]'
            inplace = self.slot_write(name, back, rhs, ("whole", "isub", "imul"),
                                      lambda: f"{name} *= 1.5")
        else:
            form = ch.pick(("layers", "step", "row", "enc", "b") if self.open_forms else
                           ("layers", "enc"))
            if form == "layers":
                self.emit(f'{name} = p["layers"]')
                self.emit(f"{name}[{i}] = {rhs}")
                back = f'p["layers"][{i}]'
            elif form == "step":
                self.emit(f'{name} = p["W"]')
                self.emit(f"{name} -= 0.1 * np.outer({rhs}, x)")
                back, inplace = 'p["W"] @ x', True
            elif form == "row":
                self.emit(f'{name} = p["W"]')
                self.emit(f"{name}[{ch.int(0, 2)}] = {rhs}")
                back, inplace = 'x @ p["W"]', True
            elif form == "enc":
                self.emit(f'{name} = p["enc"]')
                self.emit(f'{name}["W"] = {name}["W"] * 2.0 + np.outer({rhs}, x) * 0.25')
                back = 'p["enc"]["W"] @ x'
            else:
                self.emit(f'{name} = p["b"]')
                self.emit(f"{name} *= 1.5")
                back, inplace = 'p["b"]', True
        self.features.add("b")
        self.inplace |= inplace
        self.bind(back)  # (read back through the container)

    # -- (c) a callee storing into what it was given, then rebinding the name ---------------
    def callee(self):
        ch = self.ch
        fn = self.fresh(f"{self.name}_fill")
        local = self.kind in ("list", "nested") and ch.flag(0.4) or ch.flag(0.3)
        if self.kind == "nested" and not self.open_forms:
            local = True  # (an inner list handed to a callee: OPEN_FORMS)
        if local:  # a dict the caller made
            box, key, is_dict = self.fresh("cache"), '"a"', True
            self.emit(f'{box} = {{"a": {self.operand()}, "z": x * 1.0}}')
            target, back = box, f'{box}["a"]'
        elif self.kind == "list":
            i = ch.int(-self.k, self.k - 1)
            target, key, is_dict, back = "p", str(i), False, f"p[{i}]"
        elif self.kind == "nested":
            i, j = ch.int(-self.k, self.k - 1), ch.int(-2, 1)
            target, key, is_dict, back = f"p[{i}]", str(j), False, f"p[{i}][{j}]"
        elif self.kind == "flat":
            key = f'"{FLAT_KEYS[ch.int(0, self.k - 1)]}"'
            target, is_dict, back = "p", True, f"p[{key}]"
        else:
            sub = ch.pick(("p", 'p["layers"]', 'p["enc"]') if self.open_forms else ("p",))
            if sub == "p":
                target, key, is_dict, back = "p", '"b"', True, 'p["b"]'
            elif sub == 'p["layers"]':
                i = ch.int(-self.k, self.k - 1)
                target, key, is_dict, back = sub, str(i), False, f'p["layers"][{i}]'
            else:
                target, key, is_dict, back = sub, '"W"', True, 'p["enc"]["W"] @ x'
        empty, copy_ = ("{}", "dict(c)") if is_dict else ("[x]", "list(c)")
        new_key = '"z"' if is_dict else "0"
        form = ch.pick(("empty", "copy", "branch", "twice") if self.open_forms else
                       ("empty", "copy", "twice"))
        body = [f"c[{key}] = np.sin(c[{key}]) * x" if key != '"W"' else
                f"c[{key}] = c[{key}] * 0.5 + np.outer(x, x) * 0.25"]
        if form == "empty":
            body += [f"c = {empty}", f"c[{new_key}] = x * 2.0" if is_dict else "c[0] = x * 2.0"]
        elif form == "copy":  # (a copy: the store below does not reach the caller)
            body += [f"c = {copy_}", f"c[{key}] = np.tanh(x) * 0.5" if key != '"W"' else
                     f"c[{key}] = np.outer(x, x)"]
        elif form == "branch":
            body += ["if np.sum(x) > -100.0:", f"    c = {empty}",
                     f"c[{new_key}] = x * 2.0" if is_dict else "c[0] = x * 2.0"]
        else:  # stores, a rebinding, and the same name stored into again
            body += [f"c[{key}] = c[{key}] * 1.5", f"c = {copy_}", f"c[{key}] = c[{key}] * 3.0"]
        first = f'c["z"]' if is_dict and form in ("empty", "branch") else "c[0]" if \
            form in ("empty", "branch") else f"c[{key}]"
        ret = f"np.sum({first} * 0.5)" if key != '"W"' or form in ("empty", "branch") else \
            f"np.sum(({first} @ x) * 0.5)"
        self.helpers.append(f"def {fn}(c, x):\n" + "\n".join("    " + s for s in body) +
                            f"\n    return {ret}")
        s = self.fresh("s")
        self.emit(f"{s} = {fn}({target}, x)")
        self.scalars.append(s)
        self.features.add("c")
        self.bind(back)

    # -- (d) an item deleted from a copy ----------------------------------------------------
    def deleted(self):
        """A copy of the container (or of a list in it) with one item deleted, read after:
        `del q[i]` moves the later items one place down, `del q["b"]` takes the key away
        (srcad ignored every `del`, a wrong value and gradient, before the session of
        2026-12-06, ninth: frontend/pylower.py `_DeletedItems`)."""
        ch, k = self.ch, self.k
        q = self.fresh("q")
        if self.kind in ("list", "nested"):
            outer = ch.int(-k, k - 1)
            n = k if self.kind == "list" else 2
            self.emit(f"{q} = list(p)" if self.kind == "list" else f"{q} = list(p[{outer}])")
            self.emit(f"del {q}[{ch.int(-n, n - 1)}]")
            self.bind(f"{q}[{ch.int(-(n - 1), n - 2)}] * len({q})")
        else:
            key = FLAT_KEYS[ch.int(0, k - 1)] if self.kind == "flat" else "b"
            self.emit(f"{q} = dict(p)")
            self.emit(f'del {q}["{key}"]')
            self.bind(f'{q}.get("{key}", x * 0.5) * len({q})')
        self.features.add("d")

    # -- (e) a helper writing in place an item of a list the function builds ---------------
    def activations(self):
        """scikit-learn's forward pass: `acts[i + 1] = ...` in a loop and a helper writing
        that item in place (`np.tanh(X, out=X)`, `X *= 1.5`, `X[...] = ...`, `out=X`), a name
        bound to the item before its store (the old array, not written) or after it (the
        written one), the helper again after the loop; read after (session of 2026-12-07:
        refused before, and a name bound to the item after its store kept the old values --
        a wrong value, silently -- where the index was a constant)."""
        ch = self.ch
        fn = self.fresh(f"{self.name}_act")
        body = ch.pick(("np.tanh(X, out=X)", "X *= 1.5", "X[...] = X * 0.5 + 0.1",
                        "np.multiply(X, 0.75, out=X)"))
        self.helpers.append(f"def {fn}(X):\n    {body}")
        acts, i, n = self.fresh("acts"), self.fresh("i"), ch.int(1, 3)
        self.emit(f"{acts} = [x * (k + 1.0) for k in range({n + 1})]")
        self.emit(f"for {i} in range({n}):")
        old = self.fresh("old") if ch.flag(0.4) else None
        if old:
            self.emit(f"    {old} = {acts}[{i} + 1]")
        self.emit(f"    {acts}[{i} + 1] = np.sin({acts}[{i}]) * 0.5 + {self.operand()}")
        seen = self.fresh("a") if ch.flag(0.5) else None
        if seen:
            self.emit(f"    {seen} = {acts}[{i} + 1]")
        self.emit(f"    {fn}({acts}[{i} + 1])")
        if ch.flag(0.4):
            self.emit(f"{fn}({acts}[{i} + 1])")
        for name in (old, seen):
            if name:
                self.vals.append(name)
        self.bind(f"{acts}[-1] + {acts}[0]")
        self.features.add("e")

    # -- the program -----------------------------------------------------------------------------
    def program(self):
        ch = self.ch
        for _ in range(ch.int(1, 3)):  # reads before any store (whole ones mostly)
            self.read(whole_weight=2)
        for _ in range(ch.int(1, 3)):
            ch.weighted([(3, self.store), (3, self.alias_write), (2, self.callee),
                         (1, self.deleted), (1, self.activations)])()
            if ch.flag(0.4):
                self.read()
        for _ in range(ch.int(1, 2)):  # and after
            self.read(whole_weight=2)
        terms = [f"np.sum({v} * {v})" if n % 2 else f"np.sum(np.tanh({v}) * x)"
                 for n, v in enumerate(self.vals)]
        terms += self.scalars
        self.emit(f"return {' + '.join(terms)}")
        main = f"def {self.name}(p, x):\n" + "\n".join(self.lines)
        return "\n\n\n".join(self.helpers + [main])


def generate(ch, index, open_forms=False) -> Prog:
    kind = ch.pick(KINDS)
    k = ch.int(2, 4) if kind != "nested" else ch.int(1, 3)
    name = f"cw{index}"
    cw = CW(ch, name, kind, k, open_forms)
    src = cw.program()
    return Prog(name, src, kind, k, frozenset(cw.features), cw.inplace)


def batch(seed, n, open_forms=False):
    """n programs and the module they were imported from."""
    from tests.fuzz_python import HEADER

    programs = [generate(FP.RandomChooser(seed * 7919 + i), i, open_forms) for i in range(n)]
    module = FP.import_source("import numpy as np\n" + HEADER + "\n\n" + "\n\n\n".join(
        p.source for p in programs) + "\n", f"cw{seed}")
    return programs, module
