"""The normalised IR that every stage after the frontend reads.

A function body is a list of statements, each one operation into a fresh name:

    Call(target, op, args, line)      target = op(**args)      (args: param name -> Atom)
    Effect(kind, op, args, line)      print(...), assert, raise: run for its effect only
    Return(value, line)               return atom

Atoms are `Var` (a local name), `Const` (a literal or an injected constant, with the
source text that spells it), `Seq` (a tuple/list literal of atoms, e.g. the arrays of
`np.concatenate` or a shape), and `Index` (the subscript of `a[...]`, made of atoms,
`Slice`s, None and Ellipsis).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Union

from .ops.table import Op


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True, eq=False)
class Const:
    value: Any
    src: str  # how generated code spells it: a literal, or a name injected into its namespace

    def __eq__(self, other):
        return isinstance(other, Const) and self.src == other.src

    def __hash__(self):
        return hash(("Const", self.src))


@dataclass(frozen=True)
class Seq:
    items: tuple
    kind: str = "tuple"  # or "list"


@dataclass(frozen=True)
class Slice:
    lower: Any = None
    upper: Any = None
    step: Any = None


@dataclass(frozen=True)
class Index:
    parts: tuple  # of Atom | Slice | Const(None) | Const(Ellipsis)
    is_tuple: bool


Atom = Union[Var, Const, Seq, Index]


@dataclass
class Call:
    target: str
    op: Op
    args: dict  # param name -> Atom, only the ones given (defaults come from the op)
    line: int
    inplace: bool = False  # `x op= y` on a name: numpy writes into x (see interpret.py)
    # (key, atom): this statement carries `e op= t` through `e = x[i, j]` to what shares x's
    # memory (frontend/aliasing.py, a group `key` that begins with `write_through`); where the
    # shapes show e is a scalar copy, nothing is written and the name keeps `atom`, its value
    # before (transform/arrays.py). None: not such a statement.
    undo: tuple | None = None
    # `x[i] op= t` of a list or dict (a display srcad holds item by item, or a name): the
    # store of the item numpy wrote in place (analysis/refusals.py: the array in that slot,
    # written, which other holders see), told apart from a plain store `x[i] = x[i] op t`
    augmented: bool = False
    # a copy `p = identity(a)` of an argument of a module-level function spliced into its
    # caller (frontend/closure_values.py): kept, so the adjoint from inside the call is
    # summed under its own name before it is added to the caller's -- a subroutine's order
    scope: bool = False


@dataclass
class Return:
    value: Any  # Atom
    line: int


@dataclass
class UserCall:
    """``targets = fn(*args)``: a call to another user function, differentiated as a
    subroutine of its own (a `<fn>_fwd` / `<fn>_bwd` pair). Several targets: the function
    returns a tuple that the call site unpacks."""

    targets: list
    callee: "Function"
    fn: Any  # the Python function (called as it is where no gradient flows through it)
    fn_name: str  # how generated code spells the plain call
    args: list  # atoms, one per callee parameter
    line: int
    multi: bool = False  # the callee returns a tuple
    unpack: bool = False  # ... which the call site unpacks into `targets`
    checkpoint: bool = False  # srcad.checkpoint: save the inputs, recompute in the backward
    discard: bool = False  # a call made for its effect (a statement): its result is dropped
    # [(obj, attr)]: attributes the callee leaves on known objects, returned after its value
    # (frontend/state.py); `carried_atoms`: [(obj, attr, atom)] where the caller bound them
    carried: list = field(default_factory=list)
    carried_atoms: list = field(default_factory=list)
    # [(obj, attr, atom)]: lists and dicts of known objects given to the callee as the
    # caller's values (`atom`), changed there in place: the caller reads them again after it
    changed_given: list = field(default_factory=list)


@dataclass
class Push:
    """``stack.push(value)``: generated code being transformed again records a value."""

    stack: str
    value: Any
    line: int


@dataclass
class Effect:
    """A statement run for its effect alone, binding nothing: ``print(...)`` or another bare
    call on values no gradient needs (kind "call": ``op(**args)``, its result dropped),
    ``assert test, msg`` (kind "assert": args ``test``, ``msg``) or ``raise exc`` (kind
    "raise": arg ``exc``, or -- ``raise E(...)`` -- the op that makes the exception). It runs in the forward sweep where the user put it and has no
    adjoint; recomputation (checkpointing) does not run it again. See frontend/effects.py."""

    kind: str
    op: Any  # kind "call": the op called; else None
    args: dict  # param name -> Atom (absent: not given, e.g. an assert without a message)
    line: int


@dataclass
class If:
    test: Any  # Atom (a bool)
    body: list
    orelse: list
    line: int


@dataclass
class For:
    """``for target in range(start, stop, step): body``, leaving after an iteration in which
    any exit flag is true (what `break` became, see frontend/desugar.py)."""

    target: str
    start: Any
    stop: Any
    step: Any
    body: list
    line: int
    exits: list = field(default_factory=list)
    reverse: bool = False  # for target in reversed(range(start, stop, step)[:limit])
    limit: Any = None
    # srcad.checkpoint(range(...), every=k | snapshots=c): (every, snapshots), atoms or None
    checkpoint: Any = None

    def range_value(self, env_value):
        """The range this loop walks, given a function that evaluates atoms."""
        rng = range(*(env_value(a) for a in (self.start, self.stop, self.step)))
        if self.limit is not None:
            rng = rng[: env_value(self.limit)]
        return reversed(rng) if self.reverse else rng


@dataclass
class While:
    """``while True: <cond_body>; if not cond: break; <body>`` (plus exit flags)."""

    cond_body: list
    cond: Any
    body: list
    line: int
    exits: list = field(default_factory=list)


Stmt = Union[Call, UserCall, Effect, Push, Return, If, For, While]


def program_functions(fn: "Function"):
    """`fn` and every user function it calls (transitively), each once."""
    seen, todo = set(), [fn]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        yield f
        todo.extend(s.callee for s in walk(f.body) if isinstance(s, UserCall))


def walk_program(fn: "Function"):
    """Every statement of `fn` and of the user functions it calls (transitively), each
    function once: what one generated module holds."""
    for f in program_functions(fn):
        yield from walk(f.body)


def walk(body):
    """Every statement in `body`, nested ones included, in program order."""
    for s in body:
        yield s
        if isinstance(s, If):
            yield from walk(s.body)
            yield from walk(s.orelse)
        elif isinstance(s, For):
            yield from walk(s.body)
        elif isinstance(s, While):
            yield from walk(s.cond_body)
            yield from walk(s.body)


def defs(stmt) -> list[str]:
    """Names a statement itself assigns (a loop: its target)."""
    if isinstance(stmt, Call):
        return [stmt.target]
    if isinstance(stmt, For):
        return [stmt.target]
    if isinstance(stmt, UserCall):
        return list(stmt.targets)
    return []


def uses(stmt) -> list[str]:
    """Names a statement itself reads (not those of nested statements)."""
    if isinstance(stmt, Call):
        return [n for a in stmt.args.values() for n in atom_vars(a)]
    if isinstance(stmt, Return):
        return list(atom_vars(stmt.value))
    if isinstance(stmt, UserCall):
        return [n for a in stmt.args for n in atom_vars(a)]
    if isinstance(stmt, Push):
        return [stmt.stack, *atom_vars(stmt.value)]
    if isinstance(stmt, Effect):
        return [n for a in stmt.args.values() for n in atom_vars(a)]
    if isinstance(stmt, If):
        return list(atom_vars(stmt.test))
    if isinstance(stmt, For):
        bounds = (stmt.start, stmt.stop, stmt.step) + ((stmt.limit,) if stmt.limit else ())
        bounds += tuple(a for a in stmt.checkpoint or () if a is not None)
        return [n for a in bounds for n in atom_vars(a)] + list(stmt.exits)
    if isinstance(stmt, While):
        return list(atom_vars(stmt.cond)) + list(stmt.exits)
    return []


@dataclass
class Function:
    name: str
    params: list[str]
    body: list  # list[Stmt]
    filename: str
    first_line: int
    last_line: int
    inject: dict = field(default_factory=dict)  # name -> object the generated code refers to
    names: set = field(default_factory=set)  # every name in use (for fresh names later)
    source_lines: dict = field(default_factory=dict)  # user line -> text
    mutable: set = field(default_factory=set)  # names assigned in loops/branches (not SSA)
    changes: dict = field(default_factory=dict)  # parameter -> line of an in-place change
    guards: Any = None  # the lookups normalising it made (srcad.frontend.guards.Guards)
    # dict parameter -> the atom holding its value at the return, for a parameter the body
    # writes into (`p[k] = v`: an `Effect` "setitem"); a caller that passes its own dict is
    # given these values back (frontend/inline.py)
    written: dict = field(default_factory=dict)
    # array parameter -> the atom holding its value at the return, for a parameter the body
    # writes into in place (`p -= t`, `p[i] = v`, `v = p[1:]; v *= 2`): Python's caller sees
    # that array written (frontend/inline.py writes it into the caller's name or item)
    written_arrays: dict = field(default_factory=dict)
    # (id(obj), attr) the function (or a callee) sets in a branch or a loop: its caller reads
    # them when the code runs (frontend/state.py)
    attr_unknown: set = field(default_factory=set)
    # [(obj, attr, atom)]: what the function leaves in the attributes of objects known when
    # normalising that it carries by a local (frontend/state.py reads it for its caller)
    state_out: list = field(default_factory=list)
    # [(container, "store" | "read", line, name)]: its uses of a list or dict a module global
    # or a closure cell holds (frontend/kept_globals.py; analysis/refusals.py reads them)
    kept_uses: list = field(default_factory=list)
    # [(dict, key, line, spelled)]: items of a module's dict of functions read as the callee
    # itself when normalising (`ACTS["relu"](z)`); a store into that dict in the same call
    # would make the code call the old one (analysis/refusals.py check_folded_items)
    folded: list = field(default_factory=list)
    # the callees' own IR normalised for this one (called, spliced in, or dropped as having
    # no effect srcad saw): what each does with its parameters is checked as it was written
    # (analysis/refusals.py check_opaque)
    inlined: list = field(default_factory=list)

    @property
    def ret(self) -> Return:
        return self.body[-1]


def atom_vars(atom) -> Iterator[str]:
    """Names of the local variables an atom reads."""
    if isinstance(atom, Var):
        yield atom.name
    elif isinstance(atom, Seq):
        for a in atom.items:
            yield from atom_vars(a)
    elif isinstance(atom, Index):
        for p in atom.parts:
            yield from atom_vars(p)
    elif isinstance(atom, Slice):
        for a in (atom.lower, atom.upper, atom.step):
            if a is not None:
                yield from atom_vars(a)


