"""Programs of our own written in the styles public numpy-from-scratch code is written in
(course layer libraries, from-scratch RNN/CNN/attention/VAE/GAN code, numpy ML libraries).

Each module groups one style and lists its programs in ``PROGRAMS`` as :class:`Probe`
records: a loss function, its seeded arguments and the parameters differentiated. There is
no hand-written backward: tests/test_corpus_probe.py checks srcad (source and tape mode,
fuse=True for some) against central differences.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Probe:
    name: str
    fn: Callable[..., Any]
    make_args: Callable[[], tuple]
    wrt: Any
    fuse: bool = False
    tol: float = 1e-5        # rel error vs central differences
    slow: bool = False


def rng(seed=0):
    return np.random.default_rng(seed)


MODULES = ["course", "recurrent", "convnets", "transformers", "generative", "mllib",
           "objects", "inplace", "wild_layers", "wild_sequence", "wild_calls", "wild_more",
           "wild_dicts", "wild_objects2", "wild_repos3", "wild_repos4", "wild_repos5",
           "wild_repos6", "wild_repos7", "wild_repos8", "wild_idioms", "wild_repos9",
           "wild_repos10"]


def all_probes():
    out = []
    for name in MODULES:
        out.extend(importlib.import_module(f"{__name__}.{name}").PROGRAMS)
    return out
