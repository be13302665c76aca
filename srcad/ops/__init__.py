"""The op table. Importing this package registers every row (see table.py)."""

from . import elementwise, linalg, nondiff, reductions, shape  # noqa: F401  (registers rows)
from .table import Op, Param, Rule, all_ops, by_name, defjvp, defnondiff, defvjp, lookup

__all__ = ["Op", "Param", "Rule", "all_ops", "by_name", "defjvp", "defnondiff", "defvjp", "lookup"]
