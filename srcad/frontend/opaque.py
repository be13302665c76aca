"""Calls, methods and attributes with no derivative rule: run as written where no gradient flows.

Input: call sites the normaliser finds no op-table row for -- ``math.sqrt(d)``,
``np.random.default_rng(0)``, ``rng.standard_normal(x.shape)``, ``x.itemsize``, a function of an
installed library (scipy's, say), ``print(...)`` -- and, once the arguments being
differentiated are known (on the first call), the normalised function. Output: one op per
call site (`OpaqueOp`: no derivative, spelled as the user wrote it), and `check_opaque`, which
refuses such a call where it would silently drop a gradient.

A value no gradient flows through needs no rule, so these ops are right on such values and
generated code reads like the user's line (``d_sqrt = math.sqrt(d)``). They are wrong on a
value the gradient needs, and `check_opaque` says so at the user's line instead (a
`NoRuleError`, never zeros) when, for some call with an argument that depends on the
differentiated inputs (varied, `srcad.transform.forward.varied_vars`),
  * its result reaches the output through differentiable ops (useful), or
  * it may store that value somewhere (a method of an object, a call srcad does not know to
    leave its arguments alone) that is read on the way to the output.
So ``print(loss)``, ``if math.isnan(s): raise ...`` and ``losses.append(float(loss))`` run,
and ``y = x * math.sqrt(np.sum(x))`` is refused. Calls into user functions are checked
with the arguments that reach them.

User function or library function: a Python function is traced as a subroutine when it is
the user's (defined outside the standard library and site-packages, or in srcad.zoo);
srcad does not trace into installed libraries, whose functions are opaque calls here.

Before/after:
    d = x.shape[-1]                        d_shape = x.shape
    s = np.sum(x) / math.sqrt(d)           d = d_shape[-1]
                                           s_sum = np.sum(x)
                                           s_sqrt = math.sqrt(d)      (an OpaqueOp)
                                           s = s_sum / s_sqrt
"""

from __future__ import annotations

import ast
import builtins
import math
import os
import site
import sys
import sysconfig
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import ir
from ..errors import NoRuleError
from ..ops import table


@dataclass(eq=False)
class OpaqueOp(table.Op):
    """An op made for one call site with no row: no derivative; spelled as the user wrote it."""

    kind: str = "call"  # "call" (its first parameter `fn` is the callee) | "method" | "attribute"
    label: str = ""  # how messages name it: `math.sqrt`, `.standard_normal()`, `.itemsize`
    pure: bool = False  # known to change no state and leave its arguments alone
    library: str | None = None  # a library function's file, for the message
    srcad_own: bool = False  # one of srcad's own functions (a row is missing: a bug)


def _spell(head: str, positional: list, starred: tuple, keywords: tuple) -> str:
    parts = [("*" if i in starred else "") + p for i, p in enumerate(positional)]
    return f"{head}({', '.join(parts + [f'{k}={k}' for k in keywords])})"


def _check_names(keywords, reserved) -> None:
    clash = set(keywords) & reserved
    if clash:
        raise ValueError(f"keyword {sorted(clash)[0]!r}")


def _runner(method: str | None, starred: tuple):
    def run(head, *args, **kwargs):
        flat = []
        for i, a in enumerate(args):
            if i in starred:
                flat.extend(a)
            else:
                flat.append(a)
        fn = getattr(head, method) if method is not None else head
        return fn(*flat, **kwargs)

    return run


def opaque_call(label: str, nargs: int, keywords: tuple, starred: tuple = (), *,
                callee: Any = None) -> OpaqueOp:
    """`fn(a0, *a1, k=k)` with no rule: its parameters are the callee `_fn`, then the
    arguments."""
    positional = [f"_a{i}" for i in range(nargs)]
    _check_names(keywords, {"_fn", *positional})
    src = _spell("_fn", positional, starred, keywords)
    params = (table.Param("_fn"), *(table.Param(p) for p in positional),
              *(table.Param(k, None) for k in keywords))
    lib = library_file(callee) if callee is not None else None
    own = (getattr(callee, "__module__", "") or "").startswith("srcad.")
    return OpaqueOp(name="." + label.split(".")[-1], fn=_runner(None, starred),
                    params=params, spelling=ast.parse(src, mode="eval").body, spelling_src=src,
                    differentiable=False, family="opaque call", kind="call", label=label,
                    pure=callee is not None and known_pure(callee, keywords), library=lib,
                    srcad_own=own)


def opaque_method(method: str, nargs: int, keywords: tuple, starred: tuple = ()) -> OpaqueOp:
    """`obj.method(a0, ...)` with no rule (not in the normaliser's method table)."""
    positional = [f"_a{i}" for i in range(nargs)]
    _check_names(keywords, {"_obj", *positional})
    src = _spell(f"_obj.{method}", positional, starred, keywords)
    params = (table.Param("_obj"), *(table.Param(p) for p in positional),
              *(table.Param(k, None) for k in keywords))
    return OpaqueOp(name=f".{method}", fn=_runner(method, starred), params=params,
                    spelling=ast.parse(src, mode="eval").body, spelling_src=src,
                    differentiable=False, family="opaque method", kind="method",
                    label=f".{method}()")


def opaque_attribute(attr: str) -> OpaqueOp:
    """`obj.attr` with no rule (not `.T`, `.shape`, ...)."""

    def fn(obj):
        return getattr(obj, attr)

    src = f"_obj.{attr}"
    return OpaqueOp(name=f".{attr}", fn=fn, params=(table.Param("_obj"),),
                    spelling=ast.parse(src, mode="eval").body, spelling_src=src,
                    differentiable=False, family="opaque attribute", kind="attribute",
                    label=f".{attr}", pure=True)


def is_opaque(op) -> bool:
    return isinstance(op, OpaqueOp)


def may_change_state(op) -> bool:
    """Would running this op again (a recomputation) be visible: a random draw, a write?"""
    return isinstance(op, OpaqueOp) and not op.pure


def has_effects(body, _seen=None) -> bool:
    """Does running `body` (or a user function it calls) do something besides computing its
    values -- print, assert, raise, a random draw? Then a call to it is never dead code."""
    seen = set() if _seen is None else _seen
    for s in ir.walk(body):
        if isinstance(s, ir.Effect) or (isinstance(s, ir.Call) and may_change_state(s.op)):
            return True
        if isinstance(s, ir.UserCall) and id(s.callee) not in seen:
            seen.add(id(s.callee))
            if has_effects(s.callee.body, seen):
                return True
    return False


# -- library or user code ---------------------------------------------------------------------


def _library_dirs() -> tuple[str, ...]:
    dirs = set()
    for scheme_vars in (None, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}):
        paths = sysconfig.get_paths(vars=scheme_vars) if scheme_vars else sysconfig.get_paths()
        dirs.update(paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib"))
    try:
        dirs.update(site.getsitepackages())
    except AttributeError:  # pragma: no cover - (virtualenv's old site module)
        pass
    dirs.add(site.getusersitepackages())
    return tuple(sorted(os.path.realpath(d) + os.sep for d in dirs if d))


_LIB_DIRS = _library_dirs()
_LIBRARY_ROOTS = {"numpy", "math", "cmath", "operator", "builtins", "functools", "itertools"}


def _is_library_module(module_name: str) -> bool | None:
    if module_name.startswith(("srcad.zoo", "srcad.generated")):
        return False  # srcad's models and generated code are user code, however installed
    root = module_name.split(".")[0]
    if root in _LIBRARY_ROOTS or root == "srcad":
        return True
    return None


def library_file(fn) -> str | None:
    """The file of `fn` if it is an installed library's Python function (srcad does not trace
    into it), else None (user code, traced as a subroutine; or not a Python function)."""
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None:
        return None
    by_module = _is_library_module(getattr(fn, "__module__", "") or "")
    if by_module is False:
        return None
    path = os.path.realpath(code.co_filename)
    if by_module or path.startswith(_LIB_DIRS):
        return code.co_filename
    return None


def is_library_module(mod: types.ModuleType) -> bool:
    by_name = _is_library_module(mod.__name__)
    if by_name is not None:
        return by_name
    path = getattr(mod, "__file__", None)
    return path is None or os.path.realpath(path).startswith(_LIB_DIRS)


_IMPURE_BUILTINS = {"setattr", "delattr", "exec", "eval", "next", "iter", "input", "open",
                    "__import__", "compile", "globals", "locals", "vars"}
# numpy functions that write into an argument
_NP_WRITERS = {"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis"}


def known_pure(fn, keywords=()) -> bool:
    """Does `fn` certainly change no state and leave its arguments alone? (math, builtins,
    numpy outside np.random without out=.) Unknown callables are assumed not to be."""
    if "out" in keywords:
        return False
    if isinstance(fn, type) and fn.__module__ == "builtins":
        return True  # float, int, list, dict, range, ...
    name = getattr(fn, "__name__", None)
    mod = getattr(fn, "__module__", None) or ""
    if getattr(builtins, name or "", None) is fn:
        return name not in _IMPURE_BUILTINS
    if mod in ("math", "cmath", "logging", "warnings") or getattr(math, name or "", None) is fn:
        return True
    if isinstance(fn, np.ufunc):
        return True
    if mod.startswith("numpy") and not mod.startswith("numpy.random"):
        return name not in _NP_WRITERS
    return False


# -- the refusal ------------------------------------------------------------------------------


def _flows(fn: ir.Function):
    """(inputs, outputs) of each statement along which a value's dependence travels: a row's
    arguments with a derivative rule, every argument of an op with no rule (its result
    depends on them, with no gradient) and of a user call."""
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Call):
            if is_opaque(s.op):
                yield list(s.args.values()), [s.target]
            elif s.op.name == "pop":
                yield [s.args["stack"]], [s.target]
            else:
                yield [a for p, a in s.args.items()
                       if s.op.vjp(p) is not None or s.op.jvp(p) is not None], [s.target]
        elif isinstance(s, ir.UserCall):
            yield list(s.args), list(s.targets)
        elif isinstance(s, ir.Push):
            yield [s.value], [s.stack]


def _dependent(fn: ir.Function, wrt) -> set:
    """Names whose value depends on `wrt` (through ops with a rule or without one)."""
    flows = list(_flows(fn))
    dep = set(wrt)
    changed = True
    while changed:
        changed = False
        for ins, outs in flows:
            if any(v in dep for a in ins for v in ir.atom_vars(a)) and not set(outs) <= dep:
                dep.update(outs)
                changed = True
    return dep


def _useful(fn: ir.Function) -> tuple[set, set]:
    """(names, constant spellings) from which the output is reached through ops that would
    carry a gradient -- rows with a rule, ops with none, user calls -- but not through a row
    with no derivative (a comparison, a shape, int()): where a missing gradient matters."""
    flows = list(_flows(fn))
    names = set(ir.atom_vars(fn.ret.value))
    consts = set()
    changed = True
    while changed:
        changed = False
        for ins, outs in reversed(flows):
            if not any(o in names for o in outs):
                continue
            for a in ins:
                for v in ir.atom_vars(a):
                    if v not in names:
                        names.add(v)
                        changed = True
                for c in _consts(a):
                    consts.add(c)
    return names, consts


def _consts(atom):
    if isinstance(atom, ir.Const):
        yield atom.src
    elif isinstance(atom, ir.Seq):
        for a in atom.items:
            yield from _consts(a)


def _site_label(s) -> str:
    op = s.op
    if op.kind == "call":
        return f"`{op.label}`"
    if op.kind == "method":
        return f"the method `{op.label}`"
    if op.kind == "format":
        return op.label
    return f"the attribute `{op.label}`"


def _refuse(fn: ir.Function, s, why: str, hint: str):
    raise NoRuleError(f"{_site_label(s)} has no derivative rule in srcad, and {why}",
                      filename=fn.filename, lineno=s.line, func=fn.name, hint=hint)


def _hint(s) -> str:
    op = s.op
    if op.kind == "call" and op.library is not None and getattr(op, "srcad_own", False):
        return (f"`{op.label}` is one of srcad's own helpers ({op.library}) and has no row in "
                f"the op table: this is a bug in srcad, please report it")
    if op.kind == "call" and op.library is not None:
        return (f"`{op.label}` is a function of an installed library ({op.library}); srcad "
                f"does not trace into installed libraries (site-packages, the standard "
                f"library). Register a rule: srcad.defvjp({op.label}, lambda g, out, x: ...) "
                f"(one rule per positional argument), or write it with numpy functions")
    if op.kind == "call":
        return (f"register one with srcad.defvjp({op.label}, lambda g, out, x: ...) (one "
                f"rule per positional argument), or use the numpy function")
    return ("call the numpy function instead (np.<name>(x, ...)), or register one with "
            "srcad.defvjp")


def _from_params(fn: ir.Function) -> set:
    """A subroutine's parameters and what indexes or copies them: objects its caller holds
    too (a value stored into one of them reaches the caller, where srcad cannot follow)."""
    out = set(fn.params)
    for s in ir.walk(fn.body):
        if isinstance(s, ir.Call) and s.op.name in ("getitem", "copy") and any(
                v in out for v in ir.atom_vars(next(iter(s.args.values()), None))):
            out.add(s.target)
    return out


# methods that change their object in place (a list's, a dict's, an array's)
MUTATING = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
             "popitem", "add", "discard", "reverse", "sort", "fill", "resize", "put",
             "partition", "itemset", "setflags", "setfield", "shuffle", "__setitem__"}


def check_opaque(fn: ir.Function, wrt, _seen=None, _callee=False) -> None:
    """Refuse an op with no rule where it would drop a gradient (see the module docstring);
    the user functions `fn` calls are checked with the arguments that reach them."""
    seen = set() if _seen is None else _seen
    key = (id(fn), tuple(sorted(wrt)))
    if key in seen:
        return
    seen.add(key)
    sites = [s for s in ir.walk(fn.body) if (isinstance(s, (ir.Call, ir.Effect)) and
                                             is_opaque(s.op))]
    calls = [s for s in ir.walk(fn.body) if isinstance(s, ir.UserCall)]
    if not sites and not calls:
        return
    dep = _dependent(fn, wrt)
    useful = None
    for s in sites:
        given = {p for p, a in s.args.items() if set(ir.atom_vars(a)) & dep}
        if not given:
            continue
        if useful is None:
            useful = _useful(fn)
        names, consts = useful
        if isinstance(s, ir.Call) and s.target in names:
            _refuse(fn, s, "it is given a value that depends on the arguments being "
                    "differentiated: its result, which the output depends on, would carry "
                    "no gradient", _hint(s))
        if s.op.pure:
            continue
        shared = _from_params(fn) if _callee else set()
        method = s.op.kind == "method"
        if method:  # it may store its arguments in its object, or change the object itself
            holders = ["_obj"] if (given - {"_obj"} or s.op.name[1:] in MUTATING) else []
        else:  # a function srcad knows nothing about may change any of its arguments
            holders = [p for p in s.args if p != "_fn"]
        for p in holders:
            a = s.args[p]
            held = (isinstance(a, ir.Var) and (a.name in names or a.name in shared)) or (
                isinstance(a, ir.Const) and a.src in consts)
            if held:
                what = a.name if isinstance(a, ir.Var) else a.src
                _refuse(fn, s, f"it is given a value that depends on the arguments being "
                        f"differentiated; it may store it in or change `{_user(what)}`, "
                        f"which the output depends on, and the gradient would not follow",
                        "build the value with operations srcad differentiates (a list "
                        "made in the function follows lst.append(v)), or pass it on directly")
    for s in calls:
        inner = [p for p, a in zip(s.callee.params, s.args) if set(ir.atom_vars(a)) & dep]
        if inner:
            check_opaque(s.callee, inner, seen, True)


def _user(name: str) -> str:
    """The user's spelling of an IR name (`h_L12` -> `h`)."""
    base, _, tail = name.rpartition("_L")
    return base if base and tail.isdigit() else name


check_opaque_methods = check_opaque  # (its first name, when only methods were opaque)
