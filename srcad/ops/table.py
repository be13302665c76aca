"""The op table: one record per differentiable (or deliberately non-differentiable) op.

Every fact about an op lives in its row: the numpy forward, how the forward is
spelled in generated code, one VJP rule per positional argument, the JVP rules,
whether it is elementwise (and its C expression), a one-line derivation and the
metadata the tests read (input domain, dtypes, tolerance, arity).

Rules are ordinary Python lambdas in autograd's shape, ``lambda g, out, x, y: ...``,
registered through :func:`defvjp` / :func:`defjvp` -- the same two functions users
call for their own ops. The lambda stays callable (tape mode calls it) and its body
is parsed once into an ``ast`` expression that the transforms inline, so both modes
run the same numpy calls. What a rule needs saved is *derived* from the free names of
its expression (`Rule.reads`), never hand-listed.
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import sys
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..errors import SrcadError
from ..runtime import ieee_divide

_MISSING = object()


@dataclass(frozen=True)
class Param:
    """One parameter of an op. ``star=True`` marks a variadic one (``np.einsum(subscripts,
    *operands)``): the call's remaining positional arguments, bound as one tuple, which the
    rules receive as a tuple and a VJP rule answers with one piece per item (as for a
    list argument of ``np.concatenate``)."""

    name: str
    default: Any = _MISSING
    star: bool = False

    @property
    def required(self) -> bool:
        return self.default is _MISSING and not self.star


class Case(NamedTuple):
    """One gradient-test case of a row, read by tests/test_ops.py.

    ``src`` is a Python expression over the arguments ``a, b, c, ...``, one per entry of
    ``shapes`` (a tuple of shapes). The test writes ``def f(a, b): return np.sum((src) * P)``
    into a module (``P``: a fixed random array shaped like ``src``'s value), and checks
    ``srcad.grad(f, wrt=every argument)`` against central differences in float32 and float64.
    Index constants are spelled inline (``a[[0, 0, 2]]``). ``domain`` is one ``(low, high)``
    for every argument or one per argument; None takes the row's. ``slow`` marks cases that
    only run with ``-m slow``. The name ``OP`` in ``src`` is the row's own callable, for rows
    users never spell (a row with one required argument and no cases is tested as
    ``OP(a)``).

    A row lists cases in its ``test_cases`` as Case objects or plain ``(src, shapes)`` tuples:
    ``test_cases=(("np.sum(a, axis=1)", [(2, 3, 4)]), ...)``. ``tol`` overrides the row's
    tolerance per dtype for this case (``{"float64": 2e-3}`` where the case itself rounds
    to float32). Elementwise rows need none (the
    test builds every broadcast shape tuple from the row's spelling); their cases add
    spellings the grid does not reach (Python scalars, ``None`` bounds, method forms).
    """

    src: str
    shapes: tuple
    domain: Any = None
    slow: bool = False
    tol: dict | None = None


def _as_cases(items) -> tuple[Case, ...]:
    out = []
    for c in items:
        if not isinstance(c, Case):
            c = Case(*c)
        out.append(c._replace(shapes=tuple(tuple(s) for s in c.shapes)))
    return tuple(out)


@dataclass
class Rule:
    """A derivative rule: a lambda plus its parsed body."""

    fn: Callable
    params: tuple[str, ...]  # all lambda parameter names, e.g. ("g", "out", "x", "y")
    expr: ast.expr  # the lambda body
    source: str  # the body as text, for docs

    @property
    def reads(self) -> frozenset[str]:
        """Parameter names the rule's expression reads: what the backward must keep."""
        used = {n.id for n in ast.walk(self.expr) if isinstance(n, ast.Name)}
        return frozenset(p for p in self.params if p in used)

    @property
    def globals(self) -> dict:
        return self.fn.__globals__

    @functools.cached_property
    def tape_fn(self) -> Callable:
        """The rule as tape mode calls it: `fn` itself, or, where the rule divides, `fn`
        with each ``a / b`` spelled ``ieee_divide(a, b)`` (numpy's inf / nan where both are
        Python numbers and b is 0) -- what generated code runs where both may be Python
        numbers, and exactly ``a / b`` everywhere else, so the two modes agree."""
        if not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
                   for n in ast.walk(self.expr)):
            return self.fn

        class _Divisions(ast.NodeTransformer):
            def visit_BinOp(self, node):
                self.generic_visit(node)
                if not isinstance(node.op, ast.Div):
                    return node
                return ast.Call(func=ast.Name(id="__srcad_ieee_divide", ctx=ast.Load()),
                                args=[node.left, node.right], keywords=[])

        body = ast.fix_missing_locations(_Divisions().visit(copy.deepcopy(self.expr)))
        code = self.fn.__code__
        free = code.co_freevars
        src = (f"lambda __srcad_ieee_divide{''.join(', ' + v for v in free)}: "
               f"lambda {', '.join(self.params)}: {ast.unparse(body)}")
        outer = eval(src, self.fn.__globals__)  # noqa: S307  (the rule's own expression)
        cells = [c.cell_contents for c in (self.fn.__closure__ or ())]
        fn = outer(ieee_divide, *cells)
        fn.__defaults__ = self.fn.__defaults__
        return fn


@dataclass
class Op:
    """One row of the op table."""

    name: str
    fn: Callable
    params: tuple[Param, ...]
    spelling: ast.expr  # forward as an expression over the param names
    vjps: tuple[Rule | None, ...] = ()
    jvps: tuple[Rule | None, ...] = ()
    differentiable: bool = True
    elementwise: bool = False
    broadcasting: bool = False  # elementwise n-ary: each VJP is unbroadcast to its input
    view: bool = False  # forward may return a view of an input
    c_expr: str | None = None
    c_version: int = 1
    # for the fuser (srcad/lower): the numpy kinds of loop dtype the C is written for ("f":
    # float32/float64; "i" signed ints, "b" bool), parameters read as a truth value
    # ({"condition": "bool"}), and constants numpy special-cases ({"y": {2: "x * x"}}: C for
    # `x ** 2`, which numpy computes as a square, not with its power loop)
    c_kinds: str = "f"
    c_types: dict = field(default_factory=dict)
    c_consts: dict = field(default_factory=dict)
    # for the fuser's row kernels: "sum" / "mean" (a reduction over the last axis with
    # keepdims=True that C computes as numpy does, its pairwise sum bit for bit) or
    # "broadcast" (a per-row value broadcast back along the last axis)
    c_row: str | None = None
    derivation: str = ""
    family: str = ""
    aliases: tuple = ()  # other callables that are this op (np.amax for np.max)
    keywords: dict = field(default_factory=dict)  # other names of a parameter (clip's min=)
    spell_defaults: bool = False  # numpy wants every parameter: a call gets the defaults too
    # parameters in which the op is linear (or, jointly, multilinear: matmul): the tangent
    # contribution of such a parameter is the op itself applied to that parameter's tangent
    linear: tuple = ()
    # parameters the output depends on smoothly (a derivative that is not zero) but that the
    # row has no rule for (np.arange's start and step): a value that depends on the arguments
    # being differentiated, given there, is refused at the user's line
    # (srcad/analysis/refusals.py), never run as written with its gradient dropped
    no_rule_for: tuple = ()
    # parameters that take a sequence of separate arrays (np.concatenate's `arrays`): numpy
    # does not turn a list given there into one array, as it does for every other parameter
    sequences: tuple = ()
    # rewrites a call into the row's one form before it is bound: ``canonical(args, static)``
    # gets the positional arguments and ``static(arg)`` (its value where known before running,
    # else LookupError), and answers None (as it is) or the new positional arguments, each
    # ("arg", i) for the call's i-th or ("const", value) -- np.einsum's interleaved form
    # becomes its subscripts form, so that both share one rule
    canonical: Callable | None = None
    # where the operands' shapes are known, a faster spelling of the same values:
    # ``forward_form(*infos)`` gets one Info (shape, dtype, c_order; None where unknown) per
    # parameter and answers an expression over the parameter names, or None for `spelling`.
    # Generated code (reverse, forward, recomputation) and tape mode both run it, so the two
    # modes compute the same numpy calls (matmul: N-D @ 2-D as one 2-D GEMM)
    forward_form: Callable | None = None
    # arguments on which the op has no derivative, found only from their values (as_strided
    # reading past its input): ``check(**arguments)`` raises a SrcadError. The probe and the
    # tape call it before the forward, so the refusal names the user's line
    check: Callable | None = None
    # test metadata (read by tests/test_ops.py)
    domain: tuple = (-2.0, 2.0)  # (low, high) for every argument, or one pair per argument
    dtypes: tuple[str, ...] = ("float32", "float64")
    tol: dict = field(default_factory=lambda: {"float32": 2e-3, "float64": 1e-6})
    test_cases: tuple = ()  # Case(src, shapes, domain, slow) tuples; see `Case`
    spelling_src: str = ""

    def __post_init__(self):
        self.test_cases = _as_cases(self.test_cases)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def takes_array(self, pname: str) -> bool:
        """Does numpy turn a list or tuple given for `pname`, a differentiable parameter,
        into one array (np.asarray)? True for the differentiable parameters of a numpy
        function or ufunc but its `sequences` and a variadic one; srcad's own helpers and
        Python's builtins take containers as they are, and a shape or an axis is no array."""
        fn = self.fn
        numpy = isinstance(fn, np.ufunc) or (getattr(fn, "__module__", None) or "").startswith(
            ("numpy", "scipy."))  # (scipy.special.logsumexp takes arrays as numpy does)
        if not numpy or pname in self.sequences or (
                self.vjp(pname) is None and self.jvp(pname) is None):
            return False
        return not any(p.name == pname and p.star for p in self.params)

    @property
    def star(self) -> Param | None:
        """The variadic parameter, if the op has one (it is then the last positional one)."""
        return next((p for p in self.params if p.star), None)

    def bind(self, args, kwargs) -> dict:
        """Positional and keyword arguments as {param: value}; a star parameter takes the
        positional arguments left after the fixed ones, as a tuple. Raises TypeError with a
        message for the caller to put in context."""
        params = self.params
        star = self.star
        fixed = [p for p in params if not p.star]
        n_fixed = params.index(star) if star is not None else len(params)
        if star is None and len(args) > len(params):
            raise TypeError(f"`{self.name}` takes at most {len(params)} positional arguments "
                            f"in srcad ({', '.join(self.param_names)}), got {len(args)}")
        bound = dict(zip((p.name for p in fixed[:n_fixed]), args[:n_fixed]))
        if star is not None:
            bound[star.name] = tuple(args[n_fixed:])
        for k, v in kwargs.items():
            k = self.keywords.get(k, k)
            if k not in self.param_names or (star is not None and k == star.name):
                raise TypeError(f"`{self.name}` does not take the keyword `{k}` in "
                                f"differentiated code (parameters: "
                                f"{', '.join(self.param_names)})")
            if k in bound:
                raise TypeError(f"`{self.name}` got `{k}` twice")
            bound[k] = v
        return bound

    def canonical_args(self, args: list, static, const) -> list:
        """The positional arguments in the row's one form (see `canonical`); ``const(value)``
        makes an argument of a constant."""
        if self.canonical is None:
            return list(args)
        form = self.canonical(list(args), static)
        if form is None:
            return list(args)
        return [args[v] if kind == "arg" else const(v) for kind, v in form]

    def call_parts(self, values: dict) -> tuple[list, dict]:
        """How to call the op's numpy forward with {param: value}: required parameters by
        position (a star parameter's items spread after them), the rest by keyword."""
        positional, keywords = [], {}
        for p in self.params:
            if p.name not in values and self.spell_defaults and not p.star:
                values = {**values, p.name: p.default}
            if p.name not in values:
                continue
            if p.star:
                positional.extend(values[p.name])
            elif p.required:
                positional.append(values[p.name])
            else:
                keywords[p.name] = values[p.name]
        return positional, keywords

    def forward_template(self, infos: dict) -> str | None:
        """`forward_form`'s expression for these {param: Info} (None: the plain spelling)."""
        if self.forward_form is None or self.star is not None:
            return None
        return self.forward_form(*(infos.get(p.name) for p in self.params))

    def vjp(self, pname: str) -> Rule | None:
        """The VJP rule for the named forward parameter, or None if not differentiable."""
        i = self.param_names.index(pname)
        if i < len(self.vjps):
            return self.vjps[i]
        return None

    def jvp(self, pname: str):
        """How forward mode gets this parameter's tangent contribution:
        ("rule", Rule) -- an explicit defjvp rule, or an elementwise op's VJP rule (its
        Jacobian is diagonal, so the same expression with ``g`` the tangent is the JVP);
        ("linear", None) -- the op applied to the tangent; or None (no forward rule)."""
        i = self.param_names.index(pname)
        if i < len(self.jvps) and self.jvps[i] is not None:
            return ("rule", self.jvps[i])
        if pname in self.linear:
            return ("linear", None)
        if self.elementwise and self.vjp(pname) is not None:
            return ("rule", self.vjp(pname))
        return None

    @property
    def saved(self) -> frozenset[str]:
        """Forward values the VJP rules read (derived from the rules, not listed)."""
        reads: set[str] = set()
        for r in self.vjps:
            if r is not None:
                reads |= r.reads
        return frozenset(reads - {"g"})


# ---------------------------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------------------------

_BY_FN: dict[int, Op] = {}  # id(callable) -> the op it is (a user registration wins)
_TABLE: dict[str, Op] = {}  # srcad's own rows, by name, in registration order
_USER: dict[int, Op] = {}  # rows users registered after import, by id of the callable
_KEEPALIVE: list = []  # keeps registered callables alive, so that their ids stay theirs
_UFUNC_METHODS: dict = {}  # (ufunc, method name) -> its row (np.add.reduce: the sum's)
_GENERATION = 0  # bumped by every registration change, for caches keyed on the table
# rows of an optional library (scipy.special), registered once it is loaded: its module name ->
# (the function registering them, the module of srcad's helpers their spellings call)
_OPTIONAL: dict[str, tuple[Callable[[], None], str]] = {}


def _key(fn) -> int:
    return id(fn)


def lookup(fn) -> Op | None:
    """The row registered for a callable, or None. A ufunc's method (``np.add.reduce``) is
    a new bound object at every attribute access, so it is found by (ufunc, method name)."""
    try:
        op = _BY_FN.get(_key(fn))
    except TypeError:
        return None
    if op is None and _OPTIONAL and _load_optional(fn):
        op = _BY_FN.get(_key(fn))
    if op is None and isinstance(getattr(fn, "__self__", None), np.ufunc):
        return _UFUNC_METHODS.get((fn.__self__, getattr(fn, "__name__", None)))
    return op


def ufunc_method(op: Op, ufunc: np.ufunc, method: str) -> Op:
    """Make `op` the row of ``ufunc.method`` (``np.add.reduce``: see `lookup`)."""
    global _GENERATION
    _GENERATION += 1
    _UFUNC_METHODS[(ufunc, method)] = op
    return op


def optional_rows(module: str, register: Callable[[], None], helpers: str) -> None:
    """Rows for the callables of an optional library (``scipy.special``), which srcad does not
    import: `register` (it imports the library and calls `defvjp`) runs once, the first time
    a lookup misses while `module` is imported (the user's code imported it, so its
    callables may be asked for) or for a callable of `helpers` (srcad's module whose
    functions the rows' spellings call: generated code read again), and when the whole table
    is listed (`all_ops`, `by_name`: the docs and the op tests) if the library is installed.
    Without the library, nothing is registered and nothing else changes."""
    _OPTIONAL[module] = (register, helpers)


def _load_optional(fn=None, *, listing: bool = False) -> bool:
    """Register the optional rows that are due (see `optional_rows`) for a lookup of `fn`
    that missed; True if any were."""
    try:
        fn_module = getattr(fn, "__module__", None)
    except Exception:  # noqa: BLE001  (an object whose attributes raise: no helper of ours)
        fn_module = None
    loaded = False
    for module, (register, helpers) in list(_OPTIONAL.items()):
        if module in sys.modules or fn_module == helpers or listing:
            if _OPTIONAL.pop(module, None) is None:
                continue  # (registered meanwhile: another module's rows looked it up)
            try:
                register()
            except ImportError:  # (not installed: its rows do not exist)
                continue
            loaded = True
    return loaded


def by_name(name: str) -> Op:
    """A row of srcad's table by name (a user's row if no table row has that name)."""
    if name not in _TABLE and _OPTIONAL:
        _load_optional(listing=True)
    if name in _TABLE:
        return _TABLE[name]
    for op in reversed(list(_USER.values())):
        if op.name == name:
            return op
    raise KeyError(name)


def all_ops(*, user: bool = False, optional: bool = True) -> list[Op]:
    """srcad's own rows in registration order; with ``user=True``, then users' rows.

    Users' registrations never change this list's table part, so the docs and the op
    tests generated from it do not depend on what else was imported; an optional library's
    rows (`optional_rows`) are in it whenever the library is installed (``optional=False``:
    only if the program imported it -- a caller that needs no completeness, and should not
    import the library, such as the fuser's index of C expressions).
    """
    if _OPTIONAL:
        _load_optional(listing=optional)
    return list(_TABLE.values()) + (list(_USER.values()) if user else [])


def generation() -> int:
    """A number that changes whenever a row is registered or unregistered.

    Anything that caches ops bound to a function (normalised IR, generated code) can key
    on it, so that a rule registered later is picked up.
    """
    return _GENERATION


def _from_the_table() -> bool:
    """Is the registration being made by srcad's own op modules (``srcad.ops.*``)?

    The caller outside this module decides: srcad's families register table rows, whatever
    the import order; everything else registers a user's row.
    """
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    caller = frame.f_globals.get("__name__", "") if frame is not None else ""
    return caller.startswith(__package__ + ".")


def _register(op: Op) -> Op:
    global _GENERATION
    _GENERATION += 1
    table_row = _from_the_table()
    for fn in (op.fn, *op.aliases):
        _KEEPALIVE.append(fn)
        if not (table_row and _key(fn) in _USER):  # (a user's row made before an optional
            _BY_FN[_key(fn)] = op                  # library's rows loaded keeps winning)
    if table_row:
        if op.name in _TABLE and _TABLE[op.name].fn is not op.fn:
            raise ValueError(f"two table rows are named {op.name!r}")
        _TABLE[op.name] = op
    else:
        _USER[_key(op.fn)] = op
    return op


# ---------------------------------------------------------------------------------------------
# parsing a rule from its lambda's source
# ---------------------------------------------------------------------------------------------


def _lambda_node(fn: Callable) -> ast.Lambda:
    """Find the ast.Lambda whose code object is `fn` in its source file."""
    code = fn.__code__
    try:
        lines, _start = inspect.findsource(fn)
    except (OSError, TypeError) as e:
        raise SrcadError(
            f"cannot read the source of rule {fn!r}",
            hint="define derivative rules as lambdas or functions in a .py file",
        ) from e
    want_args = code.co_varnames[: code.co_argcount]
    positions = {(ln, col) for (ln, _, col, _) in code.co_positions() if ln is not None}
    candidates = [node for node, args in _lambdas_of("".join(lines))
                  if args == want_args and node.lineno <= code.co_firstlineno <= node.end_lineno]
    if len(candidates) > 1:
        body_hits = [
            c
            for c in candidates
            if any(
                (n.lineno, n.col_offset) in positions
                for n in ast.walk(c.body)
                if hasattr(n, "lineno")
            )
        ]
        candidates = body_hits or candidates
    if not candidates:
        raise SrcadError(f"cannot find the source of rule {fn!r}")
    node = candidates[0]
    if id(node) in _HANDED_OUT:  # (each rule owns its tree: stages may annotate it)
        return copy.deepcopy(node)
    _HANDED_OUT.add(id(node))
    return node


_HANDED_OUT: set = set()  # ids of parsed lambdas a rule already owns (the trees stay cached)


@functools.lru_cache(maxsize=64)
def _lambdas_of(source: str) -> tuple:
    """Every lambda of a module's source with its parameter names, parsed once per module
    (the op table's ~370 rules live in a few files: parsing each file once per rule took
    most of `import srcad`'s 2.7 s)."""
    return tuple((node, tuple(a.arg for a in node.args.args))
                 for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Lambda))


def _function_node(fn: Callable) -> tuple[ast.expr, tuple[str, ...]]:
    """A `def` rule must be a single `return <expr>`."""
    src = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(src)
    fdef = tree.body[0]
    assert isinstance(fdef, ast.FunctionDef)
    body = [s for s in fdef.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        raise SrcadError(
            f"derivative rule {fn.__qualname__} must be a lambda or a def with a single return",
            hint="write the rule as one expression so that srcad can inline it",
        )
    return body[0].value, tuple(a.arg for a in fdef.args.args)


def parse_rule(fn: Callable) -> Rule:
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise SrcadError(f"a derivative rule must be a Python lambda or function, got {fn!r}")
    if fn.__name__ == "<lambda>":
        node = _lambda_node(fn)
        expr, params = node.body, tuple(a.arg for a in node.args.args)
        defaults = node.args.defaults
    else:
        expr, params = _function_node(fn)
        defaults = []
    del defaults  # defaults are read from the function object itself
    expr = ast.fix_missing_locations(expr)
    return Rule(fn=fn, params=params, expr=expr, source=ast.unparse(expr))


def _params_of(rule_fn: Callable) -> tuple[Param, ...]:
    sig = inspect.signature(rule_fn)
    names = list(sig.parameters.values())
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind not in plain for p in names):
        raise SrcadError(
            f"a VJP rule takes plain parameters, got {sig}",
            hint="write rules as `lambda g, out, x, y: ...`, without *args, ** or keyword-only",
        )
    if len(names) < 3 or names[0].name != "g" or names[1].name != "out":
        raise SrcadError(
            f"a VJP rule's parameters must start with (g, out, ...), got {tuple(sig.parameters)}",
            hint="write rules as `lambda g, out, x, y: ...` (autograd's shape)",
        )
    return tuple(
        Param(p.name, _MISSING if p.default is inspect.Parameter.empty else p.default)
        for p in names[2:]
    )


def _check_signature(fn: Callable, params: tuple[Param, ...]) -> None:
    """A Python function's rules must take one parameter per positional argument of it."""
    if not isinstance(fn, types.FunctionType):
        return  # numpy callables: the row's parameters are the ones srcad supports
    sig = inspect.signature(fn)
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    pos = [p for p in sig.parameters.values() if p.kind in kinds]
    required = [p for p in pos if p.default is inspect.Parameter.empty]
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values()):
        return
    if not len(required) <= len(params) <= len(pos):
        names = ", ".join(p.name for p in pos)
        raise SrcadError(
            f"the derivative rules for {fn.__name__} take {len(params)} argument(s) after "
            f"(g, out): ({', '.join(p.name for p in params)}); but {fn.__name__}{sig} takes "
            f"{len(pos)} positional argument(s)",
            hint=f"give each rule one parameter per argument: lambda g, out, {names}: ...",
        )


def _numpy_path(fn: Callable) -> str | None:
    """How generated code reaches a numpy callable (``np.tanh``, ``np.linalg.det``)."""
    name = getattr(fn, "__name__", None)
    if name is None:
        return None
    mod = getattr(fn, "__module__", None) or "numpy"
    parts = [p for p in mod.split(".")[1:] if not p.startswith("_")]
    for path in (parts, []):  # its public submodule, then the top level
        obj = np
        for p in path:
            obj = getattr(obj, p, None)
        if obj is not None and getattr(obj, name, None) is fn:
            return ".".join(["np", *path, name])
    return None


def _default_spelling(fn: Callable, params: tuple[Param, ...]) -> str:
    args = ", ".join(p.name for p in params)
    mod = getattr(fn, "__module__", None) or ""
    if isinstance(fn, np.ufunc) or mod.startswith("numpy"):
        path = _numpy_path(fn)
        if path is None:
            raise SrcadError(
                f"cannot tell how generated code should spell {fn!r}",
                hint="pass spelling='np.<module>.<name>(x, ...)' to srcad.defvjp",
            )
        return f"{path}({args})"
    return f"{getattr(fn, '__name__', 'f')}({args})"


_META = {"name", "spelling", "params", "c", "c_expr", "c_version", "c_kinds", "c_types",
         "c_consts", "c_row", "elementwise",
         "broadcasting", "view", "derivation", "family", "aliases", "keywords",
         "spell_defaults", "domain", "dtypes", "tol",
         "test_cases", "linear", "sequences", "canonical", "forward_form", "no_rule_for",
         "check"}


def defvjp(fn: Callable, *rules: Callable | None, **meta: Any) -> Op:
    """Register VJP rules for `fn`, one per positional argument (None: no gradient).

    Each rule has autograd's shape, ``lambda g, out, x, y: ...``, where ``g`` is the
    cotangent of the output ``out`` and the rest are `fn`'s arguments (keyword
    parameters with defaults are allowed after the positional ones); a ``def`` whose body
    is a single ``return <expr>`` works too. srcad inlines the rule's expression, so what
    the backward keeps is read off the names it uses. An argument whose rule is None gets
    no gradient through `fn` (its gradient is zero, as for a constant).

    Broadcasting: ``broadcasting=True`` says `fn` broadcasts its arguments elementwise;
    srcad then sums each rule's result back to its argument's shape, so the rule is
    written as if nothing broadcast. It is the default for numpy ufuncs of two or more
    inputs (not generalized ufuncs such as matmul); otherwise a rule returns a gradient
    shaped like its argument.

    >>> import numpy as np, srcad
    >>> def softplus(x):
    ...     return np.log1p(np.exp(x))
    >>> _ = srcad.defvjp(softplus, lambda g, out, x: g / (1 + np.exp(-x)))

    Registering a user function makes srcad treat it as one op: its body is not traced.
    ``meta`` carries the table's own metadata (name, elementwise, c, derivation, ...).
    A rule with the wrong parameters is a `SrcadError`, and nothing is registered.
    """
    fname = getattr(fn, "__name__", repr(fn))
    if not callable(fn):
        raise SrcadError(f"srcad.defvjp needs a function to register rules for, got {fn!r}")
    unknown = set(meta) - _META
    if unknown:
        raise SrcadError(f"srcad.defvjp({fname}, ...) got unknown option(s) "
                         f"{', '.join(sorted(unknown))}",
                         hint=f"the options are {', '.join(sorted(_META))}")
    if "c" in meta:
        meta["c_expr"] = meta.pop("c")
    if isinstance(fn, np.ufunc) and fn.nin >= 2 and fn.signature is None:
        meta.setdefault("broadcasting", True)  # an elementwise ufunc (not matmul's gufunc)
    parsed = tuple(None if r is None else parse_rule(r) for r in rules)
    first = next((r for r in rules if r is not None), None)
    if "params" in meta:
        params = tuple(meta.pop("params"))
    elif first is not None:
        params = _params_of(first)
    else:
        sig = inspect.signature(fn)
        params = tuple(
            Param(p.name, _MISSING if p.default is inspect.Parameter.empty else p.default)
            for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        )
    _check_signature(fn, params)
    if len(parsed) > len(params):
        raise SrcadError(
            f"{len(parsed)} rules given for {fname}, which takes {len(params)} argument(s) "
            f"({', '.join(p.name for p in params)})",
            hint="give one rule per positional argument, None for one with no gradient",
        )
    for r in parsed:
        if r is not None and tuple(r.params[2:]) != tuple(p.name for p in params):
            raise SrcadError(
                f"rule `{r.source}` for {fname} has parameters ({', '.join(r.params)}); every "
                f"rule of one op must take (g, out, {', '.join(p.name for p in params)})",
                hint="write every rule with the same parameter list",
            )
    spelling_src = meta.pop("spelling", None) or _default_spelling(fn, params)
    name = meta.pop("name", None) or fname
    old = lookup(fn)
    jvps = old.jvps if old is not None and old.param_names == tuple(p.name for p in params) \
        else ()
    op = Op(
        name=name,
        fn=fn,
        params=params,
        spelling=ast.parse(spelling_src, mode="eval").body,
        spelling_src=spelling_src,
        vjps=parsed,
        jvps=jvps,
        differentiable=any(r is not None for r in parsed),
        **meta,
    )
    return _register(op)


def unregister(fn: Callable) -> None:
    """Forget a user's registration for `fn` (srcad's own row for it, if any, comes back).

    Functions transformed while the registration held keep the rule they were built with.
    """
    global _GENERATION
    op = _USER.pop(_key(fn), None)
    if op is None:
        return
    _GENERATION += 1
    for f in (op.fn, *op.aliases):
        _BY_FN.pop(_key(f), None)
    for row in _TABLE.values():
        for f in (row.fn, *row.aliases):
            if _key(f) == _key(fn) or any(_key(f) == _key(a) for a in op.aliases):
                _BY_FN[_key(f)] = row


def defjvp(fn: Callable, *rules: Callable | None) -> Op:
    """Register JVP rules for `fn`: ``lambda g, out, x, y: ...`` per positional argument,
    where ``g`` is that argument's tangent (JAX's shape, and the same parameters as a VJP
    rule). The tangent of the output is the sum over arguments of each rule's value.
    Elementwise ops and ops marked `linear` need none: see `Op.jvp`.
    """
    op = lookup(fn)
    if op is None:
        raise SrcadError(
            f"defjvp({getattr(fn, '__name__', fn)}) needs the op registered first",
            hint="call srcad.defvjp for the same function before srcad.defjvp",
        )
    op.jvps = tuple(None if r is None else parse_rule(r) for r in rules)
    return op


def defnondiff(fn: Callable, *, spelling: str | None = None, name: str | None = None, **meta) -> Op:
    """Register an op with no gradient: shape queries, constructors, comparisons."""
    if "c" in meta:
        meta["c_expr"] = meta.pop("c")
    params = meta.pop("params", None)
    if params is None:
        try:
            sig = inspect.signature(fn)
            params = tuple(
                Param(p.name, _MISSING if p.default is inspect.Parameter.empty else p.default)
                for p in sig.parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            )
        except (TypeError, ValueError):
            params = (Param("x"),)
    spelling_src = spelling or _default_spelling(fn, params)
    op = Op(
        name=name or getattr(fn, "__name__", repr(fn)),
        fn=fn,
        params=tuple(params),
        spelling=ast.parse(spelling_src, mode="eval").body,
        spelling_src=spelling_src,
        vjps=(),
        differentiable=False,
        **meta,
    )
    return _register(op)
