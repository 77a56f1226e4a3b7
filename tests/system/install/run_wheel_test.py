"""The pip package: a wheel built with Debian's `python3 -m build --wheel --no-isolation` (no
network) from this source tree and this build's programs (HANGSHIM_WHEEL_BUILD_DIR: nothing is
compiled again), installed with pip into a fresh venv, then used from there:

  * the wheel is py3-none-<platform> and holds pyframes, hangshim, libhangshim.so, the collector
    scripts and the gdb extension;
  * the venv's console scripts run the bundled programs (--version, --help);
  * `hangshim run` preloads the libhangshim.so inside the installed package;
  * `python -m hangshim gdb-extension` names the extension, and gdb loads it (its py-bt help);
  * the README's demo runs with the venv's hangshim and pyframes (tests/system/demo/run_demo.py --tools):
    its verdict and stacks match the scenario's own truth.

    run_wheel_test.py --source DIR --build DIR
Exit 0 passed, 1 failed, 77 skipped (python3-build or python3-venv missing: scripts/setup.sh
installs them).
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from expect import Failure, expect  # noqa: E402

SKIP = 77
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with python3-build, python3-wheel and venv
COMMANDS = ("pyframes", "hangshim", "hang-dump", "hang-dump-slurm", "hang-dump-pdsh", "core-setup")


def run(argv, env=None, timeout=600, cwd=None):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=env,
                       timeout=timeout, cwd=cwd)
    expect(p.returncode == 0, "%s exited %d:\n%s" % (" ".join(argv), p.returncode, p.stdout[-3000:]))
    return p.stdout


def missing_tools():
    for module, package in (("build", "python3-build"), ("wheel", "python3-wheel"), ("venv", "python3-venv"),
                            ("ensurepip", "python3-venv")):
        if subprocess.run([SYSTEM_PYTHON, "-c", "import " + module], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode != 0:
            return "%s has no %s module (apt-get install %s; scripts/setup.sh does)" % (SYSTEM_PYTHON, module, package)
    return None


def build_wheel(args, work):
    """The wheel, built from a copy of the packaging files (the checkout is left as it was)."""
    source = os.path.join(work, "source")
    os.mkdir(source)
    for name in ("pyproject.toml", "setup.py", "setup.cfg", "CMakeLists.txt", "README.md"):
        shutil.copy2(os.path.join(args.source, name), source)
    shutil.copytree(os.path.join(args.source, "python"), os.path.join(source, "python"),
                    ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    out = os.path.join(work, "dist")
    env = dict(os.environ, HANGSHIM_WHEEL_BUILD_DIR=args.build)
    run([SYSTEM_PYTHON, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, source], env=env, cwd=source)
    wheels = glob.glob(os.path.join(out, "*.whl"))
    expect(len(wheels) == 1, "expected one wheel in %s, found %s" % (out, wheels))
    name = os.path.basename(wheels[0])
    expect(name.endswith("-py3-none-linux_x86_64.whl") or "-py3-none-linux_" in name,
           "the wheel is not tagged py3-none-<platform>: %s" % name)
    with zipfile.ZipFile(wheels[0]) as z:
        names = set(z.namelist())
        for member in ["hangshim/_bundle/bin/%s" % c for c in COMMANDS] + [
                "hangshim/_bundle/lib/libhangshim.so", "hangshim/_bundle/share/hangshim/gdb/pyframes-gdb.py"]:
            expect(member in names, "the wheel lacks %s" % member)
            mode = z.getinfo(member).external_attr >> 16
            expect(not member.startswith("hangshim/_bundle/bin/") or mode & 0o111,
                   "%s is not executable in the wheel (mode %o)" % (member, mode))
    return wheels[0]


def check_venv(args, venv):
    bin_dir = os.path.join(venv, "bin")
    site = run([os.path.join(bin_dir, "python"), "-c", "import hangshim, os; print(os.path.dirname(hangshim.__file__))"]).strip()
    expect(site.startswith(venv), "hangshim imported from %s, not the venv %s" % (site, venv))
    version = run([os.path.join(bin_dir, "pyframes"), "--version"])
    expect(version.startswith("pyframes "), "pyframes --version: %r" % version)
    expect(run([os.path.join(bin_dir, "hangshim"), "--version"]).startswith("hangshim "), "hangshim --version")
    for script in ("hang-dump", "hang-dump-slurm", "hang-dump-pdsh", "core-setup"):
        expect("usage" in run([os.path.join(bin_dir, script), "--help"]).lower(), "%s --help prints no usage" % script)
    # `hangshim run` finds the shim inside the installed package.
    preload = run([os.path.join(bin_dir, "hangshim"), "run", "--quiet", "--dir", os.path.join(venv, "ledgers"), "--",
                   SYSTEM_PYTHON, "-c", "import os; print(os.environ['LD_PRELOAD'])"]).strip().splitlines()[-1]
    expect(preload == os.path.join(site, "_bundle", "lib", "libhangshim.so"),
           "hangshim run preloads %r, not the package's libhangshim.so" % preload)
    extension = run([os.path.join(bin_dir, "python"), "-m", "hangshim", "gdb-extension"]).strip()
    expect(os.path.isfile(extension) and extension.startswith(site), "python -m hangshim gdb-extension: %r" % extension)
    if shutil.which("gdb"):
        helped = run(["gdb", "-batch", "-nx", "-x", extension, "-ex", "help py-bt"])
        expect("traceback" in helped.lower(), "gdb with the installed extension: help py-bt printed %r" % helped[:300])
    return site


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", required=True)
    parser.add_argument("--build", required=True)
    args = parser.parse_args()
    args.source, args.build = os.path.abspath(args.source), os.path.abspath(args.build)
    why = missing_tools()
    if why:
        print("SKIP install/wheel: %s" % why)
        return SKIP
    work = tempfile.mkdtemp(prefix="hangshim-wheel-")
    try:
        wheel = build_wheel(args, work)
        venv = os.path.join(work, "venv")
        run([SYSTEM_PYTHON, "-m", "venv", venv])
        run([os.path.join(venv, "bin", "pip"), "install", "--no-index", "--no-deps", wheel])
        site = check_venv(args, venv)
        demo = subprocess.run([sys.executable, os.path.join(args.source, "tests", "system", "demo", "run_demo.py"), "--source",
                               args.source, "--build", args.build, "--tools", os.path.join(venv, "bin")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=500)
        expect(demo.returncode == 0, "the demo with the venv's tools failed:\n%s" % demo.stdout[-4000:])
        last = demo.stdout.strip().splitlines()[-1]
        size = os.path.getsize(wheel)
    except Failure as e:
        print("FAIL install/wheel: %s" % e)
        print("(kept in %s)" % work)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("ok   install/wheel: %s (%d KiB) installed in a venv at %s; %s" % (os.path.basename(wheel), size >> 10, site, last))
    return 0


if __name__ == "__main__":
    sys.exit(main())
