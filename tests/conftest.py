"""Test-session settings shared by every test module."""

import os
from pathlib import Path

# fused kernels: a cache of the test suite's own (CI sets SRCAD_CACHE_DIR inside the clone;
# locally, one that survives between runs, so that a rerun does not compile again)
os.environ.setdefault("SRCAD_CACHE_DIR",
                      str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "kernels"))
