"""Programs written in the styles of public numpy-from-scratch code (issue 22, item 6).

Each module groups one style. Every program is an ordinary numpy function returning a scalar
loss, written as that style writes it, together with a backward written by hand in the same
style (the oracle). ``PROGRAMS`` in each module lists them as :class:`Program` records;
``ALL`` here collects every module's list. tests/test_corpus_styles.py checks srcad against
them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


@dataclass
class Program:
    name: str                      # unique id: "<module>.<function>"
    fn: Callable[..., Any]         # the program: returns a scalar loss
    backward: Callable[..., Any]   # hand-written gradient: a tuple, one per wrt entry
    make_args: Callable[[], tuple]  # fresh arguments (seeded)
    wrt: tuple                     # parameter names differentiated
    fuse: bool = False             # also checked with fuse=True in the default run
    tags: tuple = field(default_factory=tuple)


def rng(seed=0):
    return np.random.default_rng(seed)


MODULES = ["layers", "classes", "dictnets", "losses", "norms", "recurrent", "conv", "attention", "policy",
]


def _collect():
    import importlib
    out = []
    for name in MODULES:
        out.extend(importlib.import_module(f"{__name__}.{name}").PROGRAMS)
    return out


def all_programs():
    return _collect()
