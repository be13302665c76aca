"""The op table's C expressions, parsed and re-emitted for one element type.

A row's ``c`` is C99 over the row's parameter names, written for people
(``(x > y || isnan(x)) ? x : y``). To run it as numpy would, the fuser emits it for the
op's loop type T (float or double, or an integer or bool type):

  * every floating literal is rounded to T first (``(float)0.5``): numpy computes in the
    loop's type, so ``x * (pi / 180)`` on float32 is float arithmetic on float constants;
  * ordered comparisons of floating values use the quiet forms (``__builtin_isgreater``):
    C's ``>`` raises the invalid flag on a NaN, numpy's comparisons and maximum do not;
  * ``sqrt``, ``fabs``, ``floor``, ... get their float names for float (``sqrtf``);
    ``isnan`` of an integer is 0;
  * a parameter is replaced by the C name of its value, already converted to its type.

`exact(expr)` says whether the expression can be computed inline bit for bit: only the
operations IEEE 754 rounds correctly (+ - * /, sqrt, comparisons, selections, fmod,
copysign, rounding to integers, classification). Anything else (exp, log, tanh, pow, ...)
is not computed from this text: the fuser calls numpy's own inner loop for the op instead.

    >>> emit(parse("(x > y || isnan(x)) ? x : y"), {"x": ("a", "F"), "y": ("b", "F")}, "float")
    'srcad_select_float((__builtin_isgreater(a, b) || __builtin_isnan(a)), a, b)'

  * a selection between two values whose evaluation raises no flag is branch-free
    (``srcad_select_float``, kernels_c/srcad_kernels.h), so gcc vectorises its loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EXACT_CALLS = {"sqrt", "fabs", "copysign", "floor", "ceil", "trunc", "rint", "nearbyint",
               "fmod", "isnan", "isinf", "isfinite", "signbit"}
_FLOAT_NAMES = {"sqrt", "fabs", "copysign", "floor", "ceil", "trunc", "rint", "nearbyint",
                "fmod"}
_QUIET = {">": "__builtin_isgreater", "<": "__builtin_isless",
          ">=": "__builtin_isgreaterequal", "<=": "__builtin_islessequal"}
_CLASSIFY = {"isnan": "__builtin_isnan", "isinf": "__builtin_isinf",
             "isfinite": "__builtin_isfinite", "signbit": "__builtin_signbit"}


@dataclass(frozen=True)
class Num:
    text: str

    @property
    def is_float(self) -> bool:
        return any(c in self.text for c in ".eE") and not self.text.lower().startswith("0x")


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Call:
    fn: str
    args: tuple


@dataclass(frozen=True)
class Un:
    op: str
    x: object


@dataclass(frozen=True)
class Bin:
    op: str
    a: object
    b: object


@dataclass(frozen=True)
class Tern:
    c: object
    a: object
    b: object


_TOKEN = re.compile(r"\s*(?:(\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+"
                    r"|\d+)|([A-Za-z_]\w*)|(\|\||&&|==|!=|<=|>=|[-+*/%<>!?:(),&|^~]))")
_BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
           ("+", "-"), ("*", "/", "%")]


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"cannot parse C expression {text!r} at {text[pos:]!r}")
        out.append(m.group(0).strip())
        pos = m.end()
    return out


def parse(text: str):
    """The expression tree of a row's C text (raises ValueError on what it does not know)."""
    toks = _tokens(text)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def take(expect=None):
        nonlocal pos
        t = peek()
        if t is None or (expect is not None and t != expect):
            raise ValueError(f"C expression {text!r}: expected {expect or 'more'}, got {t!r}")
        pos += 1
        return t

    def ternary():
        c = binary(0)
        if peek() == "?":
            take("?")
            a = ternary()
            take(":")
            b = ternary()
            return Tern(c, a, b)
        return c

    def binary(level):
        if level == len(_BINARY):
            return unary()
        left = binary(level + 1)
        while peek() in _BINARY[level]:
            op = take()
            left = Bin(op, left, binary(level + 1))
        return left

    def unary():
        if peek() in ("-", "+", "!", "~"):
            return Un(take(), unary())
        return primary()

    def primary():
        t = take()
        if t == "(":
            e = ternary()
            take(")")
            return e
        if t[0].isdigit() or t[0] == ".":
            return Num(t)
        if t[0].isalpha() or t[0] == "_":
            if peek() == "(":
                take("(")
                args = []
                if peek() != ")":
                    args.append(ternary())
                    while peek() == ",":
                        take(",")
                        args.append(ternary())
                take(")")
                return Call(t, tuple(args))
            return Var(t)
        raise ValueError(f"C expression {text!r}: unexpected {t!r}")

    tree = ternary()
    if pos != len(toks):
        raise ValueError(f"C expression {text!r}: trailing {toks[pos:]}")
    return tree


def names(tree) -> set[str]:
    """The variables (parameters) an expression reads."""
    if isinstance(tree, Var):
        return {tree.name}
    if isinstance(tree, Num):
        return set()
    if isinstance(tree, Call):
        return set().union(*(names(a) for a in tree.args)) if tree.args else set()
    if isinstance(tree, Un):
        return names(tree.x)
    if isinstance(tree, Bin):
        return names(tree.a) | names(tree.b)
    return names(tree.c) | names(tree.a) | names(tree.b)


def exact(tree) -> bool:
    """Computed inline, is the expression correctly rounded (numpy's result bit for bit)?"""
    if isinstance(tree, (Var, Num)):
        return True
    if isinstance(tree, Call):
        return tree.fn in EXACT_CALLS and all(exact(a) for a in tree.args)
    if isinstance(tree, Un):
        return exact(tree.x)
    if isinstance(tree, Bin):
        return exact(tree.a) and exact(tree.b)
    return exact(tree.c) and exact(tree.a) and exact(tree.b)


def emit(tree, env: dict, ctype: str) -> str:
    """C text of `tree` with each parameter replaced: env maps a parameter to (C text, kind),
    kind "F" for a floating value of type `ctype`, "I" for an integer or bool value. The
    expression is computed in `ctype` (its floating literals are rounded to it first)."""
    text, _ = _emit(tree, env, ctype)
    return text


def _emit(t, env, ctype):
    floating = ctype in ("float", "double")
    if isinstance(t, Var):
        if t.name not in env:
            raise ValueError(f"C expression reads {t.name!r}, which is not a parameter")
        return env[t.name]
    if isinstance(t, Num):
        if t.is_float:
            return (f"(({ctype}){t.text})" if ctype != "double" else t.text), "F"
        return t.text, "I"
    if isinstance(t, Un):
        x, k = _emit(t.x, env, ctype)
        return f"({t.op}{x})", ("I" if t.op == "!" else k)
    if isinstance(t, Bin):
        a, ka = _emit(t.a, env, ctype)
        b, kb = _emit(t.b, env, ctype)
        anyf = "F" in (ka, kb)
        if t.op in _QUIET and anyf:
            return f"{_QUIET[t.op]}({_as(a, ka, ctype)}, {_as(b, kb, ctype)})", "I"
        if t.op in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
            return f"({a} {t.op} {b})", "I"
        return f"({a} {t.op} {b})", ("F" if anyf else "I")
    if isinstance(t, Tern):
        c, _ = _emit(t.c, env, ctype)
        a, ka = _emit(t.a, env, ctype)
        b, kb = _emit(t.b, env, ctype)
        if floating and "F" in (ka, kb) and _flag_free(t.a) and _flag_free(t.b):
            return (f"srcad_select_{ctype}({c}, {_as(a, ka, ctype)}, {_as(b, kb, ctype)})",
                    "F")
        return f"({c} ? {a} : {b})", ("F" if "F" in (ka, kb) else "I")
    # a call
    args = [_emit(a, env, ctype) for a in t.args]
    if t.fn in _CLASSIFY:
        (x, k), = args
        if k == "I":
            return ("1" if t.fn == "isfinite" else "0"), "I"
        return f"{_CLASSIFY[t.fn]}({x})", "I"
    if t.fn in _FLOAT_NAMES:
        if not floating:
            raise ValueError(f"{t.fn} of a {ctype} value")
        name = t.fn + ("f" if ctype == "float" else "")
        return f"{name}({', '.join(_as(x, k, ctype) for x, k in args)})", "F"
    raise ValueError(f"C function {t.fn!r} cannot be computed inline")


_NO_FLAGS = {"==", "!=", "<", ">", "<=", ">=", "&&", "||"}


def _flag_free(t) -> bool:
    """Whether evaluating `t` can raise no floating-point flag (names, literals, quiet
    comparisons, classification, selections of such): a selection between two such values may
    evaluate both, branch-free (`srcad_select_float`), as numpy's np.where has both computed."""
    if isinstance(t, (Var, Num)):
        return True
    if isinstance(t, Un):
        return t.op in ("-", "!") and _flag_free(t.x)
    if isinstance(t, Bin):
        return t.op in _NO_FLAGS and _flag_free(t.a) and _flag_free(t.b)
    if isinstance(t, Tern):
        return _flag_free(t.c) and _flag_free(t.a) and _flag_free(t.b)
    return t.fn in _CLASSIFY and all(_flag_free(a) for a in t.args)


def _as(text: str, kind: str, ctype: str) -> str:
    """A value as `ctype` (an integer value or literal in a floating context)."""
    if kind == "I" and ctype in ("float", "double"):
        return f"(({ctype}){text})"
    return text
