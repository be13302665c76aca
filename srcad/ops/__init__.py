"""The op table. Importing this package registers every row (see table.py)."""

from . import (  # noqa: F401  (registers rows)
    arrays,
    control,
    elementwise,
    helper_rows,
    linalg,
    matrix,
    nondiff,
    python_rows,
    reductions,
    runtime_ops,
    shape,
    signal,
    statistics,
    ufunc_at,
    ufunc_methods,
    wrappers,
)
from .table import (
    Case,
    Op,
    Param,
    Rule,
    all_ops,
    by_name,
    defjvp,
    defnondiff,
    defvjp,
    generation,
    lookup,
    unregister,
)

__all__ = [
    "Case",
    "Op",
    "Param",
    "Rule",
    "all_ops",
    "by_name",
    "defjvp",
    "defnondiff",
    "defvjp",
    "generation",
    "lookup",
    "unregister",
]
