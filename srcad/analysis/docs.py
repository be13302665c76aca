"""docs/ops.md, generated from the op table: one table per family.

Columns: the op (and its aliases), its forward as generated code spells it, the backward
rule for each argument (the rule's own source), the values the backward keeps (derived
from the rules' free names, `Op.saved`), the derivation, and the C expression the fuser
uses ("—" where the op is not fusable). The output depends only on the table, so it is
byte-identical on every run; tests/test_ops.py checks docs/ops.md against it.

    python -m srcad regen        # rewrites docs/ops.md (and the other generated files)
"""

from __future__ import annotations

from pathlib import Path

from .census import CLASSES, census
from ..ops.table import Op, all_ops

# Families in reading order; a family not listed here follows, in registration order.
FAMILY_ORDER = (
    "arithmetic", "unary", "trigonometric", "selection", "reduction", "shape", "array", "linalg",
    "query", "constructor", "index", "compare", "integer", "control",
)
FAMILY_TITLES = {
    "arithmetic": "Arithmetic (Python operators)",
    "unary": "Powers, exponentials and logarithms",
    "trigonometric": "Trigonometric and hyperbolic",
    "selection": "Selections",
    "reduction": "Reductions",
    "shape": "Shape and indexing",
    "array": "Arrays: triangles, diagonals, padding, sorting, gathers, splits, tiles",
    "linalg": "Linear algebra",
    "query": "Shape queries (no gradient)",
    "constructor": "Constructors (no gradient)",
    "index": "Indices and piecewise-constant functions (no gradient)",
    "compare": "Comparisons and logic (no gradient)",
    "integer": "Integer arithmetic (no gradient)",
    "control": "Introduced by normalisation",
    "scipy.special": "scipy.special (when scipy is installed: srcad/ops/special.py)",
}
_DASH = "—"

_HEADER = """\
# srcad op table

Generated from `srcad/ops/` by `python -m srcad regen`; do not edit by hand.

Each row is one entry of the op table. **forward** is how generated code spells the op;
**backward** gives each argument's VJP rule, an expression over `g` (the cotangent of the
output), `out` (the output) and the op's parameters — the transform inlines it, and for
broadcasting elementwise ops unbroadcasts the result to the argument's shape (the rules
never mention broadcasting). **saved** lists the values the backward reads, derived from
the rules; **fusable** is the C expression the elementwise fuser uses.
Helpers such as `unreduce` live in `srcad/runtime.py`.

"""


def _code(text: str) -> str:
    text = text.replace("|", "\\|")
    return f"`{text}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _op_cell(op: Op) -> str:
    cell = f"**{op.name}**"
    names = []
    for fn in op.aliases:
        mod = getattr(fn, "__module__", "") or ""
        if mod.startswith("srcad."):  # (srcad's own helper generated code calls it by)
            continue
        prefix = "np." if mod.startswith("numpy") else ""
        names.append(f"`{prefix}{getattr(fn, '__name__', repr(fn))}`")
    if names:
        cell += " (also " + ", ".join(names) + ")"
    return cell


def _backward_cell(op: Op) -> str:
    refused = ("; a differentiated " + ", ".join(f"`{p}`" for p in op.no_rule_for)
               + " is refused") if op.no_rule_for else ""
    if not op.differentiable:
        return "no gradient" + refused
    parts = []
    for p, rule in zip(op.param_names, op.vjps + (None,) * len(op.params)):
        if rule is not None:
            parts.append(f"{p}: {_code(rule.source)}")
    return "<br>".join(parts)


def _saved_cell(op: Op) -> str:
    if not op.differentiable:
        return _DASH
    saved = [p for p in ("out", *op.param_names) if p in op.saved]
    return ", ".join(f"`{s}`" for s in saved) or "nothing"


def _forward_cell(op: Op) -> str:
    """The spelling, and what a row's `forward_form` runs instead for known shapes (its
    docstring's first line)."""
    doc = (getattr(op.forward_form, "__doc__", None) or "").strip().splitlines()
    return _code(op.spelling_src) + (f"<br>{_cell(doc[0])}" if doc else "")


def _row(op: Op) -> str:
    cells = [
        _op_cell(op),
        _forward_cell(op),
        _backward_cell(op),
        _saved_cell(op),
        _cell(op.derivation) or _DASH,
        _code(op.c_expr) if op.c_expr else _DASH,
    ]
    return "| " + " | ".join(cells) + " |"


# the modules of the rows an optional library registers (srcad/ops/special.py, spatial.py,
# scipy_linalg.py), which register when the user's code imports the library: their place in
# the table must not depend on when that was
_OPTIONAL_MODULES = ("scipy", "srcad.runtime_special", "srcad.runtime_spatial",
                     "srcad.runtime_scipy_linalg", "srcad.runtime_scipy_signal")


def _optional(op: Op) -> str | None:
    module = getattr(op.fn, "__module__", None) or ""
    if module.startswith(_OPTIONAL_MODULES):
        return module
    # (scipy.special's ufuncs have no __module__: their family says whose they are)
    return op.family if op.family.startswith("scipy") else None


def _families(ops: list[Op]) -> list[str]:
    seen = list(dict.fromkeys(op.family for op in ops if _optional(op) is None))
    late = sorted({op.family for op in ops} - set(seen))
    return [f for f in FAMILY_ORDER if f in seen] + \
        [f for f in seen + late if f not in FAMILY_ORDER]


def _in_order(rows: list[Op]) -> list[Op]:
    """A family's rows in registration order, those of optional libraries after the rest,
    by module (each module's own rows in the order its module registers them)."""
    early = [op for op in rows if _optional(op) is None]
    late = [op for op in rows if _optional(op) is not None]
    late.sort(key=_optional)  # (stable: each module's rows in its own order)
    return early + late


def render_ops_md() -> str:
    """docs/ops.md as a string: a table per family of the op table, deterministic.

    >>> text = render_ops_md()
    >>> text.startswith("# srcad op table") and "| **tanh** |" in text
    True
    """
    ops = all_ops()
    out = [_HEADER]
    n_diff = sum(op.differentiable for op in ops)
    out.append(f"{len(ops)} ops: {n_diff} differentiable, {len(ops) - n_diff} without a "
               f"gradient.\n")
    for family in _families(ops):
        rows = _in_order([op for op in ops if op.family == family])
        out.append(f"\n## {FAMILY_TITLES.get(family, family.capitalize())}\n")
        out.append("| op | forward | backward | saved | derivation | fusable |")
        out.append("|---|---|---|---|---|---|")
        out.extend(_row(op) for op in rows)
    out.append(_census_md())
    return "\n".join(out) + "\n"


_CENSUS_HEADER = """
## Census: numpy's public surface

Every public callable of `numpy`, `numpy.linalg` and `numpy.fft`, the methods and
attributes of `ndarray`, the ufunc methods, and the functions of `builtins` (those applied
to arrays), `operator`, `math` and `statistics` that the installed versions have, each in
one class (srcad/analysis/census.py; tests/test_census.py fails on a name it does not classify):
**differentiated** (a row of the table above, or a method or builtin lowered to one),
**no gradient** (its result carries no derivative: it runs as written) or **refused** (a
`SrcadError` at the user's line when given a differentiated value, with the reason).
"""


def _census_md() -> str:
    """The census as a table, with counts per class."""
    entries = census()
    lines = [_CENSUS_HEADER]
    counts = {k: sum(e.kind == k for e in entries) for k in CLASSES}
    lines.append(f"{len(entries)} names: " + ", ".join(f"{n} {k}" for k, n in counts.items())
                 + ".\n")
    lines.append("| name | class | row or reason |")
    lines.append("|---|---|---|")
    lines.extend(f"| `{e.name}` | {e.kind} | {_cell(e.reason)} |" for e in entries)
    return "\n".join(lines)


def write_ops_md(path: str | Path = "docs/ops.md") -> Path:
    """Write `render_ops_md()` to `path` (relative to the working directory); return it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_ops_md())
    return path
