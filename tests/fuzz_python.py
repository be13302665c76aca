"""The Python around numpy, for the differential fuzz corpus (tests/fuzz_programs.py).

`statement(g)` writes one statement of a kind issue 11 made work into the function that the
generator `g` (a `fuzz_programs.Gen`) is building, over its live values, with its shape and
bound bookkeeping:

  inactive   ``v = a / math.sqrt(a.shape[-1])``, ``float(...)``, ``int(...)``, ``math.log``
  rng        a random draw from a generator made inside: ``np.random.default_rng(3)...``
  print      ``print(f"...", a.shape, file=_SINK)`` (the module's own sink: runs once per
             call in both modes, which test_fuzz checks), also of a differentiated value
  assert     ``assert a.shape == (m, n), "..."``
  listcomp   ``np.stack([np.tanh(t) for t in (a, b)])``, rows by index
  genexp     ``sum(np.sin(t) * c for t in (a, b))``, sometimes chosen by a test whose operand
             after ``and`` is a generator (``any(d > 1 for d in np.shape(a))``)
  closure    a nested ``def`` over a captured value, called at once
  lambda     ``f = lambda t: ...`` called at once
  dict       ``d = {"p": a, "q": b}`` / ``dict(p=a, q=b)`` / ``{"p": a} | {"q": b}`` / one
             with an item deleted (``del d["r"]``), then its values combined; a number
             item's own ``d["n"] += ...`` / ``acc[0] *= ...`` beside a name read first; or a
             list, tuple, dict or OrderedDict whose type ``isinstance`` tests (session of
             2026-12-05, fifth: tape mode answered False for an OrderedDict, silently)
  append     a list built by ``lst.append`` in a loop, then stacked or summed
  spread     two values spread by a star (session of 2026-12-07, eleventh: refused unless
             the star came last into a user function): ``cl(*pair)`` of a nested def,
             ``np.maximum(*pair)``, a namedtuple from ``*pair``, ``._make(pair)`` or
             ``**d``; and a walrus read after it in its statement, ``(h := ...) * h``
  funcs      numpy functions as values (session of 2026-12-03): a generator over a list of
             them, ``f = np.tanh; f(a) if f is np.tanh else ...``, a dict keyed by them,
             ``functools.partial(np.multiply, 0.5)`` -- tape mode's identity of ``np.tanh``
             was another object at each access (a wrong branch, silently)

Every form is valid numpy by construction (shapes broadcast, bounds tracked), so source and
tape must agree bit for bit and both must match finite differences.
"""

from __future__ import annotations

from tests.fuzz_programs import E, _broadcast

HEADER = ("import collections\nimport functools\nimport io\nimport math\n\n_SINK = io.StringIO()\n"
          '_DEFAULTS = {"p": 1.0, "q": 2.0, "s": 0.5, "name": "defaults"}\n'
          '_Pair = collections.namedtuple("_Pair", ["p", "q"])\n')


def _same_shape(g, a, k):
    """Up to k live values shaped like `a` (a first), none a Python float."""
    out = [a]
    for e in g.vars(lambda e: e.shape == a.shape and not e.pyf and e is not a):
        if len(out) < k:
            out.append(e)
    while len(out) < k:
        out.append(a)
    return out


def statement(g) -> bool:
    ch = g.ch
    a = g.pick_var(lambda e: not e.pyf)
    if a is None:
        return False
    kind = ch.weighted([(3, "inactive"), (1, "rng"), (2, "print"), (1, "assert"),
                        (3, "listcomp"), (2, "genexp"), (2, "closure"), (2, "lambda"),
                        (2, "dict"), (2, "append"), (2, "funcs"), (2, "pop"), (2, "iter"),
                        (2, "spread")])
    g.feature(f"py_{kind}")
    name = g.fresh_name()
    s, B = a.shape, a.bound
    if kind == "inactive":
        form = ch.int(0, 3)
        if form == 0 and a.ndim:
            g.assign(E(f"{a.op} / math.sqrt({a.text}.shape[-1])", s, B, atom=False), name)
        elif form == 1:
            g.assign(E(f"{a.op} * float({a.text}.ndim + 1)", s, B * (a.ndim + 1), atom=False),
                     name)
        elif form == 2:
            g.assign(E(f"{a.op} * math.log(2.0) + math.cos(0.5)", s, B + 1.0, atom=False),
                     name)
        else:
            g.assign(E(f"{a.op} * int({a.text}.size / 2 + 1)", s, B * (a.size // 2 + 1),
                       atom=False), name)
        return True
    if kind == "rng":
        seed = ch.int(0, 9)
        draw = f"np.random.default_rng({seed}).uniform(0.5, 1.5, {a.text}.shape)"
        g.assign(E(f"{a.op} * {draw}.astype({a.text}.dtype)", s, 1.5 * B, atom=False), name)
        return True
    if kind == "print":
        what = ch.pick((f'f"{name}: {{np.shape({a.text})}}"',
                        f'f"{name} {{float(np.sum({a.text})):.3f}}"',
                        f'"{name}", np.ndim({a.text})'))
        g.emit(f"print({what}, file=_SINK)")
        return True
    if kind == "assert":
        form = ch.int(0, 1)
        if form == 0:
            g.emit(f"assert np.shape({a.text}) == {s!r}, \"{name}: shape\"")  # (a float too)
        else:
            g.emit(f"assert np.all(np.isfinite({a.text})), f\"{name} at {{np.shape({a.text})}}\"")
        return True
    t = g.module.fresh("t")
    te = E(t, s, B, fresh=False)
    if kind == "listcomp":
        if a.ndim and s[0] <= 4 and ch.flag(0.4):  # the rows, by index
            row = E(f"{a.op}[{t}]", s[1:], B, fresh=False)
            body = g.unary(row)
            g.assign(E(f"np.stack([{body.text} for {t} in range({s[0]})])", s, body.bound),
                     name)
            return True
        k = ch.int(2, 3)
        if k * a.size > 36 or a.ndim > 1:  # (values stay at most 2-D)
            return False
        items = _same_shape(g, a, k)
        body = g.unary(te)
        g.assign(E(f"np.stack([{body.text} for {t} in ({', '.join(e.text for e in items)})])",
                   (k,) + s, body.bound), name)
        return True
    if kind == "genexp":
        c = g.pick_var(lambda e: _broadcast(e.shape, s) == s) or a
        items = _same_shape(g, a, ch.int(2, 3))
        body = g.binary(g.unary(te), c)
        if body is None or body.shape != s:
            return False
        total = f"sum({body.text} for {t} in ({', '.join(e.text for e in items)}))"
        if ch.flag(0.3):  # (under a test whose operand after `and` is a generator: refused
            # before the session of 2026-12-07, twelfth; shapes only, so nothing nonsmooth)
            d = g.module.fresh("d")
            test = (f"np.ndim({a.text}) > {ch.int(0, 1)} and "
                    f"any({d} > {ch.int(1, 3)} for {d} in np.shape({a.text}))")
            g.assign(E(f"({total} if {test} else {a.op} * 2.0)", s,
                       max(len(items) * body.bound, 2.0 * B), atom=False), name)
            return True
        g.assign(E(total, s, len(items) * body.bound), name)
        return True
    if kind in ("closure", "lambda"):
        c = g.pick_var(lambda e: _broadcast(e.shape, s) == s and e is not a) or a
        body = g.binary(te, c) if ch.flag(0.6) else None
        if body is None or body.shape != s:
            body = g.unary(te)
        fn = g.module.fresh("cl" if kind == "closure" else "lam")
        if kind == "closure":
            g.emit(f"def {fn}({t}):")
            g.emit(f"    return {body.text}")
        else:
            g.emit(f"{fn} = lambda {t}: {body.text}")
        g.assign(E(f"{fn}({a.text})", s, body.bound), name)
        return True
    if kind == "dict":
        b = g.pick_var(lambda e: _broadcast(e.shape, s) is not None and not e.pyf) or a
        shape = _broadcast(a.shape, b.shape)
        if shape is None:
            return False
        d = g.module.fresh("d")
        form = ch.int(0, 9)
        if form in (2, 3):
            return _typed_container(g, d, a, b, name)
        if form in (8, 9):
            return _number_items(g, d, a, name, form == 9)
        if form == 0:
            g.emit(f'{d} = {{"p": {a.text}, "q": {b.text}}}')
        elif form == 1:
            g.emit(f"{d} = dict(p={a.text}, q={b.text})")
        elif form == 4:  # (Python's dict union: numpy's bitwise or to srcad, no gradient
            # through it, silently, before the session of 2026-12-06, ninth)
            g.emit(f'{d} = {{"p": {a.text}, "q": {a.text}}} | {{"q": {b.text}}}')
        elif form in (6, 7):  # (a module's dict unpacked or copied with keywords: refused
            # before the session of 2026-12-07; its "s" read at the call)
            g.emit(ch.pick((f'{d} = {{**_DEFAULTS, "p": {a.text}, "q": {b.text}}}',
                            f'{d} = {{"p": {a.text}, **_DEFAULTS, "q": {b.text}}}'))
                   if form == 6 else f"{d} = dict(_DEFAULTS, p={a.text}, q={b.text})")
            if form == 6 and "**_DEFAULTS, \"q\"" in g.lines[-1]:  # (p is _DEFAULTS' 1.0)
                a = E("1.0", (), 1.0, pyf=True)
                shape = b.shape
            g.emit(f'{d}["q"] = {d}["q"] * {d}["s"]')
            b = E(b.text, b.shape, b.bound * 0.5)
        else:  # (an item deleted: ignored, before that session)
            g.emit(f'{d} = {{"p": {a.text}, "r": {b.text}, "q": {b.text}}}')
            g.emit(f'del {d}["r"]')
            g.emit(f'{d}["q"] = {d}.get("r", {d}["q"])')
        pa, pb = E(f'{d}["p"]', a.shape, a.bound), E(f'{d}["q"]', b.shape, b.bound)
        if pa.bound * pb.bound > 50.0:
            g.assign(E(f"{pa.text} + {pb.text}", shape, pa.bound + pb.bound, atom=False), name)
        else:
            g.assign(E(f"{pa.text} * {pb.text}", shape, pa.bound * pb.bound, atom=False), name)
        return True
    if kind == "funcs":
        if g.indent > 1:
            # (a function bound to a name inside a branch or a loop is a run-time value
            # there, and a loop over a list of them is walked by index: refused at the
            # call -- open)
            return False
        form = ch.int(0, 3)
        f = g.module.fresh("fn")
        if form == 0:
            g.assign(E(f"sum({f}({a.text}) for {f} in [np.tanh, np.sin])", s, 2.0), name)
        elif form == 1:
            other = ch.pick(("np.tanh", "np.sin"))
            g.emit(f"{f} = {other}")
            g.assign(E(f"{f}({a.text}) * 1.5 if {f} is np.tanh else np.cos({a.text})", s, 1.5,
                       atom=False), name)
        elif form == 2:
            other = ch.pick(("np.tanh", "np.sin"))
            g.emit(f"{f} = {other}")
            g.assign(E(f"{{np.tanh: 1.5, np.sin: 0.5}}[{f}] * {f}({a.text})", s, 1.5,
                       atom=False), name)
        else:
            g.emit(f"{f} = functools.partial(np.multiply, 0.5)")
            g.assign(E(f"{f}({a.text})", s, 0.5 * B), name)
        return True
    if kind in ("pop", "iter"):
        return _stack_or_iterator(g, kind, a, name)
    if kind == "spread":
        return _spread(g, a, name)
    # append: a list built in a loop
    k = ch.int(1, 3)
    if k * a.size > 36:
        return False
    lst, i = g.module.fresh("lst"), g.module.fresh("i")
    body = g.unary(a)
    g.emit(f"{lst} = []")
    g.emit(f"for {i} in range({k}):")
    g.emit(f"    {lst}.append({g._paren(body.text)} * ({i} + 1.0))")
    if ch.flag(0.5) and a.ndim <= 1:
        g.assign(E(f"np.stack({lst})", (k,) + s, body.bound * k), name)
    else:
        g.assign(E(f"sum({lst})", s, body.bound * k * k), name)
    return True


def _spread(g, a, name) -> bool:
    """Two live values spread by a star into a call: a nested def's parameters, a numpy
    function's, a namedtuple's fields (from ``*pair``, ``_Pair._make(pair)``, ``**d``) -- or
    a walrus whose name the statement reads after it."""
    ch, s = g.ch, a.shape
    b = g.pick_var(lambda e: _broadcast(e.shape, s) is not None and not e.pyf) or a
    shape = _broadcast(s, b.shape)
    if shape is None:
        return False
    form = ch.int(0, 5)
    if form == 5:
        h = g.module.fresh("h")
        u = g.unary(a)
        g.assign(E(f"({h} := {u.text}) * {h}", s, u.bound * u.bound, atom=False), name)
        return True
    pair, t, u = g.module.fresh("pair"), g.module.fresh("t"), g.module.fresh("u")
    g.emit(f"{pair} = {ch.pick(('({}, {})', '[{}, {}]')).format(a.text, b.text)}")
    if form == 0:
        fn = g.module.fresh("cl")
        g.emit(f"def {fn}({t}, {u}):")
        g.emit(f"    return {t} * 0.5 + np.tanh({u})")
        g.assign(E(f"{fn}(*{pair})", shape, 0.5 * a.bound + 1.0), name)
    elif form == 1:
        g.assign(E(f"np.maximum(*{pair})", shape, max(a.bound, b.bound)), name)
    else:
        nt = g.module.fresh("nt")
        if form == 2:
            g.emit(f"{nt} = _Pair(*{pair})")
        elif form == 3:
            g.emit(f"{nt} = _Pair._make({pair})")
        else:
            g.emit(f'{nt} = _Pair(**{{"q": {pair}[1], "p": {pair}[0]}})')
        g.assign(E(f"{nt}.p * {nt}.q", shape, a.bound * b.bound, atom=False), name)
    return True


def _number_items(g, d, a, name, in_list: bool) -> bool:
    """A dict's or list's number item written by its own augmented assignment (``d["n"] +=
    1.5``, ``acc[0] += np.sum(a)``), one read by another name first (keeps the old number):
    source mode stored only array items back into the slot from 2aa7515 until the session
    of 2026-12-07 (eleventh) -- the old number read back, silently."""
    ch, s = g.ch, a.shape
    m = g.module.fresh("m")
    slot = f"{d}[0]" if in_list else f'{d}["n"]'
    g.emit(f"{d} = [0.5, 2.0]" if in_list else f'{d} = {{"n": 0.5, "k": 2.0}}')
    g.emit(f"{m} = {slot}")
    total = ch.flag(0.5) and a.size <= 12
    if total:  # (a differentiated number: |sum(a)| <= size * bound)
        g.emit(f"{slot} += float(np.sum({a.text})) * 0.25" if ch.flag(0.3) else
               f"{slot} += np.sum({a.text}) * 0.25")
        bound = 0.5 + 0.25 * a.size * a.bound
    else:
        g.emit(f"{slot} {ch.pick(('+=', '-=', '*='))} 1.5")
        bound = 2.0
    g.emit(f"{m} += 1.0")  # (a number: rebinds m only)
    g.assign(E(f"{a.op} * {slot} - {a.op} * {m} * 0.5", s, a.bound * (bound + 0.75),
               atom=False), name)
    return True


def _typed_container(g, d, a, b, name) -> bool:
    """A list, tuple, dict or OrderedDict of two values, its type tested by `isinstance`
    against one of those (or a pair of them) to pick a factor: tape mode rebuilt containers
    as plain lists and dicts for `isinstance` (an OrderedDict answered False, silently)."""
    ch = g.ch
    kind = ch.pick(("list", "tuple", "dict", "ordered"))
    made = {"list": f"[{a.text}, {b.text}]", "tuple": f"({a.text}, {b.text})",
            "dict": f'{{"p": {a.text}, "q": {b.text}}}',
            "ordered": f'collections.OrderedDict(p={a.text}, q={b.text})'}[kind]
    g.emit(f"{d} = {made}")
    test = ch.pick(("list", "tuple", "dict", "collections.OrderedDict", "(list, tuple)",
                    "(dict, tuple)"))
    first = f'{d}["p"]' if kind in ("dict", "ordered") else f"{d}[0]"
    g.assign(E(f"{first} * (1.5 if isinstance({d}, {test}) else 0.5)", a.shape, a.bound * 1.5,
               atom=False), name)
    return True


def _stack_or_iterator(g, kind, a, name) -> bool:
    """A list of live values shaped like `a` read back by ``.pop()`` (a stack emptied in a
    ``while``, a pop inside an expression, ``pop(i)``, the last popped off a copy) or by
    ``next(it)`` of ``it = iter(...)`` (in a loop, in a branch, the rest by ``for t in it``)
    -- the forms of 2026-12-04 (a pop crashed source mode's backward; reads of an iterator in
    a loop were refused)."""
    ch, s = g.ch, a.shape
    items = _same_shape(g, a, ch.int(2, 3))
    if sum(e.size for e in items) > 36:
        return False
    if len(items) > 2 and ch.flag(0.3):
        # (one value in two slots, drawn on purpose: read through an iterator in a loop's
        # body, x's cotangent reached x where the display was made, after the trip's other
        # uses of x -- 1 ulp from tape mode until 2026-12-06: tests/test_loop_displays.py)
        items[-1] = items[0]
    lst, acc, t = g.module.fresh("lst"), g.module.fresh("acc"), g.module.fresh("t")
    bound = sum(e.bound for e in items)
    display = f"[{', '.join(e.text for e in items)}]"
    form = ch.int(0, 3 if kind == "pop" else 2)
    if kind == "pop":
        g.emit(f"{lst} = {display}" if ch.flag(0.5) else f"{lst} = list({display})")
        if form == 0:
            g.emit(f"{acc} = {a.op} * 0.5")
            g.emit(f"while {lst}:")
            g.emit(f"    {acc} = {acc} * 0.5 + np.tanh({lst}.pop())")
            g.assign(E(acc, s, a.bound + 2.0, fresh=False), name)
        elif form == 1:
            # (one array held twice and popped from the middle differed from tape mode in
            # the last bits until 2026-12-04: tests/test_list_pop.py)
            at = ch.pick(("0", "-1", "1", "-2"))
            g.emit(f"{t} = {lst}.pop({at})")
            g.assign(E(f"{t} * 0.5 + sum({lst})", s, bound, atom=False), name)
        elif form == 3:
            # (a pop under `x if c else y`: source mode read it as srcad's own stack pop, no
            # gradient through the popped item, until 2026-12-04. One array held twice
            # differed from tape mode in the last bits there until 2026-12-05 -- drawn with
            # distinct items till then: tests/test_function_factories.py)
            side = ch.pick(("pop()", "pop(0)"))
            test = ch.pick((f"{a.text}.size > 2", f"np.sum({a.text}) > -1e9",
                            f"len({lst}) > 1"))
            g.emit(f"{t} = {lst}.{side} if {test} else {a.op} * 0.25")
            rest = ch.pick((f"sum({lst})", f"{lst}[0]"))
            g.assign(E(f"{t} * 0.5 + {rest}", s, bound + a.bound, atom=False), name)
        else:
            g.emit(f"{t} = {lst}.pop()")
            g.emit(f"for {acc} in {lst}:")
            g.emit(f"    {t} = {t} * 0.5 + np.sin({acc})")
            g.assign(E(t, s, bound + len(items), fresh=False), name)
        return True
    it = g.module.fresh("it")
    g.emit(f"{it} = iter({display})")
    g.emit(f"{acc} = {a.op} * 0.5")
    if form == 0:
        g.emit(f"for {t} in range({len(items)}):")
        g.emit(f"    {acc} = {acc} * 0.5 + np.tanh(next({it}))")
        g.assign(E(acc, s, a.bound + 2.0, fresh=False), name)
    elif form == 1:
        g.emit(f"for {t} in range({len(items) - 1}):")
        g.emit(f"    {acc} = {acc} + next({it}) * 0.5")
        g.emit(f"for {t} in {it}:")
        g.emit(f"    {acc} = {acc} + np.sin({t})")
        g.assign(E(acc, s, a.bound + bound + len(items), fresh=False), name)
    else:
        g.emit(f"if {a.text}.size > {ch.int(0, 4)}:")
        g.emit(f"    {acc} = {acc} + next({it})")
        g.emit("else:")
        g.emit(f"    {acc} = {acc} - next({it}) * 0.5")
        g.emit(f"{acc} = {acc} * next({it})")
        g.assign(E(acc, s, (a.bound + bound) * bound, fresh=False), name)
    return True
