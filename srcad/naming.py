"""Deterministic fresh names: `base`, then `base_2`, `base_3`, ... (never uuids or hex).

Every stage that invents a name (normalisation's temporaries, desugaring's flags, adjoints,
tangents, stacks, generated functions) takes it from here, against the set of names its scope
already uses, so generated code is byte-identical from run to run.
"""

from __future__ import annotations

import keyword
import re


def fresh(base: str, taken: set) -> str:
    """The first of `base`, `base_2`, `base_3`, ... not in `taken` (which it then joins); a
    keyword (`lambda`, a hint made from `lambda_`) gets the next ones."""
    base = re.sub(r"\W", "_", base)  # (a hint made from a description: "an item")
    if not base or base[0].isdigit():
        base = f"v_{base}"
    name, k = base, 2
    if keyword.iskeyword(base):
        name = f"{base}_{k}"
        k += 1
    while name in taken:
        name = f"{base}_{k}"
        k += 1
    taken.add(name)
    return name
