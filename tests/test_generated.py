"""generated/ and docs/ops.md are what the code generates today (`python -m srcad regen`)."""

from pathlib import Path

import pytest

from srcad import cli

ROOT = Path(__file__).resolve().parent.parent


def test_generated_files_are_fresh():
    stale = []
    for rel, text in cli.generated_files().items():
        path = ROOT / rel
        if not path.exists() or path.read_text() != text:
            stale.append(rel)
    assert not stale, f"stale: {stale}; run `python -m srcad regen` and commit the result"


def test_generation_is_byte_identical_across_runs():
    from srcad import api

    first = cli.generated_files()
    api._IR_CACHE.clear()
    assert cli.generated_files() == first


def test_no_generated_file_is_orphaned():
    expected = {rel for rel in cli.generated_files() if rel.startswith("generated/")}
    present = {f"generated/{p.name}" for p in (ROOT / "generated").glob("*.py")}
    assert present <= expected, f"not produced by regen any more: {present - expected}"


@pytest.mark.parametrize("rel", sorted(r for r in cli.GENERATED_NAMES()))
def test_generated_module_runs(rel):
    """Each generated file is standalone: it imports only numpy and srcad.runtime."""
    text = (ROOT / "generated" / rel).read_text()
    imports = [ln for ln in text.splitlines() if ln.startswith(("import ", "from "))]
    assert all(ln == "import numpy as np" or ln.startswith("from srcad.runtime import")
               for ln in imports), imports
    compile(text, rel, "exec")
