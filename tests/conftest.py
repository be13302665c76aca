"""Test-session settings shared by every test module."""

import os
from pathlib import Path

import pytest

# fused kernels: a cache of the test suite's own (CI sets SRCAD_CACHE_DIR inside the clone;
# locally, one that survives between runs, so that a rerun does not compile again)
os.environ.setdefault("SRCAD_CACHE_DIR",
                      str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "kernels"))


def pytest_collection_modifyitems(config, items):
    """`@pytest.mark.slow` keeps a case out of the default suite (which must stay within its
    ~15-minute budget on two busy cores): it runs with ``pytest -m slow`` or ``SRCAD_SLOW=1``.
    (Several modules also skip their own slow cases with that same test; one rule here.)"""
    if "slow" in (config.getoption("markexpr") or "") or os.environ.get("SRCAD_SLOW"):
        return
    skip = pytest.mark.skip(reason="slow: ask with -m slow or SRCAD_SLOW=1")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
