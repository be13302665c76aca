"""srcad's C part: the runtime of fused kernels (kernels_c/), as the extension srcad._kernels.

Everything else is in pyproject.toml. The extension is optional: on a machine without a C
compiler (or without numpy's headers) `pip install` goes on without it, and srcad then
compiles the same sources into its kernel cache on first use when a compiler is there, or
runs unfused code with one warning when none is. The sources are also copied into the
package (srcad/_kernels_c/), because the kernels srcad generates at run time include the
header.
"""

import hashlib
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
C_DIR = "kernels_c"
C_FILES = ("srcad_kernels.h", "srcad_pool.h", "srcad_scatter.h", "srcad_optim.h",
           "srcad_rowgrad.h", "srcad_guards.h", "srcad_threads.h", "srcad_gemm.h",
           "srcad_colsum.h",
           "srcad_driver.c")  # srcad.build hashes the same files


def _sources_sha() -> str:
    h = hashlib.sha256()
    for name in C_FILES:
        h.update((ROOT / C_DIR / name).read_bytes())
    return h.hexdigest()


class OptionalBuildExt(build_ext):
    """Build srcad._kernels, else not at all (a warning). No OpenMP: the runtime runs its own
    threads (kernels_c/srcad_gemm.h, the team), and libgomp, shared by soname with every
    other library of the process, would take the wait policy of whoever loads it first."""

    def build_extension(self, ext):
        try:
            import numpy
        except ImportError:
            self._skip(ext, "numpy is not importable at build time")
            return
        ext.include_dirs.append(numpy.get_include())
        try:
            super().build_extension(ext)
        except Exception as e:  # a compiler error, or no compiler at all
            self._skip(ext, f"{type(e).__name__}: {e}")

    @staticmethod
    def _skip(ext, why):
        print(f"srcad: not building {ext.name} ({why}); srcad will compile it on first use "
              f"of fuse=True if a C compiler is there, else run unfused", file=sys.stderr)


class BuildPyWithC(build_py):
    """Ship kernels_c/ inside the package: generated kernels include its header."""

    def run(self):
        super().run()
        dst = Path(self.build_lib) / "srcad" / "_kernels_c"
        dst.mkdir(parents=True, exist_ok=True)
        for name in C_FILES:
            shutil.copy2(ROOT / C_DIR / name, dst / name)


setup(
    ext_modules=[Extension(
        "srcad._kernels", sources=[f"{C_DIR}/srcad_driver.c"], include_dirs=[C_DIR],
        # (a changed header rebuilds the extension: the driver includes them all)
        depends=[f"{C_DIR}/{name}" for name in C_FILES if name.endswith(".h")],
        define_macros=[("SRCAD_SOURCE_SHA", f'"{_sources_sha()}"')],
        # exact IEEE arithmetic (never -ffast-math); portable code (no -march=native: the
        # installed runtime may run on another CPU of the same architecture)
        # (-fno-math-errno: sqrt may vectorise; values and floating-point flags unchanged)
        # (-pthread: the runtime's own threads, kernels_c/srcad_gemm.h)
        extra_compile_args=["-O3", "-ffp-contract=off", "-fwrapv", "-fno-math-errno",
                            "-pthread"],
        extra_link_args=["-pthread"],
        optional=True)],
    cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithC},
)
