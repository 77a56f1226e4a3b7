"""Builds the wheel: CMake builds the tools (tests off), `cmake --install` lays them out in a
staging prefix, and bin/, lib/libhangshim.so and share/hangshim/ go into the package as
hangshim/_bundle/. The programs do not depend on the Python they are installed with, so the
wheel is tagged py3-none-<platform>.

Environment:
  HANGSHIM_WHEEL_BUILD_DIR  an existing CMake build tree to install from instead of building
                            (the tests use their own build); its products must be built
  HANGSHIM_WHEEL_JOBS       parallel build jobs (default: the CPUs)
  HANGSHIM_WHEEL_PLATFORM   the wheel's platform tag instead of this machine's (scripts/release.sh:
                            manylinux_2_17_x86_64.manylinux2014_x86_64, which its portable build
                            has checked is true); unset, the tag is this machine's linux_<arch>
"""

import os
import re
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # no wheel package: pip install still works through its own
    bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))


def project_version():
    with open(os.path.join(HERE, "CMakeLists.txt")) as f:
        match = re.search(r"project\(hangshim VERSION ([0-9.]+)", f.read())
    if not match:
        sys.exit("setup.py: CMakeLists.txt has no `project(hangshim VERSION ...)`")
    return match.group(1)


def run(command):
    print("setup.py: " + " ".join(command), flush=True)
    subprocess.run(command, check=True)


class build_with_cmake(build_py):
    """The Python launchers, plus the CMake-built tools under hangshim/_bundle."""

    def run(self):
        super().run()
        build_dir = os.environ.get("HANGSHIM_WHEEL_BUILD_DIR")
        if build_dir:
            build_dir = os.path.abspath(build_dir)
        else:
            build_dir = os.path.join(os.path.abspath(self.get_finalized_command("build").build_temp), "cmake")
            jobs = os.environ.get("HANGSHIM_WHEEL_JOBS") or str(os.cpu_count() or 1)
            run(["cmake", "-S", HERE, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DHANGSHIM_BUILD_TESTS=OFF"])
            run(["cmake", "--build", build_dir, "-j", jobs])
        staging = os.path.join(os.path.abspath(self.get_finalized_command("build").build_temp), "prefix")
        shutil.rmtree(staging, ignore_errors=True)
        run(["cmake", "--install", build_dir, "--prefix", staging, "--strip"])
        bundle = os.path.join(self.build_lib, "hangshim", "_bundle")
        shutil.rmtree(bundle, ignore_errors=True)
        # What a user runs; the headers, libpyframes.a and the CMake package stay out of the wheel
        # (they are for building against pyframes: cmake --install).
        shutil.copytree(os.path.join(staging, "bin"), os.path.join(bundle, "bin"))
        os.makedirs(os.path.join(bundle, "lib"))
        shutil.copy2(os.path.join(staging, "lib", "libhangshim.so"), os.path.join(bundle, "lib"))
        shutil.copytree(os.path.join(staging, "share", "hangshim"), os.path.join(bundle, "share", "hangshim"))


class BinaryDistribution(Distribution):
    """Holds programs built for this platform: the wheel is not pure Python."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": build_with_cmake}
if bdist_wheel is not None:
    class bdist_wheel_any_python(bdist_wheel):
        """py3-none-PLATFORM: the bundled programs run under any Python 3 (they read it from outside)."""

        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            _, _, platform = super().get_tag()
            return "py3", "none", os.environ.get("HANGSHIM_WHEEL_PLATFORM") or platform

    cmdclass["bdist_wheel"] = bdist_wheel_any_python

setup(
    version=project_version(),
    package_dir={"": "python"},
    packages=["hangshim"],
    cmdclass=cmdclass,
    distclass=BinaryDistribution,
    zip_safe=False,
)
