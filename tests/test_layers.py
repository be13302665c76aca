"""srcad's layers: each module imports only from the layers below it, with no import cycles,
at module level or inside functions.

The order is declared once, in pyproject.toml (`[tool.importlinter]`): import-linter checks a
`layers` contract (exhaustive: a new top-level module must be placed in it) and an
`acyclic_siblings` contract, on the import graph grimp builds, function-level imports
included. The self-checks below run the same two contract types on a small synthetic package
and show each failing when an upward import, a cycle or a function-level import is added.
Function-level imports of srcad's own modules are not allowed at all; the only ones kept are
of optional dependencies, listed here.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from importlinter import cli  # (configures import-linter, as its command line does)

ROOT = Path(__file__).resolve().parent.parent

# imports made inside functions, by design: optional dependencies only (module, imported)
FUNCTION_LEVEL_ALLOWED: set[tuple[str, str]] = {
    # filelock takes ~15 ms to import and is needed only to build a kernel, never to load one
    ("srcad/build/cache.py", "filelock"),
    # Dask distributed: the `distributed` extra, imported only when srcad.parallel is used
    ("srcad/parallel.py", "distributed"),
    # scipy: the scipy.special rows register once scipy is imported (srcad/ops/special.py)
    ("srcad/ops/special.py", "scipy.special"),
    # scipy: the cdist row registers once scipy.spatial.distance is imported (ops/spatial.py)
    ("srcad/ops/spatial.py", "scipy.spatial.distance"),
    # scipy: the scipy.linalg rows register once scipy.linalg is imported (ops/scipy_linalg.py)
    ("srcad/ops/scipy_linalg.py", "scipy.linalg"),
    # scipy: the scipy.signal rows register once scipy.signal is imported (ops/scipy_signal.py)
    ("srcad/ops/scipy_signal.py", "scipy.signal"),
}


def _lint(config: Path) -> bool:
    """Do the contracts in `config` hold? (import-linter's own command, in process.)"""
    code = cli.lint_imports(config_filename=str(config), no_cache=True, no_logo=True)
    return code == cli.EXIT_STATUS_SUCCESS


def test_srcad_keeps_its_layers_and_has_no_cycles():
    assert _lint(ROOT / "pyproject.toml")


def test_no_function_level_imports_but_optional_dependencies():
    found = set()
    for path in sorted((ROOT / "srcad").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import):
                    found |= {(path.relative_to(ROOT).as_posix(), a.name) for a in inner.names}
                elif isinstance(inner, ast.ImportFrom):
                    found.add((path.relative_to(ROOT).as_posix(),
                               "." * inner.level + (inner.module or "")))
    assert found <= FUNCTION_LEVEL_ALLOWED, sorted(found - FUNCTION_LEVEL_ALLOWED)


# -- the checker checks: the same contracts on a synthetic package ----------------------------

_CONFIG = """\
[tool.importlinter]
root_package = "{pkg}"

[[tool.importlinter.contracts]]
name = "layers"
type = "layers"
containers = ["{pkg}"]
exhaustive = true
layers = ["api", "pipeline", "ir"]

[[tool.importlinter.contracts]]
name = "acyclic"
type = "acyclic_siblings"
ancestors = ["{pkg}"]
"""
_GOOD = {
    "__init__.py": "",
    "api.py": "from . import pipeline\n",
    "pipeline.py": "from . import ir\n",
    "ir.py": "",
}
_BAD = {
    "an upward import": {"ir.py": "from . import pipeline\n"},
    "an upward import inside a function": {"ir.py": "def f():\n    from . import api\n"},
    "a module missing from the layers": {"extra.py": ""},
    "a cycle inside a layer's package": {
        "ir.py": None,
        "ir/__init__.py": "",
        "ir/a.py": "from . import b\n",
        "ir/b.py": "def f():\n    from . import a\n",
    },
}


def _package(tmp_path, monkeypatch, name, changes) -> Path:
    files = {**_GOOD, **changes}
    for rel, text in files.items():
        if text is None:
            continue
        p = tmp_path / name / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    config = tmp_path / f"{name}.toml"
    config.write_text(_CONFIG.format(pkg=name))
    monkeypatch.syspath_prepend(str(tmp_path))
    return config


def test_the_contracts_hold_on_a_clean_package(tmp_path, monkeypatch):
    assert _lint(_package(tmp_path, monkeypatch, "layered_ok", {}))


@pytest.mark.parametrize("what", sorted(_BAD))
def test_the_contracts_catch(what, tmp_path, monkeypatch):
    name = "layered_" + "".join(c if c.isalnum() else "_" for c in what)
    assert not _lint(_package(tmp_path, monkeypatch, name, _BAD[what]))
