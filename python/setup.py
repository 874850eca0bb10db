"""setup.py: the compiled half of the ropecheck package (_ropecheck) built by the project's CMake
(pyproject.toml holds the metadata). build_ext configures the repository (this file's parent
directory) in setuptools' build_temp and builds the one target `_ropecheck`, then copies the
module into the package. ROPECHECK_EXTENSION=PATH copies an already built module instead (a build
tree's build/python/ropecheck/_ropecheck*.so), as a packager installing a finished build does.
"""

import glob
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = Path(__file__).resolve().parent.parent  # the repository: CMakeLists.txt


class cmake_build_ext(build_ext):
    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        built = os.environ.get("ROPECHECK_EXTENSION")
        if not built:
            build = Path(self.build_temp).resolve() / "cmake"
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.run(["cmake", "-S", str(SOURCE), "-B", str(build), *generator,
                            "-DCMAKE_BUILD_TYPE=Release", "-DROPECHECK_BUILD_TESTS=OFF",
                            "-DROPECHECK_BUILD_BENCHMARKS=OFF", "-DROPECHECK_PYTHON=ON",
                            # the interpreter pip runs, not the first python3 on PATH
                            f"-DPython_EXECUTABLE={sys.executable}"], check=True)
            subprocess.run(["cmake", "--build", str(build), "--target", "_ropecheck", "--parallel"], check=True)
            found = glob.glob(str(build / "python" / "ropecheck" / "_ropecheck*.so"))
            if not found:
                raise RuntimeError(f"the CMake build made no _ropecheck module under {build}/python/ropecheck")
            built = found[0]
        # A module built for another interpreter would install under this one's name and fail
        # to import: refuse it here.
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        if not built.endswith(suffix):
            raise RuntimeError(f"{built} is not a module for this Python (its modules end in {suffix})")
        shutil.copyfile(built, target)


setup(ext_modules=[Extension("ropecheck._ropecheck", sources=[])], cmdclass={"build_ext": cmake_build_ext})
