"""Random programs whose called functions change the lists and dicts they are given.

A training loop's helpers keep a log (``history.append(loss)``), count steps in a config dict
(``cfg["step"] += 1``), trim a buffer (``buf.pop(0)``), reset state (``log.clear()``): the
containers are not differentiated, but the differentiated value often reads them back
(``len(history)``, ``cfg.get("scale", 1.0)``) and Python's caller -- and its next call --
sees every change the callee made to the very object it passed. The session of 2026-12-07,
twelfth found four silent bugs of this class by hand (tape mode dropped a callee's append,
pop and deletion; source mode carried a nested function's append back as a value); the
pytree fuzzers never drew such a program. This generator does.

Each program (names prefixed ``p<i>_``) has two or three helpers ``h<j>(x, log, cfg)`` /
``h<j>(log, cfg)`` that change their arguments by one to three statements drawn from
`LIST_CHANGES` / `DICT_CHANGES` (into ``log``, into ``cfg``, into the list ``cfg["hist"]``,
through a second name, in a loop), some calling an earlier helper, some returning a value of
``x``; and ``f(x, log, cfg)`` calling them (once, in a loop, passing ``cfg["hist"]`` as the
log, by keyword), changing the containers itself now and then, and returning a scalar of
``x`` that reads the containers back (their lengths, items, sums, ``.get``). The values put
into the containers are mostly numbers that do not depend on ``x`` (lengths, constants,
``x.shape[0]``); one in eight is a value of ``x`` (``float(np.sum(x))``, an array), which srcad
must follow or refuse.

tests/test_fuzz_callee_containers.py runs each program twice on the same containers, in
source, fused and tape mode, against Python on its own copies: the value, the gradient (central
differences, the containers as they were before that call) and the containers after each call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tests import fuzz_programs as FP

# (a statement over the list `{L}`; `{V}` a value, `{W}` another)
LIST_CHANGES = [
    (4, ["{L}.append({V})"]),
    (2, ["{L}.extend([{V}, {W}])"]),
    (2, ["{L} += [{V}]"]),
    (1, ["{L}.insert(0, {V})"]),
    (2, ["if {L}:", "    {L}.pop()"]),
    (1, ["if {L}:", "    {L}.pop(0)"]),
    (1, ["if len({L}) > 1:", "    del {L}[0]"]),
    (1, ["if {L}:", "    {L}[-1] = {V}"]),
    (1, ["{L}.clear()"]),
    (1, ["{L}.reverse()"]),
    (1, ["{L}.sort()"]),
    (1, ["{L}[:] = {L}[-2:]"]),
    (1, ["for i in range(2):", "    {L}.append({V} + i)"]),
]
DICT_CHANGES = [
    (3, ["{D}['a'] = {V}"]),
    (2, ["{D}.update({{'b': {V}}})"]),
    (1, ["{D}.update(c={V})"]),
    (2, ["{D}['n'] = {D}.get('n', 0.0) + 1.0"]),
    (1, ["{D}.setdefault('s', {V})"]),
    (1, ["{D}.pop('a', None)"]),
    (1, ["if 'b' in {D}:", "    del {D}['b']"]),
    (2, ["{D}['hist'].append({V})"]),
    (1, ["{D}['hist'] = {D}['hist'] + [{V}]"]),
]
# numbers that do not depend on x (`{L}` the list changed), then values of x
PLAIN_VALUES = ["1.5", "0.25", "float(len({L}))", "float(x.shape[0])", "2.0 * len({L})",
                "-0.5"]
X_VALUES = ["float(np.sum(x))", "np.sum(x) * 0.5", "x[0] * 1.0"]
# reads of the containers in f's output (each a float expression)
READS = ["len(log)", "sum(log)", "(log[-1] if log else 0.0)", "cfg.get('a', 0.0)",
         "len(cfg)", "len(cfg['hist'])", "sum(cfg['hist'])", "cfg.get('n', 0.0)",
         "(cfg['hist'][0] if cfg['hist'] else 0.0)", "cfg.get('b', 1.0)"]


@dataclass
class Prog:
    name: str
    source: str
    state: str | None = None  # the module object holding the containers (`p<i>_S`), if so

    def make_args(self, seed):
        rng = np.random.default_rng(seed)
        x = rng.uniform(-1.0, 1.0, 3)
        return (x,) if self.state else (x, [0.5], {"a": 1.0, "hist": [2.0], "n": 0.0})


class _Gen:
    def __init__(self, ch, p, objects=False):
        self.ch, self.p = ch, p
        self.lines: list[str] = []
        self.n = 0
        # (`objects`: half the programs keep the containers on a module object, `p<i>_S.log`,
        # given to the helpers as `s`: changed as `s.log.append(v)`, or through names bound
        # first -- drawn only when asked, so the other programs of a seed stay as they were)
        self.obj = objects and ch.flag(0.5)

    def fresh(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def value(self, L, has_x):
        ch = self.ch
        if has_x and ch.flag(0.125):
            return ch.pick(X_VALUES)
        return ch.pick([v for v in PLAIN_VALUES if has_x or "x" not in v]).format(L=L)

    def change(self, out, indent, L, D, has_x):
        """One change of the list `L` or the dict `D` (through a second name now and then)."""
        ch = self.ch
        if ch.flag(0.55):
            lines = ch.weighted(LIST_CHANGES)
            if ch.flag(0.2):
                alias = self.fresh("k")
                out.append(f"{indent}{alias} = {L}")
                L = alias
            fill = {"L": L, "V": self.value(L, has_x), "W": self.value(L, has_x)}
        else:
            lines = ch.weighted(DICT_CHANGES)
            if ch.flag(0.15):
                alias = self.fresh("e")
                out.append(f"{indent}{alias} = {D}")
                D = alias
            fill = {"D": D, "V": self.value(f"{D}['hist']", has_x)}
        out += [indent + s.format(**fill) for s in lines]

    def helper(self, j, earlier):
        ch, p = self.ch, self.p
        has_x = ch.flag(0.6)
        given = "s" if self.obj else "log, cfg"
        params = f"x, {given}" if has_x else given
        body: list[str] = []
        L, D = "log", "cfg"
        if self.obj and ch.flag(0.5):
            body.append("    log, cfg = s.log, s.cfg")
        elif self.obj:
            L, D = "s.log", "s.cfg"
        for _ in range(ch.int(1, 3)):
            self.change(body, "    ", L, D, has_x)
        if earlier and ch.flag(0.35):  # (an earlier helper called from this one)
            k, takes_x = ch.pick(earlier)
            if has_x or not takes_x:
                body.append(f"    {p}h{k}({'x, ' if takes_x else ''}{given})")
        returns = has_x and ch.flag(0.5)
        if returns:
            log = "s.log" if self.obj else "log"
            body.append(f"    return np.sum(np.sin(x)) * 0.5 + len({log}) * 0.1")
        return has_x, returns, [f"def {p}h{j}({params}):"] + body

    def program(self, i):
        ch = self.ch
        p = self.p
        out, helpers = [], []
        for j in range(ch.int(2, 3)):
            has_x, returns, lines = self.helper(j, [(k, hx) for k, hx, _ in helpers])
            helpers.append((j, has_x, returns))
            out += lines + ["", ""]
        body = ["    extra = 0.0"]
        given = f"{p}S" if self.obj else "log, cfg"
        for _ in range(ch.int(1, 4)):
            j, has_x, returns = ch.pick(helpers)
            call = f"{p}h{j}({'x, ' if has_x else ''}{given})"
            form = ch.weighted([(4, "plain"), (1, "loop"), (1, "hist"), (1, "keyword"),
                                (1, "own")])
            if self.obj and form in ("hist", "keyword"):
                form = "plain"
            if form == "loop":
                body += ["    for _ in range(2):", f"        {call}"]
            elif form == "hist":  # (the list cfg holds, passed as the log)
                body.append(f"    {p}h{j}({'x, ' if has_x else ''}cfg['hist'], cfg)")
            elif form == "keyword":
                body.append(f"    {p}h{j}({'x=x, ' if has_x else ''}log=log, cfg=cfg)")
            elif form == "own":
                self.change(body, "    ", f"{p}S.log" if self.obj else "log",
                            f"{p}S.cfg" if self.obj else "cfg", True)
                continue
            elif returns:
                body.append(f"    extra = extra + {call}")
                continue
            else:
                body.append(f"    {call}")
        reads = [ch.pick(READS) for _ in range(ch.int(1, 3))]
        if self.obj:
            reads = [re.sub(r"\b(log|cfg)\b", rf"{p}S.\1", r) for r in reads]
        scale = " + ".join(f"0.1 * {r}" for r in reads)
        body.append(f"    return np.sum(np.tanh(x) * (1.0 + {scale})) + extra")
        if not self.obj:
            out += [f"def {p}f(x, log, cfg):"] + body
            return Prog(f"{p}f", "\n".join(out) + "\n")
        state = [f"class {p}State:", "    def __init__(self):", "        self.log = [0.5]",
                 "        self.cfg = {'a': 1.0, 'hist': [2.0], 'n': 0.0}", "", "",
                 f"{p}S = {p}State()", "", ""]
        out = state + out + [f"def {p}f(x):"] + body
        return Prog(f"{p}f", "\n".join(out) + "\n", f"{p}S")


def batch_programs(seed, n, objects=False):
    ch = FP.RandomChooser(seed)
    return [_Gen(ch, f"p{i}_", objects).program(i) for i in range(n)]


def import_programs(programs, tag):
    """A fresh module holding `programs`."""
    return FP.import_source("import numpy as np\n\n\n" + "\n\n".join(p.source for p in programs),
                            tag)
