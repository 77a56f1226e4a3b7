"""The release, tried as a new user would on one distribution: its minimal root (scripts/make-roots.sh,
cached under ~/.cache/hangshim/roots) with its own python3, pip and gdb and nothing of the build.
The release wheel (scripts/release.sh: dist/) is installed into a venv there and used:
in_root_checks.sh says what is checked. Beside the wheel go the NCCL stand-in (libnccl.so.2 and
libcuda.so.1 for the CPU, which release.sh builds the portable way in its build tree; never in
the wheel), a copy of tests/system/scenarios, tests/preload/report and tests/common (the hung job and the
report's checker) and the root_*.py checks. The root is entered with chroot inside a private mount
namespace (unshare), so /proc and /dev are mounted for the checks only and never left behind.

    run_root_checks.py --system focal --roots DIR --dist DIR --release-build DIR

Exit 0 passed, 1 failed, 77 skipped with the reason: not root, no unshare/chroot, the root not
made (scripts/make-roots.sh SYSTEM: its archive unreachable), or no release wheel or stand-in
(scripts/release.sh).
"""

import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from driver import required_args  # noqa: E402

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(os.path.dirname(HERE))  # tests/
# What root_hang_job.py needs of tests/, copied at the same paths (their imports are relative).
TEST_PARTS = (os.path.join("system", "scenarios"), os.path.join("preload", "report"), "common")
STAND_IN = ("libnccl.so.2", "libcuda.so.1")  # in the release build's standin/lib
WORK = "tmp/hangshim-release-test"


def skip(reason):
    print("SKIPPED: " + reason)
    sys.exit(SKIP)


def main():
    args = required_args("--system", "--roots", "--dist", "--release-build")

    if os.geteuid() != 0:
        skip("chroot and mounting /proc need root")
    for tool in ("unshare", "chroot", "mount"):
        if shutil.which(tool) is None:
            skip("%s is missing" % tool)
    root = os.path.join(args.roots, args.system)
    if not os.path.exists(os.path.join(root, ".hangshim-root-complete")):
        skip("no %s root in %s: scripts/make-roots.sh %s makes it (scripts/setup.sh does; "
             "it needs debootstrap and the system's archive)" % (args.system, args.roots, args.system))
    wheels = sorted(glob.glob(os.path.join(args.dist, "hangshim-*-py3-none-manylinux*.whl")))
    if not wheels:
        skip("no release wheel in %s: scripts/release.sh makes it" % args.dist)
    stand_in = os.path.join(args.release_build, "standin", "lib")
    if not all(os.path.exists(os.path.join(stand_in, name)) for name in STAND_IN):
        skip("no portable NCCL stand-in (%s) in %s: scripts/release.sh builds it" % (" and ".join(STAND_IN), stand_in))

    work = os.path.join(root, WORK)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        shutil.copy2(wheels[-1], work)
        for name in ("in_root_checks.sh", "root_hang_job.py", "root_py_bt.py"):
            shutil.copy2(os.path.join(HERE, name), work)
        os.makedirs(os.path.join(work, "fakenccl"))
        for name in STAND_IN:  # the files the sonames lead to, under the sonames
            shutil.copy2(os.path.realpath(os.path.join(stand_in, name)), os.path.join(work, "fakenccl", name))
        for part in TEST_PARTS:
            shutil.copytree(os.path.join(TESTS, part), os.path.join(work, "tests", part),
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        enter = ('mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" && '
                 'exec chroot "$0" /bin/bash /%s/in_root_checks.sh' % WORK)
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", enter, root],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=900)
        print(p.stdout)
        if p.returncode != 0 or "FAILED:" in p.stdout:
            print("%s: FAILED (exit %d)" % (args.system, p.returncode))
            return 1
        print("%s: passed" % args.system)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
